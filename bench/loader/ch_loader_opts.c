/*
 * ch_loader_opts.c - loader_contention's options: defaults, strict parsing,
 * usage text.
 */
#include "bench/loader/ch_loader.h"
#include "base/ch_common.h"
#include "base/ch_parse.h"
#include "hw/ch_procfs.h"

#include <stdio.h>
#include <string.h>

#define LC_MAX_SLOTS 256 /* queue slots per GPU: prefetch x workers */

void ch_lc_opts_init(struct ch_lc_opts *o)
{
	int p;
	memset(o, 0, sizeof(*o));
	o->step_sec = 0.010;
	o->duration_sec = 1.2;
	o->workers[0] = 1;
	o->workers[1] = 2;
	o->nworkers = 2;
	for (p = CH_LC_SHARED; p < CH_LC_NPLACEMENTS; p++)
		o->placements[p] = 1;
	o->gpus = 0;
	o->batch_bytes = 256 * 1024;
	o->batch_sec = -1;
	o->prefetch = 2;
	o->hog_util = 0;
	o->copy = CH_LC_COPY_AUTO;
	o->topology = NULL;
}

static int parse_workers(const char *arg, struct ch_lc_opts *o)
{
	char buf[256], *items[CH_LC_MAX_WORKER_COUNTS];
	int n, i, j;

	if (!arg || strlen(arg) >= sizeof(buf))
		return ch_usage_error("invalid list '%s' for --workers (expected up to %d counts, e.g. 1,2,4)",
				      arg ? arg : "", CH_LC_MAX_WORKER_COUNTS);
	strcpy(buf, arg);
	n = ch_split_list(buf, items, CH_LC_MAX_WORKER_COUNTS);
	if (n < 1)
		return ch_usage_error("invalid list '%s' for --workers (expected up to %d comma-separated counts, e.g. 1,2,4)",
				      arg, CH_LC_MAX_WORKER_COUNTS);
	for (i = 0; i < n; i++) {
		long v;
		if (ch_parse_long("--workers", items[i], 1, 256, &v))
			return CH_ERR_USAGE;
		for (j = 0; j < i; j++)
			if (o->workers[j] == (int)v)
				return ch_usage_error("worker count '%ld' appears twice in --workers '%s'", v, arg);
		o->workers[i] = (int)v;
	}
	o->nworkers = n;
	return 0;
}

static int parse_placements(const char *arg, struct ch_lc_opts *o)
{
	char buf[256], *items[CH_LC_NPLACEMENTS + 1];
	int n, i, p;

	if (!arg || strlen(arg) >= sizeof(buf))
		return ch_usage_error("invalid list '%s' for --placements", arg ? arg : "");
	strcpy(buf, arg);
	n = ch_split_list(buf, items, CH_LC_NPLACEMENTS + 1);
	if (n < 1)
		return ch_usage_error("invalid list '%s' for --placements (expected names separated by commas, e.g. shared,isolated)",
				      arg);
	for (p = 0; p < CH_LC_NPLACEMENTS; p++)
		o->placements[p] = 0;
	for (i = 0; i < n; i++) {
		p = ch_lc_placement_lookup("--placements", items[i]);
		if (p < 0)
			return CH_ERR_USAGE;
		if (o->placements[p])
			return ch_usage_error("placement '%s' appears twice in --placements '%s'", items[i], arg);
		o->placements[p] = 1;
	}
	return 0;
}

int ch_lc_opt(int c, const char *arg, struct ch_lc_opts *o)
{
	double d;
	long l;
	uint64_t u;

	switch (c) {
	case CH_LC_OPT_STEP_MS:
		if (ch_parse_double("--step-ms", arg, 1, 10000, &d))
			return CH_ERR_USAGE;
		o->step_sec = d / 1e3;
		return 1;
	case CH_LC_OPT_DURATION:
		if (ch_parse_double("--duration", arg, 0.1, 3600, &d))
			return CH_ERR_USAGE;
		o->duration_sec = d;
		return 1;
	case CH_LC_OPT_WORKERS:
		return parse_workers(arg, o) ? CH_ERR_USAGE : 1;
	case CH_LC_OPT_PLACEMENTS:
		return parse_placements(arg, o) ? CH_ERR_USAGE : 1;
	case CH_LC_OPT_GPUS:
		if (ch_parse_long("--gpus", arg, 1, CH_LC_MAX_GPUS, &l))
			return CH_ERR_USAGE;
		o->gpus = (int)l;
		return 1;
	case CH_LC_OPT_BATCH_BYTES:
		if (ch_parse_size("--batch-bytes", arg, &u))
			return CH_ERR_USAGE;
		if (u < 4096 || u > (256ull << 20) || u % 4)
			return ch_usage_error("batch size '%s' for --batch-bytes is out of range (a multiple of 4 from 4K to 256M)", arg);
		o->batch_bytes = u;
		return 1;
	case CH_LC_OPT_BATCH_MS:
		if (ch_parse_double("--batch-ms", arg, 0.01, 600000, &d))
			return CH_ERR_USAGE;
		o->batch_sec = d / 1e3;
		return 1;
	case CH_LC_OPT_PREFETCH:
		if (ch_parse_long("--prefetch", arg, 1, 16, &l))
			return CH_ERR_USAGE;
		o->prefetch = (int)l;
		return 1;
	case CH_LC_OPT_HOG:
		if (ch_parse_double("--hog", arg, 0, 1, &d))
			return CH_ERR_USAGE;
		o->hog_util = d;
		return 1;
	case CH_LC_OPT_COPY: {
		static const char *const names[] = { "auto", "cuda", "staging", NULL };
		int i = ch_lookup("--copy", arg, names);
		if (i < 0)
			return CH_ERR_USAGE;
		o->copy = i;
		return 1;
	}
	case CH_LC_OPT_TOPOLOGY:
		if (!arg || !*arg)
			return ch_usage_error("empty file name for --topology");
		o->topology = arg;
		return 1;
	default:
		return 0;
	}
}

int ch_lc_opts_check(const struct ch_lc_opts *o)
{
	int i, maxw = 0, any = 0, p;

	for (i = 0; i < o->nworkers; i++)
		if (o->workers[i] > maxw)
			maxw = o->workers[i];
	if ((long)maxw * o->prefetch > LC_MAX_SLOTS)
		return ch_usage_error("--workers '%d' with --prefetch '%d' needs %d queue slots per GPU (at most %d)",
				      maxw, o->prefetch, maxw * o->prefetch, LC_MAX_SLOTS);
	for (p = CH_LC_SHARED; p < CH_LC_NPLACEMENTS; p++)
		any |= o->placements[p];
	if (!any)
		return ch_usage_error("no placement selected");
	if (o->duration_sec < 5 * o->step_sec)
		return ch_usage_error("--duration '%g' is shorter than 5 steps of %g ms", o->duration_sec,
				      o->step_sec * 1e3);
	return 0;
}

void ch_lc_help(FILE *f)
{
	fputs("Usage: loader_contention [options]\n"
	      "       loader_contention --topology FILE.xml [--workers N] [--gpus N]\n"
	      "\n"
	      "Measures how dataloader worker processes placed on the CPUs of the threads\n"
	      "that feed the GPUs stall the feed, and recommends a placement and a worker\n"
	      "count. Per emulated GPU, a feeder thread wakes at an absolute deadline every\n"
	      "step, takes a batch from a bounded queue and copies it to the device (CUDA:\n"
	      "pinned host memory, cudaMemcpyAsync, event wait; without a GPU: a host\n"
	      "staging buffer, said so in the output). Worker processes produce the batches\n"
	      "with real work: zlib inflate of a synthetic shard, a tokenizer-like scan,\n"
	      "collation into shared memory; the work per batch is calibrated at start.\n"
	      "\n"
	      "The sweep: a baseline (feeder alone, no workers, no hog), then each placement\n"
	      "at each worker count. Placements: shared (feeder and workers on the same\n"
	      "cores), isolated (a core reserved for the feeder), numa-local and\n"
	      "numa-remote (isolated within the GPU's NUMA node or another one; skipped,\n"
	      "with the reason, on one NUMA node), as-is (no binding: the inherited\n"
	      "affinity). A process bound to a single CPU is detected and fails the run.\n"
	      "\n"
	      "Options:\n"
	      "  --step-ms MS        step period of the emulated device (default 10)\n"
	      "  --duration SEC      measured time per configuration (default 1.2;\n"
	      "                      --min-time SEC is the same)\n"
	      "  --workers LIST      worker processes per GPU to sweep (default 1,2)\n"
	      "  --placements LIST   from shared,isolated,numa-local,numa-remote,as-is\n"
	      "                      (default all of them)\n"
	      "  --gpus N            feeders (GPUs) to emulate (default: CUDA devices, else\n"
	      "                      GPUs in the topology, else 1)\n"
	      "  --batch-bytes SIZE  collated batch size, K/M = 1024 (default 256K)\n"
	      "  --batch-ms MS       CPU work per batch on one free core (default 0.8 x\n"
	      "                      step: one worker on a free core just keeps up)\n"
	      "  --prefetch N        batches queued per worker (default 2, PyTorch's\n"
	      "                      prefetch_factor)\n"
	      "  --hog UTIL          background load in [0,1] on every worker CPU during\n"
	      "                      the worker configurations (default 0: none); 0.92\n"
	      "                      reproduces a host at ~92% CPU\n"
	      "  --copy auto|cuda|staging\n"
	      "                      device hand-off (default auto: cuda when a GPU is\n"
	      "                      usable, else staging); cuda without a GPU exits 3\n"
	      "  --topology FILE.xml plan mode: print the placement planned for every GPU\n"
	      "                      of that machine (hwloc XML) and the binding lines;\n"
	      "                      runs nothing\n"
	      "\n", f);
	ch_common_help(f);
	fputs("\n"
	      "Verdict per configuration (sources in docs/loader_contention.md): input wait\n"
	      "< 5% of the step pass, 5-20% warn, >= 20% fail (TensorFlow profiler);\n"
	      "accelerator utilisation >= 90% pass (DLIO / MLPerf Storage), < 70% fail.\n"
	      "The recommendation is the fewest workers that pass, with the numactl,\n"
	      "hwloc-bind and Slurm --cpu-bind lines that realise the placement.\n", f);
	fprintf(f, "The overall verdict is \"not judged\" when the host was busy with other\n"
		"work before the load started (CPU pressure >= %d%% as the run started or\n"
		"in the baseline, or other work on >= %d%% of the CPUs): re-run idle.\n",
		CH_NOISY_PRESSURE_PCT, CH_NOISY_BUSY_PCT);
	fputs("\n"
	      "Exit status: 0 pass, warn or not judged, 1 fail (no configuration met the\n"
	      "targets, a collapsed affinity mask, or a batch that failed validation),\n"
	      "2 usage, 3 unavailable (--copy cuda without a GPU), 4 run-time error.\n"
	      "\n"
	      "Examples:\n"
	      "  loader_contention --json lc.json                  # default sweep, ~15 s\n"
	      "  loader_contention --hog 0.92 --workers 1,2,4      # host at ~92% CPU\n"
	      "  loader_contention --workers 2,4,8 --duration 10 --step-ms 50   # longer sweep\n"
	      "  loader_contention --placements isolated,as-is --workers 4\n"
	      "  loader_contention --topology dgx.xml              # plan for another machine\n", f);
}
