/*
 * ch_ar_gmode.c - allreduce_bw with -g N: one process drives N GPUs,
 * one rank each (nccl-tests' single-process mode); the devices, the grouped
 * calls of a phase, its confirmation (see ch_ar_run.h;
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
#include "base/ch_result.h"
#include "base/ch_stats.h"

/* setup_device() in gmode: rank r on device r of this process; two ranks
 * on one GPU (the same PCI bus id) are refused. @dev gets rank 0's device
 * with the smallest free memory of all. */
int gmode_setup_devices(struct ctx *c, struct ch_comm_device *dev)
{
	char why[WHY_LEN] = "", *ids;
	int rc = 0, r, a, b;

	ch_ar_wd_enter(c->w, CH_AR_ACT_LOCAL, "setting up the devices");
	c->gcx = calloc((size_t)c->size, sizeof(*c->gcx));
	c->gdev = calloc((size_t)c->size, sizeof(*c->gdev));
	c->gsend = calloc((size_t)c->size, sizeof(void *));
	c->grecv = calloc((size_t)c->size, sizeof(void *));
	c->gexp = calloc((size_t)c->size, sizeof(void *));
	ids = calloc((size_t)c->size, sizeof(dev->pci_bus_id));
	if (!c->gcx || !c->gdev || !c->gsend || !c->grecv || !c->gexp || !ids) {
		free(ids);
		return CH_ERR_RUNTIME;
	}
	for (r = 0; r < c->size && !rc; r++) {
		rc = c->be->open(r, c->size, &c->gdev[r], &c->gcx[r], why, sizeof(why));
		if (rc)
			ch_error("GPU %d of %d (-g %d): %s", r, c->size, c->size, why);
		else
			memcpy(ids + (size_t)r * sizeof(dev->pci_bus_id), c->gdev[r].pci_bus_id, sizeof(dev->pci_bus_id));
	}
	if (!rc && ch_comm_find_duplicate(ids, sizeof(dev->pci_bus_id), c->size, &a, &b)) {
		ch_error("-g %d: devices %d and %d are the same GPU %s: fewer GPUs than -g asks for", c->size, a, b,
			 ids + (size_t)a * sizeof(dev->pci_bus_id));
		rc = CH_ERR_USAGE;
	}
	free(ids);
	c->cx = c->gcx[0];
	if (!rc) {
		*dev = c->gdev[0];
		for (r = 1; r < c->size; r++)
			if (c->gdev[r].free_bytes < dev->free_bytes)
				dev->free_bytes = c->gdev[r].free_bytes;
	}
	return ch_ar_world_agree(c->w, rc);
}

/* --------------------------------------------- gmode: one process, N GPUs */

/* Position of rank @r in its group @g (ranks ascending). */
static int group_rank(const struct ch_ar_group *g, int r)
{
	int j;
	for (j = 0; j < g->nranks; j++)
		if (g->ranks[j] == r)
			return j;
	return -1;
}

static void run_group_or_abort(struct ctx *c, struct ch_comm **cl, int n, struct ch_comm_run *r)
{
	int rc = c->be->run_group(cl, n, r);
	if (rc == CH_COMM_ERR_TIMEOUT)
		ch_ar_wd_timeout(c->w, r[0].failed_iter);
	if (rc)
		ch_ar_world_abort(c->w, CH_ERR_RUNTIME, "the all-reduce failed (%s backend, %d GPUs of this process)",
				  c->be->name, n);
}

/* One step of a phase in gmode: the ranks taking part, their group, and
 * the communicators, patterns and run parameters of each. */
struct gstep {
	const struct ch_ar_phase *ph;
	int p, a, s;
	int na;                       /* ranks taking part */
	int *rank;                    /* [na] their ranks */
	int *grp;                     /* [na] their group in the phase */
	int *grank;                   /* [na] their place in it */
	struct ch_comm **cl;          /* [na] their communicators */
	struct ch_comm_run *run;      /* [na] */
	struct ch_ar_pattern *pat;    /* [ngroups] */
};

/* The check of one placement for every rank (check_place() for N ranks):
 * new inputs, one grouped call, each rank's wrong elements in wrong[i]. */
static void gmode_check_place(struct ctx *c, struct gstep *st, int place, uint64_t *wrong)
{
	const struct ch_ar_size *sz = &c->plan.sizes[st->s];
	uint64_t seed = ((((uint64_t)st->p * CH_AR_MAX_ALGOS + (uint64_t)st->a) * CH_AR_MAX_SIZES +
			  (uint64_t)st->s) * 2 + (uint64_t)place + 1) * 7919ULL;
	double *cs = xmalloc_or_abort(c, 2 * (size_t)st->na * sizeof(double));
	int i;

	set_where(c, st->p, -1, st->a, st->s, place + 2, sz->bytes, "every group of the phase");
	ch_ar_wd_enter(c->w, CH_AR_ACT_LOCAL, "preparing the check");
	for (i = 0; i < st->na; i++) {
		int r = st->rank[i];
		void *in = place == 0 ? c->gsend[r] : c->grecv[r];
		if (c->be->fill_input(c->gcx[r], in, &st->pat[st->grp[i]], sz->count, st->grank[i], seed) ||
		    (place == 0 && c->be->poison(c->gcx[r], c->grecv[r], (size_t)sz->bytes)) ||
		    c->be->fill_expected(c->gcx[r], c->gexp[r], &st->pat[st->grp[i]], sz->count, seed))
			ch_ar_world_abort(c->w, CH_ERR_RUNTIME, "cannot prepare the check buffers of GPU %d", r);
		st->run[i].warmup = 0;
		st->run[i].iters = 1;
		st->run[i].per_call = 1;
		st->run[i].call_sec = cs + 2 * i;
		st->run[i].iter_sec = cs + 2 * i + 1;
	}
	run_group_or_abort(c, st->cl, st->na, st->run);
	ch_ar_wd_enter(c->w, CH_AR_ACT_LOCAL, "checking the results");
	for (i = 0; i < st->na; i++) {
		int r = st->rank[i];
		if (c->be->count_wrong(c->gcx[r], c->grecv[r], c->gexp[r], sz->count, c->o->dtype, &wrong[i]))
			ch_ar_world_abort(c->w, CH_ERR_RUNTIME, "cannot check the results of GPU %d", r);
	}
	free(cs);
}

/* measure() for every rank of the step at once: the groups of the phase
 * run concurrently, with one iteration count (the smallest any group's
 * first rank would choose; with @calibrate 0 exactly *iters_io, the
 * confirmation's). Fills recs[rank] as measure() does. */
static void gmode_measure(struct ctx *c, struct gstep *st, int place, int *iters_io, struct rec *recs,
			  int calibrate)
{
	const struct ch_ar_size *sz = &c->plan.sizes[st->s];
	const int na = st->na, ng = st->ph->ngroups;
	int i, k, g, iters = *iters_io, calibrated = 0;
	uint64_t *wrong = calloc((size_t)na, sizeof(uint64_t));
	double *call, *iter, *own, *loop;

	if (!wrong)
		ch_ar_world_abort(c->w, CH_ERR_RUNTIME, "out of memory");
	set_where(c, st->p, -1, st->a, st->s, place, sz->bytes, "every group of the phase");
	ch_ar_wd_enter(c->w, CH_AR_ACT_LOCAL, "filling the inputs");
	for (i = 0; i < na; i++) {
		int r = st->rank[i];
		struct ch_comm_run *ru = &st->run[i];
		if (c->be->fill_input(c->gcx[r], place == 0 ? c->gsend[r] : c->grecv[r], &st->pat[st->grp[i]],
				      sz->count, st->grank[i], 0))
			ch_ar_world_abort(c->w, CH_ERR_RUNTIME, "cannot fill the input buffer of GPU %d", r);
		memset(ru, 0, sizeof(*ru));
		ru->send = place == 0 ? c->gsend[r] : NULL;
		ru->recv = c->grecv[r];
		ru->count = sz->count;
		ru->dtype = c->o->dtype;
		ru->op = c->o->op;
		ru->warmup = c->o->warmup;
		ru->timeout_sec = c->o->timeout_sec;
		ru->mark = ch_ar_wd_mark;
		ru->mark_ctx = c->w;
	}
	if (calibrate && place == 0 && (c->o->common.min_time_sec >= 0 || !c->o->iters_given)) {
		/* calibration: timed warm-up calls; each group's first rank
		 * decides, the smallest decision is kept */
		int ncal = c->o->warmup > 0 ? c->o->warmup : 1;
		double *scr = xmalloc_or_abort(c, 2 * (size_t)ncal * (size_t)na * sizeof(double));
		for (i = 0; i < na; i++) {
			st->run[i].warmup = 0;
			st->run[i].iters = ncal;
			st->run[i].per_call = 1;
			st->run[i].call_sec = scr + 2 * (size_t)ncal * i;
			st->run[i].iter_sec = scr + 2 * (size_t)ncal * i + ncal;
		}
		run_group_or_abort(c, st->cl, na, st->run);
		iters = -1;
		for (i = 0; i < na; i++) {
			double med = 0, mad = 0;
			int it;
			if (st->grank[i] != 0)
				continue;
			if (ch_median_mad(st->run[i].iter_sec, (size_t)ncal, &med, &mad) != 0)
				med = 0;
			it = iters_for_period(c, med);
			if (iters < 0 || it < iters)
				iters = it;
		}
		if (iters < 1)
			iters = iters_for_period(c, 0);
		free(scr);
		*iters_io = iters;
		calibrated = 1;
	}
	call = xmalloc_or_abort(c, 2 * (size_t)iters * (size_t)na * sizeof(double));
	iter = call + (size_t)iters * na;
	own = xmalloc_or_abort(c, (size_t)iters * sizeof(double));
	loop = xmalloc_or_abort(c, (size_t)na * sizeof(double));
	/* pass 1, the table's figure: the loop as a whole */
	for (i = 0; i < na; i++) {
		st->run[i].warmup = calibrated ? 0 : c->o->warmup;
		st->run[i].iters = iters;
		st->run[i].per_call = 0;
		st->run[i].progress = ch_ar_wd_progress(c->w);
	}
	run_group_or_abort(c, st->cl, na, st->run);
	for (i = 0; i < na; i++)
		loop[i] = st->run[i].loop_sec / iters;
	/* pass 2: every call timed, on every device */
	for (i = 0; i < na; i++) {
		st->run[i].warmup = 0;
		st->run[i].per_call = 1;
		st->run[i].progress = NULL;
		st->run[i].call_sec = call + (size_t)iters * i;
		st->run[i].iter_sec = iter + (size_t)iters * i;
	}
	run_group_or_abort(c, st->cl, na, st->run);
	if (c->o->check)
		gmode_check_place(c, st, place, wrong);
	/* what MPI adds up in measure(), group by group */
	for (g = 0; g < ng; g++) {
		const struct ch_ar_group *gr = &st->ph->groups[g];
		double *sumi = xmalloc_or_abort(c, 2 * (size_t)iters * sizeof(double)), *minc = sumi + iters;
		double loop_sum = 0;
		uint64_t wsum = 0;
		int root = -1;
		for (k = 0; k < iters; k++) {
			sumi[k] = 0;
			minc[k] = INFINITY;
		}
		for (i = 0; i < na; i++) {
			if (st->grp[i] != g)
				continue;
			if (st->grank[i] == 0)
				root = i;
			for (k = 0; k < iters; k++) {
				sumi[k] += iter[(size_t)iters * i + k];
				if (call[(size_t)iters * i + k] < minc[k])
					minc[k] = call[(size_t)iters * i + k];
			}
			wsum += wrong[i];
			loop_sum += loop[i];
		}
		for (i = 0; i < na; i++) {
			double own_sum = 0, call_sum = 0;
			struct rec *rec = &recs[st->rank[i]];
			if (st->grp[i] != g)
				continue;
			ch_ar_own_times(iter + (size_t)iters * i, call + (size_t)iters * i, minc, iters, own);
			for (k = 0; k < iters; k++) {
				own_sum += own[k];
				call_sum += call[(size_t)iters * i + k];
			}
			rec->own[place] = own_sum / iters;
			rec->call[place] = call_sum / iters;
		}
		if (root >= 0) {
			struct rec *rec = &recs[st->rank[root]];
			group_record(c, rec, place, sumi, iters, gr->nranks, wsum, loop_sum);
		}
		free(sumi);
	}
	free(call);
	free(own);
	free(loop);
	free(wrong);
}

/* measure_step() in gmode: every group of the phase at once, the records
 * made here rather than gathered. @iters: the count to run, or 0: the
 * options decide (kept in c->piters for the confirmation). */
static void gmode_measure_step(struct ctx *c, int p, int a, int s, struct ch_comm **comms, int iters,
			       double *allrec)
{
	const struct ch_ar_phase *ph = &c->plan.phases[p];
	struct rec *recs = (struct rec *)allrec;
	struct gstep st;
	int r, g, n = iters > 0 ? iters : c->o->iters;

	memset(&st, 0, sizeof(st));
	st.ph = ph;
	st.p = p;
	st.a = a;
	st.s = s;
	st.rank = xmalloc_or_abort(c, 3 * (size_t)c->size * sizeof(int));
	st.grp = st.rank + c->size;
	st.grank = st.grp + c->size;
	st.cl = xmalloc_or_abort(c, (size_t)c->size * sizeof(*st.cl));
	st.run = xmalloc_or_abort(c, (size_t)c->size * sizeof(*st.run));
	st.pat = xmalloc_or_abort(c, (size_t)ph->ngroups * sizeof(*st.pat));
	for (g = 0; g < ph->ngroups; g++)
		if (ch_ar_pattern_init(&st.pat[g], c->o->dtype, c->o->op, ph->groups[g].nranks))
			ch_ar_world_abort(c->w, CH_ERR_RUNTIME, "bad pattern parameters");
	for (r = 0; r < c->size; r++) {
		int gi = ch_ar_phase_group_of(ph, r);
		memset(&recs[r], 0, sizeof(recs[r]));
		recs[r].group = gi;
		recs[r].wrong[0] = recs[r].wrong[1] = -1;
		if (gi < 0)
			continue;
		st.rank[st.na] = r;
		st.grp[st.na] = gi;
		st.grank[st.na] = group_rank(&ph->groups[gi], r);
		st.cl[st.na] = comms[r];
		st.na++;
	}
	set_where(c, p, -1, a, s, 0, c->plan.sizes[s].bytes, "every group of the phase");
	if (st.na > 0) {
		gmode_measure(c, &st, 0, &n, recs, iters <= 0);
		gmode_measure(c, &st, 1, &n, recs, iters <= 0);
	}
	for (r = 0; r < c->size; r++)
		recs[r].iters = n;
	if (iters <= 0 && c->piters)
		c->piters[a * c->plan.nsizes + s] = n;
	free(st.rank);
	free(st.cl);
	free(st.run);
	free(st.pat);
}

/* step() in gmode. */
static void gmode_step(struct ctx *c, int p, int a, int s, struct ch_comm **comms, struct sweep *sw,
		       double *allrec, int live)
{
	const struct ch_ar_phase *ph = &c->plan.phases[p];
	int g;

	gmode_measure_step(c, p, a, s, comms, 0, allrec);
	for (g = 0; g < ph->ngroups; g++)
		add_row(c, &sw[g], allrec, g, a, s, &c->plan.sizes[s], live);
	if (checkpoint(c))
		ch_ar_world_abort(c->w, CH_ERR_RUNTIME, "cannot write the result file");
}

/* confirm_phase() in gmode: the same plan and records, the steps measured
 * by this process (@comms: nalgos x c->size, as gmode_run_phases keeps them). */
static void gmode_confirm_phase(struct ctx *c, int p, struct ch_comm **comms, double *allrec)
{
	const struct ch_ar_phase *ph = &c->plan.phases[p];
	int ns = c->plan.nsizes, na = c->o->nalgos, n, k;
	unsigned char *why = calloc((size_t)ph->ngroups * (size_t)na * (size_t)ns * 2, 1);
	int *list = xmalloc_or_abort(c, sizeof(int) * 2 * (size_t)na * (size_t)ns);

	if (!why)
		ch_ar_world_abort(c->w, CH_ERR_RUNTIME, "out of memory");
	n = confirm_plan(c, ph, why, list);
	if (n > 0) {
		out(c, 0, "#\n# Confirmation (%s): %d size%s measured again, the largest size and cells that look like a dip or a gap:\n",
		    ph->ngroups == 1 ? ph->groups[0].name : "this phase's groups", n, n == 1 ? "" : "s");
		for (k = 0; k < n; k++) {
			int a = list[2 * k], s = list[2 * k + 1];
			gmode_measure_step(c, p, a, s, comms + (size_t)a * c->size, c->piters[a * ns + s], allrec);
			confirm_record(c, ph, why, allrec, a, s);
			if (checkpoint(c))
				ch_ar_world_abort(c->w, CH_ERR_RUNTIME, "cannot write the result file");
		}
	} else {
		out(c, 0, "#\n# Confirmation (%s): no size measured; nothing measured again\n",
		    ph->ngroups == 1 ? ph->groups[0].name : "this phase's groups");
	}
	ch_ar_wd_lock(c->w);
	json_object_set_new(json_object_get(c->results, "confirm"), "cells", json_integer(c->confirmed));
	ch_ar_wd_unlock(c->w);
	fflush(stdout);
	free(why);
	free(list);
}

static void gmode_destroy(struct ctx *c, struct ch_comm **comms)
{
	int i;
	for (i = 0; i < CH_AR_MAX_ALGOS * c->size; i++) {
		c->be->comm_destroy(comms[i]);
		comms[i] = NULL;
	}
}

/* run_phases() in gmode: per phase, every group's communicators (one
 * clique per group and algorithm, named algorithms first), then the steps. */
int gmode_run_phases(struct ctx *c)
{
	const int n = c->size;
	double *allrec = xmalloc_or_abort(c, (size_t)n * REC_N * sizeof(double));
	struct ch_comm **comms = calloc((size_t)CH_AR_MAX_ALGOS * n, sizeof(*comms));
	struct ch_comm_ctx **x = calloc((size_t)n, sizeof(*x));
	struct ch_comm **tmp = calloc((size_t)n, sizeof(*tmp));
	int p, a, s, g, j, k, rc = 0, order[CH_AR_MAX_ALGOS];
	char why[WHY_LEN] = "";

	if (!comms || !x || !tmp)
		ch_ar_world_abort(c->w, CH_ERR_RUNTIME, "out of memory");
	creation_order(c, order);
	for (p = 0; p < c->plan.nphases && !rc; p++) {
		const struct ch_ar_phase *ph = &c->plan.phases[p];
		int live = ph->ngroups == 1;
		struct sweep *sw;

		set_where(c, p, -1, -1, -1, -1, 0, "every group of the phase");
		ch_ar_wd_enter(c->w, CH_AR_ACT_LOCAL, "creating the communicators");
		/* every communicator of the phase before any collective runs */
		for (k = 0; k < c->o->nalgos && !rc; k++) {
			a = order[k];
			for (g = 0; g < ph->ngroups && !rc; g++) {
				const struct ch_ar_group *gr = &ph->groups[g];
				for (j = 0; j < gr->nranks; j++)
					x[j] = c->gcx[gr->ranks[j]];
				rc = c->be->comm_create_group(x, gr->nranks, c->o->algos[a], tmp, why, sizeof(why));
				for (j = 0; !rc && j < gr->nranks; j++)
					comms[(size_t)a * n + gr->ranks[j]] = tmp[j];
			}
		}
		ch_ar_wd_enter(c->w, CH_AR_ACT_IDLE, "agreeing");
		if (rc) {
			ch_error("%s", why);
			gmode_destroy(c, comms);
			break;
		}
		sw = xmalloc_or_abort(c, (size_t)ph->ngroups * sizeof(*sw));
		if (c->o->confirm) {
			size_t ncell = (size_t)ph->ngroups * (size_t)c->o->nalgos * (size_t)c->plan.nsizes, i;
			c->piters = xmalloc_or_abort(c, (size_t)c->o->nalgos * (size_t)c->plan.nsizes * sizeof(int));
			c->pfig = xmalloc_or_abort(c, ncell * 4 * sizeof(double));
			c->prow = calloc(ncell ? ncell : 1, sizeof(json_t *));
			if (!c->prow)
				ch_ar_world_abort(c->w, CH_ERR_RUNTIME, "out of memory");
			for (i = 0; i < ncell * 4; i++)
				c->pfig[i] = NAN;
		}
		for (a = 0; a < c->o->nalgos; a++) {
			for (g = 0; g < ph->ngroups; g++)
				begin_sweep(c, &sw[g], &ph->groups[g], a, live);
			for (s = 0; s < c->plan.nsizes; s++)
				gmode_step(c, p, a, s, comms + (size_t)a * n, sw, allrec, live);
			for (g = 0; g < ph->ngroups; g++)
				end_sweep(c, &sw[g], a, live);
		}
		free(sw);
		if (c->o->confirm)
			gmode_confirm_phase(c, p, comms, allrec);
		free(c->piters);
		free(c->pfig);
		free(c->prow);
		c->piters = NULL;
		c->pfig = NULL;
		c->prow = NULL;
		ch_ar_wd_enter(c->w, CH_AR_ACT_LOCAL, "releasing the communicators");
		gmode_destroy(c, comms);
		ch_ar_wd_enter(c->w, CH_AR_ACT_IDLE, "between phases");
	}
	free(comms);
	free(x);
	free(tmp);
	free(allrec);
	return rc ? finish(c, rc, "%s", why) : 0;
}
