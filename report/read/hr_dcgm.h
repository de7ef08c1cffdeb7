/*
 * hr_dcgm.h - reader of DCGM's diagnostic results (`dcgmi diag -r N -j`)
 * as health_report inputs: every test's result per GPU, with DCGM's
 * messages (its "warnings"), into the fleet record (hr_model.h).
 *
 * Layouts read (docs/health_report.md "DCGM diagnostics"; a real sample of
 * each, with its source, in tests/data/dcgm/):
 *  - DCGM 3.x: {"DCGM GPU Diagnostic": {"test_categories": [{"category",
 *    "tests": [{"name", "results": [{"gpu_ids" | "gpu_id", "status",
 *    "warnings", "info"}]}]}], "version"}}; gpu_ids a string ("0,1,2,3") or
 *    an integer, tests null in places (skipped);
 *  - DCGM 4.x: {"DCGM Diagnostic": {"test_categories": [... "results":
 *    [{"entity_group", "entity_id", "status", "warnings"}], "test_summary"
 *    ...]}, "metadata": {"version"}};
 *  - "warnings" as an array of strings or of objects {"warning",
 *    "error_id", "error_category", "error_severity"}.
 * Anything else (no test_categories, a result without a status, a status
 * DCGM does not print, a warning of another shape) is named as unreadable
 * in the fleet's issues, with the DCGM version the file gives, never
 * guessed.
 *
 * The JSON carries no host name: the node is the host of a result file of
 * ours in the same folder (a sweep's folder, results/HOST/STAMP/), else the
 * name of the folder that holds the file (hr_dcgm_node_of()); placed once
 * every input is loaded (hr_dcgm_place()).
 */
#ifndef HR_DCGM_H
#define HR_DCGM_H

#include <jansson.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct hr_fleet;

/* A result's status as DCGM printed it (case aside). */
enum hr_dcgm_status {
	HR_DCGM_PASS = 0,
	HR_DCGM_FAIL,
	HR_DCGM_WARN,
	HR_DCGM_SKIP,    /* "Skip" */
	HR_DCGM_NOT_RUN  /* "Not Run" / "NotRun" */
};

/* One test's result on one GPU (or on the GPUs it names together). */
struct hr_dcgm_result {
	int node;          /* index into fleet.nodes; -1 until hr_dcgm_place() */
	char *dir;         /* the folder of the file, as its path gives it */
	char *category;    /* "Deployment", "Hardware", ...; NULL none */
	char *test;        /* "memory", "PCIe", "software" */
	char *gpus;        /* "0", "0,1,2,3"; "" when the result names none */
	int status;        /* enum hr_dcgm_status */
	char *message;     /* DCGM's warnings joined with "; ", NULL none */
	char *version;     /* the DCGM version the file gives, NULL none */
	char *source;      /* the file */
};

/**
 * hr_dcgm_detect - is @doc a `dcgmi diag -j` document (an object with a
 * "DCGM GPU Diagnostic" or "DCGM Diagnostic" member)? Returns 1 or 0.
 */
int hr_dcgm_detect(const json_t *doc);

/**
 * hr_dcgm_node_of - the node a file of @path belongs to: the name of the
 * folder that holds it ("night/gpu-node-07/dcgm.json" -> "gpu-node-07";
 * "dcgm.json" -> the current folder's name as given, "."). Written into
 * @buf of @n bytes (truncated as snprintf does). Returns @buf.
 */
char *hr_dcgm_node_of(const char *path, char *buf, size_t n);

/**
 * hr_dir_of - the folder part of @path as given ("a/b/c.json" -> "a/b";
 * "c.json" -> "."), into @buf of @n bytes. Returns @buf.
 */
char *hr_dir_of(const char *path, char *buf, size_t n);

/**
 * hr_dcgm_load - add the results of the `dcgmi diag -j` document @doc
 * (borrowed), read from @path, to @f: one hr_dcgm_result per test and GPU
 * (Pass, Skip and Not Run kept, for the listing), its node left for
 * hr_dcgm_place(). What cannot be read is recorded in f->issues (a file
 * of an unknown layout is skipped whole, naming the version it gives).
 * Returns 0 (also when the file was skipped), CH_ERR_RUNTIME when out of
 * memory.
 */
int hr_dcgm_load(struct hr_fleet *f, const char *path, const json_t *doc);

/**
 * hr_dcgm_place - put every DCGM result and nvbandwidth run (hr_nvbw.h)
 * that has no node yet on one: the node of a result file of ours
 * (f->runs) in the same folder, else the node named after the folder
 * (hr_dcgm_node_of()). hr_fleet_load_files() calls it once all are loaded.
 * Returns 0, CH_ERR_RUNTIME when out of memory.
 */
int hr_dcgm_place(struct hr_fleet *f);

/** hr_dcgm_status_name - "Pass", "Fail", "Warn", "Skip", "Not Run". */
const char *hr_dcgm_status_name(int status);

/** hr_dcgm_release - free @f's DCGM results (hr_fleet_release() calls it). */
void hr_dcgm_release(struct hr_fleet *f);

#ifdef __cplusplus
}
#endif
#endif
