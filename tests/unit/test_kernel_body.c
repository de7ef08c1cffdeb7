/*
 * The CUDA stream kernels' and FMA ladders' per-thread bodies
 * (kernels/ch_kernel_body.h), run on the host for every thread of small
 * grids: over lengths that are not a multiple of the vector width, arrays
 * that start off 16-byte alignment, one element and none, against the plain
 * loop and against ch_check_elementwise()/ch_check_dot() on the patterns of
 * kernels/ch_patterns.h; and the index arithmetic at sizes above 2^32
 * elements without allocating them.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/ch_kernel_body.h"
#include "kernels/ch_kernels.h"
#include "kernels/ch_patterns.h"

static const uint64_t sizes[] = { 0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 17, 255, 256, 257, 1023, 4099 };
static const uint64_t grids[] = { 1, 3, 32, 256, 5000 };
static const int ops[] = { CH_K_COPY, CH_K_MUL, CH_K_ADD, CH_K_TRIAD };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))
#define NGRIDS (sizeof(grids) / sizeof(grids[0]))
#define PAD 8

/* arrays with @off elements before element 0, inside 16-byte aligned storage */
struct arrays {
	void *sa, *sb, *sc;
};

static void *alloc16(size_t bytes)
{
	void *p = aligned_alloc(16, (bytes + 15) / 16 * 16);
	cr_assert_not_null(p);
	return p;
}

static double ref_op(int op, double a, double b, double s)
{
	return CH_KB_OP(op, a, b, s);
}

/* run every thread of the grid (in reverse order, so that no thread's work
 * depends on another's having run first) */
static void run_f32(int op, const float *a, const float *b, float *c, uint64_t n, uint64_t nt)
{
	unsigned w = ch_kb_width(4, ch_kb_reads_a(op) ? a : NULL, ch_kb_reads_b(op) ? b : NULL, c);
	uint64_t t;
	for (t = nt; t-- > 0;)
		ch_kb_stream_f32(op, a, b, c, n, (float)CH_STREAM_SCALAR, w, t, nt);
}

static void run_f64(int op, const double *a, const double *b, double *c, uint64_t n, uint64_t nt)
{
	unsigned w = ch_kb_width(2, ch_kb_reads_a(op) ? a : NULL, ch_kb_reads_b(op) ? b : NULL, c);
	uint64_t t;
	for (t = nt; t-- > 0;)
		ch_kb_stream_f64(op, a, b, c, n, CH_STREAM_SCALAR, w, t, nt);
}

Test(kernel_body, stream_f32_matches_plain_loop_every_size_grid_and_offset)
{
	const uint64_t nmax = 4099 + PAD;
	float *a = alloc16(nmax * sizeof(float)), *b = alloc16(nmax * sizeof(float));
	float *c = alloc16((nmax + PAD) * sizeof(float));
	size_t si, gi, oi, off;

	for (oi = 0; oi < 4; oi++) {
		off = oi; /* 0: aligned; 1..3: 4, 8, 12 bytes off */
		for (size_t i = 0; i < nmax; i++) {
			a[i] = (float)ch_pat_a(i);
			b[i] = (float)ch_pat_b(i);
		}
		for (size_t q = 0; q < sizeof(ops) / sizeof(ops[0]); q++)
			for (si = 0; si < NSIZES; si++)
				for (gi = 0; gi < NGRIDS; gi++) {
					uint64_t n = sizes[si], i;
					const float *ao = a + off, *bo = b + off;
					float *co = c + off;
					for (i = 0; i < nmax + PAD; i++)
						c[i] = NAN;
					run_f32(ops[q], ao, bo, co, n, grids[gi]);
					for (i = 0; i < n; i++) {
						float want = (float)ref_op(ops[q], ao[i], bo[i], (float)CH_STREAM_SCALAR);
						if (ops[q] == CH_K_MUL)
							want = (float)CH_STREAM_SCALAR * bo[i];
						else if (ops[q] == CH_K_TRIAD)
							want = ao[i] + (float)CH_STREAM_SCALAR * bo[i];
						cr_assert(fabsf(co[i] - want) <= 2e-7f * fabsf(want),
							  "op %d off %zu n %llu grid %llu: c[%llu] = %g, plain loop %g", ops[q], off,
							  (unsigned long long)n, (unsigned long long)grids[gi],
							  (unsigned long long)i, co[i], want);
					}
					/* nothing written outside [0, n) */
					for (i = 0; i < off; i++)
						cr_assert(isnan(c[i]), "op %d: element before the start written", ops[q]);
					for (i = off + n; i < nmax + PAD; i++)
						cr_assert(isnan(c[i]), "op %d n %llu off %zu: element %llu past the end written",
							  ops[q], (unsigned long long)n, off, (unsigned long long)(i - off));
				}
	}
	free(a);
	free(b);
	free(c);
}

Test(kernel_body, stream_f64_matches_plain_loop_every_size_grid_and_offset)
{
	const uint64_t nmax = 4099 + PAD;
	double *a = alloc16(nmax * sizeof(double)), *b = alloc16(nmax * sizeof(double));
	double *c = alloc16((nmax + PAD) * sizeof(double));
	size_t si, gi, off;

	for (size_t i = 0; i < nmax; i++) {
		a[i] = ch_pat_a(i);
		b[i] = ch_pat_b(i);
	}
	for (off = 0; off < 2; off++)
		for (size_t q = 0; q < sizeof(ops) / sizeof(ops[0]); q++)
			for (si = 0; si < NSIZES; si++)
				for (gi = 0; gi < NGRIDS; gi++) {
					uint64_t n = sizes[si], i;
					for (i = 0; i < nmax + PAD; i++)
						c[i] = NAN;
					run_f64(ops[q], a + off, b + off, c + off, n, grids[gi]);
					for (i = 0; i < n; i++) {
						double want = ref_op(ops[q], a[off + i], b[off + i], CH_STREAM_SCALAR);
						cr_assert(c[off + i] == want, "op %d off %zu n %llu grid %llu: c[%llu] = %g, plain %g",
							  ops[q], off, (unsigned long long)n, (unsigned long long)grids[gi],
							  (unsigned long long)i, c[off + i], want);
					}
					for (i = 0; i < off; i++)
						cr_assert(isnan(c[i]));
					for (i = off + n; i < nmax + PAD; i++)
						cr_assert(isnan(c[i]), "op %d n %llu: element past the end written", ops[q],
							  (unsigned long long)n);
				}
	free(a);
	free(b);
	free(c);
}

/* the kernels' output over the patterns passes the validation the GPU's
 * output goes through, and one wrong or unwritten tail element fails it */
Test(kernel_body, stream_output_passes_validation_and_a_bad_tail_fails)
{
	static const char *const names[] = { "copy", "mul", "add", "triad" };
	const uint64_t n = 1027; /* 1027 = 4 x 256 + 3: a three-element tail in fp32, one in fp64 */
	float *a = alloc16(n * sizeof(float)), *b = alloc16(n * sizeof(float)), *c = alloc16(n * sizeof(float));
	double *a8 = alloc16(n * sizeof(double)), *b8 = alloc16(n * sizeof(double)), *c8 = alloc16(n * sizeof(double));
	struct ch_shape s = { .n = n, .cols = 1 };
	struct ch_check chk;
	uint64_t i;

	for (i = 0; i < n; i++) {
		a[i] = (float)ch_pat_a(i);
		b[i] = (float)ch_pat_b(i);
		a8[i] = ch_pat_a(i);
		b8[i] = ch_pat_b(i);
	}
	for (size_t q = 0; q < 4; q++) {
		const struct ch_kernel *k = ch_kernel_find(names[q]);
		cr_assert_not_null(k);
		run_f32(ops[q], a, b, c, n, 7);
		cr_assert_eq(ch_check_elementwise(k, CH_FP32, &s, c, &chk), 0);
		cr_assert(chk.ok, "%s fp32: element %llu got %g want %g", names[q], (unsigned long long)chk.first_bad,
			  chk.got, chk.want);
		run_f64(ops[q], a8, b8, c8, n, 7);
		cr_assert_eq(ch_check_elementwise(k, CH_FP64, &s, c8, &chk), 0);
		cr_assert(chk.ok, "%s fp64", names[q]);
		/* the last tail element never written */
		c[n - 1] = NAN;
		cr_assert_eq(ch_check_elementwise(k, CH_FP32, &s, c, &chk), 0);
		cr_assert(!chk.ok && chk.first_bad == n - 1, "%s: an unwritten tail element passed", names[q]);
		c8[n - 1] += 1.0;
		cr_assert_eq(ch_check_elementwise(k, CH_FP64, &s, c8, &chk), 0);
		cr_assert(!chk.ok && chk.bad == 1, "%s: a wrong tail element passed", names[q]);
	}
	free(a);
	free(b);
	free(c);
	free(a8);
	free(b8);
	free(c8);
}

Test(kernel_body, dot_parts_sum_to_the_exact_dot_every_size_and_offset)
{
	const uint64_t nmax = 4099 + 2;
	float *a = alloc16(nmax * sizeof(float)), *b = alloc16(nmax * sizeof(float));
	double *a8 = alloc16(nmax * sizeof(double)), *b8 = alloc16(nmax * sizeof(double));
	size_t si, gi, off;

	for (uint64_t i = 0; i < nmax; i++) {
		a[i] = (float)ch_pat_a(i);
		b[i] = (float)ch_pat_b(i);
		a8[i] = ch_pat_a(i);
		b8[i] = ch_pat_b(i);
	}
	for (off = 0; off < 2; off++)
		for (si = 0; si < NSIZES; si++)
			for (gi = 0; gi < NGRIDS; gi++) {
				uint64_t n = sizes[si], nt = grids[gi], t;
				unsigned w4 = ch_kb_width(4, a + off, b + off, NULL), w2 = ch_kb_width(2, a8 + off, b8 + off, NULL);
				double s4 = 0, s2 = 0, plain = 0;
				struct ch_check chk;
				for (t = 0; t < nt; t++) {
					s4 += ch_kb_dot_f32(a + off, b + off, n, w4, t, nt);
					s2 += ch_kb_dot_f64(a8 + off, b8 + off, n, w2, t, nt);
				}
				for (t = 0; t < n; t++)
					plain += a8[off + t] * b8[off + t];
				/* every product is exact and every partial sum too (16-bit products) */
				cr_assert(s4 == plain && s2 == plain, "n %llu grid %llu off %zu: %g %g vs %g",
					  (unsigned long long)n, (unsigned long long)nt, off, s4, s2, plain);
				if (off == 0 && n > 0) {
					ch_check_dot(CH_FP32, n, s4, &chk);
					cr_assert(chk.ok);
					ch_check_dot(CH_FP32, n, s4 - a[n - 1] * b[n - 1], &chk);
					cr_assert(!chk.ok, "n %llu: the dot without its last element passed", (unsigned long long)n);
				}
			}
	free(a);
	free(b);
	free(a8);
	free(b8);
}

Test(kernel_body, ladders_match_plain_loop_and_validation)
{
	static const uint64_t ln[] = { 1, 2, 3, 4, 5, 7, 13, 64, 257, 1029 };
	static const int ks[] = { 0, 1, 2, 7, 64 };
	const uint64_t nmax = 1029 + 1;
	float *x = alloc16(nmax * sizeof(float)), *y = alloc16((nmax + PAD) * sizeof(float));
	double *x8 = alloc16(nmax * sizeof(double)), *y8 = alloc16((nmax + PAD) * sizeof(double));
	size_t li, ki, gi;

	for (uint64_t i = 0; i < nmax; i++) {
		x[i] = (float)ch_pat_a(i);
		x8[i] = ch_pat_a(i);
	}
	for (li = 0; li < sizeof(ln) / sizeof(ln[0]); li++)
		for (ki = 0; ki < sizeof(ks) / sizeof(ks[0]); ki++)
			for (gi = 0; gi < NGRIDS; gi++) {
				uint64_t n = ln[li], nt = grids[gi], i, t;
				int k = ks[ki], q;
				for (i = 0; i < nmax + PAD; i++) {
					y[i] = NAN;
					y8[i] = NAN;
				}
				for (t = nt; t-- > 0;) {
					ch_kb_ladder_f32(x, y, n, k, (float)CH_LADDER_ALPHA, (float)CH_LADDER_BETA, t, nt);
					ch_kb_ladder_f64(x8, y8, n, k, CH_LADDER_ALPHA, CH_LADDER_BETA, t, nt);
				}
				for (i = 0; i < n; i++) {
					float r = x[i];
					double r8 = x8[i];
					for (q = 0; q < k; q++) {
						r = fmaf(r, (float)CH_LADDER_ALPHA, (float)CH_LADDER_BETA);
						r8 = fma(r8, CH_LADDER_ALPHA, CH_LADDER_BETA);
					}
					cr_assert(y[i] == r && y8[i] == r8, "n %llu k %d grid %llu: y[%llu] = %g / %g, plain %g / %g",
						  (unsigned long long)n, k, (unsigned long long)nt, (unsigned long long)i, y[i],
						  y8[i], r, r8);
					cr_assert(r8 == (k % 2 ? CH_LADDER_BETA - ch_pat_a(i) : ch_pat_a(i)));
				}
				for (i = n; i < nmax + PAD; i++)
					cr_assert(isnan(y[i]) && isnan(y8[i]), "ladder n %llu: element %llu past the end written",
						  (unsigned long long)n, (unsigned long long)i);
			}
	free(x);
	free(y);
	free(x8);
	free(y8);
}

/* index arithmetic above 2^31 and 2^32 elements: 64-bit throughout */
Test(kernel_body, index_arithmetic_above_2_to_the_32)
{
	const uint64_t big[] = { (1ULL << 31) + 3, (1ULL << 32) + 1, (1ULL << 33) + 7, (5ULL << 32) + 2 };
	size_t q;

	for (q = 0; q < sizeof(big) / sizeof(big[0]); q++) {
		uint64_t n = big[q];
		cr_assert_eq(ch_kb_nvec(n, 4), n / 4);
		cr_assert_eq(ch_kb_tail_first(n, 4, 0), n - n % 4);
		cr_assert_eq(ch_kb_tail_first(n, 2, 1), n - n % 2 + 1);
		/* the last vector's last lane is the element just before the tail */
		cr_assert_eq(ch_kb_elem(ch_kb_nvec(n, 4) - 1, 4, 3) + 1, ch_kb_tail_first(n, 4, 0));
		cr_assert_eq(ch_kb_elem(ch_kb_nvec(n, 4) - 1, 4, 3), n - n % 4 - 1);
		/* grid: capped at 32 blocks per SM, never 0, fits the launch's unsigned */
		cr_assert_eq(ch_kb_blocks(n, 256, 132), 132 * 32);
		cr_assert_leq(ch_kb_blocks(n / 4 + 1, 256, 1 << 20), (uint64_t)UINT32_MAX);
	}
	cr_assert_eq(ch_kb_blocks(0, 256, 132), 1);
	cr_assert_eq(ch_kb_blocks(1, 256, 132), 1);
	cr_assert_eq(ch_kb_blocks(257, 256, 132), 2);
	cr_assert_eq(ch_kb_blocks(UINT64_MAX, 256, 0), 32); /* no overflow in the rounding up */
}

/* the kernels' element walk at a size above 2^32: one thread's vectors and
 * tail, over a window of indexes, read and write only memory inside a
 * small buffer that stands for the array's last elements */
Test(kernel_body, stream_tail_of_a_huge_array_written_once)
{
	const uint64_t n = (1ULL << 32) + 7, nt = 1024;
	/* thread t's tail elements: (n / 4) 4 + t for t < n % 4 */
	uint64_t t, written = 0;
	for (t = 0; t < nt; t++) {
		uint64_t e = ch_kb_tail_first(n, 4, t);
		for (; e < n; e += nt) {
			cr_assert_geq(e, n - 3);
			written++;
		}
	}
	cr_assert_eq(written, n % 4);
}
