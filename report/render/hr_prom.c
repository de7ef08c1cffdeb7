/*
 * hr_prom.c - health.prom, the Prometheus text format: each node's
 * samples from its rows (hr_rows.h), the fleet's from the profile, joined
 * (hr_render_int.h).
 */
#include "report/render/hr_render.h"
#include "report/render/hr_steps_render.h"
#include "report/judge/hr_checkpoint.h"
#include "report/judge/hr_inventory.h"
#include "report/render/hr_rows.h"
#include "report/render/hr_render_int.h"
#include "report/hr_jdump.h"
#include "base/ch_common.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------ Prometheus */

struct fam {
	const char *name, *help, *type;
};

static void prom_head(struct hr_buf *b, const struct fam *f)
{
	hr_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", f->name, f->help, f->name, f->type);
}

/* name{k1="v1",k2="v2"} value; labels: NULL-terminated key, value pairs */
static void prom_sample(struct hr_buf *b, const char *name, double v, ...)
{
	va_list ap;
	const char *k;
	int first = 1;
	if (isnan(v))
		return;
	char num[32];
	hr_buf_puts(b, name);
	va_start(ap, v);
	while ((k = va_arg(ap, const char *))) {
		const char *val = va_arg(ap, const char *);
		hr_buf_puts(b, first ? "{" : ",");
		hr_buf_puts(b, k);
		hr_buf_puts(b, "=\"");
		hr_buf_prom_label(b, val ? val : "");
		hr_buf_puts(b, "\"");
		first = 0;
	}
	va_end(ap);
	hr_buf_puts(b, first ? " " : "} ");
	hr_buf_append(b, num, (size_t)hr_fmt_g10(num, v)); /* "%.10g" */
	hr_buf_puts(b, "\n");
}

/* The families of one sample or more per node, in the order health.prom lists them. */
static const struct fam node_fams[HR_PROM_NODE_FAMILIES] = {
	{ "clusterhealth_node_verdict", "Node verdict of health_report: 0 PASS, 1 WARN, 2 FAIL, -1 NOT JUDGED (no check could be judged).", "gauge" },
	{ "clusterhealth_drain_candidate", "1 when health_report lists the node as a drain candidate (a hard fault or a confirmed FAIL).", "gauge" },
	{ "clusterhealth_node_reasons", "Number of reasons of each level (info, warn, fail) behind the node verdict.", "gauge" },
	{ "clusterhealth_node_findings", "Number of the node's WARN and FAIL reasons by code and level (codes: docs/health_report.md, Verdicts).", "gauge" },
	{ "clusterhealth_device_memory_bytes_per_second", "Measured memory roof of a device (roofline), bytes per second.", "gauge" },
	{ "clusterhealth_device_compute_flops", "Measured compute roof of a device per dtype (roofline), floating-point operations per second.", "gauge" },
	{ "clusterhealth_device_measured_expected_ratio", "Measured roof over the per-SKU expectation (datasheet x attainable fraction); 1 is as expected.", "gauge" },
	{ "clusterhealth_device_robust_z", "Robust z-score of the roof against like devices of the fleet (0.6745 (x - median) / MAD).", "gauge" },
	{ "clusterhealth_busbw_bytes_per_second", "All-reduce busbw at the largest message size (out-of-place), per node and group, bytes per second.", "gauge" },
	{ "clusterhealth_loader_input_wait_ratio", "Input-wait fraction of the step per loader configuration (loader_contention).", "gauge" },
	{ "clusterhealth_loader_lateness_p99_seconds", "Feeder lateness against its deadline, 99th percentile, per loader configuration.", "gauge" },
	{ "clusterhealth_checkpoint_rank_write_bytes_per_second", "Synchronous checkpoint write bandwidth per rank, median over the node's ranks, per mount (checkpoint_io), bytes per second.", "gauge" },
	{ "clusterhealth_checkpoint_block_seconds", "Time one synchronous checkpoint blocks the step, per node and mount (checkpoint_io).", "gauge" },
	{ "clusterhealth_checkpoint_bad_files", "Checkpoint files that did not read back as written, per node and mount (checkpoint_io).", "gauge" },
};

/* the node's WARN and FAIL reasons counted by code and level, one sample each */
static void prom_findings(struct hr_buf *b, const char *name, const struct hr_node_row *n)
{
	size_t j, i;

	for (j = 0; j < n->nreasons; j++) {
		const char *code = n->reasons[j].code, *lv = n->reasons[j].level;
		int cnt = 0, seen = 0;
		if (!code || !lv || (strcmp(lv, "warn") && strcmp(lv, "fail")))
			continue;
		for (i = 0; i < n->nreasons; i++) {
			const char *c2 = n->reasons[i].code, *l2 = n->reasons[i].level;
			if (!c2 || !l2 || strcmp(c2, code) || strcmp(l2, lv))
				continue;
			seen |= i < j; /* counted at its first reason */
			cnt++;
		}
		if (!seen)
			prom_sample(b, name, cnt, "node", n->name, "code", code, "level", lv, NULL);
	}
}

/* the devices' figures of one metric (memory, or compute by dtype when
 * @dtype), from their metrics (full detail) or their values (bounded),
 * x @scale */
static void prom_roofs(struct hr_buf *b, const char *name, const struct hr_rows *r, int dtype, double scale)
{
	size_t j;

	for (j = 0; j < r->ndevices; j++) {
		const struct hr_device_row *d = &r->devices[j];
		const char *mk = d->metric, *sku = d->sku ? d->sku : "";
		if (d->is_status || !mk)
			continue;
		if (!dtype && !strcmp(mk, "memory_gbps"))
			prom_sample(b, name, d->value * scale, "node", d->node, "device", d->device, "sku", sku, NULL);
		else if (dtype && !strncmp(mk, "compute_gflops.", 15))
			prom_sample(b, name, d->value * scale, "node", d->node, "device", d->device, "sku", sku,
				    "dtype", mk + 15, NULL);
	}
	/* nodes of bounded detail: their devices' values */
	for (j = 0; j < r->nvalues; j++) {
		const struct hr_value_row *v = &r->values[j];
		const char *sku = v->sku ? v->sku : "";
		if (!dtype && !strcmp(v->metric, "memory_gbps"))
			prom_sample(b, name, v->value * scale, "node", v->node, "device", v->device, "sku", sku, NULL);
		else if (dtype && !strncmp(v->metric, "compute_gflops.", 15))
			prom_sample(b, name, v->value * scale, "node", v->node, "device", v->device, "sku", sku,
				    "dtype", v->metric + 15, NULL);
	}
}

/* the node families of the nodes' verdicts and reasons (k 0 to 3) */
static void prom_verdicts(size_t k, const char *name, const struct hr_node_row *n, struct hr_buf *b)
{
	static const char *const lv[] = { "info", "warn", "fail" };
	const char *v = n->verdict;
	int cnt[3] = { 0, 0, 0 }, l;
	size_t j;

	switch (k) {
	case 0:
		prom_sample(b, name, v && !strcmp(v, "FAIL") ? 2 : v && !strcmp(v, "WARN") ? 1 :
			    v && !strcmp(v, "NOT JUDGED") ? -1 : 0,
			    "node", n->name, NULL);
		break;
	case 1:
		prom_sample(b, name, n->drain_candidate, "node", n->name, NULL);
		break;
	case 2:
		for (j = 0; j < n->nreasons; j++)
			for (l = 0; l < 3; l++)
				if (n->reasons[j].level && !strcmp(n->reasons[j].level, lv[l]))
					cnt[l]++;
		for (l = 0; l < 3; l++)
			prom_sample(b, name, cnt[l], "node", n->name, "level", lv[l], NULL);
		break;
	default:
		prom_findings(b, name, n);
		break;
	}
}

void hr_prom_node(size_t k, const struct hr_rows *r, struct hr_buf *b)
{
	const char *name = node_fams[k < HR_PROM_NODE_FAMILIES ? k : 0].name;
	size_t j;
	char nr[24];

	switch (k) {
	case 0:
	case 1:
	case 2:
	case 3:
		for (j = 0; j < r->nnodes; j++)
			prom_verdicts(k, name, &r->nodes[j], b);
		break;
	case 4: /* GB/s and GFLOP/s in base units */
	case 5:
		prom_roofs(b, name, r, k == 5, 1e9);
		break;
	case 6:
	case 7:
		for (j = 0; j < r->ndevices; j++) {
			const struct hr_device_row *d = &r->devices[j];
			if (!d->is_status)
				prom_sample(b, name, k == 6 ? d->pct_of_expected / 100 : d->z, "node", d->node,
					    "device", d->device, "metric", d->metric, NULL);
		}
		break;
	case 8:
		for (j = 0; j < r->nbusbw; j++) {
			const struct hr_busbw_row *g = &r->busbw[j];
			snprintf(nr, sizeof(nr), "%lld", g->nranks);
			prom_sample(b, name, g->large_msg_busbw_gbps * 1e9, "node", g->node, "group", g->group,
				    "kind", g->kind, "algo", g->algo, "nranks", nr, NULL);
		}
		break;
	case 9:
	case 10:
		for (j = 0; j < r->nloader; j++) {
			const struct hr_loader_row *c = &r->loader[j];
			prom_sample(b, name, k == 9 ? c->input_wait_frac : c->lateness_p99_us * 1e-6,
				    "node", c->node, "config", c->config, "placement", c->placement, NULL);
		}
		break;
	case 11:
	case 12:
	case 13:
		for (j = 0; j < r->nckpt; j++) {
			const struct hr_ckpt_row *c = &r->ckpt[j];
			prom_sample(b, name, k == 11 ? c->rank_write_gbps * 1e9 : k == 12 ? c->block_sec :
				    (double)c->bad_files, "node", c->node, "mount", c->mount, NULL);
		}
		break;
	default:
		break;
	}
}

int hr_prom_render(const json_t *p, FILE *out, const struct hr_render_parts *parts)
{
	static const struct fam f_issues = { "clusterhealth_report_input_problems", "Input problems of the report by kind (skipped, truncated, note).", "gauge" };
	static const struct fam f_energy = { "clusterhealth_run_energy_joules", "IT energy of the measurement run (measured, or estimated from rated power).", "gauge" };
	static const struct fam f_wall = { "clusterhealth_run_wall_seconds", "Wall time of the measurement run, first start to last end.", "gauge" };
	static const struct fam f_time = { "clusterhealth_report_generated_timestamp_seconds", "When health_report wrote this file (Unix time).", "gauge" };
	const json_t *in = json_object_get(p, "inputs"), *c = json_object_get(p, "run_cost");
	struct hr_buf b = { 0 };
	size_t k, ninv = hr_inventory_prom_sections();
	time_t t;
	int rc = 0;

	/* each family's head, then its samples rendered node by node */
	for (k = 0; k < HR_PROM_NODE_FAMILIES + ninv && !rc; k++) {
		b.len = 0;
		if (k < HR_PROM_NODE_FAMILIES)
			prom_head(&b, &node_fams[k]);
		else
			hr_inventory_prom_head(k - HR_PROM_NODE_FAMILIES, &b);
		if (b.oom || (b.len && fwrite(b.s, 1, b.len, out) != b.len))
			rc = CH_ERR_RUNTIME;
		else
			rc = hr_spill_copy(&parts->prom[k], out);
	}
	b.len = 0;
	prom_head(&b, &f_issues);
	prom_sample(&b, f_issues.name, (double)hr_jint(in, "skipped", 0), "kind", "skipped", NULL);
	prom_sample(&b, f_issues.name, (double)hr_jint(in, "truncated", 0), "kind", "truncated", NULL);
	prom_sample(&b, f_issues.name, (double)hr_jint(in, "notes", 0), "kind", "note", NULL);
	prom_head(&b, &f_energy);
	prom_sample(&b, f_energy.name, hr_jnum(c, "it_energy_j"), "source",
		    hr_jstr(c, "energy_source") ? hr_jstr(c, "energy_source") : "none", NULL);
	prom_head(&b, &f_wall);
	prom_sample(&b, f_wall.name, hr_jnum(c, "wall_span_sec"), NULL);
	prom_head(&b, &f_time);
	if (hr_parse_utc(hr_jstr(p, "generated_utc"), &t) == 0)
		prom_sample(&b, f_time.name, (double)t, NULL);
	hr_steps_prom(json_object_get(p, "steps"), &b);
	if (!rc && (b.oom || fwrite(b.s ? b.s : "", 1, b.len, out) != b.len))
		rc = CH_ERR_RUNTIME;
	hr_buf_release(&b);
	return rc;
}
