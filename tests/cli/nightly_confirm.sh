#!/bin/bash
# nightly_confirm.sh - scripts/nightly re-runs the check that failed before
# it names a drain candidate (docs/workflows.md): on the synthetic fleet of
# tests/data/nightly/make-fleet.py (n3's gpu1 loses 20% of its bf16 rate
# from night 15), night 17 swept "over ssh" through a stand-in ssh whose
# re-run of a node's stages copies that node's result files of a chosen
# night: the faulty night 17 (the fault is real: n3 is named, confirmed) or
# the healthy night 14 (transient: n3 is not named, "did not reproduce").
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env
TMP=$(mktemp -d /tmp/ch_nightly_confirm.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
HR=$B/health_report
ok() { echo "ok $1"; }
nok() { echo "not ok $1: $2"; [ -n "${3:-}" ] && [ -f "$3" ] && sed 's/^/    /' "$3" | tail -30; }

if [ ! -x "$HR" ]; then
	echo "skip nightly_confirm: $HR is not built"
	exit 0
fi

# the fleet, 14 nights straight into the history, then nights 15 and 16
F=$TMP/fleet
python3 tests/data/nightly/make-fleet.py "$F" 17
for n in $(seq -w 1 16); do
	"$HR" history -q --db "$F/history.sqlite" --night "2025-01-${n}T03:00:00Z" "$F"/*/"202501${n}T030000Z" >/dev/null 2>"$TMP/seed.err"
	[ $? -le 1 ] || { nok nightly_confirm_seed "history exit on night $n" "$TMP/seed.err"; exit 0; }
done
cp -a "$F" "$TMP/fleet2"
cp -a "$F" "$TMP/fleet3"
cp -a "$F" "$TMP/fleetx"

# the stand-in ssh: the night's sweep is already on disk (exit 0); a re-run
# (--only) copies the node's files of night $FAKE_NIGHT into --out, started
# an hour after night 17's sweep
mkdir -p "$TMP/bin"
cat >"$TMP/bin/ssh" <<'SH'
#!/bin/bash
echo "$*" >>"$FAKE_SSH_LOG"
while [ "$1" != -- ]; do shift; done
node=$2 cmd=$3
case "$cmd" in *--only*) ;; *) exit 0 ;; esac
out=$(python3 -c 'import shlex,sys; a=shlex.split(sys.argv[1]); print(a[a.index("--out")+1])' "$cmd")
mkdir -p "$out"
for f in "$FAKE_FLEET/$node/202501${FAKE_NIGHT}T030000Z"/*.json; do
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["start_utc"]=d["end_utc"]="2025-01-17T04:00:00Z"; json.dump(d,open(sys.argv[2],"w"))' "$f" "$out/$(basename "$f")"
done
SH
chmod +x "$TMP/bin/ssh"

night17() { # FLEET NIGHT_OF_THE_RERUN [nightly options...]
	local fl=$1 nt=$2; shift 2
	PATH=$TMP/bin:$PATH FAKE_SSH_LOG=$fl.ssh FAKE_FLEET=$fl FAKE_NIGHT=$nt \
		scripts/nightly --nodes n1,n2,n3,n4 --results "$fl" --stamp 20250117T030000Z "$@"
}
cand() { sed -n 's/^drain candidates (20250117T030000Z): //p' "$1"; }

# a real fault: re-run on n3 only, its roofline only; still failing: named
night17 "$F" 17 >"$TMP/real.out" 2>&1; rc=$?
if [ $rc = 1 ] && [ "$(cand "$TMP/real.out")" = n3 ] &&
	grep -q '^confirmed by a re-run of roofline: n3: ' "$TMP/real.out" &&
	grep -q '^  scontrol update NodeName=n3 State=DRAIN Reason="clusterhealth: .*confirmed by a re-run of roofline' "$TMP/real.out" &&
	[ "$(grep -c -- '--only' "$F.ssh")" = 1 ] && grep -q -- "-- n3 .*'--only' 'roofline'" "$F.ssh" &&
	[ -s "$F/n3/20250117T030000Z.confirm/roofline.json" ] &&
	[ -s "$F/fleet/20250117T030000Z/.logs/report-first.log" ] &&
	grep -q "^n3	.*confirmed by a re-run of roofline" "$F/fleet/20250117T030000Z/drain.tsv" &&
	[ "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["summary"]["drain_candidates"])' "$F/fleet/20250117T030000Z/profile.json")" = "['n3']" ]; then
	ok nightly_confirm_real_fault_named
else
	nok nightly_confirm_real_fault_named "exit $rc, candidates '$(cand "$TMP/real.out")'" "$TMP/real.out"
fi

# a transient fault: the re-run is healthy; not named, said so; the night's
# history holds the re-run's values (no regression recorded for n3)
night17 "$TMP/fleet2" 14 >"$TMP/transient.out" 2>&1; rc=$?
if [ $rc = 0 ] && [ -z "$(cand "$TMP/transient.out")" ] &&
	grep -q '^did not reproduce on a re-run of roofline: n3 (was: ' "$TMP/transient.out" &&
	grep -q '^no drain candidates (20250117T030000Z)' "$TMP/transient.out" &&
	! grep -q '^REGRESSED' "$TMP/fleet2/fleet/20250117T030000Z/.logs/history.log" &&
	grep -q '^REGRESSED n3 ' "$TMP/fleet2/fleet/20250117T030000Z/.logs/history-first.log"; then
	ok nightly_confirm_transient_not_named
else
	nok nightly_confirm_transient_not_named "exit $rc, candidates '$(cand "$TMP/transient.out")'" "$TMP/transient.out"
fi

# --no-confirm: named from the first measurement, nothing re-run
night17 "$TMP/fleet3" 14 --no-confirm >"$TMP/noconf.out" 2>&1; rc=$?
if [ $rc = 1 ] && [ "$(cand "$TMP/noconf.out")" = n3 ] && ! grep -q -- '--only' "$TMP/fleet3.ssh" &&
	grep -q 'without a re-run (--no-confirm)' "$TMP/noconf.out"; then
	ok nightly_no_confirm
else
	nok nightly_no_confirm "exit $rc, candidates '$(cand "$TMP/noconf.out")'" "$TMP/noconf.out"
fi

# a kernel-log fault (Xid 79 on n2, the sweep's kernel_log stage): named
# without a re-run (no benchmark confirms or clears it), its Reason naming
# the fault, never "confirmed by a re-run"; n3's roofline FAIL still re-run
"$HR" kernel-log --kernel-log tests/data/kernel-log/off-bus-multiline.log --now 2025-01-17T03:00:00Z \
	--json "$TMP/kl.json" >/dev/null 2>&1
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["host"]["hostname"]="n2"; d["start_utc"]=d["end_utc"]="2025-01-17T03:00:00Z"; json.dump(d,open(sys.argv[2],"w"))' \
	"$TMP/kl.json" "$TMP/fleetx/n2/20250117T030000Z/kernel_log.json"
night17 "$TMP/fleetx" 17 >"$TMP/xid.out" 2>&1; rc=$?
if [ $rc = 1 ] && [ "$(cand "$TMP/xid.out")" = "n2 n3" ] &&
	grep -q '^named without a re-run: n2 (not re-run: its fault is in the kernel log; .*: FAIL in the fleet report of 20250117T030000Z: xid_fault pci 0000:43:00.0' "$TMP/xid.out" &&
	grep -q '^  scontrol update NodeName=n2 State=DRAIN Reason="clusterhealth: FAIL in the fleet report of 20250117T030000Z: xid_fault pci 0000:43:00.0' "$TMP/xid.out" &&
	! grep -q 'NodeName=n2 .*confirmed by a re-run' "$TMP/xid.out" &&
	! grep -q -- "-- n2 .*'--only'" "$TMP/fleetx.ssh" && [ ! -e "$TMP/fleetx/n2/20250117T030000Z.confirm" ] &&
	grep -q -- "-- n3 .*'--only' 'roofline'" "$TMP/fleetx.ssh"; then
	ok nightly_kernel_log_fault_named_without_rerun
else
	nok nightly_kernel_log_fault_named_without_rerun "exit $rc, candidates '$(cand "$TMP/xid.out")'" "$TMP/xid.out"
fi

# local mode: another node's FAIL among the results sharing the stamp is
# never re-run on this host (its results would be this host's, filed under
# that node): said why, nothing written under that node (n3 is still
# named: its REGRESSED metrics make it health_report's drain candidate)
cp -a "$TMP/fleet3" "$TMP/fleet4"
me=$(hostname -s 2>/dev/null || hostname)
scripts/nightly --results "$TMP/fleet4" --stamp 20250117T030000Z --quick >"$TMP/local.out" 2>&1; rc=$?
if [ $rc = 1 ] && [ ! -e "$TMP/fleet4/n3/20250117T030000Z.confirm" ] &&
	grep -q "^  n3: not re-run: n3 is not this host ($me)" "$TMP/local.out"; then
	ok nightly_local_never_reruns_another_node
else
	nok nightly_local_never_reruns_another_node "exit $rc (want 1), $(ls -d "$TMP/fleet4/n3/"*.confirm 2>/dev/null)" "$TMP/local.out"
fi

# ssh that cannot reach the node: the error says ssh failed, and why (its
# own last line), not only the exit status and a log's path
mkdir -p "$TMP/nossh" "$TMP/r255"
printf '#!/bin/sh\necho "ssh: connect to host $4 port 22: Connection refused" >&2\nexit 255\n' >"$TMP/nossh/ssh"
chmod +x "$TMP/nossh/ssh"
PATH=$TMP/nossh:$PATH scripts/nightly --nodes n9 --results "$TMP/r255" -q >"$TMP/n255.out" 2>&1; rc=$?
if [ $rc = 4 ] && grep -q "the sweep on n9 failed (exit 255; ssh to n9 failed: .*: ssh: connect to host n9 port 22: Connection refused$" "$TMP/n255.out"; then
	ok nightly_ssh_failure_says_why
else
	nok nightly_ssh_failure_says_why "exit $rc" "$TMP/n255.out"
fi

# a bad --only value of scripts/sweep is a usage error
scripts/sweep --only roofline,gpu >"$TMP/only.out" 2>&1; rc=$?
[ $rc = 2 ] && grep -q "invalid stage 'gpu' for --only" "$TMP/only.out" && ok sweep_only_bad_stage ||
	nok sweep_only_bad_stage "exit $rc" "$TMP/only.out"
exit 0
