#!/bin/bash
# steps.sh - command-line tests of `health_report steps` and of the canary
# on step logs (docs/canary.md, "Step logs"): the textbook case from the
# synthetic runs' logs alone (every figure measured, the straggler named),
# every real sample of tests/data/steps read, MFU recomputed, the JSON
# report, and bad inputs: listed and skipped, never fatal to the rest.
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env
HR=$B/health_report
DATA=tests/data/steps
TMP=$(mktemp -d /tmp/ch_steps_test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

if [ ! -x "$HR" ]; then
	echo "skip steps: $HR is not built"
	exit 0
fi
if ! command -v python3 >/dev/null; then
	echo "skip steps: python3 is needed to write the synthetic runs"
	exit 0
fi

expect() {
	local name=$1 want=$2
	shift 2
	out=$("$@" 2>&1); rc=$?
	if [ "$rc" != "$want" ]; then
		echo "not ok $name: exit $rc (want $want): $*"
		echo "$out" | head -30 | sed 's/^/    /'
		return 1
	fi
	return 0
}
has() {
	local name=$1 s
	shift
	for s in "$@"; do
		if ! grep -qF -- "$s" <<<"$out"; then
			echo "not ok $name: missing '$s' in:"
			echo "$out" | head -100 | sed 's/^/    /'
			return 1
		fi
	done
	echo "ok $name"
}
hasnt() {
	local name=$1 s
	shift
	for s in "$@"; do
		if grep -qF -- "$s" <<<"$out"; then
			echo "not ok $name: unexpected '$s' in:"
			echo "$out" | head -100 | sed 's/^/    /'
			return 1
		fi
	done
	echo "ok $name"
}

python3 $DATA/make-synthetic.py today "$TMP/today" &&
	python3 $DATA/make-synthetic.py baseline "$TMP/base" || {
	echo "not ok steps: the synthetic runs could not be written"
	exit 0
}

# ---- the textbook case from the logs alone
expect canary_steps_textbook 1 "$HR" canary --steps "$TMP/today" --baseline-steps "$TMP/base" --target-gpus 128 &&
has canary_steps_textbook \
	"step time at 32 GPUs (baseline)          1.00 s                             [measured]" \
	"step time at 64 GPUs (today)             1.60 s                             [measured]" \
	"throughput 32 -> 64 GPUs                 x1.25 for 2x the hardware          [measured]" \
	"scaling efficiency at 64 GPUs            62.5% (vs 32 GPUs)                 [measured]" \
	"synchronous checkpoint stall             5.5 min every 30 min = 18.3% of wall-clock [measured]" \
	"step without the checkpoint stall        1.31 s, 31% over the ideal 1.00 s  [measured]" \
	"input wait                               10.0% of the step = 0.131 s        [measured]" \
	"verdict: FIX FIRST, then re-measure" \
	"do not book 128 GPUs before fixing the checkpoint, the straggler rank 37 on node05 and the host CPU contention and re-measuring at 64 GPUs" \
	"  2. straggler (every rank waits for it)    0.17 s = 10.6% of the step; fixed: 1.43 s per step, throughput +11.9% [measured]" \
	"  4. the rest (not explained by the above)  6.11 ms = 0.4% of the step [measured]" \
	"    2. straggler (every rank waits for it): replace or drain the GPU of rank 37 on node05 (check its node: health report, dcgmi diag) or re-run without it; recovers 0.170 s per step (throughput +11.9%)" \
	"    3. input wait (host CPU contention): give the dataloader its own cores" \
	"straggler: rank 37 on node05 (compute +24.6% over the median rank, robust z 16.6)" \
	"today: input wait                        10.0% of the training step, while the host CPUs are 92% busy [measured]" \
	"host CPUs busy                           92%: the input wait is host CPU contention (busy at 85% or more) [measured+assumed]" &&
hasnt canary_steps_textbook_nothing_given "[given]"
# the measured straggler is an explained loss, not in "the rest"
hasnt canary_steps_textbook_straggler_explained "also investigate" "are not modelled"

# the canary's JSON names the straggler and the step logs
expect canary_steps_json 1 "$HR" canary --steps "$TMP/today" --baseline-steps "$TMP/base" --target-gpus 128 \
	--json "$TMP/canary.json" && python3 - "$TMP/canary.json" <<'EOF' && echo "ok canary_steps_json" || echo "not ok canary_steps_json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["verdict"] == "fix-first", d["verdict"]
assert d["inputs"]["step_time_sec"]["source"] == "measured"
assert abs(d["inputs"]["step_time_sec"]["value"] - 1.6) < 1e-6
assert d["inputs"]["gpus_now"]["value"] == 64 and d["inputs"]["baseline_gpus"]["value"] == 32
assert d["straggler"]["rank"].startswith("rank 37 on node05")
assert d["step_logs"]["today"]["straggler"]["id"] == "rank 37"
# the straggler among the losses and the fixes, in order of size; the rest less it
loss = {x["kind"]: x for x in d["losses"]}
assert loss["straggler"]["known"] and loss["straggler"]["fixable"] and loss["straggler"]["significant"]
assert abs(loss["straggler"]["sec"]["value"] - d["straggler"]["cost_sec"]["value"]) < 1e-12
assert loss["straggler"]["sec"]["source"] == "measured"
t = d["inputs"]["step_time_sec"]["value"] - d["inputs"]["baseline_step_time_sec"]["value"]
rest = t - loss["checkpoint"]["sec"]["value"] - loss["input_wait"]["sec"]["value"] - loss["straggler"]["sec"]["value"]
assert abs(loss["rest"]["sec"]["value"] - rest) < 1e-9 and not loss["rest"]["significant"], loss["rest"]
assert [x["kind"] for x in d["fixes"]] == ["checkpoint", "straggler", "input_wait"], d["fixes"]
assert "rank 37 on node05" in d["fixes"][1]["advice"], d["fixes"][1]
EOF

# a figure given on the command line wins over the logs, and says so
expect canary_steps_given_wins 1 "$HR" canary --steps "$TMP/today" --baseline-steps "$TMP/base" --target-gpus 128 \
	--input-wait 3% &&
has canary_steps_given_wins "input wait                               3.0% of the step"

# the NIC rate stands in for an unmeasured inter-node all-reduce, converted by the tool
expect canary_nic_gbps 1 "$HR" canary --gpus-now 64 --step-time 1.6s --baseline-gpus 32 --baseline-step-time 1.0s \
	--target-gpus 128 --params 7e9 --nic-gbps 200 --gpus-per-node 8 --input-wait 10% --host-cpu 40% &&
has canary_nic_gbps "ring: alpha 0 us, B 25 GB/s (--nic-gbps 200, one NIC per GPU, latency 0) [given+assumed]" \
	"host CPUs busy                           40%: the input wait is not for want of CPU"

# MFU from the logs' tokens, --params and the datasheet peak of the GPUs in the result files
sed 's/"gpu_name": *"host memory"/"gpu_name": "NVIDIA H100 80GB HBM3"/' tests/data/canary/allreduce_bw.json >"$TMP/ar_h100.json"
expect canary_steps_mfu 1 "$HR" canary --steps "$TMP/today" --baseline-steps "$TMP/base" --target-gpus 128 --params 1e9 \
	"$TMP/ar_h100.json" &&
has canary_steps_mfu "MFU today                                6.2%                               [given+measured+assumed]"

# ---- health_report steps on today's run
expect steps_textbook 0 "$HR" steps --max-ranks 3 "$TMP/today" &&
has steps_textbook \
	"steps: 64 ranks on 8 nodes in the logs; clusterhealth JSON lines; 128000 step records in 8 of 8 files" \
	"window: steps 11-60 (50 steps after a warm-up of 10" \
	"checkpoint after step 600: 5.5 min, 64 ranks" \
	"checkpoint stall                               5.5 min every 30 min = 18.3% of wall-clock [measured]" \
	"wall-clock step (stalls included)              1.60 s [measured]" \
	"10.0% of the training step (every rank alike)" \
	"rank 37 on node05: compute 0.88 s, +24." \
	"     50  rank 37 on node05" \
	"... 61 more ranks (--max-ranks)" &&
{ grep -qE '^! .* 50  rank 37 on node05$' <<<"$out" && echo "ok steps_textbook_straggler_marked" ||
	echo "not ok steps_textbook_straggler_marked: rank 37's row is not marked '!'"; }

expect steps_scaling 0 "$HR" steps --max-ranks 1 --baseline "$TMP/base" "$TMP/today" &&
has steps_scaling "x1.25 the throughput for 2x the GPUs: 62.5% efficiency; weak scaling: tokens per GPU and step held [measured]"

expect steps_fail_on_straggler 1 "$HR" steps -q --fail-on-straggler "$TMP/today" &&
has steps_fail_on_straggler "steps: 64 ranks, step 1.307 s, wall-clock step 1.6 s, 1 straggler"
expect steps_no_straggler_in_baseline 0 "$HR" steps -q --fail-on-straggler "$TMP/base" &&
has steps_no_straggler_in_baseline "no straggler"

expect steps_json 0 "$HR" steps --json "$TMP/steps.json" "$TMP/today" &&
python3 - "$TMP/steps.json" <<'EOF' && echo "ok steps_json" || echo "not ok steps_json"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema"] == "clusterhealth.steps" and d["schema_version"] == 1
f = d["figures"]
assert abs(f["stall_frac"]["value"] - 5.5 / 30) < 1e-6, f["stall_frac"]
assert f["stall_frac"]["source"] == "measured"
assert d["ranks"][0]["rank"] == 37 and d["ranks"][0]["straggler"] is True
assert sum(r["straggler"] for r in d["ranks"]) == 1
assert [s["step"] for s in d["stalls"]] == [600, 1725]
EOF
expect steps_json_exists 2 "$HR" steps --json "$TMP/steps.json" "$TMP/today" &&
has steps_json_exists "exists (use --force to replace it)"

# ---- every real sample is read
for f in $DATA/*.log $DATA/*.json; do
	n=$(basename "$f")
	expect "steps_sample_$n" 0 "$HR" steps "$f" && has "steps_sample_$n" "step records in 1 of 1 files"
done

# one rank's logs: the GPU count is unknown, never 1; no scaling efficiency from it; --gpus gives it
expect steps_rank0_gpus_unknown 0 "$HR" steps --baseline $DATA/torchtitan_pr3393_a.log $DATA/torchtitan_pr3393_b.log &&
has steps_rank0_gpus_unknown \
	"GPUs                                           unknown: one rank's log: the job's GPU count is not printed (--gpus N gives it)" \
	"7.01k tokens/s per GPU as logged (the job's total needs its GPU count: --gpus)" \
	"scaling efficiency                             not computed: the GPU count of today's logs is unknown (--gpus N), of the baseline's is unknown (--baseline-gpus N)" &&
hasnt steps_rank0_gpus_unknown_no_count "1 GPUs" "95.8%"
expect steps_rank0_gpus_given 0 "$HR" steps --gpus 64 --baseline-gpus 32 --baseline $DATA/torchtitan_pr3393_a.log $DATA/torchtitan_pr3393_b.log &&
has steps_rank0_gpus_given "32 GPUs at 1.12 s -> 64 GPUs at 1.17 s (wall-clock steps) [given+measured]" \
	"x1.92 the throughput for 2x the GPUs: 95.9% efficiency; weak scaling: tokens per GPU and step held [given+measured]" \
	"7.01k tokens/s per GPU as logged, x 64 GPUs = 448k tokens/s [measured+given]"
expect steps_rank0_mfu 0 "$HR" steps --params 1e9 --gpu "H100 SXM" $DATA/torchtitan_pr3393_a.log &&
has steps_rank0_mfu "MFU recomputed                                 4.43% of training steps, 4.43% of wall-clock (6 x 1e+09 params x tokens/s per GPU / 989.5 TFLOP/s, datasheet H100 SXM, bf16 dense)" &&
hasnt steps_rank0_mfu_no_count "1 GPUs"

# MFU recomputed against the log's own (plain form: 128.4k tok/s per GPU)
expect steps_mfu 0 "$HR" steps --params 1e9 --gpu "H100 SXM" $DATA/plain_issue23.log &&
has steps_mfu "MFU recomputed" "datasheet H100 SXM, bf16 dense" "the log's MFU / recomputed"
expect steps_unknown_gpu 2 "$HR" steps --gpu "Voodoo2" $DATA/plain_issue23.log &&
has steps_unknown_gpu "GPU 'Voodoo2' is not in the datasheet table"

# ---- bad inputs: listed and skipped, the rest read
mkdir -p "$TMP/mixed"
cp $DATA/maxtext_issue8.log "$TMP/mixed/"
printf '\177ELF\002\001\001\000garbage\n' >"$TMP/mixed/core.log"
printf 'nothing to see\x1b[2J here\n' >"$TMP/mixed/notes.txt"
expect steps_bad_among_good 0 "$HR" steps "$TMP/mixed" &&
has steps_bad_among_good "core.log: skipped: binary data" "notes.txt:1: skipped: no training-step line of a known format" \
	"'nothing to see\\e[2J here'" "step records in 1 of 3 files"
expect steps_bad_strict 2 "$HR" steps --strict "$TMP/mixed" &&
has steps_bad_strict "2 input problems skipped (--strict)"
expect steps_only_bad 2 "$HR" steps "$TMP/mixed/core.log" "$TMP/mixed/notes.txt" &&
has steps_only_bad "no training-step record in the 2 step logs given (see 'input problems' below)"
mkdir -p "$TMP/emptydir"
expect steps_empty_folder 2 "$HR" steps "$TMP/emptydir" &&
has steps_empty_folder "no step log in the paths given (a folder is read for its *.log, *.txt, *.out, *.jsonl and *.json files)" &&
hasnt steps_empty_folder "input problems"
expect steps_missing_path 2 "$HR" steps "$TMP/nothing-here" &&
has steps_missing_path "nothing-here"
expect canary_steps_only_bad 2 "$HR" canary --steps "$TMP/mixed/core.log" --target-gpus 128 &&
has canary_steps_only_bad "no training-step record in the 1 step log given"

# ---- the canary on real logs printed by one rank (rank 0 only: the job's GPU count is not in them)
TT_A=$DATA/torchtitan_pr3393_a.log TT_B=$DATA/torchtitan_pr3393_b.log
expect canary_rank0_gpus_unknown 2 "$HR" canary --steps $TT_B --baseline-steps $TT_A --target-gpus 128 &&
has canary_rank0_gpus_unknown \
	"--steps $TT_B: GPU count unknown (one rank's log: the job's GPU count is not printed); give --gpus-now" &&
hasnt canary_rank0_gpus_unknown_no_phantom_option "--baseline-gpus '1'" "not below"
for pair in "megatron_issue756_b.log megatron_issue756_a.log" "maxtext_pr4847_absl.log maxtext_issue8.log"; do
	set -- $pair
	expect "canary_rank0_gpus_unknown_$1" 2 "$HR" canary --steps $DATA/$1 --baseline-steps $DATA/$2 --target-gpus 128 &&
	has "canary_rank0_gpus_unknown_$1" "--steps $DATA/$1: GPU count unknown (one rank's log: the job's GPU count is not printed); give --gpus-now"
done
# today's count given, the baseline's unknown: exit 2 naming the baseline's log and option, never BOOK at "1 GPU"
expect canary_rank0_baseline_unknown 2 "$HR" canary --steps $TT_B --baseline-steps $TT_A --target-gpus 128 --gpus-now 64 &&
has canary_rank0_baseline_unknown \
	"--baseline-steps $TT_A: GPU count unknown (one rank's log: the job's GPU count is not printed); give --baseline-gpus" &&
hasnt canary_rank0_baseline_unknown_no_verdict "BOOK" "1 -> 64 GPUs"
# both counts given: they combine with the step times the logs measured (medians 1.121 s and 1.170 s: 95.8%)
expect canary_rank0_gpus_given 0 "$HR" canary --steps $TT_B --baseline-steps $TT_A --target-gpus 128 --gpus-now 64 --baseline-gpus 32 &&
has canary_rank0_gpus_given \
	"step time at 32 GPUs (baseline)          1.12 s                             [measured]" \
	"throughput 32 -> 64 GPUs                 x1.92 for 2x the hardware          [given+measured]" \
	"scaling efficiency at 64 GPUs            95.8% (vs 32 GPUs)                 [given+measured]" \
	"verdict: BOOK"
# a baseline's logs without today's step: the message names the log and what is missing, not options never given
expect canary_steps_baseline_alone 2 "$HR" canary --baseline-steps "$TMP/base" --gpus-now 64 --target-gpus 128 &&
has canary_steps_baseline_alone "--baseline-steps $TMP/base: a baseline needs today's step: give --steps PATH or --step-time"
# a count the logs measured is named by the option and log it came from
expect canary_steps_count_named 2 "$HR" canary --steps "$TMP/today" --baseline-steps "$TMP/base" --target-gpus 128 --gpus-now 16 &&
has canary_steps_count_named "the baseline's GPUs (from --baseline-steps $TMP/base: 32 ranks) are not below --gpus-now '16'"
expect canary_steps_target_named 2 "$HR" canary --steps "$TMP/today" --baseline-steps "$TMP/base" --target-gpus 64 &&
has canary_steps_target_named "--target-gpus '64' is not above today's GPUs (from --steps $TMP/today: 64 ranks)"
# --baseline-step-time alone overrides the measured step, the baseline's ranks still measured
expect canary_steps_base_time_given 1 "$HR" canary --steps "$TMP/today" --baseline-steps "$TMP/base" --target-gpus 128 \
	--baseline-step-time 1.2s &&
has canary_steps_base_time_given "step time at 32 GPUs (baseline)          1.20 s                             [given]"

# ---- the main report's "Step logs" section (report.md, report.html, health.prom, profile.json)
expect report_steps_section 0 "$HR" -q --out "$TMP/rep" --steps "$TMP/today" tests/data/report/fleet-healthy &&
out=$(cat "$TMP/rep/report.md" "$TMP/rep/health.prom"; grep -c 'data-plot="steps"' "$TMP/rep/report.html") &&
has report_steps_section "## Step logs (measured)" "checkpoint and other stalls 18.3% of wall-clock" \
	"| rank 37 | node05 | 1.3067 | 1.3067 | 0.8771 |" 'clusterhealth_steps_straggler{rank="rank 37",node="node05"} 1' \
	"clusterhealth_steps_stall_fraction 0.18333" &&
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['steps']['ranks'][0]['straggler']" "$TMP/rep/profile.json" &&
echo "ok report_steps_profile" || echo "not ok report_steps_profile"
# a log's text is escaped in every output
mkdir -p "$TMP/hostile"
for r in 0 1 2 3; do
	for s in $(seq 1 15); do
		printf '{"rank":%d,"host":"n\\u001b[31m<b>|x\\\\\\"","step":%d,"start":%d,"end":%d.5,"phases":{"forward":0.1,"backward":0.2,"allreduce":0.2}}\n' $r $s $s $s
	done
done >"$TMP/hostile/h.jsonl"
expect report_steps_escaped 0 "$HR" -q --out "$TMP/rep2" --steps "$TMP/hostile" tests/data/report/fleet-healthy &&
if grep -q $'\x1b' "$TMP/rep2/report.md" "$TMP/rep2/report.html" "$TMP/rep2/health.prom"; then
	echo "not ok report_steps_escaped: a raw escape character in the outputs"
elif grep -qF '<b>|x' "$TMP/rep2/report.html"; then
	echo "not ok report_steps_escaped: raw HTML from a log in report.html"
else
	out=$(cat "$TMP/rep2/report.md" "$TMP/rep2/report.html")
	has report_steps_escaped 'n\e[31m&lt;b&gt;|x\\&quot;' '| n\\e\[31m'
fi
expect steps_terminal_escaped 0 "$HR" steps "$TMP/hostile" &&
if grep -q $'\x1b' <<<"$out"; then echo "not ok steps_terminal_escaped: a raw escape character"; else echo "ok steps_terminal_escaped"; fi

# ---- the efficiency question at today's scale
expect eff_question_given 1 "$HR" canary --baseline-gpus 8 --gpus-now 128 --scaling-efficiency 90% --target-efficiency 95% &&
has eff_question_given "the efficiency question: 8 -> 128 GPUs at 90.0%, can it reach 95.0%?" \
	"today's step must shrink by              5.3% of today's step (1 - 0.900 / 0.950) [given]" \
	"MEASURE FIRST whether the all-reduce can give it"
expect eff_question_model 1 "$HR" canary --baseline-gpus 8 --gpus-now 128 --scaling-efficiency 90% --target-efficiency 95% \
	--params 7e9 --step-time 1.0s --alpha-us 10 --bw-gbps 40 &&
has eff_question_model "5.3%: 1.000 s -> 0.947 s (0.053 s less per step) [given]" \
	"hide 62% of the all-reduce's growth since 8 GPUs behind compute, or raise busbw at 128 GPUs x1.08" \
	"answer: yes, if the exposed communication shrinks by that much"
expect eff_question_reached 0 "$HR" canary --baseline-gpus 8 --gpus-now 128 --scaling-efficiency 96% --target-efficiency 95% &&
has eff_question_reached "answer: already there: 96.0% >= 95.0%"
expect eff_question_from_logs 1 "$HR" canary -q --steps "$TMP/today" --baseline-steps "$TMP/base" --target-efficiency 75% &&
has eff_question_from_logs "scaling efficiency at 64 GPUs            62.5% (vs 32 GPUs), asked 75.0% [given+measured]" \
	"16.7%: 1.600 s -> 1.333 s (0.267 s less per step) [given+measured]"
expect eff_question_needs_gpus 2 "$HR" canary --target-efficiency 95% &&
has eff_question_needs_gpus "needs --gpus-now and --baseline-gpus"

# ---- step numbers are bounded at the reader: one out of range is that
# line's problem, named, and the rest is read (never an overflow)
mkdir -p "$TMP/bounds"
for s in $(seq 1 15); do
	printf '{"rank":0,"host":"n1","step":%d,"start":%d,"end":%d.5,"phases":{"forward":0.1,"backward":0.2}}\n' $s $s $s
done >"$TMP/bounds/ok.jsonl"
{ printf '{"rank":0,"host":"n1","step":9223372036854775807,"start":0,"end":0.5}\n'; cat "$TMP/bounds/ok.jsonl"; } >"$TMP/bounds/big.jsonl"
{ printf '[rank1] step 9223372036854775807 | loss 2.0 | 0.8 s/step\n'
  printf '[rank1] step 99999999999999999999 | loss 2.0 | 0.8 s/step\n'
  for s in $(seq 1 15); do printf '[rank1] step %d | loss 2.0 | 0.8 s/step\n' $s; done
  printf 'step: 1e300  loss: 2.0  memory: 1GiB  tps: 7,282\n'; } >"$TMP/bounds/big.log"
expect steps_step_out_of_range 0 "$HR" steps "$TMP/bounds/big.jsonl" "$TMP/bounds/big.log" &&
has steps_step_out_of_range "big.jsonl:1: skipped: step number out of range (0 to 1000000000000)" \
	"big.log:1: skipped: step number out of range" "big.log:2: skipped: step number out of range" \
	"big.log:18: skipped: step number out of range" "2 ranks on 1 node in the logs"
# ---- one file, two formats, the same rank number: two ranks, never merged
{ for s in $(seq 1 15); do printf '[rank0] step %d | loss 2.0 | 0.8 s/step\n' $s; done; cat "$TMP/bounds/ok.jsonl"; } >"$TMP/bounds/mix.log"
expect steps_formats_kept_apart 0 "$HR" steps "$TMP/bounds/mix.log" &&
has steps_formats_kept_apart "steps: 2 ranks on 1 node in the logs; clusterhealth JSON lines, plain step lines; 30 step records" \
	"rank 0 (plain step lines)" "rank 0 (clusterhealth JSON lines"
# ---- more frameworks: a real sample each (tests/data/steps/README.md), the
# figures a person reads off the log
expect steps_torchtitan_wps 0 "$HR" steps $DATA/torchtitan_pr364_wps.log &&
has steps_torchtitan_wps "torchtitan; 4 step records" "3.81k tokens/s per GPU as logged" "MFU in the log                                 22.30%" &&
hasnt steps_torchtitan_wps_no_cut "cut off"
expect steps_nemo2 0 "$HR" steps $DATA/nemo2_bionemo_pr740.log &&
has steps_nemo2 "NeMo 2.0; 6 step records" "training step (median over ranks)              31.6 ms" &&
hasnt steps_nemo2_not_megatron "Megatron-LM iteration line"
expect steps_megatron_deepspeed_timers 0 "$HR" steps $DATA/megatron_deepspeed_ds3742_timers.log &&
has steps_megatron_deepspeed_timers "forward 0.66 s (16%), backward 2.16 s (53%), optimizer 1.17 s (29%)" "112.9 TFLOP/s per GPU"
# the job's tokens (768 x 4096 a step) over 14.41 s = 218k tokens/s; tgs 1.14k
# per GPU: the two imply 192 GPUs; MFU 6 x 1e9 x 1136.7 / 989e12 = 0.69%
expect steps_megatron_deepspeed_tgs 0 "$HR" steps --params 1e9 --peak-tflops 989 --gpus 192 $DATA/megatron_deepspeed_alcf_tgs.log &&
has steps_megatron_deepspeed_tgs "3.15M per step (the job's, as logged), 218k tokens/s over training steps; 1.14k per GPU as logged: the two imply 192 GPUs" \
	"69.24 TFLOP/s per GPU" "MFU recomputed                                 0.69%" &&
hasnt steps_megatron_deepspeed_tgs_tokens "tokens: not in these logs"
expect steps_megatron_deepspeed_seconds 0 "$HR" steps $DATA/megatron_deepspeed_bigscience_seconds.log &&
has steps_megatron_deepspeed_seconds "training step (median over ranks)              106.40 s" "147.4 TFLOP/s per GPU" \
	"4.19M per step (the job's, as logged), 39.4k tokens/s over training steps; per GPU needs the job's GPU count (--gpus)"
# consumed tokens grow by 4,194,304 a step: / 106.40 s = 39.4k tokens/s; / 384 GPUs = 103
# per GPU; 6 x 176e9 x 102.7 / 312e12 = 34.75% (BLOOM on A100s)
expect steps_megatron_deepspeed_seconds_gpus 0 "$HR" steps --gpus 384 --params 176e9 --gpu "A100 SXM" $DATA/megatron_deepspeed_bigscience_seconds.log &&
has steps_megatron_deepspeed_seconds_gpus "/ 384 GPUs = 103 per GPU [measured+given]" "MFU recomputed                                 34.75% of training steps"
expect steps_nanogpt 0 "$HR" steps $DATA/nanogpt_issue215.log &&
has steps_nanogpt "nanoGPT; 11 step records" "training step (median over ranks)              1.10 s" "MFU in the log                                 15.34%"
# nanotron: 11.4K tokens/s per GPU; 6 x 1e9 x 11400 / 989e12 = 6.92%
expect steps_nanotron 0 "$HR" steps --params 1e9 --peak-tflops 989 --gpus 8 $DATA/nanotron_issue390.log &&
has steps_nanotron "nanotron; 4 step records" "11.50 s" "11.4k tokens/s per GPU as logged, x 8 GPUs = 91.2k tokens/s" "38.3 TFLOP/s per GPU" "MFU recomputed                                 6.92%"
expect steps_nanotron_host 0 "$HR" steps $DATA/nanotron_pr23_host.log &&
has steps_nanotron_host "1 rank on 1 node" "ip-26-0-160-" "1.94k tokens/s per GPU as logged (the job's total needs its GPU count: --gpus)"
# a per-GPU figure is never the job's: MaxText's Tokens/s/device x 8 GPUs, and
# the canary's GPU-hours per 1M tokens today the same at any GPU count (at
# the target not measured: one log, no baseline, no model):
# 1e6 / (19,222 x 8) s x 8 GPUs / 3600 = 0.01445 (the window's median 19.22k)
expect steps_maxtext_per_device 0 "$HR" steps --gpus 8 $DATA/maxtext_pr4847_absl.log &&
has steps_maxtext_per_device "19.2k tokens/s per GPU as logged, x 8 GPUs = 154k tokens/s [measured+given]"
expect canary_maxtext_per_device 1 "$HR" canary --steps $DATA/maxtext_pr4847_absl.log --gpus-now 8 --target-gpus 16 &&
has canary_maxtext_per_device "at 8 GPUs (today)                        0.01445 GPU-hours per 1M tokens" \
	"at 16 GPUs                               not measured (the step at 16 GPUs is not)"
expect canary_maxtext_per_device_64 1 "$HR" canary --steps $DATA/maxtext_pr4847_absl.log --gpus-now 64 --target-gpus 128 &&
has canary_maxtext_per_device_64 "at 64 GPUs (today)                       0.01445 GPU-hours per 1M tokens"
expect steps_lightning 0 "$HR" steps $DATA/lightning_issue4225.log &&
has steps_lightning "PyTorch Lightning; 5 step records" "4.87 s"
expect steps_deepspeed_throughput_only 2 "$HR" steps $DATA/deepspeed_samplespersec_issue1825.txt &&
has steps_deepspeed_throughput_only "only DeepSpeed's throughput lines ('SamplesPerSec=', 2)"
# a whole line of an unknown variant: named once, then counted
for s in 5 6 7; do printf 'step: %d  loss: 7.0  memory: 66.91GiB(37.51%%)  tflops: 313.36  mfu: 13.93%%\n' $s; done >"$TMP/bounds/variant.log"
cat $DATA/torchtitan_pr364_wps.log >>"$TMP/bounds/variant.log"
expect steps_variant_once 0 "$HR" steps "$TMP/bounds/variant.log" &&
has steps_variant_once "variant.log:1: skipped: a whole torchtitan line of a variant this reader does not read (no 'tps:' or 'wps:')" \
	"3 lines of that torchtitan variant skipped in all" &&
hasnt steps_variant_once_not_per_line "variant.log:2:" "cut off"
expect steps_help 0 "$HR" steps --help && has steps_help "Usage: health_report steps" "--baseline PATH"
expect steps_no_args 2 "$HR" steps && has steps_no_args "no step log given"
# an MFU not computed names no source ("[given]" when nothing was given)
expect steps_mfu_not_computed_no_source 0 "$HR" steps tests/data/steps/maxtext_issue8.log &&
	{ grep -qF "not computed: needs --params" <<<"$out" || echo "not ok steps_mfu_not_computed_no_source: no 'not computed' row"; } &&
	hasnt steps_mfu_not_computed_no_source "--peak-tflops) [given]"
exit 0
