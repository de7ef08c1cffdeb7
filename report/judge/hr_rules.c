/*
 * hr_rules.c - the verdict rules as one table (hr_rules.h).
 */
#include "report/judge/hr_rules.h"

#include <errno.h>
#include <string.h>

#define DS "the per-SKU expectation: datasheet x 0.85 (memory) / 0.80 (compute) (docs/health_report.md, \"Absolute\")"
#define FLEET "robust z <= -3.5 (Iglewicz and Hoaglin) and 5% (WARN) / 10% (FAIL) below the median of >= 3 like values"
#define ABS "below 0.90 (WARN) / 0.75 (FAIL) of the expectation"

const struct hr_rule hr_rules[] = {
	{ "config_drift", "warn", "a node's GPU model, driver, CUDA, NCCL, MPI, clocks, VBIOS, NIC firmware or power limit against the fleet's majority",
	  "any difference from the majority of >= 3 nodes that report the key", "fleet practice: like for like needs one stack", "analyze_drift", HR_PASS_DRIFT },
	{ "fabric_regressed", "warn/fail", "a group's latest sweep against its own earlier sweeps in the inputs", "10% or more below their median and beyond their spread: WARN on the latest run alone, FAIL on 2 runs in a row (confirmed, a drain candidate)", "its own history", "history_reasons", HR_PASS_HISTORY },
	{ "memory_low", "warn/fail", "a device's memory roof (roofline)",
	  ABS "; or a fleet outlier: " FLEET "; or 5% / 10% below its node's median (at most WARN unless roofline's re-measurement confirmed it)", DS "; the fleet and node medians; its own history", "device_reasons", HR_PASS_DEVICES },
	{ "compute_low", "warn/fail", "a device's compute roof per dtype (roofline)",
	  ABS "; or a fleet outlier: " FLEET "; or 5% / 10% below its node's median (at most WARN unless roofline's re-measurement confirmed it)", DS "; the fleet and node medians; its own history", "device_reasons", HR_PASS_DEVICES },
	{ "did_not_reproduce", "info", "a dip, gap or GPU below its node's others that the binary's re-measurement did not show again", "the re-measurement within the first one's spread", "allreduce_bw's and roofline's confirmation", "device_reasons, curve_reasons", HR_PASS_DEVICES },
	{ "validation_failed", "fail", "roofline's check of a device's results", "any failed check", "roofline's validation patterns", "device_reasons", HR_PASS_DEVICES },
	{ "throttled", "info", "NVML clock-event reasons of a device within its expectations", "any power or thermal reason", "NVML clock event reasons", "device_reasons", HR_PASS_DEVICES },
	{ "wrong_results", "fail", "the elements an all-reduce returned (allreduce_bw, nccl-tests)", "any wrong element", "the all-reduce check pattern; nccl-tests' #wrong", "group_reasons", HR_PASS_GROUPS },
	{ "nccl_tests_failed", "warn", "an nccl-tests run", "did not finish, or printed failure lines", "nccl-tests' output", "group_reasons", HR_PASS_GROUPS },
	{ "nvlink_degraded", "fail", "intra-node busbw on an NVLink (SXM) node", "at or below 64 GB/s (PCIe class)", "PCIe Gen5 x16 about 64 GB/s per direction", "group_reasons", HR_PASS_GROUPS },
	{ "intra_node_busbw_low", "warn/fail", "busbw of a group whose ranks lie on one node",
	  ABS "; or a fleet outlier among like groups: " FLEET, "measured references per GPU model (docs/health_report.md); like groups", "group_reasons", HR_PASS_GROUPS },
	{ "inter_node_link", "warn/fail", "a node common to slow node pairs", "in 2 or more slow pairs: FAIL when 2 are slow against like pairs or a recorded or given reference (confirmed), WARN on an assumed reference alone", "fleet practice: the node shared by the slow pairs", "group_reasons", HR_PASS_GROUPS },
	{ "inter_node_busbw_low", "warn/fail", "busbw of a multi-node group against its inter-node expectation, or among groups of its size",
	  ABS "; or a fleet outlier: " FLEET, "the NICs recorded (host.inventory), else the GPU model's typical cluster (assumed)", "group_reasons", HR_PASS_GROUPS },
	{ "slow_pair", "warn", "a node pair that is a fleet outlier but meets its expectation", FLEET, "like pairs", "group_reasons", HR_PASS_GROUPS },
	{ "straggler", "warn", "allreduce_bw's straggler ranks", "a rank allreduce_bw named a straggler", "allreduce_bw's per-rank times", "straggler_reasons", HR_PASS_STRAGGLERS },
	{ "affinity_collapsed", "warn/fail", "the process's CPU mask in loader_contention", "collapsed to one CPU", "loader_contention", "loader_reasons", HR_PASS_LOADER },
	{ "loader_input_bound", "warn/fail", "the configuration loader_contention recommends, on its figures", "input wait from 5% (WARN) / 20% (FAIL) of the step; accelerator utilisation below 90% / 70%; feeder lateness p99 from one whole step (WARN)", "TensorFlow profiler; DLIO", "loader_reasons", HR_PASS_LOADER },
	{ "loader_contention", "warn", "the inherited placement (as-is) when the recommended one passes", "as-is warns or fails by the same figures", "as loader_input_bound", "loader_reasons", HR_PASS_LOADER },
	{ "loader_not_judged", "info", "a loader run whose host was busy before its load started", "the host's load before the run", "the result's measurement conditions", "loader_reasons", HR_PASS_LOADER },
	{ "checkpoint_read_back", "fail", "the checkpoint files a node's ranks wrote (checkpoint_io)", "any file not read back as written (crc32, length)", "checkpoint_io's verify", "hr_ckpt_reasons", HR_PASS_CHECKPOINT },
	{ "checkpoint_slow_write", "info/warn/fail", "a node's median per-rank write bandwidth to a mount against its peers on the mount", "2x or more below the peers' median; graded by the stall it adds at the checkpoint interval: WARN from 1%, FAIL from 5% of wall-clock", "fleet practice (HR_CKPT_SLOW_RATIO)", "hr_ckpt_reasons", HR_PASS_CHECKPOINT },
	{ "unavailable", "info", "a tool that had no device", "status unavailable", "the result file's status", "run_reasons", HR_PASS_RUNS },
	{ "check_failed", "fail", "a result file's status failed with no device or row to explain it", "status failed", "the result file's status (e.g. --min-busbw)", "run_reasons", HR_PASS_RUNS },
	{ "run_incomplete", "warn", "a result file's status", "incomplete, error or usage", "the result file's status", "run_reasons", HR_PASS_RUNS },
	{ "pcie_link", "fail", "a GPU's PCIe link width and generation (host.inventory)", "width below its maximum; generation below its maximum while busy", "NVML current vs maximum link", "gpu_rules", HR_PASS_INVENTORY },
	{ "pcie_gen_not_judged", "info", "a PCIe generation below its maximum read at idle", "read at idle (power saving)", "NVML", "hr_inventory_rules", HR_PASS_INVENTORY },
	{ "nvlink_down", "fail", "a GPU's NVLink links", "any link not up (0 inactive tolerated)", "NVIDIA Health Validation nvlink_active", "gpu_rules", HR_PASS_INVENTORY },
	{ "nvlink_errors", "fail", "a GPU's NVLink error counters", "any above 0", "Meta GCM check-dcgmi nvlink", "gpu_rules", HR_PASS_INVENTORY },
	{ "ecc_uncorrected", "fail", "a GPU's volatile uncorrectable ECC count", "above 0", "NVML; DCGM and Meta GCM fail on any", "gpu_rules", HR_PASS_INVENTORY },
	{ "ecc_history", "info", "a GPU's aggregate (lifetime) uncorrectable ECC count", "above 0 with no volatile one", "NVML", "gpu_rules", HR_PASS_INVENTORY },
	{ "row_remap", "fail", "a GPU's row remapping or page retirement", "pending or failed", "NVIDIA GPU memory error management", "gpu_rules", HR_PASS_INVENTORY },
	{ "clocks_capped", "warn", "a GPU's clock-event reasons at idle and its applications clock", "a power or thermal reason at idle; SM applications clock below its default", "NVML", "gpu_rules", HR_PASS_INVENTORY },
	{ "power_limit_mismatch", "warn", "a GPU's enforced power limit within its node", "below the highest of its node by more than 0.5 W", "a collective runs at the pace of its slowest rank", "power_rule", HR_PASS_INVENTORY },
	{ "nic_port_unused", "info", "an RDMA port down on every node that lists it", "not ACTIVE anywhere", "sysfs", "nic_rules", HR_PASS_INVENTORY },
	{ "nic_port_down", "fail", "an RDMA port's state", "not ACTIVE where another node has it ACTIVE", "sysfs /sys/class/infiniband", "nic_rules", HR_PASS_INVENTORY },
	{ "nic_rate", "fail", "an ACTIVE RDMA port's rate", "below the fleet's rate of that port (else the node's majority)", "sysfs .../ports/<n>/rate", "nic_rules", HR_PASS_INVENTORY },
	{ "nic_rate_not_judged", "info", "an RDMA port's rate with nothing to compare it with", "no other node and no node majority", "sysfs", "nic_rules", HR_PASS_INVENTORY },
	{ "ib_link_down", "fail", "an RDMA port's link_downed counter over one run", "rose by 1 or more", "any link down within a run", "hr_ib_counters_judge", HR_PASS_INVENTORY },
	{ "ib_link_recovery", "warn", "an RDMA port's link_error_recovery counter over one run", "rose by 1 or more", "any link retraining within a run", "hr_ib_counters_judge", HR_PASS_INVENTORY },
	{ "ib_port_errors", "warn", "an RDMA port's error counters over one run", "symbol_error, port_rcv_errors, local_link_integrity_errors, excessive_buffer_overrun_errors rose by 10 or more; port_rcv_remote_physical_errors, port_xmit_discards by 100", "infiniband-diags' suggested error_thresholds (rdma-core)", "hr_ib_counters_judge", HR_PASS_INVENTORY },
	{ "ib_counters_not_judged", "info", "an RDMA port whose judged counters went down during the run", "cleared or reset", "sysfs", "hr_ib_counters_judge", HR_PASS_INVENTORY },
	{ "cpu_governor", "warn", "the CPU frequency governor", "not performance (or mixed)", "Linux cpufreq documentation", "cpu_rules", HR_PASS_INVENTORY },
	{ "cpu_turbo", "warn", "CPU turbo", "off", "Linux cpufreq documentation", "cpu_rules", HR_PASS_INVENTORY },
	{ "power_cap_uneven", "warn", "a node's power limit across the nodes of one all-reduce group", "below the group's highest", "a collective runs at the pace of its slowest rank", "hr_powercap_rules", HR_PASS_POWERCAP },
	{ "host_link_low", "warn/fail", "a GPU's host-to-device and device-to-host copy bandwidth (roofline's host link), the lower of the two", "below 0.80 (WARN) of the one-way expectation of its PCIe link's maximum generation and width; FAIL below 0.50, or below 0.80 with the link narrower than its maximum (NVML)", "PCIe line rate x 0.85 (hw/ch_pcie.h: PCI-SIG rates; measured pinned copies about 55 GB/s on Gen5 x16, 26 on Gen4 x16)", "hostlink_rules", HR_PASS_HOSTLINK },
	{ "host_link_not_judged", "info", "a GPU's host link without a copy figure or without its PCIe link", "no figure, or NVML did not report the link", "the result file", "hostlink_rules", HR_PASS_HOSTLINK },
	{ "curve_dip", "warn", "a busbw curve's size below both neighbours", "below both beyond their spread and below 0.80 x their geometric mean (from 64 KiB, cells >= 1 GB/s)", "a healthy rising curve sits near the geometric mean of its neighbours", "curve_reasons", HR_PASS_CURVES },
	{ "curve_gap", "warn", "out-of-place against in-place busbw of one size", "one below 0.50 x the other beyond their spread", "they differ in buffer handling only", "curve_reasons", HR_PASS_CURVES },
	{ "curve_alternation", "info", "busbw going up and down at every size", "each step 10% or more and beyond the cells' spread, over 5 sizes or more", "the protocol or algorithm chosen per size, not the hardware", "curve_reasons", HR_PASS_CURVES },
	{ "curve_not_judged", "info", "a curve finding on noisy cells or a busy host", "the cells' spread or the host's load", "the result's measurement conditions", "curve_reasons", HR_PASS_CURVES },
	{ "curve_collapse", "warn", "a busbw curve below its plateau that stops rising", "below 0.50 x the plateau and rising < 10% over 8x in size", "a healthy curve roughly doubles per doubling of size before its plateau", "curve_reasons", HR_PASS_CURVES },
	{ "measurement_noisy", "info", "a node's checks measured too noisily to judge", "a busy or oversubscribed host, a per-call spread above the bound", "docs/health_report.md, \"Measurement quality\"", "not_judged_reasons", HR_PASS_NOT_JUDGED },
	{ "fabric_not_judged", "info", "a node none of whose fabric checks could be judged", "no expectation, too few like groups, too little history", "docs/health_report.md, \"Not judged\"", "not_judged_reasons", HR_PASS_NOT_JUDGED },
};

const size_t hr_nrules = sizeof(hr_rules) / sizeof(hr_rules[0]);

const struct hr_rule *hr_rule_find(const char *code)
{
	size_t i;
	for (i = 0; code && i < hr_nrules; i++)
		if (!strcmp(hr_rules[i].code, code))
			return &hr_rules[i];
	return NULL;
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
	size_t i;
	int rc = fputs("| code | level | judges | threshold | source | function |\n|---|---|---|---|---|---|\n", out) < 0;
	for (i = 0; i < hr_nrules && !rc; i++) {
		const struct hr_rule *r = &hr_rules[i];
		rc |= fprintf(out, "| `%s` | %s | ", r->code, r->level) < 0;
		rc |= cell(out, r->judges) || fputs(" | ", out) < 0;
		rc |= cell(out, r->threshold) || fputs(" | ", out) < 0;
		rc |= cell(out, r->source) || fputs(" | ", out) < 0;
		rc |= fprintf(out, "`%s` |\n", r->function) < 0;
	}
	return rc ? -1 : 0;
}

int hr_rules_main(int argc, char **argv)
{
	if (argc > 1 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		printf("usage: health_report rules\n\n"
		       "Print the verdict rules of health_report as a Markdown table: each rule's\n"
		       "reason code, level, what it judges, its threshold (the defaults; --expect\n"
		       "may set the expectation and fleet ones), their source, and the function\n"
		       "that applies it (docs/health_report.md, \"The rule table\").\n");
		return 0;
	}
	if (argc > 1) {
		fprintf(stderr, "health_report rules: unexpected argument '%s' (see --help)\n", argv[1]);
		return 2;
	}
	errno = 0;
	if (hr_rules_markdown(stdout) || fflush(stdout) || ferror(stdout)) {
		fprintf(stderr, "health_report rules: cannot write the table to standard output: %s\n",
			strerror(errno ? errno : EIO));
		return 4;
	}
	return 0;
}
