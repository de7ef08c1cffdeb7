#!/usr/bin/env python3
"""Write a `promtool test rules` file for deploy/prometheus/clusterhealth-rules.yml
from health_report's own outputs.

Usage: prom-rule-tests.py RULES OUT DIR...

Each DIR holds a fleet report (health.prom, profile.json) and, optionally,
the history check of the same night (history.prom from `health_report
history --prom`, history.json from its --json). For each DIR the test file
gets two test groups:

  - every sample of DIR's .prom files as an input series, constant for 72 h
    (one sample an hour), but clusterhealth_report_generated_timestamp_seconds,
    whose value is set to 0 (the test's clock starts at the Unix epoch, so the
    report is 2 h old at 2 h and 60 h old at 60 h); the alerts expected at 2 h
    come from profile.json and history.json, not from the .prom files: a FAIL
    node, a drain candidate, a hard fault (a FAIL reason of a code listed
    below, counted per node and code), a REGRESSED metric; no stale alert at
    2 h, ClusterhealthReportStale at 60 h;
  - the first node's verdict series for 24 h only, the others' for 72 h:
    ClusterhealthSweepStale for that node at 80 h (missing from two nights'
    reports), not at 50 h.

Annotations are the rules' templates with the alert's labels and value.
Prints how many alerts of each name the file expects.
"""
import json
import os
import re
import sys

import yaml
from prometheus_client.parser import text_string_to_metric_families

# hard faults: FAIL reasons that make a drain candidate by themselves
# (docs/health_report.md, "Drain candidates" and the hardware inventory checks)
HARD = {"validation_failed", "wrong_results", "pcie_link", "nvlink_down", "ecc_uncorrected",
        "row_remap", "nic_port_down", "checkpoint_read_back"}


def load_samples(path):
    out = []
    with open(path, encoding="utf-8") as f:
        for fam in text_string_to_metric_families(f.read()):
            for s in fam.samples:
                out.append((s.name, dict(s.labels), s.value))
    return out


def series_text(name, labels):
    if not labels:
        return name
    esc = lambda v: v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return name + "{" + ",".join('%s="%s"' % (k, esc(v)) for k, v in labels.items()) + "}"


def fmt_value(v):
    return "%d" % v if float(v).is_integer() else repr(float(v))


def annotations(rule, labels, value):
    out = {}
    for k, t in (rule.get("annotations") or {}).items():
        t = re.sub(r"\{\{ \$labels\.(\w+) \}\}", lambda m: labels.get(m.group(1), ""), t)
        out[k] = t.replace("{{ $value }}", fmt_value(value))
    return out


def alert(rules, name, labels, value):
    r = rules[name]
    lab = dict(labels)
    lab.update(r.get("labels") or {})
    return {"exp_labels": lab, "exp_annotations": annotations(r, labels, value)}


def main():
    rules_path, out_path, dirs = sys.argv[1], sys.argv[2], sys.argv[3:]
    with open(rules_path, encoding="utf-8") as f:
        doc = yaml.safe_load(f)
    rules = {r["alert"]: r for g in doc["groups"] for r in g["rules"] if "alert" in r}
    tests, counts = [], {}
    for d in dirs:
        samples = load_samples(os.path.join(d, "health.prom"))
        if os.path.exists(os.path.join(d, "history.prom")):
            samples += load_samples(os.path.join(d, "history.prom"))
        with open(os.path.join(d, "profile.json"), encoding="utf-8") as f:
            prof = json.load(f)
        hist = {"regressions": []}
        if os.path.exists(os.path.join(d, "history.json")):
            with open(os.path.join(d, "history.json"), encoding="utf-8") as f:
                hist = json.load(f)

        exp = {n: [] for n in rules}
        for node in prof["nodes"]:
            if node["verdict"] == "FAIL":
                exp["ClusterhealthNodeFail"].append(alert(rules, "ClusterhealthNodeFail", {"node": node["name"]}, 2))
            if node["drain_candidate"]:
                exp["ClusterhealthDrainCandidate"].append(
                    alert(rules, "ClusterhealthDrainCandidate", {"node": node["name"]}, 1))
            hard = {}
            for r in node["reasons"]:
                if r["level"] == "fail" and r["code"] in HARD:
                    hard[r["code"]] = hard.get(r["code"], 0) + 1
            for code, n in sorted(hard.items()):
                exp["ClusterhealthHardwareFault"].append(alert(
                    rules, "ClusterhealthHardwareFault", {"node": node["name"], "code": code, "level": "fail"}, n))
        for g in hist["regressions"]:
            if g["persisted"]:
                exp["ClusterhealthMetricRegressed"].append(alert(
                    rules, "ClusterhealthMetricRegressed", {"node": g["node"], "gpu": g["gpu"], "metric": g["metric"]}, 1))

        inputs = []
        for name, labels, v in samples:
            if name == "clusterhealth_report_generated_timestamp_seconds":
                v = 0
            inputs.append({"series": series_text(name, labels), "values": "%sx72" % fmt_value(v)})
        checks = [{"eval_time": "2h", "alertname": n, "exp_alerts": a} for n, a in sorted(exp.items())
                  if n not in ("ClusterhealthSweepStale", "ClusterhealthReportStale")]
        checks += [{"eval_time": "2h", "alertname": "ClusterhealthSweepStale", "exp_alerts": []},
                   {"eval_time": "2h", "alertname": "ClusterhealthReportStale", "exp_alerts": []},
                   {"eval_time": "60h", "alertname": "ClusterhealthReportStale",
                    "exp_alerts": [alert(rules, "ClusterhealthReportStale", {}, 60 * 3600)]}]
        tests.append({"name": d + ": the fleet report's series", "interval": "1h",
                      "input_series": inputs, "alert_rule_test": checks})
        for n, a in exp.items():
            counts[n] = counts.get(n, 0) + len(a)

        verdicts = [(labels, v) for name, labels, v in samples if name == "clusterhealth_node_verdict"]
        first = verdicts[0][0]["node"]
        inputs = [{"series": series_text("clusterhealth_node_verdict", labels),
                   "values": "%sx%d" % (fmt_value(v), 24 if labels["node"] == first else 72)}
                  for labels, v in verdicts]
        tests.append({"name": d + ": node %s missing from two nights' reports" % first, "interval": "1h",
                      "input_series": inputs, "alert_rule_test": [
                          {"eval_time": "50h", "alertname": "ClusterhealthSweepStale", "exp_alerts": []},
                          {"eval_time": "80h", "alertname": "ClusterhealthSweepStale",
                           "exp_alerts": [alert(rules, "ClusterhealthSweepStale", {"node": first}, 0)]}]})
        counts["ClusterhealthSweepStale"] = counts.get("ClusterhealthSweepStale", 0) + 1
        counts["ClusterhealthReportStale"] = counts.get("ClusterhealthReportStale", 0) + 1

    with open(out_path, "w", encoding="utf-8") as f:
        json.dump({"rule_files": [os.path.abspath(rules_path)], "evaluation_interval": "5m", "tests": tests},
                  f, indent=1)
    print(" ".join("%s=%d" % (n, counts[n]) for n in sorted(counts)))


if __name__ == "__main__":
    main()
