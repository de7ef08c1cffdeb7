/*
 * test_rows.c - the report's row model (report/render/hr_rows.c): the rows, flags
 * and counts built from a small hand-written profile, and the cell helpers
 * that report.md and report.html share.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "base/ch_common.h"
#include "report/render/hr_rows.h"
#include "report/hr_util.h"

static const char profile_text[] =
	"{\"nodes\": ["
	" {\"name\": \"n1\", \"verdict\": \"FAIL\", \"like_for_like\": false, \"drain_candidate\": true,"
	"  \"config\": {\"driver\": \"550.54\", \"cuda\": \"12.4\"},"
	"  \"reasons\": [{\"level\": \"fail\", \"text\": \"slow\", \"action\": \"drain\"},"
	"               {\"level\": \"info\", \"text\": \"fine\"}],"
	"  \"devices\": [{\"device\": \"gpu0\", \"sku\": \"H100-SXM\", \"name\": \"NVIDIA H100\","
	"                \"metrics\": [{\"metric\": \"memory_gbps\", \"unit\": \"GB/s\", \"level\": \"warn\","
	"                              \"value\": 2900, \"pct_of_expected\": 88.5},"
	"                             {\"metric\": \"compute_gflops.bf16\", \"unit\": \"GFLOP/s\", \"level\": \"info\","
	"                              \"value\": 700000}]},"
	"               {\"device\": \"gpu1\", \"name\": \"NVIDIA H100\", \"status\": \"unavailable\","
	"                \"reason\": \"no CUDA device\", \"metrics\": []}],"
	"  \"loader\": {\"configs\": [{\"name\": \"c1\", \"placement\": \"spread\", \"workers\": 4,"
	"                            \"verdict\": \"fail\", \"accel_util\": 0.5},"
	"                           {\"name\": \"c2\", \"verdict\": \"pass\"}]},"
	"  \"busbw\": [{\"group\": \"g1\", \"kind\": \"intra\", \"algo\": \"ring\", \"nranks\": 8,"
	"              \"large_msg_busbw_gbps\": 180}, {\"group\": \"g4\"}]},"
	" {\"name\": \"n2\", \"verdict\": \"PASS\", \"reasons\": [], \"detail\": \"bounded\","
	"  \"devices\": [{\"device\": \"gpu0\", \"sku\": \"H100-SXM\","
	"                \"values\": {\"memory_gbps\": 3000, \"compute_gflops.bf16\": null}}]}],"
	" \"groups\": ["
	"  {\"name\": \"g1\", \"kind\": \"intra\", \"nodes\": [\"a\", \"b\", \"c\", \"d\", \"e\", \"f\"],"
	"   \"nranks\": 8, \"comparison\": {\"level\": \"info\", \"pct_of_fleet_median\": 99}},"
	"  {\"name\": \"g2\", \"failure\": \"mpirun exited 1\"},"
	"  {\"name\": \"g3\", \"wrong_total\": 3, \"comparison\": {\"level\": \"info\"}}],"
	" \"findings\": [{\"level\": \"warn\", \"text\": \"pair slow\"}],"
	" \"drift\": [{\"key\": \"driver\", \"nodes\": [{\"node\": \"n1\", \"value\": \"550.54\"}]}],"
	" \"inputs\": {\"issues\": [{\"path\": \"x.json\", \"line\": 3, \"kind\": \"skipped\", \"message\": \"bad\"},"
	"                         {\"path\": \"y.log\", \"kind\": \"note\", \"message\": \"m\"}]}}";

static json_t *profile(void)
{
	json_error_t e;
	json_t *p = json_loads(profile_text, 0, &e);
	cr_assert(p, "profile: %s (line %d)", e.text, e.line);
	return p;
}

Test(rows, nodes_reasons_and_configuration)
{
	json_t *p = profile();
	struct hr_rows r;
	cr_assert_eq(hr_rows_build(p, &r), 0);
	cr_assert_eq(r.nnodes, 2);
	cr_expect_str_eq(r.nodes[0].name, "n1");
	cr_expect_str_eq(r.nodes[0].verdict, "FAIL");
	cr_expect_eq(r.nodes[0].not_like_for_like, 1);
	cr_expect_eq(r.nodes[1].not_like_for_like, 0);
	cr_expect_str_eq(r.nodes[0].config[1], "550.54"); /* "driver" is the second key */
	cr_expect_str_eq(hr_rows_config_keys[1], "driver");
	cr_expect_null(r.nodes[0].config[0]);
	cr_assert_eq(r.nodes[0].nreasons, 2);
	cr_expect_eq(r.nodes[0].reasons[0].flagged, 1);
	cr_expect_str_eq(r.nodes[0].reasons[0].action, "drain");
	cr_expect_eq(r.nodes[0].reasons[1].flagged, 0);
	cr_expect_null(r.nodes[0].reasons[1].action);
	cr_expect_eq(r.nodes[1].nreasons, 0);
	cr_assert_eq(r.nfindings, 1);
	cr_expect_str_eq(r.findings[0].text, "pair slow");
	cr_assert_eq(r.ndrift, 1);
	cr_expect_null(r.drift[0].majority);
	cr_assert_eq(r.drift[0].nvalues, 1);
	cr_expect_str_eq(r.drift[0].values[0].value, "550.54");
	hr_rows_free(&r);
	json_decref(p);
}

Test(rows, drain_busbw_and_bounded_values)
{
	json_t *p = profile();
	struct hr_rows r;
	cr_assert_eq(hr_rows_build(p, &r), 0);
	cr_expect_eq(r.nodes[0].drain_candidate, 1);
	cr_expect_eq(r.nodes[1].drain_candidate, 0);
	cr_assert_eq(r.nbusbw, 2);
	cr_expect_str_eq(r.busbw[0].node, "n1");
	cr_expect_str_eq(r.busbw[0].group, "g1");
	cr_expect_str_eq(r.busbw[0].algo, "ring");
	cr_expect_eq(r.busbw[0].nranks, 8);
	cr_expect_eq(r.busbw[0].large_msg_busbw_gbps, 180);
	cr_expect_null(r.busbw[1].kind);
	cr_expect_eq(r.busbw[1].nranks, 0);
	cr_expect(isnan(r.busbw[1].large_msg_busbw_gbps));
	/* the bounded node's values, not device rows */
	cr_assert_eq(r.nvalues, 2);
	cr_expect_str_eq(r.values[0].node, "n2");
	cr_expect_str_eq(r.values[0].sku, "H100-SXM");
	cr_expect_str_eq(r.values[0].metric, "memory_gbps");
	cr_expect_eq(r.values[0].value, 3000);
	cr_expect_str_eq(r.values[1].metric, "compute_gflops.bf16");
	cr_expect(isnan(r.values[1].value));
	cr_expect_eq(r.ndevices, 3);
	hr_rows_free(&r);
	json_decref(p);
}

Test(rows, device_metrics_and_status_rows)
{
	json_t *p = profile();
	struct hr_rows r;
	cr_assert_eq(hr_rows_build(p, &r), 0);
	cr_assert_eq(r.ndevices, 3); /* two metrics of gpu0, the status of gpu1 */
	cr_expect_eq(r.metrics, 2);
	cr_expect_eq(r.metrics_flagged, 1);
	cr_expect_str_eq(r.devices[0].metric, "memory_gbps");
	cr_expect_str_eq(r.devices[0].sku, "H100-SXM");
	cr_expect_eq(r.devices[0].value, 2900);
	cr_expect_eq(r.devices[0].pct_of_expected, 88.5);
	cr_expect(isnan(r.devices[0].z));
	cr_expect_eq(r.devices[0].flagged, 1);
	cr_expect_eq(r.devices[1].flagged, 0);
	cr_expect_eq(r.devices[2].is_status, 1);
	cr_expect_str_eq(r.devices[2].status, "unavailable");
	cr_expect_str_eq(r.devices[2].reason, "no CUDA device");
	cr_expect_null(r.devices[2].sku);
	cr_expect(isnan(r.devices[2].value));
	hr_rows_free(&r);
	json_decref(p);
}

Test(rows, groups_loader_and_inputs)
{
	json_t *p = profile();
	struct hr_rows r;
	cr_assert_eq(hr_rows_build(p, &r), 0);
	cr_assert_eq(r.ngroups, 3);
	cr_expect_eq(r.groups[0].flagged, 0);
	cr_expect_eq(r.groups[1].flagged, 1); /* failed */
	cr_expect_eq(r.groups[2].flagged, 1); /* wrong results */
	cr_expect_eq(r.groups_flagged, 2);
	cr_expect_str_eq(r.groups[0].level, "info");
	cr_expect_null(r.groups[1].level);
	cr_expect_str_eq(r.groups[1].level_text, "failed");
	cr_expect_eq(r.groups[0].pct_of_fleet_median, 99);
	cr_expect_eq(r.groups[0].nranks, 8);
	cr_assert_eq(r.nloader, 2);
	cr_expect_eq(r.loader_flagged, 1);
	cr_expect_eq(r.loader[0].workers, 4);
	cr_expect_eq(r.loader[0].accel_util, 0.5);
	cr_expect_str_eq(r.loader[1].node, "n1");
	cr_assert_eq(r.nissues, 2);
	cr_expect_eq(r.issues[0].line, 3);
	cr_expect_eq(r.issues[1].line, 0);
	hr_rows_free(&r);
	json_decref(p);
}

Test(rows, cell_helpers)
{
	json_t *p = profile();
	struct hr_rows r;
	struct hr_buf b = { 0 };
	const double v[] = { 12.5, NAN, 3 };
	const char *const sfx[] = { "%", "%", "" };
	cr_assert_eq(hr_rows_build(p, &r), 0);
	hr_rows_names(&b, r.groups[0].nodes, hr_buf_md);
	cr_expect_str_eq(b.s, "a, b, c, d +2");
	b.len = 0;
	hr_rows_where(&b, &r.issues[0], hr_buf_html);
	hr_buf_puts(&b, " ");
	hr_rows_where(&b, &r.issues[1], hr_buf_html);
	cr_expect_str_eq(b.s, "x.json:3 y.log");
	b.len = 0;
	hr_rows_nums(&b, " | ", 3, v, sfx);
	cr_expect_str_eq(b.s, "12.5% | n/a | 3.00");
	b.len = 0;
	hr_rows_drift_values(&b, &r.drift[0], "<br>", ": <code>", "</code>", hr_buf_html);
	cr_expect_str_eq(b.s, "n1: <code>550.54</code>");
	hr_buf_release(&b);
	hr_rows_free(&r);
	json_decref(p);
}
