#!/bin/bash
# conditions.sh - every binary records the measurement conditions in its
# result file (envelope key "conditions", docs/results-schema.md): the host's
# load before and after the run, the ranks and threads per core; /proc read
# under CH_PROCFS_ROOT from the trees of tests/data/procfs; "after" null
# while a run is incomplete (SIGKILL) and read on SIGTERM.
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env
TMP=$(mktemp -d /tmp/ch_conditions_test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
CHK="python3 tests/cli/check-conditions.py"
ok() { echo "ok $1"; }
nok() { echo "not ok $1: $2"; [ -n "${3:-}" ] && [ -f "$3" ] && sed 's/^/    /' "$3" | tail -20; }
# check NAME FILE [KEY=VALUE...]
cond() { local n=$1 f=$2; shift 2; if [ -s "$f" ] && $CHK "$f" "$@" >"$TMP/$n.chk" 2>&1; then ok "$n"; else nok "$n" "$(head -c 600 "$TMP/$n.chk" 2>/dev/null)"; fi; }

# ---- each binary, on this machine
$B/roofline --backend cpu --kernels triad --size 8M --iters 2 --json "$TMP/rl.json" -q >/dev/null 2>&1
cond conditions_roofline "$TMP/rl.json" procs_on_host=1
$MPIRUN -np 4 $B/allreduce_bw --backend mpi -b 8 -e 64K -f 8 -n 5 --json "$TMP/ar.json" -q >/dev/null 2>&1
cond conditions_allreduce_bw_4_ranks "$TMP/ar.json" procs_on_host=4 threads_per_proc=1
$B/loader_contention --duration 0.2 --workers 1,3 --gpus 1 --placements shared --json "$TMP/lc.json" -q >/dev/null 2>&1
cond conditions_loader_feeder_and_workers "$TMP/lc.json" procs_on_host=1 threads_per_proc=4
$MPIRUN -np 2 $B/checkpoint_io --dir "$TMP/ck" --size 4M --no-scaling --json "$TMP/ck.json" -q >/dev/null 2>&1
cond conditions_checkpoint_io "$TMP/ck.json" procs_on_host=2 threads_per_proc=2
# the ranks' own CPU time is not the host's: measured beside the busy share
if python3 -c "import json,sys; c=json.load(open(sys.argv[1]))['conditions']; sys.exit(not all(isinstance(c[w]['run_cpu_pct'], float) for w in ('before','after')))" "$TMP/ar.json" 2>/dev/null; then
	ok conditions_run_share_measured
else
	nok conditions_run_share_measured "run_cpu_pct not a number" "$TMP/ar.json"
fi

# ---- /proc from the test trees: values and reasons as the files say
CH_PROCFS_ROOT=tests/data/procfs/no-psi $B/roofline --backend cpu --kernels triad --size 8M --iters 2 \
	--json "$TMP/nopsi.json" -q >/dev/null 2>&1
cond conditions_no_psi_tree "$TMP/nopsi.json" online_cpus=2 before.loadavg_1m=1.93 after.loadavg_1m=1.93 \
	before.cpu_pressure_some_avg10_pct=null "reason.cpu_pressure_some_avg10_pct=/proc/pressure/cpu absent (kernel without PSI)" \
	before.cpu_busy_pct=null "reason.cpu_busy_pct=no CPU tick elapsed"
CH_PROCFS_ROOT=tests/data/procfs/busy $B/roofline --backend cpu --kernels triad --size 8M --iters 2 \
	--json "$TMP/busy.json" -q >/dev/null 2>&1
cond conditions_busy_tree "$TMP/busy.json" before.cpu_pressure_some_avg10_pct=37.2 after.cpu_pressure_some_avg10_pct=37.2 \
	online_cpus=2
CH_PROCFS_ROOT=tests/data/procfs/broken $B/roofline --backend cpu --kernels triad --size 8M --iters 2 \
	--json "$TMP/broken.json" -q >/dev/null 2>&1
cond conditions_broken_tree "$TMP/broken.json" before.loadavg_1m=null "reason.loadavg_1m=/proc/loadavg: not in the format" \
	"reason.cpu_busy_pct=no aggregate" before.cpu_pressure_some_avg10_pct=null

# ---- a run cut by SIGKILL: incomplete, "after" null; by SIGTERM: finished with "after"
for sig in KILL TERM; do
	f=$TMP/sig$sig.json
	$B/roofline --backend cpu --kernels triad,copy,add --size 64M --iters 50 --json "$f" -q >/dev/null 2>&1 &
	pid=$!
	for i in $(seq 1 100); do [ -s "$f" ] && break; sleep 0.1; done
	sleep 0.5
	kill -$sig $pid 2>/dev/null
	wait $pid 2>/dev/null
	if [ $sig = KILL ]; then
		cond conditions_sigkill_after_null "$f" after=null
		python3 -c "import json,sys; sys.exit(json.load(open(sys.argv[1]))['status'] != 'incomplete')" "$f" ||
			nok conditions_sigkill_incomplete "status is not incomplete" "$f"
	else
		cond conditions_sigterm_after_read "$f"
		python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(not (d['status'] == 'error' and isinstance(d['conditions']['after'], dict)))" "$f" ||
			nok conditions_sigterm_status "status is not error with after" "$f"
	fi
done
exit 0
