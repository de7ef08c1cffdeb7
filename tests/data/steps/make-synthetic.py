#!/usr/bin/env python3
"""Synthetic training runs as clusterhealth step records (JSON lines, one
record per rank and step; schema in docs/canary.md, "Step logs").

    make-synthetic.py today DIR      # the textbook case today: 64 ranks
    make-synthetic.py baseline DIR   # its baseline: 32 ranks at 1.00 s
    make-synthetic.py fleet DIR --ranks 64 --noise 0.03 --seed 7 [--slow 37:1.25]

The textbook case (docs/canary.md): 32 -> 64 GPUs with the work per GPU and
step held constant took the wall-clock step from 1.00 s to 1.60 s; a
synchronous checkpoint every 30 minutes blocks every rank for 5.5 minutes;
10% of the training step is input wait. Today's run therefore trains at
1.60 x (1 - 5.5/30) = 1.3067 s a step, writes a checkpoint after steps 600
and 1725 (1125 steps = 1470 s of training + 330 s of checkpoint = 30 min
apart), and rank 37 (node05) computes 1.25x longer than the others: every
rank's step is the same, the others wait for it in the all-reduce.

Written one file per node (nodeNN.jsonl, its ranks interleaved step by
step, as a per-node log would be). Deterministic: a fixed seed.
"""
import argparse
import json
import os
import random
import sys

T0 = 1767225600.0  # 2026-01-01T00:00:00Z


def run(out, ranks, per_node, step, steps, input_frac, compute, slow, noise, ckpt_after, ckpt_sec,
        tokens, host_cpu, seed):
    rnd = random.Random(seed)
    os.makedirs(out, exist_ok=True)
    nodes = (ranks + per_node - 1) // per_node
    files = [open(os.path.join(out, "node%02d.jsonl" % (n + 1)), "w") for n in range(nodes)]
    # a rank's speed: its own small, fixed deviation, and per-step jitter
    speed = [1 + rnd.uniform(-noise, noise) for _ in range(ranks)]
    for r, f in slow.items():
        speed[r] *= f
    t = T0
    for s in range(1, steps + 1):
        start, end = t, t + step
        wait = input_frac * step
        for r in range(ranks):
            c = compute * speed[r] * (1 + rnd.uniform(-noise / 4, noise / 4))
            rec = {
                "rank": r,
                "host": "node%02d" % (r // per_node + 1),
                "step": s,
                "start": round(start, 6),
                "end": round(end, 6),
                "phases": {
                    "forward": round(c / 3, 6),
                    "backward": round(2 * c / 3 - 0.02 * c, 6),
                    "optimizer": round(0.02 * c, 6),
                    "allreduce": round(step - wait - c, 6),
                },
                "input_wait": round(wait, 6),
                "tokens": tokens,
                "host_cpu": host_cpu,
            }
            if s in ckpt_after:
                rec["checkpoint_write"] = ckpt_sec
            files[r // per_node].write(json.dumps(rec, separators=(",", ":")) + "\n")
        t = end + (ckpt_sec if s in ckpt_after else 0)
    for f in files:
        f.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("which", choices=["today", "baseline", "fleet"])
    ap.add_argument("dir")
    ap.add_argument("--ranks", type=int, default=64)
    ap.add_argument("--noise", type=float, default=0.03)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--steps", type=int, default=120)
    ap.add_argument("--slow", action="append", default=[], help="RANK:FACTOR")
    a = ap.parse_args()
    if a.which == "today":
        # 1.6 s wall-clock with 5.5 min of every 30 min checkpointing
        run(a.dir, 64, 8, 1.6 * (1 - 5.5 / 30), 2000, 0.10, 0.704, {37: 1.25}, 0.005, {600, 1725},
            330.0, 16384, 0.92, 23)
    elif a.which == "baseline":
        run(a.dir, 32, 8, 1.0, 200, 0.0, 0.704, {}, 0.005, set(), 0.0, 16384, 0.40, 32)
    else:
        slow = {int(x.split(":")[0]): float(x.split(":")[1]) for x in a.slow}
        run(a.dir, a.ranks, 8, 1.0, a.steps, 0.05, 0.7, slow, a.noise, set(), 0.0, 16384, 0.5, a.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
