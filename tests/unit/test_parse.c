#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <criterion/redirect.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "base/ch_common.h"
#include "base/ch_parse.h"

/* parameters hold arrays, not pointers: Criterion runs each test in a new
 * process image, where pointers into .rodata may not be valid */
struct size_case { char text[16]; uint64_t want; };
struct bad_case { char text[16]; };

ParameterizedTestParameters(parse, size_ok)
{
	static struct size_case cases[] = {
		{ "0", 0 }, { "8", 8 }, { "8B", 8 }, { "1K", 1024 }, { "1k", 1024 },
		{ "4KiB", 4096 }, { "64M", 64ull << 20 }, { "2MiB", 2ull << 20 },
		{ "1G", 1ull << 30 }, { "3GiB", 3ull << 30 }, { "1T", 1ull << 40 },
		{ "1.5K", 1536 }, { "0.5G", 512ull << 20 },
	};
	return cr_make_param_array(struct size_case, cases, sizeof(cases) / sizeof(cases[0]));
}

ParameterizedTest(struct size_case *c, parse, size_ok)
{
	uint64_t v = 12345;
	cr_assert_eq(ch_parse_size("-b", c->text, &v), 0, "'%s' rejected", c->text);
	cr_assert_eq(v, c->want, "'%s' gave %llu", c->text, (unsigned long long)v);
}

ParameterizedTestParameters(parse, size_bad)
{
	static struct bad_case bad[] = { { "" }, { "-1" }, { "+4" }, { "abc" }, { "1X" },
		{ "1.3B" }, { "1e3" }, { "0x10" }, { "inf" }, { "nan" }, { " 4" }, { "4 " },
		{ "K" }, { "99999999999T" } };
	return cr_make_param_array(struct bad_case, bad, sizeof(bad) / sizeof(bad[0]));
}

ParameterizedTest(struct bad_case *c, parse, size_bad)
{
	uint64_t v = 7;
	cr_redirect_stderr();
	cr_assert_eq(ch_parse_size("-e", c->text, &v), CH_ERR_USAGE, "'%s' accepted", c->text);
	cr_assert_eq(v, 7, "value written on error");
}

Test(parse, format_size)
{
	char b[32];
	cr_assert_str_eq(ch_format_size(8, b, sizeof(b)), "8");
	cr_assert_str_eq(ch_format_size(1024, b, sizeof(b)), "1K");
	cr_assert_str_eq(ch_format_size(1536, b, sizeof(b)), "1536");
	cr_assert_str_eq(ch_format_size(64ull << 20, b, sizeof(b)), "64M");
	cr_assert_str_eq(ch_format_size(3ull << 30, b, sizeof(b)), "3G");
}

Test(parse, long_and_double)
{
	long l;
	double d;
	cr_redirect_stderr();
	cr_assert_eq(ch_parse_long("-n", "20", 1, 100, &l), 0);
	cr_assert_eq(l, 20);
	cr_assert_eq(ch_parse_long("-n", "0", 1, 100, &l), CH_ERR_USAGE);
	cr_assert_eq(ch_parse_long("-n", "2x", 1, 100, &l), CH_ERR_USAGE);
	cr_assert_eq(ch_parse_long("-n", "", 1, 100, &l), CH_ERR_USAGE);
	cr_assert_eq(ch_parse_double("--min-time", "0.25", 0, 10, &d), 0);
	cr_assert_float_eq(d, 0.25, 0);
	cr_assert_eq(ch_parse_double("--min-time", "-1", 0, 10, &d), CH_ERR_USAGE);
	cr_assert_eq(ch_parse_double("--min-time", "nan", 0, 10, &d), CH_ERR_USAGE);
}

Test(parse, split_list)
{
	char s1[] = "ring,tree,default", s2[] = "a,,b", s3[] = "x";
	char *it[4];
	cr_assert_eq(ch_split_list(s1, it, 4), 3);
	cr_assert_str_eq(it[0], "ring");
	cr_assert_str_eq(it[2], "default");
	cr_assert_eq(ch_split_list(s2, it, 4), -1);
	cr_assert_eq(ch_split_list(s3, it, 4), 1);
}

Test(parse, lookup_names_value_and_choices)
{
	static const char *const names[] = { "float", "double", NULL };
	cr_redirect_stderr();
	cr_assert_eq(ch_lookup("-d", "double", names), 1);
	cr_assert_eq(ch_lookup("-d", "quad", names), CH_ERR_USAGE);
	fflush(stderr);
	cr_assert_stderr_eq_str("clusterhealth: error: unknown value 'quad' for -d (expected: float, double)\n"
				"try 'clusterhealth --help' for more information\n");
}

/* getopt_long() over @argv (opterr 0), then ch_option_error() on its first
 * complaint; the stderr it wrote compared whole */
static int first_option_error(int argc, char **argv)
{
	static const struct option lo[] = { { "groups", required_argument, 0, 'G' },
					    { "gpus", required_argument, 0, 'g' },
					    { "json", required_argument, 0, 'j' },
					    { "force", no_argument, 0, 'F' },
					    { 0, 0, 0, 0 } };
	int c;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "qh", lo, NULL)) != -1)
		if (c == '?' || c == ':')
			return ch_option_error(argv, "qh", lo);
	return 0;
}

Test(parse, option_errors_one_wording)
{
	char p[] = "prog", a1[] = "--grups", a2[] = "2", b1[] = "--json", c1[] = "--force=1", d1[] = "--g",
	     e1[] = "-z", f1[] = "--frobnicate";
	char *v1[] = { p, a1, a2, NULL }, *v2[] = { p, b1, NULL }, *v3[] = { p, c1, NULL }, *v4[] = { p, d1, a2, NULL },
	     *v5[] = { p, e1, NULL }, *v6[] = { p, f1, NULL };

	cr_redirect_stderr();
	ch_set_prog("prog");
	cr_assert_eq(first_option_error(3, v1), CH_ERR_USAGE);
	cr_assert_eq(first_option_error(2, v2), CH_ERR_USAGE);
	cr_assert_eq(first_option_error(2, v3), CH_ERR_USAGE);
	cr_assert_eq(first_option_error(3, v4), CH_ERR_USAGE);
	cr_assert_eq(first_option_error(2, v5), CH_ERR_USAGE);
	cr_assert_eq(first_option_error(2, v6), CH_ERR_USAGE);
	fflush(stderr);
	cr_assert_stderr_eq_str("prog: error: unknown option '--grups' (did you mean --groups?)\n"
				"try 'prog --help' for more information\n"
				"prog: error: option '--json' needs a value\n"
				"try 'prog --help' for more information\n"
				"prog: error: option '--force' takes no value\n"
				"try 'prog --help' for more information\n"
				"prog: error: ambiguous option '--g' (--groups, --gpus)\n"
				"try 'prog --help' for more information\n"
				"prog: error: unknown option '-z'\n"
				"try 'prog --help' for more information\n"
				"prog: error: unknown option '--frobnicate'\n"
				"try 'prog --help' for more information\n");
}

Test(common, exit_codes)
{
	cr_assert_eq(ch_exit_code(CH_OK), 0);
	cr_assert_eq(ch_exit_code(CH_ERR_CHECK), 1);
	cr_assert_eq(ch_exit_code(CH_ERR_USAGE), 2);
	cr_assert_eq(ch_exit_code(CH_ERR_UNAVAILABLE), 3);
	cr_assert_eq(ch_exit_code(CH_ERR_RUNTIME), 4);
	cr_assert_eq(ch_exit_code(-99), 4);
	cr_assert_str_eq(ch_status_name(CH_ERR_UNAVAILABLE), "unavailable");
	cr_assert_str_eq(ch_status_name(CH_ERR_CHECK), "failed");
}

Test(parse, plain_decimal_only)
{
	long l;
	double d;
	cr_redirect_stderr();
	cr_assert_eq(ch_parse_long("-n", "+5", 1, 100, &l), CH_ERR_USAGE);
	cr_assert_eq(ch_parse_long("-n", "0x10", 1, 100, &l), CH_ERR_USAGE);
	cr_assert_eq(ch_parse_double("--min-time", "+5", 0, 10, &d), CH_ERR_USAGE);
	cr_assert_eq(ch_parse_double("--min-time", "0x1", 0, 10, &d), CH_ERR_USAGE);
	cr_assert_eq(ch_parse_double("--min-time", "inf", 0, 10, &d), CH_ERR_USAGE);
	cr_assert_eq(ch_parse_double("--min-time", " 1", 0, 10, &d), CH_ERR_USAGE);
	cr_assert_eq(ch_parse_double("--min-time", "1.5e0", 0, 10, &d), 0);
	cr_assert_float_eq(d, 1.5, 0);
	cr_assert_eq(ch_decimal_len("12.5ms"), 4);
	cr_assert_eq(ch_decimal_len("-3e-2%"), 5);
	cr_assert_eq(ch_decimal_len("1e"), 1);
	cr_assert_eq(ch_decimal_len("+1"), 0);
	cr_assert_eq(ch_decimal_len(".5"), 2);
	cr_assert_eq(ch_decimal_len("."), 0);
}

Test(parse, real_utc_dates)
{
	static const struct { const char *s; int date_only, want; } c[] = {
		{ "2025-01-12", 1, 1 }, { "2024-02-29", 1, 1 }, { "2025-02-29", 1, 0 },
		{ "1900-02-29", 1, 0 }, { "2000-02-29", 1, 1 }, { "2025-13-45", 1, 0 },
		{ "2025-04-31", 1, 0 }, { "2025-1-12", 1, 0 }, { "2025-01-12", 0, 0 },
		{ "2025-01-12T03:00:00Z", 0, 1 }, { "2025-01-12T24:00:00Z", 0, 0 },
		{ "2025-01-12T03:60:00Z", 0, 0 },
	};
	size_t i;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		cr_expect_eq(ch_valid_utc(c[i].s, c[i].date_only), c[i].want, "%s", c[i].s);
}
