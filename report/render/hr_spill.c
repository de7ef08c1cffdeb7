/*
 * hr_spill.c - text that grows with the fleet, kept in an unnamed temporary
 * file (hr_spill.h).
 */
#include "report/render/hr_spill.h"
#include "base/ch_common.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* the directory of the spill's temporary files: $TMPDIR, else /tmp */
static const char *spill_dir(void)
{
	const char *d = getenv("TMPDIR");
	return d && *d ? d : "/tmp";
}

/* an unnamed file in spill_dir(), open for reading and writing */
static FILE *spill_open(void)
{
	const char *dir = spill_dir();
	char path[4200];
	FILE *f;
	int fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0 && errno != ENOENT && errno != ENOTDIR && errno != EACCES && errno != ENOSPC && errno != EROFS) {
		/* a file system without O_TMPFILE: a new name, removed at once */
		if (snprintf(path, sizeof(path), "%s/health_report.XXXXXX", dir) >= (int)sizeof(path)) {
			errno = ENAMETOOLONG;
		} else if ((fd = mkstemp(path)) >= 0) {
			unlink(path);
			fcntl(fd, F_SETFD, FD_CLOEXEC);
		}
	}
	if (fd < 0)
		return NULL;
	if (!(f = fdopen(fd, "w+"))) {
		int e = errno;
		close(fd);
		errno = e;
	}
	return f;
}

static void spill_error(const char *what, int e)
{
	ch_error("cannot %s a temporary file in '%s' (health.prom's samples; $TMPDIR, else /tmp): %s", what,
		 spill_dir(), strerror(e ? e : EIO));
}

int hr_spill_add(struct hr_spill *s, struct hr_buf *b)
{
	int was = s->err;
	if (b->oom)
		s->err = 1;
	if (b->len && !s->err) {
		errno = 0;
		if (!s->f && !(s->f = spill_open())) {
			spill_error("create", errno);
			s->err = 2;
		} else if (fwrite(b->s, 1, b->len, s->f) != b->len) {
			spill_error("write", errno);
			s->err = 2;
		} else {
			s->len += b->len;
		}
	}
	b->len = 0;
	b->oom = 0;
	if (b->s)
		b->s[0] = '\0';
	if (s->err == 1 && !was)
		ch_error("out of memory while rendering health.prom");
	return s->err ? CH_ERR_RUNTIME : 0;
}

int hr_spill_copy(const struct hr_spill *s, FILE *out)
{
	char buf[65536];
	size_t n;
	if (s->err)
		return CH_ERR_RUNTIME;
	if (!s->f)
		return 0;
	errno = 0;
	if (fflush(s->f) || fseek(s->f, 0, SEEK_SET)) {
		spill_error("write", errno);
		return CH_ERR_RUNTIME;
	}
	while ((n = fread(buf, 1, sizeof(buf), s->f)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			return CH_ERR_RUNTIME;
	if (ferror(s->f)) {
		spill_error("read back", errno);
		return CH_ERR_RUNTIME;
	}
	return 0;
}

void hr_spill_release(struct hr_spill *s)
{
	if (s->f)
		fclose(s->f);
	memset(s, 0, sizeof(*s));
}
