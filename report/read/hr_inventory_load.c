/*
 * hr_inventory_load.c - a node's host.inventory kept from its result files:
 * the checked copy and its drift keys (the rules that judge it:
 * report/judge/hr_inventory.c).
 */
#include "report/read/hr_inventory_load.h"
#include "base/ch_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ JSON access */

/* The value at a dotted path ("ecc.volatile.uncorrected"), NULL if absent. */
const json_t *hr_inv_dot(const json_t *o, const char *path)
{
	char key[64];
	while (o && *path) {
		size_t n = strcspn(path, ".");
		if (n >= sizeof(key))
			return NULL;
		memcpy(key, path, n);
		key[n] = '\0';
		o = json_object_get(o, key);
		path += n + (path[n] == '.');
	}
	return o;
}

double hr_inv_num(const json_t *o, const char *path)
{
	const json_t *v = hr_inv_dot(o, path);
	if (json_is_boolean(v))
		return json_is_true(v);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

const char *hr_inv_str(const json_t *o, const char *path)
{
	return json_string_value(hr_inv_dot(o, path));
}

/* ------------------------------------------------------------ loading */

static int cmp_cstr(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Distinct values of @field over the records of @arr (optionally only those
 * whose "kind" is @kind), sorted, joined with ","; NULL when none. */
static char *distinct(const json_t *arr, const char *field, const char *kind)
{
	const char *v[128];
	size_t n = 0, i, k, len = 1;
	const json_t *o;
	char *out;

	json_array_foreach(arr, i, o) {
		const char *s = hr_inv_str(o, field);
		if (!s || (kind && (!hr_inv_str(o, "kind") || strcmp(hr_inv_str(o, "kind"), kind))))
			continue;
		for (k = 0; k < n && strcmp(v[k], s); k++)
			;
		if (k == n && n < 128)
			v[n++] = s, len += strlen(s) + 1;
	}
	if (!n)
		return NULL;
	qsort(v, n, sizeof(*v), cmp_cstr);
	if (!(out = malloc(len)))
		return NULL;
	out[0] = '\0';
	for (k = 0; k < n; k++) {
		if (k)
			strcat(out, ",");
		strcat(out, v[k]);
	}
	return out;
}

/* The most common value (ties: the larger) of @v[0..n). */
double hr_inv_mode(const double *v, size_t n, size_t *count)
{
	size_t i, j, best_n = 0;
	double best = NAN;
	for (i = 0; i < n; i++) {
		size_t c = 0;
		for (j = 0; j < n; j++)
			c += v[j] == v[i];
		if (c > best_n || (c == best_n && v[i] > best))
			best_n = c, best = v[i];
	}
	if (count)
		*count = best_n;
	return best;
}

static void set_node_cfg(struct hr_node *nd, int key, char *val)
{
	if (!val)
		return;
	free(nd->cfg[key]);
	nd->cfg[key] = val;
}

/* The fields of an inventory record that the rules read, and their type:
 * 'n' a number >= 0, 'b' a boolean, 's' a string, 'a' an array
 * (docs/results-schema.md, "host.inventory"). null stands for "could not
 * be read" and is not a problem. */
struct field {
	const char *path;
	char type;
};
static const struct field gpu_fields[] = {
	{ "name", 's' }, { "pci_bus_id", 's' },
	{ "pcie.gen_current", 'n' }, { "pcie.gen_max", 'n' }, { "pcie.width_current", 'n' }, { "pcie.width_max", 'n' },
	{ "nvlink.links", 'n' }, { "nvlink.up", 'n' }, { "nvlink.states", 'a' },
	{ "ecc.volatile.uncorrected", 'n' }, { "ecc.aggregate.uncorrected", 'n' },
	{ "remap.pending", 'b' }, { "remap.failure", 'b' }, { "retired_pages.pending", 'b' },
	{ "power.limit_enforced_w", 'n' }, { "power.limit_default_w", 'n' },
	{ "clocks.sm_app_mhz", 'n' }, { "clocks.sm_default_app_mhz", 'n' },
	{ "clock_event_reasons", 'a' }, { "vbios_version", 's' }, { NULL, 0 }
};
static const struct field nic_fields[] = {
	{ "device", 's' }, { "port", 'n' }, { "kind", 's' }, { "state", 's' }, { "rate_gbps", 'n' },
	{ "link_layer", 's' }, { "near_gpus", 'a' }, { "fw_version", 's' }, { NULL, 0 }
};
static const struct field cpu_fields[] = {
	{ "governor", 's' }, { "turbo", 'b' }, { "turbo_source", 's' }, { NULL, 0 }
};

/* What is wrong with @v as a value of type @t, or NULL when it is fine. */
static const char *type_problem(const json_t *v, char t)
{
	switch (t) {
	case 'n':
		if (!json_is_number(v))
			return "not a number";
		return json_number_value(v) < 0 ? "negative" : NULL;
	case 'b':
		return json_is_boolean(v) ? NULL : "not true or false";
	case 's':
		return json_is_string(v) ? NULL : "not a string";
	default:
		return json_is_array(v) ? NULL : "not an array";
	}
}

/* List, as skipped input, each field of record @rec (at @where) whose value
 * is of the wrong type, and make it null (not read): the checks that read
 * it are then not judged. Returns 1 when @rec itself is neither an object
 * nor null (the caller makes it null), else 0. */
static int check_fields(struct hr_fleet *f, const char *path, const char *where,
			json_t *rec, const struct field *fl)
{
	if (!json_is_object(rec)) {
		if (!rec || json_is_null(rec))
			return 0;
		hr_issue_add(&f->issues, HR_ISSUE_SKIPPED, path, 0, 0,
			     "host.inventory.%s: not an object; its checks are not judged", where);
		return 1;
	}
	for (; fl->path; fl++) {
		json_t *o = rec, *up = NULL;
		const char *p = fl->path, *why = NULL;
		char key[64];
		while (o && *p) {
			size_t n = strcspn(p, ".");
			snprintf(key, sizeof(key), "%.*s", (int)n, p);
			up = o;
			o = json_object_get(o, key);
			p += n + (p[n] == '.');
			if (*p && o && !json_is_null(o) && !json_is_object(o)) {
				why = "not an object";
				break;
			}
		}
		if (!why && o && !json_is_null(o))
			why = type_problem(o, fl->type);
		if (!why)
			continue;
		hr_issue_add(&f->issues, HR_ISSUE_SKIPPED, path, 0, 0,
			     "host.inventory.%s.%.*s: %s; the checks that read it are not judged", where,
			     (int)(p - fl->path - (*p != '\0')), fl->path, why);
		json_object_set_new(up, key, json_null()); /* later fields below it: null */
	}
	return 0;
}

/* check_fields() over every record of the inventory @inv (a copy: it is
 * edited). */
static void check_inventory(struct hr_fleet *f, const char *path, json_t *inv)
{
	json_t *gpus = json_object_get(inv, "gpus"), *nics = json_object_get(inv, "nics");
	size_t i;
	char where[48];
	for (i = 0; i < json_array_size(gpus); i++) {
		snprintf(where, sizeof(where), "gpus[%zu]", i);
		if (check_fields(f, path, where, json_array_get(gpus, i), gpu_fields))
			json_array_set_new(gpus, i, json_null());
	}
	for (i = 0; i < json_array_size(nics); i++) {
		snprintf(where, sizeof(where), "nics[%zu]", i);
		if (check_fields(f, path, where, json_array_get(nics, i), nic_fields))
			json_array_set_new(nics, i, json_null());
	}
	if (check_fields(f, path, "cpu", json_object_get(inv, "cpu"), cpu_fields))
		json_object_set_new(inv, "cpu", json_null());
}

int hr_inventory_load(struct hr_fleet *f, int node, const json_t *host, const json_t *end,
		      const char *path, time_t start)
{
	const json_t *inv = json_object_get(host, "inventory"), *g;
	struct hr_node *nd;
	double lim[128];
	size_t n = 0, i;
	char buf[32];

	if (node < 0 || !inv || json_is_null(inv))
		return 0;
	if (!json_is_object(inv) ||
	    (json_object_get(inv, "gpus") && !json_is_array(json_object_get(inv, "gpus"))) ||
	    (json_object_get(inv, "nics") && !json_is_array(json_object_get(inv, "nics")))) {
		hr_issue_add(&f->issues, HR_ISSUE_SKIPPED, path, 0, 0,
			     "host.inventory is not an object with arrays 'gpus' and 'nics': its checks are not judged");
		return 0;
	}
	nd = &f->nodes[node];
	if (nd->inventory && start < nd->inventory_time)
		return 0; /* keep the newer one */
	hr_inventory_node_release(nd);
	nd->inventory = json_deep_copy(inv);
	nd->inventory_source = strdup(path);
	nd->inventory_time = start;
	if (!nd->inventory || !nd->inventory_source)
		return CH_ERR_RUNTIME;
	if (json_is_object(end) && !(nd->rdma_counters_end = json_deep_copy(end)))
		return CH_ERR_RUNTIME;
	check_inventory(f, path, nd->inventory);
	/* from the checked copy: a field listed as wrong-typed is not read */
	inv = nd->inventory;
	set_node_cfg(nd, HR_CFG_VBIOS, distinct(json_object_get(inv, "gpus"), "vbios_version", NULL));
	set_node_cfg(nd, HR_CFG_NIC_FW, distinct(json_object_get(inv, "nics"), "fw_version", "rdma"));
	json_array_foreach(json_object_get(inv, "gpus"), i, g)
		if (!isnan(hr_inv_num(g, "power.limit_enforced_w")) && n < 128)
			lim[n++] = hr_inv_num(g, "power.limit_enforced_w");
	if (n) {
		snprintf(buf, sizeof(buf), "%g W", hr_inv_mode(lim, n, NULL));
		set_node_cfg(nd, HR_CFG_POWER_LIMIT, strdup(buf));
	}
	return 0;
}

void hr_inventory_node_release(struct hr_node *n)
{
	json_decref(n->inventory);
	json_decref(n->rdma_counters_end);
	free(n->inventory_source);
	n->inventory = NULL;
	n->rdma_counters_end = NULL;
	n->inventory_source = NULL;
	n->inventory_time = 0;
}

