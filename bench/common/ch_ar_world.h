/*
 * ch_ar_world.h - the MPI world of allreduce_bw and checkpoint_io: the
 * shared launch and rank layout (bench/common/ch_world.h) set up for these
 * tools, agreement on errors, and the watchdog that turns a hang into an
 * abort that names the ranks that never arrived (the names keep the
 * ch_ar_ prefix of allreduce_bw, where it began; the groups of a run's
 * phases come from the tool, struct ch_ar_wd_groups, so that this file
 * uses nothing of bench/allreduce/).
 *
 * MPI is always initialised (a world of one without a launcher), with
 * MPI_THREAD_FUNNELED: only the main thread calls MPI; nodes are those of
 * the shared-memory split; host names are kept to 63 bytes.
 *
 * Each rank tells its monitoring thread what it is doing
 * (ch_ar_wd_enter(), ch_ar_wd_mark(), and in a timed loop a plain store of
 * the iteration number through ch_ar_wd_progress()); an activity with a
 * deadline (inside an all-reduce, an injected delay, local work, a control
 * exchange) that lasts longer than --timeout without progress fires it. The
 * monitors talk to each other over UDP (IPv4, every address of each host,
 * loopback within a host), never through MPI. A firing rank reports to
 * world rank 0 and to rank 1 (rank 0's backup); the coordinator (rank 0, or
 * rank 1 when rank 0 does not act within 1 s) asks every rank for its state
 * (1 s), prints one message naming the size, algorithm, group and the
 * ranks of the group that never arrived (a rank that does not answer is
 * named as stopped or down), finishes the result file with status "error"
 * (rank 1 does so on disk, from what rank 0 last wrote, when it shares rank
 * 0's host), tells every rank to exit, and exits with code 4; the launcher
 * ends whatever is left (mpirun ends the job when a rank exits non-zero).
 * A rank waiting between steps longer than --timeout pings rank 0 (rank 0
 * pings every rank), so that a stopped process is found wherever it is. A
 * rank that nobody answers exits by itself 5 s after firing. Every rank is
 * out within --timeout + 5 s (CH_AR_WD_GRACE_SEC), whichever rank hangs.
 *
 * Everything here is collective over MPI_COMM_WORLD unless it says "local".
 * No MPI types cross this header: communicators are Fortran handles.
 */
#ifndef CH_AR_WORLD_H
#define CH_AR_WORLD_H

#include <stdint.h>

#include "base/ch_result.h"
#include "bench/common/ch_world.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ch_ar_world;

/**
 * ch_ar_world_init - MPI_Init_thread (MPI_THREAD_FUNNELED) and the layout
 * (ch_world_init() with the choices above).
 * Sets OMPI_MCA_coll_tuned_use_dynamic_rules=1 first unless the user set it
 * (needed to choose Open MPI's all-reduce algorithm per communicator).
 * Works under mpirun/srun and without a launcher (a world of one).
 * Starts the set-up guard first: a local thread (no MPI, no network) that
 * keeps --timeout (read from @argv, else @default_timeout_sec; 0: none)
 * for every step before the watchdog runs (MPI_Init, the layout, the
 * options, the result file, the backend, the device, the plan: each
 * activity entered with ch_ar_wd_enter()), and again for MPI_Finalize in
 * ch_ar_world_finalize(). A step that takes longer (a rank stopped or hung
 * holds the others in a collective) ends this rank: it says so, rank 0
 * finishes its result file (ch_ar_world_set_result()) with status "error",
 * the on-abort hook runs, and it exits with code 4; the launcher ends what
 * is left. So every rank is out within --timeout + 5 s also in set-up.
 * @argc, @argv: [in,out] as for MPI_Init.
 * @out: [out] the world; release with ch_ar_world_finalize().
 * Returns 0 or CH_ERR_RUNTIME (message printed; *@out is NULL then).
 */
int ch_ar_world_init(int *argc, char ***argv, double default_timeout_sec, struct ch_ar_world **out);

/**
 * ch_ar_world_set_result - local: world rank 0's result document (borrowed;
 * NULL elsewhere, and before it is freed), which the set-up guard and the
 * watchdog finish on a hang.
 */
void ch_ar_world_set_result(struct ch_ar_world *w, struct ch_result *res);

/**
 * ch_ar_world_agree - agree on a status: the most severe (most negative)
 * of every rank's @status (ch_world_agree()). Returns it on every rank.
 */
int ch_ar_world_agree(struct ch_ar_world *w, int status);

/**
 * ch_ar_world_finalize - stop the watchdog, MPI_Finalize, free @w.
 * @status: [in] the run's status (0 or negative ch_status), agreed.
 * Returns the process exit code for @status.
 */
int ch_ar_world_finalize(struct ch_ar_world *w, int status);

/**
 * ch_ar_world_on_abort - a clean-up to run before this rank exits on an
 * abort or a watchdog timeout (ch_ar_world_abort(), the watchdog's exit):
 * e.g. removing the files the run wrote.
 * @fn:  [in] called at most once, from whichever thread ends the process
 *       (often not MPI's, while the main thread may still run): it must
 *       not call MPI and must not block for long. NULL removes it.
 * @ctx: [in] passed to @fn; must stay valid until the process exits.
 */
void ch_ar_world_on_abort(struct ch_ar_world *w, void (*fn)(void *ctx), void *ctx);

/**
 * ch_ar_world_abort - local: print "error: MSG" (with rank and host),
 * finish the result file (world rank 0; another rank tells rank 0 why,
 * ch_ar_world_tell_rank0()) with @status, and MPI_Abort every
 * rank with its exit code. For run-time errors in the middle of a sweep,
 * where returning would leave the other ranks waiting. Called from another
 * thread than MPI's (a signal thread), it exits without MPI (MPI is
 * MPI_THREAD_FUNNELED) and the launcher ends the other ranks. Does not
 * return.
 */
void ch_ar_world_abort(struct ch_ar_world *w, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4), noreturn));

/**
 * ch_ar_world_tell_rank0 - local, any thread, no MPI: on a rank other than
 * 0, tell world rank 0's watchdog (over its side channel) that this rank
 * ends and why ("interrupted by SIGTERM during the read-back"): rank 0
 * finishes the result file with status @status and "rank R (host H): MSG",
 * and every rank exits with code 4. Nothing on rank 0, or before the
 * watchdog runs. ch_ar_world_abort() calls it.
 */
void ch_ar_world_tell_rank0(struct ch_ar_world *w, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Local: the layout of @w (struct ch_world, ch_world.h), borrowed for @w's life. */
/** ch_ar_world_base - the layout itself. */
const struct ch_world *ch_ar_world_base(const struct ch_ar_world *w);
/** ch_ar_world_rank, ch_ar_world_size - world rank and size. */
int ch_ar_world_rank(const struct ch_ar_world *w);
int ch_ar_world_size(const struct ch_ar_world *w);
/** ch_ar_world_info - rank @r's layout (known on every rank); NULL when out of range. */
const struct ch_world_rank *ch_ar_world_info(const struct ch_ar_world *w, int r);
/** ch_ar_world_nhosts - nodes found by the shared-memory split. */
int ch_ar_world_nhosts(const struct ch_ar_world *w);
/** ch_ar_world_ctrl - Fortran handle of the control communicator (a dup of the world). */
int ch_ar_world_ctrl(const struct ch_ar_world *w);
/** ch_ar_world_local - Fortran handle of this node's communicator. */
int ch_ar_world_local(const struct ch_ar_world *w);

/**
 * ch_ar_world_mpi - 1 when MPI is initialised (a launched world, or a
 * singleton), 0 for a world of one without MPI (-g N without a launcher):
 * then the world's collectives are the identity and no MPI call may be made.
 */
int ch_ar_world_mpi(const struct ch_ar_world *w);

/**
 * ch_ar_world_barrier - a barrier on the control communicator, polled with
 * sleeps between polls (leaving the CPU to ranks still measuring). No
 * deadline of its own: ranks still busy are covered by their own watchdog,
 * stopped ones by the pings of waiting ranks.
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

/* The groups of the run's phases, for naming the ranks of a hung group
 * (allreduce_bw's plan fills it, bench/allreduce/ch_ar_plan.h). */
struct ch_ar_wd_groups {
	/* the ranks of group @group of phase @phase (@ctx: below), ascending,
	 * their count in *@n; NULL when there is no such group */
	const int *(*members)(const void *ctx, int phase, int group, int *n);
	const void *ctx; /* borrowed: lives as long as the watchdog */
};

/**
 * ch_ar_wd_start - start the monitoring thread (all ranks; collective over
 * the world: exchanges the side channel's addresses).
 * @timeout_sec: [in] --timeout; 0 disables the watchdog.
 * @coll_grace_sec: [in] extra time allowed inside an all-reduce (backends
 *                  that time out by themselves get timeout + this).
 * @groups: [in] the groups of the phases, to name the members of a hung
 *          group (copied; what it points to is borrowed); NULL: none (a
 *          hung rank is named by what it was doing).
 * @res:  [in] world rank 0's result document (borrowed), NULL elsewhere.
 * @json_path: [in] --json (NULL: none); rank 1 finishes that file on disk
 *             when rank 0 hangs (copied).
 * Returns 0 or CH_ERR_RUNTIME.
 */
int ch_ar_wd_start(struct ch_ar_world *w, double timeout_sec, double coll_grace_sec,
		   const struct ch_ar_wd_groups *groups, struct ch_result *res, const char *json_path);

/* Seconds after --timeout within which every rank has exited on a hang
 * (ping answer 2 s, backup takeover 1 s, state collection 1 s, slack 1 s). */
#define CH_AR_WD_GRACE_SEC 5.0

/**
 * ch_ar_wd_progress - local: where a timed loop stores the iteration
 * number before each call (a plain relaxed store, no clock read, no call):
 * the monitor restarts the call's clock when the number changes.
 * Returns a pointer valid for the world's life.
 */
int *ch_ar_wd_progress(struct ch_ar_world *w);

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
 * iteration @iter did not complete in time (CH_COMM_ERR_TIMEOUT): hand the
 * timeout to the monitoring thread, which reports and exits. Does not return.
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
