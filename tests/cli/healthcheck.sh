#!/bin/bash
# healthcheck.sh - scripts/healthcheck (the gate) outside Slurm, on the
# stand-in 8-GPU node: the fake NVML with FAKE_NVML_GPUS=8 (tests/fake-nvml),
# the hgx-ndr8 sysfs tree's NICs, roofline over the stand-in GPU backend
# (tests/standin). The gate sees and judges 8 GPUs and names the faulty
# ones only; its intra-node all-reduce, with no GPU here, is "not judged"
# (allreduce_bw: unavailable), never a fault; a budget too short for it
# says so; the fake refuses a GPU count out of range. Times are not
# asserted (tests/cli/slurm.sh runs the gate through a real Slurm; `make
# bench` times it).
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env
TMP=$(mktemp -d /tmp/ch_healthcheck.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
ok() { echo "ok $1"; }
nok() { echo "not ok $1: $2"; [ -n "${3:-}" ] && [ -f "$3" ] && sed 's/^/    /' "$3" | tail -30; }
FAKE=$B/tests/fake-nvml
if [ ! -x "$B/health_report" ] || [ ! -x "$B/allreduce_bw" ] || [ ! -x "$B/tests/roofline-standin" ] || [ ! -e "$FAKE/libnvidia-ml.so.1" ]; then
	echo "skip healthcheck: health_report, allreduce_bw, the stand-in roofline or the fake NVML is not built (make test builds them)"
	exit 0
fi
# gate OUT [ENV...] -- [ARGS...]: the gate on the stand-in node
gate() {
	local out=$1; shift
	local envs=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	env B="$B" LD_LIBRARY_PATH="$FAKE" CH_SYSFS_ROOT=tests/data/sysfs/hgx-ndr8 \
		CH_GATE_ROOFLINE="$B/tests/roofline-standin" "${envs[@]}" scripts/healthcheck --out "$out" --node standin "$@"
}
# field FILE EXPR: a Python expression over the result file's healthcheck part (h)
field() { python3 -c 'import json,sys; h=json.load(open(sys.argv[1]))["results"]["healthcheck"]; print(eval(sys.argv[2]))' "$1" "$2" 2>/dev/null; }

# ---- the 8-GPU stand-in: 8 GPUs seen and judged; only gpu0 and gpu1 (the
# fake's faulty two) have faults, each line once; the all-reduce over 8 GPUs is not judged
# here (no GPU) and the gate does not fail for it
: >"$TMP/empty.log"
gate "$TMP/g8" FAKE_NVML_GPUS=8 -- --kernel-log "$TMP/empty.log" >"$TMP/g8.out" 2>&1; rc=$?
seen=$(field "$TMP/g8/healthcheck.json" 'h["gpus"]["seen"]')
judged=$(field "$TMP/g8/healthcheck.json" '",".join(h["gpus"]["judged_devices"])')
faulty=$(grep '^ERROR: clusterhealth: gpu' "$TMP/g8.out" | sed -E 's/^ERROR: clusterhealth: (gpu[0-9]+).*/\1/' | sort -u | paste -sd,)
if [ $rc = 1 ] && [ "$seen" = 8 ] && [ "$judged" = gpu0,gpu1,gpu2,gpu3,gpu4,gpu5,gpu6,gpu7 ] && [ "$faulty" = gpu0,gpu1 ] &&
	grep -q "GPUs: 8 seen, 8 judged" "$TMP/g8.out" && [ -z "$(sort "$TMP/g8.out" | uniq -d)" ] && [ "$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["host"]["inventory"]["gpus"]))' "$TMP/g8/inventory.json")" = 8 ]; then
	ok "healthcheck_8_gpus_seen_and_judged (exit 1; judged $judged; faults on $faulty only; $(tail -1 "$TMP/g8.out"))"
else nok healthcheck_8_gpus_seen_and_judged "exit $rc, seen '$seen', judged '$judged', faults on '$faulty'" "$TMP/g8.out"; fi

st=$(field "$TMP/g8/healthcheck.json" '[c["status"] for c in h["checks"] if c["name"] == "allreduce"][0]')
if [ "$st" = not_judged ] && grep -q '^INFO: clusterhealth: allreduce check not judged: .*unavailable.*(allreduce_bw exit 3)' "$TMP/g8.out" &&
	! grep -q "the gate's allreduce check could not run" "$TMP/g8.out" && [ "$(field "$TMP/g8/healthcheck.json" 'h["gpus"]["seen"]')" = 8 ]; then
	ok "healthcheck_allreduce_unavailable_not_judged ($(grep -m1 'allreduce check not judged' "$TMP/g8.out" | cut -c1-160))"
else nok healthcheck_allreduce_unavailable_not_judged "allreduce check '$st'" "$TMP/g8.out"; fi

# every line the gate printed is in its result file: ERROR lines in errors
# (faults) or gate_errors, INFO lines in info (the checks not judged too)
miss=$(python3 - "$TMP/g8/healthcheck.json" "$TMP/g8.out" <<'PY'
import json, sys
h = json.load(open(sys.argv[1]))["results"]["healthcheck"]
have = set(h["errors"] + h["gate_errors"] + h["info"])
lines = [l.rstrip("\n") for l in open(sys.argv[2]) if l.startswith(("ERROR:", "INFO:"))]
print(len(lines) if lines else "none", [l for l in lines if l not in have][:2])
PY
)
if [ "${miss#* }" = "[]" ] && [ "${miss%% *}" != none ]; then ok "healthcheck_json_holds_every_line (${miss%% *} lines)"
else nok healthcheck_json_holds_every_line "$miss" "$TMP/g8.out"; fi

# the default stand-in (2 GPUs) is unchanged
gate "$TMP/g2" -- --kernel-log "$TMP/empty.log" --no-active >"$TMP/g2.out" 2>&1; rc=$?
if [ $rc = 1 ] && grep -q "GPUs: 2 seen, 2 judged" "$TMP/g2.out" &&
	[ "$(field "$TMP/g2/healthcheck.json" '[c["status"] for c in h["checks"] if c["name"] == "allreduce"][0]')" = skipped ]; then
	ok "healthcheck_default_2_gpus (--no-active: the all-reduce not run; $(tail -1 "$TMP/g2.out" | cut -c1-120))"
else nok healthcheck_default_2_gpus "exit $rc" "$TMP/g2.out"; fi

# a node where the nccl backend is unavailable and NVML sees no GPU (the
# fake NVML not loaded): the gate passes; the all-reduce is not judged
gate "$TMP/g0" CH_GATE_ROOFLINE="$B/roofline" LD_LIBRARY_PATH=/nonexistent CH_GATE_ACTIVE_SEC=1 -- \
	--kernel-log "$TMP/empty.log" >"$TMP/g0.out" 2>&1; rc=$?
if [ $rc = 0 ] && grep -q '^INFO: clusterhealth: allreduce check not judged: ' "$TMP/g0.out" &&
	[ "$(field "$TMP/g0/healthcheck.json" 'h["gpus"]["seen"]')" = 0 ]; then
	ok "healthcheck_no_gpu_passes_allreduce_not_judged ($(tail -1 "$TMP/g0.out" | cut -c1-120))"
else nok healthcheck_no_gpu_passes_allreduce_not_judged "exit $rc" "$TMP/g0.out"; fi

# a budget that leaves no time for the all-reduce says so
gate "$TMP/gb" FAKE_NVML_GPUS=8 CH_GATE_ACTIVE_SEC=1 CH_GATE_ALLREDUCE_SEC=3000 -- --kernel-log "$TMP/empty.log" --budget 30 >"$TMP/gb.out" 2>&1
if grep -q '^INFO: clusterhealth: allreduce check not run: .* s of the --budget 30 left, 3005 s needed' "$TMP/gb.out"; then
	ok "healthcheck_allreduce_outside_budget_says_so"
else nok healthcheck_allreduce_outside_budget_says_so "no such line" "$TMP/gb.out"; fi

# ---- the fake's GPU count: 1..16, anything else a clear error
bad=
for v in 0 17 x 2x -1 " 8"; do
	FAKE_NVML_GPUS="$v" LD_LIBRARY_PATH="$FAKE" "$B/tests/roofline-standin" --backend cuda --kernels triad --size 1M \
		--iters 2 --confirm 0 -q >"$TMP/bad.out" 2>&1; rc=$?
	[ $rc = 3 ] && grep -q "FAKE_NVML_GPUS='$v' is not a GPU count (expected a whole number, 1 to 16)" "$TMP/bad.out" || bad="$bad '$v' (exit $rc)"
done
n16=$(FAKE_NVML_GPUS=16 LD_LIBRARY_PATH="$FAKE" CH_SYSFS_ROOT=tests/data/sysfs/hgx-ndr8 "$B/roofline" --backend cpu --kernels triad \
	--size 1M --iters 2 --confirm 0 -q --json "$TMP/inv16.json" >/dev/null 2>&1 &&
	python3 -c 'import json,sys; g=json.load(open(sys.argv[1]))["host"]["inventory"]["gpus"]; print(len(g), len({x["pci_bus_id"] for x in g}), len({x["uuid"] for x in g}))' "$TMP/inv16.json")
if [ -z "$bad" ] && [ "$n16" = "16 16 16" ]; then ok "fake_nvml_gpu_count (16 GPUs, distinct bus ids and UUIDs; 0, 17, x, 2x, -1, ' 8' refused)"
else nok fake_nvml_gpu_count "not refused:$bad; 16 GPUs: '$n16'" "$TMP/bad.out"; fi

# ---- the active checks' limits from the environment: whole seconds, 1 to
# 3600; a word, a sign, 0 (timeout's "no limit"), a huge value: exit 2
# naming the variable
bad=
for var in CH_GATE_ACTIVE_SEC CH_GATE_ALLREDUCE_SEC; do
	for v in abc -5 0 1e3 3601 99999999999 "8 "; do
		out=$(gate "$TMP/gv" "$var=$v" -- --kernel-log "$TMP/empty.log" 2>&1); rc=$?
		{ [ $rc = 2 ] && grep -q "error: invalid value '$v' for $var (expected whole seconds, 1 to 3600)" <<<"$out"; } ||
			bad="$bad [$var=$v: exit $rc: $(grep -m1 -E 'error|clusterhealth' <<<"$out" | cut -c1-100)]"
	done
done
if [ -z "$bad" ]; then ok "healthcheck_gate_sec_variables_validated (abc, -5, 0, 1e3, 3601, 99999999999, '8 ' refused for both)"
else nok healthcheck_gate_sec_variables_validated "$bad"; fi

# ---- every check is time-limited: an inventory that takes the whole
# budget leaves the kernel log no time; it is not run (an error of the
# gate, exit 4), never run without a limit (a kernel log that never ends,
# a FIFO no one writes, hung the gate past Slurm's 60 s)
printf '#!/bin/sh\nsleep 30\n' >"$TMP/slow-roofline"; chmod +x "$TMP/slow-roofline"
mkfifo "$TMP/never.fifo"
t0=$(date +%s)
timeout 60 env B="$B" CH_GATE_ROOFLINE="$TMP/slow-roofline" scripts/healthcheck --out "$TMP/gs" --node standin \
	--kernel-log "$TMP/never.fifo" --budget 5 >"$TMP/gs.out" 2>&1; rc=$?
dt=$(( $(date +%s) - t0 ))
if [ $rc = 4 ] && [ $dt -le 20 ] && grep -q "the gate's kernel_log check could not run: .*no time left" "$TMP/gs.out"; then
	ok "healthcheck_every_check_time_limited (--budget 5: done in $dt s, exit 4; $(grep -m1 "kernel_log check" "$TMP/gs.out" | cut -c1-120))"
else nok healthcheck_every_check_time_limited "exit $rc (want 4) after $dt s (want <= 20)" "$TMP/gs.out"; fi

# ---- a signal to the gate (slurmd stopping it, Ctrl-C) stops the check it
# runs too: no check left running to its limit after the gate is gone, no
# run folder left behind, exit 128+15
printf '#!/bin/sh\nsleep 25\n' >"$TMP/slow2-roofline"; chmod +x "$TMP/slow2-roofline"
timeout 60 env B="$B" CH_GATE_ROOFLINE="$TMP/slow2-roofline" scripts/healthcheck --out "$TMP/gsig" --node standin \
	--kernel-log "$TMP/empty.log" --budget 30 >"$TMP/gsig.out" 2>&1 &
wrap=$!
gpid=
for _ in $(seq 1 50); do
	gpid=$(pgrep -P "$(pgrep -P $wrap | head -1)" 2>/dev/null | head -1)
	[ -n "$gpid" ] && pgrep -f "$TMP/slow2-roofline --kernels" >/dev/null && break
	sleep 0.1
done
kill -TERM "$(pgrep -f "^/bin/bash scripts/healthcheck --out $TMP/gsig" | head -1)" 2>/dev/null
wait $wrap; rc=$?
sleep 0.5
left=$(pgrep -f "$TMP/slow2-roofline --kernels" | wc -l)
if [ $rc = 143 ] && [ "$left" = 0 ] && [ -z "$(ls -d "$TMP"/gsig/run.* 2>/dev/null)" ]; then
	ok "healthcheck_signal_stops_the_running_check (exit $rc; no check left running)"
else
	nok healthcheck_signal_stops_the_running_check "exit $rc (want 143), $left check process(es) left running"
	for p in $(pgrep -f "$TMP/slow2-roofline --kernels"); do kill "$p"; done
fi

# ---- scripts/slurm/healthcheck.sh: the configuration's last line counts
# without a newline (it was dropped: the gate ran with its defaults), and
# a CH_GATE_CONF that names no readable file is an error, not the defaults
mkdir -p "$TMP/wrap/slurm"
cp scripts/slurm/healthcheck.sh "$TMP/wrap/slurm/"
printf '#!/bin/sh\necho "ARGS: $*"\n' >"$TMP/wrap/healthcheck"; chmod +x "$TMP/wrap/healthcheck"
printf -- '# site\n--out /var/tmp/gate\n--budget 30' >"$TMP/gate.conf"
a1=$(CH_GATE_CONF="$TMP/gate.conf" bash "$TMP/wrap/slurm/healthcheck.sh" 2>&1); r1=$?
a2=$(CH_GATE_CONF="$TMP/no-such.conf" bash "$TMP/wrap/slurm/healthcheck.sh" 2>&1); r2=$?
a3=$(CH_GATE_CONF="$TMP" bash "$TMP/wrap/slurm/healthcheck.sh" 2>&1); r3=$?
if [ $r1 = 0 ] && [ "$a1" = "ARGS: --slurm --quiet --out /var/tmp/gate --budget 30" ] && [ $r2 = 2 ] &&
	grep -q "error: cannot read the gate's configuration '$TMP/no-such.conf'" <<<"$a2" && [ $r3 = 2 ]; then
	ok "healthcheck_slurm_wrapper_reads_its_configuration_whole ($a1)"
else nok healthcheck_slurm_wrapper_reads_its_configuration_whole "'$a1' (exit $r1), missing file: exit $r2 '$a2', a folder: exit $r3"; fi

# ---- nvidia-smi that hangs (as on a GPU fallen off the bus) holds the gate
# 5 s at most, not past Slurm's 60 s
mkdir -p "$TMP/hangbin"
printf '#!/bin/sh\nsleep 60\n' >"$TMP/hangbin/nvidia-smi"; chmod +x "$TMP/hangbin/nvidia-smi"
t0=$(date +%s)
timeout 90 env PATH="$TMP/hangbin:$PATH" B="$B" LD_LIBRARY_PATH="$FAKE" CH_SYSFS_ROOT=tests/data/sysfs/hgx-ndr8 \
	CH_GATE_ROOFLINE="$B/tests/roofline-standin" scripts/healthcheck --out "$TMP/gh" --node standin \
	--kernel-log "$TMP/empty.log" --no-active --budget 20 >"$TMP/gh.out" 2>&1; rc=$?
dt=$(( $(date +%s) - t0 ))
for p in $(pgrep -f "$TMP/hangbin/nvidia-smi"); do kill "$p" 2>/dev/null; done
if [ $rc = 1 ] && [ $dt -le 20 ] && grep -q "GPUs: 2 seen, 2 judged" "$TMP/gh.out"; then
	ok "healthcheck_hung_nvidia_smi_bounded (done in $dt s, exit $rc)"
else nok healthcheck_hung_nvidia_smi_bounded "exit $rc (want 1) after $dt s (want <= 20)" "$TMP/gh.out"; fi

# ---- a site's Xid table with a bad row: a usage error before any check
# (every run's kernel-log check failed instead: exit 4, no Xid seen)
printf '13\tpanic\tX\ty\n' >"$TMP/bad-xid.tsv"
out=$(gate "$TMP/gx" -- --kernel-log "$TMP/empty.log" --xid-table "$TMP/bad-xid.tsv" 2>&1); rc=$?
if [ $rc = 2 ] && grep -q "error: the Xid table '$TMP/bad-xid.tsv', line 1: invalid action 'panic'" <<<"$out" && [ ! -e "$TMP/gx/healthcheck.json" ]; then
	ok "healthcheck_bad_xid_table_usage_error"
else nok healthcheck_bad_xid_table_usage_error "exit $rc (want 2): $(head -2 <<<"$out")"; fi

# ---- --slurm with a slurmctld that does not answer (scontrol hangs): each
# scontrol call is stopped (what the budget left, 2 to 10 s), the gate ends
# within Slurm's 60 s and says it could not drain (exit 4)
mkdir -p "$TMP/hangslurm"
printf '#!/bin/sh\nsleep 120\n' >"$TMP/hangslurm/scontrol"; chmod +x "$TMP/hangslurm/scontrol"
printf '2026-12-06T02:14:07+0000 gpu3 kernel: NVRM: Xid (PCI:0000:43:00): 79, pid=0, name=(null), GPU has fallen off the bus.\n' >"$TMP/x79.log"
t0=$(date +%s)
timeout 150 env PATH="$TMP/hangslurm:$PATH" B="$B" LD_LIBRARY_PATH="$FAKE" CH_SYSFS_ROOT=tests/data/sysfs/hgx-ndr8 \
	CH_GATE_ROOFLINE="$B/tests/roofline-standin" scripts/healthcheck --out "$TMP/gsl" --node standin --slurm \
	--kernel-log "$TMP/x79.log" --no-active --budget 5 >"$TMP/gsl.out" 2>&1; rc=$?
dt=$(( $(date +%s) - t0 ))
for p in $(pgrep -f "$TMP/hangslurm/scontrol"); do kill "$p" 2>/dev/null; done
if [ $rc = 4 ] && [ $dt -le 30 ] && grep -q "scontrol could not drain standin" "$TMP/gsl.out"; then
	ok "healthcheck_slurm_scontrol_hang_bounded (done in $dt s, exit 4: $(grep -m1 -o 'scontrol could not drain standin' "$TMP/gsl.out"))"
else nok healthcheck_slurm_scontrol_hang_bounded "exit $rc (want 4) after $dt s (want <= 30)" "$TMP/gsl.out"; fi
