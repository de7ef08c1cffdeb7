/*
 * hr_quality.h - how much a verdict may rest on a figure: whether its
 * measurement was clean enough to be judged (measurement quality), and
 * how far below its like values a clean figure must lie before it is
 * improbable for a healthy node (significance corrected for the number
 * of comparisons). Method and numbers: docs/health_report.md, "False
 * alarms".
 *
 * Measurement quality. A figure is judged only when
 *  - the per-call coefficient of variation of the measurement behind it
 *    (roofline's time_sec.cv of the point that set the roof, allreduce_bw's
 *    time_us.cv of the cell) is at most max_cv, and
 *  - the result file's envelope "conditions" (docs/results-schema.md) show
 *    an idle enough host before and after the run: CPU pressure (PSI "some"
 *    avg10) below max_pressure_pct, CPUs busy with other work below
 *    max_busy_pct, and no oversubscription (per_core at most
 *    max_per_core).
 * Otherwise the figure is "not judged: noisy measurement (...)", never a
 * WARN. A value the file does not record (older files, nccl-tests logs:
 * no CV, no conditions) is unknown, and unknown is judged as clean: the
 * rules below still require the figure to be improbable given the spread
 * of its like values, which is what an unknown measurement can be judged
 * on.
 *
 * Significance. A value is compared with the median of its like values
 * (or, per GPU, with the median of the other like GPUs of its node); its
 * robust z is (value - median) / s, s = 1.4826 x MAD of the like values
 * (the robust estimate of their standard deviation), floored by the
 * measurement's own noise (its CV x the median) and by mad_floor_frac x
 * the median. It is flagged only when its effect (percent below) reaches
 * the documented minimum AND z is at or below -cut, where cut is the
 * one-sided (1 - alpha / m) quantile of Student's t with
 * max(1, HR_MAD_EFFICIENCY x (n - 1)) degrees of freedom: alpha is the
 * false-alarm budget per node and night, m the comparisons made for the
 * node that night (Bonferroni), n the like values the spread came from
 * (few like values give a wide cut-off: the MAD of a few values is a rough
 * estimate of their spread).
 */
#ifndef HR_QUALITY_H
#define HR_QUALITY_H

#include <stddef.h>

#include "report/read/hr_model.h"
#include "report/read/hr_result.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The bounds below are the parameters of the row measurement_noisy of the
 * rule table (hr_rules.c): max_cv, a per-call CV above it is noisy (0.10);
 * max_pressure_pct, host CPU pressure (PSI some avg10, %) at or above it is
 * noisy (20); max_busy_pct, host CPUs busy with other work (%) at or above
 * it is noisy (50); max_per_core, processes x threads per online CPU above
 * it is oversubscribed (1). */

/* Asymptotic efficiency of the MAD as an estimate of a normal standard
 * deviation (about 37%: Rousseeuw and Croux, 1993): the spread of n values
 * is worth about 0.37 x (n - 1) degrees of freedom. */
#define HR_MAD_EFFICIENCY 0.37

/* Whether a figure's measurement was clean enough to judge. */
struct hr_quality {
	int noisy;          /* 1: not judged */
	int host_known;     /* the file recorded its conditions */
	int cv_known;       /* a CV was recorded */
	char why[240];      /* "CV 0.76 at 2M; host CPU pressure 84%", "" when clean */
};

/**
 * hr_quality_init - a clean, unknown quality.
 */
void hr_quality_init(struct hr_quality *q);

/**
 * hr_quality_host - add what a run's conditions say (@c may be NULL or not
 * known: nothing added). Noisy when CPU pressure before or after is at or
 * above max_pressure_pct, the CPUs busy with other work at or above
 * max_busy_pct, or per_core above max_per_core; @q->why names
 * the worst figure of each ("host CPU pressure 84%", "host CPUs 62% busy
 * with other work", "oversubscribed: 2.0 threads per CPU").
 */
void hr_quality_host(struct hr_quality *q, const struct hr_conditions *c);

/**
 * hr_quality_result_host - hr_quality_host() on the "conditions" of a
 * result record as read (hr_result.h; a value that is not a number >= 0 is
 * not known). @before_only: judge the conditions before the run only
 * (loader_contention, whose own load is its measurement).
 */
void hr_quality_result_host(struct hr_quality *q, const struct hr_result *r, int before_only);

/**
 * hr_quality_cv - add the per-call CV of the measurement (@cv, NAN: not
 * recorded, nothing added) at @at ("2M", "triad fp64"; may be NULL).
 * Noisy when @cv > max_cv ("CV 0.76 at 2M").
 */
void hr_quality_cv(struct hr_quality *q, double cv, const char *at);

/**
 * hr_quality_host_busy - the loader's own baseline: noisy ("host busy")
 * when its host CPU pressure (@psi_pct, %) is at or above
 * max_pressure_pct; NAN: not recorded.
 */
void hr_quality_host_busy(struct hr_quality *q, double psi_pct);

/**
 * hr_quality_loader - whether a loader_contention run may be judged (the
 * health report's rule, also the canary's and the history's): its host
 * must have been idle enough before its own load started, since the load
 * it makes itself is its measurement. Fills @q (initialised here): noisy
 * ("host busy") when the conditions before the run (@c, NULL or not known:
 * nothing added; its "after" and per_core are not looked at) are noisy by
 * hr_quality_host(), or its baseline configuration's host CPU pressure
 * (@base_psi_pct, %, NAN: not recorded) is by hr_quality_host_busy().
 */
void hr_quality_loader(struct hr_quality *q, const struct hr_conditions *c, double base_psi_pct);

/**
 * hr_quality_loader_result - hr_quality_loader() on a loader_contention
 * result record as read (hr_result.h): the envelope's "conditions" before
 * the run and the "psi_cpu_some_avg10" of its configuration whose placement
 * is "baseline" (a value that is not a number >= 0 is not known).
 */
void hr_quality_loader_result(struct hr_quality *q, const struct hr_result *r);

/**
 * hr_t_upper - the one-sided upper quantile of Student's t: the t with
 * P(T > t) = @p for @df degrees of freedom (df > 0, 0 < p < 0.5), by
 * bisection on the regularised incomplete beta function
 * (P(T > t) = I_x(df/2, 1/2) / 2, x = df / (df + t^2); the continued
 * fraction of Numerical Recipes, section 6.4). @df above 1e6 is the normal
 * quantile. Returns NAN for arguments out of range.
 */
double hr_t_upper(double p, double df);

/**
 * hr_cutoff - the cut-off on |robust z| for one of @m comparisons of a
 * node, at a false-alarm budget @alpha per node and night, against a
 * spread estimated from @n like values: hr_t_upper(alpha / m,
 * max(1, HR_MAD_EFFICIENCY x (n - 1))), and never below @floor_z.
 * @m < 1 counts as 1. Cached: cheap to call for every value.
 */
double hr_cutoff(double alpha, int m, size_t n, double floor_z);

#ifdef __cplusplus
}
#endif
#endif
