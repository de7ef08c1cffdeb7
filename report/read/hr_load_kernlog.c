/*
 * hr_load_kernlog.c - kernel_log results (`health_report kernel-log`,
 * docs/xid.md) into the fleet record: one struct hr_kfault (hr_model.h)
 * per fault the tool grouped (a device and a code). Judged by
 * report/judge/hr_rule_xid.c.
 */
#include "report/read/hr_load_shared.h"
#include "base/ch_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The kinds of fault the fleet report judges ("link_up" groups are the
 * tool's count of ups, carried by their link_down group). */
static int kind_known(const char *k)
{
	return k && (!strcmp(k, "xid") || !strcmp(k, "sxid") || !strcmp(k, "aer") || !strcmp(k, "link_down"));
}

static int action_known(const char *a)
{
	return a && (!strcmp(a, "none") || !strcmp(a, "inform") || !strcmp(a, "reset") || !strcmp(a, "drain") ||
		     !strcmp(a, "reboot"));
}

/* A string field, copied; NULL when absent, null or not a string. */
static char *opt_str(const struct hr_rv *v)
{
	return hl_dup_or_null(v->str);
}

/* Fault @i of @r into @k; 1 when it is not one (an input problem recorded),
 * -1 out of memory. */
static int one_fault(struct ctx *c, const struct hr_result *r, size_t i, int node, struct hr_kfault *k)
{
	const struct hr_result_kfault *e = &r->kfaults[i];
	char where[64];

	snprintf(where, sizeof(where), "results.kernel_log.faults[%zu]", i);
	if (!kind_known(e->kind.str) || !e->code.is_int || e->code.i < 0 || e->code.i > 1000000 ||
	    !action_known(e->action.str) || !e->device.str || !e->lines.is_int || e->lines.i < 0) {
		hr_issue_add(&c->f->issues, HR_ISSUE_SKIPPED, c->path, 0, 0,
			     "%s: not a fault (kind xid, sxid, aer or link_down; an integer code; action none, "
			     "inform, reset, drain or reboot; a device; a count of lines); fault skipped", where);
		return 1;
	}
	k->node = node;
	k->code = (int)e->code.i;
	k->gpu_index = e->gpu_index.is_int && e->gpu_index.i >= 0 && e->gpu_index.i < 4096 ? (int)e->gpu_index.i : -1;
	k->hardware = e->hardware.json && json_is_boolean(e->hardware.json) ? e->hardware.is_true : -1;
	k->lines = (long)e->lines.i;
	k->link_ups = e->link_ups.is_int && e->link_ups.i >= 0 ? (long)e->link_ups.i : 0;
	k->source = strdup(c->path);
	k->log = strdup(r->kl_source.str ? r->kl_source.str : "the kernel log");
	k->kind = strdup(e->kind.str);
	k->action = strdup(e->action.str);
	k->device = strdup(e->device.str);
	k->bus_id = opt_str(&e->bus_id);
	k->uuid = opt_str(&e->uuid);
	k->mnemonic = opt_str(&e->mnemonic);
	k->meaning = opt_str(&e->meaning);
	k->nvidia_action = opt_str(&e->nvidia_action);
	k->first_utc = opt_str(&e->first_utc);
	k->last_utc = opt_str(&e->last_utc);
	k->last_line = opt_str(&e->last_line);
	if (!k->source || !k->log || !k->kind || !k->action || !k->device)
		return -1;
	return 0;
}

int hl_load_kernel_log(struct ctx *c, const struct hr_result *r, int node)
{
	size_t i;

	/* the fault lines the tool skipped for their time: said, as the tool
	 * said them, so that a fault no rule saw is not taken for none */
	if (r->kl_bad_time.is_int && r->kl_bad_time.i > 0)
		hr_issue_add(&c->f->issues, HR_ISSUE_NOTE, c->path, 0, 0,
			     "%lld kernel-log line%s with an unreadable time skipped (results.kernel_log.lines_bad_time: "
			     "a time no kernel wrote, e.g. Feb 30 or before 1970, or more than a day after the run; "
			     "their faults are not judged; docs/xid.md)",
			     (long long)r->kl_bad_time.i, r->kl_bad_time.i == 1 ? "" : "s");
	/* past the tool's 65536 devices and codes: counted together, not
	 * judged one by one here; their worst action said */
	if (r->kl_not_listed.is_int && r->kl_not_listed.i > 0)
		hr_issue_add(&c->f->issues, HR_ISSUE_NOTE, c->path, 0, 0,
			     "%lld kernel-log fault line%s past the tool's first 65536 devices and codes not listed one by one "
			     "(results.kernel_log.lines_not_listed; the worst action among them: %s): not judged here; "
			     "read them in the log",
			     (long long)r->kl_not_listed.i, r->kl_not_listed.i == 1 ? "" : "s",
			     action_known(r->kl_not_listed_action.str) ? r->kl_not_listed_action.str : "not known");

	if (!r->kfaults_list.is_array) {
		if (!hl_unavailable(r))
			hr_issue_add(&c->f->issues, HR_ISSUE_SKIPPED, c->path, 0, 0,
				     "results.kernel_log: no 'faults' array; the kernel log's faults are not known");
		return 0;
	}
	for (i = 0; i < r->kfaults_list.n; i++) {
		struct hr_kfault *k;
		int rc;
		if (r->kfaults[i].kind.str && !strcmp(r->kfaults[i].kind.str, "link_up"))
			continue;
		GROW(c->f->kfaults, c->f->nkfaults, k);
		if (!k)
			return CH_ERR_RUNTIME;
		rc = one_fault(c, r, i, node, k);
		if (rc < 0)
			return CH_ERR_RUNTIME;
		if (rc > 0) {
			hl_kfault_free(k);
			c->f->nkfaults--;
		}
	}
	return 0;
}

void hl_kfault_free(struct hr_kfault *k)
{
	free(k->source); free(k->log); free(k->kind); free(k->action); free(k->device);
	free(k->bus_id); free(k->uuid); free(k->mnemonic); free(k->meaning); free(k->nvidia_action);
	free(k->first_utc); free(k->last_utc); free(k->last_line);
	memset(k, 0, sizeof(*k));
}

void hl_kfault_release(struct hr_fleet *f)
{
	size_t i;
	for (i = 0; i < f->nkfaults; i++)
		hl_kfault_free(&f->kfaults[i]);
	free(f->kfaults);
	f->kfaults = NULL;
	f->nkfaults = 0;
}
