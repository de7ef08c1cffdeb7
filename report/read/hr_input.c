#include "report/read/hr_input.h"
#include "base/ch_common.h"
#include "report/hr_util.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

int hr_issue_add(struct hr_issues *l, int kind, const char *path, int line,
		 int col, const char *fmt, ...)
{
	struct hr_issue *is;
	va_list ap;
	char msg[1024];

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		struct hr_issue *v = realloc(l->v, cap * sizeof(*v));
		if (!v)
			return -1;
		l->v = v;
		l->cap = cap;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	is = &l->v[l->n];
	/* as UTF-8 text: a file name or a text log's words may not be, and
	 * vsnprintf() may have cut a character */
	is->path = hr_utf8_text(path ? path : "");
	is->msg = hr_utf8_text(msg);
	if (!is->path || !is->msg) {
		free(is->path);
		free(is->msg);
		return -1;
	}
	is->line = line;
	is->column = col;
	is->kind = kind;
	l->n++;
	return 0;
}

size_t hr_issues_count(const struct hr_issues *l, int kind)
{
	size_t i, c = 0;
	for (i = 0; i < l->n; i++)
		if (kind < 0 || l->v[i].kind == kind)
			c++;
	return c;
}

const char *hr_issue_kind_name(int kind)
{
	switch (kind) {
	case HR_ISSUE_SKIPPED: return "skipped";
	case HR_ISSUE_TRUNCATED: return "truncated";
	default: return "note";
	}
}

char *hr_issue_format(const struct hr_issue *is, char *buf, size_t n)
{
	if (is->line > 0 && is->column > 0)
		snprintf(buf, n, "%s:%d:%d: %s: %s", is->path, is->line, is->column,
			 hr_issue_kind_name(is->kind), is->msg);
	else if (is->line > 0)
		snprintf(buf, n, "%s:%d: %s: %s", is->path, is->line,
			 hr_issue_kind_name(is->kind), is->msg);
	else
		snprintf(buf, n, "%s: %s: %s", is->path, hr_issue_kind_name(is->kind), is->msg);
	return buf;
}

void hr_issues_print(FILE *f, const struct hr_issues *l)
{
	char buf[2048];
	size_t i;

	if (!l->n)
		return;
	fprintf(f, "input problems (%zu):\n", l->n);
	for (i = 0; i < l->n; i++)
		fprintf(f, "  %s\n", hr_term(hr_issue_format(&l->v[i], buf, sizeof(buf))));
}

void hr_issues_release(struct hr_issues *l)
{
	size_t i;
	for (i = 0; i < l->n; i++) {
		free(l->v[i].path);
		free(l->v[i].msg);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* ---------------------------------------------------------------- files */

struct walk {
	struct hr_file_list *out;
	const char *const *exts;
	struct hr_issues *issues;
	dev_t ex_dev;
	ino_t ex_ino;
	int have_ex;
	struct { dev_t dev; ino_t ino; } *seen;
	size_t nseen, capseen;
};

static int list_add(struct hr_file_list *l, const char *path, int named)
{
	char *p;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;
		char **v = realloc(l->paths, cap * sizeof(*v));
		unsigned char *nv;
		if (!v)
			return CH_ERR_RUNTIME;
		l->paths = v;
		nv = realloc(l->named, cap);
		if (!nv)
			return CH_ERR_RUNTIME;
		l->named = nv;
		l->cap = cap;
	}
	p = strdup(path);
	if (!p)
		return CH_ERR_RUNTIME;
	l->named[l->n] = (unsigned char)(named != 0);
	l->paths[l->n++] = p;
	return 0;
}

static const char *const default_exts[] = { ".json", ".txt", ".log", ".out", NULL };

static int candidate_name(const char *name, const char *const *ext)
{
	size_t n = strlen(name), e;
	int i;
	if (name[0] == '.')
		return 0;
	for (i = 0; ext[i]; i++) {
		e = strlen(ext[i]);
		if (n > e && !strcasecmp(name + n - e, ext[i]))
			return 1;
	}
	return 0;
}

/* What a path is when it is neither a regular file nor a directory. */
static const char *file_kind(mode_t m)
{
	return S_ISFIFO(m) ? "a named pipe" : S_ISSOCK(m) ? "a socket" : S_ISCHR(m) ? "a character device" :
	       S_ISBLK(m) ? "a block device" : "not a regular file";
}

/* Returns 1 when the directory was visited already, 2 when it is the
 * report's output directory (visited, without the report's own outputs). */
static int mark_dir(struct walk *w, const struct stat *st)
{
	size_t i;
	for (i = 0; i < w->nseen; i++)
		if (w->seen[i].dev == st->st_dev && w->seen[i].ino == st->st_ino)
			return 1;
	if (w->nseen == w->capseen) {
		size_t cap = w->capseen ? w->capseen * 2 : 32;
		void *v = realloc(w->seen, cap * sizeof(*w->seen));
		if (!v)
			return -1;
		w->seen = v;
		w->capseen = cap;
	}
	w->seen[w->nseen].dev = st->st_dev;
	w->seen[w->nseen].ino = st->st_ino;
	w->nseen++;
	return w->have_ex && st->st_dev == w->ex_dev && st->st_ino == w->ex_ino ? 2 : 0;
}

/* the report's own outputs, left out of its output directory's files */
static int own_output(const char *name)
{
	return !strcmp(name, "profile.json") || !strcmp(name, "report.md") ||
	       !strcmp(name, "report.html") || !strcmp(name, "health.prom");
}

static int walk_dir(struct walk *w, const char *dir, int depth, int out_dir)
{
	struct dirent **ents = NULL;
	int n, i, rc = 0;

	if (depth > 64) {
		hr_issue_add(w->issues, HR_ISSUE_SKIPPED, dir, 0, 0,
			     "directory nesting deeper than 64 levels; not descending");
		return 0;
	}
	n = scandir(dir, &ents, NULL, alphasort);
	if (n < 0) {
		hr_issue_add(w->issues, HR_ISSUE_SKIPPED, dir, 0, 0,
			     "cannot read directory: %s", strerror(errno));
		return 0;
	}
	for (i = 0; i < n; i++) {
		const char *name = ents[i]->d_name;
		char path[4096];
		struct stat st;
		if (rc || name[0] == '.' || (out_dir && own_output(name)))
			continue;
		if (snprintf(path, sizeof(path), "%s%s%s", dir,
			     dir[strlen(dir) - 1] == '/' ? "" : "/", name) >= (int)sizeof(path)) {
			hr_issue_add(w->issues, HR_ISSUE_SKIPPED, dir, 0, 0,
				     "path of '%s' is too long", name);
			continue;
		}
		if (stat(path, &st) != 0) {
			hr_issue_add(w->issues, HR_ISSUE_SKIPPED, path, 0, 0,
				     "cannot stat: %s", strerror(errno));
			continue;
		}
		if (S_ISDIR(st.st_mode)) {
			int m = mark_dir(w, &st);
			if (m < 0)
				rc = CH_ERR_RUNTIME;
			else if (m == 0 || m == 2)
				rc = walk_dir(w, path, depth + 1, m == 2);
			else if (m == 1)
				hr_issue_add(w->issues, HR_ISSUE_NOTE, path, 0, 0,
					     "directory already visited (a symbolic-link cycle, or a second path to it); not read again");
		} else if (candidate_name(name, w->exts)) {
			if (S_ISREG(st.st_mode))
				rc = list_add(w->out, path, 0);
			else
				hr_issue_add(w->issues, HR_ISSUE_SKIPPED, path, 0, 0,
					     "%s, not a regular file; not read", file_kind(st.st_mode));
		}
	}
	for (i = 0; i < n; i++)
		free(ents[i]);
	free(ents);
	return rc;
}

int hr_collect_inputs(char *const *args, int nargs, const char *exclude_dir,
		      struct hr_file_list *out, struct hr_issues *issues)
{
	return hr_collect_files(args, nargs, exclude_dir, NULL, out, issues);
}

int hr_collect_files(char *const *args, int nargs, const char *exclude_dir,
		     const char *const *exts, struct hr_file_list *out,
		     struct hr_issues *issues)
{
	struct walk w;
	struct stat st;
	int i, rc = 0;

	memset(&w, 0, sizeof(w));
	memset(out, 0, sizeof(*out));
	w.out = out;
	w.exts = exts ? exts : default_exts;
	w.issues = issues;
	if (exclude_dir && stat(exclude_dir, &st) == 0 && S_ISDIR(st.st_mode)) {
		w.ex_dev = st.st_dev;
		w.ex_ino = st.st_ino;
		w.have_ex = 1;
	}
	for (i = 0; i < nargs && !rc; i++) {
		if (stat(args[i], &st) != 0) {
			rc = ch_usage_error("cannot read input '%s': %s", args[i], strerror(errno));
			break;
		}
		if (S_ISDIR(st.st_mode)) {
			int m = mark_dir(&w, &st);
			if (m < 0)
				rc = CH_ERR_RUNTIME;
			else if (m == 0 || m == 2)
				rc = walk_dir(&w, args[i], 0, m == 2);
			else if (m == 1)
				hr_issue_add(issues, HR_ISSUE_NOTE, args[i], 0, 0,
					     "directory already visited (named twice, or inside another input); not read again");
		} else if (S_ISREG(st.st_mode)) {
			rc = list_add(out, args[i], 1);
		} else {
			hr_issue_add(issues, HR_ISSUE_SKIPPED, args[i], 0, 0,
				     "%s, not a regular file; not read", file_kind(st.st_mode));
		}
	}
	free(w.seen);
	if (rc)
		hr_file_list_release(out);
	return rc;
}

void hr_file_list_release(struct hr_file_list *l)
{
	size_t i;
	for (i = 0; i < l->n; i++)
		free(l->paths[i]);
	free(l->paths);
	free(l->named);
	memset(l, 0, sizeof(*l));
}

int hr_inputs_verdict(size_t nfiles, size_t nused, const struct hr_issues *is, int strict, char *msg, size_t n)
{
	size_t skipped = hr_issues_count(is, HR_ISSUE_SKIPPED);

	msg[0] = '\0';
	if (nfiles == 0)
		snprintf(msg, n, "no input files found in the given paths%s",
			 skipped ? " (see 'input problems')" : "");
	else if (nused == 0)
		snprintf(msg, n, "no usable input among %zu file%s (see 'input problems')", nfiles,
			 nfiles == 1 ? "" : "s");
	else if (strict && skipped)
		snprintf(msg, n, "%zu input problem%s skipped (--strict)", skipped, skipped == 1 ? "" : "s");
	return msg[0] ? CH_ERR_USAGE : 0;
}
