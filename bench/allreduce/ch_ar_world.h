/*
 * ch_ar_world.h - allreduce_bw's MPI world: launch, rank layout, agreement
 * on errors, and the watchdog that turns a hang into an abort that names
 * the ranks that never arrived.
 *
 * MPI is initialised with MPI_THREAD_MULTIPLE so that the watchdog thread
 * can report a timeout while the main thread is blocked in a collective
 * (with --timeout 0 there is no watchdog and MPI_THREAD_SINGLE is asked for).
 * Each rank tells the watchdog what it is doing (ch_ar_wd_enter(),
 * ch_ar_wd_mark()); an activity with a deadline (inside an all-reduce, an
 * injected delay, local work, a control exchange) that lasts longer than
 * --timeout fires it. A firing rank reports {what, where, since when} to
 * world rank 0 on a control communicator; rank 0 (its watchdog, or its main
 * thread when it is waiting between steps) collects the reports for a short
 * grace period, prints one message naming the size, algorithm, group and
 * the ranks of the group that never entered the all-reduce, finishes the
 * result file with status "error" and calls MPI_Abort, so every rank exits
 * (code 4). A rank whose report is not answered aborts by itself.
 *
 * Everything here is collective over MPI_COMM_WORLD unless it says "local".
 * No MPI types cross this header: communicators are Fortran handles.
 */
#ifndef CH_AR_WORLD_H
#define CH_AR_WORLD_H

#include <stdint.h>

#include "bench/allreduce/ch_ar_opts.h"
#include "bench/allreduce/ch_ar_plan.h"
#include "base/ch_result.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ch_ar_world;

/* One world rank, known on every rank after ch_ar_world_init(). */
struct ch_ar_rankinfo {
	int local_rank;  /* rank among the ranks sharing memory (MPI_COMM_TYPE_SHARED) */
	int local_size;
	int host_node;   /* node index from the shared-memory split, 0..nhosts-1 */
	long pid;
	char host[64];
};

/**
 * ch_ar_world_init - MPI_Init_thread and the layout.
 * Asks for MPI_THREAD_MULTIPLE (the watchdog's reports), or for
 * MPI_THREAD_SINGLE when the command line says --timeout 0.
 * Sets OMPI_MCA_coll_tuned_use_dynamic_rules=1 first unless the user set it
 * (needed to choose Open MPI's all-reduce algorithm per communicator).
 * Works under mpirun/srun and without a launcher (a world of one).
 * @out: [out] the world; release with ch_ar_world_finalize().
 * Returns 0 or CH_ERR_RUNTIME (message printed).
 */
int ch_ar_world_init(int *argc, char ***argv, struct ch_ar_world **out);

/**
 * ch_ar_world_parse - parse the options on every rank (messages from world
 * rank 0 only; -h and -V print there) and agree on the outcome.
 * Returns 0, or CH_ERR_USAGE on every rank when the command line is bad.
 */
int ch_ar_world_parse(struct ch_ar_world *w, int argc, char **argv, struct ch_ar_opts *o);

/**
 * ch_ar_world_quiet_call - run @fn(@argc, @argv, @out) on this rank with its
 * stdout and stderr sent to /dev/null on every rank but world rank 0, so
 * that a step every rank runs (parsing the command line into @out) speaks
 * once. Local: no agreement. Returns what @fn returned.
 */
int ch_ar_world_quiet_call(struct ch_ar_world *w, int (*fn)(int argc, char **argv, void *out), int argc,
			   char **argv, void *out);

/**
 * ch_ar_world_agree - agree on a status: the most severe (most negative)
 * of every rank's @status. Returns it on every rank.
 */
int ch_ar_world_agree(struct ch_ar_world *w, int status);

/**
 * ch_ar_world_finalize - stop the watchdog, MPI_Finalize, free @w.
 * @status: [in] the run's status (0 or negative ch_status), agreed.
 * Returns the process exit code for @status.
 */
int ch_ar_world_finalize(struct ch_ar_world *w, int status);

/**
 * ch_ar_world_abort - local: print "error: MSG" (with rank and host),
 * finish the result file (world rank 0) with @status, and MPI_Abort every
 * rank with its exit code. For run-time errors in the middle of a sweep,
 * where returning would leave the other ranks waiting. Does not return.
 */
void ch_ar_world_abort(struct ch_ar_world *w, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), noreturn));

int ch_ar_world_rank(const struct ch_ar_world *w);
int ch_ar_world_size(const struct ch_ar_world *w);
/** ch_ar_world_info - rank @r's layout (local: known on every rank). */
const struct ch_ar_rankinfo *ch_ar_world_info(const struct ch_ar_world *w, int r);
/** ch_ar_world_nhosts - nodes found by the shared-memory split. */
int ch_ar_world_nhosts(const struct ch_ar_world *w);
/** ch_ar_world_ctrl - Fortran handle of the control communicator (a dup of the world). */
int ch_ar_world_ctrl(const struct ch_ar_world *w);
/** ch_ar_world_local - Fortran handle of this node's communicator. */
int ch_ar_world_local(const struct ch_ar_world *w);
/** ch_ar_world_thread_multiple - 1 when MPI granted MPI_THREAD_MULTIPLE. */
int ch_ar_world_thread_multiple(const struct ch_ar_world *w);

/**
 * ch_ar_world_barrier - a barrier on the control communicator that world
 * rank 0 polls, answering timeout reports while it waits (other ranks sleep
 * between polls, leaving the CPU to ranks still measuring). No deadline:
 * ranks still busy are covered by their own watchdog.
 * Returns 0 or CH_ERR_RUNTIME.
 */
int ch_ar_world_barrier(struct ch_ar_world *w);

/**
 * ch_ar_world_gather - MPI_Gather of @n doubles per rank to world rank 0 on
 * the control communicator, polled like ch_ar_world_barrier().
 * @recv: [out] on rank 0, size x n doubles (ignored elsewhere).
 */
int ch_ar_world_gather(struct ch_ar_world *w, const double *send, int n, double *recv);

/* ---- watchdog */

/* What the main thread is doing. */
enum ch_ar_act {
	CH_AR_ACT_IDLE,   /* nothing with a deadline (waiting between steps) */
	CH_AR_ACT_COLL,   /* inside the measured all-reduce */
	CH_AR_ACT_DELAY,  /* in an injected delay (--inject-delay) */
	CH_AR_ACT_LOCAL,  /* local work: filling inputs, checking results, setup */
	CH_AR_ACT_MPI     /* a control exchange or communicator creation */
};

/* Where in the sweep (for messages); strings must stay valid until changed. */
struct ch_ar_where {
	int phase, group, algo, size_index;
	int place;                /* 0 out-of-place, 1 in-place, 2/3 their checks */
	uint64_t bytes;
	const char *group_name;   /* "world", "node1" */
	const char *algo_label;   /* "ring", "recursive_doubling" */
};

/**
 * ch_ar_wd_start - start the watchdog thread (all ranks).
 * @timeout_sec: [in] --timeout; 0 disables the watchdog.
 * @coll_grace_sec: [in] extra time allowed inside an all-reduce (backends
 *                  that time out by themselves get timeout + this).
 * @plan: [in] the plan (borrowed), to name the members of a hung group.
 * @res:  [in] world rank 0's result document (borrowed), NULL elsewhere.
 * Returns 0 or CH_ERR_RUNTIME.
 */
int ch_ar_wd_start(struct ch_ar_world *w, double timeout_sec, double coll_grace_sec,
		   const struct ch_ar_plan *plan, struct ch_result *res);

/** ch_ar_wd_where - local: set where the rank is (copied). */
void ch_ar_wd_where(struct ch_ar_world *w, const struct ch_ar_where *where);

/**
 * ch_ar_wd_enter - local: the rank starts @act; @what (static string) says
 * what, e.g. "filling the inputs". Cheap (atomic stores, no clock read): the
 * watchdog thread starts the activity's clock when it sees the change, so
 * deadlines are kept to within its 20 ms polling period.
 */
void ch_ar_wd_enter(struct ch_ar_world *w, int act, const char *what);

/**
 * ch_ar_wd_mark - local: the mark callback of struct ch_comm_run (@ctx is
 * the world): in_call 1 enters CH_AR_ACT_COLL at iteration @iter, 0 goes
 * back to CH_AR_ACT_LOCAL, -1 enters CH_AR_ACT_DELAY.
 */
void ch_ar_wd_mark(void *ctx, int iter, int in_call);

/**
 * ch_ar_wd_timeout - local: a backend reported that the all-reduce at
 * iteration @iter did not complete in time (CH_COMM_ERR_TIMEOUT): run the
 * timeout protocol from the main thread. Does not return.
 */
void ch_ar_wd_timeout(struct ch_ar_world *w, int iter) __attribute__((noreturn));

/**
 * ch_ar_wd_lock, ch_ar_wd_unlock - local: hold while changing or writing
 * the result document, so that a timeout never writes it half-changed.
 */
void ch_ar_wd_lock(struct ch_ar_world *w);
void ch_ar_wd_unlock(struct ch_ar_world *w);

#ifdef __cplusplus
}
#endif
#endif
