/*
 * hr_steps_more.h - the step-log reader's number helpers, Megatron timer
 * names, and the formats read line by line with no state of their own:
 * NeMo 2.0, nanoGPT, nanotron, DeepSpeed's engine lines and PyTorch
 * Lightning's progress lines (report/read/hr_steps_more.c; the reader and
 * its record: hr_steps.h; every figure's meaning: docs/canary.md,
 * "Step logs").
 */
#ifndef HR_STEPS_MORE_H
#define HR_STEPS_MORE_H

#include <stddef.h>

#include "report/read/hr_steps.h"

#ifdef __cplusplus
extern "C" {
#endif

/** hr_steps_skip_sp - @s past its blanks and tabs. */
const char *hr_steps_skip_sp(const char *s);

/**
 * hr_steps_num - a number as printed at @s (leading blanks skipped):
 * "7,282", "1,234.56", "-3.1E+00"; commas only as thousands separators.
 * @v: [out] the value (finite). @end: [out] past it; may be NULL.
 * Returns 0, or -1 when no number is there ("N/A", "nan", empty).
 */
int hr_steps_num(const char *s, double *v, const char **end);

/**
 * hr_steps_num_si - hr_steps_num() with an optional SI suffix: "14.2K",
 * "11.5K", "85.8G", "634K", "128.4k" (k/K 1e3, M 1e6, G 1e9, T 1e12).
 * Returns 0 or -1 as hr_steps_num().
 */
int hr_steps_num_si(const char *s, double *v, const char **end);

/**
 * hr_steps_key_num - "key" followed by ':' and a number, searched from
 * @from; the key starts the text or follows a blank, tab, ',' or '|'.
 * @present: [out] set when the key is there (NULL allowed).
 * Returns 0 and *@v, or -1 when absent or not a number.
 */
int hr_steps_key_num(const char *from, const char *key, double *v, int *present);

/**
 * hr_steps_timer_phase - the part of the step a Megatron-LM (or
 * Megatron-DeepSpeed) timer measures: enum hr_steps_phase, or -1 for a
 * timer of no phase. *@parent is set for a timer that holds the others
 * of its phase (backward-reduce-model-grads, Megatron-DeepSpeed's
 * "backward"): its value replaces their sum.
 */
int hr_steps_timer_phase(const char *name, int *parent);

/* hr_steps_more_line() results */
#define HR_SM_NOT_MINE 0   /* no line of these formats */
#define HR_SM_RECORD 1     /* *r filled: emit it */
#define HR_SM_SEEN 2       /* a line of these formats that is no record */
#define HR_SM_MALFORMED 3  /* looks like one, cannot be read: @why says */
#define HR_SM_VARIANT 4    /* a whole line of a variant not read: @why says */

/* What these formats carry from line to line (zeroed per file). */
struct hr_steps_more {
	long pl_last_step;   /* Lightning: the last batch index emitted + 1 (0 none) */
	int pl_last_epoch;
	long ds_throughput;  /* DeepSpeed "SamplesPerSec=" lines seen (no step time) */
};

/**
 * hr_steps_more_line - read one line (launcher prefixes already taken off)
 * as a NeMo 2.0, nanoGPT, nanotron, DeepSpeed engine or Lightning step
 * line.
 * @s:   [in] the line.
 * @r:   [in,out] a record set up by the caller (rank, path, line, time);
 *       its format, step, times and figures are filled on HR_SM_RECORD.
 * @st:  [in,out] the per-file state.
 * @why: [out] on HR_SM_MALFORMED, what could not be read (@whyn bytes).
 * Returns an HR_SM_* value.
 */
int hr_steps_more_line(const char *s, struct hr_step_rec *r, struct hr_steps_more *st, char *why,
		       size_t whyn);

#ifdef __cplusplus
}
#endif
#endif
