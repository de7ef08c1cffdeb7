/*
 * ch_ckpt_mem.h - checkpoint_io's host buffer and the loads that run while
 * a staged copy drains.
 *
 * The buffer a shard is written from stands for the host copy a training
 * framework makes of the model state: pinned memory (cudaHostAlloc) when
 * CUDA is built and a GPU is present, else page-aligned host memory; which
 * one, and why, goes into the result.
 *
 * GPU work goes through a table of function pointers (the "cuda" backend in
 * cuda/, built only with HAVE_CUDA); this header is free of CUDA types.
 */
#ifndef CH_CKPT_MEM_H
#define CH_CKPT_MEM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ch_ckpt_gpu_backend {
	const char *name; /* "cuda" */
	/**
	 * probe - is a GPU usable? @why: [out] the reason when not. @n: size.
	 * Returns 0 or CH_ERR_UNAVAILABLE.
	 */
	int (*probe)(char *why, size_t n);
	/** count - GPUs visible (>= 1 after a good probe). */
	int (*count)(void);
	/**
	 * open - GPU @index (0-based) for the load: a device buffer of
	 * @load_bytes and a stream. @ctx: [out], freed by close().
	 * @why: [out] the reason of a failure not printed already, or ""
	 * (a failing CUDA call prints its own line); @n: size of @why.
	 * Returns 0 or CH_ERR_RUNTIME.
	 */
	int (*open)(int index, size_t load_bytes, void **ctx, char *why, size_t n);
	/** close - free @ctx from open() (NULL accepted); host_free() first. */
	void (*close)(void *ctx);
	/**
	 * host_alloc - @bytes of pinned host memory (cudaHostAlloc) for the
	 * GPU of @ctx into @p. Returns 0 or CH_ERR_RUNTIME (message printed).
	 */
	int (*host_alloc)(void *ctx, size_t bytes, void **p);
	/** host_free - release what host_alloc() returned (NULL accepted). */
	void (*host_free)(void *ctx, void *p);
	/**
	 * load_step - one unit of GPU load: copy @bytes (at most open()'s
	 * @load_bytes) of pinned @src to the device and wait for it (what a
	 * training step's input copy does). Returns 0 or CH_ERR_RUNTIME.
	 */
	int (*load_step)(void *ctx, const void *src, size_t bytes);
};

#ifdef HAVE_CUDA
extern const struct ch_ckpt_gpu_backend ch_ckpt_gpu_cuda;
#endif

/**
 * ch_ckpt_gpu_find - the GPU backend when one is built in and its probe
 * succeeds, else NULL with the reason in @why (@n bytes).
 */
const struct ch_ckpt_gpu_backend *ch_ckpt_gpu_find(char *why, size_t n);

struct ch_ckpt_buf {
	unsigned char *p;
	size_t bytes;
	int pinned;                            /* 1: from gpu->host_alloc() */
	int dev;                               /* GPU it is pinned for, -1 none */
	const struct ch_ckpt_gpu_backend *gpu; /* NULL without a GPU */
	void *gpu_ctx;                         /* gpu->open()'s handle, NULL without */
	char kind[40];                         /* "cuda_pinned" or "page_aligned" */
	char why[160];                         /* why not pinned ("" when pinned) */
};

/**
 * ch_ckpt_buf_alloc - the host buffer of @bytes (> 0): when @gpu is not
 * NULL, open GPU @local_rank % count (with a load buffer of @load_bytes,
 * kept in gpu_ctx for the GPU load) and pin the buffer for it; without a
 * GPU, or when that open fails, page-aligned memory (posix_memalign to the
 * page size) with the reason in why (@why_not_pinned, or open()'s).
 * Touches every page (so that the first timed write does not fault them in).
 * Returns 0, or CH_ERR_RUNTIME (message printed: out of memory).
 */
int ch_ckpt_buf_alloc(struct ch_ckpt_buf *b, size_t bytes, int local_rank,
		      const struct ch_ckpt_gpu_backend *gpu, size_t load_bytes, const char *why_not_pinned);

/** ch_ckpt_buf_release - free the buffer and close the GPU (a zeroed struct is accepted). */
void ch_ckpt_buf_release(struct ch_ckpt_buf *b);

/**
 * ch_ckpt_fill - fill @n bytes with a pseudo-random pattern of @seed
 * (xorshift64*, Vigna 2016), so that no file system compresses or
 * deduplicates the checkpoint and two ranks never write the same bytes.
 */
void ch_ckpt_fill(unsigned char *p, size_t n, uint64_t seed);

/**
 * ch_ckpt_cpu_unit - one unit of CPU load: a dependent chain of 2^18
 * multiply-adds on doubles (a few hundred microseconds on a current core).
 * @x: [in] the chain's start. Returns its end (use it, or the compiler may
 * drop the work).
 */
double ch_ckpt_cpu_unit(double x);

#ifdef __cplusplus
}
#endif
#endif
