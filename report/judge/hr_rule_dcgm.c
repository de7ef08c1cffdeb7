/*
 * hr_rule_dcgm.c - the DCGM diagnostic rules: each test result of a
 * `dcgmi diag -j` file (report/read/hr_dcgm.h) that DCGM itself marked Fail
 * is a FAIL of that GPU, and Warn a WARN, naming the test, the GPU and
 * DCGM's message; Pass is no finding, Skip and Not Run are not judged. The
 * judgement is DCGM's (its own thresholds per test and SKU); this family
 * carries it into the node's verdict. A record alone family (hr_family.h).
 */
#include "report/judge/hr_family.h"
#include "report/judge/hr_analyze.h"
#include "report/judge/hr_rules.h"
#include "report/read/hr_dcgm.h"

#include <stdio.h>
#include <string.h>

static void dcgm_rules(const struct hr_fleet *f, hr_emit_fn emit, void *ctx)
{
	size_t i;

	for (i = 0; i < f->ndcgm; i++) {
		const struct hr_dcgm_result *r = &f->dcgm[i];
		char subj[160], text[3072];
		int fail = r->status == HR_DCGM_FAIL;

		if (!fail && r->status != HR_DCGM_WARN)
			continue;
		if (!r->gpus[0])
			snprintf(subj, sizeof(subj), "node (DCGM %s)", r->test);
		else if (strchr(r->gpus, ',') || strchr(r->gpus, ' '))
			snprintf(subj, sizeof(subj), "gpus %s", r->gpus);
		else
			snprintf(subj, sizeof(subj), "gpu%s", r->gpus);
		snprintf(text, sizeof(text),
			 "DCGM's diagnostic test '%s'%s%s%s on %s: %s (DCGM %s); DCGM's message: %s",
			 r->test, r->category ? " (" : "", r->category ? r->category : "", r->category ? ")" : "",
			 r->gpus[0] ? subj : "the node (no GPU named)", hr_dcgm_status_name(r->status),
			 r->version ? r->version : "version not given", r->message ? r->message : "none given");
		emit(ctx, r->node, fail ? HR_FAIL : HR_WARN, fail ? "dcgm_diag_fail" : "dcgm_diag_warn", subj,
		     r->source,
		     fail ? "follow DCGM's message: a Deployment (software) failure is a node setting to fix; a Hardware, "
			    "Integration or Stress failure is a fault of that GPU: drain the node and re-run `dcgmi diag` on it "
			    "(a ticket when it repeats)"
			  : "read DCGM's message; re-run `dcgmi diag` on that GPU and watch it",
		     text);
	}
}

const struct hr_family hr_family_dcgm = {
	"DCGM diagnostics",
	"the test results of dcgmi diag -j files (status per test and GPU, DCGM's messages)",
	NULL,
	dcgm_rules,
};
