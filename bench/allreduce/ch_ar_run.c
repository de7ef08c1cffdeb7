/*
 * ch_ar_run.c - allreduce_bw's sweep (see ch_ar_run.h and
 * docs/allreduce_bw.md). World rank 0 prints and writes the result file;
 * every rank measures. MPI is used directly for the control exchanges
 * (communicator splits, timing reductions), the collectives being measured
 * go through the backend table.
 *
 * With -g N (and the nccl backend without a launcher) one process drives N
 * GPUs, one rank each ("gmode", nccl-tests' single-process mode): the ranks
 * are the process's devices, every group's communicators come from the
 * backend's comm_create_group(), the calls of every group of a phase are
 * issued together by run_group(), and what MPI exchanges between ranks
 * (timings, #wrong, the records) is added up here; the tables, rows,
 * analyses and result file are the same code and the same schema.
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
#include "bench/allreduce/ch_ar_run.h"
#include "bench/allreduce/ch_ar_table.h"
#include "comm/ch_comm.h"
#include "base/ch_common.h"
#include "bench/common/ch_opts.h"
#include "base/ch_result.h"
#include "base/ch_stats.h"

#define WHY_LEN 512

/* What each rank sends world rank 0 after a step (all doubles). Stats are
 * {n, min, median, mean, p95, max, cv} of the per-iteration period averaged
 * over the group's ranks (pass 2, every call timed), seconds; they, loop[]
 * and wrong[] are valid in the record of the group's first rank only. */
struct rec {
	double group;          /* group index in the phase, -1: sat this phase out */
	double iters;
	double stats[2][7];    /* [0] out-of-place, [1] in-place */
	double wrong[2];       /* wrong elements summed over the group, -1: not checked */
	double own[2];         /* this rank's mean own time (ch_ar_analysis.h), seconds */
	double call[2];        /* this rank's mean time inside the call, seconds */
	double loop[2];        /* the timed loop's time / iterations averaged over
				* the group's ranks (pass 1: the table's time), seconds */
};
#define REC_N ((int)(sizeof(struct rec) / sizeof(double)))

/* Where a step runs: the plan's phase, this rank's group in it (its
 * communicator and backend communicator), the algorithm and the size. */
struct at {
	int phase, group, algo, size; /* indices into the plan, c->o->algos, the plan's sizes */
	const char *gname;            /* the group's name, "-" when sitting out */
	const struct ch_ar_size *sz;  /* the plan's {count, bytes} of this size */
	MPI_Comm gc;                  /* the group's MPI communicator */
	int gsize, grank;
	struct ch_comm *bc;           /* the backend's communicator for the algorithm */
	const struct ch_ar_pattern *pat;
};

/* Rank 0: one row of a sweep's table, derived from the gathered records. */
struct row {
	const struct rec *root;       /* the record of the group's first rank */
	struct ch_ar_cell cell[2];    /* out-of-place, in-place */
	double factor;                /* busbw factor 2(n-1)/n */
	double *own_us;               /* per-rank own time, microseconds (malloc'd) */
	double spread, excess;        /* rank spread and slowest excess, percent */
	int slow;                     /* index in the group of the slowest rank */
	const char *eff;              /* the algorithm run instead, or NULL */
};

/* Per-rank device, gathered to rank 0 for the rank table. */
struct rank_dev {
	int gpu_index;
	char pci_bus_id[20];
	char name[128];
};

/* Rank 0: one (group, algorithm) table of the current phase. */
struct sweep {
	const struct ch_ar_group *g;
	json_t *obj, *rows;    /* borrowed from the result document */
	char *text, *ranktext;
	size_t textlen, ranklen;
	FILE *buf, *rankbuf;   /* table rows and per-rank lines, when buffered */
	double busbw_sum;
	long busbw_n, oob;
	double large_busbw;
	uint64_t large_bytes;
	char eff[256];         /* sizes run by another algorithm (algo_effective) */
};

struct ctx {
	struct ch_ar_world *w;
	const struct ch_ar_opts *o;
	const struct ch_comm_backend *be;
	struct ch_comm_ctx *cx;        /* be's state for this rank (open()) */
	struct ch_result *res;
	json_t *results, *sweeps;
	int rank, size, quiet;
	int *node_of, nnodes;
	char (*node_names)[64];
	struct ch_ar_plan plan;
	uint64_t reduced;              /* maxBytes after the memory cap, 0: not reduced */
	void *sendbuf, *recvbuf, *expbuf;
	const char *labels[CH_AR_MAX_ALGOS];
	struct ch_ar_rank_row *rows; /* ranks borrowed from the plan, own_us owned */
	int nrows, caprows;
	struct ch_ar_group_bw *gbw;
	int ngbw, capgbw;
	uint64_t wrong_total;
	int fail_busbw;
	char fail_reason[512];
	/* gmode (-g N): this one process drives c->size GPUs, one rank each */
	int gmode;
	int nproc;                     /* processes of the MPI world */
	struct ch_comm_ctx **gcx;      /* each rank's device state (gcx[0] is cx) */
	struct ch_comm_device *gdev;   /* each rank's device */
	void **gsend, **grecv, **gexp; /* each rank's buffers */
	struct ch_world_rank ginfo;    /* scratch of rank_info() */
	int backend_choice;            /* enum ch_ar_backend_choice: --backend, nccl for auto with -g N */
	const struct ch_comm_backend *forced; /* ch_ar_run_backend(): this backend, whatever --backend says */
	/* the current phase, for the confirmation (--confirm 1) */
	int *piters;                   /* every rank: its group's iterations per (algo, size) */
	double *pfig;                  /* rank 0: algbw per (group, algo, size), 4 each (ch_ar_confirm_cells()) */
	json_t **prow;                 /* rank 0: the row object per (group, algo, size), borrowed */
	int confirmed;                 /* rank 0: cells measured again, whole run */
};

/* ---------------------------------------------------------------- helpers */

/* Rank @r's layout: the world's, or in gmode this process's with the
 * device index as its local rank. */
static const struct ch_world_rank *rank_info(struct ctx *c, int r)
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

static MPI_Comm ctrl_comm(struct ctx *c)
{
	return MPI_Comm_f2c(ch_ar_world_ctrl(c->w));
}

/* Rank 0 prints (stdout), unless quiet or @always is 0 and quiet. */
static void out(struct ctx *c, int always, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void out(struct ctx *c, int always, const char *fmt, ...)
{
	va_list ap;
	if (c->rank != 0 || (c->quiet && !always))
		return;
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
}

/* Rank 0: finish the result file; every rank: return @status. */
static int finish(struct ctx *c, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int finish(struct ctx *c, int status, const char *fmt, ...)
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

/* Agree on @rc; when it failed, rank 0 prints the first failing rank's @why
 * (and how many failed) into @first (may be NULL). Returns the agreed rc. */
static int agree_why(struct ctx *c, int rc, const char *why, char *first, size_t n)
{
	char *all = NULL, mine[WHY_LEN];
	int agreed = ch_ar_world_agree(c->w, rc), i, nfail = 0, who = -1;
	int *codes = NULL;

	if (agreed == 0)
		return 0;
	snprintf(mine, sizeof(mine), "%s", rc ? why : "");
	if (c->rank == 0) {
		all = calloc((size_t)c->nproc, WHY_LEN);
		codes = calloc((size_t)c->nproc, sizeof(int));
	}
	MPI_Gather(mine, WHY_LEN, MPI_CHAR, all, WHY_LEN, MPI_CHAR, 0, ctrl_comm(c));
	MPI_Gather(&rc, 1, MPI_INT, codes, 1, MPI_INT, 0, ctrl_comm(c));
	if (c->rank == 0 && all && codes) {
		for (i = 0; i < c->nproc; i++)
			if (codes[i]) {
				if (who < 0)
					who = i;
				nfail++;
			}
		if (who >= 0 && first) {
			if (c->nproc == 1)
				snprintf(first, n, "%s", all + (size_t)who * WHY_LEN);
			else if (nfail == 1)
				snprintf(first, n, "rank %d: %s", who, all + (size_t)who * WHY_LEN);
			else
				snprintf(first, n, "rank %d: %s (and %d more ranks)", who,
					 all + (size_t)who * WHY_LEN, nfail - 1);
		}
	}
	free(all);
	free(codes);
	return agreed;
}

/* "0-3", "0,2,4-5" */
static void format_ranks(const int *r, int n, char *buf, size_t len)
{
	int i = 0;
	buf[0] = '\0';
	while (i < n) {
		int j = i;
		size_t l = strlen(buf);
		while (j + 1 < n && r[j + 1] == r[j] + 1)
			j++;
		if (j > i)
			snprintf(buf + l, len - l, "%s%d-%d", l ? "," : "", r[i], r[j]);
		else
			snprintf(buf + l, len - l, "%s%d", l ? "," : "", r[i]);
		i = j + 1;
	}
}

static json_t *stats_json_us(const double *st)
{
	return json_pack("{s:I, s:f, s:f, s:f, s:f, s:f, s:f}", "n", (json_int_t)st[0],
			 "min", st[1] * 1e6, "median", st[2] * 1e6, "mean", st[3] * 1e6,
			 "p95", st[4] * 1e6, "max", st[5] * 1e6, "cv", st[6]);
}

static int checkpoint(struct ctx *c)
{
	int rc = 0;
	if (c->rank == 0 && c->res) {
		ch_ar_wd_lock(c->w);
		rc = ch_result_checkpoint(c->res);
		ch_ar_wd_unlock(c->w);
	}
	return rc;
}

/* ------------------------------------------------------- backend and setup */

static int choose_backend(struct ctx *c, char *reason, size_t n)
{
	const struct ch_comm_backend *mpi = ch_comm_find("mpi");
	const struct ch_comm_backend *nccl = ch_comm_find("nccl");
	char why[WHY_LEN] = "";
	int rc;

	if (c->forced) {
		c->be = c->forced;
		rc = c->be->probe(why, sizeof(why));
		return agree_why(c, rc, why, reason, n) ? CH_ERR_UNAVAILABLE : 0;
	}
	if (c->backend_choice == CH_AR_BACKEND_MPI) {
		c->be = mpi;
	} else if (c->backend_choice == CH_AR_BACKEND_NCCL) {
		if (!nccl) {
			snprintf(reason, n, "the nccl backend is not built into this binary (rebuild with WITH_NCCL=yes where CUDA and NCCL are installed)");
			return CH_ERR_UNAVAILABLE;
		}
		rc = nccl->probe(why, sizeof(why));
		rc = agree_why(c, rc, why, reason, n);
		if (rc)
			return CH_ERR_UNAVAILABLE;
		c->be = nccl;
	} else {
		/* auto: nccl when every rank has a GPU, else mpi; all ranks agree */
		rc = nccl ? nccl->probe(why, sizeof(why)) : CH_ERR_UNAVAILABLE;
		c->be = ch_ar_world_agree(c->w, rc) == 0 ? nccl : mpi;
	}
	rc = c->be->probe(why, sizeof(why));
	return agree_why(c, rc, why, reason, n) ? CH_ERR_UNAVAILABLE : 0;
}

/* setup_device() in gmode: rank r on device r of this process; two ranks
 * on one GPU (the same PCI bus id) are refused. @dev gets rank 0's device
 * with the smallest free memory of all. */
static int gmode_setup_devices(struct ctx *c, struct ch_comm_device *dev)
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

static int setup_device(struct ctx *c, struct ch_comm_device *dev)
{
	const struct ch_world_rank *me = ch_ar_world_info(c->w, c->rank);
	MPI_Comm local = MPI_Comm_f2c(ch_ar_world_local(c->w));
	char why[WHY_LEN] = "", *ids;
	int rc, a, b;

	if (c->gmode)
		return gmode_setup_devices(c, dev);
	ch_ar_wd_enter(c->w, CH_AR_ACT_LOCAL, "setting up the device");
	rc = c->be->open(me->local_rank, me->local_size, dev, &c->cx, why, sizeof(why));
	if (rc) {
		/* every failing rank says why: a wrong GPU mask is a per-rank matter */
		ch_error("rank %d (host '%s', local rank %d): %s", c->rank, me->host, me->local_rank, why);
		memset(dev->pci_bus_id, 0, sizeof(dev->pci_bus_id));
	}
	/* two local ranks on one GPU: more local ranks than GPUs */
	ids = calloc((size_t)me->local_size, sizeof(dev->pci_bus_id));
	if (!ids)
		return ch_ar_world_agree(c->w, CH_ERR_RUNTIME);
	MPI_Allgather(dev->pci_bus_id, (int)sizeof(dev->pci_bus_id), MPI_CHAR, ids,
		      (int)sizeof(dev->pci_bus_id), MPI_CHAR, local);
	if (!rc && ch_comm_find_duplicate(ids, sizeof(dev->pci_bus_id), me->local_size, &a, &b)) {
		const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
		ch_error("rank %d (host '%s', local rank %d): more local ranks (%d) than GPUs: local ranks %d and %d both got GPU %s (CUDA_VISIBLE_DEVICES=%s%s%s); launch at most one rank per GPU, or give each rank its own GPU",
			 c->rank, me->host, me->local_rank, me->local_size, a, b,
			 ids + (size_t)a * sizeof(dev->pci_bus_id), cvd ? "'" : "", cvd ? cvd : "unset",
			 cvd ? "'" : "");
		rc = CH_ERR_USAGE;
	}
	free(ids);
	return ch_ar_world_agree(c->w, rc);
}

/* The nccl-tests preamble and our rank table; the "ranks" section. */
static void rank_table(struct ctx *c, const struct ch_comm_device *dev)
{
	struct rank_dev mine, *all = NULL;
	json_t *layout;
	int r;

	memset(&mine, 0, sizeof(mine));
	mine.gpu_index = dev->gpu_index;
	snprintf(mine.pci_bus_id, sizeof(mine.pci_bus_id), "%s", dev->pci_bus_id);
	snprintf(mine.name, sizeof(mine.name), "%s", dev->name);
	if (c->rank == 0)
		all = calloc((size_t)c->size, sizeof(*all));
	if (c->gmode) {
		for (r = 0; all && r < c->size; r++) {
			all[r].gpu_index = c->gdev[r].gpu_index;
			snprintf(all[r].pci_bus_id, sizeof(all[r].pci_bus_id), "%s", c->gdev[r].pci_bus_id);
			snprintf(all[r].name, sizeof(all[r].name), "%s", c->gdev[r].name);
		}
	} else {
		MPI_Gather(&mine, (int)sizeof(mine), MPI_BYTE, all, (int)sizeof(mine), MPI_BYTE, 0, ctrl_comm(c));
	}
	if (c->rank != 0 || !all) {
		free(all);
		return;
	}
	out(c, 0, "#\n# Using devices\n");
	for (r = 0; r < c->size; r++) {
		const struct ch_world_rank *ri = rank_info(c, r);
		char bus[16];
		/* nccl-tests prints the bus id as [domain:bus:device] */
		snprintf(bus, sizeof(bus), "%.12s", all[r].gpu_index >= 0 ? all[r].pci_bus_id : "host");
		out(c, 0, "#  Rank %2d Group  0 Pid %6ld on %10s device %2d [%s] %s\n", r, ri->pid,
		    ri->host, all[r].gpu_index, bus, all[r].name);
	}
	out(c, 0, "#\n# Rank table (node: %s)\n", c->o->node_size ? "--node-size" : "ranks sharing memory");
	out(c, 0, "#  %5s  %-16s  %8s  %5s  %5s  %3s  %-12s  %s\n", "rank", "host", "pid", "local", "node",
	    "gpu", "pci_bus_id", "name");
	layout = json_array();
	for (r = 0; r < c->size; r++) {
		const struct ch_world_rank *ri = rank_info(c, r);
		char gpu[16];
		snprintf(gpu, sizeof(gpu), "%d", all[r].gpu_index);
		out(c, 0, "#  %5d  %-16s  %8ld  %5d  %5d  %3s  %-12s  %s\n", r, ri->host, ri->pid,
		    ri->local_rank, c->node_of[r], all[r].gpu_index >= 0 ? gpu : "-",
		    all[r].pci_bus_id[0] ? all[r].pci_bus_id : "-", all[r].name);
		json_array_append_new(layout, json_pack("{s:i, s:s, s:I, s:i, s:i, s:s, s:o, s:o, s:s}",
			"rank", r, "host", ri->host, "pid", (json_int_t)ri->pid, "local_rank", ri->local_rank,
			"node", c->node_of[r], "node_name", c->node_names[c->node_of[r]],
			"gpu_index", all[r].gpu_index >= 0 ? json_integer(all[r].gpu_index) : json_null(),
			"pci_bus_id", all[r].pci_bus_id[0] ? json_string(all[r].pci_bus_id) : json_null(),
			"gpu_name", all[r].name));
	}
	ch_result_set(c->res, "ranks", json_pack("{s:i, s:i, s:o, s:o, s:i}", "world_size", c->size,
		"nodes", c->nnodes, "node_size", c->o->node_size ? json_integer(c->o->node_size) : json_null(),
		"layout", layout, "gpus_per_process", c->gmode ? c->size : 1));
	free(all);
}

/* Nodes: --node-size K consecutive ranks, else the shared-memory split. */
static int map_nodes(struct ctx *c)
{
	int r;

	c->node_of = malloc((size_t)c->size * sizeof(int));
	c->node_names = calloc((size_t)c->size, sizeof(*c->node_names));
	if (!c->node_of || !c->node_names)
		return CH_ERR_RUNTIME;
	c->nnodes = 0;
	for (r = 0; r < c->size; r++) {
		const struct ch_world_rank *ri = rank_info(c, r);
		c->node_of[r] = c->o->node_size ? r / c->o->node_size : ri->host_node;
		if (c->node_of[r] + 1 > c->nnodes)
			c->nnodes = c->node_of[r] + 1;
	}
	for (r = c->size - 1; r >= 0; r--) {
		/* a real node is named after its host; --node-size nodes "nodeK" */
		if (c->o->node_size)
			snprintf(c->node_names[c->node_of[r]], sizeof(c->node_names[0]), "node%d", c->node_of[r]);
		else
			snprintf(c->node_names[c->node_of[r]], sizeof(c->node_names[0]), "%.*s",
				 (int)sizeof(c->node_names[0]) - 1, rank_info(c, r)->host);
	}
	return 0;
}

/* Largest message the memory allows: nccl-tests keeps 1 GiB back and needs
 * send, receive and (with the check) expected buffers. */
static uint64_t usable_max_bytes(struct ctx *c, uint64_t free_bytes)
{
	uint64_t reserve = 1ULL << 30, all_free = free_bytes;
	int nbuf = c->o->check ? 3 : 2;

	MPI_Allreduce(&free_bytes, &all_free, 1, MPI_UINT64_T, MPI_MIN, ctrl_comm(c));
	if (c->be->memory && !strcmp(c->be->memory, "host memory") && reserve > all_free / 4)
		reserve = all_free / 4; /* small hosts: keep a quarter back */
	reserve += c->be->comm_reserve_bytes * (uint64_t)c->o->nalgos;
	if (all_free <= reserve)
		return 0;
	return (all_free - reserve) / (uint64_t)nbuf;
}

/* ------------------------------------------------------------ measurement */

static long delay_for(struct ctx *c, uint64_t bytes)
{
	if (c->o->delay_rank == c->rank && bytes >= c->o->delay_min_bytes)
		return c->o->delay_us;
	return 0;
}

static void set_where(struct ctx *c, int phase, int group, int algo, int s, int place,
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
static int iters_for_period(struct ctx *c, double med)
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

static void *xmalloc_or_abort(struct ctx *c, size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		ch_ar_world_abort(c->w, CH_ERR_RUNTIME, "out of memory (%zu bytes)", n);
	return p;
}

/* @p with room for @n + 1 elements of @es bytes: doubled (from @first) when
 * @n reached *@cap. */
static void *grow_or_abort(struct ctx *c, void *p, int n, int *cap, int first, size_t es)
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

static void mpi_or_abort(struct ctx *c, int rc, const char *what)
{
	if (rc != MPI_SUCCESS)
		ch_ar_world_abort(c->w, CH_ERR_RUNTIME, "%s failed", what);
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
static void group_record(struct ctx *c, struct rec *rec, int place, double *sumi, int iters, int n,
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

/* ------------------------------------------------------------- rank 0 side */

static json_t *int_array(const int *v, int n)
{
	json_t *a = json_array();
	int i;
	for (i = 0; i < n; i++)
		json_array_append_new(a, json_integer(v[i]));
	return a;
}

static void begin_sweep(struct ctx *c, struct sweep *sw, const struct ch_ar_group *g, int a, int live)
{
	char ranks[256], nodes[256] = "";
	json_t *jn = json_array();
	FILE *f;
	int i;

	memset(sw, 0, sizeof(*sw));
	sw->g = g;
	for (i = 0; i < g->nnodes; i++) {
		json_array_append_new(jn, json_string(c->node_names[g->nodes[i]]));
		snprintf(nodes + strlen(nodes), sizeof(nodes) - strlen(nodes), "%s%s", i ? "," : "",
			 c->node_names[g->nodes[i]]);
	}
	sw->rows = json_array();
	sw->obj = json_pack("{s:s, s:s, s:o, s:o, s:i, s:s, s:s, s:s, s:O, s:f, s:f, s:i}",
			    "group_kind", ch_ar_kind_names[g->kind], "group_name", g->name,
			    "ranks", int_array(g->ranks, g->nranks), "nodes", jn, "nranks", g->nranks,
			    "algo", c->labels[a], "algo_requested", c->o->algos[a],
			    "algo_detail", ch_comm_algo_detail(c->be, c->o->algos[a]), "rows", sw->rows,
			    "avg_busbw_gbps", 0.0, "large_msg_busbw_gbps", 0.0, "oob_count", 0);
	json_decref(sw->rows); /* the sweep object holds it; sw->rows stays borrowed */
	ch_ar_wd_lock(c->w);
	json_array_append_new(c->sweeps, sw->obj);
	ch_ar_wd_unlock(c->w);
	sw->rankbuf = open_memstream(&sw->ranktext, &sw->ranklen);
	if (!live)
		sw->buf = open_memstream(&sw->text, &sw->textlen);
	f = live ? stdout : sw->buf;
	format_ranks(g->ranks, g->nranks, ranks, sizeof(ranks));
	if (f) {
		fprintf(f, "#\n# Group %s (%s: %d rank%s %s on %s), algorithm %s: %s\n#\n", g->name,
			ch_ar_kind_names[g->kind], g->nranks, g->nranks == 1 ? "" : "s", ranks, nodes,
			c->labels[a], ch_comm_algo_detail(c->be, c->o->algos[a]));
		ch_ar_table_header(f);
		fflush(f);
	}
}

/* The row of group @sw->g at one size: cells and per-rank spread from the
 * gathered records (@allrec: REC_N doubles per world rank). */
static void row_compute(struct ctx *c, const struct sweep *sw, const double *allrec, int a,
			const struct ch_ar_size *sz, struct row *rw)
{
	const struct ch_ar_group *g = sw->g;
	int i, p;

	memset(rw, 0, sizeof(*rw));
	rw->root = (const struct rec *)(allrec + (size_t)g->ranks[0] * REC_N);
	rw->factor = ch_comm_busbw_factor(g->nranks);
	rw->own_us = xmalloc_or_abort(c, (size_t)g->nranks * sizeof(double));
	rw->eff = ch_comm_algo_effective(c->be, c->o->algos[a], sz->count, g->nranks);
	for (p = 0; p < 2; p++) {
		double mean = rw->root->loop[p];
		rw->cell[p].time_us = mean * 1e6;
		rw->cell[p].algbw_gbps = ch_comm_algbw_gbps(sz->bytes, mean);
		rw->cell[p].busbw_gbps = rw->cell[p].algbw_gbps * rw->factor; /* 2(n-1)/n: nccl-tests doc/PERFORMANCE.md */
		rw->cell[p].wrong = rw->root->wrong[p] < 0 ? -1 : (long long)rw->root->wrong[p];
	}
	for (i = 0; i < g->nranks; i++) {
		const struct rec *rr = (const struct rec *)(allrec + (size_t)g->ranks[i] * REC_N);
		rw->own_us[i] = (rr->own[0] + rr->own[1]) / 2 * 1e6;
	}
	ch_ar_rank_spread(rw->own_us, g->nranks, &rw->slow, &rw->spread, &rw->excess);
}

/* The row into the result document (the sweep's headline figures updated). */
static void row_json(struct ctx *c, struct sweep *sw, const struct row *rw, const double *allrec,
		     const struct ch_ar_size *sz)
{
	const struct ch_ar_group *g = sw->g;
	json_t *row, *pr = json_array(), *pc = json_array(), *place[2];
	int i, p;

	for (p = 0; p < 2; p++)
		place[p] = json_pack("{s:f, s:o, s:f, s:f, s:o}", "loop_time_us", rw->root->loop[p] * 1e6,
				     "time_us", stats_json_us(rw->root->stats[p]),
				     "algbw_gbps", rw->cell[p].algbw_gbps, "busbw_gbps", rw->cell[p].busbw_gbps,
				     "wrong", rw->cell[p].wrong < 0 ? json_null() : json_integer(rw->cell[p].wrong));
	for (i = 0; i < g->nranks; i++) {
		const struct rec *rr = (const struct rec *)(allrec + (size_t)g->ranks[i] * REC_N);
		json_array_append_new(pr, json_real(rw->own_us[i]));
		json_array_append_new(pc, json_real((rr->call[0] + rr->call[1]) / 2 * 1e6));
	}
	row = json_pack("{s:I, s:I, s:s, s:s, s:i, s:i, s:f, s:o, s:o, s:o, s:o, s:i, s:f, s:f}",
			"bytes", (json_int_t)sz->bytes, "count", (json_int_t)sz->count,
			"dtype", ch_dtype_comm_name(c->o->dtype), "redop", ch_comm_redop_names[c->o->op], "root", -1,
			"iterations", (int)rw->root->iters, "busbw_factor", rw->factor,
			"out_of_place", place[0], "in_place", place[1],
			"per_rank_mean_us", pr, "per_rank_call_mean_us", pc,
			"slowest_rank", g->ranks[rw->slow], "rank_spread_pct", rw->spread,
			"slowest_excess_pct", rw->excess);
	if (rw->eff)
		json_object_set_new(row, "algo_effective", json_string(rw->eff));
	ch_ar_wd_lock(c->w);
	json_array_append_new(sw->rows, row);
	json_object_set_new(sw->obj, "avg_busbw_gbps", json_real(sw->busbw_sum / (double)sw->busbw_n));
	json_object_set_new(sw->obj, "large_msg_busbw_gbps", json_real(sw->large_busbw));
	json_object_set_new(sw->obj, "oob_count", json_integer(sw->oob));
	ch_ar_wd_unlock(c->w);
}

/* The row into the table (live or buffered) and the per-rank lines. */
static void row_table(struct ctx *c, struct sweep *sw, const struct row *rw, const struct ch_ar_size *sz,
		      int live)
{
	const struct ch_ar_group *g = sw->g;

	ch_ar_table_row(live ? stdout : sw->buf, sz->bytes, sz->count, ch_dtype_comm_name(c->o->dtype),
			ch_comm_redop_names[c->o->op], -1, &rw->cell[0], &rw->cell[1]);
	if (live)
		fflush(stdout);
	if (g->nranks >= 2 && sw->rankbuf)
		fprintf(sw->rankbuf, "# %12llu  %12d  %+16.1f%%  %19.1f%%\n", (unsigned long long)sz->bytes,
			g->ranks[rw->slow], rw->excess, rw->spread);
	if (rw->eff && strlen(sw->eff) < sizeof(sw->eff) - 24)
		snprintf(sw->eff + strlen(sw->eff), sizeof(sw->eff) - strlen(sw->eff), "%s%llu",
			 sw->eff[0] ? ", " : "", (unsigned long long)sz->bytes);
}

/* The row's figures into the sweep's and the run's totals; the per-rank
 * times kept for the straggler analysis (c->rows takes rw->own_us). */
static void row_account(struct ctx *c, struct sweep *sw, struct row *rw, const struct ch_ar_size *sz)
{
	int p;

	for (p = 0; p < 2; p++) {
		sw->busbw_sum += rw->cell[p].busbw_gbps;
		sw->busbw_n++;
		if (rw->cell[p].wrong > 0) {
			sw->oob++;
			c->wrong_total += (uint64_t)rw->cell[p].wrong;
		}
	}
	sw->large_busbw = rw->cell[0].busbw_gbps;
	sw->large_bytes = sz->bytes;
}

static void keep_rank_row(struct ctx *c, const struct ch_ar_group *g, struct row *rw)
{
	if (g->nranks < 2) {
		free(rw->own_us);
		rw->own_us = NULL;
		return;
	}
	c->rows = grow_or_abort(c, c->rows, c->nrows, &c->caprows, 64, sizeof(*c->rows));
	c->rows[c->nrows].nranks = g->nranks;
	c->rows[c->nrows].ranks = g->ranks;
	c->rows[c->nrows].own_us = rw->own_us;
	c->nrows++;
	rw->own_us = NULL;
}

/* Index of (group @g, algorithm @a, size @s) in the phase's pfig / prow. */
static size_t cell_index(const struct ctx *c, int g, int a, int s)
{
	return ((size_t)g * (size_t)c->o->nalgos + (size_t)a) * (size_t)c->plan.nsizes + (size_t)s;
}

/* The row's algbw figures for the confirmation: loop time and median period */
static void row_figures(const struct row *rw, const struct ch_ar_size *sz, double *fig)
{
	int p;
	for (p = 0; p < 2; p++) {
		double med = rw->root->stats[p][2];
		fig[p * 2] = rw->cell[p].algbw_gbps;
		fig[p * 2 + 1] = med > 0 ? ch_comm_algbw_gbps(sz->bytes, med) : NAN;
	}
}

/* One size of a sweep: measure's records -> a row -> JSON and table; its
 * figures and row object kept for the confirmation (@g, @s: indices). */
static void add_row(struct ctx *c, struct sweep *sw, const double *allrec, int g, int a, int s,
		    const struct ch_ar_size *sz, int live)
{
	struct row rw;

	row_compute(c, sw, allrec, a, sz, &rw);
	row_account(c, sw, &rw, sz);
	row_json(c, sw, &rw, allrec, sz);
	row_table(c, sw, &rw, sz, live);
	if (c->pfig) {
		row_figures(&rw, sz, c->pfig + cell_index(c, g, a, s) * 4);
		c->prow[cell_index(c, g, a, s)] = json_array_get(sw->rows, json_array_size(sw->rows) - 1);
	}
	keep_rank_row(c, sw->g, &rw);
}

static void end_sweep(struct ctx *c, struct sweep *sw, int a, int live)
{
	const struct ch_ar_group *g = sw->g;
	const char *eff_algo = ch_comm_algo_effective(c->be, c->o->algos[a], 0, 2);

	if (!live && sw->buf) {
		fclose(sw->buf);
		sw->buf = NULL;
		if (sw->text)
			fwrite(sw->text, 1, sw->textlen, stdout);
	}
	ch_ar_table_footer(stdout, sw->oob, sw->busbw_n ? sw->busbw_sum / (double)sw->busbw_n : 0.0);
	if (sw->rankbuf) {
		fclose(sw->rankbuf);
		sw->rankbuf = NULL;
		if (!c->quiet && g->nranks >= 2 && sw->ranklen) {
			printf("# Per-rank time: mean over out-of-place and in-place iterations of each rank's own\n"
			       "# time (the iteration period minus its wait for later ranks); per size, the\n"
			       "# slowest rank, its excess over the median of the others, and max-min over median:\n");
			printf("# %12s  %12s  %17s  %20s\n", "size (B)", "slowest rank", "excess", "spread across ranks");
			fwrite(sw->ranktext, 1, sw->ranklen, stdout);
		}
	}
	if (sw->eff[0] && !c->quiet)
		printf("# note: %s ran %s at %s bytes (Open MPI's ring does so when count < ranks)\n",
		       c->labels[a], eff_algo ? eff_algo : "another algorithm", sw->eff);
	fflush(stdout);
	free(sw->text);
	free(sw->ranktext);
	sw->text = sw->ranktext = NULL;
	/* headline of node and pair groups, for the group analysis */
	if (g->kind == CH_AR_KIND_NODE || g->kind == CH_AR_KIND_PAIR) {
		c->gbw = grow_or_abort(c, c->gbw, c->ngbw, &c->capgbw, 32, sizeof(*c->gbw));
		c->gbw[c->ngbw].kind = g->kind;
		c->gbw[c->ngbw].name = g->name;
		c->gbw[c->ngbw].algo = c->labels[a];
		c->gbw[c->ngbw].busbw_gbps = sw->large_busbw;
		c->gbw[c->ngbw].nnodes = g->nnodes;
		c->gbw[c->ngbw].nodes = g->nodes;
		c->ngbw++;
	}
	/* --min-busbw: world groups (or every group when the world is not measured) */
	if (c->o->min_busbw_gbps >= 0 && (g->kind == CH_AR_KIND_WORLD || !(c->o->groups & CH_AR_GROUPS_WORLD))) {
		int bad = sw->large_busbw < c->o->min_busbw_gbps;
		printf("# --min-busbw %g GB/s: %s, group %s: out-of-place busbw %.4g GB/s at %llu bytes %s\n",
		       c->o->min_busbw_gbps, c->labels[a], g->name, sw->large_busbw,
		       (unsigned long long)sw->large_bytes, bad ? "FAILED" : "OK");
		if (bad && !c->fail_busbw) {
			c->fail_busbw = 1;
			snprintf(c->fail_reason, sizeof(c->fail_reason),
				 "busbw %.4g GB/s (%s, group %s, %llu bytes) is below --min-busbw %g",
				 sw->large_busbw, c->labels[a], g->name, (unsigned long long)sw->large_bytes,
				 c->o->min_busbw_gbps);
		}
	}
	fflush(stdout);
}

/* ------------------------------------------------------------------ sweep */

/* Every rank: one size of one algorithm, both placements, on this rank's
 * group (none when @gi < 0), then the records gathered to world rank 0.
 * @iters: the iteration count to run, or 0: the options decide (and the
 * count run is kept in c->piters for the confirmation). */
static void measure_step(struct ctx *c, int p, int gi, MPI_Comm gc, struct ch_comm *bc, int a, int s,
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

static void step(struct ctx *c, int p, int gi, MPI_Comm gc, struct ch_comm *bc, int a, int s,
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

/* The order communicators are created in: the algorithms the backend
 * selects with a setting (NCCL_ALGO) first, those that run without one
 * ("default") last, so that the backend changes its environment only as
 * comm/nccl/ch_comm_nccl.c needs (a variable is added only while no
 * communicator exists). @order gets the indices into c->o->algos. */
static void creation_order(const struct ctx *c, int *order)
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

static int gmode_run_phases(struct ctx *c);
/* ------------------------------------------------------------ confirmation */

/* Rank 0: the "confirm" object of one placement (as the cell's own keys). */
static json_t *confirm_json(const struct rec *root, int place, double factor, const struct ch_ar_size *sz,
			    unsigned why)
{
	double algbw = ch_comm_algbw_gbps(sz->bytes, root->loop[place]);
	json_t *o = json_pack("{s:s, s:f, s:o, s:f, s:f, s:o}", "why", why & CH_AR_CONFIRM_WHY_DIP ? "dip" : "gap",
			      "loop_time_us", root->loop[place] * 1e6, "time_us", stats_json_us(root->stats[place]),
			      "algbw_gbps", algbw, "busbw_gbps", algbw * factor,
			      "wrong", root->wrong[place] < 0 ? json_null() : json_integer((json_int_t)root->wrong[place]));
	if (o && (why & CH_AR_CONFIRM_WHY_DIP) && (why & CH_AR_CONFIRM_WHY_GAP))
		json_object_set_new(o, "also_gap", json_true());
	return o;
}

/* Rank 0: which (algorithm, size) steps of the phase to measure again:
 * @why gets each cell's reason, @list the (a, s) pairs; returns their count. */
static int confirm_plan(struct ctx *c, const struct ch_ar_phase *ph, unsigned char *why, int *list)
{
	int ns = c->plan.nsizes, g, a, s, n = 0;

	for (g = 0; g < ph->ngroups; g++)
		for (a = 0; a < c->o->nalgos; a++)
			ch_ar_confirm_cells(c->pfig + cell_index(c, g, a, 0) * 4, ns, why + cell_index(c, g, a, 0) * 2);
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
static void confirm_record(struct ctx *c, const struct ch_ar_phase *ph, const unsigned char *why,
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
			out(c, 0, "#   %s %s %12llu B %-12s %-4s busbw %9.4g GB/s, again %9.4g GB/s; time %10.1f us, again %10.1f us%s\n",
			    gr->name, c->labels[a], (unsigned long long)sz->bytes, p ? "in-place" : "out-of-place",
			    w & CH_AR_CONFIRM_WHY_DIP ? "dip" : "gap", c->pfig[ci * 4 + p * 2] * factor,
			    ch_comm_algbw_gbps(sz->bytes, root->loop[p]) * factor,
			    c->pfig[ci * 4 + p * 2] > 0 ? (double)sz->bytes / c->pfig[ci * 4 + p * 2] / 1e3 : NAN,
			    root->loop[p] * 1e6, root->wrong[p] > 0 ? "  WRONG RESULTS" : "");
		}
	}
}

/* Every rank: at the end of a phase, the cells that look like a dip or a
 * gap measured again (ch_ar_confirm_cells()), with the first measurement's
 * iteration count; rank 0 decides and broadcasts the steps, every group
 * measures each listed step (as in the sweep, the groups of the phase run
 * at once), and the flagged cells get the second measurement. */
static void confirm_phase(struct ctx *c, int p, int gi, MPI_Comm gc, struct ch_comm **comms, double *allrec)
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
		out(c, 0, "#\n# Confirmation (%s): %d size%s measured again, cells that look like a dip or a gap:\n",
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
		out(c, 0, "#\n# Confirmation (%s): no cell looks like a dip or a gap; nothing measured again\n",
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

static int run_phases(struct ctx *c)
{
	double *allrec = NULL;
	int p, a, s, g, rc, k, order[CH_AR_MAX_ALGOS];
	char why[WHY_LEN], reason[1024];

	if (c->gmode)
		return gmode_run_phases(c);
	creation_order(c, order);
	if (c->rank == 0)
		allrec = xmalloc_or_abort(c, (size_t)c->size * REC_N * sizeof(double));
	for (p = 0; p < c->plan.nphases; p++) {
		const struct ch_ar_phase *ph = &c->plan.phases[p];
		struct ch_comm *comms[CH_AR_MAX_ALGOS] = { NULL };
		struct sweep *sw = NULL;
		MPI_Comm gc = MPI_COMM_NULL;
		int gi = ch_ar_phase_group_of(ph, c->rank), live = ph->ngroups == 1;

		set_where(c, p, gi, -1, -1, -1, 0, gi >= 0 ? ph->groups[gi].name : "-");
		ch_ar_wd_enter(c->w, CH_AR_ACT_MPI, "creating the group communicators");
		mpi_or_abort(c, MPI_Comm_split(ctrl_comm(c), gi >= 0 ? gi : MPI_UNDEFINED, c->rank, &gc),
			     "MPI_Comm_split");
		rc = 0;
		why[0] = '\0';
		/* every communicator of the phase before any collective runs */
		for (k = 0; k < c->o->nalgos && gi >= 0 && !rc; k++) {
			a = order[k];
			set_where(c, p, gi, a, -1, -1, 0, ph->groups[gi].name);
			rc = c->be->comm_create(c->cx, (int)MPI_Comm_c2f(gc), c->o->algos[a], &comms[a], why, sizeof(why));
		}
		ch_ar_wd_enter(c->w, CH_AR_ACT_IDLE, "agreeing");
		reason[0] = '\0';
		rc = agree_why(c, rc, why, reason, sizeof(reason));
		if (rc) {
			if (c->rank == 0)
				ch_error("%s", reason);
			for (a = 0; a < c->o->nalgos; a++)
				c->be->comm_destroy(comms[a]);
			if (gc != MPI_COMM_NULL)
				MPI_Comm_free(&gc);
			free(allrec);
			return finish(c, rc, "%s", reason);
		}
		if (c->rank == 0)
			sw = xmalloc_or_abort(c, (size_t)ph->ngroups * sizeof(*sw));
		if (c->o->confirm) {
			size_t ncell = (size_t)ph->ngroups * (size_t)c->o->nalgos * (size_t)c->plan.nsizes, i;
			c->piters = xmalloc_or_abort(c, (size_t)c->o->nalgos * (size_t)c->plan.nsizes * sizeof(int));
			if (c->rank == 0) {
				c->pfig = xmalloc_or_abort(c, ncell * 4 * sizeof(double));
				c->prow = calloc(ncell ? ncell : 1, sizeof(json_t *));
				if (!c->prow)
					ch_ar_world_abort(c->w, CH_ERR_RUNTIME, "out of memory");
				for (i = 0; i < ncell * 4; i++)
					c->pfig[i] = NAN;
			}
		}
		for (a = 0; a < c->o->nalgos; a++) {
			if (c->rank == 0)
				for (g = 0; g < ph->ngroups; g++)
					begin_sweep(c, &sw[g], &ph->groups[g], a, live);
			for (s = 0; s < c->plan.nsizes; s++)
				step(c, p, gi, gc, gi >= 0 ? comms[a] : NULL, a, s, sw, allrec, live);
			if (c->rank == 0)
				for (g = 0; g < ph->ngroups; g++)
					end_sweep(c, &sw[g], a, live);
		}
		free(sw);
		if (c->o->confirm)
			confirm_phase(c, p, gi, gc, comms, allrec);
		free(c->piters);
		free(c->pfig);
		free(c->prow);
		c->piters = NULL;
		c->pfig = NULL;
		c->prow = NULL;
		set_where(c, p, gi, -1, -1, -1, 0, gi >= 0 ? ph->groups[gi].name : "-");
		ch_ar_wd_enter(c->w, CH_AR_ACT_LOCAL, "releasing the communicators");
		for (a = 0; a < c->o->nalgos; a++)
			c->be->comm_destroy(comms[a]);
		if (gc != MPI_COMM_NULL)
			MPI_Comm_free(&gc);
		ch_ar_wd_enter(c->w, CH_AR_ACT_IDLE, "between phases");
	}
	free(allrec);
	return 0;
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
		out(c, 0, "#\n# Confirmation (%s): %d size%s measured again, cells that look like a dip or a gap:\n",
		    ph->ngroups == 1 ? ph->groups[0].name : "this phase's groups", n, n == 1 ? "" : "s");
		for (k = 0; k < n; k++) {
			int a = list[2 * k], s = list[2 * k + 1];
			gmode_measure_step(c, p, a, s, comms + (size_t)a * c->size, c->piters[a * ns + s], allrec);
			confirm_record(c, ph, why, allrec, a, s);
			if (checkpoint(c))
				ch_ar_world_abort(c->w, CH_ERR_RUNTIME, "cannot write the result file");
		}
	} else {
		out(c, 0, "#\n# Confirmation (%s): no cell looks like a dip or a gap; nothing measured again\n",
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
static int gmode_run_phases(struct ctx *c)
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

/* ------------------------------------------------------- analysis (rank 0) */

static void analyse(struct ctx *c)
{
	struct ch_ar_straggler *st = NULL;
	struct ch_ar_group_flag *fl = NULL;
	struct ch_ar_suspect *su = NULL;
	json_t *jst = json_array(), *jfl = json_array(), *jsu = json_array();
	int nst, nfl, nsu, i, groups = c->ngbw > 0;

	st = calloc((size_t)c->size, sizeof(*st));
	fl = calloc((size_t)(c->ngbw > 0 ? c->ngbw : 1), sizeof(*fl));
	su = calloc((size_t)c->nnodes, sizeof(*su));
	if (!st || !fl || !su)
		ch_ar_world_abort(c->w, CH_ERR_RUNTIME, "out of memory");
	nst = ch_ar_find_stragglers(c->rows, c->nrows, c->size, st, c->size);
	if (nst < 0)
		ch_ar_world_abort(c->w, CH_ERR_RUNTIME, "out of memory");
	nfl = ch_ar_flag_groups(c->gbw, c->ngbw, CH_AR_FLAG_BELOW_PCT, fl, c->ngbw);
	nsu = ch_ar_suspect_nodes(c->gbw, c->ngbw, fl, nfl, c->nnodes, su, c->nnodes);
	if (nsu < 0)
		ch_ar_world_abort(c->w, CH_ERR_RUNTIME, "out of memory");

	printf("#\n# Stragglers (slowest rank of at least %.0f%% of its rows, by a median of %.0f%% or more):",
	       CH_AR_STRAGGLER_MIN_FRACTION * 100, CH_AR_STRAGGLER_MIN_EXCESS_PCT);
	printf(nst ? "\n" : " none\n");
	for (i = 0; i < nst; i++) {
		const struct ch_world_rank *ri = rank_info(c, st[i].rank);
		printf("#   rank %d (host '%s', local rank %d, node %s): slowest in %d of %d rows, median excess %+.1f%%\n",
		       st[i].rank, ri->host, ri->local_rank, c->node_names[c->node_of[st[i].rank]],
		       st[i].slowest_rows, st[i].rows, st[i].excess_pct);
		json_array_append_new(jst, json_pack("{s:i, s:s, s:s, s:i, s:i, s:f, s:f}", "rank", st[i].rank,
			"host", ri->host, "node", c->node_names[c->node_of[st[i].rank]], "rows", st[i].rows,
			"slowest_rows", st[i].slowest_rows, "slowest_fraction", st[i].slowest_fraction,
			"excess_pct", st[i].excess_pct));
	}
	if (groups) {
		printf("# Slow groups (large-message busbw %.0f%% or more below the median of the other groups of their kind):",
		       CH_AR_FLAG_BELOW_PCT);
		printf(nfl ? "\n" : " none\n");
		for (i = 0; i < nfl; i++) {
			const struct ch_ar_group_bw *g = &c->gbw[fl[i].index];
			printf("#   %s (%s): %.4g GB/s against %.4g GB/s, %.1f%% below\n", g->name, g->algo,
			       fl[i].busbw_gbps, fl[i].ref_gbps, fl[i].pct_below);
			json_array_append_new(jfl, json_pack("{s:s, s:s, s:s, s:f, s:f, s:f}", "group_name", g->name,
				"group_kind", ch_ar_kind_names[g->kind], "algo", g->algo, "busbw_gbps", fl[i].busbw_gbps,
				"kind_median_gbps", fl[i].ref_gbps, "pct_below", fl[i].pct_below));
		}
		printf("# Suspect nodes:");
		printf(nsu ? "\n" : " none\n");
		for (i = 0; i < nsu; i++) {
			printf("#   %s: %s\n", c->node_names[su[i].node], su[i].reason);
			json_array_append_new(jsu, json_pack("{s:s, s:i, s:s}", "node", c->node_names[su[i].node],
				"node_index", su[i].node, "reason", su[i].reason));
		}
	}
	ch_ar_wd_lock(c->w);
	json_object_set_new(c->results, "stragglers", jst);
	json_object_set_new(c->results, "group_flags", jfl);
	json_object_set_new(c->results, "suspect_nodes", jsu);
	json_object_set_new(c->results, "wrong_total", json_integer((json_int_t)c->wrong_total));
	ch_ar_wd_unlock(c->w);
	free(st);
	free(fl);
	free(su);
}

/* Scaling points, one line per algorithm (the reporter fits the model). */
static void print_scaling(struct ctx *c)
{
	size_t i, n = json_array_size(c->sweeps);
	int a, any = 0;

	for (a = 0; a < c->o->nalgos; a++) {
		int first = 1;
		for (i = 0; i < n; i++) {
			json_t *sw = json_array_get(c->sweeps, i);
			if (strcmp(json_string_value(json_object_get(sw, "group_kind")), "scaling") ||
			    strcmp(json_string_value(json_object_get(sw, "algo")), c->labels[a]))
				continue;
			if (!any)
				printf("#\n# Scaling points (out-of-place busbw at the largest size):\n");
			any = 1;
			printf("%s%d ranks %.4g GB/s", first ? "#   " : ", ",
			       (int)json_integer_value(json_object_get(sw, "nranks")),
			       json_real_value(json_object_get(sw, "large_msg_busbw_gbps")));
			if (first)
				first = 0;
		}
		if (!first)
			printf(" (%s)\n", c->labels[a]);
	}
}

/* ------------------------------------------------------------------- main */

static void results_skeleton(struct ctx *c)
{
	const struct ch_ar_opts *o = c->o;
	json_t *r = c->results, *algos = json_array(), *sizes = json_array(), *groups = json_array();
	json_t *notes = json_array(), *nodes = json_array();
	int i;

	for (i = 0; i < o->nalgos; i++)
		json_array_append_new(algos, json_pack("{s:s, s:s, s:s}", "requested", o->algos[i],
						       "label", c->labels[i], "detail", ch_comm_algo_detail(c->be, o->algos[i])));
	for (i = 0; i < c->plan.nsizes; i++)
		json_array_append_new(sizes, json_integer((json_int_t)c->plan.sizes[i].bytes));
	for (i = 0; ch_ar_groups_names[i]; i++)
		if (o->groups & (1u << i))
			json_array_append_new(groups, json_string(ch_ar_groups_names[i]));
	for (i = 0; i < c->plan.nnotes; i++)
		json_array_append_new(notes, json_string(c->plan.notes[i]));
	for (i = 0; i < c->nnodes; i++)
		json_array_append_new(nodes, json_string(c->node_names[i]));
	json_object_set_new(r, "backend", json_string(c->be->name));
	json_object_set_new(r, "memory", json_string(c->be->memory));
	json_object_set_new(r, "launch", json_string(c->gmode ? "single-process" : "mpi"));
	json_object_set_new(r, "dtype", json_string(ch_dtype_comm_name(o->dtype)));
	json_object_set_new(r, "op", json_string(ch_comm_redop_names[o->op]));
	json_object_set_new(r, "busbw_factor_formula", json_string("2(n-1)/n"));
	json_object_set_new(r, "busbw_factor_source", json_string("nccl-tests doc/PERFORMANCE.md"));
	json_object_set_new(r, "time_statistic", json_string(
		"table time and algbw/busbw (loop_time_us): the timed loop's time / iterations averaged over the group's ranks, the loop timed as a whole (nccl-tests' -a 1); time_us: statistics of the per-iteration period from a second pass of the same iterations with every call timed"));
	json_object_set_new(r, "iterations", json_pack("{s:s, s:i, s:i, s:o, s:f, s:i}", "mode",
		o->common.min_time_sec >= 0 ? "adaptive" : o->iters_given ? "fixed" : "default",
		"iters", o->iters, "warmup", o->warmup,
		"min_time_sec", o->common.min_time_sec >= 0 ? json_real(o->common.min_time_sec) : json_null(),
		"default_budget_sec", CH_AR_DEFAULT_BUDGET_SEC, "min_iters", CH_AR_ADAPTIVE_MIN_ITERS));
	json_object_set_new(r, "check", json_boolean(o->check));
	json_object_set_new(r, "sizes_bytes", sizes);
	json_object_set_new(r, "max_bytes_requested", json_integer((json_int_t)o->max_bytes));
	json_object_set_new(r, "max_bytes_reduced", c->reduced ? json_integer((json_int_t)c->reduced) : json_null());
	json_object_set_new(r, "algos", algos);
	json_object_set_new(r, "groups", groups);
	json_object_set_new(r, "scaling", json_boolean(o->scaling));
	json_object_set_new(r, "nodes", nodes);
	json_object_set_new(r, "plan_notes", notes);
	json_object_set_new(r, "timeout_sec", json_real(o->timeout_sec));
	json_object_set_new(r, "min_busbw_gbps", o->min_busbw_gbps >= 0 ? json_real(o->min_busbw_gbps) : json_null());
	json_object_set_new(r, "inject_delay", o->delay_rank >= 0 ?
		json_pack("{s:i, s:I, s:I}", "rank", o->delay_rank, "usec", (json_int_t)o->delay_us,
			  "from_bytes", (json_int_t)o->delay_min_bytes) : json_null());
	json_object_set_new(r, "confirm", json_pack("{s:b, s:f, s:f, s:s, s:i}", "enabled", o->confirm,
		"dip_ratio", CH_AR_CONFIRM_DIP, "gap_ratio", CH_AR_CONFIRM_GAP, "method",
		"at the end of each phase, every cell measured again whose algbw (of the loop time or of the median period) is below both neighbours' and below dip_ratio x their geometric mean (the largest size: below dip_ratio x the size before), or whose out-of-place and in-place figures differ, the lower below gap_ratio x the higher; both placements of the size are measured, with the first measurement's iterations, and the flagged cells get \"confirm\"",
		"cells", 0));
	json_object_set_new(r, "thresholds", json_pack("{s:f, s:i, s:f, s:f}",
		"straggler_min_fraction", CH_AR_STRAGGLER_MIN_FRACTION,
		"straggler_min_rows", CH_AR_STRAGGLER_MIN_ROWS,
		"straggler_min_excess_pct", CH_AR_STRAGGLER_MIN_EXCESS_PCT,
		"group_flag_below_pct", CH_AR_FLAG_BELOW_PCT));
	c->sweeps = json_array();
	json_object_set_new(r, "sweeps", c->sweeps);
	json_object_set_new(r, "stragglers", json_array());
	json_object_set_new(r, "group_flags", json_array());
	json_object_set_new(r, "suspect_nodes", json_array());
	json_object_set_new(r, "wrong_total", json_integer(0));
}

static void cleanup(struct ctx *c)
{
	int i;
	if (c->be && c->gmode) {
		for (i = 0; c->gcx && i < c->size; i++) {
			if (!c->gcx[i])
				continue;
			c->be->free(c->gcx[i], c->gsend[i]);
			c->be->free(c->gcx[i], c->grecv[i]);
			c->be->free(c->gcx[i], c->gexp[i]);
		}
	} else if (c->be) {
		c->be->free(c->cx, c->sendbuf);
		c->be->free(c->cx, c->recvbuf);
		c->be->free(c->cx, c->expbuf);
	}
	free(c->gsend);
	free(c->grecv);
	free(c->gexp);
	free(c->gdev);
	for (i = 0; i < c->nrows; i++)
		free((void *)c->rows[i].own_us);
	free(c->rows);
	free(c->gbw);
	free(c->node_of);
	free(c->node_names);
	ch_ar_plan_release(&c->plan);
}

/* The stages of a run below return 0 to go on, or 1 with *status set (the
 * run's exit status, already agreed and reported through finish()). */

/* --inject-delay against the world, the backend, --algo, -d and -o. */
static int setup_backend(struct ctx *c, char *ver, size_t nver, int *status)
{
	const struct ch_ar_opts *o = c->o;
	char reason[1024] = "";
	int rc, i, j;

	/* -g N > 1: one process drives N GPUs through the nccl backend */
	c->backend_choice = o->backend;
	if (o->ngpus > 1) {
		const char *bad = c->nproc > 1 ? "runs in one process: start it without mpirun (or give each rank one GPU: -g 1 under mpirun)" :
			o->backend == CH_AR_BACKEND_MPI ? "needs the nccl backend (the mpi backend runs one rank per process)" :
			o->delay_rank >= 0 ? "and --inject-delay do not mix: one thread drives every GPU, so a delay delays them all" : NULL;
		if (bad) {
			if (c->rank == 0)
				ch_usage_error("-g %d %s", o->ngpus, bad);
			*status = finish(c, CH_ERR_USAGE, "-g %d %s", o->ngpus, bad);
			return 1;
		}
		c->backend_choice = CH_AR_BACKEND_NCCL;
	}
	/* values that need the world to check (same answer on every rank) */
	if (o->delay_rank >= c->size) {
		if (c->rank == 0)
			ch_usage_error("--inject-delay rank '%d' is not a rank of this run (ranks 0 to %d)",
				       o->delay_rank, c->size - 1);
		*status = finish(c, CH_ERR_USAGE, "--inject-delay rank '%d' is not a rank of this run", o->delay_rank);
		return 1;
	}
	rc = choose_backend(c, reason, sizeof(reason));
	if (rc) {
		if (c->rank == 0) {
			ch_error("backend %s unavailable: %s", ch_comm_backend_names[c->backend_choice], reason);
			json_object_set_new(c->results, "backend", json_string(ch_comm_backend_names[c->backend_choice]));
			json_object_set_new(c->results, "available", json_false());
		}
		*status = finish(c, rc, "backend %s unavailable: %s", ch_comm_backend_names[c->backend_choice], reason);
		c->be = NULL;
		return 1;
	}
	/* the single-process mode: -g N, or a GPU backend without a launcher
	 * (every visible GPU, as `all_reduce_perf -g N` on one node) */
	if (c->be->comm_create_group && c->be->run_group && c->be->devices && c->nproc == 1 &&
	    (o->ngpus > 1 || (o->ngpus == 0 && !ch_world_launched()))) {
		int vis = c->be->devices();
		if (o->ngpus > vis) {
			const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
			snprintf(reason, sizeof(reason), "-g %d: this process sees %d GPU%s%s%s%s", o->ngpus, vis,
				 vis == 1 ? "" : "s", cvd ? " (CUDA_VISIBLE_DEVICES=" : "", cvd ? cvd : "", cvd ? ")" : "");
			if (c->rank == 0) {
				ch_error("backend %s unavailable: %s", c->be->name, reason);
				json_object_set_new(c->results, "available", json_false());
			}
			*status = finish(c, CH_ERR_UNAVAILABLE, "backend %s unavailable: %s", c->be->name, reason);
			return 1;
		}
		if ((o->ngpus > 1 ? o->ngpus : vis) > 1) {
			if (o->delay_rank >= 0) {
				if (c->rank == 0)
					ch_usage_error("--inject-delay needs one rank per process: launch with mpirun, or pass -g 1 (this process would drive %d GPUs from one thread)", vis);
				*status = finish(c, CH_ERR_USAGE, "--inject-delay needs one rank per process");
				return 1;
			}
			c->gmode = 1;
			c->size = o->ngpus > 1 ? o->ngpus : vis;
		}
	}
	rc = 0;
	if (c->rank == 0) {
		rc = ch_ar_check_algos(o, c->be->algos, c->be->name);
		if (!rc && !c->be->supports(o->dtype, o->op))
			rc = ch_usage_error("the %s backend cannot reduce '%s' with '%s'", c->be->name,
					    ch_dtype_comm_name(o->dtype), ch_comm_redop_names[o->op]);
	}
	for (i = 0; !rc && i < o->nalgos; i++) {
		c->labels[i] = ch_comm_algo_label(c->be, o->algos[i]);
		for (j = 0; c->labels[i] && j < i; j++)
			if (!strcmp(c->labels[i], c->labels[j]) && c->rank == 0)
				rc = ch_usage_error("'%s' and '%s' are the same algorithm (%s) for the %s backend",
						    o->algos[j], o->algos[i], c->labels[i], c->be->name);
	}
	rc = ch_ar_world_agree(c->w, rc);
	if (rc) {
		*status = finish(c, rc, "bad --algo, -d or -o for the %s backend", c->be->name);
		return 1;
	}
	if (c->be->version && c->be != &ch_comm_mpi && c->rank == 0) {
		c->be->version(ver, nver);
		ch_result_set_software(c->res, c->be->name, ver);
	}
	return 0;
}

/* The nccl-tests style header and what the timing means. */
static void print_header(struct ctx *c, const char *ver)
{
	const struct ch_ar_opts *o = c->o;

	out(c, 1, "# nThread 1 nGpus %d minBytes %llu maxBytes %llu step: %llu(%s) warmup iters: %d iters: %d agg iters: 1 validation: %d graph: 0\n",
	    c->gmode ? c->size : 1, (unsigned long long)o->min_bytes, (unsigned long long)o->max_bytes,
	    (unsigned long long)(o->step_factor > 1 ? (uint64_t)o->step_factor : o->step_bytes),
	    o->step_factor > 1 ? "factor" : "bytes", o->warmup, o->iters, o->check);
	out(c, 0, "#\n# allreduce_bw (clusterhealth %s, git %s): backend %s (%s, %s), %s %s, %d rank%s on %d node%s%s%s\n",
	    CH_VERSION, ch_git_rev(), c->be->name, ver, c->be->memory, ch_dtype_comm_name(o->dtype),
	    ch_comm_redop_names[o->op], c->size, c->size == 1 ? "" : "s", c->nnodes, c->nnodes == 1 ? "" : "s",
	    o->node_size ? " (--node-size)" : "",
	    c->gmode ? ", one process driving every GPU (-g: ncclCommInitAll, grouped calls from one thread)" : "");
	out(c, 0, "# time: the timed loop's time / iterations averaged over the group's ranks, as nccl-tests;\n"
	    "# algbw = size / time, busbw = algbw x 2(n-1)/n (nccl-tests doc/PERFORMANCE.md); GB/s = 1e9 B/s\n");
	if (o->common.min_time_sec >= 0)
		out(c, 0, "# iterations: adaptive, at least %g s of timed calls per size and placement (at least %d)\n",
		    o->common.min_time_sec, o->iters_given ? o->iters : CH_AR_ADAPTIVE_MIN_ITERS);
	else if (!o->iters_given)
		out(c, 0, "# iterations: %d per size and placement, fewer (at least %d) where %d would take more than %g s\n",
		    CH_AR_DEFAULT_ITERS, CH_AR_ADAPTIVE_MIN_ITERS, CH_AR_DEFAULT_ITERS, CH_AR_DEFAULT_BUDGET_SEC);
}

/* The message sizes (what 3 buffers per rank allow) and the plan, which
 * then carries each size's {count, bytes}; the backend's preparation. */
static int plan_sweep(struct ctx *c, const struct ch_comm_device *dev, int *status)
{
	const struct ch_ar_opts *o = c->o;
	const char *algo_names[CH_AR_MAX_ALGOS];
	uint64_t maxb, cap, es = ch_dtype_size(o->dtype), *req;
	int rc, i, nreq;

	maxb = usable_max_bytes(c, dev->free_bytes);
	cap = o->max_bytes;
	if (cap > maxb) {
		cap = c->reduced = maxb;
		out(c, 1, "#\n# Reducing maxBytes to %llu due to memory limitation\n", (unsigned long long)maxb);
	}
	req = malloc((CH_AR_MAX_SIZES + 1) * sizeof(uint64_t));
	if (!req) {
		*status = finish(c, ch_ar_world_agree(c->w, CH_ERR_RUNTIME), "out of memory");
		return 1;
	}
	nreq = ch_ar_size_list(o->min_bytes, cap, o->step_bytes, o->step_factor, req, CH_AR_MAX_SIZES);
	if (nreq > CH_AR_MAX_SIZES)
		nreq = CH_AR_MAX_SIZES;
	if (nreq == 0) {
		if (c->rank == 0)
			ch_error("not enough memory for -b '%llu': at most %llu bytes per buffer on the smallest rank",
				 (unsigned long long)o->min_bytes, (unsigned long long)maxb);
		*status = finish(c, CH_ERR_RUNTIME, "not enough memory for -b %llu", (unsigned long long)o->min_bytes);
		free(req);
		return 1;
	}
	if (c->be->max_count && req[nreq - 1] / es > c->be->max_count) {
		if (c->rank == 0)
			ch_usage_error("-e '%llu' is %llu %s elements: the %s backend takes at most %llu per call",
				       (unsigned long long)o->max_bytes, (unsigned long long)(req[nreq - 1] / es),
				       ch_dtype_comm_name(o->dtype), c->be->name, (unsigned long long)c->be->max_count);
		*status = finish(c, CH_ERR_USAGE, "-e is above the %s backend's largest count", c->be->name);
		free(req);
		return 1;
	}
	rc = ch_ar_plan_build(c->node_of, c->size, o->groups, o->scaling, &c->plan);
	if (!rc)
		rc = ch_ar_plan_set_sizes(&c->plan, req, nreq, (size_t)es);
	free(req);
	if (rc) {
		*status = finish(c, rc, "cannot plan the groups");
		return 1;
	}
	if (c->plan.nphases == 0) {
		if (c->rank == 0)
			ch_usage_error("nothing to measure with --groups and %d rank%s on %d node%s: %s", c->size,
				       c->size == 1 ? "" : "s", c->nnodes, c->nnodes == 1 ? "" : "s",
				       c->plan.nnotes ? c->plan.notes[0] : "no group");
		*status = finish(c, CH_ERR_USAGE, "nothing to measure: %s", c->plan.nnotes ? c->plan.notes[0] : "no group");
		return 1;
	}
	for (i = 0; i < c->plan.nnotes; i++)
		out(c, 0, "# note: %s\n", c->plan.notes[i]);
	for (i = 0; i < o->nalgos; i++)
		algo_names[i] = o->algos[i];
	if (c->be->prepare && c->be->prepare(algo_names, o->nalgos)) {
		*status = finish(c, ch_ar_world_agree(c->w, CH_ERR_RUNTIME), "backend preparation failed");
		return 1;
	}
	return 0;
}

/* The result skeleton, the watchdog, the buffers (send, receive, expected;
 * allocated once for the sweep) and a first checkpoint. */
static int start_sweep(struct ctx *c, int *status)
{
	const struct ch_ar_opts *o = c->o;
	uint64_t bufb = c->plan.sizes[c->plan.nsizes - 1].bytes;
	int rc;

	if (c->rank == 0)
		results_skeleton(c);
	/* gmode: the plan's ranks are devices of this one process, which the
	 * watchdog (one monitor per process) cannot name: it names what the
	 * process was doing instead */
	rc = ch_ar_wd_start(c->w, o->timeout_sec, c->be->self_timeout ? o->timeout_sec + 10.0 : 0.0,
			    c->gmode ? NULL : &c->plan, c->res, o->common.json_path);
	rc = ch_ar_world_agree(c->w, rc);
	if (rc) {
		*status = finish(c, rc, "cannot start the watchdog");
		return 1;
	}
	ch_ar_wd_enter(c->w, CH_AR_ACT_LOCAL, "allocating the buffers");
	if (c->gmode) {
		int r;
		for (rc = 0, r = 0; r < c->size && !rc; r++) {
			rc = c->be->alloc(c->gcx[r], (size_t)bufb, &c->gsend[r]);
			if (!rc)
				rc = c->be->alloc(c->gcx[r], (size_t)bufb, &c->grecv[r]);
			if (!rc && o->check)
				rc = c->be->alloc(c->gcx[r], (size_t)bufb, &c->gexp[r]);
		}
	} else {
		rc = c->be->alloc(c->cx, (size_t)bufb, &c->sendbuf);
		if (!rc)
			rc = c->be->alloc(c->cx, (size_t)bufb, &c->recvbuf);
		if (!rc && o->check)
			rc = c->be->alloc(c->cx, (size_t)bufb, &c->expbuf);
	}
	ch_ar_wd_enter(c->w, CH_AR_ACT_IDLE, "agreeing");
	rc = ch_ar_world_agree(c->w, rc);
	if (rc) {
		*status = finish(c, rc, "cannot allocate 3 buffers of %llu bytes", (unsigned long long)bufb);
		return 1;
	}
	if (checkpoint(c)) {
		*status = finish(c, CH_ERR_RUNTIME, "cannot write the result file");
		return 1;
	}
	return 0;
}

/* Rank 0: the analyses and the verdict (#wrong, then --min-busbw), agreed. */
static int verdict(struct ctx *c)
{
	char reason[1024] = "";
	int status = 0;

	if (c->rank == 0) {
		fflush(stdout);
		analyse(c);
		print_scaling(c);
		if (c->wrong_total) {
			status = CH_ERR_CHECK;
			snprintf(reason, sizeof(reason), "%llu wrong elements (see #wrong)",
				 (unsigned long long)c->wrong_total);
		} else if (c->fail_busbw) {
			status = CH_ERR_CHECK;
			snprintf(reason, sizeof(reason), "%s", c->fail_reason);
		}
		fflush(stdout);
	}
	MPI_Bcast(&status, 1, MPI_INT, 0, ctrl_comm(c));
	return finish(c, status, status ? "%s" : NULL, reason);
}

static int run(struct ch_ar_world *w, const struct ch_ar_opts *o, const struct ch_comm_backend *forced,
	       int argc, char **argv);

int ch_ar_run(struct ch_ar_world *w, const struct ch_ar_opts *o, int argc, char **argv)
{
	return run(w, o, NULL, argc, argv);
}

int ch_ar_run_backend(struct ch_ar_world *w, const struct ch_ar_opts *o, const struct ch_comm_backend *be,
		      int argc, char **argv)
{
	return run(w, o, be, argc, argv);
}

static int run(struct ch_ar_world *w, const struct ch_ar_opts *o, const struct ch_comm_backend *forced,
	       int argc, char **argv)
{
	struct ctx cx, *c = &cx;
	struct ch_comm_device dev;
	char ver[256] = "";
	int rc = 0, status;

	memset(c, 0, sizeof(*c));
	memset(&dev, 0, sizeof(dev));
	c->w = w;
	c->o = o;
	c->forced = forced;
	c->rank = ch_ar_world_rank(w);
	c->size = c->nproc = ch_ar_world_size(w);
	c->quiet = o->common.quiet;

	/* the result document: rank 0 checks that it may write the file */
	ch_ar_wd_enter(w, CH_AR_ACT_IDLE, "checking the result file");
	if (c->rank == 0)
		rc = ch_run_begin_world("allreduce_bw", argc, argv, &o->common, ch_ar_world_base(w), &c->res);
	ch_ar_world_set_result(w, c->res); /* a hang in set-up finishes it (the guard) */
	rc = ch_ar_world_agree(w, rc);
	if (rc) {
		ch_ar_world_set_result(w, NULL);
		ch_result_free(c->res);
		return rc;
	}
	if (c->rank == 0) {
		c->results = ch_result_results(c->res);
		ch_comm_mpi.version(ver, sizeof(ver));
		ch_result_set_software(c->res, "mpi", ver);
	}
	ch_ar_wd_enter(w, CH_AR_ACT_IDLE, "setting up the backend");
	if (setup_backend(c, ver, sizeof(ver), &status))
		goto out;

	/* nodes, device, rank table */
	ch_ar_wd_enter(w, CH_AR_ACT_IDLE, "mapping the nodes");
	if (map_nodes(c)) {
		status = finish(c, ch_ar_world_agree(w, CH_ERR_RUNTIME), "out of memory");
		goto out;
	}
	ch_ar_world_agree(w, 0);
	print_header(c, ver);
	rc = setup_device(c, &dev);
	if (rc) {
		status = finish(c, rc, "device setup failed (see the messages of each rank)");
		goto out;
	}
	rank_table(c, &dev);

	ch_ar_wd_enter(w, CH_AR_ACT_IDLE, "planning the sweep");
	if (plan_sweep(c, &dev, &status) || start_sweep(c, &status))
		goto out;
	rc = run_phases(c);
	status = rc ? rc : verdict(c);
out:
	ch_ar_wd_enter(w, CH_AR_ACT_IDLE, "finishing");
	cleanup(c);
	if (c->be && c->gmode) {
		int r;
		for (r = 0; c->gcx && r < c->size; r++)
			c->be->close(c->gcx[r]);
	} else if (c->be) {
		c->be->close(c->cx);
	}
	free(c->gcx);
	ch_ar_world_set_result(w, NULL);
	ch_result_free(c->res);
	return status;
}
