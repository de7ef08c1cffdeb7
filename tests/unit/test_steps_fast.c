/*
 * The step-log reader's scanner for clusterhealth JSON lines
 * (report/read/hr_steps_fast.h) against jansson: on tricky lines (escapes,
 * exponents, reordered and extra keys, NaN, huge and long numbers,
 * truncated lines, duplicated keys, wrong types) the scanner either
 * declines the line (jansson reads it) or gives the very record jansson's
 * parse gives, bit for bit; and a whole file read with the scanner and
 * without it gives the same records and the same input problems.
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/read/hr_steps.h"
#include "report/read/hr_steps_fast.h"
#include "report/hr_util.h"

/* a line, and whether the scanner is to take it (1) or leave it to jansson (0) */
static const struct {
	const char *line;
	int scanned;
} lines[] = {
	{ "{\"rank\":0,\"host\":\"node01\",\"step\":1,\"start\":1767225600.000,\"end\":1767225601.200,\"input_wait\":0.06}", 1 },
	{ "{\"rank\": 3, \"host\": \"n2\", \"step\": 7, \"step_time\": 1.25}", 1 },
	{ "{ \"rank\" : 3 ,\t\"step\" :7 , \"step_time\":1.25 }", 1 },
	{ "{\"step\":5,\"end\":10.5,\"start\":9.25,\"rank\":2,\"host\":\"h\"}", 1 },
	{ "{\"rank\":1,\"step\":2,\"step_time\":0.5,\"lr\":0.0003,\"note\":\"warm\",\"extra\":true,\"n\":null}", 1 },
	{ "{\"rank\":1,\"step\":2,\"step_time\":0.5,\"cfg\":{\"a\":1}}", 0 },
	{ "{\"rank\":1,\"step\":2,\"step_time\":0.5,\"list\":[1,2]}", 0 },
	{ "{\"rank\":1,\"host\":\"n\\u0041\",\"step\":2,\"step_time\":0.5}", 0 },
	{ "{\"r\\u0061nk\":1,\"step\":2,\"step_time\":0.5}", 0 },
	{ "{\"rank\":1,\"host\":\"a\\\"b\",\"step\":2,\"step_time\":0.5}", 0 },
	{ "{\"rank\":0,\"step\":1,\"step_time\":1.5e-1}", 0 },
	{ "{\"rank\":0,\"step\":1,\"step_time\":15E-2}", 0 },
	{ "{\"rank\":0,\"step\":1,\"step_time\":NaN}", 0 },
	{ "{\"rank\":0,\"step\":1,\"step_time\":Infinity}", 0 },
	{ "{\"rank\":0,\"step\":123456789012345678901234,\"step_time\":1}", 0 },
	{ "{\"rank\":0,\"step\":999999999999999999,\"step_time\":1}", 1 },
	{ "{\"rank\":0,\"step\":1,\"start\":0.1000000000000000055511151231257827,\"end\":2.5}", 0 },
	{ "{\"rank\":0,\"step\":1,\"step_time\":0.30000000000000004}", 0 },
	{ "{\"rank\":0,\"step\":1,\"start\":1767225601.123456,\"end\":1767225602.654321}", 1 },
	{ "{\"rank\":0,\"step\":1,\"start\":9007199254740992.0,\"end\":9007199254740994.0}", 0 },
	{ "{\"rank\":0,\"step\":1,\"start\":0.0000000000000000000001,\"step_time\":0.1}", 1 },
	{ "{\"rank\":0,\"step\":1,\"start\":0.00000000000000000000001,\"step_time\":0.1}", 0 },
	{ "{\"rank\":0,\"step\":1,\"start\":-0.0,\"end\":-1.5}", 1 },
	{ "{\"rank\":0,\"step\":-0,\"step_time\":2}", 1 },
	{ "{\"rank\":1.0,\"step\":1,\"step_time\":1}", 1 },
	{ "{\"rank\":-1,\"step\":1,\"step_time\":1}", 1 },
	{ "{\"rank\":100000001,\"step\":1,\"step_time\":1}", 1 },
	{ "{\"rank\":0,\"host\":null,\"step\":1,\"step_time\":1}", 1 },
	{ "{\"rank\":0,\"host\":42,\"step\":1,\"step_time\":1}", 1 },
	{ "{\"rank\":0,\"host\":\"a-very-long-host-name-that-is-longer-than-the-sixty-three-bytes-kept.example.org\",\"step\":1,\"step_time\":1}", 1 },
	{ "{\"rank\":0,\"rank\":1,\"step\":1,\"step_time\":1}", 0 },
	{ "{\"rank\":0,\"step\":1,\"step_time\":1,\"eval\":true}", 1 },
	{ "{\"rank\":0,\"step\":1,\"step_time\":1,\"eval\":false}", 1 },
	{ "{\"rank\":0,\"step\":1,\"end\":2,\"phases\":{\"forward\":0.3,\"backward\":0.6}}", 1 },
	{ "{\"rank\":0,\"host\":\"node01\",\"step\":1,\"start\":1767225600.0,\"end\":1767225601.306667,\"phases\":{\"forward\":0.235468,\"backward\":0.456807,\"optimizer\":0.014128,\"allreduce\":0.469597},\"input_wait\":0.130667,\"tokens\":16384,\"host_cpu\":0.92}", 1 },
	{ "{\"rank\":0,\"step\":1,\"end\":2,\"phases\":{}}", 1 },
	{ "{\"rank\":0,\"step\":1,\"end\":2,\"phases\":{ \"forward_backward\" : 0.9 , \"input_wait\":0.1 },\"input_wait\":0.2}", 1 },
	{ "{\"rank\":0,\"step\":1,\"end\":2,\"phases\":{\"forward\":0.3,\"forward\":0.4}}", 0 },
	{ "{\"rank\":0,\"step\":1,\"end\":2,\"phases\":{\"forward\":{\"a\":1}}}", 0 },
	{ "{\"rank\":0,\"step\":1,\"end\":2,\"phases\":[0.3]}", 0 },
	{ "{\"rank\":0,\"step\":1,\"end\":2,\"phases\":{\"forward\":\"x\",\"other\":1}}", 1 },
	{ "{\"rank\":0,\"step\":1,\"end\":2,\"phases\":{\"backward\":-0.5}}", 1 },
	{ "{\"rank\":0,\"step\":1,\"end\":2,\"phases\":{\"forward\":0.3}", 0 },
	{ "{\"rank\":0,\"step\":1,\"end\":2,\"cfg\":{\"forward\":0.3}}", 0 },
	{ "{\"rank\":0,\"step\":1,\"end\":2,\"phases\":{\"forward\":0.3},\"phases\":{\"forward\":0.4}}", 0 },
	{ "{\"rank\":0,\"step\":1,\"end\":2,\"phases\":3}", 1 },
	{ "{\"rank\":0,\"step\":3,\"step_time\":1,\"checkpoint_write\":-1}", 1 },
	{ "{\"rank\":0,\"step\":3,\"step_time\":1,\"checkpoint_write\":120,\"tokens\":4096,\"host_cpu\":0.25,\"loss\":2.125,\"mfu\":0.41}", 1 },
	{ "{\"rank\":0,\"step\":3,\"step_time\":1,\"input_wait\":\"x\"}", 1 },
	{ "{\"rank\":0,\"step\":\"1\",\"step_time\":1}", 1 },
	{ "{\"rank\":0,\"step\":1,}", 0 },
	{ "{\"rank\":01,\"step\":1,\"step_time\":1}", 0 },
	{ "{\"rank\":0,\"step\":1.,\"step_time\":1}", 0 },
	{ "{\"rank\":0,\"step\":.5,\"step_time\":1}", 0 },
	{ "{\"rank\":0,\"step\":1,\"step_time\":1,\"x\":truex}", 0 },
	{ "{\"rank\":0,\"host\":\"n\xc3\xb6" "de\",\"step\":1,\"step_time\":1}", 0 },
	{ "{\"rank\":0,\"host\":\"tab\there\",\"step\":1,\"step_time\":1}", 0 },
	{ "{\"rank\":0,\"step\":1,\"step_time\":1} trailing}", 0 },
	{ "{\"rank\":0,\"step\":1,\"step_ti}", 0 },
	{ "{\"rank\":0 \"step\":1,\"step_time\":1}", 0 },
	{ "{}", 0 },
	{ "{\"loss\":2.5,\"step\":10}", 1 },
};
#define NLINES (sizeof(lines) / sizeof(lines[0]))

static void rec_blank(struct hr_step_rec *r)
{
	int i;
	memset(r, 0, sizeof(*r));
	r->rank = r->local_rank = -1;
	r->step = -1;
	r->t_start = r->t_end = r->step_sec = r->ckpt_sec = NAN;
	r->tokens = r->mfu = r->loss = r->host_cpu = NAN;
	for (i = 0; i < HR_PH_N; i++)
		r->phase[i] = NAN;
}

/* jansson's fields of @s as the reader parses a record, 0 when not valid JSON */
static int by_jansson(const char *s, struct hr_jl_fields *f, json_t **o)
{
	json_error_t err;
	*o = json_loadb(s, strlen(s), 0, &err);
	if (!*o || !json_is_object(*o))
		return 0;
	hr_jl_from_json(*o, f);
	return 1;
}

Test(steps_fast, scanner_gives_janssons_record_or_declines)
{
	size_t i, taken = 0;
	for (i = 0; i < NLINES; i++) {
		const char *s = lines[i].line;
		struct hr_jl_fields fs, fj;
		struct hr_step_rec rs, rj;
		const char *bs, *bj;
		json_t *o = NULL;
		int got = hr_jl_scan(s, strlen(s), &fs);

		cr_assert_eq(got, lines[i].scanned, "line %zu: scanned %d, want %d: %s", i, got, lines[i].scanned, s);
		if (!got) {
			json_decref(o);
			continue;
		}
		taken++;
		cr_assert(by_jansson(s, &fj, &o), "line %zu: the scanner took what jansson rejects: %s", i, s);
		cr_assert_eq(hr_jl_is_record(&fs), hr_jl_is_record(&fj), "line %zu: record or not", i);
		rec_blank(&rs);
		rec_blank(&rj);
		bs = hr_jl_apply(&fs, &rs);
		bj = hr_jl_apply(&fj, &rj);
		cr_assert_eq(bs, bj, "line %zu: malformed as '%s' by the scanner, '%s' by jansson: %s", i,
			     bs ? bs : "-", bj ? bj : "-", s);
		cr_assert(!memcmp(&rs, &rj, sizeof(rs)),
			  "line %zu: records differ (start %.17g/%.17g end %.17g/%.17g step %ld/%ld host '%s'/'%s'): %s", i,
			  rs.t_start, rj.t_start, rs.t_end, rj.t_end, rs.step, rj.step, rs.host, rj.host, s);
		json_decref(o);
	}
	cr_assert_geq(taken, 20, "only %zu lines taken by the scanner", taken);
}

/* The comparison above can fail: one bit of a value apart is seen. */
Test(steps_fast, comparison_sees_one_bit)
{
	const char *s = "{\"rank\":0,\"step\":1,\"start\":1767225601.123456,\"end\":1767225602.654321}";
	struct hr_jl_fields f;
	struct hr_step_rec a, b;
	cr_assert(hr_jl_scan(s, strlen(s), &f));
	rec_blank(&a);
	rec_blank(&b);
	cr_assert_null(hr_jl_apply(&f, &a));
	f.v[HR_JL_END].d = nextafter(f.v[HR_JL_END].d, 0);
	cr_assert_null(hr_jl_apply(&f, &b));
	cr_assert(memcmp(&a, &b, sizeof(a)), "a value one ulp apart went unseen");
}

/* Exactness of the scanner's numbers on many values: each as strtod reads it. */
Test(steps_fast, numbers_as_strtod)
{
	unsigned long long x = 88172645463325252ULL;
	int i, taken = 0;
	for (i = 0; i < 200000; i++) {
		char line[160], num[64];
		struct hr_jl_fields f;
		x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift64 */
		snprintf(num, sizeof(num), "%llu.%0*llu", (x >> 20) % 100000000ULL, (int)(x % 9) + 1,
			 (x >> 3) % 1000000000ULL % (unsigned long long)pow(10, (int)(x % 9) + 1));
		snprintf(line, sizeof(line), "{\"rank\":0,\"step\":1,\"start\":%s,\"step_time\":1}", num);
		if (!hr_jl_scan(line, strlen(line), &f))
			continue;
		taken++;
		cr_assert_eq(f.v[HR_JL_START].type, HR_JV_REAL);
		cr_assert(f.v[HR_JL_START].d == strtod(num, NULL), "%s: %.17g, strtod %.17g", num, f.v[HR_JL_START].d,
			  strtod(num, NULL));
	}
	cr_assert_gt(taken, 100000, "only %d numbers taken", taken);
}

#define MAXREC 128
struct got {
	struct hr_step_rec r[MAXREC];
	int n;
};

static int collect(const struct hr_step_rec *r, void *ctx)
{
	struct got *g = ctx;
	if (g->n < MAXREC)
		g->r[g->n++] = *r;
	return 0;
}

/* A file of these lines (and a cut-off last line) read with the scanner and
 * without it: the same records, the same input problems. */
Test(steps_fast, file_read_same_with_and_without_scanner)
{
	char path[] = "/tmp/ch_steps_fast.XXXXXX";
	int fd = mkstemp(path), k, rc[2];
	FILE *f;
	size_t i;
	static struct got g[2];
	struct hr_issues is[2];
	struct hr_steps_file_info info[2];

	cr_assert(fd >= 0);
	f = fdopen(fd, "w");
	for (i = 0; i < NLINES; i++)
		fprintf(f, "%s\n", lines[i].line);
	fprintf(f, "{\"rank\":5,\"step\":9,\"start\":1.5,\"end\":2.7"); /* cut off */
	fclose(f);
	for (k = 0; k < 2; k++) {
		memset(&g[k], 0, sizeof(g[k]));
		memset(&is[k], 0, sizeof(is[k]));
		hr_steps_fast_enable(k == 0);
		rc[k] = hr_steps_read(path, collect, &g[k], &is[k], &info[k]);
	}
	hr_steps_fast_enable(1);
	unlink(path);
	cr_assert_eq(rc[0], rc[1]);
	cr_assert_gt(g[0].n, 10, "%d records", g[0].n);
	cr_assert_eq(g[0].n, g[1].n, "%d records with the scanner, %d without", g[0].n, g[1].n);
	for (k = 0; k < g[0].n; k++)
		cr_assert(!memcmp(&g[0].r[k], &g[1].r[k], sizeof(g[0].r[k])), "record %d (line %ld) differs", k,
			  g[0].r[k].line);
	cr_assert_eq(info[0].malformed, info[1].malformed);
	cr_assert_eq(is[0].n, is[1].n, "%zu input problems with the scanner, %zu without", is[0].n, is[1].n);
	for (i = 0; i < is[0].n; i++)
		cr_assert_str_eq(is[0].v[i].msg, is[1].v[i].msg);
	hr_issues_release(&is[0]);
	hr_issues_release(&is[1]);
}
