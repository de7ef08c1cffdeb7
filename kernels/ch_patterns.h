/*
 * ch_patterns.h - the input values and element functions every roofline
 * backend uses, shared verbatim by the C (CPU) and CUDA code so that the
 * host can validate any backend's output against the same analytic values.
 *
 * Everything here is static inline and compiles as C11 and as CUDA C++
 * (functions are __host__ __device__ under nvcc). No allocation, no state.
 *
 * Input arrays (never zero, exactly representable in fp64, fp32, bf16 and
 * fp16, so every backend starts from bit-identical inputs):
 *   a[i] = 1 + ((37 i) mod 128) / 128                 in [1, 2)
 *   b[i] = (2 ((97 i) mod 256) - 255) / 64            odd multiples of 1/64 in (-4, 4)
 *   c[i] = 0.5 (output array; overwritten by every kernel)
 * Inputs a and b are never written by any kernel: each point's expected
 * output depends on its inputs alone, whatever ran before it.
 */
#ifndef CH_PATTERNS_H
#define CH_PATTERNS_H

#include <stdint.h>

#ifdef __CUDACC__
#define CH_HD __host__ __device__ __forceinline__
#else
#define CH_HD static inline
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* BabelStream's scalar (BabelStream src/Stream.h: startScalar = 0.4). */
#define CH_STREAM_SCALAR 0.4
/* Ladder step y <- alpha*y + beta: with alpha = -1, beta = 3 the value
 * alternates exactly between x and 3 - x (both in [1, 2] when x is in
 * [1, 2)), so a k-FMA chain has a closed form in every dtype and never
 * under- or overflows. The backends take alpha and beta as run-time
 * arguments, so no compiler can fold the chain. */
#define CH_LADDER_ALPHA (-1.0)
#define CH_LADDER_BETA 3.0
/* LayerNorm epsilon (PyTorch's default for nn.LayerNorm). */
#define CH_LN_EPS 1e-5
/* LayerNorm row length (hidden size) by default. */
#define CH_LN_COLS 4096

CH_HD double ch_pat_a(uint64_t i) { return 1.0 + (double)((i * 37u) & 127u) / 128.0; }
CH_HD double ch_pat_b(uint64_t i) { return (double)(2 * (int)((i * 97u) & 255u) - 255) / 64.0; }
CH_HD double ch_pat_c(uint64_t i) { (void)i; return 0.5; }
/* LayerNorm weight and bias of column j: gamma in [0.5, 1.5), beta odd/128 (never 0). */
CH_HD double ch_pat_gamma(uint64_t j) { return 0.5 + (double)((j * 29u) & 63u) / 64.0; }
CH_HD double ch_pat_beta(uint64_t j) { return (double)(2 * (int)((j * 53u) & 63u) - 63) / 128.0; }

/* Index of a[i] and b[i] in their 128- and 256-value cycles (for tables of
 * expected values). */
CH_HD unsigned ch_pat_a_idx(uint64_t i) { return (unsigned)((i * 37u) & 127u); }
CH_HD unsigned ch_pat_b_idx(uint64_t i) { return (unsigned)((i * 97u) & 255u); }

/* splitmix64 (Steele, Lea, Flood, "Fast splittable pseudorandom number
 * generators", OOPSLA 2014): a counter-based hash, so that any element of a
 * random matrix can be regenerated on the host from its index alone. */
CH_HD uint64_t ch_splitmix64(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* Significant bits of the GEMM inputs per dtype (ch_gemm_input_digits(),
 * kernels/ch_kernels.h, says why), here so that tools/gpu-check-ref.cu
 * fills its matrices with the very values roofline's GEMMs use. */
#define CH_GEMM_DIGITS_FP64 53
#define CH_GEMM_DIGITS_FP32 24
#define CH_GEMM_DIGITS_TENSOR 7 /* tf32, bf16, fp16 */
#define CH_GEMM_DIGITS_FP8 2

/*
 * ch_gemm_value - element @idx of a random GEMM operand.
 * @digits: significant bits of the values, at most the operand dtype's
 *          (ch_gemm_input_digits(): 53 fp64, 24 fp32, 7 tf32/bf16/fp16,
 *          2 fp8 e4m3).
 * Returns m x 2^-(digits-1) for an odd integer m drawn uniformly from
 * [-(2^digits - 1), 2^digits - 1]: a value in (-2, 2), never zero, exactly
 * representable in the dtype, so the device holds exactly what the host
 * reference multiplies, and products of two values are exact in fp32 for
 * every dtype narrower than fp32.
 */
CH_HD double ch_gemm_value(uint64_t seed, uint64_t idx, int digits)
{
	uint64_t h = ch_splitmix64(seed ^ ch_splitmix64(idx));
	uint64_t half = (uint64_t)1 << (digits - 1);           /* 2^(d-1) odd values each side */
	int64_t m = 2 * (int64_t)(h % (2 * half)) - (int64_t)(2 * half - 1);
	double scale = 1.0;
	int e;
	for (e = 0; e < digits - 1; e++)
		scale *= 0.5;
	return (double)m * scale;
}

/*
 * GELU, tanh form (Hendrycks and Gimpel, arXiv:1606.08415, eq. 2):
 *   gelu(x) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
 * tanh(u) is Lambert's continued fraction for tanh truncated after 11
 * levels, as the rational function u P(u^2) / Q(u^2) (P degree 5, Q degree
 * 6, coefficients divided by Q's constant term), with u clamped to [-9, 9]
 * (tanh(9) = 1 - 3e-8). Largest absolute error of this tanh in fp32 over
 * the real line: 6.9e-7; of the GELU on our inputs: 0.6 fp32 epsilons x
 * (|x| + 1). Measured with tools in docs/roofline.md.
 *
 * FLOPs per element, counted from the code below: x2 1, v (FMA) 2, u 2,
 * s 1, P Horner 5 FMAs = 10, Q Horner 6 FMAs = 12, u*p 1, divide 1,
 * 0.5x 1, 1+t 1, product 1: 33 (the clamp is a compare, not a FLOP).
 */
#define CH_GELU_FLOPS 33
#define CH_TANH_P0 1.0f
#define CH_TANH_P1 0.14492753623188406f
#define CH_TANH_P2 0.0049689440993788822f
#define CH_TANH_P3 5.8116305255893354e-05f
#define CH_TANH_P4 2.3740320774466241e-07f
#define CH_TANH_P5 2.4665268337107782e-10f
#define CH_TANH_Q0 1.0f
#define CH_TANH_Q1 0.47826086956521741f
#define CH_TANH_Q2 0.031055900621118012f
#define CH_TANH_Q3 0.00061022120518688027f
#define CH_TANH_Q4 4.2732577394039233e-06f
#define CH_TANH_Q5 9.4961283097864969e-09f
#define CH_TANH_Q6 3.1622138893727926e-12f
#define CH_GELU_K0 0.7978845608028654f /* sqrt(2/pi) */
#define CH_GELU_K1 0.044715f

CH_HD float ch_gelu_f32(float x)
{
	float x2 = x * x;
	float v = CH_GELU_K1 * x2 + 1.0f;
	float u = (CH_GELU_K0 * x) * v;
	float s, p, q, t;
	u = u < -9.0f ? -9.0f : u; /* two plain selects: vectorisable */
	u = u > 9.0f ? 9.0f : u;
	s = u * u;
	p = CH_TANH_P5;
	p = p * s + CH_TANH_P4;
	p = p * s + CH_TANH_P3;
	p = p * s + CH_TANH_P2;
	p = p * s + CH_TANH_P1;
	p = p * s + CH_TANH_P0;
	q = CH_TANH_Q6;
	q = q * s + CH_TANH_Q5;
	q = q * s + CH_TANH_Q4;
	q = q * s + CH_TANH_Q3;
	q = q * s + CH_TANH_Q2;
	q = q * s + CH_TANH_Q1;
	q = q * s + CH_TANH_Q0;
	t = (u * p) / q;
	return (0.5f * x) * (1.0f + t);
}

/*
 * LayerNorm over rows of @cols elements (Ba, Kiros, Hinton,
 * arXiv:1607.06450), two-pass: mean, then variance of (x - mean), then
 * y = (x - mean) * rstd * gamma + beta, rstd = 1 / sqrt(var + eps).
 * FLOPs per element: sum 1, (x-mean)^2 accumulated 3, normalise 4 = 8;
 * per row: mean 1, var/cols + eps 2, sqrt 1, reciprocal 1 = 5.
 */
#define CH_LN_FLOPS_PER_ELEM 8
#define CH_LN_FLOPS_PER_ROW 5

#ifdef __cplusplus
}
#endif
#endif
