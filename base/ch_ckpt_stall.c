/*
 * ch_ckpt_stall.c - the checkpoint stall model (see ch_ckpt_stall.h).
 */
#include "base/ch_ckpt_stall.h"
#include "base/ch_common.h"

#include <string.h>

int ch_ckpt_stall_compute(double sync_block_sec, double staged_block_sec, double copy_sec,
			  double interval_sec, struct ch_ckpt_stall *out)
{
	memset(out, 0, sizeof(*out));
	if (!(interval_sec > 0))
		return ch_usage_error("invalid checkpoint interval '%g' s (expected a positive time)", interval_sec);
	if (!(sync_block_sec >= 0) || !(staged_block_sec >= 0) || !(copy_sec >= 0))
		return ch_usage_error("invalid checkpoint times (sync %g s, staged %g s, copy %g s): expected 0 or more",
				      sync_block_sec, staged_block_sec, copy_sec);
	if (sync_block_sec >= interval_sec || staged_block_sec >= interval_sec)
		return ch_usage_error("a checkpoint blocks for %g s, not shorter than its interval %g s",
				      sync_block_sec > staged_block_sec ? sync_block_sec : staged_block_sec, interval_sec);
	out->sync_frac = sync_block_sec / interval_sec;
	out->staged_frac = staged_block_sec / interval_sec;
	out->recovered_frac = out->sync_frac - out->staged_frac;
	out->sync_gain_frac = 1.0 / (1.0 - out->sync_frac) - 1.0;
	out->staging_gain_frac = (1.0 - out->staged_frac) / (1.0 - out->sync_frac) - 1.0;
	out->copy_keeps_up = staged_block_sec + copy_sec < interval_sec;
	return 0;
}
