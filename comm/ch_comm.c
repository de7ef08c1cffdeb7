#include "comm/ch_comm.h"
#include "base/ch_parse.h"

#include <errno.h>
#include <string.h>
#include <time.h>

/* The collective element types in nccl-tests' order (-d), for the message. */
static const enum ch_dtype comm_dtypes[] = { CH_FP32, CH_FP64, CH_FP16, CH_BF16, CH_INT32, CH_INT8 };
#define N_COMM_DTYPES (int)(sizeof(comm_dtypes) / sizeof(comm_dtypes[0]))

int ch_comm_dtype_parse(const char *opt, const char *s)
{
	const char *names[N_COMM_DTYPES + 1];
	int i;
	for (i = 0; i < N_COMM_DTYPES; i++)
		names[i] = ch_dtype_comm_name(comm_dtypes[i]);
	names[i] = NULL;
	i = ch_lookup(opt, s, names);
	return i < 0 ? i : (int)comm_dtypes[i];
}

const char *const ch_comm_redop_names[CH_COMM_REDOP_COUNT + 1] = {
	[CH_COMM_REDOP_SUM] = "sum",
	[CH_COMM_REDOP_MIN] = "min",
	[CH_COMM_REDOP_MAX] = "max",
	[CH_COMM_REDOP_COUNT] = NULL,
};

/* busbw = algbw x 2(n-1)/n: nccl-tests doc/PERFORMANCE.md, "AllReduce". */
double ch_comm_busbw_factor(int nranks)
{
	if (nranks <= 1)
		return 0.0;
	return 2.0 * (double)(nranks - 1) / (double)nranks;
}

/* algbw = S / t, 1 GB = 1e9 bytes: nccl-tests doc/PERFORMANCE.md. */
double ch_comm_algbw_gbps(uint64_t bytes, double sec)
{
	if (!(sec > 0.0))
		return 0.0;
	return (double)bytes / sec / 1.0e9;
}

int ch_comm_pick_device(int local_rank, int visible)
{
	if (visible < 1 || local_rank < 0)
		return -1;
	return local_rank % visible;
}

int ch_comm_find_duplicate(const char *bus_ids, size_t bus_id_len, int n,
			   int *first, int *second)
{
	int i, j;

	*first = *second = -1;
	for (j = 1; j < n; j++) {
		const char *b = bus_ids + (size_t)j * bus_id_len;
		if (!*b)
			continue;
		for (i = 0; i < j; i++) {
			const char *a = bus_ids + (size_t)i * bus_id_len;
			if (*a && !strncmp(a, b, bus_id_len)) {
				*first = i;
				*second = j;
				return 1;
			}
		}
	}
	return 0;
}

const struct ch_comm_algo *ch_comm_algo_find(const struct ch_comm_backend *be, const char *name)
{
	const struct ch_comm_algo *a;

	for (a = be->algos; a->name; a++)
		if (!strcmp(a->name, name))
			return a;
	return NULL;
}

const char *ch_comm_algo_label(const struct ch_comm_backend *be, const char *name)
{
	const struct ch_comm_algo *a = ch_comm_algo_find(be, name);
	return a ? a->label : NULL;
}

const char *ch_comm_algo_detail(const struct ch_comm_backend *be, const char *name)
{
	const struct ch_comm_algo *a = ch_comm_algo_find(be, name);
	return a ? a->detail : NULL;
}

/* Open MPI's ring: "Special case for count less than size - use recursive
 * doubling" (ompi_coll_base_allreduce_intra_ring), as small_count says. */
const char *ch_comm_algo_effective(const struct ch_comm_backend *be, const char *name,
				   size_t count, int nranks)
{
	const struct ch_comm_algo *a = ch_comm_algo_find(be, name);
	if (a && a->small_count && nranks > 1 && count < (size_t)nranks)
		return a->small_count;
	return NULL;
}

void ch_comm_run_delay(const struct ch_comm_run *r, int k)
{
	struct timespec ts;
	if (r->delay_us <= 0)
		return;
	if (r->mark)
		r->mark(r->mark_ctx, k, -1);
	ts.tv_sec = r->delay_us / 1000000;
	ts.tv_nsec = (r->delay_us % 1000000) * 1000;
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}
