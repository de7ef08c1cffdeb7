/*
 * ch_roofline.c - roofline's measurement driver (see ch_roofline.h).
 */
#include "bench/roofline/ch_roofline.h"
#include "base/ch_common.h"
#include "base/ch_datasheet.h"
#include "comm/ch_comm.h"
#include "hw/ch_energy.h"
#include "hw/ch_nvml.h"
#include "base/ch_parse.h"
#include "kernels/ch_patterns.h"
#include "base/ch_stats.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MIB (1024ull * 1024ull)
#define MAX_SAMPLES 100000
#define LADDER_TARGET_SEC 0.02  /* a shortened rung's call at the peak */
/* Energy per point (ch_energy_window): at least the backend's window (this
 * when it gives none), at least this many counter changes, at most this
 * many times the window. */
#define ENERGY_WINDOW_SEC 0.5
#define ENERGY_MIN_UPDATES 5
#define ENERGY_MAX_FACTOR 4.0
#define ENERGY_METHOD "energy counter differenced over a window of repeated calls (>= min_sec and >= min_updates counter changes); power = energy / wall-clock window"
#define ENERGY_BATCH_METHOD "energy counter differenced between two observed counter changes, >= min_sec apart, with batches of >= 50 ms of calls queued back to back (no host synchronisation per call) and only the counter read in between; calls = the calls that ran inside the window (batch times from device events); duty cycle = calls x median call time / window; power = energy / window"
#define NODE_FLAG_PCT 5.0

enum {
	OPT_BACKEND = CH_OPT_FIRST_TOOL,
	OPT_DEVICES,
	OPT_KERNELS,
	OPT_DTYPE,
	OPT_SIZE,
	OPT_GEMM_SIZE,
	OPT_ITERS,
	OPT_WARMUP,
	OPT_LIST,
	OPT_STORES,
	OPT_CONFIRM
};

void ch_rl_opts_init(struct ch_rl_opts *o)
{
	memset(o, 0, sizeof(*o));
	ch_common_opts_init(&o->common);
	o->devices_all = 1;
	o->iters = 4;
	o->warmup = 1;
	ch_rl_power_opts_init(&o->power);
	o->confirm = CH_RL_CONFIRM_ON;
}

void ch_rl_usage(FILE *f)
{
	fputs("Usage: roofline [OPTIONS]\n"
	      "Measure, for each device of this node, the memory roof (GB/s), the compute\n"
	      "roofs (GFLOP/s per dtype) and the ridge point, and where BabelStream's\n"
	      "kernels, an arithmetic-intensity ladder, GELU, LayerNorm and GEMM land\n"
	      "under them. Every point is validated; an invalid point is never reported\n"
	      "as a result and makes the run exit 1.\n"
	      "\n"
	      "Options:\n"
	      "  --backend B        auto (cuda when a GPU is present, else cpu; default),\n"
	      "                     cpu, cuda, or cpu,cuda\n"
	      "  --devices D        GPUs: all (default) or CUDA indices (0,2); under mpirun\n"
	      "                     each rank measures the GPU of its local rank\n"
	      "  --kernels LIST     kernels or families (default all): copy, mul, add, triad,\n"
	      "                     dot, fma0 ... fma1024, gelu, layernorm, gemm; families\n"
	      "                     stream, ladder, elementwise, gemm\n"
	      "  --dtype LIST       fp64, fp32, tf32, bf16, fp16, fp8 (default: each\n"
	      "                     kernel's default dtypes, see --list)\n"
	      "  --size SIZE        bytes per array, K/M/G = 1024 (default: 4/3 of the\n"
	      "                     last-level cache or GPU L2, at least 64M on a CPU and\n"
	      "                     1G on a GPU, at most 1/8 of free memory)\n"
	      "  --gemm-size N      GEMM m = n = k = N (default: CPU sized so that one call\n"
	      "                     takes at least 0.2 s, GPU 8192)\n"
	      "  --iters N          timed calls per point, the first one dropped (default 4)\n"
	      "  --warmup N         untimed calls before them (default 1)\n"
	      "  --stores MODE      CPU stream kernels' stores: streaming (non-temporal, no\n"
	      "                     write-allocate; the default where the CPU has them),\n"
	      "                     write-allocate (plain stores), auto (default)\n"
	      "  --confirm MODE     1 (default): measure again, at the end, every point of a\n"
	      "                     GPU more than 5% below the node median (the same point\n"
	      "                     on the node's GPUs, or a flagged roof's points), and\n"
	      "                     record the second measurement beside the first; all:\n"
	      "                     every point of every device (a repeatability check,\n"
	      "                     about twice the run time); 0: off\n"
	      "  --list             print the kernel table and exit\n", f);
	ch_rl_power_usage(f);
	ch_common_help(f);
	fputs("\n"
	      "Output: per device a table (kernel, dtype, AI in FLOP/byte, median time,\n"
	      "GB/s, GFLOP/s, best of both, % of roof), then the memory roof, the compute\n"
	      "roofs and the ridge points. Headline statistic: the median of the timed\n"
	      "calls after the first; best = fastest call. Where an energy counter is\n"
	      "readable a point is called again after its timed calls for its energy:\n"
	      "GPU, batches of >= 50 ms queued back to back between two changes of\n"
	      "NVML's counter >= 0.5 s apart (GFLOP/J withheld below a duty cycle of\n"
	      "0.95; power and thermal violation time over the same window marks it\n"
	      "throttled); CPU, RAPL over >= 0.1 s of calls. fp8 GEMMs run with split\n"
	      "and with fast accumulation, labelled.\n"
	      "Under mpirun each rank measures GPU local_rank % visible GPUs.\n"
	      "\n"
	      "Exit status: 0 ok, 1 a point failed validation, 2 usage error, 3 backend\n"
	      "or device unavailable (the result file says why), 4 run-time error (a\n"
	      "point that fails is recorded with its reason and the next points run).\n"
	      "\n"
	      "Examples:\n"
	      "  roofline                                  # the GPUs, or the CPU without one\n"
	      "  roofline --backend cpu --json cpu.json    # the host CPU\n"
	      "  roofline --backend cuda --devices all --json gpus.json\n"
	      "  mpirun -np 8 roofline --backend cuda --json node.json   # one rank per GPU\n"
	      "  roofline --kernels triad,gemm --dtype fp64 --size 256M\n", f);
}

void ch_rl_list(FILE *f)
{
	int n, i, d;
	const struct ch_kernel *t = ch_kernel_table(&n);

	fprintf(f, "%-10s %-12s %8s %6s %6s  %-28s %s\n", "kernel", "family", "FLOP/el",
		"rd/el", "wr/el", "dtypes (default*)", "formula");
	for (i = 0; i < n; i++) {
		char dts[64] = "";
		size_t used = 0;
		for (d = 0; d < CH_NDTYPES; d++)
			if (t[i].dtypes & CH_DT_BIT(d))
				used += (size_t)snprintf(dts + used, sizeof(dts) - used, "%s%s%s",
							 used ? "," : "", ch_dtype_name(d),
							 t[i].default_dtypes & CH_DT_BIT(d) ? "*" : "");
		fprintf(f, "%-10s %-12s %8g %6g %6g  %-28s %s\n", t[i].name, ch_family_name(t[i].family),
			t[i].flops_per_elem, t[i].reads_per_elem, t[i].writes_per_elem, dts, t[i].formula);
	}
	fputs("words are dtype-sized; gemm: FLOPs = 2 m n k, bytes = (m k + k n) size + m n size(C);\n"
	      "layernorm adds 5 FLOPs per row and reads gamma and beta once\n", f);
}

static int parse_list(const char *opt, const char *arg, char *buf, size_t bufn, char **items, int max)
{
	int n;
	if (!arg || !*arg)
		return ch_usage_error("empty value for %s", opt);
	if (strlen(arg) >= bufn)
		return ch_usage_error("value of %s is too long", opt);
	strcpy(buf, arg);
	n = ch_split_list(buf, items, max);
	if (n < 0)
		return ch_usage_error("bad list '%s' for %s (empty item or more than %d items)", arg, opt, max);
	return n;
}

static int parse_kernels(const char *arg, uint64_t *mask)
{
	char buf[1024], *items[64];
	int n = parse_list("--kernels", arg, buf, sizeof(buf), items, 64), i, j, nk;
	const struct ch_kernel *t = ch_kernel_table(&nk);

	if (n < 0)
		return n;
	*mask = 0;
	for (i = 0; i < n; i++) {
		int found = 0;
		for (j = 0; j < nk; j++)
			if (!strcmp(items[i], t[j].name) || !strcmp(items[i], ch_family_name(t[j].family))) {
				*mask |= 1ull << j;
				found = 1;
			}
		if (!found)
			return ch_usage_error("unknown kernel '%s' for --kernels (expected: copy, mul, add, triad, dot, "
					      "fma0, fma1, fma2, fma4, ... fma1024, gelu, layernorm, gemm, or a family: "
					      "stream, ladder, elementwise, gemm)", items[i]);
	}
	return 0;
}

static int parse_dtypes(const char *arg, unsigned *mask)
{
	char buf[256], *items[16];
	int n = parse_list("--dtype", arg, buf, sizeof(buf), items, 16), i;

	if (n < 0)
		return n;
	*mask = 0;
	for (i = 0; i < n; i++) {
		int d = ch_dtype_parse(items[i]);
		if (d < 0)
			return ch_usage_error("unknown dtype '%s' for --dtype (expected: fp64, fp32, tf32, bf16, fp16, fp8)",
					      items[i]);
		*mask |= CH_DT_BIT(d);
	}
	return 0;
}

static int parse_backend(const char *arg, unsigned *mask)
{
	char buf[64], *items[4];
	int n = parse_list("--backend", arg, buf, sizeof(buf), items, 4), i;

	if (n < 0)
		return n;
	*mask = 0;
	for (i = 0; i < n; i++) {
		if (!strcmp(items[i], "auto") && n == 1)
			*mask = 0;
		else if (!strcmp(items[i], "cpu"))
			*mask |= CH_RL_BACKEND_CPU;
		else if (!strcmp(items[i], "cuda"))
			*mask |= CH_RL_BACKEND_CUDA;
		else
			return ch_usage_error("unknown backend '%s' for --backend (expected: auto, cpu, cuda, or cpu,cuda)",
					      items[i]);
	}
	return 0;
}

static int parse_devices(const char *arg, struct ch_rl_opts *o)
{
	char buf[512], *items[CH_RL_MAX_DEVICES];
	int n, i;

	if (arg && !strcmp(arg, "all")) {
		o->devices_all = 1;
		o->ndevices = 0;
		return 0;
	}
	n = parse_list("--devices", arg, buf, sizeof(buf), items, CH_RL_MAX_DEVICES);
	if (n < 0)
		return n;
	for (i = 0; i < n; i++) {
		long v;
		if (ch_parse_long("--devices", items[i], 0, 1023, &v))
			return CH_ERR_USAGE;
		o->devices[i] = (int)v;
	}
	o->ndevices = n;
	o->devices_all = 0;
	return 0;
}

/* --stores values, indexed by enum ch_stores (kernels/ch_kernels.h) */
static const char *const stores_names[] = { "auto", "streaming", "write-allocate", NULL };
static const char *const confirm_names[] = { "0", "1", "all", NULL };

/* One option of roofline (ch_opts_getopt()'s handler): 1 handled, 0 not one
 * of its own, or a negative status (message printed). */
static int rl_opt(int c, const char *arg, void *ctx)
{
	struct ch_rl_opts *o = ctx;
	int rc;
	long v;

	switch (c) {
	case OPT_BACKEND:
		if ((rc = parse_backend(arg, &o->backends)) != 0)
			return rc;
		break;
	case OPT_DEVICES:
		if ((rc = parse_devices(arg, o)) != 0)
			return rc;
		break;
	case OPT_KERNELS:
		if ((rc = parse_kernels(arg, &o->kernels)) != 0)
			return rc;
		break;
	case OPT_DTYPE:
		if ((rc = parse_dtypes(arg, &o->dtypes)) != 0)
			return rc;
		break;
	case OPT_SIZE:
		if (ch_parse_size("--size", arg, &o->size_bytes))
			return CH_ERR_USAGE;
		if (o->size_bytes < MIB)
			return ch_usage_error("--size '%s' is too small: each array needs at least 1M", arg);
		if (o->size_bytes > (1ull << 40))
			return ch_usage_error("--size '%s' is too large: at most 1T per array", arg);
		break;
	case OPT_GEMM_SIZE:
		if (ch_parse_long("--gemm-size", arg, 16, 65536, &v))
			return CH_ERR_USAGE;
		o->gemm_n = (uint64_t)v;
		break;
	case OPT_ITERS:
		if (ch_parse_long("--iters", arg, 2, MAX_SAMPLES, &v))
			return CH_ERR_USAGE;
		o->iters = (int)v;
		break;
	case OPT_WARMUP:
		if (ch_parse_long("--warmup", arg, 0, 1000, &v))
			return CH_ERR_USAGE;
		o->warmup = (int)v;
		break;
	case OPT_LIST:
		o->list = 1;
		break;
	case OPT_STORES:
		if ((rc = ch_lookup("--stores", arg, stores_names)) < 0)
			return rc;
		o->stores = rc;
		break;
	case OPT_CONFIRM:
		if ((rc = ch_lookup("--confirm", arg, confirm_names)) < 0)
			return rc;
		o->confirm = rc;
		break;
	default:
		return ch_rl_power_opt(c, arg, &o->power);
	}
	return 1;
}

int ch_rl_parse(int argc, char **argv, struct ch_rl_opts *o)
{
	static const struct option longopts[] = {
		{ "backend", required_argument, NULL, OPT_BACKEND },
		{ "devices", required_argument, NULL, OPT_DEVICES },
		{ "kernels", required_argument, NULL, OPT_KERNELS },
		{ "dtype", required_argument, NULL, OPT_DTYPE },
		{ "size", required_argument, NULL, OPT_SIZE },
		{ "gemm-size", required_argument, NULL, OPT_GEMM_SIZE },
		{ "iters", required_argument, NULL, OPT_ITERS },
		{ "warmup", required_argument, NULL, OPT_WARMUP },
		{ "list", no_argument, NULL, OPT_LIST },
		{ "stores", required_argument, NULL, OPT_STORES },
		CH_RL_POWER_LONGOPTS,
		{ "confirm", required_argument, NULL, OPT_CONFIRM },
		CH_COMMON_LONGOPTS,
		{ NULL, 0, NULL, 0 }
	};
	int rc;

	ch_rl_opts_init(o);
	if ((rc = ch_opts_getopt(argc, argv, CH_COMMON_SHORTOPTS, longopts, rl_opt, o, &o->common)) != 0)
		return rc;
	if (optind < argc)
		return ch_usage_error("unexpected argument '%s'", argv[optind]);
	if (o->power.ncaps && o->backends == CH_RL_BACKEND_CPU)
		return ch_usage_error("--power-limits sets GPU power limits: it needs the cuda backend (--backend cuda "
				      "or auto)");
	return 0;
}

/* ------------------------------------------------------------ pure helpers */

uint64_t ch_rl_default_array_bytes(uint64_t cache_bytes, uint64_t free_bytes, int gpu)
{
	uint64_t floor_bytes = gpu ? 1024 * MIB : 64 * MIB;
	uint64_t b = (cache_bytes * 4 + 2) / 3;
	uint64_t cap = free_bytes / 8 / MIB * MIB;

	if (b < floor_bytes)
		b = floor_bytes;
	b = (b + MIB - 1) / MIB * MIB;
	if (cap >= MIB && b > cap)
		b = cap;
	return b;
}

uint64_t ch_rl_ladder_elems(uint64_t n, double ai, double flops_per_elem, double mem_gbps,
			    double peak_gflops, double target_sec, uint64_t min_elems)
{
	double want;
	uint64_t e;

	if (mem_gbps <= 0 || peak_gflops <= 0 || flops_per_elem <= 0 || ai <= peak_gflops / mem_gbps)
		return n;
	want = ceil(target_sec * peak_gflops * 1e9 / flops_per_elem);
	e = want >= (double)n ? n : (uint64_t)want;
	if (e < min_elems)
		e = min_elems;
	if (e >= n)
		return n;
	e = (e + 4095) / 4096 * 4096;
	return e < n ? e : n;
}

static json_t *jnum(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static double jget(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

json_t *ch_rl_roofs(json_t *points)
{
	json_t *roofs = json_object(), *cg = json_object(), *ck = json_object(), *ridge = json_object();
	double mem = -1, comp[CH_NDTYPES];
	char mem_kernel[64] = "";
	size_t i;
	json_t *p;
	int d;

	for (d = 0; d < CH_NDTYPES; d++)
		comp[d] = -1;
	json_array_foreach(points, i, p) {
		const char *fam = json_string_value(json_object_get(p, "family"));
		const char *dts = json_string_value(json_object_get(p, "dtype"));
		const char *kn = json_string_value(json_object_get(p, "kernel"));
		double gbps = jget(p, "gbps"), gflops = jget(p, "gflops");
		int dt = ch_dtype_parse(dts);
		if (!json_is_true(json_object_get(p, "valid")) || !fam || dt < 0 || !kn)
			continue;
		if (!strcmp(fam, "stream") && gbps > mem) {
			mem = gbps;
			snprintf(mem_kernel, sizeof(mem_kernel), "%s %s", kn, dts);
		}
		if ((!strcmp(fam, "ladder") || !strcmp(fam, "gemm")) && gflops > comp[dt]) {
			const char *acc = json_string_value(json_object_get(p, "accumulation"));
			char label[64];
			snprintf(label, sizeof(label), "%s%s%s", kn, acc ? ", " : "", acc && !strcmp(acc, "fast") ?
				 "fast accumulation" : acc ? "split accumulation" : "");
			comp[dt] = gflops;
			json_object_set_new(ck, dts, json_string(label));
		}
	}
	json_object_set_new(roofs, "memory_gbps", mem > 0 ? json_real(mem) : json_null());
	json_object_set_new(roofs, "memory_kernel", mem > 0 ? json_string(mem_kernel) : json_null());
	for (d = 0; d < CH_NDTYPES; d++) {
		if (comp[d] <= 0)
			continue;
		json_object_set_new(cg, ch_dtype_name(d), json_real(comp[d]));
		if (mem > 0)
			json_object_set_new(ridge, ch_dtype_name(d), json_real(comp[d] / mem));
	}
	json_object_set_new(roofs, "compute_gflops", cg);
	json_object_set_new(roofs, "compute_kernel", ck);
	json_object_set_new(roofs, "ridge_flop_per_byte", ridge);
	return roofs;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* Median of the metric over GPU devices with status ok, and the flags. */
static void node_metric(json_t *devices, const char *metric, const char *dtype, double threshold_pct,
			json_t *median_obj, json_t *flagged)
{
	double vals[1024], med;
	size_t i, n = 0;
	json_t *dev;

	json_array_foreach(devices, i, dev) {
		json_t *roofs = json_object_get(dev, "roofs");
		double v = dtype ? jget(json_object_get(roofs, "compute_gflops"), dtype) : jget(roofs, "memory_gbps");
		const char *kind = json_string_value(json_object_get(dev, "kind"));
		const char *st = json_string_value(json_object_get(dev, "status"));
		if (!kind || strcmp(kind, "gpu") || !st || strcmp(st, "ok") || !(v > 0) || n >= 1024)
			continue;
		vals[n++] = v;
	}
	if (!n)
		return;
	qsort(vals, n, sizeof(vals[0]), cmp_dbl);
	med = ch_percentile_sorted(vals, n, 50.0);
	json_object_set_new(median_obj, dtype ? dtype : metric, json_real(med));
	json_array_foreach(devices, i, dev) {
		json_t *roofs = json_object_get(dev, "roofs");
		double v = dtype ? jget(json_object_get(roofs, "compute_gflops"), dtype) : jget(roofs, "memory_gbps");
		const char *kind = json_string_value(json_object_get(dev, "kind"));
		const char *st = json_string_value(json_object_get(dev, "status"));
		double below;
		char name[64];
		json_t *f;
		if (!kind || strcmp(kind, "gpu") || !st || strcmp(st, "ok") || !(v > 0))
			continue;
		below = 100.0 * (med - v) / med;
		if (below <= threshold_pct)
			continue;
		f = json_object();
		json_object_set(f, "device", json_object_get(dev, "device"));
		if (json_object_get(dev, "host"))
			json_object_set(f, "host", json_object_get(dev, "host"));
		snprintf(name, sizeof(name), "%s%s%s", metric, dtype ? "." : "", dtype ? dtype : "");
		json_object_set_new(f, "metric", json_string(name));
		json_object_set_new(f, "value", json_real(v));
		json_object_set_new(f, "node_median", json_real(med));
		json_object_set_new(f, "pct_below", json_real(below));
		json_array_append_new(flagged, f);
	}
}

json_t *ch_rl_node_summary(json_t *devices, double threshold_pct, json_t **flagged)
{
	json_t *med = json_object(), *cg = json_object(), *dev;
	size_t i, ngpu = 0;
	int d;

	*flagged = json_array();
	json_array_foreach(devices, i, dev) {
		const char *kind = json_string_value(json_object_get(dev, "kind"));
		const char *st = json_string_value(json_object_get(dev, "status"));
		if (kind && !strcmp(kind, "gpu") && st && !strcmp(st, "ok"))
			ngpu++;
	}
	if (!ngpu) {
		json_decref(med);
		json_decref(cg);
		return json_null();
	}
	node_metric(devices, "memory_gbps", NULL, threshold_pct, med, *flagged);
	for (d = 0; d < CH_NDTYPES; d++)
		node_metric(devices, "compute_gflops", ch_dtype_name(d), threshold_pct, cg, *flagged);
	if (!json_object_get(med, "memory_gbps"))
		json_object_set_new(med, "memory_gbps", json_null());
	json_object_set_new(med, "compute_gflops", cg);
	json_object_set_new(med, "gpus", json_integer((json_int_t)ngpu));
	return med;
}

/* ------------------------------------------------------------ measuring */

struct rl_dev {
	const struct ch_rl_opts *o;
	const struct ch_backend *be;
	struct ch_dev *dev;
	struct ch_dev_info info;
	struct ch_result *res;
	json_t *jdev;               /* this device's object (borrowed) */
	json_t *points;             /* its points array (borrowed) */
	const struct ch_datasheet *ds;
	double peak_est[CH_NDTYPES];
	uint64_t array_bytes;
	int invalid, errors;
	const struct ch_shape *force_shape; /* the confirmation: the first measurement's shape */
};

static json_t *stats_json(const struct ch_stats *s)
{
	json_t *o = json_object();
	json_object_set_new(o, "n", json_integer((json_int_t)s->n));
	json_object_set_new(o, "min", jnum(s->min));
	json_object_set_new(o, "median", jnum(s->median));
	json_object_set_new(o, "mean", jnum(s->mean));
	json_object_set_new(o, "p95", jnum(s->p95));
	json_object_set_new(o, "max", jnum(s->max));
	json_object_set_new(o, "cv", jnum(s->cv));
	return o;
}

static json_t *check_json(const struct ch_check *c, const char *method)
{
	json_t *o = json_object();
	json_object_set_new(o, "method", json_string(method));
	json_object_set_new(o, "checked", json_integer((json_int_t)c->checked));
	json_object_set_new(o, "bad", json_integer((json_int_t)c->bad));
	json_object_set_new(o, "first_bad", c->bad ? json_integer((json_int_t)c->first_bad) : json_null());
	json_object_set_new(o, "got", jnum(c->got));
	json_object_set_new(o, "want", jnum(c->want));
	json_object_set_new(o, "tol", jnum(c->tol));
	json_object_set_new(o, "worst_err_over_tol", jnum(c->worst_ratio));
	return o;
}

static const char *check_method(const struct ch_kernel *k)
{
	switch (k->family) {
	case CH_FAM_GEMM:
		return "64 sampled entries (C NaN-filled first) vs exact values, tol: 0 when every partial sum is exact, else (k-1) u R (tensor cores) or 6 sqrt(k) u R (fp32, fp64), R = range of the prefix sums; + eps(out) |value|";
	case CH_FAM_STREAM:
		return k->id == CH_K_DOT ? "sum vs exact value, tol (n+2) eps64 sum|a b|"
					 : "every element vs analytic value, tol 4 eps |value|";
	case CH_FAM_LADDER:
		return "every element vs analytic value (x or 3-x), tol 2 eps |value|";
	default:
		return k->id == CH_K_GELU ? "every element vs GELU in fp64, tol eps|value| + 16 eps32 (|x|+1)"
					  : "every element vs LayerNorm in fp64, tol eps|value| + (2 cols+16) eps32 x scale";
	}
}

/* The point named by CH_ROOFLINE_CORRUPT ("kernel" or "kernel:dtype"). */
static int corrupt_requested(const struct ch_point_spec *p)
{
	const char *e = getenv("CH_ROOFLINE_CORRUPT");
	char want[64];
	if (!e || !*e)
		return 0;
	snprintf(want, sizeof(want), "%s:%s", p->k->name, ch_dtype_name(p->dt));
	return !strcmp(e, p->k->name) || !strcmp(e, want);
}

static double mem_roof_so_far(json_t *points)
{
	json_t *roofs = ch_rl_roofs(points);
	double m = jget(roofs, "memory_gbps");
	json_decref(roofs);
	return isnan(m) ? -1 : m;
}

static int point_shape(struct rl_dev *r, const struct ch_kernel *k, enum ch_dtype dt,
		       struct ch_shape *s)
{
	uint64_t n = r->array_bytes / ch_dtype_size(dt);
	int rc;

	memset(s, 0, sizeof(*s));
	s->cols = 1;
	if (r->force_shape) {
		*s = *r->force_shape;
		return 0;
	}
	if (k->family == CH_FAM_GEMM) {
		uint64_t g = r->o->gemm_n;
		if (!g) {
			if (!r->be->gemm_size)
				g = 8192;
			else if ((rc = r->be->gemm_size(r->dev, dt, 0.2, &g)) != 0)
				return rc;
		}
		s->m = s->nn = s->kk = g;
		return 0;
	}
	if (k->id == CH_K_LAYERNORM) {
		s->cols = CH_LN_COLS;
		if (n < s->cols)
			return CH_ERR_USAGE;
		s->n = n / s->cols * s->cols;
		return 0;
	}
	if (k->family == CH_FAM_LADDER) {
		struct ch_shape full = { .n = n, .cols = 1 };
		struct ch_counts c;
		double peak = r->peak_est[dt];
		ch_kernel_counts(k, dt, &full, &c);
		/* the ladder is FMA code on the CUDA cores: its ceiling is the
		 * CUDA-core figure, not the tensor-core peak */
		if (ch_datasheet_cuda_core_gflops(r->ds, dt) > peak)
			peak = ch_datasheet_cuda_core_gflops(r->ds, dt);
		s->n = ch_rl_ladder_elems(n, c.ai, k->flops_per_elem, mem_roof_so_far(r->points), peak,
					  LADDER_TARGET_SEC, 65536ull * (uint64_t)(r->info.threads > 0 ? r->info.threads : 1));
		return 0;
	}
	s->n = n;
	return 0;
}

static void set_point_numbers_null(json_t *jp)
{
	static const char *const keys[] = { "time_sec", "gbps", "gflops", "gbps_best", "gflops_best",
		"gbps_write_allocate", "pct_of_roof", "pct_of_datasheet", "pct_of_peak_estimate" };
	size_t i;
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		json_object_set_new(jp, keys[i], json_null());
}

/* One point as measured, before anything is written: measure_point() fills
 * it, emit_point() turns it into the point's JSON object. */
struct rl_point {
	struct ch_point_spec p;
	int shaped;                 /* the shape and counts are known */
	struct ch_counts cnt;
	int rc;                     /* 0, or the status that stopped the point */
	char error[640];            /* why it stopped (rc != 0) */
	struct ch_check chk;
	struct ch_stats st;         /* over the timed calls after the first */
	double t_shape, t_setup, t_check; /* harness seconds */
	int ns, extra;              /* timed calls; extra calls for the energy window */
	int thr0, thr1;             /* throttled before / after: 1, 0, -1 unknown */
	json_t *tel0, *tel1;        /* telemetry before / after (owned), NULL: none */
	int have_e;                 /* an energy counter was read */
	struct ch_energy_window ew;
	int have_plain;             /* plain_st holds the plain-store calls */
	struct ch_stats plain_st;   /* streaming-store CPU stream points: the same calls with plain stores */
	int batched;                /* energy from ch_rl_energy_window() (eb), not ew */
	struct ch_rl_energy eb;
};

/* ------------------------------------------------ energy over queued calls */

struct eb_batch {
	double t0, t1; /* first call's start, last call's end (ch_now_sec clock) */
	int calls;
};

/* The batches of one window: two in flight at most, slots alternate. */
struct eb {
	const struct ch_backend *be;
	struct ch_dev *dev;
	const struct ch_point_spec *p;
	int calls;             /* per batch */
	long queued, done;
	struct eb_batch *b;
	size_t nb, cap;
};

static int eb_queue(struct eb *q)
{
	int rc = q->be->queue(q->dev, q->p, q->calls, (int)(q->queued % 2));
	if (rc == 0)
		q->queued++;
	return rc;
}

/* The oldest batch: when it has finished (@wait: wait for it), record it
 * and, with @requeue, queue the next. Returns 1 when one finished, 0 when
 * none did, or a negative status. */
static int eb_pump(struct eb *q, int wait, int requeue)
{
	double t0, t1;
	int rc;

	if (q->done == q->queued)
		return 0;
	rc = q->be->batch_done(q->dev, (int)(q->done % 2), wait, &t0, &t1);
	if (rc <= 0)
		return rc;
	if (q->nb == q->cap) {
		size_t nc = q->cap ? 2 * q->cap : 64;
		struct eb_batch *nbp = realloc(q->b, nc * sizeof(*nbp));
		if (!nbp)
			return CH_ERR_RUNTIME;
		q->b = nbp;
		q->cap = nc;
	}
	q->b[q->nb].t0 = t0;
	q->b[q->nb].t1 = t1;
	q->b[q->nb].calls = q->calls;
	q->nb++;
	q->done++;
	return requeue ? (eb_queue(q) ? CH_ERR_RUNTIME : 1) : 1;
}

static void sleep_sec(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
	nanosleep(&ts, NULL);
}

/* Poll the counter, keeping the device busy, until it changes from @last.
 * Returns 1 with *@t (middle of the read before and the read that saw the
 * change), *@half (half that interval) and *@e set; 0 when it did not
 * change within CH_RL_ENERGY_EDGE_MAX_SEC or cannot be read; or a negative
 * status of the batches. */
static int eb_edge(struct eb *q, double last, double *t, double *half, double *e)
{
	double ta_prev = ch_now_sec(), t_start = ta_prev, v;
	int rc;

	for (;;) {
		double ta, tb;
		if ((rc = eb_pump(q, 0, 1)) < 0)
			return rc;
		ta = ch_now_sec();
		if (q->be->energy_j(q->dev, &v) != 0)
			return 0;
		tb = ch_now_sec();
		if (v != last) {
			*t = (ta_prev + tb) / 2;
			*half = (tb - ta_prev) / 2;
			*e = v;
			return 1;
		}
		if (tb - t_start > CH_RL_ENERGY_EDGE_MAX_SEC)
			return 0;
		ta_prev = ta;
		sleep_sec(CH_RL_ENERGY_POLL_SEC);
	}
}

int ch_rl_energy_window(const struct ch_backend *be, struct ch_dev *dev, const struct ch_point_spec *p,
			double call_sec, double flops, double min_sec, struct ch_rl_energy *out)
{
	struct eb q = { be, dev, p, 1, 0, 0, NULL, 0, 0 };
	double e, e0 = 0, e1 = 0, t0 = 0, t1 = 0, h0 = 0, h1 = 0, calls = 0, w;
	double bc = call_sec > 0 ? ceil(CH_RL_ENERGY_BATCH_SEC / call_sec) : 1;
	int rc = 0, started = 0, ended = 0;
	size_t i;

	memset(out, 0, sizeof(*out));
	out->energy_j = out->wall_sec = out->avg_power_w = out->gflop_per_j = out->duty = NAN;
	out->thr0 = out->thr1 = -1;
	out->min_sec = min_sec;
	out->call_sec = call_sec;
	ch_nvml_violations_na(&out->v0);
	ch_nvml_violations_na(&out->v1);
	q.calls = bc < 1 ? 1 : bc > 1e6 ? 1000000 : (int)bc;
	out->batch_calls = q.calls;
	/* two batches in flight; the first one finished: the device is warm
	 * and busy with the second, the third queued */
	if ((rc = eb_queue(&q)) != 0 || (rc = eb_queue(&q)) != 0 || (rc = eb_pump(&q, 1, 1)) < 0)
		goto drain;
	rc = 0;
	if (be->telemetry_json)
		out->tel0 = be->telemetry_json(dev);
	if (be->throttled)
		out->thr0 = be->throttled(dev);
	out->have_thr = be->throttle_ns && be->throttle_ns(dev, &out->v0) == 0;
	if (be->energy_j(dev, &e) != 0) {
		snprintf(out->why, sizeof(out->why), "the energy counter cannot be read");
		goto drain;
	}
	/* the window opens at a change of the counter: its value is fresh */
	if ((rc = eb_edge(&q, e, &t0, &h0, &e0)) < 0)
		goto drain;
	if (!(started = rc)) {
		snprintf(out->why, sizeof(out->why), "the energy counter did not change within %.1f s of calls",
			 CH_RL_ENERGY_EDGE_MAX_SEC);
		goto drain;
	}
	rc = 0;
	/* inside: batches back to back, nothing read but the counter */
	e = e0;
	while (ch_now_sec() - t0 < min_sec) {
		double v;
		if ((rc = eb_pump(&q, 1, 1)) < 0)
			goto drain;
		rc = 0;
		if (be->energy_j(dev, &v) == 0 && v != e) {
			out->updates++;
			e = v;
		}
	}
	/* ... and closes at the next change */
	if ((rc = eb_edge(&q, e, &t1, &h1, &e1)) < 0)
		goto drain;
	if (!(ended = rc)) {
		snprintf(out->why, sizeof(out->why), "the energy counter stopped changing after %.3f s", ch_now_sec() - t0);
		goto drain;
	}
	rc = 0;
	out->updates++;
	if (out->have_thr && be->throttle_ns(dev, &out->v1) != 0)
		out->have_thr = 0;
	if (be->throttled)
		out->thr1 = be->throttled(dev);
	if (be->telemetry_json)
		out->tel1 = be->telemetry_json(dev);
drain:
	while (q.done < q.queued) {
		int r2 = eb_pump(&q, 1, 0);
		if (r2 < 0) {
			if (!rc)
				rc = r2;
			break;
		}
	}
	out->batches = (int)q.done;
	if (rc == 0 && started && ended) {
		w = t1 - t0;
		for (i = 0; i < q.nb; i++) {
			double lo = q.b[i].t0 > t0 ? q.b[i].t0 : t0, hi = q.b[i].t1 < t1 ? q.b[i].t1 : t1;
			double len = q.b[i].t1 - q.b[i].t0;
			if (hi > lo && len > 0)
				calls += q.b[i].calls * (hi - lo) / len;
		}
		out->wall_sec = w;
		out->t0 = t0;
		out->t1 = t1;
		out->edge_sec = h0 + h1;
		out->calls = calls;
		out->energy_j = e1 - e0;
		out->duty = w > 0 ? calls * call_sec / w : NAN;
		if (!(out->energy_j > 0)) {
			snprintf(out->why, sizeof(out->why), "the counter did not increase (%.6g J)", out->energy_j);
		} else {
			out->ok = 1;
			out->avg_power_w = out->energy_j / w;
			if (!(out->duty >= CH_RL_ENERGY_MIN_DUTY))
				snprintf(out->withheld, sizeof(out->withheld),
					 "duty cycle %.3f below %.2f: the window's energy includes idle time", out->duty,
					 CH_RL_ENERGY_MIN_DUTY);
			else if (flops > 0)
				out->gflop_per_j = flops * calls / out->energy_j / 1e9;
		}
	}
	free(q.b);
	return rc;
}

static json_t *num_or_null(double v)
{
	return isnan(v) ? json_null() : json_real(v);
}

json_t *ch_rl_energy_json(const struct ch_rl_energy *e)
{
	json_t *o = json_pack("{s:s,s:o,s:o,s:o,s:o,s:i,s:i,s:i,s:f,s:f,s:o,s:f,s:f}",
		"method", ENERGY_BATCH_METHOD, "wall_sec", num_or_null(e->wall_sec),
		"calls", num_or_null(e->ok || !isnan(e->wall_sec) ? e->calls : NAN),
		"duty_cycle", num_or_null(e->duty), "edge_uncertainty_sec", num_or_null(e->ok ? e->edge_sec : NAN),
		"batches", e->batches, "calls_per_batch", e->batch_calls, "counter_updates", e->updates,
		"call_sec", e->call_sec, "batch_min_sec", CH_RL_ENERGY_BATCH_SEC,
		"extra_calls", json_integer((json_int_t)e->batches * e->batch_calls),
		"min_sec", e->min_sec, "min_duty_cycle", CH_RL_ENERGY_MIN_DUTY);
	if (!e->ok)
		json_object_set_new(o, "not_measured", json_string(e->why[0] ? e->why : "not measured"));
	if (e->withheld[0])
		json_object_set_new(o, "gflop_per_j_withheld", json_string(e->withheld));
	return o;
}

json_t *ch_rl_throttle_json(const struct ch_rl_energy *e, int *throttled)
{
	static const char *const names[] = { "power_sec", "thermal_sec", "sw_thermal_sec", "hw_thermal_sec",
					     "hw_power_brake_sec" };
	const double a[] = { e->v0.power_ns, e->v0.thermal_ns, e->v0.sw_thermal_ns, e->v0.hw_thermal_ns,
			     e->v0.hw_power_brake_ns };
	const double b[] = { e->v1.power_ns, e->v1.thermal_ns, e->v1.sw_thermal_ns, e->v1.hw_thermal_ns,
			     e->v1.hw_power_brake_ns };
	json_t *o;
	size_t i;
	int any = 0, known = 0;

	*throttled = -1;
	if (!e->have_thr)
		return json_null();
	o = json_object();
	for (i = 0; i < 5; i++) {
		double d = b[i] - a[i];
		/* a counter that went backwards (driver reload) tells nothing */
		if (isnan(d) || d < 0) {
			json_object_set_new(o, names[i], json_null());
			continue;
		}
		known = 1;
		any |= d > 0;
		json_object_set_new(o, names[i], json_real(d * 1e-9));
	}
	json_object_set_new(o, "window_sec", num_or_null(e->v1.t_sec - e->v0.t_sec));
	json_object_set_new(o, "source", json_string("nvmlDeviceGetViolationStatus (power, thermal) and the clock-event reason counters (nvmlDeviceGetFieldValues, where the build's nvml.h and the driver have them), read before the window's start and after its end"));
	if (known)
		*throttled = any;
	return o;
}

/* The warm-up, timed and energy-window calls of a set-up point; returns 0 or
 * the status of the failed call, with *stage naming its stage. A backend
 * that queues calls (GPU) gets its energy window after the timed calls
 * (ch_rl_energy_window()); a synchronous one (CPU) times its window call by
 * call, the timed calls included. */
static int time_point(struct rl_dev *r, struct rl_point *pt, double *samples, int max_samples,
		      double min_time, const char **stage)
{
	const struct ch_rl_opts *o = r->o;
	double kept_sum = 0, e = NAN, sec;
	int rc, i;

	pt->batched = r->be->queue && r->be->batch_done && r->be->energy_j && r->be->energy_j(r->dev, &e) == 0;
	*stage = "warm-up";
	for (i = 0; i < o->warmup; i++)
		if ((rc = r->be->run(r->dev, &pt->p, &sec)) != 0)
			return rc;
	if (!pt->batched) {
		if (r->be->telemetry_json)
			pt->tel0 = r->be->telemetry_json(r->dev);
		if (r->be->throttled)
			pt->thr0 = r->be->throttled(r->dev);
	}
	/* energy over a window of calls long enough for the counter
	 * (ch_energy.h): the timed calls, then more until it is */
	if (!pt->batched && r->be->energy_j && r->be->energy_j(r->dev, &e) == 0) {
		double win = r->be->energy_window_sec > 0 ? r->be->energy_window_sec : ENERGY_WINDOW_SEC;
		pt->have_e = 1;
		ch_energy_window_start(&pt->ew, ch_now_sec(), e, win, ENERGY_MIN_UPDATES, ENERGY_MAX_FACTOR * win);
	}
	*stage = "timed calls";
	while (pt->ns < max_samples) {
		if ((rc = r->be->run(r->dev, &pt->p, &samples[pt->ns])) != 0)
			return rc;
		if (pt->have_e)
			ch_energy_window_add(&pt->ew, 1, ch_now_sec(), r->be->energy_j(r->dev, &e) == 0 ? e : NAN);
		if (pt->ns > 0)
			kept_sum += samples[pt->ns];
		pt->ns++;
		if (pt->ns >= o->iters && kept_sum >= min_time)
			break;
	}
	if (pt->p.k->family == CH_FAM_STREAM && pt->p.k->writes_per_elem > 0 && !strcmp(r->info.stores, "streaming") &&
	    o->iters > 1) {
		/* beside the streaming-store figure, the same calls with plain
		 * (write-allocate) stores: what ordinary code gets */
		double *ps = malloc(sizeof(double) * (size_t)o->iters);
		*stage = "plain-store calls";
		pt->p.plain_stores = 1;
		for (i = 0; ps && i < o->iters; i++)
			if ((rc = r->be->run(r->dev, &pt->p, &ps[i])) != 0) {
				free(ps);
				pt->p.plain_stores = 0;
				return rc;
			}
		pt->p.plain_stores = 0;
		pt->have_plain = ps && ch_stats_compute(ps + 1, (size_t)(o->iters - 1), &pt->plain_st) == 0;
		free(ps);
	}
	*stage = "energy window";
	if (pt->batched) {
		struct ch_stats st;
		double win = r->be->energy_window_sec > 0 ? r->be->energy_window_sec : ENERGY_WINDOW_SEC;
		if (ch_stats_compute(samples + (pt->ns > 1), (size_t)(pt->ns > 1 ? pt->ns - 1 : pt->ns), &st) != 0)
			return CH_ERR_RUNTIME;
		rc = ch_rl_energy_window(r->be, r->dev, &pt->p, st.median, pt->cnt.flops, win, &pt->eb);
		pt->tel0 = pt->eb.tel0;
		pt->tel1 = pt->eb.tel1;
		pt->eb.tel0 = pt->eb.tel1 = NULL;
		pt->thr0 = pt->eb.thr0;
		pt->thr1 = pt->eb.thr1;
		return rc;
	}
	while (pt->have_e && ch_energy_window_more(&pt->ew)) {
		if ((rc = r->be->run(r->dev, &pt->p, &sec)) != 0)
			return rc;
		ch_energy_window_add(&pt->ew, 1, ch_now_sec(), r->be->energy_j(r->dev, &e) == 0 ? e : NAN);
		pt->extra++;
	}
	if (r->be->throttled)
		pt->thr1 = r->be->throttled(r->dev);
	if (r->be->telemetry_json)
		pt->tel1 = r->be->telemetry_json(r->dev);
	return 0;
}

/* Measure kernel @k in @dt into @pt: shape, set-up, calls, check. A point
 * that fails keeps the status and reason in pt->rc and pt->error. */
static void measure_point(struct rl_dev *r, const struct ch_kernel *k, enum ch_dtype dt, int fast_accum,
			  struct rl_point *pt)
{
	const struct ch_rl_opts *o = r->o;
	const double min_time = o->common.min_time_sec > 0 ? o->common.min_time_sec : 0;
	const int max_samples = min_time > 0 ? MAX_SAMPLES : o->iters;
	const char *stage = "setup";
	double *samples = NULL;
	int rc;

	memset(pt, 0, sizeof(*pt));
	pt->p.k = k;
	pt->p.dt = dt;
	pt->p.fast_accum = fast_accum;
	pt->thr0 = pt->thr1 = -1;
	pt->t_shape = ch_now_sec();
	rc = point_shape(r, k, dt, &pt->p.shape);
	pt->t_shape = ch_now_sec() - pt->t_shape;
	if (rc == 0)
		rc = ch_kernel_counts(k, dt, &pt->p.shape, &pt->cnt);
	if (rc != 0) {
		pt->rc = rc;
		snprintf(pt->error, sizeof(pt->error), "%s", rc == CH_ERR_RUNTIME && ch_last_error()[0] ?
			 ch_last_error() : "no valid shape for this point (array too small)");
		return;
	}
	pt->shaped = 1;
	samples = malloc(sizeof(double) * (size_t)max_samples);
	if (!samples) {
		rc = CH_ERR_RUNTIME;
		goto fail;
	}
	ch_clear_last_error();
	pt->t_setup = ch_now_sec();
	if ((rc = r->be->setup(r->dev, &pt->p)) != 0)
		goto fail;
	pt->t_setup = ch_now_sec() - pt->t_setup;
	if ((rc = time_point(r, pt, samples, max_samples, min_time, &stage)) != 0)
		goto fail;
	if (corrupt_requested(&pt->p) && r->be->corrupt)
		r->be->corrupt(r->dev, &pt->p);
	stage = "check";
	pt->t_check = ch_now_sec();
	if ((rc = r->be->check(r->dev, &pt->p, &pt->chk)) != 0)
		goto fail;
	pt->t_check = ch_now_sec() - pt->t_check;
	if (r->be->teardown)
		r->be->teardown(r->dev, &pt->p);
	/* statistics over the timed calls after the first */
	ch_stats_compute(samples + 1, (size_t)(pt->ns - 1), &pt->st);
	free(samples);
	return;
fail:
	if (pt->tel0)
		json_decref(pt->tel0);
	if (pt->tel1)
		json_decref(pt->tel1);
	pt->tel0 = pt->tel1 = NULL;
	if (r->be->teardown)
		r->be->teardown(r->dev, &pt->p);
	pt->rc = rc;
	snprintf(pt->error, sizeof(pt->error), "%s failed (%s): %s", stage, ch_status_name(rc),
		 ch_last_error()[0] ? ch_last_error() : "no message");
	free(samples);
}

/* The point's shape, counts and working set (a point whose shape is known). */
static void emit_point_shape(const struct rl_dev *r, const struct rl_point *pt, json_t *jp)
{
	const struct ch_kernel *k = pt->p.k;
	const struct ch_shape *s = &pt->p.shape;
	json_t *shape = json_object();

	if (k->family == CH_FAM_GEMM) {
		json_object_set_new(shape, "m", json_integer((json_int_t)s->m));
		json_object_set_new(shape, "n", json_integer((json_int_t)s->nn));
		json_object_set_new(shape, "k", json_integer((json_int_t)s->kk));
	} else {
		json_object_set_new(shape, "elements", json_integer((json_int_t)s->n));
		if (k->id == CH_K_LAYERNORM)
			json_object_set_new(shape, "cols", json_integer((json_int_t)s->cols));
	}
	json_object_set_new(jp, "shape", shape);
	if (k->family == CH_FAM_LADDER) {
		json_object_set_new(jp, "fma_per_elem", json_integer(k->k));
		json_object_set_new(jp, "shortened", json_boolean(s->n < r->array_bytes / ch_dtype_size(pt->p.dt)));
	}
	json_object_set_new(jp, "flops", json_real(pt->cnt.flops));
	json_object_set_new(jp, "bytes", json_real(pt->cnt.bytes));
	json_object_set_new(jp, "bytes_write_allocate", json_real(pt->cnt.bytes_write_allocate));
	json_object_set_new(jp, "ai_flop_per_byte", json_real(pt->cnt.ai));
	if (k->family != CH_FAM_GEMM) {
		double ws = (k->reads_per_elem + k->writes_per_elem) * (double)s->n * (double)ch_dtype_size(pt->p.dt);
		json_object_set_new(jp, "working_set_bytes", json_real(ws));
		json_object_set_new(jp, "fits_in_cache", r->info.cache_bytes ?
				    json_boolean(ws <= (double)r->info.cache_bytes) : json_null());
	}
}

/* The point's telemetry object: clocks before and after (taken from @pt),
 * energy over its window. */
static json_t *emit_point_telemetry(struct rl_point *pt)
{
	struct ch_energy_window_result er;
	json_t *tel = json_object();

	json_object_set_new(tel, "before", pt->tel0 ? pt->tel0 : json_null());
	json_object_set_new(tel, "after", pt->tel1 ? pt->tel1 : json_null());
	pt->tel0 = pt->tel1 = NULL;
	if (pt->batched) {
		json_object_set_new(tel, "energy_j", pt->eb.ok ? jnum(pt->eb.energy_j) : json_null());
		json_object_set_new(tel, "avg_power_w", pt->eb.ok ? jnum(pt->eb.avg_power_w) : json_null());
		json_object_set_new(tel, "gflop_per_j", pt->eb.ok && pt->chk.ok ? jnum(pt->eb.gflop_per_j) : json_null());
		json_object_set_new(tel, "energy_window", ch_rl_energy_json(&pt->eb));
	} else if (pt->have_e) {
		ch_energy_window_result(&pt->ew, pt->cnt.flops, &er);
		json_object_set_new(tel, "energy_j", jnum(er.energy_j));
		json_object_set_new(tel, "avg_power_w", jnum(er.avg_power_w));
		json_object_set_new(tel, "gflop_per_j", pt->chk.ok ? jnum(er.gflop_per_j) : json_null());
		json_object_set_new(tel, "energy_window", json_pack("{s:s,s:f,s:i,s:i,s:i,s:f,s:i,s:s?}",
			"method", ENERGY_METHOD, "wall_sec", er.wall_sec, "calls", er.calls,
			"extra_calls", pt->extra, "counter_updates", er.updates, "min_sec", pt->ew.min_sec,
			"min_updates", pt->ew.min_updates, "not_measured", er.ok ? NULL : er.why));
	} else {
		json_object_set_new(tel, "energy_j", json_null());
		json_object_set_new(tel, "avg_power_w", json_null());
		json_object_set_new(tel, "gflop_per_j", json_null());
		json_object_set_new(tel, "energy_window", json_null());
	}
	return tel;
}

/* Append the point's JSON object to the device's points and count it as an
 * error or invalid; returns pt->rc. */
static int emit_point(struct rl_dev *r, struct rl_point *pt)
{
	const struct ch_kernel *k = pt->p.k;
	json_t *jp = json_object();
	struct ch_rates med, best;
	int throttled, tw = -1;
	json_t *jthr;

	json_object_set_new(jp, "kernel", json_string(k->name));
	json_object_set_new(jp, "family", json_string(ch_family_name(k->family)));
	json_object_set_new(jp, "dtype", json_string(ch_dtype_name(pt->p.dt)));
	if (k->family == CH_FAM_GEMM && pt->p.dt == CH_FP8 && r->be->fp8_fast_accum)
		json_object_set_new(jp, "accumulation", json_string(pt->p.fast_accum ? "fast" : "split"));
	json_array_append_new(r->points, jp);
	if (pt->shaped)
		emit_point_shape(r, pt, jp);
	if (pt->rc != 0) {
		json_object_set_new(jp, "valid", json_false());
		json_object_set_new(jp, "error", json_string(pt->error));
		set_point_numbers_null(jp);
		r->errors++;
		return pt->rc;
	}
	ch_rates(&pt->cnt, pt->st.median, &med);
	ch_rates(&pt->cnt, pt->st.min, &best);
	jthr = pt->batched ? ch_rl_throttle_json(&pt->eb, &tw) : json_null();
	/* clocks held down during the window (counters), or a power or
	 * thermal reason in a reading taken while the device was busy */
	throttled = pt->thr0 == 1 || pt->thr1 == 1 || tw == 1;
	json_object_set_new(jp, "valid", json_boolean(pt->chk.ok));
	json_object_set_new(jp, "check", check_json(&pt->chk, check_method(k)));
	json_object_set_new(jp, "headline", json_string("median"));
	json_object_set_new(jp, "calls", json_pack("{s:i,s:i,s:i}", "warmup", r->o->warmup, "timed", pt->ns,
						   "dropped", 1));
	json_object_set_new(jp, "harness_sec", json_pack("{s:f,s:f,s:f}", "size", pt->t_shape, "setup",
							  pt->t_setup, "check", pt->t_check));
	if (pt->chk.ok) {
		json_object_set_new(jp, "time_sec", stats_json(&pt->st));
		json_object_set_new(jp, "gbps", jnum(med.gbps));
		json_object_set_new(jp, "gflops", jnum(med.gflops));
		json_object_set_new(jp, "gbps_best", jnum(best.gbps));
		json_object_set_new(jp, "gflops_best", jnum(best.gflops));
		json_object_set_new(jp, "gbps_write_allocate", jnum(med.gbps_write_allocate));
		if (pt->have_plain) {
			struct ch_rates pr;
			ch_rates(&pt->cnt, pt->plain_st.median, &pr);
			json_object_set_new(jp, "gbps_plain_stores", jnum(pr.gbps));
			json_object_set_new(jp, "gbps_plain_stores_write_allocate", jnum(pr.gbps_write_allocate));
		}
		json_object_set_new(jp, "pct_of_roof", json_null());
		json_object_set_new(jp, "pct_of_datasheet", json_null());
	} else {
		set_point_numbers_null(jp);
		r->invalid++;
	}
	json_object_set_new(jp, "throttled", pt->thr0 < 0 && pt->thr1 < 0 && tw < 0 ? json_null() : json_boolean(throttled));
	json_object_set_new(jp, "throttle_window", jthr);
	json_object_set_new(jp, "telemetry", pt->tel0 || pt->tel1 || pt->have_e || pt->batched ? emit_point_telemetry(pt)
									       : json_null());
	return 0;
}

/* Which datasheet row a compute point is judged against: FMA ladder rungs
 * run on the CUDA cores, GEMMs on the tensor cores where the GPU has them. */
static void datasheet_ceiling_name(int dt, int ladder, char *buf, size_t n)
{
	if (ladder)
		snprintf(buf, n, "%s CUDA cores (datasheet row %s, no tensor cores)", ch_dtype_name(dt),
			 dt == CH_FP64 ? "FP64, not FP64 Tensor Core" : dt == CH_FP32 ? "FP32" : "none");
	else
		snprintf(buf, n, "%s dense peak (%s)", ch_dtype_name(dt),
			 dt == CH_FP32 ? "FP32, CUDA cores" : "Tensor Core where the GPU has one");
}

/* Fill pct_of_roof, pct_of_datasheet and pct_of_peak_estimate from the roofs. */
static void finish_points(struct rl_dev *r, json_t *roofs)
{
	double mem = jget(roofs, "memory_gbps");
	json_t *cg = json_object_get(roofs, "compute_gflops"), *p;
	size_t i;

	json_array_foreach(r->points, i, p) {
		int dt = ch_dtype_parse(json_string_value(json_object_get(p, "dtype")));
		double gbps = jget(p, "gbps"), gflops = jget(p, "gflops"), pct;
		if (!json_is_true(json_object_get(p, "valid")) || dt < 0)
			continue;
		pct = ch_pct_of_roof(gbps, gflops, isnan(mem) ? -1 : mem,
				     isnan(jget(cg, ch_dtype_name(dt))) ? -1 : jget(cg, ch_dtype_name(dt)));
		json_object_set_new(p, "pct_of_roof", pct >= 0 ? json_real(pct) : json_null());
		if (r->ds) {
			int ladder = !strcmp(json_string_value(json_object_get(p, "family")), "ladder");
			double ceil_ = ladder ? ch_datasheet_cuda_core_gflops(r->ds, dt) : r->ds->gflops[dt];
			char what[96];
			pct = ch_pct_of_roof(gbps, gflops, r->ds->memory_gbps, ceil_ > 0 ? ceil_ : -1);
			json_object_set_new(p, "pct_of_datasheet", pct >= 0 ? json_real(pct) : json_null());
			datasheet_ceiling_name(dt, ladder, what, sizeof(what));
			json_object_set_new(p, "datasheet_ceiling", ceil_ > 0 ?
					    json_pack("{s:s,s:f}", "what", what, "gflops", ceil_) : json_null());
		}
		if (r->peak_est[dt] > 0 && gflops > 0)
			json_object_set_new(p, "pct_of_peak_estimate", json_real(100.0 * gflops / r->peak_est[dt]));
	}
}

static void update_roofs(struct rl_dev *r)
{
	json_t *roofs = ch_rl_roofs(r->points), *p;
	size_t i;
	int thr = 0;

	finish_points(r, roofs);
	json_object_set_new(r->jdev, "roofs", roofs);
	json_array_foreach(r->points, i, p)
		thr |= json_is_true(json_object_get(p, "throttled"));
	json_object_set_new(r->jdev, "throttled", json_boolean(thr));
}

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

static void print_table(json_t *d, const struct ch_rl_opts *o);

/* The device's name, bus id, datasheet row and peak estimates into jdev;
 * fills r->ds and r->peak_est. */
static void describe_device(struct rl_dev *r, int is_gpu)
{
	json_t *pe = json_object();
	char buf[512];
	int d;

	json_object_set_new(r->jdev, "name", json_string(r->info.name));
	json_object_set_new(r->jdev, "pci_bus_id", r->info.pci_bus_id[0] ? json_string(r->info.pci_bus_id) : json_null());
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

/* ------------------------------------------------------------ output */

static void fmt_num(char *buf, size_t n, double v, int prec)
{
	if (isnan(v))
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%.*f", prec, v);
}

/* Range of a telemetry field over every point's before and after readings. */
static int tel_range(json_t *points, const char *field, double *lo, double *hi)
{
	static const char *const when[] = { "before", "after" };
	size_t i, w;
	json_t *p;
	int n = 0;

	*lo = INFINITY;
	*hi = -INFINITY;
	json_array_foreach(points, i, p)
		for (w = 0; w < 2; w++) {
			double v = jget(json_object_get(json_object_get(p, "telemetry"), when[w]), field);
			if (isnan(v))
				continue;
			*lo = v < *lo ? v : *lo;
			*hi = v > *hi ? v : *hi;
			n++;
		}
	return n;
}

/* One line on clocks, power and energy: what telemetry said, or n/a. */
static void print_telemetry(json_t *d)
{
	json_t *points = json_object_get(d, "points"), *p;
	int gpu = !strcmp(json_string_value(json_object_get(d, "kind")), "gpu");
	double lo, hi;
	size_t i;
	int any = 0;

	printf("# telemetry:");
	if (tel_range(points, gpu ? "sm_mhz" : "cpu_mhz", &lo, &hi))
		printf(" %s clock %.0f-%.0f MHz;", gpu ? "SM" : "CPU", lo, hi), any = 1;
	if (gpu && tel_range(points, "mem_mhz", &lo, &hi))
		printf(" memory clock %.0f-%.0f MHz;", lo, hi), any = 1;
	if (gpu && tel_range(points, "power_w", &lo, &hi))
		printf(" power %.0f-%.0f W;", lo, hi), any = 1;
	if (gpu && tel_range(points, "temp_c", &lo, &hi))
		printf(" temperature %.0f-%.0f C;", lo, hi), any = 1;
	if (!any)
		printf(" clocks n/a;");
	printf(" energy");
	any = 0;
	json_array_foreach(points, i, p) {
		json_t *tel = json_object_get(p, "telemetry"), *win = json_object_get(tel, "energy_window");
		double g = jget(tel, "gflop_per_j");
		int batched = json_is_number(json_object_get(win, "duty_cycle")) || json_is_integer(json_object_get(win, "batches"));
		const char *acc = json_string_value(json_object_get(p, "accumulation"));
		if (json_is_object(win) && !any) {
			if (batched)
				printf(" (%s counter between two of its changes >= %.1f s apart, calls queued back to back; power over that time):",
				       gpu ? "NVML" : "device", jget(win, "min_sec"));
			else
				printf(" (%s counter over windows of >= %.1f s of repeated calls, power over wall time):",
				       gpu ? "NVML" : "RAPL", jget(win, "min_sec"));
			any = -1;
		}
		if (strcmp(json_string_value(json_object_get(p, "family")), "gemm"))
			continue;
		if (!isnan(g)) {
			printf(" %s %s%s%s %.2f GFLOP/J at %.0f W", json_string_value(json_object_get(p, "kernel")),
			       json_string_value(json_object_get(p, "dtype")), acc ? " " : "", acc ? acc : "", g,
			       jget(tel, "avg_power_w"));
			if (batched)
				printf(" (duty %.2f)", jget(win, "duty_cycle"));
			printf(";");
			any = 1;
		} else if (json_is_string(json_object_get(win, "gflop_per_j_withheld"))) {
			printf(" %s %s%s%s GFLOP/J withheld (duty %.2f < %.2f);", json_string_value(json_object_get(p, "kernel")),
			       json_string_value(json_object_get(p, "dtype")), acc ? " " : "", acc ? acc : "",
			       jget(win, "duty_cycle"), CH_RL_ENERGY_MIN_DUTY);
			any = 1;
		}
	}
	if (!any)
		printf(": n/a (%s not readable)", gpu ? "NVML energy counter" : "RAPL");
	else if (any < 0)
		printf(" no GEMM point with a measured energy (energy_window.not_measured in the result file says why)");
	printf("\n");
}

/* The lines above a device's table: setup, BLAS, timing rule, columns. */
static void print_device_setup(json_t *d, const struct ch_rl_opts *o, int has_ds)
{
	json_t *cfg = json_object_get(d, "config");

	if (cfg) {
		double ab = jget(cfg, "array_bytes"), cb = jget(cfg, "cache_bytes");
		printf("# %s%s; kernels %s%s%s; arrays 3 x %.1f MiB",
		       json_integer_value(json_object_get(cfg, "threads")) ? "" : "",
		       json_integer_value(json_object_get(cfg, "threads")) ?
		       "one thread per core, bound (hwloc)" : "CUDA",
		       json_string_value(json_object_get(cfg, "isa")),
		       json_is_string(json_object_get(cfg, "stores")) ? ", stores " : "",
		       json_is_string(json_object_get(cfg, "stores")) ? json_string_value(json_object_get(cfg, "stores")) : "",
		       ab / (double)MIB);
		if (cb > 0)
			printf(" (working set %.1fx the %.1f MiB %s%s)", 3 * ab / cb, cb / (double)MIB,
			       strcmp(json_string_value(json_object_get(d, "kind")), "gpu") ? "last-level cache" : "L2",
			       3 * ab < 4 * cb ? "; under 4x: memory points may run from cache" : "");
		printf("\n# BLAS: %s\n", json_string_value(json_object_get(cfg, "blas")) ?
		       json_string_value(json_object_get(cfg, "blas")) : "-");
	}
	if (o->common.min_time_sec > 0)
		printf("# time: median of the timed calls after the first (at least %d, until they add up to %g s),"
		       " after %d warm-up; best = fastest;", o->iters - 1, o->common.min_time_sec, o->warmup);
	else
		printf("# time: median of %d calls (%d timed, the first dropped, after %d warm-up); best = fastest;",
		       o->iters - 1, o->iters, o->warmup);
	printf(" GB/s = 1e9 bytes/s of explicit traffic (BabelStream counting)\n");
	printf("# %-9s %-5s %10s %10s %6s %9s %9s %10s %10s %7s%s  %s\n", "kernel", "dtype", "AI_flop/B",
	       "time_ms", "cv_%", "GB/s", "GB/s_best", "GFLOP/s", "GFLOP/s_b", "%roof", has_ds ? "    %ds" : "", "note");
}

/* One row of a device's table: the point @p, or why it has no numbers. */
static void print_point(json_t *p, json_t *cfg, int has_ds)
{
	const char *kn = json_string_value(json_object_get(p, "kernel"));
	const char *dt = json_string_value(json_object_get(p, "dtype"));
	json_t *ts = json_object_get(p, "time_sec"), *chk = json_object_get(p, "check");
	char a[32], b[32], c[32], e[32], f[32], g[32], h[32], k2[32], l[32], note[256] = "";

	if (!json_is_true(json_object_get(p, "valid"))) {
		if (json_is_string(json_object_get(p, "error")))
			printf("  %-9s %-5s  ERROR: %s\n", kn, dt, json_string_value(json_object_get(p, "error")));
		else
			printf("  %-9s %-5s  INVALID (not reported): %lld of %lld values wrong; first at %lld: "
			       "got %.9g, want %.9g, tol %.3g\n", kn, dt,
			       (long long)json_integer_value(json_object_get(chk, "bad")),
			       (long long)json_integer_value(json_object_get(chk, "checked")),
			       (long long)json_integer_value(json_object_get(chk, "first_bad")),
			       jget(chk, "got"), jget(chk, "want"), jget(chk, "tol"));
		return;
	}
	fmt_num(a, sizeof(a), jget(p, "ai_flop_per_byte"), 3);
	fmt_num(b, sizeof(b), jget(ts, "median") * 1e3, 3);
	fmt_num(c, sizeof(c), jget(ts, "cv") * 100, 1);
	fmt_num(e, sizeof(e), jget(p, "gbps"), 2);
	fmt_num(f, sizeof(f), jget(p, "gbps_best"), 2);
	fmt_num(g, sizeof(g), jget(p, "gflops"), 2);
	fmt_num(h, sizeof(h), jget(p, "gflops_best"), 2);
	fmt_num(k2, sizeof(k2), jget(p, "pct_of_roof"), 1);
	fmt_num(l, sizeof(l), jget(p, "pct_of_datasheet"), 1);
	if (json_is_object(json_object_get(p, "shape")) && json_object_get(json_object_get(p, "shape"), "m"))
		snprintf(note, sizeof(note), "%lld^3%s%s",
			 (long long)json_integer_value(json_object_get(json_object_get(p, "shape"), "m")),
			 json_is_string(json_object_get(p, "accumulation")) ? ", accumulation " : "",
			 json_is_string(json_object_get(p, "accumulation")) ?
			 json_string_value(json_object_get(p, "accumulation")) : "");
	else if (json_is_true(json_object_get(p, "fits_in_cache")))
		snprintf(note, sizeof(note), "%.1f MiB fits in cache%s", jget(p, "working_set_bytes") / (double)MIB,
			 json_is_true(json_object_get(p, "shortened")) ? " (rung past the ridge: compute-bound)" : "");
	if (json_is_string(json_object_get(cfg, "stores")) &&
	    !strcmp(json_string_value(json_object_get(cfg, "stores")), "write-allocate") &&
	    jget(p, "gbps_write_allocate") > jget(p, "gbps") * 1.0001 &&
	    !json_is_true(json_object_get(p, "fits_in_cache")))
		snprintf(note + strlen(note), sizeof(note) - strlen(note), "%s%.2f GB/s with write-allocate",
			 note[0] ? ", " : "", jget(p, "gbps_write_allocate"));
	if (json_is_number(json_object_get(p, "gbps_plain_stores")))
		snprintf(note + strlen(note), sizeof(note) - strlen(note), "%splain stores %.2f GB/s (%.2f with write-allocate)",
			 note[0] ? ", " : "", jget(p, "gbps_plain_stores"), jget(p, "gbps_plain_stores_write_allocate"));
	if (json_is_true(json_object_get(p, "throttled")))
		snprintf(note + strlen(note), sizeof(note) - strlen(note), "%sTHROTTLED", note[0] ? ", " : "");
	if (json_is_object(json_object_get(p, "confirm"))) {
		json_t *cf = json_object_get(p, "confirm");
		const char *fam = json_string_value(json_object_get(p, "family"));
		int flops = jget(p, "flops") > 0 && !(fam && !strcmp(fam, "stream"));
		if (json_is_true(json_object_get(cf, "valid")))
			snprintf(note + strlen(note), sizeof(note) - strlen(note), "%smeasured again (%s): %.2f %s",
				 note[0] ? ", " : "", json_string_value(json_object_get(cf, "why")),
				 jget(cf, flops ? "gflops" : "gbps"), flops ? "GFLOP/s" : "GB/s");
		else
			snprintf(note + strlen(note), sizeof(note) - strlen(note), "%smeasured again: %s",
				 note[0] ? ", " : "", json_string_value(json_object_get(cf, "error")));
	}
	printf("  %-9s %-5s %10s %10s %6s %9s %9s %10s %10s %7s%s%s  %s\n", kn, dt, a, b, c, e, f, g, h, k2,
	       has_ds ? " " : "", has_ds ? l : "", note);
}

/* The lines below a device's table: memory and compute roofs against the
 * peak estimate and the datasheet, ridge points. */
static void print_roofs(json_t *d)
{
	json_t *points = json_object_get(d, "points"), *cfg = json_object_get(d, "config"), *p;
	json_t *roofs = json_object_get(d, "roofs"), *ds = json_object_get(d, "datasheet");
	json_t *pe = json_object_get(d, "peak_estimate");
	double mem = jget(roofs, "memory_gbps");
	int has_ds = json_is_object(ds);
	size_t i;
	const char *key;
	json_t *v;

	if (has_ds) {
		json_t *cc = json_object_get(ds, "cuda_core_gflops");
		int ladder = 0;
		json_array_foreach(points, i, p)
			ladder |= !strcmp(json_string_value(json_object_get(p, "family")), "ladder");
		if (ladder)
			printf("# %%ds of the fma ladder: against the CUDA-core figures (fp64 %.0f GFLOP/s, the datasheet's"
			       " FP64 row, not FP64 Tensor Core; fp32 %.0f), none for other dtypes\n",
			       jget(cc, "fp64") > 0 ? jget(cc, "fp64") : 0, jget(cc, "fp32") > 0 ? jget(cc, "fp32") : 0);
	}
	if (!isnan(mem))
		printf("# memory roof: %.2f GB/s (%s, median)\n", mem,
		       json_string_value(json_object_get(roofs, "memory_kernel")));
	else
		printf("# memory roof: - (no valid stream point)\n");
	json_object_foreach(json_object_get(roofs, "compute_gflops"), key, v) {
		json_t *est = json_object_get(pe, key);
		printf("# compute roof %s: %.2f GFLOP/s (%s, median)", key, json_number_value(v),
		       json_string_value(json_object_get(json_object_get(roofs, "compute_kernel"), key)));
		if (est) {
			double pct = 100.0 * json_number_value(v) / jget(est, "gflops");
			printf("; %.1f%% of the peak %.1f GFLOP/s, %s", pct, jget(est, "gflops"),
			       json_string_value(json_object_get(est, "how")));
			if (pct > 100 && jget(cfg, "clock_mhz") > 0)
				printf(" [above the estimate: the cores ran at >= %.2f GHz, faster than the clock read (turbo)]",
				       jget(cfg, "clock_mhz") * 1e-3 * pct / 100);
		}
		if (has_ds) {
			const char *ck = json_string_value(json_object_get(json_object_get(roofs, "compute_kernel"), key));
			int ladder = ck && !strncmp(ck, "fma", 3);
			double c = jget(json_object_get(ds, ladder ? "cuda_core_gflops" : "compute_gflops"), key);
			char what[96];
			datasheet_ceiling_name(ch_dtype_parse(key), ladder, what, sizeof(what));
			if (c > 0)
				printf("; %.1f%% of the datasheet %.0f GFLOP/s, %s", 100.0 * json_number_value(v) / c, c, what);
			else if (ladder)
				printf("; no datasheet figure for %s", what);
		}
		printf("\n");
	}
	if (has_ds && !isnan(mem))
		printf("# memory roof is %.1f%% of the datasheet %.0f GB/s\n", 100 * mem / jget(ds, "memory_gbps"),
		       jget(ds, "memory_gbps"));
	if (json_object_size(json_object_get(roofs, "ridge_flop_per_byte"))) {
		printf("# ridge point (compute roof / memory roof):");
		int first = 1;
		json_object_foreach(json_object_get(roofs, "ridge_flop_per_byte"), key, v) {
			printf("%s %s %.2f FLOP/byte", first ? "" : ",", key, json_number_value(v));
			first = 0;
		}
		printf("\n");
	}
}

/* A device's table, from its result-file object @d. */
static void print_table(json_t *d, const struct ch_rl_opts *o)
{
	json_t *points = json_object_get(d, "points"), *p;
	const char *dev = json_string_value(json_object_get(d, "device"));
	const char *st = json_string_value(json_object_get(d, "status"));
	int has_ds = json_is_object(json_object_get(d, "datasheet"));
	size_t i;

	printf("\n# device %s: %s (backend %s)%s%s\n", dev,
	       json_string_value(json_object_get(d, "name")) ? json_string_value(json_object_get(d, "name")) : "-",
	       json_string_value(json_object_get(d, "backend")),
	       json_is_string(json_object_get(d, "sku")) ? ", datasheet " : "",
	       json_is_string(json_object_get(d, "sku")) ? json_string_value(json_object_get(d, "sku")) : "");
	if (st && strcmp(st, "ok") && !json_array_size(points)) {
		printf("# %s: %s\n", st, json_string_value(json_object_get(d, "reason")) ?
		       json_string_value(json_object_get(d, "reason")) : "");
		return;
	}
	print_device_setup(d, o, has_ds);
	json_array_foreach(points, i, p)
		print_point(p, json_object_get(d, "config"), has_ds);
	print_roofs(d);
	print_telemetry(d);
	ch_rl_power_print(d);
	if (json_is_true(json_object_get(d, "throttled")))
		printf("# WARNING: some points were measured while the clocks were held down by power or temperature\n");
	if (st && strcmp(st, "ok"))
		printf("# status: %s (%s)\n", st, json_string_value(json_object_get(d, "reason")) ?
		       json_string_value(json_object_get(d, "reason")) : "");
}

static void print_node(json_t *node_median, json_t *flagged)
{
	size_t i;
	json_t *f, *v;
	const char *key;

	if (!json_is_object(node_median))
		return;
	printf("\n# node median over %lld GPUs: memory %.1f GB/s", (long long)json_integer_value(json_object_get(node_median, "gpus")),
	       jget(node_median, "memory_gbps"));
	json_object_foreach(json_object_get(node_median, "compute_gflops"), key, v)
		printf(", %s %.1f GFLOP/s", key, json_number_value(v));
	printf("\n");
	json_array_foreach(flagged, i, f) {
		json_t *cf = json_object_get(f, "confirmed");
		printf("# FLAGGED: %s %s %.1f is %.1f%% below the node median %.1f",
		       json_string_value(json_object_get(f, "device")), json_string_value(json_object_get(f, "metric")),
		       jget(f, "value"), jget(f, "pct_below"), jget(f, "node_median"));
		if (json_is_boolean(cf))
			printf("; measured again %.1f, %.1f%% below: %s\n", jget(f, "confirm_value"),
			       jget(f, "confirm_pct_below"), json_is_true(cf) ? "confirmed" : "did not reproduce");
		else
			printf("; not measured again\n");
	}
	if (!json_array_size(flagged))
		printf("# no GPU more than %.0f%% below the node median\n", NODE_FLAG_PCT);
}

/* ------------------------------------------------------------ confirmation */

static int worse(int a, int b);

/* The point's headline rate: GFLOP/s when it has FLOPs, else GB/s. */
static double point_rate(json_t *p)
{
	double fl = jget(p, "flops"), gf = jget(p, "gflops");
	return fl > 0 && gf > 0 ? gf : jget(p, "gbps");
}

static int is_ok_gpu(json_t *d)
{
	const char *kind = json_string_value(json_object_get(d, "kind"));
	const char *st = json_string_value(json_object_get(d, "status"));
	return kind && !strcmp(kind, "gpu") && st && !strcmp(st, "ok");
}

static int same_str(json_t *a, json_t *b)
{
	return json_is_string(a) && json_is_string(b) && !strcmp(json_string_value(a), json_string_value(b));
}

/* Median rate of (kernel, dtype) over the node's GPUs with status ok; NAN
 * when no such point */
/* Same fp8 accumulation mode (both unlabelled, or the same label). */
static int same_accumulation(json_t *a, json_t *b)
{
	json_t *x = json_object_get(a, "accumulation"), *y = json_object_get(b, "accumulation");
	return (!x && !y) || (x && y && same_str(x, y));
}

static double point_node_median(json_t *devices, json_t *pt)
{
	double vals[1024];
	size_t i, j, n = 0;
	json_t *d, *q;

	json_array_foreach(devices, i, d) {
		if (!is_ok_gpu(d))
			continue;
		json_array_foreach(json_object_get(d, "points"), j, q) {
			double v = point_rate(q);
			if (n < 1024 && json_is_true(json_object_get(q, "valid")) && v > 0 &&
			    same_str(json_object_get(q, "kernel"), json_object_get(pt, "kernel")) &&
			    same_str(json_object_get(q, "dtype"), json_object_get(pt, "dtype")) &&
			    same_accumulation(q, pt))
				vals[n++] = v;
		}
	}
	if (!n)
		return NAN;
	qsort(vals, n, sizeof(vals[0]), cmp_dbl);
	return ch_percentile_sorted(vals, n, 50.0);
}

/* Does flag @f name device @d? */
static int flag_of(json_t *f, json_t *d)
{
	return same_str(json_object_get(f, "device"), json_object_get(d, "device")) &&
	       (!json_object_get(f, "host") || same_str(json_object_get(f, "host"), json_object_get(d, "host")));
}

/* Is point @p behind roof @metric ("memory_gbps", "compute_gflops.bf16")? */
static int point_of_metric(json_t *p, const char *metric)
{
	const char *fam = json_string_value(json_object_get(p, "family"));
	const char *dt = json_string_value(json_object_get(p, "dtype"));

	if (!fam || !dt || !metric)
		return 0;
	if (!strcmp(metric, "memory_gbps"))
		return !strcmp(fam, "stream");
	return !strncmp(metric, "compute_gflops.", 15) && !strcmp(metric + 15, dt) &&
	       (!strcmp(fam, "ladder") || !strcmp(fam, "gemm"));
}

json_t *ch_rl_confirm_plan(json_t *devices, json_t *flagged, double threshold_pct, int mode)
{
	json_t *plan = json_array(), *d, *p, *f;
	size_t i, j, k;

	if (!plan)
		return NULL;
	json_array_foreach(devices, i, d) {
		json_t *cfg = json_object_get(d, "config"), *rank = json_object_get(d, "rank");
		const char *why = NULL;
		if (mode != CH_RL_CONFIRM_ALL && !is_ok_gpu(d))
			continue;
		json_array_foreach(json_object_get(d, "points"), j, p) {
			double v = point_rate(p), med;
			if (!json_is_true(json_object_get(p, "valid")) || !json_is_object(json_object_get(p, "shape")))
				continue;
			why = NULL;
			if (mode == CH_RL_CONFIRM_ALL) {
				why = "requested";
			} else {
				med = point_node_median(devices, p);
				if (v > 0 && med > 0 && 100.0 * (med - v) / med > threshold_pct)
					why = "below_node_median";
				json_array_foreach(flagged, k, f)
					if (!why && flag_of(f, d) &&
					    point_of_metric(p, json_string_value(json_object_get(f, "metric"))))
						why = "below_node_median";
			}
			if (!why)
				continue;
			json_array_append_new(plan, json_pack("{s:I, s:I, s:I, s:O, s:O, s:O, s:O, s:O, s:O, s:s}",
				"dev", (json_int_t)i, "point", (json_int_t)j,
				"rank", json_is_integer(rank) ? json_integer_value(rank) : (json_int_t)-1,
				"device", json_object_get(d, "device"), "backend", json_object_get(d, "backend"),
				"kernel", json_object_get(p, "kernel"), "dtype", json_object_get(p, "dtype"),
				"shape", json_object_get(p, "shape"),
				"array_bytes", json_object_get(cfg, "array_bytes") ? json_object_get(cfg, "array_bytes") : json_null(),
				"why", why));
			if (json_is_string(json_object_get(p, "accumulation"))) /* fp8: the same mode again */
				json_object_set(json_array_get(plan, json_array_size(plan) - 1), "accumulation",
						json_object_get(p, "accumulation"));
		}
	}
	return plan;
}

void ch_rl_confirm_verdicts(json_t *devices, json_t *flagged, double threshold_pct)
{
	json_t *f, *d, *p;
	size_t i, j, k;

	json_array_foreach(flagged, i, f) {
		const char *metric = json_string_value(json_object_get(f, "metric"));
		double med = jget(f, "node_median"), v = NAN;
		json_object_set_new(f, "confirmed", json_null());
		json_array_foreach(devices, j, d) {
			json_t *pts, *roofs;
			if (!flag_of(f, d))
				continue;
			/* the roof again, over the second measurements of its points */
			pts = json_array();
			json_array_foreach(json_object_get(d, "points"), k, p) {
				json_t *c = json_object_get(p, "confirm");
				if (!point_of_metric(p, metric) || !json_is_true(json_object_get(c, "valid")))
					continue;
				json_array_append_new(pts, json_pack("{s:O, s:O, s:O, s:b, s:O, s:O}", "kernel",
					json_object_get(p, "kernel"), "family", json_object_get(p, "family"), "dtype",
					json_object_get(p, "dtype"), "valid", 1, "gbps", json_object_get(c, "gbps"),
					"gflops", json_object_get(c, "gflops")));
			}
			roofs = ch_rl_roofs(pts);
			v = !strcmp(metric, "memory_gbps") ? jget(roofs, "memory_gbps")
							 : jget(json_object_get(roofs, "compute_gflops"), metric + 15);
			json_decref(roofs);
			json_decref(pts);
			break;
		}
		if (isfinite(v) && v > 0 && med > 0) {
			double below = 100.0 * (med - v) / med;
			json_object_set_new(f, "confirmed", json_boolean(below > threshold_pct));
			json_object_set_new(f, "confirm_value", json_real(v));
			json_object_set_new(f, "confirm_pct_below", json_real(below));
		}
	}
}

/* The "confirm" object of a point measured again. */
static json_t *confirm_json(const struct rl_point *pt, const char *why)
{
	struct ch_rates med;
	json_t *o = json_object();

	json_object_set_new(o, "why", json_string(why));
	if (pt->rc != 0 || !pt->chk.ok) {
		json_object_set_new(o, "time_sec", json_null());
		json_object_set_new(o, "gbps", json_null());
		json_object_set_new(o, "gflops", json_null());
		json_object_set_new(o, "valid", json_false());
		json_object_set_new(o, "error", json_string(pt->rc ? pt->error : "the output failed validation"));
		return o;
	}
	ch_rates(&pt->cnt, pt->st.median, &med);
	json_object_set_new(o, "time_sec", stats_json(&pt->st));
	json_object_set_new(o, "gbps", jnum(med.gbps));
	json_object_set_new(o, "gflops", jnum(med.gflops));
	json_object_set_new(o, "valid", json_true());
	return o;
}

/* The shape a plan entry recorded. */
static void shape_of(json_t *js, struct ch_shape *s)
{
	memset(s, 0, sizeof(*s));
	s->cols = 1;
	s->n = (uint64_t)json_integer_value(json_object_get(js, "elements"));
	if (json_is_integer(json_object_get(js, "cols")))
		s->cols = (uint64_t)json_integer_value(json_object_get(js, "cols"));
	s->m = (uint64_t)json_integer_value(json_object_get(js, "m"));
	s->nn = (uint64_t)json_integer_value(json_object_get(js, "n"));
	s->kk = (uint64_t)json_integer_value(json_object_get(js, "k"));
}

static const struct ch_kernel *kernel_named(const char *name)
{
	int nk, i;
	const struct ch_kernel *t = ch_kernel_table(&nk);
	for (i = 0; name && i < nk; i++)
		if (!strcmp(t[i].name, name))
			return &t[i];
	return NULL;
}

/* Measure again the plan entries [@from, @to) (one device, this rank's);
 * append {dev, point, confirm} to @out. Returns the worst status. */
static int confirm_device(const struct ch_rl_opts *o, const struct ch_backend *be, json_t *plan, size_t from,
			  size_t to, json_t *out, char *reason, size_t rn)
{
	json_t *e0 = json_array_get(plan, from);
	const char *dev = json_string_value(json_object_get(e0, "device"));
	struct rl_dev r;
	char why[512] = "";
	int rc, status = CH_OK, idx = 0;
	size_t i;

	memset(&r, 0, sizeof(r));
	r.o = o;
	r.be = be;
	if (dev && !strncmp(dev, "gpu", 3))
		idx = atoi(dev + 3);
	if (!strcmp(be->name, "cpu"))
		ch_cpu_set_stores((enum ch_stores)o->stores);
	r.array_bytes = (uint64_t)json_integer_value(json_object_get(e0, "array_bytes"));
	rc = be->open(idx, &r.dev, why, sizeof(why));
	if (rc == 0) {
		be->info(r.dev, &r.info);
		if ((rc = be->alloc_arrays(r.dev, r.array_bytes)) != 0)
			snprintf(why, sizeof(why), "cannot allocate the arrays (3 x %llu bytes)", (unsigned long long)r.array_bytes);
	}
	for (i = from; i < to; i++) {
		json_t *e = json_array_get(plan, i), *cj;
		const struct ch_kernel *k = kernel_named(json_string_value(json_object_get(e, "kernel")));
		int dt = ch_dtype_parse(json_string_value(json_object_get(e, "dtype")));
		struct ch_shape shape;
		struct rl_point pt;

		memset(&pt, 0, sizeof(pt));
		if (rc != 0 || !k || dt < 0) {
			pt.rc = rc ? rc : CH_ERR_RUNTIME;
			snprintf(pt.error, sizeof(pt.error), "%s", rc ? why : "unknown kernel or dtype in the plan");
		} else {
			shape_of(json_object_get(e, "shape"), &shape);
			r.force_shape = &shape;
			measure_point(&r, k, (enum ch_dtype)dt,
				      json_is_string(json_object_get(e, "accumulation")) &&
				      !strcmp(json_string_value(json_object_get(e, "accumulation")), "fast"), &pt);
			r.force_shape = NULL;
			json_decref(pt.tel0);
			json_decref(pt.tel1);
		}
		cj = confirm_json(&pt, json_string_value(json_object_get(e, "why")));
		if (pt.rc != 0) {
			status = worse(status, CH_ERR_RUNTIME);
			snprintf(reason, rn, "%s: %s %s measured again: %s", dev ? dev : "?", k ? k->name : "?",
				 dt >= 0 ? ch_dtype_name(dt) : "?", pt.error);
		} else if (!pt.chk.ok) {
			status = worse(status, CH_ERR_CHECK);
			snprintf(reason, rn, "%s: %s %s failed validation when measured again", dev ? dev : "?", k->name,
				 ch_dtype_name(dt));
		}
		json_array_append_new(out, json_pack("{s:O, s:O, s:o}", "dev", json_object_get(e, "dev"), "point",
						     json_object_get(e, "point"), "confirm", cj));
	}
	if (r.dev)
		be->close(r.dev);
	return status;
}

int ch_rl_confirm(const struct ch_rl_opts *o, const struct ch_world *mpi, const struct ch_backend *const *backends,
		  int nbackends, json_t *devices, json_t *flagged, double threshold_pct, char *reason, size_t rn)
{
	json_t *plan = NULL, *mine, *all, *e;
	int status = CH_OK, rc, b;
	size_t i, j;

	if (o->confirm == CH_RL_CONFIRM_OFF) {
		if (flagged)
			ch_rl_confirm_verdicts(devices, flagged, threshold_pct);
		return CH_OK;
	}
	if (devices)
		plan = ch_rl_confirm_plan(devices, flagged, threshold_pct, o->confirm);
	e = ch_world_bcast_json(mpi, plan);
	json_decref(plan);
	plan = e;
	mine = json_array();
	for (i = 0; plan && mine && i < json_array_size(plan); i = j) {
		json_t *e0 = json_array_get(plan, i);
		const char *bname = json_string_value(json_object_get(e0, "backend"));
		const struct ch_backend *be = NULL;
		/* the entries of one device are consecutive */
		for (j = i + 1; j < json_array_size(plan); j++) {
			e = json_array_get(plan, j);
			if (json_integer_value(json_object_get(e, "dev")) != json_integer_value(json_object_get(e0, "dev")))
				break;
		}
		if (mpi->active && json_integer_value(json_object_get(e0, "rank")) != mpi->rank)
			continue;
		for (b = 0; b < nbackends && bname; b++)
			if (!strcmp(backends[b]->name, bname))
				be = backends[b];
		if (!be) {
			snprintf(reason, rn, "no backend '%s' to measure %s again", bname ? bname : "?",
				 json_string_value(json_object_get(e0, "device")));
			status = worse(status, CH_ERR_RUNTIME);
			continue;
		}
		rc = confirm_device(o, be, plan, i, j, mine, reason, rn);
		status = worse(status, rc);
	}
	all = ch_world_gather_json(mpi, mine);
	if (devices && all) {
		json_array_foreach(all, i, e) {
			json_t *d = json_array_get(devices, (size_t)json_integer_value(json_object_get(e, "dev")));
			json_t *p = json_array_get(json_object_get(d, "points"), (size_t)json_integer_value(json_object_get(e, "point")));
			if (json_is_object(p))
				json_object_set(p, "confirm", json_object_get(e, "confirm"));
		}
	}
	if (devices && flagged)
		ch_rl_confirm_verdicts(devices, flagged, threshold_pct);
	json_decref(all);
	json_decref(mine);
	json_decref(plan);
	return status;
}

/* ------------------------------------------------------------ the run */

static int worse(int a, int b)
{
	/* a failed check first, then run-time error, usage, unavailable, ok */
	static const int order[] = { CH_ERR_CHECK, CH_ERR_RUNTIME, CH_ERR_USAGE, CH_ERR_UNAVAILABLE, CH_OK };
	size_t i;
	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if (a == order[i] || b == order[i])
			return order[i];
	return a;
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
		"at the end of the run, every valid point of a GPU more than flag_threshold_pct below the median of the same kernel and dtype over the node's GPUs, and every point behind a flagged roof, measured again (same shape, same calls) and recorded in the point's \"confirm\"; flagged[].confirmed: the roof taken again over those second measurements is still more than flag_threshold_pct below node_median (null: not measured again). --confirm all: every valid point of every device, why \"requested\""));
	if (mpi->active && mpi->nhosts > 1)
		json_object_set_new(results, "note", json_string("ranks span several hosts: node_median is over all of them"));
	if (o->power.ncaps) {
		pnode = ch_rl_power_node(all, o->power.tolerance_pct);
		json_object_set_new(results, "power_recommendation", pnode);
	}
	json_array_foreach(all, i, d)
		print_table(d, o);
	print_node(median, flagged);
	if (o->power.ncaps)
		ch_rl_power_print_node(json_object_get(results, "power_recommendation"));
	json_decref(all);
	return status;
}
