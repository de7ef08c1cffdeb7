/*
 * hr_dcgm.c - reader of `dcgmi diag -j` documents (hr_dcgm.h), with
 * jansson: walks test_categories -> tests -> results of the DCGM 3.x and
 * 4.x layouts into hr_dcgm_result records.
 */
#include "report/read/hr_dcgm.h"
#include "report/read/hr_nvbw.h"
#include "report/read/hr_model.h"
#include "report/read/hr_load_shared.h"
#include "base/ch_common.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const json_t *dcgm_root(const json_t *doc)
{
	const json_t *r = json_object_get(doc, "DCGM GPU Diagnostic");
	return r ? r : json_object_get(doc, "DCGM Diagnostic");
}

int hr_dcgm_detect(const json_t *doc)
{
	return json_is_object(doc) && json_is_object(dcgm_root(doc));
}

char *hr_dcgm_node_of(const char *path, char *buf, size_t n)
{
	char real[PATH_MAX], dir[PATH_MAX];
	const char *p = realpath(path, real) ? real : path, *slash, *start;
	size_t len;

	snprintf(dir, sizeof(dir), "%s", p);
	slash = strrchr(dir, '/');
	if (!slash) {
		snprintf(buf, n, ".");
		return buf;
	}
	dir[slash - dir] = '\0';
	start = strrchr(dir, '/');
	start = start ? start + 1 : dir;
	len = strlen(start);
	snprintf(buf, n, "%.*s", (int)len, len ? start : "/");
	return buf;
}

char *hr_dir_of(const char *path, char *buf, size_t n)
{
	const char *slash = strrchr(path, '/');
	snprintf(buf, n, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
	return buf;
}

/* the node of a run of ours read from folder @dir, -1 none */
static int node_of_dir(const struct hr_fleet *f, const char *dir)
{
	char d[4096];
	size_t i;
	for (i = 0; i < f->nruns; i++)
		if (f->runs[i].node >= 0 && f->runs[i].path && !strcmp(hr_dir_of(f->runs[i].path, d, sizeof(d)), dir))
			return f->runs[i].node;
	return -1;
}

static int place_one(struct hr_fleet *f, const char *dir, const char *path, int *node)
{
	char name[256];
	if (*node >= 0)
		return 0;
	*node = node_of_dir(f, dir);
	if (*node < 0)
		*node = hr_fleet_node(f, hr_dcgm_node_of(path, name, sizeof(name)));
	return *node < 0 ? CH_ERR_RUNTIME : 0;
}

int hr_dcgm_place(struct hr_fleet *f)
{
	size_t i;
	for (i = 0; i < f->ndcgm; i++)
		if (place_one(f, f->dcgm[i].dir, f->dcgm[i].source, &f->dcgm[i].node))
			return CH_ERR_RUNTIME;
	for (i = 0; i < f->nnvbw; i++)
		if (place_one(f, f->nvbw[i].dir, f->nvbw[i].source, &f->nvbw[i].node))
			return CH_ERR_RUNTIME;
	return 0;
}

const char *hr_dcgm_status_name(int status)
{
	static const char *const names[] = { "Pass", "Fail", "Warn", "Skip", "Not Run" };
	return status >= 0 && status <= HR_DCGM_NOT_RUN ? names[status] : "unknown";
}

/* DCGM's status words (3.x upper case, 4.x capitalised); -1 unknown */
static int status_of(const char *s)
{
	if (!s)
		return -1;
	if (!strcasecmp(s, "pass"))
		return HR_DCGM_PASS;
	if (!strcasecmp(s, "fail"))
		return HR_DCGM_FAIL;
	if (!strcasecmp(s, "warn"))
		return HR_DCGM_WARN;
	if (!strcasecmp(s, "skip"))
		return HR_DCGM_SKIP;
	if (!strcasecmp(s, "not run") || !strcasecmp(s, "notrun") || !strcasecmp(s, "not_run"))
		return HR_DCGM_NOT_RUN;
	return -1;
}

/* the largest GPU (entity) index taken as real */
#define DCGM_MAX_GPU 4095

/* @s is GPU indices: whole numbers 0 to DCGM_MAX_GPU, comma-separated
 * (a space after a comma allowed), none empty */
static int gpu_list_ok(const char *s)
{
	do {
		long v = 0;
		int digits = 0;
		while (*s == ' ')
			s++;
		for (; *s >= '0' && *s <= '9'; s++, digits++)
			if ((v = v * 10 + (*s - '0')) > DCGM_MAX_GPU)
				return 0;
		if (!digits || (*s && *s != ','))
			return 0;
	} while (*s && *s++ == ',');
	return 1;
}

/* the GPUs a result names: gpu_ids / gpu_id (string or integer), or
 * entity_id of entity_group "GPU" (or none); 0 and "" when it names none,
 * -1 when a member has another shape, -2 (the value in @buf) when it is not
 * GPU indices (a negative or absurd index, "0,,1", "x") */
static int gpus_of(const json_t *res, char *buf, size_t n)
{
	const char *keys[] = { "gpu_ids", "gpu_id", "entity_id" };
	const json_t *grp = json_object_get(res, "entity_group");
	size_t k;

	buf[0] = '\0';
	for (k = 0; k < 3; k++) {
		const json_t *v = json_object_get(res, keys[k]);
		if (!v)
			continue;
		if (json_is_integer(v))
			snprintf(buf, n, "%lld", (long long)json_integer_value(v));
		else if (json_is_string(v))
			snprintf(buf, n, "%s", json_string_value(v));
		else
			return -1;
		if (!gpu_list_ok(buf))
			return -2;
		if (k == 2 && grp && (!json_is_string(grp) || strcmp(json_string_value(grp), "GPU"))) {
			char id[64];
			snprintf(id, sizeof(id), "%s", buf);
			snprintf(buf, n, "%s %s", json_is_string(grp) ? json_string_value(grp) : "entity", id);
		}
		return 0;
	}
	return 0;
}

/* the warnings joined with "; " into a new string (NULL none); -1 when a
 * warning has a shape DCGM does not print */
static int messages_of(const json_t *res, char **out)
{
	const json_t *w = json_object_get(res, "warnings"), *v;
	char buf[2048] = "";
	size_t i, len = 0;

	*out = NULL;
	if (!w)
		return 0;
	if (!json_is_array(w))
		return -1;
	json_array_foreach(w, i, v) {
		const char *s = json_is_string(v) ? json_string_value(v)
				: json_is_object(v) ? json_string_value(json_object_get(v, "warning"))
						    : NULL;
		if (!s)
			return -1;
		len += (size_t)snprintf(buf + len, len < sizeof(buf) ? sizeof(buf) - len : 0, "%s%s",
				       len ? "; " : "", s);
		if (len >= sizeof(buf))
			len = sizeof(buf) - 1;
	}
	if (buf[0] && !(*out = strdup(buf)))
		return -2;
	return 0;
}

struct dl {
	struct hr_fleet *f;
	const char *path, *version, *dir;
	size_t unreadable;
	char first[256];
};

static void unreadable(struct dl *d, const char *what, const char *test)
{
	if (!d->unreadable++)
		snprintf(d->first, sizeof(d->first), "%s%s%s", what, test ? " of test " : "", test ? test : "");
}

static int add_result(struct dl *d, const char *cat, const char *test, const json_t *res)
{
	struct hr_dcgm_result *r;
	char gpus[128], *msg, what[200];
	int st = status_of(json_string_value(json_object_get(res, "status"))), rc;

	if (st < 0)
		return unreadable(d, "a result without a status DCGM prints (Pass, Fail, Warn, Skip, Not Run)", test), 0;
	rc = gpus_of(res, gpus, sizeof(gpus));
	if (rc == -1)
		return unreadable(d, "a result whose GPU is neither a string nor an integer", test), 0;
	if (rc == -2) {
		snprintf(what, sizeof(what), "a result whose GPUs '%.40s' are not GPU indices (whole numbers 0 to %d, comma-separated)",
			 gpus, DCGM_MAX_GPU);
		return unreadable(d, what, test), 0;
	}
	rc = messages_of(res, &msg);
	if (rc == -2)
		return CH_ERR_RUNTIME;
	if (rc)
		return unreadable(d, "warnings neither strings nor objects with a 'warning' string", test), 0;
	GROW(d->f->dcgm, d->f->ndcgm, r);
	if (!r) {
		free(msg);
		return CH_ERR_RUNTIME;
	}
	r->node = -1;
	r->status = st;
	r->dir = strdup(d->dir);
	r->message = msg;
	r->category = cat ? strdup(cat) : NULL;
	r->test = strdup(test);
	r->gpus = strdup(gpus);
	r->version = d->version ? strdup(d->version) : NULL;
	r->source = strdup(d->path);
	if (!r->test || !r->gpus || !r->source || !r->dir || (cat && !r->category) || (d->version && !r->version))
		return CH_ERR_RUNTIME;
	return 0;
}

static int load_tests(struct dl *d, const char *cat, const json_t *tests)
{
	const json_t *t, *res;
	size_t i, k;
	int rc;

	json_array_foreach(tests, i, t) {
		const char *name = json_string_value(json_object_get(t, "name"));
		const json_t *results = json_object_get(t, "results");
		if (json_is_null(t))
			continue; /* DCGM 3.x prints null between tests */
		if (!name || !json_is_array(results)) {
			unreadable(d, "a test without a name or a results array", name);
			continue;
		}
		json_array_foreach(results, k, res) {
			if (!json_is_object(res)) {
				unreadable(d, "a result that is not an object", name);
				continue;
			}
			if ((rc = add_result(d, cat, name, res)))
				return rc;
		}
	}
	return 0;
}

int hr_dcgm_load(struct hr_fleet *f, const char *path, const json_t *doc)
{
	const json_t *root = dcgm_root(doc), *cats, *c;
	const json_t *meta = json_object_get(doc, "metadata");
	struct dl d = { f, path, NULL, NULL, 0, "" };
	char dir[4096];
	size_t i, n0 = f->ndcgm;
	int rc;

	d.version = json_string_value(json_object_get(root, "version"));
	if (!d.version)
		d.version = json_string_value(json_object_get(meta, "version"));
	if (!d.version)
		d.version = json_string_value(json_object_get(meta, "DCGM Version"));
	cats = json_object_get(root, "test_categories");
	if (!json_is_array(cats)) {
		const char *err = json_string_value(json_object_get(root, "runtime_error"));
		if (err)
			return hr_issue_add(&f->issues, HR_ISSUE_SKIPPED, path, 0, 0,
					    "dcgmi diag did not run its tests (DCGM %s): %s; file skipped",
					    d.version ? d.version : "version not given", err) ? CH_ERR_RUNTIME : 0;
		return hr_issue_add(&f->issues, HR_ISSUE_SKIPPED, path, 0, 0,
				    "dcgmi diag JSON of a layout this reader does not know (DCGM %s): no "
				    "test_categories array; unreadable, file skipped",
				    d.version ? d.version : "version not given") ? CH_ERR_RUNTIME : 0;
	}
	d.dir = hr_dir_of(path, dir, sizeof(dir));
	json_array_foreach(cats, i, c) {
		const json_t *tests = json_object_get(c, "tests");
		if (!json_is_array(tests)) {
			unreadable(&d, "a category without a tests array", NULL);
			continue;
		}
		if ((rc = load_tests(&d, json_string_value(json_object_get(c, "category")), tests)))
			return rc;
	}
	/* every result unreadable: the file gave nothing; skipped whole (not
	 * read: with no other input the run is an input error, exit 2) */
	if (d.unreadable && f->ndcgm == n0)
		return hr_issue_add(&f->issues, HR_ISSUE_SKIPPED, path, 0, 0,
				    "dcgmi diag JSON (DCGM %s): every part unreadable (%zu), first: %s; file skipped",
				    d.version ? d.version : "version not given", d.unreadable, d.first) ? CH_ERR_RUNTIME : 0;
	if (d.unreadable && hr_issue_add(&f->issues, HR_ISSUE_SKIPPED, path, 0, 0,
					 "dcgmi diag JSON (DCGM %s): %zu part(s) unreadable, first: %s; the rest used",
					 d.version ? d.version : "version not given", d.unreadable, d.first))
		return CH_ERR_RUNTIME;
	if (f->ndcgm == n0 && hr_issue_add(&f->issues, HR_ISSUE_NOTE, path, 0, 0,
					   "dcgmi diag JSON without any test result"))
		return CH_ERR_RUNTIME;
	f->files_read++;
	return 0;
}

void hr_dcgm_release(struct hr_fleet *f)
{
	size_t i;
	for (i = 0; i < f->ndcgm; i++) {
		struct hr_dcgm_result *r = &f->dcgm[i];
		free(r->dir); free(r->category); free(r->test); free(r->gpus); free(r->message);
		free(r->version); free(r->source);
	}
	free(f->dcgm);
	f->dcgm = NULL;
	f->ndcgm = 0;
}
