/*
 * ch_ckpt_stall.h - the checkpoint stall model, shared by checkpoint_io
 * (bench/checkpoint) and health_report's canary (report/judge/hr_checkpoint.c):
 * the share of wall-clock a checkpoint blocks, and what staging it recovers,
 * in the canary's terms (docs/canary.md, "The step-time model").
 */
#ifndef CH_CKPT_STALL_H
#define CH_CKPT_STALL_H

#ifdef __cplusplus
extern "C" {
#endif

/* The stall of wall-clock, in the canary's terms (docs/canary.md). */
struct ch_ckpt_stall {
	double sync_frac;       /* sync block / interval: the share of wall-clock lost */
	double staged_frac;     /* staged block / interval */
	double recovered_frac;  /* sync_frac - staged_frac */
	double sync_gain_frac;  /* throughput gain were the stall removed: 1 / (1 - sync_frac) - 1 */
	double staging_gain_frac; /* throughput gain of staging: (1 - staged_frac) / (1 - sync_frac) - 1 */
	int copy_keeps_up;      /* 1 when the background copy ends before the next checkpoint:
				   staged block + copy < interval */
};

/**
 * ch_ckpt_stall_compute - the stall model.
 * @sync_block_sec, @staged_block_sec: [in] blocking times (max over ranks), s.
 * @copy_sec: [in] background copy time (max over ranks), s.
 * @interval_sec: [in] wall-clock between checkpoints, s (> 0).
 * @out: [out] the figures above.
 * Returns 0, or CH_ERR_USAGE (nothing printed: the caller says why) when
 * @interval_sec is not positive, a time is negative, or a blocking time is
 * not shorter than the interval.
 */
int ch_ckpt_stall_compute(double sync_block_sec, double staged_block_sec, double copy_sec,
			  double interval_sec, struct ch_ckpt_stall *out);

#ifdef __cplusplus
}
#endif
#endif
