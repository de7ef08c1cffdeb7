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

/**
 * hr_group_level_text - the level column of a group in report.md and
 * report.html: its comparison's level ("info", "warn", "fail"), "not
 * judged" when no rule could judge it ("not judged (earlier run)" for a
 * sweep a later one in the inputs superseded), "failed" when it has no comparison
 * because the run failed. @g: [in] a profile group. Returns a static string.
 */
const char *hr_group_level_text(const json_t *g);

#ifdef __cplusplus
}
#endif
#endif
