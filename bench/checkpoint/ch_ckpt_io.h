/*
 * ch_ckpt_io.h - checkpoint_io's file operations: writing a file the way
 * training frameworks write a checkpoint shard (large sequential writes,
 * then fsync), reading it back with its zlib crc32, copying a staged file,
 * and the checks on a target directory (empty of foreign files, room, the
 * mount it is on). Local to the calling rank; no MPI.
 *
 * Errors are returned as a status plus a struct ch_ckpt_ioerr that says
 * which operation failed with which errno, so that world rank 0 can name the
 * rank, the path and the cause of a failure on another rank.
 */
#ifndef CH_CKPT_IO_H
#define CH_CKPT_IO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The operation that failed. */
enum ch_ckpt_op {
	CH_CKPT_OP_NONE = 0,
	CH_CKPT_OP_OPEN,
	CH_CKPT_OP_WRITE,
	CH_CKPT_OP_FSYNC,
	CH_CKPT_OP_CLOSE,
	CH_CKPT_OP_READ,
	CH_CKPT_OP_SHORT,   /* read back fewer or more bytes than written */
	CH_CKPT_OP_CRC,     /* read back, but the crc32 differs */
	CH_CKPT_OP_N
};

struct ch_ckpt_ioerr {
	int op;   /* enum ch_ckpt_op */
	int err;  /* errno, 0 for SHORT and CRC */
};

/** ch_ckpt_op_name - "open", "write", ..., "crc32 check". */
const char *ch_ckpt_op_name(int op);

/**
 * ch_ckpt_write_file - create @path (it must not exist) and write @bytes
 * from @buf in calls of at most @block bytes.
 * @durable: [in] 1: fsync the file, then drop its pages from the page cache
 *           (posix_fadvise DONTNEED) so that a read-back reaches the storage;
 *           0: leave it in the page cache (a staging write).
 * @written: [out] bytes the write calls returned, also on failure.
 * Returns 0, or CH_ERR_RUNTIME with @e filled (nothing printed).
 */
int ch_ckpt_write_file(const char *path, const unsigned char *buf, uint64_t bytes, uint64_t block,
		       int durable, uint64_t *written, struct ch_ckpt_ioerr *e);

/**
 * ch_ckpt_read_check - read @path back in calls of @scratch_bytes and
 * compare its length and zlib crc32 with @bytes and @crc.
 * @scratch: [in] a buffer of @scratch_bytes (> 0) to read into.
 * Returns 0, CH_ERR_CHECK (e->op SHORT or CRC: the file does not read back
 * as written) or CH_ERR_RUNTIME (open or read failed), @e filled.
 */
int ch_ckpt_read_check(const char *path, uint64_t bytes, uint32_t crc, unsigned char *scratch,
		       size_t scratch_bytes, struct ch_ckpt_ioerr *e);

/**
 * ch_ckpt_copy_file - copy @src to @dst (created; it must not exist) through
 * @scratch, in calls of @scratch_bytes, then fsync @dst and drop its pages.
 * @copied: [out] bytes written to @dst.
 * @on_dst: [out] 1 when the failure was on @dst, 0 on @src.
 * Returns 0 or CH_ERR_RUNTIME with @e filled.
 */
int ch_ckpt_copy_file(const char *src, const char *dst, unsigned char *scratch, size_t scratch_bytes,
		      uint64_t *copied, int *on_dst, struct ch_ckpt_ioerr *e);

/**
 * ch_ckpt_fsync_dir - fsync the directory @dir, making new entries durable.
 * Returns 0 or CH_ERR_RUNTIME with @e filled (op OPEN or FSYNC).
 */
int ch_ckpt_fsync_dir(const char *dir, struct ch_ckpt_ioerr *e);

/**
 * ch_ckpt_corrupt_byte - test hook: flip every bit of the byte at @offset
 * of @path, then fsync. Returns 0 or CH_ERR_RUNTIME (message printed).
 */
int ch_ckpt_corrupt_byte(const char *path, uint64_t offset);

/**
 * ch_ckpt_dir_prepare - make sure @dir can take a checkpoint of @need_bytes.
 * Creates @dir when missing (its parent must exist; mode 0755) and says so
 * in @created. Refuses a path that is not a directory, one we cannot write
 * into (access(W_OK | X_OK): a read-only mount, no permission), a directory holding
 * any entry not written by checkpoint_io (ch_ckpt_is_own_name()), and one
 * whose file system has less than @need_bytes available to us (statvfs
 * f_bavail x f_frsize). Our own files, left by an interrupted run, and a
 * run's lock file are not removed here: see ch_ckpt_lock() and
 * ch_ckpt_dir_clean().
 * @opt:     [in] the option named in messages ("--dir").
 * @why_need: [in] appended to the message on too little space (how
 *           @need_bytes was reckoned), or NULL.
 * @created: [out] 1 when this call created @dir.
 * @avail:   [out] bytes available on its file system.
 * Returns 0, CH_ERR_USAGE (message printed naming the option, the path and
 * the first foreign entry or the space missing) or CH_ERR_RUNTIME.
 */
int ch_ckpt_dir_prepare(const char *opt, const char *dir, uint64_t need_bytes, const char *why_need,
			int *created, uint64_t *avail);

/* The lock file a run holds in --dir and --stage-dir (ch_ckpt_lock()). */
#define CH_CKPT_LOCK_NAME "checkpoint_io.lock"

/**
 * ch_ckpt_lock - hold @dir for this run before anything in it is removed:
 * two runs into one directory would delete each other's files. Creates
 * @dir/checkpoint_io.lock (O_EXCL | O_NOFOLLOW) holding the run's identity,
 * "HOST PID" of its world rank 0. A lock file of this run (another node's
 * rank made it: a shared --dir) is fine; one of a run that is gone, on
 * this host (its pid no longer exists), is replaced with a warning; any
 * other is refused, naming the run that holds it.
 * @opt:      [in] the option named in messages ("--dir").
 * @run_host, @run_pid: [in] world rank 0's host and pid.
 * @made:     [out] 1 when this call created the file (remove it with
 *            ch_ckpt_unlock() at the end).
 * Returns 0 or CH_ERR_USAGE (message printed).
 */
int ch_ckpt_lock(const char *opt, const char *dir, const char *run_host, long run_pid, int *made);

/** ch_ckpt_unlock - remove @dir's lock file (one this run made). */
void ch_ckpt_unlock(const char *dir);

/**
 * ch_ckpt_dir_clean - remove checkpoint_io's own files from @dir (others
 * are left alone). Returns the number removed, or CH_ERR_RUNTIME (printed)
 * when @dir cannot be read.
 */
int ch_ckpt_dir_clean(const char *dir);

/* The mount a path is on, from /proc/self/mountinfo (longest mount point
 * that is a prefix of the path's real path). */
struct ch_ckpt_mount {
	char point[256];   /* mount point, "/" */
	char fstype[32];   /* "nfs4", "lustre", "gpfs", "ext4", "tmpfs", ... */
	char source[256];  /* device or server:export */
};

/**
 * ch_ckpt_mount_of - the mount @path is on. @m: [out].
 * Returns 0, or CH_ERR_RUNTIME when @path does not resolve or mountinfo
 * cannot be read (@m then holds "?" everywhere; nothing printed).
 */
int ch_ckpt_mount_of(const char *path, struct ch_ckpt_mount *m);

#ifdef __cplusplus
}
#endif
#endif
