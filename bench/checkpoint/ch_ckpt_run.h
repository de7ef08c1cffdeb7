/*
 * ch_ckpt_run.h - one checkpoint_io run under MPI: the synchronous
 * checkpoint, the aggregate scaling points, the staged checkpoint with its
 * background copy and concurrent load, the read-back of every file, the
 * stall model, the table and the result document (results section:
 * docs/results-schema.md, "checkpoint_io").
 *
 * The MPI world and rank layout are the drivers' shared one
 * (bench/common/ch_world.h), set up as allreduce_bw sets it up; the
 * agreement on errors and the --timeout watchdog are allreduce_bw's
 * (ch_ar_world.h); a hung write, fsync or read names the rank, its host and
 * the path.
 */
#ifndef CH_CKPT_RUN_H
#define CH_CKPT_RUN_H

#include "bench/common/ch_ar_world.h"
#include "bench/checkpoint/ch_ckpt.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * ch_ckpt_block_signals - block SIGINT, SIGTERM and SIGHUP in the calling
 * thread and every thread it starts later; call first in main(), before
 * MPI is initialised, so that ch_ckpt_run()'s signal thread receives them
 * (it removes this rank's files; world rank 0 finishes the result file with
 * status "error", naming the signal and the phase, and aborts every rank,
 * exit 4; the other ranks abort 3 s later, when rank 0 was not signalled).
 */
void ch_ckpt_block_signals(void);

/**
 * ch_ckpt_run - the whole run, collective over the world.
 * @w: [in] the world (ch_ar_world_init()).  @o: [in] parsed options.
 * @argc, @argv: [in] the command line, for the result document.
 * Returns, agreed on every rank: 0 (every file read back intact),
 * CH_ERR_CHECK (a file did not read back as written), CH_ERR_USAGE (--dir
 * or --stage-dir not empty of foreign files, without room, not creatable;
 * a size smaller than one byte per file), CH_ERR_UNAVAILABLE (--load gpu
 * without a GPU) or CH_ERR_RUNTIME (a write failed, the target filled up;
 * the result keeps what was measured before). A timeout or a signal does
 * not return: every rank exits with code 4.
 */
int ch_ckpt_run(struct ch_ar_world *w, const struct ch_ckpt_opts *o, int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
