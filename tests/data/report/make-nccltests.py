#!/usr/bin/env python3
"""Write the constructed nccl-tests inputs and the broken inputs of
health_report's parser tests (tests/data/report/nccl-tests, tests/data/report/bad).

Constructed from the real log tests/data/nccl-tests-logs/14_gh200_2node_2gpu_cscs_newfmt.txt
(GH200, 2 nodes, 1 MiB to 128 MiB), in the layouts nccl-tests prints:
  nccl-tests/multi_algo_allreduce.txt  two runs in one log, NCCL_ALGO=Ring then Tree
                                      (NCCL INFO lines), each with its own footer;
                                      Tree's busbw is log 14's x 0.93
  nccl-tests/gh200_allreduce.json      the same run as nccl-tests -J writes it
                                      (file version 2, src/util.cu: "%lf" numbers,
                                      booleans as strings, root as a padded string)
  nccl-tests/truncated_midrow.txt      log 01's first 49 lines, the last cut mid-row
  nccl-tests/malformed_row.txt         log 14 with one busbw cell replaced by "2O.5"
  bad/syntax_error.json                a result file with a missing comma (line 4)
  bad/truncated.json                   gh200_allreduce.json cut at 60%
  bad/schema_v2.json                   a result file of a future schema_version
  bad/notes.txt                        plain text
  bad/roofline_missing_roofs.json      a roofline result whose device lacks "roofs"
Run from the repository root:  python3 tests/data/report/make-nccltests.py
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
LOGS = os.path.join(ROOT, "tests", "data", "nccl-tests-logs")

# log 14: size, oop (time, algbw, busbw), ip (time, algbw, busbw)
ROWS14 = [
    (1048576, 339.61, 3.09, 3.09, 335.85, 3.12, 3.12),
    (2097152, 355.53, 5.90, 5.90, 361.77, 5.80, 5.80),
    (4194304, 476.28, 8.81, 8.81, 471.14, 8.90, 8.90),
    (8388608, 556.83, 15.06, 15.06, 559.35, 15.00, 15.00),
    (16777216, 840.36, 19.96, 19.96, 841.25, 19.94, 19.94),
    (33554432, 1537.62, 21.82, 21.82, 1538.74, 21.81, 21.81),
    (67108864, 2982.38, 22.50, 22.50, 2983.25, 22.50, 22.50),
    (134217728, 5871.07, 22.86, 22.86, 5867.43, 22.88, 22.88),
]

HEAD = """# nccl-tests version 2.18.2 nccl-headers=23007 nccl-library=23007
# Collective test starting: all_reduce_perf
# nThread 1 nGpus 1 minBytes 1048576 maxBytes 134217728 step: 2(factor) warmup iters: 1 iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0
#
# Using devices
#  Rank  0 Group  0 Pid  15784 on     node01 device  0 [0009:01:00] NVIDIA GH200 120GB
#  Rank  1 Group  0 Pid  24926 on     node02 device  0 [0009:01:00] NVIDIA GH200 120GB
"""
TABLE_HEAD = """#
#                                                              out-of-place                       in-place          
#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong 
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)         
"""


def table(scale):
    out, cells = [], []
    for s, t1, a1, b1, t2, a2, b2 in ROWS14:
        a1, b1, a2, b2 = (round(v * scale, 2) for v in (a1, b1, a2, b2))
        t1, t2 = t1 / scale, t2 / scale
        out.append("%12d  %12d  %8s  %6s  %6d  %7.2f  %6.2f  %6.2f  %6d  %7.2f  %6.2f  %6.2f  %6d"
                   % (s, s // 4, "float", "sum", -1, t1, a1, b1, 0, t2, a2, b2, 0))
        cells += [b1, b2]
    return out, sum(cells) / len(cells)


def run_text(algo, scale):
    rows, avg = table(scale)
    return (HEAD + "node01:15784:15784 [0] NCCL INFO NCCL_ALGO set by environment to %s\n" % algo
            + TABLE_HEAD + "\n".join(rows) + "\n"
            + "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : %g \n#\n" % avg
            + "# Collective test concluded: all_reduce_perf\n#\n")


def nt_json():
    res, cells = [], []
    for s, t1, a1, b1, t2, a2, b2 in ROWS14:
        res.append({"size": s, "count": s // 4, "type": "float", "redop": "sum", "root": "    -1",
                    "out_of_place": {"time": t1, "alg_bw": a1, "bus_bw": b1, "nwrong": 0.0},
                    "in_place": {"time": t2, "alg_bw": a2, "bus_bw": b2, "nwrong": 0.0},
                    "actual_iterations": 20, "experiment_name": None})
        cells += [b1, b2]
    doc = {"version": 2, "start_time": "2025-03-04 10:15:00",
           "args": ["./build/all_reduce_perf", "-b", "1M", "-e", "128M", "-f", "2", "-J", "out.json"],
           "env": ["NCCL_ALGO=Ring", "NCCL_DEBUG=WARN"], "nccl_version": 23007,
           "config": {"nthreads": 1, "ngpus": 1, "minimum_bytes": 1048576, "maximum_bytes": 134217728,
                      "step_factor": 2, "warmup_iters": 1, "iterations": 20, "aggregated_iterations": 1,
                      "validation": 1, "graph": 0, "blocking_collectives": "false",
                      "per_iter_timing": "false", "parallel_init": "false",
                      "devices": [{"rank": 0, "group": 0, "pid": 15784, "hostname": "node01", "device": 0,
                                   "device_hex": "0009:01:00", "device_info": "NVIDIA GH200 120GB"},
                                  {"rank": 1, "group": 0, "pid": 24926, "hostname": "node02", "device": 0,
                                   "device_hex": "0009:01:00", "device_info": "NVIDIA GH200 120GB"}]},
           "results": res, "out_of_bounds": {"count": 0, "okay": "true"},
           "average_bus_bandwidth": {"bandwidth": sum(cells) / len(cells), "okay": "unchecked"},
           "errors": [], "end_time": "2025-03-04 10:15:07"}
    return json.dumps(doc)


def fmt_lf(doc):
    """Re-serialise floats as %lf, as nccl-tests does."""
    def enc(o):
        if isinstance(o, bool) or o is None:
            return json.dumps(o)
        if isinstance(o, float):
            return "%lf" % o
        if isinstance(o, int):
            return "%d" % o
        if isinstance(o, str):
            return json.dumps(o)
        if isinstance(o, list):
            return "[" + ",".join(enc(x) for x in o) + "]"
        return "{" + ",".join(json.dumps(k) + ":" + enc(v) for k, v in o.items()) + "}"
    return enc(doc)


def result(tool, host, results, version=1):
    return {"schema": "clusterhealth.result", "schema_version": version, "tool": tool,
            "version": "0.1.0", "git_rev": "fixture", "start_utc": "2025-06-01T02:00:00Z",
            "end_utc": "2025-06-01T02:01:00Z", "status": "ok", "reason": None, "exit_code": 0,
            "host": {"hostname": host, "packages": 1}, "software": {}, "ranks": None,
            "args": [tool], "env": {}, "results": results}


def write(rel, text):
    path = os.path.join(HERE, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)


def main():
    write("nccl-tests/multi_algo_allreduce.txt", run_text("Ring", 1.0) + run_text("Tree", 0.93))
    doc = json.loads(nt_json())
    jtext = fmt_lf(doc) + "\n"
    write("nccl-tests/gh200_allreduce.json", jtext)
    with open(os.path.join(LOGS, "01_h100_2node_16gpu_gcp_a3mega_allreduce.txt")) as f:
        lines = f.read().split("\n")
    cut = lines[:48] + [lines[48][:60]]
    write("nccl-tests/truncated_midrow.txt", "\n".join(cut))
    with open(os.path.join(LOGS, "14_gh200_2node_2gpu_cscs_newfmt.txt")) as f:
        lines = f.read().split("\n")
    for i, l in enumerate(lines):
        if l.strip().startswith("16777216"):
            lines[i] = l.replace("  19.96  ", "   2O.5  ", 1)
    write("nccl-tests/malformed_row.txt", "\n".join(lines))
    write("bad/syntax_error.json",
          '{\n  "schema": "clusterhealth.result",\n  "schema_version": 1,\n  "tool": "roofline"\n  "status": "ok"\n}\n')
    write("bad/truncated.json", jtext[: int(len(jtext) * 0.6)])
    write("bad/schema_v2.json", json.dumps(result("roofline", "node09", {"devices": []}, version=2), indent=1) + "\n")
    write("bad/notes.txt", "these are notes about last night's run, not a result\n")
    dev = {"device": "gpu0", "kind": "gpu", "backend": "cuda", "name": "NVIDIA H100 80GB HBM3",
           "pci_bus_id": "0000:18:00.0", "sku": "H100 SXM", "status": "ok", "reason": None,
           "throttled": False, "points": []}
    write("bad/roofline_missing_roofs.json",
          json.dumps(result("roofline", "node09", {"devices": [dev]}), indent=1) + "\n")


if __name__ == "__main__":
    main()
