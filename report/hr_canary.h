/*
 * hr_canary.h - the pre-scaling canary: `health_report canary ...`.
 *
 * Before a job is scaled from the GPUs it runs on today to a larger target
 * allocation, the canary combines what was measured on the current
 * allocation (allreduce_bw sweeps and --scaling points, loader_contention)
 * with what the user knows (model size, step time now, checkpoint interval
 * ...) and predicts step time, scaling efficiency, MFU and cost at the
 * target, attributes today's loss, and says whether to book the larger
 * allocation or to fix first and re-measure. Every figure it prints is
 * labelled measured, fitted, given or assumed. Methodology: docs/canary.md.
 */
#ifndef HR_CANARY_H
#define HR_CANARY_H

#ifdef __cplusplus
extern "C" {
#endif

/**
 * hr_canary_main - entry point of the `canary` subcommand.
 * @argc: [in] argument count; argv[0] is the subcommand name ("canary").
 * @argv: [in] arguments: options (see `health_report canary --help` and
 *        docs/canary.md) followed by result files or directories of
 *        allreduce_bw and loader_contention results (searched recursively).
 * Options are parsed here with getopt_long (optind is reset); a bad value is
 * reported naming the option and the value.
 * Returns the process exit code: 0 the verdict is "book", 1 the verdict is
 * "fix first and re-measure", 2 usage or input error (bad option value,
 * contradicting or impossible inputs such as a negative time, zero GPUs or a
 * target below today's GPU count, unreadable input file), 4 run-time error
 * (allocation, I/O while writing --json).
 */
int hr_canary_main(int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
