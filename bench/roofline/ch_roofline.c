/*
 * ch_roofline.c - roofline's measurement driver (see ch_roofline.h): the
 * run over devices and backends (its other files: ch_roofline_int.h).
 */
#include "bench/roofline/ch_roofline.h"
#include "bench/roofline/ch_roofline_int.h"
#include "bench/roofline/ch_roofline_copy.h"
#include "base/ch_common.h"
#include "base/ch_datasheet.h"
#include "comm/ch_comm.h"
#include "hw/ch_energy.h"
#include "hw/ch_nvml.h"
#include "base/ch_parse.h"
#include "base/ch_stats.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static unsigned requested_dtypes(const struct ch_rl_opts *o, const struct ch_kernel *k)
{
	return o->dtypes ? (o->dtypes & k->dtypes) : k->default_dtypes;
}

static json_t *device_stub(const char *device, const char *kind, const char *backend)
{
	json_t *d = json_object();
	json_object_set_new(d, "device", json_string(device));
	json_object_set_new(d, "kind", json_string(kind));
	json_object_set_new(d, "backend", json_string(backend));
	json_object_set_new(d, "name", json_null());
	json_object_set_new(d, "pci_bus_id", json_null());
	json_object_set_new(d, "sku", json_null());
	json_object_set_new(d, "status", json_string("incomplete"));
	json_object_set_new(d, "reason", json_null());
	json_object_set_new(d, "datasheet", json_null());
	json_object_set_new(d, "roofs", json_pack("{s:n,s:{},s:{}}", "memory_gbps", "compute_gflops",
						  "ridge_flop_per_byte"));
	json_object_set_new(d, "throttled", json_false());
	json_object_set_new(d, "points", json_array());
	return d;
}

static void device_status(json_t *d, int status, const char *reason)
{
	json_object_set_new(d, "status", json_string(status == CH_OK ? "ok" : status == CH_ERR_CHECK ? "failed" :
						 status == CH_ERR_UNAVAILABLE ? "unavailable" : "error"));
	json_object_set_new(d, "reason", reason && *reason ? json_string(reason) : json_null());
}

/* The device's name, bus id, datasheet row and peak estimates into jdev;
 * fills r->ds and r->peak_est. */
static void describe_device(struct rl_dev *r, int is_gpu)
{
	json_t *pe = json_object();
	char buf[512];
	int d;

	json_object_set_new(r->jdev, "name", json_string(r->info.name));
	json_object_set_new(r->jdev, "pci_bus_id", r->info.pci_bus_id[0] ? json_string(r->info.pci_bus_id) : json_null());
	if (is_gpu) /* how its NVML device was found: "pci_bus_id", "uuid", "index", "none" */
		json_object_set_new(r->jdev, "nvml_match", r->info.nvml_match[0] ? json_string(r->info.nvml_match) : json_null());
	r->ds = is_gpu ? ch_datasheet_lookup(r->info.name) : NULL;
	if (r->ds) {
		json_t *ds = json_object(), *g = json_object();
		json_object_set_new(r->jdev, "sku", json_string(r->ds->sku));
		json_object_set_new(ds, "memory_gbps", json_real(r->ds->memory_gbps));
		for (d = 0; d < CH_NDTYPES; d++)
			if (r->ds->gflops[d] > 0)
				json_object_set_new(g, ch_dtype_name(d), json_real(r->ds->gflops[d]));
		json_object_set_new(ds, "compute_gflops", g);
		g = json_object();
		for (d = 0; d < CH_NDTYPES; d++)
			if (ch_datasheet_cuda_core_gflops(r->ds, d) > 0)
				json_object_set_new(g, ch_dtype_name(d), json_real(ch_datasheet_cuda_core_gflops(r->ds, d)));
		json_object_set_new(ds, "cuda_core_gflops", g);
		json_object_set_new(ds, "source", json_string(r->ds->source));
		json_object_set_new(r->jdev, "datasheet", ds);
	}
	for (d = 0; d < CH_NDTYPES; d++) {
		r->peak_est[d] = -1;
		if (r->be->peak_estimate &&
		    r->be->peak_estimate(r->dev, (enum ch_dtype)d, &r->peak_est[d], buf, sizeof(buf)) == 0)
			json_object_set_new(pe, ch_dtype_name(d), json_pack("{s:f,s:s}", "gflops", r->peak_est[d], "how", buf));
		else
			r->peak_est[d] = -1;
	}
	json_object_set_new(r->jdev, "peak_estimate", pe);
}

/* r->array_bytes from --size (checked against the free memory) or the
 * default rule; returns 0 or CH_ERR_USAGE with @reason filled. */
static int choose_array_bytes(struct rl_dev *r, int is_gpu, char *reason, size_t rn)
{
	const struct ch_rl_opts *o = r->o;

	if (!o->size_bytes) {
		r->array_bytes = ch_rl_default_array_bytes(r->info.cache_bytes, r->info.mem_free_bytes, is_gpu);
		return 0;
	}
	r->array_bytes = o->size_bytes;
	if (r->info.mem_free_bytes && 3 * o->size_bytes > r->info.mem_free_bytes) {
		char sz[32];
		ch_usage_error("--size '%s' needs three arrays of that size, more than the %llu MiB free on %s",
			       ch_format_size(o->size_bytes, sz, sizeof(sz)),
			       (unsigned long long)(r->info.mem_free_bytes / MIB),
			       json_string_value(json_object_get(r->jdev, "device")));
		snprintf(reason, rn, "--size too large for the device");
		return CH_ERR_USAGE;
	}
	return 0;
}

/* The device's "config" object: sizes, threads, clocks, libraries, calls. */
static json_t *config_json(const struct rl_dev *r, int is_gpu)
{
	const struct ch_rl_opts *o = r->o;
	json_t *cfg = json_object();

	json_object_set_new(cfg, "array_bytes", json_integer((json_int_t)r->array_bytes));
	json_object_set_new(cfg, "arrays", json_integer(3));
	json_object_set_new(cfg, "size_rule", json_string(o->size_bytes ? "--size" :
		"max(4/3 x cache, floor) so a 3-array kernel's working set is >= 4x the cache; capped at free/8"));
	json_object_set_new(cfg, "cache_bytes", json_integer((json_int_t)r->info.cache_bytes));
	json_object_set_new(cfg, "working_set_over_cache", r->info.cache_bytes ?
			    json_real(3.0 * (double)r->array_bytes / (double)r->info.cache_bytes) : json_null());
	json_object_set_new(cfg, "mem_total_bytes", json_integer((json_int_t)r->info.mem_total_bytes));
	json_object_set_new(cfg, "units", json_integer(r->info.units));
	json_object_set_new(cfg, "threads", json_integer(r->info.threads));
	json_object_set_new(cfg, "binding", json_string(is_gpu ? "" : "one OpenMP thread per core, bound with hwloc; arrays first-touched by their thread"));
	json_object_set_new(cfg, "clock_mhz", r->info.clock_mhz > 0 ? json_real(r->info.clock_mhz) : json_null());
	json_object_set_new(cfg, "clock_source", json_string(r->info.clock_source));
	json_object_set_new(cfg, "isa", json_string(r->info.isa));
	json_object_set_new(cfg, "stores", r->info.stores[0] ? json_string(r->info.stores) : json_null());
	json_object_set_new(cfg, "blas", json_string(r->info.blas));
	json_object_set_new(cfg, "runtime", json_string(r->info.runtime));
	json_object_set_new(cfg, "warmup_calls", json_integer(o->warmup));
	json_object_set_new(cfg, "timed_calls", json_integer(o->iters));
	json_object_set_new(cfg, "min_time_sec", json_real(o->common.min_time_sec > 0 ? o->common.min_time_sec : 0));
	json_object_set_new(cfg, "note", r->info.note[0] ? json_string(r->info.note) : json_null());
	return cfg;
}

static int kernel_selected(const struct ch_rl_opts *o, int i)
{
	return !o->kernels || (o->kernels & (1ull << i));
}

/* List in @skipped each requested (kernel, dtype) the backend cannot run;
 * returns 1 when any requested pair runs. */
static int plan_points(struct rl_dev *r, int is_gpu, json_t *skipped)
{
	int nk, i, d, any = 0;
	const struct ch_kernel *t = ch_kernel_table(&nk);

	for (i = 0; i < nk; i++) {
		unsigned req, have;
		if (!kernel_selected(r->o, i))
			continue;
		req = requested_dtypes(r->o, &t[i]);
		have = r->be->dtypes(r->dev, &t[i]);
		for (d = 0; d < CH_NDTYPES; d++)
			if ((req & CH_DT_BIT(d)) && !(have & CH_DT_BIT(d)))
				json_array_append_new(skipped, json_pack("{s:s,s:s,s:s}", "kernel", t[i].name, "dtype",
					ch_dtype_name(d), "reason",
					t[i].family == CH_FAM_GEMM && !is_gpu && d == CH_BF16 ?
					"the BLAS has no bf16 GEMM (no cblas_sbgemm symbol)" :
					is_gpu ? "not supported by this GPU" : "not supported by the cpu backend"));
			else if (req & CH_DT_BIT(d))
				any = 1;
	}
	return any;
}

/* Measure and record the planned points, dtype by dtype (arrays are
 * refilled once per dtype): the GEMMs when @gemm, else the others. A point
 * that fails is recorded with its reason and the next ones run. */
static void run_points(struct rl_dev *r, int gemm)
{
	int nk, i, d, v;
	const struct ch_kernel *t = ch_kernel_table(&nk);
	struct rl_point pt;

	for (d = 0; d < CH_NDTYPES; d++)
		for (i = 0; i < nk; i++) {
			if ((t[i].family == CH_FAM_GEMM) != gemm || !kernel_selected(r->o, i))
				continue;
			if (!(requested_dtypes(r->o, &t[i]) & r->be->dtypes(r->dev, &t[i]) & CH_DT_BIT(d)))
				continue;
			/* fp8 GEMM: the default split accumulator, then fast
			 * accumulation where the backend has it, each labelled */
			for (v = 0; v < (t[i].family == CH_FAM_GEMM && d == CH_FP8 && r->be->fp8_fast_accum ? 2 : 1); v++) {
				measure_point(r, &t[i], (enum ch_dtype)d, v, &pt);
				emit_point(r, &pt);
				update_roofs(r);
				ch_result_checkpoint(r->res);
			}
		}
}

/* ------------------------------------------------------------ the power-cap sweep
 * (bench/roofline/ch_roofline_power.c) measures its points through these */

static int sweep_shape(void *ctx, const struct ch_kernel *k, enum ch_dtype dt, struct ch_point_spec *out)
{
	memset(out, 0, sizeof(*out));
	out->k = k;
	out->dt = dt;
	return point_shape(ctx, k, dt, &out->shape);
}

static int sweep_measure(void *ctx, const struct ch_kernel *k, enum ch_dtype dt, json_t *points)
{
	struct rl_dev *r = ctx;
	json_t *keep = r->points;
	struct rl_point pt;
	int rc;

	r->points = points;
	measure_point(r, k, dt, 0, &pt); /* fp8: the default (split) accumulation */
	rc = emit_point(r, &pt);
	r->points = keep;
	return rc;
}

static void sweep_checkpoint(void *ctx)
{
	ch_result_checkpoint(((struct rl_dev *)ctx)->res);
}

/* The sweep's points: the selected ones (GEMMs first), or by default gemm
 * bf16 and triad fp64 (a compute-bound and a memory-bound point). */
static void sweep_points(struct rl_dev *r, struct ch_rl_sweep_ops *ops)
{
	int nk, i, d, gemm;
	const struct ch_kernel *t = ch_kernel_table(&nk);

	for (gemm = 1; gemm >= 0; gemm--)
		for (i = 0; i < nk; i++) {
			unsigned want;
			if ((t[i].family == CH_FAM_GEMM) != gemm)
				continue;
			if (!r->o->kernels && !r->o->dtypes)
				want = !strcmp(t[i].name, "gemm") ? CH_DT_BIT(CH_BF16) :
				       !strcmp(t[i].name, "triad") ? CH_DT_BIT(CH_FP64) : 0;
			else
				want = kernel_selected(r->o, i) ? requested_dtypes(r->o, &t[i]) : 0;
			want &= r->be->dtypes(r->dev, &t[i]);
			for (d = 0; d < CH_NDTYPES && ops->npoints < CH_RL_SWEEP_MAX_POINTS; d++)
				if (want & CH_DT_BIT(d)) {
					ops->k[ops->npoints] = &t[i];
					ops->dt[ops->npoints++] = (enum ch_dtype)d;
				}
		}
}

/* The sweep of one open GPU: its "power_sweep" object, the points at the
 * default limit as the device's points; returns the sweep's status. */
static int power_sweep(struct rl_dev *r, char *reason, size_t rn)
{
	struct ch_rl_sweep_ops ops = { .ctx = r, .be = r->be, .dev = r->dev, .pci_bus_id = r->info.pci_bus_id,
				       .shape = sweep_shape, .measure = sweep_measure, .checkpoint = sweep_checkpoint };
	json_t *sweep = json_object();
	int rc, ref;

	ops.device = json_string_value(json_object_get(r->jdev, "device"));
	sweep_points(r, &ops);
	json_object_set_new(r->jdev, "power_sweep", sweep);
	if (!ops.npoints) {
		snprintf(reason, rn, "no selected kernel runs in the selected dtypes on %s", ops.device);
		return CH_ERR_UNAVAILABLE;
	}
	rc = ch_rl_power_sweep(&r->o->power, &ops, sweep, &ref, reason, rn);
	if (ref >= 0)
		json_array_extend(r->points, json_object_get(json_array_get(json_object_get(sweep, "caps"), (size_t)ref),
							     "points"));
	return rc;
}

/* Measure one open device into its object jdev; returns its status. */
static int measure_device(struct rl_dev *r, char *reason, size_t rn)
{
	int rc, status = CH_OK, is_gpu;
	double t_alloc;
	json_t *cfg, *skipped;

	r->be->info(r->dev, &r->info);
	is_gpu = !strcmp(r->info.kind, "gpu");
	describe_device(r, is_gpu);
	if ((rc = choose_array_bytes(r, is_gpu, reason, rn)) != 0)
		return rc;
	cfg = config_json(r, is_gpu);
	skipped = json_array();
	json_object_set_new(r->jdev, "config", cfg);
	json_object_set_new(r->jdev, "skipped", skipped);
	if (r->info.note[0])
		ch_warn("%s: %s", json_string_value(json_object_get(r->jdev, "device")), r->info.note);

	/* the plan: dtype by dtype, GEMMs last */
	if (!plan_points(r, is_gpu, skipped)) {
		snprintf(reason, rn, "no selected kernel runs in the selected dtypes on %s",
			 json_string_value(json_object_get(r->jdev, "device")));
		return CH_ERR_UNAVAILABLE;
	}
	t_alloc = ch_now_sec();
	rc = r->be->alloc_arrays(r->dev, r->array_bytes);
	json_object_set_new(cfg, "alloc_sec", json_real(ch_now_sec() - t_alloc));
	if (rc != 0) {
		snprintf(reason, rn, "cannot allocate the arrays (3 x %llu bytes)", (unsigned long long)r->array_bytes);
		return rc;
	}
	if (is_gpu && r->o->power.ncaps)
		return power_sweep(r, reason, rn);
	run_points(r, 0);
	run_points(r, 1);
	if (r->errors) {
		status = CH_ERR_RUNTIME;
		snprintf(reason, rn, "%d point(s) could not be measured (run-time error)", r->errors);
	}
	if (r->invalid) {
		status = CH_ERR_CHECK;
		snprintf(reason, rn, "%d point(s) failed validation", r->invalid);
	}
	return status;
}

int ch_rl_rank_device(int local_rank, int visible, int ndevices, const int *devices)
{
	if (ndevices > 0)
		return local_rank >= 0 && local_rank < ndevices ? devices[local_rank] : -1;
	return ch_comm_pick_device(local_rank, visible);
}

int ch_rl_mark_shared_gpus(json_t *devices)
{
	size_t i, j;
	json_t *a, *b;
	int n = 0;

	json_array_foreach(devices, j, b) {
		const char *bb = json_string_value(json_object_get(b, "pci_bus_id"));
		const char *hb = json_string_value(json_object_get(b, "host"));
		if (!bb || !hb || strcmp(json_string_value(json_object_get(b, "kind")), "gpu"))
			continue;
		for (i = 0; i < j; i++) {
			char why[512];
			a = json_array_get(devices, i);
			if (!json_is_string(json_object_get(a, "pci_bus_id")) || !json_is_string(json_object_get(a, "host")) ||
			    strcmp(json_string_value(json_object_get(a, "pci_bus_id")), bb) ||
			    strcmp(json_string_value(json_object_get(a, "host")), hb))
				continue;
			snprintf(why, sizeof(why), "ranks %lld and %lld measured the same GPU %s on '%s' at once "
				 "(more local ranks than visible GPUs): launch at most one rank per GPU",
				 (long long)json_integer_value(json_object_get(a, "rank")),
				 (long long)json_integer_value(json_object_get(b, "rank")), bb, hb);
			device_status(a, CH_ERR_USAGE, why);
			device_status(b, CH_ERR_USAGE, why);
			n++;
			break;
		}
	}
	return n;
}

int ch_rl_run_backend(const struct ch_rl_opts *o, const struct ch_world *mpi, const struct ch_backend *be,
		      struct ch_result *res, json_t *devices, char *reason, size_t rn)
{
	char why[512] = "";
	int status = CH_OK, count, idx[CH_RL_MAX_DEVICES], nidx = 0, i;
	const int gpu = strcmp(be->name, "cpu") != 0;

	if (be->probe(why, sizeof(why)) != 0 || (count = be->count()) <= 0) {
		json_t *d = device_stub(gpu ? "gpu" : "cpu", gpu ? "gpu" : "cpu", be->name);
		if (!why[0])
			snprintf(why, sizeof(why), "no device");
		device_status(d, CH_ERR_UNAVAILABLE, why);
		json_array_append_new(devices, d);
		snprintf(reason, rn, "%s backend unavailable: %s", be->name, why);
		return CH_ERR_UNAVAILABLE;
	}
	if (!gpu) {
		idx[nidx++] = 0;
	} else if (mpi->active) {
		int want = ch_rl_rank_device(mpi->local_rank, count, o->ndevices, o->devices);
		if (want < 0) {
			json_t *d = device_stub("gpu", "gpu", be->name);
			snprintf(why, sizeof(why), "local rank %d has no GPU (%d selected by --devices): run one rank per GPU",
				 mpi->local_rank, o->ndevices);
			device_status(d, CH_ERR_UNAVAILABLE, why);
			json_array_append_new(devices, d);
			snprintf(reason, rn, "%s", why);
			return CH_ERR_UNAVAILABLE;
		}
		idx[nidx++] = want;
	} else if (o->ndevices) {
		for (i = 0; i < o->ndevices; i++)
			idx[nidx++] = o->devices[i];
	} else {
		for (i = 0; i < count && i < CH_RL_MAX_DEVICES; i++)
			idx[nidx++] = i;
	}
	for (i = 0; i < nidx; i++) {
		struct rl_dev r;
		char name[32], dreason[512] = "";
		json_t *d;
		int rc;

		memset(&r, 0, sizeof(r));
		r.o = o;
		r.be = be;
		r.res = res;
		if (gpu)
			snprintf(name, sizeof(name), "gpu%d", idx[i]);
		else
			snprintf(name, sizeof(name), "cpu");
		d = device_stub(name, gpu ? "gpu" : "cpu", be->name);
		json_object_set_new(d, "host", json_string(mpi->host));
		json_array_append_new(devices, d);
		r.jdev = d;
		r.points = json_object_get(d, "points");
		if (idx[i] >= count) {
			snprintf(dreason, sizeof(dreason), "no GPU with index %d (this node has %d)", idx[i], count);
			device_status(d, CH_ERR_UNAVAILABLE, dreason);
			status = worse(status, CH_ERR_UNAVAILABLE);
			snprintf(reason, rn, "%s", dreason);
			continue;
		}
		ch_cpu_set_stores((enum ch_stores)o->stores);
		rc = be->open(idx[i], &r.dev, dreason, sizeof(dreason));
		if (rc != 0) {
			device_status(d, rc, dreason);
			status = worse(status, rc);
			snprintf(reason, rn, "%s: %s", name, dreason);
			continue;
		}
		r.be->info(r.dev, &r.info);
		if (gpu) {
			char v[96];
			ch_result_set_software(res, "cuda", r.info.runtime);
			ch_result_set_software(res, "cublaslt", r.info.blas);
			if (ch_nvml_init(NULL, 0) == 0) {
				ch_result_set_software(res, "nvml_driver", ch_nvml_driver_version(v, sizeof(v)));
				ch_nvml_shutdown();
			} else {
				ch_result_set_software(res, "nvml_driver", NULL);
			}
		} else {
			ch_result_set_software(res, "blas", r.info.blas);
			/* the CPU's OpenMP threads: the most this process runs at once */
			if (r.info.threads > 1)
				ch_run_set_threads(res, r.info.threads);
		}
		rc = measure_device(&r, dreason, sizeof(dreason));
		update_roofs(&r);
		device_status(d, rc, dreason);
		if (rc != 0) {
			status = worse(status, rc);
			snprintf(reason, rn, "%s: %s", name, dreason);
		}
		be->close(r.dev);
		ch_result_checkpoint(res);
	}
	/* the host link of the GPUs measured: each alone, all at once, and
	 * device to device (bench/roofline/ch_roofline_copy.h) */
	if (gpu && be->host_copy && !o->power.ncaps && ch_rl_host_link_run(be, idx, nidx, count, ch_result_results(res),
									      devices) == 0)
		ch_result_checkpoint(res);
	return status;
}

int ch_rl_run(const struct ch_rl_opts *o, const struct ch_world *mpi, struct ch_result *res,
	      char *reason, size_t n)
{
	json_t *results = ch_result_results(res), *local = json_array(), *all, *flagged, *median, *d, *pnode;
	const struct ch_backend *gpu_be = o->gpu ? o->gpu : &ch_backend_cuda;
	unsigned backends = o->backends;
	int status = CH_OK, rc;
	char r2[512] = "";
	size_t i;

	reason[0] = '\0';
	json_object_set_new(results, "devices", local);
	json_object_set_new(results, "node_median", json_null());
	json_object_set_new(results, "flagged", json_array());
	if (json_array_size(o->power.restored_at_start)) /* what an earlier run left capped (ch_rl_power_recover()) */
		json_object_set(results, "power_restored_at_start", o->power.restored_at_start);
	if (!backends) { /* auto: the GPUs when there are any, else the CPU */
		char why[256];
		backends = o->power.ncaps || (gpu_be->probe(why, sizeof(why)) == 0 && gpu_be->count() > 0)
			? CH_RL_BACKEND_CUDA : CH_RL_BACKEND_CPU;
		json_object_set_new(results, "backend_auto", json_string(backends == CH_RL_BACKEND_CUDA ? "cuda" : "cpu"));
	}
	if (backends & CH_RL_BACKEND_CUDA) {
		rc = ch_rl_run_backend(o, mpi, gpu_be, res, local, r2, sizeof(r2));
		if (worse(status, rc) != status)
			snprintf(reason, n, "%s", r2);
		status = worse(status, rc);
	}
	if (backends & CH_RL_BACKEND_CPU) {
		/* under mpirun, the CPU is measured once per node, after the GPUs */
		ch_world_barrier(mpi);
		if (!mpi->active || mpi->local_rank == 0) {
			rc = ch_rl_run_backend(o, mpi, &ch_backend_cpu, res, local, r2, sizeof(r2));
			if (worse(status, rc) != status)
				snprintf(reason, n, "%s", r2);
			status = worse(status, rc);
		}
	}
	all = ch_world_gather_json(mpi, local);
	median = flagged = NULL;
	if (all) { /* rank 0 */
		json_object_set(results, "devices", all);
		if (mpi->active && ch_rl_mark_shared_gpus(all) > 0) {
			status = worse(status, CH_ERR_USAGE);
			ch_error("two local ranks measured the same GPU (more local ranks than visible GPUs): their "
				 "devices are reported as usage errors; launch at most one rank per GPU");
			if (!reason[0] || status == CH_ERR_USAGE)
				snprintf(reason, n, "two local ranks measured the same GPU");
		}
		median = ch_rl_node_summary(all, NODE_FLAG_PCT, &flagged);
	}
	/* confirm before accusing: what looks low is measured again (collective);
	 * not a power sweep's points: they were measured at their caps */
	{
		const struct ch_backend *const bes[] = { gpu_be, &ch_backend_cpu };
		struct ch_rl_opts oc = *o;
		if (o->power.ncaps)
			oc.confirm = CH_RL_CONFIRM_OFF;
		rc = ch_rl_confirm(&oc, mpi, bes, 2, all, flagged, NODE_FLAG_PCT, r2, sizeof(r2));
		if (worse(status, rc) != status)
			snprintf(reason, n, "%s", r2);
		status = worse(status, rc);
	}
	status = ch_world_worst(mpi, status);
	if (mpi->active && status != CH_OK && !reason[0])
		snprintf(reason, n, "another rank reported '%s'", ch_status_name(status));
	if (!all) /* not rank 0 */
		return status;
	json_object_set_new(results, "node_median", median);
	json_object_set_new(results, "flagged", flagged);
	json_object_set_new(results, "flag_threshold_pct", json_real(NODE_FLAG_PCT));
	json_object_set_new(results, "confirm", json_pack("{s:s, s:s}", "mode", confirm_names[o->power.ncaps ?
		CH_RL_CONFIRM_OFF : o->confirm], "method",
		"at the end of the run, every valid point of a GPU more than flag_threshold_pct below the median of the same kernel and dtype over the node's GPUs, every point behind a flagged roof, and the points that set a CPU socket's roofs (why \"cpu_socket\": no like device on the node), measured again (same shape, same calls) and recorded in the point's \"confirm\"; flagged[].confirmed: the roof taken again over those second measurements is still more than flag_threshold_pct below node_median (null: not measured again); devices[].roofs_again: each roof whose point that set it was measured again, at its second rate. --confirm all: every valid point of every device, why \"requested\""));
	if (mpi->active && mpi->nhosts > 1)
		json_object_set_new(results, "note", json_string("ranks span several hosts: node_median is over all of them"));
	if (o->power.ncaps) {
		pnode = ch_rl_power_node(all, o->power.tolerance_pct);
		json_object_set_new(results, "power_recommendation", pnode);
	}
	json_array_foreach(all, i, d)
		print_table(d, o);
	print_node(median, flagged);
	ch_rl_host_link_print(json_object_get(results, "host_link"), all);
	if (o->power.ncaps)
		ch_rl_power_print_node(json_object_get(results, "power_recommendation"));
	json_decref(all);
	return status;
}
