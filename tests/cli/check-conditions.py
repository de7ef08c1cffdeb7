#!/usr/bin/env python3
"""check-conditions.py FILE [KEY=VALUE ...]: the result file's "conditions"
(docs/results-schema.md) has every key with the right type, each null value
a reason, per_core = procs_on_host x threads_per_proc / online_cpus, and
"after" present exactly when the run is finished. KEY=VALUE pairs are
asserted as well: procs_on_host=4, threads_per_proc=2, after=null,
before.loadavg_1m=1.93, reason.cpu_pressure_some_avg10_pct=TEXT (a
substring of the reason). Prints nothing and exits 0 when all holds, else
says what does not and exits 1."""
import json, math, re, sys

SAMPLE = ("utc", "loadavg_1m", "cpu_pressure_some_avg10_pct", "cpu_busy_pct", "run_cpu_pct")


def main():
    path, wants = sys.argv[1], sys.argv[2:]
    d = json.load(open(path))
    bad = []
    c = d.get("conditions")
    if not isinstance(c, dict):
        print("%s: no conditions object" % path)
        return 1
    reasons = c.get("reasons")
    if not isinstance(reasons, dict):
        bad.append("reasons is not an object")
        reasons = {}
    for key in ("online_cpus", "procs_on_host", "threads_per_proc"):
        v = c.get(key)
        if not (isinstance(v, int) and not isinstance(v, bool) and v >= 1):
            bad.append("%s = %r (want an integer >= 1)" % (key, v))
    if not bad:
        want = c["procs_on_host"] * c["threads_per_proc"] / c["online_cpus"]
        if not (isinstance(c.get("per_core"), float) and abs(c["per_core"] - want) < 1e-9):
            bad.append("per_core = %r (want %g)" % (c.get("per_core"), want))
    if c.get("cpu_busy_interval_sec") != 0.2:
        bad.append("cpu_busy_interval_sec = %r" % c.get("cpu_busy_interval_sec"))
    finished = d.get("status") != "incomplete"
    for when in ("before", "after"):
        s = c.get(when)
        if when == "after" and not finished:
            if s is not None:
                bad.append("after is set while the run is incomplete")
            continue
        if not isinstance(s, dict):
            bad.append("%s = %r (want an object)" % (when, s))
            continue
        if not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", str(s.get("utc"))):
            bad.append("%s.utc = %r" % (when, s.get("utc")))
        for key in SAMPLE[1:]:
            if key not in s:
                bad.append("%s.%s missing" % (when, key))
            elif s[key] is None:
                if not reasons.get(key):
                    bad.append("%s.%s is null without a reason" % (when, key))
            elif not (isinstance(s[key], (int, float)) and math.isfinite(s[key]) and s[key] >= 0 and
                      (key == "loadavg_1m" or s[key] <= 100)):
                bad.append("%s.%s = %r" % (when, key, s[key]))
    for w in wants:
        k, v = w.split("=", 1)
        if k.startswith("reason."):
            got = reasons.get(k[7:])
            if not got or v not in got:
                bad.append("reasons.%s = %r (want it to hold %r)" % (k[7:], got, v))
            continue
        got = c
        for part in k.split("."):
            got = got.get(part) if isinstance(got, dict) else None
        if v == "null":
            ok = got is None
        elif isinstance(got, (int, float)) and not isinstance(got, bool):
            ok = abs(got - float(v)) < 1e-9
        else:
            ok = str(got) == v
        if not ok:
            bad.append("%s = %r (want %s)" % (k, got, v))
    for b in bad:
        print("%s: %s" % (path, b))
    return 1 if bad else 0


sys.exit(main())
