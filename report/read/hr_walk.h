/*
 * hr_walk.h - visit the JSON documents under a list of files and
 * directories (used by the canary and history subcommands).
 */
#ifndef HR_WALK_H
#define HR_WALK_H

#include <jansson.h>
#include <stddef.h>

#include "report/read/hr_input.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A visitor's "this file breaks the schema: nothing of it used" (> 0). */
#define HR_WALK_SKIP 1

/*
 * Called once per document. @path: [in] the file; @doc: [in] the parsed
 * document, borrowed (freed after the call); @issues: [in,out] the walk's
 * input problems. Returns 0 to go on; HR_WALK_SKIP when the file breaks the
 * schema (the visitor recorded why in @issues, as HR_ISSUE_SKIPPED, and
 * kept nothing of it); or a negative ch_status that stops the walk and is
 * returned by hr_walk_json().
 */
typedef int (*hr_walk_fn)(const char *path, json_t *doc, struct hr_issues *issues, void *ctx);

/**
 * hr_walk_json - parse and visit JSON documents: the one input walker of
 * the canary and history subcommands (the main report's rules, through
 * hr_collect_files()).
 * @paths: [in] @n files or directories. A file is always read; a directory
 *         is searched recursively, in name order, for files ending in
 *         ".json" (hidden entries are skipped; so are the "*.json.tmp.PID"
 *         files of an atomic write in progress, which do not end in .json).
 *         Only regular files are opened: a named pipe, socket or device is
 *         recorded as skipped and never blocks; a directory cycle is
 *         recorded as a note and walked once.
 * @issues: [in,out] every input problem: a file that cannot be read, is
 *         not valid JSON (line and column) or that the visitor skipped. One
 *         bad file never stops the walk; the caller decides (--strict).
 * @fn, @ctx: [in] the visitor and its argument.
 * @nvisited: [out] documents the visitor accepted (returned 0); may be NULL.
 * Returns 0; CH_ERR_USAGE (message printed) when a path does not exist;
 * CH_ERR_RUNTIME when out of memory; or the first negative error of @fn.
 */
int hr_walk_json(char *const *paths, int n, struct hr_issues *issues,
		 hr_walk_fn fn, void *ctx, size_t *nvisited);

/* What a walk found (hr_walk_results()). */
struct hr_walk_count {
	size_t files;   /* files read or tried */
	size_t used;    /* documents the visitor accepted (returned 0) */
	size_t ignored; /* documents that are not inputs (hr_result_accept()) */
};

struct hr_result;

/*
 * Called once per result file that hr_result_accept() lets through.
 * @r: [in] its record (borrowed, released after the call). Returns as
 * hr_walk_fn.
 */
typedef int (*hr_walk_result_fn)(const char *path, const struct hr_result *r,
				 struct hr_issues *issues, void *ctx);

/**
 * hr_walk_results - hr_walk_json() for the readers of result files (the
 * canary and the history): each document is read into a record
 * (hr_result_read()) and passes the one gate of every reader,
 * hr_result_accept() (another schema_version or tool, a control character,
 * no host or results: skipped and listed; a foreign document found in a
 * directory: a note), before @fn sees it.
 * @count: [out] files, documents used and ignored; may be NULL. With
 *         hr_inputs_verdict() it decides "no usable input" and --strict.
 * Returns as hr_walk_json().
 */
int hr_walk_results(char *const *paths, int n, struct hr_issues *issues,
		    hr_walk_result_fn fn, void *ctx, struct hr_walk_count *count);

/**
 * hr_run_subcommand - run a health_report subcommand's main with messages
 * prefixed "PROG NAME" (e.g. "health_report canary: error: ...").
 * @argc, @argv: [in] the subcommand's arguments, argv[0] its name (not modified:
 *               getopt_long permutes a copy).
 * @name:        [in] name used when argv[0] is NULL.
 * @fn:          [in] the subcommand's main.
 * Returns fn's exit code; CH_EXIT_USAGE when argc < 1, CH_EXIT_RUNTIME when
 * out of memory.
 */
int hr_run_subcommand(int argc, char **argv, const char *name,
		      int (*fn)(int argc, char **argv));

#ifdef __cplusplus
}
#endif
#endif
