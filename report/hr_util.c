#include "report/hr_util.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int grow(struct hr_buf *b, size_t need)
{
	size_t cap;
	char *p;
	if (b->oom)
		return -1;
	if (b->len + need + 1 <= b->cap)
		return 0;
	cap = b->cap ? b->cap : 256;
	while (cap < b->len + need + 1)
		cap *= 2;
	p = realloc(b->s, cap);
	if (!p) {
		b->oom = 1;
		return -1;
	}
	b->s = p;
	b->cap = cap;
	return 0;
}

int hr_buf_append(struct hr_buf *b, const char *data, size_t n)
{
	if (grow(b, n))
		return -1;
	memcpy(b->s + b->len, data, n);
	b->len += n;
	b->s[b->len] = '\0';
	return 0;
}

int hr_buf_puts(struct hr_buf *b, const char *s)
{
	return s ? hr_buf_append(b, s, strlen(s)) : 0;
}

int hr_buf_printf(struct hr_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;
	char small[256];

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		return -1;
	if ((size_t)n < sizeof(small))
		return hr_buf_append(b, small, (size_t)n);
	if (grow(b, (size_t)n))
		return -1;
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

void hr_buf_release(struct hr_buf *b)
{
	free(b->s);
	memset(b, 0, sizeof(*b));
}

int hr_buf_html(struct hr_buf *b, const char *s)
{
	int rc = 0;
	for (; s && *s && !rc; s++) {
		switch (*s) {
		case '&': rc = hr_buf_puts(b, "&amp;"); break;
		case '<': rc = hr_buf_puts(b, "&lt;"); break;
		case '>': rc = hr_buf_puts(b, "&gt;"); break;
		case '"': rc = hr_buf_puts(b, "&quot;"); break;
		case '\'': rc = hr_buf_puts(b, "&#39;"); break;
		default: rc = hr_buf_append(b, s, 1);
		}
	}
	return rc;
}

int hr_buf_md(struct hr_buf *b, const char *s)
{
	int rc = 0;
	for (; s && *s && !rc; s++) {
		if (*s == '|' || *s == '\\')
			rc = hr_buf_append(b, "\\", 1) || hr_buf_append(b, s, 1);
		else if (*s == '\n' || *s == '\r')
			rc = hr_buf_append(b, " ", 1);
		else
			rc = hr_buf_append(b, s, 1);
	}
	return rc;
}

int hr_buf_prom_label(struct hr_buf *b, const char *s)
{
	int rc = 0;
	for (; s && *s && !rc; s++) {
		if (*s == '\\')
			rc = hr_buf_puts(b, "\\\\");
		else if (*s == '"')
			rc = hr_buf_puts(b, "\\\"");
		else if (*s == '\n')
			rc = hr_buf_puts(b, "\\n");
		else
			rc = hr_buf_append(b, s, 1);
	}
	return rc;
}

int hr_read_file(const char *path, size_t max_bytes, char **out, size_t *len,
		 char *err, size_t errn)
{
	FILE *f;
	struct stat st;
	char *data;
	size_t cap = 65536, n = 0, r;
	int fd;

	*out = NULL;
	/* O_NONBLOCK: opening a named pipe must not wait for a writer */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errn, "%s", strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) != 0) {
		snprintf(err, errn, "%s", strerror(errno));
		close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errn, "%s", S_ISDIR(st.st_mode) ? "is a directory" :
			 S_ISFIFO(st.st_mode) ? "a named pipe, not a regular file" : "not a regular file");
		close(fd);
		return -1;
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0 || !(f = fdopen(fd, "rb"))) {
		snprintf(err, errn, "%s", strerror(errno));
		close(fd);
		return -1;
	}
	{
		if (max_bytes && (uintmax_t)st.st_size > max_bytes) {
			snprintf(err, errn, "file is larger than %zu bytes", max_bytes);
			fclose(f);
			return -1;
		}
		if (st.st_size > 0)
			cap = (size_t)st.st_size + 1;
	}
	data = malloc(cap);
	if (!data) {
		snprintf(err, errn, "out of memory");
		fclose(f);
		return -1;
	}
	for (;;) {
		if (n + 1 >= cap) {
			char *p;
			if (max_bytes && n >= max_bytes) {
				snprintf(err, errn, "file is larger than %zu bytes", max_bytes);
				free(data);
				fclose(f);
				return -1;
			}
			p = realloc(data, cap * 2);
			if (!p) {
				snprintf(err, errn, "out of memory");
				free(data);
				fclose(f);
				return -1;
			}
			data = p;
			cap *= 2;
		}
		r = fread(data + n, 1, cap - n - 1, f);
		n += r;
		if (r == 0)
			break;
	}
	if (ferror(f)) {
		snprintf(err, errn, "read error: %s", strerror(errno));
		free(data);
		fclose(f);
		return -1;
	}
	fclose(f);
	data[n] = '\0';
	*out = data;
	if (len)
		*len = n;
	return 0;
}

int hr_parse_utc(const char *s, time_t *out)
{
	struct tm tm;
	const char *p;
	if (!s)
		return -1;
	memset(&tm, 0, sizeof(tm));
	p = strptime(s, "%Y-%m-%dT%H:%M:%S", &tm);
	if (!p)
		return -1;
	if (*p == '.') {
		p++;
		while (*p >= '0' && *p <= '9')
			p++;
	}
	if (strcmp(p, "Z") != 0)
		return -1;
	*out = timegm(&tm);
	return 0;
}

char *hr_fmt_num(double v, char *buf, size_t n)
{
	double a = fabs(v);
	if (isnan(v))
		snprintf(buf, n, "n/a");
	else if (a >= 100 || a == 0)
		snprintf(buf, n, "%.0f", v);
	else if (a >= 10)
		snprintf(buf, n, "%.1f", v);
	else if (a >= 1)
		snprintf(buf, n, "%.2f", v);
	else if (a >= 0.001)
		snprintf(buf, n, "%.3g", v);
	else
		snprintf(buf, n, "%.2e", v);
	return buf;
}

char *hr_fmt_bytes(double bytes, char *buf, size_t n)
{
	static const char suffix[] = { 'K', 'M', 'G', 'T' };
	uint64_t b;
	int i = -1;
	if (!isfinite(bytes)) {
		snprintf(buf, n, "n/a");
		return buf;
	}
	if (bytes < 0 || bytes > 1.8e19) {
		snprintf(buf, n, "%g", bytes);
		return buf;
	}
	b = (uint64_t)bytes;
	while (b >= 1024 && b % 1024 == 0 && i < 3) {
		b /= 1024;
		i++;
	}
	if (i < 0)
		snprintf(buf, n, "%llu", (unsigned long long)b);
	else
		snprintf(buf, n, "%llu%c", (unsigned long long)b, suffix[i]);
	return buf;
}

char *hr_strdup(const char *s)
{
	return s ? strdup(s) : NULL;
}

int hr_streq(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return strcmp(a, b) == 0;
}

double hr_jnum(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

const char *hr_jstr(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

long long hr_jint(const json_t *o, const char *k, long long dflt)
{
	const json_t *v = json_object_get(o, k);
	if (json_is_integer(v))
		return (long long)json_integer_value(v);
	if (json_is_real(v))
		return (long long)json_real_value(v);
	return dflt;
}
