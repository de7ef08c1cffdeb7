/*
 * hr_render.c - terminal summary, Markdown and Prometheus outputs.
 */
#include "report/render/hr_render.h"
#include "report/render/hr_steps_render.h"
#include "report/render/hr_render_power.h"
#include "report/judge/hr_checkpoint.h"
#include "report/judge/hr_inventory.h"
#include "report/render/hr_rows.h"
#include "report/render/hr_render_int.h"
#include "base/ch_common.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define RED "\033[1;31m"
#define YEL "\033[1;33m"
#define GRN "\033[32m"
#define DIM "\033[2m"
#define BLD "\033[1m"
#define RST "\033[0m"

static const char *verdict_color(const char *v)
{
	if (!v)
		return "";
	if (!strcmp(v, "FAIL") || !strcmp(v, "fail"))
		return RED;
	if (!strcmp(v, "WARN") || !strcmp(v, "warn"))
		return YEL;
	return GRN;
}

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

static void cost_line(const json_t *c, char *buf, size_t n)
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

/* ------------------------------------------------------------ terminal */

const char *hr_group_level_text(const json_t *g)
{
	const json_t *cmp = json_object_get(g, "comparison");
	if (!json_is_object(cmp))
		return hr_jstr(g, "failure") ? "failed" : "not judged";
	if (json_is_false(json_object_get(cmp, "judged")))
		return hr_jstr(cmp, "superseded_by") ? "not judged (earlier run)" : "not judged";
	return hr_jstr(cmp, "level") ? hr_jstr(cmp, "level") : "not judged";
}

/* "memory 4.15 TB/s" style: the figure of a headline entry. */
static void headline_fig(FILE *out, const char *what, const json_t *h, int flops)
{
	char num[32];
	double v = hr_jnum(h, "value");
	if (flops && v >= 10000)
		fprintf(out, "%s %s TFLOP/s", what, hr_fmt_num(v / 1000, num, sizeof(num)));
	else
		fprintf(out, "%s %s %s", what, hr_fmt_num(v, num, sizeof(num)), flops ? "GFLOP/s" : "GB/s");
}

/*
 * The second line of a node in the terminal summary: its headline figures
 * (the worst of each kind) next to what they were judged against.
 */
static void headline_line(FILE *out, const json_t *hl, const char *dim, const char *c1)
{
	static const char *const keys[] = { "memory", "compute", "intra_node_busbw", "inter_node_busbw" };
	static const char *const names[] = { "memory", "compute", "intra-node", "inter-node" };
	int k, any = 0;
	if (!json_is_object(hl))
		return;
	fprintf(out, "      %s", dim);
	for (k = 0; k < 4; k++) {
		const json_t *h = json_object_get(hl, keys[k]);
		char what[64];
		const char *ja;
		if (!json_is_object(h))
			continue;
		if (k == 1 && hr_jstr(h, "metric"))
			snprintf(what, sizeof(what), "%s",
				 strchr(hr_jstr(h, "metric"), '.') ? strchr(hr_jstr(h, "metric"), '.') + 1 : "compute");
		else
			snprintf(what, sizeof(what), "%s", names[k]);
		fprintf(out, "%s", any++ ? " | " : "");
		headline_fig(out, hr_term(what), h, k == 1);
		ja = hr_jstr(h, "judged_against");
		if (ja && !strncmp(ja, "not judged", 10))
			fprintf(out, " NOT JUDGED");
		else
			fprintf(out, " (%s%s%s)", hr_jstr(h, "subject") ? hr_term(hr_jstr(h, "subject")) : "",
				ja && *ja ? "; " : "", ja ? hr_term(ja) : "");
	}
	if (hr_jstr(hl, "loader"))
		fprintf(out, "%sloader %s", any++ ? " | " : "", hr_term(hr_jstr(hl, "loader")));
	else
		fprintf(out, "%sloader not measured", any++ ? " | " : "");
	fprintf(out, "%s\n", c1);
}

void hr_term_node(FILE *out, const json_t *n, int color, size_t *shown_pass, size_t *more_pass)
{
	const char *c1 = color ? RST : "", *dim = color ? DIM : "";
	const char *v = hr_jstr(n, "verdict");
	const json_t *rs = json_object_get(n, "reasons"), *r;
	const json_t *first = NULL;
	const char *text;
	size_t nr = 0, j;
	if (v && !strcmp(v, "PASS") && *shown_pass >= 20) {
		(*more_pass)++;
		return;
	}
	if (v && !strcmp(v, "PASS"))
		(*shown_pass)++;
	json_array_foreach(rs, j, r) {
		const char *l = hr_jstr(r, "level");
		if (l && strcmp(l, "info")) {
			if (!first)
				first = r;
			nr++;
		}
	}
	if (!first) /* a PASS that could not judge its fabric says so; else a tool it lacked */
		json_array_foreach(rs, j, r)
			if (hr_streq(hr_jstr(r, "code"), "fabric_not_judged") && !first)
				first = r;
	if (!first)
		json_array_foreach(rs, j, r)
			if (hr_streq(hr_jstr(r, "code"), "unavailable") && !first)
				first = r;
	/* a NOT JUDGED node: why no performance check could be judged */
	text = hr_jstr(n, "not_judged_reason");
	if (nr || !text)
		text = first ? hr_jstr(first, "text") : NULL;
	fprintf(out, "%s%-4s%s  %-16s %s", color ? verdict_color(v) : "", v ? hr_term(v) : "?", c1,
		hr_jstr(n, "name") ? hr_term(hr_jstr(n, "name")) : "?",
		text ? hr_term(text) : (json_is_false(json_object_get(n, "like_for_like")) ? "(configuration differs from the fleet)" : ""));
	if (nr > 1)
		fprintf(out, " %s(+%zu more)%s", dim, nr - 1, c1);
	fputc('\n', out);
	headline_line(out, json_object_get(n, "headline"), dim, c1);
}

int hr_term_render(const json_t *p, FILE *out, int color, const struct hr_render_parts *parts)
{
	const json_t *sum = json_object_get(p, "summary"), *nodes = json_object_get(p, "nodes");
	const json_t *in = json_object_get(p, "inputs"), *n, *r, *x;
	size_t i, j, more_pass = parts->more_pass;
	char line[1024];
	const char *c0 = color ? BLD : "", *c1 = color ? RST : "", *dim = color ? DIM : "";

	fprintf(out, "%shealth_report%s: %lld node%s: %lld FAIL, %lld WARN, %lld PASS, %lld not judged; checks: %lld judged, %lld not judged (%lld noisy); %lld devices, %lld groups; %lld input files (%lld read, %lld ignored), %lld input problem%s skipped\n",
		c0, c1, hr_jint(sum, "nodes", 0), hr_jint(sum, "nodes", 0) == 1 ? "" : "s",
		hr_jint(sum, "fail", 0), hr_jint(sum, "warn", 0), hr_jint(sum, "pass", 0),
		hr_jint(sum, "not_judged", 0), hr_jint(sum, "checks_judged", 0),
		hr_jint(sum, "checks_not_judged", 0), hr_jint(sum, "checks_noisy", 0), hr_jint(sum, "devices", 0), hr_jint(sum, "groups", 0), hr_jint(in, "files", 0),
		hr_jint(in, "files_read", 0), hr_jint(in, "files_ignored", 0), hr_jint(in, "skipped", 0),
		hr_jint(in, "skipped", 0) == 1 ? "" : "s");
	cost_line(json_object_get(p, "run_cost"), line, sizeof(line));
	fprintf(out, "%s%s%s\n\n", dim, hr_term(line), c1);

	/* the node lines, rendered node by node (hr_term_node) */
	fwrite(parts->term_lines.s ? parts->term_lines.s : "", 1, parts->term_lines.len, out);
	if (more_pass)
		fprintf(out, "      ... and %zu more PASS node%s\n", more_pass, more_pass == 1 ? "" : "s");

	/* details */
	json_array_foreach(nodes, i, n) {
		const char *v = hr_jstr(n, "verdict");
		int header = 0;
		json_array_foreach(json_object_get(n, "reasons"), j, r) {
			const char *l = hr_jstr(r, "level");
			if (!l || !strcmp(l, "info"))
				continue;
			if (!header) {
				fprintf(out, "\n%s%s%s %s%s%s\n", c0, hr_term(hr_jstr(n, "name")), c1,
					color ? verdict_color(v) : "", hr_term(v), c1);
				header = 1;
			}
			fprintf(out, "  %s%-4s%s %s\n", color ? verdict_color(l) : "", hr_term(l), c1, hr_term(hr_jstr(r, "text")));
			if (hr_jstr(r, "action"))
				fprintf(out, "       %saction:%s %s\n", dim, c1, hr_term(hr_jstr(r, "action")));
		}
	}
	fwrite(parts->term_ckpt.s ? parts->term_ckpt.s : "", 1, parts->term_ckpt.len, out);
	hr_render_power_terminal(p, out);
	x = json_object_get(p, "findings");
	if (json_array_size(x)) {
		fprintf(out, "\n%sfleet findings%s (not tied to a node)\n", c0, c1);
		json_array_foreach(x, j, r) {
			const char *l = hr_jstr(r, "level");
			fprintf(out, "  %s%-4s%s %s\n", color ? verdict_color(l) : "", hr_term(l), c1, hr_term(hr_jstr(r, "text")));
			if (hr_jstr(r, "action"))
				fprintf(out, "       %saction:%s %s\n", dim, c1, hr_term(hr_jstr(r, "action")));
		}
	}
	x = json_object_get(p, "drift");
	if (json_array_size(x)) {
		fprintf(out, "\n%sconfiguration drift%s (results across these are not like for like)\n", c0, c1);
		json_array_foreach(x, j, r) {
			const json_t *d;
			size_t k;
			fprintf(out, "  %s: fleet '%s'", hr_term(hr_jstr(r, "key")),
				hr_jstr(r, "majority") ? hr_term(hr_jstr(r, "majority")) : "(no majority)");
			json_array_foreach(json_object_get(r, "nodes"), k, d)
				fprintf(out, "%s %s '%s'", k ? "," : ";", hr_term(hr_jstr(d, "node")), hr_term(hr_jstr(d, "value")));
			fputc('\n', out);
		}
	}
	x = json_object_get(sum, "drain_candidates");
	if (json_array_size(x)) {
		fprintf(out, "\n%sdrain candidates%s:", color ? RED : "", c1);
		json_array_foreach(x, j, r)
			fprintf(out, " %s", hr_term(json_string_value(r)));
		fputc('\n', out);
	}
	x = json_object_get(in, "issues");
	if (json_array_size(x)) {
		size_t shown = 0;
		fprintf(out, "\n%sinput problems and notes%s (%zu)%s\n", c0, c1, json_array_size(x),
			hr_jint(in, "skipped", 0) ? ": the report was produced without the skipped parts" : "");
		json_array_foreach(x, j, r) {
			long long l = hr_jint(r, "line", 0), c = hr_jint(r, "column", 0);
			if (shown++ >= 20) {
				fprintf(out, "  ... %zu more in profile.json (inputs.issues)\n", json_array_size(x) - 20);
				break;
			}
			fprintf(out, "  %s", hr_term(hr_jstr(r, "path")));
			if (l > 0)
				fprintf(out, ":%lld", l);
			if (c > 0)
				fprintf(out, ":%lld", c);
			fprintf(out, ": %s: %s\n", hr_term(hr_jstr(r, "kind")), hr_term(hr_jstr(r, "message")));
		}
	}
	fflush(out);
	return ferror(out) ? CH_ERR_RUNTIME : 0;
}

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
	if (json_array_size(x)) {
		hr_buf_puts(b, "**Drain candidates:** ");
		json_array_foreach(x, j, r) {
			hr_buf_puts(b, j ? ", " : "");
			hr_buf_md(b, json_string_value(r));
		}
		hr_buf_puts(b, "\n\n");
	}
	cost_line(c, line, sizeof(line));
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
	{ "clusterhealth_device_memory_gbps", "Measured memory roof of a device (roofline), GB/s (1e9 bytes/s).", "gauge" },
	{ "clusterhealth_device_compute_gflops", "Measured compute roof of a device per dtype (roofline), GFLOP/s.", "gauge" },
	{ "clusterhealth_device_pct_of_expected", "Measured roof as percent of the per-SKU expectation (datasheet x attainable fraction).", "gauge" },
	{ "clusterhealth_device_robust_z", "Robust z-score of the roof against like devices of the fleet (0.6745 (x - median) / MAD).", "gauge" },
	{ "clusterhealth_busbw_gbps", "All-reduce busbw at the largest message size (out-of-place), per node and group, GB/s.", "gauge" },
	{ "clusterhealth_loader_input_wait_ratio", "Input-wait fraction of the step per loader configuration (loader_contention).", "gauge" },
	{ "clusterhealth_loader_lateness_p99_seconds", "Feeder lateness against its deadline, 99th percentile, per loader configuration.", "gauge" },
	{ "clusterhealth_checkpoint_rank_write_gbps", "Synchronous checkpoint write bandwidth per rank, median over the node's ranks, per mount (checkpoint_io), GB/s.", "gauge" },
	{ "clusterhealth_checkpoint_block_seconds", "Time one synchronous checkpoint blocks the step, per node and mount (checkpoint_io).", "gauge" },
	{ "clusterhealth_checkpoint_bad_files", "Checkpoint files that did not read back as written, per node and mount (checkpoint_io).", "gauge" },
};

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
		json_array_foreach(json_object_get(n, "devices"), j, d) {
			const char *key;
			json_array_foreach(json_object_get(d, "metrics"), q, m)
				if (!strcmp(hr_jstr(m, "metric"), "memory_gbps"))
					prom_sample(b, name, hr_jnum(m, "value"), "node", hr_jstr(n, "name"),
						    "device", hr_jstr(d, "device"), "sku", hr_jstr(d, "sku") ? hr_jstr(d, "sku") : "", NULL);
			/* a node of bounded detail: its devices' values */
			json_object_foreach((json_t *)json_object_get(d, "values"), key, m)
				if (!strcmp(key, "memory_gbps"))
					prom_sample(b, name, hr_jnum_v(m), "node", hr_jstr(n, "name"),
						    "device", hr_jstr(d, "device"), "sku", hr_jstr(d, "sku") ? hr_jstr(d, "sku") : "", NULL);
		}
		break;
	case 4:
		json_array_foreach(json_object_get(n, "devices"), j, d) {
			const char *key;
			json_array_foreach(json_object_get(d, "metrics"), q, m)
				if (!strncmp(hr_jstr(m, "metric"), "compute_gflops.", 15))
					prom_sample(b, name, hr_jnum(m, "value"), "node", hr_jstr(n, "name"),
						    "device", hr_jstr(d, "device"), "sku", hr_jstr(d, "sku") ? hr_jstr(d, "sku") : "",
						    "dtype", hr_jstr(m, "metric") + 15, NULL);
			json_object_foreach((json_t *)json_object_get(d, "values"), key, m)
				if (!strncmp(key, "compute_gflops.", 15))
					prom_sample(b, name, hr_jnum_v(m), "node", hr_jstr(n, "name"),
						    "device", hr_jstr(d, "device"), "sku", hr_jstr(d, "sku") ? hr_jstr(d, "sku") : "",
						    "dtype", key + 15, NULL);
		}
		break;
	case 5:
	case 6:
		json_array_foreach(json_object_get(n, "devices"), j, d)
			json_array_foreach(json_object_get(d, "metrics"), q, m)
				prom_sample(b, name, hr_jnum(m, k == 5 ? "pct_of_expected" : "z"), "node", hr_jstr(n, "name"),
					    "device", hr_jstr(d, "device"), "metric", hr_jstr(m, "metric"), NULL);
		break;
	case 7:
		json_array_foreach(json_object_get(n, "busbw"), j, d) {
			char nr[24];
			snprintf(nr, sizeof(nr), "%lld", hr_jint(d, "nranks", 0));
			prom_sample(b, name, hr_jnum(d, "large_msg_busbw_gbps"), "node", hr_jstr(n, "name"),
				    "group", hr_jstr(d, "group"), "kind", hr_jstr(d, "kind"), "algo", hr_jstr(d, "algo"),
				    "nranks", nr, NULL);
		}
		break;
	case 8:
	case 9:
		json_array_foreach(json_object_get(json_object_get(n, "loader"), "configs"), j, d)
			prom_sample(b, name, k == 8 ? hr_jnum(d, "input_wait_frac") : hr_jnum(d, "lateness_p99_us") * 1e-6,
				    "node", hr_jstr(n, "name"), "config", hr_jstr(d, "name"), "placement", hr_jstr(d, "placement"), NULL);
		break;
	case 10:
	case 11:
	case 12:
		json_array_foreach(json_object_get(n, "checkpoint"), j, d)
			prom_sample(b, name, k == 10 ? hr_jnum(d, "rank_write_gbps") : k == 11 ? hr_jnum(d, "block_sec") :
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
