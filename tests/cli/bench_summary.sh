#!/bin/bash
# bench_summary: make bench's table (scripts/bench/summarize) from made-up
# samples: each comparison's ratio is the geometric mean over rounds with a
# Student's t 95% interval, and a target is met, missed or not resolved by
# where the interval lies (never a bare ratio). Prints ok / not ok lines
# (scripts/run-tests).
cd "$(dirname "$0")/../.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# samples FILE KEY_OURS KEY_PLAIN RATIO...: one round per ratio (plain 10, ours 10 x RATIO)
samples() {
	local f=$1 a=$2 b=$3 r=0 x; shift 3
	for x in "$@"; do
		r=$((r + 1))
		echo "$r $a $(python3 -c "print(10 * $x)")" >>"$f"
		echo "$r $b 10" >>"$f"
	done
}
summ() { scripts/bench/summarize "$1" 5 2 1 0 host cpu rev 2>&1; }
check() { # NAME OUTPUT REGEX
	if grep -qE -- "$3" <<<"$2"; then echo "ok bench summary $1"; else echo "not ok bench summary $1: no line matching '$3' in:"; grep -E '^\| (CPU|dgemm|allreduce)' <<<"$2" | sed 's/^/    /'; fi
}

# the interval: Student's t over the log ratios (two rounds: t = 12.706)
samples "$tmp/t" rl_triad_streaming plain_triad_streaming 1.0 1.1
check "interval is Student's t over the log ratios" "$(summ "$tmp/t")" '^\| triad, streaming stores \(GB/s\) \| 11\.00 \| 10\.00 \| 1\.049 \(0\.572-1\.922\) \|$'

# narrow and above 1.00: met; narrow and below: missed; wide: not resolved
samples "$tmp/met" rl_triad_streaming plain_triad_streaming 1.01 1.02 1.015 1.012 1.018
check "triad met when the whole interval is above 1.00" "$(summ "$tmp/met")" '^\| CPU triad best-of-run >= 1\.00 x .* \| met \| 1\.015 \('
samples "$tmp/missed" rl_triad_streaming plain_triad_streaming 0.80 0.82 0.81 0.79 0.80
check "triad missed when the whole interval is below 1.00" "$(summ "$tmp/missed")" '^\| CPU triad best-of-run >= 1\.00 x .* \| missed \| 0\.804 \('
samples "$tmp/wide" rl_triad_streaming plain_triad_streaming 0.8 1.3 0.9 1.2 1.0
check "triad not resolved when the interval holds 1.00" "$(summ "$tmp/wide")" '^\| CPU triad best-of-run >= 1\.00 x .* \| not resolved \(interval 0\.[0-9]{3}-1\.[0-9]{3} holds 1\) \|'
samples "$tmp/one" rl_dgemm plain_dgemm 1.5
check "one round: no interval, not resolved" "$(summ "$tmp/one")" '^\| dgemm >= 0\.98 x .* \| not resolved \(one round: no interval\) \| 1\.500 \(one round: no interval\) x \|$'
# a side that measured nothing (0) is left out of its round, not divided by
samples "$tmp/zero" rl_dgemm plain_dgemm 1.01 1.02 1.015 1.012
echo "5 rl_dgemm 10" >>"$tmp/zero"; echo "5 plain_dgemm 0" >>"$tmp/zero"
check "a zero sample is left out of the ratio" "$(summ "$tmp/zero")" '^\| dgemm >= 0\.98 x .* \| met \| 1\.014 \('

# what was not measured has no row and no target (not a "not resolved" of nothing)
out=$(summ "$tmp/met")
if grep -qE '^\| (dgemm|sgemm|copy|CPU copy|allreduce)' <<<"$out"; then
	echo "not ok bench summary what was not measured has no row nor target: $(grep -E '^\| (dgemm|sgemm|copy|CPU copy|allreduce)' <<<"$out" | head -2)"
else
	echo "ok bench summary what was not measured has no row nor target"
fi

# all-reduce: every size must be resolved; one size missed is missed
for s in 8 16; do samples "$tmp/ar_met" "ar_default_$s" "ar_plain_$s" 1.00 1.01 0.99 1.00 1.01; done
check "allreduce small sizes met when every size's interval is under 1.05" "$(summ "$tmp/ar_met")" '^\| allreduce_bw per-call time <= 1\.05 x .* \| met \| 2 sizes met, 0 missed, 0 not resolved;'
samples "$tmp/ar_miss" ar_default_8 ar_plain_8 1.00 1.01 0.99 1.00 1.01
samples "$tmp/ar_miss" ar_default_16 ar_plain_16 1.30 1.31 1.29 1.30 1.31
check "allreduce small sizes missed when one size's interval is over 1.05" "$(summ "$tmp/ar_miss")" '^\| allreduce_bw per-call time <= 1\.05 x .* \| missed \| 1 sizes met, 1 missed, 0 not resolved; worst size 16 B: 1\.302'
samples "$tmp/ar_open" ar_default_8 ar_plain_8 1.00 1.01 0.99 1.00 1.01
samples "$tmp/ar_open" ar_default_16 ar_plain_16 0.7 1.4 0.9 1.3 1.0
check "allreduce small sizes not resolved when a size's interval holds 1.05" "$(summ "$tmp/ar_open")" '^\| allreduce_bw per-call time <= 1\.05 x .* \| not resolved \(1 of 2 sizes. intervals hold 1\.05, the widest 0\.[0-9]+-1\.[0-9]+ at 16 B\) \|'
# busbw from 1 MiB: the ratio is plain time / ours (higher is better)
samples "$tmp/bw" ar_default_1048576 ar_plain_1048576 1.10 1.11 1.09 1.10 1.12
check "busbw missed when ours takes 10% longer" "$(summ "$tmp/bw")" '^\| allreduce_bw busbw >= 0\.98 x .* \| missed \| 0 sizes met, 1 missed, 0 not resolved; worst size 1048576 B: 0\.9'
# a malformed line, an unreadable or empty samples file: exit 2 naming it;
# a NaN sample is left out with a warning (no 'nan' in the table)
printf '1 rl_dgemm\n' >"$tmp/malformed"
out=$(scripts/bench/summarize "$tmp/malformed" 5 2 1 0 host cpu rev 2>&1); rc=$?
[ $rc = 2 ] && grep -q "summarize: error: $tmp/malformed:1: " <<<"$out" && echo "ok bench summary malformed samples exit 2" ||
	echo "not ok bench summary malformed samples exit 2: exit $rc: $out"
: >"$tmp/empty"
out=$(scripts/bench/summarize "$tmp/empty" 5 2 1 0 host cpu rev 2>&1); rc=$?
[ $rc = 2 ] && grep -q "no sample in '$tmp/empty'" <<<"$out" && echo "ok bench summary empty samples exit 2" ||
	echo "not ok bench summary empty samples exit 2: exit $rc: $out"
samples "$tmp/nan" rl_dgemm plain_dgemm 1.01 1.02 1.015
echo "4 rl_dgemm nan" >>"$tmp/nan"; echo "4 plain_dgemm 10" >>"$tmp/nan"
out=$(summ "$tmp/nan")
if grep -q "warning: 1 sample(s) not a positive finite number, left out: rl_dgemm round 4 (nan)" <<<"$out" &&
	! grep -qi '| nan\|nan |' <<<"$out"; then echo "ok bench summary nan sample left out"
else echo "not ok bench summary nan sample left out"; grep -i 'nan\|dgemm' <<<"$out" | sed 's/^/    /'; fi
# report.html's open time not resolved (the page no slower than an empty
# one on a loaded machine): never "0.00 s", the page's own time bounds it
printf 'once html12500 5.1_130.4\nonce open12500 0.00_1_3.21\n' >"$tmp/open"
out=$(scripts/bench/summarize "$tmp/open" 5 2 1 0 host cpu rev 2>&1)
if grep -q "no slower than an empty page on this machine at the time (not resolved: the page alone 3.21 s" <<<"$out" &&
	grep -q "opened in headless Chromium <= 5 s.* | met | at most 3.21 s" <<<"$out" && ! grep -q "in 0.00 s" <<<"$out"; then
	echo "ok bench summary html open not resolved"
else echo "not ok bench summary html open not resolved"; grep -i 'chromium' <<<"$out" | sed 's/^/    /'; fi
# a malformed open line (one field, text, negative, the old two-field
# form that said "0.00 s"): exit 2 naming the line, no traceback
bad=""
for v in 3.2 abc_1_2 2_0_x -1_1_0 0_1_-2 0.00_1; do
	printf 'once open12500 %s\n' "$v" >"$tmp/openbad"
	out=$(scripts/bench/summarize "$tmp/openbad" 5 2 1 0 host cpu rev 2>&1); rc=$?
	{ [ $rc = 2 ] && grep -q "summarize: error: $tmp/openbad:1: " <<<"$out" && ! grep -q Traceback <<<"$out"; } || bad="$bad [$v: exit $rc]"
done
[ -z "$bad" ] && echo "ok bench summary malformed open line exit 2" || echo "not ok bench summary malformed open line exit 2:$bad"
exit 0
