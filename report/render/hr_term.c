/*
 * hr_term.c - the terminal summary, from the profile and the nodes'
 * lines (hr_render_int.h).
 */
#include "report/render/hr_render.h"
#include "report/render/hr_render_power.h"
#include "report/judge/hr_checkpoint.h"
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
	if (hr_jstr(sum, "history"))
		fprintf(out, "%s%s%s\n", dim, hr_term(hr_jstr(sum, "history")), c1);
	hr_rows_cost_line(json_object_get(p, "run_cost"), line, sizeof(line));
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
