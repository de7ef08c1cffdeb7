/*
 * hr_detect.c - the pooled noise model and the CUSUM change detector of
 * the history (hr_detect.h; arithmetic there and in docs/workflows.md).
 */
#include "report/judge/hr_detect.h"
#include "report/judge/hr_rules.h"
#include "base/ch_common.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_WINDOW 1024
#define MAD_SD 1.482602218505602  /* 1 / Phi^-1(3/4): the MAD of N(0, 1) is 1 / 1.4826 */
#define T3_MAD 0.7648923          /* median |T| of Student's t, 3 dof */
#define N_MAD 0.6744897501960817  /* median |Z| of N(0, 1) */
#define REF_WIN 2.5               /* a reference night counts at most this far from the median (noise sd) */

void hr_cusum_cfg_init(struct hr_cusum_cfg *c)
{
	/* the history_cusum row's parameters (hr_rules.c) */
	c->window = (int)hr_rule_param("history_cusum", "window");
	c->min_nights = (int)hr_rule_param("history_cusum", "reference_nights");
	c->k = hr_rule_param("history_cusum", "k");
	c->clip = hr_rule_param("history_cusum", "clip");
	c->alpha = hr_rule_param("history_cusum", "budget_node_night");
	c->floor_sigma = hr_rule_param("history_cusum", "floor_sigma");
	c->far_pct = hr_rule_param("history_far_night", "first_night_pct");
	c->far_alpha = hr_rule_param("history_far_night", "far_budget_node_night");
	c->info_chance = hr_rule_param("history_far_night", "info_chance_series_night");
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* median of v[0..n-1] (n >= 1); v is sorted */
static double median_sort(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* the q-quantile of sorted v (linear between order statistics) */
static double quantile(const double *v, size_t n, double q)
{
	double pos = q * (double)(n - 1);
	size_t i = (size_t)pos;
	if (i + 1 >= n)
		return v[n - 1];
	return v[i] + (pos - (double)i) * (v[i + 1] - v[i]);
}

size_t hr_noise_residuals(const double *v, size_t n, int window, double *out)
{
	double y[MAX_WINDOW], others[MAX_WINDOW];
	size_t m = 0, i, j, lo;

	if (window < 1)
		return 0;
	if (window > MAX_WINDOW)
		window = MAX_WINDOW;
	lo = n > (size_t)window ? n - (size_t)window : 0;
	for (i = lo; i < n; i++)
		if (isfinite(v[i]) && v[i] > 0)
			y[m++] = log(v[i]);
	if (m < 3)
		return 0;
	for (i = 0; i < m; i++) {
		size_t k = 0;
		for (j = 0; j < m; j++)
			if (j != i)
				others[k++] = y[j];
		out[i] = (y[i] - median_sort(others, k)) / sqrt(1 + M_PI / (2.0 * (double)(m - 1)));
	}
	return m;
}

double hr_noise_sigma(double *r, size_t n, double floor)
{
	size_t i;
	double s;

	if (!n)
		return 0;
	for (i = 0; i < n; i++)
		r[i] = fabs(r[i]);
	s = MAD_SD * median_sort(r, n);
	return s > floor ? s : floor;
}

static double norm_cdf(double x)
{
	return 0.5 * erfc(-x / M_SQRT2);
}

/* Student's t with 3 degrees of freedom, closed form */
static double t3_cdf(double t)
{
	double a = t / sqrt(3.0);
	return 0.5 + (atan(a) + a / (1 + a * a)) / M_PI;
}

double hr_noise_cdf(double x, double w)
{
	/* both parts with median |u| = 0.6745 (robust sd 1) */
	return (1 - w) * norm_cdf(x) + w * t3_cdf(x * T3_MAD / N_MAD);
}

/* the q-quantile of |u| under the model (bisection) */
static double model_abs_quantile(double q, double w)
{
	double lo = 0, hi = 100;
	int i;
	for (i = 0; i < 100; i++) {
		double mid = 0.5 * (lo + hi);
		if (2 * hr_noise_cdf(mid, w) - 1 < q)
			lo = mid;
		else
			hi = mid;
	}
	return 0.5 * (lo + hi);
}

static double model_ratio(double w)
{
	return model_abs_quantile(0.9, w) / model_abs_quantile(0.5, w);
}

/* |u| sorted in place; -1 when there are too few to learn a tail from or
 * their median is not > 0 */
static int abs_sorted(double *u, size_t n)
{
	size_t i;
	if (n < HR_DETECT_MIN_TAIL)
		return -1;
	for (i = 0; i < n; i++)
		u[i] = fabs(u[i]);
	qsort(u, n, sizeof(*u), cmp_double);
	return quantile(u, n, 0.5) > 0 ? 0 : -1;
}

/* The tail weight whose model statistic @model(w) (increasing in w)
 * matches the observed @obs: bisection, the heavier side of the bracket */
static double bisect_w(double obs, double (*model)(double w, const void *arg), const void *arg)
{
	double lo = 0, hi = 1;
	int it;
	if (obs <= model(0, arg))
		return 0;
	if (obs >= model(1, arg))
		return 1;
	for (it = 0; it < 30; it++) {
		double mid = 0.5 * (lo + hi);
		if (model(mid, arg) < obs)
			lo = mid;
		else
			hi = mid;
	}
	return hi;
}

static double plain_ratio(double w, const void *arg)
{
	(void)arg;
	return model_ratio(w);
}

double hr_noise_tail_weight(double *u, size_t n)
{
	if (abs_sorted(u, n))
		return 1;
	return bisect_w(quantile(u, n, 0.9) / quantile(u, n, 0.5), plain_ratio, NULL);
}

double hr_noise_tail_weight_high(size_t above, size_t n)
{
	double p0 = 1 - norm_cdf(HR_DETECT_TAIL_AT), p1 = 1 - t3_cdf(HR_DETECT_TAIL_AT * T3_MAD / N_MAD), w;
	if (n < HR_DETECT_MIN_TAIL)
		return NAN;
	w = ((double)above / (double)n - p0) / (p1 - p0);
	return w < 0 ? 0 : w > 1 ? 1 : w;
}

double hr_noise_cut(double p, double w)
{
	static __thread struct {
		double p, w, x;
	} cache[64];
	static __thread unsigned next;
	double lo = 0, hi = 1e6;
	unsigned k;
	int i;
	if (!(p > 0 && p < 0.5))
		return NAN;
	for (k = 0; k < 64; k++)
		if (cache[k].p == p && cache[k].w == w)
			return cache[k].x;
	for (i = 0; i < 200 && hi - lo > 1e-9 * hi; i++) {
		double mid = 0.5 * (lo + hi);
		if (hr_noise_cdf(-mid, w) > p)
			lo = mid;
		else
			hi = mid;
	}
	cache[next % 64].p = p;
	cache[next % 64].w = w;
	cache[next++ % 64].x = hi;
	return hi;
}

/* ---- the model of a leave-one-out residual (hr_noise_residuals()) ---- */

#define NPDF0 0.3989422804014327 /* the N(0, 1) density at 0 */
#define T3PDF0 0.3675525969478614 /* Student's t3 density at 0: 2 / (pi sqrt 3) */
#define LOO_GRID 41               /* Simpson points over the reference's error, +-5 sd */

/* the variance of the median of m - 1 noise values (robust sd units): its
 * asymptotic 1 / (4 f(0)^2 (m - 1)), f the model's density */
static double ref_median_var(double w, int m)
{
	double f0 = (1 - w) * NPDF0 + w * T3PDF0 * T3_MAD / N_MAD;
	return 1 / (4 * f0 * f0 * (double)(m - 1));
}

/* P(r <= x) for a residual of a series of m values: r = (e - M) / c, e the
 * night's noise, M the median of the others, c = sqrt(1 + pi / (2 (m - 1))) */
static double loo_cdf(double x, double w, int m)
{
	double sd = sqrt(ref_median_var(w, m)), c = sqrt(1 + M_PI / (2.0 * (double)(m - 1)));
	double h = 10.0 / (LOO_GRID - 1), s = 0;
	int i;
	for (i = 0; i < LOO_GRID; i++) {
		double t = -5 + h * i, wt = (i == 0 || i == LOO_GRID - 1) ? 1 : (i % 2 ? 4 : 2);
		s += wt * hr_noise_cdf(x * c + sd * t, w) * exp(-0.5 * t * t);
	}
	return s * h / 3 * NPDF0;
}

struct loo_mix {
	const size_t *count; /* residuals of series of m values, m = 0 .. maxm */
	int maxm;
	size_t total;
};

static double loo_mix_cdf(double x, double w, const struct loo_mix *mx)
{
	double s = 0;
	int m;
	for (m = 3; m <= mx->maxm; m++)
		if (mx->count[m])
			s += (double)mx->count[m] * loo_cdf(x, w, m);
	return s / (double)mx->total;
}

static double loo_abs_quantile(double q, double w, const struct loo_mix *mx)
{
	double lo = 0, hi = 100;
	int i;
	for (i = 0; i < 60; i++) {
		double mid = 0.5 * (lo + hi);
		if (2 * loo_mix_cdf(mid, w, mx) - 1 < q)
			lo = mid;
		else
			hi = mid;
	}
	return 0.5 * (lo + hi);
}

/* the model's P(|r| > HR_DETECT_TAIL_AT x its median |r| / 0.6745) */
static double loo_exceed(double w, const void *arg)
{
	const struct loo_mix *mx = arg;
	return 2 * (1 - loo_mix_cdf(HR_DETECT_TAIL_AT * loo_abs_quantile(0.5, w, mx) / N_MAD, w, mx));
}

double hr_noise_tail_weight_loo(double *u, size_t n, const size_t *count, int maxm)
{
	struct loo_mix mx = {count, maxm, 0};
	double cut;
	size_t i, k = 0;
	int m;

	for (m = 3; m <= maxm; m++)
		mx.total += count[m];
	if (!mx.total)
		return hr_noise_tail_weight(u, n);
	if (abs_sorted(u, n))
		return 1;
	cut = HR_DETECT_TAIL_AT * quantile(u, n, 0.5) / N_MAD;
	for (i = 0; i < n; i++)
		k += u[i] > cut;
	return bisect_w((double)k / (double)n, loo_exceed, &mx);
}

/* P(x <= a), x = -clip(u - e, -c, c) - k: one night's CUSUM increment
 * when the reference is e (robust sd) above the series' true level */
static double incr_cdf(double a, double k, double c, double w, double e)
{
	double b = -a - k; /* x <= a  <=>  clip(u - e) >= b */
	if (b <= -c)
		return 1;
	if (b > c)
		return 0;
	return 1 - hr_noise_cdf(b + e, w);
}

/* solve A x = b in place (n x n, row-major), partial pivoting; 0 or -1 */
static int solve(double *A, double *b, int n)
{
	int i, j, r;

	for (i = 0; i < n; i++) {
		int p = i;
		for (r = i + 1; r < n; r++)
			if (fabs(A[r * n + i]) > fabs(A[p * n + i]))
				p = r;
		if (!(fabs(A[p * n + i]) > 1e-300))
			return -1;
		if (p != i) {
			double t;
			for (j = 0; j < n; j++) {
				t = A[i * n + j];
				A[i * n + j] = A[p * n + j];
				A[p * n + j] = t;
			}
			t = b[i];
			b[i] = b[p];
			b[p] = t;
		}
		for (r = i + 1; r < n; r++) {
			double f = A[r * n + i] / A[i * n + i];
			if (f == 0)
				continue;
			for (j = i; j < n; j++)
				A[r * n + j] -= f * A[i * n + j];
			b[r] -= f * b[i];
		}
	}
	for (i = n - 1; i >= 0; i--) {
		double s = b[i];
		for (j = i + 1; j < n; j++)
			s -= A[i * n + j] * b[j];
		b[i] = s / A[i * n + i];
	}
	return 0;
}

static double arl_shift(double h, double k, double c, double w, double e)
{
	enum { N = HR_DETECT_GRID };
	static _Thread_local double A[N * N];
	double b[N], d = h / (N - 0.5);
	int i, l;

	if (!(h > 0))
		return 1;
	/* (I - R) L = 1: R[i][l] the chance to go from cell i to cell l */
	for (i = 0; i < N; i++) {
		double s = i * d;
		for (l = 0; l < N; l++) {
			double p = l == 0 ? incr_cdf(0.5 * d - s, k, c, w, e)
					  : incr_cdf((l + 0.5) * d - s, k, c, w, e) -
					    incr_cdf((l - 0.5) * d - s, k, c, w, e);
			A[i * N + l] = (i == l) - p;
		}
		b[i] = 1;
	}
	if (solve(A, b, N))
		return HUGE_VAL;
	return b[0];
}

double hr_cusum_arl(double h, double k, double c, double w)
{
	return arl_shift(h, k, c, w, 0);
}

double hr_noise_ref_sd(int nref, double w)
{
	/* E[clip(u, -REF_WIN, REF_WIN)^2] under the model, by the midpoint rule */
	double m2 = 0, step = 0.01, x;
	if (nref < 1)
		return HUGE_VAL;
	for (x = -REF_WIN - 10; x < REF_WIN + 10; x += step) {
		double mid = x + 0.5 * step, c = mid > REF_WIN ? REF_WIN : mid < -REF_WIN ? -REF_WIN : mid;
		m2 += c * c * (hr_noise_cdf(x + step, w) - hr_noise_cdf(x, w));
	}
	return sqrt(m2 / nref);
}

double hr_cusum_rate(double h, double k, double c, double w, int nref)
{
	/* Gauss-Hermite, 7 points, over e ~ N(0, sd^2) */
	static const double x[4] = { 0, 1.154405394739968, 2.366759410734541, 3.750439717725742 };
	static const double g[4] = { 0.457142857142857, 0.240123178605013, 0.030757123967586, 0.000548268855972 };
	double sd = nref > 0 ? hr_noise_ref_sd(nref, w) : 0, r = 0;
	int i;

	for (i = 0; i < 4; i++) {
		r += g[i] / arl_shift(h, k, c, w, sd * x[i]);
		if (i)
			r += g[i] / arl_shift(h, k, c, w, -sd * x[i]);
	}
	return r;
}

double hr_cusum_threshold(double arl0, double k, double c, double w, int nref)
{
	double lo = 0, hi = 1;
	int i;

	while (hr_cusum_rate(hi, k, c, w, nref) > 1 / arl0) {
		lo = hi;
		hi *= 2;
		if (hi > 1000)
			return 1000;
	}
	for (i = 0; i < 60 && hi - lo > 1e-3 * hi; i++) {
		double mid = 0.5 * (lo + hi);
		if (hr_cusum_rate(mid, k, c, w, nref) > 1 / arl0)
			lo = mid;
		else
			hi = mid;
	}
	/* one clipped night adds at most c - k: never a regression alone */
	return hi > c - k ? hi : c - k;
}

/* median of ln v over [a, b) */
static double log_median(const double *v, size_t a, size_t b)
{
	double t[MAX_WINDOW];
	size_t i, m = 0;
	for (i = a; i < b && m < MAX_WINDOW; i++)
		t[m++] = log(v[i]);
	return median_sort(t, m);
}

/* the reference level of v[a, b): the mean of ln v, each value at most
 * REF_WIN sigma from their median (winsorized: a tail night counts little) */
static double log_reference(const double *v, size_t a, size_t b, double sigma)
{
	double med = log_median(v, a, b), s = 0;
	size_t i;
	for (i = a; i < b; i++) {
		double y = log(v[i]);
		s += y > med + REF_WIN * sigma ? med + REF_WIN * sigma : y < med - REF_WIN * sigma ? med - REF_WIN * sigma : y;
	}
	return s / (double)(b - a);
}

double hr_detect_reference(const double *v, size_t a, size_t b, double sigma)
{
	return log_reference(v, a, b, sigma);
}

double hr_night_tail(double y, double ref, double sigma, double w, int nref, int twice, double *z)
{
	double sr = nref > 0 ? hr_noise_ref_sd(nref, w) : 0;
	double zz = (y - ref) / (sigma * sqrt(1 + sr * sr)), p = hr_noise_cdf(zz, w);
	if (z)
		*z = zz;
	return twice ? p * p : p;
}

int hr_far_run(const double *v, const double *both, size_t n, size_t since, int window, double sigma, double w,
	       struct hr_far *out)
{
	size_t lo, i;
	double ref;

	memset(out, 0, sizeof(*out));
	if (window < 1)
		window = 1;
	lo = since > (size_t)window ? since - (size_t)window : 0;
	if (!(sigma > 0) || since >= n || since - lo < 3)
		return -1;
	ref = log_reference(v, lo, since, sigma);
	out->p = 1;
	out->nref = (int)(since - lo);
	for (i = since; i < n; i++) {
		int twice = both && isfinite(both[i]) && both[i] > 0;
		double y = log(twice ? both[i] : v[i]);
		out->p_last = hr_night_tail(y, ref, sigma, w, out->nref, twice, &out->z);
		out->p *= out->p_last;
		out->twice = twice;
		out->pct_both = 100 * (1 - exp(y - ref));
	}
	out->reference = exp(ref);
	out->pct = 100 * (1 - v[n - 1] / out->reference);
	return 0;
}

int hr_cusum_run(const double *v, size_t n, double sigma, const struct hr_cusum_cfg *cfg,
		 struct hr_cusum *out)
{
	double s = 0, ref = 0;
	size_t t, start = 0, w = cfg->window < 1 ? 1 : cfg->window > MAX_WINDOW ? MAX_WINDOW : (size_t)cfg->window;
	int nref = 0, have = 0;

	memset(out, 0, sizeof(*out));
	if (!(sigma > 0))
		return CH_ERR_USAGE;
	for (t = 0; t < n; t++)
		if (!isfinite(v[t]) || !(v[t] > 0))
			return CH_ERR_USAGE;
	for (t = 0; t < n; t++) {
		double z;
		if (s == 0) {
			/* the reference: the nights up to yesterday; frozen while S > 0 */
			size_t lo = t > w ? t - w : 0;
			nref = (int)(t - lo);
			have = nref >= cfg->min_nights;
			if (have)
				ref = log_reference(v, lo, t, sigma);
			start = t;
		}
		if (!have)
			continue;
		z = (log(v[t]) - ref) / sigma;
		if (z > cfg->clip)
			z = cfg->clip;
		if (z < -cfg->clip)
			z = -cfg->clip;
		s = s - z - cfg->k;
		if (s < 0)
			s = 0;
	}
	out->judged = have;
	out->s = s;
	out->nref = nref;
	out->reference = have ? exp(ref) : 0;
	if (have && s > 0) {
		out->since = start;
		out->nights = (int)(n - start);
		out->pct = 100 * (1 - exp(log_median(v, start, n) - ref));
	}
	return 0;
}

/* ------------------------------------------------------------ the pool */

#define POOL_CAP 65536
#define TAIL_CAP 262144

struct pool_class {
	char key[192];
	double *r;            /* residuals of the recorded values (the sigma) */
	double *t;            /* residuals of single measurements (the tail) */
	size_t n, seen, nt, seen_t;
	double sigma;
	int has_sigma;
	size_t nm[HR_DETECT_LOO_MAXM + 1]; /* residuals added from series of m values */
};

struct hr_noise_pool {
	struct pool_class *c;
	size_t n, cap;
	double w;
	uint64_t rng;
	struct {
		int m, nref;
		double h;
	} th[64];
	int nth;
};

struct hr_noise_pool *hr_noise_pool_new(void)
{
	struct hr_noise_pool *p = calloc(1, sizeof(*p));
	if (p) {
		p->w = 1;
		p->rng = 0x9E3779B97F4A7C15ull;
	}
	return p;
}

void hr_noise_pool_free(struct hr_noise_pool *p)
{
	size_t i;
	if (!p)
		return;
	for (i = 0; i < p->n; i++) {
		free(p->c[i].r);
		free(p->c[i].t);
	}
	free(p->c);
	free(p);
}

const char *hr_noise_class(const char *gpu, const char *metric, char *buf, size_t n)
{
	const char *kind = gpu;
	if (!strncmp(gpu, "gpu", 3))
		kind = "gpu";
	snprintf(buf, n, "%s@%s", metric, kind);
	return buf;
}

static struct pool_class *pool_find(const struct hr_noise_pool *p, const char *cls)
{
	size_t i;
	for (i = 0; i < p->n; i++)
		if (!strcmp(p->c[i].key, cls))
			return &p->c[i];
	return NULL;
}

static uint64_t pool_rand(struct hr_noise_pool *p)
{
	p->rng ^= p->rng >> 12;
	p->rng ^= p->rng << 25;
	p->rng ^= p->rng >> 27;
	return p->rng * 2685821657736338717ull;
}

void hr_noise_single(const double *v, const double *both, size_t n, int window, double *out)
{
	size_t lo = window > 0 && n > (size_t)window ? n - (size_t)window : 0, i;
	int all = 1;
	for (i = lo; i < n; i++)
		all &= isfinite(both[i]);
	for (i = 0; i < n; i++) {
		uint64_t hash = (uint64_t)(i + 1) * 0x9E3779B97F4A7C15ull; /* Fibonacci hashing of the index */
		if (!isfinite(both[i]))
			out[i] = v[i];
		else
			out[i] = all && (hash >> 63) ? both[i] : 2 * v[i] - both[i];
	}
}

/* keep residual r[0..m) in a class's sample of at most POOL_CAP */
static void reservoir_add(struct hr_noise_pool *p, double *keep, size_t *n, size_t *seen, const double *r, size_t m)
{
	size_t i;
	for (i = 0; i < m; i++, (*seen)++) {
		if (*n < POOL_CAP) {
			keep[(*n)++] = r[i];
		} else {
			/* reservoir: the seen-th value replaces one with chance cap / seen */
			uint64_t j = pool_rand(p) % (*seen + 1);
			if (j < POOL_CAP)
				keep[j] = r[i];
		}
	}
}

static struct pool_class *pool_class_new(struct hr_noise_pool *p, const char *cls)
{
	struct pool_class *c;
	if (p->n == p->cap) {
		size_t nc = p->cap ? 2 * p->cap : 16;
		struct pool_class *cc = realloc(p->c, nc * sizeof(*cc));
		if (!cc)
			return NULL;
		p->c = cc;
		p->cap = nc;
	}
	c = &p->c[p->n];
	memset(c, 0, sizeof(*c));
	snprintf(c->key, sizeof(c->key), "%s", cls);
	if (!(c->r = malloc(POOL_CAP * sizeof(double))) || !(c->t = malloc(POOL_CAP * sizeof(double)))) {
		free(c->r);
		return NULL;
	}
	p->n++;
	return c;
}

int hr_noise_pool_add(struct hr_noise_pool *p, const char *cls, const double *v, const double *single, size_t n,
		      int window)
{
	double r[MAX_WINDOW];
	struct pool_class *c = pool_find(p, cls);
	size_t m;

	m = hr_noise_residuals(v, n, window, r);
	if (!m)
		return 0;
	if (!c && !(c = pool_class_new(p, cls)))
		return CH_ERR_RUNTIME;
	reservoir_add(p, c->r, &c->n, &c->seen, r, m);
	if (single)
		m = hr_noise_residuals(single, n, window, r);
	c->nm[m < HR_DETECT_LOO_MAXM ? m : HR_DETECT_LOO_MAXM] += m;
	reservoir_add(p, c->t, &c->nt, &c->seen_t, r, m);
	return 0;
}

int hr_noise_pool_fit(struct hr_noise_pool *p, double floor)
{
	double *u = NULL, *tmp = NULL;
	size_t i, j, nu = 0, nm[HR_DETECT_LOO_MAXM + 1] = {0};

	if (!(tmp = malloc(POOL_CAP * sizeof(double))) || !(u = malloc(TAIL_CAP * sizeof(double)))) {
		free(tmp);
		return CH_ERR_RUNTIME;
	}
	for (i = 0; i < p->n; i++) {
		struct pool_class *c = &p->c[i];
		double st;
		c->has_sigma = c->n >= HR_DETECT_MIN_CLASS;
		if (!c->has_sigma)
			continue;
		memcpy(tmp, c->r, c->n * sizeof(double));
		c->sigma = hr_noise_sigma(tmp, c->n, floor);
		/* the tail: the single measurements' residuals in their own spread */
		memcpy(tmp, c->t, c->nt * sizeof(double));
		st = hr_noise_sigma(tmp, c->nt, floor);
		for (j = 0; j < c->nt && nu < TAIL_CAP; j++)
			u[nu++] = c->t[j] / st;
		for (j = 0; j <= HR_DETECT_LOO_MAXM; j++)
			nm[j] += c->nm[j];
	}
	p->w = hr_noise_tail_weight_loo(u, nu, nm, HR_DETECT_LOO_MAXM);
	p->nth = 0;
	free(tmp);
	free(u);
	return 0;
}

int hr_noise_pool_sigma(const struct hr_noise_pool *p, const char *cls, double *sigma, size_t *nres)
{
	const struct pool_class *c = pool_find(p, cls);
	if (!c || !c->has_sigma)
		return -1;
	*sigma = c->sigma;
	*nres = c->n;
	return 0;
}

double hr_noise_pool_tail(const struct hr_noise_pool *p)
{
	return p->w;
}

double hr_noise_pool_threshold(struct hr_noise_pool *p, int m, int nref, const struct hr_cusum_cfg *cfg)
{
	int i;
	double h;
	if (m < 1)
		m = 1;
	for (i = 0; i < p->nth; i++)
		if (p->th[i].m == m && p->th[i].nref == nref)
			return p->th[i].h;
	h = hr_cusum_threshold(HR_DETECT_NIGHTS_PER_ALARM * m / cfg->alpha, cfg->k, cfg->clip, p->w, nref);
	if (p->nth < (int)(sizeof(p->th) / sizeof(p->th[0]))) {
		p->th[p->nth].m = m;
		p->th[p->nth].nref = nref;
		p->th[p->nth++].h = h;
	}
	return h;
}
