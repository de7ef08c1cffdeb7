/*
 * ch_cuda_ops.cu - roofline's CUDA kernels and their extern "C" wrappers.
 * Kernels only: device state, timing and cuBLASLt live in ch_cuda.c.
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include "kernels/ch_kernel_body.h"
#include "kernels/ch_patterns.h"
#include "kernels/cuda/ch_cuda_ops.h"

namespace {

int g_sms = 80;
const int kThreads = 256;

unsigned grid_for(uint64_t n)
{
	return (unsigned)ch_kb_blocks(n, kThreads, g_sms);
}

/* ---- conversions between double and the storage types */
template <typename T> __device__ __forceinline__ T from_double(double v);
template <> __device__ __forceinline__ double from_double<double>(double v) { return v; }
template <> __device__ __forceinline__ float from_double<float>(double v) { return (float)v; }
template <> __device__ __forceinline__ __nv_bfloat16 from_double<__nv_bfloat16>(double v) { return __double2bfloat16(v); }
template <> __device__ __forceinline__ __half from_double<__half>(double v) { return __double2half(v); }
template <> __device__ __forceinline__ __nv_fp8_e4m3 from_double<__nv_fp8_e4m3>(double v) { return __nv_fp8_e4m3((float)v); }

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ void store_float(float *p, float v) { *p = v; }
__device__ __forceinline__ void store_float(__nv_bfloat16 *p, float v) { *p = __float2bfloat16_rn(v); }

template <typename T>
__global__ void fill_k(T *a, T *b, T *c, uint64_t n, int with_c)
{
	uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x, s = (uint64_t)gridDim.x * blockDim.x;
	for (; i < n; i += s) {
		a[i] = from_double<T>(ch_pat_a(i));
		b[i] = from_double<T>(ch_pat_b(i));
		if (with_c)
			c[i] = from_double<T>(ch_pat_c(i));
	}
}

/*
 * BabelStream's kernels, vectorised: each thread moves 16 bytes per load
 * (float4, double2), so that enough bytes are in flight per SM to reach
 * HBM bandwidth (one 4-byte load per iteration left fp32 latency-bound);
 * the last n mod W elements are done one by one, and arrays that are not
 * 16-byte aligned (cudaMalloc'd ones are) one by one throughout. An
 * operation reads only the arrays its formula names (copy: a, mul: b, add
 * and triad: a and b), so the traffic is BabelStream's. The per-thread
 * bodies are kernels/ch_kernel_body.h's, which the unit tests run on the host.
 */
__device__ __forceinline__ uint64_t thread_id(void) { return (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; }
__device__ __forceinline__ uint64_t thread_count(void) { return (uint64_t)gridDim.x * blockDim.x; }

template <int OP>
__global__ void stream_f32_k(const float *__restrict__ a, const float *__restrict__ b, float *__restrict__ c,
			     uint64_t n, float s, unsigned w)
{
	ch_kb_stream_f32(OP, a, b, c, n, s, w, thread_id(), thread_count());
}

template <int OP>
__global__ void stream_f64_k(const double *__restrict__ a, const double *__restrict__ b, double *__restrict__ c,
			     uint64_t n, double s, unsigned w)
{
	ch_kb_stream_f64(OP, a, b, c, n, s, w, thread_id(), thread_count());
}

__device__ __forceinline__ double dot_part(const float *a, const float *b, uint64_t n, unsigned w)
{
	return ch_kb_dot_f32(a, b, n, w, thread_id(), thread_count());
}
__device__ __forceinline__ double dot_part(const double *a, const double *b, uint64_t n, unsigned w)
{
	return ch_kb_dot_f64(a, b, n, w, thread_id(), thread_count());
}

/* products in T, sum in fp64: per thread, then per block, one atomic per block */
template <typename T>
__global__ void dot_k(const T *__restrict__ a, const T *__restrict__ b, uint64_t n, unsigned w, double *out)
{
	__shared__ double part[kThreads];
	part[threadIdx.x] = dot_part(a, b, n, w);
	__syncthreads();
	for (int h = kThreads / 2; h > 0; h /= 2) {
		if ((int)threadIdx.x < h)
			part[threadIdx.x] += part[threadIdx.x + h];
		__syncthreads();
	}
	if (threadIdx.x == 0)
		atomicAdd(out, part[0]);
}

/* Four independent chains per thread so that FMA latency is hidden even
 * at moderate occupancy (ch_kernel_body.h). */
__global__ void ladder_f32_k(const float *__restrict__ x, float *__restrict__ y, uint64_t n, int k, float alpha, float beta)
{
	ch_kb_ladder_f32(x, y, n, k, alpha, beta, thread_id(), thread_count());
}

__global__ void ladder_f64_k(const double *__restrict__ x, double *__restrict__ y, uint64_t n, int k, double alpha,
			     double beta)
{
	ch_kb_ladder_f64(x, y, n, k, alpha, beta, thread_id(), thread_count());
}

/* bf16: pairs of elements through __hfma2 (native bf16 FMA, sm_80+) */
__global__ void ladder_bf16_k(const __nv_bfloat162 *__restrict__ x, __nv_bfloat162 *__restrict__ y,
			      uint64_t n2, int k, __nv_bfloat162 alpha, __nv_bfloat162 beta)
{
	uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x, s = (uint64_t)gridDim.x * blockDim.x;
	for (; i + 3 * s < n2; i += 4 * s) {
		__nv_bfloat162 r0 = x[i], r1 = x[i + s], r2 = x[i + 2 * s], r3 = x[i + 3 * s];
		for (int q = 0; q < k; q++) {
			r0 = __hfma2(r0, alpha, beta);
			r1 = __hfma2(r1, alpha, beta);
			r2 = __hfma2(r2, alpha, beta);
			r3 = __hfma2(r3, alpha, beta);
		}
		y[i] = r0;
		y[i + s] = r1;
		y[i + 2 * s] = r2;
		y[i + 3 * s] = r3;
	}
	for (; i < n2; i += s) {
		__nv_bfloat162 r = x[i];
		for (int q = 0; q < k; q++)
			r = __hfma2(r, alpha, beta);
		y[i] = r;
	}
}

template <typename T>
__global__ void gelu_k(const T *__restrict__ x, T *__restrict__ y, uint64_t n)
{
	uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x, s = (uint64_t)gridDim.x * blockDim.x;
	for (; i < n; i += s)
		store_float(&y[i], ch_gelu_f32(to_float(x[i])));
}

__device__ float block_sum(float v, float *shared)
{
	for (int o = 16; o > 0; o /= 2)
		v += __shfl_down_sync(0xffffffffu, v, o);
	if ((threadIdx.x & 31) == 0)
		shared[threadIdx.x / 32] = v;
	__syncthreads();
	if (threadIdx.x < 32) {
		v = threadIdx.x < blockDim.x / 32 ? shared[threadIdx.x] : 0.0f;
		for (int o = 16; o > 0; o /= 2)
			v += __shfl_down_sync(0xffffffffu, v, o);
		if (threadIdx.x == 0)
			shared[0] = v;
	}
	__syncthreads();
	v = shared[0];
	__syncthreads();
	return v;
}

/* one block per row; two passes over the row (it stays in L1/L2) */
template <typename T>
__global__ void layernorm_k(const T *__restrict__ x, T *__restrict__ y, uint64_t cols,
			    const float *__restrict__ gamma, const float *__restrict__ beta, float eps)
{
	__shared__ float shared[32];
	const T *xr = x + (uint64_t)blockIdx.x * cols;
	T *yr = y + (uint64_t)blockIdx.x * cols;
	float sum = 0, var = 0, mean, rstd;
	for (uint64_t j = threadIdx.x; j < cols; j += blockDim.x)
		sum += to_float(xr[j]);
	mean = block_sum(sum, shared) / (float)cols;
	for (uint64_t j = threadIdx.x; j < cols; j += blockDim.x) {
		float d = to_float(xr[j]) - mean;
		var += d * d;
	}
	var = block_sum(var, shared);
	rstd = 1.0f / sqrtf(var / (float)cols + eps);
	for (uint64_t j = threadIdx.x; j < cols; j += blockDim.x)
		store_float(&yr[j], (to_float(xr[j]) - mean) * rstd * gamma[j] + beta[j]);
}

__global__ void ln_weights_k(float *gamma, float *beta, uint64_t cols)
{
	uint64_t j = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x, s = (uint64_t)gridDim.x * blockDim.x;
	for (; j < cols; j += s) {
		gamma[j] = (float)ch_pat_gamma(j);
		beta[j] = (float)ch_pat_beta(j);
	}
}

template <typename T>
__global__ void fill_gemm_k(T *p, uint64_t count, uint64_t seed, int digits)
{
	uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x, s = (uint64_t)gridDim.x * blockDim.x;
	for (; i < count; i += s)
		p[i] = from_double<T>(ch_gemm_value(seed, i, digits));
}

template <typename T>
__global__ void corrupt_k(T *p, uint64_t i, double add)
{
	double v = (double)(float)p[i];
	p[i] = from_double<T>(v + add + fabs(v));
}

template <>
__global__ void corrupt_k<double>(double *p, uint64_t i, double add)
{
	p[i] = p[i] + add + fabs(p[i]);
}

int last_error(void)
{
	return (int)cudaGetLastError();
}

} // namespace

extern "C" {

void ch_cu_set_sms(int sms)
{
	if (sms > 0)
		g_sms = sms;
}

int ch_cu_fill(enum ch_dtype dt, void *a, void *b, void *c, uint64_t n, int with_c, void *stream)
{
	cudaStream_t st = (cudaStream_t)stream;
	switch (dt) {
	case CH_FP64:
		fill_k<double><<<grid_for(n), kThreads, 0, st>>>((double *)a, (double *)b, (double *)c, n, with_c);
		break;
	case CH_FP32:
		fill_k<float><<<grid_for(n), kThreads, 0, st>>>((float *)a, (float *)b, (float *)c, n, with_c);
		break;
	case CH_BF16:
		fill_k<__nv_bfloat16><<<grid_for(n), kThreads, 0, st>>>((__nv_bfloat16 *)a, (__nv_bfloat16 *)b,
									(__nv_bfloat16 *)c, n, with_c);
		break;
	default:
		return (int)cudaErrorInvalidValue;
	}
	return last_error();
}

int ch_cu_stream(enum ch_kernel_id op, enum ch_dtype dt, const void *a, const void *b, void *c,
		 uint64_t n, double scalar, double *dot_dev, void *stream)
{
	cudaStream_t st = (cudaStream_t)stream;
	const void *ra = ch_kb_reads_a(op) ? a : NULL, *rb = ch_kb_reads_b(op) ? b : NULL;
	const void *wc = op == CH_K_DOT ? NULL : c;

	if (dt == CH_FP64) {
		unsigned w = ch_kb_width(2, ra, rb, wc), g = grid_for(n / w + 1);
		const double *a_ = (const double *)a, *b_ = (const double *)b;
		double *c_ = (double *)c;
		switch (op) {
		case CH_K_COPY: stream_f64_k<CH_K_COPY><<<g, kThreads, 0, st>>>(a_, b_, c_, n, scalar, w); break;
		case CH_K_MUL: stream_f64_k<CH_K_MUL><<<g, kThreads, 0, st>>>(a_, b_, c_, n, scalar, w); break;
		case CH_K_ADD: stream_f64_k<CH_K_ADD><<<g, kThreads, 0, st>>>(a_, b_, c_, n, scalar, w); break;
		case CH_K_TRIAD: stream_f64_k<CH_K_TRIAD><<<g, kThreads, 0, st>>>(a_, b_, c_, n, scalar, w); break;
		case CH_K_DOT: dot_k<double><<<g, kThreads, 0, st>>>(a_, b_, n, w, dot_dev); break;
		default: return (int)cudaErrorInvalidValue;
		}
	} else if (dt == CH_FP32) {
		unsigned w = ch_kb_width(4, ra, rb, wc), g = grid_for(n / w + 1);
		const float *a_ = (const float *)a, *b_ = (const float *)b;
		float *c_ = (float *)c, s_ = (float)scalar;
		switch (op) {
		case CH_K_COPY: stream_f32_k<CH_K_COPY><<<g, kThreads, 0, st>>>(a_, b_, c_, n, s_, w); break;
		case CH_K_MUL: stream_f32_k<CH_K_MUL><<<g, kThreads, 0, st>>>(a_, b_, c_, n, s_, w); break;
		case CH_K_ADD: stream_f32_k<CH_K_ADD><<<g, kThreads, 0, st>>>(a_, b_, c_, n, s_, w); break;
		case CH_K_TRIAD: stream_f32_k<CH_K_TRIAD><<<g, kThreads, 0, st>>>(a_, b_, c_, n, s_, w); break;
		case CH_K_DOT: dot_k<float><<<g, kThreads, 0, st>>>(a_, b_, n, w, dot_dev); break;
		default: return (int)cudaErrorInvalidValue;
		}
	} else {
		return (int)cudaErrorInvalidValue;
	}
	return last_error();
}

int ch_cu_ladder(enum ch_dtype dt, const void *x, void *y, uint64_t n, int k,
		 double alpha, double beta, void *stream)
{
	cudaStream_t st = (cudaStream_t)stream;
	switch (dt) {
	case CH_FP64:
		ladder_f64_k<<<grid_for(n / 4 + 1), kThreads, 0, st>>>((const double *)x, (double *)y, n, k, alpha, beta);
		break;
	case CH_FP32:
		ladder_f32_k<<<grid_for(n / 4 + 1), kThreads, 0, st>>>((const float *)x, (float *)y, n, k,
								       (float)alpha, (float)beta);
		break;
	case CH_BF16: {
		__nv_bfloat162 a2 = __floats2bfloat162_rn((float)alpha, (float)alpha);
		__nv_bfloat162 b2 = __floats2bfloat162_rn((float)beta, (float)beta);
		if (n % 2)
			return (int)cudaErrorInvalidValue;
		ladder_bf16_k<<<grid_for(n / 8 + 1), kThreads, 0, st>>>((const __nv_bfloat162 *)x, (__nv_bfloat162 *)y,
									  n / 2, k, a2, b2);
		break;
	}
	default:
		return (int)cudaErrorInvalidValue;
	}
	return last_error();
}

int ch_cu_gelu(enum ch_dtype dt, const void *x, void *y, uint64_t n, void *stream)
{
	cudaStream_t st = (cudaStream_t)stream;
	if (dt == CH_FP32)
		gelu_k<float><<<grid_for(n), kThreads, 0, st>>>((const float *)x, (float *)y, n);
	else if (dt == CH_BF16)
		gelu_k<__nv_bfloat16><<<grid_for(n), kThreads, 0, st>>>((const __nv_bfloat16 *)x, (__nv_bfloat16 *)y, n);
	else
		return (int)cudaErrorInvalidValue;
	return last_error();
}

int ch_cu_layernorm(enum ch_dtype dt, const void *x, void *y, uint64_t rows, uint64_t cols,
		    const float *gamma, const float *beta, float eps, void *stream)
{
	cudaStream_t st = (cudaStream_t)stream;
	if (rows == 0 || rows > 0x7fffffffULL)
		return (int)cudaErrorInvalidValue;
	if (dt == CH_FP32)
		layernorm_k<float><<<(unsigned)rows, kThreads, 0, st>>>((const float *)x, (float *)y, cols, gamma, beta, eps);
	else if (dt == CH_BF16)
		layernorm_k<__nv_bfloat16><<<(unsigned)rows, kThreads, 0, st>>>((const __nv_bfloat16 *)x,
										(__nv_bfloat16 *)y, cols, gamma, beta, eps);
	else
		return (int)cudaErrorInvalidValue;
	return last_error();
}

int ch_cu_fill_ln_weights(float *gamma, float *beta, uint64_t cols, void *stream)
{
	ln_weights_k<<<grid_for(cols), kThreads, 0, (cudaStream_t)stream>>>(gamma, beta, cols);
	return last_error();
}

int ch_cu_fill_gemm(enum ch_dtype dt, void *p, uint64_t count, uint64_t seed, void *stream)
{
	cudaStream_t st = (cudaStream_t)stream;
	int digits = ch_gemm_input_digits(dt);
	switch (dt) {
	case CH_FP64: fill_gemm_k<double><<<grid_for(count), kThreads, 0, st>>>((double *)p, count, seed, digits); break;
	case CH_FP32:
	case CH_TF32: fill_gemm_k<float><<<grid_for(count), kThreads, 0, st>>>((float *)p, count, seed, digits); break;
	case CH_BF16: fill_gemm_k<__nv_bfloat16><<<grid_for(count), kThreads, 0, st>>>((__nv_bfloat16 *)p, count, seed, digits); break;
	case CH_FP16: fill_gemm_k<__half><<<grid_for(count), kThreads, 0, st>>>((__half *)p, count, seed, digits); break;
	case CH_FP8: fill_gemm_k<__nv_fp8_e4m3><<<grid_for(count), kThreads, 0, st>>>((__nv_fp8_e4m3 *)p, count, seed, digits); break;
	default: return (int)cudaErrorInvalidValue;
	}
	return last_error();
}

int ch_cu_corrupt(enum ch_dtype dt, void *p, uint64_t i, double add, void *stream)
{
	cudaStream_t st = (cudaStream_t)stream;
	switch (dt) {
	case CH_FP64: corrupt_k<double><<<1, 1, 0, st>>>((double *)p, i, add); break;
	case CH_FP32: corrupt_k<float><<<1, 1, 0, st>>>((float *)p, i, add); break;
	case CH_BF16: corrupt_k<__nv_bfloat16><<<1, 1, 0, st>>>((__nv_bfloat16 *)p, i, add); break;
	default: return (int)cudaErrorInvalidValue;
	}
	return last_error();
}

} // extern "C"
