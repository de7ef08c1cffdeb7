/*
 * hr_powercap.c - the uneven-cap rule across the nodes of a group and the
 * fleet's recommended power cap (see hr_powercap.h).
 */
#include "report/judge/hr_powercap.h"
#include "report/judge/hr_rules.h"
#include "report/judge/hr_family.h"
#include "report/judge/hr_analyze.h"
#include "report/read/hr_index.h"
#include "base/ch_common.h"
#include "base/ch_stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SRC_UNEVEN "a synchronous collective runs at the pace of its slowest rank, and a power cap lowers a GPU's " \
	"clocks (docs/roofline.md, \"Power caps\"); NVML enforced limits from each node's inventory"
#define SRC_FLEET "roofline --power-limits sweeps (docs/roofline.md, \"Power caps\"): each GPU's lowest cap within " \
	"its tolerance of the default limit's compute-bound figure"
/* two limits within the tolerance of the row power_cap_uneven (hr_rules.c) are one */
#define SAME_W hr_rule_param("power_cap_uneven", "same_w")

/* ------------------------------------------------------------ uneven caps across a group */

static double node_limit(const struct hr_fleet *f, int node)
{
	const char *s = f->nodes[node].cfg[HR_CFG_POWER_LIMIT];
	double w;
	return s && sscanf(s, "%lf W", &w) == 1 && w > 0 ? w : NAN;
}

void hr_powercap_rules(const struct hr_fleet *f, hr_inventory_emit_fn emit, void *ctx)
{
	int *best = calloc(f->nnodes ? f->nnodes : 1, sizeof(*best)), *groups = calloc(f->nnodes ? f->nnodes : 1, sizeof(int));
	size_t i, n;
	int k;

	if (!best || !groups) {
		free(best);
		free(groups);
		return;
	}
	for (n = 0; n < f->nnodes; n++)
		best[n] = -1;
	/* per node, the largest group in which it runs below another node */
	for (i = 0; i < f->ngroups; i++) {
		const struct hr_group *g = &f->groups[i];
		double hi = -1;
		int known = 0;
		if (g->nnodes < 2)
			continue;
		for (k = 0; k < g->nnodes; k++) {
			double w = node_limit(f, g->nodes[k]);
			if (!isnan(w))
				known++, hi = w > hi ? w : hi;
		}
		if (known < 2)
			continue;
		for (k = 0; k < g->nnodes; k++) {
			double w = node_limit(f, g->nodes[k]);
			int nd = g->nodes[k];
			if (isnan(w) || w >= hi - SAME_W)
				continue;
			groups[nd]++;
			if (best[nd] < 0 || f->groups[best[nd]].nnodes < g->nnodes)
				best[nd] = (int)i;
		}
	}
	for (n = 0; n < f->nnodes; n++) {
		const struct hr_group *g;
		double w = node_limit(f, (int)n), hi = -1;
		int at = -1;
		char text[1024], subj[160];
		if (best[n] < 0)
			continue;
		g = &f->groups[best[n]];
		for (k = 0; k < g->nnodes; k++) {
			double v = node_limit(f, g->nodes[k]);
			if (!isnan(v) && v > hi)
				hi = v, at = g->nodes[k];
		}
		snprintf(subj, sizeof(subj), "%s", g->name ? g->name : "group");
		snprintf(text, sizeof(text),
			 "%s's GPUs run at a %.0f W power limit, below the %.0f W of %s in all-reduce group '%s' (%d nodes%s): "
			 "capping one GPU makes it the job's straggler: cap all GPUs of a job alike (threshold: any difference "
			 "between the nodes of one group; source: %s)",
			 f->nodes[n].name, w, hi, at >= 0 ? f->nodes[at].name : "another node", subj, g->nnodes,
			 groups[n] > 1 ? "; and in other groups" : "", SRC_UNEVEN);
		emit(ctx, (int)n, HR_WARN, "power_cap_uneven", subj, f->nodes[n].inventory_source,
		     "set one power limit on every node of the job (nvidia-smi -pl), or schedule the job on nodes "
		     "with the same limit", text);
	}
	free(best);
	free(groups);
}

/* ------------------------------------------------------------ the fleet's cap */

static time_t run_start(const struct hr_fleet *f, const char *path)
{
	long r = hr_index_run_of_path(f, path);
	return r >= 0 ? f->runs[r].start : 0;
}

/* 1 when @d is the latest sweep of its node's device of that name. */
static int latest(const struct hr_fleet *f, size_t d)
{
	const struct hr_device *a = &f->devices[d];
	time_t ta = run_start(f, a->source);
	long i;

	if (a->node < 0 || (size_t)a->node >= f->nnodes) { /* not on a node's list: the whole fleet */
		for (i = 0; (size_t)i < f->ndevices; i++) {
			const struct hr_device *b = &f->devices[i];
			time_t tb;
			if ((size_t)i == d || !b->power || b->node != a->node || strcmp(b->device, a->device))
				continue;
			tb = run_start(f, b->source);
			if (tb > ta || (tb == ta && (size_t)i > d))
				return 0;
		}
		return 1;
	}
	for (i = hr_index_node_device(f, a->node, -1); i >= 0; i = hr_index_node_device(f, a->node, i)) {
		const struct hr_device *b = &f->devices[i];
		time_t tb;
		if ((size_t)i == d || !b->power || strcmp(b->device, a->device))
			continue;
		tb = run_start(f, b->source);
		if (tb > ta || (tb == ta && (size_t)i > d))
			return 0;
	}
	return 1;
}

static const struct hr_power_pt *at_cap(const struct hr_power *p, double w)
{
	size_t i;
	for (i = 0; i < p->npts; i++)
		if (fabs(p->pts[i].cap_w - w) <= SAME_W)
			return &p->pts[i];
	return NULL;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, size_t n)
{
	if (!n)
		return NAN;
	qsort(v, n, sizeof(*v), cmp_dbl);
	return ch_percentile_sorted(v, n, 50.0);
}

static json_t *jnum(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* The model's entry from the devices @idx (@n of them, latest sweeps of one GPU model). */
static json_t *model_entry(const struct hr_fleet *f, const char *model, const size_t *idx, size_t n)
{
	double cap = -1, dflt = NAN, worst = -INFINITY, *saved = calloc(n + 1, sizeof(double)), tol = NAN;
	double caps[256], *vals = calloc(n + 1, sizeof(double)), *vals2 = calloc(n + 1, sizeof(double));
	size_t i, j, nsaved = 0, ncaps = 0, without = 0, nnodes = 0;
	const char *wnode = NULL, *wdev = NULL;
	json_t *o = json_object(), *nodes = json_array(), *curve = json_array();
	int *seen = calloc(f->nnodes ? f->nnodes : 1, sizeof(int));

	if (!o || !nodes || !curve || !saved || !vals || !vals2 || !seen)
		goto oom;
	for (i = 0; i < n; i++) {
		const struct hr_power *p = f->devices[idx[i]].power;
		if (p->rec_w > cap)
			cap = p->rec_w;
		if (isnan(dflt))
			dflt = p->default_w;
		if (isnan(tol) && p->tolerance_pct > 0)
			tol = p->tolerance_pct;
		for (j = 0; j < p->npts && ncaps < 256; j++) {
			size_t k;
			for (k = 0; k < ncaps && fabs(caps[k] - p->pts[j].cap_w) > SAME_W; k++)
				;
			if (k == ncaps)
				caps[ncaps++] = p->pts[j].cap_w;
		}
	}
	json_object_set_new(o, "gpu_model", json_string(model));
	json_object_set_new(o, "default_limit_w", jnum(dflt));
	json_object_set_new(o, "gpus_swept", json_integer((json_int_t)n));
	/* at the fleet's cap: every GPU's loss and energy saved */
	for (i = 0; cap > 0 && i < n; i++) {
		const struct hr_device *d = &f->devices[idx[i]];
		const struct hr_power_pt *c = at_cap(d->power, cap), *r = at_cap(d->power, d->power->default_w);
		double loss;
		if (!c || !r || !(r->gflops > 0) || !(c->gflops > 0)) {
			without++;
			continue;
		}
		loss = 100.0 * (1 - c->gflops / r->gflops);
		if (loss > worst)
			worst = loss, wnode = f->nodes[d->node].name, wdev = d->device;
		if (c->gflop_per_j > 0 && r->gflop_per_j > 0)
			saved[nsaved++] = 100.0 * (1 - r->gflop_per_j / c->gflop_per_j);
	}
	json_object_set_new(o, "recommended_cap_w", cap > 0 ? json_real(cap) : json_null());
	json_object_set_new(o, "pct_of_default", cap > 0 && dflt > 0 ? json_real(100.0 * cap / dflt) : json_null());
	json_object_set_new(o, "worst_compute_loss_pct", isfinite(worst) ? json_real(worst) : json_null());
	json_object_set_new(o, "worst", wnode ? json_pack("{s:s,s:s}", "node", wnode, "device", wdev) : json_null());
	json_object_set_new(o, "median_energy_per_flop_saved_pct", jnum(median(saved, nsaved)));
	json_object_set_new(o, "gpus_without_the_cap", json_integer((json_int_t)without));
	json_object_set_new(o, "tolerance_pct", jnum(tol));
	/* per node: its own cap (the highest of its GPUs') and worst loss there */
	for (i = 0; i < n; i++) {
		int nd = f->devices[idx[i]].node;
		double ncap = -1, nworst = -INFINITY;
		if (seen[nd])
			continue;
		seen[nd] = 1;
		nnodes++;
		for (j = 0; j < n; j++)
			if (f->devices[idx[j]].node == nd && f->devices[idx[j]].power->rec_w > ncap)
				ncap = f->devices[idx[j]].power->rec_w;
		for (j = 0; ncap > 0 && j < n; j++) {
			const struct hr_device *d = &f->devices[idx[j]];
			const struct hr_power_pt *c = d->node == nd ? at_cap(d->power, ncap) : NULL;
			const struct hr_power_pt *r = c ? at_cap(d->power, d->power->default_w) : NULL;
			if (c && r && r->gflops > 0 && c->gflops > 0 && 100.0 * (1 - c->gflops / r->gflops) > nworst)
				nworst = 100.0 * (1 - c->gflops / r->gflops);
		}
		json_array_append_new(nodes, json_pack("{s:s,s:o,s:o}", "node", f->nodes[nd].name, "cap_w",
						       ncap > 0 ? json_real(ncap) : json_null(), "worst_compute_loss_pct",
						       isfinite(nworst) ? json_real(nworst) : json_null()));
	}
	json_object_set_new(o, "nodes_swept", json_integer((json_int_t)nnodes));
	json_object_set_new(o, "nodes", nodes);
	/* the median curve, against each GPU's own figures at the default limit */
	qsort(caps, ncaps, sizeof(caps[0]), cmp_dbl);
	for (j = ncaps; j-- > 0;) {
		size_t m = 0, m2 = 0;
		for (i = 0; i < n; i++) {
			const struct hr_power *p = f->devices[idx[i]].power;
			const struct hr_power_pt *c = at_cap(p, caps[j]), *r = at_cap(p, p->default_w);
			if (!c || !r)
				continue;
			if (c->gflops > 0 && r->gflops > 0)
				vals[m++] = 100.0 * c->gflops / r->gflops;
			if (c->gflop_per_j > 0 && r->gflop_per_j > 0)
				vals2[m2++] = 100.0 * c->gflop_per_j / r->gflop_per_j;
		}
		if (!m && !m2)
			continue;
		json_array_append_new(curve, json_pack("{s:f,s:o,s:i,s:o,s:o}", "cap_w", caps[j], "pct_of_default",
			dflt > 0 ? json_real(100.0 * caps[j] / dflt) : json_null(), "gpus", (int)(m > m2 ? m : m2),
			"perf_pct", jnum(median(vals, m)), "gflop_per_j_pct", jnum(median(vals2, m2))));
	}
	json_object_set_new(o, "curve", curve);
	json_object_set_new(o, "rule", json_string("the highest of the GPUs' recommended caps: in a synchronous job "
		"the slowest GPU sets the pace, so the fleet's cap keeps every swept GPU within its tolerance"));
	json_object_set_new(o, "source", json_string(SRC_FLEET));
	free(saved);
	free(vals);
	free(vals2);
	free(seen);
	return o;
oom:
	json_decref(o);
	json_decref(nodes);
	json_decref(curve);
	free(saved);
	free(vals);
	free(vals2);
	free(seen);
	return NULL;
}

json_t *hr_powercap_profile(const struct hr_fleet *f)
{
	size_t *idx = calloc(f->ndevices ? f->ndevices : 1, sizeof(*idx)), *used = calloc(f->ndevices ? f->ndevices : 1, sizeof(*used));
	size_t i, j, n = 0;
	json_t *models, *out;

	if (!idx || !used) {
		free(idx);
		free(used);
		return NULL;
	}
	for (i = 0; i < f->ndevices; i++)
		if (f->devices[i].power && latest(f, i))
			idx[n++] = i;
	if (!n) {
		free(idx);
		free(used);
		return json_null();
	}
	models = json_array();
	for (i = 0; i < n; i++) {
		const char *model = f->devices[idx[i]].name ? f->devices[idx[i]].name : "unknown GPU";
		size_t *sel, m = 0;
		json_t *e;
		if (used[i])
			continue;
		sel = calloc(n, sizeof(*sel));
		if (!sel)
			break;
		for (j = i; j < n; j++) {
			const char *mj = f->devices[idx[j]].name ? f->devices[idx[j]].name : "unknown GPU";
			if (!used[j] && !strcmp(mj, model)) {
				used[j] = 1;
				sel[m++] = idx[j];
			}
		}
		e = model_entry(f, model, sel, m);
		free(sel);
		if (!e)
			break;
		json_array_append_new(models, e);
	}
	free(idx);
	free(used);
	out = json_pack("{s:o}", "models", models);
	return out;
}

const struct hr_family hr_family_powercap = {
	"power",
	"each node's GPU power limits and the all-reduce groups they ran in",
	NULL,
	hr_powercap_rules,
};
