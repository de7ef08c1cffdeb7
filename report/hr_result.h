/*
 * hr_result.h - the result reader: one clusterhealth result document
 * (docs/results-schema.md) read into a typed record, the fields that the
 * canary and the history use, so that no other part of report/ looks up a
 * key of a result document.
 *
 * The record is a view: every string and every struct hr_rv is borrowed
 * from the document and valid while the document lives; the arrays of the
 * record are owned by it (hr_result_release()). Reading never fails on the
 * document's shape: a key that is absent or of another type is read as such
 * (NULL string, NAN number, is_array 0), and each caller judges the record
 * by its own rules, naming the offending value with hr_rv_text().
 */
#ifndef HR_RESULT_H
#define HR_RESULT_H

#include <jansson.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One value of the document as read. */
struct hr_rv {
	const json_t *json;   /* the value, NULL when the key is absent */
	const char *str;      /* the string, NULL when not a string */
	double num;           /* the number, NAN when not a number */
	int is_int;           /* 1: an integer (i holds it; num too, converted) */
	json_int_t i;         /* the integer, 0 when not an integer */
};

/* An array of the document: is_array 0 when the value is something else
 * (json says what, for a message), n its length. */
struct hr_rlist {
	const json_t *json;
	int is_array;
	size_t n;
};

/* results.sweeps[].rows[] (allreduce_bw). */
struct hr_result_row {
	struct hr_rv bytes;         /* "bytes" */
	struct hr_rv oop_time_us;   /* "out_of_place"."time_us"."median", us */
	struct hr_rv oop_busbw;     /* "out_of_place"."busbw_gbps", GB/s */
	struct hr_rv oop_wrong;     /* "out_of_place"."wrong", elements */
};

/* results.sweeps[] (allreduce_bw). */
struct hr_result_sweep {
	struct hr_rv group_kind;    /* "node", "pair", "world", "scaling" */
	struct hr_rv algo;
	struct hr_rv nranks;
	struct hr_rv large_busbw;   /* "large_msg_busbw_gbps", GB/s */
	struct hr_rlist nodes_list; /* "nodes": the hosts of the group */
	struct hr_rv *nodes;        /* its nodes_list.n entries (str NULL: not a string) */
	struct hr_rlist rows_list;  /* "rows" */
	struct hr_result_row *rows; /* its rows_list.n entries */
};

/* results.configs[] (loader_contention). */
struct hr_result_config {
	struct hr_rv placement;      /* "as-is", "shared", ... */
	struct hr_rv name;
	struct hr_rv input_wait_frac; /* share of the step waiting on input, 0..1 */
	struct hr_rv accel_util;     /* accelerator utilisation, 0..1 */
};

/* results.devices[].roofs.compute_gflops, one entry in document order. */
struct hr_result_roof {
	const char *dtype;           /* the key, e.g. "bf16" (not checked) */
	struct hr_rv gflops;         /* GFLOP/s */
};

/* results.devices[] (roofline). */
struct hr_result_device {
	struct hr_rv device;         /* "gpu0", "cpu" */
	struct hr_rv status;         /* "ok", "failed", "unavailable" */
	int has_roofs;               /* "roofs" is an object */
	struct hr_rv memory_gbps;    /* "roofs"."memory_gbps", GB/s */
	struct hr_result_roof *compute; /* "roofs"."compute_gflops" (an object) */
	size_t ncompute;
};

struct hr_result {
	/* the envelope */
	const char *tool;            /* NULL: not a result document (hr_result_tool()) */
	const char *status;          /* "status", NULL when not a string */
	const char *hostname;        /* "host"."hostname", NULL when not a string */
	const char *start_utc;       /* "start_utc", NULL when not a string */
	const json_t *doc;           /* the document (for hr_checkpoint.h's readers) */
	/* allreduce_bw */
	struct hr_rlist sweeps_list; /* "results"."sweeps" */
	struct hr_result_sweep *sweeps;
	int ranks_per_host_max;      /* most "ranks"."layout" entries naming one
					"host" (GPUs per node), 0 when none */
	/* loader_contention */
	struct hr_rlist configs_list; /* "results"."configs" */
	struct hr_result_config *configs;
	/* roofline */
	struct hr_rlist devices_list; /* "results"."devices" */
	struct hr_result_device *devices;
};

/**
 * hr_result_tool - the "tool" of a clusterhealth result document.
 * @doc: [in] any JSON document (borrowed).
 * Returns the tool name (borrowed from @doc), or NULL when @doc is not a
 * "clusterhealth.result" document of schema_version 1.
 */
const char *hr_result_tool(const json_t *doc);

/**
 * hr_result_read - read a result document into a record.
 * @doc: [in] any JSON document, borrowed: it must outlive @r.
 * @r:   [out] the record; r->tool is NULL (and nothing else read) when
 *       @doc is not a result document; otherwise the envelope and the part
 *       of the record of r->tool (allreduce_bw: sweeps and the layout;
 *       loader_contention: configs; roofline: devices; other tools: the
 *       envelope only). Release with hr_result_release(), also after an
 *       error.
 * Returns 0, or CH_ERR_RUNTIME when out of memory.
 */
int hr_result_read(const json_t *doc, struct hr_result *r);

/** hr_result_release - free the arrays of @r and zero it. */
void hr_result_release(struct hr_result *r);

/**
 * hr_rv_text - the value as compact JSON, for a message naming it.
 * @v: [in] a value of a record.
 * Returns a malloc'ed string (caller frees): "nothing" when the key is
 * absent; NULL when out of memory.
 */
char *hr_rv_text(const struct hr_rv *v);

/**
 * hr_result_pick_config - the configuration of a loader_contention record
 * that the job runs with: the first with placement "as-is", else the first
 * "shared".
 * @r: [in] a record of a loader_contention result.
 * Returns its index into r->configs, or -1 when there is none of the two.
 */
int hr_result_pick_config(const struct hr_result *r);

#ifdef __cplusplus
}
#endif
#endif
