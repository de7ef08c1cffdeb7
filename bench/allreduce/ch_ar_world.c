/*
 * ch_ar_world.c - MPI world, agreement and watchdog of allreduce_bw
 * (see ch_ar_world.h). This is the launcher layer that both backends run
 * under, so it uses MPI directly.
 */
#include <mpi.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/allreduce/ch_ar_world.h"
#include "base/ch_common.h"
#include "base/ch_stats.h"

#define TAG_TIMEOUT 4711

struct ch_ar_world {
	int rank, size, provided;
	MPI_Comm ctrl, local;
	int nhosts;
	struct ch_ar_rankinfo *info;

	/* watchdog */
	pthread_t thread;
	int thread_started;
	int stop;                  /* atomic */
	double timeout_sec, coll_grace_sec;
	const struct ch_ar_plan *plan;
	struct ch_result *res;
	pthread_mutex_t doc_mutex;
	pthread_mutex_t where_mutex;
	struct ch_ar_where where;
	char gname[40], alabel[40];
	int act;                   /* atomic: enum ch_ar_act */
	int iter;                  /* atomic */
	const char *what;          /* atomic (pointer to a static string) */
	uint64_t seq;              /* atomic: bumped at every change of activity */
	int64_t since_ns;          /* atomic: when the watchdog first saw the current seq */
	int firing;                /* atomic */
};

/* A timeout report, sent to world rank 0 as bytes (homogeneous cluster). */
struct wd_report {
	int64_t rank, act, iter, phase, group, algo, size_index, place, bytes, elapsed_us;
	char what[320]; /* long enough for a file path (checkpoint_io) */
	char group_name[40];
	char algo_label[40];
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

int ch_ar_world_rank(const struct ch_ar_world *w) { return w->rank; }
int ch_ar_world_size(const struct ch_ar_world *w) { return w->size; }
int ch_ar_world_nhosts(const struct ch_ar_world *w) { return w->nhosts; }
int ch_ar_world_ctrl(const struct ch_ar_world *w) { return (int)MPI_Comm_c2f(w->ctrl); }
int ch_ar_world_local(const struct ch_ar_world *w) { return (int)MPI_Comm_c2f(w->local); }
int ch_ar_world_thread_multiple(const struct ch_ar_world *w) { return w->provided >= MPI_THREAD_MULTIPLE; }

const struct ch_ar_rankinfo *ch_ar_world_info(const struct ch_ar_world *w, int r)
{
	return (r >= 0 && r < w->size) ? &w->info[r] : NULL;
}

int ch_ar_world_init(int *argc, char ***argv, struct ch_ar_world **out)
{
	struct ch_ar_world *w = calloc(1, sizeof(*w));
	struct ch_ar_rankinfo me;
	MPI_Comm leaders = MPI_COMM_NULL;
	int node = 0, maxnode = 0, required;

	*out = NULL;
	if (!w) {
		ch_error("out of memory");
		return CH_ERR_RUNTIME;
	}
	/* Open MPI reads this at MPI_Init only; without it the per-communicator
	 * algorithm variable is ignored. Dynamic rules with no rules file and no
	 * forced algorithm fall back to the fixed rules, so "default" is unchanged. */
	setenv("OMPI_MCA_coll_tuned_use_dynamic_rules", "1", 0);
	/* the watchdog reports a hang over MPI while the main thread is blocked
	 * in MPI: that needs MPI_THREAD_MULTIPLE, which Open MPI makes cost a
	 * little on every small message; --timeout 0 (no watchdog) avoids it */
	required = ch_ar_opts_peek_timeout(*argc, *argv) > 0 ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE;
	if (MPI_Init_thread(argc, argv, required, &w->provided) != MPI_SUCCESS) {
		ch_error("MPI_Init_thread failed");
		free(w);
		return CH_ERR_RUNTIME;
	}
	MPI_Comm_rank(MPI_COMM_WORLD, &w->rank);
	MPI_Comm_size(MPI_COMM_WORLD, &w->size);
	pthread_mutex_init(&w->doc_mutex, NULL);
	pthread_mutex_init(&w->where_mutex, NULL);
	w->info = calloc((size_t)w->size, sizeof(*w->info));
	if (!w->info || MPI_Comm_dup(MPI_COMM_WORLD, &w->ctrl) != MPI_SUCCESS ||
	    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, w->rank, MPI_INFO_NULL,
				&w->local) != MPI_SUCCESS) {
		ch_error("cannot set up the MPI communicators (rank %d)", w->rank);
		MPI_Abort(MPI_COMM_WORLD, CH_EXIT_RUNTIME);
	}
	memset(&me, 0, sizeof(me));
	MPI_Comm_rank(w->local, &me.local_rank);
	MPI_Comm_size(w->local, &me.local_size);
	/* node index: rank of the node's first rank among all first ranks */
	MPI_Comm_split(MPI_COMM_WORLD, me.local_rank == 0 ? 0 : MPI_UNDEFINED, w->rank, &leaders);
	if (leaders != MPI_COMM_NULL) {
		MPI_Comm_rank(leaders, &node);
		MPI_Comm_free(&leaders);
	}
	MPI_Bcast(&node, 1, MPI_INT, 0, w->local);
	MPI_Allreduce(&node, &maxnode, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	w->nhosts = maxnode + 1;
	me.host_node = node;
	me.pid = (long)getpid();
	gethostname(me.host, sizeof(me.host) - 1);
	MPI_Allgather(&me, (int)sizeof(me), MPI_BYTE, w->info, (int)sizeof(me), MPI_BYTE, MPI_COMM_WORLD);
	w->act = CH_AR_ACT_IDLE;
	w->what = "starting";
	w->since_ns = now_ns();
	*out = w;
	return 0;
}

int ch_ar_world_agree(struct ch_ar_world *w, int status)
{
	int all = status;
	MPI_Allreduce(&status, &all, 1, MPI_INT, MPI_MIN, w->ctrl);
	return all;
}

int ch_ar_world_quiet_call(struct ch_ar_world *w, int (*fn)(int argc, char **argv, void *out), int argc,
			   char **argv, void *out)
{
	int rc, out_fd = -1, err_fd = -1, null_fd = -1;

	if (w->rank != 0) {
		/* every rank runs the same step; only rank 0 speaks */
		fflush(stdout);
		fflush(stderr);
		null_fd = open("/dev/null", O_WRONLY);
		out_fd = dup(1);
		err_fd = dup(2);
		if (null_fd >= 0 && out_fd >= 0 && err_fd >= 0) {
			dup2(null_fd, 1);
			dup2(null_fd, 2);
		}
	}
	rc = fn(argc, argv, out);
	if (w->rank != 0) {
		fflush(stdout);
		fflush(stderr);
		if (out_fd >= 0 && err_fd >= 0) {
			dup2(out_fd, 1);
			dup2(err_fd, 2);
		}
		if (out_fd >= 0)
			close(out_fd);
		if (err_fd >= 0)
			close(err_fd);
		if (null_fd >= 0)
			close(null_fd);
	}
	return rc;
}

static int ar_parse(int argc, char **argv, void *out)
{
	return ch_ar_opts_parse(argc, argv, out);
}

int ch_ar_world_parse(struct ch_ar_world *w, int argc, char **argv, struct ch_ar_opts *o)
{
	int rc = ch_ar_world_quiet_call(w, ar_parse, argc, argv, o);

	if (w->rank == 0 && rc == 0 && o->common.help)
		ch_ar_usage(stdout);
	else if (w->rank == 0 && rc == 0 && o->common.version)
		ch_print_version("allreduce_bw");
	fflush(stdout);
	return ch_ar_world_agree(w, rc);
}

int ch_ar_world_finalize(struct ch_ar_world *w, int status)
{
	if (!w)
		return ch_exit_code(status);
	if (w->thread_started) {
		__atomic_store_n(&w->stop, 1, __ATOMIC_SEQ_CST);
		pthread_join(w->thread, NULL);
	}
	fflush(stdout);
	MPI_Comm_free(&w->ctrl);
	MPI_Comm_free(&w->local);
	MPI_Finalize();
	pthread_mutex_destroy(&w->doc_mutex);
	pthread_mutex_destroy(&w->where_mutex);
	free(w->info);
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

void ch_ar_world_abort(struct ch_ar_world *w, int status, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	int locked;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	ch_error("rank %d (host '%s'): %s", w->rank, w->info[w->rank].host, msg);
	if (w->rank == 0 && w->res) {
		locked = lock_doc_for(w, 2.0);
		ch_result_finish(w->res, status, "rank 0: %s", msg);
		if (locked)
			pthread_mutex_unlock(&w->doc_mutex);
	}
	fflush(stdout);
	fflush(stderr);
	MPI_Abort(MPI_COMM_WORLD, ch_exit_code(status));
	_exit(ch_exit_code(status));
}

/* ---- watchdog */

void ch_ar_wd_lock(struct ch_ar_world *w) { pthread_mutex_lock(&w->doc_mutex); }
void ch_ar_wd_unlock(struct ch_ar_world *w) { pthread_mutex_unlock(&w->doc_mutex); }

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

/* No clock read here (this runs twice per timed call): the watchdog thread
 * notices the new sequence number and starts the activity's clock itself,
 * to within its polling period. */
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
	r->rank = w->rank;
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

/* World rank 0: collect reports for a grace period, name the ranks that
 * never arrived, finish the result file, abort every rank. */
static void __attribute__((noreturn)) handle_reports(struct ch_ar_world *w, const struct wd_report *first)
{
	struct wd_report *rep = calloc((size_t)w->size, sizeof(*rep));
	char *have = calloc((size_t)w->size, 1);
	const struct wd_report *hung = NULL;
	double grace = w->timeout_sec / 4, t0;
	char msg[4096] = "", never[2048] = "", inside[1024] = "", iter_text[48];
	const int *members = NULL;
	int nmembers = w->size, i, nnever = 0, ninside = 0, locked;
	json_t *jt = NULL, *jnever = NULL, *jin = NULL;

	if (grace < 0.5)
		grace = 0.5;
	if (grace > 3.0)
		grace = 3.0;
	if (!rep || !have) {
		ch_error("timeout (and out of memory while reporting it)");
		MPI_Abort(MPI_COMM_WORLD, CH_EXIT_RUNTIME);
	}
	if (first) {
		rep[first->rank] = *first;
		have[first->rank] = 1;
	}
	t0 = ch_now_sec();
	while (ch_now_sec() - t0 < grace) {
		int flag = 0, got = 0;
		MPI_Status st;
		MPI_Iprobe(MPI_ANY_SOURCE, TAG_TIMEOUT, w->ctrl, &flag, &st);
		if (flag) {
			struct wd_report r;
			MPI_Recv(&r, (int)sizeof(r), MPI_BYTE, st.MPI_SOURCE, TAG_TIMEOUT, w->ctrl, MPI_STATUS_IGNORE);
			if (r.rank >= 0 && r.rank < w->size) {
				rep[r.rank] = r;
				have[r.rank] = 1;
			}
			got = 1;
		}
		if (!got)
			sleep_sec(0.002);
	}
	/* the hung step: the first report from inside an all-reduce, else any */
	for (i = 0; i < w->size && !hung; i++)
		if (have[i] && rep[i].act == CH_AR_ACT_COLL)
			hung = &rep[i];
	for (i = 0; i < w->size && !hung; i++)
		if (have[i])
			hung = &rep[i];
	if (!hung) {
		ch_error("timeout reported, but no report arrived");
		MPI_Abort(MPI_COMM_WORLD, CH_EXIT_RUNTIME);
	}
	if (w->plan && hung->phase >= 0 && hung->phase < w->plan->nphases &&
	    hung->group >= 0 && hung->group < w->plan->phases[hung->phase].ngroups) {
		members = w->plan->phases[hung->phase].groups[hung->group].ranks;
		nmembers = w->plan->phases[hung->phase].groups[hung->group].nranks;
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
		       w->info[r].host, w->info[r].pid);
		if (have[r])
			append(never, sizeof(never), ": in %s for %.1f s)", rep[r].what, (double)rep[r].elapsed_us * 1e-6);
		else
			append(never, sizeof(never), ")");
		json_array_append_new(jnever, json_integer(r));
	}
	if (hung->iter < 0)
		snprintf(iter_text, sizeof(iter_text), "warm-up");
	else
		snprintf(iter_text, sizeof(iter_text), "iteration %lld", (long long)hung->iter);
	if (!w->plan) /* no all-reduce plan (checkpoint_io): what the rank was doing names it */
		snprintf(msg, sizeof(msg), "timeout: rank %lld (host '%s') spent more than %g s in %s; ",
			 (long long)hung->rank, w->info[hung->rank].host, w->timeout_sec, hung->what);
	else if (hung->act == CH_AR_ACT_COLL)
		snprintf(msg, sizeof(msg), "timeout: the all-reduce of %lld bytes (%s, %s), algorithm %s, group %s, did not complete within %g s; ",
			 (long long)hung->bytes, place_name((int)hung->place), iter_text,
			 hung->algo_label, hung->group_name, w->timeout_sec);
	else
		snprintf(msg, sizeof(msg), "timeout: rank %lld spent more than %g s in %s (all-reduce of %lld bytes, %s, algorithm %s, group %s); ",
			 (long long)hung->rank, w->timeout_sec, hung->what, (long long)hung->bytes,
			 place_name((int)hung->place), hung->algo_label, hung->group_name);
	if (!w->plan)
		append(msg, sizeof(msg), "ranks (and what those that reported were doing): %s", never);
	else if (nnever)
		append(msg, sizeof(msg), "ranks that never arrived: %s; waiting inside it: %s", never, ninside ? inside : "none");
	else
		append(msg, sizeof(msg), "every rank of the group was inside it (ranks %s): a link or a device may be hung", inside);
	ch_error("%s", msg);
	if (w->res) {
		locked = lock_doc_for(w, 2.0);
		jt = json_object();
		json_object_set_new(jt, "timeout_sec", json_real(w->timeout_sec));
		json_object_set_new(jt, "group_name", json_string(hung->group_name));
		json_object_set_new(jt, "algo", json_string(hung->algo_label));
		json_object_set_new(jt, "bytes", json_integer(hung->bytes));
		json_object_set_new(jt, "place", json_string(place_name((int)hung->place)));
		json_object_set_new(jt, "iteration", json_integer(hung->iter));
		json_object_set_new(jt, "never_arrived", jnever);
		json_object_set_new(jt, "waiting", jin);
		jnever = jin = NULL;
		json_object_set_new(ch_result_results(w->res), "timeout", jt);
		ch_result_finish(w->res, CH_ERR_RUNTIME, "%s", msg);
		if (locked)
			pthread_mutex_unlock(&w->doc_mutex);
	}
	json_decref(jnever);
	json_decref(jin);
	fflush(stdout);
	fflush(stderr);
	MPI_Abort(MPI_COMM_WORLD, CH_EXIT_RUNTIME);
	_exit(CH_EXIT_RUNTIME);
}

/* The watchdog fired on this rank (watchdog thread, or main thread for
 * self-timeout backends). */
static void __attribute__((noreturn)) fire(struct ch_ar_world *w)
{
	struct wd_report r;
	double wait, t0;

	if (__atomic_exchange_n(&w->firing, 1, __ATOMIC_SEQ_CST)) {
		for (;;) /* the other thread is handling it and will abort */
			sleep_sec(1.0);
	}
	fill_report(w, &r);
	if (!ch_ar_world_thread_multiple(w)) {
		ch_error("rank %d (host '%s'): timeout: %s of %lld bytes, algorithm %s, group %s, took more than %g s; aborting",
			 w->rank, w->info[w->rank].host, r.what, (long long)r.bytes, r.algo_label, r.group_name,
			 w->timeout_sec);
		if (w->rank == 0 && w->res) {
			int locked = lock_doc_for(w, 2.0);
			ch_result_finish(w->res, CH_ERR_RUNTIME, "timeout in %s (%s, group %s)", r.what,
					 r.algo_label, r.group_name);
			if (locked)
				pthread_mutex_unlock(&w->doc_mutex);
		}
		MPI_Abort(MPI_COMM_WORLD, CH_EXIT_RUNTIME);
		_exit(CH_EXIT_RUNTIME);
	}
	if (w->rank == 0)
		handle_reports(w, &r);
	{
		MPI_Request req;
		int done = 0;
		MPI_Isend(&r, (int)sizeof(r), MPI_BYTE, 0, TAG_TIMEOUT, w->ctrl, &req);
		/* rank 0 answers by aborting everyone; wait for that, then give up */
		wait = w->timeout_sec + 15.0;
		t0 = ch_now_sec();
		while (ch_now_sec() - t0 < wait) {
			if (!done)
				MPI_Test(&req, &done, MPI_STATUS_IGNORE);
			sleep_sec(0.01);
		}
	}
	ch_error("rank %d (host '%s'): timeout: %s of %lld bytes (%s, iteration %lld), algorithm %s, group %s, took more than %g s, and rank 0 did not answer; aborting",
		 w->rank, w->info[w->rank].host, r.what, (long long)r.bytes, place_name((int)r.place),
		 (long long)r.iter, r.algo_label, r.group_name, w->timeout_sec);
	MPI_Abort(MPI_COMM_WORLD, CH_EXIT_RUNTIME);
	_exit(CH_EXIT_RUNTIME);
}

void ch_ar_wd_timeout(struct ch_ar_world *w, int iter)
{
	__atomic_store_n(&w->iter, iter, __ATOMIC_RELAXED);
	__atomic_store_n(&w->act, CH_AR_ACT_COLL, __ATOMIC_RELEASE);
	fire(w);
}

/* World rank 0: answer a pending timeout report, if any (does not return then). */
static void poll_reports(struct ch_ar_world *w)
{
	int flag = 0;
	if (w->rank != 0 || w->timeout_sec <= 0 || !ch_ar_world_thread_multiple(w))
		return;
	MPI_Iprobe(MPI_ANY_SOURCE, TAG_TIMEOUT, w->ctrl, &flag, MPI_STATUS_IGNORE);
	if (flag && !__atomic_exchange_n(&w->firing, 1, __ATOMIC_SEQ_CST))
		handle_reports(w, NULL);
}

static void *watchdog(void *arg)
{
	struct ch_ar_world *w = arg;
	uint64_t last = __atomic_load_n(&w->seq, __ATOMIC_ACQUIRE);

	__atomic_store_n(&w->since_ns, now_ns(), __ATOMIC_RELAXED);
	while (!__atomic_load_n(&w->stop, __ATOMIC_SEQ_CST)) {
		uint64_t seq;
		int act;
		double el, limit = w->timeout_sec;

		sleep_sec(0.02);
		seq = __atomic_load_n(&w->seq, __ATOMIC_ACQUIRE);
		act = __atomic_load_n(&w->act, __ATOMIC_RELAXED);
		if (seq != last) {
			/* a new activity since the last look: its clock starts now */
			last = seq;
			__atomic_store_n(&w->since_ns, now_ns(), __ATOMIC_RELAXED);
			continue;
		}
		el = (double)(now_ns() - __atomic_load_n(&w->since_ns, __ATOMIC_RELAXED)) * 1e-9;
		if (act == CH_AR_ACT_COLL)
			limit += w->coll_grace_sec;
		if (act != CH_AR_ACT_IDLE && el > limit)
			fire(w);
		/* rank 0 busy for long: look for other ranks' reports meanwhile */
		if (w->rank == 0 && act != CH_AR_ACT_IDLE && el > w->timeout_sec / 2) {
			int flag = 0;
			MPI_Iprobe(MPI_ANY_SOURCE, TAG_TIMEOUT, w->ctrl, &flag, MPI_STATUS_IGNORE);
			if (flag && !__atomic_exchange_n(&w->firing, 1, __ATOMIC_SEQ_CST))
				handle_reports(w, NULL);
		}
	}
	return NULL;
}

int ch_ar_wd_start(struct ch_ar_world *w, double timeout_sec, double coll_grace_sec,
		   const struct ch_ar_plan *plan, struct ch_result *res)
{
	w->timeout_sec = timeout_sec;
	w->coll_grace_sec = coll_grace_sec;
	w->plan = plan;
	w->res = res;
	if (timeout_sec <= 0 || w->thread_started)
		return 0;
	if (pthread_create(&w->thread, NULL, watchdog, w) != 0) {
		ch_error("cannot start the watchdog thread");
		return CH_ERR_RUNTIME;
	}
	w->thread_started = 1;
	return 0;
}

/* Poll @req to completion; rank 0 answers timeout reports meanwhile. */
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
		poll_reports(w);
		sleep_sec(pause);
		if (pause < 500e-6)
			pause *= 1.5;
	}
}

int ch_ar_world_barrier(struct ch_ar_world *w)
{
	MPI_Request req;
	if (MPI_Ibarrier(w->ctrl, &req) != MPI_SUCCESS)
		return CH_ERR_RUNTIME;
	return poll_request(w, &req);
}

int ch_ar_world_gather(struct ch_ar_world *w, const double *send, int n, double *recv)
{
	MPI_Request req;
	if (MPI_Igather(send, n, MPI_DOUBLE, recv, n, MPI_DOUBLE, 0, w->ctrl, &req) != MPI_SUCCESS)
		return CH_ERR_RUNTIME;
	return poll_request(w, &req);
}
