/*
 * ch_cuda_ops.h - the CUDA kernels of the roofline backend, behind thin
 * extern "C" wrappers (ch_cuda_ops.cu). No CUDA type appears here: streams
 * are passed as void* (a cudaStream_t), dtypes as enum ch_dtype, and every
 * wrapper returns the cudaError_t of its launch as an int (0 = success).
 *
 * Arrays follow ch_patterns.h: a and b are inputs, c the output, n elements
 * of the dtype. Launches are grid-stride loops sized from the device's SM
 * count (ch_cu_set_sms()).
 */
#ifndef CH_CUDA_OPS_H
#define CH_CUDA_OPS_H

#include <stdint.h>

#include "kernels/ch_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/** ch_cu_set_sms - SM count of the current device, for grid sizes. */
void ch_cu_set_sms(int sms);

/** ch_cu_fill - a[i], b[i] from ch_patterns.h in @dt (fp64, fp32, bf16);
 * c[i] = 0.5 too when @with_c. */
int ch_cu_fill(enum ch_dtype dt, void *a, void *b, void *c, uint64_t n, int with_c, void *stream);

/** ch_cu_stream - one BabelStream kernel (CH_K_COPY ... CH_K_DOT) in fp64
 * or fp32. dot adds its fp64 sum into *dot_dev (device memory, zeroed by
 * the caller). */
int ch_cu_stream(enum ch_kernel_id op, enum ch_dtype dt, const void *a, const void *b, void *c,
		 uint64_t n, double scalar, double *dot_dev, void *stream);

/** ch_cu_ladder - y = x, then k times y = alpha*y + beta, in fp64, fp32
 * or bf16 (bf16: n must be even; pairs with __hfma2). */
int ch_cu_ladder(enum ch_dtype dt, const void *x, void *y, uint64_t n, int k,
		 double alpha, double beta, void *stream);

/** ch_cu_gelu - y[i] = ch_gelu_f32(x[i]) in fp32 arithmetic; fp32 or bf16 storage. */
int ch_cu_gelu(enum ch_dtype dt, const void *x, void *y, uint64_t n, void *stream);

/** ch_cu_layernorm - LayerNorm of @rows rows of @cols (one block per row),
 * fp32 arithmetic, fp32 or bf16 storage; gamma and beta are fp32. */
int ch_cu_layernorm(enum ch_dtype dt, const void *x, void *y, uint64_t rows, uint64_t cols,
		    const float *gamma, const float *beta, float eps, void *stream);

/** ch_cu_fill_ln_weights - gamma[j], beta[j] from ch_patterns.h. */
int ch_cu_fill_ln_weights(float *gamma, float *beta, uint64_t cols, void *stream);

/** ch_cu_fill_gemm - element p of a GEMM operand = ch_gemm_value(seed, p,
 * ch_gemm_input_digits(@dt)), stored in @dt (fp64, fp32/tf32, bf16, fp16, fp8 e4m3). */
int ch_cu_fill_gemm(enum ch_dtype dt, void *p, uint64_t count, uint64_t seed, void *stream);

/** ch_cu_corrupt - test hook: element @i of @p (dtype @dt) becomes
 * v + @add + |v|. */
int ch_cu_corrupt(enum ch_dtype dt, void *p, uint64_t i, double add, void *stream);

#ifdef __cplusplus
}
#endif
#endif
