#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/ch_common.h"
#include "bench/common/ch_opts.h"
#include "base/ch_result.h"
#include "base/ch_stats.h"
#include "bench/roofline/ch_roofline.h"

#define MIB (1024ull * 1024ull)

static int parse(struct ch_rl_opts *o, int argc, const char **argv)
{
	return ch_rl_parse(argc, (char **)argv, o);
}

Test(roofline, parse_good_values, .init = cr_redirect_stderr)
{
	struct ch_rl_opts o;
	const char *argv[] = { "roofline", "--backend", "cpu,cuda", "--devices", "0,2", "--kernels", "triad,ladder",
			       "--dtype", "fp64,bf16", "--size", "64M", "--gemm-size", "512", "--iters", "5",
			       "--warmup", "0" };
	int n, i;
	const struct ch_kernel *t = ch_kernel_table(&n);

	cr_assert_eq(parse(&o, 17, argv), 0);
	cr_assert_eq(o.backends, CH_RL_BACKEND_CPU | CH_RL_BACKEND_CUDA);
	cr_assert_eq(o.ndevices, 2);
	cr_assert_eq(o.devices[1], 2);
	cr_assert_eq(o.devices_all, 0);
	cr_assert_eq(o.dtypes, CH_DT_BIT(CH_FP64) | CH_DT_BIT(CH_BF16));
	cr_assert_eq(o.size_bytes, 64 * MIB);
	cr_assert_eq(o.gemm_n, 512);
	cr_assert_eq(o.iters, 5);
	cr_assert_eq(o.warmup, 0);
	for (i = 0; i < n; i++)
		cr_assert_eq(!!(o.kernels & (1ull << i)), !strcmp(t[i].name, "triad") || t[i].family == CH_FAM_LADDER,
			     "%s", t[i].name);
	/* defaults */
	cr_assert_eq(parse(&o, 1, argv), 0);
	cr_assert_eq(o.backends, 0);
	cr_assert_eq(o.iters, 4);
	cr_assert_eq(o.warmup, 1);
	cr_assert_eq(o.kernels, 0);
	cr_assert_eq(o.dtypes, 0);
	cr_assert_eq(o.devices_all, 1);
}

struct bad {
	const char *opt, *val, *msg;
};

/* A bad size, dtype, kernel, backend or count is a usage error naming it. */
Test(roofline, parse_bad_values_are_usage_errors, .init = cr_redirect_stderr)
{
	static const struct bad bad[] = {
		{ "--size", "0", "--size" }, { "--size", "12Q", "--size" }, { "--size", "512K", "too small" },
		{ "--size", "-1M", "--size" }, { "--size", "2T", "too large" }, { "--dtype", "fp128", "fp128" },
		{ "--dtype", "fp32,,fp64", "--dtype" }, { "--kernels", "trid", "trid" }, { "--backend", "rocm", "rocm" },
		{ "--iters", "1", "--iters" }, { "--warmup", "x", "--warmup" }, { "--gemm-size", "8", "--gemm-size" },
		{ "--devices", "one", "--devices" }, { "--min-time", "-3", "--min-time" },
	};
	struct ch_rl_opts o;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *argv[] = { "roofline", bad[i].opt, bad[i].val };
		cr_assert_eq(parse(&o, 3, argv), CH_ERR_USAGE, "%s %s accepted", bad[i].opt, bad[i].val);
		cr_assert_eq(ch_exit_code(CH_ERR_USAGE), 2);
	}
	{
		const char *argv[] = { "roofline", "extra" };
		cr_assert_eq(parse(&o, 2, argv), CH_ERR_USAGE);
	}
}

Test(roofline, default_array_bytes)
{
	/* 4/3 of the cache so that three arrays are 4x it */
	cr_assert_eq(ch_rl_default_array_bytes(260 * MIB, 24ull << 30, 0), 347 * MIB);
	/* CPU floor 64 MiB, GPU floor 1 GiB */
	cr_assert_eq(ch_rl_default_array_bytes(8 * MIB, 24ull << 30, 0), 64 * MIB);
	cr_assert_eq(ch_rl_default_array_bytes(50 * MIB, 80ull << 30, 1), 1024 * MIB);
	/* at most an eighth of free memory */
	cr_assert_eq(ch_rl_default_array_bytes(1024 * MIB, 4ull << 30, 0), 512 * MIB);
}

Test(roofline, ladder_rungs_past_the_ridge_are_shortened)
{
	const uint64_t n = 45ull << 20;
	/* ridge = 147 / 13 = 11.3 FLOP/byte: AI 8 runs on all elements */
	cr_assert_eq(ch_rl_ladder_elems(n, 8.0, 128, 13, 147, 0.02, 131072), n);
	/* AI 16 > ridge: 0.02 s x 147e9 / 256 FLOPs = 11484375 -> multiple of 4096 */
	cr_assert_eq(ch_rl_ladder_elems(n, 16.0, 256, 13, 147, 0.02, 131072), 11485184);
	/* never below the minimum, never above n */
	cr_assert_eq(ch_rl_ladder_elems(n, 128.0, 2048, 13, 1, 0.02, 131072), 131072);
	cr_assert_eq(ch_rl_ladder_elems(1000, 128.0, 2048, 13, 147, 0.02, 131072), 1000);
	/* unknown roofs: all elements */
	cr_assert_eq(ch_rl_ladder_elems(n, 128.0, 2048, -1, 147, 0.02, 131072), n);
	cr_assert_eq(ch_rl_ladder_elems(n, 128.0, 2048, 13, -1, 0.02, 131072), n);
}

static json_t *pt(const char *kernel, const char *family, const char *dtype, double gbps, double gflops, int valid)
{
	return json_pack("{s:s,s:s,s:s,s:f,s:f,s:b}", "kernel", kernel, "family", family, "dtype", dtype,
			 "gbps", gbps, "gflops", gflops, "valid", valid);
}

Test(roofline, roofs_from_points)
{
	json_t *points = json_array(), *roofs;

	json_array_append_new(points, pt("copy", "stream", "fp64", 20, 0, 1));
	json_array_append_new(points, pt("triad", "stream", "fp64", 24, 2, 1));
	json_array_append_new(points, pt("add", "stream", "fp64", 99, 4, 0)); /* invalid: ignored */
	json_array_append_new(points, pt("fma1024", "ladder", "fp64", 1, 140, 1));
	json_array_append_new(points, pt("gemm", "gemm", "fp64", 0.2, 60, 1));
	json_array_append_new(points, pt("gemm", "gemm", "fp32", 0.2, 130, 1));
	json_array_append_new(points, pt("gelu", "elementwise", "fp32", 19, 300, 1)); /* not a roof */
	roofs = ch_rl_roofs(points);
	cr_assert_float_eq(json_number_value(json_object_get(roofs, "memory_gbps")), 24, 1e-12);
	cr_assert_str_eq(json_string_value(json_object_get(roofs, "memory_kernel")), "triad fp64");
	cr_assert_float_eq(json_number_value(json_object_get(json_object_get(roofs, "compute_gflops"), "fp64")), 140, 1e-12);
	cr_assert_float_eq(json_number_value(json_object_get(json_object_get(roofs, "compute_gflops"), "fp32")), 130, 1e-12);
	cr_assert_str_eq(json_string_value(json_object_get(json_object_get(roofs, "compute_kernel"), "fp64")), "fma1024");
	cr_assert_float_eq(json_number_value(json_object_get(json_object_get(roofs, "ridge_flop_per_byte"), "fp32")),
			   130.0 / 24, 1e-12);
	cr_assert_null(json_object_get(json_object_get(roofs, "compute_gflops"), "bf16"));
	json_decref(roofs);
	json_decref(points);
}

static json_t *gpu(const char *name, const char *status, double mem, double bf16)
{
	return json_pack("{s:s,s:s,s:s,s:{s:f,s:{s:f}}}", "device", name, "kind", "gpu", "status", status, "roofs",
			 "memory_gbps", mem, "compute_gflops", "bf16", bf16);
}

/* A GPU more than 5% below the node median is flagged, per metric. */
Test(roofline, node_median_flags_gpu_5pct_below)
{
	json_t *devs = json_array(), *flagged, *med, *f;

	json_array_append_new(devs, gpu("gpu0", "ok", 4150, 780000));
	json_array_append_new(devs, gpu("gpu1", "ok", 4140, 781000));
	json_array_append_new(devs, gpu("gpu2", "ok", 4160, 640000)); /* 18% below on bf16 */
	json_array_append_new(devs, gpu("gpu3", "ok", 3980, 779000)); /* 4% below on memory: not flagged */
	json_array_append_new(devs, gpu("gpu4", "failed", 100, 100)); /* not ok: ignored */
	json_array_append_new(devs, json_pack("{s:s,s:s,s:s,s:{s:f}}", "device", "cpu", "kind", "cpu", "status", "ok",
					      "roofs", "memory_gbps", 20.0));
	med = ch_rl_node_summary(devs, 5.0, &flagged);
	cr_assert_eq(json_integer_value(json_object_get(med, "gpus")), 4);
	cr_assert_float_eq(json_number_value(json_object_get(med, "memory_gbps")), 4145, 1e-9);
	cr_assert_float_eq(json_number_value(json_object_get(json_object_get(med, "compute_gflops"), "bf16")), 779500, 1e-9);
	cr_assert_eq(json_array_size(flagged), 1);
	f = json_array_get(flagged, 0);
	cr_assert_str_eq(json_string_value(json_object_get(f, "device")), "gpu2");
	cr_assert_str_eq(json_string_value(json_object_get(f, "metric")), "compute_gflops.bf16");
	cr_assert_float_eq(json_number_value(json_object_get(f, "pct_below")), 100.0 * (779500 - 640000) / 779500, 1e-9);
	json_decref(med);
	json_decref(flagged);
	/* no GPU: null median, nothing flagged */
	json_array_clear(devs);
	med = ch_rl_node_summary(devs, 5.0, &flagged);
	cr_assert(json_is_null(med));
	cr_assert_eq(json_array_size(flagged), 0);
	json_decref(med);
	json_decref(flagged);
	json_decref(devs);
}

static void expect_type(json_t *o, const char *key, json_type type, const char *where)
{
	json_t *v = json_object_get(o, key);
	cr_assert_not_null(v, "%s: key '%s' missing", where, key);
	cr_assert(json_typeof(v) == type || (type == JSON_REAL && json_is_integer(v)),
		  "%s: key '%s' has type %d, want %d", where, key, json_typeof(v), type);
}

static void expect_number_or_null(json_t *o, const char *key, const char *where)
{
	json_t *v = json_object_get(o, key);
	cr_assert_not_null(v, "%s: key '%s' missing", where, key);
	cr_assert(json_is_number(v) || json_is_null(v), "%s: '%s' not a number or null", where, key);
}

/* A small CPU run writes the roofline section exactly as
 * docs/results-schema.md describes it (required keys and types). */
Test(roofline, json_follows_schema, .init = cr_redirect_stdout)
{
	char dir[] = "/tmp/ch_rl_XXXXXX", path[96], reason[512], cmd[128];
	const char *argv[] = { "roofline", "--backend", "cpu", "--size", "1M", "--kernels",
			       "copy,triad,dot,fma1,fma1024,gelu,layernorm,gemm", "--gemm-size", "64", "--iters", "2",
			       "--json", path };
	struct ch_rl_opts o;
	struct ch_world mpi = { .size = 1, .local_size = 1, .nhosts = 1, .host = "test" };
	struct ch_result *res;
	json_error_t err;
	json_t *doc, *r, *devs, *d, *roofs, *p, *ts;
	size_t i;
	int rc, nvalid = 0;

	cr_assert_not_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/r.json", dir);
	cr_assert_eq(parse(&o, 13, argv), 0);
	cr_assert_eq(ch_run_begin("roofline", 13, (char **)argv, &o.common, &res), 0);
	rc = ch_rl_run(&o, &mpi, res, reason, sizeof(reason));
	cr_assert_eq(rc, CH_OK, "%s", reason);
	cr_assert_eq(ch_result_finish(res, rc, NULL), 0);
	ch_result_free(res);

	doc = json_load_file(path, 0, &err);
	cr_assert_not_null(doc, "%s", err.text);
	cr_assert_str_eq(json_string_value(json_object_get(doc, "tool")), "roofline");
	cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "ok");
	expect_type(doc, "energy", JSON_OBJECT, "envelope");
	expect_type(json_object_get(doc, "software"), "blas", JSON_STRING, "software");
	r = json_object_get(doc, "results");
	expect_type(r, "devices", JSON_ARRAY, "results");
	cr_assert(json_is_null(json_object_get(r, "node_median")));
	expect_type(r, "flagged", JSON_ARRAY, "results");
	devs = json_object_get(r, "devices");
	cr_assert_eq(json_array_size(devs), 1);
	d = json_array_get(devs, 0);
	cr_assert_str_eq(json_string_value(json_object_get(d, "device")), "cpu");
	cr_assert_str_eq(json_string_value(json_object_get(d, "kind")), "cpu");
	cr_assert_str_eq(json_string_value(json_object_get(d, "backend")), "cpu");
	cr_assert_str_eq(json_string_value(json_object_get(d, "status")), "ok");
	expect_type(d, "name", JSON_STRING, "device");
	cr_assert(json_is_null(json_object_get(d, "pci_bus_id")));
	cr_assert(json_is_null(json_object_get(d, "sku")));
	cr_assert(json_is_null(json_object_get(d, "datasheet")));
	cr_assert(json_is_null(json_object_get(d, "reason")));
	expect_type(d, "throttled", JSON_FALSE, "device");
	expect_type(d, "peak_estimate", JSON_OBJECT, "device");
	expect_type(d, "config", JSON_OBJECT, "device");
	expect_type(d, "skipped", JSON_ARRAY, "device");
	roofs = json_object_get(d, "roofs");
	expect_type(roofs, "memory_gbps", JSON_REAL, "roofs");
	expect_type(json_object_get(roofs, "compute_gflops"), "fp64", JSON_REAL, "roofs.compute_gflops");
	expect_type(json_object_get(roofs, "compute_gflops"), "fp32", JSON_REAL, "roofs.compute_gflops");
	expect_type(json_object_get(roofs, "ridge_flop_per_byte"), "fp64", JSON_REAL, "roofs.ridge_flop_per_byte");
	expect_type(d, "points", JSON_ARRAY, "device");
	json_array_foreach(json_object_get(d, "points"), i, p) {
		const char *fam = json_string_value(json_object_get(p, "family"));
		expect_type(p, "kernel", JSON_STRING, "point");
		cr_assert(fam && (!strcmp(fam, "stream") || !strcmp(fam, "ladder") || !strcmp(fam, "elementwise") ||
				  !strcmp(fam, "gemm")));
		cr_assert_geq(ch_dtype_parse(json_string_value(json_object_get(p, "dtype"))), 0);
		expect_type(p, "flops", JSON_REAL, "point");
		expect_type(p, "bytes", JSON_REAL, "point");
		expect_type(p, "ai_flop_per_byte", JSON_REAL, "point");
		expect_type(p, "headline", JSON_STRING, "point");
		cr_assert_str_eq(json_string_value(json_object_get(p, "headline")), "median");
		expect_type(p, "valid", JSON_TRUE, "point");
		nvalid++;
		ts = json_object_get(p, "time_sec");
		expect_type(ts, "n", JSON_INTEGER, "time_sec");
		cr_assert_eq(json_integer_value(json_object_get(ts, "n")), 1); /* 2 calls, the first dropped */
		expect_type(ts, "min", JSON_REAL, "time_sec");
		expect_type(ts, "median", JSON_REAL, "time_sec");
		expect_type(ts, "mean", JSON_REAL, "time_sec");
		expect_type(ts, "p95", JSON_REAL, "time_sec");
		expect_type(ts, "max", JSON_REAL, "time_sec");
		expect_type(ts, "cv", JSON_REAL, "time_sec");
		expect_type(p, "gbps", JSON_REAL, "point");
		expect_type(p, "gflops", JSON_REAL, "point");
		expect_type(p, "gbps_best", JSON_REAL, "point");
		expect_type(p, "gflops_best", JSON_REAL, "point");
		expect_type(p, "pct_of_roof", JSON_REAL, "point");
		cr_assert(json_is_null(json_object_get(p, "pct_of_datasheet")));
		cr_assert(json_is_boolean(json_object_get(p, "throttled")) || json_is_null(json_object_get(p, "throttled")));
		cr_assert(json_is_object(json_object_get(p, "telemetry")) || json_is_null(json_object_get(p, "telemetry")));
		expect_type(p, "check", JSON_OBJECT, "point");
		expect_number_or_null(p, "gbps_write_allocate", "point");
		/* GB/s and GFLOP/s come from the counts and the median time */
		cr_assert_float_eq(json_number_value(json_object_get(p, "gbps")),
				   json_number_value(json_object_get(p, "bytes")) /
				   json_number_value(json_object_get(ts, "median")) / 1e9, 1e-9);
	}
	/* stream 3 (fp64), ladder 2 x 2 (fp64, fp32; bf16 skipped), gelu, layernorm, gemm 2 */
	cr_assert_eq(nvalid, 11);
	json_decref(doc);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

/* ------------------------------------------------------------------ a stand-in GPU backend */

#include "kernels/ch_kernels.h"

struct ch_dev {
	int index;
};

static const char *fake_fail;      /* "kernel:dtype:stage" that fails, or NULL */
static int fake_runs;

static int fake_fails(const struct ch_point_spec *p, const char *stage)
{
	char want[96];
	snprintf(want, sizeof(want), "%s:%s:%s", p->k->name, ch_dtype_name(p->dt), stage);
	return fake_fail && !strcmp(fake_fail, want);
}

static int fake_probe(char *why, size_t n) { (void)why; (void)n; return 0; }
static int fake_count(void) { return 1; }
static int fake_open(int index, struct ch_dev **out, char *why, size_t n)
{
	(void)why; (void)n;
	*out = calloc(1, sizeof(**out));
	(*out)->index = index;
	return 0;
}
static void fake_close(struct ch_dev *d) { free(d); }
static int fake_info(struct ch_dev *d, struct ch_dev_info *o)
{
	(void)d;
	memset(o, 0, sizeof(*o));
	snprintf(o->kind, sizeof(o->kind), "gpu");
	snprintf(o->name, sizeof(o->name), "NVIDIA H200");
	snprintf(o->pci_bus_id, sizeof(o->pci_bus_id), "0000:05:00.0");
	o->mem_total_bytes = o->mem_free_bytes = 1ull << 30;
	o->cache_bytes = 1 << 20;
	o->units = 132;
	snprintf(o->isa, sizeof(o->isa), "sm_90");
	snprintf(o->blas, sizeof(o->blas), "stand-in");
	snprintf(o->runtime, sizeof(o->runtime), "stand-in");
	return 0;
}
static unsigned fake_dtypes(struct ch_dev *d, const struct ch_kernel *k) { (void)d; return k->dtypes; }
static int fake_alloc(struct ch_dev *d, uint64_t bytes) { (void)d; (void)bytes; return 0; }
static int fake_setup(struct ch_dev *d, const struct ch_point_spec *p)
{
	(void)d;
	if (fake_fails(p, "setup")) {
		ch_error("cuBLASLt has no algorithm for a %s GEMM of 64 x 64 x 64 (stand-in)", ch_dtype_name(p->dt));
		return CH_ERR_RUNTIME;
	}
	return 0;
}
static int fake_run(struct ch_dev *d, const struct ch_point_spec *p, double *sec)
{
	struct timespec ts = { 0, 100000 };
	(void)d;
	if (fake_fails(p, "run")) {
		ch_error("an illegal memory access was encountered (stand-in)");
		return CH_ERR_RUNTIME;
	}
	nanosleep(&ts, NULL);
	*sec = 1e-3;
	fake_runs++;
	return 0;
}
static int fake_check(struct ch_dev *d, const struct ch_point_spec *p, struct ch_check *c)
{
	(void)d; (void)p;
	memset(c, 0, sizeof(*c));
	c->ok = 1;
	c->checked = 1;
	return 0;
}
/* a counter at 300 W refreshed every 2 ms of the monotonic clock */
static int fake_energy(struct ch_dev *d, double *j)
{
	(void)d;
	*j = 300.0 * 0.002 * floor(ch_now_sec() / 0.002);
	return 0;
}

static const struct ch_backend fake_gpu = {
	.name = "fake",
	.probe = fake_probe,
	.count = fake_count,
	.open = fake_open,
	.close = fake_close,
	.info = fake_info,
	.dtypes = fake_dtypes,
	.alloc_arrays = fake_alloc,
	.setup = fake_setup,
	.run = fake_run,
	.check = fake_check,
	.energy_j = fake_energy,
	.energy_window_sec = 0.02,
};

static json_t *point_of(json_t *dev, const char *kernel, const char *dtype)
{
	size_t i;
	json_t *p;
	json_array_foreach(json_object_get(dev, "points"), i, p)
		if (!strcmp(json_string_value(json_object_get(p, "kernel")), kernel) &&
		    !strcmp(json_string_value(json_object_get(p, "dtype")), dtype))
			return p;
	return NULL;
}

/* Runs the stand-in with "--kernels triad,fma1,gemm --dtype fp64,fp8". */
static json_t *run_fake(const char *fail, int *rc, char *reason, size_t n)
{
	const char *argv[] = { "roofline", "--size", "1M", "--kernels", "triad,fma1,gemm", "--dtype", "fp64,fp8",
			       "--gemm-size", "64", "--iters", "3" };
	struct ch_rl_opts o;
	struct ch_world mpi = { .size = 1, .local_size = 1, .nhosts = 1, .host = "test" };
	struct ch_result *res;
	json_t *devs = json_array();

	fake_fail = fail;
	cr_assert_eq(parse(&o, 11, argv), 0);
	cr_assert_eq(ch_run_begin("roofline", 11, (char **)argv, &o.common, &res), 0);
	*rc = ch_rl_run_backend(&o, &mpi, &fake_gpu, res, devs, reason, n);
	ch_result_free(res);
	fake_fail = NULL;
	cr_assert_eq(json_array_size(devs), 1);
	return devs;
}

Test(roofline, failed_point_is_recorded_and_the_run_goes_on, .init = cr_redirect_stderr)
{
	char reason[512];
	int rc;
	json_t *devs = run_fake("gemm:fp64:setup", &rc, reason, sizeof(reason)), *d = json_array_get(devs, 0), *p;

	cr_assert_eq(rc, CH_ERR_RUNTIME);
	cr_assert_str_eq(json_string_value(json_object_get(d, "status")), "error");
	cr_assert_str_eq(json_string_value(json_object_get(d, "reason")), "1 point(s) could not be measured (run-time error)");
	p = point_of(d, "gemm", "fp64");
	cr_assert_not_null(p);
	cr_assert(json_is_false(json_object_get(p, "valid")));
	cr_assert_str_eq(json_string_value(json_object_get(p, "error")),
			 "setup failed (error): cuBLASLt has no algorithm for a fp64 GEMM of 64 x 64 x 64 (stand-in)");
	cr_assert(json_is_null(json_object_get(p, "gflops")));
	/* the point after it was measured */
	p = point_of(d, "gemm", "fp8");
	cr_assert_not_null(p);
	cr_assert(json_is_true(json_object_get(p, "valid")));
	cr_assert(json_is_number(json_object_get(p, "gflops")));
	json_decref(devs);

	/* a failure in the first point's first call: every later point runs */
	devs = run_fake("triad:fp64:run", &rc, reason, sizeof(reason));
	d = json_array_get(devs, 0);
	cr_assert_eq(rc, CH_ERR_RUNTIME);
	cr_assert_str_eq(json_string_value(json_object_get(point_of(d, "triad", "fp64"), "error")),
			 "warm-up failed (error): an illegal memory access was encountered (stand-in)");
	cr_assert(json_is_true(json_object_get(point_of(d, "fma1", "fp64"), "valid")));
	cr_assert(json_is_true(json_object_get(point_of(d, "gemm", "fp64"), "valid")));
	cr_assert(json_is_true(json_object_get(point_of(d, "gemm", "fp8"), "valid")));
	json_decref(devs);
}

Test(roofline, energy_over_a_window_long_enough_for_the_counter, .init = cr_redirect_stderr)
{
	char reason[512];
	int rc;
	json_t *devs = run_fake(NULL, &rc, reason, sizeof(reason)), *d = json_array_get(devs, 0), *p, *tel, *w;
	size_t i;

	cr_assert_eq(rc, CH_OK, "%s", reason);
	json_array_foreach(json_object_get(d, "points"), i, p) {
		double ej, wall;
		long long calls;
		tel = json_object_get(p, "telemetry");
		w = json_object_get(tel, "energy_window");
		cr_assert(json_is_object(w), "point %zu has no energy window", i);
		ej = json_number_value(json_object_get(tel, "energy_j"));
		wall = json_number_value(json_object_get(w, "wall_sec"));
		calls = json_integer_value(json_object_get(w, "calls"));
		/* 3 timed calls of ~0.1 ms cannot cover 0.02 s: the point was repeated */
		cr_assert_geq(wall, 0.02);
		cr_assert_geq(json_integer_value(json_object_get(w, "counter_updates")), 5);
		cr_assert_gt(json_integer_value(json_object_get(w, "extra_calls")), 0);
		cr_assert_eq(calls, 3 + json_integer_value(json_object_get(w, "extra_calls")));
		cr_assert(json_is_null(json_object_get(w, "not_measured")) || !json_object_get(w, "not_measured"));
		cr_assert_gt(ej, 0);
		/* power over the wall-clock window, not over the kernels' time */
		cr_assert_float_eq(json_number_value(json_object_get(tel, "avg_power_w")), ej / wall, 1e-9 * ej / wall);
		cr_assert_float_eq(json_number_value(json_object_get(tel, "gflop_per_j")),
				   json_number_value(json_object_get(p, "flops")) * (double)calls / ej / 1e9,
				   1e-9 * json_number_value(json_object_get(tel, "gflop_per_j")));
	}
	json_decref(devs);
}

Test(roofline, fp64_ladder_is_judged_against_the_cuda_core_figure, .init = cr_redirect_stderr)
{
	char reason[512];
	int rc;
	json_t *devs = run_fake(NULL, &rc, reason, sizeof(reason)), *d = json_array_get(devs, 0), *p, *c;

	cr_assert_eq(rc, CH_OK, "%s", reason);
	cr_assert_str_eq(json_string_value(json_object_get(d, "sku")), "H200 SXM");
	c = json_object_get(json_object_get(d, "datasheet"), "cuda_core_gflops");
	cr_assert_float_eq(json_number_value(json_object_get(c, "fp64")), 34000, 0);
	p = point_of(d, "fma1", "fp64");
	c = json_object_get(p, "datasheet_ceiling");
	cr_assert_float_eq(json_number_value(json_object_get(c, "gflops")), 34000, 0);
	cr_assert_not_null(strstr(json_string_value(json_object_get(c, "what")), "CUDA cores"));
	cr_assert_not_null(strstr(json_string_value(json_object_get(c, "what")), "not FP64 Tensor Core"));
	/* the fp64 GEMM against the tensor-core peak */
	c = json_object_get(point_of(d, "gemm", "fp64"), "datasheet_ceiling");
	cr_assert_float_eq(json_number_value(json_object_get(c, "gflops")), 67000, 0);
	cr_assert_not_null(strstr(json_string_value(json_object_get(c, "what")), "Tensor Core"));
	json_decref(devs);
}

Test(roofline, rank_device_is_local_rank_mod_visible)
{
	int list[2] = { 5, 6 };
	cr_assert_eq(ch_rl_rank_device(3, 8, 0, NULL), 3);  /* every rank sees every GPU */
	cr_assert_eq(ch_rl_rank_device(3, 1, 0, NULL), 0);  /* --gpus-per-task=1: one visible GPU per rank */
	cr_assert_eq(ch_rl_rank_device(3, 2, 0, NULL), 1);
	cr_assert_eq(ch_rl_rank_device(0, 0, 0, NULL), -1);
	cr_assert_eq(ch_rl_rank_device(1, 8, 2, list), 6); /* --devices */
	cr_assert_eq(ch_rl_rank_device(2, 8, 2, list), -1);
}

Test(roofline, two_ranks_on_one_gpu_are_marked)
{
	json_t *devs = json_pack("[{s:s,s:s,s:s,s:i,s:s},{s:s,s:s,s:s,s:i,s:s},{s:s,s:s,s:s,s:i,s:s},{s:s,s:s,s:s,s:i,s:s}]",
		"kind", "gpu", "host", "n1", "pci_bus_id", "0000:05:00.0", "rank", 0, "status", "ok",
		"kind", "gpu", "host", "n1", "pci_bus_id", "0000:06:00.0", "rank", 1, "status", "ok",
		"kind", "gpu", "host", "n2", "pci_bus_id", "0000:05:00.0", "rank", 2, "status", "ok",
		"kind", "gpu", "host", "n1", "pci_bus_id", "0000:05:00.0", "rank", 3, "status", "ok");
	cr_assert_eq(ch_rl_mark_shared_gpus(devs), 1);
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(devs, 0), "status")), "error");
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(devs, 1), "status")), "ok");
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(devs, 2), "status")), "ok");
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(devs, 3), "status")), "error");
	cr_assert_not_null(strstr(json_string_value(json_object_get(json_array_get(devs, 3), "reason")),
				  "ranks 0 and 3 measured the same GPU 0000:05:00.0 on 'n1'"));
	json_decref(devs);
}

/* ------------------------------------------------------------------ confirm before accusing
 * A stand-in node of four GPUs whose calls take 1 ms, gpu3's 1.25 ms while
 * fake4_slow is 3: every point of gpu3 is 20% below the node median. The
 * fault is real when gpu3 stays slow for the confirmation, transient when
 * it is fast again (fake4_slow = -1 before ch_rl_confirm()). */

static int fake4_slow = 3;
static int fake4_count(void) { return 4; }
static int fake4_run(struct ch_dev *d, const struct ch_point_spec *p, double *sec)
{
	(void)p;
	*sec = d->index == fake4_slow ? 1.25e-3 : 1e-3;
	return 0;
}

static const struct ch_backend fake4 = {
	.name = "fake4",
	.probe = fake_probe,
	.count = fake4_count,
	.open = fake_open,
	.close = fake_close,
	.info = fake_info,
	.dtypes = fake_dtypes,
	.alloc_arrays = fake_alloc,
	.setup = fake_setup,
	.run = fake4_run,
	.check = fake_check,
};

/* measure the node (gpu3 slow), flag, then confirm with gpu3 as @slow_after */
static json_t *run_confirmed(const char *mode, int slow_after, json_t **flagged, int *rc)
{
	const char *argv[] = { "roofline", "--size", "1M", "--kernels", "triad,copy,fma1,gemm", "--dtype", "fp64",
			       "--gemm-size", "64", "--iters", "3", "--confirm", mode };
	const struct ch_backend *bes[] = { &fake4 };
	struct ch_rl_opts o;
	struct ch_world mpi = { .size = 1, .local_size = 1, .nhosts = 1, .host = "test" };
	struct ch_result *res;
	json_t *devs = json_array(), *med;
	char reason[512] = "";

	cr_assert_eq(parse(&o, 13, argv), 0);
	cr_assert_eq(ch_run_begin("roofline", 13, (char **)argv, &o.common, &res), 0);
	fake4_slow = 3;
	cr_assert_eq(ch_rl_run_backend(&o, &mpi, &fake4, res, devs, reason, sizeof(reason)), CH_OK);
	ch_result_free(res);
	cr_assert_eq(json_array_size(devs), 4);
	med = ch_rl_node_summary(devs, 5.0, flagged);
	json_decref(med);
	fake4_slow = slow_after;
	*rc = ch_rl_confirm(&o, &mpi, bes, 1, devs, *flagged, 5.0, reason, sizeof(reason));
	fake4_slow = 3;
	return devs;
}

static json_t *flag_named(json_t *flagged, const char *device, const char *metric)
{
	size_t i;
	json_t *f;
	json_array_foreach(flagged, i, f)
		if (!strcmp(json_string_value(json_object_get(f, "device")), device) &&
		    !strcmp(json_string_value(json_object_get(f, "metric")), metric))
			return f;
	return NULL;
}

Test(roofline, confirm_a_real_fault_is_confirmed, .init = cr_redirect_stderr)
{
	json_t *flagged, *devs, *f, *p, *c;
	size_t i, j;
	int rc;

	devs = run_confirmed("1", 3, &flagged, &rc);
	cr_assert_eq(rc, CH_OK);
	cr_assert_eq(json_array_size(flagged), 2); /* gpu3: memory and fp64 compute roofs */
	f = flag_named(flagged, "gpu3", "memory_gbps");
	cr_assert_not_null(f);
	cr_assert(json_is_true(json_object_get(f, "confirmed")));
	cr_assert_float_eq(json_number_value(json_object_get(f, "confirm_pct_below")), 20.0, 1e-6);
	cr_assert(json_is_true(json_object_get(flag_named(flagged, "gpu3", "compute_gflops.fp64"), "confirmed")));
	/* every point of gpu3 measured again, 20% below; no other GPU's */
	json_array_foreach(devs, i, p) {
		json_t *pts = json_object_get(p, "points"), *q;
		json_array_foreach(pts, j, q) {
			c = json_object_get(q, "confirm");
			if (i != 3) {
				cr_assert_null(c, "gpu%zu %s measured again", i, json_string_value(json_object_get(q, "kernel")));
				continue;
			}
			cr_assert_not_null(c);
			cr_assert_str_eq(json_string_value(json_object_get(c, "why")), "below_node_median");
			cr_assert(json_is_true(json_object_get(c, "valid")));
			cr_assert_float_eq(json_number_value(json_object_get(json_object_get(c, "time_sec"), "median")), 1.25e-3, 1e-12);
			cr_assert_float_eq(json_number_value(json_object_get(c, "gbps")), json_number_value(json_object_get(q, "gbps")), 1e-9);
			cr_assert(json_is_number(json_object_get(c, "gflops")));
		}
	}
	json_decref(flagged);
	json_decref(devs);
}

Test(roofline, confirm_a_transient_fault_does_not_reproduce, .init = cr_redirect_stderr)
{
	json_t *flagged, *devs, *f, *c, *ref;
	size_t i;
	int rc;

	devs = run_confirmed("1", -1, &flagged, &rc);
	cr_assert_eq(rc, CH_OK);
	cr_assert_eq(json_array_size(flagged), 2);
	json_array_foreach(flagged, i, f) {
		cr_assert(json_is_false(json_object_get(f, "confirmed")), "%s", json_string_value(json_object_get(f, "metric")));
		cr_assert_float_eq(json_number_value(json_object_get(f, "confirm_pct_below")), 0.0, 1e-6);
	}
	/* the second measurement of gpu3's triad equals gpu0's first */
	c = json_object_get(point_of(json_array_get(devs, 3), "triad", "fp64"), "confirm");
	ref = point_of(json_array_get(devs, 0), "triad", "fp64");
	cr_assert_float_eq(json_number_value(json_object_get(c, "gbps")), json_number_value(json_object_get(ref, "gbps")), 1e-9);
	json_decref(flagged);
	json_decref(devs);
}

Test(roofline, confirm_off_leaves_flags_unconfirmed, .init = cr_redirect_stderr)
{
	json_t *flagged, *devs, *f;
	size_t i;
	int rc;

	devs = run_confirmed("0", 3, &flagged, &rc);
	cr_assert_eq(rc, CH_OK);
	cr_assert_eq(json_array_size(flagged), 2);
	json_array_foreach(flagged, i, f) {
		cr_assert(json_is_null(json_object_get(f, "confirmed")));
		cr_assert_null(json_object_get(f, "confirm_value"));
	}
	cr_assert_null(json_object_get(point_of(json_array_get(devs, 3), "triad", "fp64"), "confirm"));
	json_decref(flagged);
	json_decref(devs);
}

Test(roofline, confirm_plan_points_and_roofs)
{
	/* two GPUs and a CPU: gpu1's triad 10% below the median of triad over
	 * the GPUs (2 values: their mean), its copy fine; a flagged fp64
	 * compute roof on gpu0 plans its ladder and gemm fp64 points */
	json_t *devs = json_pack("[{s:s,s:s,s:s,s:s,s:{s:I},s:[{s:s,s:s,s:s,s:b,s:f,s:f,s:{s:I}},{s:s,s:s,s:s,s:b,s:f,s:f,s:{s:I}},{s:s,s:s,s:s,s:b,s:f,s:f,s:{s:I}}]},"
				 "{s:s,s:s,s:s,s:s,s:{s:I},s:[{s:s,s:s,s:s,s:b,s:f,s:f,s:{s:I}},{s:s,s:s,s:s,s:b,s:f,s:f,s:{s:I}}]},"
				 "{s:s,s:s,s:s,s:s,s:{s:I},s:[{s:s,s:s,s:s,s:b,s:f,s:f,s:{s:I}}]}]",
		"device", "gpu0", "kind", "gpu", "status", "ok", "backend", "cuda", "config", "array_bytes", (json_int_t)1 << 30, "points",
		"kernel", "triad", "family", "stream", "dtype", "fp64", "valid", 1, "gbps", 100.0, "flops", 1.0, "shape", "elements", (json_int_t)100,
		"kernel", "copy", "family", "stream", "dtype", "fp64", "valid", 1, "gbps", 100.0, "flops", 0.0, "shape", "elements", (json_int_t)100,
		"kernel", "fma1", "family", "ladder", "dtype", "fp64", "valid", 1, "gbps", 10.0, "flops", 1.0, "shape", "elements", (json_int_t)100,
		"device", "gpu1", "kind", "gpu", "status", "ok", "backend", "cuda", "config", "array_bytes", (json_int_t)1 << 30, "points",
		"kernel", "triad", "family", "stream", "dtype", "fp64", "valid", 1, "gbps", 80.0, "flops", 1.0, "shape", "elements", (json_int_t)100,
		"kernel", "copy", "family", "stream", "dtype", "fp64", "valid", 1, "gbps", 99.0, "flops", 0.0, "shape", "elements", (json_int_t)100,
		"device", "cpu", "kind", "cpu", "status", "ok", "backend", "cpu", "config", "array_bytes", (json_int_t)1 << 26, "points",
		"kernel", "triad", "family", "stream", "dtype", "fp64", "valid", 1, "gbps", 10.0, "flops", 1.0, "shape", "elements", (json_int_t)100);
	json_t *flagged = json_pack("[{s:s,s:s,s:f}]", "device", "gpu0", "metric", "compute_gflops.fp64", "node_median", 20.0);
	json_t *plan, *e;

	/* gflops are absent: the rate is gbps; gpu1 triad 80 vs median 90: 11% below;
	 * the CPU's triad sets its memory roof: measured again every run */
	plan = ch_rl_confirm_plan(devs, flagged, 5.0, CH_RL_CONFIRM_ON);
	cr_assert_eq(json_array_size(plan), 3);
	e = json_array_get(plan, 0);
	cr_assert_str_eq(json_string_value(json_object_get(e, "device")), "gpu0");
	cr_assert_str_eq(json_string_value(json_object_get(e, "kernel")), "fma1");
	cr_assert_eq(json_integer_value(json_object_get(e, "point")), 2);
	cr_assert_eq(json_integer_value(json_object_get(e, "rank")), -1);
	cr_assert_eq(json_integer_value(json_object_get(e, "array_bytes")), (json_int_t)1 << 30);
	e = json_array_get(plan, 1);
	cr_assert_str_eq(json_string_value(json_object_get(e, "device")), "gpu1");
	cr_assert_str_eq(json_string_value(json_object_get(e, "kernel")), "triad");
	cr_assert_str_eq(json_string_value(json_object_get(e, "why")), "below_node_median");
	cr_assert_eq(json_integer_value(json_object_get(json_object_get(e, "shape"), "elements")), 100);
	e = json_array_get(plan, 2);
	cr_assert_str_eq(json_string_value(json_object_get(e, "device")), "cpu");
	cr_assert_str_eq(json_string_value(json_object_get(e, "why")), "cpu_socket");
	json_decref(plan);
	/* all: every valid point of every device, the CPU's too */
	plan = ch_rl_confirm_plan(devs, flagged, 5.0, CH_RL_CONFIRM_ALL);
	cr_assert_eq(json_array_size(plan), 6);
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(plan, 5), "why")), "requested");
	json_decref(plan);
	/* the flag's verdict: nothing measured again yet: null */
	ch_rl_confirm_verdicts(devs, flagged, 5.0);
	cr_assert(json_is_null(json_object_get(json_array_get(flagged, 0), "confirmed")));
	json_decref(flagged);
	json_decref(devs);
}

/* A CPU socket: only the points that set its roofs are planned (the best
 * stream point, the best compute point of each dtype; an invalid point
 * never), and roofs_again takes each roof at its point's second rate. */
Test(roofline, confirm_cpu_socket_roof_points_and_roofs_again)
{
	json_t *devs = json_pack("[{s:s,s:s,s:s,s:s,s:{s:I},s:["
				 "{s:s,s:s,s:s,s:b,s:f,s:f,s:{s:I}},{s:s,s:s,s:s,s:b,s:f,s:f,s:{s:I}},"
				 "{s:s,s:s,s:s,s:b,s:f,s:f,s:{s:I}},{s:s,s:s,s:s,s:b,s:f,s:f,s:{s:I}},"
				 "{s:s,s:s,s:s,s:b,s:f,s:f,s:{s:I}}]}]",
		"device", "cpu", "kind", "cpu", "status", "ok", "backend", "cpu", "config", "array_bytes", (json_int_t)1 << 26, "points",
		"kernel", "copy", "family", "stream", "dtype", "fp64", "valid", 1, "gbps", 20.0, "gflops", 0.0, "shape", "elements", (json_int_t)100,
		"kernel", "dot", "family", "stream", "dtype", "fp64", "valid", 1, "gbps", 24.0, "gflops", 3.0, "shape", "elements", (json_int_t)100,
		"kernel", "triad", "family", "stream", "dtype", "fp64", "valid", 0, "gbps", 99.0, "gflops", 8.0, "shape", "elements", (json_int_t)100,
		"kernel", "fma8", "family", "ladder", "dtype", "fp64", "valid", 1, "gbps", 9.0, "gflops", 60.0, "shape", "elements", (json_int_t)100,
		"kernel", "fma1024", "family", "ladder", "dtype", "fp64", "valid", 1, "gbps", 1.0, "gflops", 140.0, "shape", "elements", (json_int_t)100);
	json_t *plan = ch_rl_confirm_plan(devs, NULL, 5.0, CH_RL_CONFIRM_ON), *pts, *again;

	cr_assert_eq(json_array_size(plan), 2);
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(plan, 0), "kernel")), "dot");
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(plan, 1), "kernel")), "fma1024");
	cr_assert_str_eq(json_string_value(json_object_get(json_array_get(plan, 1), "why")), "cpu_socket");
	json_decref(plan);
	/* nothing measured again: no roofs_again */
	ch_rl_roofs_again(devs);
	cr_assert_null(json_object_get(json_array_get(devs, 0), "roofs_again"));
	/* the second measurements: dot 19.2 GB/s (20% low), fma1024 139 GFLOP/s;
	 * copy's second (30) is not the roof's point: not used */
	pts = json_object_get(json_array_get(devs, 0), "points");
	json_object_set_new(json_array_get(pts, 0), "confirm", json_pack("{s:b,s:f,s:f}", "valid", 1, "gbps", 30.0, "gflops", 0.0));
	json_object_set_new(json_array_get(pts, 1), "confirm", json_pack("{s:b,s:f,s:f}", "valid", 1, "gbps", 19.2, "gflops", 2.4));
	json_object_set_new(json_array_get(pts, 4), "confirm", json_pack("{s:b,s:f,s:f}", "valid", 1, "gbps", 1.0, "gflops", 139.0));
	ch_rl_roofs_again(devs);
	again = json_object_get(json_array_get(devs, 0), "roofs_again");
	cr_assert(json_is_object(again));
	cr_assert_float_eq(json_number_value(json_object_get(again, "memory_gbps")), 19.2, 1e-9);
	cr_assert_float_eq(json_number_value(json_object_get(json_object_get(again, "compute_gflops"), "fp64")), 139.0, 1e-9);
	/* a second measurement that failed: that roof is not taken again */
	json_object_set_new(json_array_get(pts, 4), "confirm", json_pack("{s:b,s:n,s:n}", "valid", 0, "gbps", "gflops"));
	json_object_del(json_array_get(devs, 0), "roofs_again");
	ch_rl_roofs_again(devs);
	again = json_object_get(json_array_get(devs, 0), "roofs_again");
	cr_assert_null(json_object_get(again, "compute_gflops"));
	cr_assert_float_eq(json_number_value(json_object_get(again, "memory_gbps")), 19.2, 1e-9);
	json_decref(devs);
}
