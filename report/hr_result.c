/*
 * hr_result.c - the result reader: a result document into a typed record
 * (hr_result.h).
 */
#include "report/hr_result.h"
#include "base/ch_common.h"
#include "base/ch_result.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *hr_result_tool(const json_t *doc)
{
	const char *schema = json_string_value(json_object_get(doc, "schema"));
	const json_t *ver = json_object_get(doc, "schema_version");

	if (!json_is_object(doc) || !schema || strcmp(schema, CH_RESULT_SCHEMA) ||
	    !json_is_integer(ver) || json_integer_value(ver) != CH_RESULT_SCHEMA_VERSION)
		return NULL;
	return json_string_value(json_object_get(doc, "tool"));
}

static struct hr_rv rv(const json_t *v)
{
	struct hr_rv r = { v, json_string_value(v), json_is_number(v) ? json_number_value(v) : NAN,
			   json_is_integer(v), json_is_integer(v) ? json_integer_value(v) : 0 };
	return r;
}

/* @key of @o as a list; allocates @n zeroed elements of @size into *@out */
static int list(const json_t *o, const char *key, struct hr_rlist *l, void **out, size_t size)
{
	const json_t *v = json_object_get(o, key);

	l->json = v;
	l->is_array = json_is_array(v);
	l->n = json_array_size(v);
	*out = NULL;
	if (l->n && !(*out = calloc(l->n, size)))
		return CH_ERR_RUNTIME;
	return 0;
}

char *hr_rv_text(const struct hr_rv *v)
{
	return v->json ? json_dumps(v->json, JSON_ENCODE_ANY | JSON_COMPACT) : strdup("nothing");
}

static int read_sweep(const json_t *sw, struct hr_result_sweep *s)
{
	size_t j;
	int rc;

	s->group_kind = rv(json_object_get(sw, "group_kind"));
	s->algo = rv(json_object_get(sw, "algo"));
	s->nranks = rv(json_object_get(sw, "nranks"));
	s->large_busbw = rv(json_object_get(sw, "large_msg_busbw_gbps"));
	if ((rc = list(sw, "nodes", &s->nodes_list, (void **)&s->nodes, sizeof(*s->nodes))))
		return rc;
	for (j = 0; j < s->nodes_list.n; j++)
		s->nodes[j] = rv(json_array_get(s->nodes_list.json, j));
	if ((rc = list(sw, "rows", &s->rows_list, (void **)&s->rows, sizeof(*s->rows))))
		return rc;
	for (j = 0; j < s->rows_list.n; j++) {
		const json_t *row = json_array_get(s->rows_list.json, j);
		const json_t *oop = json_object_get(row, "out_of_place");
		s->rows[j].bytes = rv(json_object_get(row, "bytes"));
		s->rows[j].oop_time_us = rv(json_object_get(json_object_get(oop, "time_us"), "median"));
		s->rows[j].oop_busbw = rv(json_object_get(oop, "busbw_gbps"));
		s->rows[j].oop_wrong = rv(json_object_get(oop, "wrong"));
	}
	return 0;
}

static int read_allreduce(const json_t *doc, struct hr_result *r)
{
	const json_t *layout = json_object_get(json_object_get(doc, "ranks"), "layout"), *e;
	size_t i;
	int rc;

	/* GPUs (ranks) per node from the layout: the most ranks on one host */
	if (json_is_array(layout)) {
		json_t *counts = json_object(), *c;
		const char *k;
		if (!counts)
			return CH_ERR_RUNTIME;
		json_array_foreach(layout, i, e) {
			const char *h = json_string_value(json_object_get(e, "host"));
			if (h)
				json_object_set_new(counts, h, json_integer(json_integer_value(json_object_get(counts, h)) + 1));
		}
		json_object_foreach(counts, k, c)
			if (json_integer_value(c) > r->ranks_per_host_max)
				r->ranks_per_host_max = (int)json_integer_value(c);
		json_decref(counts);
	}
	if ((rc = list(json_object_get(doc, "results"), "sweeps", &r->sweeps_list, (void **)&r->sweeps,
		       sizeof(*r->sweeps))))
		return rc;
	for (i = 0; i < r->sweeps_list.n; i++)
		if ((rc = read_sweep(json_array_get(r->sweeps_list.json, i), &r->sweeps[i])))
			return rc;
	return 0;
}

static int read_loader(const json_t *doc, struct hr_result *r)
{
	size_t i;
	int rc;

	if ((rc = list(json_object_get(doc, "results"), "configs", &r->configs_list, (void **)&r->configs,
		       sizeof(*r->configs))))
		return rc;
	for (i = 0; i < r->configs_list.n; i++) {
		const json_t *c = json_array_get(r->configs_list.json, i);
		r->configs[i].placement = rv(json_object_get(c, "placement"));
		r->configs[i].name = rv(json_object_get(c, "name"));
		r->configs[i].input_wait_frac = rv(json_object_get(c, "input_wait_frac"));
		r->configs[i].accel_util = rv(json_object_get(c, "accel_util"));
	}
	return 0;
}

static int read_device(const json_t *d, struct hr_result_device *dv)
{
	const json_t *roofs = json_object_get(d, "roofs"), *cg, *v;
	const char *k;
	size_t n = 0;

	dv->device = rv(json_object_get(d, "device"));
	dv->status = rv(json_object_get(d, "status"));
	dv->has_roofs = json_is_object(roofs);
	dv->memory_gbps = rv(json_object_get(roofs, "memory_gbps"));
	cg = json_object_get(roofs, "compute_gflops");
	if (!json_object_size(cg))
		return 0;
	dv->compute = calloc(json_object_size(cg), sizeof(*dv->compute));
	if (!dv->compute)
		return CH_ERR_RUNTIME;
	json_object_foreach((json_t *)cg, k, v) {
		dv->compute[n].dtype = k;
		dv->compute[n++].gflops = rv(v);
	}
	dv->ncompute = n;
	return 0;
}

static int read_roofline(const json_t *doc, struct hr_result *r)
{
	size_t i;
	int rc;

	if ((rc = list(json_object_get(doc, "results"), "devices", &r->devices_list, (void **)&r->devices,
		       sizeof(*r->devices))))
		return rc;
	for (i = 0; i < r->devices_list.n; i++)
		if ((rc = read_device(json_array_get(r->devices_list.json, i), &r->devices[i])))
			return rc;
	return 0;
}

int hr_result_read(const json_t *doc, struct hr_result *r)
{
	memset(r, 0, sizeof(*r));
	r->doc = doc;
	r->tool = hr_result_tool(doc);
	if (!r->tool)
		return 0;
	r->status = json_string_value(json_object_get(doc, "status"));
	r->hostname = json_string_value(json_object_get(json_object_get(doc, "host"), "hostname"));
	r->start_utc = json_string_value(json_object_get(doc, "start_utc"));
	if (!strcmp(r->tool, "allreduce_bw"))
		return read_allreduce(doc, r);
	if (!strcmp(r->tool, "loader_contention"))
		return read_loader(doc, r);
	if (!strcmp(r->tool, "roofline"))
		return read_roofline(doc, r);
	return 0;
}

void hr_result_release(struct hr_result *r)
{
	size_t i;

	for (i = 0; r->sweeps && i < r->sweeps_list.n; i++) {
		free(r->sweeps[i].nodes);
		free(r->sweeps[i].rows);
	}
	for (i = 0; r->devices && i < r->devices_list.n; i++)
		free(r->devices[i].compute);
	free(r->sweeps);
	free(r->configs);
	free(r->devices);
	memset(r, 0, sizeof(*r));
}

int hr_result_pick_config(const struct hr_result *r)
{
	static const char *const pref[] = { "as-is", "shared", NULL };
	size_t i;
	int p;

	for (p = 0; pref[p]; p++)
		for (i = 0; i < r->configs_list.n; i++)
			if (r->configs[i].placement.str && !strcmp(r->configs[i].placement.str, pref[p]))
				return (int)i;
	return -1;
}
