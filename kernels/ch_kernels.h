/*
 * ch_kernels.h - roofline kernels described as data, the counts derived from
 * that description, output validation, and the compute backend interface.
 *
 * The kernel table (ch_kernel_table()) carries, for every kernel, its FLOPs
 * and the words it reads and writes per element (likwid-bench kernel files
 * and BabelStream's kernel table do the same). Bytes, FLOPs, arithmetic
 * intensity, GB/s and GFLOP/s are computed from it in ch_kernel_counts() and
 * ch_rates() and nowhere else.
 *
 * Byte counting is BabelStream's (Deakin et al., "Evaluating attainable
 * memory bandwidth of parallel programming models via BabelStream", IJCSE
 * 2018): explicit traffic only, copy 2, mul 2, add 3, triad 3, dot 2 words
 * per element. A CPU store to a line not in cache first reads it
 * (write-allocate), so "bytes_write_allocate" adds one word per element
 * written; streaming (non-temporal) stores do not.
 *
 * Roofline: Williams, Waterman, Patterson, "Roofline: an insightful visual
 * performance model for multicore architectures", CACM 52(4), 2009:
 * attainable FLOP/s = min(peak FLOP/s, AI x bandwidth), ridge point =
 * peak / bandwidth.
 *
 * This header includes no CUDA or BLAS header: backends keep those to
 * themselves.
 */
#ifndef CH_KERNELS_H
#define CH_KERNELS_H

#include "base/ch_dtype.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CH_DT_BIT(d) (1u << (d)) /* bit of an enum ch_dtype in a dtype mask */

enum ch_family { CH_FAM_STREAM = 0, CH_FAM_LADDER, CH_FAM_ELEMENTWISE, CH_FAM_GEMM, CH_NFAMILIES };

/** ch_family_name - "stream", "ladder", "elementwise", "gemm". */
const char *ch_family_name(enum ch_family f);

enum ch_kernel_id {
	CH_K_COPY, CH_K_MUL, CH_K_ADD, CH_K_TRIAD, CH_K_DOT, /* BabelStream */
	CH_K_FMA,        /* ladder rung: k FMAs per element */
	CH_K_GELU, CH_K_LAYERNORM,
	CH_K_GEMM
};

/*
 * One kernel. Arrays: a and b are inputs (never written), c the output
 * (patterns in ch_patterns.h). For the elementwise families the counts of a
 * point of n elements in rows of `cols` are
 *   flops = flops_per_elem x n + flops_per_row x n / cols
 *   bytes = (reads_per_elem + writes_per_elem) x n x size
 *           + reads_per_col x cols x size
 * For GEMM (C = A B, A m x k, B k x n, beta = 0 so C is not read):
 *   flops = 2 m n k, bytes = (m k + k n) x size(in) + m n x size(out).
 */
struct ch_kernel {
	const char *name;          /* "copy", "fma16", "gelu", "gemm", ... */
	enum ch_kernel_id id;
	enum ch_family family;
	int k;                     /* ladder: FMAs per element; 0 otherwise */
	double flops_per_elem;     /* gemm: FLOPs per multiply-add (2) */
	double flops_per_row;      /* layernorm: per-row FLOPs; 0 otherwise */
	double reads_per_elem;     /* words read per element (explicit traffic) */
	double writes_per_elem;    /* words written per element */
	double reads_per_col;      /* layernorm: gamma and beta, read once: 2 */
	unsigned dtypes;           /* CH_DT_BIT mask any backend may run */
	unsigned default_dtypes;   /* the default run's dtypes */
	const char *formula;       /* what one element does, for docs and --list */
};

/**
 * ch_kernel_table - every kernel, in the order a run measures them.
 * @n: [out] number of entries. Returns the static table.
 */
const struct ch_kernel *ch_kernel_table(int *n);

/** ch_kernel_find - the kernel named @name, or NULL. */
const struct ch_kernel *ch_kernel_find(const char *name);

/* The size of a point. */
struct ch_shape {
	uint64_t n;        /* elementwise families: elements per array */
	uint64_t cols;     /* layernorm: row length; 1 for other families */
	uint64_t m, nn, kk;/* gemm: C is m x nn, inner dimension kk */
};

/* What a point moves and computes, from the table. */
struct ch_counts {
	double flops;               /* floating-point operations per call */
	double bytes;               /* explicit bytes per call (BabelStream counting) */
	double bytes_write_allocate;/* bytes + one read per word written (write-allocate) */
	double ai;                  /* arithmetic intensity, flops / bytes (FLOP/byte) */
};

/**
 * ch_gemm_out_dtype - the output (C) dtype of a GEMM with inputs in @in:
 * fp64 for fp64, bf16 for fp8 (a combination cuBLASLt documents for fp8,
 * used by NVIDIA's LtFp8Matmul sample), fp32 for the others.
 */
enum ch_dtype ch_gemm_out_dtype(enum ch_dtype in);

/**
 * ch_kernel_counts - FLOPs, bytes and AI of one call.
 * @k: [in] kernel.  @dt: [in] dtype (its storage size).  @s: [in] shape.
 * @out: [out] counts.
 * Returns 0, or CH_ERR_USAGE when @dt is not in k->dtypes or the shape is
 * empty (n or cols 0, n not a multiple of cols, or a GEMM dimension 0).
 */
int ch_kernel_counts(const struct ch_kernel *k, enum ch_dtype dt,
		     const struct ch_shape *s, struct ch_counts *out);

/* Rates of a call that took time_sec. SI units: 1 GB = 1e9 bytes. */
struct ch_rates {
	double gbps;     /* bytes / time / 1e9 */
	double gflops;   /* flops / time / 1e9 */
	double gbps_write_allocate; /* bytes_write_allocate / time / 1e9 */
};

/**
 * ch_rates - rates of a call.
 * @c: [in] counts.  @time_sec: [in] seconds (> 0).  @out: [out] rates.
 * Returns 0, or CH_ERR_USAGE when @time_sec is not positive.
 */
int ch_rates(const struct ch_counts *c, double time_sec, struct ch_rates *out);

/**
 * ch_roof_attainable_gflops - the roofline bound at arithmetic intensity
 * @ai: min(@peak_gflops, @ai x @bw_gbps) (Williams et al. 2009).
 */
double ch_roof_attainable_gflops(double ai, double bw_gbps, double peak_gflops);

/**
 * ch_pct_of_roof - a point's performance as a percentage of the roofline
 * bound at its arithmetic intensity:
 * 100 x max(gbps / bw_gbps, gflops / peak_gflops), which equals
 * 100 x gflops / min(peak, AI x bw) when flops > 0 and is defined for
 * zero-FLOP kernels (copy) too. A roof <= 0 (unknown) is left out of the
 * max; returns -1 when both roofs are unknown.
 */
double ch_pct_of_roof(double gbps, double gflops, double bw_gbps, double peak_gflops);

/**
 * ch_ridge_flop_per_byte - ridge point, peak / bandwidth (FLOP/byte);
 * -1 when either is not positive.
 */
double ch_ridge_flop_per_byte(double peak_gflops, double bw_gbps);

/* ------------------------------------------------------------ validation */

/* The outcome of checking a point's output. */
struct ch_check {
	int ok;               /* 1 when every value checked is within tolerance */
	uint64_t checked;     /* values compared */
	uint64_t bad;         /* values outside tolerance */
	uint64_t first_bad;   /* index of the first bad value (element or sample) */
	double got, want, tol;/* of the first bad value (or of the worst one when ok) */
	double worst_ratio;   /* max |got - want| / tol over all values */
};

/**
 * ch_check_elementwise - check every element of a point's output array c
 * against its analytic value (ch_patterns.h) with a dtype tolerance.
 * @k:   [in] a stream (not dot), ladder or elementwise kernel.
 * @dt:  [in] dtype of @c: fp64, fp32 or bf16.
 * @s:   [in] the point's shape.
 * @c:   [in] host copy of the output array, s->n elements of @dt.
 * @out: [out] the outcome.
 * Tolerances (|got - want| <= tol):
 *   stream: 4 eps |want| (at most two roundings of exact inputs);
 *   ladder: 2 eps |want| (the chain alternates between exact values);
 *   gelu:   eps |want| + 16 eps32 (|x| + 1) (the fp32 tanh of
 *           ch_patterns.h is within 0.6 eps32 (|x| + 1));
 *   layernorm: eps |want| + (2 cols + 16) eps32 (|gamma| rstd (max|x| +
 *           |x - mean|) + |beta|), the forward error bound of sums of cols
 *           terms (Higham, "Accuracy and Stability of Numerical Algorithms",
 *           2nd ed., 2002, section 4.2) carried through the normalisation.
 * Runs in parallel (OpenMP). Returns 0 (the verdict is in @out->ok), or
 * CH_ERR_USAGE for an unsupported kernel or dtype.
 */
int ch_check_elementwise(const struct ch_kernel *k, enum ch_dtype dt,
			 const struct ch_shape *s, const void *c,
			 struct ch_check *out);

/**
 * ch_dot_expected - the exact dot product of a and b over @n elements
 * (each a[i] b[i] is exact in fp64; the sum uses the 128 x 256 distinct
 * products' counts), and the sum of |a[i] b[i]|.
 * @dt: [in] dtype the arrays are stored in (their values do not depend on it).
 */
void ch_dot_expected(enum ch_dtype dt, uint64_t n, double *want, double *abs_sum);

/**
 * ch_check_dot - check a dot product result.
 * @got: [in] the kernel's result (accumulated in fp64 on every backend).
 * Tolerance: (n + 2) eps64 sum|a b| + 2 eps(dt) |want| (products formed in
 * @dt, sum in fp64; Higham 2002, section 3.1).
 */
void ch_check_dot(enum ch_dtype dt, uint64_t n, double got, struct ch_check *out);

/* A sampled GEMM entry: C(i, j) as the backend computed it. */
struct ch_gemm_sample {
	uint64_t i, j;
	double got;
};

/*
 * GEMM operand layout shared by every backend ("TN", as cuBLASLt requires
 * for fp8): A is stored k x m column-major (lda = k), so A(i, l) is element
 * i*k + l; B is stored k x n column-major (ldb = k), B(l, j) is element
 * j*k + l; C is m x n column-major (ldc = m). Element p of A is
 * ch_gemm_value(CH_GEMM_SEED_A, p, ch_gemm_input_digits(dt)), of B
 * ch_gemm_value(CH_GEMM_SEED_B, ...). Backends fill C with NaN before the
 * first call (beta = 0: C is never read), so an entry no call wrote fails
 * the check.
 */
#define CH_GEMM_SEED_A 0x5eed0000000000a1ULL
#define CH_GEMM_SEED_B 0x5eed0000000000b2ULL

/**
 * ch_gemm_sample_positions - which entries of C to check: the four corners,
 * then pseudo-random positions.
 * @m, @n: [in] C's dimensions.  @count: [in] number wanted (>= 4).
 * @out: [out] @count samples with i, j set (got left 0).
 */
void ch_gemm_sample_positions(uint64_t m, uint64_t n, int count,
			      struct ch_gemm_sample *out);

/*
 * The accumulators the GEMM check allows for, and its margin over them.
 * fp64 (DMMA or FMA units) and fp32 (CUDA-core FMA, CUBLAS_COMPUTE_32F)
 * round to nearest in IEEE binary64 / binary32: 53 and 24 bits, no bit
 * margin (the fp32/fp64 bound's margin is CH_GEMM_CHECK_LAMBDA).
 * Tensor cores: tf32, bf16 and fp16 accumulate in fp32 (24 bits; NVIDIA
 * H100 whitepaper, "Hopper FP8 and FP16/BF16/TF32 ... FP32 accumulate"),
 * and may truncate and align addends to the largest of a group (Fasi,
 * Higham, Mikaitis, Pranesh, PeerJ Comput. Sci. 7:e330, 2021); Hopper's fp8
 * MMA accumulates in a 22-bit format, e8m13, 14 significant bits
 * (SageAttention2, arXiv:2411.10958, section 4.3; DeepSeek-V3 technical
 * report, arXiv:2412.19437, section 3.3.2: "around 14 bits"). The check
 * assumes CH_GEMM_ACCUM_MARGIN_BITS fewer bits than that for every
 * tensor-core dtype (22 and 12), so that an accumulator up to 4x coarser
 * than published still passes a correct result.
 */
#define CH_GEMM_ACCUM_MARGIN_BITS 2

/**
 * ch_gemm_accum_margin_bits - bits fewer than ch_gemm_accum_bits() the
 * check assumes: 0 for fp64 and fp32, CH_GEMM_ACCUM_MARGIN_BITS for the
 * tensor-core dtypes (tf32, bf16, fp16, fp8).
 */
int ch_gemm_accum_margin_bits(enum ch_dtype dt);

/**
 * ch_gemm_accum_eps - unit roundoff the check allows the GEMM accumulation
 * in dtype @dt: 2^-53 (fp64) and 2^-24 (fp32), round to nearest; for the
 * tensor-core dtypes 2^(1-p), p = ch_gemm_accum_bits() less the margin, so
 * that truncation is covered too: 2^-21 (tf32, bf16, fp16), 2^-11 (fp8).
 */
double ch_gemm_accum_eps(enum ch_dtype dt);

/**
 * ch_gemm_input_digits - significant bits of the GEMM input values
 * (ch_gemm_value()'s @digits) for dtype @dt: 53 fp64, 24 fp32 (so that a
 * TF32 substitution shows), 7 for tf32, bf16 and fp16, 2 for fp8 (e4m3):
 * products are multiples of 2^-12 (2^-2 for fp8), so every partial sum
 * below 1024 in magnitude is exact in the margin's 22 (12) accumulator bits
 * (k up to about 30,000 on these random inputs), whatever the tensor
 * core's rounding; any error beyond the output's rounding is then a wrong
 * result.
 */
int ch_gemm_input_digits(enum ch_dtype dt);

/**
 * ch_gemm_accum_bits - significant bits of the accumulator the hardware is
 * documented to have (above): 53 (fp64), 24 (fp32 accumulation), 14 (fp8).
 */
int ch_gemm_accum_bits(enum ch_dtype dt);

/* The check's confidence factor: a correct entry fails with probability at
 * most 2 exp(-lambda^2 / 2) = 3e-8 (Azuma-Hoeffding, see ch_gemm_tolerance()). */
#define CH_GEMM_CHECK_LAMBDA 6.0

/* The exact value of one GEMM entry and the sizes its error bound uses. */
struct ch_gemm_expect {
	double want;     /* sum_l A(i,l) B(l,j), compensated sum in fp64 */
	double abs_sum;  /* sum_l |A(i,l) B(l,j)| */
	double range;    /* max - min of the prefix sums P_0 = 0, P_1, ... P_k: every
			  * sum of consecutive products is at most this in magnitude */
};

/**
 * ch_gemm_expected - entry (@i, @j) of C = A B for inputs in @dt, k inner
 * products, regenerated from ch_gemm_value(): want, sum |ab| and the range
 * of the prefix sums, with Neumaier's compensated summation (Higham 2002,
 * section 4.3), so that the reference is exact to about 2^-53 |want|.
 */
void ch_gemm_expected(enum ch_dtype dt, uint64_t i, uint64_t j, uint64_t k, struct ch_gemm_expect *out);

/**
 * ch_gemm_tolerance - the largest |got - want| a correct C entry can show.
 * With u = ch_gemm_accum_eps(@dt), p = ch_gemm_accum_bits(@dt) less
 * ch_gemm_accum_margin_bits(@dt), d the ch_gemm_input_digits(@dt),
 * R = @e->range and eo = ch_dtype_eps(output dtype):
 *   - R < 2^(p - 2(d-1)): every partial sum of consecutive products is a
 *     multiple of 2^-2(d-1) below 2^p of those units, so the accumulation
 *     is exact (fp8 inputs m/2 in 12 bits, tf32, bf16, fp16 inputs m/64 in
 *     22 bits: R < 1024, every sampled entry at k = 8192): acc = 0;
 *   - else tf32, bf16, fp16, fp8 (tensor cores, whose accumulation may
 *     truncate: Fasi et al., PeerJ Comput. Sci. 7:e330, 2021):
 *     acc = (k - 1) u R, whatever the rounding mode;
 *   - else fp32 and fp64 (FMA rounded to nearest): acc = lambda sqrt(k) u R (lambda = CH_GEMM_CHECK_LAMBDA): the
 *     k - 1 rounding errors d_j s_j (|d_j| <= u, mean zero under
 *     round-to-nearest, |s_j| <= R for sums of consecutive products) form a
 *     martingale, so |sum| > lambda u R sqrt(k) has probability below
 *     2 exp(-lambda^2 / 2) (Azuma-Hoeffding; Higham and Mary, "A new
 *     approach to probabilistic rounding error analysis", SIAM J. Sci.
 *     Comput. 41(5), 2019). For random data R ~ 1.6 sqrt(k) rms|ab|, so the
 *     bound grows like k u rms|ab| against |want| ~ sqrt(k) rms|ab|, where
 *     the deterministic k u sum|ab| grows like k^2 u.
 * Returns acc (1 + eo) + eo |want| + eps64 |want| (the output's rounding
 * and the reference's own). Assumes the device sums consecutive products
 * (blocked, split-k and tree reductions of consecutive blocks all do).
 * Arithmetic and the margins at k = 256 and 8192: docs/roofline.md.
 */
double ch_gemm_tolerance(enum ch_dtype dt, uint64_t k, const struct ch_gemm_expect *e);

/**
 * ch_check_gemm - check sampled entries of C = A B against the exact
 * entries (ch_gemm_expected()) with ch_gemm_tolerance().
 * @dt:  [in] input dtype.  @m, @n, @k: [in] dimensions.
 * @s:   [in] samples with got set.  @count: [in] number of samples.
 * @out: [out] outcome; first_bad is the sample's position in @s. A NaN
 *       entry (C is filled with NaN before the calls, so an entry never
 *       written) always fails.
 */
void ch_check_gemm(enum ch_dtype dt, uint64_t m, uint64_t n, uint64_t k,
		   const struct ch_gemm_sample *s, int count, struct ch_check *out);

/* ------------------------------------------------------------ backends */

struct ch_dev; /* one open device, private to its backend */

/* Host<->device copy bandwidth of one device (ch_backend.host_copy), in GB/s
 * (1e9 bytes/s), each the median over the calls of one copy's device-timed
 * duration; pinned host memory, one copy engine per direction. */
struct ch_copy_bw {
	double h2d_gbps;        /* host to device alone */
	double d2h_gbps;        /* device to host alone */
	double bidir_h2d_gbps;  /* host to device while device to host runs */
	double bidir_d2h_gbps;  /* device to host while host to device runs */
	double bidir_gbps;      /* both at once: total bytes / span of both */
	uint64_t bytes;         /* bytes per copy */
	int calls;              /* copies per direction */
};
struct ch_nvml_violations; /* hw/ch_nvml.h */

/* What a backend tells about an open device. */
struct ch_dev_info {
	char kind[8];            /* "cpu" or "gpu" */
	char name[256];          /* CPU model or GPU product name */
	char pci_bus_id[32];     /* GPU "0000:3b:00.0"; "" for the CPU */
	uint64_t mem_total_bytes;
	uint64_t mem_free_bytes;
	uint64_t cache_bytes;    /* CPU: sum of last-level caches; GPU: L2 */
	int units;               /* CPU: cores used; GPU: SMs */
	int threads;             /* CPU: OpenMP threads, one per core; GPU: 0 */
	double clock_mhz;        /* CPU: max (or current) clock; GPU: max SM clock; 0 unknown */
	char clock_source[64];   /* where clock_mhz comes from */
	char isa[32];            /* CPU: "avx512", "avx2+fma", "sse2"; GPU: "sm_90" */
	char stores[24];         /* CPU: "write-allocate" or "streaming"; GPU: "" */
	char blas[96];           /* CPU: BLAS and the core it selected; GPU: cuBLASLt version */
	char runtime[192];       /* GPU: CUDA runtime/driver versions; CPU: "" */
	char note[256];          /* a warning about this device's setup, or "" */
	char nvml_match[16];     /* GPU: how its NVML device was found ("pci_bus_id",
				  * "uuid", "index", "none": ch_nvml_match_name()); CPU: "" */
};

/* One point to measure. */
struct ch_point_spec {
	const struct ch_kernel *k;
	enum ch_dtype dt;
	struct ch_shape shape;
	int plain_stores; /* CPU stream kernels: plain (write-allocate) stores for
			   * these calls even on a device with streaming stores */
	int fast_accum;   /* fp8 GEMM: 1 = fast accumulation
			   * (CUBLASLT_MATMUL_DESC_FAST_ACCUM), 0 = the default,
			   * split accumulator (partial sums promoted to fp32) */
};

/*
 * A compute backend: a const table filled with designated initializers.
 * Slots marked "may be NULL" are optional and checked before use.
 * Every function returns 0 or a negative ch_status; CH_ERR_UNAVAILABLE is
 * "not here" (no device, not built), distinct from CH_ERR_RUNTIME.
 */
struct ch_backend {
	const char *name;   /* "cpu", "cuda" */
	/* probe - can this backend run here? 0, or CH_ERR_UNAVAILABLE with the
	 * reason in @why (e.g. "no CUDA device: CUDA driver version is
	 * insufficient"). Cheap; no device state is kept. */
	int (*probe)(char *why, size_t n);
	/* count - number of devices (0 when unavailable). */
	int (*count)(void);
	/* open - open device @index (0-based, backend order). @why gets the
	 * reason of a failure. The device is released with close(). */
	int (*open)(int index, struct ch_dev **out, char *why, size_t n);
	void (*close)(struct ch_dev *d);
	int (*info)(struct ch_dev *d, struct ch_dev_info *out);
	/* dtypes - CH_DT_BIT mask of the dtypes this device runs @k in. */
	unsigned (*dtypes)(struct ch_dev *d, const struct ch_kernel *k);
	/* alloc_arrays - allocate a, b, c of @bytes each (first-touched by the
	 * threads that use them, CPU) and fill a and b; replaces earlier arrays. */
	int (*alloc_arrays)(struct ch_dev *d, uint64_t bytes);
	/* gemm_size - default square GEMM size: CPU calibrates so that one
	 * call takes at least @min_sec; GPU returns 8192. May be NULL. */
	int (*gemm_size)(struct ch_dev *d, enum ch_dtype dt, double min_sec, uint64_t *n);
	/* setup - prepare a point (GEMM: allocate and fill the matrices, choose
	 * the algorithm; elementwise: nothing or input conversion). */
	int (*setup)(struct ch_dev *d, const struct ch_point_spec *p);
	/* run - one call of the point; @sec its duration measured by the
	 * device (CUDA events) or the host's monotonic clock (CPU). */
	int (*run)(struct ch_dev *d, const struct ch_point_spec *p, double *sec);
	/* check - validate the output of the last run() (see ch_check_*). */
	int (*check)(struct ch_dev *d, const struct ch_point_spec *p, struct ch_check *out);
	/* teardown - release what setup() took. May be NULL. */
	void (*teardown)(struct ch_dev *d, const struct ch_point_spec *p);
	/* corrupt - test hook: damage one value of the last run's output so
	 * that check() must fail (used only when the environment variable
	 * CH_ROOFLINE_CORRUPT names the point; docs/roofline.md). May be NULL. */
	int (*corrupt)(struct ch_dev *d, const struct ch_point_spec *p);
	/* peak_estimate - estimated peak GFLOP/s for @dt with its derivation
	 * in @how (CPU: cores x clock x lanes x FMA units x 2). May be NULL;
	 * returns CH_ERR_UNAVAILABLE when it cannot estimate. */
	int (*peak_estimate)(struct ch_dev *d, enum ch_dtype dt, double *gflops,
			     char *how, size_t n);
	/* telemetry_json - a JSON snapshot (clocks, power, temperature,
	 * reasons, energy counter) as a jansson json_t* cast to void*, or NULL
	 * when n/a. May be NULL. */
	void *(*telemetry_json)(struct ch_dev *d);
	/* energy_j - the device's energy counter in joules (NVML for GPUs,
	 * RAPL packages for the CPU); CH_ERR_UNAVAILABLE when n/a. May be NULL. */
	int (*energy_j)(struct ch_dev *d, double *j);
	/* energy_window_sec - the shortest window, in seconds, over which
	 * differences of energy_j() mean something (the counter's refresh:
	 * NVML's every few tens of ms, RAPL's about 1 ms); roofline repeats a
	 * point until its energy window is this long (ch_energy_window). */
	double energy_window_sec;
	/* throttled - 1 when the device's clocks are held down by power or
	 * temperature now, 0 when not, CH_ERR_UNAVAILABLE when n/a. May be NULL. */
	int (*throttled)(struct ch_dev *d);
	/* queue - start @calls calls of the set-up point back to back, after
	 * whatever was queued before, without waiting for them (CUDA: launched
	 * on the device's stream between two events, no host synchronisation);
	 * batch slot @slot (0 or 1) records when its first call started and its
	 * last call ended. At most two batches are in flight. May be NULL (a
	 * synchronous backend: the energy window then times call by call). */
	int (*queue)(struct ch_dev *d, const struct ch_point_spec *p, int calls, int slot);
	/* batch_done - has the batch in @slot finished? @wait: block until it
	 * has. When it has, @t_start and @t_end get its first call's start and
	 * last call's end on ch_now_sec()'s clock, and the slot is free again.
	 * Returns 1 finished, 0 not yet (only without @wait), or a negative
	 * status. Set together with queue(). */
	int (*batch_done)(struct ch_dev *d, int slot, int wait, double *t_start, double *t_end);
	/* throttle_ns - the device's cumulative clock-violation counters (ns,
	 * per cause; hw/ch_nvml.h), to be differenced over an energy window.
	 * May be NULL; returns CH_ERR_UNAVAILABLE when n/a. */
	int (*throttle_ns)(struct ch_dev *d, struct ch_nvml_violations *v);
	/* fp8_fast_accum - 1 when the fp8 GEMM also runs with fast
	 * accumulation (ch_point_spec.fast_accum): roofline then measures both
	 * modes, labelled. */
	int fp8_fast_accum;
	/* host_copy - host<->device copy bandwidth (struct ch_copy_bw): @calls
	 * copies of @bytes between pinned host memory and the device in each
	 * direction, then both directions at once. Safe to call for several
	 * devices from several threads at once. May be NULL (no host link,
	 * e.g. the CPU); returns 0, CH_ERR_UNAVAILABLE or CH_ERR_RUNTIME. */
	int (*host_copy)(struct ch_dev *d, uint64_t bytes, int calls, struct ch_copy_bw *out);
	/* peer_copy - device-to-device copy bandwidth from @src to @dst
	 * (@calls copies of @bytes; cudaMemcpyPeer), with peer access enabled
	 * (@p2p = 1; CH_ERR_UNAVAILABLE when the pair cannot) or disabled
	 * (staged through the host). @gbps: [out] median GB/s (1e9 B/s).
	 * May be NULL. */
	int (*peer_copy)(struct ch_dev *src, struct ch_dev *dst, int p2p, uint64_t bytes, int calls, double *gbps);
};

/* The backends (each defined by its own folder). */
extern const struct ch_backend ch_backend_cpu;

/* Stores of the CPU stream kernels (copy, mul, add, triad). */
enum ch_stores {
	CH_STORES_AUTO = 0,        /* streaming where the CPU has them, else write-allocate */
	CH_STORES_STREAMING,       /* non-temporal stores (movntpd/movntps); the CPU must have them */
	CH_STORES_WRITE_ALLOCATE   /* plain stores: each written line is read first */
};

/**
 * ch_cpu_set_stores - the stores of CPU devices opened after this call
 * (process-wide; roofline --stores). Opening fails with CH_ERR_UNAVAILABLE
 * when CH_STORES_STREAMING is asked on a CPU without streaming stores.
 * ch_dev_info.stores says which one a device uses.
 */
void ch_cpu_set_stores(enum ch_stores s);
extern const struct ch_backend ch_backend_cuda; /* always defined: reports
	"not built in" without HAVE_CUDA */

/**
 * ch_backend_find - a backend by name ("cpu", "cuda"), NULL when unknown.
 */
const struct ch_backend *ch_backend_find(const char *name);

#ifdef __cplusplus
}
#endif
#endif
