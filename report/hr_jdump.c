/*
 * hr_jdump.c - jansson's indented JSON text, written faster (hr_jdump.h).
 * The layout follows jansson 2.14's dump.c: "[]" and "{}" when empty, else
 * the members one to a line at 2 spaces a level, "key": value, the closing
 * bracket on a line of its own; strings escaped as jansson escapes them
 * (backslash, quote and the control characters below 0x20 only; \b \f \n
 * \r \t by name, the rest \u00XX) and refused when not valid UTF-8.
 */
#include "report/hr_jdump.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define JD_BUF (64u << 10)

struct jd {
	FILE *f;
	size_t n;
	int err;
	char buf[JD_BUF];
};

static void jd_flush(struct jd *o)
{
	if (o->n && !o->err && fwrite(o->buf, 1, o->n, o->f) != o->n)
		o->err = 1;
	o->n = 0;
}

static void jd_put(struct jd *o, const char *s, size_t n)
{
	if (o->n + n > JD_BUF) {
		jd_flush(o);
		if (n > JD_BUF) {
			if (!o->err && fwrite(s, 1, n, o->f) != n)
				o->err = 1;
			return;
		}
	}
	memcpy(o->buf + o->n, s, n);
	o->n += n;
}

/* a newline and 2 x @level spaces */
static void jd_indent(struct jd *o, int level)
{
	size_t n = 1 + 2 * (size_t)level;
	if (o->n + n > JD_BUF)
		jd_flush(o);
	if (n > JD_BUF) {
		o->err = 1;
		return;
	}
	o->buf[o->n] = '\n';
	memset(o->buf + o->n + 1, ' ', n - 1);
	o->n += n;
}

/* ---- reals: "%.10g" and jansson's changes to it */

static const long double p10[] = {
	1e0L, 1e1L, 1e2L, 1e3L, 1e4L, 1e5L, 1e6L, 1e7L, 1e8L, 1e9L, 1e10L, 1e11L, 1e12L, 1e13L,
	1e14L, 1e15L, 1e16L, 1e17L, 1e18L, 1e19L, 1e20L, 1e21L, 1e22L, 1e23L, 1e24L, 1e25L, 1e26L, 1e27L
};
#define P10_MAX 27 /* 10^k is exact in a long double (64-bit significand) up to here */

/* jansson's changes to "%.10g"'s text in @buf (length @len) */
static int real_fixup(char *buf, int len)
{
	char *e = strchr(buf, 'e'), *start, *end;
	if (!e && !strchr(buf, '.')) {
		memcpy(buf + len, ".0", 3);
		return len + 2;
	}
	if (!e)
		return len;
	start = e + 1;
	end = start + 1;
	if (*start == '-')
		start++;
	while (*end == '0')
		end++;
	if (end != start) {
		memmove(start, end, (size_t)(buf + len - end) + 1);
		len -= (int)(end - start);
	}
	return len;
}

/* The 10 significant digits of @a (> 0, finite) rounded to nearest, as
 * @digits in [1e9, 1e10) and the decimal exponent of the first; 0, or -1
 * where that is not certain in long double arithmetic (the value is
 * within 1e-6 of a tie, or too small or large for exact powers of 10). */
static int ten_digits(double a, uint64_t *digits, int *exp10)
{
	int e = (int)floor(log10(a)), k, tries;
	long double s = 0, fl, fr;

	for (tries = 0; tries < 3; tries++) {
		k = 9 - e;
		if (k > P10_MAX || k < -P10_MAX)
			return -1;
		s = k >= 0 ? (long double)a * p10[k] : (long double)a / p10[-k];
		if (s < 1e9L)
			e--;
		else if (s >= 1e10L)
			e++;
		else
			break;
	}
	if (tries == 3)
		return -1;
	fl = floorl(s);
	fr = s - fl;
	/* the relative error of s is at most 2^-64: under 1e-9 here */
	if (fabsl(fr - 0.5L) < 1e-6L || s - 1e9L < 1e-6L || 1e10L - s < 1e-6L)
		return -1;
	*digits = (uint64_t)fl + (fr > 0.5L);
	if (*digits == 10000000000ULL) {
		*digits = 1000000000ULL;
		e++;
	}
	*exp10 = e;
	return 0;
}

int hr_fmt_g10(char *buf, double v)
{
	char d[11], *p = buf;
	uint64_t digits;
	int x, i, last;

	if (v == 0) {
		strcpy(buf, signbit(v) ? "-0" : "0");
		return signbit(v) ? 2 : 1;
	}
	if (!isfinite(v) || ten_digits(fabs(v), &digits, &x))
		return snprintf(buf, 32, "%.10g", v);
	for (i = 9; i >= 0; i--, digits /= 10)
		d[i] = (char)('0' + digits % 10);
	for (last = 9; last > 0 && d[last] == '0'; last--)
		;
	if (v < 0)
		*p++ = '-';
	if (x < -4 || x >= 10) {
		/* d.ddde-XX, the trailing zeros of the fraction dropped */
		*p++ = d[0];
		if (last > 0) {
			*p++ = '.';
			memcpy(p, d + 1, (size_t)last);
			p += last;
		}
		p += sprintf(p, "e%c%02d", x < 0 ? '-' : '+', x < 0 ? -x : x);
		return (int)(p - buf);
	}
	if (x >= 0) {
		memcpy(p, d, (size_t)x + 1);
		p += x + 1;
		if (last > x) {
			*p++ = '.';
			memcpy(p, d + x + 1, (size_t)(last - x));
			p += last - x;
		}
	} else {
		*p++ = '0';
		*p++ = '.';
		for (i = x + 1; i < 0; i++)
			*p++ = '0';
		memcpy(p, d, (size_t)last + 1);
		p += last + 1;
	}
	*p = '\0';
	return (int)(p - buf);
}

int hr_jdump_real(char *buf, double v)
{
	if (!isfinite(v))
		return -1;
	return real_fixup(buf, hr_fmt_g10(buf, v));
}

/* ---- strings */

/* the length of the valid UTF-8 sequence at @s (< @lim) as jansson's
 * utf8_iterate() accepts it, 0 when invalid */
static size_t utf8_len(const unsigned char *s, const unsigned char *lim)
{
	unsigned c = s[0];
	size_t n, i;
	uint32_t cp;
	if (c < 0x80)
		return 1;
	if (c < 0xC2 || c > 0xF4)
		return 0;
	n = c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
	if ((size_t)(lim - s) < n)
		return 0;
	cp = c & (n == 2 ? 0x1F : n == 3 ? 0x0F : 0x07);
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3F);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10FFFF ||
	    (cp >= 0xD800 && cp <= 0xDFFF))
		return 0;
	return n;
}

static void jd_string(struct jd *o, const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str, *lim = s + len, *run = s;
	jd_put(o, "\"", 1);
	while (s < lim) {
		unsigned c = *s;
		char esc[8];
		size_t n;
		if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
			s++;
			continue;
		}
		if (c >= 0x80) {
			if (!(n = utf8_len(s, lim))) {
				o->err = 1;
				return;
			}
			s += n;
			continue;
		}
		jd_put(o, (const char *)run, (size_t)(s - run));
		switch (c) {
		case '\\': jd_put(o, "\\\\", 2); break;
		case '"': jd_put(o, "\\\"", 2); break;
		case '\b': jd_put(o, "\\b", 2); break;
		case '\f': jd_put(o, "\\f", 2); break;
		case '\n': jd_put(o, "\\n", 2); break;
		case '\r': jd_put(o, "\\r", 2); break;
		case '\t': jd_put(o, "\\t", 2); break;
		default:
			snprintf(esc, sizeof(esc), "\\u%04X", c);
			jd_put(o, esc, 6);
		}
		run = ++s;
	}
	jd_put(o, (const char *)run, (size_t)(s - run));
	jd_put(o, "\"", 1);
}

/* ---- values */

static void jd_value(struct jd *o, const json_t *v, int level);

static void jd_array(struct jd *o, const json_t *v, int level)
{
	size_t i, n = json_array_size(v);
	if (!n) {
		jd_put(o, "[]", 2);
		return;
	}
	jd_put(o, "[", 1);
	jd_indent(o, level + 1);
	for (i = 0; i < n && !o->err; i++) {
		jd_value(o, json_array_get(v, i), level + 1);
		if (i + 1 < n) {
			jd_put(o, ",", 1);
			jd_indent(o, level + 1);
		} else {
			jd_indent(o, level);
		}
	}
	jd_put(o, "]", 1);
}

static void jd_object(struct jd *o, const json_t *v, int level)
{
	void *it = json_object_iter((json_t *)v);
	if (!it) {
		jd_put(o, "{}", 2);
		return;
	}
	jd_put(o, "{", 1);
	jd_indent(o, level + 1);
	while (it && !o->err) {
		void *next = json_object_iter_next((json_t *)v, it);
		jd_string(o, json_object_iter_key(it), json_object_iter_key_len(it));
		jd_put(o, ": ", 2);
		jd_value(o, json_object_iter_value(it), level + 1);
		if (next) {
			jd_put(o, ",", 1);
			jd_indent(o, level + 1);
		} else {
			jd_indent(o, level);
		}
		it = next;
	}
	jd_put(o, "}", 1);
}

static void jd_value(struct jd *o, const json_t *v, int level)
{
	char num[48];
	int n;
	if (o->err)
		return;
	switch (json_typeof(v)) {
	case JSON_OBJECT: jd_object(o, v, level); break;
	case JSON_ARRAY: jd_array(o, v, level); break;
	case JSON_STRING: jd_string(o, json_string_value(v), json_string_length(v)); break;
	case JSON_INTEGER:
		n = snprintf(num, sizeof(num), "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		jd_put(o, num, (size_t)n);
		break;
	case JSON_REAL:
		if ((n = hr_jdump_real(num, json_real_value(v))) < 0)
			o->err = 1;
		else
			jd_put(o, num, (size_t)n);
		break;
	case JSON_TRUE: jd_put(o, "true", 4); break;
	case JSON_FALSE: jd_put(o, "false", 5); break;
	case JSON_NULL: jd_put(o, "null", 4); break;
	default: o->err = 1;
	}
}

int hr_jdump(FILE *f, const json_t *v, int depth)
{
	static __thread struct jd o; /* 64 KiB: not on the stack */
	if (!v || depth < 0)
		return -1;
	o.f = f;
	o.n = 0;
	o.err = 0;
	jd_value(&o, v, depth);
	jd_flush(&o);
	return o.err ? -1 : 0;
}
