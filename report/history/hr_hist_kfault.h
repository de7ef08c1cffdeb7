/*
 * hr_hist_kfault.h - the history's kernel-log faults (inside
 * report/history only): each night's kernel_log result files (`health_report
 * kernel-log`, docs/xid.md) kept per node, and the count of their Xids per
 * night and node, naming a node with Xids on {min_nights} or more nights.
 */
#ifndef HR_HIST_KFAULT_H
#define HR_HIST_KFAULT_H

#include <stddef.h>
#include <jansson.h>
#include <sqlite3.h>

#include "report/read/hr_input.h"
#include "report/read/hr_result.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The tables (run by hr_history_open() inside its transaction). */
#define HR_HIST_KFAULT_DDL                                                                    \
	"CREATE TABLE IF NOT EXISTS kernel_nights(night TEXT NOT NULL, node TEXT NOT NULL,"   \
	" source TEXT, PRIMARY KEY(node, night));"                                            \
	"CREATE TABLE IF NOT EXISTS kernel_faults(night TEXT NOT NULL, node TEXT NOT NULL,"   \
	" device TEXT NOT NULL, kind TEXT NOT NULL, code INTEGER NOT NULL, fatal INTEGER NOT NULL," \
	" lines INTEGER NOT NULL, gpu_index INTEGER, uuid TEXT, source TEXT,"                 \
	" PRIMARY KEY(node, device, kind, code, night));"

/* A node is named when it had Xids on this many nights of the window. */
#define HR_HIST_XID_NIGHTS 2

/**
 * hr_hist_kfault_record - kernel_log result @r (file @path) of night
 * @night into @db: the node's night (a clean log counts as a night read)
 * and one row per fault (a device and a code; "link_up" groups and faults
 * whose action is "none" left out). A fault that is not one (no kind,
 * device, integer code or action) is an input problem in @is (the file
 * skipped). @nrec: [in,out] rows recorded (not counted as the history's
 * values: its caller keeps them apart).
 * Returns 0; CH_ERR_USAGE when the file is skipped; CH_ERR_RUNTIME on an
 * SQLite error (printed).
 */
int hr_hist_kfault_record(sqlite3 *db, const char *night, const char *path, const struct hr_result *r,
			  size_t *nrec, struct hr_issues *is);

/**
 * hr_hist_kfault_check - the Xids per night and node over the last @window
 * nights of the history up to @night (NULL: the latest): printed (unless
 * @quiet) as one "XID NODE: ..." line per node with Xids on
 * HR_HIST_XID_NIGHTS nights or more, and returned in @out (a new JSON
 * object: "per_night" [{node, night, xid_fatal, xid_info, other_fatal,
 * other_info}], "nights_read" {node: n}, "recurring" [node names]).
 * Returns 0, or CH_ERR_RUNTIME on an SQLite error or out of memory
 * (printed).
 */
int hr_hist_kfault_check(sqlite3 *db, const char *night, int window, int quiet, json_t **out);

#ifdef __cplusplus
}
#endif
#endif
