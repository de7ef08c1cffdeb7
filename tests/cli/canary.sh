#!/bin/bash
# canary.sh - command-line tests of `health_report canary` (the pre-scaling
# canary, docs/canary.md): the textbook case figure by figure, inputs from a
# file, the fit recovering the model behind the synthetic results, the JSON
# output, and bad inputs exiting 2 with a message naming option and value.
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env
HR=$B/health_report
DATA=tests/data/canary
TMP=$(mktemp -d /tmp/ch_canary_test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

if [ ! -x "$HR" ]; then
	echo "skip canary: $HR is not built"
	exit 0
fi
if ! "$HR" canary --help >/dev/null 2>&1; then
	echo "skip canary: $HR has no 'canary' subcommand yet (health_report main does not dispatch it)"
	exit 0
fi

# expect NAME WANT_EXIT CMD... ; then check_out NAME REGEX... against $out
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

TEXTBOOK=(--baseline-gpus 32 --baseline-step-time 1.0s --gpus-now 64 --step-time 1.6s
	--checkpoint-interval 30m --checkpoint-block 5.5m --input-wait 10% --target-gpus 128)

# ---- the textbook case, figure by figure
expect canary_textbook 1 "$HR" canary "${TEXTBOOK[@]}" &&
has canary_textbook \
	"throughput 32 -> 64 GPUs                 x1.25 for 2x the hardware          [given]" \
	"scaling efficiency at 64 GPUs            62.5% (vs 32 GPUs)" \
	"5.5 min every 30 min = 18.3% of wall-clock [given]" \
	"step without the checkpoint stall        1.31 s, 31% over the ideal 1.00 s" \
	"verdict: FIX FIRST, then re-measure" \
	"do not book 128 GPUs before fixing the checkpoint and the host CPU contention and re-measuring at 64 GPUs" \
	"32 -> 64 GPUs: 2x the hardware for x1.25 the throughput; each unit of work costs x1.60 the GPU-hours"

# without a communication model the target follows today's measured trend
# (x1.25 for 2x), not perfect scaling
expect canary_textbook_trend 1 "$HR" canary "${TEXTBOOK[@]}" &&
has canary_textbook_trend \
	"step time                                2.56 s                             [given+assumed]" \
	"throughput 64 -> 128 GPUs                x1.25 for 2x the hardware          [given+assumed]" \
	"follows today's measured trend (32 -> 64 GPUs: x1.25 the throughput for 2x the hardware, the step x1.60), not perfect scaling"

# MFU measured over training steps only (44% -> 33% is x0.75 = 1.00/1.31): said, not a contradiction
expect canary_mfu_training_steps 1 "$HR" canary "${TEXTBOOK[@]}" --baseline-mfu 44% --mfu-now 33% &&
has canary_mfu_training_steps "MFU was likely measured over training steps only" "verdict: FIX FIRST, then re-measure"
if grep -q "contradiction" <<<"$out"; then echo "not ok canary_mfu_training_steps_no_contradiction"; else echo "ok canary_mfu_training_steps_no_contradiction"; fi

# contradicting or too few inputs never BOOK: MEASURE FIRST (exit 1) with what to measure
expect canary_mfu_contradiction 1 "$HR" canary "${TEXTBOOK[@]}" --baseline-mfu 44% --mfu-now 20% &&
has canary_mfu_contradiction "contradiction: MFU went from 44.0% to 20.0%" "verdict: MEASURE FIRST: the inputs contradict each other"
expect canary_mfu_over_100 1 "$HR" canary --baseline-gpus 32 --baseline-step-time 1.0s --gpus-now 64 --step-time 1.6s \
	--target-gpus 128 --params 7e9 --tokens-per-step 4e6 --peak-tflops 989 &&
has canary_mfu_over_100 "above 100%" "verdict: MEASURE FIRST: the inputs contradict each other"
expect canary_baseline_slower 1 "$HR" canary --baseline-gpus 32 --baseline-step-time 2.0s --gpus-now 64 --step-time 1.6s --target-gpus 128 &&
has canary_baseline_slower "is slower than today's" "verdict: MEASURE FIRST: the inputs contradict each other"
expect canary_no_baseline_no_model 1 "$HR" canary --gpus-now 64 --step-time 1.0 --target-gpus 128 &&
has canary_no_baseline_no_model "verdict: MEASURE FIRST: too little data to predict the target" \
	"measure the step at two GPU counts (health_report canary --steps TODAY_LOGS --baseline-steps SMALLER_RUN_LOGS"
expect canary_comm_only_no_model 1 "$HR" canary --gpus-now 8 --input-wait 1% --target-gpus 16 &&
has canary_comm_only_no_model "verdict: MEASURE FIRST: too little data to predict the target" \
	"measure how the all-reduce scales"
expect canary_insufficient_json 1 "$HR" canary --gpus-now 64 --step-time 1.0 --target-gpus 128 --json "$TMP/ins.json" &&
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert d['verdict']=='measure-first' and d['insufficient'] and d['measure'], d" "$TMP/ins.json" &&
echo "ok canary_insufficient_json" || echo "not ok canary_insufficient_json"

# the same from the documented inputs file
expect canary_inputs_file 1 "$HR" canary --inputs $DATA/textbook.txt &&
has canary_inputs_file "1.31 s, 31% over the ideal 1.00 s" "18.3% of wall-clock" \
	"do not book 128 GPUs before fixing the checkpoint and the host CPU contention"

# a broken result file beside a complete --inputs file: skipped and listed, the file used
printf '{"schema": "clusterhealth.result", "tool": "allreduce_bw",' >"$TMP/broken.json"
expect canary_inputs_file_beside_broken_result 1 "$HR" canary --inputs $DATA/textbook.txt "$TMP/broken.json" &&
has canary_inputs_file_beside_broken_result "input problems (1):" "broken.json" \
	"no usable result file among the inputs: the canary runs on the --inputs file" "18.3% of wall-clock"

# an unknown loss says which input is missing
expect canary_comm_missing_params 1 "$HR" canary --inputs $DATA/textbook.txt $DATA &&
has canary_comm_missing_params "exposed communication                  not known: no --params (the gradient's size)"
expect canary_comm_missing_model 1 "$HR" canary --inputs $DATA/textbook.txt --params 7e9 &&
has canary_comm_missing_model "exposed communication                  not known: no all-reduce model (no allreduce_bw results, no --alpha-us/--bw-gbps)"

# the command line overrides the file
expect canary_override 1 "$HR" canary --inputs $DATA/textbook.txt --checkpoint-block 3m &&
has canary_override "3 min every 30 min = 10.0% of wall-clock"

# ---- the fit recovers the model behind the synthetic results (ring:
# intra-node alpha 2 us, B 150 GB/s; inter-node alpha 8 us, B 40 GB/s)
expect canary_fit 1 "$HR" canary "${TEXTBOOK[@]}" --params 7e9 --grad-bytes-per-param 2 \
	--json "$TMP/canary.json" $DATA &&
has canary_fit "1 allreduce_bw, 2 loader_contention result files read" \
	"ring: alpha 8 us, B 40 GB/s (fit of allreduce_bw ring) [fitted]" \
	"gradient all-reduce at 64 GPUs           0.69 s                             [given+measured+fitted]"
# ---- on a host without OpenBLAS (tests/nolapack.c hides it from dlopen):
# the loader's reason said once, and each fit "no fit" for that reason, not
# "the points cannot separate latency from bandwidth"
NOLAPACK=$PWD/${B:-build}/tests/libnolapack.so
if [ -f "$NOLAPACK" ]; then
	out=$(LD_PRELOAD=$NOLAPACK "$HR" canary "${TEXTBOOK[@]}" --params 7e9 --grad-bytes-per-param 2 $DATA 2>&1)
	if [ "$(grep -c "cannot load LAPACK's dgels from libopenblas.so.0" <<<"$out")" = 1 ] &&
		grep -q "no fit: LAPACK's least-squares solver unavailable or failed (said above)" <<<"$out" &&
		! grep -q "cannot separate latency from bandwidth" <<<"$out"; then
		echo "ok canary_fit_without_lapack_says_why"
	else
		echo "not ok canary_fit_without_lapack_says_why:"
		echo "$out" | grep -i "lapack\|no fit" | head -8 | sed 's/^/    /'
	fi
else
	echo "skip canary_fit_without_lapack_says_why: $NOLAPACK is not built"
fi

if python3 - "$TMP/canary.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
f = {(x["level"], x["model"]): x for x in d["fits"] if x["algo"] == "ring"}
for lvl, a, b in (("intra", 2.0, 150.0), ("inter", 8.0, 40.0)):
    fit = f[(lvl, "ring")]["fit"]
    assert abs(fit["alpha_us"] / a - 1) < 0.01 and abs(fit["bw_gbps"] / b - 1) < 0.01, (lvl, fit)
    assert fit["r2"] > 0.9999, fit
# the prediction at the target: 14 GB per rank at 128 ranks on the inter-node ring
p = f[("inter", "ring")]["predicted"]
t = 2 * 127 / 128 * 14e9 / (40e9) * 1e6 + 2 * 127 * 8
assert p["nranks"] == 128 and abs(p["time_us"] / t - 1) < 0.01, (p, t)
assert abs(p["busbw_gbps"] / (14e9 / (p["time_us"] * 1e3) * 2 * 127 / 128) - 1) < 1e-9, p
g = d["figures"]
assert abs(g["efficiency_now"]["value"] - 0.625) < 1e-12 and g["efficiency_now"]["source"] == "given"
assert d["verdict"] == "fix-first"
assert [x["kind"] for x in d["fixes"]] == ["checkpoint", "input_wait"], d["fixes"]
PY
then echo "ok canary_fit_json"; else echo "not ok canary_fit_json: fitted alpha/B not within 1% or figures wrong"; fi

# ---- a fit that misses its own points (times x2.5 and x0.4 in turn) cannot carry
# a BOOK: the same inputs book on the clean results, measure first on the noisy
mkdir -p "$TMP/clean" "$TMP/noisy" && cp $DATA/allreduce_bw.json "$TMP/clean/" &&
python3 - $DATA/allreduce_bw.json "$TMP/noisy/allreduce_bw.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
k = 0
for s in d["results"]["sweeps"]:
    for r in s["rows"]:
        k += 1
        for side in ("out_of_place", "in_place"):
            for st in ("min", "median", "mean", "p95", "max"):
                r[side]["time_us"][st] *= 2.5 if k % 2 else 0.4
json.dump(d, open(sys.argv[2], "w"))
PY
ROUGH=(--gpus-now 8 --step-time 1.0s --baseline-gpus 4 --baseline-step-time 0.95s --params 1e8 --target-gpus 16)
expect canary_clean_fit_books 0 "$HR" canary "${ROUGH[@]}" "$TMP/clean" && has canary_clean_fit_books "verdict: BOOK"
expect canary_rough_fit_measure_first 1 "$HR" canary "${ROUGH[@]}" --json "$TMP/rough.json" "$TMP/noisy" &&
has canary_rough_fit_measure_first "verdict: MEASURE FIRST: the all-reduce fit is too rough to predict the target" \
	"its fit misses its points by 59% (rms), more than the 20% a prediction can rest on" &&
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (d['verdict']=='measure-first' and d['rough_fit'] is True))" "$TMP/rough.json" &&
	echo "ok canary_rough_fit_json" || echo "not ok canary_rough_fit_json"

# ---- measurements only: gpus now and input wait measured, no step time
expect canary_measured_only 1 "$HR" canary --target-gpus 16 $DATA &&
has canary_measured_only "GPUs (ranks)                             8                                  [measured]" \
	"(loader_contention on n2, placement as-is, config as-is)" \
	"do not book 16 GPUs before fixing the host CPU contention and re-measuring at 8 GPUs"

# ---- a loader_contention result measured on a busy host is not the job's
# input wait (the health report does not judge it either: hr_quality_loader);
# the same file on an idle host is
mkdir -p "$TMP/lbusy" "$TMP/lidle" "$TMP/lbase" &&
python3 - $DATA/loader_n2.json "$TMP" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
def cond(psi, busy):
    s = lambda p, b: {"utc": "2026-12-05T06:14:56Z", "loadavg_1m": 1.9, "cpu_pressure_some_avg10_pct": p,
                      "cpu_busy_pct": b, "run_cpu_pct": 0.5}
    # after the run: its own load, never a reason not to judge it
    return {"before": s(psi, busy), "after": s(90.0, 95.0), "online_cpus": 2, "procs_on_host": 1,
            "threads_per_proc": 4, "per_core": 2.0, "cpu_busy_interval_sec": 0.2, "reasons": {}}
d["conditions"] = cond(84.0, 62.0)
json.dump(d, open(sys.argv[2] + "/lbusy/loader.json", "w"))
d["conditions"] = cond(2.0, 5.0)
json.dump(d, open(sys.argv[2] + "/lidle/loader.json", "w"))
d["results"]["configs"].append({"name": "baseline", "placement": "baseline", "input_wait_frac": 0.0,
                                "psi_cpu_some_avg10": 35.0})
json.dump(d, open(sys.argv[2] + "/lbase/loader.json", "w"))
PY
LBUSY=(--target-gpus 128 --gpus-now 64 --step-time 1.6s --baseline-gpus 32 --baseline-step-time 1.0s)
expect canary_loader_busy_not_used 1 "$HR" canary "${LBUSY[@]}" --json "$TMP/lbusy.json" "$TMP/lbusy" &&
has canary_loader_busy_not_used \
	"input wait                               not measured: loader_contention on n2 was measured on a busy host (host CPU pressure 84%; host CPUs 62% busy with other work); re-run on an idle node or give --input-wait" \
	"input wait (host CPU contention)       not measured: loader_contention on n2 was measured on a busy host" &&
hasnt canary_loader_busy_not_used "12.0% of the step" "host CPU contention and re-measuring" \
	"give the dataloader its own cores" &&
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (d['inputs']['input_wait_frac'] is None and 'busy host (host CPU pressure 84%' in d['input_wait_not_measured'] and 'input_wait' not in [x['kind'] for x in d['fixes']]))" "$TMP/lbusy.json" &&
	echo "ok canary_loader_busy_json" || echo "not ok canary_loader_busy_json"
expect canary_loader_busy_baseline_psi 1 "$HR" canary "${LBUSY[@]}" "$TMP/lbase" &&
has canary_loader_busy_baseline_psi "busy host (host CPU pressure 35% before the load started (loader_contention's baseline))"
expect canary_loader_idle_used 1 "$HR" canary "${LBUSY[@]}" "$TMP/lidle" &&
has canary_loader_idle_used "input wait                               12.0% of the step = 0.192 s        [given+measured]" \
	"(loader_contention on n2, placement as-is, config as-is)" \
	"do not book 128 GPUs before fixing the host CPU contention and re-measuring at 64 GPUs" &&
hasnt canary_loader_idle_used "not measured"
# no step time: the share is not measured either
expect canary_loader_busy_comm_only 2 "$HR" canary --target-gpus 16 --gpus-now 8 "$TMP/lbusy" &&
has canary_loader_busy_comm_only "nothing to judge"
# an all-reduce stage stopped before it measured a size (scripts/canary's
# --budget, allreduce_bw --timeout) and no step log: MEASURE FIRST naming
# the run that measured nothing (exit 1), never "nothing to judge" (exit 2)
mkdir -p "$TMP/arstop"
python3 - tests/data/report/real-vm/allreduce_bw.json "$TMP/arstop/allreduce_bw.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for s in d["results"]["sweeps"]:
    s["rows"] = []
d["status"], d["exit_code"], d["reason"] = "timeout", 5, "stopped by --timeout"
json.dump(d, open(sys.argv[2], "w"))
PY
expect canary_allreduce_stopped_measure_first 1 "$HR" canary --target-gpus 8 --gpus-now 2 --json "$TMP/arstop.json" "$TMP/arstop" &&
has canary_allreduce_stopped_measure_first "verdict: MEASURE FIRST" \
	"(allreduce_bw's run in $TMP/arstop/allreduce_bw.json measured no size of 2 or more ranks (status 'timeout': stopped by --timeout); give it more time: scripts/canary --budget, allreduce_bw --timeout)" &&
hasnt canary_allreduce_stopped_measure_first "nothing to judge" &&
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (d['verdict']=='measure-first' and 'measured no size' in d['measure']))" "$TMP/arstop.json" &&
	echo "ok canary_allreduce_stopped_json" || echo "not ok canary_allreduce_stopped_json"

# ---- bad inputs exit 2 naming the option and value
expect canary_negative_time 2 "$HR" canary --gpus-now 64 --step-time -1.6 --target-gpus 128 &&
has canary_negative_time "value '-1.6' for --step-time is out of range"
expect canary_zero_gpus 2 "$HR" canary --gpus-now 0 --step-time 1.6 --target-gpus 128 &&
has canary_zero_gpus "value '0' for --gpus-now is out of range"
expect canary_target_below 2 "$HR" canary --gpus-now 64 --step-time 1.6 --target-gpus 32 &&
has canary_target_below "--target-gpus '32' is not above --gpus-now '64'"
expect canary_block_over_interval 2 "$HR" canary "${TEXTBOOK[@]}" --checkpoint-block 45m &&
has canary_block_over_interval "--checkpoint-block '2700' s is not shorter than --checkpoint-interval '1800' s"
expect canary_bad_duration 2 "$HR" canary --gpus-now 64 --step-time 1.6fortnights --target-gpus 128 &&
has canary_bad_duration "invalid duration '1.6fortnights' for --step-time"
expect canary_bad_fraction 2 "$HR" canary "${TEXTBOOK[@]}" --input-wait 12 &&
has canary_bad_fraction "invalid fraction '12' for --input-wait"
expect canary_no_step_with_baseline 2 "$HR" canary --gpus-now 64 --baseline-gpus 32 --baseline-step-time 1 --target-gpus 128 &&
has canary_no_step_with_baseline "need --step-time"
printf 'gpus-now = 64\nstep-time = 1.6\nsteps-per-day = 9\n' >"$TMP/bad.txt"
expect canary_inputs_unknown_key 2 "$HR" canary --inputs "$TMP/bad.txt" --target-gpus 128 &&
has canary_inputs_unknown_key "$TMP/bad.txt:3: unknown key 'steps-per-day'"
printf 'gpus-now = 64\nstep-time = -2s\n' >"$TMP/neg.txt"
expect canary_inputs_negative 2 "$HR" canary --inputs "$TMP/neg.txt" --target-gpus 128 &&
has canary_inputs_negative "value '-2s' for step-time ($TMP/neg.txt:2) is out of range"
# every physical option is bounded to a plausible range (--help shows it): a
# value outside, tiny or huge, exits 2 naming the option, never inf/nan
for case in "nic-gbps 1e-300" "nic-gbps 1e7" "bw-gbps 1e-300" "alpha-us 1e300" "step-time 1e-12s" \
	"params 1e-300" "peak-tflops 1e-300" "mfu-now 1e-300" "power-cap 1e-300" "grad-bytes-per-param 1e-300" \
	"tokens-per-step 1e300" "run-steps 1e300" "gpus-per-node 100000" "checkpoint-interval 1e-300" \
	"scaling-efficiency 1e-300" "compute-share 1e-300" "pue 9" "price-per-kwh 1e300" "carbon 1e300"; do
	set -- $case
	expect "canary_bound_$1_$2" 2 "$HR" canary --gpus-now 64 --target-gpus 128 --step-time 1.6 "--$1" "$2" &&
	has "canary_bound_$1_$2" "value '$2' for --$1 is out of range (expected"
done
printf 'gpus-now = 64\nstep-time = 1.6\nnic-gbps = 1e-300\n' >"$TMP/tiny.txt"
expect canary_inputs_bounded 2 "$HR" canary --inputs "$TMP/tiny.txt" --target-gpus 128 &&
has canary_inputs_bounded "for nic-gbps ($TMP/tiny.txt:3) is out of range"
head -c 2000 $DATA/allreduce_bw.json >"$TMP/truncated.json"
expect canary_truncated_result 2 "$HR" canary "${TEXTBOOK[@]}" "$TMP/truncated.json" &&
has canary_truncated_result "$TMP/truncated.json:" "not valid JSON"
python3 - $DATA/allreduce_bw.json "$TMP/negtime.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["results"]["sweeps"][1]["rows"][2]["out_of_place"]["time_us"]["median"] = -5.0
json.dump(d, open(sys.argv[2], "w"))
PY
expect canary_negative_result_time 2 "$HR" canary "${TEXTBOOK[@]}" "$TMP/negtime.json" &&
has canary_negative_result_time "results.sweeps[1].rows[2].out_of_place.time_us.median: expected a positive time, got '-5.0'"
expect canary_missing_target 2 "$HR" canary --gpus-now 64 --step-time 1.6 &&
has canary_missing_target "missing --target-gpus"

# scripts/canary: two runs started in the same second each get a folder of
# their own (they shared RESULTS/canary/HOST/TIME and wrote over each
# other); with no binaries built both stop at once, after making it
mkdir -p "$TMP/noB" "$TMP/res2"
B="$TMP/noB" scripts/canary --target-gpus 8 --results "$TMP/res2" >"$TMP/cc1.out" 2>&1 &
B="$TMP/noB" scripts/canary --target-gpus 8 --results "$TMP/res2" >"$TMP/cc2.out" 2>&1 &
wait
n=$(find "$TMP/res2/canary" -mindepth 2 -maxdepth 2 -type d | wc -l)
if [ "$n" = 2 ]; then echo "ok canary_script_concurrent_runs_own_folders ($(find "$TMP/res2/canary" -mindepth 2 -maxdepth 2 -type d -printf '%f ' | sort))"
else echo "not ok canary_script_concurrent_runs_own_folders: $n folders (want 2)"; find "$TMP/res2" | head; fi
exit 0
