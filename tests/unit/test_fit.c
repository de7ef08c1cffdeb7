#include <criterion/criterion.h>
#include <math.h>

#include "base/ch_common.h"
#include "report/canary/hr_fit.h"

/* synthetic points from the model itself: sizes 8 B .. 256 MiB, n = 2..16 */
static size_t synth(enum hr_fit_model m, double alpha_us, double bw_gbps,
		    const int *ranks, int nr, double noise, struct hr_fit_point *p)
{
	struct hr_fit truth = { .model = m, .alpha_us = alpha_us, .bw_gbps = bw_gbps };
	size_t k = 0;
	for (int r = 0; r < nr; r++)
		for (double s = 8; s <= 256.0 * 1024 * 1024; s *= 4) {
			/* deterministic +-noise, alternating */
			double e = (k % 2 ? 1 : -1) * noise;
			p[k].bytes = s;
			p[k].nranks = ranks[r];
			p[k].time_us = hr_fit_predict_us(&truth, s, ranks[r]) * (1 + e);
			k++;
		}
	return k;
}

Test(fit, model_terms)
{
	cr_assert_float_eq(hr_fit_bw_coef(HR_FIT_RING, 8), 1.75, 1e-15);
	cr_assert_float_eq(hr_fit_lat_steps(HR_FIT_RING, 8), 14, 0);
	cr_assert_float_eq(hr_fit_lat_steps(HR_FIT_LOG, 8), 3, 0);
	cr_assert_float_eq(hr_fit_lat_steps(HR_FIT_LOG, 9), 4, 0);
	cr_assert_float_eq(hr_fit_lat_steps(HR_FIT_LOG, 2), 1, 0);
	cr_assert_float_eq(hr_fit_lat_steps(HR_FIT_RING, 1), 0, 0);
	/* 1 GB over 4 ranks at B = 100 GB/s, alpha 5 us:
	 * 1.5 x 1e9 / 1e11 s = 15000 us + 6 x 5 us */
	struct hr_fit f = { .model = HR_FIT_RING, .alpha_us = 5, .bw_gbps = 100 };
	cr_assert_float_eq(hr_fit_predict_us(&f, 1e9, 4), 15030.0, 1e-9);
	/* busbw of 1 GB in 10 ms on 4 ranks: 100 GB/s x 1.5 */
	cr_assert_float_eq(hr_fit_busbw_gbps(1e9, 4, 1e4), 150.0, 1e-9);
	/* reduce-scatter or all-gather of the same 1 GB at the same busbw: the
	 * all-reduce's half, (n-1)/n x S/B + (n-1) alpha = 7500 + 15 us (ring);
	 * the log model's latency ceil(log2 4) = 2 steps */
	cr_assert_float_eq(hr_fit_predict_half_us(&f, 1e9, 4), 7515.0, 1e-9);
	cr_assert_float_eq(hr_fit_predict_half_us(&f, 1e9, 4) * 2, hr_fit_predict_us(&f, 1e9, 4), 1e-9);
	f.model = HR_FIT_LOG;
	cr_assert_float_eq(hr_fit_predict_half_us(&f, 1e9, 4), 7510.0, 1e-9);
	cr_assert_float_eq(hr_fit_predict_half_us(&f, 1e9, 1), 0, 0);
}

Test(fit, recovers_ring_exact)
{
	struct hr_fit_point p[64];
	int ranks[] = { 2, 4, 8, 16 };
	size_t n = synth(HR_FIT_RING, 7.5, 42.0, ranks, 4, 0, p);
	struct hr_fit f;
	cr_assert_eq(hr_fit_solve(HR_FIT_RING, p, n, &f), 0);
	cr_assert_float_eq(f.alpha_us, 7.5, 7.5e-9);
	cr_assert_float_eq(f.bw_gbps, 42.0, 42e-9);
	cr_assert_eq(f.alpha_clamped, 0);
	cr_assert_gt(f.r2, 1 - 1e-12);
	cr_assert_lt(f.rms_rel_pct, 1e-9);
	cr_assert_eq(f.npoints, n);
	cr_assert_eq(f.min_nranks, 2);
	cr_assert_eq(f.max_nranks, 16);
}

Test(fit, recovers_log_within_1pct_with_noise)
{
	struct hr_fit_point p[64];
	int ranks[] = { 2, 4, 8 };
	size_t n = synth(HR_FIT_LOG, 20.0, 350.0, ranks, 3, 0.005, p);
	struct hr_fit f;
	cr_assert_eq(hr_fit_solve(HR_FIT_LOG, p, n, &f), 0);
	cr_assert(fabs(f.alpha_us / 20.0 - 1) < 0.01, "alpha %g", f.alpha_us);
	cr_assert(fabs(f.bw_gbps / 350.0 - 1) < 0.01, "B %g", f.bw_gbps);
	/* the residuals are the +-0.5% noise, give or take the fit */
	cr_assert(f.rms_rel_pct > 0.3 && f.rms_rel_pct < 0.7, "rms %g", f.rms_rel_pct);
}

Test(fit, recovers_ring_within_1pct_with_noise_one_rank_count)
{
	struct hr_fit_point p[64];
	int ranks[] = { 4 };
	size_t n = synth(HR_FIT_RING, 3.0, 12.5, ranks, 1, 0.003, p);
	struct hr_fit f;
	cr_assert_eq(hr_fit_solve(HR_FIT_RING, p, n, &f), 0);
	cr_assert(fabs(f.alpha_us / 3.0 - 1) < 0.01, "alpha %g", f.alpha_us);
	cr_assert(fabs(f.bw_gbps / 12.5 - 1) < 0.01, "B %g", f.bw_gbps);
}

Test(fit, ring_and_log_differ_across_rank_counts)
{
	/* data made by the ring model fits the log model worse */
	struct hr_fit_point p[64];
	int ranks[] = { 2, 8, 32 };
	size_t n = synth(HR_FIT_RING, 10.0, 20.0, ranks, 3, 0, p);
	struct hr_fit ring, lg;
	cr_assert_eq(hr_fit_solve(HR_FIT_RING, p, n, &ring), 0);
	cr_assert_eq(hr_fit_solve(HR_FIT_LOG, p, n, &lg), 0);
	cr_assert_lt(ring.rms_rel_pct, 1e-9);
	cr_assert_gt(lg.rms_rel_pct, 1.0);
}

Test(fit, negative_alpha_is_clamped)
{
	/* pure bandwidth minus a little: the free fit wants alpha < 0 */
	struct hr_fit_point p[] = {
		{ 1e6, 4, 1e6 * 1.5 / 1e4 - 1 }, { 1e7, 4, 1e7 * 1.5 / 1e4 - 1 },
		{ 1e8, 4, 1e8 * 1.5 / 1e4 - 1 },
	};
	struct hr_fit f;
	cr_assert_eq(hr_fit_solve(HR_FIT_RING, p, 3, &f), 0);
	cr_assert_eq(f.alpha_clamped, 1);
	cr_assert_float_eq(f.alpha_us, 0, 0);
	cr_assert(fabs(f.bw_gbps / 10.0 - 1) < 0.01, "B %g", f.bw_gbps);
}

Test(fit, rejects_bad_input)
{
	struct hr_fit f;
	struct hr_fit_point ok[] = { { 8, 2, 5 }, { 1024, 2, 6 }, { 1 << 20, 2, 90 } };
	struct hr_fit_point neg[] = { { 8, 2, 5 }, { 1024, 2, -6 }, { 1 << 20, 2, 90 } };
	struct hr_fit_point one[] = { { 8, 1, 5 }, { 1024, 2, 6 }, { 1 << 20, 2, 90 } };
	struct hr_fit_point same[] = { { 64, 2, 5 }, { 64, 2, 6 }, { 64, 2, 7 } };
	struct hr_fit_point nan_[] = { { 8, 2, NAN }, { 1024, 2, 6 }, { 1 << 20, 2, 90 } };
	cr_assert_eq(hr_fit_solve(HR_FIT_RING, ok, 2, &f), CH_ERR_USAGE);
	cr_assert_eq(hr_fit_solve(HR_FIT_RING, neg, 3, &f), CH_ERR_USAGE);
	cr_assert_eq(hr_fit_solve(HR_FIT_RING, one, 3, &f), CH_ERR_USAGE);
	cr_assert_eq(hr_fit_solve(HR_FIT_RING, same, 3, &f), CH_ERR_USAGE);
	cr_assert_eq(hr_fit_solve(HR_FIT_RING, nan_, 3, &f), CH_ERR_USAGE);
	cr_assert_eq(hr_fit_solve(HR_FIT_RING, ok, 3, &f), 0);
}

Test(fit, no_bandwidth_term)
{
	/* time falls with size: no positive B fits */
	struct hr_fit_point p[] = { { 8, 2, 50 }, { 1e6, 2, 40 }, { 1e8, 2, 30 } };
	struct hr_fit f;
	cr_assert_eq(hr_fit_solve(HR_FIT_RING, p, 3, &f), CH_ERR_CHECK);
}
