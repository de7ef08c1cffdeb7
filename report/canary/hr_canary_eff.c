/*
 * hr_canary_eff.c - the efficiency question (interface: hr_canary_eff.h;
 * docs/canary.md, "The efficiency question").
 */
#include "report/canary/hr_canary_eff.h"
#include "report/canary/hr_fit.h"
#include "base/ch_common.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static struct hr_fig fig(double v, unsigned src)
{
	struct hr_fig f = { v, src };
	return f;
}

/* the all-reduce level for n ranks: as the canary picks it (docs/canary.md) */
static int level(const struct hr_canary_in *in, double n, unsigned *src)
{
	int want;
	if (!in->comm[HR_INTRA].set && !in->comm[HR_INTER].set)
		return -1;
	if (in->gpus_per_node.src) {
		want = n <= in->gpus_per_node.v ? HR_INTRA : HR_INTER;
		*src |= in->gpus_per_node.src;
	} else {
		want = in->comm[HR_INTER].set ? HR_INTER : HR_INTRA;
		*src |= HR_SRC_ASSUMED;
	}
	if (!in->comm[want].set) {
		want = want == HR_INTRA ? HR_INTER : HR_INTRA;
		*src |= HR_SRC_ASSUMED;
	}
	*src |= in->comm[want].src;
	return want;
}

int hr_canary_eff_compute(const struct hr_canary_in *in, struct hr_canary_eff *o)
{
	double e, et, e0 = 0, e1 = 0;
	unsigned se;

	memset(o, 0, sizeof(*o));
	if (!in->target_efficiency.src)
		return ch_usage_error("missing --target-efficiency (the scaling efficiency to reach)");
	if (!in->gpus_now.src || !in->baseline_gpus.src)
		return ch_usage_error("the efficiency question needs --gpus-now and --baseline-gpus (or --steps and --baseline-steps)");
	if (!(in->baseline_gpus.v < in->gpus_now.v))
		return ch_usage_error("--baseline-gpus '%g' is not below --gpus-now '%g'", in->baseline_gpus.v, in->gpus_now.v);
	o->n0 = in->baseline_gpus;
	o->n1 = in->gpus_now;
	o->eff_target = in->target_efficiency;
	if (in->scaling_efficiency.src) {
		o->eff_now = in->scaling_efficiency;
	} else if (in->baseline_step_sec.src && in->step_sec.src && in->step_sec.v > 0) {
		o->eff_now = fig(in->baseline_step_sec.v / in->step_sec.v, in->baseline_step_sec.src | in->step_sec.src);
		o->step_now = in->step_sec;
	} else {
		snprintf(o->measure, sizeof(o->measure),
			 "today's scaling efficiency: " HR_CANARY_CMD_STEPS ", or give --scaling-efficiency");
		return 0;
	}
	if (!o->step_now.src && in->step_sec.src)
		o->step_now = in->step_sec;
	o->answerable = 1;
	e = o->eff_now.v;
	et = o->eff_target.v;
	se = o->eff_now.src | o->eff_target.src;
	o->reached = e >= et;
	o->shrink_frac = fig(o->reached ? 0 : 1 - e / et, se);
	if (o->step_now.src) {
		o->step_needed = fig(o->step_now.v * e / et, se | o->step_now.src);
		o->shrink_sec = fig(o->reached ? 0 : o->step_now.v - o->step_needed.v, se | o->step_now.src);
	}
	/* the all-reduce of the gradient at both scales */
	if (in->params.src) {
		struct hr_fig gb = in->grad_bytes_per_param.src ? in->grad_bytes_per_param : fig(2, HR_SRC_ASSUMED);
		unsigned s0 = in->params.src | gb.src, s1 = s0;
		int l0 = level(in, o->n0.v, &s0), l1 = level(in, o->n1.v, &s1);
		o->grad_bytes = fig(in->params.v * gb.v, in->params.src | gb.src);
		if (l0 >= 0 && l1 >= 0) {
			o->comm0 = fig(hr_canary_comm_sec(in, l0, o->grad_bytes.v, o->n0.v, &e0), s0);
			o->comm1 = fig(hr_canary_comm_sec(in, l1, o->grad_bytes.v, o->n1.v, &e1), s1);
			o->fsdp = in->parallelism == HR_PAR_FSDP;
		}
	}
	if (o->comm1.src && o->shrink_sec.src && !o->reached) {
		/* what overlap could hide of the growth: not FSDP's first all-gather */
		double grow = (o->comm1.v - e1) - (o->comm0.v - e0), d = o->shrink_sec.v;
		unsigned sc = o->comm0.src | o->comm1.src | o->shrink_sec.src;
		o->comm_can = grow >= d;
		if (grow > 0)
			o->hide_frac = fig(d / grow, sc);
		if (d < o->comm1.v)
			o->busbw_factor = fig(o->comm1.v / (o->comm1.v - d), sc);
	} else if (!o->reached && !o->comm1.src) {
		snprintf(o->measure, sizeof(o->measure), "whether the all-reduce can give it: %s" HR_CANARY_CMD_ALLREDUCE
			 " (or give --alpha-us/--bw-gbps)%s", in->params.src ? "" : "--params (the gradient's size) and ",
			 o->step_now.src ? "" : "; and today's step time (--step-time, or --steps TODAY_LOGS)");
	} else if (!o->reached) {
		/* the all-reduce is known, today's step is not: it can give the
		 * shrink only if the step is short enough */
		double grow = o->comm1.v - o->comm0.v;
		unsigned sc = o->comm0.src | o->comm1.src | o->shrink_frac.src;
		if (grow > 0) {
			o->step_max_for_comm = fig(grow / o->shrink_frac.v, sc);
			snprintf(o->measure, sizeof(o->measure),
				 "today's step time (--step-time, or today's step logs: health_report canary --steps TODAY_LOGS): "
				 "the all-reduce's growth since %g GPUs (%.3f s) can give %.1f%% of the step only if the step is at most %.3f s",
				 o->n0.v, grow, 100 * o->shrink_frac.v, o->step_max_for_comm.v);
		} else {
			snprintf(o->measure, sizeof(o->measure),
				 "where today's step goes (the job's step logs: health_report steps TODAY_LOGS; stragglers, input wait: "
				 HR_CANARY_CMD_LOADER "): the all-reduce did not grow since %g GPUs", o->n0.v);
		}
	}
	if (!o->reached && !o->hide_frac.src && !o->busbw_factor.src && !o->measure[0])
		snprintf(o->measure, sizeof(o->measure),
			 "where today's step goes (the job's step logs: health_report steps TODAY_LOGS; stragglers, input wait: "
			 HR_CANARY_CMD_LOADER "): the all-reduce did not grow since %g GPUs", o->n0.v);
	return 0;
}

static void row(FILE *f, const char *label, const char *value, unsigned src)
{
	char b[48];
	fprintf(f, "  %-40s %s [%s]\n", label, value, hr_src_label(src, b, sizeof(b)));
}

void hr_canary_eff_print(FILE *f, const struct hr_canary_eff *o)
{
	char v[300], l[96];

	fprintf(f, "\nthe efficiency question: %g -> %g GPUs at %.1f%%, can it reach %.1f%%?\n", o->n0.v, o->n1.v,
		100 * o->eff_now.v, 100 * o->eff_target.v);
	if (!o->answerable) {
		fprintf(f, "  not answered: MEASURE FIRST %s\n", o->measure);
		return;
	}
	snprintf(l, sizeof(l), "scaling efficiency at %g GPUs", o->n1.v);
	snprintf(v, sizeof(v), "%.1f%% (vs %g GPUs), asked %.1f%%", 100 * o->eff_now.v, o->n0.v, 100 * o->eff_target.v);
	row(f, l, v, o->eff_now.src | o->eff_target.src);
	if (o->reached) {
		fprintf(f, "  answer: already there: %.1f%% >= %.1f%%\n", 100 * o->eff_now.v, 100 * o->eff_target.v);
		return;
	}
	if (o->shrink_sec.src) {
		snprintf(v, sizeof(v), "%.1f%%: %.3f s -> %.3f s (%.3f s less per step)", 100 * o->shrink_frac.v,
			 o->step_now.v, o->step_needed.v, o->shrink_sec.v);
		row(f, "today's step must shrink by", v, o->shrink_sec.src);
	} else {
		snprintf(v, sizeof(v), "%.1f%% of today's step (1 - %.3f / %.3f)", 100 * o->shrink_frac.v, o->eff_now.v,
			 o->eff_target.v);
		row(f, "today's step must shrink by", v, o->shrink_frac.src);
	}
	if (o->comm1.src) {
		snprintf(l, sizeof(l), "%s at %g / %g GPUs", o->fsdp ? "FSDP collectives" : "gradient all-reduce", o->n0.v, o->n1.v);
		snprintf(v, sizeof(v), "%.3f s / %.3f s (%.3g GB)", o->comm0.v, o->comm1.v, o->grad_bytes.v / 1e9);
		row(f, l, v, o->comm0.src | o->comm1.src);
	}
	if (o->hide_frac.src || o->busbw_factor.src) {
		if (o->comm_can)
			snprintf(v, sizeof(v), "hide %.0f%% of the all-reduce's growth since %g GPUs behind compute, or raise busbw at %g GPUs x%.2f",
				 100 * o->hide_frac.v, o->n0.v, o->n1.v, o->busbw_factor.v);
		else if (o->busbw_factor.src)
			snprintf(v, sizeof(v), "more than the all-reduce's whole growth since %g GPUs (%.3f s): hiding it is not enough; busbw at %g GPUs x%.2f, or stragglers and input wait must give the rest",
				 o->n0.v, o->comm1.v - o->comm0.v, o->n1.v, o->busbw_factor.v);
		else
			snprintf(v, sizeof(v), "more than the whole all-reduce at %g GPUs: the all-reduce alone cannot give it",
				 o->n1.v);
		row(f, "what the all-reduce would have to give", v, o->shrink_sec.src | o->comm1.src);
		fprintf(f, "  answer: %s\n", o->comm_can ? "yes, if the exposed communication shrinks by that much (overlap or busbw); re-measure after"
			: "not from the communication alone: profile the step for stragglers, input wait and launch overheads");
	} else {
		fprintf(f, "  answer: only if %.1f%% of today's step goes; MEASURE FIRST %s\n", 100 * o->shrink_frac.v,
			o->measure);
	}
}

static json_t *jf(struct hr_fig f)
{
	char b[48];
	if (!f.src)
		return json_null();
	return json_pack("{s:f, s:s}", "value", f.v, "source", hr_src_label(f.src, b, sizeof(b)));
}

json_t *hr_canary_eff_json(const struct hr_canary_eff *o)
{
	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:b, s:b, s:b, s:s?, s:o}",
			 "gpus_baseline", jf(o->n0), "gpus_now", jf(o->n1), "efficiency_now", jf(o->eff_now),
			 "efficiency_target", jf(o->eff_target), "step_now_sec", jf(o->step_now),
			 "step_needed_sec", jf(o->step_needed), "shrink_frac", jf(o->shrink_frac),
			 "shrink_sec", jf(o->shrink_sec), "comm_baseline_sec", jf(o->comm0), "comm_now_sec", jf(o->comm1),
			 "hide_frac", jf(o->hide_frac), "reached", o->reached, "comm_can", o->comm_can,
			 "answerable", o->answerable, "measure", o->measure[0] ? o->measure : NULL,
			 "step_max_for_comm_sec", jf(o->step_max_for_comm));
}
