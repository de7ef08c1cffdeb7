/*
 * hr_nccltests.h - parsers for NVIDIA nccl-tests output as users have it:
 * the text log (every format from the 2019 `error` column to the current
 * `#wrong` columns, old alltoall_perf's empty redop cells, several runs in
 * one file, interleaved NCCL INFO and error lines, truncated logs) and the
 * JSON file written with `-J`.
 *
 * The parsers never stop at the first problem: every malformed or
 * truncated part is recorded as an hr_issue with the file and line (and,
 * for JSON syntax errors, the column jansson reports), and everything that
 * could be read is kept.
 */
#ifndef HR_NCCLTESTS_H
#define HR_NCCLTESTS_H

#include <jansson.h>
#include <stdint.h>

#include "report/read/hr_input.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Text formats of the results table. */
enum hr_nt_format {
	HR_NT_FMT_UNKNOWN = 0,
	HR_NT_FMT_ERROR,  /* about 2019: an `error` column (max error), no redop/root */
	HR_NT_FMT_WRONG,  /* nccl-tests 2.x: `#wrong` columns (wrong element counts) */
	HR_NT_FMT_JSON    /* the -J JSON file */
};

/* One half of a row: out-of-place or in-place. */
struct hr_nt_cell {
	int present;        /* 0 when the log has no such half */
	double time_us;
	double algbw_gbps;
	double busbw_gbps;
	double wrong;       /* #wrong (HR_NT_FMT_WRONG, JSON), or the max error
			       (HR_NT_FMT_ERROR); -1 when printed as N/A */
};

/* One size of a sweep. */
struct hr_nt_row {
	double bytes;        /* size (B) */
	double count;        /* elements */
	char type[16];       /* "float" */
	char redop[16];      /* "sum", "none"; "" in the old format */
	int root;            /* -1 when none */
	struct hr_nt_cell oop, ip;
	int line;            /* line of the row in the file (0 for JSON); of its
				first print when merged */
	int reps;            /* rows of the log merged into this one: 1, more when
				the run prints the size again (nccl-tests -N
				cycles): time, algbw and busbw are then the means
				over them, #wrong their sum (the error column: the
				largest) */
};

/* One device line of the "# Using devices" block. */
struct hr_nt_rank {
	int rank;
	int group;           /* -1 in formats without Group */
	long pid;
	char host[128];
	int device;
	char bus_id[32];     /* as printed: "0000:04:00" or "0x36" */
	char name[128];      /* "NVIDIA H100 80GB HBM3" */
};

/* One run: header, device list, results table, footer. */
struct hr_nt_run {
	int first_line, last_line;   /* lines of the file covered (0 for JSON) */
	char collective[48];         /* "all_reduce", "all_gather", ...; "unknown" */
	char collective_from[320];   /* how the collective was identified: the
					"Collective test starting" line, the
					JSON's args, the busbw/algbw ratio and
					columns, or the file name (last hint) */
	double busbw_ratio;          /* median over rows of 1 MB or more of
					busbw / (size / time): the collective's
					bus factor as measured (NAN unknown) */
	char algo[48];               /* from NCCL_ALGO (lower case), else "default" */
	char nccl_version[32];       /* "2.26.2", "" unknown */
	char tests_version[32];      /* nccl-tests version, "" unknown */
	int format;                  /* enum hr_nt_format */
	int nthread, ngpus;          /* from the "# nThread" line, 0 unknown */
	double min_bytes, max_bytes; /* from the "# nThread" line, 0 unknown */
	int max_bytes_reduced;       /* "Reducing maxBytes ... due to memory limitation" */
	struct hr_nt_rank *ranks;    /* device lines */
	int nranks_listed;
	struct hr_nt_row *rows;      /* in order of print; once the sizes start
					again (nccl-tests -N cycles) a print of a
					size, type, redop and root seen before is
					merged into its row (hr_nt_row.reps) */
	size_t nrows;
	size_t rows_cap;             /* allocated rows */
	size_t *row_index;           /* the reader's index of rows by size (private) */
	size_t row_index_cap;
	size_t rows_merged;          /* rows of the log merged into an earlier one */
	int cycling;                 /* a size smaller than the last: the run
					prints its sizes again (reader's state) */
	int header_line;             /* line of the column header, 0 none */
	int cell_decimals;           /* most decimals printed in a busbw cell */
	int has_oob;                 /* "# Out of bounds values" seen */
	long oob_count;
	int has_avg;                 /* "# Avg bus bandwidth" seen */
	double avg_reported_gbps;
	int avg_decimals;            /* decimals printed in the Avg line */
	int avg_line;
	int n_errors;                /* failure lines ("Test NCCL failure", ...) */
	int first_error_line;
	char first_error[256];
	int complete;                /* the footer (Avg line) was seen */
};

/* Everything parsed from one file. */
struct hr_nt_log {
	char *path;
	int is_json;
	struct hr_nt_run *runs;
	size_t nruns;
	int has_wall;       /* -J documents: wall_sec is known */
	double wall_sec;    /* end_time - start_time, s (local times, zone unknown) */
};

/**
 * hr_nt_text_detect - does @text look like nccl-tests text output?
 * Returns 1 when it holds a "# nThread" line, a results column header
 * ("size" ... "busbw") or a "# Avg bus bandwidth" line, else 0.
 */
int hr_nt_text_detect(const char *text);

/**
 * hr_nt_parse_text - parse a nccl-tests text log.
 * @path:   [in] file name, for issues, and as the last hint to the
 *          collective (see hr_nt_infer_collective()).
 * @text:   [in] the whole file, NUL-terminated.
 * @out:    [out] the runs found (free with hr_nt_log_release()).
 * @issues: [in,out] problems, each with @path and its line: malformed or
 *          cut rows (skipped), runs without a footer (truncated), runs that
 *          failed before printing a table, footer averages that disagree
 *          with the rows.
 * A new run starts at each "# nccl-tests version", "# Collective test
 * starting", or "# nThread" line that follows a run already under way.
 * NCCL_ALGO is taken from "NCCL_ALGO set by environment to X" (NCCL INFO)
 * or "NCCL_ALGO=X" lines and applies to the run under way (when it has no
 * rows yet) and to the runs after it.
 * Returns 0 (also when nothing usable was found: out->nruns is then 0 or
 * the runs have no rows), CH_ERR_RUNTIME when out of memory.
 */
int hr_nt_parse_text(const char *path, const char *text, struct hr_nt_log *out,
		     struct hr_issues *issues);

/**
 * hr_nt_infer_collective - identify a run's collective from its content
 * when the log has no "Collective test starting" line.
 * @r:    [in] the run: rows (size, time, busbw, redop, root) and ranks.
 * @hint: [in] collective guessed from the file name ("" none): used only to
 *        choose among collectives the content cannot tell apart, or when
 *        the content says nothing.
 * @coll: [out] the collective ("unknown" when neither says), @ncoll its size.
 * @from: [out] how it was identified, @nfrom its size.
 * The bus factor measured as busbw / (size / time) (nccl-tests
 * doc/PERFORMANCE.md: all_reduce 2(n-1)/n; all_gather, reduce_scatter,
 * alltoall, gather, scatter (n-1)/n; broadcast, reduce, sendrecv 1) is
 * matched within 10% to the rank count n; then the redop and root columns
 * (nccl-tests prints redop "none" for collectives without a reduction and
 * root -1 for rootless ones) separate all_reduce from sendrecv,
 * reduce_scatter from all_gather and alltoall, reduce from broadcast.
 * Also sets r->busbw_ratio. No return value.
 */
void hr_nt_infer_collective(struct hr_nt_run *r, const char *hint, char *coll, size_t ncoll,
			    char *from, size_t nfrom);

/**
 * hr_nt_json_detect - is @doc a nccl-tests -J document? Returns 1 when it
 * is an object with a "results" array and a "config" object, else 0.
 */
int hr_nt_json_detect(const json_t *doc);

/**
 * hr_nt_parse_json - read a nccl-tests -J document (file version 2, as
 * written by nccl-tests' src/util.cu): config.devices, results[] with
 * out_of_place/in_place {time or cpu_time, alg_bw, bus_bw, nwrong},
 * out_of_bounds and average_bus_bandwidth; start_time and end_time (local
 * times "%Y-%m-%d %H:%M:%S") give out->wall_sec when both parse and do not
 * go backwards.
 * @path: [in] file name. @doc: [in] parsed document (borrowed).
 * @out:  [out] one run. @issues: [in,out] records with a missing or
 *        non-numeric field are skipped and recorded (path, no line).
 * Returns 0, or CH_ERR_RUNTIME when out of memory.
 */
int hr_nt_parse_json(const char *path, const json_t *doc, struct hr_nt_log *out,
		     struct hr_issues *issues);

/**
 * hr_nt_avg_busbw - nccl-tests' "Avg bus bandwidth" recomputed: the plain
 * mean of every busbw cell of the run (all sizes, out-of-place and
 * in-place), as nccl-tests computes it (REFERENCE.md, nccl-tests'
 * src/common.cu). Returns NAN when the run has no cell.
 */
double hr_nt_avg_busbw(const struct hr_nt_run *run);

/**
 * hr_nt_avg_tolerance - how far hr_nt_avg_busbw() may lie from the log's
 * own Avg line when both are right: each cell is rounded to
 * cell_decimals (error <= 0.5 x 10^-cell_decimals, and so is their mean)
 * and the Avg line to avg_decimals. Returns the sum of both half-units.
 */
double hr_nt_avg_tolerance(const struct hr_nt_run *run);

/**
 * hr_nt_large_busbw - out-of-place busbw at the largest size of the run
 * (in-place when the row has no out-of-place half). @bytes: [out] that
 * size, may be NULL. Returns NAN when the run has no row.
 */
double hr_nt_large_busbw(const struct hr_nt_run *run, double *bytes);

/**
 * hr_nt_wrong_total - wrong elements of the run: the sum of the #wrong
 * cells (HR_NT_FMT_WRONG, JSON), else the footer's out-of-bounds count
 * (HR_NT_FMT_ERROR prints a max error, not a count). Returns 0 when
 * neither is known.
 */
double hr_nt_wrong_total(const struct hr_nt_run *run);

/**
 * hr_nt_nranks - ranks of the run: the device lines when listed, else
 * nThread x nGpus (one process assumed), else 0.
 */
int hr_nt_nranks(const struct hr_nt_run *run);

/** hr_nt_log_release - free everything in @l and zero it. */
void hr_nt_log_release(struct hr_nt_log *l);

#ifdef __cplusplus
}
#endif
#endif
