/*
 * hr_rules.c - the verdict rules as one table (hr_rules.h).
 */
#include "report/judge/hr_rules.h"
#include "hw/ch_procfs.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#define DS "the per-SKU expectation: datasheet x {memory_fraction} (memory) / {compute_fraction} (compute) (docs/health_report.md, \"Absolute\")"
#define FLEET "robust z at or beyond the cut-off for its node's comparisons (Student's t at {false_alarm} flagged per node, Bonferroni over the node's comparisons; never less than {z_outlier}, Iglewicz and Hoaglin; in a class of 200 like values or more raised to the quantile of a heavy tail learned from their upper side, for a value measured twice at the square root of that share) and {warn_pct_below}% (WARN) / {fail_pct_below}% (FAIL) below the median of >= {min_fleet} like values; where a learned tail set the cut-off, FAIL only beyond its quantile at {fail_false_alarm} per node (the FAIL's budget: a drain candidate once confirmed), else WARN"
/* The parameters several rows share (each row carries its own copy; the
 * code reads them from the row it names, and tests/cli/check-rules-doc.py
 * checks that every row agrees). --expect's "thresholds" override the
 * fleet and absolute ones, its "memory_fraction" and "compute_fraction"
 * the expectation's. */
#define MIN_FLEET { "min_fleet", 3, "%g", 0 }
#define P_ABS { "warn_ratio", 0.90, "%.2f", 0 }, { "fail_ratio", 0.75, "%.2f", 0 }
#define P_FLEET { "z_outlier", 3.5, "%.1f", 0 }, { "warn_pct_below", 5, "%g", 0 }, { "fail_pct_below", 10, "%g", 0 }, \
	MIN_FLEET, { "mad_floor_frac", 0.001, "%g", 0 }, { "false_alarm", 1e-4, "%g", 0 }, { "fail_false_alarm", 1e-6, "%g", 0 }
/* a sweep whose largest size is below is compared with like sweeps only:
 * the references describe the large-message plateau (measured at 8 GB) */
#define REF_MIN_BYTES { "ref_min_bytes", 1073741824.0, "%g", 0 }
#define P_DS { "memory_fraction", 0.85, "%.2f", 0 }, { "compute_fraction", 0.80, "%.2f", 0 }
#define ABS "below {warn_ratio} (WARN) / {fail_ratio} (FAIL) of the expectation"

const struct hr_rule hr_rules[] = {
	{ "config_drift", "warn", "a node's GPU model, driver, CUDA, NCCL, MPI, clocks, VBIOS, NIC firmware or power limit against the fleet's majority",
	  "any difference from the majority of >= {min_fleet} nodes that report the key", "fleet practice: like for like needs one stack", "analyze_drift", HR_PASS_DRIFT, { MIN_FLEET } },
	{ "fabric_regressed", "warn/fail", "a group's latest sweep against its own earlier sweeps in the inputs", "{threshold_pct}% or more below their median and beyond their spread: WARN on the latest run alone, FAIL on {persist} runs in a row (confirmed, a drain candidate)", "its own history", "history_reasons", HR_PASS_HISTORY,
	  { { "threshold_pct", 10, "%g", 0 }, { "persist", 2, "%g", 0 }, { "window", 14, "%g", 0 }, { "min_nights", 3, "%g", 0 },
	    { "alpha", 1e-4, "%g", 0 }, { "mad_floor_frac", 0.001, "%g", 0 }, { "z_min", 3.5, "%g", 0 } } },
	{ "history_cusum", "warn", "a node's metric series over the nights of its history (`health_report history`: each GPU's roofs, CPU sockets, node pairs, checkpoint mounts)",
	  "a one-sided CUSUM of the nights' drops from the series' own reference (>= {reference_nights} nights of the last {window}), in learned noise sd, allowance {k}, each night clipped at {clip}: REGRESSED above the threshold that a budget of {budget_node_night} flagged healthy nodes per node-night sets for the node's series",
	  "Page's CUSUM (1954); the noise pooled over the history's nights (docs/workflows.md, \"Change detection\")", "hr_cusum_run", HR_PASS_HISTORY,
	  { { "reference_nights", 7, "%g", 0 }, { "window", 14, "%g", 0 }, { "k", 2.0, "%g", 0 }, { "clip", 4.0, "%g", 0 },
	    { "budget_node_night", 0.0005, "%g", 0 }, { "floor_sigma", 0.001, "%g", 0 } } },
	{ "history_far_night", "warn", "a node's metric series on the night checked (`health_report history`): one night far below the series' own level",
	  "both measurements of a figure measured twice {first_night_pct}% or more below the series' reference and their chance for a healthy series within a budget of {far_budget_node_night} flagged nodes per node-night over the node's series: WARN on its first night; a night measured once, or not that improbable: info (not judged until it repeats) when its chance is within {info_chance_series_night} for the series; the median rule's REGRESSED stands only when its nights' chance is within the same budget",
	  "the noise model learned from the history's nights; the agreement of a fresh re-measurement (docs/workflows.md, \"Change detection\")", "hr_far_run", HR_PASS_HISTORY,
	  { { "first_night_pct", 12, "%g", 0 }, { "far_budget_node_night", 0.00002, "%g", 0 },
	    { "info_chance_series_night", 0.0001, "%g", 0 } } },
	{ "memory_low", "warn/fail", "a device's memory roof (roofline)",
	  ABS "; or a fleet outlier: " FLEET "; or {warn_pct_below}% / {fail_pct_below}% below its node's median (at most WARN unless roofline's re-measurement confirmed it)", DS "; the fleet and node medians; its own history", "device_reasons", HR_PASS_DEVICES,
	  { P_ABS, P_FLEET, P_DS } },
	{ "compute_low", "warn/fail", "a device's compute roof per dtype (roofline)",
	  ABS "; or a fleet outlier: " FLEET "; or {warn_pct_below}% / {fail_pct_below}% below its node's median (at most WARN unless roofline's re-measurement confirmed it)", DS "; the fleet and node medians; its own history", "device_reasons", HR_PASS_DEVICES,
	  { P_ABS, P_FLEET, P_DS } },
	{ "did_not_reproduce", "info", "a dip, gap, GPU below its node's others, or group busbw below its reference or the fleet, that the binary's re-measurement did not show again", "dips and gaps: the re-measurement within the first one's spread; values: the re-measurement, held to the same rules, not flagged", "allreduce_bw's and roofline's confirmation", "device_reasons, group_reasons, curve_reasons", HR_PASS_DEVICES, { { NULL, 0, NULL, 0 } } },
	{ "validation_failed", "fail", "roofline's check of a device's results", "any failed check", "roofline's validation patterns", "device_reasons", HR_PASS_DEVICES, { { NULL, 0, NULL, 0 } } },
	{ "throttled", "info", "NVML clock-event reasons of a device within its expectations", "any power or thermal reason", "NVML clock event reasons", "device_reasons", HR_PASS_DEVICES, { { NULL, 0, NULL, 0 } } },
	{ "wrong_results", "fail", "the elements an all-reduce returned (allreduce_bw, nccl-tests)", "any wrong element", "the all-reduce check pattern; nccl-tests' #wrong", "group_reasons", HR_PASS_GROUPS, { { NULL, 0, NULL, 0 } } },
	{ "nccl_tests_failed", "warn", "an nccl-tests run", "did not finish, or printed failure lines", "nccl-tests' output", "group_reasons", HR_PASS_GROUPS, { { NULL, 0, NULL, 0 } } },
	{ "nvlink_degraded", "fail", "intra-node busbw on an NVLink (SXM) node", "at or below {pcie_class_gbps} GB/s (PCIe class)", "PCIe Gen5 x16 about {pcie_class_gbps} GB/s per direction", "group_reasons", HR_PASS_GROUPS,
	  { { "pcie_class_gbps", 64, "%g", 0 } } },
	{ "intra_node_busbw_low", "warn/fail", "busbw of a group whose ranks lie on one node",
	  ABS "; or a fleet outlier among like groups: " FLEET "; at most the level of allreduce_bw's re-measurement of the largest size, held to the same rules", "measured references per GPU model (docs/health_report.md); like groups", "group_reasons", HR_PASS_GROUPS,
	  { P_ABS, P_FLEET, REF_MIN_BYTES } },
	{ "inter_node_link", "warn/fail", "a node common to slow node pairs", "in {min_pairs} or more slow pairs: FAIL when {min_pairs} are slow against like pairs or a recorded or given reference (confirmed), WARN on an assumed reference alone", "fleet practice: the node shared by the slow pairs", "group_reasons", HR_PASS_GROUPS,
	  { { "min_pairs", 2, "%g", 0 } } },
	{ "inter_node_busbw_low", "warn/fail", "busbw of a multi-node group against its inter-node expectation, or among groups of its size",
	  ABS "; or a fleet outlier: " FLEET "; at most the level of allreduce_bw's re-measurement of the largest size, held to the same rules", "the NICs recorded (host.inventory), else the GPU model's typical cluster (assumed)", "group_reasons", HR_PASS_GROUPS,
	  { P_ABS, P_FLEET, REF_MIN_BYTES, { "nic_efficiency", 0.92, "%g", 0 } } },
	{ "slow_pair", "warn", "a node pair that is a fleet outlier but meets its expectation", FLEET, "like pairs", "group_reasons", HR_PASS_GROUPS, { P_FLEET } },
	{ "straggler", "warn", "allreduce_bw's straggler ranks", "a rank allreduce_bw named a straggler", "allreduce_bw's per-rank times", "straggler_reasons", HR_PASS_STRAGGLERS, { { NULL, 0, NULL, 0 } } },
	{ "affinity_collapsed", "warn/fail", "the process's CPU mask in loader_contention", "collapsed to one CPU", "loader_contention", "loader_reasons", HR_PASS_LOADER, { { NULL, 0, NULL, 0 } } },
	{ "loader_input_bound", "warn/fail", "the configuration loader_contention recommends, on its figures", "input wait from {wait_warn}% (WARN) / {wait_fail}% (FAIL) of the step; accelerator utilisation below {util_pass}% / {util_fail}%; each beyond its spread over the run's repeats where recorded (by Student's t at {false_alarm} per node over {comparisons} comparisons, times the standard error); feeder lateness p99 from one whole step (WARN)", "TensorFlow profiler; DLIO", "loader_reasons", HR_PASS_LOADER,
	  { { "wait_warn", 0.05, "%.0f", 100 }, { "wait_fail", 0.20, "%.0f", 100 }, { "util_pass", 0.90, "%.0f", 100 }, { "util_fail", 0.70, "%.0f", 100 },
	    { "false_alarm", 1e-4, "%g", 0 }, { "comparisons", 6, "%g", 0 } } },
	{ "loader_contention", "warn", "the inherited placement (as-is) when the recommended one passes", "as-is warns or fails by the same figures", "as loader_input_bound", "loader_reasons", HR_PASS_LOADER, { { NULL, 0, NULL, 0 } } },
	{ "loader_not_judged", "info", "a loader run whose host was busy before its load started, or whose recommended placement is across a threshold by less than its spread", "the host's load before the run; the figures' spread over the run's repeats", "the result's measurement conditions and repeats", "loader_reasons", HR_PASS_LOADER, { { NULL, 0, NULL, 0 } } },
	{ "checkpoint_read_back", "fail", "the checkpoint files a node's ranks wrote (checkpoint_io)", "any file not read back as written (crc32, length)", "checkpoint_io's verify", "hr_ckpt_reasons", HR_PASS_CHECKPOINT, { { NULL, 0, NULL, 0 } } },
	{ "checkpoint_slow_write", "info/warn/fail", "a node's median per-rank write bandwidth to a mount against its peers on the mount", "{min_ratio}x or more below the peers' median; graded by the stall it adds at the checkpoint interval: WARN from {warn_stall}%, FAIL from {fail_stall}% of wall-clock; from {symptom_ratio}x below WARN whatever the stall (a storage or network symptom)", "fleet practice (HR_CKPT_SLOW_RATIO)", "hr_ckpt_reasons", HR_PASS_CHECKPOINT,
	  { { "min_ratio", 2, "%g", 0 }, { "warn_stall", 0.01, "%.0f", 100 }, { "fail_stall", 0.05, "%.0f", 100 }, { "interval_sec", 1800, "%g", 0 },
	    { "symptom_ratio", 3, "%g", 0 } } },
	{ "unavailable", "info", "a tool that had no device", "status unavailable", "the result file's status", "run_reasons", HR_PASS_RUNS, { { NULL, 0, NULL, 0 } } },
	{ "check_failed", "fail", "a result file's status failed with no device or row to explain it", "status failed", "the result file's status (e.g. --min-busbw)", "run_reasons", HR_PASS_RUNS, { { NULL, 0, NULL, 0 } } },
	{ "run_incomplete", "warn", "a result file's status", "incomplete, error or usage", "the result file's status", "run_reasons", HR_PASS_RUNS, { { NULL, 0, NULL, 0 } } },
	{ "pcie_link", "fail", "a GPU's PCIe link width and generation (host.inventory)", "width below its maximum; generation below its maximum while busy", "NVML current vs maximum link", "gpu_rules", HR_PASS_INVENTORY, { { NULL, 0, NULL, 0 } } },
	{ "pcie_gen_not_judged", "info", "a PCIe generation below its maximum read at idle", "read at idle (power saving)", "NVML", "hr_inventory_rules", HR_PASS_INVENTORY, { { NULL, 0, NULL, 0 } } },
	{ "nvlink_down", "fail", "a GPU's NVLink links", "any link not up (0 inactive tolerated)", "NVIDIA Health Validation nvlink_active", "gpu_rules", HR_PASS_INVENTORY, { { NULL, 0, NULL, 0 } } },
	{ "nvlink_errors", "fail", "a GPU's NVLink error counters", "any above 0", "Meta GCM check-dcgmi nvlink", "gpu_rules", HR_PASS_INVENTORY, { { NULL, 0, NULL, 0 } } },
	{ "ecc_uncorrected", "fail", "a GPU's volatile uncorrectable ECC count", "above 0", "NVML; DCGM and Meta GCM fail on any", "gpu_rules", HR_PASS_INVENTORY, { { NULL, 0, NULL, 0 } } },
	{ "ecc_history", "info", "a GPU's aggregate (lifetime) uncorrectable ECC count", "above 0 with no volatile one", "NVML", "gpu_rules", HR_PASS_INVENTORY, { { NULL, 0, NULL, 0 } } },
	{ "row_remap", "fail", "a GPU's row remapping or page retirement", "pending or failed", "NVIDIA GPU memory error management", "gpu_rules", HR_PASS_INVENTORY, { { NULL, 0, NULL, 0 } } },
	{ "clocks_capped", "warn", "a GPU's clock-event reasons at idle and its applications clock", "a power or thermal reason at idle; SM applications clock below its default", "NVML", "gpu_rules", HR_PASS_INVENTORY, { { NULL, 0, NULL, 0 } } },
	{ "power_limit_mismatch", "warn", "a GPU's enforced power limit within its node", "below the highest of its node by more than {same_w} W", "a collective runs at the pace of its slowest rank", "power_rule", HR_PASS_INVENTORY,
	  { { "same_w", 0.5, "%g", 0 } } },
	{ "nic_port_unused", "info", "an RDMA port down on every node that lists it", "not ACTIVE anywhere", "sysfs", "nic_rules", HR_PASS_INVENTORY, { { NULL, 0, NULL, 0 } } },
	{ "nic_port_down", "fail", "an RDMA port's state", "not ACTIVE where another node has it ACTIVE", "sysfs /sys/class/infiniband", "nic_rules", HR_PASS_INVENTORY, { { NULL, 0, NULL, 0 } } },
	{ "nic_rate", "fail", "an ACTIVE RDMA port's rate", "below the fleet's rate of that port (else the node's majority)", "sysfs .../ports/<n>/rate", "nic_rules", HR_PASS_INVENTORY, { { NULL, 0, NULL, 0 } } },
	{ "nic_rate_not_judged", "info", "an RDMA port's rate with nothing to compare it with", "no other node and no node majority", "sysfs", "nic_rules", HR_PASS_INVENTORY, { { NULL, 0, NULL, 0 } } },
	{ "ib_link_down", "fail", "an RDMA port's link_downed counter over one run", "rose by 1 or more", "any link down within a run", "hr_ib_counters_judge", HR_PASS_INVENTORY, { { NULL, 0, NULL, 0 } } },
	{ "ib_link_recovery", "warn", "an RDMA port's link_error_recovery counter over one run", "rose by 1 or more", "any link retraining within a run", "hr_ib_counters_judge", HR_PASS_INVENTORY, { { NULL, 0, NULL, 0 } } },
	{ "ib_port_errors", "warn", "an RDMA port's error counters over one run", "symbol_error, port_rcv_errors, local_link_integrity_errors, excessive_buffer_overrun_errors rose by 10 or more; port_rcv_remote_physical_errors, port_xmit_discards by 100", "infiniband-diags' suggested error_thresholds (rdma-core)", "hr_ib_counters_judge", HR_PASS_INVENTORY, { { NULL, 0, NULL, 0 } } },
	{ "ib_counters_not_judged", "info", "an RDMA port whose judged counters went down during the run", "cleared or reset", "sysfs", "hr_ib_counters_judge", HR_PASS_INVENTORY, { { NULL, 0, NULL, 0 } } },
	{ "cpu_governor", "warn", "the CPU frequency governor", "not performance (or mixed)", "Linux cpufreq documentation", "cpu_rules", HR_PASS_INVENTORY, { { NULL, 0, NULL, 0 } } },
	{ "cpu_turbo", "warn", "CPU turbo", "off", "Linux cpufreq documentation", "cpu_rules", HR_PASS_INVENTORY, { { NULL, 0, NULL, 0 } } },
	{ "xid_fault", "fail", "an Xid in a node's kernel log (kernel_log result files, docs/xid.md)", "the Xid table's action reset, drain or reboot: a hardware fault, a drain candidate without a re-run", "NVIDIA Xid catalog's resolution bucket (docs/xid.md)", "xid_rules", HR_PASS_XID, { { NULL, 0, NULL, 0 } } },
	{ "xid_info", "info", "an Xid the table informs for: the application's 13, 31, 43, others, a code not in the table", "the Xid table's action inform", "NVIDIA Xid catalog's resolution bucket (docs/xid.md)", "xid_rules", HR_PASS_XID, { { NULL, 0, NULL, 0 } } },
	{ "sxid", "info/fail", "an NVSwitch SXid in a node's kernel log", "FAIL when its line says Fatal, else information", "NVIDIA NVSwitch SXid messages (docs/xid.md)", "xid_rules", HR_PASS_XID, { { NULL, 0, NULL, 0 } } },
	{ "pcie_aer", "info/fail", "a PCIe AER error of a GPU or NIC in a node's kernel log", "FAIL for an uncorrected fatal error, else information", "Linux PCIe AER (docs/xid.md)", "xid_rules", HR_PASS_XID, { { NULL, 0, NULL, 0 } } },
	{ "link_flap", "info/fail", "a NIC port's link down lines in a node's kernel log (mlx5_core)", "{flaps} or more downs: FAIL (a drain candidate); fewer: information", "health_report kernel-log's --flaps default (docs/xid.md)", "xid_rules", HR_PASS_XID,
	  { { "flaps", 3, "%g", 0 } } },
	{ "power_cap_uneven", "warn", "a node's power limit across the nodes of one all-reduce group", "below the group's highest", "a collective runs at the pace of its slowest rank", "hr_powercap_rules", HR_PASS_POWERCAP,
	  { { "same_w", 0.5, "%g", 0 } } },
	{ "host_link_low", "warn/fail", "a GPU's host-to-device and device-to-host copy bandwidth (roofline's host link), the lower of the two", "below {warn_share} (WARN) of the one-way expectation of its PCIe link's maximum generation and width; FAIL below {fail_share}, or below {warn_share} with the link narrower than its maximum (NVML)", "PCIe line rate x 0.85 (hw/ch_pcie.h: PCI-SIG rates; measured pinned copies about 55 GB/s on Gen5 x16, 26 on Gen4 x16)", "hostlink_rules", HR_PASS_HOSTLINK,
	  { { "warn_share", 0.80, "%.2f", 0 }, { "fail_share", 0.50, "%.2f", 0 } } },
	{ "host_link_not_judged", "info", "a GPU's host link without a copy figure or without its PCIe link", "no figure, or NVML did not report the link", "the result file", "hostlink_rules", HR_PASS_HOSTLINK, { { NULL, 0, NULL, 0 } } },
	{ "curve_dip", "warn", "a busbw curve's size below both neighbours", "below both beyond their spread and below {dip} x their geometric mean (from {min_bytes} KiB, cells >= 1 GB/s); inside an alternation the same against its like sizes, two steps away", "a healthy rising curve sits near the geometric mean of its neighbours", "curve_reasons", HR_PASS_CURVES,
	  { { "dip", 0.80, "%.2f", 0 }, { "min_bytes", 65536, "%g", 1.0 / 1024 }, { "latency", 2.0, "%g", 0 } } },
	{ "curve_gap", "warn", "out-of-place against in-place busbw of one size", "one below {gap} x the other beyond their spread", "they differ in buffer handling only", "curve_reasons", HR_PASS_CURVES,
	  { { "gap", 0.50, "%.2f", 0 } } },
	{ "curve_alternation", "info", "busbw going up and down at every size", "each step {step}% or more and beyond the cells' spread, over {min_sizes} sizes or more", "the protocol or algorithm chosen per size, not the hardware", "curve_reasons", HR_PASS_CURVES,
	  { { "step", 0.10, "%.0f", 100 }, { "min_sizes", 5, "%g", 0 } } },
	{ "curve_not_judged", "info", "a curve finding on noisy cells or a busy host", "the cells' spread or the host's load", "the result's measurement conditions", "curve_reasons", HR_PASS_CURVES, { { NULL, 0, NULL, 0 } } },
	{ "curve_collapse", "warn", "a busbw curve below its plateau that stops rising", "below {mid} x the plateau and rising < {rise}% over {span}x in size", "a healthy curve roughly doubles per doubling of size before its plateau", "curve_reasons", HR_PASS_CURVES,
	  { { "mid", 0.50, "%.2f", 0 }, { "rise", 0.10, "%.0f", 100 }, { "span", 8, "%g", 0 } } },
	{ "dcgm_diag_fail", "fail", "a test of DCGM's diagnostic (dcgmi diag -j) on a GPU", "DCGM marked it Fail", "DCGM diag: its own test and thresholds (docs.nvidia.com/datacenter/dcgm, \"DCGM Diagnostics\")", "dcgm_nvbw_rules", HR_PASS_DCGM, { { NULL, 0, NULL, 0 } } },
	{ "dcgm_diag_warn", "warn", "a test of DCGM's diagnostic (dcgmi diag -j) on a GPU", "DCGM marked it Warn (Skip and Not Run are not judged)", "DCGM diag: its own test and thresholds", "dcgm_nvbw_rules", HR_PASS_DCGM, { { NULL, 0, NULL, 0 } } },
	{ "nvbw_host_link_low", "warn/fail", "a GPU's host-to-device and device-to-host copy bandwidth by nvbandwidth (host_to_device_memcpy_ce, device_to_host_memcpy_ce), the lower of the two", "as host_link_low, its parameters: the same shares of the same expectation, the PCIe link from the node's inventory", "PCIe line rate x 0.85 (hw/ch_pcie.h), as host_link_low", "dcgm_nvbw_rules", HR_PASS_DCGM, { { NULL, 0, NULL, 0 } } },
	{ "nvbw_host_link_not_judged", "info", "a GPU's nvbandwidth host copies without both figures or without its PCIe link in the node's inventory", "no figure, or no inventory link", "the nvbandwidth file", "dcgm_nvbw_rules", HR_PASS_DCGM, { { NULL, 0, NULL, 0 } } },
	{ "nvbw_d2d", "info", "nvbandwidth's device-to-device matrices, shown", "none: shown, not judged", "the nvbandwidth file", "dcgm_nvbw_rules", HR_PASS_DCGM, { { NULL, 0, NULL, 0 } } },
	{ "measurement_noisy", "info", "a node's checks measured too noisily to judge", "a busy or oversubscribed host, a per-call spread above the bound", "docs/health_report.md, \"Measurement quality\"", "not_judged_reasons", HR_PASS_NOT_JUDGED,
	  { { "max_cv", 0.10, "%g", 0 }, { "max_pressure_pct", CH_NOISY_PRESSURE_PCT, "%g", 0 }, { "max_busy_pct", CH_NOISY_BUSY_PCT, "%g", 0 }, { "max_per_core", 1, "%g", 0 } } },
	{ "fabric_not_judged", "info", "a node none of whose fabric checks could be judged", "no expectation, too few like groups, too little history", "docs/health_report.md, \"Not judged\"", "not_judged_reasons", HR_PASS_NOT_JUDGED, { { NULL, 0, NULL, 0 } } },
};

const size_t hr_nrules = sizeof(hr_rules) / sizeof(hr_rules[0]);

/* The last rule and parameter looked up on this thread: the judge asks for
 * the same few (the noisy-measurement cut-offs) once per value, and a scan
 * of the table with strcmp() each time was a fifth of the judging. */
static __thread const struct hr_rule *last_rule;
static __thread const struct hr_rule *last_param_rule;
static __thread size_t last_param;

const struct hr_rule *hr_rule_find(const char *code)
{
	size_t i;
	if (!code)
		return NULL;
	if (last_rule && !strcmp(last_rule->code, code))
		return last_rule;
	for (i = 0; i < hr_nrules; i++)
		if (!strcmp(hr_rules[i].code, code))
			return last_rule = &hr_rules[i];
	return NULL;
}

double hr_rule_param(const char *code, const char *name)
{
	const struct hr_rule *r;
	size_t k;
	if (last_param_rule && code && !strcmp(last_param_rule->code, code) &&
	    !strcmp(last_param_rule->params[last_param].name, name))
		return last_param_rule->params[last_param].value;
	r = hr_rule_find(code);
	for (k = 0; r && k < HR_RULE_NPARAMS && r->params[k].name; k++)
		if (!strcmp(r->params[k].name, name)) {
			last_param_rule = r;
			last_param = k;
			return r->params[k].value;
		}
	return NAN;
}

int hr_rule_text(const struct hr_rule *r, const char *tmpl, char *buf, size_t n)
{
	size_t len = 0, k;
	const char *t = tmpl;
	if (!n)
		return -1;
	buf[0] = '\0';
	while (*t) {
		const char *e = *t == '{' ? strchr(t, '}') : NULL;
		const struct hr_param *p = NULL;
		char num[64];
		const char *piece = t;
		size_t plen = 1;
		for (k = 0; e && k < HR_RULE_NPARAMS && r->params[k].name; k++)
			if (strlen(r->params[k].name) == (size_t)(e - t - 1) &&
			    !strncmp(r->params[k].name, t + 1, (size_t)(e - t - 1)))
				p = &r->params[k];
		if (p) {
			snprintf(num, sizeof(num), p->fmt, p->value * (p->shown_x ? p->shown_x : 1));
			piece = num;
			plen = strlen(num);
			t = e + 1;
		} else {
			t++;
		}
		if (len + plen >= n)
			return -1;
		memcpy(buf + len, piece, plen);
		buf[len += plen] = '\0';
	}
	return 0;
}

int hr_rules_params(FILE *out)
{
	size_t i, k;
	int rc = 0;
	for (i = 0; i < hr_nrules && !rc; i++)
		for (k = 0; k < HR_RULE_NPARAMS && hr_rules[i].params[k].name && !rc; k++) {
			const struct hr_rule *r = &hr_rules[i];
			const struct hr_param *p = &r->params[k];
			char shown[64], tag[80];
			snprintf(shown, sizeof(shown), p->fmt, p->value * (p->shown_x ? p->shown_x : 1));
			snprintf(tag, sizeof(tag), "{%s}", p->name);
			rc = fprintf(out, "%s\t%s\t%.17g\t%s\t%s\n", r->code, p->name, p->value, shown,
				     strstr(r->threshold, tag) || strstr(r->source, tag) ? "shown" : "-") < 0;
		}
	return rc ? -1 : 0;
}

/* a cell: '|' escaped */
static int cell(FILE *out, const char *s)
{
	for (; *s; s++)
		if ((*s == '|' && fputs("\\|", out) < 0) || (*s != '|' && fputc(*s, out) == EOF))
			return -1;
	return 0;
}

int hr_rules_markdown(FILE *out)
{
	char text[1024];
	size_t i;
	int rc = fputs("| code | level | judges | threshold | source | function |\n|---|---|---|---|---|---|\n", out) < 0;
	for (i = 0; i < hr_nrules && !rc; i++) {
		const struct hr_rule *r = &hr_rules[i];
		rc |= fprintf(out, "| `%s` | %s | ", r->code, r->level) < 0;
		rc |= cell(out, r->judges) || fputs(" | ", out) < 0;
		rc |= hr_rule_text(r, r->threshold, text, sizeof(text)) || cell(out, text) || fputs(" | ", out) < 0;
		rc |= hr_rule_text(r, r->source, text, sizeof(text)) || cell(out, text) || fputs(" | ", out) < 0;
		rc |= fprintf(out, "`%s` |\n", r->function) < 0;
	}
	return rc ? -1 : 0;
}

int hr_rules_main(int argc, char **argv)
{
	int params;
	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		printf("usage: health_report rules [--params]\n\n"
		       "Print the verdict rules of health_report as a Markdown table: each rule's\n"
		       "reason code, level, what it judges, its threshold (the defaults; --expect\n"
		       "may set the expectation and fleet ones), their source, and the function\n"
		       "that applies it (docs/health_report.md, \"The rule table\"). The numbers\n"
		       "of the thresholds are the rules' parameters, the ones the judge applies.\n\n"
		       "  --params   print the parameters instead: one a line, the rule's code,\n"
		       "             the parameter's name, its value, its value as the table\n"
		       "             prints it, and 'shown' when the table prints it (else\n"
		       "             '-'), tab-separated\n");
		return 0;
	}
	params = argc == 2 && !strcmp(argv[1], "--params");
	if (argc > 1 && !params) {
		fprintf(stderr, "health_report rules: unexpected argument '%s' (see --help)\n", argv[1]);
		return 2;
	}
	errno = 0;
	if ((params ? hr_rules_params(stdout) : hr_rules_markdown(stdout)) || fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "health_report rules: cannot write the table to standard output: %s\n",
			strerror(errno ? errno : EIO));
		return 4;
	}
	return 0;
}
