/*
 * hr_checkpoint.c - checkpoint_io results in the report and the canary
 * (see hr_checkpoint.h).
 */
#include "report/judge/hr_checkpoint.h"
#include "report/judge/hr_family.h"
#include "report/canary/hr_canary.h"
#include "report/judge/hr_quality.h"
#include "report/read/hr_result.h"
#include "report/hr_util.h"
#include "base/ch_ckpt_stall.h"
#include "base/ch_common.h"
#include "base/ch_stats.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LVL_INFO 0
#define LVL_WARN 1
#define LVL_FAIL 2

static void mount_key(const struct hr_result_mount *m, char *b, size_t n, int *network_fs)
{
	snprintf(b, n, "%s %s on %s", m->fstype.str ? m->fstype.str : "?", m->source.str ? m->source.str : "?",
		 m->point.str ? m->point.str : "?");
	if (network_fs)
		*network_fs = m->network_fs;
}

/* the mount of rank @i of the layout */
static const struct hr_result_mount *rank_mount(const struct hr_result *r, size_t i)
{
	return &r->layout[i].dir_mount;
}

/* ------------------------------------------------------------ the report */

/* One entry of the node of rank @i on its mount: its ranks' bandwidth, block
 * and bad files, from the per-rank records @rank_ok marks as valid. */
static int ckpt_entry(const struct hr_result *r, const int *node_of, const char *rank_ok, size_t i, struct hr_ckpt *e)
{
	size_t j, nr = r->layout_list.n, n = 0;
	double bw[4096], bytes = 0;
	struct ch_stats st;

	memset(e, 0, sizeof(*e));
	e->node = node_of[i];
	mount_key(rank_mount(r, i), e->mount, sizeof(e->mount), &e->network_fs);
	for (j = 0; j < r->per_rank_list.n; j++) {
		const struct hr_result_ckpt_rank *p = &r->per_rank[j];
		long long rk = hr_rv_int(&p->rank, -1);
		char k2[400];
		if (!rank_ok[j] || node_of[rk] != e->node)
			continue;
		mount_key(rank_mount(r, (size_t)rk), k2, sizeof(k2), NULL);
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
		mount_key(rank_mount(r, i), key, sizeof(key), NULL);
		for (k = 0; k < i; k++)
			if (node_of[k] == node_of[i]) {
				char k2[400];
				mount_key(rank_mount(r, k), k2, sizeof(k2), NULL);
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

/* the newest entry (the last read) of @node on @mount, NULL when none */
static const struct hr_ckpt *latest(const struct hr_fleet *f, int node, const char *mount)
{
	const struct hr_ckpt *e = NULL;
	size_t i;
	for (i = 0; i < f->nckpts; i++)
		if (f->ckpts[i].node == node && !strcmp(f->ckpts[i].mount, mount))
			e = &f->ckpts[i];
	return e;
}

/* the median of the other nodes' latest per-rank bandwidth on @mount */
static double peers_median(const struct hr_fleet *f, int node, const char *mount, int *npeers)
{
	double *v = calloc(f->nnodes ? f->nnodes : 1, sizeof(double)), med = NAN;
	struct ch_stats st;
	size_t n = 0, i;

	for (i = 0; v && i < f->nnodes; i++) {
		const struct hr_ckpt *e;
		if ((int)i == node || !(e = latest(f, (int)i, mount)) || isnan(e->rank_gbps))
			continue;
		v[n++] = e->rank_gbps;
	}
	if (n && ch_stats_compute(v, n, &st) == 0)
		med = st.median;
	*npeers = (int)n;
	free(v);
	return med;
}

static int is_latest(const struct hr_fleet *f, size_t i)
{
	return latest(f, f->ckpts[i].node, f->ckpts[i].mount) == &f->ckpts[i];
}

/* Whether the host of @e's run was busy (its speed is then not judged);
 * @q: [out] why. */
static int ckpt_noisy(const struct hr_fleet *f, const struct hr_ckpt *e, struct hr_quality *q)
{
	size_t i;

	hr_quality_init(q);
	for (i = 0; i < f->nruns; i++)
		if (f->runs[i].path && !strcmp(f->runs[i].path, e->path)) {
			hr_quality_host(q, &f->runs[i].cond);
			break;
		}
	return q->noisy;
}

int hr_ckpt_grade(const struct hr_ckpt *e, double peers_gbps, double *stall, double *interval, int *assumed)
{
	double ratio;

	*assumed = !(e->interval_sec > 0);
	*interval = *assumed ? HR_CKPT_INTERVAL_SEC : e->interval_sec;
	*stall = NAN;
	if (!(peers_gbps > 0) || !(e->rank_gbps > 0) || !(e->block_sec > 0))
		return LVL_INFO;
	ratio = peers_gbps / e->rank_gbps;
	*stall = ratio > 1 ? e->block_sec * (1 - 1 / ratio) / *interval : 0;
	if (ratio < HR_CKPT_MIN_RATIO)
		return LVL_INFO;
	return *stall >= HR_CKPT_FAIL_STALL ? LVL_FAIL : *stall >= HR_CKPT_WARN_STALL ? LVL_WARN : LVL_INFO;
}

void hr_ckpt_reasons(const struct hr_fleet *f, hr_ckpt_reason_fn fn, void *ctx)
{
	char text[1024], subj[96];
	size_t i;

	for (i = 0; i < f->nckpts; i++) {
		const struct hr_ckpt *e = &f->ckpts[i];
		int np, level, assumed;
		double med, stall, interval, ratio;
		if (!is_latest(f, i))
			continue;
		snprintf(subj, sizeof(subj), "checkpoint %.80s", e->mount);
		if (e->bad_files) {
			snprintf(text, sizeof(text), "%d checkpoint file%s written by its ranks to %s did not read back as written (checkpoint_io crc32)",
				 e->bad_files, e->bad_files == 1 ? "" : "s", e->mount);
			fn(ctx, e->node, LVL_FAIL, "checkpoint_read_back", subj, e->path,
			   "check the node's memory and its path to the storage (a checkpoint that does not read back cannot be restored)", text);
		}
		med = peers_median(f, e->node, e->mount, &np);
		if (np < 1 || isnan(med) || isnan(e->rank_gbps) || !(e->rank_gbps > 0))
			continue;
		{
			struct hr_quality q;
			if (ckpt_noisy(f, e, &q))
				continue; /* a busy host: its speed is not judged (counted as noisy) */
		}
		ratio = med / e->rank_gbps;
		level = hr_ckpt_grade(e, med, &stall, &interval, &assumed);
		if (ratio < HR_CKPT_MIN_RATIO)
			continue;
		snprintf(text, sizeof(text),
			 "checkpoint writes to %s at %.3g GB/s per rank (synchronous, median of %d rank%s; blocked %.3g s), %.1fx slower than the median %.3g GB/s of its %d peer%s on that mount: adds %.2g%% of wall-clock (%.3g s instead of %.3g s) at a %.0f s checkpoint interval (%s); WARN from %.0f%% added, FAIL from %.0f%%, from %.0fx slower",
			 e->mount, e->rank_gbps, e->nranks, e->nranks == 1 ? "" : "s", e->block_sec, ratio, med, np,
			 np == 1 ? "" : "s", 100 * stall, e->block_sec, e->block_sec / ratio, interval,
			 assumed ? "assumed: the result has no --interval" : "the run's --interval",
			 100 * HR_CKPT_WARN_STALL, 100 * HR_CKPT_FAIL_STALL, HR_CKPT_MIN_RATIO);
		fn(ctx, e->node, level, "checkpoint_slow_write", subj, e->path,
		   level == LVL_INFO ? "nothing to do at this interval; if checkpoints get bigger or more frequent, check the node's NIC, link to the storage and mount options"
				     : "check the node's NIC and link to the storage, and its mount options (rsize/wsize, nconnect, striping) against its peers'",
		   text);
	}
}

json_t *hr_ckpt_node_json(const struct hr_fleet *f, int node)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; a && i < f->nckpts; i++) {
		const struct hr_ckpt *e = &f->ckpts[i];
		double med, stall = NAN, interval = NAN;
		int np, level = LVL_INFO, assumed = 0;
		if (e->node != node || !is_latest(f, i))
			continue;
		struct hr_quality q;
		int busy = ckpt_noisy(f, e, &q);
		med = peers_median(f, node, e->mount, &np);
		if (np >= 1 && !busy)
			level = hr_ckpt_grade(e, med, &stall, &interval, &assumed);
		if (e->bad_files)
			level = LVL_FAIL;
		{
			char against[400];
			if (busy)
				snprintf(against, sizeof(against), "speed not judged: noisy measurement (%s); re-run on an idle node", q.why);
			else if (np >= 1 && !isnan(med) && e->rank_gbps > 0)
				snprintf(against, sizeof(against), "the median of its %d peer%s on the same mount (fleet); graded by the stall it adds at a %.0f s interval (%s): WARN from %.0f%%, FAIL from %.0f%% of wall-clock, from %.0fx slower",
					 np, np == 1 ? "" : "s", interval, assumed ? "assumed" : "the run's --interval",
					 100 * HR_CKPT_WARN_STALL, 100 * HR_CKPT_FAIL_STALL, HR_CKPT_MIN_RATIO);
			else
				snprintf(against, sizeof(against), "not judged: no peer wrote to this mount");
			json_array_append_new(a, json_pack("{s:s, s:b, s:i, s:o, s:o, s:o, s:i, s:o, s:o, s:o, s:o, s:b, s:i, s:b, s:s, s:s, s:s}",
			"mount", e->mount, "network_fs", e->network_fs, "ranks", e->nranks,
			"block_sec", isnan(e->block_sec) ? json_null() : json_real(e->block_sec),
			"rank_write_gbps", isnan(e->rank_gbps) ? json_null() : json_real(e->rank_gbps),
			"node_write_gbps", isnan(e->node_gbps) ? json_null() : json_real(e->node_gbps),
			"peers", np, "peers_median_rank_write_gbps", isnan(med) ? json_null() : json_real(med),
			"peers_over_node", np >= 1 && e->rank_gbps > 0 && !isnan(med) ? json_real(med / e->rank_gbps) : json_null(),
			"added_stall_frac", isnan(stall) ? json_null() : json_real(stall),
			"interval_sec", isnan(interval) ? json_null() : json_real(interval), "interval_assumed", assumed,
			"bad_files", e->bad_files, "read_back_judged", e->read_back, "level", level == LVL_FAIL ? "fail" : level == LVL_WARN ? "warn" : "info",
			"source", e->path, "judged_against", against));
		}
	}
	return a;
}

void hr_ckpt_node_checks(const struct hr_fleet *f, int node, int *judged, int *not_judged, int *noisy,
			 int *speed_judged, int *speed_not_judged, char *why, size_t n)
{
	size_t i;

	for (i = 0; i < f->nckpts; i++) {
		const struct hr_ckpt *e = &f->ckpts[i];
		struct hr_quality q;
		int np;
		double med;
		if (e->node != node || !is_latest(f, i))
			continue;
		if (e->read_back) /* the read-back: crc32 and length against what was written */
			(*judged)++;
		else
			(*not_judged)++;
		med = peers_median(f, node, e->mount, &np);
		if (ckpt_noisy(f, e, &q)) {
			(*not_judged)++;
			if (speed_not_judged)
				(*speed_not_judged)++;
			if (noisy && !(*noisy)++ && why)
				snprintf(why, n, "checkpoint speed to %.80s: %s", e->mount, q.why);
			else if (!noisy && why && !why[0])
				snprintf(why, n, "checkpoint speed to %.80s: %s", e->mount, q.why);
		} else if (np >= 1 && !isnan(med) && e->rank_gbps > 0) {
			(*judged)++;
			if (speed_judged)
				(*speed_judged)++;
		} else {
			(*not_judged)++;
			if (speed_not_judged)
				(*speed_not_judged)++;
		}
	}
}

void hr_ckpt_render_terminal(const json_t *profile, FILE *out)
{
	const json_t *n;
	size_t i;
	int header = 0;

	json_array_foreach(json_object_get(profile, "nodes"), i, n)
		hr_ckpt_render_terminal_node(n, out, &header);
}

void hr_ckpt_render_terminal_node(const json_t *n, FILE *out, int *had_header)
{
	const json_t *c;
	size_t j;
	int header = *had_header;

	{
		json_array_foreach(json_object_get(n, "checkpoint"), j, c) {
			double ratio = hr_jnum(c, "peers_over_node");
			char vs[48], peers[32];
			if (!header) {
				fprintf(out, "\ncheckpoint writes (checkpoint_io, synchronous; per node and mount, against the peers on the same mount)\n");
				fprintf(out, "  %-16s %-40s %5s %10s %12s %12s  %s\n", "node", "mount", "ranks", "block_s", "GB/s/rank",
					"peers_GB/s", "vs peers");
				header = 1;
			}
			if (isnan(ratio))
				snprintf(vs, sizeof(vs), "not judged (no peers)");
			else
				snprintf(vs, sizeof(vs), "%.2fx the peers'%s", 1.0 / ratio,
					 hr_streq(hr_jstr(c, "level"), "fail") ? " FAIL" :
					 hr_streq(hr_jstr(c, "level"), "warn") ? " WARN" : "");
			if (isnan(hr_jnum(c, "peers_median_rank_write_gbps")))
				snprintf(peers, sizeof(peers), "-");
			else
				snprintf(peers, sizeof(peers), "%.4g", hr_jnum(c, "peers_median_rank_write_gbps"));
			fprintf(out, "  %-16s %-40.40s %5lld %10.3f %12.4g %12s  %s%s\n", hr_term(hr_jstr(n, "name")), hr_term(hr_jstr(c, "mount")),
				hr_jint(c, "ranks", 0), hr_jnum(c, "block_sec"), hr_jnum(c, "rank_write_gbps"), peers, vs,
				hr_jint(c, "bad_files", 0) ? " FAIL: files did not read back"
				: json_is_true(json_object_get(c, "read_back_judged")) ? "; read-back intact (crc32 and length)"
										       : "; read-back not judged (no valid verify.sync in the result)");
		}
	}
	*had_header = header;
}

int hr_ckpt_host_rates(const struct hr_result *r, void (*fn)(void *ctx, const char *host, double gbps), void *ctx)
{
	size_t i, j, k, nr = r->layout_list.n;
	double *bw;
	int nh = 0;

	if (!r->per_rank_list.is_array || !nr)
		return 0;
	bw = calloc(nr, sizeof(*bw));
	if (!bw)
		return CH_ERR_RUNTIME;
	for (i = 0; i < nr; i++) {
		const char *h = r->layout[i].host.str;
		struct ch_stats st;
		size_t n = 0;
		int seen = 0;
		for (k = 0; h && k < i; k++)
			if (r->layout[k].host.str && !strcmp(r->layout[k].host.str, h))
				seen = 1;
		if (!h || seen)
			continue;
		for (j = 0; j < r->per_rank_list.n; j++) {
			const struct hr_result_ckpt_rank *p = &r->per_rank[j];
			long long rk = hr_rv_int(&p->rank, -1);
			const char *rh = rk >= 0 && (size_t)rk < nr ? r->layout[rk].host.str : NULL;
			if (rh && !strcmp(rh, h) && p->write_gbps.num > 0 && n < nr)
				bw[n++] = p->write_gbps.num;
		}
		if (n && ch_stats_compute(bw, n, &st) == 0) {
			fn(ctx, h, st.median);
			nh++;
		}
	}
	free(bw);
	return nh;
}

/* ------------------------------------------------------------ the canary */

/* A count of writers: an integer from 1 to INT_MAX, else 0. */
static int writers_of(const struct hr_rv *v)
{
	return v->num >= 1 && v->num <= INT_MAX && v->num == floor(v->num) ? (int)v->num : 0;
}

static int bad(struct hr_issues *is, const char *path, const char *key)
{
	hr_issue_add(is, HR_ISSUE_SKIPPED, path, 0, 0,
		     "%s: missing or not a positive number (checkpoint_io result); file skipped", key);
	return CH_ERR_USAGE;
}

static double best_agg(const struct hr_ckpt_canary *k)
{
	double m = 0;
	int i;
	for (i = 0; i < k->npts; i++)
		m = fmax(m, k->pts[i].agg_gbps);
	return m;
}

int hr_ckpt_canary_read(struct hr_ckpt_canary *k, const char *path, const struct hr_result *r,
			struct hr_issues *is)
{
	static const struct hr_result_mount none;
	const char *status = r->status;
	struct hr_ckpt_canary c;
	size_t i;

	k->nfiles++;
	if (status && (!strcmp(status, "unavailable") || !strcmp(status, "usage")))
		return 0;
	if (!r->has_sync)
		return 0; /* stopped before the synchronous checkpoint was measured */
	memset(&c, 0, sizeof(c));
	c.block_sec = r->sync.block_sec.num;
	c.size_bytes = r->size_bytes.num;
	c.writers = writers_of(&r->sync.writers);
	if (!(c.block_sec > 0))
		return bad(is, path, "results.sync.block_sec");
	if (!(c.size_bytes > 0))
		return bad(is, path, "results.config.size_bytes");
	if (c.writers < 1)
		return bad(is, path, "results.sync.writers");
	c.interval_sec = r->interval_sec.num;
	if (!(c.interval_sec > 0))
		c.interval_sec = 0;
	c.staged_block_sec = r->has_staged ? r->staged_block_sec.num : -1;
	c.copy_sec = r->has_staged ? r->staged_copy_sec.num : -1;
	if (isnan(c.staged_block_sec))
		c.staged_block_sec = -1;
	if (isnan(c.copy_sec))
		c.copy_sec = -1;
	mount_key(r->layout_list.n ? rank_mount(r, 0) : &none, c.mount, sizeof(c.mount), &c.network_fs);
	for (i = 0; i < r->scaling_list.n; i++) {
		const struct hr_result_ckpt_point *p = &r->scaling[i];
		struct hr_ckpt_point q = { writers_of(&p->writers), p->bytes.num, p->block_sec.num,
					   p->agg_write_gbps.num };
		if (q.writers < 1 || !(q.agg_gbps > 0) || !isfinite(q.agg_gbps) || c.npts == HR_CKPT_MAX_POINTS)
			continue;
		if (c.npts && q.writers <= c.pts[c.npts - 1].writers)
			continue; /* ascending only */
		c.pts[c.npts++] = q;
	}
	if (!c.npts) { /* no scaling: the synchronous point alone, its bandwidth a number > 0 */
		double agg = r->sync.agg_write_gbps.num; /* NAN for null, a string, absent */
		if (!(agg > 0) || !isfinite(agg))
			return bad(is, path, "results.sync.agg_write_gbps");
		c.pts[c.npts++] = (struct hr_ckpt_point){ c.writers, r->sync.bytes.num, c.block_sec, agg };
	}
	snprintf(c.path, sizeof(c.path), "%s", path);
	c.have = 1;
	c.nfiles = k->nfiles;
	/* the allocation measured: the most writers; among those the slowest */
	if (!k->have || c.writers > k->writers || (c.writers == k->writers && c.block_sec > k->block_sec))
		*k = c;
	return 0;
}

void hr_ckpt_canary_apply(const struct hr_ckpt_canary *k, struct hr_canary_in *in)
{
	if (!k->have || in->ckpt_block_sec.src)
		return;
	if (!in->ckpt_interval_sec.src && k->interval_sec > 0)
		in->ckpt_interval_sec = (struct hr_fig){ k->interval_sec, HR_SRC_GIVEN };
	if (in->ckpt_interval_sec.src)
		in->ckpt_block_sec = (struct hr_fig){ k->block_sec, HR_SRC_MEASURED };
}

void hr_ckpt_canary_predict(const struct hr_ckpt_canary *k, double target_writers,
			    double interval_sec, struct hr_ckpt_target *t)
{
	double b1, bmax;

	memset(t, 0, sizeof(*t));
	if (!k->have || !(target_writers >= 1) || !(interval_sec > 0))
		return;
	b1 = k->pts[0].agg_gbps / k->pts[0].writers;
	bmax = best_agg(k);
	t->writers = target_writers;
	t->agg_gbps = fmin(target_writers * b1, bmax);
	t->block_sec = k->size_bytes / (t->agg_gbps * 1e9);
	t->frac = t->block_sec / interval_sec;
	t->saturated = k->npts >= 2 && k->pts[k->npts - 1].agg_gbps < 1.1 * k->pts[k->npts - 2].agg_gbps;
	t->ok = 1;
}

static void dur(char *b, size_t n, double s)
{
	if (s >= 60)
		snprintf(b, n, "%.3g min", s / 60);
	else
		snprintf(b, n, "%.3g s", s);
}

void hr_ckpt_canary_print(FILE *f, const struct hr_ckpt_canary *k, const struct hr_canary_in *in)
{
	struct hr_ckpt_target t;
	char a[32], b[64], line[600];
	size_t used = 0;
	int i;

	if (!k->nfiles)
		return;
	if (!k->have) {
		fprintf(f, "checkpoint_io: %d result%s read, none with a synchronous checkpoint measured: not used\n\n",
			k->nfiles, k->nfiles == 1 ? "" : "s");
		return;
	}
	fprintf(f, "checkpoint (checkpoint_io %s: %d writer%s, %.4g GB to %s%s)\n", hr_term(k->path), k->writers,
		k->writers == 1 ? "" : "s", k->size_bytes / 1e9, hr_term(k->mount),
		k->network_fs ? "" : "; a node-local file system, not a shared mount: re-run on the job's mount");
	dur(a, sizeof(a), k->block_sec);
	fprintf(f, "  %-40s %-40s [measured]\n", "synchronous block (max over ranks)", a);
	if (k->staged_block_sec >= 0 && k->copy_sec >= 0) {
		dur(a, sizeof(a), k->staged_block_sec);
		dur(b, sizeof(b), k->copy_sec);
		snprintf(line, sizeof(line), "%s, then %s of background copy", a, b);
		fprintf(f, "  %-40s %-40s [measured]\n", "staged block", line);
	}
	for (i = 0; i < k->npts && used < sizeof(line); i++)
		used += (size_t)snprintf(line + used, sizeof(line) - used, "%s%d: %.3g", i ? ", " : "", k->pts[i].writers,
					 k->pts[i].agg_gbps);
	fprintf(f, "  %-40s %s GB/s [measured]\n", "aggregate write bandwidth by writers", line);
	if (!in->ckpt_interval_sec.src) {
		fprintf(f, "  no interval: the result has no --interval and none was given (--checkpoint-interval): not judged\n\n");
		return;
	}
	if (in->ckpt_block_sec.src != HR_SRC_MEASURED)
		fprintf(f, "  (the block given with --checkpoint-block is used, not the measured one)\n");
	hr_ckpt_canary_predict(k, in->target_gpus.v, in->ckpt_interval_sec.v, &t);
	if (t.ok) {
		dur(a, sizeof(a), t.block_sec);
		snprintf(line, sizeof(line), "%s = %.3g%% of wall-clock", a, 100 * t.frac);
		snprintf(b, sizeof(b), "at %g GPUs (one writer each)", t.writers);
		fprintf(f, "  %-40s %-40s [measured+assumed]\n", b, line);
		fprintf(f, "    the same %.4g GB at min(%g x %.3g GB/s of one writer, %.3g GB/s best aggregate measured) = %.3g GB/s; assumed: the file system gives no more than its best measured aggregate%s\n",
			k->size_bytes / 1e9, t.writers, k->pts[0].agg_gbps / k->pts[0].writers,
			best_agg(k), t.agg_gbps,
			t.saturated ? " (it had saturated: the last doubling of writers gained under 10%)" :
				      " (it had not saturated at the writers measured: more may be possible, or less)");
	}
	if (k->staged_block_sec >= 0 && k->copy_sec >= 0) {
		struct ch_ckpt_stall st;
		if (ch_ckpt_stall_compute(k->block_sec, k->staged_block_sec, k->copy_sec, in->ckpt_interval_sec.v, &st) == 0) {
			snprintf(line, sizeof(line), "%.3g%% of wall-clock instead of %.3g%%; throughput +%.3g%%%s", 100 * st.staged_frac,
				 100 * st.sync_frac, 100 * st.staging_gain_frac,
				 st.copy_keeps_up ? "" : " (but the copy does not finish before the next checkpoint)");
			fprintf(f, "  %-40s %-40s [measured]\n", "staged today", line);
		}
	}
	if (in->params.src) {
		double job = in->params.v * 16;
		if (fabs(job - k->size_bytes) > 0.01 * job)
			fprintf(f, "  note: the job's checkpoint at --params %g x 16 bytes is %.4g GB, checkpoint_io wrote %.4g GB: re-run it with --params %g for the job's size\n",
				in->params.v, job / 1e9, k->size_bytes / 1e9, in->params.v);
	}
	fputc('\n', f);
}

json_t *hr_ckpt_canary_json(const struct hr_ckpt_canary *k, const struct hr_canary_in *in)
{
	struct hr_ckpt_target t;
	json_t *pts, *o;
	int i;

	if (!k->have)
		return json_null();
	pts = json_array();
	for (i = 0; i < k->npts; i++)
		json_array_append_new(pts, json_pack("{s:i, s:f, s:f, s:f}", "writers", k->pts[i].writers, "bytes",
						     k->pts[i].bytes, "block_sec", k->pts[i].block_sec, "agg_write_gbps",
						     k->pts[i].agg_gbps));
	o = json_pack("{s:s, s:i, s:f, s:f, s:o, s:o, s:o, s:s, s:b, s:o, s:b}", "file", k->path, "writers", k->writers,
		      "size_bytes", k->size_bytes, "block_sec", k->block_sec, "staged_block_sec",
		      k->staged_block_sec >= 0 ? json_real(k->staged_block_sec) : json_null(), "copy_sec",
		      k->copy_sec >= 0 ? json_real(k->copy_sec) : json_null(), "interval_sec",
		      k->interval_sec > 0 ? json_real(k->interval_sec) : json_null(), "mount", k->mount, "network_fs",
		      k->network_fs, "points", pts, "block_used", in->ckpt_block_sec.src == HR_SRC_MEASURED);
	hr_ckpt_canary_predict(k, in->target_gpus.v, in->ckpt_interval_sec.src ? in->ckpt_interval_sec.v : 0, &t);
	json_object_set_new(o, "target", t.ok ? json_pack("{s:f, s:f, s:f, s:f, s:b, s:s}", "writers", t.writers, "agg_write_gbps",
							  t.agg_gbps, "block_sec", t.block_sec, "frac", t.frac, "saturated",
							  t.saturated, "source", "measured+assumed") : json_null());
	return o;
}

const struct hr_family hr_family_checkpoint = {
	"checkpoint",
	"checkpoint_io's results per node and mount (hr_fleet.ckpts)",
	NULL,
	hr_ckpt_reasons,
};
