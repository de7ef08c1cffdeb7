#!/bin/bash
# report_loader_action.sh - health_report's loader action follows the
# recommended placement: a node whose recommendation is the shared placement
# (workers on the feeder cores, bound) is told to bind as recommended, not to
# move its workers off the feeder cores; an isolated recommendation keeps
# "move workers off the feeder cores" (tests/data/report/real-vm, its
# figures set: the reporter judges the figures, not the verdict labels; the
# baseline host idle, as the real one recorded the build machine busy).
# Prints "ok NAME", "not ok NAME: why" or "skip NAME: why".
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env
HR=$B/health_report
T=$(mktemp -d /tmp/report_loader_action-test.XXXXXX)
trap 'rm -rf "$T"' EXIT
if [ ! -x "$HR" ]; then
	echo "not ok report loader action: $HR not built"
	exit 0
fi
python3 - tests/data/report/real-vm/loader_contention.json "$T" <<'EOF2'
import copy, json, os, sys
d = json.load(open(sys.argv[1])); out = sys.argv[2]
for name, rec in (("shared", "shared-w1"), ("isolated", "isolated-w1")):
    e = copy.deepcopy(d); r = e["results"]
    for c in r["configs"]:
        c["verdict"] = {"as-is-w1": "fail"}.get(c["name"], "pass")
        c["psi_cpu_some_avg10"] = 0.5
        if c["name"] != "as-is-w1":  # as-is keeps its real 33% input wait
            c["input_wait_frac"], c["accel_util"] = 0.01, 0.99
    r["verdict"] = "pass"
    r["recommendation"]["config"] = rec
    r["recommendation"]["placement"] = rec.split("-")[0]
    r["recommendation"]["verdict"] = "pass"
    os.makedirs(os.path.join(out, name))
    json.dump(e, open(os.path.join(out, name, "loader_contention.json"), "w"))
EOF2
for case in shared isolated; do
	"$HR" --out "$T/out-$case" "$T/$case" >"$T/$case.out" 2>&1
	act=$(python3 -c '
import json, sys
p = json.load(open(sys.argv[1]))
print([r["action"] for n in p["nodes"] for r in n["reasons"] if r["code"] == "loader_contention"][0])' "$T/out-$case/profile.json" 2>&1)
	case $case in
	shared) want="bind the job as loader_contention recommends: the shared placement with 1 worker per GPU" ;;
	isolated) want="move workers off the feeder cores: the isolated placement with 1 worker per GPU" ;;
	esac
	[[ "$act" == "$want"* ]] && echo "ok loader action for the $case recommendation" ||
		echo "not ok loader action for the $case recommendation: '$act'"
done
exit 0
