/*
 * hr_steps_render.c - the terminal report and the JSON document of a run's
 * step logs (interface: hr_steps_render.h).
 */
#include "report/render/hr_steps_render.h"
#include "report/read/hr_steps.h"
#include "report/hr_util.h"
#include "base/ch_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROWLABEL 46

static void row(FILE *f, const char *label, const char *value, const char *src)
{
	if (src) /* NULL: nothing computed, so no source to name */
		fprintf(f, "  %-*s %s [%s]\n", ROWLABEL, label, value, src);
	else
		fprintf(f, "  %-*s %s\n", ROWLABEL, label, value);
}

/* a file name, escaped */
static const char *esc(const char *s, char *b, size_t n)
{
	return hr_steps_term_text(s, 200, b, n);
}

/* a log's text for a JSON document: as it is when it is valid UTF-8 (every
 * output escapes it for its format), else escaped byte by byte */
static const char *json_text(const char *s, char *b, size_t n)
{
	return hr_steps_json_text(s, 200, b, n);
}

static void fmt_sec(char *b, size_t n, double s)
{
	if (isnan(s))
		snprintf(b, n, "n/a");
	else if (s >= 120)
		snprintf(b, n, "%.3g min", s / 60);
	else if (s >= 0.1)
		snprintf(b, n, "%.2f s", s);
	else
		snprintf(b, n, "%.3g ms", s * 1e3);
}

static void fmt_si(char *b, size_t n, double v)
{
	if (v >= 1e9)
		snprintf(b, n, "%.3gG", v / 1e9);
	else if (v >= 1e6)
		snprintf(b, n, "%.3gM", v / 1e6);
	else if (v >= 1e3)
		snprintf(b, n, "%.3gk", v / 1e3);
	else
		snprintf(b, n, "%.3g", v);
}

static const char *rank_node(const struct hr_steps_rank *rk, char *b, size_t n)
{
	char e1[420], e2[300];
	if (rk->node[0])
		snprintf(b, n, "%s on %s", esc(rk->id, e1, sizeof(e1)), esc(rk->node, e2, sizeof(e2)));
	else
		snprintf(b, n, "%s", esc(rk->id, e1, sizeof(e1)));
	return b;
}

static void print_head(FILE *f, const struct hr_steps_view *v)
{
	const struct hr_steps_run *r = v->run;
	char nodes[64] = "", fmts[400] = "";
	size_t u = 0;
	int i;

	if (r->nnodes)
		snprintf(nodes, sizeof(nodes), " on %d node%s", r->nnodes, r->nnodes == 1 ? "" : "s");
	for (i = 1; i < HR_SF_N; i++)
		if (r->records_by_format[i])
			u += (size_t)snprintf(fmts + u, u < sizeof(fmts) ? sizeof(fmts) - u : 0, "%s%s", u ? ", " : "",
					      hr_steps_format_name(i));
	fprintf(f, "steps: %zu rank%s%s in the logs; %s; %ld step records in %zu of %zu files (%ld lines)\n",
		r->nranks, r->nranks == 1 ? "" : "s", nodes, fmts, r->records, r->nfiles_read, r->nfiles, r->lines);
	if (isnan(r->step_sec))
		fprintf(f, "window: none: these logs hold no step times (%s)\n",
			r->summary_step_sec > 0 ? "only a summary of the whole run" : "a step time, or timestamps on step lines, is needed");
	else if (r->window_all)
		fprintf(f, "window: steps %ld-%ld: the logs hold no step after a warm-up of %ld, so all of them are judged (--warmup)\n",
			r->win_first, r->win_last, r->warmup);
	else if (r->win_last - r->win_first + 1 < r->window)
		/* the logs end inside the window: the steps it holds, not the window asked */
		fprintf(f, "window: steps %ld-%ld (%ld steps after a warm-up of %ld: the logs end before a window of %ld; --window, --warmup)\n",
			r->win_first, r->win_last, r->win_last - r->win_first + 1, r->warmup, r->window);
	else
		fprintf(f, "window: steps %ld-%ld (%ld steps after a warm-up of %ld; --window, --warmup)\n",
			r->win_first, r->win_last, r->window, r->warmup);
	if (r->nexcluded) {
		fprintf(f, "  kept apart (checkpoint or evaluation in the step):");
		for (i = 0; i < r->nexcluded && i < 16; i++)
			fprintf(f, " %ld", r->excluded[i]);
		fprintf(f, "%s\n", r->nexcluded > 16 ? " ..." : "");
	}
	fprintf(f, "sources: measured = the step logs, given = the options, assumed = a default\n\n");
}

static void print_step(FILE *f, const struct hr_steps_view *v)
{
	const struct hr_steps_run *r = v->run;
	char a[96], b[96], c[96], val[400];
	size_t i;
	int p;

	fprintf(f, "the step\n");
	fmt_sec(a, sizeof(a), r->step_sec);
	fmt_sec(b, sizeof(b), r->step_p95);
	if (isnan(r->step_sec))
		snprintf(val, sizeof(val), "not in these logs");
	else
		snprintf(val, sizeof(val), "%s, p95 %s, spread %.1f%% (MAD / median)", a, b, 100 * r->spread_frac);
	row(f, "training step (median over ranks)", val, "measured");
	if (r->summary_step_sec > 0) {
		fmt_sec(a, sizeof(a), r->summary_step_sec);
		snprintf(val, sizeof(val), "%s (train_runtime / steps, the whole run)", a);
		row(f, "mean step (Hugging Face summary)", val, "measured");
	}
	snprintf(val, sizeof(val), "%d checkpoint%s, %d evaluation%s, %d gap%s no line explains", r->nckpt,
		 r->nckpt == 1 ? "" : "s", r->neval, r->neval == 1 ? "" : "s", r->nstall, r->nstall == 1 ? "" : "s");
	row(f, "stalls", val, "measured");
	for (i = 0; i < r->nevents && i < 8; i++) {
		const struct hr_steps_event *e = &r->events[i];
		static const char *const kind[] = { "checkpoint", "evaluation", "gap (no line says why)" };
		char e1[420];
		char at[48] = "(no step number)";
		fmt_sec(a, sizeof(a), e->sec);
		if (e->step >= 0)
			snprintf(at, sizeof(at), "after step %ld", e->step);
		fprintf(f, "  %-*s %s %s: %s, %d rank%s (%s:%ld)\n", ROWLABEL, "", kind[e->kind], at,
			isnan(e->sec) ? "length not logged" : a, e->nranks, e->nranks == 1 ? "" : "s",
			esc(e->path, e1, sizeof(e1)), e->line);
	}
	if (r->nevents > 8)
		fprintf(f, "  %-*s ... %zu more\n", ROWLABEL, "", r->nevents - 8);
	if (r->nckpt + r->nstall) {
		fmt_sec(a, sizeof(a), r->ckpt_block_sec);
		if (!isnan(r->stall_frac) && r->stall_frac > 0) {
			fmt_sec(b, sizeof(b), r->ckpt_interval_sec);
			snprintf(val, sizeof(val), "%s every %s = %.1f%% of wall-clock", a, b, 100 * r->stall_frac);
		} else {
			snprintf(val, sizeof(val), "%s each; its interval is not measured (one stall with a time: give --checkpoint-interval)", a);
		}
		row(f, r->nstall ? "checkpoint and other stalls" : "checkpoint stall", val, "measured");
	}
	if (!isnan(r->wall_step_sec)) {
		fmt_sec(a, sizeof(a), r->wall_step_sec);
		row(f, "wall-clock step (stalls included)", a, "measured");
	}
	if (r->have_split) {
		size_t u = 0;
		val[0] = '\0';
		for (p = 0; p < HR_PH_N; p++) {
			if (isnan(r->phase_mean[p]))
				continue;
			if (p == HR_PH_FWDBWD && !isnan(r->phase_mean[HR_PH_FORWARD]))
				continue;
			fmt_sec(a, sizeof(a), r->phase_mean[p]);
			u += (size_t)snprintf(val + u, u < sizeof(val) ? sizeof(val) - u : 0, "%s%s %s (%.0f%%)", u ? ", " : "",
					      hr_steps_phase_name(p), a, 100 * r->phase_mean[p] / r->step_sec);
		}
		if (!isnan(r->other_sec) && fabs(r->other_sec) > 1e-4 * r->step_sec) {
			fmt_sec(a, sizeof(a), r->other_sec);
			snprintf(val + u, u < sizeof(val) ? sizeof(val) - u : 0, ", other %s", a);
		}
		row(f, "time split (mean over ranks)", val, "measured");
	} else {
		row(f, "time split", "not in these logs (Megatron-LM's timers or the JSON lines' phases give it)", "measured");
	}
	if (!isnan(r->phase_hi[HR_PH_FORWARD]) || !isnan(r->phase_hi[HR_PH_FWDBWD])) {
		int q = !isnan(r->phase_hi[HR_PH_FORWARD]) ? HR_PH_FORWARD : HR_PH_FWDBWD;
		fmt_sec(a, sizeof(a), r->phase_lo[q]);
		fmt_sec(b, sizeof(b), r->phase_hi[q]);
		snprintf(val, sizeof(val), "%s from %s (fastest rank) to %s (slowest): %.1f%% apart; which rank, the minmax timers do not say (--timing-log-option all does)",
			 hr_steps_phase_name(q), a, b, 100 * (r->phase_hi[q] / r->phase_lo[q] - 1));
		row(f, "spread across ranks", val, "measured");
	}
	if (!isnan(r->input_frac)) {
		char rn[600];
		double lo = r->input_frac;
		for (i = 0; i < r->nranks; i++)
			if (!isnan(r->ranks[i].input_frac) && r->ranks[i].input_frac < lo)
				lo = r->ranks[i].input_frac;
		if (r->nranks > 1 && r->input_frac - lo <= 0.001)
			snprintf(val, sizeof(val), "%.1f%% of the training step (every rank alike)", 100 * r->input_frac);
		else
			snprintf(val, sizeof(val), "%.1f%% of the training step (the worst rank: %s)", 100 * r->input_frac,
				 rank_node(&r->ranks[r->input_rank], rn, sizeof(rn)));
		row(f, "input wait", val, "measured");
	}
	if (!isnan(r->host_cpu)) {
		snprintf(val, sizeof(val), "%.0f%% (median over ranks)", 100 * r->host_cpu);
		row(f, "host CPUs busy", val, "measured");
	}
	(void)c;
}

static void print_throughput(FILE *f, const struct hr_steps_view *v)
{
	const struct hr_steps_run *r = v->run;
	char a[64], b[64], c[64], val[400];
	const struct hr_steps_mfu *m = v->mfu;

	fprintf(f, "\nthroughput\n");
	if (v->gpus > 0)
		snprintf(val, sizeof(val), "%g%s", v->gpus, v->gpus_given ? "" : " (the ranks in the logs; --gpus for the job's)");
	else
		snprintf(val, sizeof(val), "unknown: one rank's log: the job's GPU count is not printed (--gpus N gives it)");
	row(f, "GPUs", val, v->gpus_given ? "given" : "measured");
	if (r->tokens_per_step > 0 && isnan(r->tps_per_gpu)) {
		/* the job's count the log prints: per GPU needs the GPUs */
		fmt_si(a, sizeof(a), r->tokens_per_step);
		fmt_si(b, sizeof(b), r->tokens_per_sec);
		if (v->gpus > 0) {
			fmt_si(c, sizeof(c), r->tokens_per_sec / v->gpus);
			snprintf(val, sizeof(val), "%s per step (the job's, as logged), %s tokens/s over training steps, / %g GPUs = %s per GPU",
				 a, b, v->gpus, c);
		} else {
			snprintf(val, sizeof(val), "%s per step (the job's, as logged), %s tokens/s over training steps; per GPU needs the job's GPU count (--gpus)",
				 a, b);
		}
		row(f, "tokens", val, v->gpus > 0 && v->gpus_given ? "measured+given" : "measured");
	} else if (r->tokens_per_step > 0 && r->nranks == 1) {
		fmt_si(a, sizeof(a), r->tokens_per_step);
		fmt_si(b, sizeof(b), r->tokens_per_sec);
		fmt_si(c, sizeof(c), r->tps_per_gpu);
		snprintf(val, sizeof(val), "%s per step (the job's, as logged), %s tokens/s over training steps; %s per GPU as logged: the two imply %.0f GPUs",
			 a, b, c, r->tokens_per_sec / r->tps_per_gpu);
		row(f, "tokens", val, "measured");
	} else if (r->tokens_per_step > 0) {
		fmt_si(a, sizeof(a), r->tokens_per_step);
		fmt_si(b, sizeof(b), r->tokens_per_sec);
		fmt_si(c, sizeof(c), r->tps_per_gpu);
		snprintf(val, sizeof(val), "%s per step, %s tokens/s over training steps, %s per GPU", a, b, c);
		row(f, "tokens", val, "measured");
	} else if (r->tps_per_gpu > 0 && !(v->gpus > 0)) {
		fmt_si(c, sizeof(c), r->tps_per_gpu);
		snprintf(val, sizeof(val), "%s tokens/s per GPU as logged (the job's total needs its GPU count: --gpus)", c);
		row(f, "tokens", val, "measured");
	} else if (r->tps_per_gpu > 0) {
		fmt_si(c, sizeof(c), r->tps_per_gpu);
		fmt_si(b, sizeof(b), r->tps_per_gpu * v->gpus);
		snprintf(val, sizeof(val), "%s tokens/s per GPU as logged, x %g GPUs = %s tokens/s", c, v->gpus, b);
		row(f, "tokens", val, v->gpus_given ? "measured+given" : "measured");
	} else {
		row(f, "tokens", "not in these logs", "measured");
	}
	if (!isnan(r->tflops_logged)) {
		snprintf(val, sizeof(val), "%.4g TFLOP/s per GPU (the framework's own FLOP count)", r->tflops_logged);
		row(f, "model TFLOP/s in the log", val, "measured");
	}
	if (!isnan(r->mfu_logged)) {
		snprintf(val, sizeof(val), "%.2f%%", 100 * r->mfu_logged);
		row(f, "MFU in the log", val, "measured");
	}
	if (m && !isnan(m->mfu) && !(m->gpus > 0)) {
		snprintf(val, sizeof(val), "%.2f%% of training steps, %.2f%% of wall-clock (6 x %.3g params x tokens/s per GPU / %.4g TFLOP/s, %s)",
			 100 * m->mfu, 100 * (isnan(m->mfu_wall) ? m->mfu : m->mfu_wall), v->params, m->peak_tflops,
			 v->peak_from ? v->peak_from : "given");
		row(f, "MFU recomputed", val, "measured+given");
	} else if (m && !isnan(m->mfu)) {
		snprintf(val, sizeof(val), "%.2f%% of training steps, %.2f%% of wall-clock (6 x %.3g params x tokens/s / (%g GPUs x %.4g TFLOP/s, %s))",
			 100 * m->mfu, 100 * (isnan(m->mfu_wall) ? m->mfu : m->mfu_wall), v->params, m->gpus,
			 m->peak_tflops, v->peak_from ? v->peak_from : "given");
		row(f, "MFU recomputed", val, "measured+given");
		if (!isnan(m->ratio)) {
			if (fabs(m->ratio - 1) <= 0.05)
				snprintf(val, sizeof(val), "x%.3f: agrees within 5%%", m->ratio);
			else
				snprintf(val, sizeof(val), "x%.3f: the log used a peak of %.4g TFLOP/s with 6N FLOPs per token, or %.4g FLOPs per token (6N = %.4g) with %.4g TFLOP/s",
					 m->ratio, m->implied_peak_tflops, m->implied_flops_per_token, 6 * v->params,
					 m->peak_tflops);
			row(f, "the log's MFU / recomputed", val, "measured+given");
		}
	} else {
		row(f, "MFU recomputed", v->mfu_missing ? v->mfu_missing : "not computed", NULL);
	}
	if (r->summary_total_flos > 0 && r->summary_runtime_sec > 0) {
		snprintf(val, sizeof(val), "%.4g TFLOP/s over the run (total_flos / train_runtime, all GPUs)",
			 r->summary_total_flos / r->summary_runtime_sec / 1e12);
		row(f, "Hugging Face's FLOP count", val, "measured");
	}
}

static void print_scaling(FILE *f, const struct hr_steps_view *v)
{
	const struct hr_steps_scaling *s = v->scaling;
	char val[400], a[64], b[64];
	static const char *const mode[] = { "weak scaling assumed (no tokens in a log)",
					    "weak scaling: tokens per GPU and step held", "strong scaling: tokens per step held",
					    "neither weak nor strong: tokens per GPU and per step both changed" };
	const char *src = v->gpus_given || v->base_gpus_given ? "given+measured" : "measured";
	if (!s && v->scaling_missing) {
		fprintf(f, "\nscaling from the baseline\n");
		row(f, "scaling efficiency", v->scaling_missing, "measured");
	}
	if (!s)
		return;
	fprintf(f, "\nscaling from the baseline\n");
	fmt_sec(a, sizeof(a), s->t0);
	fmt_sec(b, sizeof(b), s->t1);
	snprintf(val, sizeof(val), "%g GPUs at %s -> %g GPUs at %s (wall-clock steps)", s->n0, a, s->n1, b);
	row(f, "runs", val, src);
	snprintf(val, sizeof(val), "x%.2f the throughput for %.3gx the GPUs: %.1f%% efficiency; %s", s->speedup,
		 s->n1 / s->n0, 100 * s->efficiency,
		 mode[s->mode == 0 && v->base && v->base->tokens_per_step > 0 && v->run->tokens_per_step > 0 ? 3 : s->mode]);
	row(f, "scaling efficiency", val,
	    s->mode ? src : v->gpus_given || v->base_gpus_given ? "given+measured+assumed" : "measured+assumed");
}

static void print_stragglers(FILE *f, const struct hr_steps_view *v)
{
	const struct hr_steps_run *r = v->run;
	char a[64], b[64], rn[600];
	size_t i;

	fprintf(f, "\nstragglers (each rank's own compute across ranks: robust z >= 3.5 and >= 5%% over the median)\n");
	if (!r->stragglers_visible) {
		fprintf(f, "  cannot be seen in these logs: they hold %s; in synchronous training every rank's step is the same (each waits in the collective for the slowest), so a straggler shows only in per-rank compute or collective-wait times (Megatron-LM --timing-log-option all, the JSON lines' phases)\n",
			r->nranks < 3 ? "fewer than 3 ranks" : "no per-rank phase times for every rank");
		return;
	}
	if (!r->nstragglers) {
		fmt_sec(a, sizeof(a), r->compute_median);
		fprintf(f, "  none: the slowest rank's compute is %.1f%% over the median %s [measured]\n",
			100 * r->ranks[0].excess_sec / r->compute_median, a);
		return;
	}
	for (i = 0; i < r->nranks; i++) {
		const struct hr_steps_rank *rk = &r->ranks[i];
		if (!rk->straggler)
			continue;
		fmt_sec(a, sizeof(a), rk->compute_med);
		fmt_sec(b, sizeof(b), r->compute_median);
		fprintf(f, "  %s: compute %s, +%.1f%% over the median %s (robust z %.1f); every rank waits for it [measured]\n",
			rank_node(rk, rn, sizeof(rn)), a, 100 * rk->excess_sec / r->compute_median, b, rk->z);
	}
	fmt_sec(a, sizeof(a), r->straggler_cost_sec);
	fprintf(f, "  cost: the step would be %s shorter (%.1f%%) with %s working like the next slowest rank [measured]\n", a,
		100 * r->straggler_cost_sec / r->step_sec, r->nstragglers == 1 ? "it" : "them");
}

static void print_ranks(FILE *f, const struct hr_steps_view *v)
{
	const struct hr_steps_run *r = v->run;
	size_t i, n = v->max_ranks && v->max_ranks < r->nranks ? v->max_ranks : r->nranks;
	char e1[420], e2[300];

	fprintf(f, "\nper rank, worst first (window medians, seconds) [measured]\n");
	/* the rank's name (a file's path for a log of one stream) and its node
	 * last, whole: a fixed-width column cut them */
	fprintf(f, "  %8s %8s %8s %10s %8s %7s %6s  %s\n", "step", "p95", "compute", "all-reduce", "input", "z", "steps",
		"rank");
	for (i = 0; i < n; i++) {
		const struct hr_steps_rank *rk = &r->ranks[i];
		char z[16] = "-";
		if (!isnan(rk->z))
			snprintf(z, sizeof(z), "%.1f", rk->z);
		char c1[5][24];
		const double vals[5] = { rk->step_med, rk->step_p95, rk->compute_med, rk->phase_med[HR_PH_ALLREDUCE],
					 rk->phase_med[HR_PH_INPUT] };
		int k;
		for (k = 0; k < 5; k++)
			if (isnan(vals[k]))
				snprintf(c1[k], sizeof(c1[k]), "-");
			else
				snprintf(c1[k], sizeof(c1[k]), "%.4f", vals[k]);
		fprintf(f, "%c %8s %8s %8s %10s %8s %7s %6zu  %s%s%s\n", rk->straggler ? '!' : ' ', c1[0], c1[1], c1[2],
			c1[3], c1[4], z, rk->nwin, esc(rk->id, e1, sizeof(e1)), rk->node[0] ? " on " : "",
			rk->node[0] ? esc(rk->node, e2, sizeof(e2)) : "");
	}
	if (n < r->nranks)
		fprintf(f, "  ... %zu more ranks (--max-ranks)\n", r->nranks - n);
}

void hr_steps_print(FILE *f, const struct hr_steps_view *v)
{
	print_head(f, v);
	print_step(f, v);
	print_throughput(f, v);
	print_scaling(f, v);
	print_stragglers(f, v);
	print_ranks(f, v);
}

/* ------------------------------------------------------------------ JSON */

static json_t *jfig(double v, const char *unit, const char *src)
{
	if (isnan(v) || isinf(v))
		return json_null();
	return json_pack("{s:f, s:s, s:s}", "value", v, "unit", unit, "source", src);
}

static json_t *jnum_or_null(double v)
{
	return isnan(v) || isinf(v) ? json_null() : json_real(v);
}

json_t *hr_steps_json(const struct hr_steps_view *v)
{
	const struct hr_steps_run *r = v->run;
	json_t *doc = json_object(), *figs = json_object(), *ranks = json_array(), *events = json_array();
	json_t *split = json_object(), *fmts = json_object(), *excl = json_array();
	char e1[420];
	size_t i;
	int p;

	if (!doc || !figs || !ranks || !events || !split || !fmts || !excl)
		goto oom;
	for (i = 1; i < HR_SF_N; i++)
		if (r->records_by_format[i])
			json_object_set_new(fmts, hr_steps_format_name((int)i), json_integer(r->records_by_format[i]));
	for (p = 0; p < r->nexcluded && p < 16; p++)
		json_array_append_new(excl, json_integer(r->excluded[p]));
	json_object_set_new(doc, "schema", json_string("clusterhealth.steps"));
	json_object_set_new(doc, "schema_version", json_integer(1));
	json_object_set_new(doc, "inputs", json_pack("{s:I, s:I, s:I, s:I, s:o}", "files", (json_int_t)r->nfiles,
						    "files_read", (json_int_t)r->nfiles_read, "lines", (json_int_t)r->lines,
						    "records", (json_int_t)r->records, "formats", fmts));
	json_object_set_new(doc, "window", json_pack("{s:I, s:I, s:I, s:I, s:b, s:o, s:I}", "warmup", (json_int_t)r->warmup,
						    "steps", (json_int_t)r->window, "first", (json_int_t)r->win_first,
						    "last", (json_int_t)r->win_last, "all", r->window_all, "kept_apart", excl,
						    "kept_apart_count", (json_int_t)r->nexcluded));
	json_object_set_new(figs, "gpus", jfig(v->gpus > 0 ? v->gpus : NAN, "gpus", v->gpus_given ? "given" : "measured"));
	json_object_set_new(figs, "ranks", json_integer((json_int_t)r->nranks));
	json_object_set_new(figs, "nodes", json_integer(r->nnodes));
	json_object_set_new(figs, "step_sec", jfig(r->step_sec, "s", "measured"));
	json_object_set_new(figs, "step_p95_sec", jfig(r->step_p95, "s", "measured"));
	json_object_set_new(figs, "spread_frac", jfig(r->spread_frac, "fraction", "measured"));
	json_object_set_new(figs, "wall_step_sec", jfig(r->wall_step_sec, "s", "measured"));
	json_object_set_new(figs, "stall_block_sec", jfig(r->ckpt_block_sec, "s", "measured"));
	json_object_set_new(figs, "stall_interval_sec", jfig(r->ckpt_interval_sec, "s", "measured"));
	json_object_set_new(figs, "stall_frac", jfig(r->stall_frac, "fraction", "measured"));
	json_object_set_new(figs, "input_wait_frac", jfig(r->input_frac, "fraction", "measured"));
	json_object_set_new(figs, "host_cpu_frac", jfig(r->host_cpu, "fraction", "measured"));
	json_object_set_new(figs, "tokens_per_step", jfig(r->tokens_per_step, "tokens", "measured"));
	json_object_set_new(figs, "tokens_per_sec_per_gpu", jfig(r->tps_per_gpu, "tokens/s", "measured"));
	json_object_set_new(figs, "mfu_logged", jfig(r->mfu_logged, "fraction", "measured"));
	json_object_set_new(figs, "tflops_logged", jfig(r->tflops_logged, "TFLOP/s", "measured"));
	json_object_set_new(figs, "mfu", jfig(v->mfu ? v->mfu->mfu : NAN, "fraction", "measured+given"));
	json_object_set_new(figs, "mfu_wall", jfig(v->mfu ? v->mfu->mfu_wall : NAN, "fraction", "measured+given"));
	json_object_set_new(figs, "mfu_logged_ratio", jfig(v->mfu ? v->mfu->ratio : NAN, "x", "measured+given"));
	json_object_set_new(figs, "peak_tflops", jfig(v->mfu ? v->mfu->peak_tflops : NAN, "TFLOP/s", "given"));
	json_object_set_new(figs, "summary_step_sec", jfig(r->summary_step_sec, "s", "measured"));
	json_object_set_new(figs, "straggler_cost_sec", jfig(r->nstragglers ? r->straggler_cost_sec : NAN, "s", "measured"));
	if (v->scaling)
		json_object_set_new(doc, "scaling", json_pack("{s:f, s:f, s:o, s:o, s:s, s:o, s:o}", "gpus_baseline",
							     v->scaling->n0, "gpus_now", v->scaling->n1,
							     "step_baseline_sec", jnum_or_null(v->scaling->t0),
							     "step_now_sec", jnum_or_null(v->scaling->t1),
							     "mode", v->scaling->mode == 1 ? "weak" : v->scaling->mode == 2 ? "strong" : "weak-assumed",
							     "speedup", jnum_or_null(v->scaling->speedup),
							     "efficiency", jnum_or_null(v->scaling->efficiency)));
	for (p = 0; p < HR_PH_N; p++)
		json_object_set_new(split, hr_steps_phase_name(p), jnum_or_null(r->phase_mean[p]));
	json_object_set_new(split, "other", jnum_or_null(r->other_sec));
	json_object_set_new(doc, "figures", figs);
	json_object_set_new(doc, "time_split_sec", r->have_split ? split : (json_decref(split), json_null()));
	json_object_set_new(doc, "stragglers_visible", json_boolean(r->stragglers_visible));
	for (i = 0; i < r->nranks; i++) {
		const struct hr_steps_rank *rk = &r->ranks[i];
		json_t *ph = json_object();
		for (p = 0; ph && p < HR_PH_N; p++)
			json_object_set_new(ph, hr_steps_phase_name(p), jnum_or_null(rk->phase_med[p]));
		char e2[300];
		json_array_append_new(ranks, json_pack("{s:s, s:i, s:i, s:s?, s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:b, s:o}",
			"id", json_text(rk->id, e1, sizeof(e1)), "rank", rk->rank, "local_rank", rk->local_rank,
			"node", rk->node[0] ? json_text(rk->node, e2, sizeof(e2)) : NULL, "window_steps", (json_int_t)rk->nwin,
			"step_sec", jnum_or_null(rk->step_med), "step_p95_sec", jnum_or_null(rk->step_p95),
			"compute_sec", jnum_or_null(rk->compute_med), "input_wait_frac", jnum_or_null(rk->input_frac),
			"tokens_per_step", jnum_or_null(rk->tokens_step), "z", jnum_or_null(rk->z),
			"excess_sec", jnum_or_null(rk->excess_sec), "straggler", rk->straggler, "phases_sec", ph ? ph : json_null()));
	}
	json_object_set_new(doc, "ranks", ranks);
	for (i = 0; i < r->nevents; i++) {
		static const char *const kind[] = { "checkpoint", "evaluation", "gap" };
		const struct hr_steps_event *e = &r->events[i];
		json_array_append_new(events, json_pack("{s:s, s:I, s:o, s:o, s:i, s:s, s:I}", "kind", kind[e->kind],
							"step", (json_int_t)e->step, "start", jnum_or_null(e->t_start),
							"sec", jnum_or_null(e->sec), "ranks", e->nranks,
							"file", json_text(e->path, e1, sizeof(e1)), "line", (json_int_t)e->line));
	}
	json_object_set_new(doc, "stalls", events);
	return doc;
oom:
	json_decref(doc);
	json_decref(figs);
	json_decref(ranks);
	json_decref(events);
	json_decref(split);
	json_decref(fmts);
	json_decref(excl);
	return NULL;
}

/* ------------------------------------------- the main report's section */

static double fv(const json_t *figs, const char *k)
{
	const json_t *f = json_object_get(figs, k);
	const json_t *v = json_object_get(f, "value");
	return json_is_number(v) ? json_number_value(v) : NAN;
}

static const char *jstr_or(const json_t *o, const char *k, const char *dflt)
{
	const json_t *v = json_object_get(o, k);
	return json_is_string(v) ? json_string_value(v) : dflt;
}

static double jnv(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* one sentence of the run's figures, for Markdown and HTML alike (plain
 * text: the numbers and fixed words only, nothing from a log) */
static void summary_text(const json_t *st, char *t, size_t n)
{
	const json_t *f = json_object_get(st, "figures"), *w = json_object_get(st, "window");
	size_t u = 0;
	double v;

	u += (size_t)snprintf(t + u, n - u, "%lld ranks in the logs, window steps %lld-%lld",
			      (long long)json_integer_value(json_object_get(f, "ranks")),
			      (long long)json_integer_value(json_object_get(w, "first")),
			      (long long)json_integer_value(json_object_get(w, "last")));
	if (!isnan(v = fv(f, "step_sec")) && u < n)
		u += (size_t)snprintf(t + u, n - u, "; training step %.4g s", v);
	if (!isnan(v = fv(f, "wall_step_sec")) && u < n)
		u += (size_t)snprintf(t + u, n - u, ", wall-clock step %.4g s", v);
	if (!isnan(v = fv(f, "stall_frac")) && v > 0 && u < n)
		u += (size_t)snprintf(t + u, n - u, "; checkpoint and other stalls %.1f%% of wall-clock", 100 * v);
	if (!isnan(v = fv(f, "input_wait_frac")) && u < n)
		u += (size_t)snprintf(t + u, n - u, "; input wait %.1f%% of the training step", 100 * v);
	if (!isnan(v = fv(f, "host_cpu_frac")) && u < n)
		u += (size_t)snprintf(t + u, n - u, " (host CPUs %.0f%% busy)", 100 * v);
	if (!json_is_true(json_object_get(st, "stragglers_visible")) && u < n)
		snprintf(t + u, n - u, "; stragglers cannot be seen (no per-rank phase times)");
	else if (!isnan(v = fv(f, "straggler_cost_sec")) && u < n)
		snprintf(t + u, n - u, "; the stragglers cost %.3f s a step", v);
	else if (u < n)
		snprintf(t + u, n - u, "; no straggler");
}

#define MD_ROWS 60

int hr_steps_markdown(const json_t *st, struct hr_buf *b)
{
	const json_t *r;
	char t[600];
	size_t i, n;

	if (!json_is_object(st))
		return 0;
	summary_text(st, t, sizeof(t));
	hr_buf_printf(b, "\n## Step logs (measured)\n\n%s. Method: docs/canary.md, \"Step logs\".\n\n", t);
	hr_buf_puts(b, "| rank | node | step (s) | p95 (s) | compute (s) | robust z | straggler |\n|---|---|---:|---:|---:|---:|---|\n");
	n = json_array_size(json_object_get(st, "ranks"));
	json_array_foreach(json_object_get(st, "ranks"), i, r) {
		char c[3][32];
		const double v[3] = { jnv(r, "step_sec"), jnv(r, "step_p95_sec"), jnv(r, "compute_sec") };
		int k;
		if (i == MD_ROWS)
			break;
		for (k = 0; k < 3; k++)
			snprintf(c[k], sizeof(c[k]), isnan(v[k]) ? "-" : "%.4f", v[k]);
		hr_buf_puts(b, "| ");
		hr_buf_md(b, jstr_or(r, "id", "?"));
		hr_buf_puts(b, " | ");
		hr_buf_md(b, jstr_or(r, "node", "?"));
		hr_buf_printf(b, " | %s | %s | %s | ", c[0], c[1], c[2]);
		if (isnan(jnv(r, "z")))
			hr_buf_puts(b, "-");
		else
			hr_buf_printf(b, "%.1f", jnv(r, "z"));
		hr_buf_printf(b, " | %s |\n", json_is_true(json_object_get(r, "straggler")) ? "**yes**" : "");
	}
	if (n > MD_ROWS)
		hr_buf_printf(b, "\n%zu more ranks in profile.json.\n", n - MD_ROWS);
	return b->oom ? CH_ERR_RUNTIME : 0;
}

int hr_steps_html(const json_t *st, struct hr_buf *b)
{
	const json_t *r;
	char t[600];
	size_t i;

	if (!json_is_object(st))
		return 0;
	summary_text(st, t, sizeof(t));
	hr_buf_puts(b, "<h2 id=\"steps\">Step logs (measured)</h2>\n<p>");
	hr_buf_html(b, t);
	hr_buf_puts(b, ". Method: docs/canary.md, &quot;Step logs&quot;.</p>\n<table>\n"
		       "<tr><th>rank</th><th>node</th><th>step (s)</th><th>p95 (s)</th><th>compute (s)</th><th>robust z</th><th>straggler</th></tr>\n");
	json_array_foreach(json_object_get(st, "ranks"), i, r) {
		const double v[4] = { jnv(r, "step_sec"), jnv(r, "step_p95_sec"), jnv(r, "compute_sec"), jnv(r, "z") };
		int k;
		hr_buf_puts(b, "<tr><td>");
		hr_buf_html(b, jstr_or(r, "id", "?"));
		hr_buf_puts(b, "</td><td>");
		hr_buf_html(b, jstr_or(r, "node", "?"));
		hr_buf_puts(b, "</td>");
		for (k = 0; k < 4; k++)
			if (isnan(v[k]))
				hr_buf_puts(b, "<td>-</td>");
			else
				hr_buf_printf(b, k == 3 ? "<td>%.1f</td>" : "<td>%.4f</td>", v[k]);
		hr_buf_printf(b, "<td>%s</td></tr>\n", json_is_true(json_object_get(r, "straggler")) ? "<b>yes</b>" : "");
	}
	hr_buf_puts(b, "</table>\n");
	return b->oom ? CH_ERR_RUNTIME : 0;
}

static void prom_fig(struct hr_buf *b, const char *name, const char *help, double v)
{
	if (isnan(v))
		return;
	hr_buf_printf(b, "# HELP %s %s\n# TYPE %s gauge\n%s %.9g\n", name, help, name, name, v);
}

static void prom_rank(struct hr_buf *b, const char *name, const json_t *r, double v)
{
	hr_buf_printf(b, "%s{rank=\"", name);
	hr_buf_prom_label(b, jstr_or(r, "id", "?"));
	hr_buf_puts(b, "\",node=\"");
	hr_buf_prom_label(b, jstr_or(r, "node", ""));
	hr_buf_printf(b, "\"} %.9g\n", v);
}

int hr_steps_prom(const json_t *st, struct hr_buf *b)
{
	const json_t *f = json_object_get(st, "figures"), *r;
	size_t i;

	if (!json_is_object(st))
		return 0;
	prom_fig(b, "clusterhealth_steps_step_seconds", "Training step, median over ranks of the window medians (step logs).",
		 fv(f, "step_sec"));
	prom_fig(b, "clusterhealth_steps_wall_step_seconds", "Wall-clock step, checkpoint and other stalls included (step logs).",
		 fv(f, "wall_step_sec"));
	prom_fig(b, "clusterhealth_steps_stall_fraction", "Share of wall-clock the checkpoint and other stalls take (step logs).",
		 fv(f, "stall_frac"));
	prom_fig(b, "clusterhealth_steps_input_wait_fraction", "Input wait over the training step, the worst rank (step logs).",
		 fv(f, "input_wait_frac"));
	hr_buf_puts(b, "# HELP clusterhealth_steps_rank_step_seconds A rank's window median step time (step logs).\n"
		       "# TYPE clusterhealth_steps_rank_step_seconds gauge\n");
	json_array_foreach(json_object_get(st, "ranks"), i, r)
		if (!isnan(jnv(r, "step_sec")))
			prom_rank(b, "clusterhealth_steps_rank_step_seconds", r, jnv(r, "step_sec"));
	if (json_is_true(json_object_get(st, "stragglers_visible"))) {
		hr_buf_puts(b, "# HELP clusterhealth_steps_rank_compute_seconds A rank's own compute per step, window median (step logs).\n"
			       "# TYPE clusterhealth_steps_rank_compute_seconds gauge\n");
		json_array_foreach(json_object_get(st, "ranks"), i, r)
			if (!isnan(jnv(r, "compute_sec")))
				prom_rank(b, "clusterhealth_steps_rank_compute_seconds", r, jnv(r, "compute_sec"));
		hr_buf_puts(b, "# HELP clusterhealth_steps_straggler 1 for a straggler rank (robust z >= 3.5 and >= 5% over the median).\n"
			       "# TYPE clusterhealth_steps_straggler gauge\n");
		json_array_foreach(json_object_get(st, "ranks"), i, r)
			prom_rank(b, "clusterhealth_steps_straggler", r, json_is_true(json_object_get(r, "straggler")));
	}
	return b->oom ? CH_ERR_RUNTIME : 0;
}
