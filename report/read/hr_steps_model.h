/*
 * hr_steps_model.h - what the step logs of one training run say, derived
 * (report/canary/hr_steps_run.h) and shown (report/render/hr_steps_render.h):
 * per-rank step times over the window, stragglers, the time split, input
 * wait, checkpoint and other stalls, tokens and MFU. Every figure here was
 * measured from the logs (NAN: the logs do not say); docs/canary.md, "Step
 * logs", gives the window and every formula.
 */
#ifndef HR_STEPS_MODEL_H
#define HR_STEPS_MODEL_H

#include <stddef.h>

#include "report/read/hr_steps.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One rank (or, where a log does not name ranks, one stream of lines). */
struct hr_steps_rank {
	char id[160];         /* "rank 17", "local rank 0 (FILE)", "FILE" */
	int rank;             /* global rank, -1 */
	int local_rank;       /* torchrun's local rank, -1 */
	char node[128];       /* host name, "" unknown */
	int format;           /* enum hr_steps_format */
	long records;         /* step records read */
	long first_step, last_step;
	size_t nwin;          /* steps in the window */
	double step_med;      /* window median step time (s) */
	double step_p95;
	double step_mad;      /* median absolute deviation (s) */
	double phase_med[HR_PH_N]; /* window medians (s), NAN unknown */
	double compute_med;   /* the rank's own work (s): forward + backward (or
				 forward+backward) + optimizer; else step - all-reduce
				 - input wait; NAN */
	double input_frac;    /* input wait / step over the window */
	double tokens_step;   /* tokens per step, median (the rank's own) */
	double job_tokens_step; /* the job's tokens per step as the log counts
				   them (Megatron-DeepSpeed), median; NAN */
	double tps;           /* tokens/s per GPU as logged (median) */
	double mfu_logged;    /* median of the log's MFU */
	double tflops_logged; /* median of the log's TFLOP/s per GPU */
	double host_cpu;      /* median host CPU busy fraction */
	double z;             /* robust z of compute_med across ranks */
	int straggler;        /* flagged (z and excess thresholds) */
	double excess_sec;    /* compute_med - the median over ranks */
};

enum hr_steps_event_kind {
	HR_SE_CKPT = 0,    /* a checkpoint write the log names */
	HR_SE_EVAL,        /* an evaluation */
	HR_SE_STALL        /* a wall-clock gap no log line explains */
};

/* One stall (merged over ranks: the longest). */
struct hr_steps_event {
	int kind;           /* enum hr_steps_event_kind */
	long step;          /* the step after which it happened, -1 unknown */
	double t_start;     /* seconds (the logs' clock), NAN */
	double sec;         /* how long training stood still, NAN unknown */
	int nranks;         /* ranks that saw it */
	const char *path;   /* where first seen (borrowed from the caller's paths) */
	long line;
};

struct hr_steps_run {
	/* inputs */
	size_t nfiles, nfiles_read;
	long lines, records;
	long records_by_format[HR_SF_N];
	int format;            /* the format of most records */
	long warmup, window;   /* as asked (steps) */
	int window_all;        /* no step after the warm-up: the whole log is the window */
	long win_first, win_last; /* step numbers of the window (over ranks) */
	long excluded[16];     /* checkpoint and evaluation steps kept out of the window */
	int nexcluded;         /* how many (all, not only those listed) */

	/* ranks, worst first (largest compute, else largest step) */
	struct hr_steps_rank *ranks;
	size_t nranks;
	int nnodes;            /* distinct node names (0 unknown) */

	/* the step */
	double step_sec;       /* median over ranks of the window medians (s) */
	double step_p95;       /* largest per-rank p95 */
	double spread_frac;    /* median over ranks of MAD / median */
	double phase_mean[HR_PH_N]; /* mean over ranks of the window medians */
	double other_sec;      /* step - the phases (when the split is known) */
	int have_split;
	double phase_lo[HR_PH_N], phase_hi[HR_PH_N]; /* Megatron minmax: median
							of min and max across ranks */

	/* stragglers */
	int stragglers_visible; /* per-rank phase times: a straggler can be seen */
	double compute_median;  /* median over ranks of compute_med */
	int nstragglers;
	double straggler_cost_sec; /* the step shortened if the stragglers
				      worked like the next slowest rank */

	/* input wait */
	double input_frac;     /* the worst rank's input wait / step */
	int input_rank;        /* index into ranks[] of that rank, -1 */

	/* stalls */
	struct hr_steps_event *events;
	size_t nevents;
	int nckpt, neval, nstall;  /* events by kind */
	double ckpt_block_sec;     /* median length of the checkpoint stalls
				      (and the unexplained ones) */
	double ckpt_interval_sec;  /* mean spacing of their starts (2 or more) */
	double stall_frac;         /* block / interval: share of wall-clock */
	double wall_step_sec;      /* step / (1 - stall_frac): checkpoints included */
	double span_sec;           /* first to last timestamp */

	/* throughput */
	double tokens_per_step;    /* global: the sum over ranks (NAN unless every
				      rank says and there are more than one),
				      else the job's count the log prints */
	double tokens_per_sec;     /* global, training steps */
	double tps_per_gpu;        /* per GPU, training steps */
	double mfu_logged;         /* the log's MFU (median over ranks) */
	double tflops_logged;      /* the log's TFLOP/s per GPU */
	double host_cpu;           /* median over ranks */

	/* Hugging Face's run summary */
	double summary_step_sec;   /* train_runtime / steps */
	double summary_runtime_sec;
	double summary_total_flos;

	char **file_names;         /* the files read (the events point into them) */
	size_t nfile_names;
};

/* MFU recomputed from the logs (PaLM, Chowdhery et al. 2022, appendix B). */
struct hr_steps_mfu {
	double gpus;            /* GPUs of the job */
	double tokens_per_sec;  /* global, training steps */
	double peak_tflops;     /* dense peak per GPU */
	double mfu;             /* 6 N tokens/s / (GPUs x peak), training steps */
	double mfu_wall;        /* the same over wall-clock (stalls included) */
	double logged;          /* the log's MFU (NAN none) */
	double ratio;           /* logged / mfu */
	double implied_peak_tflops; /* the peak the log's MFU implies with 6N */
	double implied_flops_per_token; /* the FLOPs per token it implies with the peak */
};

/* Scaling between a baseline run and today's. */
struct hr_steps_scaling {
	double n0, n1;        /* GPUs */
	double t0, t1;        /* wall-clock steps (s), checkpoints included */
	int mode;             /* 1 weak (tokens per GPU and step equal within 2%),
				 2 strong (tokens per step equal within 2%),
				 0 unknown: weak assumed (no tokens in a log) */
	double speedup;       /* throughput today / at the baseline */
	double efficiency;    /* speedup / (n1 / n0) */
};

#ifdef __cplusplus
}
#endif
#endif
