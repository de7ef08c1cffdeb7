/*
 * hr_rows.h - the report's tables as typed rows, built once from the
 * profile (docs/profile-schema.md): node verdicts and their reasons, fleet
 * findings, configuration drift, device metrics, all-reduce groups, loader
 * configurations, checkpoint writes and input problems. report.md (hr_render_markdown),
 * report.html (hr_render_html) and health.prom (hr_prom_node) format the same rows; what a table leaves
 * out (past its row limit, only the flagged rows) is the renderer's choice,
 * the flags and counts it needs are here.
 *
 * Strings point into the profile (borrowed: valid while it lives) and are
 * NULL where the profile has no such member; numbers are NAN where it has
 * none. Each renderer prints a NULL as it always has.
 */
#ifndef HR_ROWS_H
#define HR_ROWS_H

#include <jansson.h>
#include <stddef.h>

#include "report/hr_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An escaper: appends a string to a buffer escaped for the output
 * (hr_buf_html, hr_buf_md; NULL appends nothing). Returns 0, or non-zero
 * when out of memory. */
typedef int (*hr_esc_fn)(struct hr_buf *b, const char *s);

/* The configuration keys of a node, in the order report.html lists them. */
#define HR_ROWS_CONFIG_KEYS 10
extern const char *const hr_rows_config_keys[HR_ROWS_CONFIG_KEYS];

/* A reason behind a node verdict, or a fleet finding. */
struct hr_reason_row {
	const char *level;  /* "info", "warn", "fail" */
	const char *text;
	const char *action; /* suggested action, NULL when none */
	const char *code;   /* the reason's code (docs/health_report.md, "Rules"), NULL none */
	int flagged;        /* level given and not "info" */
};

struct hr_node_row {
	const char *verdict, *name;
	const char *config[HR_ROWS_CONFIG_KEYS]; /* by hr_rows_config_keys */
	int not_like_for_like;                   /* like_for_like is false */
	int drain_candidate;                     /* drain_candidate is true */
	const char *not_judged_reason;           /* a NOT JUDGED node's, else NULL */
	struct hr_reason_row *reasons;           /* owned by the rows */
	size_t nreasons;
};

/* A key on which nodes differ from the fleet's majority. */
struct hr_drift_value {
	const char *node, *value;
};
struct hr_drift_row {
	const char *key;
	const char *majority;          /* NULL: no majority */
	struct hr_drift_value *values; /* owned by the rows */
	size_t nvalues;
};

/*
 * A device metric (roofline), or, for a device without metrics, its status
 * (is_status: metric fields NAN/NULL, status and reason set).
 */
struct hr_device_row {
	const char *node, *device;
	const char *sku, *name;   /* the model: sku, else the device's name */
	int is_status;
	const char *status, *reason;
	const char *metric, *unit, *level;
	const char *level_text;   /* the level, or "not judged" / "not judged (earlier run)"
				   * for a metric no rule judged (profile: judged false) */
	double value, pct_of_datasheet, pct_of_expected, pct_of_fleet_median, z,
		pct_of_node_median;
	int flagged;              /* a metric whose level is given and not "info" */
};

/* A figure of a device of a node of bounded detail (its "values": metric
 * -> number, no metrics of its own). */
struct hr_value_row {
	const char *node, *device, *sku;
	const char *metric;       /* the key ("memory_gbps", "compute_gflops.bf16") */
	double value;             /* NAN when not a number */
};

/* A node's all-reduce group (the node's "busbw" entries). */
struct hr_busbw_row {
	const char *node, *group, *kind, *algo;
	long long nranks;         /* 0: not recorded */
	double large_msg_busbw_gbps;
};

/* An all-reduce group (one collective, algorithm and rank count of a file). */
struct hr_group_row {
	const char *name, *kind, *collective, *algo, *source, *failure;
	const char *level;        /* the comparison's level, NULL without one */
	const char *level_text;   /* hr_group_level_text() */
	const json_t *nodes;      /* array of node names (borrowed) */
	long long nranks;
	double large_msg_bytes, large_msg_busbw_gbps, pct_of_fleet_median,
		avg_busbw_gbps, reported_avg_busbw_gbps;
	int flagged;              /* level not "info", wrong results, or failed */
};

/* A loader_contention configuration of a node. */
struct hr_loader_row {
	const char *node, *config, *placement, *verdict;
	long long workers;        /* -1: not recorded */
	double lateness_p50_us, lateness_p99_us, input_wait_frac, accel_util;
	int flagged;              /* verdict given and not "pass" */
};

/* A node's synchronous checkpoint writes to one mount (checkpoint_io,
 * the profile's nodes[].checkpoint). */
struct hr_ckpt_row {
	const char *node, *mount, *level, *judged_against, *source;
	long long ranks, peers, bad_files;
	int read_back_judged;                /* the result had a valid verify.sync */
	double block_sec;                    /* blocking time of one checkpoint, s */
	double rank_write_gbps;              /* median over the node's ranks, GB/s */
	double node_write_gbps;              /* the node's ranks together, GB/s */
	double peers_median_rank_write_gbps; /* the other nodes on the mount, GB/s */
	double peers_over_node;              /* peers' median / this node's */
	int flagged;                         /* level given and not "info" */
};

/* An input problem or note. */
struct hr_issue_row {
	const char *path, *kind, *message;
	long long line, column;   /* 0: not known */
};

struct hr_rows {
	struct hr_node_row *nodes;       size_t nnodes;
	struct hr_reason_row *findings;  size_t nfindings;
	struct hr_drift_row *drift;      size_t ndrift;
	struct hr_device_row *devices;   size_t ndevices;
	size_t metrics, metrics_flagged; /* device rows that are metrics; flagged */
	struct hr_value_row *values;     size_t nvalues;
	struct hr_busbw_row *busbw;      size_t nbusbw;
	struct hr_group_row *groups;     size_t ngroups;
	size_t groups_flagged;
	struct hr_loader_row *loader;    size_t nloader;
	size_t loader_flagged;
	struct hr_ckpt_row *ckpt;        size_t nckpt;
	size_t ckpt_flagged;
	struct hr_issue_row *issues;     size_t nissues;
};

/**
 * hr_rows_build - the rows of every table of the report, in profile order
 * (nodes worst first, then each node's devices and their metrics).
 * @profile: [in] the profile; the rows borrow its strings.
 * @r:       [out] the rows; release with hr_rows_free() (also on error).
 * Returns 0, or CH_ERR_RUNTIME when out of memory.
 */
int hr_rows_build(const json_t *profile, struct hr_rows *r);

/**
 * hr_rows_group_flagged - whether a profile group is flagged: its
 * comparison's level is given and not "info", it found wrong results, or
 * its run failed. @g: [in] a profile group.
 */
int hr_rows_group_flagged(const json_t *g);

/**
 * hr_rows_detailed - whether a profile node carries its full detail: 0 for
 * a node of bounded detail ("detail": "bounded": a PASS node without
 * --detail all, whose devices list their values only), else 1.
 */
int hr_rows_detailed(const json_t *node);

/** hr_rows_free - releases what hr_rows_build() allocated; @r may be zeroed. */
void hr_rows_free(struct hr_rows *r);

/**
 * hr_rows_num - a number as hr_fmt_num() writes it followed by @suffix,
 * or "n/a" (no suffix) when @v is NAN.
 * @b: [in,out] text is appended.
 */
void hr_rows_num(struct hr_buf *b, double v, const char *suffix);

/**
 * hr_rows_nums - @n numbers, each as hr_rows_num() writes it with its
 * suffix, separated by @sep (nothing after the last).
 * @v: [in] @n numbers.  @suffix: [in] @n suffixes.
 */
void hr_rows_nums(struct hr_buf *b, const char *sep, size_t n, const double *v,
		  const char *const *suffix);

/**
 * hr_rows_drift_values - the differing nodes of a drift row: each node
 * escaped by @esc, @open, its value escaped, @close; separated by @sep.
 */
void hr_rows_drift_values(struct hr_buf *b, const struct hr_drift_row *r, const char *sep,
			  const char *open, const char *close, hr_esc_fn esc);

/**
 * hr_rows_names - a group's nodes: the first four names, escaped by @esc,
 * separated by ", ", then " +N" for the N others.
 * @names: [in] array of strings.
 */
void hr_rows_names(struct hr_buf *b, const json_t *names, hr_esc_fn esc);

/**
 * hr_rows_where - where an input problem is: its path escaped by @esc,
 * then ":line" and ":column" when known.
 */
void hr_rows_where(struct hr_buf *b, const struct hr_issue_row *r, hr_esc_fn esc);

/* The header of the checkpoint table: HR_ROWS_CKPT_COLS column names. */
#define HR_ROWS_CKPT_COLS 10
extern const char *const hr_rows_ckpt_cols[HR_ROWS_CKPT_COLS];

/**
 * hr_rows_ckpt_cells - the HR_ROWS_CKPT_COLS cells of a checkpoint row
 * (hr_rows_ckpt_cols), strings escaped by @esc, separated by @sep (nothing
 * before the first or after the last): node, mount, ranks, blocking time
 * (s), GB/s per rank, node GB/s, the peers' median GB/s per rank and their
 * count, this node against them ("0.25x the peers'", or "not judged (no
 * peers)"), the level (PASS, WARN, FAIL: files did not read back), what it
 * was judged against, and the result file.
 */
void hr_rows_ckpt_cells(struct hr_buf *b, const struct hr_ckpt_row *r, const char *sep, hr_esc_fn esc);

/**
 * hr_group_level_text - the level column of a group in report.md and
 * report.html: its comparison's level ("info", "warn", "fail"), "not
 * judged" when no rule could judge it ("not judged (earlier run)" for a
 * sweep a later one in the inputs superseded), "failed" when it has no comparison
 * because the run failed. @g: [in] a profile group. Returns a static string.
 */
const char *hr_group_level_text(const json_t *g);

/**
 * hr_rows_cost_line - the run's cost in one line ("run cost: ... wall; energy
 * ..., facility ... at PUE ...: COST CURRENCY, ... kg CO2e", or why it is not
 * known), from the profile's run_cost object @c, into @buf of @n bytes
 * (truncated to fit); the terminal summary and report.md show it.
 */
void hr_rows_cost_line(const json_t *c, char *buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif
