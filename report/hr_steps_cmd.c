/*
 * hr_steps_cmd.c - the `health_report steps` command (interface:
 * hr_steps_cmd.h): options, reading the logs (report/canary/hr_steps_run.h),
 * the report (report/render/hr_steps_render.h).
 */
#include "report/hr_steps_cmd.h"
#include "report/canary/hr_steps_run.h"
#include "report/read/hr_walk.h"
#include "report/render/hr_steps_render.h"
#include "base/ch_common.h"
#include "base/ch_datasheet.h"
#include "base/ch_dtype.h"
#include "base/ch_parse.h"
#include "base/ch_result.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_BASE 64

double hr_steps_peak_tflops(const char *gpu, const char *dtype, char *from, size_t n)
{
	const struct ch_datasheet *ds = ch_datasheet_lookup(gpu);
	int dt = ch_dtype_parse(dtype ? dtype : "bf16");

	if (!ds) {
		ch_usage_error("GPU '%s' is not in the datasheet table (base/ch_datasheet.c): give --peak-tflops", gpu);
		return NAN;
	}
	if (dt < 0) {
		ch_usage_error("unknown dtype '%s' (expected fp64, fp32, tf32, bf16, fp16 or fp8)", dtype);
		return NAN;
	}
	if (!(ds->gflops[dt] > 0)) {
		ch_usage_error("the datasheet gives no %s peak for %s: give --peak-tflops", ch_dtype_name(dt), ds->sku);
		return NAN;
	}
	snprintf(from, n, "datasheet %s, %s dense", ds->sku, ch_dtype_name(dt));
	return ds->gflops[dt] / 1e3;
}

static void usage(FILE *f)
{
	fprintf(f,
"Usage: health_report steps [OPTIONS] LOG|DIR...\n"
"\n"
"Read a training job's own step logs and say what they measure: every rank's\n"
"step time over a window (median, p95, spread), the stragglers and what they\n"
"cost the step, the time split where the framework logs one, the input-wait\n"
"share, checkpoint and other stalls (from the lines that name them, or from\n"
"gaps in the timestamps), tokens/s, MFU recomputed as 6 x N x tokens/s /\n"
"(GPUs x peak) against the MFU the log prints, and with --baseline the scaling\n"
"efficiency from an earlier run. Formats: torchtitan, Megatron-LM and\n"
"Megatron-DeepSpeed (with their timers), MaxText, Hugging Face Trainer\n"
"(printed dicts, trainer_state.json), NeMo 2.0, nanoGPT, nanotron, DeepSpeed's\n"
"engine lines, PyTorch Lightning's progress bar, plain\n"
"'[rankN] step N | X s/step | ...' lines and clusterhealth JSON lines.\n"
"Directories are searched for *.log, *.txt, *.out, *.jsonl and *.json.\n"
"Method and formats: docs/canary.md (\"Step logs\").\n"
"\n"
"Options:\n"
"  --warmup N          steps skipped at the start of each rank's log (default %d)\n"
"  --window N          steps judged after them (default %d)\n"
"  --params N          model parameters, for MFU (e.g. 7e9)\n"
"  --gpu NAME          the GPU, for its datasheet peak (e.g. 'H100 SXM')\n"
"  --dtype NAME        the training dtype of that peak (default bf16)\n"
"  --peak-tflops X     the dense peak per GPU instead of the datasheet's\n"
"  --gpus N            GPUs of the job (default: the ranks in the logs)\n"
"  --baseline PATH     an earlier run's step logs (repeatable): scaling efficiency\n"
"  --baseline-gpus N   its GPUs (default: its ranks in the logs)\n"
"  --max-ranks N       rows of the per-rank table (default 20; 0 all)\n"
"  --json FILE         also write the report as JSON (--force to replace it)\n"
"  --strict            a skipped file is an error (exit 2)\n"
"  --fail-on-straggler exit 1 when a straggler is found\n"
"  -q, --quiet         print the input problems and one summary line\n"
"  -h, --help          this text\n"
"\n"
"Exit status: 0 read; 1 a straggler with --fail-on-straggler; 2 usage or input\n"
"error (no step record in the inputs; with --strict any skipped file); 4 run-time\n"
"error.\n"
"\n"
"Examples:\n"
"  health_report steps train.log\n"
"  health_report steps --params 8e9 --gpu 'H100 SXM' --gpus 64 logs/\n"
"  health_report steps --baseline logs-32gpu/ logs-64gpu/\n",
		HR_STEPS_WARMUP, HR_STEPS_WINDOW);
}

enum { O_WARMUP = 0x3000, O_WINDOW, O_PARAMS, O_GPU, O_DTYPE, O_PEAK, O_GPUS, O_BASE, O_BASE_GPUS, O_MAXR,
       O_JSON, O_FORCE, O_STRICT, O_FAIL };

/* What the command line asked for. */
struct steps_opts {
	struct hr_steps_opts o;
	char *bases[MAX_BASE];
	int nbase;
	const char *gpu, *dtype, *json_path;
	double params, peak, gpus, base_gpus; /* NAN unless given */
	char peak_from[128];                  /* where the peak is from, "" */
	long max_ranks;
	int force, strict, fail, quiet;
};

/* Options into @so; returns -1 to go on, else the exit code. */
static int parse_opts(int argc, char **argv, struct steps_opts *so)
{
	static const struct option lo[] = {
		{ "warmup", required_argument, NULL, O_WARMUP }, { "window", required_argument, NULL, O_WINDOW },
		{ "params", required_argument, NULL, O_PARAMS }, { "gpu", required_argument, NULL, O_GPU },
		{ "dtype", required_argument, NULL, O_DTYPE }, { "peak-tflops", required_argument, NULL, O_PEAK },
		{ "gpus", required_argument, NULL, O_GPUS }, { "baseline", required_argument, NULL, O_BASE },
		{ "baseline-gpus", required_argument, NULL, O_BASE_GPUS },
		{ "max-ranks", required_argument, NULL, O_MAXR }, { "json", required_argument, NULL, O_JSON },
		{ "force", no_argument, NULL, O_FORCE }, { "strict", no_argument, NULL, O_STRICT },
		{ "fail-on-straggler", no_argument, NULL, O_FAIL }, { "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 }
	};
	long l;
	int c, rc = 0;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "qh", lo, NULL)) != -1) {
		switch (c) {
		case O_WARMUP:
			rc = ch_parse_long("--warmup", optarg, 0, 100000000, &so->o.warmup);
			break;
		case O_WINDOW:
			rc = ch_parse_long("--window", optarg, 1, 100000000, &so->o.window);
			break;
		case O_PARAMS:
			rc = ch_parse_double("--params", optarg, 1, 1e16, &so->params);
			break;
		case O_PEAK:
			if (!(rc = ch_parse_double("--peak-tflops", optarg, 0.1, 1e5, &so->peak)))
				snprintf(so->peak_from, sizeof(so->peak_from), "--peak-tflops");
			break;
		case O_GPUS:
			if (!(rc = ch_parse_long("--gpus", optarg, 1, 100000000, &l)))
				so->gpus = (double)l;
			break;
		case O_BASE_GPUS:
			if (!(rc = ch_parse_long("--baseline-gpus", optarg, 1, 100000000, &l)))
				so->base_gpus = (double)l;
			break;
		case O_MAXR:
			rc = ch_parse_long("--max-ranks", optarg, 0, 100000000, &so->max_ranks);
			break;
		case O_GPU:
			so->gpu = optarg;
			break;
		case O_DTYPE:
			so->dtype = optarg;
			break;
		case O_BASE:
			if (so->nbase == MAX_BASE)
				return ch_exit_code(ch_usage_error("more than %d --baseline paths", MAX_BASE));
			so->bases[so->nbase++] = optarg;
			break;
		case O_JSON:
			if (!*optarg)
				return ch_exit_code(ch_usage_error("empty file name for --json"));
			so->json_path = optarg;
			break;
		case O_FORCE:
			so->force = 1;
			break;
		case O_STRICT:
			so->strict = 1;
			break;
		case O_FAIL:
			so->fail = 1;
			break;
		case 'q':
			so->quiet = 1;
			break;
		case 'h':
			usage(stdout);
			return CH_EXIT_OK;
		default:
			return ch_exit_code(ch_option_error(argv, "qh", lo));
		}
		if (rc)
			return ch_exit_code(rc);
	}
	return -1;
}

/* What the options give together: a log, the peak of --gpu, the --json
 * file's check. -1 to go on, else the exit code. */
static int check_opts(struct steps_opts *so, int nlogs)
{
	int rc;

	if (nlogs <= 0)
		return ch_exit_code(ch_usage_error("no step log given (LOG or DIR; see --help)"));
	if (so->gpu && isnan(so->peak) &&
	    isnan(so->peak = hr_steps_peak_tflops(so->gpu, so->dtype, so->peak_from, sizeof(so->peak_from))))
		return CH_EXIT_USAGE;
	if (so->json_path && !so->force && access(so->json_path, F_OK) == 0)
		return ch_exit_code(ch_usage_error("'%s' exists (use --force to replace it)", so->json_path));
	if (so->json_path && (rc = ch_check_output_path("--json", so->json_path)))
		return ch_exit_code(rc);
	return -1;
}

/* The logs @logs and the --baseline ones read into @run and @base (*@have_base),
 * the input problems printed. 0 or an error code. */
static int load_runs(const struct steps_opts *so, char **logs, int nlogs, struct hr_steps_run *run,
		     struct hr_steps_run *base, int *have_base, struct hr_issues *issues)
{
	size_t skipped;
	int rc;

	rc = hr_steps_run_load(logs, nlogs, &so->o, run, issues);
	if (!rc && so->nbase) {
		rc = hr_steps_run_load(so->bases, so->nbase, &so->o, base, issues);
		*have_base = !rc;
	}
	skipped = hr_issues_count(issues, HR_ISSUE_SKIPPED);
	hr_issues_print(so->quiet ? stderr : stdout, issues);
	if (!so->quiet && issues->n)
		putchar('\n');
	if (rc)
		return rc;
	if (so->strict && skipped)
		return ch_usage_error("%zu input problem%s skipped (--strict)", skipped, skipped == 1 ? "" : "s");
	return 0;
}

/* The report's view of the runs, and what it points to. */
struct steps_out {
	struct hr_steps_view v;
	struct hr_steps_mfu mfu;
	struct hr_steps_scaling sc;
	char missing[200];
	char scaling_missing[200];
};

/* The view of @run (and @base, NULL when none) as @so asks: MFU, or why not;
 * the scaling efficiency. */
static void make_view(const struct steps_opts *so, const struct hr_steps_run *run, const struct hr_steps_run *base,
		      struct steps_out *out)
{
	struct hr_steps_view *v = &out->v;

	memset(v, 0, sizeof(*v));
	out->missing[0] = '\0';
	v->run = run;
	v->gpus_given = !isnan(so->gpus);
	v->gpus = v->gpus_given ? so->gpus : hr_steps_run_gpus(run); /* 0: one rank's log */
	v->params = so->params;
	v->max_ranks = (size_t)so->max_ranks;
	v->peak_from = so->peak_from[0] ? so->peak_from : NULL;
	if (isnan(so->params) || isnan(so->peak))
		snprintf(out->missing, sizeof(out->missing), "not computed: needs %s%s%s",
			 isnan(so->params) ? "--params" : "", isnan(so->params) && isnan(so->peak) ? " and " : "",
			 isnan(so->peak) ? "the GPU's peak (--gpu NAME or --peak-tflops)" : "");
	else if (hr_steps_mfu(run, so->params, v->gpus, so->peak, &out->mfu))
		snprintf(out->missing, sizeof(out->missing), "not computed: the logs give no tokens/s");
	else
		v->mfu = &out->mfu;
	v->mfu_missing = out->missing[0] ? out->missing : NULL;
	if (base) {
		v->base = base;
		v->base_gpus_given = !isnan(so->base_gpus);
		v->base_gpus = v->base_gpus_given ? so->base_gpus : hr_steps_run_gpus(base);
		if (!(v->gpus > 0) || !(v->base_gpus > 0)) {
			/* never from a count assumed */
			if (!(v->gpus > 0) && !(v->base_gpus > 0))
				snprintf(out->scaling_missing, sizeof(out->scaling_missing),
					 "not computed: the GPU count of today's logs is unknown (--gpus N), of the baseline's is unknown (--baseline-gpus N)");
			else
				snprintf(out->scaling_missing, sizeof(out->scaling_missing), "not computed: the GPU count of %s",
					 !(v->gpus > 0) ? "today's logs is unknown (--gpus N)" :
					 "the baseline's logs is unknown (--baseline-gpus N)");
			v->scaling_missing = out->scaling_missing;
		} else if (!hr_steps_scaling(base, run, v->base_gpus, v->gpus, &out->sc)) {
			v->scaling = &out->sc;
		}
	}
}

/* --quiet: one summary line. */
static void print_summary(const struct hr_steps_run *run)
{
	char a[64] = "no straggler";
	char w[48] = "n/a (stall interval not measured)";

	if (!run->stragglers_visible)
		snprintf(a, sizeof(a), "stragglers not visible in these logs");
	else if (run->nstragglers)
		snprintf(a, sizeof(a), "%d straggler%s", run->nstragglers, run->nstragglers == 1 ? "" : "s");
	if (!isnan(run->wall_step_sec))
		snprintf(w, sizeof(w), "%.4g s", run->wall_step_sec);
	printf("steps: %zu ranks, step %.4g s, wall-clock step %s, %s\n", run->nranks, run->step_sec, w, a);
}

/* The --json file: the report as JSON. 0 or an error code. */
static int write_json(const char *path, const struct hr_steps_view *v)
{
	json_t *doc = hr_steps_json(v);
	int rc;

	if (!doc)
		return CH_ERR_RUNTIME;
	rc = ch_json_write_atomic(path, doc, JSON_INDENT(2) | JSON_SORT_KEYS);
	json_decref(doc);
	return rc;
}

static int steps_main(int argc, char **argv)
{
	struct steps_opts so = { .params = NAN, .peak = NAN, .gpus = NAN, .base_gpus = NAN, .max_ranks = 20 };
	struct hr_steps_run run, base;
	struct steps_out out;
	struct hr_issues issues = { 0 };
	int rc, have_base = 0;

	hr_steps_opts_init(&so.o);
	memset(&run, 0, sizeof(run));
	memset(&base, 0, sizeof(base));
	if ((rc = parse_opts(argc, argv, &so)) >= 0)
		return rc;
	if ((rc = check_opts(&so, argc - optind)) >= 0)
		return rc;
	if ((rc = load_runs(&so, argv + optind, argc - optind, &run, &base, &have_base, &issues)))
		goto out;
	make_view(&so, &run, have_base ? &base : NULL, &out);
	if (so.quiet)
		print_summary(&run);
	else
		hr_steps_print(stdout, &out.v);
	if (so.json_path && (rc = write_json(so.json_path, &out.v)))
		goto out;
	rc = so.fail && run.nstragglers ? CH_ERR_CHECK : 0;
out:
	hr_steps_run_release(&run);
	hr_steps_run_release(&base);
	hr_issues_release(&issues);
	return ch_exit_code(rc);
}

int hr_steps_main(int argc, char **argv)
{
	return hr_run_subcommand(argc, argv, "steps", steps_main);
}
