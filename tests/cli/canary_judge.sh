#!/bin/bash
# canary_judge.sh - command-line tests of what `health_report canary` may
# claim (docs/canary.md): the step time `health_report steps` reads is the
# canary's too (Hugging Face's run summary), and why it cannot judge; no
# efficiency it did not measure; what to measure after every MEASURE FIRST;
# notes printed whole; high host CPU with the dataloader workers on the
# feeders' cores as a finding; impossible option combinations; FSDP's
# collectives against data parallelism's all-reduce, checked by the formula.
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env
HR=$B/health_report
TMP=$(mktemp -d /tmp/ch_canary_judge.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

if [ ! -x "$HR" ]; then
	echo "skip canary_judge: $HR is not built"
	
# ---- no efficiency it did not measure: one log, no baseline, no model
expect canary_one_log_no_efficiency 1 "$HR" canary --steps $STEPS/hf_trainer_state.json --gpus-now 8 --target-gpus 16 \
	--json "$TMP/one.json" &&
has canary_one_log_no_efficiency \
	"step time, scaling efficiency            not measured: needs a second run at another GPU count (--baseline-steps" \
	"largest allocation at >= 80% efficiency  not measured" \
	"verdict: MEASURE FIRST: too little data to predict the target" \
	"- the efficiency at 16 GPUs is not measured: needs a second run at another GPU count" &&
hasnt canary_one_log_no_efficiency "100.0%" "16 GPUs                            [" "x2.00 the throughput"
pycheck canary_one_log_no_efficiency_json \
	"d['figures']['efficiency_target'] is None and d['figures']['step_target_sec'] is None and d['figures']['largest_ok_gpus'] is None and d['target_not_measured'].startswith('not measured: needs a second run at another GPU count') and d['measure']" \
	"$TMP/one.json"
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
# a log with no step time at all: the canary says which figure is missing from which file
expect canary_no_step_says_why 2 "$HR" canary --steps $STEPS/hf_issue9415_srun_labels.log --gpus-now 8 --target-gpus 16 &&
has canary_no_step_says_why "nothing to judge: --steps $STEPS/hf_issue9415_srun_labels.log: no step time in these logs"

# ---- no efficiency it did not measure: one log, no baseline, no model
expect canary_one_log_no_efficiency 1 "$HR" canary --steps $STEPS/hf_trainer_state.json --gpus-now 8 --target-gpus 16 \
	--json "$TMP/one.json" &&
has canary_one_log_no_efficiency \
	"step time, scaling efficiency            not measured: needs a second run at another GPU count (--baseline-steps" \
	"largest allocation at >= 80% efficiency  not measured" \
	"verdict: MEASURE FIRST: too little data to predict the target" \
	"- the efficiency at 16 GPUs is not measured: needs a second run at another GPU count" &&
hasnt canary_one_log_no_efficiency "100.0%" "16 GPUs                            [" "x2.00 the throughput"
pycheck canary_one_log_no_efficiency_json \
	"d['figures']['efficiency_target'] is None and d['figures']['step_target_sec'] is None and d['figures']['largest_ok_gpus'] is None and d['target_not_measured'].startswith('not measured: needs a second run at another GPU count') and d['measure']" \
	"$TMP/one.json"
exit 0
