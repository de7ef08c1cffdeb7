/*
 * The energy window of a queued backend (roofline's GPU points,
 * ch_rl_energy_window()) against the stand-in NVML of tests/fake-nvml: a
 * counter that advances only while calls run and is refreshed every 20 ms,
 * and violation counters. The stand-in device runs its calls on a nominal
 * timeline (a call of D seconds, then a launch gap G) that it tells the
 * fake NVML about, so the truth (energy and busy time over any interval) is
 * known exactly; the window must find a duty cycle and an energy within 2%
 * of it, and withhold GFLOP/J when the device idles.
 *
 * The fake library is loaded by path before ch_nvml_init(), whose dlopen of
 * "libnvidia-ml.so.1" then finds it by its SONAME. Built by `make unit` and
 * `make test` ($B/tests/fake-nvml/libnvidia-ml.so.1, B=build by default).
 */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <dlfcn.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/ch_common.h"
#include "base/ch_result.h"
#include "base/ch_stats.h"
#include "bench/roofline/ch_roofline.h"
#include "hw/ch_nvml.h"
#include "kernels/ch_kernels.h"

static int (*fake_busy)(unsigned, double, int, double, double);
static double (*fake_energy_between)(unsigned, double, double);
static double (*fake_busy_between)(unsigned, double, double);

/* Load the stand-in NVML; fails the test when it was not built. */
static void load_fake(void)
{
	const char *b = getenv("B");
	char path[512];
	void *h;

	snprintf(path, sizeof(path), "%s/tests/fake-nvml/libnvidia-ml.so.1", b && *b ? b : "build");
	h = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
	cr_assert_not_null(h, "%s: %s (make unit builds it)", path, dlerror());
	*(void **)&fake_busy = dlsym(h, "fake_nvml_busy");
	*(void **)&fake_energy_between = dlsym(h, "fake_nvml_energy_between");
	*(void **)&fake_busy_between = dlsym(h, "fake_nvml_busy_between");
	cr_assert(fake_busy && fake_energy_between && fake_busy_between);
	cr_assert_eq(ch_nvml_init(NULL, 0), 0);
}

/* ---- the stand-in device: an asynchronous GPU on a nominal timeline */
struct ch_dev {
	unsigned index;
	ch_nvml_dev_t nv;
	double call_sec, gap_sec;  /* each call: busy call_sec, then idle gap_sec */
	double busy_until;         /* end of the last queued call */
	double slot_t0[2], slot_t1[2];
	int slot_used[2];
};

static double sim_call_sec = 0.002, sim_gap_sec = 0;

static void sleep_until(double t)
{
	double d = t - ch_now_sec();
	if (d > 0) {
		struct timespec ts = { (time_t)d, (long)((d - (double)(time_t)d) * 1e9) };
		nanosleep(&ts, NULL);
	}
}

static int sim_probe(char *why, size_t n) { (void)why; (void)n; return 0; }
static int sim_count(void) { return 2; }
static int sim_open(int index, struct ch_dev **out, char *why, size_t n)
{
	struct ch_dev *d = calloc(1, sizeof(*d));
	(void)why; (void)n;
	d->index = (unsigned)index;
	d->call_sec = sim_call_sec;
	d->gap_sec = sim_gap_sec;
	cr_assert_eq(ch_nvml_device_by_index((unsigned)index, &d->nv), 0);
	*out = d;
	return 0;
}
static void sim_close(struct ch_dev *d) { free(d); }
static int sim_info(struct ch_dev *d, struct ch_dev_info *o)
{
	memset(o, 0, sizeof(*o));
	snprintf(o->kind, sizeof(o->kind), "gpu");
	snprintf(o->name, sizeof(o->name), "NVIDIA H100 80GB HBM3");
	snprintf(o->pci_bus_id, sizeof(o->pci_bus_id), "0000:%02x:00.0", 0x1b + d->index);
	o->mem_total_bytes = o->mem_free_bytes = 1ull << 30;
	o->cache_bytes = 1 << 20;
	o->units = 132;
	snprintf(o->isa, sizeof(o->isa), "sm_90");
	return 0;
}
static unsigned sim_dtypes(struct ch_dev *d, const struct ch_kernel *k)
{
	(void)d;
	return k->family == CH_FAM_GEMM ? CH_DT_BIT(CH_FP8) | CH_DT_BIT(CH_BF16) : 0;
}
static int sim_alloc(struct ch_dev *d, uint64_t bytes) { (void)d; (void)bytes; return 0; }
static int sim_setup(struct ch_dev *d, const struct ch_point_spec *p) { (void)d; (void)p; return 0; }
/* @calls calls from max(now, busy_until), told to the fake NVML */
static void sim_enqueue(struct ch_dev *d, int calls, double *t0, double *t1)
{
	double now = ch_now_sec(), s = d->busy_until > now ? d->busy_until : now;
	double period = d->call_sec + d->gap_sec;
	cr_assert_eq(fake_busy(d->index, s, calls, period, d->call_sec), 0);
	*t0 = s;
	*t1 = s + calls * period;
	d->busy_until = *t1;
}
static int sim_run(struct ch_dev *d, const struct ch_point_spec *p, double *sec)
{
	double t0, t1;
	(void)p;
	sim_enqueue(d, 1, &t0, &t1);
	sleep_until(t1);
	*sec = d->call_sec;
	return 0;
}
static int sim_check(struct ch_dev *d, const struct ch_point_spec *p, struct ch_check *c)
{
	(void)d; (void)p;
	memset(c, 0, sizeof(*c));
	c->ok = 1;
	c->checked = 1;
	return 0;
}
static int sim_energy(struct ch_dev *d, double *j) { return ch_nvml_energy_j(d->nv, j); }
static int sim_throttle(struct ch_dev *d, struct ch_nvml_violations *v) { return ch_nvml_violations(d->nv, v); }
static int sim_queue(struct ch_dev *d, const struct ch_point_spec *p, int calls, int slot)
{
	(void)p;
	cr_assert(!d->slot_used[slot], "slot %d queued twice", slot);
	sim_enqueue(d, calls, &d->slot_t0[slot], &d->slot_t1[slot]);
	d->slot_used[slot] = 1;
	return 0;
}
static int sim_batch_done(struct ch_dev *d, int slot, int wait, double *t0, double *t1)
{
	cr_assert(d->slot_used[slot]);
	if (ch_now_sec() < d->slot_t1[slot]) {
		if (!wait)
			return 0;
		sleep_until(d->slot_t1[slot]);
	}
	*t0 = d->slot_t0[slot];
	*t1 = d->slot_t1[slot];
	d->slot_used[slot] = 0;
	return 1;
}

static const struct ch_backend sim_gpu = {
	.name = "sim",
	.probe = sim_probe,
	.count = sim_count,
	.open = sim_open,
	.close = sim_close,
	.info = sim_info,
	.dtypes = sim_dtypes,
	.alloc_arrays = sim_alloc,
	.setup = sim_setup,
	.run = sim_run,
	.check = sim_check,
	.energy_j = sim_energy,
	.energy_window_sec = 0.5,
	.queue = sim_queue,
	.batch_done = sim_batch_done,
	.throttle_ns = sim_throttle,
	.fp8_fast_accum = 1,
};

#define WATTS 500.0 /* the fake's busy power */

/* One window on gpu @index with calls of @call_sec and gaps of @gap_sec;
 * checks duty cycle and energy against the fake's truth within 2%. */
static void window(unsigned index, double call_sec, double gap_sec, struct ch_rl_energy *e)
{
	struct ch_point_spec p = { .k = ch_kernel_find("gemm"), .dt = CH_FP8, .shape = { .m = 64, .nn = 64, .kk = 64 } };
	struct ch_dev *d;
	double flops = 2.0 * 64 * 64 * 64, truth_e, truth_duty;
	char why[64];

	load_fake();
	sim_call_sec = call_sec;
	sim_gap_sec = gap_sec;
	cr_assert_eq(sim_gpu.open((int)index, &d, why, sizeof(why)), 0);
	cr_assert_eq(ch_rl_energy_window(&sim_gpu, d, &p, call_sec, flops, 0.5, e), 0);
	cr_assert(e->ok, "not measured: %s", e->why);
	cr_assert_geq(e->wall_sec, 0.5);
	cr_assert_float_eq(e->t1 - e->t0, e->wall_sec, 1e-12);
	truth_e = fake_energy_between(index, e->t0, e->t1);
	truth_duty = fake_busy_between(index, e->t0, e->t1) / e->wall_sec;
	cr_assert_lt(fabs(e->energy_j - truth_e), 0.02 * truth_e, "energy %.4f J, truth %.4f J", e->energy_j, truth_e);
	cr_assert_lt(fabs(e->duty - truth_duty), 0.02 * truth_duty, "duty %.4f, truth %.4f", e->duty, truth_duty);
	cr_assert_float_eq(e->avg_power_w, e->energy_j / e->wall_sec, 1e-9 * e->avg_power_w);
	/* the calls were queued in batches of >= 50 ms */
	cr_assert_geq(e->batch_calls * call_sec, CH_RL_ENERGY_BATCH_SEC - 1e-12);
	cr_assert_geq(e->batches, 5);
	sim_gpu.close(d);
}

Test(energy_window, busy_device_energy_and_gflop_per_j_within_2pct_of_truth, .timeout = 60)
{
	struct ch_rl_energy e;
	double flops = 2.0 * 64 * 64 * 64;

	window(0, 0.002, 0, &e);
	/* back to back: busy all the time, so every joule went into calls */
	cr_assert_gt(e.duty, 0.98);
	cr_assert(!isnan(e.gflop_per_j), "withheld: %s", e.withheld);
	cr_assert_lt(fabs(e.gflop_per_j - flops / (WATTS * 0.002) / 1e9), 0.02 * flops / (WATTS * 0.002) / 1e9,
		     "%.6g GFLOP/J", e.gflop_per_j);
	cr_assert_lt(fabs(e.avg_power_w - WATTS), 0.02 * WATTS);
	/* gpu0 is never held down */
	cr_assert(e.have_thr);
	cr_assert_float_eq(e.v1.power_ns - e.v0.power_ns, 0, 0);
	json_decref(e.tel0);
	json_decref(e.tel1);
}

Test(energy_window, idle_gaps_lower_the_duty_cycle_and_withhold_gflop_per_j, .timeout = 60)
{
	struct ch_rl_energy e;
	json_t *j;

	/* 2 ms calls with 0.5 ms launch gaps: busy 80% of the time */
	window(0, 0.002, 0.0005, &e);
	cr_assert_lt(fabs(e.duty - 0.8), 0.02 * 0.8, "duty %.4f", e.duty);
	cr_assert(isnan(e.gflop_per_j));
	cr_assert_not_null(strstr(e.withheld, "duty cycle 0.8"), "%s", e.withheld);
	j = ch_rl_energy_json(&e);
	cr_assert_str_eq(json_string_value(json_object_get(j, "gflop_per_j_withheld")), e.withheld);
	cr_assert_float_eq(json_number_value(json_object_get(j, "duty_cycle")), e.duty, 1e-12);
	cr_assert_float_eq(json_number_value(json_object_get(j, "calls")), e.calls, 1e-9);
	cr_assert_null(json_object_get(j, "not_measured"));
	json_decref(j);
	json_decref(e.tel0);
	json_decref(e.tel1);
}

Test(energy_window, throttling_during_the_window_is_counted, .timeout = 60)
{
	struct ch_rl_energy e;
	json_t *j;
	int thr;
	double busy;

	/* gpu1's power violation time is a quarter of its busy time */
	window(1, 0.002, 0, &e);
	cr_assert(e.have_thr);
	busy = fake_busy_between(1, e.v0.t_sec, e.v1.t_sec);
	j = ch_rl_throttle_json(&e, &thr);
	cr_assert_eq(thr, 1);
	cr_assert_lt(fabs(json_number_value(json_object_get(j, "power_sec")) - 0.25 * busy), 0.02 * 0.25 * busy);
	cr_assert_float_eq(json_number_value(json_object_get(j, "thermal_sec")), 0, 0);
	/* clock-event reason counters (every build reads them): gpu1's SW and
	 * HW thermal counters a tenth and a twentieth of its busy time, its
	 * power brake counter not supported */
	cr_assert_lt(fabs(json_number_value(json_object_get(j, "sw_thermal_sec")) - 0.10 * busy), 0.02 * 0.10 * busy);
	cr_assert_lt(fabs(json_number_value(json_object_get(j, "hw_thermal_sec")) - 0.05 * busy), 0.02 * 0.05 * busy);
	cr_assert(json_is_null(json_object_get(j, "hw_power_brake_sec")));
	json_decref(j);
	json_decref(e.tel0);
	json_decref(e.tel1);
}

Test(energy_window, a_counter_that_never_changes_is_not_measured, .timeout = 60)
{
	struct ch_point_spec p = { .k = ch_kernel_find("gemm"), .dt = CH_FP8, .shape = { .m = 64, .nn = 64, .kk = 64 } };
	struct ch_rl_energy e;
	struct ch_dev *d;
	char why[64];
	json_t *j;

	setenv("FAKE_NVML_REFRESH_MS", "60000", 1); /* read by the fake at nvmlInit */
	load_fake();
	cr_assert_eq(sim_gpu.open(0, &d, why, sizeof(why)), 0);
	cr_assert_eq(ch_rl_energy_window(&sim_gpu, d, &p, 0.002, 1e6, 0.5, &e), 0);
	cr_assert_not(e.ok);
	cr_assert(isnan(e.energy_j) && isnan(e.gflop_per_j));
	cr_assert_not_null(strstr(e.why, "did not change"), "%s", e.why);
	j = ch_rl_energy_json(&e);
	cr_assert_str_eq(json_string_value(json_object_get(j, "not_measured")), e.why);
	cr_assert(json_is_null(json_object_get(j, "wall_sec")));
	json_decref(j);
	json_decref(e.tel0);
	sim_gpu.close(d);
}

/* The whole point through roofline's driver: fp8 GEMM measured with both
 * accumulations, labelled, each with its batched window and throttle
 * counters; a bf16 GEMM has no accumulation label. */
Test(energy_window, roofline_points_carry_window_duty_and_fp8_accumulation, .init = cr_redirect_stderr, .timeout = 60)
{
	const char *argv[] = { "roofline", "--kernels", "gemm", "--dtype", "bf16,fp8", "--gemm-size", "64",
			       "--iters", "3", "--devices", "1" };
	struct ch_rl_opts o;
	struct ch_world mpi = { .size = 1, .local_size = 1, .nhosts = 1, .host = "test" };
	struct ch_result *res;
	json_t *devs = json_array(), *pts, *p;
	char reason[256];
	const char *acc[2] = { NULL, NULL };
	size_t i;
	int rc, nfp8 = 0;

	load_fake();
	sim_call_sec = 0.002;
	sim_gap_sec = 0;
	cr_assert_eq(ch_rl_parse(11, (char **)argv, &o), 0);
	cr_assert_eq(ch_run_begin("roofline", 11, (char **)argv, &o.common, &res), 0);
	rc = ch_rl_run_backend(&o, &mpi, &sim_gpu, res, devs, reason, sizeof(reason));
	cr_assert_eq(rc, CH_OK, "%s", reason);
	pts = json_object_get(json_array_get(devs, 0), "points");
	cr_assert_eq(json_array_size(pts), 3);
	json_array_foreach(pts, i, p) {
		json_t *tel = json_object_get(p, "telemetry"), *w = json_object_get(tel, "energy_window");
		const char *dt = json_string_value(json_object_get(p, "dtype"));
		cr_assert(json_is_true(json_object_get(p, "valid")));
		cr_assert_gt(json_number_value(json_object_get(w, "duty_cycle")), 0.95);
		cr_assert(json_is_number(json_object_get(tel, "gflop_per_j")), "point %zu", i);
		cr_assert_gt(json_integer_value(json_object_get(w, "batches")), 4);
		/* gpu1 ran a quarter of the time held down by power */
		cr_assert(json_is_true(json_object_get(p, "throttled")));
		cr_assert_gt(json_number_value(json_object_get(json_object_get(p, "throttle_window"), "power_sec")), 0);
		if (!strcmp(dt, "fp8"))
			acc[nfp8++] = json_string_value(json_object_get(p, "accumulation"));
		else
			cr_assert_null(json_object_get(p, "accumulation"));
	}
	cr_assert_eq(nfp8, 2);
	cr_assert_str_eq(acc[0], "split");
	cr_assert_str_eq(acc[1], "fast");
	cr_assert_not_null(strstr(json_string_value(json_object_get(json_object_get(json_object_get(
		json_array_get(devs, 0), "roofs"), "compute_kernel"), "fp8")), "accumulation"));
	ch_result_free(res);
	json_decref(devs);
}
