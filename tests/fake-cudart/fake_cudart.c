/*
 * fake_cudart.c - an LD_PRELOAD stand-in for two CUDA runtime calls, for
 * tests on machines without a GPU: the NVIDIA driver of an older CUDA than
 * the build's runtime (an R535-R570 driver under a CUDA 13 build).
 * cudaGetDeviceCount() fails with cudaErrorInsufficientDriver (35), as the
 * real runtime does there, and cudaDriverGetVersion() reports
 * FAKE_CUDA_DRIVER_VERSION (default 12040: CUDA 12.4). Every other call
 * goes to the real libcudart. Built by `make test` as
 * $(B)/tests/libfakecudart.so; used by tests/cli/cuda_preflight.sh.
 */
#include <stdlib.h>

int cudaGetDeviceCount(int *count)
{
	*count = 0;
	return 35; /* cudaErrorInsufficientDriver */
}

int cudaDriverGetVersion(int *version)
{
	const char *v = getenv("FAKE_CUDA_DRIVER_VERSION");
	*version = v && *v ? atoi(v) : 12040;
	return 0;
}
