/*
 * hr_judge.c - the judge's shared state and its comparisons: reasons,
 * classes of like values, the fleet statistics and each value's significance,
 * the levels by the thresholds, and the small formatting helpers the rule
 * families share (hr_judge.h).
 */
#include "report/judge/hr_judge.h"
#include "report/judge/hr_rules.h"
#include "report/judge/hr_checkpoint.h"
#include "report/judge/hr_detect.h"
#include "report/judge/hr_inventory.h"
#include "report/judge/hr_quality.h"
#include "report/hr_util.h"
#include "base/ch_common.h"
#include "base/ch_result.h"
#include "base/ch_stats.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *hr_level_name(int level)
{
	return level >= HR_FAIL ? "fail" : level == HR_WARN ? "warn" : "info";
}

const char *hr_verdict_name(int level)
{
	return level >= HR_FAIL ? "FAIL" : level == HR_WARN ? "WARN" : "PASS";
}

double hr_robust_z(double x, double median, double mad, double floor_frac)
{
	double d = mad;
	if (d < floor_frac * fabs(median))
		d = floor_frac * fabs(median);
	if (!(d > 0))
		return x == median ? 0 : (x > median ? 1e9 : -1e9);
	return 0.6745 * (x - median) / d;
}

int hr_relative_level(const struct hr_thresholds *th, double z, double cut, double pct_below)
{
	if (isnan(z) || isnan(cut) || z > -cut)
		return HR_INFO;
	if (pct_below >= th->fail_pct_below)
		return HR_FAIL;
	if (pct_below >= th->warn_pct_below)
		return HR_WARN;
	return HR_INFO;
}

int hr_absolute_level(const struct hr_thresholds *th, double ratio)
{
	if (isnan(ratio))
		return HR_INFO;
	if (ratio < th->fail_ratio)
		return HR_FAIL;
	if (ratio < th->warn_ratio)
		return HR_WARN;
	return HR_INFO;
}

static void *grow(void *v, size_t *cap, size_t n, size_t sz, int *oom)
{
	void *p;
	size_t c;
	if (n < *cap)
		return v;
	c = *cap ? *cap * 2 : 64;
	p = realloc(v, c * sz);
	if (!p) {
		*oom = 1;
		return NULL;
	}
	*cap = c;
	return p;
}

/* A reason of @node (-1: the fleet). Returns it (valid until the next
 * reason is added), NULL when out of memory. */
struct reason *hj_add_reason(struct an *a, int node, int level, const char *code,
			     const char *subject, const char *source, const char *action,
			     const char *fmt, ...)
{
	struct reason *r;
	char text[2048];
	va_list ap;
	void *v;
	if (!hr_rule_find(code)) {
		/* every reason is a row of the rule table */
		if (!a->bad_code)
			a->bad_code = code;
		return NULL;
	}
	v = grow(a->r, &a->capr, a->nr, sizeof(*a->r), &a->oom);
	if (!v)
		return NULL;
	a->r = v;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	r = &a->r[a->nr++];
	memset(r, 0, sizeof(*r));
	r->node = node;
	r->level = level;
	snprintf(r->code, sizeof(r->code), "%s", code);
	snprintf(r->subject, sizeof(r->subject), "%s", subject ? subject : "");
	r->text = strdup(text);
	r->action = action ? strdup(action) : NULL;
	r->source = source ? strdup(source) : NULL;
	if (!r->text)
		a->oom = 1;
	return r;
}

int hj_class_of(struct an *a, const char *key, const char *label, const char *unit)
{
	size_t i;
	void *v;
	for (i = 0; i < a->nc; i++)
		if (!strcmp(a->c[i].key, key))
			return (int)i;
	v = grow(a->c, &a->capc, a->nc, sizeof(*a->c), &a->oom);
	if (!v)
		return -1;
	a->c = v;
	memset(&a->c[a->nc], 0, sizeof(a->c[0]));
	snprintf(a->c[a->nc].key, sizeof(a->c[0].key), "%s", key);
	snprintf(a->c[a->nc].label, sizeof(a->c[0].label), "%s", label);
	a->c[a->nc].unit = unit;
	return (int)a->nc++;
}

/* The text printf would write into a buffer of @size bytes (truncated as
 * snprintf does), kept once in a->texts: the same text is the same pointer,
 * valid until a->texts is released. "" when out of memory (a->oom set). */
uint32_t hj_keep(struct an *a, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
uint32_t hj_keep(struct an *a, size_t size, const char *fmt, ...)
{
	char buf[INST_BASIS_MAX];
	va_list ap;
	void *it;
	json_t *id;
	if (size > sizeof(buf))
		size = sizeof(buf);
	va_start(ap, fmt);
	vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	if (!buf[0])
		return 0;
	if (!a->texts && !(a->texts = json_object()))
		goto oom;
	if ((id = json_object_get(a->texts, buf)))
		return (uint32_t)json_integer_value(id);
	if (a->ntext >= UINT32_MAX)
		goto oom;
	if (a->ntext + 1 > a->captext) {
		size_t cap = a->captext ? 2 * a->captext : 64;
		const char **v = realloc(a->text_v, cap * sizeof(*v));
		if (!v)
			goto oom;
		a->text_v = v;
		a->captext = cap;
	}
	if (!a->ntext)
		a->text_v[a->ntext++] = ""; /* id 0 */
	if (json_object_set_new_nocheck(a->texts, buf, json_integer((json_int_t)a->ntext)))
		goto oom;
	if (!(it = json_object_iter_at(a->texts, buf)))
		goto oom;
	a->text_v[a->ntext] = json_object_iter_key(it);
	return (uint32_t)a->ntext++;
oom:
	a->oom = 1;
	return 0;
}

const char *hj_superseded_by(const struct an *a, const struct inst *p)
{
	if (!p->sup)
		return NULL;
	return p->metric < 0 ? a->f->groups[p->sup - 1].source : a->f->devices[p->sup - 1].source;
}

struct inst *hj_new_inst(struct an *a, struct inst **arr, size_t *n, size_t *cap)
{
	void *v = grow(*arr, cap, *n, sizeof(**arr), &a->oom);
	struct inst *x;
	if (!v)
		return NULL;
	*arr = v;
	x = &(*arr)[(*n)++];
	memset(x, 0, sizeof(*x));
	x->expected = x->node_median = NAN;
	x->s_rel = x->peer_median = x->s_node = NAN;
	x->ratio_allow = NAN;
	x->like = 1;
	return x;
}

const struct inst *hj_group_inst(const struct an *a, size_t g)
{
	return a->grp_inst && a->grp_inst[g] >= 0 ? &a->gi[a->grp_inst[g]] : NULL;
}

/* Fleet statistics of every class, then the significance of each value
 * (hr_quality.h, docs/health_report.md "False alarms"). */
static const struct inst *sort_base;

static int cmp_by_node(const void *x, const void *y)
{
	const struct inst *a = &sort_base[*(const size_t *)x], *b = &sort_base[*(const size_t *)y];
	return a->node - b->node;
}

/* The nodes a value is compared for: its node, or every node of its group. */
static void inst_nodes(const struct an *a, const struct inst *p, const int **nodes, int *n)
{
	static int one;
	if (p->metric >= 0 || p->node >= 0) {
		one = p->node;
		*nodes = &one;
		*n = p->node >= 0;
		return;
	}
	*nodes = a->f->groups[p->subject].nodes;
	*n = a->f->groups[p->subject].nnodes;
}

/* The comparisons a value takes part in: against its expectation, its like
 * values in the fleet, and (devices) the other like GPUs of its node. */
static int inst_comparisons(const struct an *a, const struct inst *p)
{
	return (!isnan(p->expected) && p->expected > 0) + (p->fleet_n >= a->th->min_fleet) +
	       (p->metric >= 0 && p->peer_n >= a->th->min_fleet - 1);
}

/* The spread floor of a value (relative): its own noise, mad_floor_frac. */
double hj_noise_floor(const struct an *a, const struct inst *p)
{
	double f = a->th->mad_floor_frac;
	double noise = hj_noise(a, p);
	return noise > f ? noise : f;
}

/* A level from an effect (% below) that is significant (hr_relative_level()):
 * FAIL only at or beyond @cut_fail too (the learned tail's quantile at the
 * FAIL's budget, hj_cut_fail(); @cut where no tail raised it), else WARN. */
static int effect_level(const struct an *a, double z, double cut, double cut_fail, double pct_below)
{
	int l = hr_relative_level(a->th, z, cut, pct_below);
	return l == HR_FAIL && !(z <= -cut_fail) ? HR_WARN : l;
}

/* @idx: the latest clean values of @v grouped by class, in order within
 * each (a counting sort: one pass over the values, not one per class);
 * end[c]: the end of class c's run in @idx, which starts at end[c - 1] (0
 * for the first). Returns end (caller frees), NULL when out of memory. */
static size_t *by_class(const struct an *a, const struct inst *v, size_t n, size_t *idx)
{
	size_t *end = calloc(a->nc + 1, sizeof(*end)), c, i;
	if (!end)
		return NULL;
	for (i = 0; i < n; i++)
		if (v[i].cls >= 0 && (size_t)v[i].cls < a->nc && !v[i].sup && !v[i].noisy)
			end[v[i].cls + 1]++;
	for (c = 1; c <= a->nc; c++)
		end[c] += end[c - 1];
	/* end[c] is now class c's start: filled up to its end */
	for (i = 0; i < n; i++)
		if (v[i].cls >= 0 && (size_t)v[i].cls < a->nc && !v[i].sup && !v[i].noisy)
			idx[end[v[i].cls]++] = i;
	return end;
}

/* Per class: the median and MAD of the clean latest values; per device
 * class also the leave-one-out residuals against each node's other like
 * GPUs (value / their median - 1), pooled over the fleet. */
static void class_stats(struct an *a, struct inst *v, size_t n, size_t *all)
{
	size_t c, i, s, e, k, *end = by_class(a, v, n, all), big = 1;
	double *x;
	if (!end) {
		a->oom = 1;
		return;
	}
	/* room for the largest class's values and a node's peers (2 x its
	 * size), not 2 x every value (the judge's peak: 12 MB at 100,000 GPUs) */
	for (c = 0; c < a->nc; c++)
		if (end[c] - (c ? end[c - 1] : 0) > big)
			big = end[c] - (c ? end[c - 1] : 0);
	if (!(x = malloc(2 * big * sizeof(*x)))) {
		free(end);
		a->oom = 1;
		return;
	}
	for (c = 0; c < a->nc && !a->oom; c++) {
		size_t *idx = all + (c ? end[c - 1] : 0);
		size_t m = end[c] - (c ? end[c - 1] : 0), nr = 0;
		double med, mad;
		if (!m)
			continue;
		for (i = 0; i < m; i++)
			x[i] = v[idx[i]].value;
		if (ch_median_mad(x, m, &med, &mad)) {
			a->oom = 1;
			break;
		}
		a->c[c].n = m;
		a->c[c].median = med;
		a->c[c].mad = mad;
		/* node medians (same class, same node) and each GPU's peers */
		sort_base = v;
		/* the values come device by device, so mostly in node order
		 * already: then no sort (what follows uses each node's run as
		 * a set: medians, whatever the order within it) */
		for (i = 1; i < m && v[idx[i - 1]].node <= v[idx[i]].node; i++)
			;
		if (i < m)
			qsort(idx, m, sizeof(*idx), cmp_by_node);
		for (s = 0; s < m; s = e) {
			double nm, nmad, *y = x + m;
			for (e = s; e < m && v[idx[e]].node == v[idx[s]].node; e++)
				x[e - s] = v[idx[e]].value;
			if (v[idx[s]].node < 0 || e - s < 2)
				continue;
			if (ch_median_mad(x, e - s, &nm, &nmad)) {
				a->oom = 1;
				break;
			}
			for (i = s; i < e; i++) {
				struct inst *p = &v[idx[i]];
				size_t np = 0;
				p->node_n = (int)(e - s);
				p->node_median = nm;
				if (p->metric < 0)
					continue;
				for (k = s; k < e; k++)
					if (k != i)
						y[np++] = v[idx[k]].value;
				if (ch_median_mad(y, np, &p->peer_median, &nmad)) {
					a->oom = 1;
					break;
				}
				p->peer_n = (int)np;
			}
		}
		/* the residuals of the GPUs with enough peers, pooled */
		for (i = 0; i < m; i++) {
			const struct inst *p = &v[idx[i]];
			if (p->metric >= 0 && p->peer_n >= a->th->min_fleet - 1 && p->peer_median > 0)
				x[nr++] = p->value / p->peer_median - 1;
		}
		if (nr && ch_median_mad(x, nr, &a->c[c].res_median, &a->c[c].res_mad)) {
			a->oom = 1;
			break;
		}
		a->c[c].res_n = nr;
	}
	free(x);
	free(end);
}

/* The level the value-based rules give @v, a second measurement of @p's
 * value, against the references and spreads @p was judged with (the
 * fleet's, its node's other GPUs', its expectation's). */
static int level_of_again(const struct an *a, const struct inst *p, const struct cls *k, double v, int *lr, int *ln)
{
	int lv = HR_INFO, l;
	*lr = *ln = HR_INFO;
	if (!isnan(p->s_rel) && k->median > 0) {
		l = *lr = effect_level(a, (v - k->median) / (p->s_rel * k->median), hj_cut(a, p), hj_cut_fail(a, p),
				       100.0 * (1 - v / k->median));
		lv = l > lv ? l : lv;
	}
	if (!isnan(p->s_node) && p->peer_median > 0) {
		l = *ln = effect_level(a, (v / p->peer_median - 1 - k->res_median) / p->s_node, hj_cut_node(a, p),
				       hj_cut_node_fail(a, p), 100.0 * (1 - v / p->peer_median));
		lv = l > lv ? l : lv;
	}
	if (!isnan(p->ratio_allow) && p->value > 0) {
		l = p->abs_by_median || (p->pcie_class && v <= a->th->pcie_class_gbps) ? p->level_abs
			: hr_absolute_level(a->th, p->ratio_allow * v / p->value);
		lv = l > lv ? l : lv;
	}
	return lv;
}

/* Caps @p's levels at the second measurement's: each rule's at @lv, the
 * highest any rule gives the second value; a fleet or node comparison
 * whose cut-off a learned heavy tail lowered for a value measured twice
 * (tail_cut(): both measurements beyond it) at its own second level @lr,
 * @ln, as that cut-off's chance rests on both being beyond the same one.
 * Returns 1 when some rule still flags @p (WARN or FAIL). */
static int cap_levels(struct inst *p, const struct cls *k, int lv, int lr, int ln)
{
	if (p->level_node > lv)
		p->level_node = lv;
	if (p->level_rel > lv)
		p->level_rel = lv;
	if (p->level_abs > lv)
		p->level_abs = lv;
	if (k->tail_w > 0 && p->level_rel > lr)
		p->level_rel = lr;
	if (k->res_tail_w > 0 && p->level_node > ln)
		p->level_node = ln;
	return p->level_node >= HR_WARN || p->level_rel >= HR_WARN || p->level_abs >= HR_WARN;
}

/* Agreement: a value roofline measured again (results.flagged[].
 * confirm_value, or devices[].roofs_again: a CPU socket's) stands only as far as the second measurement, held to the
 * same rules, agrees: each rule's level at most the second value's level;
 * a second value no rule flags did not reproduce the first. A single value
 * far out (a tail of the noise) is thereby never FAIL on its own: a fresh
 * measurement must be as far out too. */
static void judge_again(struct an *a, struct inst *p, const struct cls *k)
{
	const struct hr_device *d = &a->f->devices[p->subject];
	double v = d->flag_confirm_value[p->metric];
	struct inst_hist *h;
	int lv, lr, ln;
	if (d->flag_confirm[p->metric] != HR_CONFIRM_AGREED || isnan(v) ||
	    (p->level_node < HR_WARN && p->level_rel < HR_WARN && p->level_abs < HR_WARN))
		return;
	if (!(h = hj_hist_new(a, p)))
		return;
	h->again_v = v;
	p->again_judged = 1;
	lv = p->again_level = level_of_again(a, p, k, v, &lr, &ln);
	if (lv < HR_WARN || !cap_levels(p, k, lv, lr, ln)) {
		p->confirm = HR_CONFIRM_DISAGREED;
		p->level_node = p->level_rel = p->level_abs = HR_INFO;
		p->not_reproduced = 1;
		return;
	}
	p->confirm = HR_CONFIRM_AGREED; /* a FAIL it agrees with is confirmed */
}

/* Agreement for a group's headline busbw: allreduce_bw measured the largest
 * size again (the cell's "confirm"; hj_again_in(@p)), and the finding stands
 * only as far as that second value, held to the same rules, agrees (as
 * judge_again() for roofline): a second value no rule flags did not
 * reproduce the first (confirm DISAGREED, not judged low); a flagged one
 * caps each rule's level at its own (confirm AGREED: a FAIL it agrees with
 * is confirmed). Without a re-measurement nothing changes. */
static void judge_again_group(const struct an *a, struct inst *p, const struct cls *k)
{
	int lv, lr, ln;
	if (isnan(hj_again_in(a, p)) || (p->level_rel < HR_WARN && p->level_abs < HR_WARN))
		return;
	p->again_judged = 1;
	lv = p->again_level = level_of_again(a, p, k, hj_again_in(a, p), &lr, &ln);
	if (lv < HR_WARN || !cap_levels(p, k, lv, lr, ln)) {
		p->confirm = HR_CONFIRM_DISAGREED;
		p->level_rel = p->level_abs = HR_INFO;
		p->not_reproduced = 1;
		return;
	}
	p->confirm = HR_CONFIRM_AGREED;
}

double hj_fleet_median(const struct an *a, const struct inst *p)
{
	return p->fleet_cmp ? a->c[p->cls].median : NAN;
}

double hj_z(const struct an *a, const struct inst *p)
{
	const struct cls *k = &a->c[p->cls];
	return p->fleet_cmp ? (p->value - k->median) / (p->s_rel * k->median) : NAN;
}

int hj_measured_twice(const struct an *a, const struct inst *p)
{
	if (p->metric >= 0)
		return a->f->devices[p->subject].flag_confirm[p->metric] == HR_CONFIRM_AGREED &&
		       isfinite(a->f->devices[p->subject].flag_confirm_value[p->metric]);
	return !isnan(hj_again_in(a, p));
}

/* the cut-off @t (Student's t, hr_cutoff()) raised to the learned heavy
 * tail's quantile where the class has one: at the node's share alpha / m
 * for a value measured once; for a value measured twice (a fresh second
 * measurement held to the same cut-off, hj_measured_twice()) at its square
 * root, as both must be beyond it: two independent tails together have
 * the chance alpha / m */
static double tail_cut(const struct an *a, const struct inst *p, double t, double w, double budget)
{
	double c, share;
	if (isnan(t) || !(w > 0))
		return t;
	share = budget / hj_m(a, p);
	c = hr_noise_cut(hj_measured_twice(a, p) ? sqrt(share) : share, w);
	return c > t ? c : t;
}

double hj_cut(const struct an *a, const struct inst *p)
{
	return p->fleet_cmp ? tail_cut(a, p, hr_cutoff(a->th->false_alarm, hj_m(a, p), a->c[p->cls].n, a->th->z_outlier),
				       a->c[p->cls].tail_w, a->th->false_alarm) : NAN;
}

double hj_cut_fail(const struct an *a, const struct inst *p)
{
	return p->fleet_cmp ? tail_cut(a, p, hj_cut(a, p), a->c[p->cls].tail_w, a->th->fail_false_alarm) : NAN;
}

double hj_z_node(const struct an *a, const struct inst *p)
{
	return p->node_cmp ? (p->value / p->peer_median - 1 - a->c[p->cls].res_median) / p->s_node : NAN;
}

double hj_cut_node(const struct an *a, const struct inst *p)
{
	return p->node_cmp ? tail_cut(a, p, hr_cutoff(a->th->false_alarm, hj_m(a, p), a->c[p->cls].res_n, a->th->z_outlier),
				      a->c[p->cls].res_tail_w, a->th->false_alarm) : NAN;
}

double hj_cut_node_fail(const struct an *a, const struct inst *p)
{
	return p->node_cmp ? tail_cut(a, p, hj_cut_node(a, p), a->c[p->cls].res_tail_w, a->th->fail_false_alarm) : NAN;
}

double hj_pct_fleet(const struct an *a, const struct inst *p)
{
	return p->fleet_cmp ? 100.0 * p->value / a->c[p->cls].median : NAN;
}

const struct inst_hist *hj_hist(const struct an *a, const struct inst *p)
{
	static const struct inst_hist none = { .again_v = NAN, .noise = NAN };
	return p->hist_ix > 0 ? &a->hist[p->hist_ix - 1] : &none;
}

double hj_datasheet(const struct an *a, const struct inst *p)
{
	const struct hr_device *d;
	double ds;
	if (p->metric < 0)
		return NAN;
	d = &a->f->devices[p->subject];
	if (!d->ds)
		return NAN;
	ds = p->metric == 0 ? d->ds->memory_gbps : p->ladder ?
	     ch_datasheet_cuda_core_gflops(d->ds, (enum ch_dtype)(p->metric - 1)) : d->ds->gflops[p->metric - 1];
	return ds > 0 ? ds : NAN;
}

double hj_noise(const struct an *a, const struct inst *p)
{
	const struct hr_device *d;
	if (p->metric < 0)
		return hj_hist(a, p)->noise;
	d = &a->f->devices[p->subject];
	return p->metric == 0 ? d->memory_cv : d->compute_cv[p->metric - 1];
}

int hj_m(const struct an *a, const struct inst *p)
{
	const int *nodes = &p->node;
	int nn = p->node >= 0, j, m = 1;
	if (p->metric < 0 && p->node < 0) {
		nodes = a->f->groups[p->subject].nodes;
		nn = a->f->groups[p->subject].nnodes;
	}
	for (j = 0; j < nn; j++)
		if (nodes[j] >= 0 && (size_t)nodes[j] < a->f->nnodes && a->m_node[nodes[j]] > m)
			m = a->m_node[nodes[j]];
	return m;
}

struct inst_hist *hj_hist_new(struct an *a, struct inst *p)
{
	void *v;
	if (p->hist_ix > 0)
		return &a->hist[p->hist_ix - 1];
	if (a->nhist >= INT_MAX || !(v = grow(a->hist, &a->caphist, a->nhist, sizeof(*a->hist), &a->oom)))
		return NULL;
	a->hist = v;
	memset(&a->hist[a->nhist], 0, sizeof(*a->hist));
	a->hist[a->nhist].again_v = a->hist[a->nhist].noise = NAN;
	p->hist_ix = (int)++a->nhist;
	return &a->hist[a->nhist - 1];
}

/* The value's comparisons against its expectation, the fleet and its node's
 * other GPUs, each significant at the cut-off for the comparisons of its
 * node (a->m_node); sets the levels. An earlier run is judged the same way
 * against today's like values (raw_level), its level stays INFO. */
static void judge_inst(struct an *a, struct inst *p)
{
	const struct cls *k = &a->c[p->cls];
	double floor = hj_noise_floor(a, p);

	if (p->noisy)
		return;
	if (k->n >= (size_t)a->th->min_fleet && k->median > 0) {
		double sr = 1.4826 * k->mad / k->median;
		p->fleet_n = (int)k->n;
		p->fleet_cmp = 1;
		p->s_rel = sr > floor ? sr : floor;
		p->level_rel = effect_level(a, hj_z(a, p), hj_cut(a, p), hj_cut_fail(a, p), 100.0 * (1 - p->value / k->median));
	}
	if (p->metric >= 0 && !p->sup && p->peer_n >= a->th->min_fleet - 1 && p->peer_median > 0 &&
	    k->res_n >= 2) {
		double sr = 1.4826 * k->res_mad;
		p->s_node = sr > floor ? sr : floor;
		p->node_cmp = 1;
		p->level_node = effect_level(a, hj_z_node(a, p), hj_cut_node(a, p), hj_cut_node_fail(a, p),
					     100.0 * (1 - p->value / p->peer_median));
	}
	if (!isnan(p->expected) && p->expected > 0) {
		/* a value below its expectation by more than the spread of healthy
		 * like values (or its own noise) allows: its ratio with that
		 * spread allowed at the normal cut-off for the node's comparisons */
		double sa = k->n >= (size_t)a->th->min_fleet && k->median > 0 ? 1.4826 * k->mad / k->median : 0;
		double c = hr_cutoff(a->th->false_alarm, hj_m(a, p), (size_t)1 << 30, 0);
		int lm = HR_INFO;
		if (sa < floor)
			sa = floor;
		p->ratio_allow = p->value / p->expected * (1 + c * sa);
		p->level_abs = hr_absolute_level(a->th, p->ratio_allow);
		/* like values that all sit below the expectation: their median is
		 * judged too, and every one of them with it; the median of n values
		 * spread s is itself uncertain by about 1.2533 x s / sqrt(n) */
		if (k->n >= (size_t)a->th->min_fleet && k->median > 0)
			lm = hr_absolute_level(a->th, k->median / p->expected *
							   (1 + c * 1.2533 * sa / sqrt((double)k->n)));
		if (lm > p->level_abs) {
			p->level_abs = lm;
			p->abs_by_median = 1;
		}
	}
	if (p->pcie_class)
		p->level_abs = HR_FAIL;
	if (p->assumed_cap && p->level_abs > HR_WARN)
		p->level_abs = HR_WARN; /* an assumed reference alone: at most WARN */
	if (p->metric >= 0 && a->f->devices[p->subject].flag_confirm[p->metric] == HR_CONFIRM_DISAGREED &&
	    (p->level_node >= HR_WARN || p->level_rel >= HR_WARN || p->level_abs >= HR_WARN)) {
		/* roofline measured the value again and it was not low any more:
		 * the first measurement does not stand, by any rule */
		p->confirm = HR_CONFIRM_DISAGREED;
		p->level_node = p->level_rel = p->level_abs = HR_INFO;
		p->not_reproduced = 1;
	}
	if (p->metric >= 0)
		judge_again(a, p, k);
	else
		judge_again_group(a, p, k); /* an earlier run too: its raw level confirms a later FAIL */
	if (p->metric >= 0 && p->level_node >= HR_WARN) {
		/* a GPU below its node's other GPUs: named only when roofline's
		 * re-measurement agrees (results.flagged[].confirmed) */
		p->confirm = a->f->devices[p->subject].flag_confirm[p->metric];
		if (p->confirm == HR_CONFIRM_NONE) {
			p->not_confirmed = 1;
			if (p->level_node > HR_WARN)
				p->level_node = HR_WARN;
		}
	}
	p->raw_level = p->level_abs > p->level_rel ? p->level_abs : p->level_rel;
	if (p->level_node > p->raw_level)
		p->raw_level = p->level_node;
	p->level = p->sup ? HR_INFO : p->raw_level; /* an earlier run: history, not a verdict */
}

/* Per node the comparisons made for it (a->m_node), then every value judged. */
void hj_judge_all(struct an *a)
{
	size_t i;
	int j, nn;
	const int *nodes;
	for (i = 0; i < a->ndi + a->ngi; i++) {
		struct inst *p = i < a->ndi ? &a->di[i] : &a->gi[i - a->ndi];
		int c;
		if (p->sup || p->noisy)
			continue;
		c = inst_comparisons(a, p);
		inst_nodes(a, p, &nodes, &nn);
		for (j = 0; j < nn; j++)
			if (nodes[j] >= 0 && (size_t)nodes[j] < a->f->nnodes)
				a->m_node[nodes[j]] += c;
	}
	for (i = 0; i < a->ndi; i++)
		judge_inst(a, &a->di[i]);
	for (i = 0; i < a->ngi; i++)
		judge_inst(a, &a->gi[i]);
}

/* Each class's tail weight, of its values and of its GPUs' residuals
 * against their node's other GPUs, from the share beyond HR_DETECT_TAIL_AT robust sd on
 * the upper side (a fault is low, so faults in the fleet do not make its
 * noise look heavy-tailed) where there are enough of them. */
static void class_tails(struct an *a, const struct inst *v, size_t n)
{
	size_t c, i, *hi = calloc(3 * (a->nc ? a->nc : 1), sizeof(*hi)); /* above, above (residuals), seen */
	if (!hi) {
		a->oom = 1;
		return;
	}
	for (i = 0; i < n; i++) {
		const struct inst *p = &v[i];
		const struct cls *k = &a->c[p->cls];
		if (p->sup || p->noisy)
			continue;
		hi[2 * a->nc + p->cls] = 1;
		hi[2 * p->cls] += k->mad > 0 && p->value > k->median + HR_DETECT_TAIL_AT * 1.4826 * k->mad;
		if (p->metric >= 0 && p->peer_n >= a->th->min_fleet - 1 && p->peer_median > 0 && k->res_mad > 0)
			hi[2 * p->cls + 1] += p->value / p->peer_median - 1 > k->res_median + HR_DETECT_TAIL_AT * 1.4826 * k->res_mad;
	}
	for (c = 0; c < a->nc; c++) {
		if (!hi[2 * a->nc + c])
			continue; /* a class of the other kind (devices, groups) */
		a->c[c].tail_w = hr_noise_tail_weight_high(hi[2 * c], a->c[c].n);
		a->c[c].res_tail_w = hr_noise_tail_weight_high(hi[2 * c + 1], a->c[c].res_n);
	}
	free(hi);
}

void hj_compare(struct an *a, struct inst *v, size_t n)
{
	size_t i, *idx = malloc((n ? n : 1) * sizeof(*idx));
	if (!idx) {
		a->oom = 1;
		return;
	}
	class_stats(a, v, n, idx);
	if (!a->oom)
		class_tails(a, v, n);
	/* every latest value knows how many like values its class has */
	for (i = 0; i < n; i++)
		if (!v[i].sup && !v[i].noisy)
			v[i].fleet_n = (int)a->c[v[i].cls].n;
	free(idx);
}

const char *hj_metric_label(int metric, char *buf, size_t n)
{
	if (metric == 0)
		snprintf(buf, n, "memory roof");
	else
		snprintf(buf, n, "%s compute roof", ch_dtype_name(metric - 1));
	return buf;
}

const char *hj_metric_key(int metric, char *buf, size_t n)
{
	if (metric == 0)
		snprintf(buf, n, "memory_gbps");
	else
		snprintf(buf, n, "compute_gflops.%s", ch_dtype_name(metric - 1));
	return buf;
}

/* "812 TFLOP/s", "4.15 TB/s" style with the unit chosen by size. */
const char *hj_fmt_val(double v, int flops, char *buf, size_t n)
{
	char num[32];
	if (flops) {
		if (v >= 10000)
			snprintf(buf, n, "%s TFLOP/s", hr_fmt_num(v / 1000, num, sizeof(num)));
		else
			snprintf(buf, n, "%s GFLOP/s", hr_fmt_num(v, num, sizeof(num)));
	} else {
		snprintf(buf, n, "%s GB/s", hr_fmt_num(v, num, sizeof(num)));
	}
	return buf;
}

json_t *hj_jnum(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* A size or a count: an exact JSON integer when it is integral (doubles
 * hold integers exactly up to 2^53), else a real, else null. */
json_t *hj_jcount(double v)
{
	if (isfinite(v) && v == floor(v) && fabs(v) < 9007199254740992.0)
		return json_integer((json_int_t)v);
	return hj_jnum(v);
}

json_t *hj_jstr_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

/* Whether the run started at @u from result file @r is later than the one
 * started at @t from @s (seconds since the epoch; 0: no start time, never
 * later): a later start, or the same start and the later file name, so
 * that of two runs stamped alike exactly one is the latest. Two entries of
 * one file are never later than each other. */
int hj_later_run(time_t u, const char *r, time_t t, const char *s)
{
	if (!u || !t)
		return 0;
	return u > t || (u == t && r && s && strcmp(r, s) > 0);
}

int hj_same_device(const struct hr_device *x, const struct hr_device *y)
{
	return x->node == y->node && !strcmp(x->device, y->device) &&
	       (!x->pci_bus_id || !y->pci_bus_id || !strcmp(x->pci_bus_id, y->pci_bus_id));
}

static int group_has_node(const struct hr_group *g, int n)
{
	int k;
	for (k = 0; k < g->nnodes; k++)
		if (g->nodes[k] == n)
			return 1;
	return 0;
}

int hj_same_nodes(const struct hr_group *a, const struct hr_group *b)
{
	int k;
	if (a->nnodes != b->nnodes)
		return 0;
	for (k = 0; k < a->nnodes; k++)
		if (!group_has_node(b, a->nodes[k]))
			return 0;
	return 1;
}

/* Whether result file @source holds a group of @node that a later sweep in
 * the inputs superseded (its other figures are history too). */
int hj_source_superseded(const struct an *a, const char *source, int node)
{
	long e;
	if (node < 0 || (size_t)node >= a->f->nnodes)
		return 0;
	for (e = a->node_grp[node]; e >= 0; e = a->grp_next[e]) {
		const struct inst *p = hj_group_inst(a, (size_t)a->grp_of[e]);
		if (p && p->sup && !strcmp(a->f->groups[a->grp_of[e]].source, source))
			return 1;
	}
	return 0;
}

/* hr_inventory_rules() and hr_ckpt_reasons() report through this */
void hj_inventory_reason(void *ctx, int node, int level, const char *code, const char *subject,
			 const char *source, const char *action, const char *text)
{
	hj_add_reason(ctx, node, level, code, subject, source, action, "%s", text);
}
