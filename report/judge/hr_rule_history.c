/*
 * hr_rule_history.c - the history family: a device's and a group's latest
 * run against its own earlier runs among the inputs (fabric_regressed, and
 * the history level of the device roofs).
 */
#include "report/judge/hr_judge.h"
#include "report/judge/hr_rules.h"
#include "report/judge/hr_trend.h"
#include "base/ch_common.h"
#include "report/hr_util.h"
#include "base/ch_result.h"
#include "base/ch_stats.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct hist_pt {
	time_t t;
	double v;
};

static int cmp_hist(const void *x, const void *y)
{
	const struct hist_pt *a = x, *b = y;
	return a->t < b->t ? -1 : a->t > b->t;
}

/*
 * The history rule on instance @p: its @n earlier values @pts (any order;
 * sorted here, values of the same start averaged into one) then p->value,
 * through hr_history_trend() at the cut-off for the comparisons of its node.
 * Sets its hist_n (hj_hist()); on a regression also level_hist (WARN for one run, FAIL
 * when it persisted over cfg->persist runs, confirmed), hist_base,
 * hist_pct, hist_persist, raises p->level and sets *since (index into the
 * sorted @pts, n when the run is this one alone). @v: room for n + 1 values.
 * Returns 1 when it regressed, 0 when not or with fewer than min_nights.
 */
/* The history rule's configuration: `health_report history`'s defaults
 * with the parameters of the row fabric_regressed (hr_rules.c). */
static void history_cfg(struct hr_check_cfg *cfg)
{
	hr_check_cfg_init(cfg);
	cfg->threshold_pct = hr_rule_param("fabric_regressed", "threshold_pct");
	cfg->persist = (int)hr_rule_param("fabric_regressed", "persist");
	cfg->window = (int)hr_rule_param("fabric_regressed", "window");
	cfg->min_nights = (int)hr_rule_param("fabric_regressed", "min_nights");
}

static int judge_history(struct an *a, struct inst *p, struct hist_pt *pts, size_t n, double *v,
			 const struct hr_check_cfg *cfg0, size_t *since)
{
	struct hr_check_cfg cfg = *cfg0;
	struct hr_trend t;
	size_t j, k, m = 0;
	int r;
	struct inst_hist *h;
	if (p->noisy || p->sup)
		return 0;
	qsort(pts, n, sizeof(*pts), cmp_hist);
	/* one value per earlier run: values of the same start (a world and a
	 * pair group of one sweep over the same two nodes) are averaged */
	for (j = 0; j < n; j = k) {
		double sum = 0;
		for (k = j; k < n && pts[k].t == pts[j].t; k++)
			sum += pts[k].v;
		pts[m].t = pts[j].t;
		pts[m++].v = sum / (double)(k - j);
	}
	n = m;
	if (n < (size_t)cfg.min_nights)
		return 0;
	for (j = 0; j < n; j++)
		v[j] = pts[j].v;
	v[n] = p->value;
	if (!(h = hj_hist_new(a, p)))
		return 0;
	h->hist_n = (int)n;
	cfg.alpha = a->th->false_alarm;
	cfg.comparisons = hj_m(a, p);
	cfg.floor_frac = hj_noise_floor(a, p);
	if (!(r = hr_history_trend(v, n + 1, &cfg, &t)))
		return 0;
	*since = t.since;
	p->hist_persist = r;
	p->level_hist = r == HR_TREND_REGRESSED ? HR_FAIL : HR_WARN;
	if (!(h = hj_hist_new(a, p)))
		return 0;
	h->base = t.baseline;
	h->pct = t.pct;
	h->nbase = (int)(t.since < (size_t)cfg.window ? t.since : (size_t)cfg.window);
	if (r == HR_TREND_REGRESSED)
		p->confirmed_fail = 1;
	if (p->level < p->level_hist)
		p->level = p->level_hist;
	return 1;
}

/*
 * A device's own history, where the inputs hold it: the latest run of a
 * device (same node, device and bus id) against its earlier runs in the
 * inputs, metric by metric (same class), by the rule of `health_report
 * history` (hr_history_regressed(): at least 3 earlier runs, a drop of 10%
 * or more below the median of up to 14): WARN.
 */
void hj_device_history(struct an *a)
{
	const struct hr_fleet *f = a->f;
	struct hr_check_cfg cfg;
	const time_t *dt = a->dev_t;
	double *v = malloc((a->ndi + 1) * sizeof(*v));
	struct hist_pt *pts = malloc((a->ndi ? a->ndi : 1) * sizeof(*pts));
	size_t i, j;
	if (!v || !pts) {
		free(v);
		free(pts);
		a->oom = 1;
		return;
	}
	history_cfg(&cfg);
	for (i = 0; i < a->ndi; i++) {
		struct inst *p = &a->di[i];
		const struct hr_device *d = &f->devices[p->subject];
		size_t n = 0, since;
		int later = 0;
		long e;
		if (!dt[p->subject] || d->node < 0 || (size_t)d->node >= f->nnodes)
			continue;
		for (e = a->node_dev[d->node]; e >= 0 && !later; e = a->dev_next[e]) {
			if ((size_t)e == (size_t)p->subject || !dt[e] || !hj_same_device(d, &f->devices[e]))
				continue;
			for (j = a->dev_first[e]; j < a->dev_first[e] + a->dev_n[e] && !later; j++) {
				if (a->di[j].cls != p->cls || a->di[j].noisy)
					continue;
				if (hj_later_run(dt[e], f->devices[e].source, dt[p->subject], d->source))
					later = 1;
				else if (hj_later_run(dt[p->subject], d->source, dt[e], f->devices[e].source))
					pts[n++] = (struct hist_pt){ dt[e], a->di[j].value };
			}
		}
		if (later || !judge_history(a, p, pts, n, v, &cfg, &since))
			continue;
	}
	free(v);
	free(pts);
}

/*
 * The node's own history, where the inputs hold it: the latest sweep of a
 * group (same nodes, same class) against the earlier ones in the inputs,
 * by the rule of `health_report history` (hr_history_regressed(): at least
 * 3 earlier runs, a drop of 10% or more below the median of up to 14).
 */
static void history_reasons(struct an *a)
{
	const struct hr_fleet *f = a->f;
	struct hr_check_cfg cfg;
	struct hist_pt *pts = malloc((a->ngi ? a->ngi : 1) * sizeof(*pts));
	double *v = malloc((a->ngi + 1) * sizeof(*v));
	size_t i, j;
	long e;
	if (!pts || !v) {
		free(pts);
		free(v);
		a->oom = 1;
		return;
	}
	history_cfg(&cfg);
	for (i = 0; i < a->ngi; i++) {
		struct inst *p = &a->gi[i];
		const struct hr_group *g = &f->groups[p->subject];
		time_t t = a->grp_t[p->subject];
		size_t n = 0, since;
		int later = 0, k;
		double base, pct;
		char val[48], ref[48], when[32];
		if (!t || g->nnodes < 1 || g->nodes[0] < 0 || (size_t)g->nodes[0] >= f->nnodes)
			continue;
		/* the groups with the same nodes all hold g's first node: its groups, in gi[] order */
		for (e = a->node_grp[g->nodes[0]]; e >= 0 && !later; e = a->grp_next[e]) {
			const struct inst *q;
			const struct hr_group *h;
			time_t u;
			if (a->grp_inst[a->grp_of[e]] < 0)
				continue;
			j = (size_t)a->grp_inst[a->grp_of[e]];
			q = &a->gi[j];
			h = &f->groups[q->subject];
			if (j == i || q->cls != p->cls || q->noisy || !(u = a->grp_t[q->subject]) || !hj_same_nodes(g, h))
				continue;
			if (hj_later_run(u, h->source, t, g->source))
				later = 1;
			else if (hj_later_run(t, g->source, u, h->source))
				pts[n++] = (struct hist_pt){ u, q->value };
		}
		if (later || !judge_history(a, p, pts, n, v, &cfg, &since))
			continue;
		base = hj_hist(a, p)->base;
		pct = hj_hist(a, p)->pct;
		n = (size_t)hj_hist(a, p)->hist_n; /* one per earlier run */
		strftime(when, sizeof(when), "%Y-%m-%d", gmtime(&pts[since < n ? since : n - 1].t));
		hj_fmt_val(p->value, 0, val, sizeof(val));
		hj_fmt_val(base, 0, ref, sizeof(ref));
		for (k = 0; k < g->nnodes; k++) {
			if (p->hist_persist == HR_TREND_REGRESSED)
				hj_add_reason(a, g->nodes[k], HR_FAIL, "fabric_regressed", g->name, g->source,
					   p->fabric == 1 ? "the node's own fabric got slower: check NVLink / PCIe (nvidia-smi nvlink --status, nvidia-smi topo -m) and what changed since (driver, NCCL, firmware)" :
					   INTER_ACTION "; and what changed since (driver, NCCL, firmware, switch configuration)",
					   "%s busbw %s (%s %s, %d ranks, %s) is %.0f%% below its own history in the inputs on %d runs in a row: median %s of %d earlier sweep%s (regressed since %s; beyond the runs' own spread)",
					   p->fabric == 1 ? "intra-node" : "inter-node", val, g->collective, g->algo,
					   g->nranks, g->name, pct, (int)(n + 1 - since), ref, hj_hist(a, p)->nbase,
					   hj_hist(a, p)->nbase == 1 ? "" : "s", when);
			else
				hj_add_reason(a, g->nodes[k], HR_WARN, "fabric_regressed", g->name, g->source,
					   "re-run the sweep: a regression on one run alone is not yet a trend",
					   "%s busbw %s (%s %s, %d ranks, %s) regressed once; re-run: %.0f%% below its own history in the inputs, median %s of %d earlier sweep%s (beyond the runs' own spread; REGRESSED when it persists on the next run)",
					   p->fabric == 1 ? "intra-node" : "inter-node", val, g->collective, g->algo,
					   g->nranks, g->name, pct, ref, hj_hist(a, p)->nbase, hj_hist(a, p)->nbase == 1 ? "" : "s");
			if (p->hist_persist == HR_TREND_REGRESSED && a->nr && !a->oom)
				a->r[a->nr - 1].drain = 1;
		}
	}
	free(pts);
	free(v);
}

const char *hj_hist_how(const struct inst *p)
{
	return p->hist_persist == HR_TREND_REGRESSED ? "on consecutive runs " : "regressed once; re-run: ";
}

const struct hr_family hr_family_history = {
	"history",
	"each group's earlier sweeps among the inputs",
	history_reasons,
	NULL,
};
