/*
 * The result reader (report/read/hr_result.h): a result document into the typed
 * record the canary and the history judge; values of the wrong type read as
 * such and quoted as found; the placement the job runs with.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/read/hr_result.h"

static json_t *doc_of(const char *text)
{
	json_error_t e;
	json_t *d = json_loads(text, 0, &e);
	cr_assert(d, "fixture: %s", e.text);
	return d;
}

#define ENVELOPE(tool) "\"schema\": \"clusterhealth.result\", \"schema_version\": 1, \"tool\": \"" tool "\", " \
	"\"status\": \"ok\", \"start_utc\": \"2025-01-02T03:00:00Z\", \"host\": {\"hostname\": \"n1\"}"

Test(result_reader, not_a_result)
{
	json_t *d = doc_of("{\"schema\": \"clusterhealth.result\", \"schema_version\": 2, \"tool\": \"roofline\"}");
	struct hr_result r;

	cr_assert_eq(hr_result_read(d, &r), 0);
	cr_assert_null(r.tool);
	cr_assert_null(r.hostname);
	hr_result_release(&r);
	json_decref(d);
}

Test(result_reader, allreduce_sweeps_and_layout)
{
	json_t *d = doc_of("{" ENVELOPE("allreduce_bw") ", \"ranks\": {\"layout\": ["
			   "{\"host\": \"a\"}, {\"host\": \"a\"}, {\"host\": \"b\"}, {\"host\": 7}]},"
			   "\"results\": {\"sweeps\": ["
			   "{\"group_kind\": \"pair\", \"algo\": \"ring\", \"nranks\": 4, \"nodes\": [\"a\", 3],"
			   " \"rows\": [{\"bytes\": 1024, \"out_of_place\": {\"time_us\": {\"median\": 12.5},"
			   " \"busbw_gbps\": 3.5, \"wrong\": 2}}, {\"bytes\": \"x\"}]},"
			   "{\"group_kind\": 5, \"nranks\": 2.0, \"large_msg_busbw_gbps\": 9, \"rows\": {}}]}}");
	struct hr_result r;
	char *t;

	cr_assert_eq(hr_result_read(d, &r), 0);
	cr_assert_str_eq(r.tool, "allreduce_bw");
	cr_assert_str_eq(r.hostname, "n1");
	cr_assert_str_eq(r.status, "ok");
	cr_assert_str_eq(r.start_utc, "2025-01-02T03:00:00Z");
	cr_assert_eq(r.ranks_per_host_max, 2);
	cr_assert(r.sweeps_list.is_array);
	cr_assert_eq(r.sweeps_list.n, 2);
	cr_assert_str_eq(r.sweeps[0].group_kind.str, "pair");
	cr_assert(r.sweeps[0].nranks.is_int);
	cr_assert_eq(r.sweeps[0].nranks.i, 4);
	cr_assert_eq(r.sweeps[0].nodes_list.n, 2);
	cr_assert_str_eq(r.sweeps[0].nodes[0].str, "a");
	cr_assert_null(r.sweeps[0].nodes[1].str);
	cr_assert_eq(r.sweeps[0].rows_list.n, 2);
	cr_assert_float_eq(r.sweeps[0].rows[0].bytes.num, 1024, 0);
	cr_assert_float_eq(r.sweeps[0].rows[0].oop_time_us.num, 12.5, 0);
	cr_assert_float_eq(r.sweeps[0].rows[0].oop_busbw.num, 3.5, 0);
	cr_assert_eq(r.sweeps[0].rows[0].oop_wrong.i, 2);
	cr_assert(isnan(r.sweeps[0].rows[1].bytes.num));
	cr_assert_null(r.sweeps[0].rows[1].oop_time_us.json);
	cr_assert(isnan(r.sweeps[0].large_busbw.num));
	/* the wrong types, read as such and quoted as found */
	cr_assert_null(r.sweeps[1].group_kind.str);
	cr_assert_null(r.sweeps[1].algo.json);
	cr_assert_not(r.sweeps[1].nranks.is_int);
	cr_assert_float_eq(r.sweeps[1].nranks.num, 2, 0);
	cr_assert_float_eq(r.sweeps[1].large_busbw.num, 9, 0);
	cr_assert_not(r.sweeps[1].rows_list.is_array);
	t = hr_rv_text(&r.sweeps[0].rows[1].bytes);
	cr_assert_str_eq(t, "\"x\"");
	free(t);
	t = hr_rv_text(&r.sweeps[1].algo);
	cr_assert_str_eq(t, "nothing");
	free(t);
	hr_result_release(&r);
	json_decref(d);
}

Test(result_reader, loader_pick)
{
	json_t *d = doc_of("{" ENVELOPE("loader_contention") ", \"results\": {\"configs\": ["
			   "{\"placement\": \"split\", \"input_wait_frac\": 0.5}, {\"placement\": \"shared\", \"name\": \"s\","
			   " \"accel_util\": 0.8}, {\"placement\": \"as-is\", \"input_wait_frac\": 0.25}]}}");
	struct hr_result r;

	cr_assert_eq(hr_result_read(d, &r), 0);
	cr_assert_eq(r.configs_list.n, 3);
	cr_assert_eq(hr_result_pick_config(&r), 2, "as-is first");
	cr_assert_str_eq(r.configs[1].name.str, "s");
	cr_assert_float_eq(r.configs[1].accel_util.num, 0.8, 0);
	cr_assert_float_eq(r.configs[0].input_wait_frac.num, 0.5, 0);
	r.configs[2].placement.str = "other";
	cr_assert_eq(hr_result_pick_config(&r), 1, "then shared");
	r.configs[1].placement.str = NULL;
	cr_assert_eq(hr_result_pick_config(&r), -1);
	hr_result_release(&r);
	json_decref(d);
}

Test(result_reader, roofline_devices)
{
	json_t *d = doc_of("{" ENVELOPE("roofline") ", \"results\": {\"devices\": ["
			   "{\"device\": \"gpu0\", \"status\": \"ok\", \"roofs\": {\"memory_gbps\": 3000,"
			   " \"compute_gflops\": {\"fp64\": 60000, \"bf16\": null, \"fp8\": 1e6}}},"
			   "{\"device\": 1, \"status\": \"failed\"}]}}");
	struct hr_result r;

	cr_assert_eq(hr_result_read(d, &r), 0);
	cr_assert_eq(r.devices_list.n, 2);
	cr_assert(r.devices[0].has_roofs);
	cr_assert_float_eq(r.devices[0].memory_gbps.num, 3000, 0);
	cr_assert_eq(r.devices[0].ncompute, 3);
	cr_assert_str_eq(r.devices[0].compute[0].dtype, "fp64", "document order");
	cr_assert(isnan(r.devices[0].compute[1].gflops.num));
	cr_assert_str_eq(r.devices[0].compute[2].dtype, "fp8");
	cr_assert_null(r.devices[1].device.str);
	cr_assert_not(r.devices[1].has_roofs);
	cr_assert_eq(r.devices[1].ncompute, 0);
	hr_result_release(&r);
	json_decref(d);
}

Test(result_reader, checkpoint)
{
	json_t *d = doc_of("{" ENVELOPE("checkpoint_io") ", \"ranks\": {\"layout\": ["
			   "{\"rank\": 0, \"host\": \"a\", \"dir_mount\": {\"fstype\": \"nfs4\", \"point\": \"/c\", \"network_fs\": true}},"
			   "{\"rank\": 1, \"host\": \"b\", \"dir_mount\": 5}]},"
			   "\"results\": {\"config\": {\"size_bytes\": 1e9, \"interval_sec\": 1800},"
			   " \"sync\": {\"writers\": 2, \"block_sec\": 1.5, \"per_rank\": [{\"rank\": 1.0, \"write_gbps\": 2.5}]},"
			   " \"verify\": {\"sync\": {\"bad\": [{\"rank\": 0}, {}]}, \"staged\": {\"bad\": [{\"rank\": 1}]}},"
			   " \"scaling\": {\"points\": [{\"writers\": 4, \"agg_write_gbps\": 9}]}}}");
	struct hr_result r;

	cr_assert_eq(hr_result_read(d, &r), 0);
	cr_assert_eq(r.layout_list.n, 2);
	cr_assert_str_eq(r.layout[0].dir_mount.fstype.str, "nfs4");
	cr_assert_null(r.layout[0].dir_mount.source.str);
	cr_assert(r.layout[0].dir_mount.network_fs);
	cr_assert_null(r.layout[1].dir_mount.fstype.json);
	cr_assert(r.has_sync);
	cr_assert_eq(hr_rv_int(&r.sync.writers, 0), 2);
	cr_assert_float_eq(r.sync.block_sec.num, 1.5, 0);
	cr_assert_eq(r.per_rank_list.n, 1);
	cr_assert_eq(hr_rv_int(&r.per_rank[0].rank, -1), 1, "a real rank truncated");
	cr_assert_eq(hr_rv_int(&r.per_rank[0].bytes, -1), -1, "absent: the default");
	cr_assert_eq(r.nbad, 3, "every verify kind, in order");
	cr_assert_eq(hr_rv_int(&r.bad_ranks[0], -1), 0);
	cr_assert_eq(hr_rv_int(&r.bad_ranks[1], -1), -1);
	cr_assert_eq(hr_rv_int(&r.bad_ranks[2], -1), 1);
	cr_assert_float_eq(r.size_bytes.num, 1e9, 0);
	cr_assert_not(r.has_staged);
	cr_assert_eq(r.scaling_list.n, 1);
	cr_assert_float_eq(r.scaling[0].agg_write_gbps.num, 9, 0);
	hr_result_release(&r);
	json_decref(d);
}

Test(result_reader, conditions_spread_and_confirmation)
{
	/* the measurement conditions, a cell's spread and re-measurement,
	 * roofline's confirmed flags and the point behind a roof; a value of
	 * the wrong type reads as such (never cast), absent as absent */
	json_t *d = doc_of("{" ENVELOPE("allreduce_bw") ", \"conditions\": {"
			   "\"before\": {\"utc\": \"t\", \"loadavg_1m\": 0, \"cpu_pressure_some_avg10_pct\": 84.5, \"cpu_busy_pct\": null},"
			   " \"after\": null, \"online_cpus\": 2, \"procs_on_host\": 4, \"threads_per_proc\": 1, \"per_core\": \"2\"},"
			   "\"results\": {\"sweeps\": [{\"rows\": [{\"bytes\": 1024, \"out_of_place\": {\"loop_time_us\": 20,"
			   " \"time_us\": {\"median\": 10, \"cv\": 0.76}, \"busbw_gbps\": 0.05,"
			   " \"confirm\": {\"why\": \"dip\", \"loop_time_us\": 12, \"time_us\": {\"median\": 11, \"cv\": 0.02},"
			   " \"busbw_gbps\": \"fast\"}}, \"in_place\": {\"busbw_gbps\": 0}}]}]}}");
	struct hr_result r;

	cr_assert_eq(hr_result_read(d, &r), 0);
	cr_assert(r.conditions.present);
	cr_assert(r.conditions.before.present);
	cr_assert_float_eq(r.conditions.before.loadavg_1m.num, 0, 0); /* a zero is a zero */
	cr_assert_float_eq(r.conditions.before.cpu_pressure_pct.num, 84.5, 0);
	cr_assert(r.conditions.before.cpu_busy_pct.is_null);
	cr_assert(isnan(r.conditions.before.cpu_busy_pct.num));
	cr_assert(!r.conditions.after.present);
	cr_assert(r.conditions.after_value.is_null);
	cr_assert(r.conditions.online_cpus.is_int);
	cr_assert_str_eq(r.conditions.per_core.str, "2"); /* a string: not a number */
	cr_assert(isnan(r.conditions.per_core.num));
	const struct hr_result_cell *c = &r.sweeps[0].rows[0].oop;
	cr_assert(c->present && c->time_us.present);
	cr_assert_float_eq(c->loop_time_us.num, 20, 0);
	cr_assert_float_eq(c->time_us.median.num, 10, 0);
	cr_assert_float_eq(c->time_us.cv.num, 0.76, 0);
	cr_assert(c->confirm.present);
	cr_assert_str_eq(c->confirm.why.str, "dip");
	cr_assert_float_eq(c->confirm.time_us.median.num, 11, 0);
	cr_assert(isnan(c->confirm.busbw.num)); /* "fast" */
	cr_assert_str_eq(c->confirm.busbw.str, "fast");
	cr_assert(r.sweeps[0].rows[0].ip.present);
	cr_assert(!r.sweeps[0].rows[0].ip.time_us.present);
	cr_assert(!r.sweeps[0].rows[0].ip.confirm.present);
	hr_result_release(&r);
	json_decref(d);

	d = doc_of("{" ENVELOPE("roofline") ", \"results\": {\"devices\": [{\"device\": \"gpu0\", \"status\": \"ok\","
		   " \"roofs\": {\"memory_gbps\": 2900, \"memory_kernel\": \"triad fp64\", \"compute_gflops\": {\"bf16\": 7e5},"
		   " \"compute_kernel\": {\"bf16\": \"gemm\"}}, \"points\": ["
		   "{\"kernel\": \"copy\", \"family\": \"stream\", \"dtype\": \"fp64\", \"gbps\": 3000, \"time_sec\": {\"cv\": 0.5}},"
		   "{\"kernel\": \"triad\", \"family\": \"stream\", \"dtype\": \"fp64\", \"gbps\": 2900, \"time_sec\": {\"cv\": 0.01}},"
		   "{\"kernel\": \"gemm\", \"family\": \"gemm\", \"dtype\": \"bf16\", \"gflops\": 7e5, \"valid\": false},"
		   "{\"kernel\": \"gemm\", \"family\": \"gemm\", \"dtype\": \"bf16\", \"gflops\": 6e5, \"time_sec\": {\"cv\": 0.03},"
		   " \"confirm\": {\"why\": \"below_node_median\", \"gflops\": 6.1e5, \"time_sec\": {\"cv\": 0.04}}}]}],"
		   " \"flagged\": [{\"device\": \"gpu0\", \"metric\": \"compute_gflops.bf16\", \"confirmed\": true},"
		   " {\"device\": \"gpu0\", \"metric\": \"memory_gbps\", \"confirmed\": null}, {\"device\": 3, \"confirmed\": \"yes\"}]}}");
	cr_assert_eq(hr_result_read(d, &r), 0);
	cr_assert_eq(r.flagged_list.n, 3);
	cr_assert(r.flagged[0].confirmed.is_true);
	cr_assert(r.flagged[1].confirmed.is_null);
	cr_assert_str_eq(r.flagged[2].confirmed.str, "yes");
	cr_assert_str_eq(r.devices[0].memory_kernel.str, "triad fp64");
	cr_assert_str_eq(r.devices[0].compute[0].kernel.str, "gemm");
	/* the point the roof names, not the fastest stream point; the valid GEMM */
	cr_assert_eq(hr_result_roof_point(&r.devices[0], -1), &r.devices[0].points[1]);
	cr_assert_eq(hr_result_roof_point(&r.devices[0], 0), &r.devices[0].points[3]);
	cr_assert(r.devices[0].points[3].confirm.present);
	cr_assert_float_eq(r.devices[0].points[3].confirm.gflops.num, 6.1e5, 0);
	cr_assert_float_eq(r.devices[0].points[3].confirm.time_sec.cv.num, 0.04, 0);
	hr_result_release(&r);
	json_decref(d);
}

Test(result_reader, kernel_log_faults)
{
	json_t *d = doc_of("{" ENVELOPE("kernel_log") ", \"results\": {\"kernel_log\": {\"source\": \"/dev/kmsg\", \"faults\": ["
			   "{\"device\": \"gpu1\", \"bus_id\": \"0000:43:00.0\", \"kind\": \"xid\", \"code\": 79,"
			   " \"action\": \"reboot\", \"lines\": 2, \"last_utc\": \"2026-12-06T02:14:07Z\", \"gpu_index\": 1,"
			   " \"uuid\": \"GPU-1\", \"meaning\": \"fallen off the bus\", \"hardware\": true},"
			   "{\"device\": \"mlx5_0\", \"kind\": \"link_down\", \"code\": \"x\", \"gpu_index\": null}]}}}");
	struct hr_result r;

	cr_assert_eq(hr_result_read(d, &r), 0);
	cr_assert_str_eq(r.tool, "kernel_log");
	cr_assert_str_eq(r.kl_source.str, "/dev/kmsg");
	cr_assert(r.kfaults_list.is_array);
	cr_assert_eq(r.kfaults_list.n, 2);
	cr_assert_str_eq(r.kfaults[0].kind.str, "xid");
	cr_assert(r.kfaults[0].code.is_int);
	cr_assert_eq(r.kfaults[0].code.i, 79);
	cr_assert_str_eq(r.kfaults[0].action.str, "reboot");
	cr_assert_eq(r.kfaults[0].gpu_index.i, 1);
	cr_assert_str_eq(r.kfaults[0].uuid.str, "GPU-1");
	cr_assert(r.kfaults[0].hardware.is_true);
	cr_assert_str_eq(r.kfaults[0].last_utc.str, "2026-12-06T02:14:07Z");
	/* a wrong code is read as found (a string), for the loader to refuse */
	cr_assert_not(r.kfaults[1].code.is_int);
	cr_assert_str_eq(r.kfaults[1].code.str, "x");
	cr_assert(r.kfaults[1].gpu_index.is_null);
	cr_assert_null(r.kfaults[1].action.json);
	hr_result_release(&r);
	json_decref(d);
}
