#!/usr/bin/env python3
"""check-inventory.py FILE... - every result file carries host.inventory
(docs/results-schema.md) whose records say why each null field is null.

Checked per file: host.inventory has gpus, nics (arrays), cpu and reasons
(objects); an empty gpus list has reasons.gpus; no RDMA port means
reasons.nics; every GPU, NIC and cpu record has a reasons object holding a
non-empty string for each of its null fields (nested fields by dotted path,
a null parent covering its children); every NIC has the fields health_report
and the verdicts read (device, port, state, rate_gbps, link_layer,
near_gpus). Prints one line per problem; exit 1 when any, 0 otherwise.
"""
import json
import sys

NIC_KEYS = ("device", "port", "kind", "state", "phys_state", "rate_gbps", "link_layer",
            "fw_version", "numa_node", "pci_bus_id", "near_gpus")


def nulls(o, prefix=""):
    for k, v in o.items():
        if k == "reasons":
            continue
        p = prefix + k
        if v is None:
            yield p
        elif isinstance(v, dict):
            yield from nulls(v, p + ".")


def check_record(where, rec, problems):
    rs = rec.get("reasons")
    if not isinstance(rs, dict):
        problems.append("%s: no reasons object" % where)
        return
    for p in nulls(rec):
        why = rs.get(p)
        if not (isinstance(why, str) and why):
            problems.append("%s: '%s' is null without a reason" % (where, p))


def main(paths):
    problems = []
    for path in paths:
        try:
            with open(path) as f:
                doc = json.load(f)
        except (OSError, ValueError) as e:
            problems.append("%s: unreadable: %s" % (path, e))
            continue
        inv = (doc.get("host") or {}).get("inventory")
        if not isinstance(inv, dict):
            problems.append("%s: no host.inventory" % path)
            continue
        gpus, nics, cpu, rs = inv.get("gpus"), inv.get("nics"), inv.get("cpu"), inv.get("reasons")
        if not isinstance(gpus, list) or not isinstance(nics, list) or not isinstance(cpu, dict) \
                or not isinstance(rs, dict):
            problems.append("%s: inventory lacks gpus, nics, cpu or reasons" % path)
            continue
        if not gpus and not rs.get("gpus"):
            problems.append("%s: no GPU and no reasons.gpus" % path)
        if not any(n.get("kind") == "rdma" for n in nics) and not rs.get("nics"):
            problems.append("%s: no RDMA port and no reasons.nics" % path)
        for g in gpus:
            check_record("%s: gpu %s" % (path, g.get("index")), g, problems)
        for n in nics:
            missing = [k for k in NIC_KEYS if k not in n]
            if missing:
                problems.append("%s: nic %s lacks %s" % (path, n.get("device"), ",".join(missing)))
            check_record("%s: nic %s" % (path, n.get("device")), n, problems)
        check_record("%s: cpu" % path, cpu, problems)
    for p in problems:
        print(p)
    return 1 if problems or not paths else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
