#!/usr/bin/env python3
"""Write a synthetic fleet's nightly results for the nightly workflow test.

Usage: make-fleet.py OUTDIR NIGHTS
Writes OUTDIR/<node>/<stamp>/{roofline,allreduce_bw,loader_contention}.json
for nodes n1..n4 and NIGHTS nights (stamps 20250101T030000Z, 20250102T...).
Every node measures the same values on a night (a shared +-2% night-to-night
jitter), except that n3's gpu1 loses 20% of its bf16 GEMM rate from night
15 on: the nightly flow must flag exactly n3, "regressed ... since
2025-01-15". The devices are CPU-class with no datasheet entry, so only the
fleet-relative and history checks apply.
"""
import json, os, sys


def envelope(tool, host, start, results, ranks=None):
    return {"schema": "clusterhealth.result", "schema_version": 1, "tool": tool,
            "version": "0.1.0", "git_rev": "synthetic", "start_utc": start, "end_utc": start,
            "status": "ok", "reason": None, "exit_code": 0,
            "host": {"hostname": host, "kernel": "6.1", "cpu_model": "Synthetic CPU", "packages": 1,
                     "cores": 8, "pus": 8, "numa_nodes": 1, "memory_bytes": 1 << 35, "caches": [],
                     "llc_total_bytes": 1 << 25, "gpus": []},
            "software": {"hwloc": "2.9.0", "jansson": "2.14", "mpi": "Open MPI 4.1.4"},
            "ranks": ranks, "args": [tool], "env": {}, "results": results}


def stats(t):
    return {"n": 10, "min": t, "median": t, "mean": t, "p95": t, "max": t, "cv": 0.0}


def device(name, mem, bf16):
    return {"device": name, "kind": "cpu", "backend": "cpu", "name": "Synthetic CPU", "pci_bus_id": None,
            "sku": None, "status": "ok", "reason": None, "datasheet": None,
            "roofs": {"memory_gbps": mem, "compute_gflops": {"bf16": bf16, "fp32": bf16 / 2},
                      "ridge_flop_per_byte": {"bf16": bf16 / mem}},
            "throttled": False, "points": []}


def main():
    out, nights = sys.argv[1], int(sys.argv[2])
    for night in range(1, nights + 1):
        stamp = "202501%02dT030000Z" % night
        start = "2025-01-%02dT03:00:00Z" % night
        jitter = 1 + 0.02 * ((night * 7) % 5 - 2) / 2
        for k, node in enumerate(("n1", "n2", "n3", "n4")):
            d = os.path.join(out, node, stamp)
            os.makedirs(d, exist_ok=True)
            bf1 = 800.0 * jitter * (0.8 if node == "n3" and night >= 15 else 1.0)
            roof = {"devices": [device("gpu0", 100.0 * jitter, 800.0 * jitter),
                                device("gpu1", 100.0 * jitter, bf1)],
                    "node_median": {}, "flagged": []}
            busbw = 20.0 * jitter
            rows = []
            for s in (8, 1024, 1 << 20):
                t = s / (busbw / 1.5 * 1e3) + 10.0
                bb = s / (t * 1e3) * 1.5
                cell = {"time_us": stats(t), "algbw_gbps": bb / 1.5, "busbw_gbps": bb, "wrong": 0}
                rows.append({"bytes": s, "count": s // 4, "dtype": "float", "redop": "sum", "root": -1,
                             "iterations": 10, "busbw_factor": 1.5, "out_of_place": cell,
                             "in_place": dict(cell), "per_rank_mean_us": [t] * 4, "slowest_rank": 0,
                             "rank_spread_pct": 0.0})
            sweep = {"group_kind": "node", "group_name": "node0", "ranks": [0, 1, 2, 3], "nodes": [node],
                     "nranks": 4, "algo": "ring", "rows": rows,
                     "avg_busbw_gbps": sum(r["out_of_place"]["busbw_gbps"] for r in rows) / 3,
                     "large_msg_busbw_gbps": rows[-1]["out_of_place"]["busbw_gbps"]}
            layout = [{"rank": r, "host": node, "pid": 10 + r, "local_rank": r, "node": 0,
                       "gpu_index": None, "pci_bus_id": None, "gpu_name": "host memory"} for r in range(4)]
            ar = {"backend": "mpi", "dtype": "float", "op": "sum", "busbw_factor_formula": "2(n-1)/n",
                  "sweeps": [sweep], "stragglers": [], "group_flags": [], "suspect_nodes": [], "wrong_total": 0}
            lc = {"step_ms": 10, "gpus_emulated": 1, "cuda_copies": False,
                  "configs": [{"name": "as-is-w1", "placement": "as-is", "workers": 1, "hog_util": 0.0,
                               "feeder_cpus": "0-7", "worker_cpus": "0-7",
                               "lateness_us": {"p50": 5.0, "p99": 20.0, "max": 40.0},
                               "input_wait_frac": 0.01, "accel_util": 0.99, "batches_per_sec": 100.0,
                               "runq_delay_us": 1.0, "invol_ctx_switches": 0, "psi_cpu_some_avg10": None,
                               "host_cpu_util": 0.2, "steal_frac": 0.0, "verdict": "pass", "reasons": []}],
                  "skipped": [], "mask_collapsed": False, "verdict": "pass",
                  "recommendation": {"placement": "as-is", "workers": 1, "numactl": "", "hwloc_bind": "",
                                     "slurm": ""}}
            for name, doc in (("roofline", envelope("roofline", node, start, roof)),
                              ("allreduce_bw", envelope("allreduce_bw", node, start, ar,
                                                        {"world_size": 4, "layout": layout})),
                              ("loader_contention", envelope("loader_contention", node, start, lc))):
                with open(os.path.join(d, name + ".json"), "w") as f:
                    json.dump(doc, f, indent=1)


if __name__ == "__main__":
    main()
