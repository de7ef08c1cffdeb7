#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "comm/ch_ar_pattern.h"
#include "comm/ch_comm.h"
#include "base/ch_common.h"

/* Encode one 16-bit element (through a buffer large enough for any type). */
static uint16_t enc16(int dtype, uint64_t v)
{
	unsigned char b[8] = { 0 };
	uint16_t h;
	ch_ar_encode(dtype, v, b, 0);
	memcpy(&h, b, sizeof(h));
	return h;
}

Test(allreduce_pattern, exact_limits)
{
	cr_assert_eq(ch_ar_exact_limit(CH_INT8), 127);
	cr_assert_eq(ch_ar_exact_limit(CH_BF16), 256);
	cr_assert_eq(ch_ar_exact_limit(CH_FP16), 2048);
	cr_assert_eq(ch_ar_exact_limit(CH_FP32), 16777216ULL);
	cr_assert_eq(ch_ar_exact_limit(CH_INT32), 2147483647ULL);
	cr_assert_eq(ch_ar_exact_limit(CH_FP64), 9007199254740992ULL);
	cr_assert_eq(ch_ar_exact_limit(99), 0);
}

Test(allreduce_pattern, init_rejects_bad_arguments)
{
	struct ch_ar_pattern p;
	cr_assert_eq(ch_ar_pattern_init(&p, 99, CH_COMM_REDOP_SUM, 4), CH_ERR_USAGE);
	cr_assert_eq(ch_ar_pattern_init(&p, CH_FP32, 7, 4), CH_ERR_USAGE);
	cr_assert_eq(ch_ar_pattern_init(&p, CH_FP32, CH_COMM_REDOP_SUM, 0), CH_ERR_USAGE);
}

/* For every type and many rank counts: at most c = ceil(n/q) non-zero
 * contributions of at most m each, c x m within the exact limit, and the
 * largest expected sum within it too. */
Test(allreduce_pattern, sums_stay_exact_for_every_type_and_rank_count)
{
	static const int ns[] = { 1, 2, 3, 4, 7, 8, 16, 63, 64, 127, 128, 129, 255, 256, 257,
				  1000, 1024, 2048, 2049, 4096, 16384, 100000 };
	int t, i;
	for (t = 0; t < CH_NDTYPES_ALL; t++)
		if (ch_dtype_comm_name(t))
		for (i = 0; i < (int)(sizeof(ns) / sizeof(ns[0])); i++) {
			struct ch_ar_pattern p;
			uint64_t L = ch_ar_exact_limit(t), c, u, mx = 0;
			cr_assert_eq(ch_ar_pattern_init(&p, t, CH_COMM_REDOP_SUM, ns[i]), 0);
			c = ((uint64_t)ns[i] + p.q - 1) / p.q;
			cr_assert(p.m >= 1 && p.m <= CH_AR_PATTERN_MAX_M);
			cr_assert(c * p.m <= L, "%s n=%d: c=%llu m=%llu above %llu", ch_dtype_comm_name(t), ns[i],
				  (unsigned long long)c, (unsigned long long)p.m, (unsigned long long)L);
			cr_assert_eq(p.period % p.q, 0);
			cr_assert_eq(p.period % p.m, 0);
			if (ns[i] <= 4096)
				for (u = 0; u < p.period; u++) {
					uint64_t e = ch_ar_expected_value(&p, u);
					mx = e > mx ? e : mx;
				}
			cr_assert(mx <= L);
		}
}

Test(allreduce_pattern, values_are_periodic_and_rank_dependent)
{
	struct ch_ar_pattern p;
	uint64_t t;
	int differ = 0;
	cr_assert_eq(ch_ar_pattern_init(&p, CH_FP32, CH_COMM_REDOP_SUM, 4), 0);
	cr_assert_eq(p.q, 1);
	cr_assert_eq(p.m, CH_AR_PATTERN_MAX_M);
	for (t = 0; t < 3 * p.period; t++) {
		cr_assert_eq(ch_ar_pattern_value(&p, 2, t), ch_ar_pattern_value(&p, 2, t % p.period));
		cr_assert(ch_ar_pattern_value(&p, 2, t) >= 1);
		differ += ch_ar_pattern_value(&p, 0, t) != ch_ar_pattern_value(&p, 1, t);
	}
	cr_assert_gt(differ, 0, "ranks 0 and 1 give identical inputs");
	/* known answers: v(r, t) = 1 + (5t + 3r) mod 64 */
	cr_assert_eq(ch_ar_pattern_value(&p, 0, 0), 1);
	cr_assert_eq(ch_ar_pattern_value(&p, 3, 2), 1 + (10 + 9) % 64);
	cr_assert_eq(ch_ar_pattern_value(&p, 1, 13), 1 + (65 + 3) % 64);
}

Test(allreduce_pattern, sparse_when_ranks_exceed_the_limit)
{
	struct ch_ar_pattern p;
	uint64_t t;
	int r, nonzero;
	/* int8 with 300 ranks: q = 3, every element has at most 100 contributors */
	cr_assert_eq(ch_ar_pattern_init(&p, CH_INT8, CH_COMM_REDOP_SUM, 300), 0);
	cr_assert_eq(p.q, 3);
	cr_assert_eq(p.m, 1);
	for (t = 0; t < p.period; t++) {
		for (nonzero = 0, r = 0; r < 300; r++)
			nonzero += ch_ar_pattern_value(&p, r, t) != 0;
		cr_assert_eq(nonzero, 100);
		cr_assert_eq(ch_ar_expected_value(&p, t), 100);
	}
}

Test(allreduce_pattern, expected_min_max_sum_known_answers)
{
	struct ch_ar_pattern p;
	/* 3 ranks at t = 0: values 1, 4, 7 */
	cr_assert_eq(ch_ar_pattern_init(&p, CH_FP64, CH_COMM_REDOP_SUM, 3), 0);
	cr_assert_eq(ch_ar_expected_value(&p, 0), 12);
	cr_assert_eq(ch_ar_pattern_init(&p, CH_FP64, CH_COMM_REDOP_MIN, 3), 0);
	cr_assert_eq(ch_ar_expected_value(&p, 0), 1);
	cr_assert_eq(ch_ar_pattern_init(&p, CH_FP64, CH_COMM_REDOP_MAX, 3), 0);
	cr_assert_eq(ch_ar_expected_value(&p, 0), 7);
}

Test(allreduce_pattern, half_conversions_known_answers)
{
	cr_assert_eq(ch_half_from_float(0.0f), 0x0000);
	cr_assert_eq(ch_half_from_float(-0.0f), 0x8000);
	cr_assert_eq(ch_half_from_float(1.0f), 0x3c00);
	cr_assert_eq(ch_half_from_float(-2.0f), 0xc000);
	cr_assert_eq(ch_half_from_float(65504.0f), 0x7bff);     /* largest finite */
	cr_assert_eq(ch_half_from_float(65520.0f), 0x7c00);     /* rounds to infinity */
	cr_assert_eq(ch_half_from_float(2049.0f), 0x6800);      /* tie: to even, 2048 */
	cr_assert_eq(ch_half_from_float(2051.0f), 0x6802);      /* tie: to even, 2052 */
	cr_assert_eq(ch_half_from_float(5.9604645e-8f), 0x0001); /* smallest subnormal */
	cr_assert_eq(ch_half_from_float(1e-9f), 0x0000);
	cr_assert_eq(ch_half_from_float(INFINITY), 0x7c00);
	cr_assert((ch_half_from_float(NAN) & 0x7c00) == 0x7c00 && (ch_half_from_float(NAN) & 0x3ff));
	cr_assert_float_eq(ch_half_to_float(0x3c00), 1.0f, 0);
	cr_assert_float_eq(ch_half_to_float(0x7bff), 65504.0f, 0);
	cr_assert_float_eq(ch_half_to_float(0x0001), 5.9604645e-8f, 1e-15);
	cr_assert(isinf(ch_half_to_float(0xfc00)) && ch_half_to_float(0xfc00) < 0);
}

Test(allreduce_pattern, bf16_conversions_known_answers)
{
	cr_assert_eq(ch_bf16_from_float(1.0f), 0x3f80);
	cr_assert_eq(ch_bf16_from_float(256.0f), 0x4380);
	cr_assert_eq(ch_bf16_from_float(257.0f), 0x4380);  /* tie: to even, 256 */
	cr_assert_eq(ch_bf16_from_float(259.0f), 0x4382);  /* tie: to even, 260 */
	cr_assert_eq(ch_bf16_from_float(-3.0f), 0xc040);
	cr_assert((ch_bf16_from_float(NAN) & 0x7f80) == 0x7f80 && (ch_bf16_from_float(NAN) & 0x7f));
	cr_assert_float_eq(ch_bf16_to_float(0x4382), 260.0f, 0);
}

/* The pattern's exact encoder agrees with round-to-nearest conversion for
 * every value the pattern can produce. */
Test(allreduce_pattern, encode_matches_conversion)
{
	uint64_t v;
	for (v = 0; v <= 2048; v++) {
		uint16_t h = enc16(CH_FP16, v);
		cr_assert_eq(h, ch_half_from_float((float)v), "half %llu", (unsigned long long)v);
		cr_assert_float_eq(ch_half_to_float(h), (float)v, 0);
		if (v <= 256) {
			h = enc16(CH_BF16, v);
			cr_assert_eq(h, ch_bf16_from_float((float)v), "bf16 %llu", (unsigned long long)v);
		}
	}
}

/* Reduce the inputs in 16-bit arithmetic (round after every addition, in a
 * scrambled order) for many rank counts: the result is the exact expected
 * value, bit for bit. */
struct order_case { int dtype; int nranks; };
ParameterizedTestParameters(allreduce_pattern, sixteen_bit_sums_exact_in_any_order)
{
	static struct order_case cases[] = {
		{ CH_FP16, 2 }, { CH_FP16, 31 }, { CH_FP16, 100 }, { CH_FP16, 3000 },
		{ CH_BF16, 2 }, { CH_BF16, 5 }, { CH_BF16, 100 }, { CH_BF16, 600 },
	};
	return cr_make_param_array(struct order_case, cases, sizeof(cases) / sizeof(cases[0]));
}
ParameterizedTest(struct order_case *oc, allreduce_pattern, sixteen_bit_sums_exact_in_any_order)
{
	struct ch_ar_pattern p;
	uint64_t t;
	int i;
	cr_assert_eq(ch_ar_pattern_init(&p, oc->dtype, CH_COMM_REDOP_SUM, oc->nranks), 0);
	for (t = 0; t < p.period && t < 512; t++) {
		uint16_t acc = 0, want, v;
		for (i = 0; i < oc->nranks; i++) {
			int r = (int)(((uint64_t)i * 7919 + t) % (uint64_t)oc->nranks); /* a permutation when gcd = 1 */
			float x, y;
			if (oc->nranks % 7919 == 0)
				r = i;
			v = enc16(oc->dtype, ch_ar_pattern_value(&p, r, t));
			x = oc->dtype == CH_FP16 ? ch_half_to_float(acc) : ch_bf16_to_float(acc);
			y = oc->dtype == CH_FP16 ? ch_half_to_float(v) : ch_bf16_to_float(v);
			acc = oc->dtype == CH_FP16 ? ch_half_from_float(x + y) : ch_bf16_from_float(x + y);
		}
		want = enc16(oc->dtype, ch_ar_expected_value(&p, t));
		cr_assert_eq(acc, want, "n=%d t=%llu", oc->nranks, (unsigned long long)t);
	}
}

Test(allreduce_pattern, fill_expected_tiles_the_period_with_the_seed)
{
	struct ch_ar_pattern p;
	float buf[200];
	size_t i;
	cr_assert_eq(ch_ar_pattern_init(&p, CH_FP32, CH_COMM_REDOP_SUM, 5), 0);
	cr_assert_eq(ch_ar_fill_expected_host(buf, &p, 200, 77), 0);
	for (i = 0; i < 200; i++)
		cr_assert_float_eq(buf[i], (float)ch_ar_expected_value(&p, i + 77), 0, "element %zu", i);
}

Test(allreduce_pattern, count_wrong_finds_each_bad_element)
{
	struct ch_ar_pattern p;
	int32_t a[100], b[100];
	cr_assert_eq(ch_ar_pattern_init(&p, CH_INT32, CH_COMM_REDOP_SUM, 3), 0);
	ch_ar_fill_input_host(a, &p, 100, 1, 5);
	memcpy(b, a, sizeof(a));
	cr_assert_eq(ch_ar_count_wrong_host(a, b, 100, 4), 0);
	b[0] ^= 1;
	b[99] = -1;
	b[50] += 64;
	cr_assert_eq(ch_ar_count_wrong_host(a, b, 100, 4), 3);
	/* a stale input (another seed) is wrong almost everywhere */
	ch_ar_fill_input_host(b, &p, 100, 1, 6);
	cr_assert_gt(ch_ar_count_wrong_host(a, b, 100, 4), 90);
}
