#!/bin/bash
# confirm.sh - allreduce_bw measures again, at the end of each phase, the
# cells that look like a dip or a gap and each sweep's largest size, and records the second measurement
# beside the first ("confirm", docs/allreduce_bw.md): a fault that is real
# survives the confirmation, a transient one does not. The fault is
# injected by tests/slowallreduce.c (LD_PRELOAD, $B/tests/libslowallreduce.so):
# every MPI_Allreduce of 1 MiB sleeps 300 ms, in every pass ("every") or
# only in the first pass of the sweep ("first"). A 1 MiB all-reduce takes
# about 1 ms here (15 ms in a SANITIZE=1 build on a busy host), so the
# delay decides, not the noise: a cell slowed by it has a loop time of at
# least 300000 us, one that is not of less than half that.
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env
TMP=$(mktemp -d /tmp/ch_confirm_test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
case "$B" in /*) SHIM=$B/tests/libslowallreduce.so ;; *) SHIM=$PWD/$B/tests/libslowallreduce.so ;; esac
# under SANITIZE=1 the shim is preloaded before the ASan runtime
export ASAN_OPTIONS="${ASAN_OPTIONS:-}:verify_asan_link_order=0"
ok() { echo "ok $1"; }
nok() { echo "not ok $1: $2"; [ -n "${3:-}" ] && [ -f "$3" ] && sed 's/^/    /' "$3" | tail -20; }

if [ ! -x "$B/allreduce_bw" ]; then
	echo "skip confirm: $B/allreduce_bw is not built"
	exit 0
fi
if [ ! -f "$SHIM" ]; then
	echo "skip confirm: $SHIM is not built (make test builds it)"
	exit 0
fi

# usage
$B/allreduce_bw --confirm 2 >"$TMP/u" 2>&1; rc=$?
[ $rc = 2 ] && grep -q -- "--confirm" "$TMP/u" && ok confirm_bad_value || nok confirm_bad_value "exit $rc" "$TMP/u"
$B/allreduce_bw --help | grep -q -- '--confirm 0|1' && ok confirm_in_help || nok confirm_in_help "--help does not list --confirm"

# slowed MODE FILE NP [ALLREDUCE_BW OPTIONS...]: sizes 256K to 4M, the fault at 1M
slowed() {
	local mode=$1 f=$2 np=$3; shift 3
	$MPIRUN -np "$np" -x LD_PRELOAD="$SHIM" -x CH_SLOWAR_BYTES=1048576 -x CH_SLOWAR_USEC=300000 \
		-x CH_SLOWAR_MODE="$mode" $B/allreduce_bw --backend mpi -b 256K -e 4M -f 2 -n 2 -w 0 \
		--json "$f" "$@" >"$f.out" 2>&1
}

# check.py FILE WANT: every sweep's 1 MiB cells, both placements, have a
# "confirm" of why "dip" whose first measurement is slow; WANT says whether
# the second one is slow too (real) or not (transient)
cat >"$TMP/check.py" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
want_slow = sys.argv[2] == "real"
sweeps = sys.argv[3].split(",")
bad = []
if d["status"] != "ok":
    bad.append("status %s" % d["status"])
got = [sw["group_name"] for sw in d["results"]["sweeps"]]
if got != sweeps:
    bad.append("sweeps %s (want %s)" % (got, sweeps))
for sw in d["results"]["sweeps"]:
    for r in sw["rows"]:
        for p in ("out_of_place", "in_place"):
            cell, c = r[p], r[p].get("confirm")
            where = "%s %d %s" % (sw["group_name"], r["bytes"], p)
            if r["bytes"] != 1048576:
                continue
            if cell["loop_time_us"] < 300000:
                bad.append("%s: first measurement not slowed (%g us)" % (where, cell["loop_time_us"]))
            if not c:
                bad.append("%s: not measured again" % where)
                continue
            keys = sorted(c)
            if not set(["why", "loop_time_us", "time_us", "algbw_gbps", "busbw_gbps", "wrong"]) <= set(keys):
                bad.append("%s: confirm keys %s" % (where, keys))
            if c["why"] != "dip":
                bad.append("%s: why %s" % (where, c["why"]))
            if c["wrong"] != 0:
                bad.append("%s: wrong %s" % (where, c["wrong"]))
            slow = c["loop_time_us"] >= 300000 and c["time_us"]["median"] >= 300000
            fast = c["loop_time_us"] < 150000
            if want_slow and not slow:
                bad.append("%s: confirmation not slow (%g us): the fault did not survive" % (where, c["loop_time_us"]))
            if not want_slow and not fast:
                bad.append("%s: confirmation slow (%g us): the transient fault survived" % (where, c["loop_time_us"]))
            if abs(c["busbw_gbps"] - c["algbw_gbps"] * r["busbw_factor"]) > 1e-9 * max(1, c["busbw_gbps"]):
                bad.append("%s: busbw is not algbw x factor" % where)
if d["results"]["confirm"]["cells"] < 2 * len(sweeps):
    bad.append("results.confirm.cells %s" % d["results"]["confirm"]["cells"])
print("; ".join(bad))
sys.exit(1 if bad else 0)
PY

# a real fault: slow in every pass; every group of a phase of two node groups too
slowed every "$TMP/every.json" 4 --groups world,node --node-size 2
if python3 "$TMP/check.py" "$TMP/every.json" real world,node0,node1 >"$TMP/every.chk" 2>&1 &&
	grep -q '^# Confirmation (world): [0-9]* sizes* measured again' "$TMP/every.json.out" &&
	grep -qE '^#   world default +1048576 B out-of-place dip +busbw' "$TMP/every.json.out"; then
	ok confirm_real_fault_survives
else
	nok confirm_real_fault_survives "$(cat "$TMP/every.chk")" "$TMP/every.json.out"
fi

# the largest size of every sweep is measured again whatever the curve's
# shape (the figure health_report compares with the fleet: agreement);
# why "largest" unless it also looks like a dip or a gap
if python3 - "$TMP/every.json" >"$TMP/largest.chk" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
bad = []
for sw in d["results"]["sweeps"]:
    last = max(sw["rows"], key=lambda r: r["bytes"])
    for p in ("out_of_place", "in_place"):
        c = last[p].get("confirm")
        if not c or c.get("why") not in ("largest", "dip", "gap") or not c.get("busbw_gbps", 0) > 0:
            bad.append("%s %d %s: %s" % (sw["group_name"], last["bytes"], p, c))
print("; ".join(bad))
sys.exit(1 if bad or not d["results"]["sweeps"] else 0)
PY
then
	ok confirm_largest_always
else
	nok confirm_largest_always "the largest size not measured again: $(cat "$TMP/largest.chk")" "$TMP/every.json.out"
fi

# a transient fault: slow in the first pass only
slowed first "$TMP/first.json" 2
if python3 "$TMP/check.py" "$TMP/first.json" transient world >"$TMP/first.chk" 2>&1; then
	ok confirm_transient_fault_does_not
else
	nok confirm_transient_fault_does_not "$(cat "$TMP/first.chk")" "$TMP/first.json.out"
fi

# --confirm 0: nothing measured again, no confirm key, said so in the file
slowed every "$TMP/off.json" 2 --confirm 0
if python3 - "$TMP/off.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
c = d["results"]["confirm"]
cells = [r[p] for sw in d["results"]["sweeps"] for r in sw["rows"] for p in ("out_of_place", "in_place")]
sys.exit(not (c["enabled"] is False and c["cells"] == 0 and cells and not any("confirm" in x for x in cells)))
PY
then
	ok confirm_off
else
	nok confirm_off "a confirm key with --confirm 0" "$TMP/off.json.out"
fi
if [ -s "$TMP/off.json" ] && ! grep -q "Confirmation" "$TMP/off.json.out"; then
	ok confirm_off_silent
else
	nok confirm_off_silent "no result, or Confirmation printed with --confirm 0" "$TMP/off.json.out"
fi
exit 0
