#!/bin/bash
# canary_judge.sh - command-line tests of what `health_report canary` may
# claim (docs/canary.md): the step time `health_report steps` reads is the
# canary's too (Hugging Face's run summary), and why it cannot judge; no
# efficiency it did not measure; what to measure after every MEASURE FIRST;
# notes printed whole; high host CPU with the dataloader workers on the
# feeders' cores as a finding; impossible option combinations; FSDP's
# collectives against data parallelism's all-reduce, checked by the formula;
# and `health_report steps`' window line and per-rank table.
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env
HR=$B/health_report
TMP=$(mktemp -d /tmp/ch_canary_judge.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

if [ ! -x "$HR" ]; then
	echo "skip canary_judge: $HR is not built"
	exit 0
fi

# expect NAME WANT_EXIT CMD... ; then has NAME STRING... against $out
expect() {
	local name=$1 want=$2
	shift 2
	out=$("$@" 2>&1); rc=$?
	if [ "$rc" != "$want" ]; then
		echo "not ok $name: exit $rc (want $want): $*"
		echo "$out" | head -20 | sed 's/^/    /'
		return 1
	fi
	return 0
}
has() { # NAME FIXED-STRING...: every string occurs in $out
	local name=$1 s
	shift
	for s in "$@"; do
		if ! grep -qF -- "$s" <<<"$out"; then
			echo "not ok $name: missing '$s' in:"
			echo "$out" | head -80 | sed 's/^/    /'
			return 1
		fi
	done
	echo "ok $name"
}
hasnt() { # NAME FIXED-STRING...: no string occurs in $out (says nothing when none does)
	local name=$1 s
	shift
	for s in "$@"; do
		if grep -qF -- "$s" <<<"$out"; then
			echo "not ok $name: unexpected '$s' in:"
			echo "$out" | head -80 | sed 's/^/    /'
			return 1
		fi
	done
	return 0
}
pycheck() { # NAME PYTHON-EXPR FILE: the expression over the JSON document d holds
	if python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert $2, d" "$3" 2>"$TMP/py.err"; then
		echo "ok $1"
	else
		echo "not ok $1: $2"; sed 's/^/    /' "$TMP/py.err" | tail -3
	fi
}

STEPS=tests/data/steps

# ---- the step time `steps` reads is the canary's: Hugging Face's run
# summary (train_runtime 12359.4488 s over 3140 steps = 3.936 s a step)
expect canary_hf_summary_step 1 "$HR" canary --steps $STEPS/hf_trainer_state.json --gpus-now 8 --target-gpus 16 &&
has canary_hf_summary_step "today: mean step (run summary)           3.937 s (train_runtime / steps" \
	"step time at 8 GPUs (today)              3.94 s                             [measured]" &&
hasnt canary_hf_summary_step "nothing to judge"
# the same trainer_state.json compact (one line, no spaces, as json.dumps
# with separators writes it): read the same
python3 -c 'import json,sys; print(json.dumps(json.load(open(sys.argv[1])), separators=(",", ":")), end="")' \
	$STEPS/hf_trainer_state.json >"$TMP/trainer_state.json"
expect canary_hf_compact_trainer_state 1 "$HR" canary --steps "$TMP/trainer_state.json" --gpus-now 8 --target-gpus 16 &&
has canary_hf_compact_trainer_state "today: mean step (run summary)           3.937 s (train_runtime / steps" \
	"step time at 8 GPUs (today)              3.94 s                             [measured]"
expect steps_hf_compact_trainer_state 0 "$HR" steps "$TMP/trainer_state.json" &&
has steps_hf_compact_trainer_state "Hugging Face Trainer; 3 step records in 1 of 1 files" "3.94 s (train_runtime / steps, the whole run)"
# a log with no step time at all: the canary says which figure is missing from which file
expect canary_no_step_says_why 2 "$HR" canary --steps $STEPS/hf_issue9415_srun_labels.log --gpus-now 8 --target-gpus 16 &&
has canary_no_step_says_why "nothing to judge: --steps $STEPS/hf_issue9415_srun_labels.log: no step time in these logs"
# ... and of the baseline's logs: an error with --baseline-gpus, else a note
expect canary_no_baseline_step_says_why 2 "$HR" canary --steps $STEPS/maxtext_pr4847_absl.log --gpus-now 16 \
	--baseline-steps $STEPS/hf_issue9415_srun_labels.log --baseline-gpus 8 --target-gpus 32 &&
has canary_no_baseline_step_says_why \
	"error: --baseline-steps $STEPS/hf_issue9415_srun_labels.log: no step time in these logs" "give --baseline-step-time"
expect canary_no_baseline_step_noted 1 "$HR" canary --steps $STEPS/maxtext_pr4847_absl.log --gpus-now 16 \
	--baseline-steps $STEPS/hf_issue9415_srun_labels.log --target-gpus 32 &&
has canary_no_baseline_step_noted "  - --baseline-steps $STEPS/hf_issue9415_srun_labels.log: no step time in these logs"

# ---- no efficiency it did not measure: one log, no baseline, no model
expect canary_one_log_no_efficiency 1 "$HR" canary --steps $STEPS/hf_trainer_state.json --gpus-now 8 --target-gpus 16 \
	--json "$TMP/one.json" &&
has canary_one_log_no_efficiency \
	"step time, scaling efficiency            not measured: needs a second run at another GPU count (--baseline-steps" \
	"largest allocation at >= 80% efficiency  not measured" \
	"verdict: MEASURE FIRST: too little data to predict the target" \
	"- the efficiency at 16 GPUs is not measured: needs a second run at another GPU count" &&
hasnt canary_one_log_no_efficiency "100.0%" "0% over it" "16 GPUs                            [" "x2.00 the throughput"
pycheck canary_one_log_no_efficiency_json \
	"d['figures']['efficiency_target'] is None and d['figures']['efficiency_now'] is None and d['figures']['ideal_step_sec'] is None and d['figures']['step_target_sec'] is None and d['figures']['largest_ok_gpus'] is None and d['target_not_measured'].startswith('not measured: needs a second run at another GPU count') and d['measure']" \
	"$TMP/one.json"

# ---- after every MEASURE FIRST: what to measure and the command
expect canary_eff_measure_named 1 "$HR" canary --baseline-gpus 8 --gpus-now 128 --scaling-efficiency 90% \
	--target-efficiency 95% --params 8e9 --alpha-us 5 --bw-gbps 40 --json "$TMP/eff.json" &&
has canary_eff_measure_named "MEASURE FIRST today's step time (--step-time, or today's step logs: health_report canary --steps TODAY_LOGS)" \
	"the all-reduce's growth since 8 GPUs (0.095 s) can give 5.3% of the step only if the step is at most 1.804 s"
pycheck canary_eff_measure_named_json \
	"d['efficiency_question']['measure'].startswith(\"today's step time\") and abs(d['efficiency_question']['step_max_for_comm_sec']['value'] - 1.804) < 0.001" \
	"$TMP/eff.json"
# every path to MEASURE FIRST: the text after it names a command to run
mf() { # NAME ARGS...: MEASURE FIRST, followed by a command (build/..., health_report ..., allreduce_bw ...)
	local name=$1
	shift
	"$HR" canary "$@" --json "$TMP/mf.json" --force >"$TMP/mf.out" 2>&1
	if python3 - "$TMP/mf.json" "$TMP/mf.out" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
out = open(sys.argv[2]).read()
cmd = re.compile(r"build/\w+ |health_report (canary|steps) |allreduce_bw |loader_contention |checkpoint_io ")
ms = [m for m in (d.get("measure"), (d.get("efficiency_question") or {}).get("measure")) if m is not None]
assert ms and all(cmd.search(m) for m in ms), ms
for line in out.splitlines():
    if "MEASURE FIRST" in line and not line.startswith("verdict:"):
        rest = line.split("MEASURE FIRST", 1)[1]
        assert cmd.search(rest), line
for i, line in enumerate(out.splitlines()):
    if line.startswith("verdict: MEASURE FIRST"):
        assert cmd.search(out.splitlines()[i + 1]), out.splitlines()[i + 1]
PY
	then echo "ok $name"; else echo "not ok $name: MEASURE FIRST without a command"; sed 's/^/    /' "$TMP/mf.out" | tail -8; fi
}
mf canary_mf_no_baseline_no_model --gpus-now 64 --step-time 1.0 --target-gpus 128
mf canary_mf_comm_only_no_model --gpus-now 8 --input-wait 1% --target-gpus 16
mf canary_mf_contradiction --baseline-gpus 32 --baseline-step-time 2.0s --gpus-now 64 --step-time 1.6s --target-gpus 128
mf canary_mf_unmeasured_fixables --baseline-gpus 32 --baseline-step-time 1.0s --gpus-now 64 --step-time 1.6s \
	--target-gpus 128 --params 7e9 --alpha-us 5 --bw-gbps 40
mf canary_mf_eff_no_efficiency --baseline-gpus 8 --gpus-now 128 --target-efficiency 95%
mf canary_mf_eff_no_model --baseline-gpus 8 --gpus-now 128 --scaling-efficiency 90% --target-efficiency 95%
mf canary_mf_eff_no_step --baseline-gpus 8 --gpus-now 128 --scaling-efficiency 90% --target-efficiency 95% \
	--params 8e9 --alpha-us 5 --bw-gbps 40
expect canary_mf_quiet 1 "$HR" canary -q --gpus-now 64 --step-time 1.0 --target-gpus 128 &&
has canary_mf_quiet "verdict: measure-first: measure the step at two GPU counts (health_report canary --steps TODAY_LOGS"

# ---- notes printed whole, in the terminal and in --json: the MFU note (242
# characters, cut at 239 before) and a note naming a 1,000-character path
TEXTBOOK=(--baseline-gpus 32 --baseline-step-time 1.0s --gpus-now 64 --step-time 1.6s
	--checkpoint-interval 30m --checkpoint-block 5.5m --input-wait 10% --target-gpus 128)
MFU_END="MFU was likely measured over training steps only, while the figures here include the stall"
expect canary_mfu_note_whole 1 "$HR" canary "${TEXTBOOK[@]}" --baseline-mfu 44% --mfu-now 33% --json "$TMP/mfu.json" &&
has canary_mfu_note_whole "$MFU_END"
pycheck canary_mfu_note_whole_json "any(n.startswith('MFU went from 44.0%') and n.endswith('$MFU_END') for n in d['notes'])" "$TMP/mfu.json"
LONG=$TMP/$(printf 'd%.0s' $(seq 1 200))/$(printf 'e%.0s' $(seq 1 200))/$(printf 'f%.0s' $(seq 1 200))/$(printf 'g%.0s' $(seq 1 200))/$(printf 'h%.0s' $(seq 1 200))
mkdir -p "$LONG" && cp $STEPS/hf_issue9415_srun_labels.log "$LONG/run.log"
expect canary_long_path_note_whole 1 "$HR" canary --steps "$LONG/run.log" --gpus-now 8 --input-wait 1% --target-gpus 16 \
	--json "$TMP/long.json" &&
has canary_long_path_note_whole "  - --steps $LONG/run.log: no step time in these logs (no timed step line, no timestamps between steps, no run summary such as Hugging Face's train_runtime)"
pycheck canary_long_path_note_whole_json "any(n == '--steps $LONG/run.log: no step time in these logs (no timed step line, no timestamps between steps, no run summary such as Hugging Face\\'s train_runtime)' for n in d['notes'])" "$TMP/long.json"

# ---- high host CPU with the dataloader workers pinned with the feeder
# threads is a finding of its own, without --input-wait: named, what to
# measure, and among the fixes in order (after the checkpoint, which has a size)
CPU=(--baseline-gpus 32 --baseline-step-time 1.0s --gpus-now 64 --step-time 1.6s --checkpoint-interval 30m
	--checkpoint-block 5.5m --target-gpus 128 --host-cpu 92% --loader-workers 64 --loader-placement shared)
expect canary_cpu_pinned_finding 1 "$HR" canary "${CPU[@]}" --json "$TMP/cpu.json" &&
has canary_cpu_pinned_finding \
	"do not book 128 GPUs before fixing the checkpoint and the host CPU contention (dataloader workers on the feeder threads' cores) and re-measuring at 64 GPUs" \
	"host CPUs 92% busy with 64 dataloader workers pinned with the GPU feeder threads, on their cores: input stalls will masquerade as network stalls" \
	"    1. synchronous checkpoint stall: make the checkpoint asynchronous" \
	"    2. host CPU contention (dataloader workers on the feeder threads' cores): give the dataloader its own cores" \
	"measure the input wait per rank" "loader_contention on this node (build/loader_contention --json results/loader.json)"
pycheck canary_cpu_pinned_finding_json \
	"[x['kind'] for x in d['fixes']] == ['checkpoint', 'host_cpu_pinned_workers'] and 'masquerade as network stalls' in d['host_cpu_finding'] and d['inputs']['loader_placement'] == 'shared'" \
	"$TMP/cpu.json"
# nothing else to fix: measure first, naming the measurement
expect canary_cpu_pinned_measure_first 1 "$HR" canary --baseline-gpus 32 --baseline-step-time 1.0s --gpus-now 64 \
	--step-time 1.05s --target-gpus 128 --params 1e8 --alpha-us 5 --bw-gbps 40 --host-cpu 92% --loader-placement shared &&
has canary_cpu_pinned_measure_first \
	"verdict: MEASURE FIRST: the input wait is not measured on a busy host with the workers on the feeders' cores" \
	"measure the input wait per rank (the job's step logs with their dataloader wait: --steps; or a profiler's) and loader_contention on this node"
# the same host with the workers on their own cores, or the CPUs not busy: no finding
expect canary_cpu_isolated_no_finding 1 "$HR" canary "${CPU[@]}" --loader-placement isolated &&
hasnt canary_cpu_isolated_no_finding "masquerade" && echo "ok canary_cpu_isolated_no_finding"
expect canary_cpu_idle_no_finding 1 "$HR" canary "${CPU[@]}" --host-cpu 40% &&
hasnt canary_cpu_idle_no_finding "masquerade" && echo "ok canary_cpu_idle_no_finding"
expect canary_bad_placement 2 "$HR" canary "${CPU[@]}" --loader-placement pinned &&
has canary_bad_placement "unknown value 'pinned' for --loader-placement (expected: shared, isolated, numa-local, numa-remote, as-is)"

# ---- --help and the checks agree: an input wait of the whole step is refused,
# and so is an input wait and a compute share of more than the whole step
expect canary_help_input_wait 0 "$HR" canary --help &&
has canary_help_input_wait "at most the whole step [0 to below 1]"
expect canary_input_wait_one 2 "$HR" canary --gpus-now 64 --step-time 1.6 --target-gpus 128 --input-wait 1 &&
has canary_input_wait_one "value '1' for --input-wait is out of range (expected 0 to below 1"
expect canary_input_wait_99 1 "$HR" canary --gpus-now 64 --step-time 1.6 --target-gpus 128 --input-wait 99% &&
echo "ok canary_input_wait_99"
expect canary_wait_plus_compute 2 "$HR" canary --gpus-now 64 --step-time 1.6 --target-gpus 128 --input-wait 60% \
	--compute-share 50% &&
has canary_wait_plus_compute "--input-wait '60%' and --compute-share '50%' add up to 110% of the step: more than the whole step"
expect canary_wait_plus_compute_whole 1 "$HR" canary --gpus-now 64 --step-time 1.6 --target-gpus 128 --input-wait 50% \
	--compute-share 50% && echo "ok canary_wait_plus_compute_whole"

# ---- FSDP: the same inputs give the reduce-scatter and two all-gathers at
# the all-reduce's busbw, the first all-gather exposed; checked by the formula
FS=(--baseline-gpus 8 --baseline-step-time 1.0s --gpus-now 64 --step-time 1.3s --target-gpus 128 --params 8e9
	--grad-bytes-per-param 2 --alpha-us 5 --bw-gbps 40 --overlap 50%)
expect canary_ddp_model 1 "$HR" canary "${FS[@]}" --json "$TMP/ddp.json" &&
has canary_ddp_model "model: data parallel (one all-reduce of the gradient per step)"
expect canary_fsdp_model 1 "$HR" canary "${FS[@]}" --parallelism fsdp --json "$TMP/fsdp.json" &&
has canary_fsdp_model "model: FSDP (reduce-scatter + 2 all-gathers, first all-gather exposed)" \
	"FSDP collectives at 64 GPUs              1.18 s" \
	"prefetch the parameter all-gathers"
if python3 - "$TMP/ddp.json" "$TMP/fsdp.json" <<'PY'
import json, sys
ddp, fsdp = (json.load(open(p)) for p in sys.argv[1:3])
S, B, a, ov, t1 = 8e9 * 2, 40e9, 5e-6, 0.5, 1.3
ar = lambda n: 2 * (n - 1) / n * S / B + 2 * (n - 1) * a          # ring all-reduce, busbw B
ag = lambda n: (n - 1) / n * S / B + (n - 1) * a                  # reduce-scatter or all-gather, busbw B
def near(x, want, what):
    assert abs(x / want - 1) < 1e-9, (what, x, want)
fd, ff = ddp["figures"], fsdp["figures"]
# data parallel: (1 - overlap) x the all-reduce's growth since the baseline
near(fd["comm_now_sec"]["value"], ar(64), "ddp C(64)")
near(fd["exposed_comm_sec"]["value"], (1 - ov) * (ar(64) - ar(8)), "ddp exposed today")
near(fd["exposed_comm_target_sec"]["value"], (1 - ov) * ar(128), "ddp exposed at 128")
near(fd["step_target_sec"]["value"], t1 + (1 - ov) * (ar(128) - ar(64)), "ddp step at 128")
# FSDP: C = RS + 2 AG; exposed = the first AG + (1 - overlap) x the other two
expo = lambda n: ag(n) + (1 - ov) * 2 * ag(n)
near(ff["comm_now_sec"]["value"], 3 * ag(64), "fsdp C(64)")
near(ff["exposed_comm_sec"]["value"], expo(64) - expo(8), "fsdp exposed today")
near(ff["exposed_comm_target_sec"]["value"], expo(128), "fsdp exposed at 128")
near(ff["step_target_sec"]["value"], t1 + expo(128) - expo(64), "fsdp step at 128")
assert abs(ff["step_target_sec"]["value"] - fd["step_target_sec"]["value"]) > 1e-4
assert ddp["model"].startswith("data parallel") and fsdp["model"].startswith("FSDP") and fsdp["inputs"]["parallelism"] == "fsdp"
PY
then echo "ok canary_fsdp_formula"; else echo "not ok canary_fsdp_formula"; fi
# the target's row and the verdict say FSDP's collectives, with a step time
# and without (measurements only), never "all-reduce"
has canary_fsdp_target_row "FSDP all-gathers + reduce-scatter        1.19 s"
expect canary_fsdp_target_row_no_step 0 "$HR" canary --gpus-now 8 --target-gpus 128 --alpha-us 5 --bw-gbps 40 --params 8e9 --parallelism fsdp &&
has canary_fsdp_target_row_no_step "  FSDP all-gathers + reduce-scatter        1.19 s, busbw 39.94 GB/s" \
	"the FSDP all-gathers + reduce-scatter keeps 99.9% of today's busbw" "input wait and FSDP collectives scaling only" &&
hasnt canary_fsdp_target_row_no_step "  all-reduce       " "the all-reduce keeps"
expect canary_bad_parallelism 2 "$HR" canary "${FS[@]}" --parallelism zero3 &&
has canary_bad_parallelism "unknown value 'zero3' for --parallelism (expected: ddp, fsdp)"

# ---- a communication model that does not fit: never "inf%" or "nan%", the
# row says "not fitted" (a model putting more all-reduce in a step than the
# whole step; no all-reduce today at 1 GPU to compare the target's with)
for par in ddp fsdp; do
	expect "canary_comm_misfit_not_fitted_$par" 0 "$HR" canary --gpus-now 8 --target-gpus 16 --step-time 1s --params 1e16 \
		--alpha-us 0 --bw-gbps 0.01 --baseline-gpus 4 --baseline-step-time 0.9s --parallelism $par --json "$TMP/misfit-$par.json" &&
	hasnt "canary_comm_misfit_not_fitted_$par" "inf%" "nan%" "xinf" "-nan" " inf " " nan " &&
	has "canary_comm_misfit_not_fitted_$par" "exposed communication                  not fitted: the model predicts" \
		"its predictions are not used"
done
expect canary_one_gpu_today_not_fitted 2 "$HR" canary --gpus-now 1 --target-gpus 8 --alpha-us 5 --bw-gbps 40 --params 8e9 &&
hasnt canary_one_gpu_today_not_fitted "inf%" "nan%" "xinf" &&
has canary_one_gpu_today_not_fitted "not fitted: no all-reduce at 1 GPU today to compare the target's with"

# ---- --loader-workers 0 (no worker processes, nothing to pin): a usage
# error, on the command line and in an --inputs file
expect canary_loader_workers_zero 2 "$HR" canary --gpus-now 8 --step-time 1s --target-gpus 16 --loader-workers 0 &&
has canary_loader_workers_zero "error: value '0' for --loader-workers is out of range (expected 1 to 100000)"
printf 'loader-workers = 0\n' >"$TMP/lw0.txt"
expect canary_loader_workers_zero_inputs 2 "$HR" canary --gpus-now 8 --step-time 1s --target-gpus 16 --inputs "$TMP/lw0.txt" &&
has canary_loader_workers_zero_inputs "error: value '0' for loader-workers ($TMP/lw0.txt:1) is out of range (expected 1 to 100000)"

# ---- an --inputs file giving a key twice: an error naming both lines (the
# last one silently won)
printf 'step-time = 1s\n# again\nstep-time = 2s\n' >"$TMP/dup.txt"
expect canary_inputs_key_twice 2 "$HR" canary --gpus-now 8 --target-gpus 16 --inputs "$TMP/dup.txt" &&
has canary_inputs_key_twice "error: $TMP/dup.txt:3: key 'step-time' given twice (also line 1)"

# ---- health_report steps: a log of 8 steps after the warm-up says 8, not the
# window asked; the per-rank table shows each rank's name (here a file's path) whole
mkdir -p "$TMP/short"
SHORT=$TMP/short/a_training_run_with_a_rather_long_descriptive_name_node0_2026-12-05.log
for st in $(seq 1 18); do printf '[rank0]: step %d | loss 2.5 | 1.000 s/step\n[rank1]: step %d | loss 2.5 | 1.010 s/step\n' $st $st; done >"$SHORT"
expect steps_short_window 0 "$HR" steps "$SHORT" &&
has steps_short_window "window: steps 11-18 (8 steps after a warm-up of 10: the logs end before a window of 50" \
	"      8  local rank 1 ($SHORT)" "      8  local rank 0 ($SHORT)" &&
hasnt steps_short_window "(50 steps after"
exit 0
