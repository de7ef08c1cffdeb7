/*
 * hr_prom.c - health.prom, the Prometheus text format, from the
 * profile and the nodes' samples (hr_render_int.h).
 */
#include "report/render/hr_render.h"
#include "report/render/hr_steps_render.h"
#include "report/judge/hr_checkpoint.h"
#include "report/judge/hr_inventory.h"
#include "report/render/hr_rows.h"
#include "report/render/hr_render_int.h"
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
	hr_buf_puts(b, name);
	va_start(ap, v);
	while ((k = va_arg(ap, const char *))) {
		const char *val = va_arg(ap, const char *);
		hr_buf_printf(b, "%s%s=\"", first ? "{" : ",", k);
		hr_buf_prom_label(b, val ? val : "");
		hr_buf_puts(b, "\"");
		first = 0;
	}
	va_end(ap);
	hr_buf_printf(b, "%s %.10g\n", first ? "" : "}", v);
}

/* a JSON number as a double, NAN for anything else */
static double hr_jnum_v(const json_t *v)
{
	return json_is_number(v) ? json_number_value(v) : NAN;
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
static void prom_findings(struct hr_buf *b, const char *name, const json_t *n)
{
	const json_t *r, *q;
	size_t j, i;

	json_array_foreach(json_object_get(n, "reasons"), j, r) {
		const char *code = hr_jstr(r, "code"), *lv = hr_jstr(r, "level");
		int cnt = 0, seen = 0;
		if (!code || !lv || (strcmp(lv, "warn") && strcmp(lv, "fail")))
			continue;
		json_array_foreach(json_object_get(n, "reasons"), i, q) {
			const char *c2 = hr_jstr(q, "code"), *l2 = hr_jstr(q, "level");
			if (!c2 || !l2 || strcmp(c2, code) || strcmp(l2, lv))
				continue;
			seen |= i < j; /* counted at its first reason */
			cnt++;
		}
		if (!seen)
			prom_sample(b, name, cnt, "node", hr_jstr(n, "name"), "code", code, "level", lv, NULL);
	}
}

/* a device's figures of one metric (memory, or compute by dtype when
 * @dtype), from its metrics (full detail) or its values (bounded), x @scale */
static void prom_roofs(struct hr_buf *b, const char *name, const json_t *n, int dtype, double scale)
{
	const json_t *d, *m;
	size_t j, q;

	json_array_foreach(json_object_get(n, "devices"), j, d) {
		const char *key, *sku = hr_jstr(d, "sku") ? hr_jstr(d, "sku") : "";
		json_array_foreach(json_object_get(d, "metrics"), q, m) {
			const char *mk = hr_jstr(m, "metric");
			if (!dtype && !strcmp(mk, "memory_gbps"))
				prom_sample(b, name, hr_jnum(m, "value") * scale, "node", hr_jstr(n, "name"),
					    "device", hr_jstr(d, "device"), "sku", sku, NULL);
			else if (dtype && !strncmp(mk, "compute_gflops.", 15))
				prom_sample(b, name, hr_jnum(m, "value") * scale, "node", hr_jstr(n, "name"),
					    "device", hr_jstr(d, "device"), "sku", sku, "dtype", mk + 15, NULL);
		}
		/* a node of bounded detail: its devices' values */
		json_object_foreach((json_t *)json_object_get(d, "values"), key, m) {
			if (!dtype && !strcmp(key, "memory_gbps"))
				prom_sample(b, name, hr_jnum_v(m) * scale, "node", hr_jstr(n, "name"),
					    "device", hr_jstr(d, "device"), "sku", sku, NULL);
			else if (dtype && !strncmp(key, "compute_gflops.", 15))
				prom_sample(b, name, hr_jnum_v(m) * scale, "node", hr_jstr(n, "name"),
					    "device", hr_jstr(d, "device"), "sku", sku, "dtype", key + 15, NULL);
		}
	}
}

void hr_prom_node(size_t k, const json_t *n, struct hr_buf *b)
{
	const char *name = node_fams[k < HR_PROM_NODE_FAMILIES ? k : 0].name;
	const json_t *d, *m, *r;
	size_t j, q;

	switch (k) {
	case 0: {
		const char *v = hr_jstr(n, "verdict");
		prom_sample(b, name, v && !strcmp(v, "FAIL") ? 2 : v && !strcmp(v, "WARN") ? 1 :
			    v && !strcmp(v, "NOT JUDGED") ? -1 : 0,
			    "node", hr_jstr(n, "name"), NULL);
		break;
	}
	case 1:
		prom_sample(b, name, json_is_true(json_object_get(n, "drain_candidate")),
			    "node", hr_jstr(n, "name"), NULL);
		break;
	case 2: {
		static const char *const lv[] = { "info", "warn", "fail" };
		int cnt[3] = { 0, 0, 0 }, l;
		json_array_foreach(json_object_get(n, "reasons"), j, r)
			for (l = 0; l < 3; l++)
				if (hr_jstr(r, "level") && !strcmp(hr_jstr(r, "level"), lv[l]))
					cnt[l]++;
		for (l = 0; l < 3; l++)
			prom_sample(b, name, cnt[l], "node", hr_jstr(n, "name"), "level", lv[l], NULL);
		break;
	}
	case 3:
		prom_findings(b, name, n);
		break;
	case 4: /* GB/s and GFLOP/s in base units */
	case 5:
		prom_roofs(b, name, n, k == 5, 1e9);
		break;
	case 6:
	case 7:
		json_array_foreach(json_object_get(n, "devices"), j, d)
			json_array_foreach(json_object_get(d, "metrics"), q, m)
				prom_sample(b, name, k == 6 ? hr_jnum(m, "pct_of_expected") / 100 : hr_jnum(m, "z"),
					    "node", hr_jstr(n, "name"), "device", hr_jstr(d, "device"),
					    "metric", hr_jstr(m, "metric"), NULL);
		break;
	case 8:
		json_array_foreach(json_object_get(n, "busbw"), j, d) {
			char nr[24];
			snprintf(nr, sizeof(nr), "%lld", hr_jint(d, "nranks", 0));
			prom_sample(b, name, hr_jnum(d, "large_msg_busbw_gbps") * 1e9, "node", hr_jstr(n, "name"),
				    "group", hr_jstr(d, "group"), "kind", hr_jstr(d, "kind"), "algo", hr_jstr(d, "algo"),
				    "nranks", nr, NULL);
		}
		break;
	case 9:
	case 10:
		json_array_foreach(json_object_get(json_object_get(n, "loader"), "configs"), j, d)
			prom_sample(b, name, k == 9 ? hr_jnum(d, "input_wait_frac") : hr_jnum(d, "lateness_p99_us") * 1e-6,
				    "node", hr_jstr(n, "name"), "config", hr_jstr(d, "name"), "placement", hr_jstr(d, "placement"), NULL);
		break;
	case 11:
	case 12:
	case 13:
		json_array_foreach(json_object_get(n, "checkpoint"), j, d)
			prom_sample(b, name, k == 11 ? hr_jnum(d, "rank_write_gbps") * 1e9 : k == 12 ? hr_jnum(d, "block_sec") :
				    (double)hr_jint(d, "bad_files", 0), "node", hr_jstr(n, "name"),
				    "mount", hr_jstr(d, "mount"), NULL);
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
