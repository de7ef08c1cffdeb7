/*
 * ch_common.h - exit codes, status codes and messages shared by every
 * clusterhealth binary and module.
 *
 * Convention (nccl-tests passes a result code up through a check macro):
 * library functions return 0 on success or a negative ch_status; only main()
 * exits, with ch_exit_code(status).
 */
#ifndef CH_COMMON_H
#define CH_COMMON_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CH_VERSION "0.1.0"

/* Process exit codes, documented in README.md ("Exit codes"). */
enum ch_exit {
	CH_EXIT_OK = 0,          /* every measurement ran and passed its check */
	CH_EXIT_CHECK = 1,       /* a measurement failed its check or a threshold */
	CH_EXIT_USAGE = 2,       /* bad option, bad value, bad input file */
	CH_EXIT_UNAVAILABLE = 3, /* backend not built, or no device present */
	CH_EXIT_RUNTIME = 4      /* run-time error (allocation, API failure, I/O) */
};

/* Status returned by library functions: 0 or the negated exit code. */
enum ch_status {
	CH_OK = 0,
	CH_ERR_CHECK = -1,
	CH_ERR_USAGE = -2,
	CH_ERR_UNAVAILABLE = -3,
	CH_ERR_RUNTIME = -4
};

/**
 * ch_exit_code - map a ch_status to the process exit code.
 * @status: [in] 0 or a negative ch_status; any other negative value maps to
 *          CH_EXIT_RUNTIME.
 * Returns the exit code (0..4).
 */
int ch_exit_code(int status);

/**
 * ch_status_name - the result-file status string for a ch_status.
 * @status: [in] 0 or a negative ch_status.
 * Returns a static string: "ok", "failed", "usage", "unavailable" or "error".
 */
const char *ch_status_name(int status);

/**
 * ch_set_prog - set the program name used as prefix of every message.
 * @name: [in] static string, not copied (normally the binary's name).
 */
void ch_set_prog(const char *name);

/** ch_prog - the name set by ch_set_prog(), "clusterhealth" by default. */
const char *ch_prog(void);

/**
 * ch_set_quiet - silence ch_info() output (errors and warnings still print).
 * @quiet: [in] non-zero to silence.
 */
void ch_set_quiet(int quiet);

/** ch_quiet - non-zero when ch_set_quiet(1) was called. */
int ch_quiet(void);

/*
 * Messages in git's style: lower-case, no full stop, the offending value in
 * quotes. ch_error() and ch_warn() write "PROG: error: ..." and
 * "PROG: warning: ..." to stderr; ch_info() writes to stdout unless quiet.
 * A trailing newline is added.
 */
void ch_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void ch_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void ch_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/**
 * ch_last_error - the text of the calling thread's last ch_error() or
 * ch_usage_error() (without
 * the "PROG: error: " prefix), "" when none since ch_clear_last_error().
 * Lets a caller record why a step failed (roofline's failed points).
 * Returns a thread-local buffer, valid until the thread's next ch_error().
 */
const char *ch_last_error(void);

/** ch_clear_last_error - forget the calling thread's last ch_error(). */
void ch_clear_last_error(void);

/**
 * ch_usage_error - print "PROG: error: ..." then "try 'PROG --help'" and
 * return CH_ERR_USAGE, so callers can write `return ch_usage_error(...)`.
 */
int ch_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#ifdef __cplusplus
}
#endif
#endif
