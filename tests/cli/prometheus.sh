#!/bin/bash
# prometheus.sh - health.prom and history.prom read by Prometheus's own tools:
#   - `promtool check metrics` (the text format and Prometheus's naming
#     lint) on the health.prom of three fleet reports (roofline, all-reduce,
#     loader, checkpoint, step logs, hardware inventory, a night of the
#     nightly's synthetic fleet) and on history.prom; and it fails on one
#     wrong entry;
#   - every family the files hold is documented in docs/health_report.md
#     ("health.prom"), and every documented family is written;
#   - deploy/prometheus/clusterhealth-rules.yml: `promtool check rules`,
#     and `promtool test rules` on those files' series, the alerts expected
#     taken from profile.json and history.json (tests/cli/prom-rule-tests.py);
#     a health.prom with one wrong verdict fails it;
#   - a real node_exporter (prometheus-node-exporter) on a free loopback
#     port with --collector.textfile.directory serves health.prom and
#     history.prom: the scrape (curl /metrics) holds every sample with its
#     labels and value; a real Prometheus server (Debian's prometheus) on
#     another free loopback port scrapes it and evaluates the rules: the
#     alerts firing are those profile.json and history.json call for; both
#     stopped by their PIDs;
#   - deploy/grafana/clusterhealth.json is JSON, names only families the
#     files hold, and each query parses (promtool check rules).
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env
HR=$B/health_report
T=$(mktemp -d /tmp/ch_prom.XXXXXX)
NE_PID= PR_PID=
cleanup() {
	[ -n "$NE_PID" ] && kill "$NE_PID" 2>/dev/null && wait "$NE_PID" 2>/dev/null
	[ -n "$PR_PID" ] && kill "$PR_PID" 2>/dev/null && wait "$PR_PID" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
RULES=deploy/prometheus/clusterhealth-rules.yml
DASH=deploy/grafana/clusterhealth.json
# Debian's python3 (its python3-prometheus-client and python3-yaml), also
# when another python3 comes first on PATH
PY=python3
[ -x /usr/bin/python3 ] && PY=/usr/bin/python3

ok() { echo "ok $1"; }
nok() { echo "not ok $1: $2"; [ -n "${3:-}" ] && [ -s "$3" ] && head -20 "$3" | sed 's/^/    /'; }

if [ ! -x "$HR" ]; then
	echo "skip prometheus: $HR is not built"
	exit 0
fi
missing=
command -v promtool >/dev/null || missing="$missing promtool (Debian prometheus)"
command -v prometheus-node-exporter >/dev/null || missing="$missing prometheus-node-exporter"
command -v prometheus >/dev/null || missing="$missing prometheus"
command -v curl >/dev/null || missing="$missing curl"
"$PY" -c 'import prometheus_client.parser, yaml' 2>/dev/null || missing="$missing python3-prometheus-client python3-yaml"
if [ -n "$missing" ]; then
	echo "not ok prometheus: missing$missing (scripts/install-deps --test installs them)"
	exit 0
fi

# ---- the reports: A (roofline, all-reduce, loader, checkpoint, synthetic step logs),
# I (hardware inventory), N (night 16 of the nightly's synthetic fleet, with
# its history.prom)
python3 tests/data/steps/make-synthetic.py today "$T/steps"
"$HR" -q --out "$T/A" --steps "$T/steps" \
	tests/data/report/fleet-faulty tests/data/checkpoint/fleet >"$T/A.log" 2>&1
"$HR" -q --out "$T/I" tests/data/report/fleet-inventory >"$T/I.log" 2>&1
python3 tests/data/nightly/make-fleet.py "$T/fleet" 16
for n in $(seq -w 1 15); do
	"$HR" history -q --db "$T/h.sqlite" --night "2025-01-${n}T03:00:00Z" "$T/fleet"/*/"202501${n}T030000Z" >/dev/null 2>&1
done
# night 16 through the nightly (its fleet report and history.prom)
scripts/nightly --no-sweep --no-confirm --results "$T/fleet" --db "$T/h.sqlite" --stamp 20250116T030000Z >"$T/Nh.log" 2>&1; rc=$?
mkdir -p "$T/N"
for f in health.prom history.prom profile.json .logs/history.json; do
	cp "$T/fleet/fleet/20250116T030000Z/$f" "$T/N/" 2>>"$T/Nh.log"
done
FILES=("$T/A/health.prom" "$T/I/health.prom" "$T/N/health.prom" "$T/N/history.prom")
good=1
for f in "${FILES[@]}"; do [ -s "$f" ] || good=0; done
if [ $good = 1 ] && [ $rc = 1 ] && grep -q '^clusterhealth_history_regressed{node="n3",gpu="gpu1",metric="roofline.compute_gflops.bf16"} 1$' "$T/N/history.prom"; then
	ok prom_reports_written
else
	nok prom_reports_written "a report or the nightly's history.prom missing, or nightly exit $rc (want 1: n3 REGRESSED)" "$T/Nh.log"
fi

# ---- promtool check metrics
good=1
for f in "${FILES[@]}"; do
	if ! promtool check metrics <"$f" >"$T/pc.out" 2>&1 || [ -s "$T/pc.out" ]; then
		nok prom_promtool_check_metrics "$f" "$T/pc.out"; good=0; break
	fi
done
[ $good = 1 ] && ok "prom_promtool_check_metrics (${#FILES[@]} files, $(cat "${FILES[@]}" | grep -vc '^#') samples)"

# it fails on one wrong entry: a counter without _total, a sample with a broken label
cp "$T/A/health.prom" "$T/bad1.prom"
printf '# HELP clusterhealth_x_errors errors\n# TYPE clusterhealth_x_errors counter\nclusterhealth_x_errors 1\n' >>"$T/bad1.prom"
sed '0,/^clusterhealth_node_verdict{/s//clusterhealth_node_verdict{node=broken,/' "$T/A/health.prom" >"$T/bad2.prom"
if ! promtool check metrics <"$T/bad1.prom" >/dev/null 2>&1 && ! promtool check metrics <"$T/bad2.prom" >/dev/null 2>&1; then
	ok prom_promtool_check_metrics_fails_on_a_wrong_entry
else
	nok prom_promtool_check_metrics_fails_on_a_wrong_entry "promtool accepted a counter without _total or a broken label"
fi

# ---- the families written and the families documented are the same
fams=$(cat "${FILES[@]}" | sed -n 's/^# TYPE \([a-z0-9_]*\) .*/\1/p' | sort -u)
docfams=$(sed -n '/^## health.prom/,/^Point node_exporter/p' docs/health_report.md | grep -o '`clusterhealth_[a-z0-9_]*`' | tr -d '`' | sort -u)
if [ -n "$fams" ] && [ "$fams" = "$docfams" ]; then
	ok "prom_families_documented ($(echo "$fams" | wc -l) families)"
else
	diff <(echo "$docfams") <(echo "$fams") >"$T/fd.out"
	nok prom_families_documented "docs/health_report.md's health.prom table (<) and the files (>) differ" "$T/fd.out"
fi

# ---- cardinality: the inventory's series per 8-GPU, 8-port node (documented: 192)
inv=$(grep -E '^clusterhealth_(gpu|nic)_[a-z_]*\{node="node01",' "$T/I/health.prom" | wc -l)
if [ "$inv" = 192 ] && grep -q '22 per GPU and 2 per RDMA port' docs/health_report.md; then
	ok "prom_cardinality_inventory (192 series per node, as documented)"
else
	nok prom_cardinality_inventory "node01 of fleet-inventory has $inv inventory series; docs/health_report.md says 22 per GPU and 2 per RDMA port: 192"
fi

# ---- the alert rules
if promtool check rules "$RULES" >"$T/cr.out" 2>&1; then
	ok prom_promtool_check_rules
else
	nok prom_promtool_check_rules "$RULES" "$T/cr.out"
fi
counts=$("$PY" tests/cli/prom-rule-tests.py "$RULES" "$T/rules-test.json" "$T/A" "$T/I" "$T/N" 2>"$T/gen.err")
nonzero=1
for a in NodeFail DrainCandidate HardwareFault MetricRegressed SweepStale ReportStale; do
	echo "$counts" | grep -qE "(^| )Clusterhealth$a=[1-9]" || nonzero=0
done
if [ $nonzero = 1 ] && promtool test rules "$T/rules-test.json" >"$T/tr.out" 2>&1; then
	ok "prom_promtool_test_rules ($counts)"
else
	cat "$T/gen.err" >>"$T/tr.out"
	nok prom_promtool_test_rules "alerts expected: '$counts' (each must be 1 or more)" "$T/tr.out"
fi
# one wrong verdict in health.prom: the test must fail
mkdir -p "$T/W" && cp "$T/A/profile.json" "$T/W/"
sed 's/^clusterhealth_node_verdict{node="node02"} 2$/clusterhealth_node_verdict{node="node02"} 0/' "$T/A/health.prom" >"$T/W/health.prom"
"$PY" tests/cli/prom-rule-tests.py "$RULES" "$T/rules-wrong.json" "$T/W" >/dev/null 2>&1
if ! cmp -s "$T/A/health.prom" "$T/W/health.prom" && ! promtool test rules "$T/rules-wrong.json" >/dev/null 2>&1; then
	ok prom_promtool_test_rules_fails_on_a_wrong_verdict
else
	nok prom_promtool_test_rules_fails_on_a_wrong_verdict "a node02 verdict of 0 against profile.json's FAIL passed"
fi

# ---- a real node_exporter serves the files
mkdir -p "$T/textfile"
cp "$T/A/health.prom" "$T/N/history.prom" "$T/textfile/"
port=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
prometheus-node-exporter --web.listen-address="127.0.0.1:$port" --collector.disable-defaults \
	--collector.textfile --collector.textfile.directory="$T/textfile" >"$T/ne.log" 2>&1 &
NE_PID=$!
for _ in $(seq 300); do
	curl -sf "http://127.0.0.1:$port/metrics" -o "$T/scrape.txt" 2>/dev/null && break
	kill -0 "$NE_PID" 2>/dev/null || break
	sleep 0.1
done
msg=$("$PY" - "$T/scrape.txt" "$T/textfile/health.prom" "$T/textfile/history.prom" <<'PY'
import sys
from prometheus_client.parser import text_string_to_metric_families as parse
def samples(path):
    with open(path, encoding="utf-8") as f:
        return {(s.name, tuple(sorted(s.labels.items()))): s.value for fam in parse(f.read()) for s in fam.samples}
try:
    got = samples(sys.argv[1])
except FileNotFoundError:
    print("no scrape"); sys.exit()
want = {}
for p in sys.argv[2:]:
    want.update(samples(p))
if got.get(("node_textfile_scrape_error", ())) != 0:
    print("node_textfile_scrape_error is %r" % got.get(("node_textfile_scrape_error", ()))); sys.exit()
miss = [k for k in want if k not in got]
diff = [k for k in want if k in got and got[k] != want[k]]
extra = [k for k in got if k[0].startswith("clusterhealth_") and k not in want]
if miss or diff or extra:
    print("%d samples missing (%s), %d with another value, %d not in the files" % (len(miss), miss[:2], len(diff), len(extra)))
else:
    print("OK %d samples, every label and value" % len(want))
PY
)
case "$msg" in
OK*) ok "prom_node_exporter_scrape ($msg)" ;;
*) nok prom_node_exporter_scrape "$msg" "$T/ne.log" ;;
esac

# ---- a real Prometheus server scrapes that node_exporter and evaluates the
# rules (every second here): the alerts firing are those profile.json and
# history.json call for
pport=$("$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
sed 's/^    interval: 5m$/    interval: 1s/' "$RULES" >"$T/rules-1s.yml"
cat >"$T/prometheus.yml" <<EOF
global: {scrape_interval: 1s, evaluation_interval: 1s}
rule_files: ["$T/rules-1s.yml"]
scrape_configs:
  - job_name: clusterhealth
    static_configs: [{targets: ["127.0.0.1:$port"]}]
EOF
prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/tsdb" \
	--web.listen-address="127.0.0.1:$pport" >"$T/prom.log" 2>&1 &
PR_PID=$!
want=$("$PY" - "$T/A/profile.json" "$T/N/history.json" <<'PY'
import json, sys
prof, hist = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
hard = ("validation_failed", "wrong_results", "pcie_link", "nvlink_down", "ecc_uncorrected", "row_remap",
        "nic_port_down", "checkpoint_read_back")
w = set()
for n in prof["nodes"]:
    if n["verdict"] == "FAIL": w.add("ClusterhealthNodeFail %s" % n["name"])
    if n["drain_candidate"]: w.add("ClusterhealthDrainCandidate %s" % n["name"])
    for r in n["reasons"]:
        if r["level"] == "fail" and r["code"] in hard: w.add("ClusterhealthHardwareFault %s" % n["name"])
for g in hist["regressions"]:
    if g["persisted"]: w.add("ClusterhealthMetricRegressed %s" % g["node"])
print("\n".join(sorted(w)))
PY
)
got=
for _ in $(seq 120); do
	sleep 0.5
	got=$(curl -sf "http://127.0.0.1:$pport/api/v1/alerts" 2>/dev/null | "$PY" -c '
import json, sys
d = json.load(sys.stdin)
print("\n".join(sorted(set("%s %s" % (a["labels"]["alertname"], a["labels"].get("node", ""))
                           for a in d["data"]["alerts"] if a["state"] == "firing"))))' 2>/dev/null)
	[ -n "$got" ] && [ "$got" = "$want" ] && break
	kill -0 "$PR_PID" 2>/dev/null || break
done
kill "$PR_PID" 2>/dev/null && wait "$PR_PID" 2>/dev/null
PR_PID=
kill "$NE_PID" 2>/dev/null && wait "$NE_PID" 2>/dev/null
NE_PID=
if [ -n "$want" ] && [ "$got" = "$want" ]; then
	ok "prom_prometheus_server_fires_the_alerts ($(echo "$got" | wc -l) alerts: $(echo "$got" | cut -d' ' -f1 | sort | uniq -c | awk '{print $2 " " $1}' | paste -sd, - | sed 's/,/, /g'))"
else
	{ echo "want:"; echo "$want"; echo "got:"; echo "$got"; tail -5 "$T/prom.log"; } >"$T/alerts.out"
	nok prom_prometheus_server_fires_the_alerts "the firing alerts differ from those profile.json and history.json call for" "$T/alerts.out"
fi

# ---- the Grafana dashboard
msg=$("$PY" - "$DASH" "$T/dash-rules.yml" $fams <<'PY'
import json, re, sys
path, out, fams = sys.argv[1], sys.argv[2], set(sys.argv[3:])
try:
    with open(path, encoding="utf-8") as f:
        d = json.load(f)
except (OSError, ValueError) as e:
    print("%s: %s" % (path, e)); sys.exit()
exprs = []
def walk(o):
    if isinstance(o, dict):
        if isinstance(o.get("expr"), str) and o.get("expr"):
            exprs.append(o["expr"])
        for v in o.values():
            walk(v)
    elif isinstance(o, list):
        for v in o:
            walk(v)
walk(d)
names = set(n for e in exprs for n in re.findall(r"\bclusterhealth_[a-z0-9_]+", e))
unknown = sorted(names - fams)
if not exprs or unknown:
    print("%d queries; families not in health.prom or history.prom: %s" % (len(exprs), unknown)); sys.exit()
# the queries as recording rules, Grafana's variables replaced, for promtool
with open(out, "w") as f:
    json.dump({"groups": [{"name": "dashboard", "rules": [
        {"record": "dashboard_query_%d" % i,
         "expr": re.sub(r"\$\{?(\w+)\}?", lambda m: "1h" if m.group(1).startswith("__") else ".*", e)}
        for i, e in enumerate(exprs)]}]}, f)
print("OK %d queries over %d families" % (len(exprs), len(names)))
PY
)
case "$msg" in
OK*)
	if promtool check rules "$T/dash-rules.yml" >"$T/dr.out" 2>&1; then
		ok "prom_grafana_dashboard (${msg#OK }, each parses)"
	else
		nok prom_grafana_dashboard "a query does not parse" "$T/dr.out"
	fi ;;
*) nok prom_grafana_dashboard "$msg" ;;
esac

# ---- history --prom: a path that cannot be written is a usage error, named
"$HR" history -q --db "$T/h.sqlite" --prom "$T/no/such/dir/history.prom" >"$T/hp.out" 2>&1; rc=$?
if [ $rc = 2 ] && grep -q -- "--prom" "$T/hp.out" && grep -q "no/such/dir" "$T/hp.out"; then
	ok prom_history_prom_unwritable_path
else
	nok prom_history_prom_unwritable_path "exit $rc (want 2, naming --prom and the path)" "$T/hp.out"
fi
exit 0
