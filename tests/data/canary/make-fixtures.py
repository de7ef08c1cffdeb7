#!/usr/bin/env python3
"""Write the canary's synthetic result files (tests/data/canary/*.json).

The all-reduce times come from the ring model itself,
T(S, n) = 2(n-1)/n x S/B + 2(n-1) x alpha, with known parameters per fabric
level, so that a test can check that the fit recovers them:
  intra-node: alpha 2 us, B 150 GB/s      inter-node: alpha 8 us, B 40 GB/s
Two nodes (n1, n2) of 4 ranks. Run from the repository root:
  python3 tests/data/canary/make-fixtures.py
"""
import json, os

HERE = os.path.dirname(os.path.abspath(__file__))
INTRA = (2.0, 150.0)
INTER = (8.0, 40.0)


def t_us(level, s, n):
    alpha, bw = level
    return 2.0 * (n - 1) / n * s / (bw * 1e3) + 2.0 * (n - 1) * alpha


def stats(t):
    return {"n": 20, "min": t, "median": t, "mean": t, "p95": t, "max": t, "cv": 0.0}


def sweep(kind, name, ranks, nodes, algo, level):
    n = len(ranks)
    rows = []
    s = 8
    while s <= 64 * 1024 * 1024:
        t = t_us(level, s, n)
        algbw = s / (t * 1e3)
        busbw = algbw * 2.0 * (n - 1) / n
        cell = {"time_us": stats(t), "algbw_gbps": algbw, "busbw_gbps": busbw, "wrong": 0}
        rows.append({"bytes": s, "count": s // 4, "dtype": "float", "redop": "sum", "root": -1,
                     "iterations": 20, "busbw_factor": 2.0 * (n - 1) / n,
                     "out_of_place": cell, "in_place": dict(cell)})
        s *= 8
    return {"group_kind": kind, "group_name": name, "ranks": ranks, "nodes": nodes,
            "nranks": n, "algo": algo, "rows": rows,
            "avg_busbw_gbps": sum(r["out_of_place"]["busbw_gbps"] for r in rows) / len(rows),
            "large_msg_busbw_gbps": rows[-1]["out_of_place"]["busbw_gbps"]}


def envelope(tool, host, results, ranks=None):
    return {"schema": "clusterhealth.result", "schema_version": 1, "tool": tool,
            "version": "0.1.0", "git_rev": "fixture", "start_utc": "2025-01-15T03:00:00Z",
            "end_utc": "2025-01-15T03:01:00Z", "status": "ok", "reason": None, "exit_code": 0,
            "host": {"hostname": host}, "software": {}, "ranks": ranks, "args": [tool],
            "env": {}, "results": results}


def main():
    layout = [{"rank": r, "host": "n1" if r < 4 else "n2", "pid": 100 + r,
               "local_rank": r % 4, "node": r // 4, "gpu_index": r % 4,
               "pci_bus_id": None, "gpu_name": "host memory"} for r in range(8)]
    sweeps = [sweep("world", "world", list(range(8)), ["n1", "n2"], "ring", INTER),
              sweep("node", "node0", [0, 1, 2, 3], ["n1"], "ring", INTRA),
              sweep("node", "node1", [4, 5, 6, 7], ["n2"], "ring", INTRA),
              sweep("pair", "pair0-4", [0, 4], ["n1", "n2"], "ring", INTER),
              sweep("scaling", "scale2", [0, 1], ["n1"], "ring", INTRA),
              sweep("scaling", "scale4", [0, 1, 2, 3], ["n1"], "ring", INTRA),
              sweep("scaling", "scale6", [0, 1, 2, 3, 4, 5], ["n1", "n2"], "ring", INTER),
              sweep("scaling", "scale8", list(range(8)), ["n1", "n2"], "ring", INTER)]
    ar = envelope("allreduce_bw", "n1", {"backend": "mpi", "dtype": "float", "op": "sum",
                                         "busbw_factor_formula": "2(n-1)/n", "sweeps": sweeps,
                                         "stragglers": [], "group_flags": [], "suspect_nodes": [],
                                         "wrong_total": 0},
                  {"world_size": 8, "layout": layout})
    with open(os.path.join(HERE, "allreduce_bw.json"), "w") as f:
        json.dump(ar, f, indent=1)
    for host, wait in (("n1", 0.04), ("n2", 0.12)):
        cfgs = [{"name": "isolated-w2", "placement": "isolated", "workers": 2, "input_wait_frac": 0.01,
                 "accel_util": 0.99, "verdict": "pass", "reasons": []},
                {"name": "as-is", "placement": "as-is", "workers": 2, "input_wait_frac": wait,
                 "accel_util": 1 - wait, "verdict": "warn", "reasons": []}]
        lc = envelope("loader_contention", host, {"step_ms": 10, "gpus_emulated": 4, "configs": cfgs,
                                                  "skipped": [], "mask_collapsed": False, "verdict": "warn"})
        with open(os.path.join(HERE, "loader_%s.json" % host), "w") as f:
            json.dump(lc, f, indent=1)


if __name__ == "__main__":
    main()
