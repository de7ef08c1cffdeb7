/*
 * hr_rule_device.c - the device-roof family: roofline's memory and compute
 * roofs per device against the expectation, the fleet and the node's other
 * GPUs (memory_low, compute_low, validation_failed, throttled,
 * did_not_reproduce).
 */
#include "report/judge/hr_judge.h"
#include "report/judge/hr_quality.h"
#include "base/ch_common.h"
#include "report/hr_util.h"
#include "base/ch_result.h"
#include "base/ch_stats.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether the compute roof of dtype @dt was set by an FMA ladder rung (CUDA
 * cores) rather than a GEMM (tensor cores where the GPU has them): roofline
 * sets the roof to the fastest valid ladder or gemm point of the dtype, the
 * first of equal ones (docs/results-schema.md, roofs.compute_kernel). */
static int roof_is_ladder(const struct hr_fleet *f, const struct hr_device *d, int dt, const signed char *fam,
			  const signed char *dt_of)
{
	double best = -1;
	int ladder = 0;
	size_t i;
	for (i = 0; i < d->npoints; i++) {
		const struct hr_point *p = &d->points[i];
		const struct hr_point_kind *k = hr_fleet_kind_at(f, p->kind);
		int l = fam[k->family] == 2;
		if ((l || fam[k->family] == 1) && dt_of[k->dtype] == dt && p->gflops > best) {
			best = p->gflops;
			ladder = l;
		}
	}
	return ladder;
}

/* Per text of the fleet (hr_fleet_text() ids): *@fam 2 "ladder", 1 "gemm",
 * else 0; *@dt_of the dtype it names, else -1: roof_is_ladder() compared
 * the texts of every point for every metric of every device. Returns 0, or
 * -1 out of memory (caller frees both either way). */
static int text_kinds(const struct hr_fleet *f, signed char **fam, signed char **dt_of)
{
	size_t i;
	int dt;
	*fam = malloc(f->ntext ? f->ntext : 1);
	*dt_of = malloc(f->ntext ? f->ntext : 1);
	if (!*fam || !*dt_of)
		return -1;
	for (i = 0; i < f->ntext; i++) {
		const char *t = hr_fleet_text_at(f, (uint32_t)i);
		(*fam)[i] = !strcmp(t, "ladder") ? 2 : !strcmp(t, "gemm") ? 1 : 0;
		(*dt_of)[i] = -1;
		for (dt = 0; dt < CH_NDTYPES && (*dt_of)[i] < 0; dt++)
			if (!strcmp(t, ch_dtype_name(dt)))
				(*dt_of)[i] = (signed char)dt;
	}
	return 0;
}

/* A device with a later run in the inputs (same node, device and bus id,
 * a later start): its instances are history (superseded_by that file). */
static void mark_superseded_devices(struct an *a)
{
	const struct hr_fleet *f = a->f;
	size_t i;
	for (i = 0; i < a->ndi; i++) {
		struct inst *p = &a->di[i];
		const struct hr_device *d = &f->devices[p->subject];
		time_t best = a->dev_t[p->subject];
		const char *best_src = d->source;
		long e;
		if (d->node < 0 || (size_t)d->node >= f->nnodes)
			continue;
		for (e = a->node_dev[d->node]; best && e >= 0; e = a->dev_next[e])
			if ((size_t)e != (size_t)p->subject && hj_later_run(a->dev_t[e], f->devices[e].source, best, best_src) &&
			    hj_same_device(d, &f->devices[e])) {
				best = a->dev_t[e];
				best_src = f->devices[e].source;
				p->sup = (int)e + 1;
			}
	}
}

/* The measurement quality of value @p: the conditions of its run (@run in
 * f->runs, -1 none) and the CV @cv of its measurement at @at. */
void hj_set_quality(struct an *a, struct inst *p, long run, double cv, const char *at)
{
	struct hr_quality q;
	hr_quality_init(&q);
	if (run >= 0)
		hr_quality_host(&q, &a->f->runs[run].cond);
	hr_quality_cv(&q, cv, at);
	if (p->metric < 0 && !isnan(cv)) {
		/* a device's is read from its record (hj_noise()) */
		struct inst_hist *h = hj_hist_new(a, p);
		if (h)
			h->noise = cv;
	}
	p->noisy = q.noisy;
	p->quality_known = q.host_known || q.cv_known;
	p->noisy_why_id = q.noisy ? hj_keep(a, INST_WHY_MAX, "%s", q.why) : 0;
}

/* Room for every instance hj_device_instances() makes, allocated once: the
 * array, the largest the judge keeps (a few hundred bytes an instance, tens
 * a node), never grown by doubling with the old and the new copy live. */
static int reserve_device_instances(struct an *a)
{
	const struct hr_fleet *f = a->f;
	size_t i, n = 0;
	void *v;
	int m;
	for (i = 0; i < f->ndevices; i++)
		if (strcmp(f->devices[i].status, "unavailable"))
			for (m = 0; m <= CH_NDTYPES; m++)
				n += !isnan(m == 0 ? f->devices[i].memory_gbps : f->devices[i].compute_gflops[m - 1]);
	if (a->ndi + n <= a->capdi)
		return 0;
	if (!(v = realloc(a->di, (a->ndi + n) * sizeof(*a->di)))) {
		a->oom = 1;
		return -1;
	}
	a->di = v;
	a->capdi = a->ndi + n;
	return 0;
}

/* What an instance's class and expectation texts depend on, and what they
 * came to: one model's metric (kind, SKU or name, the expectation, FMA
 * ladder or not), seen again for most devices of a fleet. */
struct inst_memo {
	int used;
	const char *kind, *name;
	const struct hr_sku_expect *x;
	int ladder;
	int cls;
	uint32_t basis, tag, why; /* hj_keep() ids */
};

#define MEMO_WAYS 4

/* The class and the texts of metric @m of device @d (expectation @x),
 * from @memo when the same model's metric was seen (its @m-th ways). */
static void inst_class(struct an *a, struct inst *p, const struct hr_device *d, const struct hr_sku_expect *x,
		       int m, int ladder, struct inst_memo *memo, unsigned *next)
{
	const char *name = d->sku ? d->sku : d->name ? d->name : "?";
	int gpu = d->kind && !strcmp(d->kind, "gpu");
	const char *ceiling = !ladder ? "" : gpu ? " (FMA ladder, CUDA cores)" : " (FMA ladder)";
	char key[256], label[160], mk[48];
	struct inst_memo *w;
	int k;
	/* the texts name d->device when the device has no SKU and no name */
	int memo_ok = (d->sku || d->name) && d->kind;

	for (k = 0; memo_ok && k < MEMO_WAYS; k++) {
		w = &memo[k];
		if (w->used && w->x == x && w->ladder == ladder && !strcmp(w->kind, d->kind) && !strcmp(w->name, name)) {
			p->cls = w->cls;
			p->basis_id = w->basis;
			p->tag_id = w->tag;
			p->why_id = w->why;
			return;
		}
	}
	/* a ladder roof is compared with ladder roofs only */
	snprintf(key, sizeof(key), "device|%s|%s|%s%s", d->kind, name, hj_metric_key(m, mk, sizeof(mk)),
		 ladder ? "|ladder" : "");
	snprintf(label, sizeof(label), "%s%s %s (%s)", hj_metric_label(m, mk, sizeof(mk)), ceiling, d->kind, name);
	p->cls = hj_class_of(a, key, label, m == 0 ? "GB/s" : "GFLOP/s");
	if (!isnan(p->expected) && p->expected > 0) {
		p->basis_id = hj_keep(a, INST_BASIS_MAX, "per-SKU expectation for %s%s: %s", x->sku,
				   ladder ? " of the CUDA cores (datasheet FP64/FP32 row, not Tensor Core)" : "",
				   x->source);
		p->tag_id = hj_keep(a, INST_TAG_MAX, "%s %s%s", x->sku, x->match[0] ? "given" : "datasheet x fraction",
				 ladder ? ", CUDA cores" : "");
	} else
		p->why_id = hj_keep(a, INST_WHY_MAX, "no %s figure for %s%s", x ? "expected" : "datasheet",
				 d->sku ? d->sku : d->name ? d->name : d->device,
				 !ladder ? "" : gpu ? " (the roof was set by the FMA ladder on the CUDA cores)"
					 : " (the roof was set by the FMA ladder)");
	if (!memo_ok || p->cls < 0 || a->oom)
		return;
	w = &memo[*next % MEMO_WAYS];
	(*next)++;
	*w = (struct inst_memo){ 1, d->kind, name, x, ladder, p->cls, p->basis_id, p->tag_id, p->why_id };
}

void hj_device_instances(struct an *a)
{
	const struct hr_fleet *f = a->f;
	struct inst_memo memo[CH_NDTYPES + 1][MEMO_WAYS];
	unsigned next[CH_NDTYPES + 1];
	char at[CH_NDTYPES + 1][64];
	size_t i;
	int m;
	signed char *fam = NULL, *dt_of = NULL;
	if (reserve_device_instances(a))
		return;
	if (text_kinds(f, &fam, &dt_of)) {
		a->oom = 1;
		goto out;
	}
	memset(memo, 0, sizeof(memo));
	memset(next, 0, sizeof(next));
	for (m = 0; m <= CH_NDTYPES; m++) {
		char mk[48];
		snprintf(at[m], sizeof(at[m]), "the %s", hj_metric_label(m, mk, sizeof(mk)));
	}
	for (i = 0; i < f->ndevices; i++) {
		const struct hr_device *d = &f->devices[i];
		const struct hr_sku_expect *x;
		if (!strcmp(d->status, "unavailable"))
			continue;
		x = hr_expect_for(a->e, d->sku, d->name);
		for (m = 0; m <= CH_NDTYPES; m++) {
			double v = m == 0 ? d->memory_gbps : d->compute_gflops[m - 1];
			int ladder;
			struct inst *p;
			if (isnan(v))
				continue;
			ladder = m > 0 && roof_is_ladder(f, d, m - 1, fam, dt_of);
			p = hj_new_inst(a, &a->di, &a->ndi, &a->capdi);
			if (!p)
				goto out;
			p->node = d->node;
			p->subject = (int)i;
			p->metric = m;
			p->value = v;
			p->like = !a->drift[d->node];
			p->ladder = ladder != 0; /* its datasheet figure: hj_datasheet() */
			if (x)
				p->expected = m == 0 ? x->memory_gbps : ladder ? x->cuda_core_gflops[m - 1]
					      : x->compute_gflops[m - 1];
			hj_set_quality(a, p, a->dev_run[i], m == 0 ? d->memory_cv : d->compute_cv[m - 1], at[m]);
			inst_class(a, p, d, x, m, ladder, memo[m], &next[m]);
		}
	}
	mark_superseded_devices(a);
out:
	free(fam);
	free(dt_of);
}

/* A FAIL is confirmed, and its node a drain candidate, when roofline's
 * re-measurement agreed with a per-GPU finding or allreduce_bw's with a
 * group's busbw (the value held), when the history rule saw
 * it persist, or when the earlier run of the same device or group in the
 * inputs (a re-run, or last night's) FAILed by the same rules. */
/* the earlier run of @p among @hist (indices into @v of the values that
 * are history: superseded), the latest of the same class, device or
 * group, the first of equal start times; NULL none */
static const struct inst *earlier_run(const struct an *a, const struct inst *v, const size_t *hist, size_t nh,
				      const struct inst *p, int dev)
{
	const struct inst *prev = NULL;
	time_t tp = 0;
	size_t h;
	for (h = 0; h < nh; h++) {
		const struct inst *q = &v[hist[h]];
		time_t tq = dev ? a->dev_t[q->subject] : a->grp_t[q->subject];
		if (q == p || q->cls != p->cls || q->noisy)
			continue;
		if (dev ? !hj_same_device(&a->f->devices[q->subject], &a->f->devices[p->subject])
			: !hj_same_nodes(&a->f->groups[q->subject], &a->f->groups[p->subject]))
			continue;
		if (!prev || tq > tp) {
			prev = q;
			tp = tq;
		}
	}
	return prev;
}

/* the indices of @v's values that are history (superseded), in order;
 * *@nh their count. NULL with *@nh 0 when there is none; a->oom set and
 * NULL when out of memory. */
static size_t *history_values(struct an *a, const struct inst *v, size_t n, size_t *nh)
{
	size_t i, *h = NULL;
	*nh = 0;
	for (i = 0; i < n; i++)
		*nh += v[i].sup != 0;
	if (!*nh)
		return NULL;
	if (!(h = malloc(*nh * sizeof(*h)))) {
		a->oom = 1;
		*nh = 0;
		return NULL;
	}
	*nh = 0;
	for (i = 0; i < n; i++)
		if (v[i].sup)
			h[(*nh)++] = i;
	return h;
}

void hj_confirm_fails(struct an *a)
{
	size_t i, nhd, nhg;
	/* the earlier runs are looked for among the values that are history
	 * only (a list made once: a scan of every value for each FAIL grew
	 * with the square of the fleet) */
	size_t *hd = history_values(a, a->di, a->ndi, &nhd), *hg = history_values(a, a->gi, a->ngi, &nhg);
	for (i = 0; i < a->ndi + a->ngi && !a->oom; i++) {
		int dev = i < a->ndi;
		struct inst *p = dev ? &a->di[i] : &a->gi[i - a->ndi];
		const struct inst *prev;
		if (p->sup || p->level != HR_FAIL || p->confirmed_fail)
			continue;
		if (p->confirm == HR_CONFIRM_AGREED) {
			/* roofline (a device) or allreduce_bw (a group's largest
			 * size) measured the value again and it held: whichever
			 * rule FAILs it rests on a confirmed value */
			p->confirmed_fail = 1;
			continue;
		}
		prev = dev ? earlier_run(a, a->di, hd, nhd, p, 1) : earlier_run(a, a->gi, hg, nhg, p, 0);
		if (prev && prev->raw_level == HR_FAIL)
			p->confirmed_fail = 1;
	}
	free(hd);
	free(hg);
}

/* ", in the heavy tail learned ..." when a learned tail weight @w raised a
 * cut-off (hr_noise_tail_weight_high()), else "" */
static const char *tail_words(double w, int twice, char *buf, size_t n)
{
	if (!(w > 0))
		return "";
	snprintf(buf, n, " (a heavy tail learned from the like values' upper side: tail weight %.2f%s)", w,
		 twice ? "; measured twice, each measurement held to the tail's quantile at the square root of the node's share" : "");
	return buf;
}

/* the words for a FAIL's own cut-off @cut_fail where a learned tail raised
 * it above the flags' @cut (hj_cut_fail()), else "" */
static const char *fail_words(const struct an *a, double cut, double cut_fail, char *buf, size_t n)
{
	if (!(cut_fail > cut))
		return "";
	snprintf(buf, n, " and at or beyond -%.1f, the tail's quantile at %g FAIL per node", cut_fail,
		 a->th->fail_false_alarm);
	return buf;
}

/* The margins of a flagged value: every rule that flagged it, with the
 * value's distance and the rule's threshold ("12% below the fleet median
 * 2950 GB/s of 80 like devices (robust z -8.1; flagged beyond -4.6 and from
 * 5% below, FAIL from 10%)"). @model names the expectation's GPU model,
 * @like the like values. */
void hj_inst_margins(const struct an *a, const struct inst *p, const char *model, const char *like,
		     char *extra, size_t n)
{
	char ref[48], tw[224], fw[96], fw2[96];
	int flops = p->metric > 0;
	size_t l;
	extra[0] = '\0';
	if (p->level_rel >= HR_WARN)
		snprintf(extra, n, "%.0f%% below the fleet median %s of %d %s (robust z %.1f: flagged at or beyond -%.1f, the cut-off for its node's %d comparisons%s, and from %.0f%% below; FAIL from %.0f%%%s)",
			 100 - hj_pct_fleet(a, p), hj_fmt_val(hj_fleet_median(a, p), flops, ref, sizeof(ref)), p->fleet_n, like, hj_z(a, p),
			 hj_cut(a, p), hj_m(a, p), tail_words(a->c[p->cls].tail_w, hj_measured_twice(a, p), tw, sizeof(tw)), a->th->warn_pct_below,
			 a->th->fail_pct_below, fail_words(a, hj_cut(a, p), hj_cut_fail(a, p), fw, sizeof(fw)));
	l = strlen(extra);
	if (p->level_abs >= HR_WARN && !isnan(p->expected) && p->expected > 0 && l < n)
		snprintf(extra + l, n - l, "%s%.0f%% of the expected %s%s%s (%s; WARN below %.0f%%, FAIL below %.0f%%, %s)",
			 l ? "; " : "", 100 * p->value / p->expected, hj_fmt_val(p->expected, flops, ref, sizeof(ref)),
			 p->metric >= 0 ? " for " : "", p->metric >= 0 ? model : "",
			 p->tag_id ? hj_text(a, p->tag_id) : "given", 100 * a->th->warn_ratio, 100 * a->th->fail_ratio,
			 p->pcie_class ? "PCIe-class on an NVLink node" :
			 p->abs_by_median ? "the median of its like values is below it too" :
			 "with the spread of healthy like values allowed");
	l = strlen(extra);
	if ((p->level_node >= HR_WARN || p->not_confirmed) && !isnan(hj_pct_node(p)) && l < n)
		snprintf(extra + l, n - l, "%s%.0f%% below the median %s of its node's %d other like GPUs (robust z %.1f: flagged at or beyond -%.1f%s and from %.0f%% below; FAIL from %.0f%%%s)%s",
			 l ? "; " : "", 100 - hj_pct_node(p), hj_fmt_val(p->peer_median, flops, ref, sizeof(ref)), p->peer_n,
			 hj_z_node(a, p), hj_cut_node(a, p), tail_words(a->c[p->cls].res_tail_w, hj_measured_twice(a, p), tw, sizeof(tw)), a->th->warn_pct_below, a->th->fail_pct_below,
			 fail_words(a, hj_cut_node(a, p), hj_cut_node_fail(a, p), fw2, sizeof(fw2)),
			 p->confirm == HR_CONFIRM_AGREED ? ", confirmed by roofline's re-measurement" :
			 p->not_confirmed ? ", not confirmed (no re-measurement in the input): this comparison at most WARN" : "");
	l = strlen(extra);
	if (!isnan(hj_again(a, p)) && p->confirm == HR_CONFIRM_AGREED && l < n)
		snprintf(extra + l, n - l, "%s%s's re-measurement %s, held to the same rules: %s",
			 l ? "; " : "", p->metric >= 0 ? "roofline" : "allreduce_bw", hj_fmt_val(hj_again(a, p), flops, ref, sizeof(ref)),
			 p->again_level < HR_FAIL ? "WARN (the finding stands at WARN)" :
			 (p->level_rel >= HR_FAIL || p->level_node >= HR_FAIL || p->level_abs >= HR_FAIL) ? "FAIL too (agreement)" :
			 "FAIL, the first measurement WARN (the finding stands at WARN)");
	else if (p->metric < 0 && isnan(hj_again_in(a, p)) && l < n)
		snprintf(extra + l, n - l, "%snot re-measured (no usable re-measurement of the largest size in the input)",
			 l ? "; " : "");
	l = strlen(extra);
	if (p->level_hist >= HR_WARN && l < n)
		snprintf(extra + l, n - l, "%s%s%.0f%% below its own history in the inputs (median %s of %d earlier runs; beyond their own spread)",
			 l ? "; " : "", hj_hist_how(p),
			 hj_hist(a, p)->pct, hj_fmt_val(hj_hist(a, p)->base, flops, ref, sizeof(ref)), hj_hist(a, p)->nbase);
	l = strlen(extra);
	if (p->level == HR_FAIL && !p->confirmed_fail && l < n)
		snprintf(extra + l, n - l, "; FAIL not confirmed (no re-measurement, earlier run or persisting history agrees): re-run before draining");
}

/* The info reason of device @d's value @p that roofline's re-measurement
 * did not reproduce: what it was compared with (its node's other like
 * GPUs, else the fleet's like devices: a CPU socket) and the second value
 * when it was judged. */
static void not_reproduced_reason(struct an *a, const struct hr_device *d, const struct inst *p)
{
	char mk[48], v1[48], v2[48], v3[48], cmp[160], again[96] = "";
	int flops = p->metric > 0;
	if (p->peer_n > 0 && !isnan(hj_pct_node(p)))
		snprintf(cmp, sizeof(cmp), "%.0f%% below the median %s of its node's %d other like GPUs",
			 100 - hj_pct_node(p), hj_fmt_val(p->peer_median, flops, v2, sizeof(v2)), p->peer_n);
	else if (!isnan(hj_pct_fleet(a, p)))
		snprintf(cmp, sizeof(cmp), "%.0f%% below the fleet median %s of %d like devices", 100 - hj_pct_fleet(a, p),
			 hj_fmt_val(hj_fleet_median(a, p), flops, v2, sizeof(v2)), p->fleet_n);
	else if (p->expected > 0)
		snprintf(cmp, sizeof(cmp), "%.0f%% of the expected %s (%s)", 100 * p->value / p->expected,
			 hj_fmt_val(p->expected, flops, v2, sizeof(v2)), p->tag_id ? hj_text(a, p->tag_id) : "given");
	else
		snprintf(cmp, sizeof(cmp), "low");
	if (!isnan(hj_again(a, p)))
		snprintf(again, sizeof(again), " (%s)", hj_fmt_val(hj_again(a, p), flops, v3, sizeof(v3)));
	hj_add_reason(a, d->node, HR_INFO, "did_not_reproduce", d->device, d->source,
		      "nothing to do; re-run roofline on the node if it recurs",
		      "%s %s %s was %s, but roofline's re-measurement%s did not reproduce it: not judged low", d->device,
		      hj_metric_label(p->metric, mk, sizeof(mk)), hj_fmt_val(p->value, flops, v1, sizeof(v1)), cmp, again);
}

static void device_reasons(struct an *a)
{
	const struct hr_fleet *f = a->f;
	size_t i, j;
	for (i = 0; i < f->ndevices; i++) {
		const struct hr_device *d = &f->devices[i];
		const struct inst *worst = NULL;
		int nflag = 0;
		char subj[96], what[64], val[48], extra[1024] = "", action[512];
		if (!strcmp(d->status, "failed"))
			hj_add_reason(a, d->node, HR_FAIL, "validation_failed", d->device, d->source,
				   "drain the node and run the vendor diagnostics (dcgmi diag -r 3); a device that computes wrong results cannot be trusted",
				   "%s: roofline's result check failed%s%s", d->device,
				   d->reason ? ": " : "", d->reason ? d->reason : "");
		for (j = a->dev_first[i]; j < a->dev_first[i] + a->dev_n[i]; j++) {
			const struct inst *p = &a->di[j];
			if (p->subject != (int)i || p->level < HR_WARN)
				continue;
			nflag++;
			if (!worst || p->level > worst->level ||
			    (p->level == worst->level &&
			     (isnan(hj_pct_fleet(a, p)) ? 100 : hj_pct_fleet(a, p)) < (isnan(hj_pct_fleet(a, worst)) ? 100 : hj_pct_fleet(a, worst))))
				worst = p;
		}
		for (j = a->dev_first[i]; !worst && j < a->dev_first[i] + a->dev_n[i]; j++) {
			const struct inst *p = &a->di[j];
			if (p->subject != (int)i || !p->not_reproduced || p->sup)
				continue;
			not_reproduced_reason(a, d, p);
		}
		if (!worst) {
			int earlier = a->dev_n[i] && a->di[a->dev_first[i]].sup;
			if (d->throttled && strcmp(d->status, "failed") && !earlier)
				hj_add_reason(a, d->node, HR_INFO, "throttled", d->device, d->source,
					   "check power and cooling if it recurs",
					   "%s was throttled during part of the measurement%s%s, yet met its expectations",
					   d->device, d->throttle_reasons ? ": " : "",
					   d->throttle_reasons ? d->throttle_reasons : "");
			continue;
		}
		hj_metric_label(worst->metric, what, sizeof(what));
		hj_fmt_val(worst->value, worst->metric > 0, val, sizeof(val));
		snprintf(subj, sizeof(subj), "%s", d->device);
		hj_inst_margins(a, worst, d->sku ? d->sku : "this model", "like devices", extra, sizeof(extra));
		if (d->throttled)
			snprintf(action, sizeof(action),
				 "check power and cooling: the device was throttled%s%s (nvidia-smi -q -d PERFORMANCE,POWER,TEMPERATURE)",
				 d->throttle_reasons ? " by " : "", d->throttle_reasons ? d->throttle_reasons : "");
		else if (worst->metric == 0)
			snprintf(action, sizeof(action),
				 "re-run roofline on %s; if it stays low check memory errors and clocks (nvidia-smi -q -d ECC,CLOCK), then drain and run dcgmi diag -r 3",
				 d->device);
		else
			snprintf(action, sizeof(action),
				 "re-run roofline on %s; if it stays low check clocks, power limit and PCIe link (nvidia-smi -q), then drain and run dcgmi diag -r 3",
				 d->device);
		{
			struct reason *r = hj_add_reason(a, d->node, worst->level, worst->metric == 0 ? "memory_low" : "compute_low",
						      subj, d->source, action, "%s %s %s: %s%s%s%s",
						      d->device, what, val, extra,
						      d->throttled ? "; throttled during the measurement" : "",
						      nflag > 1 ? "; also low: " : "", "");
			if (r && worst->level == HR_FAIL && worst->confirmed_fail)
				r->drain = 1;
		}
		if (nflag > 1 && !a->oom) {
			/* name the other low metrics */
			struct reason *r = &a->r[a->nr - 1];
			struct hr_buf b = { 0 };
			int first = 1;
			hr_buf_puts(&b, r->text);
			for (j = a->dev_first[i]; j < a->dev_first[i] + a->dev_n[i]; j++) {
				const struct inst *p = &a->di[j];
				char mk[48];
				if (p->subject != (int)i || p->level < HR_WARN || p == worst)
					continue;
				hr_buf_printf(&b, "%s%s", first ? "" : ", ",
					      p->metric == 0 ? "memory" : ch_dtype_name(p->metric - 1));
				first = 0;
				(void)mk;
			}
			if (b.s) {
				free(r->text);
				r->text = b.s;
			}
		}
	}
}

const struct hr_family hr_family_devices = {
	"device roofs",
	"roofline's devices (hr_device) and their compared values: the expectation, the fleet, the node's other GPUs, their history and re-measurement",
	device_reasons,
	NULL,
};
