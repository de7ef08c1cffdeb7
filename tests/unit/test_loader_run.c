/*
 * One configuration of loader_contention run for real on this machine
 * (ch_loader_run.c), tiny: every batch reaches the feeder and passes its
 * checksum, the metrics are consistent; a wrong reference checksum is
 * caught on every batch.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <criterion/redirect.h>
#include <string.h>

#include "base/ch_common.h"
#include "hw/ch_host.h"
#include "bench/loader/ch_loader.h"
#include "bench/loader/ch_loader_copy.h"
#include "bench/loader/ch_loader_run.h"

static hwloc_topology_t topo;
static struct ch_lc_env env;
static struct ch_lc_gpu gpu[1];
static struct ch_lc_plan plan;

static void setup(void)
{
	char why[256] = "";

	memset(&env, 0, sizeof(env));
	cr_assert_eq(ch_topo_load(NULL, &topo), 0);
	env.topo = topo;
	env.copy = &ch_lc_copy_staging;
	env.ngpus = 1;
	env.units = 1;
	env.ntok = 4096;
	env.step_sec = 0.005;
	env.duration_sec = 0.1;
	env.prefetch = 2;
	cr_assert_eq(ch_lc_shard_make(&env.shard, 3), 0);
	cr_assert_eq(ch_lc_env_expect(&env), 0);
	cr_assert_eq(env.copy->open(0, env.ntok * 4, &env.copy_ctx[0], why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(ch_lc_gpus_emulate(topo, 1, gpu), 0);
	cr_assert_eq(ch_lc_plan_make(topo, gpu, 1, CH_LC_ISOLATED, NULL, &plan, NULL, 0), 0);
}

static void teardown(void)
{
	ch_lc_plan_release(&plan);
	ch_lc_gpus_release(gpu, 1);
	env.copy->close(env.copy_ctx[0]);
	ch_lc_shard_release(&env.shard);
	hwloc_topology_destroy(topo);
}

Test(loader_run, workers_feed_valid_batches, .init = setup, .fini = teardown)
{
	struct ch_lc_cfg cfg = { .name = "isolated-w1", .placement = CH_LC_ISOLATED, .workers = 1,
				 .hog_util = 0, .plan = &plan };
	struct ch_lc_metrics m;

	cr_assert_eq(ch_lc_run_config(&env, &cfg, &m), 0);
	cr_assert_eq(m.steps, 20);              /* 0.1 s of 5 ms steps */
	cr_assert_eq(m.bad_batches, 0);
	cr_assert(m.accel_util > 0 && m.accel_util <= 1.0 + 1e-9, "util %g", m.accel_util);
	cr_assert(m.input_wait_frac >= 0 && m.input_wait_frac < 1, "wait %g", m.input_wait_frac);
	cr_assert(m.late_p50_us <= m.late_p99_us && m.late_p99_us <= m.late_max_us);
	cr_assert(m.wall_sec >= 20 * 0.005 - 1e-9, "wall %g", m.wall_sec);
	cr_assert(m.worker_cpu_sec > 0);
	cr_assert(m.worker_invol_ctx_switches >= 0);
	/* device busy time is one step per batch: util = steps x step / wall */
	cr_assert_float_eq(m.accel_util, 20 * 0.005 / m.wall_sec, 1e-9);
	/* the spread over repeats: 20 steps in 10 windows of 2 */
	cr_assert_eq(m.repeats, CH_LC_REPEATS);
	cr_assert(isfinite(m.accel_util_sd) && m.accel_util_sd >= 0 && m.accel_util_sd < 1, "util sd %g", m.accel_util_sd);
	cr_assert(isfinite(m.input_wait_frac_sd) && m.input_wait_frac_sd >= 0 && m.input_wait_frac_sd < 1, "wait sd %g",
		  m.input_wait_frac_sd);
}

Test(loader_run, baseline_recycles_without_workers, .init = setup, .fini = teardown)
{
	struct ch_lc_plan bp;
	struct ch_lc_cfg cfg = { .name = "baseline", .placement = CH_LC_BASELINE, .workers = 0, .plan = &bp };
	struct ch_lc_metrics m;

	cr_assert_eq(ch_lc_plan_make(topo, gpu, 1, CH_LC_BASELINE, NULL, &bp, NULL, 0), 0);
	cr_assert_eq(ch_lc_run_config(&env, &cfg, &m), 0);
	cr_assert_eq(m.steps, 20);
	cr_assert_eq(m.bad_batches, 0);
	cr_assert_eq(m.worker_cpu_sec, 0);
	ch_lc_plan_release(&bp);
}

Test(loader_run, wrong_reference_checksum_is_caught, .init = setup, .fini = teardown)
{
	struct ch_lc_cfg cfg = { .name = "shared-w2", .placement = CH_LC_SHARED, .workers = 2, .plan = &plan };
	struct ch_lc_metrics m;
	int i;

	for (i = 0; i < CH_LC_NCHUNKS; i++)
		env.expect[i] ^= 1;
	cr_assert_eq(ch_lc_run_config(&env, &cfg, &m), 0);
	cr_assert_eq(m.bad_batches, m.steps);
	cr_assert_eq(ch_lc_judge(&m, 1), CH_LC_FAIL);
}
