#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/ch_common.h"
#include "kernels/ch_kernels.h"
#include "kernels/ch_patterns.h"
#include "kernels/cpu/ch_cpu_ops.h"

/* ---------------------------------------------------------- known answers
 * FLOPs and bytes per element of every kernel, written out by hand from the
 * kernel's formula (BabelStream counting: copy 2, mul 2, add 3, triad 3,
 * dot 2 words; ladder rung k: 2k FLOPs, 2 words). */
struct known {
	char name[16];
	int dt;
	double flops_per_elem;
	double bytes_per_elem;
	double ai;
};

static struct known known_answers[] = {
	{ "copy", CH_FP64, 0, 16, 0 },
	{ "mul", CH_FP64, 1, 16, 1.0 / 16 },
	{ "add", CH_FP64, 1, 24, 1.0 / 24 },
	{ "triad", CH_FP64, 2, 24, 2.0 / 24 },
	{ "dot", CH_FP64, 2, 16, 2.0 / 16 },
	{ "copy", CH_FP32, 0, 8, 0 },
	{ "triad", CH_FP32, 2, 12, 2.0 / 12 },
	{ "fma0", CH_FP64, 0, 16, 0 },
	{ "fma1", CH_FP64, 2, 16, 0.125 },
	{ "fma2", CH_FP64, 4, 16, 0.25 },
	{ "fma4", CH_FP64, 8, 16, 0.5 },
	{ "fma8", CH_FP64, 16, 16, 1 },
	{ "fma16", CH_FP64, 32, 16, 2 },
	{ "fma32", CH_FP64, 64, 16, 4 },
	{ "fma64", CH_FP64, 128, 16, 8 },
	{ "fma128", CH_FP64, 256, 16, 16 },
	{ "fma256", CH_FP64, 512, 16, 32 },
	{ "fma512", CH_FP64, 1024, 16, 64 },
	{ "fma1024", CH_FP64, 2048, 16, 128 },
	{ "fma1024", CH_FP32, 2048, 8, 256 },
	{ "fma1", CH_BF16, 2, 4, 0.5 },
	{ "fma1024", CH_BF16, 2048, 4, 512 },
	{ "gelu", CH_FP32, 33, 8, 33.0 / 8 },
	{ "gelu", CH_BF16, 33, 4, 33.0 / 4 },
};

/* One test looping over the table (each Criterion test is a new process). */
Test(kernels, counts_known_answers)
{
	size_t i;
	for (i = 0; i < sizeof(known_answers) / sizeof(known_answers[0]); i++) {
		const struct known *w = &known_answers[i];
		const struct ch_kernel *k = ch_kernel_find(w->name);
		struct ch_shape s = { .n = 1u << 20, .cols = 1 };
		struct ch_counts c;

		cr_assert_not_null(k, "%s", w->name);
		cr_assert_eq(ch_kernel_counts(k, (enum ch_dtype)w->dt, &s, &c), 0, "%s", w->name);
		cr_assert_float_eq(c.flops, w->flops_per_elem * s.n, 0, "%s %s flops", w->name, ch_dtype_name(w->dt));
		cr_assert_float_eq(c.bytes, w->bytes_per_elem * s.n, 0, "%s %s bytes", w->name, ch_dtype_name(w->dt));
		cr_assert_float_eq(c.ai, w->ai, 1e-15, "%s %s ai", w->name, ch_dtype_name(w->dt));
		/* write-allocate adds one read per word written */
		cr_assert_float_eq(c.bytes_write_allocate,
				   c.bytes + k->writes_per_elem * s.n * ch_dtype_size((enum ch_dtype)w->dt), 0);
	}
}

/* Every kernel of the table has a known answer above (or below for
 * layernorm and gemm): adding a kernel without one fails here. */
Test(kernels, every_kernel_has_a_known_answer)
{
	int n, i;
	size_t j;
	const struct ch_kernel *t = ch_kernel_table(&n);

	cr_assert_eq(n, 20);
	for (i = 0; i < n; i++) {
		int found = !strcmp(t[i].name, "layernorm") || !strcmp(t[i].name, "gemm");
		for (j = 0; j < sizeof(known_answers) / sizeof(known_answers[0]); j++)
			found |= !strcmp(known_answers[j].name, t[i].name);
		cr_assert(found, "kernel %s has no known answer", t[i].name);
	}
}

Test(kernels, layernorm_and_gemm_counts)
{
	struct ch_shape s = { .n = 4096 * 256, .cols = 4096 };
	struct ch_counts c;

	/* 8 FLOPs per element + 5 per row; x read and y written once, gamma
	 * and beta (4096 each) read once */
	cr_assert_eq(ch_kernel_counts(ch_kernel_find("layernorm"), CH_FP32, &s, &c), 0);
	cr_assert_float_eq(c.flops, 8.0 * 4096 * 256 + 5.0 * 256, 0);
	cr_assert_float_eq(c.bytes, 8.0 * 4096 * 256 + 2.0 * 4096 * 4, 0);
	/* gemm: 2 m n k; (m k + k n) inputs + m n output (C not read: beta 0) */
	memset(&s, 0, sizeof(s));
	s.m = 8192;
	s.nn = 4096;
	s.kk = 1024;
	cr_assert_eq(ch_kernel_counts(ch_kernel_find("gemm"), CH_BF16, &s, &c), 0);
	cr_assert_float_eq(c.flops, 2.0 * 8192 * 4096 * 1024, 0);
	cr_assert_float_eq(c.bytes, (8192.0 * 1024 + 1024.0 * 4096) * 2 + 8192.0 * 4096 * 4, 0);
	cr_assert_eq(ch_kernel_counts(ch_kernel_find("gemm"), CH_FP8, &s, &c), 0);
	cr_assert_float_eq(c.bytes, (8192.0 * 1024 + 1024.0 * 4096) * 1 + 8192.0 * 4096 * 2, 0);
	cr_assert_eq(ch_kernel_counts(ch_kernel_find("gemm"), CH_FP64, &s, &c), 0);
	cr_assert_float_eq(c.ai, 2.0 * 8192 * 4096 * 1024 / ((8192.0 * 1024 + 1024.0 * 4096 + 8192.0 * 4096) * 8), 1e-12);
	/* wrong dtype or empty shape */
	cr_assert_eq(ch_kernel_counts(ch_kernel_find("copy"), CH_FP8, &s, &c), CH_ERR_USAGE);
	memset(&s, 0, sizeof(s));
	cr_assert_eq(ch_kernel_counts(ch_kernel_find("gemm"), CH_FP64, &s, &c), CH_ERR_USAGE);
	s.n = 100;
	s.cols = 64;
	cr_assert_eq(ch_kernel_counts(ch_kernel_find("layernorm"), CH_FP32, &s, &c), CH_ERR_USAGE);
}

Test(kernels, rates_roof_and_ridge)
{
	struct ch_counts c = { .flops = 2e9, .bytes = 24e9, .bytes_write_allocate = 32e9, .ai = 2.0 / 24 };
	struct ch_rates r;

	cr_assert_eq(ch_rates(&c, 2.0, &r), 0);
	cr_assert_float_eq(r.gbps, 12.0, 1e-12);
	cr_assert_float_eq(r.gflops, 1.0, 1e-12);
	cr_assert_float_eq(r.gbps_write_allocate, 16.0, 1e-12);
	cr_assert_eq(ch_rates(&c, 0.0, &r), CH_ERR_USAGE);
	/* Williams et al.: min(peak, AI x bw) */
	cr_assert_float_eq(ch_roof_attainable_gflops(0.5, 100, 1000), 50, 1e-12);
	cr_assert_float_eq(ch_roof_attainable_gflops(50, 100, 1000), 1000, 1e-12);
	cr_assert_float_eq(ch_ridge_flop_per_byte(1000, 100), 10, 1e-12);
	cr_assert_float_eq(ch_ridge_flop_per_byte(1000, 0), -1, 0);
	/* % of roof: memory-bound side uses GB/s, compute side GFLOP/s */
	cr_assert_float_eq(ch_pct_of_roof(80, 40, 100, 1000), 80, 1e-12);
	cr_assert_float_eq(ch_pct_of_roof(1, 900, 100, 1000), 90, 1e-12);
	cr_assert_float_eq(ch_pct_of_roof(50, 0, 100, -1), 50, 1e-12);
	cr_assert_float_eq(ch_pct_of_roof(50, 0, -1, -1), -1, 0);
}

Test(kernels, dtypes)
{
	cr_assert_eq(ch_dtype_size(CH_FP64), 8);
	cr_assert_eq(ch_dtype_size(CH_TF32), 4);
	cr_assert_eq(ch_dtype_size(CH_BF16), 2);
	cr_assert_eq(ch_dtype_size(CH_FP8), 1);
	cr_assert_float_eq(ch_dtype_eps(CH_FP64), 2.220446049250313e-16, 0);
	cr_assert_float_eq(ch_dtype_eps(CH_FP32), 1.1920928955078125e-07, 0);
	cr_assert_float_eq(ch_dtype_eps(CH_BF16), 0.0078125, 0);
	cr_assert_float_eq(ch_dtype_eps(CH_FP8), 0.125, 0);
	cr_assert_eq(ch_dtype_parse("tf32"), CH_TF32);
	cr_assert_eq(ch_dtype_parse("fp128"), -1);
	cr_assert_str_eq(ch_dtype_name(CH_FP16), "fp16");
	cr_assert_eq(ch_gemm_out_dtype(CH_FP8), CH_BF16);
	cr_assert_eq(ch_gemm_out_dtype(CH_BF16), CH_FP32);
	cr_assert_eq(ch_gemm_out_dtype(CH_FP64), CH_FP64);
}

/* GEMM inputs are exactly representable, odd multiples of 2^-(digits-1), never 0. */
Test(kernels, gemm_values_exact_in_their_dtype)
{
	static const int digits[] = { 53, 24, 11, 8, 7, 4, 2 };
	size_t d;
	uint64_t i;

	for (d = 0; d < sizeof(digits) / sizeof(digits[0]); d++)
		for (i = 0; i < 4096; i++) {
			double v = ch_gemm_value(CH_GEMM_SEED_A, i, digits[d]);
			double m = ldexp(v, digits[d] - 1);
			cr_assert(v != 0 && fabs(v) < 2.0);
			cr_assert_float_eq(m, floor(m), 0, "not an integer multiple");
			cr_assert_float_eq(fmod(fabs(m), 2.0), 1.0, 0, "even: could round to zero");
			cr_assert_lt(fabs(m), ldexp(1.0, digits[d]));
		}
	/* the dtypes' inputs: tensor-core dtypes with few bits (exact sums) */
	cr_assert_eq(ch_gemm_input_digits(CH_FP64), 53);
	cr_assert_eq(ch_gemm_input_digits(CH_FP32), 24);
	cr_assert_eq(ch_gemm_input_digits(CH_TF32), 7);
	cr_assert_eq(ch_gemm_input_digits(CH_FP16), 7);
	cr_assert_eq(ch_gemm_input_digits(CH_BF16), 7);
	cr_assert_eq(ch_gemm_input_digits(CH_FP8), 2);
	/* fp32 storage keeps the fp32 and fp8 values exactly */
	cr_assert_float_eq((double)(float)ch_gemm_value(7, 3, 24), ch_gemm_value(7, 3, 24), 0);
}

Test(kernels, gelu_within_documented_error)
{
	int m;
	for (m = 0; m < 256; m++) {
		float x = (float)((2 * m - 255) / 64.0);
		double ref = 0.5 * x * (1.0 + tanh(sqrt(2.0 / M_PI) * (x + 0.044715 * (double)x * x * x)));
		cr_assert_leq(fabs(ch_gelu_f32(x) - ref), 0.6 * ldexp(1.0, -23) * (fabs(x) + 1), "x = %g", x);
	}
	/* the clamp keeps large inputs exact: gelu(x) = x for x >> 0, 0 for x << 0 */
	cr_assert_float_eq(ch_gelu_f32(30.0f), 30.0f, 1e-5);
	cr_assert_float_eq(ch_gelu_f32(-30.0f), 0.0f, 1e-5);
}

/* ---------------------------------------------------------- validation */

struct vcase {
	char kernel[16];
	int dt;
};

static struct vcase vcases[] = {
	{ "copy", CH_FP64 }, { "mul", CH_FP64 }, { "add", CH_FP64 }, { "triad", CH_FP64 },
	{ "triad", CH_FP32 }, { "fma0", CH_FP64 }, { "fma1", CH_FP64 }, { "fma2", CH_FP32 },
	{ "fma1024", CH_FP64 }, { "fma1024", CH_FP32 }, { "gelu", CH_FP32 }, { "layernorm", CH_FP32 },
};

/* The CPU backend's output passes the element-by-element check; one
 * corrupted element (the documented test hook) fails it, at that element. */
Test(kernels, cpu_point_valid_and_corruption_caught)
{
	const struct ch_backend *be = ch_backend_find("cpu");
	struct ch_dev *d;
	char why[256];
	size_t i;

	cr_assert_eq(be->open(0, &d, why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(be->alloc_arrays(d, 1u << 20), 0);
	for (i = 0; i < sizeof(vcases) / sizeof(vcases[0]); i++) {
		const struct vcase *v = &vcases[i];
		struct ch_point_spec p = { .k = ch_kernel_find(v->kernel), .dt = (enum ch_dtype)v->dt };
		struct ch_check chk;
		double sec;

		cr_assert_not_null(p.k);
		p.shape.cols = p.k->id == CH_K_LAYERNORM ? 4096 : 1;
		p.shape.n = (1u << 20) / ch_dtype_size(p.dt) / p.shape.cols * p.shape.cols;
		cr_assert_eq(be->setup(d, &p), 0);
		cr_assert_eq(be->run(d, &p, &sec), 0);
		cr_assert_gt(sec, 0);
		cr_assert_eq(be->check(d, &p, &chk), 0);
		cr_assert(chk.ok, "%s %s: %llu bad, first %llu got %g want %g tol %g", v->kernel,
			  ch_dtype_name(v->dt), (unsigned long long)chk.bad, (unsigned long long)chk.first_bad,
			  chk.got, chk.want, chk.tol);
		cr_assert_eq(chk.checked, p.shape.n);
		cr_assert_eq(be->corrupt(d, &p), 0);
		cr_assert_eq(be->check(d, &p, &chk), 0);
		cr_assert_not(chk.ok, "%s %s: corrupted element not caught", v->kernel, ch_dtype_name(v->dt));
		cr_assert_eq(chk.bad, 1, "%s", v->kernel);
		cr_assert_eq(chk.first_bad, p.shape.n / 2, "%s", v->kernel);
	}
	be->close(d);
}

/* The check itself on a hand-made buffer: triad's exact output passes,
 * the same buffer with one element off by one ulp x 8 fails. */
Test(kernels, check_elementwise_on_buffer)
{
	struct ch_shape s = { .n = 1000, .cols = 1 };
	const struct ch_kernel *k = ch_kernel_find("triad");
	struct ch_check c;
	double *buf = malloc(s.n * sizeof(double));
	uint64_t i;

	for (i = 0; i < s.n; i++)
		buf[i] = ch_pat_a(i) + CH_STREAM_SCALAR * ch_pat_b(i);
	cr_assert_eq(ch_check_elementwise(k, CH_FP64, &s, buf, &c), 0);
	cr_assert(c.ok);
	buf[617] = nextafter(nextafter(buf[617], 10), 10) * (1 + 8 * ch_dtype_eps(CH_FP64));
	cr_assert_eq(ch_check_elementwise(k, CH_FP64, &s, buf, &c), 0);
	cr_assert_not(c.ok);
	cr_assert_eq(c.bad, 1);
	cr_assert_eq(c.first_bad, 617);
	buf[617] = NAN; /* NaN never passes */
	cr_assert_eq(ch_check_elementwise(k, CH_FP64, &s, buf, &c), 0);
	cr_assert_not(c.ok);
	cr_assert_eq(ch_check_elementwise(ch_kernel_find("dot"), CH_FP64, &s, buf, &c), CH_ERR_USAGE);
	free(buf);
}

Test(kernels, check_dot)
{
	struct ch_check c;
	double want, abs_sum, got = 0;
	uint64_t i, n = 100003;

	for (i = 0; i < n; i++)
		got += ch_pat_a(i) * ch_pat_b(i);
	ch_dot_expected(CH_FP64, n, &want, &abs_sum);
	cr_assert_float_eq(got, want, 1e-9 * abs_sum);
	ch_check_dot(CH_FP64, n, got, &c);
	cr_assert(c.ok);
	ch_check_dot(CH_FP64, n, got + abs_sum * 1e-6, &c);
	cr_assert_not(c.ok);
}

/* Sampled GEMM entries vs fp64 host dot products: the CPU GEMM passes, one
 * wrong entry (the test hook adds 1 to a sampled entry) fails. */
Test(kernels, cpu_gemm_valid_and_wrong_entry_caught)
{
	const struct ch_backend *be = ch_backend_find("cpu");
	struct ch_point_spec p = { .k = ch_kernel_find("gemm"), .dt = CH_FP64,
				   .shape = { .m = 96, .nn = 64, .kk = 80, .cols = 1 } };
	struct ch_dev *d;
	struct ch_check chk;
	char why[256];
	double sec;
	int dt;

	cr_assert_eq(be->open(0, &d, why, sizeof(why)), 0, "%s", why);
	for (dt = CH_FP64; dt <= CH_FP32; dt++) {
		p.dt = (enum ch_dtype)dt;
		cr_assert_eq(be->setup(d, &p), 0);
		cr_assert_eq(be->run(d, &p, &sec), 0);
		cr_assert_eq(be->check(d, &p, &chk), 0);
		cr_assert(chk.ok, "%s: sample %llu got %g want %g tol %g", ch_dtype_name(dt),
			  (unsigned long long)chk.first_bad, chk.got, chk.want, chk.tol);
		cr_assert_eq(chk.checked, 64);
		cr_assert_eq(be->corrupt(d, &p), 0);
		cr_assert_eq(be->check(d, &p, &chk), 0);
		cr_assert_not(chk.ok);
		cr_assert_eq(chk.bad, 1);
		cr_assert_eq(chk.first_bad, 63);
		be->teardown(d, &p);
	}
	be->close(d);
}

Test(kernels, check_gemm_tolerance_scales_with_k)
{
	struct ch_gemm_sample s[4];
	struct ch_check c;
	uint64_t q, l, k = 512;

	ch_gemm_sample_positions(8, 8, 4, s);
	cr_assert_eq(s[3].i, 7);
	cr_assert_eq(s[3].j, 7);
	for (q = 0; q < 4; q++) {
		s[q].got = 0;
		for (l = 0; l < k; l++)
			s[q].got += ch_gemm_value(CH_GEMM_SEED_A, s[q].i * k + l, 24) *
				    ch_gemm_value(CH_GEMM_SEED_B, s[q].j * k + l, 24);
		s[q].got = (float)s[q].got;
	}
	ch_check_gemm(CH_FP32, 8, 8, k, s, 4, &c);
	cr_assert(c.ok);
	s[2].got += 1.0; /* a wrong entry: far beyond 6 sqrt(k) u R ~ 6 x 23 x 6e-8 x 40 */
	ch_check_gemm(CH_FP32, 8, 8, k, s, 4, &c);
	cr_assert_not(c.ok);
	cr_assert_eq(c.first_bad, 2);
}

/* ------------------------------------------------ the GEMM check's bounds
 * What a device could hand back for sampled entries of C = A B (M = N =
 * 8192, the GPU default, sampled where roofline samples), and whether
 * ch_check_gemm() accepts it: correct results of several accumulation
 * orders and rounding modes pass; a C never written (zeros, or the NaN
 * roofline fills C with), a C rounded to TF32 or computed from
 * TF32-rounded inputs, and an fp8 C of the wrong scale fail. */

#define GS 64
#define GDIM 8192

/* x rounded to @p significant bits: to nearest (even) or toward zero. */
static double round_bits(double x, int p, int truncate)
{
	double sc;
	if (x == 0 || !isfinite(x))
		return x;
	sc = ldexp(1.0, p - 1 - ilogb(x));
	return (truncate ? trunc(x * sc) : nearbyint(x * sc)) / sc;
}

static double to_out(enum ch_dtype dt, double v)
{
	switch (ch_gemm_out_dtype(dt)) {
	case CH_FP64: return v;
	case CH_FP32: return (float)v;
	default: return round_bits(v, 8, 0); /* bf16 */
	}
}

enum gsim { G_SEQ, G_BLOCK32, G_SEQ_TRUNC, G_SEQ_TRUNC_MARGIN, G_ZERO, G_NAN, G_TF32_OUT, G_TF32_IN, G_HALF };

/* Entry (i, j) as a device would compute it. G_SEQ: one product after the
 * other into an accumulator of ch_gemm_accum_bits() bits, rounded to
 * nearest (fp32: fmaf; fp64: fma); G_BLOCK32: blocks of 32 summed exactly
 * then added to it (a tensor core's k-chunks); G_SEQ_TRUNC: G_SEQ
 * truncating (a tensor core's accumulator); G_SEQ_TRUNC_MARGIN: that with
 * ch_gemm_accum_margin_bits() fewer bits; G_TF32_IN: inputs rounded to TF32 first;
 * G_TF32_OUT: the exact result rounded to TF32; G_HALF: half the exact
 * result (a wrong scale). */
static double device_entry(enum ch_dtype dt, uint64_t i, uint64_t j, uint64_t k, enum gsim how)
{
	const int d = ch_gemm_input_digits(dt);
	const int p = ch_gemm_accum_bits(dt) - (how == G_SEQ_TRUNC_MARGIN ? ch_gemm_accum_margin_bits(dt) : 0);
	struct ch_gemm_expect e;
	double acc = 0, blk = 0;
	float acc32 = 0;
	uint64_t l;

	switch (how) {
	case G_ZERO:
		return 0;
	case G_NAN:
		return NAN;
	case G_TF32_OUT:
		ch_gemm_expected(dt, i, j, k, &e);
		return to_out(dt, round_bits(e.want, 11, 0));
	case G_HALF:
		ch_gemm_expected(dt, i, j, k, &e);
		return to_out(dt, 0.5 * e.want);
	default:
		break;
	}
	for (l = 0; l < k; l++) {
		double a = ch_gemm_value(CH_GEMM_SEED_A, i * k + l, d);
		double b = ch_gemm_value(CH_GEMM_SEED_B, j * k + l, d);
		if (how == G_TF32_IN) {
			a = round_bits(a, 11, 0);
			b = round_bits(b, 11, 0);
		}
		if (how == G_BLOCK32) {
			blk += a * b; /* exact: products of <= 24-bit values, few of them */
			if (l % 32 == 31 || l == k - 1) {
				acc = p == 53 ? acc + blk : round_bits(acc + blk, p, 0);
				blk = 0;
			}
		} else if (p == 53) {
			acc = fma(a, b, acc);
		} else if (p == 24 && dt == CH_FP32) {
			acc32 = fmaf((float)a, (float)b, acc32);
			acc = acc32;
		} else {
			acc = round_bits(acc + a * b, p, how == G_SEQ_TRUNC || how == G_SEQ_TRUNC_MARGIN);
		}
	}
	return to_out(dt, acc);
}

static void device_c(enum ch_dtype dt, uint64_t k, enum gsim how, struct ch_gemm_sample *s)
{
	int q;
	ch_gemm_sample_positions(GDIM, GDIM, GS, s);
	for (q = 0; q < GS; q++)
		s[q].got = device_entry(dt, s[q].i, s[q].j, k, how);
}

static int gemm_check_ok(enum ch_dtype dt, uint64_t k, enum gsim how, struct ch_check *c)
{
	struct ch_gemm_sample s[GS];
	struct ch_check own;
	if (!c)
		c = &own;
	device_c(dt, k, how, s);
	ch_check_gemm(dt, GDIM, GDIM, k, s, GS, c);
	return c->ok;
}

Test(gemm_check, correct_results_pass_every_order_and_dtype, .timeout = 120)
{
	static const enum ch_dtype dts[] = { CH_FP64, CH_FP32, CH_TF32, CH_BF16, CH_FP16, CH_FP8 };
	static const uint64_t ks[] = { 256, 8192 };
	struct ch_check c;
	size_t d, x;

	for (d = 0; d < sizeof(dts) / sizeof(dts[0]); d++)
		for (x = 0; x < 2; x++) {
			cr_assert(gemm_check_ok(dts[d], ks[x], G_SEQ, &c), "%s k=%llu sequential: sample %llu got %.17g want %.17g tol %g",
				  ch_dtype_name(dts[d]), (unsigned long long)ks[x], (unsigned long long)c.first_bad, c.got, c.want, c.tol);
			cr_assert_lt(c.worst_ratio, 1.0);
			cr_assert(gemm_check_ok(dts[d], ks[x], G_BLOCK32, &c), "%s k=%llu blocked: worst %g",
				  ch_dtype_name(dts[d]), (unsigned long long)ks[x], c.worst_ratio);
			if (dts[d] != CH_FP64 && dts[d] != CH_FP32) /* tensor cores may truncate */
				cr_assert(gemm_check_ok(dts[d], ks[x], G_SEQ_TRUNC, &c), "%s k=%llu truncating: sample %llu got %.17g want %.17g tol %g",
					  ch_dtype_name(dts[d]), (unsigned long long)ks[x], (unsigned long long)c.first_bad, c.got, c.want, c.tol);
		}
}

Test(gemm_check, unwritten_and_tf32_c_fail_every_dtype, .timeout = 120)
{
	static const enum ch_dtype dts[] = { CH_FP64, CH_FP32, CH_TF32, CH_BF16, CH_FP16, CH_FP8 };
	static const uint64_t ks[] = { 256, 8192 };
	struct ch_check c;
	size_t d, x;

	for (d = 0; d < sizeof(dts) / sizeof(dts[0]); d++)
		for (x = 0; x < 2; x++) {
			const char *nm = ch_dtype_name(dts[d]);
			unsigned long long kk = ks[x];
			cr_assert_not(gemm_check_ok(dts[d], ks[x], G_ZERO, &c), "%s k=%llu: a zero C passed", nm, kk);
			cr_assert_gt(c.bad, GS / 2, "%s k=%llu: only %llu of %d zero entries caught", nm, kk,
				     (unsigned long long)c.bad, GS);
			cr_assert_not(gemm_check_ok(dts[d], ks[x], G_NAN, &c), "%s k=%llu: a NaN C passed", nm, kk);
			cr_assert_eq(c.bad, GS);
			if (dts[d] == CH_FP8) {
				/* fp8 writes bf16, coarser than TF32: a TF32-rounded C is a
				 * correct one there; a wrong scale is what fp8 can get wrong */
				cr_assert(gemm_check_ok(dts[d], ks[x], G_TF32_OUT, &c), "fp8 k=%llu: TF32 < bf16", kk);
				cr_assert_not(gemm_check_ok(dts[d], ks[x], G_HALF, &c), "fp8 k=%llu: half-scale C passed", kk);
				continue;
			}
			cr_assert_not(gemm_check_ok(dts[d], ks[x], G_TF32_OUT, &c), "%s k=%llu: a TF32-rounded C passed (worst %g)",
				      nm, kk, c.worst_ratio);
			if (dts[d] == CH_FP64 || dts[d] == CH_FP32) /* inputs TF32 cannot hold */
				cr_assert_not(gemm_check_ok(dts[d], ks[x], G_TF32_IN, &c), "%s k=%llu: TF32 inputs passed (worst %g)",
					      nm, kk, c.worst_ratio);
		}
}

/* The tensor-core dtypes' bound rests on exact partial sums: at k = 256
 * and 8192 every sampled entry is exact in the accumulator the check
 * assumes (the documented bits less the margin), so the tolerance is the
 * output's rounding alone; and a correct C from an accumulator of exactly
 * those fewer bits, truncating, still passes. */
Test(gemm_check, tensor_core_sums_exact_within_the_margin, .timeout = 120)
{
	static const enum ch_dtype dts[] = { CH_TF32, CH_BF16, CH_FP16, CH_FP8 };
	static const uint64_t ks[] = { 256, 8192 };
	struct ch_gemm_sample s[GS];
	struct ch_gemm_expect e;
	size_t d, x;
	int q;

	cr_assert_eq(ch_gemm_accum_bits(CH_FP8) - ch_gemm_accum_margin_bits(CH_FP8), 12);
	cr_assert_eq(ch_gemm_accum_bits(CH_BF16) - ch_gemm_accum_margin_bits(CH_BF16), 22);
	cr_assert_eq(ch_gemm_accum_margin_bits(CH_FP32), 0);
	cr_assert_eq(ch_gemm_accum_margin_bits(CH_FP64), 0);
	ch_gemm_sample_positions(GDIM, GDIM, GS, s);
	for (d = 0; d < sizeof(dts) / sizeof(dts[0]); d++)
		for (x = 0; x < 2; x++) {
			const double eo = ch_dtype_eps(ch_gemm_out_dtype(dts[d]));
			const int dg = ch_gemm_input_digits(dts[d]);
			for (q = 0; q < GS; q++) {
				ch_gemm_expected(dts[d], s[q].i, s[q].j, ks[x], &e);
				cr_assert_lt(e.range, 1024, "%s k=%llu sample %d: range %g", ch_dtype_name(dts[d]),
					     (unsigned long long)ks[x], q, e.range);
				cr_assert_float_eq(ch_gemm_tolerance(dts[d], ks[x], &e),
						   (eo + ch_dtype_eps(CH_FP64)) * fabs(e.want), 1e-12);
				cr_assert_float_eq(ldexp(e.want, 2 * (dg - 1)), nearbyint(ldexp(e.want, 2 * (dg - 1))), 0,
						   "not a multiple of the products' unit");
			}
			cr_assert(gemm_check_ok(dts[d], ks[x], G_SEQ_TRUNC_MARGIN, NULL),
				  "%s k=%llu: a truncating accumulator of the margin's bits failed", ch_dtype_name(dts[d]),
				  (unsigned long long)ks[x]);
		}
}

/* A device sum one bit off in one entry, or an accumulator coarser than
 * the margin allows over a long sum, fails: the bound is not so wide that
 * anything passes. */
Test(gemm_check, one_wrong_entry_fails_every_dtype, .timeout = 120)
{
	static const enum ch_dtype dts[] = { CH_FP64, CH_FP32, CH_TF32, CH_BF16, CH_FP16, CH_FP8 };
	struct ch_gemm_sample s[GS];
	struct ch_check c;
	size_t d;

	for (d = 0; d < sizeof(dts) / sizeof(dts[0]); d++) {
		/* the product unit 2^-2(d-1) for the tensor-core dtypes (one
		 * product's last bit); 1e-3 |value| for fp32 and fp64 */
		const int dg = ch_gemm_input_digits(dts[d]);
		device_c(dts[d], 8192, G_SEQ, s);
		ch_check_gemm(dts[d], GDIM, GDIM, 8192, s, GS, &c);
		cr_assert(c.ok, "%s", ch_dtype_name(dts[d]));
		s[17].got += dts[d] == CH_FP64 || dts[d] == CH_FP32 ? 1e-3 * fabs(s[17].got)
								: 4 * ch_dtype_eps(ch_gemm_out_dtype(dts[d])) * fabs(s[17].got) +
									  ldexp(1.0, -2 * (dg - 1));
		ch_check_gemm(dts[d], GDIM, GDIM, 8192, s, GS, &c);
		cr_assert(!c.ok && c.bad == 1 && c.first_bad == 17, "%s: one wrong entry passed", ch_dtype_name(dts[d]));
	}
}

/* Every ISA build of the CPU kernels computes the same, exact, results. */
Test(kernels, cpu_isa_variants_agree)
{
	static const char *const isas[] = { "sse2", "avx2+fma", "avx512" };
	const size_t n = 3000;
	double *x = malloc(n * sizeof(double)), *y = malloc(n * sizeof(double));
	float *xf = malloc(n * sizeof(float)), *yf = malloc(n * sizeof(float));
	size_t i, v;
	int ran = 0;

	for (i = 0; i < n; i++) {
		x[i] = ch_pat_a(i);
		xf[i] = (float)ch_pat_b(i);
	}
	for (v = 0; v < 3; v++) {
		const struct ch_cpu_ops *ops = ch_cpu_ops_select(isas[v]);
		if (!ops)
			continue; /* this CPU lacks it */
		ran++;
		ops->ladder_f64(x, y, n, 7, CH_LADDER_ALPHA, CH_LADDER_BETA);
		for (i = 0; i < n; i++)
			cr_assert_float_eq(y[i], CH_LADDER_BETA - x[i], 0, "%s ladder at %zu", isas[v], i);
		ops->gelu_f32(xf, yf, n);
		for (i = 0; i < n; i++)
			cr_assert_float_eq(yf[i], ch_gelu_f32(xf[i]), 2e-7 * (fabs(xf[i]) + 1), "%s gelu at %zu", isas[v], i);
	}
	cr_assert_geq(ran, 1);
	free(x);
	free(y);
	free(xf);
	free(yf);
}

/* The streaming-store kernels give the plain kernels' results (within the
 * stream tolerance: one FMA contraction may differ) for every ISA this CPU
 * runs, at an unaligned start and with a tail, and leave nothing unwritten. */
Test(kernels, streaming_stores_match_plain_stores)
{
	static const char *const isas[] = { "avx512", "avx2+fma", "sse2" };
	static const enum ch_kernel_id ops_id[] = { CH_K_COPY, CH_K_MUL, CH_K_ADD, CH_K_TRIAD, CH_K_DOT };
	const size_t n = 4099, off = 3;
	double *a = malloc((n + off) * sizeof(double)), *b = malloc((n + off) * sizeof(double));
	double *c1 = malloc((n + off) * sizeof(double)), *c2 = malloc((n + off) * sizeof(double));
	float *af = malloc((n + off) * sizeof(float)), *bf = malloc((n + off) * sizeof(float));
	float *cf1 = malloc((n + off) * sizeof(float)), *cf2 = malloc((n + off) * sizeof(float));
	size_t i;
	int v, o, ran = 0;

	cr_assert(a && b && c1 && c2 && af && bf && cf1 && cf2);
	for (i = 0; i < n + off; i++) {
		a[i] = ch_pat_a(i);
		b[i] = ch_pat_b(i);
		af[i] = (float)a[i];
		bf[i] = (float)b[i];
	}
	for (v = 0; v < 3; v++) {
		const struct ch_cpu_ops *ops = ch_cpu_ops_select(isas[v]);
		if (!ops || !ops->stream_nt_f64)
			continue;
		ran++;
		for (o = 0; o < 5; o++) {
			double d1 = 0, d2 = 0;
			for (i = 0; i < n + off; i++) {
				c1[i] = -1;
				c2[i] = -2;
				cf1[i] = -1;
				cf2[i] = -2;
			}
			ops->stream_f64(ops_id[o], a + off, b + off, c1 + off, n, CH_STREAM_SCALAR, &d1);
			ops->stream_nt_f64(ops_id[o], a + off, b + off, c2 + off, n, CH_STREAM_SCALAR, &d2);
			cr_assert_float_eq(d1, d2, 0, "%s dot", isas[v]);
			for (i = off; o < 4 && i < n + off; i++)
				cr_assert_float_eq(c2[i], c1[i], 4 * DBL_EPSILON * fabs(c1[i]), "%s op %d fp64 at %zu", isas[v], o, i);
			cr_assert(c2[0] == -2 && c2[1] == -2 && c2[2] == -2, "%s op %d wrote before the range", isas[v], o);
			ops->stream_f32(ops_id[o], af + off, bf + off, cf1 + off, n, (float)CH_STREAM_SCALAR, &d1);
			ops->stream_nt_f32(ops_id[o], af + off, bf + off, cf2 + off, n, (float)CH_STREAM_SCALAR, &d2);
			for (i = off; o < 4 && i < n + off; i++)
				cr_assert_float_eq(cf2[i], cf1[i], 4 * FLT_EPSILON * fabsf(cf1[i]), "%s op %d fp32 at %zu", isas[v], o, i);
		}
	}
#if defined(__x86_64__)
	cr_assert_geq(ran, 1, "x86-64 has streaming stores from SSE2 on");
#endif
	free(a); free(b); free(c1); free(c2);
	free(af); free(bf); free(cf1); free(cf2);
}
