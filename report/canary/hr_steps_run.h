/*
 * hr_steps_run.h - from the step logs of one run (report/read/hr_steps.h)
 * to what they say about it (struct hr_steps_run, report/read/
 * hr_steps_model.h): the window, per-rank step times and phases, the
 * stragglers, the input wait, the checkpoint and other stalls, tokens/s;
 * then MFU recomputed and the scaling between two runs. Formulas and their
 * sources: docs/canary.md, "Step logs".
 *
 * The logs are streamed: what is kept is per rank (the window's steps, a
 * few recent step times) and per stall, never the log.
 */
#ifndef HR_STEPS_RUN_H
#define HR_STEPS_RUN_H

#include "report/read/hr_input.h"
#include "report/read/hr_steps_model.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HR_STEPS_WARMUP 10   /* steps skipped at the start of a log */
#define HR_STEPS_WINDOW 50   /* steps judged after them */
#define HR_STEPS_Z 3.5       /* straggler: robust z of its compute at or above
				(Iglewicz and Hoaglin 1993's outlier cut) */
#define HR_STEPS_MIN_EXCESS 0.05 /* ... and at least 5% over the median rank */

struct hr_steps_opts {
	long warmup;       /* steps skipped (default HR_STEPS_WARMUP) */
	long window;       /* steps in the window (default HR_STEPS_WINDOW) */
	double z;          /* straggler cut (HR_STEPS_Z) */
	double min_excess; /* straggler effect floor (HR_STEPS_MIN_EXCESS) */
};

/** hr_steps_opts_init - the defaults above. */
void hr_steps_opts_init(struct hr_steps_opts *o);

/**
 * hr_steps_run_load - read step logs and derive the run.
 * @paths: [in] @n files or directories (searched recursively for *.log,
 *         *.txt, *.out, *.jsonl and *.json; hidden files skipped). Every
 *         record is taken as one run (today's, or the baseline's).
 * @o:     [in] window and straggler options (NULL: defaults).
 * @run:   [out] the run; free with hr_steps_run_release(). Its events keep
 *         pointers to @paths' file names: keep @paths alive.
 * @issues:[in,out] input problems of every file (a skipped file is listed,
 *         never fatal).
 * Returns 0; CH_ERR_USAGE (message printed) when a path does not exist or
 * no file holds a step record; CH_ERR_RUNTIME when out of memory.
 */
int hr_steps_run_load(char *const *paths, int n, const struct hr_steps_opts *o,
		      struct hr_steps_run *run, struct hr_issues *issues);

/** hr_steps_run_release - free what hr_steps_run_load() allocated; zero @run. */
void hr_steps_run_release(struct hr_steps_run *run);

/**
 * hr_steps_run_gpus - the job's GPU count a run's logs measure: the ranks
 * seen, when more than one. A log printed by one rank (torchtitan's,
 * Megatron-LM's and MaxText's default) holds no count of the job's GPUs:
 * its one rank says nothing of the others.
 * @r: [in] a run.
 * Returns the count (>= 2), or 0 when the logs cannot tell.
 */
double hr_steps_run_gpus(const struct hr_steps_run *r);

/**
 * hr_steps_mfu - 6 x N x tokens/s / (GPUs x peak), and what the log's own
 * MFU implies.
 * @r: [in] a run. @params: [in] N (> 0). @gpus: [in] GPUs of the job (0:
 *     unknown; the MFU, per GPU, does not need it; out->tokens_per_sec is
 *     then NAN).
 * @peak_tflops: [in] dense peak per GPU (> 0).
 * @out: [out]. Returns 0, or -1 when the run has no tokens/s (out->mfu NAN).
 */
int hr_steps_mfu(const struct hr_steps_run *r, double params, double gpus, double peak_tflops,
		 struct hr_steps_mfu *out);

/**
 * hr_steps_job_tokens - the job's tokens per training step: the logs' sum
 * over ranks when they hold more than one rank, else the per-GPU tokens/s
 * x the training step x @gpus (every format's tokens are per GPU:
 * docs/canary.md, "Per GPU or per job").
 * @r: [in] the run. @gpus: [in] the job's GPUs (0 unknown).
 * Returns the tokens, NAN when the logs have none or @gpus is needed and 0.
 */
double hr_steps_job_tokens(const struct hr_steps_run *r, double gpus);

/**
 * hr_steps_scaling - throughput(n1) / (n1/n0 x throughput(n0)), the
 * throughput being tokens/s when both logs give tokens (the job's:
 * hr_steps_job_tokens() at @n0 and @n1), else GPUs / step (weak scaling
 * assumed).
 * @base, @now: [in] runs. @n0, @n1: [in] their GPU counts. @out: [out].
 * Returns 0, or -1 when a step time is unknown.
 */
int hr_steps_scaling(const struct hr_steps_run *base, const struct hr_steps_run *now, double n0,
		     double n1, struct hr_steps_scaling *out);

#ifdef __cplusplus
}
#endif
#endif
