#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/ch_common.h"
#include "base/ch_stats.h"

Test(stats, known_answers)
{
	/* 1..20 shuffled: median 10.5, p95 at position 18.05 -> 19.05 */
	double x[20] = { 7, 3, 20, 1, 15, 9, 11, 2, 18, 4, 6, 14, 19, 5, 8, 12, 16, 10, 13, 17 };
	struct ch_stats s;
	cr_assert_eq(ch_stats_compute(x, 20, &s), 0);
	cr_assert_eq(s.n, 20);
	cr_assert_float_eq(s.min, 1, 0);
	cr_assert_float_eq(s.max, 20, 0);
	cr_assert_float_eq(s.mean, 10.5, 1e-12);
	cr_assert_float_eq(s.median, 10.5, 1e-12);
	cr_assert_float_eq(s.p95, 19.05, 1e-12);
	cr_assert_float_eq(s.stddev, sqrt(35.0), 1e-12); /* var of 1..20, n-1 */
	cr_assert_float_eq(s.cv, sqrt(35.0) / 10.5, 1e-12);
	cr_assert_float_eq(x[0], 7, 0, "input was modified");
}

Test(stats, single_and_empty)
{
	double x = 4.0;
	struct ch_stats s;
	cr_assert_eq(ch_stats_compute(&x, 1, &s), 0);
	cr_assert_float_eq(s.median, 4.0, 0);
	cr_assert_float_eq(s.p95, 4.0, 0);
	cr_assert_float_eq(s.stddev, 0.0, 0);
	cr_assert_eq(ch_stats_compute(&x, 0, &s), CH_ERR_USAGE);
}

Test(stats, median_mad)
{
	double x[] = { 1, 2, 3, 4, 100 };
	double m, mad;
	cr_assert_eq(ch_median_mad(x, 5, &m, &mad), 0);
	cr_assert_float_eq(m, 3, 0);
	cr_assert_float_eq(mad, 1, 0); /* |x-3| = 2 1 0 1 97 -> median 1 */
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* the median and MAD by sorting, as ch_median_mad() computed them before
 * it selected: the figures must be the same double, bit for bit */
static void sorted_median_mad(const double *x, size_t n, double *med, double *mad)
{
	double *s = malloc(n * sizeof(*s));
	size_t i;
	cr_assert(s);
	memcpy(s, x, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_d);
	*med = ch_percentile_sorted(s, n, 50.0);
	for (i = 0; i < n; i++)
		s[i] = fabs(x[i] - *med);
	qsort(s, n, sizeof(*s), cmp_d);
	*mad = ch_percentile_sorted(s, n, 50.0);
	free(s);
}

Test(stats, median_mad_same_as_sorting)
{
	static double x[5000];
	uint64_t r = 0x9E3779B97F4A7C15ULL;
	int round;
	for (round = 0; round < 3000; round++) {
		size_t n = 1 + (size_t)(r % (round < 2000 ? 40 : 5000)), i;
		double m1, d1, m2, d2;
		int kind = round % 5;
		for (i = 0; i < n; i++) {
			r ^= r << 13;
			r ^= r >> 7;
			r ^= r << 17;
			/* distinct values, many ties, all equal, sorted, reversed; zeros
			 * (negative too: then it sorts as before) and NaN sometimes */
			x[i] = kind == 0 ? (double)(r >> 11) / 1e6 : kind == 1 ? (double)(r % 7) :
			       kind == 2 ? 3.25 : kind == 3 ? (double)i : -(double)i;
			if (round % 97 == 0 && i == n / 2)
				x[i] = round % 2 ? -0.0 : NAN;
		}
		cr_assert_eq(ch_median_mad(x, n, &m1, &d1), 0);
		sorted_median_mad(x, n, &m2, &d2);
		cr_assert(memcmp(&m1, &m2, sizeof(m1)) == 0 || (isnan(m1) && isnan(m2)),
			  "round %d n %zu: median %.17g vs %.17g", round, n, m1, m2);
		cr_assert(memcmp(&d1, &d2, sizeof(d1)) == 0 || (isnan(d1) && isnan(d2)),
			  "round %d n %zu: MAD %.17g vs %.17g", round, n, d1, d2);
	}
}
