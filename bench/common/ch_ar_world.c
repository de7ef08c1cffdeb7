/*
 * ch_ar_world.c - allreduce_bw's setup of the shared MPI world
 * (bench/common/ch_world.h), its polled control exchanges and the watchdog
 * (see ch_ar_world.h). This is the launcher layer that both backends run
 * under, so it uses MPI directly.
 */
#include <mpi.h>

#include <errno.h>
#include <fcntl.h>
#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench/common/ch_ar_world.h"
#include "bench/common/ch_world.h"
#include "bench/common/ch_opts.h"
#include "base/ch_common.h"
#include "base/ch_stats.h"

/* The watchdog's side channel (see ch_ar_world.h): UDP datagrams between
 * the ranks' monitoring threads, which never call MPI. */
#define WD_MAX_ADDRS 4
#define WD_PING_ANSWER_SEC 2.0   /* a live monitor answers a ping within this */
#define WD_TAKEOVER_SEC 1.0      /* the backup waits this long for rank 0 to act */
#define WD_REPLY_SEC 1.0         /* a coordinator collects states this long */
#define WD_RESEND_SEC 0.25

enum { MSG_REPORT = 1, MSG_STATE, MSG_REQUEST, MSG_DONE, MSG_PING, MSG_PONG, MSG_ABORT };

/* A rank's state, as bytes (homogeneous cluster). */
struct wd_report {
	int64_t rank, act, iter, phase, group, algo, size_index, place, bytes, elapsed_us;
	char what[320]; /* long enough for a file path (checkpoint_io) */
	char group_name[40];
	char algo_label[40];
};

struct wd_msg {
	int32_t magic, type, from, pad;
	uint64_t run_id;
	struct wd_report rep;
};

/* Where a rank's monitor listens. */
struct wd_addr {
	uint32_t ip[WD_MAX_ADDRS]; /* network byte order; [0] is loopback */
	uint16_t port;             /* network byte order */
	uint16_t nip;
};

struct ch_ar_world {
	struct ch_world base;      /* launch and rank layout */

	/* watchdog */
	pthread_t thread;
	pthread_t main_thread;     /* the thread that called ch_ar_world_init (MPI's) */
	int thread_started;
	int stop;                  /* atomic */
	double timeout_sec, coll_grace_sec;
	struct ch_ar_wd_groups groups; /* groups.members NULL: no groups to name */
	struct ch_result *res;
	char *json_path;           /* the backup's copy of --json */
	pthread_mutex_t doc_mutex;
	pthread_mutex_t where_mutex;
	struct ch_ar_where where;
	char gname[40], alabel[40];
	int act;                   /* atomic: enum ch_ar_act */
	int iter;                  /* atomic: also the timed loop's progress */
	const char *what;          /* atomic (pointer to a static string) */
	uint64_t seq;              /* atomic: bumped at every change of activity */
	int64_t since_ns;          /* atomic: when the monitor first saw the current seq or iter */
	int fire_now;              /* atomic: the main thread asks the monitor to fire */
	int64_t poll_ns;           /* atomic: the monitor's last poll */
	int64_t gap_ns, gap_at_ns; /* atomic: its last long gap between polls (stopped), and when it ended */

	/* the set-up guard: a local deadline from before MPI_Init until the
	 * watchdog runs, and again around MPI_Finalize */
	pthread_t guard;
	int guard_started;
	int guard_on;              /* atomic: 1 while the guard watches */
	int guard_stop;            /* atomic */
	double guard_sec;          /* the --timeout it keeps (0: none) */

	/* ch_ar_world_on_abort(): run once before an abort's exit */
	void (*on_abort)(void *ctx);
	void *on_abort_ctx;
	int aborting;              /* atomic: the hook has been claimed */

	/* side channel (monitor thread only, after ch_ar_wd_start) */
	int sock;
	uint64_t run_id;
	struct wd_addr *addrs;     /* size entries */
};

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void sleep_sec(double s)
{
	struct timespec ts;
	if (s <= 0)
		return;
	ts.tv_sec = (time_t)s;
	ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

const struct ch_world *ch_ar_world_base(const struct ch_ar_world *w) { return &w->base; }
int ch_ar_world_rank(const struct ch_ar_world *w) { return w->base.rank; }
int ch_ar_world_size(const struct ch_ar_world *w) { return w->base.size; }
int ch_ar_world_nhosts(const struct ch_ar_world *w) { return w->base.nhosts; }
int ch_ar_world_ctrl(const struct ch_ar_world *w) { return w->base.ctrl; }
int ch_ar_world_local(const struct ch_ar_world *w) { return w->base.local; }

const struct ch_world_rank *ch_ar_world_info(const struct ch_ar_world *w, int r)
{
	return ch_world_info(&w->base, r);
}

/* MPI (a singleton without a launcher), initialised with MPI_Init
 * (MPI_THREAD_SINGLE): only the main thread calls MPI; the watchdog's
 * thread never does. Open MPI (4.1, 5.0) turns its thread safety on for
 * every level above MPI_THREAD_SINGLE, FUNNELED included: a mutex and a
 * condition per wait (ompi_sync_wait_mt) in every call, which made the
 * all-reduce of 8 B-4 KiB slower than a plain MPI_Init loop's, with or
 * without the watchdog. Nodes from the shared-memory split,
 * host names of up to 63 bytes; except -g N without a launcher (one process
 * driving N GPUs, nccl-tests' single-process mode), which needs no MPI and
 * never initialises it (prescan_ngpus()). */
static const struct ch_world_how world_how = { .only_launched = 0, .funneled = 0, .hosts_by_name = 0,
					       .host_len = 64 };

/* -g N / --ngpus N (N >= 1) on the command line, before MPI_Init would parse
 * it (the real parse, later, reports a bad value): 1 when given */
static int prescan_ngpus(int argc, char **argv)
{
	int i;
	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *v = NULL;
		if (!strcmp(a, "--"))
			break;
		if ((!strcmp(a, "-g") || !strcmp(a, "--ngpus")) && i + 1 < argc)
			v = argv[i + 1];
		else if (!strncmp(a, "--ngpus=", 8))
			v = a + 8;
		else if (!strncmp(a, "-g", 2) && a[2])
			v = a + 2;
		if (v && atoi(v) >= 1)
			return 1;
	}
	return 0;
}

static void __attribute__((noreturn)) leave(struct ch_ar_world *w);
static int lock_doc_for(struct ch_ar_world *w, double sec);

static void stop_guard(struct ch_ar_world *w)
{
	if (!w->guard_started)
		return;
	__atomic_store_n(&w->guard_stop, 1, __ATOMIC_RELEASE);
	pthread_join(w->guard, NULL);
	w->guard_started = 0;
}

/* --timeout from the command line before MPI_Init parses it (the real
 * parse, later, reports a bad value): @dflt when absent or not a number */
static double prescan_timeout(int argc, char **argv, double dflt)
{
	double v = dflt;
	int i;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i], *val = NULL;
		char *end;
		double x;
		if (!strcmp(a, "--"))
			break;
		if (!strcmp(a, "--timeout") && i + 1 < argc)
			val = argv[++i];
		else if (!strncmp(a, "--timeout=", 10))
			val = a + 10;
		if (!val)
			continue;
		x = strtod(val, &end);
		if (end != val && !*end && x >= 0 && x <= 86400)
			v = x;
	}
	return v;
}

/* This process's world rank, from the launcher's environment before MPI
 * knows it; -1 when none says. */
static int launcher_rank(void)
{
	static const char *const vars[] = { "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID", NULL };
	int i;
	for (i = 0; vars[i]; i++)
		if (getenv(vars[i]))
			return atoi(getenv(vars[i]));
	return -1;
}

/* The guard fires: this rank exits with code 4 after rank 0 finished its
 * result file (when it has one). Never calls MPI. */
static void __attribute__((noreturn)) guard_fire(struct ch_ar_world *w, const char *what, double el)
{
	int rank = w->base.active ? w->base.rank : launcher_rank();
	char msg[512], host[256] = "?";

	if (w->base.active && w->base.info && w->base.info[w->base.rank].host[0])
		snprintf(host, sizeof(host), "%s", w->base.info[w->base.rank].host);
	else
		gethostname(host, sizeof(host) - 1);

	snprintf(msg, sizeof(msg),
		 "%s took more than --timeout %g s (%.0f s): a rank stopped or hung %s; every rank exits",
		 what, w->guard_sec, el,
		 __atomic_load_n(&w->thread_started, __ATOMIC_ACQUIRE) ? "while the run ended" :
		 "before the watchdog started");
	ch_error("rank %d (host '%s'): %s", rank, host, msg);
	if (rank == 0 && w->res) {
		int locked = lock_doc_for(w, 2.0);
		if (w->res)
			ch_result_finish(w->res, CH_ERR_RUNTIME, "rank 0: %s", msg);
		if (locked)
			pthread_mutex_unlock(&w->doc_mutex);
	}
	leave(w);
}

/* The set-up guard's thread: the clock restarts with every activity the
 * main thread enters (ch_ar_wd_enter()); one that lasts longer than
 * --timeout fires (guard_fire()). Paused while the watchdog runs. */
static void *guard(void *arg)
{
	struct ch_ar_world *w = arg;
	uint64_t last = __atomic_load_n(&w->seq, __ATOMIC_ACQUIRE);
	int64_t since = now_ns();

	while (!__atomic_load_n(&w->guard_stop, __ATOMIC_ACQUIRE)) {
		uint64_t seq = __atomic_load_n(&w->seq, __ATOMIC_ACQUIRE);
		double el;
		sleep_sec(0.05);
		if (seq != last || !__atomic_load_n(&w->guard_on, __ATOMIC_ACQUIRE)) {
			last = seq;
			since = now_ns();
			continue;
		}
		el = (double)(now_ns() - since) * 1e-9;
		if (el > w->guard_sec)
			guard_fire(w, __atomic_load_n(&w->what, __ATOMIC_ACQUIRE), el);
	}
	return NULL;
}

int ch_ar_world_init(int *argc, char ***argv, double default_timeout_sec, struct ch_ar_world **out)
{
	struct ch_ar_world *w = calloc(1, sizeof(*w));
	struct ch_world_how how;
	int rc;

	*out = NULL;
	if (!w) {
		ch_error("out of memory");
		return CH_ERR_RUNTIME;
	}
	pthread_mutex_init(&w->doc_mutex, NULL);
	pthread_mutex_init(&w->where_mutex, NULL);
	w->act = CH_AR_ACT_IDLE;
	w->main_thread = pthread_self();
	w->sock = -1;
	w->what = "MPI_Init and the rank layout";
	w->since_ns = now_ns();
	/* a rank stopped or hung in MPI_Init or any step before the watchdog
	 * runs holds the others in a collective: the guard bounds that too */
	w->guard_sec = prescan_timeout(*argc, *argv, default_timeout_sec);
	if (w->guard_sec > 0) {
		__atomic_store_n(&w->guard_on, 1, __ATOMIC_RELEASE);
		w->guard_started = pthread_create(&w->guard, NULL, guard, w) == 0;
	}
	/* Open MPI reads this at MPI_Init only; without it the per-communicator
	 * algorithm variable is ignored. Dynamic rules with no rules file and no
	 * forced algorithm fall back to the fixed rules, so "default" is unchanged. */
	setenv("OMPI_MCA_coll_tuned_use_dynamic_rules", "1", 0);
	how = world_how;
	how.only_launched = prescan_ngpus(*argc, *argv); /* -g N: MPI only under a launcher */
	if ((rc = ch_world_init(argc, argv, &how, &w->base)) != 0) {
		stop_guard(w);
		pthread_mutex_destroy(&w->doc_mutex);
		pthread_mutex_destroy(&w->where_mutex);
		free(w);
		return rc;
	}
	ch_ar_wd_enter(w, CH_AR_ACT_IDLE, "reading the options");
	*out = w;
	return 0;
}

void ch_ar_world_set_result(struct ch_ar_world *w, struct ch_result *res)
{
	if (lock_doc_for(w, 2.0)) {
		w->res = res;
		pthread_mutex_unlock(&w->doc_mutex);
	} else {
		w->res = res;
	}
}

int ch_ar_world_agree(struct ch_ar_world *w, int status)
{
	return ch_world_agree(&w->base, status);
}

int ch_ar_world_finalize(struct ch_ar_world *w, int status)
{
	if (!w)
		return ch_exit_code(status);
	w->res = NULL; /* freed by now: nothing finishes it any more */
	if (w->thread_started && w->base.rank == 0)
		ch_result_signal_reason(NULL, NULL);
	if (w->thread_started) {
		__atomic_store_n(&w->stop, 1, __ATOMIC_SEQ_CST);
		pthread_join(w->thread, NULL);
	}
	/* MPI_Finalize waits for every rank: a stopped one would hold the rest */
	ch_ar_wd_enter(w, CH_AR_ACT_MPI, "MPI_Finalize");
	__atomic_store_n(&w->guard_on, 1, __ATOMIC_RELEASE);
	if (w->sock >= 0)
		close(w->sock);
	free(w->addrs);
	free(w->json_path);
	fflush(stdout);
	ch_world_finalize(&w->base);
	stop_guard(w);
	pthread_mutex_destroy(&w->doc_mutex);
	pthread_mutex_destroy(&w->where_mutex);
	free(w);
	return ch_exit_code(status);
}

/* Lock the result document, giving up after @sec (a stuck main thread must
 * not stop the abort). Returns 1 when locked. */
static int lock_doc_for(struct ch_ar_world *w, double sec)
{
	double t0 = ch_now_sec();
	while (pthread_mutex_trylock(&w->doc_mutex) != 0) {
		if (ch_now_sec() - t0 > sec)
			return 0;
		sleep_sec(0.005);
	}
	return 1;
}

void ch_ar_world_on_abort(struct ch_ar_world *w, void (*fn)(void *ctx), void *ctx)
{
	w->on_abort_ctx = ctx;
	__atomic_store_n(&w->on_abort, fn, __ATOMIC_RELEASE);
}

/* the on-abort hook, once per process whichever thread gets here first */
static void run_on_abort(struct ch_ar_world *w)
{
	void (*fn)(void *) = __atomic_load_n(&w->on_abort, __ATOMIC_ACQUIRE);
	if (fn && !__atomic_exchange_n(&w->aborting, 1, __ATOMIC_ACQ_REL))
		fn(w->on_abort_ctx);
}

static void send_to(struct ch_ar_world *w, int to, int type, const struct wd_report *rep);

void ch_ar_world_tell_rank0(struct ch_ar_world *w, int status, const char *fmt, ...)
{
	struct wd_report rep;
	va_list ap;
	int k;

	/* rank 0 writes the result file: its monitor records why this rank
	 * ends, sent a few times (datagrams may be lost) */
	if (w->base.rank == 0 || !__atomic_load_n(&w->thread_started, __ATOMIC_ACQUIRE) || w->sock < 0)
		return;
	memset(&rep, 0, sizeof(rep));
	rep.rank = w->base.rank;
	rep.act = status;
	va_start(ap, fmt);
	vsnprintf(rep.what, sizeof(rep.what), fmt, ap);
	va_end(ap);
	for (k = 0; k < 3; k++) {
		send_to(w, 0, MSG_ABORT, &rep);
		sleep_sec(0.05);
	}
}

void ch_ar_world_abort(struct ch_ar_world *w, int status, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	int locked;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ch_error("rank %d (host '%s'): %s", w->base.rank, w->base.info[w->base.rank].host, msg);
	if (w->base.rank == 0 && w->res) {
		locked = lock_doc_for(w, 2.0);
		ch_result_finish(w->res, status, "rank 0: %s", msg);
		if (locked)
			pthread_mutex_unlock(&w->doc_mutex);
	} else {
		ch_ar_world_tell_rank0(w, status, "%s", msg);
	}
	run_on_abort(w);
	fflush(stdout);
	fflush(stderr);
	/* MPI is MPI_THREAD_FUNNELED: from another thread (a signal thread),
	 * exit without MPI; the launcher ends the other ranks */
	if (w->base.active && pthread_equal(pthread_self(), w->main_thread))
		MPI_Abort(MPI_COMM_WORLD, ch_exit_code(status));
	_exit(ch_exit_code(status));
}

/* ---- watchdog
 *
 * Each rank's monitoring thread watches its own main thread (activity,
 * sequence number, timed-loop progress) and talks to the other ranks'
 * monitors over UDP, never through MPI, so MPI runs MPI_THREAD_FUNNELED and
 * nothing is paid per call. Rank 0 coordinates; rank 1 is its backup when
 * rank 0 itself is stopped or hung. A coordinator asks every rank for its
 * state, names the ranks that never arrived, finishes the result file,
 * tells every rank to go, and exits with code 4: the launcher ends what is
 * left (mpirun ends the job when a rank exits non-zero). */

#define WD_MAGIC 0x43485744 /* "CHWD" */

void ch_ar_wd_lock(struct ch_ar_world *w) { pthread_mutex_lock(&w->doc_mutex); }
void ch_ar_wd_unlock(struct ch_ar_world *w) { pthread_mutex_unlock(&w->doc_mutex); }

int *ch_ar_wd_progress(struct ch_ar_world *w) { return &w->iter; }

void ch_ar_wd_where(struct ch_ar_world *w, const struct ch_ar_where *where)
{
	pthread_mutex_lock(&w->where_mutex);
	w->where = *where;
	snprintf(w->gname, sizeof(w->gname), "%s", where->group_name ? where->group_name : "-");
	snprintf(w->alabel, sizeof(w->alabel), "%s", where->algo_label ? where->algo_label : "-");
	w->where.group_name = w->gname;
	w->where.algo_label = w->alabel;
	pthread_mutex_unlock(&w->where_mutex);
}

/* No clock read here: the monitor notices the new sequence number and
 * starts the activity's clock itself, to within its polling period. */
void ch_ar_wd_enter(struct ch_ar_world *w, int act, const char *what)
{
	__atomic_store_n(&w->what, what, __ATOMIC_RELAXED);
	__atomic_store_n(&w->act, act, __ATOMIC_RELAXED);
	__atomic_add_fetch(&w->seq, 1, __ATOMIC_RELEASE);
}

void ch_ar_wd_mark(void *ctx, int iter, int in_call)
{
	struct ch_ar_world *w = ctx;
	__atomic_store_n(&w->iter, iter, __ATOMIC_RELAXED);
	if (in_call > 0)
		ch_ar_wd_enter(w, CH_AR_ACT_COLL, "the all-reduce");
	else if (in_call < 0)
		ch_ar_wd_enter(w, CH_AR_ACT_DELAY, "the injected delay");
	else
		ch_ar_wd_enter(w, CH_AR_ACT_LOCAL, "the timed loop");
}

static const char *place_name(int place)
{
	static const char *const names[] = { "out-of-place", "in-place", "out-of-place check", "in-place check" };
	return place >= 0 && place < 4 ? names[place] : "setup";
}

static void fill_report(struct ch_ar_world *w, struct wd_report *r)
{
	int64_t start = __atomic_load_n(&w->since_ns, __ATOMIC_RELAXED);
	const char *what = __atomic_load_n(&w->what, __ATOMIC_RELAXED);

	memset(r, 0, sizeof(*r));
	r->rank = w->base.rank;
	r->act = __atomic_load_n(&w->act, __ATOMIC_ACQUIRE);
	r->iter = __atomic_load_n(&w->iter, __ATOMIC_RELAXED);
	r->elapsed_us = (now_ns() - start) / 1000;
	snprintf(r->what, sizeof(r->what), "%s", what ? what : "-");
	pthread_mutex_lock(&w->where_mutex);
	r->phase = w->where.phase;
	r->group = w->where.group;
	r->algo = w->where.algo;
	r->size_index = w->where.size_index;
	r->place = w->where.place;
	r->bytes = (int64_t)w->where.bytes;
	snprintf(r->group_name, sizeof(r->group_name), "%s", w->gname);
	snprintf(r->algo_label, sizeof(r->algo_label), "%s", w->alabel);
	pthread_mutex_unlock(&w->where_mutex);
}

static int same_step(const struct wd_report *a, const struct wd_report *b)
{
	return a->phase == b->phase && a->algo == b->algo && a->size_index == b->size_index;
}

static void append(char *dst, size_t n, const char *fmt, ...)
{
	size_t len = strlen(dst);
	va_list ap;
	if (len >= n - 1)
		return;
	va_start(ap, fmt);
	vsnprintf(dst + len, n - len, fmt, ap);
	va_end(ap);
}

/* ---- side channel */

static void send_to(struct ch_ar_world *w, int to, int type, const struct wd_report *rep)
{
	struct wd_msg m;
	struct sockaddr_in sa;
	const struct wd_addr *a = &w->addrs[to];
	int same = w->base.info[to].host_node == w->base.info[w->base.rank].host_node, i;

	if (a->port == 0)
		return; /* that rank has no side channel */
	memset(&m, 0, sizeof(m));
	m.magic = WD_MAGIC;
	m.type = type;
	m.from = w->base.rank;
	m.run_id = w->run_id;
	if (rep)
		m.rep = *rep;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = a->port;
	/* same node: loopback; else every address of the other host */
	for (i = same ? 0 : 1; i < (same ? 1 : a->nip); i++) {
		sa.sin_addr.s_addr = a->ip[i];
		(void)sendto(w->sock, &m, sizeof(m), MSG_DONTWAIT, (struct sockaddr *)&sa, sizeof(sa));
	}
}

/* Wait up to @sec for one message; 1 when one arrived in @m. */
static int recv_msg(struct ch_ar_world *w, struct wd_msg *m, double sec)
{
	struct pollfd p = { .fd = w->sock, .events = POLLIN };
	ssize_t n;

	if (poll(&p, 1, (int)(sec * 1000)) <= 0)
		return 0;
	n = recv(w->sock, m, sizeof(*m), MSG_DONTWAIT);
	return n == (ssize_t)sizeof(*m) && m->magic == WD_MAGIC && m->run_id == w->run_id &&
	       m->from >= 0 && m->from < w->base.size;
}

/* Collect every rank's own IPv4 addresses (loopback first) and port. */
static int exchange_addrs(struct ch_ar_world *w)
{
	struct wd_addr me;
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	struct ifaddrs *ifs = NULL, *i;
	uint64_t id = 0;

	memset(&me, 0, sizeof(me));
	memset(&sa, 0, sizeof(sa));
	w->sock = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_ANY);
	if (w->sock < 0 || bind(w->sock, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    getsockname(w->sock, (struct sockaddr *)&sa, &len) != 0)
		me.port = 0; /* no side channel on this rank: it exits by itself on a hang */
	else
		me.port = sa.sin_port;
	me.ip[0] = htonl(INADDR_LOOPBACK);
	me.nip = 1;
	if (getifaddrs(&ifs) == 0) {
		for (i = ifs; i && me.nip < WD_MAX_ADDRS; i = i->ifa_next) {
			if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || (i->ifa_flags & IFF_LOOPBACK))
				continue;
			me.ip[me.nip++] = ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr;
		}
		freeifaddrs(ifs);
	}
	w->addrs = calloc((size_t)w->base.size, sizeof(*w->addrs));
	if (!w->addrs)
		return CH_ERR_RUNTIME;
	if (!w->base.active) /* a world of one without MPI */
		memcpy(w->addrs, &me, sizeof(me));
	else if (MPI_Allgather(&me, (int)sizeof(me), MPI_BYTE, w->addrs, (int)sizeof(me), MPI_BYTE,
			       MPI_Comm_f2c(w->base.ctrl)) != MPI_SUCCESS)
		return CH_ERR_RUNTIME;
	/* a run id, so that a stray datagram of another run is ignored */
	if (w->base.rank == 0)
		id = ((uint64_t)now_ns() << 16) ^ (uint64_t)getpid();
	if (w->base.active && MPI_Bcast(&id, 1, MPI_UINT64_T, 0, MPI_Comm_f2c(w->base.ctrl)) != MPI_SUCCESS)
		return CH_ERR_RUNTIME;
	w->run_id = id;
	return 0;
}

static void __attribute__((noreturn)) leave(struct ch_ar_world *w)
{
	run_on_abort(w);
	fflush(stdout);
	fflush(stderr);
	_exit(CH_EXIT_RUNTIME);
}

/* The backup's way to finish rank 0's result file: read what rank 0 last
 * wrote (after every size), mark it, write it back atomically. */
static void finish_on_disk(struct ch_ar_world *w, const char *msg, json_t *jt)
{
	json_error_t err;
	json_t *doc, *res;
	char now[32];

	if (!w->json_path) {
		json_decref(jt);
		return;
	}
	if (w->base.info[0].host_node != w->base.info[w->base.rank].host_node) {
		ch_error("rank %d: the result file '%s' is on rank 0's host; left as rank 0 last wrote it",
			 w->base.rank, w->json_path);
		json_decref(jt);
		return;
	}
	/* the path as rank 0 left it: never through a link, never blocking on
	 * a FIFO put there since, only a regular file */
	doc = NULL;
	snprintf(err.text, sizeof(err.text), "not a regular file");
	{
		int fd = open(w->json_path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
		struct stat st;
		if (fd < 0)
			snprintf(err.text, sizeof(err.text), "%s", strerror(errno));
		else if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
			doc = json_loadfd(fd, 0, &err);
		if (fd >= 0)
			close(fd);
	}
	if (!doc || !json_is_object(doc)) {
		ch_error("rank %d: cannot read the result file '%s' to finish it: %s", w->base.rank, w->json_path, err.text);
		json_decref(doc);
		json_decref(jt);
		return;
	}
	res = json_object_get(doc, "results");
	if (json_is_object(res))
		json_object_set(res, "timeout", jt);
	/* rank 0's host is this one: the host's load now */
	if ((res = ch_run_conditions_end(json_object_get(doc, "conditions"), &w->base)))
		json_object_set_new(doc, "conditions", res);
	json_decref(jt);
	json_object_set_new(doc, "status", json_string(ch_status_name(CH_ERR_RUNTIME)));
	json_object_set_new(doc, "exit_code", json_integer(CH_EXIT_RUNTIME));
	json_object_set_new(doc, "reason", json_string(msg));
	json_object_set_new(doc, "end_utc", json_string(ch_utc_now(now, sizeof(now))));
	ch_json_write_atomic(w->json_path, doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(doc);
}

/* A coordinator (rank 0, or rank 1 when rank 0 does not answer): ask every
 * rank for its state, name the hung step and the ranks that never arrived,
 * finish the result file, tell every rank to go, exit. @rep/@have hold the
 * reports already received (this rank's own included). */
static void __attribute__((noreturn)) coordinate(struct ch_ar_world *w, struct wd_report *rep, char *have,
						 const char *cause)
{
	const struct wd_report *hung = NULL;
	char msg[4096] = "", never[2048] = "", inside[1024] = "", iter_text[48];
	const int *members = NULL;
	int nmembers = w->base.size, i, nnever = 0, ninside = 0, nhave = 0;
	json_t *jt, *jnever, *jin;
	struct wd_msg m;
	double t0;

	for (i = 0; i < w->base.size; i++)
		if (i != w->base.rank)
			send_to(w, i, MSG_REQUEST, NULL);
	t0 = ch_now_sec();
	for (i = 0; i < w->base.size; i++)
		nhave += have[i] != 0;
	while (nhave < w->base.size && ch_now_sec() - t0 < WD_REPLY_SEC) {
		if (!recv_msg(w, &m, 0.02))
			continue;
		if ((m.type == MSG_REPORT || m.type == MSG_STATE) && !have[m.from]) {
			rep[m.from] = m.rep;
			rep[m.from].rank = m.from;
			have[m.from] = 1;
			nhave++;
		}
	}
	/* the hung step: a rank inside an all-reduce, else the first report */
	for (i = 0; i < w->base.size && !hung; i++)
		if (have[i] && rep[i].act == CH_AR_ACT_COLL)
			hung = &rep[i];
	for (i = 0; i < w->base.size && !hung; i++)
		if (have[i] && rep[i].act != CH_AR_ACT_IDLE)
			hung = &rep[i];
	if (!hung)
		hung = &rep[w->base.rank];
	if (w->groups.members) {
		int n = 0;
		const int *m = w->groups.members(w->groups.ctx, hung->phase, hung->group, &n);
		if (m) {
			members = m;
			nmembers = n;
		}
	}
	jnever = json_array();
	jin = json_array();
	for (i = 0; i < nmembers; i++) {
		int r = members ? members[i] : i;
		if (have[r] && rep[r].act == CH_AR_ACT_COLL && same_step(&rep[r], hung)) {
			append(inside, sizeof(inside), "%s%d", ninside++ ? "," : "", r);
			json_array_append_new(jin, json_integer(r));
			continue;
		}
		append(never, sizeof(never), "%s%d (host '%s', pid %ld", nnever++ ? ", " : "", r,
		       w->base.info[r].host, w->base.info[r].pid);
		if (have[r])
			append(never, sizeof(never), ": in %s for %.1f s)", rep[r].what, (double)rep[r].elapsed_us * 1e-6);
		else
			append(never, sizeof(never), ": no answer from its watchdog: stopped, or its host is down)");
		json_array_append_new(jnever, json_integer(r));
	}
	if (hung->iter < 0)
		snprintf(iter_text, sizeof(iter_text), "warm-up");
	else
		snprintf(iter_text, sizeof(iter_text), "iteration %lld", (long long)hung->iter);
	if (!w->groups.members) /* no all-reduce plan (checkpoint_io): what the rank was doing names it */
		snprintf(msg, sizeof(msg), "timeout: rank %lld (host '%s') spent more than %g s in %s; ",
			 (long long)hung->rank, w->base.info[hung->rank].host, w->timeout_sec, hung->what);
	else if (hung->act == CH_AR_ACT_COLL)
		snprintf(msg, sizeof(msg), "timeout: the all-reduce of %lld bytes (%s, %s), algorithm %s, group %s, did not complete within %g s; ",
			 (long long)hung->bytes, place_name((int)hung->place), iter_text,
			 hung->algo_label, hung->group_name, w->timeout_sec);
	else if (hung->act != CH_AR_ACT_IDLE)
		snprintf(msg, sizeof(msg), "timeout: rank %lld spent more than %g s in %s (all-reduce of %lld bytes, %s, algorithm %s, group %s); ",
			 (long long)hung->rank, w->timeout_sec, hung->what, (long long)hung->bytes,
			 place_name((int)hung->place), hung->algo_label, hung->group_name);
	else
		snprintf(msg, sizeof(msg), "timeout: %s (ranks waiting between steps, after the all-reduce of %lld bytes, algorithm %s, group %s); ",
			 cause, (long long)hung->bytes, hung->algo_label, hung->group_name);
	if (!w->groups.members)
		append(msg, sizeof(msg), "ranks (and what those that reported were doing): %s", never);
	else if (nnever)
		append(msg, sizeof(msg), "ranks that never arrived: %s; waiting inside it: %s", never, ninside ? inside : "none");
	else
		append(msg, sizeof(msg), "every rank of the group was inside it (ranks %s): a link or a device may be hung", inside);
	if (w->base.rank != 0)
		append(msg, sizeof(msg), " (reported by rank %d: rank 0 did not answer)", w->base.rank);
	ch_error("%s", msg);
	jt = json_object();
	json_object_set_new(jt, "timeout_sec", json_real(w->timeout_sec));
	json_object_set_new(jt, "group_name", json_string(hung->group_name));
	json_object_set_new(jt, "algo", json_string(hung->algo_label));
	json_object_set_new(jt, "bytes", json_integer(hung->bytes));
	json_object_set_new(jt, "place", json_string(place_name((int)hung->place)));
	json_object_set_new(jt, "iteration", json_integer(hung->iter));
	json_object_set_new(jt, "never_arrived", jnever);
	json_object_set_new(jt, "waiting", jin);
	json_object_set_new(jt, "reported_by", json_integer(w->base.rank));
	if (w->base.rank == 0 && w->res) {
		int locked = lock_doc_for(w, 2.0);
		json_object_set_new(ch_result_results(w->res), "timeout", jt);
		ch_result_finish(w->res, CH_ERR_RUNTIME, "%s", msg);
		if (locked)
			pthread_mutex_unlock(&w->doc_mutex);
	} else if (w->base.rank == 0) {
		json_decref(jt);
	} else {
		finish_on_disk(w, msg, jt);
	}
	for (i = 0; i < w->base.size; i++)
		if (i != w->base.rank)
			send_to(w, i, MSG_DONE, NULL);
	leave(w);
}

/* A rank whose coordinators do not answer: say so and exit (the launcher
 * ends the others). */
static void __attribute__((noreturn)) alone(struct ch_ar_world *w, const struct wd_report *r)
{
	ch_error("rank %d (host '%s'): timeout: %s of %lld bytes (%s, iteration %lld), algorithm %s, group %s, took more than %g s, and rank 0 did not answer; exiting",
		 w->base.rank, w->base.info[w->base.rank].host, r->what, (long long)r->bytes, place_name((int)r->place),
		 (long long)r->iter, r->algo_label, r->group_name, w->timeout_sec);
	if (w->base.rank == 0 && w->res) {
		int locked = lock_doc_for(w, 2.0);
		ch_result_finish(w->res, CH_ERR_RUNTIME, "timeout in %s (%s, group %s)", r->what,
				 r->algo_label, r->group_name);
		if (locked)
			pthread_mutex_unlock(&w->doc_mutex);
	}
	leave(w);
}

/* The monitor's state between polls. */
struct wd_state {
	int coord;
	struct wd_report *rep, mine;
	char *have;
	int *heard;
	double fired, alarm, asked, ping, last_heard0, last_resend;
	const char *cause;
};

static void handle_msg(struct ch_ar_world *w, const struct wd_msg *m, struct wd_state *st)
{
	double t = ch_now_sec();

	if (m->from == 0)
		st->last_heard0 = t;
	if (st->heard)
		st->heard[m->from] = 1;
	switch (m->type) {
	case MSG_PING:
		send_to(w, m->from, MSG_PONG, NULL);
		break;
	case MSG_ABORT:
		/* another rank ends (a signal, a run-time error): rank 0 records
		 * why in the result file and every rank goes */
		if (w->base.rank == 0) {
			char why[sizeof(m->rep.what) + 1];
			int locked = lock_doc_for(w, 2.0);
			memcpy(why, m->rep.what, sizeof(m->rep.what));
			why[sizeof(m->rep.what)] = '\0';
			ch_error("rank %d (host '%s') ends the run: %s", m->from, w->base.info[m->from].host, why);
			if (w->res)
				ch_result_finish(w->res, m->rep.act < 0 ? (int)m->rep.act : CH_ERR_RUNTIME, "rank %d (host '%s'): %s",
						 m->from, w->base.info[m->from].host, why);
			(void)locked; /* held until the exit: the main thread writes nothing after it */
			leave(w);
		}
		break;
	case MSG_REQUEST:
		/* a coordinator acts: answer with this rank's state */
		fill_report(w, &st->mine);
		send_to(w, m->from, MSG_STATE, &st->mine);
		if (st->asked < 0)
			st->asked = t;
		if (m->from == 0)
			st->alarm = -1; /* rank 0 is on it: the backup stands by */
		break;
	case MSG_REPORT:
	case MSG_STATE:
		if (!st->coord || st->asked >= 0)
			break;
		st->rep[m->from] = m->rep;
		st->rep[m->from].rank = m->from;
		st->have[m->from] = 1;
		if (w->base.rank == 0) {
			fill_report(w, &st->rep[0]);
			st->have[0] = 1;
			coordinate(w, st->rep, st->have, "a rank reported a timeout");
		}
		if (st->alarm < 0)
			st->alarm = t; /* backup: wait for rank 0 to act */
		break;
	}
}

static void *watchdog(void *arg)
{
	struct ch_ar_world *w = arg;
	uint64_t last = __atomic_load_n(&w->seq, __ATOMIC_ACQUIRE);
	int last_iter = __atomic_load_n(&w->iter, __ATOMIC_RELAXED);
	struct wd_state st;
	struct wd_msg m;
	double t;

	memset(&st, 0, sizeof(st));
	st.coord = w->base.rank <= 1; /* rank 0 and its backup keep every report */
	st.rep = st.coord ? calloc((size_t)w->base.size, sizeof(*st.rep)) : NULL;
	st.have = st.coord ? calloc((size_t)w->base.size, 1) : NULL;
	st.heard = w->base.rank == 0 ? calloc((size_t)w->base.size, sizeof(int)) : NULL;
	st.fired = st.alarm = st.asked = st.ping = -1;
	st.cause = "";
	if (st.coord && (!st.rep || !st.have || (w->base.rank == 0 && !st.heard))) {
		ch_error("rank %d: out of memory in the watchdog", w->base.rank);
		leave(w);
	}
	__atomic_store_n(&w->since_ns, now_ns(), __ATOMIC_RELAXED);
	st.last_heard0 = ch_now_sec();
	while (!__atomic_load_n(&w->stop, __ATOMIC_SEQ_CST)) {
		uint64_t seq;
		int act, it, got;
		double el, limit = w->timeout_sec;

		got = w->sock >= 0 && w->base.size > 1 ? recv_msg(w, &m, 0.02) : (sleep_sec(0.02), 0);
		t = ch_now_sec();
		{
			/* a long gap between polls: this process was stopped (SIGSTOP) */
			int64_t tn = now_ns(), prev = __atomic_load_n(&w->poll_ns, __ATOMIC_RELAXED);
			if (prev && tn - prev > 1000000000) {
				__atomic_store_n(&w->gap_ns, tn - prev, __ATOMIC_RELAXED);
				__atomic_store_n(&w->gap_at_ns, tn, __ATOMIC_RELAXED);
			}
			__atomic_store_n(&w->poll_ns, tn, __ATOMIC_RELEASE);
		}
		if (got) {
			/* look at everything queued first: after a stop (SIGSTOP, then
			 * the launcher's SIGCONT) the other coordinator's REQUEST or
			 * DONE may wait behind older reports, and they win */
			struct wd_msg q[64];
			int nq = 1, i, pass;
			q[0] = m;
			while (nq < 64 && recv_msg(w, &q[nq], 0))
				nq++;
			for (i = 0; i < nq; i++)
				if (q[i].type == MSG_DONE)
					leave(w);
			for (pass = 0; pass < 2; pass++)
				for (i = 0; i < nq; i++)
					if ((q[i].type == MSG_REQUEST) == (pass == 0))
						handle_msg(w, &q[i], &st);
		}
		/* this rank's own deadline */
		seq = __atomic_load_n(&w->seq, __ATOMIC_ACQUIRE);
		act = __atomic_load_n(&w->act, __ATOMIC_RELAXED);
		it = __atomic_load_n(&w->iter, __ATOMIC_RELAXED);
		if (seq != last || it != last_iter) {
			/* a new activity, or the timed loop moved on: the clock restarts */
			last = seq;
			last_iter = it;
			__atomic_store_n(&w->since_ns, now_ns(), __ATOMIC_RELAXED);
		}
		el = (double)(now_ns() - __atomic_load_n(&w->since_ns, __ATOMIC_RELAXED)) * 1e-9;
		if (act == CH_AR_ACT_COLL)
			limit += w->coll_grace_sec;
		if (st.fired < 0 && ((act != CH_AR_ACT_IDLE && el > limit) || __atomic_load_n(&w->fire_now, __ATOMIC_ACQUIRE))) {
			st.fired = t;
			fill_report(w, &st.mine);
			if ((w->base.rank == 0 && st.asked < 0) || w->base.size == 1 || w->sock < 0) {
				/* rank 0 coordinates, unless rank 1 already does */
				if (w->base.size == 1 || w->sock < 0)
					alone(w, &st.mine);
				fill_report(w, &st.rep[0]);
				st.have[0] = 1;
				coordinate(w, st.rep, st.have, "rank 0 timed out");
			}
			if (st.coord) {
				st.rep[w->base.rank] = st.mine;
				st.have[w->base.rank] = 1;
				if (st.alarm < 0 && st.asked < 0)
					st.alarm = t;
			}
		}
		if (st.fired >= 0 && st.asked < 0 && t - st.last_resend > WD_RESEND_SEC) {
			/* datagrams may be lost: repeat until a coordinator acts */
			fill_report(w, &st.mine);
			send_to(w, 0, MSG_REPORT, &st.mine);
			if (w->base.rank != 1 && w->base.size > 1)
				send_to(w, 1, MSG_REPORT, &st.mine);
			st.last_resend = t;
		}
		/* liveness while waiting between steps: a stopped rank 0 (or rank)
		 * has no deadline of its own */
		if (w->base.size > 1 && w->sock >= 0 && act == CH_AR_ACT_IDLE && el > w->timeout_sec && st.fired < 0) {
			if (st.ping < 0) {
				st.ping = t;
				if (st.heard)
					memset(st.heard, 0, (size_t)w->base.size * sizeof(int));
				if (w->base.rank == 0) {
					int i;
					for (i = 1; i < w->base.size; i++)
						send_to(w, i, MSG_PING, NULL);
				} else {
					send_to(w, 0, MSG_PING, NULL);
				}
			} else if (t - st.ping > WD_PING_ANSWER_SEC) {
				int i, silent = -1;
				if (w->base.rank == 0) {
					for (i = 1; i < w->base.size && silent < 0; i++)
						if (!st.heard[i] && w->addrs[i].port != 0)
							silent = i;
				} else if (st.last_heard0 < st.ping) {
					silent = 0;
				}
				st.ping = -1;
				if (silent >= 0 && w->base.rank == 0 && st.asked < 0) {
					fill_report(w, &st.rep[0]);
					st.have[0] = 1;
					coordinate(w, st.rep, st.have, "a rank's watchdog did not answer a ping");
				}
				if (silent == 0) {
					/* rank 0 is silent: report to the backup */
					st.fired = t;
					fill_report(w, &st.mine);
					if (w->base.rank == 1) {
						st.rep[1] = st.mine;
						st.have[1] = 1;
						st.cause = "rank 0's watchdog did not answer a ping";
						st.alarm = t - WD_TAKEOVER_SEC; /* no need to wait further */
					}
				}
			}
		} else if (act != CH_AR_ACT_IDLE || el <= w->timeout_sec) {
			st.ping = -1;
		}
		/* the backup takes over when rank 0 does not act */
		if (w->base.rank == 1 && st.alarm >= 0 && st.asked < 0 && t - st.alarm > WD_TAKEOVER_SEC)
			coordinate(w, st.rep, st.have, *st.cause ? st.cause : "rank 0 did not answer");
		/* nobody acted: leave by ourselves */
		if (st.fired >= 0 && t - st.fired > WD_TAKEOVER_SEC + 2 * WD_REPLY_SEC + 2.0)
			alone(w, &st.mine);
	}
	free(st.rep);
	free(st.have);
	free(st.heard);
	return NULL;
}

/* The result file's reason when a signal ends rank 0 after it had been
 * stopped or hung past --timeout (ch_result_signal_reason()): with ranks 0
 * and 1 both stopped no coordinator acts, the other ranks leave by
 * themselves and the launcher's SIGTERM reaches rank 0 last; the file
 * names the hang, not only the signal. */
static int wd_signal_reason(void *ctx, const char *name, int signo, double run_sec, char *buf, size_t n)
{
	struct ch_ar_world *w = ctx;
	int64_t tn = now_ns(), poll = __atomic_load_n(&w->poll_ns, __ATOMIC_ACQUIRE);
	double el = (double)(tn - __atomic_load_n(&w->since_ns, __ATOMIC_RELAXED)) * 1e-9;
	double limit = w->timeout_sec + (__atomic_load_n(&w->act, __ATOMIC_RELAXED) == CH_AR_ACT_COLL ? w->coll_grace_sec : 0);
	double stopped = poll ? (double)(tn - poll) * 1e-9 : 0;

	if (w->timeout_sec <= 0)
		return 0;
	/* stopped: the monitor has not polled since (the signal came with the
	 * launcher's SIGCONT), or its last long gap ended just now */
	if (tn - __atomic_load_n(&w->gap_at_ns, __ATOMIC_RELAXED) < 2000000000LL &&
	    (double)__atomic_load_n(&w->gap_ns, __ATOMIC_RELAXED) * 1e-9 > stopped)
		stopped = (double)__atomic_load_n(&w->gap_ns, __ATOMIC_RELAXED) * 1e-9;
	if (stopped > w->timeout_sec) {
		snprintf(buf, n, "timeout: rank 0 was stopped for %.0f s, more than --timeout %g s, in %s (no coordinator could act: rank 1 stopped too?); %s (signal %d) from the launcher ended it after %.0f s; the measurements finished before it are kept",
			 stopped, w->timeout_sec, __atomic_load_n(&w->what, __ATOMIC_RELAXED), name, signo, run_sec);
		return 1;
	}
	if (el <= limit)
		return 0;
	snprintf(buf, n, "timeout: rank 0 had been in %s for %.0f s, more than --timeout %g s (stopped or hung, and no coordinator could act: rank 1 too?); %s (signal %d) from the launcher ended it after %.0f s; the measurements finished before it are kept",
		 __atomic_load_n(&w->what, __ATOMIC_RELAXED), el, w->timeout_sec, name, signo, run_sec);
	return 1;
}

int ch_ar_wd_start(struct ch_ar_world *w, double timeout_sec, double coll_grace_sec,
		   const struct ch_ar_wd_groups *groups, struct ch_result *res, const char *json_path)
{
	const char *prev_what;
	int prev_act;

	w->timeout_sec = timeout_sec;
	w->coll_grace_sec = coll_grace_sec;
	if (groups)
		w->groups = *groups;
	else
		memset(&w->groups, 0, sizeof(w->groups));
	ch_ar_world_set_result(w, res);
	if (timeout_sec <= 0 || w->thread_started) {
		if (timeout_sec <= 0)
			__atomic_store_n(&w->guard_on, 0, __ATOMIC_RELEASE);
		return 0;
	}
	prev_act = __atomic_load_n(&w->act, __ATOMIC_ACQUIRE);
	prev_what = __atomic_load_n(&w->what, __ATOMIC_ACQUIRE);
	ch_ar_wd_enter(w, CH_AR_ACT_MPI, "starting the watchdog"); /* the guard's step */
	if (exchange_addrs(w)) {
		ch_error("cannot set up the watchdog's side channel");
		return CH_ERR_RUNTIME;
	}
	if (w->base.rank == 1 && json_path && !(w->json_path = strdup(json_path)))
		return CH_ERR_RUNTIME;
	ch_ar_wd_enter(w, prev_act, prev_what);
	if (pthread_create(&w->thread, NULL, watchdog, w) != 0) {
		ch_error("cannot start the watchdog thread");
		return CH_ERR_RUNTIME;
	}
	__atomic_store_n(&w->thread_started, 1, __ATOMIC_RELEASE);
	if (w->base.rank == 0)
		ch_result_signal_reason(wd_signal_reason, w);
	/* the watchdog covers the run from here (its own deadlines, and the
	 * pings that find a stopped rank) */
	__atomic_store_n(&w->guard_on, 0, __ATOMIC_RELEASE);
	return 0;
}

void ch_ar_wd_timeout(struct ch_ar_world *w, int iter)
{
	__atomic_store_n(&w->iter, iter, __ATOMIC_RELAXED);
	__atomic_store_n(&w->act, CH_AR_ACT_COLL, __ATOMIC_RELEASE);
	__atomic_store_n(&w->fire_now, 1, __ATOMIC_RELEASE);
	if (!w->thread_started) {
		ch_error("rank %d (host '%s'): the all-reduce did not complete in time", w->base.rank, w->base.info[w->base.rank].host);
		if (w->base.active)
			MPI_Abort(MPI_COMM_WORLD, CH_EXIT_RUNTIME);
		_exit(CH_EXIT_RUNTIME);
	}
	for (;;) /* the monitoring thread reports and exits */
		sleep_sec(1.0);
}

/* Poll @req to completion, sleeping between polls (leaving the CPU to ranks
 * still measuring). */
static int poll_request(struct ch_ar_world *w, MPI_Request *req)
{
	int done = 0;
	double pause = 20e-6;

	ch_ar_wd_enter(w, CH_AR_ACT_IDLE, "waiting for the other ranks");
	for (;;) {
		if (MPI_Test(req, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
			return CH_ERR_RUNTIME;
		if (done)
			return 0;
		sleep_sec(pause);
		if (pause < 500e-6)
			pause *= 1.5;
	}
}

int ch_ar_world_mpi(const struct ch_ar_world *w)
{
	return w->base.active;
}

int ch_ar_world_barrier(struct ch_ar_world *w)
{
	MPI_Request req;
	if (!w->base.active)
		return 0;
	if (MPI_Ibarrier(MPI_Comm_f2c(w->base.ctrl), &req) != MPI_SUCCESS)
		return CH_ERR_RUNTIME;
	return poll_request(w, &req);
}

int ch_ar_world_gather(struct ch_ar_world *w, const double *send, int n, double *recv)
{
	MPI_Request req;
	if (!w->base.active) {
		memmove(recv, send, (size_t)(n > 0 ? n : 0) * sizeof(double));
		return 0;
	}
	if (MPI_Igather(send, n, MPI_DOUBLE, recv, n, MPI_DOUBLE, 0, MPI_Comm_f2c(w->base.ctrl), &req) != MPI_SUCCESS)
		return CH_ERR_RUNTIME;
	return poll_request(w, &req);
}
