#!/bin/bash
# health_report_agreement.sh - roofline's re-measurement confirms only by
# agreement (docs/health_report.md, "Confirmation"): the value measured
# again (results.flagged[].confirm_value) is held to the same rules as the
# first, and the finding stands at most at the level the second value gets.
# From tests/data/report/labelled-faulty, whose node06 gpu5 bf16 roof is 10%
# below its like GPUs and re-measured:
#   - the same value again: FAIL, confirmed, a drain candidate (as before);
#   - again 9% below: WARN (the effect of a FAIL not repeated), not drained;
#   - again 1% below (roofline still says "confirmed"): did_not_reproduce,
#     the node PASS;
#   - no usable confirm_value (null; 0, listed as an input problem): judged
#     as an older file, on 'confirmed' alone (FAIL, drained).
# The headline of a one-night report says what a history would add
# (summary.history, report.md); with an earlier run in the inputs it does not.
# And the one-night fleet report on healthy fleets with heavy-tailed noise
# (make-nights.py, Student t with 3 degrees of freedom at 3%, roofline's
# re-measurement a fresh draw of the same noise, and allreduce_bw's of each
# sweep's largest size likewise): 4 fleets of 8 nodes x 12
# nights (384 node-nights): no drain candidate, and at most 4 nodes flagged
# (the design before agreement flagged about 111 in 1,000, some 40 here, and
# drained about 84 in 1,000; the budget is 1 in 1,000, measured on 5,760
# node-nights by scripts/measure-detection: 384 cannot tell it from twice
# it, so this is a bound the old design fails, not the budget).
# Prints "ok NAME", "not ok NAME: why" or "skip NAME: why".
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env
HR=$B/health_report
TMP=$(mktemp -d /tmp/ch_hr_agreement.XXXXXX)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$TMP"' EXIT
if [ ! -x "$HR" ]; then
	echo "skip health_report_agreement: $HR is not built"
	exit 0
fi
variant() { # NAME CONFIRM_VALUE (same, null, or a fraction of the node median)
	cp -r tests/data/report/labelled-faulty "$TMP/$1"
	python3 - "$TMP/$1/node06/roofline.json" "$2" <<'PY'
import json, sys
path, v = sys.argv[1], sys.argv[2]
d = json.load(open(path))
f = d["results"]["flagged"][0]
f["confirm_value"] = f["value"] if v == "same" else None if v == "null" else f["node_median"] * float(v)
json.dump(d, open(path, "w"))
PY
	"$HR" -q --max-plots 1 --out "$TMP/o-$1" "$TMP/$1" >/dev/null 2>&1
}
check() { # NAME WANT(verdict code:level drained) [TEXT]
	local got
	got=$(python3 - "$TMP/o-$1/profile.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
n = [x for x in p["nodes"] if x["name"] == "node06"][0]
r = [x for x in n["reasons"] if x["code"] in ("compute_low", "did_not_reproduce")]
print(n["verdict"], ",".join("%s:%s" % (x["code"], x["level"]) for x in r),
      "drained" if "node06" in p["summary"]["drain_candidates"] else "kept")
PY
)
	if [ "$got" != "$2" ]; then
		echo "not ok health_report_agreement_$1: $got (want $2)"
	elif [ -n "${3:-}" ] && ! grep -qF -- "$3" "$TMP/o-$1/profile.json"; then
		echo "not ok health_report_agreement_$1: no '$3' in the profile"
	else
		echo "ok health_report_agreement_$1"
	fi
}
variant same same
check same "FAIL compute_low:fail drained" "roofline's re-measurement 712 TFLOP/s, held to the same rules: FAIL too (agreement)"
variant warn_only 0.91
check warn_only "WARN compute_low:warn kept" "roofline's re-measurement 720 TFLOP/s, held to the same rules: WARN (the finding stands at WARN)"
variant not_again 0.99
check not_again "PASS did_not_reproduce:info kept" "but roofline's re-measurement (783 TFLOP/s) did not reproduce it"
variant null null
check null "FAIL compute_low:fail drained"
variant zero 0
check zero "FAIL compute_low:fail drained"
grep -qF "results.flagged[0]: 'confirm_value' is not a positive number; the re-measurement judged on 'confirmed' alone" \
	"$TMP/o-zero/profile.json" && echo "ok health_report_agreement_zero_listed" ||
	echo "not ok health_report_agreement_zero_listed: the unusable confirm_value is not listed as an input problem"

# ---- the headline says what a history would add, on one night only
note() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["summary"]["history"])' "$1"; }
cp -r tests/data/report/labelled-faulty "$TMP/two"
python3 - "$TMP/two/node06" <<'PY'
import json, sys
d = json.load(open(sys.argv[1] + "/roofline.json"))
d["start_utc"], d["end_utc"] = "2026-11-29T02:10:00Z", "2026-11-29T02:10:50Z"
json.dump(d, open(sys.argv[1] + "/roofline-earlier.json", "w"))
PY
"$HR" --max-plots 1 --out "$TMP/o-two" "$TMP/two" >"$TMP/o-two.txt" 2>&1
one="1 night: devices are judged against the fleet only (large drops and hard faults); a lasting drop of about 10% needs a few nights of history"
"$HR" --max-plots 1 --out "$TMP/o-one" tests/data/report/labelled-faulty >"$TMP/o-one.txt" 2>&1
if note "$TMP/o-same/profile.json" | grep -qF "$one" && sed -n 2p "$TMP/o-one.txt" | grep -qF "$one" && grep -qF "$one" "$TMP/o-same/report.md" &&
	grep -qF "<p class=\"meta\" id=\"history-note\">$one" "$TMP/o-same/report.html" && ! grep -qF "history-note" "$TMP/o-two/report.html" &&
	[ "$(note "$TMP/o-two/profile.json")" = None ] && ! grep -qF "1 night:" "$TMP/o-two.txt"; then
	echo "ok health_report_one_night_headline"
else
	echo "not ok health_report_one_night_headline: one night '$(note "$TMP/o-same/profile.json")', two '$(note "$TMP/o-two/profile.json")'"
fi

# ---- heavy tails, one night at a time
python3 - "$HR" "$TMP/t3" <<'PY' >"$TMP/t3.txt"
import importlib.util, json, os, shutil, subprocess, sys
hr, tmp = sys.argv[1], sys.argv[2]
spec = importlib.util.spec_from_file_location("mn", "tests/data/report/make-nights.py")
mn = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mn)
nn = flagged = drained = 0
for seed in range(1, 5):
    a = mn.parse([tmp, "--nodes", "8", "--nights", "12", "--noise", "t3", "--sigma", "0.03", "--seed", str(500 + seed)])
    for k, day, write in mn.nights(a):
        nd, out = os.path.join(tmp, day), os.path.join(tmp, "out")
        write(nd)
        subprocess.run([hr, "-q", "--max-plots", "1", "--out", out, nd], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        p = json.load(open(os.path.join(out, "profile.json")))
        nn += p["summary"]["nodes"]
        flagged += sum(1 for n in p["nodes"] if n["verdict"] in ("WARN", "FAIL"))
        drained += len(p["summary"]["drain_candidates"])
        shutil.rmtree(out)
        shutil.rmtree(nd)
print(nn, flagged, drained)
PY
read -r nn flagged drained <"$TMP/t3.txt"
echo "# one-night fleet report, healthy fleets, t3 noise at 3%: $flagged flagged and $drained drain candidates in ${nn:-?} node-nights"
if [ "${nn:-0}" = 384 ] && [ "$flagged" -le 4 ] && [ "$drained" = 0 ]; then
	echo "ok health_report_agreement_heavy_tails"
else
	echo "not ok health_report_agreement_heavy_tails: $flagged flagged (want <= 4) and $drained drained (want 0) in ${nn:-?} node-nights (want 384)"
fi
exit 0
