/*
 * ch_roofline_confirm.c - roofline's validation: the points of flagged devices
 * measured again, and the verdicts of the confirmation (see ch_roofline.h;
 * the driver's files: ch_roofline_int.h).
 */
#include "bench/roofline/ch_roofline.h"
#include "bench/roofline/ch_roofline_int.h"
#include "base/ch_common.h"
#include "base/ch_datasheet.h"
#include "comm/ch_comm.h"
#include "hw/ch_energy.h"
#include "base/ch_stats.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The point's headline rate: GFLOP/s when it has FLOPs, else GB/s. */
static double point_rate(json_t *p)
{
	double fl = jget(p, "flops"), gf = jget(p, "gflops");
	return fl > 0 && gf > 0 ? gf : jget(p, "gbps");
}

static int is_ok_gpu(json_t *d)
{
	const char *kind = json_string_value(json_object_get(d, "kind"));
	const char *st = json_string_value(json_object_get(d, "status"));
	return kind && !strcmp(kind, "gpu") && st && !strcmp(st, "ok");
}

static int same_str(json_t *a, json_t *b)
{
	return json_is_string(a) && json_is_string(b) && !strcmp(json_string_value(a), json_string_value(b));
}

/* Median rate of (kernel, dtype) over the node's GPUs with status ok; NAN
 * when no such point */
/* Same fp8 accumulation mode (both unlabelled, or the same label). */
static int same_accumulation(json_t *a, json_t *b)
{
	json_t *x = json_object_get(a, "accumulation"), *y = json_object_get(b, "accumulation");
	return (!x && !y) || (x && y && same_str(x, y));
}

static double point_node_median(json_t *devices, json_t *pt)
{
	double vals[1024];
	size_t i, j, n = 0;
	json_t *d, *q;

	json_array_foreach(devices, i, d) {
		if (!is_ok_gpu(d))
			continue;
		json_array_foreach(json_object_get(d, "points"), j, q) {
			double v = point_rate(q);
			if (n < 1024 && json_is_true(json_object_get(q, "valid")) && v > 0 &&
			    same_str(json_object_get(q, "kernel"), json_object_get(pt, "kernel")) &&
			    same_str(json_object_get(q, "dtype"), json_object_get(pt, "dtype")) &&
			    same_accumulation(q, pt))
				vals[n++] = v;
		}
	}
	if (!n)
		return NAN;
	qsort(vals, n, sizeof(vals[0]), cmp_dbl);
	return ch_percentile_sorted(vals, n, 50.0);
}

/* Does flag @f name device @d? */
static int flag_of(json_t *f, json_t *d)
{
	return same_str(json_object_get(f, "device"), json_object_get(d, "device")) &&
	       (!json_object_get(f, "host") || same_str(json_object_get(f, "host"), json_object_get(d, "host")));
}

/* Is point @p behind roof @metric ("memory_gbps", "compute_gflops.bf16")? */
static int point_of_metric(json_t *p, const char *metric)
{
	const char *fam = json_string_value(json_object_get(p, "family"));
	const char *dt = json_string_value(json_object_get(p, "dtype"));

	if (!fam || !dt || !metric)
		return 0;
	if (!strcmp(metric, "memory_gbps"))
		return !strcmp(fam, "stream");
	return !strncmp(metric, "compute_gflops.", 15) && !strcmp(metric + 15, dt) &&
	       (!strcmp(fam, "ladder") || !strcmp(fam, "gemm"));
}

static int is_ok_cpu(json_t *d)
{
	const char *kind = json_string_value(json_object_get(d, "kind"));
	const char *st = json_string_value(json_object_get(d, "status"));
	return kind && !strcmp(kind, "cpu") && st && !strcmp(st, "ok");
}

/* The roof @p is behind ("memory_gbps", "compute_gflops.fp64"), in @buf;
 * NULL when it is behind none (a point of another family). */
static const char *roof_of_point(json_t *p, char *buf, size_t n)
{
	const char *fam = json_string_value(json_object_get(p, "family"));
	const char *dt = json_string_value(json_object_get(p, "dtype"));
	if (!fam || !dt)
		return NULL;
	if (!strcmp(fam, "stream"))
		snprintf(buf, n, "memory_gbps");
	else if (!strcmp(fam, "ladder") || !strcmp(fam, "gemm"))
		snprintf(buf, n, "compute_gflops.%s", dt);
	else
		return NULL;
	return buf;
}

/* The roof's rate of point @p: GB/s for a stream point, else GFLOP/s (as
 * ch_rl_roofs() takes them). */
static double roof_rate(json_t *p)
{
	const char *fam = json_string_value(json_object_get(p, "family"));
	return fam && !strcmp(fam, "stream") ? jget(p, "gbps") : jget(p, "gflops");
}

/* Does valid point @p of device @d set its roof (the highest rate of the
 * valid points behind the same roof, ch_rl_roofs())? */
static int sets_roof(json_t *d, json_t *p)
{
	char m[64], mq[64];
	const char *mp = roof_of_point(p, m, sizeof(m));
	double v = roof_rate(p);
	json_t *q;
	size_t i;

	if (!mp || !(v > 0) || !json_is_true(json_object_get(p, "valid")))
		return 0;
	json_array_foreach(json_object_get(d, "points"), i, q) {
		const char *mqs = roof_of_point(q, mq, sizeof(mq));
		if (q != p && mqs && !strcmp(mqs, mp) && json_is_true(json_object_get(q, "valid")) && roof_rate(q) > v)
			return 0;
	}
	return 1;
}

json_t *ch_rl_confirm_plan(json_t *devices, json_t *flagged, double threshold_pct, int mode)
{
	json_t *plan = json_array(), *d, *p, *f;
	size_t i, j, k;

	if (!plan)
		return NULL;
	json_array_foreach(devices, i, d) {
		json_t *cfg = json_object_get(d, "config"), *rank = json_object_get(d, "rank");
		const char *why = NULL;
		int cpu = mode != CH_RL_CONFIRM_ALL && is_ok_cpu(d);
		if (mode != CH_RL_CONFIRM_ALL && !is_ok_gpu(d) && !cpu)
			continue;
		json_array_foreach(json_object_get(d, "points"), j, p) {
			double v = point_rate(p), med;
			if (!json_is_true(json_object_get(p, "valid")) || !json_is_object(json_object_get(p, "shape")))
				continue;
			why = NULL;
			if (mode == CH_RL_CONFIRM_ALL) {
				why = "requested";
			} else if (cpu) {
				/* a CPU socket has no like device on its node to
				 * be compared with: the points that set its roofs
				 * are measured again every run, a fresh second
				 * measurement for the fleet and the history */
				if (sets_roof(d, p))
					why = "cpu_socket";
			} else {
				med = point_node_median(devices, p);
				if (v > 0 && med > 0 && 100.0 * (med - v) / med > threshold_pct)
					why = "below_node_median";
				json_array_foreach(flagged, k, f)
					if (!why && flag_of(f, d) &&
					    point_of_metric(p, json_string_value(json_object_get(f, "metric"))))
						why = "below_node_median";
			}
			if (!why)
				continue;
			json_array_append_new(plan, json_pack("{s:I, s:I, s:I, s:O, s:O, s:O, s:O, s:O, s:O, s:s}",
				"dev", (json_int_t)i, "point", (json_int_t)j,
				"rank", json_is_integer(rank) ? json_integer_value(rank) : (json_int_t)-1,
				"device", json_object_get(d, "device"), "backend", json_object_get(d, "backend"),
				"kernel", json_object_get(p, "kernel"), "dtype", json_object_get(p, "dtype"),
				"shape", json_object_get(p, "shape"),
				"array_bytes", json_object_get(cfg, "array_bytes") ? json_object_get(cfg, "array_bytes") : json_null(),
				"why", why));
			if (json_is_string(json_object_get(p, "accumulation"))) /* fp8: the same mode again */
				json_object_set(json_array_get(plan, json_array_size(plan) - 1), "accumulation",
						json_object_get(p, "accumulation"));
		}
	}
	return plan;
}

void ch_rl_confirm_verdicts(json_t *devices, json_t *flagged, double threshold_pct)
{
	json_t *f, *d, *p;
	size_t i, j, k;

	json_array_foreach(flagged, i, f) {
		const char *metric = json_string_value(json_object_get(f, "metric"));
		double med = jget(f, "node_median"), v = NAN;
		json_object_set_new(f, "confirmed", json_null());
		json_array_foreach(devices, j, d) {
			json_t *pts, *roofs;
			if (!flag_of(f, d))
				continue;
			/* the roof again, over the second measurements of its points */
			pts = json_array();
			json_array_foreach(json_object_get(d, "points"), k, p) {
				json_t *c = json_object_get(p, "confirm");
				if (!point_of_metric(p, metric) || !json_is_true(json_object_get(c, "valid")))
					continue;
				json_array_append_new(pts, json_pack("{s:O, s:O, s:O, s:b, s:O, s:O}", "kernel",
					json_object_get(p, "kernel"), "family", json_object_get(p, "family"), "dtype",
					json_object_get(p, "dtype"), "valid", 1, "gbps", json_object_get(c, "gbps"),
					"gflops", json_object_get(c, "gflops")));
			}
			roofs = ch_rl_roofs(pts);
			v = !strcmp(metric, "memory_gbps") ? jget(roofs, "memory_gbps")
							 : jget(json_object_get(roofs, "compute_gflops"), metric + 15);
			json_decref(roofs);
			json_decref(pts);
			break;
		}
		if (isfinite(v) && v > 0 && med > 0) {
			double below = 100.0 * (med - v) / med;
			json_object_set_new(f, "confirmed", json_boolean(below > threshold_pct));
			json_object_set_new(f, "confirm_value", json_real(v));
			json_object_set_new(f, "confirm_pct_below", json_real(below));
		}
	}
}

void ch_rl_roofs_again(json_t *devices)
{
	json_t *d, *p;
	size_t i, j;

	json_array_foreach(devices, i, d) {
		json_t *again = json_object(), *cg = json_object();
		char m[64];
		json_array_foreach(json_object_get(d, "points"), j, p) {
			json_t *c = json_object_get(p, "confirm");
			const char *metric = roof_of_point(p, m, sizeof(m));
			double v;
			if (!metric || !json_is_true(json_object_get(c, "valid")) || !sets_roof(d, p))
				continue;
			v = !strcmp(metric, "memory_gbps") ? jget(c, "gbps") : jget(c, "gflops");
			if (!(isfinite(v) && v > 0))
				continue;
			if (!strcmp(metric, "memory_gbps")) {
				if (!(jget(again, "memory_gbps") >= v))
					json_object_set_new(again, "memory_gbps", json_real(v));
			} else if (!(jget(cg, metric + 15) >= v)) {
				json_object_set_new(cg, metric + 15, json_real(v));
			}
		}
		if (json_object_size(cg))
			json_object_set(again, "compute_gflops", cg);
		if (json_object_size(again))
			json_object_set(d, "roofs_again", again);
		json_decref(cg);
		json_decref(again);
	}
}

/* The "confirm" object of a point measured again. */
static json_t *confirm_json(const struct rl_point *pt, const char *why)
{
	struct ch_rates med;
	json_t *o = json_object();

	json_object_set_new(o, "why", json_string(why));
	if (pt->rc != 0 || !pt->chk.ok) {
		json_object_set_new(o, "time_sec", json_null());
		json_object_set_new(o, "gbps", json_null());
		json_object_set_new(o, "gflops", json_null());
		json_object_set_new(o, "valid", json_false());
		json_object_set_new(o, "error", json_string(pt->rc ? pt->error : "the output failed validation"));
		return o;
	}
	ch_rates(&pt->cnt, pt->st.median, &med);
	json_object_set_new(o, "time_sec", stats_json(&pt->st));
	json_object_set_new(o, "gbps", jnum(med.gbps));
	json_object_set_new(o, "gflops", jnum(med.gflops));
	json_object_set_new(o, "valid", json_true());
	return o;
}

/* The shape a plan entry recorded. */
static void shape_of(json_t *js, struct ch_shape *s)
{
	memset(s, 0, sizeof(*s));
	s->cols = 1;
	s->n = (uint64_t)json_integer_value(json_object_get(js, "elements"));
	if (json_is_integer(json_object_get(js, "cols")))
		s->cols = (uint64_t)json_integer_value(json_object_get(js, "cols"));
	s->m = (uint64_t)json_integer_value(json_object_get(js, "m"));
	s->nn = (uint64_t)json_integer_value(json_object_get(js, "n"));
	s->kk = (uint64_t)json_integer_value(json_object_get(js, "k"));
}

static const struct ch_kernel *kernel_named(const char *name)
{
	int nk, i;
	const struct ch_kernel *t = ch_kernel_table(&nk);
	for (i = 0; name && i < nk; i++)
		if (!strcmp(t[i].name, name))
			return &t[i];
	return NULL;
}

/* Measure again the plan entries [@from, @to) (one device, this rank's);
 * append {dev, point, confirm} to @out. Returns the worst status. */
static int confirm_device(const struct ch_rl_opts *o, const struct ch_backend *be, json_t *plan, size_t from,
			  size_t to, json_t *out, char *reason, size_t rn)
{
	json_t *e0 = json_array_get(plan, from);
	const char *dev = json_string_value(json_object_get(e0, "device"));
	struct rl_dev r;
	char why[512] = "";
	int rc, status = CH_OK, idx = 0;
	size_t i;

	memset(&r, 0, sizeof(r));
	r.o = o;
	r.be = be;
	if (dev && !strncmp(dev, "gpu", 3))
		idx = atoi(dev + 3);
	if (!strcmp(be->name, "cpu"))
		ch_cpu_set_stores((enum ch_stores)o->stores);
	r.array_bytes = (uint64_t)json_integer_value(json_object_get(e0, "array_bytes"));
	rc = be->open(idx, &r.dev, why, sizeof(why));
	if (rc == 0) {
		be->info(r.dev, &r.info);
		if ((rc = be->alloc_arrays(r.dev, r.array_bytes)) != 0)
			snprintf(why, sizeof(why), "cannot allocate the arrays (3 x %llu bytes)", (unsigned long long)r.array_bytes);
	}
	for (i = from; i < to; i++) {
		json_t *e = json_array_get(plan, i), *cj;
		const struct ch_kernel *k = kernel_named(json_string_value(json_object_get(e, "kernel")));
		int dt = ch_dtype_parse(json_string_value(json_object_get(e, "dtype")));
		struct ch_shape shape;
		struct rl_point pt;

		memset(&pt, 0, sizeof(pt));
		if (rc != 0 || !k || dt < 0) {
			pt.rc = rc ? rc : CH_ERR_RUNTIME;
			snprintf(pt.error, sizeof(pt.error), "%s", rc ? why : "unknown kernel or dtype in the plan");
		} else {
			shape_of(json_object_get(e, "shape"), &shape);
			r.force_shape = &shape;
			measure_point(&r, k, (enum ch_dtype)dt,
				      json_is_string(json_object_get(e, "accumulation")) &&
				      !strcmp(json_string_value(json_object_get(e, "accumulation")), "fast"), &pt);
			r.force_shape = NULL;
			json_decref(pt.tel0);
			json_decref(pt.tel1);
		}
		cj = confirm_json(&pt, json_string_value(json_object_get(e, "why")));
		if (pt.rc != 0) {
			status = worse(status, CH_ERR_RUNTIME);
			snprintf(reason, rn, "%s: %s %s measured again: %s", dev ? dev : "?", k ? k->name : "?",
				 dt >= 0 ? ch_dtype_name(dt) : "?", pt.error);
		} else if (!pt.chk.ok) {
			status = worse(status, CH_ERR_CHECK);
			snprintf(reason, rn, "%s: %s %s failed validation when measured again", dev ? dev : "?", k->name,
				 ch_dtype_name(dt));
		}
		json_array_append_new(out, json_pack("{s:O, s:O, s:o}", "dev", json_object_get(e, "dev"), "point",
						     json_object_get(e, "point"), "confirm", cj));
	}
	if (r.dev)
		be->close(r.dev);
	return status;
}

/* Measure again this rank's entries of @plan whose backend is the CPU's
 * (@cpu 1) or not (0), appending to @mine; the worst status. */
static int confirm_entries(const struct ch_rl_opts *o, const struct ch_world *mpi,
			   const struct ch_backend *const *backends, int nbackends, json_t *plan, int cpu, json_t *mine,
			   char *reason, size_t rn)
{
	json_t *e;
	int status = CH_OK, rc, b;
	size_t i, j;

	for (i = 0; plan && mine && i < json_array_size(plan); i = j) {
		json_t *e0 = json_array_get(plan, i);
		const char *bname = json_string_value(json_object_get(e0, "backend"));
		const struct ch_backend *be = NULL;
		/* the entries of one device are consecutive */
		for (j = i + 1; j < json_array_size(plan); j++) {
			e = json_array_get(plan, j);
			if (json_integer_value(json_object_get(e, "dev")) != json_integer_value(json_object_get(e0, "dev")))
				break;
		}
		if ((bname && !strcmp(bname, "cpu")) != cpu)
			continue;
		if (mpi->active && json_integer_value(json_object_get(e0, "rank")) != mpi->rank)
			continue;
		for (b = 0; b < nbackends && bname; b++)
			if (!strcmp(backends[b]->name, bname))
				be = backends[b];
		if (!be) {
			snprintf(reason, rn, "no backend '%s' to measure %s again", bname ? bname : "?",
				 json_string_value(json_object_get(e0, "device")));
			status = worse(status, CH_ERR_RUNTIME);
			continue;
		}
		rc = confirm_device(o, be, plan, i, j, mine, reason, rn);
		status = worse(status, rc);
	}
	return status;
}

int ch_rl_confirm(const struct ch_rl_opts *o, const struct ch_world *mpi, const struct ch_backend *const *backends,
		  int nbackends, json_t *devices, json_t *flagged, double threshold_pct, char *reason, size_t rn)
{
	json_t *plan = NULL, *mine, *all, *e;
	int status;
	size_t i;

	if (o->confirm == CH_RL_CONFIRM_OFF) {
		if (flagged)
			ch_rl_confirm_verdicts(devices, flagged, threshold_pct);
		return CH_OK;
	}
	if (devices)
		plan = ch_rl_confirm_plan(devices, flagged, threshold_pct, o->confirm);
	e = ch_world_bcast_json(mpi, plan);
	json_decref(plan);
	plan = e;
	mine = json_array();
	/* the GPUs first, then (after every rank's GPUs) the CPU, as in the
	 * first measurement: a CPU socket measured while other ranks drive
	 * their GPUs would share its cores and memory with their host threads */
	status = confirm_entries(o, mpi, backends, nbackends, plan, 0, mine, reason, rn);
	ch_world_barrier(mpi);
	status = worse(status, confirm_entries(o, mpi, backends, nbackends, plan, 1, mine, reason, rn));
	all = ch_world_gather_json(mpi, mine);
	if (devices && all) {
		json_array_foreach(all, i, e) {
			json_t *d = json_array_get(devices, (size_t)json_integer_value(json_object_get(e, "dev")));
			json_t *p = json_array_get(json_object_get(d, "points"), (size_t)json_integer_value(json_object_get(e, "point")));
			if (json_is_object(p))
				json_object_set(p, "confirm", json_object_get(e, "confirm"));
		}
	}
	if (devices && flagged)
		ch_rl_confirm_verdicts(devices, flagged, threshold_pct);
	if (devices)
		ch_rl_roofs_again(devices);
	json_decref(all);
	json_decref(mine);
	json_decref(plan);
	return status;
}
