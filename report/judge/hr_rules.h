/*
 * hr_rules.h - health_report's verdict rules as one table: each rule a row
 * (its reason code, level, what it judges, threshold, source, and the
 * function that applies it). The judge (hr_analyze.c) runs the table: each
 * row's pass once, in the table's order (after the drift pass, the values
 * the rules compare are measured against each other; before the devices
 * pass, the FAILs are confirmed); a reason whose code has no row is an
 * error. docs/health_report.md's rule table is this table as
 * `health_report rules` prints it (checked by tests/cli/rules_table.sh).
 * Adding a rule is one row here and its code in its family's file
 * (hr_family.h); a new family is one file and one entry in hr_analyze.c's
 * table of families.
 */
#ifndef HR_RULES_H
#define HR_RULES_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The passes of the judge: each one rule family (hr_family.h) that adds the
 * reasons of the rules of its rows (hr_analyze.c runs them in the order the
 * table first names them). */
enum hr_rule_pass {
	HR_PASS_DRIFT = 0,   /* hr_rule_inventory.c: configuration against the fleet's majority */
	HR_PASS_DEVICES,     /* hr_rule_device.c: roofline's roofs */
	HR_PASS_GROUPS,      /* hr_rule_fabric.c: busbw of the all-reduce groups */
	HR_PASS_HISTORY,     /* hr_rule_history.c: a group against its own earlier sweeps */
	HR_PASS_STRAGGLERS,  /* hr_rule_fabric.c: allreduce_bw's stragglers */
	HR_PASS_LOADER,      /* hr_rule_loader.c */
	HR_PASS_CHECKPOINT,  /* hr_ckpt_reasons (hr_checkpoint.c) */
	HR_PASS_RUNS,        /* hr_rule_inventory.c: the result files' status */
	HR_PASS_INVENTORY,   /* hr_inventory_rules (hr_inventory.c) */
	HR_PASS_POWERCAP,    /* hr_powercap_rules (hr_powercap.c) */
	HR_PASS_HOSTLINK,    /* hr_rule_hostlink.c: each GPU's host<->device copies against its PCIe link */
	HR_PASS_CURVES,      /* hr_rule_curve.c: busbw curve shape */
	HR_PASS_DCGM,        /* hr_rule_dcgm.c: DCGM diagnostics' and nvbandwidth's results */
	HR_PASS_NOT_JUDGED,  /* hr_rule_fabric.c: what no fabric rule could judge */
	HR_PASS_XID,         /* hr_rule_xid.c: the kernel log's faults (kernel_log results) */
	HR_NPASSES
};

/* One parameter of a rule: a number its code reads from its row
 * (hr_rule_param()) and the table prints into its threshold or source text
 * (hr_rules_markdown()), so that the docs and the judge cannot disagree. */
struct hr_param {
	const char *name;   /* as the code asks for it ("warn_ratio"); NULL ends */
	double value;       /* its value (the default where --expect may set it) */
	const char *fmt;    /* printf format of one double: how the text shows it */
	double shown_x;     /* the text shows value x shown_x (0: x 1): a fraction
			       as a percentage (100), bytes as KiB (1/1024) */
};

#define HR_RULE_NPARAMS 14

struct hr_rule {
	const char *code;      /* the reason code in the profile */
	const char *level;     /* "info", "warn", "fail", "warn/fail" */
	const char *judges;    /* what it judges */
	const char *threshold; /* its threshold (the default: --expect may set the fleet and expectation ones);
				  "{name}" is the parameter of that name, printed by its fmt */
	const char *source;    /* where the threshold comes from ("{name}" as above) */
	const char *function;  /* the function(s) that apply it (report/judge/) */
	enum hr_rule_pass pass; /* the pass that runs it (its first function) */
	struct hr_param params[HR_RULE_NPARAMS]; /* its numbers, NULL name ends */
};

/* The table, in the order the judge runs it. */
extern const struct hr_rule hr_rules[];
extern const size_t hr_nrules;

/** hr_rule_find - the row of reason code @code, NULL when it has none. */
const struct hr_rule *hr_rule_find(const char *code);

/**
 * hr_rule_param - parameter @name of the row of reason code @code: the
 * number the rule's code applies (and the table prints).
 * Returns it; NAN when the row or the parameter does not exist (a
 * programming error: tests/cli/rules_table.sh runs every rule's code).
 */
double hr_rule_param(const char *code, const char *name);

/**
 * hr_rule_text - @tmpl (a row's threshold or source) with each "{name}"
 * replaced by the row's parameter @name as its fmt prints it, into @buf of
 * @n bytes (truncated as snprintf does). An unknown name is kept as written.
 * Returns 0, or -1 when @buf was too small.
 */
int hr_rule_text(const struct hr_rule *r, const char *tmpl, char *buf, size_t n);

/**
 * hr_rules_params - the rows' parameters, one a line, to @out: the code,
 * the name, the value (%.17g), the value as the table prints it, and
 * "shown" when the row's threshold or source prints it ("-" when not),
 * tab-separated (`health_report rules --params`: what
 * tests/cli/check-rules-doc.py compares the docs' numbers with).
 * Returns 0, or -1 on a write error.
 */
int hr_rules_params(FILE *out);

/**
 * hr_rules_markdown - the table as a Markdown table (code, level, judges,
 * threshold, source, function), one row per rule, to @out.
 * Returns 0, or -1 on a write error.
 */
int hr_rules_markdown(FILE *out);

/**
 * hr_rules_main - `health_report rules [--params]`: prints the table
 * (Markdown), or with --params its parameters (hr_rules_params()).
 * Returns the exit status: 0, 2 on a usage error, 4 (printed) when the
 * table cannot be written to stdout (a full device, a closed stdout).
 */
int hr_rules_main(int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
