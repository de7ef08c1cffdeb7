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
