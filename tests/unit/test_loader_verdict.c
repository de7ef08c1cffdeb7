/*
 * Verdict thresholds and the choice of the recommended configuration
 * (ch_loader_verdict.c).
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <string.h>

#include "bench/loader/ch_loader.h"

struct judge_case {
	double wait, util;
	int has_workers;
	long bad;
	int want;
};

ParameterizedTestParameters(loader_verdict, thresholds)
{
	static struct judge_case cases[] = {
		{ 0.0, 1.0, 1, 0, CH_LC_PASS },
		{ 0.0499, 0.95, 1, 0, CH_LC_PASS },
		{ 0.05, 0.95, 1, 0, CH_LC_WARN },   /* 5% of the step: warn */
		{ 0.1999, 0.95, 1, 0, CH_LC_WARN },
		{ 0.20, 0.95, 1, 0, CH_LC_FAIL },   /* 20%: input-bound */
		{ 0.0, 0.90, 1, 0, CH_LC_PASS },    /* AU 90% passes */
		{ 0.0, 0.8999, 1, 0, CH_LC_WARN },
		{ 0.0, 0.70, 1, 0, CH_LC_WARN },
		{ 0.0, 0.6999, 1, 0, CH_LC_FAIL },
		{ 0.5, 0.95, 0, 0, CH_LC_PASS },    /* baseline: input wait not judged */
		{ 0.0, 1.0, 1, 1, CH_LC_FAIL },     /* a bad batch */
	};
	return cr_make_param_array(struct judge_case, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct judge_case *c, loader_verdict, thresholds)
{
	struct ch_lc_metrics m;
	memset(&m, 0, sizeof(m));
	m.input_wait_frac = c->wait;
	m.accel_util = c->util;
	m.bad_batches = c->bad;
	cr_assert_eq(ch_lc_judge(&m, c->has_workers), c->want, "wait %g util %g: got %s", c->wait, c->util,
		     ch_lc_verdict_name(m.verdict));
	cr_assert_eq(m.verdict, c->want);
	cr_assert_eq(m.nreasons > 0, c->want != CH_LC_PASS);
}

Test(loader_verdict, reasons_name_value_threshold_and_source)
{
	struct ch_lc_metrics m;
	memset(&m, 0, sizeof(m));
	m.input_wait_frac = 0.234;
	m.accel_util = 0.65;
	cr_assert_eq(ch_lc_judge(&m, 1), CH_LC_FAIL);
	cr_assert_eq(m.nreasons, 2);
	cr_assert_str_eq(m.reasons[0], "input wait 23.4% of the step >= 20% (fail; TensorFlow profiler input-pipeline analysis)");
	cr_assert_str_eq(m.reasons[1], "accelerator utilisation 65.0% < 70% (fail)");
}

Test(loader_verdict, pick_fewest_workers_that_pass)
{
	struct ch_lc_choice c[] = {
		{ CH_LC_BASELINE, 0, CH_LC_PASS, 0.99 },
		{ CH_LC_SHARED, 1, CH_LC_FAIL, 0.60 },
		{ CH_LC_ISOLATED, 1, CH_LC_WARN, 0.85 },
		{ CH_LC_SHARED, 2, CH_LC_PASS, 0.95 },
		{ CH_LC_ISOLATED, 2, CH_LC_PASS, 0.94 },
		{ CH_LC_ISOLATED, 4, CH_LC_PASS, 0.99 },
	};
	/* pass beats warn; 2 workers beat 4; isolated is preferred to shared at equal verdict */
	cr_assert_eq(ch_lc_pick(c, 6, 1), 4);
	/* without the isolated-w2 row, shared-w2 */
	cr_assert_eq(ch_lc_pick(c, 4, 1), 3);
	/* the baseline is never picked */
	cr_assert_eq(ch_lc_pick(c, 1, 1), -1);
}

Test(loader_verdict, pick_as_is_only_last_and_never_when_collapsed)
{
	struct ch_lc_choice c[] = {
		{ CH_LC_ISOLATED, 2, CH_LC_WARN, 0.85 },
		{ CH_LC_AS_IS, 2, CH_LC_PASS, 0.95 },
		{ CH_LC_AS_IS, 1, CH_LC_WARN, 0.88 },
		{ CH_LC_NUMA_LOCAL, 2, CH_LC_WARN, 0.80 },
	};
	cr_assert_eq(ch_lc_pick(c, 4, 1), 1);  /* a pass is a pass */
	cr_assert_eq(ch_lc_pick(c, 4, 0), 3);  /* collapsed: as-is excluded, numa-local preferred */
	cr_assert_eq(ch_lc_pick(c + 1, 2, 0), -1);
}

Test(loader_verdict, pick_tie_on_utilisation)
{
	struct ch_lc_choice c[] = {
		{ CH_LC_SHARED, 2, CH_LC_WARN, 0.80 },
		{ CH_LC_SHARED, 2, CH_LC_WARN, 0.85 },
	};
	cr_assert_eq(ch_lc_pick(c, 2, 1), 1);
}

/* A host busy before the load: the measurement_noisy cut-offs, each figure
 * on its own; unknown figures (NaN, negative) never make it busy. */
Test(loader_verdict, host_busy_cutoffs)
{
	char why[512];
	cr_assert_eq(ch_lc_host_busy(19.99, 49.99, 19.99, why, sizeof(why)), 0);
	cr_assert_str_eq(why, "");
	cr_assert_eq(ch_lc_host_busy(NAN, NAN, NAN, why, sizeof(why)), 0);
	cr_assert_eq(ch_lc_host_busy(-1, -1, -1, why, sizeof(why)), 0);
	cr_assert_eq(ch_lc_host_busy(INFINITY, NAN, NAN, why, sizeof(why)), 0);
	cr_assert_eq(ch_lc_host_busy(20, NAN, NAN, why, sizeof(why)), 1);
	cr_assert_str_eq(why, "host CPU pressure 20% as the run started (>= 20%)");
	cr_assert_eq(ch_lc_host_busy(0, 56, NAN, why, sizeof(why)), 1);
	cr_assert_str_eq(why, "host CPUs 56% busy with other work as the run started (>= 50%)");
	cr_assert_eq(ch_lc_host_busy(NAN, 0, 37.2, why, sizeof(why)), 1);
	cr_assert_str_eq(why, "host CPU pressure 37% in the baseline, before any worker started (>= 20%)");
	cr_assert_eq(ch_lc_host_busy(30, 60, NAN, why, sizeof(why)), 1);
	cr_assert_str_eq(why, "host CPU pressure 30% as the run started (>= 20%); host CPUs 60% busy with other work as the run started (>= 50%)");
}
