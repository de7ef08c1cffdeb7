/*
 * ch_cuda_check.h - the one check of CUDA runtime calls, for the files that
 * are built with CUDA (kernels/cuda, comm/nccl, bench/loader/cuda): on an
 * error it prints file:line, the call, where it failed and the runtime's
 * message, and the calling function returns CH_ERR_RUNTIME (exit code 4).
 * Header only: it needs the CUDA headers, which base/ is built without.
 */
#ifndef CH_CUDA_CHECK_H
#define CH_CUDA_CHECK_H

#include "base/ch_common.h"

#include <cuda_runtime_api.h>
#include <string.h>
#include <unistd.h>

/**
 * ch_cuda_error - print "FILE:LINE: CALL failed on WHERE: MESSAGE" (without
 * " on WHERE" when @where is NULL) through ch_error().
 * @err:   [in] the cudaError_t the call returned (not cudaSuccess).
 * @call:  [in] the call's text; @file, @line: where it is in the source.
 * @where: [in] the host, rank or device it failed on, or NULL.
 * Returns CH_ERR_RUNTIME.
 */
static inline int ch_cuda_error(cudaError_t err, const char *call, const char *file,
				int line, const char *where)
{
	ch_error("%s:%d: %s failed%s%s: %s", file, line, call, where ? " on " : "",
		 where ? where : "", cudaGetErrorString(err));
	return CH_ERR_RUNTIME;
}

/**
 * ch_cuda_host - this host's name, for CH_CUDA_CHECK's @where. Per thread
 * (a static thread-local buffer: valid until the thread's next call).
 */
static inline const char *ch_cuda_host(void)
{
	static __thread char h[64];
	memset(h, 0, sizeof(h));
	gethostname(h, sizeof(h) - 1);
	return h;
}

/*
 * CH_CUDA_CHECK(call, where) - run @call (a CUDA runtime call, or a wrapper
 * returning its cudaError_t); on an error, ch_cuda_error() and return
 * CH_ERR_RUNTIME from the calling function. @where (const char *, may be
 * NULL) is evaluated only on an error.
 */
#define CH_CUDA_CHECK(call, where)                                                      \
	do {                                                                            \
		cudaError_t ch_e_ = (call);                                             \
		if (ch_e_ != cudaSuccess)                                               \
			return ch_cuda_error(ch_e_, #call, __FILE__, __LINE__, (where)); \
	} while (0)

#endif
