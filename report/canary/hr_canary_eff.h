/*
 * hr_canary_eff.h - the efficiency question at today's scale: "from N0 to
 * N1 GPUs the scaling efficiency is E; can it reach E'?" (`health_report
 * canary --target-efficiency`). Answered with what would have to shrink per
 * step, and by how much, and, with an all-reduce model and the gradient's
 * size, what that asks of the all-reduce. Method: docs/canary.md ("The
 * efficiency question").
 */
#ifndef HR_CANARY_EFF_H
#define HR_CANARY_EFF_H

#include <stdio.h>

#include "report/canary/hr_canary.h"

#ifdef __cplusplus
extern "C" {
#endif

struct hr_canary_eff {
	struct hr_fig n0, n1;          /* GPUs at the baseline and today */
	struct hr_fig eff_now;         /* scaling efficiency today, vs the baseline */
	struct hr_fig eff_target;      /* asked */
	struct hr_fig step_now, step_needed; /* today's step and the step the target needs (s) */
	struct hr_fig shrink_frac;     /* 1 - eff_now / eff_target: of today's step */
	struct hr_fig shrink_sec;      /* in seconds, when today's step is known */
	struct hr_fig grad_bytes;      /* the gradient all-reduced per step */
	struct hr_fig comm0, comm1;    /* the model's all-reduce at n0 and n1 (s) */
	struct hr_fig hide_frac;       /* share of the all-reduce's growth to hide */
	struct hr_fig busbw_factor;    /* or busbw at n1 this much higher */
	int fsdp;                      /* comm0/comm1 are FSDP's reduce-scatter and two
					  all-gathers (hr_canary_comm_sec()), not an all-reduce */
	int reached;                   /* eff_now >= eff_target */
	int comm_can;                  /* the all-reduce's growth is at least the shrink */
	struct hr_fig step_max_for_comm; /* today's step unknown: the all-reduce's growth
					   can give the shrink only if the step is at
					   most this (s) */
	int answerable;                /* 0: too little given (measure[] says what) */
	char measure[1024];            /* what to measure and its command, "" none */
};

/**
 * hr_canary_eff_compute - answer the efficiency question.
 * @in: [in] needs target_efficiency and, for today's efficiency, either
 *      scaling_efficiency or baseline_gpus/baseline_step_sec with step_sec
 *      (given or measured), and gpus_now; params and an all-reduce model for
 *      the all-reduce part.
 * @o:  [out]. Returns 0, or CH_ERR_USAGE (message printed) when
 *      --target-efficiency is missing or the GPU counts are not known.
 * Weak scaling: efficiency = t0 / t1, so the target needs t1' = t0 / E' =
 * t1 x E / E': today's step shorter by 1 - E / E'.
 */
int hr_canary_eff_compute(const struct hr_canary_in *in, struct hr_canary_eff *o);

/** hr_canary_eff_print - the answer, every figure with its source. */
void hr_canary_eff_print(FILE *f, const struct hr_canary_eff *o);

/** hr_canary_eff_json - the answer as an object. */
json_t *hr_canary_eff_json(const struct hr_canary_eff *o);

#ifdef __cplusplus
}
#endif
#endif
