/*
 * hr_steps_render.h - the step logs of a run, shown: the terminal report of
 * `health_report steps` (the per-rank table worst first, the stragglers,
 * the time split, the stalls, tokens and MFU) and its JSON document.
 * Every figure says what it is: measured (the step logs), given (an
 * option), assumed (a default); a log's own text is escaped when printed.
 */
#ifndef HR_STEPS_RENDER_H
#define HR_STEPS_RENDER_H

#include <jansson.h>
#include <stdio.h>

#include "report/read/hr_steps_model.h"
#include "report/hr_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What the report shows besides the run. */
struct hr_steps_view {
	const struct hr_steps_run *run;
	double gpus;                  /* GPUs of the job; 0: unknown (one rank's log) */
	int gpus_given;               /* 1: --gpus; 0: the ranks in the logs */
	double params;                /* NAN unless given */
	const struct hr_steps_mfu *mfu; /* NULL: not computed */
	const char *mfu_missing;      /* why not ("needs --params"), or NULL */
	const char *peak_from;        /* "datasheet H100 SXM, bf16" or "--peak-tflops" */
	size_t max_ranks;             /* rows of the per-rank table (0: all) */
	const struct hr_steps_run *base; /* a baseline run, or NULL */
	double base_gpus;             /* 0: unknown */
	int base_gpus_given;          /* 1: --baseline-gpus */
	const struct hr_steps_scaling *scaling; /* NULL unless a baseline with both counts */
	const char *scaling_missing;  /* why a baseline gave no scaling, or NULL */
};

/**
 * hr_steps_print - the terminal report.
 * @f: [in] stream. @v: [in] the view.
 */
void hr_steps_print(FILE *f, const struct hr_steps_view *v);

/**
 * hr_steps_json - the report as a document, schema "clusterhealth.steps"
 * version 1 (docs/canary.md, "Step logs"): the inputs, the window, the
 * figures ({value, unit, source} or null), the ranks worst first, the
 * stalls, the stragglers, MFU and scaling.
 * Returns a new reference, NULL when out of memory.
 */
json_t *hr_steps_json(const struct hr_steps_view *v);

/**
 * hr_steps_markdown, hr_steps_html, hr_steps_prom - the "Step logs"
 * section of report.md, report.html (without the plot: hr_plot_steps())
 * and health.prom, from the profile's "steps" (the document of
 * hr_steps_json()); nothing when @st is not an object. Every string of a
 * log is escaped for its output. Returns 0, or CH_ERR_RUNTIME (out of memory).
 */
int hr_steps_markdown(const json_t *st, struct hr_buf *b);
int hr_steps_html(const json_t *st, struct hr_buf *b);
int hr_steps_prom(const json_t *st, struct hr_buf *b);

#ifdef __cplusplus
}
#endif
#endif
