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
	/* nothing printed: the callers say why the stall is not judged (after a
	 * measurement, a usage message would read as if the run had failed) */
	if (!(interval_sec > 0) || !(sync_block_sec >= 0) || !(staged_block_sec >= 0) || !(copy_sec >= 0) ||
	    sync_block_sec >= interval_sec || staged_block_sec >= interval_sec)
		return CH_ERR_USAGE;
	out->sync_frac = sync_block_sec / interval_sec;
	out->staged_frac = staged_block_sec / interval_sec;
	out->recovered_frac = out->sync_frac - out->staged_frac;
	out->sync_gain_frac = 1.0 / (1.0 - out->sync_frac) - 1.0;
	out->staging_gain_frac = (1.0 - out->staged_frac) / (1.0 - out->sync_frac) - 1.0;
	out->copy_keeps_up = staged_block_sec + copy_sec < interval_sec;
	return 0;
}
