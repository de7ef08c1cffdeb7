/*
 * hr_canary_power.c - the canary at a power cap (see hr_canary_power.h).
 */
#include "report/canary/hr_canary_power.h"
#include "report/judge/hr_cost.h"
#include "report/hr_util.h"
#include "base/ch_common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define SAME_W 0.5

static struct hr_fig fig(double v, unsigned src)
{
	struct hr_fig f = { v, src };
	return f;
}

int hr_power_canary_read(struct hr_power_canary *k, const char *path, const struct hr_result *r,
			 struct hr_issues *is)
{
	size_t i, j;
	int any = 0;

	for (i = 0; r->devices && i < r->devices_list.n; i++) {
		const struct hr_result_device *d = &r->devices[i];
		const struct hr_result_power *p = &d->power;
		struct hr_power_canary_gpu *g = NULL;
		char name[96];
		int m;
		if (!p->present || !(p->default_limit_w.num > 0) || !isfinite(p->default_limit_w.num))
			continue;
		snprintf(name, sizeof(name), "%s %s", d->host.str ? d->host.str : r->hostname ? r->hostname : "?",
			 d->device.str ? d->device.str : "?");
		for (m = 0; m < k->ngpus && !g; m++)
			if (!strcmp(k->gpus[m].name, name))
				g = &k->gpus[m];
		if (!g) {
			struct hr_power_canary_gpu *v;
			if (k->ngpus >= HR_POWER_CANARY_MAX_GPUS)
				continue;
			v = realloc(k->gpus, (size_t)(k->ngpus + 1) * sizeof(*v));
			if (!v)
				return CH_ERR_RUNTIME;
			k->gpus = v;
			g = &k->gpus[k->ngpus++];
		}
		memset(g, 0, sizeof(*g));
		snprintf(g->name, sizeof(g->name), "%s", name);
		g->default_w = p->default_limit_w.num;
		for (j = 0; j < p->curve_list.n && g->npts < HR_POWER_CANARY_MAX_CAPS; j++) {
			const struct hr_result_power_pt *q = &p->curve[j];
			if (!(q->cap_w.num > 0) || !isfinite(q->cap_w.num)) {
				hr_issue_add(is, HR_ISSUE_NOTE, path, 0, 0, "results.devices[%zu].power_sweep.curve[%zu]: "
					     "no positive 'cap_w'; not used", i, j);
				continue;
			}
			g->cap_w[g->npts] = q->cap_w.num;
			g->gflops[g->npts] = q->gflops.num > 0 && isfinite(q->gflops.num) ? q->gflops.num : NAN;
			g->power_w[g->npts++] = q->avg_power_w.num > 0 && isfinite(q->avg_power_w.num) ? q->avg_power_w.num : NAN;
		}
		any = 1;
	}
	k->nfiles += any;
	return 0;
}

void hr_power_canary_release(struct hr_power_canary *k)
{
	free(k->gpus);
	memset(k, 0, sizeof(*k));
}

static int at(const struct hr_power_canary_gpu *g, double w)
{
	int i;
	for (i = 0; i < g->npts; i++)
		if (fabs(g->cap_w[i] - w) <= SAME_W)
			return i;
	return -1;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	if (n <= 0)
		return NAN;
	qsort(v, (size_t)n, sizeof(*v), cmp_dbl);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

void hr_power_canary_compute(const struct hr_power_canary *k, const struct hr_canary_in *in,
			     const struct hr_canary_out *o, struct hr_power_canary_out *po)
{
	double *pc = NULL, *pr = NULL, worst = -1, dflt = NAN, f, t2, c, t2tr, steps, kwh, kwh_cap, e, e_cap;
	unsigned sc, st, se;
	int i, n = 0, np = 0;

	memset(po, 0, sizeof(*po));
	if (!in->power_cap_w.src)
		return;
	po->asked = 1;
	po->cap_w = in->power_cap_w;
	po->pue = in->pue.src ? in->pue : fig(HR_DEFAULT_PUE, HR_SRC_ASSUMED);
	po->price_per_kwh = in->price_per_kwh.src ? in->price_per_kwh : fig(HR_DEFAULT_PRICE_PER_KWH, HR_SRC_ASSUMED);
	po->carbon_g_per_kwh = in->carbon_g_per_kwh.src ? in->carbon_g_per_kwh :
			       fig(HR_DEFAULT_CARBON_G_PER_KWH, HR_SRC_ASSUMED);
	if (!k->ngpus) {
		snprintf(po->why, sizeof(po->why), "no roofline --power-limits sweep among the inputs: measure one "
			 "(roofline --power-limits ...,%.0f,...) on the job's GPUs", in->power_cap_w.v);
		return;
	}
	pc = calloc((size_t)k->ngpus, sizeof(double));
	pr = calloc((size_t)k->ngpus, sizeof(double));
	if (!pc || !pr) {
		snprintf(po->why, sizeof(po->why), "out of memory");
		goto out;
	}
	for (i = 0; i < k->ngpus; i++) {
		const struct hr_power_canary_gpu *g = &k->gpus[i];
		int a = at(g, in->power_cap_w.v), r = at(g, g->default_w);
		double s;
		if (a < 0 || r < 0 || !(g->gflops[a] > 0) || !(g->gflops[r] > 0))
			continue;
		s = g->gflops[r] / g->gflops[a];
		n++;
		if (s > worst) {
			worst = s;
			snprintf(po->worst, sizeof(po->worst), "%s", g->name);
		}
		if (isnan(dflt))
			dflt = g->default_w;
		if (g->power_w[a] > 0 && g->power_w[r] > 0) {
			pc[np] = g->power_w[a];
			pr[np++] = g->power_w[r];
		}
	}
	if (!n) {
		snprintf(po->why, sizeof(po->why), "the %.0f W cap was not measured by any of the %d swept GPUs (with a "
			 "figure at their default limit): sweep it (roofline --power-limits)", in->power_cap_w.v, k->ngpus);
		goto out;
	}
	po->gpus_at_cap = fig(n, HR_SRC_MEASURED);
	po->pct_of_default = fig(100.0 * in->power_cap_w.v / dflt, HR_SRC_MEASURED | in->power_cap_w.src);
	po->slowdown = fig(worst, HR_SRC_MEASURED);
	if (np) {
		po->power_cap_w = fig(median(pc, np), HR_SRC_MEASURED);
		po->power_ref_w = fig(median(pr, np), HR_SRC_MEASURED);
	}
	/* the step at the target, uncapped, and its compute-bound seconds */
	if (o->comm_only || !o->step_target_sec.src) {
		snprintf(po->why, sizeof(po->why), "no step time at the target (%s): the slowdown of the "
			 "compute-bound share alone is x%.3f", o->comm_only ? "give --step-time" :
			 "nothing predicts it: a second run at another GPU count or an all-reduce model", worst);
		goto out;
	}
	t2 = o->step_target_sec.v;
	f = o->ckpt_frac.src ? o->ckpt_frac.v : 0;
	t2tr = t2 * (1 - f);
	if (in->power_compute_share.src) {
		c = in->power_compute_share.v * t2;
		sc = in->power_compute_share.src | o->step_target_sec.src;
		snprintf(po->compute_from, sizeof(po->compute_from), "given: --compute-share %.0f%% of the step",
			 100 * in->power_compute_share.v);
	} else if ((o->exposed_comm_target_sec.src || o->comm_target_sec.src) && !o->trend_used) {
		/* the exposed communication at the target (FSDP's first all-gather
		 * and the rest's unhidden share), else (1 - overlap) x all of it */
		double ov = o->overlap.src ? o->overlap.v : 0, iw = o->input_wait_sec.src ? o->input_wait_sec.v : 0;
		c = t2tr - iw - (o->exposed_comm_target_sec.src ? o->exposed_comm_target_sec.v :
				 (1 - ov) * o->comm_target_sec.v);
		sc = o->step_target_sec.src | o->comm_target_sec.src | HR_SRC_ASSUMED;
		snprintf(po->compute_from, sizeof(po->compute_from), "modelled: the step less the exposed all-reduce%s%s "
			 "(all of it taken as compute-bound: an upper bound)", o->input_wait_sec.src ? ", the input wait" :
			 " (input wait unknown: 0)", f > 0 ? " and the checkpoint stall" : "");
	} else {
		snprintf(po->why, sizeof(po->why), "no all-reduce model at the target to tell the compute-bound share of "
			 "the step: give --compute-share (a training log's time split)");
		goto out;
	}
	if (!(c > 0) || c > t2tr + 1e-12) {
		snprintf(po->why, sizeof(po->why), "the compute-bound share of the step comes out at %.3g s of %.3g s: "
			 "the inputs are off; give --compute-share", c, t2);
		goto out;
	}
	po->judged = 1;
	po->compute_sec = fig(c, sc);
	po->step_sec = o->step_target_sec;
	st = sc | po->slowdown.src;
	po->step_cap_sec = fig((t2tr + c * (worst - 1)) / (1 - f), st);
	po->step_increase_frac = fig(po->step_cap_sec.v / t2 - 1, st);
	if (!np)
		goto out;
	se = st | HR_SRC_ASSUMED | in->target_gpus.src;
	e = in->target_gpus.v * po->power_ref_w.v * t2;
	e_cap = in->target_gpus.v * po->power_cap_w.v * po->step_cap_sec.v;
	po->energy_step_j = fig(e, se);
	po->energy_step_cap_j = fig(e_cap, se);
	po->energy_saved_frac = fig(1 - e_cap / e, se);
	if (!in->run_steps.src)
		goto out;
	steps = in->run_steps.v;
	se |= in->run_steps.src | po->pue.src;
	kwh = e * steps / 3.6e6 * po->pue.v;
	kwh_cap = e_cap * steps / 3.6e6 * po->pue.v;
	po->kwh_run = fig(kwh, se);
	po->kwh_run_cap = fig(kwh_cap, se);
	po->cost_run = fig(kwh * po->price_per_kwh.v, se | po->price_per_kwh.src);
	po->cost_run_cap = fig(kwh_cap * po->price_per_kwh.v, se | po->price_per_kwh.src);
	po->co2e_kg_run = fig(kwh * po->carbon_g_per_kwh.v / 1000, se | po->carbon_g_per_kwh.src);
	po->co2e_kg_run_cap = fig(kwh_cap * po->carbon_g_per_kwh.v / 1000, se | po->carbon_g_per_kwh.src);
out:
	free(pc);
	free(pr);
}

static void row(FILE *f, const char *label, const char *value, unsigned src)
{
	char b[48];
	fprintf(f, "  %-40s %-34s [%s]\n", label, value, hr_src_label(src, b, sizeof(b)));
}

static void energy(char *b, size_t n, double j)
{
	if (j >= 1e6)
		snprintf(b, n, "%.2f MJ", j / 1e6);
	else if (j >= 1e3)
		snprintf(b, n, "%.2f kJ", j / 1e3);
	else
		snprintf(b, n, "%.1f J", j);
}

void hr_power_canary_print(FILE *f, const struct hr_power_canary *k, const struct hr_power_canary_out *po)
{
	char v[160], a[48], b[48];

	if (!po->asked)
		return;
	fprintf(f, "\nat a power cap of %.0f W (every GPU of the job capped alike; roofline --power-limits sweeps of %d "
		"GPUs in %d files)\n", po->cap_w.v, k->ngpus, k->nfiles);
	if (po->slowdown.src) {
		snprintf(v, sizeof(v), "x%.3f (%s; %.0f%% of the default limit)", po->slowdown.v, hr_term(po->worst),
			 po->pct_of_default.v);
		row(f, "compute-bound slowdown, slowest GPU", v, po->slowdown.src);
	}
	if (po->power_cap_w.src) {
		snprintf(v, sizeof(v), "%.0f W at the cap, %.0f W at the default limit", po->power_cap_w.v, po->power_ref_w.v);
		row(f, "compute-bound power, median", v, po->power_cap_w.src);
	}
	if (!po->judged) {
		fprintf(f, "  not judged: %s\n", hr_term(po->why));
		return;
	}
	snprintf(v, sizeof(v), "%.3g s of %.3g s", po->compute_sec.v, po->step_sec.v);
	row(f, "compute-bound share of the step", v, po->compute_sec.src);
	fprintf(f, "  %-40s %s\n", "", hr_term(po->compute_from));
	snprintf(v, sizeof(v), "%.3g s -> %.3g s (%+.1f%%)", po->step_sec.v, po->step_cap_sec.v,
		 100 * po->step_increase_frac.v);
	row(f, "step time at the target", v, po->step_cap_sec.src);
	if (po->energy_step_j.src) {
		energy(a, sizeof(a), po->energy_step_j.v);
		energy(b, sizeof(b), po->energy_step_cap_j.v);
		snprintf(v, sizeof(v), "%s -> %s (%+.1f%%)", a, b, -100 * po->energy_saved_frac.v);
		row(f, "energy per step, all GPUs (upper bound)", v, po->energy_step_cap_j.src);
	} else {
		fprintf(f, "  energy per step: not known (the sweeps have no average power)\n");
	}
	if (po->kwh_run.src) {
		snprintf(v, sizeof(v), "%.1f -> %.1f kWh (PUE %.2f)", po->kwh_run.v, po->kwh_run_cap.v, po->pue.v);
		row(f, "energy per run, facility", v, po->kwh_run_cap.src);
		snprintf(v, sizeof(v), "%.2f -> %.2f (%.4f per kWh)", po->cost_run.v, po->cost_run_cap.v, po->price_per_kwh.v);
		row(f, "electricity cost per run", v, po->cost_run_cap.src);
		snprintf(v, sizeof(v), "%.1f -> %.1f kg (%.0f g/kWh)", po->co2e_kg_run.v, po->co2e_kg_run_cap.v,
			 po->carbon_g_per_kwh.v);
		row(f, "CO2e per run", v, po->co2e_kg_run_cap.src);
	} else if (po->energy_step_j.src) {
		fprintf(f, "  per run: give --run-steps for kWh, cost and CO2e per run\n");
	}
}

static json_t *jfig(struct hr_fig x)
{
	char b[48];
	if (!x.src || !isfinite(x.v))
		return json_null();
	return json_pack("{s:f,s:s}", "value", x.v, "source", hr_src_label(x.src, b, sizeof(b)));
}

json_t *hr_power_canary_json(const struct hr_power_canary_out *po)
{
	json_t *o;

	if (!po->asked)
		return json_null();
	o = json_object();
	json_object_set_new(o, "cap_w", jfig(po->cap_w));
	json_object_set_new(o, "judged", json_boolean(po->judged));
	json_object_set_new(o, "why", po->judged ? json_null() : json_string(po->why));
	json_object_set_new(o, "pct_of_default", jfig(po->pct_of_default));
	json_object_set_new(o, "gpus_at_cap", jfig(po->gpus_at_cap));
	json_object_set_new(o, "slowdown", jfig(po->slowdown));
	json_object_set_new(o, "slowest_gpu", po->worst[0] ? json_string(po->worst) : json_null());
	json_object_set_new(o, "power_cap_w", jfig(po->power_cap_w));
	json_object_set_new(o, "power_default_w", jfig(po->power_ref_w));
	json_object_set_new(o, "compute_sec", jfig(po->compute_sec));
	json_object_set_new(o, "compute_from", po->compute_from[0] ? json_string(po->compute_from) : json_null());
	json_object_set_new(o, "step_sec", jfig(po->step_sec));
	json_object_set_new(o, "step_cap_sec", jfig(po->step_cap_sec));
	json_object_set_new(o, "step_increase_frac", jfig(po->step_increase_frac));
	json_object_set_new(o, "energy_step_j", jfig(po->energy_step_j));
	json_object_set_new(o, "energy_step_cap_j", jfig(po->energy_step_cap_j));
	json_object_set_new(o, "energy_saved_frac", jfig(po->energy_saved_frac));
	json_object_set_new(o, "kwh_run", jfig(po->kwh_run));
	json_object_set_new(o, "kwh_run_cap", jfig(po->kwh_run_cap));
	json_object_set_new(o, "cost_run", jfig(po->cost_run));
	json_object_set_new(o, "cost_run_cap", jfig(po->cost_run_cap));
	json_object_set_new(o, "co2e_kg_run", jfig(po->co2e_kg_run));
	json_object_set_new(o, "co2e_kg_run_cap", jfig(po->co2e_kg_run_cap));
	json_object_set_new(o, "pue", jfig(po->pue));
	json_object_set_new(o, "price_per_kwh", jfig(po->price_per_kwh));
	json_object_set_new(o, "carbon_g_per_kwh", jfig(po->carbon_g_per_kwh));
	return o;
}
