/*
 * hr_ckpt_canary.h - checkpoint_io results in the pre-scaling canary: the
 * checkpoint block and interval taken from a result (measured) and the
 * stall predicted at the target GPU count.
 */
#ifndef HR_CKPT_CANARY_H
#define HR_CKPT_CANARY_H

#include <stdio.h>
#include <jansson.h>

#include "report/read/hr_model.h"
#include "report/read/hr_result.h"

#ifdef __cplusplus
extern "C" {
#endif

struct hr_canary_in; /* hr_canary.h (not included: its enum hr_level is not hr_analyze.h's) */

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
