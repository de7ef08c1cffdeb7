/*
 * ch_kernel_body.h - the per-thread arithmetic and index arithmetic of the
 * CUDA stream kernels and FMA ladders (kernels/cuda/ch_cuda_ops.cu), as
 * plain functions that compile as C11 for the host and as CUDA C++
 * (__host__ __device__) for the device, so that the unit tests
 * (tests/unit/test_kernel_body.c) run the very code the GPU runs: every
 * thread of a grid, over lengths that are not a multiple of the vector
 * width, misaligned arrays, one element, and index arithmetic above 2^32.
 *
 * A grid-stride kernel is "thread t of T threads": thread t handles vector
 * v = t, t + T, ... below n / W (W elements per 16-byte load), then the
 * scalar tail elements e = (n / W) W + t, ... below n. When an array is not
 * 16-byte aligned the width is 1 (ch_kb_width()): all elements scalar.
 *
 * No allocation, no state; the caller owns every array. Indexes are 64-bit
 * throughout (no int arithmetic on an element index).
 */
#ifndef CH_KERNEL_BODY_H
#define CH_KERNEL_BODY_H

#include <math.h>
#include <stdint.h>

#include "kernels/ch_kernels.h"

#ifdef __CUDACC__
#define CH_KB __host__ __device__ __forceinline__
#define CH_KB_STRUCT16 struct __align__(16)
#define CH_KB_FIRST16
#else
#define CH_KB static inline
#define CH_KB_STRUCT16 struct
#define CH_KB_FIRST16 _Alignas(16)
#endif

/* 16-byte aligned vectors: one 128-bit load each on the device
 * (ld.global.nc.v4.f32 / .v2.f64 in the PTX) */
typedef CH_KB_STRUCT16 ch_kb_f4 { CH_KB_FIRST16 float x; float y, z, w; } ch_kb_f4;
typedef CH_KB_STRUCT16 ch_kb_d2 { CH_KB_FIRST16 double x; double y; } ch_kb_d2;

/* Vector width of the stream kernels: 4 floats or 2 doubles per 16 bytes
 * when every array the operation touches is 16-byte aligned (cudaMalloc's
 * arrays are 256-byte aligned; an offset view may not be), else 1. A NULL
 * array (one the operation does not read) does not count. */
CH_KB unsigned ch_kb_width(unsigned vec_w, const void *a, const void *b, const void *c)
{
	uintptr_t any = (uintptr_t)a | (uintptr_t)b | (uintptr_t)c;
	return (any & 15u) ? 1u : vec_w;
}

/* Number of whole vectors of @w elements in @n elements. */
CH_KB uint64_t ch_kb_nvec(uint64_t n, unsigned w) { return n / w; }

/* First scalar (tail) element thread @t handles: (n / w) w + t. */
CH_KB uint64_t ch_kb_tail_first(uint64_t n, unsigned w, uint64_t t) { return ch_kb_nvec(n, w) * w + t; }

/* Element of lane @j of vector @v. */
CH_KB uint64_t ch_kb_elem(uint64_t v, unsigned w, unsigned j) { return v * w + j; }

/* Grid size of a grid-stride launch over @work items: one thread per item
 * in blocks of @threads, at most 32 blocks per SM (@sms), at least 1. */
CH_KB uint64_t ch_kb_blocks(uint64_t work, unsigned threads, int sms)
{
	uint64_t blocks = work / threads + (work % threads != 0);
	uint64_t cap = (uint64_t)(sms > 0 ? sms : 1) * 32u;
	if (blocks > cap)
		blocks = cap;
	return blocks ? blocks : 1u;
}

/* Whether stream operation @op reads a, b (copy: a, mul: b, add, triad and
 * dot: both), so that the traffic is BabelStream's. */
CH_KB int ch_kb_reads_a(int op) { return op != CH_K_MUL; }
CH_KB int ch_kb_reads_b(int op) { return op != CH_K_COPY; }

/* The element formulas (BabelStream): copy a, mul s b, add a + b, triad
 * a + s b. Any other @op gives triad's. */
#define CH_KB_OP(op, a, b, s) \
	((op) == CH_K_COPY ? (a) : (op) == CH_K_MUL ? (s) * (b) : (op) == CH_K_ADD ? (a) + (b) : (a) + (s) * (b))

/*
 * ch_kb_stream_f32, ch_kb_stream_f64 - what thread @t of @nthreads does for
 * stream operation @op (copy, mul, add, triad) over @n elements with vector
 * width @w (ch_kb_width(): 4 or 1 for fp32, 2 or 1 for fp64): c[e] = op(a[e],
 * b[e], s) for its vectors, then its tail elements. Arrays the operation
 * does not read may be NULL.
 */
CH_KB void ch_kb_stream_f32(int op, const float *a, const float *b, float *c, uint64_t n, float s,
			    unsigned w, uint64_t t, uint64_t nthreads)
{
	const int ra = ch_kb_reads_a(op), rb = ch_kb_reads_b(op);
	const uint64_t nv = w == 4 ? ch_kb_nvec(n, 4) : 0;
	uint64_t v, e;

	for (v = t; v < nv; v += nthreads) {
		ch_kb_f4 x = { 0, 0, 0, 0 }, y = { 0, 0, 0, 0 }, r;
		if (ra)
			x = ((const ch_kb_f4 *)a)[v];
		if (rb)
			y = ((const ch_kb_f4 *)b)[v];
		r.x = CH_KB_OP(op, x.x, y.x, s);
		r.y = CH_KB_OP(op, x.y, y.y, s);
		r.z = CH_KB_OP(op, x.z, y.z, s);
		r.w = CH_KB_OP(op, x.w, y.w, s);
		((ch_kb_f4 *)c)[v] = r;
	}
	for (e = nv * 4 + t; e < n; e += nthreads)
		c[e] = CH_KB_OP(op, ra ? a[e] : 0.0f, rb ? b[e] : 0.0f, s);
}

CH_KB void ch_kb_stream_f64(int op, const double *a, const double *b, double *c, uint64_t n, double s,
			    unsigned w, uint64_t t, uint64_t nthreads)
{
	const int ra = ch_kb_reads_a(op), rb = ch_kb_reads_b(op);
	const uint64_t nv = w == 2 ? ch_kb_nvec(n, 2) : 0;
	uint64_t v, e;

	for (v = t; v < nv; v += nthreads) {
		ch_kb_d2 x = { 0, 0 }, y = { 0, 0 }, r;
		if (ra)
			x = ((const ch_kb_d2 *)a)[v];
		if (rb)
			y = ((const ch_kb_d2 *)b)[v];
		r.x = CH_KB_OP(op, x.x, y.x, s);
		r.y = CH_KB_OP(op, x.y, y.y, s);
		((ch_kb_d2 *)c)[v] = r;
	}
	for (e = nv * 2 + t; e < n; e += nthreads)
		c[e] = CH_KB_OP(op, ra ? a[e] : 0.0, rb ? b[e] : 0.0, s);
}

/*
 * ch_kb_dot_f32, ch_kb_dot_f64 - thread @t's part of the dot product:
 * sum of a[e] b[e] over its vectors and tail elements, products in the
 * storage type, sum in fp64 (the kernel then adds the threads' parts).
 */
CH_KB double ch_kb_dot_f32(const float *a, const float *b, uint64_t n, unsigned w, uint64_t t, uint64_t nthreads)
{
	const uint64_t nv = w == 4 ? ch_kb_nvec(n, 4) : 0;
	double sum = 0;
	uint64_t v, e;

	for (v = t; v < nv; v += nthreads) {
		ch_kb_f4 x = ((const ch_kb_f4 *)a)[v], y = ((const ch_kb_f4 *)b)[v];
		sum += (double)(x.x * y.x) + (double)(x.y * y.y) + (double)(x.z * y.z) + (double)(x.w * y.w);
	}
	for (e = nv * 4 + t; e < n; e += nthreads)
		sum += (double)(a[e] * b[e]);
	return sum;
}

CH_KB double ch_kb_dot_f64(const double *a, const double *b, uint64_t n, unsigned w, uint64_t t, uint64_t nthreads)
{
	const uint64_t nv = w == 2 ? ch_kb_nvec(n, 2) : 0;
	double sum = 0;
	uint64_t v, e;

	for (v = t; v < nv; v += nthreads) {
		ch_kb_d2 x = ((const ch_kb_d2 *)a)[v], y = ((const ch_kb_d2 *)b)[v];
		sum += x.x * y.x + x.y * y.y;
	}
	for (e = nv * 2 + t; e < n; e += nthreads)
		sum += a[e] * b[e];
	return sum;
}

/*
 * The FMA ladder's index walk: thread @t of @nthreads takes four elements
 * i, i + T, i + 2T, i + 3T at a time (four independent chains hide FMA
 * latency), for i = t, t + 4T, ... while i + 3T < n, then single elements
 * i, i + T, ... from where that stopped.
 */
#define CH_KB_LADDER(NAME, T, FMA)                                                                    \
	CH_KB void NAME(const T *x, T *y, uint64_t n, int k, T alpha, T beta, uint64_t t, uint64_t nthreads) \
	{                                                                                             \
		const uint64_t s = nthreads;                                                          \
		uint64_t i = t;                                                                       \
		int q;                                                                                \
		for (; i + 3 * s < n; i += 4 * s) {                                                   \
			T r0 = x[i], r1 = x[i + s], r2 = x[i + 2 * s], r3 = x[i + 3 * s];             \
			for (q = 0; q < k; q++) {                                                     \
				r0 = FMA(r0, alpha, beta);                                            \
				r1 = FMA(r1, alpha, beta);                                            \
				r2 = FMA(r2, alpha, beta);                                            \
				r3 = FMA(r3, alpha, beta);                                            \
			}                                                                             \
			y[i] = r0;                                                                    \
			y[i + s] = r1;                                                                \
			y[i + 2 * s] = r2;                                                            \
			y[i + 3 * s] = r3;                                                            \
		}                                                                                     \
		for (; i < n; i += s) {                                                               \
			T r = x[i];                                                                   \
			for (q = 0; q < k; q++)                                                       \
				r = FMA(r, alpha, beta);                                              \
			y[i] = r;                                                                     \
		}                                                                                     \
	}

/*
 * ch_kb_ladder_f32, ch_kb_ladder_f64 - thread @t's part of the FMA ladder:
 * y[i] = x[i], then @k times y[i] = fma(y[i], alpha, beta) (one rounding
 * per step), for the elements of its index walk above.
 */
CH_KB_LADDER(ch_kb_ladder_f32, float, fmaf)
CH_KB_LADDER(ch_kb_ladder_f64, double, fma)

#endif
