/*
 * hr_stream.c - the report's outputs rendered node by node (hr_render.h:
 * hr_render_begin(), hr_render_node(), hr_render_end()), and the whole-
 * profile renderers on top of them.
 */
#include "report/render/hr_render.h"
#include "report/render/hr_render_int.h"
#include "report/render/hr_rows.h"
#include "report/judge/hr_checkpoint.h"
#include "report/judge/hr_inventory.h"
#include "base/ch_common.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct hr_render {
	struct hr_render_opts o;
	json_t *fleet;     /* the profile but its nodes: head, then tail */
	json_t *kept;      /* the nodes of full detail (every node with --detail all) */
	json_t *diffs;     /* node -> configuration differing from the majority */
	struct hr_render_parts parts;
	FILE *term;        /* the terminal's node lines (memory stream) */
	char *term_s;
	size_t term_n, shown_pass;
	int term_ckpt_header;
	size_t nprom;      /* sections of health.prom rendered per node */
	int err;
};

struct hr_render *hr_render_begin(const json_t *head, const struct hr_render_opts *o)
{
	struct hr_render *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->o = *o;
	r->fleet = json_deep_copy(head);
	r->kept = json_array();
	r->diffs = hr_html_config_diffs(json_object_get(head, "drift"));
	r->nprom = HR_PROM_NODE_FAMILIES + hr_inventory_prom_sections();
	if (o->terminal)
		r->term = open_memstream(&r->term_s, &r->term_n);
	if (!r->fleet || !r->kept || !r->diffs || (o->terminal && !r->term) || r->nprom > HR_PROM_MAX_SECTIONS) {
		hr_render_free(r);
		return NULL;
	}
	json_object_del(r->fleet, "nodes");
	return r;
}

/* a node of full detail: one whose entry says nothing of "detail" */
static int full_detail(const json_t *n)
{
	return !json_object_get(n, "detail");
}

/* A node of bounded detail not kept: what report.md and report.html leave
 * out of it (its devices with values, the values, its loader). */
static void count_left(struct hr_render_parts *parts, const json_t *node)
{
	const json_t *d;
	size_t j;
	parts->left_nodes++;
	json_array_foreach(json_object_get(node, "devices"), j, d) {
		size_t nv = json_object_size(json_object_get(d, "values"));
		parts->left_devices += nv > 0;
		parts->left_values += nv;
	}
	parts->left_loaders += json_is_object(json_object_get(node, "loader"));
}

int hr_render_node(struct hr_render *r, const json_t *node, const json_t *full)
{
	json_t *one = json_pack("{s:[O]}", "nodes", node);
	struct hr_rows rows;
	struct hr_buf b = { 0 };
	size_t k, i;

	if (!one)
		return CH_ERR_RUNTIME;
	memset(&rows, 0, sizeof(rows));
	if (hr_rows_build(one, &rows)) {
		r->err = 1;
		goto out;
	}
	if (r->o.terminal) {
		hr_term_node(r->term, node, r->o.color, &r->shown_pass, &r->parts.more_pass);
		{
			/* the checkpoint table's rows into their own stream */
			char *t = NULL;
			size_t tn = 0;
			FILE *f = open_memstream(&t, &tn);
			if (!f) {
				r->err = 1;
			} else {
				hr_ckpt_render_terminal_node(node, f, &r->term_ckpt_header);
				fclose(f);
				hr_buf_append(&r->parts.term_ckpt, t ? t : "", tn);
				free(t);
			}
		}
	}
	if (r->o.md) {
		for (i = 0; i < rows.nnodes; i++)
			hr_md_node(&r->parts.md_nodes, &rows.nodes[i]);
		for (i = 0; i < rows.nckpt; i++)
			hr_md_ckpt(&r->parts.md_ckpt, &rows.ckpt[i]);
	}
	if (r->o.html) {
		if (hr_streq(hr_jstr(node, "verdict"), "PASS")) {
			hr_html_pass_row(&r->parts.html_pass, node, r->diffs);
			r->parts.npass++;
		}
		for (i = 0; i < rows.nckpt; i++)
			hr_html_ckpt(&r->parts.html_ckpt, &rows.ckpt[i]);
	}
	r->parts.nckpt += rows.nckpt;
	if (r->o.prom)
		for (k = 0; k < r->nprom && !r->err; k++) {
			if (k < HR_PROM_NODE_FAMILIES)
				hr_prom_node(k, &rows, &b);
			else
				hr_inventory_prom_node(node, k - HR_PROM_NODE_FAMILIES, &b);
			if (hr_spill_add(&r->parts.prom[k], &b))
				r->err = 1;
		}
	/* what needs more than one node at a time (tables with a row limit,
	 * plots flagged first, details) reads the nodes of full detail at
	 * the end (a bounded node's full entry where handed); a node of
	 * bounded detail without it is counted as left out */
	if (full_detail(node) || full) {
		if (json_array_append(r->kept, (json_t *)(full ? full : node)))
			r->err = 1;
		r->parts.kept_of_bounded += full != NULL;
	} else {
		count_left(&r->parts, node);
	}
	if (r->parts.md_nodes.oom || r->parts.md_ckpt.oom || r->parts.html_pass.oom || r->parts.html_ckpt.oom ||
	    r->parts.term_ckpt.oom)
		r->err = 1;
out:
	hr_rows_free(&rows);
	hr_buf_release(&b);
	json_decref(one);
	return r->err ? CH_ERR_RUNTIME : 0;
}

int hr_render_end(struct hr_render *r, const json_t *tail, const struct hr_render_out *out, int *nplots)
{
	struct hr_buf b = { 0 };
	int rc = 0;

	if (nplots)
		*nplots = 0;
	if (r->err || json_object_update(r->fleet, (json_t *)tail) ||
	    json_object_set(r->fleet, "nodes", r->kept))
		return CH_ERR_RUNTIME;
	if (r->term) {
		if (fflush(r->term))
			return CH_ERR_RUNTIME;
		hr_buf_append(&r->parts.term_lines, r->term_s ? r->term_s : "", r->term_n);
	}
	if (out->md && r->o.md) {
		rc = hr_md_render(r->fleet, &b, &r->parts);
		if (!rc && (b.oom || fwrite(b.s ? b.s : "", 1, b.len, out->md) != b.len))
			rc = CH_ERR_RUNTIME;
		hr_buf_release(&b);
	}
	if (!rc && out->prom && r->o.prom)
		rc = hr_prom_render(r->fleet, out->prom, &r->parts);
	if (!rc && out->html && r->o.html) {
		rc = hr_html_render(r->fleet, r->o.max_plots, &b, nplots, &r->parts, r->diffs);
		if (!rc && (b.oom || fwrite(b.s ? b.s : "", 1, b.len, out->html) != b.len))
			rc = CH_ERR_RUNTIME;
		hr_buf_release(&b);
	}
	if (!rc && out->terminal && r->o.terminal)
		rc = hr_term_render(r->fleet, out->terminal, r->o.color, &r->parts);
	return rc;
}

void hr_render_free(struct hr_render *r)
{
	size_t k;
	if (!r)
		return;
	json_decref(r->fleet);
	json_decref(r->kept);
	json_decref(r->diffs);
	if (r->term)
		fclose(r->term);
	free(r->term_s);
	hr_buf_release(&r->parts.term_lines);
	hr_buf_release(&r->parts.term_ckpt);
	hr_buf_release(&r->parts.md_nodes);
	hr_buf_release(&r->parts.md_ckpt);
	hr_buf_release(&r->parts.html_pass);
	hr_buf_release(&r->parts.html_ckpt);
	for (k = 0; k < HR_PROM_MAX_SECTIONS; k++)
		hr_spill_release(&r->parts.prom[k]);
	free(r);
}

/* ------------------------------------------------------------ whole profile */

/* One output of a whole profile: its nodes handed over one by one. */
static int render_whole(const json_t *p, const struct hr_render_opts *o, const struct hr_render_out *out,
			int *nplots)
{
	struct hr_render *r = hr_render_begin(p, o);
	const json_t *n;
	size_t i;
	int rc = 0;
	if (!r)
		return CH_ERR_RUNTIME;
	json_array_foreach(json_object_get(p, "nodes"), i, n)
		if ((rc = hr_render_node(r, n, NULL)))
			break;
	if (!rc) {
		json_t *tail = json_deep_copy(p);
		if (!tail) {
			rc = CH_ERR_RUNTIME;
		} else {
			json_object_del(tail, "nodes");
			rc = hr_render_end(r, tail, out, nplots);
			json_decref(tail);
		}
	}
	hr_render_free(r);
	return rc;
}

/* @fn's output into @b: a memory stream */
static int render_to_buf(const json_t *p, struct hr_render_opts *o, int which, struct hr_buf *b, int *nplots)
{
	char *s = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&s, &n);
	struct hr_render_out out = { NULL, NULL, NULL, NULL };
	int rc;
	if (!f)
		return CH_ERR_RUNTIME;
	if (which == 0)
		out.md = f;
	else if (which == 1)
		out.prom = f;
	else
		out.html = f;
	rc = render_whole(p, o, &out, nplots);
	if (fclose(f))
		rc = CH_ERR_RUNTIME;
	if (!rc && hr_buf_append(b, s ? s : "", n))
		rc = CH_ERR_RUNTIME;
	free(s);
	return rc;
}

int hr_render_markdown(const json_t *p, struct hr_buf *b)
{
	struct hr_render_opts o = { 1, 0, 0, 0, 0, 0 };
	return render_to_buf(p, &o, 0, b, NULL);
}

int hr_render_prom(const json_t *p, struct hr_buf *b)
{
	struct hr_render_opts o = { 0, 1, 0, 0, 0, 0 };
	return render_to_buf(p, &o, 1, b, NULL);
}

int hr_render_html(const json_t *p, int max_plots, struct hr_buf *b, int *nplots)
{
	struct hr_render_opts o = { 0, 0, 1, 0, max_plots, 0 };
	return render_to_buf(p, &o, 2, b, nplots);
}

int hr_render_terminal(const json_t *p, FILE *out, int color)
{
	struct hr_render_opts o = { 0, 0, 0, 1, 0, color };
	struct hr_render_out to = { NULL, NULL, NULL, out };
	int rc = render_whole(p, &o, &to, NULL);
	fflush(out);
	return rc || ferror(out) ? CH_ERR_RUNTIME : 0;
}
