/*
 * hr_canary_print.c - the pre-scaling canary's report and its JSON (the
 * model is in hr_canary.c, the options in hr_canary_cli.c).
 * Formats: docs/canary.md ("Output"); interface: hr_canary.h.
 */
#include "report/canary/hr_canary.h"
#include "report/hr_util.h"
#include "base/ch_common.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define loss_name hr_canary_loss_name
#define loss_key hr_canary_loss_key
/* the communication rows' name: the model the canary used */
#define BYTES_NAME(in) ((in)->parallelism == HR_PAR_FSDP ? "gradient (and parameters) per step" : \
			"gradient all-reduced per step")
#define COMM_NAME(in) ((in)->parallelism == HR_PAR_FSDP ? "FSDP collectives" : "gradient all-reduce")
/* the collectives at the target, named by the model used */
#define COMM_TARGET(in) ((in)->parallelism == HR_PAR_FSDP ? "FSDP all-gathers + reduce-scatter" : "all-reduce")

/* ------------------------------------------------------------ the report */

#define SRCBUF 48

static void row(FILE *f, const char *label, const char *value, unsigned src)
{
	char b[SRCBUF];
	fprintf(f, "  %-40s %-34s [%s]\n", label, value, hr_src_label(src, b, sizeof(b)));
}

/* what to do about a loss (@b: room for the straggler's, which names it) */
static const char *fix_advice(const struct hr_canary_out *o, enum hr_loss_kind k, char *b, size_t n)
{
	switch (k) {
	case HR_LOSS_CKPT:
		return "make the checkpoint asynchronous (snapshot to host memory, write in the background) or write it less often";
	case HR_LOSS_INPUT:
		return "give the dataloader its own cores: move workers off the GPU feeder cores (see loader_contention's recommendation), or add workers";
	case HR_LOSS_COMM:
		if (o->fsdp)
			return "prefetch the parameter all-gathers (FSDP's forward and backward prefetch) and overlap the gradient reduce-scatter with the backward pass, or shard within a node (hybrid sharding); check the fabric's busbw against its expectation";
		return "overlap the gradient all-reduce with the backward pass (gradient bucketing), and check the fabric's busbw against its expectation";
	case HR_LOSS_STRAGGLER:
		snprintf(b, n, "replace or drain the GPU of %s (check its node: health report, dcgmi diag) or re-run without it",
			 o->straggler_id);
		return b;
	default:
		return o->loss[HR_LOSS_STRAGGLER].known ?
			"profile a step at today's size: kernel launch overheads and data-dependent work are not modelled" :
			"profile a step at today's size: stragglers, kernel launch overheads and data-dependent work are not modelled";
	}
}

static void fmt_time(char *b, size_t n, double sec)
{
	if (sec >= 0.1)
		snprintf(b, n, "%.2f s", sec);
	else if (sec >= 1e-4)
		snprintf(b, n, "%.2f ms", sec * 1e3);
	else
		snprintf(b, n, "%.2f us", sec * 1e6);
}

static void fmt_dur(char *b, size_t n, double sec)
{
	if (sec >= 60)
		snprintf(b, n, "%.3g min", sec / 60);
	else
		snprintf(b, n, "%.3g s", sec);
}

static void fmt_units(char *b, size_t n, double v, const char *unit)
{
	if (v >= 1e12) snprintf(b, n, "%.3g T%s", v / 1e12, unit);
	else if (v >= 1e9) snprintf(b, n, "%.3g G%s", v / 1e9, unit);
	else if (v >= 1e6) snprintf(b, n, "%.3g M%s", v / 1e6, unit);
	else if (v >= 1e3) snprintf(b, n, "%.3g k%s", v / 1e3, unit);
	else snprintf(b, n, "%.3g %s", v, unit);
}

void hr_canary_fixes_text(const struct hr_canary_out *o, char *b, size_t n)
{
	size_t used = 0;
	int i, k = 0, cnt = 0;

	b[0] = '\0';
	if (o->wrong_results) {
		cnt++;
		k++;
		used += (size_t)snprintf(b, n, "the wrong all-reduce results");
	}
	for (i = 0; i < HR_LOSS_N; i++) {
		const struct hr_loss *l = &o->loss[o->order[i]];
		cnt += l->fixable && l->significant;
	}
	for (i = 0; i < HR_LOSS_N; i++) {
		const struct hr_loss *l = &o->loss[o->order[i]];
		static const char *const what[] = { "the checkpoint", "the host CPU contention",
						    "the exposed communication", "", "the straggler " };
		if (!(l->fixable && l->significant))
			continue;
		k++;
		used += (size_t)snprintf(b + used, used < n ? n - used : 0, "%s%s%s",
					 k == 1 ? "" : k == cnt ? " and " : ", ", what[l->kind],
					 l->kind == HR_LOSS_STRAGGLER ? o->straggler_id : "");
	}
	if (o->cpu_pinned && !(o->loss[HR_LOSS_INPUT].known && o->loss[HR_LOSS_INPUT].significant))
		snprintf(b + used, used < n ? n - used : 0, "%sthe host CPU contention (dataloader workers on the feeder threads' cores)",
			 k ? " and " : "");
}

static void print_model_rows(FILE *f, const struct hr_canary_in *in, const struct hr_canary_out *o)
{
	static const char *const lv[] = { "intra-node", "inter-node" };
	char v[256], a[96];
	int k;

	fprintf(f, "  %s\n", hr_canary_model_text(in));
	for (k = 0; k < 2; k++) {
		int l = k ? o->level_target : o->level_now;
		const struct hr_comm_model *m;
		if (l < 0 || (k && l == o->level_now))
			continue;
		m = &in->comm[l];
		snprintf(a, sizeof(a), "all-reduce model (%s)", lv[l]);
		snprintf(v, sizeof(v), "%s: alpha %.3g us, B %.4g GB/s (%s)", hr_fit_model_name(m->fit.model),
			 m->fit.alpha_us, m->fit.bw_gbps, m->algo);
		row(f, a, v, m->src);
	}
}

static void print_verdict_head(FILE *f, const struct hr_canary_in *in, const struct hr_canary_out *o)
{
	double n1 = in->gpus_now.v, n2 = in->target_gpus.v;
	char v[HR_CANARY_FIXES_TEXT];

	fprintf(f, "\nverdict: %s\n", o->verdict == HR_VERDICT_BOOK ? "BOOK" :
		o->verdict == HR_VERDICT_FIX_FIRST ? "FIX FIRST, then re-measure" :
		o->verdict == HR_VERDICT_MEASURE_FIRST ?
		(o->contradiction ? "MEASURE FIRST: the inputs contradict each other" :
		 o->rough_fit ? "MEASURE FIRST: the all-reduce fit is too rough to predict the target" :
		 o->cpu_pinned == 2 ? "MEASURE FIRST: the input wait is not measured on a busy host with the workers on the feeders' cores" :
		 "MEASURE FIRST: too little data to predict the target") : "DO NOT BOOK");
	if (o->verdict == HR_VERDICT_FIX_FIRST) {
		hr_canary_fixes_text(o, v, sizeof(v));
		fprintf(f, "  do not book %g GPUs before fixing %s and re-measuring at %g GPUs\n", n2, v, n1);
	} else if (o->verdict == HR_VERDICT_MEASURE_FIRST) {
		fprintf(f, "  do not book %g GPUs on these inputs: %s, then re-run the canary\n", n2, o->measure);
	}
}

#define CPU_PINNED_ADVICE "give the dataloader its own cores: move the workers off the GPU feeder cores " \
	"(loader_contention's isolated placement) or run fewer of them; size not measured: measure "

/* the reasons' last line (the host CPU finding), then the fixes in order of
 * size, the host CPU finding, of no measured size, after them */
static void print_fixes(FILE *f, const struct hr_canary_out *o)
{
	char adv[1500];
	int i, k = 0;

	if (o->cpu_pinned)
		fprintf(f, "    - %s\n", o->cpu_pinned_text);

	if (o->wrong_results)
		fprintf(f, "  fixes, in order of size:\n    %d. wrong all-reduce results: drain the nodes, run dcgmi diag and per-node and per-pair all-reduce tests to find the faulty GPU or link; nothing measured here is trustworthy until then\n",
			++k);

	for (i = 0; i < HR_LOSS_N; i++) {
		const struct hr_loss *l = &o->loss[o->order[i]];
		if (!l->known || !l->significant || !l->fixable)
			continue;
		if (!k++)
			fprintf(f, "  fixes, in order of size:\n");
		if (l->sec.src)
			fprintf(f, "    %d. %s: %s; recovers %.3f s per step (throughput +%.1f%%)\n", k,
				loss_name(l->kind), fix_advice(o, l->kind, adv, sizeof(adv)), l->sec.v, 100 * l->gain_frac.v);
		else
			fprintf(f, "    %d. %s: %s; recovers %.1f%% of the step (throughput +%.1f%%)\n", k,
				loss_name(l->kind), fix_advice(o, l->kind, adv, sizeof(adv)), 100 * l->frac.v, 100 * l->gain_frac.v);
	}
	if (o->cpu_pinned)
		fprintf(f, "%s    %d. host CPU contention (dataloader workers on the feeder threads' cores): " CPU_PINNED_ADVICE
			HR_CANARY_CMD_INPUT_WAIT "\n", k ? "" : "  fixes, in order of size:\n", k + 1);
}

/* the straggler today's step logs named, and what it costs the step */
static void print_straggler(FILE *f, const struct hr_canary_in *in, const struct hr_canary_out *o)
{
	char c[SRCBUF];
	if (!in->straggler[0])
		return;
	if (o->loss[HR_LOSS_STRAGGLER].known) {
		/* a loss of today's step: listed with the others (and among the
		 * fixes when significant); the detail behind its name here */
		fprintf(f, "  straggler: %s\n", in->straggler);
		return;
	}
	fprintf(f, "  straggler: %s costs %.3f s per step, every rank waiting for it [%s]: check its node (health report, dcgmi diag) or leave it out of the allocation\n",
		in->straggler, in->straggler_sec.v, hr_src_label(in->straggler_sec.src, c, sizeof(c)));
}

/* a loader_contention result read but not taken as the input wait, and why */
static void print_input_not_measured(FILE *f, const struct hr_canary_in *in)
{
	if (!in->input_wait_frac.src && in->input_wait_not_measured[0])
		fprintf(f, "  %-40s not measured: %s\n", "input wait", hr_term(in->input_wait_not_measured));
}

static void print_comm_only(FILE *f, const struct hr_canary_in *in, const struct hr_canary_out *o)
{
	char v[256], a[96], b[96], c[SRCBUF];
	double n1 = in->gpus_now.v, n2 = in->target_gpus.v;
	int i;

	fprintf(f, "canary: %g -> %g GPUs; no step time given: checkpoint, input wait and %s scaling only\n", n1, n2,
		in->parallelism == HR_PAR_FSDP ? "FSDP collectives" : "all-reduce");
	fprintf(f, "sources: given = your inputs, measured = result files and step logs, fitted = all-reduce model, assumed = default or model assumption\n\n");
	fprintf(f, "today\n");
	snprintf(v, sizeof(v), "%g", n1);
	row(f, "GPUs (ranks)", v, in->gpus_now.src);
	if (in->ckpt_interval_sec.src) {
		fmt_dur(a, sizeof(a), in->ckpt_block_sec.v);
		fmt_dur(b, sizeof(b), in->ckpt_interval_sec.v);
		snprintf(v, sizeof(v), "%s every %s = %.1f%% of wall-clock", a, b, 100 * o->ckpt_frac.v);
		row(f, "synchronous checkpoint stall", v, o->ckpt_frac.src);
	}
	if (in->input_wait_frac.src) {
		snprintf(v, sizeof(v), "%.1f%% of the training step", 100 * in->input_wait_frac.v);
		row(f, "input wait", v, in->input_wait_frac.src);
		if (in->input_wait_from[0])
			fprintf(f, "  %-40s %s\n", "", hr_term(in->input_wait_from));
	}
	print_input_not_measured(f, in);
	if (o->grad_bytes.src) {
		fmt_units(a, sizeof(a), o->grad_bytes.v, "B");
		row(f, !in->params.src ? "message size predicted" : BYTES_NAME(in), a, o->grad_bytes.src);
	}
	print_model_rows(f, in, o);
	if (o->busbw_now_gbps.src) {
		fmt_time(a, sizeof(a), o->comm_now_sec.v);
		snprintf(v, sizeof(v), "%s, busbw %.4g GB/s", a, o->busbw_now_gbps.v);
		snprintf(b, sizeof(b), "%s at %g GPUs", in->parallelism == HR_PAR_FSDP ? "FSDP collectives" : "all-reduce", n1);
		row(f, b, v, o->comm_now_sec.src);
	}
	fprintf(f, "\nwhere today's step goes, largest share first\n");
	for (i = 0; i < HR_LOSS_N; i++) {
		const struct hr_loss *l = &o->loss[o->order[i]];
		if (!l->known && l->kind == HR_LOSS_INPUT && in->input_wait_not_measured[0]) {
			fprintf(f, "  %d. %-38s not measured: %s\n", i + 1, loss_name(l->kind),
				hr_term(in->input_wait_not_measured));
			continue;
		}
		if (!l->known && l->kind == HR_LOSS_STRAGGLER)
			continue; /* seen in per-rank step logs only */
		if (!l->known) {
			fprintf(f, "  %d. %-38s not known without --step-time%s\n", i + 1, loss_name(l->kind),
				l->kind == HR_LOSS_CKPT ? " or --checkpoint-*" : l->kind == HR_LOSS_INPUT ? " or a loader_contention result" : "");
			continue;
		}
		fprintf(f, "  %d. %-38s %.1f%% of the step; fixed: throughput +%.1f%% [%s]\n", i + 1,
			loss_name(l->kind), 100 * l->frac.v, 100 * l->gain_frac.v,
			hr_src_label(l->frac.src, c, sizeof(c)));
	}
	if (o->busbw_target_gbps.src) {
		fprintf(f, "\nat %g GPUs (predicted)\n", n2);
		fmt_time(a, sizeof(a), o->comm_target_sec.v);
		snprintf(v, sizeof(v), "%s, busbw %.4g GB/s", a, o->busbw_target_gbps.v);
		row(f, COMM_TARGET(in), v, o->comm_target_sec.src);
		snprintf(v, sizeof(v), "%.1f%% of today's (x%.2f the time for %.3gx the GPUs)",
			 100 * o->busbw_ratio_target.v, o->comm_target_sec.v / o->comm_now_sec.v, o->hw_ratio_target.v);
		row(f, "busbw", v, o->busbw_ratio_target.src);
	}
	if (o->nnotes) {
		fprintf(f, "\nnotes\n");
		for (i = 0; i < o->nnotes; i++)
			fprintf(f, "  - %s\n", hr_term(o->notes[i]));
	}
	print_verdict_head(f, in, o);
	if (o->verdict == HR_VERDICT_BOOK)
		fprintf(f, "  book %g GPUs as far as these measurements go: no checkpoint or input-wait share of %.0f%% or more, and the %s keeps %.0f%% or more of today's busbw\n",
			n2, 100 * in->significant_frac.v, COMM_TARGET(in), 100 * in->min_efficiency.v);
	else if (o->verdict == HR_VERDICT_DONT_BOOK)
		fprintf(f, "  do not book %g GPUs: the %s is predicted at %.1f%% of today's busbw (threshold %.0f%%)\n",
			n2, COMM_TARGET(in), 100 * o->busbw_ratio_target.v, 100 * in->min_efficiency.v);
	fprintf(f, "  reasons:\n");
	if (o->wrong_results)
		fprintf(f, "    - allreduce_bw found wrong results in %ld rows: the allocation corrupts data\n", in->wrong_rows);
	for (i = 0; i < HR_LOSS_N; i++) {
		const struct hr_loss *l = &o->loss[o->order[i]];
		if (l->known && l->significant)
			fprintf(f, "    - %s is %.1f%% of the step\n", loss_name(l->kind), 100 * l->frac.v);
	}
	if (o->busbw_ratio_target.src)
		fprintf(f, "    - at %g GPUs the %s keeps %.1f%% of today's busbw (%.4g of %.4g GB/s)\n", n2,
			COMM_TARGET(in), 100 * o->busbw_ratio_target.v, o->busbw_target_gbps.v, o->busbw_now_gbps.v);
	fprintf(f, "    - no step time given: step time, efficiency, MFU and cost at %g GPUs not predicted\n", n2);
	print_fixes(f, o);
	print_straggler(f, in, o);
	if (o->verdict == HR_VERDICT_FIX_FIRST)
		fprintf(f, "  then re-run the canary at %g GPUs (scripts/canary --target-gpus %g)\n", n1, n2);
}

/* the host CPU load beside the input wait: contention when they are busy */
static void print_host_cpu(FILE *f, const struct hr_canary_in *in)
{
	char v[200];
	if (!in->host_cpu_frac.src)
		return;
	if (!in->input_wait_frac.src || in->input_wait_frac.v <= 0)
		snprintf(v, sizeof(v), "%.0f%%", 100 * in->host_cpu_frac.v);
	else if (in->host_cpu_frac.v >= HR_CANARY_CPU_BUSY)
		snprintf(v, sizeof(v), "%.0f%%: the input wait is host CPU contention (busy at %.0f%% or more)",
			 100 * in->host_cpu_frac.v, 100 * HR_CANARY_CPU_BUSY);
	else
		snprintf(v, sizeof(v), "%.0f%%: the input wait is not for want of CPU (storage, decoding, too few workers?)",
			 100 * in->host_cpu_frac.v);
	row(f, "host CPUs busy", v, in->host_cpu_frac.src | (in->input_wait_frac.src ? HR_SRC_ASSUMED : 0));
}

/* today: the step, its checkpoint stall and input wait, the all-reduce model and MFU */
static void print_today(FILE *f, const struct hr_canary_in *in, const struct hr_canary_out *o)
{
	char v[256], a[96], b[96];
	double n1 = in->gpus_now.v, t1 = in->step_sec.v;


	fprintf(f, "today\n");
	if (in->baseline_gpus.src) {
		snprintf(v, sizeof(v), "%.2f s", in->baseline_step_sec.v);
		snprintf(a, sizeof(a), "step time at %g GPUs (baseline)", in->baseline_gpus.v);
		row(f, a, v, in->baseline_step_sec.src);
	}
	snprintf(v, sizeof(v), "%.2f s", t1);
	snprintf(a, sizeof(a), "step time at %g GPUs (today)", n1);
	row(f, a, v, in->step_sec.src);
	if (in->baseline_gpus.src) {
		snprintf(a, sizeof(a), "throughput %g -> %g GPUs", in->baseline_gpus.v, n1);
		snprintf(v, sizeof(v), "x%.2f for %.3gx the hardware", o->throughput_ratio_now.v, o->hw_ratio_now.v);
		row(f, a, v, o->throughput_ratio_now.src);
		snprintf(a, sizeof(a), "scaling efficiency at %g GPUs", n1);
		snprintf(v, sizeof(v), "%.1f%% (vs %g GPUs)", 100 * o->efficiency_now.v, in->baseline_gpus.v);
		row(f, a, v, o->efficiency_now.src);
	}
	if (in->ckpt_interval_sec.src) {
		fmt_dur(a, sizeof(a), in->ckpt_block_sec.v);
		fmt_dur(b, sizeof(b), in->ckpt_interval_sec.v);
		snprintf(v, sizeof(v), "%s every %s = %.1f%% of wall-clock", a, b, 100 * o->ckpt_frac.v);
		row(f, "synchronous checkpoint stall", v, o->ckpt_frac.src);
		snprintf(v, sizeof(v), "%.2f s, %.0f%% over the ideal %.2f s",
			 o->train_step_sec.v, 100 * o->over_ideal_frac.v, o->ideal_step_sec.v);
		row(f, "step without the checkpoint stall", v,
		    o->train_step_sec.src | o->over_ideal_frac.src);
	} else if (o->ideal_step_sec.src) {
		snprintf(v, sizeof(v), "%.2f s (%.0f%% over it)", o->ideal_step_sec.v, 100 * o->over_ideal_frac.v);
		row(f, "ideal step (weak scaling)", v, o->ideal_step_sec.src);
	} else {
		fprintf(f, "  %-40s not measured: no baseline run and no loss identified in today's step\n",
			"ideal step (weak scaling)");
	}
	if (in->input_wait_frac.src) {
		snprintf(v, sizeof(v), "%.1f%% of the step = %.3f s", 100 * in->input_wait_frac.v, o->input_wait_sec.v);
		row(f, "input wait", v, o->input_wait_sec.src);
		if (in->input_wait_from[0])
			fprintf(f, "  %-40s %s\n", "", hr_term(in->input_wait_from));
	}
	print_input_not_measured(f, in);
	print_host_cpu(f, in);
	if (o->grad_bytes.src) {
		fmt_units(a, sizeof(a), o->grad_bytes.v, "B");
		row(f, BYTES_NAME(in), a, o->grad_bytes.src);
	}
	if (o->level_now >= 0) {
		print_model_rows(f, in, o);
		if (in->baseline_gpus.src) {
			fmt_time(b, sizeof(b), o->comm_base_sec.v);
			snprintf(a, sizeof(a), "%s at %g GPUs", COMM_NAME(in), in->baseline_gpus.v);
			row(f, a, b, o->comm_base_sec.src);
		}
		fmt_time(b, sizeof(b), o->comm_now_sec.v);
		snprintf(a, sizeof(a), "%s at %g GPUs", COMM_NAME(in), n1);
		row(f, a, b, o->comm_now_sec.src);
		snprintf(v, sizeof(v), "%.0f%%%s", 100 * o->overlap.v,
			 in->overlap.src ? "" : o->overlap.src == HR_SRC_ASSUMED ? "" : " (calibrated from the growth since the baseline)");
		row(f, in->parallelism == HR_PAR_FSDP ? "hidden behind compute (but the 1st gather)" :
		    "all-reduce hidden behind compute", v, o->overlap.src);
	}
	if (o->mfu_now.src) {
		snprintf(v, sizeof(v), "%.1f%%", 100 * o->mfu_now.v);
		row(f, "MFU today", v, o->mfu_now.src);
	}
}

/* where today's step goes, largest loss first */
static void print_losses(FILE *f, const struct hr_canary_in *in, const struct hr_canary_out *o)
{
	char v[256], a[96], c[SRCBUF];
	double t1 = in->step_sec.v;
	int i;


	if (o->ideal_step_sec.src)
		fprintf(f, "\nwhere today's step goes, largest loss first (ideal %.2f s, today %.2f s)\n",
			o->ideal_step_sec.v, t1);
	else
		fprintf(f, "\nwhere today's step goes, largest loss first (ideal not measured, today %.2f s)\n", t1);
	for (i = 0; i < HR_LOSS_N; i++) {
		const struct hr_loss *l = &o->loss[o->order[i]];
		if (!l->known && l->kind == HR_LOSS_STRAGGLER)
			continue; /* seen in per-rank step logs only: last, being unknown */
		if (!l->known) {
			static const char *const why[] = { "no --checkpoint-interval/--checkpoint-block",
							   "no loader_contention result or --input-wait",
							   NULL,
							   "needs --baseline-gpus/--baseline-step-time" };
			int model = in->comm[0].set || in->comm[1].set;
			const char *w = why[l->kind] ? why[l->kind] : !in->params.src && !model ?
					"no --params and no all-reduce model (no allreduce_bw results, no --alpha-us/--bw-gbps)" :
					!in->params.src ? "no --params (the gradient's size)" :
					"no all-reduce model (no allreduce_bw results, no --alpha-us/--bw-gbps)";
			if (l->kind == HR_LOSS_COMM && o->comm_not_fitted[0])
				fprintf(f, "  %d. %-38s %s\n", i + 1, loss_name(l->kind), hr_term(o->comm_not_fitted));
			else if (l->kind == HR_LOSS_INPUT && in->input_wait_not_measured[0])
				fprintf(f, "  %d. %-38s not measured: %s\n", i + 1, loss_name(l->kind),
					hr_term(in->input_wait_not_measured));
			else
				fprintf(f, "  %d. %-38s not known: %s\n", i + 1, loss_name(l->kind), w);
			continue;
		}
		fmt_time(a, sizeof(a), l->sec.v);
		if (l->fixable)
			snprintf(v, sizeof(v), "%s = %.1f%% of the step; fixed: %.2f s per step, throughput +%.1f%%",
				 a, 100 * l->frac.v, l->fixed_step_sec.v, 100 * l->gain_frac.v);
		else
			snprintf(v, sizeof(v), "%s = %.1f%% of the step", a, 100 * l->frac.v);
		fprintf(f, "  %d. %-38s %s [%s]\n", i + 1, loss_name(l->kind), v,
			hr_src_label(l->sec.src, c, sizeof(c)));
	}
}

/* the prediction at the target */
static void print_target(FILE *f, const struct hr_canary_in *in, const struct hr_canary_out *o)
{
	char v[256], a[96];
	double n1 = in->gpus_now.v, n2 = in->target_gpus.v;


	fprintf(f, "\nat %g GPUs (predicted)\n", n2);
	if (o->target_not_measured[0]) {
		fprintf(f, "  %-40s %s\n", "step time, scaling efficiency", o->target_not_measured);
		snprintf(a, sizeof(a), "largest allocation at >= %.0f%% efficiency", 100 * in->min_efficiency.v);
		fprintf(f, "  %-40s not measured (as above)\n", a);
		return;
	}
	snprintf(v, sizeof(v), "%.2f s", o->step_target_sec.v);
	row(f, "step time", v, o->step_target_sec.src);
	if (o->level_target >= 0) {
		fmt_time(a, sizeof(a), o->comm_target_sec.v);
		snprintf(v, sizeof(v), "%s, busbw %.4g GB/s", a, o->busbw_target_gbps.v);
		row(f, COMM_TARGET(in), v, o->comm_target_sec.src);
	}
	snprintf(v, sizeof(v), "%.1f%% (ideal %.2f s)", 100 * o->efficiency_target.v, o->ideal_step_sec.v);
	row(f, "scaling efficiency", v, o->efficiency_target.src);
	snprintf(a, sizeof(a), "throughput %g -> %g GPUs", n1, n2);
	snprintf(v, sizeof(v), "x%.2f for %.3gx the hardware", o->throughput_ratio_target.v, o->hw_ratio_target.v);
	row(f, a, v, o->throughput_ratio_target.src);
	if (o->mfu_target.src) {
		snprintf(v, sizeof(v), "%.1f%%", 100 * o->mfu_target.v);
		row(f, "MFU", v, o->mfu_target.src);
	}
	if (o->trend_used)
		row(f, "step time after the fixes below", "not predicted: the measured trend mixes the losses; re-measure after the fixes", HR_SRC_ASSUMED);
	else if (o->step_target_fixed_sec.v < o->step_target_sec.v) {
		snprintf(v, sizeof(v), "%.2f s, efficiency %.1f%%", o->step_target_fixed_sec.v,
			 100 * o->efficiency_target_fixed.v);
		row(f, "step time after the fixes below", v, o->step_target_fixed_sec.src);
	}
	if (o->largest_ok_gpus)
		snprintf(v, sizeof(v), "%d GPUs", o->largest_ok_gpus);
	else
		snprintf(v, sizeof(v), "none above %g GPUs", n1);
	snprintf(a, sizeof(a), "largest allocation at >= %.0f%% efficiency", 100 * in->min_efficiency.v);
	row(f, a, v, o->step_target_sec.src | in->min_efficiency.src);
}

/* GPU-hours per unit of work at the baseline, today and at the target */
static void print_cost(FILE *f, const struct hr_canary_in *in, const struct hr_canary_out *o)
{
	char v[256], a[96];
	double n1 = in->gpus_now.v, n2 = in->target_gpus.v, t1 = in->step_sec.v;


	fprintf(f, "\ncost\n");
	{
		const char *unit = o->unit_is_tokens ? "GPU-hours per 1M tokens" : "GPU-hours per 1000 GPU-steps of work";
		if (o->gpu_hours_per_unit_base.src) {
			snprintf(a, sizeof(a), "at %g GPUs", in->baseline_gpus.v);
			snprintf(v, sizeof(v), "%.4g %s", o->gpu_hours_per_unit_base.v, unit);
			row(f, a, v, o->gpu_hours_per_unit_base.src);
		}
		snprintf(a, sizeof(a), "at %g GPUs (today)", n1);
		snprintf(v, sizeof(v), "%.4g %s", o->gpu_hours_per_unit_now.v, unit);
		row(f, a, v, o->gpu_hours_per_unit_now.src);
		snprintf(a, sizeof(a), "at %g GPUs", n2);
		if (o->target_not_measured[0]) {
			fprintf(f, "  %-40s not measured (the step at %g GPUs is not)\n", a, n2);
		} else {
			snprintf(v, sizeof(v), "%.4g %s (x%.2f)", o->gpu_hours_per_unit_target.v, unit, o->cost_ratio_target.v);
			row(f, a, v, o->gpu_hours_per_unit_target.src);
		}
		if (o->cost_per_unit_now.src && o->cost_per_unit_target.src) {
			snprintf(v, sizeof(v), "%.4g today, %.4g at %g GPUs (at %.4g per GPU-hour)",
				 o->cost_per_unit_now.v, o->cost_per_unit_target.v, n2, in->price_per_gpu_hour.v);
			row(f, o->unit_is_tokens ? "price per 1M tokens" : "price per 1000 GPU-steps", v,
			    o->cost_per_unit_target.src);
		}
		if (in->baseline_gpus.src)
			fprintf(f, "  %g -> %g GPUs: %.3gx the hardware for x%.2f the throughput; each unit of work costs x%.2f the GPU-hours\n",
				in->baseline_gpus.v, n1, o->hw_ratio_now.v, o->throughput_ratio_now.v,
				t1 / in->baseline_step_sec.v);
		if (o->throughput_ratio_target.src)
			fprintf(f, "  %g -> %g GPUs: %.3gx the hardware for x%.2f the throughput; each unit of work costs x%.2f the GPU-hours\n",
				n1, n2, o->hw_ratio_target.v, o->throughput_ratio_target.v, o->cost_ratio_target.v);
	}
}

/* the notes, the verdict, its reasons and what to do */
static void print_verdict(FILE *f, const struct hr_canary_in *in, const struct hr_canary_out *o)
{
	double n1 = in->gpus_now.v, n2 = in->target_gpus.v;
	int i;


	if (o->nnotes) {
		fprintf(f, "\nnotes\n");
		for (i = 0; i < o->nnotes; i++)
			fprintf(f, "  - %s\n", hr_term(o->notes[i]));
	}

	print_verdict_head(f, in, o);
	if (o->verdict == HR_VERDICT_BOOK) {
		fprintf(f, "  book %g GPUs: predicted efficiency %.1f%% is at or above %.0f%% and no loss of %.0f%% or more is left to fix\n",
			n2, 100 * o->efficiency_target.v, 100 * in->min_efficiency.v, 100 * in->significant_frac.v);
	} else if (o->verdict == HR_VERDICT_DONT_BOOK) {
		fprintf(f, "  do not book %g GPUs: predicted efficiency %.1f%% is below %.0f%% and no single fixable loss is %.0f%% of the step or more\n",
			n2, 100 * o->efficiency_target.v, 100 * in->min_efficiency.v, 100 * in->significant_frac.v);
	}
	fprintf(f, "  reasons:\n");
	if (o->wrong_results)
		fprintf(f, "    - allreduce_bw found wrong results in %ld rows: the allocation corrupts data\n", in->wrong_rows);
	if (in->baseline_gpus.src)
		fprintf(f, "    - %g -> %g GPUs gave x%.2f the throughput for %.3gx the hardware (%.1f%% scaling efficiency)\n",
			in->baseline_gpus.v, n1, o->throughput_ratio_now.v, o->hw_ratio_now.v, 100 * o->efficiency_now.v);
	if (o->target_not_measured[0])
		fprintf(f, "    - the efficiency at %g GPUs is %s\n", n2, o->target_not_measured);
	else
		fprintf(f, "    - at %g GPUs the predicted step is %.2f s: %.1f%% efficiency against the ideal %.2f s (threshold %.0f%%)\n",
			n2, o->step_target_sec.v, 100 * o->efficiency_target.v, o->ideal_step_sec.v,
			100 * in->min_efficiency.v);
	for (i = 0; i < HR_LOSS_N; i++) {
		const struct hr_loss *l = &o->loss[o->order[i]];
		if (l->known && l->significant)
			fprintf(f, "    - %s costs %.1f%% of today's step (%.3f s)\n", loss_name(l->kind),
				100 * l->frac.v, l->sec.v);
	}
	{
		print_fixes(f, o);
		if (o->loss[HR_LOSS_REST].known && o->loss[HR_LOSS_REST].significant)
			fprintf(f, "  also investigate %.3f s per step (%.1f%%) that the model does not explain: %s\n",
				o->loss[HR_LOSS_REST].sec.v, 100 * o->loss[HR_LOSS_REST].frac.v,
				fix_advice(o, HR_LOSS_REST, NULL, 0));
		print_straggler(f, in, o);
		if (o->verdict == HR_VERDICT_FIX_FIRST)
			fprintf(f, "  then re-run the canary at %g GPUs (scripts/canary --target-gpus %g)\n", n1, n2);
		else if (o->verdict == HR_VERDICT_DONT_BOOK)
			fprintf(f, "  %s\n", o->largest_ok_gpus ? "book at most the largest allocation predicted at or above the threshold (above)" :
				"stay at today's allocation: nothing measured here would make the target efficient");
	}
}

void hr_canary_print(FILE *f, const struct hr_canary_in *in, const struct hr_canary_out *o)
{
	if (o->comm_only) {
		print_comm_only(f, in, o);
		return;
	}
	fprintf(f, "canary: %g -> %g GPUs, weak scaling (work per GPU and step held constant)\n", in->gpus_now.v, in->target_gpus.v);
	fprintf(f, "sources: given = your inputs, measured = result files and step logs, fitted = all-reduce model, assumed = default or model assumption\n\n");
	print_today(f, in, o);
	print_losses(f, in, o);
	print_target(f, in, o);
	print_cost(f, in, o);
	print_verdict(f, in, o);
}

/* ------------------------------------------------------------------ JSON */

static json_t *jfig(struct hr_fig f, const char *unit)
{
	char b[SRCBUF];
	/* counts and sizes (GPUs, parameters, tokens, bytes) as exact integers */
	int count = !strcmp(unit, "gpus") || !strcmp(unit, "1") || !strcmp(unit, "tokens") ||
		    !strcmp(unit, "bytes");
	if (!f.src)
		return json_null();
	if (count && isfinite(f.v) && f.v == floor(f.v) && fabs(f.v) < 9007199254740992.0)
		return json_pack("{s:I, s:s, s:s}", "value", (json_int_t)f.v, "unit", unit,
				 "source", hr_src_label(f.src, b, sizeof(b)));
	return json_pack("{s:f, s:s, s:s}", "value", f.v, "unit", unit,
			 "source", hr_src_label(f.src, b, sizeof(b)));
}

json_t *hr_canary_json(const struct hr_canary_in *in, const struct hr_canary_out *o)
{
	json_t *doc = json_object(), *ins = json_object(), *figs = json_object();
	json_t *losses = json_array(), *notes = json_array(), *fixes = json_array();
	char adv[1500];
	int i;

	if (!doc || !ins || !figs || !losses || !notes || !fixes)
		goto oom;
#define IN(name, field, unit) json_object_set_new(ins, name, jfig(in->field, unit))
	IN("gpus_now", gpus_now, "gpus");
	IN("step_time_sec", step_sec, "s");
	IN("target_gpus", target_gpus, "gpus");
	IN("baseline_gpus", baseline_gpus, "gpus");
	IN("baseline_step_time_sec", baseline_step_sec, "s");
	IN("params", params, "1");
	IN("grad_bytes_per_param", grad_bytes_per_param, "bytes");
	IN("mfu_now", mfu_now, "fraction");
	IN("baseline_mfu", mfu_baseline, "fraction");
	IN("peak_tflops", peak_tflops, "TFLOP/s");
	IN("tokens_per_step", tokens_per_step, "tokens");
	IN("checkpoint_interval_sec", ckpt_interval_sec, "s");
	IN("checkpoint_block_sec", ckpt_block_sec, "s");
	IN("input_wait_frac", input_wait_frac, "fraction");
	IN("host_cpu_frac", host_cpu_frac, "fraction");
	IN("loader_workers", loader_workers, "1");
	json_object_set_new(ins, "loader_placement", in->loader_placement[0] ? json_string(in->loader_placement) : json_null());
	json_object_set_new(ins, "parallelism", json_string(in->parallelism == HR_PAR_FSDP ? "fsdp" : "ddp"));
	IN("overlap", overlap, "fraction");
	IN("gpus_per_node", gpus_per_node, "gpus");
	IN("price_per_gpu_hour", price_per_gpu_hour, "currency/GPU-hour");
	IN("min_efficiency", min_efficiency, "fraction");
	IN("significant_frac", significant_frac, "fraction");
#undef IN
#define FIG(name, field, unit) json_object_set_new(figs, name, jfig(o->field, unit))
	FIG("busbw_now_gbps", busbw_now_gbps, "GB/s");
	FIG("busbw_ratio_target", busbw_ratio_target, "x");
	FIG("ideal_step_sec", ideal_step_sec, "s");
	FIG("hw_ratio_now", hw_ratio_now, "x");
	FIG("throughput_ratio_now", throughput_ratio_now, "x");
	FIG("efficiency_now", efficiency_now, "fraction");
	FIG("checkpoint_frac", ckpt_frac, "fraction");
	FIG("checkpoint_sec", ckpt_sec, "s");
	FIG("train_step_sec", train_step_sec, "s");
	FIG("over_ideal_frac", over_ideal_frac, "fraction");
	FIG("input_wait_sec", input_wait_sec, "s");
	FIG("grad_bytes", grad_bytes, "bytes");
	FIG("comm_now_sec", comm_now_sec, "s");
	FIG("comm_baseline_sec", comm_base_sec, "s");
	FIG("comm_target_sec", comm_target_sec, "s");
	FIG("busbw_target_gbps", busbw_target_gbps, "GB/s");
	FIG("overlap", overlap, "fraction");
	FIG("exposed_comm_sec", exposed_comm_sec, "s");
	FIG("step_target_sec", step_target_sec, "s");
	FIG("efficiency_target", efficiency_target, "fraction");
	FIG("hw_ratio_target", hw_ratio_target, "x");
	FIG("throughput_ratio_target", throughput_ratio_target, "x");
	FIG("step_target_fixed_sec", step_target_fixed_sec, "s");
	FIG("efficiency_target_fixed", efficiency_target_fixed, "fraction");
	FIG("mfu_computed", mfu_computed, "fraction");
	FIG("mfu_now", mfu_now, "fraction");
	FIG("mfu_target", mfu_target, "fraction");
	FIG("gpu_hours_per_unit_baseline", gpu_hours_per_unit_base, "GPU-hours/unit");
	FIG("gpu_hours_per_unit_now", gpu_hours_per_unit_now, "GPU-hours/unit");
	FIG("gpu_hours_per_unit_target", gpu_hours_per_unit_target, "GPU-hours/unit");
	FIG("cost_per_unit_now", cost_per_unit_now, "currency/unit");
	FIG("cost_per_unit_target", cost_per_unit_target, "currency/unit");
	FIG("cost_ratio_target", cost_ratio_target, "x");
	FIG("exposed_comm_target_sec", exposed_comm_target_sec, "s");
#undef FIG
	json_object_set_new(figs, "unit_of_work", json_string(o->unit_is_tokens ? "1M tokens" : "1000 GPU-steps"));
	json_object_set_new(figs, "largest_ok_gpus", o->target_not_measured[0] ? json_null() :
			    json_integer(o->largest_ok_gpus));
	json_object_set_new(doc, "target_not_measured", o->target_not_measured[0] ?
			    json_string(o->target_not_measured) : json_null());
	for (i = 0; i < HR_LOSS_N; i++) {
		const struct hr_loss *l = &o->loss[o->order[i]];
		json_array_append_new(losses, json_pack("{s:s, s:b, s:b, s:b, s:o, s:o, s:o, s:o}",
			"kind", loss_key(l->kind), "known", l->known, "fixable", l->fixable,
			"significant", l->significant, "sec", jfig(l->sec, "s"),
			"frac", jfig(l->frac, "fraction"), "fixed_step_sec", jfig(l->fixed_step_sec, "s"),
			"gain_frac", jfig(l->gain_frac, "fraction")));
		if (l->known && l->significant && l->fixable)
			json_array_append_new(fixes, json_pack("{s:s, s:s}", "kind", loss_key(l->kind),
							       "advice", fix_advice(o, l->kind, adv, sizeof(adv))));
	}
	if (o->cpu_pinned)
		json_array_append_new(fixes, json_pack("{s:s, s:s}", "kind", "host_cpu_pinned_workers",
						       "advice", CPU_PINNED_ADVICE HR_CANARY_CMD_INPUT_WAIT));
	json_object_set_new(doc, "model", json_string(hr_canary_model_text(in) + strlen("model: ")));
	json_object_set_new(doc, "host_cpu_finding", o->cpu_pinned ? json_string(o->cpu_pinned_text) : json_null());
	for (i = 0; i < o->nnotes; i++)
		json_array_append_new(notes, json_string(o->notes[i]));
	json_object_set_new(doc, "schema", json_string("clusterhealth.canary"));
	json_object_set_new(doc, "schema_version", json_integer(1));
	json_object_set_new(doc, "inputs", ins);
	json_object_set_new(doc, "figures", figs);
	json_object_set_new(doc, "losses", losses);
	json_object_set_new(doc, "fixes", fixes);
	json_object_set_new(doc, "notes", notes);
	json_object_set_new(doc, "verdict", json_string(hr_canary_verdict_name(o->verdict)));
	json_object_set_new(doc, "comm_only", json_boolean(o->comm_only));
	json_object_set_new(doc, "contradiction", json_boolean(o->contradiction));
	json_object_set_new(doc, "rough_fit", json_boolean(o->rough_fit));
	json_object_set_new(doc, "insufficient", json_boolean(o->insufficient));
	json_object_set_new(doc, "trend_used", json_boolean(o->trend_used));
	json_object_set_new(doc, "measure", o->measure[0] ? json_string(o->measure) : json_null());
	json_object_set_new(doc, "wrong_rows", json_integer(in->wrong_rows));
	json_object_set_new(doc, "input_wait_not_measured", in->input_wait_not_measured[0] ?
			    json_string(in->input_wait_not_measured) : json_null());
	json_object_set_new(doc, "straggler", in->straggler[0] ?
			    json_pack("{s:s, s:o}", "rank", in->straggler, "cost_sec", jfig(in->straggler_sec, "s")) :
			    json_null());
	return doc;
oom:
	json_decref(doc);
	json_decref(ins);
	json_decref(figs);
	json_decref(losses);
	json_decref(notes);
	json_decref(fixes);
	return NULL;
}
