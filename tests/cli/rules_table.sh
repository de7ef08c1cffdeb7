#!/bin/bash
# rules_table.sh - the rules as one table: docs/health_report.md's rule
# table is `health_report rules` exactly, every code of its other tables and
# every reason code of the judge's sources is a rule, every rule's code and
# function are in the sources, and the numbers of its thresholds are the
# rules' parameters, the ones the judge reads from the table
# (tests/cli/check-rules-doc.py); the checker fails on a doc with a row
# missing, a row too many and a row changed, on a number changed in the docs
# or in the table's parameters, and on a shared parameter that two rows give
# differently.
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env
HR=$B/health_report
TMP=$(mktemp -d /tmp/ch_rules_test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
if [ ! -x "$HR" ]; then
	echo "skip rules_table: $HR is not built"
	exit 0
fi
CHECK="python3 tests/cli/check-rules-doc.py"
SRC=(report/judge/*.c)
if "$HR" rules >"$TMP/rules.md" && [ "$(grep -c '^| `' "$TMP/rules.md")" -ge 40 ]; then
	echo "ok rules_table_printed ($(grep -c '^| `' "$TMP/rules.md") rules)"
else
	echo "not ok rules_table_printed"
fi
"$HR" rules --params >"$TMP/params.tsv" || echo "not ok rules_table_params: health_report rules --params exit $?"
msg=$($CHECK docs/health_report.md "$TMP/rules.md" --params "$TMP/params.tsv" "${SRC[@]}")
[ $? = 0 ] && echo "ok rules_table_docs_agree ($msg)" || { echo "not ok rules_table_docs_agree:"; echo "$msg" | sed 's/^/    /'; }
# the checker can fail: a rule's row removed, a row that is no rule, a threshold changed
grep -v '^| `straggler` |' docs/health_report.md >"$TMP/missing.md"
sed 's/^\(| `cpu_turbo` |.*\)$/\1\n| `made_up_rule` | warn | x | y | z | `f` |/' docs/health_report.md >"$TMP/extra.md"
sed 's/^\(| `curve_gap` | warn | [^|]*| \)one below 0.50/\1one below 0.40/' docs/health_report.md >"$TMP/changed.md"
m1=$($CHECK "$TMP/missing.md" "$TMP/rules.md" "${SRC[@]}"); r1=$?
m2=$($CHECK "$TMP/extra.md" "$TMP/rules.md" "${SRC[@]}"); r2=$?
m3=$($CHECK "$TMP/changed.md" "$TMP/rules.md" "${SRC[@]}"); r3=$?
if [ $r1 = 1 ] && [[ $m1 == *"rule straggler has no row"* ]] && [ $r2 = 1 ] && [[ $m2 == *"made_up_rule, which is not a rule"* ]] &&
   [ $r3 = 1 ] && [[ $m3 == *"row of curve_gap differs"* ]]; then
	echo "ok rules_table_check_fails_on_a_wrong_doc"
else
	echo "not ok rules_table_check_fails_on_a_wrong_doc: $r1 '$m1' / $r2 '$m2' / $r3 '$m3'"
fi
# the numbers: a number changed in the docs, one changed in the table's
# parameters, and a shared parameter two rows give differently are each named
sed 's/^\(| `curve_dip` |.*\)below 0.80 x/\1below 0.85 x/' docs/health_report.md >"$TMP/number.md"
awk -F'\t' -v OFS='\t' '$1 == "curve_dip" && $2 == "dip" { $3 = "0.85"; $4 = "0.85" } 1' "$TMP/params.tsv" >"$TMP/p_changed.tsv"
awk -F'\t' -v OFS='\t' '$1 == "slow_pair" && $2 == "z_outlier" { $3 = "3"; $4 = "3.0" } 1' "$TMP/params.tsv" >"$TMP/p_shared.tsv"
m5=$($CHECK "$TMP/number.md" "$TMP/rules.md" --params "$TMP/params.tsv" "${SRC[@]}"); r5=$?
m6=$($CHECK docs/health_report.md "$TMP/rules.md" --params "$TMP/p_changed.tsv" "${SRC[@]}"); r6=$?
m7=$($CHECK docs/health_report.md "$TMP/rules.md" --params "$TMP/p_shared.tsv" "${SRC[@]}"); r7=$?
if [ $r5 = 1 ] && [[ $m5 == *"the row of curve_dip: its parameter dip is 0.80 in the table, not in the docs"* ]] &&
   [ $r6 = 1 ] && [[ $m6 == *"the row of curve_dip: its parameter dip is 0.85 in the table, not in the docs"* ]] &&
   [ $r7 = 1 ] && [[ $m7 == *"parameter z_outlier differs between rows memory_low (3.5) and slow_pair (3)"* ]] &&
   ! grep -q 'dip.*0\.85' "$TMP/params.tsv"; then
	echo "ok rules_table_check_fails_on_a_changed_number"
else
	echo "not ok rules_table_check_fails_on_a_changed_number: $r5 '$m5' / $r6 '$m6' / $r7 '$m7'"
fi
# every parameter line has its five fields and a number the table can print
if awk -F'\t' 'NF != 5 || $3 !~ /^[0-9.e+-]+$/ { bad = 1 } END { exit bad }' "$TMP/params.tsv" &&
   [ "$(grep -c . "$TMP/params.tsv")" -ge 60 ]; then
	echo "ok rules_table_params ($(grep -c . "$TMP/params.tsv") parameters)"
else
	echo "not ok rules_table_params"
fi
# a rule without its code in the sources
{ cat "$TMP/rules.md"; echo '| `never_emitted` | warn | x | y | z | `device_reasons` |'; } >"$TMP/rules2.md"
m4=$($CHECK docs/health_report.md "$TMP/rules2.md" "${SRC[@]}"); r4=$?
[ $r4 = 1 ] && [[ $m4 == *"rule never_emitted: its code is not in the sources"* ]] &&
	echo "ok rules_table_check_fails_on_a_stale_rule" || echo "not ok rules_table_check_fails_on_a_stale_rule: $r4 '$m4'"
# `health_report rules` usage
"$HR" rules extra >/dev/null 2>&1; rc=$?
[ $rc = 2 ] && echo "ok rules_table_usage_error" || echo "not ok rules_table_usage_error: exit $rc"
# a table that cannot be written (a full device, a closed stdout) is an
# error that says so, exit 4, never a silent exit
for to in full closed; do
	if [ $to = full ]; then err=$("$HR" rules 2>&1 >/dev/full); rc=$?; else err=$("$HR" rules 2>&1 >&-); rc=$?; fi
	[ $rc = 4 ] && [[ $err == *"health_report rules: cannot write the table to standard output"* ]] &&
		echo "ok rules_table_write_error_$to" || echo "not ok rules_table_write_error_$to: exit $rc, '$err'"
done
