/*
 * gemm-check-table - the GEMM check's arithmetic on the sampled entries of
 * the GPU default M = N = 8192 at k = 8192 and 256, the table of
 * docs/roofline.md ("GEMM"): per dtype the mean |value|, mean prefix-sum
 * range R, entries whose partial sums are exact in the accumulator the
 * check assumes, mean tolerance / |value|, and how many of the 64 entries a
 * zero C and a TF32-rounded C fail (fp8: a half-scale C). An entry whose
 * exact value is 0 (tolerance 0) is left out of the mean ratio; a zero C
 * passes there.
 * Built and run by scripts/gemm-check-table; prints a Markdown table.
 */
#include <math.h>
#include <stdio.h>

#include "kernels/ch_kernels.h"

#define GS 64
#define GDIM 8192

static double round_bits(double x, int p)
{
	double sc;
	if (x == 0 || !isfinite(x))
		return x;
	sc = ldexp(1.0, p - 1 - ilogb(x));
	return nearbyint(x * sc) / sc;
}

static double to_out(enum ch_dtype dt, double v)
{
	switch (ch_gemm_out_dtype(dt)) {
	case CH_FP64: return v;
	case CH_FP32: return (float)v;
	default: return round_bits(v, 8);
	}
}

static void row(const char *label, enum ch_dtype dt, uint64_t k)
{
	struct ch_gemm_sample s[GS];
	const double exact_below = ldexp(1.0, ch_gemm_accum_bits(dt) - ch_gemm_accum_margin_bits(dt) -
						      2 * (ch_gemm_input_digits(dt) - 1));
	double sv = 0, sr = 0, st = 0;
	int q, exact = 0, zero = 0, tf = 0, nonzero = 0;

	ch_gemm_sample_positions(GDIM, GDIM, GS, s);
	for (q = 0; q < GS; q++) {
		struct ch_gemm_expect e;
		double tol, alt;
		ch_gemm_expected(dt, s[q].i, s[q].j, k, &e);
		tol = ch_gemm_tolerance(dt, k, &e);
		sv += fabs(e.want);
		sr += e.range;
		if (e.want != 0) { /* an exact zero sum: tolerance 0 */
			st += tol / fabs(e.want);
			nonzero++;
		}
		exact += dt != CH_FP64 && dt != CH_FP32 && e.range < exact_below;
		zero += !(fabs(e.want) <= tol);
		alt = dt == CH_FP8 ? to_out(dt, 0.5 * e.want) : to_out(dt, round_bits(e.want, 11));
		tf += !(fabs(alt - e.want) <= tol);
	}
	printf("| %s, %llu | %.0f | %.0f | %d | %.2g | %d fail | %d fail%s |\n", label, (unsigned long long)k, sv / GS,
	       sr / GS, exact, nonzero ? st / nonzero : 0, zero, tf, dt == CH_FP8 ? " (half-scale C)" : "");
}

int main(void)
{
	printf("| dtype, k | mean \\|value\\| | mean R | entries exact | tolerance / \\|value\\| (mean) | zero C | TF32-rounded C |\n");
	printf("|---|---|---|---|---|---|---|\n");
	row("fp64", CH_FP64, 8192);
	row("fp32", CH_FP32, 8192);
	row("fp32", CH_FP32, 256);
	row("tf32, bf16, fp16", CH_BF16, 8192);
	row("tf32, bf16, fp16", CH_BF16, 256);
	row("fp8", CH_FP8, 8192);
	row("fp8", CH_FP8, 256);
	return 0;
}
