/*
 * loader_contention's option parsing (ch_loader_opts.c): defaults, values,
 * and usage errors that name the option and the value.
 */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <criterion/redirect.h>
#include <string.h>

#include "base/ch_common.h"
#include "bench/loader/ch_loader.h"

Test(loader_opts, defaults)
{
	struct ch_lc_opts o;
	ch_lc_opts_init(&o);
	cr_assert_float_eq(o.step_sec, 0.010, 1e-12);
	cr_assert_float_eq(o.duration_sec, 1.2, 1e-12);
	cr_assert_eq(o.nworkers, 2);
	cr_assert_eq(o.workers[0], 1);
	cr_assert_eq(o.workers[1], 2);
	cr_assert_eq(o.placements[CH_LC_BASELINE], 0);
	cr_assert_eq(o.placements[CH_LC_SHARED] + o.placements[CH_LC_ISOLATED] + o.placements[CH_LC_NUMA_LOCAL] +
		     o.placements[CH_LC_NUMA_REMOTE] + o.placements[CH_LC_AS_IS], 5);
	cr_assert_eq(o.batch_bytes, 256 * 1024);
	cr_assert_eq(o.prefetch, 2);
	cr_assert_eq(o.hog_util, 0);
	cr_assert_eq(ch_lc_opts_check(&o), 0);
}

Test(loader_opts, values)
{
	struct ch_lc_opts o;
	ch_lc_opts_init(&o);
	cr_assert_eq(ch_lc_opt(CH_LC_OPT_STEP_MS, "20", &o), 1);
	cr_assert_float_eq(o.step_sec, 0.020, 1e-12);
	cr_assert_eq(ch_lc_opt(CH_LC_OPT_WORKERS, "1,4,8", &o), 1);
	cr_assert_eq(o.nworkers, 3);
	cr_assert_eq(o.workers[2], 8);
	cr_assert_eq(ch_lc_opt(CH_LC_OPT_PLACEMENTS, "isolated,as-is", &o), 1);
	cr_assert_eq(o.placements[CH_LC_ISOLATED], 1);
	cr_assert_eq(o.placements[CH_LC_AS_IS], 1);
	cr_assert_eq(o.placements[CH_LC_SHARED], 0);
	cr_assert_eq(ch_lc_opt(CH_LC_OPT_BATCH_BYTES, "1M", &o), 1);
	cr_assert_eq(o.batch_bytes, 1 << 20);
	cr_assert_eq(ch_lc_opt(CH_LC_OPT_HOG, "0.92", &o), 1);
	cr_assert_float_eq(o.hog_util, 0.92, 1e-12);
	cr_assert_eq(ch_lc_opt(CH_LC_OPT_COPY, "staging", &o), 1);
	cr_assert_eq(o.copy, CH_LC_COPY_STAGING);
	cr_assert_eq(ch_lc_opt(CH_LC_OPT_BATCH_MS, "5", &o), 1);
	cr_assert_float_eq(o.batch_sec, 0.005, 1e-12);
	cr_assert_eq(ch_lc_opt('q', NULL, &o), 0); /* not ours */
}

struct bad_opt { int opt; char arg[24]; };

ParameterizedTestParameters(loader_opts, bad_values)
{
	static struct bad_opt bad[] = {
		{ CH_LC_OPT_STEP_MS, "0" }, { CH_LC_OPT_STEP_MS, "abc" }, { CH_LC_OPT_STEP_MS, "10001" },
		{ CH_LC_OPT_DURATION, "0.05" }, { CH_LC_OPT_WORKERS, "0" }, { CH_LC_OPT_WORKERS, "1,,2" },
		{ CH_LC_OPT_WORKERS, "1,1" }, { CH_LC_OPT_WORKERS, "257" }, { CH_LC_OPT_WORKERS, "" },
		{ CH_LC_OPT_PLACEMENTS, "everywhere" }, { CH_LC_OPT_PLACEMENTS, "baseline" },
		{ CH_LC_OPT_PLACEMENTS, "shared,shared" }, { CH_LC_OPT_GPUS, "0" }, { CH_LC_OPT_GPUS, "65" },
		{ CH_LC_OPT_BATCH_BYTES, "3" }, { CH_LC_OPT_BATCH_BYTES, "4098" }, { CH_LC_OPT_BATCH_BYTES, "1G" },
		{ CH_LC_OPT_BATCH_MS, "-1" }, { CH_LC_OPT_PREFETCH, "0" }, { CH_LC_OPT_PREFETCH, "17" },
		{ CH_LC_OPT_HOG, "1.5" }, { CH_LC_OPT_HOG, "-0.1" }, { CH_LC_OPT_HOG, "nan" },
		{ CH_LC_OPT_COPY, "gpu" }, { CH_LC_OPT_TOPOLOGY, "" },
	};
	return cr_make_param_array(struct bad_opt, bad, sizeof(bad) / sizeof(bad[0]));
}

ParameterizedTest(struct bad_opt *b, loader_opts, bad_values)
{
	struct ch_lc_opts o;
	cr_redirect_stderr();
	ch_lc_opts_init(&o);
	cr_assert_eq(ch_lc_opt(b->opt, b->arg, &o), CH_ERR_USAGE, "option %#x '%s' accepted", b->opt, b->arg);
}

Test(loader_opts, cross_checks)
{
	struct ch_lc_opts o;
	cr_redirect_stderr();
	ch_lc_opts_init(&o);
	cr_assert_eq(ch_lc_opt(CH_LC_OPT_WORKERS, "32", &o), 1);
	cr_assert_eq(ch_lc_opt(CH_LC_OPT_PREFETCH, "16", &o), 1);
	cr_assert_eq(ch_lc_opts_check(&o), CH_ERR_USAGE); /* 512 queue slots */
	ch_lc_opts_init(&o);
	cr_assert_eq(ch_lc_opt(CH_LC_OPT_STEP_MS, "100", &o), 1);
	cr_assert_eq(ch_lc_opt(CH_LC_OPT_DURATION, "0.2", &o), 1);
	cr_assert_eq(ch_lc_opts_check(&o), CH_ERR_USAGE); /* 2 steps */
}
