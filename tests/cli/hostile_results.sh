#!/bin/bash
# hostile_results.sh - result files with hostile values (each made here from a
# file under tests/data by one edit) read by the report, the canary and the
# history: every wrong value is listed under input problems and not used,
# nothing crashes, and no 'nan' or -2147483648 is printed as a value.
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env
HR=$B/health_report
TMP=$(mktemp -d /tmp/ch_hostile_test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

if [ ! -x "$HR" ]; then
	echo "skip hostile_results: $HR is not built"
	exit 0
fi

# mutate NAME SOURCE PYTHON-STATEMENT: $TMP/NAME/<basename of SOURCE>, the
# document as d edited by the statement
mutate() {
	mkdir -p "$TMP/$1"
	python3 - "$2" "$TMP/$1/$(basename "$2")" "$3" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
def sweep(kind):
    return next(s for s in d["results"]["sweeps"] if s["group_kind"] == kind)
def config(placement):
    return next(c for c in d["results"]["configs"] if c["placement"] == placement)
exec(sys.argv[3])
json.dump(d, open(sys.argv[2], "w"))
PY
}
# run NAME WANT_EXIT CMD...: $out is stdout, stderr and report.md (when written to $TMP/NAME.out)
run() {
	local name=$1 want=$2
	shift 2
	out=$("$@" 2>&1); rc=$?
	[ -f "$TMP/$name.out/report.md" ] && out+=$'\n'$(cat "$TMP/$name.out/report.md")
	if [ "$rc" != "$want" ]; then
		echo "not ok $name: exit $rc (want $want): $*"
		echo "$out" | head -20 | sed 's/^/    /'
		return 1
	fi
	return 0
}
# has NAME FIXED-STRING...: every string occurs in $out; lacks NAME FIXED-STRING...: none does
has() {
	local name=$1 s
	shift
	for s in "$@"; do
		if ! grep -qF -- "$s" <<<"$out"; then
			echo "not ok $name: missing '$s' in:"
			echo "$out" | head -60 | sed 's/^/    /'
			return 1
		fi
	done
	return 0
}
lacks() {
	local name=$1 s
	shift
	for s in "$@"; do
		if grep -qF -- "$s" <<<"$out"; then
			echo "not ok $name: '$s' printed:"
			grep -F -- "$s" <<<"$out" | head -5 | sed 's/^/    /'
			return 1
		fi
	done
	echo "ok $name"
}
FH=tests/data/report/fleet-healthy

# history: a pair group whose node name is longer than 255 bytes (crashed)
mutate pair_long_node $FH/allreduce_bw.json 'sweep("pair")["nodes"][0] = "n" * 300'
run history_pair_long_node 0 "$HR" history --db "$TMP/h1.sqlite" --night 2026-11-01 "$TMP/pair_long_node" &&
has history_pair_long_node "recorded 14 values from 1 result files" && lacks history_pair_long_node "AddressSanitizer"

# report: a group with no size measured (a log that crashed after its header)
run report_unmeasured_size 0 "$HR" --out "$TMP/report_unmeasured_size.out" \
	tests/data/nccl-tests-logs/12_rtx5090_1node_2gpu_crash_after_header.txt &&
has report_unmeasured_size "| node | node01 | unknown | default | 2 | n/a | n/a |" &&
lacks report_unmeasured_size "| nan |"

# report: counts that are not counts are listed, not cast to an int
mutate workers $FH/node01/loader_contention.json 'd["results"]["configs"][0]["workers"] = 1e308'
run report_workers_not_a_count 0 "$HR" --out "$TMP/report_workers_not_a_count.out" "$TMP/workers" &&
has report_workers_not_a_count "skipped: results.configs[0]: 'workers' is 1e308 (must be an integer >= 0); not used" &&
lacks report_workers_not_a_count "-2147483648"
mutate rec_workers $FH/node01/loader_contention.json 'd["results"]["recommendation"]["workers"] = 2.5'
run report_recommended_workers_fraction 0 "$HR" --out "$TMP/report_recommended_workers_fraction.out" "$TMP/rec_workers" &&
has report_recommended_workers_fraction "skipped: results.recommendation: 'workers' is 2.5 (must be an integer >= 0); not used" &&
lacks report_recommended_workers_fraction "2.5 workers"
mutate packages tests/data/report/real-vm/roofline.json 'd["host"]["packages"] = 1e308'
run report_packages_not_a_count 0 "$HR" --out "$TMP/report_packages_not_a_count.out" "$TMP/packages" &&
has report_packages_not_a_count "skipped: host: 'packages' is 1e308 (must be an integer >= 1); not used" \
	"energy 1.25 Wh (estimate)" && lacks report_packages_not_a_count "energy -"
mutate nranks $FH/allreduce_bw.json 'sweep("world")["nranks"] = 4294967298'
run report_nranks_too_large 0 "$HR" --out "$TMP/report_nranks_too_large.out" "$TMP/nranks" &&
has report_nranks_too_large "'nranks' is 4294967298 (must be an integer >= 1); not used" &&
lacks report_nranks_too_large "-2147483648"

# report: a negative energy reading is listed and the energy estimated (was a negative cost)
mutate energy $FH/node01/roofline.json 'd["energy"]["cpu_j"] = -5e6'
run report_negative_energy 0 "$HR" --out "$TMP/report_negative_energy.out" "$TMP/energy" &&
has report_negative_energy "skipped: energy: 'cpu_j' is '-5e+06' (must be a finite number >= 0); skipped" &&
lacks report_negative_energy "energy -" "-0.167 USD"

# report: a loader lateness that is not a number is listed; its cell keeps the ' / '
mutate p50 $FH/node01/loader_contention.json 'd["results"]["configs"][0]["lateness_us"]["p50"] = "x"'
run report_lateness_not_a_number 0 "$HR" --detail all --out "$TMP/report_lateness_not_a_number.out" "$TMP/p50" &&
has report_lateness_not_a_number "skipped: results.configs[0]: 'lateness_us.p50' is not a number; skipped" \
	"| node01 | baseline | baseline | 0 | n/a / 121 |" && lacks report_lateness_not_a_number "n/a121"

# report: a schema_version of another type is named as such (was "missing")
mutate schema_version $FH/node01/roofline.json 'd["schema_version"] = "1"'
run report_schema_version_string 2 "$HR" --out "$TMP/report_schema_version_string.out" "$TMP/schema_version" &&
has report_schema_version_string "skipped: envelope: 'schema_version' is \"1\" (must be the integer 1); file skipped" &&
lacks report_schema_version_string "missing 'schema_version'"

# canary: nranks beyond an int (was cast to 2 and fitted)
mutate canary_nranks tests/data/canary/allreduce_bw.json 'd["results"]["sweeps"][0]["nranks"] = 4294967298'
run canary_nranks_too_large 2 "$HR" canary --gpus-now 64 --target-gpus 128 "$TMP/canary_nranks" &&
has canary_nranks_too_large "expected \"nranks\" a positive integer, got '4294967298'; file skipped" &&
lacks canary_nranks_too_large "[fitted]"

# canary: a checkpoint's writers that is not a count (2.5 was read as 2, 2^32+2 as 2)
for w in 2.5 4294967298; do
	mutate "writers_$w" tests/data/checkpoint/fleet/c1.json "d['results']['sync']['writers'] = $w"
	run "canary_ckpt_writers_$w" 2 "$HR" canary --gpus-now 64 --target-gpus 128 --checkpoint-interval 30m "$TMP/writers_$w" &&
	has "canary_ckpt_writers_$w" "results.sync.writers: missing or not a positive number (checkpoint_io result); file skipped" &&
	lacks "canary_ckpt_writers_$w" "2 writers"
done

# history: a value of another type or out of range skips the file (was silently not recorded, or recorded)
mutate mem_str $FH/node01/roofline.json 'd["results"]["devices"][0]["roofs"]["memory_gbps"] = "x"'
run history_value_not_a_number 2 "$HR" history --db "$TMP/h2.sqlite" --night 2026-11-01 "$TMP/mem_str" &&
has history_value_not_a_number "skipped: results.devices[].roofs.memory_gbps: expected a number >= 0; file skipped" &&
lacks history_value_not_a_number "recorded 58 values"
mutate accel $FH/node01/loader_contention.json 'config("as-is")["accel_util"] = -7'
run history_accel_util_out_of_range 2 "$HR" history --db "$TMP/h3.sqlite" --night 2026-11-01 "$TMP/accel" &&
has history_accel_util_out_of_range "skipped: results.configs[].accel_util: expected a number from 0 to 1; file skipped" &&
lacks history_accel_util_out_of_range "recorded 1 values"

# control characters (an escape sequence) in a string: the file is skipped by each reader, never printed
mutate esc $FH/node01/roofline.json 'd["host"]["hostname"] = "node\u001b[2J01"'
run report_control_character 2 "$HR" --out "$TMP/report_control_character.out" "$TMP/esc" &&
has report_control_character "skipped: host.hostname: a string holds a control character (U+001B); file skipped" &&
lacks report_control_character $'\e[2J'
mutate esc_canary tests/data/canary/allreduce_bw.json 'd["results"]["sweeps"][0]["algo"] = "ring\u001b[2J"'
run canary_control_character 2 "$HR" canary --gpus-now 64 --target-gpus 128 "$TMP/esc_canary" &&
has canary_control_character "skipped: results.sweeps[0].algo: a string holds a control character (U+001B); file skipped" &&
lacks canary_control_character $'\e[2J'
run history_control_character 2 "$HR" history --db "$TMP/h4.sqlite" --night 2026-11-01 "$TMP/esc" &&
has history_control_character "skipped: host.hostname: a string holds a control character (U+001B); file skipped" &&
lacks history_control_character $'\e[2J'

# every string from an input is data wherever it goes: a newline, a backtick,
# an escape sequence, raw HTML and a link in a host name, a device name, a
# loader placement and an algorithm of result files, an escape sequence in
# the host name of an nccl-tests text log and in an input file name
X=$TMP/escape/in
mkdir -p "$X" && cp -r $FH/* "$X/"
python3 - "$X" <<'PY'
import json, sys
x = sys.argv[1]
def edit(rel, fn):
    d = json.load(open(x + "/" + rel)); fn(d); json.dump(d, open(x + "/" + rel, "w"))
def rl(d):
    d["host"]["hostname"] = "node01\ngpu-innocent"
    d["results"]["devices"][0]["name"] = "<img src=x onerror=alert(1)>`x`|y"
def lc(d):
    d["results"]["configs"][0]["placement"] = "as-is\n# forged heading <b>x</b>"
def ar(d):
    d["results"]["sweeps"][0]["algo"] = "ring`|<i>[l](javascript:x)"
edit("node01/roofline.json", rl)
edit("node02/loader_contention.json", lc)
edit("allreduce_bw.json", ar)
PY
sed 's/ on     node01 device / on node\x1b[2Jx01 device /' tests/data/nccl-tests-logs/01_h100_2node_16gpu_gcp_a3mega_allreduce.txt >"$X/nt.txt"
cp "$X/nt.txt" "$X/log"$'\e'"[2Jname.txt"
O=$TMP/escape/out
# --detail all: every input string is in the outputs (a PASS node's loader configurations too)
out=$("$HR" --detail all --color always --out "$O" "$X" 2>&1); rc=$?
good=1
if [ $rc != 0 ]; then echo "not ok outputs_escape_input_strings: exit $rc (want 0)"; good=0; fi
for f in "$O/report.md" "$O/report.html" "$O/health.prom"; do
	if grep -q $'\e' "$f"; then echo "not ok outputs_escape_input_strings: an escape byte in $f"; good=0; fi
done
# the terminal: its own colours only, every input string escaped, no forged line
term=$(sed 's/\x1b\[[0-9;]*m//g' <<<"$out")
if grep -q $'\e' <<<"$term" || grep -q '^gpu-innocent' <<<"$term" ||
	! grep -qF 'node01\ngpu-innocent' <<<"$term" || ! grep -qF 'node\e[2Jx01' <<<"$term" ||
	! grep -qF 'log\e[2Jname.txt' <<<"$term"; then
	echo "not ok outputs_escape_input_strings: terminal:"; sed 's/^/    /' <<<"$term" | cat -v | head -30; good=0
fi
md=$(cat "$O/report.md")
for want in '&lt;img src=x onerror=alert(1)&gt;\`x\`\|y' 'as-is\\n# forged heading &lt;b&gt;x&lt;/b&gt;' \
	'ring\`\|&lt;i&gt;\[l\](javascript:x)' 'node01\\ngpu-innocent' 'node\\e\[2Jx01'; do
	grep -qF -- "$want" <<<"$md" || { echo "not ok outputs_escape_input_strings: report.md lacks '$want'"; good=0; }
done
if grep -qE '^# forged|<img|<i>|<b>x|^gpu-innocent' <<<"$md"; then
	echo "not ok outputs_escape_input_strings: report.md holds markup of an input:"; grep -nE '^# forged|<img|<i>|<b>x|^gpu-innocent' <<<"$md" | head -5; good=0
fi
# every table row of report.md has its header's number of cells
python3 - "$O/report.md" <<'PY' || good=0
import re, sys
cols = None
for n, line in enumerate(open(sys.argv[1]), 1):
    if not line.startswith("|"):
        cols = None; continue
    cells = len(re.findall(r"(?<!\\)\|", line.rstrip("\n"))) - 1
    if cols is None: cols = cells
    elif cells != cols:
        print("not ok outputs_escape_input_strings: report.md line %d has %d cells, its table %d: %s" % (n, cells, cols, line.strip())); sys.exit(1)
PY
html=$(cat "$O/report.html")
if grep -qE '<img src=x|<i>\[l\]|<b>x</b>' <<<"$html" || ! grep -qF '&lt;img src=x onerror=alert(1)&gt;' <<<"$html"; then
	echo "not ok outputs_escape_input_strings: report.html holds markup of an input"; good=0
fi
# health.prom: every sample parses per the text exposition format
python3 - "$O/health.prom" <<'PY' || good=0
import re, sys
label = r'[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*"'
sample = re.compile(r'^[a-zA-Z_:][a-zA-Z0-9_:]*(\{' + label + r'(,' + label + r')*\})? [-+0-9.eE]+(Inf|NaN)?$')
text = open(sys.argv[1]).read()
for n, line in enumerate(text.split("\n")[:-1], 1):
    if not line.startswith("#") and not sample.match(line):
        print("not ok outputs_escape_input_strings: health.prom line %d: %r" % (n, line)); sys.exit(1)
for want in ('node="node01\\\\ngpu-innocent"', 'node="node\\\\e[2Jx01"'):
    if want not in text:
        print("not ok outputs_escape_input_strings: health.prom lacks %s" % want); sys.exit(1)
PY
[ $good = 1 ] && echo "ok outputs_escape_input_strings"

# -q: the drain candidates escaped too
out=$("$HR" -q --out "$O" "$X" 2>&1)
grep -q $'\e' <<<"$out" && echo "not ok quiet_escapes_names: an escape byte printed" || echo "ok quiet_escapes_names"

# report.html's PASS table is JSON data in a <script> element: a host name
# holding "<!--<script>" (which puts the HTML tokenizer in the script's
# double-escaped state, so that the element's own "</script>" no longer
# ends it) or "</script>" must not end or extend the element; the data
# parses back to the names as they were, quotes and line separators too
X=$TMP/htmlnames/in
mkdir -p "$X" && cp -r $FH/* "$X/"
python3 - "$X" <<'PY'
import json, sys
x = sys.argv[1]
names = {"node02": "n2<!--<script>x", "node03": "n3</script><script>alert(1)</script>",
         "node04": "n4\"'&amp;<b>", "node05": "n5\u2028\u2029x"}
for old, new in names.items():
    for f in ("roofline.json", "loader_contention.json"):
        p = "%s/%s/%s" % (x, old, f)
        d = json.load(open(p))
        d["host"]["hostname"] = new
        for dev in d["results"].get("devices", []):
            if dev.get("host") == old:
                dev["host"] = new
        json.dump(d, open(p, "w"))
PY
O=$TMP/htmlnames/out
"$HR" -q --out "$O" "$X" >"$TMP/htmlnames.txt" 2>&1
msg=$(python3 - "$O/report.html" <<'PY'
import json, re, sys
src = open(sys.argv[1], encoding="utf-8").read()
start = '<script type="application/json" id="healthy-table-data">'
i = src.find(start)
if i < 0:
    print("no PASS table data"); sys.exit()
i += len(start)
j = src.find("</script>", i)
data = src[i:j]
errs = []
if "<" in data:
    k = data.index("<")
    errs.append("a '<' in the table's data: %r" % data[max(0, k - 20):k + 20])
try:
    names = [r[0] for r in json.loads(data)]
except ValueError as e:
    names = []
    errs.append("the table's data is not JSON: %s" % e)
for want in ("n2<!--<script>x", "n3</script><script>alert(1)</script>", "n4\"'&amp;<b>", "n5\u2028\u2029x"):
    if want not in names:
        errs.append("no PASS row named %r (rows: %r)" % (want, names))
# the page's script is one element after the data, and the page ends
if not src.rstrip().endswith("</script>\n</body></html>".strip()) or src.count("<script>") != 1:
    errs.append("the page's script element is not whole")
print("; ".join(errs) if errs else "OK")
PY
)
[ "$msg" = OK ] && echo "ok html_pass_table_data_escaped" || echo "not ok html_pass_table_data_escaped: $msg"

# bytes that are not UTF-8 in a file name and in the host name of an
# nccl-tests text log (neither is refused): the file is read and the node
# kept under names with those bytes written "\xNN", one node per host, and
# nothing else of the report lost (a file name like this made the whole
# report fail, "out of memory while building the profile"; such a host
# was 8 nameless nodes, with 8 equal series node="" in health.prom)
X=$TMP/utf8/in
mkdir -p "$X" && cp -r $FH/* "$X/"
sed 's/ on     node01 device / on node\xff01 device /' tests/data/nccl-tests-logs/01_h100_2node_16gpu_gcp_a3mega_allreduce.txt >"$X/log"$'\xff'"name.txt"
O=$TMP/utf8/out
out=$("$HR" -q --out "$O" "$X" 2>&1); rc=$?
msg=$(python3 - "$O" <<'PY'
import json, sys
o = sys.argv[1]
errs = []
try:
    p = json.load(open(o + "/profile.json"))
except Exception as e:
    print("no profile.json: %s" % e); sys.exit()
names = [n.get("name") for n in p["nodes"]]
if names.count("node\\xff01") != 1:
    errs.append("no single node named node\\xff01: %r" % names)
if None in names or "" in names:
    errs.append("a node without a name: %r" % names)
if "log\\xffname.txt" not in json.dumps(p, ensure_ascii=False).replace("\\\\", "\\"):
    errs.append("the file log\\xffname.txt is not in the profile")
seen = set()
for line in open(o + "/health.prom", encoding="utf-8"):
    if line.startswith("#"):
        continue
    key = line.rsplit(" ", 1)[0]
    if key in seen:
        errs.append("a series twice in health.prom: %s" % key); break
    seen.add(key)
    if 'node=""' in key:
        errs.append("a series of a nameless node: %s" % key); break
print("; ".join(errs) if errs else "OK")
PY
)
if [ $rc -gt 1 ] || grep -q "out of memory" <<<"$out"; then
	echo "not ok report_names_not_utf8: exit $rc: $out"
elif [ "$msg" != OK ]; then
	echo "not ok report_names_not_utf8: $msg"
else
	echo "ok report_names_not_utf8"
fi

# out of memory while reading: an error (exit 4, said), never a file
# skipped as "malformed JSON" with the report written without it. The
# document below is 21 MB of text whose parse takes about 900 MB; the
# address space is limited to 500 MB (OPENBLAS_NUM_THREADS=1: OpenBLAS's
# own thread, started when the library loads, never ends when its buffer
# cannot be mapped, docs/health_report.md "Limitations")
python3 -c "open('$TMP/deep.json', 'w').write('{\"x\": [' + ','.join(['[]'] * 7000000) + ']}')"
out=$(ulimit -v 500000; OPENBLAS_NUM_THREADS=1 timeout 120 "$HR" -q --out "$TMP/oom.out" $FH "$TMP/deep.json" 2>&1); rc=$?
if [ $rc = 4 ] && [[ $out == *"out of memory while reading '$TMP/deep.json'"* ]] && [[ $out != *"malformed JSON"* ]] &&
   [ ! -e "$TMP/oom.out/profile.json" ]; then
	echo "ok report_out_of_memory_is_an_error"
else
	echo "not ok report_out_of_memory_is_an_error: exit $rc (want 4): $out $(grep -m1 deep.json "$TMP/oom.out/report.md" 2>/dev/null)"
fi

# C1 controls (CSI U+009B, NEL U+0085) and a bidi override (U+202E) in a
# result file: skipped by every reader, like the C0 controls
mutate c1 $FH/node01/roofline.json 'd["host"]["hostname"] = "node\u009b2J01"'
mutate nel $FH/node01/roofline.json 'd["host"]["hostname"] = "node\u0085gpu-innocent"'
mutate bidi $FH/node01/roofline.json 'd["results"]["devices"][0]["name"] = "gpu\u202e0"'
run report_c1_and_bidi_skipped 2 "$HR" --out "$TMP/report_c1_and_bidi_skipped.out" "$TMP/c1" "$TMP/nel" "$TMP/bidi" &&
has report_c1_and_bidi_skipped "c1/roofline.json: skipped: host.hostname: a string holds a control character (U+009B); file skipped" \
	"nel/roofline.json: skipped: host.hostname: a string holds a control character (U+0085); file skipped" \
	"bidi/roofline.json: skipped: results.devices[0].name: a string holds a control character (U+202E), a bidirectional mark or override; file skipped" &&
lacks report_c1_and_bidi_skipped $'\u009b' $'\u0085' $'\u202e'
run history_c1_skipped 2 "$HR" history --db "$TMP/h5.sqlite" --night 2026-11-01 "$TMP/c1" &&
has history_c1_skipped "skipped: host.hostname: a string holds a control character (U+009B); file skipped" &&
lacks history_c1_skipped $'\u009b'

# canary: a checkpoint bandwidth of null, "NaN" or -0 (no scaling points) is
# not a number to predict with (printed "nan GB/s [measured]", "inf% of wall-clock")
for v in None '"NaN"' -0.0; do
	n=agg_$(tr -dc 'a-zA-Z0-9' <<<"$v")
	mutate "$n" tests/data/checkpoint/textbook.json "d['results']['sync']['agg_write_gbps'] = $v; d['results']['scaling']['points'] = []"
	run "canary_ckpt_bandwidth_$n" 2 "$HR" canary --gpus-now 64 --target-gpus 128 --checkpoint-interval 30m "$TMP/$n" &&
	has "canary_ckpt_bandwidth_$n" "results.sync.agg_write_gbps: missing or not a positive number (checkpoint_io result); file skipped" &&
	lacks "canary_ckpt_bandwidth_$n" "nan GB/s" "inf%" "-0 GB/s"
done

# report: loader fractions of 1e308 (printed inf%) and a busbw of -1e308 are listed, not used
mutate fracs $FH/node01/loader_contention.json 'd["results"]["configs"][0]["input_wait_frac"] = 1e308; d["results"]["configs"][0]["accel_util"] = 1e308'
mutate negbw $FH/allreduce_bw.json 'sweep("world")["rows"][-1]["out_of_place"]["busbw_gbps"] = -1e308; sweep("world")["large_msg_busbw_gbps"] = -1e308'
run report_numbers_out_of_range 0 "$HR" --out "$TMP/report_numbers_out_of_range.out" "$TMP/fracs" "$TMP/negbw" &&
has report_numbers_out_of_range "results.configs[0]: 'input_wait_frac' is '1e+308' (must be a fraction from 0 to 1); skipped" \
	"results.configs[0]: 'accel_util' is '1e+308' (must be a fraction from 0 to 1); skipped" \
	"'out_of_place.busbw_gbps' is '-1e+308' (must be a finite number >= 0); skipped" \
	"'large_msg_busbw_gbps' is '-1e+308' (must be a finite number >= 0); skipped" &&
lacks report_numbers_out_of_range "inf%" "| -1e+308" "| -inf"

# report: an end before the start is noted (the wall time was dropped silently)
mutate times $FH/node01/roofline.json 'd["start_utc"] = "2025-06-01T03:00:00Z"'
run report_end_before_start 0 "$HR" --out "$TMP/report_end_before_start.out" "$TMP/times" &&
has report_end_before_start "note: envelope: 'start_utc' '2025-06-01T03:00:00Z' and 'end_utc' '2025-06-01T02:01:00Z' are not two times" &&
lacks report_end_before_start "nan"
exit 0
