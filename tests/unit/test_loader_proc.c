/*
 * /proc parsers of loader_contention (ch_loader_proc.c) on known texts.
 */
#include <criterion/criterion.h>
#include <math.h>

#include "base/ch_common.h"
#include "bench/loader/ch_loader.h"

Test(loader_proc, proc_stat_first_cpu_line)
{
	const char *text = "cpu  14082 5 10490 131659 583 1 95 93 0 0\n"
			   "cpu0 6495 0 4829 67071 46 0 10 45 0 0\n"
			   "intr 1 2 3\n";
	struct ch_lc_cpu_times t;

	cr_assert_eq(ch_lc_parse_proc_stat(text, &t), 0);
	cr_assert_eq(t.user, 14082);
	cr_assert_eq(t.nice, 5);
	cr_assert_eq(t.system, 10490);
	cr_assert_eq(t.idle, 131659);
	cr_assert_eq(t.iowait, 583);
	cr_assert_eq(t.irq, 1);
	cr_assert_eq(t.softirq, 95);
	cr_assert_eq(t.steal, 93);
}

Test(loader_proc, proc_stat_malformed)
{
	struct ch_lc_cpu_times t;
	cr_assert_eq(ch_lc_parse_proc_stat("cpu0 1 2 3 4\n", &t), CH_ERR_RUNTIME);
	cr_assert_eq(ch_lc_parse_proc_stat("cpu  1 2\n", &t), CH_ERR_RUNTIME);
	cr_assert_eq(ch_lc_parse_proc_stat("", &t), CH_ERR_RUNTIME);
	/* a 2.6-era line with 4 fields still parses */
	cr_assert_eq(ch_lc_parse_proc_stat("cpu  1 2 3 4\n", &t), 0);
	cr_assert_eq(t.steal, 0);
}

Test(loader_proc, utilisation_and_steal)
{
	/* 1000 ticks elapse: 600 user, 100 system, 150 idle, 50 iowait, 100 steal */
	struct ch_lc_cpu_times a = { 100, 0, 100, 800, 0, 0, 0, 0 };
	struct ch_lc_cpu_times b = { 700, 0, 200, 950, 50, 0, 0, 100 };
	double util, steal;

	ch_lc_cpu_util(&a, &b, &util, &steal);
	cr_assert_float_eq(util, 0.8, 1e-12); /* 1 - (150 + 50) / 1000 */
	cr_assert_float_eq(steal, 0.1, 1e-12);
	ch_lc_cpu_util(&a, &a, &util, &steal);
	cr_assert_eq(util, 0);
	cr_assert_eq(steal, 0);
}

Test(loader_proc, pressure_some_line)
{
	const char *text = "some avg10=1.25 avg60=5.96 avg300=4.94 total=28618736\n"
			   "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
	double a10;
	uint64_t tot;

	cr_assert_eq(ch_lc_parse_psi(text, &a10, &tot), 0);
	cr_assert_float_eq(a10, 1.25, 1e-12);
	cr_assert_eq(tot, 28618736ull);
	cr_assert_eq(ch_lc_parse_psi("full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", &a10, &tot), CH_ERR_RUNTIME);
	cr_assert_eq(ch_lc_parse_psi("some avg10=x\n", &a10, &tot), CH_ERR_RUNTIME);
}

Test(loader_proc, schedstat_fields)
{
	uint64_t run, wait, sl;
	cr_assert_eq(ch_lc_parse_schedstat("1824695 22561 2\n", &run, &wait, &sl), 0);
	cr_assert_eq(run, 1824695);
	cr_assert_eq(wait, 22561);
	cr_assert_eq(sl, 2);
	cr_assert_eq(ch_lc_parse_schedstat("1 2\n", &run, &wait, &sl), CH_ERR_RUNTIME);
	cr_assert_eq(ch_lc_parse_schedstat("1 2 3 4\n", &run, &wait, &sl), CH_ERR_RUNTIME);
}

Test(loader_proc, this_thread_has_a_schedstat)
{
	char buf[256];
	uint64_t run, wait, sl;
	if (ch_lc_read_text("/proc/thread-self/schedstat", buf, sizeof(buf)) < 0)
		cr_skip_test("no /proc/thread-self/schedstat (kernel without CONFIG_SCHED_INFO)");
	cr_assert_eq(ch_lc_parse_schedstat(buf, &run, &wait, &sl), 0, "'%s'", buf);
	cr_assert(run > 0);
	cr_assert_eq(ch_lc_read_text("/nonexistent/file", buf, sizeof(buf)), -1);
}
