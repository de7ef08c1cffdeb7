/*
 * ch_loader_cuda.c - the "cuda" copy backend of loader_contention: the
 * batch is copied into pinned host memory, then cudaMemcpyAsync to the
 * device on its own stream, and the feeder waits on an event recorded
 * after the copy. Built only with HAVE_CUDA. With no GPU (or no driver)
 * probe() says why and the tool falls back to the staging backend.
 */
#include "bench/loader/ch_loader_copy.h"
#include "base/ch_common.h"

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One check macro for the CUDA runtime: file:line, the call, the error. */
#define LC_CUDA(call)                                                            \
	do {                                                                     \
		cudaError_t e_ = (call);                                         \
		if (e_ != cudaSuccess) {                                         \
			char h_[64] = "";                                        \
			gethostname(h_, sizeof(h_) - 1);                         \
			ch_error("%s:%d: %s failed on %s: %s", __FILE__, __LINE__, #call, h_, \
				 cudaGetErrorString(e_));                        \
			rc = CH_ERR_RUNTIME;                                     \
			goto out;                                                \
		}                                                                \
	} while (0)

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
		if (why && n)
			snprintf(why, n, "no CUDA device (%s)",
				 e != cudaSuccess ? cudaGetErrorString(e) : "device count is 0");
		return CH_ERR_UNAVAILABLE;
	}
	if (why && n)
		why[0] = '\0';
	return 0;
}

static int cuda_ndevices(void)
{
	int count = 0;
	if (cudaGetDeviceCount(&count) != cudaSuccess)
		return 0;
	return count;
}

static int cuda_pci_bus_id(int dev, char *buf, size_t n)
{
	int rc = 0, i;
	LC_CUDA(cudaDeviceGetPCIBusId(buf, (int)n, dev));
	for (i = 0; buf[i]; i++) /* hwloc prints lower-case hex */
		if (buf[i] >= 'A' && buf[i] <= 'F')
			buf[i] = (char)(buf[i] - 'A' + 'a');
out:
	return rc;
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

static int cuda_open(int dev, size_t bytes, void **ctx)
{
	struct lc_cuda *c = calloc(1, sizeof(*c));
	int rc = 0;

	*ctx = NULL;
	if (!c) {
		ch_error("out of memory");
		return CH_ERR_RUNTIME;
	}
	c->dev = dev;
	c->bytes = bytes;
	c->readback = malloc(bytes ? bytes : 1);
	if (!c->readback) {
		ch_error("out of memory for a %zu-byte read-back buffer", bytes);
		rc = CH_ERR_RUNTIME;
		goto out;
	}
	LC_CUDA(cudaSetDevice(dev));
	LC_CUDA(cudaMallocHost(&c->pinned, bytes));
	LC_CUDA(cudaMalloc(&c->devbuf, bytes));
	LC_CUDA(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking));
	LC_CUDA(cudaEventCreateWithFlags(&c->done, cudaEventDisableTiming));
	memset(c->pinned, 0, bytes);
out:
	if (rc)
		cuda_close(c);
	else
		*ctx = c;
	return rc;
}

static int cuda_copy(void *ctx, const void *src, size_t bytes)
{
	struct lc_cuda *c = ctx;
	int rc = 0;

	if (bytes > c->bytes)
		return CH_ERR_RUNTIME;
	LC_CUDA(cudaSetDevice(c->dev)); /* per thread: the feeder may be a new thread */
	memcpy(c->pinned, src, bytes);
	LC_CUDA(cudaMemcpyAsync(c->devbuf, c->pinned, bytes, cudaMemcpyHostToDevice, c->stream));
	LC_CUDA(cudaEventRecord(c->done, c->stream));
	LC_CUDA(cudaEventSynchronize(c->done));
out:
	return rc;
}

static const void *cuda_staged(void *ctx) { return ((struct lc_cuda *)ctx)->pinned; }

static int cuda_check(void *ctx, size_t bytes)
{
	struct lc_cuda *c = ctx;
	int rc = 0;

	LC_CUDA(cudaSetDevice(c->dev));
	LC_CUDA(cudaMemcpy(c->readback, c->devbuf, bytes, cudaMemcpyDeviceToHost));
	if (memcmp(c->readback, c->pinned, bytes) != 0)
		rc = CH_ERR_CHECK;
out:
	return rc;
}

const struct ch_lc_copy_backend ch_lc_copy_cuda = {
	.name = "cuda",
	.probe = cuda_probe,
	.ndevices = cuda_ndevices,
	.pci_bus_id = cuda_pci_bus_id,
	.open = cuda_open,
	.copy = cuda_copy,
	.staged = cuda_staged,
	.check = cuda_check,
	.close = cuda_close,
};
