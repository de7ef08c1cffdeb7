/*
 * ch_loader_copy.c - the backend registry and the "staging" backend (a
 * host buffer stands for the device when there is no GPU).
 */
#include "bench/loader/ch_loader_copy.h"
#include "base/ch_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct staging {
	unsigned char *buf;
	size_t bytes;
};

static int staging_probe(char *why, size_t n)
{
	if (why && n)
		why[0] = '\0';
	return 0;
}

static int staging_count(void) { return 1; }

static int staging_open(int index, size_t bytes, void **ctx, char *why, size_t n)
{
	struct staging *s = calloc(1, sizeof(*s));
	(void)index;
	if (s)
		s->buf = malloc(bytes ? bytes : 1);
	if (!s || !s->buf) {
		free(s);
		snprintf(why, n, "out of memory for a %zu-byte staging buffer", bytes);
		return CH_ERR_RUNTIME;
	}
	memset(s->buf, 0, bytes);
	s->bytes = bytes;
	*ctx = s;
	return 0;
}

static int staging_copy(void *ctx, const void *src, size_t bytes)
{
	struct staging *s = ctx;
	if (bytes > s->bytes)
		return CH_ERR_RUNTIME;
	memcpy(s->buf, src, bytes);
	return 0;
}

static const void *staging_staged(void *ctx) { return ((struct staging *)ctx)->buf; }

static void staging_close(void *ctx)
{
	struct staging *s = ctx;
	if (!s)
		return;
	free(s->buf);
	free(s);
}

const struct ch_lc_copy_backend ch_lc_copy_staging = {
	.name = "staging",
	.probe = staging_probe,
	.count = staging_count,
	.open = staging_open,
	.close = staging_close,
	.pci_bus_id = NULL,
	.copy = staging_copy,
	.staged = staging_staged,
	.check = NULL,
};

static const struct ch_lc_copy_backend *const registry[] = {
#ifdef HAVE_CUDA
	&ch_lc_copy_cuda,
#endif
	&ch_lc_copy_staging,
	NULL
};

const struct ch_lc_copy_backend *ch_lc_copy_find(const char *name)
{
	int i;
	for (i = 0; registry[i]; i++)
		if (!strcmp(registry[i]->name, name))
			return registry[i];
	return NULL;
}
