#!/bin/bash
# workflows.sh - the three workflows end to end on this machine, with small
# sizes (docs/workflows.md): scripts/sweep --quick, scripts/nightly on a
# synthetic fleet of several nodes and nights (exactly the node that
# regressed is flagged) and twice for real here (two nights of history and a
# fleet report), scripts/canary --target-gpus 8 on a few MPI ranks; and the
# scripts' usage errors.
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env
TMP=$(mktemp -d /tmp/ch_workflows_test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
HR=$B/health_report
host=$(hostname -s 2>/dev/null || hostname)

ok() { echo "ok $1"; }
nok() { echo "not ok $1: $2"; [ -n "${3:-}" ] && [ -f "$3" ] && sed 's/^/    /' "$3" | tail -30; }
built() { [ -x "$B/$1" ]; }
missing_bins() { local m=(); for b in roofline allreduce_bw loader_contention checkpoint_io health_report; do built $b || m+=("$b"); done; echo "${m[*]}"; }
report_ok() { built health_report && "$HR" --help >/dev/null 2>&1 && "$HR" canary --help >/dev/null 2>&1 && "$HR" history --help >/dev/null 2>&1; }
nights() { python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("select count(distinct night) from metrics").fetchone()[0])' "$1"; }

# ---- usage errors (no binaries needed)
scripts/sweep --ranks 1 >"$TMP/u1" 2>&1; rc=$?
[ $rc = 2 ] && grep -q "invalid value '1' for --ranks" "$TMP/u1" && ok sweep_bad_ranks || nok sweep_bad_ranks "exit $rc" "$TMP/u1"
scripts/sweep --stamp yesterday >"$TMP/u2" 2>&1; rc=$?
[ $rc = 2 ] && grep -q "invalid time 'yesterday' for --stamp" "$TMP/u2" && ok sweep_bad_stamp || nok sweep_bad_stamp "exit $rc" "$TMP/u2"
scripts/canary --quick >"$TMP/u3" 2>&1; rc=$?
[ $rc = 2 ] && grep -q "missing --target-gpus" "$TMP/u3" && ok canary_script_no_target || nok canary_script_no_target "exit $rc" "$TMP/u3"
scripts/nightly --no-sweep >"$TMP/u4" 2>&1; rc=$?
[ $rc = 2 ] && grep -q -- "--no-sweep needs --stamp" "$TMP/u4" && ok nightly_no_stamp || nok nightly_no_stamp "exit $rc" "$TMP/u4"
scripts/nightly --threshold >"$TMP/u5" 2>&1; rc=$?
[ $rc = 2 ] && grep -q "option '--threshold' needs a value" "$TMP/u5" && ok nightly_missing_value || nok nightly_missing_value "exit $rc" "$TMP/u5"

# ---- the history subcommand on its own
if report_ok; then
	"$HR" history --db "$TMP/h.sqlite" --window 0 >"$TMP/h0" 2>&1; rc=$?
	[ $rc = 2 ] && grep -q "value '0' for --window is out of range" "$TMP/h0" && ok history_bad_window || nok history_bad_window "exit $rc" "$TMP/h0"
	"$HR" history --db "$TMP/h.sqlite" --night 2025-13 >"$TMP/h1" 2>&1; rc=$?
	[ $rc = 2 ] && grep -q "invalid time '2025-13' for --night" "$TMP/h1" && ok history_bad_night || nok history_bad_night "exit $rc" "$TMP/h1"
	echo "not a database, just text long enough to fill a header...................................." >"$TMP/notdb"
	"$HR" history --db "$TMP/notdb" >"$TMP/h2" 2>&1; rc=$?
	[ $rc = 2 ] && grep -q "is not a usable history database" "$TMP/h2" && ok history_foreign_db || nok history_foreign_db "exit $rc" "$TMP/h2"
	# the first nights cannot be judged (fewer than 3 earlier ones): said so, not "0 regressed" alone
	for n in 01 02 03 04; do
		"$HR" history --db "$TMP/first.sqlite" --night "2026-11-$n" --json "$TMP/first$n.json" tests/data/report/real-vm >"$TMP/first$n" 2>&1
	done
	if grep -q ': 0 regressed (2 nights or more); 0 regressed once (re-run); 0 one night far, not judged until it repeats (info); 3 of 3 series not judged (fewer than 3 earlier nights): NOT JUDGED$' "$TMP/first03" &&
	   grep -q ': 0 regressed (2 nights or more); 0 regressed once (re-run); 0 one night far, not judged until it repeats (info); 0 of 3 series not judged (fewer than 3 earlier nights)$' "$TMP/first04" &&
	   python3 -c "import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2])); sys.exit(not (a['series_not_judged']==3 and a['series_checked']==3 and b['series_not_judged']==0))" "$TMP/first03.json" "$TMP/first04.json"; then
		ok history_first_nights_not_judged
	else
		nok history_first_nights_not_judged "" "$TMP/first03"
	fi
else
	echo "skip history_cli: $HR does not dispatch 'history' yet"
fi

# ---- nightly on a synthetic fleet: 4 nodes, 17 nights, n3's gpu1 loses 20% bf16 from night 15
if report_ok; then
	F=$TMP/fleet
	python3 tests/data/nightly/make-fleet.py "$F" 17
	# the first 14 nights straight into the history (fast), the last 3 through the nightly flow
	for n in $(seq -w 1 14); do
		"$HR" history -q --db "$F/history.sqlite" --night "2025-01-${n}T03:00:00Z" "$F"/*/"202501${n}T030000Z" >/dev/null 2>"$TMP/seed.err"
		[ $? -le 1 ] || { nok nightly_synthetic_seed "history exit on night $n" "$TMP/seed.err"; break; }
	done
	for n in 15 16 17; do
		scripts/nightly --no-sweep --results "$F" --stamp "202501${n}T030000Z" >"$TMP/night$n.out" 2>&1
		echo $? >"$TMP/night$n.rc"
	done
	rc=$(cat "$TMP/night17.rc")
	cand=$(sed -n 's/^drain candidates (20250117T030000Z): //p' "$TMP/night17.out")
	if [ "$rc" = 1 ] && [ "$cand" = n3 ] &&
		grep -q '^REGRESSED n3 gpu1 roofline.compute_gflops.bf16: regressed 18.4% since 2025-01-15' "$TMP/night17.out" &&
		[ "$(grep -c '^REGRESSED' "$TMP/night17.out")" = "$(grep -c '^REGRESSED n3 gpu1 ' "$TMP/night17.out")" ] &&
		grep -q '^  scontrol update NodeName=n3 State=DRAIN Reason="clusterhealth: ' "$TMP/night17.out" &&
		grep -q 'printed only; run with --drain' "$TMP/night17.out" &&
		[ -s "$F/fleet/20250117T030000Z/report.html" ] && [ -s "$F/fleet/20250117T030000Z/profile.json" ] &&
		[ "$(nights "$F/history.sqlite")" = 17 ]; then
		ok nightly_synthetic_flags_exactly_n3
	else
		nok nightly_synthetic_flags_exactly_n3 "exit $rc, drain candidates '$cand'" "$TMP/night17.out"
	fi
	# --drain runs the scontrol lines (a stand-in scontrol records them)
	mkdir -p "$TMP/fakebin"
	printf '#!/bin/bash\necho "$*" >>%q\n' "$TMP/scontrol.log" >"$TMP/fakebin/scontrol"
	chmod +x "$TMP/fakebin/scontrol"
	PATH=$TMP/fakebin:$PATH scripts/nightly --no-sweep --results "$F" --stamp 20250117T030000Z --drain -q >"$TMP/drain.out" 2>&1; rc=$?
	# the Reason, longer than 250 bytes, is cut at a word and ends in "...";
	# drain.tsv holds the whole text
	cut=$(python3 - "$TMP/scontrol.log" "$F/fleet/20250117T030000Z/drain.tsv" <<'PY'
import sys
line = open(sys.argv[1]).read().rstrip("\n")
full = open(sys.argv[2]).read().split("\t", 1)[1].rstrip("\n")
r = line.split("Reason=", 1)[1]
body = r[len("clusterhealth: "):-3]
print("ok" if r.startswith("clusterhealth: ") and r.endswith("...") and len(r.encode()) <= 250
      and full.startswith(body) and not full[len(body)].isalnum() and body[-1].isalnum() else "bad: %r" % r)
PY
	)
	if [ $rc = 1 ] && [ "$(wc -l <"$TMP/scontrol.log")" = 1 ] && [ "$cut" = ok ] &&
		grep -q '^update NodeName=n3 State=DRAIN Reason=clusterhealth: .*gpu1 roofline.compute_gflops.bf16 regressed 18.4% since 2025-01-15' "$TMP/scontrol.log"; then
		ok nightly_drain_runs_scontrol
	else
		nok nightly_drain_runs_scontrol "exit $rc, Reason $cut" "$TMP/drain.out"
	fi
	# a slurmctld that does not answer: scontrol hangs; each call is stopped
	# after DRAIN_SCONTROL_SEC, the drain counts as failed (exit 4), said
	mkdir -p "$TMP/hangbin"
	printf '#!/bin/sh\nsleep 120\n' >"$TMP/hangbin/scontrol"; chmod +x "$TMP/hangbin/scontrol"
	t0=$(date +%s)
	DRAIN_SCONTROL_SEC=2 PATH=$TMP/hangbin:$PATH timeout 100 scripts/nightly --no-sweep --results "$F" --stamp 20250117T030000Z --drain -q >"$TMP/drainhang.out" 2>&1; rc=$?
	dt=$(( $(date +%s) - t0 ))
	for p in $(pgrep -f "$TMP/hangbin/scontrol"); do kill "$p" 2>/dev/null; done
	if [ $rc = 4 ] && [ $dt -lt 60 ] && grep -q 'scontrol did not answer within 2 s (DRAIN_SCONTROL_SEC) for n3: not drained' "$TMP/drainhang.out"; then
		ok "nightly_drain_scontrol_hang_bounded (exit 4 after $dt s)"
	else
		nok nightly_drain_scontrol_hang_bounded "exit $rc (want 4) after $dt s (want < 60)" "$TMP/drainhang.out"
	fi
	mkdir -p "$TMP/failbin"
	printf '#!/bin/sh\necho "scontrol: fatal: Could not establish a configuration source" >&2\nexit 1\n' >"$TMP/failbin/scontrol"; chmod +x "$TMP/failbin/scontrol"
	PATH=$TMP/failbin:$PATH scripts/nightly --no-sweep --results "$F" --stamp 20250117T030000Z --drain -q >"$TMP/drainfail.out" 2>&1; rc=$?
	if [ $rc = 4 ] && grep -q 'scontrol failed for n3 (exit 1): not drained' "$TMP/drainfail.out" && ! grep -q 'did not answer' "$TMP/drainfail.out"; then
		ok nightly_drain_scontrol_failure_named
	else
		nok nightly_drain_scontrol_failure_named "exit $rc (want 4)" "$TMP/drainfail.out"
	fi
	# --resume with a slurmctld that does not answer: the PASS nodes' state
	# could not be read; said so (not "unknown to Slurm"), exit 4
	DRAIN_SCONTROL_SEC=2 PATH=$TMP/hangbin:$PATH timeout 100 scripts/nightly --no-sweep --no-confirm --resume --results "$F" --stamp 20250117T030000Z -q >"$TMP/resumehang.out" 2>&1; rc=$?
	for p in $(pgrep -f "$TMP/hangbin/scontrol"); do kill "$p" 2>/dev/null; done
	if [ $rc = 4 ] && grep -q 'n1: scontrol show node did not answer within 2 s (DRAIN_SCONTROL_SEC); not resumed' "$TMP/resumehang.out" &&
		! grep -q 'unknown to Slurm' "$TMP/resumehang.out"; then
		ok nightly_resume_scontrol_hang_named
	else
		nok nightly_resume_scontrol_hang_named "exit $rc (want 4)" "$TMP/resumehang.out"
	fi
	DRAIN_SCONTROL_SEC=2x scripts/nightly --no-sweep --results "$F" --stamp 20250117T030000Z --drain -q >"$TMP/drainbad.out" 2>&1; rc=$?
	if [ $rc = 2 ] && grep -q "DRAIN_SCONTROL_SEC='2x' is not a whole number" "$TMP/drainbad.out"; then
		ok nightly_drain_scontrol_sec_checked
	else
		nok nightly_drain_scontrol_sec_checked "exit $rc (want 2)" "$TMP/drainbad.out"
	fi
	# night 15, the first bad night: n3's FAIL is fleet-relative and rests on
	# one measurement (profile.json: no drain candidate, "re-run before
	# draining"), and --no-sweep cannot re-run n3 (not this host, no Slurm):
	# n3 is listed as not confirmed, with no DRAIN line, not drained by
	# --drain, and the exit is 3 (not confirmed), not 1 (drain candidates)
	S15=20250115T030000Z
	rc=$(cat "$TMP/night15.rc")
	pdc=$(python3 -c 'import json,sys; p=json.load(open(sys.argv[1])); print(p["summary"]["drain_candidates"], [n["drain_candidate"] for n in p["nodes"] if n["name"]=="n3"])' "$F/fleet/$S15/profile.json" 2>&1)
	if [ "$rc" = 3 ] && [ "$pdc" = "[] [False]" ] &&
		! grep -q '^drain candidates' "$TMP/night15.out" && ! grep -q 'State=DRAIN' "$TMP/night15.out" &&
		! grep -q 'named from the first measurement' "$TMP/night15.out" &&
		grep -q "^not confirmed: n3: FAIL in the fleet report of $S15 (not confirmed); re-run on n3 before draining (not re-run: n3 is not this host, " "$TMP/night15.out" &&
		grep -q "^no drain candidates ($S15)$" "$TMP/night15.out" &&
		grep -q "^not confirmed ($S15), re-run before draining: n3 (not drained; " "$TMP/night15.out" &&
		grep -q "^n3	FAIL in the fleet report of $S15 (not confirmed); re-run on n3 before draining (not re-run: " "$F/fleet/$S15/not-confirmed.tsv" &&
		[ -f "$F/fleet/$S15/drain.tsv" ] && [ ! -s "$F/fleet/$S15/drain.tsv" ]; then
		ok nightly_unconfirmed_fail_not_a_candidate
	else
		nok nightly_unconfirmed_fail_not_a_candidate "exit $rc (want 3), profile.json: $pdc" "$TMP/night15.out"
	fi
	mkdir -p "$TMP/fakebin15"
	printf '#!/bin/bash\necho "$*" >>%q\n' "$TMP/scontrol15.log" >"$TMP/fakebin15/scontrol"
	chmod +x "$TMP/fakebin15/scontrol"
	PATH=$TMP/fakebin15:$PATH scripts/nightly --no-sweep --results "$F" --stamp $S15 --drain -q >"$TMP/drain15.out" 2>&1; rc=$?
	if [ $rc = 3 ] && [ ! -e "$TMP/scontrol15.log" ] && ! grep -q 'State=DRAIN' "$TMP/drain15.out" &&
		grep -q '^not confirmed: n3: .*re-run on n3 before draining' "$TMP/drain15.out"; then
		ok nightly_drain_skips_unconfirmed
	else
		nok nightly_drain_skips_unconfirmed "exit $rc (want 3), scontrol: $(cat "$TMP/scontrol15.log" 2>/dev/null)" "$TMP/drain15.out"
	fi
	# night 16: n3's regression persisted two nights (REGRESSED, the
	# history's drain candidate): named without a re-run, and it says so
	rc=$(cat "$TMP/night16.rc")
	if [ "$rc" = 1 ] && grep -q '^drain candidates (20250116T030000Z): n3$' "$TMP/night16.out" &&
		grep -q '^  scontrol update NodeName=n3 State=DRAIN Reason="clusterhealth: .*regressed .* since 2025-01-15' "$TMP/night16.out" &&
		grep -q '^named without a re-run: n3 (not re-run: .*): a drain candidate of health_report' "$TMP/night16.out"; then
		ok nightly_regressed_named_without_rerun
	else
		nok nightly_regressed_named_without_rerun "exit $rc (want 1)" "$TMP/night16.out"
	fi
	# --submit: one sweep job per node, then a dependent report job (stand-in sbatch and sinfo)
	printf '#!/bin/bash\necho "$* [env CH_STAMP=${CH_STAMP:-} CH_NO_REPORT=${CH_NO_REPORT:-}]" >>%q\necho $((1000 + $(wc -l <%q)))\n' "$TMP/sbatch.log" "$TMP/sbatch.log" >"$TMP/fakebin/sbatch"
	printf '#!/bin/bash\nprintf "gpu01\\ngpu02\\ngpu01\\n"\n' >"$TMP/fakebin/sinfo"
	chmod +x "$TMP/fakebin/sbatch" "$TMP/fakebin/sinfo"
	PATH=$TMP/fakebin:$PATH scripts/nightly --submit --partition gpu --results "$TMP/sub" --stamp 20250118T030000Z >"$TMP/submit.out" 2>&1; rc=$?
	if [ $rc = 0 ] && [ "$(wc -l <"$TMP/sbatch.log")" = 3 ] &&
		grep -q -- '--nodelist=gpu01 -p gpu --export=ALL --output=.*/\.nightly-20250118T030000Z-gpu01-%j\.out scripts/slurm/sweep.sbatch \[env CH_STAMP=20250118T030000Z CH_NO_REPORT=1\]' "$TMP/sbatch.log" &&
		grep -q -- '--nodelist=gpu02 ' "$TMP/sbatch.log" &&
		grep -q -- "--dependency=afterany:1001:1002 .*scripts/nightly --no-sweep .*'--stamp' '20250118T030000Z'" "$TMP/sbatch.log" &&
		grep -q 'submitted 2 sweep job(s) (1001 1002) and the report job 1003' "$TMP/submit.out"; then
		ok nightly_submit_slurm_jobs
	else
		nok nightly_submit_slurm_jobs "exit $rc" "$TMP/sbatch.log"
	fi
	# --submit where sinfo cannot reach a controller: sinfo's own error, exit 4
	mkdir -p "$TMP/fakebin-nosl"
	cp "$TMP/fakebin/sbatch" "$TMP/fakebin-nosl/sbatch"
	printf '#!/bin/bash\necho "slurm_load_node: Unable to contact slurm controller (connect failure)" >&2\nexit 1\n' >"$TMP/fakebin-nosl/sinfo"
	chmod +x "$TMP/fakebin-nosl/sinfo"
	PATH=$TMP/fakebin-nosl:$PATH scripts/nightly --submit --results "$TMP/sub2" --stamp 20250118T030000Z >"$TMP/submit2.out" 2>&1; rc=$?
	if [ $rc = 4 ] && grep -q 'sinfo could not list the nodes to sweep: slurm_load_node: Unable to contact slurm controller' "$TMP/submit2.out" &&
		! grep -q 'give --nodes or --partition' "$TMP/submit2.out"; then
		ok nightly_submit_sinfo_failure_named
	else
		nok nightly_submit_sinfo_failure_named "exit $rc (want 4)" "$TMP/submit2.out"
	fi
	# night 14: nothing regressed yet
	scripts/nightly --no-sweep --results "$F" --stamp 20250114T030000Z >"$TMP/night14.out" 2>&1; rc=$?
	if [ $rc = 0 ] && grep -q 'no drain candidates (20250114T030000Z)' "$TMP/night14.out"; then
		ok nightly_synthetic_quiet_night
	else
		nok nightly_synthetic_quiet_night "exit $rc" "$TMP/night14.out"
	fi
	# a hard fault (wrong all-reduce results on n2) is a drain candidate of
	# health_report from one measurement: named, its DRAIN line run with
	# --drain, although it could not be re-run
	H=$TMP/hardfleet
	python3 tests/data/nightly/make-fleet.py "$H" 1
	python3 - "$H/n2/20250101T030000Z/allreduce_bw.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["results"]["wrong_total"] = 5
for r in d["results"]["sweeps"][0]["rows"]:
    r["out_of_place"]["wrong"] = 5
json.dump(d, open(sys.argv[1], "w"))
PY
	PATH=$TMP/fakebin15:$PATH scripts/nightly --no-sweep --results "$H" --stamp 20250101T030000Z --drain >"$TMP/hard.out" 2>&1; rc=$?
	if [ $rc = 1 ] && grep -q '^drain candidates (20250101T030000Z): n2$' "$TMP/hard.out" &&
		grep -q '^  scontrol update NodeName=n2 State=DRAIN Reason="clusterhealth: ' "$TMP/hard.out" &&
		[ "$(grep -c NodeName= "$TMP/scontrol15.log")" = 1 ] && grep -q '^update NodeName=n2 State=DRAIN ' "$TMP/scontrol15.log" &&
		! grep -q '^not confirmed: n2' "$TMP/hard.out"; then
		ok nightly_hard_fault_named_unconfirmed
	else
		nok nightly_hard_fault_named_unconfirmed "exit $rc (want 1), scontrol: $(cat "$TMP/scontrol15.log" 2>/dev/null)" "$TMP/hard.out"
	fi
else
	echo "skip nightly_synthetic: $HR does not dispatch 'history' and 'canary' yet"
fi

# ---- scripts/sweep end to end here, small sizes
miss=$(missing_bins)
if [ -n "$miss" ]; then
	echo "skip sweep_quick: not built yet: $miss"
	echo "skip nightly_twice: not built yet: $miss"
	echo "skip canary_script: not built yet: $miss"
	exit 0
fi
scripts/sweep --quick --results "$TMP/r" >"$TMP/sweep.out" 2>&1; rc=$?
d=$(ls -d "$TMP/r/$host"/*/ 2>/dev/null | head -1); d=${d%/}
# the kernel_log stage runs where /dev/kmsg can be read (root), else says it is skipped
if [ -r /dev/kmsg ]; then ns=6; kl_ok() { [ -s "$d/kernel_log.json" ] && grep -q '^\[2/6\] kernel_log ' "$TMP/sweep.out"; }
else ns=5; kl_ok() { grep -q '^kernel_log: skipped: /dev/kmsg cannot be read' "$TMP/sweep.out"; }; fi
if [ $rc -le 1 ] && [ -n "$d" ] && [ -s "$d/roofline.json" ] && [ -s "$d/allreduce_bw.json" ] &&
	[ -s "$d/loader_contention.json" ] && [ -s "$d/checkpoint_io.json" ] && [ -s "$d/report/report.html" ] &&
	[ -s "$d/report/profile.json" ] && grep -q "^\[$((ns - 1))/$ns\] checkpoint_io x" "$TMP/sweep.out" &&
	grep -q 'a temporary directory on this node: not the shared mount' "$TMP/sweep.out" && kl_ok &&
	grep -q "^\[$ns/$ns\] health_report" "$TMP/sweep.out" && grep -q "^sweep: results in $d" "$TMP/sweep.out"; then
	ok sweep_quick
else
	nok sweep_quick "exit $rc, dir '$d'" "$TMP/sweep.out"
fi
# the sweep writes the checkpoint twice (--repeat 2): the history's mean and value_both
if [ -n "$d" ] && python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["results"]
assert r["config"]["repeat"] == 2 and len(r["sync"]["again"]) == 1 and r["sync"]["again"][0]["per_rank"], r["config"]
' "$d/checkpoint_io.json" >"$TMP/ckrep.out" 2>&1; then
	ok sweep_checkpoint_written_twice
else
	nok sweep_checkpoint_written_twice "checkpoint_io.json of $d without a second write" "$TMP/ckrep.out"
fi
# every result file of the sweep carries host.inventory, each null with a reason
# (the kernel_log stage's result file has no inventory: it read one)
if [ -n "$d" ] && python3 tests/cli/check-inventory.py $(ls "$d"/*.json | grep -v '/kernel_log\.json$') >"$TMP/inv.out" 2>&1; then
	ok sweep_inventory
else
	nok sweep_inventory "result files of $d without a complete inventory" "$TMP/inv.out"
fi

# ---- scripts/nightly twice, for real: two nights of history (a night this busy
# host measured too noisily is not recorded, and says so) and a fleet report each
N=$TMP/n
scripts/nightly --quick --results "$N" >"$TMP/n1.out" 2>&1; rc1=$?
sleep 1
scripts/nightly --quick --results "$N" >"$TMP/n2.out" 2>&1; rc2=$?
nf=$(ls -d "$N"/fleet/*/ 2>/dev/null | wc -l)
# a night this busy machine measured too noisily is not recorded, and says so
noisy=$(grep -l "^history: recorded 0 values .*" "$N"/fleet/*/.logs/history.log 2>/dev/null | xargs -r grep -l "^history: not recorded, noisy measurement" | wc -l)
if [ $rc1 -le 1 ] && [ $rc2 -le 1 ] && [ "$nf" = 2 ] && [ $(( $(nights "$N/history.sqlite" 2>/dev/null || echo 0) + noisy )) = 2 ] &&
	[ "$(ls "$N"/fleet/*/report.html | wc -l)" = 2 ]; then
	ok nightly_twice
else
	nok nightly_twice "exits $rc1 $rc2, $nf fleet reports" "$TMP/n2.out"
fi

# ---- a sweep stage's exit 1 that is a verdict says so: loader_contention on
# one CPU (its feeder and workers collapse onto it: FAIL, exit 1)
if built loader_contention && command -v taskset >/dev/null; then
	taskset -c 0 scripts/sweep --quick --no-report --only loader_contention --results "$TMP/lv" >"$TMP/lv.out" 2>&1; rc=$?
	line=$(grep -E '^\[[0-9]+/[0-9]+\] loader_contention ' "$TMP/lv.out")
	if grep -qF "verdict: fail, judged in the report (exit 1)" <<<"$line" && ! grep -q "check failed" <<<"$line"; then
		ok sweep_stage_names_a_verdict
	else
		nok sweep_stage_names_a_verdict "exit $rc, line '$line'" "$TMP/lv.out"
	fi
fi

# ---- scripts/canary on a few MPI ranks
scripts/canary --target-gpus 8 --quick --results "$TMP/c" >"$TMP/canary.out" 2>&1; rc=$?
if [ $rc -le 1 ] && grep -q '^verdict: ' "$TMP/canary.out" && grep -q '^  reasons:' "$TMP/canary.out" &&
	grep -q 'canary: 4 -> 8 GPUs' "$TMP/canary.out" && grep -q '\[fitted\]' "$TMP/canary.out" &&
	grep -q '^checkpoint (checkpoint_io .*checkpoint_io.json: 4 writers' "$TMP/canary.out" &&
	grep -q 'not the shared mount the job checkpoints to' "$TMP/canary.out"; then
	ok canary_script
else
	nok canary_script "exit $rc" "$TMP/canary.out"
fi
# a verdict other than BOOK (exit 1) is the canary's answer, not a check
# that failed: its progress line says so
want="ok"
[ $rc = 1 ] && want="verdict: not BOOK (see below) (exit 1)"
line=$(grep -E '^\[[0-9]+/[0-9]+\] canary ' "$TMP/canary.out")
if [ -n "$line" ] && grep -qF -- "$want" <<<"$line" && ! grep -q "check failed" <<<"$line"; then
	ok canary_script_progress_names_the_verdict
else
	nok canary_script_progress_names_the_verdict "exit $rc, want '$want'" "$TMP/canary.out"
fi
# its own output says how long the measurement took, and on what
if grep -qE '^canary: measured in [0-9]+ s \(wall\) on 4 rank\(s\), 1 node\(s\), 0 GPU\(s\), --quick sizes$' "$TMP/canary.out"; then
	ok canary_script_prints_its_time
else
	nok canary_script_prints_its_time "no 'canary: measured in N s' line" "$TMP/canary.out"
fi
# --budget: a stage that would run long is stopped within its share of the
# budget (all-reduce: half of 30 - 15 s), and the later stages still run
ALLREDUCE_ARGS="--iters 1000000" scripts/canary --target-gpus 8 --budget 30 --results "$TMP/cb" >"$TMP/budget.out" 2>&1; rc=$?
lim=$(sed -n 's/^\[1\/6\] allreduce_bw .*timed out after \([0-9]*\) s.*/\1/p' "$TMP/budget.out")
if [ -n "$lim" ] && [ "$lim" -le 15 ] && grep -qE '^\[6/6\] canary ' "$TMP/budget.out" &&
	grep -q -- '--budget 30 s' "$TMP/budget.out" && grep -q '^canary: the all-reduce stage was stopped at its share of the time' "$TMP/budget.out" &&
	! grep -q 'missing --gpus-now' "$TMP/budget.out"; then
	ok canary_script_budget_stops_a_stage
else
	nok canary_script_budget_stops_a_stage "exit $rc, all-reduce limit '$lim'" "$TMP/budget.out"
fi
scripts/canary --target-gpus 8 --budget 10 >"$TMP/u6" 2>&1; rc=$?
[ $rc = 2 ] && grep -q "invalid value '10' for --budget" "$TMP/u6" && ok canary_script_bad_budget || nok canary_script_bad_budget "exit $rc" "$TMP/u6"
exit 0
