#!/bin/bash
# ib_counters.sh - the RDMA port counters a run saw, end to end: a binary
# records every port's counters at the start (host.inventory.nics[].counters)
# and at the end (conditions.rdma_counters_end) from the sysfs tree it is
# given (CH_SYSFS_ROOT, tests/data/sysfs); health_report judges their
# difference: a run that started as hgx-ndr8 and ended as hgx-ndr8-flapping
# (mlx5_2's link went down twice and retrained 5 times, with symbol and
# receive errors; mlx5_6 12 receive errors) gives ib_link_down (FAIL),
# ib_link_recovery and ib_port_errors (WARN) on those ports and nothing on
# the others; the same run with an unchanged tree gives none; counters that
# went down are not judged; a file without the end snapshot judges nothing.
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env
T=$(mktemp -d /tmp/ch_ib.XXXXXX)
trap 'rm -rf "$T"' EXIT
S=tests/data/sysfs
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3

ok() { echo "ok $1"; }
nok() { echo "not ok $1: $2"; [ -n "${3:-}" ] && [ -s "$3" ] && head -20 "$3" | sed 's/^/    /'; }

if [ ! -x "$B/roofline" ] || [ ! -x "$B/health_report" ]; then
	echo "skip ib_counters: $B/roofline or $B/health_report is not built"
	exit 0
fi
run() { # TREE OUT: a short roofline run reading the sysfs tree TREE
	CH_SYSFS_ROOT=$PWD/$S/$1 "$B/roofline" --backend cpu --kernels copy --size 1M --iters 2 -q --json "$2" >"$2.out" 2>&1
}
run hgx-ndr8 "$T/start.json" && run hgx-ndr8-flapping "$T/flap.json"
if "$PY" - "$T/start.json" "$T/flap.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
s = a["host"]["inventory"]["nics"][2]
e = b["conditions"]["rdma_counters_end"]["ports"][2]
assert s["device"] == e["device"] == "mlx5_2", (s["device"], e["device"])
assert s["counters"]["link_downed"] == 0 and e["counters"]["link_downed"] == 2
assert a["conditions"]["rdma_counters_end"]["ports"][2]["counters"]["link_downed"] == 0
assert "lifespan" not in s["hw_counters"]
PY
then
	ok ib_counters_recorded_at_start_and_end
else
	nok ib_counters_recorded_at_start_and_end "host.inventory.nics[].counters or conditions.rdma_counters_end missing or wrong" "$T/start.json.out"
fi

# the flapping run: the start from hgx-ndr8, the end from hgx-ndr8-flapping
mk() { # OUT START END: START's result file with END's end snapshot
	"$PY" - "$2" "$3" "$1" <<'PY'
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
a["host"]["hostname"] = "ibnode"
a["conditions"]["rdma_counters_end"] = b["conditions"]["rdma_counters_end"]
json.dump(a, open(sys.argv[3], "w"))
PY
}
mkdir -p "$T/flap" "$T/clean" "$T/cleared" "$T/old"
mk "$T/flap/r.json" "$T/start.json" "$T/flap.json"
mk "$T/clean/r.json" "$T/start.json" "$T/start.json"
"$PY" - "$T/flap.json" "$T/start.json" "$T/cleared/r.json" <<'PY'
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
# started with the flapped counts, ended with the clean ones: cleared
a["host"]["hostname"] = "ibnode"
a["conditions"]["rdma_counters_end"] = b["conditions"]["rdma_counters_end"]
json.dump(a, open(sys.argv[3], "w"))
PY
"$PY" - "$T/flap.json" "$T/old/r.json" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))
a["host"]["hostname"] = "ibnode"
del a["conditions"]["rdma_counters_end"]
json.dump(a, open(sys.argv[2], "w"))
PY
for d in flap clean cleared old; do
	"$B/health_report" -q --out "$T/$d/rep" "$T/$d" >"$T/$d.out" 2>&1
done
msg=$("$PY" - "$T" <<'PY'
import json, sys
t = sys.argv[1]
def reasons(d):
    p = json.load(open("%s/%s/rep/profile.json" % (t, d)))
    return [(r["level"], r["code"], r["subject"], r["text"]) for n in p["nodes"] for r in n["reasons"]
            if r["code"].startswith("ib_")]
f = reasons("flap")
want = [("fail", "ib_link_down", "mlx5_2 port 1"), ("warn", "ib_link_recovery", "mlx5_2 port 1"),
        ("warn", "ib_port_errors", "mlx5_2 port 1"), ("warn", "ib_port_errors", "mlx5_6 port 1")]
got = sorted(x[:3] for x in f)
if got != sorted(want):
    print("flapping run: %s" % got); sys.exit()
if not any("link_downed +2 (0 to 2; threshold 1)" in x[3] and "rdma-core" in x[3] for x in f):
    print("flapping run: the text lacks the counts or the source: %s" % [x[3] for x in f]); sys.exit()
if reasons("clean"):
    print("clean run: %s" % reasons("clean")); sys.exit()
c = reasons("cleared")
if [x[1] for x in c] != ["ib_counters_not_judged"] * 2:
    print("cleared counters: %s" % c); sys.exit()
if reasons("old"):
    print("no end snapshot: %s" % reasons("old")); sys.exit()
prom = open("%s/flap/rep/health.prom" % t).read()
if 'clusterhealth_node_findings{node="ibnode",code="ib_link_down",level="fail"} 1' not in prom:
    print("health.prom lacks the ib_link_down finding"); sys.exit()
print("OK")
PY
)
if [ "$msg" = OK ]; then
	ok ib_counters_judged
else
	nok ib_counters_judged "$msg" "$T/flap.out"
fi
exit 0
