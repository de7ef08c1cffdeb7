/*
 * hr_md.c - report.md, from the report's rows (hr_rows.h) and the
 * nodes' rows (hr_render_int.h).
 */
#include "report/render/hr_render.h"
#include "report/render/hr_steps_render.h"
#include "report/render/hr_render_power.h"
#include "report/judge/hr_checkpoint.h"
#include "report/render/hr_rows.h"
#include "report/render/hr_render_int.h"
#include "base/ch_common.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* ------------------------------------------------------------ Markdown */

/* A ticket stays readable: past this many rows a table lists only what is
 * flagged (everything is in profile.json and report.html). */
#define MD_MAX_ROWS 60

/* the suffixes of the number columns of the device and group tables */
static const char *const pct3_z[] = { "%", "%", "%", "" };

static const char *const group_units[] = { "", "%", "", "" };

static void md_head(const json_t *p, struct hr_buf *b)
{
	const json_t *sum = json_object_get(p, "summary"), *c = json_object_get(p, "run_cost"), *r;
	const json_t *x = json_object_get(sum, "drain_candidates");
	char line[1024];
	size_t j;

	hr_buf_printf(b, "# Cluster health report\n\n");
	hr_buf_printf(b, "Generated %s by health_report %s (git %s). **%s**: %lld nodes, %lld FAIL, %lld WARN, %lld PASS, %lld not judged; checks: %lld judged, %lld not judged (%lld noisy); %lld devices, %lld all-reduce groups.\n\n",
		      hr_jstr(p, "generated_utc"), hr_jstr(p, "version"), hr_jstr(p, "git_rev"),
		      hr_jstr(sum, "verdict"), hr_jint(sum, "nodes", 0), hr_jint(sum, "fail", 0),
		      hr_jint(sum, "warn", 0), hr_jint(sum, "pass", 0), hr_jint(sum, "not_judged", 0),
		      hr_jint(sum, "checks_judged", 0), hr_jint(sum, "checks_not_judged", 0),
		      hr_jint(sum, "checks_noisy", 0), hr_jint(sum, "devices", 0),
		      hr_jint(sum, "groups", 0));
	if (hr_jstr(sum, "history")) {
		hr_buf_md(b, hr_jstr(sum, "history"));
		hr_buf_puts(b, ".\n\n");
	}
	if (json_array_size(x)) {
		hr_buf_puts(b, "**Drain candidates:** ");
		json_array_foreach(x, j, r) {
			hr_buf_puts(b, j ? ", " : "");
			hr_buf_md(b, json_string_value(r));
		}
		hr_buf_puts(b, "\n\n");
	}
	hr_rows_cost_line(c, line, sizeof(line));
	hr_buf_puts(b, "R");
	hr_buf_md(b, line + 1);
	hr_buf_puts(b, ".\n\n");
	if (hr_jstr(c, "energy_source") && strcmp(hr_jstr(c, "energy_source"), "measured")) {
		hr_buf_puts(b, "Energy estimate: ");
		hr_buf_md(b, hr_jstr(c, "estimate_basis"));
		hr_buf_puts(b, ".\n\n");
	}
}

void hr_md_node(struct hr_buf *b, const struct hr_node_row *n)
{
	size_t j;
	int any = 0;
	hr_buf_puts(b, "| ");
	hr_buf_md(b, n->verdict);
	hr_buf_puts(b, " | ");
	hr_buf_md(b, n->name);
	hr_buf_puts(b, " | ");
	if (n->not_judged_reason) {
		hr_buf_puts(b, "**not judged** ");
		hr_buf_md(b, n->not_judged_reason);
		any = 1;
	}
	for (j = 0; j < n->nreasons; j++) {
		/* flagged reasons; and a tool that was unavailable (in a NOT JUDGED
		 * node's reason already) */
		if (!n->reasons[j].flagged &&
		    (n->not_judged_reason || !hr_streq(n->reasons[j].code, "unavailable")))
			continue;
		hr_buf_printf(b, "%s**", any ? "<br>" : "");
		hr_buf_md(b, n->reasons[j].level);
		hr_buf_puts(b, "** ");
		hr_buf_md(b, n->reasons[j].text);
		any = 1;
	}
	hr_buf_puts(b, " | ");
	any = 0;
	for (j = 0; j < n->nreasons; j++) {
		if (!n->reasons[j].flagged || !n->reasons[j].action)
			continue;
		hr_buf_puts(b, any ? "<br>" : "");
		hr_buf_md(b, n->reasons[j].action);
		any = 1;
	}
	hr_buf_puts(b, " |\n");
}

static void md_findings_drift(const struct hr_rows *rows, struct hr_buf *b)
{
	size_t j;
	if (rows->nfindings)
		hr_buf_puts(b, "\n## Fleet findings (not tied to a node)\n\n");
	for (j = 0; j < rows->nfindings; j++) {
		const struct hr_reason_row *r = &rows->findings[j];
		hr_buf_puts(b, "- **");
		hr_buf_md(b, r->level);
		hr_buf_puts(b, "** ");
		hr_buf_md(b, r->text);
		if (r->action) {
			hr_buf_puts(b, " Action: ");
			hr_buf_md(b, r->action);
		}
		hr_buf_puts(b, "\n");
	}
	if (rows->ndrift)
		hr_buf_puts(b, "\n## Configuration drift\n\nResults across these nodes are not like for like.\n\n| key | fleet majority | differing nodes |\n|---|---|---|\n");
	for (j = 0; j < rows->ndrift; j++) {
		const struct hr_drift_row *r = &rows->drift[j];
		hr_buf_puts(b, "| ");
		hr_buf_md(b, r->key);
		hr_buf_puts(b, " | ");
		hr_buf_md(b, r->majority ? r->majority : "(no majority)");
		hr_buf_puts(b, " | ");
		hr_rows_drift_values(b, r, ", ", " '", "'", hr_buf_md);
		hr_buf_puts(b, " |\n");
	}
}

static void md_devices(const struct hr_rows *rows, const struct hr_render_parts *parts, struct hr_buf *b)
{
	int all = rows->metrics <= MD_MAX_ROWS;
	size_t i;
	hr_buf_puts(b, "\n## Devices (roofline)\n\n");
	if (!all)
		hr_buf_printf(b, "The %zu flagged of %zu device metrics (all of them are in %sprofile.json%s).\n\n",
			      rows->metrics_flagged, rows->metrics, rows->metrics <= HR_HTML_MAX_ROWS ? "report.html and " : "",
			      parts->kept_of_bounded ? ": a PASS node's values, every figure with --detail all" : "");
	if (parts->left_values)
		hr_buf_printf(b, "%s %zu device metrics of %zu PASS node%s are not listed: " HR_RENDER_LEFT_WHY ". Their values are in profile.json, their headline figures in report.html's PASS nodes table.\n\n",
			      rows->metrics ? "The" : "There are no other device metrics: the", parts->left_values,
			      parts->left_nodes, parts->left_nodes == 1 ? "" : "s");
	hr_buf_puts(b, "| node | device | model | metric | measured | % of datasheet | % of expected | % of fleet median | robust z | level |\n|---|---|---|---|---|---|---|---|---|---|\n");
	for (i = 0; i < rows->ndevices; i++) {
		const struct hr_device_row *d = &rows->devices[i];
		if (d->is_status) {
			if (!all && !strcmp(d->status ? d->status : "", "unavailable"))
				continue;
			hr_buf_puts(b, "| ");
			hr_buf_md(b, d->node);
			hr_buf_puts(b, " | ");
			hr_buf_md(b, d->device);
			hr_buf_puts(b, " | ");
			hr_buf_md(b, d->name ? d->name : "?");
			hr_buf_puts(b, " | status ");
			hr_buf_md(b, d->status);
			hr_buf_puts(b, " | ");
			hr_buf_md(b, d->reason ? d->reason : "");
			hr_buf_puts(b, " | | | | | |\n");
			continue;
		}
		if (!all && !d->flagged)
			continue;
		hr_buf_puts(b, "| ");
		hr_buf_md(b, d->node);
		hr_buf_puts(b, " | ");
		hr_buf_md(b, d->device);
		hr_buf_puts(b, " | ");
		hr_buf_md(b, d->sku ? d->sku : d->name ? d->name : "?");
		hr_buf_puts(b, " | ");
		hr_buf_md(b, d->metric);
		hr_buf_puts(b, " | ");
		hr_rows_num(b, d->value, "");
		hr_buf_puts(b, " ");
		hr_buf_md(b, d->unit);
		hr_buf_puts(b, " | ");
		{
			const double v[] = { d->pct_of_datasheet, d->pct_of_expected, d->pct_of_fleet_median, d->z };
			hr_rows_nums(b, " | ", 4, v, pct3_z);
		}
		hr_buf_puts(b, " | ");
		hr_buf_md(b, d->level_text ? d->level_text : "");
		hr_buf_puts(b, " |\n");
	}
}

static void md_groups(const struct hr_rows *rows, struct hr_buf *b)
{
	int all = rows->ngroups <= MD_MAX_ROWS;
	size_t j;
	hr_buf_puts(b, "\n## All-reduce groups\n\nbusbw at the largest message size, out-of-place; average = mean of every busbw cell (nccl-tests' \"Avg bus bandwidth\").");
	if (!all)
		hr_buf_printf(b, " The %zu flagged or failed of %zu groups.", rows->groups_flagged, rows->ngroups);
	hr_buf_puts(b, "\n\n| group | kind | nodes | collective | algo | ranks | largest size | busbw (GB/s) | % of like median | avg busbw | log's avg | level | source |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	for (j = 0; j < rows->ngroups; j++) {
		const struct hr_group_row *d = &rows->groups[j];
		char sz[32];
		if (!all && !d->flagged)
			continue;
		hr_buf_puts(b, "| ");
		hr_buf_md(b, d->name);
		hr_buf_puts(b, " | ");
		hr_buf_md(b, d->kind);
		hr_buf_puts(b, " | ");
		hr_rows_names(b, d->nodes, hr_buf_md);
		hr_buf_puts(b, " | ");
		hr_buf_md(b, d->collective);
		hr_buf_puts(b, " | ");
		hr_buf_md(b, d->algo);
		hr_buf_printf(b, " | %lld | %s | ", d->nranks, hr_fmt_bytes(d->large_msg_bytes, sz, sizeof(sz)));
		{
			const double v[] = { d->large_msg_busbw_gbps, d->pct_of_fleet_median, d->avg_busbw_gbps,
					     d->reported_avg_busbw_gbps };
			hr_rows_nums(b, " | ", 4, v, group_units);
		}
		hr_buf_puts(b, " | ");
		hr_buf_md(b, d->level_text);
		hr_buf_puts(b, " | ");
		hr_buf_md(b, d->source);
		hr_buf_puts(b, " |\n");
	}
}

static void md_loader(const struct hr_rows *rows, const struct hr_render_parts *parts, struct hr_buf *b)
{
	int all = rows->nloader <= MD_MAX_ROWS;
	size_t j;
	hr_buf_puts(b, "\n## Loader (feeder lateness per placement)\n\n");
	if (parts->left_loaders)
		hr_buf_printf(b, "The loader configurations of %zu PASS node%s are not listed: " HR_RENDER_LEFT_WHY ". Their loader verdicts are in profile.json and report.html's PASS nodes table.\n\n",
			      parts->left_loaders, parts->left_loaders == 1 ? "" : "s");
	if (!all)
		hr_buf_printf(b, "The %zu configurations of %zu that did not pass.\n\n", rows->loader_flagged, rows->nloader);
	hr_buf_puts(b, "| node | config | placement | workers | lateness p50 / p99 (us) | input wait | accel. util. | verdict |\n|---|---|---|---|---|---|---|---|\n");
	for (j = 0; j < rows->nloader; j++) {
		const struct hr_loader_row *d = &rows->loader[j];
		if (!all && !d->flagged)
			continue;
		hr_buf_puts(b, "| ");
		hr_buf_md(b, d->node);
		hr_buf_puts(b, " | ");
		hr_buf_md(b, d->config);
		hr_buf_puts(b, " | ");
		hr_buf_md(b, d->placement);
		hr_buf_puts(b, " | ");
		if (d->workers < 0)
			hr_buf_puts(b, "n/a | ");
		else
			hr_buf_printf(b, "%lld | ", d->workers);
		hr_rows_num(b, d->lateness_p50_us, "");
		hr_buf_puts(b, " / ");
		hr_rows_num(b, d->lateness_p99_us, "");
		hr_buf_puts(b, " | ");
		hr_rows_num(b, 100 * d->input_wait_frac, "%");
		hr_buf_puts(b, " | ");
		hr_rows_num(b, 100 * d->accel_util, "%");
		hr_buf_puts(b, " | ");
		hr_buf_md(b, d->verdict ? d->verdict : "-");
		hr_buf_puts(b, " |\n");
	}
}

void hr_md_ckpt(struct hr_buf *b, const struct hr_ckpt_row *r)
{
	hr_buf_puts(b, "| ");
	hr_rows_ckpt_cells(b, r, " | ", hr_buf_md);
	hr_buf_puts(b, " |\n");
}

static void md_checkpoint(const struct hr_render_parts *parts, struct hr_buf *b)
{
	size_t j;
	if (!parts->nckpt)
		return;
	hr_buf_puts(b, "\n## Checkpoint writes (checkpoint_io, synchronous)\n\nPer node and mount, its latest result: median over the node's ranks, against the median of the other nodes on the same mount.\n\n|");
	for (j = 0; j < HR_ROWS_CKPT_COLS; j++)
		hr_buf_printf(b, " %s |", hr_rows_ckpt_cols[j]);
	hr_buf_puts(b, "\n|");
	for (j = 0; j < HR_ROWS_CKPT_COLS; j++)
		hr_buf_puts(b, "---|");
	hr_buf_puts(b, "\n");
	hr_buf_append(b, parts->md_ckpt.s ? parts->md_ckpt.s : "", parts->md_ckpt.len);
}

static void md_inputs(const json_t *p, const struct hr_rows *rows, struct hr_buf *b)
{
	const json_t *in = json_object_get(p, "inputs"), *x = json_object_get(p, "expectations");
	const json_t *th = json_object_get(x, "thresholds");
	size_t j;
	hr_buf_printf(b, "\n## Inputs\n\n%lld files, %lld read, %lld ignored (not inputs: health_report's own outputs, allreduce_bw's stdout, other files); %lld skipped, %lld truncated, %lld notes.\n\n",
		      hr_jint(in, "files", 0), hr_jint(in, "files_read", 0), hr_jint(in, "files_ignored", 0),
		      hr_jint(in, "skipped", 0), hr_jint(in, "truncated", 0), hr_jint(in, "notes", 0));
	for (j = 0; j < rows->nissues; j++) {
		hr_buf_puts(b, "- ");
		hr_rows_where(b, &rows->issues[j], hr_buf_md);
		hr_buf_puts(b, ": ");
		hr_buf_md(b, rows->issues[j].kind);
		hr_buf_puts(b, ": ");
		hr_buf_md(b, rows->issues[j].message);
		hr_buf_puts(b, "\n");
	}
	hr_buf_printf(b, "\n## Expectations\n\nAbsolute: datasheet x %.2f (memory) and x %.2f (compute)", hr_jnum(x, "memory_fraction"),
		      hr_jnum(x, "compute_fraction"));
	if (hr_jstr(x, "file")) {
		hr_buf_puts(b, " (overridden by ");
		hr_buf_md(b, hr_jstr(x, "file"));
		hr_buf_puts(b, ")");
	}
	hr_buf_printf(b, ". WARN below %.2f and FAIL below %.2f of an expectation. Fleet-relative: robust z = 0.6745 (x - median) / MAD, an outlier at z <= -%.1f is WARN when %.0f%% and FAIL when %.0f%% below the median of at least %lld like values.\n\n",
		      hr_jnum(th, "warn_ratio"), hr_jnum(th, "fail_ratio"), hr_jnum(th, "z_outlier"),
		      hr_jnum(th, "warn_pct_below"), hr_jnum(th, "fail_pct_below"), hr_jint(th, "min_fleet", 3));
}

int hr_md_render(const json_t *p, struct hr_buf *b, const struct hr_render_parts *parts)
{
	struct hr_rows rows;
	if (hr_rows_build(p, &rows)) {
		hr_rows_free(&rows);
		return CH_ERR_RUNTIME;
	}
	md_head(p, b);
	/* the node rows, rendered node by node (hr_md_node) */
	hr_buf_puts(b, "## Nodes\n\n| verdict | node | reasons | suggested action |\n|---|---|---|---|\n");
	hr_buf_append(b, parts->md_nodes.s ? parts->md_nodes.s : "", parts->md_nodes.len);
	md_findings_drift(&rows, b);
	md_devices(&rows, parts, b);
	md_groups(&rows, b);
	md_loader(&rows, parts, b);
	md_checkpoint(parts, b);
	hr_steps_markdown(json_object_get(p, "steps"), b);
	hr_render_power_md(p, b);
	md_inputs(p, &rows, b);
	hr_rows_free(&rows);
	return b->oom ? CH_ERR_RUNTIME : 0;
}
