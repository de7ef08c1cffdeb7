/*
 * ch_comm_find.c - the registry of collective backends (ch_comm_find()).
 *
 * In a file of its own so that a binary that uses only the helpers of
 * ch_comm.c (roofline's ch_comm_pick_device()) does not pull in the
 * backends, and with them libnccl.so and libmpi's collectives: with the
 * linker's --as-needed such a binary then starts on a node without NCCL.
 */
#include "comm/ch_comm.h"

#include <string.h>

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

