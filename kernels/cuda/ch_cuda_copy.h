/*
 * ch_cuda_copy.h - host<->device and device<->device copy bandwidth of CUDA
 * devices, by device index (the cuda backend's host_copy and peer_copy,
 * kernels/ch_kernels.h). Each call allocates its own pinned host buffers,
 * device buffers, streams and events and frees them before it returns, so
 * that calls for different devices may run at once from different threads
 * (roofline's all-GPUs-at-once measurement).
 *
 * Copies are timed with CUDA events on the device (cudaEventElapsedTime);
 * one warm-up copy per direction is not counted. Methodology follows
 * NVIDIA's bandwidthTest and nvbandwidth (copy engines, pinned memory).
 */
#ifndef CH_CUDA_COPY_H
#define CH_CUDA_COPY_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/ch_kernels.h"

/**
 * ch_cuda_copy_host - host<->device bandwidth of device @device: @calls
 * copies of @bytes host to device (cudaMemcpyAsync from cudaHostAlloc'd
 * memory), @calls device to host, then @calls pairs of both at once on two
 * streams (each pair starts together: the second stream waits on an event
 * of the first).
 * @out: [out] medians in GB/s (struct ch_copy_bw).
 * @why: [out] the CUDA error on failure.  @n: its size.
 * Returns 0, CH_ERR_USAGE (@bytes or @calls zero) or CH_ERR_RUNTIME.
 */
int ch_cuda_copy_host(int device, uint64_t bytes, int calls, struct ch_copy_bw *out, char *why, size_t n);

/**
 * ch_cuda_copy_peer - device @src to device @dst bandwidth (cudaMemcpyPeerAsync
 * on a stream of @src), @calls copies of @bytes, median GB/s in @gbps.
 * @p2p: 1 with peer access enabled from @src to @dst for the measurement
 *       (CH_ERR_UNAVAILABLE when cudaDeviceCanAccessPeer says no); 0 with
 *       it disabled, so that the copy is staged through host memory. Peer
 *       access is left as it was found.
 * Returns 0, CH_ERR_USAGE, CH_ERR_UNAVAILABLE or CH_ERR_RUNTIME (@why).
 */
int ch_cuda_copy_peer(int src, int dst, int p2p, uint64_t bytes, int calls, double *gbps, char *why, size_t n);

#endif
