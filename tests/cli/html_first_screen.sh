#!/bin/bash
# html_first_screen.sh - report.html's first screen, checked on the page a
# real browser lays out (headless Chromium at a 1366x768 window), by the
# elements' positions, not their order in the source:
#   - the fleet's verdict (the <h1>) and the first flagged node, with its
#     first suggested action, lie within the first screen (the page's
#     window.innerHeight) and above "What this measurement run cost";
#   - a NOT JUDGED node whose backends were unavailable says each
#     unavailable sentence once;
#   - the roofline caption promises dashed datasheet roofs only where one is
#     drawn (a GPU with a datasheet: yes; a CPU: no).
# The positions are read by a probe script this test appends to a copy of
# the page: it writes them, as JSON, into <body data-first-screen>, which
# Chromium's --dump-dom prints.
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env
HR=$B/health_report
TMP=$(mktemp -d /tmp/ch_html_first.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

if [ ! -x "$HR" ]; then
	echo "skip html_first_screen: $HR is not built"
	exit 0
fi
"$HR" --out "$TMP/faulty" tests/data/report/fleet-faulty >/dev/null 2>&1
"$HR" --out "$TMP/unavail" tests/data/report/unavailable >/dev/null 2>&1
"$HR" --out "$TMP/vm" tests/data/report/real-vm >/dev/null 2>&1

# ---- positions on the rendered page
CHROME=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
# first_screen NAME HTML: the probe's JSON for HTML (empty on failure)
first_screen() {
	python3 - "$2" "$TMP/$1.probe.html" <<'PY' || return 1
import sys
s = open(sys.argv[1], encoding="utf-8").read()
probe = r"""<script>
addEventListener('load', function () {
  function box(el) {
    if (!el) return null;
    var r = el.getBoundingClientRect();
    return [r.top + window.scrollY, r.bottom + window.scrollY];
  }
  var tbl = document.querySelector('#nodes ~ table'), row = null;
  if (tbl) { var td = tbl.querySelector('tr td'); row = td ? td.parentElement : null; }
  document.body.setAttribute('data-first-screen', JSON.stringify({
    vh: window.innerHeight,
    verdict: box(document.querySelector('h1')),
    verdict_text: document.querySelector('h1') ? document.querySelector('h1').textContent : null,
    node: row ? box(row.children[1]) : null,
    node_name: row ? row.children[1].textContent : null,
    action: row ? box(row.querySelector('.act')) : null,
    cost: box(document.getElementById('cost'))
  }));
});
</script>"""
i = s.rfind("</body>")
open(sys.argv[2], "w", encoding="utf-8").write(s[:i] + probe + s[i:])
PY
	timeout 180 "$CHROME" --headless --no-sandbox --disable-gpu --no-first-run \
		--user-data-dir="$TMP/chrome" --window-size=1366,768 --virtual-time-budget=20000 \
		--dump-dom "file://$(readlink -f "$TMP/$1.probe.html")" 2>"$TMP/$1.chrome.err" >"$TMP/$1.dom.html"
}

# judge NAME NEED_ACTION: print the verdict on the probe's positions
judge() {
	python3 - "$TMP/$1.dom.html" "$2" <<'PY'
import html, json, re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r'data-first-screen="([^"]*)"', dom)
if not m:
    print("the probe did not run (no data-first-screen on <body>)")
    sys.exit()
p = json.loads(html.unescape(m.group(1)))
vh, errs = p["vh"], []
if not (300 <= vh <= 768):
    errs.append("viewport height %s, not that of a 1366x768 window" % vh)
need = [("verdict", "the fleet's verdict"), ("node", "the first flagged node")]
if sys.argv[2] == "1":
    need.append(("action", "its first action"))
for key, what in need:
    b = p.get(key)
    if b is None:
        errs.append("%s not found" % what)
    elif b[1] > vh:
        errs.append("%s ends at %.0f px, below the first screen (%d px)" % (what, b[1], vh))
    elif p.get("cost") and b[1] > p["cost"][0]:
        errs.append("%s (%.0f px) below the cost section (%.0f px)" % (what, b[1], p["cost"][0]))
if not p.get("cost"):
    errs.append("no cost section (id=cost)")
if errs:
    print("; ".join(errs))
else:
    print("OK %s and node %s%s within the first %d px; cost at %.0f px" %
          (p["verdict_text"], p["node_name"], " with its action" if sys.argv[2] == "1" else "", vh, p["cost"][0]))
PY
}

if [ -z "$CHROME" ]; then
	echo "skip html_first_screen_*: no chromium (scripts/install-deps installs it)"
else
	for t in faulty:1 unavail:0 vm:1; do
		name=${t%:*}
		if [ ! -s "$TMP/$name/report.html" ]; then
			echo "not ok html_first_screen_$name: no report.html"
			continue
		fi
		first_screen "$name" "$TMP/$name/report.html"
		msg=$(judge "$name" "${t#*:}")
		case "$msg" in
		OK*) echo "ok html_first_screen_$name (${msg#OK })" ;;
		*) echo "not ok html_first_screen_$name: $msg"
		   grep -v dbus "$TMP/$name.chrome.err" 2>/dev/null | tail -3 | sed 's/^/    /' ;;
		esac
	done
fi

# ---- a NOT JUDGED node says an unavailable backend's sentence once
msg=$(python3 - "$TMP/unavail/report.html" <<'PY'
import re, sys
s = open(sys.argv[1], encoding="utf-8").read()
row = re.search(r'<tr><td class="NOT JUDGED">.*?</tr>', s, re.S)
if not row:
    print("no NOT JUDGED row")
    sys.exit()
sent = re.findall(r"no CUDA device: [^;<)]*", row.group(0))
twice = sorted({x for x in sent if sent.count(x) > 1})
if not sent:
    print("no unavailable sentence in the row")
elif len(re.findall(r"allreduce_bw: unavailable", row.group(0))) != 1 or \
     len(re.findall(r"roofline: unavailable", row.group(0))) != 1:
    print("each unavailable backend not said once: %s" % row.group(0)[:400])
else:
    print("OK")
PY
)
case "$msg" in
OK*) echo "ok html_not_judged_said_once" ;;
*) echo "not ok html_not_judged_said_once: $msg" ;;
esac

# ---- dashed datasheet roofs promised only where drawn
gpu=$(grep -o '<figcaption>Roofline of node02/gpu3[^<]*' "$TMP/faulty/report.html" | head -1)
cpu=$(grep -o '<figcaption>Roofline of vm/cpu[^<]*' "$TMP/vm/report.html" | head -1)
if [[ $gpu == *"datasheet roofs (dashed)"* ]] && [ -n "$cpu" ] && [[ $cpu != *dashed* ]] &&
   [[ $cpu == *"no datasheet roof"* ]]; then
	echo "ok html_roofline_caption_dashed_only_when_drawn"
else
	echo "not ok html_roofline_caption_dashed_only_when_drawn: gpu '$gpu'; cpu '$cpu'"
fi

# ---- the configuration column reads as words
if grep -q "same as the fleet's majority" "$TMP/unavail/report.html" &&
   ! grep -q "the fleet's<br>" "$TMP/unavail/report.html" &&
   ! grep -q "<summary>all</summary>" "$TMP/unavail/report.html"; then
	echo "ok html_configuration_column_readable"
else
	echo "not ok html_configuration_column_readable"
fi
