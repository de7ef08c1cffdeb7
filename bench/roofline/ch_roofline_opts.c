/*
 * ch_roofline_opts.c - roofline's plan: options, the list of kernels, default
 * array sizes (see ch_roofline.h;
 * the driver's files: ch_roofline_int.h).
 */
#include "bench/roofline/ch_roofline.h"
#include "bench/roofline/ch_roofline_int.h"
#include "base/ch_common.h"
#include "comm/ch_comm.h"
#include "hw/ch_energy.h"
#include "base/ch_parse.h"
#include "base/ch_stats.h"

#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
	      "                     on the node's GPUs, or a flagged roof's points) and\n"
	      "                     the CPU's roof points (a socket has no like device on\n"
	      "                     its node), and record the second measurement beside\n"
	      "                     the first (the roofs again: roofs_again); all:\n"
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

const char *const confirm_names[] = { "0", "1", "all", NULL };

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
