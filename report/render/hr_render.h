/*
 * hr_render.h - the report's outputs, each rendered from the profile
 * (docs/profile-schema.md): the terminal summary, Markdown for tickets, the
 * self-contained HTML report with PLplot SVG plots, and a Prometheus
 * text-format file for node_exporter's textfile collector.
 */
#ifndef HR_RENDER_H
#define HR_RENDER_H

#include <jansson.h>
#include <stdio.h>

#include "report/hr_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * hr_render_terminal - the terminal summary: a headline (verdict counts,
 * inputs, run cost), one line per node worst first (PASS nodes after the
 * first 20 are counted, not listed), then every WARN and FAIL reason with
 * its action, fleet findings, drift, drain candidates and input problems.
 * @profile: [in] the profile.
 * @out:     [out] stream (stdout).
 * @color:   [in] non-zero for ANSI colours (only on a terminal).
 * Returns 0, or CH_ERR_RUNTIME on a write error.
 */
int hr_render_terminal(const json_t *profile, FILE *out, int color);

/**
 * hr_render_markdown - the report as GitHub-flavoured Markdown (summary,
 * run cost, node verdicts with reasons and actions, devices, groups,
 * loader, drift, input problems, expectations and their sources).
 * @b: [in,out] text is appended. Returns 0, or CH_ERR_RUNTIME (out of memory).
 */
int hr_render_markdown(const json_t *profile, struct hr_buf *b);

/**
 * hr_render_html - the self-contained HTML report, laid out for a fleet:
 * the summary, the flagged nodes in full, the PASS nodes as one compact
 * sortable and filterable table (configuration only where it differs from
 * the fleet's majority), the plots (roofline per device, busbw against size
 * of like groups overlaid with their median and band, the flagged ones
 * highlighted; feeder lateness per placement; fleet distributions), and
 * the tables of the Markdown report; inline SVG drawn by PLplot, no
 * external resource (docs/health_report.md, "report.html at fleet scale").
 * An inline script marks each plot's <svg> with data-rendered="yes" once
 * the browser has laid it out with a non-empty bounding box, and sets
 * data-plots-total and data-plots-rendered on <body> (the headless-browser
 * test reads them).
 * @max_plots: [in] at most this many plots of each kind (flagged subjects
 *             first); the rest are counted in a note.
 * @nplots:    [out] plots drawn; may be NULL.
 * Returns 0, or CH_ERR_RUNTIME (out of memory). A plot PLplot cannot draw
 * is left out with a note, not an error.
 */
int hr_render_html(const json_t *profile, int max_plots, struct hr_buf *b, int *nplots);

/**
 * hr_render_prom - Prometheus text exposition format (version 0.0.4):
 * clusterhealth_node_verdict, clusterhealth_drain_candidate,
 * clusterhealth_node_reasons, per device memory/compute roofs, % of
 * expectation and robust z, per node busbw at large messages, loader
 * input wait and lateness, input problems and the run's cost. Metric
 * names and labels are documented in docs/health_report.md.
 * Returns 0, or CH_ERR_RUNTIME (out of memory).
 */
int hr_render_prom(const json_t *profile, struct hr_buf *b);

/*
 * The outputs rendered node by node, as the profile is handed over
 * (hr_analyze_stream()): hr_render_begin() with the profile's head,
 * hr_render_node() for each node in order, hr_render_end() with its tail.
 * What an output shows of each node (a row, lines, samples) is rendered
 * when the node comes and kept as text (health.prom's in temporary files);
 * the node itself is kept only when it is of full detail (no "detail":
 * "bounded") or its full entry is handed with it, for what needs the nodes
 * together (details, plots, tables with a row limit: report.md and
 * report.html). A node of bounded detail handed without its full entry
 * is counted, and report.md and report.html say that its devices' and
 * loader's figures are left out (never that there were none). The
 * outputs are those of the renderers above on the whole profile, byte for
 * byte, each node's full entry in place of its bounded one where given.
 */

/* report.md and report.html list a PASS node's devices and loader (rows,
 * rooflines, lateness plots) when the fleet has at most this many PASS
 * nodes (health_report hands their full entries: hr_analyze_opts'
 * full_pass_max); beyond, the PASS nodes table and profile.json hold their
 * figures. A full 8-GPU node's entry is about 0.5 MB in memory until the
 * end (make-fleet, 63 PASS nodes: 51 MB peak, 16 MB bounded). */
#define HR_RENDER_PASS_FULL_MAX 64

struct hr_render_opts {
	int md, prom, html, terminal; /* which outputs to render */
	int max_plots;                /* report.html: as hr_render_html() */
	int color;                    /* terminal: as hr_render_terminal() */
};
struct hr_render_out {
	FILE *md, *prom, *html, *terminal; /* NULL: not written */
};
struct hr_render;

/** hr_render_begin - a new rendering; @head: the profile's head (copied).
 * Returns NULL when out of memory. */
struct hr_render *hr_render_begin(const json_t *head, const struct hr_render_opts *o);
/** hr_render_node - the next node of the profile (borrowed for the call);
 * @full: NULL, or the full entry of a node of bounded detail (the one
 * --detail all would write; borrowed): report.md and report.html show it,
 * the terminal and health.prom show @node. Returns 0, or CH_ERR_RUNTIME
 * (out of memory, no temporary file). */
int hr_render_node(struct hr_render *r, const json_t *node, const json_t *full);
/** hr_render_end - @tail: the profile's rest (groups, findings,
 * distributions, power_caps); each output asked for in @out is written to
 * its stream; @nplots: [out] report.html's plots, may be NULL. Returns 0 or
 * CH_ERR_RUNTIME. */
int hr_render_end(struct hr_render *r, const json_t *tail, const struct hr_render_out *out, int *nplots);
/** hr_render_free - releases @r (NULL allowed). */
void hr_render_free(struct hr_render *r);

#ifdef __cplusplus
}
#endif
#endif
