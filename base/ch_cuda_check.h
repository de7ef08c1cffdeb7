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
#include <stdio.h>
#include <stdlib.h>
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

/**
 * ch_cuda_no_device - why cudaGetDeviceCount() found no usable device, for
 * an "unavailable" reason: "no CUDA device: MESSAGE", and, when the driver
 * is older than this build's CUDA runtime (cudaErrorInsufficientDriver,
 * e.g. a CUDA 13 build on an R535-R570 driver of CUDA 12.x), the two
 * versions and the fix: build with a toolkit of the driver's CUDA (the
 * code needs no newer API), or put the toolkit's forward-compatibility
 * libcuda.so.1 (cuda-compat package, CUDA_HOME/compat) first on
 * LD_LIBRARY_PATH. When no driver is loaded at all it says that instead.
 * @e:     [in] what cudaGetDeviceCount() returned.
 * @count: [in] the count it gave (used when @e is cudaSuccess).
 * @why:   [out] the reason, @n bytes.
 * The driver's CUDA version is cudaDriverGetVersion()'s; the runtime's is
 * CUDART_VERSION, the one this file was compiled against.
 */
static inline void ch_cuda_no_device(cudaError_t e, int count, char *why, size_t n)
{
	int drv = 0, rt = CUDART_VERSION;

	if (!why || !n)
		return;
	if (e == cudaSuccess) {
		const char *cvd = getenv("CUDA_VISIBLE_DEVICES");
		snprintf(why, n, "no CUDA device (cudaGetDeviceCount found %d%s%s)", count,
			 cvd ? "; CUDA_VISIBLE_DEVICES=" : "", cvd ? cvd : "");
		return;
	}
	if (cudaDriverGetVersion(&drv) != cudaSuccess)
		drv = 0;
	cudaGetLastError();
	if (e == cudaErrorInsufficientDriver && drv > 0 && drv < rt)
		snprintf(why, n, "no CUDA device: %s: the NVIDIA driver supports CUDA %d.%d, this build's runtime is CUDA %d.%d "
			 "(libcudart.so.%d). Fix: build with a CUDA %d.x toolkit (make CUDA_HOME=/usr/local/cuda-%d.%d; "
			 "clusterhealth needs no CUDA %d API), or put the toolkit's forward-compatibility libcuda.so.1 "
			 "(the cuda-compat-%d-%d package, CUDA_HOME/compat) first on LD_LIBRARY_PATH",
			 cudaGetErrorString(e), drv / 1000, drv % 1000 / 10, rt / 1000, rt % 1000 / 10, rt / 1000,
			 drv / 1000, drv / 1000, drv % 1000 / 10, rt / 1000, rt / 1000, rt % 1000 / 10);
	else if (e == cudaErrorInsufficientDriver && drv == 0)
		snprintf(why, n, "no CUDA device: %s (no NVIDIA driver is loaded: libcuda.so.1 not found)",
			 cudaGetErrorString(e));
	else
		snprintf(why, n, "no CUDA device: %s", cudaGetErrorString(e));
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
