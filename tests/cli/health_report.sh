#!/bin/bash
# health_report.sh - end-to-end checks of health_report's outputs:
#   - the HTML report loads in a real browser (headless Chromium) and every
#     plot's SVG is present and rendered (laid out with a non-empty bounding
#     box and drawn elements), for each kind of plot;
#   - profile.json follows docs/profile-schema.md (the keys the outputs and
#     colleagues' tools read);
#   - health.prom is valid Prometheus text format;
#   - its own outputs under the inputs are ignored on a second run.
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env
HR=$B/health_report
TMP=$(mktemp -d /tmp/ch_hr_test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

if [ ! -x "$HR" ]; then
	echo "skip health_report: $HR is not built"
	exit 0
fi

"$HR" --out "$TMP/faulty" tests/data/report/fleet-faulty >"$TMP/faulty.txt" 2>&1
rc=$?
if [ $rc = 1 ] && [ -s "$TMP/faulty/report.html" ] && [ -s "$TMP/faulty/profile.json" ] &&
   [ -s "$TMP/faulty/report.md" ] && [ -s "$TMP/faulty/health.prom" ]; then
	echo "ok health_report_writes_all_outputs"
else
	echo "not ok health_report_writes_all_outputs: exit $rc, files: $(ls "$TMP/faulty" 2>&1 | tr '\n' ' ')"
	sed 's/^/    /' "$TMP/faulty.txt" | head -20
fi

# ---- the HTML in a real browser
CHROME=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$CHROME" ]; then
	echo "skip health_report_html_renders_in_chromium: no chromium (scripts/install-deps installs it)"
elif [ ! -s "$TMP/faulty/report.html" ]; then
	echo "not ok health_report_html_renders_in_chromium: no report.html"
else
	html=$(readlink -f "$TMP/faulty/report.html")
	timeout 180 "$CHROME" --headless --no-sandbox --disable-gpu --no-first-run \
		--user-data-dir="$TMP/chrome" --virtual-time-budget=20000 \
		--dump-dom "file://$html" >"$TMP/dom.html" 2>"$TMP/chrome.err"
	crc=$?
	if [ $crc != 0 ] || [ ! -s "$TMP/dom.html" ]; then
		echo "not ok health_report_html_renders_in_chromium: chromium exited $crc"
		tail -5 "$TMP/chrome.err" | sed 's/^/    /'
	else
		msg=$(python3 - "$TMP/dom.html" "$TMP/faulty/report.html" <<'PY'
import re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
src = open(sys.argv[2], encoding="utf-8").read()
errs = []
figs = re.findall(r'<figure class="plot" data-plot="(\w+)"', dom)
svgs = re.findall(r"<svg\b[^>]*>", dom)
if len(figs) != len(re.findall(r'<figure class="plot"', src)):
    errs.append("figures in the DOM %d != in the file" % len(figs))
if len(svgs) != len(figs):
    errs.append("%d <svg> for %d figures" % (len(svgs), len(figs)))
body = re.search(r"<body[^>]*>", dom).group(0)
tot = re.search(r'data-plots-total="(\d+)"', body)
ren = re.search(r'data-plots-rendered="(\d+)"', body)
if not tot or not ren:
    errs.append("the page's check script did not run (no data-plots-* on <body>)")
elif not (int(tot.group(1)) == int(ren.group(1)) == len(figs)):
    errs.append("rendered %s of %s plots (figures %d)" % (ren.group(1), tot.group(1), len(figs)))
for s in svgs:
    if 'data-rendered="yes"' not in s:
        errs.append("an svg is not rendered: %s" % s[:120])
        break
    d = re.search(r'data-drawn="(\d+)"', s)
    if not d or int(d.group(1)) < 10:
        errs.append("an svg draws too little: %s" % s[:120])
        break
for kind in ("roofline", "busbw", "lateness", "distribution"):
    if kind not in figs:
        errs.append("no %s plot" % kind)
if "http://" in src.replace('xmlns="http://www.w3.org/2000/svg"', "").replace('xmlns:xlink="http://www.w3.org/1999/xlink"', ""):
    errs.append("the report refers to a network resource")
print("; ".join(errs) if errs else "OK %d plots" % len(figs))
PY
)
		case "$msg" in
		OK*) echo "ok health_report_html_renders_in_chromium ($msg)" ;;
		*) echo "not ok health_report_html_renders_in_chromium: $msg" ;;
		esac
		# a screenshot is a real paint: it must not be blank
		timeout 120 "$CHROME" --headless --no-sandbox --disable-gpu --no-first-run \
			--user-data-dir="$TMP/chrome" --window-size=1280,2400 \
			--screenshot="$TMP/shot.png" "file://$html" >/dev/null 2>&1
		size=$(stat -c %s "$TMP/shot.png" 2>/dev/null || echo 0)
		if [ "$size" -gt 20000 ]; then
			echo "ok health_report_html_screenshot ($size bytes)"
		else
			echo "not ok health_report_html_screenshot: $size bytes"
		fi
	fi
fi

# ---- profile.json: the documented keys
msg=$(python3 - "$TMP/faulty/profile.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
errs = []
def need(o, keys, where):
    for k in keys:
        if k not in o:
            errs.append("%s: missing '%s'" % (where, k))
need(p, ["schema", "schema_version", "tool", "version", "git_rev", "generated_utc", "exit_code",
         "summary", "run_cost", "inputs", "expectations", "drift", "nodes", "groups", "findings",
         "distributions"], "profile")
if p.get("schema") != "clusterhealth.profile" or p.get("schema_version") != 1:
    errs.append("schema %r version %r" % (p.get("schema"), p.get("schema_version")))
need(p["summary"], ["nodes", "pass", "warn", "fail", "verdict", "drain_candidates"], "summary")
need(p["run_cost"], ["wall_span_sec", "it_energy_j", "energy_source", "pue", "facility_energy_kwh",
                     "price_per_kwh", "currency", "cost", "carbon_g_per_kwh", "co2e_kg", "sources"], "run_cost")
for n in p["nodes"]:
    need(n, ["name", "verdict", "like_for_like", "reasons", "config", "devices", "busbw",
             "stragglers", "loader"], "node")
    for r in n["reasons"]:
        need(r, ["level", "code", "subject", "text", "action", "source"], "reason")
    for d in n["devices"]:
        for m in d["metrics"]:
            need(m, ["metric", "unit", "value", "datasheet", "expected", "pct_of_datasheet",
                     "pct_of_expected", "fleet_median", "pct_of_fleet_median", "z", "level"], "metric")
if [n["verdict"] for n in p["nodes"]] != sorted([n["verdict"] for n in p["nodes"]],
                                               key=lambda v: {"FAIL": 0, "WARN": 1, "PASS": 2}[v]):
    errs.append("nodes not worst first")
if p["exit_code"] != 1:
    errs.append("exit_code %r" % p["exit_code"])
print("; ".join(errs) if errs else "OK")
PY
)
[ "$msg" = OK ] && echo "ok health_report_profile_schema" || echo "not ok health_report_profile_schema: $msg"

# ---- health.prom: Prometheus text format
msg=$(python3 - "$TMP/faulty/health.prom" <<'PY'
import re, sys
name = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
label = r'[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*"'
sample = re.compile(r"^(%s)(\{%s(,%s)*\})? (-?[0-9.eE+-]+|NaN|\+Inf|-Inf)$" % (name, label, label))
typed, errs, n = set(), [], 0
for i, line in enumerate(open(sys.argv[1]).read().split("\n")[:-1], 1):
    if line.startswith("# TYPE "):
        typed.add(line.split()[2])
    elif line.startswith("# HELP ") or line == "":
        pass
    else:
        m = sample.match(line)
        if not m:
            errs.append("line %d: %r" % (i, line[:100]))
        elif m.group(1) not in typed:
            errs.append("line %d: %s has no TYPE before it" % (i, m.group(1)))
        n += 1
print("; ".join(errs[:3]) if errs else "OK %d samples" % n)
PY
)
case "$msg" in OK*) echo "ok health_report_prometheus_format ($msg)" ;; *) echo "not ok health_report_prometheus_format: $msg" ;; esac

# ---- own outputs among the inputs are ignored
mkdir -p "$TMP/in"
cp -r tests/data/report/fleet-healthy "$TMP/in/fleet"
"$HR" --out "$TMP/in/report" "$TMP/in" >"$TMP/run1.txt" 2>&1
r1=$?
cp "$TMP/in/report/profile.json" "$TMP/in/fleet/old-profile.json"
"$HR" --out "$TMP/in/report" "$TMP/in" >"$TMP/run2.txt" 2>&1
r2=$?
if [ $r1 = 0 ] && [ $r2 = 0 ] && grep -q "13 input files (13 read, 0 ignored), 0 input problems skipped" "$TMP/run1.txt" &&
   grep -q "14 input files (13 read, 1 ignored), 0 input problems skipped" "$TMP/run2.txt"; then
	echo "ok health_report_ignores_own_outputs"
else
	echo "not ok health_report_ignores_own_outputs: exits $r1 $r2"
	head -2 "$TMP/run1.txt" "$TMP/run2.txt" | sed 's/^/    /'
fi

# ---- the report on every real nccl-tests log (tests/data/nccl-tests-logs): nothing skipped, each log's
# average busbw shown beside its own Avg line
"$HR" --out "$TMP/logs" tests/data/nccl-tests-logs >"$TMP/logs.txt" 2>&1
rc=$?
msg=$(python3 - "$TMP/logs/profile.json" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
errs = []
if p["inputs"]["skipped"] != 0:
    errs.append("%d skipped" % p["inputs"]["skipped"])
n = 0
for g in p["groups"]:
    if g["reported_avg_busbw_gbps"] is not None:
        n += 1
        if abs(g["avg_busbw_gbps"] - g["reported_avg_busbw_gbps"]) > 0.0055:
            errs.append("%s: %.4f vs %.4f" % (g["name"], g["avg_busbw_gbps"], g["reported_avg_busbw_gbps"]))
if n != 6:
    errs.append("%d groups with an Avg line" % n)
print("; ".join(errs) if errs else "OK")
PY
)
[ $rc = 1 ] && [ "$msg" = OK ] && echo "ok health_report_shared_logs_profile" ||
	echo "not ok health_report_shared_logs_profile: exit $rc, $msg"
exit 0
