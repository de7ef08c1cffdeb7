/*
 * hr_fit.c - least-squares fit of the ring and log-latency all-reduce models
 * (see hr_fit.h), solved with LAPACK's dgels from OpenBLAS.
 */
#include "report/canary/hr_fit.h"
#include "base/ch_common.h"

#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/*
 * LAPACK's Fortran interface, exported by libopenblas (Debian ships no
 * LAPACKE header with it). gfortran passes the length of a CHARACTER
 * argument as a hidden trailing size_t.
 *
 * The library is opened on the first fit (dlopen), not linked: linking it
 * into health_report loads libgfortran and libquadmath at start, and
 * libquadmath registers printf handlers for %f, %e and %g (its __float128
 * modifier) that send every printf call of the process down glibc's slow
 * path: about a fifth of the reporter's own time went to printf_positional
 * before. Only 'health_report canary' fits; the outputs are the same.
 */
typedef void dgels_fn(const char *trans, const int *m, const int *n,
		      const int *nrhs, double *a, const int *lda, double *b,
		      const int *ldb, double *work, const int *lwork, int *info,
		      size_t trans_len);

#ifndef CH_LAPACK_SONAME
#define CH_LAPACK_SONAME "libopenblas.so.0"
#endif

static pthread_once_t lapack_once = PTHREAD_ONCE_INIT;
static dgels_fn *lapack_dgels_fn;

static void lapack_open(void)
{
	void *h = dlopen(CH_LAPACK_SONAME, RTLD_NOW | RTLD_LOCAL);
	void *sym = h ? dlsym(h, "dgels_") : NULL;
	if (!sym)
		ch_error("cannot load LAPACK's dgels from %s for the all-reduce model fit: %s",
			 CH_LAPACK_SONAME, dlerror());
	memcpy(&lapack_dgels_fn, &sym, sizeof(lapack_dgels_fn));
}

/* dgels from CH_LAPACK_SONAME, loaded once; NULL (said once, with the
 * loader's reason) when it cannot be */
static dgels_fn *lapack_dgels(void)
{
	pthread_once(&lapack_once, lapack_open);
	return lapack_dgels_fn;
}

const char *hr_fit_model_name(enum hr_fit_model m)
{
	switch (m) {
	case HR_FIT_RING: return "ring";
	case HR_FIT_LOG: return "log";
	default: return "?";
	}
}

double hr_fit_bw_coef(enum hr_fit_model m, int nranks)
{
	(void)m;
	if (nranks < 2)
		return 0;
	return 2.0 * (nranks - 1) / nranks;
}

double hr_fit_lat_steps(enum hr_fit_model m, int nranks)
{
	int steps = 0;

	if (nranks < 2)
		return 0;
	if (m == HR_FIT_RING)
		return 2.0 * (nranks - 1);
	while ((1L << steps) < nranks)
		steps++;
	return steps;
}

double hr_fit_predict_us(const struct hr_fit *f, double bytes, int nranks)
{
	if (nranks < 2)
		return 0;
	/* S / B: bytes / (GB/s x 1e9) s = bytes / (bw_gbps x 1e3) us */
	return hr_fit_bw_coef(f->model, nranks) * bytes / (f->bw_gbps * 1e3) +
	       hr_fit_lat_steps(f->model, nranks) * f->alpha_us;
}

double hr_fit_predict_half_us(const struct hr_fit *f, double bytes, int nranks)
{
	double steps;
	if (nranks < 2)
		return 0;
	steps = f->model == HR_FIT_RING ? nranks - 1.0 : hr_fit_lat_steps(f->model, nranks);
	return (nranks - 1.0) / nranks * bytes / (f->bw_gbps * 1e3) + steps * f->alpha_us;
}

double hr_fit_busbw_gbps(double bytes, int nranks, double time_us)
{
	if (!(time_us > 0) || nranks < 2)
		return 0;
	return bytes / (time_us * 1e3) * 2.0 * (nranks - 1) / nranks;
}

/*
 * Solve the weighted problem min || diag(1/T) (X u - T) || with columns
 * X = [bw_coef x S, lat_steps] (ncols = 2) or X = [bw_coef x S] (ncols = 1,
 * alpha fixed at 0). u[0] = 1/B in us per byte, u[1] = alpha in us.
 */
static int solve(enum hr_fit_model m, const struct hr_fit_point *p, int n,
		 int ncols, double u[2])
{
	double *a = malloc(sizeof(double) * (size_t)n * (size_t)ncols);
	double *b = malloc(sizeof(double) * (size_t)n);
	double wq;
	double *work = NULL;
	int nrhs = 1, lwork = -1, info = 0, i, rc = CH_ERR_RUNTIME;
	dgels_fn *dgels_ = lapack_dgels();

	if (!a || !b || !dgels_)
		goto out;
	for (i = 0; i < n; i++) {
		double w = 1.0 / p[i].time_us;
		a[i] = hr_fit_bw_coef(m, p[i].nranks) * p[i].bytes * w;
		if (ncols == 2)
			a[n + i] = hr_fit_lat_steps(m, p[i].nranks) * w;
		b[i] = 1.0;
	}
	dgels_("N", &n, &ncols, &nrhs, a, &n, b, &n, &wq, &lwork, &info, 1);
	if (info != 0)
		goto out;
	lwork = (int)wq;
	if (lwork < 1)
		lwork = 1;
	work = malloc(sizeof(double) * (size_t)lwork);
	if (!work)
		goto out;
	dgels_("N", &n, &ncols, &nrhs, a, &n, b, &n, work, &lwork, &info, 1);
	if (info != 0)
		goto out;
	u[0] = b[0];
	u[1] = ncols == 2 ? b[1] : 0.0;
	rc = 0;
out:
	free(a);
	free(b);
	free(work);
	return rc;
}

int hr_fit_solve(enum hr_fit_model m, const struct hr_fit_point *p, size_t n,
		 struct hr_fit *out)
{
	struct hr_fit f = { .model = m };
	double u[2], ratio0 = 0, mean = 0, ss_tot = 0, ss_res = 0, ss_rel = 0;
	int distinct = 0, rc;
	size_t i;

	if ((int)m < 0 || m >= HR_FIT_NMODELS || !p || n < 3 || n > 1000000)
		return CH_ERR_USAGE;
	for (i = 0; i < n; i++) {
		double r;
		if (!isfinite(p[i].bytes) || !(p[i].bytes > 0) ||
		    !isfinite(p[i].time_us) || !(p[i].time_us > 0) ||
		    p[i].nranks < 2)
			return CH_ERR_USAGE;
		/* the two columns are independent only if this ratio varies */
		r = hr_fit_bw_coef(m, p[i].nranks) * p[i].bytes /
		    hr_fit_lat_steps(m, p[i].nranks);
		if (i == 0)
			ratio0 = r;
		else if (fabs(r - ratio0) > 1e-9 * fabs(ratio0))
			distinct = 1;
	}
	if (!distinct)
		return CH_ERR_USAGE;

	rc = solve(m, p, (int)n, 2, u);
	if (rc)
		return rc;
	if (u[1] < 0) {
		rc = solve(m, p, (int)n, 1, u);
		if (rc)
			return rc;
		f.alpha_clamped = 1;
	}
	if (!(u[0] > 0) || !isfinite(u[0]))
		return CH_ERR_CHECK;
	f.bw_gbps = 1e-3 / u[0]; /* 1/u bytes per us = 1e6/u B/s */
	f.alpha_us = u[1];
	f.npoints = n;
	f.min_nranks = f.max_nranks = p[0].nranks;
	f.min_bytes = f.max_bytes = p[0].bytes;
	for (i = 0; i < n; i++) {
		mean += p[i].time_us;
		if (p[i].nranks < f.min_nranks) f.min_nranks = p[i].nranks;
		if (p[i].nranks > f.max_nranks) f.max_nranks = p[i].nranks;
		if (p[i].bytes < f.min_bytes) f.min_bytes = p[i].bytes;
		if (p[i].bytes > f.max_bytes) f.max_bytes = p[i].bytes;
	}
	mean /= (double)n;
	for (i = 0; i < n; i++) {
		double t = hr_fit_predict_us(&f, p[i].bytes, p[i].nranks);
		double d = t - p[i].time_us, rel = d / p[i].time_us;
		ss_res += d * d;
		ss_tot += (p[i].time_us - mean) * (p[i].time_us - mean);
		ss_rel += rel * rel;
		if (fabs(rel) * 100 > f.max_rel_pct)
			f.max_rel_pct = fabs(rel) * 100;
	}
	f.r2 = ss_tot > 0 ? 1.0 - ss_res / ss_tot : 1.0;
	f.rms_rel_pct = 100.0 * sqrt(ss_rel / (double)n);
	*out = f;
	return 0;
}
