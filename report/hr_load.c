/*
 * hr_load.c - read result files and nccl-tests logs into the fleet model.
 */
#include "report/hr_model.h"
#include "report/hr_checkpoint.h"
#include "report/hr_inventory.h"
#include "report/hr_cost.h"
#include "report/hr_util.h"
#include "base/ch_common.h"
#include "base/ch_result.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HR_MAX_INPUT_BYTES (512u << 20)

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

/* ---------------------------------------------------------- growth */

#define GROW(arr, n, out)                                                       \
	do {                                                                    \
		void *v_ = realloc((arr), ((n) + 1) * sizeof(*(arr)));          \
		if (!v_) { (out) = NULL; break; }                               \
		(arr) = v_;                                                     \
		(out) = &(arr)[(n)++];                                          \
		memset((out), 0, sizeof(*(out)));                               \
	} while (0)

int hr_fleet_node(struct hr_fleet *f, const char *name)
{
	size_t i;
	struct hr_node *n;
	for (i = 0; i < f->nnodes; i++)
		if (!strcmp(f->nodes[i].name, name))
			return (int)i;
	GROW(f->nodes, f->nnodes, n);
	if (!n)
		return -1;
	n->name = strdup(name);
	if (!n->name) {
		f->nnodes--;
		return -1;
	}
	return (int)(f->nnodes - 1);
}

/* Set a configuration value of a node (later files win: newer nights sort
 * later). */
static void set_cfg(struct hr_fleet *f, int node, int key, const char *val)
{
	char *v;
	if (node < 0 || !val || !*val)
		return;
	v = strdup(val);
	if (!v)
		return;
	free(f->nodes[node].cfg[key]);
	f->nodes[node].cfg[key] = v;
}

/* ---------------------------------------------------------- JSON access */

struct ctx {
	struct hr_fleet *f;
	const char *path;
	int oom;
};

static const char *jstr(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

static double jnum(const json_t *o, const char *key)
{
	const json_t *v = json_object_get(o, key);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

static int jbool(const json_t *o, const char *key)
{
	return json_is_true(json_object_get(o, key));
}

static void skip(struct ctx *c, const char *fmt, const char *where, const char *key)
{
	hr_issue_add(&c->f->issues, HR_ISSUE_SKIPPED, c->path, 0, 0, fmt, where, key);
}

/* A non-negative finite number, or NAN (and an issue) when @required. */
static double num_field(struct ctx *c, const json_t *o, const char *key,
			const char *where, int required)
{
	const json_t *v = json_object_get(o, key);
	double x;
	if (!v || json_is_null(v)) {
		if (required)
			skip(c, "%s: missing '%s'; skipped", where, key);
		return NAN;
	}
	if (!json_is_number(v)) {
		skip(c, "%s: '%s' is not a number; skipped", where, key);
		return NAN;
	}
	x = json_number_value(v);
	if (!isfinite(x) || x < 0) {
		hr_issue_add(&c->f->issues, HR_ISSUE_SKIPPED, c->path, 0, 0,
			     "%s: '%s' is '%g' (must be a finite number >= 0); skipped", where, key, x);
		return NAN;
	}
	return x;
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* Join an array of strings, or copy a string, into "a; b". NULL when empty. */
static char *join_strings(const json_t *v)
{
	struct hr_buf b = { 0 };
	size_t i;
	json_t *e;
	if (json_is_string(v))
		return strlen(json_string_value(v)) ? strdup(json_string_value(v)) : NULL;
	json_array_foreach(v, i, e) {
		if (!json_is_string(e))
			continue;
		if (b.len)
			hr_buf_puts(&b, "; ");
		hr_buf_puts(&b, json_string_value(e));
	}
	return b.s;
}

/* ---------------------------------------------------------- roofline */

/* Throttle reasons from roofline's telemetry: {"before": sample, "after":
 * sample} where a sample (ch_nvml_sample_json) has "clock_event_reasons"
 * and "throttled"; reasons are kept only from samples that were throttled. */
static void add_reasons(const json_t *sample, struct hr_buf *rb)
{
	const json_t *r = json_object_get(sample, "clock_event_reasons"), *e;
	size_t i;
	if (!json_is_true(json_object_get(sample, "throttled")))
		return;
	json_array_foreach(r, i, e) {
		const char *name = json_string_value(e);
		if (!name || (rb->s && strstr(rb->s, name)))
			continue;
		hr_buf_printf(rb, "%s%s", rb->len ? ", " : "", name);
	}
	if (json_is_string(r) && !(rb->s && strstr(rb->s, json_string_value(r))))
		hr_buf_printf(rb, "%s%s", rb->len ? ", " : "", json_string_value(r));
}

static void telemetry_info(const json_t *tel, char **reasons)
{
	struct hr_buf rb = { 0 };
	if (!json_is_object(tel))
		return;
	if (*reasons)
		hr_buf_puts(&rb, *reasons);
	add_reasons(tel, &rb);
	add_reasons(json_object_get(tel, "before"), &rb);
	add_reasons(json_object_get(tel, "after"), &rb);
	if (rb.s && (!*reasons || strcmp(rb.s, *reasons))) {
		free(*reasons);
		*reasons = rb.s;
	} else {
		hr_buf_release(&rb);
	}
}

static int load_roofline(struct ctx *c, const json_t *res, int node)
{
	const json_t *devs = json_object_get(res, "devices");
	json_t *d;
	size_t i;

	if (!json_is_array(devs)) {
		skip(c, "%s: missing '%s' array; no devices read", "results", "devices");
		return 0;
	}
	json_array_foreach(devs, i, d) {
		struct hr_device *dv;
		const json_t *roofs, *cg, *pts, *p;
		char where[64];
		const char *id, *name, *sku, *st;
		size_t k;
		int dnode;

		snprintf(where, sizeof(where), "results.devices[%zu]", i);
		if (!json_is_object(d) || !(id = jstr(d, "device"))) {
			skip(c, "%s: not an object with a '%s' string; skipped", where, "device");
			continue;
		}
		st = jstr(d, "status");
		if (!st) {
			skip(c, "%s: missing '%s'; skipped", where, "status");
			continue;
		}
		dnode = node;
		if (jstr(d, "host")) { /* under mpirun, devices of several hosts */
			dnode = hr_fleet_node(c->f, jstr(d, "host"));
			if (dnode < 0)
				return CH_ERR_RUNTIME;
		}
		GROW(c->f->devices, c->f->ndevices, dv);
		if (!dv)
			return CH_ERR_RUNTIME;
		dv->node = dnode;
		dv->device = strdup(id);
		dv->kind = strdup(jstr(d, "kind") ? jstr(d, "kind") : (strncmp(id, "gpu", 3) ? "cpu" : "gpu"));
		name = jstr(d, "name");
		dv->name = dup_or_null(name);
		dv->pci_bus_id = dup_or_null(jstr(d, "pci_bus_id"));
		dv->status = strdup(st);
		dv->reason = dup_or_null(jstr(d, "reason"));
		dv->source = strdup(c->path);
		dv->memory_gbps = NAN;
		for (k = 0; k < CH_NDTYPES; k++)
			dv->compute_gflops[k] = NAN;
		if (!dv->device || !dv->kind || !dv->status || !dv->source)
			return CH_ERR_RUNTIME;
		sku = jstr(d, "sku");
		if (!strcmp(dv->kind, "gpu")) {
			int n2, j;
			const struct ch_datasheet *t = ch_datasheet_table(&n2);
			for (j = 0; sku && j < n2; j++)
				if (!strcmp(t[j].sku, sku))
					dv->ds = &t[j];
			if (!dv->ds && name)
				dv->ds = ch_datasheet_lookup(name);
			if (dv->ds)
				dv->sku = strdup(dv->ds->sku);
			if (name && strcmp(st, "unavailable")) {
				const char *cur = c->f->nodes[dnode].cfg[HR_CFG_GPU_MODEL];
				if (!cur || !strcmp(cur, name) || strstr(cur, "mixed"))
					set_cfg(c->f, dnode, HR_CFG_GPU_MODEL, cur && strstr(cur, "mixed") ? cur : name);
				else {
					char mixed[300];
					snprintf(mixed, sizeof(mixed), "mixed: %s, %s", cur, name);
					set_cfg(c->f, dnode, HR_CFG_GPU_MODEL, mixed);
				}
			}
		}
		dv->throttled = jbool(d, "throttled");
		if (!strcmp(st, "unavailable"))
			continue;
		roofs = json_object_get(d, "roofs");
		if (!json_is_object(roofs)) {
			if (!strcmp(st, "ok"))
				skip(c, "%s: missing '%s' object; its roofs are not used", where, "roofs");
		} else {
			char w2[96];
			snprintf(w2, sizeof(w2), "%s.roofs", where);
			dv->memory_gbps = num_field(c, roofs, "memory_gbps", w2,
						    !strcmp(st, "ok") && !json_object_size(json_object_get(roofs, "compute_gflops")));
			cg = json_object_get(roofs, "compute_gflops");
			if (json_is_object(cg)) {
				const char *dt;
				json_t *v;
				snprintf(w2, sizeof(w2), "%s.roofs.compute_gflops", where);
				json_object_foreach((json_t *)cg, dt, v) {
					int di = ch_dtype_parse(dt);
					if (di < 0) {
						hr_issue_add(&c->f->issues, HR_ISSUE_NOTE, c->path, 0, 0,
							     "%s: unknown dtype '%s'; ignored", w2, dt);
						continue;
					}
					if (json_is_null(v))
						continue;
					dv->compute_gflops[di] = num_field(c, cg, dt, w2, 1);
				}
			}
		}
		/* clocks (the device's maximum SM clock, roofline's config.clock_mhz)
		 * and throttle reasons (device level, then every point's telemetry) */
		if (json_is_string(json_object_get(d, "clocks")))
			dv->clocks = strdup(jstr(d, "clocks"));
		else if (jnum(json_object_get(d, "config"), "clock_mhz") > 0) {
			char ck[64];
			snprintf(ck, sizeof(ck), "%.0f MHz", jnum(json_object_get(d, "config"), "clock_mhz"));
			dv->clocks = strdup(ck);
		}
		dv->throttle_reasons = join_strings(json_object_get(d, "throttle_reasons"));
		telemetry_info(json_object_get(d, "telemetry"), &dv->throttle_reasons);
		pts = json_object_get(d, "points");
		if (json_is_array(pts) && json_array_size(pts)) {
			dv->points = calloc(json_array_size(pts), sizeof(*dv->points));
			if (!dv->points)
				return CH_ERR_RUNTIME;
		}
		json_array_foreach(pts, k, p) {
			struct hr_point *pt = &dv->points[dv->npoints];
			const json_t *vv = json_object_get(p, "valid");
			if (!json_is_object(p) || (vv && !json_is_true(vv)))
				continue;
			pt->ai = jnum(p, "ai_flop_per_byte");
			pt->gflops = jnum(p, "gflops");
			pt->gbps = jnum(p, "gbps");
			if (!(pt->ai > 0) || !isfinite(pt->gflops))
				continue;
			snprintf(pt->kernel, sizeof(pt->kernel), "%s", jstr(p, "kernel") ? jstr(p, "kernel") : "?");
			snprintf(pt->family, sizeof(pt->family), "%s", jstr(p, "family") ? jstr(p, "family") : "");
			snprintf(pt->dtype, sizeof(pt->dtype), "%s", jstr(p, "dtype") ? jstr(p, "dtype") : "");
			pt->throttled = jbool(p, "throttled");
			if (pt->throttled)
				dv->throttled = 1;
			telemetry_info(json_object_get(p, "telemetry"), &dv->throttle_reasons);
			dv->npoints++;
		}
		if (dv->clocks && !strcmp(dv->kind, "gpu"))
			set_cfg(c->f, dnode, HR_CFG_CLOCKS, dv->clocks);
	}
	return 0;
}

/* ---------------------------------------------------------- allreduce_bw */

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

static int load_allreduce(struct ctx *c, const json_t *doc, const json_t *res, int node,
			  struct hr_run *run)
{
	const json_t *layout = json_object_get(json_object_get(doc, "ranks"), "layout");
	const json_t *sweeps = json_object_get(res, "sweeps");
	const char *backend = jstr(res, "backend");
	const char *gpu_name = NULL;
	json_t *v;
	size_t i, nl = json_array_size(layout);
	int *rank_node = NULL;
	int hosts = 0;

	if (nl) {
		rank_node = calloc(nl, sizeof(*rank_node));
		if (!rank_node)
			return CH_ERR_RUNTIME;
	}
	json_array_foreach(layout, i, v) {
		/* the node name sweeps use: the host, or "nodeK" with --node-size */
		const char *h = jstr(v, "node_name") ? jstr(v, "node_name") : jstr(v, "host");
		int r = (int)jnum(v, "rank"), n2;
		if (!h || !(r >= 0 && (size_t)r < nl)) {
			hr_issue_add(&c->f->issues, HR_ISSUE_SKIPPED, c->path, 0, 0,
				     "ranks.layout[%zu]: needs 'rank' (0..%zu) and 'host'; skipped", i, nl - 1);
			continue;
		}
		n2 = hr_fleet_node(c->f, h);
		if (n2 < 0) {
			free(rank_node);
			return CH_ERR_RUNTIME;
		}
		rank_node[r] = n2 + 1; /* 0: unknown */
		if (json_is_integer(json_object_get(v, "gpu_index")) || json_is_number(json_object_get(v, "gpu_index"))) {
			const char *gn = jstr(v, "gpu_name");
			const struct ch_datasheet *ds = gn ? ch_datasheet_lookup(gn) : NULL;
			run->gpus_used++;
			run->gpu_rated_w += hr_gpu_rated_w(ds, NULL);
			if (gn) {
				gpu_name = gn;
				if (!c->f->nodes[n2].cfg[HR_CFG_GPU_MODEL])
					set_cfg(c->f, n2, HR_CFG_GPU_MODEL, gn);
			}
		}
	}
	/* distinct hosts of the layout (not node names: --node-size splits one
	 * host into several "nodes", and the CPU packages are the host's) */
	for (i = 0; i < nl; i++) {
		size_t j;
		int dup = 0;
		const char *hi = jstr(json_array_get(layout, i), "host");
		if (!hi)
			continue;
		for (j = 0; j < i; j++)
			if (hr_streq(jstr(json_array_get(layout, j), "host"), hi))
				dup = 1;
		if (!dup)
			hosts++;
	}
	if (hosts > 0)
		run->nnodes = hosts;
	if (!json_is_array(sweeps))
		skip(c, "%s: missing '%s' array; no sweeps read", "results", "sweeps");
	json_array_foreach(sweeps, i, v) {
		struct hr_group *g;
		const json_t *rows = json_object_get(v, "rows"), *nodes = json_object_get(v, "nodes"), *r;
		char where[64];
		size_t k;

		snprintf(where, sizeof(where), "results.sweeps[%zu]", i);
		if (!json_is_object(v) || !json_is_array(rows)) {
			skip(c, "%s: not an object with a '%s' array; skipped", where, "rows");
			continue;
		}
		GROW(c->f->groups, c->f->ngroups, g);
		if (!g) {
			free(rank_node);
			return CH_ERR_RUNTIME;
		}
		g->kind = kind_from_name(jstr(v, "group_kind"));
		g->name = strdup(jstr(v, "group_name") ? jstr(v, "group_name") : "world");
		g->algo = strdup(jstr(v, "algo") ? jstr(v, "algo") : "default");
		g->collective = strdup("all_reduce");
		g->backend = strdup(backend ? backend : "?");
		g->source = strdup(c->path);
		g->gpu_name = dup_or_null(gpu_name);
		g->nranks = (int)jnum(v, "nranks");
		g->reported_avg_gbps = NAN;
		g->complete = run->status && !strcmp(run->status, "ok");
		if (!g->name || !g->algo || !g->collective || !g->backend || !g->source) {
			free(rank_node);
			return CH_ERR_RUNTIME;
		}
		/* hosts: the sweep's "nodes", else through its ranks */
		if (json_is_array(nodes) && json_array_size(nodes)) {
			json_t *h;
			json_array_foreach(nodes, k, h) {
				int n2;
				if (!json_is_string(h))
					continue;
				n2 = hr_fleet_node(c->f, json_string_value(h));
				if (n2 < 0 || group_add_node(g, n2)) {
					free(rank_node);
					return CH_ERR_RUNTIME;
				}
			}
		} else {
			json_t *rk;
			json_array_foreach(json_object_get(v, "ranks"), k, rk) {
				json_int_t rr = json_integer_value(rk);
				if (rank_node && rr >= 0 && (size_t)rr < nl && rank_node[rr] &&
				    group_add_node(g, rank_node[rr] - 1)) {
					free(rank_node);
					return CH_ERR_RUNTIME;
				}
			}
		}
		if (g->nranks <= 0)
			g->nranks = (int)json_array_size(json_object_get(v, "ranks"));
		if (json_array_size(rows)) {
			g->rows = calloc(json_array_size(rows), sizeof(*g->rows));
			if (!g->rows) {
				free(rank_node);
				return CH_ERR_RUNTIME;
			}
		}
		json_array_foreach(rows, k, r) {
			struct hr_row *row = &g->rows[g->nrows];
			const json_t *oop = json_object_get(r, "out_of_place");
			const json_t *ip = json_object_get(r, "in_place");
			char w2[96];
			snprintf(w2, sizeof(w2), "%s.rows[%zu]", where, k);
			row->bytes = num_field(c, r, "bytes", w2, 1);
			row->busbw_oop_gbps = json_is_object(oop) ? jnum(oop, "busbw_gbps") : NAN;
			row->busbw_ip_gbps = json_is_object(ip) ? jnum(ip, "busbw_gbps") : NAN;
			if (isnan(row->bytes) || (isnan(row->busbw_oop_gbps) && isnan(row->busbw_ip_gbps))) {
				if (!isnan(row->bytes))
					skip(c, "%s: no numeric '%s' in out_of_place or in_place; skipped", w2, "busbw_gbps");
				continue;
			}
			row->wrong = (json_is_object(oop) && jnum(oop, "wrong") > 0 ? jnum(oop, "wrong") : 0) +
				     (json_is_object(ip) && jnum(ip, "wrong") > 0 ? jnum(ip, "wrong") : 0);
			g->wrong_total += row->wrong;
			g->nrows++;
		}
		g->large_busbw_gbps = jnum(v, "large_msg_busbw_gbps");
		g->avg_busbw_gbps = jnum(v, "avg_busbw_gbps");
		g->large_bytes = NAN;
		for (k = 0; k < g->nrows; k++)
			if (isnan(g->large_bytes) || g->rows[k].bytes > g->large_bytes) {
				g->large_bytes = g->rows[k].bytes;
				if (isnan(jnum(v, "large_msg_busbw_gbps")))
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
		if (g->nnodes == 0 && node >= 0 && (g->kind == HR_G_NODE || hosts <= 1))
			group_add_node(g, node);
	}
	if (jnum(res, "wrong_total") > 0 && c->f->ngroups) {
		/* wrong elements not attributed to a row: keep them on record */
		double rows_wrong = 0;
		size_t k;
		for (k = 0; k < c->f->ngroups; k++)
			if (!strcmp(c->f->groups[k].source, c->path))
				rows_wrong += c->f->groups[k].wrong_total;
		if (rows_wrong == 0)
			hr_issue_add(&c->f->issues, HR_ISSUE_NOTE, c->path, 0, 0,
				     "results.wrong_total is %.0f but no row has wrong elements",
				     jnum(res, "wrong_total"));
	}
	json_array_foreach(json_object_get(res, "stragglers"), i, v) {
		struct hr_straggler *s;
		const char *h = jstr(v, "node") ? jstr(v, "node") : jstr(v, "host");
		int n2, r = (int)jnum(v, "rank");
		if (!h && rank_node && r >= 0 && (size_t)r < nl && rank_node[r])
			h = c->f->nodes[rank_node[r] - 1].name;
		if (!h) {
			hr_issue_add(&c->f->issues, HR_ISSUE_SKIPPED, c->path, 0, 0,
				     "results.stragglers[%zu]: no 'host' and no rank in the layout; skipped", i);
			continue;
		}
		n2 = hr_fleet_node(c->f, h);
		GROW(c->f->stragglers, c->f->nstragglers, s);
		if (n2 < 0 || !s) {
			free(rank_node);
			return CH_ERR_RUNTIME;
		}
		s->node = n2;
		s->rank = r;
		s->slowest_fraction = jnum(v, "slowest_fraction");
		s->excess_pct = jnum(v, "excess_pct");
		s->source = strdup(c->path);
	}
	free(rank_node);
	return 0;
}

/* ---------------------------------------------------------- loader */

static int load_loader(struct ctx *c, const json_t *res, int node)
{
	const json_t *cfgs = json_object_get(res, "configs"), *rec, *v;
	struct hr_loader *l;
	size_t i;

	if (jstr(res, "mode") && !strcmp(jstr(res, "mode"), "plan")) {
		hr_issue_add(&c->f->issues, HR_ISSUE_NOTE, c->path, 0, 0,
			     "loader_contention plan (--topology): nothing measured; not used");
		return 0;
	}
	if (!json_is_array(cfgs)) {
		skip(c, "%s: missing '%s' array; loader results not used", "results", "configs");
		return 0;
	}
	GROW(c->f->loaders, c->f->nloaders, l);
	if (!l)
		return CH_ERR_RUNTIME;
	l->node = node;
	l->verdict = dup_or_null(jstr(res, "verdict"));
	l->mask_collapsed = jbool(res, "mask_collapsed");
	l->source = strdup(c->path);
	rec = json_object_get(res, "recommendation");
	if (json_is_object(rec)) {
		l->rec_placement = dup_or_null(jstr(rec, "placement"));
		l->rec_workers = json_is_number(json_object_get(rec, "workers")) ? (int)jnum(rec, "workers") : -1;
		l->rec_config = dup_or_null(jstr(rec, "config"));
		l->rec_verdict = dup_or_null(jstr(rec, "verdict"));
		l->rec_numactl = dup_or_null(jstr(rec, "numactl"));
		l->rec_hwloc_bind = dup_or_null(jstr(rec, "hwloc_bind"));
		l->rec_slurm = dup_or_null(jstr(rec, "slurm"));
	}
	if (json_array_size(cfgs)) {
		l->cfgs = calloc(json_array_size(cfgs), sizeof(*l->cfgs));
		if (!l->cfgs)
			return CH_ERR_RUNTIME;
	}
	json_array_foreach(cfgs, i, v) {
		struct hr_loader_cfg *k = &l->cfgs[l->ncfgs];
		const json_t *lat = json_object_get(v, "lateness_us");
		char where[64];
		snprintf(where, sizeof(where), "results.configs[%zu]", i);
		if (!json_is_object(v) || !jstr(v, "placement") || !json_is_object(lat)) {
			skip(c, "%s: needs '%s' and a 'lateness_us' object; skipped", where, "placement");
			continue;
		}
		k->name = strdup(jstr(v, "name") ? jstr(v, "name") : jstr(v, "placement"));
		k->placement = strdup(jstr(v, "placement"));
		k->workers = (int)jnum(v, "workers");
		k->hog_util = jnum(v, "hog_util");
		k->lateness_p50_us = jnum(lat, "p50");
		k->lateness_p99_us = jnum(lat, "p99");
		k->lateness_max_us = jnum(lat, "max");
		k->input_wait_frac = jnum(v, "input_wait_frac");
		k->accel_util = jnum(v, "accel_util");
		k->verdict = dup_or_null(jstr(v, "verdict"));
		k->reasons = join_strings(json_object_get(v, "reasons"));
		if (isnan(k->lateness_p99_us)) {
			skip(c, "%s: missing '%s'; skipped", where, "lateness_us.p99");
			free(k->name);
			free(k->placement);
			free(k->verdict);
			free(k->reasons);
			memset(k, 0, sizeof(*k));
			continue;
		}
		l->ncfgs++;
	}
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

/* ---------------------------------------------------------- envelope */

static int load_result(struct ctx *c, const json_t *doc)
{
	const json_t *host = json_object_get(doc, "host"), *sw, *res, *en, *gpus;
	const char *tool = jstr(doc, "tool"), *hn, *st;
	json_int_t ver;
	struct hr_run *run;
	int node, rc = 0;
	time_t t0 = 0, t1 = 0;

	if (!json_is_integer(json_object_get(doc, "schema_version"))) {
		skip(c, "%s: missing '%s'; file skipped", "envelope", "schema_version");
		return 0;
	}
	ver = json_integer_value(json_object_get(doc, "schema_version"));
	if (ver != CH_RESULT_SCHEMA_VERSION) {
		hr_issue_add(&c->f->issues, HR_ISSUE_SKIPPED, c->path, 0, 0,
			     "schema_version '%lld' is not supported (this health_report reads %d); file skipped",
			     (long long)ver, CH_RESULT_SCHEMA_VERSION);
		return 0;
	}
	if (!tool || (strcmp(tool, "roofline") && strcmp(tool, "allreduce_bw") &&
		      strcmp(tool, "loader_contention") && strcmp(tool, "checkpoint_io"))) {
		hr_issue_add(&c->f->issues, HR_ISSUE_SKIPPED, c->path, 0, 0,
			     "unknown tool '%s' (expected roofline, allreduce_bw, loader_contention or checkpoint_io); file skipped",
			     tool ? tool : "(none)");
		return 0;
	}
	if (!json_is_object(host) || !(hn = jstr(host, "hostname"))) {
		skip(c, "%s: missing '%s'; file skipped", "envelope", "host.hostname");
		return 0;
	}
	res = json_object_get(doc, "results");
	if (!json_is_object(res)) {
		skip(c, "%s: missing '%s' object; file skipped", "envelope", "results");
		return 0;
	}
	st = jstr(doc, "status");
	node = hr_fleet_node(c->f, hn);
	if (node < 0)
		return CH_ERR_RUNTIME;
	GROW(c->f->runs, c->f->nruns, run);
	if (!run)
		return CH_ERR_RUNTIME;
	run->path = strdup(c->path);
	run->tool = strdup(tool);
	run->status = strdup(st ? st : "unknown");
	run->reason = dup_or_null(jstr(doc, "reason"));
	run->node = node;
	run->nnodes = 1;
	run->wall_sec = NAN;
	run->cpu_j = run->gpu_j = NAN;
	if (!run->path || !run->tool || !run->status)
		return CH_ERR_RUNTIME;
	if (hr_parse_utc(jstr(doc, "start_utc"), &t0) == 0 &&
	    hr_parse_utc(jstr(doc, "end_utc"), &t1) == 0 && t1 >= t0) {
		run->start = t0;
		run->end = t1;
		run->wall_sec = difftime(t1, t0);
	}
	en = json_object_get(doc, "energy");
	if (json_is_object(en)) {
		run->cpu_j = jnum(en, "cpu_j");
		run->gpu_j = jnum(en, "gpu_j");
		run->energy_source = dup_or_null(jstr(en, "source"));
		run->energy_measured = !isnan(run->cpu_j) || !isnan(run->gpu_j);
		if (isnan(run->wall_sec) && jnum(en, "wall_sec") >= 0)
			run->wall_sec = jnum(en, "wall_sec");
	}
	run->cpu_packages = json_is_number(json_object_get(host, "packages")) ?
		(int)jnum(host, "packages") : 1;
	if (json_is_string(json_object_get(host, "cpu_model")) && !c->f->nodes[node].cpu_model)
		c->f->nodes[node].cpu_model = strdup(jstr(host, "cpu_model"));
	gpus = json_object_get(host, "gpus");
	if (json_is_array(gpus) && (int)json_array_size(gpus) > c->f->nodes[node].ngpus)
		c->f->nodes[node].ngpus = (int)json_array_size(gpus);
	sw = json_object_get(doc, "software");
	if (json_is_object(sw)) {
		set_cfg(c->f, node, HR_CFG_DRIVER, jstr(sw, "cuda_driver") ? jstr(sw, "cuda_driver") : jstr(sw, "nvml_driver"));
		set_cfg(c->f, node, HR_CFG_CUDA, jstr(sw, "cuda_runtime"));
		set_cfg(c->f, node, HR_CFG_NCCL, jstr(sw, "nccl"));
		set_cfg(c->f, node, HR_CFG_MPI, jstr(sw, "mpi"));
	}
	if (hr_inventory_load(c->f, node, host, c->path, t0) != 0)
		return CH_ERR_RUNTIME;
	if (st && strcmp(st, "ok") && strcmp(st, "failed") && strcmp(st, "unavailable"))
		hr_issue_add(&c->f->issues, HR_ISSUE_TRUNCATED, c->path, 0, 0,
			     "%s run has status '%s'%s%s: its results are partial", tool, st,
			     jstr(doc, "reason") ? ": " : "", jstr(doc, "reason") ? jstr(doc, "reason") : "");
	if (!strcmp(tool, "roofline")) {
		size_t d0 = c->f->ndevices, i;
		rc = load_roofline(c, res, node);
		for (i = d0; i < c->f->ndevices; i++)
			if (!strcmp(c->f->devices[i].kind, "gpu") &&
			    strcmp(c->f->devices[i].status, "unavailable")) {
				run->gpus_used++;
				run->gpu_rated_w += hr_gpu_rated_w(c->f->devices[i].ds, NULL);
			}
	} else if (!strcmp(tool, "allreduce_bw")) {
		rc = load_allreduce(c, doc, res, node, run);
	} else if (!strcmp(tool, "checkpoint_io")) {
		rc = hr_ckpt_load(c->f, c->path, doc, res);
	} else {
		rc = load_loader(c, res, node);
	}
	run->cpu_packages *= run->nnodes > 0 ? run->nnodes : 1;
	c->f->files_read++;
	return rc;
}

/* nccl-tests -J: "start_time"/"end_time" are local times ("%Y-%m-%d
 * %H:%M:%S", zone unknown): their difference is the wall time. */
static void nt_json_times(struct hr_run *run, const json_t *doc)
{
	struct tm a, b;
	const char *s = jstr(doc, "start_time"), *e = jstr(doc, "end_time");
	const char *pa, *pb;
	time_t ta, tb;
	if (!s || !e)
		return;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	pa = strptime(s, "%Y-%m-%d %H:%M:%S", &a);
	pb = strptime(e, "%Y-%m-%d %H:%M:%S", &b);
	if (!pa || !pb || *pa || *pb)
		return;
	ta = timegm(&a);
	tb = timegm(&b);
	if (tb >= ta)
		run->wall_sec = difftime(tb, ta);
}

int hr_fleet_load_json(struct hr_fleet *f, const char *path, const json_t *doc, int named)
{
	struct ctx c = { f, path, 0 };
	const char *schema = jstr(doc, "schema");

	if (!json_is_object(doc)) {
		hr_issue_add(&f->issues, HR_ISSUE_SKIPPED, path, 0, 0,
			     "JSON document is not an object; file skipped");
		return 0;
	}
	if (schema && !strcmp(schema, CH_RESULT_SCHEMA))
		return load_result(&c, doc);
	if (schema && !strcmp(schema, "clusterhealth.profile")) {
		f->files_ignored++;
		return 0;
	}
	if (hr_nt_json_detect(doc)) {
		struct hr_nt_log log;
		size_t r0 = f->nruns;
		int rc = hr_nt_parse_json(path, doc, &log, &f->issues);
		if (!rc)
			rc = hr_fleet_load_nccltests(f, &log);
		hr_nt_log_release(&log);
		if (!rc && f->nruns == r0 + 1)
			nt_json_times(&f->runs[r0], doc);
		return rc;
	}
	if (!named) {
		f->files_ignored++;
		hr_issue_add(&f->issues, HR_ISSUE_NOTE, path, 0, 0,
			     "ignored: a JSON document that is neither a result file nor nccl-tests output (schema '%s')",
			     schema ? schema : "none");
		return 0;
	}
	hr_issue_add(&f->issues, HR_ISSUE_SKIPPED, path, 0, 0,
		     "unknown JSON document (schema '%s'; expected a clusterhealth.result file or nccl-tests -J output); file skipped",
		     schema ? schema : "none");
	return 0;
}

int hr_fleet_load_file(struct hr_fleet *f, const char *path, int named)
{
	char *text = NULL, err[256];
	size_t len = 0;
	const char *p;
	int rc = 0;

	if (hr_read_file(path, HR_MAX_INPUT_BYTES, &text, &len, err, sizeof(err))) {
		hr_issue_add(&f->issues, HR_ISSUE_SKIPPED, path, 0, 0, "cannot read: %s", err);
		return 0;
	}
	if (strlen(text) != len) {
		hr_issue_add(&f->issues, HR_ISSUE_SKIPPED, path, 0, 0,
			     "binary file (NUL byte at offset %zu); skipped", strlen(text));
		free(text);
		return 0;
	}
	for (p = text; *p && isspace((unsigned char)*p); p++)
		;
	if (*p == '{' || *p == '[') {
		json_error_t je;
		json_t *doc = json_loadb(text, len, 0, &je);
		if (!doc) {
			hr_issue_add(&f->issues, HR_ISSUE_SKIPPED, path, je.line > 0 ? je.line : 0,
				     je.column > 0 ? je.column : 0,
				     "malformed JSON: %s; file skipped", je.text);
		} else {
			rc = hr_fleet_load_json(f, path, doc, named);
			json_decref(doc);
		}
	} else if (!*p) {
		hr_issue_add(&f->issues, HR_ISSUE_SKIPPED, path, 0, 0, "empty file; skipped");
	} else if (strstr(text, "# allreduce_bw (clusterhealth")) {
		f->files_ignored++;
		hr_issue_add(&f->issues, HR_ISSUE_NOTE, path, 0, 0,
			     "ignored: allreduce_bw's own output (its --json result file holds the same sweeps)");
	} else if (hr_nt_text_detect(text)) {
		struct hr_nt_log log;
		rc = hr_nt_parse_text(path, text, &log, &f->issues);
		if (!rc)
			rc = hr_fleet_load_nccltests(f, &log);
		hr_nt_log_release(&log);
	} else if (!named) {
		f->files_ignored++;
		hr_issue_add(&f->issues, HR_ISSUE_NOTE, path, 0, 0,
			     "ignored: not a result file or nccl-tests log (no JSON object, no nccl-tests table)");
	} else {
		hr_issue_add(&f->issues, HR_ISSUE_SKIPPED, path, 1, 0,
			     "not a result file or nccl-tests log (no JSON object, no nccl-tests table); skipped");
	}
	free(text);
	return rc;
}

/* ---------------------------------------------------------- nccl-tests */

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
		g->collective_from = dup_or_null(r->collective_from[0] ? r->collective_from : NULL);
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
				set_cfg(f, n2, HR_CFG_GPU_MODEL, r->ranks[j].name);
			if (r->nccl_version[0] && !f->nodes[n2].cfg[HR_CFG_NCCL])
				set_cfg(f, n2, HR_CFG_NCCL, r->nccl_version);
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
		run->reason = dup_or_null(g->failure);
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

/* ---------------------------------------------------------- release */

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
	for (i = 0; i < f->ndevices; i++) {
		struct hr_device *d = &f->devices[i];
		free(d->device); free(d->kind); free(d->name); free(d->pci_bus_id);
		free(d->sku); free(d->status); free(d->reason); free(d->throttle_reasons);
		free(d->clocks); free(d->points); free(d->source);
	}
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
	hr_issues_release(&f->issues);
	memset(f, 0, sizeof(*f));
}
