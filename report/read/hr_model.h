/*
 * hr_model.h - the fleet as health_report sees it: nodes, devices and
 * their roofs, all-reduce groups (from allreduce_bw and nccl-tests), loader
 * configurations and the runs that produced them, loaded from result files
 * (docs/results-schema.md) and nccl-tests logs.
 *
 * Every string is owned by the model (freed by hr_fleet_release()); every
 * measured value that is absent is NAN.
 */
#ifndef HR_MODEL_H
#define HR_MODEL_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "base/ch_datasheet.h"
#include "report/read/hr_input.h"
#include "report/read/hr_nccltests.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Configuration keys compared across nodes for drift, in this order. */
enum hr_cfg_key {
	HR_CFG_GPU_MODEL = 0, /* GPU name (model and variant), e.g. "NVIDIA H100 80GB HBM3" */
	HR_CFG_DRIVER,        /* cuda_driver (or nvml_driver) */
	HR_CFG_CUDA,          /* cuda_runtime */
	HR_CFG_NCCL,          /* nccl */
	HR_CFG_MPI,           /* mpi */
	HR_CFG_CLOCKS,        /* GPU application / max clocks as reported */
	HR_CFG_VBIOS,         /* VBIOS versions of the node's GPUs (host.inventory) */
	HR_CFG_NIC_FW,        /* firmware versions of its RDMA NICs (host.inventory) */
	HR_CFG_POWER_LIMIT,   /* most common enforced GPU power limit (host.inventory) */
	HR_CFG_NKEYS
};

/** hr_cfg_key_name - "gpu_model", "driver", "cuda", "nccl", "mpi", "clocks",
 * "vbios", "nic_fw", "power_limit". */
const char *hr_cfg_key_name(int k);

struct hr_node {
	char *name;                 /* hostname */
	char *cfg[HR_CFG_NKEYS];    /* NULL when no input said */
	char *cpu_model;
	int ngpus;                  /* GPUs listed in host.gpus (max seen) */
	json_t *inventory;          /* host.inventory (hr_inventory_load.h), NULL none */
	json_t *rdma_counters_end;  /* that file's conditions.rdma_counters_end, NULL none */
	char *inventory_source;     /* the result file it came from */
	time_t inventory_time;      /* that file's start time */
};

/* What a roofline point measured: its kernel, family and dtype, texts
 * kept once in the fleet (hr_fleet_text() ids, read with
 * hr_fleet_text_at()), cut to 31, 15 and 7 bytes; each distinct triple
 * kept once (hr_fleet_point_kind()). */
struct hr_point_kind {
	uint32_t kernel, family, dtype;
};

/* One roofline point, for the plots: a fleet holds about 15 a device (32
 * bytes each). */
struct hr_point {
	double ai, gflops, gbps;
	uint32_t kind;             /* its kernel, family and dtype: hr_fleet_kind_at() */
	unsigned char throttled;   /* 0 or 1 */
};

/* Whether a measurement was confirmed by the binary's re-measurement. */
enum hr_confirm {
	HR_CONFIRM_NONE = 0,   /* not measured again (older file, nccl-tests log, or
				  the binary saw no reason to) */
	HR_CONFIRM_AGREED,     /* measured again and the finding held */
	HR_CONFIRM_DISAGREED   /* measured again and it did not reproduce */
};

/* One cap of a device's power sweep; NAN: not measured. */
struct hr_power_pt {
	double cap_w;              /* W */
	double gflops;             /* the compute-bound point */
	double gflop_per_j;        /* its GFLOP/J (rate / average power) */
	double power_w;            /* its average power */
	double gbps;               /* the memory-bound point */
};

/* A GPU's host link (roofline's "host_link"): the medians of its pinned
 * copies alone (GB/s, measured; NAN: not measured) and the PCIe link NVML
 * reported (0: unknown) with the one-way bandwidth such a link is expected
 * to carry (given, hw/ch_pcie.h; NAN: unknown). */
struct hr_host_link {
	double h2d_gbps, d2h_gbps;
	int gen, width, gen_max, width_max;
	double expected_max_gbps;  /* of the link's maximum generation and width */
};

/* A device's power-cap sweep (roofline --power-limits). */
struct hr_power {
	double default_w;          /* the default limit: the reference, W */
	double tolerance_pct;      /* the sweep's tolerance, NAN: unknown */
	double rec_w;              /* the cap roofline recommended, NAN: none */
	char *rec_why;             /* why none, NULL */
	struct hr_power_pt *pts;   /* the caps, as the file lists them (highest first) */
	size_t npts;
};

/* A device measured by roofline. */
struct hr_device {
	int node;                   /* index into fleet.nodes */
	/* device, kind, name, sku, status, reason, clocks and source are kept
	 * once in the fleet (hr_fleet_str()) */
	const char *device;         /* "gpu0", "cpu" */
	const char *kind;           /* "gpu", "cpu" */
	const char *name;           /* device name */
	char *pci_bus_id;
	const char *sku;            /* datasheet SKU, NULL when none applies */
	const struct ch_datasheet *ds; /* NULL when none */
	const char *status;         /* "ok", "failed", "unavailable" */
	const char *reason;
	double memory_gbps;         /* measured memory roof */
	double compute_gflops[CH_NDTYPES]; /* measured compute roofs */
	/* the per-call spread of the point that set each roof: the coefficient
	 * of variation of its timed calls (time_sec.cv), NAN when not recorded */
	double memory_cv, compute_cv[CH_NDTYPES];
	/* roofline's own re-measurement of a GPU it flagged below its node's
	 * median (results.flagged[].confirmed), per metric (0 memory, 1 +
	 * dtype): enum hr_confirm */
	int flag_confirm[1 + CH_NDTYPES];
	/* ... and the value it measured again (results.flagged[].confirm_value,
	 * GB/s or GFLOP/s), NAN when not recorded (older files): the judge
	 * holds it to the same rules as the first (agreement) */
	double flag_confirm_value[1 + CH_NDTYPES];
	int throttled;
	char *throttle_reasons;     /* e.g. "sw_power_cap", NULL when unknown */
	const char *clocks;         /* e.g. "sm 1980 MHz, mem 2619 MHz", NULL unknown */
	struct hr_point *points;
	size_t npoints;
	struct hr_power *power;     /* its power-cap sweep, NULL none */
	struct hr_host_link *host_link; /* its host link, NULL none */
	const char *source;         /* result file */
};

/* Group kinds (allreduce_bw's group_kind; nccl-tests runs by host count). */
enum hr_group_kind { HR_G_NODE = 0, HR_G_PAIR, HR_G_WORLD, HR_G_SCALING, HR_G_UNKNOWN };
const char *hr_group_kind_name(int k);

/* One half (out-of-place or in-place) of a row, with its spread. */
struct hr_cell {
	double time_us;            /* the loop time per call (nccl-tests' time column), us; NAN unknown */
	double median_us;          /* median per-call period (allreduce_bw time_us.median), NAN unknown */
	double cv;                 /* per-call coefficient of variation (time_us.cv), NAN unknown */
	int confirm;               /* enum hr_confirm: HR_CONFIRM_AGREED here means only
				      "measured again" (the rules judge agreement) */
	double confirm_busbw;      /* the re-measurement's busbw (from its median period
				      where recorded), GB/s; NAN none */
	double confirm_loop_busbw; /* the re-measurement's busbw_gbps as written (of its
				      loop time, as the cell's own busbw_gbps), GB/s; NAN
				      none or not a positive number */
	double confirm_cv;
};

struct hr_row {
	double bytes;
	double busbw_oop_gbps, busbw_ip_gbps; /* NAN when absent */
	double wrong;                         /* wrong elements, both halves; 0 none */
	struct hr_cell oop, ip;
};

/* One busbw-vs-size sweep of one group and algorithm. */
struct hr_group {
	char *name;                /* "node0", "pair0-1", "world", or the log's file name */
	int kind;                  /* enum hr_group_kind */
	char *algo;                /* "ring", "tree", "default", ... */
	char *collective;          /* "all_reduce", ... */
	char *collective_from;     /* how it was identified (nccl-tests logs:
				      "the log's 'Collective test starting' line",
				      "busbw/algbw ratio ...", "the file name (last hint)"), NULL: the producer said */
	char *backend;             /* "nccl", "mpi", "nccl-tests" */
	int nranks;
	int *nodes;                /* indexes into fleet.nodes (hosts of the group) */
	int nnodes;
	char *gpu_name;            /* GPU name of the group's ranks (first), NULL none */
	struct hr_row *rows;
	size_t nrows;
	double large_busbw_gbps;   /* out-of-place busbw at the largest size */
	double large_bytes;
	double avg_busbw_gbps;     /* mean of every busbw cell */
	double reported_avg_gbps;  /* the log's own "Avg bus bandwidth", NAN none */
	double wrong_total;
	int complete;              /* the sweep finished (footer seen / status ok) */
	char *failure;             /* first failure message, NULL none */
	int busbw_is_algbw;        /* old nccl-tests all_gather: busbw printed = algbw */
	char *source;              /* file (":LINE" for a text log's run) */
};

struct hr_straggler {
	int node;
	int rank;
	double slowest_fraction;
	double excess_pct;
	char *source;
};

struct hr_loader_cfg {
	char *name, *placement;
	int workers;
	double hog_util;
	double lateness_p50_us, lateness_p99_us, lateness_max_us;
	double input_wait_frac, accel_util;
	double input_wait_frac_sd, accel_util_sd; /* their standard deviations over
				      the run's repeats (loader_contention's
				      "repeats" windows); NAN not recorded */
	int repeats;               /* the repeats (0: not recorded) */
	char *verdict;             /* "pass", "warn", "fail" */
	char *reasons;             /* the producer's reasons joined with "; " */
};

struct hr_loader {
	int node;
	double step_ms;            /* the emulated step, ms; NAN unknown */
	double wait_warn, wait_fail; /* its thresholds (fractions), from the result;
					NAN none (the judge applies the rule
					table's loader_input_bound defaults) */
	double util_pass, util_fail;
	double base_psi_pct;       /* the baseline configuration's host CPU pressure
				      (psi_cpu_some_avg10, %), NAN unknown */
	double base_host_util;     /* ... and its host CPU busy share, 0..1, NAN unknown */
	char *verdict;             /* the tool's overall verdict */
	int mask_collapsed;
	struct hr_loader_cfg *cfgs;
	size_t ncfgs;
	char *rec_placement;       /* recommendation (NULL: none) */
	int rec_workers;
	char *rec_config;          /* the recommended configuration's name */
	char *rec_verdict;         /* its verdict */
	char *rec_numactl, *rec_hwloc_bind, *rec_slurm;
	char *source;
};

/* The host's load at one moment (conditions.before / after); NAN unknown. */
struct hr_load_sample {
	double loadavg_1m;
	double cpu_pressure_pct;   /* PSI cpu some avg10, % */
	double cpu_busy_pct;       /* CPUs busy with other work than the run, % */
};

/* What a result file recorded of its measurement conditions. */
struct hr_conditions {
	int known;                 /* the file has a "conditions" object */
	struct hr_load_sample before, after;
	int online_cpus;           /* 0 unknown */
	double per_core;           /* processes x threads per online CPU, NAN unknown */
};

/* One input run (a result file or a nccl-tests run) and what it cost. */
struct hr_run {
	char *path;
	char *tool;                /* "roofline", ..., "nccl-tests" */
	char *status;              /* result status; nccl-tests: "ok" or "failed" */
	char *reason;
	int node;                  /* node of the host section, -1 none */
	int nnodes;                /* nodes it ran on (>= 1) */
	time_t start, end;         /* 0 unknown */
	double wall_sec;           /* end - start (or energy.wall_sec), NAN unknown */
	int energy_measured;       /* an "energy" object with numbers was present */
	double cpu_j, gpu_j;       /* measured energy, NAN when not */
	char *energy_source;       /* the energy object's "source" */
	int gpus_used;             /* for the estimate */
	double gpu_rated_w;        /* sum of rated power of those GPUs */
	int cpu_packages;          /* CPU packages of the nodes it ran on */
	struct hr_conditions cond; /* its measurement conditions (result files) */
};

struct hr_ckpt;
struct hr_index;       /* hr_index.h */
struct hr_dcgm_result; /* hr_dcgm.h */
struct hr_nvbw;        /* hr_nvbw.h */

/* One fault of a node's kernel log: a device and a code as
 * `health_report kernel-log` grouped them (kernel_log results, docs/xid.md;
 * read by report/read/hr_load_kernlog.c, judged by
 * report/judge/hr_rule_xid.c). Strings owned by the fleet. */
struct hr_kfault {
	int node;                  /* fleet node index */
	char *source;              /* the result file */
	char *log;                 /* the kernel log it read ("/dev/kmsg", a file) */
	char *kind;                /* "xid", "sxid", "aer", "link_down" */
	int code;                  /* the Xid / SXid; AER: 0 corrected, 1 non-fatal, 2 fatal */
	char *action;              /* the tool's: "inform", "reset", "drain", "reboot" */
	char *device;              /* "gpu1", "mlx5_0", "pci 0000:43:00.0" */
	char *bus_id;              /* NULL unknown */
	int gpu_index;             /* -1: not a GPU of the inventory */
	char *uuid;                /* NULL unknown */
	char *mnemonic, *meaning, *nvidia_action; /* Xids of the table, else NULL */
	int hardware;              /* 1 a hardware fault, 0 an application's or the driver's, -1 not said */
	long lines;                /* lines counted (a link: its downs) */
	long link_ups;             /* a link: its ups */
	char *first_utc, *last_utc; /* NULL: the line had no wall time */
	char *last_line;           /* the last line of the fault, NULL none */
};

struct hr_fleet {
	struct hr_node *nodes;       size_t nnodes;
	struct hr_device *devices;   size_t ndevices;
	struct hr_group *groups;     size_t ngroups;
	struct hr_straggler *stragglers; size_t nstragglers;
	struct hr_loader *loaders;   size_t nloaders;
	struct hr_ckpt *ckpts;       size_t nckpts; /* checkpoint_io (hr_checkpoint.h) */
	struct hr_run *runs;         size_t nruns;
	struct hr_kfault *kfaults;   size_t nkfaults; /* kernel_log (hr_load_kernlog.c) */
	struct hr_dcgm_result *dcgm; size_t ndcgm; /* dcgmi diag -j results (hr_dcgm.h) */
	struct hr_nvbw *nvbw;        size_t nnvbw; /* nvbandwidth -j runs (hr_nvbw.h) */
	struct hr_issues issues;     /* input problems */
	size_t files_read;           /* files that contributed data */
	size_t files_ignored;        /* our own outputs */
	json_t *node_index;          /* name -> index into nodes (hr_fleet_node()), NULL until used */
	json_t *texts;               /* hr_fleet_text()'s texts: text -> id, NULL until used */
	const char **text_v;         /* id -> text (the keys of texts) */
	size_t ntext, captext;
	json_t *strs;                /* hr_fleet_str()'s strings (the keys), NULL until used */
	struct hr_point_kind *kinds; /* hr_fleet_point_kind()'s triples, by id */
	size_t nkinds, capkinds;
	json_t *kind_index;          /* "kernel family dtype" ids (hex) -> kind id, NULL until used */
	uint32_t kind_memo[32][4];   /* the triple last kept for a point's place in
					its device's list (mod 32), and its id + 1 */
	struct hr_index *index;      /* the judge's lookups (hr_index.h), NULL until used */
};

/**
 * hr_fleet_node - index of the node named @name, added when new.
 * Returns the index, or -1 when out of memory.
 */
int hr_fleet_node(struct hr_fleet *f, const char *name);

/**
 * hr_fleet_text - @s cut to at most @max - 1 bytes (as snprintf() into
 * @max bytes cuts it), kept once in @f: the same text has the same id.
 * @max: [in] 1 to 256.
 * @id:  [out] its id, for hr_fleet_text_at().
 * Returns 0, or -1 when out of memory (or past 2^32 distinct texts). For
 * the texts of which a fleet holds many copies (a roofline point's
 * kernel, family and dtype).
 */
int hr_fleet_text(struct hr_fleet *f, const char *s, size_t max, uint32_t *id);

/** hr_fleet_text_at - the text of id @id (hr_fleet_text()), valid until
 * hr_fleet_release(). */
const char *hr_fleet_text_at(const struct hr_fleet *f, uint32_t id);

/**
 * hr_fleet_point_kind - the triple of text ids (@kernel, @family, @dtype:
 * hr_fleet_text()'s) kept once in @f: the same triple has the same id.
 * @hint: [in] the point's place in its device's list (a device's points
 *        come in the same order as the last device's: looked up first).
 * @id:   [out] its id, for hr_fleet_kind_at().
 * Returns 0, or -1 when out of memory (or past 2^32 distinct triples).
 */
int hr_fleet_point_kind(struct hr_fleet *f, uint32_t kernel, uint32_t family, uint32_t dtype, size_t hint,
			uint32_t *id);

/** hr_fleet_kind_at - the triple of id @id (hr_fleet_point_kind()), valid
 * until hr_fleet_release(). */
const struct hr_point_kind *hr_fleet_kind_at(const struct hr_fleet *f, uint32_t id);

/**
 * hr_fleet_str - @s kept once in @f (whole: not cut), for the strings of
 * which a fleet holds many copies (a device's kind, name, SKU, status,
 * clocks and result file). Owned by @f, valid until hr_fleet_release();
 * never freed on its own.
 * Returns the kept copy; NULL when @s is NULL or out of memory.
 */
const char *hr_fleet_str(struct hr_fleet *f, const char *s);

/**
 * hr_fleet_load_file - read one input file into the fleet.
 * @f:     [in,out] fleet.
 * @path:  [in] file name.
 * @named: [in] non-zero when the file was named on the command line, 0 when
 *         it was found in a directory.
 * Classifies the file by content: a JSON document with schema
 * "clusterhealth.result" (roofline, allreduce_bw, loader_contention), a
 * nccl-tests -J document, a dcgmi diag -j or nvbandwidth -j document
 * (hr_dcgm.h, hr_nvbw.h), or a nccl-tests text log. Ignored (counted in
 * files_ignored): a health_report profile ("clusterhealth.profile"), the
 * stdout of allreduce_bw (nccl-tests layout, its result file is the data),
 * and, when found in a directory, any other valid JSON or text that is not
 * an input (recorded as a note). Anything else, and every part that cannot
 * be used, is recorded in f->issues as skipped, with the file and, where
 * known, the line and column (jansson's json_error_t for JSON syntax
 * errors).
 * Returns 0 (also when the file was skipped), CH_ERR_RUNTIME when out of
 * memory (printed, naming the file: a file that could not be read or
 * parsed for want of memory is not skipped, it stops the load).
 */
int hr_fleet_load_file(struct hr_fleet *f, const char *path, int named);

/**
 * hr_fleet_load_files - hr_fleet_load_file() for each of @n files in order,
 * with the same result; a pool of reading threads (one per CPU the process
 * may run on, at most 8) reads each file, parses it and reads a result
 * document into its typed record (hr_result.h) up to 4 files per thread
 * ahead of the one being loaded, so that loading in order is all that is
 * left to this thread (one after another when no thread can be started).
 * Then places the DCGM and nvbandwidth results that name no host on their
 * nodes (hr_dcgm_place(), hr_dcgm.h).
 * @paths: [in] @n file names; @named: [in] @n flags as hr_fleet_load_file's.
 * Returns 0, or CH_ERR_RUNTIME when out of memory (printed; loading stops
 * there).
 */
int hr_fleet_load_files(struct hr_fleet *f, const char *const *paths, const unsigned char *named, size_t n);

/**
 * hr_fleet_load_json - as hr_fleet_load_file() for a document already
 * parsed (@doc borrowed). A result document is read through the result
 * reader (hr_result.h) and its record mapped into @f.
 */
int hr_fleet_load_json(struct hr_fleet *f, const char *path, const json_t *doc, int named);

/**
 * hr_fleet_load_nccltests - add the runs of a parsed nccl-tests log: one
 * group per run with rows; hosts from its device lines (kind: node for one
 * host, pair for two, world for more, unknown when no device lines).
 */
int hr_fleet_load_nccltests(struct hr_fleet *f, const struct hr_nt_log *log);

/**
 * hr_json_alloc_init - install jansson's allocator of the readers (call
 * before any JSON value is made: first thing in main()): a document that
 * hr_fleet_load_files() or hr_fleet_load_file() parses is then allocated
 * in an arena of its own and freed whole once loaded, its values never
 * kept. Without it every value is one malloc and one free, the same
 * results.
 */
void hr_json_alloc_init(void);

/** hr_fleet_drop_points - free every device's roofline points (npoints
 * 0), for a caller done with them; the rest of @f is kept. */
void hr_fleet_drop_points(struct hr_fleet *f);

/** hr_fleet_drop_device_points - free the roofline points of device @i
 * (< f->ndevices; npoints 0), for a caller done with them. */
void hr_fleet_drop_device_points(struct hr_fleet *f, size_t i);

/** hr_fleet_drop_devices - free every device record (f->devices, its
 * points, power sweeps and host links; ndevices 0), for a caller done with
 * them; the rest of @f is kept. */
void hr_fleet_drop_devices(struct hr_fleet *f);

/** hr_fleet_release - free everything and zero @f. */
void hr_fleet_release(struct hr_fleet *f);

/**
 * hr_gpu_nvlink_all - are this SKU's GPUs connected all-to-all by NVLink
 * in their usual server (SXM boards on NVSwitch: HGX/DGX A100, H100, H200,
 * B200)? Returns 1 for the SXM SKUs and B200, 0 for PCIe, NVL (bridged
 * pairs) and L40S, -1 when @ds is NULL (unknown).
 */
int hr_gpu_nvlink_all(const struct ch_datasheet *ds);

/* Assumed power of a GPU whose model is not in the rated-power table. */
#define HR_DEFAULT_GPU_W 300.0

/**
 * hr_gpu_rated_w - rated board power (maximum TDP) of a GPU model.
 * @ds:     [in] datasheet entry (NULL: unknown model).
 * @source: [out] where the figure comes from (static string); may be NULL.
 * Returns watts: the vendor datasheet's maximum thermal design power, or
 * HR_DEFAULT_GPU_W ("assumed") when the model is unknown.
 */
double hr_gpu_rated_w(const struct ch_datasheet *ds, const char **source);

#ifdef __cplusplus
}
#endif
#endif
