#!/bin/bash
# health_report_busbw_agreement.sh - a group's busbw confirms only by
# agreement (docs/health_report.md, "Confirmation"): allreduce_bw measures
# the largest size of every sweep again (the cell's "confirm"), and the
# judge holds that second busbw to the same rules as the first (the same
# fleet median, spread and cut-off, the same expectation); the finding
# stands at most at the level the second value gets. From
# tests/data/report/labelled-faulty, whose node03 intra-node busbw is 40%
# below its reference (FAIL) and whose node04 is in two slow node pairs:
#   - node03 re-measured as low: FAIL, confirmed, a drain candidate;
#   - re-measured 15% below the reference: WARN (the FAIL not repeated);
#   - re-measured healthy: did_not_reproduce (info, both figures), PASS;
#   - not re-measured (no "confirm"): FAIL, not drained, as before, and
#     says "not re-measured";
#   - a re-measurement of null, "NaN", 0 or -1 GB/s: not used, listed as an
#     input problem (except null: absent), judged as not re-measured;
#   - node04's two pairs re-measured healthy: no slow pair, no
#     inter_node_link; did_not_reproduce on node04.
# Prints "ok NAME", "not ok NAME: why" or "skip NAME: why".
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env
HR=$B/health_report
TMP=$(mktemp -d /tmp/ch_hr_busbw_agreement.XXXXXX)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$TMP"' EXIT
if [ ! -x "$HR" ]; then
	echo "skip health_report_busbw_agreement: $HR is not built"
	exit 0
fi
# variant NAME FILE GROUPS AGAIN: the largest size's cells of the sweeps
# GROUPS (comma-separated) of FILE get a "confirm" whose busbw is AGAIN:
# none (no confirm), null, NaN, a number, or xF (F x the expected 370 GB/s)
variant() {
	cp -r tests/data/report/labelled-faulty "$TMP/$1"
	python3 - "$TMP/$1/$2" "$3" "$4" <<'PY'
import json, sys
path, groups, v = sys.argv[1], sys.argv[2].split(","), sys.argv[3]
d = json.load(open(path))
for sw in d["results"]["sweeps"]:
    if sw["group_name"] not in groups:
        continue
    last = max(sw["rows"], key=lambda r: r["bytes"])
    for p in ("out_of_place", "in_place"):
        c = last[p]
        if v == "none":
            c.pop("confirm", None)
            continue
        bus = None if v == "null" else "NaN" if v == "NaN" else \
            370.0 * float(v[1:]) if v.startswith("x") else float(v)
        c["confirm"] = {"why": "largest", "time_us": c["time_us"], "algbw_gbps": c["algbw_gbps"],
                        "busbw_gbps": bus, "wrong": 0}
json.dump(d, open(path, "w"))
PY
	"$HR" -q --max-plots 1 --out "$TMP/o-$1" "$TMP/$1" >/dev/null 2>&1
}
# check NAME NODE WANT(verdict code:level,... drained|kept) [TEXT]
check() {
	local got
	got=$(python3 - "$TMP/o-$1/profile.json" "$2" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
n = [x for x in p["nodes"] if x["name"] == sys.argv[2]][0]
codes = ("intra_node_busbw_low", "inter_node_busbw_low", "inter_node_link", "slow_pair", "did_not_reproduce")
r = [x for x in n["reasons"] if x["code"] in codes]
print(n["verdict"], ",".join("%s:%s" % (x["code"], x["level"]) for x in r) or "-",
      "drained" if sys.argv[2] in p["summary"]["drain_candidates"] else "kept")
PY
)
	if [ "$got" != "$3" ]; then
		echo "not ok health_report_busbw_agreement_$1: $got (want $3)"
	elif [ -n "${4:-}" ] && ! grep -qF -- "$4" "$TMP/o-$1/profile.json"; then
		echo "not ok health_report_busbw_agreement_$1: no '$4' in the profile"
	else
		echo "ok health_report_busbw_agreement_$1"
	fi
}
N3=node03/allreduce_bw.json
variant same "$N3" world 218.81102142841317
check same node03 "FAIL intra_node_busbw_low:fail drained" \
	"allreduce_bw's re-measurement 219 GB/s, held to the same rules: FAIL too (agreement)"
variant warn_only "$N3" world x0.85
check warn_only node03 "WARN intra_node_busbw_low:warn kept" \
	"allreduce_bw's re-measurement 314 GB/s, held to the same rules: WARN (the finding stands at WARN)"
variant healthy "$N3" world x1.0
check healthy node03 "PASS did_not_reproduce:info kept" \
	"intra-node busbw 219 GB/s (all_reduce ring, 8 ranks, world) was low (40% below the fleet median 366 GB/s of 10 like groups, 59% of the expected 370 GB/s (8 x H100 SXM reference)), but allreduce_bw's re-measurement of the largest size, 370 GB/s, held to the same rules, is not: not judged low"
variant none "$N3" world none
check none node03 "FAIL intra_node_busbw_low:fail kept" "not re-measured (no usable re-measurement of the largest size in the input)"
for bad in null NaN 0 -1; do
	variant "bad$bad" "$N3" world "$bad"
	check "bad$bad" node03 "FAIL intra_node_busbw_low:fail kept" "not re-measured (no usable re-measurement of the largest size in the input)"
done
listed() { # NAME TEXT: the unusable re-measurement is listed as an input problem
	grep -qF -- "$2" "$TMP/o-$1/profile.json" && echo "ok health_report_busbw_agreement_listed_$1" ||
		echo "not ok health_report_busbw_agreement_listed_$1: no '$2' in the profile"
}
listed badNaN "rows[5].out_of_place.confirm: 'busbw_gbps' is not a number; skipped"
listed bad0 "rows[5].out_of_place.confirm: 'busbw_gbps' is 0 (a second measurement that moved no data); the re-measurement not used"
listed bad-1 "rows[5].out_of_place.confirm: 'busbw_gbps' is '-1' (must be a finite number >= 0); skipped"
variant pairs pairs/allreduce_bw.json pair2-3,pair3-4 x0.97
check pairs node04 "PASS did_not_reproduce:info,did_not_reproduce:info kept" \
	"but allreduce_bw's re-measurement of the largest size, 359 GB/s, held to the same rules, is not: not judged low"
exit 0
