#!/bin/bash
# reliability.sh - hostile input and fault paths: option values that reach a
# shell (a stand-in sbatch runs --wrap through sh -c, as Slurm does), a bad
# result file in a night, foreign and locked history databases, named pipes
# and directory cycles among the inputs, SIGTERM in the middle of a run.
# Prints "ok NAME" / "not ok NAME: why" / "skip NAME: why"; exits 0.
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env
TMP=$(mktemp -d /tmp/ch_reliability_test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
HR=$B/health_report
ROOT=$PWD

ok() { echo "ok $1"; }
nok() { echo "not ok $1: $2"; [ -n "${3:-}" ] && [ -f "$3" ] && sed 's/^/    /' "$3" | tail -20; }

# ---- a stand-in sbatch: records its arguments, runs --wrap with sh -c
mkdir -p "$TMP/bin"
cat >"$TMP/bin/sbatch" <<'EOF'
#!/bin/bash
echo "sbatch $*" >>"$SBATCH_LOG"
while [ $# -gt 0 ]; do
	case "$1" in
	--wrap) sh -c "$2" >>"$SBATCH_LOG.wrap" 2>&1; echo "wrap exit $?" >>"$SBATCH_LOG.wrap"; shift 2 ;;
	--wrap=*) sh -c "${1#--wrap=}" >>"$SBATCH_LOG.wrap" 2>&1; echo "wrap exit $?" >>"$SBATCH_LOG.wrap"; shift ;;
	*) shift ;;
	esac
done
echo $((RANDOM + 1000))
EOF
chmod +x "$TMP/bin/sbatch"
export SBATCH_LOG=$TMP/sbatch.log

# an option value with a shell command in it: refused before any sbatch
PATH=$TMP/bin:$PATH scripts/nightly --submit --nodes n1 --results "$TMP/r1" \
	--threshold "5; touch $TMP/pwned1" >"$TMP/inj1" 2>&1; rc=$?
if [ $rc = 2 ] && [ ! -e "$TMP/pwned1" ] && [ ! -e "$SBATCH_LOG" ] &&
	grep -q "invalid value '5; touch" "$TMP/inj1"; then
	ok nightly_submit_rejects_shell_in_threshold
else
	nok nightly_submit_rejects_shell_in_threshold "exit $rc (want 2), pwned: $([ -e "$TMP/pwned1" ] && echo yes || echo no)" "$TMP/inj1"
fi
rm -f "$SBATCH_LOG" "$SBATCH_LOG.wrap"
good=1
for bad in "-oProxyCommand=touch $TMP/pwned2" "../../x" "n1;id" "n1,,n2"; do
	PATH=$TMP/bin:$PATH scripts/nightly --submit --nodes "$bad" --results "$TMP/r1" >"$TMP/inj2" 2>&1; rc=$?
	if [ $rc != 2 ] || [ -e "$TMP/pwned2" ] || [ -e "$SBATCH_LOG" ]; then
		nok nightly_rejects_bad_node_names "--nodes '$bad': exit $rc (want 2)" "$TMP/inj2"
		good=0
		break
	fi
done
[ $good = 1 ] && ok nightly_rejects_bad_node_names
rm -f "$SBATCH_LOG" "$SBATCH_LOG.wrap"
# a legal but hostile path: quoted for sh, reaches the report job unchanged
R="$TMP/r2 it's \$(touch $TMP/pwned3) \`touch $TMP/pwned4\`"
PATH=$TMP/bin:$PATH scripts/nightly --submit --nodes n1,n2 --results "$R" --window 7 --stamp 20250101T030000Z \
	>"$TMP/inj3" 2>&1; rc=$?
if [ $rc = 0 ] && [ ! -e "$TMP/pwned3" ] && [ ! -e "$TMP/pwned4" ] && [ "$(grep -c '^sbatch' "$SBATCH_LOG")" = 3 ] &&
	grep -qF "no results for night 20250101T030000Z under $R" "$SBATCH_LOG.wrap" &&
	grep -q "^wrap exit 2" "$SBATCH_LOG.wrap"; then
	ok nightly_submit_wrap_quoted_for_sh
else
	nok nightly_submit_wrap_quoted_for_sh "exit $rc (want 0), pwned: $(ls "$TMP" | grep -c pwned)" "$SBATCH_LOG.wrap"
	sed 's/^/    /' "$TMP/inj3" "$SBATCH_LOG" 2>/dev/null | tail -8
fi
rm -f "$SBATCH_LOG" "$SBATCH_LOG.wrap"

# relative --results: relative to the caller's directory, not the checkout
mkdir -p "$TMP/caller"
(cd "$TMP/caller" && "$ROOT/scripts/nightly" --no-sweep --results rel --stamp 20250101T030000Z) >"$TMP/rel" 2>&1; rc=$?
if [ $rc = 2 ] && [ -d "$TMP/caller/rel" ] && [ ! -e "$ROOT/rel" ] && grep -qF "under $TMP/caller/rel" "$TMP/rel"; then
	ok nightly_relative_results_from_caller
else
	nok nightly_relative_results_from_caller "exit $rc (want 2)" "$TMP/rel"
	rmdir "$ROOT/rel" 2>/dev/null
fi

# validation before measuring: an unwritable --db is reported before a sweep
mkdir -p "$TMP/ro" && chmod 555 "$TMP/ro"
if [ "$(id -u)" = 0 ]; then ro_db=/proc/clusterhealth/history.sqlite; else ro_db=$TMP/ro/history.sqlite; fi
start=$(date +%s)
scripts/nightly --results "$TMP/r3" --db "$ro_db" >"$TMP/db1" 2>&1; rc=$?
if [ $rc = 2 ] && grep -q "history database" "$TMP/db1" && [ ! -d "$TMP/r3/$(hostname -s 2>/dev/null || hostname)" ]; then
	ok nightly_unwritable_db_before_sweep
else
	nok nightly_unwritable_db_before_sweep "exit $rc (want 2), $(( $(date +%s) - start )) s" "$TMP/db1"
fi
chmod 755 "$TMP/ro"
exit 0
