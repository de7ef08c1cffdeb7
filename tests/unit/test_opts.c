/*
 * The getopt loop every benchmark runs (ch_opts_getopt(), bench/common/
 * ch_opts.c): the tool's handler first, then the common options, errors
 * passed up, and a fresh scan at each call.
 */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <stdlib.h>
#include <string.h>

#include "base/ch_common.h"
#include "bench/common/ch_opts.h"

enum { OPT_COUNT = CH_OPT_FIRST_TOOL, OPT_BAD };

static const struct option longopts[] = {
	{ "count", required_argument, NULL, OPT_COUNT },
	{ "bad", no_argument, NULL, OPT_BAD },
	CH_COMMON_LONGOPTS,
	{ NULL, 0, NULL, 0 }
};

struct tool {
	int count;     /* --count N, summed */
	int seen;      /* options the handler was called with */
};

static int tool_opt(int c, const char *arg, void *ctx)
{
	struct tool *t = ctx;
	t->seen++;
	switch (c) {
	case OPT_COUNT:
		t->count += atoi(arg);
		return 1;
	case OPT_BAD:
		return ch_usage_error("--bad is bad");
	default:
		return 0;
	}
}

static int run(int argc, char **argv, struct tool *t, struct ch_common_opts *co)
{
	memset(t, 0, sizeof(*t));
	ch_common_opts_init(co);
	return ch_opts_getopt(argc, argv, CH_COMMON_SHORTOPTS, longopts, tool_opt, t, co);
}

Test(opts, tool_then_common_options)
{
	char *argv[] = { "tool", "--count", "2", "--json", "out.json", "--count=3", "--force", NULL };
	struct ch_common_opts co;
	struct tool t;

	cr_assert_eq(run(7, argv, &t, &co), 0);
	cr_assert_eq(t.count, 5);
	cr_assert_eq(t.seen, 4); /* every option goes to the tool first */
	cr_assert_str_eq(co.json_path, "out.json");
	cr_assert_eq(co.force, 1);
	cr_assert_eq(optind, 7);
}

Test(opts, operands_are_left_to_the_caller)
{
	char *argv[] = { "tool", "extra", "--count", "1", NULL };
	struct ch_common_opts co;
	struct tool t;

	cr_assert_eq(run(4, argv, &t, &co), 0);
	cr_assert_eq(t.count, 1);
	cr_assert_eq(optind, 3); /* permuted: the operand comes last */
	cr_assert_str_eq(argv[optind], "extra");
}

Test(opts, errors_come_back, .init = cr_redirect_stderr)
{
	char *bad[] = { "tool", "--bad", "--count", "9", NULL };
	char *unknown[] = { "tool", "--nope", NULL };
	char *min_time[] = { "tool", "--min-time", "-1", NULL };
	struct ch_common_opts co;
	struct tool t;

	cr_assert_eq(run(4, bad, &t, &co), CH_ERR_USAGE);
	cr_assert_eq(t.count, 0); /* stops at the first error */
	cr_assert_eq(run(2, unknown, &t, &co), CH_ERR_USAGE);
	cr_assert_eq(run(3, min_time, &t, &co), CH_ERR_USAGE);
}

Test(opts, each_call_scans_again, .init = cr_redirect_stderr)
{
	char *first[] = { "tool", "-qh", "--count", "4", NULL };
	char *second[] = { "tool", "--count", "6", NULL };
	struct ch_common_opts co;
	struct tool t;

	cr_assert_eq(run(4, first, &t, &co), 0);
	cr_assert_eq(co.help, 1);
	cr_assert_eq(co.quiet, 1);
	cr_assert_eq(t.count, 4);
	cr_assert_eq(run(3, second, &t, &co), 0);
	cr_assert_eq(t.count, 6);
	cr_assert_eq(co.help, 0);
}
