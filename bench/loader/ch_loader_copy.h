/*
 * ch_loader_copy.h - how a feeder hands a batch to its device: a table of
 * function pointers per backend (hwloc's discovery components are the
 * model), chosen at run time with probe().
 *
 *  - "cuda":    copy the batch into pinned host memory, cudaMemcpyAsync to
 *               the device on a stream, record an event and wait for it
 *               (built only with HAVE_CUDA);
 *  - "staging": copy the batch into a host staging buffer (no GPU).
 *
 * This header is free of CUDA types; only bench/loader/cuda/ includes CUDA.
 */
#ifndef CH_LOADER_COPY_H
#define CH_LOADER_COPY_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A backend, in the shape of the compute backends' table (struct ch_backend,
 * kernels/ch_kernels.h): name, probe() with its reason, count(), open()
 * with its reason, close(), then the operations. Slots marked "May be
 * NULL" are optional and checked by callers; every other slot is always
 * set.
 */
struct ch_lc_copy_backend {
	const char *name; /* "cuda" or "staging" */

	/**
	 * probe - can this backend run here?
	 * @why: [out] the reason when not ("no CUDA device: ..."). @n: size.
	 * Returns 0, or CH_ERR_UNAVAILABLE.
	 */
	int (*probe)(char *why, size_t n);

	/** count - devices the backend can copy to (>= 1 after a good probe). */
	int (*count)(void);

	/**
	 * open - allocate the copy path for device @index (0-based, backend
	 * order; ignored by staging) for batches of @bytes.
	 * @ctx: [out] backend context, freed by close().
	 * @why: [out] the reason of a failure not printed already, or "" (a
	 *       failing CUDA call prints its own line, base/ch_cuda_check.h);
	 *       @n: size of @why.
	 * Returns 0, or CH_ERR_RUNTIME on an allocation or API failure.
	 */
	int (*open)(int index, size_t bytes, void **ctx, char *why, size_t n);

	/** close - free @ctx from open() (NULL accepted). */
	void (*close)(void *ctx);

	/**
	 * pci_bus_id - PCI bus id of device @dev ("0000:3b:00.0") into @buf.
	 * May be NULL (no PCI device). Returns 0 or CH_ERR_RUNTIME.
	 */
	int (*pci_bus_id)(int dev, char *buf, size_t n);

	/**
	 * copy - hand @bytes at @src to the device and wait until they are
	 * there. May be called from any thread, one thread per @ctx at a time.
	 * Returns 0 or CH_ERR_RUNTIME (message printed).
	 */
	int (*copy)(void *ctx, const void *src, size_t bytes);

	/**
	 * staged - the host copy the last copy() went through (pinned buffer
	 * or staging buffer), for the checksum. Borrowed, valid until close().
	 */
	const void *(*staged)(void *ctx);

	/**
	 * check - read back what reached the device and compare it with the
	 * staged host copy. May be NULL (staging: the staged copy is the
	 * destination). Returns 0, CH_ERR_CHECK on a mismatch, CH_ERR_RUNTIME.
	 */
	int (*check)(void *ctx, size_t bytes);
};

extern const struct ch_lc_copy_backend ch_lc_copy_staging;
#ifdef HAVE_CUDA
extern const struct ch_lc_copy_backend ch_lc_copy_cuda;
#endif

/**
 * ch_lc_copy_find - the backend named @name ("cuda" or "staging") from the
 * registry, or NULL when it is not built in.
 */
const struct ch_lc_copy_backend *ch_lc_copy_find(const char *name);

#ifdef __cplusplus
}
#endif
#endif
