/*
 * ch_ckpt_cuda.c - the "cuda" GPU backend of checkpoint_io: pinned host
 * memory (cudaHostAlloc) for the shard, and a GPU load of host-to-device
 * copies on its own stream. Built only with HAVE_CUDA; with no GPU (or no
 * driver) probe() says why and checkpoint_io uses page-aligned memory.
 */
#include "bench/checkpoint/ch_ckpt_mem.h"
#include "base/ch_common.h"
#include "base/ch_cuda_check.h"

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct ck_load {
	int dev;
	void *devbuf;
	size_t bytes;
	cudaStream_t stream;
};

static int ck_probe(char *why, size_t n)
{
	int count = 0;
	cudaError_t e = cudaGetDeviceCount(&count);
	if (e != cudaSuccess || count < 1) {
		ch_cuda_no_device(e, count, why, n);
		cudaGetLastError();
		return CH_ERR_UNAVAILABLE;
	}
	if (why && n)
		why[0] = '\0';
	return 0;
}

static int ck_count(void)
{
	int count = 0;
	return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
}

static int ck_host_alloc(void *ctx, size_t bytes, void **p)
{
	struct ck_load *l = ctx;
	*p = NULL;
	CH_CUDA_CHECK(cudaSetDevice(l->dev), ch_cuda_host());
	CH_CUDA_CHECK(cudaHostAlloc(p, bytes ? bytes : 1, cudaHostAllocDefault), ch_cuda_host());
	return 0;
}

static void ck_host_free(void *ctx, void *p)
{
	(void)ctx;
	if (p)
		cudaFreeHost(p);
}

static void ck_close(void *ctx)
{
	struct ck_load *l = ctx;
	if (!l)
		return;
	cudaSetDevice(l->dev);
	if (l->stream)
		cudaStreamDestroy(l->stream);
	if (l->devbuf)
		cudaFree(l->devbuf);
	free(l);
}

static int load_alloc(struct ck_load *l, size_t bytes)
{
	CH_CUDA_CHECK(cudaSetDevice(l->dev), ch_cuda_host());
	CH_CUDA_CHECK(cudaMalloc(&l->devbuf, bytes ? bytes : 1), ch_cuda_host());
	CH_CUDA_CHECK(cudaStreamCreateWithFlags(&l->stream, cudaStreamNonBlocking), ch_cuda_host());
	return 0;
}

static int ck_open(int dev, size_t bytes, void **ctx, char *why, size_t n)
{
	struct ck_load *l = calloc(1, sizeof(*l));

	*ctx = NULL;
	if (why && n)
		why[0] = '\0';
	if (!l) {
		if (why && n)
			snprintf(why, n, "out of memory");
		return CH_ERR_RUNTIME;
	}
	l->dev = dev;
	l->bytes = bytes;
	if (load_alloc(l, bytes)) {
		ck_close(l);
		return CH_ERR_RUNTIME;
	}
	*ctx = l;
	return 0;
}

static int ck_load_step(void *ctx, const void *src, size_t bytes)
{
	struct ck_load *l = ctx;
	if (bytes > l->bytes)
		bytes = l->bytes;
	CH_CUDA_CHECK(cudaSetDevice(l->dev), ch_cuda_host());
	CH_CUDA_CHECK(cudaMemcpyAsync(l->devbuf, src, bytes, cudaMemcpyHostToDevice, l->stream), ch_cuda_host());
	CH_CUDA_CHECK(cudaStreamSynchronize(l->stream), ch_cuda_host());
	return 0;
}

const struct ch_ckpt_gpu_backend ch_ckpt_gpu_cuda = {
	.name = "cuda",
	.probe = ck_probe,
	.count = ck_count,
	.open = ck_open,
	.close = ck_close,
	.host_alloc = ck_host_alloc,
	.host_free = ck_host_free,
	.load_step = ck_load_step,
};
