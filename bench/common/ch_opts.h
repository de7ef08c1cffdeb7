/*
 * ch_opts.h - the options every binary shares, the start of a run, and the
 * command line parsed on every rank of an MPI world (ch_world_parse(); this
 * module uses bench/common/ch_world.h, never the other way).
 *
 * Each main() builds its getopt_long table from its own options followed by
 * CH_COMMON_LONGOPTS, and passes every option it does not know itself to
 * ch_common_opt().
 */
#ifndef CH_OPTS_H
#define CH_OPTS_H

#include <getopt.h>
#include <stdio.h>

#include "base/ch_result.h"

#ifdef __cplusplus
extern "C" {
#endif

enum {
	CH_OPT_JSON = 0x1000,
	CH_OPT_FORCE,
	CH_OPT_MIN_TIME,
	CH_OPT_FIRST_TOOL = 0x1100 /* tools number their long-only options from here */
};

/* Short options handled by ch_common_opt(): h (help), V (version), q (quiet). */
#define CH_COMMON_SHORTOPTS "hVq"

#define CH_COMMON_LONGOPTS                                         \
	{ "json", required_argument, NULL, CH_OPT_JSON },          \
	{ "force", no_argument, NULL, CH_OPT_FORCE },              \
	{ "min-time", required_argument, NULL, CH_OPT_MIN_TIME },  \
	{ "quiet", no_argument, NULL, 'q' },                       \
	{ "help", no_argument, NULL, 'h' },                        \
	{ "version", no_argument, NULL, 'V' }

struct ch_world;

struct ch_common_opts {
	const char *json_path; /* --json FILE, NULL when not given */
	int force;             /* --force: replace an existing result file */
	int quiet;             /* -q/--quiet: only errors and the final table */
	double min_time_sec;   /* --min-time SEC; < 0 when not given */
	int help;              /* -h/--help was given */
	int version;           /* -V/--version was given */
};

/** ch_common_opts_init - defaults: nothing given, min_time_sec = -1. */
void ch_common_opts_init(struct ch_common_opts *o);

/**
 * ch_common_opt - handle one option returned by getopt_long().
 * @c:   [in] the option's value.  @arg: [in] optarg.  @o: [in,out] options.
 * Returns 1 when @c is a common option (handled), 0 when it is not, or
 * CH_ERR_USAGE (message printed) for a bad value (--min-time must be a
 * number in [0, 3600]) or an unknown option ('?').
 */
int ch_common_opt(int c, const char *arg, struct ch_common_opts *o);

/**
 * ch_opts_getopt - the getopt_long() loop of every benchmark: each option
 * goes to the tool's handler first, then to ch_common_opt().
 * @argc, @argv: [in] the command line (argv[0] the program; getopt_long may
 *               permute argv so that the operands come last).
 * @shortopts:   [in] the tool's short options followed by CH_COMMON_SHORTOPTS.
 * @longopts:    [in] the tool's table, ending with CH_COMMON_LONGOPTS and a
 *               zero entry.
 * @tool:        [in] called with each option's value @c, its argument @arg
 *               (optarg: a string of argv, NULL for none) and @ctx; returns
 *               1 when it handled @c, 0 when @c is not the tool's, or a
 *               negative ch_status (message printed) for a bad value.
 * @ctx:         [in,out] passed to @tool (the tool's options).
 * @common:      [in,out] the shared options, initialised by the caller.
 * Each call scans from argv[1] again (optind = 0, glibc's full reset).
 * Returns 0 with optind at the first operand (what operands mean, and when
 * they are an error, is the caller's), or the first negative status: the
 * tool's, ch_common_opt()'s (a bad value, an unknown option), or
 * CH_ERR_USAGE for an option that neither handled.
 */
int ch_opts_getopt(int argc, char **argv, const char *shortopts, const struct option *longopts,
		   int (*tool)(int c, const char *arg, void *ctx), void *ctx, struct ch_common_opts *common);

/** ch_common_help - print the shared options' help lines to @f. */
void ch_common_help(FILE *f);

/** ch_print_version - print "TOOL (clusterhealth) VERSION (git REV)". */
void ch_print_version(const char *tool);

/**
 * ch_run_begin - start the result document of a run.
 * @tool:   [in] binary name.  @argc, @argv: [in] command line.
 * @o:      [in] the parsed common options (json path, force).
 * @out:    [out] the new result; free with ch_result_free().
 * Records the host section (hwloc topology of this machine, and its
 * hardware inventory under host.inventory: ch_inventory_collect() with
 * sysfs read under ch_sysfs_root(), $CH_SYSFS_ROOT for tests) and the hwloc
 * and jansson versions, checks that the result file may be written,
 * starts the energy counters (envelope key "energy", ch_energy.h),
 * records the measurement conditions (envelope key "conditions": the host's
 * load now, and again when the run finishes; see ch_run_begin_world()) for
 * a run of this one process, and finishes the file on SIGINT or SIGTERM
 * (ch_result_catch_signals(): status "error", exit 4).
 * Returns 0, CH_ERR_USAGE (the result file exists without --force, or its
 * directory is missing) or CH_ERR_RUNTIME.
 */
int ch_run_begin(const char *tool, int argc, char **argv,
		 const struct ch_common_opts *o, struct ch_result **out);

/**
 * ch_run_begin_world - ch_run_begin() for a run of several processes: the
 * ranks of @w (bench/common/ch_world.h) on this process's host count in
 * conditions.procs_on_host, and their CPU time is taken out of the host's
 * busy share (their own load is not the host's).
 * @w: [in] the world (borrowed; its layout is read now); NULL or a world
 *     that is not active: this process alone.
 * The conditions (docs/results-schema.md, hw/ch_procfs.h): "before" is
 * sampled here (load average, CPU pressure, busy share of the CPUs over
 * CH_HOST_LOAD_INTERVAL_SEC = 0.2 s, under the procfs root $CH_PROCFS_ROOT
 * for tests), "after" when the run finishes (ch_result_finish(), or in the
 * signal thread on SIGINT / SIGTERM); threads_per_proc is 1 until
 * ch_run_set_threads().
 * Returns as ch_run_begin().
 */
int ch_run_begin_world(const char *tool, int argc, char **argv, const struct ch_common_opts *o,
		       const struct ch_world *w, struct ch_result **out);

/**
 * ch_run_conditions_end - a copy of @cond (a result document's
 * "conditions", as ch_run_begin_world() recorded it) with "after" read now
 * on this host, the ranks of @w on it taken out of the busy share: for a
 * process that finishes a file another one began (allreduce_bw's rank 1
 * when rank 0 hung). Returns a new object, NULL when @cond is not an
 * object or out of memory.
 */
json_t *ch_run_conditions_end(const json_t *cond, const struct ch_world *w);

/**
 * ch_run_set_threads - record how many compute threads each process of the
 * run uses at most (OpenMP threads, loader_contention's feeders and
 * workers): conditions.threads_per_proc, and per_core = procs_on_host x
 * threads_per_proc / online_cpus. Call before the measurements.
 * @n: [in] >= 1. Returns 0, or CH_ERR_USAGE when @n < 1 or @r has no
 * conditions (a document not begun by ch_run_begin()).
 */
int ch_run_set_threads(struct ch_result *r, int n);

/* A tool's command line, for ch_world_parse(). */
struct ch_world_cli {
	const char *tool;                               /* binary name, for --version */
	int (*parse)(int argc, char **argv, void *out); /* fills @out: 0 or a negative ch_status (message printed) */
	void (*usage)(FILE *f);                         /* prints --help */
};

/**
 * ch_world_parse - parse the command line on every rank, so that every
 * rank has the options, with the messages of world rank 0 only (stdout and
 * stderr go to /dev/null on the other ranks while @cli->parse runs); -h
 * and -V print the help or the version there. Then agree on the outcome.
 * @cli:    [in] the tool's parser, help and name (borrowed).
 * @argc, @argv: [in] the command line.
 * @out:    [out] the tool's options, passed to @cli->parse.
 * @common: [in] the common options inside @out (read after parsing: help, version).
 * Returns 0, or the most severe status of any rank (CH_ERR_USAGE for a bad
 * command line) on every rank.
 */
int ch_world_parse(const struct ch_world *w, const struct ch_world_cli *cli, int argc, char **argv, void *out,
		   const struct ch_common_opts *common);

#ifdef __cplusplus
}
#endif
#endif
