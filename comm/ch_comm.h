/*
 * ch_comm.h - collective backends behind a table of function pointers.
 *
 * A backend (comm/mpi: Open MPI, comm/nccl: NCCL) is a const struct
 * ch_comm_backend filled with designated initializers. The registry
 * (ch_comm_find()) holds the backends built into this binary; NCCL is listed
 * only when built with HAVE_NCCL. probe() says at run time whether the
 * backend can run on this rank (NCCL needs a GPU).
 *
 * Both backends run under an MPI launcher: MPI is the bootstrap (rank, size,
 * groups) for NCCL too. A backend with comm_create_group() and run_group()
 * (NCCL) also runs several ranks in one process, one per device, driven by
 * one thread (allreduce_bw -g N). This header stays free of MPI, CUDA and NCCL
 * headers: communicators cross it as Fortran handles (MPI_Comm_c2f()), and
 * buffers as plain pointers (host or device memory, as the backend says).
 *
 * Functions return 0 or a negative ch_status (ch_common.h);
 * CH_COMM_ERR_TIMEOUT is returned by backends that time out themselves.
 */
#ifndef CH_COMM_H
#define CH_COMM_H

#include <stddef.h>
#include <stdint.h>

#include "base/ch_dtype.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Returned by run() of a backend with self_timeout set, when a collective did
 * not complete within ch_comm_run.timeout_sec. Maps to exit code 4. */
#define CH_COMM_ERR_TIMEOUT (-16)

/*
 * Element types: enum ch_dtype (base/ch_dtype.h), named as nccl-tests names
 * them (-d, ch_dtype_comm_name()): float, double, half, bfloat16, int32, int8.
 */

/**
 * ch_comm_dtype_parse - the element type named @s as nccl-tests names it.
 * @opt: [in] the option, for the message ("-d").
 * Returns an enum ch_dtype, or a negative value after printing a usage
 * error that lists the names, in nccl-tests' order, when @s is none of them.
 */
int ch_comm_dtype_parse(const char *opt, const char *s);

/* Reduction operations (-o). */
enum ch_comm_redop { CH_COMM_REDOP_SUM, CH_COMM_REDOP_MIN, CH_COMM_REDOP_MAX, CH_COMM_REDOP_COUNT };

/* NULL-terminated names of enum ch_comm_redop, in enum order. */
extern const char *const ch_comm_redop_names[CH_COMM_REDOP_COUNT + 1];

/**
 * ch_comm_busbw_factor - all-reduce bus bandwidth factor for @nranks ranks.
 * Returns 2(n-1)/n, computed as 2.0 * (n - 1) / n; 0 for n <= 1.
 * Source: nccl-tests doc/PERFORMANCE.md ("AllReduce: busBw = algBw *
 * 2(n-1)/n"): a ring all-reduce sends and receives 2(n-1)/n x S bytes per
 * rank, so busbw is comparable with the link rate whatever n is.
 */
double ch_comm_busbw_factor(int nranks);

/**
 * ch_comm_algbw_gbps - algorithm bandwidth S / t in GB/s (1 GB = 1e9 B).
 * @bytes: [in] message size per rank, bytes.  @sec: [in] time, seconds.
 * Returns bytes / sec / 1e9, or 0 when @sec <= 0.
 * Source: nccl-tests doc/PERFORMANCE.md.
 */
double ch_comm_algbw_gbps(uint64_t bytes, double sec);

/**
 * ch_comm_pick_device - the CUDA device ordinal a rank uses.
 * @local_rank: [in] rank among the ranks of its node (MPI_COMM_TYPE_SHARED).
 * @visible:    [in] devices this rank sees (cudaGetDeviceCount(), which
 *              honours CUDA_VISIBLE_DEVICES), >= 1.
 * Returns local_rank % visible: local rank i takes device i when every rank
 * sees every GPU, and device 0 under a one-GPU-per-rank mask. Whether two
 * local ranks ended up on the same physical GPU is checked afterwards with
 * ch_comm_find_duplicate() on PCI bus ids. Returns -1 when @visible < 1.
 */
int ch_comm_pick_device(int local_rank, int visible);

/**
 * ch_comm_find_duplicate - find two local ranks that chose the same GPU.
 * @bus_ids: [in] n strings of bus_id_len bytes each (one per local rank, in
 *           local rank order; "" entries are ignored).
 * @n:       [in] number of local ranks.
 * @first:   [out] the lower local rank of the first duplicate, or -1.
 * @second:  [out] the higher local rank of that duplicate, or -1.
 * Returns 1 when a duplicate exists, 0 otherwise.
 */
int ch_comm_find_duplicate(const char *bus_ids, size_t bus_id_len, int n,
			   int *first, int *second);

/* What open() found for this rank. */
struct ch_comm_device {
	int gpu_index;          /* CUDA device ordinal (among visible devices), -1: host memory */
	char pci_bus_id[20];    /* "0000:3b:00.0"; "" for host memory */
	char name[128];         /* GPU name, or "host memory" */
	uint64_t free_bytes;    /* memory this rank may use for buffers (device or host share) */
};

struct ch_ar_pattern; /* ch_ar_pattern.h: deterministic inputs */
struct ch_comm;       /* one communicator of a backend: one group, one algorithm */
struct ch_comm_ctx;   /* a backend's state for this rank, from open() */

/* One timed loop (run()). */
struct ch_comm_run {
	const void *send;   /* [in] send buffer; NULL for in-place (recv is both) */
	void *recv;         /* [in] receive buffer, count elements */
	size_t count;       /* [in] elements per rank */
	int dtype;          /* [in] enum ch_dtype */
	int op;             /* [in] enum ch_comm_redop */
	int warmup;         /* [in] untimed calls first (>= 0) */
	int iters;          /* [in] timed calls (>= 1) */
	long delay_us;      /* [in] sleep this long before every call (--inject-delay), 0: none */
	double timeout_sec; /* [in] self_timeout backends: give up after this long, 0: never */
	/* [in] 1: time every call (call_sec, iter_sec: two clock reads or two
	 * CUDA events per call); 0: time the timed calls as a whole (loop_sec),
	 * with nothing in the loop but the call and a store to *progress */
	int per_call;
	/* [in] may be NULL: with per_call 1, called with in_call 1 right before
	 * each all-reduce call and 0 right after it (iter counts -warmup ..
	 * iters-1); with per_call 0, called once with 1 before the loop and
	 * once with 0 after it; in both, called with in_call -1 before an
	 * injected delay (and with 1 after it). Must be cheap. */
	void (*mark)(void *ctx, int iter, int in_call);
	void *mark_ctx;
	int *progress;      /* [in] may be NULL: with per_call 0, the iteration
			     * number is stored here (relaxed) before each call */
	double *call_sec;   /* [out] per_call 1: iters entries, time inside each timed call */
	double *iter_sec;   /* [out] per_call 1: iters entries, time from the end of
			     * the previous call (or the start of the loop) to the
			     * end of this one: the iteration period, delay included */
	double loop_sec;    /* [out] per_call 0: from the start of the first timed
			     * call to the end of the last (warm-up excluded) */
	int failed_iter;    /* [out] on CH_COMM_ERR_TIMEOUT: the iteration that did not complete */
};

/**
 * ch_comm_run_delay - the injected delay before call @k of @r: mark(k, -1),
 * then sleep r->delay_us microseconds (EINTR resumed). Does nothing when
 * delay_us is 0. For backends' run().
 */
void ch_comm_run_delay(const struct ch_comm_run *r, int k);

/*
 * One algorithm a backend can be asked for (--algo): data, looked up by
 * name with ch_comm_algo_find(). The selector fields are read by the
 * backend that lists the algorithm; the others by the driver.
 */
struct ch_comm_algo {
	const char *name;        /* user-facing name accepted by --algo ("ring") */
	const char *label;       /* what result rows call it (Open MPI's "tree" runs
				  * recursive doubling and says so) */
	const char *detail;      /* one line saying how it is selected, for the table
				  * header (e.g. "Open MPI coll/tuned ring,
				  * coll_tuned_allreduce_algorithm=4") */
	const char *small_count; /* the algorithm that really runs when count <
				  * nranks (Open MPI's ring switches to recursive
				  * doubling, coll_base_allreduce.c); NULL: this one */
	const char *setting;     /* NCCL: the NCCL_ALGO value, NULL: left unset */
	int value;               /* Open MPI: coll_tuned_allreduce_algorithm */
	int nvls;                /* NCCL: 1 when it may use NVLink SHARP */
};

/*
 * A backend. Slots marked "may be NULL" are optional and checked by callers;
 * every other slot is always set. The order is the one of every backend
 * table (docs/architecture.md): descriptive fields, name, probe(), open(),
 * close(), the operations.
 */
struct ch_comm_backend {
	const char *name;    /* "mpi", "nccl" */
	const char *memory;  /* "host memory" or "device memory" */
	int self_timeout;    /* 1: run() enforces timeout_sec itself (asynchronous collectives) */
	uint64_t max_count;  /* largest count run() takes (MPI: 2^31 - 1), 0: no limit */
	uint64_t comm_reserve_bytes; /* memory to keep free per communicator (NCCL's own buffers) */

	/* The algorithms --algo accepts, in the order --help and messages list
	 * them; ended by an entry with name NULL. */
	const struct ch_comm_algo *algos;

	/**
	 * probe - can this backend run on this rank?
	 * @why: [out] reason when not (e.g. "no CUDA device: ..."), @n bytes.
	 * Returns 0, or CH_ERR_UNAVAILABLE with @why filled. Needs MPI initialised.
	 */
	int (*probe)(char *why, size_t n);

	/**
	 * open - the backend's state for this rank: its device (chosen as
	 * ch_comm_pick_device(@local_rank, visible GPUs) by a GPU backend),
	 * stream, check buffers, reduction operations.
	 * @local_rank, @local_size: [in] this rank's place on its node.
	 * @dev: [out] the device (or host memory) this rank uses.
	 * @out: [out] the handle, released with close(); NULL on failure (what
	 *       was set up is released before returning).
	 * @why: [out] message on failure, @n bytes.
	 * Returns 0, CH_ERR_UNAVAILABLE, or CH_ERR_RUNTIME.
	 */
	int (*open)(int local_rank, int local_size, struct ch_comm_device *dev,
		    struct ch_comm_ctx **out, char *why, size_t n);

	/** close - release what open() returned (NULL is accepted). */
	void (*close)(struct ch_comm_ctx *x);

	/** version - library version text into @buf (@n bytes); may be NULL. */
	void (*version)(char *buf, size_t n);

	/** supports - 1 when the backend reduces @dtype with @op, else 0. */
	int (*supports)(int dtype, int op);

	/**
	 * prepare - called once with every algorithm of the run before the first
	 * comm_create() (NCCL disables NVLS process-wide when no listed
	 * algorithm can use it); may be NULL. Returns 0 or a negative status.
	 */
	int (*prepare)(const char *const *algos, int n);

	/**
	 * comm_create - collective over the MPI communicator @mpi_fcomm (a
	 * Fortran handle, MPI_Comm_c2f()): a new communicator of the same ranks
	 * that runs @algo, on the state @x from open().
	 * @out: [out] the communicator, released with comm_destroy() before
	 *       close(@x).
	 * @why: [out] message on failure, @n bytes.
	 * Returns 0, CH_ERR_UNAVAILABLE (the algorithm cannot be selected here,
	 * @why says why) or CH_ERR_RUNTIME.
	 */
	int (*comm_create)(struct ch_comm_ctx *x, int mpi_fcomm, const char *algo,
			   struct ch_comm **out, char *why, size_t n);

	/** comm_destroy - release a communicator (NULL is accepted). */
	void (*comm_destroy)(struct ch_comm *c);

	/*
	 * The buffer operations below take the state @x from open(); the MPI
	 * backend's (host memory) need none and accept NULL.
	 */

	/**
	 * alloc - a buffer of @bytes in the backend's memory, 4 KiB aligned.
	 * Returns 0 with *out set, or CH_ERR_RUNTIME (out of memory).
	 */
	int (*alloc)(struct ch_comm_ctx *x, size_t bytes, void **out);

	/** free - release a buffer from alloc() (NULL is accepted). */
	void (*free)(struct ch_comm_ctx *x, void *p);

	/**
	 * fill_input - write rank @rank's input for the check: element i is
	 * ch_ar_pattern_value(p, rank, i + seed) encoded as p->dtype.
	 * Returns 0 or CH_ERR_RUNTIME.
	 */
	int (*fill_input)(struct ch_comm_ctx *x, void *buf, const struct ch_ar_pattern *p,
			  size_t count, int rank, uint64_t seed);

	/**
	 * fill_expected - write the exact reduction of every rank's input
	 * (same @seed). Returns 0 or CH_ERR_RUNTIME.
	 */
	int (*fill_expected)(struct ch_comm_ctx *x, void *buf, const struct ch_ar_pattern *p,
			     size_t count, uint64_t seed);

	/** poison - fill @bytes with 0xff (NaN or -1: never an expected value). */
	int (*poison)(struct ch_comm_ctx *x, void *buf, size_t bytes);

	/**
	 * count_wrong - elements of @buf whose bits differ from @expected.
	 * @wrong: [out] count. Returns 0 or CH_ERR_RUNTIME.
	 */
	int (*count_wrong)(struct ch_comm_ctx *x, const void *buf, const void *expected,
			   size_t count, int dtype, uint64_t *wrong);

	/**
	 * run - warm up, then time back-to-back all-reduce calls (see struct
	 * ch_comm_run). Collective over the communicator: every rank passes the
	 * same count, dtype, op, warmup and iters.
	 * Returns 0, CH_COMM_ERR_TIMEOUT (self_timeout backends; the
	 * communicator was aborted), or CH_ERR_RUNTIME (message printed).
	 */
	int (*run)(struct ch_comm *c, struct ch_comm_run *r);

	/**
	 * devices - the devices this process could open (NCCL: the GPUs
	 * cudaGetDeviceCount() sees, which honours CUDA_VISIBLE_DEVICES); 0
	 * when none. May be NULL (host memory: no devices to count).
	 */
	int (*devices)(void);

	/**
	 * comm_create_group - the single-process mode: @n communicators, one
	 * per state @x[i] (from open() with local ranks 0..n-1 of this
	 * process, one device each), forming one clique of @n ranks (rank i on
	 * @x[i]) that runs @algo; no MPI involved (NCCL: ncclCommInitAll).
	 * @out: [out] @n communicators, released with comm_destroy().
	 * Returns 0, CH_ERR_UNAVAILABLE or CH_ERR_RUNTIME (@why says why).
	 * May be NULL: the backend needs one process per rank.
	 */
	int (*comm_create_group)(struct ch_comm_ctx *const *x, int n, const char *algo, struct ch_comm **out,
				 char *why, size_t nwhy);

	/**
	 * run_group - run() for @n communicators of this process at once (of
	 * one clique or of several, measured concurrently): per iteration every
	 * communicator's call is issued from this thread inside one group
	 * (NCCL: ncclGroupStart/ncclGroupEnd), then each is timed on its own
	 * device. @r[i] holds communicator @c[i]'s buffers, count and results;
	 * dtype, op, warmup, iters, per_call, timeout_sec, mark, progress and
	 * delay_us are taken from @r[0]. Returns as run(); a timeout aborts
	 * every communicator of the call. Set together with comm_create_group().
	 */
	int (*run_group)(struct ch_comm *const *c, int n, struct ch_comm_run *r);
};

/**
 * ch_comm_algo_find - the algorithm named @name in @be's table.
 * Returns the entry, or NULL when @be does not accept @name.
 */
const struct ch_comm_algo *ch_comm_algo_find(const struct ch_comm_backend *be, const char *name);

/**
 * ch_comm_algo_label - what rows produced with @name are labelled.
 * Returns the entry's label (static), or NULL when @be does not accept @name.
 */
const char *ch_comm_algo_label(const struct ch_comm_backend *be, const char *name);

/**
 * ch_comm_algo_detail - how @name is selected, one line for the table header.
 * Returns the entry's detail (static), or NULL when @be does not accept @name.
 */
const char *ch_comm_algo_detail(const struct ch_comm_backend *be, const char *name);

/**
 * ch_comm_algo_effective - the algorithm that really runs for @count
 * elements on @nranks ranks when it differs from the label: the entry's
 * small_count when @nranks > 1 and @count < @nranks.
 * Returns a static string, or NULL when it is the label's (or @name is not
 * accepted).
 */
const char *ch_comm_algo_effective(const struct ch_comm_backend *be, const char *name,
				   size_t count, int nranks);

/* Backends built into this binary. */
extern const struct ch_comm_backend ch_comm_mpi;
#ifdef HAVE_NCCL
extern const struct ch_comm_backend ch_comm_nccl;
#endif

/* NULL-terminated --backend values: "auto", "mpi", "nccl" (always listed,
 * so that a binary built without NCCL reports it as unavailable, not as an
 * unknown name). */
extern const char *const ch_comm_backend_names[];

/**
 * ch_comm_find - a backend built into this binary.
 * @name: [in] "mpi" or "nccl".
 * Returns the backend, or NULL when it is not built in (or unknown).
 */
const struct ch_comm_backend *ch_comm_find(const char *name);

#ifdef __cplusplus
}
#endif
#endif
