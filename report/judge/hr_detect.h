/*
 * hr_detect.h - the noise model learned from a history's pooled nights and
 * the sequential change detector (one-sided CUSUM, Page's test) that
 * `health_report history` runs over each series.
 *
 * The arithmetic (docs/workflows.md, "Change detection"):
 *
 *  - Every value is taken on a log scale, y = ln(value): a drop of d% is
 *    the same step whatever the metric's unit or level.
 *  - A series' persistent offset (a GPU that is always 2% slower) is its
 *    own level: each night's residual is y minus the median of the
 *    series' other nights in the window (leave one out). The median of n
 *    normal values has variance pi/2 x sigma^2 / n (its asymptotic
 *    efficiency, 2/pi), so the residual is divided by sqrt(1 + pi / (2
 *    (n - 1))) to stand for the night-to-night noise alone.
 *  - Night-to-night noise of a class (a metric on one kind of device:
 *    "roofline.compute_gflops.bf16 on gpu", "checkpoint... on -") is
 *    pooled over every series of that class and every night of the
 *    window: sigma = 1.4826 x the median absolute residual (the MAD, which
 *    a heavy tail or a faulty series barely moves).
 *  - The tail of the noise: the noise is modelled as a mixture
 *    (1 - w) N(0, 1) + w T3, T3 Student's t with 3 degrees of freedom
 *    scaled to the same robust spread (1.4826 x MAD = 1). w is learned
 *    from the residuals of single measurements of all classes, each class
 *    standardized by its own robust sd: where a figure was measured again
 *    on some nights only (a suspect re-measured), those nights count the
 *    lower of the two measurements (the first, unless the second was lower
 *    still); where it was measured twice every night, one of the two
 *    picked by a hash of the night. (The recorded mean of two has a
 *    thinner tail than one measurement, and a re-measured suspect's mean
 *    thins the low side, so residuals of the means gave w = 0.55-0.75 for
 *    t3 noise, which under-stated the tail of the figures measured once.)
 *    w is set so that the model's ratio of the 90% quantile of |u| to its
 *    median matches the pooled residuals' (2.44 for the normal, 3.08 for
 *    t3), the model being that of a residual: the night's noise minus the
 *    median of its series' other m - 1 nights, that median's error normal
 *    with variance 1 / (4 f(0)^2 (m - 1)) (hr_noise_tail_weight_loo()).
 *    Too few residuals (under HR_DETECT_MIN_TAIL): w = 1, the heavy tail
 *    assumed. (Learned from the high side alone it would be free of
 *    re-measurement, but with half the values it is twice as noisy: at
 *    Gaussian noise w came out 0.27 as often as 0.03, and the detector's
 *    threshold rose with it.)
 *  - How far one night is (hr_night_tail()): with the reference ref of
 *    the nights before it, z = (y - ref) / (sigma sqrt(1 + s_ref^2)), s_ref
 *    the reference's own error (hr_noise_ref_sd()), and the chance that a
 *    healthy night is that low is F(z) under the model above; a figure
 *    measured twice (a fresh re-measurement) is that low only when both
 *    measurements are, so its night is judged by the larger of the two,
 *    y = ln max(first, again), and its chance is F(z)^2. A run of nights
 *    multiplies its nights' chances (hr_far_run()).
 *  - The detector: with the series' reference level ref (the mean of up
 *    to `window` nights before the current run, each at most 2.5 sigma
 *    from their median, so that one tail night moves it little; frozen while the run
 *    lasts, so that a lasting drop does not pull its own reference down)
 *    each night's score z = clip((y - ref) / sigma, -c, c) feeds
 *    S = max(0, S - z - k) (Page, 1954). The clip bounds what one night can
 *    add (c - k), so a single far value never makes a regression on its own.
 *  - The threshold h is set from the false-alarm budget: a node with m
 *    series may be flagged alpha times per night (0.0005 by default, half
 *    of 1 per 1,000 node-nights), so each series' average run length
 *    between false alarms must be 2 m / alpha nights (a false alarm stays
 *    above h for about 2 nights). The run length of the
 *    CUSUM for the noise model above is computed by Brook and Evans'
 *    Markov chain (Biometrika 59, 1972: [0, h] in HR_DETECT_GRID cells, the
 *    expected nights to absorption from S = 0), averaged (as a rate) over
 *    the error of the reference level, which shifts every night's score
 *    alike (hr_noise_ref_sd()), and h found by bisection for each n_ref.
 */
#ifndef HR_DETECT_H
#define HR_DETECT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HR_DETECT_MIN_TAIL 200  /* fewest pooled residuals to learn the tail */
#define HR_DETECT_MIN_CLASS 20  /* fewest residuals of a class to learn its sigma */
#define HR_DETECT_LOO_MAXM 64  /* series of more values count as this many in
				  the residuals' model (hr_noise_tail_weight_loo()) */
#define HR_DETECT_TAIL_AT 3.0   /* the tail weight is learned from the share of
				  residuals beyond this many robust sd */
#define HR_DETECT_GRID 80       /* cells of the Brook-Evans chain */
#define HR_DETECT_NIGHTS_PER_ALARM 2 /* nights a false alarm stays above h: its
				 overshoot is at most clip - k (= k by default), which
				 a healthy night takes away on average */

/* The detector's settings. */
struct hr_cusum_cfg {
	int window;       /* nights in a reference level (14) */
	int min_nights;   /* fewest reference nights (7: a reference of fewer
			     nights is too often far off, and a frozen reference
			     far above a healthy series flags it night after night) */
	double k;         /* allowance, in noise sd (2: tuned to steps of 3.5-5 sd, a 10% drop at 3% noise, 5% at 1%) */
	double clip;      /* largest |score| one night counts (4) */
	double alpha;     /* false alarms per node and night (0.0005) */
	double floor_sigma; /* least noise sd on the log scale (0.001: 0.1%) */
	double far_pct;   /* a night measured twice is WARN on its own only when
			     both measurements are this far below, % (15: a
			     heavy tail rarely puts both there) */
	double far_alpha; /* false alarms per node and night of far nights and
			     of the median rule's REGRESSED (0.00002) */
	double info_chance; /* a night not flagged is "info: one night far" when
			     its chance for a healthy series is within this
			     (0.0001; a line to read, never a flag) */
};

/** hr_cusum_cfg_init - the defaults above (the rows history_cusum and
 * history_far_night of hr_rules.c). */
void hr_cusum_cfg_init(struct hr_cusum_cfg *c);

/**
 * hr_noise_residuals - one series' standardized leave-one-out residuals.
 * @v:      [in] @n values (> 0; others are skipped), oldest first.
 * @n:      [in] their count.
 * @window: [in] only the last @window values are used (>= 1).
 * @out:    [out] room for @window doubles: ln(v_i) minus the median of ln
 *          of the other values, divided by sqrt(1 + pi / (2 (m - 1))), m
 *          the values used.
 * Returns the number written (0 when fewer than 3 values are usable).
 */
size_t hr_noise_residuals(const double *v, size_t n, int window, double *out);

/**
 * hr_noise_sigma - the robust night-to-night sd of pooled residuals:
 * 1.4826 x median |r|, at least @floor. @r is reordered. 0 when @n is 0.
 */
double hr_noise_sigma(double *r, size_t n, double floor);

/**
 * hr_noise_tail_weight - the weight w of the t3 part of the noise model.
 * @u: [in,out] @n standardized residuals (reordered).
 * Returns w in [0, 1] (the ratio of the 90% quantile of |u| to its median
 * matched, see above); 1 when @n < HR_DETECT_MIN_TAIL.
 */
double hr_noise_tail_weight(double *u, size_t n);

/**
 * hr_noise_tail_weight_loo - the same, for leave-one-out residuals
 * (hr_noise_residuals()) rather than the noise itself. A residual is the
 * night's noise minus the median of its series' other m - 1 nights, and
 * that median's own error (normal, variance 1 / (4 f(0)^2 (m - 1)), f the
 * model's density; robust sd units) thins the residuals' tail: pooled
 * residuals of pure t3 series of 8 nights have a ratio of about 2.85, of
 * 14 nights 3.0, against 3.08 for t3 itself, which hr_noise_tail_weight()
 * reads as w = 0.6-0.9. The model's ratio here is that of the residuals,
 * each m weighted by its share of the residuals.
 * @u:     [in,out] @n standardized residuals (reordered).
 * @count: [in] @count[m], m = 0 .. @maxm: residuals that came from series
 *         of m values (those of more than @maxm counted at @maxm; m < 3
 *         ignored).
 * @maxm:  [in] the last index of @count.
 * Returns w in [0, 1]; 1 when @n < HR_DETECT_MIN_TAIL; with no count at
 * all, hr_noise_tail_weight()'s.
 */
double hr_noise_tail_weight_loo(double *u, size_t n, const size_t *count, int maxm);

/**
 * hr_noise_tail_weight_high - the tail weight of values standardized by
 * their robust sd (1.4826 x MAD) from their upper side: @above of @n are
 * more than HR_DETECT_TAIL_AT (3) robust sd above their median (0.135% of them for the
 * normal, 2.1% for t3). The one-night fleet report's cut-offs use it: a
 * fault is low, so the upper side is free of the fleet's own faults (the
 * low side is not: a few faults among 1,000 like values would raise the
 * cut-off that is to find them). Real benchmark noise has its heavier tail
 * on the low side (a preempted core, a clock dip), which the upper side
 * under-states.
 * Returns w in [0, 1], NAN when @n < HR_DETECT_MIN_TAIL (not learned).
 */
double hr_noise_tail_weight_high(size_t above, size_t n);

/**
 * hr_noise_cut - the cut-off x > 0 with P(u <= -x) = @p under the noise
 * model of tail weight @w (robust sd units). NAN when @p is not in (0, 0.5).
 */
double hr_noise_cut(double p, double w);

/**
 * hr_noise_cdf - P(u <= x) under the noise model with tail weight @w
 * (u in units of the robust sd).
 */
double hr_noise_cdf(double x, double w);

/**
 * hr_cusum_arl - average run length (nights) of the CUSUM from S = 0 to
 * S > @h, with allowance @k and clip @c, on noise of tail weight @w and no
 * change. Returns it, or HUGE_VAL when the chain cannot be solved.
 */
double hr_cusum_arl(double h, double k, double c, double w);

/**
 * hr_noise_ref_sd - the sd (in robust noise sd) of a reference level of
 * @nref nights (their mean, each night winsorized at 2.5 noise sd from
 * their median): sqrt(E[clip(u, -2.5, 2.5)^2] / nref) under the model.
 */
double hr_noise_ref_sd(int nref, double w);

/**
 * hr_cusum_rate - false alarms per night of one series: the mean of 1 /
 * ARL over the error e of its reference level, e ~ N(0, hr_noise_ref_sd()^2)
 * (each night's score is then u - e: a reference set too high by chance
 * makes every night look low until the run resets; 7-point Gauss-Hermite
 * quadrature). @nref 0: a known reference (1 / ARL).
 */
double hr_cusum_rate(double h, double k, double c, double w, int nref);

/**
 * hr_cusum_threshold - the least h whose false-alarm rate
 * (hr_cusum_rate()) is at most 1 / @arl0 per night (bisection to 0.1%);
 * capped at 1000, and at least @c - @k (what one clipped night adds: S > h
 * is never reached by one night alone).
 */
double hr_cusum_threshold(double arl0, double k, double c, double w, int nref);

/* What the detector found on one series at its last night. */
struct hr_cusum {
	double s;          /* the CUSUM statistic after the last night */
	double reference;  /* the reference level (in the values' unit) */
	double pct;        /* drop of the run's median below it, % (> 0: lower) */
	size_t since;      /* index of the run's first night (S > 0 since) */
	int nights;        /* nights in the run (0: S is 0) */
	int nref;          /* nights in the reference */
	int judged;        /* 0: too few nights before the run to judge */
};

/**
 * hr_cusum_run - the detector over one series.
 * @v:     [in] @n values (> 0), oldest first.
 * @sigma: [in] the class's noise sd on the log scale (hr_noise_sigma()).
 * @cfg:   [in] window, min_nights, k, clip.
 * @out:   [out] the state after v[n - 1].
 * Returns 0; CH_ERR_USAGE for a value that is not finite and > 0 or
 * sigma <= 0. Cost O(n x window).
 */
int hr_cusum_run(const double *v, size_t n, double sigma, const struct hr_cusum_cfg *cfg,
		 struct hr_cusum *out);

/**
 * hr_detect_reference - the detector's reference level on the log scale:
 * the mean of ln v[a..b-1] (b > a, values > 0), each at most 2.5 @sigma
 * from their median (winsorized: a tail night counts little).
 */
double hr_detect_reference(const double *v, size_t a, size_t b, double sigma);

/**
 * hr_night_tail - the chance that a healthy night is as low as @y or lower.
 * @y:     [in] ln of the night's value (of a figure measured twice: ln of
 *         the larger of its two measurements).
 * @ref:   [in] the reference level, ln (hr_detect_reference()).
 * @sigma: [in] the class's noise sd on the log scale (> 0).
 * @w:     [in] the tail weight of the noise model.
 * @nref:  [in] nights in the reference (its error widens the spread; 0:
 *         known exactly).
 * @twice: [in] 1 when @y is the larger of two independent measurements
 *         (the chance squared: both must be that low).
 * @z:     [out] (y - ref) / (sigma sqrt(1 + s_ref^2)); may be NULL.
 * Returns the chance, in [0, 1].
 */
double hr_night_tail(double y, double ref, double sigma, double w, int nref, int twice, double *z);

/* How far a series' last nights are from its own level (hr_far_run()). */
struct hr_far {
	double p;        /* the chance of the run's nights for a healthy series */
	double p_last;   /* ... of the last night alone */
	double z;        /* the last night's z (hr_night_tail()) */
	double reference; /* the reference level (values' unit) */
	double pct;      /* the last night's drop below it, % (> 0: lower) */
	double pct_both; /* ... of the larger of its two measurements (its
			    value when measured once) */
	int nref;        /* nights in the reference */
	int twice;       /* 1: the last night was measured twice */
};

/**
 * hr_far_run - how improbable the nights v[since..n-1] are together,
 * against the reference of the up to @window nights before @since.
 * @v:     [in] @n values (> 0), oldest first: each night's recorded value.
 * @both:  [in] each night's larger measurement of a figure measured twice
 *         (both measurements at least this low), NAN (or <= 0) for a night
 *         measured once; NULL: every night measured once.
 * @since: [in] the run's first night (< @n).
 * @window, @sigma, @w: [in] the reference's nights, the class's noise sd,
 *         the tail weight.
 * @out:   [out] the product of the nights' hr_night_tail() (each night
 *         judged by @both where it has one) and the last night's figures.
 * Returns 0; -1 when fewer than 3 nights precede @since or @sigma <= 0.
 */
int hr_far_run(const double *v, const double *both, size_t n, size_t since, int window, double sigma, double w,
	       struct hr_far *out);

/*
 * The noise model of a whole history: residuals pooled per class over
 * every series, then the class's sigma, the tail weight of all classes,
 * and the CUSUM threshold for a node of m series (cached per m).
 */
struct hr_noise_pool;

/** hr_noise_pool_new - an empty pool (free with hr_noise_pool_free()).
 * Returns NULL when out of memory. */
struct hr_noise_pool *hr_noise_pool_new(void);

/** hr_noise_pool_free - free @p (NULL is accepted). */
void hr_noise_pool_free(struct hr_noise_pool *p);

/**
 * hr_noise_class - the class of a series: its metric on its kind of device
 * ("gpu" for gpu0..gpuN, "cpu", "-" for node-level metrics; else the
 * device column). Writes "METRIC@KIND" into @buf (@n bytes) and returns it.
 */
const char *hr_noise_class(const char *gpu, const char *metric, char *buf, size_t n);

/**
 * hr_noise_single - one measurement a night, for the noise's tail.
 * @v:      [in] @n recorded values, oldest first (the mean where measured twice).
 * @both:   [in] the larger of each night's two measurements, NAN where measured once.
 * @n:      [in] nights.
 * @window: [in] the nights the residuals use (the last @window).
 * @out:    [out] @n values: @v where measured once; where the last @window
 *          nights were all measured twice (allreduce_bw's largest size),
 *          one of the two (the lower, 2 v - both, or the larger) picked by a
 *          hash of the night's index, which is one measurement's draw; where
 *          only some were (roofline's re-measured suspect), the lower, which
 *          is the first measurement unless the second was lower still.
 */
void hr_noise_single(const double *v, const double *both, size_t n, int window, double *out);

/**
 * hr_noise_pool_add - pool one series' residuals (hr_noise_residuals()
 * over its last @window values) into class @cls: those of @v for the
 * class's sigma, those of @single for the tail weight. A class keeps at
 * most 65,536 of each (a fixed-seed reservoir sample beyond that).
 * @v:      [in] the recorded values, oldest first.
 * @single: [in] the same nights as one measurement each (a figure
 *          measured twice is recorded as the mean of both, whose tail is
 *          thinner than one measurement's: hr_noise_single()), or
 *          NULL: @v.
 * @n:      [in] values in each.
 * Returns 0, CH_ERR_RUNTIME when out of memory.
 */
int hr_noise_pool_add(struct hr_noise_pool *p, const char *cls, const double *v, const double *single, size_t n,
		      int window);

/**
 * hr_noise_pool_fit - learn each class's sigma (hr_noise_sigma(), at least
 * @floor) and the tail weight of all classes' single measurements'
 * residuals together, each class's standardized by their own robust sd
 * (hr_noise_tail_weight_loo()). Classes with fewer than
 * HR_DETECT_MIN_CLASS residuals get no sigma (their series are not judged
 * by the detector). Returns 0, CH_ERR_RUNTIME when out of memory.
 */
int hr_noise_pool_fit(struct hr_noise_pool *p, double floor);

/**
 * hr_noise_pool_sigma - the learned sigma of class @cls (log scale) and the
 * residuals it came from. Returns 0, or -1 when the class has none.
 */
int hr_noise_pool_sigma(const struct hr_noise_pool *p, const char *cls, double *sigma, size_t *nres);

/** hr_noise_pool_tail - the learned tail weight w (after hr_noise_pool_fit()). */
double hr_noise_pool_tail(const struct hr_noise_pool *p);

/**
 * hr_noise_pool_threshold - the CUSUM threshold h for a series of a node
 * with @m series and a reference of @nref nights: HR_DETECT_NIGHTS_PER_ALARM
 * x m / cfg->alpha nights between false alarms on the learned noise (hr_cusum_threshold() with
 * cfg->k and cfg->clip), cached per (@m, @nref).
 */
double hr_noise_pool_threshold(struct hr_noise_pool *p, int m, int nref, const struct hr_cusum_cfg *cfg);

#ifdef __cplusplus
}
#endif
#endif
