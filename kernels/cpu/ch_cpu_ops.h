/*
 * ch_cpu_ops.h - the CPU backend's per-thread kernels: each works on one
 * contiguous range of the arrays and is called by one OpenMP thread.
 *
 * Three builds of the same code (ch_cpu_ops_body.h) exist for x86-64:
 * AVX-512 (avx512f), AVX2 with FMA, and the baseline (SSE2); elsewhere only
 * the baseline. ch_cpu_ops_select() picks the widest the CPU supports, at run
 * time (the project is compiled without -march).
 */
#ifndef CH_CPU_OPS_H
#define CH_CPU_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "kernels/ch_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ch_cpu_ops {
	const char *isa;  /* "avx512", "avx2+fma", "sse2", "baseline" */
	int lanes_fp64;   /* fp64 lanes of one vector register */
	int has_fma;      /* fused multiply-add in hardware */
	/* stream kernels on [0, n): c = f(a, b); dot returns the fp64 sum in
	 * *dot (may be NULL for the others). s is the stream scalar. */
	void (*stream_f64)(enum ch_kernel_id op, const double *a, const double *b,
			   double *c, size_t n, double s, double *dot);
	void (*stream_f32)(enum ch_kernel_id op, const float *a, const float *b,
			   float *c, size_t n, float s, double *dot);
	/* ladder: y = x, then k times y = alpha*y + beta */
	void (*ladder_f64)(const double *x, double *y, size_t n, int k, double alpha, double beta);
	void (*ladder_f32)(const float *x, float *y, size_t n, int k, float alpha, float beta);
	/* gelu: y[i] = ch_gelu_f32(x[i]) */
	void (*gelu_f32)(const float *x, float *y, size_t n);
	/* layernorm of rows [0, rows) of cols elements */
	void (*layernorm_f32)(const float *x, float *y, size_t rows, size_t cols,
			      const float *gamma, const float *beta, float eps);
	/* validation: over m values, count those with !(|c - want| <= tol)
	 * (NaN included) and return it; *worst gets max |c - want| x itol
	 * (for ch_check_elementwise(): tables of expected values, tolerances
	 * and inverse tolerances of the same length as c) */
	long (*check_f64)(const double *c, const double *want, const double *tol,
			  const double *itol, size_t m, double *worst);
	long (*check_f32)(const float *c, const double *want, const double *tol,
			  const double *itol, size_t m, double *worst);
	long (*check_bf16)(const uint16_t *c, const double *want, const double *tol,
			   const double *itol, size_t m, double *worst);
};

/**
 * ch_cpu_ops_select - the widest kernel set this CPU runs.
 * @force: [in] NULL for the widest, or "avx512", "avx2+fma", "sse2" to pick
 *         one (only if the CPU supports it).
 * Returns a static table, or NULL when @force names a set the CPU lacks.
 */
const struct ch_cpu_ops *ch_cpu_ops_select(const char *force);

#ifdef __cplusplus
}
#endif
#endif
