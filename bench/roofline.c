/*
 * roofline - memory and compute roofs of every device of a node, and where
 * elementwise kernels and GEMM land under them. Thin main: parse, run, emit
 * (bench/roofline/ does the work, its files listed in ch_roofline_int.h;
 * docs/roofline.md the methodology).
 */
#include "base/ch_common.h"
#include "bench/common/ch_opts.h"
#include "base/ch_result.h"
#include "bench/roofline/ch_roofline.h"

#include <stdio.h>

/* the GPU backend; tests build this main over a stand-in GPU
 * (tests/standin, build/tests/roofline-standin) */
#ifndef CH_RL_GPU_BACKEND
#define CH_RL_GPU_BACKEND ch_backend_cuda
#endif
extern const struct ch_backend CH_RL_GPU_BACKEND;

/* MPI only under a launcher (a plain ./roofline runs without it); hosts
 * counted by name; the envelope keeps host names of up to 255 bytes */
static const struct ch_world_how world_how = { .only_launched = 1, .funneled = 0, .hosts_by_name = 1,
					       .host_len = CH_WORLD_HOST_MAX };

int main(int argc, char **argv)
{
	struct ch_rl_opts o;
	struct ch_world mpi;
	struct ch_result *res = NULL;
	char reason[512];
	json_t *ranks;
	int rc;

	ch_set_prog("roofline");
	if ((rc = ch_rl_parse(argc, argv, &o)) != 0)
		return ch_exit_code(rc);
	if (o.common.help) {
		ch_rl_usage(stdout);
		return 0;
	}
	if (o.common.version) {
		ch_print_version("roofline");
		return 0;
	}
	if (o.list) {
		ch_rl_list(stdout);
		return 0;
	}
	o.gpu = &CH_RL_GPU_BACKEND;
	/* before anything else: the power limits an earlier run left capped
	 * (docs/roofline.md, "Power caps") */
	rc = ch_rl_power_recover(&o.power);
	if (o.power.restore_only) {
		json_decref(o.power.restored_at_start);
		if (rc == 0 || rc == 1)
			printf("%s\n", rc ? "power limits: restored what the state file named (see above)" :
			       "power limits: nothing to restore");
		return rc == 0 || rc == 1 ? 0 : ch_exit_code(rc);
	}
	if ((rc = ch_world_init(&argc, &argv, &world_how, &mpi)) != 0)
		return ch_exit_code(rc);
	if (mpi.rank != 0) { /* rank 0 writes the result and prints the tables */
		o.common.json_path = NULL;
		ch_set_quiet(1);
	}
	rc = ch_run_begin_world("roofline", argc, argv, &o.common, &mpi, &res);
	if (rc == 0) {
		ranks = ch_world_ranks_json(&mpi);
		if (ranks)
			ch_result_set(res, "ranks", ranks);
		rc = ch_rl_run(&o, &mpi, res, reason, sizeof(reason));
		if (ch_result_finish(res, rc, reason[0] ? "%s" : NULL, reason) != 0 && rc == CH_OK)
			rc = CH_ERR_RUNTIME;
		if (rc != CH_OK && mpi.rank == 0)
			ch_error("%s", reason[0] ? reason : "the run did not finish (no reason recorded)");
		ch_result_free(res);
	}
	json_decref(o.power.restored_at_start);
	ch_world_finalize(&mpi);
	return ch_exit_code(rc);
}
