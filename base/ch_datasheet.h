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

#include "base/ch_dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ch_datasheet {
	const char *sku;          /* "H200 SXM", "H100 SXM", ... */
	const char *match;        /* substring of the NVML/CUDA device name */
	const char *match_not;    /* substring that must NOT appear (or NULL) */
	double memory_gbps;       /* peak DRAM/HBM bandwidth, GB/s (1e9 B/s) */
	double gflops[CH_NDTYPES];     /* dense peaks in GFLOP/s by enum ch_dtype (ch_dtype.h:
					 * FP64 Tensor Core where the device has it, else FP64;
					 * FP32 non-tensor; TF32, BF16, FP16, FP8 Tensor Core,
					 * dense); 0 = not supported */
	double fp64_cuda_core_gflops; /* the "FP64" row: CUDA cores, no tensor
				       * cores (about half of gflops[CH_FP64] on
				       * H100/H200); 0 = not published */
	const char *source;       /* document the numbers come from */
};

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
 * @ds: [in] an entry (NULL gives 0).  @d: [in] enum ch_dtype.
 * Returns GFLOP/s: fp64 the datasheet's "FP64" row (not "FP64 Tensor
 * Core"), fp32 its "FP32" row; 0 for other dtypes or when not published.
 */
double ch_datasheet_cuda_core_gflops(const struct ch_datasheet *ds, enum ch_dtype d);

/**
 * ch_datasheet_table - the whole table.
 * @n: [out] number of entries. Returns the static array.
 */
const struct ch_datasheet *ch_datasheet_table(int *n);

#ifdef __cplusplus
}
#endif
#endif
