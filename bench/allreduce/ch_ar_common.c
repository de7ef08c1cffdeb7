/*
 * ch_ar_common.c - what every file of allreduce_bw's sweep uses: a
 * rank's layout, the control communicator, rank 0's printing, the result
 * file finished and checkpointed, the order communicators are created in,
 * allocation and MPI errors that abort the world (see ch_ar_run.h;
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
#include "bench/allreduce/ch_ar_plan.h"
#include "bench/allreduce/ch_ar_run_int.h"
#include "comm/ch_comm.h"
#include "base/ch_common.h"
#include "bench/common/ch_opts.h"
#include "base/ch_result.h"
#include "base/ch_stats.h"

/* ---------------------------------------------------------------- helpers */

/* Rank @r's layout: the world's, or in gmode this process's with the
 * device index as its local rank. */
const struct ch_world_rank *rank_info(struct ctx *c, int r)
{
	const struct ch_world_rank *p;
	if (!c->gmode)
		return ch_ar_world_info(c->w, r);
	p = ch_ar_world_info(c->w, 0);
	c->ginfo = *p;
	c->ginfo.local_rank = r;
	c->ginfo.local_size = c->size;
	c->ginfo.host_node = 0;
	return &c->ginfo;
}

MPI_Comm ctrl_comm(struct ctx *c)
{
	return MPI_Comm_f2c(ch_ar_world_ctrl(c->w));
}

void out(struct ctx *c, int always, const char *fmt, ...)
{
	va_list ap;
	if (c->rank != 0 || (c->quiet && !always))
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
}

int finish(struct ctx *c, int status, const char *fmt, ...)
{
	char reason[1024];
	va_list ap;

	if (c->rank == 0 && c->res) {
		if (fmt) {
			va_start(ap, fmt);
			vsnprintf(reason, sizeof(reason), fmt, ap);
			va_end(ap);
		}
		ch_ar_wd_lock(c->w);
		ch_result_finish(c->res, status, fmt ? "%s" : NULL, reason);
		ch_ar_wd_unlock(c->w);
	}
	fflush(stdout);
	return status;
}

int checkpoint(struct ctx *c)
{
	int rc = 0;
	if (c->rank == 0 && c->res) {
		ch_ar_wd_lock(c->w);
		rc = ch_result_checkpoint(c->res);
		ch_ar_wd_unlock(c->w);
	}
	return rc;
}

void *xmalloc_or_abort(struct ctx *c, size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		ch_ar_world_abort(c->w, CH_ERR_RUNTIME, "out of memory (%zu bytes)", n);
	return p;
}

/* @p with room for @n + 1 elements of @es bytes: doubled (from @first) when
 * @n reached *@cap. */
void *grow_or_abort(struct ctx *c, void *p, int n, int *cap, int first, size_t es)
{
	if (n == *cap) {
		int nc = *cap ? 2 * *cap : first;
		void *np = realloc(p, (size_t)nc * es);
		if (!np)
			ch_ar_world_abort(c->w, CH_ERR_RUNTIME, "out of memory");
		p = np;
		*cap = nc;
	}
	return p;
}

void mpi_or_abort(struct ctx *c, int rc, const char *what)
{
	if (rc != MPI_SUCCESS)
		ch_ar_world_abort(c->w, CH_ERR_RUNTIME, "%s failed", what);
}

/* The order communicators are created in: the algorithms the backend
 * selects with a setting (NCCL_ALGO) first, those that run without one
 * ("default") last, so that the backend changes its environment only as
 * comm/nccl/ch_comm_nccl.c needs (a variable is added only while no
 * communicator exists). @order gets the indices into c->o->algos. */
void creation_order(const struct ctx *c, int *order)
{
	int a, k = 0, pass;
	for (pass = 0; pass < 2; pass++)
		for (a = 0; a < c->o->nalgos; a++) {
			const struct ch_comm_algo *al = ch_comm_algo_find(c->be, c->o->algos[a]);
			int has_setting = al && al->setting;
			if (has_setting == (pass == 0))
				order[k++] = a;
		}
}
