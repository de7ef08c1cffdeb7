#!/bin/bash
# rules_table.sh - the rules as one table: docs/health_report.md's rule
# table is `health_report rules` exactly, every code of its other tables and
# every reason code of the judge's sources is a rule, every rule's code and
# function are in the sources (tests/cli/check-rules-doc.py); the checker
# fails on a doc with a row missing, a row too many and a row changed.
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
msg=$($CHECK docs/health_report.md "$TMP/rules.md" "${SRC[@]}")
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
