/*
 * ch_comm_nccl_kern.h - the NCCL backend's device kernels (fill the inputs
 * and expected values of ch_ar_pattern.h, count wrong elements), as thin
 * extern "C" wrappers. Every function launches on @stream and synchronises
 * it; it returns 0 or the cudaError_t of the first failing call.
 */
#ifndef CH_COMM_NCCL_KERN_H
#define CH_COMM_NCCL_KERN_H

#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

#include "comm/ch_ar_pattern.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * ch_nccl_fill_input - device buffer @buf (@count elements of p.dtype):
 * element i = ch_ar_pattern_value(&p, rank, i + seed), encoded.
 */
int ch_nccl_fill_input(void *buf, struct ch_ar_pattern p, size_t count, int rank,
		       uint64_t seed, cudaStream_t stream);

/**
 * ch_nccl_fill_tiled - device buffer @buf (@count elements of p.dtype):
 * element i = element (i + seed) mod p.period of the table.
 * @table_dev:  [out] device scratch of at least p.period elements; receives
 *              the table.
 * @table_host: [in] p.period encoded elements (ch_ar_expected_table()),
 *              host memory owned by the caller; it may be freed on return.
 * The table is copied with cudaMemcpyAsync on @stream, so the kernel that
 * reads it runs after the copy (@stream is non-blocking: a copy on the
 * legacy default stream would not be ordered before it), and @stream is
 * synchronised before returning, so the host table is no longer read.
 */
int ch_nccl_fill_tiled(void *buf, void *table_dev, const void *table_host,
		       struct ch_ar_pattern p, size_t count, uint64_t seed, cudaStream_t stream);

/**
 * ch_nccl_count_wrong - number of elements (of @elem_bytes: 1, 2, 4 or 8)
 * of device buffers @a and @b whose bits differ.
 * @counter: [in] device scratch of one unsigned long long.
 * @wrong:   [out] the count (host).
 */
int ch_nccl_count_wrong(const void *a, const void *b, size_t count, size_t elem_bytes,
			unsigned long long *counter, unsigned long long *wrong,
			cudaStream_t stream);

#ifdef __cplusplus
}
#endif
#endif
