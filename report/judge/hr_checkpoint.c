/*
 * hr_checkpoint.c - checkpoint_io results in the report: the checkpoint
 * rules (see hr_checkpoint.h); the canary's use of them is
 * report/canary/hr_ckpt_canary.c.
 */
#include "report/judge/hr_checkpoint.h"
#include "report/read/hr_ckpt_load.h"
#include "report/judge/hr_family.h"
#include "report/judge/hr_rules.h"
#include "report/judge/hr_quality.h"
#include "report/read/hr_result.h"
#include "report/read/hr_index.h"
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

/* the newest entry (the last read) of @node on @mount, NULL when none */
static const struct hr_ckpt *latest(const struct hr_fleet *f, int node, const char *mount)
{
	long e = hr_index_ckpt_latest(f, node, mount);
	return e >= 0 ? &f->ckpts[e] : NULL;
}

/* the median of the other nodes' latest per-rank bandwidth on @mount
 * (hr_index.h: the fleet's values on that mount sorted once) */
static double peers_median(const struct hr_fleet *f, int node, const char *mount, int *npeers)
{
	return hr_index_ckpt_peers_median(f, node, mount, npeers);
}

static int is_latest(const struct hr_fleet *f, size_t i)
{
	return latest(f, f->ckpts[i].node, f->ckpts[i].mount) == &f->ckpts[i];
}

/* Whether the host of @e's run was busy (its speed is then not judged);
 * @q: [out] why. */
static int ckpt_noisy(const struct hr_fleet *f, const struct hr_ckpt *e, struct hr_quality *q)
{
	long r = hr_index_run_of_path(f, e->path);

	hr_quality_init(q);
	if (r >= 0)
		hr_quality_host(q, &f->runs[r].cond);
	return q->noisy;
}

/* the level of a node writing at @gbps per rank, blocked @block s, against
 * its peers' @peers_gbps at @interval s; @stall: [out] the added stall */
static int grade_rate(double gbps, double block, double peers_gbps, double interval, double *stall)
{
	double ratio;

	*stall = NAN;
	if (!(peers_gbps > 0) || !(gbps > 0) || !(block > 0))
		return LVL_INFO;
	ratio = peers_gbps / gbps;
	*stall = ratio > 1 ? block * (1 - 1 / ratio) / interval : 0;
	if (ratio < hr_rule_param("checkpoint_slow_write", "min_ratio"))
		return LVL_INFO;
	if (*stall >= hr_rule_param("checkpoint_slow_write", "fail_stall"))
		return LVL_FAIL;
	/* from symptom_ratio slower: WARN whatever the stall (a symptom) */
	return *stall >= hr_rule_param("checkpoint_slow_write", "warn_stall") || hr_ckpt_symptom(ratio) ? LVL_WARN : LVL_INFO;
}

double hr_ckpt_peers_again(const struct hr_fleet *f, const struct hr_ckpt *e, double peers_gbps, int *npeers)
{
	int na = 0;
	double m = hr_index_ckpt_peers_median_again(f, e->node, e->mount, &na);
	if (npeers)
		*npeers = na;
	return na >= 1 && m > 0 ? m : peers_gbps;
}

int hr_ckpt_grade_again(const struct hr_fleet *f, const struct hr_ckpt *e, double peers_gbps, double interval)
{
	double stall;
	if (!(e->again_gbps > 0) || !(e->rank_gbps > 0))
		return -1;
	/* the block the second write's rate gives for the same bytes, against
	 * the peers' second writes (written under the same conditions) */
	return grade_rate(e->again_gbps, e->block_sec * e->rank_gbps / e->again_gbps,
			  hr_ckpt_peers_again(f, e, peers_gbps, NULL), interval, &stall);
}

int hr_ckpt_grade(const struct hr_fleet *f, const struct hr_ckpt *e, double peers_gbps, double *stall, double *interval,
		  int *assumed)
{
	int level, again;

	*assumed = !(e->interval_sec > 0);
	*interval = *assumed ? hr_rule_param("checkpoint_slow_write", "interval_sec") : e->interval_sec;
	level = grade_rate(e->rank_gbps, e->block_sec, peers_gbps, *interval, stall);
	/* written twice: the finding stands only as far as the second write,
	 * held to the same rule, agrees */
	again = level > LVL_INFO ? hr_ckpt_grade_again(f, e, peers_gbps, *interval) : -1;
	return again >= 0 && again < level ? again : level;
}

int hr_ckpt_symptom(double ratio)
{
	return ratio >= hr_rule_param("checkpoint_slow_write", "symptom_ratio");
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
		level = hr_ckpt_grade(f, e, med, &stall, &interval, &assumed);
		if (ratio < hr_rule_param("checkpoint_slow_write", "min_ratio"))
			continue;
		snprintf(text, sizeof(text),
			 "checkpoint writes to %s at %.3g GB/s per rank (synchronous, median of %d rank%s; blocked %.3g s), %.1fx slower than the median %.3g GB/s of its %d peer%s on that mount: adds %.2g%% of wall-clock (%.3g s instead of %.3g s) at a %.0f s checkpoint interval (%s); WARN from %.0f%% added, FAIL from %.0f%%, from %.0fx slower",
			 e->mount, e->rank_gbps, e->nranks, e->nranks == 1 ? "" : "s", e->block_sec, ratio, med, np,
			 np == 1 ? "" : "s", 100 * stall, e->block_sec, e->block_sec / ratio, interval,
			 assumed ? "assumed: the result has no --interval" : "the run's --interval",
			 100 * hr_rule_param("checkpoint_slow_write", "warn_stall"), 100 * hr_rule_param("checkpoint_slow_write", "fail_stall"), hr_rule_param("checkpoint_slow_write", "min_ratio"));
		if (hr_ckpt_symptom(ratio)) /* named as a symptom, whatever the stall */
			snprintf(text + strlen(text), sizeof(text) - strlen(text),
				 "; %.1fx slower than its %d peer%s on %s: a storage or network symptom (WARN from %gx slower, whatever the stall)",
				 ratio, np, np == 1 ? "" : "s", e->mount, hr_rule_param("checkpoint_slow_write", "symptom_ratio"));
		if (e->again_gbps > 0) {
			double s1;
			int na, lv2 = hr_ckpt_grade_again(f, e, med, interval), lv1 = grade_rate(e->rank_gbps, e->block_sec, med, interval, &s1);
			double med2 = hr_ckpt_peers_again(f, e, med, &na);
			snprintf(text + strlen(text), sizeof(text) - strlen(text),
				 "; its second write (checkpoint_io --repeat, a fresh measurement): %.3g GB/s per rank, %.1fx slower than its peers' %s %.3g GB/s, %s",
				 e->again_gbps, med2 / e->again_gbps, na >= 1 ? "second writes" : "first writes (none wrote twice)", med2,
				 lv2 == LVL_INFO ? "not slow by the rule: not reproduced, info"
				 : lv2 >= lv1 ? "agrees" : "slow by the rule, less so: the level is its");
		}
		fn(ctx, e->node, level, "checkpoint_slow_write", subj, e->path,
		   level == LVL_INFO ? "nothing to do at this interval; if checkpoints get bigger or more frequent, check the node's NIC, link to the storage and mount options"
				     : "check the node's NIC and link to the storage, and its mount options (rsize/wsize, nconnect, striping) against its peers'",
		   text);
	}
}

json_t *hr_ckpt_node_json(const struct hr_fleet *f, int node)
{
	json_t *a = json_array();
	long i;

	for (i = hr_index_node_ckpt(f, node, -1); a && i >= 0; i = hr_index_node_ckpt(f, node, i)) {
		const struct hr_ckpt *e = &f->ckpts[i];
		double med, stall = NAN, interval = NAN;
		int np, level = LVL_INFO, assumed = 0;
		if (!is_latest(f, (size_t)i))
			continue;
		struct hr_quality q;
		int busy = ckpt_noisy(f, e, &q);
		med = peers_median(f, node, e->mount, &np);
		if (np >= 1 && !busy)
			level = hr_ckpt_grade(f, e, med, &stall, &interval, &assumed);
		if (e->bad_files)
			level = LVL_FAIL;
		{
			char against[400];
			if (busy)
				snprintf(against, sizeof(against), "speed not judged: noisy measurement (%s); re-run on an idle node", q.why);
			else if (np >= 1 && !isnan(med) && e->rank_gbps > 0)
				snprintf(against, sizeof(against), "the median of its %d peer%s on the same mount (fleet); graded by the stall it adds at a %.0f s interval (%s): WARN from %.0f%%, FAIL from %.0f%% of wall-clock, from %.0fx slower; WARN from %.0fx slower whatever the stall (a storage or network symptom)",
					 np, np == 1 ? "" : "s", interval, assumed ? "assumed" : "the run's --interval",
					 100 * hr_rule_param("checkpoint_slow_write", "warn_stall"), 100 * hr_rule_param("checkpoint_slow_write", "fail_stall"), hr_rule_param("checkpoint_slow_write", "min_ratio"),
					 hr_rule_param("checkpoint_slow_write", "symptom_ratio"));
			else
				snprintf(against, sizeof(against), "not judged: no peer wrote to this mount");
			json_array_append_new(a, json_pack("{s:s, s:b, s:i, s:o, s:o, s:o, s:i, s:o, s:o, s:o, s:o, s:o, s:b, s:i, s:b, s:s, s:s, s:s}",
			"mount", e->mount, "network_fs", e->network_fs, "ranks", e->nranks,
			"block_sec", isnan(e->block_sec) ? json_null() : json_real(e->block_sec),
			"rank_write_gbps", isnan(e->rank_gbps) ? json_null() : json_real(e->rank_gbps),
			"node_write_gbps", isnan(e->node_gbps) ? json_null() : json_real(e->node_gbps),
			"peers", np, "peers_median_rank_write_gbps", isnan(med) ? json_null() : json_real(med),
			"peers_over_node", np >= 1 && e->rank_gbps > 0 && !isnan(med) ? json_real(med / e->rank_gbps) : json_null(),
			"rank_write_gbps_again", isnan(e->again_gbps) ? json_null() : json_real(e->again_gbps),
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
	long i;

	for (i = hr_index_node_ckpt(f, node, -1); i >= 0; i = hr_index_node_ckpt(f, node, i)) {
		const struct hr_ckpt *e = &f->ckpts[i];
		struct hr_quality q;
		int np;
		double med;
		if (!is_latest(f, (size_t)i))
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

/* the median over host @h's ranks of @n entries @p of per-rank write
 * bandwidth (a positive number each), NAN when none; @bw: scratch of @nr */
static double host_median(const struct hr_result *r, const struct hr_result_ckpt_rank *p, size_t n, const char *h,
			  double *bw)
{
	size_t j, k = 0, nr = r->layout_list.n;
	struct ch_stats st;

	for (j = 0; j < n; j++) {
		long long rk = hr_rv_int(&p[j].rank, -1);
		const char *rh = rk >= 0 && (size_t)rk < nr ? r->layout[rk].host.str : NULL;
		if (rh && !strcmp(rh, h) && p[j].write_gbps.num > 0 && k < nr)
			bw[k++] = p[j].write_gbps.num;
	}
	return k && ch_stats_compute(bw, k, &st) == 0 ? st.median : NAN;
}

int hr_ckpt_host_rates(const struct hr_result *r, void (*fn)(void *ctx, const char *host, double gbps, double again),
		       void *ctx)
{
	size_t i, k, nr = r->layout_list.n;
	double *bw;
	int nh = 0;

	if (!r->per_rank_list.is_array || !nr)
		return 0;
	bw = calloc(nr, sizeof(*bw));
	if (!bw)
		return CH_ERR_RUNTIME;
	for (i = 0; i < nr; i++) {
		const char *h = r->layout[i].host.str;
		double v, again;
		int seen = 0;
		for (k = 0; h && k < i; k++)
			if (r->layout[k].host.str && !strcmp(r->layout[k].host.str, h))
				seen = 1;
		if (!h || seen)
			continue;
		v = host_median(r, r->per_rank, r->per_rank_list.n, h, bw);
		again = host_median(r, r->again, r->again_list.n, h, bw);
		if (!isnan(v)) {
			fn(ctx, h, v, again);
			nh++;
		}
	}
	free(bw);
	return nh;
}

const struct hr_family hr_family_checkpoint = {
	"checkpoint",
	"checkpoint_io's results per node and mount (hr_fleet.ckpts)",
	NULL,
	hr_ckpt_reasons,
};
