/*
 * hr_walk.c - visit the JSON documents under files and directories.
 */
#include "report/read/hr_walk.h"
#include "base/ch_common.h"
#include "report/hr_util.h"
#include "report/read/hr_result.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* the largest result file read (the main report's limit, hr_load.c) */
#define HR_WALK_MAX_BYTES (512u << 20)

/* the walk of hr_walk_json() and hr_walk_results(): @rfn set, each document
 * passes hr_result_accept() and @rfn gets its record */
static int walk(char *const *paths, int n, struct hr_issues *issues, hr_walk_fn fn,
		hr_walk_result_fn rfn, void *ctx, struct hr_walk_count *count)
{
	static const char *const exts[] = { ".json", NULL };
	struct hr_file_list files;
	size_t i;
	int rc;

	memset(count, 0, sizeof(*count));
	if ((rc = hr_collect_files(paths, n, NULL, exts, &files, issues)))
		return rc;
	count->files = files.n;
	for (i = 0; i < files.n && !rc; i++) {
		const char *path = files.paths[i];
		char *text = NULL, err[256];
		size_t len = 0;
		json_error_t jerr;
		json_t *doc;

		if (hr_read_file(path, HR_WALK_MAX_BYTES, &text, &len, err, sizeof(err))) {
			hr_issue_add(issues, HR_ISSUE_SKIPPED, path, 0, 0, "cannot read: %s; file skipped", err);
			continue;
		}
		doc = json_loadb(text, len, 0, &jerr);
		free(text);
		if (!doc) {
			hr_issue_add(issues, HR_ISSUE_SKIPPED, path, jerr.line > 0 ? jerr.line : 0,
				     jerr.column > 0 ? jerr.column : 0, "not valid JSON: %s; file skipped", jerr.text);
			continue;
		}
		if (rfn) {
			struct hr_result r;
			int use = HR_RESULT_SKIPPED;
			rc = hr_result_read(doc, &r);
			if (!rc && !json_is_object(doc))
				hr_issue_add(issues, HR_ISSUE_SKIPPED, path, 0, 0,
					     "JSON document is not an object; file skipped");
			else if (!rc)
				use = hr_result_accept(&r, path, files.named[i], issues);
			if (!rc && use == HR_RESULT_IGNORED)
				count->ignored++;
			else if (!rc && use == HR_RESULT_USE && (rc = rfn(path, &r, issues, ctx)) == 0)
				count->used++;
			hr_result_release(&r);
		} else {
			rc = fn(path, doc, issues, ctx);
			if (rc == 0)
				count->used++;
		}
		json_decref(doc);
		if (rc > 0)
			rc = 0;
	}
	hr_file_list_release(&files);
	return rc;
}

int hr_walk_json(char *const *paths, int n, struct hr_issues *issues,
		 hr_walk_fn fn, void *ctx, size_t *nvisited)
{
	struct hr_walk_count c;
	int rc = walk(paths, n, issues, fn, NULL, ctx, &c);

	if (nvisited)
		*nvisited = c.used;
	return rc;
}

int hr_walk_results(char *const *paths, int n, struct hr_issues *issues,
		    hr_walk_result_fn fn, void *ctx, struct hr_walk_count *count)
{
	struct hr_walk_count c;

	return walk(paths, n, issues, NULL, fn, ctx, count ? count : &c);
}

int hr_run_subcommand(int argc, char **argv, const char *name,
		      int (*fn)(int argc, char **argv))
{
	static char prog[96];
	const char *saved = ch_prog();
	char **av;
	int rc;

	if (argc < 1)
		return CH_EXIT_USAGE;
	snprintf(prog, sizeof(prog), "%s %s", saved, argv[0] ? argv[0] : name);
	av = calloc((size_t)argc + 1, sizeof(*av));
	if (!av)
		return CH_EXIT_RUNTIME;
	memcpy(av, argv, (size_t)argc * sizeof(*av));
	av[0] = prog;
	ch_set_prog(prog);
	rc = fn(argc, av);
	ch_set_prog(saved);
	free(av);
	return rc;
}
