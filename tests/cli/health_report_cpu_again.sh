#!/bin/bash
# health_report_cpu_again.sh - a CPU socket's low figure held to roofline's
# fresh second measurement (devices[].roofs_again: roofline measures a
# socket's roof points again every run, docs/roofline.md "Confirmation").
# Fleet report, one night of 40 nodes (make-nights.py), n001's CPU memory
# roof 30% low:
#   both measurements low: FAIL, confirmed by the agreement, drain candidate;
#   the second at the healthy value: not reproduced (info naming the fleet
#   median it was compared with and the second value), PASS;
#   no second measurement (an older file): FAIL not confirmed, not drained.
# History, 12 nights at 3% noise, n001's CPU memory roof 20% low from the
# last night: WARN that night when both measurements are low; nothing when
# the second is at the healthy value (the night's mean 10% low, its larger
# measurement not low: neither far nor a lasting drop yet).
# Prints "ok NAME", "not ok NAME: why" or "skip NAME: why".
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env
HR=$B/health_report
TMP=$(mktemp -d /tmp/ch_hr_cpu_again.XXXXXX)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$TMP"' EXIT
if [ ! -x "$HR" ]; then
	echo "skip health_report_cpu_again: $HR is not built"
	exit 0
fi
MN=tests/data/report/make-nights.py
# set_again FILE VALUE: the CPU's roofs_again.memory_gbps (VALUE "healthy":
# the first measurement / (1 - SIZE); "absent": no roofs_again at all)
set_again() {
	python3 - "$1" "$2" "$3" <<'PY'
import json, sys
p, how, size = sys.argv[1], sys.argv[2], float(sys.argv[3])
j = json.load(open(p))
for d in j["results"]["devices"]:
    if d["device"] == "cpu":
        if how == "absent":
            del d["roofs_again"]
        else:
            d["roofs_again"]["memory_gbps"] = d["roofs"]["memory_gbps"] / (1 - size)
json.dump(j, open(p, "w"))
PY
}

# ---- the fleet report, one night
python3 $MN "$TMP/f" --nodes 40 --nights 1 --one-night --seed 3 --fault cpu_socket:0.3:0 >/dev/null ||
	{ echo "not ok health_report_cpu_again: make-nights.py failed"; exit 0; }
for v in healthy absent; do
	cp -r "$TMP/f" "$TMP/f-$v"
	set_again "$TMP/f-$v/n001/roofline.json" $v 0.3
done
fleet() { # NAME DIR WANT TEXT
	"$HR" --out "$TMP/o-$1" "$2" >/dev/null 2>&1
	got=$(python3 - "$TMP/o-$1/profile.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
n = [x for x in p["nodes"] if x["name"] == "n001"][0]
r = [x for x in n["reasons"] if x.get("subject") == "cpu"]
print(n["verdict"], ",".join("%s:%s" % (x["code"], x["level"]) for x in r),
      "drained" if "n001" in p["summary"]["drain_candidates"] else "kept")
PY
)
	if [ "$got" != "$3" ]; then
		echo "not ok health_report_cpu_again_fleet_$1: $got (want $3)"
	elif ! grep -qF -- "$4" "$TMP/o-$1/profile.json"; then
		echo "not ok health_report_cpu_again_fleet_$1: no '$4' in the profile"
	else
		echo "ok health_report_cpu_again_fleet_$1"
	fi
}
fleet both "$TMP/f" "FAIL memory_low:fail drained" "roofline's re-measurement 17.6 GB/s, held to the same rules: FAIL too (agreement)"
fleet not_again "$TMP/f-healthy" "PASS did_not_reproduce:info kept" \
	"cpu memory roof 18.0 GB/s was 25% below the fleet median 24.0 GB/s of 40 like devices, but roofline's re-measurement (25.7 GB/s) did not reproduce it"
fleet once "$TMP/f-absent" "FAIL memory_low:fail kept" "FAIL not confirmed (no re-measurement"

# ---- a node of one GPU (no fleet, no node peers): its memory roof 30% low,
# roofline's roofs_again at the healthy value: not reproduced, the reason
# naming the expectation it was judged against (not "nan% below ... n/a")
mkdir -p "$TMP/one/n001"
python3 - "$TMP/f/n002/roofline.json" "$TMP/one/n001/roofline.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
d = [d for d in j["results"]["devices"] if d["device"] == "gpu0"][0]
v = d["roofs"]["memory_gbps"]
d["roofs"]["memory_gbps"] = 0.7 * v
for p in d["points"]:
    if p.get("family") == "stream":
        p["gbps"] *= 0.7
d["roofs_again"] = {"memory_gbps": v}
j["results"]["devices"], j["results"]["flagged"] = [d], []
json.dump(j, open(sys.argv[2], "w"))
PY
"$HR" --out "$TMP/o-one" "$TMP/one" >/dev/null 2>&1
if python3 -c '
import json, sys
n = json.load(open(sys.argv[1]))["nodes"][0]
t = [r["text"] for r in n["reasons"] if r["code"] == "did_not_reproduce"]
assert n["verdict"] == "PASS" and len(t) == 1 and "% of the expected " in t[0] and "nan" not in t[0], (n["verdict"], t)
' "$TMP/o-one/profile.json"; then
	echo "ok health_report_cpu_again_not_reproduced_names_the_expectation"
else
	echo "not ok health_report_cpu_again_not_reproduced_names_the_expectation: see $TMP/o-one/profile.json"
fi

# ---- the history: the night the drop appears
python3 $MN "$TMP/n" --nodes 8 --nights 12 --seed 1 --fault cpu_socket:0.2:11 >/dev/null ||
	{ echo "not ok health_report_cpu_again: make-nights.py failed"; exit 0; }
last=$(ls "$TMP/n" | tail -1)
for night in $(ls "$TMP/n" | head -11); do
	"$HR" history --db "$TMP/h.sqlite" --night "$night" "$TMP/n/$night" >/dev/null 2>&1
done
cp "$TMP/h.sqlite" "$TMP/h2.sqlite"
cp -r "$TMP/n/$last" "$TMP/last-healthy"
set_again "$TMP/last-healthy/n001/roofline.json" healthy 0.2
hist() { # NAME DB DIR WANT
	"$HR" history --db "$2" --night "$last" --json "$TMP/$1.json" "$3" >/dev/null 2>&1
	got=$(python3 - "$TMP/$1.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
hits = set()
def walk(o):
    if isinstance(o, dict):
        if o.get("node") == "n001" and o.get("gpu") == "cpu" and o.get("metric") == "roofline.memory_gbps" and o.get("level"):
            hits.add(o["level"])
        for v in o.values():
            walk(v)
    elif isinstance(o, list):
        for v in o:
            walk(v)
walk(j)
print(",".join(sorted(hits)) or "none")
PY
)
	[ "$got" = "$4" ] && echo "ok health_report_cpu_again_history_$1" ||
		echo "not ok health_report_cpu_again_history_$1: n001 cpu memory $got (want $4)"
}
hist both "$TMP/h.sqlite" "$TMP/n/$last" warn
hist not_again "$TMP/h2.sqlite" "$TMP/last-healthy" none
exit 0
