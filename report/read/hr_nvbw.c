/*
 * hr_nvbw.c - reader of `nvbandwidth -j` documents (hr_nvbw.h), with
 * jansson.
 */
#include "report/read/hr_nvbw.h"
#include "report/read/hr_dcgm.h"
#include "report/read/hr_model.h"
#include "report/read/hr_load_shared.h"
#include "base/ch_common.h"
#include "base/ch_parse.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int hr_nvbw_detect(const json_t *doc)
{
	const json_t *n = json_object_get(doc, "nvbandwidth");
	return json_is_object(n) && json_is_array(json_object_get(n, "testcases"));
}

const struct hr_nvbw_case *hr_nvbw_find(const struct hr_nvbw *r, const char *name)
{
	size_t i;
	for (i = 0; i < r->ncases; i++)
		if (!strcmp(r->cases[i].name, name))
			return &r->cases[i];
	return NULL;
}

/* the largest figure taken as a measurement (GB/s, or us for a latency) */
#define NVBW_MAX_FIGURE 1e6

/* one cell: a number, or a string of one ("12.3964"): 0 and *v; "N/A": 1
 * (not measured, *v NAN); a number or string that is no figure (negative,
 * "0x10", "1e308", "inf", ""): 2 (*v NAN); another JSON type: -1 */
static int cell_of(const json_t *c, double *v)
{
	const char *s = json_string_value(c);
	char *end;
	*v = NAN;
	if (json_is_number(c)) {
		double x = json_number_value(c);
		if (!(x >= 0 && x <= NVBW_MAX_FIGURE))
			return 2;
		*v = x;
		return 0;
	}
	if (!s)
		return -1;
	if (!strcmp(s, "N/A"))
		return 1;
	if (!ch_decimal_len(s) || ch_decimal_len(s) != strlen(s))
		return 2;
	double x = strtod(s, &end);
	if (*end || !(x >= 0 && x <= NVBW_MAX_FIGURE))
		return 2;
	*v = x;
	return 0;
}

/* the cells of a file that are no figure: counted, the first few named */
struct nvbw_cells {
	size_t bad, na;
	char named[512];
};

static void bad_cell(struct nvbw_cells *b, const char *tcase, size_t i, size_t k, const json_t *cell)
{
	size_t len = strlen(b->named);
	char val[48];
	if (json_is_string(cell))
		snprintf(val, sizeof(val), "'%.32s'", json_string_value(cell));
	else
		snprintf(val, sizeof(val), "%.6g", json_number_value(cell));
	if (b->bad++ < 3)
		snprintf(b->named + len, sizeof(b->named) - len, "%s%.60s[%zu][%zu] %s", len ? ", " : "", tcase, i, k, val);
}

/* the matrix of @m into @c; -1 when it is not rows of cells of one width.
 * A cell that is no figure is NAN, counted and named in @b; an "N/A" off a
 * square matrix's diagonal (a pair not measured) is NAN and counted. */
static int matrix_of(const json_t *m, struct hr_nvbw_case *c, struct nvbw_cells *b)
{
	const json_t *row, *cell;
	size_t i, k;

	if (!json_is_array(m) || !json_array_size(m) || !json_is_array(json_array_get(m, 0)))
		return -1;
	c->rows = (int)json_array_size(m);
	c->cols = (int)json_array_size(json_array_get(m, 0));
	if (c->rows > 4096 || c->cols < 1 || c->cols > 4096)
		return -1;
	c->m = calloc((size_t)c->rows * (size_t)c->cols, sizeof(*c->m));
	if (!c->m)
		return -2;
	json_array_foreach(m, i, row) {
		if (!json_is_array(row) || json_array_size(row) != (size_t)c->cols)
			return -1;
		json_array_foreach(row, k, cell) {
			int rc = cell_of(cell, &c->m[i * (size_t)c->cols + k]);
			if (rc < 0)
				return -1;
			if (rc == 2)
				bad_cell(b, c->name, i, k, cell);
			if (rc == 1 && !(c->rows == c->cols && i == k))
				b->na++;
		}
	}
	return 0;
}

/* the device list: "0: NAME (DDDDDDDD:BB:DD): (HOST)" -> NAME (...), its
 * PCI address and HOST (the first entry's, into @host) */
static int devices_of(struct hr_nvbw *r, const json_t *list, char *host, size_t nhost)
{
	const json_t *e;
	size_t i;

	host[0] = '\0';
	if (!json_is_array(list) || !json_array_size(list))
		return 0;
	r->ngpus = (int)json_array_size(list);
	r->gpus = calloc((size_t)r->ngpus, sizeof(*r->gpus));
	r->pci = calloc((size_t)r->ngpus, sizeof(*r->pci));
	if (!r->gpus || !r->pci)
		return -2;
	json_array_foreach(list, i, e) {
		const char *s = json_string_value(e), *colon, *hp, *pp;
		char name[256] = "";
		unsigned dom, bus, dev;
		if (!s)
			continue;
		colon = strchr(s, ':');
		hp = strrchr(s, '(');
		/* "(HOST)" ends the entry after "): " */
		if (hp && colon && hp >= colon + 4 && hp[strlen(hp) - 1] == ')' && hp[-1] == ' ' && hp[-2] == ':') {
			if (!i)
				snprintf(host, nhost, "%.*s", (int)(strlen(hp) - 2), hp + 1);
			snprintf(name, sizeof(name), "%.*s", (int)(hp - 2 - (colon + 2)), colon + 2);
		} else if (colon && colon[1]) {
			snprintf(name, sizeof(name), "%s", colon + 1 + (colon[1] == ' '));
		}
		pp = colon ? strchr(colon, '(') : NULL;
		if (pp && sscanf(pp, "(%x:%x:%x)", &dom, &bus, &dev) == 3)
			r->pci[i] = (dom & 0xffffu) << 16 | (bus & 0xffu) << 8 | (dev & 0xffu);
		if (!(r->gpus[i] = strdup(name[0] ? name : s)))
			return -2;
	}
	return 0;
}

static int add_case(struct hr_nvbw *r, const json_t *t, char *notrun, size_t nnr, const char **bad,
		    struct nvbw_cells *cells)
{
	const char *name = json_string_value(json_object_get(t, "name"));
	const char *st = json_string_value(json_object_get(t, "status"));
	const char *desc = json_string_value(json_object_get(t, "bandwidth_description"));
	struct hr_nvbw_case *c;
	size_t len = strlen(notrun);
	int rc;

	if (!name || !st) {
		*bad = "a test case without a name or a status";
		return 0;
	}
	if (strcmp(st, "Passed")) {
		snprintf(notrun + len, nnr - len, "%s%s %s", len ? ", " : "", name, st);
		return 0;
	}
	GROW(r->cases, r->ncases, c);
	if (!c)
		return -2;
	c->name = strdup(name);
	c->description = desc ? strdup(desc) : NULL;
	if (!c->name || (desc && !c->description))
		return -2;
	rc = matrix_of(json_object_get(t, "bandwidth_matrix"), c, cells);
	if (rc == -1) {
		*bad = "a Passed test case whose bandwidth_matrix is not rows of numbers or \"N/A\" of one width";
		free(c->name); free(c->description); free(c->m);
		r->ncases--;
		return 0;
	}
	return rc;
}

int hr_nvbw_load(struct hr_fleet *f, const char *path, const json_t *doc)
{
	const json_t *n = json_object_get(doc, "nvbandwidth"), *cases = json_object_get(n, "testcases"), *t;
	const char *ver = json_string_value(json_object_get(n, "version")), *bad = NULL;
	char host[256], notrun[2048] = "", dir[4096];
	struct hr_nvbw *r;
	struct nvbw_cells cells = { 0, 0, "" };
	size_t i, nbad = 0;
	int rc;

	if (!ver)
		ver = json_string_value(json_object_get(n, "git_version"));
	GROW(f->nvbw, f->nnvbw, r);
	if (!r)
		return CH_ERR_RUNTIME;
	r->node = -1;
	if (!(r->source = strdup(path)) || !(r->dir = strdup(hr_dir_of(path, dir, sizeof(dir)))) || (ver && ver[0] && !(r->version = strdup(ver))))
		return CH_ERR_RUNTIME;
	if (devices_of(r, json_object_get(n, "GPU Device list"), host, sizeof(host)))
		return CH_ERR_RUNTIME;
	if (host[0] && (r->node = hr_fleet_node(f, host)) < 0)
		return CH_ERR_RUNTIME;
	json_array_foreach(cases, i, t) {
		const char *b = NULL;
		if ((rc = add_case(r, t, notrun, sizeof(notrun), &b, &cells)))
			return CH_ERR_RUNTIME;
		if (b && !nbad++)
			bad = b;
	}
	if (notrun[0] && !(r->not_run = strdup(notrun)))
		return CH_ERR_RUNTIME;
	if (nbad && hr_issue_add(&f->issues, HR_ISSUE_SKIPPED, path, 0, 0,
				 "nvbandwidth JSON (%s): %zu test case(s) unreadable, first: %s; the rest used",
				 ver ? ver : "version not given", nbad, bad))
		return CH_ERR_RUNTIME;
	if (cells.bad && hr_issue_add(&f->issues, HR_ISSUE_SKIPPED, path, 0, 0,
				      "nvbandwidth JSON (%s): %zu matrix cell(s) not a figure (a decimal number, 0 to %g, or "
				      "\"N/A\"), skipped: %s%s; the rest used",
				      ver ? ver : "version not given", cells.bad, NVBW_MAX_FIGURE, cells.named,
				      cells.bad > 3 ? ", ..." : ""))
		return CH_ERR_RUNTIME;
	if (cells.na && hr_issue_add(&f->issues, HR_ISSUE_NOTE, path, 0, 0,
				     "nvbandwidth JSON (%s): %zu matrix cell(s) \"N/A\" (a pair or direction not measured: "
				     "no figure, not judged)", ver ? ver : "version not given", cells.na))
		return CH_ERR_RUNTIME;
	if (json_is_string(json_object_get(n, "error")) &&
	    hr_issue_add(&f->issues, HR_ISSUE_NOTE, path, 0, 0, "nvbandwidth reported an error: %s",
			 json_string_value(json_object_get(n, "error"))))
		return CH_ERR_RUNTIME;
	f->files_read++;
	return 0;
}

void hr_nvbw_release(struct hr_fleet *f)
{
	size_t i, k;
	int g;
	for (i = 0; i < f->nnvbw; i++) {
		struct hr_nvbw *r = &f->nvbw[i];
		for (k = 0; k < r->ncases; k++) {
			free(r->cases[k].name); free(r->cases[k].description); free(r->cases[k].m);
		}
		for (g = 0; g < r->ngpus && r->gpus; g++)
			free(r->gpus[g]);
		free(r->cases); free(r->gpus); free(r->pci); free(r->version); free(r->not_run); free(r->source); free(r->dir);
	}
	free(f->nvbw);
	f->nvbw = NULL;
	f->nnvbw = 0;
}
