/*
 * ch_ar_run_int.h - what the files of allreduce_bw's sweep share among
 * themselves (not for other parts; the module's interface is ch_ar_run.h):
 * the run's state (struct ctx), where a step runs (struct at), the records
 * ranks send rank 0 (struct rec), rank 0's rows and tables (struct row,
 * struct sweep), and the functions one file calls in another.
 *
 * The sweep's files, by what they do:
 *   ch_ar_run.c      the run: backend and devices, the rank table, the plan
 *                    of sizes, the phases, the verdict, ch_ar_run()
 *   ch_ar_gmode.c    -g N: one process driving N GPUs, one rank each
 *   ch_ar_confirm.c  confirmation: the cells of a phase measured again
 *   ch_ar_measure.c  one step measured: iterations, timed calls, checks,
 *                    the records gathered
 *   ch_ar_record.c   rank 0's record: rows, tables, the result file's
 *                    sweeps, the analysis
 *   ch_ar_common.c   what they all use: layout, printing, the result file,
 *                    errors that abort
 * Each calls only the files listed after it (tests/cli/arrows.sh).
 */
#ifndef CH_AR_RUN_INT_H
#define CH_AR_RUN_INT_H

#include <mpi.h>

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "bench/allreduce/ch_ar_analysis.h"
#include "bench/allreduce/ch_ar_opts.h"
#include "bench/allreduce/ch_ar_plan.h"
#include "bench/allreduce/ch_ar_table.h"
#include "bench/common/ch_ar_world.h"
#include "base/ch_result.h"
#include "comm/ch_ar_pattern.h"
#include "comm/ch_comm.h"

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

/* Rank @r's layout: the world's, or in gmode this process's with the
 * device index as its local rank. */
const struct ch_world_rank *rank_info(struct ctx *c, int r);

MPI_Comm ctrl_comm(struct ctx *c);

/* Rank 0 prints (stdout), unless quiet or @always is 0 and quiet. */
void out(struct ctx *c, int always, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Rank 0: finish the result file; every rank: return @status. */
int finish(struct ctx *c, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

json_t *stats_json_us(const double *st);

int checkpoint(struct ctx *c);

/* setup_device() in gmode: rank r on device r of this process; two ranks
 * on one GPU (the same PCI bus id) are refused. @dev gets rank 0's device
 * with the smallest free memory of all. */
int gmode_setup_devices(struct ctx *c, struct ch_comm_device *dev);

void set_where(struct ctx *c, int phase, int group, int algo, int s, int place,
		      uint64_t bytes, const char *gname);

/* The iteration count for a per-iteration period of @med seconds (<= 0:
 * unknown): with --min-time, enough to add up to it; by default up to
 * CH_AR_DEFAULT_ITERS within CH_AR_DEFAULT_BUDGET_SEC, at least
 * CH_AR_ADAPTIVE_MIN_ITERS. */
int iters_for_period(struct ctx *c, double med);

void *xmalloc_or_abort(struct ctx *c, size_t n);

/* @p with room for @n + 1 elements of @es bytes: doubled (from @first) when
 * @n reached *@cap. */
void *grow_or_abort(struct ctx *c, void *p, int n, int *cap, int first, size_t es);

void mpi_or_abort(struct ctx *c, int rc, const char *what);

/* The group's figures of one placement into @rec (on the rank that keeps
 * them): @sumi, the per-iteration times summed over the @n ranks, becomes
 * their mean (in place) and its statistics; @wsum the wrong elements summed
 * over the group; @loop_sum the ranks' loop times summed. */
void group_record(struct ctx *c, struct rec *rec, int place, double *sumi, int iters, int n,
			 uint64_t wsum, double loop_sum);

void begin_sweep(struct ctx *c, struct sweep *sw, const struct ch_ar_group *g, int a, int live);

/* Index of (group @g, algorithm @a, size @s) in the phase's pfig / prow. */
size_t cell_index(const struct ctx *c, int g, int a, int s);

/* One size of a sweep: measure's records -> a row -> JSON and table; its
 * figures and row object kept for the confirmation (@g, @s: indices). */
void add_row(struct ctx *c, struct sweep *sw, const double *allrec, int g, int a, int s,
		    const struct ch_ar_size *sz, int live);

void end_sweep(struct ctx *c, struct sweep *sw, int a, int live);

/* Every rank: one size of one algorithm, both placements, on this rank's
 * group (none when @gi < 0), then the records gathered to world rank 0.
 * @iters: the iteration count to run, or 0: the options decide (and the
 * count run is kept in c->piters for the confirmation). */
void measure_step(struct ctx *c, int p, int gi, MPI_Comm gc, struct ch_comm *bc, int a, int s,
			 int iters, double *allrec);

void step(struct ctx *c, int p, int gi, MPI_Comm gc, struct ch_comm *bc, int a, int s,
		 struct sweep *sw, double *allrec, int live);

/* The order communicators are created in: the algorithms the backend
 * selects with a setting (NCCL_ALGO) first, those that run without one
 * ("default") last, so that the backend changes its environment only as
 * comm/nccl/ch_comm_nccl.c needs (a variable is added only while no
 * communicator exists). @order gets the indices into c->o->algos. */
void creation_order(const struct ctx *c, int *order);

/* Rank 0: which (algorithm, size) steps of the phase to measure again:
 * @why gets each cell's reason, @list the (a, s) pairs; returns their count. */
int confirm_plan(struct ctx *c, const struct ch_ar_phase *ph, unsigned char *why, int *list);

/* Rank 0: the second measurement of step (@a, @s) into the flagged cells. */
void confirm_record(struct ctx *c, const struct ch_ar_phase *ph, const unsigned char *why,
			   const double *allrec, int a, int s);

/* Every rank: at the end of a phase, the cells that look like a dip or a
 * gap measured again (ch_ar_confirm_cells()), with the first measurement's
 * iteration count; rank 0 decides and broadcasts the steps, every group
 * measures each listed step (as in the sweep, the groups of the phase run
 * at once), and the flagged cells get the second measurement. */
void confirm_phase(struct ctx *c, int p, int gi, MPI_Comm gc, struct ch_comm **comms, double *allrec);

/* run_phases() in gmode: per phase, every group's communicators (one
 * clique per group and algorithm, named algorithms first), then the steps. */
int gmode_run_phases(struct ctx *c);

void analyse(struct ctx *c);

/* Scaling points, one line per algorithm (the reporter fits the model). */
void print_scaling(struct ctx *c);

void results_skeleton(struct ctx *c);

#endif
