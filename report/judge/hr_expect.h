/*
 * hr_expect.h - what health_report expects of a healthy device and fabric:
 * absolute per-SKU expectations (datasheet peak x documented attainable
 * fraction, and measured reference figures for intra-node all-reduce), the
 * thresholds of the verdicts, and the file that overrides both.
 *
 * Sources (REFERENCE.md; docs/health_report.md lists them per number):
 *  - memory: BabelStream triad reaches 83-89% of the datasheet bandwidth on
 *    A100 80GB, H100 SXM and H200 (Azure AI-benchmarking-guide results):
 *    attainable fraction 0.85.
 *  - compute: a large dense GEMM reaches about 80% of the datasheet peak
 *    (H100 SXM bf16 about 795 of 989 TFLOP/s, same source): 0.80.
 *  - intra-node all-reduce busbw of 8 GPUs: H100 SXM and H200 SXM about 370
 *    GB/s without NVLS (480 with it: Azure ND H100 v5 / ND H200 v5), A100
 *    SXM about 230 GB/s.
 *  - WARN below 0.90 of an expectation: nccl-tests' own NCCL_TESTS_MIN_BW
 *    gate (fails below 0.9x); FAIL below 0.75: DCGM diag's per-SKU
 *    thresholds at 0.75x.
 *  - fleet outliers: robust z = 0.6745 (x - median) / MAD (Iglewicz and
 *    Hoaglin, 1993; their cut-off 3.5 is the least), held to the cut-off
 *    for the comparisons of the node (Bonferroni; hr_quality.h).
 */
#ifndef HR_EXPECT_H
#define HR_EXPECT_H

#include <jansson.h>

#include "base/ch_datasheet.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Expectations of one GPU model. Absent values are NAN. */
struct hr_sku_expect {
	char sku[48];                 /* datasheet SKU ("H100 SXM") or a user name */
	char match[64];               /* substring of the device name for SKUs
					 not in the datasheet table, "" none */
	double memory_gbps;           /* expected memory roof, GB/s */
	double compute_gflops[CH_NDTYPES]; /* expected compute roofs (dense GEMM:
					 tensor cores where the GPU has them) */
	double cuda_core_gflops[CH_NDTYPES]; /* expected compute roofs set by the
					 FMA ladder, which runs on the CUDA
					 cores: datasheet CUDA-core row x the
					 compute fraction (fp64, fp32; NAN
					 other dtypes and user-named SKUs) */
	double intra_busbw_gbps;      /* expected intra-node all-reduce busbw ... */
	double intra_nvls_busbw_gbps; /* ... when the run asked for NVLS (NAN: as above) */
	int intra_nranks;             /* ... of this many ranks (0: any) */
	char intra_source[400];       /* source of the intra-node figures, "" none */
	double inter_busbw_gbps;      /* expected multi-node all-reduce busbw, given
					 in --expect (no built-in: see hr_inter_ref) */
	double cluster_nic_gbps_per_gpu; /* typical cluster of this model: NIC line
					 rate per GPU, Gb/s (assumed; NAN none) */
	char cluster_source[240];     /* what that assumption is, with its source */
	char source[400];
};

/*
 * Inter-node all-reduce busbw per NIC: 46-48 GB/s per 400 Gb/s NDR NIC and
 * about 24 GB/s per 200 Gb/s HDR NIC (REFERENCE.md, measured references):
 * the low end, 46 of the 50 GB/s line rate, as the attainable fraction:
 * the parameter nic_efficiency of the row inter_node_busbw_low (hr_rules.c).
 */

/* Bus-bandwidth references describe the large-message plateau (they are
 * measured at 8 GB): a sweep whose largest size is below the parameter
 * ref_min_bytes of the busbw rows (hr_rules.c) is compared with like sweeps
 * only. */

/* Curve-shape thresholds: the parameters of the rows curve_dip, curve_gap,
 * curve_alternation and curve_collapse of the rule table (hr_rules.c;
 * docs/health_report.md, "Curve shape"). */

/* Verdict thresholds. */
struct hr_thresholds {
	double warn_ratio;        /* WARN below this fraction of an expectation (0.90) */
	double fail_ratio;        /* FAIL below this fraction (0.75) */
	double z_outlier;         /* the least cut-off on |robust z| (3.5); the cut-off
				     itself grows with the comparisons of the node
				     (hr_cutoff(), hr_quality.h) */
	double warn_pct_below;    /* an outlier this % below the fleet median: WARN (5) */
	double fail_pct_below;    /* ... FAIL (10) */
	double mad_floor_frac;    /* MAD floor as a fraction of |median| (0.001) */
	int min_fleet;            /* fewest like-for-like values for fleet comparisons (3) */
	double pcie_class_gbps;   /* intra-node busbw at or below: PCIe class (64) */
	double false_alarm;       /* false-alarm budget per node and night over all
				     of its comparisons (0.0001): "false_alarm_per_node" */
	double fail_false_alarm;  /* the budget of a FAIL (a drain candidate once
				     confirmed) per node and night where a learned
				     heavy tail sets a fleet comparison's cut-off
				     (1e-06; at most false_alarm, which it
				     follows down when only false_alarm is given;
				     both at least 1e-12):
				     "fail_false_alarm_per_node" */
};

struct hr_expect {
	double memory_fraction;   /* attainable fraction of datasheet bandwidth */
	double compute_fraction;  /* attainable fraction of datasheet FLOP/s */
	struct hr_sku_expect *skus;
	size_t nskus;
	struct hr_thresholds th;
	char *file;               /* the override file, NULL for built-ins only */
};

/**
 * hr_expect_init - the built-in expectations: for every datasheet SKU,
 * memory and compute roofs at the attainable fractions, and the
 * intra-node busbw reference figures.
 * Returns 0, or CH_ERR_RUNTIME when out of memory.
 */
int hr_expect_init(struct hr_expect *e);

/**
 * hr_expect_load_file - apply an override file (JSON, schema
 * "clusterhealth.expectations", documented in docs/health_report.md):
 * "attainable_fraction" {memory, compute}, "thresholds" {...} and "skus"
 * {NAME: {memory_gbps, compute_gflops {dtype: v}, intra_node_busbw_gbps,
 * intra_node_nranks, inter_node_busbw_gbps, match, source}}. A SKU named
 * in the file replaces the figures it gives; new SKUs need "match" unless
 * the datasheet table knows the name. Fractions are re-applied to the
 * built-in SKUs the file does not give figures for.
 * @e: [in,out] expectations from hr_expect_init(). @path: [in] file.
 * Returns 0, or CH_ERR_USAGE (message printed naming the file and the key
 * or value) for unreadable JSON, unknown keys, non-positive or non-numeric
 * values; CH_ERR_RUNTIME when out of memory.
 */
int hr_expect_load_file(struct hr_expect *e, const char *path);

/**
 * hr_expect_for - the expectations of a device.
 * @sku:  [in] datasheet SKU of the device, or NULL.
 * @name: [in] device name (for "match" entries), or NULL.
 * Returns the entry, or NULL when none applies.
 */
const struct hr_sku_expect *hr_expect_for(const struct hr_expect *e, const char *sku,
					  const char *name);

/** hr_expect_profile - the "expectations" object of the profile (new reference). */
json_t *hr_expect_profile(const struct hr_expect *e);

/** hr_expect_release - free @e and zero it. */
void hr_expect_release(struct hr_expect *e);

#ifdef __cplusplus
}
#endif
#endif
