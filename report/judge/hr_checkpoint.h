/*
 * hr_checkpoint.h - checkpoint_io results in health_report: per node and
 * per mount, the synchronous checkpoint's blocking time and write bandwidth
 * against the node's peers on the same mount (the fleet), and in the
 * canary, the checkpoint block and interval taken from a result (measured)
 * with the stall predicted at the target GPU count.
 *
 * Rule (docs/health_report.md, "Checkpoint writes"): a node whose median
 * per-rank write bandwidth to a mount is HR_CKPT_MIN_RATIO times or more
 * below the median of its peers' (other nodes writing to the same mount:
 * same file system type, source and mount point) is graded by the stall
 * its slowness adds at the checkpoint interval (hr_ckpt_grade()): it
 * points at the node's NIC, its link to the storage or its mount options.
 * A checkpoint file that did not read back is FAIL for the node of its
 * rank.
 */
#ifndef HR_CHECKPOINT_H
#define HR_CHECKPOINT_H

#include <stdio.h>
#include <jansson.h>

#include "report/read/hr_model.h"
#include "report/read/hr_result.h"

#ifdef __cplusplus
extern "C" {
#endif

struct hr_canary_in; /* hr_canary.h (not included: its enum hr_level is not hr_analyze.h's) */

/* A node's synchronous checkpoint is graded by the stall it adds at the
 * job's checkpoint interval over what its peers' speed would give
 * (docs/health_report.md, "Checkpoint writes"): the added stall is
 * block x (1 - peers' speed / ... ) = block - block / ratio, over the
 * interval. Below HR_CKPT_MIN_RATIO times slower than its peers it is
 * ordinary spread of writes to a shared mount (not judged as slow); from
 * there WARN when the added stall is HR_CKPT_WARN_STALL of wall-clock or
 * more, FAIL from HR_CKPT_FAIL_STALL. The interval is the result's own
 * (checkpoint_io --interval), else HR_CKPT_INTERVAL_SEC, labelled assumed. */
#define HR_CKPT_MIN_RATIO 2.0
#define HR_CKPT_WARN_STALL 0.01
#define HR_CKPT_FAIL_STALL 0.05
#define HR_CKPT_INTERVAL_SEC 1800.0 /* 30 min: docs/checkpoint_io.md's example (assumed) */

/* One node's synchronous checkpoint writes to one mount, from one result. */
struct hr_ckpt {
	int node;              /* fleet node index */
	char *path;            /* the result file */
	char mount[400];       /* "FSTYPE SOURCE on POINT": the peer key */
	int network_fs;        /* the result's dir_mount.network_fs */
	int nranks;            /* the node's ranks in that result */
	double block_sec;      /* max over the node's ranks */
	double rank_gbps;      /* median over the node's ranks of bytes / block, GB/s */
	double node_gbps;      /* the node's bytes / block_sec, GB/s */
	int bad_files;         /* files of the node's ranks that did not read back */
	int read_back;         /* 1: the result's verify.sync says how many files read back */
	double interval_sec;   /* the result's --interval (config.interval_sec), NAN none */
};

/**
 * hr_ckpt_load - read a checkpoint_io result into @f (one struct hr_ckpt
 * per node it ran on). @path: [in] its file name (copied).
 * @r: [in] the result read by hr_result_read() (borrowed).
 * A result without a synchronous measurement or rank layout adds nothing
 * (its run is still listed); in a result of status "ok" that, a per-rank
 * record that is not a rank with a positive finite block_sec and finite
 * write_gbps and bytes >= 0 (skipped), and a missing or malformed
 * verify.sync (the read-back is then not judged) are input problems in
 * @f->issues. Returns 0, or CH_ERR_RUNTIME when out of memory.
 */
int hr_ckpt_load(struct hr_fleet *f, const char *path, const struct hr_result *r);

/** hr_ckpt_release - free what hr_ckpt_load() added to @f. */
void hr_ckpt_release(struct hr_fleet *f);

/* Called once per finding: node, level (hr_analyze.h's: 0 info, 1 warn, 2 fail),
 * code, subject, source, action (may be NULL) and text. */
typedef void (*hr_ckpt_reason_fn)(void *ctx, int node, int level, const char *code,
				  const char *subject, const char *source, const char *action,
				  const char *text);

/** hr_ckpt_reasons - apply the rule above to every node's entries. */
void hr_ckpt_reasons(const struct hr_fleet *f, hr_ckpt_reason_fn fn, void *ctx);

/**
 * hr_ckpt_grade - the level of entry @e against its peers' median per-rank
 * bandwidth @peers_gbps (the rule above).
 * @stall: [out] the added stall, fraction of wall-clock (NAN when not
 *         judged); @interval: [out] the interval used (s); @assumed: [out]
 *         1 when it is HR_CKPT_INTERVAL_SEC.
 * Returns 0 info, 1 warn, 2 fail.
 */
int hr_ckpt_grade(const struct hr_ckpt *e, double peers_gbps, double *stall, double *interval, int *assumed);

/**
 * hr_ckpt_node_json - the profile's "checkpoint" array of node @node: per
 * mount its figures and the comparison with its peers. New reference.
 */
json_t *hr_ckpt_node_json(const struct hr_fleet *f, int node);

/**
 * hr_ckpt_node_checks - count node @node's checkpoint checks: per mount the
 * read-back (judged when the result has a valid verify.sync) and the
 * comparison with its peers (judged only when another node wrote to that
 * mount and the run's host was not busy: hr_quality.h).
 * @judged, @not_judged: [in,out] incremented; @noisy: [in,out] incremented
 * for a speed not judged because the host was busy (may be NULL);
 * @speed_judged, @speed_not_judged: [in,out] incremented for each speed
 * comparison judged, not judged (of @judged, @not_judged: the performance
 * checks among them; the read-back is a correctness check; may be NULL); @why: [out] @n bytes, set to what made
 * the first such one noisy (may be NULL).
 */
void hr_ckpt_node_checks(const struct hr_fleet *f, int node, int *judged, int *not_judged, int *noisy,
			 int *speed_judged, int *speed_not_judged, char *why, size_t n);

/**
 * hr_ckpt_render_terminal - the "checkpoint writes" table of a profile (its
 * nodes' "checkpoint" arrays) to @out; prints nothing when there are none.
 */
void hr_ckpt_render_terminal(const json_t *profile, FILE *out);

/**
 * hr_ckpt_render_terminal_node - the rows of one profile node @n of that
 * table, its header first when *@had_header is 0 and the node has rows
 * (then set to 1).
 */
void hr_ckpt_render_terminal_node(const json_t *n, FILE *out, int *had_header);

/**
 * hr_ckpt_host_rates - for the nightly history: per host of a checkpoint_io
 * result @r (read by hr_result_read()), the median over its ranks of the
 * synchronous per-rank write
 * bandwidth (GB/s); @fn(@ctx, host, gbps) is called once per host.
 * Returns the number of hosts (0 for a result without a synchronous
 * measurement), or CH_ERR_RUNTIME when out of memory.
 */
int hr_ckpt_host_rates(const struct hr_result *r, void (*fn)(void *ctx, const char *host, double gbps), void *ctx);

/* ---- the canary */

#define HR_CKPT_MAX_POINTS 8

struct hr_ckpt_point {
	int writers;
	double bytes, block_sec, agg_gbps;
};

/* The checkpoint_io result the canary uses: the one with the most writers
 * (the allocation measured), the slowest of those. */
struct hr_ckpt_canary {
	int nfiles;             /* checkpoint_io results read */
	int have;               /* one is usable */
	char path[512];
	int writers;            /* its world size */
	double size_bytes;      /* the checkpoint it wrote */
	double block_sec;       /* synchronous block, max over ranks */
	double staged_block_sec, copy_sec; /* staged block and background copy; < 0 unknown */
	double interval_sec;    /* its --interval, <= 0 when not given */
	char mount[400];        /* rank 0's dir_mount, "FSTYPE SOURCE on POINT" */
	int network_fs;
	struct hr_ckpt_point pts[HR_CKPT_MAX_POINTS]; /* aggregate scaling, ascending writers */
	int npts;
};

/**
 * hr_ckpt_canary_read - take a checkpoint_io result (@r, read by
 * hr_result_read() from file @path).
 * @is: [in,out] a malformed result is listed here (skipped, naming the key).
 * Returns 0 (also for a result that is not usable: status unavailable or
 * usage, or without a synchronous block), or CH_ERR_USAGE for a malformed
 * one (listed in @is; the caller skips the file).
 */
int hr_ckpt_canary_read(struct hr_ckpt_canary *k, const char *path, const struct hr_result *r,
			struct hr_issues *is);

/**
 * hr_ckpt_canary_apply - the canary's checkpoint inputs from @k unless
 * given: ckpt_block_sec (measured) and ckpt_interval_sec (given: the
 * --interval recorded in the result). Without an interval in either, the
 * block is not set (hr_ckpt_canary_print() says so).
 */
void hr_ckpt_canary_apply(const struct hr_ckpt_canary *k, struct hr_canary_in *in);

/* The checkpoint at the target GPU count: the same checkpoint (weak
 * scaling: the model does not grow) written by one writer per GPU. */
struct hr_ckpt_target {
	int ok;                 /* 0 when @k has no usable result or no interval */
	double writers;
	double agg_gbps;        /* min(writers x one writer's bandwidth, best aggregate measured) */
	double block_sec;       /* size / agg_gbps */
	double frac;            /* block_sec / interval */
	int saturated;          /* the last doubling of writers gained less than 10% */
};

/**
 * hr_ckpt_canary_predict - the model above. @target_writers: [in] GPUs at
 * the target; @interval_sec: [in] the interval used by the canary.
 * @t: [out]. Formula and assumption: docs/canary.md ("Checkpoint from
 * checkpoint_io").
 */
void hr_ckpt_canary_predict(const struct hr_ckpt_canary *k, double target_writers,
			    double interval_sec, struct hr_ckpt_target *t);

/** hr_ckpt_canary_print - the checkpoint_io lines of the canary report. */
void hr_ckpt_canary_print(FILE *f, const struct hr_ckpt_canary *k, const struct hr_canary_in *in);

/** hr_ckpt_canary_json - the canary JSON's "checkpoint_io" object, or JSON null. */
json_t *hr_ckpt_canary_json(const struct hr_ckpt_canary *k, const struct hr_canary_in *in);

#ifdef __cplusplus
}
#endif
#endif
