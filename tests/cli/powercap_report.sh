#!/bin/bash
# powercap_report.sh - health_report's power-cap parts on labelled fleets
# (tests/cli/make-power-fleet.py documents each variant): the uneven-cap
# WARN within a node (power_limit_mismatch) and across the nodes of an
# all-reduce group (power_cap_uneven), separate from the fleet-majority
# drift; no WARN where every GPU runs at one limit; the fleet's
# recommended cap from the sweeps, its plot and sections.
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env
T=$(mktemp -d /tmp/ch_powercap_report.XXXXXX)
trap 'rm -rf "$T"' EXIT
ok() { echo "ok $1"; }
nok() { echo "not ok $1: $2"; [ -n "${3:-}" ] && [ -f "$3" ] && sed 's/^/    /' "$3" | tail -15; }

[ -x "$B/health_report" ] || { echo "skip powercap_report: $B/health_report not built"; exit 0; }
python3 tests/cli/make-power-fleet.py "$T/fleet" || { nok powercap_report_fleet "the generator failed"; exit 0; }

# expect NAME VARIANT PYTHON-SET of (node, level, code, subject) of every non-info reason
expect() {
	local name=$1 v=$2 set=$3
	"$B/health_report" --out "$T/$v" "$T/fleet/$v" >"$T/$v.out" 2>&1; rc=$?
	if [ $rc = 0 ] && python3 - "$T/$v/profile.json" "$set" <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))
want = set(eval(sys.argv[2]))
got = {(n["name"], r["level"], r["code"], r["subject"]) for n in p["nodes"] for r in n["reasons"] if r["level"] != "info"}
assert got == want, "got %s, want %s" % (sorted(got), sorted(want))
for n in p["nodes"]:
    for r in n["reasons"]:
        if r["code"] == "power_cap_uneven":
            assert "cap all GPUs of a job alike" in r["text"] and "threshold:" in r["text"] and "source:" in r["text"], r["text"]
            assert r["action"] and "nvidia-smi -pl" in r["action"]
EOF
	then ok "$name"; else nok "$name" "exit $rc" "$T/$v.out"; fi
}
# false alarms: one limit everywhere (700 W, or 500 W on every node) flags nothing
expect powercap_even_limits_flag_nothing even 'set()'
expect powercap_all_capped_alike_flag_nothing all-500 'set()'
# recall: one GPU of a node capped (the node rule), a node capped below its group, two nodes
expect powercap_one_gpu_capped one-gpu '[("node05", "warn", "power_limit_mismatch", "gpu6")]'
expect powercap_one_node_capped one-node '[("node03", "warn", "power_cap_uneven", "world"), ("node03", "warn", "config_drift", "power_limit")]'
expect powercap_two_nodes_capped two-nodes '[("node02", "warn", "power_cap_uneven", "world"), ("node02", "warn", "config_drift", "power_limit"),
	("node04", "warn", "power_cap_uneven", "world"), ("node04", "warn", "config_drift", "power_limit")]'
grep -q "node03's GPUs run at a 500 W power limit, below the 700 W of node01 in all-reduce group 'world' (6 nodes; and in other groups)" "$T/one-node.out" &&
	ok powercap_uneven_text_names_the_group || nok powercap_uneven_text_names_the_group "text" "$T/one-node.out"
grep -q "node05 .*gpu6 enforced power limit 500 W, below the 700 W of 7 of the node's 8 GPUs" "$T/one-gpu.out" &&
	ok powercap_one_gpu_text || nok powercap_one_gpu_text "text" "$T/one-gpu.out"

# the fleet's recommended cap: the highest of the GPUs' (node06 gpu2's 630 W)
if python3 - "$T/even/profile.json" <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))
[m] = p["power_caps"]["models"]
assert m["gpu_model"] == "NVIDIA H100 80GB HBM3" and m["recommended_cap_w"] == 630 and m["pct_of_default"] == 90, m
assert m["worst"] == {"node": "node06", "device": "gpu2"} and abs(m["worst_compute_loss_pct"] - 3.0) < 1e-9
saved = 100 * (1 - (100 / 680) / (99 / 630))
assert abs(m["median_energy_per_flop_saved_pct"] - saved) < 1e-6, m["median_energy_per_flop_saved_pct"]
assert m["gpus_swept"] == 48 and m["nodes_swept"] == 6 and m["gpus_without_the_cap"] == 0 and m["tolerance_pct"] == 5
caps = {n["node"]: n["cap_w"] for n in m["nodes"]}
assert caps == {"node01": 560, "node02": 560, "node03": 560, "node04": 560, "node05": 560, "node06": 630}, caps
assert [c["cap_w"] for c in m["curve"]] == [700, 630, 560, 490, 420]
assert [c["perf_pct"] for c in m["curve"]] == [100, 99, 97, 93, 85]
assert all(c["gpus"] == 48 for c in m["curve"])
assert abs(m["curve"][2]["gflop_per_j_pct"] - 100 * (97 / 560) / (100 / 680)) < 1e-6
EOF
then ok powercap_fleet_recommendation; else nok powercap_fleet_recommendation "power_caps" "$T/even.out"; fi
grep -q "NVIDIA H100 80GB HBM3: recommended power cap 630 W (90% of the default 700 W) for 48 GPUs on 6 nodes: worst compute-bound loss 3.0% (node06 gpu2)" "$T/even.out" &&
	grep -q "^## Power caps" "$T/even/report.md" && grep -q "^| 630 W (recommended) | 90 | 48 | 99.0 | 106.9 |" "$T/even/report.md" &&
	grep -q 'data-plot="power_caps"' "$T/even/report.html" &&
	python3 -c "import sys,re; h=open(sys.argv[1]).read(); s=h[h.index('data-plot=\"power_caps\"'):]; s=s[:s.index('</figure>')]; assert len(re.findall(r'(?:points=\"|\"M|M)[0-9.]+,', s)) > 5" "$T/even/report.html" &&
	ok powercap_report_sections || nok powercap_report_sections "terminal, report.md or report.html lacks the power caps" "$T/even.out"

# the plot in a real browser: laid out, with content
CHROME=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
if [ -z "$CHROME" ]; then
	echo "skip powercap_plot_renders_in_chromium: no chromium (scripts/install-deps installs it)"
else
	"$B/health_report" --max-plots 1 --out "$T/small" "$T/fleet/even" >/dev/null 2>&1
	timeout 180 "$CHROME" --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$T/chrome" \
		--virtual-time-budget=20000 --dump-dom "file://$(readlink -f "$T/small/report.html")" >"$T/dom.html" 2>/dev/null
	if python3 - "$T/dom.html" <<'EOF'
import re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
i = dom.index('data-plot="power_caps"')
svg = re.search(r"<svg\b[^>]*>", dom[i:]).group(0)
assert 'data-rendered="yes"' in svg and int(re.search(r'data-drawn="(\d+)"', svg).group(1)) >= 10, svg[:200]
EOF
	then ok powercap_plot_renders_in_chromium; else nok powercap_plot_renders_in_chromium "not rendered"; fi
fi

# a sweep that was never measured (zeros, NaN, no default limit) gives no cap
python3 - "$T/fleet/even" "$T/bad" <<'EOF'
import json, os, shutil, sys
src, dst = sys.argv[1:3]
shutil.copytree(src, dst)
for node in sorted(os.listdir(dst)):
    f = os.path.join(dst, node, "roofline.json")
    if not os.path.isfile(f):
        continue
    d = json.load(open(f))
    for dev in d["results"]["devices"]:
        s = dev.get("power_sweep")
        if not s:
            continue
        s["recommendation"] = {"judged": False, "cap_w": None, "why": "no compute-bound figure at the default limit 700 W"}
        for c in s["curve"]:
            c["gflops"] = None if node == "node01" else 0
        if node == "node02":
            s["default_limit_w"] = None
    json.dump(d, open(f, "w"))
EOF
"$B/health_report" --out "$T/bad-out" "$T/bad" >"$T/bad.out" 2>&1; rc=$?
if [ $rc = 0 ] && python3 - "$T/bad-out/profile.json" <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))
[m] = p["power_caps"]["models"]
assert m["recommended_cap_w"] is None and m["gpus_swept"] == 40, m  # node02's sweeps lack a default limit
assert all(c["perf_pct"] is None for c in m["curve"]), m["curve"]
assert any("default_limit_w" in i["message"] for i in p["inputs"]["issues"])
EOF
then ok powercap_unmeasured_sweep_gives_no_cap; else nok powercap_unmeasured_sweep_gives_no_cap "exit $rc" "$T/bad.out"; fi
exit 0
