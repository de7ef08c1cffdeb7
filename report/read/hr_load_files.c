/*
 * hr_load_files.c - many result files into the fleet model: read and
 * parsed ahead on reading threads (each with its own JSON arena), loaded in
 * input order (hr_fleet_load_files(), hr_model.h).
 */
#include "report/read/hr_model.h"
#include "report/read/hr_load_shared.h"
#include "report/read/hr_ckpt_load.h"
#include "report/read/hr_dcgm.h"
#include "report/read/hr_fastjson.h"
#include "report/read/hr_result.h"
#include "report/read/hr_steps.h"
#include "report/hr_util.h"
#include "base/ch_common.h"
#include "base/ch_result.h"

#include <sched.h>
#include <unistd.h>
#include <ctype.h>
#include <stddef.h>
#include <limits.h>
#include <pthread.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * A document parsed on a reading thread is read, mapped into the fleet and
 * freed whole: its values are allocated from an arena of its own (large
 * chunks, bump allocation) and released at once with it, instead of one
 * malloc and one free (on another thread) per value, which was a quarter of
 * the time spent loading. jansson's allocator (json_set_alloc_funcs(),
 * installed by hr_json_alloc_init() before any value is made) allocates
 * from the arena of the calling thread while that thread parses, and from
 * the heap otherwise; a free while parsing is of arena memory and a no-op.
 * Nothing of such a document is kept: what the fleet keeps is copied
 * (strings duplicated, the inventory deep-copied on the loading thread).
 */
struct achunk {
	struct achunk *next;
	size_t used, cap;
	max_align_t data[];
};

struct arena {
	struct achunk *head;
};

#define ARENA_CHUNK (256u << 10)

static __thread struct arena *tl_arena;
/* set when an allocation of jansson's on this thread failed: a document
 * that did not parse for want of memory is not malformed (jansson's error
 * text then says nothing or blames the syntax) */
static __thread int tl_alloc_failed;

/*
 * Chunks of ARENA_CHUNK bytes are kept for the next documents (up to
 * POOL_MAX of them, whichever thread frees or takes them): freed to malloc,
 * they were handed back to the kernel at the top of a reading thread's heap
 * and faulted in again, zeroed, for the next document (a tenth of the
 * reading threads' time). hr_fleet_load_files() frees the pool when done.
 */
#define POOL_MAX 64

static pthread_mutex_t pool_mu = PTHREAD_MUTEX_INITIALIZER;
static struct achunk *pool;
static size_t npool;

static struct achunk *chunk_new(size_t cap)
{
	struct achunk *x = NULL;
	if (cap == ARENA_CHUNK) {
		pthread_mutex_lock(&pool_mu);
		if ((x = pool)) {
			pool = x->next;
			npool--;
		}
		pthread_mutex_unlock(&pool_mu);
	}
	return x ? x : malloc(sizeof(*x) + cap);
}

static void chunk_free(struct achunk *x)
{
	if (x->cap == ARENA_CHUNK) {
		pthread_mutex_lock(&pool_mu);
		if (npool < POOL_MAX) {
			x->next = pool;
			pool = x;
			npool++;
			x = NULL;
		}
		pthread_mutex_unlock(&pool_mu);
	}
	free(x);
}

static void pool_drain(void)
{
	pthread_mutex_lock(&pool_mu);
	while (pool) {
		struct achunk *x = pool->next;
		free(pool);
		pool = x;
	}
	npool = 0;
	pthread_mutex_unlock(&pool_mu);
}

static void *arena_alloc(struct arena *a, size_t n)
{
	struct achunk *c = a->head;
	n = (n + 15) & ~(size_t)15;
	if (!c || c->used + n > c->cap) {
		size_t cap = n > ARENA_CHUNK / 2 ? n : ARENA_CHUNK;
		struct achunk *x = chunk_new(cap);
		if (!x)
			return NULL;
		x->used = 0;
		x->cap = cap;
		if (c && n > ARENA_CHUNK / 2) {
			/* a large value: a chunk of its own, behind the current one */
			x->next = c->next;
			c->next = x;
			x->used = n;
			return x->data;
		}
		x->next = c;
		a->head = c = x;
	}
	c->used += n;
	return (char *)c->data + c->used - n;
}

static void arena_release(struct arena *a)
{
	while (a->head) {
		struct achunk *x = a->head->next;
		chunk_free(a->head);
		a->head = x;
	}
}

static void *json_alloc(size_t n)
{
	void *p = tl_arena ? arena_alloc(tl_arena, n) : malloc(n);
	if (!p)
		tl_alloc_failed = 1;
	return p;
}

static void json_release(void *p)
{
	if (!tl_arena)
		free(p);
}

void hr_json_alloc_init(void)
{
	json_set_alloc_funcs(json_alloc, json_release);
}

/* whether documents may be parsed into an arena (the allocator is ours) */
static int arena_usable(void)
{
	json_malloc_t m = NULL;
	json_free_t fr = NULL;
	json_get_alloc_funcs(&m, &fr);
	return m == json_alloc && fr == json_release;
}

/* One input file read and, when it looks like JSON, parsed, and a JSON
 * object read into its record: the part of loading that touches no fleet
 * state (so it may run on a reading thread). */
struct parsed {
	char *text;       /* the file's text, NULL when it could not be read (and,
			     once parsed, for a JSON document) */
	size_t len;
	size_t nul_at;    /* strlen(text) before it was freed: < len for a binary file */
	char err[256];    /* why it could not be read */
	int json;         /* 1: it starts with '{' or '[' (doc or je says how it parsed) */
	int unread;       /* 1: the file could not be read (err) */
	int oom;          /* 1: out of memory while reading or parsing it */
	json_t *doc;
	json_error_t je;
	int has_pre;      /* doc is an object: pre holds its record */
	struct pre pre;
	struct arena arena; /* doc's values, when parsed into an arena */
};

_Static_assert(HR_READ_FILE_PAD >= HR_FASTJSON_PAD, "hr_read_file() pads for simdjson");

static void parse_input(const char *path, struct parsed *q)
{
	const char *p;
	int rc;
	memset(q, 0, sizeof(*q));
	if ((rc = hr_read_file(path, HR_MAX_INPUT_BYTES, &q->text, &q->len, q->err, sizeof(q->err)))) {
		q->text = NULL;
		q->unread = 1;
		q->oom = rc == CH_ERR_RUNTIME;
		return;
	}
	q->nul_at = strlen(q->text);
	if (q->nul_at != q->len)
		return;
	for (p = q->text; *p && isspace((unsigned char)*p); p++)
		;
	if (*p == '{' || *p == '[') {
		int plain = hr_result_text_plain(q->text, q->len);
		q->json = 1;
		if (arena_usable())
			tl_arena = &q->arena;
		tl_alloc_failed = 0;
		/* simdjson first; jansson for what it refuses (the error text) */
		q->doc = hr_fastjson_load(q->text, q->len);
		if (!q->doc) {
			if (q->arena.head) /* a document begun and refused */
				arena_release(&q->arena);
			tl_alloc_failed = 0;
			q->doc = json_loadb(q->text, q->len, 0, &q->je);
		}
		tl_arena = NULL;
		if (!q->doc && tl_alloc_failed)
			q->oom = 1;
		free(q->text); /* the document holds what is needed */
		q->text = NULL;
		if (json_is_object(q->doc)) {
			q->has_pre = 1;
			hl_pre_read(q->doc, &q->pre, plain);
		}
	}
}

static void parsed_release(struct parsed *q)
{
	if (q->has_pre)
		hr_result_release(&q->pre.rec);
	if (q->arena.head)
		arena_release(&q->arena); /* the document, whole */
	else
		json_decref(q->doc);
	free(q->text);
	memset(q, 0, sizeof(*q));
}

static int step_seen(const struct hr_step_rec *r, void *ctx)
{
	(void)r;
	(void)ctx;
	return 0;
}

/* A file that is no result file but a training step log (its format's name,
 * borrowed), else NULL: for the hint to read it with 'health_report steps'. */
static const char *step_log_format(const char *path)
{
	struct hr_issues is = { 0 };
	struct hr_steps_file_info info;
	int rc;
	memset(&info, 0, sizeof(info));
	rc = hr_steps_read(path, step_seen, NULL, &is, &info);
	hr_issues_release(&is);
	return rc == 0 && info.format ? hr_steps_format_name(info.format) : NULL;
}

#define STEP_LOG_HINT "; it looks like a %s training step log: read it with 'health_report steps' " \
	"(or 'health_report canary --steps')"

/* The rest of hr_fleet_load_file() for a file parse_input() read (@q is
 * released by the caller, parsed_release()). */
static int load_parsed(struct hr_fleet *f, const char *path, int named, struct parsed *q)
{
	char *text = q->text;
	const char *p, *fmt;
	int rc = 0;

	if (q->oom)
		return CH_ERR_RUNTIME;
	if (q->unread) {
		hr_issue_add(&f->issues, HR_ISSUE_SKIPPED, path, 0, 0, "cannot read: %s", q->err);
		return 0;
	}
	if (q->nul_at != q->len) {
		hr_issue_add(&f->issues, HR_ISSUE_SKIPPED, path, 0, 0,
			     "binary file (NUL byte at offset %zu); skipped", q->nul_at);
		return 0;
	}
	if (q->json) {
		json_t *doc = q->doc;
		if (!doc && (fmt = step_log_format(path))) {
			hr_issue_add(&f->issues, HR_ISSUE_SKIPPED, path, 0, 0,
				     "not a result file (malformed JSON: %s)" STEP_LOG_HINT, q->je.text, fmt);
		} else if (!doc) {
			hr_issue_add(&f->issues, HR_ISSUE_SKIPPED, path, q->je.line > 0 ? q->je.line : 0,
				     q->je.column > 0 ? q->je.column : 0,
				     "malformed JSON: %s; file skipped", q->je.text);
		} else if (q->has_pre) {
			rc = hl_load_json_read(f, path, doc, named, &q->pre);
			q->has_pre = 0;
		} else {
			rc = hr_fleet_load_json(f, path, doc, named);
		}
		return rc;
	}
	for (p = text; *p && isspace((unsigned char)*p); p++)
		;
	if (!*p) {
		hr_issue_add(&f->issues, HR_ISSUE_SKIPPED, path, 0, 0, "empty file; skipped");
	} else if (strstr(text, "# allreduce_bw (clusterhealth")) {
		f->files_ignored++;
		hr_issue_add(&f->issues, HR_ISSUE_NOTE, path, 0, 0,
			     "ignored: allreduce_bw's own output (its --json result file holds the same sweeps)");
	} else if (hr_nt_text_detect(text)) {
		struct hr_nt_log log;
		rc = hr_nt_parse_text(path, text, &log, &f->issues);
		if (!rc)
			rc = hr_fleet_load_nccltests(f, &log);
		hr_nt_log_release(&log);
	} else if ((fmt = step_log_format(path))) {
		hr_issue_add(&f->issues, named ? HR_ISSUE_SKIPPED : HR_ISSUE_NOTE, path, 0, 0,
			     "%snot a result file or nccl-tests log" STEP_LOG_HINT, named ? "" : "ignored: ", fmt);
		f->files_ignored += !named;
	} else if (!named) {
		f->files_ignored++;
		hr_issue_add(&f->issues, HR_ISSUE_NOTE, path, 0, 0,
			     "ignored: not a result file or nccl-tests log (no JSON object, no nccl-tests table)");
	} else {
		hr_issue_add(&f->issues, HR_ISSUE_SKIPPED, path, 1, 0,
			     "not a result file or nccl-tests log (no JSON object, no nccl-tests table); skipped");
	}
	return rc;
}

/* load_parsed(), saying which file ran out of memory; the file known by
 * its name as UTF-8 text (hr_utf8_text(): a name that is not UTF-8 would
 * be lost by jansson, and with it the profile) */
static int load_one(struct hr_fleet *f, const char *path, int named, struct parsed *q)
{
	char *shown = hr_utf8_text(path);
	int rc = shown ? load_parsed(f, shown, named, q) : CH_ERR_RUNTIME;
	free(shown);
	if (rc)
		ch_error("out of memory while reading '%s'", hr_term(path));
	return rc;
}

int hr_fleet_load_file(struct hr_fleet *f, const char *path, int named)
{
	struct parsed q;
	int rc;
	parse_input(path, &q);
	rc = load_one(f, path, named, &q);
	parsed_release(&q);
	return rc;
}

/* Reading ahead for hr_fleet_load_files(): a small pool of threads (one per
 * CPU the process may run on, at most MAX_READERS) reads, parses and reads
 * into records the files in any order, each into its slot of a ring of
 * READ_AHEAD files per thread, while the caller loads them into the fleet
 * in the given order (so the fleet is the same as one thread would make). */
#define MAX_READERS 8
#define READ_AHEAD 4

struct ahead {
	const char *const *paths;
	size_t n, ring, next_claim, next_loaded;
	struct parsed *slot;     /* ring: file i in slot[i % ring] */
	unsigned char *ready;    /* ring: the slot holds its file, not yet loaded */
	int stop;
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

static void *read_ahead(void *arg)
{
	struct ahead *a = arg;
	for (;;) {
		struct parsed q;
		size_t i;
		pthread_mutex_lock(&a->mu);
		while (!a->stop && a->next_claim < a->n && a->next_claim >= a->next_loaded + a->ring)
			pthread_cond_wait(&a->cv, &a->mu);
		if (a->stop || a->next_claim >= a->n) {
			pthread_mutex_unlock(&a->mu);
			break;
		}
		i = a->next_claim++;
		pthread_mutex_unlock(&a->mu);
		parse_input(a->paths[i], &q);
		pthread_mutex_lock(&a->mu);
		a->slot[i % a->ring] = q;
		a->ready[i % a->ring] = 1;
		pthread_cond_broadcast(&a->cv);
		pthread_mutex_unlock(&a->mu);
	}
	return NULL;
}

/* The CPUs this process may run on (its affinity mask), at least 1. */
static int usable_cpus(void)
{
	cpu_set_t set;
	long n;
	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return CPU_COUNT(&set);
	n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}

static int load_all(struct hr_fleet *f, const char *const *paths, const unsigned char *named, size_t n)
{
	struct ahead *a;
	pthread_t th[MAX_READERS];
	int nth = 0, want, t;
	size_t i;
	int rc = 0;

	if (n < 2)
		return n ? hr_fleet_load_file(f, paths[0], named[0]) : 0;
	want = usable_cpus();
	if (want > MAX_READERS)
		want = MAX_READERS;
	if ((size_t)want > n)
		want = (int)n;
	a = calloc(1, sizeof(*a));
	if (!a) {
		ch_error("out of memory while reading the inputs");
		return CH_ERR_RUNTIME;
	}
	a->paths = paths;
	a->n = n;
	a->ring = (size_t)want * READ_AHEAD;
	a->slot = calloc(a->ring, sizeof(*a->slot));
	a->ready = calloc(a->ring, 1);
	if (!a->slot || !a->ready) {
		ch_error("out of memory while reading the inputs");
		free(a->slot);
		free(a->ready);
		free(a);
		return CH_ERR_RUNTIME;
	}
	pthread_mutex_init(&a->mu, NULL);
	pthread_cond_init(&a->cv, NULL);
	json_object_seed(0); /* before values are made on several threads (jansson's advice) */
	for (t = 0; t < want; t++)
		if (pthread_create(&th[nth], NULL, read_ahead, a) == 0)
			nth++;
	if (!nth) {
		/* no thread: load them one after another */
		for (i = 0; i < n && !rc; i++)
			rc = hr_fleet_load_file(f, paths[i], named[i]);
		goto done;
	}
	for (i = 0; i < n; i++) {
		struct parsed q;
		pthread_mutex_lock(&a->mu);
		while (!a->ready[i % a->ring])
			pthread_cond_wait(&a->cv, &a->mu);
		q = a->slot[i % a->ring];
		a->ready[i % a->ring] = 0;
		pthread_mutex_unlock(&a->mu);
		if (!rc)
			rc = load_one(f, paths[i], named[i], &q);
		parsed_release(&q);
		pthread_mutex_lock(&a->mu);
		a->next_loaded = i + 1;
		if (rc)
			a->stop = 1;
		pthread_cond_broadcast(&a->cv);
		pthread_mutex_unlock(&a->mu);
		if (rc)
			break;
	}
	for (t = 0; t < nth; t++)
		pthread_join(th[t], NULL);
	/* files read after a stop and never loaded */
	for (i = 0; i < a->ring; i++)
		if (a->ready[i])
			parsed_release(&a->slot[i]);
done:
	pthread_mutex_destroy(&a->mu);
	pthread_cond_destroy(&a->cv);
	free(a->slot);
	free(a->ready);
	free(a);
	return rc;
}

int hr_fleet_load_files(struct hr_fleet *f, const char *const *paths, const unsigned char *named, size_t n)
{
	int rc = load_all(f, paths, named, n);
	pool_drain();
	/* the other tools' results without a host: on the node of their folder */
	if (!rc && hr_dcgm_place(f)) {
		ch_error("out of memory while placing DCGM and nvbandwidth results on their nodes");
		rc = CH_ERR_RUNTIME;
	}
	return rc;
}
