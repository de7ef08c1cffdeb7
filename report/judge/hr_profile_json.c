/*
 * hr_profile_json.c - the profile's parts as JSON: a value's entry and
 * what it was judged against, a reason, a device, a group, a loader, the
 * distributions and the inputs (hr_judge.h).
 */
#include "report/judge/hr_judge.h"
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

/* Was the value judged by any rule: an expectation, enough like values in
 * the fleet, or (devices) enough like devices on its node? */
int hj_inst_judged(const struct an *a, const struct inst *p)
{
	if (p->sup || p->noisy)
		return 0;
	return !isnan(p->expected) || p->fleet_n >= a->th->min_fleet ||
	       (p->metric >= 0 && p->node_n >= a->th->min_fleet) || p->level_abs > HR_INFO ||
	       hj_hist(a, p)->hist_n >= 3;
}

/* Why no rule could judge it (@buf, "" when judged). */
const char *hj_inst_not_judged(const struct an *a, const struct inst *p, char *buf, size_t n)
{
	buf[0] = '\0';
	if (p->sup)
		snprintf(buf, n, "not judged: an earlier run; the latest in the inputs is %s (this value is its history)",
			 hj_superseded_by(a, p));
	else if (p->noisy)
		snprintf(buf, n, "not judged: noisy measurement (%s); re-run on an idle node", hj_text(a, p->noisy_why_id));
	else if (!hj_inst_judged(a, p))
		snprintf(buf, n, "not judged: %s, only %d like value%s in the inputs (a fleet comparison needs %d) and too little history of its own (the history rule needs 3 earlier sweeps)",
			 p->why_id ? hj_text(a, p->why_id) : "no expectation", p->fleet_n, p->fleet_n == 1 ? "" : "s",
			 a->th->min_fleet);
	return buf;
}

/* What the value was judged against, short: "expected 370 GB/s; fleet
 * median 365 GB/s of 10". */
const char *hj_inst_against(const struct an *a, const struct inst *p, char *buf, size_t n)
{
	char v1[48], v2[48];
	int flops = p->metric > 0;
	size_t l;
	buf[0] = '\0';
	if (!hj_inst_judged(a, p))
		return hj_inst_not_judged(a, p, buf, n);
	if (!isnan(p->expected))
		snprintf(buf, n, "expected %s%s%s%s", hj_fmt_val(p->expected, flops, v1, sizeof(v1)),
			 p->tag_id ? " (" : "", hj_text(a, p->tag_id), p->tag_id ? ")" : "");
	l = strlen(buf);
	if (p->fleet_n >= a->th->min_fleet && l < n)
		snprintf(buf + l, n - l, "%sfleet median %s of %d", l ? ", " : "",
			 hj_fmt_val(hj_fleet_median(a, p), flops, v2, sizeof(v2)), p->fleet_n);
	l = strlen(buf);
	if (hj_hist(a, p)->hist_n >= 3 && l < n)
		snprintf(buf + l, n - l, "%sits own %d earlier sweeps", l ? ", " : "", hj_hist(a, p)->hist_n);
	l = strlen(buf);
	if (p->metric >= 0 && p->node_n >= a->th->min_fleet && l < n)
		snprintf(buf + l, n - l, "%snode median %s", l ? ", " : "",
			 hj_fmt_val(p->node_median, flops, v2, sizeof(v2)));
	return buf;
}

static json_t *inst_json(const struct an *a, const struct inst *p)
{
	json_t *o = json_object();
	char mk[48], nj[700];
	double ds = hj_datasheet(a, p);
	if (p->metric >= 0) {
		json_object_set_new(o, "metric", json_string(hj_metric_key(p->metric, mk, sizeof(mk))));
		json_object_set_new(o, "unit", json_string(p->metric == 0 ? "GB/s" : "GFLOP/s"));
	}
	json_object_set_new(o, "value", hj_jnum(p->value));
	json_object_set_new(o, "datasheet", hj_jnum(ds));
	json_object_set_new(o, "expected", hj_jnum(p->expected));
	json_object_set_new(o, "pct_of_datasheet",
			    hj_jnum(ds > 0 ? 100 * p->value / ds : NAN));
	json_object_set_new(o, "pct_of_expected",
			    hj_jnum(p->expected > 0 ? 100 * p->value / p->expected : NAN));
	json_object_set_new(o, "fleet_n", json_integer(p->fleet_n));
	json_object_set_new(o, "fleet_median", hj_jnum(hj_fleet_median(a, p)));
	json_object_set_new(o, "pct_of_fleet_median", hj_jnum(hj_pct_fleet(a, p)));
	json_object_set_new(o, "z", hj_jnum(hj_z(a, p)));
	json_object_set_new(o, "node_median", hj_jnum(p->node_median));
	json_object_set_new(o, "pct_of_node_median", hj_jnum(hj_pct_node(p)));
	json_object_set_new(o, "like_for_like", json_boolean(p->like));
	json_object_set_new(o, "level", json_string(hr_level_name(p->level)));
	json_object_set_new(o, "history_n", json_integer(hj_hist(a, p)->hist_n));
	json_object_set_new(o, "superseded_by", p->sup ? json_string(hj_superseded_by(a, p)) : json_null());
	json_object_set_new(o, "judged", json_boolean(hj_inst_judged(a, p)));
	json_object_set_new(o, "quality", json_string(p->noisy ? "noisy" : p->quality_known ? "clean" : "unknown"));
	json_object_set_new(o, "noise_cv", hj_jnum(hj_noise(a, p)));
	json_object_set_new(o, "noisy_why", p->noisy ? json_string(hj_text(a, p->noisy_why_id)) : json_null());
	json_object_set_new(o, "comparisons", json_integer(hj_m(a, p)));
	json_object_set_new(o, "spread_rel", hj_jnum(p->s_rel));
	json_object_set_new(o, "cut_off", hj_jnum(hj_cut(a, p)));
	json_object_set_new(o, "cut_off_fail", hj_jnum(hj_cut_fail(a, p)));
	json_object_set_new(o, "peer_median", hj_jnum(p->peer_median));
	json_object_set_new(o, "peers", json_integer(p->peer_n));
	json_object_set_new(o, "z_peers", hj_jnum(hj_z_node(a, p)));
	json_object_set_new(o, "cut_off_peers", hj_jnum(hj_cut_node(a, p)));
	json_object_set_new(o, "cut_off_peers_fail", hj_jnum(hj_cut_node_fail(a, p)));
	json_object_set_new(o, "ratio_with_spread", hj_jnum(p->ratio_allow));
	json_object_set_new(o, "confirmed", p->confirm == HR_CONFIRM_AGREED ? json_true() :
				   p->confirm == HR_CONFIRM_DISAGREED ? json_false() : json_null());
	json_object_set_new(o, "fail_confirmed", json_boolean(p->confirmed_fail));
	json_object_set_new(o, "expectation_basis", p->basis_id ? json_string(hj_text(a, p->basis_id)) : json_null());
	json_object_set_new(o, "judged_against", json_string(hj_inst_against(a, p, nj, sizeof(nj))));
	json_object_set_new(o, "not_judged_reason",
			    hj_inst_judged(a, p) ? json_null() : json_string(hj_inst_not_judged(a, p, nj, sizeof(nj))));
	return o;
}

json_t *hj_reason_json(const struct reason *r)
{
	json_t *o = json_object();
	json_object_set_new(o, "level", json_string(hr_level_name(r->level)));
	json_object_set_new(o, "code", json_string(r->code));
	json_object_set_new(o, "subject", json_string(r->subject));
	json_object_set_new(o, "text", json_string(r->text ? r->text : ""));
	json_object_set_new(o, "action", hj_jstr_or_null(r->action));
	json_object_set_new(o, "source", hj_jstr_or_null(r->source));
	json_object_set_new(o, "drain", json_boolean(r->drain));
	return o;
}

int hj_cmp_reason(const void *x, const void *y)
{
	const struct reason *a = x, *b = y;
	if (a->level != b->level)
		return b->level - a->level;
	return strcmp(a->code, b->code);
}

json_t *hj_device_json(const struct an *a, size_t i)
{
	const struct hr_device *d = &a->f->devices[i];
	json_t *o = json_object(), *m = json_array(), *pts = json_array();
	size_t j;
	json_object_set_new(o, "device", json_string(d->device));
	json_object_set_new(o, "kind", json_string(d->kind));
	json_object_set_new(o, "name", hj_jstr_or_null(d->name));
	json_object_set_new(o, "sku", hj_jstr_or_null(d->sku));
	json_object_set_new(o, "pci_bus_id", hj_jstr_or_null(d->pci_bus_id));
	json_object_set_new(o, "status", json_string(d->status));
	json_object_set_new(o, "reason", hj_jstr_or_null(d->reason));
	json_object_set_new(o, "throttled", json_boolean(d->throttled));
	json_object_set_new(o, "throttle_reasons", hj_jstr_or_null(d->throttle_reasons));
	json_object_set_new(o, "clocks", hj_jstr_or_null(d->clocks));
	json_object_set_new(o, "source", json_string(d->source));
	for (j = a->dev_first[i]; j < a->dev_first[i] + a->dev_n[i]; j++)
		if (a->di[j].subject == (int)i)
			json_array_append_new(m, inst_json(a, &a->di[j]));
	json_object_set_new(o, "metrics", m);
	for (j = 0; j < d->npoints; j++) {
		const struct hr_point *p = &d->points[j];
		const struct hr_point_kind *pk = hr_fleet_kind_at(a->f, p->kind);
		json_t *q = json_object();
		json_object_set_new(q, "kernel", json_string(hr_fleet_text_at(a->f, pk->kernel)));
		json_object_set_new(q, "family", json_string(hr_fleet_text_at(a->f, pk->family)));
		json_object_set_new(q, "dtype", json_string(hr_fleet_text_at(a->f, pk->dtype)));
		json_object_set_new(q, "ai_flop_per_byte", hj_jnum(p->ai));
		json_object_set_new(q, "gflops", hj_jnum(p->gflops));
		json_object_set_new(q, "gbps", hj_jnum(p->gbps));
		json_object_set_new(q, "throttled", json_boolean(p->throttled));
		json_array_append_new(pts, q);
	}
	json_object_set_new(o, "points", pts);
	return o;
}

json_t *hj_group_json(const struct an *a, size_t i)
{
	const struct hr_group *g = &a->f->groups[i];
	const struct inst *p = hj_group_inst(a, i);
	json_t *o = json_object(), *nodes = json_array(), *rows = json_array();
	size_t j;
	int k;
	json_object_set_new(o, "name", json_string(g->name));
	json_object_set_new(o, "kind", json_string(hr_group_kind_name(g->kind)));
	json_object_set_new(o, "collective", json_string(g->collective));
	json_object_set_new(o, "collective_from", hj_jstr_or_null(g->collective_from));
	json_object_set_new(o, "algo", json_string(g->algo));
	json_object_set_new(o, "backend", json_string(g->backend));
	json_object_set_new(o, "nranks", json_integer(g->nranks));
	for (k = 0; k < g->nnodes; k++)
		json_array_append_new(nodes, json_string(a->f->nodes[g->nodes[k]].name));
	json_object_set_new(o, "nodes", nodes);
	json_object_set_new(o, "gpu_name", hj_jstr_or_null(g->gpu_name));
	json_object_set_new(o, "source", json_string(g->source));
	json_object_set_new(o, "complete", json_boolean(g->complete));
	json_object_set_new(o, "failure", hj_jstr_or_null(g->failure));
	json_object_set_new(o, "wrong_total", hj_jcount(g->wrong_total));
	json_object_set_new(o, "large_msg_bytes", hj_jcount(g->large_bytes));
	json_object_set_new(o, "large_msg_busbw_gbps", hj_jnum(g->large_busbw_gbps));
	json_object_set_new(o, "avg_busbw_gbps", hj_jnum(g->avg_busbw_gbps));
	json_object_set_new(o, "reported_avg_busbw_gbps", hj_jnum(g->reported_avg_gbps));
	json_object_set_new(o, "busbw_is_algbw", json_boolean(g->busbw_is_algbw));
	json_object_set_new(o, "comparison", p ? inst_json(a, p) : json_null());
	if (p)
		json_object_set_new(o, "class", json_string(a->c[p->cls].label));
	for (j = 0; j < g->nrows; j++) {
		json_t *r = json_object();
		json_object_set_new(r, "bytes", hj_jcount(g->rows[j].bytes));
		json_object_set_new(r, "busbw_oop_gbps", hj_jnum(g->rows[j].busbw_oop_gbps));
		json_object_set_new(r, "busbw_ip_gbps", hj_jnum(g->rows[j].busbw_ip_gbps));
		json_object_set_new(r, "wrong", hj_jcount(g->rows[j].wrong));
		json_array_append_new(rows, r);
	}
	json_object_set_new(o, "rows", rows);
	return o;
}

json_t *hj_loader_json(const struct hr_loader *l)
{
	json_t *o = json_object(), *cfgs = json_array(), *rec = json_object();
	size_t i;
	json_object_set_new(o, "verdict", hj_jstr_or_null(l->verdict));
	json_object_set_new(o, "mask_collapsed", json_boolean(l->mask_collapsed));
	json_object_set_new(o, "source", json_string(l->source));
	for (i = 0; i < l->ncfgs; i++) {
		const struct hr_loader_cfg *c = &l->cfgs[i];
		json_t *x = json_object();
		json_object_set_new(x, "name", json_string(c->name));
		json_object_set_new(x, "placement", json_string(c->placement));
		json_object_set_new(x, "workers", c->workers == INT_MIN ? json_null() : json_integer(c->workers));
		json_object_set_new(x, "lateness_p50_us", hj_jnum(c->lateness_p50_us));
		json_object_set_new(x, "lateness_p99_us", hj_jnum(c->lateness_p99_us));
		json_object_set_new(x, "lateness_max_us", hj_jnum(c->lateness_max_us));
		json_object_set_new(x, "input_wait_frac", hj_jnum(c->input_wait_frac));
		json_object_set_new(x, "accel_util", hj_jnum(c->accel_util));
		json_object_set_new(x, "verdict", hj_jstr_or_null(c->verdict));
		json_object_set_new(x, "reasons", hj_jstr_or_null(c->reasons));
		json_array_append_new(cfgs, x);
	}
	json_object_set_new(o, "configs", cfgs);
	json_object_set_new(rec, "placement", hj_jstr_or_null(l->rec_placement));
	json_object_set_new(rec, "workers", l->rec_placement ? json_integer(l->rec_workers) : json_null());
	json_object_set_new(rec, "numactl", hj_jstr_or_null(l->rec_numactl));
	json_object_set_new(rec, "hwloc_bind", hj_jstr_or_null(l->rec_hwloc_bind));
	json_object_set_new(rec, "slurm", hj_jstr_or_null(l->rec_slurm));
	json_object_set_new(o, "recommendation", rec);
	return o;
}

int hj_cmp_node(const void *x, const void *y)
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
		if (v[i].cls == c && !v[i].sup && isfinite(v[i].value))
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
json_t *hj_distributions_json(const struct an *a, int bounded)
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
		json_object_set_new(o, "median", hj_jnum(k->median));
		json_object_set_new(o, "mad", hj_jnum(k->mad));
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
			if (p->cls != (int)c || p->sup)
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
			json_object_set_new(x, "value", hj_jnum(p->value));
			json_object_set_new(x, "z", hj_jnum(hj_z(a, p)));
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

json_t *hj_inputs_json(const struct hr_fleet *f, size_t input_files)
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

/* A device of a node whose detail is bounded (--detail flagged, a PASS
 * node): what it is, the value of each metric by key, and its worst level
 * (its file is among the node's "inputs"). */
json_t *hj_device_bounded_json(const struct an *a, size_t i)
{
	const struct hr_device *d = &a->f->devices[i];
	json_t *o = json_object(), *v = json_object();
	size_t j;
	int level = HR_INFO;
	char mk[48];
	json_object_set_new(o, "device", json_string(d->device));
	json_object_set_new(o, "sku", hj_jstr_or_null(d->sku));
	json_object_set_new(o, "status", json_string(d->status));
	for (j = a->dev_first[i]; j < a->dev_first[i] + a->dev_n[i]; j++)
		if (a->di[j].subject == (int)i) {
			json_object_set_new(v, hj_metric_key(a->di[j].metric, mk, sizeof(mk)), hj_jnum(a->di[j].value));
			if (a->di[j].level > level)
				level = a->di[j].level;
		}
	json_object_set_new(o, "values", v);
	json_object_set_new(o, "level", json_string(hr_level_name(level)));
	return o;
}

/* The loader of a bounded node: its verdict and recommendation, not each
 * configuration. */
json_t *hj_loader_bounded_json(const struct hr_loader *l)
{
	json_t *o = hj_loader_json(l);
	json_object_del(o, "configs");
	return o;
}

/* Per node, the result files whose host section is the node (f->runs), as
 * a list: first[node], next[run]; -1 ends. Returns 0, or -1 out of memory. */
int hj_runs_by_node(const struct hr_fleet *f, long **first, long **next)
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
json_t *hj_node_inputs_json(const struct hr_fleet *f, const long *first, const long *next, int n)
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
