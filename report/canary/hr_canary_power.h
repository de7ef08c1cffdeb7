/*
 * hr_canary_power.h - the canary at a power cap (`health_report canary
 * --power-cap W`): the step time and energy per step at the target with
 * every GPU capped at W, from roofline's power-cap sweeps among the inputs
 * (roofline --power-limits), and kWh, cost and CO2e per run beside them.
 *
 * The cap slows only the compute-bound share of the step (communication,
 * input wait and checkpoint stalls do not depend on the SM clock): that
 * share is given (--compute-share, e.g. from a training log's time split)
 * or modelled as what the canary's step at the target leaves after the
 * exposed all-reduce, the input wait and the checkpoint stall (fitted and
 * assumed: labelled so). Formulas: docs/canary.md ("At a power cap").
 */
#ifndef HR_CANARY_POWER_H
#define HR_CANARY_POWER_H

#include <jansson.h>
#include <stdio.h>

#include "report/canary/hr_canary.h"
#include "report/read/hr_input.h"
#include "report/read/hr_result.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HR_POWER_CANARY_MAX_GPUS 1024
#define HR_POWER_CANARY_MAX_CAPS 32

/* The sweeps read from the inputs: one per GPU (the last one read wins). */
struct hr_power_canary {
	int nfiles;                         /* roofline results with a sweep */
	int ngpus;
	struct hr_power_canary_gpu {
		char name[96];              /* "host gpu0" */
		double default_w;
		int npts;
		double cap_w[HR_POWER_CANARY_MAX_CAPS], gflops[HR_POWER_CANARY_MAX_CAPS],
			power_w[HR_POWER_CANARY_MAX_CAPS];
	} *gpus;                            /* ngpus entries (owned) */
};

/**
 * hr_power_canary_read - take the GPU devices' power_sweep of a roofline
 * result (@r, read by hr_result_read() from @path). A curve entry without
 * a positive cap_w is listed in @is and not used. Returns 0, or
 * CH_ERR_RUNTIME when out of memory.
 */
int hr_power_canary_read(struct hr_power_canary *k, const char *path, const struct hr_result *r,
			 struct hr_issues *is);

/** hr_power_canary_release - free @k's GPUs and zero it. */
void hr_power_canary_release(struct hr_power_canary *k);

/* The canary at the cap. Unknown figures have src 0. */
struct hr_power_canary_out {
	int asked;                  /* --power-cap given */
	int judged;                 /* the figures below could be computed */
	char why[1024];             /* when not judged */
	char worst[96];             /* the GPU with the largest slowdown */
	char compute_from[160];     /* how the compute-bound share was found */
	struct hr_fig cap_w, pct_of_default, gpus_at_cap;
	struct hr_fig slowdown;     /* GFLOP/s at the default limit / at the cap, the worst GPU's */
	struct hr_fig power_cap_w, power_ref_w; /* median average power of the compute point */
	struct hr_fig compute_sec;  /* compute-bound seconds per step at the target, uncapped */
	struct hr_fig step_sec, step_cap_sec, step_increase_frac;
	struct hr_fig energy_step_j, energy_step_cap_j, energy_saved_frac; /* all target GPUs, upper bound */
	struct hr_fig kwh_run, kwh_run_cap, cost_run, cost_run_cap, co2e_kg_run, co2e_kg_run_cap;
	struct hr_fig pue, price_per_kwh, carbon_g_per_kwh;
};

/**
 * hr_power_canary_compute - the model at the cap (docs/canary.md, "At a
 * power cap"): for each swept GPU with a curve point at the cap and at its
 * default limit, slowdown = GFLOP/s at the default / at the cap; the worst
 * GPU's is used (a synchronous job runs at the slowest GPU's pace). At the
 * target, with f the checkpoint's share of wall-clock, C the compute-bound
 * seconds of the step:
 *   step_cap = (step x (1 - f) + C x (slowdown - 1)) / (1 - f);
 *   energy per step = target GPUs x P x step (P the compute point's median
 *   average power at the cap, or at the default limit uncapped: an upper
 *   bound, the GPUs draw less while they wait);
 *   per run (--run-steps): kWh = energy x steps / 3.6e6 x PUE, cost = kWh x
 *   price, CO2e = kWh x grid intensity (hr_cost.h's documented defaults,
 *   assumed, unless given).
 * @in, @o: [in] the canary's inputs and its computed output.
 * @po: [out]; po->asked 0 when in->power_cap_w is not given.
 */
void hr_power_canary_compute(const struct hr_power_canary *k, const struct hr_canary_in *in,
			     const struct hr_canary_out *o, struct hr_power_canary_out *po);

/** hr_power_canary_print - the "at a power cap" lines (nothing when not asked). */
void hr_power_canary_print(FILE *f, const struct hr_power_canary *k, const struct hr_power_canary_out *po);

/** hr_power_canary_json - the canary JSON's "power_cap" object, JSON null when not asked. */
json_t *hr_power_canary_json(const struct hr_power_canary_out *po);

#ifdef __cplusplus
}
#endif
#endif
