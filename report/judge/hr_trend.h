/*
 * hr_trend.h - the regression rule on one series of nightly values (a
 * value against the median of its own trailing nights), with the settings
 * of the history's check, the change detector's among them
 * (hr_detect.h). `health_report history` (report/history/hr_history.h)
 * runs it over the recorded nights; the judge over the runs of the inputs
 * (report/judge/hr_rule_history.c). Method: docs/workflows.md.
 */
#ifndef HR_TREND_H
#define HR_TREND_H

#include <stddef.h>

#include "report/judge/hr_detect.h"

#ifdef __cplusplus
extern "C" {
#endif

struct hr_check_cfg {
	int window;           /* nights in the trailing baseline (14) */
	int min_nights;       /* fewest nights for a baseline (3) */
	double threshold_pct; /* a drop of at least this much regresses (10) */
	int persist;          /* consecutive nights for REGRESSED (2) */
	double alpha;         /* false-alarm budget per node and night (0.0001) */
	int comparisons;      /* series of the node checked that night (Bonferroni; >= 1) */
	double floor_frac;    /* least spread, fraction of the baseline (0.001) */
	double z_min;         /* least cut-off on the robust z (3.5) */
	struct hr_cusum_cfg cusum; /* the change detector (its window and
				 min_nights are taken from the above) */
};

/** hr_check_cfg_init - the defaults: 14 nights, at least 3, 10%, 2 nights
 * to persist, 0.0001 false alarms per node and night, 1 comparison. */
void hr_check_cfg_init(struct hr_check_cfg *c);

/* What the regression rule found on one series. */
struct hr_trend {
	size_t since;         /* index of the first night of the regressed run */
	double baseline;      /* median of the up to cfg->window values before since */
	double pct;           /* drop of the last value below the baseline, % */
	double spread_pct;    /* 1.4826 x MAD of those values (floored), % of the baseline */
	double z;             /* the last value's robust z: (value - baseline) / spread */
	double cut;           /* the cut-off on -z it passed */
	int nights;           /* nights in the regressed run (n - since) */
};

#define HR_TREND_NONE 0
#define HR_TREND_ONCE 1      /* the last night only: WARN, "regressed once; re-run" */
#define HR_TREND_REGRESSED 2 /* cfg->persist consecutive nights or more: REGRESSED */

/**
 * hr_history_trend - the regression rule on one series.
 * @v:   [in] @n values, oldest first; v[n-1] is the night checked.
 * @cfg: [in] window, min_nights, threshold, persist, alpha, comparisons.
 * @t:   [out] what was found (set when the return is not HR_TREND_NONE).
 * A night regressed against a baseline (the median of the up to
 * cfg->window nights before the run, at least min_nights of them) when it
 * is at least threshold_pct below it AND its robust z, (value - baseline)
 * / max(1.4826 x MAD, floor_frac x baseline) over those nights, is at or
 * below -hr_cutoff(alpha, comparisons, nights, z_min) (hr_quality.h: the
 * series' own night-to-night spread, corrected for the series checked for
 * the node and for how few nights estimate it); in a run of persist
 * nights or more each night needs only the cut-off at the persist-th root
 * of alpha / comparisons (two nights that each have probability p have
 * p^2 together). The run starts at the
 * earliest night s such that every night of v[s..n-1] regressed against
 * the nights before s, so that a long regression does not hide by pulling
 * its own baseline down. Cost O(n x (window + n)).
 * Returns HR_TREND_REGRESSED when the run has at least cfg->persist nights,
 * HR_TREND_ONCE when it is the last night alone (or shorter than persist),
 * HR_TREND_NONE when v[n-1] did not regress or there are fewer than
 * min_nights earlier values.
 */
int hr_history_trend(const double *v, size_t n, const struct hr_check_cfg *cfg, struct hr_trend *t);

/**
 * hr_history_regressed - the regression rule on one series.
 * @v:     [in] @n values, oldest first; v[n-1] is the night checked.
 * @cfg:   [in] window, min_nights and threshold.
 * @since: [out] index of the first night of the regressed run.
 * @baseline: [out] median of the up to cfg->window values before @since.
 * @pct:   [out] drop of v[n-1] below @baseline, in %.
 * The run starts at the earliest night s such that every value of
 * v[s..n-1] is at least threshold_pct below the median of the up to
 * cfg->window values before s (with at least min_nights of them); a
 * regression that lasts longer than half the window therefore does not hide
 * by pulling its own baseline down; hr_history_trend() with its outputs.
 * Returns its HR_TREND_* (0 none; outputs set otherwise).
 */
int hr_history_regressed(const double *v, size_t n, const struct hr_check_cfg *cfg,
			 size_t *since, double *baseline, double *pct);

#ifdef __cplusplus
}
#endif
#endif
