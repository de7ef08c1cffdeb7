/*
 * ch_ckpt_mem.c - checkpoint_io's host buffer, fill pattern, CPU load unit
 * and GPU backend registry (see ch_ckpt_mem.h).
 */
#include "bench/checkpoint/ch_ckpt_mem.h"
#include "base/ch_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct ch_ckpt_gpu_backend *const registry[] = {
#ifdef HAVE_CUDA
	&ch_ckpt_gpu_cuda,
#endif
	NULL
};

const struct ch_ckpt_gpu_backend *ch_ckpt_gpu_find(char *why, size_t n)
{
	int i;

	if (why && n)
		snprintf(why, n, "built without CUDA");
	for (i = 0; registry[i]; i++)
		if (registry[i]->probe(why, n) == 0 && registry[i]->count() > 0)
			return registry[i];
	return NULL;
}

int ch_ckpt_buf_alloc(struct ch_ckpt_buf *b, size_t bytes, int local_rank,
		      const struct ch_ckpt_gpu_backend *gpu, size_t load_bytes, const char *why_not_pinned)
{
	long page = sysconf(_SC_PAGESIZE);
	void *p = NULL;
	size_t i;

	memset(b, 0, sizeof(*b));
	b->dev = -1;
	snprintf(b->why, sizeof(b->why), "%s", why_not_pinned ? why_not_pinned : "");
	if (gpu) {
		int dev = local_rank % gpu->count();
		char why[160] = "";
		if (gpu->open(dev, load_bytes, &b->gpu_ctx, why, sizeof(why)) == 0) {
			if (gpu->host_alloc(b->gpu_ctx, bytes, &p) != 0) {
				gpu->close(b->gpu_ctx);
				b->gpu_ctx = NULL;
				return CH_ERR_RUNTIME;
			}
			b->pinned = 1;
			b->dev = dev;
			b->gpu = gpu;
			b->why[0] = '\0';
			snprintf(b->kind, sizeof(b->kind), "%s_pinned", gpu->name);
		} else {
			b->gpu_ctx = NULL;
			snprintf(b->why, sizeof(b->why), "GPU %d could not be opened%s%s", dev, why[0] ? ": " : "", why);
		}
	}
	if (!p) {
		if (posix_memalign(&p, page > 0 ? (size_t)page : 4096, bytes ? bytes : 1) != 0) {
			ch_error("out of memory for a %zu-byte host buffer (the buffer holds one rank's shard: use more ranks or a smaller --size)",
				 bytes);
			return CH_ERR_RUNTIME;
		}
		snprintf(b->kind, sizeof(b->kind), "page_aligned");
	}
	b->p = p;
	b->bytes = bytes;
	for (i = 0; i < bytes; i += page > 0 ? (size_t)page : 4096)
		b->p[i] = 0;
	return 0;
}

void ch_ckpt_buf_release(struct ch_ckpt_buf *b)
{
	if (b->p && b->pinned && b->gpu)
		b->gpu->host_free(b->gpu_ctx, b->p);
	else
		free(b->p);
	b->p = NULL;
	if (b->gpu && b->gpu_ctx)
		b->gpu->close(b->gpu_ctx);
	b->gpu_ctx = NULL;
}

void ch_ckpt_fill(unsigned char *p, size_t n, uint64_t seed)
{
	uint64_t x = seed * 0x9E3779B97F4A7C15ull + 0x2545F4914F6CDD1Dull;
	size_t i = 0;

	if (!x)
		x = 1;
	while (i < n) {
		uint64_t v;
		size_t k;
		x ^= x >> 12;
		x ^= x << 25;
		x ^= x >> 27;
		v = x * 0x2545F4914F6CDD1Dull;
		for (k = 0; k < 8 && i < n; k++, i++)
			p[i] = (unsigned char)(v >> (8 * k));
	}
}

double ch_ckpt_cpu_unit(double x)
{
	int i;
	for (i = 0; i < (1 << 18); i++)
		x = x * 0.999999 + 1e-7;
	return x;
}
