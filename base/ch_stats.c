#include "base/ch_stats.h"
#include "base/ch_common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double ch_percentile_sorted(const double *s, size_t n, double p)
{
	double pos, frac;
	size_t lo;

	if (n == 1)
		return s[0];
	pos = p / 100.0 * (double)(n - 1);
	lo = (size_t)floor(pos);
	if (lo >= n - 1)
		return s[n - 1];
	frac = pos - (double)lo;
	return s[lo] + frac * (s[lo + 1] - s[lo]);
}

/* a sorted copy of x[0..n) (n > 0), to free; NULL when out of memory */
static double *sorted_copy(const double *x, size_t n)
{
	double *s = malloc(n * sizeof(*s));
	if (s) {
		memcpy(s, x, n * sizeof(*s));
		qsort(s, n, sizeof(*s), cmp_double);
	}
	return s;
}

int ch_stats_compute(const double *x, size_t n, struct ch_stats *out)
{
	double *s, sum = 0, ss = 0;
	size_t i;

	if (n == 0)
		return CH_ERR_USAGE;
	if (!(s = sorted_copy(x, n)))
		return CH_ERR_RUNTIME;
	for (i = 0; i < n; i++)
		sum += s[i];
	out->n = n;
	out->mean = sum / (double)n;
	for (i = 0; i < n; i++)
		ss += (s[i] - out->mean) * (s[i] - out->mean);
	out->stddev = n > 1 ? sqrt(ss / (double)(n - 1)) : 0.0;
	out->cv = out->mean != 0.0 ? out->stddev / out->mean : 0.0;
	out->min = s[0];
	out->max = s[n - 1];
	out->median = ch_percentile_sorted(s, n, 50.0);
	out->p95 = ch_percentile_sorted(s, n, 95.0);
	free(s);
	return 0;
}

/* The k-th smallest of s[0..n) (k < n) moved to s[k], the smaller before
 * it and the larger after it (Hoare's selection, median-of-three pivots);
 * 0, or -1 when it took too many rounds (s then holds the same values in
 * another order: the caller sorts instead). */
static int select_kth(double *s, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1, rounds = 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2, i = lo, j = hi;
		double a = s[lo], b = s[mid], c = s[hi], piv, t;
		if (++rounds > 64 + 4 * sizeof(size_t) * 8)
			return -1;
		piv = a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);
		while (i <= j) {
			while (s[i] < piv)
				i++;
			while (s[j] > piv)
				j--;
			if (i <= j) {
				t = s[i];
				s[i] = s[j];
				s[j] = t;
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			return 0;
	}
	return 0;
}

/* ch_percentile_sorted(sorted s, n, 50) without sorting all of @s (its
 * order is changed): the two middle order statistics by selection. Exact
 * where values that compare equal are the same double (no NaN, no -0:
 * the caller checks). Returns 0, or -1: not done (s unchanged in value). */
static int median_select(double *s, size_t n, double *out)
{
	double pos = 0.5 * (double)(n - 1), frac, lo_v, hi_v;
	size_t lo = (size_t)floor(pos), i;
	if (n == 1) {
		*out = s[0];
		return 0;
	}
	if (lo >= n - 1 || select_kth(s, n, lo))
		return -1;
	lo_v = s[lo];
	frac = pos - (double)lo;
	hi_v = s[lo + 1];
	for (i = lo + 2; i < n; i++) /* the next order statistic: the least above lo */
		if (s[i] < hi_v)
			hi_v = s[i];
	*out = lo_v + frac * (hi_v - lo_v);
	return 0;
}

/* whether every value is a number that no other equal-comparing double
 * differs from (no NaN, no negative zero) */
static int plain_values(const double *x, size_t n)
{
	size_t i;
	for (i = 0; i < n; i++)
		if (isnan(x[i]) || (x[i] == 0 && signbit(x[i])))
			return 0;
	return 1;
}

int ch_median_mad(const double *x, size_t n, double *median, double *mad)
{
	double *s;
	size_t i;

	if (n == 0)
		return CH_ERR_USAGE;
	if (plain_values(x, n)) {
		/* selection, not sorting: the same two middle values, so the
		 * same figures (a fifth of the judge's time went to sorting) */
		if (!(s = malloc(n * sizeof(*s))))
			return CH_ERR_RUNTIME;
		memcpy(s, x, n * sizeof(*s));
		if (!median_select(s, n, median)) {
			for (i = 0; i < n; i++)
				s[i] = fabs(x[i] - *median);
			if (!median_select(s, n, mad)) {
				free(s);
				return 0;
			}
		}
		free(s);
	}
	if (!(s = sorted_copy(x, n)))
		return CH_ERR_RUNTIME;
	*median = ch_percentile_sorted(s, n, 50.0);
	for (i = 0; i < n; i++)
		s[i] = fabs(x[i] - *median);
	qsort(s, n, sizeof(*s), cmp_double);
	*mad = ch_percentile_sorted(s, n, 50.0);
	free(s);
	return 0;
}

double ch_now_sec(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
