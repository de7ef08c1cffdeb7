#!/bin/bash
# fleet_generators_fresh.sh - the synthetic fleets' re-measurements are fresh
# measurements (tests/data/report/make-noise-fleet.py, make-nights.py): the
# all-reduce cell that allreduce_bw would measure again (a dip, the lower
# placement of a gap) carries in "confirm" a value drawn with its own sweep
# noise and cell noise around the sweep's noiseless peak, from the
# re-measurements' own random stream, so it shares no noise with the first
# measurement and every other figure of a seed is what it was.
#   - fresh: over 400 one-node fleets of make-noise-fleet.py and 300 nights
#     of one make-nights.py node (sigma 10%, no persistent offsets), the
#     correlation between a re-measured cell (log of busbw over the
#     noiseless curve) and its sweep's level (the mean of the same over the
#     sweep's other cells) is under 0.25 in size (a re-measurement that
#     shares the sweep's noise gives about 0.7: half its variance is the
#     sweep's), its standard deviation within 0.12-0.165 (two draws of 10%:
#     0.141) and its mean within 0.03 of 0;
#   - the CPU socket's roofs_again (make-nights.py, 300 nights at 10%): its
#     correlation with the first measurement under 0.25 in size, sd
#     0.08-0.125 (one draw of 10%), mean within 0.03 of 0;
#   - own stream: sweep() with two different re-measurement streams writes
#     the same figures but for the re-measurements, which differ;
#   - checkpoint_io's second write (results.sync.again[0], --repeat 2) is
#     fresh likewise: over the same fleets and nights its correlation with
#     the first write (logs) is under 0.25 in size, its sd 0.08-0.12 (one
#     draw of 10%), its mean within 0.03 of 0;
#   - the other figures of a seed: make-noise-fleet.py 0.1 3 6's files less
#     every "confirm" and "again" hash to what the generator has always written (the
#     fixed-seed counts of health_report_false_alarms.sh rest on them).
# Prints "ok NAME", "not ok NAME: why" or "skip NAME: why".
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env
TMP=$(mktemp -d /tmp/ch_fleet_fresh.XXXXXX)
[ -n "${KEEP:-}" ] || trap 'rm -rf "$TMP"' EXIT
python3 - "$TMP" >"$TMP/out" 2>&1 <<'PY'
import hashlib, importlib.util, json, math, os, random, shutil, sys
tmp = sys.argv[1]


def load(name, path):
    spec = importlib.util.spec_from_file_location(name, os.path.join("tests", "data", "report", path))
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


nf, mn = load("nf", "make-noise-fleet.py"), load("mn", "make-nights.py")


def cells(sw, peak):
    """(re-measured cell, its sweep's other cells), each as log(busbw /
    noiseless curve), for the cells sweep() re-measures: a dip, a gap's
    lower placement"""
    ref = lambda size, c: math.log(c["busbw_gbps"] / nf.curve(peak, size))
    out = []
    for j, row in enumerate(sw["rows"]):
        for half in ("out_of_place", "in_place"):
            c, other = row[half].get("confirm"), row["in_place" if half == "out_of_place" else "out_of_place"]
            if not c or c["why"] not in ("dip", "gap") or \
                    (c["why"] == "gap" and row[half]["busbw_gbps"] > other["busbw_gbps"]):
                continue
            rest = [ref(x["bytes"], x[h]) for i, x in enumerate(sw["rows"]) for h in ("out_of_place", "in_place")
                    if (i, h) != (j, half)]
            out.append((ref(row["bytes"], c), sum(rest) / len(rest)))
    return out


def fresh(name, pts, what_n="cells: correlation with the sweep", sd_lo=0.12, sd_hi=0.165, n_min=300):
    """(re-measurement, what it must not share noise with) pairs: their
    correlation under 0.25 in size, the re-measurement's sd within
    [sd_lo, sd_hi] and its mean within 0.03 of 0"""
    n = len(pts)
    mx, my = sum(p[0] for p in pts) / n, sum(p[1] for p in pts) / n
    sxx = sum((p[0] - mx) ** 2 for p in pts)
    r = sum((p[0] - mx) * (p[1] - my) for p in pts) / math.sqrt(sxx * sum((p[1] - my) ** 2 for p in pts))
    sd = math.sqrt(sxx / (n - 1))
    what = "%d %s %.3f, sd %.4f, mean %.4f" % (n, what_n, r, sd, mx)
    print("#", name, what)
    ok = n >= n_min and abs(r) < 0.25 and sd_lo <= sd <= sd_hi and abs(mx) < 0.03
    print("ok %s" % name if ok else "not ok %s: %s (want at least %d, |correlation| < 0.25, sd %g-%g, "
          "|mean| < 0.03)" % (name, what, n_min, sd_lo, sd_hi))


def ckpt(d):
    """(second write, first write) of checkpoint_io, each as log(rate / 1 GB/s)"""
    s = json.load(open(os.path.join(d, "n001", "checkpoint_io.json")))["results"]["sync"]
    return [(math.log(s["again"][0]["per_rank"][0]["write_gbps"]), math.log(s["per_rank"][0]["write_gbps"]))]


def fresh_ckpt(name, pts):
    """the second write: uncorrelated with the first, one draw of 10%"""
    fresh(name, pts, "second writes: correlation with the first", 0.08, 0.12)


world = lambda d: json.load(open(os.path.join(d, "n001", "allreduce_bw.json")))["results"]["sweeps"][0]
pts, cks = [], []
for seed in range(1, 401):
    d = os.path.join(tmp, "nf")
    sys.argv = ["make-noise-fleet.py", d, "0.1", str(seed), "1"]
    nf.main()
    pts += cells(world(d), 375.0)
    cks += ckpt(d)
    shutil.rmtree(d)
fresh("fleet_generators_noise_fleet_remeasure_fresh", pts)
fresh_ckpt("fleet_generators_noise_fleet_checkpoint_again_fresh", cks)

pts, cpu, cks = [], [], []
a = mn.parse([tmp, "--nodes", "1", "--nights", "300", "--sigma", "0.1", "--device-sd", "0", "--node-sd", "0"])
real = json.load(open(os.path.join("tests", "data", "report", "real-vm", "roofline.json")))
real_mem = real["results"]["devices"][0]["roofs"]["memory_gbps"]
for k, day, write in mn.nights(a):
    d = os.path.join(tmp, day)
    write(d)
    pts += cells(world(d), 375.0)
    dv = [x for x in json.load(open(os.path.join(d, "n001", "roofline.json")))["results"]["devices"]
          if x["device"] == "cpu"][0]
    cpu.append((math.log(dv["roofs_again"]["memory_gbps"] / real_mem), math.log(dv["roofs"]["memory_gbps"] / real_mem)))
    cks += ckpt(d)
    shutil.rmtree(d)
fresh("fleet_generators_nights_remeasure_fresh", pts)
fresh_ckpt("fleet_generators_nights_checkpoint_again_fresh", cks)
# the CPU socket's roofs_again: a fresh draw of the night's noise (one draw
# of 10%: sd about 0.1), not correlated with the first measurement
fresh("fleet_generators_nights_cpu_again_fresh", cpu, "nights: correlation with the first measurement", 0.08, 0.125, 300)


def strip(o, conf):
    if isinstance(o, dict):
        if "confirm" in o:
            conf.append(o["confirm"])
        if "again" in o:
            conf.append(o["again"])
        return {k: strip(v, conf) for k, v in o.items() if k not in ("confirm", "again")}
    return [strip(v, conf) for v in o] if isinstance(o, list) else o


got = []
for again in (1, 2):
    conf = []
    sw = nf.sweep(random.Random(11), 0.1, "world", "world", list(range(8)), ["n001"], 375.0, random.Random(again))
    got.append((strip(sw, conf), conf))
ok = got[0][0] == got[1][0] and got[0][1] and len(got[0][1]) == len(got[1][1]) and \
    all(x != y for x, y in zip(got[0][1], got[1][1]))
print("ok fleet_generators_own_stream" if ok else
      "not ok fleet_generators_own_stream: %d and %d re-measurements, other figures %s" % (
          len(got[0][1]), len(got[1][1]), "the same" if got[0][0] == got[1][0] else "differ"))

d = os.path.join(tmp, "seed3")
sys.argv = ["make-noise-fleet.py", d, "0.1", "3", "6"]
nf.main()
h, conf = hashlib.sha256(), []
for r, ds, fs in sorted(os.walk(d)):
    ds.sort()
    for f in sorted(fs):
        h.update(os.path.relpath(os.path.join(r, f), d).encode())
        h.update(json.dumps(strip(json.load(open(os.path.join(r, f))), conf), sort_keys=True).encode())
want = "71719606760953627ae77530762bd213032eb875430d817c9234e6d42098bf96"
print("ok fleet_generators_other_figures_kept" if h.hexdigest() == want and conf else
      "not ok fleet_generators_other_figures_kept: %d re-measurements, the other figures hash to %s (want %s)" % (
          len(conf), h.hexdigest(), want))
PY
rc=$?
cat "$TMP/out"
[ $rc = 0 ] || echo "not ok fleet_generators_fresh: the check exited $rc"
exit 0
