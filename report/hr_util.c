#include "report/hr_util.h"
#include "base/ch_common.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
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

long hr_utf8_next(const char *s, size_t n, size_t *len)
{
	const unsigned char *u = (const unsigned char *)s;
	long c;
	size_t k, need;

	*len = 1;
	if (n == 0)
		return -1;
	if (u[0] < 0x80)
		return u[0];
	if (u[0] >= 0xc2 && u[0] <= 0xdf) {
		need = 1;
		c = u[0] & 0x1f;
	} else if (u[0] >= 0xe0 && u[0] <= 0xef) {
		need = 2;
		c = u[0] & 0x0f;
	} else if (u[0] >= 0xf0 && u[0] <= 0xf4) {
		need = 3;
		c = u[0] & 0x07;
	} else {
		return -1;
	}
	if (n < need + 1)
		return -1;
	for (k = 1; k <= need; k++) {
		if ((u[k] & 0xc0) != 0x80)
			return -1;
		c = (c << 6) | (u[k] & 0x3f);
	}
	/* overlong forms, surrogates and code points past U+10FFFF are not UTF-8 */
	if ((need == 2 && c < 0x800) || (need == 3 && (c < 0x10000 || c > 0x10ffff)) ||
	    (c >= 0xd800 && c <= 0xdfff))
		return -1;
	*len = need + 1;
	return c;
}

void hr_utf8_copy(char *dst, size_t n, const char *src)
{
	/* no more of @src than can fit: every byte read writes one or more */
	size_t i = 0, o = 0, len, m = src ? strnlen(src, n + 4) : 0;
	if (!n)
		return;
	while (i < m) {
		long c = hr_utf8_next(src + i, m - i, &len);
		if (c < 0) {
			if (o + 4 >= n)
				break;
			snprintf(dst + o, 5, "\\x%02x", (unsigned char)src[i]);
			o += 4;
			i++;
		} else {
			if (o + len >= n)
				break;
			memcpy(dst + o, src + i, len);
			o += len;
			i += len;
		}
	}
	dst[o] = '\0';
}

char *hr_utf8_text(const char *src)
{
	size_t n;
	char *s;
	if (!src)
		return NULL;
	n = 4 * strlen(src) + 1;
	s = malloc(n);
	if (s)
		hr_utf8_copy(s, n, src);
	return s;
}

int hr_char_shown_escaped(long c)
{
	return c < 0x20 || c == 0x7f || (c >= 0x80 && c <= 0x9f) ||      /* C0, DEL, C1 */
	       c == 0x061c || c == 0x200e || c == 0x200f ||               /* bidi marks */
	       (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069) || /* bidi overrides */
	       c == 0x2028 || c == 0x2029;                                 /* line, paragraph separators */
}

int hr_buf_term(struct hr_buf *b, const char *s)
{
	size_t n = s ? strlen(s) : 0, i = 0, len;
	int rc = 0;

	while (i < n && !rc) {
		size_t j = i;
		long c;
		/* the longest run of characters shown as they are, in one append */
		while (j < n && (c = hr_utf8_next(s + j, n - j, &len)) >= 0 && c != '\\' && !hr_char_shown_escaped(c))
			j += len;
		if (j > i)
			rc = hr_buf_append(b, s + i, j - i);
		if (j >= n || rc)
			break;
		c = hr_utf8_next(s + j, n - j, &len);
		if (c == '\\')
			rc = hr_buf_puts(b, "\\\\");
		else if (c == '\n')
			rc = hr_buf_puts(b, "\\n");
		else if (c == '\t')
			rc = hr_buf_puts(b, "\\t");
		else if (c == '\r')
			rc = hr_buf_puts(b, "\\r");
		else if (c == 0x1b)
			rc = hr_buf_puts(b, "\\e");
		else if (c < 0 || c < 0x20 || c == 0x7f) /* an invalid byte, C0, DEL */
			rc = hr_buf_printf(b, "\\x%02x", (unsigned char)s[j]);
		else
			rc = hr_buf_printf(b, "\\u%04lx", c);
		i = j + len;
	}
	return rc;
}

const char *hr_term(const char *s)
{
	/* a ring of buffers: several may be arguments of one printf */
	static __thread struct hr_buf ring[8];
	static __thread unsigned next;
	struct hr_buf *b;

	if (!s)
		return NULL;
	b = &ring[next++ % 8];
	b->len = 0;
	b->oom = 0;
	if (b->s)
		b->s[0] = '\0';
	if (hr_buf_term(b, s) || !b->s)
		return "?";
	return b->s;
}

/* @b's text from @from on, escaped for a format by @one (a character:
 * its replacement, or NULL to keep it) in place of what it was */
static int escape_tail(struct hr_buf *b, size_t from, const char *(*one)(char c))
{
	struct hr_buf t = { 0 };
	size_t i;
	int rc = 0;

	if (b->oom)
		return -1;
	for (i = from; i < b->len && !rc; i++) {
		const char *r = one(b->s[i]);
		rc = r ? hr_buf_puts(&t, r) : hr_buf_append(&t, b->s + i, 1);
	}
	if (rc) {
		hr_buf_release(&t);
		b->oom = 1;
		return -1;
	}
	b->len = from;
	if (b->s)
		b->s[from] = '\0';
	rc = t.len ? hr_buf_append(b, t.s, t.len) : 0;
	hr_buf_release(&t);
	return rc;
}

static const char *html_one(char c)
{
	switch (c) {
	case '&': return "&amp;";
	case '<': return "&lt;";
	case '>': return "&gt;";
	case '"': return "&quot;";
	case '\'': return "&#39;";
	default: return NULL;
	}
}

static const char *md_one(char c)
{
	switch (c) {
	case '&': return "&amp;";
	case '<': return "&lt;";
	case '>': return "&gt;";
	case '\\': return "\\\\";
	case '|': return "\\|";
	case '`': return "\\`";
	case '[': return "\\[";
	case ']': return "\\]";
	default: return NULL;
	}
}

static const char *prom_one(char c)
{
	return c == '\\' ? "\\\\" : c == '"' ? "\\\"" : c == '\n' ? "\\n" : NULL;
}

int hr_buf_html(struct hr_buf *b, const char *s)
{
	size_t from = b->len;
	return hr_buf_term(b, s) || escape_tail(b, from, html_one);
}

int hr_buf_md(struct hr_buf *b, const char *s)
{
	size_t from = b->len;
	return hr_buf_term(b, s) || escape_tail(b, from, md_one);
}

int hr_buf_prom_label(struct hr_buf *b, const char *s)
{
	size_t from = b->len;
	return hr_buf_term(b, s) || escape_tail(b, from, prom_one);
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
		/* one byte more than the file: its end is seen without growing */
		if (st.st_size > 0)
			cap = (size_t)st.st_size + 2 + HR_READ_FILE_PAD;
	}
	data = malloc(cap);
	if (!data) {
		snprintf(err, errn, "out of memory");
		fclose(f);
		return CH_ERR_RUNTIME;
	}
	for (;;) {
		if (n + 1 + HR_READ_FILE_PAD >= cap) {
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
				return CH_ERR_RUNTIME;
			}
			data = p;
			cap *= 2;
		}
		r = fread(data + n, 1, cap - n - 1 - HR_READ_FILE_PAD, f);
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
	memset(data + n, 0, 1 + HR_READ_FILE_PAD);
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
