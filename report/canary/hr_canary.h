/*
 * hr_canary.h - the pre-scaling canary: `health_report canary ...`.
 *
 * Before a job is scaled from the GPUs it runs on today to a larger target
 * allocation, the canary combines what was measured on the current
 * allocation (allreduce_bw sweeps and --scaling points, loader_contention)
 * with what the user knows (model size, step time now, checkpoint interval
 * ...) and predicts step time, scaling efficiency, MFU and cost at the
 * target, attributes today's loss, and says whether to book the larger
 * allocation or to fix first and re-measure. Every figure carries where it
 * came from: given (by the user), measured (a result file), fitted (the
 * all-reduce model of hr_fit.h), assumed (a documented default), or a
 * combination for figures derived from several. Methodology and every
 * formula: docs/canary.md.
 *
 * Weak scaling throughout: the work per GPU and step is held constant, so
 * the ideal step time at any GPU count is the baseline's (or, without a
 * baseline, today's step less its identified losses), throughput is
 * proportional to GPUs / step time, and scaling efficiency is
 * ideal step / step (REFERENCE: throughput(n) / (n x throughput(1))).
 */
#ifndef HR_CANARY_H
#define HR_CANARY_H

#include <stdio.h>
#include <jansson.h>

#include "report/canary/hr_fit.h"

#ifdef __cplusplus
extern "C" {
#endif

/* room for a path escaped for the terminal (PATH_MAX 4096 bytes, at most 4
 * characters a byte) and a sentence around it */
#define HR_CANARY_PATH_TEXT 16900
/* a note's room: its longest fixed text (under 600 characters) and such a
 * path; no note is cut */
#define HR_CANARY_NOTE_MAX (HR_CANARY_PATH_TEXT + 1024)

/* Where a figure came from; a derived figure has the union of its inputs'. */
enum hr_src {
	HR_SRC_GIVEN = 1,    /* on the command line or in the --inputs file */
	HR_SRC_MEASURED = 2, /* read from a result file */
	HR_SRC_FITTED = 4,   /* from the fitted all-reduce model */
	HR_SRC_ASSUMED = 8   /* a documented default or modelling assumption */
};

/* A number and its provenance; src 0 means "not known". */
struct hr_fig {
	double v;
	unsigned src; /* enum hr_src bits */
};

/**
 * hr_src_label - "given", "measured", "given+fitted+assumed", ...
 * @src: [in] enum hr_src bits.  @buf: [out] at least 40 bytes.  @n: [in] size.
 * Returns @buf ("none" for 0).
 */
char *hr_src_label(unsigned src, char *buf, size_t n);

/* The all-reduce model of one fabric level. */
struct hr_comm_model {
	int set;           /* 0 when nothing was measured or given */
	struct hr_fit fit; /* model, alpha_us, bw_gbps (+ goodness of fit) */
	unsigned src;      /* HR_SRC_FITTED or HR_SRC_GIVEN */
	char algo[64];     /* allreduce_bw algorithm the fit is of, or "given" */
};

enum hr_level { HR_INTRA = 0, HR_INTER = 1, HR_NLEVELS };

/* How data parallelism communicates per step (docs/canary.md, "FSDP"). */
enum hr_parallelism {
	HR_PAR_DDP = 0, /* one all-reduce of the gradient, overlapped with backward */
	HR_PAR_FSDP     /* fully sharded: the gradient reduce-scattered, the
			   parameters all-gathered for forward and for backward;
			   the step's first all-gather is not overlapped */
};

/* What the canary knows. Unknown figures have src 0. */
struct hr_canary_in {
	struct hr_fig gpus_now;           /* GPUs the job runs on today (>= 1) */
	struct hr_fig step_sec;           /* wall-clock per step today, checkpoints included */
	struct hr_fig target_gpus;        /* GPUs to book (> gpus_now) */
	struct hr_fig baseline_gpus;      /* an earlier, smaller run (< gpus_now) */
	struct hr_fig baseline_step_sec;  /* its step time: the ideal under weak scaling */
	char step_missing[HR_CANARY_PATH_TEXT + 512]; /* why today's step logs gave no step time
					     ("--steps PATH: no step time in these logs
					     (...)"), "" none or not asked */
	char baseline_step_missing[HR_CANARY_PATH_TEXT + 512]; /* the same of the baseline's
					     logs (--baseline-steps), "" none */
	char gpus_now_from[HR_CANARY_PATH_TEXT];          /* where a measured gpus_now came from ("--steps
					     PATH: 64 ranks"; "" given or unknown) */
	char baseline_gpus_from[HR_CANARY_PATH_TEXT];     /* the same of baseline_gpus */
	struct hr_fig params;             /* model parameters */
	struct hr_fig grad_bytes_per_param; /* bytes all-reduced per parameter */
	struct hr_fig mfu_now;            /* model FLOPs utilisation today, fraction */
	struct hr_fig mfu_baseline;       /* at the baseline, fraction */
	struct hr_fig peak_tflops;        /* dense peak per GPU, TFLOP/s */
	struct hr_fig tokens_per_step;    /* global tokens per step today */
	struct hr_fig ckpt_interval_sec;  /* wall-clock between checkpoints */
	struct hr_fig ckpt_block_sec;     /* time a checkpoint blocks every rank */
	struct hr_fig input_wait_frac;    /* share of the training step waiting on input */
	char input_wait_from[96];         /* where a measured input wait came from */
	char input_wait_not_measured[1024]; /* why a loader_contention result read was not
					     taken as the input wait ("loader_contention on
					     HOST was measured on a busy host (...); ..."),
					     "" none: set only while input_wait_frac is unknown */
	char comm_not_measured[600];      /* why the all-reduce results read measured no
					     size ("allreduce_bw's run in FILE measured no
					     size ... (status 'timeout': ...)"), "" none:
					     the canary then asks to measure it (MEASURE
					     FIRST), never "nothing to judge" */
	struct hr_fig overlap;            /* share of the all-reduce hidden behind compute */
	struct hr_fig gpus_per_node;      /* GPUs (ranks) per node */
	struct hr_fig price_per_gpu_hour; /* currency units per GPU-hour */
	struct hr_fig probe_bytes;        /* message size to predict when --params is
					     not given: the largest measured (measured) */
	struct hr_fig min_efficiency;     /* book only at or above this efficiency */
	struct hr_fig significant_frac;   /* a loss this share of the step is worth fixing */
	struct hr_comm_model comm[HR_NLEVELS];
	long wrong_rows;                  /* all-reduce rows with wrong results in the
					     measurements (measured): the allocation
					     corrupts data, so it is never booked as is */
	struct hr_fig host_cpu_frac;      /* busy share of the host CPUs while training */
	struct hr_fig loader_workers;     /* dataloader worker processes per node (given) */
	char loader_placement[16];        /* where they run, loader_contention's name:
					     "shared" (pinned with the GPU feeder threads,
					     on their cores), "isolated", "numa-local",
					     "numa-remote", "as-is"; "" not given */
	enum hr_parallelism parallelism;  /* how the gradient is communicated (HR_PAR_DDP
					     unless given) */
	struct hr_fig target_efficiency;  /* the efficiency question: reach this (hr_canary_eff.h) */
	struct hr_fig scaling_efficiency; /* today's efficiency vs the baseline, when the
					     step times are not given */
	char straggler[1024];              /* the worst straggler rank of today's step
					     logs and its node, "" none */
	struct hr_fig straggler_sec;      /* what it costs every step (s) */
	char straggler_id[1024];           /* the same rank, short: "rank 37 on node05" */
	/* at a power cap (hr_canary_power.h); src 0 when not given */
	struct hr_fig power_cap_w;        /* --power-cap: every GPU capped at this, W */
	struct hr_fig power_compute_share; /* --compute-share: share of the step the GPUs
					     compute (a training log's time split) */
	struct hr_fig run_steps;          /* --run-steps: steps per run (kWh, cost, CO2e per run) */
	struct hr_fig pue, price_per_kwh, carbon_g_per_kwh; /* else hr_cost.h's defaults */
};

/**
 * hr_canary_in_init - defaults: every figure unknown except
 * min_efficiency = 0.80 and significant_frac = 0.05 (both assumed;
 * docs/canary.md says why).
 */
void hr_canary_in_init(struct hr_canary_in *in);

enum hr_loss_kind {
	HR_LOSS_CKPT = 0, /* synchronous checkpoint stall */
	HR_LOSS_INPUT,    /* input wait (host CPU contention, loader) */
	HR_LOSS_COMM,     /* exposed communication (beyond the baseline's) */
	HR_LOSS_REST,     /* the rest: not explained by the others */
	HR_LOSS_STRAGGLER, /* the worst straggler rank of today's step logs: every
			      rank waits for it (measured; known only with a step) */
	HR_LOSS_N
};

/* One item of today's loss against the ideal step. */
struct hr_loss {
	enum hr_loss_kind kind;
	struct hr_fig sec;           /* seconds per step today (0 when unknown) */
	struct hr_fig frac;          /* sec / today's step */
	struct hr_fig fixed_step_sec; /* today's step without it */
	struct hr_fig gain_frac;     /* throughput gain if fixed: step / fixed - 1 */
	int known;                   /* 0 when its inputs are missing */
	int fixable;                 /* has a fix (the rest has none: investigate) */
	int significant;             /* frac >= significant_frac */
};

enum hr_verdict {
	HR_VERDICT_BOOK = 0,      /* predicted efficiency fine, nothing big to fix */
	HR_VERDICT_FIX_FIRST,     /* fix the listed losses, re-measure at gpus_now */
	HR_VERDICT_DONT_BOOK,     /* nothing fixable, but the target scales badly */
	HR_VERDICT_MEASURE_FIRST  /* the inputs contradict each other or are too few
				     to predict the target: what to measure is said */
};

#define HR_CANARY_MAX_NOTES 12

/* What to measure, and the command that measures it, for the MEASURE FIRST
 * actions (the canary's and the efficiency question's): each names the
 * measurement and its command, never a bare "MEASURE FIRST". */
#define HR_CANARY_CMD_ALLREDUCE "allreduce_bw up to the gradient's size on this allocation, one rank per GPU " \
	"(mpirun -np N build/allreduce_bw --scaling -b 8 -e SIZE --json results/allreduce.json; scripts/canary runs it), " \
	"its results given to the canary with --params"
#define HR_CANARY_CMD_LOADER "loader_contention on this node (build/loader_contention --json results/loader.json), " \
	"and the input wait per rank in the job's step logs (--steps)"
#define HR_CANARY_CMD_STEPS "the step at two GPU counts (health_report canary --steps TODAY_LOGS " \
	"--baseline-steps SMALLER_RUN_LOGS, or --baseline-gpus with --baseline-step-time)"
#define HR_CANARY_CMD_INPUT_WAIT "the input wait per rank (the job's step logs with their dataloader wait: " \
	"--steps; or a profiler's) and " HR_CANARY_CMD_LOADER_NODE
#define HR_CANARY_CMD_LOADER_NODE "loader_contention on this node (build/loader_contention --json results/loader.json)"
#define HR_CANARY_CMD_CKPT "the checkpoint's blocking time (build/checkpoint_io --interval INTERVAL " \
	"--json results/checkpoint.json, or the job's step logs: --steps)"

/* A fitted all-reduce model whose rms relative residual exceeds this (%) is
 * called rough in the notes. */
#define HR_CANARY_ROUGH_FIT_PCT 20.0

/* Host CPUs busy at least this share while the step waits on input: the
 * wait is host CPU contention (assumed; docs/canary.md) */
#define HR_CANARY_CPU_BUSY 0.85

struct hr_canary_out {
	int wrong_results;                  /* in->wrong_rows > 0: FIX FIRST, whatever else */
	int comm_only;                      /* no step time given: only the checkpoint,
					       input wait and all-reduce scaling are
					       judged (docs/canary.md) */
	struct hr_fig busbw_now_gbps;       /* model busbw of the all-reduce today */
	struct hr_fig busbw_ratio_target;   /* busbw at target / today */
	struct hr_fig ideal_step_sec;       /* weak-scaling ideal step */
	struct hr_fig hw_ratio_now;         /* gpus_now / baseline_gpus */
	struct hr_fig throughput_ratio_now; /* throughput now / at baseline */
	struct hr_fig efficiency_now;       /* ideal / step now */
	struct hr_fig ckpt_frac;            /* block / interval: share of wall-clock */
	struct hr_fig ckpt_sec;             /* stall per step: ckpt_frac x step */
	struct hr_fig train_step_sec;       /* step without the stall */
	struct hr_fig over_ideal_frac;      /* train_step / ideal - 1 */
	struct hr_fig input_wait_sec;       /* per step today */
	struct hr_fig grad_bytes;           /* all-reduced per step per rank */
	int level_now, level_base, level_target; /* enum hr_level used, -1 none */
	struct hr_fig comm_now_sec, comm_base_sec, comm_target_sec; /* model all-reduce time */
	struct hr_fig busbw_target_gbps;    /* model busbw of the gradient all-reduce at target */
	struct hr_fig overlap;              /* used (given, calibrated or assumed) */
	struct hr_fig exposed_comm_sec;     /* exposed communication today: (1 - overlap) x
					       comm (ddp); the first all-gather + (1 -
					       overlap) x the rest (fsdp) */
	struct hr_fig exposed_comm_target_sec; /* the same at the target */
	struct hr_fig step_target_sec;      /* predicted step at target */
	struct hr_fig efficiency_target;    /* ideal / step at target */
	struct hr_fig hw_ratio_target;      /* target / now */
	struct hr_fig throughput_ratio_target; /* throughput at target / now */
	struct hr_fig step_target_fixed_sec;   /* at target, fixable losses fixed */
	struct hr_fig efficiency_target_fixed;
	struct hr_fig mfu_computed;         /* 6 N tokens / (step x GPUs x peak) */
	struct hr_fig mfu_now;              /* given, else computed */
	struct hr_fig mfu_target;           /* mfu_now x step now / step target */
	struct hr_fig gpu_hours_per_unit_base, gpu_hours_per_unit_now,
		gpu_hours_per_unit_target; /* per 1M tokens, or per 1000 GPU-steps */
	int unit_is_tokens;                 /* 1: unit = 1M tokens */
	struct hr_fig cost_per_unit_now, cost_per_unit_target; /* x price */
	struct hr_fig cost_ratio_target;    /* GPU-hours per unit, target / now */
	int largest_ok_gpus;                /* largest GPU count <= target predicted
					       at >= min_efficiency, 0 if none */
	struct hr_loss loss[HR_LOSS_N];     /* by kind */
	char straggler_id[1024];             /* in->straggler_id, for the fixes' text */
	int order[HR_LOSS_N];               /* kinds, largest loss first */
	int contradiction;                  /* inputs that contradict each other (notes) */
	int insufficient;                   /* too little to predict the target */
	int rough_fit;                      /* the fitted all-reduce model the target's
					       prediction uses misses its own points by
					       more than HR_CANARY_ROUGH_FIT_PCT (rms) */
	int fsdp;                           /* in->parallelism is HR_PAR_FSDP (the fixes' text) */
	int trend_used;                     /* no communication model: the target follows
					       today's measured trend (baseline -> today) */
	double trend_exponent;              /* step ~ GPUs^exponent of that trend */
	int cpu_pinned;                     /* 1 (2: it alone made the verdict MEASURE
					       FIRST) a finding: host CPUs busy (HR_CANARY_CPU_BUSY or
					       more) while the dataloader workers are pinned
					       with the GPU feeder threads (--loader-placement
					       shared) and the input wait is not measured:
					       input stalls would pass for network stalls */
	char cpu_pinned_text[400];          /* that finding in words, "" none */
	char comm_not_fitted[300];          /* "" or why the communication model
					       is not used: it does not fit
					       today's step ("not fitted") */
	char target_not_measured[300];      /* "" or why nothing predicts the target (no
					       baseline and no all-reduce model): its step,
					       efficiency, throughput, largest allocation,
					       MFU and cost are then unknown (src 0), never
					       today's figures taken for the target's */
	char measure[1024];                 /* MEASURE FIRST: what to measure and the
					       command (HR_CANARY_CMD_*), "" otherwise */
	enum hr_verdict verdict;
	int nnotes;                         /* contradictions and caveats */
	char notes[HR_CANARY_MAX_NOTES][HR_CANARY_NOTE_MAX];
};

/**
 * hr_canary_comm_sec - the communication of one training step on the
 * model of fabric level @level, as in->parallelism has it (docs/canary.md,
 * "FSDP"):
 *   ddp:  one all-reduce of the gradient, C = T_AR(S, n);
 *   fsdp: the reduce-scatter of the gradient and two all-gathers of the
 *         parameters (forward and backward), each at the all-reduce's bus
 *         bandwidth (hr_fit_predict_half_us()): C = T_RS(S, n) + 2 T_AG(S, n);
 *         the first all-gather of the step (the forward's) cannot overlap
 *         compute: *@always = T_AG(S, n).
 * @in: [in] inputs (comm[@level] set).  @level: [in] enum hr_level.
 * @bytes: [in] S, the gradient in bytes (params x grad bytes per parameter;
 *         the parameters are gathered at the same bytes per parameter).
 * @n: [in] ranks.  @always: [out] seconds of C no overlap can hide (0 for
 *         ddp); may be NULL.
 * Returns C in seconds.
 */
double hr_canary_comm_sec(const struct hr_canary_in *in, int level, double bytes, double n, double *always);

/**
 * hr_canary_comm_busbw - the bus bandwidth (GB/s) of a step's communication
 * taking @sec: the all-reduce's busbw for ddp (2(n-1)/n x S / t), for fsdp
 * (n-1)/n x 3S / t (the three collectives' bytes); @bytes, @n as above.
 */
double hr_canary_comm_busbw(const struct hr_canary_in *in, double bytes, double n, double sec);

/**
 * hr_canary_model_text - "model: data parallel (one all-reduce of the
 * gradient per step)" or "model: FSDP (reduce-scatter + 2 all-gathers,
 * first all-gather exposed)". Static text.
 */
const char *hr_canary_model_text(const struct hr_canary_in *in);

/**
 * hr_canary_compute - run the model.
 * @in:  [in] the inputs; gpus_now and target_gpus are required. Without
 *        step_sec only the checkpoint and input-wait shares and the
 *        all-reduce's scaling are judged (out->comm_only; losses have a
 *        share but no seconds), which needs an all-reduce model or a
 *        checkpoint or input-wait figure.
 * @out: [out] every figure, the losses in order, the verdict and notes.
 * Formulas: docs/canary.md ("The model").
 * Returns 0; CH_ERR_USAGE (message printed naming the option and value)
 * when a required input is missing or the inputs are impossible: a
 * non-positive time or GPU count, target not above gpus_now, baseline not
 * below gpus_now, checkpoint block not shorter than its interval, a
 * fraction outside [0, 1), a checkpoint interval without its blocking time
 * or the other way round. Contradicting but possible inputs (an MFU ratio
 * that disagrees with the step-time ratio) are reported in out->notes.
 */
int hr_canary_compute(const struct hr_canary_in *in, struct hr_canary_out *out);

/**
 * hr_canary_print - the human-readable canary report.
 * @f: [in] stream.  @in, @out: [in] as given to / filled by
 * hr_canary_compute(). Every figure is followed by its source in brackets.
 */
void hr_canary_print(FILE *f, const struct hr_canary_in *in,
		     const struct hr_canary_out *out);

/**
 * hr_canary_json - the canary report as JSON (schema in docs/canary.md).
 * @in, @out: [in] as for hr_canary_print().
 * Returns a new reference (caller json_decref()s), NULL when out of memory.
 */
json_t *hr_canary_json(const struct hr_canary_in *in,
		       const struct hr_canary_out *out);

/* room for hr_canary_fixes_text(): every loss's name, the straggler's id
 * and the host CPU finding's */
#define HR_CANARY_FIXES_TEXT 4096

/**
 * hr_canary_fixes_text - the significant fixable losses, largest first, as
 * prose: "the checkpoint and the host CPU contention".
 * @o: [in] a computed canary.  @b: [out] text ("" when none).  @n: [in] size of @b.
 */
void hr_canary_fixes_text(const struct hr_canary_out *o, char *b, size_t n);

/**
 * hr_canary_loss_name - a loss kind as the report names it
 * ("synchronous checkpoint stall"); "?" for an unknown kind. Static text.
 */
const char *hr_canary_loss_name(enum hr_loss_kind k);

/**
 * hr_canary_loss_key - a loss kind as the JSON names it ("checkpoint",
 * "input_wait", "communication", "rest", "straggler"); "?" unknown. Static.
 */
const char *hr_canary_loss_key(enum hr_loss_kind k);

/**
 * hr_canary_verdict_name - "book", "fix-first", "do-not-book" or
 * "measure-first".
 */
const char *hr_canary_verdict_name(enum hr_verdict v);

/**
 * hr_canary_main - entry point of the `canary` subcommand.
 * @argc: [in] argument count; argv[0] is the subcommand name ("canary").
 * @argv: [in] arguments: options (see `health_report canary --help` and
 *        docs/canary.md) followed by result files or directories of
 *        allreduce_bw and loader_contention results (searched recursively).
 * Options are parsed here with getopt_long (optind is reset); a bad value is
 * reported naming the option and the value.
 * Returns the process exit code: 0 the verdict is "book", 1 it is
 * "fix first" or "do not book", 2 usage or input error (bad option value,
 * impossible inputs such as a negative time, zero GPUs or a target below
 * today's GPU count, unreadable or malformed input file), 4 run-time error
 * (allocation, I/O while writing --json).
 */
int hr_canary_main(int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
