#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/ch_common.h"
#include "base/ch_result.h"

static char dir[64];

static void mkdir_tmp(void)
{
	strcpy(dir, "/tmp/ch_result_XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
}

static void rm_tmp(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		cr_log_warn("cannot remove %s", dir);
}

TestSuite(result, .init = mkdir_tmp, .fini = rm_tmp);

Test(result, envelope_and_atomic_write)
{
	char *argv[] = { "roofline", "--size", "1M" };
	char path[128];
	json_error_t err;
	json_t *doc, *v;
	struct ch_result *r;

	setenv("NCCL_DEBUG", "INFO", 1);
	setenv("NOT_WHITELISTED", "x", 1);
	snprintf(path, sizeof(path), "%s/r.json", dir);
	r = ch_result_new("roofline", 3, argv);
	cr_assert_not_null(r);
	cr_assert_eq(ch_result_set_path(r, path, 0), 0);
	json_object_set_new(ch_result_results(r), "points", json_array());
	cr_assert_eq(ch_result_checkpoint(r), 0);
	doc = json_load_file(path, 0, &err);
	cr_assert_not_null(doc, "%s", err.text);
	cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "incomplete");
	json_decref(doc);

	cr_assert_eq(ch_result_finish(r, CH_ERR_UNAVAILABLE, "no GPU: %s", "none found"), 0);
	doc = json_load_file(path, 0, &err);
	cr_assert_not_null(doc);
	cr_assert_str_eq(json_string_value(json_object_get(doc, "schema")), CH_RESULT_SCHEMA);
	cr_assert_eq(json_integer_value(json_object_get(doc, "schema_version")), CH_RESULT_SCHEMA_VERSION);
	cr_assert_str_eq(json_string_value(json_object_get(doc, "tool")), "roofline");
	cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "unavailable");
	cr_assert_str_eq(json_string_value(json_object_get(doc, "reason")), "no GPU: none found");
	cr_assert_eq(json_integer_value(json_object_get(doc, "exit_code")), 3);
	v = json_object_get(doc, "args");
	cr_assert_eq(json_array_size(v), 3);
	cr_assert_str_eq(json_string_value(json_array_get(v, 2)), "1M");
	v = json_object_get(doc, "env");
	cr_assert_str_eq(json_string_value(json_object_get(v, "NCCL_DEBUG")), "INFO");
	cr_assert_null(json_object_get(v, "NOT_WHITELISTED"));
	cr_assert(json_is_string(json_object_get(doc, "start_utc")));
	cr_assert(json_is_string(json_object_get(doc, "end_utc")));
	cr_assert(json_is_object(json_object_get(doc, "host")));
	cr_assert(json_is_array(json_object_get(json_object_get(doc, "results"), "points")));
	json_decref(doc);
	ch_result_free(r);
	/* no temporary file left behind */
	{
		char cmd[160];
		snprintf(cmd, sizeof(cmd), "ls '%s' | grep -q tmp", dir);
		cr_assert_neq(system(cmd), 0, "temporary file left in %s", dir);
	}
}

Test(result, refuses_to_overwrite_without_force)
{
	char path[128];
	struct ch_result *r = ch_result_new("x", 0, NULL);
	FILE *f;

	snprintf(path, sizeof(path), "%s/exists.json", dir);
	f = fopen(path, "w");
	fputs("{\"schema\": \"clusterhealth.result\"}", f);
	fclose(f);
	cr_redirect_stderr();
	cr_assert_eq(ch_result_set_path(r, path, 0), CH_ERR_USAGE);
	cr_assert_eq(ch_result_set_path(r, path, 1), 0);
	cr_assert_eq(ch_result_finish(r, CH_OK, NULL), 0);
	ch_result_free(r);
}

/* --force replaces only a regular file that clusterhealth wrote (or an
 * empty one): another program's file, a link, a device are refused */
Test(result, force_only_over_a_file_of_ours)
{
	char path[128], link[128], empty[128];
	struct ch_result *r = ch_result_new("x", 0, NULL);
	FILE *f;

	snprintf(path, sizeof(path), "%s/foreign.json", dir);
	f = fopen(path, "w");
	fputs("{\"schema\": \"grafana.dashboard\"}", f);
	fclose(f);
	snprintf(link, sizeof(link), "%s/link.json", dir);
	cr_assert_eq(symlink(path, link), 0);
	snprintf(empty, sizeof(empty), "%s/empty.json", dir);
	fclose(fopen(empty, "w"));
	cr_redirect_stderr();
	cr_expect_eq(ch_result_set_path(r, path, 1), CH_ERR_USAGE);
	cr_expect_eq(ch_result_set_path(r, link, 1), CH_ERR_USAGE);
	cr_expect_eq(ch_result_set_path(r, "/dev/null", 1), CH_ERR_USAGE);
	cr_expect_eq(ch_result_set_path(r, empty, 1), 0);
	ch_result_free(r);
}

/* the atomic writer replaces only a regular file and leaves nothing behind */
Test(result, atomic_write_only_over_a_regular_file)
{
	char path[128], fifo[128], cmd[300];
	FILE *p;
	char buf[64] = "";

	snprintf(path, sizeof(path), "%s/a.txt", dir);
	cr_assert_eq(ch_write_file_atomic(path, "one\n", 4), 0);
	cr_assert_eq(ch_write_file_atomic(path, "two\n", 4), 0);
	p = fopen(path, "r");
	cr_assert(fgets(buf, sizeof(buf), p));
	fclose(p);
	cr_expect_str_eq(buf, "two\n");
	snprintf(fifo, sizeof(fifo), "%s/f.txt", dir);
	cr_assert_eq(mkfifo(fifo, 0644), 0);
	cr_redirect_stderr();
	cr_expect_eq(ch_write_file_atomic(fifo, "x", 1), CH_ERR_RUNTIME);
	snprintf(cmd, sizeof(cmd), "test -p '%s' && test -z \"$(ls '%s' | grep tmp)\"", fifo, dir);
	cr_expect_eq(system(cmd), 0, "the pipe stays, no temporary is left");
}

Test(result, missing_directory_is_usage_error)
{
	struct ch_result *r = ch_result_new("x", 0, NULL);
	cr_redirect_stderr();
	cr_assert_eq(ch_result_set_path(r, "/nonexistent-dir-ch/r.json", 0), CH_ERR_USAGE);
	ch_result_free(r);
}
