#!/usr/bin/env python3
"""Write the fleets health_report's inventory checks are tested on.

Each node's roofline result file of fleet-healthy/ (six nodes of 8 H100 SXM)
gains a host.inventory (docs/results-schema.md) of a healthy HGX H100 node:
PCIe Gen5 x16, 18 NVLink links up with no errors, ECC on with no errors, no
remap pending, every GPU at 700 W, eight NDR InfiniBand ports at 400 Gb/s
(one near each GPU), the performance governor, turbo on. Variants, each
edited in exactly the places named:

  fleet-inventory/healthy/  nothing edited: nothing flagged (exit 0)
  fleet-inventory/faulty/   the four faults of the inventory checks:
    node02 gpu3 PCIe link x8 of x16                -> node02 FAIL pcie_link
    node03 gpu5 NVLink link 7 down (17 of 18 up)   -> node03 FAIL nvlink_down
    node04 gpu1 one volatile uncorrectable ECC error (a DBE)
                                                   -> node04 FAIL ecc_uncorrected
    node05 gpu6 enforced power limit 500 W, the others 700 W
                                                   -> node05 WARN power_limit_mismatch
  fleet-inventory/more/     the other checks:
    node01 NIC firmware 28.37.1014, the fleet's 28.39.1002
                                                   -> node01 WARN config_drift (nic_fw)
    node02 mlx5_3 port 1 DOWN / Polling            -> node02 FAIL nic_port_down
    node03 mlx5_5 port 1 at 100 Gb/sec (1X NDR)    -> node03 FAIL nic_rate
    node04 governor powersave                      -> node04 WARN cpu_governor
    node05 gpu2 row remap pending                  -> node05 FAIL row_remap
    node06 gpu0 hw_slowdown at idle                -> node06 WARN clocks_capped

Run from the repository root:  python3 tests/data/report/make-inventory-fleet.py
"""
import copy
import json
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
NODES = ["node%02d" % i for i in range(1, 7)]
NIC_BUS = ["0000:17:00.0", "0000:27:00.0", "0000:37:00.0", "0000:47:00.0",
           "0000:57:00.0", "0000:67:00.0", "0000:77:00.0", "0000:87:00.0"]


def gpu(k, g, node):
    return {
        "index": k, "name": "NVIDIA H100 80GB HBM3", "pci_bus_id": g["pci_bus_id"],
        "uuid": "GPU-%08x-0000-0000-0000-%012x" % (NODES.index(node) + 1, k),
        "serial": "16523%02d%05d" % (NODES.index(node) + 1, k),
        "pcie": {"gen_current": 5, "gen_max": 5, "width_current": 16, "width_max": 16},
        "nvlink": {"links": 18, "up": 18, "states": ["up"] * 18,
                   "errors": {"replay": 0, "recovery": 0, "crc_flit": 0, "crc_data": 0, "ecc_data": 0}},
        "ecc": {"mode_current": "enabled", "mode_pending": "enabled",
                "volatile": {"corrected": 0, "uncorrected": 0},
                "aggregate": {"corrected": 0, "uncorrected": 0}},
        "remap": {"correctable_rows": 0, "uncorrectable_rows": 0, "pending": False, "failure": False},
        "retired_pages": {"single_bit": None, "double_bit": None, "pending": None},
        "power": {"limit_default_w": 700.0, "limit_enforced_w": 700.0},
        "clocks": {"sm_mhz": 345, "sm_max_mhz": 1980, "mem_mhz": 2619, "mem_max_mhz": 2619,
                   "sm_app_mhz": 1980, "sm_default_app_mhz": 1980},
        "persistence": True, "clock_event_reasons": ["gpu_idle"],
        "driver_version": "550.54.15", "vbios_version": "96.00.74.00.01",
        "reasons": {"retired_pages.single_bit": "nvmlDeviceGetRetiredPages: Not Supported",
                    "retired_pages.double_bit": "nvmlDeviceGetRetiredPages: Not Supported",
                    "retired_pages.pending": "nvmlDeviceGetRetiredPagesPendingStatus: Not Supported"},
    }


def nic(k):
    return {"device": "mlx5_%d" % k, "port": 1, "kind": "rdma", "state": "ACTIVE", "phys_state": "LinkUp",
            "rate_text": "400 Gb/sec (4X NDR)", "rate_gbps": 400.0, "link_layer": "InfiniBand",
            "fw_version": "28.39.1002", "pci_bus_id": NIC_BUS[k], "numa_node": 0 if k < 4 else 1,
            "netdev": "ibp%ds0" % int(NIC_BUS[k][5:7], 16), "near_gpus": [k], "near_by": "pcie_switch",
            "reasons": {}}


def inventory(doc):
    node = doc["host"]["hostname"]
    return {"gpus": [gpu(k, g, node) for k, g in enumerate(doc["host"]["gpus"])],
            "nics": [nic(k) for k in range(8)],
            "cpu": {"governor": "performance", "governors": {"performance": 224}, "turbo": True,
                    "turbo_source": "intel_pstate/no_turbo", "reasons": {}},
            "reasons": {}}


def edit_faulty(node, inv):
    g = inv["gpus"]
    if node == "node02":
        g[3]["pcie"]["width_current"] = 8
    elif node == "node03":
        g[5]["nvlink"]["up"] = 17
        g[5]["nvlink"]["states"][7] = "down"
    elif node == "node04":
        g[1]["ecc"]["volatile"]["uncorrected"] = 1
        g[1]["ecc"]["aggregate"]["uncorrected"] = 1
    elif node == "node05":
        g[6]["power"]["limit_enforced_w"] = 500.0


def edit_more(node, inv):
    g, n = inv["gpus"], inv["nics"]
    if node == "node01":
        for x in n:
            x["fw_version"] = "28.37.1014"
    elif node == "node02":
        n[3].update(state="DOWN", phys_state="Polling", rate_text="10 Gb/sec (4X SDR)", rate_gbps=10.0)
    elif node == "node03":
        n[5].update(rate_text="100 Gb/sec (1X NDR)", rate_gbps=100.0)
    elif node == "node04":
        inv["cpu"].update(governor="powersave", governors={"powersave": 224})
    elif node == "node05":
        g[2]["remap"]["pending"] = True
    elif node == "node06":
        g[0]["clock_event_reasons"] = ["gpu_idle", "hw_slowdown"]


def main():
    top = os.path.join(HERE, "fleet-inventory")
    shutil.rmtree(top, ignore_errors=True)
    for variant, edit in (("healthy", None), ("faulty", edit_faulty), ("more", edit_more)):
        for node in NODES:
            with open(os.path.join(HERE, "fleet-healthy", node, "roofline.json")) as f:
                doc = json.load(f)
            inv = inventory(doc)
            if edit:
                edit(node, inv)
            doc["host"]["inventory"] = inv
            out = os.path.join(top, variant, node)
            os.makedirs(out)
            with open(os.path.join(out, "roofline.json"), "w") as f:
                json.dump(doc, f, indent=2)
                f.write("\n")


if __name__ == "__main__":
    main()
