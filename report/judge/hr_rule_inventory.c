/*
 * hr_rule_inventory.c - the configuration and run-status family:
 * configuration drift against the fleet's majority (config_drift) and the
 * result files' status (unavailable, check_failed, run_incomplete). The
 * hardware-fault rules of the inventory are hr_inventory.c's.
 */
#include "report/judge/hr_judge.h"
#include "report/judge/hr_inventory.h"
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

static json_t *analyze_drift(struct an *a)
{
	const struct hr_fleet *f = a->f;
	json_t *arr = json_array();
	int k;
	size_t i;

	for (k = 0; k < HR_CFG_NKEYS; k++) {
		size_t known = 0, best_n = 0, distinct;
		const char *best = NULL;
		json_t *o, *nodes, *count = json_object(), *c;
		/* nodes per value (a jansson object as the hash: linear in the
		 * fleet); the majority is the most frequent value, the first in
		 * node order on a tie */
		for (i = 0; count && i < f->nnodes; i++) {
			const char *v = f->nodes[i].cfg[k];
			if (!v)
				continue;
			known++;
			c = json_object_get(count, v);
			json_object_set_new(count, v, json_integer(c ? json_integer_value(c) + 1 : 1));
		}
		distinct = json_object_size(count);
		for (i = 0; count && i < f->nnodes; i++) {
			const char *v = f->nodes[i].cfg[k];
			size_t cnt = v ? (size_t)json_integer_value(json_object_get(count, v)) : 0;
			if (cnt > best_n) {
				best_n = cnt;
				best = v;
			}
		}
		json_decref(count);
		if (distinct < 2)
			continue;
		if (!(best_n * 2 > known && known >= (size_t)a->th->min_fleet))
			best = NULL; /* no majority */
		o = json_object();
		nodes = json_array();
		json_object_set_new(o, "key", json_string(hr_cfg_key_name(k)));
		json_object_set_new(o, "majority", hj_jstr_or_null(best));
		json_object_set_new(o, "majority_nodes", json_integer((json_int_t)(best ? best_n : 0)));
		json_object_set_new(o, "known_nodes", json_integer((json_int_t)known));
		for (i = 0; i < f->nnodes; i++) {
			const char *v = f->nodes[i].cfg[k];
			json_t *n;
			if (!v || (best && !strcmp(v, best)))
				continue;
			n = json_object();
			json_object_set_new(n, "node", json_string(f->nodes[i].name));
			json_object_set_new(n, "value", json_string(v));
			json_array_append_new(nodes, n);
			a->drift[i] |= 1u << k;
			if (best) {
				char subj[64];
				snprintf(subj, sizeof(subj), "%s", hr_cfg_key_name(k));
				hj_add_reason(a, (int)i, HR_WARN, "config_drift", subj, NULL,
					   k == HR_CFG_GPU_MODEL ?
					   "check that the node is in the right partition; its GPUs are compared only with the same model" :
					   k == HR_CFG_CLOCKS ?
					   "reset or align the GPU clock settings (nvidia-smi -rac, nvidia-smi -q -d CLOCK); until then its results are not like for like" :
					   hr_inventory_drift_action(k) ? hr_inventory_drift_action(k) :
					   "align the software stack (driver, CUDA, NCCL, MPI) with the fleet; until then its results are not like for like",
					   "configuration drift: %s '%s' differs from the fleet's '%s' (%zu of %zu nodes)",
					   hr_cfg_key_name(k), v, best, best_n, known);
			}
		}
		json_object_set_new(o, "nodes", nodes);
		json_array_append_new(arr, o);
	}
	return arr;
}

static void run_reasons(struct an *a)
{
	const struct hr_fleet *f = a->f;
	size_t i, j;
	for (i = 0; i < f->nruns; i++) {
		const struct hr_run *r = &f->runs[i];
		if (!strcmp(r->tool, "nccl-tests") || r->node < 0)
			continue;
		if (!strcmp(r->status, "ok"))
			continue;
		if (!strcmp(r->status, "unavailable")) {
			hj_add_reason(a, r->node, HR_INFO, "unavailable", r->tool, r->path, NULL,
				   "%s: unavailable%s%s", r->tool, r->reason ? ": " : "",
				   r->reason ? r->reason : "");
			continue;
		}
		if (!strcmp(r->status, "failed")) {
			int covered = 0;
			/* already explained by a failed device or wrong elements? */
			for (j = 0; j < f->ndevices; j++)
				if (!strcmp(f->devices[j].source, r->path) && !strcmp(f->devices[j].status, "failed"))
					covered = 1;
			for (j = 0; j < f->ngroups; j++)
				if (!strcmp(f->groups[j].source, r->path) && f->groups[j].wrong_total > 0)
					covered = 1;
			if (!strcmp(r->tool, "loader_contention") || !strcmp(r->tool, "kernel_log"))
				covered = 1; /* its verdict is the reason (kernel_log: hr_rule_xid.c) */
			if (!covered)
				hj_add_reason(a, r->node, HR_FAIL, "check_failed", r->tool, r->path,
					   "read the tool's output; re-run it alone on the node",
					   "%s failed its check%s%s", r->tool, r->reason ? ": " : "",
					   r->reason ? r->reason : "");
			continue;
		}
		hj_add_reason(a, r->node, HR_WARN, "run_incomplete", r->tool, r->path,
			   "re-run the tool on the node; read its stderr and the node's kernel log (dmesg) for the cause",
			   "%s run ended with status '%s'%s%s: its results are partial", r->tool, r->status,
			   r->reason ? ": " : "", r->reason ? r->reason : "");
	}
}

static void pass_drift(struct an *a)
{
	a->drift_json = analyze_drift(a);
}

const struct hr_family hr_family_drift = {
	"configuration drift",
	"each node's configuration keys (hr_node.cfg)",
	pass_drift,
	NULL,
};

const struct hr_family hr_family_runs = {
	"run status",
	"each result file's tool, status and reason (hr_run), and which devices and groups it explains",
	run_reasons,
	NULL,
};
