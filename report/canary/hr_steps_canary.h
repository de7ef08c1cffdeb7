/*
 * hr_steps_canary.h - the canary on measured inputs: today's and the
 * baseline's step logs (hr_steps_run.h) in place of hand-typed figures.
 * What the logs give (GPUs when they hold more than one rank, wall-clock step, checkpoint block and interval,
 * input wait, tokens per step, the baseline's GPUs and step) enters the
 * canary labelled measured, unless given on the command line; what they
 * cannot give stays an option. Method: docs/canary.md ("Step logs").
 */
#ifndef HR_STEPS_CANARY_H
#define HR_STEPS_CANARY_H

#include <stdio.h>

#include "report/canary/hr_canary.h"
#include "report/read/hr_steps_model.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * hr_steps_canary_apply - the logs' figures into the canary's inputs where
 * not given.
 * @now:  [in] today's run (NULL: none). @base: [in] the baseline run (NULL).
 * @now_from, @base_from: [in] the option and paths each run was read from
 *        ("--steps logs/"), for the messages and the *_gpus_from texts.
 * @in:   [in,out] the canary's inputs; what is given (src set) is kept.
 * Sets: gpus_now (hr_steps_run_gpus(), with gpus_now_from), step_sec
 * (the wall-clock step: the window's training step / (1 - the stall
 * share)), ckpt_block_sec and ckpt_interval_sec (two or more stalls with
 * times; one: the block only, when the interval is given),
 * input_wait_frac (the worst rank's), tokens_per_step, baseline_step_sec
 * and baseline_gpus (each where not given: a given --baseline-gpus
 * combines with the measured step, and the reverse), and the straggler
 * (the worst one, with its cost).
 * Returns 0; CH_ERR_USAGE (message printed) when a baseline is given
 * without today's step (no @now, no given step_sec or
 * scaling_efficiency), or a run's GPU count is
 * needed, not given, and unknown: the message names the log, why, and the
 * option that gives it (--gpus-now, --baseline-gpus). A count is never
 * assumed.
 */
int hr_steps_canary_apply(const struct hr_steps_run *now, const char *now_from, const struct hr_steps_run *base,
			  const char *base_from, struct hr_canary_in *in);

/**
 * hr_steps_canary_print - the "step logs" block before the canary report:
 * what each run's logs measured (window, training and wall-clock step,
 * stalls, input wait and host CPU load, the time split, the straggler,
 * tokens and the log's own MFU).
 */
void hr_steps_canary_print(FILE *f, const struct hr_steps_run *now, const struct hr_steps_run *base);

/** hr_steps_canary_json - the same as an object (NULL runs give null). */
json_t *hr_steps_canary_json(const struct hr_steps_run *now, const struct hr_steps_run *base);

#ifdef __cplusplus
}
#endif
#endif
