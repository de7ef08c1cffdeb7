#include "bench/allreduce/ch_ar_opts.h"
#include "bench/allreduce/ch_ar_plan.h"
#include "comm/ch_comm.h"
#include "base/ch_common.h"
#include "base/ch_parse.h"

#include <getopt.h>
#include <stdlib.h>
#include <string.h>

enum {
	OPT_BACKEND = CH_OPT_FIRST_TOOL,
	OPT_ALGO,
	OPT_GROUPS,
	OPT_NODE_SIZE,
	OPT_SCALING,
	OPT_TIMEOUT,
	OPT_MIN_BUSBW,
	OPT_INJECT_DELAY,
	OPT_CONFIRM,
};

static const struct option longopts[] = {
	{ "minbytes", required_argument, NULL, 'b' },
	{ "maxbytes", required_argument, NULL, 'e' },
	{ "stepbytes", required_argument, NULL, 'i' },
	{ "stepfactor", required_argument, NULL, 'f' },
	{ "iters", required_argument, NULL, 'n' },
	{ "warmup_iters", required_argument, NULL, 'w' },
	{ "check", required_argument, NULL, 'c' },
	{ "datatype", required_argument, NULL, 'd' },
	{ "op", required_argument, NULL, 'o' },
	{ "ngpus", required_argument, NULL, 'g' },
	{ "nthreads", required_argument, NULL, 't' },
	{ "backend", required_argument, NULL, OPT_BACKEND },
	{ "algo", required_argument, NULL, OPT_ALGO },
	{ "groups", required_argument, NULL, OPT_GROUPS },
	{ "node-size", required_argument, NULL, OPT_NODE_SIZE },
	{ "scaling", no_argument, NULL, OPT_SCALING },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "min-busbw", required_argument, NULL, OPT_MIN_BUSBW },
	{ "inject-delay", required_argument, NULL, OPT_INJECT_DELAY },
	{ "confirm", required_argument, NULL, OPT_CONFIRM },
	CH_COMMON_LONGOPTS,
	{ NULL, 0, NULL, 0 }
};

void ch_ar_usage(FILE *f)
{
	fputs("Usage: mpirun -np N allreduce_bw [OPTION]...\n"
	      "       allreduce_bw -g N [OPTION]...   (one process, N GPUs)\n"
	      "All-reduce bus bandwidth across sizes, algorithms and groups of ranks, with\n"
	      "every result checked; one rank per GPU (nccl) or per host slot (mpi), or one\n"
	      "process driving N GPUs (-g N, nccl). Prints one nccl-tests all_reduce_perf\n"
	      "table per group and algorithm, then the stragglers, slow groups and suspect\n"
	      "nodes. busbw = algbw x 2(n-1)/n (nccl-tests doc/PERFORMANCE.md).\n"
	      "\n"
	      "Sizes and iterations (nccl-tests' meanings; K, M, G = 1024):\n"
	      "  -b, --minbytes SIZE      smallest message per rank (default 32M)\n"
	      "  -e, --maxbytes SIZE      largest message per rank (default 32M); reduced,\n"
	      "                           with a message, when 3 buffers do not fit in memory\n"
	      "  -f, --stepfactor N       multiply the size by N each step (default 1)\n"
	      "  -i, --stepbytes SIZE     add SIZE each step when -f is 1 (default 1M)\n"
	      "  -n, --iters N            exactly N timed iterations per size and placement;\n"
	      "                           default: 20, fewer (at least 5) where 20 would take\n"
	      "                           more than 0.5 s; with --min-time, the minimum\n"
	      "  -w, --warmup_iters N     untimed iterations before each timed loop (default 2)\n"
	      "  -c, --check 0|1          check every size, in place and out of place (default 1)\n"
	      "  -d, --datatype TYPE      float, double, half, bfloat16, int32, int8 (default float)\n"
	      "  -o, --op OP              sum, min, max (default sum)\n"
	      "  -g, --ngpus N            one process drives N GPUs, one rank each, as\n"
	      "                           nccl-tests' all_reduce_perf -g N: no MPI launcher,\n"
	      "                           the nccl backend (ncclCommInitAll, one thread, grouped\n"
	      "                           calls), same tables, checks, groups and result file;\n"
	      "                           for every N >= 1 without a launcher MPI is never\n"
	      "                           initialised. Default: 1 under mpirun; every visible\n"
	      "                           GPU when the nccl backend runs without a launcher\n"
	      "  -t, --nthreads 1         accepted for nccl-tests command lines\n"
	      "\n"
	      "Backends and algorithms:\n"
	      "  --backend B              nccl (device buffers), mpi (host buffers, Open MPI),\n"
	      "                           or auto: nccl when every rank has a GPU (default auto)\n"
	      "  --algo LIST              algorithms, each measured on its own communicator in\n"
	      "                           this launch (default: default). mpi: ring, tree (runs\n"
	      "                           Open MPI's recursive doubling and is labelled so),\n"
	      "                           recursive_doubling, default. nccl: ring, tree, nvls,\n"
	      "                           nvlstree, collnetdirect, collnetchain, pat, default\n"
	      "\n"
	      "Groups and scaling:\n"
	      "  --groups LIST            world, node, pairs (default world): every node alone\n"
	      "                           and node pairs (in rounds, each node in two pairs or\n"
	      "                           more) are measured concurrently; slow groups are\n"
	      "                           flagged and the node common to slow pairs named\n"
	      "  --node-size K            K consecutive ranks form a node (default: ranks that\n"
	      "                           share memory, MPI_COMM_TYPE_SHARED)\n"
	      "  --scaling                also measure the first n/8, n/4, n/2, n ranks\n"
	      "\n"
	      "Faults and thresholds:\n"
	      "  --timeout SEC            abort every rank when a collective or a step takes\n"
	      "                           longer than SEC, naming the ranks that never arrived\n"
	      "                           (default 120); every rank is out within SEC + 5 s,\n"
	      "                           whichever rank hangs. 0: no watchdog. The watchdog\n"
	      "                           costs nothing per call (a thread that never calls MPI)\n"
	      "  --min-busbw GBPS         exit 1 when the out-of-place busbw at the largest size\n"
	      "                           of an algorithm (world group) is below GBPS\n"
	      "  --inject-delay RANK:USEC[@SIZE]\n"
	      "                           diagnostic: world rank RANK sleeps USEC microseconds\n"
	      "                           before every all-reduce (of SIZE bytes or more), to\n"
	      "                           check that straggler, group and timeout detection work\n"
	      "  --confirm 0|1            at the end of each phase, measure again every cell\n"
	      "                           that looks like a dip (algbw below both neighbours\n"
	      "                           and 10% below their geometric mean, or the largest\n"
	      "                           size 10% below the one before) or a gap (out-of-place\n"
	      "                           and in-place more than 15% apart), on the loop time\n"
	      "                           or the median period, and always the largest size\n"
	      "                           (the figure health_report compares with the fleet),\n"
	      "                           and record the second measurement beside the first\n"
	      "                           (\"confirm\"); costs one step per size re-measured:\n"
	      "                           one per sweep on a smooth curve (default 1)\n"
	      "\n", f);
	ch_common_help(f);
	fputs("\n"
	      "Exit codes: 0 ok, 1 wrong results or busbw below --min-busbw, 2 usage,\n"
	      "3 backend unavailable (e.g. --backend nccl without a GPU), 4 run-time error or\n"
	      "timeout.\n"
	      "\n"
	      "Examples:\n"
	      "  allreduce_bw -g 8 -b 8 -e 8G -f 2 --algo ring,tree,default   # one node, no MPI\n"
	      "  mpirun -np 4 allreduce_bw -b 8 -e 64M -f 4 --backend mpi --algo ring,tree \\\n"
	      "      --groups world,node,pairs --node-size 2\n"
	      "  mpirun -np 64 --map-by ppr:8:node allreduce_bw -b 8 -e 8G -f 2 \\\n"
	      "      --algo ring,tree,default --groups world,node,pairs --scaling --json ar.json\n"
	      "  mpirun -np 8 allreduce_bw -b 1G -e 1G --min-busbw 350 --algo ring\n", f);
}

int ch_ar_size_list(uint64_t min_bytes, uint64_t max_bytes, uint64_t step_bytes, long factor,
		    uint64_t *out, int max)
{
	uint64_t s = min_bytes;
	int n = 0;

	if (min_bytes == 0 || min_bytes > max_bytes)
		return 0;
	while (s <= max_bytes) {
		uint64_t next;
		if (n < max)
			out[n] = s;
		if (++n > CH_AR_MAX_SIZES)
			break;
		if (factor > 1) {
			if (s > UINT64_MAX / (uint64_t)factor)
				break;
			next = s * (uint64_t)factor;
		} else {
			if (step_bytes == 0 || s > UINT64_MAX - step_bytes)
				break;
			next = s + step_bytes;
		}
		s = next;
	}
	return n;
}

static int parse_list(const char *opt, const char *arg, const char *const *names,
		      int *idx, int max)
{
	char buf[512], *items[16];
	int n, i, j;

	if (strlen(arg) >= sizeof(buf))
		return ch_usage_error("value for %s is too long", opt);
	strcpy(buf, arg);
	n = ch_split_list(buf, items, max < 16 ? max : 16);
	if (n < 0)
		return ch_usage_error("invalid list '%s' for %s (empty item, or more than %d items)", arg, opt, max);
	for (i = 0; i < n; i++) {
		if (names) {
			if ((idx[i] = ch_lookup(opt, items[i], names)) < 0)
				return CH_ERR_USAGE;
		}
		for (j = 0; j < i; j++)
			if (!strcmp(items[i], items[j]))
				return ch_usage_error("'%s' is listed twice in %s '%s'", items[i], opt, arg);
	}
	return n;
}

static int parse_delay(const char *arg, struct ch_ar_opts *o)
{
	char buf[128], *colon, *at;
	long rank, us;
	uint64_t from = 0;

	if (strlen(arg) >= sizeof(buf) || !(colon = strchr(strcpy(buf, arg), ':')))
		return ch_usage_error("invalid value '%s' for --inject-delay (expected RANK:USEC or RANK:USEC@SIZE)", arg);
	*colon++ = '\0';
	if ((at = strchr(colon, '@')) != NULL) {
		*at++ = '\0';
		if (ch_parse_size("--inject-delay SIZE", at, &from))
			return CH_ERR_USAGE;
	}
	if (ch_parse_long("--inject-delay RANK", buf, 0, 1L << 30, &rank) ||
	    ch_parse_long("--inject-delay USEC", colon, 1, 3600L * 1000000L, &us))
		return CH_ERR_USAGE;
	o->delay_rank = (int)rank;
	o->delay_us = us;
	o->delay_min_bytes = from;
	return 0;
}

static void defaults(struct ch_ar_opts *o)
{
	memset(o, 0, sizeof(*o));
	ch_common_opts_init(&o->common);
	o->min_bytes = 32ULL << 20;
	o->max_bytes = 32ULL << 20;
	o->step_bytes = 1ULL << 20;
	o->step_factor = 1;
	o->iters = CH_AR_DEFAULT_ITERS;
	o->warmup = CH_AR_DEFAULT_WARMUP;
	o->check = 1;
	o->dtype = CH_FP32;
	o->op = CH_COMM_REDOP_SUM;
	o->backend = CH_AR_BACKEND_AUTO;
	o->nalgos = 1;
	strcpy(o->algos[0], "default");
	o->groups = CH_AR_GROUPS_WORLD;
	o->timeout_sec = CH_AR_DEFAULT_TIMEOUT_SEC;
	o->min_busbw_gbps = -1.0;
	o->delay_rank = -1;
	o->confirm = 1;
}

/* One option of allreduce_bw (ch_opts_getopt()'s handler): 1 handled, 0 not one
 * of its own, or a negative status (message printed). */
static int ar_opt(int c, const char *arg, void *ctx)
{
	struct ch_ar_opts *o = ctx;
	int i, n, idx[16];
	long v;

	switch (c) {
	case 'b':
		if (ch_parse_size("-b", arg, &o->min_bytes))
			return CH_ERR_USAGE;
		break;
	case 'e':
		if (ch_parse_size("-e", arg, &o->max_bytes))
			return CH_ERR_USAGE;
		break;
	case 'i':
		if (ch_parse_size("-i", arg, &o->step_bytes))
			return CH_ERR_USAGE;
		if (o->step_bytes == 0)
			return ch_usage_error("invalid value '%s' for -i (the step must be at least 1 byte)", arg);
		break;
	case 'f':
		if (ch_parse_long("-f", arg, 1, 1L << 20, &o->step_factor))
			return CH_ERR_USAGE;
		break;
	case 'n':
		if (ch_parse_long("-n", arg, 1, 1000000, &v))
			return CH_ERR_USAGE;
		o->iters = (int)v;
		o->iters_given = 1;
		break;
	case 'w':
		if (ch_parse_long("-w", arg, 0, 100000, &v))
			return CH_ERR_USAGE;
		o->warmup = (int)v;
		break;
	case 'c':
		if (ch_parse_long("-c", arg, 0, 1, &v))
			return CH_ERR_USAGE;
		o->check = (int)v;
		break;
	case 'd':
		if ((o->dtype = ch_comm_dtype_parse("-d", arg)) < 0)
			return CH_ERR_USAGE;
		break;
	case 'o':
		if ((o->op = ch_lookup("-o", arg, ch_comm_redop_names)) < 0)
			return CH_ERR_USAGE;
		break;
	case 'g':
		if (ch_parse_long("-g", arg, 1, CH_AR_MAX_GPUS, &v))
			return CH_ERR_USAGE;
		o->ngpus = (int)v;
		break;
	case 't':
		if (ch_parse_long("-t", arg, 1, 1 << 20, &v))
			return CH_ERR_USAGE;
		if (v != 1)
			return ch_usage_error("unsupported value '%s' for -t: allreduce_bw drives its GPUs from one thread (-g N) or one rank per GPU (mpirun -np N)",
					      arg);
		break;
	case OPT_BACKEND:
		if ((o->backend = ch_lookup("--backend", arg, ch_comm_backend_names)) < 0)
			return CH_ERR_USAGE;
		break;
	case OPT_ALGO:
		if ((n = parse_list("--algo", arg, NULL, idx, CH_AR_MAX_ALGOS)) < 0)
			return CH_ERR_USAGE;
		{
			char buf[512], *items[CH_AR_MAX_ALGOS];
			strcpy(buf, arg);
			ch_split_list(buf, items, CH_AR_MAX_ALGOS);
			for (i = 0; i < n; i++) {
				if (strlen(items[i]) >= sizeof(o->algos[0]))
					return ch_usage_error("unknown algorithm '%s' for --algo", items[i]);
				strcpy(o->algos[i], items[i]);
			}
			o->nalgos = n;
		}
		break;
	case OPT_GROUPS:
		if ((n = parse_list("--groups", arg, ch_ar_groups_names, idx, 3)) < 0)
			return CH_ERR_USAGE;
		o->groups = 0;
		for (i = 0; i < n; i++)
			o->groups |= 1u << idx[i];
		break;
	case OPT_NODE_SIZE:
		if (ch_parse_long("--node-size", arg, 1, 1 << 24, &v))
			return CH_ERR_USAGE;
		o->node_size = (int)v;
		break;
	case OPT_SCALING:
		o->scaling = 1;
		break;
	case OPT_TIMEOUT:
		if (ch_parse_double("--timeout", arg, 0.0, 86400.0, &o->timeout_sec))
			return CH_ERR_USAGE;
		break;
	case OPT_MIN_BUSBW:
		if (ch_parse_double("--min-busbw", arg, 0.0, 1.0e9, &o->min_busbw_gbps))
			return CH_ERR_USAGE;
		break;
	case OPT_INJECT_DELAY:
		if (parse_delay(arg, o))
			return CH_ERR_USAGE;
		break;
	case OPT_CONFIRM:
		if (ch_parse_long("--confirm", arg, 0, 1, &v))
			return CH_ERR_USAGE;
		o->confirm = (int)v;
		break;
	default:
		return 0;
	}
	return 1;
}

int ch_ar_opts_parse(int argc, char **argv, struct ch_ar_opts *o)
{
	int rc;
	uint64_t es;

	defaults(o);
	if ((rc = ch_opts_getopt(argc, argv, "b:e:i:f:n:w:c:d:o:g:t:" CH_COMMON_SHORTOPTS, longopts, ar_opt, o, &o->common)) != 0)
		return rc;
	if (optind < argc)
		return ch_usage_error("unexpected argument '%s'", argv[optind]);
	if (o->common.help || o->common.version)
		return 0;
	es = ch_dtype_size(o->dtype);
	if (o->min_bytes == 0)
		return ch_usage_error("invalid size '0' for -b (the smallest message must be at least one element)");
	if (o->min_bytes < es)
		return ch_usage_error("-b '%llu' is smaller than one %s element (%llu bytes)",
				      (unsigned long long)o->min_bytes, ch_dtype_comm_name(o->dtype),
				      (unsigned long long)es);
	if (o->min_bytes > o->max_bytes)
		return ch_usage_error("-b '%llu' is larger than -e '%llu'",
				      (unsigned long long)o->min_bytes, (unsigned long long)o->max_bytes);
	if (ch_ar_size_list(o->min_bytes, o->max_bytes, o->step_bytes, o->step_factor, NULL, 0) > CH_AR_MAX_SIZES)
		return ch_usage_error("-b, -e, -i and -f give more than %d sizes; use a larger -i or -f",
				      CH_AR_MAX_SIZES);
	return 0;
}

int ch_ar_check_algos(const struct ch_ar_opts *o, const struct ch_comm_algo *accepted,
		      const char *backend)
{
	int i;

	for (i = 0; i < o->nalgos; i++) {
		int k, found = 0;
		for (k = 0; accepted[k].name; k++)
			if (!strcmp(accepted[k].name, o->algos[i]))
				found = 1;
		if (!found) {
			char list[256] = "";
			for (k = 0; accepted[k].name; k++) {
				if (k)
					strncat(list, ", ", sizeof(list) - strlen(list) - 1);
				strncat(list, accepted[k].name, sizeof(list) - strlen(list) - 1);
			}
			return ch_usage_error("unknown algorithm '%s' for backend %s (expected: %s)",
					      o->algos[i], backend, list);
		}
	}
	return 0;
}
