#!/bin/bash
# host_link.sh - roofline's host link measurement end to end over the
# stand-in GPU backend (build/tests/roofline-standin) and the stand-in NVML
# (tests/fake-nvml: gpu0 PCIe Gen5 x16, gpu1 Gen5 x8 of x16): every GPU's
# copies each way and both at once, alone and all at once, the PCIe link
# and its expectation beside it, the device-to-device matrix with P2P on
# and off, in the result file and the printed table.
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env
R=$B/tests/roofline-standin
FAKE=$B/tests/fake-nvml
for f in "$R" "$FAKE/libnvidia-ml.so.1"; do
	[ -e "$f" ] || { echo "skip host_link: $f not built (make test builds it)"; exit 0; }
done
T=$(mktemp -d "${TMPDIR:-/tmp}/ch_host_link.XXXXXX")
trap 'rm -rf "$T"' EXIT
export LD_LIBRARY_PATH=$FAKE FAKE_NVML_LOAD=compute FAKE_NVML_STATE=$T/s.nvml CH_POWER_STATE=$T/power-limits.json
unset FAKE_NVML_NO_PERMISSION FAKE_NVML_READBACK_MS FAKE_NVML_OTHER_LIMIT_W CH_STANDIN_FAIL

timeout 120 "$R" --backend cuda --kernels triad --iters 3 --json "$T/r.json" >"$T/out.txt" 2>&1
check "host_link: roofline over the stand-in GPUs exits 0" [ $? -eq 0 ]
check "host_link: every GPU's copies, link and expectation in the result file" python3 - "$T/r.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
hl = r["host_link"]
assert hl["bytes"] == 256 << 20 and hl["calls"] == 5 and "PCIe line rate" in hl["expectation_source"]
g = {d["device"]: d["host_link"] for d in r["devices"]}
g0, g1 = g["gpu0"], g["gpu1"]
for x in (g0, g1):
    for k in ("h2d_gbps", "d2h_gbps", "bidir_gbps", "bidir_h2d_gbps", "bidir_d2h_gbps"):
        assert x["alone"][k] > 0 and x["all_at_once"][k] > 0, k
assert g1["pcie"] == {"gen_current": 5, "gen_max": 5, "width_current": 8, "width_max": 16}, g1["pcie"]
assert abs(g1["expected_gbps"] - 26.78) < 0.01 and abs(g1["expected_max_gbps"] - 53.56) < 0.01
assert abs(g0["expected_gbps"] - 53.56) < 0.01
assert g1["alone"]["h2d_gbps"] < 0.6 * g1["expected_max_gbps"]  # the x8 link shows
assert all(d["nvml_match"] == "index" for d in r["devices"])  # the stand-in's NVML match, recorded
peer = hl["peer"]
assert peer["devices"] == ["gpu0", "gpu1"]
assert peer["p2p_on"][0][0] is None and peer["p2p_on"][0][1] > 0 and peer["p2p_off"][1][0] > 0
PY
check "host_link: the printed lines name the link and the expectation" \
	grep -qF '# gpu1   H2D 27.7 GB/s, D2H 27.7, both at once 49.9; with every GPU copying: H2D 27.7, D2H 27.7; PCIe Gen5 x8 (max Gen5 x16), expected 53.6 GB/s one way' "$T/out.txt"
check "host_link: the P2P matrices are printed" \
	bash -c 'grep -qF "# device to device, P2P on" "$1" && grep -qF "# device to device, P2P off" "$1"' _ "$T/out.txt"
# the reporter: gpu1 (x8 of x16, half its expectation) FAIL host_link_low
# naming the link; gpu0 meets its expectation; a GPU at 70% of it with a
# full-width link WARN; one without its link not judged
HR=$B/health_report
if [ -x "$HR" ]; then
	codes() { # FILE: "device code level" of every host_link reason
		LD_LIBRARY_PATH= "$HR" "$1" --out "$T/rep" >/dev/null 2>&1
		python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for n in d["nodes"]:
    for r in n.get("reasons", []):
        if r["code"].startswith("host_link"):
            print(r.get("subject"), r["code"], r["level"])' "$T/rep/profile.json" | sort
	}
	export -f codes
	export HR T
	check "host_link: health_report FAILs the GPU whose link trained down, and only it" \
		bash -c '[ "$(codes "$1")" = "gpu1 host_link_low fail" ]' _ "$T/r.json"
	python3 - "$T/r.json" "$T/r70.json" "$T/rnolink.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
g = {x["device"]: x for x in d["results"]["devices"]}
g0 = g["gpu0"]["host_link"]
g0["alone"]["h2d_gbps"] = 0.7 * g0["expected_max_gbps"]
json.dump(d, open(sys.argv[2], "w"))
g0["alone"]["h2d_gbps"] = 55.0
g0["pcie"] = None
g0["expected_gbps"] = g0["expected_max_gbps"] = None
json.dump(d, open(sys.argv[3], "w"))
PY
	check "host_link: a full-width link at 70% of its expectation is a WARN" \
		bash -c '[ "$(codes "$1" | head -1)" = "gpu0 host_link_low warn" ]' _ "$T/r70.json"
	check "host_link: a GPU without its link is not judged, never PASS" \
		bash -c 'codes "$1" | grep -qx "gpu0 host_link_not_judged info"' _ "$T/rnolink.json"
	LD_LIBRARY_PATH= "$HR" "$T/r.json" --out "$T/rep" >"$T/rep.txt" 2>&1
	check "host_link: the reason names both figures, the share, the expectation and its source" \
		grep -qF "gpu1's host copies reach 27.7 GB/s host to device and 27.7 device to host (median, measured), 52% of the 53.6 GB/s one-way expectation of its link's maximum, Gen5 x16 (given: PCIe line rate x 0.85" "$T/rep.txt"
fi

# one GPU (--devices 1): no all-at-once, no peer matrix
timeout 120 "$R" --backend cuda --devices 1 --kernels triad --iters 3 --json "$T/r1.json" >"$T/out1.txt" 2>&1
check "host_link: one GPU: no peer matrix, no all-at-once figures" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["results"]
assert r["host_link"]["peer"] is None and r["host_link"]["all_at_once_total_gbps"] is None
assert r["devices"][0]["host_link"]["all_at_once"] is None' "$T/r1.json"
exit 0
