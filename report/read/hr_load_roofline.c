/*
 * hr_load_roofline.c - roofline results into the fleet model: each
 * device with its roofs, points, measurement quality, telemetry and power
 * caps (hr_load_shared.h).
 */
#include "report/read/hr_model.h"
#include "report/read/hr_load_shared.h"
#include "report/read/hr_ckpt_load.h"
#include "report/read/hr_result.h"
#include "report/hr_util.h"
#include "base/ch_common.h"
#include "base/ch_result.h"

#include <sched.h>
#include <unistd.h>
#include <ctype.h>
#include <stddef.h>
#include <limits.h>
#include <pthread.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void telemetry_info(const struct hr_result_telemetry *tel, char **reasons)
{
	struct hr_buf rb = { 0 };
	if (!tel->present)
		return;
	if (*reasons)
		hr_buf_puts(&rb, *reasons);
	hl_add_reasons(&tel->self, &rb);
	hl_add_reasons(&tel->before, &rb);
	hl_add_reasons(&tel->after, &rb);
	if (rb.s && (!*reasons || strcmp(rb.s, *reasons))) {
		free(*reasons);
		*reasons = rb.s;
	} else {
		hr_buf_release(&rb);
	}
}

/* The device's GPU model into its node's configuration ("mixed: a, b" when
 * the node has two). */
static void device_gpu_model(struct ctx *c, int dnode, const char *name)
{
	const char *cur = c->f->nodes[dnode].cfg[HR_CFG_GPU_MODEL];
	if (!cur || !strcmp(cur, name) || strstr(cur, "mixed"))
		hl_set_cfg(c->f, dnode, HR_CFG_GPU_MODEL, cur && strstr(cur, "mixed") ? cur : name);
	else {
		char mixed[300];
		snprintf(mixed, sizeof(mixed), "mixed: %s, %s", cur, name);
		hl_set_cfg(c->f, dnode, HR_CFG_GPU_MODEL, mixed);
	}
}

/* The measured roofs of a device. */
static void device_roofs(struct ctx *c, const struct hr_result_device *d, struct hr_device *dv,
			 const char *where)
{
	char w2[96];
	size_t k;

	if (!d->has_roofs) {
		if (!strcmp(dv->status, "ok"))
			hl_skip(c, "%s: missing '%s' object; its roofs are not used", where, "roofs");
		return;
	}
	snprintf(w2, sizeof(w2), "%s.roofs", where);
	dv->memory_gbps = hl_num_field(c, &d->memory_gbps, "memory_gbps", w2,
				    !strcmp(dv->status, "ok") && !d->ncompute);
	if (!d->has_compute)
		return;
	snprintf(w2, sizeof(w2), "%s.roofs.compute_gflops", where);
	for (k = 0; k < d->ncompute; k++) {
		const char *dt = d->compute[k].dtype;
		int di = ch_dtype_parse(dt);
		if (di < 0) {
			hr_issue_add(&c->f->issues, HR_ISSUE_NOTE, c->path, 0, 0,
				     "%s: unknown dtype '%s'; ignored", w2, dt);
			continue;
		}
		if (d->compute[k].gflops.is_null)
			continue;
		dv->compute_gflops[di] = hl_num_field(c, &d->compute[k].gflops, dt, w2, 1);
	}
}

static double hl_num(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* roofline's "host_link" of a GPU: its medians alone and its PCIe link;
 * NULL when absent or not an object (an older result file, the CPU) */
static struct hr_host_link *host_link(const json_t *hl)
{
	const json_t *alone = json_object_get(hl, "alone"), *pcie = json_object_get(hl, "pcie");
	struct hr_host_link *h;

	if (!json_is_object(hl) || !(h = calloc(1, sizeof(*h))))
		return NULL;
	h->h2d_gbps = hl_num(alone, "h2d_gbps");
	h->d2h_gbps = hl_num(alone, "d2h_gbps");
	h->expected_max_gbps = hl_num(hl, "expected_max_gbps");
	h->gen = (int)json_integer_value(json_object_get(pcie, "gen_current"));
	h->width = (int)json_integer_value(json_object_get(pcie, "width_current"));
	h->gen_max = (int)json_integer_value(json_object_get(pcie, "gen_max"));
	h->width_max = (int)json_integer_value(json_object_get(pcie, "width_max"));
	return h;
}

/* Clocks, throttle reasons and the valid points of a device. */
static int device_points(struct ctx *c, const struct hr_result_device *d, struct hr_device *dv, int dnode)
{
	size_t k;

	/* clocks (the device's maximum SM clock, roofline's config.clock_mhz)
	 * and throttle reasons (device level, then every point's telemetry) */
	if (d->clocks.str)
		dv->clocks = hr_fleet_str(c->f, d->clocks.str);
	else if (d->clock_mhz.num > 0) {
		char ck[64];
		snprintf(ck, sizeof(ck), "%.0f MHz", d->clock_mhz.num);
		dv->clocks = hr_fleet_str(c->f, ck);
	}
	dv->throttle_reasons = hl_join_strings(&d->throttle_reasons);
	telemetry_info(&d->telemetry, &dv->throttle_reasons);
	dv->host_link = host_link(d->host_link.json);
	if (d->points_list.is_array && d->points_list.n) {
		dv->points = calloc(d->points_list.n, sizeof(*dv->points));
		if (!dv->points)
			return CH_ERR_RUNTIME;
	}
	for (k = 0; k < d->points_list.n; k++) {
		const struct hr_result_point *p = &d->points[k];
		struct hr_point *pt = &dv->points[dv->npoints];
		uint32_t kernel, family, dtype;
		if (p->valid.json && !p->valid.is_true)
			continue;
		pt->ai = p->ai.num;
		pt->gflops = p->gflops.num;
		pt->gbps = p->gbps.num;
		if (!(pt->ai > 0) || !isfinite(pt->gflops))
			continue;
		if (hr_fleet_text(c->f, p->kernel.str ? p->kernel.str : "?", 32, &kernel) ||
		    hr_fleet_text(c->f, p->family.str ? p->family.str : "", 16, &family) ||
		    hr_fleet_text(c->f, p->dtype.str ? p->dtype.str : "", 8, &dtype) ||
		    hr_fleet_point_kind(c->f, kernel, family, dtype, k, &pt->kind))
			return CH_ERR_RUNTIME;
		pt->throttled = p->throttled != 0;
		if (pt->throttled)
			dv->throttled = 1;
		telemetry_info(&p->telemetry, &dv->throttle_reasons);
		dv->npoints++;
	}
	if (dv->clocks && !strcmp(dv->kind, "gpu"))
		hl_set_cfg(c->f, dnode, HR_CFG_CLOCKS, dv->clocks);
	return 0;
}

/* The per-call CV of the point that set roof @compute of @d (-1: memory;
 * hr_result_roof_point()), NAN when not recorded. A cv that is not a
 * number >= 0 is listed and not used. */
static double point_cv(struct ctx *c, const struct hr_result_device *d, const char *where, int compute)
{
	const struct hr_result_point *best = hr_result_roof_point(d, compute);

	if (!best || !best->time_sec.present)
		return NAN;
	return hl_num_field(c, &best->time_sec.cv, "time_sec.cv", where, 0);
}

/* roofline's second measurement of a roof it was not asked about by a
 * flag: devices[].roofs_again (a CPU socket's roofs every run). A roof
 * measured again with no flag of its own is held to the same rules as the
 * first measurement (flag_confirm AGREED: the judge's agreement, judge_again
 * in hr_judge.c); a value that is not a positive number is listed and not
 * used. */
static void roofs_again(struct ctx *c, const struct hr_result_device *d, struct hr_device *dv)
{
	char metric[64];
	int idx;

	if (!d->roofs_again)
		return;
	for (idx = 0; idx <= CH_NDTYPES; idx++) {
		struct hr_rv v;
		if (idx)
			snprintf(metric, sizeof(metric), "compute_gflops.%s", ch_dtype_name((enum ch_dtype)(idx - 1)));
		else
			snprintf(metric, sizeof(metric), "memory_gbps");
		v = hr_result_roof_again(d, metric);
		if (!v.json || dv->flag_confirm[idx] != HR_CONFIRM_NONE)
			continue;
		if (!(isfinite(v.num) && v.num > 0)) {
			hr_issue_add(&c->f->issues, HR_ISSUE_SKIPPED, c->path, 0, 0,
				     "results.devices[] %s: 'roofs_again.%s' is not a positive number; not used", dv->device,
				     metric);
			continue;
		}
		dv->flag_confirm[idx] = HR_CONFIRM_AGREED;
		dv->flag_confirm_value[idx] = v.num;
	}
}

/* The spread of the points behind each roof, and roofline's re-measurement
 * of the GPUs it flagged (results.flagged[]). */
static void device_quality(struct ctx *c, const struct hr_result *r, const struct hr_result_device *d,
			   struct hr_device *dv, const char *where)
{
	size_t k;

	dv->memory_cv = point_cv(c, d, where, -1);
	for (k = 0; k < d->ncompute; k++) {
		int di = ch_dtype_parse(d->compute[k].dtype);
		if (di >= 0 && !isnan(dv->compute_gflops[di]))
			dv->compute_cv[di] = point_cv(c, d, where, (int)k);
	}
	for (k = 0; k < r->flagged_list.n; k++) {
		const struct hr_result_flag *fl = &r->flagged[k];
		const char *m = fl->metric.str;
		int idx = -1;
		if (!fl->device.str || strcmp(fl->device.str, dv->device) || !m)
			continue;
		if (!strcmp(m, "memory_gbps"))
			idx = 0;
		else if (!strncmp(m, "compute_gflops.", 15) && ch_dtype_parse(m + 15) >= 0)
			idx = 1 + ch_dtype_parse(m + 15);
		if (idx < 0)
			continue;
		if (fl->confirmed.json && !fl->confirmed.is_null && !json_is_boolean(fl->confirmed.json)) {
			hr_issue_add(&c->f->issues, HR_ISSUE_SKIPPED, c->path, 0, 0,
				     "results.flagged[%zu]: 'confirmed' is not true, false or null; not used", k);
			continue;
		}
		dv->flag_confirm[idx] = !fl->confirmed.json || fl->confirmed.is_null ? HR_CONFIRM_NONE
					: fl->confirmed.is_true ? HR_CONFIRM_AGREED : HR_CONFIRM_DISAGREED;
		if (fl->confirm_value.json && !fl->confirm_value.is_null &&
		    !(isfinite(fl->confirm_value.num) && fl->confirm_value.num > 0))
			hr_issue_add(&c->f->issues, HR_ISSUE_SKIPPED, c->path, 0, 0,
				     "results.flagged[%zu]: 'confirm_value' is not a positive number; the re-measurement judged on 'confirmed' alone",
				     k);
		else if (dv->flag_confirm[idx] != HR_CONFIRM_NONE && fl->confirm_value.json && !fl->confirm_value.is_null)
			dv->flag_confirm_value[idx] = fl->confirm_value.num;
	}
	roofs_again(c, d, dv);
}

/* A new device of the fleet from @d (device and status checked), or NULL when out of memory. */
static struct hr_device *device_new(struct ctx *c, const struct hr_result_device *d, int dnode)
{
	const char *id = d->device.str, *name = d->name.str, *sku = d->sku.str;
	struct hr_device *dv;
	size_t k;

	GROW(c->f->devices, c->f->ndevices, dv);
	if (!dv)
		return NULL;
	dv->node = dnode;
	dv->device = hr_fleet_str(c->f, id);
	dv->kind = hr_fleet_str(c->f, d->kind.str ? d->kind.str : (strncmp(id, "gpu", 3) ? "cpu" : "gpu"));
	dv->name = name ? hr_fleet_str(c->f, name) : NULL;
	dv->pci_bus_id = hl_dup_or_null(d->pci_bus_id.str);
	dv->status = hr_fleet_str(c->f, d->status.str);
	dv->reason = d->reason.str ? hr_fleet_str(c->f, d->reason.str) : NULL;
	dv->source = hr_fleet_str(c->f, c->path);
	dv->memory_gbps = dv->memory_cv = dv->flag_confirm_value[0] = NAN;
	for (k = 0; k < CH_NDTYPES; k++)
		dv->compute_gflops[k] = dv->compute_cv[k] = dv->flag_confirm_value[1 + k] = NAN;
	if (!dv->device || !dv->kind || !dv->status || !dv->source)
		return NULL;
	if (!strcmp(dv->kind, "gpu")) {
		int n2, j;
		const struct ch_datasheet *t = ch_datasheet_table(&n2);
		for (j = 0; sku && j < n2; j++)
			if (!strcmp(t[j].sku, sku))
				dv->ds = &t[j];
		if (!dv->ds && name)
			dv->ds = ch_datasheet_lookup(name);
		if (dv->ds)
			dv->sku = hr_fleet_str(c->f, dv->ds->sku);
		if (name && strcmp(dv->status, "unavailable"))
			device_gpu_model(c, dnode, name);
	}
	dv->throttled = d->throttled;
	return dv;
}

/* A device's power sweep (roofline --power-limits) into dv->power; a
 * sweep without a positive default limit, and a cap without a positive
 * cap_w, are listed and not used. */
static int device_power(struct ctx *c, const struct hr_result_power *pw, struct hr_device *dv, const char *where)
{
	char w2[96];
	size_t k;

	if (!pw->present)
		return 0;
	snprintf(w2, sizeof(w2), "%s.power_sweep", where);
	if (!(pw->default_limit_w.num > 0) || !isfinite(pw->default_limit_w.num)) {
		hl_skip(c, "%s: no positive '%s'; the sweep is not used", w2, "default_limit_w");
		return 0;
	}
	if (!(dv->power = calloc(1, sizeof(*dv->power))))
		return CH_ERR_RUNTIME;
	dv->power->default_w = pw->default_limit_w.num;
	dv->power->tolerance_pct = pw->tolerance_pct.num > 0 ? pw->tolerance_pct.num : NAN;
	dv->power->rec_w = pw->rec_judged.is_true ? hl_num_field(c, &pw->rec_cap_w, "cap_w", w2, 1) : NAN;
	if (pw->rec_why.str && !(dv->power->rec_why = strdup(pw->rec_why.str)))
		return CH_ERR_RUNTIME;
	if (pw->curve_list.n && !(dv->power->pts = calloc(pw->curve_list.n, sizeof(*dv->power->pts))))
		return CH_ERR_RUNTIME;
	snprintf(w2, sizeof(w2), "%s.power_sweep.curve", where);
	for (k = 0; k < pw->curve_list.n; k++) {
		const struct hr_result_power_pt *q = &pw->curve[k];
		struct hr_power_pt *pt = &dv->power->pts[dv->power->npts];
		if (!(q->cap_w.num > 0) || !isfinite(q->cap_w.num)) {
			hl_skip(c, "%s: an entry without a positive '%s'; skipped", w2, "cap_w");
			continue;
		}
		pt->cap_w = q->cap_w.num;
		pt->gflops = hl_num_field(c, &q->gflops, "gflops", w2, 0);
		pt->gflop_per_j = hl_num_field(c, &q->gflop_per_j, "gflop_per_j", w2, 0);
		pt->power_w = hl_num_field(c, &q->avg_power_w, "avg_power_w", w2, 0);
		pt->gbps = hl_num_field(c, &q->gbps, "gbps", w2, 0);
		dv->power->npts++;
	}
	return 0;
}

/* Whether @r is a run that had no device or backend (status
 * "unavailable", docs/results-schema.md): it measured nothing, so a results
 * array it lacks is not a broken input; the run's reason is the node's
 * (run_reasons() in report/judge/hr_rule_inventory.c). */
int hl_unavailable(const struct hr_result *r)
{
	return r->status && !strcmp(r->status, "unavailable");
}

int hl_load_roofline(struct ctx *c, const struct hr_result *r, int node)
{
	size_t i;

	if (!r->devices_list.is_array) {
		if (!hl_unavailable(r))
			hl_skip(c, "%s: missing '%s' array; no devices read", "results", "devices");
		return 0;
	}
	for (i = 0; i < r->devices_list.n; i++) {
		const struct hr_result_device *d = &r->devices[i];
		struct hr_device *dv;
		char where[64];
		int dnode;

		snprintf(where, sizeof(where), "results.devices[%zu]", i);
		if (!d->device.str) {
			hl_skip(c, "%s: not an object with a '%s' string; skipped", where, "device");
			continue;
		}
		if (!d->status.str) {
			hl_skip(c, "%s: missing '%s'; skipped", where, "status");
			continue;
		}
		dnode = node;
		if (d->host.str) { /* under mpirun, devices of several hosts */
			dnode = hr_fleet_node(c->f, d->host.str);
			if (dnode < 0)
				return CH_ERR_RUNTIME;
		}
		if (!(dv = device_new(c, d, dnode)))
			return CH_ERR_RUNTIME;
		if (!strcmp(dv->status, "unavailable"))
			continue;
		device_roofs(c, d, dv, where);
		if (device_points(c, d, dv, dnode) || device_power(c, &d->power, dv, where))
			return CH_ERR_RUNTIME;
		device_quality(c, r, d, dv, where);
	}
	return 0;
}
