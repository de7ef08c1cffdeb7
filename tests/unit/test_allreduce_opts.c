#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <string.h>

#include "bench/allreduce/ch_ar_opts.h"
#include "bench/allreduce/ch_ar_plan.h"
#include "comm/ch_comm.h"
#include "base/ch_common.h"

#define MAXARGS 32

static int parse(struct ch_ar_opts *o, const char *const *args)
{
	char *argv[MAXARGS + 2];
	int argc = 0;
	argv[argc++] = (char *)"allreduce_bw";
	while (*args && argc <= MAXARGS)
		argv[argc++] = (char *)*args++;
	argv[argc] = NULL;
	return ch_ar_opts_parse(argc, argv, o);
}

Test(allreduce_opts, defaults)
{
	struct ch_ar_opts o;
	const char *args[] = { NULL };
	cr_assert_eq(parse(&o, args), 0);
	cr_assert_eq(o.min_bytes, 32 << 20);
	cr_assert_eq(o.max_bytes, 32 << 20);
	cr_assert_eq(o.step_factor, 1);
	cr_assert_eq(o.iters, 20);
	cr_assert_eq(o.iters_given, 0);
	cr_assert_eq(o.check, 1);
	cr_assert_eq(o.dtype, CH_FP32);
	cr_assert_eq(o.op, CH_COMM_REDOP_SUM);
	cr_assert_eq(o.backend, CH_AR_BACKEND_AUTO);
	cr_assert_eq(o.nalgos, 1);
	cr_assert_str_eq(o.algos[0], "default");
	cr_assert_eq(o.groups, CH_AR_GROUPS_WORLD);
	cr_assert_float_eq(o.timeout_sec, 120.0, 0);
	cr_assert_eq(o.delay_rank, -1);
	cr_assert_lt(o.min_busbw_gbps, 0);
	cr_assert_eq(o.ngpus, 0); /* not given: one GPU per process, or all without a launcher */
}

/* nccl-tests' single-process mode: -g N GPUs driven by this process */
Test(allreduce_opts, ngpus)
{
	struct ch_ar_opts o;
	const char *args[] = { "-g", "8", "-t", "1", NULL };
	const char *longs[] = { "--ngpus", "256", NULL };
	cr_assert_eq(parse(&o, args), 0);
	cr_assert_eq(o.ngpus, 8);
	cr_assert_eq(parse(&o, longs), 0);
	cr_assert_eq(o.ngpus, CH_AR_MAX_GPUS);
}

Test(allreduce_opts, the_done_when_command_line)
{
	struct ch_ar_opts o;
	const char *args[] = { "-b", "8", "-e", "64M", "-f", "4", "--backend", "mpi", "--algo", "ring,tree",
			       "--groups", "world,node,pairs", "--node-size", "2", NULL };
	cr_assert_eq(parse(&o, args), 0);
	cr_assert_eq(o.min_bytes, 8);
	cr_assert_eq(o.max_bytes, 64ULL << 20);
	cr_assert_eq(o.step_factor, 4);
	cr_assert_eq(o.backend, CH_AR_BACKEND_MPI);
	cr_assert_eq(o.nalgos, 2);
	cr_assert_str_eq(o.algos[1], "tree");
	cr_assert_eq(o.groups, CH_AR_GROUPS_WORLD | CH_AR_GROUPS_NODE | CH_AR_GROUPS_PAIRS);
	cr_assert_eq(o.node_size, 2);
}

Test(allreduce_opts, nccl_tests_long_names_and_diagnostics)
{
	struct ch_ar_opts o;
	const char *args[] = { "--minbytes", "1K", "--maxbytes", "1M", "--stepfactor", "2", "--iters", "7",
			       "--warmup_iters", "0", "--datatype", "bfloat16", "--op", "max", "--check", "0",
			       "--inject-delay", "3:2500@64K", "-g", "1", NULL };
	cr_assert_eq(parse(&o, args), 0);
	cr_assert_eq(o.min_bytes, 1024);
	cr_assert_eq(o.iters, 7);
	cr_assert_eq(o.iters_given, 1);
	cr_assert_eq(o.warmup, 0);
	cr_assert_eq(o.dtype, CH_BF16);
	cr_assert_eq(o.op, CH_COMM_REDOP_MAX);
	cr_assert_eq(o.check, 0);
	cr_assert_eq(o.delay_rank, 3);
	cr_assert_eq(o.delay_us, 2500);
	cr_assert_eq(o.delay_min_bytes, 65536);
}

/* arrays, not pointers: Criterion re-executes the binary for each case */
struct bad { char args[6][24]; };
ParameterizedTestParameters(allreduce_opts, bad_values_are_usage_errors)
{
	static struct bad cases[] = {
		{ { "-d", "foo" } }, { { "-d", "int64" } }, { { "-o", "prod" } }, { { "--backend", "gloo" } },
		{ { "-b", "64", "-e", "8" } }, { { "-b", "0" } }, { { "-b", "-5" } }, { { "-b", "2" } },
		{ { "-e", "1X" } }, { { "-n", "0" } }, { { "-w", "-1" } }, { { "-c", "2" } },
		{ { "-g", "0" } }, { { "-g", "257" } }, { { "-g", "two" } }, { { "-t", "2" } }, { { "--groups", "world,foo" } }, { { "--groups", "node,node" } },
		{ { "--algo", "ring,,tree" } }, { { "--algo", "ring,ring" } }, { { "--node-size", "0" } },
		{ { "--timeout", "-1" } }, { { "--timeout", "nan" } }, { { "--min-busbw", "-3" } },
		{ { "--inject-delay", "3" } }, { { "--inject-delay", "x:100" } }, { { "--inject-delay", "1:0" } },
		{ { "--inject-delay", "1:100@" } }, { { "-b", "1", "-e", "1G", "-i", "1" } }, { { "stray" } },
		{ { "--no-such-option" } }, { { "-i", "0" } },
	};
	return cr_make_param_array(struct bad, cases, sizeof(cases) / sizeof(cases[0]));
}
ParameterizedTest(struct bad *b, allreduce_opts, bad_values_are_usage_errors)
{
	struct ch_ar_opts o;
	const char *args[7];
	int i;
	for (i = 0; i < 6 && b->args[i][0]; i++)
		args[i] = b->args[i];
	args[i] = NULL;
	cr_assert_eq(parse(&o, args), CH_ERR_USAGE, "'%s %s' accepted", b->args[0], b->args[1]);
}

Test(allreduce_opts, size_lists)
{
	uint64_t s[32];
	int n = ch_ar_size_list(8, 64ULL << 20, 1 << 20, 4, s, 32);
	cr_assert_eq(n, 12); /* 8 .. 32M by 4 */
	cr_assert_eq(s[0], 8);
	cr_assert_eq(s[11], 32ULL << 20);
	n = ch_ar_size_list(1 << 20, 4 << 20, 1 << 20, 1, s, 32);
	cr_assert_eq(n, 4);
	cr_assert_eq(s[3], 4 << 20);
	cr_assert_eq(ch_ar_size_list(9, 8, 1, 2, s, 32), 0);
	cr_assert_eq(ch_ar_size_list(1, 1ULL << 40, 1, 1, NULL, 0), CH_AR_MAX_SIZES + 1);
	n = ch_ar_size_list(1ULL << 62, UINT64_MAX, 1, 4, s, 32); /* no overflow */
	cr_assert_eq(n, 1);
}

Test(allreduce_opts, algorithms_checked_against_the_backend)
{
	struct ch_ar_opts o;
	const char *ok[] = { "--algo", "ring,tree,default", NULL };
	const char *bad[] = { "--algo", "ring,nvls", NULL };
	const struct ch_comm_backend *mpi = ch_comm_find("mpi");
	cr_assert_eq(parse(&o, ok), 0);
	cr_assert_eq(ch_ar_check_algos(&o, mpi->algos, "mpi"), 0);
	cr_assert_eq(parse(&o, bad), 0);
	cr_assert_eq(ch_ar_check_algos(&o, mpi->algos, "mpi"), CH_ERR_USAGE);
}

Test(allreduce_opts, help_and_version)
{
	struct ch_ar_opts o;
	const char *h[] = { "--help", NULL }, *v[] = { "-V", NULL };
	cr_assert_eq(parse(&o, h), 0);
	cr_assert_eq(o.common.help, 1);
	cr_assert_eq(parse(&o, v), 0);
	cr_assert_eq(o.common.version, 1);
}

