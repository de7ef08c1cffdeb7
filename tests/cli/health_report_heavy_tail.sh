#!/bin/bash
# health_report_heavy_tail.sh - the one-night fleet report on fleets large
# enough to learn the tail of their noise (docs/health_report.md,
# "Confirmation"; hr_noise_tail_weight_high()): a class of 200 like values
# or more raises its fleet-outlier cut-off to the quantile of the heavy
# tail it learns from its values' upper side.
#   - heavy-tailed healthy fleets (make-nights.py, Student t with 3 degrees
#     of freedom at 3%): 10 one-night fleets of 300 nodes (3,000
#     node-nights): at most 5 nodes flagged and no drain candidate (the
#     budget is 1 in 1,000, 3 here; the cut-off of Student's t alone flagged
#     CPU sockets, measured once, in about 8 of 1,000: about 24 here);
#   - a t3 fleet of 300 nodes with a CPU socket 30% low on both of
#     roofline's measurements: FAIL (each measurement against the tail's
#     quantile at the square root of the share); measured once: not flagged;
#   - agreement rule by rule where the tail lowered a cut-off: a GPU roof
#     whose second measurement is beyond the fleet and expectation rules'
#     cut-offs but not the node comparison's: that comparison does not stand;
#   - a Gaussian fleet of 300 nodes with a CPU socket 20% low: still FAIL
#     (its class learns no heavy tail, so the cut-off stays the normal one)
#     and the reason says which cut-off it was judged against.
# Prints "ok NAME", "not ok NAME: why" or "skip NAME: why".
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env
HR=$B/health_report
ok() { echo "ok $1"; }
nok() { echo "not ok $1: $2"; }
TMP=$(mktemp -d /tmp/ch_hr_heavy.XXXXXX)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$TMP"' EXIT
if [ ! -x "$HR" ]; then
	echo "skip health_report_heavy_tail: $HR is not built"
	exit 0
fi
count() { # FLEET_DIR -> "flagged drained" of its one-night report
	rm -rf "$TMP/out"
	"$HR" -q --max-plots 1 --out "$TMP/out" "$1" >/dev/null 2>&1
	python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))
print(sum(n.get("verdict") in ("WARN", "FAIL") for n in p["nodes"]), len(p["summary"]["drain_candidates"]))
' "$TMP/out/profile.json" 2>/dev/null || echo "x x"
}
flagged=0 drained=0 bad=""
for seed in 1 2 3 4 5 6 7 8 9 10; do
	rm -rf "$TMP/f"
	if ! python3 tests/data/report/make-nights.py "$TMP/f" --nodes 300 --nights 1 --noise t3 --sigma 0.03 \
		--seed "$seed" --one-night >/dev/null 2>&1; then
		bad="make-nights.py failed (seed $seed)"
		break
	fi
	read -r f d < <(count "$TMP/f")
	if [ "$f" = x ]; then
		bad="no profile.json (seed $seed)"
		break
	fi
	flagged=$((flagged + f))
	drained=$((drained + d))
done
if [ -z "$bad" ] && [ "$flagged" -le 5 ] && [ "$drained" = 0 ]; then
	ok health_report_heavy_tail_large_fleet
else
	nok health_report_heavy_tail_large_fleet "${bad:-$flagged of 3000 node-nights flagged (at most 5), $drained drain candidates}"
fi

rm -rf "$TMP/g"
python3 tests/data/report/make-nights.py "$TMP/g" --nodes 300 --nights 1 --noise gauss --sigma 0.03 --seed 4 \
	--one-night --fault cpu_socket:0.2:0:9 >/dev/null 2>&1
rm -rf "$TMP/out"
"$HR" -q --max-plots 1 --out "$TMP/out" "$TMP/g" >/dev/null 2>&1
if python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))
bad = {n["name"]: n for n in p["nodes"] if n.get("verdict") in ("WARN", "FAIL")}
assert list(bad) == ["n009"], list(bad)
r = [r for r in bad["n009"]["reasons"] if r["code"] == "memory_low"]
assert r and r[0]["level"] == "fail", bad["n009"]["reasons"]
text = json.dumps(r[0])
assert "the cut-off for its node" in text and "heavy tail" not in text, text
' "$TMP/out/profile.json"; then
	ok health_report_heavy_tail_normal_fleet_keeps_its_power
else
	nok health_report_heavy_tail_normal_fleet_keeps_its_power "the CPU socket 20% low was not FAIL alone (see $TMP/out)"
fi

# ---- a heavy-tailed (t3) fleet of 300 nodes with n009's CPU socket low on
# both of roofline's measurements (roofs_again): judged against the tail's
# quantile at the square root of the node's share (two measurements must
# both be beyond it), the only node flagged. 30% low: WARN, no drain
# candidate (a FAIL needs both beyond the tail's quantile at the FAIL's
# budget, fail_false_alarm_per_node: about 18 robust sd here); 60% low:
# FAIL, confirmed (a drain candidate). Measured once (no roofs_again: the
# cut-off at the share itself, about 100 robust sd under a tail weight near
# 1), the 30% drop is not flagged
for size in 0.3 0.6; do
	rm -rf "$TMP/t$size"
	python3 tests/data/report/make-nights.py "$TMP/t$size" --nodes 300 --nights 1 --noise t3 --sigma 0.03 --seed 1 \
		--one-night --fault cpu_socket:$size:0:9 >/dev/null 2>&1
	rm -rf "$TMP/o-t$size"
	"$HR" -q --max-plots 1 --out "$TMP/o-t$size" "$TMP/t$size" >/dev/null 2>&1
done
cp -r "$TMP/t0.3" "$TMP/t1"
python3 - "$TMP/t1" <<'PY'
import glob, json, sys
for p in glob.glob(sys.argv[1] + "/*/roofline.json"):
    j = json.load(open(p))
    for d in j["results"]["devices"]:
        d.pop("roofs_again", None)
    json.dump(j, open(p, "w"))
PY
rm -rf "$TMP/o-t1"
"$HR" -q --max-plots 1 --out "$TMP/o-t1" "$TMP/t1" >/dev/null 2>&1
if python3 -c '
import json, sys
for f, verdict, drain, again in ((sys.argv[1], "WARN", [], "WARN (the finding stands at WARN)"),
                                 (sys.argv[2], "FAIL", ["n009"], "FAIL too (agreement)")):
    p = json.load(open(f))
    bad = {n["name"]: n for n in p["nodes"] if n.get("verdict") in ("WARN", "FAIL")}
    assert list(bad) == ["n009"] and bad["n009"]["verdict"] == verdict, (f, list(bad))
    assert p["summary"]["drain_candidates"] == drain, (f, p["summary"]["drain_candidates"])
    r = [r for r in bad["n009"]["reasons"] if r["code"] == "memory_low"][0]
    assert "measured twice, each measurement held to the tail" in r["text"] and again in r["text"], r
    assert "the tail\x27s quantile at 1e-06 FAIL per node" in r["text"], r
    # the profile gives both cut-offs of the value, the FAIL cut-off above the flag one
    def walk(x):
        if isinstance(x, dict):
            if "cut_off_fail" in x:
                yield x
            for v in x.values():
                yield from walk(v)
        elif isinstance(x, list):
            for v in x:
                yield from walk(v)
    n9 = [n for n in p["nodes"] if n["name"] == "n009"][0]
    assert any(v["cut_off_fail"] is not None and v["cut_off"] is not None and v["cut_off_fail"] > v["cut_off"] + 5
               for v in walk(n9)), "no value of n009 with cut_off_fail above cut_off"
q = json.load(open(sys.argv[3]))
assert not [n["name"] for n in q["nodes"] if n.get("verdict") in ("WARN", "FAIL")], "measured once: flagged"
' "$TMP/o-t0.3/profile.json" "$TMP/o-t0.6/profile.json" "$TMP/o-t1/profile.json"; then
	ok health_report_heavy_tail_measured_twice_keeps_its_power
else
	nok health_report_heavy_tail_measured_twice_keeps_its_power "the t3 fleet's CPU socket on both measurements: 30% low not WARN without a drain, or 60% low not FAIL alone, or measured once it was flagged (see $TMP/o-t0.3, $TMP/o-t0.6, $TMP/o-t1)"
fi

# ---- agreement rule by rule where a learned tail lowered a cut-off: the
# same t3 fleet with n009's gpu0 memory roof 40% low, roofline's
# re-measurement 20% low (flagged, confirmed): the second value is beyond
# the fleet comparison's cut-off and the expectation's, not beyond the
# node comparison's (lowered for a value measured twice: its chance rests
# on both measurements beyond the same cut-off), so the node comparison no
# longer stands; the finding does, at the level the second value agrees
# with: WARN (20% low is short of the FAIL's cut-off under this tail and
# above the expectation's FAIL ratio), no drain candidate
rm -rf "$TMP/r"
cp -r "$TMP/t1" "$TMP/r"
python3 - "$TMP/r/n009/roofline.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
d = [d for d in j["results"]["devices"] if d["device"] == "gpu0"][0]
v = d["roofs"]["memory_gbps"]
d["roofs"]["memory_gbps"] = 0.6 * v
for q in d["points"]:
    if q.get("family") == "stream":
        q["gbps"] *= 0.6
j["results"]["flagged"] = [{"device": "gpu0", "metric": "memory_gbps", "value": 0.6 * v, "node_median": v,
                            "pct_below": 40, "confirmed": True, "confirm_value": 0.8 * v, "confirm_pct_below": 20}]
json.dump(j, open(sys.argv[1], "w"))
PY
rm -rf "$TMP/o-r"
"$HR" -q --max-plots 1 --out "$TMP/o-r" "$TMP/r" >/dev/null 2>&1
if python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))
n = [x for x in p["nodes"] if x["name"] == "n009"][0]
t = [r["text"] for r in n["reasons"] if r.get("subject") == "gpu0"]
assert n["verdict"] == "WARN" and len(t) == 1 and not p["summary"]["drain_candidates"], (n["verdict"], t)
assert "other like GPUs (robust z" not in t[0] and "held to the same rules: WARN (the finding stands at WARN)" in t[0], t[0]
' "$TMP/o-r/profile.json"; then
	ok health_report_heavy_tail_agreement_rule_by_rule
else
	nok health_report_heavy_tail_agreement_rule_by_rule "the node comparison still stands on a second value below its cut-off (see $TMP/o-r)"
fi
