/*
 * ch_ar_measure.c - allreduce_bw's measurement of one step: the
 * iterations for the period, the timed and checked calls of each placement,
 * the records gathered to rank 0 (see ch_ar_run.h;
 * the sweep's files: ch_ar_run_int.h).
 */
#include <mpi.h>

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/allreduce/ch_ar_analysis.h"
#include "comm/ch_ar_pattern.h"
#include "bench/allreduce/ch_ar_plan.h"
#include "bench/allreduce/ch_ar_run_int.h"
#include "bench/allreduce/ch_ar_table.h"
#include "comm/ch_comm.h"
#include "base/ch_common.h"
#include "bench/common/ch_opts.h"
#include "base/ch_stats.h"

/* ------------------------------------------------------------ measurement */

static long delay_for(struct ctx *c, uint64_t bytes)
{
	if (c->o->delay_rank == c->rank && bytes >= c->o->delay_min_bytes)
		return c->o->delay_us;
	return 0;
}

void set_where(struct ctx *c, int phase, int group, int algo, int s, int place,
		      uint64_t bytes, const char *gname)
{
	struct ch_ar_where wh = { phase, group, algo, s, place, bytes, gname,
				  algo >= 0 ? c->labels[algo] : "-" };
	ch_ar_wd_where(c->w, &wh);
}

static void run_or_abort(struct ctx *c, struct ch_comm *bc, struct ch_comm_run *r)
{
	int rc = c->be->run(bc, r);
	if (rc == CH_COMM_ERR_TIMEOUT)
		ch_ar_wd_timeout(c->w, r->failed_iter);
	if (rc)
		ch_ar_world_abort(c->w, CH_ERR_RUNTIME, "the all-reduce failed (%s backend)", c->be->name);
}

/* The iteration count for a per-iteration period of @med seconds (<= 0:
 * unknown): with --min-time, enough to add up to it; by default up to
 * CH_AR_DEFAULT_ITERS within CH_AR_DEFAULT_BUDGET_SEC, at least
 * CH_AR_ADAPTIVE_MIN_ITERS. */
int iters_for_period(struct ctx *c, double med)
{
	double min_time = c->o->common.min_time_sec;
	int it;

	if (min_time >= 0) {
		/* --min-time: enough calls to add up to SEC */
		it = c->o->iters_given ? c->o->iters : CH_AR_ADAPTIVE_MIN_ITERS;
		if (med > 0) {
			double want = ceil(min_time / med);
			if (want > it)
				it = want > CH_AR_ADAPTIVE_MAX_ITERS ? CH_AR_ADAPTIVE_MAX_ITERS : (int)want;
		}
	} else {
		/* default: up to 20, within the time budget, at least 5 */
		it = CH_AR_DEFAULT_ITERS;
		if (med > 0) {
			double fit = floor(CH_AR_DEFAULT_BUDGET_SEC / med);
			if (fit < it)
				it = fit < CH_AR_ADAPTIVE_MIN_ITERS ? CH_AR_ADAPTIVE_MIN_ITERS : (int)fit;
		}
	}
	return it;
}

/* Decide the iteration count when it is not fixed by -n: the group's first
 * rank times @ncal calls (they also serve as the warm-up), decides, and
 * broadcasts, so every rank of the group runs the same count. */
static int decide_iters(struct ctx *c, struct ch_comm *bc, MPI_Comm gc, int grank,
			const struct ch_comm_run *base, double *scratch, int ncal)
{
	struct ch_comm_run r = *base;
	double med = 0, mad = 0;
	int it;

	r.warmup = 0;
	r.iters = ncal;
	r.per_call = 1;
	r.call_sec = scratch;
	r.iter_sec = scratch + ncal;
	run_or_abort(c, bc, &r);
	if (grank != 0 || ch_median_mad(r.iter_sec, (size_t)ncal, &med, &mad) != 0)
		med = 0;
	it = iters_for_period(c, med);
	ch_ar_wd_enter(c->w, CH_AR_ACT_MPI, "agreeing on the iteration count");
	if (MPI_Bcast(&it, 1, MPI_INT, 0, gc) != MPI_SUCCESS)
		ch_ar_world_abort(c->w, CH_ERR_RUNTIME, "MPI_Bcast of the iteration count failed");
	return it;
}

/* The check of one placement: new inputs, one call, the wrong elements of
 * this rank's result in *wrong. @r is the timed run's parameters. */
static void check_place(struct ctx *c, const struct at *at, int place, const struct ch_comm_run *r,
			void *in, uint64_t *wrong)
{
	struct ch_comm_run chk = *r;
	double cs[2];
	/* new values for every check, so stale data from earlier calls fails;
	 * derived from the step, so every rank of the group agrees (ranks
	 * that sat a phase out ran fewer checks) */
	uint64_t seed = ((((uint64_t)at->phase * CH_AR_MAX_ALGOS + (uint64_t)at->algo) * CH_AR_MAX_SIZES +
			  (uint64_t)at->size) * 2 + (uint64_t)place + 1) * 7919ULL;
	size_t count = at->sz->count;

	set_where(c, at->phase, at->group, at->algo, at->size, place + 2, at->sz->bytes, at->gname);
	ch_ar_wd_enter(c->w, CH_AR_ACT_LOCAL, "preparing the check");
	if (c->be->fill_input(c->cx, in, at->pat, count, at->grank, seed) ||
	    (place == 0 && c->be->poison(c->cx, c->recvbuf, (size_t)at->sz->bytes)) ||
	    c->be->fill_expected(c->cx, c->expbuf, at->pat, count, seed))
		ch_ar_world_abort(c->w, CH_ERR_RUNTIME, "cannot prepare the check buffers");
	chk.warmup = 0;
	chk.iters = 1;
	chk.call_sec = cs;
	chk.iter_sec = cs + 1;
	run_or_abort(c, at->bc, &chk);
	ch_ar_wd_enter(c->w, CH_AR_ACT_LOCAL, "checking the results");
	if (c->be->count_wrong(c->cx, c->recvbuf, c->expbuf, count, c->o->dtype, wrong))
		ch_ar_world_abort(c->w, CH_ERR_RUNTIME, "cannot check the results");
}

/* The group's figures of one placement into @rec (on the rank that keeps
 * them): @sumi, the per-iteration times summed over the @n ranks, becomes
 * their mean (in place) and its statistics; @wsum the wrong elements summed
 * over the group; @loop_sum the ranks' loop times summed. */
void group_record(struct ctx *c, struct rec *rec, int place, double *sumi, int iters, int n,
			 uint64_t wsum, double loop_sum)
{
	struct ch_stats st;
	int k;

	for (k = 0; k < iters; k++)
		sumi[k] /= n;
	if (ch_stats_compute(sumi, (size_t)iters, &st))
		ch_ar_world_abort(c->w, CH_ERR_RUNTIME, "out of memory");
	rec->stats[place][0] = (double)st.n;
	rec->stats[place][1] = st.min;
	rec->stats[place][2] = st.median;
	rec->stats[place][3] = st.mean;
	rec->stats[place][4] = st.p95;
	rec->stats[place][5] = st.max;
	rec->stats[place][6] = st.cv;
	rec->wrong[place] = c->o->check ? (double)wsum : -1.0;
	rec->loop[place] = loop_sum / n;
}

/* One placement (0 out-of-place, 1 in-place) of one size on this rank's
 * group: timed loop, check, timing exchange; fills this rank's record.
 * @calibrate: 0 runs exactly *iters_io iterations (the confirmation: the
 * count of the first measurement), else the options decide. */
static void measure(struct ctx *c, const struct at *at, int place, int *iters_io, struct rec *rec,
		    int calibrate)
{
	size_t count = at->sz->count;
	uint64_t bytes = at->sz->bytes, wrong = 0, wsum = 0;
	void *in = place == 0 ? c->sendbuf : c->recvbuf;
	MPI_Comm gc = at->gc;
	int gsize = at->gsize, grank = at->grank;
	struct ch_comm *bc = at->bc;
	struct ch_comm_run r;
	double *call, *iter, *minc, *sumi, *own, own_sum = 0, call_sum = 0, loop = 0, loop_sum = 0;
	int k, iters = *iters_io, calibrated = 0;

	set_where(c, at->phase, at->group, at->algo, at->size, place, bytes, at->gname);
	ch_ar_wd_enter(c->w, CH_AR_ACT_LOCAL, "filling the inputs");
	if (c->be->fill_input(c->cx, in, at->pat, count, grank, 0))
		ch_ar_world_abort(c->w, CH_ERR_RUNTIME, "cannot fill the input buffer");
	memset(&r, 0, sizeof(r));
	r.send = place == 0 ? c->sendbuf : NULL;
	r.recv = c->recvbuf;
	r.count = count;
	r.dtype = c->o->dtype;
	r.op = c->o->op;
	r.warmup = c->o->warmup;
	r.delay_us = delay_for(c, bytes);
	r.timeout_sec = c->o->timeout_sec;
	r.mark = ch_ar_wd_mark;
	r.mark_ctx = c->w;
	if (calibrate && place == 0 && (c->o->common.min_time_sec >= 0 || !c->o->iters_given)) {
		int ncal = c->o->warmup > 0 ? c->o->warmup : 1;
		double *scratch = xmalloc_or_abort(c, 2 * (size_t)ncal * sizeof(double));
		iters = *iters_io = decide_iters(c, bc, gc, grank, &r, scratch, ncal);
		free(scratch);
		calibrated = 1;
	}
	call = xmalloc_or_abort(c, 5 * (size_t)iters * sizeof(double));
	iter = call + iters;
	minc = iter + iters;
	sumi = minc + iters;
	own = sumi + iters;
	r.warmup = calibrated ? 0 : c->o->warmup;
	r.iters = iters;
	/* pass 1, the table's figure: the loop as a whole (nothing per call
	 * but a store of the iteration number for the watchdog) */
	r.per_call = 0;
	r.progress = ch_ar_wd_progress(c->w);
	run_or_abort(c, bc, &r);
	loop = r.loop_sec / iters;
	/* pass 2, per-rank and per-iteration figures: every call timed */
	r.warmup = 0;
	r.per_call = 1;
	r.call_sec = call;
	r.iter_sec = iter;
	run_or_abort(c, bc, &r);
	if (c->o->check)
		check_place(c, at, place, &r, in, &wrong);
	ch_ar_wd_enter(c->w, CH_AR_ACT_MPI, "exchanging the timings");
	mpi_or_abort(c, MPI_Allreduce(iter, sumi, iters, MPI_DOUBLE, MPI_SUM, gc), "MPI_Allreduce of the periods");
	mpi_or_abort(c, MPI_Allreduce(call, minc, iters, MPI_DOUBLE, MPI_MIN, gc), "MPI_Allreduce of the call times");
	mpi_or_abort(c, MPI_Reduce(&wrong, &wsum, 1, MPI_UINT64_T, MPI_SUM, 0, gc), "MPI_Reduce of #wrong");
	mpi_or_abort(c, MPI_Reduce(&loop, &loop_sum, 1, MPI_DOUBLE, MPI_SUM, 0, gc), "MPI_Reduce of the loop times");
	ch_ar_own_times(iter, call, minc, iters, own);
	for (k = 0; k < iters; k++) {
		own_sum += own[k];
		call_sum += call[k];
	}
	rec->own[place] = own_sum / iters;
	rec->call[place] = call_sum / iters;
	if (grank == 0) {
		group_record(c, rec, place, sumi, iters, gsize, wsum, loop_sum);
	}
	free(call);
}

/* ------------------------------------------------------------------ sweep */

/* Every rank: one size of one algorithm, both placements, on this rank's
 * group (none when @gi < 0), then the records gathered to world rank 0.
 * @iters: the iteration count to run, or 0: the options decide (and the
 * count run is kept in c->piters for the confirmation). */
void measure_step(struct ctx *c, int p, int gi, MPI_Comm gc, struct ch_comm *bc, int a, int s,
			 int iters, double *allrec)
{
	const struct ch_ar_phase *ph = &c->plan.phases[p];
	const char *gname = gi >= 0 ? ph->groups[gi].name : "-";
	struct rec rec;

	memset(&rec, 0, sizeof(rec));
	rec.group = gi;
	rec.wrong[0] = rec.wrong[1] = -1;
	set_where(c, p, gi, a, s, 0, c->plan.sizes[s].bytes, gname);
	if (ch_ar_world_barrier(c->w))
		ch_ar_world_abort(c->w, CH_ERR_RUNTIME, "the step barrier failed");
	if (gi >= 0) {
		struct ch_ar_pattern pat;
		struct at at = { p, gi, a, s, gname, &c->plan.sizes[s], gc, 0, 0, bc, &pat };
		int n = iters > 0 ? iters : c->o->iters;
		MPI_Comm_size(gc, &at.gsize);
		MPI_Comm_rank(gc, &at.grank);
		if (ch_ar_pattern_init(&pat, c->o->dtype, c->o->op, at.gsize))
			ch_ar_world_abort(c->w, CH_ERR_RUNTIME, "bad pattern parameters");
		measure(c, &at, 0, &n, &rec, iters <= 0);
		measure(c, &at, 1, &n, &rec, iters <= 0);
		rec.iters = n;
		if (iters <= 0 && c->piters)
			c->piters[a * c->plan.nsizes + s] = n;
	}
	if (ch_ar_world_gather(c->w, (const double *)&rec, REC_N, allrec))
		ch_ar_world_abort(c->w, CH_ERR_RUNTIME, "gathering the records failed");
}

void step(struct ctx *c, int p, int gi, MPI_Comm gc, struct ch_comm *bc, int a, int s,
		 struct sweep *sw, double *allrec, int live)
{
	const struct ch_ar_phase *ph = &c->plan.phases[p];
	int g;

	measure_step(c, p, gi, gc, bc, a, s, 0, allrec);
	if (c->rank != 0)
		return;
	for (g = 0; g < ph->ngroups; g++)
		add_row(c, &sw[g], allrec, g, a, s, &c->plan.sizes[s], live);
	if (checkpoint(c))
		ch_ar_world_abort(c->w, CH_ERR_RUNTIME, "cannot write the result file");
}
