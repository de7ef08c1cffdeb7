/*
 * ch_roofline_record.c - roofline's record: a point's JSON object, the roofs,
 * the node summary, the printed tables (see ch_roofline.h;
 * the driver's files: ch_roofline_int.h).
 */
#include "bench/roofline/ch_roofline.h"
#include "bench/roofline/ch_roofline_int.h"
#include "base/ch_datasheet.h"
#include "comm/ch_comm.h"
#include "hw/ch_energy.h"
#include "hw/ch_nvml.h"
#include "base/ch_stats.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

json_t *ch_rl_roofs(json_t *points)
{
	json_t *roofs = json_object(), *cg = json_object(), *ck = json_object(), *ridge = json_object();
	double mem = -1, comp[CH_NDTYPES];
	char mem_kernel[64] = "";
	size_t i;
	json_t *p;
	int d;

	for (d = 0; d < CH_NDTYPES; d++)
		comp[d] = -1;
	json_array_foreach(points, i, p) {
		const char *fam = json_string_value(json_object_get(p, "family"));
		const char *dts = json_string_value(json_object_get(p, "dtype"));
		const char *kn = json_string_value(json_object_get(p, "kernel"));
		double gbps = jget(p, "gbps"), gflops = jget(p, "gflops");
		int dt = ch_dtype_parse(dts);
		if (!json_is_true(json_object_get(p, "valid")) || !fam || dt < 0 || !kn)
			continue;
		if (!strcmp(fam, "stream") && gbps > mem) {
			mem = gbps;
			snprintf(mem_kernel, sizeof(mem_kernel), "%s %s", kn, dts);
		}
		if ((!strcmp(fam, "ladder") || !strcmp(fam, "gemm")) && gflops > comp[dt]) {
			const char *acc = json_string_value(json_object_get(p, "accumulation"));
			char label[64];
			snprintf(label, sizeof(label), "%s%s%s", kn, acc ? ", " : "", acc && !strcmp(acc, "fast") ?
				 "fast accumulation" : acc ? "split accumulation" : "");
			comp[dt] = gflops;
			json_object_set_new(ck, dts, json_string(label));
		}
	}
	json_object_set_new(roofs, "memory_gbps", mem > 0 ? json_real(mem) : json_null());
	json_object_set_new(roofs, "memory_kernel", mem > 0 ? json_string(mem_kernel) : json_null());
	for (d = 0; d < CH_NDTYPES; d++) {
		if (comp[d] <= 0)
			continue;
		json_object_set_new(cg, ch_dtype_name(d), json_real(comp[d]));
		if (mem > 0)
			json_object_set_new(ridge, ch_dtype_name(d), json_real(comp[d] / mem));
	}
	json_object_set_new(roofs, "compute_gflops", cg);
	json_object_set_new(roofs, "compute_kernel", ck);
	json_object_set_new(roofs, "ridge_flop_per_byte", ridge);
	return roofs;
}

/* Median of the metric over GPU devices with status ok, and the flags. */
static void node_metric(json_t *devices, const char *metric, const char *dtype, double threshold_pct,
			json_t *median_obj, json_t *flagged)
{
	double vals[1024], med;
	size_t i, n = 0;
	json_t *dev;

	json_array_foreach(devices, i, dev) {
		json_t *roofs = json_object_get(dev, "roofs");
		double v = dtype ? jget(json_object_get(roofs, "compute_gflops"), dtype) : jget(roofs, "memory_gbps");
		const char *kind = json_string_value(json_object_get(dev, "kind"));
		const char *st = json_string_value(json_object_get(dev, "status"));
		if (!kind || strcmp(kind, "gpu") || !st || strcmp(st, "ok") || !(v > 0) || n >= 1024)
			continue;
		vals[n++] = v;
	}
	if (!n)
		return;
	qsort(vals, n, sizeof(vals[0]), cmp_dbl);
	med = ch_percentile_sorted(vals, n, 50.0);
	json_object_set_new(median_obj, dtype ? dtype : metric, json_real(med));
	json_array_foreach(devices, i, dev) {
		json_t *roofs = json_object_get(dev, "roofs");
		double v = dtype ? jget(json_object_get(roofs, "compute_gflops"), dtype) : jget(roofs, "memory_gbps");
		const char *kind = json_string_value(json_object_get(dev, "kind"));
		const char *st = json_string_value(json_object_get(dev, "status"));
		double below;
		char name[64];
		json_t *f;
		if (!kind || strcmp(kind, "gpu") || !st || strcmp(st, "ok") || !(v > 0))
			continue;
		below = 100.0 * (med - v) / med;
		if (below <= threshold_pct)
			continue;
		f = json_object();
		json_object_set(f, "device", json_object_get(dev, "device"));
		if (json_object_get(dev, "host"))
			json_object_set(f, "host", json_object_get(dev, "host"));
		snprintf(name, sizeof(name), "%s%s%s", metric, dtype ? "." : "", dtype ? dtype : "");
		json_object_set_new(f, "metric", json_string(name));
		json_object_set_new(f, "value", json_real(v));
		json_object_set_new(f, "node_median", json_real(med));
		json_object_set_new(f, "pct_below", json_real(below));
		json_array_append_new(flagged, f);
	}
}

json_t *ch_rl_node_summary(json_t *devices, double threshold_pct, json_t **flagged)
{
	json_t *med = json_object(), *cg = json_object(), *dev;
	size_t i, ngpu = 0;
	int d;

	*flagged = json_array();
	json_array_foreach(devices, i, dev) {
		const char *kind = json_string_value(json_object_get(dev, "kind"));
		const char *st = json_string_value(json_object_get(dev, "status"));
		if (kind && !strcmp(kind, "gpu") && st && !strcmp(st, "ok"))
			ngpu++;
	}
	if (!ngpu) {
		json_decref(med);
		json_decref(cg);
		return json_null();
	}
	node_metric(devices, "memory_gbps", NULL, threshold_pct, med, *flagged);
	for (d = 0; d < CH_NDTYPES; d++)
		node_metric(devices, "compute_gflops", ch_dtype_name(d), threshold_pct, cg, *flagged);
	if (!json_object_get(med, "memory_gbps"))
		json_object_set_new(med, "memory_gbps", json_null());
	json_object_set_new(med, "compute_gflops", cg);
	json_object_set_new(med, "gpus", json_integer((json_int_t)ngpu));
	return med;
}

json_t *stats_json(const struct ch_stats *s)
{
	json_t *o = json_object();
	json_object_set_new(o, "n", json_integer((json_int_t)s->n));
	json_object_set_new(o, "min", jnum(s->min));
	json_object_set_new(o, "median", jnum(s->median));
	json_object_set_new(o, "mean", jnum(s->mean));
	json_object_set_new(o, "p95", jnum(s->p95));
	json_object_set_new(o, "max", jnum(s->max));
	json_object_set_new(o, "cv", jnum(s->cv));
	return o;
}

static json_t *check_json(const struct ch_check *c, const char *method)
{
	json_t *o = json_object();
	json_object_set_new(o, "method", json_string(method));
	json_object_set_new(o, "checked", json_integer((json_int_t)c->checked));
	json_object_set_new(o, "bad", json_integer((json_int_t)c->bad));
	json_object_set_new(o, "first_bad", c->bad ? json_integer((json_int_t)c->first_bad) : json_null());
	json_object_set_new(o, "got", jnum(c->got));
	json_object_set_new(o, "want", jnum(c->want));
	json_object_set_new(o, "tol", jnum(c->tol));
	json_object_set_new(o, "worst_err_over_tol", jnum(c->worst_ratio));
	return o;
}

static const char *check_method(const struct ch_kernel *k)
{
	switch (k->family) {
	case CH_FAM_GEMM:
		return "64 sampled entries (C NaN-filled first) vs exact values, tol: 0 when every partial sum is exact, else (k-1) u R (tensor cores) or 6 sqrt(k) u R (fp32, fp64), R = range of the prefix sums; + eps(out) |value|";
	case CH_FAM_STREAM:
		return k->id == CH_K_DOT ? "sum vs exact value, tol (n+2) eps64 sum|a b|"
					 : "every element vs analytic value, tol 4 eps |value|";
	case CH_FAM_LADDER:
		return "every element vs analytic value (x or 3-x), tol 2 eps |value|";
	default:
		return k->id == CH_K_GELU ? "every element vs GELU in fp64, tol eps|value| + 16 eps32 (|x|+1)"
					  : "every element vs LayerNorm in fp64, tol eps|value| + (2 cols+16) eps32 x scale";
	}
}

static void set_point_numbers_null(json_t *jp)
{
	static const char *const keys[] = { "time_sec", "gbps", "gflops", "gbps_best", "gflops_best",
		"gbps_write_allocate", "pct_of_roof", "pct_of_datasheet", "pct_of_peak_estimate" };
	size_t i;
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		json_object_set_new(jp, keys[i], json_null());
}

static json_t *num_or_null(double v)
{
	return isnan(v) ? json_null() : json_real(v);
}

json_t *ch_rl_energy_json(const struct ch_rl_energy *e)
{
	json_t *o = json_pack("{s:s,s:o,s:o,s:o,s:o,s:i,s:i,s:i,s:f,s:f,s:o,s:f,s:f}",
		"method", ENERGY_BATCH_METHOD, "wall_sec", num_or_null(e->wall_sec),
		"calls", num_or_null(e->ok || !isnan(e->wall_sec) ? e->calls : NAN),
		"duty_cycle", num_or_null(e->duty), "edge_uncertainty_sec", num_or_null(e->ok ? e->edge_sec : NAN),
		"batches", e->batches, "calls_per_batch", e->batch_calls, "counter_updates", e->updates,
		"call_sec", e->call_sec, "batch_min_sec", CH_RL_ENERGY_BATCH_SEC,
		"extra_calls", json_integer((json_int_t)e->batches * e->batch_calls),
		"min_sec", e->min_sec, "min_duty_cycle", CH_RL_ENERGY_MIN_DUTY);
	if (!e->ok)
		json_object_set_new(o, "not_measured", json_string(e->why[0] ? e->why : "not measured"));
	if (e->withheld[0])
		json_object_set_new(o, "gflop_per_j_withheld", json_string(e->withheld));
	return o;
}

json_t *ch_rl_throttle_json(const struct ch_rl_energy *e, int *throttled)
{
	static const char *const names[] = { "power_sec", "thermal_sec", "sw_thermal_sec", "hw_thermal_sec",
					     "hw_power_brake_sec" };
	const double a[] = { e->v0.power_ns, e->v0.thermal_ns, e->v0.sw_thermal_ns, e->v0.hw_thermal_ns,
			     e->v0.hw_power_brake_ns };
	const double b[] = { e->v1.power_ns, e->v1.thermal_ns, e->v1.sw_thermal_ns, e->v1.hw_thermal_ns,
			     e->v1.hw_power_brake_ns };
	json_t *o;
	size_t i;
	int any = 0, known = 0;

	*throttled = -1;
	if (!e->have_thr)
		return json_null();
	o = json_object();
	for (i = 0; i < 5; i++) {
		double d = b[i] - a[i];
		/* a counter that went backwards (driver reload) tells nothing */
		if (isnan(d) || d < 0) {
			json_object_set_new(o, names[i], json_null());
			continue;
		}
		known = 1;
		any |= d > 0;
		json_object_set_new(o, names[i], json_real(d * 1e-9));
	}
	json_object_set_new(o, "window_sec", num_or_null(e->v1.t_sec - e->v0.t_sec));
	json_object_set_new(o, "source", json_string("nvmlDeviceGetViolationStatus (power, thermal) and the clock-event reason counters (nvmlDeviceGetFieldValues, where the build's nvml.h and the driver have them), read before the window's start and after its end"));
	if (known)
		*throttled = any;
	return o;
}

/* The point's shape, counts and working set (a point whose shape is known). */
static void emit_point_shape(const struct rl_dev *r, const struct rl_point *pt, json_t *jp)
{
	const struct ch_kernel *k = pt->p.k;
	const struct ch_shape *s = &pt->p.shape;
	json_t *shape = json_object();

	if (k->family == CH_FAM_GEMM) {
		json_object_set_new(shape, "m", json_integer((json_int_t)s->m));
		json_object_set_new(shape, "n", json_integer((json_int_t)s->nn));
		json_object_set_new(shape, "k", json_integer((json_int_t)s->kk));
	} else {
		json_object_set_new(shape, "elements", json_integer((json_int_t)s->n));
		if (k->id == CH_K_LAYERNORM)
			json_object_set_new(shape, "cols", json_integer((json_int_t)s->cols));
	}
	json_object_set_new(jp, "shape", shape);
	if (k->family == CH_FAM_LADDER) {
		json_object_set_new(jp, "fma_per_elem", json_integer(k->k));
		json_object_set_new(jp, "shortened", json_boolean(s->n < r->array_bytes / ch_dtype_size(pt->p.dt)));
	}
	json_object_set_new(jp, "flops", json_real(pt->cnt.flops));
	json_object_set_new(jp, "bytes", json_real(pt->cnt.bytes));
	json_object_set_new(jp, "bytes_write_allocate", json_real(pt->cnt.bytes_write_allocate));
	json_object_set_new(jp, "ai_flop_per_byte", json_real(pt->cnt.ai));
	if (k->family != CH_FAM_GEMM) {
		double ws = (k->reads_per_elem + k->writes_per_elem) * (double)s->n * (double)ch_dtype_size(pt->p.dt);
		json_object_set_new(jp, "working_set_bytes", json_real(ws));
		json_object_set_new(jp, "fits_in_cache", r->info.cache_bytes ?
				    json_boolean(ws <= (double)r->info.cache_bytes) : json_null());
	}
}

/* The point's telemetry object: clocks before and after (taken from @pt),
 * energy over its window. */
static json_t *emit_point_telemetry(struct rl_point *pt)
{
	struct ch_energy_window_result er;
	json_t *tel = json_object();

	json_object_set_new(tel, "before", pt->tel0 ? pt->tel0 : json_null());
	json_object_set_new(tel, "after", pt->tel1 ? pt->tel1 : json_null());
	pt->tel0 = pt->tel1 = NULL;
	if (pt->batched) {
		json_object_set_new(tel, "energy_j", pt->eb.ok ? jnum(pt->eb.energy_j) : json_null());
		json_object_set_new(tel, "avg_power_w", pt->eb.ok ? jnum(pt->eb.avg_power_w) : json_null());
		json_object_set_new(tel, "gflop_per_j", pt->eb.ok && pt->chk.ok ? jnum(pt->eb.gflop_per_j) : json_null());
		json_object_set_new(tel, "energy_window", ch_rl_energy_json(&pt->eb));
	} else if (pt->have_e) {
		ch_energy_window_result(&pt->ew, pt->cnt.flops, &er);
		json_object_set_new(tel, "energy_j", jnum(er.energy_j));
		json_object_set_new(tel, "avg_power_w", jnum(er.avg_power_w));
		json_object_set_new(tel, "gflop_per_j", pt->chk.ok ? jnum(er.gflop_per_j) : json_null());
		json_object_set_new(tel, "energy_window", json_pack("{s:s,s:f,s:i,s:i,s:i,s:f,s:i,s:s?}",
			"method", ENERGY_METHOD, "wall_sec", er.wall_sec, "calls", er.calls,
			"extra_calls", pt->extra, "counter_updates", er.updates, "min_sec", pt->ew.min_sec,
			"min_updates", pt->ew.min_updates, "not_measured", er.ok ? NULL : er.why));
	} else {
		json_object_set_new(tel, "energy_j", json_null());
		json_object_set_new(tel, "avg_power_w", json_null());
		json_object_set_new(tel, "gflop_per_j", json_null());
		json_object_set_new(tel, "energy_window", json_null());
	}
	return tel;
}

/* Append the point's JSON object to the device's points and count it as an
 * error or invalid; returns pt->rc. */
int emit_point(struct rl_dev *r, struct rl_point *pt)
{
	const struct ch_kernel *k = pt->p.k;
	json_t *jp = json_object();
	struct ch_rates med, best;
	int throttled, tw = -1;
	json_t *jthr;

	json_object_set_new(jp, "kernel", json_string(k->name));
	json_object_set_new(jp, "family", json_string(ch_family_name(k->family)));
	json_object_set_new(jp, "dtype", json_string(ch_dtype_name(pt->p.dt)));
	if (k->family == CH_FAM_GEMM && pt->p.dt == CH_FP8 && r->be->fp8_fast_accum)
		json_object_set_new(jp, "accumulation", json_string(pt->p.fast_accum ? "fast" : "split"));
	json_array_append_new(r->points, jp);
	if (pt->shaped)
		emit_point_shape(r, pt, jp);
	if (pt->rc != 0) {
		json_object_set_new(jp, "valid", json_false());
		json_object_set_new(jp, "error", json_string(pt->error));
		set_point_numbers_null(jp);
		r->errors++;
		return pt->rc;
	}
	ch_rates(&pt->cnt, pt->st.median, &med);
	ch_rates(&pt->cnt, pt->st.min, &best);
	jthr = pt->batched ? ch_rl_throttle_json(&pt->eb, &tw) : json_null();
	/* clocks held down during the window (counters), or a power or
	 * thermal reason in a reading taken while the device was busy */
	throttled = pt->thr0 == 1 || pt->thr1 == 1 || tw == 1;
	json_object_set_new(jp, "valid", json_boolean(pt->chk.ok));
	json_object_set_new(jp, "check", check_json(&pt->chk, check_method(k)));
	json_object_set_new(jp, "headline", json_string("median"));
	json_object_set_new(jp, "calls", json_pack("{s:i,s:i,s:i}", "warmup", r->o->warmup, "timed", pt->ns,
						   "dropped", 1));
	json_object_set_new(jp, "harness_sec", json_pack("{s:f,s:f,s:f}", "size", pt->t_shape, "setup",
							  pt->t_setup, "check", pt->t_check));
	if (pt->chk.ok) {
		json_object_set_new(jp, "time_sec", stats_json(&pt->st));
		json_object_set_new(jp, "gbps", jnum(med.gbps));
		json_object_set_new(jp, "gflops", jnum(med.gflops));
		json_object_set_new(jp, "gbps_best", jnum(best.gbps));
		json_object_set_new(jp, "gflops_best", jnum(best.gflops));
		json_object_set_new(jp, "gbps_write_allocate", jnum(med.gbps_write_allocate));
		if (pt->have_plain) {
			struct ch_rates pr;
			ch_rates(&pt->cnt, pt->plain_st.median, &pr);
			json_object_set_new(jp, "gbps_plain_stores", jnum(pr.gbps));
			json_object_set_new(jp, "gbps_plain_stores_write_allocate", jnum(pr.gbps_write_allocate));
		}
		json_object_set_new(jp, "pct_of_roof", json_null());
		json_object_set_new(jp, "pct_of_datasheet", json_null());
	} else {
		set_point_numbers_null(jp);
		r->invalid++;
	}
	json_object_set_new(jp, "throttled", pt->thr0 < 0 && pt->thr1 < 0 && tw < 0 ? json_null() : json_boolean(throttled));
	json_object_set_new(jp, "throttle_window", jthr);
	json_object_set_new(jp, "telemetry", pt->tel0 || pt->tel1 || pt->have_e || pt->batched ? emit_point_telemetry(pt)
									       : json_null());
	return 0;
}

/* Which datasheet row a compute point is judged against: FMA ladder rungs
 * run on the CUDA cores, GEMMs on the tensor cores where the GPU has them. */
static void datasheet_ceiling_name(int dt, int ladder, char *buf, size_t n)
{
	if (ladder)
		snprintf(buf, n, "%s CUDA cores (datasheet row %s, no tensor cores)", ch_dtype_name(dt),
			 dt == CH_FP64 ? "FP64, not FP64 Tensor Core" : dt == CH_FP32 ? "FP32" : "none");
	else
		snprintf(buf, n, "%s dense peak (%s)", ch_dtype_name(dt),
			 dt == CH_FP32 ? "FP32, CUDA cores" : "Tensor Core where the GPU has one");
}

/* Fill pct_of_roof, pct_of_datasheet and pct_of_peak_estimate from the roofs. */
static void finish_points(struct rl_dev *r, json_t *roofs)
{
	double mem = jget(roofs, "memory_gbps");
	json_t *cg = json_object_get(roofs, "compute_gflops"), *p;
	size_t i;

	json_array_foreach(r->points, i, p) {
		int dt = ch_dtype_parse(json_string_value(json_object_get(p, "dtype")));
		double gbps = jget(p, "gbps"), gflops = jget(p, "gflops"), pct;
		if (!json_is_true(json_object_get(p, "valid")) || dt < 0)
			continue;
		pct = ch_pct_of_roof(gbps, gflops, isnan(mem) ? -1 : mem,
				     isnan(jget(cg, ch_dtype_name(dt))) ? -1 : jget(cg, ch_dtype_name(dt)));
		json_object_set_new(p, "pct_of_roof", pct >= 0 ? json_real(pct) : json_null());
		if (r->ds) {
			int ladder = !strcmp(json_string_value(json_object_get(p, "family")), "ladder");
			double ceil_ = ladder ? ch_datasheet_cuda_core_gflops(r->ds, dt) : r->ds->gflops[dt];
			char what[96];
			pct = ch_pct_of_roof(gbps, gflops, r->ds->memory_gbps, ceil_ > 0 ? ceil_ : -1);
			json_object_set_new(p, "pct_of_datasheet", pct >= 0 ? json_real(pct) : json_null());
			datasheet_ceiling_name(dt, ladder, what, sizeof(what));
			json_object_set_new(p, "datasheet_ceiling", ceil_ > 0 ?
					    json_pack("{s:s,s:f}", "what", what, "gflops", ceil_) : json_null());
		}
		if (r->peak_est[dt] > 0 && gflops > 0)
			json_object_set_new(p, "pct_of_peak_estimate", json_real(100.0 * gflops / r->peak_est[dt]));
	}
}

void update_roofs(struct rl_dev *r)
{
	json_t *roofs = ch_rl_roofs(r->points), *p;
	size_t i;
	int thr = 0;

	finish_points(r, roofs);
	json_object_set_new(r->jdev, "roofs", roofs);
	json_array_foreach(r->points, i, p)
		thr |= json_is_true(json_object_get(p, "throttled"));
	json_object_set_new(r->jdev, "throttled", json_boolean(thr));
}

/* ------------------------------------------------------------ output */

static void fmt_num(char *buf, size_t n, double v, int prec)
{
	if (isnan(v))
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%.*f", prec, v);
}

/* Range of a telemetry field over every point's before and after readings. */
static int tel_range(json_t *points, const char *field, double *lo, double *hi)
{
	static const char *const when[] = { "before", "after" };
	size_t i, w;
	json_t *p;
	int n = 0;

	*lo = INFINITY;
	*hi = -INFINITY;
	json_array_foreach(points, i, p)
		for (w = 0; w < 2; w++) {
			double v = jget(json_object_get(json_object_get(p, "telemetry"), when[w]), field);
			if (isnan(v))
				continue;
			*lo = v < *lo ? v : *lo;
			*hi = v > *hi ? v : *hi;
			n++;
		}
	return n;
}

/* One line on clocks, power and energy: what telemetry said, or n/a. */
static void print_telemetry(json_t *d)
{
	json_t *points = json_object_get(d, "points"), *p;
	int gpu = !strcmp(json_string_value(json_object_get(d, "kind")), "gpu");
	double lo, hi;
	size_t i;
	int any = 0;

	printf("# telemetry:");
	if (tel_range(points, gpu ? "sm_mhz" : "cpu_mhz", &lo, &hi))
		printf(" %s clock %.0f-%.0f MHz;", gpu ? "SM" : "CPU", lo, hi), any = 1;
	if (gpu && tel_range(points, "mem_mhz", &lo, &hi))
		printf(" memory clock %.0f-%.0f MHz;", lo, hi), any = 1;
	if (gpu && tel_range(points, "power_w", &lo, &hi))
		printf(" power %.0f-%.0f W;", lo, hi), any = 1;
	if (gpu && tel_range(points, "temp_c", &lo, &hi))
		printf(" temperature %.0f-%.0f C;", lo, hi), any = 1;
	if (!any)
		printf(" clocks n/a;");
	printf(" energy");
	any = 0;
	json_array_foreach(points, i, p) {
		json_t *tel = json_object_get(p, "telemetry"), *win = json_object_get(tel, "energy_window");
		double g = jget(tel, "gflop_per_j");
		int batched = json_is_number(json_object_get(win, "duty_cycle")) || json_is_integer(json_object_get(win, "batches"));
		const char *acc = json_string_value(json_object_get(p, "accumulation"));
		if (json_is_object(win) && !any) {
			if (batched)
				printf(" (%s counter between two of its changes >= %.1f s apart, calls queued back to back; power over that time):",
				       gpu ? "NVML" : "device", jget(win, "min_sec"));
			else
				printf(" (%s counter over windows of >= %.1f s of repeated calls, power over wall time):",
				       gpu ? "NVML" : "RAPL", jget(win, "min_sec"));
			any = -1;
		}
		if (strcmp(json_string_value(json_object_get(p, "family")), "gemm"))
			continue;
		if (!isnan(g)) {
			printf(" %s %s%s%s %.2f GFLOP/J at %.0f W", json_string_value(json_object_get(p, "kernel")),
			       json_string_value(json_object_get(p, "dtype")), acc ? " " : "", acc ? acc : "", g,
			       jget(tel, "avg_power_w"));
			if (batched)
				printf(" (duty %.2f)", jget(win, "duty_cycle"));
			printf(";");
			any = 1;
		} else if (json_is_string(json_object_get(win, "gflop_per_j_withheld"))) {
			printf(" %s %s%s%s GFLOP/J withheld (duty %.2f < %.2f);", json_string_value(json_object_get(p, "kernel")),
			       json_string_value(json_object_get(p, "dtype")), acc ? " " : "", acc ? acc : "",
			       jget(win, "duty_cycle"), CH_RL_ENERGY_MIN_DUTY);
			any = 1;
		}
	}
	if (!any)
		printf(": n/a (%s not readable)", gpu ? "NVML energy counter" : "RAPL");
	else if (any < 0)
		printf(" no GEMM point with a measured energy (energy_window.not_measured in the result file says why)");
	printf("\n");
}

/* The lines above a device's table: setup, BLAS, timing rule, columns. */
static void print_device_setup(json_t *d, const struct ch_rl_opts *o, int has_ds)
{
	json_t *cfg = json_object_get(d, "config");

	if (cfg) {
		double ab = jget(cfg, "array_bytes"), cb = jget(cfg, "cache_bytes");
		printf("# %s%s; kernels %s%s%s; arrays 3 x %.1f MiB",
		       json_integer_value(json_object_get(cfg, "threads")) ? "" : "",
		       json_integer_value(json_object_get(cfg, "threads")) ?
		       "one thread per core, bound (hwloc)" : "CUDA",
		       json_string_value(json_object_get(cfg, "isa")),
		       json_is_string(json_object_get(cfg, "stores")) ? ", stores " : "",
		       json_is_string(json_object_get(cfg, "stores")) ? json_string_value(json_object_get(cfg, "stores")) : "",
		       ab / (double)MIB);
		if (cb > 0)
			printf(" (working set %.1fx the %.1f MiB %s%s)", 3 * ab / cb, cb / (double)MIB,
			       strcmp(json_string_value(json_object_get(d, "kind")), "gpu") ? "last-level cache" : "L2",
			       3 * ab < 4 * cb ? "; under 4x: memory points may run from cache" : "");
		printf("\n# BLAS: %s\n", json_string_value(json_object_get(cfg, "blas")) ?
		       json_string_value(json_object_get(cfg, "blas")) : "-");
	}
	if (o->common.min_time_sec > 0)
		printf("# time: median of the timed calls after the first (at least %d, until they add up to %g s),"
		       " after %d warm-up; best = fastest;", o->iters - 1, o->common.min_time_sec, o->warmup);
	else
		printf("# time: median of %d calls (%d timed, the first dropped, after %d warm-up); best = fastest;",
		       o->iters - 1, o->iters, o->warmup);
	printf(" GB/s = 1e9 bytes/s of explicit traffic (BabelStream counting)\n");
	printf("# %-9s %-5s %10s %10s %6s %9s %9s %10s %10s %7s%s  %s\n", "kernel", "dtype", "AI_flop/B",
	       "time_ms", "cv_%", "GB/s", "GB/s_best", "GFLOP/s", "GFLOP/s_b", "%roof", has_ds ? "    %ds" : "", "note");
}

/* One row of a device's table: the point @p, or why it has no numbers. */
static void print_point(json_t *p, json_t *cfg, int has_ds)
{
	const char *kn = json_string_value(json_object_get(p, "kernel"));
	const char *dt = json_string_value(json_object_get(p, "dtype"));
	json_t *ts = json_object_get(p, "time_sec"), *chk = json_object_get(p, "check");
	char a[32], b[32], c[32], e[32], f[32], g[32], h[32], k2[32], l[32], note[256] = "";

	if (!json_is_true(json_object_get(p, "valid"))) {
		if (json_is_string(json_object_get(p, "error")))
			printf("  %-9s %-5s  ERROR: %s\n", kn, dt, json_string_value(json_object_get(p, "error")));
		else
			printf("  %-9s %-5s  INVALID (not reported): %lld of %lld values wrong; first at %lld: "
			       "got %.9g, want %.9g, tol %.3g\n", kn, dt,
			       (long long)json_integer_value(json_object_get(chk, "bad")),
			       (long long)json_integer_value(json_object_get(chk, "checked")),
			       (long long)json_integer_value(json_object_get(chk, "first_bad")),
			       jget(chk, "got"), jget(chk, "want"), jget(chk, "tol"));
		return;
	}
	fmt_num(a, sizeof(a), jget(p, "ai_flop_per_byte"), 3);
	fmt_num(b, sizeof(b), jget(ts, "median") * 1e3, 3);
	fmt_num(c, sizeof(c), jget(ts, "cv") * 100, 1);
	fmt_num(e, sizeof(e), jget(p, "gbps"), 2);
	fmt_num(f, sizeof(f), jget(p, "gbps_best"), 2);
	fmt_num(g, sizeof(g), jget(p, "gflops"), 2);
	fmt_num(h, sizeof(h), jget(p, "gflops_best"), 2);
	fmt_num(k2, sizeof(k2), jget(p, "pct_of_roof"), 1);
	fmt_num(l, sizeof(l), jget(p, "pct_of_datasheet"), 1);
	if (json_is_object(json_object_get(p, "shape")) && json_object_get(json_object_get(p, "shape"), "m"))
		snprintf(note, sizeof(note), "%lld^3%s%s",
			 (long long)json_integer_value(json_object_get(json_object_get(p, "shape"), "m")),
			 json_is_string(json_object_get(p, "accumulation")) ? ", accumulation " : "",
			 json_is_string(json_object_get(p, "accumulation")) ?
			 json_string_value(json_object_get(p, "accumulation")) : "");
	else if (json_is_true(json_object_get(p, "fits_in_cache")))
		snprintf(note, sizeof(note), "%.1f MiB fits in cache%s", jget(p, "working_set_bytes") / (double)MIB,
			 json_is_true(json_object_get(p, "shortened")) ? " (rung past the ridge: compute-bound)" : "");
	if (json_is_string(json_object_get(cfg, "stores")) &&
	    !strcmp(json_string_value(json_object_get(cfg, "stores")), "write-allocate") &&
	    jget(p, "gbps_write_allocate") > jget(p, "gbps") * 1.0001 &&
	    !json_is_true(json_object_get(p, "fits_in_cache")))
		snprintf(note + strlen(note), sizeof(note) - strlen(note), "%s%.2f GB/s with write-allocate",
			 note[0] ? ", " : "", jget(p, "gbps_write_allocate"));
	if (json_is_number(json_object_get(p, "gbps_plain_stores")))
		snprintf(note + strlen(note), sizeof(note) - strlen(note), "%splain stores %.2f GB/s (%.2f with write-allocate)",
			 note[0] ? ", " : "", jget(p, "gbps_plain_stores"), jget(p, "gbps_plain_stores_write_allocate"));
	if (json_is_true(json_object_get(p, "throttled")))
		snprintf(note + strlen(note), sizeof(note) - strlen(note), "%sTHROTTLED", note[0] ? ", " : "");
	if (json_is_object(json_object_get(p, "confirm"))) {
		json_t *cf = json_object_get(p, "confirm");
		const char *fam = json_string_value(json_object_get(p, "family"));
		int flops = jget(p, "flops") > 0 && !(fam && !strcmp(fam, "stream"));
		if (json_is_true(json_object_get(cf, "valid")))
			snprintf(note + strlen(note), sizeof(note) - strlen(note), "%smeasured again (%s): %.2f %s",
				 note[0] ? ", " : "", json_string_value(json_object_get(cf, "why")),
				 jget(cf, flops ? "gflops" : "gbps"), flops ? "GFLOP/s" : "GB/s");
		else
			snprintf(note + strlen(note), sizeof(note) - strlen(note), "%smeasured again: %s",
				 note[0] ? ", " : "", json_string_value(json_object_get(cf, "error")));
	}
	printf("  %-9s %-5s %10s %10s %6s %9s %9s %10s %10s %7s%s%s  %s\n", kn, dt, a, b, c, e, f, g, h, k2,
	       has_ds ? " " : "", has_ds ? l : "", note);
}

/* The lines below a device's table: memory and compute roofs against the
 * peak estimate and the datasheet, ridge points. */
static void print_roofs(json_t *d)
{
	json_t *points = json_object_get(d, "points"), *cfg = json_object_get(d, "config"), *p;
	json_t *roofs = json_object_get(d, "roofs"), *ds = json_object_get(d, "datasheet");
	json_t *pe = json_object_get(d, "peak_estimate");
	double mem = jget(roofs, "memory_gbps");
	int has_ds = json_is_object(ds);
	size_t i;
	const char *key;
	json_t *v;

	if (has_ds) {
		json_t *cc = json_object_get(ds, "cuda_core_gflops");
		int ladder = 0;
		json_array_foreach(points, i, p)
			ladder |= !strcmp(json_string_value(json_object_get(p, "family")), "ladder");
		if (ladder)
			printf("# %%ds of the fma ladder: against the CUDA-core figures (fp64 %.0f GFLOP/s, the datasheet's"
			       " FP64 row, not FP64 Tensor Core; fp32 %.0f), none for other dtypes\n",
			       jget(cc, "fp64") > 0 ? jget(cc, "fp64") : 0, jget(cc, "fp32") > 0 ? jget(cc, "fp32") : 0);
	}
	if (!isnan(mem))
		printf("# memory roof: %.2f GB/s (%s, median)\n", mem,
		       json_string_value(json_object_get(roofs, "memory_kernel")));
	else
		printf("# memory roof: - (no valid stream point)\n");
	json_object_foreach(json_object_get(roofs, "compute_gflops"), key, v) {
		json_t *est = json_object_get(pe, key);
		printf("# compute roof %s: %.2f GFLOP/s (%s, median)", key, json_number_value(v),
		       json_string_value(json_object_get(json_object_get(roofs, "compute_kernel"), key)));
		if (est) {
			double pct = 100.0 * json_number_value(v) / jget(est, "gflops");
			printf("; %.1f%% of the peak %.1f GFLOP/s, %s", pct, jget(est, "gflops"),
			       json_string_value(json_object_get(est, "how")));
			if (pct > 100 && jget(cfg, "clock_mhz") > 0)
				printf(" [above the estimate: the cores ran at >= %.2f GHz, faster than the clock read (turbo)]",
				       jget(cfg, "clock_mhz") * 1e-3 * pct / 100);
		}
		if (has_ds) {
			const char *ck = json_string_value(json_object_get(json_object_get(roofs, "compute_kernel"), key));
			int ladder = ck && !strncmp(ck, "fma", 3);
			double c = jget(json_object_get(ds, ladder ? "cuda_core_gflops" : "compute_gflops"), key);
			char what[96];
			datasheet_ceiling_name(ch_dtype_parse(key), ladder, what, sizeof(what));
			if (c > 0)
				printf("; %.1f%% of the datasheet %.0f GFLOP/s, %s", 100.0 * json_number_value(v) / c, c, what);
			else if (ladder)
				printf("; no datasheet figure for %s", what);
		}
		printf("\n");
	}
	if (has_ds && !isnan(mem))
		printf("# memory roof is %.1f%% of the datasheet %.0f GB/s\n", 100 * mem / jget(ds, "memory_gbps"),
		       jget(ds, "memory_gbps"));
	if (json_object_size(json_object_get(roofs, "ridge_flop_per_byte"))) {
		printf("# ridge point (compute roof / memory roof):");
		int first = 1;
		json_object_foreach(json_object_get(roofs, "ridge_flop_per_byte"), key, v) {
			printf("%s %s %.2f FLOP/byte", first ? "" : ",", key, json_number_value(v));
			first = 0;
		}
		printf("\n");
	}
}

/* A device's table, from its result-file object @d. */
void print_table(json_t *d, const struct ch_rl_opts *o)
{
	json_t *points = json_object_get(d, "points"), *p;
	const char *dev = json_string_value(json_object_get(d, "device"));
	const char *st = json_string_value(json_object_get(d, "status"));
	int has_ds = json_is_object(json_object_get(d, "datasheet"));
	size_t i;

	printf("\n# device %s: %s (backend %s)%s%s\n", dev,
	       json_string_value(json_object_get(d, "name")) ? json_string_value(json_object_get(d, "name")) : "-",
	       json_string_value(json_object_get(d, "backend")),
	       json_is_string(json_object_get(d, "sku")) ? ", datasheet " : "",
	       json_is_string(json_object_get(d, "sku")) ? json_string_value(json_object_get(d, "sku")) : "");
	if (st && strcmp(st, "ok") && !json_array_size(points)) {
		printf("# %s: %s\n", st, json_string_value(json_object_get(d, "reason")) ?
		       json_string_value(json_object_get(d, "reason")) : "");
		return;
	}
	print_device_setup(d, o, has_ds);
	json_array_foreach(points, i, p)
		print_point(p, json_object_get(d, "config"), has_ds);
	print_roofs(d);
	print_telemetry(d);
	ch_rl_power_print(d);
	if (json_is_true(json_object_get(d, "throttled")))
		printf("# WARNING: some points were measured while the clocks were held down by power or temperature\n");
	if (st && strcmp(st, "ok"))
		printf("# status: %s (%s)\n", st, json_string_value(json_object_get(d, "reason")) ?
		       json_string_value(json_object_get(d, "reason")) : "");
}

void print_node(json_t *node_median, json_t *flagged)
{
	size_t i;
	json_t *f, *v;
	const char *key;

	if (!json_is_object(node_median))
		return;
	printf("\n# node median over %lld GPUs: memory %.1f GB/s", (long long)json_integer_value(json_object_get(node_median, "gpus")),
	       jget(node_median, "memory_gbps"));
	json_object_foreach(json_object_get(node_median, "compute_gflops"), key, v)
		printf(", %s %.1f GFLOP/s", key, json_number_value(v));
	printf("\n");
	json_array_foreach(flagged, i, f) {
		json_t *cf = json_object_get(f, "confirmed");
		printf("# FLAGGED: %s %s %.1f is %.1f%% below the node median %.1f",
		       json_string_value(json_object_get(f, "device")), json_string_value(json_object_get(f, "metric")),
		       jget(f, "value"), jget(f, "pct_below"), jget(f, "node_median"));
		if (json_is_boolean(cf))
			printf("; measured again %.1f, %.1f%% below: %s\n", jget(f, "confirm_value"),
			       jget(f, "confirm_pct_below"), json_is_true(cf) ? "confirmed" : "did not reproduce");
		else
			printf("; not measured again\n");
	}
	if (!json_array_size(flagged))
		printf("# no GPU more than %.0f%% below the node median\n", NODE_FLAG_PCT);
}
