#include <criterion/criterion.h>
#include <math.h>

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
