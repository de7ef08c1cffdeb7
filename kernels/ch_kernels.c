#include "kernels/ch_kernels.h"
#include "base/ch_common.h"
#include "kernels/ch_patterns.h"
#include "kernels/cpu/ch_cpu_ops.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const family_names[CH_NFAMILIES] = {
	"stream", "ladder", "elementwise", "gemm"
};

const char *ch_family_name(enum ch_family f)
{
	return (int)f >= 0 && f < CH_NFAMILIES ? family_names[f] : NULL;
}

/* ------------------------------------------------------------ kernel table */

#define F64 CH_DT_BIT(CH_FP64)
#define F32 CH_DT_BIT(CH_FP32)
#define TF32 CH_DT_BIT(CH_TF32)
#define BF16 CH_DT_BIT(CH_BF16)
#define F16 CH_DT_BIT(CH_FP16)
#define F8 CH_DT_BIT(CH_FP8)

#define RUNG(K) { "fma" #K, CH_K_FMA, CH_FAM_LADDER, K, 2.0 * K, 0, 1, 1, 0, \
	F64 | F32 | BF16, F64 | F32 | BF16, "y = x, then " #K " times y = alpha*y + beta (alpha = -1, beta = 3)" }

static const struct ch_kernel table[] = {
	/* name    id          family        k  flops/e  /row  rd  wr  /col */
	{ "copy",  CH_K_COPY,  CH_FAM_STREAM, 0, 0, 0, 1, 1, 0, F64 | F32, F64, "c[i] = a[i]" },
	{ "mul",   CH_K_MUL,   CH_FAM_STREAM, 0, 1, 0, 1, 1, 0, F64 | F32, F64, "c[i] = s*b[i] (s = 0.4)" },
	{ "add",   CH_K_ADD,   CH_FAM_STREAM, 0, 1, 0, 2, 1, 0, F64 | F32, F64, "c[i] = a[i] + b[i]" },
	{ "triad", CH_K_TRIAD, CH_FAM_STREAM, 0, 2, 0, 2, 1, 0, F64 | F32, F64, "c[i] = a[i] + s*b[i]" },
	{ "dot",   CH_K_DOT,   CH_FAM_STREAM, 0, 2, 0, 2, 0, 0, F64 | F32, F64, "sum += a[i]*b[i] (accumulated in fp64)" },
	RUNG(0), RUNG(1), RUNG(2), RUNG(4), RUNG(8), RUNG(16), RUNG(32), RUNG(64),
	RUNG(128), RUNG(256), RUNG(512), RUNG(1024),
	{ "gelu", CH_K_GELU, CH_FAM_ELEMENTWISE, 0, CH_GELU_FLOPS, 0, 1, 1, 0, F32 | BF16, F32 | BF16,
	  "c[i] = 0.5 b (1 + tanh(sqrt(2/pi) (b + 0.044715 b^3))), b = b[i], fp32 arithmetic" },
	{ "layernorm", CH_K_LAYERNORM, CH_FAM_ELEMENTWISE, 0, CH_LN_FLOPS_PER_ELEM, CH_LN_FLOPS_PER_ROW, 1, 1, 2,
	  F32 | BF16, F32 | BF16, "rows of b: c = (b - mean) / sqrt(var + 1e-5) * gamma + beta, fp32 arithmetic" },
	{ "gemm", CH_K_GEMM, CH_FAM_GEMM, 0, 2, 0, 0, 0, 0, F64 | F32 | TF32 | BF16 | F16 | F8,
	  F64 | F32 | TF32 | BF16 | F16 | F8, "C = A B (A^T stored, beta = 0), random inputs" },
};

const struct ch_kernel *ch_kernel_table(int *n)
{
	*n = (int)(sizeof(table) / sizeof(table[0]));
	return table;
}

const struct ch_kernel *ch_kernel_find(const char *name)
{
	size_t i;
	for (i = 0; name && i < sizeof(table) / sizeof(table[0]); i++)
		if (!strcmp(table[i].name, name))
			return &table[i];
	return NULL;
}

enum ch_dtype ch_gemm_out_dtype(enum ch_dtype in)
{
	switch (in) {
	case CH_FP64: return CH_FP64;
	case CH_FP8: return CH_BF16; /* the fp8 combination NVIDIA's LtFp8Matmul sample uses */
	default: return CH_FP32;
	}
}

int ch_kernel_counts(const struct ch_kernel *k, enum ch_dtype dt,
		     const struct ch_shape *s, struct ch_counts *out)
{
	double size;

	if ((int)dt < 0 || dt >= CH_NDTYPES || !(k->dtypes & CH_DT_BIT(dt)))
		return CH_ERR_USAGE;
	size = (double)ch_dtype_size(dt);
	if (k->family == CH_FAM_GEMM) {
		double m = (double)s->m, n = (double)s->nn, kk = (double)s->kk;
		if (!s->m || !s->nn || !s->kk)
			return CH_ERR_USAGE;
		out->flops = k->flops_per_elem * m * n * kk;
		out->bytes = (m * kk + kk * n) * size + m * n * (double)ch_dtype_size(ch_gemm_out_dtype(dt));
		out->bytes_write_allocate = out->bytes + m * n * (double)ch_dtype_size(ch_gemm_out_dtype(dt));
	} else {
		double n = (double)s->n, cols = (double)s->cols;
		if (!s->n || !s->cols || s->n % s->cols)
			return CH_ERR_USAGE;
		out->flops = k->flops_per_elem * n + k->flops_per_row * (n / cols);
		out->bytes = (k->reads_per_elem + k->writes_per_elem) * n * size + k->reads_per_col * cols * size;
		out->bytes_write_allocate = out->bytes + k->writes_per_elem * n * size;
	}
	out->ai = out->bytes > 0 ? out->flops / out->bytes : 0;
	return 0;
}

int ch_rates(const struct ch_counts *c, double time_sec, struct ch_rates *out)
{
	if (!(time_sec > 0))
		return CH_ERR_USAGE;
	out->gbps = c->bytes / time_sec / 1e9;
	out->gflops = c->flops / time_sec / 1e9;
	out->gbps_write_allocate = c->bytes_write_allocate / time_sec / 1e9;
	return 0;
}

double ch_roof_attainable_gflops(double ai, double bw_gbps, double peak_gflops)
{
	double mem = ai * bw_gbps;
	return mem < peak_gflops ? mem : peak_gflops;
}

double ch_pct_of_roof(double gbps, double gflops, double bw_gbps, double peak_gflops)
{
	double p = -1;
	if (bw_gbps > 0)
		p = 100.0 * gbps / bw_gbps;
	if (peak_gflops > 0 && 100.0 * gflops / peak_gflops > p)
		p = 100.0 * gflops / peak_gflops;
	return p;
}

double ch_ridge_flop_per_byte(double peak_gflops, double bw_gbps)
{
	return peak_gflops > 0 && bw_gbps > 0 ? peak_gflops / bw_gbps : -1;
}

/* ------------------------------------------------------------ validation */

static double load_value(enum ch_dtype dt, const void *p, uint64_t i)
{
	switch (dt) {
	case CH_FP64:
		return ((const double *)p)[i];
	case CH_FP32:
	case CH_TF32:
		return ((const float *)p)[i];
	case CH_BF16: {
		uint32_t bits = (uint32_t)((const uint16_t *)p)[i] << 16;
		float f;
		memcpy(&f, &bits, sizeof(f));
		return f;
	}
	default:
		return NAN;
	}
}

static void check_init(struct ch_check *c)
{
	memset(c, 0, sizeof(*c));
	c->ok = 1;
}

/* Record one comparison; not thread-safe (callers merge per-thread results). */
static void check_one(struct ch_check *c, uint64_t idx, double got, double want, double tol)
{
	double err = fabs(got - want);
	double ratio = tol > 0 ? err / tol : (err > 0 ? INFINITY : 0);

	c->checked++;
	if (!(err <= tol)) { /* NaN counts as bad */
		if (!c->bad || idx < c->first_bad) {
			c->first_bad = idx;
			c->got = got;
			c->want = want;
			c->tol = tol;
		}
		c->bad++;
		c->ok = 0;
		ratio = isnan(ratio) ? INFINITY : ratio;
	} else if (!c->bad && ratio >= c->worst_ratio) {
		c->got = got;
		c->want = want;
		c->tol = tol;
	}
	if (ratio > c->worst_ratio)
		c->worst_ratio = ratio;
}

/* GELU of x in double: the analytic value. */
static double gelu_ref(double x)
{
	return 0.5 * x * (1.0 + tanh(sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}

/* The first bad element of [0, n), and the values there (after a fast
 * pass found some). */
static void check_first_bad(struct ch_check *out, uint64_t first, double got, double want, double tol)
{
	out->first_bad = first;
	out->got = got;
	out->want = want;
	out->tol = tol;
}

/* Layernorm's expected values: when cols is a multiple of b's 256-element
 * period, every row holds the same values, so one row of expected values
 * and tolerances serves all rows. */
static int ln_row_expect(uint64_t base, uint64_t cols, enum ch_dtype dt, double *want, double *tol)
{
	const double eps = ch_dtype_eps(dt), eps32 = ch_dtype_eps(CH_FP32);
	const double growth = (2.0 * (double)cols + 16.0) * eps32;
	double sum = 0, var = 0, mean, rstd, maxabs = 0;
	uint64_t j;

	for (j = 0; j < cols; j++) {
		double x = ch_pat_b(base + j);
		sum += x;
		if (fabs(x) > maxabs)
			maxabs = fabs(x);
	}
	mean = sum / (double)cols;
	for (j = 0; j < cols; j++) {
		double dd = ch_pat_b(base + j) - mean;
		var += dd * dd;
	}
	rstd = 1.0 / sqrt(var / (double)cols + CH_LN_EPS);
	for (j = 0; j < cols; j++) {
		double x = ch_pat_b(base + j), g = ch_pat_gamma(j), be = ch_pat_beta(j);
		want[j] = (x - mean) * rstd * g + be;
		tol[j] = eps * fabs(want[j]) + growth * (fabs(g) * rstd * (maxabs + fabs(x - mean)) + fabs(be));
	}
	return 0;
}

/*
 * Every elementwise output is periodic in i: a[i] has period 128 and b[i]
 * period 256, so the expected value and tolerance of element i are
 * want[i mod P], tol[i mod P] with P = 256, or P = cols for LayerNorm when
 * cols is a multiple of 256 (every row then holds the same values). The
 * check is one vectorisable pass over the output against these tables.
 */
/* One pass over the output, block by block, with the vectorised check of
 * the CPU kernels (kernels/cpu/ch_cpu_ops.h). */
#define CHECK_PASS(FN, T)                                                                       \
	_Pragma("omp parallel for schedule(static) reduction(+:bad) reduction(max:worst)")     \
	for (blk = 0; blk < nblk; blk++) {                                                      \
		const uint64_t base = (uint64_t)blk * P;                                        \
		const uint64_t m = n - base < P ? n - base : P;                                 \
		double w = 0;                                                                   \
		bad += (uint64_t)ops->FN((const T *)c + base, want, tol, itol, m, &w);          \
		worst = w > worst ? w : worst;                                                  \
	}

int ch_check_elementwise(const struct ch_kernel *k, enum ch_dtype dt,
			 const struct ch_shape *s, const void *c,
			 struct ch_check *out)
{
	const double eps = ch_dtype_eps(dt), eps32 = ch_dtype_eps(CH_FP32);
	const uint64_t n = s->n;
	const struct ch_cpu_ops *ops = ch_cpu_ops_select(NULL);
	uint64_t P = 256, j, bad = 0, nblk;
	double *want = NULL, *tol = NULL, *itol = NULL, worst = 0;
	long long blk;

	check_init(out);
	if (dt != CH_FP64 && dt != CH_FP32 && dt != CH_BF16)
		return CH_ERR_USAGE;
	if (!(k->dtypes & CH_DT_BIT(dt)) || k->id == CH_K_DOT || k->family == CH_FAM_GEMM)
		return CH_ERR_USAGE;
	if (k->id == CH_K_LAYERNORM) {
		if (!s->cols || n % s->cols)
			return CH_ERR_USAGE;
		P = s->cols;
	}
	want = malloc(P * sizeof(double));
	tol = malloc(P * sizeof(double));
	itol = malloc(P * sizeof(double));
	if (!want || !tol || !itol) {
		free(want);
		free(tol);
		free(itol);
		return CH_ERR_RUNTIME;
	}
	if (k->id == CH_K_LAYERNORM && P % 256) {
		/* rows differ: check row by row (slow; only for row lengths that
		 * are not a multiple of 256) */
		uint64_t r, rows = n / P;
		for (r = 0; r < rows; r++) {
			ln_row_expect(r * P, P, dt, want, tol);
			for (j = 0; j < P; j++)
				check_one(out, r * P + j, load_value(dt, c, r * P + j), want[j], tol[j]);
		}
		free(want);
		free(tol);
		free(itol);
		return 0;
	}
	if (k->id == CH_K_LAYERNORM) {
		ln_row_expect(0, P, dt, want, tol);
	} else {
		for (j = 0; j < P; j++) {
			double a = ch_pat_a(j), b = ch_pat_b(j), sb;
			switch (k->id) {
			case CH_K_COPY:
				want[j] = a;
				tol[j] = 0;
				break;
			case CH_K_FMA:
				/* alpha = -1, beta = 3: x, 3 - x, x, ... exactly */
				want[j] = k->k % 2 == 0 ? a : CH_LADDER_BETA - a;
				tol[j] = 2 * eps * fabs(want[j]);
				break;
			case CH_K_MUL:
				want[j] = CH_STREAM_SCALAR * b;
				tol[j] = 4 * eps * fabs(want[j]);
				break;
			case CH_K_GELU:
				want[j] = gelu_ref(b);
				tol[j] = eps * fabs(want[j]) + 16 * eps32 * (fabs(b) + 1.0);
				break;
			default: /* add, triad: s*b is rounded in dt before the add */
				sb = k->id == CH_K_ADD ? b : CH_STREAM_SCALAR * b;
				want[j] = a + sb;
				tol[j] = 4 * eps * (fabs(a) + fabs(sb));
			}
		}
	}
	for (j = 0; j < P; j++)
		itol[j] = tol[j] > 0 ? 1.0 / tol[j] : 0.0;
	nblk = (n + P - 1) / P;
	if (dt == CH_FP64) {
		CHECK_PASS(check_f64, double)
	} else if (dt == CH_FP32) {
		CHECK_PASS(check_f32, float)
	} else {
		CHECK_PASS(check_bf16, uint16_t)
	}
	out->checked = n;
	out->bad = bad;
	out->ok = bad == 0;
	out->worst_ratio = worst;
	if (bad) {
		/* find the first bad element (rare: only for the report) */
		for (j = 0; j < n; j++) {
			double got = load_value(dt, c, j), err = fabs(got - want[j % P]);
			if (!(err <= tol[j % P])) {
				check_first_bad(out, j, got, want[j % P], tol[j % P]);
				break;
			}
		}
		out->worst_ratio = INFINITY;
	} else {
		/* report the element closest to its tolerance */
		out->got = out->want = want[0];
		out->tol = tol[0];
	}
	free(want);
	free(tol);
	free(itol);
	return 0;
}

void ch_dot_expected(enum ch_dtype dt, uint64_t n, double *want, double *abs_sum)
{
	/* a[i] b[i] has period 256 (37 i mod 128, 97 i mod 256); every
	 * product has at most 16 significant bits, so the sums below are exact
	 * in fp64 for any n the memory can hold. */
	double per = 0, per_abs = 0, rest = 0, rest_abs = 0;
	uint64_t i, full = n / 256, tail = n % 256;

	(void)dt;
	for (i = 0; i < 256; i++) {
		double p = ch_pat_a(i) * ch_pat_b(i);
		per += p;
		per_abs += fabs(p);
		if (i < tail) {
			rest += p;
			rest_abs += fabs(p);
		}
	}
	*want = per * (double)full + rest;
	*abs_sum = per_abs * (double)full + rest_abs;
}

void ch_check_dot(enum ch_dtype dt, uint64_t n, double got, struct ch_check *out)
{
	double want, abs_sum, tol;

	check_init(out);
	ch_dot_expected(dt, n, &want, &abs_sum);
	tol = ((double)n + 2) * ch_dtype_eps(CH_FP64) * abs_sum + 2 * ch_dtype_eps(dt) * fabs(want);
	check_one(out, 0, got, want, tol);
}

void ch_gemm_sample_positions(uint64_t m, uint64_t n, int count,
			      struct ch_gemm_sample *out)
{
	int s;
	for (s = 0; s < count; s++) {
		uint64_t h = ch_splitmix64(0xc0ffee00ULL + (uint64_t)s);
		switch (s) {
		case 0: out[s].i = 0; out[s].j = 0; break;
		case 1: out[s].i = m - 1; out[s].j = 0; break;
		case 2: out[s].i = 0; out[s].j = n - 1; break;
		case 3: out[s].i = m - 1; out[s].j = n - 1; break;
		default:
			out[s].i = (h >> 32) % m;
			out[s].j = (h & 0xffffffffULL) % n;
		}
		out[s].got = 0;
	}
}

int ch_gemm_accum_margin_bits(enum ch_dtype dt)
{
	return dt == CH_FP64 || dt == CH_FP32 ? 0 : CH_GEMM_ACCUM_MARGIN_BITS;
}

double ch_gemm_accum_eps(enum ch_dtype dt)
{
	switch (dt) {
	case CH_FP64: return ldexp(1.0, -53);
	case CH_FP32: return ldexp(1.0, -24);
	default: /* tensor cores: 2^(1-p) (truncation too), p less the margin */
		return ldexp(1.0, 1 - (ch_gemm_accum_bits(dt) - ch_gemm_accum_margin_bits(dt)));
	}
}

int ch_gemm_input_digits(enum ch_dtype dt)
{
	switch (dt) {
	case CH_FP64: return CH_GEMM_DIGITS_FP64;
	case CH_FP32: return CH_GEMM_DIGITS_FP32;
	case CH_FP8: return CH_GEMM_DIGITS_FP8;
	default: return CH_GEMM_DIGITS_TENSOR; /* tf32, bf16, fp16 */
	}
}

int ch_gemm_accum_bits(enum ch_dtype dt)
{
	switch (dt) {
	case CH_FP64: return 53;
	case CH_FP8: return 14;
	default: return 24;
	}
}

/* Neumaier's compensated sum (Higham 2002, section 4.3): the running sum
 * and its correction; the value is s + c. */
struct csum {
	double s, c;
};

static void csum_add(struct csum *a, double x)
{
	double t = a->s + x;
	if (fabs(a->s) >= fabs(x))
		a->c += (a->s - t) + x;
	else
		a->c += (x - t) + a->s;
	a->s = t;
}

void ch_gemm_expected(enum ch_dtype dt, uint64_t i, uint64_t j, uint64_t k, struct ch_gemm_expect *out)
{
	const int digits = ch_gemm_input_digits(dt);
	struct csum sum = { 0, 0 }, abs_sum = { 0, 0 };
	double lo = 0, hi = 0;
	uint64_t l;

	for (l = 0; l < k; l++) {
		double a = ch_gemm_value(CH_GEMM_SEED_A, i * k + l, digits);
		double b = ch_gemm_value(CH_GEMM_SEED_B, j * k + l, digits);
		double p;
		/* a b is exact in fp64 for every dtype but fp64 (2 x 24 bits at
		 * most); an fp64 product's rounding, 2^-53 |a b| of random sign,
		 * is far inside the fp64 tolerance */
		csum_add(&sum, a * b);
		csum_add(&abs_sum, fabs(a * b));
		p = sum.s + sum.c;
		if (p < lo)
			lo = p;
		if (p > hi)
			hi = p;
	}
	out->want = sum.s + sum.c;
	out->abs_sum = abs_sum.s + abs_sum.c;
	out->range = hi - lo;
}

double ch_gemm_tolerance(enum ch_dtype dt, uint64_t k, const struct ch_gemm_expect *e)
{
	const double eo = ch_dtype_eps(ch_gemm_out_dtype(dt)), ea = ch_gemm_accum_eps(dt);
	/* products of two values m 2^-(d-1) are multiples of 2^-2(d-1): a
	 * partial sum below 2^p of those units is exact in p bits; p is the
	 * accumulator's documented bits less the margin */
	const double exact_below = ldexp(1.0, ch_gemm_accum_bits(dt) - ch_gemm_accum_margin_bits(dt) -
					      2 * (ch_gemm_input_digits(dt) - 1));
	double acc;

	if (e->range < exact_below)
		acc = 0; /* every partial sum is exact: only the output is rounded */
	else if (dt != CH_FP64 && dt != CH_FP32)
		acc = (double)(k > 1 ? k - 1 : 1) * ea * e->range; /* tensor cores: any rounding, truncation included */
	else
		acc = CH_GEMM_CHECK_LAMBDA * sqrt((double)k) * ea * e->range;
	return acc * (1 + eo) + eo * fabs(e->want) + ch_dtype_eps(CH_FP64) * fabs(e->want);
}

void ch_check_gemm(enum ch_dtype dt, uint64_t m, uint64_t n, uint64_t k,
		   const struct ch_gemm_sample *s, int count, struct ch_check *out)
{
	int q;

	(void)m;
	(void)n;
	check_init(out);
	for (q = 0; q < count; q++) {
		struct ch_gemm_expect e;
		ch_gemm_expected(dt, s[q].i, s[q].j, k, &e);
		check_one(out, (uint64_t)q, s[q].got, e.want, ch_gemm_tolerance(dt, k, &e));
	}
}
