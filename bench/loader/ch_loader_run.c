/*
 * ch_loader_run.c - one configuration of loader_contention on this machine.
 *
 * Per GPU: a bounded queue of batch slots in shared memory (process-shared
 * robust mutex and condition variables on CLOCK_MONOTONIC), `workers`
 * worker processes that fill free slots, and one feeder thread that wakes
 * at an absolute deadline (clock_nanosleep TIMER_ABSTIME), takes the oldest
 * ready batch, copies it to its device and returns the slot.
 *
 * The emulated device: each batch handed over gives it one step of work,
 * starting when the batch arrives or when the previous step ends, whichever
 * is later. The feeder's next deadline is the time the device runs out of
 * work. So the device idles exactly while the feeder is late (not
 * scheduled), blocked on the queue (input wait) or copying.
 */
#include "bench/loader/ch_loader_run.h"
#include "hw/ch_procfs.h"
#include "base/ch_common.h"
#include "base/ch_stats.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#define LC_MAX_SLOTS 256
#define LC_STALL_SEC 10.0 /* no batch for this long: a worker is stuck */

struct lc_queue {
	pthread_mutex_t mu;
	pthread_cond_t cv_free;  /* a slot became free */
	pthread_cond_t cv_ready; /* a batch became ready */
	int nslots;
	int stop;                /* workers: finish and exit */
	int recycle;             /* baseline: returned slots go back to ready */
	uint64_t next_seq;
	int nfree;
	int free_stack[LC_MAX_SLOTS];
	int rhead, rcount;
	int ready[LC_MAX_SLOTS];
	uint64_t seq[LC_MAX_SLOTS];
	uint32_t crc[LC_MAX_SLOTS];
	int bad[LC_MAX_SLOTS];
};

struct lc_wstat {
	double cpu_sec;
	long nivcsw;
	long batches;
	int done;
};

struct lc_shm {
	size_t bytes;
	struct lc_queue *q;      /* ngpus */
	struct lc_wstat *w;      /* ngpus x workers */
	unsigned char *payload;  /* ngpus x nslots x batch bytes */
	size_t slot_bytes;
};

/* Start gate: the feeders bind, check in, and start together. */
struct lc_gate {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int nready;
	int go;       /* 0 wait, 1 run, -1 abort */
	double t0;    /* first deadline, set before go = 1 */
};

struct lc_feeder {
	struct ch_lc_env *env;
	const struct ch_lc_cfg *cfg;
	struct lc_shm *shm;
	int gpu;
	int steps;
	struct lc_gate *gate;
	volatile int *abort_flag;
	/* results */
	double *late_us, *wait_us, *copy_us;
	double *end_s;           /* each step's end (the device's busy_until), s after t0 */
	int done_steps;
	double wall_sec, busy_sec, wait_sec;
	double runq_ns, nivcsw;  /* < 0 unknown */
	long bad;
	int rc;
	volatile int finished;
};

/* ------------------------------------------------------------ helpers */

static void ts_from_sec(double s, struct timespec *ts)
{
	ts->tv_sec = (time_t)s;
	ts->tv_nsec = (long)((s - (double)ts->tv_sec) * 1e9);
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
	if (ts->tv_nsec < 0)
		ts->tv_nsec = 0;
}

static void sleep_until(double t)
{
	struct timespec ts;
	ts_from_sec(t, &ts);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static void qlock(struct lc_queue *q)
{
	int e = pthread_mutex_lock(&q->mu);
	if (e == EOWNERDEAD) /* a worker died holding it: the queue is still consistent enough to stop */
		pthread_mutex_consistent(&q->mu);
}

static int qwait(pthread_cond_t *cv, struct lc_queue *q, double until)
{
	struct timespec ts;
	int e;
	ts_from_sec(until, &ts);
	e = pthread_cond_timedwait(cv, &q->mu, &ts);
	if (e == EOWNERDEAD)
		pthread_mutex_consistent(&q->mu);
	return e;
}

static int queue_init(struct lc_queue *q, int nslots)
{
	pthread_mutexattr_t ma;
	pthread_condattr_t ca;
	int i, e = 0;

	memset(q, 0, sizeof(*q));
	e |= pthread_mutexattr_init(&ma);
	e |= pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	e |= pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST);
	e |= pthread_mutex_init(&q->mu, &ma);
	pthread_mutexattr_destroy(&ma);
	e |= pthread_condattr_init(&ca);
	e |= pthread_condattr_setpshared(&ca, PTHREAD_PROCESS_SHARED);
	e |= pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	e |= pthread_cond_init(&q->cv_free, &ca);
	e |= pthread_cond_init(&q->cv_ready, &ca);
	pthread_condattr_destroy(&ca);
	q->nslots = nslots;
	q->nfree = nslots;
	for (i = 0; i < nslots; i++)
		q->free_stack[i] = nslots - 1 - i;
	return e ? CH_ERR_RUNTIME : 0;
}

static void queue_destroy(struct lc_queue *q)
{
	pthread_cond_destroy(&q->cv_free);
	pthread_cond_destroy(&q->cv_ready);
	pthread_mutex_destroy(&q->mu);
}

static unsigned char *slot_ptr(struct lc_shm *s, int gpu, int slot, int nslots)
{
	return s->payload + ((size_t)gpu * (size_t)nslots + (size_t)slot) * s->slot_bytes;
}

static int bind_set(hwloc_topology_t topo, hwloc_const_bitmap_t set, int flags, const char *what)
{
	char buf[256];
	if (hwloc_bitmap_iszero(set))
		return 0;
	if (hwloc_set_cpubind(topo, set, flags) != 0) {
		ch_error("cannot bind %s to CPUs '%s': %s", what,
			 hwloc_bitmap_list_snprintf(buf, sizeof(buf), set) >= 0 ? buf : "?", strerror(errno));
		return CH_ERR_RUNTIME;
	}
	return 0;
}

static void membind(hwloc_topology_t topo, int numa_os, const void *addr, size_t len)
{
	hwloc_obj_t node;
	static int warned;
	if (numa_os < 0)
		return;
	node = hwloc_get_numanode_obj_by_os_index(topo, (unsigned)numa_os);
	if (!node)
		return;
	if ((addr ? hwloc_set_area_membind(topo, addr, len, node->nodeset, HWLOC_MEMBIND_BIND,
					   HWLOC_MEMBIND_BYNODESET)
		  : hwloc_set_membind(topo, node->nodeset, HWLOC_MEMBIND_BIND, HWLOC_MEMBIND_BYNODESET)) != 0 &&
	    !warned) {
		warned = 1;
		ch_warn("cannot bind memory to NUMA node %d (%s): first-touch placement is used", numa_os,
			strerror(errno));
	}
}

/* ------------------------------------------------------------- workers */

static void die_with_parent(pid_t parent)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(0);
}

static void worker_main(struct ch_lc_env *env, const struct ch_lc_cfg *cfg, struct lc_shm *s,
			int gpu, int widx, pid_t parent)
{
	const struct ch_lc_place *pl = &cfg->plan->gpu[gpu];
	struct lc_queue *q = &s->q[gpu];
	struct lc_wstat *ws = &s->w[gpu * cfg->workers + widx];
	struct ch_lc_scratch sc;
	struct rusage ru;
	long made = 0;

	die_with_parent(parent);
	if (pl->bind && bind_set(env->topo, pl->worker_cpus, HWLOC_CPUBIND_PROCESS, "a worker") != 0)
		_exit(3);
	if (pl->bind)
		membind(env->topo, pl->mem_numa_os, NULL, 0);
	if (ch_lc_scratch_init(&sc) != 0)
		_exit(4);
	for (;;) {
		int slot, rc;
		uint64_t seq;
		uint32_t crc = 0;

		qlock(q);
		while (!q->stop && q->nfree == 0)
			qwait(&q->cv_free, q, ch_now_sec() + 0.1);
		if (q->stop) {
			pthread_mutex_unlock(&q->mu);
			break;
		}
		slot = q->free_stack[--q->nfree];
		seq = q->next_seq++;
		pthread_mutex_unlock(&q->mu);

		rc = ch_lc_batch_make(&env->shard, seq, env->units, &sc,
				      (int32_t *)slot_ptr(s, gpu, slot, q->nslots), env->ntok, &crc);

		qlock(q);
		q->seq[slot] = seq;
		q->crc[slot] = crc;
		q->bad[slot] = rc != 0;
		q->ready[(q->rhead + q->rcount) % q->nslots] = slot;
		q->rcount++;
		pthread_cond_signal(&q->cv_ready);
		pthread_mutex_unlock(&q->mu);
		made++;
	}
	ch_lc_scratch_release(&sc);
	getrusage(RUSAGE_SELF, &ru);
	ws->cpu_sec = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 +
		      (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec * 1e-6;
	ws->nivcsw = ru.ru_nivcsw;
	ws->batches = made;
	ws->done = 1;
	_exit(0);
}

/* ----------------------------------------------------------------- hog */

static void hog_main(hwloc_topology_t topo, unsigned pu, double util, pid_t parent)
{
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	const double period = 0.010;
	volatile unsigned long spin = 0;
	double t;

	die_with_parent(parent);
	if (set) {
		hwloc_bitmap_only(set, pu);
		hwloc_set_cpubind(topo, set, HWLOC_CPUBIND_PROCESS);
		hwloc_bitmap_free(set);
	}
	t = ch_now_sec();
	for (;;) {
		double busy_end = t + util * period;
		while (ch_now_sec() < busy_end)
			spin++;
		t += period;
		if (util < 1.0)
			sleep_until(t);
		else
			t = ch_now_sec();
	}
}

/* -------------------------------------------------------------- feeder */

static int read_schedstat(double *wait_ns)
{
	char buf[256];
	uint64_t run, wait, sl;
	if (ch_proc_read_text("/proc/thread-self/schedstat", buf, sizeof(buf)) < 0 ||
	    ch_lc_parse_schedstat(buf, &run, &wait, &sl) != 0)
		return -1;
	*wait_ns = (double)wait;
	return 0;
}

static double thread_nivcsw(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_THREAD, &ru) != 0)
		return -1;
	return (double)ru.ru_nivcsw;
}

static void *feeder_main(void *arg)
{
	struct lc_feeder *f = arg;
	struct ch_lc_env *env = f->env;
	const struct ch_lc_place *pl = &f->cfg->plan->gpu[f->gpu];
	struct lc_queue *q = &f->shm->q[f->gpu];
	size_t bytes = env->ntok * sizeof(int32_t);
	double rq0 = 0, rq1 = 0, cs0, cs1, d, busy_until, t0, cap;
	int k, have_rq;

	f->rc = 0;
	if (pl->bind && bind_set(env->topo, pl->feeder_cpus, HWLOC_CPUBIND_THREAD, "a feeder thread") != 0)
		f->rc = CH_ERR_RUNTIME;
	pthread_mutex_lock(&f->gate->mu);
	f->gate->nready++;
	pthread_cond_broadcast(&f->gate->cv);
	while (f->gate->go == 0)
		pthread_cond_wait(&f->gate->cv, &f->gate->mu);
	t0 = f->gate->t0;
	pthread_mutex_unlock(&f->gate->mu);
	if (f->rc || f->gate->go < 0 || *f->abort_flag)
		goto out;
	cap = t0 + 3 * env->duration_sec + 1.0;
	have_rq = read_schedstat(&rq0) == 0;
	cs0 = thread_nivcsw();
	d = t0;
	busy_until = t0;
	for (k = 0; k < f->steps; k++) {
		double tw, tr, tc, start;
		int slot, c;
		uint64_t seq;

		sleep_until(d);
		tw = ch_now_sec();
		qlock(q);
		while (q->rcount == 0 && !*f->abort_flag) {
			if (ch_now_sec() - tw > LC_STALL_SEC) {
				pthread_mutex_unlock(&q->mu);
				ch_error("feeder %d got no batch for %.0f s from %d worker(s): a worker is stuck",
					 f->gpu, LC_STALL_SEC, f->cfg->workers);
				f->rc = CH_ERR_RUNTIME;
				*f->abort_flag = 1;
				goto out;
			}
			qwait(&q->cv_ready, q, ch_now_sec() + 0.05);
		}
		if (*f->abort_flag) {
			pthread_mutex_unlock(&q->mu);
			f->rc = CH_ERR_RUNTIME;
			goto out;
		}
		slot = q->ready[q->rhead];
		q->rhead = (q->rhead + 1) % q->nslots;
		q->rcount--;
		seq = q->seq[slot];
		pthread_mutex_unlock(&q->mu);
		tr = ch_now_sec();

		if (env->copy->copy(env->copy_ctx[f->gpu], slot_ptr(f->shm, f->gpu, slot, q->nslots), bytes) != 0) {
			f->rc = CH_ERR_RUNTIME;
			*f->abort_flag = 1;
			goto out;
		}
		tc = ch_now_sec();
		start = tc > busy_until ? tc : busy_until;
		busy_until = start + env->step_sec;
		f->busy_sec += env->step_sec;
		f->end_s[k] = busy_until - t0;
		f->late_us[k] = (tw - d) * 1e6;
		f->wait_us[k] = (tr - tw) * 1e6;
		f->copy_us[k] = (tc - tr) * 1e6;
		f->wait_sec += tr - tw;

		/* validation, off the timed path: the device has its step of work */
		c = (int)((seq * (uint64_t)env->units) % CH_LC_NCHUNKS);
		if (q->bad[slot] ||
		    (uint32_t)crc32(0L, env->copy->staged(env->copy_ctx[f->gpu]), (uInt)bytes) != env->expect[c])
			f->bad++;
		else if (env->copy->check && (k == 0 || k % 16 == 15) &&
			 env->copy->check(env->copy_ctx[f->gpu], bytes) == CH_ERR_CHECK)
			f->bad++;

		qlock(q);
		if (q->recycle) {
			q->ready[(q->rhead + q->rcount) % q->nslots] = slot;
			q->rcount++;
		} else {
			q->free_stack[q->nfree++] = slot;
			pthread_cond_signal(&q->cv_free);
		}
		pthread_mutex_unlock(&q->mu);
		f->done_steps = k + 1;
		d = busy_until;
		if (ch_now_sec() > cap)
			break;
	}
	f->wall_sec = busy_until - t0;
	cs1 = thread_nivcsw();
	f->nivcsw = (cs0 >= 0 && cs1 >= 0) ? cs1 - cs0 : -1;
	f->runq_ns = (have_rq && read_schedstat(&rq1) == 0) ? rq1 - rq0 : -1;
out:
	f->finished = 1;
	return NULL;
}

/* ---------------------------------------------------------------- proc */

struct lc_proc_snap {
	int have_stat, have_psi;
	struct ch_proc_cpu_times cpu;
	double psi_avg10;
	uint64_t psi_total_us;
	double t;
};

static void proc_snap(struct lc_proc_snap *s)
{
	char buf[8192];
	s->t = ch_now_sec();
	s->have_stat = ch_proc_read_text("/proc/stat", buf, sizeof(buf)) > 0 &&
		       ch_proc_parse_stat(buf, &s->cpu, NULL) == 0;
	s->have_psi = ch_proc_read_text("/proc/pressure/cpu", buf, sizeof(buf)) > 0 &&
		      ch_proc_parse_psi(buf, &s->psi_avg10, &s->psi_total_us) == 0;
}

/* ---------------------------------------------------------- the config */

int ch_lc_env_expect(struct ch_lc_env *env)
{
	struct ch_lc_scratch sc;
	int32_t *out = malloc(env->ntok * sizeof(int32_t));
	int seq, rc = 0;

	if (!out || ch_lc_scratch_init(&sc) != 0) {
		free(out);
		return CH_ERR_RUNTIME;
	}
	for (seq = 0; seq < CH_LC_NCHUNKS && !rc; seq++) {
		int c = (int)(((uint64_t)seq * (uint64_t)env->units) % CH_LC_NCHUNKS);
		rc = ch_lc_batch_make(&env->shard, (uint64_t)seq, env->units, &sc, out, env->ntok, &env->expect[c]);
	}
	ch_lc_scratch_release(&sc);
	free(out);
	return rc;
}

static void stop_children(pid_t *pids, int n, int sig)
{
	int i;
	for (i = 0; i < n; i++)
		if (pids[i] > 0 && sig)
			kill(pids[i], sig);
}

/* Reap @pids (those still > 0) within @timeout seconds, then SIGKILL. */
static void reap(pid_t *pids, int n, double timeout)
{
	double end = ch_now_sec() + timeout;
	int left, i, st;

	for (;;) {
		left = 0;
		for (i = 0; i < n; i++) {
			if (pids[i] <= 0)
				continue;
			if (waitpid(pids[i], &st, WNOHANG) == pids[i])
				pids[i] = 0;
			else
				left++;
		}
		if (!left)
			return;
		if (ch_now_sec() > end) {
			stop_children(pids, n, SIGKILL);
			for (i = 0; i < n; i++)
				if (pids[i] > 0) {
					waitpid(pids[i], &st, 0);
					pids[i] = 0;
				}
			return;
		}
		usleep(2000);
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Everything one configuration starts and owns, from run_map() to
 * run_release(). Lives on ch_lc_run_config()'s stack: the feeders point
 * into it. */
struct lc_run {
	struct ch_lc_env *env;
	const struct ch_lc_cfg *cfg;
	int G, W;              /* feeders; workers per feeder */
	int nslots, steps;     /* queue slots per GPU; steps per feeder */
	size_t slot_bytes;
	struct lc_shm shm;
	void *mem;             /* the mapping behind shm, or MAP_FAILED */
	pid_t parent;
	pid_t *wpid, *hpid;    /* workers, hogs (0: reaped) */
	int nw, nh;
	struct lc_feeder *fd;  /* G */
	pthread_t *th;         /* G */
	struct lc_gate gate;
	volatile int abort_flag;
	struct lc_proc_snap p0, p1; /* /proc at the start and the end of the window */
	hwloc_bitmap_t hogset;
};

/* Unknown until measured: every "< 0 unknown" metric starts at -1. */
static void metrics_init(struct ch_lc_metrics *m)
{
	memset(m, 0, sizeof(*m));
	m->runq_delay_us = m->invol_ctx_switches = m->worker_invol_ctx_switches = -1;
	m->psi_some_avg10 = m->psi_some_frac = m->host_cpu_util = m->steal_frac = -1;
}

/* Queue slots per GPU and steps per feeder. */
static void run_sizes(struct lc_run *run)
{
	const struct ch_lc_env *env = run->env;

	run->nslots = run->W > 0 ? run->W * env->prefetch : env->prefetch;
	if (run->nslots < 2)
		run->nslots = 2;
	if (run->nslots > LC_MAX_SLOTS)
		run->nslots = LC_MAX_SLOTS;
	run->steps = (int)(env->duration_sec / env->step_sec + 0.5);
	if (run->steps < 5)
		run->steps = 5;
}

/* Shared memory: queues, worker stats, then page-aligned payload. Returns
 * 0 or CH_ERR_RUNTIME (printed); on a failed mapping nothing is left to
 * release. */
static int run_map(struct lc_run *run)
{
	int G = run->G, W = run->W, nslots = run->nslots, g;
	size_t slot_bytes = run->slot_bytes, hdr;
	struct lc_shm *shm = &run->shm;

	hdr = (size_t)G * sizeof(struct lc_queue) + (size_t)G * (size_t)(W > 0 ? W : 1) * sizeof(struct lc_wstat);
	hdr = (hdr + 4095) & ~(size_t)4095;
	shm->slot_bytes = slot_bytes;
	shm->bytes = hdr + (size_t)G * (size_t)nslots * slot_bytes;
	run->mem = mmap(NULL, shm->bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (run->mem == MAP_FAILED) {
		ch_error("cannot map %zu bytes of shared memory for the batch queues: %s", shm->bytes, strerror(errno));
		return CH_ERR_RUNTIME;
	}
	shm->q = run->mem;
	shm->w = (struct lc_wstat *)((char *)run->mem + (size_t)G * sizeof(struct lc_queue));
	shm->payload = (unsigned char *)run->mem + hdr;
	for (g = 0; g < G; g++) {
		const struct ch_lc_place *pl = &run->cfg->plan->gpu[g];
		if (pl->bind)
			membind(run->env->topo, pl->mem_numa_os, slot_ptr(shm, g, 0, nslots), (size_t)nslots * slot_bytes);
		memset(slot_ptr(shm, g, 0, nslots), 0, (size_t)nslots * slot_bytes);
		if (queue_init(&shm->q[g], nslots) != 0) {
			ch_error("cannot initialise the process-shared batch queue");
			return CH_ERR_RUNTIME;
		}
	}
	return 0;
}

/* The parent's tables of children and feeders. */
static int run_alloc(struct lc_run *run)
{
	run->wpid = calloc((size_t)run->G * (size_t)(run->W > 0 ? run->W : 1), sizeof(*run->wpid));
	run->hpid = calloc(CPU_SETSIZE, sizeof(*run->hpid));
	run->fd = calloc((size_t)run->G, sizeof(*run->fd));
	run->th = calloc((size_t)run->G, sizeof(*run->th));
	if (!run->wpid || !run->hpid || !run->fd || !run->th) {
		ch_error("out of memory");
		return CH_ERR_RUNTIME;
	}
	return 0;
}

/* Baseline: the parent makes one batch per slot; the feeder recycles them. */
static int baseline_fill(struct lc_run *run)
{
	struct ch_lc_env *env = run->env;
	struct ch_lc_scratch sc;
	int g, rc = 0, nslots = run->nslots;

	if (ch_lc_scratch_init(&sc) != 0)
		return CH_ERR_RUNTIME;
	for (g = 0; g < run->G && !rc; g++) {
		struct lc_queue *q = &run->shm.q[g];
		q->recycle = 1;
		while (q->nfree > 0 && !rc) {
			int slot = q->free_stack[--q->nfree];
			uint64_t seq = q->next_seq++;
			rc = ch_lc_batch_make(&env->shard, seq, env->units, &sc,
					      (int32_t *)slot_ptr(&run->shm, g, slot, nslots), env->ntok, &q->crc[slot]);
			q->seq[slot] = seq;
			q->ready[(q->rhead + q->rcount) % nslots] = slot;
			q->rcount++;
		}
	}
	ch_lc_scratch_release(&sc);
	if (rc)
		ch_error("a baseline batch failed its checksum while being made");
	return rc;
}

/* Fork cfg->workers worker processes per GPU. */
static int start_workers(struct lc_run *run)
{
	int g, i;

	fflush(NULL);
	for (g = 0; g < run->G; g++)
		for (i = 0; i < run->W; i++) {
			pid_t p = fork();
			if (p < 0) {
				ch_error("cannot fork worker %d of GPU %d: %s", i, g, strerror(errno));
				return CH_ERR_RUNTIME;
			}
			if (p == 0)
				worker_main(run->env, run->cfg, &run->shm, g, i, run->parent);
			run->wpid[run->nw++] = p;
		}
	return 0;
}

/* The hog: one process per worker CPU. */
static int start_hogs(struct lc_run *run)
{
	int pu, g, rc = 0;

	run->hogset = hwloc_bitmap_alloc();
	if (!run->hogset)
		return CH_ERR_RUNTIME;
	for (g = 0; g < run->G; g++)
		hwloc_bitmap_or(run->hogset, run->hogset, run->cfg->plan->gpu[g].worker_cpus);
	hwloc_bitmap_foreach_begin(pu, run->hogset)
		if (run->nh < CPU_SETSIZE) {
			pid_t p = fork();
			if (p < 0) {
				ch_error("cannot fork the hog: %s", strerror(errno));
				rc = CH_ERR_RUNTIME;
				break;
			}
			if (p == 0)
				hog_main(run->env->topo, (unsigned)pu, run->cfg->hog_util, run->parent);
			run->hpid[run->nh++] = p;
		}
	hwloc_bitmap_foreach_end();
	return rc;
}

/* Prefill: let the workers fill the queues (as a running loader's are),
 * for at most 2 s. */
static void prefill(struct lc_run *run)
{
	double end = ch_now_sec() + 2.0;
	int g;

	for (;;) {
		int full = 1;
		for (g = 0; g < run->G; g++)
			if (run->shm.q[g].rcount < run->nslots)
				full = 0;
		if (full || ch_now_sec() > end)
			break;
		usleep(2000);
	}
}

/* Start one feeder thread per GPU and open the gate together, taking the
 * first /proc snapshot. On a failure the started feeders are told to
 * abort and joined. */
static int start_feeders(struct lc_run *run)
{
	int g, rc = 0, started = 0;

	for (g = 0; g < run->G; g++) {
		struct lc_feeder *f = &run->fd[g];
		f->env = run->env;
		f->cfg = run->cfg;
		f->shm = &run->shm;
		f->gpu = g;
		f->steps = run->steps;
		f->gate = &run->gate;
		f->abort_flag = &run->abort_flag;
		f->late_us = calloc((size_t)run->steps, sizeof(double));
		f->wait_us = calloc((size_t)run->steps, sizeof(double));
		f->copy_us = calloc((size_t)run->steps, sizeof(double));
		f->end_s = calloc((size_t)run->steps, sizeof(double));
		if (!f->late_us || !f->wait_us || !f->copy_us || !f->end_s) {
			ch_error("out of memory");
			rc = CH_ERR_RUNTIME;
			break;
		}
		if (pthread_create(&run->th[g], NULL, feeder_main, f) != 0) {
			ch_error("cannot start feeder thread %d", g);
			rc = CH_ERR_RUNTIME;
			break;
		}
		started++;
	}
	pthread_mutex_lock(&run->gate.mu);
	while (run->gate.nready < started)
		pthread_cond_wait(&run->gate.cv, &run->gate.mu);
	if (!rc) {
		proc_snap(&run->p0);
		run->gate.t0 = ch_now_sec() + 0.002;
	}
	run->gate.go = rc ? -1 : 1;
	pthread_cond_broadcast(&run->gate.cv);
	pthread_mutex_unlock(&run->gate.mu);
	if (rc)
		for (g = 0; g < started; g++)
			pthread_join(run->th[g], NULL);
	return rc;
}

/* Watch the workers while the feeders run; a worker that exits aborts the
 * run. Then the last /proc snapshot, and join the feeders. */
static int watch(struct lc_run *run)
{
	int g, i, rc = 0;

	for (;;) {
		int done = 1;
		for (g = 0; g < run->G; g++)
			if (!run->fd[g].finished)
				done = 0;
		if (done)
			break;
		for (i = 0; i < run->nw; i++) {
			int st;
			if (run->wpid[i] > 0 && waitpid(run->wpid[i], &st, WNOHANG) == run->wpid[i]) {
				ch_error("worker %d (pid %d) exited during the run (%s %d)", i, (int)run->wpid[i],
					 WIFSIGNALED(st) ? "signal" : "status", WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
				run->wpid[i] = 0;
				run->abort_flag = 1;
				rc = CH_ERR_RUNTIME;
			}
		}
		usleep(10000);
	}
	proc_snap(&run->p1);
	for (g = 0; g < run->G; g++)
		pthread_join(run->th[g], NULL);
	for (g = 0; g < run->G; g++)
		if (run->fd[g].rc && !rc)
			rc = run->fd[g].rc;
	return rc;
}

/* Stop and reap everything this configuration started. */
static void stop_all(struct lc_run *run)
{
	int g;

	if (run->shm.q)
		for (g = 0; g < run->G; g++) {
			qlock(&run->shm.q[g]);
			run->shm.q[g].stop = 1;
			pthread_cond_broadcast(&run->shm.q[g].cv_free);
			pthread_mutex_unlock(&run->shm.q[g].mu);
		}
	if (run->hpid) {
		stop_children(run->hpid, run->nh, SIGKILL);
		reap(run->hpid, run->nh, 5.0);
	}
	if (run->wpid)
		reap(run->wpid, run->nw, 5.0);
}

/* ------------------------------------------------------------ metrics */

enum lc_series { LC_LATE, LC_WAIT, LC_COPY };

/* The samples of @which of every feeder, in GPU order, into @all, sorted.
 * Returns their number. */
static int pool_sorted(const struct lc_run *run, enum lc_series which, double *all)
{
	int g, n = 0;

	for (g = 0; g < run->G; g++) {
		const struct lc_feeder *f = &run->fd[g];
		const double *x = which == LC_LATE ? f->late_us : which == LC_WAIT ? f->wait_us : f->copy_us;
		memcpy(all + n, x, (size_t)f->done_steps * sizeof(double));
		n += f->done_steps;
	}
	qsort(all, (size_t)n, sizeof(double), cmp_double);
	return n;
}

/* The spread of the input wait and the accelerator utilisation over
 * repeats: each feeder's steps cut into CH_LC_REPEATS consecutive windows
 * of equal step counts, each window's figures computed as the whole run's
 * are (its waits and its device busy time over its wall time, the mean over
 * feeders), and their sample standard deviations over the windows into
 * @m. NAN when a feeder has fewer than 2 steps per window. */
static void repeat_spread(const struct lc_run *run, struct ch_lc_metrics *m)
{
	double w[CH_LC_REPEATS] = { 0 }, u[CH_LC_REPEATS] = { 0 }, mw = 0, mu = 0, vw = 0, vu = 0;
	int G = run->G, g, r, R = CH_LC_REPEATS;

	m->repeats = R;
	m->input_wait_frac_sd = m->accel_util_sd = NAN;
	for (g = 0; g < G; g++)
		if (run->fd[g].done_steps < 2 * R)
			return;
	for (g = 0; g < G; g++) {
		const struct lc_feeder *f = &run->fd[g];
		for (r = 0; r < R; r++) {
			int k0 = r * f->done_steps / R, k1 = (r + 1) * f->done_steps / R, k;
			double wall = f->end_s[k1 - 1] - (k0 ? f->end_s[k0 - 1] : 0), wait = 0;
			if (!(wall > 0))
				return;
			for (k = k0; k < k1; k++)
				wait += f->wait_us[k] / 1e6;
			w[r] += wait / wall / G;
			u[r] += (k1 - k0) * run->env->step_sec / wall / G;
		}
	}
	for (r = 0; r < R; r++) {
		mw += w[r] / R;
		mu += u[r] / R;
	}
	for (r = 0; r < R; r++) {
		vw += (w[r] - mw) * (w[r] - mw) / (R - 1);
		vu += (u[r] - mu) * (u[r] - mu) / (R - 1);
	}
	m->input_wait_frac_sd = sqrt(vw);
	m->accel_util_sd = sqrt(vu);
}

/* The feeders' sums and means, and their run-queue and context-switch
 * counts (unknown when any feeder's is). */
static void feeder_metrics(const struct lc_run *run, struct ch_lc_metrics *m)
{
	int G = run->G, g, total = 0, runq_ok = 1, csw_ok = 1;
	double runq = 0, csw = 0, wall = 0;

	for (g = 0; g < G; g++)
		total += run->fd[g].done_steps;
	m->steps = total;
	for (g = 0; g < G; g++) {
		const struct lc_feeder *f = &run->fd[g];
		double fw = f->wall_sec > 0 ? f->wall_sec : 1e-9;
		wall += f->wall_sec / G;
		m->input_wait_frac += (f->wait_sec / fw) / G;
		m->accel_util += (f->busy_sec / fw) / G;
		m->batches_per_sec += f->done_steps / fw;
		m->bad_batches += f->bad;
		if (f->runq_ns < 0)
			runq_ok = 0;
		else
			runq += f->runq_ns;
		if (f->nivcsw < 0)
			csw_ok = 0;
		else
			csw += f->nivcsw;
	}
	m->wall_sec = wall;
	repeat_spread(run, m);
	if (runq_ok && total > 0)
		m->runq_delay_us = runq / total / 1e3;
	if (csw_ok)
		m->invol_ctx_switches = csw;
}

/* Percentiles over every step of every feeder. Returns 0 or CH_ERR_RUNTIME. */
static int latency_metrics(const struct lc_run *run, struct ch_lc_metrics *m)
{
	double *all = malloc((size_t)(m->steps > 0 ? m->steps : 1) * sizeof(double));
	int n;

	if (!all)
		return CH_ERR_RUNTIME;
	n = pool_sorted(run, LC_LATE, all);
	if (n > 0) {
		m->late_p50_us = ch_percentile_sorted(all, (size_t)n, 50);
		m->late_p99_us = ch_percentile_sorted(all, (size_t)n, 99);
		m->late_max_us = all[n - 1];
	}
	n = pool_sorted(run, LC_WAIT, all);
	if (n > 0)
		m->wait_p99_us = ch_percentile_sorted(all, (size_t)n, 99);
	n = pool_sorted(run, LC_COPY, all);
	if (n > 0)
		m->copy_p50_us = ch_percentile_sorted(all, (size_t)n, 50);
	free(all);
	return 0;
}

/* The workers' CPU time and context switches (unknown when one did not
 * report), and the host's /proc counters over the window. */
static void host_metrics(const struct lc_run *run, struct ch_lc_metrics *m)
{
	const struct lc_proc_snap *p0 = &run->p0, *p1 = &run->p1;
	int i, GW = run->G * run->W;

	if (run->W > 0) {
		double wc = 0;
		for (i = 0; i < GW; i++) {
			if (!run->shm.w[i].done)
				break;
			wc += (double)run->shm.w[i].nivcsw;
			m->worker_cpu_sec += run->shm.w[i].cpu_sec;
		}
		m->worker_invol_ctx_switches = i == GW ? wc : -1;
	} else {
		m->worker_invol_ctx_switches = 0;
	}
	if (p0->have_stat && p1->have_stat)
		ch_proc_cpu_util(&p0->cpu, &p1->cpu, &m->host_cpu_util, &m->steal_frac);
	if (p1->have_psi) {
		m->psi_some_avg10 = p1->psi_avg10;
		if (p0->have_psi && p1->t > p0->t)
			m->psi_some_frac = (double)(p1->psi_total_us - p0->psi_total_us) / ((p1->t - p0->t) * 1e6);
	}
}

static void run_release(struct lc_run *run)
{
	int g;

	if (run->fd)
		for (g = 0; g < run->G; g++) {
			free(run->fd[g].late_us);
			free(run->fd[g].wait_us);
			free(run->fd[g].copy_us);
			free(run->fd[g].end_s);
		}
	free(run->fd);
	free(run->th);
	free(run->wpid);
	free(run->hpid);
	hwloc_bitmap_free(run->hogset);
	if (run->mem != MAP_FAILED) {
		for (g = 0; g < run->G; g++)
			queue_destroy(&run->shm.q[g]);
		munmap(run->mem, run->shm.bytes);
	}
}

/* Set up and measure: the children and feeders are running or reaped
 * when it returns; stop_all() reaps what is left. */
static int run_measure(struct lc_run *run)
{
	int rc;

	if ((rc = run_map(run)) != 0 || (rc = run_alloc(run)) != 0)
		return rc;
	if (run->W == 0 && (rc = baseline_fill(run)) != 0)
		return rc;
	if ((rc = start_workers(run)) != 0)
		return rc;
	if (run->cfg->hog_util > 0 && run->W > 0 && (rc = start_hogs(run)) != 0)
		return rc;
	if (run->W > 0)
		prefill(run);
	if ((rc = start_feeders(run)) != 0)
		return rc;
	return watch(run);
}

int ch_lc_run_config(struct ch_lc_env *env, const struct ch_lc_cfg *cfg, struct ch_lc_metrics *m)
{
	struct lc_run run = { .env = env, .cfg = cfg, .G = env->ngpus, .W = cfg->workers,
			      .slot_bytes = env->ntok * sizeof(int32_t), .mem = MAP_FAILED,
			      .parent = getpid(),
			      .gate = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0 } };
	int rc;

	metrics_init(m);
	run_sizes(&run);
	rc = run_measure(&run);
	if (run.mem == MAP_FAILED)
		return rc;
	stop_all(&run);
	if (!rc) {
		feeder_metrics(&run, m);
		rc = latency_metrics(&run, m);
		if (!rc)
			host_metrics(&run, m);
		else
			metrics_init(m); /* as on every other failure: nothing measured */
	}
	run_release(&run);
	return rc;
}
