#!/bin/bash
# kernel_log_report.sh - health_report judges kernel_log result files (the
# kernel-log family, report/judge/hr_rule_xid.c; docs/health_report.md and
# docs/xid.md): a fleet of five stand-in nodes, each with a kernel_log file
# of one fixture of tests/data/kernel-log read with the stand-in node's
# inventory (the fake NVML's GPUs; its own hardware faults are left out of
# the fleet): every fatal Xid of the table is a FAIL and a drain
# candidate without a re-run, the application's Xids 13, 31, 43 inform, link
# flaps, SXid and AER as the table says; a clean log fires nothing; a wrong
# fault and a result never written are input problems, never a verdict.
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env
HR=$B/health_report
K=tests/data/kernel-log
TMP=$(mktemp -d /tmp/ch_kernel_log_report.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
ok() { echo "ok $1"; }
nok() { echo "not ok $1: $2"; [ -n "${3:-}" ] && [ -f "$3" ] && sed 's/^/    /' "$3" | tail -30; }
if [ ! -x "$HR" ] || [ ! -x "$B/roofline" ] || [ ! -e "$B/tests/fake-nvml/libnvidia-ml.so.1" ]; then
	echo "skip kernel_log_report: $HR, $B/roofline or the fake NVML is not built (make test builds them)"
	exit 0
fi
INV=$TMP/inv.json
LD_LIBRARY_PATH=$B/tests/fake-nvml CH_SYSFS_ROOT=tests/data/sysfs/hgx-ndr8 "$B/roofline" --backend cpu \
	--kernels triad --size 1M --iters 2 --confirm 0 --json "$INV" -q >"$TMP/inv.out" 2>&1 ||
	{ nok kernel_log_report_inventory "roofline failed" "$TMP/inv.out"; exit 0; }
# the application's Xids alone, and a clean log
grep -E '\): (13|31|43), ' $K/every-class.log >"$TMP/app.log"
grep -v 'Xid' $K/off-bus-multiline.log | grep -v 'fallen off' >"$TMP/clean.log"
echo 'kernel: [  1.0] Linux version 6.1.0' >>"$TMP/clean.log"
# hostname NAME FILE: the result file FILE as node NAME's
hostname_of() {
	python3 - "$1" "$2" <<'PY'
import json, os, sys
p = sys.argv[2]; d = json.load(open(p)); d["host"]["hostname"] = sys.argv[1]
json.dump(d, open(p + ".tmp", "w")); os.replace(p + ".tmp", p)
PY
}
mkdir -p "$TMP/fleet"
for n in n1:$K/every-class.log n2:$TMP/app.log n3:$K/h100-node-journal.log n4:$K/nvswitch-aer-kmsg.log n5:$TMP/clean.log; do
	node=${n%%:*} log=${n#*:}
	"$HR" kernel-log --kernel-log "$log" --inventory "$INV" --now 2026-12-06T03:00:00Z \
		--json "$TMP/fleet/kl-$node.json" >"$TMP/kl-$node.out" 2>&1
	hostname_of "$node" "$TMP/fleet/kl-$node.json"
done
"$HR" --out "$TMP/out" "$TMP/fleet" >"$TMP/report.out" 2>&1; rc=$?
sed -n '/xid-table:begin/,/xid-table:end/p' docs/xid.md | sed '1d;$d' >"$TMP/xid.md"
python3 - "$TMP/out/profile.json" "$TMP/xid.md" <<'PY' >"$TMP/check" 2>&1
import json, re, sys
p = json.load(open(sys.argv[1]))
rows = [l.split("|") for l in open(sys.argv[2]) if re.match(r"\| \d+ \|", l)]
nodes = {n["name"]: n for n in p["nodes"]}
bad = []
def reasons(node, code):
    return [r for r in nodes[node]["reasons"] if r["code"] == code]
# n1: every code of the table, each judged as its action says
for r in rows:
    code, action, meaning = int(r[1]), r[5].strip(), r[3].strip()
    want = "xid_fault" if action in ("reset", "drain", "reboot") else "xid_info"
    hit = [x for x in reasons("n1", want) if re.search(r": Xid %d " % code, x["text"])]
    if len(hit) != 1:
        bad.append("n1 Xid %d (%s): %d %s reasons" % (code, action, len(hit), want)); continue
    x = hit[0]
    if want == "xid_fault" and (x["level"] != "fail" or not x["drain"] or not x["action"]):
        bad.append("n1 Xid %d: %s" % (code, x))
    if want == "xid_info" and (x["level"] != "info" or x["drain"]):
        bad.append("n1 Xid %d: %s" % (code, x))
    # the GPU (index and UUID), the code's meaning, the time, the source
    gpu = 0 if r[6].strip() == "no" else 1
    for part in ("GPU %d (GPU-00000000-0000-0000-0000-00000000000%d" % (gpu, gpu), "(%s)" % meaning,
                 "every-class.log", "seconds since boot", "source: NVIDIA Xid catalog"):
        if part not in x["text"]:
            bad.append("n1 Xid %d: no '%s' in %s" % (code, part, x["text"]))
if nodes["n1"]["verdict"] != "FAIL" or not nodes["n1"]["drain_candidate"]:
    bad.append("n1: %s, drain %s" % (nodes["n1"]["verdict"], nodes["n1"]["drain_candidate"]))
# n2: the application's Xids inform, nothing drains
codes = sorted(int(re.search(r": Xid (\d+) ", x["text"]).group(1)) for x in reasons("n2", "xid_info"))
if codes != [13, 31, 43] or nodes["n2"]["drain_candidate"] or nodes["n2"]["verdict"] == "FAIL" \
        or [x for x in nodes["n2"]["reasons"] if x["level"] != "info"]:
    bad.append("n2: %s %s %s" % (codes, nodes["n2"]["verdict"], nodes["n2"]["reasons"]))
# n3: Xid 79 at its wall time, 3 flaps (FAIL), a corrected AER error (info)
x79 = [x for x in reasons("n3", "xid_fault") if ": Xid 79 " in x["text"]]
if len(x79) != 1 or "at 2026-12-06T02:14:07Z" not in x79[0]["text"] or "2 lines" not in x79[0]["text"]:
    bad.append("n3 Xid 79: %s" % x79)
fl = reasons("n3", "link_flap")
if len(fl) != 1 or fl[0]["level"] != "fail" or not fl[0]["drain"] or "link down 3 times" not in fl[0]["text"]:
    bad.append("n3 link_flap: %s" % fl)
ae = reasons("n3", "pcie_aer")
if len(ae) != 1 or ae[0]["level"] != "info" or "corrected" not in ae[0]["text"]:
    bad.append("n3 pcie_aer: %s" % ae)
# n4: a fatal SXid and a fatal AER error drain, the non-fatal SXid informs
sx = sorted(x["level"] for x in reasons("n4", "sxid"))
if sx != ["fail", "info"] or not nodes["n4"]["drain_candidate"]:
    bad.append("n4 sxid: %s" % reasons("n4", "sxid"))
if [x["level"] for x in reasons("n4", "pcie_aer")] != ["fail"]:
    bad.append("n4 pcie_aer: %s" % reasons("n4", "pcie_aer"))
# n5: a clean log fires nothing of the family, nor check_failed
kl = ("xid_fault", "xid_info", "sxid", "pcie_aer", "link_flap", "check_failed")
if [x for x in nodes["n5"]["reasons"] if x["code"] in kl] or nodes["n5"]["drain_candidate"]:
    bad.append("n5: %s" % nodes["n5"]["reasons"])
# the kernel_log files' failed status is explained by their faults
for n in nodes:
    if reasons(n, "check_failed"):
        bad.append("%s: check_failed %s" % (n, reasons(n, "check_failed")))
print("%d codes, %d nodes" % (len(rows), len(nodes)))
for b in bad: print(b)
sys.exit(1 if bad or len(rows) < 20 else 0)
PY
if [ $? = 0 ] && [ $rc = 1 ] && ! grep -q 'unknown tool' "$TMP/report.out"; then
	ok "kernel_log_report_verdicts ($(head -1 "$TMP/check"))"
else nok kernel_log_report_verdicts "exit $rc" "$TMP/check"; sed 's/^/    /' "$TMP/report.out" | head -20; fi
if grep -q '^drain candidates: n1 n3 n4$' "$TMP/report.out"; then ok kernel_log_report_drain_list
else nok kernel_log_report_drain_list "the drain list" "$TMP/report.out"; fi

# one wrong fault, and a result never written: input problems, not verdicts
mkdir -p "$TMP/bad"
python3 - "$TMP/fleet/kl-n1.json" "$TMP/bad" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
f = d["results"]["kernel_log"]["faults"]
f[0]["kind"] = "xyz"          # one wrong entry
f[1]["code"] = None           # a code never written
json.dump(d, open(sys.argv[2] + "/kl-wrong.json", "w"))
z = json.loads(json.dumps(d))
z["host"]["hostname"] = "n9"
z["results"]["kernel_log"] = {"faults": None}
json.dump(z, open(sys.argv[2] + "/kl-zero.json", "w"))
PY
"$HR" --out "$TMP/out2" "$TMP/bad" >"$TMP/bad.out" 2>&1; rc=$?
n=$(python3 -c "
import json,sys; p=json.load(open('$TMP/out2/profile.json'))
r=[x for n in p['nodes'] if n['name']=='n1' for x in n['reasons'] if x['code'] in ('xid_fault','xid_info')]
print(len(r))" 2>/dev/null)
if [ $rc = 1 ] && grep -q 'faults\[0\]: not a fault' "$TMP/bad.out" && grep -q 'faults\[1\]: not a fault' "$TMP/bad.out" &&
	grep -q "kl-zero.json.*no 'faults' array" "$TMP/bad.out" && [ "$n" = 20 ]; then
	ok kernel_log_report_bad_faults
else nok kernel_log_report_bad_faults "exit $rc, $n Xid reasons (want 20)" "$TMP/bad.out"; fi

# the history: Xids counted per night and node; a node with Xids on 2
# nights named (n1: fatal ones on nights 1 and 3), one night alone not (n2)
H=$TMP/hist && mkdir -p "$H"
python3 - "$TMP/fleet/kl-n1.json" "$H" <<'PY'
import json, sys
d = json.load(open(sys.argv[1])); f = d["results"]["kernel_log"]["faults"]
fatal = [g for g in f if g["action"] in ("reset", "drain", "reboot")][:2]
app = [g for g in f if g["kind"] == "xid" and g["code"] in (13, 31, 43)]
for night, n1, n2 in ((1, fatal, app), (2, [], []), (3, fatal[:1], [])):
    for host, faults in (("n1", n1), ("n2", n2)):
        x = json.loads(json.dumps(d)); x["host"]["hostname"] = host; x["results"]["kernel_log"]["faults"] = faults
        json.dump(x, open("%s/%s-%d.json" % (sys.argv[2], host, night), "w"))
PY
for i in 1 2 3; do
	"$HR" history --db "$H/h.db" --night 2026-12-0$i --json "$H/c$i.json" "$H/n1-$i.json" "$H/n2-$i.json" >"$H/out$i" 2>&1 || echo "exit $?" >>"$H/out$i"
done
if grep -q '^XID n1: Xids on 2 of the 3 nights its kernel log was read (2026-12-01: 2 fatal, 0 information; 2026-12-03: 1 fatal, 0 information)' "$H/out3" &&
	! grep -q '^XID n2' "$H/out3" && ! grep -q '^XID' "$H/out1" "$H/out2" &&
	python3 -c "
import json; k = json.load(open('$H/c3.json'))['kernel_log']
assert k['recurring'] == ['n1'] and k['nights_read'] == {'n1': 3, 'n2': 3}, k
n = {(e['node'], e['night']): (e['xid_fatal'], e['xid_info']) for e in k['per_night']}
assert n == {('n1', '2026-12-01'): (2, 0), ('n1', '2026-12-03'): (1, 0), ('n2', '2026-12-01'): (0, 3)}, n
"; then ok kernel_log_history_per_night
else nok kernel_log_history_per_night "the XID lines" "$H/out3"; fi
# a wrong fault: the file skipped, nothing recorded of it
python3 -c "
import json; d = json.load(open('$H/n1-1.json')); d['results']['kernel_log']['faults'][0]['code'] = None
json.dump(d, open('$H/wrong.json', 'w'))"
"$HR" history --db "$H/h.db" --night 2026-12-04 "$H/wrong.json" >"$H/out4" 2>&1; rc=$?
if [ $rc = 2 ] && grep -q 'faults\[0\]: expected a fault' "$H/out4"; then ok kernel_log_history_wrong_fault
else nok kernel_log_history_wrong_fault "exit $rc" "$H/out4"; fi

# the fault lines kernel-log skipped for an impossible time are said in the
# fleet report (terminal and report.md), not taken for a clean log
printf '[Mon Feb 30 02:14:07 2026] NVRM: Xid (PCI:0000:43:00): 79, pid=0, GPU has fallen off the bus.\n[Sun Dec  6 25:14:07 2026] NVRM: Xid (PCI:0000:43:00): 48, pid=0, DBE\n[    5.0] kernel: Linux version 6.1.0\n' >"$TMP/badtime.log"
mkdir -p "$TMP/bt"
"$HR" kernel-log --kernel-log "$TMP/badtime.log" --inventory "$INV" --now 2026-12-06T03:00:00Z --json "$TMP/bt/kl.json" >/dev/null 2>&1
"$HR" --out "$TMP/btout" "$TMP/bt" >"$TMP/bt.out" 2>&1; rc=$?
if grep -q '2 kernel-log lines with an unreadable time skipped' "$TMP/bt.out" &&
	grep -q '2 kernel-log lines with an unreadable time skipped' "$TMP/btout/report.md"; then
	ok "kernel_log_report_says_lines_with_an_unreadable_time (exit $rc; $(grep -m1 -o '2 kernel-log lines with an unreadable time skipped' "$TMP/bt.out"))"
else nok kernel_log_report_says_lines_with_an_unreadable_time "exit $rc; not in the terminal or report.md" "$TMP/bt.out"; fi

# fault lines past the tool's 65536 devices and codes (counted together,
# their worst action kept) are said in the fleet report, with that action
python3 -c 'import sys
for c in range(100000, 165600): print("[ 10.0] NVRM: Xid (PCI:0000:43:00): %d, pid=1, unknown" % c)
print("[ 11.0] NVRM: Xid (PCI:0000:43:00): 79, pid=0, GPU has fallen off the bus.")' >"$TMP/over.log"
mkdir -p "$TMP/ov"
"$HR" kernel-log --kernel-log "$TMP/over.log" --json "$TMP/ov/kl.json" >/dev/null 2>&1
"$HR" --out "$TMP/ovout" "$TMP/ov" >"$TMP/ov.out" 2>&1; rc=$?
if grep -q '65 kernel-log fault lines past the tool.s first 65536 devices and codes not listed one by one (results.kernel_log.lines_not_listed; the worst action among them: reboot)' "$TMP/ovout/report.md"; then
	ok "kernel_log_report_says_lines_not_listed (exit $rc)"
else nok kernel_log_report_says_lines_not_listed "exit $rc; not in report.md" "$TMP/ov.out"; fi
