/*
 * hr_result.c - the result reader: a result document into a typed record
 * (hr_result.h).
 */
#include "report/read/hr_result.h"
#include "report/hr_util.h"
#include "base/ch_common.h"
#include "base/ch_result.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* json_object_get() of @k, a string literal (its length known: no strlen
 * per look-up) */
#define getk(o, k) json_object_getn(o, "" k, sizeof(k) - 1)

const char *hr_result_tool(const json_t *doc)
{
	const char *schema = json_string_value(getk(doc, "schema"));
	const json_t *ver = getk(doc, "schema_version");

	if (!json_is_object(doc) || !schema || strcmp(schema, CH_RESULT_SCHEMA) ||
	    !json_is_integer(ver) || json_integer_value(ver) != CH_RESULT_SCHEMA_VERSION)
		return NULL;
	return json_string_value(getk(doc, "tool"));
}

static struct hr_rv rv(const json_t *v)
{
	struct hr_rv r = { v, json_string_value(v), json_is_number(v) ? json_number_value(v) : NAN,
			   json_is_integer(v), json_is_integer(v) ? json_integer_value(v) : 0,
			   json_is_null(v), json_is_true(v) };
	return r;
}

/* @k (@n bytes) of @o */
static struct hr_rv keyn(const json_t *o, const char *k, size_t n)
{
	return rv(json_object_getn(o, k, n));
}

/* @k, a string literal, of @o (its length known: no strlen per look-up) */
#define key(o, k) keyn(o, "" k, sizeof(k) - 1)

/* A key of an object and the struct hr_rv of a record it is read into. */
struct field {
	const char *key;
	size_t len; /* strlen(key) */
	size_t off;
};

/* a struct field's key and its length, from a string literal */
#define FK(k) "" k, sizeof(k) - 1

/* The keys of @table from @o into the record @rec. */
#define READ_FIELDS(o, table, rec) read_fields(o, table, sizeof(table) / sizeof(table[0]), rec)

static void read_fields(const json_t *o, const struct field *f, size_t n, void *rec)
{
	size_t i;

	for (i = 0; i < n; i++)
		*(struct hr_rv *)((char *)rec + f[i].off) = keyn(o, f[i].key, f[i].len);
}

static const struct field sweep_fields[] = {
	{ FK("group_kind"), offsetof(struct hr_result_sweep, group_kind) },
	{ FK("group_name"), offsetof(struct hr_result_sweep, group_name) },
	{ FK("algo"), offsetof(struct hr_result_sweep, algo) },
	{ FK("nranks"), offsetof(struct hr_result_sweep, nranks) },
	{ FK("large_msg_busbw_gbps"), offsetof(struct hr_result_sweep, large_busbw) },
	{ FK("avg_busbw_gbps"), offsetof(struct hr_result_sweep, avg_busbw) },
};

static const struct field stats_fields[] = {
	{ FK("n"), offsetof(struct hr_result_stats, n) },
	{ FK("min"), offsetof(struct hr_result_stats, min) },
	{ FK("median"), offsetof(struct hr_result_stats, median) },
	{ FK("mean"), offsetof(struct hr_result_stats, mean) },
	{ FK("p95"), offsetof(struct hr_result_stats, p95) },
	{ FK("max"), offsetof(struct hr_result_stats, max) },
	{ FK("cv"), offsetof(struct hr_result_stats, cv) },
};

static const struct field cell_fields[] = {
	{ FK("loop_time_us"), offsetof(struct hr_result_cell, loop_time_us) },
	{ FK("algbw_gbps"), offsetof(struct hr_result_cell, algbw) },
	{ FK("busbw_gbps"), offsetof(struct hr_result_cell, busbw) },
	{ FK("wrong"), offsetof(struct hr_result_cell, wrong) },
};

static const struct field cell_confirm_fields[] = {
	{ FK("why"), offsetof(struct hr_result_cell_confirm, why) },
	{ FK("loop_time_us"), offsetof(struct hr_result_cell_confirm, loop_time_us) },
	{ FK("algbw_gbps"), offsetof(struct hr_result_cell_confirm, algbw) },
	{ FK("busbw_gbps"), offsetof(struct hr_result_cell_confirm, busbw) },
	{ FK("wrong"), offsetof(struct hr_result_cell_confirm, wrong) },
};

static const struct field point_confirm_fields[] = {
	{ FK("why"), offsetof(struct hr_result_point_confirm, why) },
	{ FK("gbps"), offsetof(struct hr_result_point_confirm, gbps) },
	{ FK("gflops"), offsetof(struct hr_result_point_confirm, gflops) },
};

static const struct field flag_fields[] = {
	{ FK("device"), offsetof(struct hr_result_flag, device) },
	{ FK("metric"), offsetof(struct hr_result_flag, metric) },
	{ FK("value"), offsetof(struct hr_result_flag, value) },
	{ FK("node_median"), offsetof(struct hr_result_flag, node_median) },
	{ FK("pct_below"), offsetof(struct hr_result_flag, pct_below) },
	{ FK("confirmed"), offsetof(struct hr_result_flag, confirmed) },
	{ FK("confirm_value"), offsetof(struct hr_result_flag, confirm_value) },
};

static const struct field load_fields[] = {
	{ FK("utc"), offsetof(struct hr_result_load, utc) },
	{ FK("loadavg_1m"), offsetof(struct hr_result_load, loadavg_1m) },
	{ FK("cpu_pressure_some_avg10_pct"), offsetof(struct hr_result_load, cpu_pressure_pct) },
	{ FK("cpu_busy_pct"), offsetof(struct hr_result_load, cpu_busy_pct) },
};

static const struct field conditions_fields[] = {
	{ FK("after"), offsetof(struct hr_result_conditions, after_value) },
	{ FK("online_cpus"), offsetof(struct hr_result_conditions, online_cpus) },
	{ FK("procs_on_host"), offsetof(struct hr_result_conditions, procs_on_host) },
	{ FK("threads_per_proc"), offsetof(struct hr_result_conditions, threads_per_proc) },
	{ FK("per_core"), offsetof(struct hr_result_conditions, per_core) },
};

static const struct field loader_thr_fields[] = {
	{ FK("input_wait_warn_frac"), offsetof(struct hr_result_loader_thresholds, wait_warn) },
	{ FK("input_wait_fail_frac"), offsetof(struct hr_result_loader_thresholds, wait_fail) },
	{ FK("accel_util_pass_frac"), offsetof(struct hr_result_loader_thresholds, util_pass) },
	{ FK("accel_util_fail_frac"), offsetof(struct hr_result_loader_thresholds, util_fail) },
};

static const struct field mount_fields[] = {
	{ FK("fstype"), offsetof(struct hr_result_mount, fstype) },
	{ FK("source"), offsetof(struct hr_result_mount, source) },
	{ FK("point"), offsetof(struct hr_result_mount, point) },
};

static const struct field ckpt_rank_fields[] = {
	{ FK("rank"), offsetof(struct hr_result_ckpt_rank, rank) },
	{ FK("write_gbps"), offsetof(struct hr_result_ckpt_rank, write_gbps) },
	{ FK("block_sec"), offsetof(struct hr_result_ckpt_rank, block_sec) },
	{ FK("bytes"), offsetof(struct hr_result_ckpt_rank, bytes) },
};

#define KF(k, m) { FK(k), offsetof(struct hr_result_kfault, m) }
static const struct field kfault_fields[] = {
	KF("device", device), KF("bus_id", bus_id), KF("kind", kind), KF("code", code), KF("action", action),
	KF("lines", lines), KF("link_ups", link_ups), KF("first_utc", first_utc), KF("last_utc", last_utc),
	KF("last_line", last_line), KF("gpu_index", gpu_index), KF("uuid", uuid), KF("mnemonic", mnemonic),
	KF("meaning", meaning), KF("nvidia_action", nvidia_action), KF("hardware", hardware), KF("table", table),
};
#undef KF

static const struct field ckpt_point_fields[] = {
	{ FK("writers"), offsetof(struct hr_result_ckpt_point, writers) },
	{ FK("bytes"), offsetof(struct hr_result_ckpt_point, bytes) },
	{ FK("block_sec"), offsetof(struct hr_result_ckpt_point, block_sec) },
	{ FK("agg_write_gbps"), offsetof(struct hr_result_ckpt_point, agg_write_gbps) },
};

static const struct field rank_fields[] = {
	{ FK("rank"), offsetof(struct hr_result_rank, rank) },
	{ FK("host"), offsetof(struct hr_result_rank, host) },
	{ FK("node_name"), offsetof(struct hr_result_rank, node_name) },
	{ FK("gpu_index"), offsetof(struct hr_result_rank, gpu_index) },
	{ FK("gpu_name"), offsetof(struct hr_result_rank, gpu_name) },
};

static const struct field straggler_fields[] = {
	{ FK("node"), offsetof(struct hr_result_straggler, node) },
	{ FK("host"), offsetof(struct hr_result_straggler, host) },
	{ FK("rank"), offsetof(struct hr_result_straggler, rank) },
	{ FK("slowest_fraction"), offsetof(struct hr_result_straggler, slowest_fraction) },
	{ FK("excess_pct"), offsetof(struct hr_result_straggler, excess_pct) },
};

static const struct field config_fields[] = {
	{ FK("placement"), offsetof(struct hr_result_config, placement) },
	{ FK("name"), offsetof(struct hr_result_config, name) },
	{ FK("workers"), offsetof(struct hr_result_config, workers) },
	{ FK("hog_util"), offsetof(struct hr_result_config, hog_util) },
	{ FK("input_wait_frac"), offsetof(struct hr_result_config, input_wait_frac) },
	{ FK("accel_util"), offsetof(struct hr_result_config, accel_util) },
	{ FK("repeats"), offsetof(struct hr_result_config, repeats) },
	{ FK("input_wait_frac_sd"), offsetof(struct hr_result_config, input_wait_frac_sd) },
	{ FK("accel_util_sd"), offsetof(struct hr_result_config, accel_util_sd) },
	{ FK("verdict"), offsetof(struct hr_result_config, verdict) },
	{ FK("psi_cpu_some_avg10"), offsetof(struct hr_result_config, psi_avg10) },
	{ FK("host_cpu_util"), offsetof(struct hr_result_config, host_cpu_util) },
};

static const struct field rec_fields[] = {
	{ FK("placement"), offsetof(struct hr_result_recommendation, placement) },
	{ FK("workers"), offsetof(struct hr_result_recommendation, workers) },
	{ FK("config"), offsetof(struct hr_result_recommendation, config) },
	{ FK("verdict"), offsetof(struct hr_result_recommendation, verdict) },
	{ FK("numactl"), offsetof(struct hr_result_recommendation, numactl) },
	{ FK("hwloc_bind"), offsetof(struct hr_result_recommendation, hwloc_bind) },
	{ FK("slurm"), offsetof(struct hr_result_recommendation, slurm) },
};

static const struct field point_fields[] = {
	{ FK("valid"), offsetof(struct hr_result_point, valid) },
	{ FK("ai_flop_per_byte"), offsetof(struct hr_result_point, ai) },
	{ FK("gflops"), offsetof(struct hr_result_point, gflops) },
	{ FK("gbps"), offsetof(struct hr_result_point, gbps) },
	{ FK("kernel"), offsetof(struct hr_result_point, kernel) },
	{ FK("family"), offsetof(struct hr_result_point, family) },
	{ FK("dtype"), offsetof(struct hr_result_point, dtype) },
};

static const struct field device_fields[] = {
	{ FK("device"), offsetof(struct hr_result_device, device) },
	{ FK("status"), offsetof(struct hr_result_device, status) },
	{ FK("host"), offsetof(struct hr_result_device, host) },
	{ FK("kind"), offsetof(struct hr_result_device, kind) },
	{ FK("name"), offsetof(struct hr_result_device, name) },
	{ FK("pci_bus_id"), offsetof(struct hr_result_device, pci_bus_id) },
	{ FK("reason"), offsetof(struct hr_result_device, reason) },
	{ FK("sku"), offsetof(struct hr_result_device, sku) },
};

static const struct field lateness_fields[] = {
	{ FK("p50"), offsetof(struct hr_result_config, lateness_p50_us) },
	{ FK("p99"), offsetof(struct hr_result_config, lateness_p99_us) },
	{ FK("max"), offsetof(struct hr_result_config, lateness_max_us) },
};

static int strs(const json_t *v, struct hr_rstrs *out)
{
	size_t i;

	memset(out, 0, sizeof(*out));
	if (json_is_string(v)) {
		out->is_string = 1;
		if (!(out->v = malloc(sizeof(*out->v))))
			return CH_ERR_RUNTIME;
		out->v[out->n++] = json_string_value(v);
		return 0;
	}
	if (!json_array_size(v))
		return 0;
	if (!(out->v = calloc(json_array_size(v), sizeof(*out->v))))
		return CH_ERR_RUNTIME;
	for (i = 0; i < json_array_size(v); i++)
		if (json_is_string(json_array_get(v, i)))
			out->v[out->n++] = json_string_value(json_array_get(v, i));
	return 0;
}

static int sample(const json_t *v, struct hr_result_sample *s)
{
	s->throttled = json_is_true(getk(v, "throttled"));
	return strs(getk(v, "clock_event_reasons"), &s->reasons);
}

static int telemetry(const json_t *v, struct hr_result_telemetry *t)
{
	t->present = json_is_object(v);
	if (!t->present)
		return 0;
	if (sample(v, &t->self) || sample(getk(v, "before"), &t->before) ||
	    sample(getk(v, "after"), &t->after))
		return CH_ERR_RUNTIME;
	return 0;
}

/* @key of @o as a list; allocates @n zeroed elements of @size into *@out */
static int list(const json_t *o, const char *key, struct hr_rlist *l, void **out, size_t size)
{
	const json_t *v = json_object_get(o, key);

	l->json = v;
	l->is_array = json_is_array(v);
	l->n = json_array_size(v);
	*out = NULL;
	if (l->n && !(*out = calloc(l->n, size)))
		return CH_ERR_RUNTIME;
	return 0;
}

/* @key of @o as a list, each element read by @fn into its slot of *@out */
static int read_list(const json_t *o, const char *k, struct hr_rlist *l, void **out, size_t size,
		     int (*fn)(const json_t *e, void *slot))
{
	size_t i;
	int rc = list(o, k, l, out, size);

	for (i = 0; !rc && i < l->n; i++)
		rc = fn(json_array_get(l->json, i), (char *)*out + i * size);
	return rc;
}

char *hr_rv_text(const struct hr_rv *v)
{
	return v->json ? json_dumps(v->json, JSON_ENCODE_ANY | JSON_COMPACT) : strdup("nothing");
}

static int read_value(const json_t *e, void *slot)
{
	*(struct hr_rv *)slot = rv(e);
	return 0;
}

static void read_stats(const json_t *v, struct hr_result_stats *st)
{
	st->present = json_is_object(v);
	READ_FIELDS(v, stats_fields, st);
}

static void read_cell(const json_t *c, struct hr_result_cell *cell)
{
	const json_t *cf = getk(c, "confirm");

	cell->present = json_is_object(c);
	READ_FIELDS(c, cell_fields, cell);
	read_stats(getk(c, "time_us"), &cell->time_us);
	cell->confirm.present = json_is_object(cf);
	READ_FIELDS(cf, cell_confirm_fields, &cell->confirm);
	read_stats(getk(cf, "time_us"), &cell->confirm.time_us);
}

static int read_row(const json_t *row, void *slot)
{
	const json_t *oop = getk(row, "out_of_place"), *ip = getk(row, "in_place");
	struct hr_result_row *r = slot;

	r->bytes = key(row, "bytes");
	r->oop_time_us = key(getk(oop, "time_us"), "median");
	r->oop_busbw = key(oop, "busbw_gbps");
	r->oop_wrong = key(oop, "wrong");
	r->ip_busbw = key(ip, "busbw_gbps");
	r->ip_wrong = key(ip, "wrong");
	read_cell(oop, &r->oop);
	read_cell(ip, &r->ip);
	return 0;
}

static int read_sweep(const json_t *sw, void *slot)
{
	struct hr_result_sweep *s = slot;
	int rc;

	READ_FIELDS(sw, sweep_fields, s);
	if ((rc = read_list(sw, "nodes", &s->nodes_list, (void **)&s->nodes, sizeof(*s->nodes), read_value)) ||
	    (rc = read_list(sw, "ranks", &s->ranks_list, (void **)&s->ranks, sizeof(*s->ranks), read_value)))
		return rc;
	return read_list(sw, "rows", &s->rows_list, (void **)&s->rows, sizeof(*s->rows), read_row);
}

/* ranks.layout: its entries, and the most ranks on one host */
static int read_layout(const json_t *doc, struct hr_result *r)
{
	json_t *counts, *c;
	const char *k;
	size_t i;
	int rc;

	if ((rc = list(getk(doc, "ranks"), "layout", &r->layout_list, (void **)&r->layout,
		       sizeof(*r->layout))))
		return rc;
	if (!r->layout_list.is_array)
		return 0;
	if (!(counts = json_object()))
		return CH_ERR_RUNTIME;
	for (i = 0; i < r->layout_list.n; i++) {
		const json_t *e = json_array_get(r->layout_list.json, i);
		struct hr_result_rank *rk = &r->layout[i];
		READ_FIELDS(e, rank_fields, rk);
		READ_FIELDS(getk(e, "dir_mount"), mount_fields, &rk->dir_mount);
		rk->dir_mount.network_fs = json_is_true(getk(getk(e, "dir_mount"), "network_fs"));
		if (rk->host.str)
			json_object_set_new(counts, rk->host.str,
					    json_integer(json_integer_value(json_object_get(counts, rk->host.str)) + 1));
	}
	json_object_foreach(counts, k, c)
		if (json_integer_value(c) > r->ranks_per_host_max)
			r->ranks_per_host_max = (int)json_integer_value(c);
	json_decref(counts);
	return 0;
}

static int read_straggler(const json_t *e, void *slot)
{
	struct hr_result_straggler *s = slot;

	READ_FIELDS(e, straggler_fields, s);
	return 0;
}

static int read_allreduce(const json_t *doc, struct hr_result *r)
{
	int rc;

	if ((rc = read_layout(doc, r)))
		return rc;
	r->backend = key(r->results, "backend");
	r->wrong_total = key(r->results, "wrong_total");
	if ((rc = read_list(r->results, "stragglers", &r->stragglers_list, (void **)&r->stragglers,
			    sizeof(*r->stragglers), read_straggler)))
		return rc;
	return read_list(r->results, "sweeps", &r->sweeps_list, (void **)&r->sweeps, sizeof(*r->sweeps),
			 read_sweep);
}

static int read_config(const json_t *c, void *slot)
{
	const json_t *lat = getk(c, "lateness_us");
	struct hr_result_config *k = slot;

	READ_FIELDS(c, config_fields, k);
	k->has_lateness = json_is_object(lat);
	READ_FIELDS(lat, lateness_fields, k);
	return strs(getk(c, "reasons"), &k->reasons);
}

static int read_loader(struct hr_result *r)
{
	const json_t *rec = getk(r->results, "recommendation");

	r->mode = key(r->results, "mode");
	r->verdict = key(r->results, "verdict");
	r->step_ms = key(r->results, "step_ms");
	r->lthr.present = json_is_object(getk(r->results, "thresholds"));
	READ_FIELDS(getk(r->results, "thresholds"), loader_thr_fields, &r->lthr);
	r->mask_collapsed = json_is_true(getk(r->results, "mask_collapsed"));
	r->rec.present = json_is_object(rec);
	READ_FIELDS(rec, rec_fields, &r->rec);
	return read_list(r->results, "configs", &r->configs_list, (void **)&r->configs, sizeof(*r->configs),
			 read_config);
}


static int read_point(const json_t *p, void *slot)
{
	struct hr_result_point *pt = slot;
	const json_t *cf = getk(p, "confirm");

	READ_FIELDS(p, point_fields, pt);
	read_stats(getk(p, "time_sec"), &pt->time_sec);
	pt->confirm.present = json_is_object(cf);
	READ_FIELDS(cf, point_confirm_fields, &pt->confirm);
	read_stats(getk(cf, "time_sec"), &pt->confirm.time_sec);
	pt->throttled = json_is_true(getk(p, "throttled"));
	return telemetry(getk(p, "telemetry"), &pt->telemetry);
}

static const struct field power_pt_fields[] = {
	{ FK("cap_w"), offsetof(struct hr_result_power_pt, cap_w) },
	{ FK("gflops"), offsetof(struct hr_result_power_pt, gflops) },
	{ FK("gflop_per_j"), offsetof(struct hr_result_power_pt, gflop_per_j) },
	{ FK("avg_power_w"), offsetof(struct hr_result_power_pt, avg_power_w) },
	{ FK("gbps"), offsetof(struct hr_result_power_pt, gbps) },
};

static const struct field power_fields[] = {
	{ FK("gpu_uuid"), offsetof(struct hr_result_power, gpu_uuid) },
	{ FK("default_limit_w"), offsetof(struct hr_result_power, default_limit_w) },
	{ FK("original_limit_w"), offsetof(struct hr_result_power, original_limit_w) },
	{ FK("tolerance_pct"), offsetof(struct hr_result_power, tolerance_pct) },
};

static const struct field power_rec_fields[] = {
	{ FK("judged"), offsetof(struct hr_result_power, rec_judged) },
	{ FK("cap_w"), offsetof(struct hr_result_power, rec_cap_w) },
	{ FK("compute_loss_pct"), offsetof(struct hr_result_power, rec_loss_pct) },
	{ FK("energy_per_flop_saved_pct"), offsetof(struct hr_result_power, rec_saved_pct) },
	{ FK("why"), offsetof(struct hr_result_power, rec_why) },
};

static int read_power_pt(const json_t *e, void *slot)
{
	READ_FIELDS(e, power_pt_fields, slot);
	return 0;
}

/* roofline --power-limits: the device's "power_sweep" */
static int read_power(const json_t *sw, struct hr_result_power *pw)
{
	const json_t *rec = getk(sw, "recommendation");

	pw->present = json_is_object(sw);
	if (!pw->present)
		return 0;
	READ_FIELDS(sw, power_fields, pw);
	pw->has_rec = json_is_object(rec);
	READ_FIELDS(rec, power_rec_fields, pw);
	return read_list(sw, "curve", &pw->curve_list, (void **)&pw->curve, sizeof(*pw->curve), read_power_pt);
}

static int read_device(const json_t *d, void *slot)
{
	struct hr_result_device *dv = slot;
	const json_t *roofs = getk(d, "roofs"), *cg, *v;
	const char *k;
	size_t n = 0;
	int rc;

	READ_FIELDS(d, device_fields, dv);
	dv->throttled = json_is_true(getk(d, "throttled"));
	dv->clocks = key(d, "clocks");
	dv->host_link = key(d, "host_link");
	dv->clock_mhz = key(getk(d, "config"), "clock_mhz");
	if ((rc = strs(getk(d, "throttle_reasons"), &dv->throttle_reasons)) ||
	    (rc = telemetry(getk(d, "telemetry"), &dv->telemetry)))
		return rc;
	if ((rc = read_list(d, "points", &dv->points_list, (void **)&dv->points, sizeof(*dv->points), read_point)) ||
	    (rc = read_power(getk(d, "power_sweep"), &dv->power)))
		return rc;
	dv->has_roofs = json_is_object(roofs);
	dv->roofs_again = json_is_object(getk(d, "roofs_again")) ? getk(d, "roofs_again") : NULL;
	dv->memory_gbps = key(roofs, "memory_gbps");
	dv->memory_kernel = key(roofs, "memory_kernel");
	cg = getk(roofs, "compute_gflops");
	dv->has_compute = json_is_object(cg);
	if (!json_object_size(cg))
		return 0;
	dv->compute = calloc(json_object_size(cg), sizeof(*dv->compute));
	if (!dv->compute)
		return CH_ERR_RUNTIME;
	json_object_foreach((json_t *)cg, k, v) {
		dv->compute[n].dtype = k;
		dv->compute[n].kernel = keyn(getk(roofs, "compute_kernel"), k, strlen(k));
		dv->compute[n++].gflops = rv(v);
	}
	dv->ncompute = n;
	return 0;
}

static int read_flag(const json_t *e, void *slot)
{
	READ_FIELDS(e, flag_fields, slot);
	return 0;
}

static int read_roofline(struct hr_result *r)
{
	int rc = read_list(r->results, "devices", &r->devices_list, (void **)&r->devices, sizeof(*r->devices),
			   read_device);

	if (rc)
		return rc;
	return read_list(r->results, "flagged", &r->flagged_list, (void **)&r->flagged, sizeof(*r->flagged),
			 read_flag);
}

static int read_ckpt_rank(const json_t *e, void *slot)
{
	READ_FIELDS(e, ckpt_rank_fields, slot);
	return 0;
}

static int read_kfault(const json_t *e, void *slot)
{
	READ_FIELDS(e, kfault_fields, slot);
	return 0;
}

/* results.kernel_log (health_report kernel-log, docs/xid.md) */
static int read_kernel_log(struct hr_result *r)
{
	const json_t *kl = getk(r->results, "kernel_log");
	r->kl_source = key(kl, "source");
	r->kl_bad_time = key(kl, "lines_bad_time");
	r->kl_not_listed = key(kl, "lines_not_listed");
	r->kl_not_listed_action = key(kl, "not_listed_action");
	return read_list(kl, "faults", &r->kfaults_list, (void **)&r->kfaults, sizeof(*r->kfaults), read_kfault);
}

static int read_ckpt_point(const json_t *e, void *slot)
{
	READ_FIELDS(e, ckpt_point_fields, slot);
	return 0;
}

/* the "rank" of every entry of results.verify.*.bad, in order */
static int read_bad_ranks(struct hr_result *r)
{
	const json_t *vv, *b;
	const char *vk;
	size_t n = 0, j;

	json_object_foreach((json_t *)getk(r->results, "verify"), vk, vv)
		n += json_array_size(getk(vv, "bad"));
	if (!n)
		return 0;
	if (!(r->bad_ranks = calloc(n, sizeof(*r->bad_ranks))))
		return CH_ERR_RUNTIME;
	json_object_foreach((json_t *)getk(r->results, "verify"), vk, vv)
		json_array_foreach(getk(vv, "bad"), j, b)
			r->bad_ranks[r->nbad++] = key(b, "rank");
	return 0;
}

static int read_checkpoint(const json_t *doc, struct hr_result *r)
{
	const json_t *sync = getk(r->results, "sync"), *cfg = getk(r->results, "config");
	const json_t *stg = getk(r->results, "staged");
	int rc;

	if ((rc = read_layout(doc, r)) || (rc = read_bad_ranks(r)))
		return rc;
	r->has_sync = json_is_object(sync);
	READ_FIELDS(sync, ckpt_point_fields, &r->sync);
	r->size_bytes = key(cfg, "size_bytes");
	r->interval_sec = key(cfg, "interval_sec");
	r->has_staged = json_is_object(stg);
	r->staged_block_sec = key(stg, "block_sec");
	r->staged_copy_sec = key(stg, "copy_sec");
	if ((rc = read_list(sync, "per_rank", &r->per_rank_list, (void **)&r->per_rank, sizeof(*r->per_rank),
			    read_ckpt_rank)))
		return rc;
	if ((rc = read_list(json_array_get(getk(sync, "again"), 0), "per_rank", &r->again_list,
			    (void **)&r->again, sizeof(*r->again), read_ckpt_rank)))
		return rc;
	return read_list(getk(r->results, "scaling"), "points", &r->scaling_list, (void **)&r->scaling,
			 sizeof(*r->scaling), read_ckpt_point);
}

static void read_load(const json_t *v, struct hr_result_load *l)
{
	l->json = v;
	l->present = json_is_object(v);
	READ_FIELDS(v, load_fields, l);
}

static void read_conditions(const json_t *c, struct hr_result_conditions *k)
{
	k->json = c;
	k->present = json_is_object(c);
	READ_FIELDS(c, conditions_fields, k);
	read_load(getk(c, "before"), &k->before);
	read_load(getk(c, "after"), &k->after);
}

static void read_envelope(const json_t *doc, struct hr_result *r)
{
	const json_t *host = getk(doc, "host"), *en = getk(doc, "energy");
	const json_t *sw = getk(doc, "software");

	r->status = json_string_value(getk(doc, "status"));
	r->reason = json_string_value(getk(doc, "reason"));
	r->hostname = json_string_value(getk(host, "hostname"));
	r->start_utc = json_string_value(getk(doc, "start_utc"));
	r->end_utc = json_string_value(getk(doc, "end_utc"));
	r->host = json_is_object(host) ? host : NULL;
	r->host_packages = key(host, "packages");
	r->host_cpu_model = json_string_value(getk(host, "cpu_model"));
	r->host_ngpus = json_array_size(getk(host, "gpus"));
	r->results = json_is_object(getk(doc, "results")) ? getk(doc, "results") : NULL;
	r->has_energy = json_is_object(en);
	r->energy_cpu_j = key(en, "cpu_j");
	r->energy_gpu_j = key(en, "gpu_j");
	r->energy_wall_sec = key(en, "wall_sec");
	r->energy_source = key(en, "source");
	read_conditions(getk(doc, "conditions"), &r->conditions);
	r->has_software = json_is_object(sw);
	r->sw_cuda_driver = json_string_value(getk(sw, "cuda_driver"));
	r->sw_nvml_driver = json_string_value(getk(sw, "nvml_driver"));
	r->sw_cuda_runtime = json_string_value(getk(sw, "cuda_runtime"));
	r->sw_nccl = json_string_value(getk(sw, "nccl"));
	r->sw_mpi = json_string_value(getk(sw, "mpi"));
}

int hr_result_read(const json_t *doc, struct hr_result *r)
{
	memset(r, 0, sizeof(*r));
	r->doc = doc;
	r->schema = json_string_value(getk(doc, "schema"));
	r->schema_version = key(doc, "schema_version");
	r->tool_name = json_string_value(getk(doc, "tool"));
	r->tool = hr_result_tool(doc);
	if (!r->tool)
		return 0;
	read_envelope(doc, r);
	if (!strcmp(r->tool, "allreduce_bw"))
		return read_allreduce(doc, r);
	if (!strcmp(r->tool, "loader_contention"))
		return read_loader(r);
	if (!strcmp(r->tool, "roofline"))
		return read_roofline(r);
	if (!strcmp(r->tool, "checkpoint_io"))
		return read_checkpoint(doc, r);
	if (!strcmp(r->tool, "kernel_log"))
		return read_kernel_log(r);
	return 0;
}

static void release_telemetry(struct hr_result_telemetry *t)
{
	free(t->self.reasons.v);
	free(t->before.reasons.v);
	free(t->after.reasons.v);
}

void hr_result_release(struct hr_result *r)
{
	size_t i, k;

	for (i = 0; r->sweeps && i < r->sweeps_list.n; i++) {
		free(r->sweeps[i].nodes);
		free(r->sweeps[i].ranks);
		free(r->sweeps[i].rows);
	}
	for (i = 0; r->devices && i < r->devices_list.n; i++) {
		struct hr_result_device *d = &r->devices[i];
		for (k = 0; d->points && k < d->points_list.n; k++)
			release_telemetry(&d->points[k].telemetry);
		release_telemetry(&d->telemetry);
		free(d->throttle_reasons.v);
		free(d->points);
		free(d->compute);
		free(d->power.curve);
	}
	for (i = 0; r->configs && i < r->configs_list.n; i++)
		free(r->configs[i].reasons.v);
	free(r->flagged);
	free(r->per_rank);
	free(r->again);
	free(r->bad_ranks);
	free(r->scaling);
	free(r->kfaults);
	free(r->sweeps);
	free(r->layout);
	free(r->stragglers);
	free(r->configs);
	free(r->devices);
	memset(r, 0, sizeof(*r));
}

struct hr_rv hr_result_roof_again(const struct hr_result_device *d, const char *metric)
{
	if (!strcmp(metric, "memory_gbps"))
		return key(d->roofs_again, "memory_gbps");
	if (!strncmp(metric, "compute_gflops.", 15))
		return keyn(getk(d->roofs_again, "compute_gflops"), metric + 15, strlen(metric + 15));
	return rv(NULL);
}

const struct hr_result_point *hr_result_roof_point(const struct hr_result_device *d, int compute)
{
	const struct hr_result_point *best = NULL;
	const char *kd = compute < 0 ? d->memory_kernel.str : d->compute[compute].kernel.str;
	const char *dtype = compute < 0 ? NULL : d->compute[compute].dtype;
	double bv = -1;
	size_t k;
	int pass;

	/* pass 0: the point the roof names; pass 1: the best of its kind */
	for (pass = kd ? 0 : 1; pass < 2 && !best; pass++)
		for (k = 0; k < d->points_list.n; k++) {
			const struct hr_result_point *p = &d->points[k];
			double v = compute < 0 ? p->gbps.num : p->gflops.num;
			char name[96];
			if (p->valid.json && !p->valid.is_true)
				continue;
			if (pass == 0) {
				snprintf(name, sizeof(name), "%s %s", p->kernel.str ? p->kernel.str : "",
					 p->dtype.str ? p->dtype.str : "");
				if (!strcmp(name, kd) || (p->kernel.str && !strcmp(p->kernel.str, kd) && dtype &&
							  p->dtype.str && !strcmp(p->dtype.str, dtype))) {
					best = p;
					break;
				}
				continue;
			}
			if (compute < 0 ? !(p->family.str && !strcmp(p->family.str, "stream"))
					: !(p->dtype.str && !strcmp(p->dtype.str, dtype)))
				continue;
			if (v > bv) {
				bv = v;
				best = p;
			}
		}
	return best;
}

int hr_result_pick_config(const struct hr_result *r)
{
	static const char *const pref[] = { "as-is", "shared", NULL };
	size_t i;
	int p;

	for (p = 0; pref[p]; p++)
		for (i = 0; i < r->configs_list.n; i++)
			if (r->configs[i].placement.str && !strcmp(r->configs[i].placement.str, pref[p]))
				return (int)i;
	return -1;
}

/* The first character of @s that no reader accepts in a result file: a
 * control character (C0 but tab and newline, DEL, C1) or a bidirectional
 * mark or override (hr_char_shown_escaped()); 0 when there is none. */
static long bad_char(const char *s, size_t n)
{
	size_t i = 0, len;

	while (i < n) {
		long c = hr_utf8_next(s + i, n - i, &len);
		if (c != '\t' && c != '\n' && c != 0x2028 && c != 0x2029 && hr_char_shown_escaped(c))
			return c < 0 ? (unsigned char)s[i] : c;
		i += len;
	}
	return 0;
}

static long find_control(const json_t *v, char *where, size_t n, size_t len)
{
	const char *k;
	const json_t *e;
	size_t i;
	long c;

	if (json_is_string(v))
		return bad_char(json_string_value(v), json_string_length(v));
	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, k, e) {
			long kc = bad_char(k, strlen(k));
			if (!kc && len < n)
				snprintf(where + len, n - len, "%s%s", len ? "." : "", k);
			if (kc)
				return kc;
			if ((c = find_control(e, where, n, len < n ? strlen(where) : len)))
				return c;
			if (len < n)
				where[len] = '\0';
		}
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, e) {
			if (len < n)
				snprintf(where + len, n - len, "[%zu]", i);
			if ((c = find_control(e, where, n, len < n ? strlen(where) : len)))
				return c;
			if (len < n)
				where[len] = '\0';
		}
	}
	return 0;
}

/* 1 when @s (@n bytes) is printable ASCII, tab and newline: no character
 * bad_char() looks for (it decodes UTF-8 for each character otherwise) */
static int plain_ascii(const char *s, size_t n)
{
	size_t i;
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if ((c < 0x20 && c != '\t' && c != '\n') || c >= 0x7f)
			return 0;
	}
	return 1;
}

/* find_control() without naming where: the common case, a clean document,
 * costs no path built for each key */
static int any_control(const json_t *v)
{
	const char *k;
	const json_t *e;
	size_t i;

	if (json_is_string(v))
		return !plain_ascii(json_string_value(v), json_string_length(v)) &&
		       bad_char(json_string_value(v), json_string_length(v)) != 0;
	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, k, e)
			if ((!plain_ascii(k, strlen(k)) && bad_char(k, strlen(k))) || any_control(e))
				return 1;
	} else if (json_is_array(v)) {
		json_array_foreach(v, i, e)
			if (any_control(e))
				return 1;
	}
	return 0;
}

/* a byte of @w that is 0x7F or above, or a backslash (8 bytes at a time:
 * may say so of a word that has none, never the other way) */
static int word_flagged(uint64_t w)
{
	const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
	uint64_t bs = w ^ (0x5cull * ones);
	return (((w + ones) | w) & highs) || ((bs - ones) & ~bs & highs);
}

#ifdef __SSE2__
/* @i moved past the 64-byte blocks of @text from @i on that hold no byte
 * 0x7F or above and no backslash (16 bytes a compare; the text of a result
 * file is almost all such blocks) */
static size_t skip_plain(const char *text, size_t i, size_t len)
{
	const __m128i del = _mm_set1_epi8(0x7f), bs = _mm_set1_epi8('\\');
	for (; i + 64 <= len; i += 64) {
		__m128i any = _mm_setzero_si128();
		int k;
		for (k = 0; k < 64; k += 16) {
			__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(text + i + k));
			/* the sign bit: 0x80 or above; the compares: 0x7F, '\\' */
			any = _mm_or_si128(any, _mm_or_si128(v, _mm_or_si128(_mm_cmpeq_epi8(v, del),
										  _mm_cmpeq_epi8(v, bs))));
		}
		if (_mm_movemask_epi8(any))
			break;
	}
	return i;
}
#else
static size_t skip_plain(const char *text, size_t i, size_t len)
{
	(void)text;
	(void)len;
	return i;
}
#endif

int hr_result_text_plain(const char *text, size_t len)
{
	size_t i = 0, looked = 0; /* looked: the end of the block skip_plain() stopped at */
	while (i < len) {
		unsigned char c;
		if (i >= looked) {
			size_t j = skip_plain(text, i, len);
			if (j != i) {
				i = j;
				continue;
			}
			looked = i + 64;
		}
		if (i + 8 <= len) {
			uint64_t w;
			memcpy(&w, text + i, 8);
			if (!word_flagged(w)) {
				i += 8;
				continue;
			}
		}
		c = (unsigned char)text[i];
		if (c >= 0x7f)
			return 0;
		if (c == '\\') {
			if (i + 1 >= len || strchr("bfru", text[i + 1]))
				return 0;
			i++; /* the escaped character */
		}
		i++;
	}
	return 1;
}

void hr_result_check_control(struct hr_result *r)
{
	r->control = r->doc ? hr_result_control_char(r->doc, r->control_where, sizeof(r->control_where)) : 0;
	r->control_checked = r->doc != NULL;
}

long hr_result_control_char(const json_t *doc, char *where, size_t n)
{
	if (n)
		where[0] = '\0';
	return any_control(doc) ? find_control(doc, where, n, 0) : 0;
}

long long hr_rv_int(const struct hr_rv *v, long long dflt)
{
	if (v->is_int)
		return (long long)v->i;
	if (v->num >= -9.2e18 && v->num <= 9.2e18)
		return (long long)v->num;
	return dflt;
}

int hr_result_accept(const struct hr_result *r, const char *path, int named, struct hr_issues *is)
{
	const char *schema = r->schema, *tool = r->tool_name;
	char where[128];
	long c;

	if (!schema || strcmp(schema, CH_RESULT_SCHEMA)) {
		if (schema && !strcmp(schema, "clusterhealth.profile"))
			return HR_RESULT_IGNORED; /* health_report's own output */
		if (named) {
			hr_issue_add(is, HR_ISSUE_SKIPPED, path, 0, 0,
				     "not a clusterhealth result file (schema '%.60s'); file skipped",
				     schema ? schema : "none");
			return HR_RESULT_SKIPPED;
		}
		hr_issue_add(is, HR_ISSUE_NOTE, path, 0, 0,
			     "ignored: a JSON document that is not a clusterhealth result file (schema '%.60s')",
			     schema ? schema : "none");
		return HR_RESULT_IGNORED;
	}
	if (!r->schema_version.is_int) {
		char *t = r->schema_version.json ? hr_rv_text(&r->schema_version) : NULL;
		if (t)
			hr_issue_add(is, HR_ISSUE_SKIPPED, path, 0, 0,
				     "envelope: 'schema_version' is %.64s (must be the integer %d); file skipped", t,
				     CH_RESULT_SCHEMA_VERSION);
		else
			hr_issue_add(is, HR_ISSUE_SKIPPED, path, 0, 0, "envelope: missing 'schema_version'; file skipped");
		free(t);
		return HR_RESULT_SKIPPED;
	}
	if (r->schema_version.i != CH_RESULT_SCHEMA_VERSION) {
		hr_issue_add(is, HR_ISSUE_SKIPPED, path, 0, 0,
			     "schema_version '%lld' is not supported (this health_report reads %d); file skipped",
			     (long long)r->schema_version.i, CH_RESULT_SCHEMA_VERSION);
		return HR_RESULT_SKIPPED;
	}
	if (!tool || (strcmp(tool, "roofline") && strcmp(tool, "allreduce_bw") &&
		      strcmp(tool, "loader_contention") && strcmp(tool, "checkpoint_io") && strcmp(tool, "kernel_log"))) {
		hr_issue_add(is, HR_ISSUE_SKIPPED, path, 0, 0,
			     "unknown tool '%.60s' (expected roofline, allreduce_bw, loader_contention, checkpoint_io or kernel_log); file skipped",
			     tool ? tool : "(none)");
		return HR_RESULT_SKIPPED;
	}
	if (r->control_checked) {
		c = r->control;
		snprintf(where, sizeof(where), "%s", r->control_where);
	} else {
		c = hr_result_control_char(r->doc, where, sizeof(where));
	}
	if (c) {
		hr_issue_add(is, HR_ISSUE_SKIPPED, path, 0, 0,
			     "%s: a string holds a control character (U+%04lX)%s; file skipped", where, c,
			     c >= 0x0600 ? ", a bidirectional mark or override" : "");
		return HR_RESULT_SKIPPED;
	}
	if (!r->host || !r->hostname) {
		hr_issue_add(is, HR_ISSUE_SKIPPED, path, 0, 0, "envelope: missing 'host.hostname'; file skipped");
		return HR_RESULT_SKIPPED;
	}
	if (!r->results) {
		hr_issue_add(is, HR_ISSUE_SKIPPED, path, 0, 0, "envelope: missing 'results' object; file skipped");
		return HR_RESULT_SKIPPED;
	}
	return HR_RESULT_USE;
}
