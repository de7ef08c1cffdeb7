#!/bin/bash
# report_scaling.sh - health_report's time per node does not grow with the
# fleet: its CPU time (user + system, of every thread, as wait4() reports
# it: not wall time, which other work on the machine stretches) per node
# on a fleet 8 times larger is at most 1.5 times that on the smaller one.
# A scan over the fleet inside a per-node loop (time growing with the
# square of the fleet) makes the ratio about 8 at these sizes.
#
# The fleets: healthy-noise fleets (tests/data/report/make-noise-fleet.py,
# sigma 5%, fault 0.15: n001's bf16 roof 15% low; the 2,000-node fleet's
# names have 4 digits, so it has no n001): per node roofline,
# allreduce_bw, loader_contention and checkpoint_io results with
# inventories, and one pairs sweep over every node. Runs interleaved
# (small, large, small, ...), the median of each size's CPU times.
# Prints "ok NAME", "not ok NAME: why" or "skip NAME: why".
#
# Environment: REPORT_SCALING_SIZES="SMALL LARGE" (default "250 2000"),
# REPORT_SCALING_RUNS (runs per size, default 3), REPORT_SCALING_HR (the
# binary, default $B/health_report: to show an older binary fails it).
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env
HR=${REPORT_SCALING_HR:-$B/health_report}
NAME=report_scaling_cpu_per_node
if [ ! -x "$HR" ]; then
	echo "skip $NAME: $HR is not built"
	exit 0
fi
TMP=$(mktemp -d /tmp/ch_report_scaling.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
read -r SMALL LARGE <<<"${REPORT_SCALING_SIZES:-250 2000}"
RUNS=${REPORT_SCALING_RUNS:-3}
for n in "$SMALL" "$LARGE"; do
	if ! python3 tests/data/report/make-noise-fleet.py "$TMP/fleet$n" 0.05 7 "$n" 0.15 >"$TMP/gen.out" 2>&1; then
		echo "not ok $NAME: could not write the $n-node fleet: $(head -3 "$TMP/gen.out")"
		exit 0
	fi
done
python3 - "$HR" "$TMP" "$SMALL" "$LARGE" "$RUNS" <<'PY'
import os, statistics, subprocess, sys
hr, tmp, small, large, runs = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
name = "report_scaling_cpu_per_node"
LIMIT = 1.5

def cpu(nodes, k):
    """user + system CPU seconds of one health_report run on the fleet of @nodes"""
    out = os.path.join(tmp, "out%d_%d" % (nodes, k))
    p = subprocess.Popen([hr, "-q", "--out", out, os.path.join(tmp, "fleet%d" % nodes)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    rc = os.waitstatus_to_exitcode(status)
    if rc not in (0, 1) or not os.path.exists(os.path.join(out, "profile.json")):
        print("not ok %s: health_report exited %d on the %d-node fleet (no profile)" % (name, rc, nodes))
        sys.exit(0)
    return ru.ru_utime + ru.ru_stime

t = {small: [], large: []}
for k in range(runs):  # interleaved: the machine's load falls on both sizes alike
    for n in (small, large):
        t[n].append(cpu(n, k))
per = {n: statistics.median(v) / n for n, v in t.items()}
ratio = per[large] / per[small]
what = ("CPU time (user + system) per node: %.3f ms at %d nodes, %.3f ms at %d nodes (medians of %d runs: %s s; %s s), "
        "ratio %.2f (at most %.1f)" % (1e3 * per[small], small, 1e3 * per[large], large, runs,
                                       " ".join("%.2f" % x for x in t[small]), " ".join("%.2f" % x for x in t[large]),
                                       ratio, LIMIT))
if per[small] > 0 and ratio <= LIMIT:
    print("ok %s: %s" % (name, what))
else:
    print("not ok %s: %s: the time per node grows with the fleet" % (name, what))
PY
