#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/ch_common.h"
#include "report/judge/hr_detect.h"
#include "report/judge/hr_rules.h"

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

/* ------------------------------------------------- far nights, agreement */

Test(detect, night_tail_squares_the_chance_of_two_measurements)
{
	double z, p1 = hr_night_tail(log(0.9), 0, 0.03, 0, 0, 0, &z);
	cr_assert_float_eq(z, log(0.9) / 0.03, 1e-12);
	cr_assert_float_eq(p1, 0.5 * erfc(-z / M_SQRT2), 1e-15);
	/* measured twice: both must be that low */
	cr_assert_float_eq(hr_night_tail(log(0.9), 0, 0.03, 0, 0, 1, NULL), p1 * p1, 1e-20);
	/* the reference's own error widens the spread: a less improbable night */
	double p7 = hr_night_tail(log(0.9), 0, 0.03, 0, 7, 0, &z);
	cr_assert(p7 > p1, "%g %g", p7, p1);
	cr_assert_float_eq(z, log(0.9) / (0.03 * sqrt(1 + pow(hr_noise_ref_sd(7, 0), 2))), 1e-12);
	/* the heavy tail: the same night is much less improbable */
	cr_assert(hr_night_tail(log(0.8), 0, 0.02, 1, 0, 0, NULL) > 1000 * hr_night_tail(log(0.8), 0, 0.02, 0, 0, 0, NULL));
}

Test(detect, far_run_multiplies_its_nights_against_the_reference)
{
	double v[12], both[12];
	struct hr_far f;
	for (int i = 0; i < 12; i++) {
		v[i] = 100;
		both[i] = NAN;
	}
	v[10] = v[11] = 85;
	both[11] = 88; /* night 11 measured twice: 85 and ... the larger 88 */
	cr_assert_eq(hr_far_run(v, both, 12, 10, 14, 0.03, 0, &f), 0);
	double p10 = hr_night_tail(log(85.0 / 100), 0, 0.03, 0, 10, 0, NULL);
	double p11 = hr_night_tail(log(88.0 / 100), 0, 0.03, 0, 10, 1, NULL);
	cr_assert_float_eq(f.p, p10 * p11, 1e-12 * p10 * p11);
	cr_assert_float_eq(f.p_last, p11, 1e-12 * p11);
	cr_assert_float_eq(f.reference, 100, 1e-9);
	cr_assert_float_eq(f.pct, 15, 1e-9);
	cr_assert_float_eq(f.pct_both, 12, 1e-9);
	cr_assert_eq(f.nref, 10);
	cr_assert_eq(f.twice, 1);
	/* NULL: every night measured once */
	cr_assert_eq(hr_far_run(v, NULL, 12, 11, 14, 0.03, 0, &f), 0);
	cr_assert_eq(f.twice, 0);
	cr_assert_float_eq(f.pct_both, f.pct, 1e-9);
	/* the reference: the window before the run only, winsorized */
	v[3] = 10; /* one far night among the reference's: 2.5 sigma at most */
	cr_assert_eq(hr_far_run(v, NULL, 12, 11, 14, 0.03, 0, &f), 0);
	cr_assert_float_eq(f.reference, 100 * exp(-2 * 2.5 * 0.03 / 11), 1e-9); /* nights 3 and 10 at -2.5 sigma */
	/* too few nights before the run, no noise */
	cr_assert_eq(hr_far_run(v, NULL, 12, 2, 14, 0.03, 0, &f), -1);
	cr_assert_eq(hr_far_run(v, NULL, 12, 11, 14, 0, 0, &f), -1);
}

/*
 * Series as the history records them (make-nights.py, roofline): a night's
 * first measurement, and where it is more than 5% below the series' level
 * (flagged) a fresh re-measurement: the value recorded is their mean, the
 * larger one the night's agreement (both). The noise learned through the
 * pool, as the history does.
 */
static void draw_recorded(double v[NSER][NIGHTS], double both[NSER][NIGHTS], double sd, int heavy, double drop,
			  int from, struct hr_noise_pool *pool, double *sigma)
{
	size_t nres;
	for (int s = 0; s < NSER; s++) {
		double off = exp(0.01 * gauss());
		for (int t = 0; t < NIGHTS; t++) {
			double lvl = 100 * off * (t >= from ? 1 - drop : 1);
			double x = lvl * exp(sd * (heavy ? t3() / sqrt(3.0) : gauss()));
			both[s][t] = NAN;
			v[s][t] = x;
			if (x < 0.95 * 100 * off) {
				double y = lvl * exp(sd * (heavy ? t3() / sqrt(3.0) : gauss()));
				v[s][t] = 0.5 * (x + y);
				both[s][t] = x > y ? x : y;
			}
		}
		if (pool) {
			double single[NIGHTS];
			hr_noise_single(v[s], both[s], 14, 14, single);
			cr_assert_eq(hr_noise_pool_add(pool, "m@gpu", v[s], single, 14, 14), 0);
		}
	}
	if (pool) {
		cr_assert_eq(hr_noise_pool_fit(pool, 0.001), 0);
		cr_assert_eq(hr_noise_pool_sigma(pool, "m@gpu", sigma, &nres), 0);
	}
}

/* healthy nights whose chance is within @a, over @rounds x NSER series x 30 nights */
static int far_nights(int heavy, double a, int rounds, int *all, double *wout)
{
	static double v[NSER][NIGHTS], both[NSER][NIGHTS];
	int k = 0;
	*all = 0;
	for (int b = 0; b < rounds; b++) {
		struct hr_noise_pool *pool = hr_noise_pool_new();
		double sigma;
		struct hr_far f;
		draw_recorded(v, both, 0.03, heavy, 0, NIGHTS, pool, &sigma);
		*wout = hr_noise_pool_tail(pool);
		for (int s = 0; s < NSER; s++)
			for (int n = 15; n <= NIGHTS; n++) {
				cr_assert_eq(hr_far_run(v[s], both[s], (size_t)n, (size_t)n - 1, 14, sigma, *wout, &f), 0);
				k += f.p_last <= a;
				(*all)++;
			}
		hr_noise_pool_free(pool);
	}
	return k;
}

/* The chance of a night is what it says: healthy nights within a chance
 * of 1 in 500 are about 1 in 500 of them, normal or t3 noise, with the
 * low side thinned by the agreement of re-measurements. 24,000 nights: 48
 * expected; at most 72 allowed (a design twice as bad, e.g. t3 taken as
 * normal or a single measurement's chance squared, makes 96 or more). The
 * tail weight is learned from one measurement a night (hr_noise_single()):
 * t3 noise above 0.7 (0.85 here; the recorded means alone gave 0.56),
 * normal noise under 0.3. */
Test(detect, far_night_chance_is_calibrated, .timeout = 120)
{
	for (int heavy = 0; heavy < 2; heavy++) {
		int all;
		double w;
		int k = far_nights(heavy, 1.0 / 500, 2, &all, &w);
		cr_log_info("%s: %d of %d healthy nights within 1/500 (tail weight %.2f)", heavy ? "t3" : "normal", k, all, w);
		cr_assert(k <= 72, "%s noise: %d of %d healthy nights within a chance of 1/500 (48 expected, tail weight %.2f)",
			  heavy ? "t3" : "normal", k, all, w);
		if (heavy)
			cr_assert(w > 0.7, "t3 noise learned with tail weight %.2f", w);
		else
			cr_assert(w < 0.3, "normal noise learned with tail weight %.2f", w);
	}
}

/* A 20% drop on the night it appears, both measurements of it low, at 3%
 * noise: WARN (the larger measurement the rule's first_night_pct, 12%, or
 * more below, its chance within the budget of a node of 63 series, 0.00002
 * / 63) in 90% of series or more at normal noise (about 99% expected: each
 * measurement is above -12% in well under 1% of nights). At t3 noise,
 * learned as such (tail weight near 1), a healthy measurement is 12% low in
 * about 1 night of 320, so both are in about 1 of 100,000, above the
 * budget: only nights whose two measurements are both further out reach
 * it, a small share of them; at least 6% asserted.
 * A design that judged the night by its first measurement's chance alone
 * would reach it at t3 noise never. Healthy t3 nights: none within it
 * (12,000 nights). */
Test(detect, twenty_percent_drop_flagged_the_night_it_appears, .timeout = 120)
{
	static double v[NSER][NIGHTS], both[NSER][NIGHTS];
	for (int heavy = 0; heavy < 2; heavy++) {
		struct hr_noise_pool *pool = hr_noise_pool_new();
		double sigma;
		struct hr_far f;
		int hit = 0;
		draw_recorded(v, both, 0.03, heavy, 0.20, 14, pool, &sigma);
		for (int s = 0; s < NSER; s++) {
			cr_assert_eq(hr_far_run(v[s], both[s], 15, 14, 14, sigma, hr_noise_pool_tail(pool), &f), 0);
			hit += f.twice && f.pct_both >= hr_rule_param("history_far_night", "first_night_pct") &&
			       f.p_last <= 2e-5 / 63;
		}
		cr_log_info("%s: 20%% drop flagged the first night in %d of %d", heavy ? "t3" : "normal", hit, NSER);
		cr_assert(hit >= NSER * (heavy ? 6 : 90) / 100, "%s noise: 20%% drop flagged the first night in %d of %d",
			  heavy ? "t3" : "normal", hit, NSER);
		hr_noise_pool_free(pool);
	}
	int all;
	double w;
	int kk = far_nights(1, 2e-5 / 63, 1, &all, &w);
	cr_log_info("healthy t3 within the budget: %d of %d (w %.2f)", kk, all, w);
	cr_assert_eq(kk, 0);
}

/* The one-night report's tail weight, from the upper side of standardized
 * values: normal values learn about 0, t3 about 1 (20,000 each: 27 and 420
 * above 3 robust sd expected); too few values learn nothing (NAN); and the
 * cut-off it gives is the model's quantile: the normal one for w = 0, far
 * out for t3 (P(u <= -x) = 1e-5: 4.26 normal, about 36 for t3 in robust sd
 * units), and NAN for a chance that is no tail. */
Test(detect, one_night_tail_weight_from_the_upper_side)
{
	enum { N = 20000 };
	size_t hi_n = 0, hi_t = 0;
	for (int i = 0; i < N; i++) {
		hi_n += gauss() > 3;
		hi_t += t3() * 0.6744897501960817 / 0.7648923 > 3;
	}
	double wn = hr_noise_tail_weight_high(hi_n, N), wt = hr_noise_tail_weight_high(hi_t, N);
	cr_assert(wn >= 0 && wn < 0.1, "normal: %zu above 3 sd, tail weight %g", hi_n, wn);
	cr_assert(wt > 0.8 && wt <= 1, "t3: %zu above 3 sd, tail weight %g", hi_t, wt);
	cr_assert(isnan(hr_noise_tail_weight_high(5, HR_DETECT_MIN_TAIL - 1)));
	cr_assert_float_eq(hr_noise_tail_weight_high(0, 1000), 0, 0);
	cr_assert_float_eq(hr_noise_tail_weight_high(1000, 1000), 1, 0);
	cr_assert_float_eq(hr_noise_cut(1e-5, 0), 4.264890794, 1e-6);
	double c = hr_noise_cut(1e-5, 1);
	cr_assert_float_eq(hr_noise_cdf(-c, 1), 1e-5, 1e-9);
	cr_assert(c > 30 && c < 45, "t3 cut-off at 1e-5: %g", c);
	/* docs/health_report.md's heavy-tail cut-offs for a value measured
	 * twice, a node's 177 comparisons: flags at sqrt(1e-4 / 177), a FAIL at
	 * sqrt(1e-6 / 177) (fail_false_alarm_per_node) */
	cr_assert_float_eq(hr_noise_cut(sqrt(1e-4 / 177), 1), 9.9, 0.05);
	cr_assert_float_eq(hr_noise_cut(sqrt(1e-6 / 177), 1), 21.5, 0.05);
	cr_assert_float_eq(hr_noise_cut(sqrt(1e-6 / 177), 0.6), 18.2, 0.05);
	cr_assert_float_eq(hr_noise_cut(1e-4 / 177, 1), 110.2, 0.05);
	cr_assert(isnan(hr_noise_cut(0, 0.5)));
	cr_assert(isnan(hr_noise_cut(NAN, 0.5)));
	cr_assert(isnan(hr_noise_cut(0.7, 0.5)));
}

/* Pooled leave-one-out residuals of pure t3 series of 8 nights (their
 * median's error thins the tail) are learned as t3 by the residuals' model
 * (w > 0.8), where the plain model of the noise reads them lighter; normal
 * series stay normal (w < 0.15). */
Test(detect, tail_weight_of_leave_one_out_residuals)
{
	enum { S = 3000, M = 8 };
	static double u[S * M], u2[S * M];
	for (int heavy = 0; heavy < 2; heavy++) {
		size_t n = 0, count[HR_DETECT_LOO_MAXM + 1] = { 0 };
		double v[M], r[M];
		for (int s = 0; s < S; s++) {
			for (int t = 0; t < M; t++)
				v[t] = exp(0.03 * (heavy ? t3() / sqrt(3.0) : gauss()));
			size_t m = hr_noise_residuals(v, M, 14, r);
			count[m] += m;
			for (size_t i = 0; i < m; i++)
				u[n++] = r[i];
		}
		double sigma;
		memcpy(u2, u, n * sizeof(double));
		sigma = hr_noise_sigma(u2, n, 1e-6);
		for (size_t i = 0; i < n; i++)
			u[i] /= sigma;
		memcpy(u2, u, n * sizeof(double));
		double w = hr_noise_tail_weight_loo(u, n, count, HR_DETECT_LOO_MAXM);
		double plain = hr_noise_tail_weight(u2, n);
		cr_log_info("%s: tail weight %.2f (the plain model of the noise: %.2f)", heavy ? "t3" : "normal", w, plain);
		if (heavy)
			cr_assert(w > 0.8, "t3 residuals of 8 nights: tail weight %.2f (plain %.2f)", w, plain);
		else
			cr_assert(w < 0.15, "normal residuals: tail weight %.2f", w);
	}
}
