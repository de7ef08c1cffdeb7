/*
 * The input walker of health_report's canary and history subcommands
 * (report/read/hr_walk.h, on hr_collect_files()): regular files only, a named
 * pipe listed and never opened, a symbolic-link cycle walked once, a file
 * that is not JSON or that the visitor rejects skipped and listed while the
 * rest is visited.
 */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/ch_common.h"
#include "report/read/hr_input.h"
#include "report/hr_util.h"
#include "report/read/hr_walk.h"

static char dir[64];

static void put(const char *name, const char *text)
{
	char p[256];
	FILE *f;
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	cr_assert(f, "%s", p);
	fputs(text, f);
	fclose(f);
}

static void setup(void)
{
	char p[256];
	snprintf(dir, sizeof(dir), "/tmp/ch_walk_test_XXXXXX");
	cr_assert(mkdtemp(dir));
	snprintf(p, sizeof(p), "%s/sub", dir);
	cr_assert_eq(mkdir(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/sub/loop", dir);
	cr_assert_eq(symlink("..", p), 0);
	snprintf(p, sizeof(p), "%s/fifo.json", dir);
	cr_assert_eq(mkfifo(p, 0644), 0);
	put("a.json", "{\"tool\": \"a\"}\n");
	put("b.json", "{\"tool\": \"b\", \"x\": [1, 2\n");    /* cut */
	put("sub/c.json", "{\"tool\": \"reject\"}\n");
	put("sub/d.json", "{\"tool\": \"d\"}\n");
	put("notes.txt", "not searched for\n");
	put("e.json.tmp.123", "{\"tool\": \"in progress\"}\n");
}

static void teardown(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

TestSuite(walk, .init = setup, .fini = teardown, .timeout = 20);

struct seen {
	char tools[256];
};

static int visit(const char *path, json_t *doc, struct hr_issues *is, void *ctx)
{
	struct seen *s = ctx;
	const char *t = json_string_value(json_object_get(doc, "tool"));
	if (t && !strcmp(t, "reject")) {
		hr_issue_add(is, HR_ISSUE_SKIPPED, path, 0, 0, "rejected by the visitor");
		return HR_WALK_SKIP;
	}
	strncat(s->tools, t ? t : "?", sizeof(s->tools) - strlen(s->tools) - 1);
	return 0;
}

static const struct hr_issue *find(const struct hr_issues *is, const char *path_end, int kind)
{
	size_t i, n = strlen(path_end);
	for (i = 0; i < is->n; i++) {
		size_t m = strlen(is->v[i].path);
		if (m >= n && !strcmp(is->v[i].path + m - n, path_end) && is->v[i].kind == kind)
			return &is->v[i];
	}
	return NULL;
}

Test(walk, regular_files_only_bad_ones_listed)
{
	struct hr_issues is = { 0 };
	struct seen s = { "" };
	char *args[1] = { dir };
	size_t n = 0;
	const struct hr_issue *x;

	cr_assert_eq(hr_walk_json(args, 1, &is, visit, &s, &n), 0);
	cr_assert_str_eq(s.tools, "ad");  /* name order; b cut, c rejected, no tmp file */
	cr_assert_eq(n, 2);
	x = find(&is, "/fifo.json", HR_ISSUE_SKIPPED);
	cr_assert(x && strstr(x->msg, "a named pipe"), "the FIFO is listed as skipped");
	x = find(&is, "/b.json", HR_ISSUE_SKIPPED);
	cr_assert(x && strstr(x->msg, "not valid JSON") && x->line == 2, "the cut file, at its line");
	cr_assert(find(&is, "/sub/c.json", HR_ISSUE_SKIPPED), "the visitor's rejection");
	x = find(&is, "/sub/loop", HR_ISSUE_NOTE);
	cr_assert(x && strstr(x->msg, "already visited"), "the cycle is listed as a note");
	cr_assert_eq(hr_issues_count(&is, HR_ISSUE_SKIPPED), 3);
	hr_issues_release(&is);
}

Test(walk, named_fifo_is_listed_not_opened)
{
	struct hr_issues is = { 0 };
	struct hr_file_list files;
	char p[256], *args[1] = { p }, *text = NULL, err[128];

	snprintf(p, sizeof(p), "%s/fifo.json", dir);
	cr_assert_eq(hr_collect_files(args, 1, NULL, NULL, &files, &is), 0);
	cr_assert_eq(files.n, 0);
	cr_assert_eq(hr_issues_count(&is, HR_ISSUE_SKIPPED), 1);
	cr_assert(strstr(is.v[0].msg, "named pipe"));
	/* and the reader refuses it without waiting for a writer */
	cr_assert_eq(hr_read_file(p, 0, &text, NULL, err, sizeof(err)), -1);
	cr_assert(strstr(err, "named pipe"), "%s", err);
	cr_assert_null(text);
	hr_file_list_release(&files);
	hr_issues_release(&is);
}

Test(walk, missing_path_is_usage_error)
{
	struct hr_issues is = { 0 };
	struct seen s = { "" };
	char *args[1] = { "/nonexistent-ch-walk" };
	cr_redirect_stderr();
	cr_assert_eq(hr_walk_json(args, 1, &is, visit, &s, NULL), CH_ERR_USAGE);
	hr_issues_release(&is);
}

/* the reader's limit: a file of exactly @max_bytes is read (it is not larger),
 * one byte more is refused; the text NUL-terminated and padded with zeros */
Test(walk, read_file_limit_is_inclusive)
{
	char p[256], *text = NULL, err[128];
	size_t len = 0, i;

	put("ten.txt", "0123456789");
	snprintf(p, sizeof(p), "%s/ten.txt", dir);
	cr_assert_eq(hr_read_file(p, 10, &text, &len, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(len, 10);
	cr_assert_eq(memcmp(text, "0123456789", 10), 0);
	for (i = 10; i < 10 + 1 + HR_READ_FILE_PAD; i++)
		cr_assert_eq(text[i], 0, "byte %zu past the text", i);
	free(text);
	text = NULL;
	cr_assert_eq(hr_read_file(p, 9, &text, &len, err, sizeof(err)), -1);
	cr_assert(strstr(err, "larger than 9 bytes"), "%s", err);
	cr_assert_null(text);
}
