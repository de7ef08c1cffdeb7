/*
 * hr_walk.h - visit the JSON documents under a list of files and
 * directories (used by the canary and history subcommands).
 */
#ifndef HR_WALK_H
#define HR_WALK_H

#include <jansson.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Called once per document. @path: [in] the file; @doc: [in] the parsed
 * document, borrowed (freed after the call). Returns 0 to go on, or a
 * negative ch_status that stops the walk and is returned by hr_walk_json().
 */
typedef int (*hr_walk_fn)(const char *path, json_t *doc, void *ctx);

/**
 * hr_walk_json - parse and visit JSON documents.
 * @paths: [in] @n files or directories. A file is always parsed; a directory
 *         is searched recursively, in name order, for files ending in
 *         ".json" (hidden entries and "*.tmp.*" files of an atomic write in
 *         progress are skipped).
 * @fn, @ctx: [in] the visitor and its argument.
 * Returns 0; CH_ERR_USAGE (message printed, naming the file, line and
 * column) when a path does not exist or a file is not valid JSON; or the
 * first error returned by @fn.
 */
int hr_walk_json(char *const *paths, int n, hr_walk_fn fn, void *ctx);

/**
 * hr_result_tool - the "tool" of a clusterhealth result document.
 * @doc: [in] any JSON document.
 * Returns the tool name (borrowed from @doc), or NULL when @doc is not a
 * "clusterhealth.result" document of schema_version 1.
 */
const char *hr_result_tool(json_t *doc);

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
