/*
 * hr_render_power.h - the power-cap part of health_report's outputs: the
 * profile's "power_caps" (report/judge/hr_powercap.h) as terminal lines, a
 * Markdown section and an HTML section with its plot. Formatting only.
 */
#ifndef HR_RENDER_POWER_H
#define HR_RENDER_POWER_H

#include <jansson.h>
#include <stdio.h>

#include "report/hr_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/** hr_render_power_terminal - one line per GPU model with a sweep; nothing
 * when the profile has none. */
void hr_render_power_terminal(const json_t *profile, FILE *out);

/** hr_render_power_md - "## Power caps" with a table per GPU model;
 * nothing when the profile has none. */
void hr_render_power_md(const json_t *profile, struct hr_buf *b);

/**
 * hr_render_power_html - the HTML section: the plot (hr_plot_powercap())
 * and the table; nothing when the profile has none.
 * @drawn: [in,out] incremented when the plot was drawn.
 */
void hr_render_power_html(const json_t *profile, struct hr_buf *b, int *drawn);

#ifdef __cplusplus
}
#endif
#endif
