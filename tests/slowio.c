/*
 * slowio.c - a slow file system for tests, as an LD_PRELOAD shim: write()
 * and fsync() on files whose path contains $CH_SLOWIO_PATH sleep first.
 *
 *   CH_SLOWIO_PATH=/tmp/t/slow         the part of the path that is slow
 *   CH_SLOWIO_WRITE_MS=5               milliseconds before each write() (default 0)
 *   CH_SLOWIO_FSYNC_MS=200             milliseconds before each fsync() (default 0)
 *   CH_SLOWIO_NO_TMPFILE=1             open(O_TMPFILE) fails with EOPNOTSUPP, as
 *                                      on a file system without it (NFS)
 *   CH_SLOWIO_AVAIL_BYTES=N            statvfs() of a path containing
 *                                      $CH_SLOWIO_PATH reports N bytes available
 *
 * Built by `make test` as $(B)/tests/libslowio.so; used by
 * tests/cli/checkpoint_io.sh (staged beats synchronous on a slow target; a
 * hung fsync is bounded by --timeout) and tests/cli/reliability.sh (the
 * atomic write's named temporary). Not part of any binary.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/statvfs.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int slow_fd(int fd)
{
	const char *want = getenv("CH_SLOWIO_PATH");
	char link[64], path[4096];
	ssize_t n;

	if (!want || !*want)
		return 0;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0)
		return 0;
	path[n] = '\0';
	return strstr(path, want) != NULL;
}

static void pause_ms(const char *var)
{
	const char *v = getenv(var);
	long ms = v ? strtol(v, NULL, 10) : 0;
	struct timespec ts;
	int saved = errno;

	if (ms <= 0)
		return;
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
	errno = saved;
}

ssize_t write(int fd, const void *buf, size_t n)
{
	static ssize_t (*real)(int, const void *, size_t);
	if (!real)
		real = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
	if (fd > 2 && slow_fd(fd))
		pause_ms("CH_SLOWIO_WRITE_MS");
	return real(fd, buf, n);
}

int fsync(int fd)
{
	static int (*real)(int);
	if (!real)
		real = (int (*)(int))dlsym(RTLD_NEXT, "fsync");
	if (slow_fd(fd))
		pause_ms("CH_SLOWIO_FSYNC_MS");
	return real(fd);
}

/* open() and open64() (the same function in glibc on 64-bit, both names
 * kept): O_TMPFILE refused when $CH_SLOWIO_NO_TMPFILE is set */
static int open_as(const char *name, const char *path, int flags, va_list ap)
{
	int (*real)(const char *, int, ...) = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, name);
	mode_t mode = (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? va_arg(ap, mode_t) : 0;
	const char *no = getenv("CH_SLOWIO_NO_TMPFILE");

	if ((flags & O_TMPFILE) == O_TMPFILE && no && *no == '1') {
		errno = EOPNOTSUPP;
		return -1;
	}
	return real(path, flags, mode);
}

int open(const char *path, int flags, ...)
{
	va_list ap;
	int rc;
	va_start(ap, flags);
	rc = open_as("open", path, flags, ap);
	va_end(ap);
	return rc;
}

int open64(const char *path, int flags, ...)
{
	va_list ap;
	int rc;
	va_start(ap, flags);
	rc = open_as("open64", path, flags, ap);
	va_end(ap);
	return rc;
}

/* statvfs(): a small file system under $CH_SLOWIO_PATH when $CH_SLOWIO_AVAIL_BYTES is set */
int statvfs(const char *path, struct statvfs *buf)
{
	static int (*real)(const char *, struct statvfs *);
	const char *want = getenv("CH_SLOWIO_PATH"), *avail = getenv("CH_SLOWIO_AVAIL_BYTES");
	int rc;

	if (!real)
		real = (int (*)(const char *, struct statvfs *))dlsym(RTLD_NEXT, "statvfs");
	rc = real(path, buf);
	if (rc == 0 && want && *want && avail && strstr(path, want) && buf->f_frsize)
		buf->f_bavail = (fsblkcnt_t)(strtoull(avail, NULL, 10) / buf->f_frsize);
	return rc;
}
