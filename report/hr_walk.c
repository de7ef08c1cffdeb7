/*
 * hr_walk.c - visit the JSON documents under files and directories.
 */
#include "report/hr_walk.h"
#include "base/ch_common.h"
#include "base/ch_result.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int visit_file(const char *path, hr_walk_fn fn, void *ctx)
{
	json_error_t err;
	json_t *doc = json_load_file(path, 0, &err);
	int rc;

	if (!doc) {
		ch_error("%s:%d:%d: not valid JSON: %s", path, err.line,
			 err.column, err.text);
		return CH_ERR_USAGE;
	}
	rc = fn(path, doc, ctx);
	json_decref(doc);
	return rc;
}

static int ends_with(const char *s, const char *suf)
{
	size_t a = strlen(s), b = strlen(suf);
	return a >= b && !strcmp(s + a - b, suf);
}

static int visit(const char *path, int top, hr_walk_fn fn, void *ctx)
{
	struct stat st;
	struct dirent **ents = NULL;
	int n, i, rc = 0;

	if (stat(path, &st)) {
		ch_error("cannot read '%s': %s", path, strerror(errno));
		return CH_ERR_USAGE;
	}
	if (!S_ISDIR(st.st_mode)) {
		if (top || ends_with(path, ".json"))
			return visit_file(path, fn, ctx);
		return 0;
	}
	n = scandir(path, &ents, NULL, alphasort);
	if (n < 0) {
		ch_error("cannot read directory '%s': %s", path, strerror(errno));
		return CH_ERR_USAGE;
	}
	for (i = 0; i < n; i++) {
		const char *name = ents[i]->d_name;
		char *sub;
		if (!rc && name[0] != '.' && !strstr(name, ".tmp.")) {
			if (asprintf(&sub, "%s/%s", path, name) < 0) {
				rc = CH_ERR_RUNTIME;
			} else {
				rc = visit(sub, 0, fn, ctx);
				free(sub);
			}
		}
		free(ents[i]);
	}
	free(ents);
	return rc;
}

int hr_walk_json(char *const *paths, int n, hr_walk_fn fn, void *ctx)
{
	int i, rc;

	for (i = 0; i < n; i++) {
		rc = visit(paths[i], 1, fn, ctx);
		if (rc)
			return rc;
	}
	return 0;
}

const char *hr_result_tool(json_t *doc)
{
	const char *schema = json_string_value(json_object_get(doc, "schema"));
	json_t *ver = json_object_get(doc, "schema_version");

	if (!json_is_object(doc) || !schema || strcmp(schema, CH_RESULT_SCHEMA) ||
	    !json_is_integer(ver) || json_integer_value(ver) != CH_RESULT_SCHEMA_VERSION)
		return NULL;
	return json_string_value(json_object_get(doc, "tool"));
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
