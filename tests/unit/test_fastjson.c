/*
 * health_report's parse of result files through simdjson
 * (report/read/hr_fastjson.h) against jansson's json_loadb(): on valid
 * documents with the values jansson reads in its own way (integers at the
 * ends of the 64-bit range, -0, reals that underflow, the largest double,
 * escapes, repeated keys, deep nesting) it gives the document json_loadb()
 * gives, value for value, type for type, key order kept; what it cannot
 * read as jansson does (\u escapes, integers above INT64_MAX, malformed
 * text of any kind, nesting deeper than simdjson's limit) it refuses, so
 * that the caller's json_loadb() gives the document or its error.
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/read/hr_fastjson.h"

/* @s copied into a buffer padded as hr_read_file() pads (the caller's contract) */
static json_t *fast(const char *s)
{
	size_t n = strlen(s);
	char *b = calloc(1, n + 1 + HR_FASTJSON_PAD);
	json_t *d;
	cr_assert(b);
	memcpy(b, s, n);
	d = hr_fastjson_load(b, n);
	free(b);
	return d;
}

/* the same value, type for type (json_equal() holds 1 and 1.0 apart, but
 * not -0.0 and 0.0), and the same text dumped in document order */
static void same_value(const json_t *a, const json_t *b)
{
	char *ta, *tb;
	cr_assert(json_equal(a, b));
	if (json_is_real(a))
		cr_assert(signbit(json_real_value(a)) == signbit(json_real_value(b)));
	ta = json_dumps(a, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
	tb = json_dumps(b, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(17));
	cr_assert_str_eq(ta, tb);
	free(ta);
	free(tb);
	if (json_is_array(a)) {
		for (size_t i = 0; i < json_array_size(a); i++)
			same_value(json_array_get(a, i), json_array_get(b, i));
	} else if (json_is_object(a)) {
		const char *k;
		json_t *v;
		json_object_foreach((json_t *)a, k, v)
			same_value(v, json_object_get(b, k));
	}
}

static const char *const same[] = {
	"{}",
	"[]",
	"  \n\t{ \"a\" : 1 , \"b\" :[ ] ,\"c\":{} }\r\n",
	"{\"i\":[0,-0,1,-1,9223372036854775807,-9223372036854775808,12345678901234]}",
	"{\"r\":[0.0,-0.0,1.0,0.1,1e2,1E-2,-2.5e+3,1.7976931348623157e308,5e-324,1e-400,-1e-400,"
	"3.141592653589793238462643383279502884197]}",
	"{\"s\":[\"\",\"plain\",\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\",\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"]}",
	"{\"k\\\"ey\":1,\"k\\\\\":2,\"k\\n\":3}",
	"{\"dup\":1,\"x\":2,\"dup\":[3],\"y\":{\"dup\":true,\"dup\":false}}",
	"{\"t\":true,\"f\":false,\"n\":null,\"z\":[null,true,false,{}]}",
	"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
	"{\"schema\":\"clusterhealth.result\",\"schema_version\":1,\"tool\":\"roofline\",\"host\":{\"hostname\":\"n1\","
	"\"gpus\":[{\"index\":0,\"name\":\"H100\"}]},\"results\":{\"devices\":[{\"device\":\"gpu0\",\"points\":"
	"[{\"gbps\":3012.5,\"gflops\":null,\"valid\":true}]}]}}",
};

Test(fastjson, same_document_as_jansson)
{
	for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
		json_error_t je;
		json_t *a = json_loads(same[i], 0, &je), *b = fast(same[i]);
		cr_assert(a, "jansson reads %s: %s", same[i], je.text);
		cr_assert(b, "refused: %s", same[i]);
		same_value(a, b);
		json_decref(a);
		json_decref(b);
	}
}

/* refused: the caller's json_loadb() decides (document or error) */
static const char *const refused[] = {
	"{\"s\":\"caf\\u00e9\"}",          /* \u escapes: jansson's rules */
	"{\"s\":\"\\u0000\"}",
	"{\"s\":\"\\ud800\"}",
	"{\"k\\u0041\":1}",
	"{\"i\":9223372036854775808}",     /* above INT64_MAX: jansson "too big integer" */
	"{\"i\":18446744073709551615}",
	"{\"i\":123456789012345678901234}",
	"{\"r\":1e400}",                   /* overflow */
	"{\"a\":1,}",                      /* malformed */
	"{\"a\":1",
	"{\"a\" 1}",
	"[1 2]",
	"{\"a\":01}",
	"{\"a\":tru}",
	"{\"a\":nul}",
	"{\"a\":NaN}",
	"{\"a\":\"x\x01y\"}",              /* a raw control character */
	"{\"a\":\"\xff\"}",                /* not UTF-8 */
	"{\"a\":\"\\x\"}",                 /* no such escape */
	"{} x",                             /* text after the document */
	"{}{}",
	"1",                                /* not an object or array */
	"\"s\"",
	"",
};

Test(fastjson, refuses_what_jansson_reads_its_own_way)
{
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		json_t *b = fast(refused[i]);
		cr_assert_null(b, "taken: %s", refused[i]);
	}
}

/* nesting deeper than simdjson's 1,024 levels (jansson's limit is 2,048):
 * refused, and jansson reads it */
Test(fastjson, deep_nesting_refused)
{
	enum { D = 1500 };
	char *s = malloc(2 * D + 2);
	json_error_t je;
	json_t *a;
	cr_assert(s);
	memset(s, '[', D);
	memset(s + D, ']', D);
	s[2 * D] = '\0';
	cr_assert_null(fast(s));
	a = json_loads(s, 0, &je);
	cr_assert(a, "%s", je.text);
	json_decref(a);
	free(s);
}
