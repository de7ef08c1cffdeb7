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

# nvbandwidth: the real v0.5 sample (one GPU, no device list: the node is
# the folder) beside node01's roofline result, whose inventory gives gpu0's
# link (Gen5 x16: 53.6 GB/s expected): its 12.4 / 13.2 GB/s are a FAIL
N=tests/data/nvbandwidth/nvbandwidth-v0.5-1gpu.json
mkdir -p "$T/nv/node01" "$T/nv/node09" "$T/nv/node02" "$T/nv/elsewhere"
cp tests/data/report/fleet-inventory/healthy/node01/roofline.json "$T/nv/node01/"
cp "$N" "$T/nv/node01/nvbw.json"
cp "$N" "$T/nv/node09/nvbw.json"
python3 - "$T/nv" "$N" <<'PY'
import json, sys
d, src = sys.argv[1], sys.argv[2]
# node02: a roofline result whose inventory says GPU index 1 (0000:28:00.0) trained to x8
r = json.load(open("tests/data/report/fleet-inventory/healthy/node01/roofline.json"))
r["host"]["hostname"] = "node02"
r["host"]["inventory"]["gpus"][1]["pcie"]["width_current"] = 8
json.dump(r, open(d + "/node02/roofline.json", "w"))
# node02's nvbandwidth run, kept in another folder: the device list names the host and
# the PCI addresses (device 0 is the inventory's index 1), with a device-to-device matrix
n = json.load(open(src))
nv = n["nvbandwidth"]
nv["GPU Device list"] = ["0: NVIDIA H100 80GB HBM3 (00000000:28:00): (node02)",
                         "1: NVIDIA H100 80GB HBM3 (00000000:18:00): (node02)"]
for c in nv["testcases"]:
    if c["name"] == "host_to_device_memcpy_ce":
        c["bandwidth_matrix"] = [["45.1", "52.0"]]
    if c["name"] == "device_to_host_memcpy_ce":
        c["bandwidth_matrix"] = [["46.0", "N/A"]]
    if c["name"] == "device_to_device_memcpy_read_ce":
        c.update(status="Passed", bandwidth_description="memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)",
                 bandwidth_matrix=[["N/A", "376.5"], ["377.1", "N/A"]])
    if c["name"] == "device_to_device_memcpy_write_ce":
        c.update(status="Passed", bandwidth_matrix=[["N/A", "1e"], ["2", "N/A"]])  # one wrong cell
json.dump(n, open(d + "/elsewhere/nvbw.json", "w"))
PY
"$HR" --out "$T/o3" "$T/nv" >"$T/o3.txt" 2>&1
check "nvbandwidth: a host link far below its expectation makes the report exit 1" [ $? -eq 1 ]
check "nvbandwidth: judged as roofline's host link where the inventory gives the link, else listed" python3 - "$T/o3/profile.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
nodes = {n["name"]: n for n in p["nodes"]}
assert "elsewhere" not in nodes, set(nodes)  # the device list's host wins over the folder
def rs(n, code):
    return [r for r in nodes[n]["reasons"] if r["code"] == code]
a = rs("node01", "nvbw_host_link_low")
assert len(a) == 1 and a[0]["level"] == "fail" and a[0]["subject"] == "gpu0", a
assert "12.4 GB/s host to device" in a[0]["text"] and "53.6" in a[0]["text"] and "Gen5 x16" in a[0]["text"], a
nj = rs("node09", "nvbw_host_link_not_judged")
assert len(nj) == 1 and "12.40" in nj[0]["text"] and "inventory gives no PCIe link" in nj[0]["text"], nj
assert not rs("node09", "nvbw_host_link_low")
# node02: device 0 (the x8 GPU by its PCI address) at 45.1 GB/s is 0.84 of 53.6, at or above
# 0.80: no finding (the rule must not fire); device 1 has no device-to-host figure: not judged
b = rs("node02", "nvbw_host_link_low")
assert not b, b
nj2 = rs("node02", "nvbw_host_link_not_judged")
assert len(nj2) == 1 and nj2[0]["subject"] == "gpu1" and "no figure" in nj2[0]["text"], nj2
d2d = [r for r in rs("node02", "nvbw_d2d") if "memcpy_read_ce" in r["text"]]
assert len(d2d) == 1 and "0->1 376.5" in d2d[0]["text"] and "1->0 377.1" in d2d[0]["text"], d2d
# the write matrix's wrong cell skipped, its other figure shown
w = [r for r in rs("node02", "nvbw_d2d") if "memcpy_write_ce" in r["text"]]
assert len(w) == 1 and "1->0 2.0" in w[0]["text"] and "0->1" not in w[0]["text"], w
PY
check "nvbandwidth: a wrong matrix cell is skipped and named" grep -q "nvbandwidth JSON (v0.5): 1 matrix cell(s) not a figure .*device_to_device_memcpy_write_ce\[0\]\[1\] '1e'" "$T/o3.txt"

# the same node02 with device 0 at 40 GB/s: below 0.80 with its link at x8 of x16 is a FAIL
# (matched by PCI address: by index it would be the x16 GPU, a WARN)
python3 - "$T/nv/elsewhere/nvbw.json" <<'PY'
import json, sys
n = json.load(open(sys.argv[1]))
for c in n["nvbandwidth"]["testcases"]:
    if c["name"] == "host_to_device_memcpy_ce":
        c["bandwidth_matrix"] = [["40.0", "52.0"]]
json.dump(n, open(sys.argv[1], "w"))
PY
"$HR" --out "$T/o4" "$T/nv" >/dev/null 2>&1
check "nvbandwidth: the GPU matched by its PCI address, its narrow link a FAIL" python3 - "$T/o4/profile.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
n = [n for n in p["nodes"] if n["name"] == "node02"][0]
b = [r for r in n["reasons"] if r["code"] == "nvbw_host_link_low"]
assert len(b) == 1 and b[0]["level"] == "fail" and b[0]["subject"] == "gpu0" and "narrower" in b[0]["text"], b
PY

# in a sweep's folder (results/HOST/STAMP/) beside a result file of ours, a
# DCGM file and an nvbandwidth file without a device list are that host's,
# not the stamp's
S="$T/sweep/node01/20261206T010000Z"
mkdir -p "$S"
cp tests/data/report/fleet-inventory/healthy/node01/roofline.json "$S/"
cp "$D/dcgm-4.2.3-gb10.json" "$S/dcgm.json"
cp "$N" "$S/nvbw.json"
"$HR" --out "$T/o5" "$T/sweep" >/dev/null 2>&1
check "dcgm/nvbandwidth: in a sweep's folder, on the host of the result file beside them" python3 - "$T/o5/profile.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
names = [n["name"] for n in p["nodes"]]
assert names == ["node01"], names
codes = {r["code"] for r in p["nodes"][0]["reasons"]}
assert {"dcgm_diag_fail", "nvbw_host_link_low"} <= codes, codes
PY

# a DCGM file none of whose results can be read gave nothing: skipped whole,
# and alone it is no usable input (exit 2, docs/health_report.md "Exit status")
mkdir -p "$T/allbad/node-z"
python3 - "$T/allbad/node-z/dcgm.json" <<'PY'
import json, sys
doc = json.load(open("tests/data/dcgm/dcgm-4.2.3-gb10.json"))
for cat in doc["DCGM Diagnostic"]["test_categories"]:
    for t in cat["tests"]:
        for r in t.get("results") or []:
            r["status"] = "Inconclusive"
json.dump(doc, open(sys.argv[1], "w"))
PY
"$HR" --out "$T/o6" "$T/allbad" >"$T/o6.txt" 2>&1; rc=$?
check "dcgm: a file of which no result can be read is skipped whole: exit 2" \
	grep -q 'every part unreadable .*without a status DCGM prints.*file skipped' "$T/o6.txt"
check "dcgm: ... and alone exits 2 (no usable input), not 0" [ $rc -eq 2 ]

# GPU lists that are not GPU indices are refused, naming the value; the
# file's other results are used
mkdir -p "$T/ids/node-i"
python3 - "$T/ids/node-i/dcgm.json" <<'PY'
import json, sys
doc = json.load(open("tests/data/dcgm/dcgm-per-gpu-strings.json"))
root = doc.get("DCGM GPU Diagnostic") or doc["DCGM Diagnostic"]
res = [r for c in root["test_categories"] for t in c["tests"] if t for r in t["results"]]
bad = ["-1", "0,,1,x", "7x", "99999", -3]
for r, v in zip(res, bad):
    for k in ("gpu_ids", "gpu_id", "entity_id"):
        r.pop(k, None)
    r["gpu_ids"] = v
json.dump(doc, open(sys.argv[1], "w"))
PY
"$HR" --out "$T/o7" "$T/ids" >"$T/o7.txt" 2>&1
check "dcgm: gpu_ids '-1', '0,,1,x', '7x', '99999', -3 refused with the value named, the rest used" python3 - "$T/o7/profile.json" "$T/o7.txt" <<'PY'
import json, re, sys
out = open(sys.argv[2]).read()
assert re.search(r"5 part\(s\) unreadable, first: a result whose GPUs '-1' are not GPU indices \(whole numbers 0 to 4095, comma-separated\)", out), out
p = json.load(open(sys.argv[1]))
subjects = [r["subject"] for n in p["nodes"] for r in n["reasons"] if r["code"].startswith("dcgm_")]
assert not [s for s in subjects if re.search(r"-|x|,,|99999", s)], subjects
PY

# nvbandwidth cells that are no figure ("-5", "0x10", "1e308", a number
# -2, "inf") are skipped, counted and named, never used or printed; "N/A"
# off the diagonal is counted as not measured
mkdir -p "$T/cells/node01"
cp tests/data/report/fleet-inventory/healthy/node01/roofline.json "$T/cells/node01/"
python3 - "$N" "$T/cells/node01/nvbw.json" <<'PY'
import json, sys
n = json.load(open(sys.argv[1]))
for c in n["nvbandwidth"]["testcases"]:
    if c["name"] == "host_to_device_memcpy_ce":
        c["bandwidth_matrix"] = [["-5"]]
    if c["name"] == "device_to_host_memcpy_ce":
        c["bandwidth_matrix"] = [["0x10"]]
    if c["name"] == "device_to_device_memcpy_read_ce":
        c.update(status="Passed", bandwidth_matrix=[["N/A", "1e308"], [-2, "N/A"]])
    if c["name"] == "device_to_device_memcpy_write_ce":
        c.update(status="Passed", bandwidth_matrix=[["N/A", "inf"], ["N/A", "N/A"]])
json.dump(n, open(sys.argv[2], "w"))
PY
"$HR" --out "$T/o8" "$T/cells" >"$T/o8.txt" 2>&1
check "nvbandwidth: '-5', '0x10', '1e308', -2, 'inf' skipped and named; N/A counted; none used or printed" python3 - "$T/o8/profile.json" "$T/o8.txt" <<'PY'
import json, re, sys
out = open(sys.argv[2]).read()
assert re.search(r"5 matrix cell\(s\) not a figure .*host_to_device_memcpy_ce\[0\]\[0\] '-5', device_to_host_memcpy_ce\[0\]\[0\] '0x10', device_to_device_memcpy_read_ce\[0\]\[1\] '1e308', \.\.\.", out), out
assert re.search(r"1 matrix cell\(s\) \"N/A\"", out), out
p = json.load(open(sys.argv[1]))
n = [n for n in p["nodes"] if n["name"] == "node01"][0]
texts = " ".join(r["text"] for r in n["reasons"] if r["code"].startswith("nvbw"))
assert not re.search(r"(^|[^0-9.])-5|16\.0|1e\+?308|-2|inf|nan", texts), texts
nj = [r for r in n["reasons"] if r["code"] == "nvbw_host_link_not_judged"]
assert len(nj) == 1 and not [r for r in n["reasons"] if r["code"] == "nvbw_host_link_low"], n["reasons"]
PY
