#include "kernels/cuda/ch_cuda_copy.h"
#include "base/ch_common.h"

#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One failed CUDA call: its error in @why, CH_ERR_RUNTIME. */
#define TRY(call)                                                                                   \
	do {                                                                                        \
		cudaError_t e_ = (call);                                                            \
		if (e_ != cudaSuccess) {                                                            \
			snprintf(why, n, "%s: %s", #call, cudaGetErrorString(e_));                  \
			rc = CH_ERR_RUNTIME;                                                        \
			goto out;                                                                   \
		}                                                                                   \
	} while (0)

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, int k)
{
	qsort(v, (size_t)k, sizeof(*v), cmp_double);
	return k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
}

/* GB/s of @bytes moved in @ms milliseconds; 0 for a non-positive time */
static double gbps_of(uint64_t bytes, double ms)
{
	return ms > 0 ? (double)bytes / (ms * 1e-3) / 1e9 : 0;
}

struct copy_bufs {
	void *host_src, *host_dst, *dev_src, *dev_dst;
	cudaStream_t s[2];
	cudaEvent_t e0, e1, e2;
};

static void bufs_free(struct copy_bufs *b)
{
	if (b->host_src)
		cudaFreeHost(b->host_src);
	if (b->host_dst)
		cudaFreeHost(b->host_dst);
	cudaFree(b->dev_src);
	cudaFree(b->dev_dst);
	for (int i = 0; i < 2; i++)
		if (b->s[i])
			cudaStreamDestroy(b->s[i]);
	if (b->e0)
		cudaEventDestroy(b->e0);
	if (b->e1)
		cudaEventDestroy(b->e1);
	if (b->e2)
		cudaEventDestroy(b->e2);
}

/* Time one copy (@kind) on stream 0; @ms its duration. */
static cudaError_t time_one(struct copy_bufs *b, enum cudaMemcpyKind kind, uint64_t bytes, float *ms)
{
	void *dst = kind == cudaMemcpyHostToDevice ? b->dev_dst : b->host_dst;
	const void *src = kind == cudaMemcpyHostToDevice ? b->host_src : b->dev_src;
	cudaError_t e;
	if ((e = cudaEventRecord(b->e0, b->s[0])) != cudaSuccess ||
	    (e = cudaMemcpyAsync(dst, src, bytes, kind, b->s[0])) != cudaSuccess ||
	    (e = cudaEventRecord(b->e1, b->s[0])) != cudaSuccess || (e = cudaEventSynchronize(b->e1)) != cudaSuccess)
		return e;
	return cudaEventElapsedTime(ms, b->e0, b->e1);
}

/* Both directions at once: H2D on stream 0, D2H on stream 1 (which waits
 * on the start event of stream 0); @h_ms, @d_ms from the common start to
 * each direction's end. */
static cudaError_t time_both(struct copy_bufs *b, uint64_t bytes, float *h_ms, float *d_ms)
{
	cudaError_t e;
	if ((e = cudaEventRecord(b->e0, b->s[0])) != cudaSuccess || (e = cudaStreamWaitEvent(b->s[1], b->e0, 0)) != cudaSuccess ||
	    (e = cudaMemcpyAsync(b->dev_dst, b->host_src, bytes, cudaMemcpyHostToDevice, b->s[0])) != cudaSuccess ||
	    (e = cudaMemcpyAsync(b->host_dst, b->dev_src, bytes, cudaMemcpyDeviceToHost, b->s[1])) != cudaSuccess ||
	    (e = cudaEventRecord(b->e1, b->s[0])) != cudaSuccess || (e = cudaEventRecord(b->e2, b->s[1])) != cudaSuccess ||
	    (e = cudaEventSynchronize(b->e1)) != cudaSuccess || (e = cudaEventSynchronize(b->e2)) != cudaSuccess ||
	    (e = cudaEventElapsedTime(h_ms, b->e0, b->e1)) != cudaSuccess)
		return e;
	return cudaEventElapsedTime(d_ms, b->e0, b->e2);
}

int ch_cuda_copy_host(int device, uint64_t bytes, int calls, struct ch_copy_bw *out, char *why, size_t n)
{
	struct copy_bufs b;
	double *h = NULL, *d = NULL, *bh = NULL, *bd = NULL, *span = NULL;
	int rc = 0, i;

	memset(out, 0, sizeof(*out));
	memset(&b, 0, sizeof(b));
	if (!bytes || calls <= 0) {
		snprintf(why, n, "copy size and count must be positive");
		return CH_ERR_USAGE;
	}
	h = calloc((size_t)calls, sizeof(double));
	d = calloc((size_t)calls, sizeof(double));
	bh = calloc((size_t)calls, sizeof(double));
	bd = calloc((size_t)calls, sizeof(double));
	span = calloc((size_t)calls, sizeof(double));
	if (!h || !d || !bh || !bd || !span) {
		snprintf(why, n, "out of memory");
		rc = CH_ERR_RUNTIME;
		goto out;
	}
	TRY(cudaSetDevice(device));
	TRY(cudaHostAlloc(&b.host_src, bytes, cudaHostAllocDefault));
	TRY(cudaHostAlloc(&b.host_dst, bytes, cudaHostAllocDefault));
	TRY(cudaMalloc(&b.dev_src, bytes));
	TRY(cudaMalloc(&b.dev_dst, bytes));
	memset(b.host_src, 0x5a, bytes);
	TRY(cudaMemset(b.dev_src, 0xa5, bytes));
	TRY(cudaStreamCreateWithFlags(&b.s[0], cudaStreamNonBlocking));
	TRY(cudaStreamCreateWithFlags(&b.s[1], cudaStreamNonBlocking));
	TRY(cudaEventCreate(&b.e0));
	TRY(cudaEventCreate(&b.e1));
	TRY(cudaEventCreate(&b.e2));
	for (i = -1; i < calls; i++) { /* i = -1: the warm-up, not counted */
		float ms_h = 0, ms_d = 0, ms_bh = 0, ms_bd = 0;
		TRY(time_one(&b, cudaMemcpyHostToDevice, bytes, &ms_h));
		TRY(time_one(&b, cudaMemcpyDeviceToHost, bytes, &ms_d));
		TRY(time_both(&b, bytes, &ms_bh, &ms_bd));
		if (i < 0)
			continue;
		h[i] = gbps_of(bytes, ms_h);
		d[i] = gbps_of(bytes, ms_d);
		bh[i] = gbps_of(bytes, ms_bh);
		bd[i] = gbps_of(bytes, ms_bd);
		span[i] = gbps_of(2 * bytes, ms_bh > ms_bd ? ms_bh : ms_bd);
	}
	out->h2d_gbps = median(h, calls);
	out->d2h_gbps = median(d, calls);
	out->bidir_h2d_gbps = median(bh, calls);
	out->bidir_d2h_gbps = median(bd, calls);
	out->bidir_gbps = median(span, calls);
	out->bytes = bytes;
	out->calls = calls;
out:
	bufs_free(&b);
	free(h);
	free(d);
	free(bh);
	free(bd);
	free(span);
	return rc;
}

/* Peer access from @src to @dst on (@on) or off; @was: whether it was on
 * before (enabling it found it enabled, or disabling it succeeded). */
static cudaError_t set_peer(int src, int dst, int on, int *was)
{
	cudaError_t e;
	if ((e = cudaSetDevice(src)) != cudaSuccess)
		return e;
	e = on ? cudaDeviceEnablePeerAccess(dst, 0) : cudaDeviceDisablePeerAccess(dst);
	if (was)
		*was = on ? e == cudaErrorPeerAccessAlreadyEnabled : e == cudaSuccess;
	if (e == cudaErrorPeerAccessAlreadyEnabled || e == cudaErrorPeerAccessNotEnabled) {
		cudaGetLastError(); /* not an error: the state was already the wanted one */
		e = cudaSuccess;
	}
	return e;
}

int ch_cuda_copy_peer(int src, int dst, int p2p, uint64_t bytes, int calls, double *gbps, char *why, size_t n)
{
	struct copy_bufs b;
	double *g = NULL;
	int rc = 0, i, can = 0, was = 0, changed = 0;

	*gbps = 0;
	memset(&b, 0, sizeof(b));
	if (!bytes || calls <= 0 || src == dst) {
		snprintf(why, n, "copy size and count must be positive and the devices differ");
		return CH_ERR_USAGE;
	}
	if (!(g = calloc((size_t)calls, sizeof(double)))) {
		snprintf(why, n, "out of memory");
		return CH_ERR_RUNTIME;
	}
	TRY(cudaDeviceCanAccessPeer(&can, src, dst));
	if (p2p && !can) {
		snprintf(why, n, "GPU %d cannot access GPU %d as a peer (cudaDeviceCanAccessPeer)", src, dst);
		rc = CH_ERR_UNAVAILABLE;
		goto out;
	}
	if (can) {
		TRY(set_peer(src, dst, p2p, &was));
		changed = 1;
	}
	TRY(cudaSetDevice(dst));
	TRY(cudaMalloc(&b.dev_dst, bytes));
	TRY(cudaSetDevice(src));
	TRY(cudaMalloc(&b.dev_src, bytes));
	TRY(cudaMemset(b.dev_src, 0xa5, bytes));
	TRY(cudaStreamCreateWithFlags(&b.s[0], cudaStreamNonBlocking));
	TRY(cudaEventCreate(&b.e0));
	TRY(cudaEventCreate(&b.e1));
	for (i = -1; i < calls; i++) {
		float ms = 0;
		TRY(cudaEventRecord(b.e0, b.s[0]));
		TRY(cudaMemcpyPeerAsync(b.dev_dst, dst, b.dev_src, src, bytes, b.s[0]));
		TRY(cudaEventRecord(b.e1, b.s[0]));
		TRY(cudaEventSynchronize(b.e1));
		TRY(cudaEventElapsedTime(&ms, b.e0, b.e1));
		if (i >= 0)
			g[i] = gbps_of(bytes, ms);
	}
	*gbps = median(g, calls);
out:
	if (b.dev_dst) {
		cudaSetDevice(dst);
		cudaFree(b.dev_dst);
		b.dev_dst = NULL;
	}
	cudaSetDevice(src);
	bufs_free(&b);
	if (changed) /* as it was found */
		set_peer(src, dst, was, NULL);
	free(g);
	return rc;
}
