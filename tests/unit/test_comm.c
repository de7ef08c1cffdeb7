#include <criterion/criterion.h>
#include <string.h>

#include "comm/ch_ar_pattern.h"
#include "comm/ch_comm.h"
#include "base/ch_common.h"

Test(comm, dtype_table)
{
	cr_assert_str_eq(ch_dtype_comm_name(CH_FP32), "float");
	cr_assert_str_eq(ch_dtype_comm_name(CH_BF16), "bfloat16");
	cr_assert_null(ch_dtype_comm_name(CH_TF32));
	cr_assert_eq(ch_dtype_size(CH_FP64), 8);
	cr_assert_eq(ch_dtype_size(CH_FP32), 4);
	cr_assert_eq(ch_dtype_size(CH_INT32), 4);
	cr_assert_eq(ch_dtype_size(CH_FP16), 2);
	cr_assert_eq(ch_dtype_size(CH_BF16), 2);
	cr_assert_eq(ch_dtype_size(CH_INT8), 1);
	cr_assert_str_eq(ch_comm_redop_names[CH_COMM_REDOP_SUM], "sum");
	cr_assert_null(ch_comm_redop_names[CH_COMM_REDOP_COUNT]);
}

/* nccl-tests doc/PERFORMANCE.md: busbw = algbw x 2(n-1)/n */
Test(comm, busbw_factor_known_answers)
{
	cr_assert_float_eq(ch_comm_busbw_factor(1), 0.0, 0);
	cr_assert_float_eq(ch_comm_busbw_factor(2), 1.0, 0);
	cr_assert_float_eq(ch_comm_busbw_factor(4), 1.5, 0);
	cr_assert_float_eq(ch_comm_busbw_factor(8), 1.75, 0);
	cr_assert_float_eq(ch_comm_busbw_factor(16), 1.875, 0);
	cr_assert_eq(ch_comm_busbw_factor(3), 2.0 * 2 / 3);
	cr_assert_float_eq(ch_comm_algbw_gbps(8589934592ULL, 0.047535), 8589934592.0 / 0.047535 / 1e9, 0);
	cr_assert_float_eq(ch_comm_algbw_gbps(2000000000ULL, 2.0), 1.0, 0);
	cr_assert_float_eq(ch_comm_algbw_gbps(100, 0), 0.0, 0);
}

/* The real nccl-tests log 01 (16 ranks): 8589934592 B in 47535 us gives
 * algbw 180.71 and busbw 338.82 (the log's time column is rounded to 1 us,
 * hence the 0.01 GB/s tolerance). */
Test(comm, busbw_matches_a_real_nccl_tests_row)
{
	double algbw = ch_comm_algbw_gbps(8589934592ULL, 47535e-6);
	cr_assert_float_eq(algbw, 180.71, 0.01);
	cr_assert_float_eq(algbw * ch_comm_busbw_factor(16), 338.82, 0.01);
}

Test(comm, pick_device)
{
	cr_assert_eq(ch_comm_pick_device(3, 8), 3);   /* every rank sees every GPU */
	cr_assert_eq(ch_comm_pick_device(3, 1), 0);   /* one GPU per rank mask */
	cr_assert_eq(ch_comm_pick_device(3, 2), 1);   /* two GPUs per rank mask */
	cr_assert_eq(ch_comm_pick_device(0, 0), -1);
}

Test(comm, find_duplicate_gpu)
{
	char ids[4][20];
	int a, b;
	memset(ids, 0, sizeof(ids));
	strcpy(ids[0], "0000:3b:00.0");
	strcpy(ids[1], "0000:5e:00.0");
	strcpy(ids[2], "0000:86:00.0");
	strcpy(ids[3], "0000:af:00.0");
	cr_assert_eq(ch_comm_find_duplicate(&ids[0][0], 20, 4, &a, &b), 0);
	cr_assert_eq(a, -1);
	strcpy(ids[3], "0000:5e:00.0");
	cr_assert_eq(ch_comm_find_duplicate(&ids[0][0], 20, 4, &a, &b), 1);
	cr_assert_eq(a, 1);
	cr_assert_eq(b, 3);
	ids[1][0] = ids[3][0] = '\0'; /* ranks without a GPU are ignored */
	cr_assert_eq(ch_comm_find_duplicate(&ids[0][0], 20, 4, &a, &b), 0);
}

Test(comm, registry)
{
	const struct ch_comm_backend *mpi = ch_comm_find("mpi");
	cr_assert_not_null(mpi);
	cr_assert_str_eq(mpi->name, "mpi");
	cr_assert_str_eq(mpi->memory, "host memory");
	cr_assert_null(ch_comm_find("gloo"));
#ifdef HAVE_NCCL
	cr_assert_not_null(ch_comm_find("nccl"));
	cr_assert_str_eq(ch_comm_find("nccl")->memory, "device memory");
	cr_assert_eq(ch_comm_find("nccl")->self_timeout, 1);
#else
	cr_assert_null(ch_comm_find("nccl"));
#endif
	cr_assert_str_eq(ch_comm_backend_names[0], "auto");
}

Test(comm, mpi_algorithm_labels)
{
	const struct ch_comm_backend *mpi = ch_comm_find("mpi");
	cr_assert_str_eq(ch_comm_algo_label(mpi, "ring"), "ring");
	cr_assert_str_eq(ch_comm_algo_label(mpi, "tree"), "recursive_doubling");
	cr_assert_str_eq(ch_comm_algo_label(mpi, "recursive_doubling"), "recursive_doubling");
	cr_assert_str_eq(ch_comm_algo_label(mpi, "default"), "default");
	cr_assert_null(ch_comm_algo_label(mpi, "nvls"));
	cr_assert_not_null(strstr(ch_comm_algo_detail(mpi, "ring"), "coll_tuned_allreduce_algorithm=4"));
	cr_assert_not_null(strstr(ch_comm_algo_detail(mpi, "tree"), "coll_tuned_allreduce_algorithm=3"));
	/* Open MPI's ring runs recursive doubling when count < ranks */
	cr_assert_str_eq(ch_comm_algo_effective(mpi, "ring", 2, 4), "recursive_doubling");
	cr_assert_null(ch_comm_algo_effective(mpi, "ring", 4, 4));
	cr_assert_null(ch_comm_algo_effective(mpi, "tree", 2, 4));
	cr_assert_null(ch_comm_algo_effective(mpi, "ring", 0, 1));
}

#ifdef HAVE_NCCL
Test(comm, nccl_algorithm_labels)
{
	const struct ch_comm_backend *nccl = ch_comm_find("nccl");
	cr_assert_str_eq(ch_comm_algo_label(nccl, "tree"), "tree");
	cr_assert_not_null(strstr(ch_comm_algo_detail(nccl, "ring"), "NCCL_ALGO=Ring"));
	cr_assert_not_null(strstr(ch_comm_algo_detail(nccl, "tree"), "NCCL_ALGO=Tree"));
	cr_assert_null(ch_comm_algo_label(nccl, "recursive_doubling"));
}

Test(comm, nccl_probe_without_gpu)
{
	char why[256] = "";
	int rc = ch_comm_find("nccl")->probe(why, sizeof(why));
	if (rc == 0)
		cr_skip("a CUDA device is present: the unavailable path is not exercised here");
	cr_assert_eq(rc, CH_ERR_UNAVAILABLE);
	cr_assert_not_null(strstr(why, "no CUDA device"), "reason: %s", why);
}
#endif

/* The host fill and check through the backend table (no MPI needed). */
Test(comm, mpi_host_fill_and_check)
{
	const struct ch_comm_backend *mpi = ch_comm_find("mpi");
	struct ch_ar_pattern p;
	void *in = NULL, *exp = NULL, *got = NULL;
	uint64_t wrong = 7;
	size_t n = 1000, i;
	int r;

	cr_assert_eq(ch_ar_pattern_init(&p, CH_FP16, CH_COMM_REDOP_SUM, 3), 0);
	cr_assert_eq(mpi->alloc(NULL, n * 2, &in), 0);
	cr_assert_eq(mpi->alloc(NULL, n * 2, &exp), 0);
	cr_assert_eq(mpi->alloc(NULL, n * 2, &got), 0);
	cr_assert_eq((uintptr_t)in % 4096, 0);
	cr_assert_eq(mpi->fill_expected(NULL, exp, &p, n, 11), 0);
	/* sum the three ranks' inputs by hand, in half */
	memset(got, 0, n * 2);
	for (r = 0; r < 3; r++) {
		cr_assert_eq(mpi->fill_input(NULL, in, &p, n, r, 11), 0);
		for (i = 0; i < n; i++) {
			uint16_t *g = got, *x = in;
			g[i] = ch_half_from_float(ch_half_to_float(g[i]) + ch_half_to_float(x[i]));
		}
	}
	cr_assert_eq(mpi->count_wrong(NULL, got, exp, n, CH_FP16, &wrong), 0);
	cr_assert_eq(wrong, 0);
	cr_assert_eq(mpi->poison(NULL, got, n * 2), 0);
	cr_assert_eq(mpi->count_wrong(NULL, got, exp, n, CH_FP16, &wrong), 0);
	cr_assert_eq(wrong, n, "poisoned buffer must be wrong everywhere");
	mpi->free(NULL, in);
	mpi->free(NULL, exp);
	mpi->free(NULL, got);
}
