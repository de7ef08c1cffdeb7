/*
 * ch_comm_mpi.c - the Open MPI backend: MPI_Allreduce on host buffers.
 *
 * Algorithm selection: Open MPI's coll/tuned component reads the control
 * variable coll_tuned_allreduce_algorithm when a communicator is created, so
 * each algorithm gets its own communicator: the variable is written through
 * MPI_T, the parent communicator is duplicated, and the variable is put back.
 * This works only when coll_tuned_use_dynamic_rules was 1 at MPI_Init (the
 * driver sets OMPI_MCA_coll_tuned_use_dynamic_rules=1 before MPI_Init unless
 * the user set it); comm_create() checks it and says so otherwise.
 * Values (ompi_info --param coll tuned --level 9, Open MPI 4.1): 0 ignore
 * (the fixed decision rules: "default"), 3 recursive doubling, 4 ring.
 * The user-facing "tree" maps to recursive doubling (log2(n) latency steps),
 * and rows say "recursive_doubling". Open MPI's ring itself switches to
 * recursive doubling when count < ranks (coll_base_allreduce.c), which
 * its table entry says (small_count, ch_comm_algo_effective()).
 *
 * half and bfloat16 are reduced with user-defined commutative MPI_Ops on
 * MPI_UINT16_T (convert to float, reduce, round to nearest even), since
 * Open MPI 4.1 has no 16-bit float type.
 */
#include <mpi.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "comm/ch_ar_pattern.h"
#include "comm/ch_comm.h"
#include "base/ch_common.h"
#include "base/ch_stats.h"
#include "hw/ch_host.h"

/* This rank's state (open()): the 16-bit float reductions and MPI_T. */
struct ch_comm_ctx {
	MPI_Op half_ops[CH_COMM_REDOP_COUNT], bf16_ops[CH_COMM_REDOP_COUNT];
	int ops_created, mpit_inited;
};

struct ch_comm {
	MPI_Comm comm;
	int nranks;
	struct ch_comm_ctx *x;
};

/* Open MPI 4.1 coll_tuned_allreduce_algorithm values. */
#define OMPI_ALLREDUCE_DEFAULT 0
#define OMPI_ALLREDUCE_RECURSIVE_DOUBLING 3
#define OMPI_ALLREDUCE_RING 4

static const struct ch_comm_algo mpi_algos[] = {
	{ .name = "ring", .label = "ring", .value = OMPI_ALLREDUCE_RING,
	  .detail = "Open MPI coll/tuned ring (coll_tuned_allreduce_algorithm=4)",
	  .small_count = "recursive_doubling" },
	{ .name = "tree", .label = "recursive_doubling", .value = OMPI_ALLREDUCE_RECURSIVE_DOUBLING,
	  .detail = "Open MPI coll/tuned recursive doubling (coll_tuned_allreduce_algorithm=3), log2(n) latency steps; requested as 'tree'" },
	{ .name = "recursive_doubling", .label = "recursive_doubling", .value = OMPI_ALLREDUCE_RECURSIVE_DOUBLING,
	  .detail = "Open MPI coll/tuned recursive doubling (coll_tuned_allreduce_algorithm=3)" },
	{ .name = "default", .label = "default", .value = OMPI_ALLREDUCE_DEFAULT,
	  .detail = "Open MPI's own choice (coll/tuned fixed decision rules, coll_tuned_allreduce_algorithm=0)" },
	{ .name = NULL },
};

/* ---- user-defined reductions for 16-bit floats */

#define DEFINE_OP16(NAME, TOF, FROMF, EXPR)                                          \
	static void NAME(void *in, void *inout, int *len, MPI_Datatype *dt)             \
	{                                                                               \
		const uint16_t *a = in;                                                 \
		uint16_t *b = inout;                                                    \
		int i;                                                                  \
		(void)dt;                                                               \
		for (i = 0; i < *len; i++) {                                            \
			float x = TOF(a[i]), y = TOF(b[i]);                             \
			b[i] = FROMF(EXPR);                                             \
		}                                                                       \
	}
DEFINE_OP16(half_sum, ch_half_to_float, ch_half_from_float, x + y)
DEFINE_OP16(half_min, ch_half_to_float, ch_half_from_float, x < y ? x : y)
DEFINE_OP16(half_max, ch_half_to_float, ch_half_from_float, x > y ? x : y)
DEFINE_OP16(bf16_sum, ch_bf16_to_float, ch_bf16_from_float, x + y)
DEFINE_OP16(bf16_min, ch_bf16_to_float, ch_bf16_from_float, x < y ? x : y)
DEFINE_OP16(bf16_max, ch_bf16_to_float, ch_bf16_from_float, x > y ? x : y)

static MPI_Datatype mpi_type(int dtype)
{
	switch (dtype) {
	case CH_FP32: return MPI_FLOAT;
	case CH_FP64: return MPI_DOUBLE;
	case CH_INT32: return MPI_INT32_T;
	case CH_INT8: return MPI_INT8_T;
	case CH_FP16:
	case CH_BF16: return MPI_UINT16_T;
	default: return MPI_DATATYPE_NULL;
	}
}

static MPI_Op mpi_op(const struct ch_comm_ctx *x, int dtype, int op)
{
	if (dtype == CH_FP16)
		return x->half_ops[op];
	if (dtype == CH_BF16)
		return x->bf16_ops[op];
	switch (op) {
	case CH_COMM_REDOP_SUM: return MPI_SUM;
	case CH_COMM_REDOP_MIN: return MPI_MIN;
	case CH_COMM_REDOP_MAX: return MPI_MAX;
	default: return MPI_OP_NULL;
	}
}

/* MPI check: report file:line, the call, host and rank; return CH_ERR_RUNTIME. */
static int mpi_fail(int rc, const char *call, const char *file, int line)
{
	char msg[MPI_MAX_ERROR_STRING] = "", host[256] = "";
	int len = 0, rank = -1;
	MPI_Error_string(rc, msg, &len);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	gethostname(host, sizeof(host) - 1);
	ch_error("%s:%d: %s failed on host '%s' rank %d: %s", file, line, call, host, rank, msg);
	return CH_ERR_RUNTIME;
}
#define MPICHECK(call)                                                 \
	do {                                                           \
		int mpi_rc_ = (call);                                  \
		if (mpi_rc_ != MPI_SUCCESS)                            \
			return mpi_fail(mpi_rc_, #call, __FILE__, __LINE__); \
	} while (0)

static int mpi_probe(char *why, size_t n)
{
	int init = 0;
	MPI_Initialized(&init);
	if (!init) {
		snprintf(why, n, "MPI is not initialised");
		return CH_ERR_UNAVAILABLE;
	}
	return 0;
}

static void mpi_close(struct ch_comm_ctx *x)
{
	int i;
	if (!x)
		return;
	if (x->ops_created) {
		for (i = 0; i < CH_COMM_REDOP_COUNT; i++) {
			MPI_Op_free(&x->half_ops[i]);
			MPI_Op_free(&x->bf16_ops[i]);
		}
	}
	if (x->mpit_inited)
		MPI_T_finalize();
	free(x);
}

static int mpi_open(int local_rank, int local_size, struct ch_comm_device *dev,
		    struct ch_comm_ctx **out, char *why, size_t n)
{
	int provided, i;
	MPI_User_function *hf[CH_COMM_REDOP_COUNT] = { half_sum, half_min, half_max };
	MPI_User_function *bf[CH_COMM_REDOP_COUNT] = { bf16_sum, bf16_min, bf16_max };
	struct ch_comm_ctx *x;

	(void)local_rank;
	*out = NULL;
	memset(dev, 0, sizeof(*dev));
	dev->gpu_index = -1;
	snprintf(dev->name, sizeof(dev->name), "host memory");
	/* this rank's share of the node's available memory */
	dev->free_bytes = ch_host_mem_available_bytes() / (uint64_t)(local_size > 0 ? local_size : 1);
	if (!(x = calloc(1, sizeof(*x)))) {
		snprintf(why, n, "out of memory");
		return CH_ERR_RUNTIME;
	}
	for (i = 0; i < CH_COMM_REDOP_COUNT; i++) {
		if (MPI_Op_create(hf[i], 1, &x->half_ops[i]) != MPI_SUCCESS ||
		    MPI_Op_create(bf[i], 1, &x->bf16_ops[i]) != MPI_SUCCESS) {
			snprintf(why, n, "MPI_Op_create failed");
			mpi_close(x);
			return CH_ERR_RUNTIME;
		}
	}
	x->ops_created = 1;
	if (MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) {
		snprintf(why, n, "MPI_T_init_thread failed");
		mpi_close(x);
		return CH_ERR_RUNTIME;
	}
	x->mpit_inited = 1;
	*out = x;
	return 0;
}

static void mpi_version(char *buf, size_t n)
{
	char v[MPI_MAX_LIBRARY_VERSION_STRING] = "";
	int len = 0;
	char *nl;

	MPI_Get_library_version(v, &len);
	if ((nl = strchr(v, ',')) != NULL) /* "Open MPI v4.1.4, package: ..." */
		*nl = '\0';
	if ((nl = strchr(v, '\n')) != NULL)
		*nl = '\0';
	snprintf(buf, n, "%s", v);
}

static int mpi_supports(int dtype, int op)
{
	return ch_dtype_comm_name(dtype) && op >= 0 && op < CH_COMM_REDOP_COUNT;
}

/* ---- MPI_T control variables */

/* Read (and optionally write) an integer or boolean control variable.
 * Returns 0, or -1 when the variable does not exist (message in @why). */
static int cvar_access(const char *name, const int *write_value, int *old_value,
		       char *why, size_t n)
{
	int idx, count, verbosity, bind, scope, rc, nlen = 0, dlen = 0;
	MPI_Datatype dt;
	MPI_T_enum en;
	MPI_T_cvar_handle h;
	union { int i; unsigned u; char c; unsigned char b[16]; } val;

	rc = MPI_T_cvar_get_index(name, &idx);
	if (rc != MPI_SUCCESS) {
		snprintf(why, n, "this MPI has no control variable '%s' (Open MPI's coll/tuned component is needed)", name);
		return -1;
	}
	if (MPI_T_cvar_get_info(idx, NULL, &nlen, &verbosity, &dt, &en, NULL, &dlen, &bind, &scope) != MPI_SUCCESS ||
	    MPI_T_cvar_handle_alloc(idx, NULL, &h, &count) != MPI_SUCCESS) {
		snprintf(why, n, "cannot access control variable '%s'", name);
		return -1;
	}
	memset(&val, 0, sizeof(val));
	if (count != 1 || MPI_T_cvar_read(h, &val) != MPI_SUCCESS) {
		MPI_T_cvar_handle_free(&h);
		snprintf(why, n, "cannot read control variable '%s'", name);
		return -1;
	}
	if (dt == MPI_C_BOOL || dt == MPI_CHAR)
		*old_value = val.c ? 1 : 0;
	else
		*old_value = val.i;
	if (write_value) {
		memset(&val, 0, sizeof(val));
		if (dt == MPI_C_BOOL || dt == MPI_CHAR)
			val.c = (char)(*write_value != 0);
		else
			val.i = *write_value;
		if (MPI_T_cvar_write(h, &val) != MPI_SUCCESS) {
			MPI_T_cvar_handle_free(&h);
			snprintf(why, n, "cannot write control variable '%s'", name);
			return -1;
		}
	}
	MPI_T_cvar_handle_free(&h);
	return 0;
}

static int mpi_comm_create(struct ch_comm_ctx *x, int fcomm, const char *algo,
			   struct ch_comm **out, char *why, size_t n)
{
	MPI_Comm parent = MPI_Comm_f2c(fcomm);
	const struct ch_comm_algo *a = ch_comm_algo_find(&ch_comm_mpi, algo);
	struct ch_comm *c;
	int dyn = 0, old = 0, back = 0, size;

	*out = NULL;
	if (!a) {
		snprintf(why, n, "unknown algorithm '%s' for the mpi backend", algo);
		return CH_ERR_USAGE;
	}
	if (cvar_access("coll_tuned_use_dynamic_rules", NULL, &dyn, why, n))
		return CH_ERR_UNAVAILABLE;
	if (!dyn && a->value != OMPI_ALLREDUCE_DEFAULT) {
		snprintf(why, n, "cannot select Open MPI all-reduce algorithm '%s': coll_tuned_use_dynamic_rules was 0 at MPI_Init "
			 "(unset OMPI_MCA_coll_tuned_use_dynamic_rules or set it to 1)", algo);
		return CH_ERR_UNAVAILABLE;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return CH_ERR_RUNTIME;
	if (dyn && cvar_access("coll_tuned_allreduce_algorithm", &a->value, &old, why, n)) {
		free(c);
		return CH_ERR_UNAVAILABLE;
	}
	if (MPI_Comm_dup(parent, &c->comm) != MPI_SUCCESS) {
		snprintf(why, n, "MPI_Comm_dup failed");
		free(c);
		return CH_ERR_RUNTIME;
	}
	if (dyn)
		cvar_access("coll_tuned_allreduce_algorithm", &old, &back, why, n);
	MPI_Comm_size(c->comm, &size);
	c->nranks = size;
	c->x = x;
	*out = c;
	return 0;
}

static void mpi_comm_destroy(struct ch_comm *c)
{
	if (!c)
		return;
	MPI_Comm_free(&c->comm);
	free(c);
}

static int mpi_alloc(struct ch_comm_ctx *x, size_t bytes, void **out)
{
	size_t sz = (bytes + 4095) / 4096 * 4096;
	void *p;

	(void)x;
	if (sz == 0)
		sz = 4096;
	p = aligned_alloc(4096, sz);
	if (!p) {
		ch_error("cannot allocate %zu bytes of host memory", bytes);
		return CH_ERR_RUNTIME;
	}
	memset(p, 0, sz); /* touch every page now, not inside the timed loop */
	*out = p;
	return 0;
}

static void mpi_free(struct ch_comm_ctx *x, void *p)
{
	(void)x;
	free(p);
}

static int mpi_fill_input(struct ch_comm_ctx *x, void *buf, const struct ch_ar_pattern *p,
			  size_t count, int rank, uint64_t seed)
{
	(void)x;
	ch_ar_fill_input_host(buf, p, count, rank, seed);
	return 0;
}

static int mpi_fill_expected(struct ch_comm_ctx *x, void *buf, const struct ch_ar_pattern *p,
			     size_t count, uint64_t seed)
{
	(void)x;
	return ch_ar_fill_expected_host(buf, p, count, seed);
}

static int mpi_poison(struct ch_comm_ctx *x, void *buf, size_t bytes)
{
	(void)x;
	memset(buf, 0xff, bytes);
	return 0;
}

static int mpi_count_wrong(struct ch_comm_ctx *x, const void *buf, const void *expected,
			   size_t count, int dtype, uint64_t *wrong)
{
	(void)x;
	*wrong = ch_ar_count_wrong_host(buf, expected, count, ch_dtype_size(dtype));
	return 0;
}

static int mpi_run(struct ch_comm *c, struct ch_comm_run *r)
{
	MPI_Datatype dt = mpi_type(r->dtype);
	MPI_Op op = mpi_op(c->x, r->dtype, r->op);
	const void *send = r->send ? r->send : MPI_IN_PLACE;
	double prev_end, s, e;
	int k;

	if (dt == MPI_DATATYPE_NULL || op == MPI_OP_NULL || r->iters < 1 || r->warmup < 0)
		return CH_ERR_USAGE;
	if (r->count > (size_t)0x7fffffff) {
		ch_error("count '%zu' is larger than MPI_Allreduce takes (2^31 - 1 elements)", r->count);
		return CH_ERR_USAGE;
	}
	if (!r->per_call) {
		/* the table's figure: the loop as a whole, as nccl-tests times it */
		if (r->mark)
			r->mark(r->mark_ctx, -r->warmup, 1);
		s = ch_now_sec();
		for (k = -r->warmup; k < r->iters; k++) {
			if (k == 0)
				s = ch_now_sec();
			if (r->delay_us > 0) {
				ch_comm_run_delay(r, k);
				if (r->mark)
					r->mark(r->mark_ctx, k, 1);
			} else if (r->progress) {
				__atomic_store_n(r->progress, k, __ATOMIC_RELAXED);
			}
			MPICHECK(MPI_Allreduce(send, r->recv, (int)r->count, dt, op, c->comm));
		}
		r->loop_sec = ch_now_sec() - s;
		if (r->mark)
			r->mark(r->mark_ctx, r->iters - 1, 0);
		return 0;
	}
	prev_end = ch_now_sec();
	for (k = -r->warmup; k < r->iters; k++) {
		ch_comm_run_delay(r, k);
		if (r->mark)
			r->mark(r->mark_ctx, k, 1);
		s = ch_now_sec();
		MPICHECK(MPI_Allreduce(send, r->recv, (int)r->count, dt, op, c->comm));
		e = ch_now_sec();
		if (r->mark)
			r->mark(r->mark_ctx, k, 0);
		if (k >= 0) {
			r->call_sec[k] = e - s;
			r->iter_sec[k] = e - prev_end;
		}
		prev_end = e;
	}
	return 0;
}

const struct ch_comm_backend ch_comm_mpi = {
	.name = "mpi",
	.memory = "host memory",
	.self_timeout = 0,
	.max_count = 0x7fffffff, /* MPI_Allreduce's count is an int */
	.comm_reserve_bytes = 0,
	.algos = mpi_algos,
	.probe = mpi_probe,
	.open = mpi_open,
	.close = mpi_close,
	.version = mpi_version,
	.supports = mpi_supports,
	.prepare = NULL,
	.comm_create = mpi_comm_create,
	.comm_destroy = mpi_comm_destroy,
	.alloc = mpi_alloc,
	.free = mpi_free,
	.fill_input = mpi_fill_input,
	.fill_expected = mpi_fill_expected,
	.poison = mpi_poison,
	.count_wrong = mpi_count_wrong,
	.run = mpi_run,
};
