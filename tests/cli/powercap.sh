#!/bin/bash
# powercap.sh - roofline --power-limits end to end on a machine without a GPU:
# roofline's main over the stand-in GPU (build/tests/roofline-standin,
# tests/standin) and the stand-in NVML (tests/fake-nvml: settable limits,
# constraints 200-700 W, default 700 W, gpu1 at 500 W at first, a clock and
# power model that follows the enforced limit). The sweep and its figures,
# the read-back, the restore on every exit path (the end, a failed point, a
# cap that never reads back, SIGTERM mid-sweep, kill -9 then the next start),
# the refusals (no root, probed without a write; a state file that cannot be
# written; a cap outside the constraints or above the original limit; a GPU
# another live run is capping), an operator's cap below the default as the
# reference, a state file that is not trusted (mode, owner, folder, link,
# named pipe, an original outside the constraints), and the original read
# under the state lock (a race with another run's restore).
cd "$(dirname "$0")/../.." || exit 1
source scripts/test-env
T=$(mktemp -d /tmp/ch_powercap_test.XXXXXX)
trap 'kill -9 $(jobs -p) 2>/dev/null; rm -rf "$T"' EXIT
R=$B/tests/roofline-standin
FAKE=$B/tests/fake-nvml
ok() { echo "ok $1"; }
nok() { echo "not ok $1: $2"; [ -n "${3:-}" ] && [ -f "$3" ] && sed 's/^/    /' "$3" | tail -15; }

for f in "$R" "$FAKE/libnvidia-ml.so.1"; do
	[ -e "$f" ] || { echo "skip powercap: $f not built (make test builds it)"; exit 0; }
done
# roofline's permission probe reads the privilege a limit needs (CAP_SYS_ADMIN)
cap=$(sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status 2>/dev/null)
if [ -n "$cap" ] && [ $(( (16#$cap >> 21) & 1 )) = 0 ]; then
	echo "skip powercap: this shell lacks CAP_SYS_ADMIN, which setting a power limit needs (run the tests as root)"
	exit 0
fi
export LD_LIBRARY_PATH=$FAKE FAKE_NVML_LOAD=compute
unset FAKE_NVML_NO_PERMISSION FAKE_NVML_READBACK_MS FAKE_NVML_OTHER_LIMIT_W CH_STANDIN_FAIL FAKE_NVML_SET_LOG
# run a command as a user without root's privilege (nobody when this is root)
as_user() { if [ "$(id -u)" = 0 ]; then setpriv --reuid=65534 --regid=65534 --clear-groups -- "$@"; else "$@"; fi; }

# a fresh GPU state (both GPUs at their first limits) and state file per case
fresh() { export FAKE_NVML_STATE=$T/$1.nvml CH_POWER_STATE=$T/$1.state/power-limits.json; rm -f "$FAKE_NVML_STATE"; }
# the limits the stand-in GPUs hold now, mW: "700000 500000" at first
limits() { if [ -f "$FAKE_NVML_STATE" ]; then cut -d' ' -f1 "$FAKE_NVML_STATE" | paste -sd' '; else echo "700000 500000"; fi; }
# wait until gpu0 is capped below its default (a sweep is past its reference)
wait_capped() {
	local i
	for i in $(seq 1 300); do
		[ -f "$CH_POWER_STATE" ] && [ -f "$FAKE_NVML_STATE" ] && [ "$(awk 'NR == 1 {print $1}' "$FAKE_NVML_STATE")" -lt 700000 ] && return 0
		sleep 0.05
	done
	return 1
}

# ---- the sweep: both GPUs at 700 W, four caps, exact figures of the model
fresh sweep
printf '700000 700000 0\n700000 500000 0\n' >"$FAKE_NVML_STATE"
$R --power-limits 100%,90%,80%,70% --json "$T/sweep.json" >"$T/sweep.out" 2>&1; rc=$?
if [ $rc = 0 ] && [ "$(limits)" = "700000 700000" ] && [ ! -e "$CH_POWER_STATE" ] && python3 - "$T/sweep.json" <<'EOF'
import json, math, sys
d = json.load(open(sys.argv[1]))
assert d["status"] == "ok", d["reason"]
top = 1980.0
def mhz(cap):  # the stand-in NVML's clock under a cap (fake_nvml_power.c)
    return top if cap >= 680 else math.floor(top * ((cap - 80) / 600) ** (1 / 3))
for dev, orig in (("gpu0", 700.0), ("gpu1", 700.0)):
    g = [x for x in d["results"]["devices"] if x["device"] == dev][0]
    s = g["power_sweep"]
    assert s["default_limit_w"] == 700 and s["original_limit_w"] == orig, s
    assert s["constraints_w"]["min"] == 200 and s["constraints_w"]["max"] == 700
    caps = s["caps"]
    assert [c["cap_w"] for c in caps] == [700, 630, 560, 490], [c["cap_w"] for c in caps]
    assert [c["requested"] for c in caps] == ["100%", "90%", "80%", "70%"]
    assert caps[0]["reference"] and not any(c["reference"] for c in caps[1:])
    for c in caps:
        assert c["status"] == "ok" and c["enforced_w"] == c["cap_w"] and not c["held_below"], c
        assert c["settle"]["settled"] is True and c["settle"]["windows"] >= 2
        want = 791000.0 * mhz(c["cap_w"]) / top
        assert abs(c["compute"]["gflops"] - want) < 1e-6 * want, (c["cap_w"], c["compute"]["gflops"], want)
        assert c["compute"]["sm_mhz"] == mhz(c["cap_w"])
        assert abs(c["compute"]["avg_power_w"] - min(c["cap_w"], 680)) < 0.5, c["compute"]
        assert abs(c["memory"]["gbps"] - 2970.0) < 1e-6 and abs(c["memory"]["loss_pct"]) < 1e-9
        assert [p["kernel"] + " " + p["dtype"] for p in c["points"]] == ["gemm bf16", "triad fp64"]
        if c["cap_w"] < 680:
            assert c["violation_ms"]["power"] > 0 and "sw_power_cap" in c["compute"]["clock_event_reasons"]
    loss = [round(c["compute"]["loss_pct"], 2) for c in caps]
    assert loss == [0.0, 2.88, 7.17, 11.97], loss
    r = s["recommendation"]
    assert r["judged"] and r["cap_w"] == 630 and r["stopped_at_cap_w"] == 560 and r["tolerance_pct"] == 5, r
    # energy per FLOP: (P / rate) at 630 W against 700 W: 1 - (791000/680) / (rate(630)/630)
    want = 100 * (1 - (791000.0 / 680) / (791000.0 * 1923 / top / 630))
    assert abs(r["energy_per_flop_saved_pct"] - want) < 0.05 and abs(r["power_saved_w"] - 50) < 0.5, r
    assert s["restored"]["ok"] and s["restored"]["limit_w"] == orig and s["restored"]["readback_w"] == orig
    assert s["limit_now_w"] == orig and s["not_measured"] == []
    # the device's own points are the ones at the default limit
    assert [p["gflops"] for p in g["points"]] == [c["gflops"] for c in [p for p in caps[0]["points"]]]
    assert g["roofs"]["compute_gflops"]["bf16"] == 791000.0
n = d["results"]["power_recommendation"]
assert n["cap_w"] == 630 and n["gpus_swept"] == 2 and abs(n["worst_compute_loss_pct"] - 2.88) < 0.01, n
EOF
then ok powercap_sweep_figures_and_restore; else nok powercap_sweep_figures_and_restore "exit $rc, limits $(limits)" "$T/sweep.out"; fi
grep -q "^# recommended cap: 630 W (90% of the original limit 700 W): gemm bf16 -2.9% (tolerance 5%)" "$T/sweep.out" &&
	grep -q "^# restored at the end of the sweep: 700 W (reads back 700 W)" "$T/sweep.out" &&
	grep -q "^# node power cap: 630 W for the 2 swept GPU(s)" "$T/sweep.out" &&
	ok powercap_sweep_table || nok powercap_sweep_table "lines missing" "$T/sweep.out"

# health_report reads the sweep roofline wrote: the fleet's cap is the node's
# (it exits 1: the stand-in NVML's inventory has labelled faults)
"$B/health_report" --out "$T/hr" "$T/sweep.json" >"$T/hr.out" 2>&1
if [ -f "$T/hr/profile.json" ] && python3 - "$T/hr/profile.json" <<'EOF'
import json, sys
[m] = json.load(open(sys.argv[1]))["power_caps"]["models"]
assert m["recommended_cap_w"] == 630 and m["gpus_swept"] == 2 and abs(m["worst_compute_loss_pct"] - 2.88) < 0.01, m
assert [round(c["perf_pct"], 2) for c in m["curve"]] == [100.0, 97.12, 92.83, 88.03], m["curve"]
EOF
then ok powercap_sweep_read_by_health_report; else nok powercap_sweep_read_by_health_report "power_caps" "$T/hr.out"; fi

# the canary at a cap from the same sweep: the slowest GPU's slowdown on 70% of the step
"$B/health_report" canary --inputs tests/data/canary/textbook.txt --power-cap 630 --compute-share 70% \
	--run-steps 100000 --json "$T/canary.json" "$T/sweep.json" >"$T/canary.out" 2>&1
if [ -f "$T/canary.json" ] && python3 - "$T/canary.json" <<'EOF'
import json, sys
p = json.load(open(sys.argv[1]))["power_cap"]
s = 1980 / 1923  # GFLOP/s at 700 W / at 630 W in the stand-in NVML's model
assert p["judged"] and abs(p["slowdown"]["value"] - s) < 1e-9 and p["gpus_at_cap"]["value"] == 2, p
t2, f = p["step_sec"]["value"], 5.5 / 30  # the textbook's checkpoint: 5.5 min every 30 min
want = (t2 * (1 - f) + 0.7 * t2 * (s - 1)) / (1 - f)
assert abs(p["step_cap_sec"]["value"] - want) < 1e-9, (p["step_cap_sec"], want)
assert abs(p["energy_step_cap_j"]["value"] - 128 * 630 * want) / (128 * 630 * want) < 1e-3
assert p["energy_saved_frac"]["value"] > 0 and p["kwh_run_cap"]["value"] < p["kwh_run"]["value"]
assert p["pue"]["source"] == "assumed" and "measured" in p["slowdown"]["source"]
EOF
then ok powercap_canary_at_a_cap; else nok powercap_canary_at_a_cap "power_cap" "$T/canary.out"; fi
grep -q "^at a power cap of 630 W" "$T/canary.out" && grep -q "step time at the target .* (+" "$T/canary.out" &&
	ok powercap_canary_lines || nok powercap_canary_lines "lines" "$T/canary.out"

# ---- an operator's cap below the default is the reference and is never
# raised: gpu1 at 500 W, percentages of 500 W, no write above it
fresh operator
FAKE_NVML_SET_LOG=$T/op.log $R --power-limits 100%,90%,80%,70% --devices 1 --json "$T/op.json" >"$T/op.out" 2>&1; rc=$?
if [ $rc = 0 ] && [ "$(limits)" = "700000 500000" ] && [ ! -e "$CH_POWER_STATE" ] &&
	[ "$(cut -d' ' -f2 "$T/op.log" | sort -n | tail -1)" = 500000 ] && python3 - "$T/op.json" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))["results"]["devices"][0]["power_sweep"]
assert s["original_limit_w"] == 500 and s["default_limit_w"] == 700, s
assert [c["cap_w"] for c in s["caps"]] == [500, 450, 400, 350], [c["cap_w"] for c in s["caps"]]
assert [c["reference"] for c in s["caps"]] == [True, False, False, False]
assert [round(c["pct_of_original"]) for c in s["caps"]] == [100, 90, 80, 70]
r = s["recommendation"]
assert r["judged"] and r["reference_cap_w"] == 500 and r["cap_w"] == 450 and r["stopped_at_cap_w"] == 400, r
assert s["restored"]["ok"] and s["restored"]["limit_w"] == 500
EOF
then ok powercap_operator_cap_is_the_reference; else nok powercap_operator_cap_is_the_reference "exit $rc, limits $(limits), writes $(paste -sd, "$T/op.log" 2>/dev/null)" "$T/op.out"; fi
fresh above
FAKE_NVML_SET_LOG=$T/ab.log $R --power-limits 600W --devices 1 --json "$T/ab.json" >"$T/ab.out" 2>&1; rc1=$?
$R --power-limits 600W --power-above-original --devices 1 --json "$T/ab2.json" >"$T/ab2.out" 2>&1; rc2=$?
if [ $rc1 = 2 ] && [ ! -s "$T/ab.log" ] && [ $rc2 = 0 ] && [ "$(limits)" = "700000 500000" ] &&
	grep -q "power cap '600W' (600.0 W) is above the limit this GPU has now, 500 W .*--power-above-original" "$T/ab.out" &&
	python3 -c "
import json, sys
s = json.load(open(sys.argv[1]))['results']['devices'][0]['power_sweep']
assert [c['cap_w'] for c in s['caps']] == [600, 500] and s['caps'][1]['reference'], s['caps']
assert s['restored']['limit_w'] == 500" "$T/ab2.json"; then
	ok powercap_above_original_only_when_asked
else
	nok powercap_above_original_only_when_asked "exits $rc1 $rc2 (want 2 0), limits $(limits)" "$T/ab.out"
fi

# ---- the read-back: the enforced limit follows 150 ms after each set
fresh readback
FAKE_NVML_READBACK_MS=150 $R --power-limits 100%,80% --devices 0 --json "$T/rb.json" >"$T/rb.out" 2>&1; rc=$?
if [ $rc = 0 ] && python3 - "$T/rb.json" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))["results"]["devices"][0]["power_sweep"]["caps"]
# the stand-in starts its 150 ms inside the set call; roofline's wait starts
# when the call returns, a few ms later on a loaded machine: at least 0.1 s
# says it waited (the first read-back was still the old 700 W)
assert c[1]["cap_w"] == 560 and c[1]["enforced_w"] == 560 and c[1]["readback_sec"] >= 0.1, c[1]
assert abs(c[1]["compute"]["avg_power_w"] - 560) < 0.5
EOF
then ok powercap_waits_for_readback; else nok powercap_waits_for_readback "exit $rc" "$T/rb.out"; fi

# ---- a cap that never reads back ends the sweep, the limit is put back
fresh never
FAKE_NVML_READBACK_MS=60000 $R --power-limits 100%,80%,60% --devices 0 --json "$T/nv.json" >"$T/nv.out" 2>&1; rc=$?
if [ $rc = 4 ] && [ "$(limits)" = "700000 500000" ] && [ ! -e "$CH_POWER_STATE" ] && python3 - "$T/nv.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
s = d["results"]["devices"][0]["power_sweep"]
assert [c["status"] for c in s["caps"]] == ["ok", "error"] and "not the cap 560 W" in s["caps"][1]["error"]
assert [x["cap_w"] for x in s["not_measured"]] == [420], s["not_measured"]
assert s["restored"]["ok"] and s["restored"]["when"] == "after the failed cap"
assert d["status"] == "error" and "the original limit was put back" in d["reason"], d["reason"]
EOF
then ok powercap_no_readback_restores; else nok powercap_no_readback_restores "exit $rc, limits $(limits)" "$T/nv.out"; fi

# ---- a point that fails at a cap: restored at once, the caps left not measured
fresh failed
CH_STANDIN_FAIL=triad:fp64:run@560 $R --power-limits 100%,90%,80%,70% --devices 0 --json "$T/fp.json" >"$T/fp.out" 2>&1; rc=$?
if [ $rc = 4 ] && [ "$(limits)" = "700000 500000" ] && [ ! -e "$CH_POWER_STATE" ] && python3 - "$T/fp.json" <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))["results"]["devices"][0]["power_sweep"]
assert [c["status"] for c in s["caps"]] == ["ok", "ok", "error"], [c["status"] for c in s["caps"]]
assert "triad fp64 at 560 W" in s["caps"][2]["error"] and s["caps"][2]["points"][-1]["valid"] is False
assert [x["cap_w"] for x in s["not_measured"]] == [490]
assert s["restored"]["ok"] and s["restored"]["when"] == "after the failed cap" and s["limit_now_w"] == 700
assert s["recommendation"]["cap_w"] == 630 and s["recommendation"]["stopped_at_cap_w"] == 560
EOF
then ok powercap_failed_point_restores; else nok powercap_failed_point_restores "exit $rc, limits $(limits)" "$T/fp.out"; fi

# ---- SIGTERM mid-sweep: the signal's thread restores before the file is finished
fresh term
$R --power-limits 100%,90%,80%,70%,60%,50%,40% --json "$T/term.json" >"$T/term.out" 2>&1 &
pid=$!
if wait_capped; then
	kill -TERM $pid; wait $pid; rc=$?
	if [ $rc = 4 ] && [ "$(limits)" = "700000 500000" ] && [ ! -e "$CH_POWER_STATE" ] && python3 - "$T/term.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["status"] == "error" and d["exit_code"] == 4
assert "SIGTERM" in d["reason"] and "power limits restored: GPU-00000000-0000-0000-0000-000000000000 700 W" in d["reason"], d["reason"]
EOF
	then ok powercap_sigterm_restores; else nok powercap_sigterm_restores "exit $rc, limits $(limits)" "$T/term.out"; fi
else
	kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
	nok powercap_sigterm_restores "the sweep never capped gpu0" "$T/term.out"
fi

# ---- kill -9 mid-sweep: the cap stays (as on a real GPU), the state file
# names it; the next roofline start restores it before anything else
fresh kill9
$R --power-limits 100%,90%,80%,70%,60%,50%,40% --devices 0 --json "$T/k9.json" >"$T/k9.out" 2>&1 &
pid=$!
if wait_capped; then
	kill -9 $pid; wait $pid 2>/dev/null
	capped=$(limits)
	if [ "${capped%% *}" -lt 700000 ] && python3 - "$CH_POWER_STATE" $pid <<'EOF'
import json, sys
s = json.load(open(sys.argv[1]))
assert s["schema"] == "clusterhealth.power-limits-state"
[e] = s["gpus"]
assert e["uuid"] == "GPU-00000000-0000-0000-0000-000000000000" and e["original_limit_w"] == 700 and e["pid"] == int(sys.argv[2])
EOF
	then ok powercap_kill9_leaves_state; else nok powercap_kill9_leaves_state "limits $capped" "$CH_POWER_STATE"; fi
	# the next start: a plain CPU run restores first, and says so
	$R --backend cpu --kernels copy --size 1M --iters 2 -q --json "$T/next.json" >"$T/next.out" 2>&1; rc=$?
	if [ $rc = 0 ] && [ "$(limits)" = "700000 500000" ] && [ ! -e "$CH_POWER_STATE" ] &&
		grep -q "GPU GPU-00000000-0000-0000-0000-000000000000: run pid $pid .* died before restoring its power limit; found ${capped%%000 *} W, original 700 W: restored" "$T/next.out" &&
		python3 - "$T/next.json" $pid <<'EOF'
import json, sys
[r] = json.load(open(sys.argv[1]))["results"]["power_restored_at_start"]
assert r["action"] == "restored" and r["pid"] == int(sys.argv[2]) and r["original_limit_w"] == 700 and r["found_limit_w"] < 700, r
EOF
	then ok powercap_next_start_restores; else nok powercap_next_start_restores "exit $rc, limits $(limits)" "$T/next.out"; fi
else
	kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
	nok powercap_kill9_leaves_state "the sweep never capped gpu0" "$T/k9.out"
	nok powercap_next_start_restores "not run"
fi

# ---- a state entry of a dead run (pid 0: gone) left without root, then
# --power-restore with it; a limit someone else changed since is left
dead_entry() { # UUID ORIGINAL_W CAPS_JSON
	mkdir -p "$(dirname "$CH_POWER_STATE")"
	cat >"$CH_POWER_STATE" <<EOF
{"schema": "clusterhealth.power-limits-state", "version": 1, "gpus": [{"uuid": "$1", "pci_bus_id": "0000:1b:00.0",
 "host": "$(hostname)", "original_limit_w": $2, "caps_w": $3, "pid": 0, "pid_start": "1", "since_utc": "2026-01-01T00:00:00Z"}]}
EOF
}
fresh dead
printf '350000 700000 0\n500000 500000 0\n' >"$FAKE_NVML_STATE"
dead_entry GPU-00000000-0000-0000-0000-000000000000 700 '[700, 350]'
FAKE_NVML_NO_PERMISSION=1 $R --power-restore >"$T/dead1.out" 2>&1; rc1=$?
FAKE_NVML_NO_PERMISSION=1 $R --power-limits 100%,80% --devices 0 --json "$T/dead2.json" >"$T/dead2.out" 2>&1; rc2=$?
kept=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['gpus']))" "$CH_POWER_STATE" 2>&1)
$R --power-restore >"$T/dead3.out" 2>&1; rc3=$?
if [ $rc1 = 3 ] && [ $rc2 = 4 ] && [ "$kept" = 1 ] && grep -q "still recorded in .* by a run that died" "$T/dead2.out" && [ $rc3 = 0 ] && [ "$(limits)" = "700000 500000" ] && [ ! -e "$CH_POWER_STATE" ] &&
	grep -q "NOT restored: setting a GPU power limit needs root" "$T/dead1.out" && grep -q ": restored" "$T/dead3.out"; then
	ok powercap_restore_needs_root_keeps_entry
else
	nok powercap_restore_needs_root_keeps_entry "exits $rc1 $rc2 $rc3 (want 3 4 0), entries $kept, limits $(limits)" "$T/dead1.out"
fi
fresh foreign
printf '450000 700000 0\n500000 500000 0\n' >"$FAKE_NVML_STATE"
dead_entry GPU-00000000-0000-0000-0000-000000000000 700 '[700, 350]'
$R --power-restore >"$T/foreign.out" 2>&1; rc=$?
if [ $rc = 0 ] && [ "$(limits)" = "450000 500000" ] && [ ! -e "$CH_POWER_STATE" ] &&
	grep -q "found 450 W, original 700 W: left as found: changed since by someone else" "$T/foreign.out"; then
	ok powercap_recovery_leaves_a_foreign_limit
else
	nok powercap_recovery_leaves_a_foreign_limit "exit $rc, limits $(limits)" "$T/foreign.out"
fi

# ---- refusals: nothing changed; without root's privilege the probe reads,
# it never writes a limit
fresh noroot
mkdir -p "$T/user" && chmod 755 "$T" && chmod 777 "$T/user"
FAKE_NVML_SET_LOG=$T/user/nr.log as_user $R --power-limits 100%,80% --json "$T/user/nr.json" >"$T/nr.out" 2>&1; rc=$?
if [ $rc = 3 ] && [ "$(limits)" = "700000 500000" ] && [ ! -e "$CH_POWER_STATE" ] && [ ! -s "$T/user/nr.log" ] &&
	python3 - "$T/user/nr.json" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["status"] == "unavailable" and d["exit_code"] == 3
for g in d["results"]["devices"]:
    assert g["status"] == "unavailable" and "needs root" in g["reason"] and "no limit changed" in g["reason"], g["reason"]
    assert g["power_sweep"]["caps"] == [] and g["points"] == []
EOF
then ok powercap_refused_without_root; else nok powercap_refused_without_root "exit $rc, limits $(limits), writes $(paste -sd, "$T/user/nr.log" 2>/dev/null)" "$T/nr.out"; fi

fresh nostate
CH_POWER_STATE=/dev/null/clusterhealth/power-limits.json $R --power-limits 80% --devices 0 --json "$T/ns.json" >"$T/ns.out" 2>&1; rc=$?
if [ $rc = 4 ] && [ "$(limits)" = "700000 500000" ] &&
	grep -q "cannot record the original power limit in the state file '/dev/null/clusterhealth/power-limits.json' .*refusing to change any limit" "$T/ns.out"; then
	ok powercap_unwritable_state_refuses
else
	nok powercap_unwritable_state_refuses "exit $rc, limits $(limits)" "$T/ns.out"
fi

fresh range
$R --power-limits 100%,150W --devices 0 --json "$T/rg.json" >"$T/rg.out" 2>&1; rc=$?
if [ $rc = 2 ] && [ "$(limits)" = "700000 500000" ] && [ ! -e "$CH_POWER_STATE" ] &&
	grep -q "power cap '150W' (150.0 W) is outside the range this GPU accepts, 200-700 W" "$T/rg.out"; then
	ok powercap_cap_outside_constraints
else
	nok powercap_cap_outside_constraints "exit $rc" "$T/rg.out"
fi

# a GPU recorded by a live process (this shell) is neither restored nor swept
fresh live
mkdir -p "$(dirname "$CH_POWER_STATE")"
start=$(sed 's/.*) //' /proc/$$/stat | cut -d' ' -f20)
printf '350000 700000 0\n500000 500000 0\n' >"$FAKE_NVML_STATE"
cat >"$CH_POWER_STATE" <<EOF
{"schema": "clusterhealth.power-limits-state", "version": 1, "gpus": [{"uuid": "GPU-00000000-0000-0000-0000-000000000000",
 "pci_bus_id": "0000:1b:00.0", "host": "$(hostname)", "original_limit_w": 700, "caps_w": [700, 350], "pid": $$,
 "pid_start": "$start", "since_utc": "2026-01-01T00:00:00Z"}]}
EOF
$R --power-limits 100%,80% --devices 0 --json "$T/lv.json" >"$T/lv.out" 2>&1; rc=$?
if [ $rc = 2 ] && [ "$(limits)" = "350000 500000" ] && [ -e "$CH_POWER_STATE" ] &&
	grep -q "is being capped by another run now (pid $$" "$T/lv.out"; then
	ok powercap_live_run_left_alone
else
	nok powercap_live_run_left_alone "exit $rc, limits $(limits)" "$T/lv.out"
fi
# ---- a state file is trusted only when it is a regular file, owned by root
# or this user and writable by no one else, in a folder that is the same: a
# forged entry (original 200 W, the minimum, "caps" the limit the GPU has)
# would set that limit at every start. Each is refused, the GPU untouched.
forged() { # NAME: a dead run's entry that would set gpu0 from 700 W to 200 W
	fresh "$1"
	printf '700000 700000 0\n500000 500000 0\n' >"$FAKE_NVML_STATE"
	dead_entry GPU-00000000-0000-0000-0000-000000000000 200 '[700]'
}
trust_case() { # NAME WANT_TEXT: --power-restore refuses, nothing set
	local rc
	FAKE_NVML_SET_LOG=$T/$1.log timeout 60 $R --power-restore >"$T/$1.out" 2>&1; rc=$?
	if [ $rc = 4 ] && [ "$(limits)" = "700000 500000" ] && [ ! -s "$T/$1.log" ] && grep -q -- "$2" "$T/$1.out"; then
		ok "powercap_state_$1"
	else
		nok "powercap_state_$1" "exit $rc (want 4), limits $(limits)" "$T/$1.out"
	fi
}
forged group_writable; chmod 666 "$CH_POWER_STATE"
trust_case group_writable "is writable by others (mode 0666): not trusting it"
forged foreign_owner; chown 65534 "$CH_POWER_STATE" 2>/dev/null
if [ "$(stat -c %u "$CH_POWER_STATE")" = 65534 ] && [ "$(id -u)" = 0 ]; then
	trust_case foreign_owner "is owned by uid 65534, neither root nor this user"
else
	echo "ok powercap_state_foreign_owner # skip: chown needs root"
fi
forged open_folder; chmod 777 "$(dirname "$CH_POWER_STATE")"
trust_case open_folder "the folder of the power-limit state file '.*' is writable by others"
forged link; mv "$CH_POWER_STATE" "$CH_POWER_STATE.real"; ln -s "$CH_POWER_STATE.real" "$CH_POWER_STATE"
trust_case link "a symbolic link: not followed"
# a named pipe at the state path: refused at once, never waited on
fresh fifo; mkdir -p "$(dirname "$CH_POWER_STATE")"; mkfifo "$CH_POWER_STATE"
trust_case fifo "is not a regular file: not reading it"
fresh fifo_start; mkdir -p "$(dirname "$CH_POWER_STATE")"; mkfifo "$CH_POWER_STATE"
timeout 60 $R --backend cpu --kernels copy --size 1M --iters 2 -q --json "$T/fifo2.json" >"$T/fifo2.out" 2>&1; rc=$?
[ $rc = 0 ] && [ -f "$T/fifo2.json" ] && grep -q "is not a regular file" "$T/fifo2.out" &&
	ok powercap_state_fifo_does_not_hang_a_start || nok powercap_state_fifo_does_not_hang_a_start "exit $rc" "$T/fifo2.out"
# an original limit outside the GPU's constraints: refused, the entry kept
fresh outside
printf '350000 700000 0\n500000 500000 0\n' >"$FAKE_NVML_STATE"
dead_entry GPU-00000000-0000-0000-0000-000000000000 150 '[350]'
FAKE_NVML_SET_LOG=$T/outside.log $R --power-restore >"$T/outside.out" 2>&1; rc=$?
if [ $rc = 4 ] && [ "$(limits)" = "350000 500000" ] && [ ! -s "$T/outside.log" ] && [ -e "$CH_POWER_STATE" ] &&
	grep -q "NOT restored: original_limit_w 150.0 W is outside the range this GPU accepts, 200-700 W" "$T/outside.out"; then
	ok powercap_state_original_outside_constraints_refused
else
	nok powercap_state_original_outside_constraints_refused "exit $rc, limits $(limits)" "$T/outside.out"
fi

# ---- a race: run B starts while another run's cap (350 W) is on gpu0 and
# that run holds the state lock; the other run then puts 700 W back and
# lets go. B must record 700 W (read under the lock), never 350 W.
fresh race
mkdir -p "$(dirname "$CH_POWER_STATE")"
printf '350000 700000 0\n500000 500000 0\n' >"$FAKE_NVML_STATE"
exec 9>"$CH_POWER_STATE.lock"
flock 9
$R --power-limits 100%,90% --devices 0 --json "$T/race.json" >"$T/race.out" 2>&1 9>&- &
pid=$!
for i in $(seq 1 400); do # until B waits on the lock
	ls -l /proc/$pid/fd 2>/dev/null | grep -q "power-limits.json.lock" && break
	sleep 0.05
done
printf '700000 350000 0\n500000 500000 0\n' >"$FAKE_NVML_STATE"
exec 9>&-
wait $pid; rc=$?
if [ "$(limits)" = "700000 500000" ] && [ ! -e "$CH_POWER_STATE" ] &&
	{ { [ $rc = 4 ] && grep -q "changed from 350.0 W to 700.0 W while this run started" "$T/race.out"; } ||
	  { [ $rc = 0 ] && python3 -c "
import json, sys
s = json.load(open(sys.argv[1]))['results']['devices'][0]['power_sweep']
assert s['restored']['limit_w'] == 700, s['restored']" "$T/race.json"; }; }; then
	ok powercap_race_records_the_limit_under_the_lock
else
	nok powercap_race_records_the_limit_under_the_lock "exit $rc, limits $(limits)" "$T/race.out"
fi
exit 0
