/*
 * hr_html.c - the self-contained HTML report with inline PLplot SVG plots.
 */
#include "report/render/hr_render.h"
#include "report/render/hr_render_power.h"
#include "report/render/hr_plot.h"
#include "report/render/hr_steps_render.h"
#include "report/render/hr_rows.h"
#include "report/render/hr_render_int.h"
#include "base/ch_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Past this many device metrics (groups) the table lists only the flagged ones. */

static const char css[] =
	"body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:1.5em auto;max-width:1200px;color:#222;padding:0 1em}"
	"h1{font-size:1.6em}h2{border-bottom:1px solid #ccc;padding-bottom:.2em;margin-top:1.6em}"
	"table{border-collapse:collapse;margin:.5em 0;font-size:.9em}td,th{border:1px solid #ddd;padding:.25em .5em;vertical-align:top;text-align:left}"
	"th{background:#f4f4f4}.FAIL,.fail{color:#b00;font-weight:bold}.WARN,.warn{color:#a60;font-weight:bold}.PASS{color:#070}"
	".act{color:#555;font-size:.9em}.meta{color:#555}figure.plot{display:inline-block;margin:.5em;vertical-align:top}"
	"figure.plot svg{width:720px;height:auto;max-width:100%;border:1px solid #eee}figcaption{font-size:.85em;color:#555;max-width:720px}"
	"code{background:#f4f4f4;padding:0 .2em}.note{color:#555;font-style:italic}"
	"table.sortable th{cursor:pointer}table.sortable th:after{content:' \\2195';color:#aaa}"
	"table.compact td{padding:.1em .4em;white-space:nowrap}input.filter{margin:.3em 0;padding:.2em;width:24em}";

/* Marks each plot's <svg> once laid out with a non-empty box and content. */
static const char script[] =
	"(function(){function check(){var figs=document.querySelectorAll('figure.plot');var ok=0;"
	"for(var i=0;i<figs.length;i++){var s=figs[i].querySelector('svg');var good=false;"
	"if(s){var r=s.getBoundingClientRect();var b=null;try{b=s.getBBox();}catch(e){b=null;}"
	"var drawn=s.querySelectorAll('polyline,path,polygon,text,line,rect').length;"
	"good=r.width>0&&r.height>0&&b!==null&&b.width>0&&b.height>0&&drawn>3;"
	"s.setAttribute('data-rendered',good?'yes':'no');s.setAttribute('data-drawn',String(drawn));}"
	"if(good)ok++;}document.body.setAttribute('data-plots-total',String(figs.length));"
	"document.body.setAttribute('data-plots-rendered',String(ok));}"
	"if(document.readyState==='complete'){check();}else{window.addEventListener('load',check);}})();";

/* The PASS table: its rows are JSON data (<script type="application/json"
 * id="ID-data">, each cell a string or [sort value, text]); the script
 * shows 200 at a time (hrMore: 200 more), sorts them by the clicked column
 * (numbers by value, else text; again: the other way) and filters them by
 * the text typed in the input.filter naming the table (data-table),
 * counting the rows left into the element named by data-count. */
static const char table_script[] =
	"var hrT={};"
	"function hrTab(id){var t=hrT[id];if(!t){var d=document.getElementById(id+'-data');"
	"t=hrT[id]={rows:d?JSON.parse(d.textContent):[],view:null,shown:200,col:-1,dir:1};t.view=t.rows.slice();}return t;}"
	"function hrKey(c){return Array.isArray(c)?(c[0]===null?-Infinity:c[0]):String(c);}"
	"function hrText(c){return Array.isArray(c)?c[1]:String(c);}"
	"function hrDraw(id){var t=hrTab(id),b=document.getElementById(id).tBodies[0],m=document.getElementById(id+'-more'),"
	"n=Math.min(t.shown,t.view.length),f=document.createDocumentFragment();for(var i=0;i<n;i++){var r=t.view[i],"
	"tr=document.createElement('tr');for(var j=0;j<r.length;j++){var td=document.createElement('td');"
	"if(Array.isArray(r[j]))td.setAttribute('data-v',r[j][0]===null?'NaN':String(r[j][0]));td.textContent=hrText(r[j]);"
	"tr.appendChild(td);}f.appendChild(tr);}b.textContent='';b.appendChild(f);"
	"if(m)m.style.display=t.view.length>n?'':'none';}"
	"function hrSort(th){var id=th.parentNode.parentNode.parentNode.id,t=hrTab(id),i=th.cellIndex;"
	"t.dir=t.col===i?-t.dir:1;t.col=i;t.view.sort(function(x,y){var p=hrKey(x[i]),q=hrKey(y[i]);"
	"if(typeof p==='number'&&typeof q==='number')return t.dir*(p-q);return t.dir*String(p).localeCompare(String(q));});"
	"hrDraw(id);}"
	"function hrFilter(inp){var id=inp.getAttribute('data-table'),t=hrTab(id),q=inp.value.toLowerCase();"
	"t.view=t.rows.filter(function(r){return r.map(hrText).join(' ').toLowerCase().indexOf(q)>=0;});"
	"if(t.col>=0){var i=t.col;t.view.sort(function(x,y){var p=hrKey(x[i]),q=hrKey(y[i]);"
	"if(typeof p==='number'&&typeof q==='number')return t.dir*(p-q);return t.dir*String(p).localeCompare(String(q));});}"
	"hrDraw(id);var c=document.getElementById(inp.getAttribute('data-count'));if(c)c.textContent=String(t.view.length);}"
	"function hrMore(id){hrTab(id).shown+=200;hrDraw(id);}"
	"if(document.getElementById('healthy-table'))hrDraw('healthy-table');";

static void esc(struct hr_buf *b, const char *s)
{
	hr_buf_html(b, s ? s : "");
}

static const char *fmt_sec(double s, char *buf, size_t n)
{
	if (isnan(s))
		snprintf(buf, n, "n/a");
	else
		snprintf(buf, n, "%.0f s", s);
	return buf;
}

/* ------------------------------------------------------------ plots */

struct plotter {
	struct hr_buf *b;
	int drawn;
	int max;
	int busbw_classes; /* overlay plots of like groups drawn */
};

static void figure(struct plotter *pl, const char *kind, const char *subject,
		   const struct hr_svg *svg, const char *caption)
{
	hr_buf_printf(pl->b, "<figure class=\"plot\" data-plot=\"%s\" data-subject=\"", kind);
	esc(pl->b, subject);
	hr_buf_puts(pl->b, "\">");
	hr_buf_append(pl->b, svg->svg, svg->len);
	hr_buf_puts(pl->b, "<figcaption>");
	esc(pl->b, caption);
	hr_buf_puts(pl->b, "</figcaption></figure>\n");
	pl->drawn++;
}

/* the training job's step logs (health_report --steps): the plot, then the table */
static void steps_section(struct plotter *pl, const json_t *st)
{
	struct hr_svg svg;
	if (!json_is_object(st))
		return;
	hr_steps_html(st, pl->b);
	if (hr_plot_steps(st, &svg) == 0) {
		figure(pl, "steps", "ranks", &svg,
		       "Each rank's window median step time (black) and its own compute (blue; a straggler red), worst first; the mean time split stacked. Source: the step logs (measured).");
		hr_svg_release(&svg);
	}
}

static int device_flagged(const json_t *d)
{
	const json_t *m;
	size_t k;
	json_array_foreach(json_object_get(d, "metrics"), k, m) {
		const char *l = hr_jstr(m, "level");
		if (l && strcmp(l, "info"))
			return 1;
	}
	return 0;
}

/* Does hr_plot_roofline() draw a dashed datasheet roof for @d: a compute
 * roof with a datasheet figure (a CPU has none)? */
static int datasheet_roofs(const json_t *d)
{
	const json_t *m;
	size_t k;
	json_array_foreach(json_object_get(d, "metrics"), k, m) {
		const char *mk = hr_jstr(m, "metric");
		if (mk && !strncmp(mk, "compute_gflops.", 15) && hr_jnum(m, "datasheet") > 0)
			return 1;
	}
	return 0;
}

static void roofline_plots(struct plotter *pl, const json_t *nodes, const struct hr_render_parts *parts)
{
	const json_t *n, *d;
	size_t i, j, skipped = 0, failed = 0;
	int pass, count = 0;

	for (pass = 0; pass < 2; pass++) {
		json_array_foreach(nodes, i, n) {
			json_array_foreach(json_object_get(n, "devices"), j, d) {
				struct hr_svg svg;
				char subj[256], cap[512];
				int rc;
				if (device_flagged(d) != (pass == 0))
					continue;
				if (!json_array_size(json_object_get(d, "metrics")) &&
				    !json_array_size(json_object_get(d, "points")))
					continue;
				if (count >= pl->max) {
					skipped++;
					continue;
				}
				rc = hr_plot_roofline(hr_jstr(n, "name"), d, &svg);
				if (rc == CH_ERR_USAGE)
					continue;
				if (rc) {
					failed++;
					continue;
				}
				snprintf(subj, sizeof(subj), "%s/%s", hr_jstr(n, "name"), hr_jstr(d, "device"));
				snprintf(cap, sizeof(cap), "Roofline of %s (%s): measured points and roofs (solid)%s. Source: %s",
					 subj, hr_jstr(d, "sku") ? hr_jstr(d, "sku") : hr_jstr(d, "name") ? hr_jstr(d, "name") : "?",
					 datasheet_roofs(d) ? ", datasheet roofs (dashed)" : "; no datasheet roof (no datasheet figure for this device)",
					 hr_jstr(d, "source"));
				figure(pl, "roofline", subj, &svg, cap);
				hr_svg_release(&svg);
				count++;
			}
		}
	}
	if (skipped)
		hr_buf_printf(pl->b, "<p class=\"note\">%zu more device rooflines not drawn (--max-plots %d; flagged devices come first).</p>\n",
			      skipped, pl->max);
	if (failed)
		hr_buf_printf(pl->b, "<p class=\"note\">%zu roofline plots could not be drawn (PLplot error).</p>\n", failed);
	if (parts->left_devices)
		hr_buf_printf(pl->b, "<p class=\"note\">The %zu devices of %zu PASS node%s are not drawn: " HR_RENDER_LEFT_WHY ". Their headline figures are in the PASS nodes table, each device's values in profile.json.</p>\n",
			      parts->left_devices, parts->left_nodes, parts->left_nodes == 1 ? "" : "s");
	else if (!count)
		hr_buf_puts(pl->b, "<p class=\"note\">No roofline results among the inputs.</p>\n");
}

/* Sort key of a group for busbw_plots(): the algorithms of one group from
 * one file (same source, same name) sort next to each other. */
struct gkey {
	const char *source, *name;
	size_t index;
};

static int cmp_gkey(const void *pa, const void *pb)
{
	const struct gkey *a = pa, *b = pb;
	int c;
	if (!a->source || !b->source) /* no source: a group of its own */
		return a->index < b->index ? -1 : a->index > b->index;
	if ((c = strcmp(a->source, b->source)) != 0)
		return c;
	if (!a->name || !b->name)
		c = !a->name ? (b->name ? -1 : 0) : 1;
	else
		c = strcmp(a->name, b->name);
	return c ? c : a->index < b->index ? -1 : a->index > b->index;
}

static int same_gkey(const struct gkey *a, const struct gkey *b)
{
	return a->source && b->source && !strcmp(a->source, b->source) && hr_streq(a->name, b->name);
}

/* busbw of the groups that were not compared (no class: scaling
 * sub-groups, failed or hostless runs), one plot per group and file */
static void busbw_plots(struct plotter *pl, const json_t *groups)
{
	size_t n = json_array_size(groups), i, j, skipped = 0, failed = 0;
	char *done = calloc(n ? n : 1, 1);
	struct gkey *key = calloc(n ? n : 1, sizeof(*key));
	size_t *run = calloc(n ? n : 1, sizeof(*run)); /* index -> first position of its set in key[] */
	int pass, count = 0;
	if (!done || !key || !run) {
		free(done);
		free(key);
		free(run);
		return;
	}
	/* the sets (one group's algorithms from one file), sorted once: linear
	 * in the groups after the sort, for a fleet of thousands of nodes */
	for (i = 0; i < n; i++) {
		const json_t *g = json_array_get(groups, i);
		key[i].source = hr_jstr(g, "source");
		key[i].name = hr_jstr(g, "name");
		key[i].index = i;
	}
	qsort(key, n, sizeof(*key), cmp_gkey);
	for (i = 0; i < n; i++)
		run[key[i].index] = i > 0 && same_gkey(&key[i - 1], &key[i]) ? run[key[i - 1].index] : i;
	for (pass = 0; pass < 2; pass++) {
		for (i = 0; i < n; i++) {
			const json_t *g = json_array_get(groups, i), *x;
			json_t *set;
			int flagged = 0;
			struct hr_svg svg;
			char title[512], cap[1024];
			size_t k;
			int rc;
			if (done[i])
				continue;
			if (hr_jstr(g, "class")) { /* drawn with its like groups */
				done[i] = 1;
				continue;
			}
			/* all algorithms of this group from the same file, in input order */
			set = json_array();
			for (j = run[i]; j < n && (j == run[i] || same_gkey(&key[run[i]], &key[j])); j++) {
				const json_t *h = json_array_get(groups, key[j].index);
				json_array_append(set, (json_t *)h);
				if (hr_rows_group_flagged(h))
					flagged = 1;
			}
			if (flagged != (pass == 0)) {
				json_decref(set);
				continue;
			}
			for (j = run[i]; j < n && (j == run[i] || same_gkey(&key[run[i]], &key[j])); j++)
				done[key[j].index] = 1;
			if (count >= pl->max) {
				skipped++;
				json_decref(set);
				continue;
			}
			snprintf(title, sizeof(title), "%s (%s", hr_jstr(g, "name"), hr_jstr(g, "kind"));
			json_array_foreach(json_object_get(g, "nodes"), k, x) {
				size_t l = strlen(title);
				if (k == 3) {
					snprintf(title + l, sizeof(title) - l, " +%zu", json_array_size(json_object_get(g, "nodes")) - 3);
					break;
				}
				snprintf(title + l, sizeof(title) - l, "%s%s", k ? ", " : ": ", json_string_value(x));
			}
			strncat(title, ")", sizeof(title) - strlen(title) - 1);
			rc = hr_plot_busbw(title, set, &svg);
			json_decref(set);
			if (rc == CH_ERR_USAGE)
				continue;
			if (rc) {
				failed++;
				continue;
			}
			snprintf(cap, sizeof(cap), "busbw against message size, group %s, backend %s. Source: %s",
				 hr_jstr(g, "name"), hr_jstr(g, "backend"), hr_jstr(g, "source"));
			figure(pl, "busbw", hr_jstr(g, "name"), &svg, cap);
			hr_svg_release(&svg);
			count++;
		}
	}
	free(done);
	free(key);
	free(run);
	if (skipped)
		hr_buf_printf(pl->b, "<p class=\"note\">%zu more groups not drawn (--max-plots %d; flagged groups come first).</p>\n",
			      skipped, pl->max);
	if (failed)
		hr_buf_printf(pl->b, "<p class=\"note\">%zu busbw plots could not be drawn (PLplot error).</p>\n", failed);
	if (!count && !pl->busbw_classes)
		hr_buf_puts(pl->b, "<p class=\"note\">No all-reduce sweeps with at least two sizes among the inputs.</p>\n");
}

/* A class of like groups (the groups' "class") and its members. */
struct bclass {
	const char *label;
	json_t *groups;          /* array of the class's groups (borrowed references) */
	unsigned char *flagged;  /* per member */
	size_t nflagged;
};

static int cmp_bclass(const void *a, const void *b)
{
	const struct bclass *x = a, *y = b;
	if ((x->nflagged > 0) != (y->nflagged > 0))
		return x->nflagged > 0 ? -1 : 1;
	return 0;
}

/* The like groups of each class overlaid on one axis with their median and
 * band, the flagged ones highlighted: classes with a flagged group first. */
static void busbw_fleet_plots(struct plotter *pl, const json_t *groups)
{
	json_t *index = json_object(); /* class label -> position in cls */
	struct bclass *cls = NULL;
	size_t ncls = 0, i, skipped = 0, failed = 0;
	const json_t *g;

	if (!index)
		return;
	json_array_foreach(groups, i, g) {
		const char *label = hr_jstr(g, "class");
		const json_t *at;
		struct bclass *c;
		size_t k;
		if (!label)
			continue;
		if ((at = json_object_get(index, label))) {
			k = (size_t)json_integer_value(at);
		} else {
			struct bclass *x = realloc(cls, (ncls + 1) * sizeof(*cls));
			if (!x)
				goto out;
			cls = x;
			k = ncls++;
			memset(&cls[k], 0, sizeof(cls[k]));
			cls[k].label = label;
			cls[k].groups = json_array();
			json_object_set_new(index, label, json_integer((json_int_t)k));
		}
		c = &cls[k];
		json_array_append(c->groups, (json_t *)g);
	}
	for (i = 0; i < ncls; i++) {
		size_t n = json_array_size(cls[i].groups), k;
		cls[i].flagged = calloc(n ? n : 1, 1);
		if (!cls[i].flagged)
			goto out;
		for (k = 0; k < n; k++)
			if (hr_rows_group_flagged(json_array_get(cls[i].groups, k))) {
				cls[i].flagged[k] = 1;
				cls[i].nflagged++;
			}
	}
	if (ncls)
		qsort(cls, ncls, sizeof(*cls), cmp_bclass); /* stable enough: ties keep no order promise */
	for (i = 0; i < ncls; i++) {
		struct hr_svg svg;
		char cap[1024];
		size_t n = json_array_size(cls[i].groups);
		int rc;
		if (pl->busbw_classes >= pl->max) {
			skipped++;
			continue;
		}
		rc = hr_plot_busbw_fleet(cls[i].label, cls[i].groups, cls[i].flagged, &svg);
		if (rc == CH_ERR_USAGE)
			continue;
		if (rc) {
			failed++;
			continue;
		}
		if (cls[i].nflagged)
			snprintf(cap, sizeof(cap), "busbw against message size of %zu like group%s (%s): their median per size, %s%zu flagged group%s highlighted%s.",
				 n, n == 1 ? "" : "s", cls[i].label,
				 n >= 3 ? "the band from their 10th to 90th percentile, " : "",
				 cls[i].nflagged, cls[i].nflagged == 1 ? "" : "s",
				 cls[i].nflagged > 8 ? " (the first 8 labelled)" : " and labelled");
		else
			snprintf(cap, sizeof(cap), "busbw against message size of %zu like group%s (%s): their median per size%s; none flagged.",
				 n, n == 1 ? "" : "s", cls[i].label,
				 n >= 3 ? " and the band from their 10th to 90th percentile" : "");
		figure(pl, "busbw", cls[i].label, &svg, cap);
		hr_svg_release(&svg);
		pl->busbw_classes++;
	}
	if (skipped)
		hr_buf_printf(pl->b, "<p class=\"note\">%zu more classes of like groups not drawn (--max-plots %d; classes with a flagged group come first).</p>\n",
			      skipped, pl->max);
	if (failed)
		hr_buf_printf(pl->b, "<p class=\"note\">%zu busbw plots could not be drawn (PLplot error).</p>\n", failed);
out:
	for (i = 0; i < ncls; i++) {
		json_decref(cls[i].groups);
		free(cls[i].flagged);
	}
	free(cls);
	json_decref(index);
}

static void lateness_plots(struct plotter *pl, const json_t *nodes, const struct hr_render_parts *parts)
{
	const json_t *n;
	size_t i, skipped = 0, failed = 0;
	int pass, count = 0;
	for (pass = 0; pass < 2; pass++) {
		json_array_foreach(nodes, i, n) {
			const json_t *l = json_object_get(n, "loader");
			const char *v = hr_jstr(l, "verdict");
			int flagged = v && strcmp(v, "pass");
			struct hr_svg svg;
			char cap[512];
			int rc;
			if (!json_is_object(l) || flagged != (pass == 0))
				continue;
			if (count >= pl->max) {
				skipped++;
				continue;
			}
			rc = hr_plot_lateness(hr_jstr(n, "name"), l, &svg);
			if (rc == CH_ERR_USAGE)
				continue;
			if (rc) {
				failed++;
				continue;
			}
			snprintf(cap, sizeof(cap), "Feeder lateness per placement on %s (verdict %s). Source: %s",
				 hr_jstr(n, "name"), v ? v : "n/a", hr_jstr(l, "source"));
			figure(pl, "lateness", hr_jstr(n, "name"), &svg, cap);
			hr_svg_release(&svg);
			count++;
		}
	}
	if (skipped)
		hr_buf_printf(pl->b, "<p class=\"note\">%zu more loader plots not drawn (--max-plots %d).</p>\n", skipped, pl->max);
	if (failed)
		hr_buf_printf(pl->b, "<p class=\"note\">%zu loader plots could not be drawn (PLplot error).</p>\n", failed);
	if (parts->left_loaders)
		hr_buf_printf(pl->b, "<p class=\"note\">The loader results of %zu PASS node%s are not drawn: " HR_RENDER_LEFT_WHY ". Their loader verdicts are in the PASS nodes table and profile.json.</p>\n",
			      parts->left_loaders, parts->left_loaders == 1 ? "" : "s");
	else if (!count)
		hr_buf_puts(pl->b, "<p class=\"note\">No loader_contention results among the inputs.</p>\n");
}

static void distribution_plots(struct plotter *pl, const json_t *p)
{
	const json_t *th = json_object_get(json_object_get(p, "expectations"), "thresholds"), *d;
	size_t i, skipped = 0, failed = 0;
	int count = 0;
	json_array_foreach(json_object_get(p, "distributions"), i, d) {
		struct hr_svg svg;
		char cap[512];
		int rc;
		if (count >= pl->max) {
			skipped++;
			continue;
		}
		rc = hr_plot_distribution(d, hr_jnum(th, "warn_pct_below"), hr_jnum(th, "fail_pct_below"), &svg);
		if (rc == CH_ERR_USAGE)
			continue;
		if (rc) {
			failed++;
			continue;
		}
		snprintf(cap, sizeof(cap), "Fleet distribution: %s; median %.4g %s, MAD %.3g; outliers marked x and labelled.",
			 hr_jstr(d, "metric"), hr_jnum(d, "median"), hr_jstr(d, "unit"), hr_jnum(d, "mad"));
		figure(pl, "distribution", hr_jstr(d, "metric"), &svg, cap);
		hr_svg_release(&svg);
		count++;
	}
	if (skipped)
		hr_buf_printf(pl->b, "<p class=\"note\">%zu more distributions not drawn (--max-plots %d).</p>\n", skipped, pl->max);
	if (failed)
		hr_buf_printf(pl->b, "<p class=\"note\">%zu distribution plots could not be drawn (PLplot error).</p>\n", failed);
	if (!count)
		hr_buf_puts(pl->b, "<p class=\"note\">No metric with at least two like values to compare across the fleet.</p>\n");
}

/* ------------------------------------------------------------ tables */

/* the suffixes of the number columns of the device and group tables */
static const char *const device_units[] = { "%", "%", "%", "", "%" };
static const char *const group_units[] = { "", "%", "", "" };

/* a reason or a finding: its level, text and suggested action */
static void reason_html(struct hr_buf *b, const struct hr_reason_row *r)
{
	hr_buf_printf(b, "<span class=\"%s\">%s</span> ", r->level, r->level);
	esc(b, r->text);
	if (r->action) {
		hr_buf_puts(b, "<div class=\"act\">action: ");
		esc(b, r->action);
		hr_buf_puts(b, "</div>");
	}
}

static void html_head(const json_t *p, struct hr_buf *b)
{
	const json_t *sum = json_object_get(p, "summary"), *in = json_object_get(p, "inputs"), *r;
	const json_t *x = json_object_get(sum, "drain_candidates");
	size_t j;

	hr_buf_printf(b, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		      "<meta name=\"viewport\" content=\"width=device-width\">"
		      "<title>Cluster health report %s</title><style>%s</style></head>\n<body>\n",
		      hr_jstr(p, "generated_utc"), css);
	hr_buf_printf(b, "<h1 id=\"verdict\">Cluster health report: <span class=\"%s\">%s</span></h1>\n",
		      hr_jstr(sum, "verdict"), hr_jstr(sum, "verdict"));
	hr_buf_printf(b, "<p class=\"meta\">Generated %s by health_report %s (git %s). %lld nodes: "
		      "<span class=\"FAIL\">%lld FAIL</span>, <span class=\"WARN\">%lld WARN</span>, "
		      "<span class=\"PASS\">%lld PASS</span>, %lld not judged (checks: %lld judged, %lld not judged, %lld of them noisy); %lld devices; %lld all-reduce groups; %lld input files (%lld read).</p>\n",
		      hr_jstr(p, "generated_utc"), hr_jstr(p, "version"), hr_jstr(p, "git_rev"),
		      hr_jint(sum, "nodes", 0), hr_jint(sum, "fail", 0), hr_jint(sum, "warn", 0),
		      hr_jint(sum, "pass", 0), hr_jint(sum, "not_judged", 0), hr_jint(sum, "checks_judged", 0),
		      hr_jint(sum, "checks_not_judged", 0), hr_jint(sum, "checks_noisy", 0), hr_jint(sum, "devices", 0), hr_jint(sum, "groups", 0),
		      hr_jint(in, "files", 0), hr_jint(in, "files_read", 0));
	/* a one-night report: what a history would add (summary.history) */
	if (hr_jstr(sum, "history")) {
		hr_buf_puts(b, "<p class=\"meta\" id=\"history-note\">");
		esc(b, hr_jstr(sum, "history"));
		hr_buf_puts(b, "</p>\n");
	}
	if (json_array_size(x)) {
		hr_buf_puts(b, "<p><b class=\"FAIL\">Drain candidates:</b> ");
		json_array_foreach(x, j, r) {
			hr_buf_puts(b, j ? ", <code>" : "<code>");
			esc(b, json_string_value(r));
			hr_buf_puts(b, "</code>");
		}
		hr_buf_puts(b, "</p>\n");
	}
}

static void html_cost(const json_t *c, struct hr_buf *b)
{
	char t1[48];
	hr_buf_puts(b, "<h2 id=\"cost\">What this measurement run cost</h2>\n<table>");
	hr_buf_printf(b, "<tr><th>wall time (first start to last end)</th><td>%s</td></tr>",
		      fmt_sec(hr_jnum(c, "wall_span_sec"), t1, sizeof(t1)));
	hr_buf_printf(b, "<tr><th>sum of run durations</th><td>%s over %lld runs (%lld without timestamps not counted)</td></tr>",
		      fmt_sec(hr_jnum(c, "run_sec_total"), t1, sizeof(t1)), hr_jint(c, "runs_counted", 0),
		      hr_jint(c, "runs_without_time", 0));
	hr_buf_puts(b, "<tr><th>IT energy</th><td>");
	hr_rows_num(b, hr_jnum(c, "it_energy_j") / 3.6e6 * 1000, " Wh");
	hr_buf_puts(b, " (");
	esc(b, hr_jstr(c, "energy_source"));
	if (hr_jstr(c, "energy_source") && strcmp(hr_jstr(c, "energy_source"), "measured")) {
		hr_buf_puts(b, ": ");
		esc(b, hr_jstr(c, "estimate_basis"));
	}
	hr_buf_puts(b, ")</td></tr><tr><th>facility energy</th><td>");
	hr_rows_num(b, hr_jnum(c, "facility_energy_kwh") * 1000, " Wh");
	hr_buf_printf(b, " at PUE %.2f (", hr_jnum(c, "pue"));
	esc(b, hr_jstr(json_object_get(c, "sources"), "pue"));
	hr_buf_puts(b, ")</td></tr><tr><th>cost</th><td>");
	hr_rows_num(b, hr_jnum(c, "cost"), " ");
	esc(b, hr_jstr(c, "currency"));
	hr_buf_printf(b, " at %.4g per kWh (", hr_jnum(c, "price_per_kwh"));
	esc(b, hr_jstr(json_object_get(c, "sources"), "price_per_kwh"));
	hr_buf_puts(b, ")</td></tr><tr><th>CO2e</th><td>");
	hr_rows_num(b, hr_jnum(c, "co2e_kg") * 1000, " g");
	hr_buf_printf(b, " at %.0f g/kWh (", hr_jnum(c, "carbon_g_per_kwh"));
	esc(b, hr_jstr(json_object_get(c, "sources"), "carbon_g_per_kwh"));
	hr_buf_puts(b, ")</td></tr></table>\n");
}

json_t *hr_html_config_diffs(const json_t *drift)
{
	json_t *m = json_object();
	const json_t *r, *v;
	size_t i, j;
	struct hr_buf t = { 0 };
	if (!m)
		return NULL;
	/* node name -> its configuration keys that differ from the fleet's
	 * majority ("key: value; ..."), from the profile's drift */
	json_array_foreach(drift, i, r)
		json_array_foreach(json_object_get(r, "nodes"), j, v) {
			const char *node = hr_jstr(v, "node"), *had;
			if (!node)
				continue;
			had = hr_jstr(m, node);
			t.len = 0;
			hr_buf_printf(&t, "%s%s%s: %s", had ? had : "", had ? "; " : "", hr_jstr(r, "key"),
				      hr_jstr(v, "value") ? hr_jstr(v, "value") : "(none)");
			if (!t.oom)
				json_object_set_new(m, node, json_string(t.s));
		}
	hr_buf_release(&t);
	return m;
}

/* Is reason @j of @nd said already: the same level, text and action as an
 * earlier reason, or an informational line without an action whose text
 * the node's not-judged reason holds (an unavailable backend's sentence is
 * both)? Shown once. */
static int reason_shown(const struct hr_node_row *nd, size_t j)
{
	const struct hr_reason_row *r = &nd->reasons[j];
	size_t k;
	if (!r->text)
		return 0;
	if (!r->action && hr_streq(r->level, "info") && nd->not_judged_reason &&
	    strstr(nd->not_judged_reason, r->text))
		return 1;
	for (k = 0; k < j; k++)
		if (hr_streq(nd->reasons[k].level, r->level) && hr_streq(nd->reasons[k].text, r->text) &&
		    ((!nd->reasons[k].action && !r->action) || hr_streq(nd->reasons[k].action, r->action)))
			return 1;
	return 0;
}

/* The nodes a rule flagged (WARN, FAIL) or could not judge, in full: their
 * reasons and actions, their configuration where it differs from the
 * fleet's majority, and all of it folded. */
static void html_flagged_nodes(const struct hr_rows *rows, const json_t *diffs, struct hr_buf *b)
{
	size_t i, j, n = 0;
	int q;
	for (i = 0; i < rows->nnodes; i++)
		n += !hr_streq(rows->nodes[i].verdict, "PASS");
	hr_buf_printf(b, "<h2 id=\"nodes\">Flagged nodes, worst first (%zu)</h2>\n", n);
	if (!n) {
		hr_buf_puts(b, "<p>No node was flagged: every node is PASS (the table below).</p>\n");
		return;
	}
	hr_buf_puts(b, "<table id=\"flagged\"><tr><th>verdict</th><th>node</th><th>reasons and suggested actions</th><th>configuration</th></tr>\n");
	for (i = 0; i < rows->nnodes; i++) {
		const struct hr_node_row *nd = &rows->nodes[i];
		const char *d;
		if (hr_streq(nd->verdict, "PASS"))
			continue;
		hr_buf_printf(b, "<tr><td class=\"%s\">%s</td><td>", nd->verdict, nd->verdict);
		esc(b, nd->name);
		hr_buf_puts(b, "</td><td>");
		if (nd->not_judged_reason) {
			hr_buf_puts(b, "<div><span class=\"info\">not judged</span> ");
			esc(b, nd->not_judged_reason);
			hr_buf_puts(b, "</div>");
		}
		for (j = 0; j < nd->nreasons; j++) {
			if (reason_shown(nd, j))
				continue;
			hr_buf_puts(b, "<div>");
			reason_html(b, &nd->reasons[j]);
			hr_buf_puts(b, "</div>");
		}
		hr_buf_puts(b, "</td><td>");
		d = hr_jstr(diffs, nd->name);
		if (d) {
			hr_buf_puts(b, "differs from the fleet's majority: ");
			esc(b, d);
			hr_buf_puts(b, "<br>");
		} else {
			hr_buf_puts(b, "same as the fleet's majority<br>");
		}
		if (nd->not_like_for_like)
			hr_buf_puts(b, "<b class=\"warn\">not like for like</b>");
		hr_buf_puts(b, "<details><summary>this node's configuration</summary>");
		for (q = 0; q < HR_ROWS_CONFIG_KEYS; q++)
			if (nd->config[q]) {
				hr_buf_printf(b, "%s: ", hr_rows_config_keys[q]);
				esc(b, nd->config[q]);
				hr_buf_puts(b, "<br>");
			}
		hr_buf_puts(b, "</details></td></tr>\n");
	}
	hr_buf_puts(b, "</table>\n");
}

/* A headline figure of a node in the PASS table: [value, "text"], the text
 * the value and its share of the expectation (else of the fleet median);
 * [null, "n/a"] without one. */
static json_t *headline_cell(const json_t *h)
{
	double v = hr_jnum(h, "value"), e = hr_jnum(h, "expected"), m = hr_jnum(h, "fleet_median");
	char num[32];
	struct hr_buf t = { 0 };
	json_t *c;
	if (!h || json_is_null(h) || isnan(v))
		return json_pack("[n,s]", "n/a");
	if (hr_streq(hr_jstr(h, "unit"), "GFLOP/s") && v >= 10000)
		hr_buf_printf(&t, "%s TFLOP/s", hr_fmt_num(v / 1000, num, sizeof(num)));
	else
		hr_buf_printf(&t, "%s %s", hr_fmt_num(v, num, sizeof(num)), hr_jstr(h, "unit") ? hr_jstr(h, "unit") : "");
	if (e > 0)
		hr_buf_printf(&t, " (%.0f%% exp.)", 100 * v / e);
	else if (m > 0)
		hr_buf_printf(&t, " (%.0f%% med.)", 100 * v / m);
	if (json_is_false(json_object_get(h, "judged")))
		hr_buf_puts(&t, " nj");
	c = t.oom ? NULL : json_pack("[f,s]", v, t.s ? t.s : "");
	hr_buf_release(&t);
	return c;
}

/* A PASS node as one row of the PASS table (html_healthy), a JSON array
 * appended to the table's data (rows separated by commas): its name, its
 * headline figures against their expectation, the loader verdict, the
 * checks judged, and its configuration only where it differs from the
 * fleet's majority. A cell is a string, or [sort value, text]. */
void hr_html_pass_row(struct hr_buf *b, const json_t *n, const json_t *diffs)
{
	const json_t *hl = json_object_get(n, "headline");
	const char *d = hr_jstr(diffs, hr_jstr(n, "name"));
	json_t *row = json_pack("[s,o,o,o,o,s,[I,s],s]", hr_jstr(n, "name") ? hr_jstr(n, "name") : "?",
				headline_cell(json_object_get(hl, "memory")), headline_cell(json_object_get(hl, "compute")),
				headline_cell(json_object_get(hl, "intra_node_busbw")),
				headline_cell(json_object_get(hl, "inter_node_busbw")),
				hr_jstr(hl, "loader") ? hr_jstr(hl, "loader") : "-", (json_int_t)hr_jint(n, "checks_judged", 0),
				"", d ? d : "");
	char *t, *s, *lt;
	if (!row) {
		b->oom = 1;
		return;
	}
	/* the checks judged as text too */
	json_array_set_new(json_array_get(row, 6), 1, json_sprintf("%lld", hr_jint(n, "checks_judged", 0)));
	/* JSON_ESCAPE_SLASH: no "</script>" in the data */
	t = json_dumps(row, JSON_COMPACT | JSON_ESCAPE_SLASH | JSON_REAL_PRECISION(6));
	json_decref(row);
	if (!t) {
		b->oom = 1;
		return;
	}
	hr_buf_puts(b, b->len ? ",\n" : "");
	/* and no "<" at all: "<!--" then "<script" in a name would put the
	 * HTML tokenizer in the script's double-escaped state, where the
	 * element's own "</script>" no longer ends it ("<" appears only in
	 * strings, where JSON reads \u003c as the same character) */
	for (s = t; *s; s = lt + 1) {
		lt = strchr(s, '<');
		hr_buf_append(b, s, lt ? (size_t)(lt - s) : strlen(s));
		if (!lt)
			break;
		hr_buf_puts(b, "\\u003c");
	}
	free(t);
}

/* Every PASS node as one row of a compact table, sortable by any column and
 * filterable: the rows are data (rendered node by node: hr_html_pass_row)
 * that the page's script shows 200 at a time, so that a fleet of thousands
 * of nodes opens fast. */
static void html_healthy(const struct hr_render_parts *parts, struct hr_buf *b)
{
	hr_buf_printf(b, "<h2 id=\"healthy\">PASS nodes (<span id=\"healthy-count\">%zu</span>)</h2>\n", parts->npass);
	if (!parts->npass) {
		hr_buf_puts(b, "<p>No node passed.</p>\n");
		return;
	}
	hr_buf_puts(b, "<p>Each node's headline figures: its worst GPU's memory and compute roofs, its worst intra- and inter-node busbw, as % of the expectation (exp.) or of the fleet median (med.); nj: not judged. Configuration only where it differs from the fleet's majority (profile.json has each node's). Click a column to sort; type to filter; 200 rows are shown at a time.</p>\n"
		    "<noscript><p class=\"note\">The PASS nodes' table is drawn by the page's script: profile.json lists them.</p></noscript>\n"
		    "<input class=\"filter\" type=\"search\" placeholder=\"filter nodes\" data-table=\"healthy-table\" data-count=\"healthy-count\" oninput=\"hrFilter(this)\">\n"
		    "<table id=\"healthy-table\" class=\"sortable compact\"><thead><tr>"
		    "<th onclick=\"hrSort(this)\">node</th><th onclick=\"hrSort(this)\">memory</th><th onclick=\"hrSort(this)\">compute</th>"
		    "<th onclick=\"hrSort(this)\">intra-node busbw</th><th onclick=\"hrSort(this)\">inter-node busbw</th>"
		    "<th onclick=\"hrSort(this)\">loader</th><th onclick=\"hrSort(this)\">checks judged</th>"
		    "<th onclick=\"hrSort(this)\">configuration</th></tr></thead><tbody></tbody></table>\n"
		    "<p><button type=\"button\" id=\"healthy-table-more\" onclick=\"hrMore('healthy-table')\">show 200 more</button></p>\n"
		    "<script type=\"application/json\" id=\"healthy-table-data\">[");
	hr_buf_append(b, parts->html_pass.s ? parts->html_pass.s : "", parts->html_pass.len);
	hr_buf_puts(b, "]</script>\n");
}

static void html_findings_drift(const struct hr_rows *rows, struct hr_buf *b)
{
	size_t j;
	if (rows->nfindings) {
		hr_buf_puts(b, "<h2 id=\"findings\">Fleet findings (not tied to a node)</h2>\n<ul>");
		for (j = 0; j < rows->nfindings; j++) {
			hr_buf_puts(b, "<li>");
			reason_html(b, &rows->findings[j]);
			hr_buf_puts(b, "</li>");
		}
		hr_buf_puts(b, "</ul>\n");
	}
	hr_buf_puts(b, "<h2 id=\"drift\">Configuration drift</h2>\n");
	if (!rows->ndrift) {
		hr_buf_puts(b, "<p>Every node that reported them has the fleet's GPU model, driver, CUDA, NCCL, MPI and clocks.</p>\n");
		return;
	}
	hr_buf_puts(b, "<p>Results across these nodes are not like for like.</p><table><tr><th>key</th><th>fleet majority</th><th>differing nodes</th></tr>\n");
	for (j = 0; j < rows->ndrift; j++) {
		const struct hr_drift_row *r = &rows->drift[j];
		hr_buf_puts(b, "<tr><td>");
		esc(b, r->key);
		hr_buf_puts(b, "</td><td>");
		esc(b, r->majority ? r->majority : "(no majority)");
		hr_buf_puts(b, "</td><td>");
		hr_rows_drift_values(b, r, "<br>", ": <code>", "</code>", hr_buf_html);
		hr_buf_puts(b, "</td></tr>\n");
	}
	hr_buf_puts(b, "</table>\n");
}

static void html_devices(const struct hr_rows *rows, const struct hr_render_parts *parts, struct hr_buf *b)
{
	int dev_all = rows->metrics <= HR_HTML_MAX_ROWS;
	size_t i;
	hr_buf_puts(b, "<h2 id=\"devices\">Devices</h2>\n");
	if (!dev_all)
		hr_buf_printf(b, "<p class=\"note\">More than %d device metrics: only the flagged ones are listed (all are in profile.json%s).</p>\n", HR_HTML_MAX_ROWS,
			      parts->kept_of_bounded ? ": a PASS node's values, every figure with --detail all" : "");
	if (parts->left_values)
		hr_buf_printf(b, "<p class=\"note\">The %zu device metrics of %zu PASS node%s are not listed: " HR_RENDER_LEFT_WHY ". Their values are in profile.json.</p>\n",
			      parts->left_values, parts->left_nodes, parts->left_nodes == 1 ? "" : "s");
	hr_buf_puts(b, "<table><tr><th>node</th><th>device</th><th>model</th><th>metric</th><th>measured</th><th>% of datasheet</th><th>% of expected</th><th>% of fleet median</th><th>robust z</th><th>% of node median</th><th>level</th></tr>\n");
	for (i = 0; i < rows->ndevices; i++) {
		const struct hr_device_row *d = &rows->devices[i];
		if (d->is_status || (!dev_all && !d->flagged))
			continue;
		hr_buf_puts(b, "<tr><td>");
		esc(b, d->node);
		hr_buf_puts(b, "</td><td>");
		esc(b, d->device);
		hr_buf_puts(b, "</td><td>");
		esc(b, d->sku ? d->sku : d->name);
		hr_buf_puts(b, "</td><td>");
		esc(b, d->metric);
		hr_buf_puts(b, "</td><td>");
		hr_rows_num(b, d->value, " ");
		esc(b, d->unit);
		hr_buf_puts(b, "</td><td>");
		{
			const double v[] = { d->pct_of_datasheet, d->pct_of_expected, d->pct_of_fleet_median, d->z,
					     d->pct_of_node_median };
			hr_rows_nums(b, "</td><td>", 5, v, device_units);
		}
		hr_buf_printf(b, "</td><td class=\"%s\">%s</td></tr>\n", d->level ? d->level : "",
			      d->level_text ? d->level_text : "");
	}
	hr_buf_puts(b, "</table>\n");
}

static void html_groups(const struct hr_rows *rows, struct hr_buf *b)
{
	int all = rows->ngroups <= HR_HTML_MAX_ROWS;
	size_t j;
	hr_buf_puts(b, "<h2 id=\"groups\">All-reduce groups</h2>\n<p>busbw at the largest size, out-of-place. Average = mean of every busbw cell, as nccl-tests' \"Avg bus bandwidth\"; the log's own value beside it.</p>\n");
	if (!all)
		hr_buf_printf(b, "<p class=\"note\">More than %d groups: only the %zu flagged or failed are listed (all are in profile.json; the plots above compare them all).</p>\n",
			      HR_HTML_MAX_ROWS, rows->groups_flagged);
	hr_buf_puts(b, ""
		    "<table><tr><th>group</th><th>kind</th><th>nodes</th><th>collective</th><th>algo</th><th>ranks</th><th>largest size</th><th>busbw GB/s</th><th>% of like median</th><th>avg busbw</th><th>log's avg</th><th>level</th><th>source</th></tr>\n");
	for (j = 0; j < rows->ngroups; j++) {
		const struct hr_group_row *d = &rows->groups[j];
		char sz[32];
		if (!all && !d->flagged)
			continue;
		hr_buf_puts(b, "<tr><td>");
		esc(b, d->name);
		hr_buf_puts(b, "</td><td>");
		esc(b, d->kind);
		hr_buf_puts(b, "</td><td>");
		hr_rows_names(b, d->nodes, hr_buf_html);
		hr_buf_puts(b, "</td><td>");
		esc(b, d->collective);
		hr_buf_puts(b, "</td><td>");
		esc(b, d->algo);
		hr_buf_printf(b, "</td><td>%lld</td><td>%s</td><td>", d->nranks,
			      hr_fmt_bytes(d->large_msg_bytes, sz, sizeof(sz)));
		{
			const double v[] = { d->large_msg_busbw_gbps, d->pct_of_fleet_median, d->avg_busbw_gbps,
					     d->reported_avg_busbw_gbps };
			hr_rows_nums(b, "</td><td>", 4, v, group_units);
		}
		hr_buf_printf(b, "</td><td class=\"%s\">%s</td><td>", d->level ? d->level : "", d->level_text);
		esc(b, d->source);
		if (d->failure) {
			hr_buf_puts(b, "<div class=\"act\">");
			esc(b, d->failure);
			hr_buf_puts(b, "</div>");
		}
		hr_buf_puts(b, "</td></tr>\n");
	}
	hr_buf_puts(b, "</table>\n");
}

void hr_html_ckpt(struct hr_buf *b, const struct hr_ckpt_row *r)
{
	hr_buf_printf(b, "<tr class=\"%s\"><td>", r->flagged ? r->level : "");
	hr_rows_ckpt_cells(b, r, "</td><td>", hr_buf_html);
	hr_buf_puts(b, "</td></tr>\n");
}

static void html_checkpoint(const struct hr_render_parts *parts, struct hr_buf *b)
{
	size_t j;
	if (!parts->nckpt)
		return;
	hr_buf_puts(b, "<h2 id=\"checkpoint\">Checkpoint writes (checkpoint_io, synchronous)</h2>\n<p>Per node and mount, its latest result: median over the node's ranks, against the median of the other nodes on the same mount.</p>\n<table><tr>");
	for (j = 0; j < HR_ROWS_CKPT_COLS; j++)
		hr_buf_printf(b, "<th>%s</th>", hr_rows_ckpt_cols[j]);
	hr_buf_puts(b, "</tr>\n");
	hr_buf_append(b, parts->html_ckpt.s ? parts->html_ckpt.s : "", parts->html_ckpt.len);
	hr_buf_puts(b, "</table>\n");
}

static void html_inputs(const json_t *in, const struct hr_rows *rows, struct hr_buf *b)
{
	size_t j;
	hr_buf_printf(b, "<h2 id=\"inputs\">Inputs</h2>\n<p>%lld files, %lld read, %lld ignored (not inputs: health_report's own outputs, allreduce_bw's stdout, other files); %lld skipped, %lld truncated, %lld notes. The report was produced without the skipped parts.</p>\n",
		      hr_jint(in, "files", 0), hr_jint(in, "files_read", 0), hr_jint(in, "files_ignored", 0),
		      hr_jint(in, "skipped", 0), hr_jint(in, "truncated", 0), hr_jint(in, "notes", 0));
	if (!rows->nissues)
		return;
	hr_buf_puts(b, "<ul>");
	for (j = 0; j < rows->nissues; j++) {
		const struct hr_issue_row *r = &rows->issues[j];
		hr_buf_puts(b, "<li><code>");
		hr_rows_where(b, r, hr_buf_html);
		hr_buf_printf(b, "</code> <span class=\"%s\">%s</span>: ",
			      !strcmp(r->kind, "skipped") ? "warn" : "", r->kind);
		esc(b, r->message);
		hr_buf_puts(b, "</li>");
	}
	hr_buf_puts(b, "</ul>\n");
}

static void html_expectations(const json_t *x, struct hr_buf *b)
{
	const json_t *th = json_object_get(x, "thresholds"), *d;
	size_t j;
	hr_buf_printf(b, "<h2 id=\"expectations\">How to read it: expectations and thresholds</h2>\n"
		      "<p>Two kinds of expectation are applied and both are shown. <b>Absolute</b>: per GPU model, datasheet peak x %.2f (memory) and x %.2f (compute)",
		      hr_jnum(x, "memory_fraction"), hr_jnum(x, "compute_fraction"));
	if (hr_jstr(x, "file")) {
		hr_buf_puts(b, ", overridden by <code>");
		esc(b, hr_jstr(x, "file"));
		hr_buf_puts(b, "</code>");
	}
	hr_buf_printf(b, "; WARN below %.2f and FAIL below %.2f of it (nccl-tests' 0.9x gate; DCGM diag's 0.75x). "
		      "<b>Fleet-relative</b>: robust z = 0.6745 (x - median) / MAD among like devices or groups (same model, size, algorithm, rank count); "
		      "an outlier (z &lt;= -%.1f, Iglewicz and Hoaglin) is WARN when %.0f%% and FAIL when %.0f%% below the median; at least %lld like values are needed. "
		      "Intra-node busbw at or below %.0f GB/s on an NVLink (SXM) node is PCIe-class: FAIL.</p>\n",
		      hr_jnum(th, "warn_ratio"), hr_jnum(th, "fail_ratio"), hr_jnum(th, "z_outlier"),
		      hr_jnum(th, "warn_pct_below"), hr_jnum(th, "fail_pct_below"),
		      hr_jint(th, "min_fleet", 3), hr_jnum(th, "pcie_class_gbps"));
	hr_buf_puts(b, "<table><tr><th>model</th><th>memory GB/s</th><th>compute GFLOP/s</th><th>intra-node busbw</th><th>source</th></tr>\n");
	json_array_foreach(json_object_get(x, "skus"), j, d) {
		const char *key;
		json_t *v;
		hr_buf_puts(b, "<tr><td>");
		esc(b, hr_jstr(d, "sku"));
		hr_buf_puts(b, "</td><td>");
		hr_rows_num(b, hr_jnum(d, "memory_gbps"), "");
		hr_buf_puts(b, "</td><td>");
		json_object_foreach((json_t *)json_object_get(d, "compute_gflops"), key, v) {
			esc(b, key);
			hr_buf_puts(b, " ");
			hr_rows_num(b, json_number_value(v), "<br>");
		}
		hr_buf_puts(b, "</td><td>");
		if (!isnan(hr_jnum(d, "intra_node_busbw_gbps"))) {
			hr_rows_num(b, hr_jnum(d, "intra_node_busbw_gbps"), "");
			hr_buf_printf(b, " (%lld GPUs)", hr_jint(d, "intra_node_nranks", 0));
		}
		hr_buf_puts(b, "</td><td>");
		esc(b, hr_jstr(d, "source"));
		hr_buf_puts(b, "</td></tr>\n");
	}
	hr_buf_puts(b, "</table>\n");
}

int hr_html_render(const json_t *p, int max_plots, struct hr_buf *b, int *nplots,
		   const struct hr_render_parts *parts, const json_t *diffs)
{
	const json_t *nodes = json_object_get(p, "nodes");
	struct plotter pl = { b, 0, max_plots > 0 ? max_plots : 1, 0 };
	struct hr_rows rows;

	if (hr_rows_build(p, &rows)) {
		hr_rows_free(&rows);
		return CH_ERR_RUNTIME;
	}
	/* the first screen: the fleet's verdict, then the flagged nodes with
	 * their actions; the run's cost further down, beside its inputs */
	html_head(p, b);
	html_flagged_nodes(&rows, diffs, b);
	html_healthy(parts, b);
	html_findings_drift(&rows, b);

	hr_buf_puts(b, "<h2 id=\"roofline\">Roofline per device</h2>\n");
	roofline_plots(&pl, nodes, parts);
	hr_buf_puts(b, "<h2 id=\"busbw\">busbw against message size: like groups overlaid</h2>\n");
	busbw_fleet_plots(&pl, json_object_get(p, "groups"));
	busbw_plots(&pl, json_object_get(p, "groups"));
	hr_buf_puts(b, "<h2 id=\"loader\">Feeder lateness per placement</h2>\n");
	lateness_plots(&pl, nodes, parts);
	hr_buf_puts(b, "<h2 id=\"fleet\">Fleet distribution of each headline metric</h2>\n");
	distribution_plots(&pl, p);
	hr_render_power_html(p, b, &pl.drawn);

	html_devices(&rows, parts, b);
	html_groups(&rows, b);
	html_checkpoint(parts, b);
	steps_section(&pl, json_object_get(p, "steps"));
	html_cost(json_object_get(p, "run_cost"), b);
	html_inputs(json_object_get(p, "inputs"), &rows, b);
	html_expectations(json_object_get(p, "expectations"), b);
	hr_buf_printf(b, "<script>%s%s</script>\n</body></html>\n", table_script, script);
	hr_rows_free(&rows);
	if (nplots)
		*nplots = pl.drawn;
	return b->oom ? CH_ERR_RUNTIME : 0;
}
