/*
 * ch_ckpt.h - checkpoint_io's options, the layout of a checkpoint over ranks
 * and files, the writer counts of the scaling points, and the stall model.
 * Everything here is pure (no I/O, no MPI) so that it is unit-tested.
 * The run itself: ch_ckpt_run.h; method: docs/checkpoint_io.md.
 */
#ifndef CH_CKPT_H
#define CH_CKPT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/ch_ckpt_stall.h"
#include "bench/common/ch_opts.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CH_CKPT_DEFAULT_TIMEOUT_SEC 600.0
#define CH_CKPT_DEFAULT_BLOCK_BYTES (16ull << 20)
/* Model states of mixed-precision Adam per parameter: 2 (bf16 weights) + 2
 * (bf16 gradients) + 12 (fp32 master weights and the two Adam moments) = 16
 * (Rajbhandari et al., "ZeRO", SC'20, sec. 3.1). A checkpoint that leaves
 * the gradients out holds 14: give --bytes-per-param 14 for it. */
#define CH_CKPT_DEFAULT_BYTES_PER_PARAM 16.0
#define CH_CKPT_MAX_FILES_PER_RANK 1024
#define CH_CKPT_MAX_WRITER_POINTS 4
#define CH_CKPT_MAX_REPEAT 8

/* The load run while the staged copy drains (--load). */
enum ch_ckpt_load {
	CH_CKPT_LOAD_AUTO = 0, /* cpu, plus gpu when a GPU is present */
	CH_CKPT_LOAD_CPU,
	CH_CKPT_LOAD_GPU,      /* gpu only (unavailable, exit 3, without a GPU) */
	CH_CKPT_LOAD_NONE
};

struct ch_ckpt_opts {
	struct ch_common_opts common;
	const char *dir;          /* --dir: where the checkpoint goes (required) */
	const char *stage_dir;    /* --stage-dir, NULL: a new directory under /dev/shm (else /tmp) */
	uint64_t size_bytes;      /* --size, or --params x --bytes-per-param (rounded to a byte) */
	int have_size, have_params, have_bpp;
	double params;            /* --params N */
	double bytes_per_param;   /* --bytes-per-param B (default 16) */
	long files_per_rank;      /* --files-per-rank (default 1) */
	uint64_t block_bytes;     /* --block-size: bytes per write() call (default 16M) */
	double interval_sec;      /* --interval; < 0 when not given */
	double timeout_sec;       /* --timeout (default 600; 0 disables) */
	int scaling;              /* 1 unless --no-scaling */
	int load;                 /* enum ch_ckpt_load */
	int keep;                 /* --keep: leave the files */
	long repeat;              /* --repeat N: synchronous writes, 1 to 8 (default 1) */
	long corrupt_rank;        /* --test-corrupt-rank R (test hook), -1 when not given */
};

/** ch_ckpt_opts_init - the defaults listed in struct ch_ckpt_opts. */
void ch_ckpt_opts_init(struct ch_ckpt_opts *o);

/**
 * ch_ckpt_opts_parse - parse the command line (getopt_long; optind reset).
 * @o: [out] the options.
 * Returns 0, or CH_ERR_USAGE (message printed naming the option and value)
 * for an unknown option, a bad value, a missing --dir, neither or both of
 * --size and --params, --bytes-per-param without --params, a zero size,
 * or a stray argument. -h and -V set o->common.help / version and return 0.
 */
int ch_ckpt_opts_parse(int argc, char **argv, struct ch_ckpt_opts *o);

/** ch_ckpt_usage - print --help to @f. */
void ch_ckpt_usage(FILE *f);

/** ch_ckpt_load_name - "auto", "cpu", "gpu" or "none". */
const char *ch_ckpt_load_name(int load);

/**
 * ch_ckpt_shard_bytes - bytes rank @rank of @nranks writes of a checkpoint
 * of @total bytes: total / nranks, the first total % nranks ranks one more,
 * so that the shards add up to @total exactly.
 */
uint64_t ch_ckpt_shard_bytes(uint64_t total, int nranks, int rank);

/**
 * ch_ckpt_file_offset - where file @file of @nfiles starts in a shard of
 * @shard bytes, split like ch_ckpt_shard_bytes(); file @nfiles is the end.
 */
uint64_t ch_ckpt_file_offset(uint64_t shard, int nfiles, int file);

/**
 * ch_ckpt_host_bytes - the host memory the ranks of one node need: each
 * rank holds its whole shard in its buffer (@node_share bytes, the sum of
 * the shards of the node's ranks), and a staged checkpoint on a
 * memory-backed file system (@stage_in_memory: tmpfs, ramfs) holds it again.
 * Returns the bytes, saturating at UINT64_MAX.
 */
uint64_t ch_ckpt_host_bytes(uint64_t node_share, int stage_in_memory);

/**
 * ch_ckpt_writer_points - the writer counts of the aggregate scaling:
 * 1, n/4, n/2 (rounded down), those at least 1 and below @n, without
 * repeats, ascending, then @n itself.
 * @out: [out] at least CH_CKPT_MAX_WRITER_POINTS entries.
 * Returns the number of points (1 when @n is 1).
 */
int ch_ckpt_writer_points(int n, int *out);

/**
 * ch_ckpt_file_name - the path of one of our files:
 * DIR/checkpoint_io.KIND.rRRRRR.fFFF (rank zero-padded to 5, file to 3).
 * @kind: [in] "sync", "stage", "copy" or "wN" (scaling point of N writers).
 * Returns @buf, or NULL when it does not fit in @n bytes.
 */
char *ch_ckpt_file_name(char *buf, size_t n, const char *dir, const char *kind, int rank, int file);

/**
 * ch_ckpt_is_own_name - 1 when @name (a directory entry, no slash) has the
 * form ch_ckpt_file_name() writes, else 0.
 */
int ch_ckpt_is_own_name(const char *name);

#ifdef __cplusplus
}
#endif
#endif
