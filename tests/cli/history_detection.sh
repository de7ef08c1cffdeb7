#!/bin/bash
# history_detection.sh - the history's change detector through the binary
# (report/history/hr_detect.h, docs/workflows.md "Change detection"), on
# fleets drawn by tests/data/report/make-nights.py: 2 nodes of 8 H100 and a
# CPU socket, 1% night-to-night noise, 12 nights, n001's gpu0 bf16 roof and
# n002's CPU socket memory roof 10% lower from night 9 (2026-12-09): both
# REGRESSED by the detector within 3 nights, dated 2026-12-09, nothing else
# flagged; the same fleet healthy with heavy-tailed (t3) noise at 3%: no
# series REGRESSED on any night. Fixed seeds: regression tests; the rates
# are asserted by the unit tests detect/* and measured by
# scripts/measure-detection.
# Prints "ok NAME", "not ok NAME: why" or "skip NAME: why".
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env
HR=$B/health_report
TMP=$(mktemp -d /tmp/ch_hist_detect.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
ok() { echo "ok $1"; }
nok() { echo "not ok $1: $2"; [ -n "${3:-}" ] && [ -f "$3" ] && sed 's/^/    /' "$3" | tail -30; }
if [ ! -x "$HR" ]; then
	echo "skip history_detection: $HR is not built"
	exit 0
fi

# nights 1..12 into a history; the output of night N in $TMP/$1.N, its exit in $TMP/$1.N.rc
run_nights() {
	local name=$1 k=0 d
	shift
	python3 tests/data/report/make-nights.py "$TMP/$name" --nodes 2 --nights 12 "$@" || return 1
	for d in "$TMP/$name"/2026-12-*; do
		k=$((k + 1))
		"$HR" history --db "$TMP/$name.sqlite" --night "${d##*/}" --json "$TMP/$name.$k.json" "$d" \
			>"$TMP/$name.$k" 2>&1
		echo $? >"$TMP/$name.$k.rc"
	done
}

run_nights drop --sigma 0.01 --seed 3 --fault gpu_compute:0.1:8:1:0 --fault cpu_socket:0.1:8:2
first=""
for k in $(seq 1 12); do
	if grep -q '^REGRESSED' "$TMP/drop.$k"; then first=$k; break; fi
done
if [ -n "$first" ] && [ "$first" -ge 9 ] && [ "$first" -le 11 ] &&
	[ "$(cat "$TMP/drop.12.rc")" = 1 ] &&
	grep -q '^REGRESSED n001 gpu0 roofline.compute_gflops.bf16: regressed [0-9.]*% since 2026-12-09, 4 nights; CUSUM [0-9.]* over [0-9.]* (' "$TMP/drop.12" &&
	grep -q '^REGRESSED n002 cpu roofline.memory_gbps: regressed [0-9.]*% since 2026-12-09, 4 nights; CUSUM ' "$TMP/drop.12" &&
	[ "$(grep -c '^REGRESSED' "$TMP/drop.12")" = 2 ] &&
	grep -qx 'drain candidates: n001 n002' "$TMP/drop.12" &&
	python3 -c '
import json, sys
j = json.load(open(sys.argv[1]))
r = j["regressions"]
assert len(r) == 2 and all(x["rule"] == "cusum" and x["level"] == "regressed" and x["since"] == "2026-12-09"
                           and x["nights"] == 4 and 8 < x["pct"] < 12 and x["cusum"] > x["cusum_threshold"] > 0
                           and 0 < x["noise_pct"] < 3 for x in r), r
assert j["drain_candidates"] == ["n001", "n002"] and j["cusum_false_alarm_per_node"] == 0.0005
' "$TMP/drop.12.json"; then
	ok history_detection_lasting_drop
else
	nok history_detection_lasting_drop "first REGRESSED on night '${first:-none}' (want 9-11, the drop from night 9)" "$TMP/drop.12"
fi

run_nights healthy --sigma 0.03 --noise t3 --seed 11
bad=$(grep -l '^REGRESSED' "$TMP"/healthy.[0-9]* 2>/dev/null | head -1)
if [ -z "$bad" ] && [ "$(cat "$TMP/healthy.12.rc")" = 0 ] && grep -q 'series not judged' "$TMP/healthy.12"; then
	ok history_detection_heavy_tailed_healthy
else
	nok history_detection_heavy_tailed_healthy "a healthy series REGRESSED (${bad##*/})" "$bad"
fi
exit 0
