/*
 * Step logs: the real public samples in tests/data/steps (README.md there
 * gives each one's source) read to the figures a person reads off them;
 * broken inputs (cut-off lines, two formats in one file, binary data, an
 * empty file); the derivation of a run (window, stalls, stragglers) and
 * the straggler rule's false alarms on healthy noisy ranks and its recall
 * on a slow one.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/ch_common.h"
#include "report/canary/hr_steps_canary.h"
#include "report/canary/hr_steps_run.h"
#include "report/read/hr_steps.h"
#include "report/hr_util.h"

#define D "tests/data/steps/"

#define MAXREC 64
struct got {
	struct hr_step_rec r[MAXREC];
	int n;
};

static int collect(const struct hr_step_rec *r, void *ctx)
{
	struct got *g = ctx;
	if (g->n < MAXREC)
		g->r[g->n++] = *r;
	return 0;
}

static int readf(const char *path, struct got *g, struct hr_issues *is, struct hr_steps_file_info *info)
{
	memset(g, 0, sizeof(*g));
	memset(is, 0, sizeof(*is));
	return hr_steps_read(path, collect, g, is, info);
}

static int has_issue(const struct hr_issues *is, int kind, int line, const char *needle)
{
	size_t i;
	for (i = 0; i < is->n; i++)
		if (is->v[i].kind == kind && (line < 0 || is->v[i].line == line) && strstr(is->v[i].msg, needle))
			return 1;
	return 0;
}

#define NEAR(a, b, tol) cr_assert(fabs((a) - (b)) <= (tol), "%s = %.9g, want %.9g", #a, (double)(a), (double)(b))

Test(steps, torchtitan_rank_prefix)
{
	struct got g;
	struct hr_issues is;
	struct hr_steps_file_info info;

	cr_assert_eq(readf(D "torchtitan_pr3393_a.log", &g, &is, &info), 0);
	cr_assert_eq(info.format, HR_SF_TORCHTITAN);
	cr_assert_eq(g.n, 8);
	cr_assert_eq(g.r[0].local_rank, 0, "[rank0]: is torchrun's local rank");
	cr_assert_eq(g.r[0].rank, -1);
	cr_assert_eq(g.r[0].step, 14);
	NEAR(g.r[0].loss, 3.24405, 1e-9);
	NEAR(g.r[0].tokens_per_sec, 7282, 0);
	NEAR(g.r[0].tflops, 0.52, 1e-12);
	NEAR(g.r[0].mfu, 0.0017, 1e-12);
	NEAR(g.r[7].t_end - g.r[0].t_end, 54.191 - 46.338, 1e-6);
	cr_assert_eq(is.n, 0);
	hr_issues_release(&is);
}

Test(steps, torchtitan_no_prefix_and_cut_line)
{
	struct got g;
	struct hr_issues is;
	struct hr_steps_file_info info;

	cr_assert_eq(readf(D "torchtitan_pr2389_no_prefix.log", &g, &is, &info), 0);
	cr_assert_eq(g.n, 8, "7 lines of step 4, one of step 5; the cut-off one skipped");
	cr_assert_eq(g.r[0].local_rank, -1);
	NEAR(g.r[4].tokens_per_sec, 10049, 0);
	NEAR(g.r[7].tokens_per_sec, 10007, 0);
	cr_assert(has_issue(&is, HR_ISSUE_SKIPPED, 9, "without a readable tps"), "line 9 is cut off");
	hr_issues_release(&is);
}

Test(steps, torchtitan_run_from_timestamps)
{
	struct hr_steps_run run;
	struct hr_issues is = { 0 };
	char *p[] = { D "torchtitan_pr3393_a.log" };

	cr_assert_eq(hr_steps_run_load(p, 1, NULL, &run, &is), 0);
	cr_assert_eq(run.nranks, 1);
	cr_assert(run.window_all, "8 steps: nothing after a warm-up of 10");
	/* seven intervals 1.118 1.121 1.125 1.119 1.121 1.127 1.122 s: median 1.121 */
	NEAR(run.step_sec, 1.121, 1e-6);
	NEAR(run.tps_per_gpu, 7309, 0); /* steps 15-21: the first line has no interval */
	cr_assert(!run.stragglers_visible);
	cr_assert_eq(run.nevents, 0);
	hr_steps_run_release(&run);
	hr_issues_release(&is);
}

Test(steps, torchtitan_log_every_10_steps)
{
	struct hr_steps_run run;
	struct hr_issues is = { 0 };
	char *p[] = { D "torchtitan_pr1287_gc_profiler.log" };

	cr_assert_eq(hr_steps_run_load(p, 1, NULL, &run, &is), 0);
	/* steps 210..250 after a warm-up of 10 from step 200; intervals of 10
	 * steps: 14.648 13.964 13.961 13.974 13.977 s */
	cr_assert_eq(run.win_first, 210);
	cr_assert_eq(run.win_last, 250);
	NEAR(run.step_sec, 1.3974, 1e-6);
	NEAR(run.mfu_logged, 0.3434, 1e-9); /* 32.75 34.36 34.37 34.34 34.33 */
	cr_assert_eq(run.nstall, 0, "a 0.06 s GC pause is no stall");
	hr_steps_run_release(&run);
	hr_issues_release(&is);
}

Test(steps, megatron_iterations_and_cut_line)
{
	struct got g;
	struct hr_issues is;
	struct hr_steps_file_info info;

	cr_assert_eq(readf(D "megatron_issue756_a.log", &g, &is, &info), 0);
	cr_assert_eq(info.format, HR_SF_MEGATRON);
	cr_assert_eq(g.n, 3);
	cr_assert_eq(g.r[0].step, 43);
	NEAR(g.r[0].step_sec, 5.4449, 1e-12);
	NEAR(g.r[0].tflops, 239.8, 1e-12);
	NEAR(g.r[0].global_batch, 128, 0);
	NEAR(g.r[0].loss, 1.825991, 1e-12);
	NEAR(g.r[1].t_end - g.r[0].t_end, 5, 0);
	cr_assert(has_issue(&is, HR_ISSUE_SKIPPED, 4, "elapsed time per iteration"));
	hr_issues_release(&is);
}

Test(steps, megatron_one_line_timers)
{
	struct got g;
	struct hr_issues is;

	cr_assert_eq(readf(D "megatron_nccl743_timers_a.log", &g, &is, NULL), 0);
	cr_assert_eq(g.n, 2, "the setup timers are no step");
	cr_assert_eq(g.r[0].step, 10);
	NEAR(g.r[0].step_sec, 0.3562, 1e-12);
	NEAR(g.r[0].phase[HR_PH_FORWARD], 0.19377, 1e-12);
	NEAR(g.r[0].phase[HR_PH_BACKWARD], 0.07302, 1e-12);
	NEAR(g.r[0].phase[HR_PH_OPTIMIZER], 0.06301, 1e-12);
	NEAR(g.r[0].phase[HR_PH_ALLREDUCE], 0.02022, 1e-12); /* backward-reduce-model-grads, not the sum twice */
	NEAR(g.r[0].phase[HR_PH_INPUT], 0.02527, 1e-12);
	cr_assert(isnan(g.r[1].phase[HR_PH_FORWARD]));
	hr_issues_release(&is);
}

Test(steps, megatron_checkpoint_and_evaluation)
{
	struct got g;
	struct hr_issues is;
	int i, ck = -1, ev = -1;

	cr_assert_eq(readf(D "megatron_bridge_ckpt_eval.log", &g, &is, NULL), 0);
	for (i = 0; i < g.n; i++) {
		if (g.r[i].kind == HR_SK_CKPT)
			ck = i;
		if (g.r[i].kind == HR_SK_EVAL)
			ev = i;
	}
	cr_assert_eq(g.r[0].kind, HR_SK_STEP);
	NEAR(g.r[0].step_sec, 4.6478, 1e-12);
	cr_assert(ck >= 0 && g.r[ck].step == 10 && isnan(g.r[ck].ckpt_sec), "saved at 10, no duration logged");
	cr_assert(ev >= 0 && g.r[ev].step == 10);
	NEAR(g.r[ev].step_sec, 57.31402, 1e-9);
	hr_issues_release(&is);
}

Test(steps, megatron_minmax_and_per_rank_timers)
{
	char path[] = "/tmp/ch-steps-XXXXXX";
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w");
	struct got g;
	struct hr_issues is;

	/* the layout of Megatron-LM's timers (megatron/core/timers.py) */
	fprintf(f, " iteration       10/     100 | consumed samples:          640 | elapsed time per iteration (ms): 1000.0 | global batch size:    64 |\n"
		   "(min, max) time across ranks (ms):\n"
		   "    forward-backward ...............................: (700.00, 800.00)\n"
		   "    forward-compute ................................: (250.00, 300.00)\n"
		   "    backward-compute ...............................: (450.00, 500.00)\n"
		   "    optimizer ......................................: (40.00, 41.00)\n"
		   " iteration       20/     100 | consumed samples:         1280 | elapsed time per iteration (ms): 1010.0 | global batch size:    64 |\n"
		   "times across ranks (ms):\n"
		   "  forward-compute:\n"
		   "     rank  0: 250.00\n"
		   "     rank  1: 300.00\n"
		   "  backward-compute:\n"
		   "     rank  0: 450.00\n"
		   "     rank  1: 500.00\n"
		   "  all-grads-sync:\n"
		   "     rank  0: 120.00\n"
		   "     rank  1: 20.00\n");
	fclose(f);
	cr_assert_eq(readf(path, &g, &is, NULL), 0);
	unlink(path);
	cr_assert_eq(g.n, 3, "iteration 10 once, iteration 20 once per rank");
	NEAR(g.r[0].phase_lo[HR_PH_FORWARD], 0.25, 1e-12);
	NEAR(g.r[0].phase_hi[HR_PH_FORWARD], 0.30, 1e-12);
	NEAR(g.r[0].phase_hi[HR_PH_FWDBWD], 0.80, 1e-12);
	cr_assert_eq(g.r[1].rank, 0);
	cr_assert_eq(g.r[2].rank, 1);
	NEAR(g.r[2].phase[HR_PH_FORWARD], 0.30, 1e-12);
	NEAR(g.r[2].phase[HR_PH_ALLREDUCE], 0.02, 1e-12);
	NEAR(g.r[2].step_sec, 1.01, 1e-12);
	hr_issues_release(&is);
}

Test(steps, maxtext_both_forms)
{
	struct got g;
	struct hr_issues is;

	cr_assert_eq(readf(D "maxtext_issue8.log", &g, &is, NULL), 0);
	cr_assert_eq(g.n, 3);
	cr_assert_eq(g.r[0].step, 15107);
	NEAR(g.r[0].step_sec, 2.167, 1e-12);
	NEAR(g.r[0].tflops, 36.722, 1e-12);
	NEAR(g.r[0].loss, 2.191, 1e-12);
	hr_issues_release(&is);
	cr_assert_eq(readf(D "maxtext_pr4847_absl.log", &g, &is, NULL), 0);
	cr_assert_eq(g.n, 3);
	NEAR(g.r[1].step_sec, 10.228, 1e-12);
	NEAR(g.r[1].tflops, 350.869, 1e-12);
	NEAR(g.r[1].tokens_per_sec, 19222.175, 1e-9);
	NEAR(g.r[1].loss, 12.980, 1e-12);
	NEAR(g.r[2].t_end - g.r[1].t_end, 16.704861 - 6.119312, 1e-6);
	hr_issues_release(&is);
}

Test(steps, hugging_face_dicts_and_state)
{
	struct got g;
	struct hr_issues is;
	int i, sum = -1;

	cr_assert_eq(readf(D "hf_issue9415_srun_labels.log", &g, &is, NULL), 0);
	cr_assert_eq(g.n, 8);
	cr_assert_eq(g.r[0].rank, 0, "srun's '0: ' label");
	cr_assert_eq(g.r[1].rank, 1);
	NEAR(g.r[1].loss, 10.57164478302002, 1e-12);
	cr_assert_eq(g.r[4].kind, HR_SK_EVAL);
	hr_issues_release(&is);

	cr_assert_eq(readf(D "hf_pr9613_tf_trainer.log", &g, &is, NULL), 0);
	cr_assert_eq(g.n, 2);
	cr_assert_eq(g.r[1].step, 20);
	NEAR(g.r[1].t_end - g.r[0].t_end, 6.42, 1e-6);
	hr_issues_release(&is);

	cr_assert_eq(readf(D "hf_trainer_state.json", &g, &is, NULL), 0);
	for (i = 0; i < g.n; i++)
		if (g.r[i].kind == HR_SK_SUMMARY)
			sum = i;
	cr_assert(sum >= 0);
	NEAR(g.r[sum].step_sec, 1 / 0.254, 1e-9);
	NEAR(g.r[sum].runtime_sec, 12359.4488, 1e-9);
	NEAR(g.r[sum].total_flos, 5.309428181101363e+16, 1);
	cr_assert_eq(g.r[0].step, 50);
	hr_issues_release(&is);
}

Test(steps, plain_form)
{
	struct hr_steps_run run;
	struct hr_issues is = { 0 };
	char *p[] = { D "plain_issue23.log" };

	cr_assert_eq(hr_steps_run_load(p, 1, NULL, &run, &is), 0);
	cr_assert_eq(run.nranks, 2);
	NEAR(run.step_sec, 1.015, 1e-12);
	NEAR(run.input_frac, (0.21 + 0.20) / (1.02 + 1.01), 1e-12);
	cr_assert_eq(run.ranks[run.input_rank].rank, 1);
	NEAR(run.mfu_logged, (0.3265 + 0.3255) / 2, 1e-12);
	hr_steps_run_release(&run);
	hr_issues_release(&is);
}

/* the GPU count a run's logs measure: the ranks seen when more than one;
 * a log printed by one rank gives none, and none is ever assumed */
Test(canary_steps, gpu_count_of_one_rank_logs)
{
	struct hr_steps_run one, two;
	struct hr_issues is = { 0 };
	struct hr_canary_in in;
	char *p1[] = { D "torchtitan_pr3393_a.log" }, *p2[] = { D "plain_issue23.log" };

	cr_assert_eq(hr_steps_run_load(p1, 1, NULL, &one, &is), 0);
	cr_assert_eq(hr_steps_run_load(p2, 1, NULL, &two, &is), 0);
	cr_assert_eq(hr_steps_run_gpus(&one), 0, "one rank's log: the job's GPU count is unknown");
	cr_assert_eq(hr_steps_run_gpus(&two), 2);
	cr_assert_eq(hr_steps_run_gpus(NULL), 0);

	/* today's count unknown and not given: an error, nothing set */
	hr_canary_in_init(&in);
	cr_assert_eq(hr_steps_canary_apply(&one, "--steps a.log", NULL, "", &in), CH_ERR_USAGE);
	cr_assert_eq(in.gpus_now.src, 0);
	/* the baseline's count unknown and not given: an error */
	hr_canary_in_init(&in);
	cr_assert_eq(hr_steps_canary_apply(&two, "--steps p.log", &one, "--baseline-steps a.log", &in), CH_ERR_USAGE);
	cr_assert_eq(in.baseline_gpus.src, 0);
	/* given, it combines with the measured step; today's count measured and named */
	hr_canary_in_init(&in);
	in.baseline_gpus = (struct hr_fig){ 1, HR_SRC_GIVEN };
	cr_assert_eq(hr_steps_canary_apply(&two, "--steps p.log", &one, "--baseline-steps a.log", &in), 0);
	cr_assert_eq(in.baseline_gpus.src, HR_SRC_GIVEN);
	NEAR(in.baseline_gpus.v, 1, 0);
	cr_assert_eq(in.baseline_step_sec.src, HR_SRC_MEASURED);
	NEAR(in.baseline_step_sec.v, 1.121, 1e-6);
	cr_assert_eq(in.gpus_now.src, HR_SRC_MEASURED);
	NEAR(in.gpus_now.v, 2, 0);
	cr_assert_str_eq(in.gpus_now_from, "--steps p.log: 2 ranks");
	cr_assert_str_eq(in.baseline_gpus_from, "");
	/* a given --baseline-step-time combines with a measured count */
	hr_canary_in_init(&in);
	in.baseline_step_sec = (struct hr_fig){ 1.5, HR_SRC_GIVEN };
	cr_assert_eq(hr_steps_canary_apply(&one, "--steps a.log", &two, "--baseline-steps p.log", &in), CH_ERR_USAGE,
		     "today's count still unknown");
	in.gpus_now = (struct hr_fig){ 8, HR_SRC_GIVEN };
	cr_assert_eq(hr_steps_canary_apply(&one, "--steps a.log", &two, "--baseline-steps p.log", &in), 0);
	cr_assert_eq(in.baseline_step_sec.src, HR_SRC_GIVEN);
	NEAR(in.baseline_step_sec.v, 1.5, 0);
	cr_assert_eq(in.baseline_gpus.src, HR_SRC_MEASURED);
	NEAR(in.baseline_gpus.v, 2, 0);
	cr_assert_str_eq(in.baseline_gpus_from, "--baseline-steps p.log: 2 ranks");
	hr_steps_run_release(&one);
	hr_steps_run_release(&two);
	hr_issues_release(&is);
}

/* a file of its own text */
static void write_text(const char *path, const char *text, size_t n)
{
	FILE *f = fopen(path, "wb");
	cr_assert(f);
	fwrite(text, 1, n, f);
	fclose(f);
}

Test(steps, broken_inputs)
{
	char dir[] = "/tmp/ch-steps-dir-XXXXXX", p1[300], p2[300], p3[300], p4[300], p5[300];
	static const char bin[] = "\x7f" "ELF\x02\x01\x01\x00\x00\x00garbage\n\x00\x01";
	struct got g;
	struct hr_issues is;
	struct hr_steps_file_info info;
	struct hr_steps_run run;
	char *paths[1];

	cr_assert(mkdtemp(dir));
	snprintf(p1, sizeof(p1), "%s/a.log", dir);
	snprintf(p2, sizeof(p2), "%s/b.log", dir);
	snprintf(p3, sizeof(p3), "%s/c.log", dir);
	snprintf(p4, sizeof(p4), "%s/d.log", dir);
	snprintf(p5, sizeof(p5), "%s/e.jsonl", dir);
	/* binary data */
	write_text(p1, bin, sizeof(bin) - 1);
	cr_assert_eq(readf(p1, &g, &is, NULL), HR_STEPS_SKIP);
	cr_assert(has_issue(&is, HR_ISSUE_SKIPPED, 0, "binary data"));
	hr_issues_release(&is);
	/* no step line: the first line is named as it is (every output escapes
	 * the input problems: the terminal shows the escape as \e) */
	write_text(p2, "hello\x1b[31m world\nnothing here\n", 30);
	cr_assert_eq(readf(p2, &g, &is, NULL), HR_STEPS_SKIP);
	cr_assert(has_issue(&is, HR_ISSUE_SKIPPED, 1, "'hello\x1b[31m world'"), "%s", is.n ? is.v[0].msg : "");
	cr_assert(strstr(hr_term(is.v[0].msg), "'hello\\e[31m world'"), "%s", hr_term(is.v[0].msg));
	hr_issues_release(&is);
	/* two frameworks in one file: both read, a note */
	{
		static const char mixed[] =
			"completed step: 1, seconds: 2.0, TFLOP/s: 30.0, loss: 2.0\n"
			"[rank0]:[titan] 2026-05-18 16:04:46,338 - root - INFO - step: 14  loss:  3.24405  memory:  9.46GiB(64.99%)  tps: 7,282  tflops: 0.52  mfu: 0.17%\n";
		write_text(p3, mixed, sizeof(mixed) - 1);
		cr_assert_eq(readf(p3, &g, &is, &info), 0);
		cr_assert_eq(g.n, 2);
		cr_assert(has_issue(&is, HR_ISSUE_NOTE, 0, "MaxText (1 record, lines 1-1)"), "%s", is.n ? is.v[0].msg : "");
		cr_assert(has_issue(&is, HR_ISSUE_NOTE, 0, "torchtitan (1 record, lines 2-2)"));
		hr_issues_release(&is);
	}
	/* empty */
	write_text(p4, "", 0);
	cr_assert_eq(readf(p4, &g, &is, NULL), HR_STEPS_SKIP);
	cr_assert(has_issue(&is, HR_ISSUE_SKIPPED, 0, "empty file"));
	hr_issues_release(&is);
	/* JSON lines: a cut-off record and a record with a bad field, between good ones */
	{
		static const char jl[] =
			"{\"rank\":0,\"step\":1,\"start\":0.0,\"end\":1.0}\n"
			"{\"rank\":0,\"step\":2,\"start\":1.0,\"en\n"
			"{\"rank\":0,\"step\":-3,\"start\":2.0,\"end\":3.0}\n"
			"{\"rank\":0,\"step\":4,\"start\":3.0,\"end\":4.0}\n";
		write_text(p5, jl, sizeof(jl) - 1);
		cr_assert_eq(readf(p5, &g, &is, NULL), 0);
		cr_assert_eq(g.n, 2);
		cr_assert(has_issue(&is, HR_ISSUE_SKIPPED, 2, "closing brace"));
		cr_assert(has_issue(&is, HR_ISSUE_SKIPPED, 3, "\"step\" is not a whole number"));
		hr_issues_release(&is);
	}
	/* one run over the directory: the bad files listed, the good ones read */
	memset(&is, 0, sizeof(is));
	paths[0] = dir;
	cr_assert_eq(hr_steps_run_load(paths, 1, NULL, &run, &is), 0);
	cr_assert_eq(run.nfiles, 5);
	cr_assert_eq(run.nfiles_read, 2);
	cr_assert(has_issue(&is, HR_ISSUE_SKIPPED, 0, "binary data"));
	hr_steps_run_release(&run);
	hr_issues_release(&is);
	unlink(p1);
	unlink(p2);
	unlink(p3);
	unlink(p4);
	unlink(p5);
	rmdir(dir);
}

/* A synthetic run in JSON lines: @ranks ranks, 8 per node, 120 steps of
 * 1 s, each rank's compute 0.7 s x (1 + its own deviation in [-noise,
 * +noise]) and a per-step jitter of a quarter of that; @slow computes
 * @factor times longer. Returns the directory (caller removes). */
static void fleet(const char *dir, int ranks, double noise, unsigned seed, int slow, double factor)
{
	char path[400];
	FILE *f;
	int r, s;
	double *dev = calloc((size_t)ranks, sizeof(double));

	srand(seed);
	for (r = 0; r < ranks; r++)
		dev[r] = 1 + noise * (2.0 * rand() / RAND_MAX - 1) * (r == slow ? 0 : 1) + (r == slow ? factor - 1 : 0);
	snprintf(path, sizeof(path), "%s/run.jsonl", dir);
	f = fopen(path, "w");
	cr_assert(f);
	for (s = 1; s <= 120; s++)
		for (r = 0; r < ranks; r++) {
			double c = 0.7 * dev[r] * (1 + noise / 4 * (2.0 * rand() / RAND_MAX - 1));
			fprintf(f, "{\"rank\":%d,\"host\":\"node%02d\",\"step\":%d,\"start\":%d.0,\"end\":%d.0,"
				   "\"phases\":{\"forward\":%.6f,\"backward\":%.6f,\"allreduce\":%.6f},\"input_wait\":0.05}\n",
				r, r / 8 + 1, s, s, s + 1, c / 3, 2 * c / 3, 1 - 0.05 - c);
		}
	fclose(f);
	free(dev);
}

static int stragglers_of(int ranks, double noise, unsigned seed, int slow, double factor, int *found_slow)
{
	char dir[] = "/tmp/ch-steps-fleet-XXXXXX", path[400];
	struct hr_steps_run run;
	struct hr_issues is = { 0 };
	char *paths[1] = { dir };
	size_t i;
	int n;

	cr_assert(mkdtemp(dir));
	fleet(dir, ranks, noise, seed, slow, factor);
	cr_assert_eq(hr_steps_run_load(paths, 1, NULL, &run, &is), 0);
	cr_assert(run.stragglers_visible);
	n = run.nstragglers;
	*found_slow = 0;
	for (i = 0; i < run.nranks; i++)
		if (run.ranks[i].straggler && run.ranks[i].rank == slow)
			*found_slow = 1;
	hr_steps_run_release(&run);
	hr_issues_release(&is);
	snprintf(path, sizeof(path), "%s/run.jsonl", dir);
	unlink(path);
	rmdir(dir);
	return n;
}

/* False alarms: 40 healthy fleets of 64 ranks with 3% noise (1 in 8 ranks
 * as much as 3% apart from the median, every step 0.75% jitter): no rank
 * is flagged (the 5% effect floor and z >= 3.5 together). */
Test(steps, straggler_false_alarms_on_healthy_noisy_fleets, .timeout = 120)
{
	unsigned seed;
	int flagged = 0, dummy;
	for (seed = 1; seed <= 40; seed++)
		flagged += stragglers_of(64, 0.03, seed, -1, 1, &dummy);
	cr_assert_eq(flagged, 0, "%d ranks flagged in 40 healthy fleets", flagged);
}

/* Recall: a rank 10% or 25% slow in a 3%-noisy fleet is found every time,
 * and nothing else is flagged. */
Test(steps, straggler_recall_on_a_slow_rank, .timeout = 120)
{
	unsigned seed;
	int found = 0, extra = 0, f, n;
	for (seed = 1; seed <= 20; seed++) {
		n = stragglers_of(64, 0.03, seed, (int)(seed * 7 % 64), seed % 2 ? 1.10 : 1.25, &f);
		found += f;
		extra += n - f;
	}
	cr_assert_eq(found, 20, "found %d of 20 slow ranks", found);
	cr_assert_eq(extra, 0, "%d healthy ranks flagged beside them", extra);
}

/* Only step times (every rank's step the same): stragglers cannot be seen. */
Test(steps, stragglers_not_visible_in_step_times)
{
	struct hr_steps_run run;
	struct hr_issues is = { 0 };
	char *p[] = { D "megatron_issue756_b.log" };

	cr_assert_eq(hr_steps_run_load(p, 1, NULL, &run, &is), 0);
	cr_assert(!run.stragglers_visible);
	cr_assert_eq(run.nstragglers, 0);
	NEAR(run.step_sec, 5.4707, 1e-12);
	hr_steps_run_release(&run);
	hr_issues_release(&is);
}

Test(steps, mfu_and_scaling_formulas)
{
	struct hr_steps_run a, b;
	struct hr_steps_mfu m;
	struct hr_steps_scaling s;

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	/* 7e9 params, 3000 tokens/s per GPU, 989 TFLOP/s: 6 x 7e9 x 3000 / 989e12 = 12.74% */
	a.tps_per_gpu = 3000;
	a.mfu_logged = 0.15;
	a.stall_frac = 0.2;
	cr_assert_eq(hr_steps_mfu(&a, 7e9, 64, 989, &m), 0);
	NEAR(m.mfu, 6 * 7e9 * 3000 / 989e12, 1e-15);
	NEAR(m.mfu_wall, 0.8 * 6 * 7e9 * 3000 / 989e12, 1e-15);
	NEAR(m.tokens_per_sec, 3000 * 64, 0);
	NEAR(m.ratio, 0.15 / (6 * 7e9 * 3000 / 989e12), 1e-12);
	NEAR(m.implied_peak_tflops, 6 * 7e9 * 3000 / 0.15 / 1e12, 1e-9);
	a.tps_per_gpu = NAN;
	cr_assert_eq(hr_steps_mfu(&a, 7e9, 64, 989, &m), -1);
	cr_assert(isnan(m.mfu));
	/* the textbook: 32 GPUs at 1.00 s, 64 at 1.60 s, the same tokens per GPU */
	a.wall_step_sec = 1.0;
	a.tokens_per_step = 32 * 16384.0;
	b.wall_step_sec = 1.6;
	b.tokens_per_step = 64 * 16384.0;
	cr_assert_eq(hr_steps_scaling(&a, &b, 32, 64, &s), 0);
	cr_assert_eq(s.mode, 1);
	NEAR(s.speedup, 1.25, 1e-12);
	NEAR(s.efficiency, 0.625, 1e-12);
	/* strong scaling: the same global batch on twice the GPUs in 0.6 s */
	b.tokens_per_step = a.tokens_per_step;
	b.wall_step_sec = 0.6;
	cr_assert_eq(hr_steps_scaling(&a, &b, 32, 64, &s), 0);
	cr_assert_eq(s.mode, 2);
	NEAR(s.efficiency, (1 / 0.6) / 2, 1e-12);
}

/* Megatron-LM's per-rank timers of many ranks over several blocks: each
 * rank's figures are its own (the per-rank table is hashed, grows past its
 * first size and is emptied between blocks), whatever order the ranks come in. */
struct per_rank_check {
	long n, wrong, by_step[3];
};

static int check_per_rank(const struct hr_step_rec *r, void *ctx)
{
	struct per_rank_check *c = ctx;
	if (r->step == 3 && r->rank < 0)
		return 0; /* the last iteration, without a timer block */
	c->n++;
	if (r->rank < 0 || r->step < 1 || r->step > 2 ||
	    fabs(r->phase[HR_PH_FORWARD] - r->rank / 1000.0) > 1e-9 ||
	    fabs(r->phase[HR_PH_BACKWARD] - (2.0 * r->rank + r->step) / 1000.0) > 1e-9)
		c->wrong++;
	else
		c->by_step[r->step]++;
	return 0;
}

Test(steps, megatron_per_rank_timers_many_ranks)
{
	char path[] = "/tmp/ch-steps-XXXXXX";
	int fd = mkstemp(path), it, k, nr = 600;
	FILE *f = fdopen(fd, "w");
	struct per_rank_check c;
	struct hr_issues is;

	for (it = 1; it <= 2; it++) {
		fprintf(f, " iteration        %d/     100 | consumed samples:          640 | elapsed time per iteration (ms): "
			"1000.0 | global batch size:    64 |\ntimes across ranks (ms):\n  forward-compute:\n", it);
		for (k = 0; k < nr; k++) /* the second block lists the ranks backwards */
			fprintf(f, "     rank %3d: %d.00\n", it == 1 ? k : nr - 1 - k, it == 1 ? k : nr - 1 - k);
		fprintf(f, "  backward-compute:\n");
		for (k = 0; k < nr; k++)
			fprintf(f, "     rank %3d: %d.00\n", (k * 7) % nr, 2 * ((k * 7) % nr) + it);
	}
	fprintf(f, " iteration        3/     100 | consumed samples:          640 | elapsed time per iteration (ms): 1000.0 |\n");
	fclose(f);
	memset(&c, 0, sizeof(c));
	memset(&is, 0, sizeof(is));
	cr_assert_eq(hr_steps_read(path, check_per_rank, &c, &is, NULL), 0);
	unlink(path);
	cr_assert_eq(c.wrong, 0, "%ld of %ld records with another rank's figures", c.wrong, c.n);
	cr_assert_eq(c.by_step[1], nr);
	cr_assert_eq(c.by_step[2], nr);
	hr_issues_release(&is);
}

/* The formats of report/read/hr_steps_more.h and the Megatron-DeepSpeed
 * and torchtitan 2024 variants: the figures a person reads off each sample
 * (tests/data/steps/README.md names the sources). */
Test(steps, torchtitan_2024_wps)
{
	struct got g;
	struct hr_issues is;
	struct hr_steps_file_info info;

	cr_assert_eq(readf(D "torchtitan_pr364_wps.log", &g, &is, &info), 0);
	cr_assert_eq(info.format, HR_SF_TORCHTITAN);
	cr_assert_eq(g.n, 4);
	cr_assert_eq(g.r[1].step, 10);
	NEAR(g.r[1].tokens_per_sec, 2792, 0); /* "wps: 2,792": per GPU */
	cr_assert(isnan(g.r[1].tflops), "no tflops in 2024's lines");
	NEAR(g.r[3].mfu, 0.2227, 1e-12);
	NEAR(g.r[2].t_end - g.r[1].t_end, 21.503, 1e-6);
	cr_assert_eq(is.n, 0, "wps lines are no input problem");
	hr_issues_release(&is);
}

Test(steps, nemo2_step_timing)
{
	struct got g;
	struct hr_issues is;
	struct hr_steps_file_info info;

	cr_assert_eq(readf(D "nemo2_bionemo_pr740.log", &g, &is, &info), 0);
	cr_assert_eq(info.format, HR_SF_NEMO);
	cr_assert_eq(g.n, 6);
	cr_assert_eq(g.r[0].step, 120);
	NEAR(g.r[0].step_sec, 0.03146, 1e-12);
	NEAR(g.r[4].step_sec, 0.0317, 1e-12);
	NEAR(g.r[2].loss, 1.333, 1e-12);
	NEAR(g.r[0].global_batch, 1, 0);
	cr_assert(isnan(g.r[0].tokens_per_sec), "NeMo prints no tokens");
	cr_assert_eq(is.n, 0);
	hr_issues_release(&is);
}

Test(steps, megatron_deepspeed_timers_tokens_and_seconds)
{
	struct got g;
	struct hr_issues is;
	struct hr_steps_file_info info;

	cr_assert_eq(readf(D "megatron_deepspeed_ds3742_timers.log", &g, &is, &info), 0);
	cr_assert_eq(g.n, 1);
	cr_assert_eq(g.r[0].step, 34);
	NEAR(g.r[0].step_sec, 4.1031, 1e-9);
	NEAR(g.r[0].tflops, 112.9, 1e-9); /* "approx flops per GPU: 112.9TFLOPS" */
	NEAR(g.r[0].phase[HR_PH_FORWARD], 0.65986, 1e-9);
	NEAR(g.r[0].phase[HR_PH_BACKWARD], 2.16466, 1e-9); /* backward-backward */
	NEAR(g.r[0].phase[HR_PH_ALLREDUCE], 0, 0);          /* backward-allreduce */
	NEAR(g.r[0].phase[HR_PH_OPTIMIZER], 1.17251, 1e-9);
	NEAR(g.r[0].phase[HR_PH_INPUT], 0.00083, 1e-12);    /* batch generator */
	cr_assert_eq(is.n, 0);
	hr_issues_release(&is);

	cr_assert_eq(readf(D "megatron_deepspeed_alcf_tgs.log", &g, &is, &info), 0);
	cr_assert_eq(g.n, 2);
	NEAR(g.r[0].step_sec, 14.2875, 1e-9);
	NEAR(g.r[0].tokens_per_sec, 1146.733, 1e-9); /* tgs: per GPU */
	NEAR(g.r[0].tokens, 1146.733 * 14.2875, 1e-6);
	NEAR(g.r[1].tflops, 68.63, 1e-12);
	NEAR(g.r[1].global_batch, 768, 0);
	NEAR(g.r[0].job_tokens, 768.0 * 4096, 0); /* global batch x actual seqlen: the job's */
	hr_issues_release(&is);

	cr_assert_eq(readf(D "megatron_deepspeed_bigscience_seconds.log", &g, &is, &info), 0);
	cr_assert_eq(g.n, 3);
	cr_assert_eq(g.r[0].local_rank, 7);
	NEAR(g.r[0].step_sec, 106.46, 1e-9); /* "elapsed time per iteration (s)" */
	NEAR(g.r[1].tflops, 148.06, 1e-9);
	cr_assert(isnan(g.r[0].tokens_per_sec), "consumed tokens are the job's, not per GPU");
	cr_assert(isnan(g.r[0].job_tokens), "no earlier count to take a difference from");
	NEAR(g.r[1].job_tokens, 97834074112.0 - 97829879808.0, 0); /* 4,194,304 */
	cr_assert_eq(is.n, 0);
	hr_issues_release(&is);
}

Test(steps, nanogpt_nanotron_lightning)
{
	struct got g;
	struct hr_issues is;
	struct hr_steps_file_info info;

	cr_assert_eq(readf(D "nanogpt_issue215.log", &g, &is, &info), 0);
	cr_assert_eq(info.format, HR_SF_NANOGPT);
	cr_assert_eq(g.n, 11);
	cr_assert_eq(g.r[0].step, 2920);
	NEAR(g.r[0].step_sec, 1.09934, 1e-12);
	NEAR(g.r[0].mfu, 0.1534, 1e-12);
	NEAR(g.r[8].step_sec, 35.39233, 1e-12); /* iter 3000: after the evaluation and save */
	cr_assert(isnan(g.r[9].loss), "loss nan");
	NEAR(g.r[1].t_end - g.r[0].t_end, 11, 1e-9);
	cr_assert_eq(is.n, 0);
	hr_issues_release(&is);

	cr_assert_eq(readf(D "nanotron_pr23_host.log", &g, &is, &info), 0);
	cr_assert_eq(info.format, HR_SF_NANOTRON);
	cr_assert_eq(g.n, 3);
	cr_assert_eq(g.r[1].step, 992);
	NEAR(g.r[1].step_sec, 0.0412, 1e-12);
	NEAR(g.r[1].tokens_per_sec, 1940, 1e-9); /* tokens_per_sec_per_gpu: 1.94K */
	NEAR(g.r[1].tflops, 0.0095, 1e-12);
	cr_assert_str_eq(g.r[0].host, "ip-26-0-160-225");
	hr_issues_release(&is);

	cr_assert_eq(readf(D "nanotron_issue390.log", &g, &is, &info), 0);
	cr_assert_eq(g.n, 4);
	NEAR(g.r[0].step_sec, 11.5, 1e-9); /* "11.5K" ms */
	NEAR(g.r[0].tokens_per_sec, 11400, 1e-9);
	hr_issues_release(&is);

	cr_assert_eq(readf(D "lightning_issue4225.log", &g, &is, &info), 0);
	cr_assert_eq(info.format, HR_SF_LIGHTNING);
	cr_assert_eq(g.n, 5, "one record per batch, not per refresh");
	cr_assert_eq(g.r[3].step, 4);
	NEAR(g.r[3].step_sec, 4.47, 1e-12);
	NEAR(g.r[3].loss, 10.047, 1e-12);
	cr_assert_eq(is.n, 0);
	hr_issues_release(&is);
}

Test(steps, deepspeed_and_unknown_variants)
{
	struct got g;
	struct hr_issues is;
	char path[] = "/tmp/ch_steps_variant_XXXXXX";
	int fd = mkstemp(path);
	FILE *f;

	cr_assert_eq(readf(D "deepspeed_samplespersec_issue1825.txt", &g, &is, NULL), HR_STEPS_SKIP);
	cr_assert(has_issue(&is, HR_ISSUE_SKIPPED, -1, "SamplesPerSec="));
	hr_issues_release(&is);

	cr_assert(fd >= 0);
	f = fdopen(fd, "w");
	/* DeepSpeed's engine line (form of Megatron-DeepSpeed's test script), a
	 * torchtitan line of no tps, three times, and a cut one */
	fputs("steps: 200 loss: 5.5508 lm loss: 5.5103 moe loss: 0.0405 iter time (s): 0.936 samples/sec: 136.706\n"
	      "step: 5  loss: 7.0  memory: 66.91GiB(37.51%)  tflops: 313.36  mfu: 13.93%\n"
	      "step: 6  loss: 7.0  memory: 66.91GiB(37.51%)  tflops: 313.36  mfu: 13.93%\n"
	      "step: 7  loss: 7.0  memory: 66.91GiB(37.51%)  tflops: 313.36  mfu: 13.93%\n"
	      "step: 8  loss: 7.0  memory: 66.9\n", f);
	fclose(f);
	cr_assert_eq(readf(path, &g, &is, NULL), 0);
	unlink(path);
	cr_assert_eq(g.n, 1);
	cr_assert_eq(g.r[0].format, HR_SF_DEEPSPEED);
	cr_assert_eq(g.r[0].step, 200);
	NEAR(g.r[0].step_sec, 0.936, 1e-12);
	NEAR(g.r[0].loss, 5.5508, 1e-12);
	cr_assert(has_issue(&is, HR_ISSUE_SKIPPED, 2, "variant"), "the variant named at its first line");
	cr_assert(!has_issue(&is, HR_ISSUE_SKIPPED, 3, "variant"), "named once, not per line");
	cr_assert(has_issue(&is, HR_ISSUE_SKIPPED, -1, "3 lines of that torchtitan variant"));
	cr_assert(has_issue(&is, HR_ISSUE_SKIPPED, 5, "cut off"));
	hr_issues_release(&is);
}
