/*
 * ch_ar_confirm.c - allreduce_bw's confirmation (--confirm 1): the cells
 * of a phase that dip, and each sweep's largest size, measured again, and
 * what the second measurement said (see ch_ar_run.h;
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
#include "base/ch_stats.h"

/* ------------------------------------------------------------ confirmation */

/* Why a cell is measured again, as the result file and the output say it:
 * "dip", "gap" or "largest" (the largest size, measured again always). */
static const char *why_name(unsigned why)
{
	return why & CH_AR_CONFIRM_WHY_DIP ? "dip" : why & CH_AR_CONFIRM_WHY_GAP ? "gap" : "largest";
}

/* Rank 0: the "confirm" object of one placement (as the cell's own keys). */
static json_t *confirm_json(const struct rec *root, int place, double factor, const struct ch_ar_size *sz,
			    unsigned why)
{
	double algbw = ch_comm_algbw_gbps(sz->bytes, root->loop[place]);
	json_t *o = json_pack("{s:s, s:f, s:o, s:f, s:f, s:o}", "why", why_name(why),
			      "loop_time_us", root->loop[place] * 1e6, "time_us", stats_json_us(root->stats[place]),
			      "algbw_gbps", algbw, "busbw_gbps", algbw * factor,
			      "wrong", root->wrong[place] < 0 ? json_null() : json_integer((json_int_t)root->wrong[place]));
	if (o && (why & CH_AR_CONFIRM_WHY_DIP) && (why & CH_AR_CONFIRM_WHY_GAP))
		json_object_set_new(o, "also_gap", json_true());
	return o;
}

/* Rank 0: which (algorithm, size) steps of the phase to measure again (the
 * cells that look like a dip or a gap, and each sweep's largest size):
 * @why gets each cell's reason, @list the (a, s) pairs; returns their count. */
int confirm_plan(struct ctx *c, const struct ch_ar_phase *ph, unsigned char *why, int *list)
{
	int ns = c->plan.nsizes, g, a, s, n = 0;

	for (g = 0; g < ph->ngroups; g++)
		for (a = 0; a < c->o->nalgos; a++) {
			ch_ar_confirm_cells(c->pfig + cell_index(c, g, a, 0) * 4, ns, ph->groups[g].nranks,
					    why + cell_index(c, g, a, 0) * 2);
			ch_ar_confirm_largest(c->pfig + cell_index(c, g, a, 0) * 4, ns, why + cell_index(c, g, a, 0) * 2);
		}
	for (a = 0; a < c->o->nalgos; a++)
		for (s = 0; s < ns; s++)
			for (g = 0; g < ph->ngroups; g++)
				if (why[cell_index(c, g, a, s) * 2] || why[cell_index(c, g, a, s) * 2 + 1]) {
					list[2 * n] = a;
					list[2 * n + 1] = s;
					n++;
					break;
				}
	return n;
}

/* Rank 0: the second measurement of step (@a, @s) into the flagged cells. */
void confirm_record(struct ctx *c, const struct ch_ar_phase *ph, const unsigned char *why,
			   const double *allrec, int a, int s)
{
	const struct ch_ar_size *sz = &c->plan.sizes[s];
	int g, p;

	for (g = 0; g < ph->ngroups; g++) {
		const struct ch_ar_group *gr = &ph->groups[g];
		const struct rec *root = (const struct rec *)(allrec + (size_t)gr->ranks[0] * REC_N);
		double factor = ch_comm_busbw_factor(gr->nranks);
		size_t ci = cell_index(c, g, a, s);
		for (p = 0; p < 2; p++) {
			unsigned w = why[ci * 2 + p];
			json_t *cell, *cj;
			if (!w)
				continue;
			cj = confirm_json(root, p, factor, sz, w);
			ch_ar_wd_lock(c->w);
			cell = json_object_get(c->prow[ci], p ? "in_place" : "out_of_place");
			if (json_is_object(cell) && cj)
				json_object_set_new(cell, "confirm", cj);
			else
				json_decref(cj);
			ch_ar_wd_unlock(c->w);
			if (root->wrong[p] > 0)
				c->wrong_total += (uint64_t)root->wrong[p];
			c->confirmed++;
			out(c, 0, "#   %s %s %12llu B %-12s %-7s busbw %9.4g GB/s, again %9.4g GB/s; time %10.1f us, again %10.1f us%s\n",
			    gr->name, c->labels[a], (unsigned long long)sz->bytes, p ? "in-place" : "out-of-place",
			    why_name(w), c->pfig[ci * 4 + p * 2] * factor,
			    ch_comm_algbw_gbps(sz->bytes, root->loop[p]) * factor,
			    c->pfig[ci * 4 + p * 2] > 0 ? (double)sz->bytes / c->pfig[ci * 4 + p * 2] / 1e3 : NAN,
			    root->loop[p] * 1e6, root->wrong[p] > 0 ? "  WRONG RESULTS" : "");
		}
	}
}

/* Every rank: at the end of a phase, the cells that look like a dip or a
 * gap (ch_ar_confirm_cells()) and each sweep's largest size
 * (ch_ar_confirm_largest()) measured again, with the first measurement's
 * iteration count; rank 0 decides and broadcasts the steps, every group
 * measures each listed step (as in the sweep, the groups of the phase run
 * at once), and the flagged cells get the second measurement. */
void confirm_phase(struct ctx *c, int p, int gi, MPI_Comm gc, struct ch_comm **comms, double *allrec)
{
	const struct ch_ar_phase *ph = &c->plan.phases[p];
	int ns = c->plan.nsizes, na = c->o->nalgos, n = 0, k;
	unsigned char *why = NULL;
	int *list = NULL;

	if (c->rank == 0) {
		why = calloc((size_t)ph->ngroups * (size_t)na * (size_t)ns * 2, 1);
		list = xmalloc_or_abort(c, sizeof(int) * 2 * (size_t)na * (size_t)ns);
		if (!why)
			ch_ar_world_abort(c->w, CH_ERR_RUNTIME, "out of memory");
		n = confirm_plan(c, ph, why, list);
	}
	set_where(c, p, gi, -1, -1, -1, 0, gi >= 0 ? ph->groups[gi].name : "-");
	ch_ar_wd_enter(c->w, CH_AR_ACT_MPI, "agreeing on the cells to measure again");
	mpi_or_abort(c, MPI_Bcast(&n, 1, MPI_INT, 0, ctrl_comm(c)), "MPI_Bcast of the confirmation plan");
	if (n > 0) {
		if (c->rank != 0)
			list = xmalloc_or_abort(c, sizeof(int) * 2 * (size_t)n);
		mpi_or_abort(c, MPI_Bcast(list, 2 * n, MPI_INT, 0, ctrl_comm(c)), "MPI_Bcast of the confirmation plan");
		out(c, 0, "#\n# Confirmation (%s): %d size%s measured again, the largest size and cells that look like a dip or a gap:\n",
		    ph->ngroups == 1 ? ph->groups[0].name : "this phase's groups", n, n == 1 ? "" : "s");
		for (k = 0; k < n; k++) {
			int a = list[2 * k], s = list[2 * k + 1];
			measure_step(c, p, gi, gc, gi >= 0 ? comms[a] : NULL, a, s,
				     gi >= 0 ? c->piters[a * ns + s] : 1, allrec);
			if (c->rank != 0)
				continue;
			confirm_record(c, ph, why, allrec, a, s);
			if (checkpoint(c))
				ch_ar_world_abort(c->w, CH_ERR_RUNTIME, "cannot write the result file");
		}
	} else {
		out(c, 0, "#\n# Confirmation (%s): no size measured; nothing measured again\n",
		    ph->ngroups == 1 ? ph->groups[0].name : "this phase's groups");
	}
	if (c->rank == 0) {
		ch_ar_wd_lock(c->w);
		json_object_set_new(json_object_get(c->results, "confirm"), "cells", json_integer(c->confirmed));
		ch_ar_wd_unlock(c->w);
		fflush(stdout);
	}
	free(why);
	free(list);
}
