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
"efficiency from an earlier run. Formats: torchtitan, Megatron-LM (with its\n"
"timers), MaxText, Hugging Face Trainer (printed dicts, trainer_state.json),\n"
"plain '[rankN] step N | X s/step | ...' lines and clusterhealth JSON lines.\n"
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

static int steps_main(int argc, char **argv)
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
	struct hr_steps_opts o;
	struct hr_steps_run run, base;
	struct hr_steps_view v;
	struct hr_steps_mfu mfu;
	struct hr_steps_scaling sc;
	struct hr_issues issues = { 0 };
	char *bases[MAX_BASE], peak_from[128] = "", missing[200] = "";
	const char *gpu = NULL, *dtype = NULL, *json_path = NULL;
	double params = NAN, peak = NAN, gpus = NAN, base_gpus = NAN;
	long l, max_ranks = 20;
	int nbase = 0, c, rc = 0, force = 0, strict = 0, fail = 0, quiet = 0, have_base = 0;
	size_t skipped;

	hr_steps_opts_init(&o);
	memset(&run, 0, sizeof(run));
	memset(&base, 0, sizeof(base));
	optind = 0;
	opterr = 1;
	while ((c = getopt_long(argc, argv, "qh", lo, NULL)) != -1) {
		switch (c) {
		case O_WARMUP:
			if ((rc = ch_parse_long("--warmup", optarg, 0, 100000000, &o.warmup)))
				return ch_exit_code(rc);
			break;
		case O_WINDOW:
			if ((rc = ch_parse_long("--window", optarg, 1, 100000000, &o.window)))
				return ch_exit_code(rc);
			break;
		case O_PARAMS:
			if ((rc = ch_parse_double("--params", optarg, 1, 1e16, &params)))
				return ch_exit_code(rc);
			break;
		case O_PEAK:
			if ((rc = ch_parse_double("--peak-tflops", optarg, 1e-6, 1e6, &peak)))
				return ch_exit_code(rc);
			snprintf(peak_from, sizeof(peak_from), "--peak-tflops");
			break;
		case O_GPUS:
			if ((rc = ch_parse_long("--gpus", optarg, 1, 100000000, &l)))
				return ch_exit_code(rc);
			gpus = (double)l;
			break;
		case O_BASE_GPUS:
			if ((rc = ch_parse_long("--baseline-gpus", optarg, 1, 100000000, &l)))
				return ch_exit_code(rc);
			base_gpus = (double)l;
			break;
		case O_MAXR:
			if ((rc = ch_parse_long("--max-ranks", optarg, 0, 100000000, &max_ranks)))
				return ch_exit_code(rc);
			break;
		case O_GPU:
			gpu = optarg;
			break;
		case O_DTYPE:
			dtype = optarg;
			break;
		case O_BASE:
			if (nbase == MAX_BASE)
				return ch_exit_code(ch_usage_error("more than %d --baseline paths", MAX_BASE));
			bases[nbase++] = optarg;
			break;
		case O_JSON:
			if (!*optarg)
				return ch_exit_code(ch_usage_error("empty file name for --json"));
			json_path = optarg;
			break;
		case O_FORCE:
			force = 1;
			break;
		case O_STRICT:
			strict = 1;
			break;
		case O_FAIL:
			fail = 1;
			break;
		case 'q':
			quiet = 1;
			break;
		case 'h':
			usage(stdout);
			return CH_EXIT_OK;
		default:
			fprintf(stderr, "try '%s --help' for more information\n", ch_prog());
			return CH_EXIT_USAGE;
		}
	}
	if (optind >= argc)
		return ch_exit_code(ch_usage_error("no step log given (LOG or DIR; see --help)"));
	if (gpu && isnan(peak) && isnan(peak = hr_steps_peak_tflops(gpu, dtype, peak_from, sizeof(peak_from))))
		return CH_EXIT_USAGE;
	if (json_path && !force && access(json_path, F_OK) == 0)
		return ch_exit_code(ch_usage_error("'%s' exists (use --force to replace it)", json_path));
	if (json_path && (rc = ch_check_output_path("--json", json_path)))
		return ch_exit_code(rc);

	rc = hr_steps_run_load(argv + optind, argc - optind, &o, &run, &issues);
	if (!rc && nbase) {
		rc = hr_steps_run_load(bases, nbase, &o, &base, &issues);
		have_base = !rc;
	}
	skipped = hr_issues_count(&issues, HR_ISSUE_SKIPPED);
	hr_issues_print(quiet ? stderr : stdout, &issues);
	if (!quiet && issues.n)
		putchar('\n');
	if (rc)
		goto out;
	if (strict && skipped) {
		rc = ch_usage_error("%zu input problem%s skipped (--strict)", skipped, skipped == 1 ? "" : "s");
		goto out;
	}
	memset(&v, 0, sizeof(v));
	v.run = &run;
	v.gpus_given = !isnan(gpus);
	v.gpus = v.gpus_given ? gpus : (double)run.nranks;
	v.params = params;
	v.max_ranks = (size_t)max_ranks;
	v.peak_from = peak_from[0] ? peak_from : NULL;
	if (isnan(params) || isnan(peak))
		snprintf(missing, sizeof(missing), "not computed: needs %s%s%s", isnan(params) ? "--params" : "",
			 isnan(params) && isnan(peak) ? " and " : "",
			 isnan(peak) ? "the GPU's peak (--gpu NAME or --peak-tflops)" : "");
	else if (hr_steps_mfu(&run, params, v.gpus, peak, &mfu))
		snprintf(missing, sizeof(missing), "not computed: the logs give no tokens/s");
	else
		v.mfu = &mfu;
	v.mfu_missing = missing[0] ? missing : NULL;
	if (have_base) {
		v.base = &base;
		v.base_gpus = !isnan(base_gpus) ? base_gpus : (double)base.nranks;
		if (!hr_steps_scaling(&base, &run, v.base_gpus, v.gpus, &sc))
			v.scaling = &sc;
	}
	if (quiet) {
		char a[64] = "no straggler";
		if (!run.stragglers_visible)
			snprintf(a, sizeof(a), "stragglers not visible in these logs");
		else if (run.nstragglers)
			snprintf(a, sizeof(a), "%d straggler%s", run.nstragglers, run.nstragglers == 1 ? "" : "s");
		char w[48] = "n/a (stall interval not measured)";
		if (!isnan(run.wall_step_sec))
			snprintf(w, sizeof(w), "%.4g s", run.wall_step_sec);
		printf("steps: %zu ranks, step %.4g s, wall-clock step %s, %s\n", run.nranks, run.step_sec, w, a);
	} else {
		hr_steps_print(stdout, &v);
	}
	if (json_path) {
		json_t *doc = hr_steps_json(&v);
		if (!doc) {
			rc = CH_ERR_RUNTIME;
			goto out;
		}
		rc = ch_json_write_atomic(json_path, doc, JSON_INDENT(2) | JSON_SORT_KEYS);
		json_decref(doc);
		if (rc)
			goto out;
	}
	rc = fail && run.nstragglers ? CH_ERR_CHECK : 0;
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
