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
			   json_is_integer(v), json_is_integer(v) ? json_integer_value(v) : 0,
			   json_is_null(v), json_is_true(v) };
	return r;
}

/* @key of @o */
static struct hr_rv key(const json_t *o, const char *k)
{
	return rv(json_object_get(o, k));
}

static int strs(const json_t *v, struct hr_rstrs *out)
{
	size_t i;

	memset(out, 0, sizeof(*out));
	if (json_is_string(v)) {
		out->is_string = 1;
		if (!(out->v = malloc(sizeof(*out->v))))
			return CH_ERR_RUNTIME;
		out->v[out->n++] = json_string_value(v);
		return 0;
	}
	if (!json_array_size(v))
		return 0;
	if (!(out->v = calloc(json_array_size(v), sizeof(*out->v))))
		return CH_ERR_RUNTIME;
	for (i = 0; i < json_array_size(v); i++)
		if (json_is_string(json_array_get(v, i)))
			out->v[out->n++] = json_string_value(json_array_get(v, i));
	return 0;
}

static int sample(const json_t *v, struct hr_result_sample *s)
{
	s->throttled = json_is_true(json_object_get(v, "throttled"));
	return strs(json_object_get(v, "clock_event_reasons"), &s->reasons);
}

static int telemetry(const json_t *v, struct hr_result_telemetry *t)
{
	t->present = json_is_object(v);
	if (!t->present)
		return 0;
	if (sample(v, &t->self) || sample(json_object_get(v, "before"), &t->before) ||
	    sample(json_object_get(v, "after"), &t->after))
		return CH_ERR_RUNTIME;
	return 0;
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

	s->group_kind = key(sw, "group_kind");
	s->group_name = key(sw, "group_name");
	s->algo = key(sw, "algo");
	s->nranks = key(sw, "nranks");
	s->large_busbw = key(sw, "large_msg_busbw_gbps");
	s->avg_busbw = key(sw, "avg_busbw_gbps");
	if ((rc = list(sw, "nodes", &s->nodes_list, (void **)&s->nodes, sizeof(*s->nodes))))
		return rc;
	for (j = 0; j < s->nodes_list.n; j++)
		s->nodes[j] = rv(json_array_get(s->nodes_list.json, j));
	if ((rc = list(sw, "ranks", &s->ranks_list, (void **)&s->ranks, sizeof(*s->ranks))))
		return rc;
	for (j = 0; j < s->ranks_list.n; j++)
		s->ranks[j] = rv(json_array_get(s->ranks_list.json, j));
	if ((rc = list(sw, "rows", &s->rows_list, (void **)&s->rows, sizeof(*s->rows))))
		return rc;
	for (j = 0; j < s->rows_list.n; j++) {
		const json_t *row = json_array_get(s->rows_list.json, j);
		const json_t *oop = json_object_get(row, "out_of_place"), *ip = json_object_get(row, "in_place");
		s->rows[j].bytes = key(row, "bytes");
		s->rows[j].oop_time_us = key(json_object_get(oop, "time_us"), "median");
		s->rows[j].oop_busbw = key(oop, "busbw_gbps");
		s->rows[j].oop_wrong = key(oop, "wrong");
		s->rows[j].ip_busbw = key(ip, "busbw_gbps");
		s->rows[j].ip_wrong = key(ip, "wrong");
	}
	return 0;
}

/* ranks.layout: its entries, and the most ranks on one host */
static int read_layout(const json_t *doc, struct hr_result *r)
{
	json_t *counts, *c;
	const char *k;
	size_t i;
	int rc;

	if ((rc = list(json_object_get(doc, "ranks"), "layout", &r->layout_list, (void **)&r->layout,
		       sizeof(*r->layout))))
		return rc;
	if (!r->layout_list.is_array)
		return 0;
	if (!(counts = json_object()))
		return CH_ERR_RUNTIME;
	for (i = 0; i < r->layout_list.n; i++) {
		const json_t *e = json_array_get(r->layout_list.json, i);
		struct hr_result_rank *rk = &r->layout[i];
		rk->rank = key(e, "rank");
		rk->host = key(e, "host");
		rk->node_name = key(e, "node_name");
		rk->gpu_index = key(e, "gpu_index");
		rk->gpu_name = key(e, "gpu_name");
		if (rk->host.str)
			json_object_set_new(counts, rk->host.str,
					    json_integer(json_integer_value(json_object_get(counts, rk->host.str)) + 1));
	}
	json_object_foreach(counts, k, c)
		if (json_integer_value(c) > r->ranks_per_host_max)
			r->ranks_per_host_max = (int)json_integer_value(c);
	json_decref(counts);
	return 0;
}

static int read_allreduce(const json_t *doc, struct hr_result *r)
{
	size_t i;
	int rc;

	if ((rc = read_layout(doc, r)))
		return rc;
	r->backend = key(r->results, "backend");
	r->wrong_total = key(r->results, "wrong_total");
	if ((rc = list(r->results, "stragglers", &r->stragglers_list, (void **)&r->stragglers,
		       sizeof(*r->stragglers))))
		return rc;
	for (i = 0; i < r->stragglers_list.n; i++) {
		const json_t *e = json_array_get(r->stragglers_list.json, i);
		struct hr_result_straggler *s = &r->stragglers[i];
		s->node = key(e, "node");
		s->host = key(e, "host");
		s->rank = key(e, "rank");
		s->slowest_fraction = key(e, "slowest_fraction");
		s->excess_pct = key(e, "excess_pct");
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
	const json_t *rec = json_object_get(r->results, "recommendation");
	size_t i;
	int rc;

	r->mode = key(r->results, "mode");
	r->verdict = key(r->results, "verdict");
	r->mask_collapsed = json_is_true(json_object_get(r->results, "mask_collapsed"));
	r->rec.present = json_is_object(rec);
	r->rec.placement = key(rec, "placement");
	r->rec.workers = key(rec, "workers");
	r->rec.config = key(rec, "config");
	r->rec.verdict = key(rec, "verdict");
	r->rec.numactl = key(rec, "numactl");
	r->rec.hwloc_bind = key(rec, "hwloc_bind");
	r->rec.slurm = key(rec, "slurm");
	if ((rc = list(json_object_get(doc, "results"), "configs", &r->configs_list, (void **)&r->configs,
		       sizeof(*r->configs))))
		return rc;
	for (i = 0; i < r->configs_list.n; i++) {
		const json_t *c = json_array_get(r->configs_list.json, i), *lat = json_object_get(c, "lateness_us");
		struct hr_result_config *k = &r->configs[i];
		k->placement = key(c, "placement");
		k->name = key(c, "name");
		k->workers = key(c, "workers");
		k->hog_util = key(c, "hog_util");
		k->has_lateness = json_is_object(lat);
		k->lateness_p50_us = key(lat, "p50");
		k->lateness_p99_us = key(lat, "p99");
		k->lateness_max_us = key(lat, "max");
		k->input_wait_frac = key(c, "input_wait_frac");
		k->accel_util = key(c, "accel_util");
		k->verdict = key(c, "verdict");
		if ((rc = strs(json_object_get(c, "reasons"), &k->reasons)))
			return rc;
	}
	return 0;
}

static int read_point(const json_t *p, struct hr_result_point *pt)
{
	pt->valid = key(p, "valid");
	pt->ai = key(p, "ai_flop_per_byte");
	pt->gflops = key(p, "gflops");
	pt->gbps = key(p, "gbps");
	pt->kernel = key(p, "kernel");
	pt->family = key(p, "family");
	pt->dtype = key(p, "dtype");
	pt->throttled = json_is_true(json_object_get(p, "throttled"));
	return telemetry(json_object_get(p, "telemetry"), &pt->telemetry);
}

static int read_device(const json_t *d, struct hr_result_device *dv)
{
	const json_t *roofs = json_object_get(d, "roofs"), *cg, *v;
	const char *k;
	size_t n = 0, i;
	int rc;

	dv->device = key(d, "device");
	dv->status = key(d, "status");
	dv->host = key(d, "host");
	dv->kind = key(d, "kind");
	dv->name = key(d, "name");
	dv->pci_bus_id = key(d, "pci_bus_id");
	dv->reason = key(d, "reason");
	dv->sku = key(d, "sku");
	dv->throttled = json_is_true(json_object_get(d, "throttled"));
	dv->clocks = key(d, "clocks");
	dv->clock_mhz = key(json_object_get(d, "config"), "clock_mhz");
	if ((rc = strs(json_object_get(d, "throttle_reasons"), &dv->throttle_reasons)) ||
	    (rc = telemetry(json_object_get(d, "telemetry"), &dv->telemetry)))
		return rc;
	if ((rc = list(d, "points", &dv->points_list, (void **)&dv->points, sizeof(*dv->points))))
		return rc;
	for (i = 0; i < dv->points_list.n; i++)
		if ((rc = read_point(json_array_get(dv->points_list.json, i), &dv->points[i])))
			return rc;
	dv->has_roofs = json_is_object(roofs);
	dv->memory_gbps = key(roofs, "memory_gbps");
	cg = json_object_get(roofs, "compute_gflops");
	dv->has_compute = json_is_object(cg);
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

static void read_envelope(const json_t *doc, struct hr_result *r)
{
	const json_t *host = json_object_get(doc, "host"), *en = json_object_get(doc, "energy");
	const json_t *sw = json_object_get(doc, "software");

	r->status = json_string_value(json_object_get(doc, "status"));
	r->reason = json_string_value(json_object_get(doc, "reason"));
	r->hostname = json_string_value(json_object_get(host, "hostname"));
	r->start_utc = json_string_value(json_object_get(doc, "start_utc"));
	r->end_utc = json_string_value(json_object_get(doc, "end_utc"));
	r->host = json_is_object(host) ? host : NULL;
	r->host_packages = key(host, "packages");
	r->host_cpu_model = json_string_value(json_object_get(host, "cpu_model"));
	r->host_ngpus = json_array_size(json_object_get(host, "gpus"));
	r->results = json_is_object(json_object_get(doc, "results")) ? json_object_get(doc, "results") : NULL;
	r->has_energy = json_is_object(en);
	r->energy_cpu_j = key(en, "cpu_j");
	r->energy_gpu_j = key(en, "gpu_j");
	r->energy_wall_sec = key(en, "wall_sec");
	r->energy_source = key(en, "source");
	r->has_software = json_is_object(sw);
	r->sw_cuda_driver = json_string_value(json_object_get(sw, "cuda_driver"));
	r->sw_nvml_driver = json_string_value(json_object_get(sw, "nvml_driver"));
	r->sw_cuda_runtime = json_string_value(json_object_get(sw, "cuda_runtime"));
	r->sw_nccl = json_string_value(json_object_get(sw, "nccl"));
	r->sw_mpi = json_string_value(json_object_get(sw, "mpi"));
}

int hr_result_read(const json_t *doc, struct hr_result *r)
{
	memset(r, 0, sizeof(*r));
	r->doc = doc;
	r->schema = json_string_value(json_object_get(doc, "schema"));
	r->schema_version = key(doc, "schema_version");
	r->tool_name = json_string_value(json_object_get(doc, "tool"));
	r->tool = hr_result_tool(doc);
	if (!r->tool)
		return 0;
	read_envelope(doc, r);
	if (!strcmp(r->tool, "allreduce_bw"))
		return read_allreduce(doc, r);
	if (!strcmp(r->tool, "loader_contention"))
		return read_loader(doc, r);
	if (!strcmp(r->tool, "roofline"))
		return read_roofline(doc, r);
	return 0;
}

static void release_telemetry(struct hr_result_telemetry *t)
{
	free(t->self.reasons.v);
	free(t->before.reasons.v);
	free(t->after.reasons.v);
}

void hr_result_release(struct hr_result *r)
{
	size_t i, k;

	for (i = 0; r->sweeps && i < r->sweeps_list.n; i++) {
		free(r->sweeps[i].nodes);
		free(r->sweeps[i].ranks);
		free(r->sweeps[i].rows);
	}
	for (i = 0; r->devices && i < r->devices_list.n; i++) {
		struct hr_result_device *d = &r->devices[i];
		for (k = 0; d->points && k < d->points_list.n; k++)
			release_telemetry(&d->points[k].telemetry);
		release_telemetry(&d->telemetry);
		free(d->throttle_reasons.v);
		free(d->points);
		free(d->compute);
	}
	for (i = 0; r->configs && i < r->configs_list.n; i++)
		free(r->configs[i].reasons.v);
	free(r->sweeps);
	free(r->layout);
	free(r->stragglers);
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
