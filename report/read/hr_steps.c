/*
 * hr_steps.c - training-step log reader (interface and formats: hr_steps.h;
 * docs/canary.md, "Step logs").
 *
 * One pass over the file with a bounded line buffer; each line is stripped
 * of launcher prefixes, then tried as each format's step line. What a
 * format prints over several lines (Megatron-LM's timer blocks, torchtitan's
 * checkpoint start and end) is carried in a small per-file state.
 */
#include "report/read/hr_steps.h"
#include "report/read/hr_steps_more.h"
#include "report/read/hr_steps_fast.h"
#include "report/hr_util.h"
#include "base/ch_common.h"

#include <ctype.h>
#include <stdarg.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_LISTED 20    /* malformed lines listed per file */
#define CHUNK (1u << 18) /* read size */
#define MAX_TIMERS 64
#define MAX_DOC_BYTES (64u << 20) /* trainer_state.json read whole */

/* ---------------------------------------------------------------- state */

struct timer {
	char name[48];
	double lo, hi;   /* minmax: min and max; max/one-line: hi only */
};

struct rank_times {
	int rank;
	double v[HR_PH_N];
	double ar_parent; /* backward-reduce-model-grads (the parent of the all-reduce timers) */
};

struct parser {
	const char *path;
	hr_steps_fn fn;
	void *ctx;
	struct hr_issues *issues;
	struct hr_steps_file_info *info;
	long line;
	int rc;          /* first error of fn */
	int oom;
	long listed;     /* malformed lines listed */
	double last_t;   /* last timestamp seen (NAN) */

	/* torchtitan: a checkpoint under way */
	double tt_ckpt_t;
	long tt_last_step;

	/* Megatron-LM */
	int have_pending;
	struct hr_step_rec pending;
	int block;       /* 0 none, 1 minmax, 2 max, 3 all */
	struct timer t[MAX_TIMERS];
	int nt;
	char cur[48];    /* "all": the timer whose ranks follow */
	struct rank_times *rt;
	size_t nrt, caprt;
	long *rttab;     /* open addressing by rank: index into rt, -1 empty */
	size_t rttabcap; /* a power of two, at least twice nrt */
	long ckpt_iter;  /* "saving checkpoint at iteration N": N, or -1 */
	int ckpt_saved;  /* "successfully saved checkpoint": its duration may follow */
	double eval_sec; /* the last "evaluate" timer (s), NAN */
	double mg_ctok;  /* Megatron-DeepSpeed: the last "consumed tokens" and */
	long mg_ctok_it; /* its iteration (0: none yet) */

	/* the formats of report/read/hr_steps_more.h */
	struct hr_steps_more more;
	/* whole lines of a variant not read, by format: named once, counted */
	long variant_n[HR_SF_N];
};

static void rec_init(struct hr_step_rec *r, struct parser *p, int format, int kind)
{
	int i;
	memset(r, 0, sizeof(*r));
	r->kind = kind;
	r->format = format;
	r->path = p->path;
	r->line = p->line;
	r->rank = -1;
	r->local_rank = -1;
	r->step = -1;
	r->t_start = r->t_end = r->step_sec = r->ckpt_sec = NAN;
	r->tokens = r->tokens_per_sec = r->tflops = r->mfu = r->loss = r->job_tokens = NAN;
	r->host_cpu = r->global_batch = r->runtime_sec = r->total_flos = NAN;
	for (i = 0; i < HR_PH_N; i++)
		r->phase[i] = r->phase_lo[i] = r->phase_hi[i] = NAN;
}

static void malformed(struct parser *p, const char *line, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void malformed(struct parser *p, const char *line, size_t len, const char *fmt, ...)
{
	char what[200], esc[400];
	va_list ap;

	if (p->info)
		p->info->malformed++;
	if (p->listed++ >= MAX_LISTED)
		return;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	hr_steps_clip(line, len, 160, esc, sizeof(esc));
	hr_issue_add(p->issues, HR_ISSUE_SKIPPED, p->path, (int)(p->line > 2147483647 ? 0 : p->line), 0,
		     "%s: '%s'; line skipped", what, esc);
}

/* A whole line of @format that is of a variant the reader does not know
 * (@why: what it lacks): named once per file, counted (file_summary()). */
static void variant(struct parser *p, const char *line, size_t len, int format, const char *why)
{
	char esc[400];

	if (p->info)
		p->info->malformed++;
	if (format <= 0 || format >= HR_SF_N || p->variant_n[format]++)
		return;
	hr_steps_clip(line, len, 160, esc, sizeof(esc));
	hr_issue_add(p->issues, HR_ISSUE_SKIPPED, p->path, (int)(p->line > 2147483647 ? 0 : p->line), 0,
		     "a whole %s line of a variant this reader does not read (%s): '%s'; every line like it is skipped",
		     hr_steps_format_name(format), why, esc);
}

/* A step number read as a double: itself when whole, 0 or more and at most
 * HR_STEPS_MAX_STEP; HR_STEPS_MAX_STEP + 1 (refused by emit()) when larger;
 * never a cast of a value that does not fit. */
static long to_step(double v)
{
	return v > (double)HR_STEPS_MAX_STEP || isnan(v) ? HR_STEPS_MAX_STEP + 1 : (long)v;
}

static int emit(struct parser *p, struct hr_step_rec *r)
{
	int rc;

	if (p->rc)
		return p->rc;
	if (r->step > HR_STEPS_MAX_STEP || r->step < -1) {
		if (p->info)
			p->info->malformed++;
		if (p->listed++ < MAX_LISTED)
			hr_issue_add(p->issues, HR_ISSUE_SKIPPED, p->path, (int)(r->line > 2147483647 ? 0 : r->line), 0,
				     "step number out of range (0 to %ld): the record is skipped", HR_STEPS_MAX_STEP);
		return 0;
	}
	if (p->info && r->format > 0 && r->format < HR_SF_N) {
		if (!p->info->records[r->format]++)
			p->info->first_line[r->format] = r->line;
		p->info->last_line[r->format] = r->line;
	}
	rc = p->fn(r, p->ctx);
	if (rc < 0)
		p->rc = rc;
	return rc;
}

/* ------------------------------------------------------------- helpers */

static int all_digits(const char *s, size_t n)
{
	size_t i;
	for (i = 0; i < n; i++)
		if (!isdigit((unsigned char)s[i]))
			return 0;
	return n > 0;
}

static int dig(const char *s, int n)
{
	int v = 0, i;
	for (i = 0; i < n; i++)
		v = v * 10 + (s[i] - '0');
	return v;
}

/* "YYYY-MM-DD HH:MM:SS" (or 'T'), optional ",mmm" / ".uuuuuu", at s. */
static int datetime_at(const char *s, double *t)
{
	struct tm tm;
	double frac = 0;
	const char *q;

	if (!(all_digits(s, 4) && s[4] == '-' && all_digits(s + 5, 2) && s[7] == '-' && all_digits(s + 8, 2) &&
	      (s[10] == ' ' || s[10] == 'T') && all_digits(s + 11, 2) && s[13] == ':' && all_digits(s + 14, 2) &&
	      s[16] == ':' && all_digits(s + 17, 2)))
		return -1;
	memset(&tm, 0, sizeof(tm));
	tm.tm_year = dig(s, 4) - 1900;
	tm.tm_mon = dig(s + 5, 2) - 1;
	tm.tm_mday = dig(s + 8, 2);
	tm.tm_hour = dig(s + 11, 2);
	tm.tm_min = dig(s + 14, 2);
	tm.tm_sec = dig(s + 17, 2);
	if (tm.tm_mon > 11 || tm.tm_mday < 1 || tm.tm_mday > 31 || tm.tm_hour > 23 || tm.tm_min > 59 ||
	    tm.tm_sec > 60)
		return -1;
	q = s + 19;
	if ((*q == ',' || *q == '.') && isdigit((unsigned char)q[1])) {
		double scale = 0.1;
		for (q++; isdigit((unsigned char)*q); q++, scale /= 10)
			frac += (*q - '0') * scale;
	}
	*t = (double)timegm(&tm) + frac;
	return 0;
}

/* the first date and time in [s, lim), else absl's "IMMDD HH:MM:SS.us" at s */
static int find_time(const char *s, const char *lim, double *t)
{
	const char *q;

	for (q = s; q + 19 <= lim; q++)
		if (isdigit((unsigned char)*q) && !datetime_at(q, t))
			return 0;
	if ((s[0] == 'I' || s[0] == 'W' || s[0] == 'E' || s[0] == 'F') && all_digits(s + 1, 4) && s[5] == ' ' &&
	    all_digits(s + 6, 2) && s[8] == ':' && all_digits(s + 9, 2) && s[11] == ':' && all_digits(s + 12, 2)) {
		/* no year: a clock of its own (year 2000), differences only */
		char buf[32];
		snprintf(buf, sizeof(buf), "2000-%.2s-%.2s %.8s", s + 1, s + 3, s + 6);
		if (!datetime_at(buf, t)) {
			const char *f = s + 14;
			double scale = 0.1;
			if (*f == '.')
				for (f++; isdigit((unsigned char)*f); f++, scale /= 10)
					*t += (*f - '0') * scale;
			return 0;
		}
	}
	return -1;
}

/* ANSI colour and cursor sequences (ESC [ ... final byte) taken out in place */
static size_t strip_ansi(char *s, size_t n)
{
	size_t i, o = 0;
	for (i = 0; i < n; i++) {
		if (s[i] == 0x1b && i + 1 < n && s[i + 1] == '[') {
			i += 2;
			while (i < n && !(s[i] >= 0x40 && s[i] <= 0x7e))
				i++;
			continue;
		}
		s[o++] = s[i];
	}
	s[o] = '\0';
	return o;
}

/*
 * Launcher prefixes, outermost first: mpirun's "[1,N]<stdout>:" (global
 * rank N), srun's "N: " (task N), torchrun's "[roleN]:" (local rank N),
 * the plain form's "[rankN] " (global rank N). Returns the rest.
 */
static const char *strip_prefixes(const char *s, int *rank, int *local_rank)
{
	for (;;) {
		const char *q = s, *d;
		if (*q == '[') {
			int a, b, nch = 0;
			if (sscanf(q, "[%d,%d]<std%*[a-z]>:%n", &a, &b, &nch) == 2 && nch > 0) {
				*rank = b;
				s = q + nch;
				continue;
			}
			d = q + 1;
			while (isalpha((unsigned char)*d) || *d == '_' || *d == '-')
				d++;
			if (isdigit((unsigned char)*d)) {
				const char *e = d;
				long v;
				while (isdigit((unsigned char)*e))
					e++;
				if (*e == ']' && e - d < 8) {
					v = strtol(d, NULL, 10);
					if (e[1] == ':') {
						*local_rank = (int)v;
						s = e + 2;
						continue;
					}
					if (e[1] == ' ' && d - q == 5 && !strncmp(q + 1, "rank", 4)) {
						*rank = (int)v;
						s = e + 2;
						continue;
					}
				}
			}
			return s;
		}
		if (isdigit((unsigned char)*q)) {
			const char *e = q;
			while (isdigit((unsigned char)*e))
				e++;
			if (e - q < 8 && e[0] == ':' && e[1] == ' ') {
				*rank = (int)strtol(q, NULL, 10);
				s = e + 2;
				continue;
			}
		}
		return s;
	}
}

/* ---------------------------------------------------------- torchtitan */

static int torchtitan_line(struct parser *p, const char *msg, const char *full, size_t flen,
			   int rank, int local_rank, double t)
{
	const char *s = strstr(msg, "step:"), *after;
	struct hr_step_rec r;
	double v;
	int present, present_w = 0, eval = 0;

	if (!s || (s != msg && s[-1] != ' '))
		return 0;
	if (!strstr(s, "loss:"))
		return 0;
	if (s - msg >= 9 && !strncmp(s - 9, "validate ", 9))
		eval = 1;
	after = s + 5;
	rec_init(&r, p, HR_SF_TORCHTITAN, eval ? HR_SK_EVAL : HR_SK_STEP);
	r.rank = rank;
	r.local_rank = local_rank;
	r.t_end = t;
	if (hr_steps_num(after, &v, NULL) || v < 0 || v != floor(v)) {
		malformed(p, full, flen, "torchtitan step line without a step number");
		return 1;
	}
	r.step = to_step(v);
	if (hr_steps_key_num(after, "loss", &r.loss, &present) && present)
		r.loss = NAN;
	/* tps: tokens/s per GPU; torchtitan 2024 printed it as "wps" */
	if (hr_steps_key_num(after, "tps", &r.tokens_per_sec, &present) &&
	    hr_steps_key_num(after, "wps", &r.tokens_per_sec, &present_w)) {
		r.tokens_per_sec = NAN;
		if (!eval && strstr(after, "mfu:") && !present && !present_w) {
			variant(p, full, flen, HR_SF_TORCHTITAN, "no 'tps:' or 'wps:'");
			return 1;
		}
		if (!eval) {
			malformed(p, full, flen, "torchtitan step line without a readable tps (cut off?)");
			return 1;
		}
	}
	if (hr_steps_key_num(after, "tflops", &r.tflops, NULL))
		r.tflops = NAN;
	if (!hr_steps_key_num(after, "mfu", &v, NULL))
		r.mfu = v / 100;
	emit(p, &r);
	return 1;
}

/* torchtitan's checkpoint lines: "Saving the checkpoint." (or "Staging"),
 * then "Finished saving the checkpoint in 12.34 seconds." */
static int torchtitan_ckpt(struct parser *p, const char *msg, int rank, int local_rank, double t)
{
	const char *q;
	struct hr_step_rec r;
	double v;

	if (strstr(msg, "Saving the checkpoint") || strstr(msg, "Staging the checkpoint")) {
		p->tt_ckpt_t = t;
		return 1;
	}
	if (!(q = strstr(msg, "Finished saving the checkpoint in ")) &&
	    !(q = strstr(msg, "Finished staging the checkpoint in ")))
		return 0;
	q = strstr(q, " in ") + 4;
	if (hr_steps_num(q, &v, NULL) || v < 0)
		return 0;
	rec_init(&r, p, HR_SF_TORCHTITAN, HR_SK_CKPT);
	r.rank = rank;
	r.local_rank = local_rank;
	r.ckpt_sec = v;
	r.t_end = t;
	r.t_start = isnan(t) ? NAN : t - v;
	r.step = p->tt_last_step;
	p->tt_ckpt_t = NAN;
	emit(p, &r);
	return 1;
}

/* ------------------------------------------------------------ Megatron */

static int mg_emit_pending(struct parser *p)
{
	if (!p->have_pending)
		return 0;
	p->have_pending = 0;
	return emit(p, &p->pending);
}

/* phases from a list of timers (ms per iteration) */
static void timers_to_phases(const struct timer *t, int nt, double *lo, double *hi, int *any)
{
	double slo[HR_PH_N], shi[HR_PH_N], plo = NAN, phi = NAN;
	int i, ph, parent;

	for (i = 0; i < HR_PH_N; i++)
		slo[i] = shi[i] = NAN;
	*any = 0;
	for (i = 0; i < nt; i++) {
		ph = hr_steps_timer_phase(t[i].name, &parent);
		if (ph < 0)
			continue;
		*any = 1;
		if (parent) {
			plo = t[i].lo / 1e3;
			phi = t[i].hi / 1e3;
			continue;
		}
		slo[ph] = (isnan(slo[ph]) ? 0 : slo[ph]) + t[i].lo / 1e3;
		shi[ph] = (isnan(shi[ph]) ? 0 : shi[ph]) + t[i].hi / 1e3;
	}
	if (!isnan(phi)) {
		slo[HR_PH_ALLREDUCE] = plo;
		shi[HR_PH_ALLREDUCE] = phi;
	}
	for (i = 0; i < HR_PH_N; i++) {
		if (lo)
			lo[i] = slo[i];
		hi[i] = shi[i];
	}
}

static int find_timer(const struct timer *t, int nt, const char *name)
{
	int i;
	for (i = 0; i < nt; i++)
		if (!strcmp(t[i].name, name))
			return i;
	return -1;
}

static size_t rt_slot(const struct parser *p, int rank)
{
	size_t i = ((size_t)(unsigned)rank * 0x9E3779B97F4A7C15ull) & (p->rttabcap - 1);
	while (p->rttab[i] >= 0 && p->rt[p->rttab[i]].rank != rank)
		i = (i + 1) & (p->rttabcap - 1);
	return i;
}

/* A rank's timers in the block (made on first sight): hashed by rank, so
 * a block of N ranks costs O(N), not O(N^2). NULL when out of memory. */
static struct rank_times *rt_get(struct parser *p, int rank)
{
	size_t i, k;

	if (p->rttabcap && p->rttab[i = rt_slot(p, rank)] >= 0)
		return &p->rt[p->rttab[i]];
	if (p->nrt == p->caprt) {
		size_t cap = p->caprt ? 2 * p->caprt : 64;
		struct rank_times *n = realloc(p->rt, cap * sizeof(*n));
		if (!n) {
			p->oom = 1;
			return NULL;
		}
		p->rt = n;
		p->caprt = cap;
	}
	if (2 * (p->nrt + 1) > p->rttabcap) {
		size_t cap = p->rttabcap ? 2 * p->rttabcap : 256;
		long *t = malloc(cap * sizeof(*t));
		if (!t) {
			p->oom = 1;
			return NULL;
		}
		free(p->rttab);
		p->rttab = t;
		p->rttabcap = cap;
		memset(t, 0xff, cap * sizeof(*t)); /* all -1 */
		for (k = 0; k < p->nrt; k++)
			t[rt_slot(p, p->rt[k].rank)] = (long)k;
	}
	memset(&p->rt[p->nrt], 0, sizeof(p->rt[0]));
	p->rt[p->nrt].rank = rank;
	for (k = 0; k < HR_PH_N; k++)
		p->rt[p->nrt].v[k] = NAN;
	p->rt[p->nrt].ar_parent = NAN;
	p->rttab[rt_slot(p, rank)] = (long)p->nrt;
	return &p->rt[p->nrt++];
}

/* a timer block ended: a checkpoint's duration, or the pending iteration's phases */
static void mg_end_block(struct parser *p)
{
	int k, any = 0;
	size_t i;

	if (!p->block)
		return;
	if ((k = find_timer(p->t, p->nt, "evaluate")) >= 0)
		p->eval_sec = p->t[k].hi / 1e3;
	if ((k = find_timer(p->t, p->nt, "save-checkpoint")) >= 0 ||
	    (k = find_timer(p->t, p->nt, "save-checkpoint-non-persistent")) >= 0) {
		struct hr_step_rec r;
		rec_init(&r, p, HR_SF_MEGATRON, HR_SK_CKPT);
		r.ckpt_sec = p->t[k].hi / 1e3;
		r.step = p->ckpt_iter;
		r.t_end = p->last_t;
		p->ckpt_iter = -1;
		p->ckpt_saved = 0;
		mg_emit_pending(p);
		emit(p, &r);
	} else if (p->have_pending && p->block == 3 && p->nrt) {
		/* one record per rank */
		struct hr_step_rec base = p->pending;
		p->have_pending = 0;
		for (i = 0; i < p->nrt && !p->rc; i++) {
			struct hr_step_rec r = base;
			int j;
			r.rank = p->rt[i].rank;
			for (j = 0; j < HR_PH_N; j++)
				r.phase[j] = p->rt[i].v[j];
			if (!isnan(p->rt[i].ar_parent))
				r.phase[HR_PH_ALLREDUCE] = p->rt[i].ar_parent;
			emit(p, &r);
		}
	} else if (p->have_pending) {
		timers_to_phases(p->t, p->nt, p->block == 1 ? p->pending.phase_lo : NULL,
				 p->block == 1 ? p->pending.phase_hi : p->pending.phase, &any);
		mg_emit_pending(p);
	}
	p->block = 0;
	p->nt = 0;
	if (p->nrt && p->rttabcap)
		memset(p->rttab, 0xff, p->rttabcap * sizeof(*p->rttab));
	p->nrt = 0;
	p->cur[0] = '\0';
}

/* a line inside a timer block; returns 1 when it belongs to it */
static int mg_block_line(struct parser *p, const char *s)
{
	const char *q = s, *dots, *colon;
	char name[48];
	size_t n;
	double a, b;

	if (strncmp(q, "  ", 2))
		return 0;
	q = hr_steps_skip_sp(q);
	if (p->block == 3) {
		int r, nch = 0;
		if (sscanf(q, "rank %d:%n", &r, &nch) == 1 && nch > 0 && p->cur[0]) {
			struct rank_times *rt;
			int ph, parent;
			if (hr_steps_num(q + nch, &a, NULL))
				return 1;
			ph = hr_steps_timer_phase(p->cur, &parent);
			if (!strcmp(p->cur, "save-checkpoint")) {
				int k = find_timer(p->t, p->nt, "save-checkpoint");
				if (k < 0 && p->nt < MAX_TIMERS) {
					k = p->nt++;
					snprintf(p->t[k].name, sizeof(p->t[k].name), "save-checkpoint");
					p->t[k].lo = p->t[k].hi = a;
				}
				if (k >= 0 && a > p->t[k].hi)
					p->t[k].hi = a;
				return 1;
			}
			if (ph < 0 || !(rt = rt_get(p, r)))
				return 1;
			if (parent)
				rt->ar_parent = a / 1e3;
			else
				rt->v[ph] = (isnan(rt->v[ph]) ? 0 : rt->v[ph]) + a / 1e3;
			return 1;
		}
		n = strlen(q);
		if (n > 1 && n < sizeof(p->cur) && q[n - 1] == ':' && !strchr(q, ' ')) {
			memcpy(p->cur, q, n - 1);
			p->cur[n - 1] = '\0';
			return 1;
		}
		return 0;
	}
	/* "name .....: (lo, hi)" or "name .....: v" */
	dots = strstr(q, " ..");
	colon = dots ? strstr(dots, ":") : NULL;
	if (!dots || !colon || (size_t)(dots - q) >= sizeof(name))
		return 0;
	memcpy(name, q, (size_t)(dots - q));
	name[dots - q] = '\0';
	q = hr_steps_skip_sp(colon + 1);
	if (p->nt >= MAX_TIMERS)
		return 1;
	if (*q == '(') {
		if (sscanf(q, "(%lf, %lf)", &a, &b) != 2)
			return 1;
	} else if (hr_steps_num(q, &a, NULL)) {
		return 1;
	} else {
		b = a;
	}
	snprintf(p->t[p->nt].name, sizeof(p->t[0].name), "%s", name);
	p->t[p->nt].lo = a;
	p->t[p->nt].hi = b;
	p->nt++;
	return 1;
}

/* the one-line timers of older Megatron-LM: "time (ms) | a: 1.0 | b: 2.0" */
static int mg_oneline_timers(struct parser *p, const char *s)
{
	const char *q = strstr(s, "time (ms) |");
	char buf[HR_STEPS_MAX_LINE + 1], *tok, *save = NULL;
	int any = 0;

	if (!q || strstr(s, "iteration"))
		return 0;
	if (strstr(q, "_microstep:") || strstr(q, "backward_inner:"))
		return 1; /* DeepSpeed's engine timers: per micro-step, or its own names */
	snprintf(buf, sizeof(buf), "%s", q + 11);
	p->nt = 0;
	for (tok = strtok_r(buf, "|", &save); tok && p->nt < MAX_TIMERS; tok = strtok_r(NULL, "|", &save)) {
		char *c = strrchr(tok, ':');
		const char *nm = hr_steps_skip_sp(tok);
		double v;
		size_t n;
		if (!c || hr_steps_num(c + 1, &v, NULL))
			continue;
		n = (size_t)(c - nm);
		while (n && nm[n - 1] == ' ')
			n--;
		if (!n || n >= sizeof(p->t[0].name))
			continue;
		memcpy(p->t[p->nt].name, nm, n);
		p->t[p->nt].name[n] = '\0';
		p->t[p->nt].lo = p->t[p->nt].hi = v;
		p->nt++;
	}
	if (p->have_pending) {
		timers_to_phases(p->t, p->nt, NULL, p->pending.phase, &any);
		mg_emit_pending(p);
	}
	p->nt = 0;
	return 1;
}

/* Megatron-DeepSpeed: the job's tokens in the iteration: global batch x
 * "actual seqlen", else the growth of "consumed tokens" since the last
 * iteration line over the iterations between */
static void mg_job_tokens(struct parser *p, const char *q, struct hr_step_rec *r)
{
	const char *f;
	double gbs, len, ct;

	if ((f = strstr(q, "global batch size:")) && !hr_steps_num(f + 18, &gbs, NULL) &&
	    (f = strstr(q, "actual seqlen:")) && !hr_steps_num(f + 14, &len, NULL) && gbs > 0 && len > 0)
		r->job_tokens = gbs * len;
	if (!(f = strstr(q, "consumed tokens:")) || hr_steps_num(f + 16, &ct, NULL) || ct < 0)
		return;
	if (isnan(r->job_tokens) && p->mg_ctok_it > 0 && r->step > p->mg_ctok_it && ct > p->mg_ctok)
		r->job_tokens = (ct - p->mg_ctok) / (double)(r->step - p->mg_ctok_it);
	p->mg_ctok = ct;
	p->mg_ctok_it = r->step > 0 ? r->step : 0;
}

static int mg_iteration(struct parser *p, const char *s, const char *full, size_t flen, int rank,
			int local_rank, double t)
{
	const char *q = strstr(s, "iteration"), *f;
	long it, total;
	int nch = 0;
	struct hr_step_rec r;
	double v;

	if (!q || !(q == s || q[-1] == ' ' || q[-1] == ']'))
		return 0;
	if (sscanf(q, "iteration %ld/ %ld |%n", &it, &total, &nch) < 2 || !nch)
		return 0;
	mg_end_block(p);
	mg_emit_pending(p);
	rec_init(&r, p, HR_SF_MEGATRON, HR_SK_STEP);
	r.rank = rank;
	r.local_rank = local_rank;
	r.step = it;
	r.t_end = t;
	/* the mean over the log interval; Megatron-DeepSpeed (BigScience) in s */
	if ((f = strstr(q, "elapsed time per iteration (ms):")) && !hr_steps_num(f + 32, &v, NULL) && v > 0)
		r.step_sec = v / 1e3;
	else if ((f = strstr(q, "elapsed time per iteration (s):")) && !hr_steps_num(f + 31, &v, NULL) && v > 0)
		r.step_sec = v;
	else {
		size_t n = strlen(q);
		while (n && q[n - 1] == ' ')
			n--;
		if (!strstr(q, "elapsed time per iteration") && n && q[n - 1] == '|')
			variant(p, full, flen, HR_SF_MEGATRON, "no 'elapsed time per iteration'");
		else
			malformed(p, full, flen, "Megatron-LM iteration line without a readable 'elapsed time per iteration (ms)' (cut off?)");
		return 1;
	}
	/* TFLOP/s per GPU: Megatron-LM's, Megatron-DeepSpeed's "TFLOPs", GPT-NeoX's */
	if ((f = strstr(q, "throughput per GPU (TFLOP/s/GPU):")) && !hr_steps_num(f + 33, &v, NULL))
		r.tflops = v;
	else if ((f = strstr(q, "| TFLOPs:")) && !hr_steps_num(f + 9, &v, NULL))
		r.tflops = v;
	else if ((f = strstr(q, "approx flops per GPU:")) && !hr_steps_num(f + 21, &v, NULL))
		r.tflops = v;
	/* Megatron-DeepSpeed: tokens/s per GPU ("consumed tokens" and "samples
	 * per second" are the job's: not per GPU, not read) */
	if ((f = strstr(q, "tokens per gpu per second (tgs):")) && !hr_steps_num(f + 32, &v, NULL) && v > 0) {
		r.tokens_per_sec = v;
		r.tokens = v * r.step_sec;
	}
	mg_job_tokens(p, q, &r);
	if ((f = strstr(q, "global batch size:")) && !hr_steps_num(f + 18, &v, NULL))
		r.global_batch = v;
	if ((f = strstr(q, "lm loss:")) && !hr_steps_num(f + 8, &v, NULL))
		r.loss = v;
	p->pending = r;
	p->have_pending = 1;
	return 1;
}

static int megatron_line(struct parser *p, const char *s, const char *full, size_t flen, int rank,
			 int local_rank, double t)
{
	const char *q;
	long it;

	if (p->block) {
		if (mg_block_line(p, s))
			return 1;
		mg_end_block(p);
	}
	if (p->ckpt_saved && !strstr(s, "time across ranks (ms):")) {
		/* saved, and no save-checkpoint timer: a checkpoint of unknown duration */
		struct hr_step_rec r;
		rec_init(&r, p, HR_SF_MEGATRON, HR_SK_CKPT);
		r.step = p->ckpt_iter;
		r.t_end = p->last_t;
		p->ckpt_saved = 0;
		p->ckpt_iter = -1;
		emit(p, &r);
	}
	if (strstr(s, "(min, max) time across ranks (ms):")) {
		p->block = 1;
		return 1;
	}
	if (strstr(s, "max time across ranks (ms):")) {
		p->block = 2;
		return 1;
	}
	if (strstr(s, "times across ranks (ms):")) {
		p->block = 3;
		return 1;
	}
	if (mg_oneline_timers(p, s))
		return 1;
	if ((q = strstr(s, "saving checkpoint at iteration")) && sscanf(q + 30, "%ld", &it) == 1) {
		mg_emit_pending(p);
		p->ckpt_iter = it;
		return 1;
	}
	if ((q = strstr(s, "successfully saved checkpoint from iteration")) && sscanf(q + 44, "%ld", &it) == 1) {
		p->ckpt_iter = it;
		p->ckpt_saved = 1;
		return 1;
	}
	if ((q = strstr(s, "validation loss at iteration")) && sscanf(q + 28, "%ld", &it) == 1) {
		struct hr_step_rec r;
		mg_emit_pending(p);
		rec_init(&r, p, HR_SF_MEGATRON, HR_SK_EVAL);
		r.step = it;
		r.t_end = p->last_t;
		r.step_sec = p->eval_sec;
		p->eval_sec = NAN;
		emit(p, &r);
		return 1;
	}
	return mg_iteration(p, s, full, flen, rank, local_rank, t);
}

/* -------------------------------------------------------------- MaxText */

static int maxtext_line(struct parser *p, const char *s, const char *full, size_t flen, int rank,
			int local_rank, double t)
{
	const char *q = strstr(s, "completed step:");
	struct hr_step_rec r;
	double v;

	if (!q)
		return 0;
	rec_init(&r, p, HR_SF_MAXTEXT, HR_SK_STEP);
	r.rank = rank;
	r.local_rank = local_rank;
	r.t_end = t;
	if (hr_steps_num(q + 15, &v, NULL) || v < 0 || v != floor(v) ||
	    hr_steps_key_num(q, "seconds", &r.step_sec, NULL) || !(r.step_sec > 0)) {
		malformed(p, full, flen, "MaxText step line without a readable step and 'seconds' (cut off?)");
		return 1;
	}
	r.step = to_step(v);
	if (hr_steps_key_num(q, "TFLOP/s/device", &r.tflops, NULL) && hr_steps_key_num(q, "TFLOP/s", &r.tflops, NULL))
		r.tflops = NAN;
	if (hr_steps_key_num(q, "Tokens/s/device", &r.tokens_per_sec, NULL))
		r.tokens_per_sec = NAN;
	else
		r.tokens = r.tokens_per_sec * r.step_sec;
	if (hr_steps_key_num(q, "loss", &r.loss, NULL))
		r.loss = NAN;
	emit(p, &r);
	return 1;
}

/* ---------------------------------------------------------------- plain */

static int plain_line(struct parser *p, const char *s, const char *full, size_t flen, int rank,
		      int local_rank, double t)
{
	char buf[HR_STEPS_MAX_LINE + 1], *tok, *save = NULL;
	struct hr_step_rec r;
	const char *q = hr_steps_skip_sp(s);
	long step;
	int nch = 0;

	if (sscanf(q, "step %ld %n", &step, &nch) != 1 || !nch || q[nch] != '|')
		return 0;
	rec_init(&r, p, HR_SF_PLAIN, HR_SK_STEP);
	r.rank = rank;
	r.local_rank = local_rank;
	r.step = step;
	r.t_end = t;
	snprintf(buf, sizeof(buf), "%s", q + nch + 1);
	for (tok = strtok_r(buf, "|", &save); tok; tok = strtok_r(NULL, "|", &save)) {
		const char *f = hr_steps_skip_sp(tok), *e;
		double v;
		if (!strncmp(f, "loss ", 5) && !hr_steps_num(f + 5, &v, NULL))
			r.loss = v;
		else if (!strncasecmp(f, "MFU ", 4) && !hr_steps_num(f + 4, &v, &e))
			r.mfu = *e == '%' ? v / 100 : v;
		else if ((!strncmp(f, "dataloader wait", 15) || !strncmp(f, "input wait", 10))) {
			const char *n = f + (f[0] == 'd' ? 15 : 10);
			if (!hr_steps_num(n, &v, &e)) {
				e = hr_steps_skip_sp(e);
				r.phase[HR_PH_INPUT] = *e == '%' ? -v / 100 : !strncmp(e, "ms", 2) ? v / 1e3 : v;
			}
		} else if (!strncmp(f, "checkpoint ", 11) && !hr_steps_num(f + 11, &v, &e)) {
			e = hr_steps_skip_sp(e);
			r.ckpt_sec = !strncmp(e, "min", 3) ? v * 60 : !strncmp(e, "ms", 2) ? v / 1e3 : v;
		} else if (!strncmp(f, "host cpu ", 9) && !hr_steps_num(f + 9, &v, &e))
			r.host_cpu = *e == '%' ? v / 100 : v;
		else if (!hr_steps_num_si(f, &v, &e)) {
			e = hr_steps_skip_sp(e);
			if (!strncmp(e, "s/step", 6))
				r.step_sec = v;
			else if (!strncmp(e, "ms/step", 7))
				r.step_sec = v / 1e3;
			else if (!strncmp(e, "tok/s", 5) || !strncmp(e, "tokens/s", 8))
				r.tokens_per_sec = v;
		}
	}
	if (!(r.step_sec > 0)) {
		malformed(p, full, flen, "plain step line without a readable 'X s/step' (cut off?)");
		return 1;
	}
	/* an input wait given as a share of the step */
	if (r.phase[HR_PH_INPUT] < 0)
		r.phase[HR_PH_INPUT] = -r.phase[HR_PH_INPUT] * r.step_sec;
	if (r.tokens_per_sec > 0)
		r.tokens = r.tokens_per_sec * r.step_sec;
	emit(p, &r);
	return 1;
}

/* ---------------------------------------------------------- JSON records */

static double jget(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* a Hugging Face Trainer log dict (as JSON) */
static int hf_dict(struct parser *p, json_t *o, double t, int rank, int local_rank)
{
	struct hr_step_rec r;
	double v;

	if (json_object_get(o, "train_runtime")) {
		rec_init(&r, p, HR_SF_HF, HR_SK_SUMMARY);
		r.runtime_sec = jget(o, "train_runtime");
		v = jget(o, "train_steps_per_second");
		r.step_sec = v > 0 ? 1 / v : NAN;
		r.total_flos = jget(o, "total_flos");
		r.loss = jget(o, "train_loss");
	} else if (json_object_get(o, "eval_loss") || json_object_get(o, "eval_runtime")) {
		rec_init(&r, p, HR_SF_HF, HR_SK_EVAL);
	} else if (json_object_get(o, "loss")) {
		rec_init(&r, p, HR_SF_HF, HR_SK_STEP);
		r.loss = jget(o, "loss");
	} else {
		return 0;
	}
	v = jget(o, "step");
	if (v >= 0 && v == floor(v))
		r.step = to_step(v);
	r.rank = rank;
	r.local_rank = local_rank;
	r.t_end = t;
	emit(p, &r);
	return 1;
}

/* one clusterhealth JSON-lines record (schema in docs/canary.md), its
 * fields read by jansson or by the scanner (hr_steps_fast.h) */
static int jsonl_fields(struct parser *p, const struct hr_jl_fields *fl, const char *full, size_t flen)
{
	struct hr_step_rec r;
	const char *bad;

	rec_init(&r, p, HR_SF_JSONL, HR_SK_STEP);
	if ((bad = hr_jl_apply(fl, &r))) {
		malformed(p, full, flen, "clusterhealth step record: %s", bad);
		return 1;
	}
	emit(p, &r);
	return 1;
}

static int jsonl_record(struct parser *p, json_t *o, const char *full, size_t flen)
{
	struct hr_jl_fields fl;

	hr_jl_from_json(o, &fl);
	return jsonl_fields(p, &fl, full, flen);
}

/* Python's repr of a dict of numbers and plain strings, as JSON: quotes
 * swapped, True/False/None/nan/inf spelled as JSON. Returns 0, or -1 when
 * it holds something else (a double quote, a backslash). */
static int pydict_to_json(const char *s, size_t n, char *out, size_t outn)
{
	size_t i, o = 0;
	int in_str = 0;

	for (i = 0; i < n; i++) {
		char c = s[i];
		if (o + 8 >= outn || c == '"' || c == '\\')
			return -1;
		if (c == '\'') {
			in_str = !in_str;
			out[o++] = '"';
			continue;
		}
		if (!in_str && (!strncmp(s + i, "True", 4) || !strncmp(s + i, "False", 5) ||
				!strncmp(s + i, "None", 4) || !strncmp(s + i, "nan", 3) || !strncmp(s + i, "inf", 3))) {
			const char *w = s[i] == 'T' ? "true" : s[i] == 'F' ? "false" : "null";
			size_t skip = s[i] == 'F' ? 5 : s[i] == 'n' || s[i] == 'i' ? 3 : 4;
			memcpy(out + o, w, strlen(w));
			o += strlen(w);
			i += skip - 1;
			continue;
		}
		out[o++] = c;
	}
	if (in_str)
		return -1;
	out[o] = '\0';
	return 0;
}

static int json_line(struct parser *p, const char *s, const char *full, size_t flen, int rank,
		     int local_rank, double t)
{
	const char *open = strchr(s, '{'), *close;
	char buf[HR_STEPS_MAX_LINE + 1];
	json_error_t err;
	json_t *o;
	int python, done = 0;

	if (!open)
		return 0;
	close = strrchr(open, '}');
	python = open[1] == '\'';
	if (!python && !(open[1] == '"' || (open[1] == ' ' && open[2] == '"')))
		return 0;
	if (!close) {
		if (strstr(open, "\"step\"") || strstr(open, "'loss'") || strstr(open, "'train_runtime'"))
			malformed(p, full, flen, "a JSON record without its closing brace (cut off?)");
		return !!strstr(open, "\"step\"");
	}
	if (!python && open == hr_steps_skip_sp(s) && hr_steps_fast_enabled()) {
		/* the loggers' usual layout, without jansson (hr_steps_fast.h) */
		struct hr_jl_fields fl;
		if (hr_jl_scan(open, (size_t)(close - open + 1), &fl) && hr_jl_is_record(&fl))
			return jsonl_fields(p, &fl, full, flen);
	}
	if (python) {
		if (pydict_to_json(open, (size_t)(close - open + 1), buf, sizeof(buf)))
			return 0;
		o = json_loads(buf, 0, &err);
	} else {
		o = json_loadb(open, (size_t)(close - open + 1), 0, &err);
	}
	if (!o || !json_is_object(o)) {
		if (strstr(open, "\"step\"") || (python && strstr(open, "'loss'")))
			malformed(p, full, flen, "not valid JSON (column %d of the record: %s)",
				  err.column, err.text);
		json_decref(o);
		return !!strstr(open, "\"step\"");
	}
	if (!python && open == hr_steps_skip_sp(s) && (json_object_get(o, "rank") || json_object_get(o, "phases") ||
					      json_object_get(o, "step_time") || json_object_get(o, "end")))
		done = jsonl_record(p, o, full, flen);
	else
		done = hf_dict(p, o, t, rank, local_rank);
	json_decref(o);
	return done;
}

/* Hugging Face's trainer_state.json: one document, log_history[] */
static int hf_state_doc(struct parser *p, json_t *doc)
{
	json_t *lh = json_object_get(doc, "log_history"), *e;
	size_t i;

	if (!json_is_array(lh))
		return 0;
	json_array_foreach(lh, i, e) {
		if (!json_is_object(e))
			continue;
		p->line = 0;
		if (json_object_get(e, "train_runtime") && !json_object_get(e, "total_flos") &&
		    json_is_number(json_object_get(doc, "total_flos")))
			json_object_set(e, "total_flos", json_object_get(doc, "total_flos"));
		hf_dict(p, e, NAN, -1, -1);
	}
	return 1;
}

/* ------------------------------------------------------------- one line */

/* NeMo 2.0, nanoGPT, nanotron, DeepSpeed, Lightning (hr_steps_more.h) */
static int more_line(struct parser *p, const char *s, const char *full, size_t flen, int rank, int local_rank,
		     double t)
{
	struct hr_step_rec r;
	char why[200];
	int rc;

	rec_init(&r, p, HR_SF_NONE, HR_SK_STEP);
	r.rank = rank;
	r.local_rank = local_rank;
	r.t_end = t;
	rc = hr_steps_more_line(s, &r, &p->more, why, sizeof(why));
	if (rc == HR_SM_RECORD)
		emit(p, &r);
	else if (rc == HR_SM_MALFORMED)
		malformed(p, full, flen, "%s", why);
	else if (rc == HR_SM_VARIANT)
		variant(p, full, flen, r.format, why);
	return rc != HR_SM_NOT_MINE;
}

static void one_line(struct parser *p, char *line, size_t len)
{
	char full[HR_STEPS_MAX_LINE + 1];
	const char *s;
	int rank = -1, local_rank = -1;
	double t = NAN;

	while (len && (line[len - 1] == '\r' || line[len - 1] == '\n'))
		line[--len] = '\0';
	memcpy(full, line, len + 1);
	if (memchr(line, 0x1b, len))
		len = strip_ansi(line, len);
	s = strip_prefixes(line, &rank, &local_rank);
	if (*s == '{' && json_line(p, s, full, len, rank, local_rank, NAN))
		return;
	if (!find_time(s, s + strlen(s) < s + 120 ? s + strlen(s) : s + 120, &t))
		p->last_t = t;
	/* format by format; the order puts the cheapest tests first */
	if (strchr(s, '{') && json_line(p, s, full, len, rank, local_rank, t))
		return;
	if (more_line(p, s, full, len, rank, local_rank, t))
		return;
	if (strstr(s, "completed step:") && maxtext_line(p, s, full, len, rank, local_rank, t))
		return;
	if (p->block || strstr(s, "iteration") || strstr(s, "across ranks") || strstr(s, "time (ms)") ||
	    strstr(s, "checkpoint at iteration") || strstr(s, "checkpoint from iteration") || p->ckpt_saved) {
		if (megatron_line(p, s, full, len, rank, local_rank, t))
			return;
	}
	if (strstr(s, "step:")) {
		if (torchtitan_line(p, strstr(s, " - ") ? strstr(s, " - ") : s, full, len, rank, local_rank, t)) {
			const char *q = strstr(s, "step:");
			double v;
			if (!hr_steps_num(q + 5, &v, NULL))
				p->tt_last_step = v >= 0 ? to_step(v) : -1;
			return;
		}
	}
	if (strstr(s, "the checkpoint") && torchtitan_ckpt(p, s, rank, local_rank, t))
		return;
	if (strstr(s, "step ") && strchr(s, '|'))
		plain_line(p, s, full, len, rank, local_rank, t);
}

/* --------------------------------------------------------------- driver */

/* The lines of a text log as they are read: a chunk of the file, the line
 * being put together. */
struct lines {
	char *chunk, *line;
	size_t clen, cpos, llen;
	int over;          /* the line is longer than HR_STEPS_MAX_LINE */
	int eof;
	long nul_at;       /* a NUL byte's offset in the first 4 KiB, -1 */
	long total;        /* bytes read */
	char first[200];   /* the first line (else the first with text), 120 bytes at most */
	size_t firstlen;
};

/* @path opened, a regular file (*@st), or -1 with the issue added. */
static int open_log(const char *path, struct hr_issues *issues, struct stat *st)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0) {
		hr_issue_add(issues, HR_ISSUE_SKIPPED, path, 0, 0, "cannot read: %s; file skipped", strerror(errno));
		return -1;
	}
	if (fstat(fd, st) || !S_ISREG(st->st_mode)) {
		hr_issue_add(issues, HR_ISSUE_SKIPPED, path, 0, 0, "not a regular file; file skipped");
		close(fd);
		return -1;
	}
	return fd;
}

/* A parser of one file, its state at the start; NULL when out of memory. */
static struct parser *parser_new(const char *path, hr_steps_fn fn, void *ctx, struct hr_issues *issues,
				 struct hr_steps_file_info *info)
{
	struct parser *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->path = path;
	p->fn = fn;
	p->ctx = ctx;
	p->issues = issues;
	p->info = info;
	p->last_t = NAN;
	p->tt_ckpt_t = NAN;
	p->tt_last_step = -1;
	p->ckpt_iter = -1;
	p->eval_sec = NAN;
	return p;
}

/* Whether @fd holds a whole JSON document (trainer_state.json), not JSON
 * lines: "{" alone on the first line (the Trainer's indented form), or a
 * file starting with "{" that parses whole as one object with
 * "log_history" (the compact form, one line with no spaces; JSON lines of
 * more than one record do not parse whole). @fd's offset is left at 0. */
static int is_json_doc(int fd, off_t size)
{
	char head[4];
	ssize_t n = pread(fd, head, sizeof(head), 0);
	int fd2, yes = 0;
	FILE *fp;
	json_t *doc;

	if (n >= 2 && head[0] == '{' && (head[1] == '\n' || (head[1] == '\r' && n >= 3 && head[2] == '\n')))
		return 1;
	if (n < 2 || head[0] != '{' || size > (off_t)MAX_DOC_BYTES || (fd2 = dup(fd)) < 0)
		return 0;
	if (!(fp = fdopen(fd2, "r"))) {
		close(fd2);
		return 0;
	}
	doc = json_loadf(fp, 0, NULL);
	fclose(fp);
	yes = doc && json_is_array(json_object_get(doc, "log_history"));
	json_decref(doc);
	lseek(fd, 0, SEEK_SET);
	return yes;
}

/* A whole JSON document (@fd, closed here): a Hugging Face
 * trainer_state.json's "log_history". */
static void read_doc(struct parser *p, int fd)
{
	json_error_t err;
	FILE *fp = fdopen(fd, "r");
	json_t *doc;

	if (!fp) {
		hr_issue_add(p->issues, HR_ISSUE_SKIPPED, p->path, 0, 0, "cannot read: %s; file skipped",
			     strerror(errno));
		close(fd);
		return;
	}
	doc = json_loadf(fp, 0, &err);
	fclose(fp);
	if (!doc)
		hr_issue_add(p->issues, HR_ISSUE_SKIPPED, p->path, err.line > 0 ? err.line : 0,
			     err.column > 0 ? err.column : 0, "not valid JSON: %s; file skipped", err.text);
	else if (!hf_state_doc(p, doc))
		hr_issue_add(p->issues, HR_ISSUE_SKIPPED, p->path, 0, 0,
			     "a JSON document without \"log_history\" (not a Hugging Face trainer_state.json, and not JSON lines); file skipped");
	json_decref(doc);
}

/* The next chunk of the file: 0 to read on (a chunk read, or interrupted),
 * 1 at the end of the file with a line pending, -1 to stop (a read error,
 * the end of the file, a NUL byte in the first 4 KiB). */
static int next_chunk(struct parser *p, int fd, struct lines *L)
{
	ssize_t n = read(fd, L->chunk, CHUNK);

	if (n < 0 && errno == EINTR)
		return 0;
	if (n < 0) {
		hr_issue_add(p->issues, HR_ISSUE_TRUNCATED, p->path, (int)p->line, 0,
			     "read error: %s; the rest of the file is not read", strerror(errno));
		return -1;
	}
	if (n == 0) {
		L->eof = 1;
		return L->llen || L->over ? 1 : -1;
	}
	if (L->total < 4096 && L->nul_at < 0) {
		char *z = memchr(L->chunk, 0, (size_t)n < 4096 - (size_t)L->total ? (size_t)n : 4096 - (size_t)L->total);
		if (z)
			L->nul_at = L->total + (z - L->chunk);
	}
	L->total += n;
	L->clen = (size_t)n;
	L->cpos = 0;
	return L->nul_at >= 0 ? -1 : 0;
}

/* The chunk's bytes up to the next newline onto the line (dropped, the line
 * marked over, past HR_STEPS_MAX_LINE); 1 when the newline was among them. */
static int take_bytes(struct lines *L)
{
	char *nl = memchr(L->chunk + L->cpos, '\n', L->clen - L->cpos);
	size_t take = nl ? (size_t)(nl - (L->chunk + L->cpos)) + 1 : L->clen - L->cpos;

	if (!L->over) {
		size_t room = HR_STEPS_MAX_LINE - L->llen;
		if (take > room) {
			L->over = 1;
		} else {
			memcpy(L->line + L->llen, L->chunk + L->cpos, take);
			L->llen += take;
		}
	}
	L->cpos += take;
	return nl != NULL;
}

/* A whole line: kept as the first where it is one, then read, or skipped
 * (too long, or binary). */
static void end_line(struct parser *p, struct lines *L)
{
	p->line++;
	L->line[L->llen] = '\0';
	if (p->line == 1 || (!L->first[0] && L->llen > 1)) {
		size_t fl = L->llen;
		while (fl && (L->line[fl - 1] == '\n' || L->line[fl - 1] == '\r'))
			fl--;
		L->firstlen = fl < 120 ? fl : 120;
		memcpy(L->first, L->line, L->firstlen);
		L->first[L->firstlen] = '\0';
	}
	if (L->over) {
		if (p->listed++ < MAX_LISTED)
			hr_issue_add(p->issues, HR_ISSUE_SKIPPED, p->path, (int)p->line, 0,
				     "line longer than %d bytes; line skipped", HR_STEPS_MAX_LINE);
		p->info->malformed++;
	} else if (memchr(L->line, 0, L->llen)) {
		if (p->listed++ < MAX_LISTED)
			hr_issue_add(p->issues, HR_ISSUE_SKIPPED, p->path, (int)p->line, 0,
				     "line holds a NUL byte (binary data); line skipped");
		p->info->malformed++;
	} else {
		one_line(p, L->line, L->llen);
	}
	L->llen = 0;
	L->over = 0;
}

/* The text log @fd line by line, to its end, a read error, a NUL byte in
 * its first 4 KiB (L->nul_at) or the first error of the callback. */
static void read_lines(struct parser *p, int fd, struct lines *L)
{
	int k;

	while (!L->eof && !p->rc && !p->oom) {
		if (L->cpos == L->clen) {
			if ((k = next_chunk(p, fd, L)) < 0)
				break;
			if (!k)
				continue;
		}
		if (!L->eof && !take_bytes(L))
			continue;
		end_line(p, L);
	}
}

/* What a format leaves open at the end of the file: Megatron-LM's timer
 * block, its pending step, a checkpoint saved. */
static void end_of_file(struct parser *p)
{
	mg_end_block(p);
	mg_emit_pending(p);
	if (p->ckpt_saved) {
		struct hr_step_rec r;
		rec_init(&r, p, HR_SF_MEGATRON, HR_SK_CKPT);
		r.step = p->ckpt_iter;
		r.t_end = p->last_t;
		emit(p, &r);
	}
}

/* The file read: its lines and main format into p->info, the lines not
 * listed, a file of no step record or of several formats said; the return
 * of hr_steps_read. @doc_mode, @size: a whole JSON document, the file's size. */
static int file_summary(struct parser *p, const struct lines *L, int doc_mode, off_t size)
{
	struct hr_steps_file_info *info = p->info;
	long nrec = 0;
	int i, nfmt = 0;

	info->lines = p->line;
	if (p->listed > MAX_LISTED)
		hr_issue_add(p->issues, HR_ISSUE_SKIPPED, p->path, 0, 0, "%ld more unreadable step lines not listed",
			     p->listed - MAX_LISTED);
	for (i = 1; i < HR_SF_N; i++)
		if (p->variant_n[i] > 1)
			hr_issue_add(p->issues, HR_ISSUE_SKIPPED, p->path, 0, 0,
				     "%ld lines of that %s variant skipped in all", p->variant_n[i], hr_steps_format_name(i));
	for (i = 1; i < HR_SF_N; i++) {
		nrec += info->records[i];
		if (info->records[i]) {
			nfmt++;
			if (!info->format || info->records[i] > info->records[info->format])
				info->format = i;
		}
	}
	if (p->rc)
		return p->rc;
	if (p->oom)
		return CH_ERR_RUNTIME;
	if (!nrec) {
		char esc[400];
		if (!doc_mode || size > (off_t)MAX_DOC_BYTES) {
			hr_steps_clip(L->first, L->firstlen, 120, esc, sizeof(esc));
			if (doc_mode)
				hr_issue_add(p->issues, HR_ISSUE_SKIPPED, p->path, 0, 0,
					     "a JSON document larger than %u bytes; file skipped", MAX_DOC_BYTES);
			else if (!p->line)
				hr_issue_add(p->issues, HR_ISSUE_SKIPPED, p->path, 0, 0, "empty file; file skipped");
			else if (p->more.ds_throughput)
				hr_issue_add(p->issues, HR_ISSUE_SKIPPED, p->path, 0, 0,
					     "only DeepSpeed's throughput lines ('SamplesPerSec=', %ld): samples/s of the whole job, with no step time nor batch size to turn them into one; log the engine's 'steps: N loss: X iter time (s): X' lines (steps_per_print) or the framework's own; file skipped",
					     p->more.ds_throughput);
			else
				hr_issue_add(p->issues, HR_ISSUE_SKIPPED, p->path, 1, 0,
					     "no training-step line of a known format (torchtitan, Megatron-LM, Megatron-DeepSpeed, MaxText, Hugging Face Trainer, NeMo 2.0, nanoGPT, nanotron, DeepSpeed engine, PyTorch Lightning, plain '[rankN] step N | X s/step', clusterhealth JSON lines) in %ld line%s; the first reads '%s'; file skipped",
					     p->line, p->line == 1 ? "" : "s", esc);
		}
		return HR_STEPS_SKIP;
	}
	if (nfmt > 1) {
		char what[600];
		size_t u = 0;
		for (i = 1; i < HR_SF_N && u < sizeof(what); i++)
			if (info->records[i])
				u += (size_t)snprintf(what + u, sizeof(what) - u, "%s%s (%ld record%s, lines %ld-%ld)",
						      u ? " and " : "", hr_steps_format_name(i), info->records[i],
						      info->records[i] == 1 ? "" : "s", info->first_line[i], info->last_line[i]);
		hr_issue_add(p->issues, HR_ISSUE_NOTE, p->path, 0, 0,
			     "mixes the step lines of two or more frameworks: %s; each is read, their ranks kept apart", what);
	}
	return 0;
}

int hr_steps_read(const char *path, hr_steps_fn fn, void *ctx, struct hr_issues *issues,
		  struct hr_steps_file_info *info)
{
	struct hr_steps_file_info local;
	struct parser *p;
	struct stat st;
	struct lines L = { .nul_at = -1 };
	int fd, rc, doc_mode;

	if (!info)
		info = &local;
	memset(info, 0, sizeof(*info));
	if ((fd = open_log(path, issues, &st)) < 0)
		return HR_STEPS_SKIP;
	p = parser_new(path, fn, ctx, issues, info);
	L.chunk = malloc(CHUNK);
	L.line = malloc(HR_STEPS_MAX_LINE + 2);
	if (!p || !L.chunk || !L.line) {
		close(fd);
		free(p);
		free(L.chunk);
		free(L.line);
		return CH_ERR_RUNTIME;
	}
	/* trainer_state.json and other whole JSON documents: "{" alone on the first line */
	doc_mode = is_json_doc(fd, st.st_size);
	if (doc_mode && st.st_size <= (off_t)MAX_DOC_BYTES) {
		read_doc(p, fd);
		rc = file_summary(p, &L, doc_mode, st.st_size);
	} else {
		read_lines(p, fd, &L);
		close(fd);
		if (L.nul_at >= 0) {
			hr_issue_add(issues, HR_ISSUE_SKIPPED, path, 0, 0,
				     "binary data (a NUL byte at offset %ld), not a text log; file skipped", L.nul_at);
			rc = HR_STEPS_SKIP;
		} else {
			end_of_file(p);
			rc = file_summary(p, &L, doc_mode, st.st_size);
		}
	}
	free(p->rt);
	free(p->rttab);
	free(p);
	free(L.chunk);
	free(L.line);
	return rc;
}
