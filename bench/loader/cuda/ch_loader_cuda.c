/*
 * ch_loader_cuda.c - the "cuda" copy backend of loader_contention: the
 * batch is copied into pinned host memory, then cudaMemcpyAsync to the
 * device on its own stream, and the feeder waits on an event recorded
 * after the copy. Built only with HAVE_CUDA. With no GPU (or no driver)
 * probe() says why and the tool falls back to the staging backend.
 */
#include "bench/loader/ch_loader_copy.h"
#include "base/ch_common.h"
#include "base/ch_cuda_check.h"

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct lc_cuda {
	int dev;
	size_t bytes;
	void *pinned;   /* cudaMallocHost */
	void *devbuf;   /* cudaMalloc */
	void *readback; /* plain host memory for check() */
	cudaStream_t stream;
	cudaEvent_t done;
};

static int cuda_probe(char *why, size_t n)
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

static int cuda_count(void)
{
	int count = 0;
	if (cudaGetDeviceCount(&count) != cudaSuccess)
		return 0;
	return count;
}

static int cuda_pci_bus_id(int dev, char *buf, size_t n)
{
	int i;
	CH_CUDA_CHECK(cudaDeviceGetPCIBusId(buf, (int)n, dev), ch_cuda_host());
	for (i = 0; buf[i]; i++) /* hwloc prints lower-case hex */
		if (buf[i] >= 'A' && buf[i] <= 'F')
			buf[i] = (char)(buf[i] - 'A' + 'a');
	return 0;
}

static void cuda_close(void *ctx)
{
	struct lc_cuda *c = ctx;
	if (!c)
		return;
	cudaSetDevice(c->dev);
	if (c->done)
		cudaEventDestroy(c->done);
	if (c->stream)
		cudaStreamDestroy(c->stream);
	if (c->devbuf)
		cudaFree(c->devbuf);
	if (c->pinned)
		cudaFreeHost(c->pinned);
	free(c->readback);
	free(c);
}

/* The CUDA side of cuda_open(): device, buffers, stream, event. */
static int cuda_open_device(struct lc_cuda *c, int dev, size_t bytes)
{
	CH_CUDA_CHECK(cudaSetDevice(dev), ch_cuda_host());
	CH_CUDA_CHECK(cudaMallocHost(&c->pinned, bytes), ch_cuda_host());
	CH_CUDA_CHECK(cudaMalloc(&c->devbuf, bytes), ch_cuda_host());
	CH_CUDA_CHECK(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking), ch_cuda_host());
	CH_CUDA_CHECK(cudaEventCreateWithFlags(&c->done, cudaEventDisableTiming), ch_cuda_host());
	memset(c->pinned, 0, bytes);
	return 0;
}

static int cuda_open(int index, size_t bytes, void **ctx, char *why, size_t n)
{
	struct lc_cuda *c = calloc(1, sizeof(*c));
	int rc = 0;

	*ctx = NULL;
	if (!c) {
		snprintf(why, n, "out of memory");
		return CH_ERR_RUNTIME;
	}
	c->dev = index;
	c->bytes = bytes;
	c->readback = malloc(bytes ? bytes : 1);
	if (!c->readback) {
		snprintf(why, n, "out of memory for a %zu-byte read-back buffer", bytes);
		rc = CH_ERR_RUNTIME;
	} else {
		rc = cuda_open_device(c, index, bytes); /* a failing call prints its own line */
	}
	if (rc)
		cuda_close(c);
	else
		*ctx = c;
	return rc;
}

static int cuda_copy(void *ctx, const void *src, size_t bytes)
{
	struct lc_cuda *c = ctx;

	if (bytes > c->bytes)
		return CH_ERR_RUNTIME;
	CH_CUDA_CHECK(cudaSetDevice(c->dev), ch_cuda_host()); /* per thread: the feeder may be a new thread */
	memcpy(c->pinned, src, bytes);
	CH_CUDA_CHECK(cudaMemcpyAsync(c->devbuf, c->pinned, bytes, cudaMemcpyHostToDevice, c->stream), ch_cuda_host());
	CH_CUDA_CHECK(cudaEventRecord(c->done, c->stream), ch_cuda_host());
	CH_CUDA_CHECK(cudaEventSynchronize(c->done), ch_cuda_host());
	return 0;
}

static const void *cuda_staged(void *ctx) { return ((struct lc_cuda *)ctx)->pinned; }

static int cuda_check(void *ctx, size_t bytes)
{
	struct lc_cuda *c = ctx;

	CH_CUDA_CHECK(cudaSetDevice(c->dev), ch_cuda_host());
	CH_CUDA_CHECK(cudaMemcpy(c->readback, c->devbuf, bytes, cudaMemcpyDeviceToHost), ch_cuda_host());
	return memcmp(c->readback, c->pinned, bytes) != 0 ? CH_ERR_CHECK : 0;
}

const struct ch_lc_copy_backend ch_lc_copy_cuda = {
	.name = "cuda",
	.probe = cuda_probe,
	.count = cuda_count,
	.open = cuda_open,
	.close = cuda_close,
	.pci_bus_id = cuda_pci_bus_id,
	.copy = cuda_copy,
	.staged = cuda_staged,
	.check = cuda_check,
};
