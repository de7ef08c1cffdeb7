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
    if n.get("detail") == "bounded":
        # a PASS node without --detail all: its devices' values, its input files
        if n["verdict"] != "PASS":
            errs.append("%s: a %s node of bounded detail" % (n["name"], n["verdict"]))
        if not n.get("inputs") or not all(isinstance(x, str) and x for x in n["inputs"]):
            errs.append("%s: bounded without its input files" % n["name"])
        for d in n["devices"]:
            need(d, ["device", "sku", "status", "values", "level"], "bounded device")
            if "metrics" in d or "points" in d:
                errs.append("%s: a bounded device with its metrics or points" % n["name"])
        continue
    if "detail" in n:
        errs.append("%s: detail %r" % (n["name"], n["detail"]))
    for d in n["devices"]:
        for m in d["metrics"]:
            need(m, ["metric", "unit", "value", "datasheet", "expected", "pct_of_datasheet",
                     "pct_of_expected", "fleet_median", "pct_of_fleet_median", "z", "level"], "metric")
if p.get("detail") != "flagged" or not any(n.get("detail") == "bounded" for n in p["nodes"]):
    errs.append("no node of bounded detail (profile detail %r)" % p.get("detail"))
if [n["verdict"] for n in p["nodes"]] != sorted([n["verdict"] for n in p["nodes"]],
                                               key=lambda v: {"FAIL": 0, "WARN": 1, "PASS": 2}[v]):
    errs.append("nodes not worst first")
if p["exit_code"] != 1:
    errs.append("exit_code %r" % p["exit_code"])
print("; ".join(errs) if errs else "OK")
PY
)
[ "$msg" = OK ] && echo "ok health_report_profile_schema" || echo "not ok health_report_profile_schema: $msg"

# ---- --detail: a PASS node's entry is bounded; WARN, FAIL and NOT JUDGED
# nodes, groups and findings are those of --detail all; a bounded node's
# headline, reasons, configuration and busbw are the full entry's, its
# devices' values the full entry's metric values; its inputs its files
"$HR" --detail all --out "$TMP/faulty-all" tests/data/report/fleet-faulty >/dev/null 2>&1
msg=$(python3 - "$TMP/faulty/profile.json" "$TMP/faulty-all/profile.json" <<'PY'
import json, os, sys
b, f = (json.load(open(x)) for x in sys.argv[1:3])
errs = []
if "detail" in f or b.get("detail") != "flagged":
    errs.append("profile detail %r / %r" % (b.get("detail"), f.get("detail")))
for k in ("summary", "groups", "findings", "drift", "inputs", "exit_code"):
    if b[k] != f[k]:
        errs.append("%s differs" % k)
full = {n["name"]: n for n in f["nodes"]}
if [n["name"] for n in b["nodes"]] != [n["name"] for n in f["nodes"]]:
    errs.append("node order differs")
nb = 0
for n in b["nodes"]:
    m = full[n["name"]]
    if n.get("detail") != "bounded":
        if n != m:
            errs.append("%s: a %s node differs from --detail all" % (n["name"], n["verdict"]))
        continue
    nb += 1
    for k in ("verdict", "headline", "reasons", "config", "busbw", "checks_judged", "like_for_like"):
        if n[k] != m[k]:
            errs.append("%s: %s differs" % (n["name"], k))
    vals = {(d["device"], k): v for d in n["devices"] for k, v in d["values"].items()}
    want = {(d["device"], x["metric"]): x["value"] for d in m["devices"] for x in d["metrics"]}
    if vals != want:
        errs.append("%s: device values differ" % n["name"])
    srcs = {d["source"] for d in m["devices"]} | {m["loader"]["source"]} if m["loader"] else {d["source"] for d in m["devices"]}
    if not srcs <= set(n["inputs"]) or not all(os.path.exists(x) for x in n["inputs"]):
        errs.append("%s: inputs %r" % (n["name"], n["inputs"]))
    if len(json.dumps(n, indent=2)) > 8192:
        errs.append("%s: a bounded node of %d bytes" % (n["name"], len(json.dumps(n, indent=2))))
if nb == 0:
    errs.append("no bounded node")
print("; ".join(errs[:4]) if errs else "OK %d bounded nodes" % nb)
PY
)
case "$msg" in OK*) echo "ok health_report_detail_bounded ($msg)" ;; *) echo "not ok health_report_detail_bounded: $msg" ;; esac

# ---- a bounded distribution (more than 1000 values: 130 nodes of 8 GPUs)
# keeps the outliers and the ranks report.html draws, each at its rank of
# the full distribution: the distribution plots are those of --detail all
scripts/bench/make-fleet 130 "$TMP/f130" >/dev/null 2>&1
"$HR" -q --out "$TMP/f130-b" "$TMP/f130" >/dev/null 2>&1
"$HR" -q --detail all --out "$TMP/f130-a" "$TMP/f130" >/dev/null 2>&1
msg=$(python3 - "$TMP/f130-b" "$TMP/f130-a" <<'PY'
import json, re, sys
b, f = (json.load(open(x + "/profile.json")) for x in sys.argv[1:3])
errs, big = [], 0
for db, df in zip(b["distributions"], f["distributions"]):
    if (db["class"], db["n"], db["median"], db["mad"]) != (df["class"], df["n"], df["median"], df["mad"]):
        errs.append("%s: header differs" % db["class"])
    if len(df["values"]) <= 1000:
        if db != df:
            errs.append("%s: a small distribution differs" % db["class"])
        continue
    big += 1
    full = sorted(v["value"] for v in df["values"] if v["value"] is not None)
    ranks = [v["rank"] for v in db["values"]]
    if "values_kept" not in db or len(set(ranks)) != len(ranks) or max(ranks) != len(full) or min(ranks) != 1:
        errs.append("%s: ranks %d kept of %d" % (db["class"], len(ranks), len(full)))
    if any(full[v["rank"] - 1] != v["value"] for v in db["values"]):
        errs.append("%s: a value not at its rank" % db["class"])
    out = {v["subject"] for v in df["values"] if v["level"] != "info"}
    if not out <= {v["subject"] for v in db["values"]}:
        errs.append("%s: an outlier left out" % db["class"])
    if len(db["values"]) > 1000 + len(out) + 1:
        errs.append("%s: %d values kept" % (db["class"], len(db["values"])))
if big == 0:
    errs.append("no distribution of more than 1000 values")
def dist_svgs(d):
    h = open(d + "/report.html").read()
    return re.findall(r'<figure class="plot" data-plot="distribution".*?</figure>', h, re.S)
sb, sf = dist_svgs(sys.argv[1]), dist_svgs(sys.argv[2])
if not sb or sb != sf:
    errs.append("distribution plots differ (%d / %d)" % (len(sb), len(sf)))
print("; ".join(errs[:4]) if errs else "OK %d bounded distributions, %d plots the same" % (big, len(sb)))
PY
)
case "$msg" in OK*) echo "ok health_report_distribution_bounded ($msg)" ;; *) echo "not ok health_report_distribution_bounded: $msg" ;; esac

# ---- report.html at fleet scale (130 nodes): the flagged nodes in full,
# every PASS node one row of the compact table (shown, sorted and filtered
# by its script in Chromium), the like groups overlaid on one busbw plot per class
msg=$(python3 - "$TMP/f130-b/report.html" "$TMP/f130-b/profile.json" <<'PY'
import json, re, sys
h, p = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
errs = []
flagged = [n["name"] for n in p["nodes"] if n["verdict"] != "PASS"]
passed = [n["name"] for n in p["nodes"] if n["verdict"] == "PASS"]
sec = h[h.index('<h2 id="nodes">'):h.index('<h2 id="healthy">')]
got = re.findall(r'<tr><td class="(?:FAIL|WARN|NOT JUDGED)">[^<]*</td><td>([^<]*)</td>', sec)
if got != flagged:
    errs.append("flagged section %r, want %r" % (got[:3], flagged[:3]))
# the PASS table's rows: data the page's script shows (no "</" inside)
data = re.search(r'<script type="application/json" id="healthy-table-data">(.*?)</script>', h, re.S).group(1)
rows = [r[0] for r in json.loads(data)]
if rows != passed or "</" in data:
    errs.append("healthy table: %d rows, want %d" % (len(rows), len(passed)))
classes = {g["class"] for g in p["groups"] if g.get("class")}
busbw = re.findall(r'<figure class="plot" data-plot="busbw" data-subject="([^"]*)"', h)
if sorted(busbw) != sorted(classes):
    errs.append("busbw plots %r, classes %r" % (busbw, sorted(classes)))
if len(h) > 4 << 20:
    errs.append("report.html of %d bytes for 130 nodes" % len(h))
print("; ".join(errs) if errs else "OK %d flagged, %d PASS rows, %d busbw overlays" % (len(flagged), len(rows), len(busbw)))
PY
)
case "$msg" in OK*) echo "ok health_report_html_fleet_layout ($msg)" ;; *) echo "not ok health_report_html_fleet_layout: $msg" ;; esac
if [ -n "$CHROME" ]; then
	# the table's own script, run by Chromium: sort by memory (twice: the
	# other way), then filter by a node name
	sed 's#</body></html>#<script>(function(){var th=document.querySelectorAll("\#healthy-table th")[1];hrSort(th);var a=[].map.call(document.querySelectorAll("\#healthy-table tbody tr"),function(r){return parseFloat(r.cells[1].getAttribute("data-v"))});hrSort(th);var d=[].map.call(document.querySelectorAll("\#healthy-table tbody tr"),function(r){return parseFloat(r.cells[1].getAttribute("data-v"))});var up=1,dn=1;for(var i=1;i<a.length;i++){if(a[i]<a[i-1])up=0;if(d[i]>d[i-1])dn=0;}var f=document.querySelector("input.filter");f.value="gpu012";hrFilter(f);var vis=[].filter.call(document.querySelectorAll("\#healthy-table tbody tr"),function(r){return r.style.display!=="none"}).map(function(r){return r.cells[0].textContent});var cnt=document.getElementById("healthy-count").textContent;f.value="";hrFilter(f);var t=hrTab("healthy-table");t.shown=50;hrDraw("healthy-table");var p1=document.querySelectorAll("\#healthy-table tbody tr").length,more=document.getElementById("healthy-table-more").style.display;hrMore("healthy-table");var p2=document.querySelectorAll("\#healthy-table tbody tr").length;document.body.setAttribute("data-test",[up,dn,a.length,vis.join(" "),cnt,p1+(more===""?"+":"-"),p2].join("|"));})();</script></body></html>#' \
		"$TMP/f130-b/report.html" >"$TMP/f130-sort.html"
	timeout 180 "$CHROME" --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$TMP/chrome" \
		--virtual-time-budget=20000 --dump-dom "file://$(readlink -f "$TMP/f130-sort.html")" >"$TMP/f130-sort.dom" 2>/dev/null
	got=$(grep -o 'data-test="[^"]*"' "$TMP/f130-sort.dom" | head -1)
	msg=$(python3 - "$TMP/f130-b/profile.json" "$got" <<'PY'
import json, sys
p = json.load(open(sys.argv[1]))
v = sorted(n["name"] for n in p["nodes"] if n["verdict"] == "PASS" and "gpu012" in n["name"])
f = sys.argv[2].split('"')[1].split("|") if '"' in sys.argv[2] else []
npass = sum(n["verdict"] == "PASS" for n in p["nodes"])
# sorted both ways, all rows shown, the filter's rows and count; then 50
# rows shown with "more" offered, and 200 more after it
want = ["1", "1", str(npass), " ".join(v), str(len(v)), "50+", str(min(250, npass))]
print("OK" if len(f) == 7 and f[:3] + [" ".join(sorted(f[3].split()))] + f[4:] == want else "got %r want %r" % (f, want))
PY
)
	[ "$msg" = OK ] && echo "ok health_report_html_table_sorts_and_filters ($got)" ||
		echo "not ok health_report_html_table_sorts_and_filters: $msg"
fi

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
if n != 7:
    errs.append("%d groups with an Avg line" % n)
print("; ".join(errs) if errs else "OK")
PY
)
[ $rc = 1 ] && [ "$msg" = OK ] && echo "ok health_report_shared_logs_profile" ||
	echo "not ok health_report_shared_logs_profile: exit $rc, $msg"
exit 0
