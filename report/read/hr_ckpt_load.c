/*
 * hr_ckpt_load.c - checkpoint_io results into the fleet record: one
 * struct hr_ckpt per node and result (hr_ckpt_load.h). Judged by
 * report/judge/hr_checkpoint.c.
 */
#include "report/read/hr_ckpt_load.h"
#include "report/read/hr_result.h"
#include "report/hr_util.h"
#include "base/ch_common.h"
#include "base/ch_stats.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hr_ckpt_mount_key(const struct hr_result_mount *m, char *b, size_t n, int *network_fs)
{
	snprintf(b, n, "%s %s on %s", m->fstype.str ? m->fstype.str : "?", m->source.str ? m->source.str : "?",
		 m->point.str ? m->point.str : "?");
	if (network_fs)
		*network_fs = m->network_fs;
}

const struct hr_result_mount *hr_ckpt_rank_mount(const struct hr_result *r, size_t i)
{
	return &r->layout[i].dir_mount;
}

/* One entry of the node of rank @i on its mount: its ranks' bandwidth, block
 * and bad files, from the per-rank records @rank_ok marks as valid. */
static int ckpt_entry(const struct hr_result *r, const int *node_of, const char *rank_ok, size_t i, struct hr_ckpt *e)
{
	size_t j, nr = r->layout_list.n, n = 0;
	double bw[4096], bytes = 0;
	struct ch_stats st;

	memset(e, 0, sizeof(*e));
	e->node = node_of[i];
	hr_ckpt_mount_key(hr_ckpt_rank_mount(r, i), e->mount, sizeof(e->mount), &e->network_fs);
	for (j = 0; j < r->per_rank_list.n; j++) {
		const struct hr_result_ckpt_rank *p = &r->per_rank[j];
		long long rk = hr_rv_int(&p->rank, -1);
		char k2[400];
		if (!rank_ok[j] || node_of[rk] != e->node)
			continue;
		hr_ckpt_mount_key(hr_ckpt_rank_mount(r, (size_t)rk), k2, sizeof(k2), NULL);
		if (strcmp(k2, e->mount))
			continue;
		if (n < sizeof(bw) / sizeof(bw[0]))
			bw[n++] = p->write_gbps.num;
		if (p->block_sec.num > e->block_sec)
			e->block_sec = p->block_sec.num;
		bytes += p->bytes.num;
		e->nranks++;
	}
	if (!e->nranks)
		return 0;
	e->rank_gbps = n && ch_stats_compute(bw, n, &st) == 0 ? st.median : NAN;
	e->node_gbps = e->block_sec > 0 ? bytes / e->block_sec / 1e9 : NAN;
	/* the second write: the node's ranks on this mount with a positive rate */
	for (n = 0, j = 0; j < r->again_list.n; j++) {
		long long rk = hr_rv_int(&r->again[j].rank, -1);
		char k2[400];
		if (rk < 0 || (size_t)rk >= nr || node_of[rk] != e->node || !(r->again[j].write_gbps.num > 0) ||
		    !isfinite(r->again[j].write_gbps.num))
			continue;
		hr_ckpt_mount_key(hr_ckpt_rank_mount(r, (size_t)rk), k2, sizeof(k2), NULL);
		if (!strcmp(k2, e->mount) && n < sizeof(bw) / sizeof(bw[0]))
			bw[n++] = r->again[j].write_gbps.num;
	}
	e->again_gbps = n && ch_stats_compute(bw, n, &st) == 0 ? st.median : NAN;
	for (j = 0; j < r->nbad; j++) {
		long long rk = hr_rv_int(&r->bad_ranks[j], -1);
		if (rk >= 0 && (size_t)rk < nr && node_of[rk] == e->node)
			e->bad_files++;
	}
	return 1;
}

/* 1 when results.verify.sync says how many files were read back */
static int read_back_recorded(const struct hr_result *r)
{
	const json_t *v = json_object_get(json_object_get(r->results, "verify"), "sync");
	return json_is_object(v) && json_is_integer(json_object_get(v, "files_checked")) &&
	       json_integer_value(json_object_get(v, "files_checked")) >= 1 &&
	       json_is_integer(json_object_get(v, "files_bad")) && json_integer_value(json_object_get(v, "files_bad")) >= 0 &&
	       json_is_array(json_object_get(v, "bad"));
}

int hr_ckpt_load(struct hr_fleet *f, const char *path, const struct hr_result *r)
{
	size_t i, j, k, nr = r->layout_list.n, np = r->per_rank_list.n;
	int *node_of, rc = 0, ok = r->status && !strcmp(r->status, "ok"), read_back;
	char *rank_ok;

	/* a run that ended early may lack any part; a finished one may not */
	if (!r->per_rank_list.is_array || !np || !nr) {
		if (ok)
			hr_issue_add(&f->issues, HR_ISSUE_SKIPPED, path, 0, 0, "%s: missing or empty; checkpoint writes skipped",
				     !nr ? "ranks.layout" : !r->has_sync ? "results.sync" : "results.sync.per_rank");
		return 0;
	}
	read_back = read_back_recorded(r);
	if (!read_back && ok)
		hr_issue_add(&f->issues, HR_ISSUE_SKIPPED, path, 0, 0,
			     "results.verify.sync: missing or not {files_checked >= 1, files_bad >= 0, bad: []}; the read-back is not judged");
	rank_ok = calloc(np, 1);
	node_of = calloc(nr, sizeof(*node_of));
	if (!rank_ok || !node_of) {
		free(rank_ok);
		free(node_of);
		return CH_ERR_RUNTIME;
	}
	for (j = 0; j < np; j++) {
		const struct hr_result_ckpt_rank *p = &r->per_rank[j];
		double bs = p->block_sec.num, bw = p->write_gbps.num, by = p->bytes.num;
		const char *what = !p->rank.is_int || p->rank.i < 0 || (size_t)p->rank.i >= nr
					   ? "'rank' is not a rank of ranks.layout"
				   : !(bs > 0) || isinf(bs) ? "'block_sec' is not a positive finite number"
				   : !(bw >= 0) || isinf(bw) ? "'write_gbps' is not a finite number >= 0"
				   : !(by >= 0) || isinf(by) ? "'bytes' is not a finite number >= 0"
							      : NULL;
		if (what)
			hr_issue_add(&f->issues, HR_ISSUE_SKIPPED, path, 0, 0, "results.sync.per_rank[%zu]: %s; skipped", j, what);
		else
			rank_ok[j] = 1;
	}
	for (i = 0; i < nr; i++) {
		const char *h = r->layout[i].host.str;
		node_of[i] = h ? hr_fleet_node(f, h) : -1;
		if (h && node_of[i] < 0)
			rc = CH_ERR_RUNTIME;
	}
	/* one entry per node (and mount) of this result */
	for (i = 0; rc == 0 && i < nr; i++) {
		struct hr_ckpt e, *v;
		int dup = 0;
		char key[400];

		if (node_of[i] < 0)
			continue;
		hr_ckpt_mount_key(hr_ckpt_rank_mount(r, i), key, sizeof(key), NULL);
		for (k = 0; k < i; k++)
			if (node_of[k] == node_of[i]) {
				char k2[400];
				hr_ckpt_mount_key(hr_ckpt_rank_mount(r, k), k2, sizeof(k2), NULL);
				if (!strcmp(k2, key))
					dup = 1;
			}
		if (dup || !ckpt_entry(r, node_of, rank_ok, i, &e))
			continue;
		e.read_back = read_back;
		e.interval_sec = r->interval_sec.num > 0 && isfinite(r->interval_sec.num) ? r->interval_sec.num : NAN;
		e.path = strdup(path);
		v = realloc(f->ckpts, (f->nckpts + 1) * sizeof(*f->ckpts));
		if (!e.path || !v) {
			free(e.path);
			rc = CH_ERR_RUNTIME;
			break;
		}
		f->ckpts = v;
		f->ckpts[f->nckpts++] = e;
	}
	free(node_of);
	free(rank_ok);
	return rc;
}

void hr_ckpt_release(struct hr_fleet *f)
{
	size_t i;
	for (i = 0; i < f->nckpts; i++)
		free(f->ckpts[i].path);
	free(f->ckpts);
	f->ckpts = NULL;
	f->nckpts = 0;
}
