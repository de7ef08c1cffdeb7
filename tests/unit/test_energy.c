#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/ch_common.h"
#include "hw/ch_energy.h"
#include "bench/common/ch_opts.h"
#include "base/ch_result.h"

static char dir[64];

static void mkdir_tmp(void)
{
	strcpy(dir, "/tmp/ch_energy_XXXXXX");
	cr_assert_not_null(mkdtemp(dir));
}

static void rm_tmp(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		cr_log_warn("cannot remove %s", dir);
}

static void put(const char *domain, const char *file, const char *text)
{
	char path[256];
	FILE *f;
	snprintf(path, sizeof(path), "%s/%s", dir, domain);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%s/%s", dir, domain, file);
	f = fopen(path, "w");
	cr_assert_not_null(f, "%s", path);
	fputs(text, f);
	fclose(f);
}

TestSuite(energy, .init = mkdir_tmp, .fini = rm_tmp);

Test(energy, rapl_delta_wraps)
{
	cr_assert_eq(ch_energy_rapl_delta_uj(100, 350, 1000), 250);
	cr_assert_eq(ch_energy_rapl_delta_uj(900, 100, 1000), 200);
	cr_assert_eq(ch_energy_rapl_delta_uj(5, 5, 1000), 0);
}

/* A fake powercap tree replaying two packages, a psys domain and a core
 * sub-domain: only the packages count, and a wrap-around is accumulated. */
Test(energy, rapl_packages_only_with_wraparound)
{
	struct ch_energy e;
	struct ch_energy_reading r;

	put("intel-rapl:0", "name", "package-0\n");
	put("intel-rapl:0", "max_energy_range_uj", "262143328850\n");
	put("intel-rapl:0", "energy_uj", "262143000000\n");
	put("intel-rapl:1", "name", "package-1\n");
	put("intel-rapl:1", "max_energy_range_uj", "262143328850\n");
	put("intel-rapl:1", "energy_uj", "1000000\n");
	put("intel-rapl:2", "name", "psys\n");
	put("intel-rapl:2", "max_energy_range_uj", "262143328850\n");
	put("intel-rapl:2", "energy_uj", "5\n");
	put("intel-rapl:0:0", "name", "core\n");
	put("intel-rapl:0:0", "max_energy_range_uj", "262143328850\n");
	put("intel-rapl:0:0", "energy_uj", "7\n");

	cr_assert_eq(ch_energy_start_at(&e, dir, 0), 0);
	cr_assert_eq(e.n_rapl, 2);
	/* package-0 wraps: 328850 uJ to the top, then 671150 uJ: 1 J;
	 * package-1 advances 2 J; psys and core change but must not count */
	put("intel-rapl:0", "energy_uj", "671150\n");
	put("intel-rapl:1", "energy_uj", "3000000\n");
	put("intel-rapl:2", "energy_uj", "99999999\n");
	put("intel-rapl:0:0", "energy_uj", "99999999\n");
	cr_assert_eq(ch_energy_read(&e, &r), 0);
	cr_assert_float_eq(r.cpu_j, 3.0, 1e-9);
	cr_assert(isnan(r.gpu_j));
	cr_assert_str_eq(r.source, "rapl");
	cr_assert_geq(r.wall_sec, 0.0);
	/* a second read accumulates from the last one */
	put("intel-rapl:1", "energy_uj", "4000000\n");
	ch_energy_read(&e, &r);
	cr_assert_float_eq(r.cpu_j, 4.0, 1e-9);
	ch_energy_stop(&e);
}

Test(energy, unreadable_is_unavailable_not_error)
{
	struct ch_energy e;
	struct ch_energy_reading r;
	char missing[96];
	json_t *j;

	snprintf(missing, sizeof(missing), "%s/none", dir);
	cr_assert_eq(ch_energy_start_at(&e, missing, 0), 0);
	cr_assert_eq(ch_energy_read(&e, &r), 0);
	cr_assert(isnan(r.cpu_j));
	cr_assert(isnan(r.gpu_j));
	cr_assert_str_eq(r.source, "unavailable");
	j = ch_energy_json(&r);
	cr_assert(json_is_null(json_object_get(j, "cpu_j")));
	cr_assert(json_is_null(json_object_get(j, "gpu_j")));
	cr_assert(json_is_number(json_object_get(j, "wall_sec")));
	cr_assert_str_eq(json_string_value(json_object_get(j, "source")), "unavailable");
	json_decref(j);
	ch_energy_stop(&e);
}

/* ch_run_begin() starts the counters; checkpoint and finish write "energy". */
Test(energy, envelope_key_written)
{
	char *argv[] = { "roofline" };
	struct ch_common_opts o;
	struct ch_result *r;
	char path[128];
	json_error_t err;
	json_t *doc, *en, *src;

	snprintf(path, sizeof(path), "%s/r.json", dir);
	ch_common_opts_init(&o);
	o.json_path = path;
	cr_assert_eq(ch_run_begin("roofline", 1, argv, &o, &r), 0);
	cr_assert_eq(ch_result_checkpoint(r), 0);
	cr_assert_eq(ch_result_finish(r, CH_OK, NULL), 0);
	doc = json_load_file(path, 0, &err);
	cr_assert_not_null(doc, "%s", err.text);
	en = json_object_get(doc, "energy");
	cr_assert(json_is_object(en));
	cr_assert(json_is_number(json_object_get(en, "wall_sec")));
	cr_assert(json_is_number(json_object_get(en, "cpu_j")) || json_is_null(json_object_get(en, "cpu_j")));
	cr_assert(json_is_number(json_object_get(en, "gpu_j")) || json_is_null(json_object_get(en, "gpu_j")));
	src = json_object_get(en, "source");
	cr_assert(json_is_string(src));
	cr_assert(!strcmp(json_string_value(src), "rapl") || !strcmp(json_string_value(src), "nvml") ||
		  !strcmp(json_string_value(src), "rapl+nvml") || !strcmp(json_string_value(src), "unavailable"));
	json_decref(doc);
	ch_result_free(r);
}

/* A counter refreshed every 50 ms at 400 W: reading at t gives
 * 400 x floor(t / 0.05) x 0.05 J. */
static double fake_counter(double t)
{
	return 400.0 * floor(t / 0.05 + 1e-9) * 0.05;
}

Test(energy, window_waits_for_the_counter)
{
	struct ch_energy_window w;
	struct ch_energy_window_result r;
	double t = 1.001;
	int calls = 0;

	/* calls of 2 ms each: a 10-call window sees the counter change once at most */
	ch_energy_window_start(&w, t, fake_counter(t), 0.5, 5, 2.0);
	for (calls = 0; calls < 10; calls++) {
		t += 0.002;
		ch_energy_window_add(&w, 1, t, fake_counter(t));
	}
	cr_assert_eq(ch_energy_window_more(&w), 1);
	ch_energy_window_result(&w, 1e9, &r);
	cr_assert_eq(r.ok, 0);
	cr_assert(isnan(r.energy_j) && isnan(r.avg_power_w) && isnan(r.gflop_per_j));
	cr_assert_not_null(strstr(r.why, "shorter than 0.500 s"), "%s", r.why);
	/* repeated until half a second: 10 refreshes, 250 calls */
	while (ch_energy_window_more(&w)) {
		t += 0.002;
		ch_energy_window_add(&w, 1, t, fake_counter(t));
		calls++;
	}
	ch_energy_window_result(&w, 1e9, &r);
	cr_assert_eq(r.ok, 1, "%s", r.why);
	cr_assert_eq(r.calls, 250);
	cr_assert_eq(r.calls, calls);
	cr_assert_eq(r.updates, 10);
	cr_assert_float_eq(r.wall_sec, 0.5, 1e-9);
	cr_assert_float_eq(r.energy_j, 200.0, 1e-9);        /* 10 refreshes of 20 J */
	cr_assert_float_eq(r.avg_power_w, 400.0, 1e-6);     /* over wall time, not kernel time */
	cr_assert_float_eq(r.gflop_per_j, 250.0 / 200.0, 1e-12);
	cr_assert_str_eq(r.why, "");
}

Test(energy, window_needs_counter_updates)
{
	struct ch_energy_window w;
	struct ch_energy_window_result r;

	/* a counter that never moves: the window gives up at max_sec, no energy */
	ch_energy_window_start(&w, 0, 5000, 0.5, 5, 2.0);
	ch_energy_window_add(&w, 100, 1.0, 5000);
	cr_assert_eq(ch_energy_window_more(&w), 1); /* long enough, but no update yet */
	ch_energy_window_add(&w, 100, 2.0, 5000);
	cr_assert_eq(ch_energy_window_more(&w), 0);
	ch_energy_window_result(&w, 1e9, &r);
	cr_assert_eq(r.ok, 0);
	cr_assert_eq(r.calls, 200);
	cr_assert(isnan(r.energy_j));
	cr_assert_not_null(strstr(r.why, "changed 0 time(s)"), "%s", r.why);
	/* unread readings (NAN) count the calls and the time only */
	ch_energy_window_start(&w, 0, 10, 0.1, 1, 0.1);
	ch_energy_window_add(&w, 3, 0.2, NAN);
	cr_assert_eq(ch_energy_window_more(&w), 0);
	ch_energy_window_result(&w, 0, &r);
	cr_assert_eq(r.ok, 0);
	cr_assert_eq(r.calls, 3);
	cr_assert_eq(r.updates, 0);
}
