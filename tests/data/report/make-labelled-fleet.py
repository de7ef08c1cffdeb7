#!/usr/bin/env python3
"""Write the labelled synthetic fleets (tests/data/report/labelled-*/).

Ten nodes (node01..node10) of 8 H100 SXM GPUs, each with the files a nightly
sweep leaves on a node: roofline.json, allreduce_bw.json (one launch on the
node: a group of kind "world" whose ranks all lie on that node, as
`make sweep` and scripts/nightly run it) and loader_contention.json; plus
one allreduce_bw launch over all nodes with --groups pairs (node pairs in two
rounds, so every node is in two pairs): pairs/allreduce_bw.json.

Plus, per node, a checkpoint_io result (2 ranks writing 8 GB to the
shared NFS mount nas:/export on /mnt/ckpt, --interval 10 min), so that the
nodes are each other's peers on that mount.

Built from the real result files of the build machine in real-vm/: each
file is a copy of the real file of the same tool (envelope, host section,
software, the real CPU device of roofline, the real loader configurations),
with the host name, the GPUs, a NIC inventory (host.inventory, 8 x 400 Gb/s
NDR, one per GPU) and the GPU results replaced. GPU figures are the
healthy H100 SXM figures of make-fleet.py (memory 2950 GB/s, bf16 GEMM
790 TFLOP/s), intra-node busbw 366 GB/s at 1 GiB (ring, about 99% of the
370 GB/s reference), node-pair busbw 357 GB/s at 1 GiB (97% of the 368 GB/s
the NICs allow), with 1% deterministic noise. Every file is in today's
format: its measurement conditions (envelope key "conditions") are those
of an idle node, the real CPU device's per-call spread (time_sec.cv) and
the loader's baseline host load are set to an idle node's (the real ones,
recorded on the busy build machine, are noisy: not judged), and roofline's
results.flagged[] lists the GPUs more than 5% below their node's median
with "confirmed" from the re-measurement (the fault of node06 was
measured again and held).

  labelled-healthy/  nothing wrong: no node flagged
  labelled-faulty/   each fault class on its own node; the label is the
                     verdict and reason code the tests expect:
    node02  memory roof -20% on every GPU               FAIL memory_low
    node03  its single-node sweep's busbw -40%          FAIL intra_node_busbw_low
    node04  every node pair it is in -50% (its NIC)     FAIL inter_node_link
    node05  loader input wait 30% with the recommended
            placement (loader_contention's verdict fail) FAIL loader_input_bound
    node06  gpu5 bf16 compute 10% below its node median,
            confirmed by roofline's re-measurement       FAIL compute_low, drain
    node07  memory roof -10% on every GPU               WARN or FAIL memory_low
    node08  checkpoint writes 3x slower than its peers
            (adds 1.3% of wall-clock at the 10 min
            interval)                                   WARN checkpoint_slow_write
    node01, node09, node10: healthy                      PASS
  Drain candidates: node04 (two slow pairs agree) and node06 (confirmed);
  the other FAILs rest on one measurement nothing confirmed.
  labelled-*.labels.json   the same labels, read by the tests: [verdict,
                           reason code, drain candidate]

Run from the repository root:  python3 tests/data/report/make-labelled-fleet.py
"""
import copy
import importlib.util
import json
import os
import random

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("mf", os.path.join(HERE, "make-fleet.py"))
mf = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mf)

REAL = {t: json.load(open(os.path.join(HERE, "real-vm", t + ".json")))
        for t in ("roofline", "allreduce_bw", "loader_contention")}
NODES = ["node%02d" % i for i in range(1, 11)]
GPUS = mf.GPUS
LABELS = {"node02": ["FAIL", "memory_low", False], "node03": ["FAIL", "intra_node_busbw_low", False],
          "node04": ["FAIL", "inter_node_link", True], "node05": ["FAIL", "loader_input_bound", False],
          "node06": ["FAIL", "compute_low", True], "node07": ["WARN|FAIL", "memory_low", False],
          "node08": ["WARN", "checkpoint_slow_write", False]}
# an idle node's measurement conditions (docs/results-schema.md, "conditions")
IDLE = {"loadavg_1m": 0.4, "cpu_pressure_some_avg10_pct": 0.5, "cpu_busy_pct": 1.0}


def host(name):
    h = copy.deepcopy(REAL["roofline"]["host"])
    g = mf.host(name)
    h["hostname"] = name
    h["gpus"] = g["gpus"]
    h["inventory"] = {
        "gpus": [{"index": i, "name": mf.GPU_NAME, "pci_bus_id": x["pci_bus_id"], "uuid": None,
                  "pcie": None, "nvlink": None, "ecc": None, "power": None, "clocks": None,
                  "reasons": {"pcie": "not recorded in this fixture", "nvlink": "not recorded in this fixture",
                              "ecc": "not recorded in this fixture", "power": "not recorded in this fixture",
                              "clocks": "not recorded in this fixture"}}
                 for i, x in enumerate(g["gpus"])],
        "nics": [{"device": "mlx5_%d" % i, "port": 1, "kind": "rdma", "state": "ACTIVE",
                  "phys_state": "LinkUp", "rate_text": "400 Gb/sec (4X NDR)",
                  "rate_gbps": 400.0, "link_layer": "InfiniBand", "fw_version": "28.39.1002",
                  "numa_node": i // 4, "pci_bus_id": "0000:%02x:00.0" % (0x19 + 0x10 * i),
                  "near_gpus": [i], "near_by": "pcie_switch", "reasons": {}} for i in range(GPUS)],
        "cpu": {"governor": "performance", "turbo": True, "reasons": {}}, "reasons": {}}
    return h


def conditions(start, end, procs, threads):
    return {"before": dict(IDLE, utc=start, run_cpu_pct=0.0), "after": dict(IDLE, utc=end, run_cpu_pct=0.0),
            "online_cpus": 224, "procs_on_host": procs, "threads_per_proc": threads,
            "per_core": procs * threads / 224.0, "cpu_busy_interval_sec": 0.2, "reasons": {}}


def envelope(tool, name, start, end, results, ranks=None, procs=1, threads=1):
    d = copy.deepcopy(REAL.get(tool, REAL["roofline"]))
    d.update({"tool": tool, "start_utc": start, "end_utc": end, "status": "ok", "reason": None, "exit_code": 0,
              "host": host(name), "results": results, "conditions": conditions(start, end, procs, threads)})
    d["software"] = dict(d.get("software") or {}, **mf.SW)
    d["env"] = {}
    if ranks is not None:
        d["ranks"] = ranks
    else:
        d.pop("ranks", None)
    d["energy"] = {"cpu_j": None, "gpu_j": None, "wall_sec": None, "source": "unavailable"}
    return d


def roofline(rng, node, i, faulty):
    devs = [mf.gpu_device(rng, node, g, False) for g in range(GPUS)]
    if faulty and node == "node02":
        for d in devs:
            d["roofs"]["memory_gbps"] *= 0.80
            for p in d["points"]:
                if p["family"] == "stream":
                    p["gbps"] *= 0.80
                    p["gflops"] *= 0.80
    if faulty and node == "node07":
        for d in devs:
            d["roofs"]["memory_gbps"] *= 0.90
            for p in d["points"]:
                if p["family"] == "stream":
                    p["gbps"] *= 0.90
                    p["gflops"] *= 0.90
    flagged = []
    if faulty and node == "node06":
        others = sorted(d["roofs"]["compute_gflops"]["bf16"] for k, d in enumerate(devs) if k != 5)
        med = others[len(others) // 2]
        v = 0.90 * med
        devs[5]["roofs"]["compute_gflops"]["bf16"] = v
        for p in devs[5]["points"]:
            if p["family"] == "gemm" and p["dtype"] == "bf16":
                p["gflops"] = v
                # roofline measured it again at the end of its run: it held
                p["confirm"] = {"why": "below_node_median", "time_sec": p["time_sec"], "gbps": p["gbps"],
                                "gflops": v * 1.002}
        flagged.append({"device": "gpu5", "metric": "compute_gflops.bf16", "value": v, "node_median": med,
                        "pct_below": 10.0, "confirmed": True})
    cpu = copy.deepcopy(REAL["roofline"]["results"]["devices"][0])
    cpu["host"] = node
    for p in cpu["points"]:  # an idle node's per-call spread (the real one is the busy build machine's)
        p["time_sec"]["cv"] = min(p["time_sec"]["cv"], 0.02)
    devs.append(cpu)
    res = dict(REAL["roofline"]["results"], devices=devs, node_median={}, flagged=flagged)
    return envelope("roofline", node, "2026-11-30T02:%02d:00Z" % (i * 2),
                    "2026-11-30T02:%02d:50Z" % (i * 2), res, threads=8)


def layout(nodes):
    return [{"rank": r, "host": nodes[r // GPUS], "pid": 4000 + r, "local_rank": r % GPUS,
             "node": r // GPUS, "node_name": nodes[r // GPUS], "gpu_index": r % GPUS,
             "pci_bus_id": "0000:%02x:00.0" % (0x18 + 0x10 * (r % GPUS)), "gpu_name": mf.GPU_NAME}
            for r in range(GPUS * len(nodes))]


def allreduce_res(sweeps):
    return {"backend": "nccl", "dtype": "float", "op": "sum", "busbw_factor_formula": "2(n-1)/n",
            "sweeps": sweeps, "stragglers": [], "group_flags": [], "suspect_nodes": [],
            "wrong_total": 0}


def node_sweep(rng, node, i, faulty):
    peak = 375.0 * (0.60 if faulty and node == "node03" else 1.0)
    sw = mf.sweep(rng, "world", "world", list(range(GPUS)), [node], peak)
    ranks = {"world_size": GPUS, "nodes": 1, "node_size": GPUS, "layout": layout([node])}
    return envelope("allreduce_bw", node, "2026-11-30T03:%02d:00Z" % i, "2026-11-30T03:%02d:40Z" % i,
                    allreduce_res([sw]), ranks=ranks, procs=GPUS)


def pairs(rng, faulty):
    rounds = [(a, a + 1) for a in range(0, len(NODES), 2)] + \
             [(a, (a + 1) % len(NODES)) for a in range(1, len(NODES), 2)]
    sweeps = []
    ranks_of = lambda k: list(range(k * GPUS, (k + 1) * GPUS))
    for a, b in rounds:
        peak = 365.0
        if faulty and "node04" in (NODES[a], NODES[b]):
            peak *= 0.50
        sweeps.append(mf.sweep(rng, "pair", "pair%d-%d" % (a, b), ranks_of(a) + ranks_of(b),
                               [NODES[a], NODES[b]], peak))
    ranks = {"world_size": GPUS * len(NODES), "nodes": len(NODES), "node_size": GPUS,
             "layout": layout(NODES)}
    return envelope("allreduce_bw", NODES[0], "2026-11-30T04:00:00Z", "2026-11-30T04:06:00Z",
                    allreduce_res(sweeps), ranks=ranks, procs=GPUS)


def loader(rng, node, i, faulty):
    res = copy.deepcopy(REAL["loader_contention"]["results"])
    base = res["configs"][0]
    bad = faulty and node == "node05"
    cfgs = []
    for c in res["configs"]:
        x = copy.deepcopy(base)
        x.update({"name": c["name"], "placement": c["placement"], "workers": c["workers"],
                  "feeder_cpus": c["feeder_cpus"], "worker_cpus": c["worker_cpus"],
                  "input_wait_frac": mf.noisy(rng, base["input_wait_frac"]),
                  "accel_util": 0.98, "verdict": "pass", "reasons": [],
                  # an idle host (the real baseline saw the build machine's other work)
                  "psi_cpu_some_avg10": 0.5, "psi_cpu_some_frac": 0.004, "host_cpu_util": 0.02})
        if bad and c["placement"] != "baseline":
            x.update({"input_wait_frac": 0.30, "accel_util": 0.68, "verdict": "fail",
                      "reasons": ["input wait 30.0% of the step >= 20% (fail; TensorFlow profiler input-pipeline analysis)",
                                  "accelerator utilisation 68.0% < 70% (fail)"]})
        cfgs.append(x)
    res["configs"] = cfgs
    res["verdict"] = "fail" if bad else "pass"
    res["recommendation"]["verdict"] = res["verdict"]
    return envelope("loader_contention", node, "2026-11-30T05:%02d:00Z" % i,
                    "2026-11-30T05:%02d:30Z" % i, res, threads=3)


def checkpoint(rng, node, i, faulty):
    """checkpoint_io, 2 ranks writing 8 GB (4 GB each) to the shared mount,
    --interval 10 min; about 1 GB/s per rank (4 s), node08 3x slower."""
    size, shard = 8 * 10**9, 4 * 10**9
    gbps = mf.noisy(rng, 1.0) / (3.0 if faulty and node == "node08" else 1.0)
    secs = [shard / (gbps * 1e9)] * 2
    mnt = {"point": "/mnt/ckpt", "fstype": "nfs4", "source": "nas:/export", "network_fs": True}
    layout = [{"rank": r, "host": node, "pid": 7000 + r, "local_rank": r, "node": 0, "shard_bytes": shard,
               "dir_mount": mnt, "stage_mount": {"point": "/dev/shm", "fstype": "tmpfs", "source": "tmpfs",
                                                 "network_fs": False}, "buffer": "cuda_pinned"} for r in range(2)]
    per = [{"rank": r, "host": node, "bytes": shard, "block_sec": secs[r], "write_gbps": shard / secs[r] / 1e9}
           for r in range(2)]
    sync = {"strategy": "synchronous", "writers": 2, "bytes": size, "files": 2, "block_sec": max(secs),
            "agg_write_gbps": size / max(secs) / 1e9, "per_rank": per,
            "slowest": {"rank": 0, "host": node, "block_sec": max(secs)}}
    res = {"config": {"dir": "/mnt/ckpt/clusterhealth", "size_bytes": size, "files_per_rank": 1,
                      "interval_sec": 600.0, "timeout_sec": 600.0, "scaling": False, "load": "auto",
                      "keep": False},
           "sync": sync, "verify": {"sync": {"files_checked": 2, "files_bad": 0, "method": "crc32", "bad": []}}}
    ranks = {"world_size": 2, "nodes": 1, "layout": layout}
    return envelope("checkpoint_io", node, "2026-11-30T06:%02d:00Z" % i, "2026-11-30T06:%02d:30Z" % i, res,
                    ranks=ranks, procs=2, threads=2)


def main():
    for fleet, faulty in (("labelled-healthy", False), ("labelled-faulty", True)):
        rng = random.Random(20261130)
        base = os.path.join(HERE, fleet)
        for i, n in enumerate(NODES):
            mf.write(os.path.join(base, n, "roofline.json"), roofline(rng, n, i, faulty))
            mf.write(os.path.join(base, n, "allreduce_bw.json"), node_sweep(rng, n, i, faulty))
            mf.write(os.path.join(base, n, "loader_contention.json"), loader(rng, n, i, faulty))
            mf.write(os.path.join(base, n, "checkpoint_io.json"), checkpoint(rng, n, i, faulty))
        mf.write(os.path.join(base, "pairs", "allreduce_bw.json"), pairs(rng, faulty))
        labels = {n: (LABELS.get(n, ["PASS", None, False]) if faulty else ["PASS", None, False]) for n in NODES}
        with open(os.path.join(HERE, fleet + ".labels.json"), "w") as f:
            json.dump(labels, f, indent=1, sort_keys=True)
            f.write("\n")


if __name__ == "__main__":
    main()
