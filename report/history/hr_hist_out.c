/*
 * hr_hist_out.c - the history check's lines, JSON and Prometheus text
 * (hr_hist_out.h).
 */
#include "report/history/hr_hist_out.h"
#include "report/hr_util.h"
#include "base/ch_common.h"
#include "base/ch_parse.h"
#include "base/ch_result.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The unit of a history metric, from its name: " GB/s" (..._gbps...), " GFLOP/s"
 * (..._gflops...), " (fraction)" (loader.accel_util), else "". */
static const char *metric_unit(const char *metric)
{
	if (strstr(metric, "gbps"))
		return " GB/s";
	if (strstr(metric, "gflops"))
		return " GFLOP/s";
	if (strstr(metric, "accel_util"))
		return " (fraction)";
	return "";
}

/* The regressions as Prometheus text (exposition format 0.0.4) into @path,
 * atomically; returns 0 or CH_ERR_RUNTIME (printed). */
static int write_prom(const char *path, const char *night, const struct hr_regression *reg, size_t nreg,
		      const struct hr_check_count *cnt)
{
	static const char *const lab[3] = { "node", "gpu", "metric" };
	struct hr_buf b = { 0 };
	struct ch_atomic a;
	size_t i;
	int k, rc = 0;
	char full[48];
	time_t t;

	hr_buf_puts(&b, "# HELP clusterhealth_history_regressed A metric below its own history on the night checked: "
		    "1 REGRESSED (on --persist consecutive nights: a drain candidate), 0 regressed once (re-run).\n"
		    "# TYPE clusterhealth_history_regressed gauge\n");
	for (i = 0; i < nreg; i++) {
		const char *v[3] = { reg[i].node, reg[i].gpu, reg[i].metric };
		if (reg[i].info)
			continue; /* not judged: no regression */
		hr_buf_puts(&b, "clusterhealth_history_regressed");
		for (k = 0; k < 3; k++) {
			hr_buf_printf(&b, "%s%s=\"", k ? "," : "{", lab[k]);
			hr_buf_prom_label(&b, v[k]);
			hr_buf_puts(&b, "\"");
		}
		hr_buf_printf(&b, "} %d\n", reg[i].persisted ? 1 : 0);
	}
	hr_buf_printf(&b, "# HELP clusterhealth_history_series Series of the history on the night checked, judged or not "
		      "(fewer earlier nights than --min-nights).\n# TYPE clusterhealth_history_series gauge\n"
		      "clusterhealth_history_series{state=\"judged\"} %zu\nclusterhealth_history_series{state=\"not_judged\"} %zu\n",
		      cnt->series - cnt->not_judged, cnt->not_judged);
	snprintf(full, sizeof(full), "%s%s", night ? night : "", night && strlen(night) == 10 ? "T00:00:00Z" : "");
	if (hr_parse_utc(full, &t) == 0)
		hr_buf_printf(&b, "# HELP clusterhealth_history_night_timestamp_seconds The night the history checked (Unix time).\n"
			      "# TYPE clusterhealth_history_night_timestamp_seconds gauge\n"
			      "clusterhealth_history_night_timestamp_seconds %lld\n", (long long)t);
	if (b.oom) {
		hr_buf_release(&b);
		fprintf(stderr, "%s: out of memory writing '%s'\n", ch_prog(), path);
		return CH_ERR_RUNTIME;
	}
	if ((rc = ch_atomic_begin(&a, path)) == 0) {
		if (write(a.fd, b.s, b.len) != (ssize_t)b.len) {
			fprintf(stderr, "%s: cannot write '%s': %s\n", ch_prog(), path, strerror(errno));
			ch_atomic_abort(&a);
			rc = CH_ERR_RUNTIME;
		} else {
			rc = ch_atomic_commit(&a);
		}
	}
	hr_buf_release(&b);
	return rc;
}

/* what the night's learned noise says, for a line: "; z Z on ... cut-off B" */
static void far_words(const struct hr_regression *r, char *buf, size_t n)
{
	snprintf(buf, n, "; z %.1f on night-to-night noise %.2g%% learned from %zu values of its class, tail weight %.2f:"
		 " chance %.2g for a healthy series, cut-off %.2g (the node's budget over its series)",
		 r->z, r->noise_pct, r->noise_n, r->tail_w, r->far_p, r->far_budget);
}

/* one finding's line on stdout */
static void print_one(const struct hr_regression *r, int persist)
{
	const char *unit = metric_unit(r->metric), *node = hr_term(r->node), *gpu = hr_term(r->gpu),
		   *metric = hr_term(r->metric);
	char far[320] = "";

	if (r->far_p > 0 && r->far_budget > 0)
		far_words(r, far, sizeof(far));
	if (r->cusum)
		printf("REGRESSED %s %s %s: regressed %.1f%% since %.10s, %d night%s; CUSUM %.1f over %.1f (now %.4g%s, reference %.4g%s = winsorized mean of %d nights before %.10s; night-to-night noise %.2g%% learned from %zu values of its class, tail weight %.2f)\n",
		       node, gpu, metric, r->pct, r->since, r->nights, r->nights == 1 ? "" : "s", r->cusum_s, r->cusum_h,
		       r->value, unit, r->baseline, unit, r->nbaseline, r->since, r->noise_pct, r->noise_n, r->tail_w);
	else if (r->persisted)
		printf("REGRESSED %s %s %s: regressed %.1f%% since %.10s (now %.4g%s, baseline %.4g%s = median of %d nights before %.10s; beyond the nights' spread %.2g%%: robust z %.1f, cut-off %.1f%s)\n",
		       node, gpu, metric, r->pct, r->since, r->value, unit, r->baseline, unit, r->nbaseline, r->since,
		       r->spread_pct, r->z, r->cut, far);
	else if (r->far)
		printf("WARN %s %s %s: far below its own level tonight on both measurements: %.1f%% below (the larger measurement %.1f%% below; now %.4g%s, reference %.4g%s = winsorized mean of %d nights%s); REGRESSED when it persists %d nights\n",
		       node, gpu, metric, r->pct, r->pct_both, r->value, unit, r->baseline, unit, r->nbaseline, far, persist);
	else if (r->info)
		printf("info %s %s %s: one night far, not judged until it repeats: %.1f%% below its own level tonight (now %.4g%s, reference %.4g%s of %d nights; %s%s)\n",
		       node, gpu, metric, r->pct, r->value, unit, r->baseline, unit, r->nbaseline,
		       r->twice ? "measured twice, the larger measurement not far enough" :
				  "measured once: one measurement far out may be a tail of the noise", far);
	else
		printf("WARN %s %s %s: regressed once; re-run: %.1f%% below its baseline tonight (now %.4g%s, baseline %.4g%s = median of %d nights; robust z %.1f, cut-off %.1f; both measurements); REGRESSED when it persists %d nights\n",
		       node, gpu, metric, r->pct, r->value, unit, r->baseline, unit, r->nbaseline, r->z, r->cut, persist);
}

/* one finding as a JSON object */
static json_t *json_one(const struct hr_regression *r)
{
	json_t *e = json_pack("{s:s, s:s, s:s, s:s, s:s, s:f, s:f, s:f, s:i, s:s, s:b, s:i, s:s, s:b}",
		"node", r->node, "gpu", r->gpu, "metric", r->metric, "night", r->night, "since", r->since,
		"value", r->value, "baseline", r->baseline, "pct", r->pct, "baseline_nights", r->nbaseline,
		"level", r->info ? "info" : r->persisted ? "regressed" : "warn", "persisted", r->persisted,
		"nights", r->nights, "rule", r->cusum ? "cusum" : r->far ? "far_night" : "median",
		"measured_twice", r->twice);
	if (!e)
		return NULL;
	if (r->cusum)
		json_object_update_new(e, json_pack("{s:f, s:f, s:f, s:I, s:f}", "cusum", r->cusum_s,
			"cusum_threshold", r->cusum_h, "noise_pct", r->noise_pct,
			"noise_values", (json_int_t)r->noise_n, "tail_weight", r->tail_w));
	else
		json_object_update_new(e, json_pack("{s:f, s:f, s:f}", "spread_pct", r->spread_pct, "z", r->z, "cut", r->cut));
	if (!r->cusum && r->far_p > 0 && r->far_budget > 0)
		json_object_update_new(e, json_pack("{s:f, s:f, s:f, s:I, s:f, s:f}", "chance", r->far_p,
			"chance_cut", r->far_budget, "noise_pct", r->noise_pct, "noise_values", (json_int_t)r->noise_n,
			"tail_weight", r->tail_w, "pct_both", r->pct_both));
	return e;
}

/* the --json document */
static int write_json(const struct hr_check_cfg *cfg, const char *path, const char *night,
		      const struct hr_regression *reg, size_t nreg, const struct hr_check_count *cnt,
		      json_t *kernel_log, json_t *drain)
{
	json_t *doc = json_object(), *arr = json_array(), *info = json_array();
	size_t i;
	int rc;

	for (i = 0; i < nreg; i++)
		json_array_append_new(reg[i].info ? info : arr, json_one(&reg[i]));
	json_object_set_new(doc, "schema", json_string("clusterhealth.history-check"));
	json_object_set_new(doc, "schema_version", json_integer(1));
	json_object_set_new(doc, "night", night[0] ? json_string(night) : json_null());
	json_object_set_new(doc, "window", json_integer(cfg->window));
	json_object_set_new(doc, "min_nights", json_integer(cfg->min_nights));
	json_object_set_new(doc, "threshold_pct", json_real(cfg->threshold_pct));
	json_object_set_new(doc, "persist_nights", json_integer(cfg->persist));
	json_object_set_new(doc, "false_alarm_per_node", json_real(cfg->alpha));
	json_object_set_new(doc, "cusum_false_alarm_per_node", json_real(cfg->cusum.alpha));
	json_object_set_new(doc, "series_checked", json_integer((json_int_t)cnt->series));
	json_object_set_new(doc, "series_not_judged", json_integer((json_int_t)cnt->not_judged));
	json_object_set_new(doc, "regressions", arr);
	json_object_set_new(doc, "far_once", info);
	json_object_set_new(doc, "drain_candidates", json_incref(drain));
	json_object_set(doc, "kernel_log", kernel_log ? kernel_log : json_null());
	rc = ch_json_write_atomic(path, doc, JSON_INDENT(2) | JSON_SORT_KEYS);
	json_decref(doc);
	return rc;
}

int hr_history_report(const struct hr_check_cfg *cfg, const char *json_path, const char *prom_path,
		      const char *night, const struct hr_regression *reg, size_t nreg,
		      const struct hr_check_count *cnt, json_t *kernel_log, int quiet)
{
	json_t *drain = json_array();
	size_t i, j;
	int rc = 0;

	if (!drain)
		return CH_ERR_RUNTIME;
	for (i = 0; i < nreg; i++) {
		int dup = 0;
		if (!reg[i].info || !quiet)
			print_one(&reg[i], cfg->persist);
		if (!reg[i].persisted || !strcmp(reg[i].node, HR_HISTORY_FLEET))
			continue;
		for (j = 0; j < json_array_size(drain); j++)
			dup |= !strcmp(json_string_value(json_array_get(drain, j)), reg[i].node);
		if (!dup)
			json_array_append_new(drain, json_string(reg[i].node));
	}
	if (json_array_size(drain)) {
		printf("drain candidates:");
		for (j = 0; j < json_array_size(drain); j++)
			printf(" %s", hr_term(json_string_value(json_array_get(drain, j))));
		printf("\n");
	}
	if (json_path)
		rc = write_json(cfg, json_path, night, reg, nreg, cnt, kernel_log, drain);
	if (!rc && prom_path)
		rc = write_prom(prom_path, night, reg, nreg, cnt);
	json_decref(drain);
	return rc;
}
