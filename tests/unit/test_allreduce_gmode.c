/*
 * allreduce_bw's single-process mode (-g N) on the CPU: the whole sweep
 * (ch_ar_run_backend()) with a stand-in backend that has the
 * single-process slots (devices, comm_create_group, run_group) and reduces
 * in host memory, one "device" per rank, in a world of one process (MPI
 * initialised without a launcher). It checks what a GPU run would produce
 * without a GPU: the plan of groups, the tables, the checks, the result
 * file in the schema of an MPI run, wrong results counted, the order the
 * communicators are created in, and a failed creation reported.
 * The buffer operations are the mpi backend's (host memory).
 */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/ch_common.h"
#include "base/ch_stats.h"
#include "bench/allreduce/ch_ar_opts.h"
#include "bench/allreduce/ch_ar_run.h"
#include "bench/common/ch_ar_world.h"
#include "comm/ch_ar_pattern.h"
#include "comm/ch_comm.h"

#define NDEV 4

/* ---- the stand-in: NDEV devices of host memory, float sums */
struct ch_comm_ctx {
	int dev;
};
struct clique {
	int n;
	int id;
};
struct ch_comm {
	struct clique *cl;
	int rank;
	struct ch_comm_ctx *x;
};

static int corrupt;           /* 1: rank 1's element 0 comes out one too big */
static size_t slow_count;     /* calls of this count take 2 ms longer (a dip) */
static int fail_create;       /* 1: the next comm_create_group fails */
static char created[64][16];  /* algorithms in creation order */
static int ncreated, nlive;

static const struct ch_comm_algo host_algos[] = {
	{ .name = "ring", .label = "ring", .setting = "Ring", .detail = "stand-in ring (a setting)" },
	{ .name = "default", .label = "default", .setting = NULL, .detail = "stand-in default (no setting)" },
	{ .name = NULL },
};

static int host_probe(char *why, size_t n) { (void)why; (void)n; return 0; }
static int host_devices(void) { return NDEV; }
static int host_open(int local_rank, int local_size, struct ch_comm_device *dev, struct ch_comm_ctx **out,
		     char *why, size_t n)
{
	(void)local_size; (void)why; (void)n;
	memset(dev, 0, sizeof(*dev));
	dev->gpu_index = local_rank;
	snprintf(dev->pci_bus_id, sizeof(dev->pci_bus_id), "0000:%02x:00.0", 0x10 + local_rank);
	snprintf(dev->name, sizeof(dev->name), "stand-in device %d", local_rank);
	dev->free_bytes = 1ull << 32;
	*out = calloc(1, sizeof(**out));
	(*out)->dev = local_rank;
	return 0;
}
static void host_close(struct ch_comm_ctx *x) { free(x); }
static int host_supports(int dtype, int op) { return dtype == CH_FP32 && op == CH_COMM_REDOP_SUM; }
static int host_create_group(struct ch_comm_ctx *const *x, int n, const char *algo, struct ch_comm **out,
			     char *why, size_t nwhy)
{
	static int next_id;
	struct clique *cl;
	int i;

	if (fail_create) {
		snprintf(why, nwhy, "stand-in: cannot create a clique of %d for %s", n, algo);
		return CH_ERR_RUNTIME;
	}
	snprintf(created[ncreated++ % 64], sizeof(created[0]), "%s", algo);
	cl = calloc(1, sizeof(*cl));
	cl->n = n;
	cl->id = next_id++;
	for (i = 0; i < n; i++) {
		out[i] = calloc(1, sizeof(*out[i]));
		out[i]->cl = cl;
		out[i]->rank = i;
		out[i]->x = x[i];
	}
	nlive += n;
	return 0;
}
static void host_destroy(struct ch_comm *c)
{
	if (!c)
		return;
	if (c->rank == 0)
		free(c->cl); /* rank 0 is destroyed last by nobody in particular: keep the clique until then */
	nlive--;
	free(c);
}
/* every clique among @c: the float sum of its members' inputs, in rank order */
static void reduce(struct ch_comm *const *c, int n, struct ch_comm_run *r)
{
	int i, j;
	for (i = 0; i < n; i++) {
		float *sum;
		size_t k, cnt = r[i].count;
		int done = 0;
		for (j = 0; j < i; j++)
			if (c[j]->cl == c[i]->cl)
				done = 1;
		if (done)
			continue;
		sum = calloc(cnt, sizeof(float));
		for (int rk = 0; rk < c[i]->cl->n; rk++)
			for (j = 0; j < n; j++)
				if (c[j]->cl == c[i]->cl && c[j]->rank == rk) {
					const float *in = r[j].send ? r[j].send : r[j].recv;
					for (k = 0; k < cnt; k++)
						sum[k] += in[k];
				}
		for (j = 0; j < n; j++)
			if (c[j]->cl == c[i]->cl) {
				memcpy(r[j].recv, sum, cnt * sizeof(float));
				if (corrupt && c[j]->x->dev == 1)
					((float *)r[j].recv)[0] += 1.0f;
			}
		free(sum);
	}
}
static int host_run_group(struct ch_comm *const *c, int n, struct ch_comm_run *r)
{
	double t_start = 0, prev = ch_now_sec();
	int k, i;
	for (k = -r[0].warmup; k < r[0].iters; k++) {
		double t0 = ch_now_sec(), t1;
		if (k == 0)
			t_start = prev = t0;
		if (r[0].progress)
			*r[0].progress = k;
		reduce(c, n, r);
		if (slow_count && r[0].count == slow_count) {
			struct timespec ts = { 0, 2000000 };
			nanosleep(&ts, NULL);
		}
		t1 = ch_now_sec();
		if (k >= 0 && r[0].per_call)
			for (i = 0; i < n; i++) {
				/* device i arrives 100 us after device i - 1: the
				 * earlier ones wait for it inside the call */
				r[i].call_sec[k] = (t1 - t0) + 1e-4 * (n - 1 - i);
				r[i].iter_sec[k] = (t1 - prev) + 1e-4 * (n - 1);
			}
		prev = t1;
	}
	for (i = 0; i < n; i++)
		r[i].loop_sec = prev - t_start;
	return 0;
}

static struct ch_comm_backend host_gpus;

static void make_backend(void)
{
	host_gpus = ch_comm_mpi; /* host memory buffer operations */
	host_gpus.name = "nccl";   /* what the result file of a GPU run would say */
	host_gpus.memory = "device memory";
	host_gpus.algos = host_algos;
	host_gpus.probe = host_probe;
	host_gpus.open = host_open;
	host_gpus.close = host_close;
	host_gpus.version = NULL;
	host_gpus.supports = host_supports;
	host_gpus.prepare = NULL;
	host_gpus.comm_create = NULL;
	host_gpus.comm_destroy = host_destroy;
	host_gpus.run = NULL;
	host_gpus.comm_reserve_bytes = 0;
	host_gpus.devices = host_devices;
	host_gpus.comm_create_group = host_create_group;
	host_gpus.run_group = host_run_group;
}

/* Run allreduce_bw's sweep with @args (after the program name) on the
 * stand-in; returns the status, the result document in *doc. */
static int run_sweep(const char *args, json_t **doc)
{
	char path[] = "/tmp/ch_gmode_test.XXXXXX", file[96], line[1024], *argv[64], *save = NULL, *t;
	struct ch_ar_world *w;
	struct ch_ar_opts o;
	json_error_t err;
	int argc = 0, rc;

	cr_assert_not_null(mkdtemp(path));
	snprintf(file, sizeof(file), "%s/ar.json", path);
	snprintf(line, sizeof(line), "allreduce_bw %s --json %s", args, file);
	for (t = strtok_r(line, " ", &save); t && argc < 63; t = strtok_r(NULL, " ", &save))
		argv[argc++] = t;
	argv[argc] = NULL;
	make_backend();
	unsetenv("OMPI_COMM_WORLD_SIZE");
	cr_assert_eq(ch_ar_world_init(&argc, (char ***)&(char **){ argv }, CH_AR_DEFAULT_TIMEOUT_SEC, &w), 0);
	cr_assert_eq(ch_ar_opts_parse(argc, argv, &o), 0);
	rc = ch_ar_run_backend(w, &o, &host_gpus, argc, argv);
	ch_ar_world_finalize(w, rc);
	*doc = json_load_file(file, 0, &err);
	cr_assert_not_null(*doc, "%s: %s", file, err.text);
	unlink(file);
	rmdir(path);
	return rc;
}

static json_t *sweep_of(json_t *doc, const char *group, const char *algo)
{
	json_t *sw;
	size_t i;
	json_array_foreach(json_object_get(json_object_get(doc, "results"), "sweeps"), i, sw)
		if (!strcmp(json_string_value(json_object_get(sw, "group_name")), group) &&
		    !strcmp(json_string_value(json_object_get(sw, "algo")), algo))
			return sw;
	return NULL;
}

Test(allreduce_gmode, one_process_four_devices_same_tables_and_result_file, .init = cr_redirect_stdout,
     .timeout = 120)
{
	json_t *doc, *res, *ranks, *sw, *row;
	size_t i;
	int rc;

	rc = run_sweep("-g 4 -b 8 -e 4K -f 8 --algo default,ring --groups world,node,pairs --node-size 2 -n 5 -w 1 --confirm 0", &doc);
	cr_assert_eq(rc, 0);
	cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "ok");
	res = json_object_get(doc, "results");
	cr_assert_str_eq(json_string_value(json_object_get(res, "launch")), "single-process");
	cr_assert_eq(json_integer_value(json_object_get(res, "wrong_total")), 0);
	ranks = json_object_get(doc, "ranks");
	cr_assert_eq(json_integer_value(json_object_get(ranks, "world_size")), 4);
	cr_assert_eq(json_integer_value(json_object_get(ranks, "gpus_per_process")), 4);
	cr_assert_eq(json_integer_value(json_object_get(ranks, "nodes")), 2);
	json_array_foreach(json_object_get(ranks, "layout"), i, row) {
		cr_assert_eq(json_integer_value(json_object_get(row, "rank")), (json_int_t)i);
		cr_assert_eq(json_integer_value(json_object_get(row, "gpu_index")), (json_int_t)i);
		cr_assert_eq(json_integer_value(json_object_get(row, "local_rank")), (json_int_t)i);
		cr_assert_eq(json_integer_value(json_object_get(row, "pid")), (json_int_t)getpid());
		cr_assert_eq(json_integer_value(json_object_get(row, "node")), (json_int_t)(i / 2));
	}
	/* the world of 4, both node groups (measured concurrently), each algorithm */
	cr_assert_not_null(sw = sweep_of(doc, "world", "default"));
	cr_assert_eq(json_integer_value(json_object_get(sw, "nranks")), 4);
	cr_assert_eq(json_array_size(json_object_get(sw, "rows")), 4); /* 8, 64, 512, 4096 */
	json_array_foreach(json_object_get(sw, "rows"), i, row) {
		json_t *op = json_object_get(row, "out_of_place"), *ip = json_object_get(row, "in_place");
		cr_assert_eq(json_integer_value(json_object_get(op, "wrong")), 0);
		cr_assert_eq(json_integer_value(json_object_get(ip, "wrong")), 0);
		cr_assert_eq(json_integer_value(json_object_get(row, "iterations")), 5);
		cr_assert_float_eq(json_number_value(json_object_get(row, "busbw_factor")), 1.5, 1e-12);
		cr_assert_eq(json_array_size(json_object_get(row, "per_rank_mean_us")), 4);
		/* the per-device times: device 3 arrives last by construction */
		cr_assert_eq(json_integer_value(json_object_get(row, "slowest_rank")), 3);
	}
	cr_assert_not_null(sweep_of(doc, "world", "ring"));
	cr_assert_not_null(sw = sweep_of(doc, "node0", "ring"));
	cr_assert_eq(json_integer_value(json_object_get(sw, "nranks")), 2);
	cr_assert_not_null(sweep_of(doc, "node1", "default"));
	cr_assert_eq(json_integer_value(json_object_get(json_object_get(json_array_get(json_object_get(sw, "rows"), 0),
		"in_place"), "wrong")), 0);
	/* communicators: every phase creates the algorithm with a setting
	 * first, whatever the --algo order (comm/nccl/ch_comm_nccl.c) */
	cr_assert_geq(ncreated, 2);
	cr_assert_str_eq(created[0], "ring");
	cr_assert_eq(nlive, 0, "%d communicators left", nlive);
	json_decref(doc);
}

Test(allreduce_gmode, wrong_results_of_one_device_are_counted, .init = cr_redirect_stdout, .timeout = 120)
{
	json_t *doc, *sw;
	int rc;

	corrupt = 1;
	rc = run_sweep("-g 4 -b 64 -e 64 -n 3 --confirm 0", &doc);
	cr_assert_eq(rc, CH_ERR_CHECK);
	cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "failed");
	cr_assert_not_null(strstr(json_string_value(json_object_get(doc, "reason")), "wrong elements"));
	sw = sweep_of(doc, "world", "default");
	cr_assert_eq(json_integer_value(json_object_get(json_object_get(json_array_get(json_object_get(sw, "rows"), 0),
		"out_of_place"), "wrong")), 1);
	cr_assert_eq(json_integer_value(json_object_get(json_object_get(doc, "results"), "wrong_total")), 2);
	json_decref(doc);
}

Test(allreduce_gmode, a_communicator_that_cannot_be_created_is_reported, .init = cr_redirect_stderr, .timeout = 120)
{
	json_t *doc;
	int rc;

	fail_create = 1;
	rc = run_sweep("-g 2 -b 64 -e 64 -n 3", &doc);
	cr_assert_eq(rc, CH_ERR_RUNTIME);
	cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "error");
	cr_assert_not_null(strstr(json_string_value(json_object_get(doc, "reason")), "cannot create a clique of 2"));
	json_decref(doc);
}

Test(allreduce_gmode, more_gpus_than_the_process_sees_is_unavailable, .init = cr_redirect_stderr, .timeout = 120)
{
	json_t *doc;
	int rc;

	rc = run_sweep("-g 8 -b 64 -e 64", &doc);
	cr_assert_eq(rc, CH_ERR_UNAVAILABLE);
	cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "unavailable");
	cr_assert_not_null(strstr(json_string_value(json_object_get(doc, "reason")), "-g 8: this process sees 4 GPUs"));
	json_decref(doc);
}

/* The confirmation (--confirm 1, the default) in the single-process mode: a
 * size that is slow in every pass is a dip, measured again, and the cell
 * gets its "confirm" object, as under mpirun. */
Test(allreduce_gmode, a_dip_is_measured_again, .init = cr_redirect_stdout, .timeout = 120)
{
	json_t *doc, *sw, *row, *cell;
	size_t i;
	int rc, found = 0;

	slow_count = 512 / sizeof(float);
	rc = run_sweep("-g 2 -b 8 -e 32K -f 8 -n 5 -w 1", &doc);
	cr_assert_eq(rc, 0);
	cr_assert_geq(json_integer_value(json_object_get(json_object_get(json_object_get(doc, "results"), "confirm"),
							 "cells")), 1);
	sw = sweep_of(doc, "world", "default");
	json_array_foreach(json_object_get(sw, "rows"), i, row) {
		cell = json_object_get(json_object_get(row, "out_of_place"), "confirm");
		if (json_integer_value(json_object_get(row, "bytes")) == 512) {
			cr_assert(json_is_object(cell), "the 512 B dip was not measured again");
			cr_assert_str_eq(json_string_value(json_object_get(cell, "why")), "dip");
			cr_assert_eq(json_integer_value(json_object_get(cell, "wrong")), 0);
			found = 1;
		}
	}
	cr_assert(found);
	json_decref(doc);
}
