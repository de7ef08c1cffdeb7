/*
 * ch_ckpt_opts.c - checkpoint_io's options, layout and stall model
 * (see ch_ckpt.h).
 */
#include "bench/checkpoint/ch_ckpt.h"
#include "base/ch_common.h"
#include "base/ch_parse.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum {
	OPT_DIR = CH_OPT_FIRST_TOOL,
	OPT_STAGE_DIR,
	OPT_SIZE,
	OPT_PARAMS,
	OPT_BPP,
	OPT_FILES,
	OPT_BLOCK,
	OPT_INTERVAL,
	OPT_TIMEOUT,
	OPT_NO_SCALING,
	OPT_LOAD,
	OPT_KEEP,
	OPT_REPEAT,
	OPT_CORRUPT,
};

static const struct option longopts[] = {
	{ "dir", required_argument, NULL, OPT_DIR },
	{ "stage-dir", required_argument, NULL, OPT_STAGE_DIR },
	{ "size", required_argument, NULL, OPT_SIZE },
	{ "params", required_argument, NULL, OPT_PARAMS },
	{ "bytes-per-param", required_argument, NULL, OPT_BPP },
	{ "files-per-rank", required_argument, NULL, OPT_FILES },
	{ "block-size", required_argument, NULL, OPT_BLOCK },
	{ "interval", required_argument, NULL, OPT_INTERVAL },
	{ "timeout", required_argument, NULL, OPT_TIMEOUT },
	{ "no-scaling", no_argument, NULL, OPT_NO_SCALING },
	{ "load", required_argument, NULL, OPT_LOAD },
	{ "keep", no_argument, NULL, OPT_KEEP },
	{ "repeat", required_argument, NULL, OPT_REPEAT },
	{ "test-corrupt-rank", required_argument, NULL, OPT_CORRUPT },
	CH_COMMON_LONGOPTS,
	{ NULL, 0, NULL, 0 }
};

static const char *const load_names[] = { "auto", "cpu", "gpu", "none", NULL };

const char *ch_ckpt_load_name(int load)
{
	return load >= 0 && load <= CH_CKPT_LOAD_NONE ? load_names[load] : "?";
}

void ch_ckpt_opts_init(struct ch_ckpt_opts *o)
{
	memset(o, 0, sizeof(*o));
	ch_common_opts_init(&o->common);
	o->bytes_per_param = CH_CKPT_DEFAULT_BYTES_PER_PARAM;
	o->files_per_rank = 1;
	o->block_bytes = CH_CKPT_DEFAULT_BLOCK_BYTES;
	o->interval_sec = -1;
	o->timeout_sec = CH_CKPT_DEFAULT_TIMEOUT_SEC;
	o->scaling = 1;
	o->load = CH_CKPT_LOAD_AUTO;
	o->corrupt_rank = -1;
	o->repeat = 1;
}

void ch_ckpt_usage(FILE *f)
{
	fputs("Usage: mpirun -np N checkpoint_io --dir DIR (--size SIZE | --params N) [OPTION]...\n"
	      "\n"
	      "What a synchronous checkpoint costs on DIR, and what staging it saves: each rank\n"
	      "writes its shard (one file per rank, large sequential writes from a pinned host\n"
	      "buffer, then fsync), once synchronously (every rank blocked until its data is\n"
	      "durable on DIR) and once staged (written to --stage-dir, then copied to DIR in\n"
	      "the background while a CPU or GPU load runs). Every file is checksummed (zlib\n"
	      "crc32) and read back. Reports the time every rank is blocked (max over ranks),\n"
	      "the aggregate write bandwidth at 1, n/4, n/2 and n writers, the slowest rank,\n"
	      "and with --interval the stall fraction of wall-clock. Method: docs/checkpoint_io.md.\n"
	      "\n"
	      "Checkpoint:\n"
	      "  --dir DIR              where the checkpoint goes: the mount the job writes to\n"
	      "                         (NFS, Lustre, GPFS or local); created when missing; must\n"
	      "                         hold no files but this tool's and room for twice the\n"
	      "                         checkpoint (the staged copy is written beside the\n"
	      "                         synchronous one); one run at a time (checkpoint_io.lock)\n"
	      "  --size SIZE            total checkpoint size over all ranks (K/M/G/T = 1024)\n"
	      "  --params N             or: model parameters (7e9) ...\n"
	      "  --bytes-per-param B    ... times bytes per parameter (default 16: bf16 weights\n"
	      "                         and gradients, fp32 master weights and Adam moments;\n"
	      "                         14 without the gradients)\n"
	      "  --files-per-rank N     files per rank, 1 to 1024 (default 1)\n"
	      "  --block-size SIZE      bytes per write call, 4K to 1G (default 16M)\n"
	      "  --stage-dir DIR        node-local staging directory (NVMe or tmpfs); default a\n"
	      "                         new directory under /dev/shm (else /tmp), removed after\n"
	      "  --interval TIME        wall-clock between checkpoints (30m, 1800s, 2h): gives the\n"
	      "                         stall fraction of wall-clock\n"
	      "  --load NAME            load run while the staged copy drains: auto (cpu, and\n"
	      "                         gpu when present; default), cpu, gpu, none\n"
	      "  --repeat N             write the synchronous checkpoint N times, 1 to 8\n"
	      "                         (default 1): each again a fresh measurement (the\n"
	      "                         previous files removed, new ones written and fsynced)\n"
	      "                         after the first is read back; results.sync holds the\n"
	      "                         first, results.sync.again the others\n"
	      "  --no-scaling           skip the 1, n/4, n/2 writer points\n"
	      "  --timeout SEC          longest one file's write, fsync or read may take before\n"
	      "                         the run stops naming the rank and path (default 600;\n"
	      "                         0 disables)\n"
	      "  --keep                 leave the checkpoint files in DIR\n"
	      "  --test-corrupt-rank R  for tests: flip one byte of rank R's first synchronous\n"
	      "                         file between its write and its read-back\n"
	      "\n", f);
	ch_common_help(f);
	fputs("  (checkpoint_io refuses --min-time: each checkpoint is written once per strategy,\n"
	      "  the synchronous one --repeat times)\n"
	      "\n"
	      "Exit status: 0 every file read back intact, 1 a file did not read back (FAIL),\n"
	      "2 bad option, DIR not empty, not writable or without room, shards beyond the\n"
	      "node's memory, 3 --load gpu without a GPU, 4 run-time error (a write failed,\n"
	      "the target filled up, a timeout, a signal, the result file not written).\n"
	      "\n"
	      "Examples:\n"
	      "  mpirun -np 4 checkpoint_io --dir /tmp/ckpt --size 1G --interval 30m\n"
	      "  srun -N 8 --ntasks-per-node 8 checkpoint_io --dir /lustre/$USER/ckpt-test \\\n"
	      "      --params 7e9 --interval 30m --stage-dir /local/nvme/stage --json ckpt.json\n", f);
}

static int ckpt_opt(int c, const char *arg, void *ctx);

int ch_ckpt_opts_parse(int argc, char **argv, struct ch_ckpt_opts *o)
{
	int rc;

	ch_ckpt_opts_init(o);
	if ((rc = ch_opts_getopt(argc, argv, CH_COMMON_SHORTOPTS, longopts, ckpt_opt, o, &o->common)) != 0)
		return rc;
	if (o->common.help || o->common.version)
		return 0;
	if (optind < argc)
		return ch_usage_error("unexpected argument '%s'", argv[optind]);
	if (o->common.min_time_sec >= 0)
		return ch_usage_error("--min-time is not used by checkpoint_io (each checkpoint is written once per strategy, the synchronous one --repeat times)");
	if (!o->dir)
		return ch_usage_error("--dir is required (the directory the checkpoint is written to)");
	if (o->have_size == o->have_params)
		return ch_usage_error("give one of --size and --params");
	if (o->have_bpp && !o->have_params)
		return ch_usage_error("--bytes-per-param goes with --params");
	if (o->have_params) {
		double b = nearbyint(o->params * o->bytes_per_param);
		if (!(b >= 1) || b > 1.8e19)
			return ch_usage_error("--params %g x --bytes-per-param %g is not a size from 1 byte to 16 EiB",
					      o->params, o->bytes_per_param);
		o->size_bytes = (uint64_t)b;
	}
	return 0;
}

/* One option of checkpoint_io (ch_opts_getopt()'s handler): 1 handled, 0 not one
 * of its own, or a negative status (message printed). */
static int ckpt_opt(int c, const char *arg, void *ctx)
{
	struct ch_ckpt_opts *o = ctx;
	int rc, idx;
	long l;
	double d;

	switch (c) {
	case OPT_DIR:
	case OPT_STAGE_DIR:
		if (!*arg)
			return ch_usage_error("empty directory name for %s", c == OPT_DIR ? "--dir" : "--stage-dir");
		if (strlen(arg) > 3000)
			return ch_usage_error("directory name for %s is longer than 3000 characters", c == OPT_DIR ? "--dir" : "--stage-dir");
		if (c == OPT_DIR)
			o->dir = arg;
		else
			o->stage_dir = arg;
		break;
	case OPT_SIZE:
		if ((rc = ch_parse_size("--size", arg, &o->size_bytes)))
			return rc;
		if (!o->size_bytes)
			return ch_usage_error("invalid size '%s' for --size (expected more than 0 bytes)", arg);
		o->have_size = 1;
		break;
	case OPT_PARAMS:
		if ((rc = ch_parse_double("--params", arg, 1, 1e16, &o->params)))
			return rc;
		o->have_params = 1;
		break;
	case OPT_BPP:
		if ((rc = ch_parse_double("--bytes-per-param", arg, 0.125, 64, &o->bytes_per_param)))
			return rc;
		o->have_bpp = 1;
		break;
	case OPT_FILES:
		if ((rc = ch_parse_long("--files-per-rank", arg, 1, CH_CKPT_MAX_FILES_PER_RANK, &l)))
			return rc;
		o->files_per_rank = l;
		break;
	case OPT_BLOCK:
		if ((rc = ch_parse_size("--block-size", arg, &o->block_bytes)))
			return rc;
		if (o->block_bytes < 4096 || o->block_bytes > (1ull << 30))
			return ch_usage_error("invalid size '%s' for --block-size (expected 4K to 1G)", arg);
		break;
	case OPT_INTERVAL:
		if ((rc = ch_parse_duration("--interval", arg, &d)))
			return rc;
		if (!(d > 0) || d > 1e8)
			return ch_usage_error("invalid duration '%s' for --interval (expected a positive time up to 1e8 s)", arg);
		o->interval_sec = d;
		break;
	case OPT_TIMEOUT:
		if ((rc = ch_parse_double("--timeout", arg, 0, 1e6, &o->timeout_sec)))
			return rc;
		break;
	case OPT_NO_SCALING:
		o->scaling = 0;
		break;
	case OPT_LOAD:
		if ((idx = ch_lookup("--load", arg, load_names)) < 0)
			return idx;
		o->load = idx;
		break;
	case OPT_KEEP:
		o->keep = 1;
		break;
	case OPT_REPEAT:
		if ((rc = ch_parse_long("--repeat", arg, 1, CH_CKPT_MAX_REPEAT, &o->repeat)))
			return rc;
		break;
	case OPT_CORRUPT:
		if ((rc = ch_parse_long("--test-corrupt-rank", arg, 0, 1 << 24, &o->corrupt_rank)))
			return rc;
		break;
	default:
		return 0;
	}
	return 1;
}

/* ---- layout */

uint64_t ch_ckpt_shard_bytes(uint64_t total, int nranks, int rank)
{
	if (nranks < 1 || rank < 0 || rank >= nranks)
		return 0;
	return total / (uint64_t)nranks + ((uint64_t)rank < total % (uint64_t)nranks ? 1 : 0);
}

uint64_t ch_ckpt_file_offset(uint64_t shard, int nfiles, int file)
{
	uint64_t q, r, f;

	if (nfiles < 1 || file <= 0)
		return 0;
	if (file >= nfiles)
		return shard;
	q = shard / (uint64_t)nfiles;
	r = shard % (uint64_t)nfiles;
	f = (uint64_t)file;
	return f * q + (f < r ? f : r);
}

uint64_t ch_ckpt_host_bytes(uint64_t node_share, int stage_in_memory)
{
	if (!stage_in_memory)
		return node_share;
	return node_share > UINT64_MAX - node_share ? UINT64_MAX : 2 * node_share;
}

int ch_ckpt_writer_points(int n, int *out)
{
	int cand[3] = { 1, n / 4, n / 2 }, k = 0, i;

	for (i = 0; i < 3; i++)
		if (cand[i] >= 1 && cand[i] < n && (k == 0 || cand[i] > out[k - 1]))
			out[k++] = cand[i];
	out[k++] = n < 1 ? 1 : n;
	return k;
}

char *ch_ckpt_file_name(char *buf, size_t n, const char *dir, const char *kind, int rank, int file)
{
	int len = snprintf(buf, n, "%s/checkpoint_io.%s.r%05d.f%03d", dir, kind, rank, file);
	return len < 0 || (size_t)len >= n ? NULL : buf;
}

int ch_ckpt_is_own_name(const char *name)
{
	static const char pre[] = "checkpoint_io.";
	const char *p;
	int i;

	if (strncmp(name, pre, sizeof(pre) - 1))
		return 0;
	p = name + sizeof(pre) - 1;
	if (!strncmp(p, "sync.", 5) || !strncmp(p, "stage.", 6) || !strncmp(p, "copy.", 5)) {
		p = strchr(p, '.') + 1;
	} else if (*p == 'w' && isdigit((unsigned char)p[1])) {
		for (p++; isdigit((unsigned char)*p); p++)
			;
		if (*p++ != '.')
			return 0;
	} else {
		return 0;
	}
	if (*p++ != 'r')
		return 0;
	for (i = 0; i < 5; i++)
		if (!isdigit((unsigned char)*p++))
			return 0;
	while (isdigit((unsigned char)*p)) /* ranks of 100000 and more */
		p++;
	if (strncmp(p, ".f", 2))
		return 0;
	p += 2;
	for (i = 0; i < 3; i++)
		if (!isdigit((unsigned char)*p++))
			return 0;
	while (isdigit((unsigned char)*p))
		p++;
	return *p == '\0';
}
