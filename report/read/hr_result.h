/*
 * hr_result.h - the result reader: one clusterhealth result document
 * (docs/results-schema.md) read into a typed record, every field that the
 * report (hr_load.c, into the fleet of hr_model.h), the canary and the
 * history use, so that no other part of report/ looks up a key of a result
 * document (a host's inventory aside: hr_inventory_load.h reads r->host).
 *
 * The record is a view: every string and every struct hr_rv is borrowed
 * from the document and valid while the document lives; the arrays of the
 * record are owned by it (hr_result_release()). Reading never fails on the
 * document's shape: a key that is absent or of another type is read as such
 * (NULL string, NAN number, is_array 0), and each caller judges the record
 * by its own rules, naming the offending value with hr_rv_text().
 */
#ifndef HR_RESULT_H
#define HR_RESULT_H

#include <jansson.h>
#include <stddef.h>

#include "report/read/hr_input.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One value of the document as read. */
struct hr_rv {
	const json_t *json;   /* the value, NULL when the key is absent */
	const char *str;      /* the string, NULL when not a string */
	double num;           /* the number, NAN when not a number */
	int is_int;           /* 1: an integer (i holds it; num too, converted) */
	json_int_t i;         /* the integer, 0 when not an integer */
	int is_null;          /* 1: JSON null */
	int is_true;          /* 1: JSON true */
};

/* An array of the document: is_array 0 when the value is something else
 * (json says what, for a message), n its length. */
struct hr_rlist {
	const json_t *json;
	int is_array;
	size_t n;
};

/* A string, or the string elements of an array (others left out). */
struct hr_rstrs {
	int is_string;               /* the value was one string (v[0]) */
	const char **v;
	size_t n;
};

/* One NVML sample of roofline's telemetry (ch_nvml_sample_json). */
struct hr_result_sample {
	int throttled;               /* "throttled" is true */
	struct hr_rstrs reasons;     /* "clock_event_reasons" */
};

/* A "telemetry" object: a sample itself, and its "before" and "after". */
struct hr_result_telemetry {
	int present;                 /* "telemetry" is an object */
	struct hr_result_sample self, before, after;
};

/* A statistics object {n, min, median, mean, p95, max, cv} (ch_stats_compute(),
 * docs/results-schema.md): present 0 when the key is not an object. */
struct hr_result_stats {
	int present;
	struct hr_rv n, min, median, mean, p95, max, cv;
};

/* "confirm" of an allreduce_bw cell: the cell measured a second time at the
 * end of its sweep because it looked like a dip or an out-of-place/in-place
 * gap (present 0: not measured again, or an older file). */
struct hr_result_cell_confirm {
	int present;                 /* "confirm" is an object */
	struct hr_rv why;            /* "dip", "gap" */
	struct hr_rv loop_time_us;   /* us */
	struct hr_result_stats time_us; /* per-call period, us */
	struct hr_rv algbw, busbw;   /* "algbw_gbps", "busbw_gbps", GB/s */
	struct hr_rv wrong;          /* elements */
};

/* "out_of_place" or "in_place" of a row (allreduce_bw). */
struct hr_result_cell {
	int present;                 /* an object */
	struct hr_rv loop_time_us;   /* us: the timed loop / iterations */
	struct hr_result_stats time_us; /* per-call period, us */
	struct hr_rv algbw, busbw;   /* GB/s (from the loop time) */
	struct hr_rv wrong;
	struct hr_result_cell_confirm confirm;
};

/* results.sweeps[].rows[] (allreduce_bw). */
struct hr_result_row {
	struct hr_rv bytes;         /* "bytes" */
	struct hr_rv oop_time_us;   /* "out_of_place"."time_us"."median", us */
	struct hr_rv oop_busbw;     /* "out_of_place"."busbw_gbps", GB/s */
	struct hr_rv oop_wrong;     /* "out_of_place"."wrong", elements */
	struct hr_rv ip_busbw;      /* "in_place"."busbw_gbps", GB/s */
	struct hr_rv ip_wrong;      /* "in_place"."wrong", elements */
	struct hr_result_cell oop, ip; /* the two cells whole, with their spread
					  and re-measurement */
};

/* results.sweeps[] (allreduce_bw). */
struct hr_result_sweep {
	struct hr_rv group_kind;    /* "node", "pair", "world", "scaling" */
	struct hr_rv group_name;    /* "node0", "pair0-1", "world" */
	struct hr_rv algo;
	struct hr_rv nranks;
	struct hr_rv large_busbw;   /* "large_msg_busbw_gbps", GB/s */
	struct hr_rv avg_busbw;     /* "avg_busbw_gbps", GB/s */
	struct hr_rlist nodes_list; /* "nodes": the hosts of the group */
	struct hr_rv *nodes;        /* its nodes_list.n entries (str NULL: not a string) */
	struct hr_rlist ranks_list; /* "ranks": the ranks of the group */
	struct hr_rv *ranks;        /* its ranks_list.n entries */
	struct hr_rlist rows_list;  /* "rows" */
	struct hr_result_row *rows; /* its rows_list.n entries */
};

/* A file system as checkpoint_io names it (ranks.layout[].dir_mount). */
struct hr_result_mount {
	struct hr_rv fstype, source, point;
	int network_fs;              /* "network_fs" is true */
};

/* ranks.layout[] (allreduce_bw, checkpoint_io). */
struct hr_result_rank {
	struct hr_rv rank, host, node_name, gpu_index, gpu_name;
	struct hr_result_mount dir_mount; /* checkpoint_io: where the rank writes */
};

/* results.kernel_log.faults[] (kernel_log: one device and code of the
 * kernel log, docs/xid.md). */
struct hr_result_kfault {
	struct hr_rv device, bus_id;  /* "gpu1" / "mlx5_0" / "pci 0000:43:00.0", its bus id */
	struct hr_rv kind;            /* "xid", "sxid", "aer", "link_down", "link_up" */
	struct hr_rv code;            /* the Xid / SXid; AER: 0 corrected .. 2 fatal */
	struct hr_rv action;          /* "none", "inform", "reset", "drain", "reboot" */
	struct hr_rv lines, link_ups; /* lines counted (link: downs), ups */
	struct hr_rv first_utc, last_utc, last_line;
	struct hr_rv gpu_index, uuid; /* null when not a GPU of the inventory */
	struct hr_rv mnemonic, meaning, nvidia_action, hardware, table; /* Xids in the table */
};

/* results.sync.per_rank[] (checkpoint_io). */
struct hr_result_ckpt_rank {
	struct hr_rv rank;
	struct hr_rv write_gbps;     /* GB/s */
	struct hr_rv block_sec;      /* s */
	struct hr_rv bytes;
};

/* results.sync, or results.scaling.points[] (checkpoint_io). */
struct hr_result_ckpt_point {
	struct hr_rv writers;
	struct hr_rv bytes;
	struct hr_rv block_sec;      /* s */
	struct hr_rv agg_write_gbps; /* GB/s */
};

/* results.stragglers[] (allreduce_bw). */
struct hr_result_straggler {
	struct hr_rv node, host, rank;
	struct hr_rv slowest_fraction, excess_pct;
};

/* results.configs[] (loader_contention). */
struct hr_result_config {
	struct hr_rv placement;      /* "as-is", "shared", ... */
	struct hr_rv name;
	struct hr_rv workers, hog_util;
	int has_lateness;            /* "lateness_us" is an object */
	struct hr_rv lateness_p50_us, lateness_p99_us, lateness_max_us;
	struct hr_rv input_wait_frac; /* share of the step waiting on input, 0..1 */
	struct hr_rv accel_util;     /* accelerator utilisation, 0..1 */
	struct hr_rv repeats;        /* the repeats the two spreads below are over */
	struct hr_rv input_wait_frac_sd, accel_util_sd; /* their standard deviations over the repeats */
	struct hr_rv verdict;        /* "pass", "warn", "fail" */
	struct hr_rstrs reasons;
	struct hr_rv psi_avg10;      /* "psi_cpu_some_avg10": host CPU pressure, % */
	struct hr_rv host_cpu_util;  /* "host_cpu_util": busy share of all CPUs, 0..1 */
};

/* results.thresholds (loader_contention): its verdict's bounds. */
struct hr_result_loader_thresholds {
	int present;                 /* an object */
	struct hr_rv wait_warn, wait_fail; /* "input_wait_warn_frac", "input_wait_fail_frac" */
	struct hr_rv util_pass, util_fail; /* "accel_util_pass_frac", "accel_util_fail_frac" */
};

/* results.recommendation (loader_contention). */
struct hr_result_recommendation {
	int present;                 /* an object */
	struct hr_rv placement, workers, config, verdict, numactl, hwloc_bind, slurm;
};

/* results.devices[].roofs.compute_gflops, one entry in document order. */
struct hr_result_roof {
	const char *dtype;           /* the key, e.g. "bf16" (not checked) */
	struct hr_rv gflops;         /* GFLOP/s */
	struct hr_rv kernel;         /* "roofs"."compute_kernel".DTYPE: the kernel that set it */
};

/* results.flagged[] (roofline): a GPU below its node's median. */
struct hr_result_flag {
	struct hr_rv device, metric; /* "gpu3", "compute_gflops.bf16" / "memory_gbps" */
	struct hr_rv value, node_median, pct_below;
	struct hr_rv confirmed;      /* true / false: the re-measurement agreed or
					not; null or absent: not measured again */
	struct hr_rv confirm_value;  /* the roof measured again (GB/s or GFLOP/s),
					absent in older files */
};

/* The host's load at one moment ("conditions"."before" / "after"). */
struct hr_result_load {
	const json_t *json;          /* the value, NULL when absent */
	int present;                 /* an object */
	struct hr_rv utc;
	struct hr_rv loadavg_1m;
	struct hr_rv cpu_pressure_pct; /* "cpu_pressure_some_avg10_pct", % */
	struct hr_rv cpu_busy_pct;   /* "cpu_busy_pct": CPUs busy with other work, % */
};

/* The envelope's "conditions": what the binary knew of its measurement
 * conditions (docs/results-schema.md); present 0 in older files. */
struct hr_result_conditions {
	const json_t *json;          /* the value, NULL when absent */
	int present;                 /* an object */
	struct hr_result_load before, after;
	struct hr_rv after_value;    /* "after" as found (null while running) */
	struct hr_rv online_cpus, procs_on_host, threads_per_proc;
	struct hr_rv per_core;       /* procs x threads / online CPUs; > 1 oversubscribed */
};

/* "confirm" of a roofline point: measured again because it fell more than
 * the per-node threshold below its node's median (present 0: not measured
 * again, or an older file). */
struct hr_result_point_confirm {
	int present;
	struct hr_rv why;            /* "below_node_median" */
	struct hr_result_stats time_sec; /* s */
	struct hr_rv gbps, gflops;
};

/* results.devices[].points[] (roofline). */
struct hr_result_point {
	struct hr_rv valid;
	struct hr_result_stats time_sec; /* the timed calls, s */
	struct hr_result_point_confirm confirm;
	struct hr_rv ai;             /* "ai_flop_per_byte" */
	struct hr_rv gflops, gbps;
	struct hr_rv kernel, family, dtype;
	int throttled;
	struct hr_result_telemetry telemetry;
};

/* results.devices[].power_sweep.curve[] (roofline --power-limits). */
struct hr_result_power_pt {
	struct hr_rv cap_w;          /* W */
	struct hr_rv gflops;         /* the compute-bound point, GFLOP/s */
	struct hr_rv gflop_per_j;    /* GFLOP/J */
	struct hr_rv avg_power_w;    /* W */
	struct hr_rv gbps;           /* the memory-bound point, GB/s */
};

/* results.devices[].power_sweep (roofline --power-limits). */
struct hr_result_power {
	int present;                 /* "power_sweep" is an object */
	struct hr_rv gpu_uuid, default_limit_w, original_limit_w, tolerance_pct;
	struct hr_rlist curve_list;  /* "curve" */
	struct hr_result_power_pt *curve;
	int has_rec;                 /* "recommendation" is an object */
	struct hr_rv rec_judged, rec_cap_w, rec_loss_pct, rec_saved_pct, rec_why;
};

/* results.devices[] (roofline). */
struct hr_result_device {
	struct hr_rv device;         /* "gpu0", "cpu" */
	struct hr_rv status;         /* "ok", "failed", "unavailable" */
	struct hr_rv host;           /* set under mpirun (devices of several hosts) */
	struct hr_rv kind, name, pci_bus_id, reason, sku;
	int throttled;
	int has_roofs;               /* "roofs" is an object */
	struct hr_rv memory_gbps;    /* "roofs"."memory_gbps", GB/s */
	struct hr_rv memory_kernel;  /* "roofs"."memory_kernel": "triad fp64" (kernel dtype) */
	int has_compute;             /* "roofs"."compute_gflops" is an object */
	struct hr_result_roof *compute; /* its entries */
	size_t ncompute;
	struct hr_rv clocks;         /* "clocks" */
	struct hr_rv clock_mhz;      /* "config"."clock_mhz", MHz */
	struct hr_rstrs throttle_reasons;
	struct hr_result_telemetry telemetry;
	struct hr_rlist points_list; /* "points" */
	struct hr_result_point *points;
	struct hr_result_power power; /* "power_sweep" */
	struct hr_rv host_link;      /* "host_link" (roofline's host link step), read by hr_load.c */
	const json_t *roofs_again;   /* "roofs_again" (borrowed from the document), NULL absent:
					read with hr_result_roof_again() */
};

struct hr_result {
	/* the envelope, read from any document */
	const char *schema;          /* "schema", NULL when not a string */
	struct hr_rv schema_version;
	const char *tool_name;       /* "tool", NULL when not a string */
	const char *tool;            /* NULL: not a result document of this
					version (hr_result_tool()); the rest is
					read only when set */
	const char *status;          /* "status", NULL when not a string */
	const char *reason;          /* "reason" */
	const char *hostname;        /* "host"."hostname", NULL when not a string */
	const char *start_utc, *end_utc; /* "start_utc", "end_utc" */
	const json_t *doc;           /* the document */
	/* hr_result_check_control()'s answer, when it ran (on a reading
	 * thread): hr_result_accept() then takes it instead of looking again */
	int control_checked;
	long control;
	char control_where[128];
	const json_t *host;          /* "host" when an object (for hr_inventory_load.h), else NULL */
	struct hr_rv host_packages;  /* "host"."packages": CPU packages */
	const char *host_cpu_model;  /* "host"."cpu_model" */
	size_t host_ngpus;           /* entries of "host"."gpus", 0 when not an array */
	const json_t *results;       /* "results" when an object, else NULL */
	int has_energy;              /* "energy" is an object */
	struct hr_rv energy_cpu_j, energy_gpu_j, energy_wall_sec, energy_source;
	struct hr_result_conditions conditions; /* "conditions" */
	int has_software;            /* "software" is an object */
	const char *sw_cuda_driver, *sw_nvml_driver, *sw_cuda_runtime, *sw_nccl, *sw_mpi;
	/* allreduce_bw */
	struct hr_rv backend;        /* "results"."backend" */
	struct hr_rv wrong_total;    /* "results"."wrong_total" */
	struct hr_rlist sweeps_list; /* "results"."sweeps" */
	struct hr_result_sweep *sweeps;
	struct hr_rlist layout_list; /* "ranks"."layout" */
	struct hr_result_rank *layout;
	int ranks_per_host_max;      /* most layout entries naming one "host"
					(GPUs per node), 0 when none */
	struct hr_rlist stragglers_list; /* "results"."stragglers" */
	struct hr_result_straggler *stragglers;
	/* loader_contention */
	struct hr_rv mode;           /* "results"."mode" ("plan": nothing measured) */
	struct hr_rv verdict;        /* "results"."verdict" */
	struct hr_rv step_ms;        /* "results"."step_ms": the emulated step, ms */
	struct hr_result_loader_thresholds lthr; /* "results"."thresholds" */
	int mask_collapsed;          /* "results"."mask_collapsed" is true */
	struct hr_result_recommendation rec;
	struct hr_rlist configs_list; /* "results"."configs" */
	struct hr_result_config *configs;
	/* roofline */
	struct hr_rlist devices_list; /* "results"."devices" */
	struct hr_result_device *devices;
	struct hr_rlist flagged_list; /* "results"."flagged" */
	struct hr_result_flag *flagged;
	/* checkpoint_io (and the layout above) */
	int has_sync;                /* "results"."sync" is an object */
	struct hr_result_ckpt_point sync;
	struct hr_rlist per_rank_list; /* "results"."sync"."per_rank" */
	struct hr_result_ckpt_rank *per_rank;
	struct hr_rlist again_list;  /* "results"."sync"."again"[0]."per_rank": the second
	                              * write (checkpoint_io --repeat 2 or more) */
	struct hr_result_ckpt_rank *again;
	struct hr_rv *bad_ranks;     /* "rank" of every "results"."verify".*."bad"[] entry, in order */
	size_t nbad;
	struct hr_rv size_bytes, interval_sec; /* "results"."config": checkpoint bytes, s */
	int has_staged;              /* "results"."staged" is an object */
	struct hr_rv staged_block_sec, staged_copy_sec; /* s */
	struct hr_rlist scaling_list; /* "results"."scaling"."points" */
	struct hr_result_ckpt_point *scaling;
	/* kernel_log */
	struct hr_rv kl_source;      /* "results"."kernel_log"."source": the log read */
	struct hr_rv kl_bad_time;    /* "results"."kernel_log"."lines_bad_time": fault lines
	                              * skipped for a time no kernel wrote */
	struct hr_rv kl_not_listed;  /* "lines_not_listed": fault lines past the tool's
	                              * 65536 devices and codes, counted together */
	struct hr_rv kl_not_listed_action; /* "not_listed_action": their worst action */
	struct hr_rlist kfaults_list; /* "results"."kernel_log"."faults" */
	struct hr_result_kfault *kfaults;
};

/**
 * hr_result_tool - the "tool" of a clusterhealth result document.
 * @doc: [in] any JSON document (borrowed).
 * Returns the tool name (borrowed from @doc), or NULL when @doc is not a
 * "clusterhealth.result" document of schema_version 1.
 */
const char *hr_result_tool(const json_t *doc);

/**
 * hr_result_read - read a result document into a record.
 * @doc: [in] any JSON document, borrowed: it must outlive @r.
 * @r:   [out] the record: schema, schema_version and tool_name of any
 *       document; when it is a result document of this version (r->tool
 *       set), the rest of the envelope and the part of r->tool
 *       (allreduce_bw: sweeps, layout, stragglers; loader_contention:
 *       configs and recommendation; roofline: devices and their points;
 *       checkpoint_io: layout, sync, verify, config, staged, scaling;
 *       kernel_log: its source and faults;
 *       other tools: the envelope only). Release with hr_result_release(), also after an
 *       error.
 * Returns 0, or CH_ERR_RUNTIME when out of memory.
 */
int hr_result_read(const json_t *doc, struct hr_result *r);

/** hr_result_release - free the arrays of @r and zero it. */
void hr_result_release(struct hr_result *r);

/**
 * hr_rv_text - the value as compact JSON, for a message naming it.
 * @v: [in] a value of a record.
 * Returns a malloc'ed string (caller frees): "nothing" when the key is
 * absent; NULL when out of memory.
 */
char *hr_rv_text(const struct hr_rv *v);

/**
 * hr_rv_int - a value as an integer: an integer as is, a real number
 * truncated (@dflt when beyond +-9.2e18, the range of long long), anything
 * else @dflt.
 */
long long hr_rv_int(const struct hr_rv *v, long long dflt);

/**
 * hr_result_control_char - whether a string of @doc (a value or a key)
 * holds a character that printed would drive the terminal or reorder the
 * text around it: a control character (U+0001..U+001F but tab and newline,
 * U+007F, U+0080..U+009F) or a bidirectional mark, embedding, override or
 * isolate (hr_char_shown_escaped() in report/hr_util.h). Such a file is
 * skipped by every reader of results (hr_result_accept()).
 * @doc:   [in] any JSON document.
 * @where: [out] @n bytes: the path of the first such string ("host.hostname",
 *         "results.sweeps[3].algo"; a key's object when the key holds it),
 *         truncated to @n.
 * Returns the first such code point (> 0), or 0 when there is none.
 */
long hr_result_control_char(const json_t *doc, char *where, size_t n);

/**
 * hr_result_text_plain - whether no string of the JSON document whose text
 * is @text can hold a character hr_result_control_char() looks for: the
 * text has no byte 0x7F or above and no escape \b, \f, \r or \uXXXX
 * (any other byte below 0x20, tab and newline aside, cannot be in a string
 * of a valid document). A quick look at the text before it is parsed; 0
 * says only that the document must be looked at (hr_result_check_control()).
 * @text: [in] @len bytes, any content.
 * Returns 1 (plain) or 0.
 */
int hr_result_text_plain(const char *text, size_t len);

/**
 * hr_result_check_control - hr_result_control_char() of @r's document,
 * kept in @r (control_checked, control, control_where) for
 * hr_result_accept(): the look over every string, done where the document
 * was read (health_report's reading threads).
 */
void hr_result_check_control(struct hr_result *r);

/* What a reader does with a document (hr_result_accept()). */
enum hr_result_use {
	HR_RESULT_USE = 0,     /* a result file of this version: read it */
	HR_RESULT_IGNORED = 1, /* not an input (health_report's own output, or a
				  foreign JSON document found in a directory) */
	HR_RESULT_SKIPPED = 2  /* an input that cannot be used: listed as skipped */
};

/**
 * hr_result_accept - the one gate of every reader of result files
 * (health_report, its canary and its history): is @r, read from @path,
 * a result file that can be used?
 * @named: [in] 1 when @path was named on the command line, 0 when it was
 *         found in a directory.
 * @is:    [in,out] why not: a result file of another schema_version, an
 *         unknown tool, a string with a control character
 *         (hr_result_control_char()), no host.hostname or no results object
 *         is listed as skipped; a JSON document of another schema is skipped
 *         when named, a note ("ignored") when found in a directory; a
 *         health_report profile is ignored without a word.
 * Returns enum hr_result_use.
 */
int hr_result_accept(const struct hr_result *r, const char *path, int named, struct hr_issues *is);

/**
 * hr_result_roof_again - roofline's second measurement of a device's roof,
 * devices[].roofs_again: the roof's setting point measured again at the end
 * of the run (every run for a CPU socket, a flagged GPU roof's points).
 * @d:      [in] a device of a roofline record.
 * @metric: [in] "memory_gbps" (GB/s) or "compute_gflops.DTYPE" (GFLOP/s).
 * Returns the value as read (not checked: the caller uses a positive finite
 * number only); its json is NULL when the device has none for @metric.
 */
struct hr_rv hr_result_roof_again(const struct hr_result_device *d, const char *metric);

/**
 * hr_result_roof_point - the point of a roofline device that set a roof:
 * the valid point named by the roof's kernel ("KERNEL DTYPE" of
 * roofs.memory_kernel, or compute_kernel.DTYPE's kernel of that dtype),
 * else the valid point with the highest figure (gbps of the "stream"
 * family for the memory roof, gflops of the dtype for a compute roof).
 * @d:       [in] a device of a roofline record.
 * @compute: [in] -1 for the memory roof, else the index into d->compute.
 * Returns the point (borrowed from @d), NULL when none.
 */
const struct hr_result_point *hr_result_roof_point(const struct hr_result_device *d, int compute);

/**
 * hr_result_pick_config - the configuration of a loader_contention record
 * that the job runs with: the first with placement "as-is", else the first
 * "shared".
 * @r: [in] a record of a loader_contention result.
 * Returns its index into r->configs, or -1 when there is none of the two.
 */
int hr_result_pick_config(const struct hr_result *r);

#ifdef __cplusplus
}
#endif
#endif
