/*
 * ch_ar_pattern.h - deterministic all-reduce inputs whose exact reduction is
 * representable in every element type, and the 16-bit float conversions.
 *
 * Rank r's element i holds a small non-negative integer v(r, t), t = i + seed:
 *
 *   v(r, t) = 0                          when q > 1 and (t + r) mod q != 0
 *           = 1 + ((5 t + 3 r) mod m)    otherwise
 *
 * For sum, q and m are chosen so that at most c = ceil(n / q) ranks give a
 * non-zero value to any element and c x m <= L, the largest integer below
 * which every integer is exact in the type (int8 127, bfloat16 256, half
 * 2048, float 2^24, int32 2^31-1, double 2^53). Every partial sum is then an
 * exact integer <= L, whatever order the algorithm adds in, so the result is
 * bit-exact and checked with a bit comparison. For min and max, q = 1.
 * Every rank contributes a non-zero value to 1 in q elements and ranks
 * differ (3 r mod m), so a lost, doubled or misplaced contribution changes
 * the result. v(r, t) depends on t mod period only (period = lcm(q, m)),
 * so the expected values are one period, tiled.
 *
 * This header is also compiled by nvcc (comm/nccl): the inline functions are
 * __host__ __device__ there.
 */
#ifndef CH_AR_PATTERN_H
#define CH_AR_PATTERN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "comm/ch_comm.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__CUDACC__)
#define CH_AR_HD __host__ __device__
#else
#define CH_AR_HD
#endif

/* Largest m (values 1..m); keeps values small in every type. */
#define CH_AR_PATTERN_MAX_M 64

/* Parameters of the pattern for one dtype, op and rank count (plain data:
 * passed by value to CUDA kernels). */
struct ch_ar_pattern {
	int dtype;       /* enum ch_dtype */
	int op;          /* enum ch_comm_redop */
	int nranks;      /* ranks in the reduction, >= 1 */
	uint64_t q;      /* 1 in q elements is non-zero on a given rank, >= 1 */
	uint64_t m;      /* non-zero values are 1..m, 1 <= m <= CH_AR_PATTERN_MAX_M */
	uint64_t period; /* lcm(q, m): v(r, t) = v(r, t mod period) */
};

/**
 * ch_ar_exact_limit - the largest L such that every integer 0..L is exactly
 * representable in @dtype (and within its range).
 * Returns L (int8 127, bfloat16 256, half 2048, float 2^24, int32
 * 2^31 - 1, double 2^53), or 0 for an unknown type.
 */
uint64_t ch_ar_exact_limit(int dtype);

/**
 * ch_ar_pattern_init - choose q, m and period for @dtype, @op, @nranks.
 * @p: [out] parameters.
 * Returns 0, or CH_ERR_USAGE for an unknown dtype or op or nranks < 1.
 * Guarantees (sum): ceil(nranks / q) x m <= ch_ar_exact_limit(dtype).
 */
int ch_ar_pattern_init(struct ch_ar_pattern *p, int dtype, int op, int nranks);

/**
 * ch_ar_pattern_value - v(rank, t) as defined above.
 * @t: [in] element index plus seed; any value (reduced mod period here).
 */
static inline CH_AR_HD uint64_t ch_ar_pattern_value(const struct ch_ar_pattern *p,
						     int rank, uint64_t t)
{
	uint64_t u = t % p->period;
	uint64_t r = (uint64_t)rank;
	if (p->q > 1 && (u + r) % p->q != 0)
		return 0;
	return 1 + (5 * u + 3 * (r % p->m)) % p->m;
}

/**
 * ch_ar_encode - store the small non-negative integer @v (exact in @dtype,
 * as the pattern guarantees) as element @idx of @buf.
 * half: v <= 2048; bfloat16: v <= 256 (exact conversion, no rounding).
 */
static inline CH_AR_HD void ch_ar_encode(int dtype, uint64_t v, void *buf, size_t idx)
{
	char *dst = (char *)buf;
	switch (dtype) {
	case CH_FP32: { float x = (float)v; memcpy(dst + idx * 4, &x, 4); break; }
	case CH_FP64: { double x = (double)v; memcpy(dst + idx * 8, &x, 8); break; }
	case CH_INT32: { int32_t x = (int32_t)v; memcpy(dst + idx * 4, &x, 4); break; }
	case CH_INT8: { int8_t x = (int8_t)v; memcpy(dst + idx, &x, 1); break; }
	case CH_FP16:
	case CH_BF16: {
		float f = (float)v;
		uint32_t b;
		uint16_t h;
		memcpy(&b, &f, sizeof(b));
		if (dtype == CH_BF16) {
			h = (uint16_t)(b >> 16); /* exact: v has at most 8 significant bits */
		} else if (v == 0) {
			h = 0;
		} else {
			/* normal binary16: rebias the exponent (127 -> 15), keep 10 bits */
			h = (uint16_t)((((b >> 23) & 0xff) - 127 + 15) << 10 | ((b >> 13) & 0x3ff));
		}
		memcpy(dst + idx * 2, &h, 2);
		break;
	}
	default: break;
	}
}

/**
 * ch_ar_expected_value - the exact reduction over all ranks at @t:
 * sum, min or max of v(r, t) for r in 0..nranks-1 (O(nranks)).
 */
uint64_t ch_ar_expected_value(const struct ch_ar_pattern *p, uint64_t t);

/**
 * ch_ar_expected_table - one period of encoded expected values.
 * @p: [in] parameters.
 * @out: [out] new buffer of p->period elements of p->dtype: element u is
 *       ch_ar_expected_value(p, u); the caller frees it with free().
 * Returns 0 or CH_ERR_RUNTIME (out of memory). Costs O(period x nranks).
 */
int ch_ar_expected_table(const struct ch_ar_pattern *p, void **out);

/**
 * ch_ar_fill_input_host - write rank @rank's input, @count elements of
 * p->dtype, element i = v(rank, i + seed). Host memory.
 */
void ch_ar_fill_input_host(void *buf, const struct ch_ar_pattern *p, size_t count,
			   int rank, uint64_t seed);

/**
 * ch_ar_fill_expected_host - write the expected reduction, @count elements,
 * element i = expected(i + seed). Host memory.
 * Returns 0 or CH_ERR_RUNTIME (out of memory for the period table).
 */
int ch_ar_fill_expected_host(void *buf, const struct ch_ar_pattern *p, size_t count,
			     uint64_t seed);

/**
 * ch_ar_count_wrong_host - elements of @a whose bytes differ from @b.
 * @elem_bytes: [in] element size. Returns the count.
 */
uint64_t ch_ar_count_wrong_host(const void *a, const void *b, size_t count,
				size_t elem_bytes);

/**
 * ch_half_from_float - IEEE 754 binary16 bits nearest to @f (round to
 * nearest, ties to even; overflow gives infinity, NaN stays NaN).
 */
uint16_t ch_half_from_float(float f);

/** ch_half_to_float - the binary16 value @h as a float (exact). */
float ch_half_to_float(uint16_t h);

/** ch_bf16_from_float - bfloat16 bits nearest to @f (ties to even; NaN stays NaN). */
uint16_t ch_bf16_from_float(float f);

/** ch_bf16_to_float - the bfloat16 value @h as a float (exact). */
float ch_bf16_to_float(uint16_t h);

#ifdef __cplusplus
}
#endif
#endif
