#!/bin/bash
# health_report_detail.sh - what report.md and report.html show of a PASS
# node under the default --detail flagged (docs/health_report.md, Outputs):
#   - in a fleet of at most 64 PASS nodes (a one-node bring-up,
#     fleet-faulty): the PASS nodes' device rows, rooflines, loader rows
#     and lateness plots, as with --detail all (report.html byte for byte),
#     while profile.json keeps the PASS node's entry bounded;
#   - "No roofline results among the inputs" (and the loader's) only when
#     the inputs hold none;
#   - in a fleet of more than 64 PASS nodes: the PASS nodes' device figures
#     are said to be left out, with their counts, never absent; report.md's
#     count sentence counts what it lists.
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env
HR=$B/health_report
TMP=$(mktemp -d /tmp/ch_hr_detail.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

if [ ! -x "$HR" ]; then
	echo "skip health_report_detail: $HR is not built"
	exit 0
fi

# the checks of one output directory against its --detail all twin
# (argv: NAME DIR ALLDIR); prints OK or what failed
check_dir() {
	python3 - "$@" <<'PY'
import json, re, sys
name, d, a = sys.argv[1:4]
p, pa = (json.load(open(x + "/profile.json")) for x in (d, a))
md, mda = (open(x + "/report.md").read() for x in (d, a))
html, htmla = (open(x + "/report.html").read() for x in (d, a))
errs = []
stamp = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")
npass = p["summary"]["pass"]
bounded = [n for n in p["nodes"] if n.get("detail") == "bounded"]
if p.get("detail") != "flagged" or not bounded:
    errs.append("profile.json has no node of bounded detail")
devs = sum(1 for n in pa["nodes"] for x in n["devices"] if x.get("metrics"))
loaders = sum(1 for n in pa["nodes"] if n.get("loader") and n["loader"].get("configs"))
metrics = sum(len(x.get("metrics") or []) for n in pa["nodes"] for x in n["devices"])
pass_nodes = [n["name"] for n in pa["nodes"] if n["verdict"] == "PASS"]
if npass <= 64:
    # as --detail all: the same report.html, the same report.md but for
    # where the count sentence says what profile.json holds
    if stamp.sub("", html) != stamp.sub("", htmla):
        errs.append("report.html differs from --detail all's")
    q = ": a PASS node's values, every figure with --detail all"
    if stamp.sub("", md).replace(q, "") != stamp.sub("", mda):
        errs.append("report.md differs from --detail all's")
    for n in pass_nodes:
        ds = [x for x in next(m for m in pa["nodes"] if m["name"] == n)["devices"] if x.get("metrics")]
        if ds and 'data-plot="roofline" data-subject="%s/%s"' % (n, ds[0]["device"]) not in html and \
           "more device rooflines not drawn" not in html:
            errs.append("%s: no roofline in report.html" % n)
        if metrics <= 60 and ds and not re.search(r"^\| %s \| %s \| [^\n]*\| [a-z]" % (re.escape(n), re.escape(ds[0]["device"])), md, re.M):
            errs.append("%s: no device row in report.md" % n)
    if "are not listed" in md or "are not drawn" in html:
        errs.append("a PASS node said to be left out")
else:
    left = sum(len(x.get("values") or {}) for n in bounded for x in n["devices"])
    listed = sum(len(x.get("metrics") or []) for n in p["nodes"] if n.get("detail") != "bounded" for x in n["devices"])
    ldev = sum(1 for n in bounded for x in n["devices"] if x.get("values"))
    if devs and "The %d devices of %d PASS nodes are not drawn" % (ldev, len(bounded)) not in html:
        errs.append("report.html does not say %d devices of %d PASS nodes are not drawn" % (ldev, len(bounded)))
    if left and "The %d device metrics of %d PASS nodes are not listed" % (left, len(bounded)) not in md:
        errs.append("report.md does not say %d device metrics of %d PASS nodes are not listed" % (left, len(bounded)))
    m = re.search(r"The (\d+) flagged of (\d+) device metrics", md)
    if listed > 60 and (not m or int(m.group(2)) != listed):
        errs.append("count sentence %r, %d metrics listed" % (m and m.group(0), listed))
    if left + listed != metrics:
        errs.append("%d left + %d listed != %d metrics" % (left, listed, metrics))
# "No ... results among the inputs" only when there were none
for what, n in (("roofline", devs), ("loader_contention", loaders)):
    said = "No %s results among the inputs" % what in html
    if said != (n == 0):
        errs.append("report.html %s 'No %s results' with %d among the inputs" % ("says" if said else "lacks", what, n))
# report.md's count sentence counts every metric it could list
if npass <= 64 and metrics > 60 and not re.search(r"The \d+ flagged of %d device metrics \(all of them are in report.html and profile.json" % metrics, md):
    errs.append("report.md's count sentence is not of the %d metrics" % metrics)
print("; ".join(errs[:4]) if errs else "OK %d PASS, %d devices, %d loaders, %d metrics" % (npass, devs, loaders, metrics))
PY
}

run_pair() { # NAME INPUT...: default and --detail all, then check_dir
	local n=$1; shift
	"$HR" -q --out "$TMP/$n" "$@" >"$TMP/$n.txt" 2>&1
	"$HR" -q --detail all --out "$TMP/$n-all" "$@" >"$TMP/$n-all.txt" 2>&1
	local msg
	msg=$(check_dir "$n" "$TMP/$n" "$TMP/$n-all" 2>&1)
	case "$msg" in OK*) echo "ok health_report_detail_$n ($msg)" ;; *) echo "not ok health_report_detail_$n: $msg" ;; esac
}

F=tests/data/report/fleet-faulty
# a one-node bring-up: one PASS node with its roofline and loader
mkdir -p "$TMP/in/one" "$TMP/in/noroof/node01" "$TMP/in/noloader/node01"
cp -r "$F/node01" "$TMP/in/one/"
run_pair one_node "$TMP/in/one"
# fleet-faulty: PASS node01 and node03 beside 4 flagged nodes
run_pair fleet_faulty "$F"
# the same node without roofline files, and without loader files
cp "$F/node01/loader_contention.json" "$TMP/in/noroof/node01/"
run_pair no_roofline "$TMP/in/noroof"
cp "$F/node01/roofline.json" "$TMP/in/noloader/node01/"
run_pair no_loader "$TMP/in/noloader"
# more PASS nodes than report.md and report.html list in full
scripts/bench/make-fleet 66 "$TMP/in/f66" >/dev/null 2>&1
run_pair fleet_66 "$TMP/in/f66"
