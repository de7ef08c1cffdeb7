#!/bin/bash
# inventory.sh - host.inventory end to end: the three binaries write it on
# this machine (no GPU, no RDMA: each missing item null with a reason, and
# health_report flags nothing for it), CH_SYSFS_ROOT feeds them a copied
# sysfs tree, and health_report's inventory checks flag exactly the edited
# nodes of tests/data/report/fleet-inventory (made by make-inventory-fleet.py)
# with the expected reasons, drift keys and Prometheus counters.
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env
T=$(mktemp -d /tmp/ch_inventory_test.XXXXXX)
trap 'rm -rf "$T"' EXIT
F=tests/data/report/fleet-inventory
ok() { echo "ok $1"; }
nok() { echo "not ok $1: $2"; [ -n "${3:-}" ] && [ -f "$3" ] && sed 's/^/    /' "$3" | tail -20; }

for b in roofline allreduce_bw loader_contention health_report; do
	[ -x "$B/$b" ] || { echo "skip inventory: $B/$b not built"; exit 0; }
done

# ---- this machine: every binary's result file carries the inventory
$B/roofline --backend cpu --kernels copy --size 1M --iters 2 -q --json "$T/roofline.json" >"$T/rf.out" 2>&1
$B/loader_contention --duration 0.2 --workers 1 --json "$T/loader_contention.json" >"$T/lc.out" 2>&1
timeout -k 10 120 $MPIRUN -np 2 $B/allreduce_bw -b 8 -e 64 -f 8 --backend mpi -n 1 -w 1 --json "$T/allreduce_bw.json" >"$T/ar.out" 2>&1
if python3 tests/cli/check-inventory.py "$T/roofline.json" "$T/loader_contention.json" "$T/allreduce_bw.json" >"$T/chk.out" 2>&1; then
	ok inventory_in_every_result_file
else
	nok inventory_in_every_result_file "see below" "$T/chk.out"
fi

# ---- CH_SYSFS_ROOT: a copied tree of an 8-port NDR server
CH_SYSFS_ROOT=tests/data/sysfs/hgx-ndr8 $B/roofline --backend cpu --kernels copy --size 1M --iters 2 -q \
	--json "$T/ndr8.json" >"$T/ndr8.out" 2>&1
if python3 - "$T/ndr8.json" <<'EOF'
import json, sys
inv = json.load(open(sys.argv[1]))["host"]["inventory"]
rdma = [n for n in inv["nics"] if n["kind"] == "rdma"]
assert [n["device"] for n in rdma] == ["mlx5_%d" % i for i in range(8)], rdma
assert all(n["state"] == "ACTIVE" and n["rate_gbps"] == 400 and n["link_layer"] == "InfiniBand" for n in rdma)
assert inv["cpu"]["governor"] == "performance" and inv["cpu"]["turbo"] is True
assert "nics" not in inv["reasons"], inv["reasons"]
EOF
then ok inventory_sysfs_root; else nok inventory_sysfs_root "hgx-ndr8 tree not read" "$T/ndr8.out"; fi

# ---- NVML read through dlopen: a stand-in libnvidia-ml.so.1 with two GPUs
# (tests/fake-nvml/fake_nvml.c documents its readings)
FAKE=$B/tests/fake-nvml
if [ -e "$FAKE/libnvidia-ml.so.1" ]; then
	LD_LIBRARY_PATH=$FAKE $B/roofline --backend cpu --kernels copy --size 1M --iters 2 -q \
		--json "$T/fake.json" >"$T/fake.out" 2>&1
	if python3 tests/cli/check-inventory.py "$T/fake.json" >"$T/fchk.out" 2>&1 && python3 - "$T/fake.json" <<'EOF'
import json, sys
g0, g1 = json.load(open(sys.argv[1]))["host"]["inventory"]["gpus"]
assert (g0["index"], g0["pci_bus_id"], g1["pci_bus_id"]) == (0, "0000:1b:00.0", "0000:43:00.0")
assert g1["pcie"] == {"gen_current": 5, "gen_max": 5, "width_current": 8, "width_max": 16}
assert (g0["nvlink"]["links"], g0["nvlink"]["up"], g1["nvlink"]["up"]) == (18, 18, 17)
assert g1["nvlink"]["states"][3] == "down" and g0["nvlink"]["errors"]["crc_flit"] == 2
assert g1["nvlink"]["errors"]["replay"] is None
assert g1["reasons"]["nvlink.errors.replay"] == "nvmlDeviceGetNvLinkErrorCounter: Not Supported"
assert g1["ecc"]["volatile"] == {"corrected": 0, "uncorrected": 1}
assert g0["remap"] == {"correctable_rows": 0, "uncorrectable_rows": 1, "pending": True, "failure": False}
assert g0["retired_pages"]["pending"] is None
assert g0["reasons"]["retired_pages.pending"] == "nvmlDeviceGetRetiredPagesPendingStatus is not in this driver's libnvidia-ml.so.1"
assert g1["power"] == {"limit_default_w": 700.0, "limit_enforced_w": 500.0}
assert g1["clocks"]["sm_app_mhz"] == 1410 and g0["clocks"]["sm_max_mhz"] == 1980
assert g1["clock_event_reasons"] == ["gpu_idle", "hw_slowdown"] and g0["persistence"] is True
assert g0["driver_version"] == "550.54.15" and g0["vbios_version"] == "96.00.74.00.01"
assert g0["uuid"].startswith("GPU-") and g1["serial"] == "1652300000001"
EOF
	then ok inventory_nvml_fields; else nok inventory_nvml_fields "values read back differ" "$T/fchk.out"; fi
	$B/health_report --out "$T/fake" "$T/fake.json" >"$T/fake-hr.out" 2>&1
	if python3 - "$T/fake/profile.json" <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))
inv = {"pcie_link", "nvlink_down", "nvlink_errors", "ecc_uncorrected", "row_remap", "power_limit_mismatch",
       "clocks_capped", "nic_port_down", "nic_rate", "cpu_governor", "cpu_turbo"}
got = sorted((r["level"], r["code"], r["subject"]) for n in p["nodes"] for r in n["reasons"] if r["code"] in inv)
want = sorted([("fail", "pcie_link", "gpu1"), ("fail", "nvlink_down", "gpu1"), ("fail", "nvlink_errors", "gpu0"),
               ("fail", "ecc_uncorrected", "gpu1"), ("fail", "row_remap", "gpu0"),
               ("warn", "power_limit_mismatch", "gpu1"), ("warn", "clocks_capped", "gpu1"),
               ("warn", "clocks_capped", "gpu1")])
assert got == want, got
EOF
	then ok inventory_nvml_rules; else nok inventory_nvml_rules "rules on the NVML readings" "$T/fake-hr.out"; fi
else
	echo "skip inventory_nvml_fields: $FAKE/libnvidia-ml.so.1 not built (make test builds it)"
	echo "skip inventory_nvml_rules: $FAKE/libnvidia-ml.so.1 not built"
fi

# ---- health_report on this machine's files: no inventory reason above info
$B/health_report --out "$T/here" "$T/roofline.json" "$T/loader_contention.json" "$T/allreduce_bw.json" >"$T/here.out" 2>&1
if python3 - "$T/here/profile.json" <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))
codes = {"pcie_link", "nvlink_down", "nvlink_errors", "ecc_uncorrected", "row_remap", "power_limit_mismatch",
         "clocks_capped", "nic_port_down", "nic_rate", "cpu_governor", "cpu_turbo"}
bad = [(n["name"], r["code"]) for n in p["nodes"] for r in n["reasons"] if r["code"] in codes]
assert not bad, bad
assert all(n["inventory"] is not None for n in p["nodes"])
EOF
then ok inventory_here_flags_nothing; else nok inventory_here_flags_nothing "an inventory reason here" "$T/here.out"; fi

# ---- fleets: exactly the edited nodes, with their reasons
expect() { # NAME VARIANT WANT-EXIT PYTHON-SET-OF-(node, level, code, subject)
	local name=$1 v=$2 want=$3 set=$4
	$B/health_report --out "$T/$v" "$F/$v" >"$T/$v.out" 2>&1; rc=$?
	if [ $rc = "$want" ] && python3 - "$T/$v/profile.json" "$set" <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))
want = set(eval(sys.argv[2]))
got = {(n["name"], r["level"], r["code"], r["subject"]) for n in p["nodes"] for r in n["reasons"] if r["level"] != "info"}
assert got == want, "got %s, want %s" % (sorted(got), sorted(want))
for n in p["nodes"]:
    for r in n["reasons"]:
        if r["code"] != "config_drift" and r["level"] != "info":
            assert "threshold:" in r["text"] and "source:" in r["text"], r["text"]
EOF
	then ok "$name"; else nok "$name" "exit $rc (want $want)" "$T/$v.out"; fi
}
expect inventory_unedited_fleet_flags_nothing healthy 0 'set()'
expect inventory_four_faults faulty 1 '[("node02","fail","pcie_link","gpu3"), ("node03","fail","nvlink_down","gpu5"),
	("node04","fail","ecc_uncorrected","gpu1"), ("node05","warn","power_limit_mismatch","gpu6")]'
expect inventory_other_checks more 1 '[("node01","warn","config_drift","nic_fw"), ("node02","fail","nic_port_down","mlx5_3 port 1"),
	("node03","fail","nic_rate","mlx5_5 port 1"), ("node04","warn","cpu_governor","cpu"),
	("node05","fail","row_remap","gpu2"), ("node06","warn","clocks_capped","gpu0")]'
grep -q "node04 .*1 uncorrectable ECC error" "$T/faulty.out" && grep -q "drain candidates: node02 node03 node04$" "$T/faulty.out" &&
	ok inventory_faults_in_summary || nok inventory_faults_in_summary "summary lacks the reasons" "$T/faulty.out"

# ---- Prometheus counters per node and GPU, and the NIC rate each GPU reaches
P=$T/faulty/health.prom
M=$T/more/health.prom
if [ -s "$P" ] && grep -qx 'clusterhealth_gpu_pcie_link_width{node="node02",gpu="3",kind="current"} 8' "$P" &&
	grep -qx 'clusterhealth_gpu_pcie_link_width{node="node02",gpu="3",kind="max"} 16' "$P" &&
	grep -qx 'clusterhealth_gpu_ecc_errors_total{node="node04",gpu="1",type="uncorrected",counter="volatile"} 1' "$P" &&
	grep -qx 'clusterhealth_gpu_nvlink_links{node="node03",gpu="5",state="up"} 17' "$P" &&
	grep -qx 'clusterhealth_gpu_power_limit_watts{node="node05",gpu="6",kind="enforced"} 500' "$P" &&
	grep -qx 'clusterhealth_gpu_nic_rate_bytes_per_second{node="node01",gpu="0"} 5e+10' "$P" &&
	grep -qx 'clusterhealth_nic_rate_bytes_per_second{node="node03",device="mlx5_5",port="1",link_layer="InfiniBand"} 1.25e+10' "$M" &&
	grep -qx 'clusterhealth_nic_port_active{node="node02",device="mlx5_3",port="1",link_layer="InfiniBand"} 0' "$M" &&
	grep -qx 'clusterhealth_gpu_remap_pending{node="node05",gpu="2"} 1' "$M" &&
	grep -qx 'clusterhealth_gpu_nic_rate_bytes_per_second{node="node02",gpu="3"} 0' "$M"; then
	ok inventory_prometheus
else
	nok inventory_prometheus "counters missing" "$P"
fi

# ---- drift: VBIOS, NIC firmware and power limit are drift keys
if python3 - "$T/more/profile.json" "$T/healthy/profile.json" <<'EOF'
import json, sys
more, healthy = (json.load(open(f)) for f in sys.argv[1:3])
d = {x["key"]: x for x in more["drift"]}
assert list(d) == ["nic_fw"], list(d)
assert d["nic_fw"]["majority"] == "28.39.1002" and d["nic_fw"]["nodes"] == [{"node": "node01", "value": "28.37.1014"}]
cfg = healthy["nodes"][0]["config"]
assert cfg["vbios"] == "96.00.74.00.01" and cfg["nic_fw"] == "28.39.1002" and cfg["power_limit"] == "700 W", cfg
EOF
then ok inventory_drift_keys; else nok inventory_drift_keys "drift table"; fi
exit 0
