/*
 * ch_kernels_find.c - the registry of compute backends (ch_backend_find()),
 * and the cuda backend's stand-in in a build without CUDA.
 *
 * In a file of its own, as comm/ch_comm_find.c, so that the kernel table
 * (ch_kernels.c), which the backends use, does not use them in turn.
 */
#include "kernels/ch_kernels.h"
#include "base/ch_common.h"

#include <stdio.h>
#include <string.h>

#ifndef HAVE_CUDA
/* Without CUDA the cuda backend exists only to say so. */
static int nocuda_probe(char *why, size_t n)
{
	snprintf(why, n, "CUDA backend not built in (no CUDA toolkit found at build time, or WITH_CUDA=no)");
	return CH_ERR_UNAVAILABLE;
}

static int nocuda_count(void) { return 0; }

static int nocuda_open(int index, struct ch_dev **out, char *why, size_t n)
{
	(void)index;
	*out = NULL;
	return nocuda_probe(why, n);
}

const struct ch_backend ch_backend_cuda = {
	.name = "cuda",
	.probe = nocuda_probe,
	.count = nocuda_count,
	.open = nocuda_open,
};
#endif

const struct ch_backend *ch_backend_find(const char *name)
{
	static const struct ch_backend *const all[] = { &ch_backend_cpu, &ch_backend_cuda };
	size_t i;
	for (i = 0; name && i < sizeof(all) / sizeof(all[0]); i++)
		if (!strcmp(all[i]->name, name))
			return all[i];
	return NULL;
}
