/*
 * ch_loader.h - loader_contention's model: where the GPU feeder threads and
 * the dataloader workers run (placement planning from an hwloc topology),
 * the workers' batch work, the /proc metrics, the verdict and the
 * recommendation with its binding lines.
 *
 * Everything here except ch_lc_sweep() and ch_lc_plan_mode() is a pure
 * function of its arguments (an hwloc topology, text read from /proc,
 * measured numbers), so it is unit-tested against exact values: the real
 * topologies in shared/data/topologies, known /proc texts, known batches.
 *
 * CPU sets are hwloc bitmaps of PU OS indexes (what numactl and taskset
 * call CPUs). Times are in seconds unless a name says otherwise (_us, _ms).
 */
#ifndef CH_LOADER_H
#define CH_LOADER_H

#include <hwloc.h>
#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "bench/common/ch_opts.h"
#include "base/ch_result.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------ placements */

/*
 * Where the feeders and the workers run. Order matters: it is the order of
 * the sweep and the tie-break order of the recommendation (see
 * ch_lc_pick()).
 */
enum ch_lc_placement {
	CH_LC_BASELINE = 0, /* feeder alone on its reserved core, no workers, no hog */
	CH_LC_SHARED,       /* feeder and workers on the same cores (the GPU's share) */
	CH_LC_ISOLATED,     /* feeder on a reserved core, workers on the other cores */
	CH_LC_NUMA_LOCAL,   /* isolated, within the GPU's NUMA node, memory bound there */
	CH_LC_NUMA_REMOTE,  /* isolated, on another NUMA node, memory bound there */
	CH_LC_AS_IS,        /* no binding: the affinity the process inherited */
	CH_LC_NPLACEMENTS
};

/**
 * ch_lc_placement_name - "baseline", "shared", "isolated", "numa-local",
 * "numa-remote" or "as-is" (the names used on the command line and in the
 * result file). Returns "?" for an out-of-range value.
 */
const char *ch_lc_placement_name(int p);

/**
 * ch_lc_placement_lookup - the placement named @s (one of the names of
 * ch_lc_placement_name() except "baseline").
 * @opt: [in] option name for the message.
 * Returns the enum value, or CH_ERR_USAGE after a message that lists the
 * accepted names.
 */
int ch_lc_placement_lookup(const char *opt, const char *s);

/* Locality of one GPU, real (from the PCI tree) or emulated. */
struct ch_lc_gpu {
	char pci_bus_id[20];   /* "0000:84:00.0", or "" for an emulated GPU */
	char name[128];        /* PCI device name, or "emulated" */
	hwloc_bitmap_t cpuset; /* PUs local to the GPU (owned; freed by ch_lc_gpus_release()) */
	int numa;              /* logical index of the GPU's NUMA node, -1 when none */
};

/**
 * ch_lc_gpus_find - the compute GPUs of a topology, in PCI order.
 * @topo: [in] topology from ch_topo_load() (I/O devices kept).
 * @gpus: [out] array of @max entries (may be NULL when @max is 0).
 * @max:  [in] capacity.
 * Starts from ch_topo_gpus() (NVIDIA, AMD and Intel display devices) and
 * keeps the ones a GPU compute driver exposed (an OS device named cuda*,
 * nvml* or rsmi*, or of subtype CUDA, NVML or RSMI: CUDA, NVML and ROCm
 * SMI; OpenCL is not counted, it also lists CPUs and display chips) if
 * any has one; otherwise the 3D controllers (PCI class 0x0302) if any;
 * otherwise all of them. This drops on-board VGA chips and unused cards on
 * machines that have a driver-visible GPU (the two-socket server in
 * shared/data/topologies has four display devices and one CUDA GPU).
 * cpuset is the CPU set of the GPU's first non-I/O ancestor (hwloc's PCI
 * locality), numa the first NUMA node inside or around it.
 * Returns the number of GPUs found (only the first @max are filled), or
 * CH_ERR_RUNTIME when out of memory. Release with ch_lc_gpus_release().
 */
int ch_lc_gpus_find(hwloc_topology_t topo, struct ch_lc_gpu *gpus, int max);

/**
 * ch_lc_gpus_emulate - localities for @n emulated GPUs on a machine with
 * fewer real ones: emulated GPU j is local to the j-th NUMA node (modulo
 * the number of NUMA nodes with allowed CPUs), in logical order.
 * @topo: [in] topology.  @n: [in] count, >= 1.  @gpus: [out] @n entries.
 * Returns 0 or CH_ERR_RUNTIME (out of memory). Release with
 * ch_lc_gpus_release().
 */
int ch_lc_gpus_emulate(hwloc_topology_t topo, int n, struct ch_lc_gpu *gpus);

/** ch_lc_gpus_release - free the cpusets of @n entries (NULL cpusets are fine). */
void ch_lc_gpus_release(struct ch_lc_gpu *gpus, int n);

/* Placement of one GPU's feeder and workers. */
struct ch_lc_place {
	hwloc_bitmap_t feeder_cpus; /* PUs the feeder thread is bound to (owned) */
	hwloc_bitmap_t worker_cpus; /* PUs the worker processes are bound to (owned) */
	int cpu_numa_os;       /* OS index of the NUMA node holding all these PUs, -1 if they span several */
	int mem_numa_os;       /* OS index of the node memory is bound to, -1 when not bound */
	int feeder_cores;      /* cores in feeder_cpus */
	int worker_cores;      /* cores in worker_cpus */
	int feeder_sharers;    /* GPUs whose feeders share feeder_cpus (1 = reserved for this one) */
	int worker_sharers;    /* GPUs whose workers share worker_cpus */
	int bind;              /* 0 for as-is: nothing is bound */
};

/* A placement for every GPU. */
struct ch_lc_plan {
	int placement;             /* enum ch_lc_placement */
	int ngpus;
	struct ch_lc_place *gpu;   /* ngpus entries (owned) */
	char note[256];            /* why a GPU could not get a reserved core, or "" */
};

/**
 * ch_lc_plan_make - plan a placement for each GPU. A pure function of the
 * topology: no binding is done, so it serves this machine and a saved XML.
 * @topo:      [in] topology; its allowed cpuset bounds every set planned.
 * @gpus:      [in] @ngpus localities (ch_lc_gpus_find() or _emulate()).
 * @ngpus:     [in] >= 1.
 * @placement: [in] enum ch_lc_placement.
 * @inherited: [in] for CH_LC_AS_IS, the PUs the process may run on (its
 *             current binding); NULL means the allowed cpuset. Ignored
 *             otherwise.
 * @out:       [out] the plan; release with ch_lc_plan_release().
 * @why:       [out] reason when the placement does not apply ("one NUMA
 *             node"); may be NULL.  @whylen: [in] size of @why.
 *
 * The rule (docs/loader_contention.md, "Placement planning"): GPUs whose
 * locality is the same set of cores form a group; numa-local uses the GPU's
 * NUMA node as the locality, numa-remote another NUMA node (the farthest by
 * hwloc's latency matrix when present, else the next one in logical
 * order). A group of k GPUs on n allowed cores (hwloc Core objects, taken in
 * logical order):
 *  - n >= 2k: GPU j gets a contiguous block of n/k cores (the first n%k
 *    blocks one more); its feeder gets the block's first core (all its PUs),
 *    its workers the rest of the block;
 *  - 2 <= n < 2k: the first n/2 cores are a feeder pool, GPU j's feeder gets
 *    pool core floor(j x (n/2) / k); the other cores are one worker pool
 *    shared by the group's workers; @out->note says so;
 *  - n == 1: feeder and workers share the core (note).
 * shared gives feeder and workers the union of the two sets; baseline the
 * isolated feeder set (and no workers); as-is the inherited set for both.
 * Memory is bound (mem_numa_os) for numa-local and numa-remote only.
 * Returns 0; CH_ERR_UNAVAILABLE with @why when a NUMA placement is asked on
 * a topology with one NUMA node ("one NUMA node") or when numa-remote has
 * no other node with allowed CPUs; CH_ERR_USAGE for ngpus < 1 or a bad
 * placement; CH_ERR_RUNTIME when out of memory or a GPU's locality holds no
 * allowed core.
 */
int ch_lc_plan_make(hwloc_topology_t topo, const struct ch_lc_gpu *gpus, int ngpus,
		    int placement, hwloc_const_bitmap_t inherited,
		    struct ch_lc_plan *out, char *why, size_t whylen);

/** ch_lc_plan_release - free what ch_lc_plan_make() allocated (safe twice). */
void ch_lc_plan_release(struct ch_lc_plan *plan);

/**
 * ch_lc_mask_collapsed - is the process bound to a single CPU on a machine
 * that has more?  (A known failure: some OpenMP runtimes bind the initial
 * thread to one core, and every DataLoader worker forked from it inherits
 * that one core.)
 * @allowed: [in] PUs the process could use (topology's allowed cpuset).
 * @bound:   [in] PUs it is bound to (process or thread binding).
 * Returns 1 when @bound holds exactly one PU and @allowed more than one,
 * else 0.
 */
int ch_lc_mask_collapsed(hwloc_const_bitmap_t allowed, hwloc_const_bitmap_t bound);

/* ------------------------------------------------------- binding lines */

/* The command lines that realise a plan for one GPU (one rank per GPU). */
struct ch_lc_lines {
	char *numactl;    /* "numactl --physcpubind=8-15,24-31 --membind=1 -- CMD" */
	char *hwloc_bind; /* "hwloc-bind --cpubind core:8-15 --membind node:1 -- CMD" */
	char *in_process; /* the feeder/worker split inside the rank */
};

/**
 * ch_lc_lines_make - binding lines for GPU @gpu of @plan.
 * @topo: [in] the topology the plan was made on (for hwloc logical core
 *        indexes).  @plan: [in].  @gpu: [in] 0..plan->ngpus-1.
 * @out:  [out] malloc'ed strings; free with ch_lc_lines_release().
 * The rank's process gets feeder_cpus | worker_cpus; memory is bound to
 * cpu_numa_os when those CPUs sit on one NUMA node (omitted otherwise).
 * numactl takes OS CPU numbers (--physcpubind) and OS node numbers;
 * hwloc-bind takes logical core and NUMA node indexes (its default). "CMD"
 * stands for the training command. in_process names the feeder's CPUs and
 * the workers' CPUs and how to apply them in PyTorch (os.sched_setaffinity
 * in worker_init_fn). For as-is the lines say that nothing is bound.
 * Returns 0, CH_ERR_USAGE for a bad @gpu, CH_ERR_RUNTIME when out of memory.
 */
int ch_lc_lines_make(hwloc_topology_t topo, const struct ch_lc_plan *plan, int gpu,
		     struct ch_lc_lines *out);

/** ch_lc_lines_release - free the strings (safe twice). */
void ch_lc_lines_release(struct ch_lc_lines *l);

/**
 * ch_lc_slurm_line - the Slurm launch line for one rank per GPU of @plan.
 * Returns a malloc'ed string ("srun --ntasks-per-node=N
 * --cpu-bind=mask_cpu:M0,M1,... [--mem-bind=map_mem:N0,N1,...] CMD", masks
 * in hex, one per local rank: the feeder and worker CPUs of that GPU; the
 * mem-bind part only when every rank's CPUs sit on one NUMA node), or NULL
 * when out of memory. For as-is, "srun --cpu-bind=none CMD".
 */
char *ch_lc_slurm_line(const struct ch_lc_plan *plan);

/* ------------------------------------------------------------ batch work */

#define CH_LC_VOCAB 50257      /* token ids are in [2, CH_LC_VOCAB) (GPT-2's vocabulary size) */
#define CH_LC_CHUNK_BYTES 65536 /* uncompressed bytes of one shard chunk */
#define CH_LC_NCHUNKS 8        /* chunks in the synthetic shard */

/* A synthetic compressed shard: text-like bytes, zlib-compressed per chunk. */
struct ch_lc_shard {
	unsigned char *z[CH_LC_NCHUNKS]; /* compressed chunks (owned) */
	size_t zlen[CH_LC_NCHUNKS];      /* compressed sizes, bytes */
	uint32_t crc[CH_LC_NCHUNKS];     /* crc32 of each uncompressed chunk */
	size_t raw_bytes;                /* uncompressed bytes per chunk (CH_LC_CHUNK_BYTES) */
};

/**
 * ch_lc_shard_make - generate and compress the shard (deterministic: the same
 * @seed gives the same bytes on every machine).
 * @s: [out] shard; release with ch_lc_shard_release().  @seed: [in].
 * Text: a vocabulary of 4096 pseudo-words of 1-10 lower-case letters, words
 * drawn from it with a skew towards the first ones, with spaces,
 * punctuation and newlines (all from a splitmix64 stream); each chunk
 * compressed with zlib level 6 (about 2.3:1).
 * Returns 0, CH_ERR_RUNTIME on allocation or zlib failure (printed).
 */
int ch_lc_shard_make(struct ch_lc_shard *s, uint64_t seed);

/** ch_lc_shard_release - free the chunks (safe twice). */
void ch_lc_shard_release(struct ch_lc_shard *s);

/**
 * ch_lc_token_id - the token id of one token: 32-bit FNV-1a of its bytes,
 * mapped to [2, CH_LC_VOCAB) as 2 + hash % (CH_LC_VOCAB - 2).
 * (FNV-1a: Fowler, Noll, Vo; offset basis 2166136261, prime 16777619.)
 */
int32_t ch_lc_token_id(const unsigned char *tok, size_t len);

/**
 * ch_lc_tokenize - the tokenizer-like scan: runs of letters and digits are
 * word tokens, every other non-space byte is a token of its own, white
 * space separates. Token ids are written to @out[(*pos) % cap] onwards
 * (wrapping: collation into a fixed-size batch), *pos advances.
 * @text, @len: [in] bytes.  @out: [out] cap int32 slots.  @pos: [in,out].
 * Returns the number of tokens found.
 */
size_t ch_lc_tokenize(const unsigned char *text, size_t len, int32_t *out, size_t cap,
		      size_t *pos);

/* Scratch space of one producer (worker or calibration). */
struct ch_lc_scratch {
	unsigned char *raw; /* CH_LC_CHUNK_BYTES, decompression target */
};

/** ch_lc_scratch_init - allocate; returns 0 or CH_ERR_RUNTIME. */
int ch_lc_scratch_init(struct ch_lc_scratch *sc);
/** ch_lc_scratch_release - free (safe twice). */
void ch_lc_scratch_release(struct ch_lc_scratch *sc);

/**
 * ch_lc_batch_make - produce batch number @seq: @units work units, unit u
 * decompresses chunk (seq x units + u) % CH_LC_NCHUNKS (zlib inflate,
 * checked against the chunk's crc32), scans it into token ids, and collates
 * them into @out (ntok int32 slots, wrapping), padding unused slots with 0.
 * @s: [in] shard.  @seq: [in] batch number.  @units: [in] >= 1.
 * @sc: [in,out] scratch.  @out: [out] ntok slots.  @ntok: [in] >= 1.
 * @crc: [out] crc32 of the ntok x 4 bytes of @out (may be NULL).
 * Returns 0, or CH_ERR_CHECK when a chunk does not inflate to its crc32.
 */
int ch_lc_batch_make(const struct ch_lc_shard *s, uint64_t seq, int units,
		     struct ch_lc_scratch *sc, int32_t *out, size_t ntok, uint32_t *crc);

/**
 * ch_lc_unit_sec - calibrate: the median wall time of one work unit (one
 * chunk inflated and scanned) over @reps units, on the calling thread.
 * Returns the time in seconds (> 0), or a negative ch_status.
 */
double ch_lc_unit_sec(const struct ch_lc_shard *s, int reps);

/**
 * ch_lc_units_per_batch - units so that a batch costs @batch_sec of CPU
 * when a unit costs @unit_sec: max(1, round(batch_sec / unit_sec)).
 */
int ch_lc_units_per_batch(double batch_sec, double unit_sec);

/* ----------------------------------------------------------- /proc metrics */

/* /proc/stat, /proc/pressure/cpu and reading small files: hw/ch_procfs.h */

/**
 * ch_lc_parse_schedstat - parse /proc/<pid>/task/<tid>/schedstat text:
 * "RUN_NS WAIT_NS SLICES" (time on CPU, time runnable but waiting on a run
 * queue, number of time slices; Documentation/scheduler/sched-stats.rst).
 * Returns 0, or CH_ERR_RUNTIME when malformed.
 */
int ch_lc_parse_schedstat(const char *text, uint64_t *run_ns, uint64_t *wait_ns,
			  uint64_t *slices);


/* --------------------------------------------------- metrics and verdict */

enum ch_lc_verdict { CH_LC_PASS = 0, CH_LC_WARN = 1, CH_LC_FAIL = 2 };

/** ch_lc_verdict_name - "pass", "warn" or "fail". */
const char *ch_lc_verdict_name(int v);

/*
 * Thresholds, with their sources:
 *  input wait, as a fraction of the step: < 5% pass, 5-20% warn, >= 20% fail
 *  (TensorFlow profiler, input-pipeline analysis: "input-bound" at 20%);
 *  accelerator utilisation: >= 90% pass (DLIO / MLPerf Storage AU
 *  threshold), < 70% fail, warn between.
 */
#define CH_LC_WAIT_WARN_FRAC 0.05
#define CH_LC_WAIT_FAIL_FRAC 0.20
#define CH_LC_UTIL_PASS_FRAC 0.90
#define CH_LC_UTIL_FAIL_FRAC 0.70
#define CH_LC_WAIT_SOURCE "TensorFlow profiler input-pipeline analysis (input wait < 5% fine, 5-20% moderate, >= 20% input-bound)"
#define CH_LC_UTIL_SOURCE "DLIO / MLPerf Storage accelerator utilisation (pass at >= 90%); fail below 70% (clusterhealth issue 5)"

#define CH_LC_MAX_REASONS 6

/* The repeats a configuration's figures are measured over: its steps cut
 * into this many consecutive windows (struct ch_lc_metrics' spreads). */
#define CH_LC_REPEATS 10

/* What one configuration measured (all GPUs' feeders together). */
struct ch_lc_metrics {
	int steps;                 /* feeder steps measured, all feeders */
	double wall_sec;           /* mean over feeders of the measured window */
	double late_p50_us, late_p99_us, late_max_us; /* wake-up minus deadline */
	double wait_p99_us;        /* input wait per step, 99th percentile */
	double copy_p50_us;        /* hand-off copy per step, median */
	double input_wait_frac;    /* sum of input waits / wall time, mean over feeders */
	double accel_util;         /* device busy / wall time, mean over feeders */
	int repeats;               /* windows the spreads below are over (CH_LC_REPEATS) */
	double input_wait_frac_sd; /* standard deviation of input_wait_frac over the
				      run's repeats (consecutive windows of equal
				      steps, each computed as the whole run); NAN
				      when a feeder has under 2 steps per window */
	double accel_util_sd;      /* ... of accel_util */
	double batches_per_sec;    /* all feeders together */
	double runq_delay_us;      /* feeder run-queue wait per step (schedstat), mean; < 0 unknown */
	double invol_ctx_switches; /* feeders' involuntary context switches, sum; < 0 unknown */
	double worker_invol_ctx_switches; /* workers', sum; < 0 unknown */
	double worker_cpu_sec;     /* workers' user + system CPU time, sum */
	double psi_some_avg10;     /* /proc/pressure/cpu some avg10 at the end, %; < 0 unknown */
	double psi_some_frac;      /* stall time / wall over the window; < 0 unknown */
	double host_cpu_util;      /* /proc/stat over the window; < 0 unknown */
	double steal_frac;         /* /proc/stat over the window; < 0 unknown */
	long bad_batches;          /* batches that failed validation */
	int verdict;               /* enum ch_lc_verdict, set by ch_lc_judge() */
	int nreasons;
	char reasons[CH_LC_MAX_REASONS][200];
};

/**
 * ch_lc_judge - set m->verdict and m->reasons from the thresholds above.
 * @m: [in,out] measured metrics.
 * @has_workers: [in] 0 for the baseline (no input pipeline: input wait is
 *              not judged).
 * Any bad batch fails the configuration. Each reason names the metric, its
 * value, the threshold crossed and the source. Returns m->verdict.
 */
int ch_lc_judge(struct ch_lc_metrics *m, int has_workers);

/**
 * ch_lc_host_busy - whether the host was busy before the load started: too
 * busy with other work for the verdict to mean anything, by the cut-offs of
 * health_report's measurement_noisy rule, CH_NOISY_PRESSURE_PCT and
 * CH_NOISY_BUSY_PCT (hw/ch_procfs.h; docs/health_report.md "Measurement
 * quality").
 * @pressure_pct: [in] /proc/pressure/cpu "some avg10" as the run started
 *     (conditions.before.cpu_pressure_some_avg10_pct), %; NAN or < 0: unknown.
 * @busy_pct: [in] other work's share of all CPUs as the run started
 *     (conditions.before.cpu_busy_pct), %; NAN or < 0: unknown.
 * @base_psi_pct: [in] the pressure at the end of the baseline configuration
 *     (feeders alone, before any worker or hog), %; NAN or < 0: unknown.
 * @why: [out] what was busy, with its cut-off ("" when not busy); @n bytes.
 * An unknown figure never makes the host busy. Returns 1 when a known
 * figure is at or above its cut-off, else 0.
 */
int ch_lc_host_busy(double pressure_pct, double busy_pct, double base_psi_pct, char *why, size_t n);

/* One configuration of the sweep, as the recommendation sees it. */
struct ch_lc_choice {
	int placement;  /* enum ch_lc_placement */
	int workers;
	int verdict;    /* enum ch_lc_verdict */
	double accel_util;
};

/**
 * ch_lc_pick - the configuration to recommend.
 * @c: [in] @n configurations. The baseline (CH_LC_BASELINE, no workers) is
 *     never picked.
 * @allow_as_is: [in] 0 to never pick as-is (its affinity mask collapsed:
 *     "leave it as it is" would be wrong advice).
 * Rule: the best verdict (pass before warn before fail), then the fewest
 * workers, then the placement preference numa-local, isolated, shared,
 * numa-remote, as-is (binding you can reproduce before binding you
 * inherited), then the higher accelerator utilisation.
 * Returns the index in @c, or -1 when none can be picked.
 */
int ch_lc_pick(const struct ch_lc_choice *c, int n, int allow_as_is);

/* ---------------------------------------------------------------- the tool */

#define CH_LC_MAX_WORKER_COUNTS 16
#define CH_LC_MAX_GPUS 64

enum ch_lc_copy_choice { CH_LC_COPY_AUTO = 0, CH_LC_COPY_CUDA, CH_LC_COPY_STAGING };

/* Options of loader_contention (defaults in ch_lc_opts_init()). */
struct ch_lc_opts {
	double step_sec;        /* --step-ms: the emulated device's step period */
	double duration_sec;    /* --duration: measured time per configuration */
	int workers[CH_LC_MAX_WORKER_COUNTS]; /* --workers: worker counts per GPU */
	int nworkers;
	int placements[CH_LC_NPLACEMENTS]; /* --placements: 1 = in the sweep */
	int gpus;               /* --gpus: feeders (emulated GPUs); 0 = automatic */
	uint64_t batch_bytes;   /* --batch-bytes: collated batch size */
	double batch_sec;       /* --batch-ms: CPU work per batch; < 0 = 0.8 x step */
	int prefetch;           /* --prefetch: batches queued per worker */
	double hog_util;        /* --hog: background load per worker CPU, 0 = none */
	int copy;               /* --copy: enum ch_lc_copy_choice */
	const char *topology;   /* --topology FILE.xml: plan mode */
};

/** ch_lc_opts_init - the defaults (documented in --help and docs/usage.md). */
void ch_lc_opts_init(struct ch_lc_opts *o);

/**
 * ch_lc_opt - handle one of loader_contention's own options.
 * @c: [in] getopt_long value (CH_LC_OPT_*).  @arg: [in] its argument.
 * @o: [in,out] options.
 * Returns 1 when handled, 0 when @c is not one of ours, CH_ERR_USAGE (message
 * printed, naming the option and the value) for a bad value.
 */
int ch_lc_opt(int c, const char *arg, struct ch_lc_opts *o);

/** ch_lc_opts_check - cross-option checks after parsing; 0 or CH_ERR_USAGE. */
int ch_lc_opts_check(const struct ch_lc_opts *o);

/* Long options, numbered from CH_OPT_FIRST_TOOL (ch_opts.h). */
enum {
	CH_LC_OPT_STEP_MS = CH_OPT_FIRST_TOOL, CH_LC_OPT_DURATION, CH_LC_OPT_WORKERS,
	CH_LC_OPT_PLACEMENTS, CH_LC_OPT_GPUS, CH_LC_OPT_BATCH_BYTES,
	CH_LC_OPT_BATCH_MS, CH_LC_OPT_PREFETCH, CH_LC_OPT_HOG, CH_LC_OPT_COPY,
	CH_LC_OPT_TOPOLOGY
};

#define CH_LC_LONGOPTS                                                        \
	{ "step-ms", required_argument, NULL, CH_LC_OPT_STEP_MS },            \
	{ "duration", required_argument, NULL, CH_LC_OPT_DURATION },          \
	{ "workers", required_argument, NULL, CH_LC_OPT_WORKERS },            \
	{ "placements", required_argument, NULL, CH_LC_OPT_PLACEMENTS },      \
	{ "gpus", required_argument, NULL, CH_LC_OPT_GPUS },                  \
	{ "batch-bytes", required_argument, NULL, CH_LC_OPT_BATCH_BYTES },    \
	{ "batch-ms", required_argument, NULL, CH_LC_OPT_BATCH_MS },          \
	{ "prefetch", required_argument, NULL, CH_LC_OPT_PREFETCH },          \
	{ "hog", required_argument, NULL, CH_LC_OPT_HOG },                    \
	{ "copy", required_argument, NULL, CH_LC_OPT_COPY },                  \
	{ "topology", required_argument, NULL, CH_LC_OPT_TOPOLOGY }

/** ch_lc_help - print the usage text (options, defaults, examples) to @f. */
void ch_lc_help(FILE *f);

/**
 * ch_lc_sweep - run mode: calibrate, run every configuration of the sweep
 * on this machine, judge, recommend; print the table and write the results
 * object of @r (docs/results-schema.md, "loader_contention"), checkpointing
 * after each configuration.
 * @o: [in] options.  @r: [in,out] the run's result document.
 * @reason: [out] why the status is not ok.  @rn: [in] size of @reason.
 * Returns 0 (overall verdict pass or warn), CH_ERR_CHECK (overall verdict
 * fail, a collapsed affinity mask, or a batch that failed validation),
 * CH_ERR_UNAVAILABLE (--copy cuda without a usable GPU), CH_ERR_RUNTIME.
 */
int ch_lc_sweep(const struct ch_lc_opts *o, struct ch_result *r, char *reason, size_t rn);

/**
 * ch_lc_plan_mode - plan mode (--topology FILE.xml): plan the shared,
 * isolated and NUMA placements for every GPU of the file's machine, print
 * the feeder and worker cores, NUMA nodes and binding lines, and record
 * them under "plan" in @r's results. Binds and runs nothing.
 * Returns 0, CH_ERR_USAGE (unreadable or malformed file, or no GPU in it),
 * CH_ERR_RUNTIME.
 */
int ch_lc_plan_mode(const struct ch_lc_opts *o, struct ch_result *r, char *reason, size_t rn);

#ifdef __cplusplus
}
#endif
#endif
