/*
 * hr_load_shared.h - inside the loader (report/read/hr_load*.c only): the
 * loading context, the field readers and the helpers the loader's files
 * share. The other stages read the fleet model (hr_model.h).
 */
#ifndef HR_LOAD_SHARED_H
#define HR_LOAD_SHARED_H

#include <stddef.h>
#include <string.h>
#include <stdlib.h>

#include "report/read/hr_model.h"
#include "report/read/hr_result.h"
#include "report/hr_util.h"

#define HR_MAX_INPUT_BYTES (512u << 20)

#define GROW(arr, n, out)                                                       \
	do {                                                                    \
		void *v_ = realloc((arr), ((n) + 1) * sizeof(*(arr)));          \
		if (!v_) { (out) = NULL; break; }                               \
		(arr) = v_;                                                     \
		(out) = &(arr)[(n)++];                                          \
		memset((out), 0, sizeof(*(out)));                               \
	} while (0)

struct ctx {
	struct hr_fleet *f;
	const char *path;
	int oom;
};

/* A JSON object's record, read by the result reader (on a reading thread,
 * see struct parsed), with whether a string of it holds a control
 * character (hr_result_check_control()). */
struct pre {
	int rc;               /* hr_result_read()'s */
	struct hr_result rec;
};

/* ---- hr_load_roofline.c */

/* Whether @r is a run that had no device or backend (status
 * "unavailable", docs/results-schema.md): it measured nothing, so a results
 * array it lacks is not a broken input; the run's reason is the node's
 * (run_reasons() in report/judge/hr_rule_inventory.c). */
int hl_unavailable(const struct hr_result *r);

/* A roofline result @r of node @node into c->f: its devices. Returns 0,
 * or CH_ERR_RUNTIME out of memory. */
int hl_load_roofline(struct ctx *c, const struct hr_result *r, int node);

/* ---- hr_load_kernlog.c */

/* A kernel_log result @r of node @node into c->f: its faults (struct
 * hr_kfault); a fault that is not one is an input problem (skipped).
 * Returns 0, or CH_ERR_RUNTIME out of memory. */
int hl_load_kernel_log(struct ctx *c, const struct hr_result *r, int node);

/* Free the strings of one fault and zero it. */
void hl_kfault_free(struct hr_kfault *k);

/* Free what hl_load_kernel_log() added to @f. */
void hl_kfault_release(struct hr_fleet *f);

/* ---- hr_load.c */

/* Set a configuration value of a node (later files win: newer nights sort
 * later). */
void hl_set_cfg(struct hr_fleet *f, int node, int key, const char *val);

/* An input problem of the file being loaded: @fmt with @where and @key. */
void hl_skip(struct ctx *c, const char *fmt, const char *where, const char *key);

/* @v (key @key of @where): a non-negative finite number, or NAN (and an
 * issue when it is not one, or is absent and @required). */
double hl_num_field(struct ctx *c, const struct hr_rv *v, const char *key,
			const char *where, int required);

/* A copy of @s, NULL when @s is NULL (or out of memory). */
char *hl_dup_or_null(const char *s);

/* Join strings, or copy one string, into "a; b". NULL when empty. */
char *hl_join_strings(const struct hr_rstrs *v);

/* Throttle reasons from roofline's telemetry: {"before": sample, "after":
 * sample} where a sample (ch_nvml_sample_json) has "clock_event_reasons"
 * and "throttled"; reasons are kept only from samples that were throttled. */
void hl_add_reasons(const struct hr_result_sample *s, struct hr_buf *rb);

/* Read JSON document @doc into @x (the result reader, and the check of
 * its strings for control characters, skipped when @text_plain: the text
 * the document was parsed from passed hr_result_text_plain()). */
void hl_pre_read(const json_t *doc, struct pre *x, int text_plain);

/* hr_fleet_load_json() for a document whose record is @x (released here). */
int hl_load_json_read(struct hr_fleet *f, const char *path, const json_t *doc, int named,
			  struct pre *x);

#endif
