#!/usr/bin/env python3
"""Write healthy-noise fleets: healthy nodes whose every figure carries
Gaussian noise, for the false-alarm tests of health_report
(tests/cli/health_report_false_alarms.sh, docs/health_report.md "False
alarms").

Usage: make-noise-fleet.py OUTDIR SIGMA SEED [NODES [FAULT]]

One fleet (one night) of NODES nodes (default 50) of 8 H100 SXM GPUs, every
figure drawn as its healthy value x (1 + N(0, SIGMA)) with random.Random(SEED)
(deterministic: the same arguments write the same files):

  roofline.json       per GPU the memory roof (2950 GB/s) and the compute
                      roofs (make-fleet.py's healthy H100 SXM figures), each
                      with the point behind it (per-call CV 0.005: a clean
                      measurement); results.flagged[] lists every roof more
                      than 5% below its node's median as roofline does, with
                      "confirmed" from a re-measurement that finds the same
                      value (x (1 + N(0, 0.005))): a GPU's figure is taken as
                      that GPU's, so confirmation does not wash the noise out
  allreduce_bw.json   the node's 8 GPUs (group "world" on the node): intra-node
                      busbw 366 GB/s at 1 GiB, the curve 1 MiB..1 GiB; every
                      cell with its own noise, recorded as its per-call CV
                      (SIGMA); a cell allreduce_bw would measure again (below
                      0.9 x its neighbours' geometric mean, or out-of-place
                      and in-place apart by 15%: the lower) carries
                      "confirm", a fresh measurement: its own sweep noise (one
                      draw per sweep's re-measurements) and cell noise around
                      the noiseless peak, from the re-measurements' own
                      stream, random.Random(SEED x 15485863 + 29), so that it
                      shares no noise with the first measurement and every
                      other figure of a seed is what it is without it
  loader_contention   the job's placement passing with margin: input wait 1%
                      and idle accelerator share 2% of the step, each x (1 +
                      N(0, SIGMA)), lateness p99 120 us of a 20 ms step
  checkpoint_io.json  2 ranks writing 8 GB to the shared mount at 1 GB/s per
                      rank x (1 + N(0, SIGMA)), --interval 10 min, written
                      twice as the nightly sweep does (--repeat 2):
                      results.sync.again[0] a fresh draw of the same noise
                      from a stream of its own, random.Random(SEED x
                      67867967 + 41), so every other figure is what it was
and pairs/allreduce_bw.json: the node pairs in two rounds (every node in two
pairs), busbw 357 GB/s at 1 GiB. Every node records 8 x 400 Gb/s NDR NICs
(host.inventory) and idle measurement conditions (envelope "conditions").

FAULT (for the recall figures of docs/health_report.md): a fraction, e.g.
0.15: the bf16 roof of n001's gpu0 that much lower (after its noise), its
GEMM point likewise.
"""
import json
import os
import random
import sys

GPUS = 8
GPU_NAME = "NVIDIA H100 80GB HBM3"
MEM = 2950.0
HEALTHY = {"fp64": 55000, "fp32": 54000, "tf32": 400000, "bf16": 790000, "fp16": 795000, "fp8": 1500000}
ELEM = {"fp64": 8, "fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2, "fp8": 1}
SIZES = [1 << 20, 1 << 22, 1 << 24, 1 << 26, 1 << 28, 1 << 30]
SW = {"cuda_runtime": "12.4", "cuda_driver": "550.54.15", "nccl": "2.21.5", "mpi": "Open MPI v4.1.4"}
IDLE = {"loadavg_1m": 0.4, "cpu_pressure_some_avg10_pct": 0.5, "cpu_busy_pct": 1.0, "run_cpu_pct": 0.0}


def stats(t, cv):
    return {"n": 20, "min": t * (1 - 2 * cv), "median": t, "mean": t, "p95": t * (1 + 2 * cv),
            "max": t * (1 + 3 * cv), "cv": cv}


def host(name):
    nics = [{"device": "mlx5_%d" % i, "port": 1, "kind": "rdma", "state": "ACTIVE", "rate_gbps": 400.0,
             "link_layer": "InfiniBand", "near_gpus": [i], "reasons": {}} for i in range(GPUS)]
    return {"hostname": name, "cpu_model": "Intel(R) Xeon(R) Platinum 8480+", "packages": 2,
            "gpus": [{"index": g, "pci_bus_id": "0000:%02x:00.0" % (0x18 + 0x10 * g), "name": GPU_NAME}
                     for g in range(GPUS)],
            "inventory": {"gpus": [], "nics": nics, "reasons": {}}}


def envelope(tool, name, start, results, ranks=None, procs=1, threads=1):
    cond = {"before": dict(IDLE, utc=start), "after": dict(IDLE, utc=start), "online_cpus": 224,
            "procs_on_host": procs, "threads_per_proc": threads, "per_core": procs * threads / 224.0,
            "reasons": {}}
    return {"schema": "clusterhealth.result", "schema_version": 1, "tool": tool, "version": "0.1.0",
            "git_rev": "noise-fleet", "start_utc": start, "end_utc": start, "status": "ok", "reason": None,
            "exit_code": 0, "host": host(name), "software": dict(SW), "conditions": cond, "ranks": ranks,
            "args": [tool], "env": {}, "energy": None, "results": results}


def roofline(rng, sigma, node, fault=0.0):
    devs = []
    for g in range(GPUS):
        mem = MEM * (1 + rng.gauss(0, sigma))
        comp = {d: v * (1 + rng.gauss(0, sigma)) for d, v in HEALTHY.items()}
        if g == 0 and fault:
            comp["bf16"] *= 1 - fault
        n = 1 << 28
        points = [{"kernel": "triad", "family": "stream", "dtype": "fp64", "ai_flop_per_byte": 2.0 / 24,
                   "time_sec": stats(24.0 * n / (mem * 1e9), 0.005), "gbps": mem, "gflops": mem * 2 / 24,
                   "valid": True}]
        for d, v in comp.items():
            fl, by = 2.0 * 8192 ** 3, 3.0 * 8192 ** 2 * ELEM[d]
            points.append({"kernel": "gemm", "family": "gemm", "dtype": d, "ai_flop_per_byte": fl / by,
                           "time_sec": stats(fl / (v * 1e9), 0.005), "gbps": by / (fl / v), "gflops": v,
                           "valid": True})
        devs.append({"device": "gpu%d" % g, "host": node, "kind": "gpu", "backend": "cuda", "name": GPU_NAME,
                     "pci_bus_id": "0000:%02x:00.0" % (0x18 + 0x10 * g), "sku": "H100 SXM", "status": "ok",
                     "reason": None, "throttled": False,
                     "roofs": {"memory_gbps": mem, "memory_kernel": "triad fp64", "compute_gflops": comp,
                               "compute_kernel": {d: "gemm" for d in comp}},
                     "points": points})
    # roofline's own flag and its re-measurement (the same GPU, the same figure)
    flagged = []
    for metric in ["memory_gbps"] + ["compute_gflops." + d for d in HEALTHY]:
        vals = [d["roofs"]["memory_gbps"] if metric == "memory_gbps" else
                d["roofs"]["compute_gflops"][metric.split(".")[1]] for d in devs]
        med = sorted(vals)[len(vals) // 2 - 1: len(vals) // 2 + 1]
        med = sum(med) / 2
        for d, v in zip(devs, vals):
            if v < 0.95 * med:
                again = v * (1 + rng.gauss(0, 0.005))
                flagged.append({"device": d["device"], "metric": metric, "value": v, "node_median": med,
                                "pct_below": 100 * (1 - v / med), "confirmed": again < 0.95 * med})
    return envelope("roofline", node, "2026-12-01T02:00:00Z",
                    {"devices": devs, "node_median": None, "flagged": flagged, "flag_threshold_pct": 5.0},
                    threads=8)


def curve(peak, s):
    return peak * s / (s + 24.0 * (1 << 20))


def sweep(rng, sigma, kind, name, ranks, nodes, peak, again):
    """one all-reduce sweep of ranks on nodes, busbw peak (GB/s, at an
    infinite size) without noise: the sweep's noise (one draw, shared by its
    cells) and each cell's from rng; the cells allreduce_bw would measure
    again carry "confirm", a fresh measurement drawn from again, the
    re-measurements' own stream (random.Random's gauss()): its own sweep
    noise (one draw per sweep) and cell noise around peak, so that it shares
    no noise with the first measurement. rng still takes one draw per
    re-measured cell (unused), so that every other figure of a seed is what
    it is without a separate stream"""
    n = len(ranks)
    factor = 2.0 * (n - 1) / n
    clean, again_peak = peak, None
    peak *= 1 + rng.gauss(0, sigma)
    cells = []
    for s in SIZES:
        row = {}
        for half in ("out_of_place", "in_place"):
            bus = curve(peak, s) * (1 + rng.gauss(0, sigma))
            t = s / (bus / factor * 1e3)
            row[half] = {"loop_time_us": t, "time_us": stats(t, sigma), "algbw_gbps": bus / factor,
                         "busbw_gbps": bus, "wrong": 0}
        cells.append(row)
    # what allreduce_bw measures again at the end of its sweep (liberal:
    # dip_ratio 0.9, gap_ratio 0.85): a fresh measurement of the same cell
    for j in range(len(SIZES)):
        for half in ("out_of_place", "in_place"):
            c = cells[j][half]
            alg = [x[half]["algbw_gbps"] for x in cells]
            dip = 0 < j < len(SIZES) - 1 and alg[j] < min(alg[j - 1], alg[j + 1]) and \
                alg[j] < 0.9 * (alg[j - 1] * alg[j + 1]) ** 0.5
            other = cells[j]["in_place" if half == "out_of_place" else "out_of_place"]["algbw_gbps"]
            gap = c["algbw_gbps"] < 0.85 * other
            if dip or gap:
                rng.gauss(0, sigma)  # the main stream's draw, unused (the other figures of a seed stay)
                if again_peak is None:
                    again_peak = clean * (1 + again.gauss(0, sigma))
                bus = curve(again_peak, SIZES[j]) * (1 + again.gauss(0, sigma))
                t = SIZES[j] / (bus / factor * 1e3)
                c["confirm"] = {"why": "dip" if dip else "gap", "loop_time_us": t, "time_us": stats(t, sigma),
                                "algbw_gbps": bus / factor, "busbw_gbps": bus, "wrong": 0}
    rows = [{"bytes": s, "count": s // 4, "dtype": "float", "redop": "sum", "root": -1, "iterations": 20,
             "busbw_factor": factor, "out_of_place": c["out_of_place"], "in_place": c["in_place"]}
            for s, c in zip(SIZES, cells)]
    return {"group_kind": kind, "group_name": name, "ranks": ranks, "nodes": nodes, "nranks": n, "algo": "ring",
            "rows": rows, "large_msg_busbw_gbps": rows[-1]["out_of_place"]["busbw_gbps"]}


def layout(nodes):
    return [{"rank": r, "host": nodes[r // GPUS], "node_name": nodes[r // GPUS], "local_rank": r % GPUS,
             "gpu_index": r % GPUS, "gpu_name": GPU_NAME} for r in range(GPUS * len(nodes))]


def allreduce(sweeps, nodes, start):
    res = {"backend": "nccl", "sweeps": sweeps, "stragglers": [], "wrong_total": 0}
    return envelope("allreduce_bw", nodes[0], start, res,
                    ranks={"world_size": GPUS * len(nodes), "layout": layout(nodes)}, procs=GPUS)


def loader(rng, sigma, node):
    cfgs = []
    for name, pl, w in (("baseline", "baseline", 0), ("isolated-w4", "isolated", 4), ("as-is-w4", "as-is", 4)):
        wait = 0.01 * (1 + rng.gauss(0, sigma))
        idle = 0.02 * (1 + rng.gauss(0, sigma))
        cfgs.append({"name": name, "placement": pl, "workers": w, "hog_util": 0.0,
                     "lateness_us": {"p50": 40.0, "p99": 120.0 * (1 + rng.gauss(0, sigma)), "max": 300.0},
                     "input_wait_frac": max(wait, 0.0), "accel_util": min(1 - idle, 1.0),
                     "psi_cpu_some_avg10": 0.5, "host_cpu_util": 0.05, "verdict": "pass", "reasons": []})
    res = {"mode": "run", "step_ms": 20.0, "configs": cfgs, "mask_collapsed": False, "verdict": "pass",
           "recommendation": {"placement": "isolated", "workers": 4, "config": "isolated-w4", "verdict": "pass"}}
    return envelope("loader_contention", node, "2026-12-01T04:00:00Z", res, threads=9)


def checkpoint(rng, sigma, node, again=None):
    """again: the second write's random stream (None: written once)"""
    size, shard = 8 * 10**9, 4 * 10**9
    gbps = 1.0 * (1 + rng.gauss(0, sigma))
    mnt = {"point": "/mnt/ckpt", "fstype": "nfs4", "source": "nas:/export", "network_fs": True}
    lay = [{"rank": r, "host": node, "node": 0, "dir_mount": mnt} for r in range(2)]
    per = lambda g: [{"rank": r, "host": node, "bytes": shard, "block_sec": shard / (g * 1e9), "write_gbps": g}
                     for r in range(2)]
    res = {"config": {"size_bytes": size, "interval_sec": 600.0},
           "sync": {"writers": 2, "bytes": size, "block_sec": shard / (gbps * 1e9),
                    "agg_write_gbps": 2 * gbps, "per_rank": per(gbps)},
           "verify": {"sync": {"files_checked": 2, "files_bad": 0, "bad": []}}}
    if again is not None:
        g2 = 1.0 * (1 + again.gauss(0, sigma))
        res["sync"]["again"] = [{"write": 2, "bytes": size, "block_sec": shard / (g2 * 1e9),
                                 "agg_write_gbps": 2 * g2, "per_rank": per(g2)}]
    return envelope("checkpoint_io", node, "2026-12-01T05:00:00Z", res,
                    ranks={"world_size": 2, "layout": lay}, procs=2, threads=2)


def write(path, doc):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(json.dumps(doc, separators=(",", ":")))  # the C encoder: json.dump() is pure Python


def main():
    out, sigma, seed = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
    nnodes = int(sys.argv[4]) if len(sys.argv) > 4 else 50
    fault = float(sys.argv[5]) if len(sys.argv) > 5 else 0.0
    rng = random.Random(seed)
    again = random.Random(seed * 15485863 + 29)  # allreduce_bw's re-measurements
    ck_again = random.Random(seed * 67867967 + 41)  # checkpoint_io's second write
    nodes = ["n%03d" % i for i in range(1, nnodes + 1)]
    for n in nodes:
        write(os.path.join(out, n, "roofline.json"), roofline(rng, sigma, n, fault if n == "n001" else 0.0))
        write(os.path.join(out, n, "allreduce_bw.json"),
              allreduce([sweep(rng, sigma, "world", "world", list(range(GPUS)), [n], 375.0, again)], [n],
                        "2026-12-01T03:00:00Z"))
        write(os.path.join(out, n, "loader_contention.json"), loader(rng, sigma, n))
        write(os.path.join(out, n, "checkpoint_io.json"), checkpoint(rng, sigma, n, ck_again))
    if nnodes >= 2:
        rounds = [(a, a + 1) for a in range(0, nnodes - 1, 2)] + \
                 [(a, (a + 1) % nnodes) for a in range(1, nnodes, 2)]
        ranks_of = lambda k: list(range(k * GPUS, (k + 1) * GPUS))
        sweeps = [sweep(rng, sigma, "pair", "pair%d-%d" % (a, b), ranks_of(a) + ranks_of(b),
                        [nodes[a], nodes[b]], 365.0, again) for a, b in rounds]
        write(os.path.join(out, "pairs", "allreduce_bw.json"), allreduce(sweeps, nodes, "2026-12-01T06:00:00Z"))


if __name__ == "__main__":
    main()
