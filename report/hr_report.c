/*
 * hr_report.c - options and orchestration of `health_report INPUT...`.
 */
#include "report/hr_report.h"
#include "report/judge/hr_analyze.h"
#include "report/read/hr_input.h"
#include "report/read/hr_model.h"
#include "report/render/hr_render.h"
#include "report/render/hr_steps_render.h"
#include "report/canary/hr_steps_run.h"
#include "report/hr_util.h"
#include "report/hr_jdump.h"
#include "base/ch_common.h"
#include "base/ch_parse.h"
#include "base/ch_result.h"

#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <math.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEFAULT_OUT "health-report"
#define DEFAULT_MAX_PLOTS 64

enum {
	OPT_OUT = 0x1200, OPT_STRICT, OPT_EXPECT, OPT_PUE, OPT_PRICE, OPT_CURRENCY,
	OPT_CARBON, OPT_CPU_W, OPT_MAX_PLOTS, OPT_COLOR, OPT_DETAIL, OPT_STEPS
};

#define MAX_STEP_PATHS 64

void hr_report_usage(FILE *f, int subcommands)
{
	fprintf(f,
"usage: health_report [options] INPUT...\n"
"%s"
"\n"
"Fold result files of roofline, allreduce_bw, loader_contention, checkpoint_io\n"
"and kernel_log (health_report kernel-log: Xid, SXid, AER, link flaps)\n"
"(one node or a fleet, one night or many) and nccl-tests output (text logs in\n"
"every format, or -J JSON), dcgmi diag -j and nvbandwidth -j output (the node:\n"
"that of our results in the same folder, else the folder's name) into a\n"
"cluster-health profile: per node and GPU the\n"
"measured roofs against the datasheet and the fleet, busbw per group and\n"
"algorithm, stragglers, the loader verdict, checkpoint writes per node and\n"
"mount against the peers, configuration drift, and per node a verdict PASS,\n"
"WARN or FAIL (NOT JUDGED, saying why, where none of its performance checks\n"
"could be judged: noisy, no reference, or a tool's result 'unavailable') with\n"
"its reasons and suggested actions.\n"
"\n"
"INPUT: files, or directories searched recursively for *.json, *.txt, *.log\n"
"and *.out files. health_report's own outputs are ignored; --out may lie inside\n"
"an input tree (only the report's outputs there are left out). Every string\n"
"from an input is shown escaped: control characters and bidi overrides on the\n"
"terminal, and in report.md, report.html and health.prom as each format needs.\n"
"Only the latest run of a device or group among the inputs is judged; its\n"
"earlier runs are its history (superseded_by in profile.json), kept out of the\n"
"fleet and verdicts.\n"
"\n"
"Options:\n"
"  --out DIR           write profile.json, report.md, report.html and\n"
"                      health.prom to DIR (created; default ./" DEFAULT_OUT ")\n"
"  --strict            any skipped input (malformed, unknown, unsupported) is\n"
"                      an error: exit 2 after writing the report\n"
"  --expect FILE       per-SKU expectations and thresholds overriding the\n"
"                      built-in ones (JSON, see docs/health_report.md)\n"
"  --pue X             facility PUE for the run's cost (default %.2f)\n"
"  --price-kwh X       electricity price per kWh (default %.4f)\n"
"  --currency CODE     currency of --price-kwh (default %s)\n"
"  --carbon-g-kwh X    grid carbon intensity, gCO2e/kWh (default %.0f)\n"
"  --cpu-watts W       assumed power per CPU package for energy estimates\n"
"                      (default %.0f)\n"
"  --steps PATH        a training job's step logs (file or directory, repeatable):\n"
"                      a \"Step logs\" section per rank in the outputs\n"
"                      (health_report steps; docs/canary.md)\n"
"  --max-plots N       at most N plots of each kind in report.html, flagged\n"
"                      subjects first (default %d)\n"
"  --detail WHAT       flagged (default): a PASS node's entry in profile.json\n"
"                      is bounded (verdict, headline figures and what each was\n"
"                      judged against, its devices' values, its input files),\n"
"                      a distribution of more than 1000 values keeps its\n"
"                      outliers and 1000 ranks; WARN, FAIL and NOT JUDGED nodes\n"
"                      keep their full detail. report.md and report.html list\n"
"                      a PASS node's devices and loader up to 64 PASS nodes\n"
"                      (beyond, they say how many are left out); health.prom\n"
"                      is bounded like profile.json. all: every node in full\n"
"                      everywhere (memory and output grow with the inputs)\n"
"  --color WHEN        auto (default: only on a terminal, and not with\n"
"                      NO_COLOR), always or never\n"
"  -q, --quiet         print one line: the fleet verdict (NOT JUDGED when no\n"
"                      node could be judged), the counts, the nodes not judged\n"
"                      (the first 10 by name) and the drain candidates; INPUT\n"
"                      ERROR and why when the\n"
"                      inputs make it exit 2\n"
"  -h, --help          this text;  -V, --version  the version\n"
"\n"
"Exit status: 0 no node FAILs; 1 at least one FAIL (the drain candidates\n"
"among them are listed: nodes with a hard fault or a confirmed FAIL); 2 usage\n"
"or input error (no usable input: no file contributed; with --strict also\n"
"any skipped input); 4 run-time error\n"
"(cannot write the outputs, or another health_report is writing to --out:\n"
"DIR/.health_report.lock is held; nothing is written then).\n"
"\n"
"A figure whose measurement was noisy (per-call CV, host CPU pressure,\n"
"oversubscription) is not judged and counted as noisy; a value is flagged\n"
"only when it is both far enough below its like values and improbable given\n"
"their spread and the node's number of comparisons (docs/health_report.md,\n"
"\"False alarms\").\n"
"\n"
"Examples:\n"
"  health_report results/                      # a sweep's results\n"
"  health_report --out /srv/reports/today /shared/results/2025-06-01\n"
"  health_report all_reduce_16gpu.txt nccl.json  # nccl-tests outputs\n"
"  health_report --strict --pue 1.2 --price-kwh 0.12 --currency EUR results/\n",
		subcommands ?
"       health_report canary [options] INPUT...   the pre-scaling canary\n"
"       health_report history [options] INPUT...  nightly history and regressions\n"
"       health_report steps [options] LOG|DIR...   a training job's own step logs\n"
"       health_report kernel-log [options]        the kernel log's GPU and NIC faults\n"
"       health_report rules                       the verdict rules as a table\n"
"       (health_report canary --help, history --help, steps --help,\n"
"        kernel-log --help)\n" : "",
		HR_DEFAULT_PUE, HR_DEFAULT_PRICE_PER_KWH, HR_DEFAULT_CURRENCY,
		HR_DEFAULT_CARBON_G_PER_KWH, HR_DEFAULT_CPU_W, DEFAULT_MAX_PLOTS);
}

static int mkdir_p(const char *dir)
{
	char path[4096];
	size_t i, n = strlen(dir);
	if (n == 0 || n >= sizeof(path))
		return -1;
	memcpy(path, dir, n + 1);
	for (i = 1; i <= n; i++) {
		if (path[i] == '/' || path[i] == '\0') {
			char c = path[i];
			path[i] = '\0';
			if (mkdir(path, 0755) != 0 && errno != EEXIST)
				return -1;
			path[i] = c;
		}
	}
	return 0;
}

/* The lock of an output directory: DIR/OUT_LOCK, held (flock) from before
 * the first output is written until the process ends, so two runs never
 * mix their files in one --out. Returns the descriptor (kept open), -1 with
 * the reason printed: held by another run (never waited for), or it
 * cannot be made. */
#define OUT_LOCK ".health_report.lock"
static int lock_out(const char *dir)
{
	char path[4200];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, OUT_LOCK);
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
	if (fd < 0 || fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		ch_error("cannot lock the output directory '%s': '%s' %s", dir, path,
			 fd < 0 ? strerror(errno) : "is not a regular file");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		ch_error("the output directory '%s' is being written by another health_report (it holds '%s'): "
			 "nothing written; give another --out or run again when it is done (exit 4)", dir, path);
		close(fd);
		return -1;
	}
	return fd;
}

struct opts {
	const char *out;
	int strict;
	const char *expect;
	int max_plots;
	int color; /* -1 auto, 0 never, 1 always */
	int detail_all;
	int quiet;
	struct hr_cost_params cost;
	char *steps[MAX_STEP_PATHS];
	int nsteps;
};

/* An output file written atomically (ch_atomic_begin(): a temporary beside
 * it, put in place by ch_atomic_commit()), through a stream. */
struct outfile {
	struct ch_atomic a;
	char path[4200];
	FILE *f;
};

/* The outputs being written, for the signal handler: on a file system
 * without O_TMPFILE each has a named temporary "FILE.tmp.PID" (from
 * ch_atomic_begin(), or from ch_atomic_commit() until it is renamed),
 * removed by on_signal() before the signal ends the process. */
#define MAX_OPEN_OUTPUTS 4
static struct outfile *volatile open_outputs[MAX_OPEN_OUTPUTS];

static void on_signal(int sig)
{
	size_t i;
	for (i = 0; i < MAX_OPEN_OUTPUTS; i++) {
		struct outfile *o = open_outputs[i];
		/* the name holds this process's id: nothing but our own
		 * temporary (or, once renamed, nothing) answers to it */
		if (o)
			unlink(o->a.tmp);
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

/* SIGINT and SIGTERM (Ctrl-C, scancel, a job's time limit) end the run as
 * before, the outputs of the run before left as they were, but without a
 * temporary of ours left beside them; a signal ignored when the run
 * started (SIGINT of a background job) stays ignored. */
static void catch_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM };
	size_t i;
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction sa, cur;
		if (sigaction(sigs[i], NULL, &cur) == 0 && cur.sa_handler == SIG_IGN)
			continue;
		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_signal;
		sigemptyset(&sa.sa_mask);
		sigaction(sigs[i], &sa, NULL);
	}
}

static void out_track(struct outfile *o, int on)
{
	size_t i;
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (i = 0; i < MAX_OPEN_OUTPUTS; i++)
		if (on ? !open_outputs[i] : open_outputs[i] == o) {
			open_outputs[i] = on ? o : NULL;
			break;
		}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static int out_open(struct outfile *o, const char *dir, const char *name)
{
	int fd;
	sigset_t sigs, old;
	snprintf(o->path, sizeof(o->path), "%s/%s", dir, name);
	/* no signal between the temporary's creation and its tracking */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, &old);
	if (ch_atomic_begin(&o->a, o->path)) {
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		return CH_ERR_RUNTIME;
	}
	out_track(o, 1);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	fd = dup(o->a.fd);
	o->f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!o->f) {
		ch_error("cannot write '%s': %s", o->path, strerror(errno));
		if (fd >= 0)
			close(fd);
		ch_atomic_abort(&o->a);
		out_track(o, 0);
		return CH_ERR_RUNTIME;
	}
	return 0;
}

/* @ok: the text was written; then it is put in place, else given up
 * (silently, unless writing this file is what failed: the caller says
 * why it gives up). Returns 0 or CH_ERR_RUNTIME (a write error of this
 * file printed). */
static int out_close(struct outfile *o, int ok)
{
	int werr, e, rc;
	if (!o->f)
		return 0;
	/* a stream in error: errno is still the failed write's (nothing
	 * since has set it but a success) */
	e = errno;
	werr = ferror(o->f);
	if (!werr && fflush(o->f) != 0) {
		werr = 1;
		e = errno;
	}
	if (fclose(o->f) != 0 && !werr) {
		werr = 1;
		e = errno;
	}
	o->f = NULL;
	if (werr)
		ch_error("cannot write '%s': %s", o->path, strerror(e ? e : EIO));
	if (werr || !ok) {
		ch_atomic_abort(&o->a);
		out_track(o, 0);
		return CH_ERR_RUNTIME;
	}
	rc = ch_atomic_commit(&o->a);
	out_track(o, 0);
	return rc;
}

/* ---- profile.json, written as it is handed over (json_dumpf()'s text of
 * the whole profile with JSON_INDENT(2) | JSON_REAL_PRECISION(10), byte for
 * byte: hr_jdump()) */

/* @v as json_dumpf() writes it @depth levels deep: each line after the
 * first indented by 2 x @depth more (JSON text has no raw newline inside a
 * string). Returns 0, or -1 on a write error or a value jansson would not
 * write either. */
static int dump_at(FILE *f, const json_t *v, int depth)
{
	return hr_jdump(f, v, depth);
}

/* "key": value, at the top level of the profile */
static int dump_member(FILE *f, const char *key, const json_t *v, int first)
{
	json_t *k = json_string(key);
	int rc = !k || fputs(first ? "{\n  " : ",\n  ", f) < 0 || dump_at(f, k, 1) || fputs(": ", f) < 0 ||
		 dump_at(f, v, 1);
	json_decref(k);
	return rc ? -1 : 0;
}

/*
 * The nodes' share of profile.json and of the renderers (a third of the
 * work after loading) runs on two threads of their own while the judge
 * builds the next entries: a bounded queue of the entries handed over
 * (each held by a reference per thread), taken in order by the profile's
 * writer and by the renderers' writer, so that every output is what one
 * thread writes. A writer's failure is seen by the next node handed (the
 * profile stops, as when the writing was in line), and the other writer
 * skips what follows.
 */
#define NODE_QUEUE 16

enum { W_PROFILE, W_RENDER, W_N };

struct writer {
	pthread_t th[W_N];
	int on;                 /* the threads run (else the nodes are written in line) */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	json_t *node[NODE_QUEUE], *full[NODE_QUEUE];
	size_t put, got[W_N];   /* entries handed, entries each writer has done */
	int closing;            /* no more entries: the threads end once they have written them */
	int failed;             /* a writer failed: the entries after it are dropped */
	int said;               /* a writer said why (ch_error()) */
};

struct stream;
struct writer_arg {
	struct stream *s;
	int role;               /* W_PROFILE or W_RENDER */
};

#define QUIET_NAMES 10

struct stream {
	const struct opts *o;
	struct outfile profile;
	size_t nodes;
	struct hr_render *r;
	struct writer w;
	struct writer_arg wa[W_N];
	json_t *summary;    /* the head's summary and exit code, for -q and the exit status */
	json_int_t exit_code;
	json_t *tail;       /* kept until the fleet model is released */
	json_t *steps;      /* the job's step logs (--steps), NULL none: the profile's last member */
	int in_rc;          /* the inputs are a usage error: the profile's exit_code is 2 */
	int err;
	/* -q: the first QUIET_NAMES nodes not judged, by name (escaped when printed) */
	char nj_name[QUIET_NAMES][64];
	size_t nj;
};

static int s_head(void *ctx, const json_t *given)
{
	struct stream *s = ctx;
	struct hr_render_opts ro;
	const char *key;
	json_t *v, *head = json_deep_copy(given);
	int first = 1, rc = 0;

	if (!head)
		return s->err = CH_ERR_RUNTIME;
	if (s->in_rc)
		json_object_set_new(head, "exit_code", json_integer(CH_EXIT_USAGE));
	if (out_open(&s->profile, s->o->out, "profile.json")) {
		json_decref(head);
		return s->err = CH_ERR_RUNTIME;
	}
	json_object_foreach(head, key, v) {
		if (dump_member(s->profile.f, key, v, first)) {
			json_decref(head);
			return s->err = CH_ERR_RUNTIME;
		}
		first = 0;
	}
	if (fputs(",\n  \"nodes\": ", s->profile.f) < 0)
		return s->err = CH_ERR_RUNTIME;
	s->summary = json_deep_copy(json_object_get(head, "summary"));
	s->exit_code = json_integer_value(json_object_get(head, "exit_code"));
	memset(&ro, 0, sizeof(ro));
	ro.md = ro.prom = ro.html = 1;
	ro.terminal = !s->o->quiet;
	ro.max_plots = s->o->max_plots;
	ro.color = s->o->color;
	s->r = hr_render_begin(head, &ro);
	if (!s->summary || !s->r)
		rc = s->err = CH_ERR_RUNTIME;
	json_decref(head);
	return rc;
}

/* a node's entry into profile.json (W_PROFILE) or the renderers
 * (W_RENDER), on that writer's thread when they run; returns 0 or
 * CH_ERR_RUNTIME */
static int node_out(struct stream *s, int role, const json_t *node, const json_t *full)
{
	if (role == W_PROFILE)
		return fputs(s->nodes++ ? ",\n    " : "[\n    ", s->profile.f) < 0 ||
		       dump_at(s->profile.f, node, 2) ? CH_ERR_RUNTIME : 0;
	return hr_render_node(s->r, node, full) ? CH_ERR_RUNTIME : 0;
}

/* the oldest entry a writer has not done yet: its slot is free again */
static size_t writers_done(const struct writer *w)
{
	return w->got[W_PROFILE] < w->got[W_RENDER] ? w->got[W_PROFILE] : w->got[W_RENDER];
}

static void *writer_main(void *arg)
{
	const struct writer_arg *wa = arg;
	struct stream *s = wa->s;
	struct writer *w = &s->w;
	size_t *got = &w->got[wa->role];
	int rc = 0;
	ch_clear_last_error();
	pthread_mutex_lock(&w->mu);
	for (;;) {
		json_t *node, *full;
		int skip;
		while (*got == w->put && !w->closing)
			pthread_cond_wait(&w->cv, &w->mu);
		if (*got == w->put)
			break;
		node = w->node[*got % NODE_QUEUE];
		full = w->full[*got % NODE_QUEUE];
		skip = w->failed;
		pthread_mutex_unlock(&w->mu);
		if (!skip)
			rc = node_out(s, wa->role, node, full);
		json_decref(node);
		json_decref(full);
		pthread_mutex_lock(&w->mu);
		(*got)++;
		if (rc) {
			w->failed = 1;
			w->said |= *ch_last_error() != 0;
			rc = 0;
		}
		pthread_cond_broadcast(&w->cv);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/* the writers' threads started (when they cannot be, the nodes are
 * written in line: the outputs are the same) */
static void writer_start(struct stream *s)
{
	struct writer *w = &s->w;
	int k;
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->cv, NULL);
	for (k = 0; k < W_N; k++) {
		s->wa[k].s = s;
		s->wa[k].role = k;
	}
	w->on = pthread_create(&w->th[W_PROFILE], NULL, writer_main, &s->wa[W_PROFILE]) == 0;
	if (w->on && pthread_create(&w->th[W_RENDER], NULL, writer_main, &s->wa[W_RENDER])) {
		/* one thread only: none (it has nothing yet) */
		pthread_mutex_lock(&w->mu);
		w->closing = 1;
		pthread_cond_broadcast(&w->cv);
		pthread_mutex_unlock(&w->mu);
		pthread_join(w->th[W_PROFILE], NULL);
		w->closing = 0;
		w->on = 0;
	}
	if (!w->on) {
		pthread_mutex_destroy(&w->mu);
		pthread_cond_destroy(&w->cv);
	}
}

/* every entry handed written (or dropped after a failure) and the thread
 * ended; returns 0, or CH_ERR_RUNTIME when the writer failed. Called once
 * the profile's nodes are over, or stopped. */
static int writer_finish(struct stream *s)
{
	struct writer *w = &s->w;
	int failed;
	if (!w->on)
		return 0;
	pthread_mutex_lock(&w->mu);
	w->closing = 1;
	pthread_cond_broadcast(&w->cv);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->th[W_PROFILE], NULL);
	pthread_join(w->th[W_RENDER], NULL);
	failed = w->failed;
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cv);
	w->on = 0;
	return failed ? CH_ERR_RUNTIME : 0;
}

static int s_node(void *ctx, const json_t *node, const json_t *full)
{
	struct stream *s = ctx;
	struct writer *w = &s->w;
	int failed;
	const char *vd = json_string_value(json_object_get(node, "verdict"));
	if (vd && !strcmp(vd, "NOT JUDGED") && s->nj++ < QUIET_NAMES)
		snprintf(s->nj_name[s->nj - 1], sizeof(s->nj_name[0]), "%s",
			 json_string_value(json_object_get(node, "name")) ? json_string_value(json_object_get(node, "name")) : "?");
	if (!w->on)
		return node_out(s, W_PROFILE, node, full) || node_out(s, W_RENDER, node, full) ?
		       (s->err = CH_ERR_RUNTIME) : 0;
	pthread_mutex_lock(&w->mu);
	while (w->put - writers_done(w) >= NODE_QUEUE && !w->failed)
		pthread_cond_wait(&w->cv, &w->mu);
	failed = w->failed;
	if (!failed) {
		/* borrowed for the call: held until written, a reference a writer */
		w->node[w->put % NODE_QUEUE] = json_incref(json_incref((json_t *)node));
		w->full[w->put % NODE_QUEUE] = full ? json_incref(json_incref((json_t *)full)) : NULL;
		w->put++;
		pthread_cond_broadcast(&w->cv);
	}
	pthread_mutex_unlock(&w->mu);
	return failed ? (s->err = CH_ERR_RUNTIME) : 0;
}

static int s_tail(void *ctx, const json_t *given)
{
	struct stream *s = ctx;
	const char *key;
	json_t *v, *tail;
	if (writer_finish(s))
		return s->err = CH_ERR_RUNTIME;
	tail = json_copy((json_t *)given);
	if (!tail || (s->steps && json_object_set(tail, "steps", s->steps))) {
		json_decref(tail);
		return s->err = CH_ERR_RUNTIME;
	}
	s->tail = tail;
	if (fputs(s->nodes ? "\n  ]" : "[]", s->profile.f) < 0)
		return s->err = CH_ERR_RUNTIME;
	json_object_foreach(tail, key, v)
		if (dump_member(s->profile.f, key, v, 0))
			return s->err = CH_ERR_RUNTIME;
	if (fputs("\n}", s->profile.f) < 0)
		return s->err = CH_ERR_RUNTIME;
	if (out_close(&s->profile, 1))
		return s->err = CH_ERR_RUNTIME;
	return 0;
}

/* The other outputs, from what the nodes left and the profile's tail:
 * report.md, health.prom, report.html, each atomically; the terminal
 * summary into @term (a memory stream: printed once all are written). */
static int render_outputs(struct stream *s, FILE *term, int *nplots)
{
	struct outfile md, prom, html;
	struct hr_render_out out = { NULL, NULL, NULL, term };
	int rc;
	memset(&md, 0, sizeof(md));
	memset(&prom, 0, sizeof(prom));
	memset(&html, 0, sizeof(html));
	if ((rc = out_open(&md, s->o->out, "report.md")) || (rc = out_open(&prom, s->o->out, "health.prom")) ||
	    (rc = out_open(&html, s->o->out, "report.html")))
		goto fail;
	out.md = md.f;
	out.prom = prom.f;
	out.html = html.f;
	ch_clear_last_error();
	if ((rc = hr_render_end(s->r, s->tail, &out, nplots)))
		goto fail;
	if ((rc = out_close(&md, 1)) || (rc = out_close(&prom, 1)) || (rc = out_close(&html, 1)))
		goto fail;
	return 0;
fail:
	/* a write error of an output is said by its out_close(), one of a
	 * temporary file where it happened; else it ran out of memory */
	out_close(&md, 0);
	out_close(&prom, 0);
	out_close(&html, 0);
	if (!*ch_last_error())
		ch_error("out of memory while rendering the report");
	return rc ? rc : CH_ERR_RUNTIME;
}


static int parse_opts(int argc, char **argv, struct opts *o, int *done)
{
	static const struct option longopts[] = {
		{ "out", required_argument, NULL, OPT_OUT },
		{ "strict", no_argument, NULL, OPT_STRICT },
		{ "expect", required_argument, NULL, OPT_EXPECT },
		{ "pue", required_argument, NULL, OPT_PUE },
		{ "price-kwh", required_argument, NULL, OPT_PRICE },
		{ "currency", required_argument, NULL, OPT_CURRENCY },
		{ "carbon-g-kwh", required_argument, NULL, OPT_CARBON },
		{ "cpu-watts", required_argument, NULL, OPT_CPU_W },
		{ "max-plots", required_argument, NULL, OPT_MAX_PLOTS },
		{ "color", required_argument, NULL, OPT_COLOR },
		{ "steps", required_argument, NULL, OPT_STEPS },
		{ "colour", required_argument, NULL, OPT_COLOR },
		{ "detail", required_argument, NULL, OPT_DETAIL },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 }
	};
	static const char *const colors[] = { "never", "always", "auto", NULL };
	static const char *const details[] = { "flagged", "all", NULL };
	int c, rc;
	long l;

	*done = 0;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "qhV", longopts, NULL)) != -1) {
		switch (c) {
		case OPT_OUT: {
			/* its trailing slashes dropped: the paths printed read DIR/report.html */
			size_t n = strlen(optarg);
			if (!n)
				return ch_usage_error("--out needs a directory name");
			while (n > 1 && optarg[n - 1] == '/')
				optarg[--n] = '\0';
			o->out = optarg;
			break;
		}
		case OPT_STRICT: o->strict = 1; break;
		case OPT_EXPECT: o->expect = optarg; break;
		case OPT_PUE:
			if ((rc = ch_parse_double("--pue", optarg, 1.0, 5.0, &o->cost.pue)))
				return rc;
			o->cost.pue_given = 1;
			break;
		case OPT_PRICE:
			if ((rc = ch_parse_double("--price-kwh", optarg, 0.0, 100.0, &o->cost.price_per_kwh)))
				return rc;
			o->cost.price_given = 1;
			break;
		case OPT_CURRENCY: {
			size_t n = strlen(optarg), i;
			int ok = n >= 1 && n < sizeof(o->cost.currency);
			for (i = 0; ok && i < n; i++)
				if (!((optarg[i] >= 'A' && optarg[i] <= 'Z') || (optarg[i] >= 'a' && optarg[i] <= 'z')))
					ok = 0;
			if (!ok)
				return ch_usage_error("invalid value '%s' for --currency (expected 1 to %zu letters, e.g. USD)",
						      optarg, sizeof(o->cost.currency) - 1);
			snprintf(o->cost.currency, sizeof(o->cost.currency), "%s", optarg);
			break;
		}
		case OPT_CARBON:
			if ((rc = ch_parse_double("--carbon-g-kwh", optarg, 0.0, 5000.0, &o->cost.carbon_g_per_kwh)))
				return rc;
			o->cost.carbon_given = 1;
			break;
		case OPT_CPU_W:
			if ((rc = ch_parse_double("--cpu-watts", optarg, 1.0, 5000.0, &o->cost.cpu_w)))
				return rc;
			o->cost.cpu_w_given = 1;
			break;
		case OPT_MAX_PLOTS:
			if ((rc = ch_parse_long("--max-plots", optarg, 1, 100000, &l)))
				return rc;
			o->max_plots = (int)l;
			break;
		case OPT_COLOR:
			if ((rc = ch_lookup("--color", optarg, colors)) < 0)
				return rc;
			o->color = rc == 2 ? -1 : rc;
			break;
		case OPT_DETAIL:
			if ((rc = ch_lookup("--detail", optarg, details)) < 0)
				return rc;
			o->detail_all = rc == 1;
			break;
		case OPT_STEPS:
			if (o->nsteps == MAX_STEP_PATHS)
				return ch_usage_error("more than %d --steps paths", MAX_STEP_PATHS);
			o->steps[o->nsteps++] = optarg;
			break;
		case 'q': o->quiet = 1; break;
		case 'h':
			hr_report_usage(stdout, 1);
			*done = 1;
			return 0;
		case 'V':
			printf("health_report (clusterhealth) %s (git %s)\n", CH_VERSION, ch_git_rev());
			*done = 1;
			return 0;
		default:
			return ch_option_error(argv, "qhV", longopts);
		}
	}
	if (optind >= argc)
		return ch_usage_error("no input given (files or directories of result files and nccl-tests logs)");
	return 0;
}

/* The judge's options of a run with options @o, expectations @ex and
 * @nfiles input files. */
static void analyze_opts(struct hr_analyze_opts *ao, const struct opts *o, const struct hr_expect *ex, size_t nfiles)
{
	memset(ao, 0, sizeof(*ao));
	ao->expect = ex;
	ao->cost = &o->cost;
	ao->generated_utc = NULL; /* now */
	ao->input_files = nfiles;
	ao->detail_all = o->detail_all;
	/* report.md and report.html show a PASS node's devices and loader in
	 * a fleet of few PASS nodes (profile.json stays bounded) */
	ao->full_pass_max = HR_RENDER_PASS_FULL_MAX;
}

/* -q's one line: the verdict and its counts, or @in_error (the inputs'
 * exit-2 message) when set: the line never shows a verdict the exit status
 * contradicts. */
static void print_quiet_line(const struct stream *st, const json_t *s, const char *in_error)
{
	const json_t *d;
	size_t k;
	long long nj;

	if (in_error) {
		printf("health_report: INPUT ERROR: %s\n", in_error);
		return;
	}
	nj = hr_jint(s, "not_judged", 0);
	printf("health_report: %s: %lld FAIL, %lld WARN, %lld PASS", hr_jstr(s, "verdict"),
	       hr_jint(s, "fail", 0), hr_jint(s, "warn", 0), hr_jint(s, "pass", 0));
	if (nj > 0)
		printf(", %lld not judged", nj);
	for (k = 0; k < st->nj && k < QUIET_NAMES; k++)
		printf("%s%s", k ? " " : "; not judged: ", hr_term(st->nj_name[k]));
	if (st->nj > QUIET_NAMES)
		printf(" and %zu more", st->nj - QUIET_NAMES);
	json_array_foreach(json_object_get(s, "drain_candidates"), k, d)
		printf("%s%s", k ? " " : "; drain candidates: ", hr_term(json_string_value(d)));
	printf("\n");
}

int hr_report_main(int argc, char **argv)
{
	struct opts o;
	struct hr_expect ex;
	struct hr_fleet fleet;
	struct hr_file_list files;
	struct hr_analyze_opts ao;
	struct stream st;
	struct hr_profile_sink sink = { &st, s_head, s_node, s_tail };
	char *term_s = NULL;
	size_t term_n = 0;
	FILE *term = NULL;
	int rc, done, exit_code = CH_EXIT_OK, nplots = 0, in_rc = 0;
	struct hr_steps_run steps;
	char in_msg[256];

	ch_set_prog("health_report");
	memset(&o, 0, sizeof(o));
	memset(&st, 0, sizeof(st));
	o.out = DEFAULT_OUT;
	o.max_plots = DEFAULT_MAX_PLOTS;
	o.color = -1;
	hr_cost_defaults(&o.cost);
	memset(&fleet, 0, sizeof(fleet));
	memset(&steps, 0, sizeof(steps));
	if ((rc = parse_opts(argc, argv, &o, &done)))
		return ch_exit_code(rc);
	if (done)
		return CH_EXIT_OK;
	o.color = o.color >= 0 ? o.color : (isatty(STDOUT_FILENO) && !getenv("NO_COLOR") &&
					    !(getenv("TERM") && !strcmp(getenv("TERM"), "dumb")));
	st.o = &o;
	if (hr_expect_init(&ex))
		return CH_EXIT_RUNTIME;
	if (o.expect && (rc = hr_expect_load_file(&ex, o.expect))) {
		hr_expect_release(&ex);
		return ch_exit_code(rc);
	}
	rc = hr_collect_inputs(argv + optind, argc - optind, o.out, &files, &fleet.issues);
	if (rc) {
		hr_expect_release(&ex);
		hr_fleet_release(&fleet);
		return ch_exit_code(rc);
	}
	catch_signals();
	if (mkdir_p(o.out) != 0) {
		ch_error("cannot create output directory '%s': %s", o.out, strerror(errno));
		rc = CH_ERR_RUNTIME;
		goto out;
	}
	if (lock_out(o.out) < 0) { /* held until exit: the descriptor stays open */
		rc = CH_ERR_RUNTIME;
		goto out;
	}
	rc = hr_fleet_load_files(&fleet, (const char *const *)files.paths, files.named, files.n);
	/* the reading threads' memory (their documents, freed) handed back before
	 * the judge's values are made (the peak): 4 MiB at 12,500 nodes */
	malloc_trim(0);
	if (rc)
		goto out;
	/* the job's step logs: their problems are the report's input problems */
	if (o.nsteps && (rc = hr_steps_run_load(o.steps, o.nsteps, NULL, &steps, &fleet.issues)))
		goto out;

	/* what the inputs gave, by the rule of every entry point: no usable
	 * input, or a skipped one with --strict, is exit 2 (the outputs are
	 * still written, and say so: the profile's exit_code) */
	in_rc = hr_inputs_verdict(files.n, fleet.files_read, &fleet.issues, o.strict, in_msg, sizeof(in_msg));
	st.in_rc = in_rc;
	analyze_opts(&ao, &o, &ex, files.n);
	ao.drop_points = &fleet; /* released after the profile: nothing reads them after the nodes */
	if (o.nsteps) {
		/* the job's step logs: the profile's "steps", after the rest */
		struct hr_steps_view v;
		memset(&v, 0, sizeof(v));
		v.run = &steps;
		v.gpus = hr_steps_run_gpus(&steps); /* 0 (null): one rank's log */
		v.params = NAN;
		if (!(st.steps = hr_steps_json(&v))) {
			ch_error("out of memory while building the profile");
			rc = CH_ERR_RUNTIME;
			goto out;
		}
	}
	/* the profile is written to profile.json and rendered node by node as
	 * it is built (never held whole) */
	ch_clear_last_error();
	writer_start(&st);
	rc = hr_analyze_stream(&fleet, &ao, &sink);
	if (writer_finish(&st) && !rc)
		rc = CH_ERR_RUNTIME;
	if (rc) {
		/* a write error of profile.json is said by out_close(), one of
		 * a temporary file where it happened (by the writer's thread
		 * too); else memory ran out */
		out_close(&st.profile, 0);
		if (!*ch_last_error() && !st.w.said)
			ch_error("out of memory while building the profile");
		rc = CH_ERR_RUNTIME;
		goto out;
	}
	{
		/* the rest of the outputs reads what the nodes left: free the
		 * fleet model first, keeping its input problems and counts */
		struct hr_issues issues = fleet.issues;
		size_t files_read = fleet.files_read, files_ignored = fleet.files_ignored;
		memset(&fleet.issues, 0, sizeof(fleet.issues));
		hr_fleet_release(&fleet);
		fleet.issues = issues;
		fleet.files_read = files_read;
		fleet.files_ignored = files_ignored;
	}
	if (!o.quiet && !(term = open_memstream(&term_s, &term_n))) {
		rc = CH_ERR_RUNTIME;
		goto out;
	}
	if ((rc = render_outputs(&st, term, &nplots)))
		goto out;
	if (o.quiet) {
		print_quiet_line(&st, st.summary, in_rc ? in_msg : NULL);
	} else {
		fclose(term);
		term = NULL;
		fwrite(term_s ? term_s : "", 1, term_n, stdout);
		printf("\nreport: %s/report.html (%d plot%s), %s/report.md, %s/profile.json, %s/health.prom\n",
		       o.out, nplots, nplots == 1 ? "" : "s", o.out, o.out, o.out);
	}
	fflush(stdout);

	exit_code = (int)st.exit_code;
	if (in_rc)
		ch_error("%s", in_msg);
	rc = 0;
out:
	if (term)
		fclose(term);
	free(term_s);
	hr_render_free(st.r);
	json_decref(st.summary);
	json_decref(st.tail);
	json_decref(st.steps);
	hr_file_list_release(&files);
	hr_fleet_release(&fleet);
	hr_steps_run_release(&steps);
	hr_expect_release(&ex);
	return rc ? ch_exit_code(rc) : exit_code;
}
