/*
 * hw/ch_procfs.h: the /proc parsers on known texts, the host-load sample on
 * the trees of tests/data/procfs, and the envelope's "conditions" object.
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "base/ch_common.h"
#include "hw/ch_procfs.h"

#define TREES "tests/data/procfs/"

static const char *why(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(json_object_get(o, "reasons"), k));
}

Test(procfs, stat_first_cpu_line_and_cpus)
{
	const char *text = "cpu  14082 5 10490 131659 583 1 95 93 0 0\n"
			   "cpu0 6495 0 4829 67071 46 0 10 45 0 0\n"
			   "cpu1 6495 0 4829 67071 46 0 10 45 0 0\n"
			   "cpu3 6495 0 4829 67071 46 0 10 45 0 0\n"
			   "intr 1 2 3\n";
	struct ch_proc_cpu_times t;
	int n = -1;

	cr_assert_eq(ch_proc_parse_stat(text, &t, &n), 0);
	cr_assert_eq(n, 3); /* online CPUs: one line each, numbered with gaps */
	cr_assert_eq(t.user, 14082);
	cr_assert_eq(t.nice, 5);
	cr_assert_eq(t.system, 10490);
	cr_assert_eq(t.idle, 131659);
	cr_assert_eq(t.iowait, 583);
	cr_assert_eq(t.irq, 1);
	cr_assert_eq(t.softirq, 95);
	cr_assert_eq(t.steal, 93);
	cr_assert_eq(ch_proc_cpu_ticks(&t), 14082u + 5 + 10490 + 131659 + 583 + 1 + 95 + 93);
}

Test(procfs, stat_malformed)
{
	struct ch_proc_cpu_times t;
	cr_assert_eq(ch_proc_parse_stat("cpu0 1 2 3 4\n", &t, NULL), CH_ERR_RUNTIME);
	cr_assert_eq(ch_proc_parse_stat("cpu  1 2\n", &t, NULL), CH_ERR_RUNTIME);
	cr_assert_eq(ch_proc_parse_stat("", &t, NULL), CH_ERR_RUNTIME);
	/* a 2.6-era line with 4 fields still parses */
	cr_assert_eq(ch_proc_parse_stat("cpu  1 2 3 4\n", &t, NULL), 0);
	cr_assert_eq(t.steal, 0);
}

Test(procfs, utilisation_and_steal)
{
	/* 1000 ticks elapse: 600 user, 100 system, 150 idle, 50 iowait, 100 steal */
	struct ch_proc_cpu_times a = { 100, 0, 100, 800, 0, 0, 0, 0 };
	struct ch_proc_cpu_times b = { 700, 0, 200, 950, 50, 0, 0, 100 };
	double util, steal;

	ch_proc_cpu_util(&a, &b, &util, &steal);
	cr_assert_float_eq(util, 0.8, 1e-12); /* 1 - (150 + 50) / 1000 */
	cr_assert_float_eq(steal, 0.1, 1e-12);
	ch_proc_cpu_util(&a, &a, &util, &steal);
	cr_assert_eq(util, 0);
	cr_assert_eq(steal, 0);
}

Test(procfs, busy_share_less_the_runs_own_ticks)
{
	struct ch_proc_cpu_times a = { 100, 0, 100, 800, 0, 0, 0, 0 };
	struct ch_proc_cpu_times b = { 700, 0, 200, 950, 50, 0, 0, 100 };
	double busy, run;

	/* 800 of 1000 ticks busy, 300 of them the run's own: 50% others, 30% run */
	cr_assert_eq(ch_proc_busy_pct(&a, &b, 300, &busy, &run), 0);
	cr_assert_float_eq(busy, 50.0, 1e-9);
	cr_assert_float_eq(run, 30.0, 1e-9);
	/* the run's ticks counted more than the busy ones (tick rounding): 0, not negative */
	cr_assert_eq(ch_proc_busy_pct(&a, &b, 900, &busy, &run), 0);
	cr_assert_eq(busy, 0.0);
	cr_assert_float_eq(run, 90.0, 1e-9);
	/* no tick elapsed: not a number */
	cr_assert_eq(ch_proc_busy_pct(&a, &a, 0, &busy, &run), -1);
	cr_assert(isnan(busy) && isnan(run));
}

Test(procfs, pressure_some_line)
{
	const char *text = "some avg10=1.25 avg60=5.96 avg300=4.94 total=28618736\n"
			   "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
	double a10;
	uint64_t tot;

	cr_assert_eq(ch_proc_parse_psi(text, &a10, &tot), 0);
	cr_assert_float_eq(a10, 1.25, 1e-12);
	cr_assert_eq(tot, 28618736ull);
	cr_assert_eq(ch_proc_parse_psi("full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n", &a10, &tot), CH_ERR_RUNTIME);
	cr_assert_eq(ch_proc_parse_psi("some avg10=x\n", &a10, &tot), CH_ERR_RUNTIME);
	cr_assert_eq(ch_proc_parse_psi("some avg10=250.00 avg60=0 avg300=0 total=0\n", &a10, &tot), CH_ERR_RUNTIME);
}

Test(procfs, loadavg_and_pid_stat)
{
	double l1 = -1;
	uint64_t t = 0;

	cr_assert_eq(ch_proc_parse_loadavg("1.93 0.96 0.42 2/106 17363\n", &l1), 0);
	cr_assert_float_eq(l1, 1.93, 1e-12);
	cr_assert_eq(ch_proc_parse_loadavg("1.93 0.96\n", &l1), CH_ERR_RUNTIME);
	cr_assert_eq(ch_proc_parse_loadavg("-1 0 0 1/1 1\n", &l1), CH_ERR_RUNTIME);
	/* a command name with a space and a parenthesis */
	cr_assert_eq(ch_proc_parse_pid_stat("77 (a) b) R 1 77 77 0 -1 0 0 0 0 0 40 2 0 0 20 0 1 0 5\n", &t), 0);
	cr_assert_eq(t, 42);
	cr_assert_eq(ch_proc_parse_pid_stat("77 (a R 1\n", &t), CH_ERR_RUNTIME);
	cr_assert_eq(ch_proc_parse_pid_stat("77 (a) R 1 2\n", &t), CH_ERR_RUNTIME);
}

Test(procfs, read_text)
{
	char buf[64];
	cr_assert_eq(ch_proc_read_text("/nonexistent/file", buf, sizeof(buf)), -1);
	cr_assert_gt(ch_proc_read_text(TREES "busy/proc/loadavg", buf, sizeof(buf)), 0);
	cr_assert_eq(strncmp(buf, "1.93 ", 5), 0);
}

Test(procfs, sample_of_a_busy_tree)
{
	struct ch_host_load l;
	long pid = 4242;

	cr_assert_eq(ch_host_load_sample(TREES "busy", 0.01, &pid, 1, &l), 0);
	cr_assert_float_eq(l.loadavg_1m, 1.93, 1e-12);
	cr_assert_float_eq(l.psi_some_avg10_pct, 37.2, 1e-12);
	cr_assert_eq(l.online_cpus, 2);
	/* the files do not change: no tick elapsed, said so */
	cr_assert(isnan(l.cpu_busy_pct));
	cr_assert(strstr(l.why_busy, "no CPU tick elapsed"), "%s", l.why_busy);
	cr_assert_eq(strlen(l.utc), 20);
	cr_assert_eq(l.why_loadavg[0], '\0');
	cr_assert_eq(l.why_psi[0], '\0');
}

Test(procfs, sample_without_psi_and_broken)
{
	struct ch_host_load l;
	long pid = 4242;

	ch_host_load_sample(TREES "no-psi", 0.01, &pid, 1, &l);
	cr_assert(isnan(l.psi_some_avg10_pct));
	cr_assert_str_eq(l.why_psi, "/proc/pressure/cpu absent (kernel without PSI)");
	cr_assert_float_eq(l.loadavg_1m, 1.93, 1e-12);
	ch_host_load_sample(TREES "broken", 0.01, &pid, 1, &l);
	cr_assert(isnan(l.loadavg_1m) && isnan(l.psi_some_avg10_pct) && isnan(l.cpu_busy_pct));
	cr_assert(strstr(l.why_loadavg, "/proc/loadavg: not in the format"), "%s", l.why_loadavg);
	cr_assert(strstr(l.why_psi, "no line \"some avg10="), "%s", l.why_psi);
	cr_assert(strstr(l.why_busy, "no aggregate \"cpu \" line"), "%s", l.why_busy);
	cr_assert_eq(l.online_cpus, 0);
	ch_host_load_sample(TREES "nonexistent", 0.01, NULL, 0, &l);
	cr_assert_str_eq(l.why_loadavg, "/proc/loadavg: absent");
	cr_assert_str_eq(l.why_busy, "/proc/stat: absent");
}

Test(procfs, this_machine_busy_share)
{
	struct ch_host_load l;

	ch_host_load_sample("", 0.05, NULL, 0, &l);
	if (!isfinite(l.cpu_busy_pct))
		cr_skip_test("no /proc/stat here: %s", l.why_busy);
	cr_assert(l.cpu_busy_pct >= 0 && l.cpu_busy_pct <= 100, "%g", l.cpu_busy_pct);
	cr_assert(isfinite(l.run_cpu_pct), "%s", l.why_run);
	cr_assert_gt(l.online_cpus, 0);
}

Test(procfs, conditions_object)
{
	struct ch_host_load b, a;
	json_t *c, *c2;
	long pid = 4242;

	ch_host_load_sample(TREES "no-psi", 0.01, &pid, 1, &b);
	c = ch_conditions_json(&b, NULL, 4, 1);
	cr_assert_not_null(c);
	cr_assert(json_is_null(json_object_get(c, "after")));
	cr_assert_eq(json_integer_value(json_object_get(c, "online_cpus")), 2);
	cr_assert_eq(json_integer_value(json_object_get(c, "procs_on_host")), 4);
	cr_assert_eq(json_integer_value(json_object_get(c, "threads_per_proc")), 1);
	cr_assert_float_eq(json_real_value(json_object_get(c, "per_core")), 2.0, 1e-12);
	cr_assert_float_eq(json_real_value(json_object_get(json_object_get(c, "before"), "loadavg_1m")), 1.93, 1e-12);
	cr_assert(json_is_null(json_object_get(json_object_get(c, "before"), "cpu_pressure_some_avg10_pct")));
	cr_assert_str_eq(why(c, "cpu_pressure_some_avg10_pct"), "/proc/pressure/cpu absent (kernel without PSI)");
	cr_assert(strstr(why(c, "cpu_busy_pct"), "no CPU tick elapsed"));
	/* threads set later: per_core follows */
	cr_assert_eq(ch_conditions_set_load(c, 4, 3), 0);
	cr_assert_float_eq(json_real_value(json_object_get(c, "per_core")), 6.0, 1e-12);
	cr_assert_eq(ch_conditions_set_load(c, 0, 3), CH_ERR_USAGE);
	/* after: a copy with the end's sample; a reason only new to the end is marked so */
	ch_host_load_sample(TREES "busy", 0.01, &pid, 1, &a);
	c2 = ch_conditions_set_after(c, &a, NULL);
	cr_assert_not_null(c2);
	cr_assert(json_is_null(json_object_get(c, "after"))); /* the original is untouched */
	cr_assert_float_eq(json_real_value(json_object_get(json_object_get(c2, "after"), "cpu_pressure_some_avg10_pct")),
			   37.2, 1e-12);
	cr_assert_str_eq(why(c2, "cpu_pressure_some_avg10_pct"), "/proc/pressure/cpu absent (kernel without PSI)");
	json_decref(c2);
	ch_host_load_sample(TREES "broken", 0.01, &pid, 1, &a);
	c2 = ch_conditions_set_after(c, &a, NULL);
	cr_assert(strstr(why(c2, "loadavg_1m"), "after: /proc/loadavg: not in the format"), "%s", why(c2, "loadavg_1m"));
	json_decref(c2);
	/* no end sample: null with the reason */
	c2 = ch_conditions_set_after(c, NULL, "the run was ended by rank 1");
	cr_assert(json_is_null(json_object_get(c2, "after")));
	cr_assert_str_eq(why(c2, "after"), "the run was ended by rank 1");
	json_decref(c2);
	cr_assert_null(ch_conditions_set_after(json_null(), &a, NULL));
	json_decref(c);
}
