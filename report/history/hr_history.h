/*
 * hr_history.h - nightly history of headline metrics in SQLite, and the
 * regression check: `health_report history ...`.
 *
 * Every nightly run's headline metrics, per node and per GPU, are kept in
 * an SQLite database (one file, by default beside the results). Each
 * series (node, GPU, metric) is compared with its own trailing baseline,
 * the median of its previous nights (14 by default), and a drop of more
 * than a threshold (10% by default) is reported as
 * "regressed X% since DATE". Method and table layout: docs/workflows.md.
 *
 * Headline metrics, all higher-is-better:
 *   roofline.memory_gbps, roofline.compute_gflops.DTYPE   per device
 *   allreduce.intra.ALGO.busbw_gbps   large-message busbw of the node's own
 *                                     group (group_kind "node", or a world
 *                                     group on one node), GPU "-"
 *   allreduce.pair.ALGO.busbw_gbps    median over the inter-node pairs the
 *                                     node is in, GPU "-"
 *   allreduce.world.ALGO.busbw_gbps   a multi-node world group, node "fleet"
 *   loader.accel_util                 accelerator utilisation of the job's
 *                                     placement (as-is, else shared), GPU "-"
 */
#ifndef HR_HISTORY_H
#define HR_HISTORY_H

#include <stddef.h>
#include <jansson.h>

#include "report/judge/hr_trend.h"
#include "report/read/hr_input.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The node name under which fleet-wide (multi-node) metrics are kept. */
#define HR_HISTORY_FLEET "fleet"

struct hr_history;

/**
 * hr_history_open - open (creating it and its tables if needed) a history.
 * @path: [in] SQLite database file.
 * @lock_timeout_sec: [in] how long to wait, in seconds, while another
 *        process holds a lock on the database (SQLite busy timeout; 0: not
 *        at all). The database is switched to WAL journal mode, so readers
 *        and the writer do not wait for each other.
 * @out:  [out] the handle; close with hr_history_close().
 * Nothing is written before the file is known to be a clusterhealth
 * history (its meta table holds schema = "clusterhealth.history" and
 * schema_version 1) or an empty database (no table, application_id 0 or
 * ours, user_version 0: the tables are then created, application_id set to
 * "CHHY"). A path that exists must be a regular file (a device, named pipe
 * or directory is refused before SQLite opens it); a missing one is created
 * empty with O_EXCL | O_NOFOLLOW. Until the marker is checked, closing the
 * database does not checkpoint a write-ahead log found beside it.
 * Returns 0; CH_ERR_USAGE (message printed, the file unchanged) when the
 * file cannot be opened, is not a regular file, is not an SQLite database,
 * is another application's database or a history of another version; CH_ERR_RUNTIME
 * on an SQLite error, or when the database is still locked after
 * @lock_timeout_sec ("locked by another process").
 */
int hr_history_open(const char *path, int lock_timeout_sec, struct hr_history **out);

/** hr_history_close - close @h (NULL is accepted). */
void hr_history_close(struct hr_history *h);

/**
 * hr_history_record - store one value (replacing the same night's).
 * @night:  [in] the run's time, "YYYY-MM-DDTHH:MM:SSZ" (or a date
 *          "YYYY-MM-DD"); nights sort by this text.
 * @node, @gpu, @metric: [in] the series ("-" for node-level metrics).
 * @value:  [in] finite value in the metric's unit.
 * @source: [in] file it came from, or NULL.
 * Returns 0, CH_ERR_USAGE for a non-finite value, CH_ERR_RUNTIME on an
 * SQLite error (printed).
 */
int hr_history_record(struct hr_history *h, const char *night, const char *node,
		      const char *gpu, const char *metric, double value,
		      const char *source);

/**
 * hr_history_record_doc - store the headline metrics of one result file.
 * @doc:   [in] a clusterhealth result document (roofline, allreduce_bw,
 *         loader_contention; other tools and "unavailable" runs add
 *         nothing).
 * @path:  [in] its file name, for messages and the source column.
 * @nrec:  [out] incremented by the number of values stored; may be NULL.
 * A value whose measurement was noisy (hr_quality.h) is not stored: a noisy
 * night cannot establish, or break, a trend (hr_history_not_recorded()).
 * @issues: [in,out] where a schema break is recorded (HR_ISSUE_SKIPPED,
 *         naming the key); NULL: printed as an error instead.
 * Returns 0, CH_ERR_USAGE for a result that breaks the schema (values of
 * the file stored before the break are not undone: the caller wraps the
 * file in a savepoint), CH_ERR_RUNTIME on an SQLite error.
 */
int hr_history_record_doc(struct hr_history *h, const char *night, const char *path,
			  json_t *doc, size_t *nrec, struct hr_issues *issues);

/**
 * hr_history_not_recorded - what hr_history_record_doc() left out because
 * its measurement was noisy (hr_quality.h: a busy or oversubscribed host,
 * or a per-call CV above the bound), since the history was opened.
 * @files: [out] result files left out whole (their host was busy);
 * @values: [out] single values left out (their own CV); @why: [out] the
 * first reason ("host CPU pressure 84%"), "" when none; borrowed from @h.
 */
void hr_history_not_recorded(const struct hr_history *h, size_t *files, size_t *values, const char **why);

/* A series that regressed. */
struct hr_regression {
	int persisted;        /* 1: regressed on at least cfg->persist consecutive
				 nights (REGRESSED, a drain candidate); 0: on the
				 night checked only (WARN: "regressed once; re-run") */
	double spread_pct;    /* the baseline nights' robust spread, % of the baseline */
	double z;             /* the night's robust z against them */
	double cut;           /* the cut-off it passed */
	char node[128], gpu[64], metric[128];
	char night[32];       /* the night checked */
	char since[32];       /* first night of the regressed run of nights */
	double value;         /* the night's value */
	double baseline;      /* median of the nights before @since */
	double pct;           /* drop, % of the baseline */
	int nbaseline;        /* nights in the baseline */
	int cusum;            /* 1: found by the change detector (hr_detect.h):
				 REGRESSED; 0: by the median rule above */
	double cusum_s;       /* the detector: its statistic tonight, */
	double cusum_h;       /* ... the threshold it passed, */
	double noise_pct;     /* ... the class's learned night-to-night noise, % */
	size_t noise_n;       /* ... from this many pooled residuals, */
	double tail_w;        /* ... the noise model's tail weight (hr_detect.h) */
	int nights;           /* nights in the regressed run */
	int info;             /* 1: not WARN nor REGRESSED: "info: one night far,
				 not judged until it repeats" (a night measured
				 once, or a run the learned noise explains) */
	int far;              /* 1: WARN on the night checked by the learned
				 noise: both measurements far below the series'
				 own level (hr_far_run()) */
	int twice;            /* the night checked was measured twice */
	double pct_both;      /* ... the larger measurement's drop, % */
	double far_p;         /* the chance of the nights for a healthy series
				 (hr_far_run()); 0 when not computed */
	double far_budget;    /* ... the budget it is held to: alpha / series */
};

/**
 * hr_history_latest - the latest night recorded.
 * @buf: [out] the night, "" when the history is empty.  @n: [in] size of @buf (>= 32).
 * Returns 0, CH_ERR_RUNTIME on an SQLite error (printed).
 */
int hr_history_latest(struct hr_history *h, char *buf, size_t n);

/* How many series a check looked at, and how many it could not judge. */
struct hr_check_count {
	size_t series;     /* series with a value on the night checked */
	size_t not_judged; /* ... with fewer than min_nights earlier values */
};

/**
 * hr_history_check - check every series that has a value on @night: the
 * change detector (hr_detect.h: the noise of each class learned from all
 * series' last cfg->window nights, a CUSUM per series over its last
 * 3 x cfg->window nights, its threshold from cfg->cusum.alpha and the
 * node's series that night) and the median rule (hr_history_trend()): a
 * series the median rule finds REGRESSED is reported by it; else one the
 * detector finds is REGRESSED (cusum 1); else the median rule's "regressed
 * once" (WARN) if it says so.
 * @night: [in] the night to check; NULL for the latest in the database.
 * @out:   [out] malloc'ed array of regressions (caller frees), NULL when none.
 * @n:     [out] its length.
 * @count: [out] series checked and not judged; may be NULL.
 * Returns 0, CH_ERR_RUNTIME on an SQLite error or out of memory.
 */
int hr_history_check(struct hr_history *h, const char *night,
		     const struct hr_check_cfg *cfg, struct hr_regression **out,
		     size_t *n, struct hr_check_count *count);

/**
 * hr_history_main - entry point of the `history` subcommand.
 * @argc: [in] argument count; argv[0] is the subcommand name ("history").
 * @argv: [in] arguments: options (`health_report history --help`:
 *        --db FILE, --night TIME, --window N, --min-nights N,
 *        --threshold PCT, --lock-timeout SEC, --strict, --json FILE)
 *        followed by result files or
 *        directories to record; with none, only the check runs.
 * Options are parsed here with getopt_long (optind is reset); a bad value is
 * reported naming the option and the value.
 * Prints how many series were checked and how many were not judged (too
 * few earlier nights); a night none of whose series could be judged says
 * so (NOT JUDGED) and exits 0.
 * Returns the process exit code: 0 no regression, 1 at least one series
 * regressed (its nodes are listed as drain candidates), 2 usage or input
 * error, 4 run-time error (SQLite, I/O).
 */
int hr_history_main(int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
