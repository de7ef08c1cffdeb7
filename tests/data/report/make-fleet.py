#!/usr/bin/env python3
"""Write the synthetic fleets health_report's tests read (tests/data/report/).

Six nodes (node01..node06) of 8 H100 SXM GPUs, following the result-file
contract of docs/results-schema.md: a roofline file per node (8 GPUs and the
host CPU), one allreduce_bw launch over the 48 ranks with --groups
world,node,pairs (node pairs in two rounds, so every node is in two pairs),
and a loader_contention file per node. Values are healthy figures for
H100 SXM (memory 2950 GB/s = 88% of 3350; bf16 GEMM 790 TFLOP/s = 80% of
989.5) with 1% deterministic noise.

  fleet-healthy/  nothing wrong: health_report must flag nothing (exit 0)
  fleet-faulty/   exactly three faults, each with the reason the test expects:
    - node02 gpu3: bf16 GEMM 18% low (fp16 13% low) while power-capped
      (throttled, clock_event_reasons sw_power_cap)        -> node02 FAIL
    - the link between node04 and node05: pair3-4 busbw 35% low (63% of the
      368 GB/s expected of 8 x 400 Gb/s per node), their other pairs healthy
      (no node common to two slow pairs)                   -> node04, node05 FAIL
    - node06's loader: feeders late under the inherited (as-is) and shared
      placements, input wait 27%, while the recommended isolated placement
      passes (so loader_contention's own verdict is pass)  -> node06 WARN

Run from the repository root:  python3 tests/data/report/make-fleet.py
"""
import json
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
NODES = ["node%02d" % i for i in range(1, 7)]
GPUS = 8
GPU_NAME = "NVIDIA H100 80GB HBM3"
SW = {"hwloc": "2.9.0", "jansson": "2.14", "cuda_runtime": "12.4", "cuda_driver": "550.54.15",
      "nccl": "2.21.5", "mpi": "Open MPI v4.1.4", "blas": "OpenBLAS 0.3.21", "nvml_driver": "550.54.15"}


def noisy(rng, v, rel=0.01):
    return v * (1.0 + rng.uniform(-rel, rel))


def stats(t):
    return {"n": 20, "min": t * 0.99, "median": t, "mean": t * 1.001, "p95": t * 1.01,
            "max": t * 1.02, "cv": 0.005}


def host(name):
    return {"hostname": name, "kernel": "5.15.0-105-generic",
            "cpu_model": "Intel(R) Xeon(R) Platinum 8480+", "packages": 2, "cores": 112,
            "pus": 224, "numa_nodes": 2, "memory_bytes": 2 * 1024 ** 4,
            "caches": [{"level": 3, "type": "unified", "size_bytes": 105 * 1024 ** 2, "count": 2}],
            "llc_total_bytes": 210 * 1024 ** 2,
            "gpus": [{"index": g, "pci_bus_id": "0000:%02x:00.0" % (0x18 + 0x10 * g),
                      "vendor_id": 0x10de, "device_id": 0x2330, "name": "GH100 [H100 SXM5 80GB]",
                      "numa_node": g // 4, "local_cpus": "0-55,112-167" if g < 4 else "56-111,168-223"}
                     for g in range(GPUS)]}


def envelope(tool, hostname, start, end, results, ranks=None, energy=None, args=None):
    return {"schema": "clusterhealth.result", "schema_version": 1, "tool": tool,
            "version": "0.1.0", "git_rev": "fixture", "start_utc": start, "end_utc": end,
            "status": "ok", "reason": None, "exit_code": 0, "host": host(hostname),
            "software": dict(SW), "ranks": ranks, "args": args or [tool], "env": {},
            "energy": energy, "results": results}


# ------------------------------------------------------------------ roofline

PEAK = {"fp64": 67000, "fp32": 67000, "tf32": 494500, "bf16": 989500, "fp16": 989500, "fp8": 1979000}
HEALTHY = {"fp64": 55000, "fp32": 54000, "tf32": 400000, "bf16": 790000, "fp16": 795000, "fp8": 1500000}
MEM = 2950.0


def gpu_device(rng, host_name, idx, degraded):
    mem = noisy(rng, MEM)
    comp = {d: noisy(rng, v) for d, v in HEALTHY.items()}
    throttled = False
    if degraded:
        comp["bf16"] = HEALTHY["bf16"] * 0.82
        comp["fp16"] = HEALTHY["fp16"] * 0.87
        throttled = True
    # telemetry as roofline writes it (ch_nvml_sample_json before and after each point)
    sample = {"sm_mhz": 1755 if degraded else 1980, "mem_mhz": 2619, "power_w": 699 if degraded else 610,
              "temp_c": 71, "energy_j": 1.0e6,
              "clock_event_reasons": ["sw_power_cap"] if degraded else [], "throttled": degraded}
    tel = {"before": sample, "after": sample, "energy_j": 60.0, "avg_power_w": 600.0, "gflop_per_j": 1.3}
    points = []
    for k, (kern, by, fl) in enumerate([("copy", 16.0, 0.0), ("mul", 16.0, 1.0), ("add", 24.0, 1.0),
                                        ("triad", 24.0, 2.0), ("dot", 16.0, 2.0)]):
        gbps = mem * (0.97 if kern != "triad" else 1.0)
        n = 1 << 28
        t = by * n / (gbps * 1e9)
        ai = fl / by
        points.append({"kernel": kern, "family": "stream", "dtype": "fp64", "flops": fl * n,
                       "bytes": by * n, "ai_flop_per_byte": ai, "time_sec": stats(t),
                       "headline": "median", "gbps": gbps, "gflops": ai * gbps,
                       "gbps_best": gbps * 1.01, "gflops_best": ai * gbps * 1.01,
                       "pct_of_roof": 100.0 * gbps / mem, "pct_of_datasheet": 100.0 * gbps / 3350,
                       "valid": True, "throttled": False, "telemetry": tel})
    for kk in [1, 4, 16, 64, 256]:
        ai = 2.0 * kk / 16.0
        g = min(comp["fp64"], ai * mem) * 0.95
        points.append({"kernel": "ladder_k%d" % kk, "family": "ladder", "dtype": "fp64",
                       "flops": 2.0 * kk * (1 << 27), "bytes": 16.0 * (1 << 27),
                       "ai_flop_per_byte": ai, "time_sec": stats(1e-3), "headline": "median",
                       "gbps": g / ai, "gflops": g, "gbps_best": g / ai, "gflops_best": g,
                       "pct_of_roof": 95.0, "pct_of_datasheet": None, "valid": True,
                       "throttled": False, "telemetry": tel})
    for d in ["fp64", "fp32", "tf32", "bf16", "fp16", "fp8"]:
        nn = 8192
        size = {"fp64": 8, "fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2, "fp8": 1}[d]
        fl = 2.0 * nn ** 3
        by = 3.0 * nn * nn * size
        points.append({"kernel": "gemm", "family": "gemm", "dtype": d, "flops": fl, "bytes": by,
                       "ai_flop_per_byte": fl / by, "time_sec": stats(fl / (comp[d] * 1e9)),
                       "headline": "median", "gbps": by / (fl / comp[d]), "gflops": comp[d],
                       "gbps_best": None, "gflops_best": comp[d] * 1.005, "pct_of_roof": 100.0,
                       "pct_of_datasheet": 100.0 * comp[d] / PEAK[d], "valid": True,
                       "throttled": throttled and d in ("bf16", "fp16"), "telemetry": tel})
    return {"device": "gpu%d" % idx, "host": host_name, "kind": "gpu", "backend": "cuda", "name": GPU_NAME,
            "config": {"clock_mhz": 1980, "clock_source": "cudaDeviceProp", "units": 132},
            "pci_bus_id": "0000:%02x:00.0" % (0x18 + 0x10 * idx), "sku": "H100 SXM",
            "status": "ok", "reason": None,
            "datasheet": {"memory_gbps": 3350, "compute_gflops": PEAK,
                          "source": "NVIDIA H100 Tensor Core GPU datasheet"},
            "roofs": {"memory_gbps": mem, "compute_gflops": comp,
                      "ridge_flop_per_byte": {d: comp[d] / mem for d in comp}},
            "throttled": throttled, "points": points}


def cpu_device(rng, host_name):
    mem = noisy(rng, 410.0)
    comp = {"fp64": noisy(rng, 5200.0), "fp32": noisy(rng, 10400.0)}
    points = [{"kernel": "triad", "family": "stream", "dtype": "fp64", "flops": 2.0 * (1 << 28),
               "bytes": 24.0 * (1 << 28), "ai_flop_per_byte": 2.0 / 24, "time_sec": stats(0.016),
               "headline": "median", "gbps": mem, "gflops": mem * 2 / 24, "gbps_best": mem,
               "gflops_best": mem * 2 / 24, "pct_of_roof": 100.0, "pct_of_datasheet": None,
               "valid": True, "throttled": False, "telemetry": None}]
    for d in ("fp64", "fp32"):
        points.append({"kernel": "gemm", "family": "gemm", "dtype": d, "flops": 2.0 * 4096 ** 3,
                       "bytes": 3.0 * 4096 ** 2 * (8 if d == "fp64" else 4),
                       "ai_flop_per_byte": 2.0 * 4096 / (3 * (8 if d == "fp64" else 4)),
                       "time_sec": stats(0.03), "headline": "median", "gbps": None,
                       "gflops": comp[d], "gbps_best": None, "gflops_best": comp[d],
                       "pct_of_roof": 100.0, "pct_of_datasheet": None, "valid": True,
                       "throttled": False, "telemetry": None})
    return {"device": "cpu", "host": host_name, "kind": "cpu", "backend": "cpu", "name": "Intel(R) Xeon(R) Platinum 8480+",
            "pci_bus_id": None, "sku": None, "status": "ok", "reason": None, "datasheet": None,
            "roofs": {"memory_gbps": mem, "compute_gflops": comp,
                      "ridge_flop_per_byte": {d: comp[d] / mem for d in comp}},
            "throttled": False, "points": points}


def roofline(rng, node, i, faulty):
    devs = [gpu_device(rng, node, g, faulty and node == "node02" and g == 3) for g in range(GPUS)]
    devs.append(cpu_device(rng, node))
    start = "2025-06-01T02:%02d:00Z" % (i * 2)
    end = "2025-06-01T02:%02d:00Z" % (i * 2 + 1)
    res = {"devices": devs, "node_median": {}, "flagged": []}
    energy = {"cpu_j": 2 * 350.0 * 60, "gpu_j": GPUS * 600.0 * 60, "wall_sec": 60.0, "source": "rapl+nvml"}
    return envelope("roofline", node, start, end, res, energy=energy,
                    args=["roofline", "--devices", "all", "--json", "roofline.json"])


# ------------------------------------------------------------------ allreduce_bw

SIZES = [1 << 20, 1 << 22, 1 << 24, 1 << 26, 1 << 28, 1 << 30]


def curve(peak, s):
    return peak * s / (s + 24.0 * (1 << 20))


def sweep(rng, kind, name, ranks, nodes, peak):
    n = len(ranks)
    factor = 2.0 * (n - 1) / n
    rows = []
    for s in SIZES:
        cells = {}
        for half in ("out_of_place", "in_place"):
            bus = noisy(rng, curve(peak, s), 0.005)
            alg = bus / factor
            t = s / (alg * 1e3)
            cells[half] = {"time_us": stats(t), "algbw_gbps": alg, "busbw_gbps": bus, "wrong": 0}
        rows.append({"bytes": s, "count": s // 4, "dtype": "float", "redop": "sum", "root": -1,
                     "iterations": 20, "busbw_factor": factor, "out_of_place": cells["out_of_place"],
                     "in_place": cells["in_place"], "per_rank_mean_us": None,
                     "slowest_rank": ranks[0], "rank_spread_pct": 1.0})
    cells = [r[h]["busbw_gbps"] for r in rows for h in ("out_of_place", "in_place")]
    return {"group_kind": kind, "group_name": name, "ranks": ranks, "nodes": nodes, "nranks": n,
            "algo": "ring", "rows": rows, "avg_busbw_gbps": sum(cells) / len(cells),
            "large_msg_busbw_gbps": rows[-1]["out_of_place"]["busbw_gbps"]}


def allreduce(rng, faulty):
    layout = [{"rank": r, "host": NODES[r // GPUS], "pid": 4000 + r, "local_rank": r % GPUS,
               "node": r // GPUS, "node_name": NODES[r // GPUS], "gpu_index": r % GPUS,
               "pci_bus_id": "0000:%02x:00.0" % (0x18 + 0x10 * (r % GPUS)), "gpu_name": GPU_NAME}
              for r in range(GPUS * len(NODES))]
    ranks_of = lambda i: list(range(i * GPUS, (i + 1) * GPUS))
    sweeps = [sweep(rng, "world", "world", list(range(GPUS * len(NODES))), NODES, 365.0)]
    for i, n in enumerate(NODES):
        sweeps.append(sweep(rng, "node", "node%d" % i, ranks_of(i), [n], 375.0))
    pairs = [(0, 1), (2, 3), (4, 5), (1, 2), (3, 4), (5, 0)]
    for a, b in pairs:
        peak = 365.0
        if faulty and (a, b) == (3, 4):
            peak *= 0.65
        sweeps.append(sweep(rng, "pair", "pair%d-%d" % (a, b), ranks_of(a) + ranks_of(b),
                            [NODES[a], NODES[b]], peak))
    res = {"backend": "nccl", "dtype": "float", "op": "sum", "busbw_factor_formula": "2(n-1)/n",
           "sweeps": sweeps, "stragglers": [], "group_flags": [], "suspect_nodes": [],
           "wrong_total": 0}
    ranks = {"world_size": len(layout), "layout": layout}
    return envelope("allreduce_bw", NODES[0], "2025-06-01T02:20:00Z", "2025-06-01T02:22:00Z", res,
                    ranks=ranks, energy={"cpu_j": None, "gpu_j": None, "wall_sec": 120.0, "source": "unavailable"},
                    args=["allreduce_bw", "-b", "1M", "-e", "1G", "-f", "4", "--groups", "world,node,pairs"])


# ------------------------------------------------------------------ loader_contention

def loader(rng, node, i, faulty):
    bad = faulty and node == "node06"
    cfgs = []
    spec = [("baseline", "baseline", 0), ("shared-w2", "shared", 2), ("shared-w4", "shared", 4),
            ("isolated-w2", "isolated", 2), ("isolated-w4", "isolated", 4), ("as-is-w4", "as-is", 4)]
    for name, pl, w in spec:
        p50, p99, wait, util, verdict, reasons = noisy(rng, 40.0), noisy(rng, 120.0), noisy(rng, 0.012), 0.985, "pass", []
        if bad and pl in ("shared", "as-is") and w == 4:
            p50, p99, wait, util, verdict = 2400.0, 9800.0, 0.27, 0.72, "fail"
            reasons = ["input wait 27% of the step (>= 20%: input-bound)"]
        elif bad and pl == "shared" and w == 2:
            p50, p99, wait, util, verdict = 900.0, 4100.0, 0.12, 0.88, "warn"
            reasons = ["input wait 12% of the step (5-20%: moderate)"]
        cfgs.append({"name": name, "placement": pl, "workers": w, "hog_util": 0.0,
                     "feeder_cpus": "0", "worker_cpus": "0-7" if pl == "shared" else "8-15",
                     "lateness_us": {"p50": p50, "p99": p99, "max": p99 * 1.5},
                     "input_wait_frac": wait, "accel_util": util,
                     "batches_per_sec": 50.0 * util, "runq_delay_us": p50 / 2,
                     "invol_ctx_switches": 10, "psi_cpu_some_avg10": 0.5, "host_cpu_util": 0.3,
                     "steal_frac": 0.0, "verdict": verdict, "reasons": reasons})
    # the top-level verdict is the recommended configuration's (isolated-w4: pass)
    res = {"step_ms": 20, "gpus_emulated": 1, "cuda_copies": False, "configs": cfgs,
           "skipped": [], "mask_collapsed": False, "verdict": "pass",
           "recommendation": {"placement": "isolated", "workers": 4, "config": "isolated-w4", "verdict": "pass",
                              "numactl": "numactl --physcpubind=8-15 --membind=0 python train.py",
                              "hwloc_bind": "hwloc-bind core:8-15 -- python train.py",
                              "slurm": "srun --cpu-bind=map_cpu:8,9,10,11 python train.py"}}
    start = "2025-06-01T02:%02d:00Z" % (30 + i)
    end = "2025-06-01T02:%02d:20Z" % (30 + i)
    return envelope("loader_contention", node, start, end, res, energy=None)


def write(path, doc):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(doc, f, separators=(",", ":"))
        f.write("\n")


def main():
    for fleet, faulty in (("fleet-healthy", False), ("fleet-faulty", True)):
        rng = random.Random(20250601)
        base = os.path.join(HERE, fleet)
        for i, n in enumerate(NODES):
            write(os.path.join(base, n, "roofline.json"), roofline(rng, n, i, faulty))
            write(os.path.join(base, n, "loader_contention.json"), loader(rng, n, i, faulty))
        write(os.path.join(base, "allreduce_bw.json"), allreduce(rng, faulty))


if __name__ == "__main__":
    main()
