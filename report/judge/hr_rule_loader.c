/*
 * hr_rule_loader.c - the loader family: loader_contention's recommended
 * and inherited placements on their figures (loader_input_bound,
 * loader_contention, affinity_collapsed, loader_not_judged).
 */
#include "report/judge/hr_judge.h"
#include "report/judge/hr_rules.h"
#include "report/judge/hr_quality.h"
#include "report/read/hr_index.h"
#include "report/hr_util.h"
#include "base/ch_common.h"
#include "base/ch_result.h"
#include "base/ch_stats.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct hr_loader *hj_node_loader(const struct hr_fleet *f, int node)
{
	long l = hr_index_node_loader(f, node); /* the last one read: the newest */
	return l >= 0 ? &f->loaders[l] : NULL;
}

static const struct hr_loader_cfg *loader_cfg(const struct hr_loader *l, const char *name,
					     const char *placement, int workers)
{
	size_t i;
	for (i = 0; name && i < l->ncfgs; i++)
		if (!strcmp(l->cfgs[i].name, name))
			return &l->cfgs[i];
	for (i = 0; placement && i < l->ncfgs; i++)
		if (!strcmp(l->cfgs[i].placement, placement) && (workers < 0 || l->cfgs[i].workers == workers))
			return &l->cfgs[i];
	return NULL;
}

static int verdict_level(const char *v)
{
	return v && !strcmp(v, "fail") ? HR_FAIL : v && !strcmp(v, "warn") ? HR_WARN : HR_INFO;
}

static void cfg_text(const struct hr_loader_cfg *c, char *buf, size_t n)
{
	char p99[32], wait[32], wk[48];
	if (c->workers == INT_MIN)
		snprintf(wk, sizeof(wk), "workers per GPU not recorded");
	else
		snprintf(wk, sizeof(wk), "%d worker%s per GPU", c->workers, c->workers == 1 ? "" : "s");
	snprintf(buf, n, "feeder lateness p99 %s us, input wait %s%% of the step, accelerator utilisation %.1f%% (%s, %s)",
		 hr_fmt_num(c->lateness_p99_us, p99, sizeof(p99)),
		 hr_fmt_num(100 * c->input_wait_frac, wait, sizeof(wait)), 100 * c->accel_util,
		 c->name, wk);
}

/* The level of a loader configuration from its figures (not its verdict
 * label): input wait against the result's thresholds (TensorFlow
 * profiler: WARN from 5%, FAIL from 20% of the step), accelerator
 * utilisation (DLIO: WARN below 90%, FAIL below 70%), and the feeders'
 * lateness p99 (WARN from one whole step: the batch of that step is late
 * by construction). @why: [out] what crossed its threshold, with the
 * margin. */
/* Threshold @name of loader @l: the result's own, else the row
 * loader_input_bound's (hr_rules.c). */
static double loader_thr(double own, const char *name)
{
	return isnan(own) ? hr_rule_param("loader_input_bound", name) : own;
}

/* The margin a figure of spread @sd over @repeats repeats must cross its
 * threshold by: the cut-off at the row's false-alarm budget over its
 * comparisons (Student's t at repeats - 1 degrees of freedom, hr_cutoff())
 * times the standard error of the run's figure, sd / sqrt(repeats); 0 when
 * no spread was recorded (the figure is judged as it is). @cut: [out] the
 * cut-off (NAN for 0). */
static double loader_margin(double sd, int repeats, double *cut)
{
	*cut = NAN;
	if (isnan(sd) || repeats < 2)
		return 0;
	*cut = hr_t_upper(hr_rule_param("loader_input_bound", "false_alarm") / hr_rule_param("loader_input_bound", "comparisons"),
			  repeats - 1);
	return *cut * sd / sqrt(repeats);
}

/* The spread's part of a figure's text: empty without one. */
static void spread_text(double sd, int repeats, double cut, char *buf, size_t n)
{
	buf[0] = '\0';
	if (!isnan(cut))
		snprintf(buf, n, ", beyond its spread: standard deviation %.2g points over %d repeats, cut-off %.3g standard errors", 100 * sd,
			 repeats, cut);
}

/* @within: [out] set to 1 when a figure crossed its threshold by less
 * than its margin (loader_margin(): within its spread, not judged). */
static int loader_level(const struct hr_loader *l0, const struct hr_loader_cfg *c, char *why, size_t n, int *within)
{
	struct hr_loader thr = *l0, *l = &thr;
	int level = HR_INFO;
	size_t len;
	double cw, cu, mw = loader_margin(c->input_wait_frac_sd, c->repeats, &cw), mu = loader_margin(c->accel_util_sd, c->repeats, &cu);
	char sp[160];
	why[0] = '\0';
	*within = 0;
	thr.wait_warn = loader_thr(l0->wait_warn, "wait_warn");
	thr.wait_fail = loader_thr(l0->wait_fail, "wait_fail");
	thr.util_pass = loader_thr(l0->util_pass, "util_pass");
	thr.util_fail = loader_thr(l0->util_fail, "util_fail");
	if (c->input_wait_frac >= l->wait_warn && c->input_wait_frac - mw < l->wait_warn)
		*within = 1;
	else if (c->input_wait_frac >= l->wait_warn) {
		int lv = c->input_wait_frac - mw >= l->wait_fail ? HR_FAIL : HR_WARN;
		len = strlen(why);
		spread_text(c->input_wait_frac_sd, c->repeats, cw, sp, sizeof(sp));
		snprintf(why + len, n - len, "%sinput wait %.1f%% of the step%s (WARN from %.0f%%, FAIL from %.0f%%: TensorFlow profiler input-pipeline analysis)",
			 len ? "; " : "", 100 * c->input_wait_frac, sp, 100 * l->wait_warn, 100 * l->wait_fail);
		if (lv > level)
			level = lv;
	}
	if (c->accel_util < l->util_pass && c->accel_util + mu >= l->util_pass)
		*within = 1;
	else if (c->accel_util < l->util_pass) {
		int lv = c->accel_util + mu < l->util_fail ? HR_FAIL : HR_WARN;
		len = strlen(why);
		spread_text(c->accel_util_sd, c->repeats, cu, sp, sizeof(sp));
		snprintf(why + len, n - len, "%saccelerator utilisation %.1f%%%s (WARN below %.0f%%, FAIL below %.0f%%: DLIO / MLPerf Storage)",
			 len ? "; " : "", 100 * c->accel_util, sp, 100 * l->util_pass, 100 * l->util_fail);
		if (lv > level)
			level = lv;
	}
	if (l->step_ms > 0 && c->lateness_p99_us >= 1000 * l->step_ms) {
		len = strlen(why);
		snprintf(why + len, n - len, "%sfeeder lateness p99 %.0f us, %.1f steps of %.3g ms (WARN from one step)",
			 len ? "; " : "", c->lateness_p99_us, c->lateness_p99_us / (1000 * l->step_ms), l->step_ms);
		if (level < HR_WARN)
			level = HR_WARN;
	}
	return level;
}

/* Whether the loader's host was busy before its load started: its
 * baseline configuration's CPU pressure, or the envelope's conditions
 * before the run (hr_quality.h); @q: [out]. */
static void loader_quality(const struct an *a, const struct hr_loader *l, struct hr_quality *q)
{
	const struct hr_conditions *c = NULL;
	long i;
	for (i = hr_index_run_of_path(a->f, l->source); i >= 0; i = hr_index_run_next_of_path(a->f, i))
		if (a->f->runs[i].cond.known) {
			c = &a->f->runs[i].cond;
			break;
		}
	hr_quality_loader(q, c, l->base_psi_pct);
}

/*
 * The loader judged on its figures (loader_level()), not on
 * loader_contention's verdict labels: the configuration it recommends
 * (the best placement measured: when even that is late, the host cannot
 * feed its GPUs) and the inherited placement (as-is: what a job gets
 * without binding). A run whose host was busy before its load started is
 * not judged ("host busy").
 */
static void loader_reasons(struct an *a)
{
	const struct hr_fleet *f = a->f;
	size_t n, i;
	for (n = 0; n < f->nnodes; n++) {
		const struct hr_loader *l = hj_node_loader(f, (int)n);
		const struct hr_loader_cfg *rec, *asis = NULL, *shared = NULL;
		struct hr_quality q;
		int level, la = HR_INFO, ls = HR_INFO, within = 0;
		char t1[400], w1[600], w2[600], w3[600], action[768];
		if (!l)
			continue;
		if (l->mask_collapsed) {
			level = verdict_level(l->verdict);
			a->loader[n] = 1;
			hj_add_reason(a, (int)n, level > HR_WARN ? level : HR_WARN, "affinity_collapsed", "loader", l->source,
				   "check the launcher's CPU binding (srun --cpu-bind, OMP_PROC_BIND, mpirun --bind-to): every thread of the job would share one CPU",
				   "the process's CPU affinity mask has collapsed to a single CPU (loader_contention's verdict '%s')",
				   l->verdict ? l->verdict : "n/a");
			continue;
		}
		loader_quality(a, l, &q);
		if (q.noisy) {
			a->loader[n] = 2;
			snprintf(a->loader_why[n], sizeof(a->loader_why[n]), "host busy: %s", q.why);
			hj_add_reason(a, (int)n, HR_INFO, "loader_not_judged", "loader", l->source, "re-run on an idle node",
				   "loader not judged: host busy (%s): its feeders would be late from the other work, not from the placement",
				   q.why);
			continue;
		}
		a->loader[n] = 1;
		rec = loader_cfg(l, l->rec_config, l->rec_placement, l->rec_workers);
		for (i = 0; i < l->ncfgs; i++) {
			const struct hr_loader_cfg *c = &l->cfgs[i];
			if (!strcmp(c->placement, "as-is") && (!asis || c->input_wait_frac > asis->input_wait_frac))
				asis = c;
			if (!strcmp(c->placement, "shared") && (!shared || c->input_wait_frac > shared->input_wait_frac))
				shared = c;
		}
		if (l->rec_placement)
			/* shared and as-is leave the workers on the feeder cores: bind, not move */
			snprintf(action, sizeof(action), "%s: the %s placement with %d worker%s per GPU%s%s%s",
				 !strcmp(l->rec_placement, "shared") || !strcmp(l->rec_placement, "as-is")
					 ? "bind the job as loader_contention recommends"
					 : "move workers off the feeder cores",
				 l->rec_placement, l->rec_workers, l->rec_workers == 1 ? "" : "s",
				 l->rec_numactl ? " (" : "", l->rec_numactl ? l->rec_numactl : "",
				 l->rec_numactl ? ")" : "");
		else
			snprintf(action, sizeof(action), "move workers off the feeder cores (loader_contention's isolated placement)");
		level = rec ? loader_level(l, rec, w1, sizeof(w1), &within) : HR_INFO;
		if (level < HR_WARN && within) {
			/* across a threshold by less than its spread: not judged */
			cfg_text(rec, t1, sizeof(t1));
			a->loader[n] = 2;
			snprintf(a->loader_why[n], sizeof(a->loader_why[n]), "a figure within its spread of its threshold (%s)", rec->name);
			hj_add_reason(a, (int)n, HR_INFO, "loader_not_judged", "loader", l->source,
				   "re-run with a longer --duration (more steps per repeat narrow the spread)",
				   "loader not judged: with the recommended placement a figure is across its threshold by less than its spread over repeats (%s; standard deviation over %d repeats: input wait %.2g, utilisation %.2g points; cut-off at the rule's false-alarm budget)",
				   t1, rec->repeats, 100 * rec->input_wait_frac_sd, 100 * rec->accel_util_sd);
			continue;
		}
		a->loader_lv[n] = level;
		if (level >= HR_WARN) {
			char act2[1024];
			cfg_text(rec, t1, sizeof(t1));
			snprintf(act2, sizeof(act2), "the host CPUs cannot keep the GPUs fed even with the best placement measured: look for other load on the node (top), then reduce the CPU work per batch or add cores; meanwhile %s",
				 action);
			hj_add_reason(a, (int)n, level, "loader_input_bound", "loader", l->source, act2,
				   "with the recommended placement: %s (%s; loader_contention's own verdict '%s')", w1, t1,
				   l->verdict ? l->verdict : "n/a");
			continue;
		}
		if (asis)
			la = loader_level(l, asis, w2, sizeof(w2), &within);
		if (shared)
			ls = loader_level(l, shared, w3, sizeof(w3), &within);
		if (la >= HR_WARN) {
			cfg_text(asis, t1, sizeof(t1));
			hj_add_reason(a, (int)n, HR_WARN, "loader_contention", "loader", l->source, action,
				   "feeders are late under the inherited placement (no binding): %s (%s)%s%s%s%s%s%s",
				   w2, t1, ls >= HR_WARN ? "; likewise with workers on the feeder cores (" : "",
				   ls >= HR_WARN ? shared->name : "", ls >= HR_WARN ? ")" : "",
				   rec ? "; the recommended placement passes: " : "", rec ? rec->name : "",
				   rec ? " (a placement to change, not a fault of the node: WARN, whatever the figures' levels)" : "");
		}
	}
}

const struct hr_family hr_family_loader = {
	"loader",
	"loader_contention's results (hr_loader) and their measurement conditions",
	loader_reasons,
	NULL,
};
