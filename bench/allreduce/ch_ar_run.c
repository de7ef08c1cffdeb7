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
 *
 * The sweep's other files, by what they do: ch_ar_run_int.h.
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
#include "bench/allreduce/ch_ar_run_int.h"
#include "bench/allreduce/ch_ar_table.h"
#include "comm/ch_comm.h"
#include "base/ch_common.h"
#include "bench/common/ch_opts.h"
#include "base/ch_result.h"
#include "base/ch_stats.h"

/* Per-rank device, gathered to rank 0 for the rank table. */
struct rank_dev {
	int gpu_index;
	char pci_bus_id[20];
	char name[128];
};

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
	if (!ch_ar_world_mpi(c->w)) { /* one process, no MPI */
		if (all && codes) {
			memcpy(all, mine, WHY_LEN);
			codes[0] = rc;
		}
	} else {
		MPI_Gather(mine, WHY_LEN, MPI_CHAR, all, WHY_LEN, MPI_CHAR, 0, ctrl_comm(c));
		MPI_Gather(&rc, 1, MPI_INT, codes, 1, MPI_INT, 0, ctrl_comm(c));
	}
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

static int setup_device(struct ctx *c, struct ch_comm_device *dev)
{
	const struct ch_world_rank *me = ch_ar_world_info(c->w, c->rank);
	MPI_Comm local;
	char why[WHY_LEN] = "", *ids;
	int rc, a, b;

	if (c->gmode) /* no MPI call: the world may have no MPI (-g N) */
		return gmode_setup_devices(c, dev);
	local = MPI_Comm_f2c(ch_ar_world_local(c->w));
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

	if (ch_ar_world_mpi(c->w))
		MPI_Allreduce(&free_bytes, &all_free, 1, MPI_UINT64_T, MPI_MIN, ctrl_comm(c));
	if (c->be->memory && !strcmp(c->be->memory, "host memory") && reserve > all_free / 4)
		reserve = all_free / 4; /* small hosts: keep a quarter back */
	reserve += c->be->comm_reserve_bytes * (uint64_t)c->o->nalgos;
	if (all_free <= reserve)
		return 0;
	return (all_free - reserve) / (uint64_t)nbuf;
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

	/* -g N (N >= 1) without a launcher, or N > 1: one process drives N GPUs
	 * through the nccl backend, without MPI (-g 1 under mpirun: one GPU
	 * per rank, the launched path) */
	c->backend_choice = o->backend;
	if (o->ngpus > 1 || (o->ngpus == 1 && !ch_ar_world_mpi(c->w))) {
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
	    ((o->ngpus >= 1 && !ch_ar_world_mpi(c->w)) || o->ngpus > 1 || (o->ngpus == 0 && !ch_world_launched()))) {
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
		/* -g N: the single-process path for every N >= 1 (nccl-tests runs
		 * -g 1 so); without -g, for more than one visible GPU */
		if (o->ngpus >= 1 || vis > 1) {
			if (o->delay_rank >= 0) {
				if (c->rank == 0)
					ch_usage_error("--inject-delay needs one rank per process: launch with mpirun, one GPU per rank (this process would drive %d GPUs from one thread)", vis);
				*status = finish(c, CH_ERR_USAGE, "--inject-delay needs one rank per process");
				return 1;
			}
			c->gmode = 1;
			c->size = o->ngpus >= 1 ? o->ngpus : vis;
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

/* The watchdog's struct ch_ar_wd_groups over the plan @ctx: the ranks of
 * group @group of phase @phase, NULL when the plan has no such group. */
static const int *plan_members(const void *ctx, int phase, int group, int *n)
{
	const struct ch_ar_plan *plan = ctx;
	if (phase < 0 || phase >= plan->nphases || group < 0 || group >= plan->phases[phase].ngroups)
		return NULL;
	*n = plan->phases[phase].groups[group].nranks;
	return plan->phases[phase].groups[group].ranks;
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
			    c->gmode ? NULL : &(struct ch_ar_wd_groups){ plan_members, &c->plan }, c->res,
			    o->common.json_path);
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
	if (ch_ar_world_mpi(c->w))
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
