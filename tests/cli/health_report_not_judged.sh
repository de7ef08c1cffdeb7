#!/bin/bash
# health_report_not_judged.sh - a node is PASS only when one of its
# performance checks was judged (device roofs, fabric busbw and curve shape,
# loader, checkpoint speed against its peers); else NOT JUDGED, with why in
# every output. A result file whose status is "unavailable" (no device or
# backend: tests/data/report/unavailable, real outputs of allreduce_bw
# --backend nccl, allreduce_bw -g 8 and roofline --backend cuda on a machine
# without a GPU) is read as such: not a skipped input, its tool and reason
# named. docs/health_report.md, "Verdicts".
# Prints "ok NAME", "not ok NAME: why" or "skip NAME: why".
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env
HR=$B/health_report
U=tests/data/report/unavailable
L=tests/data/report/labelled-healthy
TMP=$(mktemp -d /tmp/ch_hr_nj.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
if [ ! -x "$HR" ]; then
	echo "skip health_report_not_judged: $HR is not built"
	exit 0
fi

# check NAME OUT RC PYTHON: runs PYTHON (p: profile.json, md, html, term:
# the outputs' text, rc: the exit status) and prints ok/not ok NAME
check() {
	local name=$1 out=$2 rc=$3 py=$4 why
	if why=$(python3 - "$out" "$rc" "$py" 2>&1 <<'PY'
import json, sys
out, rc, code = sys.argv[1], int(sys.argv[2]), sys.argv[3]
p = json.load(open(out + "/profile.json"))
md = open(out + "/report.md").read()
html = open(out + "/report.html").read()
term = open(out + ".txt").read()
nodes = {n["name"]: n for n in p["nodes"]}
exec(code)
PY
	); then
		echo "ok $name"
	else
		echo "not ok $name: $(echo "$why" | tail -3 | tr '\n' ' ')"
	fi
}

run() { # run NAME INPUTS...: the report of INPUTS into $TMP/NAME
	local out=$TMP/$1
	shift
	"$HR" --out "$out" "$@" >"$out.txt" 2>&1
	echo $?
}

# 1. only unavailable files: NOT JUDGED, each tool's own reason shown in
# the terminal, report.md and report.html; not an input problem
rc=$(run unav $U)
check health_report_not_judged_unavailable_only $TMP/unav $rc '
assert rc == 0, rc
n = nodes["vm"]
assert n["verdict"] == "NOT JUDGED", n["verdict"]
why = n["not_judged_reason"]
assert why.startswith("no performance check could be judged: allreduce_bw: unavailable: backend nccl unavailable: no CUDA device: "), why
assert "roofline: unavailable: cuda backend unavailable: no CUDA device: " in why, why
assert p["inputs"]["skipped"] == 0 and not [i for i in p["inputs"]["issues"] if i["kind"] == "skipped"], p["inputs"]
assert p["summary"]["not_judged"] == 1 and p["summary"]["pass"] == 0 and p["summary"]["verdict"] == "NOT JUDGED"
line = [l for l in term.splitlines() if l.startswith("NOT JUDGED  vm")][0]
assert line.split(None, 3)[3].startswith("no performance check could be judged: allreduce_bw: unavailable: backend nccl"), line
assert line.count("allreduce_bw: unavailable") == 1, line  # two files, one reason: said once
assert ": skipped:" not in term and "missing" not in term and "0 input problems skipped" in term, term
row = [l for l in md.splitlines() if l.startswith("| NOT JUDGED | vm |")][0]
assert "**not judged** no performance check could be judged: allreduce_bw: unavailable: backend nccl" in row, row
assert "missing" not in md
assert "not judged</span> no performance check could be judged: allreduce_bw: unavailable: backend nccl" in html
'

# 2. a good roofline and an unavailable allreduce_bw of the same node:
# judged on the roofline (PASS), the unavailable tool named
python3 - $U/allreduce_bw_nccl.json $TMP/ar.json <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["host"]["hostname"] = "node01"
json.dump(d, open(sys.argv[2], "w"))
PY
rc=$(run good_unav $L/node01/roofline.json $TMP/ar.json)
check health_report_not_judged_good_and_unavailable $TMP/good_unav $rc '
assert rc == 0, rc
n = nodes["node01"]
assert n["verdict"] == "PASS" and n["not_judged_reason"] is None, (n["verdict"], n["not_judged_reason"])
assert n["performance_checks_judged"] > 0
u = [r for r in n["reasons"] if r["code"] == "unavailable"]
assert len(u) == 1 and u[0]["text"].startswith("allreduce_bw: unavailable: backend nccl unavailable"), u
assert p["inputs"]["skipped"] == 0, p["inputs"]
line = [l for l in term.splitlines() if l.startswith("PASS  node01")][0]
assert "allreduce_bw: unavailable: backend nccl" in line, line
row = [l for l in md.splitlines() if l.startswith("| PASS | node01 |")][0]
assert "allreduce_bw: unavailable: backend nccl" in row, row
'

# 3. a real sweep of the busy build machine: every performance check noisy,
# only the checkpoint read-back judged: NOT JUDGED, saying why
rc=$(run noisy tests/data/sweeps-buildhost/vm/20261205T063314Z)
check health_report_not_judged_all_noisy $TMP/noisy $rc '
assert rc == 0, rc
n = nodes["vm"]
assert n["verdict"] == "NOT JUDGED", n["verdict"]
assert n["checks_judged"] == 1 and n["performance_checks_judged"] == 0 and n["checks_noisy"] == 7
why = n["not_judged_reason"]
assert why.startswith("no performance check could be judged: 7 noisy (cpu memory roof: host CPU pressure 27%"), why
assert why.endswith("; and more; re-run on an idle node)"), why
s = p["summary"]
assert (s["verdict"], s["pass"], s["not_judged"]) == ("NOT JUDGED", 0, 1), s
line = [l for l in term.splitlines() if l.startswith("NOT JUDGED  vm")][0]
assert "no performance check could be judged: 7 noisy (cpu memory roof" in line, line
row = [l for l in md.splitlines() if l.startswith("| NOT JUDGED | vm |")][0]
assert "**not judged** no performance check could be judged: 7 noisy" in row, row
assert "not judged</span> no performance check could be judged: 7 noisy" in html
'

# 4. a checkpoint alone: its read-back judged, its speed not (no peers on
# the mount): NOT JUDGED; with a peer on the mount the speed is judged: PASS
rc=$(run ckpt1 $L/node01/checkpoint_io.json)
check health_report_not_judged_read_back_only $TMP/ckpt1 $rc '
assert rc == 0, rc
n = nodes["node01"]
assert n["verdict"] == "NOT JUDGED" and n["checks_judged"] == 1 and n["performance_checks_judged"] == 0, n["verdict"]
assert n["not_judged_reason"] == "no performance check could be judged: 1 without a reference to judge against (checkpoint speed not judged (no peers on its mount))", n["not_judged_reason"]
'
rc=$(run ckpt2 $L/node01/checkpoint_io.json $L/node02/checkpoint_io.json)
check health_report_not_judged_one_judged_pass $TMP/ckpt2 $rc '
assert rc == 0, rc
for k in ("node01", "node02"):
    n = nodes[k]
    assert n["verdict"] == "PASS" and n["performance_checks_judged"] == 1 and n["not_judged_reason"] is None, n
assert p["summary"]["verdict"] == "PASS" and p["summary"]["pass"] == 2
'
exit 0
