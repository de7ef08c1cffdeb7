#!/bin/bash
# kernel_log.sh - `health_report kernel-log` (docs/xid.md) on the real-format
# fixtures of tests/data/kernel-log with the stand-in node's inventory (the
# fake NVML's two GPUs, the hgx-ndr8 sysfs tree's NICs): every Xid class of
# the table judged as docs/xid.md documents it, the NHC line, the window,
# since-last-run, a user's table, the result file, bad inputs.
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env
HR=$B/health_report
K=tests/data/kernel-log
TMP=$(mktemp -d /tmp/ch_kernel_log.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
ok() { echo "ok $1"; }
nok() { echo "not ok $1: $2"; [ -n "${3:-}" ] && [ -f "$3" ] && sed 's/^/    /' "$3" | tail -30; }
if [ ! -x "$HR" ] || [ ! -x "$B/roofline" ] || [ ! -e "$B/tests/fake-nvml/libnvidia-ml.so.1" ]; then
	echo "skip kernel_log: $HR, $B/roofline or the fake NVML is not built (make test builds them)"
	exit 0
fi
# the stand-in node's inventory: any result file of it
INV=$TMP/inv.json
LD_LIBRARY_PATH=$B/tests/fake-nvml CH_SYSFS_ROOT=tests/data/sysfs/hgx-ndr8 "$B/roofline" --backend cpu \
	--kernels triad --size 1M --iters 2 --confirm 0 --json "$INV" -q >"$TMP/inv.out" 2>&1 ||
	{ nok kernel_log_inventory "roofline failed" "$TMP/inv.out"; exit 0; }

# docs/xid.md's table is the program's
"$HR" kernel-log --table >"$TMP/table.md"
sed -n '/xid-table:begin/,/xid-table:end/p' docs/xid.md | sed '1d;$d' >"$TMP/doc.md"
if [ -s "$TMP/table.md" ] && cmp -s "$TMP/table.md" "$TMP/doc.md"; then ok kernel_log_table_in_docs
else nok kernel_log_table_in_docs "docs/xid.md's table differs from 'health_report kernel-log --table'"; diff "$TMP/doc.md" "$TMP/table.md" | head; fi

# every class of the table judged as documented: ERROR (drain) for reset,
# drain, reboot; INFO for inform; one line per code
"$HR" kernel-log --kernel-log $K/every-class.log --inventory "$INV" >"$TMP/every.out" 2>&1; rc=$?
python3 - "$TMP/doc.md" "$TMP/every.out" <<'PY' >"$TMP/every.check" 2>&1
import re, sys
doc, out = open(sys.argv[1]).read(), open(sys.argv[2]).read().splitlines()
rows = [l.split("|") for l in doc.splitlines() if re.match(r"\| \d+ \|", l)]
bad = []
for r in rows:
    code, action = int(r[1]), r[5].strip()
    lines = [l for l in out if re.search(r" Xid %d \(" % code, l)]
    want = "ERROR" if action in ("reset", "drain", "reboot") else "INFO"
    if len(lines) != 1 or not lines[0].startswith(want + ": clusterhealth: gpu"):
        bad.append("Xid %d (%s): %s" % (code, action, lines))
    elif want == "ERROR" and ": drain (" not in lines[0]:
        bad.append("Xid %d: no ': drain (' in %s" % (code, lines[0]))
print("%d codes" % len(rows))
for b in bad: print(b)
sys.exit(1 if bad or len(rows) < 20 else 0)
PY
if [ $? = 0 ] && [ $rc = 1 ]; then ok "kernel_log_every_class_as_documented ($(head -1 "$TMP/every.check"))"
else nok kernel_log_every_class_as_documented "exit $rc" "$TMP/every.check"; fi
# the application's codes are on gpu0 only: it has no ERROR line
if grep -q '^INFO: clusterhealth: gpu0 Xid 13 ' "$TMP/every.out" && ! grep -q '^ERROR: clusterhealth: gpu0 ' "$TMP/every.out"; then
	ok kernel_log_application_xids_inform
else nok kernel_log_application_xids_inform "gpu0's lines" "$TMP/every.out"; fi

# the NHC line, first, for the node's worst fault; flaps on mlx5_0; AER on gpu0
"$HR" kernel-log --kernel-log $K/h100-node-journal.log --inventory "$INV" --now 2026-12-06T03:00:00Z \
	--json "$TMP/kl.json" >"$TMP/j.out" 2>&1; rc=$?
if [ $rc = 1 ] && head -1 "$TMP/j.out" | grep -q '^ERROR: clusterhealth: gpu1 Xid 79 (fallen off the bus) at 02:14:07 UTC: drain (reboot the node; NVIDIA RESTART_BM; 2 lines)$' &&
	grep -q '^ERROR: clusterhealth: mlx5_0 link down 3 times, up 3 times at 02:12:00 UTC: drain' "$TMP/j.out" &&
	grep -q '^INFO: clusterhealth: gpu0 PCIe AER corrected error at 02:13:10 UTC: no drain' "$TMP/j.out"; then
	ok kernel_log_nhc_lines
else nok kernel_log_nhc_lines "exit $rc" "$TMP/j.out"; fi
if python3 - "$TMP/kl.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["tool"] == "kernel_log" and d["status"] == "failed", (d["tool"], d["status"])
f = d["results"]["kernel_log"]["faults"]
x = [g for g in f if g["kind"] == "xid" and g["code"] == 79][0]
assert x["gpu_index"] == 1 and x["uuid"] == "GPU-00000000-0000-0000-0000-000000000001", x
assert x["action"] == "reboot" and x["drain"] == "yes" and x["lines"] == 2 and x["last_utc"] == "2026-12-06T02:14:07Z", x
assert x["nvidia_action"] == "RESTART_BM" and x["hardware"] is True, x
l = [g for g in f if g["kind"] == "link_down"][0]
assert l["device"] == "mlx5_0" and l["lines"] == 3 and l["link_ups"] == 3 and l["gpu_index"] is None, l
PY
then ok kernel_log_result_file; else nok kernel_log_result_file "the JSON"; fi
# with an inventory of no GPU and no NIC (another host's, say), the flaps and
# the AER are left out: said on a warning with their count, and counted in
# the result file (the stand-in's inventory above holds them: 0 there)
mkdir -p "$TMP/nosys"
CH_SYSFS_ROOT=$TMP/nosys "$B/roofline" --backend cpu --kernels triad --size 1M --iters 2 --confirm 0 --json "$TMP/inv0.json" -q >/dev/null 2>&1
"$HR" kernel-log --kernel-log $K/h100-node-journal.log --inventory "$TMP/inv0.json" --now 2026-12-06T03:00:00Z \
	--json "$TMP/kl0.json" >"$TMP/j0.out" 2>&1; rc=$?
n0=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"]["kernel_log"]["lines_not_in_inventory"])' "$TMP/kl0.json" 2>/dev/null)
n1=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"]["kernel_log"]["lines_not_in_inventory"])' "$TMP/kl.json" 2>/dev/null)
if [ $rc = 1 ] && [ "${n0:-0}" -gt 0 ] && [ "$n1" = 0 ] && ! grep -q 'link down' "$TMP/j0.out" &&
	grep -q "warning: $n0 AER or link line(s) of devices that are neither a GPU nor a NIC of the inventory '$TMP/inv0.json' left out" "$TMP/j0.out"; then
	ok "kernel_log_lines_outside_inventory_said ($n0 lines)"
else nok kernel_log_lines_outside_inventory_said "exit $rc, counted '$n0' and '$n1'" "$TMP/j0.out"; fi

# a window: the last 2900 s hold Xid 79 and the last flap only (1 < 3: no drain)
"$HR" kernel-log --kernel-log $K/h100-node-journal.log --inventory "$INV" --now 2026-12-06T03:00:00Z --window 2900 >"$TMP/w.out" 2>&1; rc=$?
if [ $rc = 1 ] && grep -q '^ERROR: clusterhealth: gpu1 Xid 79' "$TMP/w.out" && grep -q '^INFO: clusterhealth: mlx5_0 link down 1 times' "$TMP/w.out"; then
	ok kernel_log_window
else nok kernel_log_window "exit $rc" "$TMP/w.out"; fi
# since the last run: the first run counts, the second (state written) finds nothing
"$HR" kernel-log --kernel-log $K/h100-node-journal.log --inventory "$INV" --state "$TMP/state" --now 2026-12-06T03:00:00Z >"$TMP/s1.out" 2>&1; r1=$?
"$HR" kernel-log --kernel-log $K/h100-node-journal.log --inventory "$INV" --state "$TMP/state" --now 2026-12-06T03:05:00Z >"$TMP/s2.out" 2>&1; r2=$?
if [ $r1 = 1 ] && [ $r2 = 0 ] && [ ! -s "$TMP/s2.out" ] && grep -qx "1796526300.000" "$TMP/state"; then ok kernel_log_since_last_run
else nok kernel_log_since_last_run "exits $r1 $r2" "$TMP/s2.out"; fi

# a user's table: Xid 13 drains here
printf '# site\n13\tdrain\tGR\tgraphics exception, drained here\n' >"$TMP/t.tsv"
grep '): 13, ' $K/every-class.log >"$TMP/x13.log"
"$HR" kernel-log --kernel-log "$TMP/x13.log" >"$TMP/u0.out" 2>&1; r0=$?
"$HR" kernel-log --kernel-log "$TMP/x13.log" --xid-table "$TMP/t.tsv" >"$TMP/u1.out" 2>&1; r1=$?
if [ $r0 = 0 ] && [ $r1 = 1 ] && grep -q '^ERROR: .* Xid 13 (graphics exception, drained here)' "$TMP/u1.out"; then ok kernel_log_user_table
else nok kernel_log_user_table "exits $r0 $r1" "$TMP/u1.out"; fi

# bad inputs: exit 2, the input named
printf '13\tpanic\tX\ty\n' >"$TMP/bad.tsv"
echo '{"tool":"x"}' >"$TMP/noinv.json"
bad=0
for args in "--kernel-log $TMP/missing.log" "--xid-table $TMP/bad.tsv" "--inventory $TMP/noinv.json" \
	"--since yesterday" "--window -5" "--flaps 0" "stray"; do
	# shellcheck disable=SC2086
	out=$("$HR" kernel-log --kernel-log $K/every-class.log $args 2>&1); rc=$?
	if [ $rc != 2 ] || ! grep -q 'error:' <<<"$out"; then echo "    $args: exit $rc: $out" | head -3; bad=1; fi
done
[ $bad = 0 ] && ok kernel_log_bad_inputs || nok kernel_log_bad_inputs "see above"

# a line is read whole: a stale line longer than a fixed buffer whose end
# holds an Xid is left out by the window (it was split, its tail read as a
# line of no time and drained); NUL bytes before a line (syslog after a
# crash) do not hide its Xid
python3 - "$TMP/long.log" "$TMP/nul.log" <<'PY'
import sys
open(sys.argv[1], "w").write("2026-12-06T02:14:07+0000 gpu3 kernel: usb 1-1: Product: " + "x" * 4900 +
                             " NVRM: Xid (PCI:0000:99:00): 79, pid=1\n")
open(sys.argv[2], "wb").write(b"\0" * 1000 + b"2026-12-06T02:14:07+0000 gpu3 kernel: NVRM: Xid (PCI:0000:22:00): 79, pid=1\n")
PY
"$HR" kernel-log --kernel-log "$TMP/long.log" --now 2026-12-10T00:00:00Z --window 1h >"$TMP/long.out" 2>&1; r1=$?
"$HR" kernel-log --kernel-log "$TMP/nul.log" --now 2026-12-10T00:00:00Z >"$TMP/nul.out" 2>&1; r2=$?
if [ $r1 = 0 ] && ! grep -q 'Xid' "$TMP/long.out" && [ $r2 = 1 ] && grep -q '^ERROR: .*Xid 79' "$TMP/nul.out"; then
	ok kernel_log_long_and_nul_lines
else
	nok kernel_log_long_and_nul_lines "exits $r1 (long stale line: want 0) $r2 (NULs before an Xid: want 1)" "$TMP/nul.out"
fi

# an Xid, SXid or "fallen off the bus" is one at the message's start only:
# a line quoting one (a user's echo to the journal, an audit record, a log
# of a log) is no fault; the real line beside them is
cat >"$TMP/quoted.log" <<'EOF'
2026-12-06T02:10:00+0000 gpu3 bash[4242]: NVRM: Xid (PCI:0000:43:00): 79, pid=0, name=(null), GPU has fallen off the bus.
2026-12-06T02:11:00+0000 gpu3 kernel: audit: type=1105 msg='cmd=echo "NVRM: Xid (PCI:0000:43:00): 48, pid=1, DBE"'
2026-12-06T02:12:00+0000 gpu3 kernel: python3[77]: saw nvidia-nvswitch3: SXid (PCI:0000:04:00.0): 12028, Fatal, Link 32
2026-12-06T02:12:30+0000 gpu3 kernel: sshd[9]: note: NVRM: GPU 0000:43:00.0: GPU has fallen off the bus.
2026-12-06T02:13:00+0000 gpu3 kernel: NVRM: Xid (PCI:0000:1b:00): 13, pid=2, name=python3, Graphics Exception
EOF
"$HR" kernel-log --kernel-log "$TMP/quoted.log" --inventory "$INV" --now 2026-12-06T03:00:00Z >"$TMP/quoted.out" 2>&1; rc=$?
if [ $rc = 0 ] && [ "$(grep -c 'clusterhealth:' "$TMP/quoted.out")" = 1 ] && grep -q '^INFO: clusterhealth: gpu0 Xid 13 ' "$TMP/quoted.out"; then
	ok "kernel_log_quoted_lines_are_no_faults (only the real Xid 13 line: $(head -c 80 "$TMP/quoted.out"))"
else nok kernel_log_quoted_lines_are_no_faults "exit $rc (want 0: a quoted Xid 79, 48, SXid, fallen off the bus are no faults)" "$TMP/quoted.out"; fi

# impossible times are skipped and counted: a negative, not-a-number or
# absurd time since boot, a /dev/kmsg record of negative microseconds, a date
# out of range, a time two days after --now; the one real line counts
cat >"$TMP/times.log" <<'EOF'
[   -5.000000] NVRM: Xid (PCI:0000:43:00): 79, pid=1, GPU has fallen off the bus.
[nan] NVRM: Xid (PCI:0000:43:00): 48, pid=1, DBE
[1e300] NVRM: Xid (PCI:0000:43:00): 64, pid=1, row remapper
4,2210,-5000000,-;NVRM: Xid (PCI:0000:43:00): 74, pid=1, NVLink
2026-13-40T02:14:07+0000 gpu3 kernel: NVRM: Xid (PCI:0000:43:00): 95, pid=1, uncontained
1e308 gpu3 kernel: NVRM: Xid (PCI:0000:43:00): 119, pid=1, GSP
2026-12-08T03:00:00+0000 gpu3 kernel: NVRM: Xid (PCI:0000:43:00): 120, pid=1, GSP error
2026-12-06T02:13:00+0000 gpu3 kernel: NVRM: Xid (PCI:0000:1b:00): 13, pid=2, name=python3, Graphics Exception
EOF
"$HR" kernel-log --kernel-log "$TMP/times.log" --inventory "$INV" --now 2026-12-06T03:00:00Z --json "$TMP/times.json" >"$TMP/times.out" 2>"$TMP/times.err"; rc=$?
nbad=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"]["kernel_log"]["lines_bad_time"])' "$TMP/times.json" 2>/dev/null)
if [ $rc = 0 ] && [ "$nbad" = 7 ] && ! grep -q '^ERROR' "$TMP/times.out" && grep -q '^INFO: clusterhealth: gpu0 Xid 13 ' "$TMP/times.out" &&
	grep -q 'warning: 7 fault line(s) of the kernel log skipped: an impossible time' "$TMP/times.err"; then
	ok "kernel_log_impossible_times_skipped_and_counted (lines_bad_time $nbad; $(cut -c1-90 "$TMP/times.err"))"
else nok kernel_log_impossible_times_skipped_and_counted "exit $rc (want 0), lines_bad_time '$nbad' (want 7)" "$TMP/times.out"; sed 's/^/    /' "$TMP/times.err"; fi

# --now 0: every line of a known time is more than a day after it (the
# future): none is counted
"$HR" kernel-log --kernel-log $K/h100-node-journal.log --inventory "$INV" --now 0 --window 1h --json "$TMP/now0.json" >"$TMP/now0.out" 2>&1; rc=$?
if [ $rc = 0 ] && ! grep -q 'clusterhealth:' "$TMP/now0.out" &&
	python3 -c 'import json,sys; k=json.load(open(sys.argv[1]))["results"]["kernel_log"]; assert k["faults"] == [] and k["lines_bad_time"] > 0' "$TMP/now0.json"; then
	ok "kernel_log_now_zero_counts_no_future_line"
else nok kernel_log_now_zero_counts_no_future_line "exit $rc (want 0)" "$TMP/now0.out"; fi

# --since, --now and --window: the errors name the units and range the help gives
"$HR" kernel-log --help >"$TMP/help.out"
# an option's text: its line and the indented lines below it, joined
opt_text() { # HEAD
	awk -v h="$1" 'index($0, h) { f = 1; s = substr($0, index($0, h) + length(h)); next }
		f && /^                     [^ -]/ { sub(/^ +/, ""); s = s " " $0; next }
		f { print s; exit }' "$TMP/help.out"
}
trange=$(opt_text "only lines at or after TIME: ")
wrange=$(opt_text "only lines of the last DURATION before --now: ")
bad=
for args in "--since yesterday" "--since 2e11" "--since -1" "--now 9999-01-01T00:00:00Z" "--now nan"; do
	# shellcheck disable=SC2086
	out=$("$HR" kernel-log --kernel-log $K/every-class.log $args 2>&1); rc=$?
	{ [ $rc = 2 ] && [ -n "$trange" ] && grep -qF "(expected $trange)" <<<"$out"; } || bad="$bad [$args: exit $rc: $(head -1 <<<"$out")]"
done
for args in "--window 400d" "--window 0" "--window 5x" "--window -5" "--window 1ms" "--window inf"; do
	# shellcheck disable=SC2086
	out=$("$HR" kernel-log --kernel-log $K/every-class.log $args 2>&1); rc=$?
	{ [ $rc = 2 ] && [ -n "$wrange" ] && grep -qF "(expected $wrange)" <<<"$out"; } || bad="$bad [$args: exit $rc: $(head -1 <<<"$out")]"
done
for args in "--window 2d" "--window 90m" "--window 366d" "--since 0" "--since 2026-12-06T00:00:00Z"; do
	# shellcheck disable=SC2086
	"$HR" kernel-log --kernel-log $K/every-class.log $args >/dev/null 2>&1; rc=$?
	[ $rc = 1 ] || bad="$bad [$args: exit $rc, want 1]"
done
if [ -z "$bad" ]; then ok "kernel_log_time_options_say_their_range (--window: $wrange)"
else nok kernel_log_time_options_say_their_range "$bad"; fi

# every journalctl -k output format is read (journal-formats.log: one Xid
# per -o format, the code telling which); the times say their zone
TZ=UTC "$HR" kernel-log --kernel-log $K/journal-formats.log --inventory "$INV" --now 2026-12-06T03:00:00Z --window 1h \
	>"$TMP/jf.out" 2>&1; rc=$?
codes=$(grep -oE '^ERROR: clusterhealth: gpu1 Xid [0-9]+ ' "$TMP/jf.out" | awk '{print $5}' | sort -n | paste -sd,)
if [ $rc = 1 ] && [ "$codes" = 48,64,74,79,95,119,120 ] && grep -q 'Xid 95 .* at 02:14:11 UTC: drain' "$TMP/jf.out" &&
	grep -q 'Xid 48 .* at 02:14:08 UTC: drain' "$TMP/jf.out" && grep -q 'Xid 120 .* at 1843.3 s after boot: drain' "$TMP/jf.out"; then
	ok "kernel_log_every_journalctl_format (short, short-precise, short-iso, short-iso-precise, short-full, short-unix, short-monotonic: Xids $codes)"
else nok kernel_log_every_journalctl_format "exit $rc, Xids read '$codes' (want 48,64,74,79,95,119,120)" "$TMP/jf.out"; fi
# the yearless stamp is this machine's local time: its zone name is said
TZ=Europe/Berlin "$HR" kernel-log --kernel-log $K/journal-formats.log --now 2026-12-06T03:00:00Z >"$TMP/jfz.out" 2>&1
if grep -q 'Xid 79 .* at 02:14:07 CET: drain' "$TMP/jfz.out" && grep -q 'Xid 64 .* at 02:14:09 UTC: drain' "$TMP/jfz.out"; then
	ok "kernel_log_time_says_its_zone (local stamp: $(grep -o 'at 02:14:07 CET' "$TMP/jfz.out"); wall time: UTC)"
else nok kernel_log_time_says_its_zone "want 'at 02:14:07 CET' (TZ=Europe/Berlin) and 'at 02:14:09 UTC'" "$TMP/jfz.out"; fi

# bytes that are not UTF-8 in a fault line: '?' in the terminal and in the
# result file, which stays valid JSON and keeps the fault
printf '2026-12-06T02:14:07+0000 gpu3 kernel: NVRM: Xid (PCI:0000:43:00): 79, pid=7, name=caf\xe9\xff\xfe, GPU has fallen off the bus.\n' >"$TMP/latin1.log"
"$HR" kernel-log --kernel-log "$TMP/latin1.log" --now 2026-12-06T03:00:00Z --json "$TMP/latin1.json" >"$TMP/latin1.out" 2>&1; rc=$?
if [ $rc = 1 ] && iconv -f UTF-8 -t UTF-8 "$TMP/latin1.out" >/dev/null 2>&1 && python3 - "$TMP/latin1.json" <<'PY'
import json, sys
f = json.load(open(sys.argv[1], encoding="utf-8"))["results"]["kernel_log"]["faults"]
assert len(f) == 1 and f[0]["code"] == 79 and "name=caf???, GPU" in f[0]["last_line"], f
PY
then ok "kernel_log_non_utf8_bytes_as_question_marks"
else nok kernel_log_non_utf8_bytes_as_question_marks "exit $rc (want 1), the JSON must hold the fault with 'caf???'" "$TMP/latin1.out"; fi

# dmesg -T with a date or hour no clock shows (Feb 30, 25:14:07): skipped
# and counted, never dated to another day nor passed over unseen
printf '[Mon Feb 30 02:14:07 2026] NVRM: Xid (PCI:0000:43:00): 79, pid=0, GPU has fallen off the bus.\n[Sun Dec  6 25:14:07 2026] NVRM: Xid (PCI:0000:43:00): 48, pid=0, DBE\n[Sun Dec  6 02:14:07 2026] NVRM: Xid (PCI:0000:1b:00): 13, pid=2, name=python3, Graphics Exception\n' >"$TMP/dmesgT.log"
TZ=UTC "$HR" kernel-log --kernel-log "$TMP/dmesgT.log" --now 2026-12-06T03:00:00Z --json "$TMP/dmesgT.json" >"$TMP/dmesgT.out" 2>"$TMP/dmesgT.err"; rc=$?
nbad=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["results"]["kernel_log"]["lines_bad_time"])' "$TMP/dmesgT.json" 2>/dev/null)
if [ $rc = 0 ] && [ "$nbad" = 2 ] && ! grep -q '^ERROR' "$TMP/dmesgT.out" && grep -q 'Xid 13 .* at 02:14:07 UTC' "$TMP/dmesgT.out" &&
	grep -q 'warning: 2 fault line(s) of the kernel log skipped' "$TMP/dmesgT.err"; then
	ok "kernel_log_dmesg_T_impossible_dates_skipped (Feb 30, 25:14:07: lines_bad_time $nbad)"
else nok kernel_log_dmesg_T_impossible_dates_skipped "exit $rc (want 0), lines_bad_time '$nbad' (want 2)" "$TMP/dmesgT.out"; cat "$TMP/dmesgT.err"; fi

# a user's Xid table with a bad row: exit 2, the file and line named (an
# unknown action, a code not a number, a code given twice, a fifth field)
bad=
i=0
for row in '13\tpanic\tX\ty' '1x3\tdrain\tX\ty' '13\tdrain\tX\ty\n13\tinform\tX\tz' '13\tdrain\tX\ty\tz'; do
	i=$((i + 1))
	printf "# site\n$row\n" >"$TMP/bad$i.tsv"
	out=$("$HR" kernel-log --kernel-log $K/every-class.log --xid-table "$TMP/bad$i.tsv" 2>&1); rc=$?
	{ [ $rc = 2 ] && grep -qE "error: the Xid table '$TMP/bad$i.tsv', line [23]: " <<<"$out"; } || bad="$bad [$row: exit $rc: $(head -1 <<<"$out")]"
done
if [ -z "$bad" ]; then ok "kernel_log_xid_table_bad_rows_name_file_and_line"
else nok kernel_log_xid_table_bad_rows_name_file_and_line "$bad"; fi

# an Xid table that is not a regular file (/dev/zero never ends, a FIFO
# blocks): refused before a line is read (exit 2), never a hang
mkfifo "$TMP/xid.fifo"
bad=
for x in /dev/zero "$TMP/xid.fifo" "$TMP"; do
	out=$(timeout 20 "$HR" kernel-log --kernel-log $K/every-class.log --xid-table "$x" 2>&1); rc=$?
	{ [ $rc = 2 ] && grep -qF "error: the Xid table '$x' is not a regular file" <<<"$out"; } || bad="$bad [$x: exit $rc: $(head -1 <<<"$out")]"
done
if [ -z "$bad" ]; then ok "kernel_log_xid_table_not_regular_refused"
else nok kernel_log_xid_table_not_regular_refused "$bad"; fi

# a state file whose time is after now: ignored with a warning (taken as
# "since" it left out every line up to it), and this run's time written
echo 1999999999.000 >"$TMP/future.state"
"$HR" kernel-log --kernel-log $K/h100-node-journal.log --inventory "$INV" --state "$TMP/future.state" --now 2026-12-06T03:00:00Z \
	>"$TMP/fs.out" 2>"$TMP/fs.err"; rc=$?
if [ $rc = 1 ] && grep -q '^ERROR: clusterhealth: gpu1 Xid 79' "$TMP/fs.out" && grep -q "warning: the state file .* after now .*: ignored" "$TMP/fs.err" &&
	grep -qx "1796526000.000" "$TMP/future.state"; then
	ok "kernel_log_state_in_the_future_ignored ($(cut -c1-110 "$TMP/fs.err"))"
else nok kernel_log_state_in_the_future_ignored "exit $rc (want 1: the Xid 79 read), state '$(cat "$TMP/future.state")'" "$TMP/fs.err"; fi

# --since with --window: the later start wins, both ways, as --help says
# (the journal's Xid 79 is at 02:14:07, its first flap at 02:10:00)
since_win() { "$HR" kernel-log --kernel-log $K/h100-node-journal.log --inventory "$INV" --now 2026-12-06T03:00:00Z "$@" 2>&1 | grep -c 'clusterhealth:'; }
a=$(since_win --since 2026-12-06T02:14:00Z --window 1d)  # --since later: Xid 79 only
b=$(since_win --since 2026-12-01T00:00:00Z --window 2900) # --window later: Xid 79, the AER line and the last flap
c=$(since_win --window 2900 --since 2026-12-06T02:14:00Z) # order does not matter
if [ "$a" = 1 ] && [ "$b" = 3 ] && [ "$c" = 1 ] && "$HR" kernel-log --help | grep -q 'latest one wins' &&
	grep -q 'and the latest one' docs/xid.md; then
	ok "kernel_log_since_with_window_latest_wins (lines: --since later $a, --window later $b)"
else nok kernel_log_since_with_window_latest_wins "faults: '$a' (want 1), '$b' (want 3), '$c' (want 1), or --help/docs/xid.md do not say it"; fi

# a log of more devices and codes than a fixed table held (512): the Xid
# 79 after 600 unknown codes is still found (it was dropped: exit 0)
python3 -c 'import sys
for c in range(1000, 1600): print("[ 10.0] NVRM: Xid (PCI:0000:43:00): %d, pid=1, unknown" % c)
print("[ 11.0] NVRM: Xid (PCI:0000:43:00): 79, pid=0, GPU has fallen off the bus.")' >"$TMP/many.log"
"$HR" kernel-log --kernel-log "$TMP/many.log" -q >"$TMP/many.out" 2>&1; rc=$?
if [ $rc = 1 ] && grep -q '^ERROR: clusterhealth: pci 0000:43:00.0 Xid 79 ' "$TMP/many.out"; then
	ok "kernel_log_many_codes_keep_the_drain (600 unknown codes, then Xid 79: exit 1)"
else nok kernel_log_many_codes_keep_the_drain "exit $rc (want 1 and the Xid 79 line)" "$TMP/many.out"; fi

# a file with no newline (200 MB, from a pipe) is read in one record's
# memory, not held whole (it took 200 MB)
rss=$(python3 - "$HR" <<'PY'
import resource, subprocess, sys
src = subprocess.Popen(["sh", "-c", "head -c 200000000 /dev/zero | tr '\\0' a"], stdout=subprocess.PIPE)
rc = subprocess.call([sys.argv[1], "kernel-log", "--kernel-log", "-"], stdin=src.stdout, stdout=subprocess.DEVNULL)
src.wait()
print(rc, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)
PY
)
if [ "${rss%% *}" = 0 ] && [ "${rss##* }" -lt 100 ]; then ok "kernel_log_no_newline_bounded_memory (exit 0, max RSS ${rss##* } MB for 200 MB without a newline)"
elif [ -n "${SANITIZE:-}" ]; then echo "skip kernel_log_no_newline_bounded_memory: a sanitizer build's memory is not the program's"
else nok kernel_log_no_newline_bounded_memory "exit and max RSS (MB): '$rss' (want 0 and under 100)"; fi
# past 65536 devices and codes the rest are counted together, their worst
# action kept: a drain among them is still a drain
python3 -c 'import sys
for c in range(100000, 166000): print("[ 10.0] NVRM: Xid (PCI:0000:43:00): %d, pid=1, unknown" % c)
print("[ 11.0] NVRM: Xid (PCI:0000:43:00): 79, pid=0, GPU has fallen off the bus.")' >"$TMP/over.log"
"$HR" kernel-log --kernel-log "$TMP/over.log" -q --json "$TMP/over.json" >"$TMP/over.out" 2>&1; rc=$?
if [ $rc = 1 ] && grep -q '^ERROR: clusterhealth: 465 more fault lines on devices and codes past the first 65536 not listed one by one (the worst action among them: reboot): drain$' "$TMP/over.out" &&
	python3 -c 'import json,sys; k=json.load(open(sys.argv[1]))["results"]["kernel_log"]; assert k["lines_not_listed"] == 465 and k["not_listed_action"] == "reboot"' "$TMP/over.json"; then
	ok "kernel_log_past_the_group_limit_keeps_the_drain"
else nok kernel_log_past_the_group_limit_keeps_the_drain "exit $rc (want 1)" "$TMP/over.out"; fi

# --state: a folder (not a file) and a folder that cannot take the file are
# errors before any work (it said 'remove it' of a folder, and read the log
# before failing to write); a link planted at the temporary name is not
# followed (the file it points to was overwritten)
o1=$("$HR" kernel-log --kernel-log $K/h100-node-journal.log --state "$TMP" 2>&1); r1=$?
o2=$("$HR" kernel-log --kernel-log $K/h100-node-journal.log --state "$TMP/no/such/dir/st" 2>&1); r2=$?
echo "keep me" >"$TMP/victim"
bash -c 'ln -s "$1" "$2.tmp.$$"; exec "$3" kernel-log --kernel-log "$4" --state "$2" --now 2026-12-06T03:00:00Z -q' _ \
	"$TMP/victim" "$TMP/planted.state" "$HR" $K/h100-node-journal.log >"$TMP/planted.out" 2>&1; r3=$?
if [ $r1 = 2 ] && grep -q "error: the state file '$TMP' (--state) is not a regular file" <<<"$o1" &&
	[ $r2 = 2 ] && grep -q "error: cannot write the state file .*its folder '$TMP/no/such/dir': No such file or directory" <<<"$o2" &&
	! grep -q 'clusterhealth:' <<<"$o2" && [ "$(cat "$TMP/victim")" = "keep me" ] && [ $r3 = 4 ] && [ ! -L "$TMP/planted.state" ]; then
	ok "kernel_log_state_file_checked_first_and_no_link_followed"
else nok kernel_log_state_file_checked_first_and_no_link_followed "exits $r1 $r2 (want 2 2), $r3 (want 4), victim '$(cat "$TMP/victim")'" "$TMP/planted.out"; echo "$o1 / $o2" | head -4; fi

# time stamps in another language's words (dmesg -T and journalctl's
# default under LANG=de_DE) were not stripped, so their faults were missed
printf '[So Dez  6 02:14:07 2026] NVRM: Xid (PCI:0000:43:00): 79, pid=0, GPU has fallen off the bus.\nDez 06 02:14:08 gpu3 kernel: NVRM: Xid (PCI:0000:43:00): 48, pid=0, DBE\n' >"$TMP/de.log"
TZ=UTC "$HR" kernel-log --kernel-log "$TMP/de.log" --now 2026-12-06T03:00:00Z >"$TMP/de.out" 2>&1; rc=$?
if [ $rc = 1 ] && grep -q 'Xid 79 .* at 02:14:07 UTC: drain' "$TMP/de.out" && grep -q 'Xid 48 .* at 02:14:08 UTC: drain' "$TMP/de.out"; then
	ok "kernel_log_stamps_in_another_language"
else nok kernel_log_stamps_in_another_language "exit $rc (want 1, Xid 79 and 48)" "$TMP/de.out"; fi
