/*
 * hr_steps.h - reader of training-step logs: what training frameworks print
 * once per step (or per log interval), turned into one record per rank and
 * step, streamed to a visitor without holding the log in memory.
 *
 * Formats (docs/canary.md, "Step logs"; a real sample of each, with its
 * source, in tests/data/steps/):
 *  - clusterhealth JSON lines: one object per rank and step (schema in
 *    docs/canary.md), read with jansson;
 *  - torchtitan: "step: 14  loss: ...  memory: ...  tps: 7,282  tflops: ...
 *    mfu: ...%" (2024: "wps:" for tps, no tflops), with torchrun's "[rankN]:" / "[defaultN]:" prefix (the
 *    LOCAL rank) or none, its "[titan] DATE TIME,ms" timestamp, its
 *    checkpoint lines ("Saving the checkpoint." ... "Finished saving the
 *    checkpoint in X seconds.") and "validate step:" lines;
 *  - Megatron-LM: " [DATE TIME] iteration N/ M | ... | elapsed time per
 *    iteration (ms): X | throughput per GPU (TFLOP/s/GPU): X | ...", and
 *    its timers: the one-line "time (ms) | name: X | ..." of older
 *    versions, and the "(min, max) time across ranks (ms):", "max time
 *    across ranks (ms):" and per-rank "times across ranks (ms):" blocks of
 *    --timing-log-option minmax, max and all; "saving checkpoint at
 *    iteration N" with its save-checkpoint timer; "validation loss at
 *    iteration N"; Megatron-DeepSpeed's iteration lines ("elapsed time per
 *    iteration (ms)" or "(s)", "tokens per gpu per second (tgs)", "TFLOPs",
 *    "approx flops per GPU") and one-line timers ("forward | backward |
 *    backward-backward | backward-allreduce | optimizer | batch generator");
 *  - MaxText: "completed step: N, seconds: X, TFLOP/s[/device]: X,
 *    [Tokens/s/device: X,] ... loss: X", with or without absl's
 *    "IMMDD HH:MM:SS.us" prefix;
 *  - Hugging Face Trainer: the dicts it prints ({'loss': ..., 'epoch': ...},
 *    {'train_runtime': ..., 'train_steps_per_second': ...}) and its
 *    trainer_state.json (log_history);
 *  - the plain form "[rankN] step N | loss X | X s/step | X tok/s | MFU X% |
 *    dataloader wait X s";
 *  - NeMo 2.0, nanoGPT, nanotron, DeepSpeed's engine lines and PyTorch
 *    Lightning's progress bar: report/read/hr_steps_more.h.
 * Prefixes of launchers are taken off first: ANSI colours, mpirun's
 * "[1,N]<stdout>:", srun's "N: " and torchrun's "[roleN]:".
 *
 * Every line that looks like a step line of a format but cannot be read is
 * an input problem naming the file and line (a whole line of a variant the
 * reader does not know is named once, with its format and count); a file with no step line at
 * all, binary data, or an unreadable file is skipped with the reason. Never
 * a crash: lines are read into a bounded buffer (HR_STEPS_MAX_LINE).
 */
#ifndef HR_STEPS_H
#define HR_STEPS_H

#include <stddef.h>

#include "report/read/hr_input.h"

#ifdef __cplusplus
extern "C" {
#endif

/* the longest line read (bytes); a longer one is reported and skipped */
#define HR_STEPS_MAX_LINE 65536
/* The largest step number read (10^12: no run takes a trillion steps; a
 * larger one, or one that does not fit, is that line's input problem,
 * named, and the line is skipped): step arithmetic never overflows. */
#define HR_STEPS_MAX_STEP 1000000000000L

enum hr_steps_format {
	HR_SF_NONE = 0,
	HR_SF_JSONL,      /* clusterhealth JSON lines */
	HR_SF_TORCHTITAN,
	HR_SF_MEGATRON,
	HR_SF_MAXTEXT,
	HR_SF_HF,         /* Hugging Face Trainer */
	HR_SF_PLAIN,      /* "[rankN] step N | ... s/step | ..." */
	HR_SF_NEMO,       /* NeMo 2.0 progress lines */
	HR_SF_NANOGPT,
	HR_SF_NANOTRON,
	HR_SF_DEEPSPEED,  /* DeepSpeed's engine lines */
	HR_SF_LIGHTNING,  /* PyTorch Lightning's progress bar */
	HR_SF_N
};

/** hr_steps_format_name - "torchtitan", "Megatron-LM", ... ("none" for 0). */
const char *hr_steps_format_name(int format);

/* The parts of a step that logs time (seconds per step). */
enum hr_steps_phase {
	HR_PH_FORWARD = 0, /* forward compute */
	HR_PH_BACKWARD,    /* backward compute */
	HR_PH_FWDBWD,      /* forward and backward together (when not split) */
	HR_PH_OPTIMIZER,   /* optimizer step */
	HR_PH_ALLREDUCE,   /* gradient all-reduce / reduce-scatter / all-gather,
			      including the wait for the slowest rank */
	HR_PH_INPUT,       /* waiting on the input pipeline (dataloader) */
	HR_PH_N
};

/** hr_steps_phase_name - "forward", "backward", ..., "input wait". */
const char *hr_steps_phase_name(int phase);

enum hr_steps_kind {
	HR_SK_STEP = 0, /* a training step, or the mean over a log interval */
	HR_SK_CKPT,     /* a checkpoint write that blocked training */
	HR_SK_EVAL,     /* an evaluation (validation) */
	HR_SK_SUMMARY   /* the whole run (Hugging Face's train_runtime) */
};

/* What one line (or one timer block) says. Unknown numbers are NAN. */
struct hr_step_rec {
	int kind;              /* enum hr_steps_kind */
	int format;            /* enum hr_steps_format */
	const char *path;      /* the file (borrowed) */
	long line;             /* 1-based line of the record */
	int rank;              /* global rank; -1 when the line does not say */
	int local_rank;        /* torchrun's "[roleN]:" prefix: the rank on its
				  node (local); -1 */
	char host[64];         /* node name ("" unknown) */
	long step;             /* (last) step covered; -1 unknown */
	long nsteps;           /* steps covered (the log interval); 0 unknown */
	double t_start;        /* step start, seconds (JSON lines only) */
	double t_end;          /* time of the line or the step's end, seconds
				  since the epoch (absl's year-less stamps: a
				  clock of their own, differences only) */
	double step_sec;       /* time per step as logged (over the interval) */
	double phase[HR_PH_N]; /* seconds per step, this rank */
	double phase_lo[HR_PH_N], phase_hi[HR_PH_N]; /* min and max across ranks
						       (Megatron minmax timers) */
	double ckpt_sec;       /* blocking checkpoint write: the step's own
				  (JSON lines) or the event's duration */
	double tokens;         /* tokens this rank processed in the step */
	double job_tokens;     /* the job's tokens in the step, all GPUs, as the
				  log counts them (Megatron-DeepSpeed: global
				  batch x actual seqlen, or the difference of
				  its consumed tokens); NAN */
	double tokens_per_sec; /* per GPU, as logged */
	double tflops;         /* model TFLOP/s per GPU, as logged */
	double mfu;            /* MFU as logged, a fraction */
	double loss;
	double host_cpu;       /* host CPUs' busy fraction (JSON lines) */
	double global_batch;   /* Megatron's global batch size (samples) */
	double runtime_sec;    /* HF summary: train_runtime */
	double total_flos;     /* HF trainer_state.json: total_flos */
};

/* What was seen in one file. */
struct hr_steps_file_info {
	long lines;                 /* lines read */
	long records[HR_SF_N];      /* step records by format */
	long first_line[HR_SF_N];   /* first line of each format's records */
	long last_line[HR_SF_N];
	long malformed;             /* lines that looked like a step line but
				       could not be read */
	int format;                 /* the format of most records (HR_SF_NONE:
				       none) */
};

/*
 * Called for every record, in file order (a Megatron iteration is passed
 * once its timer block, if any, has been read). @r is valid during the call
 * only. Returns 0 to go on, or a negative ch_status that stops the read.
 */
typedef int (*hr_steps_fn)(const struct hr_step_rec *r, void *ctx);

/**
 * hr_steps_read - stream one step log to @fn.
 * @path:   [in] the file: a regular file only (a directory, named pipe or
 *          device is refused without blocking).
 * @fn, @ctx: [in] the visitor.
 * @issues: [in,out] input problems: a line that looks like a step line but
 *          cannot be read ("skipped", with its line, escaped; at most 20
 *          such lines a file are listed, then a count), a file of two
 *          formats (a note: both read), the reason a file was skipped.
 * @info:   [out] what was seen; may be NULL.
 * Returns 0 when at least one record was read; HR_STEPS_SKIP when the file
 * was skipped (unreadable, binary data, no step line of any known format:
 * the issue names the file and its first line); or the first negative
 * error of @fn, or CH_ERR_RUNTIME when out of memory.
 */
int hr_steps_read(const char *path, hr_steps_fn fn, void *ctx,
		  struct hr_issues *issues, struct hr_steps_file_info *info);

/* hr_steps_read(): the file was skipped (reason in the issues) */
#define HR_STEPS_SKIP 1

/**
 * hr_steps_clip - at most @max bytes of a log's text as they are, for a
 * message that every output escapes itself (the input problems: hr_term(),
 * hr_buf_md(), hr_buf_html()); cut at a NUL byte; "..." appended when cut.
 * @s: [in] text (NULL gives ""). @n: [in] its length. @out: [out] buffer of
 * @outn bytes (at least 8). Returns @out.
 */
char *hr_steps_clip(const char *s, size_t n, size_t max, char *out, size_t outn);

/**
 * hr_steps_escape - a log's text made safe to print: printable ASCII as is,
 * every other byte as \xNN, at most @max input bytes ("..." appended when
 * cut).
 * @s: [in] text (NULL gives ""). @n: [in] its length. @out: [out] buffer of
 * @outn bytes (at least 8). Returns @out.
 */
char *hr_steps_escape(const char *s, size_t n, size_t max, char *out, size_t outn);

/**
 * hr_steps_term_text - a log's text for the terminal: at most @max bytes
 * (hr_steps_clip(), @max below 1024), escaped by hr_term() into @out.
 * @s: [in] text (NULL gives ""). @out: [out] buffer of @outn bytes.
 * Returns @out.
 */
char *hr_steps_term_text(const char *s, size_t max, char *out, size_t outn);

/**
 * hr_steps_json_text - a log's text for a JSON document: @s itself when it
 * is valid UTF-8 (every output escapes it for its format), else at most
 * @max bytes escaped byte by byte into @out (hr_steps_escape()).
 * @s: [in] text (NULL gives ""). @out: [out] buffer of @outn bytes.
 * Returns @s, "" or @out (none to be freed).
 */
const char *hr_steps_json_text(const char *s, size_t max, char *out, size_t outn);

#ifdef __cplusplus
}
#endif
#endif
