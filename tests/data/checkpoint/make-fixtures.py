#!/usr/bin/env python3
"""Write checkpoint_io's synthetic result files (tests/data/checkpoint/*.json).

textbook.json: the canary's textbook case measured: 64 ranks on 8 nodes (8
  per node) write a 7e9-parameter checkpoint (x 16 bytes = 112 GB) to a
  Lustre mount; the synchronous checkpoint blocks every rank for 330 s
  (5.5 min, the slowest rank), --interval 30m. The aggregate bandwidth
  saturates: 1 writer 10 s for its 1.75 GB shard (0.175 GB/s), 16 writers
  85 s, 32 writers 168 s, 64 writers 330 s.
fleet/c1..c4.json: one result per node, 2 ranks each, all writing to the
  same NFS mount (nas:/export on /mnt/ckpt), 1 GB per node, --interval 60 s.
  Per rank write bandwidth: c1 1.0 GB/s, c2 0.5 (2x slower than its peers'
  median: blocks 1 s instead of 0.5 s, adds 0.83% of wall-clock at the
  60 s interval: under the 1% of a WARN), c3 0.25 (4x slower: blocks 2 s,
  adds 2.5%: WARN), c4 1.0 but one file did not read back (FAIL).
Run from the repository root: python3 tests/data/checkpoint/make-fixtures.py
"""
import json, os

HERE = os.path.dirname(os.path.abspath(__file__))


def stats(x):
    s = sorted(x)
    n = len(s)
    med = s[n // 2] if n % 2 else (s[n // 2 - 1] + s[n // 2]) / 2
    return {"n": n, "min": s[0], "median": med, "mean": sum(s) / n, "p95": s[-1], "max": s[-1], "cv": 0.0}


def mount(fstype, source, point, net):
    return {"point": point, "fstype": fstype, "source": source, "network_fs": net}


def strategy(name, ranks, hosts, shard, secs):
    per = [{"rank": r, "host": hosts[r], "bytes": shard, "block_sec": secs[r], "write_gbps": shard / secs[r] / 1e9}
           for r in ranks]
    mx = max(secs[r] for r in ranks)
    slow = max(ranks, key=lambda r: secs[r])
    return {"strategy": name, "writers": len(ranks), "bytes": shard * len(ranks), "files": len(ranks),
            "block_sec": mx, "block_sec_stats": stats([secs[r] for r in ranks]),
            "agg_write_gbps": shard * len(ranks) / mx / 1e9, "per_rank": per,
            "slowest": {"rank": slow, "host": hosts[slow], "block_sec": mx}}


def doc(host, nranks, hosts, dmount, results, status="ok", reason=None):
    layout = [{"rank": r, "host": hosts[r], "pid": 1000 + r, "local_rank": r % 8, "node": 0, "shard_bytes":
               results["config"]["size_bytes"] // nranks, "dir_mount": dmount,
               "stage_mount": mount("tmpfs", "tmpfs", "/dev/shm", False), "buffer": "cuda_pinned"}
              for r in range(nranks)]
    return {"schema": "clusterhealth.result", "schema_version": 1, "tool": "checkpoint_io", "version": "0.1.0",
            "git_rev": "fixture", "start_utc": "2026-12-01T10:00:00Z", "end_utc": "2026-12-01T10:20:00Z",
            "status": status, "reason": reason, "exit_code": {"ok": 0, "failed": 1}[status],
            "host": {"hostname": host}, "software": {"zlib": "1.2.13"},
            "ranks": {"world_size": nranks, "nodes": len(set(hosts)), "layout": layout},
            "args": ["checkpoint_io", "fixture"], "env": {}, "results": results}


def config(size, interval):
    return {"dir": "/ckpt", "stage_dir": "/dev/shm/stage", "stage_dir_default": False, "size_bytes": size,
            "files_per_rank": 1, "block_bytes": 16 << 20, "interval_sec": interval, "timeout_sec": 600.0,
            "scaling": True, "load": "auto", "keep": False}


def verify(n, bad=()):
    return {"files_checked": n, "files_bad": len(bad), "method": "fixture",
            "bad": [{"rank": r, "op": "crc32 check", "error": "", "file": 0, "message": "fixture"} for r in bad]}


def textbook():
    n, size = 64, 112 * 10**9
    shard = size // n
    hosts = ["n%d" % (r // 8 + 1) for r in range(n)]
    secs = [320.0 + (r % 10) for r in range(n)]
    secs[37] = 330.0
    st = strategy("synchronous", range(n), hosts, shard, secs)
    staged = strategy("staged", range(n), hosts, shard, [30.0] * n)
    staged.update({"copy_sec": 900.0, "copy_bytes": size, "agg_copy_gbps": size / 900 / 1e9})
    pts = [{"writers": w, "bytes": shard * w, "block_sec": t, "agg_write_gbps": shard * w / t / 1e9}
           for w, t in ((1, 10.0), (16, 85.0), (32, 168.0), (64, 330.0))]
    res = {"config": config(size, 1800.0), "buffer": {"kind": "cuda_pinned", "why_not_pinned": "", "bytes_rank0": shard},
           "sync": st, "staged": staged, "scaling": {"strategy": "synchronous", "points": pts},
           "verify": {"sync": verify(n), "staged": verify(n)},
           "stall": {"interval_sec": 1800.0, "sync_frac": 330 / 1800, "staged_frac": 30 / 1800}}
    return doc("n1", n, hosts, mount("lustre", "10.0.0.1@o2ib:/scratch", "/lustre", True), res)


def fleet(host, gbps, bad=()):
    size = 10**9
    shard = size // 2
    hosts = [host, host]
    secs = [shard / (gbps * 1e9)] * 2
    st = strategy("synchronous", range(2), hosts, shard, secs)
    res = {"config": config(size, 60.0), "sync": st, "verify": {"sync": verify(2, bad)}}
    status = "failed" if bad else "ok"
    return doc(host, 2, hosts, mount("nfs4", "nas:/export", "/mnt/ckpt", True), res, status,
               "a checkpoint file did not read back as written: fixture" if bad else None)


def write(path, d):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(d, f, indent=2, sort_keys=True)
        f.write("\n")


write(os.path.join(HERE, "textbook.json"), textbook())
for h, g, b in (("c1", 1.0, ()), ("c2", 0.5, ()), ("c3", 0.25, ()), ("c4", 1.0, (1,))):
    write(os.path.join(HERE, "fleet", h + ".json"), fleet(h, g, b))
