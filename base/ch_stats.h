/*
 * ch_stats.h - summary statistics of a sample set, and the monotonic clock.
 */
#ifndef CH_STATS_H
#define CH_STATS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Summary of n samples (any unit; the caller names it). */
struct ch_stats {
	size_t n;      /* number of samples summarised */
	double min;
	double median; /* 50th percentile, linear interpolation */
	double mean;
	double p95;    /* 95th percentile, linear interpolation */
	double max;
	double stddev; /* sample standard deviation (n-1); 0 when n < 2 */
	double cv;     /* coefficient of variation, stddev / mean; 0 when mean is 0 */
};

/**
 * ch_stats_compute - summarise a sample set.
 * @x:   [in] n samples; not modified (a sorted copy is made).
 * @n:   [in] number of samples, >= 1.
 * @out: [out] the summary.
 * Percentiles use linear interpolation between closest ranks (the "R-7"
 * definition, numpy's default): position p/100 x (n-1) in the sorted set.
 * Returns 0, CH_ERR_USAGE when n is 0, CH_ERR_RUNTIME when out of memory.
 */
int ch_stats_compute(const double *x, size_t n, struct ch_stats *out);

/**
 * ch_percentile_sorted - percentile of an already sorted array.
 * @sorted: [in] n values in ascending order, n >= 1.
 * @p:      [in] percentile in [0, 100].
 * Returns the R-7 interpolated percentile.
 */
double ch_percentile_sorted(const double *sorted, size_t n, double p);

/**
 * ch_median_mad - median and median absolute deviation, for robust z-scores.
 * @x: [in] n values (n >= 1), not modified. @median, @mad: [out].
 * The MAD is not scaled; a robust z-score is 0.6745 x (x - median) / MAD
 * (Iglewicz and Hoaglin, 1993).
 * Returns 0, CH_ERR_USAGE when n is 0, CH_ERR_RUNTIME when out of memory.
 */
int ch_median_mad(const double *x, size_t n, double *median, double *mad);

/** ch_now_sec - CLOCK_MONOTONIC time in seconds. */
double ch_now_sec(void);

#ifdef __cplusplus
}
#endif
#endif
