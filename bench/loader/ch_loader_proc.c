/*
 * ch_loader_proc.c - parsers for the /proc files loader_contention reads:
 * /proc/stat (host utilisation, steal), /proc/pressure/cpu (PSI) and the
 * per-thread schedstat (run-queue delay). They take text, so they are
 * tested on known inputs.
 */
#include "bench/loader/ch_loader.h"
#include "base/ch_common.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

long ch_lc_read_text(const char *path, char *buf, size_t n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len = 0;

	if (fd < 0 || n == 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while (len + 1 < n) {
		ssize_t r = read(fd, buf + len, n - 1 - len);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			close(fd);
			return -1;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	buf[len] = '\0';
	close(fd);
	return (long)len;
}

int ch_lc_parse_proc_stat(const char *text, struct ch_lc_cpu_times *out)
{
	const char *p = text;
	unsigned long long v[8] = { 0 };
	int n;

	memset(out, 0, sizeof(*out));
	while (p && *p) {
		if (!strncmp(p, "cpu ", 4))
			break;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	if (!p || !*p)
		return CH_ERR_RUNTIME;
	n = sscanf(p + 4, "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
		   &v[3], &v[4], &v[5], &v[6], &v[7]);
	if (n < 4)
		return CH_ERR_RUNTIME;
	out->user = v[0];
	out->nice = v[1];
	out->system = v[2];
	out->idle = v[3];
	out->iowait = v[4];
	out->irq = v[5];
	out->softirq = v[6];
	out->steal = v[7];
	return 0;
}

static uint64_t total(const struct ch_lc_cpu_times *t)
{
	return t->user + t->nice + t->system + t->idle + t->iowait + t->irq + t->softirq + t->steal;
}

void ch_lc_cpu_util(const struct ch_lc_cpu_times *a, const struct ch_lc_cpu_times *b,
		    double *util, double *steal)
{
	uint64_t ta = total(a), tb = total(b);
	double dt, didle;

	*util = 0;
	*steal = 0;
	if (tb <= ta)
		return;
	dt = (double)(tb - ta);
	didle = (double)(b->idle - a->idle) + (double)(b->iowait - a->iowait);
	if (didle < 0) /* iowait may go backwards (proc(5)) */
		didle = 0;
	*util = 1.0 - didle / dt;
	if (*util < 0)
		*util = 0;
	if (*util > 1)
		*util = 1;
	*steal = (double)(b->steal - a->steal) / dt;
	if (*steal < 0 || b->steal < a->steal)
		*steal = 0;
}

int ch_lc_parse_psi(const char *text, double *avg10, uint64_t *total_us)
{
	const char *p = text;
	double a10, a60, a300;
	unsigned long long t;

	while (p && *p) {
		if (!strncmp(p, "some ", 5))
			break;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	if (!p || !*p)
		return CH_ERR_RUNTIME;
	if (sscanf(p, "some avg10=%lf avg60=%lf avg300=%lf total=%llu", &a10, &a60, &a300, &t) != 4)
		return CH_ERR_RUNTIME;
	*avg10 = a10;
	*total_us = t;
	return 0;
}

int ch_lc_parse_schedstat(const char *text, uint64_t *run_ns, uint64_t *wait_ns,
			  uint64_t *slices)
{
	unsigned long long a, b, c;
	char extra;
	if (sscanf(text, "%llu %llu %llu %c", &a, &b, &c, &extra) != 3)
		return CH_ERR_RUNTIME;
	*run_ns = a;
	*wait_ns = b;
	*slices = c;
	return 0;
}
