#!/bin/bash
# health_report_precision.sh - the rules that keep verdicts from crying wolf,
# each on a constructed input that shows it (docs/health_report.md,
# "Measurement quality", "Curve shape", "False alarms"):
#   - curve shape on the median per-call time: a dip that the sweep's own
#     re-measurement confirms is named (WARN), one it does not is "did not
#     reproduce" (info), one without a re-measurement is WARN "not
#     confirmed"; a dip on a noisy cell and a sweep on a busy host are not
#     judged (noisy); rows of size 0 are dropped first; a collapse at 0.3
#     GB/s is named (no absolute floor); a regular alternation is named as
#     such, not as dips; one slow call (loop time) is not a dip when the
#     median period is level;
#   - a GPU below its node's other GPUs: confirmed by roofline (FAIL, a drain
#     candidate), not reproduced (info), not re-measured (WARN at most);
#   - a noisy roof is "not judged: noisy measurement (CV ... at ...)", counted;
#   - a wrong-typed conditions value is listed under input problems, not used.
# Prints "ok NAME", "not ok NAME: why" or "skip NAME: why".
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env
HR=$B/health_report
TMP=$(mktemp -d /tmp/ch_hr_precision.XXXXXX)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$TMP"' EXIT
if [ ! -x "$HR" ]; then
	echo "skip health_report_precision: $HR is not built"
	exit 0
fi

# ---- curves: one node, one allreduce_bw sweep of 2 ranks, 0 B and 8 B to 64 MiB x4
python3 - "$TMP" <<'PY'
import copy, json, os, sys
out = sys.argv[1]
IDLE = {"loadavg_1m": 0.2, "cpu_pressure_some_avg10_pct": 0.4, "cpu_busy_pct": 1.0}
BUSY = {"loadavg_1m": 6.0, "cpu_pressure_some_avg10_pct": 84.0, "cpu_busy_pct": 70.0}
def stats(t, cv):
    return {"n": 20, "min": t * 0.98, "median": t, "mean": t, "p95": t * 1.02, "max": t * 1.05, "cv": cv}
def cell(size, bus, cv=0.01, loop=None):
    t = size / (bus * 1e3) if bus > 0 else 5.0  # factor 1 for 2 ranks: algbw = busbw
    return {"loop_time_us": loop if loop else t, "time_us": stats(t, cv), "algbw_gbps": bus,
            "busbw_gbps": size / ((loop if loop else t) * 1e3) if bus > 0 else 0.0, "wrong": 0}
def curve(s):  # latency 5 us, 20 GB/s plateau
    return s / (5e-6 * 1e9 + s / 20.0)
SIZES = [8 * 4 ** k for k in range(13)]  # 8 B .. 128 MiB
def doc(cells, cond=IDLE):
    rows = [{"bytes": s, "count": s // 4, "dtype": "float", "redop": "sum", "root": -1, "iterations": 20,
             "busbw_factor": 1.0, "out_of_place": o, "in_place": i} for s, (o, i) in cells]
    return {"schema": "clusterhealth.result", "schema_version": 1, "tool": "allreduce_bw", "version": "0.1.0",
            "git_rev": "fixture", "start_utc": "2026-12-01T03:00:00Z", "end_utc": "2026-12-01T03:01:00Z",
            "status": "ok", "reason": None, "exit_code": 0, "host": {"hostname": "c1"},
            "conditions": {"before": cond, "after": cond, "online_cpus": 64, "procs_on_host": 2,
                           "threads_per_proc": 1, "per_core": 2 / 64.0, "reasons": {}},
            "ranks": {"world_size": 2, "layout": [{"rank": r, "host": "c1"} for r in range(2)]},
            "results": {"backend": "nccl", "wrong_total": 0, "stragglers": [], "sweeps": [
                {"group_kind": "node", "group_name": "node0", "nodes": ["c1"], "ranks": [0, 1], "nranks": 2,
                 "algo": "ring", "rows": rows, "large_msg_busbw_gbps": rows[-1]["out_of_place"]["busbw_gbps"]}]}}
def healthy():
    return [(s, [cell(s, curve(s)), cell(s, curve(s))]) for s in SIZES]
def write(name, d):
    json.dump(d, open(os.path.join(out, name + ".json"), "w"))
D = 8  # the dip's size index: 512 KiB, between 128 KiB and 2 MiB
def dipped(confirm_bw=None, cv=0.01):
    c = healthy()
    s = SIZES[D]
    c[D][1][0] = cell(s, 0.5 * curve(s), cv)
    if confirm_bw is not None:
        t = s / (confirm_bw * 1e3)
        c[D][1][0]["confirm"] = {"why": "dip", "loop_time_us": t, "time_us": stats(t, 0.01),
                                 "algbw_gbps": confirm_bw, "busbw_gbps": confirm_bw, "wrong": 0}
    return [(s, list(x)) for s, x in c]
write("dip_confirmed", doc(dipped(0.5 * curve(SIZES[D]))))
write("dip_not_reproduced", doc(dipped(curve(SIZES[D]))))
write("dip_unconfirmed", doc(dipped()))
m = doc(dipped())  # the same from allreduce_bw's mpi backend
m["results"]["backend"] = "mpi"
write("dip_mpi", m)
write("dip_noisy", doc(dipped(None, 0.6)))
write("dip_busy", doc(dipped(), BUSY))
z = doc(dipped())  # rows of size 0 before the sweep
z["results"]["sweeps"][0]["rows"].insert(0, dict(z["results"]["sweeps"][0]["rows"][0], bytes=0, count=0))
write("dip_size0", z)
# one slow call: the loop time doubled, the median period level
c = healthy()
s = SIZES[D]
c[D][1][0] = cell(s, curve(s), 0.08, loop=2 * s / (curve(s) * 1e3))
write("slow_call", doc(c))
# a collapse: from 32 KiB to 2 MiB busbw flat at 0.3 GB/s, plateau 20 GB/s
c = healthy()
for k, s in enumerate(SIZES):
    if 32768 <= s <= 2 * 1024 * 1024:
        c[k] = (s, [cell(s, 0.3), cell(s, 0.3)])
write("collapse", doc(c))
# a regular alternation from 128 KiB up: every other size at 60%
c = healthy()
for k, s in enumerate(SIZES):
    if s >= 131072 and k % 2:
        c[k] = (s, [cell(s, 0.6 * curve(s)), cell(s, 0.6 * curve(s))])
write("alternation", doc(c))
# a dip inside that alternation: the down cell at 2 MiB at half its like
# sizes' trend (it stays below its neighbours: the alternation holds)
k = SIZES.index(8 * 4 ** 9)
c[k] = (SIZES[k], [cell(SIZES[k], 0.3 * curve(SIZES[k])), cell(SIZES[k], 0.3 * curve(SIZES[k]))])
write("alternation_dip", doc(c))
PY
# verdict of FILE: "VERDICT code:level,... noisy N"
summ() {
	"$HR" --max-plots 1 --out "$TMP/o-$1" "$TMP/$1.json" >"$TMP/o-$1.txt" 2>&1
	python3 - "$TMP/o-$1/profile.json" <<'PY'
import json, sys
n = json.load(open(sys.argv[1]))["nodes"][0]
print(n["verdict"], ",".join(sorted("%s:%s" % (r["code"], r["level"]) for r in n["reasons"])), "noisy", n["checks_noisy"])
PY
}
check() { # NAME FILE WANT [TEXT]
	local got
	got=$(summ "$2")
	if [ "$got" != "$3" ]; then
		echo "not ok $1: $got (want $3)"
	elif [ -n "${4:-}" ] && ! grep -qF -- "$4" "$TMP/o-$2/profile.json"; then
		echo "not ok $1: no '$4' in the profile"
	else
		echo "ok $1"
	fi
}
check health_report_curve_dip_confirmed dip_confirmed "WARN curve_dip:warn,fabric_not_judged:info noisy 0" \
	"busbw dip at 512K out-of-place 8.40 GB/s (neighbours 11.34 and 19.09; per-call CV 0.01, 0.01, 0.01; measured again 8.40 GB/s), confirmed by re-measurement"
check health_report_curve_dip_not_reproduced dip_not_reproduced "PASS did_not_reproduce:info,fabric_not_judged:info noisy 0" \
	"busbw dip at 512K out-of-place 8.40 GB/s (neighbours 11.34 and 19.09; per-call CV 0.01, 0.01, 0.01; measured again 16.80 GB/s) did not reproduce"
check health_report_curve_dip_unconfirmed dip_unconfirmed "WARN curve_dip:warn,fabric_not_judged:info noisy 0" \
	"busbw dip at 512K out-of-place 8.40 GB/s (neighbours 11.34 and 19.09; per-call CV 0.01, 0.01, 0.01), not confirmed (no re-measurement in the input)"
# the action names the backend's knobs: MPI's for an mpi sweep, never NCCL's
check health_report_curve_dip_mpi_action dip_mpi "WARN curve_dip:warn,fabric_not_judged:info noisy 0" \
	"read which algorithm and protocol MPI chose around those sizes (Open MPI: ompi_info --param coll tuned"
if grep -q "NCCL_PROTO" "$TMP/o-dip_mpi/profile.json"; then echo "not ok health_report_curve_dip_mpi_no_nccl_action"; else echo "ok health_report_curve_dip_mpi_no_nccl_action"; fi
grep -q "NCCL_PROTO" "$TMP/o-dip_unconfirmed/profile.json" && echo "ok health_report_curve_dip_nccl_action" || echo "not ok health_report_curve_dip_nccl_action"
check health_report_curve_dip_noisy dip_noisy "NOT JUDGED curve_not_judged:info,fabric_not_judged:info,measurement_noisy:info noisy 1" \
	"curve shape not judged: noisy measurement (a dip (out-of-place) at 512K on noisy cells (CV 0.60 at 512K))"
check health_report_curve_busy_host dip_busy "NOT JUDGED fabric_not_judged:info,measurement_noisy:info noisy 2" \
	"2 checks not judged: noisy measurement (node0 busbw: host CPU pressure 84%; host CPUs 70% busy with other work; and more)"
check health_report_curve_rows_of_size_0_dropped dip_size0 "WARN curve_dip:warn,fabric_not_judged:info noisy 0" "busbw dip at 512K out-of-place 8.40 GB/s"
check health_report_curve_one_slow_call slow_call "PASS fabric_not_judged:info noisy 0"
check health_report_curve_collapse_below_1gbps collapse "WARN curve_collapse:warn,fabric_not_judged:info noisy 0" \
	"mid-range collapse: out-of-place busbw flat or falling from 32K (0.30 GB/s) to 2M (0.30 GB/s), 64x the size, while the plateau is 19.99 GB/s"
check health_report_curve_alternation_named alternation "PASS curve_alternation:info,fabric_not_judged:info noisy 0" \
	"out-of-place busbw alternates up and down between neighbouring sizes from 128K to 128M"
check health_report_curve_dip_inside_alternation alternation_dip "WARN curve_alternation:info,curve_dip:warn,fabric_not_judged:info noisy 0" \
	"busbw dips at 2M out-of-place 5.73 GB/s inside an alternation"
# the same in a log derived from a real one (tests/data/report/nccl-derived/
# alternation_dip.txt: log 06's 64 MiB cell at 0.46 of its neighbours'
# geometric mean inside an alternation from 16 MiB to 8 GiB)
cp tests/data/report/nccl-derived/alternation_dip.txt "$TMP/alternation_real.json"
check health_report_curve_dip_inside_alternation_real_log alternation_real "WARN curve_alternation:info,curve_dip:warn noisy 0" \
	"busbw dips at 64M out-of-place 78.44 GB/s inside an alternation (0.46 of its neighbours' geometric mean, 0.69 of its like sizes': 16M 83.85 and 256M 154.97), not confirmed (no re-measurement in the input); 64M in-place 78.78 GB/s inside an alternation"

# ---- a GPU 12% below its node's other GPUs, in a fleet of 20 quiet nodes
python3 tests/data/report/make-noise-fleet.py "$TMP/gpu" 0.005 7 20
python3 - "$TMP/gpu" <<'PY'
import copy, json, os, sys
base = sys.argv[1]
src = json.load(open(os.path.join(base, "n001", "roofline.json")))
dev = src["results"]["devices"][3]
dev["roofs"]["compute_gflops"]["bf16"] *= 0.88
for p in dev["points"]:
    if p["dtype"] == "bf16" and p["family"] == "gemm":
        p["gflops"] *= 0.88
for case, conf in (("agreed", True), ("disagreed", False), ("none", None)):
    d = copy.deepcopy(src)
    d["results"]["flagged"] = [] if conf is None else [
        {"device": "gpu3", "metric": "compute_gflops.bf16", "value": dev["roofs"]["compute_gflops"]["bf16"],
         "node_median": 790000.0, "pct_below": 12.0, "confirmed": conf}]
    os.makedirs(os.path.join(base + "-" + case, "n001"), exist_ok=True)
    json.dump(d, open(os.path.join(base + "-" + case, "n001", "roofline.json"), "w"))
# a noisy memory roof on n002: its triad's per-call CV 0.30
d = json.load(open(os.path.join(base, "n002", "roofline.json")))
d["results"]["devices"][0]["points"][0]["time_sec"]["cv"] = 0.30
os.makedirs(os.path.join(base + "-noisy", "n002"), exist_ok=True)
json.dump(d, open(os.path.join(base + "-noisy", "n002", "roofline.json"), "w"))
# a wrong-typed conditions value on n003 (a string where a number belongs)
d = json.load(open(os.path.join(base, "n003", "roofline.json")))
d["conditions"]["before"]["cpu_pressure_some_avg10_pct"] = "high"
os.makedirs(os.path.join(base + "-bad", "n003"), exist_ok=True)
json.dump(d, open(os.path.join(base + "-bad", "n003", "roofline.json"), "w"))
PY
# gpu CASE: the fleet with n001's roofline replaced by CASE's
gpu() {
	mkdir -p "$TMP/g-$1" && cp -r "$TMP/gpu"/* "$TMP/g-$1/" && cp -r "$TMP/gpu-$1"/* "$TMP/g-$1/"
	# --detail all: the checks below read a PASS node's metrics
	"$HR" --detail all --max-plots 1 --out "$TMP/go-$1" "$TMP/g-$1" >"$TMP/go-$1.txt" 2>&1
	python3 - "$TMP/go-$1/profile.json" "$2" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
n = {x["name"]: x for x in p["nodes"]}[sys.argv[2]]
flagged = [x["name"] for x in p["nodes"] if x["verdict"] in ("WARN", "FAIL")]
print(n["verdict"], ",".join(sorted("%s:%s" % (r["code"], r["level"]) for r in n["reasons"])),
      "drain", ",".join(p["summary"]["drain_candidates"]) or "-", "flagged", ",".join(flagged) or "-",
      "noisy", p["summary"]["checks_noisy"], "skipped", p["inputs"]["skipped"])
PY
}
got=$(gpu agreed n001)
[ "$got" = "FAIL compute_low:fail drain n001 flagged n001 noisy 0 skipped 0" ] &&
	grep -q "12% below the median 789 TFLOP/s of its node's 7 other like GPUs (robust z -18.9: flagged at or beyond -5.4 and from 5% below; FAIL from 10%), confirmed by roofline's re-measurement" "$TMP/go-agreed.txt" &&
	echo "ok health_report_gpu_below_peers_confirmed" || echo "not ok health_report_gpu_below_peers_confirmed: $got"
got=$(gpu disagreed n001)
[ "$got" = "PASS did_not_reproduce:info drain - flagged - noisy 0 skipped 0" ] &&
	grep -q "gpu3 bf16 compute roof 697 TFLOP/s was 12% below the median 789 TFLOP/s of its node's 7 other like GPUs, but roofline's re-measurement did not reproduce it: not judged low" "$TMP/go-disagreed/profile.json" &&
	echo "ok health_report_gpu_below_peers_not_reproduced" || echo "not ok health_report_gpu_below_peers_not_reproduced: $got"
got=$(gpu none n001)
[ "$got" = "FAIL compute_low:fail drain - flagged n001 noisy 0 skipped 0" ] &&
	grep -q "not confirmed (no re-measurement in the input): this comparison at most WARN; FAIL not confirmed" "$TMP/go-none.txt" &&
	echo "ok health_report_gpu_below_peers_unconfirmed" || echo "not ok health_report_gpu_below_peers_unconfirmed: $got"
got=$(gpu noisy n002)
[ "$got" = "PASS measurement_noisy:info drain - flagged - noisy 1 skipped 0" ] &&
	grep -q '"not_judged_reason": "not judged: noisy measurement (CV 0.30 at the memory roof); re-run on an idle node"' "$TMP/go-noisy/profile.json" &&
	echo "ok health_report_noisy_roof_not_judged" || echo "not ok health_report_noisy_roof_not_judged: $got"
got=$(gpu bad n003)
[ "$got" = "PASS  drain - flagged - noisy 0 skipped 1" ] &&
	grep -q "n003/roofline.json: skipped: conditions.before: 'cpu_pressure_some_avg10_pct' is not a number; skipped" "$TMP/go-bad.txt" &&
	echo "ok health_report_bad_conditions_value_listed" || echo "not ok health_report_bad_conditions_value_listed: $got"
exit 0
