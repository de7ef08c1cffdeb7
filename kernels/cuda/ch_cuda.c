/*
 * ch_cuda.c - the "cuda" compute backend: device state, timing with CUDA
 * events, host-side validation of copied-back outputs, GEMM through
 * cuBLASLt (best of the top heuristic algorithms), NVML telemetry.
 * Compiled only when the CUDA toolkit is found (HAVE_CUDA).
 */
#include "kernels/ch_kernels.h"
#include "base/ch_common.h"
#include "base/ch_cuda_check.h"
#include "base/ch_stats.h"
#include "hw/ch_nvml.h"
#include "kernels/ch_patterns.h"
#include "kernels/cuda/ch_cuda_copy.h"
#include "kernels/cuda/ch_cuda_ops.h"

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GEMM_SAMPLES 64
#define GEMM_ALGOS 8
#define WORKSPACE_BYTES (64u << 20)

/* CUDA runtime calls: CH_CUDA_CHECK (base/ch_cuda_check.h); cuBLASLt: */
#define LT_TRY(call)                                                                       \
	do {                                                                               \
		cublasStatus_t s_ = (call);                                                \
		if (s_ != CUBLAS_STATUS_SUCCESS) {                                         \
			ch_error("%s:%d: %s failed: cuBLAS status %d", __FILE__, __LINE__, \
				 #call, (int)s_);                                          \
			return CH_ERR_RUNTIME;                                             \
		}                                                                          \
	} while (0)

struct ch_dev {
	int index;
	struct cudaDeviceProp prop;
	int cc;                    /* compute capability x 10 + minor */
	int clock_khz;
	char bus_id[32];
	cudaStream_t stream;
	cudaEvent_t ev0, ev1;
	void *a, *b, *c;           /* elementwise arrays */
	uint64_t array_bytes;
	int fill_dt;
	void *host;                /* host copy of c for validation */
	float *gamma, *beta;
	uint64_t gamma_cols;
	double *dot_dev;
	double dot;
	/* GEMM */
	cublasLtHandle_t lt;
	void *ga, *gb, *gc, *ws;
	uint64_t gm, gn, gk;
	int gdt;
	cublasLtMatmulDesc_t op;
	cublasLtMatrixLayout_t la, lb, lc;
	cublasLtMatmulAlgo_t algo;
	int have_algo;
	int gfast;                 /* the descriptor has fast accumulation (fp8) */
	/* batches of queued calls (queue(), batch_done()) */
	cudaEvent_t ev_ref, ev_bs[2], ev_be[2];
	double t_ref;              /* ch_now_sec() when ev_ref completed */
	int inflight;
	/* NVML */
	int nvml;
	enum ch_nvml_match nv_match; /* how d->nv was found */
	ch_nvml_dev_t nv;
};

static int cuda_probe(char *why, size_t n)
{
	int count = 0;
	cudaError_t e = cudaGetDeviceCount(&count);
	if (e != cudaSuccess || count == 0) {
		ch_cuda_no_device(e, count, why, n);
		cudaGetLastError(); /* clear the sticky error */
		return CH_ERR_UNAVAILABLE;
	}
	return 0;
}

static int cuda_count(void)
{
	int count = 0;
	if (cudaGetDeviceCount(&count) != cudaSuccess) {
		cudaGetLastError();
		return 0;
	}
	return count;
}

static void gemm_free(struct ch_dev *d)
{
	if (d->op)
		cublasLtMatmulDescDestroy(d->op);
	if (d->la)
		cublasLtMatrixLayoutDestroy(d->la);
	if (d->lb)
		cublasLtMatrixLayoutDestroy(d->lb);
	if (d->lc)
		cublasLtMatrixLayoutDestroy(d->lc);
	d->op = NULL;
	d->la = d->lb = d->lc = NULL;
	cudaFree(d->ga);
	cudaFree(d->gb);
	cudaFree(d->gc);
	d->ga = d->gb = d->gc = NULL;
	d->gdt = -1;
	d->have_algo = 0;
}

static void cuda_close(struct ch_dev *d)
{
	if (!d)
		return;
	cudaSetDevice(d->index);
	gemm_free(d);
	cudaFree(d->ws);
	cudaFree(d->a);
	cudaFree(d->b);
	cudaFree(d->c);
	cudaFree(d->gamma);
	cudaFree(d->beta);
	cudaFree(d->dot_dev);
	free(d->host);
	if (d->lt)
		cublasLtDestroy(d->lt);
	if (d->ev0)
		cudaEventDestroy(d->ev0);
	if (d->ev1)
		cudaEventDestroy(d->ev1);
	for (int i = 0; i < 2; i++) {
		if (d->ev_bs[i])
			cudaEventDestroy(d->ev_bs[i]);
		if (d->ev_be[i])
			cudaEventDestroy(d->ev_be[i]);
	}
	if (d->ev_ref)
		cudaEventDestroy(d->ev_ref);
	if (d->stream)
		cudaStreamDestroy(d->stream);
	if (d->nvml)
		ch_nvml_shutdown();
	free(d);
}

static int cuda_open_inner(struct ch_dev *d, char *why, size_t n)
{
	char bus[32];
	size_t i;

	CH_CUDA_CHECK(cudaSetDevice(d->index), NULL);
	CH_CUDA_CHECK(cudaGetDeviceProperties(&d->prop, d->index), NULL);
	d->cc = d->prop.major * 10 + d->prop.minor;
	if (cudaDeviceGetAttribute(&d->clock_khz, cudaDevAttrClockRate, d->index) != cudaSuccess)
		d->clock_khz = 0;
	CH_CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof(bus), d->index), NULL);
	for (i = 0; bus[i] && i < sizeof(d->bus_id) - 1; i++)
		d->bus_id[i] = (char)(bus[i] >= 'A' && bus[i] <= 'F' ? bus[i] - 'A' + 'a' : bus[i]);
	d->bus_id[i] = '\0';
	CH_CUDA_CHECK(cudaStreamCreateWithFlags(&d->stream, cudaStreamNonBlocking), NULL);
	CH_CUDA_CHECK(cudaEventCreate(&d->ev0), NULL);
	CH_CUDA_CHECK(cudaEventCreate(&d->ev1), NULL);
	CH_CUDA_CHECK(cudaEventCreate(&d->ev_ref), NULL);
	for (i = 0; i < 2; i++) {
		CH_CUDA_CHECK(cudaEventCreate(&d->ev_bs[i]), NULL);
		CH_CUDA_CHECK(cudaEventCreate(&d->ev_be[i]), NULL);
	}
	CH_CUDA_CHECK(cudaMalloc((void **)&d->dot_dev, sizeof(double)), NULL);
	CH_CUDA_CHECK(cudaMalloc(&d->ws, WORKSPACE_BYTES), NULL);
	LT_TRY(cublasLtCreate(&d->lt));
	ch_cu_set_sms(d->prop.multiProcessorCount);
	if (ch_nvml_init(NULL, 0) == 0) {
		char uuid[48];
		int count = 0;
		d->nvml = 1;
		if (cudaGetDeviceCount(&count) != cudaSuccess)
			count = 0;
		ch_nvml_uuid_str((const unsigned char *)d->prop.uuid.bytes, uuid, sizeof(uuid));
		if (ch_nvml_device_for_cuda(d->bus_id, uuid, d->index, count, &d->nv, &d->nv_match) != 0) {
			ch_nvml_shutdown();
			d->nvml = 0;
		}
	}
	(void)why;
	(void)n;
	return 0;
}

static int cuda_open(int index, struct ch_dev **out, char *why, size_t n)
{
	struct ch_dev *d;
	int rc;

	*out = NULL;
	if ((rc = cuda_probe(why, n)) != 0)
		return rc;
	if (index < 0 || index >= cuda_count()) {
		snprintf(why, n, "no CUDA device with index '%d'", index);
		return CH_ERR_UNAVAILABLE;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return CH_ERR_RUNTIME;
	d->index = index;
	d->fill_dt = -1;
	d->gdt = -1;
	if ((rc = cuda_open_inner(d, why, n)) != 0) {
		if (!why[0])
			snprintf(why, n, "cannot initialise CUDA device %d", index);
		cuda_close(d);
		return rc;
	}
	*out = d;
	return 0;
}

static int cuda_info(struct ch_dev *d, struct ch_dev_info *o)
{
	size_t free_b = 0, total_b = 0;
	int rt = 0, drv = 0;
	char v[96];

	memset(o, 0, sizeof(*o));
	cudaSetDevice(d->index);
	cudaMemGetInfo(&free_b, &total_b);
	cudaRuntimeGetVersion(&rt);
	cudaDriverGetVersion(&drv);
	snprintf(o->kind, sizeof(o->kind), "gpu");
	snprintf(o->name, sizeof(o->name), "%s", d->prop.name);
	snprintf(o->pci_bus_id, sizeof(o->pci_bus_id), "%s", d->bus_id);
	o->mem_total_bytes = total_b;
	o->mem_free_bytes = free_b;
	o->cache_bytes = (uint64_t)d->prop.l2CacheSize;
	o->units = d->prop.multiProcessorCount;
	o->clock_mhz = d->clock_khz / 1000.0;
	snprintf(o->clock_source, sizeof(o->clock_source), "cudaDevAttrClockRate (peak SM clock)");
	snprintf(o->isa, sizeof(o->isa), "sm_%d", d->cc);
	snprintf(o->blas, sizeof(o->blas), "cuBLASLt %zu", cublasLtGetVersion());
	snprintf(o->runtime, sizeof(o->runtime), "CUDA runtime %d, driver %d%s%s%s%s", rt, drv,
		 d->nvml ? ", NVIDIA driver " : "", d->nvml && ch_nvml_driver_version(v, sizeof(v)) ? v : "",
		 d->nvml ? ", NVML device matched by " : "", d->nvml ? ch_nvml_match_name(d->nv_match) : "");
	snprintf(o->nvml_match, sizeof(o->nvml_match), "%s", ch_nvml_match_name(d->nvml ? d->nv_match : CH_NVML_MATCH_NONE));
	if (!d->nvml)
		snprintf(o->note, sizeof(o->note), "NVML not available or no NVML device matched this GPU's PCI bus id, "
			 "UUID or index: no clocks, power, energy, temperature or throttle reasons");
	else if (d->nv_match != CH_NVML_MATCH_PCI)
		snprintf(o->note, sizeof(o->note), "NVML device matched by %s, not by the PCI bus id %s",
			 ch_nvml_match_name(d->nv_match), d->bus_id);
	return 0;
}

static unsigned cuda_dtypes(struct ch_dev *d, const struct ch_kernel *k)
{
	unsigned m = 0;
	switch (k->family) {
	case CH_FAM_STREAM:
		return CH_DT_BIT(CH_FP64) | CH_DT_BIT(CH_FP32);
	case CH_FAM_LADDER:
		m = CH_DT_BIT(CH_FP64) | CH_DT_BIT(CH_FP32);
		if (d->cc >= 80)
			m |= CH_DT_BIT(CH_BF16);
		return m;
	case CH_FAM_ELEMENTWISE:
		m = CH_DT_BIT(CH_FP32);
		if (d->cc >= 80)
			m |= CH_DT_BIT(CH_BF16);
		return m;
	case CH_FAM_GEMM:
		m = CH_DT_BIT(CH_FP64) | CH_DT_BIT(CH_FP32) | CH_DT_BIT(CH_FP16);
		if (d->cc >= 80)
			m |= CH_DT_BIT(CH_TF32) | CH_DT_BIT(CH_BF16);
		if (d->cc >= 89)
			m |= CH_DT_BIT(CH_FP8);
		return m;
	default:
		return 0;
	}
}

static int cuda_alloc_arrays(struct ch_dev *d, uint64_t bytes)
{
	cudaSetDevice(d->index);
	cudaFree(d->a);
	cudaFree(d->b);
	cudaFree(d->c);
	free(d->host);
	d->a = d->b = d->c = d->host = NULL;
	CH_CUDA_CHECK(cudaMalloc(&d->a, bytes), NULL);
	CH_CUDA_CHECK(cudaMalloc(&d->b, bytes), NULL);
	CH_CUDA_CHECK(cudaMalloc(&d->c, bytes), NULL);
	d->host = malloc(bytes);
	if (!d->host)
		return CH_ERR_RUNTIME;
	d->array_bytes = bytes;
	CH_CUDA_CHECK((cudaError_t)ch_cu_fill(CH_FP64, d->a, d->b, d->c, bytes / 8, 1, d->stream), NULL);
	CH_CUDA_CHECK(cudaStreamSynchronize(d->stream), NULL);
	d->fill_dt = CH_FP64;
	return 0;
}

static int cuda_gemm_size(struct ch_dev *d, enum ch_dtype dt, double min_sec, uint64_t *n)
{
	size_t free_b = 0, total_b = 0;
	uint64_t g = 8192;
	(void)dt;
	(void)min_sec;
	cudaSetDevice(d->index);
	cudaMemGetInfo(&free_b, &total_b);
	/* 8192^3 by default; smaller only when three fp64 operands do not fit
	 * in half of the free memory */
	while (g > 1024 && 3.0 * (double)g * (double)g * 8.0 > (double)free_b / 2)
		g /= 2;
	*n = g;
	return 0;
}

static void lt_types(enum ch_dtype dt, cudaDataType_t *ab, cudaDataType_t *c,
		     cublasComputeType_t *comp, cudaDataType_t *scale)
{
	*scale = CUDA_R_32F;
	*comp = CUBLAS_COMPUTE_32F;
	switch (dt) {
	case CH_FP64: *ab = *c = *scale = CUDA_R_64F; *comp = CUBLAS_COMPUTE_64F; break;
	case CH_FP32: *ab = *c = CUDA_R_32F; break;
	case CH_TF32: *ab = *c = CUDA_R_32F; *comp = CUBLAS_COMPUTE_32F_FAST_TF32; break;
	case CH_BF16: *ab = CUDA_R_16BF; *c = CUDA_R_32F; break;
	case CH_FP16: *ab = CUDA_R_16F; *c = CUDA_R_32F; break;
	case CH_FP8: *ab = CUDA_R_8F_E4M3; *c = CUDA_R_16BF; break;
	default: *ab = *c = CUDA_R_32F; break;
	}
}

static int gemm_call(struct ch_dev *d, const cublasLtMatmulAlgo_t *algo)
{
	double a64 = 1.0, b64 = 0.0;
	float a32 = 1.0f, b32 = 0.0f;
	const void *alpha = d->gdt == CH_FP64 ? (const void *)&a64 : (const void *)&a32;
	const void *beta = d->gdt == CH_FP64 ? (const void *)&b64 : (const void *)&b32;
	LT_TRY(cublasLtMatmul(d->lt, d->op, alpha, d->ga, d->la, d->gb, d->lb, beta, d->gc, d->lc,
			      d->gc, d->lc, algo, d->ws, WORKSPACE_BYTES, d->stream));
	return 0;
}

static int time_call(struct ch_dev *d, const cublasLtMatmulAlgo_t *algo, double *sec)
{
	float ms = 0;
	int rc;
	CH_CUDA_CHECK(cudaEventRecord(d->ev0, d->stream), NULL);
	if ((rc = gemm_call(d, algo)) != 0)
		return rc;
	CH_CUDA_CHECK(cudaEventRecord(d->ev1, d->stream), NULL);
	CH_CUDA_CHECK(cudaEventSynchronize(d->ev1), NULL);
	CH_CUDA_CHECK(cudaEventElapsedTime(&ms, d->ev0, d->ev1), NULL);
	*sec = ms * 1e-3;
	return 0;
}

/* C filled with NaN (0xff bytes are a NaN in fp64, fp32 and bf16), so that
 * an algorithm that writes nothing fails the check, where a zeroed C could
 * pass as a small result. Done before the algorithm trials and again once
 * the algorithm is chosen (and whenever a point reuses the setup), so that
 * the checked C holds only what the chosen algorithm's calls wrote.
 * Returns 0 or CH_ERR_RUNTIME (reported). */
static int gemm_c_nan(struct ch_dev *d, size_t bytes)
{
	CH_CUDA_CHECK(cudaMemsetAsync(d->gc, 0xff, bytes, d->stream), NULL);
	return 0;
}

/* Allocate and fill the operands, describe the operation, and keep the
 * fastest of the top GEMM_ALGOS heuristic algorithms (best of 3 calls each). */
static int gemm_setup(struct ch_dev *d, enum ch_dtype dt, uint64_t m, uint64_t n, uint64_t k, int fast)
{
	cudaDataType_t tab, tc, tscale;
	cublasComputeType_t comp;
	cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
	cublasLtMatmulPreference_t pref = NULL;
	cublasLtMatmulHeuristicResult_t res[GEMM_ALGOS];
	int nres = 0, i, j;
	uint64_t ws = WORKSPACE_BYTES;
	size_t in_sz = ch_dtype_size(dt), out_sz = ch_dtype_size(ch_gemm_out_dtype(dt));
	double best = INFINITY;

	fast = fast && dt == CH_FP8;
	if (d->gdt == (int)dt && d->gm == m && d->gn == n && d->gk == k && d->have_algo && d->gfast == fast)
		return gemm_c_nan(d, m * n * out_sz);
	gemm_free(d);
	lt_types(dt, &tab, &tc, &comp, &tscale);
	CH_CUDA_CHECK(cudaMalloc(&d->ga, m * k * in_sz), NULL);
	CH_CUDA_CHECK(cudaMalloc(&d->gb, k * n * in_sz), NULL);
	CH_CUDA_CHECK(cudaMalloc(&d->gc, m * n * out_sz), NULL);
	CH_CUDA_CHECK((cudaError_t)ch_cu_fill_gemm(dt, d->ga, m * k, CH_GEMM_SEED_A, d->stream), NULL);
	CH_CUDA_CHECK((cudaError_t)ch_cu_fill_gemm(dt, d->gb, k * n, CH_GEMM_SEED_B, d->stream), NULL);
	if ((i = gemm_c_nan(d, m * n * out_sz)) != 0)
		return i;
	d->gdt = dt;
	d->gm = m;
	d->gn = n;
	d->gk = k;
	LT_TRY(cublasLtMatmulDescCreate(&d->op, comp, tscale));
	LT_TRY(cublasLtMatmulDescSetAttribute(d->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)));
	LT_TRY(cublasLtMatmulDescSetAttribute(d->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)));
	if (dt == CH_FP8) {
		/* 0: the split accumulator (partial sums promoted to fp32), the
		 * default; 1: fast accumulation in the tensor cores */
		int8_t fa = (int8_t)fast;
		LT_TRY(cublasLtMatmulDescSetAttribute(d->op, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fa, sizeof(fa)));
	}
	d->gfast = fast;
	LT_TRY(cublasLtMatrixLayoutCreate(&d->la, tab, k, m, (int64_t)k)); /* A stored k x m: op(A) = A^T */
	LT_TRY(cublasLtMatrixLayoutCreate(&d->lb, tab, k, n, (int64_t)k));
	LT_TRY(cublasLtMatrixLayoutCreate(&d->lc, tc, m, n, (int64_t)m));
	LT_TRY(cublasLtMatmulPreferenceCreate(&pref));
	if (cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)) !=
	    CUBLAS_STATUS_SUCCESS ||
	    cublasLtMatmulAlgoGetHeuristic(d->lt, d->op, d->la, d->lb, d->lc, d->lc, pref, GEMM_ALGOS, res, &nres) !=
	    CUBLAS_STATUS_SUCCESS || nres == 0) {
		cublasLtMatmulPreferenceDestroy(pref);
		ch_error("cuBLASLt has no algorithm for a %s GEMM of %llu x %llu x %llu on %s", ch_dtype_name(dt),
			 (unsigned long long)m, (unsigned long long)n, (unsigned long long)k, d->prop.name);
		return CH_ERR_RUNTIME;
	}
	cublasLtMatmulPreferenceDestroy(pref);
	for (i = 0; i < nres; i++) {
		double t_best = INFINITY, t;
		if (res[i].state != CUBLAS_STATUS_SUCCESS)
			continue;
		if (gemm_call(d, &res[i].algo) != 0) /* warm-up; an algorithm may refuse */
			continue;
		for (j = 0; j < 3; j++) {
			if (time_call(d, &res[i].algo, &t) != 0)
				break;
			if (t < t_best)
				t_best = t;
		}
		if (t_best < best) {
			best = t_best;
			d->algo = res[i].algo;
			d->have_algo = 1;
		}
	}
	if (!d->have_algo) {
		ch_error("none of the %d cuBLASLt algorithms ran for a %s GEMM on %s", nres, ch_dtype_name(dt), d->prop.name);
		return CH_ERR_RUNTIME;
	}
	/* the trial loop left the last algorithm's C: NaN again, so that the
	 * checked calls' C is the chosen algorithm's own */
	return gemm_c_nan(d, m * n * out_sz);
}

static int cuda_setup(struct ch_dev *d, const struct ch_point_spec *p)
{
	cudaSetDevice(d->index);
	if (p->k->family == CH_FAM_GEMM)
		return gemm_setup(d, p->dt, p->shape.m, p->shape.nn, p->shape.kk, p->fast_accum);
	if (p->shape.n * ch_dtype_size(p->dt) > d->array_bytes)
		return CH_ERR_RUNTIME;
	if (d->fill_dt != (int)p->dt) {
		CH_CUDA_CHECK((cudaError_t)ch_cu_fill(p->dt, d->a, d->b, d->c, d->array_bytes / ch_dtype_size(p->dt), 0,
						 d->stream), NULL);
		d->fill_dt = p->dt;
	}
	if (p->k->id == CH_K_LAYERNORM && d->gamma_cols != p->shape.cols) {
		cudaFree(d->gamma);
		cudaFree(d->beta);
		d->gamma = d->beta = NULL;
		d->gamma_cols = 0;
		CH_CUDA_CHECK(cudaMalloc((void **)&d->gamma, p->shape.cols * sizeof(float)), NULL);
		CH_CUDA_CHECK(cudaMalloc((void **)&d->beta, p->shape.cols * sizeof(float)), NULL);
		CH_CUDA_CHECK((cudaError_t)ch_cu_fill_ln_weights(d->gamma, d->beta, p->shape.cols, d->stream), NULL);
		d->gamma_cols = p->shape.cols;
	}
	CH_CUDA_CHECK(cudaStreamSynchronize(d->stream), NULL);
	return 0;
}

/* Enqueue one call of the point on the stream (no events, no wait). */
static int launch(struct ch_dev *d, const struct ch_point_spec *p)
{
	const struct ch_kernel *k = p->k;
	int e = 0;

	if (k->family == CH_FAM_GEMM)
		return gemm_call(d, &d->algo);
	if (k->id == CH_K_DOT)
		CH_CUDA_CHECK(cudaMemsetAsync(d->dot_dev, 0, sizeof(double), d->stream), NULL);
	switch (k->family) {
	case CH_FAM_STREAM:
		e = ch_cu_stream(k->id, p->dt, d->a, d->b, d->c, p->shape.n, CH_STREAM_SCALAR, d->dot_dev, d->stream);
		break;
	case CH_FAM_LADDER:
		e = ch_cu_ladder(p->dt, d->a, d->c, p->shape.n, k->k, CH_LADDER_ALPHA, CH_LADDER_BETA, d->stream);
		break;
	default:
		if (k->id == CH_K_GELU)
			e = ch_cu_gelu(p->dt, d->b, d->c, p->shape.n, d->stream);
		else
			e = ch_cu_layernorm(p->dt, d->b, d->c, p->shape.n / p->shape.cols, p->shape.cols,
					    d->gamma, d->beta, (float)CH_LN_EPS, d->stream);
	}
	CH_CUDA_CHECK((cudaError_t)e, NULL);
	return 0;
}

static int cuda_run(struct ch_dev *d, const struct ch_point_spec *p, double *sec)
{
	const struct ch_kernel *k = p->k;
	float ms = 0;
	int rc;

	if (k->family == CH_FAM_GEMM)
		return time_call(d, &d->algo, sec);
	if (k->id == CH_K_DOT) /* the zeroing is not timed */
		CH_CUDA_CHECK(cudaMemsetAsync(d->dot_dev, 0, sizeof(double), d->stream), NULL);
	CH_CUDA_CHECK(cudaEventRecord(d->ev0, d->stream), NULL);
	if (k->id == CH_K_DOT) {
		if ((rc = ch_cu_stream(k->id, p->dt, d->a, d->b, d->c, p->shape.n, CH_STREAM_SCALAR, d->dot_dev,
				       d->stream)) != 0)
			CH_CUDA_CHECK((cudaError_t)rc, NULL);
	} else if ((rc = launch(d, p)) != 0) {
		return rc;
	}
	CH_CUDA_CHECK(cudaEventRecord(d->ev1, d->stream), NULL);
	CH_CUDA_CHECK(cudaEventSynchronize(d->ev1), NULL);
	CH_CUDA_CHECK(cudaEventElapsedTime(&ms, d->ev0, d->ev1), NULL);
	*sec = ms * 1e-3;
	if (k->id == CH_K_DOT)
		CH_CUDA_CHECK(cudaMemcpy(&d->dot, d->dot_dev, sizeof(double), cudaMemcpyDeviceToHost), NULL);
	return 0;
}

/* Energy windows: @calls calls back to back between two events, no host
 * synchronisation. When nothing is in flight the device's clock is tied
 * to the host's first (an event on the idle stream, waited for), so that
 * batch_done() can give the batch's times on ch_now_sec()'s clock. */
static int cuda_queue(struct ch_dev *d, const struct ch_point_spec *p, int calls, int slot)
{
	int i, rc;

	if (slot < 0 || slot > 1 || calls < 1)
		return CH_ERR_USAGE;
	cudaSetDevice(d->index);
	if (d->inflight == 0) {
		CH_CUDA_CHECK(cudaEventRecord(d->ev_ref, d->stream), NULL);
		CH_CUDA_CHECK(cudaEventSynchronize(d->ev_ref), NULL);
		d->t_ref = ch_now_sec();
	}
	CH_CUDA_CHECK(cudaEventRecord(d->ev_bs[slot], d->stream), NULL);
	for (i = 0; i < calls; i++)
		if ((rc = launch(d, p)) != 0)
			return rc;
	CH_CUDA_CHECK(cudaEventRecord(d->ev_be[slot], d->stream), NULL);
	d->inflight++;
	return 0;
}

static int cuda_batch_done(struct ch_dev *d, int slot, int wait, double *t_start, double *t_end)
{
	float ms0 = 0, ms1 = 0;
	cudaError_t e;

	if (slot < 0 || slot > 1)
		return CH_ERR_USAGE;
	e = wait ? cudaEventSynchronize(d->ev_be[slot]) : cudaEventQuery(d->ev_be[slot]);
	if (e == cudaErrorNotReady)
		return 0;
	CH_CUDA_CHECK(e, NULL);
	CH_CUDA_CHECK(cudaEventElapsedTime(&ms0, d->ev_ref, d->ev_bs[slot]), NULL);
	CH_CUDA_CHECK(cudaEventElapsedTime(&ms1, d->ev_ref, d->ev_be[slot]), NULL);
	*t_start = d->t_ref + ms0 * 1e-3;
	*t_end = d->t_ref + ms1 * 1e-3;
	if (d->inflight > 0)
		d->inflight--;
	return 1;
}

static double bf16_to_double(uint16_t h)
{
	uint32_t bits = (uint32_t)h << 16;
	float f;
	memcpy(&f, &bits, sizeof(f));
	return f;
}

static int cuda_check(struct ch_dev *d, const struct ch_point_spec *p, struct ch_check *out)
{
	if (p->k->family == CH_FAM_GEMM) {
		struct ch_gemm_sample s[GEMM_SAMPLES];
		enum ch_dtype od = ch_gemm_out_dtype(p->dt);
		size_t osz = ch_dtype_size(od);
		int q;
		ch_gemm_sample_positions(p->shape.m, p->shape.nn, GEMM_SAMPLES, s);
		for (q = 0; q < GEMM_SAMPLES; q++) {
			unsigned char buf[8];
			uint64_t idx = s[q].i + s[q].j * p->shape.m;
			CH_CUDA_CHECK(cudaMemcpy(buf, (char *)d->gc + idx * osz, osz, cudaMemcpyDeviceToHost), NULL);
			if (od == CH_FP64) {
				double v;
				memcpy(&v, buf, 8);
				s[q].got = v;
			} else if (od == CH_FP32) {
				float v;
				memcpy(&v, buf, 4);
				s[q].got = v;
			} else {
				uint16_t h;
				memcpy(&h, buf, 2);
				s[q].got = bf16_to_double(h);
			}
		}
		ch_check_gemm(p->dt, p->shape.m, p->shape.nn, p->shape.kk, s, GEMM_SAMPLES, out);
		return 0;
	}
	if (p->k->id == CH_K_DOT) {
		ch_check_dot(p->dt, p->shape.n, d->dot, out);
		return 0;
	}
	CH_CUDA_CHECK(cudaMemcpy(d->host, d->c, p->shape.n * ch_dtype_size(p->dt), cudaMemcpyDeviceToHost), NULL);
	return ch_check_elementwise(p->k, p->dt, &p->shape, d->host, out);
}

static void cuda_teardown(struct ch_dev *d, const struct ch_point_spec *p)
{
	if (p->k->family == CH_FAM_GEMM)
		gemm_free(d);
}

static int cuda_corrupt(struct ch_dev *d, const struct ch_point_spec *p)
{
	if (p->k->family == CH_FAM_GEMM) {
		struct ch_gemm_sample s[GEMM_SAMPLES];
		ch_gemm_sample_positions(p->shape.m, p->shape.nn, GEMM_SAMPLES, s);
		CH_CUDA_CHECK((cudaError_t)ch_cu_corrupt(ch_gemm_out_dtype(p->dt), d->gc,
						    s[GEMM_SAMPLES - 1].i + s[GEMM_SAMPLES - 1].j * p->shape.m,
						    2.0 * (double)p->shape.kk, d->stream), NULL);
	} else if (p->k->id == CH_K_DOT) {
		d->dot *= 1.001;
		return 0;
	} else {
		CH_CUDA_CHECK((cudaError_t)ch_cu_corrupt(p->dt, d->c, p->shape.n / 2, 1.0, d->stream), NULL);
	}
	CH_CUDA_CHECK(cudaStreamSynchronize(d->stream), NULL);
	return 0;
}

static void *cuda_telemetry_json(struct ch_dev *d)
{
	struct ch_nvml_sample s;
	if (!d->nvml || ch_nvml_sample(d->nv, &s) != 0)
		return NULL;
	return ch_nvml_sample_json(&s);
}

/* the energy counter alone: one NVML call, what a window reads between batches */
static int cuda_energy_j(struct ch_dev *d, double *j)
{
	if (!d->nvml)
		return CH_ERR_UNAVAILABLE;
	return ch_nvml_energy_j(d->nv, j);
}

static int cuda_throttle_ns(struct ch_dev *d, struct ch_nvml_violations *v)
{
	if (!d->nvml) {
		ch_nvml_violations_na(v);
		return CH_ERR_UNAVAILABLE;
	}
	return ch_nvml_violations(d->nv, v);
}

static int cuda_throttled(struct ch_dev *d)
{
	struct ch_nvml_sample s;
	if (!d->nvml || ch_nvml_sample(d->nv, &s) != 0 || !s.reasons_valid)
		return CH_ERR_UNAVAILABLE;
	return ch_nvml_throttled(s.reasons);
}

static int cuda_host_copy(struct ch_dev *d, uint64_t bytes, int calls, struct ch_copy_bw *out)
{
	char why[256];
	int rc = ch_cuda_copy_host(d->index, bytes, calls, out, why, sizeof(why));
	if (rc)
		ch_error("host copy bandwidth of GPU %d (%s): %s", d->index, d->bus_id, why);
	return rc;
}

static int cuda_peer_copy(struct ch_dev *src, struct ch_dev *dst, int p2p, uint64_t bytes, int calls, double *gbps)
{
	char why[256];
	int rc = ch_cuda_copy_peer(src->index, dst->index, p2p, bytes, calls, gbps, why, sizeof(why));
	if (rc && rc != CH_ERR_UNAVAILABLE)
		ch_error("peer copy GPU %d -> GPU %d (P2P %s): %s", src->index, dst->index, p2p ? "on" : "off", why);
	return rc;
}

const struct ch_backend ch_backend_cuda = {
	.name = "cuda",
	.probe = cuda_probe,
	.count = cuda_count,
	.open = cuda_open,
	.close = cuda_close,
	.info = cuda_info,
	.dtypes = cuda_dtypes,
	.alloc_arrays = cuda_alloc_arrays,
	.gemm_size = cuda_gemm_size,
	.setup = cuda_setup,
	.run = cuda_run,
	.check = cuda_check,
	.teardown = cuda_teardown,
	.corrupt = cuda_corrupt,
	.peak_estimate = NULL,
	.telemetry_json = cuda_telemetry_json,
	.energy_j = cuda_energy_j,
	.energy_window_sec = 0.5, /* NVML refreshes its counter every few tens of ms */
	.throttled = cuda_throttled,
	.queue = cuda_queue,
	.batch_done = cuda_batch_done,
	.throttle_ns = cuda_throttle_ns,
	.fp8_fast_accum = 1,
	.host_copy = cuda_host_copy,
	.peer_copy = cuda_peer_copy,
};
