/*
 * hr_cost.h - what the measurement run itself cost: wall time, energy
 * (measured where the result files carry it, else estimated from rated
 * power and labelled as such), facility energy through a PUE, cost and
 * CO2e. The defaults and their sources are documented in
 * docs/health_report.md ("What the run cost").
 */
#ifndef HR_COST_H
#define HR_COST_H

#include <jansson.h>

#include "base/ch_datasheet.h"
#include "report/read/hr_model.h" /* hr_gpu_rated_w(), HR_DEFAULT_GPU_W */

#ifdef __cplusplus
extern "C" {
#endif

struct hr_fleet;

/* Default PUE: Uptime Institute Global Data Center Survey 2023, industry
 * average power usage effectiveness 1.58. */
#define HR_DEFAULT_PUE 1.58
/* Default price: US EIA Electric Power Annual 2023, average retail price
 * of electricity to industrial customers, 8.06 US cents per kWh. */
#define HR_DEFAULT_PRICE_PER_KWH 0.0806
#define HR_DEFAULT_CURRENCY "USD"
/* Default grid carbon intensity: Ember, Global Electricity Review 2024,
 * world average of power generation in 2023, 480 gCO2/kWh. */
#define HR_DEFAULT_CARBON_G_PER_KWH 480.0
/* Assumed CPU package power for estimates (no rated figure in the result
 * files): 250 W, a typical TDP of current server CPUs. */
#define HR_DEFAULT_CPU_W 250.0
struct hr_cost_params {
	double pue;               /* facility energy / IT energy, >= 1 */
	double price_per_kwh;     /* in @currency */
	char currency[8];
	double carbon_g_per_kwh;  /* grid intensity, gCO2e per kWh */
	double cpu_w;             /* assumed power per CPU package, for estimates */
	int pue_given, price_given, carbon_given, cpu_w_given; /* set by options */
};

/** hr_cost_defaults - fill @p with the documented defaults. */
void hr_cost_defaults(struct hr_cost_params *p);

/**
 * hr_cost_profile - the "run_cost" object of the profile.
 * @f: [in] fleet with its runs. @p: [in] parameters.
 * Wall time: the span from the earliest start_utc to the latest end_utc,
 * and the sum of the runs' own durations. IT energy: the sum over runs of
 * energy.cpu_j + energy.gpu_j where the result file has them, otherwise an
 * estimate: duration x (GPUs used x rated power + CPU packages x p->cpu_w).
 * Facility energy = IT energy x PUE; cost = facility kWh x price; CO2e =
 * facility kWh x carbon intensity.
 * Returns a new object (caller owns it), NULL when out of memory.
 */
json_t *hr_cost_profile(const struct hr_fleet *f, const struct hr_cost_params *p);

#ifdef __cplusplus
}
#endif
#endif
