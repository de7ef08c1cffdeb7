/*
 * hr_nvbw.h - reader of nvbandwidth's JSON output (`nvbandwidth -j`) as a
 * health_report input: each test case's bandwidth matrix, into the fleet
 * record (hr_model.h).
 *
 * Layout read (nvbandwidth's json_output.cpp, v0.5 to v0.8; a real sample
 * with its source in tests/data/nvbandwidth/): {"nvbandwidth": {"version",
 * "git_version", "Driver Version", "CUDA Runtime Version", "GPU Device
 * list": ["0: NAME (DDDDDDDD:BB:DD): (HOST)", ...] (absent in some
 * versions), "testcases": [{"name", "status" ("Passed", "Waived", "Not
 * Found", "Error"), "bandwidth_description", "bandwidth_matrix": [[cell,
 * ...], ...] (cells strings of GB/s, "N/A" where a pair was not measured),
 * "sum", "error"}], "error", "warning"}}. Anything else is named as
 * unreadable in the fleet's issues.
 *
 * The node is the host the device list names; without one, as for DCGM's
 * results (hr_dcgm_place()).
 */
#ifndef HR_NVBW_H
#define HR_NVBW_H

#include <jansson.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct hr_fleet;

/* One test case that ran: its matrix, row-major, GB/s (NAN: "N/A"). */
struct hr_nvbw_case {
	char *name;         /* "host_to_device_memcpy_ce" */
	char *description;  /* "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)", NULL none */
	int rows, cols;
	double *m;          /* rows x cols */
};

/* One nvbandwidth run (one file). */
struct hr_nvbw {
	int node;            /* index into fleet.nodes; -1 until hr_dcgm_place() */
	char *dir;           /* the folder of the file, as its path gives it */
	char *version;       /* nvbandwidth's "version" (or git_version), NULL none */
	char **gpus;         /* the device list's entries without index and host, NULL none */
	unsigned *pci;       /* per GPU (domain << 16 | bus << 8 | device), 0 unknown */
	int ngpus;
	struct hr_nvbw_case *cases; /* the cases with status "Passed" */
	size_t ncases;
	char *not_run;       /* the other cases' names and statuses joined, NULL none */
	char *source;        /* the file */
};

/** hr_nvbw_detect - is @doc an nvbandwidth -j document (an object whose
 * "nvbandwidth" member is an object with a "testcases" array)? 1 or 0. */
int hr_nvbw_detect(const json_t *doc);

/**
 * hr_nvbw_load - add the run of the nvbandwidth document @doc (borrowed),
 * read from @path, to @f. A case whose matrix is not an array of arrays of
 * numbers or "N/A" strings is left out, counted in one input problem.
 * Returns 0 (also when skipped), CH_ERR_RUNTIME when out of memory.
 */
int hr_nvbw_load(struct hr_fleet *f, const char *path, const json_t *doc);

/** hr_nvbw_find - the case named @name of @r, NULL none. */
const struct hr_nvbw_case *hr_nvbw_find(const struct hr_nvbw *r, const char *name);

/** hr_nvbw_release - free @f's nvbandwidth runs (hr_fleet_release() calls it). */
void hr_nvbw_release(struct hr_fleet *f);

#ifdef __cplusplus
}
#endif
#endif
