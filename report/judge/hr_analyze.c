/*
 * hr_analyze.c - the judge: runs the rule table (hr_rules.h), each pass
 * by its rule family (hr_judge.h), then builds the profile
 * (hr_profile.c).
 */
#include "report/judge/hr_judge.h"
#include "report/judge/hr_rules.h"
#include "report/judge/hr_checkpoint.h"
#include "report/judge/hr_inventory.h"
#include "report/judge/hr_powercap.h"
#include "base/ch_common.h"
#include "report/hr_util.h"
#include "base/ch_result.h"
#include "base/ch_stats.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Per node, its devices and its groups as lists in index order (so that a
 * node's checks need not scan every device and group of the fleet).
 * Returns 0, or -1 out of memory. */
static int node_index(struct an *a)
{
	const struct hr_fleet *f = a->f;
	size_t i, nent = 0, e = 0;
	int k;
	for (i = 0; i < f->ngroups; i++)
		nent += f->groups[i].nnodes > 0 ? (size_t)f->groups[i].nnodes : 0;
	a->node_dev = malloc((f->nnodes ? f->nnodes : 1) * sizeof(*a->node_dev));
	a->node_grp = malloc((f->nnodes ? f->nnodes : 1) * sizeof(*a->node_grp));
	a->dev_next = malloc((f->ndevices ? f->ndevices : 1) * sizeof(*a->dev_next));
	a->grp_next = malloc((nent ? nent : 1) * sizeof(*a->grp_next));
	a->grp_of = malloc((nent ? nent : 1) * sizeof(*a->grp_of));
	if (!a->node_dev || !a->node_grp || !a->dev_next || !a->grp_next || !a->grp_of)
		return -1;
	for (i = 0; i < f->nnodes; i++)
		a->node_dev[i] = a->node_grp[i] = -1;
	for (i = f->ndevices; i-- > 0;) {
		int n = f->devices[i].node;
		a->dev_next[i] = -1;
		if (n < 0 || (size_t)n >= f->nnodes)
			continue;
		a->dev_next[i] = a->node_dev[n];
		a->node_dev[n] = (long)i;
	}
	for (i = f->ngroups; i-- > 0;) {
		const struct hr_group *g = &f->groups[i];
		for (k = 0; k < g->nnodes; k++) {
			int n = g->nodes[k];
			if (n < 0 || (size_t)n >= f->nnodes)
				continue;
			if (a->node_grp[n] >= 0 && a->grp_of[a->node_grp[n]] == (long)i)
				continue; /* listed twice in the group */
			a->grp_of[e] = (long)i;
			a->grp_next[e] = a->node_grp[n];
			a->node_grp[n] = (long)e++;
		}
	}
	return 0;
}

/* a->dev_t, a->grp_t, a->dev_run and a->grp_run: each device's and group's
 * run and its start, through one map of result file -> run (start 0
 * unknown: nccl-tests text logs). */
static int run_times(struct an *a)
{
	const struct hr_fleet *f = a->f;
	json_t *m = json_object(), *hit;
	size_t i;
	a->dev_t = calloc(f->ndevices ? f->ndevices : 1, sizeof(*a->dev_t));
	a->grp_t = calloc(f->ngroups ? f->ngroups : 1, sizeof(*a->grp_t));
	a->dev_run = malloc((f->ndevices ? f->ndevices : 1) * sizeof(*a->dev_run));
	a->grp_run = malloc((f->ngroups ? f->ngroups : 1) * sizeof(*a->grp_run));
	a->m_node = calloc(f->nnodes ? f->nnodes : 1, sizeof(*a->m_node));
	if (!m || !a->dev_t || !a->grp_t || !a->dev_run || !a->grp_run || !a->m_node) {
		json_decref(m);
		return -1;
	}
	for (i = 0; i < f->nruns; i++)
		if (f->runs[i].path && !json_object_get(m, f->runs[i].path) &&
		    json_object_set_new(m, f->runs[i].path, json_integer((json_int_t)i))) {
			json_decref(m);
			return -1;
		}
	for (i = 0; i < f->ndevices; i++) {
		hit = json_object_get(m, f->devices[i].source);
		a->dev_run[i] = hit ? (long)json_integer_value(hit) : -1;
		a->dev_t[i] = hit ? f->runs[a->dev_run[i]].start : 0;
	}
	for (i = 0; i < f->ngroups; i++) {
		hit = json_object_get(m, f->groups[i].source);
		a->grp_run[i] = hit ? (long)json_integer_value(hit) : -1;
		a->grp_t[i] = hit ? f->runs[a->grp_run[i]].start : 0;
	}
	json_decref(m);
	return 0;
}

/* Not a rule: what the rules read, each device's and group's values against
 * their like values (fleet, node) and their own history. */
static void prepare(struct an *a)
{
	size_t i;
	hj_device_instances(a);
	if (!a->oom) {
		/* device_instances() adds each device's instances together */
		for (i = a->ndi; i-- > 0;) {
			a->dev_first[a->di[i].subject] = i;
			a->dev_n[a->di[i].subject]++;
		}
	}
	hj_group_instances(a);
	if (!a->oom) {
		hj_compare(a, a->di, a->ndi);
		hj_compare(a, a->gi, a->ngi);
	}
	if (!a->oom)
		hj_judge_all(a);
	if (!a->oom)
		hj_device_history(a);
}

/* The rule families, one per pass of the rule table (hr_family.h). */
static const struct hr_family *const families[HR_NPASSES] = {
	[HR_PASS_DRIFT] = &hr_family_drift,
	[HR_PASS_DEVICES] = &hr_family_devices,
	[HR_PASS_GROUPS] = &hr_family_groups,
	[HR_PASS_HISTORY] = &hr_family_history,
	[HR_PASS_STRAGGLERS] = &hr_family_stragglers,
	[HR_PASS_LOADER] = &hr_family_loader,
	[HR_PASS_CHECKPOINT] = &hr_family_checkpoint,
	[HR_PASS_RUNS] = &hr_family_runs,
	[HR_PASS_INVENTORY] = &hr_family_inventory,
	[HR_PASS_POWERCAP] = &hr_family_powercap,
	[HR_PASS_HOSTLINK] = &hr_family_hostlink,
	[HR_PASS_CURVES] = &hr_family_curves,
	[HR_PASS_DCGM] = &hr_family_dcgm,
	[HR_PASS_NOT_JUDGED] = &hr_family_not_judged,
	[HR_PASS_XID] = &hr_family_xid,
};

/* The rule table (hr_rules.h), run: each row's pass once, in the order the
 * table first names it; after the drift pass the values are compared
 * (prepare()), and before the devices pass the FAILs are confirmed by the
 * re-measurements (confirm_fails()). */
static void run_rules(struct an *a)
{
	unsigned char done[HR_NPASSES] = { 0 };
	int prepared = 0, confirmed = 0;
	size_t i;
	for (i = 0; i < hr_nrules && !a->oom; i++) {
		enum hr_rule_pass k = hr_rules[i].pass;
		if ((unsigned)k >= HR_NPASSES || done[k])
			continue;
		if (k != HR_PASS_DRIFT && !prepared) {
			prepare(a);
			prepared = 1;
		}
		if (k == HR_PASS_DEVICES && !confirmed && !a->oom) {
			hj_confirm_fails(a);
			confirmed = 1;
		}
		done[k] = 1;
		if (families[k]->judge)
			families[k]->judge(a);
		else
			families[k]->emit(a->f, hj_inventory_reason, a);
	}
}

int hr_analyze_stream(const struct hr_fleet *f, const struct hr_analyze_opts *o, const struct hr_profile_sink *sink)
{
	struct an a;
	json_t *drift;
	size_t i;
	int rc = CH_ERR_RUNTIME;

	memset(&a, 0, sizeof(a));
	a.f = f;
	a.e = o->expect;
	a.th = &o->expect->th;
	a.drift = calloc(f->nnodes ? f->nnodes : 1, sizeof(*a.drift));
	a.slow_pairs = calloc(f->nnodes ? f->nnodes : 1, sizeof(*a.slow_pairs));
	a.dev_first = calloc(f->ndevices ? f->ndevices : 1, sizeof(*a.dev_first));
	a.dev_n = calloc(f->ndevices ? f->ndevices : 1, sizeof(*a.dev_n));
	a.grp_inst = malloc((f->ngroups ? f->ngroups : 1) * sizeof(*a.grp_inst));
	a.curve = calloc(f->ngroups ? f->ngroups : 1, sizeof(*a.curve));
	a.loader = calloc(f->nnodes ? f->nnodes : 1, sizeof(*a.loader));
	a.loader_lv = calloc(f->nnodes ? f->nnodes : 1, sizeof(*a.loader_lv));
	a.loader_why = calloc(f->nnodes ? f->nnodes : 1, sizeof(*a.loader_why));
	a.curve_why = calloc(f->ngroups ? f->ngroups : 1, sizeof(*a.curve_why));
	if (!a.curve || !a.curve_why || !a.loader || !a.loader_lv || !a.loader_why || !a.drift || !a.slow_pairs || !a.dev_first || !a.dev_n || !a.grp_inst)
		goto out;
	for (i = 0; i < f->ngroups; i++)
		a.grp_inst[i] = -1;
	if (node_index(&a) || run_times(&a))
		goto out;
	run_rules(&a);
	drift = a.drift_json;
	a.drift_json = NULL;
	if (a.bad_code) {
		ch_error("internal: reason code '%s' has no row in the rule table (report/judge/hr_rules.c)",
			 a.bad_code);
		json_decref(drift);
		goto out;
	}
	if (a.oom) {
		json_decref(drift);
		goto out;
	}
	rc = hj_build_profile(&a, o, drift, sink);
out:
	for (i = 0; i < a.nr; i++) {
		free(a.r[i].text);
		free(a.r[i].action);
		free(a.r[i].source);
	}
	free(a.r);
	free(a.di);
	free(a.gi);
	free(a.hist);
	free(a.c);
	free(a.drift);
	free(a.slow_pairs);
	free(a.dev_first);
	free(a.dev_n);
	free(a.grp_inst);
	free(a.node_dev);
	free(a.dev_next);
	free(a.node_grp);
	free(a.grp_next);
	free(a.grp_of);
	free(a.dev_t);
	free(a.grp_t);
	free(a.dev_run);
	free(a.grp_run);
	free(a.m_node);
	free(a.curve);
	free(a.curve_why);
	free(a.loader);
	free(a.loader_lv);
	free(a.loader_why);
	json_decref(a.texts);
	free(a.text_v);
	return rc;
}

json_t *hr_analyze(const struct hr_fleet *f, const struct hr_analyze_opts *o)
{
	json_t *p = json_object();
	struct hr_profile_sink sink = { p, hj_collect_head, hj_collect_node, hj_collect_part };
	if (!p)
		return NULL;
	if (hr_analyze_stream(f, o, &sink)) {
		json_decref(p);
		return NULL;
	}
	return p;
}
