#include "comm/ch_comm.h"

#include <string.h>

const char *const ch_comm_dtype_names[CH_COMM_DTYPE_COUNT + 1] = {
	[CH_COMM_DTYPE_FLOAT] = "float",
	[CH_COMM_DTYPE_DOUBLE] = "double",
	[CH_COMM_DTYPE_HALF] = "half",
	[CH_COMM_DTYPE_BFLOAT16] = "bfloat16",
	[CH_COMM_DTYPE_INT32] = "int32",
	[CH_COMM_DTYPE_INT8] = "int8",
	[CH_COMM_DTYPE_COUNT] = NULL,
};

const char *const ch_comm_redop_names[CH_COMM_REDOP_COUNT + 1] = {
	[CH_COMM_REDOP_SUM] = "sum",
	[CH_COMM_REDOP_MIN] = "min",
	[CH_COMM_REDOP_MAX] = "max",
	[CH_COMM_REDOP_COUNT] = NULL,
};

size_t ch_comm_dtype_size(enum ch_comm_dtype t)
{
	switch (t) {
	case CH_COMM_DTYPE_DOUBLE: return 8;
	case CH_COMM_DTYPE_FLOAT:
	case CH_COMM_DTYPE_INT32: return 4;
	case CH_COMM_DTYPE_HALF:
	case CH_COMM_DTYPE_BFLOAT16: return 2;
	case CH_COMM_DTYPE_INT8: return 1;
	default: return 0;
	}
}

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

const char *const ch_comm_backend_names[] = { "auto", "mpi", "nccl", NULL };

/* The registry: static, with the optional backends under #ifdef. */
static const struct ch_comm_backend *const backends[] = {
	&ch_comm_mpi,
#ifdef HAVE_NCCL
	&ch_comm_nccl,
#endif
	NULL
};

const struct ch_comm_backend *ch_comm_find(const char *name)
{
	int i;

	for (i = 0; backends[i]; i++)
		if (!strcmp(backends[i]->name, name))
			return backends[i];
	return NULL;
}
