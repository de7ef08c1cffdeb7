/*
 * ch_cuda_ops.cu - roofline's CUDA kernels and their extern "C" wrappers.
 * Kernels only: device state, timing and cuBLASLt live in ch_cuda.c.
 */
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>

#include "kernels/ch_patterns.h"
#include "kernels/cuda/ch_cuda_ops.h"

namespace {

int g_sms = 80;
const int kThreads = 256;

unsigned grid_for(uint64_t n)
{
	uint64_t blocks = (n + kThreads - 1) / kThreads;
	uint64_t cap = (uint64_t)g_sms * 32;
	if (blocks > cap)
		blocks = cap;
	return blocks ? (unsigned)blocks : 1u;
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
 * the last n mod W elements are done one by one. cudaMalloc'd arrays are
 * 256-byte aligned. An operation reads only the arrays its formula names
 * (copy: a, mul: b, add and triad: a and b), so the traffic is BabelStream's.
 */
template <typename T> struct vec;
template <> struct vec<float> { typedef float4 type; static const int w = 4; };
template <> struct vec<double> { typedef double2 type; static const int w = 2; };

struct op_copy { static const bool ra = true, rb = false;
	template <typename T> __device__ T operator()(T a, T, T) const { return a; } };
struct op_mul { static const bool ra = false, rb = true;
	template <typename T> __device__ T operator()(T, T b, T s) const { return s * b; } };
struct op_add { static const bool ra = true, rb = true;
	template <typename T> __device__ T operator()(T a, T b, T) const { return a + b; } };
struct op_triad { static const bool ra = true, rb = true;
	template <typename T> __device__ T operator()(T a, T b, T s) const { return a + s * b; } };

template <typename Op, typename T>
__device__ __forceinline__ float4 vapply(Op op, float4 a, float4 b, T s)
{
	return make_float4(op(a.x, b.x, s), op(a.y, b.y, s), op(a.z, b.z, s), op(a.w, b.w, s));
}
template <typename Op, typename T>
__device__ __forceinline__ double2 vapply(Op op, double2 a, double2 b, T s)
{
	return make_double2(op(a.x, b.x, s), op(a.y, b.y, s));
}

template <typename T, typename Op>
__global__ void stream_k(const T *__restrict__ a, const T *__restrict__ b, T *__restrict__ c, uint64_t n, T s, Op op)
{
	typedef typename vec<T>::type V;
	const uint64_t nv = n / vec<T>::w, st = (uint64_t)gridDim.x * blockDim.x;
	const V *__restrict__ av = (const V *)a;
	const V *__restrict__ bv = (const V *)b;
	V *__restrict__ cv = (V *)c;
	uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
	for (uint64_t v = i; v < nv; v += st) {
		V x = {}, y = {};
		if constexpr (Op::ra)
			x = av[v];
		if constexpr (Op::rb)
			y = bv[v];
		cv[v] = vapply(op, x, y, s);
	}
	for (uint64_t e = nv * vec<T>::w + i; e < n; e += st)
		c[e] = op(Op::ra ? a[e] : T(0), Op::rb ? b[e] : T(0), s);
}

__device__ __forceinline__ double vdot(float4 a, float4 b)
{
	return (double)(a.x * b.x) + (double)(a.y * b.y) + (double)(a.z * b.z) + (double)(a.w * b.w);
}
__device__ __forceinline__ double vdot(double2 a, double2 b) { return a.x * b.x + a.y * b.y; }

/* products in T, sum in fp64: per thread, then per block, one atomic per block */
template <typename T>
__global__ void dot_k(const T *__restrict__ a, const T *__restrict__ b, uint64_t n, double *out)
{
	typedef typename vec<T>::type V;
	__shared__ double part[kThreads];
	const uint64_t nv = n / vec<T>::w, st = (uint64_t)gridDim.x * blockDim.x;
	uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
	double sum = 0;
	for (uint64_t v = i; v < nv; v += st)
		sum += vdot(((const V *)a)[v], ((const V *)b)[v]);
	for (uint64_t e = nv * vec<T>::w + i; e < n; e += st)
		sum += (double)(a[e] * b[e]);
	part[threadIdx.x] = sum;
	__syncthreads();
	for (int w = kThreads / 2; w > 0; w /= 2) {
		if ((int)threadIdx.x < w)
			part[threadIdx.x] += part[threadIdx.x + w];
		__syncthreads();
	}
	if (threadIdx.x == 0)
		atomicAdd(out, part[0]);
}

/* Four independent chains per thread so that FMA latency is hidden even
 * at moderate occupancy. */
template <typename T>
__global__ void ladder_k(const T *__restrict__ x, T *__restrict__ y, uint64_t n, int k, T alpha, T beta)
{
	uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x, s = (uint64_t)gridDim.x * blockDim.x;
	for (; i + 3 * s < n; i += 4 * s) {
		T r0 = x[i], r1 = x[i + s], r2 = x[i + 2 * s], r3 = x[i + 3 * s];
		for (int q = 0; q < k; q++) {
			r0 = fma(r0, alpha, beta);
			r1 = fma(r1, alpha, beta);
			r2 = fma(r2, alpha, beta);
			r3 = fma(r3, alpha, beta);
		}
		y[i] = r0;
		y[i + s] = r1;
		y[i + 2 * s] = r2;
		y[i + 3 * s] = r3;
	}
	for (; i < n; i += s) {
		T r = x[i];
		for (int q = 0; q < k; q++)
			r = fma(r, alpha, beta);
		y[i] = r;
	}
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
#define STREAM_CASE(T)                                                                            \
	{                                                                                         \
		unsigned g = grid_for(n / vec<T>::w + 1);                                         \
		const T *a_ = (const T *)a, *b_ = (const T *)b;                                   \
		T *c_ = (T *)c, s_ = (T)scalar;                                                   \
		switch (op) {                                                                     \
		case CH_K_COPY: stream_k<T><<<g, kThreads, 0, st>>>(a_, b_, c_, n, s_, op_copy()); break; \
		case CH_K_MUL: stream_k<T><<<g, kThreads, 0, st>>>(a_, b_, c_, n, s_, op_mul()); break; \
		case CH_K_ADD: stream_k<T><<<g, kThreads, 0, st>>>(a_, b_, c_, n, s_, op_add()); break; \
		case CH_K_TRIAD: stream_k<T><<<g, kThreads, 0, st>>>(a_, b_, c_, n, s_, op_triad()); break; \
		case CH_K_DOT: dot_k<T><<<g, kThreads, 0, st>>>(a_, b_, n, dot_dev); break;       \
		default: return (int)cudaErrorInvalidValue;                                       \
		}                                                                                 \
	}
	if (dt == CH_FP64) {
		STREAM_CASE(double)
	} else if (dt == CH_FP32) {
		STREAM_CASE(float)
	} else {
		return (int)cudaErrorInvalidValue;
	}
#undef STREAM_CASE
	return last_error();
}

int ch_cu_ladder(enum ch_dtype dt, const void *x, void *y, uint64_t n, int k,
		 double alpha, double beta, void *stream)
{
	cudaStream_t st = (cudaStream_t)stream;
	switch (dt) {
	case CH_FP64:
		ladder_k<double><<<grid_for(n / 4 + 1), kThreads, 0, st>>>((const double *)x, (double *)y, n, k, alpha, beta);
		break;
	case CH_FP32:
		ladder_k<float><<<grid_for(n / 4 + 1), kThreads, 0, st>>>((const float *)x, (float *)y, n, k,
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
