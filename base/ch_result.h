/*
 * ch_result.h - the result file every binary writes: one JSON document per
 * run, schema "clusterhealth.result" version CH_RESULT_SCHEMA_VERSION,
 * documented in docs/results-schema.md.
 *
 * The document is rewritten atomically (temporary file in the same
 * directory, fsync, rename) after each measurement with status "incomplete",
 * and a last time with the final status, so a crash or an abort never leaves
 * a truncated file and never loses a finished measurement. On SIGINT or
 * SIGTERM the file is finished with status "error" and the reason
 * (ch_result_catch_signals()).
 */
#ifndef CH_RESULT_H
#define CH_RESULT_H

#include <jansson.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CH_RESULT_SCHEMA "clusterhealth.result"
#define CH_RESULT_SCHEMA_VERSION 1

struct ch_result;

/**
 * ch_result_new - start a result document.
 * @tool: [in] binary name, e.g. "roofline" (copied).
 * @argc, @argv: [in] the command line, recorded under "args" (copied).
 * Fills schema, tool, version, git_rev, start_utc, host (hostname, kernel;
 * the topology part is added with ch_result_set_host()), env (whitelisted
 * variables: NCCL_*, CUDA_VISIBLE_DEVICES, OMPI_*, UCX_*, SLURM_*, OMP_*,
 * OPENBLAS_*), an empty "software" and "results" object, status
 * "incomplete".
 * Returns the new document (free with ch_result_free()), NULL when out of
 * memory.
 */
struct ch_result *ch_result_new(const char *tool, int argc, char **argv);

/** ch_result_free - release @r (NULL is accepted). Does not write. */
void ch_result_free(struct ch_result *r);

/**
 * ch_result_doc - the whole document, borrowed: valid until ch_result_free().
 * Callers may add keys; the top-level keys listed in the schema are owned by
 * this module and set through the functions below.
 */
json_t *ch_result_doc(struct ch_result *r);

/** ch_result_results - the "results" object (borrowed), for the tool's data. */
json_t *ch_result_results(struct ch_result *r);

/**
 * ch_result_set_live - a top-level key whose value is recomputed at every
 * write (each checkpoint and the finish), e.g. the run's energy so far
 * (ch_result_energy_start() in hw/ch_energy.h sets "energy" this way).
 * @key:     [in] the key; not copied, so a string constant.
 * @value:   [in] called with @ctx before each write; returns a new reference
 *           stored under @key (NULL stores nothing).
 * @release: [in] called once with @ctx by ch_result_free(); may be NULL.
 * @ctx:     [in] owned by @r from now on, released through @release.
 * One live key per document: a second call replaces the first without
 * releasing it.
 */
void ch_result_set_live(struct ch_result *r, const char *key,
			json_t *(*value)(void *ctx), void (*release)(void *ctx),
			void *ctx);

/**
 * ch_result_on_finish - a top-level key completed when the run ends: by
 * ch_result_finish(), and by the finish on SIGINT or SIGTERM
 * (ch_result_catch_signals()), e.g. the host's load after the run
 * ("conditions", set up by ch_run_begin() in bench/common/ch_opts.h).
 * @key:     [in] the key; not copied, so a string constant.
 * @value:   [in] called with @ctx and the key's value in the document being
 *           finished (borrowed; NULL when absent); returns a new reference
 *           stored under @key (NULL leaves the key as it is). On a signal it
 *           runs in the signal thread while another thread may be changing
 *           the document, so it must read nothing but @ctx and @now (which
 *           is then a copy) and must not call ch_result_*() on @r.
 * @release: [in] called once with @ctx by ch_result_free(); may be NULL.
 * @ctx:     [in] owned by @r from now on; not changed after this call.
 * One such key per document: a second call replaces the first without
 * releasing it.
 */
void ch_result_on_finish(struct ch_result *r, const char *key,
			 json_t *(*value)(void *ctx, const json_t *now), void (*release)(void *ctx),
			 void *ctx);

/**
 * ch_result_set - set a top-level key, stealing the reference to @value.
 * Used for "host", "ranks" and tool-specific top-level sections.
 * Returns 0, or CH_ERR_RUNTIME when @value is NULL or out of memory.
 */
int ch_result_set(struct ch_result *r, const char *key, json_t *value);

/**
 * ch_result_set_software - record a software version under "software".
 * @key: [in] e.g. "cuda_runtime", "nccl", "mpi", "blas", "hwloc".
 * @version: [in] version text (copied); NULL records JSON null ("not built
 *           in" or "not found").
 */
void ch_result_set_software(struct ch_result *r, const char *key,
			    const char *version);

/**
 * ch_result_set_path - where the document is written.
 * @path:  [in] file name (copied); NULL disables writing.
 * @force: [in] non-zero to allow replacing an existing file (a regular
 *         file that clusterhealth wrote, ch_check_output_file()).
 * Returns 0, or CH_ERR_USAGE (message printed, naming the file) when the
 * file exists and @force is 0 or it is not one of ours, or its directory
 * does not exist or is not writable (ch_check_output_file()).
 */
int ch_result_set_path(struct ch_result *r, const char *path, int force);

/**
 * ch_check_output_file - may @path be written: when it exists, only with
 * @force, and only when it is a regular file that clusterhealth wrote (a
 * JSON document whose "schema" names clusterhealth, or an empty file; a
 * device, pipe, directory, symbolic link or another program's file is
 * refused, named); then ch_check_output_path(). Checked before anything is
 * measured.
 * @opt: [in] the option naming the file ("--json"), for the messages.
 * Returns 0, CH_ERR_USAGE (message printed), CH_ERR_RUNTIME out of memory.
 */
int ch_check_output_file(const char *opt, const char *path, int force);

/** ch_file_kind - "a character device", "a named pipe", ... for @m (st_mode). */
const char *ch_file_kind(mode_t m);

/**
 * ch_check_output_path - can a file be created at @path: it is not a
 * directory, its directory exists and a file can be created in it (probed with the atomic write's
 * temporary name "PATH.tmp.PID", removed at once). Checked before any
 * measurement starts.
 * @opt: [in] the option naming the file, for the message ("--json").
 * Returns 0, CH_ERR_USAGE (message printed, naming the directory and the
 * file), CH_ERR_RUNTIME when out of memory.
 */
int ch_check_output_path(const char *opt, const char *path);

/**
 * ch_result_set_status - set "status" and "reason".
 * @status: [in] CH_OK, CH_ERR_CHECK ("failed"), CH_ERR_UNAVAILABLE, ... as
 *          named by ch_status_name(); the exit code is recorded as well.
 * @reason: [in] printf format for the reason (NULL for none).
 */
void ch_result_set_status(struct ch_result *r, int status, const char *reason,
			  ...) __attribute__((format(printf, 3, 4)));

/**
 * ch_result_checkpoint - write the document now with status "incomplete"
 * (keeping any reason), end_utc set to now. Call after each measurement.
 * Returns 0 (also when no path is set), CH_ERR_RUNTIME on I/O error
 * (message printed).
 */
int ch_result_checkpoint(struct ch_result *r);

/**
 * ch_result_finish - set the final status and reason, end_utc, the key of
 * ch_result_on_finish(), and write.
 * @status: [in] as for ch_result_set_status(); @reason may be NULL.
 * Returns 0, or CH_ERR_RUNTIME on I/O error (message printed).
 */
int ch_result_finish(struct ch_result *r, int status, const char *reason, ...)
	__attribute__((format(printf, 3, 4)));

/**
 * ch_result_catch_signals - finish @r's result file on SIGINT or SIGTERM
 * (Ctrl-C, scancel, a job's time limit). The first such signal rewrites the
 * file from the last document written (so every finished measurement is
 * kept) with status "error", exit_code 4 and the reason ("interrupted by
 * SIGTERM (signal 15) after 12 s; ..."), removes a temporary file of a
 * write the signal cut, prints the reason and exits with CH_EXIT_RUNTIME
 * (4). A second signal exits at once with 128 + the signal number. A
 * signal ignored when the program started (SIGINT of a background job)
 * stays ignored, and one the calling thread blocks is left to the caller
 * (checkpoint_io takes SIGINT and SIGTERM with sigwait()). The key of
 * ch_result_on_finish() is completed in the signal thread. Forked
 * children get the default action. The handler only writes into a pipe; a
 * thread started here does the rest. ch_run_begin() calls it; once
 * ch_result_finish() has written the final status, or after
 * ch_result_free(), the signals get their default action again. Without a
 * result file the reason is printed unless quiet (ch_set_quiet()).
 * @r: [in] the run (borrowed); NULL: exit 4 on a signal, no file.
 * Returns 0, or CH_ERR_RUNTIME (printed) when the pipe or thread cannot be
 * created.
 */
int ch_result_catch_signals(struct ch_result *r);

/* A function the signal thread calls before it finishes the result file. */
typedef void (*ch_signal_hook_fn)(void *ctx, char *note, size_t n);

/**
 * ch_result_on_signal - have the thread that takes SIGINT or SIGTERM
 * (ch_result_catch_signals()) call @fn(@ctx, note, n) first, before it
 * finishes the result file and exits: roofline puts GPU power limits back
 * there (hw/ch_powercap.h). @fn may write a one-line @note (n bytes,
 * "" when nothing to say); it is appended to the run's reason. One hook per
 * process; NULL removes it. @fn runs in that thread while the main thread
 * may still be running: it must take its own locks.
 */
void ch_result_on_signal(ch_signal_hook_fn fn, void *ctx);

/**
 * ch_result_signal_reason - what the result file says when a signal
 * finishes it, where the tool knows better than "interrupted by SIGTERM":
 * @why is called by the signal thread (never from a handler) with the
 * signal's name and number and the seconds since ch_result_catch_signals();
 * it writes the reason into @buf (@n bytes) and returns 1, or returns 0 for
 * the default reason. It must not block. NULL removes it. allreduce_bw's
 * world says so when rank 0 had been stopped or hung past --timeout
 * before the launcher's SIGTERM reached it.
 */
void ch_result_signal_reason(int (*why)(void *ctx, const char *name, int signo, double elapsed_sec,
					char *buf, size_t n), void *ctx);

/*
 * Every file clusterhealth writes is written atomically, by one method: the
 * text goes to an unnamed file in the destination's directory (O_TMPFILE;
 * where the file system has none, to a new "PATH.tmp.PID" made with O_EXCL
 * | O_NOFOLLOW, so never through a link planted under that name), is
 * flushed (fsync), given the name "PATH.tmp.PID" and renamed over PATH.
 * A process killed while it writes leaves no temporary behind (with
 * O_TMPFILE), and only a regular file is ever replaced: a device, named
 * pipe, directory or symbolic link at PATH is refused, named.
 */
struct ch_atomic {
	char path[4096];
	char tmp[4200];  /* "PATH.tmp.PID" */
	int fd;
	int unnamed;     /* fd is an O_TMPFILE file, not yet linked */
	int nosync;      /* ch_atomic_commit() does not fsync: the caller does, after */
};

/*
 * ch_path_dir - the folder of the file @path into @dir (@n bytes,
 * NUL-terminated, cut to fit): "." for a bare name, "/" for a file in the
 * root, else @path up to its last '/'. Nothing is looked up on disk.
 */
void ch_path_dir(const char *path, char *dir, size_t n);

/**
 * ch_atomic_begin - start writing @path: @a->fd is open for writing.
 * Returns 0, or CH_ERR_RUNTIME (printed: a name too long, the directory
 * not writable, something in the way of the temporary name).
 */
int ch_atomic_begin(struct ch_atomic *a, const char *path);

/**
 * ch_atomic_commit - flush, close and rename the text written to @a->fd
 * over the path (a regular file only). Returns 0, or CH_ERR_RUNTIME
 * (printed; nothing left behind, the path unchanged).
 */
int ch_atomic_commit(struct ch_atomic *a);

/** ch_atomic_abort - give up the write: close, remove the temporary. */
void ch_atomic_abort(struct ch_atomic *a);

/**
 * ch_json_write_atomic - write any JSON document atomically.
 * @path:  [in] destination, written as ch_atomic_begin() says.
 * @doc:   [in] document (not stolen).
 * @flags: [in] jansson dump flags (JSON_INDENT(2) | JSON_SORT_KEYS typical).
 * Returns 0, or CH_ERR_RUNTIME with errno-based message printed.
 */
int ch_json_write_atomic(const char *path, const json_t *doc, size_t flags);

/**
 * ch_write_file_atomic - write a byte buffer to @path atomically (same
 * method as ch_json_write_atomic()). Returns 0 or CH_ERR_RUNTIME (printed).
 */
int ch_write_file_atomic(const char *path, const void *data, size_t len);

/**
 * ch_utc_now - current UTC time as "YYYY-MM-DDTHH:MM:SSZ".
 * @buf: [out] at least 21 bytes. Returns @buf.
 */
char *ch_utc_now(char *buf, size_t n);

/** ch_git_rev - the git revision the binary was built from ("unknown" if none). */
const char *ch_git_rev(void);

#ifdef __cplusplus
}
#endif
#endif
