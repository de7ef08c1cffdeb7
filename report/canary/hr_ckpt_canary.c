/*
 * hr_ckpt_canary.c - checkpoint_io results in the canary: the result with
 * the most writers, its measured block and interval, and the stall
 * predicted at the target GPU count (hr_ckpt_canary.h).
 */
#include "report/canary/hr_ckpt_canary.h"
#include "report/canary/hr_canary.h"
#include "report/judge/hr_checkpoint.h"
#include "report/read/hr_ckpt_load.h"
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
	hr_ckpt_mount_key(r->layout_list.n ? hr_ckpt_rank_mount(r, 0) : &none, c.mount, sizeof(c.mount), &c.network_fs);
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
