#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/ch_common.h"
#include "report/canary/hr_canary.h"

static struct hr_fig given(double v)
{
	struct hr_fig f = { v, HR_SRC_GIVEN };
	return f;
}

/* The textbook case (issue 7): 32 -> 64 GPUs at constant work per GPU took
 * the step from 1.00 s to 1.60 s; a checkpoint every 30 minutes blocks all
 * ranks for 5.5 minutes; the question is whether to book 128. */
static void textbook(struct hr_canary_in *in)
{
	hr_canary_in_init(in);
	in->baseline_gpus = given(32);
	in->baseline_step_sec = given(1.00);
	in->gpus_now = given(64);
	in->step_sec = given(1.60);
	in->target_gpus = given(128);
	in->ckpt_interval_sec = given(30 * 60);
	in->ckpt_block_sec = given(5.5 * 60);
	in->input_wait_frac = given(0.10); /* host CPU contention */
}

static char *render(const struct hr_canary_in *in, const struct hr_canary_out *out)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	cr_assert_not_null(f);
	hr_canary_print(f, in, out);
	fclose(f);
	return buf;
}

#define HAS(text, needle) cr_assert(strstr(text, needle), "missing \"%s\" in:\n%s", needle, text)

Test(canary, textbook_figures)
{
	struct hr_canary_in in;
	struct hr_canary_out out;
	textbook(&in);
	cr_assert_eq(hr_canary_compute(&in, &out), 0);

	/* throughput x1.25 for 2x the hardware: 62.5% scaling efficiency */
	cr_assert_float_eq(out.hw_ratio_now.v, 2.0, 1e-12);
	cr_assert_float_eq(out.throughput_ratio_now.v, 1.25, 1e-12);
	cr_assert_float_eq(out.efficiency_now.v, 0.625, 1e-12);
	cr_assert_eq(out.throughput_ratio_now.src, HR_SRC_GIVEN);
	/* 5.5 min every 30 min = 18.3% of wall-clock */
	cr_assert_float_eq(out.ckpt_frac.v, 5.5 / 30, 1e-12);
	cr_assert_float_eq(out.ckpt_sec.v, 1.6 * 5.5 / 30, 1e-12);
	/* without it: 1.6 x (1 - 5.5/30) = 1.3067 s, 30.7% over the ideal 1.00 s */
	cr_assert_float_eq(out.train_step_sec.v, 1.6 * (1 - 5.5 / 30), 1e-12);
	cr_assert_float_eq(out.ideal_step_sec.v, 1.0, 0);
	cr_assert_float_eq(out.over_ideal_frac.v, 1.6 * (1 - 5.5 / 30) - 1, 1e-12);
	cr_assert_eq(out.ideal_step_sec.src, HR_SRC_GIVEN);
	/* losses, largest first: checkpoint 0.293 s, the rest, input wait 0.131 s */
	cr_assert_eq(out.order[0], HR_LOSS_CKPT);
	cr_assert_float_eq(out.loss[HR_LOSS_CKPT].frac.v, 5.5 / 30, 1e-12);
	cr_assert_float_eq(out.loss[HR_LOSS_CKPT].fixed_step_sec.v, 1.6 * (1 - 5.5 / 30), 1e-12);
	cr_assert_float_eq(out.loss[HR_LOSS_INPUT].sec.v, 0.1 * 1.6 * (1 - 5.5 / 30), 1e-12);
	cr_assert_float_eq(out.loss[HR_LOSS_REST].sec.v, 0.6 - 1.6 * 5.5 / 30 - 0.16 * (1 - 5.5 / 30), 1e-12);
	cr_assert_eq(out.loss[HR_LOSS_COMM].known, 0); /* no --params, no model */
	cr_assert(out.loss[HR_LOSS_CKPT].significant && out.loss[HR_LOSS_INPUT].significant);
	/* without an all-reduce model the prediction follows today's measured
	 * trend, not perfect scaling: the step grew x1.60 for 2x, so 2.56 s */
	cr_assert(out.trend_used);
	cr_assert_float_eq(out.trend_exponent, log(1.6) / log(2), 1e-12);
	cr_assert_float_eq(out.step_target_sec.v, 1.6 * 1.6, 1e-12);
	cr_assert_float_eq(out.throughput_ratio_target.v, 1.25, 1e-12);
	cr_assert(out.step_target_sec.src & HR_SRC_ASSUMED);
	cr_assert_eq(out.step_target_fixed_sec.src, 0); /* not predicted */
	cr_assert_eq(out.verdict, HR_VERDICT_FIX_FIRST);
	cr_assert_eq(out.largest_ok_gpus, 0);
}

Test(canary, textbook_text)
{
	struct hr_canary_in in;
	struct hr_canary_out out;
	textbook(&in);
	cr_assert_eq(hr_canary_compute(&in, &out), 0);
	char *t = render(&in, &out);
	HAS(t, "throughput 32 -> 64 GPUs                 x1.25 for 2x the hardware");
	HAS(t, "62.5% (vs 32 GPUs)");
	HAS(t, "5.5 min every 30 min = 18.3% of wall-clock [given]");
	HAS(t, "1.31 s, 31% over the ideal 1.00 s");
	HAS(t, "verdict: FIX FIRST");
	HAS(t, "do not book 128 GPUs before fixing the checkpoint and the host CPU contention and re-measuring at 64 GPUs");
	HAS(t, "1. synchronous checkpoint stall: make the checkpoint asynchronous");
	HAS(t, "2. input wait (host CPU contention): give the dataloader its own cores");
	HAS(t, "32 -> 64 GPUs: 2x the hardware for x1.25 the throughput; each unit of work costs x1.60 the GPU-hours");
	free(t);
}

Test(canary, textbook_with_model_predicts_target)
{
	/* a 7e9-parameter model, bf16 gradients (14 GB), ring at alpha 10 us and
	 * B 40 GB/s across nodes of 8 GPUs */
	struct hr_canary_in in;
	struct hr_canary_out out;
	textbook(&in);
	in.params = given(7e9);
	in.grad_bytes_per_param = given(2);
	in.gpus_per_node = given(8);
	for (int l = 0; l < HR_NLEVELS; l++) {
		in.comm[l].set = 1;
		in.comm[l].src = HR_SRC_GIVEN;
		in.comm[l].fit.model = HR_FIT_RING;
		in.comm[l].fit.alpha_us = 10;
		in.comm[l].fit.bw_gbps = 40;
	}
	cr_assert_eq(hr_canary_compute(&in, &out), 0);
	double S = 14e9;
	double c0 = 2.0 * 31 / 32 * S / 40e9 + 2 * 31 * 10e-6;
	double c1 = 2.0 * 63 / 64 * S / 40e9 + 2 * 63 * 10e-6;
	double c2 = 2.0 * 127 / 128 * S / 40e9 + 2 * 127 * 10e-6;
	cr_assert_float_eq(out.comm_base_sec.v, c0, 1e-12);
	cr_assert_float_eq(out.comm_now_sec.v, c1, 1e-12);
	cr_assert_float_eq(out.comm_target_sec.v, c2, 1e-12);
	/* the step grew by far more than the all-reduce: overlap calibrates to 0 */
	cr_assert_float_eq(out.overlap.v, 0, 0);
	cr_assert_float_eq(out.loss[HR_LOSS_COMM].sec.v, c1 - c0, 1e-12);
	double t1tr = 1.6 * (1 - 5.5 / 30);
	double t2 = (t1tr + (c2 - c1)) / (1 - 5.5 / 30);
	cr_assert_float_eq(out.step_target_sec.v, t2, 1e-12);
	cr_assert_float_eq(out.efficiency_target.v, 1.0 / t2, 1e-12);
	cr_assert_float_eq(out.throughput_ratio_target.v, (128 / t2) / (64 / 1.6), 1e-12);
	/* fixing the checkpoint and the input wait at 128 */
	cr_assert_float_eq(out.step_target_fixed_sec.v, t1tr + (c2 - c1) - 0.1 * t1tr, 1e-12);
	cr_assert_float_eq(out.busbw_target_gbps.v, 2.0 * 127 / 128 * S / c2 / 1e9, 1e-9);
	cr_assert_eq(out.verdict, HR_VERDICT_FIX_FIRST);
}

/* a fitted ring model (5 us, 100 GB/s) at both levels */
static void fit_both_levels(struct hr_canary_in *in)
{
	for (int l = 0; l < HR_NLEVELS; l++) {
		in->comm[l].set = 1;
		in->comm[l].src = HR_SRC_FITTED;
		in->comm[l].fit.model = HR_FIT_RING;
		in->comm[l].fit.alpha_us = 5;
		in->comm[l].fit.bw_gbps = 100;
	}
}

Test(canary, book_when_it_scales)
{
	/* 8 -> 16 with a small, well-hidden all-reduce: book */
	struct hr_canary_in in;
	struct hr_canary_out out;
	hr_canary_in_init(&in);
	in.gpus_now = given(8);
	in.step_sec = given(0.50);
	in.baseline_gpus = given(4);
	in.baseline_step_sec = given(0.48);
	in.target_gpus = given(16);
	in.params = given(1e8);
	in.grad_bytes_per_param = given(4);
	in.input_wait_frac = given(0.01);
	fit_both_levels(&in);
	cr_assert_eq(hr_canary_compute(&in, &out), 0);
	cr_assert_eq(out.verdict, HR_VERDICT_BOOK);
	cr_assert_gt(out.efficiency_target.v, 0.9);
	cr_assert_eq(out.largest_ok_gpus, 16);
	cr_assert(out.step_target_sec.src & HR_SRC_FITTED);
}

Test(canary, rough_fit_today_measure_first)
{
	/* today (8 GPUs, one node) rests on a rough intra-node fit, the target
	 * (16, two nodes) on a good inter-node one: the ratio rests on both */
	struct hr_canary_in in;
	struct hr_canary_out out;
	hr_canary_in_init(&in);
	in.gpus_now = given(8);
	in.target_gpus = given(16);
	in.gpus_per_node = given(8);
	in.params = given(1e8);
	in.grad_bytes_per_param = given(4);
	fit_both_levels(&in);
	in.comm[HR_INTRA].fit.rms_rel_pct = 45;
	in.comm[HR_INTER].fit.rms_rel_pct = 2;
	cr_assert_eq(hr_canary_compute(&in, &out), 0);
	cr_assert_eq(out.level_now, HR_INTRA);
	cr_assert_eq(out.level_target, HR_INTER);
	cr_assert_eq(out.verdict, HR_VERDICT_MEASURE_FIRST);
	cr_assert(out.rough_fit);
	cr_assert(strstr(out.measure, "by 45% (rms)"), "%s", out.measure);
}

Test(canary, dont_book_when_nothing_to_fix)
{
	struct hr_canary_in in;
	struct hr_canary_out out;
	hr_canary_in_init(&in);
	in.gpus_now = given(16);
	in.step_sec = given(1.0);
	in.baseline_gpus = given(8);
	in.baseline_step_sec = given(0.70);
	in.target_gpus = given(32);
	in.input_wait_frac = given(0.0);
	in.ckpt_interval_sec = given(3600);
	in.ckpt_block_sec = given(10);
	cr_assert_eq(hr_canary_compute(&in, &out), 0);
	cr_assert_eq(out.verdict, HR_VERDICT_DONT_BOOK);
	cr_assert_eq(out.loss[HR_LOSS_REST].fixable, 0);
	cr_assert(out.loss[HR_LOSS_REST].significant);
}

Test(canary, no_baseline_assumes_no_overlap)
{
	struct hr_canary_in in;
	struct hr_canary_out out;
	hr_canary_in_init(&in);
	in.gpus_now = given(8);
	in.step_sec = given(2.0);
	in.target_gpus = given(16);
	in.params = given(1e9);
	in.grad_bytes_per_param = given(2);
	in.gpus_per_node = given(8);
	in.comm[HR_INTRA] = (struct hr_comm_model){ .set = 1, .src = HR_SRC_FITTED,
		.fit = { .model = HR_FIT_RING, .alpha_us = 0, .bw_gbps = 100 } };
	in.comm[HR_INTER] = (struct hr_comm_model){ .set = 1, .src = HR_SRC_FITTED,
		.fit = { .model = HR_FIT_RING, .alpha_us = 0, .bw_gbps = 25 } };
	cr_assert_eq(hr_canary_compute(&in, &out), 0);
	double c1 = 1.75 * 2e9 / 100e9, c2 = 2.0 * 15 / 16 * 2e9 / 25e9;
	cr_assert_eq(out.level_now, HR_INTRA);
	cr_assert_eq(out.level_target, HR_INTER);
	cr_assert_float_eq(out.overlap.v, 0, 0);
	cr_assert_eq(out.overlap.src, HR_SRC_ASSUMED);
	cr_assert_float_eq(out.ideal_step_sec.v, 2.0 - c1, 1e-12);
	cr_assert(out.ideal_step_sec.src & HR_SRC_ASSUMED);
	cr_assert_float_eq(out.step_target_sec.v, 2.0 + c2 - c1, 1e-12);
	cr_assert_eq(out.loss[HR_LOSS_REST].known, 0);
}

Test(canary, mfu_and_contradictions)
{
	struct hr_canary_in in;
	struct hr_canary_out out;
	textbook(&in);
	/* 6 x 7e9 x 1M tokens / (1.6 s x 64 x 989 TFLOP/s) = 43.5% */
	in.params = given(7e9);
	in.tokens_per_step = given(1048576);
	double mfu = 6 * 7e9 * 1048576 / (1.6 * 64 * 989e12);
	in.peak_tflops = given(989);
	in.mfu_now = given(mfu);
	in.mfu_baseline = given(mfu); /* same MFU although the step got 1.6x slower */
	cr_assert_eq(hr_canary_compute(&in, &out), 0);
	cr_assert_float_eq(out.mfu_computed.v, mfu, 1e-12);
	int found = 0;
	for (int i = 0; i < out.nnotes; i++)
		found |= strstr(out.notes[i], "contradiction: MFU went from") != NULL;
	cr_assert(found, "the MFU ratio disagrees with the step-time ratio and must be flagged");
	/* consistent inputs: no contradiction */
	in.mfu_baseline = given(mfu * 1.6);
	cr_assert_eq(hr_canary_compute(&in, &out), 0);
	for (int i = 0; i < out.nnotes; i++)
		cr_assert_null(strstr(out.notes[i], "contradiction"), "%s", out.notes[i]);
	cr_assert_float_eq(out.mfu_target.v, mfu * 1.6 / out.step_target_sec.v, 1e-12);
	/* a given MFU that disagrees with 6 N tokens / (step x GPUs x peak) */
	in.mfu_now = given(mfu * 1.2);
	in.mfu_baseline = given(mfu * 1.2 * 1.6);
	cr_assert_eq(hr_canary_compute(&in, &out), 0);
	found = 0;
	for (int i = 0; i < out.nnotes; i++)
		found |= strstr(out.notes[i], "contradiction: --mfu-now") != NULL;
	cr_assert(found);
	/* cost per 1M tokens at 64 GPUs: 64 x 1.6 s / 3600 / 1.048576 */
	cr_assert_eq(out.unit_is_tokens, 1);
	cr_assert_float_eq(out.gpu_hours_per_unit_now.v, 64 * 1.6 / 3600 / 1.048576, 1e-12);
}

Test(canary, price)
{
	struct hr_canary_in in;
	struct hr_canary_out out;
	textbook(&in);
	in.price_per_gpu_hour = given(2.5);
	cr_assert_eq(hr_canary_compute(&in, &out), 0);
	cr_assert_float_eq(out.cost_per_unit_now.v, 1.6 * 1000 / 3600 * 2.5, 1e-12);
	cr_assert_float_eq(out.gpu_hours_per_unit_base.v, 1.0 * 1000 / 3600, 1e-12);
}

struct bad_case {
	char name[40];
	int field; /* which input to break */
	double v;
};

static struct bad_case bad_cases[] = {
	{ "zero gpus now", 0, 0 },
	{ "negative step", 1, -1.6 },
	{ "zero step", 1, 0 },
	{ "target below today", 2, 32 },
	{ "target equal to today", 2, 64 },
	{ "baseline above today", 3, 96 },
	{ "negative baseline step", 4, -1 },
	{ "block longer than interval", 5, 3600 },
	{ "input wait of 1", 6, 1.0 },
	{ "zero target", 2, 0 },
	{ "fractional gpus", 0, 63.5 },
};

ParameterizedTestParameters(canary, bad_inputs)
{
	return cr_make_param_array(struct bad_case, bad_cases, sizeof(bad_cases) / sizeof(bad_cases[0]));
}

ParameterizedTest(struct bad_case *c, canary, bad_inputs)
{
	struct hr_canary_in in;
	struct hr_canary_out out;
	textbook(&in);
	switch (c->field) {
	case 0: in.gpus_now.v = c->v; break;
	case 1: in.step_sec.v = c->v; break;
	case 2: in.target_gpus.v = c->v; break;
	case 3: in.baseline_gpus.v = c->v; break;
	case 4: in.baseline_step_sec.v = c->v; break;
	case 5: in.ckpt_block_sec.v = c->v; break;
	case 6: in.input_wait_frac.v = c->v; break;
	}
	cr_assert_eq(hr_canary_compute(&in, &out), CH_ERR_USAGE, "%s", c->name);
}

Test(canary, missing_required)
{
	struct hr_canary_in in;
	struct hr_canary_out out;
	textbook(&in);
	in.step_sec.src = 0;
	cr_assert_eq(hr_canary_compute(&in, &out), CH_ERR_USAGE);
	textbook(&in);
	in.ckpt_block_sec.src = 0; /* interval without its blocking time */
	cr_assert_eq(hr_canary_compute(&in, &out), CH_ERR_USAGE);
}

Test(canary, source_labels)
{
	char b[64];
	cr_assert_str_eq(hr_src_label(HR_SRC_GIVEN, b, sizeof(b)), "given");
	cr_assert_str_eq(hr_src_label(HR_SRC_GIVEN | HR_SRC_FITTED | HR_SRC_ASSUMED, b, sizeof(b)), "given+fitted+assumed");
	cr_assert_str_eq(hr_src_label(HR_SRC_MEASURED, b, sizeof(b)), "measured");
	cr_assert_str_eq(hr_src_label(0, b, sizeof(b)), "none");
}

Test(canary, json_document)
{
	struct hr_canary_in in;
	struct hr_canary_out out;
	textbook(&in);
	cr_assert_eq(hr_canary_compute(&in, &out), 0);
	json_t *doc = hr_canary_json(&in, &out);
	cr_assert_not_null(doc);
	cr_assert_str_eq(json_string_value(json_object_get(doc, "verdict")), "fix-first");
	json_t *eff = json_object_get(json_object_get(doc, "figures"), "efficiency_now");
	cr_assert_float_eq(json_real_value(json_object_get(eff, "value")), 0.625, 1e-12);
	cr_assert_str_eq(json_string_value(json_object_get(eff, "source")), "given");
	json_t *fixes = json_object_get(doc, "fixes");
	cr_assert_eq(json_array_size(fixes), 2);
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(fixes, 0), "kind")), "checkpoint");
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(fixes, 1), "kind")), "input_wait");
	json_decref(doc);
}

Test(canary, measurements_only_mode)
{
	/* no step time: 8 -> 16 ranks over nodes of 4, input wait 12% measured */
	struct hr_canary_in in;
	struct hr_canary_out out;
	hr_canary_in_init(&in);
	in.gpus_now = (struct hr_fig){ 8, HR_SRC_MEASURED };
	in.target_gpus = given(16);
	in.gpus_per_node = (struct hr_fig){ 4, HR_SRC_MEASURED };
	in.input_wait_frac = (struct hr_fig){ 0.12, HR_SRC_MEASURED };
	in.probe_bytes = (struct hr_fig){ 16777216, HR_SRC_MEASURED };
	in.comm[HR_INTER] = (struct hr_comm_model){ .set = 1, .src = HR_SRC_FITTED,
		.fit = { .model = HR_FIT_RING, .alpha_us = 8, .bw_gbps = 40 } };
	cr_assert_eq(hr_canary_compute(&in, &out), 0);
	cr_assert_eq(out.comm_only, 1);
	double S = 16777216, c1 = 1.75 * S / 40e3 + 14 * 8, c2 = 2.0 * 15 / 16 * S / 40e3 + 30 * 8;
	cr_assert_float_eq(out.comm_now_sec.v, c1 * 1e-6, 1e-15);
	cr_assert_float_eq(out.busbw_ratio_target.v, (S / c2 * 1.875) / (S / c1 * 1.75), 1e-12);
	cr_assert_float_eq(out.loss[HR_LOSS_INPUT].frac.v, 0.12, 0);
	cr_assert_float_eq(out.loss[HR_LOSS_INPUT].gain_frac.v, 1 / 0.88 - 1, 1e-12);
	cr_assert_eq(out.loss[HR_LOSS_INPUT].sec.src, 0);
	cr_assert_eq(out.verdict, HR_VERDICT_FIX_FIRST);
	/* without the input wait, the all-reduce keeps 88% of its busbw: book */
	in.input_wait_frac.src = 0;
	cr_assert_eq(hr_canary_compute(&in, &out), 0);
	cr_assert_eq(out.verdict, HR_VERDICT_BOOK);
	/* a stricter threshold: do not book */
	in.min_efficiency = given(0.95);
	cr_assert_eq(hr_canary_compute(&in, &out), 0);
	cr_assert_eq(out.verdict, HR_VERDICT_DONT_BOOK);
	/* nothing at all to judge */
	in.comm[HR_INTER].set = 0;
	cr_assert_eq(hr_canary_compute(&in, &out), CH_ERR_USAGE);
	/* a baseline needs a step time */
	in.comm[HR_INTER].set = 1;
	in.baseline_gpus = given(4);
	in.baseline_step_sec = given(1);
	cr_assert_eq(hr_canary_compute(&in, &out), CH_ERR_USAGE);
}

Test(canary, rough_fit_is_noted)
{
	struct hr_canary_in in;
	struct hr_canary_out out;
	textbook(&in);
	in.params = given(1e9);
	in.comm[HR_INTRA] = (struct hr_comm_model){ .set = 1, .src = HR_SRC_FITTED,
		.fit = { .model = HR_FIT_RING, .alpha_us = 2, .bw_gbps = 50, .rms_rel_pct = 35, .r2 = 0.8 } };
	cr_assert_eq(hr_canary_compute(&in, &out), 0);
	int rough = 0;
	for (int i = 0; i < out.nnotes; i++)
		rough |= strstr(out.notes[i], "fit misses its points by 35%") != NULL;
	cr_assert(rough);
	in.comm[HR_INTRA].fit.rms_rel_pct = 3;
	cr_assert_eq(hr_canary_compute(&in, &out), 0);
	for (int i = 0; i < out.nnotes; i++)
		cr_assert_null(strstr(out.notes[i], "fit misses"));
}

Test(canary, wrong_results_never_book)
{
	/* a case that would book, measured on an allocation that corrupts data */
	struct hr_canary_in in;
	struct hr_canary_out out;
	hr_canary_in_init(&in);
	in.gpus_now = given(8);
	in.step_sec = given(1.0);
	in.baseline_gpus = given(4);
	in.baseline_step_sec = given(0.99);
	in.target_gpus = given(16);
	cr_assert_eq(hr_canary_compute(&in, &out), 0);
	cr_assert_eq(out.verdict, HR_VERDICT_BOOK);
	in.wrong_rows = 3;
	cr_assert_eq(hr_canary_compute(&in, &out), 0);
	cr_assert_eq(out.verdict, HR_VERDICT_FIX_FIRST);
	char fx[128];
	hr_canary_fixes_text(&out, fx, sizeof(fx));
	cr_assert_str_eq(fx, "the wrong all-reduce results");
	char *t = render(&in, &out);
	HAS(t, "do not book 16 GPUs before fixing the wrong all-reduce results and re-measuring at 8 GPUs");
	free(t);
}

/* A poor prediction with the fixable losses unmeasured is no DO NOT BOOK
 * ("nothing here would help" would be unfounded): MEASURE FIRST, naming them. */
Test(canary, measure_first_when_the_losses_were_not_measured)
{
	struct hr_canary_in in;
	struct hr_canary_out out;
	hr_canary_in_init(&in);
	in.gpus_now = given(64);
	in.step_sec = given(1.6);
	in.baseline_gpus = given(32);
	in.baseline_step_sec = given(1.0);
	in.target_gpus = given(256);
	cr_assert_eq(hr_canary_compute(&in, &out), 0);
	cr_assert_eq(out.verdict, HR_VERDICT_MEASURE_FIRST);
	cr_assert(strstr(out.measure, "the checkpoint") && strstr(out.measure, "the input wait") &&
		  strstr(out.measure, "the all-reduce"), "%s", out.measure);
	/* the checkpoint and the input wait measured, and small: DO NOT BOOK stands */
	in.ckpt_interval_sec = given(3600);
	in.ckpt_block_sec = given(10);
	in.input_wait_frac = given(0.01);
	cr_assert_eq(hr_canary_compute(&in, &out), 0);
	cr_assert_eq(out.verdict, HR_VERDICT_DONT_BOOK);
}
