/*
 * ch_ckpt_run.c - one checkpoint_io run (see ch_ckpt_run.h). This is the
 * launcher layer, so it uses MPI directly for its one byte exchange (the
 * mount table); everything else goes through bench/common/ch_ar_world.
 */
#include <mpi.h>

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "bench/checkpoint/ch_ckpt_io.h"
#include "bench/checkpoint/ch_ckpt_mem.h"
#include "bench/checkpoint/ch_ckpt_run.h"
#include "base/ch_common.h"
#include "base/ch_parse.h"
#include "base/ch_result.h"
#include "base/ch_stats.h"

#define LOAD_ALONE_SEC 0.3            /* the load's rate alone is measured over this */
#define GPU_LOAD_BYTES (64u << 20)    /* bytes per GPU load step */
#define SCRATCH_MAX (16u << 20)       /* read-back and copy buffer */
#define NWHAT 4

/* One rank's figures of one phase, gathered to world rank 0 as doubles. */
enum {
	R_STATUS, R_OP, R_ERR, R_FILE, R_ONDST, R_SEC, R_BYTES, R_COPY_SEC, R_COPY_BYTES,
	R_CPU_ALONE, R_CPU_DURING, R_GPU_ALONE, R_GPU_DURING, R_BAD, R_CHECKED, R_WRITER, R_N
};

struct ctx {
	struct ch_ar_world *w;
	const struct ch_ckpt_opts *o;
	int rank, size, nfiles, local_rank;
	struct ch_result *res; /* world rank 0 only */
	json_t *jres;          /* its results object (borrowed) */
	uint64_t total, shard;
	char dir[PATH_MAX], stage[PATH_MAX];
	int stage_default, dir_created, stage_created;
	int dir_locked, stage_locked; /* this rank made the lock file (ch_ckpt_lock()) */
	int owns_dirs;         /* atomic: every node took the locks: the files named ours are */
	struct ch_ckpt_buf buf;
	unsigned char *scratch;
	size_t scratch_bytes;
	uint32_t *crc;         /* per file of this rank */
	const struct ch_ckpt_gpu_backend *gpu;
	char gpu_why[640]; /* a driver older than the build's CUDA: versions and the fix */
	int use_cpu, use_gpu;
	int order;             /* this rank's place in the writer order of the scaling */
	double *all;           /* rank 0: size x R_N */
	const char *volatile phase; /* for the signal message */
	char what[2][NWHAT][PATH_MAX + 96]; /* watchdog texts: main thread, copy thread */
	int what_i[2];
	volatile int copy_done;
	double copy_rec[R_N];
	int status;            /* worst check status so far (0 or CH_ERR_CHECK) */
	char reason[512];
};

static sigset_t sig_set(void)
{
	sigset_t s;
	sigemptyset(&s);
	sigaddset(&s, SIGINT);
	sigaddset(&s, SIGTERM);
	sigaddset(&s, SIGHUP);
	return s;
}

void ch_ckpt_block_signals(void)
{
	sigset_t s = sig_set();
	pthread_sigmask(SIG_BLOCK, &s, NULL);
}

/* the watchdog's text for what this thread (0 main, 1 copy) starts now */
static void enter(struct ctx *c, int thread, const char *fmt, const char *path)
{
	char *b = c->what[thread][c->what_i[thread]++ % NWHAT];
	snprintf(b, sizeof(c->what[0][0]), fmt, path ? path : "", c->rank);
	ch_ar_wd_enter(c->w, CH_AR_ACT_LOCAL, b);
}

static const char *name_of(struct ctx *c, char *buf, size_t n, const char *kind, int rank, int file)
{
	const char *d = !strcmp(kind, "stage") ? c->stage : c->dir;
	if (!ch_ckpt_file_name(buf, n, d, kind, rank, file))
		snprintf(buf, n, "(name too long)");
	return buf;
}

static void unlink_own(struct ctx *c, const char *kind)
{
	char p[PATH_MAX];
	int f;
	/* files of these names are this run's only once it holds the
	 * directories (another run's may be there until then) */
	if (!__atomic_load_n(&c->owns_dirs, __ATOMIC_ACQUIRE))
		return;
	for (f = 0; f < c->nfiles; f++)
		unlink(name_of(c, p, sizeof(p), kind, c->rank, f));
}

/* the signal's clean-up: this rank's files (not the kept checkpoint) */
static void remove_own(struct ctx *c)
{
	if (!c->o->keep) {
		unlink_own(c, "sync");
		unlink_own(c, "copy");
	}
	unlink_own(c, "stage");
}

/* the lock files this rank made (local rank 0) */
static void unlock_dirs(struct ctx *c)
{
	if (c->stage_locked)
		ch_ckpt_unlock(c->stage);
	if (c->dir_locked)
		ch_ckpt_unlock(c->dir);
	c->stage_locked = c->dir_locked = 0;
}

/* this rank's files, then the directories this run created, once the
 * node's other ranks (signalled or timed out as well) have removed theirs:
 * local rank 0 made them; it tries for about a second */
static void remove_run(struct ctx *c)
{
	int i, left = 1;
	remove_own(c);
	if (c->local_rank == 0)
		unlock_dirs(c);
	for (i = 0; c->local_rank == 0 && i < 10 && left; i++) {
		if (i) {
			usleep(100000);
			remove_own(c); /* the main thread may have made one meanwhile */
		}
		left = 0;
		if (c->stage_created && rmdir(c->stage) != 0 && errno != ENOENT)
			left = 1;
		if (c->dir_created && !c->o->keep && rmdir(c->dir) != 0 && errno != ENOENT)
			left = 1;
	}
}

/* the watchdog's and ch_ar_world_abort()'s clean-up (ch_ar_world_on_abort) */
static void on_abort(void *arg)
{
	remove_run(arg);
}

static void *signal_thread(void *arg)
{
	struct ctx *c = arg;
	sigset_t s = sig_set();
	int sig = 0;

	if (sigwait(&s, &sig) != 0)
		return NULL;
	/* a signal to this rank alone: rank 0 records it in the result file
	 * (the others then fail to read this rank's files: that is not the cause) */
	ch_ar_world_tell_rank0(c->w, CH_ERR_RUNTIME, "interrupted by signal %d (%s) during the %s",
			       sig, strsignal(sig), c->phase ? c->phase : "setup");
	remove_run(c);
	/* mpirun and srun signal every rank: the first MPI_Abort kills them all,
	 * so the other ranks give world rank 0 the time to finish the result */
	if (c->rank != 0) {
		sleep(3);
		remove_own(c);
	}
	ch_ar_world_abort(c->w, CH_ERR_RUNTIME,
			  "interrupted by signal %d (%s) during the %s; the result file holds what was measured before",
			  sig, strsignal(sig), c->phase ? c->phase : "setup");
	return NULL;
}

/* ---- gathering and naming failures */

static int gather(struct ctx *c, const double *rec)
{
	return ch_ar_world_gather(c->w, rec, R_N, c->all);
}

static const double *rec_of(const struct ctx *c, int r) { return c->all + (size_t)r * R_N; }

/* rank 0: "rank 2 (host 'n1'): write of '/x/y' failed: No space left on device" */
static void describe(struct ctx *c, int r, const char *kind, char *buf, size_t n)
{
	const double *x = rec_of(c, r);
	const struct ch_world_rank *ri = ch_ar_world_info(c->w, r);
	char p[PATH_MAX], src[PATH_MAX], dst[PATH_MAX];
	int op = (int)x[R_OP], err = (int)x[R_ERR], file = (int)x[R_FILE];

	name_of(c, p, sizeof(p), kind, r, file);
	if (op == CH_CKPT_OP_SHORT || op == CH_CKPT_OP_CRC) {
		snprintf(buf, n, "rank %d (host '%s'): '%s' does not read back as written (%s failed)", r, ri->host, p,
			 ch_ckpt_op_name(op));
	} else if (!strcmp(kind, "stage") && x[R_COPY_SEC] > 0) { /* the background copy failed */
		name_of(c, src, sizeof(src), "stage", r, file);
		name_of(c, dst, sizeof(dst), "copy", r, file);
		if (x[R_ONDST])
			snprintf(buf, n, "rank %d (host '%s'): %s of '%s' failed while copying '%s' to it in the background: %s",
				 r, ri->host, ch_ckpt_op_name(op), dst, src, strerror(err));
		else
			snprintf(buf, n, "rank %d (host '%s'): %s of '%s' failed while copying it to '%s' in the background: %s",
				 r, ri->host, ch_ckpt_op_name(op), src, dst, strerror(err));
	} else {
		snprintf(buf, n, "rank %d (host '%s'): %s of '%s' failed: %s", r, ri->host, ch_ckpt_op_name(op), p,
			 strerror(err));
	}
}

/* rank 0: a JSON array of the failures of a phase, and the reason text */
static json_t *failures(struct ctx *c, const char *kind, int want_status, int *count)
{
	json_t *a = json_array();
	char d[3 * PATH_MAX + 512];
	int r;

	*count = 0;
	for (r = 0; r < c->size; r++) {
		const double *x = rec_of(c, r);
		if ((int)x[R_STATUS] != want_status)
			continue;
		describe(c, r, kind, d, sizeof(d));
		if (!*count)
			snprintf(c->reason, sizeof(c->reason), "%.500s", d);
		(*count)++;
		json_array_append_new(a, json_pack("{s:i, s:s, s:s, s:i, s:s}", "rank", r, "op",
						   ch_ckpt_op_name((int)x[R_OP]), "error",
						   x[R_ERR] ? strerror((int)x[R_ERR]) : "", "file", (int)x[R_FILE],
						   "message", d));
	}
	return a;
}

/* all ranks: after a phase's gather, stop the run on a run-time error */
static int phase_status(struct ctx *c, const double *rec, const char *kind, const char *key)
{
	int st = ch_ar_world_agree(c->w, (int)rec[R_STATUS] == CH_ERR_RUNTIME ? CH_ERR_RUNTIME : 0);
	int n;

	if (st == 0)
		return 0;
	if (c->rank == 0) {
		json_t *a = failures(c, kind, CH_ERR_RUNTIME, &n);
		ch_ar_wd_lock(c->w);
		json_object_set_new(c->jres, "error", json_pack("{s:s, s:o}", "phase", key, "failures", a));
		ch_result_finish(c->res, CH_ERR_RUNTIME, "%s%s", c->reason, n > 1 ? " (and more ranks: see results.error)" : "");
		ch_ar_wd_unlock(c->w);
		ch_error("the %s failed on %d rank%s: %s", key, n, n == 1 ? "" : "s", c->reason);
	}
	return st;
}

/* ---- the phases */

/* write this rank's files of @kind; @writer 0 only takes part in the timing */
static void write_files(struct ctx *c, const char *kind, int writer, int durable, double *rec)
{
	char p[PATH_MAX];
	struct ch_ckpt_ioerr e = { 0, 0 };
	double t0, t1;
	int f;

	memset(rec, 0, R_N * sizeof(*rec));
	rec[R_WRITER] = writer;
	if (ch_ar_world_barrier(c->w)) {
		rec[R_STATUS] = CH_ERR_RUNTIME;
		return;
	}
	t0 = ch_now_sec();
	for (f = 0; writer && f < c->nfiles; f++) {
		uint64_t off = ch_ckpt_file_offset(c->shard, c->nfiles, f), end = ch_ckpt_file_offset(c->shard, c->nfiles, f + 1);
		uint64_t done = 0;
		name_of(c, p, sizeof(p), kind, c->rank, f);
		enter(c, 0, durable ? "writing and fsyncing '%s' (rank %d)" : "writing '%s' (staging, rank %d)", p);
		if (ch_ckpt_write_file(p, c->buf.p + off, end - off, c->o->block_bytes, durable, &done, &e)) {
			rec[R_STATUS] = CH_ERR_RUNTIME;
			rec[R_OP] = e.op;
			rec[R_ERR] = e.err;
			rec[R_FILE] = f;
			rec[R_BYTES] += (double)done;
			ch_error("rank %d: %s of '%s' failed: %s", c->rank, ch_ckpt_op_name(e.op), p, strerror(e.err));
			break;
		}
		rec[R_BYTES] += (double)done;
	}
	if (writer && durable && rec[R_STATUS] == 0) {
		enter(c, 0, "fsyncing the directory '%s' (rank %d)", c->dir);
		if (ch_ckpt_fsync_dir(c->dir, &e)) {
			rec[R_STATUS] = CH_ERR_RUNTIME;
			rec[R_OP] = e.op;
			rec[R_ERR] = e.err;
			ch_error("rank %d: %s of the directory '%s' failed: %s", c->rank, ch_ckpt_op_name(e.op), c->dir,
				 strerror(e.err));
		}
	}
	t1 = ch_now_sec();
	ch_ar_wd_enter(c->w, CH_AR_ACT_IDLE, "between phases");
	rec[R_SEC] = t1 - t0;
}

/* read back this rank's files of @kind; failures of the check are counted */
static void read_back(struct ctx *c, const char *kind, double *rec)
{
	char p[PATH_MAX];
	struct ch_ckpt_ioerr e;
	int f, rc;

	memset(rec, 0, R_N * sizeof(*rec));
	for (f = 0; f < c->nfiles; f++) {
		uint64_t off = ch_ckpt_file_offset(c->shard, c->nfiles, f), end = ch_ckpt_file_offset(c->shard, c->nfiles, f + 1);
		name_of(c, p, sizeof(p), kind, c->rank, f);
		enter(c, 0, "reading back '%s' (rank %d)", p);
		rc = ch_ckpt_read_check(p, end - off, c->crc[f], c->scratch, c->scratch_bytes, &e);
		rec[R_CHECKED]++;
		if (rc == 0)
			continue;
		if (rec[R_STATUS] == 0 || rc == CH_ERR_RUNTIME) {
			rec[R_STATUS] = rc;
			rec[R_OP] = e.op;
			rec[R_ERR] = e.err;
			rec[R_FILE] = f;
		}
		if (rc == CH_ERR_CHECK)
			rec[R_BAD]++;
		if (rc == CH_ERR_RUNTIME) {
			ch_error("rank %d: %s of '%s' failed: %s", c->rank, ch_ckpt_op_name(e.op), p, strerror(e.err));
			break;
		}
		ch_error("rank %d: '%s' does not read back as written (%s failed)", c->rank, p, ch_ckpt_op_name(e.op));
	}
	ch_ar_wd_enter(c->w, CH_AR_ACT_IDLE, "between phases");
}

static json_t *jstats(const double *x, size_t n)
{
	struct ch_stats s;
	if (!n || ch_stats_compute(x, n, &s))
		return json_null();
	return json_pack("{s:I, s:f, s:f, s:f, s:f, s:f, s:f}", "n", (json_int_t)s.n, "min", s.min, "median", s.median,
			 "mean", s.mean, "p95", s.p95, "max", s.max, "cv", s.cv);
}

/* rank 0: the summary of a write phase over its writers */
static json_t *strategy_json(struct ctx *c, const char *name, int copy)
{
	double *t = calloc((size_t)c->size, sizeof(double)), *ct = calloc((size_t)c->size, sizeof(double));
	double bytes = 0, max = 0, cmax = 0, cbytes = 0;
	json_t *per = json_array(), *o;
	int r, n = 0, slow = -1;

	for (r = 0; t && ct && r < c->size; r++) {
		const double *x = rec_of(c, r);
		const struct ch_world_rank *ri = ch_ar_world_info(c->w, r);
		if (!x[R_WRITER])
			continue;
		t[n] = x[R_SEC];
		ct[n] = x[R_COPY_SEC];
		n++;
		bytes += x[R_BYTES];
		cbytes += x[R_COPY_BYTES];
		if (slow < 0 || x[R_SEC] > max) {
			max = x[R_SEC];
			slow = r;
		}
		if (x[R_COPY_SEC] > cmax)
			cmax = x[R_COPY_SEC];
		o = json_pack("{s:i, s:s, s:I, s:f, s:f}", "rank", r, "host", ri->host, "bytes", (json_int_t)x[R_BYTES],
			      "block_sec", x[R_SEC], "write_gbps", x[R_SEC] > 0 ? x[R_BYTES] / x[R_SEC] / 1e9 : 0.0);
		if (copy)
			json_object_set_new(o, "copy_sec", json_real(x[R_COPY_SEC]));
		json_array_append_new(per, o);
	}
	o = json_pack("{s:s, s:i, s:I, s:i, s:f, s:o, s:f, s:o}", "strategy", name, "writers", n, "bytes",
		      (json_int_t)bytes, "files", n * c->nfiles, "block_sec", max, "block_sec_stats", jstats(t, (size_t)n),
		      "agg_write_gbps", max > 0 ? bytes / max / 1e9 : 0.0, "per_rank", per);
	if (slow >= 0)
		json_object_set_new(o, "slowest", json_pack("{s:i, s:s, s:f}", "rank", slow, "host",
							    ch_ar_world_info(c->w, slow)->host, "block_sec", max));
	if (copy) {
		json_object_set_new(o, "copy_sec", json_real(cmax));
		json_object_set_new(o, "copy_sec_stats", jstats(ct, (size_t)n));
		json_object_set_new(o, "copy_bytes", json_integer((json_int_t)cbytes));
		json_object_set_new(o, "agg_copy_gbps", json_real(cmax > 0 ? cbytes / cmax / 1e9 : 0.0));
	}
	free(t);
	free(ct);
	return o;
}

static void save(struct ctx *c, const char *key, json_t *v)
{
	ch_ar_wd_lock(c->w);
	json_object_set_new(c->jres, key, v);
	ch_result_checkpoint(c->res);
	ch_ar_wd_unlock(c->w);
}

/* all ranks: the read-back of @kind; rank 0 records it under verify.KEY.
 * Returns 0 (a bad file sets c->status) or a run-time error. */
static int verify(struct ctx *c, const char *kind, const char *key, json_t *jverify)
{
	double rec[R_N];
	int rc, r, bad = 0, checked = 0, n;

	c->phase = "read-back";
	read_back(c, kind, rec);
	if ((rc = gather(c, rec)))
		return rc;
	if ((rc = phase_status(c, rec, kind, "read-back")))
		return rc;
	if (c->rank == 0) {
		for (r = 0; r < c->size; r++) {
			bad += (int)rec_of(c, r)[R_BAD];
			checked += (int)rec_of(c, r)[R_CHECKED];
		}
		json_object_set_new(jverify, key, json_pack("{s:i, s:i, s:s, s:o}", "files_checked", checked, "files_bad", bad,
							    "method", "zlib crc32 and length of the file read back after fsync and posix_fadvise(DONTNEED)",
							    "bad", failures(c, kind, CH_ERR_CHECK, &n)));
		save(c, "verify", json_incref(jverify));
	}
	/* a file that did not read back fails the run, but the run goes on */
	if (ch_ar_world_agree(c->w, (int)rec[R_BAD] ? CH_ERR_CHECK : 0))
		c->status = CH_ERR_CHECK;
	return 0;
}

/* ---- the load */

struct load_meter {
	long cpu_units, gpu_steps;
	double sec;
	double sink;
};

static int load_step(struct ctx *c, struct load_meter *m)
{
	if (c->use_cpu) {
		m->sink = ch_ckpt_cpu_unit(m->sink);
		m->cpu_units++;
	}
	if (c->use_gpu) {
		if (c->buf.gpu->load_step(c->buf.gpu_ctx, c->buf.p, c->buf.bytes < GPU_LOAD_BYTES ? c->buf.bytes : GPU_LOAD_BYTES))
			return CH_ERR_RUNTIME;
		m->gpu_steps++;
	}
	return 0;
}

static int load_for(struct ctx *c, double sec, volatile int *stop, struct load_meter *m)
{
	double t0 = ch_now_sec();
	memset(m, 0, sizeof(*m));
	m->sink = 1.0;
	if (!c->use_cpu && !c->use_gpu)
		return 0;
	do {
		if (load_step(c, m))
			return CH_ERR_RUNTIME;
		m->sec = ch_now_sec() - t0;
	} while (stop ? !__atomic_load_n(stop, __ATOMIC_ACQUIRE) : m->sec < sec);
	return 0;
}

static void *copy_thread(void *arg)
{
	struct ctx *c = arg;
	double *rec = c->copy_rec, t0 = ch_now_sec();
	char src[PATH_MAX], dst[PATH_MAX];
	struct ch_ckpt_ioerr e;
	unsigned char *scratch = malloc(c->scratch_bytes);
	int f, on_dst;

	if (!scratch) {
		rec[R_STATUS] = CH_ERR_RUNTIME;
		rec[R_ERR] = ENOMEM;
	}
	for (f = 0; scratch && f < c->nfiles; f++) {
		uint64_t done = 0;
		name_of(c, src, sizeof(src), "stage", c->rank, f);
		name_of(c, dst, sizeof(dst), "copy", c->rank, f);
		enter(c, 1, "copying the staged file to '%s' in the background (rank %d)", dst);
		if (ch_ckpt_copy_file(src, dst, scratch, c->scratch_bytes, &done, &on_dst, &e)) {
			rec[R_STATUS] = CH_ERR_RUNTIME;
			rec[R_OP] = e.op;
			rec[R_ERR] = e.err;
			rec[R_FILE] = f;
			rec[R_ONDST] = on_dst;
			rec[R_COPY_BYTES] += (double)done;
			if (on_dst)
				ch_error("rank %d: %s of '%s' failed while copying '%s' to it: %s", c->rank,
					 ch_ckpt_op_name(e.op), dst, src, strerror(e.err));
			else
				ch_error("rank %d: %s of '%s' failed while copying it to '%s': %s", c->rank,
					 ch_ckpt_op_name(e.op), src, dst, strerror(e.err));
			break;
		}
		rec[R_COPY_BYTES] += (double)done;
	}
	if (rec[R_STATUS] == 0) {
		enter(c, 1, "fsyncing the directory '%s' (rank %d)", c->dir);
		if (ch_ckpt_fsync_dir(c->dir, &e)) {
			rec[R_STATUS] = CH_ERR_RUNTIME;
			rec[R_OP] = e.op;
			rec[R_ERR] = e.err;
		}
	}
	rec[R_COPY_SEC] = ch_now_sec() - t0;
	free(scratch);
	enter(c, 1, "running the load after the staged copy%s (rank %d)", "");
	__atomic_store_n(&c->copy_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* all ranks: the staged checkpoint, its background copy and the load */
static int staged(struct ctx *c)
{
	struct load_meter alone, during;
	double rec[R_N];
	pthread_t th;
	int rc, r;

	c->phase = "load measured alone";
	if ((rc = ch_ar_world_barrier(c->w)))
		return rc;
	enter(c, 0, "running the load alone%s (rank %d)", "");
	rc = load_for(c, LOAD_ALONE_SEC, NULL, &alone);
	ch_ar_wd_enter(c->w, CH_AR_ACT_IDLE, "between phases");
	if ((rc = ch_ar_world_agree(c->w, rc)))
		return rc;
	c->phase = "staged checkpoint";
	write_files(c, "stage", 1, 0, rec);
	if (rec[R_STATUS] == 0) {
		memset(c->copy_rec, 0, sizeof(c->copy_rec));
		c->copy_done = 0;
		c->phase = "staged checkpoint's background copy";
		enter(c, 0, "running the load while the staged copy drains%s (rank %d)", "");
		if (pthread_create(&th, NULL, copy_thread, c) != 0) {
			rec[R_STATUS] = CH_ERR_RUNTIME;
			rec[R_ERR] = EAGAIN;
		} else {
			rc = load_for(c, 0, &c->copy_done, &during);
			pthread_join(th, NULL);
			ch_ar_wd_enter(c->w, CH_AR_ACT_IDLE, "between phases");
			if (rc)
				rec[R_STATUS] = CH_ERR_RUNTIME;
			for (r = R_STATUS; r <= R_ONDST; r++)
				if (c->copy_rec[R_STATUS])
					rec[r] = c->copy_rec[r];
			rec[R_COPY_SEC] = c->copy_rec[R_COPY_SEC];
			rec[R_COPY_BYTES] = c->copy_rec[R_COPY_BYTES];
			rec[R_CPU_ALONE] = alone.sec > 0 ? alone.cpu_units / alone.sec : 0;
			rec[R_GPU_ALONE] = alone.sec > 0 ? alone.gpu_steps / alone.sec : 0;
			rec[R_CPU_DURING] = during.sec > 0 ? during.cpu_units / during.sec : 0;
			rec[R_GPU_DURING] = during.sec > 0 ? during.gpu_steps / during.sec : 0;
		}
	}
	unlink_own(c, "stage");
	if ((rc = gather(c, rec)))
		return rc;
	if (c->rank == 0) {
		json_t *s = strategy_json(c, "staged", 1), *ld;
		double *sl[2];
		int k, n;
		sl[0] = calloc((size_t)c->size, sizeof(double));
		sl[1] = calloc((size_t)c->size, sizeof(double));
		ld = json_pack("{s:s, s:f, s:s}", "kind", c->use_cpu && c->use_gpu ? "cpu+gpu" : c->use_cpu ? "cpu" : c->use_gpu ? "gpu" : "none",
			       "alone_sec", LOAD_ALONE_SEC, "method",
			       "rate of a fixed unit of work (2^18 dependent multiply-adds; a 64 MiB host-to-device copy for the gpu) alone, then while the background copy runs, on every rank; slowdown = 1 - rate during / rate alone");
		for (k = 0; k < 2 && sl[0] && sl[1]; k++) {
			if (!(k == 0 ? c->use_cpu : c->use_gpu))
				continue;
			for (n = 0, r = 0; r < c->size; r++) {
				const double *x = rec_of(c, r);
				double a = x[k ? R_GPU_ALONE : R_CPU_ALONE], d = x[k ? R_GPU_DURING : R_CPU_DURING];
				if (a > 0)
					sl[k][n++] = 1.0 - d / a;
			}
			json_object_set_new(ld, k ? "gpu_slowdown_frac" : "cpu_slowdown_frac", jstats(sl[k], (size_t)n));
		}
		free(sl[0]);
		free(sl[1]);
		json_object_set_new(s, "load", ld);
		save(c, "staged", s);
	}
	if ((rc = phase_status(c, rec, "stage", "staged checkpoint")))
		return rc;
	return 0;
}

/* all ranks: the aggregate scaling points below n writers */
static int scaling(struct ctx *c, json_t *sync_summary)
{
	int pts[CH_CKPT_MAX_WRITER_POINTS], np = ch_ckpt_writer_points(c->size, pts), i, rc;
	json_t *arr = c->rank == 0 ? json_array() : NULL;
	double rec[R_N];
	char kind[32];

	for (i = 0; c->o->scaling && i < np - 1; i++) {
		snprintf(kind, sizeof(kind), "w%d", pts[i]);
		c->phase = "scaling point";
		write_files(c, kind, c->order < pts[i], 1, rec);
		if (c->order < pts[i])
			unlink_own(c, kind);
		if ((rc = gather(c, rec)))
			return rc;
		if ((rc = phase_status(c, rec, kind, "scaling point")))
			return rc;
		if (c->rank == 0) {
			json_t *s = strategy_json(c, "synchronous", 0);
			json_array_append_new(arr, json_pack("{s:i, s:O, s:O, s:O, s:O}", "writers", pts[i], "bytes",
							     json_object_get(s, "bytes"), "block_sec", json_object_get(s, "block_sec"),
							     "agg_write_gbps", json_object_get(s, "agg_write_gbps"), "slowest",
							     json_object_get(s, "slowest")));
			json_decref(s);
		}
	}
	if (c->rank == 0) {
		json_array_append_new(arr, json_pack("{s:i, s:O, s:O, s:O, s:O}", "writers", c->size, "bytes",
						     json_object_get(sync_summary, "bytes"), "block_sec",
						     json_object_get(sync_summary, "block_sec"), "agg_write_gbps",
						     json_object_get(sync_summary, "agg_write_gbps"), "slowest",
						     json_object_get(sync_summary, "slowest")));
		save(c, "scaling", json_pack("{s:s, s:s, s:o}", "strategy", "synchronous", "writers_are",
					     "each writer writes its own shard of the n-rank layout; writers are taken one per node first (local rank 0 of every node, then local rank 1, ...)",
					     "points", arr));
	}
	return 0;
}

/* ---- set-up */

static int is_network_fs(const char *t)
{
	static const char *const net[] = { "nfs", "nfs4", "lustre", "gpfs", "beegfs", "cephfs", "ceph", "cifs", "smb3",
					   "glusterfs", "fuse.glusterfs", "wekafs", "pvfs2", "orangefs", "9p",
					   "fuse.sshfs", "panfs", "fuse.juicefs", "afs", NULL };
	int i;
	for (i = 0; net[i]; i++)
		if (!strcmp(t, net[i]))
			return 1;
	return 0;
}

struct mounts {
	struct ch_ckpt_mount dir, stage;
	int pinned;
};

static json_t *mount_json(const struct ch_ckpt_mount *m)
{
	return json_pack("{s:s, s:s, s:s, s:b}", "point", m->point, "fstype", m->fstype, "source", m->source,
			 "network_fs", is_network_fs(m->fstype));
}

/* the "ranks" section and the mount of --dir per rank */
static int rank_table(struct ctx *c, struct mounts *all)
{
	struct mounts me;
	json_t *layout;
	int r;

	memset(&me, 0, sizeof(me));
	ch_ckpt_mount_of(c->dir, &me.dir);
	ch_ckpt_mount_of(c->stage, &me.stage);
	me.pinned = c->buf.pinned;
	if (MPI_Gather(&me, (int)sizeof(me), MPI_BYTE, all, (int)sizeof(me), MPI_BYTE, 0,
		       MPI_Comm_f2c(ch_ar_world_ctrl(c->w))) != MPI_SUCCESS)
		return CH_ERR_RUNTIME;
	if (c->rank != 0)
		return 0;
	layout = json_array();
	for (r = 0; r < c->size; r++) {
		const struct ch_world_rank *ri = ch_ar_world_info(c->w, r);
		json_array_append_new(layout, json_pack("{s:i, s:s, s:I, s:i, s:i, s:I, s:o, s:o, s:s}", "rank", r, "host",
							ri->host, "pid", (json_int_t)ri->pid, "local_rank", ri->local_rank,
							"node", ri->host_node, "shard_bytes",
							(json_int_t)ch_ckpt_shard_bytes(c->total, c->size, r), "dir_mount",
							mount_json(&all[r].dir), "stage_mount", mount_json(&all[r].stage),
							"buffer", all[r].pinned ? c->buf.kind : "page_aligned"));
	}
	ch_result_set(c->res, "ranks", json_pack("{s:i, s:i, s:o}", "world_size", c->size, "nodes",
						 ch_ar_world_nhosts(c->w), "layout", layout));
	return 0;
}

/* the writer order of the scaling: one per node first */
static int writer_order(struct ctx *c)
{
	const struct ch_world_rank *me = ch_ar_world_info(c->w, c->rank);
	int r, k = 0;
	for (r = 0; r < c->size; r++) {
		const struct ch_world_rank *ri = ch_ar_world_info(c->w, r);
		if (ri->local_rank < me->local_rank || (ri->local_rank == me->local_rank && ri->host_node < me->host_node))
			k++;
	}
	return k;
}

/* local rank 0 of every node: the directories; all ranks: agreed status */
static int prepare_dirs(struct ctx *c)
{
	uint64_t node_share = 0, avail;
	int r, rc = 0, created = 0;

	for (r = 0; r < c->size; r++)
		if (ch_ar_world_info(c->w, r)->host_node == ch_ar_world_info(c->w, c->rank)->host_node)
			node_share += ch_ckpt_shard_bytes(c->total, c->size, r);
	c->phase = "set-up";
	if (c->local_rank == 0) {
		const struct ch_world_rank *r0 = ch_ar_world_info(c->w, 0);
		/* the synchronous checkpoint stays on --dir while the staged one is
		 * copied there (and while a scaling point writes): twice its size */
		rc = ch_ckpt_dir_prepare("--dir", c->dir, 2 * c->total,
					 " (twice the checkpoint: the synchronous one stays while the staged copy is written)",
					 &c->dir_created, &avail);
		if (rc == 0)
			rc = ch_ckpt_lock("--dir", c->dir, r0->host, r0->pid, &c->dir_locked);
		if (rc == 0)
			rc = ch_ckpt_dir_prepare("--stage-dir", c->stage, node_share, NULL, &created, &avail);
		c->stage_created = created;
		if (rc == 0)
			rc = ch_ckpt_lock("--stage-dir", c->stage, r0->host, r0->pid, &c->stage_locked);
		/* files of an interrupted run are removed only under this run's lock */
		if (rc == 0 && (ch_ckpt_dir_clean(c->dir) < 0 || ch_ckpt_dir_clean(c->stage) < 0))
			rc = CH_ERR_RUNTIME;
		if (rc && c->rank != 0)
			ch_error("(the message above is from rank %d, host '%s')", c->rank, ch_ar_world_info(c->w, c->rank)->host);
	}
	if (rc == 0 && c->local_rank == 0) {
		/* every rank holds its shard in host memory (a tmpfs stage again):
		 * more than the node has is refused, not left to the OOM killer */
		struct ch_ckpt_mount sm;
		long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
		uint64_t phys = pages > 0 && page > 0 ? (uint64_t)pages * (uint64_t)page : 0;
		int in_mem = ch_ckpt_mount_of(c->stage, &sm) == 0 && (!strcmp(sm.fstype, "tmpfs") || !strcmp(sm.fstype, "ramfs"));
		uint64_t need = ch_ckpt_host_bytes(node_share, in_mem);
		if (phys && need > phys) {
			ch_usage_error("the ranks on host '%s' would hold %llu bytes in host memory (their shards%s), more than its %llu bytes: use more nodes or a smaller checkpoint",
				       ch_ar_world_info(c->w, c->rank)->host, (unsigned long long)need,
				       in_mem ? ", and again in the memory-backed --stage-dir" : "", (unsigned long long)phys);
			rc = CH_ERR_USAGE;
		}
	}
	rc = ch_ar_world_agree(c->w, rc);
	if (rc == 0) {
		const char *bad = access(c->dir, W_OK | X_OK) != 0 ? c->dir : access(c->stage, W_OK | X_OK) != 0 ? c->stage : NULL;
		if (bad)
			ch_error("rank %d (host '%s'): cannot write into %s '%s': %s", c->rank,
				 ch_ar_world_info(c->w, c->rank)->host, bad == c->dir ? "--dir" : "--stage-dir", bad, strerror(errno));
		rc = ch_ar_world_agree(c->w, bad ? CH_ERR_USAGE : 0);
	}
	return rc;
}

static void cleanup(struct ctx *c)
{
	unlink_own(c, "stage");
	if (!c->o->keep) {
		unlink_own(c, "sync");
		unlink_own(c, "copy");
	}
	ch_ar_world_barrier(c->w);
	if (c->local_rank == 0) {
		unlock_dirs(c);
		if (c->stage_created)
			rmdir(c->stage);
		if (c->dir_created && !c->o->keep)
			rmdir(c->dir);
	}
}

/* ---- printing */

static void fmt_sec(char *b, size_t n, double s)
{
	if (s >= 120)
		snprintf(b, n, "%.2f min", s / 60);
	else
		snprintf(b, n, "%.3f s", s);
}

static void print_row(const json_t *s)
{
	const json_t *st = json_object_get(s, "block_sec_stats"), *sl = json_object_get(s, "slowest");
	printf("  %-12s %7lld %14lld %12.3f %10.3f %10.3f %10.3f  rank %lld (%s)\n",
	       json_string_value(json_object_get(s, "strategy")), json_integer_value(json_object_get(s, "writers")),
	       json_integer_value(json_object_get(s, "bytes")), json_real_value(json_object_get(s, "block_sec")),
	       json_real_value(json_object_get(st, "median")), json_real_value(json_object_get(st, "min")),
	       json_real_value(json_object_get(s, "agg_write_gbps")), json_integer_value(json_object_get(sl, "rank")),
	       json_string_value(json_object_get(sl, "host")));
}

static void print_report(struct ctx *c, const struct mounts *m)
{
	json_t *sy = json_object_get(c->jres, "sync"), *stg = json_object_get(c->jres, "staged");
	json_t *sc = json_object_get(c->jres, "scaling"), *stall = json_object_get(c->jres, "stall");
	json_t *v = json_object_get(c->jres, "verify"), *ld = json_object_get(stg, "load"), *p;
	char a[32], b[32], sz[32];
	size_t i;

	ch_format_size(c->total, sz, sizeof(sz));
	printf("# checkpoint_io: %d rank%s on %d node%s, %s checkpoint (%llu bytes), %ld file%s per rank, %llu-byte writes\n",
	       c->size, c->size == 1 ? "" : "s", ch_ar_world_nhosts(c->w), ch_ar_world_nhosts(c->w) == 1 ? "" : "s", sz,
	       (unsigned long long)c->total, (long)c->nfiles, c->nfiles == 1 ? "" : "s", (unsigned long long)c->o->block_bytes);
	printf("# --dir '%s' on %s (%s, %s)%s\n", c->dir, m[0].dir.point, m[0].dir.fstype, m[0].dir.source,
	       is_network_fs(m[0].dir.fstype) ? ": a network file system" : ": a node-local file system, not a shared mount");
	printf("# --stage-dir '%s' on %s (%s)%s%s\n", c->stage, m[0].stage.point, m[0].stage.fstype,
	       c->stage_default ? " (default: a new directory, removed after)" : "",
	       !strcmp(m[0].stage.point, m[0].dir.point) && !strcmp(m[0].stage.source, m[0].dir.source)
		       ? ": the same file system as --dir, so the staged figures say nothing about a node-local stage"
		       : "");
	printf("# host buffer: %s%s%s%s\n", c->buf.kind, c->buf.pinned ? "" : " (", c->buf.pinned ? "" : c->buf.why,
	       c->buf.pinned ? "" : ")");
	printf("#\n#  %-12s %7s %14s %12s %10s %10s %10s  %s\n", "strategy", "writers", "bytes", "block_s(max)",
	       "median_s", "min_s", "agg_GB/s", "slowest");
	print_row(sy);
	json_array_foreach(json_object_get(sy, "again"), i, p) /* --repeat: the writes after the first */
		printf("    write %-4lld %7s %14lld %12.3f %10s %10s %10.3f  rank %lld (%s)\n",
		       json_integer_value(json_object_get(p, "write")), "", json_integer_value(json_object_get(p, "bytes")), json_real_value(json_object_get(p, "block_sec")), "",
		       "", json_real_value(json_object_get(p, "agg_write_gbps")),
		       json_integer_value(json_object_get(json_object_get(p, "slowest"), "rank")),
		       json_string_value(json_object_get(json_object_get(p, "slowest"), "host")));
	if (stg)
		print_row(stg);
	if (stg) {
		fmt_sec(a, sizeof(a), json_real_value(json_object_get(stg, "copy_sec")));
		printf("#  staged: the background copy to --dir took %s (max over ranks, %.3f GB/s aggregate)", a,
		       json_real_value(json_object_get(stg, "agg_copy_gbps")));
		if (json_object_get(ld, "cpu_slowdown_frac") && !json_is_null(json_object_get(ld, "cpu_slowdown_frac")))
			printf("; it slowed the CPU load by %.1f%% (median over ranks, max %.1f%%)",
			       100 * json_real_value(json_object_get(json_object_get(ld, "cpu_slowdown_frac"), "median")),
			       100 * json_real_value(json_object_get(json_object_get(ld, "cpu_slowdown_frac"), "max")));
		if (json_object_get(ld, "gpu_slowdown_frac") && !json_is_null(json_object_get(ld, "gpu_slowdown_frac")))
			printf(", the GPU copy load by %.1f%% (median)",
			       100 * json_real_value(json_object_get(json_object_get(ld, "gpu_slowdown_frac"), "median")));
		printf("\n");
	}
	if (sc && json_array_size(json_object_get(sc, "points")) > 1) {
		printf("#\n# aggregate scaling (synchronous; each writer its own shard):\n#  %7s %14s %12s %10s\n", "writers",
		       "bytes", "block_s(max)", "agg_GB/s");
		json_array_foreach(json_object_get(sc, "points"), i, p)
			printf("   %7lld %14lld %12.3f %10.3f\n", json_integer_value(json_object_get(p, "writers")),
			       json_integer_value(json_object_get(p, "bytes")), json_real_value(json_object_get(p, "block_sec")),
			       json_real_value(json_object_get(p, "agg_write_gbps")));
	}
	printf("#\n");
	if (stall && !json_is_null(json_object_get(stall, "sync_frac"))) {
		fmt_sec(a, sizeof(a), c->o->interval_sec);
		printf("# stall fraction at --interval %s: synchronous %.3f%% of wall-clock, staged %.3f%%; staging recovers %.3f%% (throughput +%.3f%%)\n",
		       a, 100 * json_real_value(json_object_get(stall, "sync_frac")),
		       100 * json_real_value(json_object_get(stall, "staged_frac")),
		       100 * json_real_value(json_object_get(stall, "recovered_frac")),
		       100 * json_real_value(json_object_get(stall, "staging_gain_frac")));
		if (!json_is_true(json_object_get(stall, "copy_keeps_up")))
			printf("# warning: the background copy does not finish before the next checkpoint: staging cannot keep up at this interval\n");
	} else {
		/* the reason stall_json() recorded: no --interval, or a block not
		 * shorter than it */
		const char *why = stall ? json_string_value(json_object_get(stall, "judged")) : NULL;
		printf("# stall fraction: %s\n", why ? why : "not judged: no --interval");
	}
	(void)b;
	if (v) {
		long checked = 0, bad = 0;
		const char *k;
		json_t *x;
		json_object_foreach(v, k, x) {
			checked += (long)json_integer_value(json_object_get(x, "files_checked"));
			bad += (long)json_integer_value(json_object_get(x, "files_bad"));
		}
		printf("# read-back: %ld of %ld files intact (zlib crc32 and length)%s\n", checked - bad, checked,
		       bad ? ": FAIL" : "");
	}
	fflush(stdout);
}

/* ---- the run */

static int sync_phase(struct ctx *c, json_t **summary)
{
	double rec[R_N];
	int rc;

	c->phase = "synchronous checkpoint";
	write_files(c, "sync", 1, 1, rec);
	if ((rc = gather(c, rec)))
		return rc;
	if (c->rank == 0) {
		*summary = strategy_json(c, "synchronous", 0);
		save(c, "sync", json_incref(*summary));
	}
	return phase_status(c, rec, "sync", "synchronous checkpoint");
}

/* all ranks: the synchronous checkpoint written again (--repeat), each a
 * fresh measurement: the previous files removed, new ones written and
 * fsynced; rank 0 records each under results.sync.again[] (the first write
 * stays results.sync's own figures) */
static int sync_again(struct ctx *c, json_t *summary)
{
	double rec[R_N];
	long i;
	int rc = 0;

	for (i = 1; i < c->o->repeat && !rc; i++) {
		c->phase = "synchronous checkpoint written again";
		unlink_own(c, "sync");
		write_files(c, "sync", 1, 1, rec);
		if ((rc = gather(c, rec)))
			break;
		if (c->rank == 0) {
			json_t *s = strategy_json(c, "synchronous", 0), *again;
			json_t *e = json_pack("{s:i, s:O, s:O, s:O, s:O, s:O}", "write", (int)i + 1, "bytes",
					      json_object_get(s, "bytes"), "block_sec", json_object_get(s, "block_sec"),
					      "agg_write_gbps", json_object_get(s, "agg_write_gbps"), "slowest",
					      json_object_get(s, "slowest"), "per_rank", json_object_get(s, "per_rank"));
			json_decref(s);
			/* results.sync is in the result the watchdog may finish meanwhile */
			ch_ar_wd_lock(c->w);
			if (!(again = json_object_get(summary, "again")))
				json_object_set_new(summary, "again", again = json_array());
			json_array_append_new(again, e);
			ch_result_checkpoint(c->res);
			ch_ar_wd_unlock(c->w);
		}
		rc = phase_status(c, rec, "sync", "synchronous checkpoint written again");
	}
	return rc;
}

static int stall_json(struct ctx *c)
{
	struct ch_ckpt_stall s;
	double sb = json_real_value(json_object_get(json_object_get(c->jres, "sync"), "block_sec"));
	double tb = json_real_value(json_object_get(json_object_get(c->jres, "staged"), "block_sec"));
	double cp = json_real_value(json_object_get(json_object_get(c->jres, "staged"), "copy_sec"));

	if (c->o->interval_sec <= 0) {
		save(c, "stall", json_pack("{s:n, s:n, s:s}", "interval_sec", "sync_frac", "judged", "not judged: no --interval"));
		return 0;
	}
	if (ch_ckpt_stall_compute(sb, tb, cp, c->o->interval_sec, &s)) {
		char why[200];
		snprintf(why, sizeof(why), "not judged: a checkpoint blocks %.3g s (synchronous; staged %.3g s), not less than --interval %.3g s",
			 sb, tb, c->o->interval_sec);
		save(c, "stall", json_pack("{s:f, s:n, s:s}", "interval_sec", c->o->interval_sec, "sync_frac", "judged", why));
		return 0;
	}
	save(c, "stall", json_pack("{s:f, s:f, s:f, s:f, s:f, s:f, s:b, s:s, s:s}", "interval_sec", c->o->interval_sec,
				   "sync_frac", s.sync_frac, "staged_frac", s.staged_frac, "recovered_frac",
				   s.recovered_frac, "sync_gain_frac", s.sync_gain_frac, "staging_gain_frac",
				   s.staging_gain_frac, "copy_keeps_up", s.copy_keeps_up, "judged", "measured",
				   "formula", "frac = block_sec / interval_sec; gain = 1 / (1 - frac) - 1 (docs/canary.md)"));
	return 0;
}

static int setup(struct ctx *c)
{
	uint64_t f0, f1;
	size_t i;
	int rc = 0, f;

	c->total = c->o->size_bytes;
	c->shard = ch_ckpt_shard_bytes(c->total, c->size, c->rank);
	if (c->total < (uint64_t)c->size * (uint64_t)c->nfiles) {
		if (c->rank == 0)
			ch_usage_error("a %llu-byte checkpoint cannot give each of %d ranks %d file%s of at least one byte",
				       (unsigned long long)c->total, c->size, c->nfiles, c->nfiles == 1 ? "" : "s");
		return CH_ERR_USAGE;
	}
	if (c->o->corrupt_rank >= c->size) {
		if (c->rank == 0)
			ch_usage_error("--test-corrupt-rank %ld is not a rank of this run (0 to %d)", c->o->corrupt_rank, c->size - 1);
		return CH_ERR_USAGE;
	}
	snprintf(c->dir, sizeof(c->dir), "%s", c->o->dir);
	if (c->o->stage_dir) {
		snprintf(c->stage, sizeof(c->stage), "%s", c->o->stage_dir);
	} else {
		struct stat st;
		const char *base = stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) && access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
		snprintf(c->stage, sizeof(c->stage), "%s/checkpoint_io-stage.%ld", base, ch_ar_world_info(c->w, 0)->pid);
		c->stage_default = 1;
	}
	if ((rc = prepare_dirs(c)))
		return rc;
	__atomic_store_n(&c->owns_dirs, 1, __ATOMIC_RELEASE);
	/* the GPU, the buffer, the checksums */
	c->gpu = ch_ckpt_gpu_find(c->gpu_why, sizeof(c->gpu_why));
	if (c->o->load == CH_CKPT_LOAD_GPU && !c->gpu) {
		if (c->rank == 0)
			ch_error("--load gpu: %s", c->gpu_why);
		rc = CH_ERR_UNAVAILABLE;
	}
	c->use_cpu = c->o->load == CH_CKPT_LOAD_AUTO || c->o->load == CH_CKPT_LOAD_CPU;
	c->use_gpu = c->gpu && (c->o->load == CH_CKPT_LOAD_AUTO || c->o->load == CH_CKPT_LOAD_GPU);
	if (rc == 0)
		rc = ch_ckpt_buf_alloc(&c->buf, (size_t)c->shard, c->local_rank, c->gpu,
				       c->shard < GPU_LOAD_BYTES ? (size_t)c->shard : GPU_LOAD_BYTES, c->gpu_why);
	if (rc == 0 && c->use_gpu && !c->buf.gpu_ctx) {
		if (c->o->load == CH_CKPT_LOAD_GPU) {
			ch_error("rank %d: --load gpu: %s", c->rank, c->buf.why);
			rc = CH_ERR_UNAVAILABLE;
		}
		c->use_gpu = 0; /* auto: the CPU load alone */
	}
	c->scratch_bytes = c->o->block_bytes < SCRATCH_MAX ? (size_t)c->o->block_bytes : SCRATCH_MAX;
	c->scratch = rc == 0 ? malloc(c->scratch_bytes) : NULL;
	c->crc = rc == 0 ? calloc((size_t)c->nfiles, sizeof(*c->crc)) : NULL;
	if (rc == 0 && (!c->scratch || !c->crc)) {
		ch_error("out of memory");
		rc = CH_ERR_RUNTIME;
	}
	if (rc == 0) {
		ch_ckpt_fill(c->buf.p, c->buf.bytes, (uint64_t)c->rank + 1);
		for (f = 0; f < c->nfiles; f++) {
			uLong crc = crc32(0L, Z_NULL, 0);
			f0 = ch_ckpt_file_offset(c->shard, c->nfiles, f);
			f1 = ch_ckpt_file_offset(c->shard, c->nfiles, f + 1);
			for (i = 0; f0 + i < f1; i += 1u << 30) /* crc32 takes at most 4 GiB a call */
				crc = crc32(crc, c->buf.p + f0 + i, (uInt)(f1 - f0 - i < (1u << 30) ? f1 - f0 - i : (1u << 30)));
			c->crc[f] = (uint32_t)crc;
		}
	}
	c->order = writer_order(c);
	return ch_ar_world_agree(c->w, rc);
}

int ch_ckpt_run(struct ch_ar_world *w, const struct ch_ckpt_opts *o, int argc, char **argv)
{
	struct ctx *c = calloc(1, sizeof(*c));
	struct mounts *m = NULL;
	json_t *sync_summary = NULL, *jverify = NULL;
	pthread_t sigth;
	int rc = 0, sig_started = 0;

	if (!c) {
		ch_error("out of memory");
		return ch_ar_world_agree(w, CH_ERR_RUNTIME);
	}
	c->w = w;
	c->o = o;
	c->rank = ch_ar_world_rank(w);
	c->size = ch_ar_world_size(w);
	c->local_rank = ch_ar_world_info(w, c->rank)->local_rank;
	c->nfiles = (int)o->files_per_rank;
	ch_set_quiet(o->common.quiet);
	ch_ar_wd_enter(w, CH_AR_ACT_IDLE, "checking the result file");
	if (c->rank == 0) {
		rc = ch_run_begin_world("checkpoint_io", argc, argv, &o->common, ch_ar_world_base(w), &c->res);
		ch_ar_world_set_result(w, c->res); /* a hang in set-up finishes it (the guard) */
		if (rc == 0) {
			/* the staged phase: the load on the main thread, the copy thread */
			ch_run_set_threads(c->res, 2);
			c->jres = ch_result_results(c->res);
			c->all = calloc((size_t)c->size * R_N, sizeof(double));
			m = calloc((size_t)c->size, sizeof(*m));
			jverify = json_object();
			if (!c->all || !m || !jverify) {
				ch_error("out of memory");
				rc = CH_ERR_RUNTIME;
			}
		}
	}
	if ((rc = ch_ar_world_agree(w, rc)))
		goto out;
	if ((rc = ch_ar_world_agree(w, ch_ar_wd_start(w, o->timeout_sec, 0, NULL, c->res, o->common.json_path))))
		goto out;
	ch_ar_world_on_abort(w, on_abort, c); /* a timeout removes the files too */
	if (pthread_create(&sigth, NULL, signal_thread, c) == 0) {
		pthread_detach(sigth);
		sig_started = 1;
	}
	(void)sig_started;
	ch_clear_last_error();
	rc = setup(c);
	if (rc) {
		/* the reason in the file too: rank 0's own message, when it had one */
		if (c->rank == 0 && ch_last_error()[0])
			ch_result_finish(c->res, rc, "set-up failed: %s", ch_last_error());
		else if (c->rank == 0)
			ch_result_finish(c->res, rc, "set-up failed (see the message printed by the other ranks)");
		goto out_clean;
	}
	if ((rc = rank_table(c, m)))
		goto out;
	if (c->rank == 0) {
		json_t *cfg = json_pack("{s:s, s:s, s:b, s:I, s:i, s:I, s:o, s:f, s:b, s:s, s:b, s:i}", "dir", c->dir, "stage_dir",
					c->stage, "stage_dir_default", c->stage_default, "size_bytes", (json_int_t)c->total,
					"files_per_rank", c->nfiles, "block_bytes", (json_int_t)o->block_bytes, "interval_sec",
					o->interval_sec > 0 ? json_real(o->interval_sec) : json_null(), "timeout_sec",
					o->timeout_sec, "scaling", o->scaling, "load", ch_ckpt_load_name(o->load), "keep", o->keep,
					"repeat", (int)o->repeat);
		if (o->have_params)
			json_object_set_new(cfg, "params", json_pack("{s:f, s:f}", "params", o->params, "bytes_per_param", o->bytes_per_param));
		save(c, "config", cfg);
		save(c, "buffer", json_pack("{s:s, s:s, s:I}", "kind", c->buf.kind, "why_not_pinned", c->buf.why,
					    "bytes_rank0", (json_int_t)c->buf.bytes));
		ch_result_set_software(c->res, "zlib", zlibVersion());
	}
	/* the synchronous checkpoint, then its read-back */
	if ((rc = sync_phase(c, &sync_summary)))
		goto out_clean;
	if (c->rank == o->corrupt_rank) {
		char p[PATH_MAX];
		rc = ch_ckpt_corrupt_byte(name_of(c, p, sizeof(p), "sync", c->rank, 0),
					  ch_ckpt_file_offset(c->shard, c->nfiles, 1) / 2);
	}
	if ((rc = ch_ar_world_agree(w, rc)))
		goto out_clean;
	if ((rc = verify(c, "sync", "sync", jverify)))
		goto out_clean;
	if (o->repeat > 1 && (rc = sync_again(c, sync_summary)))
		goto out_clean;
	/* aggregate scaling, while the synchronous checkpoint stays on --dir (as a
	 * job keeps its previous checkpoint until the next is durable) */
	if ((rc = scaling(c, sync_summary)))
		goto out_clean;
	/* the staged checkpoint, its background copy and its read-back */
	if ((rc = staged(c)))
		goto out_clean;
	if ((rc = verify(c, "copy", "staged", jverify)))
		goto out_clean;
	c->phase = "report";
	if (c->rank == 0) {
		stall_json(c);
		print_report(c, m);
		ch_ar_wd_lock(w);
		if (c->status)
			rc = ch_result_finish(c->res, c->status, "a checkpoint file did not read back as written: %s", c->reason);
		else
			rc = ch_result_finish(c->res, 0, NULL);
		ch_ar_wd_unlock(w);
	}
	/* a result file that could not be written is a run-time error */
	rc = ch_ar_world_agree(w, rc ? rc : c->status);
out_clean:
	cleanup(c);
out:
	ch_ckpt_buf_release(&c->buf);
	free(c->scratch);
	free(c->crc);
	free(c->all);
	free(m);
	json_decref(sync_summary);
	json_decref(jverify);
	if (c->res) {
		/* the watchdog and the signal thread must not finish a freed result */
		ch_ar_world_set_result(w, NULL);
		ch_result_free(c->res);
		c->res = NULL;
	}
	/* c stays: the signal thread holds it until exit */
	return rc;
}
