/*
 * hr_render_power.c - the power-cap part of the outputs (see hr_render_power.h).
 */
#include "report/render/hr_render_power.h"
#include "report/render/hr_plot.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void num(char *buf, size_t n, double v, int prec, const char *unit)
{
	if (isnan(v))
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%.*f%s", prec, v, unit);
}

/* The model's summary sentence (plain text). */
static void summary(const json_t *m, char *buf, size_t n)
{
	const json_t *w = json_object_get(m, "worst");
	char loss[32], saved[32], tol[32];

	num(loss, sizeof(loss), hr_jnum(m, "worst_compute_loss_pct"), 1, "%");
	num(saved, sizeof(saved), hr_jnum(m, "median_energy_per_flop_saved_pct"), 1, "%");
	num(tol, sizeof(tol), hr_jnum(m, "tolerance_pct"), 0, "%");
	if (isnan(hr_jnum(m, "recommended_cap_w"))) {
		snprintf(buf, n, "%s: no recommended cap (%lld GPUs swept, none with a judged sweep)",
			 hr_jstr(m, "gpu_model") ? hr_jstr(m, "gpu_model") : "?", hr_jint(m, "gpus_swept", 0));
		return;
	}
	snprintf(buf, n, "%s: recommended power cap %.0f W (%.0f%% of the default %.0f W) for %lld GPUs on %lld nodes: "
		 "worst compute-bound loss %s (%s %s), median energy per FLOP saved %s; tolerance %s",
		 hr_jstr(m, "gpu_model") ? hr_jstr(m, "gpu_model") : "?", hr_jnum(m, "recommended_cap_w"),
		 hr_jnum(m, "pct_of_default"), hr_jnum(m, "default_limit_w"), hr_jint(m, "gpus_swept", 0),
		 hr_jint(m, "nodes_swept", 0), loss, hr_jstr(w, "node") ? hr_jstr(w, "node") : "-",
		 hr_jstr(w, "device") ? hr_jstr(w, "device") : "", saved, tol);
	if (hr_jint(m, "gpus_without_the_cap", 0) > 0) {
		size_t l = strlen(buf);
		snprintf(buf + l, n > l ? n - l : 0, "; %lld GPUs did not measure this cap", hr_jint(m, "gpus_without_the_cap", 0));
	}
}

void hr_render_power_terminal(const json_t *p, FILE *out)
{
	const json_t *m;
	size_t i;
	char line[1024];

	if (!json_array_size(json_object_get(json_object_get(p, "power_caps"), "models")))
		return;
	fprintf(out, "\npower caps (roofline --power-limits; the highest of the GPUs' recommended caps)\n");
	json_array_foreach(json_object_get(json_object_get(p, "power_caps"), "models"), i, m) {
		summary(m, line, sizeof(line));
		fprintf(out, "  %s\n", hr_term(line));
	}
}

void hr_render_power_md(const json_t *p, struct hr_buf *b)
{
	const json_t *m, *c, *nd;
	size_t i, j;
	char line[1024], a[32], d[32];

	if (!json_array_size(json_object_get(json_object_get(p, "power_caps"), "models")))
		return;
	hr_buf_puts(b, "\n## Power caps\n\nFrom roofline's power-cap sweeps (`roofline --power-limits`): each GPU's "
		    "recommended cap is the lowest whose compute-bound performance stays within the tolerance of its "
		    "figure at the default limit; a model's is the highest of its GPUs' (in a synchronous job the "
		    "slowest GPU sets the pace). Figures are medians over the model's GPUs, in % of each GPU's own at "
		    "the default limit.\n");
	json_array_foreach(json_object_get(json_object_get(p, "power_caps"), "models"), i, m) {
		summary(m, line, sizeof(line));
		hr_buf_puts(b, "\n");
		hr_buf_md(b, line);
		hr_buf_puts(b, "\n\n| cap | % of default | GPUs | GFLOP/s % | GFLOP/J % |\n|---|---|---|---|---|\n");
		json_array_foreach(json_object_get(m, "curve"), j, c) {
			num(a, sizeof(a), hr_jnum(c, "perf_pct"), 1, "");
			num(d, sizeof(d), hr_jnum(c, "gflop_per_j_pct"), 1, "");
			hr_buf_printf(b, "| %.0f W%s | %.0f | %lld | %s | %s |\n", hr_jnum(c, "cap_w"),
				      fabs(hr_jnum(c, "cap_w") - hr_jnum(m, "recommended_cap_w")) <= 0.5 ? " (recommended)" : "",
				      hr_jnum(c, "pct_of_default"), hr_jint(c, "gpus", 0), a, d);
		}
		hr_buf_puts(b, "\nPer node, its own cap (the highest of its GPUs'):");
		json_array_foreach(json_object_get(m, "nodes"), j, nd) {
			num(a, sizeof(a), hr_jnum(nd, "cap_w"), 0, " W");
			hr_buf_printf(b, "%s ", j ? "," : "");
			hr_buf_md(b, hr_jstr(nd, "node") ? hr_jstr(nd, "node") : "?");
			hr_buf_printf(b, " %s", a);
		}
		hr_buf_puts(b, ".\n");
	}
}

void hr_render_power_html(const json_t *p, struct hr_buf *b, int *drawn)
{
	const json_t *pc = json_object_get(p, "power_caps"), *m, *c, *nd;
	struct hr_svg svg;
	size_t i, j;
	char line[1024], a[32], d[32];

	if (!json_array_size(json_object_get(pc, "models")))
		return;
	hr_buf_puts(b, "<h2 id=\"power\">Power caps</h2>\n<p>From roofline's power-cap sweeps (<code>roofline "
		    "--power-limits</code>): each GPU's recommended cap is the lowest whose compute-bound performance "
		    "stays within the tolerance of its figure at the default limit; a model's is the highest of its "
		    "GPUs' (in a synchronous job the slowest GPU sets the pace).</p>\n");
	if (hr_plot_powercap(pc, &svg) == 0) {
		hr_buf_puts(b, "<figure class=\"plot\" data-plot=\"power_caps\" data-subject=\"fleet\">");
		hr_buf_append(b, svg.svg, svg.len);
		hr_buf_puts(b, "<figcaption>Compute-bound GFLOP/s (solid) and GFLOP/J (dashed) against the power cap, "
			    "median over each GPU model's GPUs, in % of each GPU's figure at the default limit; the "
			    "recommended cap dotted.</figcaption></figure>\n");
		hr_svg_release(&svg);
		if (drawn)
			(*drawn)++;
	}
	json_array_foreach(json_object_get(pc, "models"), i, m) {
		summary(m, line, sizeof(line));
		hr_buf_puts(b, "<p>");
		hr_buf_html(b, line);
		hr_buf_puts(b, "</p>\n<table><tr><th>cap</th><th>% of default</th><th>GPUs</th><th>GFLOP/s %</th>"
			    "<th>GFLOP/J %</th></tr>\n");
		json_array_foreach(json_object_get(m, "curve"), j, c) {
			num(a, sizeof(a), hr_jnum(c, "perf_pct"), 1, "");
			num(d, sizeof(d), hr_jnum(c, "gflop_per_j_pct"), 1, "");
			hr_buf_printf(b, "<tr><td>%.0f W%s</td><td>%.0f</td><td>%lld</td><td>%s</td><td>%s</td></tr>\n",
				      hr_jnum(c, "cap_w"),
				      fabs(hr_jnum(c, "cap_w") - hr_jnum(m, "recommended_cap_w")) <= 0.5 ? " (recommended)" : "",
				      hr_jnum(c, "pct_of_default"), hr_jint(c, "gpus", 0), a, d);
		}
		hr_buf_puts(b, "</table>\n<p class=\"meta\">Per node, its own cap:");
		json_array_foreach(json_object_get(m, "nodes"), j, nd) {
			num(a, sizeof(a), hr_jnum(nd, "cap_w"), 0, " W");
			hr_buf_printf(b, "%s ", j ? "," : "");
			hr_buf_html(b, hr_jstr(nd, "node") ? hr_jstr(nd, "node") : "?");
			hr_buf_printf(b, " %s", a);
		}
		hr_buf_puts(b, ".</p>\n");
	}
}
