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

int ch_median_mad(const double *x, size_t n, double *median, double *mad)
{
	double *s;
	size_t i;

	if (n == 0)
		return CH_ERR_USAGE;
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
