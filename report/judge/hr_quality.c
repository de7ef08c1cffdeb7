/*
 * hr_quality.c - measurement quality and the significance cut-off
 * (hr_quality.h).
 */
#include "report/judge/hr_quality.h"
#include "report/judge/hr_rules.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void hr_quality_init(struct hr_quality *q)
{
	memset(q, 0, sizeof(*q));
}

static void add(struct hr_quality *q, const char *fmt, double v)
{
	size_t l = strlen(q->why);
	if (l + 2 < sizeof(q->why))
		snprintf(q->why + l, sizeof(q->why) - l, fmt, l ? "; " : "", v);
	q->noisy = 1;
}

static double worst(double a, double b)
{
	return isnan(a) ? b : isnan(b) ? a : a > b ? a : b;
}

void hr_quality_host(struct hr_quality *q, const struct hr_conditions *c)
{
	double psi, busy;

	if (!c || !c->known)
		return;
	q->host_known = 1;
	psi = worst(c->before.cpu_pressure_pct, c->after.cpu_pressure_pct);
	busy = worst(c->before.cpu_busy_pct, c->after.cpu_busy_pct);
	if (psi >= hr_rule_param("measurement_noisy", "max_pressure_pct"))
		add(q, "%shost CPU pressure %.0f%%", psi);
	if (busy >= hr_rule_param("measurement_noisy", "max_busy_pct"))
		add(q, "%shost CPUs %.0f%% busy with other work", busy);
	if (c->per_core > hr_rule_param("measurement_noisy", "max_per_core"))
		add(q, "%soversubscribed: %.2g threads per CPU", c->per_core);
}

static double known(const struct hr_rv *v)
{
	return v->num >= 0 && isfinite(v->num) ? v->num : NAN;
}

/* the conditions of a result record as read, into @c; 0 when absent */
static int result_conditions(const struct hr_result *r, int before_only, struct hr_conditions *c)
{
	const struct hr_result_conditions *k = &r->conditions;

	if (!k->present)
		return 0;
	memset(c, 0, sizeof(*c));
	c->known = 1;
	c->before.loadavg_1m = known(&k->before.loadavg_1m);
	c->before.cpu_pressure_pct = known(&k->before.cpu_pressure_pct);
	c->before.cpu_busy_pct = known(&k->before.cpu_busy_pct);
	c->after.loadavg_1m = before_only ? NAN : known(&k->after.loadavg_1m);
	c->after.cpu_pressure_pct = before_only ? NAN : known(&k->after.cpu_pressure_pct);
	c->after.cpu_busy_pct = before_only ? NAN : known(&k->after.cpu_busy_pct);
	c->per_core = before_only ? NAN : known(&k->per_core);
	return 1;
}

void hr_quality_result_host(struct hr_quality *q, const struct hr_result *r, int before_only)
{
	struct hr_conditions c;

	if (result_conditions(r, before_only, &c))
		hr_quality_host(q, &c);
}

void hr_quality_loader(struct hr_quality *q, const struct hr_conditions *c, double base_psi_pct)
{
	hr_quality_init(q);
	hr_quality_host_busy(q, base_psi_pct);
	if (c && c->known) {
		/* before the run only: the load it makes itself is its measurement */
		struct hr_conditions b = *c;
		b.after.loadavg_1m = b.after.cpu_pressure_pct = b.after.cpu_busy_pct = NAN;
		b.per_core = NAN;
		hr_quality_host(q, &b);
	}
}

void hr_quality_loader_result(struct hr_quality *q, const struct hr_result *r)
{
	struct hr_conditions c;
	double psi = NAN;
	size_t i;
	int have = result_conditions(r, 1, &c);

	for (i = 0; i < r->configs_list.n; i++)
		if (r->configs[i].placement.str && !strcmp(r->configs[i].placement.str, "baseline")) {
			psi = known(&r->configs[i].psi_avg10);
			break;
		}
	hr_quality_loader(q, have ? &c : NULL, psi);
}

void hr_quality_cv(struct hr_quality *q, double cv, const char *at)
{
	size_t l;

	if (isnan(cv))
		return;
	q->cv_known = 1;
	if (!(cv > hr_rule_param("measurement_noisy", "max_cv")))
		return;
	l = strlen(q->why);
	if (l + 2 < sizeof(q->why))
		snprintf(q->why + l, sizeof(q->why) - l, "%sCV %.2f%s%s", l ? "; " : "", cv, at ? " at " : "",
			 at ? at : "");
	q->noisy = 1;
}

void hr_quality_host_busy(struct hr_quality *q, double psi_pct)
{
	if (isnan(psi_pct))
		return;
	q->host_known = 1;
	if (psi_pct >= hr_rule_param("measurement_noisy", "max_pressure_pct"))
		add(q, "%shost CPU pressure %.0f%% before the load started (loader_contention's baseline)", psi_pct);
}

/* ------------------------------------------------------------ Student's t */

/* the continued fraction of the incomplete beta function (Numerical
 * Recipes in C, 2nd ed., betacf) */
static double betacf(double a, double b, double x)
{
	const double eps = 3e-14, fpmin = 1e-300;
	double qab = a + b, qap = a + 1, qam = a - 1, c = 1, d = 1 - qab * x / qap, h;
	int m;

	if (fabs(d) < fpmin)
		d = fpmin;
	d = 1 / d;
	h = d;
	for (m = 1; m <= 400; m++) {
		int m2 = 2 * m;
		double aa = m * (b - m) * x / ((qam + m2) * (a + m2)), del;
		d = 1 + aa * d;
		if (fabs(d) < fpmin)
			d = fpmin;
		c = 1 + aa / c;
		if (fabs(c) < fpmin)
			c = fpmin;
		d = 1 / d;
		h *= d * c;
		aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
		d = 1 + aa * d;
		if (fabs(d) < fpmin)
			d = fpmin;
		c = 1 + aa / c;
		if (fabs(c) < fpmin)
			c = fpmin;
		d = 1 / d;
		del = d * c;
		h *= del;
		if (fabs(del - 1) < eps)
			break;
	}
	return h;
}

/* I_x(a, b), the regularised incomplete beta function */
static double ibeta(double a, double b, double x)
{
	double bt;

	if (x <= 0)
		return 0;
	if (x >= 1)
		return 1;
	bt = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log(1 - x));
	if (x < (a + 1) / (a + b + 2))
		return bt * betacf(a, b, x) / a;
	return 1 - bt * betacf(b, a, 1 - x) / b;
}

/* P(T > t), t >= 0 */
static double t_sf(double t, double df)
{
	return 0.5 * ibeta(df / 2, 0.5, df / (df + t * t));
}

/* P(Z > z) of the standard normal */
static double norm_sf(double z)
{
	return 0.5 * erfc(z / sqrt(2.0));
}

double hr_t_upper(double p, double df)
{
	double lo = 0, hi = 1;
	int i, normal = df > 1e6;

	if (!(p > 0 && p < 0.5) || !(df > 0))
		return NAN;
	while ((normal ? norm_sf(hi) : t_sf(hi, df)) > p && hi < 1e12)
		hi *= 2;
	for (i = 0; i < 200 && hi - lo > 1e-9 * hi; i++) {
		double mid = 0.5 * (lo + hi);
		if ((normal ? norm_sf(mid) : t_sf(mid, df)) > p)
			lo = mid;
		else
			hi = mid;
	}
	return 0.5 * (lo + hi);
}

/* a small cache: the same (p, df) comes back for every value of a class */
struct cut_entry {
	double p, df, t;
};

double hr_cutoff(double alpha, int m, size_t n, double floor_z)
{
	static __thread struct cut_entry cache[64];
	static __thread unsigned next;
	double p = alpha / (m < 1 ? 1 : m), df = HR_MAD_EFFICIENCY * ((double)n - 1), t;
	unsigned i;

	if (df < 1)
		df = 1;
	for (i = 0; i < 64; i++)
		if (cache[i].p == p && cache[i].df == df)
			return cache[i].t > floor_z ? cache[i].t : floor_z;
	t = hr_t_upper(p, df);
	if (isnan(t))
		t = floor_z;
	cache[next % 64] = (struct cut_entry){ p, df, t };
	next++;
	return t > floor_z ? t : floor_z;
}
