/*
 * hr_render_int.h - inside report/render: the outputs rendered node by
 * node (hr_stream.c calls each output's part functions below: hr_term.c,
 * hr_md.c, hr_prom.c, hr_html.c; the outputs are leaves, none calls
 * another, and all of them read the report's rows, hr_rows.h). What each
 * output shows of every node (a row, a line, samples) is rendered when the
 * node comes (the part functions below) and kept as text, on disk where
 * it grows with the fleet (struct hr_spill, hr_spill.h); what needs the whole fleet, or only the nodes of full
 * detail, is rendered at the end from the profile's other parts and those
 * nodes. Not part of the report's interface (hr_render.h is).
 */
#ifndef HR_RENDER_INT_H
#define HR_RENDER_INT_H

#include <jansson.h>
#include <stdio.h>

#include "report/hr_util.h"
#include "report/render/hr_rows.h"
#include "report/render/hr_spill.h"

#ifdef __cplusplus
extern "C" {
#endif

/* health.prom's families of one sample or more per node (hr_prom_node) */
#define HR_PROM_NODE_FAMILIES 14
/* and the inventory's sections after them (hr_inventory_prom_sections()) */
#define HR_PROM_MAX_SECTIONS 64

/* What the nodes left, rendered one by one. */
struct hr_render_parts {
	/* terminal: each node's lines (the first 20 PASS), the PASS nodes
	 * not listed, the checkpoint table's rows with its header */
	struct hr_buf term_lines, term_ckpt;
	size_t more_pass;
	/* report.md: the node rows, the checkpoint rows */
	struct hr_buf md_nodes, md_ckpt;
	size_t nckpt;
	/* report.html: the PASS nodes' rows, the checkpoint rows */
	struct hr_buf html_pass, html_ckpt;
	size_t npass;
	/* report.md and report.html: the nodes of bounded detail handed
	 * without their full entry (not kept), their devices with values and
	 * those values, their loaders: what the tables and plots leave out */
	size_t left_nodes, left_devices, left_values, left_loaders;
	/* nodes of bounded detail kept from their full entry: profile.json
	 * has only their devices' values */
	size_t kept_of_bounded;
	/* health.prom: per node family, then inventory section, its samples */
	struct hr_spill prom[HR_PROM_MAX_SECTIONS];
};

/* report.html's tables list every row up to this many (device metrics,
 * groups), else only the flagged ones */
#define HR_HTML_MAX_ROWS 3000

#define HR_RENDER_STR_(x) #x
#define HR_RENDER_STR(x) HR_RENDER_STR_(x)
/* why report.md and report.html leave out a node of bounded detail (the
 * parts' left_*): the end of a sentence */
#define HR_RENDER_LEFT_WHY "a PASS node's entry is bounded (--detail flagged), and report.md and report.html list a PASS node's devices and loader only in a fleet of at most " HR_RENDER_STR(HR_RENDER_PASS_FULL_MAX) " PASS nodes, or with --detail all"

/* terminal (hr_term.c) */
void hr_term_node(FILE *out, const json_t *n, int color, size_t *shown_pass, size_t *more_pass);
int hr_term_render(const json_t *p, FILE *out, int color, const struct hr_render_parts *parts);
/* report.md (hr_md.c) */
void hr_md_node(struct hr_buf *b, const struct hr_node_row *n);
void hr_md_ckpt(struct hr_buf *b, const struct hr_ckpt_row *r);
int hr_md_render(const json_t *p, struct hr_buf *b, const struct hr_render_parts *parts);
/* health.prom (hr_prom.c) */
void hr_prom_node(size_t k, const struct hr_rows *r, struct hr_buf *b);
int hr_prom_render(const json_t *p, FILE *out, const struct hr_render_parts *parts);
/* report.html (hr_html.c): @diffs maps a node to its configuration where
 * it differs from the fleet's majority (hr_html_config_diffs()) */
json_t *hr_html_config_diffs(const json_t *drift);
void hr_html_pass_row(struct hr_buf *b, const json_t *n, const json_t *diffs);
void hr_html_ckpt(struct hr_buf *b, const struct hr_ckpt_row *r);
int hr_html_render(const json_t *p, int max_plots, struct hr_buf *b, int *nplots,
		   const struct hr_render_parts *parts, const json_t *diffs);

#ifdef __cplusplus
}
#endif
#endif
