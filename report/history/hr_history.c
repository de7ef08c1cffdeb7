/*
 * hr_history.c - nightly history of headline metrics in SQLite and the
 * regression check against each series' own trailing baseline
 * (hr_history.h; method in docs/workflows.md).
 */
#include "report/history/hr_history.h"
#include "report/judge/hr_rules.h"
#include "report/history/hr_hist_kfault.h"
#include "report/history/hr_hist_out.h"
#include "report/judge/hr_checkpoint.h"
#include "report/judge/hr_quality.h"
#include "report/read/hr_result.h"
#include "report/read/hr_walk.h"
#include "report/hr_util.h"
#include "base/ch_common.h"
#include "base/ch_parse.h"
#include "base/ch_result.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <float.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define HISTORY_SCHEMA "clusterhealth.history"
#define HISTORY_SCHEMA_VERSION "1"

struct hr_history {
	sqlite3 *db;
	char *path;
	sqlite3_stmt *ins;
	int lock_timeout_sec;
	size_t noisy_files, noisy_values; /* left out: noisy measurements */
	char noisy_why[240];
};

void hr_history_not_recorded(const struct hr_history *h, size_t *files, size_t *values, const char **why)
{
	*files = h->noisy_files;
	*values = h->noisy_values;
	*why = h->noisy_why;
}

/* a value (or a file, @file) left out as noisy, for hr_history_not_recorded() */
static void noisy(struct hr_history *h, int file, const char *why)
{
	if (file)
		h->noisy_files++;
	else
		h->noisy_values++;
	if (!h->noisy_why[0])
		snprintf(h->noisy_why, sizeof(h->noisy_why), "%s", why);
}

/* 1 when the point behind roof @compute (-1 memory) of @d was too noisy */
static int roof_noisy(struct hr_history *h, const struct hr_result_device *d, int compute)
{
	const struct hr_result_point *p = hr_result_roof_point(d, compute);
	struct hr_quality q;
	char at[64];

	hr_quality_init(&q);
	snprintf(at, sizeof(at), "%s's %s roof", d->device.str ? d->device.str : "?",
		 compute < 0 ? "memory" : d->compute[compute].dtype);
	if (p && p->time_sec.present && p->time_sec.cv.num >= 0)
		hr_quality_cv(&q, p->time_sec.cv.num, at);
	if (q.noisy)
		noisy(h, 0, q.why);
	return q.noisy;
}

static int sql_err(struct hr_history *h, const char *what)
{
	int e = sqlite3_errcode(h->db);

	if (e == SQLITE_BUSY || e == SQLITE_LOCKED) {
		ch_error("history database '%s' is locked by another process (waited %d s; raise --lock-timeout to wait longer)",
			 h->path, h->lock_timeout_sec);
		return CH_ERR_RUNTIME;
	}
	ch_error("history '%s': %s: %s", h->path, what, sqlite3_errmsg(h->db));
	return CH_ERR_RUNTIME;
}

/* The application id (SQLite header offset 68) of a history: "CHHY". Older
 * histories have 0 and are known by their meta table. */
#define HISTORY_APP_ID 0x43484859

/*
 * What the database is, read only: 0 a clusterhealth history of this
 * version, 1 an empty database (no table, no application id of another
 * application, no user_version), CH_ERR_USAGE something else (message
 * printed), CH_ERR_RUNTIME locked or an SQLite error (printed).
 */
static int check_marker(struct hr_history *h)
{
	sqlite3_stmt *st = NULL;
	char schema[64] = "", version[64] = "";
	long long app_id = 0, user_version = 0;
	int rc, n, have_schema = 0, have_version = 0;

	if (sqlite3_prepare_v2(h->db, "SELECT (SELECT count(*) FROM sqlite_master), "
				      "(SELECT application_id FROM pragma_application_id), "
				      "(SELECT user_version FROM pragma_user_version)", -1, &st, NULL) != SQLITE_OK ||
	    (rc = sqlite3_step(st)) != SQLITE_ROW) {
		int e = sqlite3_errcode(h->db);
		sqlite3_finalize(st);
		if (e == SQLITE_NOTADB || e == SQLITE_CORRUPT) {
			ch_error("'%s' is not a usable history database: %s; nothing changed", h->path, sqlite3_errmsg(h->db));
			return CH_ERR_USAGE;
		}
		return sql_err(h, "read");
	}
	n = sqlite3_column_int(st, 0);
	app_id = sqlite3_column_int64(st, 1);
	user_version = sqlite3_column_int64(st, 2);
	sqlite3_finalize(st);
	if ((app_id != 0 && app_id != HISTORY_APP_ID) || user_version != 0) {
		ch_error("'%s' is an SQLite database of another application (application_id %lld, user_version %lld); refusing to write into it, nothing changed",
			 h->path, app_id, user_version);
		return CH_ERR_USAGE;
	}
	if (n == 0)
		return 1;
	st = NULL;
	if (sqlite3_prepare_v2(h->db, "SELECT key, value FROM meta WHERE key IN ('schema', 'schema_version')",
			       -1, &st, NULL) != SQLITE_OK) {
		int e = sqlite3_errcode(h->db);
		sqlite3_finalize(st);
		if (e == SQLITE_BUSY || e == SQLITE_LOCKED)
			return sql_err(h, "read");
		ch_error("'%s' is an SQLite database of another application (no '%s' marker in a meta table); refusing to write into it, nothing changed",
			 h->path, HISTORY_SCHEMA);
		return CH_ERR_USAGE;
	}
	/* the values are copied: a column's text lives only until the next step */
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *k = (const char *)sqlite3_column_text(st, 0);
		const char *v = (const char *)sqlite3_column_text(st, 1);
		if (k && !strcmp(k, "schema")) {
			have_schema = 1;
			snprintf(schema, sizeof(schema), "%s", v ? v : "");
		} else if (k && !strcmp(k, "schema_version")) {
			have_version = 1;
			snprintf(version, sizeof(version), "%s", v ? v : "");
		}
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		int e = sqlite3_errcode(h->db);
		if (e == SQLITE_BUSY || e == SQLITE_LOCKED)
			return sql_err(h, "read");
	}
	if (!have_schema || strcmp(schema, HISTORY_SCHEMA)) {
		ch_error("'%s' is an SQLite database of another application (no '%s' marker in a meta table); refusing to write into it, nothing changed",
			 h->path, HISTORY_SCHEMA);
		return CH_ERR_USAGE;
	}
	if (!have_version || strcmp(version, HISTORY_SCHEMA_VERSION)) {
		ch_error("'%s' is a clusterhealth history %s; this build reads version %s; nothing changed",
			 h->path, have_version ? "of another version" : "without a schema_version", HISTORY_SCHEMA_VERSION);
		if (have_version)
			ch_error("'%s': its schema_version is '%.40s'", h->path, version);
		return CH_ERR_USAGE;
	}
	return 0;
}

/* What a path that is not a regular file is, for the message. */
static const char *file_kind(mode_t m)
{
	return S_ISDIR(m) ? "a directory" : S_ISCHR(m) ? "a character device" : S_ISBLK(m) ? "a block device" :
	       S_ISFIFO(m) ? "a named pipe" : S_ISSOCK(m) ? "a socket" : S_ISLNK(m) ? "a symbolic link" :
	       "not a regular file";
}

/*
 * Before SQLite opens @path: an existing path must be a regular file (a
 * device, pipe or directory is refused, never written), owned by root or
 * this user and not writable by anyone (others); a missing one is
 * created here, empty, with O_EXCL | O_NOFOLLOW (never through a planted
 * link). Returns 0 or CH_ERR_USAGE (printed).
 */
static int check_db_file(const char *path)
{
	struct stat st;
	int fd;

	if (stat(path, &st) == 0) {
		if (!S_ISREG(st.st_mode))
			return ch_usage_error("history database '%s' is %s, not a regular file; nothing changed", path,
					      file_kind(st.st_mode));
		/* its REGRESSED metrics name drain candidates: never one anyone may write */
		if (st.st_uid != 0 && st.st_uid != geteuid())
			return ch_usage_error("history database '%s' is owned by uid %ld, neither root nor this user "
					      "(uid %ld): not trusting it; nothing changed", path, (long)st.st_uid,
					      (long)geteuid());
		if (st.st_mode & S_IWOTH)
			return ch_usage_error("history database '%s' is writable by anyone (mode %04o): not trusting it "
					      "(chmod o-w); nothing changed", path, (unsigned)(st.st_mode & 07777));
		return 0;
	}
	if (errno != ENOENT)
		return ch_usage_error("cannot open history database '%s': %s", path, strerror(errno));
	if (lstat(path, &st) == 0) /* a dangling symbolic link */
		return ch_usage_error("history database '%s' is a symbolic link to a missing file; nothing created", path);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return ch_usage_error("cannot create history database '%s': %s", path, strerror(errno));
	close(fd);
	return 0;
}

/* Whether the metrics table has the columns @cols ("a, b"). */
static int has_columns(struct hr_history *h, const char *cols)
{
	sqlite3_stmt *st = NULL;
	char q[160];
	int ok;
	snprintf(q, sizeof(q), "SELECT %s FROM metrics LIMIT 0", cols);
	ok = sqlite3_prepare_v2(h->db, q, -1, &st, NULL) == SQLITE_OK;
	sqlite3_finalize(st);
	return ok;
}

/* @cols missing: add them with @ddl (ALTER TABLE ...;) in a transaction;
 * 0, or an error (sql_err(), naming @what). */
static int add_columns(struct hr_history *h, const char *cols, const char *ddl, const char *what)
{
	char q[320];
	if (has_columns(h, cols))
		return 0;
	snprintf(q, sizeof(q), "BEGIN IMMEDIATE; %s COMMIT;", ddl);
	if (sqlite3_exec(h->db, q, NULL, NULL, NULL) != SQLITE_OK) {
		sqlite3_exec(h->db, "ROLLBACK", NULL, NULL, NULL);
		if (!has_columns(h, cols)) /* not added by another writer meanwhile */
			return sql_err(h, what);
	}
	return 0;
}

/* A history written before the devices' identity was kept (no device_id,
 * model columns), or before the agreement of two measurements was (no
 * value_both), gets them, empty (NULL: measured once, identity unknown)
 * for its earlier nights: the same schema version, since they are
 * optional and an older binary's inserts name their columns. 0, or an
 * error (sql_err()). */
static int add_identity_columns(struct hr_history *h)
{
	int rc = add_columns(h, "device_id, model", "ALTER TABLE metrics ADD COLUMN device_id TEXT;"
			     " ALTER TABLE metrics ADD COLUMN model TEXT;", "add the device identity columns");
	return rc ? rc : add_columns(h, "value_both", "ALTER TABLE metrics ADD COLUMN value_both REAL;",
				     "add the value_both column");
}

int hr_history_open(const char *path, int lock_timeout_sec, struct hr_history **out)
{
	static const char *const ddl =
		"BEGIN IMMEDIATE;"
		"CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
		"CREATE TABLE IF NOT EXISTS metrics("
		" night TEXT NOT NULL, node TEXT NOT NULL, gpu TEXT NOT NULL,"
		" metric TEXT NOT NULL, value REAL NOT NULL, source TEXT,"
		" device_id TEXT, model TEXT, value_both REAL,"
		" PRIMARY KEY(node, gpu, metric, night));"
		"CREATE INDEX IF NOT EXISTS metrics_night ON metrics(night);"
		HR_HIST_KFAULT_DDL
		"INSERT OR IGNORE INTO meta VALUES('schema', '" HISTORY_SCHEMA "');"
		"INSERT OR IGNORE INTO meta VALUES('schema_version', '" HISTORY_SCHEMA_VERSION "');"
		"PRAGMA application_id = 1128810585;" /* HISTORY_APP_ID */
		"COMMIT;";
	struct hr_history *h = calloc(1, sizeof(*h));
	int rc;

	*out = NULL;
	if (!h || !(h->path = strdup(path))) {
		free(h);
		return CH_ERR_RUNTIME;
	}
	h->lock_timeout_sec = lock_timeout_sec < 0 ? 0 : lock_timeout_sec;
	if ((rc = check_db_file(path))) {
		hr_history_close(h);
		return rc;
	}
	if (sqlite3_open_v2(path, &h->db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
		ch_error("cannot open history database '%s': %s", path, h->db ? sqlite3_errmsg(h->db) : "out of memory");
		hr_history_close(h);
		return CH_ERR_USAGE;
	}
	/* until the database is known to be ours, closing it must not
	 * checkpoint another application's write-ahead log into its file */
	sqlite3_db_config(h->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
	sqlite3_busy_timeout(h->db, h->lock_timeout_sec > INT_MAX / 1000 ? INT_MAX : h->lock_timeout_sec * 1000);
	/* nothing is written before the database is known to be ours (or empty) */
	rc = check_marker(h);
	if (rc == 1) {
		if (sqlite3_exec(h->db, ddl, NULL, NULL, NULL) != SQLITE_OK) {
			rc = sql_err(h, "create the tables");
			sqlite3_exec(h->db, "ROLLBACK", NULL, NULL, NULL);
		} else {
			rc = check_marker(h);
		}
	}
	if (!rc)
		rc = add_identity_columns(h);
	if (rc) {
		hr_history_close(h);
		return rc < 0 ? rc : CH_ERR_RUNTIME;
	}
	sqlite3_db_config(h->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 0, NULL);
	/* WAL: readers never block the nightly writer, nor it them */
	if (sqlite3_exec(h->db, "PRAGMA journal_mode=WAL", NULL, NULL, NULL) != SQLITE_OK)
		ch_warn("history '%s': cannot switch to WAL journal mode (%s); readers may delay writers",
			path, sqlite3_errmsg(h->db));
	if (sqlite3_prepare_v2(h->db, "INSERT OR REPLACE INTO metrics(night, node, gpu, metric, value, source, device_id,"
			       " model, value_both) VALUES(?,?,?,?,?,?,?,?,?)",
			       -1, &h->ins, NULL) != SQLITE_OK) {
		rc = sql_err(h, "prepare");
		hr_history_close(h);
		return rc;
	}
	*out = h;
	return 0;
}

void hr_history_close(struct hr_history *h)
{
	if (!h)
		return;
	sqlite3_finalize(h->ins);
	sqlite3_close(h->db);
	free(h->path);
	free(h);
}

/* bind @s as text, or NULL */
static void bind_text_or_null(sqlite3_stmt *st, int i, const char *s)
{
	if (s)
		sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

/* hr_history_record() with the device's identity: @id its UUID (else its
 * serial), @model its model (SKU, else name); NULL when unknown; @both the
 * larger of a figure's two measurements (agreed()), NAN when measured once. */
static int record_device(struct hr_history *h, const char *night, const char *node, const char *gpu,
			 const char *metric, double value, const char *source, const char *id, const char *model,
			 double both)
{
	if (!isfinite(value))
		return CH_ERR_USAGE;
	sqlite3_reset(h->ins);
	sqlite3_bind_text(h->ins, 1, night, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(h->ins, 2, node, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(h->ins, 3, gpu, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(h->ins, 4, metric, -1, SQLITE_TRANSIENT);
	sqlite3_bind_double(h->ins, 5, value);
	bind_text_or_null(h->ins, 6, source);
	bind_text_or_null(h->ins, 7, id);
	bind_text_or_null(h->ins, 8, model);
	if (isfinite(both) && both > 0)
		sqlite3_bind_double(h->ins, 9, both);
	else
		sqlite3_bind_null(h->ins, 9);
	if (sqlite3_step(h->ins) != SQLITE_DONE)
		return sql_err(h, "insert");
	return 0;
}

int hr_history_record(struct hr_history *h, const char *night, const char *node,
		      const char *gpu, const char *metric, double value,
		      const char *source)
{
	return record_device(h, night, node, gpu, metric, value, source, NULL, NULL, NAN);
}

/* ------------------------------------------------- headline metrics */

static int bad(struct hr_issues *is, const char *path, const char *where, const char *what)
{
	if (is)
		hr_issue_add(is, HR_ISSUE_SKIPPED, path, 0, 0, "%s: expected %s; file skipped", where, what);
	else
		ch_error("%s: %s: expected %s", path, where, what);
	return CH_ERR_USAGE;
}

#define REC_DEV(node, gpu, metric, v, id, model, both)                              \
	do {                                                                          \
		int rc_ = record_device(h, night, node, gpu, metric, v, path, id, model, both); \
		if (rc_)                                                              \
			return rc_;                                                   \
		if (nrec)                                                             \
			(*nrec)++;                                                    \
	} while (0)
#define REC(node, gpu, metric, v) REC_DEV(node, gpu, metric, v, NULL, NULL, NAN)

/* 0 when @v is absent, null or a number from @lo to @hi (@what says so);
 * else bad(): the file is skipped */
static int check_value(struct hr_issues *is, const char *path, const char *where, const struct hr_rv *v,
		       double lo, double hi, const char *what)
{
	if (!v->json || v->is_null || (v->num >= lo && v->num <= hi))
		return 0;
	return bad(is, path, where, what);
}

/* Two PCI bus ids name the same device: the same bus, device and function
 * whatever the case and the width of the domain ("0000:1b:00.0" and NVML's
 * "00000000:1B:00.0"). */
static int same_bus(const char *x, const char *y)
{
	const char *a = strchr(x, ':'), *b = strchr(y, ':');
	return a && b && strtoul(x, NULL, 16) == strtoul(y, NULL, 16) && !strcasecmp(a, b);
}

/* The identity of roofline device @d: the UUID, else the serial, of the
 * file's host.inventory.gpus[] entry on the same PCI bus id; NULL when the
 * file does not say (an older file, a CPU): the series is then its node's
 * and index's alone. */
static const char *device_identity(const struct hr_result *r, const struct hr_result_device *d)
{
	const json_t *gpus = json_object_get(json_object_get(r->host, "inventory"), "gpus"), *g;
	size_t i;
	if (!d->pci_bus_id.str || !json_is_array(gpus))
		return NULL;
	json_array_foreach(gpus, i, g) {
		const char *bus = json_string_value(json_object_get(g, "pci_bus_id"));
		const char *u = json_string_value(json_object_get(g, "uuid"));
		const char *s = json_string_value(json_object_get(g, "serial"));
		if (bus && same_bus(bus, d->pci_bus_id.str))
			return u && *u ? u : s && *s ? s : NULL;
	}
	return NULL;
}

/* The night's value of a figure measured twice: the mean of @v and its
 * re-measurement @again (a fresh measurement at the end of the run: used
 * only when it is a positive finite number), else @v; *@both the larger of
 * the two (NAN when measured once). The mean is what the trend rules
 * follow (a lasting drop, which both measurements see, moves it in full);
 * the larger is what a far night is judged by: the night is that low only
 * when both measurements are, so a tail of the noise on one of them is
 * not a far night (docs/workflows.md, "What is recorded"). */
static double agreed_num(double v, double x, double *both)
{
	int two = isfinite(x) && x > 0;
	*both = two ? (x > v ? x : v) : NAN;
	return two ? 0.5 * v + 0.5 * x : v; /* no overflow near DBL_MAX */
}

/* agreed_num() of a re-measurement as read (NULL, absent, null: none) */
static double agreed(double v, const struct hr_rv *again, double *both)
{
	return agreed_num(v, again && again->json && !again->is_null ? again->num : NAN, both);
}

/* roofline's re-measurement of device @d's roof @metric ("memory_gbps",
 * "compute_gflops.bf16"): results.flagged[]'s confirm_value where
 * "confirmed" is true or false, else the device's roofs_again (a CPU
 * socket's every run), into *@buf; NULL none. */
static const struct hr_rv *roof_again(const struct hr_result *r, const struct hr_result_device *d, const char *metric,
				      struct hr_rv *buf)
{
	size_t k;
	for (k = 0; k < r->flagged_list.n; k++) {
		const struct hr_result_flag *fl = &r->flagged[k];
		if (fl->device.str && fl->metric.str && !strcmp(fl->device.str, d->device.str) &&
		    !strcmp(fl->metric.str, metric) && fl->confirmed.json && json_is_boolean(fl->confirmed.json))
			return &fl->confirm_value;
	}
	*buf = hr_result_roof_again(d, metric);
	return buf->json ? buf : NULL;
}

static int rec_roofline(struct hr_history *h, struct hr_issues *is, const char *night, const char *path,
			const struct hr_result *r, size_t *nrec)
{
	size_t i, k;

	if (!r->devices_list.is_array)
		return bad(is, path, "results.devices", "an array");
	for (i = 0; i < r->devices_list.n; i++) {
		const struct hr_result_device *d = &r->devices[i];
		const char *dev = d->device.str, *st = d->status.str;
		const char *id = device_identity(r, d), *model = d->sku.str ? d->sku.str : d->name.str;
		char metric[128];
		double both, mean;
		struct hr_rv abuf;

		if (!dev)
			return bad(is, path, "results.devices[].device", "a string");
		if (!st || strcmp(st, "ok") || !d->has_roofs)
			continue;
		if (check_value(is, path, "results.devices[].roofs.memory_gbps", &d->memory_gbps, 0, DBL_MAX,
				"a number >= 0"))
			return CH_ERR_USAGE;
		if (d->memory_gbps.num > 0 && !roof_noisy(h, d, -1)) {
			mean = agreed(d->memory_gbps.num, roof_again(r, d, "memory_gbps", &abuf), &both);
			REC_DEV(r->hostname, dev, "roofline.memory_gbps", mean, id, model, both);
		}
		for (k = 0; k < d->ncompute; k++) {
			if (check_value(is, path, "results.devices[].roofs.compute_gflops", &d->compute[k].gflops, 0,
					DBL_MAX, "a number >= 0"))
				return CH_ERR_USAGE;
			if (!(d->compute[k].gflops.num > 0) || roof_noisy(h, d, (int)k))
				continue;
			snprintf(metric, sizeof(metric), "roofline.compute_gflops.%s", d->compute[k].dtype);
			mean = agreed(d->compute[k].gflops.num, roof_again(r, d, metric + strlen("roofline."), &abuf), &both);
			REC_DEV(r->hostname, dev, metric, mean, id, model, both);
		}
	}
	return 0;
}

/* large-message busbw of a sweep: the producer's, else the last row's out-of-place busbw */
static double sweep_large_busbw(const struct hr_result_sweep *sw)
{
	if (!isnan(sw->large_busbw.num))
		return sw->large_busbw.num;
	return sw->rows_list.n ? sw->rows[sw->rows_list.n - 1].oop_busbw.num : NAN;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* one value of the pairs' median: @pairs maps node to algo to [busbw,
 * both] of each pair (both: agreed()'s, NAN measured once: stored as null) */
static int pair_add(json_t *pairs, const char *node, const char *algo, double bw, double both)
{
	json_t *algos = json_object_get(pairs, node), *arr;

	if (!algos && (!(algos = json_object()) || json_object_set_new(pairs, node, algos)))
		return CH_ERR_RUNTIME;
	arr = json_object_get(algos, algo);
	if (!arr && (!(arr = json_array()) || json_object_set_new(algos, algo, arr)))
		return CH_ERR_RUNTIME;
	return json_array_append_new(arr, json_pack("[f, o]", bw, isfinite(both) ? json_real(both) : json_null())) ?
		       CH_ERR_RUNTIME : 0;
}

/* the per-node medians over the inter-node pairs (of the larger
 * measurements too, where every pair was measured twice) */
static int rec_pairs(struct hr_history *h, const char *night, const char *path, json_t *pairs, size_t *nrec)
{
	const char *node, *algo;
	json_t *algos, *arr;

	json_object_foreach(pairs, node, algos) {
		json_object_foreach(algos, algo, arr) {
			double v[4096], b[4096];
			size_t n = 0, nb = 0, j;
			char metric[128];
			for (j = 0; j < json_array_size(arr) && n < 4096; j++) {
				json_t *e = json_array_get(arr, j), *x = json_array_get(e, 1);
				v[n++] = json_real_value(json_array_get(e, 0));
				if (json_is_real(x))
					b[nb++] = json_real_value(x);
			}
			snprintf(metric, sizeof(metric), "allreduce.pair.%s.busbw_gbps", algo);
			REC_DEV(node, "-", metric, median(v, n), NULL, NULL, nb == n ? median(b, nb) : NAN);
		}
	}
	return 0;
}

static int rec_allreduce(struct hr_history *h, struct hr_issues *is, const char *night, const char *path,
			 const struct hr_result *r, size_t *nrec)
{
	json_t *pairs; /* node -> algo -> array of busbw */
	size_t i, j;
	int rc = 0;

	if (!r->sweeps_list.is_array)
		return bad(is, path, "results.sweeps", "an array");
	if (!(pairs = json_object()))
		return CH_ERR_RUNTIME;
	for (i = 0; i < r->sweeps_list.n && !rc; i++) {
		const struct hr_result_sweep *sw = &r->sweeps[i];
		const char *kind = sw->group_kind.str, *algo = sw->algo.str;
		size_t nn = sw->nodes_list.n;
		double bw = sweep_large_busbw(sw), both = NAN;
		char metric[128];

		if (!kind || !algo) {
			rc = bad(is, path, "results.sweeps[].group_kind/algo", "strings");
			break;
		}
		if (!isfinite(bw) || bw <= 0)
			continue;
		if (sw->rows_list.n) {
			/* the headline cell: out-of-place at the largest size */
			const struct hr_result_cell *cl = &sw->rows[sw->rows_list.n - 1].oop;
			struct hr_quality q;
			hr_quality_init(&q);
			if (cl->time_us.present && cl->time_us.cv.num >= 0)
				hr_quality_cv(&q, cl->time_us.cv.num, "the largest size");
			if (q.noisy) {
				noisy(h, 0, q.why);
				continue;
			}
			/* allreduce_bw measures the largest size again (its "confirm") */
			if (cl->confirm.present)
				bw = agreed(bw, &cl->confirm.busbw, &both);
		}
		if (!strcmp(kind, "node") || (!strcmp(kind, "world") && nn <= 1)) {
			const char *node = nn && sw->nodes[0].str ? sw->nodes[0].str : r->hostname;
			snprintf(metric, sizeof(metric), "allreduce.intra.%s.busbw_gbps", algo);
			if (!(rc = record_device(h, night, node, "-", metric, bw, path, NULL, NULL, both)) && nrec)
				(*nrec)++;
		} else if (!strcmp(kind, "world")) {
			snprintf(metric, sizeof(metric), "allreduce.world.%s.busbw_gbps", algo);
			if (!(rc = hr_history_record(h, night, HR_HISTORY_FLEET, "-", metric, bw, path)) && nrec)
				(*nrec)++;
		} else if (!strcmp(kind, "pair") && nn > 1) {
			for (j = 0; j < nn && !rc; j++)
				if (sw->nodes[j].str)
					rc = pair_add(pairs, sw->nodes[j].str, algo, bw, both);
		}
	}
	if (!rc)
		rc = rec_pairs(h, night, path, pairs, nrec);
	json_decref(pairs);
	return rc;
}

static int rec_loader(struct hr_history *h, struct hr_issues *is, const char *night, const char *path,
		      const struct hr_result *r, size_t *nrec)
{
	int p;

	if (!r->configs_list.is_array)
		return bad(is, path, "results.configs", "an array");
	p = hr_result_pick_config(r);
	if (p < 0 && r->configs_list.n)
		p = 0;
	if (p >= 0 && check_value(is, path, "results.configs[].accel_util", &r->configs[p].accel_util, 0, 1,
			     "a number from 0 to 1"))
		return CH_ERR_USAGE;
	if (p >= 0 && !isnan(r->configs[p].accel_util.num))
		REC(r->hostname, "-", "loader.accel_util", r->configs[p].accel_util.num);
	return 0;
}

struct ckpt_rec {
	struct hr_history *h;
	const char *night, *path;
	size_t *nrec;
	int rc;
};

/* a host's write rate; written twice (checkpoint_io --repeat): agreed_num() */
static void rec_ckpt_host(void *ctx, const char *host, double gbps, double again)
{
	struct ckpt_rec *c = ctx;
	double both, v = agreed_num(gbps, again, &both);
	if (c->rc == 0 &&
	    (c->rc = record_device(c->h, c->night, host, "-", "checkpoint.write_gbps_per_rank", v, c->path, NULL, NULL, both)) == 0)
		(*c->nrec)++;
}

static int record_result(struct hr_history *h, const char *night, const char *path,
			 const struct hr_result *r, size_t *nrec, struct hr_issues *is)
{
	char where[128];

	if (!r->tool || (r->status && !strcmp(r->status, "unavailable")))
		return 0;
	if (hr_result_control_char(r->doc, where, sizeof(where)))
		return bad(is, path, where, "a string without control characters");
	if (!r->hostname)
		return bad(is, path, "host.hostname", "a string");
	if (!strcmp(r->tool, "kernel_log")) { /* faults, not measurements (nor values): never noisy */
		size_t nkf = 0;
		return hr_hist_kfault_record(h->db, night, path, r, &nkf, is);
	}
	{
		/* a busy or oversubscribed host: nothing of the file is a trend */
		struct hr_quality q;
		int loader = !strcmp(r->tool, "loader_contention");
		if (loader) {
			hr_quality_loader_result(&q, r);
		} else {
			hr_quality_init(&q);
			hr_quality_result_host(&q, r, 0);
		}
		if (q.noisy) {
			noisy(h, 1, q.why);
			return 0;
		}
	}
	if (!strcmp(r->tool, "roofline"))
		return rec_roofline(h, is, night, path, r, nrec);
	if (!strcmp(r->tool, "allreduce_bw"))
		return rec_allreduce(h, is, night, path, r, nrec);
	if (!strcmp(r->tool, "loader_contention"))
		return rec_loader(h, is, night, path, r, nrec);
	if (!strcmp(r->tool, "checkpoint_io")) {
		struct ckpt_rec c = { h, night, path, nrec, 0 };
		int n = hr_ckpt_host_rates(r, rec_ckpt_host, &c);
		return n < 0 ? n : c.rc;
	}
	return 0;
}

int hr_history_record_doc(struct hr_history *h, const char *night, const char *path,
			  json_t *doc, size_t *nrec, struct hr_issues *is)
{
	struct hr_result r;
	int rc = hr_result_read(doc, &r);

	if (!rc)
		rc = record_result(h, night, path, &r, nrec, is);
	hr_result_release(&r);
	return rc;
}

/* ------------------------------------------------------ the check */

int hr_history_latest(struct hr_history *h, char *buf, size_t n)
{
	sqlite3_stmt *st;

	buf[0] = '\0';
	if (sqlite3_prepare_v2(h->db, "SELECT max(night) FROM metrics", -1, &st, NULL) != SQLITE_OK)
		return sql_err(h, "query");
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		snprintf(buf, n, "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return 0;
}

/* --night without inputs names a night the history holds: 0, or
 * CH_ERR_USAGE (said, naming the recorded night it may have meant) when the
 * history has nights but not that one (a date given for nights recorded
 * under their start_utc checked nothing and said NOT JUDGED) */
static int night_recorded(struct hr_history *h, const char *night)
{
	sqlite3_stmt *st;
	char like[40] = "", last[32] = "";
	int have = 0;

	if (sqlite3_prepare_v2(h->db, "SELECT (SELECT count(*) FROM metrics WHERE night = ?1),"
			       " (SELECT min(night) FROM metrics WHERE substr(night, 1, length(?1)) = ?1),"
			       " (SELECT max(night) FROM metrics)", -1, &st, NULL) != SQLITE_OK)
		return sql_err(h, "query");
	sqlite3_bind_text(st, 1, night, -1, SQLITE_TRANSIENT);
	if (sqlite3_step(st) == SQLITE_ROW) {
		have = sqlite3_column_int(st, 0) > 0;
		if (sqlite3_column_type(st, 1) != SQLITE_NULL)
			snprintf(like, sizeof(like), "%s", (const char *)sqlite3_column_text(st, 1));
		if (sqlite3_column_type(st, 2) != SQLITE_NULL)
			snprintf(last, sizeof(last), "%s", (const char *)sqlite3_column_text(st, 2));
	}
	sqlite3_finalize(st);
	if (have || !last[0])
		return 0; /* that night, or an empty history (said as such) */
	if (like[0])
		return ch_usage_error("no night '%s' in '%s': its nights are recorded as they were given (--night) or"
				      " as their result files' start_utc, e.g. '%s'", night, h->path, like);
	return ch_usage_error("no night '%s' in '%s' (the latest recorded: '%s')", night, h->path, last);
}

/* one series' values (oldest first), the larger of each night's two
 * measurements (NAN measured once) and nights, up to @night */
struct series_buf {
	double *v, *both, *single; /* single: hr_noise_single()'s room */
	char (*nights)[32];
	size_t n, cap;
};

/* The series of (@node, @gpu, @metric) up to @night: of the device @id
 * (its UUID or serial) where tonight's value and the earlier ones say which,
 * so that another GPU at the same index (a swap) starts its own series;
 * every night when @id is NULL. */
static int load_series(sqlite3_stmt *hist, const char *node, const char *gpu, const char *metric,
		       const char *id, const char *night, struct series_buf *b)
{
	sqlite3_reset(hist);
	sqlite3_bind_text(hist, 1, node, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(hist, 2, gpu, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(hist, 3, metric, -1, SQLITE_TRANSIENT);
	sqlite3_bind_text(hist, 4, night, -1, SQLITE_TRANSIENT);
	bind_text_or_null(hist, 5, id);
	b->n = 0;
	while (sqlite3_step(hist) == SQLITE_ROW) {
		if (b->n == b->cap) {
			size_t nc = b->cap ? 2 * b->cap : 64;
			double *nv = realloc(b->v, nc * sizeof(*b->v));
			char (*nn)[32];
			if (!nv)
				return CH_ERR_RUNTIME;
			b->v = nv;
			if (!(nv = realloc(b->both, nc * sizeof(*b->both))))
				return CH_ERR_RUNTIME;
			b->both = nv;
			if (!(nv = realloc(b->single, nc * sizeof(*b->single))))
				return CH_ERR_RUNTIME;
			b->single = nv;
			if (!(nn = realloc(b->nights, nc * sizeof(*b->nights))))
				return CH_ERR_RUNTIME;
			b->nights = nn;
			b->cap = nc;
		}
		snprintf(b->nights[b->n], sizeof(b->nights[0]), "%s", (const char *)sqlite3_column_text(hist, 0));
		b->v[b->n] = sqlite3_column_double(hist, 1);
		b->both[b->n++] = sqlite3_column_type(hist, 2) == SQLITE_NULL ? NAN : sqlite3_column_double(hist, 2);
	}
	return 0;
}

/* The class a series' noise is pooled in: its metric and its device's
 * model (SKU or name) where recorded, else its metric and kind
 * (hr_noise_class()). */
static const char *series_class(const char *gpu, const char *metric, const char *model, char *buf, size_t n)
{
	if (model && *model) {
		snprintf(buf, n, "%s@%s", metric, model);
		return buf;
	}
	return hr_noise_class(gpu, metric, buf, n);
}

/* the noise model: every series pooled by class, from the nights before
 * @night (tonight's faults, the very values to judge, move nothing) */
static int learn_noise(sqlite3_stmt *series, sqlite3_stmt *hist, const char *night, const struct hr_check_cfg *cfg,
		       struct series_buf *b, struct hr_noise_pool *pool)
{
	char cls[192];

	sqlite3_reset(series);
	while (sqlite3_step(series) == SQLITE_ROW) {
		const char *node = (const char *)sqlite3_column_text(series, 0);
		const char *gpu = (const char *)sqlite3_column_text(series, 1);
		const char *metric = (const char *)sqlite3_column_text(series, 2);
		const char *id = (const char *)sqlite3_column_text(series, 3);
		const char *model = (const char *)sqlite3_column_text(series, 4);
		if (!strcmp(node, HR_HISTORY_FLEET))
			continue;
		size_t n;
		if (load_series(hist, node, gpu, metric, id, night, b))
			return CH_ERR_RUNTIME;
		n = b->n && !strcmp(b->nights[b->n - 1], night) ? b->n - 1 : b->n;
		hr_noise_single(b->v, b->both, n, cfg->window, b->single);
		if (hr_noise_pool_add(pool, series_class(gpu, metric, model, cls, sizeof(cls)), b->v,
				      b->single, n, cfg->window))
			return CH_ERR_RUNTIME;
	}
	return hr_noise_pool_fit(pool, cfg->cusum.floor_sigma);
}

/* the change detector on one series: 1 (and @r filled) when it regressed */
static int detect(struct hr_noise_pool *pool, const struct hr_check_cfg *cfg, int m, const char *gpu,
		  const char *metric, const char *model, const struct series_buf *b, struct hr_regression *r)
{
	struct hr_cusum_cfg cc = cfg->cusum;
	struct hr_cusum c;
	char cls[192];
	double sigma, hth;
	size_t nres, lo = b->n > 3 * (size_t)cfg->window ? b->n - 3 * (size_t)cfg->window : 0;

	cc.window = cfg->window;
	if (cc.min_nights < cfg->min_nights)
		cc.min_nights = cfg->min_nights;
	if (cc.min_nights > cfg->window)
		cc.min_nights = cfg->window;
	if (hr_noise_pool_sigma(pool, series_class(gpu, metric, model, cls, sizeof(cls)), &sigma, &nres) ||
	    hr_cusum_run(b->v + lo, b->n - lo, sigma, &cc, &c) || !c.judged)
		return 0;
	hth = hr_noise_pool_threshold(pool, m, c.nref, &cc);
	if (!(c.s > hth))
		return 0;
	r->cusum = 1;
	r->persisted = 1;
	r->cusum_s = c.s;
	r->cusum_h = hth;
	r->noise_pct = 100 * sigma;
	r->noise_n = nres;
	r->tail_w = hr_noise_pool_tail(pool);
	r->nights = c.nights;
	r->baseline = c.reference;
	r->pct = c.pct;
	r->nbaseline = c.nref;
	snprintf(r->since, sizeof(r->since), "%s", b->nights[lo + c.since]);
	return 1;
}

/* the series' last nights against the learned noise (hr_far_run()), for
 * far_judge(): 0, or -1 when its class has no learned noise or too few
 * nights precede @since */
static int far_of(struct hr_noise_pool *pool, const struct hr_check_cfg *cfg, const char *cls,
		  const struct series_buf *b, size_t since, struct hr_far *f, struct hr_regression *r)
{
	double sigma;
	size_t nres;
	if (hr_noise_pool_sigma(pool, cls, &sigma, &nres) ||
	    hr_far_run(b->v, b->both, b->n, since, cfg->window, sigma, hr_noise_pool_tail(pool), f))
		return -1;
	r->noise_pct = 100 * sigma;
	r->noise_n = nres;
	r->tail_w = hr_noise_pool_tail(pool);
	r->far_p = f->p;
	return 0;
}

/*
 * What a series' nights say once the noise is taken into account
 * (docs/workflows.md, "Change detection"): the median rule's @found
 * (HR_TREND_*, its run from @since, @r filled) kept, lowered or raised.
 * A run the median rule finds REGRESSED stays so when its nights are
 * together improbable for a healthy series (hr_far_run(): the product of
 * their chances, each night measured twice judged by the larger of its
 * measurements) at the node's budget cfg->alpha / @m. Tonight alone is
 * WARN when measured twice, both measurements at least the threshold
 * below the series' own level and the night's chance within that budget
 * (a 20% drop on the night it appears). Anything else the median rule
 * points at, or a night at least the threshold below whose chance is
 * within cfg->cusum.info_chance (a night measured once above all), is
 * "info: one night far, not judged until it repeats" (r->info): a single
 * measurement far out may be a tail of the noise, never WARN. Without learned noise
 * for the class, the median rule alone, its "regressed once" WARN only for
 * a night measured twice. Returns the level (HR_TREND_*; info:
 * HR_TREND_NONE with r->info set).
 */
static int far_judge(struct hr_noise_pool *pool, const struct hr_check_cfg *cfg, int m, const char *cls,
		     const struct series_buf *b, int found, size_t since, struct hr_regression *r)
{
	double budget = cfg->cusum.far_alpha / (m > 1 ? m : 1), last = b->both[b->n - 1];
	struct hr_far f;
	int far, seen;

	r->far_budget = budget;
	r->twice = isfinite(last) && last > 0;
	if (found == HR_TREND_REGRESSED && !far_of(pool, cfg, cls, b, since, &f, r) && f.p <= budget)
		return found;
	if (far_of(pool, cfg, cls, b, b->n - 1, &f, r)) {
		if (found == HR_TREND_REGRESSED || (found == HR_TREND_ONCE && r->twice))
			return found;
		r->info = found != HR_TREND_NONE;
		return HR_TREND_NONE;
	}
	far = f.pct >= cfg->threshold_pct && f.p_last <= budget;
	seen = f.pct >= cfg->threshold_pct && f.p_last <= cfg->cusum.info_chance;
	r->persisted = 0;
	r->far_p = f.p_last;
	r->z = f.z;
	r->pct_both = f.pct_both;
	if (!found || seen) {
		r->baseline = f.reference;
		r->pct = f.pct;
		r->nbaseline = f.nref;
		r->nights = 1;
		snprintf(r->since, sizeof(r->since), "%s", b->nights[b->n - 1]);
	}
	if (far && f.twice && f.pct_both >= cfg->cusum.far_pct) {
		r->far = 1;
		return HR_TREND_ONCE;
	}
	r->info = found || seen;
	return HR_TREND_NONE;
}

static int add_result(struct hr_regression **res, size_t *nres, size_t *cap, const struct hr_regression *r)
{
	if (*nres == *cap) {
		size_t nc = *cap ? 2 * *cap : 16;
		struct hr_regression *nr = realloc(*res, nc * sizeof(*nr));
		if (!nr)
			return CH_ERR_RUNTIME;
		*res = nr;
		*cap = nc;
	}
	(*res)[(*nres)++] = *r;
	return 0;
}

/* the series of each node on that night: the comparisons made for it */
static json_t *series_per_node(struct hr_history *h, const char *night)
{
	sqlite3_stmt *pernode = NULL;
	json_t *counts = json_object();

	if (!counts || sqlite3_prepare_v2(h->db, "SELECT node, count(*) FROM metrics WHERE night = ? GROUP BY node", -1,
					  &pernode, NULL) != SQLITE_OK) {
		sql_err(h, "query");
		json_decref(counts);
		return NULL;
	}
	sqlite3_bind_text(pernode, 1, night, -1, SQLITE_TRANSIENT);
	while (sqlite3_step(pernode) == SQLITE_ROW)
		json_object_set_new(counts, (const char *)sqlite3_column_text(pernode, 0),
				    json_integer(sqlite3_column_int(pernode, 1)));
	sqlite3_finalize(pernode);
	return counts;
}

int hr_history_check(struct hr_history *h, const char *night,
		     const struct hr_check_cfg *cfg, struct hr_regression **out,
		     size_t *n, struct hr_check_count *count)
{
	struct hr_check_count cnt = { 0, 0 };
	sqlite3_stmt *series = NULL, *hist = NULL;
	json_t *counts = NULL;
	struct hr_regression *res = NULL;
	struct hr_noise_pool *pool = NULL;
	struct series_buf b = { 0 };
	size_t nres = 0, cap = 0;
	char latest[32];
	int rc = CH_ERR_RUNTIME;

	*out = NULL;
	*n = 0;
	if (!night) {
		if (hr_history_latest(h, latest, sizeof(latest)))
			return CH_ERR_RUNTIME;
		if (!latest[0])
			return 0; /* empty history */
		night = latest;
	}
	if (sqlite3_prepare_v2(h->db, "SELECT node, gpu, metric, device_id, model FROM metrics WHERE night = ? ORDER BY node, gpu, metric",
			       -1, &series, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(h->db, "SELECT night, value, value_both FROM metrics WHERE node = ?1 AND gpu = ?2 AND metric = ?3 AND night <= ?4"
			       " AND (?5 IS NULL OR device_id IS NULL OR device_id = ?5)"
			       /* a value that is no finite number (a database edited by
				* hand: text, Inf) is left out, never read as 0 */
			       " AND typeof(value) IN ('real', 'integer') AND abs(value) <= 1.7976931348623157e308"
			       " ORDER BY night",
			       -1, &hist, NULL) != SQLITE_OK) {
		sql_err(h, "query");
		goto out;
	}
	if (!(counts = series_per_node(h, night)) || !(pool = hr_noise_pool_new()))
		goto out;
	sqlite3_bind_text(series, 1, night, -1, SQLITE_TRANSIENT);
	if (learn_noise(series, hist, night, cfg, &b, pool))
		goto out;
	sqlite3_reset(series);
	while (sqlite3_step(series) == SQLITE_ROW) {
		const char *node = (const char *)sqlite3_column_text(series, 0);
		const char *gpu = (const char *)sqlite3_column_text(series, 1);
		const char *metric = (const char *)sqlite3_column_text(series, 2);
		const char *id = (const char *)sqlite3_column_text(series, 3);
		const char *model = (const char *)sqlite3_column_text(series, 4);
		struct hr_check_cfg c1 = *cfg;
		struct hr_regression r;
		struct hr_trend t;
		char cls[192];
		int found;

		if (load_series(hist, node, gpu, metric, id, night, &b))
			goto out;
		cnt.series++;
		if (b.n - 1 < (size_t)cfg->min_nights) { /* b.n >= 1: tonight is in it */
			cnt.not_judged++;
			continue;
		}
		c1.comparisons = (int)json_integer_value(json_object_get(counts, node));
		if (c1.comparisons < 1)
			c1.comparisons = 1;
		memset(&r, 0, sizeof(r));
		/* the median rule's REGRESSED stands; else the detector's; else
		 * the median rule's "regressed once" */
		found = hr_history_trend(b.v, b.n, &c1, &t);
		if (found != HR_TREND_REGRESSED && strcmp(node, HR_HISTORY_FLEET) &&
		    detect(pool, cfg, c1.comparisons, gpu, metric, model, &b, &r)) {
			found = 0;
		} else {
			if (found) {
				r.persisted = found == HR_TREND_REGRESSED;
				r.spread_pct = t.spread_pct;
				r.z = t.z;
				r.cut = t.cut;
				r.baseline = t.baseline;
				r.pct = t.pct;
				r.nights = t.nights;
				r.nbaseline = (int)(t.since > (size_t)cfg->window ? (size_t)cfg->window : t.since);
				snprintf(r.since, sizeof(r.since), "%s", b.nights[t.since]);
			}
			if (strcmp(node, HR_HISTORY_FLEET))
				found = far_judge(pool, cfg, c1.comparisons, series_class(gpu, metric, model, cls, sizeof(cls)),
						  &b, found, found ? t.since : b.n - 1, &r);
		}
		if (!found && !r.cusum && !r.info)
			continue;
		snprintf(r.node, sizeof(r.node), "%s", node);
		snprintf(r.gpu, sizeof(r.gpu), "%s", gpu);
		snprintf(r.metric, sizeof(r.metric), "%s", metric);
		snprintf(r.night, sizeof(r.night), "%s", night);
		r.value = b.v[b.n - 1];
		if (add_result(&res, &nres, &cap, &r))
			goto out;
	}
	*out = res;
	*n = nres;
	if (count)
		*count = cnt;
	res = NULL;
	rc = 0;
out:
	free(res);
	free(b.v);
	free(b.both);
	free(b.single);
	free(b.nights);
	hr_noise_pool_free(pool);
	sqlite3_finalize(series);
	sqlite3_finalize(hist);
	json_decref(counts);
	return rc;
}

/* ------------------------------------------------------------ main */

struct rec_ctx {
	struct hr_history *h;
	const char *night;
	size_t nrec, nfiles;
};

/* one file: all of its values, or none of them (a savepoint per file) */
static int on_result(const char *path, const struct hr_result *r, struct hr_issues *is, void *ctx)
{
	struct rec_ctx *c = ctx;
	size_t before = c->nrec;
	int rc;

	if (sqlite3_exec(c->h->db, "SAVEPOINT file", NULL, NULL, NULL) != SQLITE_OK)
		return sql_err(c->h, "savepoint");
	rc = record_result(c->h, c->night, path, r, &c->nrec, is);
	if (rc == CH_ERR_USAGE) {
		c->nrec = before;
		if (sqlite3_exec(c->h->db, "ROLLBACK TO file; RELEASE file", NULL, NULL, NULL) != SQLITE_OK)
			return sql_err(c->h, "rollback");
		return HR_WALK_SKIP;
	}
	if (sqlite3_exec(c->h->db, "RELEASE file", NULL, NULL, NULL) != SQLITE_OK && !rc)
		rc = sql_err(c->h, "release");
	if (!rc && c->nrec > before)
		c->nfiles++;
	return rc;
}

static int valid_night(const char *s)
{
	/* YYYY-MM-DD or YYYY-MM-DDTHH:MM:SSZ */
	static const char *const pat = "dddd-dd-ddTdd:dd:ddZ";
	size_t i, n = strlen(s);
	if (n != 10 && n != 20)
		return 0;
	for (i = 0; i < n; i++)
		if (pat[i] == 'd' ? !isdigit((unsigned char)s[i]) : s[i] != pat[i])
			return 0;
	return ch_valid_utc(s, n == 10);
}

/* the earliest valid start_utc among the inputs: the night of this run */
static int find_night(const char *path, const struct hr_result *r, struct hr_issues *is, void *ctx)
{
	char *night = ctx;
	const char *s = r->start_utc;
	(void)path;
	(void)is;
	if (s && valid_night(s) && (!night[0] || strcmp(s, night) < 0))
		snprintf(night, 32, "%s", s);
	return 0;
}


static void usage(FILE *f)
{
	fputs("Usage: health_report history --db FILE [OPTIONS] [RESULT_FILE|DIR]...\n"
	      "\n"
	      "Record tonight's headline metrics (per node and GPU) from the result files\n"
	      "and directories given into an SQLite history (a figure its tool measured\n"
	      "twice, roofline's flagged roof or a CPU socket's roofs (roofs_again),\n"
	      "allreduce_bw's largest size or checkpoint_io's rate written twice\n"
	      "(--repeat 2), as the mean of both measurements and the\n"
	      "larger of the two), then check every series that has\n"
	      "a value tonight against its own trailing baseline: the median of its previous\n"
	      "nights. A night regresses when it is at least the threshold below that\n"
	      "median AND beyond the series' own night-to-night spread: its robust z\n"
	      "against the baseline nights (1.4826 x MAD) at or below the cut-off for the\n"
	      "series checked for its node (Bonferroni, at 0.0001 false alarms per node and\n"
	      "night; wider when few nights estimate the spread). A regression on --persist\n"
	      "consecutive nights (default 2) is 'REGRESSED ... since DATE' and the node\n"
	      "becomes a drain candidate; on the night checked alone it is 'WARN ...\n"
	      "regressed once; re-run'.", f);
	/* the change detector's and the far nights' figures: the rules table's
	 * (a budget as a plain decimal: 0.00002, not 2e-05) */
	char fb[32], *e;
	snprintf(fb, sizeof(fb), "%.8f", hr_rule_param("history_far_night", "far_budget_node_night"));
	for (e = fb + strlen(fb) - 1; e > fb && *e == '0'; e--)
		*e = '\0';
	fprintf(f, " Each series is also watched by a change detector:\n"
		"a CUSUM of its nights against its own level (the winsorized mean of at least\n"
		"%g earlier nights), on the night-to-night noise learned from all series of its\n"
		"metric and kind of device, with a threshold from %g false alarms per node\n"
		"and night; it says 'REGRESSED ... regressed X%% since DATE, N nights; CUSUM S\n"
		"over H' (docs/workflows.md, \"Change detection\"). A night far below a\n"
		"series' own level on both of its measurements (each %g%% or more, improbable\n"
		"under the learned noise at %s flagged nodes per node-night) is WARN on\n",
		hr_rule_param("history_cusum", "reference_nights"), hr_rule_param("history_cusum", "budget_node_night"),
		hr_rule_param("history_far_night", "first_night_pct"), fb);
	fputs("its first night; a night measured once is never WARN on its own: 'info ...:\n"
	      "one night far, not judged until it repeats' (not with -q; --json: far_once);\n"
	      "the median rule's REGRESSED stands only when its nights are that improbable\n"
	      "too (docs/workflows.md, \"Far nights\"). kernel_log result files\n"
	      "(health_report kernel-log) are kept apart: their Xids counted per night and\n"
	      "node over the --window nights, a node with Xids on 2 nights named on an 'XID'\n"
	      "line (--json: kernel_log). With no inputs, only the\n"
	      "check runs (on --night, which must then be a night recorded, as it\n"
	      "was given or as its files' start_utc: exit 2 otherwise, naming one;\n"
	      "or on the latest night recorded).\n"
	      "\n"
	      "Options:\n"
	      "  --db FILE          the history database (created when missing; required)\n"
	      "  --night TIME       the night to record and check, YYYY-MM-DD or\n"
	      "                     YYYY-MM-DDTHH:MM:SSZ (default: the earliest start_utc of\n"
	      "                     the inputs; without inputs, the latest night recorded)\n"
	      "  --window N         nights in the trailing baseline (default 14)\n"
	      "  --min-nights N     fewest earlier nights for a baseline (default 3)\n"
	      "  --threshold PCT    a drop of at least PCT % regresses (default 10)\n"
	      "  --persist N        consecutive nights for REGRESSED (default 2)\n"
	      "  --lock-timeout SEC wait up to SEC s while another process holds the database\n"
	      "                     (default 600; the database is in WAL mode, so readers\n"
	      "                     never block the writer); then exit 4 saying it is locked\n"
	      "  --strict           a result file that cannot be read or breaks the schema\n"
	      "                     fails the run (exit 2) and nothing is recorded; without\n"
	      "                     it, such a file is skipped, listed under input problems,\n"
	      "                     and the rest recorded\n"
	      "  --json FILE        also write the regressions and drain candidates as JSON\n"
	      "  --force            replace the --json FILE if it exists (only a regular\n"
	      "                     file clusterhealth wrote)\n"
	      "  --prom FILE        also write them for node_exporter's textfile collector\n"
	      "                     (Prometheus text format: clusterhealth_history_regressed\n"
	      "                     per node, GPU and metric, 1 REGRESSED, 0 regressed once;\n"
	      "                     the night checked; the series checked); replaced each run\n"
	      "  -q, --quiet        print only regressions and drain candidates\n"
	      "  -h, --help         show this help\n"
	      "\n"
	      "Only regular files are read (named pipes and devices are skipped and listed);\n"
	      "directory cycles are walked once. A database that is not a clusterhealth\n"
	      "history (no schema marker) is refused, exit 2, and left unchanged.\n"
	      "A series with fewer than --min-nights earlier nights is not judged: the\n"
	      "summary line counts them, and ends in NOT JUDGED when no series was judged.\n"
	      "\n"
	      "Exit status: 0 no REGRESSED series (a WARN regressed once is exit 0), 1 at\n"
	      "least one REGRESSED (drain candidates listed), 2 usage or input error (no usable input; a skipped file with\n"
	      "--strict; a foreign database), 4 run-time error (SQLite, I/O, the database\n"
	      "still locked after --lock-timeout).\n"
	      "\n"
	      "Examples:\n"
	      "  health_report history --db results/history.sqlite results/*/20250112T030000Z/\n"
	      "  health_report history --db results/history.sqlite --threshold 5\n", f);
}

enum { O_DB = 0x2000, O_NIGHT, O_WINDOW, O_MIN, O_THRESH, O_JSON, O_FORCE, O_LOCK, O_STRICT, O_PERSIST, O_PROM };

#define DEFAULT_LOCK_TIMEOUT_SEC 600

/* What the command line asked for. */
struct hist_opts {
	struct hr_check_cfg cfg;
	const char *db, *json_path, *prom_path;
	char night[32];
	int force, quiet, strict, lock_timeout;
};

/* Options into @o; returns -1 to go on, else the exit code. */
static int parse_opts(int argc, char **argv, struct hist_opts *o)
{
	static const struct option longopts[] = {
		{ "db", required_argument, NULL, O_DB },
		{ "night", required_argument, NULL, O_NIGHT },
		{ "window", required_argument, NULL, O_WINDOW },
		{ "min-nights", required_argument, NULL, O_MIN },
		{ "threshold", required_argument, NULL, O_THRESH },
		{ "persist", required_argument, NULL, O_PERSIST },
		{ "json", required_argument, NULL, O_JSON },
		{ "prom", required_argument, NULL, O_PROM },
		{ "force", no_argument, NULL, O_FORCE },
		{ "lock-timeout", required_argument, NULL, O_LOCK },
		{ "strict", no_argument, NULL, O_STRICT },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 }
	};
	int c, rc;
	long l;

	memset(o, 0, sizeof(*o));
	o->lock_timeout = DEFAULT_LOCK_TIMEOUT_SEC;
	hr_check_cfg_init(&o->cfg);
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "qh", longopts, NULL)) != -1) {
		switch (c) {
		case O_DB:
			if (!*optarg)
				return ch_exit_code(ch_usage_error("empty file name for --db"));
			o->db = optarg;
			break;
		case O_NIGHT:
			if (!valid_night(optarg))
				return ch_exit_code(ch_usage_error("invalid time '%s' for --night (expected a real date YYYY-MM-DD or time YYYY-MM-DDTHH:MM:SSZ, UTC)", optarg));
			snprintf(o->night, sizeof(o->night), "%s", optarg);
			break;
		case O_WINDOW:
			if (ch_parse_long("--window", optarg, 1, 1000, &l))
				return CH_EXIT_USAGE;
			o->cfg.window = (int)l;
			break;
		case O_MIN:
			if (ch_parse_long("--min-nights", optarg, 1, 1000, &l))
				return CH_EXIT_USAGE;
			o->cfg.min_nights = (int)l;
			break;
		case O_THRESH:
			if (ch_parse_double("--threshold", optarg, 0.01, 100, &o->cfg.threshold_pct))
				return CH_EXIT_USAGE;
			break;
		case O_PERSIST:
			if (ch_parse_long("--persist", optarg, 1, 100, &l))
				return CH_EXIT_USAGE;
			o->cfg.persist = (int)l;
			break;
		case O_JSON:
			if (!*optarg)
				return ch_exit_code(ch_usage_error("empty file name for --json"));
			o->json_path = optarg;
			break;
		case O_PROM:
			if (!*optarg)
				return ch_exit_code(ch_usage_error("empty file name for --prom"));
			o->prom_path = optarg;
			break;
		case O_FORCE:
			o->force = 1;
			break;
		case O_LOCK:
			if (ch_parse_long("--lock-timeout", optarg, 0, 86400, &l))
				return CH_EXIT_USAGE;
			o->lock_timeout = (int)l;
			break;
		case O_STRICT:
			o->strict = 1;
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 'h':
			usage(stdout);
			return CH_EXIT_OK;
		default:
			return ch_exit_code(ch_option_error(argv, "qh", longopts));
		}
	}
	if (!o->db)
		return ch_exit_code(ch_usage_error("missing --db FILE (the history database)"));
	if (o->cfg.min_nights > o->cfg.window)
		return ch_exit_code(ch_usage_error("--min-nights '%d' is above --window '%d'", o->cfg.min_nights, o->cfg.window));
	if (o->json_path && (rc = ch_check_output_file("--json", o->json_path, o->force)))
		return ch_exit_code(rc);
	if (o->prom_path && (rc = ch_check_output_path("--prom", o->prom_path)))
		return ch_exit_code(rc);
	return -1;
}

/* Record the inputs' values for o->night in one transaction; the input problems into @issues. */
static int record_inputs(struct hr_history *h, const struct hist_opts *o, char *const *paths, int n,
			 struct hr_issues *issues)
{
	struct rec_ctx rc_ = { .h = h, .night = o->night };
	struct hr_walk_count cnt;
	size_t skipped;
	char msg[256];
	int rc;

	if (sqlite3_exec(h->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		return sql_err(h, "begin");
	rc = hr_walk_results(paths, n, issues, on_result, &rc_, &cnt);
	skipped = hr_issues_count(issues, HR_ISSUE_SKIPPED);
	hr_issues_print(stdout, issues);
	if (!rc && hr_inputs_verdict(cnt.files, cnt.used, issues, o->strict, msg, sizeof(msg)))
		rc = ch_usage_error("%s: nothing recorded", msg);
	if (sqlite3_exec(h->db, rc ? "ROLLBACK" : "COMMIT", NULL, NULL, NULL) != SQLITE_OK && !rc)
		rc = sql_err(h, "commit");
	if (!rc && !o->quiet) {
		size_t nf, nv;
		const char *why;
		hr_history_not_recorded(h, &nf, &nv, &why);
		printf("history: recorded %zu values from %zu result files for night %s into %s%s\n",
		       rc_.nrec, rc_.nfiles, o->night, o->db,
		       skipped ? " (the skipped files listed under input problems left out)" : "");
		if (nf || nv)
			printf("history: not recorded, noisy measurement (%s): %zu result file%s whole, %zu value%s; re-run on an idle node\n",
			       why, nf, nf == 1 ? "" : "s", nv, nv == 1 ? "" : "s");
	}
	return rc;
}

static int history_main(int argc, char **argv)
{
	struct hist_opts o;
	struct hr_history *h = NULL;
	struct hr_regression *reg = NULL;
	struct hr_check_count cnt = { 0, 0 };
	size_t nreg = 0;
	int rc;
	struct hr_issues issues = { 0 };
	json_t *kl = NULL;

	if ((rc = parse_opts(argc, argv, &o)) >= 0)
		return rc;
	if (optind < argc && !o.night[0]) {
		struct hr_issues scratch = { 0 };
		struct hr_walk_count cnt;
		char msg[256];
		rc = hr_walk_results(argv + optind, argc - optind, &scratch, find_night, o.night, &cnt);
		if (!rc && !o.night[0] && hr_inputs_verdict(cnt.files, cnt.used, &scratch, 0, msg, sizeof(msg))) {
			hr_issues_print(stdout, &scratch);
			rc = ch_usage_error("%s: nothing recorded", msg);
		} else if (!rc && !o.night[0]) {
			rc = ch_usage_error("no result file with a valid start_utc (YYYY-MM-DDTHH:MM:SSZ) among the inputs: give --night");
		}
		hr_issues_release(&scratch);
		if (rc)
			return ch_exit_code(rc);
	}
	if ((rc = hr_history_open(o.db, o.lock_timeout, &h)))
		return ch_exit_code(rc);
	if (optind < argc && (rc = record_inputs(h, &o, argv + optind, argc - optind, &issues)))
		goto out;
	if (!o.night[0] && (rc = hr_history_latest(h, o.night, sizeof(o.night))))
		goto out;
	if (optind >= argc && o.night[0] && (rc = night_recorded(h, o.night)))
		goto out;
	if ((rc = hr_history_check(h, o.night[0] ? o.night : NULL, &o.cfg, &reg, &nreg, &cnt)))
		goto out;
	if (!o.quiet) {
		size_t once = 0, info = 0, i;
		for (i = 0; i < nreg; i++) {
			once += !reg[i].persisted && !reg[i].info;
			info += reg[i].info;
		}
		printf("history: checked night %s against each series' median of up to %d earlier nights (at least %d), threshold %g%% and beyond the series' own night-to-night spread, and by the change detector, on the noise learned from every series: %zu regressed (%d nights or more); %zu regressed once (re-run); %zu one night far, not judged until it repeats (info); %zu of %zu series not judged (fewer than %d earlier nights)%s\n",
		       o.night[0] ? o.night : "(none: the history is empty)", o.cfg.window, o.cfg.min_nights,
		       o.cfg.threshold_pct, nreg - once - info, o.cfg.persist, once, info, cnt.not_judged, cnt.series,
		       o.cfg.min_nights, cnt.not_judged == cnt.series ? ": NOT JUDGED" : "");
	}
	if ((rc = hr_hist_kfault_check(h->db, o.night[0] ? o.night : NULL, o.cfg.window, o.quiet, &kl)) ||
	    (rc = hr_history_report(&o.cfg, o.json_path, o.prom_path, o.night, reg, nreg, &cnt, kl, o.quiet)))
		goto out;
	rc = 0;
	for (size_t i = 0; i < nreg; i++)
		if (reg[i].persisted)
			rc = CH_ERR_CHECK;
out:
	json_decref(kl);
	hr_issues_release(&issues);
	free(reg);
	hr_history_close(h);
	return ch_exit_code(rc);
}

int hr_history_main(int argc, char **argv)
{
	return hr_run_subcommand(argc, argv, "history", history_main);
}
