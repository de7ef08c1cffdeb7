#!/bin/bash
# loader_contention command-line checks that need a real (short) run on this
# machine or look inside the result file. Prints "ok NAME", "not ok NAME: why"
# or "skip NAME: why" per check; always exits 0. Run from the repository root.
set -u
source scripts/test-env
LC=$B/loader_contention
T=tests/data/topologies
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# json FILE PYTHON-EXPRESSION...: evaluate with d = the document; prints the
# failing expression, exits 1 when one is false
json() {
	local f=$1; shift
	python3 - "$f" "$@" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
r = d.get("results", {})
for e in sys.argv[2:]:
    try:
        ok = eval(e)
    except Exception as x:
        ok = False
        e = e + " (" + repr(x) + ")"
    if not ok:
        print(e)
        sys.exit(1)
EOF
}

# ---- a short sweep: result file follows the contract of docs/results-schema.md
out=$($LC --duration 0.3 --workers 1 --json "$tmp/run.json" 2>&1); rc=$?
if [ $rc -ne 0 ] && [ $rc -ne 1 ]; then
	echo "not ok lc_short_sweep: exit $rc"; echo "$out" | tail -5 | sed 's/^/    /'
else
	why=$(json "$tmp/run.json" \
		'd["schema"] == "clusterhealth.result" and d["tool"] == "loader_contention"' \
		'd["status"] == ("ok" if d["exit_code"] == 0 else "failed")' \
		"d['exit_code'] == $rc" \
		'r["step_ms"] == 10 and r["gpus_emulated"] >= 1 and isinstance(r["cuda_copies"], bool)' \
		'[c["name"] for c in r["configs"]][0] == "baseline"' \
		'all(k in c for c in r["configs"] for k in ("name","placement","workers","hog_util","feeder_cpus","worker_cpus","lateness_us","input_wait_frac","accel_util","batches_per_sec","runq_delay_us","invol_ctx_switches","psi_cpu_some_avg10","host_cpu_util","steal_frac","verdict","reasons"))' \
		'all(set(c["lateness_us"]) >= {"p50","p99","max"} for c in r["configs"])' \
		'all(c["lateness_us"]["p50"] <= c["lateness_us"]["p99"] <= c["lateness_us"]["max"] for c in r["configs"])' \
		'all(0 <= c["input_wait_frac"] <= 1 and 0 < c["accel_util"] <= 1 for c in r["configs"])' \
		'all(c["verdict"] in ("pass","warn","fail") for c in r["configs"])' \
		'all(c["bad_batches"] == 0 for c in r["configs"])' \
		'{c["placement"] for c in r["configs"]} >= {"baseline","shared","isolated","as-is"}' \
		'r["verdict"] in ("pass","warn","fail","not judged") and isinstance(r["mask_collapsed"], bool)' \
		'r["recommendation"]["placement"] in ("shared","isolated","numa-local","numa-remote","as-is")' \
		'all(isinstance(r["recommendation"][k], str) for k in ("numactl","hwloc_bind","slurm"))' \
		'r["recommendation"]["workers"] == 1' \
		'd["host"]["numa_nodes"] > 1 or [s["reason"] for s in r["skipped"]] == ["one NUMA node", "one NUMA node"]')
	if [ $? -eq 0 ]; then echo "ok lc_short_sweep"; else echo "not ok lc_short_sweep: $why"; fi
	# as-is may win on a loaded machine: its lines say that nothing is bound
	if json "$tmp/run.json" 'r["recommendation"]["placement"] == "as-is"' >/dev/null; then
		lines="(as-is: nothing bound) CMD"; slurm="srun --cpu-bind=none CMD"
	else
		lines="numactl --physcpubind="; slurm="srun --ntasks-per-node="
	fi
	if grep -q "^recommendation: .* placement, 1 worker(s) per GPU" <<<"$out" && grep -qF "$lines" <<<"$out" \
		&& grep -qF "$slurm" <<<"$out" && grep -qE "^verdict: ((pass|warn|fail) \(of the recommended configuration, [a-z-]+-w[0-9]+\)|not judged - the host was busy with other work before the load started \(.*\): )" <<<"$out"; then
		echo "ok lc_short_sweep_prints_verdict_and_lines"
	else
		echo "not ok lc_short_sweep_prints_verdict_and_lines"; echo "$out" | tail -12 | sed 's/^/    /'
	fi
	if ! json "$tmp/run.json" 'd["host"]["numa_nodes"] == 1' >/dev/null; then
		echo "skip lc_numa_skipped_with_reason: this machine has more than one NUMA node"
	else
		grep -q "^skipped numa-local: one NUMA node" <<<"$out" && grep -q "^skipped numa-remote: one NUMA node" <<<"$out" \
			&& echo "ok lc_numa_skipped_with_reason" || echo "not ok lc_numa_skipped_with_reason"
	fi
fi

# ---- the hog makes the feeder wait on the run queue (direction only)
if [ ! -r /proc/thread-self/schedstat ]; then
	echo "skip lc_hog_raises_runq_delay: no per-thread schedstat (kernel without CONFIG_SCHED_INFO)"
else
	$LC --placements shared --workers 1 --hog 1.0 --duration 0.6 --json "$tmp/hog.json" >"$tmp/hog.out" 2>&1; rc=$?
	if [ $rc -ne 0 ] && [ $rc -ne 1 ]; then
		echo "not ok lc_hog_raises_runq_delay: exit $rc"; tail -5 "$tmp/hog.out" | sed 's/^/    /'
	else
		why=$(json "$tmp/hog.json" \
			'r["configs"][0]["name"] == "baseline" and r["configs"][0]["hog_util"] == 0' \
			'r["configs"][1]["name"] == "shared-w1" and r["configs"][1]["hog_util"] == 1.0' \
			'r["configs"][1]["runq_delay_us"] > r["configs"][0]["runq_delay_us"]')
		if [ $? -eq 0 ]; then
			echo "ok lc_hog_raises_runq_delay"
		else
			echo "not ok lc_hog_raises_runq_delay: $why"; grep -E "^(baseline|shared)" "$tmp/hog.out" | sed 's/^/    /'
		fi
	fi
fi

# ---- a process bound to one CPU is detected
if [ "$(nproc --all)" -lt 2 ]; then
	echo "skip lc_collapsed_mask_detected: this machine has one CPU"
else
	out=$(taskset -c 0 $LC --placements as-is,isolated --workers 1 --duration 0.3 --json "$tmp/mask.json" 2>&1); rc=$?
	why=$(json "$tmp/mask.json" 'r["mask_collapsed"] is True' 'd["status"] == "failed"' \
		'"collapsed" in d["reason"]' 'r["affinity"]["process_cpus"] == "0"' 'r["verdict"] == "fail"' \
		'r["recommendation"]["placement"] == "isolated"')
	if [ $rc -eq 1 ] && [ -z "$why" ] && grep -q "COLLAPSED to a single CPU" <<<"$out" \
		&& grep -q "affinity mask has collapsed to CPU '0'" <<<"$out"; then
		echo "ok lc_collapsed_mask_detected"
	else
		echo "not ok lc_collapsed_mask_detected: exit $rc (want 1) $why"; echo "$out" | tail -5 | sed 's/^/    /'
	fi
	out=$($LC --placements as-is --workers 1 --duration 0.2 --json "$tmp/mask2.json" 2>&1); rc=$?
	if json "$tmp/mask2.json" 'r["mask_collapsed"] is False' >/dev/null; then
		echo "ok lc_full_mask_not_collapsed"
	else
		echo "not ok lc_full_mask_not_collapsed: exit $rc"
	fi
fi

# ---- --copy cuda without a GPU: unavailable, and the result file says why
if [ -e /dev/nvidia0 ] || nvidia-smi -L >/dev/null 2>&1; then
	echo "skip lc_copy_cuda_unavailable: this machine has an NVIDIA GPU"
else
	out=$($LC --copy cuda --json "$tmp/cuda.json" 2>&1); rc=$?
	why=$(json "$tmp/cuda.json" 'd["status"] == "unavailable"' 'd["exit_code"] == 3' \
		'"CUDA" in d["reason"]' 'r["cuda_copies"] is False')
	if [ $rc -eq 3 ] && [ -z "$why" ]; then echo "ok lc_copy_cuda_unavailable"
	else echo "not ok lc_copy_cuda_unavailable: exit $rc (want 3) $why"; echo "$out" | tail -3 | sed 's/^/    /'; fi
	out=$($LC --placements isolated --workers 1 --duration 0.2 --json "$tmp/auto.json" 2>&1); rc=$?
	if json "$tmp/auto.json" 'r["copy_backend"] == "staging"' 'r["cuda_copies"] is False' \
		'"staging buffer" in r["copy_note"]' >/dev/null && grep -q "feeding a host staging buffer" <<<"$out"; then
		echo "ok lc_no_gpu_falls_back_to_staging"
	else
		echo "not ok lc_no_gpu_falls_back_to_staging: exit $rc"; echo "$out" | head -3 | sed 's/^/    /'
	fi
fi

# ---- plan mode writes the plan into the result file
# a host busy before the load started (the procfs tree of a loaded host):
# no verdict ("not judged", exit 0), the reason naming the figure and its
# cut-off, though a batch of 40 ms of CPU per 10 ms step fails the targets
out=$(CH_PROCFS_ROOT=tests/data/procfs/busy $LC --placements shared --workers 1 --duration 0.3 --batch-ms 40 --json "$tmp/busy.json" 2>&1); rc=$?
why=$(json "$tmp/busy.json" 'r["verdict"] == "not judged"' 'd["exit_code"] == 0 and d["status"] == "ok"' \
	'r["not_judged_reason"].startswith("host CPU pressure 37% as the run started (>= 20%)")')
if [ $rc -eq 0 ] && [ -z "$why" ] && grep -q "^verdict: not judged - the host was busy with other work before the load started (host CPU pressure 37% as the run started" <<<"$out"; then
	echo "ok lc_busy_host_not_judged"
else
	echo "not ok lc_busy_host_not_judged: exit $rc (want 0) $why"; echo "$out" | tail -4 | sed 's/^/    /'
fi
$LC --topology $T/2socket-16core-ht-1gpu.xml --json "$tmp/plan.json" >/dev/null 2>&1; rc=$?
why=$(json "$tmp/plan.json" 'd["status"] == "ok"' 'r["mode"] == "plan"' \
	'r["plan"]["isolated"][0]["feeder_cpus"] == "8,24"' \
	'r["plan"]["isolated"][0]["worker_cpus"] == "9-15,25-31"' \
	'r["plan"]["isolated"][0]["numa_node"] == 1' \
	'r["plan"]["numa-remote"][0]["worker_cpus"] == "1-7,17-23"' \
	'r["gpus"][0]["pci_bus_id"] == "0000:84:00.0"' \
	'r["recommendation"]["slurm"] == "srun --ntasks-per-node=1 --cpu-bind=mask_cpu:0xff00ff00 --mem-bind=map_mem:1 CMD"')
if [ $rc -eq 0 ] && [ -z "$why" ]; then echo "ok lc_plan_json"; else echo "not ok lc_plan_json: exit $rc $why"; fi
exit 0
