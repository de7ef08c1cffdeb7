/*
 * hr_plot.h - the report's plots, drawn by PLplot's "svg" output driver
 * into memory (an open_memstream FILE handed to plsfile()), returned as an
 * SVG element ready to be inlined in the HTML report. Each function reads
 * one part of the profile (docs/profile-schema.md).
 *
 * PLplot calls exit() on a fatal error; these functions install an exit
 * handler that jumps back instead, so a plotting failure costs one plot
 * (CH_ERR_RUNTIME), never the report. PLplot keeps global state: not
 * thread-safe, call from one thread.
 */
#ifndef HR_PLOT_H
#define HR_PLOT_H

#include <jansson.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An SVG image: "<svg ...>...</svg>" without XML prolog or DOCTYPE. */
struct hr_svg {
	char *svg;   /* malloc'd, NUL-terminated */
	size_t len;
};

/** hr_svg_release - free @s->svg and zero @s. */
void hr_svg_release(struct hr_svg *s);

/**
 * hr_plot_roofline - roofline of one device: log-log GFLOP/s against
 * arithmetic intensity (FLOP/byte), the measured memory roof and compute
 * roofs (one per measured dtype), the datasheet roofs dashed, and the
 * measured points coloured by dtype (Williams et al., CACM 2009).
 * @node:   [in] node name (title).
 * @device: [in] a device object of the profile (metrics, points).
 * @out:    [out] the SVG.
 * Returns 0; CH_ERR_USAGE when the device has nothing to plot (no roof
 * and no point); CH_ERR_RUNTIME when PLplot fails or memory runs out.
 */
int hr_plot_roofline(const char *node, const json_t *device, struct hr_svg *out);

/**
 * hr_plot_busbw - busbw against message size (log2 axis) for sweeps of
 * one group: one line per algorithm, out-of-place solid and in-place
 * dashed.
 * @title:  [in] plot title (group name and nodes).
 * @groups: [in] array of profile group objects (same group, different
 *          algorithms).
 * Returns 0; CH_ERR_USAGE when no group has two rows; CH_ERR_RUNTIME.
 */
int hr_plot_busbw(const char *title, const json_t *groups, struct hr_svg *out);

/**
 * hr_plot_busbw_fleet - like groups overlaid on one axis: busbw
 * (out-of-place) against message size (log2 axis), the median of the
 * groups per size (black), the band of their 10th to 90th percentile per
 * size (grey; 3 groups or more), every curve thin when the class has at
 * most 8 groups, and the flagged groups highlighted (red FAIL, orange
 * WARN; at most 48 drawn, the first 8 labelled with their name and first
 * node at their last point).
 * @title:   [in] plot title (the class of like groups).
 * @groups:  [in] array of profile group objects of one class (rows).
 * @flagged: [in] one flag per group: draw it highlighted.
 * Returns 0; CH_ERR_USAGE when no group has two rows; CH_ERR_RUNTIME.
 */
int hr_plot_busbw_fleet(const char *title, const json_t *groups, const unsigned char *flagged,
			struct hr_svg *out);

/**
 * hr_plot_lateness - feeder lateness per loader configuration: p99 bars
 * and p50 marks (microseconds, log axis), bars coloured by verdict.
 * @node: [in] node name. @loader: [in] the node's loader object.
 * Returns 0; CH_ERR_USAGE when it has no configuration; CH_ERR_RUNTIME.
 */
int hr_plot_lateness(const char *node, const json_t *loader, struct hr_svg *out);

/**
 * hr_plot_distribution - fleet distribution of one headline metric:
 * values sorted, the median and the WARN/FAIL levels below it, outliers
 * (level warn or fail) marked and labelled. Every outlier is drawn; of the
 * other values at most 1,000 evenly spaced ranks of the sorted order (the
 * quantile curve, first and last included), so that the SVG of a large
 * fleet stays small.
 * @dist:           [in] a profile "distributions" entry.
 * @warn_pct_below, @fail_pct_below: [in] thresholds (percent) for the lines.
 * Returns 0; CH_ERR_USAGE when it has fewer than 2 values; CH_ERR_RUNTIME.
 */
int hr_plot_distribution(const json_t *dist, double warn_pct_below,
			 double fail_pct_below, struct hr_svg *out);

/**
 * hr_plot_steps - a training run's step logs (the profile's "steps", the
 * document of report/render/hr_steps_render.h): every rank's window median
 * step time and its own compute time, worst first, stragglers marked, and
 * the mean time split as a stacked bar when the logs give one.
 * Returns 0; CH_ERR_USAGE when no rank has a step time; CH_ERR_RUNTIME.
 */
int hr_plot_steps(const json_t *steps, struct hr_svg *out);

/**
 * hr_plot_powercap - the fleet's power-cap curves (the profile's
 * "power_caps"): per GPU model, the median compute-bound GFLOP/s (solid)
 * and GFLOP/J (dashed) against the cap, both in % of each GPU's own figure
 * at the default limit, the cap in % of the default limit; the
 * recommended cap a dotted vertical line.
 * Returns 0; CH_ERR_USAGE when no model has a curve; CH_ERR_RUNTIME.
 */
int hr_plot_powercap(const json_t *power_caps, struct hr_svg *out);

#ifdef __cplusplus
}
#endif
#endif
