/*
 * hr_trend.c - the regression rule on one series of nightly values
 * (hr_trend.h).
 */
#include "report/judge/hr_trend.h"
#include "report/judge/hr_quality.h"
#include "report/judge/hr_rules.h"

#include <math.h>
#include <stdlib.h>

void hr_check_cfg_init(struct hr_check_cfg *c)
{
	/* the fabric_regressed row's parameters (hr_rules.c) */
	c->window = (int)hr_rule_param("fabric_regressed", "window");
	c->min_nights = (int)hr_rule_param("fabric_regressed", "min_nights");
	c->threshold_pct = hr_rule_param("fabric_regressed", "threshold_pct");
	c->persist = (int)hr_rule_param("fabric_regressed", "persist");
	c->alpha = hr_rule_param("fabric_regressed", "alpha");
	c->comparisons = 1;
	c->floor_frac = hr_rule_param("fabric_regressed", "mad_floor_frac");
	c->z_min = hr_rule_param("fabric_regressed", "z_min");
	hr_cusum_cfg_init(&c->cusum);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

int hr_history_trend(const double *v, size_t n, const struct hr_check_cfg *cfg, struct hr_trend *t)
{
	double win[1024], dev[1024];
	size_t s, lo, k;
	int any = 0;

	if (n < 2 || cfg->window < 1 || cfg->window > 1024)
		return HR_TREND_NONE;
	/* the earliest start s of a run v[s..n-1] that is entirely below the
	 * baseline of the window before s, beyond its spread */
	for (s = n - 1; s >= 1; s--) {
		double b, mad, sp, c;
		size_t w;
		int ok = 1;
		lo = s > (size_t)cfg->window ? s - (size_t)cfg->window : 0;
		w = s - lo;
		if ((int)w < cfg->min_nights)
			break; /* earlier starts have even fewer nights before them */
		for (k = lo; k < s; k++)
			win[k - lo] = v[k];
		b = median(win, w);
		if (!(b > 0))
			continue;
		for (k = 0; k < w; k++)
			dev[k] = fabs(win[k] - b);
		mad = median(dev, w);
		sp = 1.4826 * mad;
		if (sp < cfg->floor_frac * b)
			sp = cfg->floor_frac * b;
		/* one night alone must be improbable at alpha over the node's
		 * series; a run of persist nights or more only each at the
		 * persist-th root of that (the nights multiply) */
		if (n - s >= (size_t)(cfg->persist > 1 ? cfg->persist : 1))
			c = hr_cutoff(pow(cfg->alpha / (cfg->comparisons > 1 ? cfg->comparisons : 1),
					  1.0 / (cfg->persist > 1 ? cfg->persist : 1)), 1, w, cfg->z_min);
		else
			c = hr_cutoff(cfg->alpha, cfg->comparisons, w, cfg->z_min);
		for (k = s; k < n && ok; k++)
			ok = (b - v[k]) / b * 100 >= cfg->threshold_pct && (b - v[k]) / sp >= c;
		if (!ok)
			continue;
		any = 1;
		t->since = s;
		t->baseline = b;
		t->spread_pct = 100 * sp / b;
		t->z = (v[n - 1] - b) / sp;
		t->cut = c;
	}
	if (!any)
		return HR_TREND_NONE;
	t->pct = (t->baseline - v[n - 1]) / t->baseline * 100;
	t->nights = (int)(n - t->since);
	return t->nights >= (cfg->persist >= 1 ? cfg->persist : 1) ? HR_TREND_REGRESSED : HR_TREND_ONCE;
}

int hr_history_regressed(const double *v, size_t n, const struct hr_check_cfg *cfg,
			 size_t *since, double *baseline, double *pct)
{
	struct hr_trend t;
	int r = hr_history_trend(v, n, cfg, &t);

	if (r) {
		*since = t.since;
		*baseline = t.baseline;
		*pct = t.pct;
	}
	return r;
}
