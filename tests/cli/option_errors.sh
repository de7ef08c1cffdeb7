#!/bin/bash
# option_errors.sh - one wording for an unknown option in every binary,
# health_report subcommand and script that parses options:
#   PROG: error: unknown option '--grups' (did you mean --groups?)
#   try 'PROG --help' ...
# exit 2, the suggestion where an option is that near (base/ch_parse.c's
# rule; scripts/lib/common.sh's unknown_option for the scripts), nothing
# measured or written before.
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env

# NAME|the unknown option|its suggestion (empty: none)|the command
cases=$(cat <<'EOF'
roofline|--itres|--iters|$B/roofline --itres
allreduce_bw|--grups|--groups|$B/allreduce_bw --grups
loader_contention|--workrs|--workers|$B/loader_contention --workrs
checkpoint_io|--sise|--size|$B/checkpoint_io --sise
health_report|--quite|--quiet|$B/health_report --quite tests/data/report/fleet-healthy
health_report steps|--warmpu|--warmup|$B/health_report steps --warmpu 3 tests/data/steps/nanogpt_issue215.log
health_report canary|--targt-gpus|--target-gpus|$B/health_report canary --targt-gpus 8
health_report history|--windw|--window|$B/health_report history --windw 3
health_report kernel-log|--windw|--window|$B/health_report kernel-log --windw 1h
canary|--quik|--quick|scripts/canary --quik
sweep|--quik|--quick|scripts/sweep --quik
nightly|--quik|--quick|scripts/nightly --quik
healthcheck|--budgte|--budget|scripts/healthcheck --budgte 3
sweep|--grups||scripts/sweep --grups
gpu-check|--grups||scripts/gpu-check --grups
install-deps|--grups||scripts/install-deps --grups --list
bench|--grups||scripts/bench/run --grups
k8s-node-verdicts|--grups||scripts/k8s-node-verdicts --grups
EOF
)
while IFS='|' read -r name opt near cmd; do
	bin=${cmd%% *}
	bin=${bin//\$B/$B}
	test=option_error_${name// /_}_${opt#--}
	if [ ! -x "$bin" ]; then
		echo "skip $test: $bin is not built"
		continue
	fi
	out=$(timeout 60 bash -c "$cmd" 2>&1 >/dev/null </dev/null); rc=$?
	want="$name: error: unknown option '$opt'"
	[ -n "$near" ] && want="$want (did you mean $near?)"
	first=$(head -n 1 <<<"$out")
	if [ $rc = 2 ] && { [ "$first" = "$want" ] || [[ -z $near && $first == "$want ("* ]]; }; then
		echo "ok $test"
	else
		echo "not ok $test: exit $rc (want 2), first line '$first' (want '$want')"
	fi
done <<<"$cases"
