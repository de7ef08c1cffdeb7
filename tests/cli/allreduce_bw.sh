#!/bin/bash
# allreduce_bw.sh - allreduce_bw under mpirun (Open MPI, as root, oversubscribed)
# with the mpi backend and tiny sizes: results checked in every dtype, busbw
# factor, algorithm labels, groups, injected-delay detection, timeout abort,
# bad inputs. Prints "ok NAME", "not ok NAME: why" or "skip NAME: why".
# Run from the repository root (scripts/run-tests does).
set -u
cd "$(dirname "$0")/../.."
source scripts/test-env
BIN=${B:-build}/allreduce_bw
T=$(mktemp -d /tmp/allreduce_bw-test.XXXXXX)
trap 'rm -rf "$T"' EXIT

if [ ! -x "$BIN" ]; then
	echo "not ok allreduce_bw: $BIN not built"
	exit 0
fi

# run NAME NP ARGS...: run under mpirun with a 120 s bound, output in $T/NAME.out
run() {
	local name=$1 np=$2; shift 2
	timeout -k 10 120 $MPIRUN -np "$np" "$BIN" "$@" >"$T/$name.out" 2>&1
}
# In sanitizer builds, leak checking (with the full unwinding Open MPI's
# unloaded components need) triples the cost of a launch: runs that repeat
# a code path already leak-checked elsewhere keep ASan and UBSan but skip it.
NOLEAK="${ASAN_OPTIONS:-}:detect_leaks=0"

# jcheck NAME FILE PYTHON: run PYTHON with d = the JSON document; it prints
# nothing when the checks pass, else what is wrong.
jcheck() {
	local name=$1 file=$2 code=$3 why
	why=$(python3 - "$file" <<EOF 2>&1
import json, sys
d = json.load(open(sys.argv[1]))
r = d["results"]
def fail(msg):
    print(msg); sys.exit(0)
$code
EOF
)
	if [ -z "$why" ]; then echo "ok $name"; else echo "not ok $name: $why"; fi
}

# ---- every dtype on 1, 2, 3 and 4 ranks: #wrong 0 in place and out of place,
# busbw factor exact, both algorithms run and labelled. Sanitizer builds
# (make SANITIZE=1 test: slow launches) run every dtype on 3 ranks and float
# on the others; the plain build runs the whole matrix.
ALL_DT="float double half bfloat16 int32 int8"
for np in 1 2 3 4; do
	bad=""
	dts=$ALL_DT
	[ "${SANITIZE:-0}" = 1 ] && [ $np != 3 ] && dts=float
	for dt in $dts; do
		f="$T/dt-$np-$dt.json"
		if [ "$dt" = float ]; then
			run "dt-$np-$dt" "$np" -b 8 -e 1K -f 8 -d "$dt" --backend mpi --algo ring,tree -n 2 -w 1 --json "$f"
		else
			ASAN_OPTIONS=$NOLEAK run "dt-$np-$dt" "$np" -b 8 -e 1K -f 8 -d "$dt" --backend mpi --algo ring,tree -n 2 -w 1 --json "$f"
		fi
		rc=$?
		if [ $rc != 0 ]; then
			bad="$bad $dt(exit $rc: $(grep -m1 -i error "$T/dt-$np-$dt.out"))"
			continue
		fi
		why=$(python3 - "$f" "$np" "$dt" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1])); n = int(sys.argv[2]); dt = sys.argv[3]
r = d["results"]
assert d["status"] == "ok" and d["exit_code"] == 0, d["status"]
assert r["wrong_total"] == 0
assert [s["algo"] for s in r["sweeps"]] == ["ring", "recursive_doubling"], [s["algo"] for s in r["sweeps"]]
factor = 2.0 * (n - 1) / n if n > 1 else 0.0
for s in r["sweeps"]:
    assert s["nranks"] == n and len(s["rows"]) == 3
    for row in s["rows"]:
        assert row["dtype"] == dt and row["busbw_factor"] == factor, row["busbw_factor"]
        for p in ("out_of_place", "in_place"):
            c = row[p]
            assert c["wrong"] == 0, (p, c["wrong"])
            assert c["busbw_gbps"] == c["algbw_gbps"] * factor, "busbw is not algbw x 2(n-1)/n"
            assert c["time_us"]["n"] == row["iterations"] == 2
EOF
)
		[ -n "$why" ] && bad="$bad $dt($(tail -1 <<<"$why"))"
	done
	if [ -z "$bad" ]; then
		echo "ok allreduce_bw $np ranks: $( [ "$dts" = "$ALL_DT" ] && echo "every dtype" || echo "$dts") checked, #wrong 0, busbw factor exact"
	else
		echo "not ok allreduce_bw $np ranks:$bad"
	fi
done
# MPI initialised MPI_THREAD_SINGLE (only the main thread calls MPI; Open
# MPI's FUNNELED takes a lock per wait); the level is in the result file
if [ -s "$T/dt-2-float.json" ]; then
	jcheck "allreduce_bw MPI thread level single, recorded" "$T/dt-2-float.json" '
if r.get("mpi_thread_level") != "single": fail("mpi_thread_level %r, want single" % r.get("mpi_thread_level"))'
fi

# ---- nccl-tests table layout, algorithm labels, Open MPI's ring fallback
out=$T/dt-4-float.out
if [ "$(grep -c '^# Out of bounds values : 0 OK$' "$out")" = 2 ] && [ "$(grep -c '^# Avg bus bandwidth    : ' "$out")" = 2 ] &&
	grep -q "algorithm ring: Open MPI coll/tuned ring (coll_tuned_allreduce_algorithm=4)" "$out" &&
	grep -q "algorithm recursive_doubling: .*requested as 'tree'" "$out" &&
	grep -qE '^# +size +count +type +redop +root +time +algbw +busbw #wrong' "$out" &&
	grep -qE '^ +8 +2 +float +sum +-1 ' "$out"; then
	echo "ok allreduce_bw tables in nccl-tests layout, one per algorithm, labelled"
else
	echo "not ok allreduce_bw tables in nccl-tests layout, one per algorithm, labelled"
fi
jcheck "allreduce_bw ring with count < ranks is reported as recursive doubling" "$T/dt-4-float.json" '
rows = r["sweeps"][0]["rows"]
if rows[0]["count"] != 2 or rows[0].get("algo_effective") != "recursive_doubling": fail(rows[0])
if "algo_effective" in rows[1]: fail(rows[1])
if "algo_effective" in r["sweeps"][1]["rows"][0]: fail("recursive doubling row marked")'

# ---- groups: --node-size 2 on 4 ranks, and single-rank nodes in pair rounds
if run groups 4 -b 8 -e 32 -f 2 --backend mpi --algo ring -n 2 -w 1 --groups world,node,pairs --node-size 2 --json "$T/groups.json"; then
	jcheck "allreduce_bw groups: 2 node groups and the pair with --node-size 2" "$T/groups.json" '
got = [(s["group_kind"], s["group_name"], s["ranks"], s["nodes"]) for s in r["sweeps"]]
want = [("world", "world", [0,1,2,3], ["node0","node1"]), ("node", "node0", [0,1], ["node0"]),
        ("node", "node1", [2,3], ["node1"]), ("pair", "pair0-1", [0,1,2,3], ["node0","node1"])]
if got != want: fail(got)
if [l["node"] for l in d["ranks"]["layout"]] != [0,0,1,1]: fail(d["ranks"])'
else
	echo "not ok allreduce_bw groups: 2 node groups and the pair with --node-size 2: $(grep -m1 -i error "$T/groups.out")"
fi
if run pairs 4 -b 8 -e 16 -f 2 --backend mpi --algo ring -n 2 -w 1 --groups node,pairs --node-size 1 --json "$T/pairs.json"; then
	jcheck "allreduce_bw groups: single-rank nodes, pairs in two rounds" "$T/pairs.json" '
got = [(s["group_name"], s["ranks"]) for s in r["sweeps"]]
want = [("pair0-3", [0,3]), ("pair1-2", [1,2]), ("pair1-3", [1,3]), ("pair0-2", [0,2])]
if got != want: fail(got)
if not any("single rank" in n for n in r["plan_notes"]): fail(r["plan_notes"])'
else
	echo "not ok allreduce_bw groups: single-rank nodes, pairs in two rounds: $(grep -m1 -i error "$T/pairs.out")"
fi

# ---- an injected delay (50 ms, far above scheduling noise) is found
if run delay 4 -b 8 -e 16 -f 2 --backend mpi --algo ring -n 2 -w 1 --groups world,node --node-size 2 --inject-delay 2:50000 --json "$T/delay.json"; then
	jcheck "allreduce_bw injected delay: straggler rank 2, slow group node1, suspect node1" "$T/delay.json" '
if [s["rank"] for s in r["stragglers"]] != [2]: fail(r["stragglers"])
if [f["group_name"] for f in r["group_flags"]] != ["node1"]: fail(r["group_flags"])
if [s["node"] for s in r["suspect_nodes"]] != ["node1"]: fail(r["suspect_nodes"])
for s in r["sweeps"]:
    for row in s["rows"]:
        if 2 in s["ranks"] and row["slowest_rank"] != 2: fail((s["group_name"], row["slowest_rank"]))'
	if grep -q "^#   rank 2 (host '.*', local rank 2, node node1): slowest in 4 of 4 rows" "$T/delay.out"; then
		echo "ok allreduce_bw injected delay: the straggler line names rank 2"
	else
		echo "not ok allreduce_bw injected delay: the straggler line names rank 2: $(grep -A2 Stragglers "$T/delay.out")"
	fi
else
	echo "not ok allreduce_bw injected delay: $(grep -m1 -i error "$T/delay.out")"
fi
if ASAN_OPTIONS=$NOLEAK run delaypairs 4 -b 8 -e 16 -f 2 --backend mpi --algo ring -n 2 -w 1 --groups pairs --node-size 1 --inject-delay 2:50000 --json "$T/delaypairs.json"; then
	jcheck "allreduce_bw injected delay: the node common to the slow pairs is named" "$T/delaypairs.json" '
if sorted(f["group_name"] for f in r["group_flags"]) != ["pair0-2", "pair1-2"]: fail(r["group_flags"])
if [s["node"] for s in r["suspect_nodes"]] != ["node2"]: fail(r["suspect_nodes"])
if "common to slow pairs" not in r["suspect_nodes"][0]["reason"]: fail(r["suspect_nodes"])'
else
	echo "not ok allreduce_bw injected delay: the node common to the slow pairs is named: $(grep -m1 -i error "$T/delaypairs.out")"
fi

# ---- --timeout: rank 1 stalls 30 s before the 64-byte all-reduce; every rank
# is aborted within the bound, the rows measured before are on disk
t0=$(date +%s)
run timeout 4 -b 8 -e 64 -f 2 --backend mpi --algo ring -n 2 -w 1 --timeout 1 --inject-delay 1:30000000@64 --json "$T/timeout.json"
rc=$?
el=$(( $(date +%s) - t0 ))
if [ $rc = 4 ] && [ $el -lt 25 ]; then
	echo "ok allreduce_bw --timeout aborts every rank with exit 4 (${el} s, delay 30 s)"
else
	echo "not ok allreduce_bw --timeout aborts every rank with exit 4: exit $rc after ${el} s"
fi
if grep -q "timeout: the all-reduce of 64 bytes (out-of-place, warm-up), algorithm ring, group world, did not complete within 1 s; ranks that never arrived: 1 (host" "$T/timeout.out"; then
	echo "ok allreduce_bw --timeout message names size, algorithm, group and the missing rank"
else
	echo "not ok allreduce_bw --timeout message names size, algorithm, group and the missing rank: $(grep -m1 timeout: "$T/timeout.out")"
fi
jcheck "allreduce_bw --timeout leaves a valid partial result file" "$T/timeout.json" '
if d["status"] != "error" or d["exit_code"] != 4: fail((d["status"], d["exit_code"]))
if "never arrived: 1" not in d["reason"]: fail(d["reason"])
if [row["bytes"] for row in r["sweeps"][0]["rows"]] != [8, 16, 32]: fail("rows")
t = r["timeout"]
if t["never_arrived"] != [1] or t["bytes"] != 64 or t["group_name"] != "world": fail(t)'

# ---- a stopped rank (SIGSTOP: its watchdog is stopped too) under --timeout 5:
# every rank is out within --timeout + 5 s (CH_AR_WD_GRACE_SEC) plus the
# launcher's teardown, whichever rank it is; the result file says error and
# names the stopped rank (rank 1 finishes it when rank 0 is the stopped one)
for victim in 0 2; do
	rm -f "$T/stop$victim.json"
	( ASAN_OPTIONS=$NOLEAK run stop$victim 3 -b 8 -e 1M -f 2 --backend mpi --algo ring -n 4000 -w 1 \
		--timeout 5 --json "$T/stop$victim.json"; echo $? >"$T/stop$victim.rc" ) &
	bg=$!
	# stop it once the first row is on disk
	for i in $(seq 300); do
		python3 -c "import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))['results']['sweeps'][0]['rows'] else 1)" \
			"$T/stop$victim.json" 2>/dev/null && break
		sleep 0.2
	done
	pid=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['ranks']['layout'][$victim]['pid'])" "$T/stop$victim.json" 2>/dev/null)
	t0=$(date +%s.%N)
	[ -n "$pid" ] && kill -STOP "$pid"
	wait $bg
	el=$(python3 -c "import sys; print('%.1f' % (float(sys.argv[1]) - float(sys.argv[2])))" "$(date +%s.%N)" "$t0")
	rc=$(cat "$T/stop$victim.rc")
	if [ -n "$pid" ] && [ "$rc" = 4 ] && python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) <= 5 + 5 + 5 else 1)" "$el"; then
		echo "ok allreduce_bw rank $victim stopped under --timeout 5: every rank out with exit 4 after ${el} s (bound 15 s)"
	else
		echo "not ok allreduce_bw rank $victim stopped under --timeout 5: pid '$pid', exit $rc after ${el} s"
	fi
	jcheck "allreduce_bw rank $victim stopped: the result file says error and names it" "$T/stop$victim.json" "
if d['status'] != 'error' or d['exit_code'] != 4: fail((d['status'], d['exit_code']))
if 'never arrived: $victim (host' not in d['reason'] or 'no answer from its watchdog' not in d['reason']: fail(d['reason'])
if r['timeout']['never_arrived'] != [$victim]: fail(r['timeout'])
if not r['sweeps'][0]['rows']: fail('no rows on disk')"
done

# ---- bad inputs: exit 2, one message (from rank 0) naming the value, every
# rank exits (no hang)
bad_inputs=(
	"-o prod|unknown value 'prod' for -o \\(expected: sum, min, max\\)"
	"--backend gloo|unknown value 'gloo' for --backend \\(expected: auto, mpi, nccl\\)"
	"--algo ring,nvls --backend mpi|unknown algorithm 'nvls' for backend mpi \\(expected: ring, tree, recursive_doubling, default\\)"
	"--algo tree,recursive_doubling --backend mpi -b 8 -e 8|'tree' and 'recursive_doubling' are the same algorithm"
	"--algo ring,ring|'ring' is listed twice in --algo"
	"-b 64 -e 8|-b '64' is larger than -e '8'"
	"-b 0 -e 8|invalid size '0' for -b"
	"-b -8 -e 8|invalid size '-8' for -b"
	"-b 2 -e 8|-b '2' is smaller than one float element \\(4 bytes\\)"
	"-b 8 -e 8 --inject-delay 7:100|--inject-delay rank '7' is not a rank of this run \\(ranks 0 to 2\\)"
	"-b 8 -e 8 --inject-delay 1:0|value '0' for --inject-delay USEC is out of range"
	"-b 8 -e 8 --node-size 0|value '0' for --node-size is out of range"
	"--groups world,racks|unknown value 'racks' for --groups \\(expected: world, node, pairs\\)"
	"--timeout -1|value '-1' for --timeout is out of range"
	"-n 0|value '0' for -n is out of range"
	"--groups pairs -b 8 -e 8|nothing to measure with --groups and 3 ranks on 1 node: node pairs not measured"
)
bad=""
for case in "${bad_inputs[@]}"; do
	a=${case%%|*}
	re=${case#*|}
	# shellcheck disable=SC2086
	ASAN_OPTIONS=$NOLEAK timeout -k 10 60 $MPIRUN -np 3 "$BIN" $a >"$T/bad.out" 2>&1
	rc=$?
	n=$(grep -c "allreduce_bw: error:" "$T/bad.out")
	if [ $rc != 2 ] || [ "$n" != 1 ] || ! grep -qE -- "allreduce_bw: error: $re" "$T/bad.out"; then
		bad="$bad [$a: exit $rc, $n messages: $(grep -m1 error: "$T/bad.out")]"
	fi
done
if [ -z "$bad" ]; then
	echo "ok allreduce_bw bad inputs: exit 2, one message naming the value, every rank exits (${#bad_inputs[@]} cases)"
else
	echo "not ok allreduce_bw bad inputs:$bad"
fi
timeout -k 10 60 $MPIRUN -np 2 "$BIN" -b 8 -e 8 --inject-delay 7:100 --json "$T/usage.json" >/dev/null 2>&1
jcheck "allreduce_bw usage error after parsing still writes its result file" "$T/usage.json" '
if d["status"] != "usage" or d["exit_code"] != 2: fail(d["status"])'
touch "$T/exists.json"
ASAN_OPTIONS=$NOLEAK run exists 2 -b 8 -e 8 --json "$T/exists.json"
rc=$?
if [ $rc = 2 ] && grep -q "already exists (use --force" "$T/exists.out"; then
	echo "ok allreduce_bw an existing result file is not replaced without --force"
else
	echo "not ok allreduce_bw an existing result file is not replaced without --force: exit $rc"
fi

# ---- backends: nccl unavailable without a GPU, auto picks mpi
run nccl 2 -b 8 -e 8 --backend nccl --json "$T/nccl.json"
nccl_rc=$?
if grep -q "backend nccl unavailable: .*no CUDA device" "$T/nccl.out" || [ $nccl_rc != 0 ]; then
	if [ $nccl_rc = 3 ]; then
		jcheck "allreduce_bw --backend nccl without a GPU: unavailable (exit 3), result file says why" "$T/nccl.json" '
if d["status"] != "unavailable" or d["exit_code"] != 3: fail(d["status"])
if "nccl" not in d["reason"]: fail(d["reason"])'
	else
		echo "not ok allreduce_bw --backend nccl without a GPU: exit $nccl_rc (want 3): $(grep -m1 error "$T/nccl.out")"
	fi
else
	echo "skip allreduce_bw --backend nccl without a GPU: this machine has a GPU"
fi
if ASAN_OPTIONS=$NOLEAK run auto 2 -b 8 -e 8 -n 2 -w 1 --json "$T/auto.json"; then
	if [ $nccl_rc = 3 ]; then
		jcheck "allreduce_bw --backend auto picks mpi without a GPU" "$T/auto.json" '
if r["backend"] != "mpi": fail(r["backend"])'
	else
		echo "skip allreduce_bw --backend auto picks mpi without a GPU: this machine has a GPU"
	fi
else
	echo "not ok allreduce_bw --backend auto: $(grep -m1 -i error "$T/auto.out")"
fi

# ---- --min-busbw, --scaling, adaptive iterations
ASAN_OPTIONS=$NOLEAK run minbw 2 -b 8 -e 64 -f 8 --backend mpi -n 2 -w 1 --min-busbw 1000000 --json "$T/minbw.json"
rc=$?
if [ $rc = 1 ] && grep -q "^# --min-busbw 1e+06 GB/s: default, group world: .* FAILED" "$T/minbw.out"; then
	jcheck "allreduce_bw --min-busbw fails (exit 1) below the threshold" "$T/minbw.json" '
if d["status"] != "failed" or "below --min-busbw" not in d["reason"]: fail((d["status"], d["reason"]))'
else
	echo "not ok allreduce_bw --min-busbw fails (exit 1) below the threshold: exit $rc"
fi
if run scaling 4 -b 8 -e 16 -f 2 --backend mpi -n 2 -w 1 --scaling --groups world --json "$T/scaling.json"; then
	jcheck "allreduce_bw --scaling measures 2 and 4 ranks" "$T/scaling.json" '
got = [(s["group_kind"], s["group_name"], s["nranks"]) for s in r["sweeps"]]
if got != [("world", "world", 4), ("scaling", "scale2", 2), ("scaling", "scale4", 4)]: fail(got)'
else
	echo "not ok allreduce_bw --scaling: $(grep -m1 -i error "$T/scaling.out")"
fi
if run adaptive 3 -b 8 -e 64 -f 8 --backend mpi --min-time 0.002 -w 1 --json "$T/adaptive.json"; then
	jcheck "allreduce_bw --min-time: adaptive iterations agreed by every rank" "$T/adaptive.json" '
if r["iterations"]["mode"] != "adaptive": fail(r["iterations"])
for row in r["sweeps"][0]["rows"]:
    n = row["iterations"]
    if n < 5 or row["out_of_place"]["time_us"]["n"] != n or row["in_place"]["time_us"]["n"] != n: fail(row)
    if row["out_of_place"]["wrong"] != 0: fail("wrong")'
else
	echo "not ok allreduce_bw --min-time: $(grep -m1 -i error "$T/adaptive.out")"
fi
exit 0
