/*
 * hr_rule_fabric.c - the fabric family: busbw of the all-reduce groups
 * (intra-node, inter-node, node pairs), wrong results, nccl-tests failures,
 * stragglers, and what no fabric rule could judge.
 */
#include "report/judge/hr_judge.h"
#include "report/judge/hr_rules.h"
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

static int backend_class_gpu(const char *backend)
{
	return backend && (!strcmp(backend, "nccl") || !strcmp(backend, "nccl-tests"));
}

/* Ranks per node of a multi-node group (rounded up: a log may list part of
 * the last node). */
static int ranks_per_node(const struct hr_group *g)
{
	return g->nnodes > 0 ? (g->nranks + g->nnodes - 1) / g->nnodes : 0;
}

/*
 * Expected large-message busbw of a multi-node all-reduce: from the NICs the
 * nodes recorded (active NICs x line rate, the share the group's ranks use
 * of the node's GPUs, x the NIC efficiency (nic_efficiency, hr_rules.c); the slowest node bounds it), else
 * from the GPU model's typical cluster (assumed), else not judged. Writes
 * the basis (@basis) or why there is none (@why).
 */
/* The RDMA network of a node from its inventory (docs/results-schema.md,
 * host.inventory.nics: records of kind "rdma", state ACTIVE, rate_gbps):
 * @active and @down ports, the active ports' total rate (Gb/s, returned;
 * NAN when the node has no inventory or it lists no RDMA port), @gpus the
 * GPUs it lists. */
static double node_rdma_gbps(const struct hr_node *nd, int *active, int *down, int *gpus)
{
	const json_t *nics = json_object_get(nd->inventory, "nics"), *v;
	double total = 0;
	size_t i;
	*active = *down = 0;
	*gpus = (int)json_array_size(json_object_get(nd->inventory, "gpus"));
	if (!nd->inventory || !json_is_array(nics))
		return NAN;
	json_array_foreach(nics, i, v) {
		const char *kind = hr_jstr(v, "kind"), *st = hr_jstr(v, "state");
		double rate = hr_jnum(v, "rate_gbps");
		if (kind && strcmp(kind, "rdma"))
			continue; /* plain network interfaces: not what NCCL's IB transport uses */
		if (st && !strcmp(st, "ACTIVE") && rate > 0) {
			(*active)++;
			total += rate;
		} else {
			(*down)++;
		}
	}
	return *active ? total : NAN;
}

/*
 * Expected large-message busbw of a multi-node all-reduce: from the NICs the
 * nodes recorded (active RDMA ports x line rate, the share the group's ranks
 * use of the node's GPUs, x the NIC efficiency (nic_efficiency, hr_rules.c); the slowest node bounds it),
 * else from the GPU model's typical cluster (assumed), else not judged.
 * Writes the basis (@basis) or why there is none (@why).
 */
static double inter_expected(const struct an *a, const struct hr_group *g,
			     const struct hr_sku_expect *x, char *basis, size_t nb,
			     char *why, size_t nw)
{
	const struct hr_fleet *f = a->f;
	int r = ranks_per_node(g), k, all_nics = 1, slow = -1, s_act = 0, s_down = 0, s_gpus = 0;
	double best = NAN, s_total = 0;
	char num[32];
	if (x && !isnan(x->inter_busbw_gbps)) {
		snprintf(basis, nb, "given: %s", x->source);
		return x->inter_busbw_gbps;
	}
	for (k = 0; k < g->nnodes; k++) {
		const struct hr_node *nd = &f->nodes[g->nodes[k]];
		int act, down, gpus;
		double tot = node_rdma_gbps(nd, &act, &down, &gpus), share, v;
		if (isnan(tot)) {
			all_nics = 0;
			break;
		}
		if (!gpus)
			gpus = nd->ngpus;
		share = gpus >= r && gpus > 0 ? (double)r / gpus : 1.0;
		v = tot * share / 8 * hr_rule_param("inter_node_busbw_low", "nic_efficiency");
		if (isnan(best) || v < best) {
			best = v;
			slow = g->nodes[k];
			s_act = act;
			s_down = down;
			s_gpus = gpus;
			s_total = tot;
		}
	}
	if (all_nics && slow >= 0) {
		snprintf(basis, nb, "from the NICs recorded in the result files: %s has %d active RDMA port%s, %s Gb/s in all%s%s%s, %d rank%s of its %d GPUs, x %.2f (46 GB/s busbw per 400 Gb/s NDR NIC)%s",
			 f->nodes[slow].name, s_act, s_act == 1 ? "" : "s",
			 hr_fmt_num(s_total, num, sizeof(num)),
			 s_down ? " (" : "", s_down ? (s_down == 1 ? "1 more not active" : "more not active") : "",
			 s_down ? ")" : "", r, r == 1 ? "" : "s", s_gpus > 0 ? s_gpus : r, hr_rule_param("inter_node_busbw_low", "nic_efficiency"),
			 g->nnodes > 1 ? " (the slowest node of the group)" : "");
		return best;
	}
	if (x && !isnan(x->cluster_nic_gbps_per_gpu)) {
		snprintf(basis, nb, "assumed reference (no NIC inventory in the inputs): %d ranks per node x %s Gb/s / 8 x %.2f; %s",
			 r, hr_fmt_num(x->cluster_nic_gbps_per_gpu, num, sizeof(num)), hr_rule_param("inter_node_busbw_low", "nic_efficiency"),
			 x->cluster_source);
		return r * x->cluster_nic_gbps_per_gpu / 8 * hr_rule_param("inter_node_busbw_low", "nic_efficiency");
	}
	snprintf(why, nw, "no NIC inventory in the result files and no cluster reference for %s",
		 g->gpu_name ? g->gpu_name : "an unknown GPU model");
	return NAN;
}

/* A group with a later sweep in the inputs (same nodes and class, a later
 * start): its instance is history (superseded_by that file). Needs
 * a->grp_inst. */
static void mark_superseded_groups(struct an *a)
{
	const struct hr_fleet *f = a->f;
	size_t i;
	for (i = 0; i < a->ngi; i++) {
		struct inst *p = &a->gi[i];
		const struct hr_group *g = &f->groups[p->subject];
		time_t best = a->grp_t[p->subject];
		const char *best_src = g->source;
		long e;
		if (!best || g->nnodes < 1 || g->nodes[0] < 0 || (size_t)g->nodes[0] >= f->nnodes)
			continue;
		/* the groups with the same nodes all hold g's first node */
		for (e = a->node_grp[g->nodes[0]]; e >= 0; e = a->grp_next[e]) {
			long j = a->grp_inst[a->grp_of[e]];
			const struct hr_group *h = &f->groups[a->grp_of[e]];
			if (j < 0 || (size_t)j == i || a->gi[j].cls != p->cls ||
			    !hj_later_run(a->grp_t[a->grp_of[e]], h->source, best, best_src) || !hj_same_nodes(g, h))
				continue;
			best = a->grp_t[a->grp_of[e]];
			best_src = h->source;
			p->sup = (int)a->grp_of[e] + 1;
		}
	}
}

void hj_group_instances(struct an *a)
{
	const struct hr_fleet *f = a->f;
	size_t i;
	for (i = 0; i < f->ngroups; i++) {
		const struct hr_group *g = &f->groups[i];
		const struct ch_datasheet *ds = g->gpu_name ? ch_datasheet_lookup(g->gpu_name) : NULL;
		const struct hr_sku_expect *x = hr_expect_for(a->e, ds ? ds->sku : NULL, g->gpu_name);
		int gpu = backend_class_gpu(g->backend), intra = g->nnodes == 1;
		int ar = !strcmp(g->collective, "all_reduce");
		struct inst *p;
		char key[256], label[200], sz[32];
		int k;
		if (g->kind == HR_G_SCALING || isnan(g->large_busbw_gbps) || !g->nrows || g->nnodes < 1)
			continue;
		snprintf(key, sizeof(key), "group|%s|%d|%s|%s|%d|%s|%.0f|%d|%s", intra ? "intra" : "inter",
			 intra ? 1 : g->nnodes, g->collective, g->algo, g->nranks, gpu ? "gpu" : "host",
			 g->large_bytes, g->busbw_is_algbw, ds ? ds->sku : g->gpu_name ? g->gpu_name : "-");
		if (intra)
			snprintf(label, sizeof(label), "intra-node busbw, %s %s, %d ranks, %s, at %s",
				 g->collective, g->algo, g->nranks, gpu ? (ds ? ds->sku : "GPU") : "host memory",
				 hr_fmt_bytes(g->large_bytes, sz, sizeof(sz)));
		else
			snprintf(label, sizeof(label), "inter-node busbw, %d nodes, %s %s, %d ranks, %s, at %s",
				 g->nnodes, g->collective, g->algo, g->nranks,
				 gpu ? (ds ? ds->sku : "GPU") : "host memory",
				 hr_fmt_bytes(g->large_bytes, sz, sizeof(sz)));
		p = hj_new_inst(a, &a->gi, &a->ngi, &a->capgi);
		if (!p)
			return;
		p->cls = hj_class_of(a, key, label, "GB/s");
		p->node = intra ? g->nodes[0] : -1;
		p->subject = (int)i;
		p->metric = -1;
		p->fabric = intra ? 1 : 2;
		p->value = g->large_busbw_gbps;
		for (k = 0; k < g->nnodes; k++)
			if (a->drift[g->nodes[k]])
				p->like = 0;
		if (!gpu)
			p->why_id = hj_keep(a, INST_WHY_MAX, "a host-memory (%s) sweep: no reference figure", g->backend);
		else if (!ar)
			p->why_id = hj_keep(a, INST_WHY_MAX, "the references are all-reduce figures; this run is %s", g->collective);
		else if (g->busbw_is_algbw)
			p->why_id = hj_keep(a, INST_WHY_MAX, "its busbw is printed as today's algbw (old format)");
		else if (intra) {
			if (x && !isnan(x->intra_busbw_gbps) &&
			    (x->intra_nranks == 0 || x->intra_nranks == g->nranks)) {
				int nvls = strstr(g->algo, "nvls") != NULL && !isnan(x->intra_nvls_busbw_gbps);
				p->expected = nvls ? x->intra_nvls_busbw_gbps : x->intra_busbw_gbps;
				p->basis_id = hj_keep(a, INST_BASIS_MAX, "%s reference for %d x %s%s: %s",
					 nvls ? "NVLS" : "without-NVLS", g->nranks, x->sku,
					 nvls ? "" : " (the run did not ask for NVLS)", x->intra_source);
				p->tag_id = hj_keep(a, INST_TAG_MAX, "%d x %s reference", g->nranks, x->sku);
			} else if (x && !isnan(x->intra_busbw_gbps))
				p->why_id = hj_keep(a, INST_WHY_MAX, "the %s intra-node reference is for %d GPUs, this run has %d ranks",
					 x->sku, x->intra_nranks, g->nranks);
			else
				p->why_id = hj_keep(a, INST_WHY_MAX, "no intra-node reference for %s (references: 8 x H100 SXM, 8 x H200 SXM, 8 x A100 SXM; PCIe-only servers depend on their PCIe topology)",
					 ds ? ds->sku : g->gpu_name ? g->gpu_name : "an unknown GPU model");
		} else {
			char basis[INST_BASIS_MAX] = "", why[INST_WHY_MAX] = "";
			p->expected = inter_expected(a, g, x, basis, sizeof(basis), why, sizeof(why));
			p->basis_id = hj_keep(a, INST_BASIS_MAX, "%s", basis);
			p->why_id = hj_keep(a, INST_WHY_MAX, "%s", why);
			p->tag_id = hj_keep(a, INST_TAG_MAX, "%s", !strncmp(hj_text(a, p->basis_id), "from the NICs", 13) ? "NICs recorded" :
				 !strncmp(hj_text(a, p->basis_id), "assumed", 7) ? "assumed cluster reference" : "given");
			p->assumed_cap = !strncmp(hj_text(a, p->basis_id), "assumed", 7);
		}
		if (!isnan(p->expected) && g->large_bytes < hr_rule_param("inter_node_busbw_low", "ref_min_bytes")) {
			p->why_id = hj_keep(a, INST_WHY_MAX, "its largest size, %s, is below 1 GiB: busbw has not reached the plateau the reference describes",
				 hr_fmt_bytes(g->large_bytes, sz, sizeof(sz)));
			p->expected = NAN;
			p->basis_id = p->tag_id = 0;
		}
		if (!isnan(p->expected))
			p->why_id = 0;
		if (intra && gpu && g->nranks >= 2 && hr_gpu_nvlink_all(ds) == 1 &&
		    p->value <= a->th->pcie_class_gbps)
			p->pcie_class = 1;
		{
			/* the headline figure's cell: out-of-place at the largest size;
			 * its re-measurement (allreduce_bw measures the largest size
			 * again, "confirm"), the busbw of its loop time as the first */
			double cv = NAN, again = NAN;
			size_t j;
			for (j = 0; j < g->nrows; j++)
				if (g->rows[j].bytes == g->large_bytes) {
					const struct hr_cell *cl = !isnan(g->rows[j].busbw_oop_gbps) ? &g->rows[j].oop : &g->rows[j].ip;
					cv = cl->cv;
					again = cl->confirm == HR_CONFIRM_AGREED ? cl->confirm_loop_busbw : NAN;
				}
			if (isfinite(again) && again > 0) {
				struct inst_hist *h = hj_hist_new(a, p);
				if (h)
					h->again_v = again;
			}
			hj_set_quality(a, p, a->grp_run[i], cv, hr_fmt_bytes(g->large_bytes, sz, sizeof(sz)));
		}
	}
	for (i = 0; !a->oom && i < a->ngi; i++)
		a->grp_inst[a->gi[i].subject] = (long)i;
	mark_superseded_groups(a);
}

/* The margins of a flagged group (inst_margins()). */
static void group_detail(const struct an *a, const struct inst *p, const char *like,
			 char *detail, size_t n)
{
	hj_inst_margins(a, p, "this model", like, detail, n);
}

/* A group's busbw that was low by a rule but whose re-measurement (allreduce_bw's
 * "confirm" of the largest size) the same rules do not flag: info
 * did_not_reproduce on each of its nodes, with both figures. */
static void group_not_reproduced(struct an *a)
{
	size_t i;
	int k;
	for (i = 0; i < a->ngi; i++) {
		const struct inst *p = &a->gi[i];
		const struct hr_group *g = &a->f->groups[p->subject];
		char v1[48], v2[48], ref[48], why[300] = "";
		size_t l = 0;
		if (!p->not_reproduced || p->sup)
			continue;
		if (!isnan(hj_pct_fleet(a, p)) && hj_pct_fleet(a, p) < 100 && hj_fleet_median(a, p) > 0)
			l += (size_t)snprintf(why, sizeof(why), "%.0f%% below the fleet median %s of %d like groups",
					      100 - hj_pct_fleet(a, p), hj_fmt_val(hj_fleet_median(a, p), 0, ref, sizeof(ref)), p->fleet_n);
		if (!isnan(p->expected) && p->expected > 0 && l < sizeof(why))
			snprintf(why + l, sizeof(why) - l, "%s%.0f%% of the expected %s (%s)", l ? ", " : "",
				 100 * p->value / p->expected, hj_fmt_val(p->expected, 0, ref, sizeof(ref)),
				 p->tag_id ? hj_text(a, p->tag_id) : "given");
		for (k = 0; k < g->nnodes; k++)
			hj_add_reason(a, g->nodes[k], HR_INFO, "did_not_reproduce", g->name, g->source,
				   "nothing to do; re-run allreduce_bw on the node if it recurs",
				   "%s busbw %s (%s %s, %d ranks, %s) was low (%s), but allreduce_bw's re-measurement of the largest size, %s, held to the same rules, is not: not judged low",
				   p->fabric == 1 ? "intra-node" : "inter-node", hj_fmt_val(p->value, 0, v1, sizeof(v1)),
				   g->collective, g->algo, g->nranks, g->name, why[0] ? why : "by the fleet or expectation rules",
				   hj_fmt_val(hj_again(a, p), 0, v2, sizeof(v2)));
	}
}

static void group_reasons(struct an *a)
{
	const struct hr_fleet *f = a->f;
	size_t i;
	int k, min_pairs = (int)hr_rule_param("inter_node_link", "min_pairs");
	char val[48];

	for (i = 0; i < f->ngroups; i++) {
		const struct hr_group *g = &f->groups[i];
		const struct inst *p = hj_group_inst(a, i);
		if (g->wrong_total > 0) {
			if (!g->nnodes)
				hj_add_reason(a, -1, HR_FAIL, "wrong_results", g->name, g->source,
					   "find the hosts of this run and drain them; run dcgmi diag and per-pair nccl-tests",
					   "%s (%s): %.0f wrong elements in %s results: data corruption",
					   g->name, g->backend, g->wrong_total, g->collective);
			for (k = 0; k < g->nnodes; k++)
				hj_add_reason(a, g->nodes[k], HR_FAIL, "wrong_results", g->name, g->source,
					   "drain; run dcgmi diag -r 3 and all-reduce tests per GPU and per node pair to find the faulty GPU or link",
					   "%.0f wrong elements in %s %s results of group %s (%d ranks, %d node%s): data corruption",
					   g->wrong_total, g->backend, g->collective, g->name, g->nranks,
					   g->nnodes, g->nnodes == 1 ? "" : "s");
		}
		if (g->failure && !strcmp(g->backend, "nccl-tests") && !(g->complete && g->wrong_total > 0)) {
			/* (a finished run with wrong elements is reported as such above) */
			if (!g->nnodes)
				hj_add_reason(a, -1, HR_WARN, "nccl_tests_failed", g->name, g->source,
					   "re-run with NCCL_DEBUG=INFO and read the first error",
					   "nccl-tests run %s %s: '%.160s'", g->name,
					   g->complete ? "reported failures" : "did not finish", g->failure);
			for (k = 0; k < g->nnodes; k++)
				hj_add_reason(a, g->nodes[k], HR_WARN, "nccl_tests_failed", g->name, g->source,
					   "re-run with NCCL_DEBUG=INFO and read the first error; if it names this node's GPUs, check them (nvidia-smi, compute mode)",
					   "nccl-tests run %s (%d ranks) %s: '%.160s'", g->name,
					   g->nranks, g->complete ? "reported failures" : "did not finish", g->failure);
		}
		if (!p || p->fabric != 1 || p->level < HR_WARN)
			continue;
		hj_fmt_val(p->value, 0, val, sizeof(val));
		for (k = 0; k < g->nnodes; k++) {
			const struct ch_datasheet *ds = g->gpu_name ? ch_datasheet_lookup(g->gpu_name) : NULL;
			struct reason *r;
			if (p->level_abs == HR_FAIL && hr_gpu_nvlink_all(ds) == 1 && p->value <= a->th->pcie_class_gbps)
				r = hj_add_reason(a, g->nodes[k], HR_FAIL, "nvlink_degraded", g->name, g->source,
					   "NVLink degraded: check nvidia-smi nvlink --status and nvidia-smi topo -m, then drain and reseat or replace the failing GPU or NVSwitch",
					   "intra-node busbw %s (%s, %d ranks) is PCIe-class (at most %.0f GB/s) on an NVLink node (%s)",
					   val, g->algo, g->nranks, a->th->pcie_class_gbps, ds->sku);
			else {
				char detail[1200];
				group_detail(a, p, "intra-node groups", detail, sizeof(detail));
				r = hj_add_reason(a, g->nodes[k], p->level, "intra_node_busbw_low", g->name, g->source,
					   "check the intra-node fabric: nvidia-smi nvlink --status, nvidia-smi topo -m, PCIe link width (lspci -vv); re-run allreduce_bw on the node",
					   "intra-node busbw %s (%s %s, %d ranks, %s %s): %s", val, g->collective,
					   g->algo, g->nranks, hr_group_kind_name(g->kind), g->name, detail);
			}
			if (r && p->level == HR_FAIL && p->confirmed_fail)
				r->drain = 1;
		}
	}

	group_not_reproduced(a);

	/* node pairs: slow pairs, and the node common to two or more of them */
	for (i = 0; i < a->ngi; i++) {
		const struct inst *p = &a->gi[i];
		const struct hr_group *g = &f->groups[p->subject];
		if (p->fabric != 2 || g->nnodes != 2 || p->level < HR_WARN)
			continue;
		for (k = 0; k < g->nnodes; k++)
			a->slow_pairs[g->nodes[k]]++;
	}
	for (i = 0; i < f->nnodes; i++) {
		struct hr_buf names = { 0 };
		struct reason *r;
		size_t j;
		int n = 0, solid = 0;
		if (a->slow_pairs[i] < min_pairs)
			continue;
		for (j = 0; j < a->ngi; j++) {
			const struct inst *p = &a->gi[j];
			const struct hr_group *g = &f->groups[p->subject];
			if (p->fabric != 2 || g->nnodes != 2 || p->level < HR_WARN)
				continue;
			for (k = 0; k < g->nnodes; k++)
				if (g->nodes[k] == (int)i) {
					hr_buf_printf(&names, "%s%s (%s)", n++ ? ", " : "", g->name,
						      hj_fmt_val(p->value, 0, val, sizeof(val)));
					/* slow against like pairs, or against a recorded or given reference */
					solid += p->level_rel >= HR_WARN || (p->level_abs >= HR_WARN && !p->assumed_cap);
				}
		}
		/* two pairs that share the node are two measurements that agree:
		 * confirmed, unless they rest on an assumed reference alone */
		r = hj_add_reason(a, (int)i, solid >= min_pairs ? HR_FAIL : HR_WARN, "inter_node_link", "inter-node", NULL,
			       solid >= min_pairs ? "inter-node link: " INTER_ACTION "; check its cables, then drain"
					  : "record the NIC inventory (result files with host.inventory) so that the pairs are judged against the NICs the nodes have; meanwhile: " INTER_ACTION,
			       "common to %d slow node pairs: %s%s", a->slow_pairs[i], names.s ? names.s : "",
			       solid >= min_pairs ? "; confirmed by two pairs that share the node"
					  : "; judged against an assumed reference only (no NIC inventory, no like pairs): at most WARN");
		if (r && solid >= min_pairs)
			r->drain = 1;
		hr_buf_release(&names);
	}
	for (i = 0; i < a->ngi; i++) {
		const struct inst *p = &a->gi[i];
		const struct hr_group *g = &f->groups[p->subject];
		int suspect = 0;
		char detail[1200];
		if (p->fabric != 2 || p->level < HR_WARN)
			continue;
		for (k = 0; g->nnodes == 2 && k < g->nnodes; k++)
			if (a->slow_pairs[g->nodes[k]] >= min_pairs)
				suspect = 1;
		if (suspect)
			continue; /* explained by the suspect node */
		group_detail(a, p, g->nnodes == 2 ? "pairs" : "groups of this size", detail, sizeof(detail));
		hj_fmt_val(p->value, 0, val, sizeof(val));
		for (k = 0; k < g->nnodes; k++) {
			if (p->level_abs >= HR_WARN) {
				struct reason *r = hj_add_reason(a, g->nodes[k], p->level, "inter_node_busbw_low", g->name, g->source,
					   p->assumed_cap && p->level_rel < HR_WARN ?
					   "record the NIC inventory (result files with host.inventory): this verdict rests on an assumed reference; meanwhile: " INTER_ACTION :
					   INTER_ACTION,
					   "inter-node busbw %s (%s %s, %d ranks on %d nodes, %s): %s%s",
					   val, g->collective, g->algo, g->nranks, g->nnodes, g->name, detail,
					   p->assumed_cap && p->level_rel < HR_WARN ? "; an assumed reference alone: at most WARN" : "");
				if (r && p->level == HR_FAIL && p->confirmed_fail)
					r->drain = 1;
			}
			else if (g->nnodes == 2)
				hj_add_reason(a, g->nodes[k], HR_WARN, "slow_pair", g->name, g->source,
					   "re-test each node of the pair against a third node (allreduce_bw --groups pairs) to localise; " INTER_ACTION,
					   "in slow node pair %s: busbw %s (%s, %d ranks): %s", g->name,
					   val, g->algo, g->nranks, detail);
			else
				hj_add_reason(a, g->nodes[k], HR_WARN, "inter_node_busbw_low", g->name, g->source,
					   INTER_ACTION,
					   "inter-node busbw %s (%s %s, %d ranks on %d nodes, %s): %s",
					   val, g->collective, g->algo, g->nranks, g->nnodes, g->name, detail);
		}
	}
}

static void straggler_reasons(struct an *a)
{
	size_t i;
	for (i = 0; i < a->f->nstragglers; i++) {
		const struct hr_straggler *s = &a->f->stragglers[i];
		char subj[32];
		if (hj_source_superseded(a, s->source, s->node))
			continue; /* a straggler of an earlier sweep: history */
		snprintf(subj, sizeof(subj), "rank %d", s->rank);
		hj_add_reason(a, s->node, HR_WARN, "straggler", subj, s->source,
			   "check that rank's GPU clocks, power and PCIe link (nvidia-smi -q) and the NIC it uses",
			   "rank %d is a straggler: slowest rank at %.0f%% of the sizes, %.0f%% slower than the median rank",
			   s->rank, 100 * s->slowest_fraction, s->excess_pct);
	}
}

static void not_judged_reasons(struct an *a)
{
	size_t n;
	for (n = 0; n < a->f->nnodes; n++) {
		struct node_checks c;
		char why[700];
		hj_node_checks(a, (int)n, &c);
		if (c.noisy)
			hj_add_reason(a, (int)n, HR_INFO, "measurement_noisy", "measurements", NULL, "re-run on an idle node",
				   "%d check%s not judged: noisy measurement (%s%s)", c.noisy, c.noisy == 1 ? "" : "s",
				   c.noisy_why, c.noisy > 1 ? "; and more" : "");
		if (c.fab && !c.fab_judged) {
			const struct inst *p = c.intra ? c.intra : c.inter;
			hj_add_reason(a, (int)n, HR_INFO, "fabric_not_judged", "fabric", NULL,
				   "give an expectation (--expect: intra_node_busbw_gbps, inter_node_busbw_gbps), record the NICs (result files with host.inventory), or run like nodes together",
				   "no fabric check of this node could be judged (%d group%s): %s",
				   c.fab, c.fab == 1 ? "" : "s", hj_inst_not_judged(a, p, why, sizeof(why)));
		}
	}
}

const struct hr_family hr_family_groups = {
	"fabric and pairs",
	"the all-reduce groups (hr_group) and their compared values, the nodes' NICs (host.inventory)",
	group_reasons,
	NULL,
};

const struct hr_family hr_family_stragglers = {
	"stragglers",
	"allreduce_bw's straggler ranks (hr_fleet.stragglers)",
	straggler_reasons,
	NULL,
};

const struct hr_family hr_family_not_judged = {
	"not judged",
	"each node's checks: judged, noisy, not judged and why",
	not_judged_reasons,
	NULL,
};
