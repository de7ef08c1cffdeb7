/*
 * gpu-check-ref.cu - plain cuBLAS / cuBLASLt reference for scripts/gpu-check.
 *
 * A deliberately small program, independent of libclusterhealth, that makes
 * the plainest library calls a user would write, so that scripts/gpu-check
 * can put roofline's figures beside them in the same run:
 *   - GEMM, M = N = K = --size (default 8192), on the very inputs of
 *     roofline's GEMM points (kernels/ch_patterns.h: ch_gemm_value() with
 *     roofline's seeds and significant bits per dtype; GEMM speed on
 *     power-limited GPUs depends on the data), the same call as roofline's
 *     (kernels/cuda/ch_cuda.c), so that the two compare like with like:
 *     cublasLtMatmul, "TN" (A stored K x M,
 *     op(A) = A^T; B K x N; C M x N), alpha 1, beta 0, 64 MiB of workspace,
 *     the same types:
 *       fp64  fp64 in and out, CUBLAS_COMPUTE_64F
 *       fp32  fp32 in and out, CUBLAS_COMPUTE_32F (no TF32)
 *       tf32  fp32 in and out, CUBLAS_COMPUTE_32F_FAST_TF32
 *       bf16  bf16 in, fp32 out, CUBLAS_COMPUTE_32F
 *       fp16  fp16 in, fp32 out, CUBLAS_COMPUTE_32F
 *       fp8   e4m3 in, bf16 out, CUBLAS_COMPUTE_32F (compute capability 8.9+)
 *     and the first algorithm of cublasLtMatmulAlgoGetHeuristic (the plain
 *     call; roofline keeps the fastest of the first 8). FLOPs = 2 M N K.
 *     Each call is timed alone with CUDA events after --warmup calls
 *     (default 3); the median and the best of --iters calls are printed.
 *   - device-to-device cudaMemcpy of --copy-bytes (default 1 GiB), bandwidth
 *     counted as BabelStream counts copy: bytes read + bytes written.
 * Every figure is validated: GEMM on 32 sampled entries (C filled with NaN
 * before the calls, so an entry never written fails) against a compensated
 * fp64 dot product on the host of the very inputs the device used,
 * tolerance 2 u_in sum|a b| + acc + 2 u_out |c| (u = unit roundoff of the
 * input rounding, the accumulation and the output type), where R is the
 * range of the prefix sums (the largest sum of consecutive products) and
 * acc = 6 sqrt(K) u_acc R for fp64 and fp32 (FMA rounded to nearest: a
 * probabilistic bound, Higham and Mary, SIAM J. Sci. Comput. 41(5), 2019,
 * that a TF32 substitution exceeds), (K - 1) u_acc R for the tensor-core
 * types (any rounding, truncation included); the same bounds as roofline's
 * check (kernels/ch_kernels.h, ch_gemm_tolerance()). The copy is checked on
 * 4096 sampled words. An invalid figure is reported as such, never as a
 * result.
 *
 * Output: a human table on stdout and, with --out FILE, tab-separated
 * records (read by scripts/gpu-check-summary):
 *   version  <name>  <value>
 *   device   <index> <name> <cc> <sms> <memory_bytes> <l2_bytes>
 *   gemm     <dtype> <n> <iters> <median_tflops> <best_tflops> <valid 0|1> <max_err_over_tol> <api>
 *   copy     d2d <bytes> <iters> <median_gbps> <best_gbps> <valid 0|1>
 *   skip     <what> <reason>
 * Exit codes (the project's): 0 ok, 1 a validation failed, 2 usage error,
 * 3 no CUDA device, 4 CUDA/cuBLAS run-time error.
 *
 * --list prints the CUDA devices, one line each, in the format of
 * nvidia-smi --query-gpu=index,name,driver_version,pci.bus_id,memory.total,
 * compute_cap --format=csv,noheader (driver_version "-": the CUDA runtime
 * does not know it), so that scripts/gpu-check finds GPUs where nvidia-smi
 * is missing; exit 3 when there is none.
 *
 * Build (from the repository root): nvcc -O2 -std=c++17 -I. -o gpu-check-ref
 * tools/gpu-check-ref.cu -lcublasLt -lcublas
 */
#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include "kernels/ch_kernels.h"
#include "kernels/ch_patterns.h"
#include <cuda_runtime.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

enum { EXIT_OK = 0, EXIT_CHECK = 1, EXIT_USAGE = 2, EXIT_UNAVAILABLE = 3, EXIT_RUNTIME = 4 };

static const char *prog = "gpu-check-ref";

static void err(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s: error: ", prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

#define CUDA_TRY(call)                                                              \
	do {                                                                        \
		cudaError_t e_ = (call);                                            \
		if (e_ != cudaSuccess) {                                            \
			err("%s:%d: '%s' failed: %s", __FILE__, __LINE__, #call,    \
			    cudaGetErrorString(e_));                                \
			return -EXIT_RUNTIME;                                       \
		}                                                                   \
	} while (0)

#define CUBLAS_TRY(call)                                                            \
	do {                                                                        \
		cublasStatus_t s_ = (call);                                         \
		if (s_ != CUBLAS_STATUS_SUCCESS) {                                  \
			err("%s:%d: '%s' failed: %s", __FILE__, __LINE__, #call,    \
			    cublasGetStatusString(s_));                             \
			return -EXIT_RUNTIME;                                       \
		}                                                                   \
	} while (0)

/* ---------------------------------------------------------------- data */

__host__ __device__ static inline uint32_t mix32(uint64_t x)
{
	/* splitmix64 finaliser, top 32 bits */
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	x ^= x >> 31;
	return (uint32_t)(x >> 32);
}

template <typename T> __device__ static inline T from_float(float f) { return (T)f; }
template <> __device__ inline __nv_bfloat16 from_float<__nv_bfloat16>(float f) { return __float2bfloat16(f); }
template <> __device__ inline __half from_float<__half>(float f) { return __float2half(f); }
template <> __device__ inline __nv_fp8_e4m3 from_float<__nv_fp8_e4m3>(float f) { return __nv_fp8_e4m3(f); }

/* roofline's GEMM inputs (ch_gemm_value(), exact in every dtype, never
 * zero: zeros run faster than random data) */
template <typename T> __global__ void fill_gemm(T *p, size_t n, uint64_t seed, int digits)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		p[i] = from_float<T>((float)ch_gemm_value(seed, i, digits));
}
template <> __global__ void fill_gemm<double>(double *p, size_t n, uint64_t seed, int digits)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		p[i] = ch_gemm_value(seed, i, digits);
}

template <typename T> static double to_double(T v) { return (double)v; }
template <> double to_double<__nv_bfloat16>(__nv_bfloat16 v) { return (double)__bfloat162float(v); }
template <> double to_double<__half>(__half v) { return (double)__half2float(v); }
template <> double to_double<__nv_fp8_e4m3>(__nv_fp8_e4m3 v) { return (double)(float)v; }

/* ---------------------------------------------------------------- options */

struct opts {
	int n = 8192;
	int iters = 10;
	int warmup = 3;
	bool list = false;
	int device = 0;
	size_t copy_bytes = (size_t)1 << 30;
	std::string dtypes = "fp64,fp32,tf32,bf16,fp16,fp8";
	const char *out = nullptr;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: %s [--size N] [--iters N] [--warmup N] [--dtypes LIST] [--copy-bytes BYTES]\n"
		"                     [--device I] [--out FILE]\n"
		"       %s --list\n"
		"\n"
		"cuBLASLt GEMM (roofline's call: TN, its types) and cudaMemcpy reference for\n"
		"scripts/gpu-check.\n"
		"  --size N           M = N = K of every GEMM (default 8192, 256..32768)\n"
		"  --iters N          timed calls per GEMM and copy (default 10, 1..1000)\n"
		"  --warmup N         untimed calls before them (default 3, 0..100)\n"
		"  --dtypes LIST      comma list of fp64,fp32,tf32,bf16,fp16,fp8 (default all)\n"
		"  --copy-bytes B     device-to-device copy size in bytes (default 1073741824;\n"
		"                     0 skips the copy)\n"
		"  --device I         CUDA device index (default 0)\n"
		"  --out FILE         also write tab-separated records to FILE\n"
		"  --list             list the CUDA devices as nvidia-smi's csv query does\n"
		"Exit: 0 ok, 1 a validation failed, 2 usage, 3 no CUDA device, 4 run-time error.\n"
		"Example: %s --size 4096 --dtypes bf16,fp8 --out ref.tsv\n",
		prog, prog, prog);
}

static int parse_long(const char *opt, const char *arg, long long lo, long long hi, long long *v)
{
	char *end;
	errno = 0;
	long long x = strtoll(arg, &end, 10);
	if (errno || end == arg || *end || x < lo || x > hi) {
		err("option '%s' needs an integer in [%lld, %lld], not '%s'", opt, lo, hi, arg);
		return -EXIT_USAGE;
	}
	*v = x;
	return 0;
}

static const char *const all_dtypes[] = { "fp64", "fp32", "tf32", "bf16", "fp16", "fp8" };

static int parse_opts(int argc, char **argv, opts *o)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage(stdout);
			return 1;
		}
		if (!strcmp(a, "--list")) {
			o->list = true;
			continue;
		}
		if (i + 1 >= argc) {
			err("unknown option or missing value: '%s'", a);
			usage(stderr);
			return -EXIT_USAGE;
		}
		const char *v = argv[++i];
		long long x;
		int rc = 0;
		if (!strcmp(a, "--size")) {
			if (!(rc = parse_long(a, v, 256, 32768, &x)))
				o->n = (int)x;
		} else if (!strcmp(a, "--iters")) {
			if (!(rc = parse_long(a, v, 1, 1000, &x)))
				o->iters = (int)x;
		} else if (!strcmp(a, "--warmup")) {
			if (!(rc = parse_long(a, v, 0, 100, &x)))
				o->warmup = (int)x;
		} else if (!strcmp(a, "--device")) {
			if (!(rc = parse_long(a, v, 0, 1023, &x)))
				o->device = (int)x;
		} else if (!strcmp(a, "--copy-bytes")) {
			if (!(rc = parse_long(a, v, 0, (long long)1 << 40, &x)))
				o->copy_bytes = (size_t)x & ~(size_t)7;
		} else if (!strcmp(a, "--dtypes")) {
			std::string s = v;
			size_t p = 0;
			while (p <= s.size()) {
				size_t q = s.find(',', p);
				std::string t = s.substr(p, q == std::string::npos ? std::string::npos : q - p);
				bool ok = false;
				for (const char *d : all_dtypes)
					ok |= t == d;
				if (!ok) {
					err("option '--dtypes': unknown dtype '%s' (expected fp64, fp32, tf32, bf16, fp16 or fp8)",
					    t.c_str());
					return -EXIT_USAGE;
				}
				if (q == std::string::npos)
					break;
				p = q + 1;
			}
			o->dtypes = s;
		} else if (!strcmp(a, "--out")) {
			o->out = v;
		} else {
			err("unknown option '%s'", a);
			usage(stderr);
			return -EXIT_USAGE;
		}
		if (rc)
			return rc;
	}
	return 0;
}

static bool wants(const opts &o, const char *dtype)
{
	std::string s = "," + o.dtypes + ",";
	return s.find(std::string(",") + dtype + ",") != std::string::npos;
}

/* ---------------------------------------------------------------- output */

static FILE *tsv;

static void record(const char *fmt, ...)
{
	va_list ap;
	if (!tsv)
		return;
	va_start(ap, fmt);
	vfprintf(tsv, fmt, ap);
	va_end(ap);
	fputc('\n', tsv);
	fflush(tsv);
}

struct timing {
	double median_sec, best_sec;
};

static timing summarize(std::vector<float> ms)
{
	std::sort(ms.begin(), ms.end());
	size_t n = ms.size();
	double med = n % 2 ? ms[n / 2] : 0.5 * (ms[n / 2 - 1] + ms[n / 2]);
	return { med * 1e-3, ms[0] * 1e-3 };
}

/* ---------------------------------------------------------------- GEMM */

struct gemm_case {
	const char *dtype;
	const char *api;
	cudaDataType_t ab, c, scale; /* A and B, C/D, alpha and beta */
	cublasComputeType_t compute;
	double u_in, u_acc, u_out; /* unit roundoffs: input rounding, accumulation, output */
	int digits;                /* significant bits of the inputs (kernels/ch_patterns.h) */
};

/*
 * Validation of C = op(A) B on sampled entries. Row i of op(A) is gathered
 * with stride a_row_stride elements between consecutive k (1 when op(A) = A^T
 * is stored K x M), starting at a_row_start(i); column j of B is contiguous.
 */
template <typename TA, typename TC>
static int validate(const gemm_case &gc, int n, const TA *dA, bool a_transposed, const TA *dB,
		    const TC *dC, double *worst)
{
	std::vector<TA> arow(n), bcol(n);
	int bad = 0;
	*worst = 0;
	for (int s = 0; s < 32; s++) {
		int i = (int)(mix32(1000 + s) % (uint32_t)n), j = (int)(mix32(2000 + s) % (uint32_t)n);
		if (a_transposed)
			CUDA_TRY(cudaMemcpy(arow.data(), dA + (size_t)i * n, n * sizeof(TA), cudaMemcpyDeviceToHost));
		else
			CUDA_TRY(cudaMemcpy2D(arow.data(), sizeof(TA), dA + i, (size_t)n * sizeof(TA), sizeof(TA), n,
					      cudaMemcpyDeviceToHost));
		CUDA_TRY(cudaMemcpy(bcol.data(), dB + (size_t)j * n, n * sizeof(TA), cudaMemcpyDeviceToHost));
		TC c;
		CUDA_TRY(cudaMemcpy(&c, dC + i + (size_t)j * n, sizeof(TC), cudaMemcpyDeviceToHost));
		/* Neumaier's compensated sum, and the range of the prefix sums */
		double ref = 0, comp = 0, mag = 0, lo = 0, hi = 0;
		for (int k = 0; k < n; k++) {
			double p = to_double(arow[k]) * to_double(bcol[k]), t = ref + p;
			comp += fabs(ref) >= fabs(p) ? (ref - t) + p : (p - t) + ref;
			ref = t;
			mag += fabs(p);
			lo = std::min(lo, ref + comp);
			hi = std::max(hi, ref + comp);
		}
		ref += comp;
		double got = to_double(c);
		bool rn = gc.compute == CUBLAS_COMPUTE_64F || (gc.compute == CUBLAS_COMPUTE_32F && gc.ab == CUDA_R_32F);
		double acc = (rn ? 6.0 * sqrt((double)n) : (double)(n - 1)) * gc.u_acc * (hi - lo);
		double tol = 2 * gc.u_in * mag + acc + 2 * gc.u_out * fabs(ref) + 1e-30;
		double e = fabs(got - ref) / tol;
		if (!(e <= 1.0)) { /* also catches NaN */
			if (bad < 3)
				fprintf(stderr, "%s: %s C(%d,%d) = %.9g, expected %.9g (tolerance %.3g)\n", prog,
					gc.dtype, i, j, got, ref, tol);
			bad++;
		}
		if (!(e <= *worst))
			*worst = e;
	}
	return bad;
}

template <typename F> static int time_calls(int warmup, int iters, F call, timing *t)
{
	cudaEvent_t e0, e1;
	CUDA_TRY(cudaEventCreate(&e0));
	CUDA_TRY(cudaEventCreate(&e1));
	std::vector<float> ms;
	for (int it = 0; it < warmup + iters; it++) {
		CUDA_TRY(cudaEventRecord(e0));
		int rc = call();
		if (rc)
			return rc;
		CUDA_TRY(cudaEventRecord(e1));
		CUDA_TRY(cudaEventSynchronize(e1));
		float x;
		CUDA_TRY(cudaEventElapsedTime(&x, e0, e1));
		if (it >= warmup)
			ms.push_back(x);
	}
	cudaEventDestroy(e0);
	cudaEventDestroy(e1);
	*t = summarize(ms);
	return 0;
}

static void report_gemm(const gemm_case &gc, int n, int iters, const timing &t, int bad, double worst)
{
	double flops = 2.0 * n * (double)n * n;
	double med = flops / t.median_sec / 1e12, best = flops / t.best_sec / 1e12;
	if (bad)
		printf("  %-5s %-16s %6d  INVALID (%d of 32 sampled entries out of tolerance)\n", gc.dtype,
		       gc.api, n, bad);
	else
		printf("  %-5s %-16s %6d  %10.1f %10.1f   ok (max err/tol %.3f)\n", gc.dtype, gc.api, n, med,
		       best, worst);
	record("gemm\t%s\t%d\t%d\t%.6g\t%.6g\t%d\t%.6g\t%s", gc.dtype, n, iters, bad ? 0.0 : med,
	       bad ? 0.0 : best, bad ? 0 : 1, worst, gc.api);
}

/* Roofline's GEMM (kernels/cuda/ch_cuda.c gemm_setup): TN, the same types. */
template <typename TA, typename TC>
static int run_lt(cublasLtHandle_t lt, const gemm_case &gc, int n, int warmup, int iters, int *nbad)
{
	size_t elems = (size_t)n * n, ws_bytes = (size_t)64 << 20;
	TA *A = nullptr, *B = nullptr;
	TC *C = nullptr;
	void *ws = nullptr;
	CUDA_TRY(cudaMalloc(&A, elems * sizeof(TA)));
	CUDA_TRY(cudaMalloc(&B, elems * sizeof(TA)));
	CUDA_TRY(cudaMalloc(&C, elems * sizeof(TC)));
	CUDA_TRY(cudaMalloc(&ws, ws_bytes));
	fill_gemm<TA><<<1024, 256>>>(A, elems, CH_GEMM_SEED_A, gc.digits);
	fill_gemm<TA><<<1024, 256>>>(B, elems, CH_GEMM_SEED_B, gc.digits);
	CUDA_TRY(cudaMemset(C, 0xff, elems * sizeof(TC))); /* NaN: an entry never written fails */
	CUDA_TRY(cudaGetLastError());

	cublasLtMatmulDesc_t op = nullptr;
	cublasLtMatrixLayout_t la = nullptr, lb = nullptr, lc = nullptr;
	cublasLtMatmulPreference_t pref = nullptr;
	cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
	CUBLAS_TRY(cublasLtMatmulDescCreate(&op, gc.compute, gc.scale));
	CUBLAS_TRY(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
	CUBLAS_TRY(cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
	/* op(A) = A^T: A is stored K x M (lda = K), B K x N, C/D M x N */
	CUBLAS_TRY(cublasLtMatrixLayoutCreate(&la, gc.ab, n, n, n));
	CUBLAS_TRY(cublasLtMatrixLayoutCreate(&lb, gc.ab, n, n, n));
	CUBLAS_TRY(cublasLtMatrixLayoutCreate(&lc, gc.c, n, n, n));
	CUBLAS_TRY(cublasLtMatmulPreferenceCreate(&pref));
	CUBLAS_TRY(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws_bytes,
							sizeof(ws_bytes)));
	cublasLtMatmulHeuristicResult_t heur;
	int found = 0;
	CUBLAS_TRY(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 1, &heur, &found));
	if (!found) {
		err("cublasLtMatmulAlgoGetHeuristic found no %s algorithm for %dx%dx%d", gc.dtype, n, n, n);
		return -EXIT_RUNTIME;
	}
	float alpha_f = 1, beta_f = 0;
	double alpha_d = 1, beta_d = 0;
	bool dbl = gc.scale == CUDA_R_64F;
	const void *alpha = dbl ? (const void *)&alpha_d : (const void *)&alpha_f;
	const void *beta = dbl ? (const void *)&beta_d : (const void *)&beta_f;
	timing t;
	int rc = time_calls(warmup, iters, [&]() -> int {
		CUBLAS_TRY(cublasLtMatmul(lt, op, alpha, A, la, B, lb, beta, C, lc, C, lc, &heur.algo, ws,
					  ws_bytes, 0));
		return 0;
	}, &t);
	double worst = 0;
	int bad = 0;
	if (!rc) {
		bad = validate<TA, TC>(gc, n, A, true, B, C, &worst);
		if (bad < 0)
			rc = bad;
	}
	if (!rc) {
		report_gemm(gc, n, iters, t, bad, worst);
		*nbad += bad ? 1 : 0;
	}
	cublasLtMatmulPreferenceDestroy(pref);
	cublasLtMatrixLayoutDestroy(la);
	cublasLtMatrixLayoutDestroy(lb);
	cublasLtMatrixLayoutDestroy(lc);
	cublasLtMatmulDescDestroy(op);
	cudaFree(A);
	cudaFree(B);
	cudaFree(C);
	cudaFree(ws);
	return rc;
}

/* ---------------------------------------------------------------- copy */

__global__ void fill_index(uint64_t *p, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		p[i] = mix32(i) | ((uint64_t)i << 32);
}

static int run_copy(size_t bytes, int warmup, int iters, int *nbad)
{
	size_t n = bytes / 8;
	uint64_t *src = nullptr, *dst = nullptr;
	CUDA_TRY(cudaMalloc(&src, bytes));
	CUDA_TRY(cudaMalloc(&dst, bytes));
	fill_index<<<1024, 256>>>(src, n);
	CUDA_TRY(cudaMemset(dst, 0, bytes));
	CUDA_TRY(cudaGetLastError());
	timing t;
	int rc = time_calls(warmup, iters, [&]() -> int {
		CUDA_TRY(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice));
		return 0;
	}, &t);
	int bad = 0;
	for (int s = 0; !rc && s < 4096; s++) {
		size_t i = s == 0 ? 0 : s == 1 ? n - 1 : (((size_t)mix32(s) << 32) | mix32(s + 77777)) % n;
		uint64_t v;
		cudaError_t e = cudaMemcpy(&v, dst + i, 8, cudaMemcpyDeviceToHost);
		if (e != cudaSuccess) {
			err("cudaMemcpy of a sampled word failed: %s", cudaGetErrorString(e));
			rc = -EXIT_RUNTIME;
			break;
		}
		if (v != (mix32(i) | ((uint64_t)i << 32)))
			bad++;
	}
	if (!rc) {
		double med = 2.0 * bytes / t.median_sec / 1e9, best = 2.0 * bytes / t.best_sec / 1e9;
		if (bad)
			printf("  copy  cudaMemcpy D2D   %zu B  INVALID (%d of 4096 sampled words wrong)\n", bytes, bad);
		else
			printf("  copy  cudaMemcpy D2D   %zu B  median %.1f GB/s, best %.1f GB/s (read+write)\n", bytes,
			       med, best);
		record("copy\td2d\t%zu\t%d\t%.6g\t%.6g\t%d", bytes, iters, bad ? 0.0 : med, bad ? 0.0 : best,
		       bad ? 0 : 1);
		*nbad += bad ? 1 : 0;
	}
	cudaFree(src);
	cudaFree(dst);
	return rc;
}

/* ---------------------------------------------------------------- main */

int main(int argc, char **argv)
{
	opts o;
	int rc = parse_opts(argc, argv, &o);
	if (rc > 0)
		return EXIT_OK;
	if (rc < 0)
		return -rc;
	if (o.list) {
		int count = 0;
		cudaError_t e = cudaGetDeviceCount(&count);
		if (e != cudaSuccess || count == 0) {
			err("no CUDA device (unavailable): %s", e != cudaSuccess ? cudaGetErrorString(e) : "none found");
			return EXIT_UNAVAILABLE;
		}
		for (int i = 0; i < count; i++) {
			cudaDeviceProp p;
			char bus[32] = "-";
			if (cudaGetDeviceProperties(&p, i) != cudaSuccess) {
				err("cannot read the properties of CUDA device %d", i);
				return EXIT_RUNTIME;
			}
			cudaDeviceGetPCIBusId(bus, (int)sizeof(bus), i);
			printf("%d, %s, -, %s, %zu MiB, %d.%d\n", i, p.name, bus, (size_t)(p.totalGlobalMem >> 20),
			       p.major, p.minor);
		}
		return EXIT_OK;
	}
	if (o.out && !(tsv = fopen(o.out, "w"))) {
		err("cannot write '%s': %s", o.out, strerror(errno));
		return EXIT_USAGE;
	}
	record("# gpu-check-ref: plain cuBLAS/cuBLASLt reference (tools/gpu-check-ref.cu)");

	int drv = 0, rt = 0, count = 0;
	cudaDriverGetVersion(&drv);
	cudaRuntimeGetVersion(&rt);
	record("version\tcuda_driver\t%d", drv);
	record("version\tcuda_runtime\t%d", rt);
	cudaError_t e = cudaGetDeviceCount(&count);
	if (e != cudaSuccess || count == 0) {
		const char *why = e != cudaSuccess ? cudaGetErrorString(e) : "no device";
		err("no CUDA device (unavailable): %s", why);
		record("skip\tall\tno CUDA device: %s", why);
		if (tsv)
			fclose(tsv);
		return EXIT_UNAVAILABLE;
	}
	if (o.device >= count) {
		err("option '--device': index '%d' out of range (%d device%s)", o.device, count, count > 1 ? "s" : "");
		return EXIT_USAGE;
	}
	rc = 0;
	do {
		cudaDeviceProp p;
		if (cudaSetDevice(o.device) != cudaSuccess ||
		    cudaGetDeviceProperties(&p, o.device) != cudaSuccess) {
			err("cannot open CUDA device %d", o.device);
			rc = -EXIT_RUNTIME;
			break;
		}
		int cc = p.major * 10 + p.minor;
		size_t free_b = 0, total_b = 0;
		cudaMemGetInfo(&free_b, &total_b);
		record("device\t%d\t%s\t%d.%d\t%d\t%zu\t%d", o.device, p.name, p.major, p.minor, p.multiProcessorCount,
		       total_b, p.l2CacheSize);
		printf("%s: device %d: %s, compute capability %d.%d, %d SMs, %.1f GiB, CUDA driver %d, runtime %d\n",
		       prog, o.device, p.name, p.major, p.minor, p.multiProcessorCount, total_b / 1073741824.0, drv,
		       rt);

		cublasHandle_t h = nullptr;
		cublasLtHandle_t lt = nullptr;
		if (cublasCreate(&h) != CUBLAS_STATUS_SUCCESS || cublasLtCreate(&lt) != CUBLAS_STATUS_SUCCESS) {
			err("cannot create a cuBLAS handle");
			rc = -EXIT_RUNTIME;
			break;
		}
		int cublas_ver = 0;
		cublasGetVersion(h, &cublas_ver);
		record("version\tcublas\t%d", cublas_ver);
		record("version\tcublaslt\t%zu", cublasLtGetVersion());

		/* a GEMM's three matrices must fit with room to spare */
		size_t need = 3 * (size_t)o.n * o.n * 8;
		int nbad = 0;
		printf("  dtype api                   n  median TF/s  best TF/s  check\n");
		static const gemm_case cases[] = {
			{ "fp64", "cublasLtMatmul TN", CUDA_R_64F, CUDA_R_64F, CUDA_R_64F, CUBLAS_COMPUTE_64F,
			  0, 0x1p-53, 0x1p-53, CH_GEMM_DIGITS_FP64 },
			{ "fp32", "cublasLtMatmul TN", CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F,
			  0, 0x1p-24, 0x1p-24, CH_GEMM_DIGITS_FP32 },
			/* tensor cores: roofline's accumulators less its 2-bit
			 * margin (kernels/ch_kernels.h, CH_GEMM_ACCUM_MARGIN_BITS) */
			{ "tf32", "cublasLtMatmul TN", CUDA_R_32F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32,
			  0x1p-11, 0x1p-21, 0x1p-24, CH_GEMM_DIGITS_TENSOR },
			{ "bf16", "cublasLtMatmul TN", CUDA_R_16BF, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F,
			  0, 0x1p-21, 0x1p-24, CH_GEMM_DIGITS_TENSOR },
			{ "fp16", "cublasLtMatmul TN", CUDA_R_16F, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F,
			  0, 0x1p-21, 0x1p-24, CH_GEMM_DIGITS_TENSOR },
			/* Hopper's fp8 MMA accumulates in e8m13, 14 bits
			 * (SageAttention2; DeepSeek-V3 report, 3.3.2): 12 with
			 * the margin, 2^-11 covers truncation */
			{ "fp8", "cublasLtMatmul TN", CUDA_R_8F_E4M3, CUDA_R_16BF, CUDA_R_32F, CUBLAS_COMPUTE_32F,
			  0, 0x1p-11, 0x1p-8, CH_GEMM_DIGITS_FP8 },
		};
		for (const gemm_case &gc : cases) {
			if (rc)
				break;
			if (!wants(o, gc.dtype))
				continue;
			if (need > free_b) {
				record("skip\t%s\t%zu bytes needed, %zu free", gc.dtype, need, free_b);
				continue;
			}
			std::string d = gc.dtype;
			if (d == "fp64")
				rc = run_lt<double, double>(lt, gc, o.n, o.warmup, o.iters, &nbad);
			else if (d == "fp32" || d == "tf32")
				rc = run_lt<float, float>(lt, gc, o.n, o.warmup, o.iters, &nbad);
			else if (d == "bf16")
				rc = run_lt<__nv_bfloat16, float>(lt, gc, o.n, o.warmup, o.iters, &nbad);
			else if (d == "fp16")
				rc = run_lt<__half, float>(lt, gc, o.n, o.warmup, o.iters, &nbad);
			else if (cc < 89) {
				printf("  fp8   skipped: compute capability %d.%d has no fp8 tensor cores (needs 8.9)\n",
				       p.major, p.minor);
				record("skip\tfp8\tcompute capability %d.%d below 8.9", p.major, p.minor);
			} else
				rc = run_lt<__nv_fp8_e4m3, __nv_bfloat16>(lt, gc, o.n, o.warmup, o.iters, &nbad);
		}
		if (!rc && o.copy_bytes) {
			if (2 * o.copy_bytes + ((size_t)256 << 20) > free_b)
				record("skip\tcopy\t%zu bytes needed, %zu free", 2 * o.copy_bytes, free_b);
			else
				rc = run_copy(o.copy_bytes, o.warmup, o.iters, &nbad);
		}
		cublasLtDestroy(lt);
		cublasDestroy(h);
		if (!rc && nbad)
			rc = -EXIT_CHECK;
	} while (0);
	record("end\t%d", -rc);
	if (tsv)
		fclose(tsv);
	return -rc;
}
