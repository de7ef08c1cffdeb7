#!/bin/bash
# slurm.sh - the scheduler's hooks against a real Slurm: Debian's slurm-wlm
# (slurmctld, slurmd) and munge started here on loopback from a generated
# slurm.conf (tests/slurm/slurm-up.sh: this host as one node with 8 CPUs and
# 8 GRES GPUs over device files, nodes n1..n4 without a slurmd, every state,
# spool and log file under the test's temporary folder, stopped by PID).
# Through it: scripts/nightly --submit (sbatch: the sweep job on the node,
# then the dependent report job); --drain on the synthetic fleet of
# tests/data/nightly/make-fleet.py (exactly the confirmed candidate n3 is
# drained, its Reason with the tool's prefix in sinfo -R); scripts/healthcheck
# as the cluster's HealthCheckProgram (an Xid 79 line drains the node, a
# clean log resumes it, a person's drain is never resumed, a second drain for
# the same fault escalates and stays) and as a Prolog (the job is not run
# on the faulty node); nightly --resume.
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env
REPO=$PWD
HR=$B/health_report
TMP=$(mktemp -d /tmp/ch_slurm.XXXXXX)
source tests/slurm/slurm-up.sh
trap 'slurm_down; rm -rf "$TMP"' EXIT
trap 'exit 1' INT TERM
ok() { echo "ok $1"; }
nok() { echo "not ok $1: $2"; [ -n "${3:-}" ] && [ -f "$3" ] && sed 's/^/    /' "$3" | tail -30; }
if [ ! -x "$HR" ] || [ ! -x "$B/roofline" ]; then
	echo "skip slurm: $HR or $B/roofline is not built"
	exit 0
fi
GATE=$TMP/gate KLOG=$TMP/kern.log
: >"$KLOG"
# the gate as slurmd runs it (no arguments, its own environment): the
# wrapper, its options from a configuration file
cat >"$TMP/gate.conf" <<EOF
# the test's gate: its own output folder and kernel log, passive checks only
--out $GATE
--kernel-log $KLOG
--no-active
--budget 40
EOF
cat >"$TMP/hc.sh" <<EOF
#!/bin/bash
# slurmd gives it no SLURM_CONF: scontrol finds the test's cluster through it
SLURM_CONF=$TMP/slurm/slurm.conf B=$(cd "$B" && pwd) CH_GATE_CONF=$TMP/gate.conf exec $REPO/scripts/slurm/healthcheck.sh
EOF
chmod +x "$TMP/hc.sh"

slurm_up "$TMP/slurm" "HealthCheckProgram=$TMP/hc.sh" "HealthCheckInterval=5" "HealthCheckNodeState=ANY" \
	"NodeName=n[1-4] NodeAddr=127.0.0.1 CPUs=1 State=DOWN" "PartitionName=fleet Nodes=n[1-4] State=UP"
case $? in
0) ;;
2) echo "skip slurm: $slurm_why"; exit 0 ;;
*) nok slurm_up "$slurm_why" "$TMP/slurm/log/slurmctld.log"; tail -5 "$TMP/slurm/log/slurmd.log" | sed 's/^/    /'; exit 0 ;;
esac
H=$SLURM_HOST
ok "slurm_up (slurmctld $(slurmctld -V 2>/dev/null | awk '{print $2}'), slurmd, munged on 127.0.0.1; node $H: $(sinfo -h -n "$H" -o '%c CPUs, %G'))"

# wait_for SECONDS CMD...: until CMD succeeds
wait_for() {
	local n=$(($1 * 2)); shift
	for _ in $(seq "$n"); do "$@" && return 0; sleep 0.5; done
	return 1
}
reason_of() { sinfo -h -R -n "$1" -o '%E' 2>/dev/null | head -1; }
state_of() { sinfo -h -N -n "$1" -o '%t' 2>/dev/null | head -1; }
drained_ours() { case "$(reason_of "$H")" in "clusterhealth: "*) return 0 ;; esac; return 1; }
idle() { case "$(state_of "$H")" in idle | mix | alloc) return 0 ;; esac; return 1; }
gate_ran_after() { # STAMP: healthcheck.json newer than STAMP
	[ -f "$GATE/healthcheck.json" ] && [ "$GATE/healthcheck.json" -nt "$1" ]
}
xid79() { echo "$(date -u +%Y-%m-%dT%H:%M:%S+0000) $H kernel: NVRM: Xid (PCI:0000:43:00): 79, pid=0, name=(null), GPU has fallen off the bus." >>"$KLOG"; }

# ---- the gate as HealthCheckProgram: a clean log passes, the node stays idle
if wait_for 120 test -s "$GATE/healthcheck.json" && idle; then ok "slurm_gate_healthcheck_passes (slurmd ran it: $GATE/healthcheck.json)"
else nok slurm_gate_healthcheck_passes "state $(state_of "$H"), reason '$(reason_of "$H")'" "$TMP/slurm/log/slurmd.log"; fi
# an Xid 79 in the kernel log: slurmd's next health check drains the node with the tool's reason
xid79
if wait_for 120 drained_ours; then
	r=$(reason_of "$H")
	case "$r" in
	"clusterhealth: pci 0000:43:00.0 Xid 79 (fallen off the bus) at "*": drain"*) ok "slurm_gate_drains (sinfo -R: $r)" ;;
	*) nok slurm_gate_drains "reason '$r'" ;;
	esac
else nok slurm_gate_drains "not drained: state $(state_of "$H"), reason '$(reason_of "$H")'" "$GATE/healthcheck.json"; fi
# the fault gone (the log of a new boot): the gate resumes its own drain
: >"$KLOG"
if wait_for 120 idle && grep -q "	$H	resume	" "$GATE/drain-history.tsv"; then ok "slurm_gate_resumes_its_drain (state $(state_of "$H"); drain history: $(awk -F'\t' '$3 == "resume" {print $5}' "$GATE/drain-history.tsv" | tail -1))"
else nok slurm_gate_resumes_its_drain "state $(state_of "$H"), reason '$(reason_of "$H")'" "$GATE/drain-history.tsv"; fi
# a person's drain: the gate passes and leaves it alone
scontrol update "NodeName=$H" State=DRAIN "Reason=disk swap by alice"
touch "$TMP/mark"; sleep 1
wait_for 120 gate_ran_after "$TMP/mark"; sleep 3
if [ "$(reason_of "$H")" = "disk swap by alice" ] && ! idle && gate_ran_after "$TMP/mark"; then ok "slurm_gate_never_resumes_a_persons_drain (sinfo -R: $(reason_of "$H"))"
else nok slurm_gate_never_resumes_a_persons_drain "state $(state_of "$H"), reason '$(reason_of "$H")'"; fi
scontrol update "NodeName=$H" State=RESUME
wait_for 60 idle
# the same fault twice within 7 days: escalated, and stays drained
xid79
wait_for 120 drained_ours
r=$(reason_of "$H")
: >"$KLOG"
touch "$TMP/mark2"; sleep 1
wait_for 120 gate_ran_after "$TMP/mark2"; sleep 5
case "$r" in
"clusterhealth: drained 2x in 7 days for pci 0000:43:00.0 Xid 79 (fallen off the bus): replace")
	if [ "$(reason_of "$H")" = "$r" ] && ! idle; then ok "slurm_gate_escalates_a_second_drain (sinfo -R: $r; not resumed)"
	else nok slurm_gate_escalates_a_second_drain "resumed: state $(state_of "$H"), reason '$(reason_of "$H")'"; fi ;;
*) nok slurm_gate_escalates_a_second_drain "reason '$r'" "$GATE/drain-history.tsv" ;;
esac
scontrol update "NodeName=$H" State=RESUME
: >"$GATE/drain-history.tsv"

# ---- the gate as a Prolog: a job on the faulty node does not run
sed -i '/^HealthCheck/d' "$SLURM_CONF"
echo "Prolog=$TMP/hc.sh" >>"$SLURM_CONF"
slurm_reconfigure
wait_for 60 idle
xid79
id=$(sbatch --parsable -p ch -N1 -w "$H" --output="$TMP/prolog-%j.out" --wrap "echo ran") || id=
# the prolog failed: the job leaves the node without running (requeued)
job_settled() { case "$(squeue -h -j "$id" -o %T 2>/dev/null)" in RUNNING | CONFIGURING | COMPLETING) return 1 ;; esac; return 0; }
wait_for 120 drained_ours
wait_for 120 job_settled
r=$(reason_of "$H")
# (the job's output file holds Slurm's own "Error running slurm prolog", never the job's "ran")
if [ -n "$id" ] && ! grep -qx ran "$TMP/prolog-$id.out" 2>/dev/null && [ -n "$r" ] && ! idle; then
	ok "slurm_gate_prolog_drains (job $id not run: $(squeue -h -j "$id" -o '%T, %r' 2>/dev/null | head -1)$(grep -m1 . "$TMP/prolog-$id.out" 2>/dev/null | sed 's/^/, its output: /'); sinfo -R: $r)"
else nok slurm_gate_prolog_drains "job '$id', state $(state_of "$H"), reason '$r'" "$TMP/prolog-$id.out"; fi
scancel "$id" 2>/dev/null
: >"$KLOG"
sed -i '/^Prolog=/d' "$SLURM_CONF"
slurm_reconfigure
scontrol update "NodeName=$H" State=RESUME
wait_for 60 idle

# ---- scripts/nightly --submit: the sweep job on the node, then the report job
R=$TMP/results S=20261206T030000Z
scripts/nightly --submit --quick --results "$R" --nodes "$H" --stamp $S >"$TMP/submit.out" 2>&1; rc=$?
wait_for 240 test -z "$(squeue -h 2>/dev/null)"
if [ $rc = 0 ] && grep -q "submitted 1 sweep job(s)" "$TMP/submit.out" && [ -s "$R/$H/$S/roofline.json" ] &&
	[ -s "$R/fleet/$S/profile.json" ] && grep -q "nightly $S: 1 node(s) with results: $H" "$R"/nightly-$S-*.out; then
	ok "slurm_nightly_submit (sbatch: the sweep on $H, $(ls "$R/$H/$S" | paste -sd' '); the report job: $R/fleet/$S)"
else nok slurm_nightly_submit "exit $rc" "$TMP/submit.out"; cat "$R"/.nightly-$S-*.out "$R"/nightly-$S-*.out 2>/dev/null | tail -20 | sed 's/^/    /'; fi
for st in allreduce_bw checkpoint_io; do
	[ -s "$R/$H/$S/$st.json" ] ||
		echo "skip slurm_nightly_submit_$st: $st did not run under srun here ($(tail -1 "$R/$H/$S/.logs/$st.log" 2>/dev/null | cut -c1-160))"
done

# ---- scripts/nightly --drain: exactly the confirmed candidate, with the tool's reason
F=$TMP/fleet
python3 tests/data/nightly/make-fleet.py "$F" 17
for n in $(seq -w 1 16); do
	"$HR" history -q --db "$F/history.sqlite" --night "2025-01-${n}T03:00:00Z" "$F"/*/"202501${n}T030000Z" >/dev/null 2>"$TMP/seed.err"
done
scripts/nightly --no-sweep --no-confirm --drain --results "$F" --stamp 20250117T030000Z >"$TMP/drain.out" 2>&1; rc=$?
ours=$(sinfo -h -R -o '%N|%E' | grep '|clusterhealth: ' | cut -d'|' -f1 | paste -sd' ')
r3=$(reason_of n3)
if [ $rc = 1 ] && [ "$ours" = n3 ] && [[ "$r3" == "clusterhealth: "*"regressed"* ]]; then
	ok "slurm_nightly_drains_exactly_the_candidates (sinfo -R: n3: $r3)"
else nok slurm_nightly_drains_exactly_the_candidates "exit $rc, drained with the tool's reason: '$ours'" "$TMP/drain.out"; fi
# --resume: n3 is a candidate still (not resumed); n1 drained by the tool
# and passing tonight is resumed, n2 drained by a person is not
scontrol update NodeName=n1 State=DRAIN "Reason=clusterhealth: test drain of an earlier night"
scontrol update NodeName=n2 State=DRAIN "Reason=bios update (bob)"
scripts/nightly --no-sweep --no-confirm --resume --results "$F" --stamp 20250117T030000Z >"$TMP/resume.out" 2>&1; rc=$?
if grep -q "^n2: not resumed: drained by someone else" "$TMP/resume.out" && [ "$(reason_of n2)" = "bios update (bob)" ] &&
	[[ "$(reason_of n3)" == "clusterhealth: "* ]] && ! grep -q '^resumed n3' "$TMP/resume.out"; then
	ok "slurm_nightly_resume_only_its_own (n2 kept: $(reason_of n2); n3 still drained; n1: $(grep -E '^(resumed n1|n1:)' "$TMP/resume.out" | head -1))"
else nok slurm_nightly_resume_only_its_own "exit $rc" "$TMP/resume.out"; fi
