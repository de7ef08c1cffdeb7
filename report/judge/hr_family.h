/*
 * hr_family.h - the one interface of a rule family (report/judge/ only).
 *
 * A rule family is one file of report/judge/ holding the rules of one or
 * more passes of the rule table (hr_rules.h: each row names its pass). It
 * reads the fleet record (struct hr_fleet, hr_model.h), and for the
 * comparing families also the judge's compared values (struct an,
 * hr_judge.h: each device's and group's value against its expectation,
 * its like values in the fleet and its node, and its own earlier runs);
 * it emits reasons, each with its code (a row of the rule table), level
 * (HR_INFO, HR_WARN, HR_FAIL), subject, text (the figure, what it was judged
 * against and the margin), source and action. hr_analyze.c registers every
 * family in one table, indexed by pass, and runs them in the rule table's
 * order.
 */
#ifndef HR_FAMILY_H
#define HR_FAMILY_H

#include "report/read/hr_model.h"

#ifdef __cplusplus
extern "C" {
#endif

struct an;

/* One reason: @node (-1: the fleet), @level (HR_INFO/WARN/FAIL of
 * hr_analyze.h), @code (a row of hr_rules.c), @subject, @source, @action
 * (may be NULL) and @text, each copied. */
typedef void (*hr_emit_fn)(void *ctx, int node, int level, const char *code, const char *subject,
			   const char *source, const char *action, const char *text);

struct hr_family {
	const char *name;  /* "device roofs", "fabric", ... */
	const char *reads; /* what it reads of the fleet record */
	/* the rules over the compared values: adds its reasons to @a
	 * (hj_add_reason()); NULL when it needs only the record */
	void (*judge)(struct an *a);
	/* the rules over the record alone: one @emit call per reason;
	 * NULL when it is a comparing family */
	void (*emit)(const struct hr_fleet *f, hr_emit_fn emit, void *ctx);
};

/* The families, one per pass of enum hr_rule_pass (hr_rules.h). */
extern const struct hr_family hr_family_drift, hr_family_devices, hr_family_groups, hr_family_history,
	hr_family_stragglers, hr_family_loader, hr_family_checkpoint, hr_family_runs, hr_family_inventory,
	hr_family_powercap, hr_family_hostlink, hr_family_curves, hr_family_not_judged, hr_family_xid,
	hr_family_dcgm;

#ifdef __cplusplus
}
#endif
#endif
