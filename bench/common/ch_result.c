#include "ch_result.h"
#include "ch_common.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#ifndef CH_GIT_REV
#define CH_GIT_REV "unknown"
#endif

extern char **environ;

struct ch_result {
	json_t *doc;
	char *path;
	int force;
	int written; /* we created the file: later writes may replace it */
	int status;
};

const char *ch_git_rev(void) { return CH_GIT_REV; }

char *ch_utc_now(char *buf, size_t n)
{
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
	return buf;
}

static int env_whitelisted(const char *kv)
{
	static const char *const pfx[] = { "NCCL_", "CUDA_VISIBLE_DEVICES=",
		"OMPI_", "UCX_", "SLURM_", "OMP_", "OPENBLAS_", NULL };
	int i;
	for (i = 0; pfx[i]; i++)
		if (!strncmp(kv, pfx[i], strlen(pfx[i])))
			return 1;
	return 0;
}

struct ch_result *ch_result_new(const char *tool, int argc, char **argv)
{
	struct ch_result *r = calloc(1, sizeof(*r));
	json_t *args, *env, *host;
	struct utsname u;
	char now[32], hn[256] = "";
	char **e;
	int i;

	if (!r)
		return NULL;
	r->doc = json_object();
	args = json_array();
	env = json_object();
	host = json_object();
	if (!r->doc || !args || !env || !host) {
		json_decref(args); json_decref(env); json_decref(host);
		ch_result_free(r);
		return NULL;
	}
	for (i = 0; i < argc; i++)
		json_array_append_new(args, json_string(argv[i]));
	for (e = environ; e && *e; e++) {
		const char *eq = strchr(*e, '=');
		if (eq && env_whitelisted(*e)) {
			char key[256];
			size_t kl = (size_t)(eq - *e);
			if (kl >= sizeof(key))
				continue;
			memcpy(key, *e, kl);
			key[kl] = '\0';
			json_object_set_new(env, key, json_string(eq + 1));
		}
	}
	gethostname(hn, sizeof(hn) - 1);
	json_object_set_new(host, "hostname", json_string(hn));
	if (uname(&u) == 0)
		json_object_set_new(host, "kernel", json_string(u.release));

	json_object_set_new(r->doc, "schema", json_string(CH_RESULT_SCHEMA));
	json_object_set_new(r->doc, "schema_version", json_integer(CH_RESULT_SCHEMA_VERSION));
	json_object_set_new(r->doc, "tool", json_string(tool));
	json_object_set_new(r->doc, "version", json_string(CH_VERSION));
	json_object_set_new(r->doc, "git_rev", json_string(CH_GIT_REV));
	json_object_set_new(r->doc, "start_utc", json_string(ch_utc_now(now, sizeof(now))));
	json_object_set_new(r->doc, "end_utc", json_null());
	json_object_set_new(r->doc, "status", json_string("incomplete"));
	json_object_set_new(r->doc, "reason", json_null());
	json_object_set_new(r->doc, "exit_code", json_null());
	json_object_set_new(r->doc, "host", host);
	json_object_set_new(r->doc, "software", json_object());
	json_object_set_new(r->doc, "ranks", json_null());
	json_object_set_new(r->doc, "args", args);
	json_object_set_new(r->doc, "env", env);
	json_object_set_new(r->doc, "results", json_object());
	r->status = 1; /* "incomplete" */
	return r;
}

void ch_result_free(struct ch_result *r)
{
	if (!r)
		return;
	json_decref(r->doc);
	free(r->path);
	free(r);
}

json_t *ch_result_doc(struct ch_result *r) { return r->doc; }

json_t *ch_result_results(struct ch_result *r)
{
	return json_object_get(r->doc, "results");
}

int ch_result_set(struct ch_result *r, const char *key, json_t *value)
{
	if (!value)
		return CH_ERR_RUNTIME;
	return json_object_set_new(r->doc, key, value) ? CH_ERR_RUNTIME : 0;
}

void ch_result_set_software(struct ch_result *r, const char *key,
			    const char *version)
{
	json_t *sw = json_object_get(r->doc, "software");
	json_object_set_new(sw, key, version ? json_string(version) : json_null());
}

int ch_result_set_path(struct ch_result *r, const char *path, int force)
{
	struct stat st;
	char *dup, *dir;

	free(r->path);
	r->path = NULL;
	r->written = 0;
	if (!path)
		return 0;
	if (!*path)
		return ch_usage_error("empty file name for --json");
	if (!force && stat(path, &st) == 0)
		return ch_usage_error("result file '%s' already exists (use --force to replace it)", path);
	dup = strdup(path);
	if (!dup)
		return CH_ERR_RUNTIME;
	dir = dirname(dup);
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		int rc = ch_usage_error("directory '%s' of result file '%s' does not exist", dir, path);
		free(dup);
		return rc;
	}
	free(dup);
	r->path = strdup(path);
	r->force = force;
	return r->path ? 0 : CH_ERR_RUNTIME;
}

static void set_status_v(struct ch_result *r, int status, const char *fmt, va_list ap)
{
	json_object_set_new(r->doc, "status", json_string(ch_status_name(status)));
	json_object_set_new(r->doc, "exit_code", json_integer(ch_exit_code(status)));
	if (fmt) {
		char buf[1024];
		vsnprintf(buf, sizeof(buf), fmt, ap);
		json_object_set_new(r->doc, "reason", json_string(buf));
	} else {
		json_object_set_new(r->doc, "reason", json_null());
	}
	r->status = status;
}

void ch_result_set_status(struct ch_result *r, int status, const char *reason, ...)
{
	va_list ap;
	va_start(ap, reason);
	set_status_v(r, status, reason, ap);
	va_end(ap);
}

int ch_write_file_atomic(const char *path, const void *data, size_t len)
{
	char tmp[4096];
	const char *p = data;
	int fd;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof(tmp)) {
		ch_error("file name '%s' is too long", path);
		return CH_ERR_RUNTIME;
	}
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		ch_error("cannot create '%s': %s", tmp, strerror(errno));
		return CH_ERR_RUNTIME;
	}
	while (len > 0) {
		ssize_t w = write(fd, p, len);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			ch_error("cannot write '%s': %s", tmp, strerror(errno));
			close(fd);
			unlink(tmp);
			return CH_ERR_RUNTIME;
		}
		p += w;
		len -= (size_t)w;
	}
	if (fsync(fd) != 0 || close(fd) != 0) {
		ch_error("cannot flush '%s': %s", tmp, strerror(errno));
		unlink(tmp);
		return CH_ERR_RUNTIME;
	}
	if (rename(tmp, path) != 0) {
		ch_error("cannot rename '%s' to '%s': %s", tmp, path, strerror(errno));
		unlink(tmp);
		return CH_ERR_RUNTIME;
	}
	return 0;
}

int ch_json_write_atomic(const char *path, const json_t *doc, size_t flags)
{
	char *text = json_dumps(doc, flags);
	size_t len;
	int rc;

	if (!text) {
		ch_error("cannot serialise JSON for '%s'", path);
		return CH_ERR_RUNTIME;
	}
	len = strlen(text);
	/* end with a newline, as text files do */
	{
		char *t2 = realloc(text, len + 2);
		if (!t2) {
			free(text);
			return CH_ERR_RUNTIME;
		}
		text = t2;
		text[len++] = '\n';
		text[len] = '\0';
	}
	rc = ch_write_file_atomic(path, text, len);
	free(text);
	return rc;
}

static int write_doc(struct ch_result *r)
{
	char now[32];
	struct stat st;
	int rc;

	json_object_set_new(r->doc, "end_utc", json_string(ch_utc_now(now, sizeof(now))));
	if (!r->path)
		return 0;
	if (!r->written && !r->force && stat(r->path, &st) == 0) {
		ch_error("result file '%s' appeared during the run; not replacing it", r->path);
		return CH_ERR_RUNTIME;
	}
	rc = ch_json_write_atomic(r->path, r->doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	if (rc == 0)
		r->written = 1;
	return rc;
}

int ch_result_checkpoint(struct ch_result *r)
{
	json_object_set_new(r->doc, "status", json_string("incomplete"));
	json_object_set_new(r->doc, "exit_code", json_null());
	return write_doc(r);
}

int ch_result_finish(struct ch_result *r, int status, const char *reason, ...)
{
	va_list ap;
	va_start(ap, reason);
	set_status_v(r, status, reason, ap);
	va_end(ap);
	return write_doc(r);
}
