/*
 * hr_history.h - nightly history of headline metrics in SQLite, and the
 * regression check: `health_report history ...`.
 *
 * Every night's headline metrics (per node and per GPU) are appended to an
 * SQLite database; each new value is compared with the same node's (and
 * GPU's) own trailing baseline, the median of its previous N nights
 * (default 14), and a drop beyond a threshold is reported as
 * "regressed X% since DATE", DATE being the first night of the current run of
 * regressed values. Methodology: docs/workflows.md.
 */
#ifndef HR_HISTORY_H
#define HR_HISTORY_H

#ifdef __cplusplus
extern "C" {
#endif

/**
 * hr_history_main - entry point of the `history` subcommand.
 * @argc: [in] argument count; argv[0] is the subcommand name ("history").
 * @argv: [in] arguments: options (see `health_report history --help` and
 *        docs/workflows.md: --db FILE, --night DATE, --window N,
 *        --threshold PCT, ...) followed by result files or directories.
 * Options are parsed here with getopt_long (optind is reset); a bad value is
 * reported naming the option and the value.
 * Returns the process exit code: 0 no regression, 1 at least one node
 * regressed (listed as drain candidates), 2 usage or input error, 4
 * run-time error (SQLite, I/O).
 */
int hr_history_main(int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
