#!/usr/bin/env python3
"""Write realistic fleets night after night, for the detection and
false-alarm measurements of health_report and its history
(scripts/measure-detection, docs/health_report.md "Detection").

Usage: make-nights.py OUTDIR [options]
  --nodes N         nodes of 8 H100 SXM GPUs and one CPU socket (default 8)
  --nights K        nights written, OUTDIR/2026-12-01 ... (default 10)
  --noise MODEL     night-to-night noise: gauss (normal) or t3 (Student's t
                    with 3 degrees of freedom scaled to the same standard
                    deviation: real benchmark noise has outliers) (gauss)
  --sigma S         its standard deviation, a fraction (0.03)
  --device-sd S     persistent per-device offset, sd of a fraction (0.01):
                    a GPU that is always 1-2% slower is healthy
  --node-sd S       persistent per-node offset (0.01), on every figure
  --seed X          (1) the same arguments write the same files
  --fault KIND:SIZE:NIGHT[:NODE[:DEV]]   a lasting fault of SIZE (fraction,
                    0.10 = 10% lower) from night NIGHT (0 = the first) on
                    node NODE (1-based, default 1) and GPU DEV (default 0);
                    repeatable. KIND:
                      gpu_compute  the GPU's bf16 roof (and its GEMM point)
                      gpu_memory   the GPU's memory roof
                      cpu_socket   the CPU's memory roof (dot fp64)
                      pair         every node pair the node is in (its NIC)
                      intra        the node's own 8-GPU all-reduce busbw
                      checkpoint   the node's write bandwidth to the mount
                      loader       the loader's input wait (SIZE added to
                                   it, e.g. 0.3 = 30% of the step) and
                                   idle accelerator share
  --one-night       write the last night only (OUTDIR/NODE/... directly):
                    the single-night report's input, the earlier nights
                    still drawn (the same values as the full run)

Figures (every one noisy night to night, with its device's and node's
persistent offset; all result files in today's format, idle conditions):
  roofline.json       make-noise-fleet.py's 8 H100 SXM GPUs (memory roof
                      2950 GB/s, 6 compute roofs) and the real CPU device of
                      tests/data/report/real-vm/roofline.json (the build
                      machine's socket: memory 24.2 GB/s, fp64 and fp32),
                      per-call CV 0.005; the CPU's roofs_again (roofline
                      measures a socket's roof points again every run: a
                      fresh draw from a stream of its own); results.flagged[] as roofline
                      writes it (more than 5% below the node's median,
                      "confirmed" by roofline's re-measurement: a fresh
                      draw of the same noise model, as a second
                      measurement is, still more than 5% below)
  allreduce_bw.json   the node's 8 GPUs, 366 GB/s at 1 GiB (make-noise-fleet);
                      the largest size's cells carry "confirm", allreduce_bw's
                      re-measurement of the largest size (it measures it
                      again always), and so do both placements of a size
                      that looks like a gap (make-noise-fleet's sweep()
                      draws the lower one's, and a dip's, likewise from a
                      stream of its own): an independent fresh draw of the
                      same noise (the sweep's and the cell's), from its own
                      random stream, so that every other figure of a seed
                      is what it was without it
  loader_contention   input wait 1% and idle share 2% of the step, noisy
                      like the rest (absolute: SIGMA x 1 point of the step
                      for the wait, x 2 points for the idle share)
  checkpoint_io.json  2 ranks writing 8 GB to the shared mount at 1 GB/s,
                      written twice as the nightly sweep does
                      (checkpoint_io --repeat 2): results.sync.again[0] is
                      an independent fresh draw of the same noise around the
                      same truth (the fault included), from a random stream
                      of its own, so that every other figure of a seed is
                      what it was without it
  pairs/allreduce_bw.json  node pairs in two rounds, 357 GB/s at 1 GiB, each
                      sweep's largest size re-measured likewise
Each night's start_utc is its date at 02:00-06:00 UTC.
"""
import argparse
import copy
import datetime
import importlib.util
import json
import math
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("nf", os.path.join(HERE, "make-noise-fleet.py"))
nf = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(nf)

KINDS = ("gpu_compute", "gpu_memory", "cpu_socket", "pair", "intra", "checkpoint", "loader")
FIRST = datetime.date(2026, 12, 1)


class Noise:
    """Draws of the night-to-night noise; gauss(mu, s) as random.Random's,
    so that make-noise-fleet.py's sweep() draws through it."""

    def __init__(self, rng, model):
        self.rng, self.model = rng, model

    def std(self):
        """one standard draw: N(0, 1), or t3 / sqrt(3) (variance 1)"""
        z = self.rng.gauss(0, 1)
        if self.model == "gauss":
            return z
        chi2 = sum(self.rng.gauss(0, 1) ** 2 for _ in range(3))
        return z / math.sqrt(chi2 / 3) / math.sqrt(3)

    def gauss(self, mu, s):
        return mu + s * self.std()


def night_date(k):
    return (FIRST + datetime.timedelta(days=k)).isoformat()


def cpu_device(node, mem, fp64, fp32, again=None):
    """the real CPU socket of the build machine, its figures scaled; again:
    the scales of roofline's second measurement of its roofs (roofs_again)"""
    real = json.load(open(os.path.join(HERE, "real-vm", "roofline.json")))
    d = copy.deepcopy(real["results"]["devices"][0])
    r = d["roofs"]
    if again:
        d["roofs_again"] = {"memory_gbps": r["memory_gbps"] * again["memory"],
                            "compute_gflops": {k: r["compute_gflops"][k] * again[k] for k in ("fp64", "fp32")}}
    scale = {"memory": mem, "fp64": fp64, "fp32": fp32}
    r["memory_gbps"] *= mem
    r["compute_gflops"]["fp64"] *= fp64
    r["compute_gflops"]["fp32"] *= fp32
    for p in d["points"]:
        p["time_sec"]["cv"] = 0.005
        f = scale["memory"] if p.get("family") == "stream" else scale.get(p.get("dtype"), 1.0)
        for key in ("gbps", "gflops", "gbps_best", "gflops_best"):
            if isinstance(p.get(key), (int, float)):
                p[key] *= f
    d["host"] = node
    return d


class Fleet:
    """the persistent part of a fleet: nodes, offsets, faults"""

    def __init__(self, a):
        self.a = a
        rng = random.Random(a.seed * 7919 + 1)
        self.nodes = ["n%03d" % i for i in range(1, a.nodes + 1)]
        off = lambda sd: 1 + rng.gauss(0, sd)
        self.node_off = {n: off(a.node_sd) for n in self.nodes}
        self.dev_off = {(n, g, m): off(a.device_sd) for n in self.nodes for g in range(nf.GPUS)
                        for m in ["memory"] + list(nf.HEALTHY)}
        self.cpu_off = {(n, m): off(a.device_sd) for n in self.nodes for m in ("memory", "fp64", "fp32")}
        self.intra_off = {n: off(a.device_sd) for n in self.nodes}
        self.ckpt_off = {n: off(a.device_sd) for n in self.nodes}
        self.confirm = Noise(random.Random(a.seed * 104729 + 17), a.noise)
        self.again_bw = Noise(random.Random(a.seed * 15485863 + 29), a.noise)
        self.again_cell = Noise(random.Random(a.seed * 32452843 + 31), a.noise)  # make-noise-fleet's sweep()
        self.again_cpu = Noise(random.Random(a.seed * 49979687 + 37), a.noise)  # roofline's CPU roofs_again
        self.again_ckpt = Noise(random.Random(a.seed * 67867967 + 41), a.noise)  # checkpoint_io's second write
        self.faults = []
        for f in a.fault or []:
            p = f.split(":")
            if len(p) < 3 or p[0] not in KINDS:
                raise SystemExit("make-nights.py: bad --fault '%s' (KIND:SIZE:NIGHT[:NODE[:DEV]], KIND one of %s)"
                                 % (f, ", ".join(KINDS)))
            self.faults.append({"kind": p[0], "size": float(p[1]), "night": int(p[2]),
                                "node": self.nodes[int(p[3]) - 1] if len(p) > 3 else self.nodes[0],
                                "dev": int(p[4]) if len(p) > 4 else 0})

    def fault(self, kind, k, node, dev=None):
        """the fraction lost by (kind, node, dev) on night k (0 when healthy)"""
        lost = 0.0
        for f in self.faults:
            if f["kind"] == kind and f["node"] == node and k >= f["night"] and (dev is None or dev == f["dev"]):
                lost = 1 - (1 - lost) * (1 - f["size"])
        return lost


def roofline(fl, nz, k, node, start):
    a = fl.a
    devs = []
    base = fl.node_off[node]
    truth = {}  # (gpu, metric): the value without this night's noise
    for g in range(nf.GPUS):
        o = lambda m: base * fl.dev_off[(node, g, m)] * (1 + nz.std() * a.sigma)
        mem = nf.MEM * o("memory") * (1 - fl.fault("gpu_memory", k, node, g))
        comp = {d: v * o(d) for d, v in nf.HEALTHY.items()}
        comp["bf16"] *= 1 - fl.fault("gpu_compute", k, node, g)
        truth[(g, "memory_gbps")] = nf.MEM * base * fl.dev_off[(node, g, "memory")] * \
            (1 - fl.fault("gpu_memory", k, node, g))
        for d, v in nf.HEALTHY.items():
            truth[(g, "compute_gflops." + d)] = v * base * fl.dev_off[(node, g, d)] * \
                (1 - (fl.fault("gpu_compute", k, node, g) if d == "bf16" else 0))
        n = 1 << 28
        points = [{"kernel": "triad", "family": "stream", "dtype": "fp64", "ai_flop_per_byte": 2.0 / 24,
                   "time_sec": nf.stats(24.0 * n / (mem * 1e9), 0.005), "gbps": mem, "gflops": mem * 2 / 24,
                   "valid": True}]
        for d, v in comp.items():
            fl_, by = 2.0 * 8192 ** 3, 3.0 * 8192 ** 2 * nf.ELEM[d]
            points.append({"kernel": "gemm", "family": "gemm", "dtype": d, "ai_flop_per_byte": fl_ / by,
                           "time_sec": nf.stats(fl_ / (v * 1e9), 0.005), "gbps": by / (fl_ / v), "gflops": v,
                           "valid": True})
        devs.append({"device": "gpu%d" % g, "host": node, "kind": "gpu", "backend": "cuda", "name": nf.GPU_NAME,
                     "pci_bus_id": "0000:%02x:00.0" % (0x18 + 0x10 * g), "sku": "H100 SXM", "status": "ok",
                     "reason": None, "throttled": False,
                     "roofs": {"memory_gbps": mem, "memory_kernel": "triad fp64", "compute_gflops": comp,
                               "compute_kernel": {d: "gemm" for d in comp}},
                     "points": points})
    c = {m: base * fl.cpu_off[(node, m)] * (1 + nz.std() * a.sigma) for m in ("memory", "fp64", "fp32")}
    c["memory"] *= 1 - fl.fault("cpu_socket", k, node)
    # roofline measures the socket's roof points again every run: a fresh draw of the same noise
    c2 = {m: base * fl.cpu_off[(node, m)] * (1 + fl.again_cpu.std() * a.sigma) for m in ("memory", "fp64", "fp32")}
    c2["memory"] *= 1 - fl.fault("cpu_socket", k, node)
    cpu = cpu_device(node, c["memory"], c["fp64"], c["fp32"], c2)
    flagged = []
    for metric in ["memory_gbps"] + ["compute_gflops." + d for d in nf.HEALTHY]:
        vals = [d["roofs"]["memory_gbps"] if metric == "memory_gbps" else
                d["roofs"]["compute_gflops"][metric.split(".")[1]] for d in devs]
        med = sorted(vals)[len(vals) // 2 - 1: len(vals) // 2 + 1]
        med = sum(med) / 2
        for g, (d, v) in enumerate(zip(devs, vals)):
            if v < 0.95 * med:
                # roofline's re-measurement: a fresh draw of the same noise
                # (its own stream, so that the other figures stay the same)
                again = truth[(g, metric)] * (1 + fl.confirm.std() * a.sigma)
                flagged.append({"device": d["device"], "metric": metric, "value": v, "node_median": med,
                                "pct_below": 100 * (1 - v / med), "confirmed": again < 0.95 * med,
                                "confirm_value": again, "confirm_pct_below": 100 * (1 - again / med)})
    return nf.envelope("roofline", node, start, {"devices": devs + [cpu], "node_median": None,
                                                  "flagged": flagged, "flag_threshold_pct": 5.0}, threads=8)


def remeasure(fl, sw, peak):
    """allreduce_bw's second measurements in sweep sw that make-noise-fleet's
    sweep() does not draw (docs/allreduce_bw.md "Confirmation"): the largest
    size, measured again always, and the other placement of a size whose
    gap it re-measured (allreduce_bw measures both placements of a gap;
    sweep() only the lower, from fl.again_cell); each a fresh draw of the sweep's noise and the
    cell's around peak (the sweep's value without this night's noise), from
    the fleet's own stream; a cell that has its second measurement keeps it"""
    a = fl.a
    p2 = peak * (1 + a.sigma * fl.again_bw.std())
    last = len(sw["rows"]) - 1
    for j, row in enumerate(sw["rows"]):
        gap = any(row[h].get("confirm", {}).get("why") == "gap" for h in ("out_of_place", "in_place"))
        if j != last and not gap:
            continue
        size, factor = row["bytes"], row["busbw_factor"]
        for half in ("out_of_place", "in_place"):
            c = row[half]
            bus = nf.curve(p2, size) * (1 + a.sigma * fl.again_bw.std())
            if "confirm" in c:
                continue
            t = size / (bus / factor * 1e3)
            c["confirm"] = {"why": "gap" if gap else "largest", "loop_time_us": t,
                            "time_us": nf.stats(t, a.sigma), "algbw_gbps": bus / factor, "busbw_gbps": bus,
                            "wrong": 0}
    return sw


def loader(fl, nz, k, node, start):
    a = fl.a
    extra = fl.fault("loader", k, node)
    cfgs = []
    for name, pl, w in (("baseline", "baseline", 0), ("isolated-w4", "isolated", 4), ("as-is-w4", "as-is", 4)):
        wait = 0.01 + 0.01 * a.sigma * nz.std() + extra
        idle = 0.02 + 0.02 * a.sigma * nz.std() + extra
        cfgs.append({"name": name, "placement": pl, "workers": w, "hog_util": 0.0,
                     "lateness_us": {"p50": 40.0, "p99": 120.0 * (1 + a.sigma * nz.std()), "max": 300.0},
                     "input_wait_frac": min(max(wait, 0.0), 1.0), "accel_util": min(max(1 - idle, 0.0), 1.0),
                     "psi_cpu_some_avg10": 0.5, "host_cpu_util": 0.05,
                     "verdict": "fail" if wait > 0.05 else "pass", "reasons": []})
    res = {"mode": "run", "step_ms": 20.0, "configs": cfgs, "mask_collapsed": False,
           "verdict": "fail" if any(c["verdict"] == "fail" for c in cfgs) else "pass",
           "recommendation": {"placement": "isolated", "workers": 4, "config": "isolated-w4",
                              "verdict": cfgs[1]["verdict"]}}
    return nf.envelope("loader_contention", node, start, res, threads=9)


def checkpoint(fl, nz, k, node, start):
    a = fl.a
    size, shard = 8 * 10**9, 4 * 10**9
    truth = 1.0 * fl.node_off[node] * fl.ckpt_off[node] * (1 - fl.fault("checkpoint", k, node))
    gbps = truth * (1 + a.sigma * nz.std())
    gbps2 = truth * (1 + a.sigma * fl.again_ckpt.std())  # the second write: a fresh draw
    mnt = {"point": "/mnt/ckpt", "fstype": "nfs4", "source": "nas:/export", "network_fs": True}
    lay = [{"rank": r, "host": node, "node": 0, "dir_mount": mnt} for r in range(2)]
    per = lambda g: [{"rank": r, "host": node, "bytes": shard, "block_sec": shard / (g * 1e9), "write_gbps": g}
                     for r in range(2)]
    res = {"config": {"size_bytes": size, "interval_sec": 600.0},
           "sync": {"writers": 2, "bytes": size, "block_sec": shard / (gbps * 1e9),
                    "agg_write_gbps": 2 * gbps, "per_rank": per(gbps),
                    "again": [{"write": 2, "bytes": size, "block_sec": shard / (gbps2 * 1e9),
                               "agg_write_gbps": 2 * gbps2, "per_rank": per(gbps2)}]},
           "verify": {"sync": {"files_checked": 2, "files_bad": 0, "bad": []}}}
    return nf.envelope("checkpoint_io", node, start, res, ranks={"world_size": 2, "layout": lay}, procs=2, threads=2)


def night(fl, nz, k, out):
    """night k's files under out (nothing written when out is None)"""
    a = fl.a
    day = night_date(k)
    docs = []
    for n in fl.nodes:
        docs.append((os.path.join(n, "roofline.json"), roofline(fl, nz, k, n, day + "T02:00:00Z")))
        peak = 375.0 * fl.node_off[n] * fl.intra_off[n] * (1 - fl.fault("intra", k, n))
        sw = remeasure(fl, nf.sweep(nz, a.sigma, "world", "world", list(range(nf.GPUS)), [n], peak,
                                         fl.again_cell), peak)
        docs.append((os.path.join(n, "allreduce_bw.json"), nf.allreduce([sw], [n], day + "T03:00:00Z")))
        docs.append((os.path.join(n, "loader_contention.json"), loader(fl, nz, k, n, day + "T04:00:00Z")))
        docs.append((os.path.join(n, "checkpoint_io.json"), checkpoint(fl, nz, k, n, day + "T05:00:00Z")))
    nn = len(fl.nodes)
    if nn >= 2:
        rounds = [(x, x + 1) for x in range(0, nn - 1, 2)] + [(x, (x + 1) % nn) for x in range(1, nn, 2)]
        ranks_of = lambda i: list(range(i * nf.GPUS, (i + 1) * nf.GPUS))
        sweeps = []
        for x, y in rounds:
            na, nb = fl.nodes[x], fl.nodes[y]
            peak = 365.0 * min(fl.node_off[na], fl.node_off[nb]) * \
                (1 - fl.fault("pair", k, na)) * (1 - fl.fault("pair", k, nb))
            sweeps.append(remeasure(fl, nf.sweep(nz, a.sigma, "pair", "pair%d-%d" % (x, y), ranks_of(x) + ranks_of(y),
                                                 [na, nb], peak, fl.again_cell), peak))
        docs.append((os.path.join("pairs", "allreduce_bw.json"), nf.allreduce(sweeps, fl.nodes, day + "T06:00:00Z")))
    if out is not None:
        for rel, doc in docs:
            nf.write(os.path.join(out, rel), doc)


def parse(argv=None):
    p = argparse.ArgumentParser(description="realistic fleets night after night (tests/data/report/make-nights.py)")
    p.add_argument("out")
    p.add_argument("--nodes", type=int, default=8)
    p.add_argument("--nights", type=int, default=10)
    p.add_argument("--noise", choices=("gauss", "t3"), default="gauss")
    p.add_argument("--sigma", type=float, default=0.03)
    p.add_argument("--device-sd", type=float, default=0.01)
    p.add_argument("--node-sd", type=float, default=0.01)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--fault", action="append")
    p.add_argument("--one-night", action="store_true")
    a = p.parse_args(argv)
    if a.nodes < 1 or a.nights < 1 or not (a.sigma >= 0):
        p.error("--nodes and --nights at least 1, --sigma at least 0")
    return a


def nights(a):
    """yield (k, date, writer) for each night: writer(dir) writes night k there;
    the nights must be taken in order (one random stream)"""
    fl = Fleet(a)
    nz = Noise(random.Random(a.seed), a.noise)
    for k in range(a.nights):
        yield k, night_date(k), lambda out, k=k: night(fl, nz, k, out)


def main(argv=None):
    a = parse(argv)
    for k, day, write in nights(a):
        if a.one_night:
            write(a.out if k == a.nights - 1 else None)
        else:
            write(os.path.join(a.out, day))


if __name__ == "__main__":
    main()
