/*
 * ch_ar_opts.h - allreduce_bw's command line: nccl-tests' options (-b -e -f
 * -i -n -w -c -d -o, -g N and -t 1) with their meanings and size suffixes,
 * plus --backend, --algo, --groups, --node-size, --scaling, --timeout,
 * --min-busbw, --inject-delay, --confirm and the common options (ch_opts.h).
 */
#ifndef CH_AR_OPTS_H
#define CH_AR_OPTS_H

#include <stdint.h>
#include <stdio.h>

#include "bench/common/ch_opts.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CH_AR_MAX_ALGOS 8
#define CH_AR_MAX_GPUS 256       /* -g: GPUs one process may drive */
#define CH_AR_MAX_SIZES 4096
#define CH_AR_DEFAULT_TIMEOUT_SEC 120.0
/* Iterations. With -n N: exactly N. Without -n or --min-time (default
 * mode): up to CH_AR_DEFAULT_ITERS (nccl-tests' -n default), fewer when they
 * would take longer than CH_AR_DEFAULT_BUDGET_SEC per size and placement,
 * never fewer than CH_AR_ADAPTIVE_MIN_ITERS. With --min-time SEC: enough to
 * add up to SEC, at least -n (or CH_AR_ADAPTIVE_MIN_ITERS), at most
 * CH_AR_ADAPTIVE_MAX_ITERS. The group's first rank decides from timed
 * warm-up calls and broadcasts, so every rank runs the same count. */
#define CH_AR_DEFAULT_ITERS 20
#define CH_AR_DEFAULT_BUDGET_SEC 0.5
#define CH_AR_DEFAULT_WARMUP 2
#define CH_AR_ADAPTIVE_MIN_ITERS 5
#define CH_AR_ADAPTIVE_MAX_ITERS 100000

enum ch_ar_backend_choice { CH_AR_BACKEND_AUTO, CH_AR_BACKEND_MPI, CH_AR_BACKEND_NCCL };

struct ch_ar_opts {
	struct ch_common_opts common;
	uint64_t min_bytes;      /* -b (default 32M, as nccl-tests) */
	uint64_t max_bytes;      /* -e (default 32M) */
	uint64_t step_bytes;     /* -i (default 1M), used when step_factor is 1 */
	long step_factor;        /* -f (default 1) */
	int iters;               /* -n (default 20, see above) */
	int iters_given;         /* -n was given */
	int warmup;              /* -w (default 2), per size and placement */
	int check;               /* -c 0|1 (default 1) */
	int dtype;               /* -d, enum ch_dtype (default float) */
	int op;                  /* -o, enum ch_comm_redop (default sum) */
	int backend;             /* --backend, enum ch_ar_backend_choice (default auto) */
	int ngpus;               /* -g N: this one process drives N GPUs, one rank each
				  * (nccl-tests' single-process mode); 0: not given (one
				  * GPU per process, or every visible GPU when the nccl
				  * backend runs without a launcher) */
	int nalgos;              /* --algo (default "default") */
	char algos[CH_AR_MAX_ALGOS][32];
	unsigned groups;         /* --groups, CH_AR_GROUPS_* bits (default world) */
	int node_size;           /* --node-size K, 0: nodes from MPI_COMM_TYPE_SHARED */
	int scaling;             /* --scaling */
	double timeout_sec;      /* --timeout (default 120), 0: none */
	double min_busbw_gbps;   /* --min-busbw, < 0: none */
	int delay_rank;          /* --inject-delay RANK, -1: none */
	long delay_us;           /* --inject-delay USEC */
	uint64_t delay_min_bytes;/* --inject-delay ...@SIZE: only from this size (0: all) */
	int confirm;             /* --confirm 0|1: measure dips and gaps again (default 1) */
};

/**
 * ch_ar_opts_parse - parse the command line.
 * @o: [out] options, defaults filled first.
 * Returns 0 (also for -h and -V: o->common.help / .version are set), or
 * CH_ERR_USAGE after printing a message naming the option and the value.
 * Checks what needs no MPI: values, ranges, -b <= -e, sizes of at least one
 * element, duplicates in lists. Algorithm names are checked against the
 * backend later (ch_ar_check_algos()), the delayed rank against the world
 * size in the driver. Resets getopt (optind).
 */
int ch_ar_opts_parse(int argc, char **argv, struct ch_ar_opts *o);

/** ch_ar_usage - the --help text, ending with examples. */
void ch_ar_usage(FILE *f);

/**
 * ch_ar_size_list - the message sizes of a sweep, nccl-tests' way: from
 * @min_bytes while <= @max_bytes, times @factor when @factor > 1, else plus
 * @step_bytes.
 * @out: [out] up to @max sizes (may be NULL when @max is 0).
 * Returns the number of sizes (may exceed @max; counting stops at
 * CH_AR_MAX_SIZES + 1), or 0 when @min_bytes is 0 or above @max_bytes.
 */
int ch_ar_size_list(uint64_t min_bytes, uint64_t max_bytes, uint64_t step_bytes, long factor,
		    uint64_t *out, int max);

/**
 * ch_ar_check_algos - are the --algo names accepted by a backend?
 * @accepted: [in] the backend's algorithm table (comm/ch_comm.h), ended by
 *            an entry with name NULL.
 * @backend:  [in] its name, for the message.
 * Returns 0, or CH_ERR_USAGE after printing "unknown algorithm 'X' for
 * backend B (expected: ...)".
 */
struct ch_comm_algo;
int ch_ar_check_algos(const struct ch_ar_opts *o, const struct ch_comm_algo *accepted,
		      const char *backend);

#ifdef __cplusplus
}
#endif
#endif
