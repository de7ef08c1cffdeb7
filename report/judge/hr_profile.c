/*
 * hr_profile.c - the profile document: each node's checks, its headline,
 * its verdict and entry, the drain list and the summary, handed to the sink
 * node by node (hr_judge.h).
 */
#include "report/judge/hr_judge.h"
#include "report/judge/hr_checkpoint.h"
#include "report/judge/hr_inventory.h"
#include "report/judge/hr_powercap.h"
#include "report/read/hr_index.h"
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

/* Lower is worse: % of expectation, else % of the fleet median, else the value's rank. */
static double inst_score(const struct an *a, const struct inst *p)
{
	double fm = hj_fleet_median(a, p);
	if (!isnan(p->expected) && p->expected > 0)
		return p->value / p->expected;
	if (!isnan(fm) && fm > 0)
		return p->value / fm;
	return 1e9;
}

static void pick_worst(const struct an *a, const struct inst **w, const struct inst *p)
{
	/* a node's headline device figures are its GPUs' when it has GPUs */
	if (*w && p->metric >= 0) {
		int gw = !strcmp(a->f->devices[(*w)->subject].kind, "gpu");
		int gp = !strcmp(a->f->devices[p->subject].kind, "gpu");
		if (gw != gp) {
			if (gp)
				*w = p;
			return;
		}
	}
	if (!*w || p->level > (*w)->level ||
	    (p->level == (*w)->level && inst_score(a, p) < inst_score(a, *w)))
		*w = p;
}

void hj_node_checks(const struct an *a, int n, struct node_checks *c)
{
	size_t i;
	memset(c, 0, sizeof(*c));
	long d, e;
	(void)i;
	/* the node's devices in index order, and each one's instances: di[] filtered by node */
	for (d = a->node_dev[n]; d >= 0; d = a->dev_next[d]) {
		size_t j;
		for (j = a->dev_first[d]; j < a->dev_first[d] + a->dev_n[d]; j++) {
			const struct inst *p = &a->di[j];
			if (p->node != n || p->sup) /* an earlier run: history */
				continue;
			if (hj_inst_judged(a, p)) {
				c->judged++;
				c->perf_judged++;
			} else {
				c->not_judged++;
				c->perf_not_judged++;
				if (!p->noisy && !c->nj_why[0]) {
					char mk[48], w[600];
					snprintf(c->nj_why, sizeof(c->nj_why), "%s %s %s", a->f->devices[d].device,
						 hj_metric_label(p->metric, mk, sizeof(mk)), hj_inst_not_judged(a, p, w, sizeof(w)));
				}
			}
			if (p->noisy) {
				char mk[48];
				if (!c->noisy++)
					snprintf(c->noisy_why, sizeof(c->noisy_why), "%s %s: %s", a->f->devices[d].device,
						 hj_metric_label(p->metric, mk, sizeof(mk)), hj_text(a, p->noisy_why_id));
			}
			pick_worst(a, p->metric == 0 ? &c->mem : &c->comp, p);
		}
	}
	/* the node's groups in index order (gi[] is in group order, one instance per group) */
	for (e = a->node_grp[n]; e >= 0; e = a->grp_next[e]) {
		const struct inst *p;
		if (a->grp_inst[a->grp_of[e]] < 0)
			continue;
		p = &a->gi[a->grp_inst[a->grp_of[e]]];
		if (p->sup)
			continue; /* an earlier sweep: history */
		c->fab++;
		if (hj_inst_judged(a, p)) {
			c->judged++;
			c->perf_judged++;
			c->fab_judged++;
		} else {
			c->not_judged++;
			c->perf_not_judged++;
			if (!p->noisy && !c->nj_why[0]) {
				char w[600];
				snprintf(c->nj_why, sizeof(c->nj_why), "%s busbw %s", a->f->groups[p->subject].name,
					 hj_inst_not_judged(a, p, w, sizeof(w)));
			}
		}
		if (p->noisy && !c->noisy++)
			snprintf(c->noisy_why, sizeof(c->noisy_why), "%s busbw: %s", a->f->groups[p->subject].name,
				 hj_text(a, p->noisy_why_id));
		pick_worst(a, p->fabric == 1 ? &c->intra : &c->inter, p);
	}
	/* the curve shape of each of the node's latest sweeps the rules could look at */
	for (e = a->node_grp[n]; e >= 0; e = a->grp_next[e]) {
		const struct inst *p = hj_group_inst(a, (size_t)a->grp_of[e]);
		if (p && p->sup)
			continue;
		if (a->curve[a->grp_of[e]] == 1) {
			c->judged++;
			c->perf_judged++;
		} else if (a->curve[a->grp_of[e]] == 2) {
			c->not_judged++;
			c->perf_not_judged++;
			if (!c->noisy++)
				snprintf(c->noisy_why, sizeof(c->noisy_why), "%s curve shape: %s",
					 a->f->groups[a->grp_of[e]].name, a->curve_why[a->grp_of[e]]);
		}
	}
	if (a->loader[n] == 1) {
		c->judged++; /* on its figures */
		c->perf_judged++;
	} else if (a->loader[n] == 2) {
		c->not_judged++;
		c->perf_not_judged++;
		if (!c->noisy++)
			snprintf(c->noisy_why, sizeof(c->noisy_why), "loader: %s", a->loader_why[n]);
	}
	{
		char why[300] = "";
		int before = c->noisy;
		int sj = 0, snj = 0;
		hr_ckpt_node_checks(a->f, n, &c->judged, &c->not_judged, &c->noisy, &sj, &snj, why, sizeof(why));
		c->perf_judged += sj;
		c->perf_not_judged += snj;
		if (snj && !c->nj_why[0] && before == c->noisy)
			snprintf(c->nj_why, sizeof(c->nj_why), "checkpoint speed not judged (no peers on its mount)");
		if (!before && c->noisy)
			snprintf(c->noisy_why, sizeof(c->noisy_why), "%s", why);
	}
}

/* One headline figure of a node: value, what it was judged against. */
static json_t *headline_json(const struct an *a, const struct inst *p)
{
	json_t *o;
	char buf[700], mk[48];
	const char *subject;
	if (!p)
		return json_null();
	o = json_object();
	if (p->metric >= 0)
		subject = a->f->devices[p->subject].device;
	else
		subject = a->f->groups[p->subject].name;
	json_object_set_new(o, "subject", json_string(subject));
	if (p->metric >= 0)
		json_object_set_new(o, "metric", json_string(hj_metric_key(p->metric, mk, sizeof(mk))));
	json_object_set_new(o, "value", hj_jnum(p->value));
	json_object_set_new(o, "unit", json_string(p->metric > 0 ? "GFLOP/s" : "GB/s"));
	json_object_set_new(o, "expected", hj_jnum(p->expected));
	json_object_set_new(o, "fleet_median", hj_jnum(hj_fleet_median(a, p)));
	json_object_set_new(o, "judged", json_boolean(hj_inst_judged(a, p)));
	json_object_set_new(o, "judged_against", json_string(hj_inst_against(a, p, buf, sizeof(buf))));
	json_object_set_new(o, "level", json_string(hr_level_name(p->level)));
	return o;
}

/* Hard faults make a node a drain candidate whatever else: wrong results,
 * a failed validation, NVLink down, uncorrectable ECC (and the row remaps
 * it leaves), a degraded PCIe link, an RDMA port down, a checkpoint that
 * does not read back. */
static void mark_hard_faults(struct an *a)
{
	static const char *const hard[] = { "wrong_results", "validation_failed", "nvlink_down", "ecc_uncorrected",
					    "row_remap", "pcie_link", "nic_port_down", "checkpoint_read_back",
					    "xid_fault", "sxid", "pcie_aer", "link_flap", NULL };
	size_t i;
	int k;
	for (i = 0; i < a->nr; i++)
		for (k = 0; hard[k]; k++)
			if (a->r[i].level == HR_FAIL && !strcmp(a->r[i].code, hard[k]))
				a->r[i].drain = 1;
}

/* What building the profile keeps across its nodes: each node's reasons
 * in order, its result files, and the order of the nodes. */
struct prof {
	long *rfirst, *rnext;        /* per node its reasons: a list through rnext */
	long *run_first, *run_next;  /* per node its result files (bounded detail only) */
	struct node_order *ord;      /* the nodes, worst first */
};

static int node_drains(const struct an *a, const struct prof *q, int n);
static void node_not_judged_why(const struct an *a, const struct prof *q, int n, const struct node_checks *nc,
				char *buf, size_t size);

static void prof_release(struct prof *q)
{
	free(q->rfirst);
	free(q->rnext);
	free(q->run_first);
	free(q->run_next);
	free(q->ord);
}

static int prof_init(struct an *a, const struct hr_analyze_opts *o, struct prof *q)
{
	const struct hr_fleet *f = a->f;
	size_t i, j;
	long e;

	memset(q, 0, sizeof(*q));
	mark_hard_faults(a);
	if (a->nr)
		qsort(a->r, a->nr, sizeof(*a->r), hj_cmp_reason);
	q->ord = calloc(f->nnodes ? f->nnodes : 1, sizeof(*q->ord));
	q->rfirst = malloc((f->nnodes ? f->nnodes : 1) * sizeof(*q->rfirst));
	q->rnext = malloc((a->nr ? a->nr : 1) * sizeof(*q->rnext));
	if (!q->ord || !q->rfirst || !q->rnext || (!o->detail_all && hj_runs_by_node(f, &q->run_first, &q->run_next)))
		return -1;
	for (i = 0; i < f->nnodes; i++)
		q->rfirst[i] = -1;
	for (j = a->nr; j-- > 0;) {
		int n = a->r[j].node;
		q->rnext[j] = -1;
		if (n < 0 || (size_t)n >= f->nnodes)
			continue;
		q->rnext[j] = q->rfirst[n];
		q->rfirst[n] = (long)j;
	}
	for (i = 0; i < f->nnodes; i++) {
		q->ord[i].node = (int)i;
		q->ord[i].name = f->nodes[i].name;
		for (e = q->rfirst[i]; e >= 0; e = q->rnext[e])
			if (a->r[e].level > q->ord[i].level)
				q->ord[i].level = a->r[e].level;
	}
	qsort(q->ord, f->nnodes, sizeof(*q->ord), hj_cmp_node);
	return 0;
}

/* The profile's entry of the node at @i of q->ord (its verdict @verdict,
 * its checks @nc): in full (@full), else bounded (node_full()). */
static json_t *node_json(struct an *a, const struct prof *q, size_t i, const char *verdict,
			 const struct node_checks *nc, int full)
{
	const struct hr_fleet *f = a->f;
	int n = q->ord[i].node;
	const struct hr_node *nd = &f->nodes[n];
	const struct hr_loader *l = hj_node_loader(f, n);
	json_t *x = json_object(), *rs = json_array(), *cfg = json_object(), *devs = json_array();
	json_t *bw = json_array(), *st = json_array(), *hl = json_object();
	long e, sj;
	int k;

	json_object_set_new(x, "drain_candidate", json_boolean(node_drains(a, q, n)));
	json_object_set_new(x, "name", json_string(nd->name));
	json_object_set_new(x, "verdict", json_string(verdict));
	if (!strcmp(verdict, "NOT JUDGED")) {
		char why[2048];
		node_not_judged_why(a, q, n, nc, why, sizeof(why));
		json_object_set_new(x, "not_judged_reason", json_string(why));
	} else {
		json_object_set_new(x, "not_judged_reason", json_null());
	}
	json_object_set_new(x, "checks_judged", json_integer(nc->judged));
	json_object_set_new(x, "performance_checks_judged", json_integer(nc->perf_judged));
	json_object_set_new(x, "checks_not_judged", json_integer(nc->not_judged));
	json_object_set_new(x, "checks_noisy", json_integer(nc->noisy));
	json_object_set_new(x, "fabric_checks", json_integer(nc->fab));
	json_object_set_new(x, "fabric_checks_judged", json_integer(nc->fab_judged));
	json_object_set_new(hl, "memory", headline_json(a, nc->mem));
	json_object_set_new(hl, "compute", headline_json(a, nc->comp));
	json_object_set_new(hl, "intra_node_busbw", headline_json(a, nc->intra));
	json_object_set_new(hl, "inter_node_busbw", headline_json(a, nc->inter));
	/* the loader as judged here (on its figures), not its own label */
	json_object_set_new(hl, "loader", !l ? json_null() : a->loader[n] == 2 ? json_string(strncmp(a->loader_why[n], "host busy", 9) ? "not judged (within its spread)" : "not judged (host busy)") :
			    a->loader[n] == 1 && !l->mask_collapsed ? json_string(a->loader_lv[n] == HR_FAIL ? "fail" :
							     a->loader_lv[n] == HR_WARN ? "warn" : "pass")
					   : l->verdict ? json_string(l->verdict) : json_null());
	json_object_set_new(x, "headline", hl);
	json_object_set_new(x, "like_for_like", json_boolean(!a->drift[n]));
	for (e = q->rfirst[n]; e >= 0; e = q->rnext[e])
		json_array_append_new(rs, hj_reason_json(&a->r[e]));
	json_object_set_new(x, "reasons", rs);
	for (k = 0; k < HR_CFG_NKEYS; k++)
		json_object_set_new(cfg, hr_cfg_key_name(k), hj_jstr_or_null(nd->cfg[k]));
	json_object_set_new(cfg, "cpu_model", hj_jstr_or_null(nd->cpu_model));
	json_object_set_new(cfg, "gpus", json_integer(nd->ngpus));
	json_object_set_new(x, "config", cfg);
	for (e = a->node_dev[n]; e >= 0; e = a->dev_next[e])
		json_array_append_new(devs, full ? hj_device_json(a, (size_t)e) : hj_device_bounded_json(a, (size_t)e));
	json_object_set_new(x, "devices", devs);
	for (e = a->node_grp[n]; e >= 0; e = a->grp_next[e]) {
		const struct hr_group *g = &f->groups[a->grp_of[e]];
		const struct inst *p = hj_group_inst(a, (size_t)a->grp_of[e]);
		json_t *b = json_object();
		char jb[700];
		json_object_set_new(b, "group", json_string(g->name));
		json_object_set_new(b, "kind", json_string(hr_group_kind_name(g->kind)));
		json_object_set_new(b, "algo", json_string(g->algo));
		json_object_set_new(b, "collective", json_string(g->collective));
		json_object_set_new(b, "nranks", json_integer(g->nranks));
		json_object_set_new(b, "large_msg_busbw_gbps", hj_jnum(g->large_busbw_gbps));
		json_object_set_new(b, "pct_of_fleet_median", hj_jnum(p ? hj_pct_fleet(a, p) : NAN));
		json_object_set_new(b, "z", hj_jnum(p ? hj_z(a, p) : NAN));
		json_object_set_new(b, "level", json_string(hr_level_name(p ? p->level : HR_INFO)));
		json_object_set_new(b, "judged", json_boolean(p && hj_inst_judged(a, p)));
		json_object_set_new(b, "judged_against", p ? json_string(hj_inst_against(a, p, jb, sizeof(jb))) :
				    json_string("not judged: no large-message busbw (no rows, or a scaling sub-group)"));
		json_array_append_new(bw, b);
	}
	json_object_set_new(x, "busbw", bw);
	for (sj = hr_index_node_straggler(f, n, -1); sj >= 0; sj = hr_index_node_straggler(f, n, sj)) {
		json_t *s = json_object();
		json_object_set_new(s, "rank", json_integer(f->stragglers[sj].rank));
		json_object_set_new(s, "slowest_fraction", hj_jnum(f->stragglers[sj].slowest_fraction));
		json_object_set_new(s, "excess_pct", hj_jnum(f->stragglers[sj].excess_pct));
		json_object_set_new(s, "source", json_string(f->stragglers[sj].source));
		json_array_append_new(st, s);
	}
	json_object_set_new(x, "stragglers", st);
	json_object_set_new(x, "loader", !l ? json_null() : full ? hj_loader_json(l) : hj_loader_bounded_json(l));
	json_object_set_new(x, "checkpoint", hr_ckpt_node_json(f, n));
	json_object_set_new(x, "inventory", hr_inventory_profile(f, n));
	if (!full) {
		json_object_set_new(x, "detail", json_string("bounded"));
		json_object_set_new(x, "inputs", hj_node_inputs_json(f, q->run_first, q->run_next, n));
	}
	return x;
}

/* Whether node @n is a drain candidate: a FAIL reason that drains (a hard
 * fault or a confirmed FAIL: mark_hard_faults(), confirm_fails()). */
static int node_drains(const struct an *a, const struct prof *q, int n)
{
	long e;
	int dr = 0;
	for (e = q->rfirst[n]; e >= 0; e = q->rnext[e])
		dr |= a->r[e].drain && a->r[e].level == HR_FAIL;
	return dr;
}

/* Whether the node at @i of q->ord (its checks @nc) is written in full: a
 * PASS node's detail is bounded unless --detail all. */
static int node_full(const struct hr_analyze_opts *o, const struct prof *q, size_t i, const struct node_checks *nc)
{
	return o->detail_all || q->ord[i].level > HR_INFO || nc->perf_judged == 0;
}

/* The verdict of the node at @i of q->ord, and its checks: NOT JUDGED
 * when no reason WARNs or FAILs and none of its performance checks was
 * judged (a checkpoint read-back alone does not make a PASS). */
static const char *node_verdict(struct an *a, const struct prof *q, size_t i, struct node_checks *nc)
{
	hj_node_checks(a, q->ord[i].node, nc);
	if (q->ord[i].level == HR_INFO && nc->perf_judged == 0)
		return "NOT JUDGED";
	return hr_verdict_name(q->ord[i].level);
}

/* Why node @n (NOT JUDGED, its checks @nc) could not be judged, into @buf
 * of @size bytes: its tools that were unavailable (their own reasons), its
 * noisy checks, its checks without a reference; or that no performance
 * result of it was read. */
static void node_not_judged_why(const struct an *a, const struct prof *q, int n, const struct node_checks *nc,
				char *buf, size_t size)
{
	size_t l;
	long e;
	int parts = 0, others = nc->perf_not_judged - nc->noisy;
	snprintf(buf, size, "no performance check could be judged: ");
	for (e = q->rfirst[n]; e >= 0; e = q->rnext[e]) {
		long e2;
		if (strcmp(a->r[e].code, "unavailable"))
			continue;
		for (e2 = q->rfirst[n]; e2 != e; e2 = q->rnext[e2]) /* the same reason of another file: once */
			if (!strcmp(a->r[e2].code, "unavailable") && !strcmp(a->r[e2].text, a->r[e].text))
				break;
		if (e2 != e)
			continue;
		l = strlen(buf);
		snprintf(buf + l, size - l, "%s%s", parts++ ? "; " : "", a->r[e].text);
	}
	if (nc->noisy) {
		l = strlen(buf);
		snprintf(buf + l, size - l, "%s%d noisy (%s%s; re-run on an idle node)", parts++ ? "; " : "", nc->noisy,
			 nc->noisy_why, nc->noisy > 1 ? "; and more" : "");
	}
	if (others > 0) {
		l = strlen(buf);
		snprintf(buf + l, size - l, "%s%d without a reference to judge against (%s%s)", parts++ ? "; " : "",
			 others, nc->nj_why, others > 1 ? "; and more" : "");
	}
	if (!parts) {
		l = strlen(buf);
		snprintf(buf + l, size - l, "no result of roofline, allreduce_bw, nccl-tests, loader_contention or a checkpoint_io speed among the inputs%s",
			 nc->judged ? " (only correctness checks were judged: the checkpoint read-back)" : "");
	}
}

/* What the inputs held of each device's and group's own history: 1 when
 * every one was measured once (one night: judged against the fleet only),
 * else 2 or more (earlier runs in the inputs). */
static int input_nights(const struct an *a)
{
	size_t i;
	for (i = 0; i < a->ndi + a->ngi; i++)
		if ((i < a->ndi ? a->di[i] : a->gi[i - a->ndi]).sup)
			return 2;
	return 1;
}

/* The roofline points of the nodes whose entries leave them out (bounded,
 * and no full entry is made for the renderers: more than o->full_pass_max
 * PASS nodes), freed before the nodes' entries are made: the judge's
 * values and the points were the peak of memory together (65 MB at
 * 100,000 GPUs). @pass: the PASS nodes. */
static void drop_unwritten_points(const struct an *a, const struct hr_analyze_opts *o, const struct prof *q,
				  size_t pass)
{
	size_t i;
	long e;
	if (o->drop_points != a->f || o->detail_all || pass <= o->full_pass_max)
		return;
	for (i = 0; i < a->f->nnodes; i++) {
		struct node_checks nc;
		hj_node_checks(a, q->ord[i].node, &nc);
		if (node_full(o, q, i, &nc))
			continue;
		for (e = a->node_dev[q->ord[i].node]; e >= 0; e = a->dev_next[e])
			hr_fleet_drop_device_points(o->drop_points, (size_t)e);
	}
}

/* The profile, handed to @sink in three parts, one node at a time: no
 * more than one node's entry is held at once. Returns 0, CH_ERR_RUNTIME
 * out of memory, or the sink's error. */
int hj_build_profile(struct an *a, const struct hr_analyze_opts *o, json_t *drift,
		     const struct hr_profile_sink *sink)
{
	const struct hr_fleet *f = a->f;
	json_t *p = json_object(), *findings = json_array(), *groups, *t, *dist, *caps;
	json_t *summary = json_object(), *drain = json_array();
	struct prof q;
	char now[32];
	size_t i, j;
	int counts[3] = { 0, 0, 0 }, worst = HR_INFO, not_judged_nodes = 0, rc = 0;
	long checks_judged = 0, checks_not_judged = 0, checks_noisy = 0;

	if (!p || !findings || !summary || !drain || prof_init(a, o, &q)) {
		rc = CH_ERR_RUNTIME;
		goto out;
	}
	/* the summary first: every node's verdict and the fleet findings */
	for (i = 0; i < f->nnodes; i++) {
		struct node_checks nc;
		const char *v = node_verdict(a, &q, i, &nc);
		checks_judged += nc.judged;
		checks_not_judged += nc.not_judged;
		checks_noisy += nc.noisy;
		if (!strcmp(v, "NOT JUDGED"))
			not_judged_nodes++;
		else
			counts[q.ord[i].level]++;
		if (q.ord[i].level > worst)
			worst = q.ord[i].level;
		if (node_drains(a, &q, q.ord[i].node))
			json_array_append_new(drain, json_string(f->nodes[q.ord[i].node].name));
	}
	for (j = 0; j < a->nr; j++)
		if (a->r[j].node < 0) {
			json_array_append_new(findings, hj_reason_json(&a->r[j]));
			if (a->r[j].level > worst)
				worst = a->r[j].level;
		}
	/* the points no entry writes freed before the profile's head is
	 * built (its inputs list: thousands of entries) */
	drop_unwritten_points(a, o, &q, (size_t)counts[HR_INFO]);

	json_object_set_new(p, "schema", json_string(HR_PROFILE_SCHEMA));
	json_object_set_new(p, "schema_version", json_integer(HR_PROFILE_SCHEMA_VERSION));
	json_object_set_new(p, "tool", json_string("health_report"));
	json_object_set_new(p, "version", json_string(CH_VERSION));
	json_object_set_new(p, "git_rev", json_string(ch_git_rev()));
	json_object_set_new(p, "generated_utc",
			    json_string(o->generated_utc ? o->generated_utc : ch_utc_now(now, sizeof(now))));
	if (!o->detail_all)
		json_object_set_new(p, "detail", json_string("flagged"));
	json_object_set_new(summary, "nodes", json_integer((json_int_t)f->nnodes));
	json_object_set_new(summary, "pass", json_integer(counts[HR_INFO]));
	json_object_set_new(summary, "warn", json_integer(counts[HR_WARN]));
	json_object_set_new(summary, "fail", json_integer(counts[HR_FAIL]));
	json_object_set_new(summary, "not_judged", json_integer(not_judged_nodes));
	json_object_set_new(summary, "checks_judged", json_integer(checks_judged));
	json_object_set_new(summary, "checks_not_judged", json_integer(checks_not_judged));
	json_object_set_new(summary, "checks_noisy", json_integer(checks_noisy));
	json_object_set_new(summary, "findings", json_integer((json_int_t)json_array_size(findings)));
	/* no node judged (none at all, too) is not a PASS */
	json_object_set_new(summary, "verdict", json_string(worst == HR_INFO && !counts[HR_INFO] ?
							   "NOT JUDGED" : hr_verdict_name(worst)));
	json_object_set_new(summary, "drain_candidates", drain);
	drain = NULL;
	json_object_set_new(summary, "devices", json_integer((json_int_t)f->ndevices));
	json_object_set_new(summary, "groups", json_integer((json_int_t)f->ngroups));
	json_object_set_new(summary, "history", input_nights(a) > 1 ? json_null() : json_string(HR_ONE_NIGHT_NOTE));
	json_object_set_new(p, "exit_code", json_integer(worst == HR_FAIL ? CH_EXIT_CHECK : CH_EXIT_OK));
	json_object_set_new(p, "summary", summary);
	summary = NULL;
	json_object_set_new(p, "run_cost", hr_cost_profile(f, o->cost));
	json_object_set_new(p, "inputs", hj_inputs_json(f, o->input_files));
	json_object_set_new(p, "expectations", hr_expect_profile(o->expect));
	json_object_set_new(p, "drift", drift);
	drift = NULL;
	if ((rc = sink->head(sink->ctx, p)))
		goto out;
	json_object_clear(p);

	for (i = 0; i < f->nnodes && !rc; i++) {
		struct node_checks nc;
		const char *v = node_verdict(a, &q, i, &nc);
		int full = node_full(o, &q, i, &nc);
		json_t *x = node_json(a, &q, i, v, &nc, full);
		/* a bounded node's full entry too, for the renderers, in a
		 * fleet of few PASS nodes (o->full_pass_max) */
		json_t *y = !full && (size_t)counts[HR_INFO] <= o->full_pass_max ? node_json(a, &q, i, v, &nc, 1) : NULL;
		if (!x || (!full && (size_t)counts[HR_INFO] <= o->full_pass_max && !y))
			rc = CH_ERR_RUNTIME;
		else
			rc = sink->node(sink->ctx, x, y);
		json_decref(x);
		json_decref(y);
	}
	if (rc)
		goto out;
	/* the nodes' entries were the last to read the points (the largest
	 * part of the fleet model after the instances) */
	if (o->drop_points == f)
		hr_fleet_drop_points(o->drop_points);

	/* the distributions first: they are the last use of the device
	 * instances, the largest array the judge holds (a few hundred bytes an
	 * instance, tens a node), freed before the groups' entries are made
	 * (the profile's members keep their order) */
	dist = hj_distributions_json(a, !o->detail_all);
	free(a->di);
	a->di = NULL;
	a->ndi = a->capdi = 0;
	/* the power caps are the last to read the devices' records: those
	 * freed too before the groups' entries (37 MB at 100,000 GPUs) */
	caps = hr_powercap_profile(f);
	if (o->drop_points == f)
		hr_fleet_drop_devices(o->drop_points);
	groups = json_array();
	for (i = 0; i < f->ngroups; i++)
		json_array_append_new(groups, hj_group_json(a, i));
	json_object_set_new(p, "groups", groups);
	json_object_set_new(p, "findings", findings);
	findings = NULL;
	json_object_set_new(p, "distributions", dist);
	json_object_set_new(p, "power_caps", caps);
	t = p;
	rc = sink->tail(sink->ctx, t);
out:
	prof_release(&q);
	json_decref(p);
	json_decref(findings);
	json_decref(summary);
	json_decref(drain);
	json_decref(drift);
	return rc;
}

/* hr_analyze()'s sink: the parts put together into one object. */
int hj_collect_part(void *ctx, const json_t *part)
{
	json_t *p = ctx;
	return json_object_update(p, (json_t *)part) ? CH_ERR_RUNTIME : 0;
}

int hj_collect_node(void *ctx, const json_t *node, const json_t *full)
{
	(void)full;
	json_t *p = ctx, *nodes = json_object_get(p, "nodes");
	if (!nodes) {
		nodes = json_array();
		if (json_object_set_new(p, "nodes", nodes))
			return CH_ERR_RUNTIME;
	}
	return json_array_append(nodes, (json_t *)node) ? CH_ERR_RUNTIME : 0;
}

int hj_collect_head(void *ctx, const json_t *head)
{
	json_t *p = ctx;
	/* nodes after drift, as the stream has it */
	return hj_collect_part(ctx, head) || json_object_set_new(p, "nodes", json_array()) ? CH_ERR_RUNTIME : 0;
}
