/*
 * hr_rows.c - the report's tables as typed rows (hr_rows.h).
 */
#include "report/render/hr_rows.h"
#include "base/ch_common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const hr_rows_config_keys[HR_ROWS_CONFIG_KEYS] = {
	"gpu_model", "driver", "cuda", "nccl", "mpi", "clocks", "vbios", "nic_fw", "power_limit", "cpu_model",
};

static int level_flagged(const char *l)
{
	return l && strcmp(l, "info");
}

/* calloc of n rows, at least one, so that NULL means out of memory */
static void *rows_alloc(size_t n, size_t size)
{
	return calloc(n ? n : 1, size);
}

static struct hr_reason_row reason_row(const json_t *r)
{
	struct hr_reason_row x;
	x.level = hr_jstr(r, "level");
	x.text = hr_jstr(r, "text");
	x.action = hr_jstr(r, "action");
	x.code = hr_jstr(r, "code");
	x.flagged = level_flagged(x.level);
	return x;
}

static int build_nodes(const json_t *nodes, struct hr_rows *r)
{
	const json_t *n, *x;
	size_t i, j;
	r->nodes = rows_alloc(json_array_size(nodes), sizeof(*r->nodes));
	if (!r->nodes)
		return CH_ERR_RUNTIME;
	json_array_foreach(nodes, i, n) {
		struct hr_node_row *row = &r->nodes[r->nnodes++];
		const json_t *cfg = json_object_get(n, "config"), *rs = json_object_get(n, "reasons");
		int q;
		row->verdict = hr_jstr(n, "verdict");
		row->name = hr_jstr(n, "name");
		for (q = 0; q < HR_ROWS_CONFIG_KEYS; q++)
			row->config[q] = hr_jstr(cfg, hr_rows_config_keys[q]);
		row->not_like_for_like = json_is_false(json_object_get(n, "like_for_like"));
		row->drain_candidate = json_is_true(json_object_get(n, "drain_candidate"));
		row->not_judged_reason = hr_jstr(n, "not_judged_reason");
		row->reasons = rows_alloc(json_array_size(rs), sizeof(*row->reasons));
		if (!row->reasons)
			return CH_ERR_RUNTIME;
		json_array_foreach(rs, j, x)
			row->reasons[row->nreasons++] = reason_row(x);
	}
	return 0;
}

static int build_findings_drift(const json_t *p, struct hr_rows *r)
{
	const json_t *fs = json_object_get(p, "findings"), *dr = json_object_get(p, "drift"), *x, *v;
	size_t i, k;
	r->findings = rows_alloc(json_array_size(fs), sizeof(*r->findings));
	r->drift = rows_alloc(json_array_size(dr), sizeof(*r->drift));
	if (!r->findings || !r->drift)
		return CH_ERR_RUNTIME;
	json_array_foreach(fs, i, x)
		r->findings[r->nfindings++] = reason_row(x);
	json_array_foreach(dr, i, x) {
		struct hr_drift_row *row = &r->drift[r->ndrift++];
		const json_t *vs = json_object_get(x, "nodes");
		row->key = hr_jstr(x, "key");
		row->majority = hr_jstr(x, "majority");
		row->values = rows_alloc(json_array_size(vs), sizeof(*row->values));
		if (!row->values)
			return CH_ERR_RUNTIME;
		json_array_foreach(vs, k, v) {
			row->values[row->nvalues].node = hr_jstr(v, "node");
			row->values[row->nvalues++].value = hr_jstr(v, "value");
		}
	}
	return 0;
}

int hr_rows_detailed(const json_t *node)
{
	const char *d = hr_jstr(node, "detail");
	return !d || strcmp(d, "bounded");
}

static void device_row(struct hr_device_row *row, const json_t *n, const json_t *d)
{
	row->node = hr_jstr(n, "name");
	row->device = hr_jstr(d, "device");
	row->sku = hr_jstr(d, "sku");
	row->name = hr_jstr(d, "name");
	row->status = hr_jstr(d, "status");
	row->reason = hr_jstr(d, "reason");
	row->value = row->pct_of_datasheet = row->pct_of_expected = NAN;
	row->pct_of_fleet_median = row->z = row->pct_of_node_median = NAN;
}

static int build_devices(const json_t *nodes, struct hr_rows *r)
{
	const json_t *n, *d, *m;
	size_t i, j, k, rows = 0;
	/* a node of bounded detail (a PASS node without --detail all) lists
	 * its devices' values only: no rows */
	json_array_foreach(nodes, i, n)
		json_array_foreach(hr_rows_detailed(n) ? json_object_get(n, "devices") : NULL, j, d)
			rows += json_array_size(json_object_get(d, "metrics")) ? json_array_size(json_object_get(d, "metrics")) : 1;
	r->devices = rows_alloc(rows, sizeof(*r->devices));
	if (!r->devices)
		return CH_ERR_RUNTIME;
	json_array_foreach(nodes, i, n)
		json_array_foreach(hr_rows_detailed(n) ? json_object_get(n, "devices") : NULL, j, d) {
			const json_t *ms = json_object_get(d, "metrics");
			if (!json_array_size(ms)) {
				struct hr_device_row *row = &r->devices[r->ndevices++];
				device_row(row, n, d);
				row->is_status = 1;
				continue;
			}
			json_array_foreach(ms, k, m) {
				struct hr_device_row *row = &r->devices[r->ndevices++];
				device_row(row, n, d);
				row->metric = hr_jstr(m, "metric");
				row->unit = hr_jstr(m, "unit");
				row->level = hr_jstr(m, "level");
				row->level_text = row->level;
				if (json_is_false(json_object_get(m, "judged")) && row->level && !strcmp(row->level, "info"))
					row->level_text = hr_jstr(m, "superseded_by") ? "not judged (earlier run)"
										   : "not judged";
				row->value = hr_jnum(m, "value");
				row->pct_of_datasheet = hr_jnum(m, "pct_of_datasheet");
				row->pct_of_expected = hr_jnum(m, "pct_of_expected");
				row->pct_of_fleet_median = hr_jnum(m, "pct_of_fleet_median");
				row->z = hr_jnum(m, "z");
				row->pct_of_node_median = hr_jnum(m, "pct_of_node_median");
				row->flagged = level_flagged(row->level);
				r->metrics++;
				r->metrics_flagged += row->flagged;
			}
		}
	return 0;
}

/* The values of the devices of nodes of bounded detail, in profile order. */
static int build_values(const json_t *nodes, struct hr_rows *r)
{
	const json_t *n, *d, *v;
	const char *key;
	size_t i, j, rows = 0;
	json_array_foreach(nodes, i, n)
		json_array_foreach(json_object_get(n, "devices"), j, d)
			rows += json_object_size(json_object_get(d, "values"));
	r->values = rows_alloc(rows, sizeof(*r->values));
	if (!r->values)
		return CH_ERR_RUNTIME;
	json_array_foreach(nodes, i, n)
		json_array_foreach(json_object_get(n, "devices"), j, d)
			json_object_foreach((json_t *)json_object_get(d, "values"), key, v) {
				struct hr_value_row *row = &r->values[r->nvalues++];
				row->node = hr_jstr(n, "name");
				row->device = hr_jstr(d, "device");
				row->sku = hr_jstr(d, "sku");
				row->metric = key;
				row->value = json_is_number(v) ? json_number_value(v) : NAN;
			}
	return 0;
}

int hr_rows_group_flagged(const json_t *g)
{
	return level_flagged(hr_jstr(json_object_get(g, "comparison"), "level")) ||
	       hr_jnum(g, "wrong_total") > 0 || hr_jstr(g, "failure");
}

static int build_groups(const json_t *groups, struct hr_rows *r)
{
	const json_t *g;
	size_t i;
	r->groups = rows_alloc(json_array_size(groups), sizeof(*r->groups));
	if (!r->groups)
		return CH_ERR_RUNTIME;
	json_array_foreach(groups, i, g) {
		struct hr_group_row *row = &r->groups[r->ngroups++];
		const json_t *cmp = json_object_get(g, "comparison");
		row->name = hr_jstr(g, "name");
		row->kind = hr_jstr(g, "kind");
		row->collective = hr_jstr(g, "collective");
		row->algo = hr_jstr(g, "algo");
		row->source = hr_jstr(g, "source");
		row->failure = hr_jstr(g, "failure");
		row->level = json_is_object(cmp) ? hr_jstr(cmp, "level") : NULL;
		row->level_text = hr_group_level_text(g);
		row->nodes = json_object_get(g, "nodes");
		row->nranks = hr_jint(g, "nranks", 0);
		row->large_msg_bytes = hr_jnum(g, "large_msg_bytes");
		row->large_msg_busbw_gbps = hr_jnum(g, "large_msg_busbw_gbps");
		row->pct_of_fleet_median = hr_jnum(cmp, "pct_of_fleet_median");
		row->avg_busbw_gbps = hr_jnum(g, "avg_busbw_gbps");
		row->reported_avg_busbw_gbps = hr_jnum(g, "reported_avg_busbw_gbps");
		row->flagged = hr_rows_group_flagged(g);
		r->groups_flagged += row->flagged;
	}
	return 0;
}

/* A node's loader configurations and checkpoint entries (arrays, or NULL). */
static const json_t *loader_configs(const json_t *n)
{
	return json_object_get(json_object_get(n, "loader"), "configs");
}

static const json_t *ckpt_entries(const json_t *n)
{
	return json_object_get(n, "checkpoint");
}

/* Room for one row of @size bytes per element of every node's list(). */
static void *per_node_rows(const json_t *nodes, const json_t *(*list)(const json_t *), size_t size)
{
	const json_t *n;
	size_t i, rows = 0;
	json_array_foreach(nodes, i, n)
		rows += json_array_size(list(n));
	return rows_alloc(rows, size);
}

static int build_loader(const json_t *nodes, struct hr_rows *r)
{
	const json_t *n, *c;
	size_t i, j;
	r->loader = per_node_rows(nodes, loader_configs, sizeof(*r->loader));
	if (!r->loader)
		return CH_ERR_RUNTIME;
	json_array_foreach(nodes, i, n) {
		json_array_foreach(loader_configs(n), j, c) {
			struct hr_loader_row *row = &r->loader[r->nloader++];
			row->node = hr_jstr(n, "name");
			row->config = hr_jstr(c, "name");
			row->placement = hr_jstr(c, "placement");
			row->verdict = hr_jstr(c, "verdict");
			row->workers = hr_jint(c, "workers", -1); /* -1: not recorded */
			row->lateness_p50_us = hr_jnum(c, "lateness_p50_us");
			row->lateness_p99_us = hr_jnum(c, "lateness_p99_us");
			row->input_wait_frac = hr_jnum(c, "input_wait_frac");
			row->accel_util = hr_jnum(c, "accel_util");
			row->flagged = row->verdict && strcmp(row->verdict, "pass");
			r->loader_flagged += row->flagged;
		}
	}
	return 0;
}

static const json_t *busbw_entries(const json_t *n)
{
	return json_object_get(n, "busbw");
}

static int build_busbw(const json_t *nodes, struct hr_rows *r)
{
	const json_t *n, *c;
	size_t i, j;
	r->busbw = per_node_rows(nodes, busbw_entries, sizeof(*r->busbw));
	if (!r->busbw)
		return CH_ERR_RUNTIME;
	json_array_foreach(nodes, i, n)
		json_array_foreach(busbw_entries(n), j, c) {
			struct hr_busbw_row *row = &r->busbw[r->nbusbw++];
			row->node = hr_jstr(n, "name");
			row->group = hr_jstr(c, "group");
			row->kind = hr_jstr(c, "kind");
			row->algo = hr_jstr(c, "algo");
			row->nranks = hr_jint(c, "nranks", 0);
			row->large_msg_busbw_gbps = hr_jnum(c, "large_msg_busbw_gbps");
		}
	return 0;
}

static int build_ckpt(const json_t *nodes, struct hr_rows *r)
{
	const json_t *n, *c;
	size_t i, j;
	r->ckpt = per_node_rows(nodes, ckpt_entries, sizeof(*r->ckpt));
	if (!r->ckpt)
		return CH_ERR_RUNTIME;
	json_array_foreach(nodes, i, n)
		json_array_foreach(ckpt_entries(n), j, c) {
			struct hr_ckpt_row *row = &r->ckpt[r->nckpt++];
			row->node = hr_jstr(n, "name");
			row->mount = hr_jstr(c, "mount");
			row->level = hr_jstr(c, "level");
			row->judged_against = hr_jstr(c, "judged_against");
			row->source = hr_jstr(c, "source");
			row->ranks = hr_jint(c, "ranks", 0);
			row->peers = hr_jint(c, "peers", 0);
			row->bad_files = hr_jint(c, "bad_files", 0);
			row->read_back_judged = json_is_true(json_object_get(c, "read_back_judged"));
			row->block_sec = hr_jnum(c, "block_sec");
			row->rank_write_gbps = hr_jnum(c, "rank_write_gbps");
			row->node_write_gbps = hr_jnum(c, "node_write_gbps");
			row->peers_median_rank_write_gbps = hr_jnum(c, "peers_median_rank_write_gbps");
			row->peers_over_node = hr_jnum(c, "peers_over_node");
			row->flagged = row->level && strcmp(row->level, "info");
			r->ckpt_flagged += row->flagged;
		}
	return 0;
}

static int build_issues(const json_t *issues, struct hr_rows *r)
{
	const json_t *x;
	size_t i;
	r->issues = rows_alloc(json_array_size(issues), sizeof(*r->issues));
	if (!r->issues)
		return CH_ERR_RUNTIME;
	json_array_foreach(issues, i, x) {
		struct hr_issue_row *row = &r->issues[r->nissues++];
		row->path = hr_jstr(x, "path");
		row->kind = hr_jstr(x, "kind");
		row->message = hr_jstr(x, "message");
		row->line = hr_jint(x, "line", 0);
		row->column = hr_jint(x, "column", 0);
	}
	return 0;
}

int hr_rows_build(const json_t *p, struct hr_rows *r)
{
	const json_t *nodes = json_object_get(p, "nodes");
	memset(r, 0, sizeof(*r));
	if (build_nodes(nodes, r) || build_findings_drift(p, r) || build_devices(nodes, r) ||
	    build_values(nodes, r) || build_busbw(nodes, r) ||
	    build_groups(json_object_get(p, "groups"), r) || build_loader(nodes, r) || build_ckpt(nodes, r) ||
	    build_issues(json_object_get(json_object_get(p, "inputs"), "issues"), r))
		return CH_ERR_RUNTIME;
	return 0;
}

void hr_rows_free(struct hr_rows *r)
{
	size_t i;
	for (i = 0; r->nodes && i < r->nnodes; i++)
		free(r->nodes[i].reasons);
	for (i = 0; r->drift && i < r->ndrift; i++)
		free(r->drift[i].values);
	free(r->nodes);
	free(r->findings);
	free(r->drift);
	free(r->devices);
	free(r->values);
	free(r->busbw);
	free(r->groups);
	free(r->loader);
	free(r->ckpt);
	free(r->issues);
	memset(r, 0, sizeof(*r));
}

void hr_rows_num(struct hr_buf *b, double v, const char *suffix)
{
	char t[32];
	if (isnan(v))
		hr_buf_puts(b, "n/a");
	else
		hr_buf_printf(b, "%s%s", hr_fmt_num(v, t, sizeof(t)), suffix);
}

void hr_rows_nums(struct hr_buf *b, const char *sep, size_t n, const double *v,
		  const char *const *suffix)
{
	size_t i;
	for (i = 0; i < n; i++) {
		hr_buf_puts(b, i ? sep : "");
		hr_rows_num(b, v[i], suffix[i]);
	}
}

void hr_rows_drift_values(struct hr_buf *b, const struct hr_drift_row *r, const char *sep,
			  const char *open, const char *close, hr_esc_fn esc)
{
	size_t k;
	for (k = 0; k < r->nvalues; k++) {
		hr_buf_puts(b, k ? sep : "");
		esc(b, r->values[k].node);
		hr_buf_puts(b, open);
		esc(b, r->values[k].value);
		hr_buf_puts(b, close);
	}
}

void hr_rows_names(struct hr_buf *b, const json_t *names, hr_esc_fn esc)
{
	const json_t *x;
	size_t k;
	json_array_foreach(names, k, x) {
		if (k == 4) {
			hr_buf_printf(b, " +%zu", json_array_size(names) - 4);
			break;
		}
		hr_buf_puts(b, k ? ", " : "");
		esc(b, json_string_value(x));
	}
}

void hr_rows_where(struct hr_buf *b, const struct hr_issue_row *r, hr_esc_fn esc)
{
	esc(b, r->path);
	if (r->line > 0)
		hr_buf_printf(b, ":%lld", r->line);
	if (r->column > 0)
		hr_buf_printf(b, ":%lld", r->column);
}

const char *const hr_rows_ckpt_cols[HR_ROWS_CKPT_COLS] = {
	"node", "mount", "ranks", "blocked (s)", "GB/s per rank", "node GB/s",
	"peers' median GB/s per rank", "vs peers", "level", "judged against (source)",
};

void hr_rows_ckpt_cells(struct hr_buf *b, const struct hr_ckpt_row *r, const char *sep, hr_esc_fn esc)
{
	static const char *const none[] = { "", "", "", "" };
	const double v[] = { r->block_sec, r->rank_write_gbps, r->node_write_gbps, r->peers_median_rank_write_gbps };
	esc(b, r->node);
	hr_buf_puts(b, sep);
	esc(b, r->mount);
	hr_buf_printf(b, "%s%lld%s", sep, r->ranks, sep);
	hr_rows_nums(b, sep, 4, v, none);
	hr_buf_printf(b, " (%lld peer%s)%s", r->peers, r->peers == 1 ? "" : "s", sep);
	if (isnan(r->peers_over_node) || !(r->peers_over_node > 0))
		hr_buf_puts(b, "not judged (no peers)");
	else
		hr_buf_printf(b, "%.2fx the peers'", 1.0 / r->peers_over_node);
	hr_buf_printf(b, "%s%s%s", sep, r->bad_files ? "FAIL: files did not read back" :
		      r->level && !strcmp(r->level, "warn") ? "WARN"
		      : !r->read_back_judged ? "not judged (read-back: no valid verify.sync)"
		      : isnan(r->peers_over_node) ? "read-back PASS; speed not judged" : "PASS", sep);
	esc(b, r->judged_against);
	hr_buf_puts(b, " (");
	esc(b, r->source);
	hr_buf_puts(b, ")");
}

/* ------------------------------------------------------------ text every output shares */

static const char *fmt_sec(double s, char *buf, size_t n)
{
	if (isnan(s))
		snprintf(buf, n, "n/a");
	else if (s < 120)
		snprintf(buf, n, "%.0f s", s);
	else if (s < 7200)
		snprintf(buf, n, "%.0f min %.0f s", floor(s / 60), fmod(s, 60));
	else
		snprintf(buf, n, "%.1f h", s / 3600);
	return buf;
}

/* "12.3 kWh" / "5.2 Wh" */
static const char *fmt_kwh(double kwh, char *buf, size_t n)
{
	char num[32];
	if (isnan(kwh))
		snprintf(buf, n, "n/a");
	else if (kwh < 1)
		snprintf(buf, n, "%s Wh", hr_fmt_num(kwh * 1000, num, sizeof(num)));
	else
		snprintf(buf, n, "%s kWh", hr_fmt_num(kwh, num, sizeof(num)));
	return buf;
}

void hr_rows_cost_line(const json_t *c, char *buf, size_t n)
{
	char wall[48], it[48], fac[48], cost[32], co2[32];
	const char *src = hr_jstr(c, "energy_source");
	if (hr_jint(c, "runs_counted", 0) == 0) {
		snprintf(buf, n, "run cost: not known (no input with timestamps or an energy record; nccl-tests text logs carry neither)");
		return;
	}
	snprintf(buf, n, "run cost: %s wall (first start to last end); energy %s (%s), facility %s at PUE %.2f: %s %s, %s kg CO2e",
		 fmt_sec(hr_jnum(c, "wall_span_sec"), wall, sizeof(wall)),
		 fmt_kwh(hr_jnum(c, "it_energy_j") / 3.6e6, it, sizeof(it)),
		 src ? src : "n/a",
		 fmt_kwh(hr_jnum(c, "facility_energy_kwh"), fac, sizeof(fac)), hr_jnum(c, "pue"),
		 hr_fmt_num(hr_jnum(c, "cost"), cost, sizeof(cost)),
		 hr_jstr(c, "currency") ? hr_jstr(c, "currency") : "",
		 hr_fmt_num(hr_jnum(c, "co2e_kg"), co2, sizeof(co2)));
}

const char *hr_group_level_text(const json_t *g)
{
	const json_t *cmp = json_object_get(g, "comparison");
	if (!json_is_object(cmp))
		return hr_jstr(g, "failure") ? "failed" : "not judged";
	if (json_is_false(json_object_get(cmp, "judged")))
		return hr_jstr(cmp, "superseded_by") ? "not judged (earlier run)" : "not judged";
	return hr_jstr(cmp, "level") ? hr_jstr(cmp, "level") : "not judged";
}
