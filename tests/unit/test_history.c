#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/ch_common.h"
#include "report/history/hr_history.h"
#include "report/judge/hr_quality.h"

Test(history, rule_flags_a_drop_and_dates_it)
{
	struct hr_check_cfg cfg;
	hr_check_cfg_init(&cfg);
	/* 14 steady nights around 100, then 3 nights at 80 */
	double v[17] = { 100, 101, 99, 100, 102, 98, 100, 101, 99, 100, 100, 101, 99, 100, 80, 81, 79 };
	size_t since;
	double base, pct;
	struct hr_trend t;
	cr_assert_eq(hr_history_regressed(v, 17, &cfg, &since, &base, &pct), HR_TREND_REGRESSED);
	cr_assert_eq(since, 14);
	cr_assert_float_eq(base, 100, 0); /* median of the 14 nights before night 14 */
	cr_assert_float_eq(pct, 21, 1e-12);
	/* the spread of those nights: MAD 1, x 1.4826; 3 nights in a row, each
	 * beyond the cut-off at the square root of the budget, 0.0001 (2 nights
	 * to persist), with 0.37 x 13 degrees of freedom */
	cr_assert_eq(hr_history_trend(v, 17, &cfg, &t), HR_TREND_REGRESSED);
	cr_assert_float_eq(t.spread_pct, 1.4826, 1e-9);
	cr_assert_float_eq(t.z, -21 / 1.4826, 1e-9);
	cr_assert_float_eq(t.cut, 3.5, 0); /* hr_t_upper(0.01, 0.37 x 13) is 3.4: the least cut-off, 3.5, holds */
	cr_assert_lt(hr_t_upper(sqrt(1e-4), 0.37 * 13), 3.5);
	cr_assert_eq(t.nights, 3);
	/* the first bad night alone: regressed once, not yet REGRESSED; alone
	 * it must pass the cut-off at 0.0001 itself */
	cr_assert_eq(hr_history_trend(v, 15, &cfg, &t), HR_TREND_ONCE);
	cr_assert_eq(t.since, 14);
	cr_assert_eq(t.nights, 1);
	cr_assert_float_eq(t.cut, hr_t_upper(1e-4, 0.37 * 13), 1e-9);
	/* a node with many series checked needs more: with 56 series (7
	 * metrics x 8 GPUs) one night alone needs a robust z beyond -29, and
	 * the first bad night's -13.5 is not; three nights in a row are */
	cfg.comparisons = 56;
	cr_assert_float_eq(hr_cutoff(1e-3, 56, 14, 3.5), 14.6409287752, 1e-6);
	cr_assert_gt(hr_cutoff(1e-4, 56, 14, 3.5), 21 / 1.4826);
	cr_assert_eq(hr_history_trend(v, 15, &cfg, &t), HR_TREND_NONE);
	cr_assert_eq(hr_history_trend(v, 17, &cfg, &t), HR_TREND_REGRESSED);
	cr_assert_float_eq(t.cut, hr_t_upper(sqrt(1e-4 / 56), 0.37 * 13), 1e-9);
}

Test(history, rule_long_regression_does_not_hide)
{
	/* 5 good nights, then 10 bad ones: the last 10 pull a 14-night median
	 * down, but the run is measured against the nights before it */
	struct hr_check_cfg cfg;
	hr_check_cfg_init(&cfg);
	double v[15] = { 100, 100, 100, 100, 100, 70, 70, 70, 70, 70, 70, 70, 70, 70, 70 };
	size_t since;
	double base, pct;
	cr_assert_eq(hr_history_regressed(v, 15, &cfg, &since, &base, &pct), HR_TREND_REGRESSED);
	cr_assert_eq(since, 5);
	cr_assert_float_eq(base, 100, 0);
	cr_assert_float_eq(pct, 30, 1e-12);
}

Test(history, rule_quiet_cases)
{
	struct hr_check_cfg cfg;
	hr_check_cfg_init(&cfg);
	size_t since;
	double base, pct;
	double noisy[10] = { 100, 95, 104, 97, 103, 96, 102, 98, 101, 93 }; /* -7%: under 10% */
	cr_assert_eq(hr_history_regressed(noisy, 10, &cfg, &since, &base, &pct), 0);
	double recovered[8] = { 100, 100, 100, 100, 60, 100, 100, 99 };
	cr_assert_eq(hr_history_regressed(recovered, 8, &cfg, &since, &base, &pct), 0);
	double young[3] = { 100, 100, 50 }; /* 2 earlier nights < min_nights 3 */
	cr_assert_eq(hr_history_regressed(young, 3, &cfg, &since, &base, &pct), 0);
	double better[6] = { 100, 100, 100, 100, 100, 150 };
	cr_assert_eq(hr_history_regressed(better, 6, &cfg, &since, &base, &pct), 0);
	/* the noisy series' last night is 7% below its median, but within its
	 * own night-to-night spread (MAD 3: robust z -1.6): not even at 5% */
	cfg.threshold_pct = 5;
	cr_assert_eq(hr_history_regressed(noisy, 10, &cfg, &since, &base, &pct), 0);
	/* a steady series with one bad night: regressed once */
	double once[15] = { 100, 101, 99, 100, 102, 98, 100, 101, 99, 100, 100, 101, 99, 100, 70 };
	cfg.threshold_pct = 10;
	cr_assert_eq(hr_history_regressed(once, 15, &cfg, &since, &base, &pct), HR_TREND_ONCE);
	cr_assert_eq(since, 14);
	/* --persist 1: one night is enough */
	cfg.persist = 1;
	cr_assert_eq(hr_history_regressed(once, 15, &cfg, &since, &base, &pct), HR_TREND_REGRESSED);
}

Test(history, t_quantiles_are_known_values)
{
	/* Student's t upper quantiles (R: qt(1 - p, df)) and the normal one */
	cr_assert_float_eq(hr_t_upper(0.025, 1), 12.7062047361747, 1e-6);
	cr_assert_float_eq(hr_t_upper(0.025, 10), 2.22813885198627, 1e-6);
	cr_assert_float_eq(hr_t_upper(0.001, 5), 5.89342953135535, 1e-6);
	cr_assert_float_eq(hr_t_upper(0.005, 3), 5.84090930973337, 1e-6);
	cr_assert_float_eq(hr_t_upper(0.0005, 2), 31.5990545764436, 1e-5);
	cr_assert_float_eq(hr_t_upper(0.001, 2e6), 3.09023230616781, 1e-5);
	cr_assert(isnan(hr_t_upper(0.7, 3)));
	cr_assert(isnan(hr_t_upper(0.01, 0)));
	/* the cut-off: never below its floor, wider for fewer like values */
	cr_assert_float_eq(hr_cutoff(1e-3, 1, 1u << 30, 0), 3.09023230616781, 1e-5);
	cr_assert_float_eq(hr_cutoff(1e-3, 10, 11, 0), hr_t_upper(1e-4, 3.7), 1e-12);
	cr_assert_float_eq(hr_cutoff(0.4, 1, 1000, 3.5), 3.5, 0);
	cr_assert_gt(hr_cutoff(1e-3, 56, 8, 0), hr_cutoff(1e-3, 56, 400, 0));
}

/* ---- the nightly flow on a synthetic fleet */

static json_t *envelope(const char *tool, const char *host, const char *start)
{
	return json_pack("{s:s, s:i, s:s, s:s, s:s, s:{s:s}}", "schema", "clusterhealth.result",
			 "schema_version", 1, "tool", tool, "status", "ok", "start_utc", start,
			 "host", "hostname", host);
}

static json_t *roofline_doc(const char *host, const char *start, double mem0, double bf0, double mem1, double bf1)
{
	json_t *d = envelope("roofline", host, start);
	json_object_set_new(d, "results", json_pack("{s:[{s:s, s:s, s:{s:f, s:{s:f}}}, {s:s, s:s, s:{s:f, s:{s:f}}}]}",
		"devices", "device", "gpu0", "status", "ok", "roofs", "memory_gbps", mem0, "compute_gflops", "bf16", bf0,
		"device", "gpu1", "status", "ok", "roofs", "memory_gbps", mem1, "compute_gflops", "bf16", bf1));
	return d;
}

static json_t *allreduce_doc(const char *host, const char *start, double busbw)
{
	json_t *d = envelope("allreduce_bw", host, start);
	json_object_set_new(d, "results", json_pack("{s:[{s:s, s:s, s:[s], s:i, s:f, s:[]}]}",
		"sweeps", "group_kind", "node", "algo", "ring", "nodes", host, "nranks", 2,
		"large_msg_busbw_gbps", busbw, "rows"));
	return d;
}

static json_t *loader_doc(const char *host, const char *start, double au)
{
	json_t *d = envelope("loader_contention", host, start);
	json_object_set_new(d, "results", json_pack("{s:[{s:s, s:s, s:f}, {s:s, s:s, s:f}]}",
		"configs", "name", "isolated-w2", "placement", "isolated", "accel_util", 0.99,
		"name", "as-is", "placement", "as-is", "accel_util", au));
	return d;
}

Test(history, nightly_flow_flags_exactly_the_regressed_node)
{
	char db[] = "/tmp/ch_history_test_XXXXXX";
	int fd = mkstemp(db);
	cr_assert_geq(fd, 0);
	close(fd);
	unlink(db);
	struct hr_history *h;
	cr_assert_eq(hr_history_open(db, 10, &h), 0);
	const char *nodes[] = { "n1", "n2", "n3", "n4" };
	const int nights = 17;
	for (int night = 0; night < nights; night++) {
		char start[32];
		snprintf(start, sizeof(start), "2025-01-%02dT03:00:00Z", night + 1);
		for (int k = 0; k < 4; k++) {
			/* +-2% deterministic jitter on everything */
			double j = 1 + 0.02 * (((night * 7 + k * 3) % 5) - 2) / 2.0;
			double bf1 = 795000 * j;
			if (k == 2 && night >= 14)
				bf1 = 795000 * 0.80; /* n3's gpu1 loses 20% from night 15 */
			if (k == 1 && night == 10)
				bf1 = 400000; /* n2 had one bad night and recovered */
			size_t nrec = 0;
			json_t *docs[3] = { roofline_doc(nodes[k], start, 3000 * j, 795000 * j, 3000 * j, bf1),
					    allreduce_doc(nodes[k], start, 370 * j), loader_doc(nodes[k], start, 0.95 * j) };
			for (int d = 0; d < 3; d++) {
				cr_assert_eq(hr_history_record_doc(h, start, "synthetic.json", docs[d], &nrec, NULL), 0);
				json_decref(docs[d]);
			}
			cr_assert_eq(nrec, 6); /* 2 x (memory, bf16) + intra busbw + accel_util */
		}
	}
	struct hr_check_cfg cfg;
	hr_check_cfg_init(&cfg);
	struct hr_regression *r;
	size_t n;
	cr_assert_eq(hr_history_check(h, NULL, &cfg, &r, &n, NULL), 0);
	cr_assert_eq(n, 1, "expected exactly one regression, got %zu", n);
	cr_assert_str_eq(r[0].node, "n3");
	cr_assert_str_eq(r[0].gpu, "gpu1");
	cr_assert_str_eq(r[0].metric, "roofline.compute_gflops.bf16");
	cr_assert_str_eq(r[0].since, "2025-01-15T03:00:00Z");
	cr_assert_str_eq(r[0].night, "2025-01-17T03:00:00Z");
	cr_assert_eq(r[0].nbaseline, 14);
	cr_assert_float_eq(r[0].value, 636000, 1e-6);
	cr_assert(fabs(r[0].pct - 20) < 2.5, "pct %g", r[0].pct);
	cr_assert(r[0].persisted);
	free(r);
	/* the night of n2's bad value flagged n2, and only it: once */
	cr_assert_eq(hr_history_check(h, "2025-01-11T03:00:00Z", &cfg, &r, &n, NULL), 0);
	cr_assert_eq(n, 1);
	cr_assert_str_eq(r[0].node, "n2");
	cr_assert_str_eq(r[0].since, "2025-01-11T03:00:00Z");
	cr_assert(!r[0].persisted);
	free(r);
	/* recording the same night again replaces, it does not add a night */
	json_t *again = roofline_doc("n3", "x", 3000, 795000, 3000, 795000);
	cr_assert_eq(hr_history_record_doc(h, "2025-01-17T03:00:00Z", "fixed.json", again, NULL, NULL), 0);
	json_decref(again);
	cr_assert_eq(hr_history_check(h, NULL, &cfg, &r, &n, NULL), 0);
	cr_assert_eq(n, 0);
	free(r);
	hr_history_close(h);
	unlink(db);
}

Test(history, rejects_foreign_database)
{
	char db[] = "/tmp/ch_history_bad_XXXXXX";
	int fd = mkstemp(db);
	cr_assert_geq(fd, 0);
	cr_assert_eq(write(fd, "this is not sqlite, just text that is long enough to be a header....................................", 100), 100);
	close(fd);
	struct hr_history *h = NULL;
	cr_assert_eq(hr_history_open(db, 10, &h), CH_ERR_USAGE);
	cr_assert_null(h);
	unlink(db);
}

Test(history, bad_result_is_usage_error)
{
	char db[] = "/tmp/ch_history_t2_XXXXXX";
	int fd = mkstemp(db);
	close(fd);
	unlink(db);
	struct hr_history *h;
	cr_assert_eq(hr_history_open(db, 10, &h), 0);
	json_t *d = envelope("roofline", "n1", "2025-01-01T00:00:00Z");
	json_object_set_new(d, "results", json_pack("{s:i}", "devices", 3));
	cr_assert_eq(hr_history_record_doc(h, "2025-01-01", "bad.json", d, NULL, NULL), CH_ERR_USAGE);
	json_decref(d);
	hr_history_close(h);
	unlink(db);
}
