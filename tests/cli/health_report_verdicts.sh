#!/bin/bash
# health_report_verdicts.sh - the verdicts on labelled inputs:
#   - the labelled fleets (tests/data/report/labelled-*, made by
#     make-labelled-fleet.py from real result files): exactly the faulty
#     nodes WARN or FAIL, each with its labelled reason code, and exactly the
#     labelled drain candidates (a hard fault or a confirmed FAIL); nothing
#     else is flagged, and every check of the healthy fleet was judged (the
#     recall of every rule on its labelled fault: docs/health_report.md,
#     "False alarms");
#   - the real nccl-tests logs (tests/data/nccl-tests-logs) under neutral
#     names: each collective identified from the content; the dip and the
#     collapse flagged with their sizes named; averages equal to each log's
#     own Avg line;
#   - logs derived from a real one: a reduce_scatter named like an
#     all-reduce, and a socket-transport plateau that FAILs both nodes with
#     an inter-node reason without any --expect file;
#   - no "(null)" in report.md or report.html, exact integers for sizes;
#   - a node's own earlier runs in the inputs judge its latest sweep.
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env
HR=$B/health_report
D=tests/data/report
TMP=$(mktemp -d /tmp/ch_hr_verdicts.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

if [ ! -x "$HR" ]; then
	echo "skip health_report_verdicts: $HR is not built"
	exit 0
fi

for fleet in labelled-healthy labelled-faulty; do
	"$HR" --out "$TMP/$fleet" "$D/$fleet" >"$TMP/$fleet.txt" 2>&1
	rc=$?
	msg=$(python3 - "$TMP/$fleet/profile.json" "$D/$fleet.labels.json" "$rc" <<'PY'
import json, re, sys
p = json.load(open(sys.argv[1]))
labels = json.load(open(sys.argv[2]))
rc = int(sys.argv[3])
errs = []
nodes = {n["name"]: n for n in p["nodes"]}
if sorted(nodes) != sorted(labels):
    errs.append("nodes %s, labelled %s" % (sorted(nodes), sorted(labels)))
for name, (verdict, code, drain) in labels.items():
    n = nodes.get(name)
    if not n:
        continue
    if n["drain_candidate"] != drain or (name in p["summary"]["drain_candidates"]) != drain:
        errs.append("%s: drain candidate %s, labelled %s" % (name, n["drain_candidate"], drain))
    if not re.fullmatch(verdict, n["verdict"]):
        errs.append("%s: %s, labelled %s" % (name, n["verdict"], verdict))
    flagged = [r for r in n["reasons"] if r["level"] != "info"]
    codes = sorted({r["code"] for r in flagged})
    if code is None and codes:
        errs.append("%s: flagged %s, labelled healthy" % (name, codes))
    if code is not None and codes != [code]:
        errs.append("%s: reasons %s, labelled %s" % (name, codes, code))
    if n["checks_not_judged"] != 0:
        errs.append("%s: %d checks not judged" % (name, n["checks_not_judged"]))
    for k in ("memory", "compute", "intra_node_busbw", "inter_node_busbw"):
        h = n["headline"][k]
        if not h or not h["judged"] or not h["judged_against"].startswith("expected"):
            errs.append("%s: headline %s %s" % (name, k, h))
want_rc = 1 if any(v[0] != "PASS" for v in labels.values()) else 0
if rc != want_rc:
    errs.append("exit %d, want %d" % (rc, want_rc))
if p["findings"]:
    errs.append("fleet findings %s" % [f["code"] for f in p["findings"]])
print("; ".join(errs) if errs else "OK")
PY
)
	[ "$msg" = OK ] && echo "ok health_report_${fleet//-/_}_verdicts_exact" ||
		echo "not ok health_report_${fleet//-/_}_verdicts_exact: $msg"
done
# the terminal names what each node's figures were judged against
if grep -q "intra-node 219 GB/s (world; expected 370 GB/s (8 x H100 SXM reference)" "$TMP/labelled-faulty.txt" &&
   grep -q "inter-node 178 GB/s (pair3-4; expected 368 GB/s (NICs recorded)" "$TMP/labelled-faulty.txt" &&
   grep -q "^health_report: 10 nodes: 6 FAIL, 1 WARN, 3 PASS, 0 not judged; checks: 680 judged, 0 not judged (0 noisy)" "$TMP/labelled-faulty.txt" &&
   grep -q "^drain candidates: node04 node06$" "$TMP/labelled-faulty.txt"; then
	echo "ok health_report_terminal_headline_figures"
else
	echo "not ok health_report_terminal_headline_figures"; head -8 "$TMP/labelled-faulty.txt" | sed 's/^/    /'
fi

# real logs under neutral names
mkdir -p "$TMP/neutral"
i=0
for f in tests/data/nccl-tests-logs/*.txt; do
	i=$((i + 1))
	cp "$f" "$TMP/neutral/log$i.txt"
	echo "log$i.txt $(basename "$f")" >>"$TMP/neutral.map"
done
cp $D/nccl-derived/allreduce_night.txt "$TMP/neutral/allreduce_night.txt"
echo "allreduce_night.txt allreduce_night.txt" >>"$TMP/neutral.map"
"$HR" --out "$TMP/nt" "$TMP/neutral" >"$TMP/nt.txt" 2>&1
rc=$?
msg=$(python3 - "$TMP/nt/profile.json" "$TMP/neutral.map" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
orig = dict(l.split() for l in open(sys.argv[2]))
want = {"01": "all_reduce", "03": "all_reduce", "05": "all_reduce", "06": "all_reduce",
        "08": "all_gather", "10": "all_reduce", "11": "all_reduce", "12": "unknown",
        "14": "all_reduce", "15": "unknown", "allreduce_night.txt": "reduce_scatter"}
errs = []
seen = 0
for g in p["groups"]:
    o = orig[g["name"]]
    w = want.get(o[:2], want.get(o))
    seen += 1
    if g["collective"] != w:
        errs.append("%s (%s): %s, want %s (%s)" % (g["name"], o, g["collective"], w, g["collective_from"]))
    if "file name" in (g["collective_from"] or "") and "cannot tell" not in g["collective_from"] and o[:2] not in ("12", "15"):
        errs.append("%s: from the file name: %s" % (o, g["collective_from"]))
    if g["reported_avg_busbw_gbps"] is not None and abs(g["avg_busbw_gbps"] - g["reported_avg_busbw_gbps"]) > 0.0055:
        errs.append("%s: avg %.4f vs the log's %.4f" % (o, g["avg_busbw_gbps"], g["reported_avg_busbw_gbps"]))
    for r in g["rows"]:
        if not isinstance(r["bytes"], int):
            errs.append("%s: bytes %r not an integer" % (o, r["bytes"]))
            break
if seen != len(want):
    errs.append("%d groups" % seen)
print("; ".join(errs) if errs else "OK")
PY
)
[ "$msg" = OK ] && echo "ok health_report_collective_from_content" || echo "not ok health_report_collective_from_content: $msg"
# the old-format note is true for its rows
if grep -q "algbw is printed equal to busbw for all_gather; the printed busbw is size/time x (n-1)/n (0.917 measured for 12 ranks), today's busbw" "$TMP/nt.txt"; then
	echo "ok health_report_old_format_note"
else
	echo "not ok health_report_old_format_note"
fi
# the dip of log 03 and the collapse of log 10, sizes named
n03=$(awk '$2 ~ /^03_/ {print $1}' "$TMP/neutral.map")
n10=$(awk '$2 ~ /^10_/ {print $1}' "$TMP/neutral.map")
if grep -q "$n03 (all_reduce default, 32 ranks): busbw dip at 2M out-of-place 21.24 GB/s (neighbours 24.73 and 53.77)" "$TMP/nt.txt" &&
   grep -q "$n10 (all_reduce default, 2 ranks): mid-range collapse: out-of-place busbw flat or falling from 64K (1.43 GB/s) to 512K (1.39 GB/s)" "$TMP/nt.txt" &&
   grep -q "$n10 (all_reduce default, 2 ranks): out-of-place and in-place busbw differ at 256K out-of-place 1.07, in-place 0.47 GB/s" "$TMP/nt.txt"; then
	echo "ok health_report_curve_shape_sizes_named"
else
	echo "not ok health_report_curve_shape_sizes_named"
fi
# a node a curve-shape rule flags was judged: its checks count the curve
# (the real VM sweep at 100x the busbw, one mid size at 0.3x: no expectation
# and no like nodes judge it, the curve rules do)
python3 - $D/real-vm/allreduce_bw.json "$TMP/curve.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for s in d["results"]["sweeps"]:
    rows = s["rows"]
    for r in rows:
        for side in ("out_of_place", "in_place"):
            for k in ("busbw_gbps", "algbw_gbps"):
                r[side][k] *= 100
            r[side]["time_us"]["cv"] = 0.02  # an idle node's spread (the VM's is noisy)
    big = [i for i, r in enumerate(rows) if r["bytes"] >= 65536]
    if len(big) >= 3:
        for side in ("out_of_place", "in_place"):
            rows[big[len(big) // 2]][side]["busbw_gbps"] *= 0.3
json.dump(d, open(sys.argv[2], "w"))
PY
"$HR" --out "$TMP/curveout" "$TMP/curve.json" >/dev/null 2>&1
if python3 - "$TMP/curveout/profile.json" <<'PY'
import json, sys
n = {x["name"]: x for x in json.load(open(sys.argv[1]))["nodes"]}["node0"]
sys.exit(0 if n["verdict"] == "WARN" and n["checks_judged"] >= 1 and
         any(r["code"].startswith("curve_") for r in n["reasons"]) else 1)
PY
then
	echo "ok health_report_curve_shape_counts_as_judged"
else
	echo "not ok health_report_curve_shape_counts_as_judged"
fi
# healthy real curves are not flagged for their shape
n01=$(awk '$2 ~ /^01_/ {print $1}' "$TMP/neutral.map")
n06=$(awk '$2 ~ /^06_/ {print $1}' "$TMP/neutral.map")
n14=$(awk '$2 ~ /^14_/ {print $1}' "$TMP/neutral.map")
if grep -E "^ +warn ($n01|$n06|$n14) .*(dip|collapse|differ at)" "$TMP/nt.txt" >/dev/null; then
	echo "not ok health_report_curve_shape_healthy_logs_clean"
else
	echo "ok health_report_curve_shape_healthy_logs_clean"
fi
if [ $rc = 1 ] && ! grep -q "(null)" "$TMP/nt/report.md" "$TMP/nt/report.html"; then
	echo "ok health_report_no_null_level"
else
	echo "not ok health_report_no_null_level: exit $rc"
fi

# a socket-transport plateau across 2 x 8 H100, no --expect and no NIC
# inventory: judged against an assumed reference only, so both nodes WARN
# (never FAIL or drained on an assumption) and are asked for the inventory
"$HR" --out "$TMP/sock" $D/nccl-derived/sockets_2node.txt >"$TMP/sock.txt" 2>&1
rc=$?
if [ $rc = 0 ] && grep -q "^WARN  node01 .*inter-node busbw 65.2 GB/s .*18% of the expected 368 GB/s (assumed cluster reference; .*an assumed reference alone: at most WARN" "$TMP/sock.txt" &&
   grep -q "^WARN  node02 .*inter-node busbw 65.2 GB/s" "$TMP/sock.txt" && grep -q "action: record the NIC inventory .*NCCL_IB_HCA" "$TMP/sock.txt" &&
   ! grep -q "drain candidates" "$TMP/sock.txt"; then
	echo "ok health_report_inter_node_plateau_assumed_warns"
else
	echo "not ok health_report_inter_node_plateau_assumed_warns: exit $rc"; head -6 "$TMP/sock.txt" | sed 's/^/    /'
fi
# the same plateau against a given inter-node figure: FAIL on both nodes
cat >"$TMP/inter.json" <<'EOF'
{"schema": "clusterhealth.expectations", "schema_version": 1,
 "skus": {"H100 SXM": {"inter_node_busbw_gbps": 360, "source": "our acceptance run"}}}
EOF
"$HR" --expect "$TMP/inter.json" --out "$TMP/sock2" $D/nccl-derived/sockets_2node.txt >"$TMP/sock2.txt" 2>&1
rc=$?
if [ $rc = 1 ] && grep -q "^FAIL  node01 .*inter-node busbw 65.2 GB/s .*18% of the expected 360 GB/s (given;" "$TMP/sock2.txt" &&
   grep -q "^FAIL  node02 " "$TMP/sock2.txt"; then
	echo "ok health_report_inter_node_plateau_given_fails"
else
	echo "not ok health_report_inter_node_plateau_given_fails: exit $rc"; head -6 "$TMP/sock2.txt" | sed 's/^/    /'
fi

# nothing judged: said so, never PASS
"$HR" --out "$TMP/one" tests/data/nccl-tests-logs/08_v100_dgx2_12gpu_allgather_oldfmt_oob_failed.txt $D/real-vm >"$TMP/one.txt" 2>&1
if grep -q "^NOT JUDGED  vm " "$TMP/one.txt" && grep -q "1 not judged;" "$TMP/one.txt" &&
   grep -q "^PASS  node0  .*no fabric check of this node could be judged (6 groups): not judged: noisy measurement (CV 0.83 at 2M); re-run on an idle node" "$TMP/one.txt"; then
	echo "ok health_report_not_judged_said"
else
	echo "not ok health_report_not_judged_said"; head -8 "$TMP/one.txt" | sed 's/^/    /'
fi
# nights SRC DST KEYS F1 F2 ...: one night per factor of result file SRC
# under DST/nightN/ (start 2026-11-01 + N - 1), the numbers at the
# comma-separated KEYS times FN on night N; every per-call CV an idle
# node's, 0.02 (the real VM's are noisy: not judged)
nights() {
	python3 - "$@" <<'PY'
import json, os, sys
src, dst, keys = sys.argv[1], sys.argv[2], sys.argv[3].split(",")
def scale(o, f):
    if isinstance(o, dict):
        return {k: (v * f if k in keys and isinstance(v, (int, float)) else
                    0.02 if k == "cv" and isinstance(v, (int, float)) else scale(v, f)) for k, v in o.items()}
    if isinstance(o, list):
        return [scale(v, f) for v in o]
    return o
d = json.load(open(src))
for night, f in enumerate(map(float, sys.argv[4:]), 1):
    x = scale(d, f)
    x["start_utc"] = "2026-11-%02dT02:00:00Z" % night
    x["end_utc"] = "2026-11-%02dT02:05:00Z" % night
    os.makedirs("%s/night%d" % (dst, night), exist_ok=True)
    json.dump(x, open("%s/night%d/%s" % (dst, night, os.path.basename(src)), "w"))
PY
}
# 14 steady nights (1% apart)
STEADY="1 1.01 0.99 1 1.02 0.98 1 1.01 0.99 1 1.02 0.98 1 1"
# the node's own history in the inputs: 14 nights of the real VM sweep,
# then one at half the busbw (host memory: no reference to judge it by):
# regressed once, WARN, re-run; with a second such night: REGRESSED, FAIL
# (confirmed by its persistence), a drain candidate
ARKEYS=busbw_gbps,algbw_gbps,large_msg_busbw_gbps,avg_busbw_gbps
nights $D/real-vm/allreduce_bw.json "$TMP/hist1" $ARKEYS $STEADY 0.5
nights $D/real-vm/allreduce_bw.json "$TMP/hist2" $ARKEYS $STEADY 0.5 0.5
"$HR" --out "$TMP/histout1" "$TMP/hist1" >"$TMP/hist1.txt" 2>&1
rc1=$?
"$HR" --out "$TMP/histout2" "$TMP/hist2" >"$TMP/hist2.txt" 2>&1
rc2=$?
if [ $rc1 = 0 ] && grep -q "^  warn intra-node busbw 0.0679 GB/s (all_reduce ring, 2 ranks, node0) regressed once; re-run: 50% below its own history in the inputs, median 0.136 GB/s of 14 earlier sweeps" "$TMP/hist1.txt" &&
   ! grep -q "night([1-9]|1[0-4])/allreduce_bw.json.*below its own history" "$TMP/histout1/profile.json" &&
   [ $rc2 = 1 ] && grep -q "^  fail intra-node busbw 0.0679 GB/s (all_reduce ring, 2 ranks, node0) is 50% below its own history in the inputs on 2 runs in a row: median 0.136 GB/s of 14 earlier sweeps (regressed since 2026-11-15" "$TMP/hist2.txt" &&
   grep -q "^drain candidates: .*node0" "$TMP/hist2.txt"; then
	echo "ok health_report_own_history"
else
	echo "not ok health_report_own_history ($rc1, $rc2)"; grep -i "history" "$TMP/hist1.txt" "$TMP/hist2.txt" | head -5 | sed 's/^/    /'
fi
# four nights, the last at half: 3 earlier nights cannot tell a regression
# from their own spread (the cut-off of so few nights is wide): not flagged
nights $D/real-vm/allreduce_bw.json "$TMP/hist" $ARKEYS 1 1 1 0.5
"$HR" --out "$TMP/histout" "$TMP/hist" >"$TMP/hist.txt" 2>&1
if [ $? = 0 ] && ! grep -q "below its own history" "$TMP/hist.txt"; then
	echo "ok health_report_own_history_short_not_flagged"
else
	echo "not ok health_report_own_history_short_not_flagged"; grep -i "history" "$TMP/hist.txt" | head -3 | sed 's/^/    /'
fi
# one history value per earlier night, also where a world and a pair group
# of one sweep cover the same two nodes
if python3 - "$TMP/histout/profile.json" <<'PY'
import json, sys
gs = [g["comparison"] for g in json.load(open(sys.argv[1]))["groups"]
      if g.get("comparison") and g["comparison"]["superseded_by"] is None]
sys.exit(0 if gs and all(c["history_n"] == 3 for c in gs) else 1)
PY
then
	echo "ok health_report_history_one_value_per_night"
else
	echo "not ok health_report_history_one_value_per_night"
fi
# report.md marks the superseded sweeps
if grep -q "| not judged (earlier run) |" "$TMP/histout/report.md"; then
	echo "ok health_report_md_group_earlier_run"
else
	echo "not ok health_report_md_group_earlier_run"
fi
# a compute roof set by the FMA ladder (no GEMM of that dtype) runs on the
# CUDA cores: judged against the datasheet's CUDA-core row (H100 SXM fp64:
# 34 TFLOP/s, the "FP64" row, not the 67 of "FP64 Tensor Core") x 0.80, and
# compared only with other ladder roofs
python3 - $D/fleet-healthy "$TMP/ladder" <<'PY'
import json, os, shutil, sys
src, dst = sys.argv[1], sys.argv[2]
shutil.copytree(src, dst)
for node in sorted(os.listdir(dst)):
    f = os.path.join(dst, node, "roofline.json")
    if not os.path.exists(f):
        continue
    d = json.load(open(f))
    for dv in d["results"]["devices"]:
        if dv.get("kind") != "gpu" and not dv["device"].startswith("gpu"):
            continue
        v = 18000.0 if (node, dv["device"]) == ("node02", "gpu3") else 30000.0
        pts = [p for p in dv["points"] if not (p["dtype"] == "fp64" and p["family"] == "gemm")]
        for p in pts:
            if p["dtype"] == "fp64" and p["kernel"] == "ladder_k256":
                p["gflops"] = v
        dv["points"] = pts
        dv["roofs"]["compute_gflops"]["fp64"] = v
        dv["roofs"].setdefault("compute_kernel", {})["fp64"] = "ladder_k256"
    json.dump(d, open(f, "w"))
PY
"$HR" --detail all --out "$TMP/ladderout" "$TMP/ladder" >"$TMP/ladder.txt" 2>&1
msg=$(python3 - "$TMP/ladderout/profile.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
errs = []
seen = 0
for n in p["nodes"]:
    for dv in n["devices"]:
        if not dv["device"].startswith("gpu"):
            continue
        for m in dv["metrics"]:
            if m["metric"] != "compute_gflops.fp64":
                continue
            seen += 1
            bad = (n["name"], dv["device"]) == ("node02", "gpu3")
            want = ("fail" if bad else "info", 34000.0, 27200.0)
            got = (m["level"], m["datasheet"], m["expected"])
            if got != want or "CUDA cores" not in m["expectation_basis"] or m["fleet_n"] != 48:
                errs.append("%s %s: %s basis %r fleet_n %s" % (n["name"], dv["device"], got,
                            m["expectation_basis"][:60], m["fleet_n"]))
if seen != 48:
    errs.append("%d fp64 GPU roofs, want 48" % seen)
print("; ".join(errs[:4]) or "OK")
PY
)
[ "$msg" = OK ] && echo "ok health_report_ladder_roof_cuda_core_figure" ||
	echo "not ok health_report_ladder_roof_cuda_core_figure: $msg"
# a device's own history in the inputs: 14 nights of the real VM roofline,
# then one with the memory roof at 0.7x: the reason names its own history
nights $D/real-vm/roofline.json "$TMP/devhist" memory_gbps,gbps $STEADY 0.7
"$HR" --out "$TMP/devhistout" "$TMP/devhist" >"$TMP/devhist.txt" 2>&1
if grep -q "cpu memory roof 17.0 GB/s: regressed once; re-run: 30% below its own history in the inputs (median 24.2 GB/s of 14 earlier runs; beyond their own spread)" "$TMP/devhist.txt" &&
   python3 - "$TMP/devhistout/profile.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
ms = {(d["source"].split("/")[-2], m["metric"]): m for n in p["nodes"] for d in n["devices"] for m in d["metrics"]}
assert ms[("night15", "memory_gbps")]["history_n"] == 14, ms[("night15", "memory_gbps")]
assert ms[("night15", "memory_gbps")]["level"] == "warn", ms[("night15", "memory_gbps")]
assert all(ms[("night%d" % k, "memory_gbps")]["history_n"] == 0 for k in range(1, 15))
PY
then
	echo "ok health_report_device_own_history"
else
	echo "not ok health_report_device_own_history"; grep -i "memory roof" "$TMP/devhist.txt" | head -3 | sed 's/^/    /'
fi
# an earlier run is history, not a verdict: night 1 at half the memory
# roof, nights 2-4 healthy: the node PASSes on its latest run; night 1's
# value is marked superseded (not judged) and kept out of the fleet
nights $D/real-vm/roofline.json "$TMP/fixed" memory_gbps,gbps 0.5 1 1 1
"$HR" --detail all --out "$TMP/fixedout" "$TMP/fixed" >"$TMP/fixed.txt" 2>&1
rc=$?
if [ $rc = 0 ] && grep -q "^PASS  vm" "$TMP/fixed.txt" && python3 - "$TMP/fixedout/profile.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
n = p["nodes"][0]
ms = {(d["source"].split("/")[-2], m["metric"]): m for d in n["devices"] for m in d["metrics"]}
old, new = ms[("night1", "memory_gbps")], ms[("night4", "memory_gbps")]
assert old["superseded_by"].endswith("night4/roofline.json") and old["judged"] is False, old
assert "an earlier run" in old["not_judged_reason"] and old["level"] == "info", old
assert new["superseded_by"] is None and new["judged"] is True and new["history_n"] == 3, new
assert new["fleet_n"] == 1, new
assert n["checks_judged"] + n["checks_not_judged"] == sum(1 for k in ms if k[0] == "night4"), n
PY
then
	echo "ok health_report_earlier_run_is_history"
else
	echo "not ok health_report_earlier_run_is_history: exit $rc"; head -6 "$TMP/fixed.txt" | sed 's/^/    /'
fi
# a straggler of an earlier sweep is history too: night 1 names rank 1 of
# node0 as a straggler, nights 2-4 none: no straggler reason; the same
# straggler on night 4 is one
nights $D/real-vm/allreduce_bw.json "$TMP/strag" none 1 1 1 1
cp -r "$TMP/strag" "$TMP/strag4"
python3 - "$TMP/strag/night1/allreduce_bw.json" "$TMP/strag4/night4/allreduce_bw.json" <<'PY'
import json, sys
for f in sys.argv[1:]:
    d = json.load(open(f))
    d["results"]["stragglers"] = [{"rank": 1, "host": "node0", "node": "node0", "rows": 12, "slowest_rows": 11,
                                   "slowest_fraction": 11 / 12, "excess_pct": 35.0}]
    json.dump(d, open(f, "w"))
PY
"$HR" --out "$TMP/stragout" "$TMP/strag" >"$TMP/strag.txt" 2>&1
"$HR" --out "$TMP/strag4out" "$TMP/strag4" >"$TMP/strag4.txt" 2>&1
if ! grep -q "is a straggler" "$TMP/strag.txt" && grep -q "rank 1 is a straggler" "$TMP/strag4.txt"; then
	echo "ok health_report_earlier_straggler_is_history"
else
	echo "not ok health_report_earlier_straggler_is_history"; grep -h straggler "$TMP/strag.txt" "$TMP/strag4.txt" | head -3 | sed 's/^/    /'
fi
# two runs of a device stamped with the same start_utc: exactly one is the
# latest (the later file name), the other its history; the device is not
# compared with itself as a fleet of two
python3 - $D/real-vm/roofline.json "$TMP/same" <<'PY'
import json, os, sys
d = json.load(open(sys.argv[1]))
for name in ("a", "b"):
    d["start_utc"], d["end_utc"] = "2026-11-21T02:00:00Z", "2026-11-21T02:05:00Z"
    os.makedirs("%s/%s" % (sys.argv[2], name), exist_ok=True)
    json.dump(d, open("%s/%s/roofline.json" % (sys.argv[2], name), "w"))
PY
"$HR" --out "$TMP/sameout" "$TMP/same" >"$TMP/same.txt" 2>&1
rc=$?
if [ $rc = 0 ] && python3 - "$TMP/sameout/profile.json" <<'PY'
import json, sys
n = json.load(open(sys.argv[1]))["nodes"][0]
ms = [(d["source"].split("/")[-2], m) for d in n["devices"] for m in d["metrics"]]
assert ms and all(m["superseded_by"].endswith("b/roofline.json") and m["judged"] is False for k, m in ms if k == "a"), ms
assert all(m["superseded_by"] is None for k, m in ms if k == "b"), ms
assert n["checks_judged"] + n["checks_not_judged"] == sum(1 for k, m in ms if k == "b"), n
PY
then
	echo "ok health_report_same_start_one_latest"
else
	echo "not ok health_report_same_start_one_latest: exit $rc"; head -3 "$TMP/same.txt" | sed 's/^/    /'
fi
exit 0
