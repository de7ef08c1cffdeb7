/*
 * The schedstat parser of loader_contention (ch_loader_proc.c) on known
 * texts (/proc/stat and PSI: test_procfs.c).
 */
#include <criterion/criterion.h>
#include <math.h>

#include "base/ch_common.h"
#include "bench/loader/ch_loader.h"
#include "hw/ch_procfs.h"

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
	if (ch_proc_read_text("/proc/thread-self/schedstat", buf, sizeof(buf)) < 0)
		cr_skip_test("no /proc/thread-self/schedstat (kernel without CONFIG_SCHED_INFO)");
	cr_assert_eq(ch_lc_parse_schedstat(buf, &run, &wait, &sl), 0, "'%s'", buf);
	cr_assert(run > 0);
	cr_assert_eq(ch_proc_read_text("/nonexistent/file", buf, sizeof(buf)), -1);
}
