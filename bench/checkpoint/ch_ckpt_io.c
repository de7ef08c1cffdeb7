/*
 * ch_ckpt_io.c - checkpoint_io's file operations (see ch_ckpt_io.h).
 */
#include "bench/checkpoint/ch_ckpt_io.h"
#include "bench/checkpoint/ch_ckpt.h"
#include "base/ch_common.h"
#include "base/ch_parse.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <zlib.h>

const char *ch_ckpt_op_name(int op)
{
	static const char *const names[] = { "none", "open", "write", "fsync", "close", "read",
					     "length check", "crc32 check" };
	return op >= 0 && op < CH_CKPT_OP_N ? names[op] : "?";
}

static int fail(struct ch_ckpt_ioerr *e, int op, int err)
{
	e->op = op;
	e->err = err;
	return op == CH_CKPT_OP_SHORT || op == CH_CKPT_OP_CRC ? CH_ERR_CHECK : CH_ERR_RUNTIME;
}

/* write all of @n bytes (a short write is retried, EINTR too) */
static int write_all(int fd, const unsigned char *p, uint64_t n, uint64_t block, uint64_t *done)
{
	while (n > 0) {
		size_t want = n < block ? (size_t)n : (size_t)block;
		ssize_t w = write(fd, p, want);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		if (w == 0)
			return EIO;
		p += w;
		n -= (uint64_t)w;
		*done += (uint64_t)w;
	}
	return 0;
}

static int finish_durable(int fd, int durable, struct ch_ckpt_ioerr *e)
{
	if (!durable)
		return 0;
	if (fsync(fd) != 0)
		return fail(e, CH_CKPT_OP_FSYNC, errno);
	/* the read-back must reach the storage, not the page cache */
	(void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	return 0;
}

int ch_ckpt_write_file(const char *path, const unsigned char *buf, uint64_t bytes, uint64_t block,
		       int durable, uint64_t *written, struct ch_ckpt_ioerr *e)
{
	int fd, err, rc;

	*written = 0;
	e->op = CH_CKPT_OP_NONE;
	e->err = 0;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return fail(e, CH_CKPT_OP_OPEN, errno);
	if ((err = write_all(fd, buf, bytes, block, written))) {
		close(fd);
		return fail(e, CH_CKPT_OP_WRITE, err);
	}
	if ((rc = finish_durable(fd, durable, e))) {
		close(fd);
		return rc;
	}
	if (close(fd) != 0)
		return fail(e, CH_CKPT_OP_CLOSE, errno);
	return 0;
}

int ch_ckpt_read_check(const char *path, uint64_t bytes, uint32_t crc, unsigned char *scratch,
		       size_t scratch_bytes, struct ch_ckpt_ioerr *e)
{
	uLong c = crc32(0L, Z_NULL, 0);
	uint64_t got = 0;
	int fd;

	e->op = CH_CKPT_OP_NONE;
	e->err = 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(e, CH_CKPT_OP_OPEN, errno);
	for (;;) {
		ssize_t r = read(fd, scratch, scratch_bytes);
		if (r < 0) {
			int err = errno;
			if (err == EINTR)
				continue;
			close(fd);
			return fail(e, CH_CKPT_OP_READ, err);
		}
		if (r == 0)
			break;
		c = crc32(c, scratch, (uInt)r);
		got += (uint64_t)r;
	}
	close(fd);
	if (got != bytes)
		return fail(e, CH_CKPT_OP_SHORT, 0);
	if ((uint32_t)c != crc)
		return fail(e, CH_CKPT_OP_CRC, 0);
	return 0;
}

int ch_ckpt_copy_file(const char *src, const char *dst, unsigned char *scratch, size_t scratch_bytes,
		      uint64_t *copied, int *on_dst, struct ch_ckpt_ioerr *e)
{
	int in, out, err, rc;

	*copied = 0;
	*on_dst = 0;
	e->op = CH_CKPT_OP_NONE;
	e->err = 0;
	in = open(src, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return fail(e, CH_CKPT_OP_OPEN, errno);
	out = open(dst, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (out < 0) {
		err = errno;
		close(in);
		*on_dst = 1;
		return fail(e, CH_CKPT_OP_OPEN, err);
	}
	for (;;) {
		ssize_t r = read(in, scratch, scratch_bytes);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			rc = fail(e, CH_CKPT_OP_READ, errno);
			goto out;
		}
		if (r == 0)
			break;
		if ((err = write_all(out, scratch, (uint64_t)r, scratch_bytes, copied))) {
			*on_dst = 1;
			rc = fail(e, CH_CKPT_OP_WRITE, err);
			goto out;
		}
	}
	*on_dst = 1;
	rc = finish_durable(out, 1, e);
out:
	close(in);
	if (close(out) != 0 && rc == 0) {
		*on_dst = 1;
		rc = fail(e, CH_CKPT_OP_CLOSE, errno);
	}
	return rc;
}

int ch_ckpt_fsync_dir(const char *dir, struct ch_ckpt_ioerr *e)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	e->op = CH_CKPT_OP_NONE;
	e->err = 0;
	if (fd < 0)
		return fail(e, CH_CKPT_OP_OPEN, errno);
	/* some file systems refuse fsync on a directory (EINVAL): nothing to make durable */
	if (fsync(fd) != 0 && errno != EINVAL && errno != EROFS) {
		int err = errno;
		close(fd);
		return fail(e, CH_CKPT_OP_FSYNC, err);
	}
	close(fd);
	return 0;
}

int ch_ckpt_corrupt_byte(const char *path, uint64_t offset)
{
	unsigned char b;
	int fd = open(path, O_RDWR | O_CLOEXEC);

	if (fd < 0 || pread(fd, &b, 1, (off_t)offset) != 1) {
		ch_error("test hook: cannot read '%s' at %llu: %s", path, (unsigned long long)offset, strerror(errno));
		if (fd >= 0)
			close(fd);
		return CH_ERR_RUNTIME;
	}
	b = (unsigned char)~b;
	if (pwrite(fd, &b, 1, (off_t)offset) != 1 || fsync(fd) != 0) {
		ch_error("test hook: cannot write '%s' at %llu: %s", path, (unsigned long long)offset, strerror(errno));
		close(fd);
		return CH_ERR_RUNTIME;
	}
	(void)posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
	close(fd);
	return 0;
}

int ch_ckpt_dir_prepare(const char *opt, const char *dir, uint64_t need_bytes, const char *why_need,
			int *created, uint64_t *avail)
{
	struct stat st;
	struct statvfs vfs;
	struct dirent *de;
	DIR *d;
	char need[32], have[32];

	*created = 0;
	*avail = 0;
	if (stat(dir, &st) != 0) {
		if (errno != ENOENT)
			return ch_usage_error("cannot use %s '%s': %s", opt, dir, strerror(errno));
		if (mkdir(dir, 0755) == 0)
			*created = 1;
		else if (errno != EEXIST) /* another node's rank may have made it meanwhile */
			return ch_usage_error("cannot create %s '%s': %s (its parent directory must exist)", opt, dir,
					      strerror(errno));
		if (stat(dir, &st) != 0)
			return ch_usage_error("cannot use %s '%s': %s", opt, dir, strerror(errno));
	}
	if (!S_ISDIR(st.st_mode))
		return ch_usage_error("%s '%s' is not a directory", opt, dir);
	if (access(dir, W_OK | X_OK) != 0)
		return ch_usage_error("cannot write into %s '%s': %s", opt, dir, strerror(errno));
	d = opendir(dir);
	if (!d)
		return ch_usage_error("cannot read %s '%s': %s", opt, dir, strerror(errno));
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") || ch_ckpt_is_own_name(de->d_name) ||
		    !strcmp(de->d_name, CH_CKPT_LOCK_NAME))
			continue;
		ch_usage_error("%s '%s' is not empty: it holds '%s' (checkpoint_io writes only into an empty directory or one holding its own files; name a new directory)",
			       opt, dir, de->d_name);
		closedir(d);
		return CH_ERR_USAGE;
	}
	closedir(d);
	if (statvfs(dir, &vfs) != 0)
		return ch_usage_error("cannot query the free space of %s '%s': %s", opt, dir, strerror(errno));
	*avail = (uint64_t)vfs.f_bavail * (uint64_t)vfs.f_frsize;
	if (*avail < need_bytes) {
		snprintf(need, sizeof(need), "%llu", (unsigned long long)need_bytes);
		snprintf(have, sizeof(have), "%llu", (unsigned long long)*avail);
		return ch_usage_error("%s '%s' lacks space for the checkpoint: %s bytes needed, %s available%s",
				      opt, dir, need, have, why_need ? why_need : "");
	}
	return 0;
}

/* the run a lock file names: "HOST PID" of its world rank 0; 0 when read */
static int read_lock(const char *path, char *host, size_t nhost, long *pid)
{
	char buf[512], fmt[32];
	ssize_t n;
	int fd, i;

	/* its maker writes it right after creating it: a moment to do so */
	for (i = 0; i < 20; i++) {
		fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return -1;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n > 0 && buf[n - 1] == '\n') {
			buf[n] = '\0';
			snprintf(fmt, sizeof(fmt), "%%%zus %%ld", nhost - 1);
			return sscanf(buf, fmt, host, pid) == 2 ? 0 : -1;
		}
		usleep(100000);
	}
	return -1;
}

int ch_ckpt_lock(const char *opt, const char *dir, const char *run_host, long run_pid, int *made)
{
	char path[PATH_MAX], host[256], me[256] = "", line[320];
	long pid;
	int fd, tries;

	*made = 0;
	if (snprintf(path, sizeof(path), "%s/%s", dir, CH_CKPT_LOCK_NAME) >= (int)sizeof(path))
		return ch_usage_error("%s '%s': path too long", opt, dir);
	gethostname(me, sizeof(me) - 1);
	for (tries = 0; tries < 3; tries++) {
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
		if (fd >= 0) {
			int len = snprintf(line, sizeof(line), "%s %ld\n", run_host, run_pid);
			int ok = write(fd, line, (size_t)len) == len;
			close(fd);
			if (!ok) {
				unlink(path);
				return ch_usage_error("cannot write the lock file '%s': %s", path, strerror(errno));
			}
			*made = 1;
			return 0;
		}
		if (errno != EEXIST)
			return ch_usage_error("cannot create the lock file '%s' in %s '%s': %s", path, opt, dir, strerror(errno));
		if (read_lock(path, host, sizeof(host), &pid) != 0)
			return ch_usage_error("%s '%s' holds a lock file '%s' that is not checkpoint_io's (or is empty): remove it if no run uses the directory",
					      opt, dir, path);
		if (!strcmp(host, run_host) && pid == run_pid)
			return 0; /* this run's: another node of it made it (a shared --dir) */
		if (!strcmp(host, me) && kill((pid_t)pid, 0) != 0 && errno == ESRCH) {
			/* left by a run that is gone: this host can tell */
			ch_warn("%s '%s': removing the lock file of a run that is gone (host '%s', pid %ld)", opt, dir, host, pid);
			unlink(path);
			continue;
		}
		return ch_usage_error("%s '%s' is in use by another checkpoint_io run (its rank 0: host '%s', pid %ld; lock file '%s'): two runs into one directory delete each other's files; wait for it, name another directory, or remove the lock file if that run is gone",
				      opt, dir, host, pid, path);
	}
	return ch_usage_error("cannot take the lock file '%s' of %s '%s'", path, opt, dir);
}

void ch_ckpt_unlock(const char *dir)
{
	char path[PATH_MAX];
	if (snprintf(path, sizeof(path), "%s/%s", dir, CH_CKPT_LOCK_NAME) < (int)sizeof(path))
		unlink(path);
}

int ch_ckpt_dir_clean(const char *dir)
{
	char path[PATH_MAX];
	struct dirent *de;
	DIR *d = opendir(dir);
	int n = 0;

	if (!d) {
		ch_error("cannot read '%s': %s", dir, strerror(errno));
		return CH_ERR_RUNTIME;
	}
	while ((de = readdir(d))) {
		if (!ch_ckpt_is_own_name(de->d_name))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= (int)sizeof(path))
			continue;
		if (unlink(path) == 0)
			n++;
	}
	closedir(d);
	return n;
}

/* mountinfo escapes space, tab, newline and backslash as \ooo */
static void unescape(char *s)
{
	char *r = s, *w = s;
	while (*r) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '7' && r[2] >= '0' && r[2] <= '7' && r[3] >= '0' &&
		    r[3] <= '7') {
			*w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
			r += 4;
		} else {
			*w++ = *r++;
		}
	}
	*w = '\0';
}

static int is_prefix_dir(const char *mnt, const char *path)
{
	size_t n = strlen(mnt);
	if (!strcmp(mnt, "/"))
		return 1;
	return !strncmp(mnt, path, n) && (path[n] == '/' || path[n] == '\0');
}

int ch_ckpt_mount_of(const char *path, struct ch_ckpt_mount *m)
{
	char real[PATH_MAX], line[4096];
	size_t best = 0;
	int found = 0;
	FILE *f;

	snprintf(m->point, sizeof(m->point), "?");
	snprintf(m->fstype, sizeof(m->fstype), "?");
	snprintf(m->source, sizeof(m->source), "?");
	if (!realpath(path, real))
		return CH_ERR_RUNTIME;
	f = fopen("/proc/self/mountinfo", "r");
	if (!f)
		return CH_ERR_RUNTIME;
	/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER */
	while (fgets(line, sizeof(line), f)) {
		char *fields[8], *save = NULL, *tok, *dash;
		int nf = 0;
		size_t len;
		dash = strstr(line, " - ");
		if (!dash)
			continue;
		*dash = '\0';
		for (tok = strtok_r(line, " ", &save); tok && nf < 8; tok = strtok_r(NULL, " ", &save))
			fields[nf++] = tok;
		if (nf < 5)
			continue;
		unescape(fields[4]);
		len = strlen(fields[4]);
		if (!is_prefix_dir(fields[4], real) || (found && len < best))
			continue;
		best = len;
		found = 1;
		snprintf(m->point, sizeof(m->point), "%s", fields[4]);
		save = NULL;
		tok = strtok_r(dash + 3, " \n", &save);
		snprintf(m->fstype, sizeof(m->fstype), "%s", tok ? tok : "?");
		tok = strtok_r(NULL, " \n", &save);
		if (tok)
			unescape(tok);
		snprintf(m->source, sizeof(m->source), "%s", tok ? tok : "?");
	}
	fclose(f);
	return found ? 0 : CH_ERR_RUNTIME;
}
