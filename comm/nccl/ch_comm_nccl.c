/*
 * ch_comm_nccl.c - the NCCL backend: ncclAllReduce on device buffers, timed
 * with CUDA events.
 *
 * Communicators are bootstrapped with an ncclUniqueId made by the group's
 * rank 0 and sent with MPI_Bcast over the group's MPI communicator; in the
 * single-process mode (allreduce_bw -g N) ncclCommInitAll makes one per
 * device of the process, and run_group() drives them from one thread with
 * grouped calls (ncclGroupStart/ncclGroupEnd).
 *
 * Each algorithm gets its own communicator, created with NCCL_ALGO set
 * (NCCL reads it when it tunes a new communicator): "ring" ->
 * NCCL_ALGO=Ring, "tree" -> Tree, which also excludes NVLS, NVLSTree,
 * CollNet and PAT, so ring and tree compare cleanly; "default" runs with
 * NCCL_ALGO unset (NCCL's own choice). NCCL has no per-communicator
 * setting for it, and setenv/unsetenv race with getenv in threads that
 * run (NCCL's proxy threads among them): glibc reallocates the environment
 * array when a variable is added. So the environment changes only in this
 * order: the variable is added (a reallocation) only while no communicator
 * of ours exists; while some exist it is only given another value (one
 * pointer stored in place) or removed (the array shifted in place, never
 * freed); the user's own value comes back when the last communicator is
 * destroyed. The driver creates every communicator of a phase before any
 * collective runs, named algorithms first and "default" last
 * (bench/allreduce/ch_ar_run.c). When no listed algorithm can use NVLS,
 * prepare() also sets NCCL_NVLS_ENABLE=0 (read once per process by NCCL)
 * unless the user set it, before the first communicator.
 *
 * Timing: two events per timed iteration (before and after the call) plus a
 * reference event at the end of the warm-up. Completion is polled
 * (cudaEventQuery) together with ncclCommGetAsyncError; a collective not
 * complete after timeout_sec aborts the communicator (ncclCommAbort) and
 * returns CH_COMM_ERR_TIMEOUT.
 */
#include <cuda_runtime.h>
#include <mpi.h>
#include <nccl.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "comm/ch_ar_pattern.h"
#include "comm/ch_comm.h"
#include "comm/nccl/ch_comm_nccl_kern.h"
#include "base/ch_common.h"
#include "base/ch_cuda_check.h"
#include "base/ch_stats.h"

/* This rank's state (open()): its GPU, the stream every fill, check and
 * all-reduce runs on, and the device buffers of the checks. */
struct ch_comm_ctx {
	int device;                   /* CUDA device ordinal */
	cudaStream_t stream;
	unsigned long long *wrong_dev; /* count_wrong()'s counter */
	void *table_dev;              /* fill_expected()'s period table */
	size_t table_cap;             /* its bytes */
};

struct ch_comm {
	ncclComm_t comm;
	int nranks;
	int rank;
	cudaEvent_t *ev; /* 2 per timed iteration + 1 reference, on x's device */
	int nev;
	struct ch_comm_ctx *x;
};

/* NCCL_ALGO as the user left it, and how many communicators exist (see
 * the top of the file). */
static struct {
	int saved;
	char *user;     /* NULL: unset */
	int live;
} algo_env;

static void algo_env_save(void)
{
	const char *v;
	if (algo_env.saved)
		return;
	v = getenv("NCCL_ALGO");
	algo_env.user = v ? strdup(v) : NULL;
	algo_env.saved = 1;
}

/* NCCL_ALGO for the next communicator: @setting, or unset when NULL. */
static void algo_env_set(const char *setting)
{
	algo_env_save();
	if (setting)
		setenv("NCCL_ALGO", setting, 1);
	else if (getenv("NCCL_ALGO"))
		unsetenv("NCCL_ALGO");
}

/* The user's value back, once no communicator of ours exists. */
static void algo_env_restore_if_idle(void)
{
	if (!algo_env.saved || algo_env.live > 0)
		return;
	if (algo_env.user)
		setenv("NCCL_ALGO", algo_env.user, 1);
	else if (getenv("NCCL_ALGO"))
		unsetenv("NCCL_ALGO");
}

static void where(char *buf, size_t n)
{
	char host[256] = "";
	int rank = -1, init = 0;
	MPI_Initialized(&init);
	if (init)
		MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	gethostname(host, sizeof(host) - 1);
	snprintf(buf, n, "host '%s' rank %d", host, rank);
}

/* where() for CH_CUDA_CHECK: host and rank, in a per-thread buffer. */
static const char *here(void)
{
	static __thread char w[300];
	where(w, sizeof(w));
	return w;
}

static int nccl_fail(ncclResult_t r, const char *call, const char *file, int line)
{
	char w[300];
	where(w, sizeof(w));
	ch_error("%s:%d: %s failed on %s: %s (%s)", file, line, call, w, ncclGetErrorString(r),
		 ncclGetLastError(NULL));
	return CH_ERR_RUNTIME;
}

/* CUDA runtime calls go through CH_CUDA_CHECK(call, here()) (base/ch_cuda_check.h); NCCL calls: */
#define NCCLCHECK(call)                                                      \
	do {                                                                 \
		ncclResult_t r_ = (call);                                    \
		if (r_ != ncclSuccess)                                       \
			return nccl_fail(r_, #call, __FILE__, __LINE__);     \
	} while (0)

static const struct ch_comm_algo nccl_algos[] = {
	{ .name = "ring", .label = "ring", .setting = "Ring",
	  .detail = "NCCL ring (NCCL_ALGO=Ring: NVLS, CollNet, PAT and tree excluded)" },
	{ .name = "tree", .label = "tree", .setting = "Tree",
	  .detail = "NCCL double binary tree (NCCL_ALGO=Tree: NVLS, CollNet, PAT and ring excluded)" },
	{ .name = "nvls", .label = "nvls", .setting = "NVLS", .nvls = 1,
	  .detail = "NCCL NVLink SHARP (NCCL_ALGO=NVLS)" },
	{ .name = "nvlstree", .label = "nvlstree", .setting = "NVLSTree", .nvls = 1,
	  .detail = "NCCL NVLink SHARP + tree (NCCL_ALGO=NVLSTree)" },
	{ .name = "collnetdirect", .label = "collnetdirect", .setting = "CollnetDirect",
	  .detail = "NCCL CollNet direct (NCCL_ALGO=CollnetDirect)" },
	{ .name = "collnetchain", .label = "collnetchain", .setting = "CollnetChain",
	  .detail = "NCCL CollNet chain (NCCL_ALGO=CollnetChain)" },
	{ .name = "pat", .label = "pat", .setting = "PAT",
	  .detail = "NCCL PAT (NCCL_ALGO=PAT)" },
	{ .name = "default", .label = "default", .setting = NULL, .nvls = 1,
	  .detail = "NCCL's own choice (NCCL_ALGO unset)" },
	{ .name = NULL },
};

static int nccl_prepare(const char *const *algos, int n)
{
	int i, nvls = 0;
	for (i = 0; i < n; i++) {
		const struct ch_comm_algo *a = ch_comm_algo_find(&ch_comm_nccl, algos[i]);
		if (a && a->nvls)
			nvls = 1;
	}
	algo_env_save();
	if (!nvls && !getenv("NCCL_NVLS_ENABLE"))
		setenv("NCCL_NVLS_ENABLE", "0", 1);
	return 0;
}

static int nccl_probe(char *why, size_t n)
{
	int count = 0;
	cudaError_t e = cudaGetDeviceCount(&count);
	if (e != cudaSuccess || count < 1) {
		ch_cuda_no_device(e, count, why, n);
		cudaGetLastError();
		return CH_ERR_UNAVAILABLE;
	}
	return 0;
}

static int nccl_devices(void)
{
	int count = 0;
	if (cudaGetDeviceCount(&count) != cudaSuccess) {
		cudaGetLastError();
		return 0;
	}
	return count;
}

static void nccl_close(struct ch_comm_ctx *x)
{
	if (!x)
		return;
	cudaSetDevice(x->device);
	if (x->table_dev)
		cudaFree(x->table_dev);
	if (x->wrong_dev)
		cudaFree(x->wrong_dev);
	if (x->stream)
		cudaStreamDestroy(x->stream);
	free(x);
}

static int nccl_open(int local_rank, int local_size, struct ch_comm_device *dev,
		     struct ch_comm_ctx **out, char *why, size_t n)
{
	struct cudaDeviceProp prop;
	size_t free_b = 0, total_b = 0;
	int visible = 0;
	struct ch_comm_ctx *x;
	cudaError_t e;

	(void)local_size;
	*out = NULL;
	memset(dev, 0, sizeof(*dev));
	dev->gpu_index = -1;
	e = cudaGetDeviceCount(&visible);
	if (e != cudaSuccess || visible < 1) {
		ch_cuda_no_device(e, visible, why, n);
		return CH_ERR_UNAVAILABLE;
	}
	if (!(x = calloc(1, sizeof(*x)))) {
		snprintf(why, n, "out of memory");
		return CH_ERR_RUNTIME;
	}
	x->device = ch_comm_pick_device(local_rank, visible);
	if ((e = cudaSetDevice(x->device)) != cudaSuccess ||
	    (e = cudaDeviceGetPCIBusId(dev->pci_bus_id, (int)sizeof(dev->pci_bus_id), x->device)) != cudaSuccess ||
	    (e = cudaGetDeviceProperties(&prop, x->device)) != cudaSuccess ||
	    (e = cudaStreamCreateWithFlags(&x->stream, cudaStreamNonBlocking)) != cudaSuccess ||
	    (e = cudaMalloc((void **)&x->wrong_dev, sizeof(*x->wrong_dev))) != cudaSuccess ||
	    (e = cudaMemGetInfo(&free_b, &total_b)) != cudaSuccess) {
		snprintf(why, n, "cannot set up CUDA device %d: %s", x->device, cudaGetErrorString(e));
		nccl_close(x);
		return CH_ERR_RUNTIME;
	}
	/* cudaDeviceGetPCIBusId gives upper-case hex; hwloc and nvidia-smi lower */
	for (char *c = dev->pci_bus_id; *c; c++)
		if (*c >= 'A' && *c <= 'F')
			*c = (char)(*c - 'A' + 'a');
	dev->gpu_index = x->device;
	snprintf(dev->name, sizeof(dev->name), "%.127s", prop.name);
	dev->free_bytes = free_b;
	*out = x;
	return 0;
}

static void nccl_version(char *buf, size_t n)
{
	int v = 0;
	if (ncclGetVersion(&v) != ncclSuccess) {
		snprintf(buf, n, "unknown");
		return;
	}
	/* NCCL_VERSION(X,Y,Z) = X*10000 + Y*100 + Z since 2.9 */
	snprintf(buf, n, "%d.%d.%d", v / 10000, (v / 100) % 100, v % 100);
}

static int nccl_supports(int dtype, int op)
{
	return ch_dtype_comm_name(dtype) && op >= 0 && op < CH_COMM_REDOP_COUNT;
}

static ncclDataType_t nccl_type(int dtype)
{
	switch (dtype) {
	case CH_FP32: return ncclFloat;
	case CH_FP64: return ncclDouble;
	case CH_FP16: return ncclHalf;
	case CH_BF16: return ncclBfloat16;
	case CH_INT32: return ncclInt32;
	default: return ncclInt8;
	}
}

static ncclRedOp_t nccl_op(int op)
{
	switch (op) {
	case CH_COMM_REDOP_MIN: return ncclMin;
	case CH_COMM_REDOP_MAX: return ncclMax;
	default: return ncclSum;
	}
}

static int nccl_comm_create(struct ch_comm_ctx *x, int fcomm, const char *algo,
			    struct ch_comm **out, char *why, size_t n)
{
	MPI_Comm mc = MPI_Comm_f2c(fcomm);
	struct { ncclUniqueId id; int ok; } boot;
	ncclUniqueId id;
	struct ch_comm *c;
	ncclResult_t r;
	const struct ch_comm_algo *a = ch_comm_algo_find(&ch_comm_nccl, algo);

	*out = NULL;
	if (!a) {
		snprintf(why, n, "unknown algorithm '%s' for the nccl backend", algo);
		return CH_ERR_USAGE;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return CH_ERR_RUNTIME;
	c->x = x;
	MPI_Comm_rank(mc, &c->rank);
	MPI_Comm_size(mc, &c->nranks);
	/* rank 0 sends the id and whether it got one, so no rank waits for a
	 * communicator that will never form */
	memset(&boot, 0, sizeof(boot));
	if (c->rank == 0) {
		r = ncclGetUniqueId(&boot.id);
		boot.ok = r == ncclSuccess;
		if (!boot.ok)
			snprintf(why, n, "ncclGetUniqueId: %s", ncclGetErrorString(r));
	}
	if (MPI_Bcast(&boot, (int)sizeof(boot), MPI_BYTE, 0, mc) != MPI_SUCCESS) {
		free(c);
		snprintf(why, n, "MPI_Bcast of the ncclUniqueId failed");
		return CH_ERR_RUNTIME;
	}
	if (!boot.ok) {
		if (c->rank != 0)
			snprintf(why, n, "rank 0 of the group could not create an ncclUniqueId");
		free(c);
		return CH_ERR_RUNTIME;
	}
	id = boot.id;
	algo_env_set(a->setting);
	r = ncclCommInitRank(&c->comm, c->nranks, id, c->rank);
	if (r != ncclSuccess) {
		snprintf(why, n, "ncclCommInitRank (%s): %s (%s)", algo, ncclGetErrorString(r),
			 ncclGetLastError(NULL));
		free(c);
		algo_env_restore_if_idle();
		return r == ncclInvalidUsage || r == ncclInvalidArgument ? CH_ERR_UNAVAILABLE : CH_ERR_RUNTIME;
	}
	algo_env.live++;
	*out = c;
	return 0;
}

static int nccl_comm_create_group(struct ch_comm_ctx *const *x, int n, const char *algo, struct ch_comm **out,
				  char *why, size_t nwhy)
{
	const struct ch_comm_algo *a = ch_comm_algo_find(&ch_comm_nccl, algo);
	ncclComm_t *comms;
	int *devs, i;
	ncclResult_t r;

	for (i = 0; i < n; i++)
		out[i] = NULL;
	if (!a) {
		snprintf(why, nwhy, "unknown algorithm '%s' for the nccl backend", algo);
		return CH_ERR_USAGE;
	}
	comms = calloc((size_t)n, sizeof(*comms));
	devs = calloc((size_t)n, sizeof(*devs));
	if (!comms || !devs) {
		free(comms);
		free(devs);
		return CH_ERR_RUNTIME;
	}
	for (i = 0; i < n; i++)
		devs[i] = x[i]->device;
	algo_env_set(a->setting);
	r = ncclCommInitAll(comms, n, devs);
	free(devs);
	if (r != ncclSuccess) {
		snprintf(why, nwhy, "ncclCommInitAll (%d GPUs, %s): %s (%s)", n, algo, ncclGetErrorString(r),
			 ncclGetLastError(NULL));
		free(comms);
		algo_env_restore_if_idle();
		return r == ncclInvalidUsage || r == ncclInvalidArgument ? CH_ERR_UNAVAILABLE : CH_ERR_RUNTIME;
	}
	for (i = 0; i < n; i++) {
		if (!(out[i] = calloc(1, sizeof(*out[i])))) {
			int j;
			for (j = 0; j < n; j++) {
				ncclCommDestroy(comms[j]);
				free(out[j]);
				out[j] = NULL;
			}
			free(comms);
			algo_env_restore_if_idle();
			return CH_ERR_RUNTIME;
		}
		out[i]->comm = comms[i];
		out[i]->nranks = n;
		out[i]->rank = i;
		out[i]->x = x[i];
	}
	algo_env.live += n;
	free(comms);
	return 0;
}

static void nccl_comm_destroy(struct ch_comm *c)
{
	int i;
	if (!c)
		return;
	cudaSetDevice(c->x->device);
	for (i = 0; i < c->nev; i++)
		cudaEventDestroy(c->ev[i]);
	free(c->ev);
	if (c->comm)
		ncclCommDestroy(c->comm);
	free(c);
	algo_env.live--;
	algo_env_restore_if_idle();
}

static int nccl_alloc(struct ch_comm_ctx *x, size_t bytes, void **out)
{
	cudaError_t e = cudaSetDevice(x->device);
	if (e == cudaSuccess)
		e = cudaMalloc(out, bytes ? bytes : 1);
	if (e != cudaSuccess) {
		ch_error("cannot allocate %zu bytes of device memory on GPU %d: %s", bytes, x->device,
			 cudaGetErrorString(e));
		return CH_ERR_RUNTIME;
	}
	return 0;
}

static void nccl_free(struct ch_comm_ctx *x, void *p)
{
	if (p && x)
		cudaSetDevice(x->device);
	if (p)
		cudaFree(p);
}

static int nccl_fill_input(struct ch_comm_ctx *x, void *buf, const struct ch_ar_pattern *p,
			   size_t count, int rank, uint64_t seed)
{
	int e;
	/* every buffer operation on its context's device: one process may
	 * drive several (-g N) */
	CH_CUDA_CHECK(cudaSetDevice(x->device), here());
	e = ch_nccl_fill_input(buf, *p, count, rank, seed, x->stream);
	if (e)
		return ch_cuda_error((cudaError_t)e, "ch_nccl_fill_input", __FILE__, __LINE__, here());
	return 0;
}

static int nccl_fill_expected(struct ch_comm_ctx *x, void *buf, const struct ch_ar_pattern *p,
			      size_t count, uint64_t seed)
{
	size_t bytes = (size_t)p->period * ch_dtype_size(p->dtype);
	void *table;
	int rc = ch_ar_expected_table(p, &table), e;

	if (rc)
		return rc;
	if ((e = (int)cudaSetDevice(x->device)) != 0) {
		free(table);
		return ch_cuda_error((cudaError_t)e, "cudaSetDevice", __FILE__, __LINE__, here());
	}
	if (bytes > x->table_cap) {
		if (x->table_dev)
			cudaFree(x->table_dev);
		x->table_dev = NULL;
		x->table_cap = 0;
		if ((e = (int)cudaMalloc(&x->table_dev, bytes)) != 0) {
			free(table);
			return ch_cuda_error((cudaError_t)e, "cudaMalloc", __FILE__, __LINE__, here());
		}
		x->table_cap = bytes;
	}
	/* copy and fill on the backend's stream, synchronised before the host
	 * table is freed (ch_comm_nccl_kern.h) */
	e = ch_nccl_fill_tiled(buf, x->table_dev, table, *p, count, seed, x->stream);
	free(table);
	if (e)
		return ch_cuda_error((cudaError_t)e, "ch_nccl_fill_tiled", __FILE__, __LINE__, here());
	return 0;
}

static int nccl_poison(struct ch_comm_ctx *x, void *buf, size_t bytes)
{
	CH_CUDA_CHECK(cudaSetDevice(x->device), here());
	CH_CUDA_CHECK(cudaMemsetAsync(buf, 0xff, bytes, x->stream), here());
	CH_CUDA_CHECK(cudaStreamSynchronize(x->stream), here());
	return 0;
}

static int nccl_count_wrong(struct ch_comm_ctx *x, const void *buf, const void *expected,
			    size_t count, int dtype, uint64_t *wrong)
{
	unsigned long long w = 0;
	int e;
	CH_CUDA_CHECK(cudaSetDevice(x->device), here());
	e = ch_nccl_count_wrong(buf, expected, count, ch_dtype_size(dtype), x->wrong_dev, &w, x->stream);
	if (e)
		return ch_cuda_error((cudaError_t)e, "ch_nccl_count_wrong", __FILE__, __LINE__, here());
	*wrong = w;
	return 0;
}

static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static int ensure_events(struct ch_comm *c, int need)
{
	cudaEvent_t *ev;
	if (need <= c->nev)
		return 0;
	ev = realloc(c->ev, (size_t)need * sizeof(*ev));
	if (!ev)
		return CH_ERR_RUNTIME;
	c->ev = ev;
	CH_CUDA_CHECK(cudaSetDevice(c->x->device), here());
	while (c->nev < need) {
		CH_CUDA_CHECK(cudaEventCreate(&c->ev[c->nev]), here());
		c->nev++;
	}
	return 0;
}

/* Wait for @ev with a deadline, watching for asynchronous NCCL errors. */
static int wait_event(struct ch_comm *c, cudaEvent_t ev, double timeout_sec)
{
	double t0 = ch_now_sec();
	for (;;) {
		ncclResult_t async = ncclSuccess;
		cudaError_t e = cudaEventQuery(ev);
		if (e == cudaSuccess)
			return 0;
		if (e != cudaErrorNotReady)
			return ch_cuda_error(e, "cudaEventQuery", __FILE__, __LINE__, here());
		NCCLCHECK(ncclCommGetAsyncError(c->comm, &async));
		if (async != ncclSuccess) {
			ncclCommAbort(c->comm);
			c->comm = NULL;
			return nccl_fail(async, "ncclAllReduce (asynchronous error)", __FILE__, __LINE__);
		}
		if (timeout_sec > 0 && ch_now_sec() - t0 > timeout_sec) {
			ncclCommAbort(c->comm);
			c->comm = NULL;
			return CH_COMM_ERR_TIMEOUT;
		}
		sleep_us(20);
	}
}

static int nccl_run(struct ch_comm *c, struct ch_comm_run *r)
{
	ncclDataType_t dt = nccl_type(r->dtype);
	ncclRedOp_t op = nccl_op(r->op);
	const void *send = r->send ? r->send : r->recv;
	cudaStream_t stream = c->x->stream;
	cudaEvent_t ref;
	int k, rc;
	float ms;

	if (!c->comm) {
		ch_error("the NCCL communicator was aborted earlier");
		return CH_ERR_RUNTIME;
	}
	if (r->iters < 1 || r->warmup < 0)
		return CH_ERR_USAGE;
	if ((rc = ensure_events(c, 2 * r->iters + 1)) != 0)
		return rc;
	ref = c->ev[2 * r->iters];
	if (r->warmup == 0)
		CH_CUDA_CHECK(cudaEventRecord(ref, stream), here());
	if (!r->per_call && r->mark)
		r->mark(r->mark_ctx, -r->warmup, 1);
	for (k = -r->warmup; k < r->iters; k++) {
		if (k == 0 && r->warmup > 0)
			CH_CUDA_CHECK(cudaEventRecord(ref, stream), here()); /* end of the warm-up */
		ch_comm_run_delay(r, k);
		if (!r->per_call) {
			/* the loop as a whole: two events around the timed calls */
			if (r->delay_us > 0 && r->mark)
				r->mark(r->mark_ctx, k, 1);
			else if (r->progress)
				__atomic_store_n(r->progress, k, __ATOMIC_RELAXED);
			NCCLCHECK(ncclAllReduce(send, r->recv, r->count, dt, op, c->comm, stream));
			continue;
		}
		if (r->mark)
			r->mark(r->mark_ctx, k, 1);
		if (k >= 0)
			CH_CUDA_CHECK(cudaEventRecord(c->ev[2 * k], stream), here());
		NCCLCHECK(ncclAllReduce(send, r->recv, r->count, dt, op, c->comm, stream));
		if (k >= 0)
			CH_CUDA_CHECK(cudaEventRecord(c->ev[2 * k + 1], stream), here());
		if (r->mark)
			r->mark(r->mark_ctx, k, 0);
	}
	if (!r->per_call)
		CH_CUDA_CHECK(cudaEventRecord(c->ev[2 * r->iters - 1], stream), here());
	if (r->mark)
		r->mark(r->mark_ctx, r->iters - 1, 1);
	rc = wait_event(c, c->ev[2 * r->iters - 1], r->timeout_sec);
	if (r->mark)
		r->mark(r->mark_ctx, r->iters - 1, 0);
	if (rc == CH_COMM_ERR_TIMEOUT && !r->per_call) {
		r->failed_iter = 0; /* somewhere in the loop: no event per call */
		cudaGetLastError();
		return rc;
	}
	if (rc == CH_COMM_ERR_TIMEOUT) {
		/* the first timed iteration whose end event is not complete */
		r->failed_iter = r->iters - 1;
		for (k = 0; k < r->iters; k++)
			if (cudaEventQuery(c->ev[2 * k + 1]) != cudaSuccess) {
				r->failed_iter = k;
				break;
			}
		cudaGetLastError();
		return rc;
	}
	if (rc)
		return rc;
	if (!r->per_call) {
		CH_CUDA_CHECK(cudaEventElapsedTime(&ms, ref, c->ev[2 * r->iters - 1]), here());
		r->loop_sec = ms * 1e-3;
		return 0;
	}
	for (k = 0; k < r->iters; k++) {
		CH_CUDA_CHECK(cudaEventElapsedTime(&ms, c->ev[2 * k], c->ev[2 * k + 1]), here());
		r->call_sec[k] = ms * 1e-3;
		CH_CUDA_CHECK(cudaEventElapsedTime(&ms, k ? c->ev[2 * k - 1] : ref, c->ev[2 * k + 1]), here());
		r->iter_sec[k] = ms * 1e-3;
	}
	return 0;
}

/* ------------------------------------------------ one process, several GPUs */

static void abort_all(struct ch_comm *const *c, int n)
{
	int i;
	for (i = 0; i < n; i++)
		if (c[i]->comm) {
			ncclCommAbort(c[i]->comm);
			c[i]->comm = NULL;
		}
}

/* Wait for event @idx of every communicator, each on its device, watching
 * for asynchronous NCCL errors; a deadline passed or an error aborts them all. */
static int wait_events(struct ch_comm *const *c, int n, int idx, double timeout_sec)
{
	double t0 = ch_now_sec();
	char *done = calloc((size_t)n, 1);
	int left = n, i;

	if (!done)
		return CH_ERR_RUNTIME;
	while (left > 0) {
		for (i = 0; i < n; i++) {
			ncclResult_t async = ncclSuccess;
			cudaError_t e;
			if (done[i])
				continue;
			cudaSetDevice(c[i]->x->device);
			e = cudaEventQuery(c[i]->ev[idx]);
			if (e == cudaSuccess) {
				done[i] = 1;
				left--;
				continue;
			}
			if (e != cudaErrorNotReady) {
				free(done);
				return ch_cuda_error(e, "cudaEventQuery", __FILE__, __LINE__, here());
			}
			if (ncclCommGetAsyncError(c[i]->comm, &async) != ncclSuccess || async != ncclSuccess) {
				free(done);
				abort_all(c, n);
				return nccl_fail(async, "ncclAllReduce (asynchronous error)", __FILE__, __LINE__);
			}
		}
		if (left > 0 && timeout_sec > 0 && ch_now_sec() - t0 > timeout_sec) {
			free(done);
			abort_all(c, n);
			return CH_COMM_ERR_TIMEOUT;
		}
		if (left > 0)
			sleep_us(20);
	}
	free(done);
	return 0;
}

/* Record event @idx of every communicator on its device's stream. */
static int record_all(struct ch_comm *const *c, int n, int idx)
{
	int i;
	for (i = 0; i < n; i++) {
		CH_CUDA_CHECK(cudaSetDevice(c[i]->x->device), here());
		CH_CUDA_CHECK(cudaEventRecord(c[i]->ev[idx], c[i]->x->stream), here());
	}
	return 0;
}

static int nccl_run_group(struct ch_comm *const *c, int n, struct ch_comm_run *r)
{
	const struct ch_comm_run *r0 = &r[0];
	ncclDataType_t dt = nccl_type(r0->dtype);
	ncclRedOp_t op = nccl_op(r0->op);
	int k, i, rc, iters = r0->iters, warmup = r0->warmup, ref = 2 * r0->iters;
	float ms;

	for (i = 0; i < n; i++)
		if (!c[i]->comm) {
			ch_error("an NCCL communicator was aborted earlier");
			return CH_ERR_RUNTIME;
		}
	if (n < 1 || iters < 1 || warmup < 0)
		return CH_ERR_USAGE;
	for (i = 0; i < n; i++)
		if ((rc = ensure_events(c[i], 2 * iters + 1)) != 0)
			return rc;
	if (warmup == 0 && (rc = record_all(c, n, ref)) != 0)
		return rc;
	if (!r0->per_call && r0->mark)
		r0->mark(r0->mark_ctx, -warmup, 1);
	for (k = -warmup; k < iters; k++) {
		if (k == 0 && warmup > 0 && (rc = record_all(c, n, ref)) != 0) /* end of the warm-up */
			return rc;
		ch_comm_run_delay(r0, k);
		if (!r0->per_call) {
			if (r0->delay_us > 0 && r0->mark)
				r0->mark(r0->mark_ctx, k, 1);
			else if (r0->progress)
				__atomic_store_n(r0->progress, k, __ATOMIC_RELAXED);
		} else {
			if (r0->mark)
				r0->mark(r0->mark_ctx, k, 1);
			if (k >= 0 && (rc = record_all(c, n, 2 * k)) != 0)
				return rc;
		}
		NCCLCHECK(ncclGroupStart());
		for (i = 0; i < n; i++) {
			const void *send = r[i].send ? r[i].send : r[i].recv;
			ncclResult_t e = ncclAllReduce(send, r[i].recv, r[i].count, dt, op, c[i]->comm, c[i]->x->stream);
			if (e != ncclSuccess) {
				ncclGroupEnd();
				return nccl_fail(e, "ncclAllReduce", __FILE__, __LINE__);
			}
		}
		NCCLCHECK(ncclGroupEnd());
		if (r0->per_call) {
			if (k >= 0 && (rc = record_all(c, n, 2 * k + 1)) != 0)
				return rc;
			if (r0->mark)
				r0->mark(r0->mark_ctx, k, 0);
		}
	}
	if (!r0->per_call && (rc = record_all(c, n, 2 * iters - 1)) != 0)
		return rc;
	if (r0->mark)
		r0->mark(r0->mark_ctx, iters - 1, 1);
	rc = wait_events(c, n, 2 * iters - 1, r0->timeout_sec);
	if (r0->mark)
		r0->mark(r0->mark_ctx, iters - 1, 0);
	if (rc == CH_COMM_ERR_TIMEOUT) {
		/* the first timed iteration some device did not finish */
		r[0].failed_iter = 0;
		if (r0->per_call) {
			r[0].failed_iter = iters - 1;
			for (k = 0; k < iters && r[0].failed_iter == iters - 1; k++)
				for (i = 0; i < n; i++) {
					cudaSetDevice(c[i]->x->device);
					if (cudaEventQuery(c[i]->ev[2 * k + 1]) != cudaSuccess) {
						r[0].failed_iter = k;
						break;
					}
				}
		}
		cudaGetLastError();
		return rc;
	}
	if (rc)
		return rc;
	for (i = 0; i < n; i++) {
		CH_CUDA_CHECK(cudaSetDevice(c[i]->x->device), here());
		if (!r0->per_call) {
			CH_CUDA_CHECK(cudaEventElapsedTime(&ms, c[i]->ev[ref], c[i]->ev[2 * iters - 1]), here());
			r[i].loop_sec = ms * 1e-3;
			continue;
		}
		for (k = 0; k < iters; k++) {
			CH_CUDA_CHECK(cudaEventElapsedTime(&ms, c[i]->ev[2 * k], c[i]->ev[2 * k + 1]), here());
			r[i].call_sec[k] = ms * 1e-3;
			CH_CUDA_CHECK(cudaEventElapsedTime(&ms, k ? c[i]->ev[2 * k - 1] : c[i]->ev[ref],
							   c[i]->ev[2 * k + 1]), here());
			r[i].iter_sec[k] = ms * 1e-3;
		}
	}
	return 0;
}

const struct ch_comm_backend ch_comm_nccl = {
	.name = "nccl",
	.memory = "device memory",
	.self_timeout = 1,
	.max_count = 0,
	/* NCCL allocates its buffers per communicator (more with NVLS): keep
	 * 1 GiB per communicator free beyond nccl-tests' 1 GiB */
	.comm_reserve_bytes = 1ULL << 30,
	.algos = nccl_algos,
	.probe = nccl_probe,
	.open = nccl_open,
	.close = nccl_close,
	.version = nccl_version,
	.supports = nccl_supports,
	.prepare = nccl_prepare,
	.comm_create = nccl_comm_create,
	.comm_destroy = nccl_comm_destroy,
	.alloc = nccl_alloc,
	.free = nccl_free,
	.fill_input = nccl_fill_input,
	.fill_expected = nccl_fill_expected,
	.poison = nccl_poison,
	.count_wrong = nccl_count_wrong,
	.run = nccl_run,
	.devices = nccl_devices,
	.comm_create_group = nccl_comm_create_group,
	.run_group = nccl_run_group,
};
