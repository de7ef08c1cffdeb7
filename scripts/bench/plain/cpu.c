/*
 * cpu.c - the plain CPU loops `make bench` compares roofline with: OpenMP
 * triad and copy (fp64), with plain stores or with streaming (non-temporal)
 * stores, and direct cblas_dgemm / cblas_sgemm calls. Compiled with the
 * project's flags (-O2 -fopenmp, no -march); arrays 2 MiB-aligned with
 * transparent huge pages advised and first-touched by their threads, as
 * roofline's; GEMM operands random in (-1, 1), A transposed ("TN") as ours.
 *
 * Usage: cpu triad|copy plain|stream N REPS    fp64 arrays of N elements
 *        cpu dgemm|sgemm G REPS                m = n = k = G
 * Prints "median GB/s|GFLOP/s  best  threads" over REPS timed calls after one
 * warm-up (bytes counted as BabelStream: triad 3, copy 2 words per element;
 * threads: the OpenMP team's size, or OpenBLAS's thread count for GEMM, so
 * that the caller can check that both sides ran on every core).
 */
#include <cblas.h>
#include <immintrin.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void *huge(size_t bytes)
{
	size_t b = (bytes + (1 << 21) - 1) / (1 << 21) * (1 << 21);
	void *p = aligned_alloc(1 << 21, b);
	if (p)
		madvise(p, b, MADV_HUGEPAGE);
	return p;
}

static void report(double *t, int reps, double work, int threads)
{
	qsort(t, (size_t)reps, sizeof(*t), cmp);
	printf("%.4f %.4f %d\n", work / (reps % 2 ? t[reps / 2] : (t[reps / 2 - 1] + t[reps / 2]) / 2) / 1e9,
	       work / t[0] / 1e9, threads);
}

int main(int argc, char **argv)
{
	double t[64];
	int reps, r;
	size_t n, i;

	if (argc != 4 && argc != 5)
		return 2;
	if (!strcmp(argv[1], "dgemm") || !strcmp(argv[1], "sgemm")) {
		int g = atoi(argv[2]), dbl = argv[1][0] == 'd';
		size_t es = dbl ? 8 : 4, e = (size_t)g * (size_t)g;
		unsigned long long x = 88172645463325252ULL;
		void *a, *b, *c;
		reps = atoi(argv[3]);
		if (g < 16 || reps < 1 || reps > 60)
			return 2;
		a = huge(e * es);
		b = huge(e * es);
		c = huge(e * es);
		if (!a || !b || !c)
			return 4;
		for (i = 0; i < e; i++) {
			double va, vb;
			x ^= x << 13; x ^= x >> 7; x ^= x << 17;
			va = (double)(x >> 11) / 4503599627370496.0 - 1.0;
			x ^= x << 13; x ^= x >> 7; x ^= x << 17;
			vb = (double)(x >> 11) / 4503599627370496.0 - 1.0;
			if (dbl) {
				((double *)a)[i] = va;
				((double *)b)[i] = vb;
			} else {
				((float *)a)[i] = (float)va;
				((float *)b)[i] = (float)vb;
			}
		}
		for (r = 0; r <= reps; r++) { /* call 0 is the warm-up */
			double t0 = now();
			if (dbl)
				cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, g, g, g, 1.0, a, g, b, g, 0.0, c, g);
			else
				cblas_sgemm(CblasColMajor, CblasTrans, CblasNoTrans, g, g, g, 1.0f, a, g, b, g, 0.0f, c, g);
			if (r)
				t[r - 1] = now() - t0;
		}
		report(t, reps, 2.0 * g * g * (double)g, openblas_get_num_threads());
		return 0;
	}
	{
		int copy = !strcmp(argv[1], "copy"), nt = argc == 5 && !strcmp(argv[2], "stream");
		double *a, *b, *c, s = 0.4;
		int threads = 0;
		n = strtoull(argv[argc - 2], NULL, 10);
		reps = atoi(argv[argc - 1]);
		if (n < 1024 || reps < 1 || reps > 60)
			return 2;
		a = huge(n * 8);
		b = huge(n * 8);
		c = huge(n * 8);
		if (!a || !b || !c)
			return 4;
#pragma omp parallel
		{
#pragma omp single
			threads = omp_get_num_threads();
		}
#pragma omp parallel for schedule(static)
		for (i = 0; i < n; i++) {
			a[i] = 1.0 + (double)(i % 128) / 128.0;
			b[i] = 0.5;
			c[i] = 0.5;
		}
		for (r = 0; r <= reps; r++) {
			double t0 = now();
			if (nt && copy) {
#pragma omp parallel for schedule(static)
				for (i = 0; i < n / 2; i++)
					_mm_stream_pd(c + 2 * i, _mm_load_pd(a + 2 * i));
				_mm_sfence();
			} else if (nt) {
				__m128d vs = _mm_set1_pd(s);
#pragma omp parallel for schedule(static)
				for (i = 0; i < n / 2; i++)
					_mm_stream_pd(c + 2 * i, _mm_add_pd(_mm_load_pd(a + 2 * i),
									    _mm_mul_pd(vs, _mm_load_pd(b + 2 * i))));
				_mm_sfence();
			} else if (copy) {
#pragma omp parallel for schedule(static)
				for (i = 0; i < n; i++)
					c[i] = a[i];
			} else {
#pragma omp parallel for schedule(static)
				for (i = 0; i < n; i++)
					c[i] = a[i] + s * b[i];
			}
			if (r)
				t[r - 1] = now() - t0;
		}
		report(t, reps, (copy ? 16.0 : 24.0) * (double)n, threads);
		free(a);
		free(b);
		free(c);
	}
	return 0;
}
