/*
 * hr_hist_kfault.c - the history's kernel-log faults (hr_hist_kfault.h).
 */
#include "report/history/hr_hist_kfault.h"
#include "report/hr_util.h"
#include "base/ch_common.h"

#include <stdio.h>
#include <string.h>

static int db_err(sqlite3 *db, const char *what)
{
	ch_error("history database: %s: %s", what, sqlite3_errmsg(db));
	return CH_ERR_RUNTIME;
}

/* An input problem: the file skipped (printed when there is no @is). */
static int skip(struct hr_issues *is, const char *path, const char *where, const char *what)
{
	if (is)
		hr_issue_add(is, HR_ISSUE_SKIPPED, path, 0, 0, "%s: expected %s; file skipped", where, what);
	else
		ch_error("%s: %s: expected %s", path, where, what);
	return CH_ERR_USAGE;
}

static int fatal_action(const char *a)
{
	return !strcmp(a, "reset") || !strcmp(a, "drain") || !strcmp(a, "reboot");
}

/* Whether fault @k is one (the fields a row needs); 0 when it is left out
 * (link_up, action none), 1 to record, -1 when it is not a fault. */
static int usable(const struct hr_result_kfault *k)
{
	if (k->kind.str && !strcmp(k->kind.str, "link_up"))
		return 0;
	if (!k->kind.str || !k->device.str || !k->action.str || !k->code.is_int || !k->lines.is_int)
		return -1;
	return strcmp(k->action.str, "none") != 0;
}

static int insert_fault(sqlite3_stmt *st, const char *night, const char *node, const char *path,
			const struct hr_result_kfault *k)
{
	sqlite3_reset(st);
	sqlite3_bind_text(st, 1, night, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, node, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, k->device.str, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 4, k->kind.str, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 5, (sqlite3_int64)k->code.i);
	sqlite3_bind_int(st, 6, fatal_action(k->action.str));
	sqlite3_bind_int64(st, 7, (sqlite3_int64)k->lines.i);
	if (k->gpu_index.is_int)
		sqlite3_bind_int64(st, 8, (sqlite3_int64)k->gpu_index.i);
	else
		sqlite3_bind_null(st, 8);
	if (k->uuid.str)
		sqlite3_bind_text(st, 9, k->uuid.str, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, 9);
	sqlite3_bind_text(st, 10, path, -1, SQLITE_TRANSIENT);
	return sqlite3_step(st) == SQLITE_DONE ? 0 : -1;
}

int hr_hist_kfault_record(sqlite3 *db, const char *night, const char *path, const struct hr_result *r,
			  size_t *nrec, struct hr_issues *is)
{
	sqlite3_stmt *st = NULL;
	size_t i;
	int rc = 0;

	if (!r->kfaults_list.is_array)
		return skip(is, path, "results.kernel_log.faults", "an array");
	for (i = 0; i < r->kfaults_list.n; i++)
		if (usable(&r->kfaults[i]) < 0) {
			char where[64];
			snprintf(where, sizeof(where), "results.kernel_log.faults[%zu]", i);
			return skip(is, path, where, "a fault (kind, device, integer code and lines, action)");
		}
	if (sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO kernel_nights VALUES(?1, ?2, ?3)", -1, &st, NULL) != SQLITE_OK)
		return db_err(db, "prepare");
	sqlite3_bind_text(st, 1, night, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 2, r->hostname, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(st, 3, path, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) != SQLITE_DONE)
		rc = db_err(db, "record");
	sqlite3_finalize(st);
	if (rc)
		return rc;
	(*nrec)++;
	if (sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO kernel_faults VALUES(?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
			       -1, &st, NULL) != SQLITE_OK)
		return db_err(db, "prepare");
	for (i = 0; !rc && i < r->kfaults_list.n; i++) {
		if (usable(&r->kfaults[i]) != 1)
			continue;
		if (insert_fault(st, night, r->hostname, path, &r->kfaults[i]))
			rc = db_err(db, "record");
		else
			(*nrec)++;
	}
	sqlite3_finalize(st);
	return rc;
}

/* The window: the last @window nights of the history up to @night. */
#define WINDOW                                                                                          \
	"WITH w AS (SELECT night FROM (SELECT night FROM metrics UNION SELECT night FROM kernel_nights"   \
	" UNION SELECT night FROM kernel_faults) WHERE ?1 IS NULL OR night <= ?1 ORDER BY night DESC LIMIT ?2) "

/* One "XID" line for node @node: its nights with Xids, from @per (the
 * per_night array, ordered by node and night). */
static void print_node(const json_t *per, const char *node, long read, long with)
{
	size_t i;
	const json_t *e;
	printf("XID %s: Xids on %ld of the %ld night%s its kernel log was read (", hr_term(node), with, read,
	       read == 1 ? "" : "s");
	int first = 1;
	json_array_foreach(per, i, e) {
		long fa = (long)json_integer_value(json_object_get(e, "xid_fatal"));
		long in = (long)json_integer_value(json_object_get(e, "xid_info"));
		if (strcmp(json_string_value(json_object_get(e, "node")), node) || fa + in == 0)
			continue;
		printf("%s%.10s: %ld fatal, %ld information", first ? "" : "; ",
		       json_string_value(json_object_get(e, "night")), fa, in);
		first = 0;
	}
	printf("); threshold: Xids on %d nights; source: the kernel_log result files (docs/xid.md)\n",
	       HR_HIST_XID_NIGHTS);
}

static int per_night(sqlite3 *db, const char *night, int window, json_t *per)
{
	static const char *const q = WINDOW
		"SELECT node, night, SUM(kind = 'xid' AND fatal), SUM(kind = 'xid' AND NOT fatal),"
		" SUM(kind <> 'xid' AND fatal), SUM(kind <> 'xid' AND NOT fatal) FROM kernel_faults"
		" WHERE night IN w GROUP BY node, night ORDER BY node, night";
	sqlite3_stmt *st;
	int s;
	if (sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK)
		return db_err(db, "read");
	if (night)
		sqlite3_bind_text(st, 1, night, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 2, window);
	while ((s = sqlite3_step(st)) == SQLITE_ROW)
		json_array_append_new(per, json_pack("{s:s, s:s, s:I, s:I, s:I, s:I}",
			"node", (const char *)sqlite3_column_text(st, 0), "night", (const char *)sqlite3_column_text(st, 1),
			"xid_fatal", (json_int_t)sqlite3_column_int64(st, 2), "xid_info", (json_int_t)sqlite3_column_int64(st, 3),
			"other_fatal", (json_int_t)sqlite3_column_int64(st, 4), "other_info", (json_int_t)sqlite3_column_int64(st, 5)));
	sqlite3_finalize(st);
	return s == SQLITE_DONE ? 0 : db_err(db, "read");
}

static int nights_read(sqlite3 *db, const char *night, int window, json_t *read)
{
	static const char *const q = WINDOW
		"SELECT node, COUNT(*) FROM kernel_nights WHERE night IN w GROUP BY node ORDER BY node";
	sqlite3_stmt *st;
	int s;
	if (sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK)
		return db_err(db, "read");
	if (night)
		sqlite3_bind_text(st, 1, night, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 2, window);
	while ((s = sqlite3_step(st)) == SQLITE_ROW)
		json_object_set_new(read, (const char *)sqlite3_column_text(st, 0), json_integer(sqlite3_column_int64(st, 1)));
	sqlite3_finalize(st);
	return s == SQLITE_DONE ? 0 : db_err(db, "read");
}

int hr_hist_kfault_check(sqlite3 *db, const char *night, int window, int quiet, json_t **out)
{
	json_t *per = json_array(), *read = json_object(), *rec = json_array(), *with = json_object();
	const json_t *e;
	const char *node;
	json_t *v;
	size_t i;
	int rc;

	*out = NULL;
	if (!per || !read || !rec || !with) {
		ch_error("out of memory");
		rc = CH_ERR_RUNTIME;
		goto out;
	}
	if ((rc = per_night(db, night, window, per)) || (rc = nights_read(db, night, window, read)))
		goto out;
	json_array_foreach(per, i, e) {
		node = json_string_value(json_object_get(e, "node"));
		if (json_integer_value(json_object_get(e, "xid_fatal")) + json_integer_value(json_object_get(e, "xid_info")) > 0)
			json_object_set_new(with, node, json_integer(json_integer_value(json_object_get(with, node)) + 1));
	}
	json_object_foreach(with, node, v) {
		long n = (long)json_integer_value(v), r = (long)json_integer_value(json_object_get(read, node));
		if (n < HR_HIST_XID_NIGHTS)
			continue;
		json_array_append_new(rec, json_string(node));
		if (!quiet)
			print_node(per, node, r > n ? r : n, n);
	}
	*out = json_pack("{s:o, s:o, s:o, s:i}", "per_night", per, "nights_read", read, "recurring", rec,
			 "min_nights", HR_HIST_XID_NIGHTS);
	per = read = rec = NULL;
	if (!*out) {
		ch_error("out of memory");
		rc = CH_ERR_RUNTIME;
	}
out:
	json_decref(per);
	json_decref(read);
	json_decref(rec);
	json_decref(with);
	return rc;
}
