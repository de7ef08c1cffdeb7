/*
 * hr_load_shared.c - the loaders' shared helpers (hr_load_shared.h): a node's
 * index by name, a node's configuration, the skipped-field issues, numbers and
 * strings of a result file. A leaf: it calls no other loader, so hr_load.c,
 * hr_load_roofline.c and hr_ckpt_load.c use it without a circle.
 */
#include "report/read/hr_model.h"
#include "report/read/hr_load_shared.h"
#include "report/read/hr_result.h"
#include "report/hr_util.h"
#include "base/ch_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int hr_fleet_node(struct hr_fleet *f, const char *name)
{
	size_t i;
	struct hr_node *n;
	json_t *hit;

	/* a hash from name to index (jansson's object), so that a fleet of
	 * thousands of nodes loads in linear time; rebuilt when it does not
	 * cover every node */
	if (!f->node_index || json_object_size(f->node_index) != f->nnodes) {
		json_decref(f->node_index);
		f->node_index = json_object();
		for (i = 0; f->node_index && i < f->nnodes; i++)
			json_object_set_new(f->node_index, f->nodes[i].name, json_integer((json_int_t)i));
	}
	hit = f->node_index ? json_object_get(f->node_index, name) : NULL;
	if (hit && (size_t)json_integer_value(hit) < f->nnodes &&
	    !strcmp(f->nodes[json_integer_value(hit)].name, name))
		return (int)json_integer_value(hit);
	if (!f->node_index || hit) /* no index, or a stale entry: look it up */
		for (i = 0; i < f->nnodes; i++)
			if (!strcmp(f->nodes[i].name, name))
				return (int)i;
	GROW(f->nodes, f->nnodes, n);
	if (!n)
		return -1;
	n->name = strdup(name);
	if (!n->name) {
		f->nnodes--;
		return -1;
	}
	if (f->node_index)
		json_object_set_new(f->node_index, name, json_integer((json_int_t)(f->nnodes - 1)));
	return (int)(f->nnodes - 1);
}

/* Set a configuration value of a node (later files win: newer nights sort
 * later). */
void hl_set_cfg(struct hr_fleet *f, int node, int key, const char *val)
{
	char *v;
	if (node < 0 || !val || !*val)
		return;
	v = strdup(val);
	if (!v)
		return;
	free(f->nodes[node].cfg[key]);
	f->nodes[node].cfg[key] = v;
}

void hl_skip(struct ctx *c, const char *fmt, const char *where, const char *key)
{
	hr_issue_add(&c->f->issues, HR_ISSUE_SKIPPED, c->path, 0, 0, fmt, where, key);
}

/* @v (key @key of @where): a non-negative finite number, or NAN (and an
 * issue when it is not one, or is absent and @required). */
double hl_num_field(struct ctx *c, const struct hr_rv *v, const char *key,
			const char *where, int required)
{
	double x;
	if (!v->json || v->is_null) {
		if (required)
			hl_skip(c, "%s: missing '%s'; skipped", where, key);
		return NAN;
	}
	if (isnan(v->num)) {
		hl_skip(c, "%s: '%s' is not a number; skipped", where, key);
		return NAN;
	}
	x = v->num;
	if (!isfinite(x) || x < 0) {
		hr_issue_add(&c->f->issues, HR_ISSUE_SKIPPED, c->path, 0, 0,
			     "%s: '%s' is '%g' (must be a finite number >= 0); skipped", where, key, x);
		return NAN;
	}
	return x;
}

char *hl_dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* Join strings, or copy one string, into "a; b". NULL when empty. */
char *hl_join_strings(const struct hr_rstrs *v)
{
	struct hr_buf b = { 0 };
	size_t i;
	if (v->is_string)
		return strlen(v->v[0]) ? strdup(v->v[0]) : NULL;
	for (i = 0; i < v->n; i++) {
		if (b.len)
			hr_buf_puts(&b, "; ");
		hr_buf_puts(&b, v->v[i]);
	}
	return b.s;
}

/* Throttle reasons from roofline's telemetry: {"before": sample, "after":
 * sample} where a sample (ch_nvml_sample_json) has "clock_event_reasons"
 * and "throttled"; reasons are kept only from samples that were throttled. */
void hl_add_reasons(const struct hr_result_sample *s, struct hr_buf *rb)
{
	size_t i;
	if (!s->throttled)
		return;
	for (i = 0; i < s->reasons.n; i++) {
		const char *name = s->reasons.v[i];
		if (rb->s && strstr(rb->s, name))
			continue;
		hr_buf_printf(rb, "%s%s", rb->len ? ", " : "", name);
	}
}

int hr_fleet_text(struct hr_fleet *f, const char *s, size_t max, uint32_t *id)
{
	char buf[256];
	json_t *hit;
	size_t n = max < sizeof(buf) ? max : sizeof(buf), l;
	/* what snprintf(buf, n, "%s", s) writes, without printf (three texts
	 * a roofline point: a tenth of the loading thread's time) */
	if (n) {
		l = strnlen(s, n - 1);
		memcpy(buf, s, l);
		buf[l] = '\0';
	}
	if (!f->texts && !(f->texts = json_object()))
		return -1;
	if ((hit = json_object_get(f->texts, buf))) {
		*id = (uint32_t)json_integer_value(hit);
		return 0;
	}
	if (f->ntext == f->captext) {
		size_t c = f->captext ? 2 * f->captext : 16;
		const char **v = c <= UINT32_MAX ? realloc(f->text_v, c * sizeof(*v)) : NULL;
		if (!v)
			return -1;
		f->text_v = v;
		f->captext = c;
	}
	if (json_object_set_new_nocheck(f->texts, buf, json_integer((json_int_t)f->ntext)) ||
	    !(f->text_v[f->ntext] = json_object_iter_key(json_object_iter_at(f->texts, buf))))
		return -1;
	*id = (uint32_t)f->ntext++;
	return 0;
}

const char *hr_fleet_text_at(const struct hr_fleet *f, uint32_t id)
{
	return f->text_v[id];
}

int hr_fleet_point_kind(struct hr_fleet *f, uint32_t kernel, uint32_t family, uint32_t dtype, size_t hint,
			uint32_t *id)
{
	uint32_t *m = f->kind_memo[hint % 32];
	char key[32];
	json_t *hit;
	if (m[3] && m[0] == kernel && m[1] == family && m[2] == dtype) {
		*id = m[3] - 1;
		return 0;
	}
	snprintf(key, sizeof(key), "%x %x %x", (unsigned)kernel, (unsigned)family, (unsigned)dtype);
	if (!f->kind_index && !(f->kind_index = json_object()))
		return -1;
	if ((hit = json_object_get(f->kind_index, key))) {
		*id = (uint32_t)json_integer_value(hit);
	} else {
		if (f->nkinds >= UINT32_MAX - 1)
			return -1;
		if (f->nkinds == f->capkinds) {
			size_t c = f->capkinds ? 2 * f->capkinds : 16;
			struct hr_point_kind *v = realloc(f->kinds, c * sizeof(*v));
			if (!v)
				return -1;
			f->kinds = v;
			f->capkinds = c;
		}
		if (json_object_set_new_nocheck(f->kind_index, key, json_integer((json_int_t)f->nkinds)))
			return -1;
		f->kinds[f->nkinds] = (struct hr_point_kind){ kernel, family, dtype };
		*id = (uint32_t)f->nkinds++;
	}
	m[0] = kernel;
	m[1] = family;
	m[2] = dtype;
	m[3] = *id + 1;
	return 0;
}

const struct hr_point_kind *hr_fleet_kind_at(const struct hr_fleet *f, uint32_t id)
{
	return &f->kinds[id];
}

const char *hr_fleet_str(struct hr_fleet *f, const char *s)
{
	void *it;
	if (!s || (!f->strs && !(f->strs = json_object())))
		return NULL;
	if (!(it = json_object_iter_at(f->strs, s))) {
		if (json_object_set_new_nocheck(f->strs, s, json_null()) || !(it = json_object_iter_at(f->strs, s)))
			return NULL;
	}
	return json_object_iter_key(it);
}
