/*
 * hr_load.c - read result files and nccl-tests logs into the fleet model.
 */
#include "report/read/hr_model.h"
#include "report/judge/hr_checkpoint.h"
#include "report/judge/hr_inventory.h"
#include "report/read/hr_result.h"
#include "report/judge/hr_cost.h"
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
	json_t *hit;

	/* a hash from name to index (jansson's object), so that a fleet of
	 * thousands of nodes loads in linear time; rebuilt when it does not
	 * cover every node */
	if (!f->node_index || json_object_size(f->node_index) != f->nnodes) {
		json_decref(f->node_index);
		f->node_index = json_object();
		for (i = 0; f->node_index && i < f->nnodes; i++)
			json_object_set_new(f->node_index, f->nodes[i].name, json_integer((json_int_t)i));
	}
	hit = f->node_index ? json_object_get(f->node_index, name) : NULL;
	if (hit && (size_t)json_integer_value(hit) < f->nnodes &&
	    !strcmp(f->nodes[json_integer_value(hit)].name, name))
		return (int)json_integer_value(hit);
	if (!f->node_index || hit) /* no index, or a stale entry: look it up */
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
	if (f->node_index)
		json_object_set_new(f->node_index, name, json_integer((json_int_t)(f->nnodes - 1)));
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

/* ---------------------------------------------------------- the record */

struct ctx {
	struct hr_fleet *f;
	const char *path;
	int oom;
};

static void skip(struct ctx *c, const char *fmt, const char *where, const char *key)
{
	hr_issue_add(&c->f->issues, HR_ISSUE_SKIPPED, c->path, 0, 0, fmt, where, key);
}

/* @v (key @key of @where): a non-negative finite number, or NAN (and an
 * issue when it is not one, or is absent and @required). */
static double num_field(struct ctx *c, const struct hr_rv *v, const char *key,
			const char *where, int required)
{
	double x;
	if (!v->json || v->is_null) {
		if (required)
			skip(c, "%s: missing '%s'; skipped", where, key);
		return NAN;
	}
	if (isnan(v->num)) {
		skip(c, "%s: '%s' is not a number; skipped", where, key);
		return NAN;
	}
	x = v->num;
	if (!isfinite(x) || x < 0) {
		hr_issue_add(&c->f->issues, HR_ISSUE_SKIPPED, c->path, 0, 0,
			     "%s: '%s' is '%g' (must be a finite number >= 0); skipped", where, key, x);
		return NAN;
	}
	return x;
}

/* @v (key @key of @where): a fraction from 0 to 1, or NAN (and an issue
 * when it is another number or not a number; absent or null: no issue). */
static double frac_field(struct ctx *c, const struct hr_rv *v, const char *key, const char *where)
{
	double x = num_field(c, v, key, where, 0);
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

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* Join strings, or copy one string, into "a; b". NULL when empty. */
static char *join_strings(const struct hr_rstrs *v)
{
	struct hr_buf b = { 0 };
	size_t i;
	if (v->is_string)
		return strlen(v->v[0]) ? strdup(v->v[0]) : NULL;
	for (i = 0; i < v->n; i++) {
		if (b.len)
			hr_buf_puts(&b, "; ");
		hr_buf_puts(&b, v->v[i]);
	}
	return b.s;
}

/* ---------------------------------------------------------- roofline */

/* Throttle reasons from roofline's telemetry: {"before": sample, "after":
 * sample} where a sample (ch_nvml_sample_json) has "clock_event_reasons"
 * and "throttled"; reasons are kept only from samples that were throttled. */
static void add_reasons(const struct hr_result_sample *s, struct hr_buf *rb)
{
	size_t i;
	if (!s->throttled)
		return;
	for (i = 0; i < s->reasons.n; i++) {
		const char *name = s->reasons.v[i];
		if (rb->s && strstr(rb->s, name))
			continue;
		hr_buf_printf(rb, "%s%s", rb->len ? ", " : "", name);
	}
}

static void telemetry_info(const struct hr_result_telemetry *tel, char **reasons)
{
	struct hr_buf rb = { 0 };
	if (!tel->present)
		return;
	if (*reasons)
		hr_buf_puts(&rb, *reasons);
	add_reasons(&tel->self, &rb);
	add_reasons(&tel->before, &rb);
	add_reasons(&tel->after, &rb);
	if (rb.s && (!*reasons || strcmp(rb.s, *reasons))) {
		free(*reasons);
		*reasons = rb.s;
	} else {
		hr_buf_release(&rb);
	}
}

/* The device's GPU model into its node's configuration ("mixed: a, b" when
 * the node has two). */
static void device_gpu_model(struct ctx *c, int dnode, const char *name)
{
	const char *cur = c->f->nodes[dnode].cfg[HR_CFG_GPU_MODEL];
	if (!cur || !strcmp(cur, name) || strstr(cur, "mixed"))
		set_cfg(c->f, dnode, HR_CFG_GPU_MODEL, cur && strstr(cur, "mixed") ? cur : name);
	else {
		char mixed[300];
		snprintf(mixed, sizeof(mixed), "mixed: %s, %s", cur, name);
		set_cfg(c->f, dnode, HR_CFG_GPU_MODEL, mixed);
	}
}

/* The measured roofs of a device. */
static void device_roofs(struct ctx *c, const struct hr_result_device *d, struct hr_device *dv,
			 const char *where)
{
	char w2[96];
	size_t k;

	if (!d->has_roofs) {
		if (!strcmp(dv->status, "ok"))
			skip(c, "%s: missing '%s' object; its roofs are not used", where, "roofs");
		return;
	}
	snprintf(w2, sizeof(w2), "%s.roofs", where);
	dv->memory_gbps = num_field(c, &d->memory_gbps, "memory_gbps", w2,
				    !strcmp(dv->status, "ok") && !d->ncompute);
	if (!d->has_compute)
		return;
	snprintf(w2, sizeof(w2), "%s.roofs.compute_gflops", where);
	for (k = 0; k < d->ncompute; k++) {
		const char *dt = d->compute[k].dtype;
		int di = ch_dtype_parse(dt);
		if (di < 0) {
			hr_issue_add(&c->f->issues, HR_ISSUE_NOTE, c->path, 0, 0,
				     "%s: unknown dtype '%s'; ignored", w2, dt);
			continue;
		}
		if (d->compute[k].gflops.is_null)
			continue;
		dv->compute_gflops[di] = num_field(c, &d->compute[k].gflops, dt, w2, 1);
	}
}

static double hl_num(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* roofline's "host_link" of a GPU: its medians alone and its PCIe link;
 * NULL when absent or not an object (an older result file, the CPU) */
static struct hr_host_link *host_link(const json_t *hl)
{
	const json_t *alone = json_object_get(hl, "alone"), *pcie = json_object_get(hl, "pcie");
	struct hr_host_link *h;

	if (!json_is_object(hl) || !(h = calloc(1, sizeof(*h))))
		return NULL;
	h->h2d_gbps = hl_num(alone, "h2d_gbps");
	h->d2h_gbps = hl_num(alone, "d2h_gbps");
	h->expected_max_gbps = hl_num(hl, "expected_max_gbps");
	h->gen = (int)json_integer_value(json_object_get(pcie, "gen_current"));
	h->width = (int)json_integer_value(json_object_get(pcie, "width_current"));
	h->gen_max = (int)json_integer_value(json_object_get(pcie, "gen_max"));
	h->width_max = (int)json_integer_value(json_object_get(pcie, "width_max"));
	return h;
}

/* Clocks, throttle reasons and the valid points of a device. */
static int device_points(struct ctx *c, const struct hr_result_device *d, struct hr_device *dv, int dnode)
{
	size_t k;

	/* clocks (the device's maximum SM clock, roofline's config.clock_mhz)
	 * and throttle reasons (device level, then every point's telemetry) */
	if (d->clocks.str)
		dv->clocks = strdup(d->clocks.str);
	else if (d->clock_mhz.num > 0) {
		char ck[64];
		snprintf(ck, sizeof(ck), "%.0f MHz", d->clock_mhz.num);
		dv->clocks = strdup(ck);
	}
	dv->throttle_reasons = join_strings(&d->throttle_reasons);
	telemetry_info(&d->telemetry, &dv->throttle_reasons);
	dv->host_link = host_link(d->host_link.json);
	if (d->points_list.is_array && d->points_list.n) {
		dv->points = calloc(d->points_list.n, sizeof(*dv->points));
		if (!dv->points)
			return CH_ERR_RUNTIME;
	}
	for (k = 0; k < d->points_list.n; k++) {
		const struct hr_result_point *p = &d->points[k];
		struct hr_point *pt = &dv->points[dv->npoints];
		if (p->valid.json && !p->valid.is_true)
			continue;
		pt->ai = p->ai.num;
		pt->gflops = p->gflops.num;
		pt->gbps = p->gbps.num;
		if (!(pt->ai > 0) || !isfinite(pt->gflops))
			continue;
		snprintf(pt->kernel, sizeof(pt->kernel), "%s", p->kernel.str ? p->kernel.str : "?");
		snprintf(pt->family, sizeof(pt->family), "%s", p->family.str ? p->family.str : "");
		snprintf(pt->dtype, sizeof(pt->dtype), "%s", p->dtype.str ? p->dtype.str : "");
		pt->throttled = p->throttled;
		if (pt->throttled)
			dv->throttled = 1;
		telemetry_info(&p->telemetry, &dv->throttle_reasons);
		dv->npoints++;
	}
	if (dv->clocks && !strcmp(dv->kind, "gpu"))
		set_cfg(c->f, dnode, HR_CFG_CLOCKS, dv->clocks);
	return 0;
}

/* The per-call CV of the point that set roof @compute of @d (-1: memory;
 * hr_result_roof_point()), NAN when not recorded. A cv that is not a
 * number >= 0 is listed and not used. */
static double point_cv(struct ctx *c, const struct hr_result_device *d, const char *where, int compute)
{
	const struct hr_result_point *best = hr_result_roof_point(d, compute);

	if (!best || !best->time_sec.present)
		return NAN;
	return num_field(c, &best->time_sec.cv, "time_sec.cv", where, 0);
}

/* The spread of the points behind each roof, and roofline's re-measurement
 * of the GPUs it flagged (results.flagged[]). */
static void device_quality(struct ctx *c, const struct hr_result *r, const struct hr_result_device *d,
			   struct hr_device *dv, const char *where)
{
	size_t k;

	dv->memory_cv = point_cv(c, d, where, -1);
	for (k = 0; k < d->ncompute; k++) {
		int di = ch_dtype_parse(d->compute[k].dtype);
		if (di >= 0 && !isnan(dv->compute_gflops[di]))
			dv->compute_cv[di] = point_cv(c, d, where, (int)k);
	}
	for (k = 0; k < r->flagged_list.n; k++) {
		const struct hr_result_flag *fl = &r->flagged[k];
		const char *m = fl->metric.str;
		int idx = -1;
		if (!fl->device.str || strcmp(fl->device.str, dv->device) || !m)
			continue;
		if (!strcmp(m, "memory_gbps"))
			idx = 0;
		else if (!strncmp(m, "compute_gflops.", 15) && ch_dtype_parse(m + 15) >= 0)
			idx = 1 + ch_dtype_parse(m + 15);
		if (idx < 0)
			continue;
		if (fl->confirmed.json && !fl->confirmed.is_null && !json_is_boolean(fl->confirmed.json)) {
			hr_issue_add(&c->f->issues, HR_ISSUE_SKIPPED, c->path, 0, 0,
				     "results.flagged[%zu]: 'confirmed' is not true, false or null; not used", k);
			continue;
		}
		dv->flag_confirm[idx] = !fl->confirmed.json || fl->confirmed.is_null ? HR_CONFIRM_NONE
					: fl->confirmed.is_true ? HR_CONFIRM_AGREED : HR_CONFIRM_DISAGREED;
	}
}

/* A new device of the fleet from @d (device and status checked), or NULL when out of memory. */
static struct hr_device *device_new(struct ctx *c, const struct hr_result_device *d, int dnode)
{
	const char *id = d->device.str, *name = d->name.str, *sku = d->sku.str;
	struct hr_device *dv;
	size_t k;

	GROW(c->f->devices, c->f->ndevices, dv);
	if (!dv)
		return NULL;
	dv->node = dnode;
	dv->device = strdup(id);
	dv->kind = strdup(d->kind.str ? d->kind.str : (strncmp(id, "gpu", 3) ? "cpu" : "gpu"));
	dv->name = dup_or_null(name);
	dv->pci_bus_id = dup_or_null(d->pci_bus_id.str);
	dv->status = strdup(d->status.str);
	dv->reason = dup_or_null(d->reason.str);
	dv->source = strdup(c->path);
	dv->memory_gbps = dv->memory_cv = NAN;
	for (k = 0; k < CH_NDTYPES; k++)
		dv->compute_gflops[k] = dv->compute_cv[k] = NAN;
	if (!dv->device || !dv->kind || !dv->status || !dv->source)
		return NULL;
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
		if (name && strcmp(dv->status, "unavailable"))
			device_gpu_model(c, dnode, name);
	}
	dv->throttled = d->throttled;
	return dv;
}

/* A device's power sweep (roofline --power-limits) into dv->power; a
 * sweep without a positive default limit, and a cap without a positive
 * cap_w, are listed and not used. */
static int device_power(struct ctx *c, const struct hr_result_power *pw, struct hr_device *dv, const char *where)
{
	char w2[96];
	size_t k;

	if (!pw->present)
		return 0;
	snprintf(w2, sizeof(w2), "%s.power_sweep", where);
	if (!(pw->default_limit_w.num > 0) || !isfinite(pw->default_limit_w.num)) {
		skip(c, "%s: no positive '%s'; the sweep is not used", w2, "default_limit_w");
		return 0;
	}
	if (!(dv->power = calloc(1, sizeof(*dv->power))))
		return CH_ERR_RUNTIME;
	dv->power->default_w = pw->default_limit_w.num;
	dv->power->tolerance_pct = pw->tolerance_pct.num > 0 ? pw->tolerance_pct.num : NAN;
	dv->power->rec_w = pw->rec_judged.is_true ? num_field(c, &pw->rec_cap_w, "cap_w", w2, 1) : NAN;
	if (pw->rec_why.str && !(dv->power->rec_why = strdup(pw->rec_why.str)))
		return CH_ERR_RUNTIME;
	if (pw->curve_list.n && !(dv->power->pts = calloc(pw->curve_list.n, sizeof(*dv->power->pts))))
		return CH_ERR_RUNTIME;
	snprintf(w2, sizeof(w2), "%s.power_sweep.curve", where);
	for (k = 0; k < pw->curve_list.n; k++) {
		const struct hr_result_power_pt *q = &pw->curve[k];
		struct hr_power_pt *pt = &dv->power->pts[dv->power->npts];
		if (!(q->cap_w.num > 0) || !isfinite(q->cap_w.num)) {
			skip(c, "%s: an entry without a positive '%s'; skipped", w2, "cap_w");
			continue;
		}
		pt->cap_w = q->cap_w.num;
		pt->gflops = num_field(c, &q->gflops, "gflops", w2, 0);
		pt->gflop_per_j = num_field(c, &q->gflop_per_j, "gflop_per_j", w2, 0);
		pt->power_w = num_field(c, &q->avg_power_w, "avg_power_w", w2, 0);
		pt->gbps = num_field(c, &q->gbps, "gbps", w2, 0);
		dv->power->npts++;
	}
	return 0;
}

/* Whether @r is a run that had no device or backend (status
 * "unavailable", docs/results-schema.md): it measured nothing, so a results
 * array it lacks is not a broken input; the run's reason is the node's
 * (run_reasons() in report/judge/hr_rule_inventory.c). */
static int unavailable(const struct hr_result *r)
{
	return r->status && !strcmp(r->status, "unavailable");
}

static int load_roofline(struct ctx *c, const struct hr_result *r, int node)
{
	size_t i;

	if (!r->devices_list.is_array) {
		if (!unavailable(r))
			skip(c, "%s: missing '%s' array; no devices read", "results", "devices");
		return 0;
	}
	for (i = 0; i < r->devices_list.n; i++) {
		const struct hr_result_device *d = &r->devices[i];
		struct hr_device *dv;
		char where[64];
		int dnode;

		snprintf(where, sizeof(where), "results.devices[%zu]", i);
		if (!d->device.str) {
			skip(c, "%s: not an object with a '%s' string; skipped", where, "device");
			continue;
		}
		if (!d->status.str) {
			skip(c, "%s: missing '%s'; skipped", where, "status");
			continue;
		}
		dnode = node;
		if (d->host.str) { /* under mpirun, devices of several hosts */
			dnode = hr_fleet_node(c->f, d->host.str);
			if (dnode < 0)
				return CH_ERR_RUNTIME;
		}
		if (!(dv = device_new(c, d, dnode)))
			return CH_ERR_RUNTIME;
		if (!strcmp(dv->status, "unavailable"))
			continue;
		device_roofs(c, d, dv, where);
		if (device_points(c, d, dv, dnode) || device_power(c, &d->power, dv, where))
			return CH_ERR_RUNTIME;
		device_quality(c, r, d, dv, where);
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

/* What allreduce_bw's rank layout says. */
struct layout {
	int *rank_node;       /* rank -> 1 + node index, 0 unknown; nl entries */
	size_t nl;
	int hosts;            /* distinct hosts */
	const char *gpu_name; /* GPU name of the last rank that has one */
};

/* The rank layout: node per rank, GPUs used and their rated power, distinct hosts. */
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
					set_cfg(c->f, n2, HR_CFG_GPU_MODEL, gn);
			}
		}
	}
	/* distinct hosts of the layout (not node names: --node-size splits one
	 * host into several "nodes", and the CPU packages are the host's) */
	for (i = 0; i < nl; i++) {
		int dup = 0;
		const char *hi = r->layout[i].host.str;
		if (!hi)
			continue;
		for (j = 0; j < i; j++)
			if (hr_streq(r->layout[j].host.str, hi))
				dup = 1;
		if (!dup)
			lo->hosts++;
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
	cell->confirm = HR_CONFIRM_NONE;
	if (!s->present)
		return;
	cell->time_us = num_field(c, &s->loop_time_us, "loop_time_us", where, 0);
	snprintf(w2, sizeof(w2), "%s.time_us", where);
	if (s->time_us.present) {
		cell->median_us = num_field(c, &s->time_us.median, "median", w2, 0);
		cell->cv = num_field(c, &s->time_us.cv, "cv", w2, 0);
	}
	if (s->confirm.present) {
		double bus, loop, med;
		snprintf(w2, sizeof(w2), "%s.confirm", where);
		bus = num_field(c, &s->confirm.busbw, "busbw_gbps", w2, 1);
		loop = num_field(c, &s->confirm.loop_time_us, "loop_time_us", w2, 0);
		if (s->confirm.time_us.present) {
			char w3[160];
			snprintf(w3, sizeof(w3), "%s.time_us", w2);
			med = num_field(c, &s->confirm.time_us.median, "median", w3, 0);
			cell->confirm_cv = num_field(c, &s->confirm.time_us.cv, "cv", w3, 0);
		} else {
			med = NAN;
		}
		if (!isnan(bus)) {
			cell->confirm = HR_CONFIRM_AGREED; /* measured again; the rules judge agreement */
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
		row->bytes = num_field(c, &s->bytes, "bytes", w2, 1);
		/* a busbw is a finite number >= 0 (-1e308 was read as measured) */
		row->busbw_oop_gbps = isnan(s->oop_busbw.num) ? NAN : num_field(c, &s->oop_busbw, "out_of_place.busbw_gbps", w2, 0);
		row->busbw_ip_gbps = isnan(s->ip_busbw.num) ? NAN : num_field(c, &s->ip_busbw, "in_place.busbw_gbps", w2, 0);
		if (isnan(row->bytes) || (isnan(row->busbw_oop_gbps) && isnan(row->busbw_ip_gbps))) {
			if (!isnan(row->bytes))
				skip(c, "%s: no numeric '%s' in out_of_place or in_place; skipped", w2, "busbw_gbps");
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
	g->large_busbw_gbps = isnan(sw->large_busbw.num) ? NAN : num_field(c, &sw->large_busbw, "large_msg_busbw_gbps", where, 0);
	g->avg_busbw_gbps = isnan(sw->avg_busbw.num) ? NAN : num_field(c, &sw->avg_busbw, "avg_busbw_gbps", where, 0);
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
		skip(c, "%s: not an object with a '%s' array; skipped", where, "rows");
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
	g->gpu_name = dup_or_null(lo->gpu_name);
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
	if (!r->sweeps_list.is_array && !unavailable(r))
		skip(c, "%s: missing '%s' array; no sweeps read", "results", "sweeps");
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

/* ---------------------------------------------------------- loader */

/* One configuration; 1 when it lacks what the report needs (recorded as skipped). */
static int loader_cfg(struct ctx *c, const struct hr_result_config *v, size_t i, struct hr_loader_cfg *k)
{
	char where[64];

	snprintf(where, sizeof(where), "results.configs[%zu]", i);
	if (!v->placement.str || !v->has_lateness) {
		skip(c, "%s: needs '%s' and a 'lateness_us' object; skipped", where, "placement");
		return 1;
	}
	if (isnan(num_field(c, &v->lateness_p99_us, "lateness_us.p99", where, 1)))
		return 1;
	k->name = strdup(v->name.str ? v->name.str : v->placement.str);
	k->placement = strdup(v->placement.str);
	k->workers = count_field(c, &v->workers, "workers", where, 0, INT_MIN); /* INT_MIN: not given */
	k->hog_util = num_field(c, &v->hog_util, "hog_util", where, 0);
	k->lateness_p50_us = num_field(c, &v->lateness_p50_us, "lateness_us.p50", where, 0);
	k->lateness_p99_us = v->lateness_p99_us.num;
	k->lateness_max_us = num_field(c, &v->lateness_max_us, "lateness_us.max", where, 0);
	k->input_wait_frac = frac_field(c, &v->input_wait_frac, "input_wait_frac", where);
	k->accel_util = frac_field(c, &v->accel_util, "accel_util", where);
	k->verdict = dup_or_null(v->verdict.str);
	k->reasons = join_strings(&v->reasons);
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
		if (!unavailable(r))
			skip(c, "%s: missing '%s' array; loader results not used", "results", "configs");
		return 0;
	}
	GROW(c->f->loaders, c->f->nloaders, l);
	if (!l)
		return CH_ERR_RUNTIME;
	l->node = node;
	l->verdict = dup_or_null(r->verdict.str);
	l->step_ms = num_field(c, &r->step_ms, "step_ms", "results", 0);
	/* loader_contention's documented thresholds (docs/loader_contention.md) unless the result gives its own */
	l->wait_warn = 0.05;
	l->wait_fail = 0.20;
	l->util_pass = 0.90;
	l->util_fail = 0.70;
	if (r->lthr.present) {
		double x;
		if (!isnan(x = num_field(c, &r->lthr.wait_warn, "input_wait_warn_frac", "results.thresholds", 0)))
			l->wait_warn = x;
		if (!isnan(x = num_field(c, &r->lthr.wait_fail, "input_wait_fail_frac", "results.thresholds", 0)))
			l->wait_fail = x;
		if (!isnan(x = num_field(c, &r->lthr.util_pass, "accel_util_pass_frac", "results.thresholds", 0)))
			l->util_pass = x;
		if (!isnan(x = num_field(c, &r->lthr.util_fail, "accel_util_fail_frac", "results.thresholds", 0)))
			l->util_fail = x;
	}
	l->base_psi_pct = l->base_host_util = NAN;
	for (i = 0; i < r->configs_list.n; i++)
		if (hr_streq(r->configs[i].placement.str, "baseline")) {
			char where[64];
			snprintf(where, sizeof(where), "results.configs[%zu]", i);
			l->base_psi_pct = num_field(c, &r->configs[i].psi_avg10, "psi_cpu_some_avg10", where, 0);
			l->base_host_util = num_field(c, &r->configs[i].host_cpu_util, "host_cpu_util", where, 0);
			break;
		}
	l->mask_collapsed = r->mask_collapsed;
	l->source = strdup(c->path);
	if (rec->present) {
		l->rec_placement = dup_or_null(rec->placement.str);
		l->rec_workers = count_field(c, &rec->workers, "workers", "results.recommendation", 0, -1);
		l->rec_config = dup_or_null(rec->config.str);
		l->rec_verdict = dup_or_null(rec->verdict.str);
		l->rec_numactl = dup_or_null(rec->numactl.str);
		l->rec_hwloc_bind = dup_or_null(rec->hwloc_bind.str);
		l->rec_slurm = dup_or_null(rec->slurm.str);
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

/* ---------------------------------------------------------- envelope */

static void load_sample(struct ctx *c, const struct hr_result_load *l, struct hr_load_sample *s, const char *where)
{
	s->loadavg_1m = num_field(c, &l->loadavg_1m, "loadavg_1m", where, 0);
	s->cpu_pressure_pct = num_field(c, &l->cpu_pressure_pct, "cpu_pressure_some_avg10_pct", where, 0);
	s->cpu_busy_pct = num_field(c, &l->cpu_busy_pct, "cpu_busy_pct", where, 0);
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
			skip(c, "%s: '%s' is not an object; the measurement conditions are not known", "envelope",
			     "conditions");
		return;
	}
	out->known = 1;
	if (k->before.present)
		load_sample(c, &k->before, &out->before, "conditions.before");
	else if (k->before.json && !json_is_null(k->before.json))
		skip(c, "%s: '%s' is not an object or null; not used", "conditions", "before");
	if (k->after.present)
		load_sample(c, &k->after, &out->after, "conditions.after");
	else if (k->after_value.json && !k->after_value.is_null)
		skip(c, "%s: '%s' is not an object or null; not used", "conditions", "after");
	out->online_cpus = count_field(c, &k->online_cpus, "online_cpus", "conditions", 1, 0);
	out->per_core = num_field(c, &k->per_core, "per_core", "conditions", 0);
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
	run->reason = dup_or_null(r->reason);
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
		run->cpu_j = num_field(c, &r->energy_cpu_j, "cpu_j", "energy", 0);
		run->gpu_j = num_field(c, &r->energy_gpu_j, "gpu_j", "energy", 0);
		run->energy_source = dup_or_null(r->energy_source.str);
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
		set_cfg(c->f, node, HR_CFG_DRIVER, r->sw_cuda_driver ? r->sw_cuda_driver : r->sw_nvml_driver);
		set_cfg(c->f, node, HR_CFG_CUDA, r->sw_cuda_runtime);
		set_cfg(c->f, node, HR_CFG_NCCL, r->sw_nccl);
		set_cfg(c->f, node, HR_CFG_MPI, r->sw_mpi);
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
		rc = load_roofline(c, r, node);
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
	} else {
		rc = load_loader(c, r, node);
	}
	run->cpu_packages *= run->nnodes > 0 ? run->nnodes : 1;
	c->f->files_read++;
	return rc;
}

/* A JSON object's record, read by the result reader (on a reading thread,
 * see struct parsed), with whether a string of it holds a control
 * character (hr_result_check_control()). */
struct pre {
	int rc;               /* hr_result_read()'s */
	struct hr_result rec;
};

static void pre_read(const json_t *doc, struct pre *x)
{
	memset(x, 0, sizeof(*x));
	x->rc = hr_result_read(doc, &x->rec);
	if (!x->rc && x->rec.schema && !strcmp(x->rec.schema, CH_RESULT_SCHEMA))
		hr_result_check_control(&x->rec);
}

/* hr_fleet_load_json() for a document whose record is @x (released here). */
static int load_json_read(struct hr_fleet *f, const char *path, const json_t *doc, int named,
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

int hr_fleet_load_json(struct hr_fleet *f, const char *path, const json_t *doc, int named)
{
	struct pre x;
	if (!json_is_object(doc)) {
		hr_issue_add(&f->issues, HR_ISSUE_SKIPPED, path, 0, 0,
			     "JSON document is not an object; file skipped");
		return 0;
	}
	pre_read(doc, &x);
	return load_json_read(f, path, doc, named, &x);
}

/* ---------------------------------------------------------- parse arena */

/*
 * A document parsed on a reading thread is read, mapped into the fleet and
 * freed whole: its values are allocated from an arena of its own (large
 * chunks, bump allocation) and released at once with it, instead of one
 * malloc and one free (on another thread) per value, which was a quarter of
 * the time spent loading. jansson's allocator (json_set_alloc_funcs(),
 * installed by hr_json_alloc_init() before any value is made) allocates
 * from the arena of the calling thread while that thread parses, and from
 * the heap otherwise; a free while parsing is of arena memory and a no-op.
 * Nothing of such a document is kept: what the fleet keeps is copied
 * (strings duplicated, the inventory deep-copied on the loading thread).
 */
struct achunk {
	struct achunk *next;
	size_t used, cap;
	max_align_t data[];
};

struct arena {
	struct achunk *head;
};

#define ARENA_CHUNK (256u << 10)

static __thread struct arena *tl_arena;
/* set when an allocation of jansson's on this thread failed: a document
 * that did not parse for want of memory is not malformed (jansson's error
 * text then says nothing or blames the syntax) */
static __thread int tl_alloc_failed;

static void *arena_alloc(struct arena *a, size_t n)
{
	struct achunk *c = a->head;
	n = (n + 15) & ~(size_t)15;
	if (!c || c->used + n > c->cap) {
		size_t cap = n > ARENA_CHUNK / 2 ? n : ARENA_CHUNK;
		struct achunk *x = malloc(sizeof(*x) + cap);
		if (!x)
			return NULL;
		x->used = 0;
		x->cap = cap;
		if (c && n > ARENA_CHUNK / 2) {
			/* a large value: a chunk of its own, behind the current one */
			x->next = c->next;
			c->next = x;
			x->used = n;
			return x->data;
		}
		x->next = c;
		a->head = c = x;
	}
	c->used += n;
	return (char *)c->data + c->used - n;
}

static void arena_release(struct arena *a)
{
	while (a->head) {
		struct achunk *x = a->head->next;
		free(a->head);
		a->head = x;
	}
}

static void *json_alloc(size_t n)
{
	void *p = tl_arena ? arena_alloc(tl_arena, n) : malloc(n);
	if (!p)
		tl_alloc_failed = 1;
	return p;
}

static void json_release(void *p)
{
	if (!tl_arena)
		free(p);
}

void hr_json_alloc_init(void)
{
	json_set_alloc_funcs(json_alloc, json_release);
}

/* whether documents may be parsed into an arena (the allocator is ours) */
static int arena_usable(void)
{
	json_malloc_t m = NULL;
	json_free_t fr = NULL;
	json_get_alloc_funcs(&m, &fr);
	return m == json_alloc && fr == json_release;
}

/* One input file read and, when it looks like JSON, parsed, and a JSON
 * object read into its record: the part of loading that touches no fleet
 * state (so it may run on a reading thread). */
struct parsed {
	char *text;       /* the file's text, NULL when it could not be read (and,
			     once parsed, for a JSON document) */
	size_t len;
	size_t nul_at;    /* strlen(text) before it was freed: < len for a binary file */
	char err[256];    /* why it could not be read */
	int json;         /* 1: it starts with '{' or '[' (doc or je says how it parsed) */
	int unread;       /* 1: the file could not be read (err) */
	int oom;          /* 1: out of memory while reading or parsing it */
	json_t *doc;
	json_error_t je;
	int has_pre;      /* doc is an object: pre holds its record */
	struct pre pre;
	struct arena arena; /* doc's values, when parsed into an arena */
};

static void parse_input(const char *path, struct parsed *q)
{
	const char *p;
	int rc;
	memset(q, 0, sizeof(*q));
	if ((rc = hr_read_file(path, HR_MAX_INPUT_BYTES, &q->text, &q->len, q->err, sizeof(q->err)))) {
		q->text = NULL;
		q->unread = 1;
		q->oom = rc == CH_ERR_RUNTIME;
		return;
	}
	q->nul_at = strlen(q->text);
	if (q->nul_at != q->len)
		return;
	for (p = q->text; *p && isspace((unsigned char)*p); p++)
		;
	if (*p == '{' || *p == '[') {
		q->json = 1;
		if (arena_usable())
			tl_arena = &q->arena;
		tl_alloc_failed = 0;
		q->doc = json_loadb(q->text, q->len, 0, &q->je);
		tl_arena = NULL;
		if (!q->doc && tl_alloc_failed)
			q->oom = 1;
		free(q->text); /* the document holds what is needed */
		q->text = NULL;
		if (json_is_object(q->doc)) {
			q->has_pre = 1;
			pre_read(q->doc, &q->pre);
		}
	}
}

static void parsed_release(struct parsed *q)
{
	if (q->has_pre)
		hr_result_release(&q->pre.rec);
	if (q->arena.head)
		arena_release(&q->arena); /* the document, whole */
	else
		json_decref(q->doc);
	free(q->text);
	memset(q, 0, sizeof(*q));
}

/* The rest of hr_fleet_load_file() for a file parse_input() read (@q is
 * released by the caller, parsed_release()). */
static int load_parsed(struct hr_fleet *f, const char *path, int named, struct parsed *q)
{
	char *text = q->text;
	const char *p;
	int rc = 0;

	if (q->oom)
		return CH_ERR_RUNTIME;
	if (q->unread) {
		hr_issue_add(&f->issues, HR_ISSUE_SKIPPED, path, 0, 0, "cannot read: %s", q->err);
		return 0;
	}
	if (q->nul_at != q->len) {
		hr_issue_add(&f->issues, HR_ISSUE_SKIPPED, path, 0, 0,
			     "binary file (NUL byte at offset %zu); skipped", q->nul_at);
		return 0;
	}
	if (q->json) {
		json_t *doc = q->doc;
		if (!doc) {
			hr_issue_add(&f->issues, HR_ISSUE_SKIPPED, path, q->je.line > 0 ? q->je.line : 0,
				     q->je.column > 0 ? q->je.column : 0,
				     "malformed JSON: %s; file skipped", q->je.text);
		} else if (q->has_pre) {
			rc = load_json_read(f, path, doc, named, &q->pre);
			q->has_pre = 0;
		} else {
			rc = hr_fleet_load_json(f, path, doc, named);
		}
		return rc;
	}
	for (p = text; *p && isspace((unsigned char)*p); p++)
		;
	if (!*p) {
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
	return rc;
}

/* load_parsed(), saying which file ran out of memory; the file known by
 * its name as UTF-8 text (hr_utf8_text(): a name that is not UTF-8 would
 * be lost by jansson, and with it the profile) */
static int load_one(struct hr_fleet *f, const char *path, int named, struct parsed *q)
{
	char *shown = hr_utf8_text(path);
	int rc = shown ? load_parsed(f, shown, named, q) : CH_ERR_RUNTIME;
	free(shown);
	if (rc)
		ch_error("out of memory while reading '%s'", hr_term(path));
	return rc;
}

int hr_fleet_load_file(struct hr_fleet *f, const char *path, int named)
{
	struct parsed q;
	int rc;
	parse_input(path, &q);
	rc = load_one(f, path, named, &q);
	parsed_release(&q);
	return rc;
}

/* Reading ahead for hr_fleet_load_files(): a small pool of threads (one per
 * CPU the process may run on, at most MAX_READERS) reads, parses and reads
 * into records the files in any order, each into its slot of a ring of
 * READ_AHEAD files per thread, while the caller loads them into the fleet
 * in the given order (so the fleet is the same as one thread would make). */
#define MAX_READERS 8
#define READ_AHEAD 4

struct ahead {
	const char *const *paths;
	size_t n, ring, next_claim, next_loaded;
	struct parsed *slot;     /* ring: file i in slot[i % ring] */
	unsigned char *ready;    /* ring: the slot holds its file, not yet loaded */
	int stop;
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

static void *read_ahead(void *arg)
{
	struct ahead *a = arg;
	for (;;) {
		struct parsed q;
		size_t i;
		pthread_mutex_lock(&a->mu);
		while (!a->stop && a->next_claim < a->n && a->next_claim >= a->next_loaded + a->ring)
			pthread_cond_wait(&a->cv, &a->mu);
		if (a->stop || a->next_claim >= a->n) {
			pthread_mutex_unlock(&a->mu);
			break;
		}
		i = a->next_claim++;
		pthread_mutex_unlock(&a->mu);
		parse_input(a->paths[i], &q);
		pthread_mutex_lock(&a->mu);
		a->slot[i % a->ring] = q;
		a->ready[i % a->ring] = 1;
		pthread_cond_broadcast(&a->cv);
		pthread_mutex_unlock(&a->mu);
	}
	return NULL;
}

/* The CPUs this process may run on (its affinity mask), at least 1. */
static int usable_cpus(void)
{
	cpu_set_t set;
	long n;
	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return CPU_COUNT(&set);
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}

int hr_fleet_load_files(struct hr_fleet *f, const char *const *paths, const unsigned char *named, size_t n)
{
	struct ahead *a;
	pthread_t th[MAX_READERS];
	int nth = 0, want, t;
	size_t i;
	int rc = 0;

	if (n < 2)
		return n ? hr_fleet_load_file(f, paths[0], named[0]) : 0;
	want = usable_cpus();
	if (want > MAX_READERS)
		want = MAX_READERS;
	if ((size_t)want > n)
		want = (int)n;
	a = calloc(1, sizeof(*a));
	if (!a) {
		ch_error("out of memory while reading the inputs");
		return CH_ERR_RUNTIME;
	}
	a->paths = paths;
	a->n = n;
	a->ring = (size_t)want * READ_AHEAD;
	a->slot = calloc(a->ring, sizeof(*a->slot));
	a->ready = calloc(a->ring, 1);
	if (!a->slot || !a->ready) {
		ch_error("out of memory while reading the inputs");
		free(a->slot);
		free(a->ready);
		free(a);
		return CH_ERR_RUNTIME;
	}
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->cv, NULL);
	json_object_seed(0); /* before values are made on several threads (jansson's advice) */
	for (t = 0; t < want; t++)
		if (pthread_create(&th[nth], NULL, read_ahead, a) == 0)
			nth++;
	if (!nth) {
		/* no thread: load them one after another */
		for (i = 0; i < n && !rc; i++)
			rc = hr_fleet_load_file(f, paths[i], named[i]);
		goto done;
	}
	for (i = 0; i < n; i++) {
		struct parsed q;
		pthread_mutex_lock(&a->mu);
		while (!a->ready[i % a->ring])
			pthread_cond_wait(&a->cv, &a->mu);
		q = a->slot[i % a->ring];
		a->ready[i % a->ring] = 0;
		pthread_mutex_unlock(&a->mu);
		if (!rc)
			rc = load_one(f, paths[i], named[i], &q);
		parsed_release(&q);
		pthread_mutex_lock(&a->mu);
		a->next_loaded = i + 1;
		if (rc)
			a->stop = 1;
		pthread_cond_broadcast(&a->cv);
		pthread_mutex_unlock(&a->mu);
		if (rc)
			break;
	}
	for (t = 0; t < nth; t++)
		pthread_join(th[t], NULL);
	/* files read after a stop and never loaded */
	for (i = 0; i < a->ring; i++)
		if (a->ready[i])
			parsed_release(&a->slot[i]);
done:
	pthread_mutex_destroy(&a->mu);
	pthread_cond_destroy(&a->cv);
	free(a->slot);
	free(a->ready);
	free(a);
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
			/* a log has the loop time only: no per-call spread, no re-measurement */
			d->oop.time_us = s->oop.present && s->oop.time_us > 0 ? s->oop.time_us : NAN;
			d->ip.time_us = s->ip.present && s->ip.time_us > 0 ? s->ip.time_us : NAN;
			d->oop.median_us = d->oop.cv = d->oop.confirm_busbw = d->oop.confirm_cv = NAN;
			d->ip.median_us = d->ip.cv = d->ip.confirm_busbw = d->ip.confirm_cv = NAN;
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
		free(d->clocks); free(d->points); free(d->source); free(d->host_link);
		if (d->power) {
			free(d->power->pts); free(d->power->rec_why); free(d->power);
		}
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
	json_decref(f->node_index);
	memset(f, 0, sizeof(*f));
}
