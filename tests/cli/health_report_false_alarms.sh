#!/bin/bash
# health_report_false_alarms.sh - verdicts that do not cry wolf: healthy
# fleets of 50 nodes x 8 H100 SXM whose every figure carries Gaussian noise
# (tests/data/report/make-noise-fleet.py), sigma 2%, 3% and 5%, 20 nights
# each (fixed seeds): the nodes flagged, FAILed and named drain candidates
# are counted and compared exactly with the counts these seeds give, and
# with the documented bound (docs/health_report.md, "False alarms": at most
# 0.001 flagged per node and night, so at most 1 in these 1,000 node-nights
# per sigma; never a FAIL or a drain candidate at sigma 3%).
# Prints "ok NAME", "not ok NAME: why" or "skip NAME: why".
#
#   bash tests/cli/health_report_false_alarms.sh SEEDS   prints the counts
#   for seeds 1..SEEDS per sigma and the reason codes, for the docs.
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env
HR=$B/health_report
TMP=$(mktemp -d /tmp/ch_hr_false.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
if [ ! -x "$HR" ]; then
	echo "skip health_report_false_alarms: $HR is not built"
	exit 0
fi
SEEDS=${1:-20}

python3 - "$HR" "$TMP" "$SEEDS" >"$TMP/counts" <<'PY'
import collections, concurrent.futures, importlib.util, json, os, shutil, subprocess, sys
hr, tmp, seeds = sys.argv[1], sys.argv[2], int(sys.argv[3])
spec = importlib.util.spec_from_file_location("nf", "tests/data/report/make-noise-fleet.py")
nf = importlib.util.module_from_spec(spec)
spec.loader.exec_module(nf)
def report(fleet, out):
    """health_report on one night's fleet (on another thread, while the next is written)"""
    rc = subprocess.run([hr, "-q", "--max-plots", "1", "--out", out, fleet],
                        stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT).returncode
    p = json.load(open(os.path.join(out, "profile.json")))
    shutil.rmtree(fleet, ignore_errors=True)
    shutil.rmtree(out, ignore_errors=True)
    return rc, p
with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
    for k, sigma in enumerate((0.02, 0.03, 0.05)):
        jobs = []
        for seed in range(1, seeds + 1):
            fleet, out = os.path.join(tmp, "f%d-%d" % (k, seed)), os.path.join(tmp, "o%d-%d" % (k, seed))
            sys.argv = ["make-noise-fleet.py", fleet, str(sigma), str(1000 * (k + 1) + seed)]
            nf.main()
            jobs.append(pool.submit(report, fleet, out))
        c = collections.Counter()
        codes = collections.Counter()
        for j in jobs:
            rc, p = j.result()
            s = p["summary"]
            c["node_nights"] += s["nodes"]
            c["warn"] += s["warn"]
            c["fail"] += s["fail"]
            c["drain"] += len(s["drain_candidates"])
            c["not_judged"] += s["not_judged"]
            c["checks_noisy"] += s["checks_noisy"]
            c["exit1"] += rc == 1
            for n in p["nodes"]:
                for code in {r["code"] for r in n["reasons"] if r["level"] != "info"}:
                    codes[code] += 1
            codes["findings"] += len(p["findings"])
        print("sigma %g: %d node-nights, %d flagged (%d WARN, %d FAIL), %d drain, %d not judged, %d noisy checks, exit 1 %d; codes %s"
              % (100 * sigma, c["node_nights"], c["warn"] + c["fail"], c["warn"], c["fail"], c["drain"],
                 c["not_judged"], c["checks_noisy"], c["exit1"],
                 ",".join("%s=%d" % kv for kv in sorted(codes.items()) if kv[1]) or "none"))
PY
if [ "$SEEDS" != 20 ]; then
	cat "$TMP/counts"
	exit 0
fi
# the exact counts of these seeds (a change to a rule that moves them is
# seen here), each within the documented bound: at most 1 flagged node in
# 1,000 node-nights (0.001 per node and night), 0 FAIL, 0 drain at 3%
for want in \
	"sigma 2: 1000 node-nights, 0 flagged (0 WARN, 0 FAIL), 0 drain, 0 not judged, 0 noisy checks, exit 1 0; codes none" \
	"sigma 3: 1000 node-nights, 0 flagged (0 WARN, 0 FAIL), 0 drain, 0 not judged, 0 noisy checks, exit 1 0; codes none" \
	"sigma 5: 1000 node-nights, 0 flagged (0 WARN, 0 FAIL), 0 drain, 0 not judged, 0 noisy checks, exit 1 0; codes none"; do
	s=${want%%:*}
	if grep -qxF "$want" "$TMP/counts"; then
		echo "ok health_report_false_alarms_${s// /_}pct"
	else
		echo "not ok health_report_false_alarms_${s// /_}pct: $(grep "^$s:" "$TMP/counts")"
	fi
done
exit 0
