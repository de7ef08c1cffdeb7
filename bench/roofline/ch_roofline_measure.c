/*
 * ch_roofline_measure.c - one roofline point measured: its shape, the warm-up
 * and timed calls, the check, energy over a window of calls (see ch_roofline.h;
 * the driver's files: ch_roofline_int.h).
 */
#include "bench/roofline/ch_roofline.h"
#include "bench/roofline/ch_roofline_int.h"
#include "base/ch_common.h"
#include "base/ch_datasheet.h"
#include "comm/ch_comm.h"
#include "hw/ch_energy.h"
#include "hw/ch_nvml.h"
#include "kernels/ch_patterns.h"
#include "base/ch_stats.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The point named by CH_ROOFLINE_CORRUPT ("kernel" or "kernel:dtype"). */
static int corrupt_requested(const struct ch_point_spec *p)
{
	const char *e = getenv("CH_ROOFLINE_CORRUPT");
	char want[64];
	if (!e || !*e)
		return 0;
	snprintf(want, sizeof(want), "%s:%s", p->k->name, ch_dtype_name(p->dt));
	return !strcmp(e, p->k->name) || !strcmp(e, want);
}

static double mem_roof_so_far(json_t *points)
{
	json_t *roofs = ch_rl_roofs(points);
	double m = jget(roofs, "memory_gbps");
	json_decref(roofs);
	return isnan(m) ? -1 : m;
}

int point_shape(struct rl_dev *r, const struct ch_kernel *k, enum ch_dtype dt,
		       struct ch_shape *s)
{
	uint64_t n = r->array_bytes / ch_dtype_size(dt);
	int rc;

	memset(s, 0, sizeof(*s));
	s->cols = 1;
	if (r->force_shape) {
		*s = *r->force_shape;
		return 0;
	}
	if (k->family == CH_FAM_GEMM) {
		uint64_t g = r->o->gemm_n;
		if (!g) {
			if (!r->be->gemm_size)
				g = 8192;
			else if ((rc = r->be->gemm_size(r->dev, dt, 0.2, &g)) != 0)
				return rc;
		}
		s->m = s->nn = s->kk = g;
		return 0;
	}
	if (k->id == CH_K_LAYERNORM) {
		s->cols = CH_LN_COLS;
		if (n < s->cols)
			return CH_ERR_USAGE;
		s->n = n / s->cols * s->cols;
		return 0;
	}
	if (k->family == CH_FAM_LADDER) {
		struct ch_shape full = { .n = n, .cols = 1 };
		struct ch_counts c;
		double peak = r->peak_est[dt];
		ch_kernel_counts(k, dt, &full, &c);
		/* the ladder is FMA code on the CUDA cores: its ceiling is the
		 * CUDA-core figure, not the tensor-core peak */
		if (ch_datasheet_cuda_core_gflops(r->ds, dt) > peak)
			peak = ch_datasheet_cuda_core_gflops(r->ds, dt);
		s->n = ch_rl_ladder_elems(n, c.ai, k->flops_per_elem, mem_roof_so_far(r->points), peak,
					  LADDER_TARGET_SEC, 65536ull * (uint64_t)(r->info.threads > 0 ? r->info.threads : 1));
		return 0;
	}
	s->n = n;
	return 0;
}

/* ------------------------------------------------ energy over queued calls */

struct eb_batch {
	double t0, t1; /* first call's start, last call's end (ch_now_sec clock) */
	int calls;
};

/* The batches of one window: two in flight at most, slots alternate. */
struct eb {
	const struct ch_backend *be;
	struct ch_dev *dev;
	const struct ch_point_spec *p;
	int calls;             /* per batch */
	long queued, done;
	struct eb_batch *b;
	size_t nb, cap;
};

static int eb_queue(struct eb *q)
{
	int rc = q->be->queue(q->dev, q->p, q->calls, (int)(q->queued % 2));
	if (rc == 0)
		q->queued++;
	return rc;
}

/* The oldest batch: when it has finished (@wait: wait for it), record it
 * and, with @requeue, queue the next. Returns 1 when one finished, 0 when
 * none did, or a negative status. */
static int eb_pump(struct eb *q, int wait, int requeue)
{
	double t0, t1;
	int rc;

	if (q->done == q->queued)
		return 0;
	rc = q->be->batch_done(q->dev, (int)(q->done % 2), wait, &t0, &t1);
	if (rc <= 0)
		return rc;
	if (q->nb == q->cap) {
		size_t nc = q->cap ? 2 * q->cap : 64;
		struct eb_batch *nbp = realloc(q->b, nc * sizeof(*nbp));
		if (!nbp)
			return CH_ERR_RUNTIME;
		q->b = nbp;
		q->cap = nc;
	}
	q->b[q->nb].t0 = t0;
	q->b[q->nb].t1 = t1;
	q->b[q->nb].calls = q->calls;
	q->nb++;
	q->done++;
	return requeue ? (eb_queue(q) ? CH_ERR_RUNTIME : 1) : 1;
}

static void sleep_sec(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
	nanosleep(&ts, NULL);
}

/* Poll the counter, keeping the device busy, until it changes from @last.
 * Returns 1 with *@t (middle of the read before and the read that saw the
 * change), *@half (half that interval) and *@e set; 0 when it did not
 * change within CH_RL_ENERGY_EDGE_MAX_SEC or cannot be read; or a negative
 * status of the batches. */
static int eb_edge(struct eb *q, double last, double *t, double *half, double *e)
{
	double ta_prev = ch_now_sec(), t_start = ta_prev, v;
	int rc;

	for (;;) {
		double ta, tb;
		if ((rc = eb_pump(q, 0, 1)) < 0)
			return rc;
		ta = ch_now_sec();
		if (q->be->energy_j(q->dev, &v) != 0)
			return 0;
		tb = ch_now_sec();
		if (v != last) {
			*t = (ta_prev + tb) / 2;
			*half = (tb - ta_prev) / 2;
			*e = v;
			return 1;
		}
		if (tb - t_start > CH_RL_ENERGY_EDGE_MAX_SEC)
			return 0;
		ta_prev = ta;
		sleep_sec(CH_RL_ENERGY_POLL_SEC);
	}
}

int ch_rl_energy_window(const struct ch_backend *be, struct ch_dev *dev, const struct ch_point_spec *p,
			double call_sec, double flops, double min_sec, struct ch_rl_energy *out)
{
	struct eb q = { be, dev, p, 1, 0, 0, NULL, 0, 0 };
	double e, e0 = 0, e1 = 0, t0 = 0, t1 = 0, h0 = 0, h1 = 0, calls = 0, w;
	double bc = call_sec > 0 ? ceil(CH_RL_ENERGY_BATCH_SEC / call_sec) : 1;
	int rc = 0, started = 0, ended = 0;
	size_t i;

	memset(out, 0, sizeof(*out));
	out->energy_j = out->wall_sec = out->avg_power_w = out->gflop_per_j = out->duty = NAN;
	out->thr0 = out->thr1 = -1;
	out->min_sec = min_sec;
	out->call_sec = call_sec;
	ch_nvml_violations_na(&out->v0);
	ch_nvml_violations_na(&out->v1);
	q.calls = bc < 1 ? 1 : bc > 1e6 ? 1000000 : (int)bc;
	out->batch_calls = q.calls;
	/* two batches in flight; the first one finished: the device is warm
	 * and busy with the second, the third queued */
	if ((rc = eb_queue(&q)) != 0 || (rc = eb_queue(&q)) != 0 || (rc = eb_pump(&q, 1, 1)) < 0)
		goto drain;
	rc = 0;
	if (be->telemetry_json)
		out->tel0 = be->telemetry_json(dev);
	if (be->throttled)
		out->thr0 = be->throttled(dev);
	out->have_thr = be->throttle_ns && be->throttle_ns(dev, &out->v0) == 0;
	if (be->energy_j(dev, &e) != 0) {
		snprintf(out->why, sizeof(out->why), "the energy counter cannot be read");
		goto drain;
	}
	/* the window opens at a change of the counter: its value is fresh */
	if ((rc = eb_edge(&q, e, &t0, &h0, &e0)) < 0)
		goto drain;
	if (!(started = rc)) {
		snprintf(out->why, sizeof(out->why), "the energy counter did not change within %.1f s of calls",
			 CH_RL_ENERGY_EDGE_MAX_SEC);
		goto drain;
	}
	rc = 0;
	/* inside: batches back to back, nothing read but the counter */
	e = e0;
	while (ch_now_sec() - t0 < min_sec) {
		double v;
		if ((rc = eb_pump(&q, 1, 1)) < 0)
			goto drain;
		rc = 0;
		if (be->energy_j(dev, &v) == 0 && v != e) {
			out->updates++;
			e = v;
		}
	}
	/* ... and closes at the next change */
	if ((rc = eb_edge(&q, e, &t1, &h1, &e1)) < 0)
		goto drain;
	if (!(ended = rc)) {
		snprintf(out->why, sizeof(out->why), "the energy counter stopped changing after %.3f s", ch_now_sec() - t0);
		goto drain;
	}
	rc = 0;
	out->updates++;
	if (out->have_thr && be->throttle_ns(dev, &out->v1) != 0)
		out->have_thr = 0;
	if (be->throttled)
		out->thr1 = be->throttled(dev);
	if (be->telemetry_json)
		out->tel1 = be->telemetry_json(dev);
drain:
	while (q.done < q.queued) {
		int r2 = eb_pump(&q, 1, 0);
		if (r2 < 0) {
			if (!rc)
				rc = r2;
			break;
		}
	}
	out->batches = (int)q.done;
	if (rc == 0 && started && ended) {
		w = t1 - t0;
		for (i = 0; i < q.nb; i++) {
			double lo = q.b[i].t0 > t0 ? q.b[i].t0 : t0, hi = q.b[i].t1 < t1 ? q.b[i].t1 : t1;
			double len = q.b[i].t1 - q.b[i].t0;
			if (hi > lo && len > 0)
				calls += q.b[i].calls * (hi - lo) / len;
		}
		out->wall_sec = w;
		out->t0 = t0;
		out->t1 = t1;
		out->edge_sec = h0 + h1;
		out->calls = calls;
		out->energy_j = e1 - e0;
		out->duty = w > 0 ? calls * call_sec / w : NAN;
		if (!(out->energy_j > 0)) {
			snprintf(out->why, sizeof(out->why), "the counter did not increase (%.6g J)", out->energy_j);
		} else {
			out->ok = 1;
			out->avg_power_w = out->energy_j / w;
			if (!(out->duty >= CH_RL_ENERGY_MIN_DUTY))
				snprintf(out->withheld, sizeof(out->withheld),
					 "duty cycle %.3f below %.2f: the window's energy includes idle time", out->duty,
					 CH_RL_ENERGY_MIN_DUTY);
			else if (flops > 0)
				out->gflop_per_j = flops * calls / out->energy_j / 1e9;
		}
	}
	free(q.b);
	return rc;
}

/* The warm-up, timed and energy-window calls of a set-up point; returns 0 or
 * the status of the failed call, with *stage naming its stage. A backend
 * that queues calls (GPU) gets its energy window after the timed calls
 * (ch_rl_energy_window()); a synchronous one (CPU) times its window call by
 * call, the timed calls included. */
static int time_point(struct rl_dev *r, struct rl_point *pt, double *samples, int max_samples,
		      double min_time, const char **stage)
{
	const struct ch_rl_opts *o = r->o;
	double kept_sum = 0, e = NAN, sec;
	int rc, i;

	pt->batched = r->be->queue && r->be->batch_done && r->be->energy_j && r->be->energy_j(r->dev, &e) == 0;
	*stage = "warm-up";
	for (i = 0; i < o->warmup; i++)
		if ((rc = r->be->run(r->dev, &pt->p, &sec)) != 0)
			return rc;
	if (!pt->batched) {
		if (r->be->telemetry_json)
			pt->tel0 = r->be->telemetry_json(r->dev);
		if (r->be->throttled)
			pt->thr0 = r->be->throttled(r->dev);
	}
	/* energy over a window of calls long enough for the counter
	 * (ch_energy.h): the timed calls, then more until it is */
	if (!pt->batched && r->be->energy_j && r->be->energy_j(r->dev, &e) == 0) {
		double win = r->be->energy_window_sec > 0 ? r->be->energy_window_sec : ENERGY_WINDOW_SEC;
		pt->have_e = 1;
		ch_energy_window_start(&pt->ew, ch_now_sec(), e, win, ENERGY_MIN_UPDATES, ENERGY_MAX_FACTOR * win);
	}
	*stage = "timed calls";
	while (pt->ns < max_samples) {
		if ((rc = r->be->run(r->dev, &pt->p, &samples[pt->ns])) != 0)
			return rc;
		if (pt->have_e)
			ch_energy_window_add(&pt->ew, 1, ch_now_sec(), r->be->energy_j(r->dev, &e) == 0 ? e : NAN);
		if (pt->ns > 0)
			kept_sum += samples[pt->ns];
		pt->ns++;
		if (pt->ns >= o->iters && kept_sum >= min_time)
			break;
	}
	if (pt->p.k->family == CH_FAM_STREAM && pt->p.k->writes_per_elem > 0 && !strcmp(r->info.stores, "streaming") &&
	    o->iters > 1) {
		/* beside the streaming-store figure, the same calls with plain
		 * (write-allocate) stores: what ordinary code gets */
		double *ps = malloc(sizeof(double) * (size_t)o->iters);
		*stage = "plain-store calls";
		pt->p.plain_stores = 1;
		for (i = 0; ps && i < o->iters; i++)
			if ((rc = r->be->run(r->dev, &pt->p, &ps[i])) != 0) {
				free(ps);
				pt->p.plain_stores = 0;
				return rc;
			}
		pt->p.plain_stores = 0;
		pt->have_plain = ps && ch_stats_compute(ps + 1, (size_t)(o->iters - 1), &pt->plain_st) == 0;
		free(ps);
	}
	*stage = "energy window";
	if (pt->batched) {
		struct ch_stats st;
		double win = r->be->energy_window_sec > 0 ? r->be->energy_window_sec : ENERGY_WINDOW_SEC;
		if (ch_stats_compute(samples + (pt->ns > 1), (size_t)(pt->ns > 1 ? pt->ns - 1 : pt->ns), &st) != 0)
			return CH_ERR_RUNTIME;
		rc = ch_rl_energy_window(r->be, r->dev, &pt->p, st.median, pt->cnt.flops, win, &pt->eb);
		pt->tel0 = pt->eb.tel0;
		pt->tel1 = pt->eb.tel1;
		pt->eb.tel0 = pt->eb.tel1 = NULL;
		pt->thr0 = pt->eb.thr0;
		pt->thr1 = pt->eb.thr1;
		return rc;
	}
	while (pt->have_e && ch_energy_window_more(&pt->ew)) {
		if ((rc = r->be->run(r->dev, &pt->p, &sec)) != 0)
			return rc;
		ch_energy_window_add(&pt->ew, 1, ch_now_sec(), r->be->energy_j(r->dev, &e) == 0 ? e : NAN);
		pt->extra++;
	}
	if (r->be->throttled)
		pt->thr1 = r->be->throttled(r->dev);
	if (r->be->telemetry_json)
		pt->tel1 = r->be->telemetry_json(r->dev);
	return 0;
}

/* Measure kernel @k in @dt into @pt: shape, set-up, calls, check. A point
 * that fails keeps the status and reason in pt->rc and pt->error. */
void measure_point(struct rl_dev *r, const struct ch_kernel *k, enum ch_dtype dt, int fast_accum,
			  struct rl_point *pt)
{
	const struct ch_rl_opts *o = r->o;
	const double min_time = o->common.min_time_sec > 0 ? o->common.min_time_sec : 0;
	const int max_samples = min_time > 0 ? MAX_SAMPLES : o->iters;
	const char *stage = "setup";
	double *samples = NULL;
	int rc;

	memset(pt, 0, sizeof(*pt));
	pt->p.k = k;
	pt->p.dt = dt;
	pt->p.fast_accum = fast_accum;
	pt->thr0 = pt->thr1 = -1;
	pt->t_shape = ch_now_sec();
	rc = point_shape(r, k, dt, &pt->p.shape);
	pt->t_shape = ch_now_sec() - pt->t_shape;
	if (rc == 0)
		rc = ch_kernel_counts(k, dt, &pt->p.shape, &pt->cnt);
	if (rc != 0) {
		pt->rc = rc;
		snprintf(pt->error, sizeof(pt->error), "%s", rc == CH_ERR_RUNTIME && ch_last_error()[0] ?
			 ch_last_error() : "no valid shape for this point (array too small)");
		return;
	}
	pt->shaped = 1;
	samples = malloc(sizeof(double) * (size_t)max_samples);
	if (!samples) {
		rc = CH_ERR_RUNTIME;
		goto fail;
	}
	ch_clear_last_error();
	pt->t_setup = ch_now_sec();
	if ((rc = r->be->setup(r->dev, &pt->p)) != 0)
		goto fail;
	pt->t_setup = ch_now_sec() - pt->t_setup;
	if ((rc = time_point(r, pt, samples, max_samples, min_time, &stage)) != 0)
		goto fail;
	if (corrupt_requested(&pt->p) && r->be->corrupt)
		r->be->corrupt(r->dev, &pt->p);
	stage = "check";
	pt->t_check = ch_now_sec();
	if ((rc = r->be->check(r->dev, &pt->p, &pt->chk)) != 0)
		goto fail;
	pt->t_check = ch_now_sec() - pt->t_check;
	if (r->be->teardown)
		r->be->teardown(r->dev, &pt->p);
	/* statistics over the timed calls after the first */
	ch_stats_compute(samples + 1, (size_t)(pt->ns - 1), &pt->st);
	free(samples);
	return;
fail:
	if (pt->tel0)
		json_decref(pt->tel0);
	if (pt->tel1)
		json_decref(pt->tel1);
	pt->tel0 = pt->tel1 = NULL;
	if (r->be->teardown)
		r->be->teardown(r->dev, &pt->p);
	pt->rc = rc;
	snprintf(pt->error, sizeof(pt->error), "%s failed (%s): %s", stage, ch_status_name(rc),
		 ch_last_error()[0] ? ch_last_error() : "no message");
	free(samples);
}
