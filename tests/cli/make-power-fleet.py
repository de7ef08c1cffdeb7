#!/usr/bin/env python3
"""Write the fleets tests/cli/powercap_report.sh runs health_report on.

From tests/data/report/fleet-healthy (six nodes of 8 H100 SXM, an
allreduce_bw world group over all six and pair groups), each node's
roofline result gains the host.inventory of a healthy HGX H100 node
(tests/data/report/make-inventory-fleet.py) and, for every GPU, a power-cap
sweep (docs/results-schema.md, power_sweep) with a known knee:

  caps 700, 630, 560, 490, 420 W (100% ... 60% of the default 700 W);
  compute-bound GFLOP/s in % of the figure at 700 W: 100, 99, 97, 93, 85
  (recommended 560 W at a 5% tolerance), except node06 gpu2: 100, 97, 94,
  90, 82 (recommended 630 W); power held at the cap (680 W at 700 W),
  GFLOP/J = GFLOP/s / power; the memory-bound point loses nothing.
  So the fleet's cap is 630 W (node06's), worst loss there 3% (node06
  gpu2), median energy per FLOP saved there 1 - (100/680) / (99/630).

Variants (enforced power limits in the inventories; OUT/VARIANT/):
  even      every GPU at 700 W                      -> no uneven-cap WARN
  one-gpu   node05 gpu6 at 500 W                    -> node05 WARN power_limit_mismatch (the node rule) only
  one-node  every GPU of node03 at 500 W            -> node03 WARN power_cap_uneven (group world) and the
                                                       fleet-majority drift of power_limit, separately
  all-500   every GPU of every node at 500 W        -> nothing
  two-nodes node02 at 450 W, node04 at 600 W        -> node02 and node04 WARN power_cap_uneven

Usage: make-power-fleet.py OUT
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "data", "report")
sys.path.insert(0, DATA)
import importlib.util  # noqa: E402

spec = importlib.util.spec_from_file_location("inv", os.path.join(DATA, "make-inventory-fleet.py"))
inv = importlib.util.module_from_spec(spec)
spec.loader.exec_module(inv)

NODES = inv.NODES
CAPS = [700.0, 630.0, 560.0, 490.0, 420.0]
KNEE = [100, 99, 97, 93, 85]
WEAK = [100, 97, 94, 90, 82]
BASE = 750000.0


def sweep(node, dev):
    rel = WEAK if (node, dev) == ("node06", "gpu2") else KNEE
    curve = []
    for cap, r in zip(CAPS, rel):
        power = min(cap, 680.0)
        g = BASE * r / 100
        curve.append({"cap_w": cap, "pct_of_default": 100 * cap / 700, "gflops": g, "gflop_per_j": g / power,
                      "avg_power_w": power, "gbps": 3000.0})
    rec = 630.0 if rel is WEAK else 560.0
    ri = CAPS.index(rec)
    return {"gpu_uuid": "GPU-%s-%s" % (node, dev), "default_limit_w": 700.0, "original_limit_w": 700.0,
            "tolerance_pct": 5.0, "curve": curve,
            "recommendation": {"judged": True, "cap_w": rec, "compute_loss_pct": 100 - rel[ri],
                               "energy_per_flop_saved_pct": 100 * (1 - curve[0]["gflop_per_j"] / curve[ri]["gflop_per_j"])}}


def limits(variant, node):
    if variant == "one-node" and node == "node03":
        return 500.0
    if variant == "all-500":
        return 500.0
    if variant == "two-nodes":
        return {"node02": 450.0, "node04": 600.0}.get(node, 700.0)
    return 700.0


def main():
    out = sys.argv[1]
    for variant in ("even", "one-gpu", "one-node", "all-500", "two-nodes"):
        for node in NODES:
            with open(os.path.join(DATA, "fleet-healthy", node, "roofline.json")) as f:
                doc = json.load(f)
            iv = inv.inventory(doc)
            for g in iv["gpus"]:
                g["power"]["limit_enforced_w"] = limits(variant, node)
            if variant == "one-gpu" and node == "node05":
                iv["gpus"][6]["power"]["limit_enforced_w"] = 500.0
            doc["host"]["inventory"] = iv
            for d in doc["results"]["devices"]:
                if d["kind"] == "gpu":
                    d["power_sweep"] = sweep(node, d["device"])
            os.makedirs(os.path.join(out, variant, node))
            with open(os.path.join(out, variant, node, "roofline.json"), "w") as f:
                json.dump(doc, f, indent=1)
        with open(os.path.join(DATA, "fleet-healthy", "allreduce_bw.json")) as f:
            ar = f.read()
        with open(os.path.join(out, variant, "allreduce_bw.json"), "w") as f:
            f.write(ar)


if __name__ == "__main__":
    main()
