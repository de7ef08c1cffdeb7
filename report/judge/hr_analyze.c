/*
 * hr_analyze.c - verdicts: absolute expectations, fleet-relative robust
 * z-scores, drift, and the profile document.
 */
#include "report/judge/hr_analyze.h"
#include "report/judge/hr_rules.h"
#include "report/judge/hr_checkpoint.h"
#include "report/history/hr_history.h"
#include "report/hr_util.h"
#include "report/judge/hr_inventory.h"
#include "report/judge/hr_quality.h"
#include "report/judge/hr_powercap.h"
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

/* ------------------------------------------------------------ state */

struct reason {
	int node;          /* -1: fleet level */
	int level;
	int drain;         /* a hard fault or a confirmed FAIL: the node is a drain candidate */
	char code[32];
	char subject[96];
	char *text, *action, *source;
};

/* One compared value: a device metric or a group's large-message busbw. */
struct inst {
	int cls;
	int node;          /* -1 when the subject has no single node */
	int subject;       /* device or group index */
	int metric;        /* devices: 0 memory, 1 + dtype compute; groups: -1 */
	double value, expected, datasheet;
	double z, fleet_median, pct_fleet, node_median, pct_node;
	int fleet_n, node_n, hist_n;   /* like values: fleet, node, own earlier runs */
	double hist_base, hist_pct;    /* devices, level_hist WARN: the median of its
					  earlier runs and the drop below it, % */
	const char *superseded_by; /* the result file of a later run of the same
				      device or group in the inputs (its value is
				      history, not judged), NULL when latest */
	int level_abs, level_rel, level_node, level_hist, level;
	int raw_level;     /* the level by the rules, also for an earlier run (whose
			      level is INFO: history), so that a later run can
			      say whether the earlier one found the same */
	int like;          /* like for like (no drifted node involved) */
	/* measurement quality (hr_quality.h) */
	double noise;      /* per-call CV of the measurement behind the value, NAN unknown */
	int noisy;         /* not judged: noisy measurement */
	int quality_known; /* the file recorded a CV or its conditions */
	const char *noisy_why; /* what made it noisy (kept), "" clean */
	/* significance (hr_quality.h) */
	int m;             /* comparisons made for its node (Bonferroni) */
	double cut;        /* cut-off on |robust z| against the fleet */
	double s_rel;      /* the fleet spread used: s / median */
	double peer_median; /* devices: the median of the other like GPUs of its node */
	int peer_n;        /* ... and how many */
	double z_node, cut_node, s_node; /* its robust z against them, the cut-off, the spread (relative) */
	double ratio_allow; /* absolute rule: the ratio to the expectation with the spread allowed */
	int confirm;       /* per-GPU finding: enum hr_confirm from roofline's re-measurement */
	int not_confirmed; /* the finding rests on a comparison nothing re-measured: at most WARN */
	int not_reproduced; /* roofline measured it again and it did not reproduce */
	int assumed_cap;   /* inter-node: rests on an assumed reference only: at most WARN */
	int pcie_class;    /* intra-node busbw PCIe-class on an NVLink node */
	int abs_by_median; /* the absolute level is that of the median of its like values */
	int confirmed_fail; /* a FAIL confirmed (re-measurement, the earlier run, or persisting history) */
	int hist_persist;  /* history: 1 one night, 2 persisted (hr_history_regressed()) */
	int hist_nbase;    /* the earlier runs its baseline is the median of */
	int fabric;        /* groups: 1 intra-node, 2 inter-node; devices 0 */
	/* kept once per distinct text (struct an's texts), never "" -> NULL */
	const char *basis; /* what the expectation is and its source, "" none (at most 599 bytes) */
	const char *tag;   /* the same, short (terminal summary; at most 79 bytes) */
	const char *why;   /* why there is no expectation, "" when there is one (at most 299 bytes) */
};

#define INST_BASIS_MAX 600
#define INST_TAG_MAX 80
#define INST_WHY_MAX 300

struct cls {
	char key[256];
	char label[160];
	const char *unit;
	size_t n;          /* clean latest values */
	double median, mad;
	size_t res_n;      /* devices: leave-one-out residuals against the node's other like GPUs */
	double res_median, res_mad;
};

struct an {
	const struct hr_fleet *f;
	const struct hr_expect *e;
	const struct hr_thresholds *th;
	struct reason *r;
	size_t nr, capr;
	struct inst *di;  size_t ndi, capdi;  /* device metrics */
	struct inst *gi;  size_t ngi, capgi;  /* group metrics */
	struct cls *c;    size_t nc, capc;
	unsigned *drift;  /* per node: bit k set when cfg key k drifted */
	size_t *dev_first, *dev_n; /* per device: its instances in di[] */
	long *grp_inst;   /* per group: its instance in gi[], -1 none */
	int *slow_pairs;  /* per node: number of slow pairs it is in */
	long *node_dev, *dev_next; /* per node: its first device, per device: the next of its node; -1 none */
	long *node_grp, *grp_next; /* per node: its first (group, member) entry; per entry: the next; -1 none */
	long *grp_of;     /* per entry: the group */
	time_t *dev_t, *grp_t; /* per device, per group: the start of its result file's run (0 unknown) */
	long *dev_run, *grp_run; /* per device, per group: its run in f->runs, -1 none */
	int *curve;       /* per group: its curve shape 0 not looked at, 1 judged, 2 noisy */
	int *loader;      /* per node: its loader 0 none, 1 judged, 2 not judged (host busy) */
	int *loader_lv;   /* per node: the level its loader was judged at */
	char (*loader_why)[260];
	char (*curve_why)[240]; /* per group: why noisy */
	int *m_node;      /* per node: the comparisons made for it */
	json_t *texts;    /* the instances' basis, tag and why texts, each once (the keys) */
	json_t *drift_json; /* the profile's drift (HR_PASS_DRIFT) */
	const char *bad_code; /* a reason code without its row in the rule table */
	int oom;
};

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

static struct reason *add_reason(struct an *a, int node, int level, const char *code,
				 const char *subject, const char *source, const char *action,
				 const char *fmt, ...) __attribute__((format(printf, 8, 9)));

/* A reason of @node (-1: the fleet). Returns it (valid until the next
 * reason is added), NULL when out of memory. */
static struct reason *add_reason(struct an *a, int node, int level, const char *code,
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

static int class_of(struct an *a, const char *key, const char *label, const char *unit)
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
static const char *keep(struct an *a, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static const char *keep(struct an *a, size_t size, const char *fmt, ...)
{
	char buf[INST_BASIS_MAX];
	va_list ap;
	void *it;
	if (size > sizeof(buf))
		size = sizeof(buf);
	va_start(ap, fmt);
	vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	if (!buf[0])
		return "";
	if (!a->texts && !(a->texts = json_object()))
		goto oom;
	it = json_object_iter_at(a->texts, buf);
	if (!it) {
		if (json_object_set_new_nocheck(a->texts, buf, json_null()))
			goto oom;
		it = json_object_iter_at(a->texts, buf);
	}
	if (it)
		return json_object_iter_key(it);
oom:
	a->oom = 1;
	return "";
}

static struct inst *new_inst(struct an *a, struct inst **arr, size_t *n, size_t *cap)
{
	void *v = grow(*arr, cap, *n, sizeof(**arr), &a->oom);
	struct inst *x;
	if (!v)
		return NULL;
	*arr = v;
	x = &(*arr)[(*n)++];
	memset(x, 0, sizeof(*x));
	x->expected = x->datasheet = x->z = x->fleet_median = x->pct_fleet = NAN;
	x->node_median = x->pct_node = NAN;
	x->noise = x->s_rel = x->cut = x->peer_median = x->z_node = x->cut_node = x->s_node = NAN;
	x->ratio_allow = NAN;
	x->like = 1;
	x->basis = x->why = x->tag = x->noisy_why = "";
	return x;
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
static double noise_floor(const struct an *a, const struct inst *p)
{
	double f = a->th->mad_floor_frac;
	return p->noise > f ? p->noise : f;
}

/* A level from an effect (% below) that is significant (hr_relative_level()). */
static int effect_level(const struct an *a, double z, double cut, double pct_below)
{
	return hr_relative_level(a->th, z, cut, pct_below);
}

/* Per class: the median and MAD of the clean latest values; per device
 * class also the leave-one-out residuals against each node's other like
 * GPUs (value / their median - 1), pooled over the fleet. */
static void class_stats(struct an *a, struct inst *v, size_t n, size_t *idx, double *x)
{
	size_t c, i, s, e, k;
	for (c = 0; c < a->nc && !a->oom; c++) {
		size_t m = 0, nr = 0;
		double med, mad;
		for (i = 0; i < n; i++)
			if (v[i].cls == (int)c && !v[i].superseded_by && !v[i].noisy)
				idx[m++] = i;
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
				p->pct_node = p->peer_median > 0 ? 100.0 * p->value / p->peer_median : NAN;
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
}

/* The value's comparisons against its expectation, the fleet and its node's
 * other GPUs, each significant at the cut-off for the comparisons of its
 * node (a->m_node); sets the levels. An earlier run is judged the same way
 * against today's like values (raw_level), its level stays INFO. */
static void judge_inst(struct an *a, struct inst *p)
{
	const struct cls *k = &a->c[p->cls];
	const int *nodes;
	int nn, j, m = 1;
	double floor = noise_floor(a, p);

	inst_nodes(a, p, &nodes, &nn);
	for (j = 0; j < nn; j++)
		if (nodes[j] >= 0 && (size_t)nodes[j] < a->f->nnodes && a->m_node[nodes[j]] > m)
			m = a->m_node[nodes[j]];
	p->m = m;
	if (p->noisy)
		return;
	if (k->n >= (size_t)a->th->min_fleet && k->median > 0) {
		double sr = 1.4826 * k->mad / k->median;
		p->fleet_n = (int)k->n;
		p->fleet_median = k->median;
		p->pct_fleet = 100.0 * p->value / k->median;
		p->s_rel = sr > floor ? sr : floor;
		p->z = (p->value - k->median) / (p->s_rel * k->median);
		p->cut = hr_cutoff(a->th->false_alarm, m, k->n, a->th->z_outlier);
		p->level_rel = effect_level(a, p->z, p->cut, 100.0 * (1 - p->value / k->median));
	}
	if (p->metric >= 0 && !p->superseded_by && p->peer_n >= a->th->min_fleet - 1 && p->peer_median > 0 &&
	    k->res_n >= 2) {
		double sr = 1.4826 * k->res_mad;
		p->s_node = sr > floor ? sr : floor;
		p->z_node = (p->value / p->peer_median - 1 - k->res_median) / p->s_node;
		p->cut_node = hr_cutoff(a->th->false_alarm, m, k->res_n, a->th->z_outlier);
		p->level_node = effect_level(a, p->z_node, p->cut_node, 100.0 * (1 - p->value / p->peer_median));
	}
	if (!isnan(p->expected) && p->expected > 0) {
		/* a value below its expectation by more than the spread of healthy
		 * like values (or its own noise) allows: its ratio with that
		 * spread allowed at the normal cut-off for the node's comparisons */
		double sa = k->n >= (size_t)a->th->min_fleet && k->median > 0 ? 1.4826 * k->mad / k->median : 0;
		double c = hr_cutoff(a->th->false_alarm, m, (size_t)1 << 30, 0);
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
	p->level = p->superseded_by ? HR_INFO : p->raw_level; /* an earlier run: history, not a verdict */
}

/* Per node the comparisons made for it (a->m_node), then every value judged. */
static void judge_all(struct an *a)
{
	size_t i;
	int j, nn;
	const int *nodes;
	for (i = 0; i < a->ndi + a->ngi; i++) {
		struct inst *p = i < a->ndi ? &a->di[i] : &a->gi[i - a->ndi];
		int c;
		if (p->superseded_by || p->noisy)
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

static void compare(struct an *a, struct inst *v, size_t n)
{
	size_t i, *idx = malloc((n ? n : 1) * sizeof(*idx));
	double *x = malloc((n ? 2 * n : 2) * sizeof(*x));
	if (!x || !idx) {
		free(x);
		free(idx);
		a->oom = 1;
		return;
	}
	class_stats(a, v, n, idx, x);
	/* every latest value knows how many like values its class has */
	for (i = 0; i < n; i++)
		if (!v[i].superseded_by && !v[i].noisy)
			v[i].fleet_n = (int)a->c[v[i].cls].n;
	free(x);
	free(idx);
}

/* ------------------------------------------------------------ formatting */

static const char *metric_label(int metric, char *buf, size_t n)
{
	if (metric == 0)
		snprintf(buf, n, "memory roof");
	else
		snprintf(buf, n, "%s compute roof", ch_dtype_name(metric - 1));
	return buf;
}

static const char *metric_key(int metric, char *buf, size_t n)
{
	if (metric == 0)
		snprintf(buf, n, "memory_gbps");
	else
		snprintf(buf, n, "compute_gflops.%s", ch_dtype_name(metric - 1));
	return buf;
}

/* "812 TFLOP/s", "4.15 TB/s" style with the unit chosen by size. */
static const char *fmt_val(double v, int flops, char *buf, size_t n)
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

static json_t *jnum(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* A size or a count: an exact JSON integer when it is integral (doubles
 * hold integers exactly up to 2^53), else a real, else null. */
static json_t *jcount(double v)
{
	if (isfinite(v) && v == floor(v) && fabs(v) < 9007199254740992.0)
		return json_integer((json_int_t)v);
	return jnum(v);
}

static json_t *jstr_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

/* ------------------------------------------------------------ drift */

static json_t *analyze_drift(struct an *a)
{
	const struct hr_fleet *f = a->f;
	json_t *arr = json_array();
	int k;
	size_t i;

	for (k = 0; k < HR_CFG_NKEYS; k++) {
		size_t known = 0, best_n = 0, distinct;
		const char *best = NULL;
		json_t *o, *nodes, *count = json_object(), *c;
		/* nodes per value (a jansson object as the hash: linear in the
		 * fleet); the majority is the most frequent value, the first in
		 * node order on a tie */
		for (i = 0; count && i < f->nnodes; i++) {
			const char *v = f->nodes[i].cfg[k];
			if (!v)
				continue;
			known++;
			c = json_object_get(count, v);
			json_object_set_new(count, v, json_integer(c ? json_integer_value(c) + 1 : 1));
		}
		distinct = json_object_size(count);
		for (i = 0; count && i < f->nnodes; i++) {
			const char *v = f->nodes[i].cfg[k];
			size_t cnt = v ? (size_t)json_integer_value(json_object_get(count, v)) : 0;
			if (cnt > best_n) {
				best_n = cnt;
				best = v;
			}
		}
		json_decref(count);
		if (distinct < 2)
			continue;
		if (!(best_n * 2 > known && known >= (size_t)a->th->min_fleet))
			best = NULL; /* no majority */
		o = json_object();
		nodes = json_array();
		json_object_set_new(o, "key", json_string(hr_cfg_key_name(k)));
		json_object_set_new(o, "majority", jstr_or_null(best));
		json_object_set_new(o, "majority_nodes", json_integer((json_int_t)(best ? best_n : 0)));
		json_object_set_new(o, "known_nodes", json_integer((json_int_t)known));
		for (i = 0; i < f->nnodes; i++) {
			const char *v = f->nodes[i].cfg[k];
			json_t *n;
			if (!v || (best && !strcmp(v, best)))
				continue;
			n = json_object();
			json_object_set_new(n, "node", json_string(f->nodes[i].name));
			json_object_set_new(n, "value", json_string(v));
			json_array_append_new(nodes, n);
			a->drift[i] |= 1u << k;
			if (best) {
				char subj[64];
				snprintf(subj, sizeof(subj), "%s", hr_cfg_key_name(k));
				add_reason(a, (int)i, HR_WARN, "config_drift", subj, NULL,
					   k == HR_CFG_GPU_MODEL ?
					   "check that the node is in the right partition; its GPUs are compared only with the same model" :
					   k == HR_CFG_CLOCKS ?
					   "reset or align the GPU clock settings (nvidia-smi -rac, nvidia-smi -q -d CLOCK); until then its results are not like for like" :
					   hr_inventory_drift_action(k) ? hr_inventory_drift_action(k) :
					   "align the software stack (driver, CUDA, NCCL, MPI) with the fleet; until then its results are not like for like",
					   "configuration drift: %s '%s' differs from the fleet's '%s' (%zu of %zu nodes)",
					   hr_cfg_key_name(k), v, best, best_n, known);
			}
		}
		json_object_set_new(o, "nodes", nodes);
		json_array_append_new(arr, o);
	}
	return arr;
}

/* ------------------------------------------------------------ devices */

/* Whether the compute roof of dtype @dt was set by an FMA ladder rung (CUDA
 * cores) rather than a GEMM (tensor cores where the GPU has them): roofline
 * sets the roof to the fastest valid ladder or gemm point of the dtype, the
 * first of equal ones (docs/results-schema.md, roofs.compute_kernel). */
static int roof_is_ladder(const struct hr_device *d, int dt)
{
	double best = -1;
	int ladder = 0;
	size_t i;
	for (i = 0; i < d->npoints; i++) {
		const struct hr_point *p = &d->points[i];
		int l = !strcmp(p->family, "ladder");
		if ((l || !strcmp(p->family, "gemm")) && !strcmp(p->dtype, ch_dtype_name(dt)) && p->gflops > best) {
			best = p->gflops;
			ladder = l;
		}
	}
	return ladder;
}

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
 * Sets p->hist_n; on a regression also level_hist (WARN for one run, FAIL
 * when it persisted over cfg->persist runs, confirmed), hist_base,
 * hist_pct, hist_persist, raises p->level and sets *since (index into the
 * sorted @pts, n when the run is this one alone). @v: room for n + 1 values.
 * Returns 1 when it regressed, 0 when not or with fewer than min_nights.
 */
static int judge_history(const struct an *a, struct inst *p, struct hist_pt *pts, size_t n, double *v,
			 const struct hr_check_cfg *cfg0, size_t *since)
{
	struct hr_check_cfg cfg = *cfg0;
	struct hr_trend t;
	size_t j, k, m = 0;
	int r;
	if (p->noisy || p->superseded_by)
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
	p->hist_n = (int)n;
	cfg.alpha = a->th->false_alarm;
	cfg.comparisons = p->m > 0 ? p->m : 1;
	cfg.floor_frac = noise_floor(a, p);
	if (!(r = hr_history_trend(v, n + 1, &cfg, &t)))
		return 0;
	*since = t.since;
	p->hist_persist = r;
	p->level_hist = r == HR_TREND_REGRESSED ? HR_FAIL : HR_WARN;
	p->hist_base = t.baseline;
	p->hist_pct = t.pct;
	p->hist_nbase = (int)(t.since < (size_t)cfg.window ? t.since : (size_t)cfg.window);
	if (r == HR_TREND_REGRESSED)
		p->confirmed_fail = 1;
	if (p->level < p->level_hist)
		p->level = p->level_hist;
	return 1;
}

static int same_device(const struct hr_device *x, const struct hr_device *y);
static int same_nodes(const struct hr_group *a, const struct hr_group *b);

/* Whether the run started at @u from result file @r is later than the one
 * started at @t from @s (seconds since the epoch; 0: no start time, never
 * later): a later start, or the same start and the later file name, so
 * that of two runs stamped alike exactly one is the latest. Two entries of
 * one file are never later than each other. */
static int later_run(time_t u, const char *r, time_t t, const char *s)
{
	if (!u || !t)
		return 0;
	return u > t || (u == t && r && s && strcmp(r, s) > 0);
}

/* A device with a later run in the inputs (same node, device and bus id,
 * a later start): its instances are history (superseded_by that file). */
static void mark_superseded_devices(struct an *a)
{
	const struct hr_fleet *f = a->f;
	size_t i;
	for (i = 0; i < a->ndi; i++) {
		struct inst *p = &a->di[i];
		const struct hr_device *d = &f->devices[p->subject];
		time_t best = a->dev_t[p->subject];
		const char *best_src = d->source;
		long e;
		if (d->node < 0 || (size_t)d->node >= f->nnodes)
			continue;
		for (e = a->node_dev[d->node]; best && e >= 0; e = a->dev_next[e])
			if ((size_t)e != (size_t)p->subject && later_run(a->dev_t[e], f->devices[e].source, best, best_src) &&
			    same_device(d, &f->devices[e])) {
				best = a->dev_t[e];
				best_src = f->devices[e].source;
				p->superseded_by = f->devices[e].source;
			}
	}
}

/* The measurement quality of value @p: the conditions of its run (@run in
 * f->runs, -1 none) and the CV @cv of its measurement at @at. */
static void set_quality(struct an *a, struct inst *p, long run, double cv, const char *at)
{
	struct hr_quality q;
	hr_quality_init(&q);
	if (run >= 0)
		hr_quality_host(&q, &a->f->runs[run].cond);
	hr_quality_cv(&q, cv, at);
	p->noise = cv;
	p->noisy = q.noisy;
	p->quality_known = q.host_known || q.cv_known;
	p->noisy_why = q.noisy ? keep(a, INST_WHY_MAX, "%s", q.why) : "";
}

static void device_instances(struct an *a)
{
	const struct hr_fleet *f = a->f;
	size_t i;
	int m;
	for (i = 0; i < f->ndevices; i++) {
		const struct hr_device *d = &f->devices[i];
		const struct hr_sku_expect *x;
		char key[256], label[160];
		if (!strcmp(d->status, "unavailable"))
			continue;
		x = hr_expect_for(a->e, d->sku, d->name);
		for (m = 0; m <= CH_NDTYPES; m++) {
			double v = m == 0 ? d->memory_gbps : d->compute_gflops[m - 1];
			int ladder = m > 0 && roof_is_ladder(d, m - 1);
			int gpu = d->kind && !strcmp(d->kind, "gpu");
			const char *ceiling = !ladder ? "" : gpu ? " (FMA ladder, CUDA cores)" : " (FMA ladder)";
			struct inst *p;
			char mk[48];
			if (isnan(v))
				continue;
			/* a ladder roof is compared with ladder roofs only */
			snprintf(key, sizeof(key), "device|%s|%s|%s%s", d->kind,
				 d->sku ? d->sku : d->name ? d->name : "?", metric_key(m, mk, sizeof(mk)),
				 ladder ? "|ladder" : "");
			snprintf(label, sizeof(label), "%s%s %s (%s)", metric_label(m, mk, sizeof(mk)), ceiling,
				 d->kind, d->sku ? d->sku : d->name ? d->name : "?");
			p = new_inst(a, &a->di, &a->ndi, &a->capdi);
			if (!p)
				return;
			p->cls = class_of(a, key, label, m == 0 ? "GB/s" : "GFLOP/s");
			p->node = d->node;
			p->subject = (int)i;
			p->metric = m;
			p->value = v;
			p->like = !a->drift[d->node];
			if (d->ds) {
				double ds = m == 0 ? d->ds->memory_gbps : ladder ?
					    ch_datasheet_cuda_core_gflops(d->ds, (enum ch_dtype)(m - 1)) : d->ds->gflops[m - 1];
				p->datasheet = ds > 0 ? ds : NAN;
			}
			if (x)
				p->expected = m == 0 ? x->memory_gbps : ladder ? x->cuda_core_gflops[m - 1]
					      : x->compute_gflops[m - 1];
			{
				char at[64];
				snprintf(at, sizeof(at), "the %s", metric_label(m, mk, sizeof(mk)));
				set_quality(a, p, a->dev_run[i], m == 0 ? d->memory_cv : d->compute_cv[m - 1], at);
			}
			if (!isnan(p->expected) && p->expected > 0) {
				p->basis = keep(a, INST_BASIS_MAX, "per-SKU expectation for %s%s: %s", x->sku,
					 ladder ? " of the CUDA cores (datasheet FP64/FP32 row, not Tensor Core)" : "",
					 x->source);
				p->tag = keep(a, INST_TAG_MAX, "%s %s%s", x->sku, x->match[0] ? "given" : "datasheet x fraction",
					 ladder ? ", CUDA cores" : "");
			} else
				p->why = keep(a, INST_WHY_MAX, "no %s figure for %s%s",
					 x ? "expected" : "datasheet",
					 d->sku ? d->sku : d->name ? d->name : d->device,
					 !ladder ? "" : gpu ? " (the roof was set by the FMA ladder on the CUDA cores)"
						 : " (the roof was set by the FMA ladder)");
		}
	}
	mark_superseded_devices(a);
}


static int same_device(const struct hr_device *x, const struct hr_device *y)
{
	return x->node == y->node && !strcmp(x->device, y->device) &&
	       (!x->pci_bus_id || !y->pci_bus_id || !strcmp(x->pci_bus_id, y->pci_bus_id));
}

/*
 * A device's own history, where the inputs hold it: the latest run of a
 * device (same node, device and bus id) against its earlier runs in the
 * inputs, metric by metric (same class), by the rule of `health_report
 * history` (hr_history_regressed(): at least 3 earlier runs, a drop of 10%
 * or more below the median of up to 14): WARN.
 */
static void device_history(struct an *a)
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
	hr_check_cfg_init(&cfg);
	for (i = 0; i < a->ndi; i++) {
		struct inst *p = &a->di[i];
		const struct hr_device *d = &f->devices[p->subject];
		size_t n = 0, since;
		int later = 0;
		long e;
		if (!dt[p->subject] || d->node < 0 || (size_t)d->node >= f->nnodes)
			continue;
		for (e = a->node_dev[d->node]; e >= 0 && !later; e = a->dev_next[e]) {
			if ((size_t)e == (size_t)p->subject || !dt[e] || !same_device(d, &f->devices[e]))
				continue;
			for (j = a->dev_first[e]; j < a->dev_first[e] + a->dev_n[e] && !later; j++) {
				if (a->di[j].cls != p->cls || a->di[j].noisy)
					continue;
				if (later_run(dt[e], f->devices[e].source, dt[p->subject], d->source))
					later = 1;
				else if (later_run(dt[p->subject], d->source, dt[e], f->devices[e].source))
					pts[n++] = (struct hist_pt){ dt[e], a->di[j].value };
			}
		}
		if (later || !judge_history(a, p, pts, n, v, &cfg, &since))
			continue;
	}
	free(v);
	free(pts);
}

/* A FAIL is confirmed, and its node a drain candidate, when roofline's
 * re-measurement agreed with a per-GPU finding (the value held), when the history rule saw
 * it persist, or when the earlier run of the same device or group in the
 * inputs (a re-run, or last night's) FAILed by the same rules. */
static void confirm_fails(struct an *a)
{
	size_t i, j;
	for (i = 0; i < a->ndi + a->ngi; i++) {
		int dev = i < a->ndi;
		struct inst *p = dev ? &a->di[i] : &a->gi[i - a->ndi];
		const struct inst *prev = NULL;
		time_t tp = 0;
		if (p->superseded_by || p->level != HR_FAIL || p->confirmed_fail)
			continue;
		if (dev && p->confirm == HR_CONFIRM_AGREED) {
			/* roofline measured the value again and it held: whichever
			 * rule FAILs it rests on a confirmed value */
			p->confirmed_fail = 1;
			continue;
		}
		for (j = 0; j < (dev ? a->ndi : a->ngi); j++) {
			const struct inst *q = dev ? &a->di[j] : &a->gi[j];
			time_t tq = dev ? a->dev_t[q->subject] : a->grp_t[q->subject];
			if (q == p || !q->superseded_by || q->cls != p->cls || q->noisy)
				continue;
			if (dev ? !same_device(&a->f->devices[q->subject], &a->f->devices[p->subject])
				: !same_nodes(&a->f->groups[q->subject], &a->f->groups[p->subject]))
				continue;
			if (!prev || tq > tp) {
				prev = q;
				tp = tq;
			}
		}
		if (prev && prev->raw_level == HR_FAIL)
			p->confirmed_fail = 1;
	}
}

/* The margins of a flagged value: every rule that flagged it, with the
 * value's distance and the rule's threshold ("12% below the fleet median
 * 2950 GB/s of 80 like devices (robust z -8.1; flagged beyond -4.6 and from
 * 5% below, FAIL from 10%)"). @model names the expectation's GPU model,
 * @like the like values. */
static void inst_margins(const struct an *a, const struct inst *p, const char *model, const char *like,
			 char *extra, size_t n)
{
	char ref[48];
	int flops = p->metric > 0;
	size_t l;
	extra[0] = '\0';
	if (p->level_rel >= HR_WARN)
		snprintf(extra, n, "%.0f%% below the fleet median %s of %d %s (robust z %.1f: flagged at or beyond -%.1f, the cut-off for its node's %d comparisons, and from %.0f%% below; FAIL from %.0f%%)",
			 100 - p->pct_fleet, fmt_val(p->fleet_median, flops, ref, sizeof(ref)), p->fleet_n, like, p->z,
			 p->cut, p->m, a->th->warn_pct_below, a->th->fail_pct_below);
	l = strlen(extra);
	if (p->level_abs >= HR_WARN && !isnan(p->expected) && p->expected > 0 && l < n)
		snprintf(extra + l, n - l, "%s%.0f%% of the expected %s%s%s (%s; WARN below %.0f%%, FAIL below %.0f%%, %s)",
			 l ? "; " : "", 100 * p->value / p->expected, fmt_val(p->expected, flops, ref, sizeof(ref)),
			 p->metric >= 0 ? " for " : "", p->metric >= 0 ? model : "",
			 p->tag[0] ? p->tag : "given", 100 * a->th->warn_ratio, 100 * a->th->fail_ratio,
			 p->pcie_class ? "PCIe-class on an NVLink node" :
			 p->abs_by_median ? "the median of its like values is below it too" :
			 "with the spread of healthy like values allowed");
	l = strlen(extra);
	if ((p->level_node >= HR_WARN || p->not_confirmed) && !isnan(p->pct_node) && l < n)
		snprintf(extra + l, n - l, "%s%.0f%% below the median %s of its node's %d other like GPUs (robust z %.1f: flagged at or beyond -%.1f and from %.0f%% below; FAIL from %.0f%%)%s",
			 l ? "; " : "", 100 - p->pct_node, fmt_val(p->peer_median, flops, ref, sizeof(ref)), p->peer_n,
			 p->z_node, p->cut_node, a->th->warn_pct_below, a->th->fail_pct_below,
			 p->confirm == HR_CONFIRM_AGREED ? ", confirmed by roofline's re-measurement" :
			 p->not_confirmed ? ", not confirmed (no re-measurement in the input): at most WARN" : "");
	l = strlen(extra);
	if (p->level_hist >= HR_WARN && l < n)
		snprintf(extra + l, n - l, "%s%s%.0f%% below its own history in the inputs (median %s of %d earlier runs; beyond their own spread)",
			 l ? "; " : "", p->hist_persist == HR_TREND_REGRESSED ? "on consecutive runs " : "regressed once; re-run: ",
			 p->hist_pct, fmt_val(p->hist_base, flops, ref, sizeof(ref)), p->hist_nbase);
	l = strlen(extra);
	if (p->level == HR_FAIL && !p->confirmed_fail && l < n)
		snprintf(extra + l, n - l, "; FAIL not confirmed (no re-measurement, earlier run or persisting history agrees): re-run before draining");
}

static void device_reasons(struct an *a)
{
	const struct hr_fleet *f = a->f;
	size_t i, j;
	for (i = 0; i < f->ndevices; i++) {
		const struct hr_device *d = &f->devices[i];
		const struct inst *worst = NULL;
		int nflag = 0;
		char subj[96], what[64], val[48], extra[1024] = "", action[512];
		if (!strcmp(d->status, "failed"))
			add_reason(a, d->node, HR_FAIL, "validation_failed", d->device, d->source,
				   "drain the node and run the vendor diagnostics (dcgmi diag -r 3); a device that computes wrong results cannot be trusted",
				   "%s: roofline's result check failed%s%s", d->device,
				   d->reason ? ": " : "", d->reason ? d->reason : "");
		for (j = a->dev_first[i]; j < a->dev_first[i] + a->dev_n[i]; j++) {
			const struct inst *p = &a->di[j];
			if (p->subject != (int)i || p->level < HR_WARN)
				continue;
			nflag++;
			if (!worst || p->level > worst->level ||
			    (p->level == worst->level &&
			     (isnan(p->pct_fleet) ? 100 : p->pct_fleet) < (isnan(worst->pct_fleet) ? 100 : worst->pct_fleet)))
				worst = p;
		}
		for (j = a->dev_first[i]; !worst && j < a->dev_first[i] + a->dev_n[i]; j++) {
			const struct inst *p = &a->di[j];
			char mk[48], v1[48], v2[48];
			if (p->subject != (int)i || !p->not_reproduced || p->superseded_by)
				continue;
			add_reason(a, d->node, HR_INFO, "did_not_reproduce", d->device, d->source,
				   "nothing to do; re-run roofline on the node if it recurs",
				   "%s %s %s was %.0f%% below the median %s of its node's %d other like GPUs, but roofline's re-measurement did not reproduce it: not judged low",
				   d->device, metric_label(p->metric, mk, sizeof(mk)), fmt_val(p->value, p->metric > 0, v1, sizeof(v1)),
				   100 - p->pct_node, fmt_val(p->peer_median, p->metric > 0, v2, sizeof(v2)), p->peer_n);
		}
		if (!worst) {
			int earlier = a->dev_n[i] && a->di[a->dev_first[i]].superseded_by;
			if (d->throttled && strcmp(d->status, "failed") && !earlier)
				add_reason(a, d->node, HR_INFO, "throttled", d->device, d->source,
					   "check power and cooling if it recurs",
					   "%s was throttled during part of the measurement%s%s, yet met its expectations",
					   d->device, d->throttle_reasons ? ": " : "",
					   d->throttle_reasons ? d->throttle_reasons : "");
			continue;
		}
		metric_label(worst->metric, what, sizeof(what));
		fmt_val(worst->value, worst->metric > 0, val, sizeof(val));
		snprintf(subj, sizeof(subj), "%s", d->device);
		inst_margins(a, worst, d->sku ? d->sku : "this model", "like devices", extra, sizeof(extra));
		if (d->throttled)
			snprintf(action, sizeof(action),
				 "check power and cooling: the device was throttled%s%s (nvidia-smi -q -d PERFORMANCE,POWER,TEMPERATURE)",
				 d->throttle_reasons ? " by " : "", d->throttle_reasons ? d->throttle_reasons : "");
		else if (worst->metric == 0)
			snprintf(action, sizeof(action),
				 "re-run roofline on %s; if it stays low check memory errors and clocks (nvidia-smi -q -d ECC,CLOCK), then drain and run dcgmi diag -r 3",
				 d->device);
		else
			snprintf(action, sizeof(action),
				 "re-run roofline on %s; if it stays low check clocks, power limit and PCIe link (nvidia-smi -q), then drain and run dcgmi diag -r 3",
				 d->device);
		{
			struct reason *r = add_reason(a, d->node, worst->level, worst->metric == 0 ? "memory_low" : "compute_low",
						      subj, d->source, action, "%s %s %s: %s%s%s%s",
						      d->device, what, val, extra,
						      d->throttled ? "; throttled during the measurement" : "",
						      nflag > 1 ? "; also low: " : "", "");
			if (r && worst->level == HR_FAIL && worst->confirmed_fail)
				r->drain = 1;
		}
		if (nflag > 1 && !a->oom) {
			/* name the other low metrics */
			struct reason *r = &a->r[a->nr - 1];
			struct hr_buf b = { 0 };
			int first = 1;
			hr_buf_puts(&b, r->text);
			for (j = a->dev_first[i]; j < a->dev_first[i] + a->dev_n[i]; j++) {
				const struct inst *p = &a->di[j];
				char mk[48];
				if (p->subject != (int)i || p->level < HR_WARN || p == worst)
					continue;
				hr_buf_printf(&b, "%s%s", first ? "" : ", ",
					      p->metric == 0 ? "memory" : ch_dtype_name(p->metric - 1));
				first = 0;
				(void)mk;
			}
			if (b.s) {
				free(r->text);
				r->text = b.s;
			}
		}
	}
}

/* ------------------------------------------------------------ groups */

static int backend_class_gpu(const char *backend)
{
	return backend && (!strcmp(backend, "nccl") || !strcmp(backend, "nccl-tests"));
}

/* Ranks per node of a multi-node group (rounded up: a log may list part of
 * the last node). */
static int ranks_per_node(const struct hr_group *g)
{
	return g->nnodes > 0 ? (g->nranks + g->nnodes - 1) / g->nnodes : 0;
}

/*
 * Expected large-message busbw of a multi-node all-reduce: from the NICs the
 * nodes recorded (active NICs x line rate, the share the group's ranks use
 * of the node's GPUs, x HR_NIC_EFFICIENCY; the slowest node bounds it), else
 * from the GPU model's typical cluster (assumed), else not judged. Writes
 * the basis (@basis) or why there is none (@why).
 */
/* The RDMA network of a node from its inventory (docs/results-schema.md,
 * host.inventory.nics: records of kind "rdma", state ACTIVE, rate_gbps):
 * @active and @down ports, the active ports' total rate (Gb/s, returned;
 * NAN when the node has no inventory or it lists no RDMA port), @gpus the
 * GPUs it lists. */
static double node_rdma_gbps(const struct hr_node *nd, int *active, int *down, int *gpus)
{
	const json_t *nics = json_object_get(nd->inventory, "nics"), *v;
	double total = 0;
	size_t i;
	*active = *down = 0;
	*gpus = (int)json_array_size(json_object_get(nd->inventory, "gpus"));
	if (!nd->inventory || !json_is_array(nics))
		return NAN;
	json_array_foreach(nics, i, v) {
		const char *kind = hr_jstr(v, "kind"), *st = hr_jstr(v, "state");
		double rate = hr_jnum(v, "rate_gbps");
		if (kind && strcmp(kind, "rdma"))
			continue; /* plain network interfaces: not what NCCL's IB transport uses */
		if (st && !strcmp(st, "ACTIVE") && rate > 0) {
			(*active)++;
			total += rate;
		} else {
			(*down)++;
		}
	}
	return *active ? total : NAN;
}

/*
 * Expected large-message busbw of a multi-node all-reduce: from the NICs the
 * nodes recorded (active RDMA ports x line rate, the share the group's ranks
 * use of the node's GPUs, x HR_NIC_EFFICIENCY; the slowest node bounds it),
 * else from the GPU model's typical cluster (assumed), else not judged.
 * Writes the basis (@basis) or why there is none (@why).
 */
static double inter_expected(const struct an *a, const struct hr_group *g,
			     const struct hr_sku_expect *x, char *basis, size_t nb,
			     char *why, size_t nw)
{
	const struct hr_fleet *f = a->f;
	int r = ranks_per_node(g), k, all_nics = 1, slow = -1, s_act = 0, s_down = 0, s_gpus = 0;
	double best = NAN, s_total = 0;
	char num[32];
	if (x && !isnan(x->inter_busbw_gbps)) {
		snprintf(basis, nb, "given: %s", x->source);
		return x->inter_busbw_gbps;
	}
	for (k = 0; k < g->nnodes; k++) {
		const struct hr_node *nd = &f->nodes[g->nodes[k]];
		int act, down, gpus;
		double tot = node_rdma_gbps(nd, &act, &down, &gpus), share, v;
		if (isnan(tot)) {
			all_nics = 0;
			break;
		}
		if (!gpus)
			gpus = nd->ngpus;
		share = gpus >= r && gpus > 0 ? (double)r / gpus : 1.0;
		v = tot * share / 8 * HR_NIC_EFFICIENCY;
		if (isnan(best) || v < best) {
			best = v;
			slow = g->nodes[k];
			s_act = act;
			s_down = down;
			s_gpus = gpus;
			s_total = tot;
		}
	}
	if (all_nics && slow >= 0) {
		snprintf(basis, nb, "from the NICs recorded in the result files: %s has %d active RDMA port%s, %s Gb/s in all%s%s%s, %d rank%s of its %d GPUs, x %.2f (46 GB/s busbw per 400 Gb/s NDR NIC)%s",
			 f->nodes[slow].name, s_act, s_act == 1 ? "" : "s",
			 hr_fmt_num(s_total, num, sizeof(num)),
			 s_down ? " (" : "", s_down ? (s_down == 1 ? "1 more not active" : "more not active") : "",
			 s_down ? ")" : "", r, r == 1 ? "" : "s", s_gpus > 0 ? s_gpus : r, HR_NIC_EFFICIENCY,
			 g->nnodes > 1 ? " (the slowest node of the group)" : "");
		return best;
	}
	if (x && !isnan(x->cluster_nic_gbps_per_gpu)) {
		snprintf(basis, nb, "assumed reference (no NIC inventory in the inputs): %d ranks per node x %s Gb/s / 8 x %.2f; %s",
			 r, hr_fmt_num(x->cluster_nic_gbps_per_gpu, num, sizeof(num)), HR_NIC_EFFICIENCY,
			 x->cluster_source);
		return r * x->cluster_nic_gbps_per_gpu / 8 * HR_NIC_EFFICIENCY;
	}
	snprintf(why, nw, "no NIC inventory in the result files and no cluster reference for %s",
		 g->gpu_name ? g->gpu_name : "an unknown GPU model");
	return NAN;
}

static int same_nodes(const struct hr_group *a, const struct hr_group *b);

/* A group with a later sweep in the inputs (same nodes and class, a later
 * start): its instance is history (superseded_by that file). Needs
 * a->grp_inst. */
static void mark_superseded_groups(struct an *a)
{
	const struct hr_fleet *f = a->f;
	size_t i;
	for (i = 0; i < a->ngi; i++) {
		struct inst *p = &a->gi[i];
		const struct hr_group *g = &f->groups[p->subject];
		time_t best = a->grp_t[p->subject];
		const char *best_src = g->source;
		long e;
		if (!best || g->nnodes < 1 || g->nodes[0] < 0 || (size_t)g->nodes[0] >= f->nnodes)
			continue;
		/* the groups with the same nodes all hold g's first node */
		for (e = a->node_grp[g->nodes[0]]; e >= 0; e = a->grp_next[e]) {
			long j = a->grp_inst[a->grp_of[e]];
			const struct hr_group *h = &f->groups[a->grp_of[e]];
			if (j < 0 || (size_t)j == i || a->gi[j].cls != p->cls ||
			    !later_run(a->grp_t[a->grp_of[e]], h->source, best, best_src) || !same_nodes(g, h))
				continue;
			best = a->grp_t[a->grp_of[e]];
			best_src = h->source;
			p->superseded_by = h->source;
		}
	}
}

static void group_instances(struct an *a)
{
	const struct hr_fleet *f = a->f;
	size_t i;
	for (i = 0; i < f->ngroups; i++) {
		const struct hr_group *g = &f->groups[i];
		const struct ch_datasheet *ds = g->gpu_name ? ch_datasheet_lookup(g->gpu_name) : NULL;
		const struct hr_sku_expect *x = hr_expect_for(a->e, ds ? ds->sku : NULL, g->gpu_name);
		int gpu = backend_class_gpu(g->backend), intra = g->nnodes == 1;
		int ar = !strcmp(g->collective, "all_reduce");
		struct inst *p;
		char key[256], label[200], sz[32];
		int k;
		if (g->kind == HR_G_SCALING || isnan(g->large_busbw_gbps) || !g->nrows || g->nnodes < 1)
			continue;
		snprintf(key, sizeof(key), "group|%s|%d|%s|%s|%d|%s|%.0f|%d|%s", intra ? "intra" : "inter",
			 intra ? 1 : g->nnodes, g->collective, g->algo, g->nranks, gpu ? "gpu" : "host",
			 g->large_bytes, g->busbw_is_algbw, ds ? ds->sku : g->gpu_name ? g->gpu_name : "-");
		if (intra)
			snprintf(label, sizeof(label), "intra-node busbw, %s %s, %d ranks, %s, at %s",
				 g->collective, g->algo, g->nranks, gpu ? (ds ? ds->sku : "GPU") : "host memory",
				 hr_fmt_bytes(g->large_bytes, sz, sizeof(sz)));
		else
			snprintf(label, sizeof(label), "inter-node busbw, %d nodes, %s %s, %d ranks, %s, at %s",
				 g->nnodes, g->collective, g->algo, g->nranks,
				 gpu ? (ds ? ds->sku : "GPU") : "host memory",
				 hr_fmt_bytes(g->large_bytes, sz, sizeof(sz)));
		p = new_inst(a, &a->gi, &a->ngi, &a->capgi);
		if (!p)
			return;
		p->cls = class_of(a, key, label, "GB/s");
		p->node = intra ? g->nodes[0] : -1;
		p->subject = (int)i;
		p->metric = -1;
		p->fabric = intra ? 1 : 2;
		p->value = g->large_busbw_gbps;
		for (k = 0; k < g->nnodes; k++)
			if (a->drift[g->nodes[k]])
				p->like = 0;
		if (!gpu)
			p->why = keep(a, INST_WHY_MAX, "a host-memory (%s) sweep: no reference figure", g->backend);
		else if (!ar)
			p->why = keep(a, INST_WHY_MAX, "the references are all-reduce figures; this run is %s", g->collective);
		else if (g->busbw_is_algbw)
			p->why = keep(a, INST_WHY_MAX, "its busbw is printed as today's algbw (old format)");
		else if (intra) {
			if (x && !isnan(x->intra_busbw_gbps) &&
			    (x->intra_nranks == 0 || x->intra_nranks == g->nranks)) {
				int nvls = strstr(g->algo, "nvls") != NULL && !isnan(x->intra_nvls_busbw_gbps);
				p->expected = nvls ? x->intra_nvls_busbw_gbps : x->intra_busbw_gbps;
				p->basis = keep(a, INST_BASIS_MAX, "%s reference for %d x %s%s: %s",
					 nvls ? "NVLS" : "without-NVLS", g->nranks, x->sku,
					 nvls ? "" : " (the run did not ask for NVLS)", x->intra_source);
				p->tag = keep(a, INST_TAG_MAX, "%d x %s reference", g->nranks, x->sku);
			} else if (x && !isnan(x->intra_busbw_gbps))
				p->why = keep(a, INST_WHY_MAX, "the %s intra-node reference is for %d GPUs, this run has %d ranks",
					 x->sku, x->intra_nranks, g->nranks);
			else
				p->why = keep(a, INST_WHY_MAX, "no intra-node reference for %s (references: 8 x H100 SXM, 8 x H200 SXM, 8 x A100 SXM; PCIe-only servers depend on their PCIe topology)",
					 ds ? ds->sku : g->gpu_name ? g->gpu_name : "an unknown GPU model");
		} else {
			char basis[INST_BASIS_MAX] = "", why[INST_WHY_MAX] = "";
			p->expected = inter_expected(a, g, x, basis, sizeof(basis), why, sizeof(why));
			p->basis = keep(a, INST_BASIS_MAX, "%s", basis);
			p->why = keep(a, INST_WHY_MAX, "%s", why);
			p->tag = keep(a, INST_TAG_MAX, "%s", !strncmp(p->basis, "from the NICs", 13) ? "NICs recorded" :
				 !strncmp(p->basis, "assumed", 7) ? "assumed cluster reference" : "given");
			p->assumed_cap = !strncmp(p->basis, "assumed", 7);
		}
		if (!isnan(p->expected) && g->large_bytes < HR_REF_MIN_BYTES) {
			p->why = keep(a, INST_WHY_MAX, "its largest size, %s, is below 1 GiB: busbw has not reached the plateau the reference describes",
				 hr_fmt_bytes(g->large_bytes, sz, sizeof(sz)));
			p->expected = NAN;
			p->basis = p->tag = "";
		}
		if (!isnan(p->expected))
			p->why = "";
		if (intra && gpu && g->nranks >= 2 && hr_gpu_nvlink_all(ds) == 1 &&
		    p->value <= a->th->pcie_class_gbps)
			p->pcie_class = 1;
		{
			/* the headline figure's cell: out-of-place at the largest size */
			double cv = NAN;
			size_t j;
			for (j = 0; j < g->nrows; j++)
				if (g->rows[j].bytes == g->large_bytes)
					cv = !isnan(g->rows[j].busbw_oop_gbps) ? g->rows[j].oop.cv : g->rows[j].ip.cv;
			set_quality(a, p, a->grp_run[i], cv, hr_fmt_bytes(g->large_bytes, sz, sizeof(sz)));
		}
	}
	for (i = 0; !a->oom && i < a->ngi; i++)
		a->grp_inst[a->gi[i].subject] = (long)i;
	mark_superseded_groups(a);
}

static const struct inst *group_inst(const struct an *a, size_t g)
{
	return a->grp_inst && a->grp_inst[g] >= 0 ? &a->gi[a->grp_inst[g]] : NULL;
}

/* The margins of a flagged group (inst_margins()). */
static void group_detail(const struct an *a, const struct inst *p, const char *like,
			 char *detail, size_t n)
{
	inst_margins(a, p, "this model", like, detail, n);
}

#define INTER_ACTION "check the node's NICs (ibstat: state Active, rate; port error counters), the transport NCCL chose (NCCL_DEBUG=INFO: NET/IB, not NET/Socket), NCCL_IB_HCA and the network stack (GPUDirect RDMA, nvidia-peermem, the fabric's own diagnostics such as ibdiagnet)"

static void group_reasons(struct an *a)
{
	const struct hr_fleet *f = a->f;
	size_t i;
	int k;
	char val[48];

	for (i = 0; i < f->ngroups; i++) {
		const struct hr_group *g = &f->groups[i];
		const struct inst *p = group_inst(a, i);
		if (g->wrong_total > 0) {
			if (!g->nnodes)
				add_reason(a, -1, HR_FAIL, "wrong_results", g->name, g->source,
					   "find the hosts of this run and drain them; run dcgmi diag and per-pair nccl-tests",
					   "%s (%s): %.0f wrong elements in %s results: data corruption",
					   g->name, g->backend, g->wrong_total, g->collective);
			for (k = 0; k < g->nnodes; k++)
				add_reason(a, g->nodes[k], HR_FAIL, "wrong_results", g->name, g->source,
					   "drain; run dcgmi diag -r 3 and all-reduce tests per GPU and per node pair to find the faulty GPU or link",
					   "%.0f wrong elements in %s %s results of group %s (%d ranks, %d node%s): data corruption",
					   g->wrong_total, g->backend, g->collective, g->name, g->nranks,
					   g->nnodes, g->nnodes == 1 ? "" : "s");
		}
		if (g->failure && !strcmp(g->backend, "nccl-tests") && !(g->complete && g->wrong_total > 0)) {
			/* (a finished run with wrong elements is reported as such above) */
			if (!g->nnodes)
				add_reason(a, -1, HR_WARN, "nccl_tests_failed", g->name, g->source,
					   "re-run with NCCL_DEBUG=INFO and read the first error",
					   "nccl-tests run %s %s: '%.160s'", g->name,
					   g->complete ? "reported failures" : "did not finish", g->failure);
			for (k = 0; k < g->nnodes; k++)
				add_reason(a, g->nodes[k], HR_WARN, "nccl_tests_failed", g->name, g->source,
					   "re-run with NCCL_DEBUG=INFO and read the first error; if it names this node's GPUs, check them (nvidia-smi, compute mode)",
					   "nccl-tests run %s (%d ranks) %s: '%.160s'", g->name,
					   g->nranks, g->complete ? "reported failures" : "did not finish", g->failure);
		}
		if (!p || p->fabric != 1 || p->level < HR_WARN)
			continue;
		fmt_val(p->value, 0, val, sizeof(val));
		for (k = 0; k < g->nnodes; k++) {
			const struct ch_datasheet *ds = g->gpu_name ? ch_datasheet_lookup(g->gpu_name) : NULL;
			struct reason *r;
			if (p->level_abs == HR_FAIL && hr_gpu_nvlink_all(ds) == 1 && p->value <= a->th->pcie_class_gbps)
				r = add_reason(a, g->nodes[k], HR_FAIL, "nvlink_degraded", g->name, g->source,
					   "NVLink degraded: check nvidia-smi nvlink --status and nvidia-smi topo -m, then drain and reseat or replace the failing GPU or NVSwitch",
					   "intra-node busbw %s (%s, %d ranks) is PCIe-class (at most %.0f GB/s) on an NVLink node (%s)",
					   val, g->algo, g->nranks, a->th->pcie_class_gbps, ds->sku);
			else {
				char detail[1200];
				group_detail(a, p, "intra-node groups", detail, sizeof(detail));
				r = add_reason(a, g->nodes[k], p->level, "intra_node_busbw_low", g->name, g->source,
					   "check the intra-node fabric: nvidia-smi nvlink --status, nvidia-smi topo -m, PCIe link width (lspci -vv); re-run allreduce_bw on the node",
					   "intra-node busbw %s (%s %s, %d ranks, %s %s): %s", val, g->collective,
					   g->algo, g->nranks, hr_group_kind_name(g->kind), g->name, detail);
			}
			if (r && p->level == HR_FAIL && p->confirmed_fail)
				r->drain = 1;
		}
	}

	/* node pairs: slow pairs, and the node common to two or more of them */
	for (i = 0; i < a->ngi; i++) {
		const struct inst *p = &a->gi[i];
		const struct hr_group *g = &f->groups[p->subject];
		if (p->fabric != 2 || g->nnodes != 2 || p->level < HR_WARN)
			continue;
		for (k = 0; k < g->nnodes; k++)
			a->slow_pairs[g->nodes[k]]++;
	}
	for (i = 0; i < f->nnodes; i++) {
		struct hr_buf names = { 0 };
		struct reason *r;
		size_t j;
		int n = 0, solid = 0;
		if (a->slow_pairs[i] < 2)
			continue;
		for (j = 0; j < a->ngi; j++) {
			const struct inst *p = &a->gi[j];
			const struct hr_group *g = &f->groups[p->subject];
			if (p->fabric != 2 || g->nnodes != 2 || p->level < HR_WARN)
				continue;
			for (k = 0; k < g->nnodes; k++)
				if (g->nodes[k] == (int)i) {
					hr_buf_printf(&names, "%s%s (%s)", n++ ? ", " : "", g->name,
						      fmt_val(p->value, 0, val, sizeof(val)));
					/* slow against like pairs, or against a recorded or given reference */
					solid += p->level_rel >= HR_WARN || (p->level_abs >= HR_WARN && !p->assumed_cap);
				}
		}
		/* two pairs that share the node are two measurements that agree:
		 * confirmed, unless they rest on an assumed reference alone */
		r = add_reason(a, (int)i, solid >= 2 ? HR_FAIL : HR_WARN, "inter_node_link", "inter-node", NULL,
			       solid >= 2 ? "inter-node link: " INTER_ACTION "; check its cables, then drain"
					  : "record the NIC inventory (result files with host.inventory) so that the pairs are judged against the NICs the nodes have; meanwhile: " INTER_ACTION,
			       "common to %d slow node pairs: %s%s", a->slow_pairs[i], names.s ? names.s : "",
			       solid >= 2 ? "; confirmed by two pairs that share the node"
					  : "; judged against an assumed reference only (no NIC inventory, no like pairs): at most WARN");
		if (r && solid >= 2)
			r->drain = 1;
		hr_buf_release(&names);
	}
	for (i = 0; i < a->ngi; i++) {
		const struct inst *p = &a->gi[i];
		const struct hr_group *g = &f->groups[p->subject];
		int suspect = 0;
		char detail[1200];
		if (p->fabric != 2 || p->level < HR_WARN)
			continue;
		for (k = 0; g->nnodes == 2 && k < g->nnodes; k++)
			if (a->slow_pairs[g->nodes[k]] >= 2)
				suspect = 1;
		if (suspect)
			continue; /* explained by the suspect node */
		group_detail(a, p, g->nnodes == 2 ? "pairs" : "groups of this size", detail, sizeof(detail));
		fmt_val(p->value, 0, val, sizeof(val));
		for (k = 0; k < g->nnodes; k++) {
			if (p->level_abs >= HR_WARN) {
				struct reason *r = add_reason(a, g->nodes[k], p->level, "inter_node_busbw_low", g->name, g->source,
					   p->assumed_cap && p->level_rel < HR_WARN ?
					   "record the NIC inventory (result files with host.inventory): this verdict rests on an assumed reference; meanwhile: " INTER_ACTION :
					   INTER_ACTION,
					   "inter-node busbw %s (%s %s, %d ranks on %d nodes, %s): %s%s",
					   val, g->collective, g->algo, g->nranks, g->nnodes, g->name, detail,
					   p->assumed_cap && p->level_rel < HR_WARN ? "; an assumed reference alone: at most WARN" : "");
				if (r && p->level == HR_FAIL && p->confirmed_fail)
					r->drain = 1;
			}
			else if (g->nnodes == 2)
				add_reason(a, g->nodes[k], HR_WARN, "slow_pair", g->name, g->source,
					   "re-test each node of the pair against a third node (allreduce_bw --groups pairs) to localise; " INTER_ACTION,
					   "in slow node pair %s: busbw %s (%s, %d ranks): %s", g->name,
					   val, g->algo, g->nranks, detail);
			else
				add_reason(a, g->nodes[k], HR_WARN, "inter_node_busbw_low", g->name, g->source,
					   INTER_ACTION,
					   "inter-node busbw %s (%s %s, %d ranks on %d nodes, %s): %s",
					   val, g->collective, g->algo, g->nranks, g->nnodes, g->name, detail);
		}
	}
}


/* ------------------------------------------------------------ history */

static int group_has_node(const struct hr_group *g, int n)
{
	int k;
	for (k = 0; k < g->nnodes; k++)
		if (g->nodes[k] == n)
			return 1;
	return 0;
}


static int same_nodes(const struct hr_group *a, const struct hr_group *b)
{
	int k;
	if (a->nnodes != b->nnodes)
		return 0;
	for (k = 0; k < a->nnodes; k++)
		if (!group_has_node(b, a->nodes[k]))
			return 0;
	return 1;
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
	hr_check_cfg_init(&cfg);
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
			if (j == i || q->cls != p->cls || q->noisy || !(u = a->grp_t[q->subject]) || !same_nodes(g, h))
				continue;
			if (later_run(u, h->source, t, g->source))
				later = 1;
			else if (later_run(t, g->source, u, h->source))
				pts[n++] = (struct hist_pt){ u, q->value };
		}
		if (later || !judge_history(a, p, pts, n, v, &cfg, &since))
			continue;
		base = p->hist_base;
		pct = p->hist_pct;
		n = (size_t)p->hist_n; /* one per earlier run */
		strftime(when, sizeof(when), "%Y-%m-%d", gmtime(&pts[since < n ? since : n - 1].t));
		fmt_val(p->value, 0, val, sizeof(val));
		fmt_val(base, 0, ref, sizeof(ref));
		for (k = 0; k < g->nnodes; k++) {
			if (p->hist_persist == HR_TREND_REGRESSED)
				add_reason(a, g->nodes[k], HR_FAIL, "fabric_regressed", g->name, g->source,
					   p->fabric == 1 ? "the node's own fabric got slower: check NVLink / PCIe (nvidia-smi nvlink --status, nvidia-smi topo -m) and what changed since (driver, NCCL, firmware)" :
					   INTER_ACTION "; and what changed since (driver, NCCL, firmware, switch configuration)",
					   "%s busbw %s (%s %s, %d ranks, %s) is %.0f%% below its own history in the inputs on %d runs in a row: median %s of %d earlier sweep%s (regressed since %s; beyond the runs' own spread)",
					   p->fabric == 1 ? "intra-node" : "inter-node", val, g->collective, g->algo,
					   g->nranks, g->name, pct, (int)(n + 1 - since), ref, p->hist_nbase,
					   p->hist_nbase == 1 ? "" : "s", when);
			else
				add_reason(a, g->nodes[k], HR_WARN, "fabric_regressed", g->name, g->source,
					   "re-run the sweep: a regression on one run alone is not yet a trend",
					   "%s busbw %s (%s %s, %d ranks, %s) regressed once; re-run: %.0f%% below its own history in the inputs, median %s of %d earlier sweep%s (beyond the runs' own spread; REGRESSED when it persists on the next run)",
					   p->fabric == 1 ? "intra-node" : "inter-node", val, g->collective, g->algo,
					   g->nranks, g->name, pct, ref, p->hist_nbase, p->hist_nbase == 1 ? "" : "s");
			if (p->hist_persist == HR_TREND_REGRESSED && a->nr && !a->oom)
				a->r[a->nr - 1].drain = 1;
		}
	}
	free(pts);
	free(v);
}

/* ------------------------------------------------------------ others */

/* Whether result file @source holds a group of @node that a later sweep in
 * the inputs superseded (its other figures are history too). */
static int source_superseded(const struct an *a, const char *source, int node)
{
	long e;
	if (node < 0 || (size_t)node >= a->f->nnodes)
		return 0;
	for (e = a->node_grp[node]; e >= 0; e = a->grp_next[e]) {
		const struct inst *p = group_inst(a, (size_t)a->grp_of[e]);
		if (p && p->superseded_by && !strcmp(a->f->groups[a->grp_of[e]].source, source))
			return 1;
	}
	return 0;
}

static void straggler_reasons(struct an *a)
{
	size_t i;
	for (i = 0; i < a->f->nstragglers; i++) {
		const struct hr_straggler *s = &a->f->stragglers[i];
		char subj[32];
		if (source_superseded(a, s->source, s->node))
			continue; /* a straggler of an earlier sweep: history */
		snprintf(subj, sizeof(subj), "rank %d", s->rank);
		add_reason(a, s->node, HR_WARN, "straggler", subj, s->source,
			   "check that rank's GPU clocks, power and PCIe link (nvidia-smi -q) and the NIC it uses",
			   "rank %d is a straggler: slowest rank at %.0f%% of the sizes, %.0f%% slower than the median rank",
			   s->rank, 100 * s->slowest_fraction, s->excess_pct);
	}
}

static const struct hr_loader *node_loader(const struct hr_fleet *f, int node)
{
	const struct hr_loader *l = NULL;
	size_t i;
	for (i = 0; i < f->nloaders; i++)
		if (f->loaders[i].node == node)
			l = &f->loaders[i]; /* the last one read: the newest */
	return l;
}

static const struct hr_loader_cfg *loader_cfg(const struct hr_loader *l, const char *name,
					     const char *placement, int workers)
{
	size_t i;
	for (i = 0; name && i < l->ncfgs; i++)
		if (!strcmp(l->cfgs[i].name, name))
			return &l->cfgs[i];
	for (i = 0; placement && i < l->ncfgs; i++)
		if (!strcmp(l->cfgs[i].placement, placement) && (workers < 0 || l->cfgs[i].workers == workers))
			return &l->cfgs[i];
	return NULL;
}

static int verdict_level(const char *v)
{
	return v && !strcmp(v, "fail") ? HR_FAIL : v && !strcmp(v, "warn") ? HR_WARN : HR_INFO;
}

static void cfg_text(const struct hr_loader_cfg *c, char *buf, size_t n)
{
	char p99[32], wait[32], wk[48];
	if (c->workers == INT_MIN)
		snprintf(wk, sizeof(wk), "workers per GPU not recorded");
	else
		snprintf(wk, sizeof(wk), "%d worker%s per GPU", c->workers, c->workers == 1 ? "" : "s");
	snprintf(buf, n, "feeder lateness p99 %s us, input wait %s%% of the step, accelerator utilisation %.1f%% (%s, %s)",
		 hr_fmt_num(c->lateness_p99_us, p99, sizeof(p99)),
		 hr_fmt_num(100 * c->input_wait_frac, wait, sizeof(wait)), 100 * c->accel_util,
		 c->name, wk);
}

/* The level of a loader configuration from its figures (not its verdict
 * label): input wait against the result's thresholds (TensorFlow
 * profiler: WARN from 5%, FAIL from 20% of the step), accelerator
 * utilisation (DLIO: WARN below 90%, FAIL below 70%), and the feeders'
 * lateness p99 (WARN from one whole step: the batch of that step is late
 * by construction). @why: [out] what crossed its threshold, with the
 * margin. */
static int loader_level(const struct hr_loader *l, const struct hr_loader_cfg *c, char *why, size_t n)
{
	int level = HR_INFO;
	size_t len;
	why[0] = '\0';
	if (c->input_wait_frac >= l->wait_warn) {
		int lv = c->input_wait_frac >= l->wait_fail ? HR_FAIL : HR_WARN;
		len = strlen(why);
		snprintf(why + len, n - len, "%sinput wait %.1f%% of the step (WARN from %.0f%%, FAIL from %.0f%%: TensorFlow profiler input-pipeline analysis)",
			 len ? "; " : "", 100 * c->input_wait_frac, 100 * l->wait_warn, 100 * l->wait_fail);
		if (lv > level)
			level = lv;
	}
	if (c->accel_util < l->util_pass) {
		int lv = c->accel_util < l->util_fail ? HR_FAIL : HR_WARN;
		len = strlen(why);
		snprintf(why + len, n - len, "%saccelerator utilisation %.1f%% (WARN below %.0f%%, FAIL below %.0f%%: DLIO / MLPerf Storage)",
			 len ? "; " : "", 100 * c->accel_util, 100 * l->util_pass, 100 * l->util_fail);
		if (lv > level)
			level = lv;
	}
	if (l->step_ms > 0 && c->lateness_p99_us >= 1000 * l->step_ms) {
		len = strlen(why);
		snprintf(why + len, n - len, "%sfeeder lateness p99 %.0f us, %.1f steps of %.3g ms (WARN from one step)",
			 len ? "; " : "", c->lateness_p99_us, c->lateness_p99_us / (1000 * l->step_ms), l->step_ms);
		if (level < HR_WARN)
			level = HR_WARN;
	}
	return level;
}

/* Whether the loader's host was busy before its load started: its
 * baseline configuration's CPU pressure, or the envelope's conditions
 * before the run (hr_quality.h); @q: [out]. */
static void loader_quality(const struct an *a, const struct hr_loader *l, struct hr_quality *q)
{
	const struct hr_conditions *c = NULL;
	size_t i;
	for (i = 0; i < a->f->nruns; i++)
		if (!strcmp(a->f->runs[i].path, l->source) && a->f->runs[i].cond.known) {
			c = &a->f->runs[i].cond;
			break;
		}
	hr_quality_loader(q, c, l->base_psi_pct);
}

/*
 * The loader judged on its figures (loader_level()), not on
 * loader_contention's verdict labels: the configuration it recommends
 * (the best placement measured: when even that is late, the host cannot
 * feed its GPUs) and the inherited placement (as-is: what a job gets
 * without binding). A run whose host was busy before its load started is
 * not judged ("host busy").
 */
static void loader_reasons(struct an *a)
{
	const struct hr_fleet *f = a->f;
	size_t n, i;
	for (n = 0; n < f->nnodes; n++) {
		const struct hr_loader *l = node_loader(f, (int)n);
		const struct hr_loader_cfg *rec, *asis = NULL, *shared = NULL;
		struct hr_quality q;
		int level, la = HR_INFO, ls = HR_INFO;
		char t1[400], w1[600], w2[600], w3[600], action[768];
		if (!l)
			continue;
		if (l->mask_collapsed) {
			level = verdict_level(l->verdict);
			a->loader[n] = 1;
			add_reason(a, (int)n, level > HR_WARN ? level : HR_WARN, "affinity_collapsed", "loader", l->source,
				   "check the launcher's CPU binding (srun --cpu-bind, OMP_PROC_BIND, mpirun --bind-to): every thread of the job would share one CPU",
				   "the process's CPU affinity mask has collapsed to a single CPU (loader_contention's verdict '%s')",
				   l->verdict ? l->verdict : "n/a");
			continue;
		}
		loader_quality(a, l, &q);
		if (q.noisy) {
			a->loader[n] = 2;
			snprintf(a->loader_why[n], sizeof(a->loader_why[n]), "host busy: %s", q.why);
			add_reason(a, (int)n, HR_INFO, "loader_not_judged", "loader", l->source, "re-run on an idle node",
				   "loader not judged: host busy (%s): its feeders would be late from the other work, not from the placement",
				   q.why);
			continue;
		}
		a->loader[n] = 1;
		rec = loader_cfg(l, l->rec_config, l->rec_placement, l->rec_workers);
		for (i = 0; i < l->ncfgs; i++) {
			const struct hr_loader_cfg *c = &l->cfgs[i];
			if (!strcmp(c->placement, "as-is") && (!asis || c->input_wait_frac > asis->input_wait_frac))
				asis = c;
			if (!strcmp(c->placement, "shared") && (!shared || c->input_wait_frac > shared->input_wait_frac))
				shared = c;
		}
		if (l->rec_placement)
			/* shared and as-is leave the workers on the feeder cores: bind, not move */
			snprintf(action, sizeof(action), "%s: the %s placement with %d worker%s per GPU%s%s%s",
				 !strcmp(l->rec_placement, "shared") || !strcmp(l->rec_placement, "as-is")
					 ? "bind the job as loader_contention recommends"
					 : "move workers off the feeder cores",
				 l->rec_placement, l->rec_workers, l->rec_workers == 1 ? "" : "s",
				 l->rec_numactl ? " (" : "", l->rec_numactl ? l->rec_numactl : "",
				 l->rec_numactl ? ")" : "");
		else
			snprintf(action, sizeof(action), "move workers off the feeder cores (loader_contention's isolated placement)");
		level = rec ? loader_level(l, rec, w1, sizeof(w1)) : HR_INFO;
		a->loader_lv[n] = level;
		if (level >= HR_WARN) {
			char act2[1024];
			cfg_text(rec, t1, sizeof(t1));
			snprintf(act2, sizeof(act2), "the host CPUs cannot keep the GPUs fed even with the best placement measured: look for other load on the node (top), then reduce the CPU work per batch or add cores; meanwhile %s",
				 action);
			add_reason(a, (int)n, level, "loader_input_bound", "loader", l->source, act2,
				   "with the recommended placement: %s (%s; loader_contention's own verdict '%s')", w1, t1,
				   l->verdict ? l->verdict : "n/a");
			continue;
		}
		if (asis)
			la = loader_level(l, asis, w2, sizeof(w2));
		if (shared)
			ls = loader_level(l, shared, w3, sizeof(w3));
		if (la >= HR_WARN) {
			cfg_text(asis, t1, sizeof(t1));
			add_reason(a, (int)n, HR_WARN, "loader_contention", "loader", l->source, action,
				   "feeders are late under the inherited placement (no binding): %s (%s)%s%s%s%s%s",
				   w2, t1, ls >= HR_WARN ? "; likewise with workers on the feeder cores (" : "",
				   ls >= HR_WARN ? shared->name : "", ls >= HR_WARN ? ")" : "",
				   rec ? "; the recommended placement passes: " : "", rec ? rec->name : "");
		}
	}
}

/* hr_inventory_rules() and hr_ckpt_reasons() report through this */
static void inventory_reason(void *ctx, int node, int level, const char *code, const char *subject,
			     const char *source, const char *action, const char *text)
{
	add_reason(ctx, node, level, code, subject, source, action, "%s", text);
}

static void run_reasons(struct an *a)
{
	const struct hr_fleet *f = a->f;
	size_t i, j;
	for (i = 0; i < f->nruns; i++) {
		const struct hr_run *r = &f->runs[i];
		if (!strcmp(r->tool, "nccl-tests") || r->node < 0)
			continue;
		if (!strcmp(r->status, "ok"))
			continue;
		if (!strcmp(r->status, "unavailable")) {
			add_reason(a, r->node, HR_INFO, "unavailable", r->tool, r->path, NULL,
				   "%s: unavailable%s%s", r->tool, r->reason ? ": " : "",
				   r->reason ? r->reason : "");
			continue;
		}
		if (!strcmp(r->status, "failed")) {
			int covered = 0;
			/* already explained by a failed device or wrong elements? */
			for (j = 0; j < f->ndevices; j++)
				if (!strcmp(f->devices[j].source, r->path) && !strcmp(f->devices[j].status, "failed"))
					covered = 1;
			for (j = 0; j < f->ngroups; j++)
				if (!strcmp(f->groups[j].source, r->path) && f->groups[j].wrong_total > 0)
					covered = 1;
			if (!strcmp(r->tool, "loader_contention"))
				covered = 1; /* its verdict is the reason */
			if (!covered)
				add_reason(a, r->node, HR_FAIL, "check_failed", r->tool, r->path,
					   "read the tool's output; re-run it alone on the node",
					   "%s failed its check%s%s", r->tool, r->reason ? ": " : "",
					   r->reason ? r->reason : "");
			continue;
		}
		add_reason(a, r->node, HR_WARN, "run_incomplete", r->tool, r->path,
			   "re-run the tool on the node; read its stderr and the node's kernel log (dmesg) for the cause",
			   "%s run ended with status '%s'%s%s: its results are partial", r->tool, r->status,
			   r->reason ? ": " : "", r->reason ? r->reason : "");
	}
}


/* ------------------------------------------------------------ curve shape */

static void curve_add(struct an *a, const struct hr_group *g, int level, const char *code, const char *action,
		      const char *text)
{
	int k;
	if (!g->nnodes)
		add_reason(a, -1, level, code, g->name, g->source, action, "%s %s: %s",
			   g->name, g->collective, text);
	for (k = 0; k < g->nnodes; k++)
		add_reason(a, g->nodes[k], level, code, g->name, g->source, action,
			   "%s (%s %s, %d ranks): %s", g->name, g->collective, g->algo, g->nranks, text);
}

#define CURVE_ACTION "re-run the sweep; if it repeats, read which protocol and algorithm NCCL chose around those sizes (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=TUNING) and compare with NCCL_PROTO / NCCL_ALGO pinned; look for other traffic during the run"

/* One cell of a curve as the shape rules see it. */
struct ccell {
	int ok;            /* a value to judge (present, clean) */
	int noisy;         /* present but noisy: CV above HR_Q_MAX_CV */
	int regime;        /* past the latency floor: its time at least
			      HR_CURVE_LATENCY x the smallest of the half
			      (sizes >= HR_CURVE_MIN_BYTES where the time is
			      not recorded) */
	double bytes;
	double bw;         /* busbw at the median per-call period where recorded */
	double e;          /* its relative spread: the CV and the 2-decimal print */
	double cv;
	int confirm;       /* measured again (enum hr_confirm: AGREED = measured) */
	double cbw, ce;    /* the re-measurement's busbw and spread */
};

/* The rows of @g the shape rules use: rows of size 0 dropped; 0 when the
 * rest is not one increasing sweep of at least 3 sizes. */
static size_t curve_rows(const struct hr_group *g, size_t *first)
{
	size_t j, n = 0, f0 = g->nrows;
	for (j = 0; j < g->nrows; j++) {
		if (!(g->rows[j].bytes > 0))
			continue;
		if (f0 == g->nrows)
			f0 = j;
		else if (!(g->rows[j].bytes > g->rows[j - 1].bytes) || j != f0 + n)
			return 0; /* not one increasing sweep (several roots or types) */
		n++;
	}
	*first = f0;
	return n >= 3 ? n : 0;
}

/* The relative spread of a busbw: its per-call CV, plus half a unit of the
 * last printed digit where it was read from text (nccl-tests prints busbw
 * with 2 decimals) */
static double spread_of(double cv, double bw, int printed)
{
	return (isnan(cv) ? 0 : cv) + (!printed ? 0 : bw > 0 ? 0.005 / bw : 1e9);
}

/* The cells of half @h (0 out-of-place, 1 in-place) of rows [f0, f0+n). */
static void curve_cells(const struct hr_group *g, size_t f0, size_t n, int h, struct ccell *c)
{
	double tmin = NAN;
	size_t j;
	int printed = g->backend && !strcmp(g->backend, "nccl-tests");
	for (j = 0; j < n; j++) {
		const struct hr_row *r = &g->rows[f0 + j];
		const struct hr_cell *cl = h ? &r->ip : &r->oop;
		double bw = h ? r->busbw_ip_gbps : r->busbw_oop_gbps, t = cl->median_us > 0 ? cl->median_us : cl->time_us;
		memset(&c[j], 0, sizeof(c[j]));
		c[j].bytes = r->bytes;
		c[j].cv = cl->cv;
		if (isnan(bw))
			continue;
		if (cl->time_us > 0 && cl->median_us > 0)
			bw *= cl->time_us / cl->median_us; /* at the median per-call period */
		c[j].bw = bw;
		c[j].e = spread_of(cl->cv, bw, printed);
		c[j].noisy = cl->cv > HR_Q_MAX_CV;
		c[j].ok = !c[j].noisy && bw >= 0;
		c[j].confirm = cl->confirm;
		c[j].cbw = cl->confirm_busbw;
		c[j].ce = spread_of(cl->confirm_cv, cl->confirm_busbw, 0);
		if (t > 0 && (isnan(tmin) || t < tmin))
			tmin = t;
	}
	/* past the latency floor: the time of this size and of every larger
	 * one at least HR_CURVE_LATENCY x the smallest (the trend of time with
	 * size, so that one slow call at a small size is not taken for it) */
	{
		double run = NAN;
		for (j = n; j-- > 0;) {
			const struct hr_row *r = &g->rows[f0 + j];
			const struct hr_cell *cl = h ? &r->ip : &r->oop;
			double t = cl->median_us > 0 ? cl->median_us : cl->time_us;
			if (t > 0 && (isnan(run) || t < run))
				run = t;
			c[j].regime = t > 0 && tmin > 0 ? run >= HR_CURVE_LATENCY * tmin : c[j].bytes >= HR_CURVE_MIN_BYTES;
		}
	}
}

/* Whether busbw @m (spread @em) is a dip between cells @l and @r. */
static int is_dip(double m, double em, const struct ccell *l, const struct ccell *r)
{
	double up = m * (1 + em);
	return m < l->bw && m < r->bw && m < HR_CURVE_DIP * sqrt(l->bw * r->bw) &&
	       up < l->bw * (1 - l->e) && up < r->bw * (1 - r->e);
}

/* Whether @lo (spread @elo) is below HR_CURVE_GAP x @hi (spread @ehi) beyond both spreads. */
static int is_gap(double lo, double elo, double hi, double ehi)
{
	return lo * (1 + elo) < HR_CURVE_GAP * hi * (1 - ehi);
}

/* What the re-measurement of a finding says, for its text. */
struct cfind {
	int n, confirmed, unconfirmed, noisy;
	struct hr_buf txt, not_repro, noisy_txt;
};

static void cfind_add(struct cfind *f, int confirm, int agrees, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void cfind_add(struct cfind *f, int confirm, int agrees, const char *fmt, ...)
{
	char buf[400];
	va_list ap;
	struct hr_buf *b;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (confirm != HR_CONFIRM_NONE && !agrees) {
		b = &f->not_repro;
	} else {
		b = &f->txt;
		f->n++;
		if (confirm != HR_CONFIRM_NONE)
			f->confirmed++;
		else
			f->unconfirmed++;
	}
	if (b == &f->txt && f->n > 4)
		return;
	hr_buf_printf(b, "%s%s%s", b->len ? "; " : "", buf,
		      b == &f->txt ? (confirm != HR_CONFIRM_NONE ? ", confirmed by re-measurement"
								 : ", not confirmed (no re-measurement in the input)")
				   : "");
}

static void cfind_release(struct cfind *f)
{
	hr_buf_release(&f->txt);
	hr_buf_release(&f->not_repro);
	hr_buf_release(&f->noisy_txt);
}

/* Report a rule's findings: WARN when any, info for those that did not
 * reproduce and for those on noisy cells. */
static void cfind_report(struct an *a, const struct hr_group *g, const char *code, const char *action,
			 const struct cfind *f, const char *what, const char *crit)
{
	char t[1600];
	if (f->n) {
		snprintf(t, sizeof(t), "%s %s%s (%s)", what, f->txt.s, f->n > 4 ? "; and more" : "", crit);
		curve_add(a, g, HR_WARN, code, action, t);
	}
	if (f->not_repro.s) {
		snprintf(t, sizeof(t), "%s %s did not reproduce: the sweep's re-measurement at the end of the run did not show it",
			 what, f->not_repro.s);
		curve_add(a, g, HR_INFO, "did_not_reproduce", "nothing to do; re-run the sweep if it recurs", t);
	}
}

/* The shape findings of one sweep, both halves. */
struct cshape {
	struct cfind dip, gap, col;
	struct hr_buf alt, noisy; /* the alternations named; the first finding on noisy cells */
	int nnoisy;               /* findings on noisy cells */
};

/* A regular alternation in half @x: the sign of the step flips at every
 * size, each step at least HR_CURVE_ALT and beyond the cells' spread, over
 * 4 steps (5 sizes) or more. The longest into [*lo, *hi], said in s->alt;
 * *hi 0 when none. */
static void curve_alternation(const struct ccell *x, size_t n, const char *half, struct cshape *s, size_t *lo,
			      size_t *hi)
{
	size_t j, k, start = 0, len = 0;
	int up_prev = 0;
	char s1[32], s2[32];

	*lo = *hi = 0;
	for (j = 1; j < n; j++) {
		int okj = x[j].ok && x[j - 1].ok && x[j].regime && x[j - 1].regime && x[j - 1].bw > 0 &&
			  fabs(x[j].bw / x[j - 1].bw - 1) >= HR_CURVE_ALT &&
			  fabs(x[j].bw - x[j - 1].bw) > x[j].bw * x[j].e + x[j - 1].bw * x[j - 1].e;
		int up = x[j].bw > x[j - 1].bw;
		if (!okj) {
			len = 0;
			continue;
		}
		if (len == 0 || up == up_prev) {
			start = j - 1;
			len = 1;
		} else {
			len++;
		}
		up_prev = up;
		if (len >= 4 && j - start > *hi - *lo) {
			*lo = start;
			*hi = j;
		}
	}
	if (!*hi)
		return;
	hr_buf_printf(&s->alt, "%s%s busbw alternates up and down between neighbouring sizes from %s to %s (",
		      s->alt.len ? "; " : "", half, hr_fmt_bytes(x[*lo].bytes, s1, sizeof(s1)),
		      hr_fmt_bytes(x[*hi].bytes, s2, sizeof(s2)));
	for (k = *lo; k <= *hi; k++)
		hr_buf_printf(&s->alt, "%s%.2f", k > *lo ? ", " : "", x[k].bw);
	hr_buf_printf(&s->alt, " GB/s)");
}

/* Dips in half @x: a size past the latency floor below both neighbours
 * beyond their spread and below HR_CURVE_DIP x their geometric mean; none
 * inside the alternation [alt_lo, alt_hi] (alt_hi 0: none). */
static void curve_dips(struct ccell *x, size_t n, const char *half, size_t alt_lo, size_t alt_hi, struct cshape *s)
{
	size_t j;
	char s1[32], s2[32], sp[160];

	for (j = 1; j + 1 < n; j++) {
		struct ccell *l = &x[j - 1], *m = &x[j], *r = &x[j + 1];
		if (!m->regime || (alt_hi && j >= alt_lo && j <= alt_hi))
			continue; /* latency-bound, or part of a named alternation */
		if (!(l->ok || l->noisy) || !(m->ok || m->noisy) || !(r->ok || r->noisy) ||
		    !(m->bw < l->bw && m->bw < r->bw && m->bw < HR_CURVE_DIP * sqrt(l->bw * r->bw)))
			continue;
		if (l->noisy || m->noisy || r->noisy) {
			const struct ccell *w = m->noisy ? m : l->noisy ? l : r;
			if (!s->nnoisy++)
				hr_buf_printf(&s->noisy, "a dip (%s) at %s on noisy cells (CV %.2f at %s)", half,
					      hr_fmt_bytes(m->bytes, s1, sizeof(s1)), w->cv,
					      hr_fmt_bytes(w->bytes, s2, sizeof(s2)));
			continue;
		}
		if (!is_dip(m->bw, m->e, l, r))
			continue;
		if (isnan(m->cv))
			snprintf(sp, sizeof(sp), "%s", "");
		else
			snprintf(sp, sizeof(sp), "; per-call CV %.2f, %.2f, %.2f", l->cv, m->cv, r->cv);
		if (m->confirm != HR_CONFIRM_NONE)
			snprintf(sp + strlen(sp), sizeof(sp) - strlen(sp), "; measured again %.2f GB/s", m->cbw);
		cfind_add(&s->dip, m->confirm, m->confirm != HR_CONFIRM_NONE && is_dip(m->cbw, m->ce, l, r),
			  "%s %s %.2f GB/s (neighbours %.2f and %.2f%s)",
			  hr_fmt_bytes(m->bytes, s1, sizeof(s1)), half, m->bw, l->bw, r->bw, sp);
	}
}

/* A mid-range collapse in half @x (the first of the sweep only): from a size
 * past the latency floor below HR_CURVE_MID x the plateau, busbw rises by
 * less than HR_CURVE_FLAT over at least HR_CURVE_SPAN x in size. */
static void curve_collapse(const struct ccell *x, size_t n, const char *half, struct cshape *s)
{
	double plateau = 0;
	size_t j, k;
	char s1[32], s2[32];

	for (j = 0; j < n; j++)
		if (x[j].ok && x[j].bw > plateau)
			plateau = x[j].bw;
	for (j = 0; j < n && !s->col.n; j++) {
		double b0 = x[j].bw, mx = b0;
		size_t end = 0;
		if (!x[j].ok || !x[j].regime || !(b0 < HR_CURVE_MID * plateau) || !(b0 > 0))
			continue;
		for (k = j + 1; k < n; k++) {
			double b = x[k].bw;
			if (!x[k].ok)
				break;
			if (b > mx)
				mx = b;
			if (mx >= HR_CURVE_FLAT * b0)
				break;
			if (x[k].bytes >= HR_CURVE_SPAN * x[j].bytes)
				end = k;
		}
		if (end)
			cfind_add(&s->col, HR_CONFIRM_NONE, 1,
				  "%s busbw flat or falling from %s (%.2f GB/s) to %s (%.2f GB/s), %.0fx the size, while the plateau is %.2f GB/s",
				  half, hr_fmt_bytes(x[j].bytes, s1, sizeof(s1)), b0,
				  hr_fmt_bytes(x[end].bytes, s2, sizeof(s2)), x[end].bw,
				  x[end].bytes / x[j].bytes, plateau);
	}
}

/* Out-of-place / in-place gaps between the halves @oop and @ip: one below
 * HR_CURVE_GAP x the other beyond their spread, the re-measurement of
 * either cell replacing it. */
static void curve_gaps(const struct ccell *oop, const struct ccell *ip, size_t n, struct cshape *s)
{
	size_t j;
	char s1[32];

	for (j = 0; j < n; j++) {
		const struct ccell *o = &oop[j], *p = &ip[j], *lo, *hi;
		int agrees;
		if (!(o->ok || o->noisy) || !(p->ok || p->noisy) || !(o->regime || p->regime))
			continue;
		lo = o->bw < p->bw ? o : p;
		hi = lo == o ? p : o;
		if (!(lo->bw < HR_CURVE_GAP * hi->bw))
			continue;
		if (o->noisy || p->noisy) {
			if (!s->nnoisy++)
				hr_buf_printf(&s->noisy, "an out-of-place/in-place gap at %s on noisy cells (CV %.2f)",
					      hr_fmt_bytes(o->bytes, s1, sizeof(s1)), o->noisy ? o->cv : p->cv);
			continue;
		}
		if (!is_gap(lo->bw, lo->e, hi->bw, hi->e))
			continue;
		/* the re-measurement of either cell replaces it */
		agrees = 1;
		if (lo->confirm != HR_CONFIRM_NONE || hi->confirm != HR_CONFIRM_NONE) {
			double l2 = lo->confirm != HR_CONFIRM_NONE ? lo->cbw : lo->bw;
			double e2 = lo->confirm != HR_CONFIRM_NONE ? lo->ce : lo->e;
			double h2 = hi->confirm != HR_CONFIRM_NONE ? hi->cbw : hi->bw;
			double f2 = hi->confirm != HR_CONFIRM_NONE ? hi->ce : hi->e;
			agrees = l2 < h2 ? is_gap(l2, e2, h2, f2) : is_gap(h2, f2, l2, e2);
		}
		cfind_add(&s->gap, lo->confirm != HR_CONFIRM_NONE || hi->confirm != HR_CONFIRM_NONE ? HR_CONFIRM_AGREED
													: HR_CONFIRM_NONE,
			  agrees, "%s out-of-place %.2f, in-place %.2f GB/s (%.0f%%)",
			  hr_fmt_bytes(o->bytes, s1, sizeof(s1)), o->bw, p->bw, 100 * lo->bw / hi->bw);
	}
}

/* The shape findings of group @i (@g) as its reasons; a finding on noisy
 * cells leaves its shape not judged. */
static void curve_report(struct an *a, size_t i, const struct hr_group *g, const struct cshape *s)
{
	char crit[200];

	snprintf(crit, sizeof(crit), "a size below both neighbours beyond their measured spread and below %.0f%% of their geometric mean, past the latency floor",
		 100 * HR_CURVE_DIP);
	cfind_report(a, g, "curve_dip", CURVE_ACTION, &s->dip, s->dip.n > 1 ? "busbw dips at" : "busbw dip at", crit);
	snprintf(crit, sizeof(crit), "one below %.0f%% of the other beyond their spread", 100 * HR_CURVE_GAP);
	cfind_report(a, g, "curve_gap", "out-of-place and in-place differ in buffer handling only: " CURVE_ACTION,
		     &s->gap, "out-of-place and in-place busbw differ at", crit);
	snprintf(crit, sizeof(crit), "a rise under %.0f%% over at least %.0fx in size, past the latency floor, from below %.0f%% of the plateau",
		 100 * (HR_CURVE_FLAT - 1), HR_CURVE_SPAN, 100 * HR_CURVE_MID);
	cfind_report(a, g, "curve_collapse", CURVE_ACTION, &s->col, "mid-range collapse:", crit);
	if (s->alt.s)
		curve_add(a, g, HR_INFO, "curve_alternation",
			  "a regular alternation between neighbouring sizes comes from the protocol or algorithm NCCL (or MPI) chooses per size, not from the hardware: compare with NCCL_PROTO / NCCL_ALGO pinned if it matters",
			  s->alt.s);
	if (s->noisy.s) {
		char t[600];
		a->curve[i] = 2;
		snprintf(a->curve_why[i], sizeof(a->curve_why[i]), "%s", s->noisy.s);
		snprintf(t, sizeof(t), "curve shape not judged: noisy measurement (%s)", s->noisy.s);
		curve_add(a, g, HR_INFO, "curve_not_judged", "re-run on an idle node", t);
	}
}

/* The curve shape of group @i: its rows' cells per half, the rules, the
 * reasons. -1 when out of memory. */
static int curve_group(struct an *a, size_t i)
{
	const struct hr_fleet *f = a->f;
	const struct hr_group *g = &f->groups[i];
	struct cshape s = { 0 };
	struct ccell *c[2] = { NULL, NULL };
	struct hr_quality hq;
	size_t f0, n = curve_rows(g, &f0), alt_lo, alt_hi;
	int h;

	if (!n || (group_inst(a, i) && group_inst(a, i)->superseded_by))
		return 0; /* an earlier sweep's shape is history too */
	hr_quality_init(&hq);
	if (a->grp_run[i] >= 0)
		hr_quality_host(&hq, &f->runs[a->grp_run[i]].cond);
	if (hq.noisy) {
		a->curve[i] = 2;
		snprintf(a->curve_why[i], sizeof(a->curve_why[i]), "%s", hq.why);
		return 0;
	}
	c[0] = calloc(n, sizeof(*c[0]));
	c[1] = calloc(n, sizeof(*c[1]));
	if (!c[0] || !c[1]) {
		free(c[0]);
		free(c[1]);
		return -1;
	}
	curve_cells(g, f0, n, 0, c[0]);
	curve_cells(g, f0, n, 1, c[1]);
	a->curve[i] = 1;
	for (h = 0; h < 2; h++) {
		const char *half = h ? "in-place" : "out-of-place";
		curve_alternation(c[h], n, half, &s, &alt_lo, &alt_hi);
		curve_dips(c[h], n, half, alt_lo, alt_hi, &s);
		curve_collapse(c[h], n, half, &s);
	}
	curve_gaps(c[0], c[1], n, &s);
	curve_report(a, i, g, &s);
	cfind_release(&s.dip);
	cfind_release(&s.gap);
	cfind_release(&s.col);
	hr_buf_release(&s.alt);
	hr_buf_release(&s.noisy);
	free(c[0]);
	free(c[1]);
	return 0;
}

/*
 * Curve shape of every latest sweep with rows (docs/health_report.md,
 * "Curve shape"), per half (out-of-place, in-place), on the busbw at the
 * median per-call period where recorded, rows of size 0 dropped: a dip (a
 * size below both neighbours beyond the cells' measured spread and below
 * HR_CURVE_DIP x their geometric mean), an out-of-place / in-place gap
 * (one below HR_CURVE_GAP x the other beyond their spread), a mid-range
 * collapse (from a size past the latency floor below HR_CURVE_MID x the
 * plateau, busbw rises by less than HR_CURVE_FLAT over at least
 * HR_CURVE_SPAN x in size), and a regular alternation (busbw up and down by
 * HR_CURVE_ALT or more over at least 5 neighbouring sizes, named as such,
 * not as dips). A dip or gap is WARN only when the cell's re-measurement
 * (allreduce_bw's "confirm") agrees, or without one ("not confirmed");
 * "did not reproduce" (info) otherwise. A finding on a noisy cell is not
 * judged; a sweep on a busy host is not judged.
 */
static void curve_reasons(struct an *a)
{
	size_t i;

	for (i = 0; i < a->f->ngroups; i++)
		if (curve_group(a, i)) {
			a->oom = 1;
			return;
		}
}

/* ------------------------------------------------------------ profile */

/* Was the value judged by any rule: an expectation, enough like values in
 * the fleet, or (devices) enough like devices on its node? */
static int inst_judged(const struct an *a, const struct inst *p)
{
	if (p->superseded_by || p->noisy)
		return 0;
	return !isnan(p->expected) || p->fleet_n >= a->th->min_fleet ||
	       (p->metric >= 0 && p->node_n >= a->th->min_fleet) || p->level_abs > HR_INFO ||
	       p->hist_n >= 3;
}

/* Why no rule could judge it (@buf, "" when judged). */
static const char *inst_not_judged(const struct an *a, const struct inst *p, char *buf, size_t n)
{
	buf[0] = '\0';
	if (p->superseded_by)
		snprintf(buf, n, "not judged: an earlier run; the latest in the inputs is %s (this value is its history)",
			 p->superseded_by);
	else if (p->noisy)
		snprintf(buf, n, "not judged: noisy measurement (%s); re-run on an idle node", p->noisy_why);
	else if (!inst_judged(a, p))
		snprintf(buf, n, "not judged: %s, only %d like value%s in the inputs (a fleet comparison needs %d) and too little history of its own (the history rule needs 3 earlier sweeps)",
			 p->why[0] ? p->why : "no expectation", p->fleet_n, p->fleet_n == 1 ? "" : "s",
			 a->th->min_fleet);
	return buf;
}

/* What the value was judged against, short: "expected 370 GB/s; fleet
 * median 365 GB/s of 10". */
static const char *inst_against(const struct an *a, const struct inst *p, char *buf, size_t n)
{
	char v1[48], v2[48];
	int flops = p->metric > 0;
	size_t l;
	buf[0] = '\0';
	if (!inst_judged(a, p))
		return inst_not_judged(a, p, buf, n);
	if (!isnan(p->expected))
		snprintf(buf, n, "expected %s%s%s%s", fmt_val(p->expected, flops, v1, sizeof(v1)),
			 p->tag[0] ? " (" : "", p->tag, p->tag[0] ? ")" : "");
	l = strlen(buf);
	if (p->fleet_n >= a->th->min_fleet && l < n)
		snprintf(buf + l, n - l, "%sfleet median %s of %d", l ? ", " : "",
			 fmt_val(p->fleet_median, flops, v2, sizeof(v2)), p->fleet_n);
	l = strlen(buf);
	if (p->hist_n >= 3 && l < n)
		snprintf(buf + l, n - l, "%sits own %d earlier sweeps", l ? ", " : "", p->hist_n);
	l = strlen(buf);
	if (p->metric >= 0 && p->node_n >= a->th->min_fleet && l < n)
		snprintf(buf + l, n - l, "%snode median %s", l ? ", " : "",
			 fmt_val(p->node_median, flops, v2, sizeof(v2)));
	return buf;
}

static json_t *inst_json(const struct an *a, const struct inst *p)
{
	json_t *o = json_object();
	char mk[48], nj[700];
	if (p->metric >= 0) {
		json_object_set_new(o, "metric", json_string(metric_key(p->metric, mk, sizeof(mk))));
		json_object_set_new(o, "unit", json_string(p->metric == 0 ? "GB/s" : "GFLOP/s"));
	}
	json_object_set_new(o, "value", jnum(p->value));
	json_object_set_new(o, "datasheet", jnum(p->datasheet));
	json_object_set_new(o, "expected", jnum(p->expected));
	json_object_set_new(o, "pct_of_datasheet",
			    jnum(p->datasheet > 0 ? 100 * p->value / p->datasheet : NAN));
	json_object_set_new(o, "pct_of_expected",
			    jnum(p->expected > 0 ? 100 * p->value / p->expected : NAN));
	json_object_set_new(o, "fleet_n", json_integer(p->fleet_n));
	json_object_set_new(o, "fleet_median", jnum(p->fleet_median));
	json_object_set_new(o, "pct_of_fleet_median", jnum(p->pct_fleet));
	json_object_set_new(o, "z", jnum(p->z));
	json_object_set_new(o, "node_median", jnum(p->node_median));
	json_object_set_new(o, "pct_of_node_median", jnum(p->pct_node));
	json_object_set_new(o, "like_for_like", json_boolean(p->like));
	json_object_set_new(o, "level", json_string(hr_level_name(p->level)));
	json_object_set_new(o, "history_n", json_integer(p->hist_n));
	json_object_set_new(o, "superseded_by", p->superseded_by ? json_string(p->superseded_by) : json_null());
	json_object_set_new(o, "judged", json_boolean(inst_judged(a, p)));
	json_object_set_new(o, "quality", json_string(p->noisy ? "noisy" : p->quality_known ? "clean" : "unknown"));
	json_object_set_new(o, "noise_cv", jnum(p->noise));
	json_object_set_new(o, "noisy_why", p->noisy ? json_string(p->noisy_why) : json_null());
	json_object_set_new(o, "comparisons", json_integer(p->m));
	json_object_set_new(o, "spread_rel", jnum(p->s_rel));
	json_object_set_new(o, "cut_off", jnum(p->cut));
	json_object_set_new(o, "peer_median", jnum(p->peer_median));
	json_object_set_new(o, "peers", json_integer(p->peer_n));
	json_object_set_new(o, "z_peers", jnum(p->z_node));
	json_object_set_new(o, "cut_off_peers", jnum(p->cut_node));
	json_object_set_new(o, "ratio_with_spread", jnum(p->ratio_allow));
	json_object_set_new(o, "confirmed", p->confirm == HR_CONFIRM_AGREED ? json_true() :
				   p->confirm == HR_CONFIRM_DISAGREED ? json_false() : json_null());
	json_object_set_new(o, "fail_confirmed", json_boolean(p->confirmed_fail));
	json_object_set_new(o, "expectation_basis", p->basis[0] ? json_string(p->basis) : json_null());
	json_object_set_new(o, "judged_against", json_string(inst_against(a, p, nj, sizeof(nj))));
	json_object_set_new(o, "not_judged_reason",
			    inst_judged(a, p) ? json_null() : json_string(inst_not_judged(a, p, nj, sizeof(nj))));
	return o;
}

static json_t *reason_json(const struct reason *r)
{
	json_t *o = json_object();
	json_object_set_new(o, "level", json_string(hr_level_name(r->level)));
	json_object_set_new(o, "code", json_string(r->code));
	json_object_set_new(o, "subject", json_string(r->subject));
	json_object_set_new(o, "text", json_string(r->text ? r->text : ""));
	json_object_set_new(o, "action", jstr_or_null(r->action));
	json_object_set_new(o, "source", jstr_or_null(r->source));
	json_object_set_new(o, "drain", json_boolean(r->drain));
	return o;
}

static int cmp_reason(const void *x, const void *y)
{
	const struct reason *a = x, *b = y;
	if (a->level != b->level)
		return b->level - a->level;
	return strcmp(a->code, b->code);
}

static json_t *device_json(const struct an *a, size_t i)
{
	const struct hr_device *d = &a->f->devices[i];
	json_t *o = json_object(), *m = json_array(), *pts = json_array();
	size_t j;
	json_object_set_new(o, "device", json_string(d->device));
	json_object_set_new(o, "kind", json_string(d->kind));
	json_object_set_new(o, "name", jstr_or_null(d->name));
	json_object_set_new(o, "sku", jstr_or_null(d->sku));
	json_object_set_new(o, "pci_bus_id", jstr_or_null(d->pci_bus_id));
	json_object_set_new(o, "status", json_string(d->status));
	json_object_set_new(o, "reason", jstr_or_null(d->reason));
	json_object_set_new(o, "throttled", json_boolean(d->throttled));
	json_object_set_new(o, "throttle_reasons", jstr_or_null(d->throttle_reasons));
	json_object_set_new(o, "clocks", jstr_or_null(d->clocks));
	json_object_set_new(o, "source", json_string(d->source));
	for (j = a->dev_first[i]; j < a->dev_first[i] + a->dev_n[i]; j++)
		if (a->di[j].subject == (int)i)
			json_array_append_new(m, inst_json(a, &a->di[j]));
	json_object_set_new(o, "metrics", m);
	for (j = 0; j < d->npoints; j++) {
		const struct hr_point *p = &d->points[j];
		json_t *q = json_object();
		json_object_set_new(q, "kernel", json_string(p->kernel));
		json_object_set_new(q, "family", json_string(p->family));
		json_object_set_new(q, "dtype", json_string(p->dtype));
		json_object_set_new(q, "ai_flop_per_byte", jnum(p->ai));
		json_object_set_new(q, "gflops", jnum(p->gflops));
		json_object_set_new(q, "gbps", jnum(p->gbps));
		json_object_set_new(q, "throttled", json_boolean(p->throttled));
		json_array_append_new(pts, q);
	}
	json_object_set_new(o, "points", pts);
	return o;
}

static json_t *group_json(const struct an *a, size_t i)
{
	const struct hr_group *g = &a->f->groups[i];
	const struct inst *p = group_inst(a, i);
	json_t *o = json_object(), *nodes = json_array(), *rows = json_array();
	size_t j;
	int k;
	json_object_set_new(o, "name", json_string(g->name));
	json_object_set_new(o, "kind", json_string(hr_group_kind_name(g->kind)));
	json_object_set_new(o, "collective", json_string(g->collective));
	json_object_set_new(o, "collective_from", jstr_or_null(g->collective_from));
	json_object_set_new(o, "algo", json_string(g->algo));
	json_object_set_new(o, "backend", json_string(g->backend));
	json_object_set_new(o, "nranks", json_integer(g->nranks));
	for (k = 0; k < g->nnodes; k++)
		json_array_append_new(nodes, json_string(a->f->nodes[g->nodes[k]].name));
	json_object_set_new(o, "nodes", nodes);
	json_object_set_new(o, "gpu_name", jstr_or_null(g->gpu_name));
	json_object_set_new(o, "source", json_string(g->source));
	json_object_set_new(o, "complete", json_boolean(g->complete));
	json_object_set_new(o, "failure", jstr_or_null(g->failure));
	json_object_set_new(o, "wrong_total", jcount(g->wrong_total));
	json_object_set_new(o, "large_msg_bytes", jcount(g->large_bytes));
	json_object_set_new(o, "large_msg_busbw_gbps", jnum(g->large_busbw_gbps));
	json_object_set_new(o, "avg_busbw_gbps", jnum(g->avg_busbw_gbps));
	json_object_set_new(o, "reported_avg_busbw_gbps", jnum(g->reported_avg_gbps));
	json_object_set_new(o, "busbw_is_algbw", json_boolean(g->busbw_is_algbw));
	json_object_set_new(o, "comparison", p ? inst_json(a, p) : json_null());
	if (p)
		json_object_set_new(o, "class", json_string(a->c[p->cls].label));
	for (j = 0; j < g->nrows; j++) {
		json_t *r = json_object();
		json_object_set_new(r, "bytes", jcount(g->rows[j].bytes));
		json_object_set_new(r, "busbw_oop_gbps", jnum(g->rows[j].busbw_oop_gbps));
		json_object_set_new(r, "busbw_ip_gbps", jnum(g->rows[j].busbw_ip_gbps));
		json_object_set_new(r, "wrong", jcount(g->rows[j].wrong));
		json_array_append_new(rows, r);
	}
	json_object_set_new(o, "rows", rows);
	return o;
}

static json_t *loader_json(const struct hr_loader *l)
{
	json_t *o = json_object(), *cfgs = json_array(), *rec = json_object();
	size_t i;
	json_object_set_new(o, "verdict", jstr_or_null(l->verdict));
	json_object_set_new(o, "mask_collapsed", json_boolean(l->mask_collapsed));
	json_object_set_new(o, "source", json_string(l->source));
	for (i = 0; i < l->ncfgs; i++) {
		const struct hr_loader_cfg *c = &l->cfgs[i];
		json_t *x = json_object();
		json_object_set_new(x, "name", json_string(c->name));
		json_object_set_new(x, "placement", json_string(c->placement));
		json_object_set_new(x, "workers", c->workers == INT_MIN ? json_null() : json_integer(c->workers));
		json_object_set_new(x, "lateness_p50_us", jnum(c->lateness_p50_us));
		json_object_set_new(x, "lateness_p99_us", jnum(c->lateness_p99_us));
		json_object_set_new(x, "lateness_max_us", jnum(c->lateness_max_us));
		json_object_set_new(x, "input_wait_frac", jnum(c->input_wait_frac));
		json_object_set_new(x, "accel_util", jnum(c->accel_util));
		json_object_set_new(x, "verdict", jstr_or_null(c->verdict));
		json_object_set_new(x, "reasons", jstr_or_null(c->reasons));
		json_array_append_new(cfgs, x);
	}
	json_object_set_new(o, "configs", cfgs);
	json_object_set_new(rec, "placement", jstr_or_null(l->rec_placement));
	json_object_set_new(rec, "workers", l->rec_placement ? json_integer(l->rec_workers) : json_null());
	json_object_set_new(rec, "numactl", jstr_or_null(l->rec_numactl));
	json_object_set_new(rec, "hwloc_bind", jstr_or_null(l->rec_hwloc_bind));
	json_object_set_new(rec, "slurm", jstr_or_null(l->rec_slurm));
	json_object_set_new(o, "recommendation", rec);
	return o;
}

struct node_order {
	int node, level;
	const char *name;
};

static int cmp_node(const void *x, const void *y)
{
	const struct node_order *a = x, *b = y;
	if (a->level != b->level)
		return b->level - a->level;
	return strcmp(a->name, b->name);
}

/* At most this many values of a distribution that are not outliers are
 * kept in a bounded profile (evenly spaced ranks, the first and last
 * included): as many as report.html's distribution plot draws. */
#define HR_DIST_KEEP 1000

struct kept {
	size_t inst, rank; /* instance index; rank 1.. among the class's finite values */
};

static const struct inst *keep_base;

static int cmp_inst_value(const void *x, const void *y)
{
	size_t i = *(const size_t *)x, j = *(const size_t *)y;
	double a = keep_base[i].value, b = keep_base[j].value;
	if (a != b)
		return (a > b) - (a < b);
	return (i > j) - (i < j);
}

static int cmp_kept(const void *x, const void *y)
{
	size_t i = ((const struct kept *)x)->inst, j = ((const struct kept *)y)->inst;
	return (i > j) - (i < j);
}

/* The values of class @c that a bounded distribution keeps, in instance
 * order, each with its rank among the finite values sorted (ties by
 * instance): the outliers and every step-th rank, the last included, as
 * the plot draws them (hr_plot.c). NULL when out of memory (then every
 * value is kept). */
static struct kept *dist_keep(const struct an *a, const struct inst *v, size_t n, int c, size_t *nkept)
{
	size_t *idx = malloc((n ? n : 1) * sizeof(*idx)), m = 0, i, step, k = 0;
	struct kept *out;
	(void)a;
	if (!idx)
		return NULL;
	for (i = 0; i < n; i++)
		if (v[i].cls == c && !v[i].superseded_by && isfinite(v[i].value))
			idx[m++] = i;
	keep_base = v;
	qsort(idx, m, sizeof(*idx), cmp_inst_value);
	out = malloc((m ? m : 1) * sizeof(*out));
	if (!out) {
		free(idx);
		return NULL;
	}
	step = m > HR_DIST_KEEP ? (m + HR_DIST_KEEP - 1) / HR_DIST_KEEP : 1;
	for (i = 0; i < m; i++)
		if (v[idx[i]].level >= HR_WARN || i % step == 0 || i == m - 1) {
			out[k].inst = idx[i];
			out[k++].rank = i + 1;
		}
	qsort(out, k, sizeof(*out), cmp_kept);
	free(idx);
	*nkept = k;
	return out;
}

/* With @bounded, a class of more than HR_DIST_KEEP values keeps its
 * outliers (warn, fail) and HR_DIST_KEEP evenly spaced ranks of the others,
 * each with its rank (1 = lowest) and "values_kept" saying so. */
static json_t *distributions_json(const struct an *a, int bounded)
{
	json_t *arr = json_array();
	size_t c, i;
	for (c = 0; c < a->nc; c++) {
		const struct cls *k = &a->c[c];
		int dev = !strncmp(k->key, "device|", 7);
		const struct inst *v = dev ? a->di : a->gi;
		size_t n = dev ? a->ndi : a->ngi;
		json_t *o, *vals;
		if (k->n < 2)
			continue;
		o = json_object();
		vals = json_array();
		json_object_set_new(o, "metric", json_string(k->label));
		json_object_set_new(o, "class", json_string(k->key));
		json_object_set_new(o, "unit", json_string(k->unit));
		json_object_set_new(o, "n", json_integer((json_int_t)k->n));
		json_object_set_new(o, "median", jnum(k->median));
		json_object_set_new(o, "mad", jnum(k->mad));
		struct kept *kept = NULL;
		size_t nkept = 0, q = 0;
		if (bounded && k->n > HR_DIST_KEEP)
			kept = dist_keep(a, v, n, (int)c, &nkept);
		if (kept)
			json_object_set_new(o, "values_kept",
					    json_string("outliers (warn, fail) and evenly spaced ranks of the others, each with its rank (--detail all keeps every value)"));
		for (i = 0; i < n; i++) {
			const struct inst *p = &v[i];
			json_t *x;
			char subj[256];
			size_t rank = 0;
			if (p->cls != (int)c || p->superseded_by)
				continue;
			if (kept) {
				if (q >= nkept || kept[q].inst != i)
					continue;
				rank = kept[q++].rank;
			}
			if (dev)
				snprintf(subj, sizeof(subj), "%s/%s", a->f->nodes[p->node].name,
					 a->f->devices[p->subject].device);
			else
				snprintf(subj, sizeof(subj), "%s", a->f->groups[p->subject].name);
			x = json_object();
			json_object_set_new(x, "subject", json_string(subj));
			json_object_set_new(x, "value", jnum(p->value));
			json_object_set_new(x, "z", jnum(p->z));
			json_object_set_new(x, "level", json_string(hr_level_name(p->level)));
			if (kept)
				json_object_set_new(x, "rank", json_integer((json_int_t)rank));
			json_array_append_new(vals, x);
		}
		free(kept);
		json_object_set_new(o, "values", vals);
		json_array_append_new(arr, o);
	}
	return arr;
}

static json_t *inputs_json(const struct hr_fleet *f, size_t input_files)
{
	json_t *o = json_object(), *arr = json_array();
	size_t i;
	json_object_set_new(o, "files", json_integer((json_int_t)input_files));
	json_object_set_new(o, "files_read", json_integer((json_int_t)f->files_read));
	json_object_set_new(o, "files_ignored", json_integer((json_int_t)f->files_ignored));
	json_object_set_new(o, "skipped", json_integer((json_int_t)hr_issues_count(&f->issues, HR_ISSUE_SKIPPED)));
	json_object_set_new(o, "truncated", json_integer((json_int_t)hr_issues_count(&f->issues, HR_ISSUE_TRUNCATED)));
	json_object_set_new(o, "notes", json_integer((json_int_t)hr_issues_count(&f->issues, HR_ISSUE_NOTE)));
	for (i = 0; i < f->issues.n; i++) {
		const struct hr_issue *is = &f->issues.v[i];
		json_t *x = json_object();
		json_object_set_new(x, "path", json_string(is->path));
		json_object_set_new(x, "line", is->line ? json_integer(is->line) : json_null());
		json_object_set_new(x, "column", is->column ? json_integer(is->column) : json_null());
		json_object_set_new(x, "kind", json_string(hr_issue_kind_name(is->kind)));
		json_object_set_new(x, "message", json_string(is->msg));
		json_array_append_new(arr, x);
	}
	json_object_set_new(o, "issues", arr);
	return o;
}

/* The node's checks: how many were judged, and its fabric checks. The
 * performance checks are the device roofs, the fabric's busbw and curve
 * shape, the loader and the checkpoint speed against its peers; the
 * checkpoint read-back (a correctness check) is a check but not one of
 * them: a node is PASS only when one of its performance checks was judged
 * (node_verdict()). */
struct node_checks {
	int judged, not_judged, fab, fab_judged;
	int perf_judged, perf_not_judged; /* of judged, not_judged: the performance checks */
	int noisy;                 /* of the not judged: noisy measurements (all performance checks) */
	char noisy_why[300];       /* the first of them: what and why */
	char nj_why[700];          /* the first performance check not judged but not noisy: why */
	const struct inst *mem, *comp, *intra, *inter; /* the worst of each, NULL none */
};

/* Lower is worse: % of expectation, else % of the fleet median, else the value's rank. */
static double inst_score(const struct inst *p)
{
	if (!isnan(p->expected) && p->expected > 0)
		return p->value / p->expected;
	if (!isnan(p->fleet_median) && p->fleet_median > 0)
		return p->value / p->fleet_median;
	return 1e9;
}

static void pick_worst(const struct an *a, const struct inst **w, const struct inst *p)
{
	/* a node's headline device figures are its GPUs' when it has GPUs */
	if (*w && p->metric >= 0) {
		int gw = !strcmp(a->f->devices[(*w)->subject].kind, "gpu");
		int gp = !strcmp(a->f->devices[p->subject].kind, "gpu");
		if (gw != gp) {
			if (gp)
				*w = p;
			return;
		}
	}
	if (!*w || p->level > (*w)->level ||
	    (p->level == (*w)->level && inst_score(p) < inst_score(*w)))
		*w = p;
}

static void node_checks(const struct an *a, int n, struct node_checks *c)
{
	size_t i;
	memset(c, 0, sizeof(*c));
	long d, e;
	(void)i;
	/* the node's devices in index order, and each one's instances: di[] filtered by node */
	for (d = a->node_dev[n]; d >= 0; d = a->dev_next[d]) {
		size_t j;
		for (j = a->dev_first[d]; j < a->dev_first[d] + a->dev_n[d]; j++) {
			const struct inst *p = &a->di[j];
			if (p->node != n || p->superseded_by) /* an earlier run: history */
				continue;
			if (inst_judged(a, p)) {
				c->judged++;
				c->perf_judged++;
			} else {
				c->not_judged++;
				c->perf_not_judged++;
				if (!p->noisy && !c->nj_why[0]) {
					char mk[48], w[600];
					snprintf(c->nj_why, sizeof(c->nj_why), "%s %s %s", a->f->devices[d].device,
						 metric_label(p->metric, mk, sizeof(mk)), inst_not_judged(a, p, w, sizeof(w)));
				}
			}
			if (p->noisy) {
				char mk[48];
				if (!c->noisy++)
					snprintf(c->noisy_why, sizeof(c->noisy_why), "%s %s: %s", a->f->devices[d].device,
						 metric_label(p->metric, mk, sizeof(mk)), p->noisy_why);
			}
			pick_worst(a, p->metric == 0 ? &c->mem : &c->comp, p);
		}
	}
	/* the node's groups in index order (gi[] is in group order, one instance per group) */
	for (e = a->node_grp[n]; e >= 0; e = a->grp_next[e]) {
		const struct inst *p;
		if (a->grp_inst[a->grp_of[e]] < 0)
			continue;
		p = &a->gi[a->grp_inst[a->grp_of[e]]];
		if (p->superseded_by)
			continue; /* an earlier sweep: history */
		c->fab++;
		if (inst_judged(a, p)) {
			c->judged++;
			c->perf_judged++;
			c->fab_judged++;
		} else {
			c->not_judged++;
			c->perf_not_judged++;
			if (!p->noisy && !c->nj_why[0]) {
				char w[600];
				snprintf(c->nj_why, sizeof(c->nj_why), "%s busbw %s", a->f->groups[p->subject].name,
					 inst_not_judged(a, p, w, sizeof(w)));
			}
		}
		if (p->noisy && !c->noisy++)
			snprintf(c->noisy_why, sizeof(c->noisy_why), "%s busbw: %s", a->f->groups[p->subject].name,
				 p->noisy_why);
		pick_worst(a, p->fabric == 1 ? &c->intra : &c->inter, p);
	}
	/* the curve shape of each of the node's latest sweeps the rules could look at */
	for (e = a->node_grp[n]; e >= 0; e = a->grp_next[e]) {
		const struct inst *p = group_inst(a, (size_t)a->grp_of[e]);
		if (p && p->superseded_by)
			continue;
		if (a->curve[a->grp_of[e]] == 1) {
			c->judged++;
			c->perf_judged++;
		} else if (a->curve[a->grp_of[e]] == 2) {
			c->not_judged++;
			c->perf_not_judged++;
			if (!c->noisy++)
				snprintf(c->noisy_why, sizeof(c->noisy_why), "%s curve shape: %s",
					 a->f->groups[a->grp_of[e]].name, a->curve_why[a->grp_of[e]]);
		}
	}
	if (a->loader[n] == 1) {
		c->judged++; /* on its figures */
		c->perf_judged++;
	} else if (a->loader[n] == 2) {
		c->not_judged++;
		c->perf_not_judged++;
		if (!c->noisy++)
			snprintf(c->noisy_why, sizeof(c->noisy_why), "loader: %s", a->loader_why[n]);
	}
	{
		char why[300] = "";
		int before = c->noisy;
		int sj = 0, snj = 0;
		hr_ckpt_node_checks(a->f, n, &c->judged, &c->not_judged, &c->noisy, &sj, &snj, why, sizeof(why));
		c->perf_judged += sj;
		c->perf_not_judged += snj;
		if (snj && !c->nj_why[0] && before == c->noisy)
			snprintf(c->nj_why, sizeof(c->nj_why), "checkpoint speed not judged (no peers on its mount)");
		if (!before && c->noisy)
			snprintf(c->noisy_why, sizeof(c->noisy_why), "%s", why);
	}
}

/* One headline figure of a node: value, what it was judged against. */
static json_t *headline_json(const struct an *a, const struct inst *p)
{
	json_t *o;
	char buf[700], mk[48];
	const char *subject;
	if (!p)
		return json_null();
	o = json_object();
	if (p->metric >= 0)
		subject = a->f->devices[p->subject].device;
	else
		subject = a->f->groups[p->subject].name;
	json_object_set_new(o, "subject", json_string(subject));
	if (p->metric >= 0)
		json_object_set_new(o, "metric", json_string(metric_key(p->metric, mk, sizeof(mk))));
	json_object_set_new(o, "value", jnum(p->value));
	json_object_set_new(o, "unit", json_string(p->metric > 0 ? "GFLOP/s" : "GB/s"));
	json_object_set_new(o, "expected", jnum(p->expected));
	json_object_set_new(o, "fleet_median", jnum(p->fleet_median));
	json_object_set_new(o, "judged", json_boolean(inst_judged(a, p)));
	json_object_set_new(o, "judged_against", json_string(inst_against(a, p, buf, sizeof(buf))));
	json_object_set_new(o, "level", json_string(hr_level_name(p->level)));
	return o;
}

static void not_judged_reasons(struct an *a)
{
	size_t n;
	for (n = 0; n < a->f->nnodes; n++) {
		struct node_checks c;
		char why[700];
		node_checks(a, (int)n, &c);
		if (c.noisy)
			add_reason(a, (int)n, HR_INFO, "measurement_noisy", "measurements", NULL, "re-run on an idle node",
				   "%d check%s not judged: noisy measurement (%s%s)", c.noisy, c.noisy == 1 ? "" : "s",
				   c.noisy_why, c.noisy > 1 ? "; and more" : "");
		if (c.fab && !c.fab_judged) {
			const struct inst *p = c.intra ? c.intra : c.inter;
			add_reason(a, (int)n, HR_INFO, "fabric_not_judged", "fabric", NULL,
				   "give an expectation (--expect: intra_node_busbw_gbps, inter_node_busbw_gbps), record the NICs (result files with host.inventory), or run like nodes together",
				   "no fabric check of this node could be judged (%d group%s): %s",
				   c.fab, c.fab == 1 ? "" : "s", inst_not_judged(a, p, why, sizeof(why)));
		}
	}
}

/* Hard faults make a node a drain candidate whatever else: wrong results,
 * a failed validation, NVLink down, uncorrectable ECC (and the row remaps
 * it leaves), a degraded PCIe link, an RDMA port down, a checkpoint that
 * does not read back. */
static void mark_hard_faults(struct an *a)
{
	static const char *const hard[] = { "wrong_results", "validation_failed", "nvlink_down", "ecc_uncorrected",
					    "row_remap", "pcie_link", "nic_port_down", "checkpoint_read_back", NULL };
	size_t i;
	int k;
	for (i = 0; i < a->nr; i++)
		for (k = 0; hard[k]; k++)
			if (a->r[i].level == HR_FAIL && !strcmp(a->r[i].code, hard[k]))
				a->r[i].drain = 1;
}

/* ------------------------------------------------------------ bounded detail */

/* A device of a node whose detail is bounded (--detail flagged, a PASS
 * node): what it is, the value of each metric by key, and its worst level
 * (its file is among the node's "inputs"). */
static json_t *device_bounded_json(const struct an *a, size_t i)
{
	const struct hr_device *d = &a->f->devices[i];
	json_t *o = json_object(), *v = json_object();
	size_t j;
	int level = HR_INFO;
	char mk[48];
	json_object_set_new(o, "device", json_string(d->device));
	json_object_set_new(o, "sku", jstr_or_null(d->sku));
	json_object_set_new(o, "status", json_string(d->status));
	for (j = a->dev_first[i]; j < a->dev_first[i] + a->dev_n[i]; j++)
		if (a->di[j].subject == (int)i) {
			json_object_set_new(v, metric_key(a->di[j].metric, mk, sizeof(mk)), jnum(a->di[j].value));
			if (a->di[j].level > level)
				level = a->di[j].level;
		}
	json_object_set_new(o, "values", v);
	json_object_set_new(o, "level", json_string(hr_level_name(level)));
	return o;
}

/* The loader of a bounded node: its verdict and recommendation, not each
 * configuration. */
static json_t *loader_bounded_json(const struct hr_loader *l)
{
	json_t *o = loader_json(l);
	json_object_del(o, "configs");
	return o;
}

/* Per node, the result files whose host section is the node (f->runs), as
 * a list: first[node], next[run]; -1 ends. Returns 0, or -1 out of memory. */
static int runs_by_node(const struct hr_fleet *f, long **first, long **next)
{
	size_t i;
	*first = malloc((f->nnodes ? f->nnodes : 1) * sizeof(**first));
	*next = malloc((f->nruns ? f->nruns : 1) * sizeof(**next));
	if (!*first || !*next)
		return -1;
	for (i = 0; i < f->nnodes; i++)
		(*first)[i] = -1;
	for (i = f->nruns; i-- > 0;) {
		int n = f->runs[i].node;
		(*next)[i] = -1;
		if (n < 0 || (size_t)n >= f->nnodes)
			continue;
		(*next)[i] = (*first)[n];
		(*first)[n] = (long)i;
	}
	return 0;
}

/* A bounded node's inputs: the paths of its result files, each once. */
static json_t *node_inputs_json(const struct hr_fleet *f, const long *first, const long *next, int n)
{
	json_t *arr = json_array();
	long e;
	for (e = first[n]; e >= 0; e = next[e]) {
		const char *path = f->runs[e].path;
		size_t k;
		const json_t *x;
		int seen = 0;
		if (!path)
			continue;
		json_array_foreach(arr, k, x)
			if (!strcmp(json_string_value(x), path))
				seen = 1;
		if (!seen)
			json_array_append_new(arr, json_string(path));
	}
	return arr;
}

/* What building the profile keeps across its nodes: each node's reasons
 * in order, its result files, and the order of the nodes. */
struct prof {
	long *rfirst, *rnext;        /* per node its reasons: a list through rnext */
	long *run_first, *run_next;  /* per node its result files (bounded detail only) */
	struct node_order *ord;      /* the nodes, worst first */
};

static int node_drains(const struct an *a, const struct prof *q, int n);
static void node_not_judged_why(const struct an *a, const struct prof *q, int n, const struct node_checks *nc,
				char *buf, size_t size);

static void prof_release(struct prof *q)
{
	free(q->rfirst);
	free(q->rnext);
	free(q->run_first);
	free(q->run_next);
	free(q->ord);
}

static int prof_init(struct an *a, const struct hr_analyze_opts *o, struct prof *q)
{
	const struct hr_fleet *f = a->f;
	size_t i, j;
	long e;

	memset(q, 0, sizeof(*q));
	mark_hard_faults(a);
	if (a->nr)
		qsort(a->r, a->nr, sizeof(*a->r), cmp_reason);
	q->ord = calloc(f->nnodes ? f->nnodes : 1, sizeof(*q->ord));
	q->rfirst = malloc((f->nnodes ? f->nnodes : 1) * sizeof(*q->rfirst));
	q->rnext = malloc((a->nr ? a->nr : 1) * sizeof(*q->rnext));
	if (!q->ord || !q->rfirst || !q->rnext || (!o->detail_all && runs_by_node(f, &q->run_first, &q->run_next)))
		return -1;
	for (i = 0; i < f->nnodes; i++)
		q->rfirst[i] = -1;
	for (j = a->nr; j-- > 0;) {
		int n = a->r[j].node;
		q->rnext[j] = -1;
		if (n < 0 || (size_t)n >= f->nnodes)
			continue;
		q->rnext[j] = q->rfirst[n];
		q->rfirst[n] = (long)j;
	}
	for (i = 0; i < f->nnodes; i++) {
		q->ord[i].node = (int)i;
		q->ord[i].name = f->nodes[i].name;
		for (e = q->rfirst[i]; e >= 0; e = q->rnext[e])
			if (a->r[e].level > q->ord[i].level)
				q->ord[i].level = a->r[e].level;
	}
	qsort(q->ord, f->nnodes, sizeof(*q->ord), cmp_node);
	return 0;
}

/* The profile's entry of the node at @i of q->ord (its verdict @verdict,
 * its checks @nc): in full (@full), else bounded (node_full()). */
static json_t *node_json(struct an *a, const struct prof *q, size_t i, const char *verdict,
			 const struct node_checks *nc, int full)
{
	const struct hr_fleet *f = a->f;
	int n = q->ord[i].node;
	const struct hr_node *nd = &f->nodes[n];
	const struct hr_loader *l = node_loader(f, n);
	json_t *x = json_object(), *rs = json_array(), *cfg = json_object(), *devs = json_array();
	json_t *bw = json_array(), *st = json_array(), *hl = json_object();
	size_t j;
	long e;
	int k;

	json_object_set_new(x, "drain_candidate", json_boolean(node_drains(a, q, n)));
	json_object_set_new(x, "name", json_string(nd->name));
	json_object_set_new(x, "verdict", json_string(verdict));
	if (!strcmp(verdict, "NOT JUDGED")) {
		char why[2048];
		node_not_judged_why(a, q, n, nc, why, sizeof(why));
		json_object_set_new(x, "not_judged_reason", json_string(why));
	} else {
		json_object_set_new(x, "not_judged_reason", json_null());
	}
	json_object_set_new(x, "checks_judged", json_integer(nc->judged));
	json_object_set_new(x, "performance_checks_judged", json_integer(nc->perf_judged));
	json_object_set_new(x, "checks_not_judged", json_integer(nc->not_judged));
	json_object_set_new(x, "checks_noisy", json_integer(nc->noisy));
	json_object_set_new(x, "fabric_checks", json_integer(nc->fab));
	json_object_set_new(x, "fabric_checks_judged", json_integer(nc->fab_judged));
	json_object_set_new(hl, "memory", headline_json(a, nc->mem));
	json_object_set_new(hl, "compute", headline_json(a, nc->comp));
	json_object_set_new(hl, "intra_node_busbw", headline_json(a, nc->intra));
	json_object_set_new(hl, "inter_node_busbw", headline_json(a, nc->inter));
	/* the loader as judged here (on its figures), not its own label */
	json_object_set_new(hl, "loader", !l ? json_null() : a->loader[n] == 2 ? json_string("not judged (host busy)") :
			    a->loader[n] == 1 && !l->mask_collapsed ? json_string(a->loader_lv[n] == HR_FAIL ? "fail" :
							     a->loader_lv[n] == HR_WARN ? "warn" : "pass")
					   : l->verdict ? json_string(l->verdict) : json_null());
	json_object_set_new(x, "headline", hl);
	json_object_set_new(x, "like_for_like", json_boolean(!a->drift[n]));
	for (e = q->rfirst[n]; e >= 0; e = q->rnext[e])
		json_array_append_new(rs, reason_json(&a->r[e]));
	json_object_set_new(x, "reasons", rs);
	for (k = 0; k < HR_CFG_NKEYS; k++)
		json_object_set_new(cfg, hr_cfg_key_name(k), jstr_or_null(nd->cfg[k]));
	json_object_set_new(cfg, "cpu_model", jstr_or_null(nd->cpu_model));
	json_object_set_new(cfg, "gpus", json_integer(nd->ngpus));
	json_object_set_new(x, "config", cfg);
	for (e = a->node_dev[n]; e >= 0; e = a->dev_next[e])
		json_array_append_new(devs, full ? device_json(a, (size_t)e) : device_bounded_json(a, (size_t)e));
	json_object_set_new(x, "devices", devs);
	for (e = a->node_grp[n]; e >= 0; e = a->grp_next[e]) {
		const struct hr_group *g = &f->groups[a->grp_of[e]];
		const struct inst *p = group_inst(a, (size_t)a->grp_of[e]);
		json_t *b = json_object();
		char jb[700];
		json_object_set_new(b, "group", json_string(g->name));
		json_object_set_new(b, "kind", json_string(hr_group_kind_name(g->kind)));
		json_object_set_new(b, "algo", json_string(g->algo));
		json_object_set_new(b, "collective", json_string(g->collective));
		json_object_set_new(b, "nranks", json_integer(g->nranks));
		json_object_set_new(b, "large_msg_busbw_gbps", jnum(g->large_busbw_gbps));
		json_object_set_new(b, "pct_of_fleet_median", jnum(p ? p->pct_fleet : NAN));
		json_object_set_new(b, "z", jnum(p ? p->z : NAN));
		json_object_set_new(b, "level", json_string(hr_level_name(p ? p->level : HR_INFO)));
		json_object_set_new(b, "judged", json_boolean(p && inst_judged(a, p)));
		json_object_set_new(b, "judged_against", p ? json_string(inst_against(a, p, jb, sizeof(jb))) :
				    json_string("not judged: no large-message busbw (no rows, or a scaling sub-group)"));
		json_array_append_new(bw, b);
	}
	json_object_set_new(x, "busbw", bw);
	for (j = 0; j < f->nstragglers; j++)
		if (f->stragglers[j].node == n) {
			json_t *s = json_object();
			json_object_set_new(s, "rank", json_integer(f->stragglers[j].rank));
			json_object_set_new(s, "slowest_fraction", jnum(f->stragglers[j].slowest_fraction));
			json_object_set_new(s, "excess_pct", jnum(f->stragglers[j].excess_pct));
			json_object_set_new(s, "source", json_string(f->stragglers[j].source));
			json_array_append_new(st, s);
		}
	json_object_set_new(x, "stragglers", st);
	json_object_set_new(x, "loader", !l ? json_null() : full ? loader_json(l) : loader_bounded_json(l));
	json_object_set_new(x, "checkpoint", hr_ckpt_node_json(f, n));
	json_object_set_new(x, "inventory", hr_inventory_profile(f, n));
	if (!full) {
		json_object_set_new(x, "detail", json_string("bounded"));
		json_object_set_new(x, "inputs", node_inputs_json(f, q->run_first, q->run_next, n));
	}
	return x;
}

/* Whether node @n is a drain candidate: a FAIL reason that drains (a hard
 * fault or a confirmed FAIL: mark_hard_faults(), confirm_fails()). */
static int node_drains(const struct an *a, const struct prof *q, int n)
{
	long e;
	int dr = 0;
	for (e = q->rfirst[n]; e >= 0; e = q->rnext[e])
		dr |= a->r[e].drain && a->r[e].level == HR_FAIL;
	return dr;
}

/* Whether the node at @i of q->ord (its checks @nc) is written in full: a
 * PASS node's detail is bounded unless --detail all. */
static int node_full(const struct hr_analyze_opts *o, const struct prof *q, size_t i, const struct node_checks *nc)
{
	return o->detail_all || q->ord[i].level > HR_INFO || nc->perf_judged == 0;
}

/* The verdict of the node at @i of q->ord, and its checks: NOT JUDGED
 * when no reason WARNs or FAILs and none of its performance checks was
 * judged (a checkpoint read-back alone does not make a PASS). */
static const char *node_verdict(struct an *a, const struct prof *q, size_t i, struct node_checks *nc)
{
	node_checks(a, q->ord[i].node, nc);
	if (q->ord[i].level == HR_INFO && nc->perf_judged == 0)
		return "NOT JUDGED";
	return hr_verdict_name(q->ord[i].level);
}

/* Why node @n (NOT JUDGED, its checks @nc) could not be judged, into @buf
 * of @size bytes: its tools that were unavailable (their own reasons), its
 * noisy checks, its checks without a reference; or that no performance
 * result of it was read. */
static void node_not_judged_why(const struct an *a, const struct prof *q, int n, const struct node_checks *nc,
				char *buf, size_t size)
{
	size_t l;
	long e;
	int parts = 0, others = nc->perf_not_judged - nc->noisy;
	snprintf(buf, size, "no performance check could be judged: ");
	for (e = q->rfirst[n]; e >= 0; e = q->rnext[e]) {
		long e2;
		if (strcmp(a->r[e].code, "unavailable"))
			continue;
		for (e2 = q->rfirst[n]; e2 != e; e2 = q->rnext[e2]) /* the same reason of another file: once */
			if (!strcmp(a->r[e2].code, "unavailable") && !strcmp(a->r[e2].text, a->r[e].text))
				break;
		if (e2 != e)
			continue;
		l = strlen(buf);
		snprintf(buf + l, size - l, "%s%s", parts++ ? "; " : "", a->r[e].text);
	}
	if (nc->noisy) {
		l = strlen(buf);
		snprintf(buf + l, size - l, "%s%d noisy (%s%s; re-run on an idle node)", parts++ ? "; " : "", nc->noisy,
			 nc->noisy_why, nc->noisy > 1 ? "; and more" : "");
	}
	if (others > 0) {
		l = strlen(buf);
		snprintf(buf + l, size - l, "%s%d without a reference to judge against (%s%s)", parts++ ? "; " : "",
			 others, nc->nj_why, others > 1 ? "; and more" : "");
	}
	if (!parts) {
		l = strlen(buf);
		snprintf(buf + l, size - l, "no result of roofline, allreduce_bw, nccl-tests, loader_contention or a checkpoint_io speed among the inputs%s",
			 nc->judged ? " (only correctness checks were judged: the checkpoint read-back)" : "");
	}
}

/* The profile, handed to @sink in three parts, one node at a time: no
 * more than one node's entry is held at once. Returns 0, CH_ERR_RUNTIME
 * out of memory, or the sink's error. */
static int build_profile(struct an *a, const struct hr_analyze_opts *o, json_t *drift,
			 const struct hr_profile_sink *sink)
{
	const struct hr_fleet *f = a->f;
	json_t *p = json_object(), *findings = json_array(), *groups, *t;
	json_t *summary = json_object(), *drain = json_array();
	struct prof q;
	char now[32];
	size_t i, j;
	int counts[3] = { 0, 0, 0 }, worst = HR_INFO, not_judged_nodes = 0, rc = 0;
	long checks_judged = 0, checks_not_judged = 0, checks_noisy = 0;

	if (!p || !findings || !summary || !drain || prof_init(a, o, &q)) {
		rc = CH_ERR_RUNTIME;
		goto out;
	}
	/* the summary first: every node's verdict and the fleet findings */
	for (i = 0; i < f->nnodes; i++) {
		struct node_checks nc;
		const char *v = node_verdict(a, &q, i, &nc);
		checks_judged += nc.judged;
		checks_not_judged += nc.not_judged;
		checks_noisy += nc.noisy;
		if (!strcmp(v, "NOT JUDGED"))
			not_judged_nodes++;
		else
			counts[q.ord[i].level]++;
		if (q.ord[i].level > worst)
			worst = q.ord[i].level;
		if (node_drains(a, &q, q.ord[i].node))
			json_array_append_new(drain, json_string(f->nodes[q.ord[i].node].name));
	}
	for (j = 0; j < a->nr; j++)
		if (a->r[j].node < 0) {
			json_array_append_new(findings, reason_json(&a->r[j]));
			if (a->r[j].level > worst)
				worst = a->r[j].level;
		}

	json_object_set_new(p, "schema", json_string(HR_PROFILE_SCHEMA));
	json_object_set_new(p, "schema_version", json_integer(HR_PROFILE_SCHEMA_VERSION));
	json_object_set_new(p, "tool", json_string("health_report"));
	json_object_set_new(p, "version", json_string(CH_VERSION));
	json_object_set_new(p, "git_rev", json_string(ch_git_rev()));
	json_object_set_new(p, "generated_utc",
			    json_string(o->generated_utc ? o->generated_utc : ch_utc_now(now, sizeof(now))));
	if (!o->detail_all)
		json_object_set_new(p, "detail", json_string("flagged"));
	json_object_set_new(summary, "nodes", json_integer((json_int_t)f->nnodes));
	json_object_set_new(summary, "pass", json_integer(counts[HR_INFO]));
	json_object_set_new(summary, "warn", json_integer(counts[HR_WARN]));
	json_object_set_new(summary, "fail", json_integer(counts[HR_FAIL]));
	json_object_set_new(summary, "not_judged", json_integer(not_judged_nodes));
	json_object_set_new(summary, "checks_judged", json_integer(checks_judged));
	json_object_set_new(summary, "checks_not_judged", json_integer(checks_not_judged));
	json_object_set_new(summary, "checks_noisy", json_integer(checks_noisy));
	json_object_set_new(summary, "findings", json_integer((json_int_t)json_array_size(findings)));
	/* no node judged (none at all, too) is not a PASS */
	json_object_set_new(summary, "verdict", json_string(worst == HR_INFO && !counts[HR_INFO] ?
							   "NOT JUDGED" : hr_verdict_name(worst)));
	json_object_set_new(summary, "drain_candidates", drain);
	drain = NULL;
	json_object_set_new(summary, "devices", json_integer((json_int_t)f->ndevices));
	json_object_set_new(summary, "groups", json_integer((json_int_t)f->ngroups));
	json_object_set_new(p, "exit_code", json_integer(worst == HR_FAIL ? CH_EXIT_CHECK : CH_EXIT_OK));
	json_object_set_new(p, "summary", summary);
	summary = NULL;
	json_object_set_new(p, "run_cost", hr_cost_profile(f, o->cost));
	json_object_set_new(p, "inputs", inputs_json(f, o->input_files));
	json_object_set_new(p, "expectations", hr_expect_profile(o->expect));
	json_object_set_new(p, "drift", drift);
	drift = NULL;
	if ((rc = sink->head(sink->ctx, p)))
		goto out;
	json_object_clear(p);

	for (i = 0; i < f->nnodes && !rc; i++) {
		struct node_checks nc;
		const char *v = node_verdict(a, &q, i, &nc);
		int full = node_full(o, &q, i, &nc);
		json_t *x = node_json(a, &q, i, v, &nc, full);
		/* a bounded node's full entry too, for the renderers, in a
		 * fleet of few PASS nodes (o->full_pass_max) */
		json_t *y = !full && (size_t)counts[HR_INFO] <= o->full_pass_max ? node_json(a, &q, i, v, &nc, 1) : NULL;
		if (!x || (!full && (size_t)counts[HR_INFO] <= o->full_pass_max && !y))
			rc = CH_ERR_RUNTIME;
		else
			rc = sink->node(sink->ctx, x, y);
		json_decref(x);
		json_decref(y);
	}
	if (rc)
		goto out;

	groups = json_array();
	for (i = 0; i < f->ngroups; i++)
		json_array_append_new(groups, group_json(a, i));
	json_object_set_new(p, "groups", groups);
	json_object_set_new(p, "findings", findings);
	findings = NULL;
	json_object_set_new(p, "distributions", distributions_json(a, !o->detail_all));
	json_object_set_new(p, "power_caps", hr_powercap_profile(f));
	t = p;
	rc = sink->tail(sink->ctx, t);
out:
	prof_release(&q);
	json_decref(p);
	json_decref(findings);
	json_decref(summary);
	json_decref(drain);
	json_decref(drift);
	return rc;
}

/* hr_analyze()'s sink: the parts put together into one object. */
static int collect_part(void *ctx, const json_t *part)
{
	json_t *p = ctx;
	return json_object_update(p, (json_t *)part) ? CH_ERR_RUNTIME : 0;
}

static int collect_node(void *ctx, const json_t *node, const json_t *full)
{
	(void)full;
	json_t *p = ctx, *nodes = json_object_get(p, "nodes");
	if (!nodes) {
		nodes = json_array();
		if (json_object_set_new(p, "nodes", nodes))
			return CH_ERR_RUNTIME;
	}
	return json_array_append(nodes, (json_t *)node) ? CH_ERR_RUNTIME : 0;
}

static int collect_head(void *ctx, const json_t *head)
{
	json_t *p = ctx;
	/* nodes after drift, as the stream has it */
	return collect_part(ctx, head) || json_object_set_new(p, "nodes", json_array()) ? CH_ERR_RUNTIME : 0;
}


/* Per node, its devices and its groups as lists in index order (so that a
 * node's checks need not scan every device and group of the fleet).
 * Returns 0, or -1 out of memory. */
static int node_index(struct an *a)
{
	const struct hr_fleet *f = a->f;
	size_t i, nent = 0, e = 0;
	int k;
	for (i = 0; i < f->ngroups; i++)
		nent += f->groups[i].nnodes > 0 ? (size_t)f->groups[i].nnodes : 0;
	a->node_dev = malloc((f->nnodes ? f->nnodes : 1) * sizeof(*a->node_dev));
	a->node_grp = malloc((f->nnodes ? f->nnodes : 1) * sizeof(*a->node_grp));
	a->dev_next = malloc((f->ndevices ? f->ndevices : 1) * sizeof(*a->dev_next));
	a->grp_next = malloc((nent ? nent : 1) * sizeof(*a->grp_next));
	a->grp_of = malloc((nent ? nent : 1) * sizeof(*a->grp_of));
	if (!a->node_dev || !a->node_grp || !a->dev_next || !a->grp_next || !a->grp_of)
		return -1;
	for (i = 0; i < f->nnodes; i++)
		a->node_dev[i] = a->node_grp[i] = -1;
	for (i = f->ndevices; i-- > 0;) {
		int n = f->devices[i].node;
		a->dev_next[i] = -1;
		if (n < 0 || (size_t)n >= f->nnodes)
			continue;
		a->dev_next[i] = a->node_dev[n];
		a->node_dev[n] = (long)i;
	}
	for (i = f->ngroups; i-- > 0;) {
		const struct hr_group *g = &f->groups[i];
		for (k = 0; k < g->nnodes; k++) {
			int n = g->nodes[k];
			if (n < 0 || (size_t)n >= f->nnodes)
				continue;
			if (a->node_grp[n] >= 0 && a->grp_of[a->node_grp[n]] == (long)i)
				continue; /* listed twice in the group */
			a->grp_of[e] = (long)i;
			a->grp_next[e] = a->node_grp[n];
			a->node_grp[n] = (long)e++;
		}
	}
	return 0;
}

/* a->dev_t, a->grp_t, a->dev_run and a->grp_run: each device's and group's
 * run and its start, through one map of result file -> run (start 0
 * unknown: nccl-tests text logs). */
static int run_times(struct an *a)
{
	const struct hr_fleet *f = a->f;
	json_t *m = json_object(), *hit;
	size_t i;
	a->dev_t = calloc(f->ndevices ? f->ndevices : 1, sizeof(*a->dev_t));
	a->grp_t = calloc(f->ngroups ? f->ngroups : 1, sizeof(*a->grp_t));
	a->dev_run = malloc((f->ndevices ? f->ndevices : 1) * sizeof(*a->dev_run));
	a->grp_run = malloc((f->ngroups ? f->ngroups : 1) * sizeof(*a->grp_run));
	a->m_node = calloc(f->nnodes ? f->nnodes : 1, sizeof(*a->m_node));
	if (!m || !a->dev_t || !a->grp_t || !a->dev_run || !a->grp_run || !a->m_node) {
		json_decref(m);
		return -1;
	}
	for (i = 0; i < f->nruns; i++)
		if (f->runs[i].path && !json_object_get(m, f->runs[i].path) &&
		    json_object_set_new(m, f->runs[i].path, json_integer((json_int_t)i))) {
			json_decref(m);
			return -1;
		}
	for (i = 0; i < f->ndevices; i++) {
		hit = json_object_get(m, f->devices[i].source);
		a->dev_run[i] = hit ? (long)json_integer_value(hit) : -1;
		a->dev_t[i] = hit ? f->runs[a->dev_run[i]].start : 0;
	}
	for (i = 0; i < f->ngroups; i++) {
		hit = json_object_get(m, f->groups[i].source);
		a->grp_run[i] = hit ? (long)json_integer_value(hit) : -1;
		a->grp_t[i] = hit ? f->runs[a->grp_run[i]].start : 0;
	}
	json_decref(m);
	return 0;
}

/* ------------------------------------------------------------ the rule table's passes */

static void pass_drift(struct an *a)
{
	a->drift_json = analyze_drift(a);
}

/* Not a rule: what the rules read, each device's and group's values against
 * their like values (fleet, node) and their own history. */
static void prepare(struct an *a)
{
	size_t i;
	device_instances(a);
	if (!a->oom) {
		/* device_instances() adds each device's instances together */
		for (i = a->ndi; i-- > 0;) {
			a->dev_first[a->di[i].subject] = i;
			a->dev_n[a->di[i].subject]++;
		}
	}
	group_instances(a);
	if (!a->oom) {
		compare(a, a->di, a->ndi);
		compare(a, a->gi, a->ngi);
	}
	if (!a->oom)
		judge_all(a);
	if (!a->oom)
		device_history(a);
}

static void pass_checkpoint(struct an *a)
{
	hr_ckpt_reasons(a->f, inventory_reason, a);
}

static void pass_inventory(struct an *a)
{
	hr_inventory_rules(a->f, inventory_reason, a);
}

static void pass_powercap(struct an *a)
{
	hr_powercap_rules(a->f, inventory_reason, a);
}

static void (*const passes[HR_NPASSES])(struct an *) = {
	[HR_PASS_DRIFT] = pass_drift,
	[HR_PASS_DEVICES] = device_reasons,
	[HR_PASS_GROUPS] = group_reasons,
	[HR_PASS_HISTORY] = history_reasons,
	[HR_PASS_STRAGGLERS] = straggler_reasons,
	[HR_PASS_LOADER] = loader_reasons,
	[HR_PASS_CHECKPOINT] = pass_checkpoint,
	[HR_PASS_RUNS] = run_reasons,
	[HR_PASS_INVENTORY] = pass_inventory,
	[HR_PASS_POWERCAP] = pass_powercap,
	[HR_PASS_CURVES] = curve_reasons,
	[HR_PASS_NOT_JUDGED] = not_judged_reasons,
};

/* The rule table (hr_rules.h), run: each row's pass once, in the order the
 * table first names it; after the drift pass the values are compared
 * (prepare()), and before the devices pass the FAILs are confirmed by the
 * re-measurements (confirm_fails()). */
static void run_rules(struct an *a)
{
	unsigned char done[HR_NPASSES] = { 0 };
	int prepared = 0, confirmed = 0;
	size_t i;
	for (i = 0; i < hr_nrules && !a->oom; i++) {
		enum hr_rule_pass k = hr_rules[i].pass;
		if ((unsigned)k >= HR_NPASSES || done[k])
			continue;
		if (k != HR_PASS_DRIFT && !prepared) {
			prepare(a);
			prepared = 1;
		}
		if (k == HR_PASS_DEVICES && !confirmed && !a->oom) {
			confirm_fails(a);
			confirmed = 1;
		}
		done[k] = 1;
		passes[k](a);
	}
}

int hr_analyze_stream(const struct hr_fleet *f, const struct hr_analyze_opts *o, const struct hr_profile_sink *sink)
{
	struct an a;
	json_t *drift;
	size_t i;
	int rc = CH_ERR_RUNTIME;

	memset(&a, 0, sizeof(a));
	a.f = f;
	a.e = o->expect;
	a.th = &o->expect->th;
	a.drift = calloc(f->nnodes ? f->nnodes : 1, sizeof(*a.drift));
	a.slow_pairs = calloc(f->nnodes ? f->nnodes : 1, sizeof(*a.slow_pairs));
	a.dev_first = calloc(f->ndevices ? f->ndevices : 1, sizeof(*a.dev_first));
	a.dev_n = calloc(f->ndevices ? f->ndevices : 1, sizeof(*a.dev_n));
	a.grp_inst = malloc((f->ngroups ? f->ngroups : 1) * sizeof(*a.grp_inst));
	a.curve = calloc(f->ngroups ? f->ngroups : 1, sizeof(*a.curve));
	a.loader = calloc(f->nnodes ? f->nnodes : 1, sizeof(*a.loader));
	a.loader_lv = calloc(f->nnodes ? f->nnodes : 1, sizeof(*a.loader_lv));
	a.loader_why = calloc(f->nnodes ? f->nnodes : 1, sizeof(*a.loader_why));
	a.curve_why = calloc(f->ngroups ? f->ngroups : 1, sizeof(*a.curve_why));
	if (!a.curve || !a.curve_why || !a.loader || !a.loader_lv || !a.loader_why || !a.drift || !a.slow_pairs || !a.dev_first || !a.dev_n || !a.grp_inst)
		goto out;
	for (i = 0; i < f->ngroups; i++)
		a.grp_inst[i] = -1;
	if (node_index(&a) || run_times(&a))
		goto out;
	run_rules(&a);
	drift = a.drift_json;
	a.drift_json = NULL;
	if (a.bad_code) {
		ch_error("internal: reason code '%s' has no row in the rule table (report/judge/hr_rules.c)",
			 a.bad_code);
		json_decref(drift);
		goto out;
	}
	if (a.oom) {
		json_decref(drift);
		goto out;
	}
	rc = build_profile(&a, o, drift, sink);
out:
	for (i = 0; i < a.nr; i++) {
		free(a.r[i].text);
		free(a.r[i].action);
		free(a.r[i].source);
	}
	free(a.r);
	free(a.di);
	free(a.gi);
	free(a.c);
	free(a.drift);
	free(a.slow_pairs);
	free(a.dev_first);
	free(a.dev_n);
	free(a.grp_inst);
	free(a.node_dev);
	free(a.dev_next);
	free(a.node_grp);
	free(a.grp_next);
	free(a.grp_of);
	free(a.dev_t);
	free(a.grp_t);
	free(a.dev_run);
	free(a.grp_run);
	free(a.m_node);
	free(a.curve);
	free(a.curve_why);
	free(a.loader);
	free(a.loader_lv);
	free(a.loader_why);
	json_decref(a.texts);
	return rc;
}

json_t *hr_analyze(const struct hr_fleet *f, const struct hr_analyze_opts *o)
{
	json_t *p = json_object();
	struct hr_profile_sink sink = { p, collect_head, collect_node, collect_part };
	if (!p)
		return NULL;
	if (hr_analyze_stream(f, o, &sink)) {
		json_decref(p);
		return NULL;
	}
	return p;
}
