/*
 * hr_fit.h - least-squares fit of the all-reduce cost models to measured
 * all-reduce times, per algorithm and fabric level.
 *
 * Two models, both linear in the unknowns 1/B and alpha:
 *
 *   ring:        T(S, n) = 2(n-1)/n x S/B + 2(n-1) x alpha
 *   log-latency: T(S, n) = 2(n-1)/n x S/B + ceil(log2 n) x alpha
 *
 * S is the message size per rank in bytes, n the number of ranks, B the
 * bandwidth (GB/s, 1e9 B/s; the large-message limit of nccl-tests' busbw),
 * alpha the latency of one step (microseconds). The ring model is the
 * textbook ring all-reduce (reduce-scatter then all-gather, n-1 steps each;
 * Patarasuk and Yuan, JPDC 2009; nccl-tests doc/PERFORMANCE.md for the
 * 2(n-1)/n factor). The log-latency model keeps the bandwidth-optimal term
 * and counts about log2(n) latency steps, as double binary trees (NCCL) and
 * Rabenseifner's reduce-scatter/all-gather do (Thakur, Rabenseifner and
 * Gropp, IJHPCA 2005); for recursive doubling, whose bandwidth term grows
 * with log2(n), its B is an effective figure.
 *
 * The fit minimises the squared RELATIVE residuals ((T_model - T) / T), so
 * that 8-byte and 1-GiB messages weigh the same; it is solved with LAPACK's
 * dgels (QR) from OpenBLAS.
 */
#ifndef HR_FIT_H
#define HR_FIT_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

enum hr_fit_model {
	HR_FIT_RING = 0, /* 2(n-1) latency steps */
	HR_FIT_LOG = 1,  /* ceil(log2 n) latency steps */
	HR_FIT_NMODELS
};

/* One measurement: an all-reduce of @bytes per rank over @nranks ranks. */
struct hr_fit_point {
	double bytes;   /* message size per rank, bytes (> 0) */
	int nranks;     /* ranks taking part (>= 2) */
	double time_us; /* measured time, microseconds (> 0), e.g. the median */
};

/* A fitted model and its goodness of fit. */
struct hr_fit {
	enum hr_fit_model model;
	double alpha_us;     /* fitted latency per step, microseconds (>= 0) */
	double bw_gbps;      /* fitted bandwidth B, GB/s (> 0) */
	int alpha_clamped;   /* 1 when the free fit gave alpha < 0 and alpha was
				fixed at 0 (the data cannot resolve a latency) */
	double r2;           /* coefficient of determination of T (unweighted) */
	double rms_rel_pct;  /* root mean square of the relative residuals, % */
	double max_rel_pct;  /* largest |relative residual|, % */
	size_t npoints;      /* points used */
	int min_nranks, max_nranks;
	double min_bytes, max_bytes;
};

/**
 * hr_fit_model_name - "ring" or "log".
 * @m: [in] model. Returns a static string ("?" when out of range).
 */
const char *hr_fit_model_name(enum hr_fit_model m);

/**
 * hr_fit_bw_coef - coefficient of S/B in the model: 2(n-1)/n.
 * @m: [in] model.  @nranks: [in] ranks, >= 1 (0 is returned for 1).
 */
double hr_fit_bw_coef(enum hr_fit_model m, int nranks);

/**
 * hr_fit_lat_steps - number of latency steps: 2(n-1) for the ring,
 * ceil(log2 n) for the log-latency model.
 * @m: [in] model.  @nranks: [in] ranks, >= 1 (0 is returned for 1).
 */
double hr_fit_lat_steps(enum hr_fit_model m, int nranks);

/**
 * hr_fit_solve - fit one model to a set of points.
 * @m:   [in] the model.
 * @p:   [in] @n points (not modified).
 * @n:   [in] number of points.
 * @out: [out] the fit; untouched on error.
 * The latency is constrained to be non-negative: when the unconstrained fit
 * gives alpha < 0, B is refitted with alpha = 0 and out->alpha_clamped is set.
 * Returns 0; CH_ERR_USAGE when a point is invalid (bytes or time not finite
 * and positive, nranks < 2), when there are fewer than 3 points or the
 * points cannot separate the two terms (a single value of
 * S x bw_coef / lat_steps); CH_ERR_CHECK when the fitted bandwidth is not
 * positive (the messages are too small to show a bandwidth term);
 * CH_ERR_RUNTIME when out of memory, LAPACK fails or its library cannot be
 * loaded (CH_LAPACK_SONAME, "libopenblas.so.0" unless the build says
 * otherwise, opened with dlopen() on the first call: the loader's reason is
 * then said once with ch_error()). Prints nothing otherwise. Thread-safe.
 */
int hr_fit_solve(enum hr_fit_model m, const struct hr_fit_point *p, size_t n,
		 struct hr_fit *out);

/**
 * hr_fit_predict_half_us - the model's reduce-scatter or all-gather time
 * at the same bus bandwidth B (nccl-tests doc/PERFORMANCE.md: busbw =
 * algbw x (n-1)/n for both, against 2(n-1)/n for the all-reduce, whose two
 * halves they are): T = (n-1)/n x S/B + steps x alpha, steps = n-1 for the
 * ring, ceil(log2 n) for the log-latency model (Rabenseifner's recursive
 * halving or doubling alone).
 * @f: [in] the all-reduce fit (or a model filled by hand).
 * @bytes: [in] S, the whole array in bytes (nccl-tests' S: the count per
 *         rank x n for these two collectives).  @nranks: [in] ranks (>= 1).
 * Returns microseconds (0 for one rank).
 */
double hr_fit_predict_half_us(const struct hr_fit *f, double bytes, int nranks);

/**
 * hr_fit_predict_us - the model's all-reduce time.
 * @f: [in] a fit (or a model filled by hand: model, alpha_us, bw_gbps).
 * @bytes: [in] message size per rank, bytes.  @nranks: [in] ranks (>= 1).
 * Returns the time in microseconds (0 for one rank).
 */
double hr_fit_predict_us(const struct hr_fit *f, double bytes, int nranks);

/**
 * hr_fit_busbw_gbps - nccl-tests' all-reduce bus bandwidth of a time:
 * busbw = S / T x 2(n-1)/n (doc/PERFORMANCE.md).
 * @bytes: [in] bytes per rank.  @nranks: [in] ranks.  @time_us: [in] > 0.
 * Returns GB/s (1e9 B/s), or 0 when @time_us is not positive.
 */
double hr_fit_busbw_gbps(double bytes, int nranks, double time_us);

#ifdef __cplusplus
}
#endif
#endif
