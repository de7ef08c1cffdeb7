/*
 * hr_load.c - result files into the fleet model (hr_model.h): each tool's
 * result (allreduce_bw, loader_contention, checkpoint_io, nccl-tests) into
 * its records; roofline's devices are hr_load_roofline.c's, the parallel
 * reading of many files hr_load_files.c's.
 */
#include "report/read/hr_model.h"
#include "report/read/hr_load_shared.h"
#include "report/read/hr_ckpt_load.h"
#include "report/read/hr_index.h"
#include "report/read/hr_inventory_load.h"
#include "report/read/hr_dcgm.h"
#include "report/read/hr_nvbw.h"
#include "report/read/hr_result.h"
#include "report/hr_util.h"
#include "base/ch_common.h"
#include "base/ch_result.h"

#include <sched.h>
#include <unistd.h>
#include <ctype.h>
#include <stddef.h>
#include <limits.h>
#include <pthread.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const cfg_names[HR_CFG_NKEYS] = {
	"gpu_model", "driver", "cuda", "nccl", "mpi", "clocks", "vbios", "nic_fw", "power_limit"
};

const char *hr_cfg_key_name(int k)
{
	return k >= 0 && k < HR_CFG_NKEYS ? cfg_names[k] : "?";
}

const char *hr_group_kind_name(int k)
{
	static const char *const n[] = { "node", "pair", "world", "scaling", "unknown" };
	return k >= 0 && k <= HR_G_UNKNOWN ? n[k] : "unknown";
}

int hr_gpu_nvlink_all(const struct ch_datasheet *ds)
{
	if (!ds)
		return -1;
	return strstr(ds->sku, "SXM") || !strcmp(ds->sku, "B200");
}

/* @v (key @key of @where): a fraction from 0 to 1, or NAN (and an issue
 * when it is another number or not a number; absent or null: no issue). */
static double frac_field(struct ctx *c, const struct hr_rv *v, const char *key, const char *where)
{
	double x = hl_num_field(c, v, key, where, 0);
	if (x > 1) {
		hr_issue_add(&c->f->issues, HR_ISSUE_SKIPPED, c->path, 0, 0,
			     "%s: '%s' is '%g' (must be a fraction from 0 to 1); skipped", where, key, x);
		return NAN;
	}
	return x;
}

/* @v (key @key of @where): a count, an integer from @lo to INT_MAX; @dflt
 * when absent or null, and when it is not such a count (then with an issue
 * naming the value). */
static int count_field(struct ctx *c, const struct hr_rv *v, const char *key, const char *where,
		       int lo, int dflt)
{
	char *t;
	if (!v->json || v->is_null)
		return dflt;
	if (isfinite(v->num) && v->num == floor(v->num) && v->num >= lo && v->num <= INT_MAX)
		return (int)v->num;
	t = hr_rv_text(v);
	hr_issue_add(&c->f->issues, HR_ISSUE_SKIPPED, c->path, 0, 0,
		     "%s: '%s' is %.64s (must be an integer >= %d); not used", where, key, t ? t : "?", lo);
	free(t);
	return dflt;
}

/* A count or index from a number of the record: -1 when it is not an
 * integer from 0 to INT_MAX (absent, another type, fractional, too large). */
static int int_of(double x)
{
	return x >= 0 && x <= INT_MAX && x == floor(x) ? (int)x : -1;
}

static int group_add_node(struct hr_group *g, int node)
{
	int i, *v;
	for (i = 0; i < g->nnodes; i++)
		if (g->nodes[i] == node)
			return 0;
	v = realloc(g->nodes, (size_t)(g->nnodes + 1) * sizeof(*v));
	if (!v)
		return CH_ERR_RUNTIME;
	g->nodes = v;
	g->nodes[g->nnodes++] = node;
	return 0;
}

static int kind_from_name(const char *k)
{
	if (!k) return HR_G_UNKNOWN;
	if (!strcmp(k, "node")) return HR_G_NODE;
	if (!strcmp(k, "pair")) return HR_G_PAIR;
	if (!strcmp(k, "world")) return HR_G_WORLD;
	if (!strcmp(k, "scaling")) return HR_G_SCALING;
	return HR_G_UNKNOWN;
}

/* What allreduce_bw's rank layout says. */
struct layout {
	int *rank_node;       /* rank -> 1 + node index, 0 unknown; nl entries */
	size_t nl;
	int hosts;            /* distinct hosts */
	const char *gpu_name; /* GPU name of the last rank that has one */
};

/* The rank layout: node per rank, GPUs used and their rated power, distinct hosts. */
static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int read_layout(struct ctx *c, const struct hr_result *r, struct hr_run *run, struct layout *lo)
{
	size_t i, j, nl = r->layout_list.n;

	memset(lo, 0, sizeof(*lo));
	lo->nl = nl;
	if (nl && !(lo->rank_node = calloc(nl, sizeof(*lo->rank_node))))
		return CH_ERR_RUNTIME;
	for (i = 0; i < nl; i++) {
		const struct hr_result_rank *e = &r->layout[i];
		/* the node name sweeps use: the host, or "nodeK" with --node-size */
		const char *h = e->node_name.str ? e->node_name.str : e->host.str;
		int rk = int_of(e->rank.num), n2;
		if (!h || !(rk >= 0 && (size_t)rk < nl)) {
			hr_issue_add(&c->f->issues, HR_ISSUE_SKIPPED, c->path, 0, 0,
				     "ranks.layout[%zu]: needs 'rank' (0..%zu) and 'host'; skipped", i, nl - 1);
			continue;
		}
		if ((n2 = hr_fleet_node(c->f, h)) < 0)
			return CH_ERR_RUNTIME;
		lo->rank_node[rk] = n2 + 1;
		if (!isnan(e->gpu_index.num)) {
			const char *gn = e->gpu_name.str;
			const struct ch_datasheet *ds = gn ? ch_datasheet_lookup(gn) : NULL;
			run->gpus_used++;
			run->gpu_rated_w += hr_gpu_rated_w(ds, NULL);
			if (gn) {
				lo->gpu_name = gn;
				if (!c->f->nodes[n2].cfg[HR_CFG_GPU_MODEL])
					hl_set_cfg(c->f, n2, HR_CFG_GPU_MODEL, gn);
			}
		}
	}
	/* distinct hosts of the layout (not node names: --node-size splits one
	 * host into several "nodes", and the CPU packages are the host's) */
	{
		const char **h = malloc((nl ? nl : 1) * sizeof(*h));
		if (!h)
			return CH_ERR_RUNTIME;
		for (i = j = 0; i < nl; i++)
			if (r->layout[i].host.str)
				h[j++] = r->layout[i].host.str;
		qsort(h, j, sizeof(*h), cmp_str); /* sorted: a host's ranks side by side */
		for (i = 0; i < j; i++)
			lo->hosts += !i || strcmp(h[i - 1], h[i]);
		free(h);
	}
	return 0;
}

/* The hosts of a sweep: its "nodes", else through its ranks and the layout. */
static int sweep_nodes(struct ctx *c, const struct hr_result_sweep *sw, const struct layout *lo,
		       struct hr_group *g)
{
	size_t k;

	if (sw->nodes_list.is_array && sw->nodes_list.n) {
		for (k = 0; k < sw->nodes_list.n; k++) {
			int n2;
			if (!sw->nodes[k].str)
				continue;
			n2 = hr_fleet_node(c->f, sw->nodes[k].str);
			if (n2 < 0 || group_add_node(g, n2))
				return CH_ERR_RUNTIME;
		}
		return 0;
	}
	for (k = 0; k < sw->ranks_list.n; k++) {
		json_int_t rr = sw->ranks[k].i;
		if (lo->rank_node && rr >= 0 && (size_t)rr < lo->nl && lo->rank_node[rr] &&
		    group_add_node(g, lo->rank_node[rr] - 1))
			return CH_ERR_RUNTIME;
	}
	return 0;
}

/* One half of a row: its loop time, the median and CV of its per-call
 * period, and its re-measurement (each value checked: a wrong-typed one is
 * listed and not used). */
static void sweep_cell(struct ctx *c, const struct hr_result_cell *s, struct hr_cell *cell, const char *where)
{
	char w2[128];

	cell->time_us = cell->median_us = cell->cv = cell->confirm_busbw = cell->confirm_cv = NAN;
	cell->confirm_loop_busbw = NAN;
	cell->confirm = HR_CONFIRM_NONE;
	if (!s->present)
		return;
	cell->time_us = hl_num_field(c, &s->loop_time_us, "loop_time_us", where, 0);
	snprintf(w2, sizeof(w2), "%s.time_us", where);
	if (s->time_us.present) {
		cell->median_us = hl_num_field(c, &s->time_us.median, "median", w2, 0);
		cell->cv = hl_num_field(c, &s->time_us.cv, "cv", w2, 0);
	}
	if (s->confirm.present) {
		double bus, loop, med;
		snprintf(w2, sizeof(w2), "%s.confirm", where);
		bus = hl_num_field(c, &s->confirm.busbw, "busbw_gbps", w2, 1);
		loop = hl_num_field(c, &s->confirm.loop_time_us, "loop_time_us", w2, 0);
		if (s->confirm.time_us.present) {
			char w3[160];
			snprintf(w3, sizeof(w3), "%s.time_us", w2);
			med = hl_num_field(c, &s->confirm.time_us.median, "median", w3, 0);
			cell->confirm_cv = hl_num_field(c, &s->confirm.time_us.cv, "cv", w3, 0);
		} else {
			med = NAN;
		}
		if (bus == 0) {
			/* a second measurement that moved no data is no measurement */
			hl_skip(c, "%s: '%s' is 0 (a second measurement that moved no data); the re-measurement not used", w2, "busbw_gbps");
			bus = NAN;
		}
		if (!isnan(bus)) {
			cell->confirm = HR_CONFIRM_AGREED; /* measured again; the rules judge agreement */
			cell->confirm_loop_busbw = bus;
			/* from the median period where recorded, as the first measurement */
			cell->confirm_busbw = loop > 0 && med > 0 ? bus * loop / med : bus;
		}
	}
}

/* The rows of a sweep, its large-message and average busbw. */
static int sweep_rows(struct ctx *c, const struct hr_result_sweep *sw, struct hr_group *g, const char *where)
{
	size_t k;

	if (sw->rows_list.n && !(g->rows = calloc(sw->rows_list.n, sizeof(*g->rows))))
		return CH_ERR_RUNTIME;
	for (k = 0; k < sw->rows_list.n; k++) {
		const struct hr_result_row *s = &sw->rows[k];
		struct hr_row *row = &g->rows[g->nrows];
		char w2[96];
		snprintf(w2, sizeof(w2), "%s.rows[%zu]", where, k);
		row->bytes = hl_num_field(c, &s->bytes, "bytes", w2, 1);
		/* a busbw is a finite number >= 0 (-1e308 was read as measured) */
		row->busbw_oop_gbps = isnan(s->oop_busbw.num) ? NAN : hl_num_field(c, &s->oop_busbw, "out_of_place.busbw_gbps", w2, 0);
		row->busbw_ip_gbps = isnan(s->ip_busbw.num) ? NAN : hl_num_field(c, &s->ip_busbw, "in_place.busbw_gbps", w2, 0);
		if (isnan(row->bytes) || (isnan(row->busbw_oop_gbps) && isnan(row->busbw_ip_gbps))) {
			if (!isnan(row->bytes))
				hl_skip(c, "%s: no numeric '%s' in out_of_place or in_place; skipped", w2, "busbw_gbps");
			continue;
		}
		{
			char w3[128];
			snprintf(w3, sizeof(w3), "%s.out_of_place", w2);
			sweep_cell(c, &s->oop, &row->oop, w3);
			snprintf(w3, sizeof(w3), "%s.in_place", w2);
			sweep_cell(c, &s->ip, &row->ip, w3);
		}
		row->wrong = (s->oop_wrong.num > 0 ? s->oop_wrong.num : 0) + (s->ip_wrong.num > 0 ? s->ip_wrong.num : 0);
		g->wrong_total += row->wrong;
		g->nrows++;
	}
	g->large_busbw_gbps = isnan(sw->large_busbw.num) ? NAN : hl_num_field(c, &sw->large_busbw, "large_msg_busbw_gbps", where, 0);
	g->avg_busbw_gbps = isnan(sw->avg_busbw.num) ? NAN : hl_num_field(c, &sw->avg_busbw, "avg_busbw_gbps", where, 0);
	g->large_bytes = NAN;
	for (k = 0; k < g->nrows; k++)
		if (isnan(g->large_bytes) || g->rows[k].bytes > g->large_bytes) {
			g->large_bytes = g->rows[k].bytes;
			if (isnan(sw->large_busbw.num) || !(sw->large_busbw.num >= 0) || !isfinite(sw->large_busbw.num))
				g->large_busbw_gbps = !isnan(g->rows[k].busbw_oop_gbps) ?
					g->rows[k].busbw_oop_gbps : g->rows[k].busbw_ip_gbps;
		}
	if (isnan(g->avg_busbw_gbps) && g->nrows) {
		double s = 0;
		int n = 0;
		for (k = 0; k < g->nrows; k++) {
			if (!isnan(g->rows[k].busbw_oop_gbps)) { s += g->rows[k].busbw_oop_gbps; n++; }
			if (!isnan(g->rows[k].busbw_ip_gbps)) { s += g->rows[k].busbw_ip_gbps; n++; }
		}
		g->avg_busbw_gbps = n ? s / n : NAN;
	}
	return 0;
}

/* One sweep into a group of the fleet. */
static int load_sweep(struct ctx *c, const struct hr_result *r, size_t i, const struct layout *lo,
		      int node, const struct hr_run *run)
{
	const struct hr_result_sweep *sw = &r->sweeps[i];
	struct hr_group *g;
	char where[64];

	snprintf(where, sizeof(where), "results.sweeps[%zu]", i);
	if (!sw->rows_list.is_array) {
		hl_skip(c, "%s: not an object with a '%s' array; skipped", where, "rows");
		return 0;
	}
	GROW(c->f->groups, c->f->ngroups, g);
	if (!g)
		return CH_ERR_RUNTIME;
	g->kind = kind_from_name(sw->group_kind.str);
	g->name = strdup(sw->group_name.str ? sw->group_name.str : "world");
	g->algo = strdup(sw->algo.str ? sw->algo.str : "default");
	g->collective = strdup("all_reduce");
	g->backend = strdup(r->backend.str ? r->backend.str : "?");
	g->source = strdup(c->path);
	g->gpu_name = hl_dup_or_null(lo->gpu_name);
	g->nranks = count_field(c, &sw->nranks, "nranks", where, 1, 0);
	g->reported_avg_gbps = NAN;
	g->complete = run->status && !strcmp(run->status, "ok");
	if (!g->name || !g->algo || !g->collective || !g->backend || !g->source)
		return CH_ERR_RUNTIME;
	if (sweep_nodes(c, sw, lo, g))
		return CH_ERR_RUNTIME;
	if (g->nranks <= 0)
		g->nranks = (int)sw->ranks_list.n;
	if (sweep_rows(c, sw, g, where))
		return CH_ERR_RUNTIME;
	if (g->nnodes == 0 && node >= 0 && (g->kind == HR_G_NODE || lo->hosts <= 1))
		group_add_node(g, node);
	return 0;
}

/* The stragglers allreduce_bw named. */
static int load_stragglers(struct ctx *c, const struct hr_result *r, const struct layout *lo)
{
	size_t i;

	for (i = 0; i < r->stragglers_list.n; i++) {
		const struct hr_result_straggler *e = &r->stragglers[i];
		struct hr_straggler *s;
		const char *h = e->node.str ? e->node.str : e->host.str;
		int n2, rk = int_of(e->rank.num);
		if (!h && lo->rank_node && rk >= 0 && (size_t)rk < lo->nl && lo->rank_node[rk])
			h = c->f->nodes[lo->rank_node[rk] - 1].name;
		if (!h) {
			hr_issue_add(&c->f->issues, HR_ISSUE_SKIPPED, c->path, 0, 0,
				     "results.stragglers[%zu]: no 'host' and no rank in the layout; skipped", i);
			continue;
		}
		n2 = hr_fleet_node(c->f, h);
		GROW(c->f->stragglers, c->f->nstragglers, s);
		if (n2 < 0 || !s)
			return CH_ERR_RUNTIME;
		s->node = n2;
		s->rank = rk;
		s->slowest_fraction = e->slowest_fraction.num;
		s->excess_pct = e->excess_pct.num;
		s->source = strdup(c->path);
	}
	return 0;
}

static int load_allreduce(struct ctx *c, const struct hr_result *r, int node, struct hr_run *run)
{
	struct layout lo;
	size_t i;
	int rc;

	if ((rc = read_layout(c, r, run, &lo)))
		goto out;
	if (lo.hosts > 0)
		run->nnodes = lo.hosts;
	if (!r->sweeps_list.is_array && !hl_unavailable(r))
		hl_skip(c, "%s: missing '%s' array; no sweeps read", "results", "sweeps");
	for (i = 0; i < r->sweeps_list.n; i++)
		if ((rc = load_sweep(c, r, i, &lo, node, run)))
			goto out;
	if (r->wrong_total.num > 0 && c->f->ngroups) {
		/* wrong elements not attributed to a row: keep them on record */
		double rows_wrong = 0;
		for (i = 0; i < c->f->ngroups; i++)
			if (!strcmp(c->f->groups[i].source, c->path))
				rows_wrong += c->f->groups[i].wrong_total;
		if (rows_wrong == 0)
			hr_issue_add(&c->f->issues, HR_ISSUE_NOTE, c->path, 0, 0,
				     "results.wrong_total is %.0f but no row has wrong elements", r->wrong_total.num);
	}
	rc = load_stragglers(c, r, &lo);
out:
	free(lo.rank_node);
	return rc;
}

/* One configuration; 1 when it lacks what the report needs (recorded as skipped). */
static int loader_cfg(struct ctx *c, const struct hr_result_config *v, size_t i, struct hr_loader_cfg *k)
{
	char where[64];

	snprintf(where, sizeof(where), "results.configs[%zu]", i);
	if (!v->placement.str || !v->has_lateness) {
		hl_skip(c, "%s: needs '%s' and a 'lateness_us' object; skipped", where, "placement");
		return 1;
	}
	if (isnan(hl_num_field(c, &v->lateness_p99_us, "lateness_us.p99", where, 1)))
		return 1;
	k->name = strdup(v->name.str ? v->name.str : v->placement.str);
	k->placement = strdup(v->placement.str);
	k->workers = count_field(c, &v->workers, "workers", where, 0, INT_MIN); /* INT_MIN: not given */
	k->hog_util = hl_num_field(c, &v->hog_util, "hog_util", where, 0);
	k->lateness_p50_us = hl_num_field(c, &v->lateness_p50_us, "lateness_us.p50", where, 0);
	k->lateness_p99_us = v->lateness_p99_us.num;
	k->lateness_max_us = hl_num_field(c, &v->lateness_max_us, "lateness_us.max", where, 0);
	k->input_wait_frac = frac_field(c, &v->input_wait_frac, "input_wait_frac", where);
	k->accel_util = frac_field(c, &v->accel_util, "accel_util", where);
	k->repeats = count_field(c, &v->repeats, "repeats", where, 0, 0);
	k->input_wait_frac_sd = frac_field(c, &v->input_wait_frac_sd, "input_wait_frac_sd", where);
	k->accel_util_sd = frac_field(c, &v->accel_util_sd, "accel_util_sd", where);
	if (k->repeats < 2) /* a spread needs two repeats */
		k->input_wait_frac_sd = k->accel_util_sd = NAN;
	k->verdict = hl_dup_or_null(v->verdict.str);
	k->reasons = hl_join_strings(&v->reasons);
	return 0;
}

static int load_loader(struct ctx *c, const struct hr_result *r, int node)
{
	const struct hr_result_recommendation *rec = &r->rec;
	struct hr_loader *l;
	size_t i;

	if (r->mode.str && !strcmp(r->mode.str, "plan")) {
		hr_issue_add(&c->f->issues, HR_ISSUE_NOTE, c->path, 0, 0,
			     "loader_contention plan (--topology): nothing measured; not used");
		return 0;
	}
	if (!r->configs_list.is_array) {
		if (!hl_unavailable(r))
			hl_skip(c, "%s: missing '%s' array; loader results not used", "results", "configs");
		return 0;
	}
	GROW(c->f->loaders, c->f->nloaders, l);
	if (!l)
		return CH_ERR_RUNTIME;
	l->node = node;
	l->verdict = hl_dup_or_null(r->verdict.str);
	l->step_ms = hl_num_field(c, &r->step_ms, "step_ms", "results", 0);
	/* the result's own thresholds; NAN where it gives none: the judge then
	 * applies loader_contention's documented ones (docs/loader_contention.md),
	 * the parameters of the row loader_input_bound (report/judge/hr_rules.c) */
	l->wait_warn = l->wait_fail = l->util_pass = l->util_fail = NAN;
	if (r->lthr.present) {
		double x;
		if (!isnan(x = hl_num_field(c, &r->lthr.wait_warn, "input_wait_warn_frac", "results.thresholds", 0)))
			l->wait_warn = x;
		if (!isnan(x = hl_num_field(c, &r->lthr.wait_fail, "input_wait_fail_frac", "results.thresholds", 0)))
			l->wait_fail = x;
		if (!isnan(x = hl_num_field(c, &r->lthr.util_pass, "accel_util_pass_frac", "results.thresholds", 0)))
			l->util_pass = x;
		if (!isnan(x = hl_num_field(c, &r->lthr.util_fail, "accel_util_fail_frac", "results.thresholds", 0)))
			l->util_fail = x;
	}
	l->base_psi_pct = l->base_host_util = NAN;
	for (i = 0; i < r->configs_list.n; i++)
		if (hr_streq(r->configs[i].placement.str, "baseline")) {
			char where[64];
			snprintf(where, sizeof(where), "results.configs[%zu]", i);
			l->base_psi_pct = hl_num_field(c, &r->configs[i].psi_avg10, "psi_cpu_some_avg10", where, 0);
			l->base_host_util = hl_num_field(c, &r->configs[i].host_cpu_util, "host_cpu_util", where, 0);
			break;
		}
	l->mask_collapsed = r->mask_collapsed;
	l->source = strdup(c->path);
	if (rec->present) {
		l->rec_placement = hl_dup_or_null(rec->placement.str);
		l->rec_workers = count_field(c, &rec->workers, "workers", "results.recommendation", 0, -1);
		l->rec_config = hl_dup_or_null(rec->config.str);
		l->rec_verdict = hl_dup_or_null(rec->verdict.str);
		l->rec_numactl = hl_dup_or_null(rec->numactl.str);
		l->rec_hwloc_bind = hl_dup_or_null(rec->hwloc_bind.str);
		l->rec_slurm = hl_dup_or_null(rec->slurm.str);
	}
	if (r->configs_list.n && !(l->cfgs = calloc(r->configs_list.n, sizeof(*l->cfgs))))
		return CH_ERR_RUNTIME;
	for (i = 0; i < r->configs_list.n; i++)
		if (!loader_cfg(c, &r->configs[i], i, &l->cfgs[l->ncfgs]))
			l->ncfgs++;
	if (!l->verdict) {
		/* the worst config verdict stands in for a missing overall one */
		static const char *const order[] = { "fail", "warn", "pass" };
		int o;
		for (o = 0; o < 3 && !l->verdict; o++)
			for (i = 0; i < l->ncfgs; i++)
				if (l->cfgs[i].verdict && !strcmp(l->cfgs[i].verdict, order[o])) {
					l->verdict = strdup(order[o]);
					break;
				}
	}
	return 0;
}

static void load_sample(struct ctx *c, const struct hr_result_load *l, struct hr_load_sample *s, const char *where)
{
	s->loadavg_1m = hl_num_field(c, &l->loadavg_1m, "loadavg_1m", where, 0);
	s->cpu_pressure_pct = hl_num_field(c, &l->cpu_pressure_pct, "cpu_pressure_some_avg10_pct", where, 0);
	s->cpu_busy_pct = hl_num_field(c, &l->cpu_busy_pct, "cpu_busy_pct", where, 0);
}

/* The envelope's "conditions" (docs/results-schema.md): any value may be
 * null (not known); one of another type or range is listed and not used. */
static void read_conditions(struct ctx *c, const struct hr_result_conditions *k, struct hr_conditions *out)
{
	memset(out, 0, sizeof(*out));
	out->before.loadavg_1m = out->before.cpu_pressure_pct = out->before.cpu_busy_pct = NAN;
	out->after = out->before;
	out->per_core = NAN;
	if (!k->present) {
		if (k->json && !json_is_null(k->json))
			hl_skip(c, "%s: '%s' is not an object; the measurement conditions are not known", "envelope",
			     "conditions");
		return;
	}
	out->known = 1;
	if (k->before.present)
		load_sample(c, &k->before, &out->before, "conditions.before");
	else if (k->before.json && !json_is_null(k->before.json))
		hl_skip(c, "%s: '%s' is not an object or null; not used", "conditions", "before");
	if (k->after.present)
		load_sample(c, &k->after, &out->after, "conditions.after");
	else if (k->after_value.json && !k->after_value.is_null)
		hl_skip(c, "%s: '%s' is not an object or null; not used", "conditions", "after");
	out->online_cpus = count_field(c, &k->online_cpus, "online_cpus", "conditions", 1, 0);
	out->per_core = hl_num_field(c, &k->per_core, "per_core", "conditions", 0);
}

/* The run of a result file: times, energy, CPU packages; @t0: [out] its
 * start time when "start_utc" parses (else left). NULL when out of memory. */
static struct hr_run *run_new(struct ctx *c, const struct hr_result *r, int node, time_t *t0)
{
	struct hr_run *run;
	time_t t1 = 0;

	GROW(c->f->runs, c->f->nruns, run);
	if (!run)
		return NULL;
	run->path = strdup(c->path);
	run->tool = strdup(r->tool);
	run->status = strdup(r->status ? r->status : "unknown");
	run->reason = hl_dup_or_null(r->reason);
	run->node = node;
	run->nnodes = 1;
	run->wall_sec = NAN;
	run->cpu_j = run->gpu_j = NAN;
	if (!run->path || !run->tool || !run->status)
		return NULL;
	if (hr_parse_utc(r->start_utc, t0) == 0 && hr_parse_utc(r->end_utc, &t1) == 0 && t1 >= *t0) {
		run->start = *t0;
		run->end = t1;
		run->wall_sec = difftime(t1, *t0);
	} else if (r->start_utc && r->end_utc) {
		hr_issue_add(&c->f->issues, HR_ISSUE_NOTE, c->path, 0, 0,
			     "envelope: 'start_utc' '%.40s' and 'end_utc' '%.40s' are not two times "
			     "YYYY-MM-DDTHH:MM:SSZ, the end not before the start; its wall time is not known",
			     r->start_utc, r->end_utc);
	}
	if (r->has_energy) {
		run->cpu_j = hl_num_field(c, &r->energy_cpu_j, "cpu_j", "energy", 0);
		run->gpu_j = hl_num_field(c, &r->energy_gpu_j, "gpu_j", "energy", 0);
		run->energy_source = hl_dup_or_null(r->energy_source.str);
		run->energy_measured = !isnan(run->cpu_j) || !isnan(run->gpu_j);
		if (isnan(run->wall_sec) && r->energy_wall_sec.num >= 0)
			run->wall_sec = r->energy_wall_sec.num;
	}
	run->cpu_packages = count_field(c, &r->host_packages, "packages", "host", 1, 1);
	read_conditions(c, &r->conditions, &run->cond);
	return run;
}

/* What the envelope says of the node: CPU, GPUs, software, inventory. */
static int node_facts(struct ctx *c, const struct hr_result *r, int node, time_t t0)
{
	if (r->host_cpu_model && !c->f->nodes[node].cpu_model)
		c->f->nodes[node].cpu_model = strdup(r->host_cpu_model);
	if ((int)r->host_ngpus > c->f->nodes[node].ngpus)
		c->f->nodes[node].ngpus = (int)r->host_ngpus;
	if (r->has_software) {
		hl_set_cfg(c->f, node, HR_CFG_DRIVER, r->sw_cuda_driver ? r->sw_cuda_driver : r->sw_nvml_driver);
		hl_set_cfg(c->f, node, HR_CFG_CUDA, r->sw_cuda_runtime);
		hl_set_cfg(c->f, node, HR_CFG_NCCL, r->sw_nccl);
		hl_set_cfg(c->f, node, HR_CFG_MPI, r->sw_mpi);
	}
	return hr_inventory_load(c->f, node, r->host,
				 json_object_get(json_object_get(r->doc, "conditions"), "rdma_counters_end"),
				 c->path, t0) != 0 ? CH_ERR_RUNTIME : 0;
}

static int load_result(struct ctx *c, const struct hr_result *r)
{
	const char *tool = r->tool_name, *st = r->status;
	struct hr_run *run;
	int node, rc = 0;
	time_t t0 = 0;

	node = hr_fleet_node(c->f, r->hostname);
	if (node < 0)
		return CH_ERR_RUNTIME;
	if (!(run = run_new(c, r, node, &t0)))
		return CH_ERR_RUNTIME;
	if (node_facts(c, r, node, t0))
		return CH_ERR_RUNTIME;
	if (st && strcmp(st, "ok") && strcmp(st, "failed") && strcmp(st, "unavailable"))
		hr_issue_add(&c->f->issues, HR_ISSUE_TRUNCATED, c->path, 0, 0,
			     "%s run has status '%s'%s%s: its results are partial", tool, st,
			     r->reason ? ": " : "", r->reason ? r->reason : "");
	if (!strcmp(tool, "roofline")) {
		size_t d0 = c->f->ndevices, i;
		rc = hl_load_roofline(c, r, node);
		for (i = d0; i < c->f->ndevices; i++)
			if (!strcmp(c->f->devices[i].kind, "gpu") &&
			    strcmp(c->f->devices[i].status, "unavailable")) {
				run->gpus_used++;
				run->gpu_rated_w += hr_gpu_rated_w(c->f->devices[i].ds, NULL);
			}
	} else if (!strcmp(tool, "allreduce_bw")) {
		rc = load_allreduce(c, r, node, run);
	} else if (!strcmp(tool, "checkpoint_io")) {
		rc = hr_ckpt_load(c->f, c->path, r);
	} else if (!strcmp(tool, "kernel_log")) {
		rc = hl_load_kernel_log(c, r, node);
	} else {
		rc = load_loader(c, r, node);
	}
	run->cpu_packages *= run->nnodes > 0 ? run->nnodes : 1;
	c->f->files_read++;
	return rc;
}

void hl_pre_read(const json_t *doc, struct pre *x, int text_plain)
{
	memset(x, 0, sizeof(*x));
	x->rc = hr_result_read(doc, &x->rec);
	if (x->rc || !x->rec.schema || strcmp(x->rec.schema, CH_RESULT_SCHEMA))
		return;
	if (text_plain)
		x->rec.control_checked = 1; /* control 0: no string can hold one */
	else
		hr_result_check_control(&x->rec);
}

/* hr_fleet_load_json() for a document whose record is @x (released here). */
int hl_load_json_read(struct hr_fleet *f, const char *path, const json_t *doc, int named,
			  struct pre *x)
{
	struct ctx c = { f, path, 0 };
	struct hr_result *r = &x->rec;
	const char *schema;
	int rc;

	if (x->rc) {
		hr_result_release(r);
		return x->rc;
	}
	schema = r->schema;
	if (schema && !strcmp(schema, CH_RESULT_SCHEMA)) {
		/* the one gate of every reader of result files */
		rc = hr_result_accept(r, path, named, &f->issues) == HR_RESULT_USE ? load_result(&c, r) : 0;
		hr_result_release(r);
		return rc;
	}
	hr_result_release(r);
	if (schema && !strcmp(schema, "clusterhealth.profile")) {
		f->files_ignored++;
		return 0;
	}
	if (hr_nt_json_detect(doc)) {
		struct hr_nt_log log;
		size_t r0 = f->nruns;
		rc = hr_nt_parse_json(path, doc, &log, &f->issues);
		if (!rc)
			rc = hr_fleet_load_nccltests(f, &log);
		if (!rc && f->nruns == r0 + 1 && log.has_wall)
			f->runs[r0].wall_sec = log.wall_sec;
		hr_nt_log_release(&log);
		return rc;
	}
	if (hr_dcgm_detect(doc))
		return hr_dcgm_load(f, path, doc);
	if (hr_nvbw_detect(doc))
		return hr_nvbw_load(f, path, doc);
	if (!named) {
		f->files_ignored++;
		hr_issue_add(&f->issues, HR_ISSUE_NOTE, path, 0, 0,
			     "ignored: a JSON document that is neither a result file nor nccl-tests, dcgmi diag or nvbandwidth output (schema '%s')",
			     schema ? schema : "none");
		return 0;
	}
	hr_issue_add(&f->issues, HR_ISSUE_SKIPPED, path, 0, 0,
		     "unknown JSON document (schema '%s'; expected a clusterhealth.result file, nccl-tests -J, dcgmi diag -j or nvbandwidth -j output); file skipped",
		     schema ? schema : "none");
	return 0;
}

int hr_fleet_load_json(struct hr_fleet *f, const char *path, const json_t *doc, int named)
{
	struct pre x;
	if (!json_is_object(doc)) {
		hr_issue_add(&f->issues, HR_ISSUE_SKIPPED, path, 0, 0,
			     "JSON document is not an object; file skipped");
		return 0;
	}
	hl_pre_read(doc, &x, 0);
	return hl_load_json_read(f, path, doc, named, &x);
}

static int factor_one(const char *coll)
{
	return !strcmp(coll, "broadcast") || !strcmp(coll, "reduce") || !strcmp(coll, "sendrecv");
}

int hr_fleet_load_nccltests(struct hr_fleet *f, const struct hr_nt_log *log)
{
	size_t i, k;
	const char *base = strrchr(log->path, '/');
	int any = 0;
	base = base ? base + 1 : log->path;

	for (i = 0; i < log->nruns; i++) {
		const struct hr_nt_run *r = &log->runs[i];
		struct hr_group *g;
		struct hr_run *run;
		char name[300], src[4200];
		int hosts, all_eq = 1, j;

		if (!r->nrows && !r->n_errors && !r->nranks_listed)
			continue;
		any = 1;
		GROW(f->groups, f->ngroups, g);
		if (!g)
			return CH_ERR_RUNTIME;
		if (log->nruns > 1)
			snprintf(name, sizeof(name), "%s#%zu", base, i + 1);
		else
			snprintf(name, sizeof(name), "%s", base);
		if (r->first_line > 0)
			snprintf(src, sizeof(src), "%s:%d", log->path, r->first_line);
		else
			snprintf(src, sizeof(src), "%s", log->path);
		g->name = strdup(name);
		g->algo = strdup(r->algo[0] ? r->algo : "default");
		g->collective = strdup(r->collective[0] ? r->collective : "unknown");
		g->collective_from = hl_dup_or_null(r->collective_from[0] ? r->collective_from : NULL);
		g->backend = strdup("nccl-tests");
		g->source = strdup(src);
		g->nranks = hr_nt_nranks(r);
		g->gpu_name = r->nranks_listed && r->ranks[0].name[0] ? strdup(r->ranks[0].name) : NULL;
		g->reported_avg_gbps = r->has_avg ? r->avg_reported_gbps : NAN;
		g->avg_busbw_gbps = hr_nt_avg_busbw(r);
		g->large_busbw_gbps = hr_nt_large_busbw(r, &g->large_bytes);
		g->wrong_total = hr_nt_wrong_total(r);
		g->complete = r->complete;
		if (r->n_errors)
			g->failure = strdup(r->first_error);
		else if (!r->complete)
			g->failure = strdup(r->nrows ? "the log ends before the run's footer" : "no results table");
		if (!g->name || !g->algo || !g->collective || !g->backend || !g->source)
			return CH_ERR_RUNTIME;
		for (j = 0; j < r->nranks_listed; j++) {
			int n2 = hr_fleet_node(f, r->ranks[j].host);
			if (n2 < 0 || group_add_node(g, n2))
				return CH_ERR_RUNTIME;
			if (r->ranks[j].name[0] && !f->nodes[n2].cfg[HR_CFG_GPU_MODEL])
				hl_set_cfg(f, n2, HR_CFG_GPU_MODEL, r->ranks[j].name);
			if (r->nccl_version[0] && !f->nodes[n2].cfg[HR_CFG_NCCL])
				hl_set_cfg(f, n2, HR_CFG_NCCL, r->nccl_version);
		}
		hosts = g->nnodes;
		g->kind = hosts == 0 ? HR_G_UNKNOWN : hosts == 1 ? HR_G_NODE : hosts == 2 ? HR_G_PAIR : HR_G_WORLD;
		if (r->nrows) {
			g->rows = calloc(r->nrows, sizeof(*g->rows));
			if (!g->rows)
				return CH_ERR_RUNTIME;
		}
		for (k = 0; k < r->nrows; k++) {
			const struct hr_nt_row *s = &r->rows[k];
			struct hr_row *d = &g->rows[g->nrows++];
			d->bytes = s->bytes;
			/* a log has the loop time only: no per-call spread, no re-measurement */
			d->oop.time_us = s->oop.present && s->oop.time_us > 0 ? s->oop.time_us : NAN;
			d->ip.time_us = s->ip.present && s->ip.time_us > 0 ? s->ip.time_us : NAN;
			d->oop.median_us = d->oop.cv = d->oop.confirm_busbw = d->oop.confirm_cv = NAN;
			d->ip.median_us = d->ip.cv = d->ip.confirm_busbw = d->ip.confirm_cv = NAN;
			d->oop.confirm_loop_busbw = d->ip.confirm_loop_busbw = NAN;
			d->busbw_oop_gbps = s->oop.present ? s->oop.busbw_gbps : NAN;
			d->busbw_ip_gbps = s->ip.present ? s->ip.busbw_gbps : NAN;
			d->wrong = r->format == HR_NT_FMT_ERROR ? 0 :
				   (s->oop.wrong > 0 ? s->oop.wrong : 0) + (s->ip.wrong > 0 ? s->ip.wrong : 0);
			if ((s->oop.present && s->oop.busbw_gbps != s->oop.algbw_gbps) ||
			    (s->ip.present && s->ip.busbw_gbps != s->ip.algbw_gbps))
				all_eq = 0;
		}
		if (r->format == HR_NT_FMT_ERROR && r->nrows && all_eq && g->nranks > 1 &&
		    !factor_one(g->collective)) {
			/* Old builds printed busbw = algbw. Which of the two is
			 * today's shows against size / time: the measured bus
			 * factor is (n-1)/n when the printed busbw is today's
			 * busbw (the old algbw carried the factor), 1 when the
			 * printed busbw is today's algbw. */
			double today = (double)(g->nranks - 1) / g->nranks;
			if (!isnan(r->busbw_ratio) && fabs(r->busbw_ratio / today - 1) <= 0.05)
				hr_issue_add(&f->issues, HR_ISSUE_NOTE, log->path, r->header_line, 0,
					     "old nccl-tests format: algbw is printed equal to busbw for %s; the printed busbw is size/time x (n-1)/n (%.3f measured for %d ranks), today's busbw, so it is compared as is; today's algbw would be size/time",
					     g->collective, r->busbw_ratio, g->nranks);
			else {
				g->busbw_is_algbw = 1;
				hr_issue_add(&f->issues, HR_ISSUE_NOTE, log->path, r->header_line, 0,
					     "old nccl-tests format: busbw is printed equal to algbw for %s%s; today's busbw would be algbw x (n-1)/n, so it is compared only with logs of the same format",
					     g->collective, isnan(r->busbw_ratio) ? " (the time column could not confirm which)" : " (size/time, as today's algbw)");
			}
		}

		GROW(f->runs, f->nruns, run);
		if (!run)
			return CH_ERR_RUNTIME;
		run->path = strdup(src);
		run->tool = strdup("nccl-tests");
		run->status = strdup(r->complete && !r->n_errors && g->wrong_total == 0 ? "ok" :
				     !r->complete ? "incomplete" : "failed");
		run->reason = hl_dup_or_null(g->failure);
		run->node = g->nnodes ? g->nodes[0] : -1;
		run->nnodes = g->nnodes > 0 ? g->nnodes : 1;
		run->wall_sec = NAN;
		run->cpu_j = run->gpu_j = NAN;
		run->cpu_packages = 0; /* unknown: nccl-tests logs carry no host section */
		if (!run->path || !run->tool || !run->status)
			return CH_ERR_RUNTIME;
	}
	if (any)
		f->files_read++;
	else
		hr_issue_add(&f->issues, HR_ISSUE_SKIPPED, log->path, 0, 0,
			     "nccl-tests log without any run (no header, rows or device list); skipped");
	return 0;
}

void hr_fleet_drop_device_points(struct hr_fleet *f, size_t i)
{
	free(f->devices[i].points);
	f->devices[i].points = NULL;
	f->devices[i].npoints = 0;
}

void hr_fleet_drop_points(struct hr_fleet *f)
{
	size_t i;
	for (i = 0; i < f->ndevices; i++)
		hr_fleet_drop_device_points(f, i);
}

void hr_fleet_drop_devices(struct hr_fleet *f)
{
	size_t i;
	for (i = 0; i < f->ndevices; i++) {
		struct hr_device *d = &f->devices[i];
		/* device, kind, name, sku, status, reason, clocks and source are
		 * the fleet's (hr_fleet_str()) */
		free(d->pci_bus_id); free(d->throttle_reasons);
		free(d->points); free(d->host_link);
		if (d->power) {
			free(d->power->pts); free(d->power->rec_why); free(d->power);
		}
	}
	free(f->devices);
	f->devices = NULL;
	f->ndevices = 0;
}

void hr_fleet_release(struct hr_fleet *f)
{
	size_t i, k;
	for (i = 0; i < f->nnodes; i++) {
		free(f->nodes[i].name);
		free(f->nodes[i].cpu_model);
		for (k = 0; k < HR_CFG_NKEYS; k++)
			free(f->nodes[i].cfg[k]);
		hr_inventory_node_release(&f->nodes[i]);
	}
	hr_fleet_drop_devices(f);
	for (i = 0; i < f->ngroups; i++) {
		struct hr_group *g = &f->groups[i];
		free(g->name); free(g->algo); free(g->collective); free(g->collective_from); free(g->backend);
		free(g->nodes); free(g->gpu_name); free(g->rows); free(g->failure); free(g->source);
	}
	for (i = 0; i < f->nstragglers; i++)
		free(f->stragglers[i].source);
	for (i = 0; i < f->nloaders; i++) {
		struct hr_loader *l = &f->loaders[i];
		for (k = 0; k < l->ncfgs; k++) {
			free(l->cfgs[k].name); free(l->cfgs[k].placement);
			free(l->cfgs[k].verdict); free(l->cfgs[k].reasons);
		}
		free(l->cfgs); free(l->verdict); free(l->rec_placement); free(l->rec_numactl);
		free(l->rec_config); free(l->rec_verdict);
		free(l->rec_hwloc_bind); free(l->rec_slurm); free(l->source);
	}
	for (i = 0; i < f->nruns; i++) {
		free(f->runs[i].path); free(f->runs[i].tool); free(f->runs[i].status);
		free(f->runs[i].reason); free(f->runs[i].energy_source);
	}
	free(f->nodes); free(f->devices); free(f->groups); free(f->stragglers);
	free(f->loaders); free(f->runs);
	hr_ckpt_release(f);
	hl_kfault_release(f);
	hr_dcgm_release(f);
	hr_nvbw_release(f);
	hr_issues_release(&f->issues);
	json_decref(f->node_index);
	json_decref(f->texts);
	json_decref(f->kind_index);
	free(f->kinds);
	json_decref(f->strs);
	free(f->text_v);
	hr_index_release(f);
	memset(f, 0, sizeof(*f));
}
