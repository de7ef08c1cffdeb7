/*
 * ch_ar_run.h - allreduce_bw's sweep: choose and set up the backend, print
 * the rank table, plan the groups, measure every (group, algorithm, size)
 * with checked results, print nccl-tests tables, gather per-rank times to
 * rank 0, name stragglers, slow groups and suspect nodes, and write the
 * result file after every size (docs/results-schema.md, "allreduce_bw").
 */
#ifndef CH_AR_RUN_H
#define CH_AR_RUN_H

#include "bench/allreduce/ch_ar_opts.h"
#include "bench/common/ch_ar_world.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * ch_ar_run - the whole measurement, collective over the world.
 * @w: [in] the world (ch_ar_world_init()).
 * @o: [in] parsed options (ch_world_parse() with ch_ar_opts_parse()).
 * @argc, @argv: [in] the command line, recorded in the result file.
 * Returns the agreed status on every rank: 0; CH_ERR_CHECK (wrong elements,
 * or busbw below --min-busbw); CH_ERR_USAGE (a value that needs the world or
 * the backend to check: --inject-delay rank, algorithm names, more local
 * ranks than GPUs, an existing result file); CH_ERR_UNAVAILABLE (backend not
 * built or no GPU); CH_ERR_RUNTIME. World rank 0 has written the result file
 * with the matching status. A timeout or a run-time error in the middle of
 * the sweep aborts every rank instead (exit code 4).
 */
int ch_ar_run(struct ch_ar_world *w, const struct ch_ar_opts *o, int argc, char **argv);

/**
 * ch_ar_run_backend - ch_ar_run() with the collective backend @be instead
 * of the one --backend names (tests pass a stand-in: a backend with
 * comm_create_group(), run_group() and devices() runs the single-process
 * mode of -g N on the CPU). @be->probe() still decides availability.
 */
struct ch_comm_backend;
int ch_ar_run_backend(struct ch_ar_world *w, const struct ch_ar_opts *o, const struct ch_comm_backend *be,
		      int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
