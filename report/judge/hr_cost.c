#include "report/judge/hr_cost.h"
#include "report/read/hr_model.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void hr_cost_defaults(struct hr_cost_params *p)
{
	memset(p, 0, sizeof(*p));
	p->pue = HR_DEFAULT_PUE;
	p->price_per_kwh = HR_DEFAULT_PRICE_PER_KWH;
	snprintf(p->currency, sizeof(p->currency), "%s", HR_DEFAULT_CURRENCY);
	p->carbon_g_per_kwh = HR_DEFAULT_CARBON_G_PER_KWH;
	p->cpu_w = HR_DEFAULT_CPU_W;
}

json_t *hr_cost_profile(const struct hr_fleet *f, const struct hr_cost_params *p)
{
	json_t *o = json_object(), *src;
	double span0 = 0, span1 = 0, run_sec = 0, it_j = 0, est_j = 0, meas_j = 0;
	size_t i, counted = 0, measured = 0, no_time = 0;
	double kwh, fac_kwh;
	char basis[512];

	if (!o)
		return NULL;
	for (i = 0; i < f->nruns; i++) {
		const struct hr_run *r = &f->runs[i];
		int cpu_meas = !isnan(r->cpu_j), gpu_meas = !isnan(r->gpu_j);
		int need_gpu = r->gpu_rated_w > 0;
		if (r->start && r->end) {
			if (!span0 || r->start < span0)
				span0 = (double)r->start;
			if (r->end > span1)
				span1 = (double)r->end;
		}
		/* each part measured where the file has it, else estimated */
		if (isnan(r->wall_sec) && !(cpu_meas && (gpu_meas || !need_gpu))) {
			no_time++;
			continue;
		}
		if (!isnan(r->wall_sec))
			run_sec += r->wall_sec;
		if (cpu_meas)
			meas_j += r->cpu_j;
		else
			est_j += r->wall_sec * r->cpu_packages * p->cpu_w;
		if (gpu_meas)
			meas_j += r->gpu_j;
		else if (need_gpu)
			est_j += r->wall_sec * r->gpu_rated_w;
		if (cpu_meas && (gpu_meas || !need_gpu))
			measured++;
		counted++;
	}
	it_j = meas_j + est_j;
	kwh = it_j / 3.6e6;
	fac_kwh = kwh * p->pue;
	snprintf(basis, sizeof(basis),
		 "where a result file has no energy reading (no RAPL or NVML counter): wall time x rated power, that is the GPUs it used at their datasheet maximum power and %.0f W per CPU package%s; an upper bound, as devices rarely draw their rated power throughout",
		 p->cpu_w, p->cpu_w_given ? ", given" : ", assumed");
	json_object_set_new(o, "wall_span_sec", span1 > span0 ? json_real(span1 - span0) : json_null());
	json_object_set_new(o, "run_sec_total", json_real(run_sec));
	json_object_set_new(o, "runs_counted", json_integer((json_int_t)counted));
	json_object_set_new(o, "runs_measured", json_integer((json_int_t)measured));
	json_object_set_new(o, "runs_without_time", json_integer((json_int_t)no_time));
	json_object_set_new(o, "it_energy_j", json_real(it_j));
	json_object_set_new(o, "measured_energy_j", json_real(meas_j));
	json_object_set_new(o, "estimated_energy_j", json_real(est_j));
	json_object_set_new(o, "energy_source",
			    json_string(counted == 0 ? "none" : measured == counted ? "measured" :
					measured == 0 ? "estimate" : "partly estimated"));
	json_object_set_new(o, "estimate_basis", json_string(basis));
	json_object_set_new(o, "pue", json_real(p->pue));
	json_object_set_new(o, "facility_energy_kwh", json_real(fac_kwh));
	json_object_set_new(o, "price_per_kwh", json_real(p->price_per_kwh));
	json_object_set_new(o, "currency", json_string(p->currency));
	json_object_set_new(o, "cost", json_real(fac_kwh * p->price_per_kwh));
	json_object_set_new(o, "carbon_g_per_kwh", json_real(p->carbon_g_per_kwh));
	json_object_set_new(o, "co2e_kg", json_real(fac_kwh * p->carbon_g_per_kwh / 1000.0));
	src = json_object();
	json_object_set_new(src, "pue", json_string(p->pue_given ? "given (--pue)" :
		"default: Uptime Institute Global Data Center Survey 2023, industry average PUE 1.58"));
	json_object_set_new(src, "price_per_kwh", json_string(p->price_given ? "given (--price-kwh)" :
		"default: US EIA Electric Power Annual 2023, average industrial retail price 8.06 US cents/kWh"));
	json_object_set_new(src, "carbon_g_per_kwh", json_string(p->carbon_given ? "given (--carbon-g-kwh)" :
		"default: Ember Global Electricity Review 2024, world average 2023, 480 gCO2/kWh"));
	json_object_set_new(o, "sources", src);
	return o;
}
