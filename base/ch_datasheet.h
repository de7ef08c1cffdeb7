/*
 * ch_datasheet.h - vendor datasheet peaks (dense, no sparsity) of the GPUs
 * clusterhealth users run, with the source of every number.
 *
 * Used by roofline ("% of datasheet") and health_report (absolute per-SKU
 * expectations). Figures are the vendor's published maxima at boost clock;
 * a healthy device reaches a fraction of them (REFERENCE figures: triad
 * about 86-89% of memory bandwidth, large bf16 GEMM about 80%).
 */
#ifndef CH_DATASHEET_H
#define CH_DATASHEET_H

#ifdef __cplusplus
extern "C" {
#endif

/* Data types with a compute peak, in the order of the gflops[] array. */
enum ch_dtype_peak {
	CH_PEAK_FP64 = 0, /* FP64 Tensor Core where the device has it, else FP64 */
	CH_PEAK_FP32,     /* FP32 (CUDA cores, non-tensor) */
	CH_PEAK_TF32,     /* TF32 Tensor Core, dense */
	CH_PEAK_BF16,     /* BF16 Tensor Core, dense */
	CH_PEAK_FP16,     /* FP16 Tensor Core, dense */
	CH_PEAK_FP8,      /* FP8 Tensor Core, dense */
	CH_PEAK_NDTYPES
};

struct ch_datasheet {
	const char *sku;          /* "H200 SXM", "H100 SXM", ... */
	const char *match;        /* substring of the NVML/CUDA device name */
	const char *match_not;    /* substring that must NOT appear (or NULL) */
	double memory_gbps;       /* peak DRAM/HBM bandwidth, GB/s (1e9 B/s) */
	double gflops[CH_PEAK_NDTYPES]; /* dense peaks in GFLOP/s; 0 = not supported */
	double fp64_cuda_core_gflops; /* the "FP64" row: CUDA cores, no tensor
				       * cores (about half of gflops[FP64] on
				       * H100/H200); 0 = not published */
	const char *source;       /* document the numbers come from */
};

/**
 * ch_dtype_peak_name - "fp64", "fp32", "tf32", "bf16", "fp16", "fp8".
 * @d: [in] index. Returns a static string, or NULL when out of range.
 */
const char *ch_dtype_peak_name(int d);

/**
 * ch_dtype_peak_index - index of a dtype name, or -1 when it has no peak.
 * @name: [in] as returned by ch_dtype_peak_name().
 */
int ch_dtype_peak_index(const char *name);

/**
 * ch_datasheet_lookup - the datasheet entry for a device name.
 * @device_name: [in] name as CUDA or NVML reports it ("NVIDIA H200",
 *               "NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB", ...).
 * Returns a static entry, or NULL when the device is not in the table
 * (then only fleet-relative comparisons apply).
 */
const struct ch_datasheet *ch_datasheet_lookup(const char *device_name);

/**
 * ch_datasheet_cuda_core_gflops - the peak of plain FMA code on the CUDA
 * cores (no tensor cores), the ceiling of roofline's FMA ladder.
 * @ds: [in] an entry (NULL gives 0).  @d: [in] enum ch_dtype_peak index.
 * Returns GFLOP/s: fp64 the datasheet's "FP64" row (not "FP64 Tensor
 * Core"), fp32 its "FP32" row; 0 for other dtypes or when not published.
 */
double ch_datasheet_cuda_core_gflops(const struct ch_datasheet *ds, int d);

/**
 * ch_datasheet_table - the whole table.
 * @n: [out] number of entries. Returns the static array.
 */
const struct ch_datasheet *ch_datasheet_table(int *n);

#ifdef __cplusplus
}
#endif
#endif
