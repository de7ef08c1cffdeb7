/*
 * profile.json's writer (report/hr_jdump.h) against jansson's json_dumpf()
 * with JSON_INDENT(2) | JSON_REAL_PRECISION(10) | JSON_ENCODE_ANY: the same
 * text byte for byte on nested documents (empty and one-member containers,
 * escapes and control characters, multi-byte UTF-8, keys with a NUL,
 * integers at the ends of the 64-bit range), nested at a depth, and on a
 * million reals of every kind (the 10-digit rounding near ties, powers of
 * ten, exponents, subnormals, -0), and hr_fmt_g10() against snprintf "%.10g"
 * on the same reals; what jansson refuses (a string that is
 * not UTF-8) it refuses too.
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/hr_jdump.h"

#define FLAGS (JSON_INDENT(2) | JSON_REAL_PRECISION(10) | JSON_ENCODE_ANY)

/* hr_jdump()'s text of @v at @depth (caller frees), NULL when it failed */
static char *ours(const json_t *v, int depth)
{
	char *s = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&s, &n);
	int rc;
	cr_assert(f);
	rc = hr_jdump(f, v, depth);
	fclose(f);
	if (rc) {
		free(s);
		return NULL;
	}
	return s;
}

/* jansson's text of @v with every line after the first indented 2 x @depth more */
static char *theirs(const json_t *v, int depth)
{
	char *t = json_dumps(v, FLAGS), *o, *p, *q;
	size_t nl = 0;
	if (!t)
		return NULL;
	for (p = t; *p; p++)
		nl += *p == '\n';
	o = malloc(strlen(t) + nl * 2 * (size_t)depth + 1);
	cr_assert(o);
	for (p = t, q = o; *p; p++) {
		*q++ = *p;
		if (*p == '\n') {
			memset(q, ' ', 2 * (size_t)depth);
			q += 2 * depth;
		}
	}
	*q = '\0';
	free(t);
	return o;
}

static void same(const json_t *v, int depth)
{
	char *a = ours(v, depth), *b = theirs(v, depth);
	cr_assert(a && b);
	cr_assert_str_eq(a, b);
	free(a);
	free(b);
}

Test(jdump, documents_as_jansson_writes_them)
{
	static const char *const docs[] = {
		"{}", "[]", "{\"a\": {}}", "[[]]", "{\"a\": []}", "[1]", "{\"k\": 1}",
		"{\"a\": 1, \"b\": [1, 2.5, \"x\", null, true, false, {}, []], \"c\": {\"d\": {\"e\": [[1], [2, 3]]}}}",
		"{\"s\": \"tab\\there \\\"quoted\\\" back\\\\slash \\/ \\b\\f\\n\\r \\u0001\\u001f \\u007f\"}",
		"{\"utf8\": \"gr\\u00fc\\u00df \\u20ac \\ud83d\\ude00\", \"\\u00e9t\\u00e9\": 1}",
		"{\"big\": 9223372036854775807, \"small\": -9223372036854775808, \"z\": 0, \"neg\": -5}",
		"{\"r\": [0.0, -0.0, 1.0, 1e10, 1.5e-7, 123456789.123, 97.0, 4294967296.0, 1e300, 5e-324]}",
		"[\"\", \"a\", {\"\": \"\"}]",
	};
	size_t i;
	int depth;
	for (i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		json_error_t e;
		json_t *v = json_loads(docs[i], 0, &e);
		cr_assert(v, "%s: %s", docs[i], e.text);
		for (depth = 0; depth < 4; depth++)
			same(v, depth);
		json_decref(v);
	}
}

Test(jdump, keys_with_nul_and_scalars_alone)
{
	json_t *o = json_object(), *s = json_stringn("a\0b", 3);
	cr_assert(!json_object_setn_new(o, "k\0ey", 4, json_integer(1)));
	same(o, 1);
	same(s, 0);
	same(json_true(), 2);
	json_decref(o);
	json_decref(s);
}

Test(jdump, invalid_utf8_refused_as_jansson_refuses_it)
{
	static const char *const bad[] = { "\xff", "a\xc0\x80", "\xed\xa0\x80", "\xf4\x90\x80\x80", "\xe2\x82" };
	size_t i;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json_t *s = json_stringn_nocheck(bad[i], strlen(bad[i]));
		char *t = json_dumps(s, FLAGS);
		cr_assert_null(t, "jansson wrote %s", t);
		cr_assert_null(ours(s, 0));
		json_decref(s);
	}
}

static void same_real(double v)
{
	char a[40], g[40], *b;
	json_t *r = json_real(v);
	snprintf(g, sizeof(g), "%.10g", v);
	cr_assert(hr_fmt_g10(a, v) == (int)strlen(g));
	cr_assert_str_eq(a, g, "%.17g", v);
	cr_assert(r);
	b = json_dumps(r, FLAGS);
	cr_assert(hr_jdump_real(a, v) == (int)strlen(b));
	cr_assert_str_eq(a, b, "%.17g", v);
	free(b);
	json_decref(r);
}

Test(jdump, reals_as_jansson_writes_them)
{
	static const double sp[] = {
		1, 10, 100, 1e9, 1e10, 9999999999.5, 9999999999.4, 12345678905, 12345678915, 0.5, 1.5, 2.5,
		1e-4, 1e-5, 9.9999999995e-5, 0.00012345678905, 123.456, 97.0, 0.1, 0.2, 0.3, 1e21, 1e22,
		1e-300, 1e300, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 4294967296.0,
		999999999.95, 99999.999995, 1.0000000005, 0.30000000000000004,
	};
	uint64_t x = 88172645463325252ULL;
	size_t i;
	char buf[40];
	for (i = 0; i < sizeof(sp) / sizeof(sp[0]); i++) {
		same_real(sp[i]);
		same_real(-sp[i]);
	}
	same_real(-0.0);
	for (i = 0; i < 1000000; i++) {
		double v;
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		switch (i % 4) {
		case 0: memcpy(&v, &x, sizeof(v)); break;                 /* any bit pattern */
		case 1: v = (double)(x % 100000000000ULL) / pow(10, (double)((x >> 40) % 15)); break; /* decimals */
		case 2: v = ldexp((double)(x >> 11), -(int)(x % 80)); break;  /* binary fractions */
		default: v = (double)(x >> 11) / 9007199254740992.0 * pow(10, (int)(x % 40) - 20);
		}
		if (isfinite(v))
			same_real(v);
	}
	cr_assert_eq(hr_jdump_real(buf, NAN), -1);
	cr_assert_eq(hr_fmt_g10(buf, NAN), 3);
	cr_assert_str_eq(buf, "nan");
	hr_fmt_g10(buf, -INFINITY);
	cr_assert_str_eq(buf, "-inf");
	cr_assert_eq(hr_jdump_real(buf, INFINITY), -1);
}
