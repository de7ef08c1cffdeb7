/*
 * hr_steps_canary.c - step logs into the canary (interface:
 * hr_steps_canary.h; docs/canary.md, "Step logs").
 */
#include "report/canary/hr_steps_canary.h"
#include "report/read/hr_steps.h"
#include "report/canary/hr_steps_run.h"
#include "report/hr_util.h"
#include "base/ch_common.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static struct hr_fig meas(double v)
{
	struct hr_fig f = { v, HR_SRC_MEASURED };
	return f;
}

static const char *esc(const char *s, char *b, size_t n)
{
	return hr_steps_term_text(s, 120, b, n);
}

/* a log's text for a JSON document: as it is when it is valid UTF-8 (every
 * output escapes it for its format), else escaped byte by byte */
static const char *json_text(const char *s, char *b, size_t n)
{
	return hr_steps_json_text(s, 120, b, n);
}

static const struct hr_steps_rank *worst_straggler(const struct hr_steps_run *r)
{
	size_t i;
	for (i = 0; i < r->nranks; i++)
		if (r->ranks[i].straggler)
			return &r->ranks[i];
	return NULL;
}

#define GPUS_UNKNOWN "GPU count unknown (one rank's log: the job's GPU count is not printed)"

/* the counts the logs measure where not given; 0, or CH_ERR_USAGE naming
 * each log whose count is needed and unknown and the option that gives it */
static int apply_gpus(const struct hr_steps_run *now, const char *now_from, const struct hr_steps_run *base,
		      const char *base_from, struct hr_canary_in *in)
{
	char m1[HR_CANARY_PATH_TEXT + 200] = "", m2[HR_CANARY_PATH_TEXT + 200] = "";
	double g;

	if (now && !in->gpus_now.src) {
		if ((g = hr_steps_run_gpus(now)) > 0) {
			in->gpus_now = meas(g);
			snprintf(in->gpus_now_from, sizeof(in->gpus_now_from), "%s: %zu ranks", now_from, now->nranks);
		} else {
			snprintf(m1, sizeof(m1), "%s: " GPUS_UNKNOWN "; give --gpus-now N", now_from);
		}
	}
	if (base && base->wall_step_sec > 0 && !in->baseline_gpus.src) {
		if ((g = hr_steps_run_gpus(base)) > 0) {
			in->baseline_gpus = meas(g);
			snprintf(in->baseline_gpus_from, sizeof(in->baseline_gpus_from), "%s: %zu ranks", base_from,
				 base->nranks);
		} else {
			snprintf(m2, sizeof(m2), "%s: " GPUS_UNKNOWN "; give --baseline-gpus N", base_from);
		}
	}
	if (m1[0] && m2[0])
		return ch_usage_error("%s\n  and %s", m1, m2);
	if (m1[0] || m2[0])
		return ch_usage_error("%s", m1[0] ? m1 : m2);
	return 0;
}

/* a run's wall-clock step into @step: the window's (stalls included), else
 * Hugging Face's run summary (train_runtime / steps: the whole run,
 * evaluations and checkpoints included, as the canary's step time is);
 * neither: @why says which figure is missing from which logs */
static void apply_step(const struct hr_steps_run *r, const char *from, struct hr_fig *step, char *why, size_t n)
{
	if (r->wall_step_sec > 0)
		*step = meas(r->wall_step_sec);
	else if (r->summary_step_sec > 0)
		*step = meas(r->summary_step_sec);
	else
		snprintf(why, n, "%s: no step time in these logs (no timed step line, no timestamps between steps, "
			 "no run summary such as Hugging Face's train_runtime)", from);
}

int hr_steps_canary_apply(const struct hr_steps_run *now, const char *now_from, const struct hr_steps_run *base,
			  const char *base_from, struct hr_canary_in *in)
{
	int rc;

	if (base && !now && !in->step_sec.src && !in->scaling_efficiency.src)
		return ch_usage_error("%s: a baseline needs today's step: give --steps PATH or --step-time", base_from);
	if ((rc = apply_gpus(now, now_from, base, base_from, in)))
		return rc;
	if (now) {
		const struct hr_steps_rank *s = worst_straggler(now);
		if (!in->step_sec.src)
			apply_step(now, now_from, &in->step_sec, in->step_missing, sizeof(in->step_missing));
		if (!in->ckpt_block_sec.src && now->ckpt_block_sec > 0) {
			if (!in->ckpt_interval_sec.src && now->ckpt_interval_sec > now->ckpt_block_sec)
				in->ckpt_interval_sec = meas(now->ckpt_interval_sec);
			if (in->ckpt_interval_sec.src)
				in->ckpt_block_sec = meas(now->ckpt_block_sec);
		}
		if (!in->input_wait_frac.src && now->input_frac >= 0 && now->input_frac < 1) {
			in->input_wait_frac = meas(now->input_frac);
			snprintf(in->input_wait_from, sizeof(in->input_wait_from), "(step logs, the worst rank)");
		}
		if (!in->host_cpu_frac.src && now->host_cpu >= 0 && now->host_cpu <= 1)
			in->host_cpu_frac = meas(now->host_cpu);
		double job_tok = hr_steps_job_tokens(now, in->gpus_now.src ? in->gpus_now.v : 0);
		if (!in->tokens_per_step.src && job_tok > 0) {
			/* the logs' per-GPU tokens x the job's GPUs (given or the ranks) */
			in->tokens_per_step = meas(job_tok);
			in->tokens_per_step.src |= now->tokens_per_step > 0 ? 0 : in->gpus_now.src;
		}
		if (s && !in->straggler[0]) {
			char e1[400], e2[300];
			if (s->node[0])
				snprintf(in->straggler, sizeof(in->straggler), "%s on %s (compute +%.1f%% over the median rank, robust z %.1f)",
					 esc(s->id, e1, sizeof(e1)), esc(s->node, e2, sizeof(e2)),
					 100 * s->excess_sec / now->compute_median, s->z);
			else
				snprintf(in->straggler, sizeof(in->straggler), "%s (compute +%.1f%% over the median rank, robust z %.1f)",
					 esc(s->id, e1, sizeof(e1)), 100 * s->excess_sec / now->compute_median, s->z);
			if (s->node[0])
				snprintf(in->straggler_id, sizeof(in->straggler_id), "%s on %s", esc(s->id, e1, sizeof(e1)),
					 esc(s->node, e2, sizeof(e2)));
			else
				snprintf(in->straggler_id, sizeof(in->straggler_id), "%s", esc(s->id, e1, sizeof(e1)));
			in->straggler_sec = meas(now->straggler_cost_sec);
		}
	}
	if (base) {
		/* a given --baseline-gpus combines with the measured step (the count
		 * of a one-rank log is not in it), a given --baseline-step-time with
		 * the measured count */
		if (!in->baseline_step_sec.src)
			apply_step(base, base_from, &in->baseline_step_sec, in->baseline_step_missing,
				   sizeof(in->baseline_step_missing));
	}
	return 0;
}

static void line(FILE *f, const char *label, const char *value)
{
	fprintf(f, "  %-40s %s [measured]\n", label, value);
}

static void one(FILE *f, const char *who, const struct hr_steps_run *r)
{
	char l[96], v[400], a[300];
	const struct hr_steps_rank *s;
	int p;
	size_t u = 0;

	if (r->step_sec > 0) {
		snprintf(l, sizeof(l), "%s: training step (steps %ld-%ld)", who, r->win_first, r->win_last);
		snprintf(v, sizeof(v), "%.3f s median over %zu rank%s, p95 %.3f s", r->step_sec, r->nranks,
			 r->nranks == 1 ? "" : "s", r->step_p95);
	} else {
		snprintf(l, sizeof(l), "%s: training step", who);
		snprintf(v, sizeof(v), "not in these logs (no per-step times)");
	}
	line(f, l, v);
	if (!(r->wall_step_sec > 0) && r->summary_step_sec > 0) {
		snprintf(l, sizeof(l), "%s: mean step (run summary)", who);
		snprintf(v, sizeof(v), "%.3f s (train_runtime / steps: the whole run, evaluations and checkpoints included)",
			 r->summary_step_sec);
		line(f, l, v);
	}
	if (r->nckpt + r->nstall) {
		snprintf(l, sizeof(l), "%s: checkpoint stalls", who);
		if (r->stall_frac > 0)
			snprintf(v, sizeof(v), "%d, %.3g min every %.3g min = %.1f%% of wall-clock", r->nckpt + r->nstall,
				 r->ckpt_block_sec / 60, r->ckpt_interval_sec / 60, 100 * r->stall_frac);
		else
			snprintf(v, sizeof(v), "%d, %.3g min each (interval not measured)", r->nckpt + r->nstall,
				 r->ckpt_block_sec / 60);
		line(f, l, v);
	}
	if (r->wall_step_sec > 0) {
		snprintf(l, sizeof(l), "%s: wall-clock step", who);
		snprintf(v, sizeof(v), "%.3f s (stalls included)", r->wall_step_sec);
		line(f, l, v);
	}
	if (r->input_frac >= 0) {
		snprintf(l, sizeof(l), "%s: input wait", who);
		if (!isnan(r->host_cpu))
			snprintf(v, sizeof(v), "%.1f%% of the training step, while the host CPUs are %.0f%% busy",
				 100 * r->input_frac, 100 * r->host_cpu);
		else
			snprintf(v, sizeof(v), "%.1f%% of the training step", 100 * r->input_frac);
		line(f, l, v);
	}
	if (r->have_split) {
		for (p = 0; p < HR_PH_N && u < sizeof(v); p++) {
			if (isnan(r->phase_mean[p]) || (p == HR_PH_FWDBWD && !isnan(r->phase_mean[HR_PH_FORWARD])))
				continue;
			u += (size_t)snprintf(v + u, sizeof(v) - u, "%s%s %.3f s", u ? ", " : "", hr_steps_phase_name(p),
					      r->phase_mean[p]);
		}
		snprintf(l, sizeof(l), "%s: time split", who);
		line(f, l, v);
	}
	snprintf(l, sizeof(l), "%s: stragglers", who);
	if (!r->stragglers_visible) {
		line(f, l, "cannot be seen: no per-rank phase times (every rank's step is the same)");
	} else if ((s = worst_straggler(r))) {
		char e2[300];
		snprintf(v, sizeof(v), "%s%s%s: compute +%.1f%% over the median rank (z %.1f); the step %.3f s shorter without it",
			 esc(s->id, a, sizeof(a)), s->node[0] ? " on " : "", s->node[0] ? esc(s->node, e2, sizeof(e2)) : "",
			 100 * s->excess_sec / r->compute_median, s->z, r->straggler_cost_sec);
		line(f, l, v);
	} else {
		line(f, l, "none");
	}
	if (r->tokens_per_step > 0) {
		snprintf(l, sizeof(l), "%s: tokens", who);
		snprintf(v, sizeof(v), "%.4g per step, %.4g per s", r->tokens_per_step, r->tokens_per_sec);
		line(f, l, v);
	}
	if (!isnan(r->mfu_logged)) {
		snprintf(l, sizeof(l), "%s: MFU in the log", who);
		snprintf(v, sizeof(v), "%.1f%% (the framework's own FLOP count and peak)", 100 * r->mfu_logged);
		line(f, l, v);
	}
}

void hr_steps_canary_print(FILE *f, const struct hr_steps_run *now, const struct hr_steps_run *base)
{
	if (!now && !base)
		return;
	fprintf(f, "step logs (window: %ld steps after a warm-up of %ld; health_report steps shows every rank)\n",
		now ? now->window : base->window, now ? now->warmup : base->warmup);
	if (base)
		one(f, "baseline", base);
	if (now)
		one(f, "today", now);
	fputc('\n', f);
}

static json_t *run_json(const struct hr_steps_run *r)
{
	const struct hr_steps_rank *s;
	char e1[400], e2[300];
	if (!r)
		return json_null();
	s = worst_straggler(r);
	return json_pack("{s:I, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:b, s:o}", "ranks", (json_int_t)r->nranks,
			 "step_sec", r->step_sec > 0 ? json_real(r->step_sec) : json_null(),
			 "p95_sec", r->step_p95 > 0 ? json_real(r->step_p95) : json_null(),
			 "summary_step_sec", r->summary_step_sec > 0 ? json_real(r->summary_step_sec) : json_null(),
			 "wall_step_sec", r->wall_step_sec > 0 ? json_real(r->wall_step_sec) : json_null(),
			 "stall_frac", r->stall_frac >= 0 ? json_real(r->stall_frac) : json_null(),
			 "input_wait_frac", r->input_frac >= 0 ? json_real(r->input_frac) : json_null(),
			 "host_cpu_frac", r->host_cpu >= 0 ? json_real(r->host_cpu) : json_null(),
			 "tokens_per_step", r->tokens_per_step > 0 ? json_real(r->tokens_per_step) : json_null(),
			 "stragglers_visible", r->stragglers_visible,
			 "straggler", s ? json_pack("{s:s, s:s?, s:f, s:f}", "id", json_text(s->id, e1, sizeof(e1)),
						    "node", s->node[0] ? json_text(s->node, e2, sizeof(e2)) : NULL,
						    "z", s->z, "cost_sec", r->straggler_cost_sec) : json_null());
}

json_t *hr_steps_canary_json(const struct hr_steps_run *now, const struct hr_steps_run *base)
{
	return json_pack("{s:o, s:o}", "today", run_json(now), "baseline", run_json(base));
}
