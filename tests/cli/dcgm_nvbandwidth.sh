#!/bin/bash
# dcgm_nvbandwidth.sh - DCGM's diagnostic results (`dcgmi diag -j`) and
# nvbandwidth's (`nvbandwidth -j`) as health_report inputs, on the real
# samples of tests/data/dcgm and tests/data/nvbandwidth (sources in their
# READMEs): a DCGM Fail is a FAIL of that GPU naming the test and DCGM's
# message, Warn a WARN, Pass/Skip no finding; the node is the file's folder;
# unknown layouts and statuses are named as unreadable, never judged.
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env
HR=$B/health_report
[ -x "$HR" ] || { echo "skip dcgm_nvbandwidth: $HR not built"; exit 0; }
T=$(mktemp -d "${TMPDIR:-/tmp}/ch_dcgm.XXXXXX")
trap 'rm -rf "$T"' EXIT
D=tests/data/dcgm

# the DCGM layouts: 3.x per-GPU strings with Fail, 4.2.3 (GB10), 3.1.0 (all Pass, nulls, integer ids), 3.3 (gpu_id, Skip)
mkdir -p "$T/in/node-a" "$T/in/node-b" "$T/in/node-c" "$T/in/node-d"
cp "$D/dcgm-per-gpu-strings.json" "$T/in/node-a/dcgm.json"
cp "$D/dcgm-4.2.3-gb10.json" "$T/in/node-b/diag.json"
cp "$D/dcgm-3.1.0-pass.json" "$T/in/node-c/diag.json"
cp "$D/dcgm-3.3-skip-t400.json" "$T/in/node-d/diag.json"
"$HR" --out "$T/o1" "$T/in" >"$T/o1.txt" 2>&1
check "dcgm: a DCGM Fail makes the report exit 1" [ $? -eq 1 ]
check "dcgm: every layout read, the Fails and Warns named by test, GPU and DCGM's message" python3 - "$T/o1/profile.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
nodes = {n["name"]: n for n in p["nodes"]}
assert set(nodes) == {"node-a", "node-b", "node-c", "node-d"}, set(nodes)
def reasons(n, code):
    return [r for r in nodes[n]["reasons"] if r["code"] == code]
a = reasons("node-a", "dcgm_diag_fail")
assert sorted(r["subject"] for r in a) == ["gpu0", "gpu2", "gpu3"], a
assert all("sm_stress" in r["text"] and "did not exceed desired stress level" in r["text"] for r in a), a
assert nodes["node-a"]["verdict"] == "FAIL"
b = reasons("node-b", "dcgm_diag_fail")
assert len(b) == 1 and b[0]["subject"] == "gpu0" and "Persistence mode for GPU 0 is disabled" in b[0]["text"], b
assert "4.2.3" in b[0]["text"] and b[0]["source"].endswith("node-b/diag.json"), b
for n in ("node-c", "node-d"):  # all Pass; all Skip: no DCGM finding, never PASS from DCGM alone
    assert not [r for r in nodes[n]["reasons"] if r["code"].startswith("dcgm_")], nodes[n]["reasons"]
    assert nodes[n]["verdict"] != "FAIL", nodes[n]
PY
check "dcgm: no input problem on the real samples" grep -q '0 input problems skipped' "$T/o1.txt"

# a Warn is a WARN; a result never written (no test_categories), a status DCGM
# does not print and a warning of another shape are named unreadable
mkdir -p "$T/bad/node-w" "$T/bad/node-x" "$T/bad/node-y"
python3 - "$T/bad" <<'PY'
import json, sys
d = sys.argv[1]
doc = json.load(open("tests/data/dcgm/dcgm-4.2.3-gb10.json"))
r = doc["DCGM Diagnostic"]["test_categories"][0]["tests"][0]["results"][0]
r["status"] = "Warn"
json.dump(doc, open(d + "/node-w/dcgm.json", "w"))
json.dump({"DCGM Diagnostic": {}, "metadata": {"version": "9.9.9"}}, open(d + "/node-x/dcgm.json", "w"))
r["status"] = "Inconclusive"
doc["DCGM Diagnostic"]["test_categories"][0]["tests"].append(
    {"name": "memory", "results": [{"entity_id": 1, "status": "Fail", "warnings": [42]}]})
json.dump(doc, open(d + "/node-y/dcgm.json", "w"))
PY
"$HR" --out "$T/o2" "$T/bad" >"$T/o2.txt" 2>&1
check "dcgm: a Warn alone exits 0 (WARN is not a failure of the run)" [ $? -eq 0 ]
check "dcgm: Warn a WARN; unknown layout, status and warning named unreadable, not judged" python3 - "$T/o2/profile.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
nodes = {n["name"]: n for n in p["nodes"]}
w = [r for r in nodes["node-w"]["reasons"] if r["code"] == "dcgm_diag_warn"]
assert len(w) == 1 and w[0]["level"] == "warn" and nodes["node-w"]["verdict"] == "WARN", nodes["node-w"]
assert "node-x" not in nodes  # a file never judged makes no node
assert not [r for r in nodes.get("node-y", {"reasons": []})["reasons"] if r["code"].startswith("dcgm_")]
issues = " ".join(i["message"] for i in p["input_problems"]) if "input_problems" in p else json.dumps(p)
assert "9.9.9" in issues and "unreadable" in issues, issues
assert "Inconclusive" not in issues or "status" in issues
PY
check "dcgm: the unreadable parts are printed, naming the version" grep -q 'DCGM 9.9.9.*unreadable' "$T/o2.txt"
check "dcgm: an unknown status is named" grep -q 'without a status DCGM prints' "$T/o2.txt"
check "dcgm: the node is the file's folder" python3 -c "
import json; p=json.load(open('$T/o1/profile.json')); assert 'node-b' in [n['name'] for n in p['nodes']]"
