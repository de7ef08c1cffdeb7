/* ch_comm_nccl_kern.cu - kernels of the NCCL backend (see ch_comm_nccl_kern.h). */
#include "comm/nccl/ch_comm_nccl_kern.h"

static unsigned grid_for(size_t count)
{
	size_t blocks = (count + 255) / 256;
	if (blocks > 4096)
		blocks = 4096; /* grid-stride loops cover the rest */
	return blocks ? (unsigned)blocks : 1u;
}

__global__ void ch_fill_input_kernel(void *buf, struct ch_ar_pattern p, size_t count,
				     int rank, uint64_t seed)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	size_t stride = (size_t)gridDim.x * blockDim.x;
	for (; i < count; i += stride)
		ch_ar_encode(p.dtype, ch_ar_pattern_value(&p, rank, (uint64_t)i + seed), buf, i);
}

__global__ void ch_fill_tiled_kernel(char *buf, const char *table, uint64_t period,
				     size_t es, size_t count, uint64_t seed)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	size_t stride = (size_t)gridDim.x * blockDim.x;
	for (; i < count; i += stride) {
		uint64_t u = ((uint64_t)i + seed) % period;
		for (size_t b = 0; b < es; b++)
			buf[i * es + b] = table[u * es + b];
	}
}

template <typename T>
__global__ void ch_count_wrong_kernel(const T *a, const T *b, size_t count,
				      unsigned long long *out)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	size_t stride = (size_t)gridDim.x * blockDim.x;
	unsigned long long n = 0;
	for (; i < count; i += stride)
		n += a[i] != b[i];
	if (n)
		atomicAdd(out, n);
}

extern "C" int ch_nccl_fill_input(void *buf, struct ch_ar_pattern p, size_t count, int rank,
				  uint64_t seed, cudaStream_t stream)
{
	if (count)
		ch_fill_input_kernel<<<grid_for(count), 256, 0, stream>>>(buf, p, count, rank, seed);
	cudaError_t e = cudaGetLastError();
	if (e != cudaSuccess)
		return (int)e;
	return (int)cudaStreamSynchronize(stream);
}

extern "C" int ch_nccl_fill_tiled(void *buf, void *table_dev, const void *table_host,
				  struct ch_ar_pattern p, size_t count, uint64_t seed,
				  cudaStream_t stream)
{
	size_t es = ch_dtype_size((enum ch_dtype)p.dtype);
	/* the table goes to the device on @stream, ahead of the kernel that
	 * reads it: @stream is non-blocking, so a copy on the legacy default
	 * stream would not be ordered before the kernel */
	cudaError_t e = cudaMemcpyAsync(table_dev, table_host, (size_t)p.period * es,
					cudaMemcpyHostToDevice, stream);
	if (e == cudaSuccess && count) {
		ch_fill_tiled_kernel<<<grid_for(count), 256, 0, stream>>>(
			(char *)buf, (const char *)table_dev, p.period, es, count, seed);
		e = cudaGetLastError();
	}
	/* also on failure: the host table must not be read once we return */
	cudaError_t s = cudaStreamSynchronize(stream);
	return (int)(e != cudaSuccess ? e : s);
}

extern "C" int ch_nccl_count_wrong(const void *a, const void *b, size_t count, size_t elem_bytes,
				   unsigned long long *counter, unsigned long long *wrong,
				   cudaStream_t stream)
{
	cudaError_t e = cudaMemsetAsync(counter, 0, sizeof(*counter), stream);
	unsigned g = grid_for(count);
	if (e != cudaSuccess)
		return (int)e;
	if (count) {
		switch (elem_bytes) {
		case 1: ch_count_wrong_kernel<<<g, 256, 0, stream>>>((const unsigned char *)a, (const unsigned char *)b, count, counter); break;
		case 2: ch_count_wrong_kernel<<<g, 256, 0, stream>>>((const unsigned short *)a, (const unsigned short *)b, count, counter); break;
		case 4: ch_count_wrong_kernel<<<g, 256, 0, stream>>>((const unsigned int *)a, (const unsigned int *)b, count, counter); break;
		case 8: ch_count_wrong_kernel<<<g, 256, 0, stream>>>((const unsigned long long *)a, (const unsigned long long *)b, count, counter); break;
		default: return (int)cudaErrorInvalidValue;
		}
	}
	e = cudaGetLastError();
	if (e != cudaSuccess)
		return (int)e;
	e = cudaMemcpyAsync(wrong, counter, sizeof(*wrong), cudaMemcpyDeviceToHost, stream);
	if (e != cudaSuccess)
		return (int)e;
	return (int)cudaStreamSynchronize(stream);
}
