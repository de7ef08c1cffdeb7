#!/bin/bash
# health_report_real_sweeps.sh - the ten real full sweeps of the shared
# build machine (tests/data/sweeps-buildhost/vm: healthy but busy, each file
# with the host load it saw): health_report on each, on all of them as
# nights of the node's own history in the inputs, and health_report history
# over them night by night gives no WARN, FAIL or drain candidate; what the
# load made noisy is not judged, and counted (the counts are exact: the
# files do not change). docs/health_report.md, "False alarms".
# Prints "ok NAME", "not ok NAME: why" or "skip NAME: why".
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env
HR=$B/health_report
S=tests/data/sweeps-buildhost/vm
TMP=$(mktemp -d /tmp/ch_hr_real.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
if [ ! -x "$HR" ]; then
	echo "skip health_report_real_sweeps: $HR is not built"
	exit 0
fi
if [ "$(ls -d $S/*/ 2>/dev/null | wc -l)" != 10 ]; then
	echo "not ok health_report_real_sweeps: $S does not hold the ten sweeps"
	exit 0
fi

# summary NAME DIR...: one line of what the profile of DIR... holds
summary() {
	local out=$TMP/$1
	shift
	# --detail all: a PASS node's metrics are read below
	"$HR" --detail all --max-plots 1 --out "$out" "$@" >"$out.txt" 2>&1
	echo "exit $? $(python3 - "$out/profile.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
s = p["summary"]
flags = sorted({r["code"] for n in p["nodes"] for r in n["reasons"] if r["level"] != "info"})
print("%s; %d FAIL, %d WARN, %d PASS, %d not judged; checks %d judged, %d not judged, %d noisy; drain %d; flagged %s"
      % (s["verdict"], s["fail"], s["warn"], s["pass"], s["not_judged"], s["checks_judged"],
         s["checks_not_judged"], s["checks_noisy"], len(s["drain_candidates"]), ",".join(flags) or "none"))
PY
)"
}

# each sweep alone: the checkpoint read-back judged (intact); the CPU's three
# roofs, the intra-node busbw, the curve shape, the loader and the
# checkpoint speed not judged: noisy (host CPU pressure 27 to 93%,
# oversubscribed). The node is NOT JUDGED, not PASS: the read-back is a
# correctness check, and no performance check could be judged (it was PASS
# on the read-back alone, which said nothing of the node's performance)
want="exit 0 NOT JUDGED; 0 FAIL, 0 WARN, 0 PASS, 1 not judged; checks 1 judged, 7 not judged, 7 noisy; drain 0; flagged none"
bad=
for d in $S/*/; do
	got=$(summary "$(basename "$d")" "$d")
	[ "$got" = "$want" ] || bad="$bad $(basename "$d"): $got;"
done
[ -z "$bad" ] && echo "ok health_report_real_sweeps_each_clean" || echo "not ok health_report_real_sweeps_each_clean:$bad"
# the noisy checks name what made them so, with the action
if python3 - "$TMP/20261205T063314Z/profile.json" <<'PY'
import json, sys
n = json.load(open(sys.argv[1]))["nodes"][0]
r = {x["code"]: x for x in n["reasons"]}
assert r["measurement_noisy"]["text"].startswith("7 checks not judged: noisy measurement (cpu memory roof: host CPU pressure 27%"), r["measurement_noisy"]
assert r["measurement_noisy"]["action"] == "re-run on an idle node"
assert "loader not judged: host busy" in r["loader_not_judged"]["text"], r["loader_not_judged"]
m = {x["metric"]: x for x in n["devices"][0]["metrics"]}["memory_gbps"]
assert m["quality"] == "noisy" and not m["judged"] and m["not_judged_reason"] == \
    "not judged: noisy measurement (host CPU pressure 27%); re-run on an idle node", m
PY
then
	echo "ok health_report_real_sweeps_noisy_named"
else
	echo "not ok health_report_real_sweeps_noisy_named"
fi

# all ten as nights of the node's own history in the inputs
got=$(summary all $S)
# NOT JUDGED as each sweep alone (above)
want="exit 0 NOT JUDGED; 0 FAIL, 0 WARN, 0 PASS, 1 not judged; checks 1 judged, 7 not judged, 7 noisy; drain 0; flagged none"
[ "$got" = "$want" ] && echo "ok health_report_real_sweeps_as_nights" || echo "not ok health_report_real_sweeps_as_nights: $got"

# and night by night into the SQLite history: no regression, no warning;
# every file is left out as noisy, and said so
bad=
for d in $S/*/; do
	"$HR" history --db "$TMP/h.sqlite" "$d" >"$TMP/h.txt" 2>&1
	rc=$?
	if [ $rc != 0 ] || grep -qE "^(REGRESSED|WARN|drain)" "$TMP/h.txt" ||
	   ! grep -q "^history: not recorded, noisy measurement (.*): 4 result files whole, 0 values; re-run on an idle node$" "$TMP/h.txt"; then
		bad="$bad $(basename "$d") (exit $rc)"
	fi
done
[ -z "$bad" ] && echo "ok health_report_real_sweeps_history_clean" || echo "not ok health_report_real_sweeps_history_clean:$bad"
exit 0
