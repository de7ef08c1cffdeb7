#!/bin/bash
# measure_detection.sh - scripts/measure-detection's large healthy fleets
# (--big-nodes, --big-nights, --big-fleets), on a tiny setting (3 nodes x 4
# nights per noise model, no 8-node fleets, no detection cells; a few
# seconds):
#   - the JSON's fa_big has both noise models, one fleet each, 12
#     node-nights of the fleet report, the history's node-nights a
#     positive multiple of 3 and at most 12, and the run's cost (seconds,
#     a night's files and the history database in bytes, all positive);
#   - the block (stdout, and --doc on a scratch file with the markers)
#     has a row per model for "3 nodes" and the cost line; --from-json
#     writes the same block, and also from a JSON without fa_big (an
#     earlier run's);
#   - --big-nights 0 measures no large fleet; --big-nodes 1 exits 2 naming
#     the option;
#   - the reasons column names the kind of device (cpu, gpu) and the drain
#     candidates' reasons.
# Prints "ok NAME", "not ok NAME: why" or "skip NAME: why".
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env
TMP=$(mktemp -d /tmp/ch_measure_detection.XXXXXX)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$TMP"' EXIT
if [ ! -x "$B/health_report" ]; then
	echo "skip measure_detection: $B/health_report is not built"
	exit 0
fi
MD=scripts/measure-detection
printf 'before\n<!-- detection:begin -->\nold\n<!-- detection:end -->\nafter\n' >"$TMP/doc.md"
B=$B $MD --big-nodes 3 --big-nights 4 --fa-seeds 0 --seeds 0 --rev test --json "$TMP/m.json" \
	--doc "$TMP/doc.md" >"$TMP/out.md" 2>"$TMP/err"
rc=$?
if [ $rc != 0 ]; then
	echo "not ok measure_detection_big_fleets: exited $rc: $(tail -1 "$TMP/err")"
	exit 0
fi
got=$(python3 - "$TMP/m.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
big = m.get("fa_big", {})
bad = []
for noise in ("gauss", "t3"):
    c = big.get(noise)
    if not c:
        bad.append("no %s" % noise)
        continue
    if c["fleets"] != 1 or c["rep_nn"] != 12 or not (0 < c["hist_nn"] <= 12 and c["hist_nn"] % 3 == 0):
        bad.append("%s: %d fleets, %d fleet-report and %d history node-nights" % (
            noise, c["fleets"], c["rep_nn"], c["hist_nn"]))
    if not (c["seconds"] > 0 and c["night_bytes"] > 0 and c["db_bytes"] > 0):
        bad.append("%s: cost %r s, %r and %r bytes" % (noise, c["seconds"], c["night_bytes"], c["db_bytes"]))
if m["fa"]:
    bad.append("8-node fleets measured with --fa-seeds 0")
print("; ".join(bad) or "ok")
PY
)
[ "$got" = ok ] && echo "ok measure_detection_big_fleets" || echo "not ok measure_detection_big_fleets: $got"
if grep -q '^| 3 nodes | Gaussian 3% | ' "$TMP/out.md" && grep -q '^| 3 nodes | Student t3, sd 3% | ' "$TMP/out.md" &&
	grep -q "^The 3-node fleets' cost (this run, --jobs 2): " "$TMP/out.md" &&
	grep -q '^| 3 nodes | Student t3' "$TMP/doc.md" && [ "$(head -1 "$TMP/doc.md")" = before ] &&
	[ "$(tail -1 "$TMP/doc.md")" = after ] && ! grep -qx old "$TMP/doc.md"; then
	echo "ok measure_detection_big_rows"
else
	echo "not ok measure_detection_big_rows: no '3 nodes' rows or cost line in the block or in --doc's file"
fi
$MD --from-json "$TMP/m.json" --rev test >"$TMP/again.md" 2>&1
python3 -c 'import json, sys; m = json.load(open(sys.argv[1])); m.pop("fa_big"); json.dump(m, open(sys.argv[2], "w"))' \
	"$TMP/m.json" "$TMP/old.json"
if cmp -s "$TMP/out.md" "$TMP/again.md" && $MD --from-json "$TMP/old.json" >"$TMP/old.md" 2>&1 &&
	! grep -q '3 nodes' "$TMP/old.md"; then
	echo "ok measure_detection_from_json"
else
	echo "not ok measure_detection_from_json: --from-json wrote another block, or failed on a JSON without fa_big: $(tail -1 "$TMP/old.md")"
fi
B=$B $MD --big-nights 0 --fa-seeds 0 --seeds 0 --json "$TMP/z.json" >/dev/null 2>&1
z=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["fa_big"])' "$TMP/z.json" 2>&1)
[ "$z" = "{}" ] && echo "ok measure_detection_big_nights_0" || echo "not ok measure_detection_big_nights_0: fa_big $z"
$MD --big-nodes 1 >"$TMP/bad" 2>&1
rc=$?
[ $rc = 2 ] && grep -q -- '--big-nodes at least 2' "$TMP/bad" && echo "ok measure_detection_bad_big_nodes" ||
	echo "not ok measure_detection_bad_big_nodes: exit $rc: $(tail -1 "$TMP/bad")"
got=$(python3 - <<'PY'
from importlib.machinery import SourceFileLoader
import sys
sys.argv = ["measure-detection"]
md = SourceFileLoader("md", "scripts/measure-detection").load_module()
keys = [md.reason_key({"code": "compute_low", "subject": "cpu"}), md.reason_key({"code": "memory_low", "subject": "gpu3"}),
        md.reason_key({"code": "slow_pair", "subject": "pair0-1"})]
cell = md.reasons_cell({"codes": {"compute_low cpu": 3, "memory_low gpu": 1}, "drain_codes": {"memory_low gpu": 1}})
print(keys == ["compute_low cpu", "memory_low gpu", "slow_pair"] and
      cell == "compute_low cpu 3, memory_low gpu 1; drain candidates: memory_low gpu 1" or "%r %r" % (keys, cell))
PY
)
[ "$got" = True ] && echo "ok measure_detection_reasons_column" || echo "not ok measure_detection_reasons_column: $got"
# bad values of the other options: exit 2 naming them (a negative count
# wrote "-3 fleets per cell" into the block, --jobs 0 and --sizes abc
# raised a Python traceback, --from-json of a missing file too)
bad=""
for args in "--seeds -3" "--fa-seeds -1" "--jobs 0" "--sizes abc" "--sizes 0" "--sigmas -1" "--kinds , --seeds 2" \
	"--from-json $TMP/none.json"; do
	# shellcheck disable=SC2086
	$MD $args >"$TMP/bad" 2>&1
	rc=$?
	{ [ $rc = 2 ] && grep -q '^measure-detection: error: ' "$TMP/bad" && ! grep -q Traceback "$TMP/bad"; } ||
		bad="$bad [$args: exit $rc: $(tail -1 "$TMP/bad")]"
done
[ -z "$bad" ] && echo "ok measure_detection_bad_options" || echo "not ok measure_detection_bad_options:$bad"
exit 0
