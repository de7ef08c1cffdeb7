#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "base/ch_common.h"
#include "report/judge/hr_detect.h"

/* a fixed-seed generator of normal and t3 draws (xorshift64*, Box-Muller) */
static uint64_t rs = 88172645463325252ull;
static double unif(void)
{
	rs ^= rs >> 12;
	rs ^= rs << 25;
	rs ^= rs >> 27;
	return ((rs * 2685821657736338717ull) >> 11) * (1.0 / 9007199254740992.0) + 1e-18;
}
static double gauss(void)
{
	return sqrt(-2 * log(unif())) * cos(2 * M_PI * unif());
}
static double t3(void)
{
	double c = 0;
	for (int i = 0; i < 3; i++) {
		double z = gauss();
		c += z * z;
	}
	return gauss() / sqrt(c / 3);
}

Test(detect, residuals_leave_out_the_series_level)
{
	/* a series always 2% slow: its own level, no residual */
	double v[5] = { 98, 98, 98, 98, 98 }, r[5];
	cr_assert_eq(hr_noise_residuals(v, 5, 14, r), 5);
	for (int i = 0; i < 5; i++)
		cr_assert_float_eq(r[i], 0, 1e-15);
	/* one night 10% low: ln 0.9 below the others' median, scaled by
	 * sqrt(1 + pi / 8) for the median of 4 */
	v[2] = 98 * 0.9;
	hr_noise_residuals(v, 5, 14, r);
	cr_assert_float_eq(r[2], log(0.9) / sqrt(1 + M_PI / 8), 1e-12);
	/* too few values, and values that are not > 0 */
	cr_assert_eq(hr_noise_residuals(v, 2, 14, r), 0);
	double bad[4] = { 1, NAN, 0, -1 };
	cr_assert_eq(hr_noise_residuals(bad, 4, 14, r), 0);
	/* the window keeps the last nights only */
	double w[6] = { 1, 1, 1, 2, 2, 2 };
	cr_assert_eq(hr_noise_residuals(w, 6, 3, r), 3);
	cr_assert_float_eq(r[0], 0, 1e-15);
}

Test(detect, pooled_sigma_and_tail_weight)
{
	enum { N = 20000 };
	static double r[N], u[N];
	int i;
	for (i = 0; i < N; i++)
		r[i] = 0.03 * gauss();
	double s = hr_noise_sigma(r, N, 0.001);
	cr_assert(fabs(s - 0.03) < 0.0015, "sigma of N(0, 3%%): %g", s);
	cr_assert_float_eq(hr_noise_sigma(r, 0, 0.001), 0, 0);
	for (i = 0; i < N; i++)
		u[i] = gauss();
	double wn = hr_noise_tail_weight(u, N);
	for (i = 0; i < N; i++)
		u[i] = t3();
	double wt = hr_noise_tail_weight(u, N);
	cr_assert(wn < 0.15, "normal noise, tail weight %g", wn);
	cr_assert(wt > 0.8, "t3 noise, tail weight %g", wt);
	/* too few to learn a tail: the heavy one assumed */
	cr_assert_float_eq(hr_noise_tail_weight(u, HR_DETECT_MIN_TAIL - 1), 1, 0);
	/* the model: symmetric, median |u| 0.6745 whatever the weight */
	cr_assert_float_eq(hr_noise_cdf(0, 0.3), 0.5, 1e-12);
	cr_assert_float_eq(hr_noise_cdf(0.6744897501960817, 1) - hr_noise_cdf(-0.6744897501960817, 1), 0.5, 1e-6);
	cr_assert_float_eq(hr_noise_cdf(-1.959964, 0), 0.025, 1e-6);
}

Test(detect, run_length_of_the_chain)
{
	/* textbook: CUSUM k = 0.5, h = 4 and 5 on N(0, 1), no clip: ARL0 336
	 * and 930 (Montgomery, Statistical Quality Control, table 9.3) */
	cr_assert(fabs(hr_cusum_arl(4, 0.5, 100, 0) / 336 - 1) < 0.03, "%g", hr_cusum_arl(4, 0.5, 100, 0));
	cr_assert(fabs(hr_cusum_arl(5, 0.5, 100, 0) / 930 - 1) < 0.03, "%g", hr_cusum_arl(5, 0.5, 100, 0));
	/* the threshold reaches its run length, and heavier tails need more */
	double h0 = hr_cusum_threshold(1e5, 1.5, 4, 0, 0), h1 = hr_cusum_threshold(1e5, 1.5, 4, 1, 0);
	cr_assert(hr_cusum_arl(h0, 1.5, 4, 0) >= 1e5 * 0.999);
	cr_assert(h1 > h0 + 1, "t3 %g vs normal %g", h1, h0);
	/* one clipped night can never reach h (c - k = 2.5) */
	cr_assert(h0 > 2.5 && h1 > 2.5);
}

/* the chain against simulation: clipped CUSUM on t3 and normal noise */
Test(detect, run_length_matches_simulation)
{
	for (int m = 0; m < 2; m++) {
		double w = m, h = m ? 3.5 : 2.0, arl = hr_cusum_arl(h, 1.5, 4, w), tot = 0;
		const double s3 = 0.6744897501960817 / 0.7648923;
		int runs = 2000;
		for (int r = 0; r < runs; r++) {
			double s = 0;
			int t = 0;
			while (s <= h) {
				double u = m ? t3() * s3 : gauss();
				u = u > 4 ? 4 : u < -4 ? -4 : u;
				s = fmax(0, s - u - 1.5);
				t++;
			}
			tot += t;
		}
		/* mean of 2000 run lengths: sd about ARL / sqrt(2000), 2.2% */
		cr_assert(fabs(tot / runs / arl - 1) < 0.1, "w %g: simulated ARL %g, chain %g", w, tot / runs, arl);
	}
}

Test(detect, cusum_dates_and_sizes_a_lasting_drop)
{
	struct hr_cusum_cfg cfg;
	struct hr_cusum c;
	double v[20];
	int i;
	hr_cusum_cfg_init(&cfg);
	double h = hr_cusum_threshold(63 / cfg.alpha, cfg.k, cfg.clip, 0, 14);
	/* 14 nights of a GPU 2% slow (its offset), 3% noise as a fixed pattern,
	 * then 12% down */
	const double e[20] = { .01, -.02, .03, -.01, 0, .02, -.03, .01, -.01, .02, 0, -.02, .01, 0,
			       .01, -.02, .0, .02, -.01, .01 };
	for (i = 0; i < 20; i++)
		v[i] = 98 * exp(e[i]) * (i >= 14 ? 0.88 : 1);
	int first = -1;
	for (int n = 15; n <= 20; n++) {
		cr_assert_eq(hr_cusum_run(v, (size_t)n, 0.03, &cfg, &c), 0);
		if (first < 0 && c.s > h)
			first = n - 14;
	}
	cr_assert(first >= 1 && first <= 3, "REGRESSED on night %d of the drop (h %g)", first, h);
	cr_assert_eq(c.since, 14);
	cr_assert_eq(c.nights, 6);
	cr_assert_eq(c.nref, 14);
	cr_assert(fabs(c.pct - 12) < 2, "drop %g%%", c.pct);
	cr_assert(fabs(c.reference - 98) < 1.5, "reference %g", c.reference);
	/* the same series without the drop: nothing */
	for (i = 0; i < 20; i++)
		v[i] = 98 * exp(e[i]);
	hr_cusum_run(v, 20, 0.03, &cfg, &c);
	cr_assert(c.s < h, "healthy S %g", c.s);
	/* one far night (a tail: -50%) counts only c - k, below h */
	v[17] = 49;
	hr_cusum_run(v, 18, 0.03, &cfg, &c);
	cr_assert(c.s > 0 && c.s <= cfg.clip - cfg.k + 1e-12 && c.s < h, "one far night: S %g", c.s);
	cr_assert_eq(c.nights, 1);
	/* too few nights before: not judged */
	hr_cusum_run(v, 3, 0.03, &cfg, &c);
	cr_assert_eq(c.judged, 0);
}

Test(detect, cusum_refuses_bad_values)
{
	struct hr_cusum_cfg cfg;
	struct hr_cusum c;
	hr_cusum_cfg_init(&cfg);
	double v[5] = { 1, 1, 1, 1, 1 };
	cr_assert_eq(hr_cusum_run(v, 5, 0, &cfg, &c), CH_ERR_USAGE);
	v[4] = NAN;
	cr_assert_eq(hr_cusum_run(v, 5, 0.01, &cfg, &c), CH_ERR_USAGE);
	v[4] = 0;
	cr_assert_eq(hr_cusum_run(v, 5, 0.01, &cfg, &c), CH_ERR_USAGE);
	v[4] = -1;
	cr_assert_eq(hr_cusum_run(v, 5, 0.01, &cfg, &c), CH_ERR_USAGE);
}

/*
 * Statistical tests of the whole detector as the history runs it: series
 * of healthy values (a persistent offset per series, night-to-night noise
 * normal or t3), the noise learned from the pooled residuals as
 * hr_noise_pool does, the threshold from the budget and the reference's
 * nights, the CUSUM run night by night. Counts over enough series that a
 * correct design passes reliably and one twice as bad fails.
 */
#define NSER 400
#define NIGHTS 44 /* 14 to learn, then 30 judged */

static void draw_series(double v[NSER][NIGHTS], double sd, int heavy, double drop, int from)
{
	for (int s = 0; s < NSER; s++) {
		double off = exp(0.01 * gauss());
		for (int t = 0; t < NIGHTS; t++) {
			double e = heavy ? t3() / sqrt(3.0) : gauss();
			v[s][t] = 100 * off * exp(sd * e) * (t >= from ? 1 - drop : 1);
		}
	}
}

/* the class's sigma and the tail weight, from the series' first 14 nights */
static double learn(double v[NSER][NIGHTS], double *w)
{
	static double r[NSER * 14], u[NSER * 14];
	size_t n = 0;
	for (int s = 0; s < NSER; s++)
		n += hr_noise_residuals(v[s], 14, 14, r + n);
	for (size_t i = 0; i < n; i++)
		u[i] = r[i];
	double sigma = hr_noise_sigma(r, n, 0.001);
	for (size_t i = 0; i < n; i++)
		u[i] /= sigma;
	*w = hr_noise_tail_weight(u, n);
	return sigma;
}

/* nights flagged among the judged ones, at a budget of one false alarm per
 * @arl0 nights per series */
static int flagged_nights(double v[NSER][NIGHTS], double arl0, int *judged)
{
	struct hr_cusum_cfg cfg;
	struct hr_cusum c;
	double w, sigma = learn(v, &w), h[64] = { 0 };
	int flags = 0;
	hr_cusum_cfg_init(&cfg);
	*judged = 0;
	for (int s = 0; s < NSER; s++)
		for (int n = cfg.min_nights + 1; n <= NIGHTS; n++) {
			hr_cusum_run(v[s], (size_t)n, sigma, &cfg, &c);
			if (!h[c.nref])
				h[c.nref] = hr_cusum_threshold(HR_DETECT_NIGHTS_PER_ALARM * arl0, cfg.k, cfg.clip, w, c.nref);
			flags += c.s > h[c.nref];
			(*judged)++;
		}
	return flags;
}

Test(detect, false_alarms_within_budget_normal_and_t3, .timeout = 120)
{
	static double v[NSER][NIGHTS];
	/* every night from the first with 7 reference nights (references of 7
	 * to 14 nights), a budget of 1 in 200 series-nights (so that it can be
	 * counted): at most 74 of 14,800 expected; a design twice as bad makes
	 * 148 */
	for (int heavy = 0; heavy < 2; heavy++) {
		int judged, f;
		draw_series(v, 0.03, heavy, 0, NIGHTS);
		f = flagged_nights(v, 200, &judged);
		cr_log_info("%s noise: %d of %d series-nights flagged (budget 74)", heavy ? "t3" : "normal", f, judged);
		cr_assert_eq(judged, NSER * (NIGHTS - 7));
		cr_assert(f <= 104, "%s noise: %d of %d series-nights flagged (budget 74)", heavy ? "t3" : "normal", f,
			  judged);
	}
}

/* nights from the drop (night 14) to REGRESSED, at the history's budget
 * for a node of 63 series; 99 when not within the 30 */
static void nights_to_detect(double v[NSER][NIGHTS], int *out)
{
	struct hr_cusum_cfg cfg;
	struct hr_cusum c;
	double w, sigma = learn(v, &w), h = 0;
	hr_cusum_cfg_init(&cfg);
	for (int s = 0; s < NSER; s++) {
		out[s] = 99;
		for (int n = 15; n <= NIGHTS; n++) {
			hr_cusum_run(v[s], (size_t)n, sigma, &cfg, &c);
			if (!h)
				h = hr_cusum_threshold(HR_DETECT_NIGHTS_PER_ALARM * 63 / cfg.alpha, cfg.k, cfg.clip, w, c.nref);
			if (c.s > h) {
				out[s] = n - 14;
				break;
			}
		}
	}
}

static int within(const int *n, int nights)
{
	int k = 0;
	for (int s = 0; s < NSER; s++)
		k += n[s] <= nights;
	return k;
}

Test(detect, lasting_drops_found_within_nights, .timeout = 120)
{
	static double v[NSER][NIGHTS];
	int n[NSER];
	/* targets: 10% at 3% noise within 3 nights in the median, 5 nights in
	 * 95% of series; 5% at 1% noise within 3 nights in the median */
	draw_series(v, 0.03, 0, 0.10, 14);
	nights_to_detect(v, n);
	cr_log_info("10%% at 3%%: within 1, 2, 3, 5 nights: %d %d %d %d of %d", within(n, 1), within(n, 2), within(n, 3),
		    within(n, 5), NSER);
	cr_assert(within(n, 3) >= NSER / 2 + 40, "10%% at 3%%: %d of %d within 3 nights", within(n, 3), NSER);
	cr_assert(within(n, 5) >= NSER * 90 / 100, "10%% at 3%%: %d of %d within 5 nights", within(n, 5), NSER);
	draw_series(v, 0.01, 0, 0.05, 14);
	nights_to_detect(v, n);
	cr_log_info("5%% at 1%%: within 1, 2, 3 nights: %d %d %d of %d", within(n, 1), within(n, 2), within(n, 3), NSER);
	cr_assert(within(n, 3) >= NSER / 2 + 40, "5%% at 1%%: %d of %d within 3 nights", within(n, 3), NSER);
	/* heavy tails cost a night or so, never the finding */
	draw_series(v, 0.03, 1, 0.10, 14);
	nights_to_detect(v, n);
	cr_log_info("10%% at t3 3%%: within 3, 5 nights: %d %d of %d", within(n, 3), within(n, 5), NSER);
	cr_assert(within(n, 5) >= NSER / 2 + 40, "10%% at t3 3%%: %d of %d within 5 nights", within(n, 5), NSER);
}

/* the same, further in the tail: 25 fleets of 400 series, 1 false alarm in
 * 2,000 series-nights allowed: at most 185 of 370,000 expected; a design
 * twice as bad makes 370 */
Test(detect, false_alarms_within_budget_far_tail, .timeout = 300)
{
	static double v[NSER][NIGHTS];
	for (int heavy = 0; heavy < 2; heavy++) {
		int judged, f = 0, all = 0;
		for (int b = 0; b < 25; b++) {
			draw_series(v, 0.03, heavy, 0, NIGHTS);
			f += flagged_nights(v, 2000, &judged);
			all += judged;
		}
		cr_log_info("%s noise: %d of %d series-nights flagged (budget 185)", heavy ? "t3" : "normal", f, all);
		cr_assert(f <= 259, "%s noise: %d of %d series-nights flagged (budget 185)", heavy ? "t3" : "normal", f,
			  all);
	}
}
