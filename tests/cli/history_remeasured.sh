#!/bin/bash
# history_remeasured.sh - what `health_report history` records for a figure
# its tool measured twice (docs/workflows.md, "What is recorded"): the mean
# of the value and its re-measurement as the night's value (a lasting drop,
# which both see, in full), and the larger of the two as value_both (a night
# is judged far only when both measurements are low). One noise-free night
# of make-nights.py, edited:
#   n001: gpu0's bf16 roof 30% low, roofline's re-measurement
#         (results.flagged[].confirm_value) at the healthy value: the mean,
#         value_both the healthy value;
#   n002: the same without a usable confirm_value (null): the value, no
#         value_both (measured once);
#   n003: the node's all-reduce busbw at the largest size 20% low, the
#         cell's "confirm" (allreduce_bw measures the largest size again) at
#         the healthy value: the mean, value_both the healthy value;
#   n004: the same with a re-measurement of 0 GB/s: the value, no value_both;
#   the CPU socket (roofline measures its roof points again every run:
#   devices[].roofs_again): n001's memory roof 30% low, its roofs_again at
#   the healthy value: the mean, value_both the healthy value; n002's
#   roofs_again without memory_gbps, n003's a string, n004's 0: the value,
#   no value_both;
#   the checkpoint rate: n001's 20% low on both ranks, a second write
#         (checkpoint_io --repeat 2: results.sync.again[0]) at the healthy
#         rate on one rank and 10% low on the other: the mean of the first
#         write's median over ranks and the second's, value_both the larger;
#   n002: the same with the second write 0 GB/s: the value, no value_both;
#   n003: the same without results.sync.again (written once): likewise;
#   every other figure as it was measured (GPU roofs not flagged: no
#   value_both).
# Prints "ok NAME", "not ok NAME: why" or "skip NAME: why".
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env
HR=$B/health_report
TMP=$(mktemp -d /tmp/ch_hist_remeasured.XXXXXX)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$TMP"' EXIT
if [ ! -x "$HR" ]; then
	echo "skip history_remeasured: $HR is not built"
	exit 0
fi
python3 tests/data/report/make-nights.py "$TMP/n" --nodes 4 --nights 1 --sigma 0 --device-sd 0 --node-sd 0 \
	--one-night || { echo "not ok history_remeasured: make-nights.py failed"; exit 0; }
python3 - "$TMP/n" >"$TMP/want.json" <<'PY'
import json, os, sys
d = sys.argv[1]
want = {}
def edit(path, f):
    j = json.load(open(path))
    f(j)
    json.dump(j, open(path, "w"))
def roof(node, again):
    def f(j):
        dev = [x for x in j["results"]["devices"] if x["device"] == "gpu0"][0]
        v = dev["roofs"]["compute_gflops"]["bf16"]
        dev["roofs"]["compute_gflops"]["bf16"] = 0.7 * v
        j["results"]["flagged"] = [{"device": "gpu0", "metric": "compute_gflops.bf16", "value": 0.7 * v,
                                    "node_median": v, "pct_below": 30.0, "confirmed": again is not None,
                                    "confirm_value": again if again is None else v}]
        want[node + " gpu0 roofline.compute_gflops.bf16"] = [0.85 * v, v] if again is not None else [0.7 * v, None]
    edit(os.path.join(d, node, "roofline.json"), f)
def busbw(node, again):
    def f(j):
        sw = j["results"]["sweeps"][0]
        last = sw["rows"][-1]["out_of_place"]
        v = last["busbw_gbps"]
        last["busbw_gbps"] = sw["large_msg_busbw_gbps"] = 0.8 * v
        last["confirm"]["busbw_gbps"] = v if again else 0
        want[node + " - allreduce.intra.ring.busbw_gbps"] = [0.9 * v, v] if again else [0.8 * v, None]
    edit(os.path.join(d, node, "allreduce_bw.json"), f)
def cpu(node, again):
    def f(j):
        dev = [x for x in j["results"]["devices"] if x["device"] == "cpu"][0]
        v = dev["roofs"]["memory_gbps"]
        dev["roofs"]["memory_gbps"] = 0.7 * v
        if again == "healthy":
            dev["roofs_again"]["memory_gbps"] = v
        elif again == "absent":
            del dev["roofs_again"]["memory_gbps"]
        else:
            dev["roofs_again"]["memory_gbps"] = again
        want[node + " cpu roofline.memory_gbps"] = [0.85 * v, v] if again == "healthy" else [0.7 * v, None]
    edit(os.path.join(d, node, "roofline.json"), f)
cpu("n001", "healthy")
cpu("n002", "absent")
cpu("n003", "x")
cpu("n004", 0)
def ckpt(node, again):
    def f(j):
        s = j["results"]["sync"]
        v = s["per_rank"][0]["write_gbps"]
        for p in s["per_rank"]:
            p["write_gbps"] = 0.8 * v
        if again is not None:
            s["again"] = [{"write": 2, "per_rank": [dict(p, write_gbps=x) for p, x in
                                                   zip(s["per_rank"], (v * again, 0.9 * v * again))]}]
        else:
            s.pop("again", None)
        want[node + " - checkpoint.write_gbps_per_rank"] = [0.5 * (0.8 * v + 0.95 * v), 0.95 * v] if again \
            else [0.8 * v, None]
    edit(os.path.join(d, node, "checkpoint_io.json"), f)
ckpt("n001", 1.0)
ckpt("n002", 0.0)
ckpt("n003", None)
roof("n001", True)
roof("n002", None)
busbw("n003", True)
busbw("n004", False)
print(json.dumps(want))
PY
"$HR" history --db "$TMP/h.sqlite" --night 2026-12-01 "$TMP/n" >"$TMP/out" 2>&1
rc=$?
got=$(python3 - "$TMP/h.sqlite" "$TMP/want.json" 2>&1 <<'PY'
import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
want = json.load(open(sys.argv[2]))
bad = []
for key, (v, both) in want.items():
    node, gpu, metric = key.split(" ")
    r = db.execute("SELECT value, value_both FROM metrics WHERE node = ? AND gpu = ? AND metric = ?",
                   (node, gpu, metric)).fetchall()
    if len(r) != 1 or abs(r[0][0] - v) > 1e-6 * v or (both is None) != (r[0][1] is None) or \
            (both is not None and abs(r[0][1] - both) > 1e-6 * both):
        bad.append("%s: %s (want %g, %s)" % (key, r, v, both))
# every other figure as measured: the GPUs' other roofs of n001 and n003's pair median
other = db.execute("SELECT value, value_both FROM metrics WHERE node = 'n001' AND gpu = 'gpu1' AND metric = 'roofline.compute_gflops.bf16'").fetchall()
if len(other) != 1 or abs(other[0][0] - 790000) > 1 or other[0][1] is not None:
    bad.append("n001 gpu1 bf16: %s (want 790000)" % other)
print("; ".join(bad))
PY
)
if [ "$rc" = 0 ] && [ -z "$got" ]; then
	echo "ok history_remeasured_mean_and_larger_of_both"
else
	echo "not ok history_remeasured_mean_and_larger_of_both: exit $rc; $got"
	sed 's/^/    /' "$TMP/out" | tail -10
fi
exit 0
