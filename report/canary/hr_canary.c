/*
 * hr_canary.c - the pre-scaling canary model (its report and JSON are in
 * hr_canary_print.c, the subcommand's options and inputs in hr_canary_cli.c).
 * Formulas and their sources: docs/canary.md; interface: hr_canary.h.
 */
#include "report/canary/hr_canary.h"
#include "report/canary/hr_fit.h"
#include "report/read/hr_walk.h"
#include "report/hr_util.h"
#include "base/ch_common.h"
#include "base/ch_parse.h"
#include "base/ch_result.h"

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ provenance */

char *hr_src_label(unsigned src, char *buf, size_t n)
{
	static const char *const names[] = { "given", "measured", "fitted", "assumed" };
	size_t used = 0;
	int i;

	if (!n)
		return buf;
	buf[0] = '\0';
	for (i = 0; i < 4; i++)
		if (src & (1u << i))
			used += (size_t)snprintf(buf + used, used < n ? n - used : 0,
						 "%s%s", used ? "+" : "", names[i]);
	if (!src)
		snprintf(buf, n, "none");
	return buf;
}

static struct hr_fig fig(double v, unsigned src)
{
	struct hr_fig f = { v, src };
	return f;
}

void hr_canary_in_init(struct hr_canary_in *in)
{
	memset(in, 0, sizeof(*in));
	in->min_efficiency = fig(0.80, HR_SRC_ASSUMED);
	in->significant_frac = fig(0.05, HR_SRC_ASSUMED);
}

const char *hr_canary_verdict_name(enum hr_verdict v)
{
	switch (v) {
	case HR_VERDICT_BOOK: return "book";
	case HR_VERDICT_FIX_FIRST: return "fix-first";
	case HR_VERDICT_DONT_BOOK: return "do-not-book";
	case HR_VERDICT_MEASURE_FIRST: return "measure-first";
	}
	return "?";
}

const char *hr_canary_loss_name(enum hr_loss_kind k)
{
	static const char *const names[] = {
		"synchronous checkpoint stall", "input wait (host CPU contention)",
		"exposed communication", "the rest (not explained by the above)",
		"straggler (every rank waits for it)"
	};
	return k < HR_LOSS_N ? names[k] : "?";
}

const char *hr_canary_loss_key(enum hr_loss_kind k)
{
	static const char *const keys[] = { "checkpoint", "input_wait", "communication", "rest", "straggler" };
	return k < HR_LOSS_N ? keys[k] : "?";
}

static void note(struct hr_canary_out *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void note(struct hr_canary_out *o, const char *fmt, ...)
{
	va_list ap;

	if (o->nnotes >= HR_CANARY_MAX_NOTES)
		return;
	va_start(ap, fmt);
	vsnprintf(o->notes[o->nnotes++], sizeof(o->notes[0]), fmt, ap);
	va_end(ap);
}

/* ------------------------------------------------------------- the model */

static int is_count(struct hr_fig f)
{
	return f.v >= 1 && f.v == floor(f.v) && f.v <= 1e9;
}

/* the fabric level whose model applies to an all-reduce over n ranks */
static int level_for(const struct hr_canary_in *in, struct hr_canary_out *o,
		     double n, unsigned *src)
{
	int want, have_intra = in->comm[HR_INTRA].set, have_inter = in->comm[HR_INTER].set;

	if (!have_intra && !have_inter)
		return -1;
	if (in->gpus_per_node.src) {
		want = n <= in->gpus_per_node.v ? HR_INTRA : HR_INTER;
		*src |= in->gpus_per_node.src;
	} else {
		/* no layout known: a larger allocation spans nodes */
		want = have_inter ? HR_INTER : HR_INTRA;
		*src |= HR_SRC_ASSUMED;
	}
	if (!in->comm[want].set) {
		int other = want == HR_INTRA ? HR_INTER : HR_INTRA;
		static const char *const lv[] = { "intra-node", "inter-node" };
		int i, dup = 0;
		char msg[240];
		snprintf(msg, sizeof(msg),
			 "no %s all-reduce model: the %s one stands in for it (assumed); measure with ranks on several nodes for a real prediction",
			 lv[want], lv[other]);
		for (i = 0; i < o->nnotes; i++)
			dup |= !strcmp(o->notes[i], msg);
		if (!dup)
			note(o, "%s", msg);
		*src |= HR_SRC_ASSUMED;
		want = other;
	}
	*src |= in->comm[want].src;
	return want;
}

/* a fitted model that misses its own points by a lot makes a rough prediction */
static void fit_quality_notes(const struct hr_canary_in *in, struct hr_canary_out *o)
{
	static const char *const lv[] = { "intra-node", "inter-node" };
	int l;

	for (l = 0; l < HR_NLEVELS; l++) {
		const struct hr_comm_model *m = &in->comm[l];
		if ((l != o->level_now && l != o->level_target) || m->src != HR_SRC_FITTED)
			continue;
		if (m->fit.rms_rel_pct > HR_CANARY_ROUGH_FIT_PCT)
			note(o, "the %s all-reduce fit misses its points by %.0f%% (rms, R2 %.2f): the all-reduce predictions are rough; noisy or oversubscribed ranks, or an algorithm the model does not describe",
			     lv[l], m->fit.rms_rel_pct, m->fit.r2);
	}
}

/* A prediction at the target that rests on a fitted all-reduce model
 * missing its own points by more than HR_CANARY_ROUGH_FIT_PCT (rms) books
 * nothing: MEASURE FIRST (o->rough_fit, verdict and action set, returns 1).
 * The prediction is a ratio of the model at the target to the model today
 * (and at the baseline, when given), so each of those levels' fits counts;
 * the roughest is named. */
static int rough_target_fit(const struct hr_canary_in *in, struct hr_canary_out *o)
{
	const int lv[3] = { o->level_target, o->level_now, o->level_base };
	const struct hr_comm_model *m, *worst = NULL;
	int k;
	if (o->level_target < 0)
		return 0;
	for (k = 0; k < 3; k++) {
		if (lv[k] < 0 || lv[k] >= HR_NLEVELS)
			continue;
		m = &in->comm[lv[k]];
		if (m->src == HR_SRC_FITTED && m->fit.rms_rel_pct > HR_CANARY_ROUGH_FIT_PCT &&
		    (!worst || m->fit.rms_rel_pct > worst->fit.rms_rel_pct))
			worst = m;
	}
	if (!worst)
		return 0;
	o->rough_fit = 1;
	o->verdict = HR_VERDICT_MEASURE_FIRST;
	snprintf(o->measure, sizeof(o->measure),
		 "re-measure the all-reduce on quiet nodes: " HR_CANARY_CMD_ALLREDUCE ": its fit misses its points by %.0f%% (rms), more than the %.0f%% a prediction can rest on",
		 worst->fit.rms_rel_pct, HR_CANARY_ROUGH_FIT_PCT);
	return 1;
}

/* model all-reduce time of the gradient, seconds */
static double comm_sec(const struct hr_canary_in *in, int level, double bytes, double n, double *always)
{
	return hr_canary_comm_sec(in, level, bytes, n, always);
}

/* the exposed part of a step's communication C of which @e is never hidden */
static double expo(double c, double e, double ov)
{
	return e + (1 - ov) * (c - e);
}

/* a GPU count that the step logs or result files measured (named by @from) */
static int measured_from(struct hr_fig f, const char *from)
{
	return !(f.src & HR_SRC_GIVEN) && from[0];
}

/* a GPU count named by where it came from, for a message: "--gpus-now '64'"
 * when given, "today's GPUs (from --steps PATH: 64 ranks)" when measured */
static const char *count_name(struct hr_fig f, const char *from, const char *opt, const char *whose, char *b, size_t n)
{
	if (measured_from(f, from))
		snprintf(b, n, "%s GPUs (from %s)", whose, from);
	else
		snprintf(b, n, "%s '%g'", opt, f.v);
	return b;
}

static int check_inputs(const struct hr_canary_in *in)
{
	char n0[HR_CANARY_PATH_TEXT + 100], n1[HR_CANARY_PATH_TEXT + 100];

	if (!in->gpus_now.src)
		return ch_usage_error("missing --gpus-now (the GPUs the job runs on today; or give allreduce_bw results to measure it)");
	if (!in->target_gpus.src)
		return ch_usage_error("missing --target-gpus (the allocation to decide on)");
	if (!is_count(in->gpus_now))
		return ch_usage_error("invalid --gpus-now '%g' (expected a whole number of GPUs, at least 1)", in->gpus_now.v);
	if (!is_count(in->target_gpus))
		return ch_usage_error("invalid --target-gpus '%g' (expected a whole number of GPUs, at least 1)", in->target_gpus.v);
	if (!in->step_sec.src) {
		if (in->baseline_gpus.src || in->mfu_now.src || in->mfu_baseline.src)
			return ch_usage_error("--baseline-gpus, --baseline-step-time, --mfu-now and --baseline-mfu need --step-time");
	} else if (!(in->step_sec.v > 0) || !isfinite(in->step_sec.v))
		return ch_usage_error("invalid --step-time '%g' s (expected a positive time)", in->step_sec.v);
	if (in->target_gpus.v <= in->gpus_now.v)
		return ch_usage_error("--target-gpus '%g' is not above %s (the canary predicts a larger allocation)",
				      in->target_gpus.v, count_name(in->gpus_now, in->gpus_now_from, "--gpus-now", "today's", n1, sizeof(n1)));
	if (in->baseline_gpus.src && !in->baseline_step_sec.src && in->baseline_step_missing[0])
		return ch_usage_error("%s; give --baseline-step-time", in->baseline_step_missing);
	if (!in->baseline_gpus.src != !in->baseline_step_sec.src)
		return ch_usage_error("--baseline-gpus and --baseline-step-time go together (give both or neither)");
	if (in->baseline_gpus.src) {
		if (!is_count(in->baseline_gpus))
			return ch_usage_error("invalid --baseline-gpus '%g' (expected a whole number of GPUs, at least 1)", in->baseline_gpus.v);
		if (in->baseline_gpus.v >= in->gpus_now.v)
			return ch_usage_error("%s %s not below %s (the baseline is the earlier, smaller run)",
					      count_name(in->baseline_gpus, in->baseline_gpus_from, "--baseline-gpus", "the baseline's", n0, sizeof(n0)),
					      measured_from(in->baseline_gpus, in->baseline_gpus_from) ? "are" : "is",
					      count_name(in->gpus_now, in->gpus_now_from, "--gpus-now", "today's", n1, sizeof(n1)));
		if (!(in->baseline_step_sec.v > 0) || !isfinite(in->baseline_step_sec.v))
			return ch_usage_error("invalid --baseline-step-time '%g' s (expected a positive time)", in->baseline_step_sec.v);
	}
	if (!in->ckpt_interval_sec.src != !in->ckpt_block_sec.src)
		return ch_usage_error("--checkpoint-interval and --checkpoint-block go together (give both or neither)");
	if (in->ckpt_interval_sec.src) {
		if (!(in->ckpt_interval_sec.v > 0))
			return ch_usage_error("invalid --checkpoint-interval '%g' s (expected a positive time)", in->ckpt_interval_sec.v);
		if (!(in->ckpt_block_sec.v >= 0))
			return ch_usage_error("invalid --checkpoint-block '%g' s (expected a time of 0 or more)", in->ckpt_block_sec.v);
		if (in->ckpt_block_sec.v >= in->ckpt_interval_sec.v)
			return ch_usage_error("--checkpoint-block '%g' s is not shorter than --checkpoint-interval '%g' s",
					      in->ckpt_block_sec.v, in->ckpt_interval_sec.v);
	}
	if (in->input_wait_frac.src && !(in->input_wait_frac.v >= 0 && in->input_wait_frac.v < 1))
		return ch_usage_error("invalid --input-wait '%g' (expected a fraction in [0, 1))", in->input_wait_frac.v);
	if (in->input_wait_frac.src && in->power_compute_share.src &&
	    in->input_wait_frac.v + in->power_compute_share.v > 1 + 1e-12)
		return ch_usage_error("%s '%.3g%%' and --compute-share '%.3g%%' add up to %.3g%% of the step: more than the whole step "
				      "(the input wait and the GPUs' compute are parts of one step)",
				      in->input_wait_frac.src & HR_SRC_GIVEN ? "--input-wait" : "the measured input wait (--input-wait)",
				      100 * in->input_wait_frac.v, 100 * in->power_compute_share.v,
				      100 * (in->input_wait_frac.v + in->power_compute_share.v));
	if (in->overlap.src && !(in->overlap.v >= 0 && in->overlap.v <= 1))
		return ch_usage_error("invalid --overlap '%g' (expected a fraction in [0, 1])", in->overlap.v);
	if (in->mfu_now.src && !(in->mfu_now.v > 0 && in->mfu_now.v <= 1))
		return ch_usage_error("invalid --mfu-now '%g' (expected a fraction in (0, 1])", in->mfu_now.v);
	if (in->mfu_baseline.src && !(in->mfu_baseline.v > 0 && in->mfu_baseline.v <= 1))
		return ch_usage_error("invalid --baseline-mfu '%g' (expected a fraction in (0, 1])", in->mfu_baseline.v);
	if (in->mfu_baseline.src && !in->baseline_gpus.src)
		return ch_usage_error("--baseline-mfu needs --baseline-gpus and --baseline-step-time");
	if (in->params.src && !(in->params.v > 0))
		return ch_usage_error("invalid --params '%g' (expected a positive count)", in->params.v);
	if (in->grad_bytes_per_param.src && !(in->grad_bytes_per_param.v > 0))
		return ch_usage_error("invalid --grad-bytes-per-param '%g' (expected a positive number)", in->grad_bytes_per_param.v);
	if (in->peak_tflops.src && !(in->peak_tflops.v > 0))
		return ch_usage_error("invalid --peak-tflops '%g' (expected a positive number)", in->peak_tflops.v);
	if (in->tokens_per_step.src && !(in->tokens_per_step.v > 0))
		return ch_usage_error("invalid --tokens-per-step '%g' (expected a positive number)", in->tokens_per_step.v);
	if (in->gpus_per_node.src && !is_count(in->gpus_per_node))
		return ch_usage_error("invalid --gpus-per-node '%g' (expected a whole number, at least 1)", in->gpus_per_node.v);
	if (in->price_per_gpu_hour.src && !(in->price_per_gpu_hour.v >= 0))
		return ch_usage_error("invalid --price-per-gpu-hour '%g' (expected 0 or more)", in->price_per_gpu_hour.v);
	if (!(in->min_efficiency.v > 0 && in->min_efficiency.v <= 1))
		return ch_usage_error("invalid --min-efficiency '%g' (expected a fraction in (0, 1])", in->min_efficiency.v);
	if (!(in->significant_frac.v > 0 && in->significant_frac.v < 1))
		return ch_usage_error("invalid --significant '%g' (expected a fraction in (0, 1))", in->significant_frac.v);
	for (int l = 0; l < HR_NLEVELS; l++)
		if (in->comm[l].set && (!(in->comm[l].fit.bw_gbps > 0) || !(in->comm[l].fit.alpha_us >= 0)))
			return ch_usage_error("invalid all-reduce model: alpha '%g' us, B '%g' GB/s (expected alpha >= 0 and B > 0)",
					      in->comm[l].fit.alpha_us, in->comm[l].fit.bw_gbps);
	return 0;
}

static double step_at(double t1_train, double f, double ov, double dc)
{
	return (t1_train + (1 - ov) * dc) / (1 - f);
}

/*
 * The gradient all-reduce's size from --params (and the bytes per
 * parameter, 2 assumed when not given): sets o->grad_bytes, returns the
 * bytes (0 without --params) and their source in *src.
 */
static double grad_bytes(const struct hr_canary_in *in, struct hr_canary_out *o, unsigned *src)
{
	struct hr_fig gbpp = in->grad_bytes_per_param;
	if (!in->params.src)
		return 0;
	if (!gbpp.src) {
		gbpp = fig(2, HR_SRC_ASSUMED);
		note(o, "gradient bytes per parameter not given: 2 assumed (bf16 gradients)");
	}
	*src = in->params.src | gbpp.src;
	o->grad_bytes = fig(in->params.v * gbpp.v, *src);
	return in->params.v * gbpp.v;
}

/* o->order: the loss kinds, largest first (by share or by seconds); an
 * unknown loss counts as -1. A stable insertion sort: ties keep kind order. */
static void order_losses(struct hr_canary_out *o, int by_frac)
{
	int i, j;
	for (i = 0; i < HR_LOSS_N; i++)
		o->order[i] = i;
	for (i = 1; i < HR_LOSS_N; i++)
		for (j = i; j > 0; j--) {
			const struct hr_loss *a = &o->loss[o->order[j - 1]], *b = &o->loss[o->order[j]];
			double ka = a->known ? (by_frac ? a->frac.v : a->sec.v) : -1;
			double kb = b->known ? (by_frac ? b->frac.v : b->sec.v) : -1;
			if (kb > ka) {
				int t = o->order[j];
				o->order[j] = o->order[j - 1];
				o->order[j - 1] = t;
			}
		}
}

/* no step time: shares of the step and the all-reduce's scaling only */
static int compute_comm_only(const struct hr_canary_in *in, struct hr_canary_out *o)
{
	double n1 = in->gpus_now.v, n2 = in->target_gpus.v, f = 0, S = 0;
	unsigned s_S = 0, s_ck = 0;
	int i, fix = 0;

	o->comm_only = 1;
	if (in->ckpt_interval_sec.src) {
		f = in->ckpt_block_sec.v / in->ckpt_interval_sec.v;
		s_ck = in->ckpt_block_sec.src | in->ckpt_interval_sec.src;
		o->ckpt_frac = fig(f, s_ck);
	}
	if (in->params.src) {
		S = grad_bytes(in, o, &s_S);
	} else if (in->probe_bytes.src) {
		S = in->probe_bytes.v;
		s_S = in->probe_bytes.src;
		o->grad_bytes = fig(S, s_S);
		note(o, "no --params: the all-reduce is predicted for the largest message measured");
	}
	if (S > 0) {
		unsigned s1 = s_S, s2 = s_S;
		o->level_now = level_for(in, o, n1, &s1);
		o->level_target = level_for(in, o, n2, &s2);
		if (o->level_now >= 0) {
			double c1 = comm_sec(in, o->level_now, S, n1, NULL), c2 = comm_sec(in, o->level_target, S, n2, NULL);
			o->comm_now_sec = fig(c1, s1);
			o->comm_target_sec = fig(c2, s2);
			o->busbw_now_gbps = fig(hr_canary_comm_busbw(in, S, n1, c1), s1);
			o->busbw_target_gbps = fig(hr_canary_comm_busbw(in, S, n2, c2), s2);
			/* at 1 GPU today there is no all-reduce to compare with:
			 * no ratio (never "inf%") */
			if (o->busbw_now_gbps.v > 0 && isfinite(o->busbw_target_gbps.v))
				o->busbw_ratio_target = fig(o->busbw_target_gbps.v / o->busbw_now_gbps.v, s1 | s2);
			else
				snprintf(o->comm_not_fitted, sizeof(o->comm_not_fitted),
					 "not fitted: no %s at %g GPU%s today to compare the target's with",
					 o->fsdp ? "FSDP collectives" : "all-reduce", n1, n1 == 1 ? "" : "s");
		}
	}
	fit_quality_notes(in, o);
	if (!o->busbw_ratio_target.src && !in->ckpt_interval_sec.src && !in->input_wait_frac.src &&
	    !in->comm_not_measured[0])
		return ch_usage_error("nothing to judge: %s%s%s%sgive --step-time, or allreduce_bw results (or --alpha-us/--bw-gbps), --checkpoint-interval/--checkpoint-block or --input-wait",
				      o->comm_not_fitted, o->comm_not_fitted[0] ? "; " : "",
				      in->step_missing, in->step_missing[0] ? "; " : "");
	if (in->step_missing[0])
		note(o, "%s", in->step_missing);
	note(o, "no --step-time: the verdict covers the checkpoint, the input wait and how the all-reduce scales; give --step-time (and --baseline-gpus/--baseline-step-time) for step time, efficiency, MFU and cost at the target");

	for (i = 0; i < HR_LOSS_N; i++) {
		struct hr_loss *l = &o->loss[i];
		double fr = -1;
		unsigned src = 0;
		l->kind = (enum hr_loss_kind)i;
		l->fixable = i != HR_LOSS_REST;
		if (i == HR_LOSS_CKPT && in->ckpt_interval_sec.src) {
			fr = f;
			src = s_ck;
		} else if (i == HR_LOSS_INPUT && in->input_wait_frac.src) {
			fr = in->input_wait_frac.v * (1 - f);
			src = in->input_wait_frac.src | s_ck;
		}
		if (fr < 0)
			continue;
		l->known = 1;
		l->frac = fig(fr, src);
		l->gain_frac = fig(1 / (1 - fr) - 1, src);
		l->significant = fr >= in->significant_frac.v;
		fix |= l->significant;
	}
	order_losses(o, 1);
	o->hw_ratio_target = fig(n2 / n1, in->target_gpus.src | in->gpus_now.src);
	if (fix || in->wrong_rows > 0)
		o->verdict = HR_VERDICT_FIX_FIRST;
	else if (!o->busbw_ratio_target.src) {
		o->insufficient = 1;
		o->verdict = HR_VERDICT_MEASURE_FIRST;
		snprintf(o->measure, sizeof(o->measure),
			 "measure how the all-reduce scales: " HR_CANARY_CMD_ALLREDUCE " (or give --alpha-us/--bw-gbps); or the step time: "
			 HR_CANARY_CMD_STEPS "%s%.300s%s",
			 in->comm_not_measured[0] ? " (" : "", in->comm_not_measured,
			 in->comm_not_measured[0] ? "; give it more time: scripts/canary --budget, allreduce_bw --timeout)" : "");
	} else if (rough_target_fit(in, o)) {
		/* verdict set */
	} else if (o->busbw_ratio_target.v < in->min_efficiency.v)
		o->verdict = HR_VERDICT_DONT_BOOK;
	else
		o->verdict = HR_VERDICT_BOOK;
	return 0;
}

/*
 * The model with a step time, step by step: what each step works out
 * stays here (today's step split into its parts, the all-reduce model,
 * the ideal, the overlap), what the report shows goes into the
 * struct hr_canary_out. Names as in docs/canary.md.
 */
struct cn_work {
	double n1, t1, n2;          /* GPUs today, step today (s), GPUs at target */
	double f, ck, t1tr;         /* checkpoint share, stall per step, step without it */
	double in_sec;              /* input wait per step */
	double strag;               /* the worst straggler's cost per step (step logs) */
	double S;                   /* bytes all-reduced per step */
	double c0, c1, c2;          /* model communication (s): baseline, today, target */
	double e0, e1, e2;          /* the part of it no overlap hides (FSDP's first all-gather) */
	double ov, comm_loss, rest; /* overlap; exposed all-reduce and the rest today (s) */
	double ideal;               /* weak-scaling ideal step */
	double g;                   /* step ~ GPUs^g (trend, no communication model) */
	double t2tr, t2;            /* step at target without / with the stall */
	unsigned s_ck, s_in, s_strag, s_S, s_c, s_ov, s_ideal, s_rest;
	int have_base, have_comm;
	const char *no_model;       /* why the all-reduce is not modelled, or NULL */
};

/* the synchronous checkpoint (block / interval of wall-clock) and the input
 * wait (a share of the training step) */
static void cn_stalls(const struct hr_canary_in *in, struct hr_canary_out *o, struct cn_work *w)
{
	if (in->ckpt_interval_sec.src) {
		w->f = in->ckpt_block_sec.v / in->ckpt_interval_sec.v;
		w->s_ck = in->ckpt_block_sec.src | in->ckpt_interval_sec.src;
		o->ckpt_frac = fig(w->f, w->s_ck);
		w->ck = w->f * w->t1;
		w->s_ck |= in->step_sec.src;
		o->ckpt_sec = fig(w->ck, w->s_ck);
	}
	w->t1tr = w->t1 - w->ck;
	o->train_step_sec = fig(w->t1tr, in->step_sec.src | w->s_ck);
	if (in->input_wait_frac.src) {
		w->in_sec = in->input_wait_frac.v * w->t1tr;
		w->s_in = in->input_wait_frac.src | o->train_step_sec.src;
		o->input_wait_sec = fig(w->in_sec, w->s_in);
	}
	if (in->straggler_sec.src && in->straggler_sec.v >= 0 && isfinite(in->straggler_sec.v)) {
		w->strag = in->straggler_sec.v;
		w->s_strag = in->straggler_sec.src;
	}
}

/* the gradient all-reduce from the model: today, at the target, at the baseline */
static void cn_comm(const struct hr_canary_in *in, struct hr_canary_out *o, struct cn_work *w)
{
	w->S = grad_bytes(in, o, &w->s_S);
	if (!(w->S > 0)) {
		w->no_model = "no --params: the gradient all-reduce cannot be modelled";
		return;
	}
	{
		unsigned s1 = w->s_S, s2 = w->s_S;
		o->level_now = level_for(in, o, w->n1, &s1);
		o->level_target = level_for(in, o, w->n2, &s2);
		if (o->level_now >= 0) {
			w->have_comm = 1;
			w->c1 = comm_sec(in, o->level_now, w->S, w->n1, &w->e1);
			w->c2 = comm_sec(in, o->level_target, w->S, w->n2, &w->e2);
			/* a model that puts more communication in a step than the
			 * whole step (compute overlapped included) does not fit
			 * this job: not used, never a loss of the whole step and
			 * an infinite gain */
			if (!(w->c1 <= w->t1tr) || !isfinite(w->c2)) {
				snprintf(o->comm_not_fitted, sizeof(o->comm_not_fitted),
					 "not fitted: the model predicts %.3g s of %s per step at %g GPUs, more than today's whole step (%.3g s)",
					 w->c1, o->fsdp ? "FSDP collectives" : "all-reduce", w->n1, w->t1tr);
				note(o, "the communication model does not fit this job (%s): its predictions are not used; check --params, --grad-bytes-per-param, --alpha-us/--bw-gbps or the allreduce_bw results",
				     o->comm_not_fitted);
				w->have_comm = 0;
				w->c1 = w->c2 = w->e1 = w->e2 = 0;
				w->no_model = "the communication model does not fit today's step (not fitted)";
				return;
			}
			o->comm_now_sec = fig(w->c1, s1);
			o->comm_target_sec = fig(w->c2, s2);
			o->busbw_target_gbps = fig(hr_canary_comm_busbw(in, w->S, w->n2, w->c2), s2);
			w->s_c = s1 | s2;
			if (w->have_base) {
				unsigned s0 = w->s_S;
				o->level_base = level_for(in, o, in->baseline_gpus.v, &s0);
				w->c0 = comm_sec(in, o->level_base, w->S, in->baseline_gpus.v, &w->e0);
				o->comm_base_sec = fig(w->c0, s0);
				w->s_c |= s0;
			}
		} else {
			w->no_model = "no all-reduce model (no allreduce_bw results, no --alpha-us/--bw-gbps)";
		}
	}
	fit_quality_notes(in, o);
}

/* with a baseline run: the weak-scaling ideal is the baseline's step, the
 * overlap is calibrated from the growth between baseline and today */
static void cn_ideal_from_baseline(const struct hr_canary_in *in, struct hr_canary_out *o, struct cn_work *w)
{
	double n0 = in->baseline_gpus.v, t0 = in->baseline_step_sec.v, n1 = w->n1, t1 = w->t1;
	unsigned sb = in->baseline_gpus.src | in->baseline_step_sec.src | in->gpus_now.src | in->step_sec.src;

	w->ideal = t0;
	w->s_ideal = in->baseline_step_sec.src;
	o->hw_ratio_now = fig(n1 / n0, in->baseline_gpus.src | in->gpus_now.src);
	o->throughput_ratio_now = fig((n1 / t1) / (n0 / t0), sb);
	/* t0 / t1 under weak scaling; the claim "at n1 GPUs vs n0" rests on
	 * the counts too, so their source is the efficiency's */
	o->efficiency_now = fig(t0 / t1, sb);
	if (t0 > t1) {
		note(o, "contradiction: the baseline step (%.3g s at %g GPUs) is slower than today's (%.3g s at %g) although the work per GPU is constant; check the inputs",
		     t0, n0, t1, n1);
		o->contradiction = 1;
	}
	if (in->overlap.src) {
		w->ov = in->overlap.v;
		w->s_ov = in->overlap.src;
	} else if (w->have_comm && w->c1 - w->e1 > w->c0 - w->e0) {
		/* the growth less what no overlap hides, over what overlap could */
		double grown = w->t1tr - w->in_sec - w->strag - t0;
		w->ov = 1 - (grown - (w->e1 - w->e0)) / ((w->c1 - w->e1) - (w->c0 - w->e0));
		w->s_ov = sb | w->s_ck | w->s_in | w->s_strag | w->s_c;
		if (w->ov < 0) {
			w->ov = 0;
			note(o, "today's step grew by more than the whole predicted all-reduce growth (%.3g s vs %.3g s): overlap taken as 0, the excess is in 'the rest'",
			     grown, w->c1 - w->c0);
		} else if (w->ov > 1) {
			w->ov = 1;
		}
	} else if (w->have_comm) {
		w->ov = 0;
		w->s_ov = HR_SRC_ASSUMED;
	}
	if (w->have_comm)
		w->comm_loss = expo(w->c1, w->e1, w->ov) - expo(w->c0, w->e0, w->ov);
	w->rest = t1 - t0 - w->ck - w->in_sec - w->strag - w->comm_loss;
	w->s_rest = sb | w->s_ck | w->s_in | w->s_strag | (w->have_comm ? w->s_c | w->s_ov : 0);
	if (w->rest < -1e-12 * t1) {
		note(o, "the identified losses (%.3g s) exceed the gap to the baseline (%.3g s): the baseline probably had some of them too",
		     w->ck + w->in_sec + w->strag + w->comm_loss, t1 - t0);
		w->rest = 0;
	}
	if (w->rest < 0)
		w->rest = 0;
}

/* without a baseline: the ideal is today's step less its identified losses */
static void cn_ideal_from_losses(const struct hr_canary_in *in, struct hr_canary_out *o, struct cn_work *w)
{
	if (in->overlap.src) {
		w->ov = in->overlap.v;
		w->s_ov = in->overlap.src;
	} else if (w->have_comm) {
		w->ov = 0;
		w->s_ov = HR_SRC_ASSUMED;
		note(o, "no baseline to calibrate the overlap of communication with compute: 0 assumed (all of it exposed); give --overlap or --baseline-gpus/--baseline-step-time");
	}
	if (w->have_comm) {
		w->comm_loss = expo(w->c1, w->e1, w->ov);
		if (w->comm_loss > w->t1tr - w->in_sec - w->strag) {
			note(o, "the predicted exposed all-reduce (%.3g s) is longer than the step less its other losses (%.3g s): the model or the inputs are off",
			     w->comm_loss, w->t1tr - w->in_sec - w->strag);
			w->comm_loss = w->t1tr - w->in_sec - w->strag;
		}
	}
	w->ideal = w->t1tr - w->in_sec - w->strag - w->comm_loss;
	w->s_ideal = o->train_step_sec.src | w->s_in | w->s_strag | (w->have_comm ? w->s_c | w->s_ov : 0) | HR_SRC_ASSUMED;
	/* no second run: no scaling efficiency today (efficiency_now unknown) */
}

/* no communication model: with a baseline, today's measured trend (step ~
 * GPUs^g from the baseline to today) is the guide, not perfect scaling;
 * without one the target cannot be predicted */
static void cn_trend(const struct hr_canary_in *in, struct hr_canary_out *o, struct cn_work *w)
{
	double n1 = w->n1, t1 = w->t1;
	if (w->no_model && w->have_base) {
		w->g = t1 > in->baseline_step_sec.v ?
			log(t1 / in->baseline_step_sec.v) / log(n1 / in->baseline_gpus.v) : 0;
		o->trend_used = 1;
		o->trend_exponent = w->g;
		note(o, "%s: the prediction at %g GPUs follows today's measured trend (%g -> %g GPUs: x%.2f the throughput for %.3gx the hardware, the step x%.2f), not perfect scaling",
		     w->no_model, w->n2, in->baseline_gpus.v, n1, (n1 / t1) / (in->baseline_gpus.v / in->baseline_step_sec.v),
		     n1 / in->baseline_gpus.v, t1 / in->baseline_step_sec.v);
	} else if (w->no_model) {
		o->insufficient = 1;
		snprintf(o->target_not_measured, sizeof(o->target_not_measured),
			 "not measured: needs a second run at another GPU count (--baseline-steps, or --baseline-gpus with --baseline-step-time) or an all-reduce model (allreduce_bw results or --alpha-us/--bw-gbps, with --params)");
		note(o, "%s and no baseline run: nothing predicts the step at %g GPUs (its efficiency, throughput and cost are not measured)",
		     w->no_model, w->n2);
	}
	o->ideal_step_sec = fig(w->ideal, w->s_ideal);
	o->over_ideal_frac = fig(w->t1tr / w->ideal - 1, w->s_ideal | o->train_step_sec.src);
	o->overlap = fig(w->ov, w->s_ov);
	if (w->have_comm)
		o->exposed_comm_sec = fig(w->comm_loss, w->s_c | w->s_ov);
}

/* the losses, for each what fixing it recovers */
static void cn_losses(const struct hr_canary_in *in, struct hr_canary_out *o, const struct cn_work *w)
{
	double sec[HR_LOSS_N] = { w->ck, w->in_sec, w->comm_loss, w->rest, w->strag };
	unsigned src[HR_LOSS_N] = { w->s_ck, w->s_in, w->s_c | w->s_ov, w->s_rest, w->s_strag };
	int known[HR_LOSS_N] = { in->ckpt_interval_sec.src != 0, in->input_wait_frac.src != 0,
				 w->have_comm, w->have_base, w->s_strag != 0 };
	double t1 = w->t1;
	int i;
	for (i = 0; i < HR_LOSS_N; i++) {
		struct hr_loss *l = &o->loss[i];
		l->kind = (enum hr_loss_kind)i;
		l->known = known[i];
		l->fixable = i != HR_LOSS_REST;
		if (!known[i])
			continue;
		l->sec = fig(sec[i], src[i]);
		l->frac = fig(sec[i] / t1, src[i] | in->step_sec.src);
		l->fixed_step_sec = fig(t1 - sec[i], src[i] | in->step_sec.src);
		l->gain_frac = fig(t1 / (t1 - sec[i]) - 1, src[i] | in->step_sec.src);
		l->significant = l->frac.v >= in->significant_frac.v;
	}
	order_losses(o, 0);
}

/* the target: per-GPU work constant, every loss but the all-reduce held */
static void cn_target(const struct hr_canary_in *in, struct hr_canary_out *o, struct cn_work *w)
{
	double n1 = w->n1, t1 = w->t1, n2 = w->n2, ov = w->ov, f = w->f;
	unsigned s2 = o->train_step_sec.src | w->s_ck | in->target_gpus.src;
	double dc = w->have_comm ? expo(w->c2, w->e2, ov) - expo(w->c1, w->e1, ov) : 0, fixed_tr;
	int i;

	if (w->have_comm)
		s2 |= w->s_c | w->s_ov;
	else
		s2 |= HR_SRC_ASSUMED;
	w->t2tr = w->t1tr + dc;
	w->t2 = w->t2tr / (1 - f);
	if (o->trend_used) {
		w->t2 = t1 * pow(n2 / n1, w->g);
		w->t2tr = w->t2 * (1 - f);
		/* the trend's exponent rests on the two runs' GPU counts too */
		s2 = in->step_sec.src | in->baseline_step_sec.src | in->gpus_now.src | in->baseline_gpus.src | HR_SRC_ASSUMED;
	}
	o->step_target_sec = fig(w->t2, s2);
	if (w->have_comm)
		o->exposed_comm_target_sec = fig(expo(w->c2, w->e2, ov), w->s_c | w->s_ov);
	o->efficiency_target = fig(w->ideal / w->t2, s2 | w->s_ideal);
	o->hw_ratio_target = fig(n2 / n1, in->target_gpus.src | in->gpus_now.src);
	o->throughput_ratio_target = fig((n2 / w->t2) / (n1 / t1), s2 | in->gpus_now.src);
	fixed_tr = w->t2tr;
	if (o->loss[HR_LOSS_INPUT].significant)
		fixed_tr -= w->in_sec;
	if (o->loss[HR_LOSS_STRAGGLER].significant)
		fixed_tr -= w->strag;
	if (o->loss[HR_LOSS_COMM].significant)
		fixed_tr -= expo(w->c2, w->e2, ov) - (w->have_base ? expo(w->c0, w->e0, ov) : 0);
	o->step_target_fixed_sec = fig(o->loss[HR_LOSS_CKPT].significant ? fixed_tr : step_at(fixed_tr, f, 0, 0),
				       s2 | w->s_in | w->s_strag);
	o->efficiency_target_fixed = fig(w->ideal / o->step_target_fixed_sec.v, s2 | w->s_in | w->s_strag | w->s_ideal);
	if (o->trend_used) {
		/* the trend mixes the losses being fixed: not predicted */
		o->step_target_fixed_sec = fig(NAN, 0);
		o->efficiency_target_fixed = fig(NAN, 0);
	}
	/* the largest allocation predicted at or above min_efficiency */
	for (i = (int)n2; i > (int)n1; i--) {
		double ei = w->e1, ci = w->have_comm ? comm_sec(in, level_for(in, o, i, &s2), w->S, i, &ei) : w->c1;
		double si = o->trend_used ? t1 * pow(i / n1, w->g) :
			    step_at(w->t1tr, f, 0, expo(ci, ei, ov) - expo(w->c1, w->e1, ov));
		if (w->ideal / si >= in->min_efficiency.v) {
			o->largest_ok_gpus = i;
			break;
		}
	}
}

/* MFU: PaLM appendix B, 6 N tokens/s / (GPUs x peak), checked against the
 * MFU given today and at the baseline */
static void cn_mfu(const struct hr_canary_in *in, struct hr_canary_out *o, const struct cn_work *w)
{
	double t1 = w->t1, t1tr = w->t1tr;
	if (in->params.src && in->tokens_per_step.src && in->peak_tflops.src) {
		double m = 6.0 * in->params.v * in->tokens_per_step.v / (t1 * w->n1 * in->peak_tflops.v * 1e12);
		o->mfu_computed = fig(m, in->params.src | in->tokens_per_step.src | in->peak_tflops.src | in->step_sec.src);
		if (m > 1) {
			note(o, "contradiction: 6 x params x tokens per step / (step time x GPUs x peak) = %.1f%% MFU, above 100%%; check the parameter and token counts and the peak (dense, right dtype)",
			     100 * m);
			o->contradiction = 1;
		} else if (in->mfu_now.src && fabs(in->mfu_now.v / m - 1) > 0.05) {
			note(o, "contradiction: --mfu-now %.1f%% but 6 x params x tokens per step / (step time x GPUs x peak) = %.1f%%; check the peak (dense, right dtype) and the token count",
			     100 * in->mfu_now.v, 100 * m);
			o->contradiction = 1;
		}
	}
	o->mfu_now = in->mfu_now.src ? in->mfu_now : o->mfu_computed;
	if (in->mfu_baseline.src && o->mfu_now.src) {
		double want = in->baseline_step_sec.v / t1, got = o->mfu_now.v / in->mfu_baseline.v;
		double want_tr = in->baseline_step_sec.v / t1tr;
		if (fabs(got / want - 1) > 0.05 && w->ck > 0 && fabs(got / want_tr - 1) <= 0.05)
			note(o, "MFU went from %.1f%% to %.1f%% (x%.3f): that matches the step without the checkpoint stall (%.2f s / %.2f s = x%.3f), not the wall-clock step (x%.3f): MFU was likely measured over training steps only, while the figures here include the stall",
			     100 * in->mfu_baseline.v, 100 * o->mfu_now.v, got, in->baseline_step_sec.v, t1tr,
			     want_tr, want);
		else if (fabs(got / want - 1) > 0.05) {
			note(o, "contradiction: MFU went from %.1f%% to %.1f%% (x%.3f) but the step time from %.3g s to %.3g s implies x%.3f at constant work per GPU",
			     100 * in->mfu_baseline.v, 100 * o->mfu_now.v, got, in->baseline_step_sec.v, t1, want);
			o->contradiction = 1;
		}
	}
	if (o->mfu_now.src)
		o->mfu_target = fig(o->mfu_now.v * t1 / w->t2, o->mfu_now.src | o->step_target_sec.src);
}

/* cost: GPU-hours per unit of work is proportional to the step time */
static void cn_cost(const struct hr_canary_in *in, struct hr_canary_out *o, const struct cn_work *w)
{
	double per; /* GPU-hours per unit, per second of step */
	unsigned su = 0;
	if (in->tokens_per_step.src) {
		o->unit_is_tokens = 1;
		per = w->n1 / 3600.0 / in->tokens_per_step.v * 1e6;
		su = in->tokens_per_step.src | in->gpus_now.src;
	} else {
		per = 1000 / 3600.0;
	}
	if (w->have_base)
		o->gpu_hours_per_unit_base = fig(per * in->baseline_step_sec.v, su | in->baseline_step_sec.src);
	o->gpu_hours_per_unit_now = fig(per * w->t1, su | in->step_sec.src);
	o->gpu_hours_per_unit_target = fig(per * w->t2, su | o->step_target_sec.src);
	o->cost_ratio_target = fig(w->t2 / w->t1, o->step_target_sec.src | in->step_sec.src);
	if (in->price_per_gpu_hour.src) {
		o->cost_per_unit_now = fig(o->gpu_hours_per_unit_now.v * in->price_per_gpu_hour.v,
					   o->gpu_hours_per_unit_now.src | in->price_per_gpu_hour.src);
		o->cost_per_unit_target = fig(o->gpu_hours_per_unit_target.v * in->price_per_gpu_hour.v,
					      o->gpu_hours_per_unit_target.src | in->price_per_gpu_hour.src);
	}
}

/*
 * The host CPUs busy while the dataloader workers share the GPU feeder
 * threads' cores, the input wait not measured: a finding of its own. A
 * late feeder delays its rank's step, and every rank waits for it in the
 * collective, so input stalls pass for network stalls. It is among the
 * fixes (after those with a size) and says what to measure; a verdict that
 * would book, or not book, on the other losses measures first.
 */
static void cn_cpu_pinned(const struct hr_canary_in *in, struct hr_canary_out *o)
{
	char w[48] = "";
	if (in->input_wait_frac.src || !in->host_cpu_frac.src || in->host_cpu_frac.v < HR_CANARY_CPU_BUSY ||
	    strcmp(in->loader_placement, "shared"))
		return;
	o->cpu_pinned = 1;
	if (in->loader_workers.src)
		snprintf(w, sizeof(w), "%g ", in->loader_workers.v);
	snprintf(o->cpu_pinned_text, sizeof(o->cpu_pinned_text),
		 "host CPUs %.0f%% busy with %sdataloader workers pinned with the GPU feeder threads, on their cores: "
		 "input stalls will masquerade as network stalls (a late feeder delays its rank, every rank waits for it in the collective)",
		 100 * in->host_cpu_frac.v, w);
	if (o->verdict == HR_VERDICT_BOOK || o->verdict == HR_VERDICT_DONT_BOOK) {
		o->verdict = HR_VERDICT_MEASURE_FIRST;
		o->cpu_pinned = 2; /* the finding alone sets the verdict */
		o->insufficient = 1;
		snprintf(o->measure, sizeof(o->measure), "measure " HR_CANARY_CMD_INPUT_WAIT);
	} else if (o->verdict == HR_VERDICT_MEASURE_FIRST) {
		size_t u = strlen(o->measure);
		snprintf(o->measure + u, sizeof(o->measure) - u, "; and " HR_CANARY_CMD_INPUT_WAIT);
	}
}

/* nothing predicts the target: its figures unknown, never today's held */
static void cn_unpredicted(struct hr_canary_out *o)
{
	struct hr_fig none = { NAN, 0 };
	o->step_target_sec = o->efficiency_target = o->throughput_ratio_target = none;
	o->step_target_fixed_sec = o->efficiency_target_fixed = o->mfu_target = none;
	o->gpu_hours_per_unit_target = o->cost_per_unit_target = o->cost_ratio_target = none;
	o->largest_ok_gpus = 0;
	for (int i = 0; i < HR_LOSS_N; i++)
		if (o->loss[i].known)
			return;
	/* nothing identified and no baseline: no ideal either */
	o->ideal_step_sec = o->over_ideal_frac = none;
}

/* the fixable losses not known, counted, and named into @b (may be NULL) */
static int unknown_fixable(const struct hr_canary_out *o, char *b, size_t n)
{
	static const char *const what[] = { HR_CANARY_CMD_CKPT,
					    "the input wait: " HR_CANARY_CMD_LOADER,
					    "the all-reduce: " HR_CANARY_CMD_ALLREDUCE };
	size_t u = 0;
	int i, k = 0;
	if (b && n)
		b[0] = '\0';
	for (i = 0; i < HR_LOSS_REST; i++) {
		if (o->loss[i].known)
			continue;
		if (b && u < n)
			u += (size_t)snprintf(b + u, n - u, "%s%s", k ? " and " : "", what[i]);
		k++;
	}
	return k;
}

/* the verdict of the model with a step time */
static void cn_verdict(const struct hr_canary_in *in, struct hr_canary_out *o)
{
	int i, fix = 0;
	for (i = 0; i < HR_LOSS_N; i++)
		fix |= o->loss[i].fixable && o->loss[i].significant;
	if (in->wrong_rows > 0)
		o->verdict = HR_VERDICT_FIX_FIRST;
	else if (o->contradiction) {
		o->verdict = HR_VERDICT_MEASURE_FIRST;
		snprintf(o->measure, sizeof(o->measure),
			 "re-measure the inputs the notes name as contradicting each other, on the same steps (wall-clock per step, checkpoints included): "
			 "health_report steps TODAY_LOGS (and --baseline SMALLER_RUN_LOGS) reads them from the job's own logs");
	} else if (fix)
		o->verdict = HR_VERDICT_FIX_FIRST;
	else if (o->insufficient) {
		o->verdict = HR_VERDICT_MEASURE_FIRST;
		snprintf(o->measure, sizeof(o->measure),
			 "measure " HR_CANARY_CMD_STEPS "; or the all-reduce model: " HR_CANARY_CMD_ALLREDUCE);
	} else if (rough_target_fit(in, o)) {
		/* verdict set */
	} else if (o->efficiency_target.v >= in->min_efficiency.v)
		o->verdict = HR_VERDICT_BOOK;
	else if (unknown_fixable(o, NULL, 0) >= 2) {
		/* DO NOT BOOK says nothing here would help: not on losses never measured */
		char what[900];
		unknown_fixable(o, what, sizeof(what));
		o->insufficient = 1;
		o->verdict = HR_VERDICT_MEASURE_FIRST;
		snprintf(o->measure, sizeof(o->measure),
			 "measure %s: the target is predicted at %.1f%% efficiency, but what could be fixed was not measured",
			 what, 100 * o->efficiency_target.v);
	} else
		o->verdict = HR_VERDICT_DONT_BOOK;
}

int hr_canary_compute(const struct hr_canary_in *in, struct hr_canary_out *o)
{
	struct cn_work w;
	int rc;

	memset(o, 0, sizeof(*o));
	o->level_now = o->level_base = o->level_target = -1;
	rc = check_inputs(in);
	if (rc)
		return rc;
	o->wrong_results = in->wrong_rows > 0;
	o->fsdp = in->parallelism == HR_PAR_FSDP;
	snprintf(o->straggler_id, sizeof(o->straggler_id), "%s", in->straggler_id[0] ? in->straggler_id : "the worst rank");
	if (in->wrong_rows > 0)
		note(o, "allreduce_bw found wrong results in %ld rows (left out of the fit): the allocation corrupts data; drain and test it (see the health report) before trusting or booking anything",
		     in->wrong_rows);
	if (in->baseline_step_missing[0])
		note(o, "%s: no baseline", in->baseline_step_missing);
	if (!in->step_sec.src)
		return (rc = compute_comm_only(in, o)) ? rc : (cn_cpu_pinned(in, o), 0);

	memset(&w, 0, sizeof(w));
	w.n1 = in->gpus_now.v;
	w.t1 = in->step_sec.v;
	w.n2 = in->target_gpus.v;
	w.have_base = in->baseline_gpus.src != 0;
	cn_stalls(in, o, &w);
	cn_comm(in, o, &w);
	if (w.have_base)
		cn_ideal_from_baseline(in, o, &w);
	else
		cn_ideal_from_losses(in, o, &w);
	cn_trend(in, o, &w);
	cn_losses(in, o, &w);
	cn_target(in, o, &w);
	cn_mfu(in, o, &w);
	cn_cost(in, o, &w);
	cn_verdict(in, o);
	cn_cpu_pinned(in, o);
	if (o->target_not_measured[0])
		cn_unpredicted(o);
	return 0;
}

