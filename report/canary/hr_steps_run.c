/*
 * hr_steps_run.c - the step logs of a run, derived (interface:
 * hr_steps_run.h; formulas: docs/canary.md, "Step logs").
 */
#include "report/canary/hr_steps_run.h"
#include "report/read/hr_steps.h"
#include "base/ch_common.h"
#include "base/ch_stats.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RING 31
#define MAX_EVENTS 100000

void hr_steps_opts_init(struct hr_steps_opts *o)
{
	o->warmup = HR_STEPS_WARMUP;
	o->window = HR_STEPS_WINDOW;
	o->z = HR_STEPS_Z;
	o->min_excess = HR_STEPS_MIN_EXCESS;
}

/* ------------------------------------------------------------ the state */

struct sample {
	long step;
	double step_sec, ph[HR_PH_N], lo[HR_PH_N], hi[HR_PH_N];
	double tokens, tps, mfu, tflops, cpu, job_tokens;
};

struct acc {
	int rank, local_rank, format;
	char node[128];
	const char *path;
	long records;
	long first_step, last_step, nstep_recs;
	double prev_t, prev_end;      /* last record's time, and JSON lines' end */
	long prev_step;
	double prev_ckpt;             /* the previous step's own checkpoint write (s) */
	double ring[RING];            /* recent per-step times */
	int nring, rpos;
	double last_per_step;
	struct sample *win, *early;   /* the window; the warm-up (a fallback) */
	size_t nwin, capwin, nearly, capearly;
	char key[];                   /* the hash key, as long as it is */
};

struct ctx {
	const struct hr_steps_opts *o;
	struct hr_steps_run *run;
	struct hr_issues *issues;
	struct acc **acc;             /* by index */
	size_t nacc, capacc;
	int64_t *tab;                 /* hash: index into acc, -1 empty */
	size_t tabcap;
	/* events, and a hash by step */
	struct hr_steps_event *ev;
	size_t nev, capev;
	int64_t *evtab;
	size_t evtabcap;
	/* anonymous streams (no rank in the lines): repeated steps are other ranks */
	const char *anon_path;
	long anon_last_step[HR_SF_N];
	int anon_dup[HR_SF_N];
	double tmin, tmax;
	long excluded_steps[16];
	int nexcl;
	int oom;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ull;
	return h;
}

static int grow_tab(int64_t **tab, size_t *cap, size_t need)
{
	int64_t *n;
	size_t c = *cap ? *cap : 256, i;
	if (need * 2 < *cap)
		return 0;
	while (c < need * 2)
		c *= 2;
	n = malloc(c * sizeof(*n));
	if (!n)
		return -1;
	for (i = 0; i < c; i++)
		n[i] = -1;
	free(*tab);
	*tab = n;
	*cap = c;
	return 1; /* rehash needed */
}

static struct acc *acc_get(struct ctx *c, const char *key)
{
	uint64_t h = hash_str(key);
	size_t i, j;
	struct acc *a;
	int rc;

	if (c->tabcap) {
		for (i = h & (c->tabcap - 1);; i = (i + 1) & (c->tabcap - 1)) {
			if (c->tab[i] < 0)
				break;
			if (!strcmp(c->acc[c->tab[i]]->key, key))
				return c->acc[c->tab[i]];
		}
	}
	if (c->nacc == c->capacc) {
		size_t cap = c->capacc ? 2 * c->capacc : 64;
		struct acc **n = realloc(c->acc, cap * sizeof(*n));
		if (!n)
			return NULL;
		c->acc = n;
		c->capacc = cap;
	}
	rc = grow_tab(&c->tab, &c->tabcap, c->nacc + 1);
	if (rc < 0)
		return NULL;
	if (rc > 0)
		for (j = 0; j < c->nacc; j++) {
			for (i = hash_str(c->acc[j]->key) & (c->tabcap - 1); c->tab[i] >= 0; i = (i + 1) & (c->tabcap - 1))
				;
			c->tab[i] = (int64_t)j;
		}
	a = calloc(1, sizeof(*a) + strlen(key) + 1);
	if (!a)
		return NULL;
	memcpy(a->key, key, strlen(key) + 1);
	a->first_step = a->last_step = a->prev_step = -1;
	a->prev_t = a->prev_end = a->prev_ckpt = a->last_per_step = NAN;
	for (i = h & (c->tabcap - 1); c->tab[i] >= 0; i = (i + 1) & (c->tabcap - 1))
		;
	c->tab[i] = (int64_t)c->nacc;
	c->acc[c->nacc++] = a;
	return a;
}

/* the hash slot of an event: its step and kind */
static uint64_t ev_hash(long step, int kind)
{
	return ((uint64_t)step * 4 + (uint64_t)kind) * 11400714819323198485ull;
}

static struct hr_steps_event *event_find(struct ctx *c, long step, int kind)
{
	size_t i;
	if (step < 0 || !c->evtabcap)
		return NULL;
	for (i = ev_hash(step, kind) & (c->evtabcap - 1); c->evtab[i] >= 0; i = (i + 1) & (c->evtabcap - 1))
		if (c->ev[c->evtab[i]].step == step && c->ev[c->evtab[i]].kind == kind)
			return &c->ev[c->evtab[i]];
	return NULL;
}

static void event_index(struct ctx *c, size_t j)
{
	size_t i;
	for (i = ev_hash(c->ev[j].step, c->ev[j].kind) & (c->evtabcap - 1); c->evtab[i] >= 0;
	     i = (i + 1) & (c->evtabcap - 1))
		;
	c->evtab[i] = (int64_t)j;
}

/* the event of this kind after @step (merged over ranks), or a new one */
static struct hr_steps_event *event_at(struct ctx *c, long step, int kind, const struct hr_step_rec *r)
{
	struct hr_steps_event *e = event_find(c, step, kind);
	int rc;

	if (e)
		return e;
	if (c->nev >= MAX_EVENTS)
		return NULL;
	if (c->nev == c->capev) {
		size_t cap = c->capev ? 2 * c->capev : 64;
		struct hr_steps_event *n = realloc(c->ev, cap * sizeof(*n));
		if (!n) {
			c->oom = 1;
			return NULL;
		}
		c->ev = n;
		c->capev = cap;
	}
	rc = grow_tab(&c->evtab, &c->evtabcap, c->nev + 1);
	if (rc < 0) {
		c->oom = 1;
		return NULL;
	}
	if (rc > 0)
		for (size_t j = 0; j < c->nev; j++)
			if (c->ev[j].step >= 0)
				event_index(c, j);
	e = &c->ev[c->nev];
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	e->step = step;
	e->t_start = e->sec = NAN;
	e->path = r->path;
	e->line = r->line;
	if (step >= 0)
		event_index(c, c->nev);
	c->nev++;
	return e;
}

/* a stall seen by one rank, merged into the event of its step; a gap after a
 * step with a logged checkpoint or evaluation is that event's */
static void add_event(struct ctx *c, long step, int kind, double t_start, double sec, const struct hr_step_rec *r,
		      int count)
{
	struct hr_steps_event *e = NULL;
	if (kind == HR_SE_STALL && !(e = event_find(c, step, HR_SE_CKPT)) && !(e = event_find(c, step, HR_SE_EVAL)))
		e = NULL;
	else if (kind == HR_SE_STALL)
		count = 0;
	if (!e)
		e = event_at(c, step, kind, r);
	if (!e)
		return;
	if (!isnan(sec) && (isnan(e->sec) || sec > e->sec))
		e->sec = sec;
	if (!isnan(t_start) && (isnan(e->t_start) || t_start < e->t_start))
		e->t_start = t_start;
	e->nranks += count;
}

static void exclude(struct ctx *c, long step)
{
	int i;
	for (i = 0; i < c->nexcl && i < 16; i++)
		if (c->excluded_steps[i] == step)
			return;
	if (c->nexcl < 16)
		c->excluded_steps[c->nexcl] = step;
	c->nexcl++;
}

static double ring_median(const struct acc *a)
{
	double v[RING];
	int i, j, n = a->nring;
	for (i = 0; i < n; i++) {
		double x = a->ring[i];
		for (j = i; j > 0 && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
	return n ? (n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2) : NAN;
}

static void ring_add(struct acc *a, double x)
{
	a->ring[a->rpos] = x;
	a->rpos = (a->rpos + 1) % RING;
	if (a->nring < RING)
		a->nring++;
	a->last_per_step = x;
}

static int push(struct sample **v, size_t *n, size_t *cap, const struct sample *s)
{
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 2; /* grown on demand, from 2 */
		struct sample *nv = realloc(*v, c * sizeof(*nv));
		if (!nv)
			return -1;
		*v = nv;
		*cap = c;
	}
	(*v)[(*n)++] = *s;
	return 0;
}

/* ------------------------------------------------------ one record */

/* one record's figures as a window sample (step @s, @per seconds) */
static void to_sample(const struct hr_step_rec *r, long s, double per, struct sample *sm)
{
	int i;

	sm->step = s;
	sm->step_sec = per;
	for (i = 0; i < HR_PH_N; i++) {
		sm->ph[i] = r->phase[i];
		sm->lo[i] = r->phase_lo[i];
		sm->hi[i] = r->phase_hi[i];
	}
	sm->tokens = r->tokens;
	sm->job_tokens = r->job_tokens;
	sm->tps = r->tokens_per_sec;
	sm->mfu = r->mfu;
	sm->tflops = r->tflops;
	sm->cpu = r->host_cpu;
}

/* the decimal digits of @v (>= 0) at @o; returns the end */
static char *put_digits(char *o, int v)
{
	char d[12];
	int n = 0;
	do
		d[n++] = (char)('0' + v % 10);
	while ((v /= 10) > 0);
	while (n)
		*o++ = d[--n];
	return o;
}

/* @key = "r<rank>\x1f" "f<format>" (rank, format >= 0) */
static void rank_key(char *key, int rank, int format)
{
	char *o = key;
	*o++ = 'r';
	o = put_digits(o, rank);
	*o++ = '\x1f';
	*o++ = 'f';
	o = put_digits(o, format);
	*o = '\0';
}

static int on_rec(const struct hr_step_rec *r, void *vctx)
{
	struct ctx *c = vctx;
	struct hr_steps_run *run = c->run;
	char key[200];
	struct acc *a;
	double per = NAN, t = !isnan(r->t_end) ? r->t_end : r->t_start;
	long dstep;
	int i, stall = 0, kept_apart = 0;

	if (c->oom)
		return CH_ERR_RUNTIME;
	if (!isnan(t)) {
		if (isnan(c->tmin) || t < c->tmin)
			c->tmin = t;
		if (isnan(c->tmax) || t > c->tmax)
			c->tmax = t;
	}
	if (r->kind == HR_SK_SUMMARY) {
		run->summary_step_sec = r->step_sec;
		run->summary_runtime_sec = r->runtime_sec;
		run->summary_total_flos = r->total_flos;
		return 0;
	}
	if (r->kind == HR_SK_CKPT || r->kind == HR_SK_EVAL) {
		double sec = r->kind == HR_SK_CKPT ? r->ckpt_sec : r->step_sec;
		add_event(c, r->step, r->kind == HR_SK_CKPT ? HR_SE_CKPT : HR_SE_EVAL,
			  !isnan(r->t_start) ? r->t_start : !isnan(sec) && !isnan(r->t_end) ? r->t_end - sec : r->t_end,
			  sec, r, 1);
		return 0;
	}
	/* who: a global rank, a local rank of this file, or this file's stream, by format */
	if (r->rank >= 0) {
		rank_key(key, r->rank, r->format); /* "r%d\x1f" "f%d", without printf: once a line */
	} else if (r->local_rank >= 0) {
		snprintf(key, sizeof(key), "%s\x1fl%d\x1f" "f%d", r->path, r->local_rank, r->format);
	} else {
		int f = r->format;
		if (c->anon_path != r->path) {
			c->anon_path = r->path;
			for (i = 0; i < HR_SF_N; i++) {
				c->anon_last_step[i] = -2;
				c->anon_dup[i] = 0;
			}
		}
		if (r->step >= 0 && r->step == c->anon_last_step[f])
			c->anon_dup[f]++;
		else
			c->anon_dup[f] = 0;
		c->anon_last_step[f] = r->step;
		snprintf(key, sizeof(key), "%s\x1f" "f%d\x1f" "a%d", r->path, f, c->anon_dup[f]);
	}
	if (!(a = acc_get(c, key))) {
		c->oom = 1;
		return CH_ERR_RUNTIME;
	}
	if (!a->records++) {
		a->rank = r->rank;
		a->local_rank = r->local_rank;
		a->format = r->format;
		a->path = r->path;
		if (r->rank >= 0)
			snprintf(a->node, sizeof(a->node), "%s", r->host);
	}
	if (r->host[0] && !a->node[0])
		snprintf(a->node, sizeof(a->node), "%s", r->host);
	run->records_by_format[r->format]++;
	run->records++;

	dstep = r->step >= 0 && a->prev_step >= 0 ? r->step - a->prev_step : 1;
	if (dstep < 1)
		dstep = 1; /* a restart: the step numbers went back */
	/* the step time, and stalls from the clock */
	if (r->step_sec > 0)
		per = r->step_sec;
	if (!isnan(r->t_start) && !isnan(a->prev_end)) {
		/* JSON lines: the gap between a step's end and the next one's start */
		double gap = r->t_start - a->prev_end;
		double m = isnan(a->last_per_step) ? per : a->last_per_step;
		if (gap > 1.0 && (isnan(m) || gap > m)) {
			stall = 1;
			/* the previous step's own checkpoint write was counted with it */
			add_event(c, a->prev_step, a->prev_ckpt > 0 ? HR_SE_CKPT : HR_SE_STALL, a->prev_end, gap, r,
				  !(a->prev_ckpt > 0));
		}
	} else if (!isnan(r->t_end) && !isnan(a->prev_t) && isnan(r->t_start)) {
		double iv = r->t_end - a->prev_t, expect, m;
		m = per > 0 ? per : a->last_per_step;
		if (!isnan(m) && iv > 2 * dstep * m && iv - dstep * m > 1.0 && a->nring >= 1) {
			double med = per > 0 ? per : ring_median(a);
			expect = dstep * med;
			if (iv - expect > expect && iv - expect > 1.0) {
				stall = 1;
				add_event(c, a->prev_step, HR_SE_STALL, a->prev_t, iv - expect, r, 1);
			}
		}
		if (!(per > 0) && !stall && iv > 0)
			per = iv / dstep;
	}
	if (stall && !(r->step_sec > 0))
		kept_apart = 1; /* the interval's own step time includes the stall */
	if (r->ckpt_sec > 0) {
		/* the step wrote a checkpoint (JSON lines): kept apart */
		add_event(c, r->step, HR_SE_CKPT, r->t_end, r->ckpt_sec, r, 1);
		kept_apart = 1;
	}
	if (per > 0 && !kept_apart)
		ring_add(a, per);
	if (a->first_step < 0 && r->step >= 0)
		a->first_step = r->step;
	if (r->step >= 0)
		a->last_step = r->step;
	a->nstep_recs++;

	/* the window (by step number when the log has them, else by record) */
	if (per > 0) {
		long s = r->step >= 0 ? r->step : a->nstep_recs - 1;
		long first = r->step >= 0 ? a->first_step : 0;
		struct sample sm;
		to_sample(r, s, per, &sm);
		if (kept_apart) {
			if (s >= first + c->o->warmup && s < first + c->o->warmup + c->o->window)
				exclude(c, s);
		} else if (s >= first + c->o->warmup && s < first + c->o->warmup + c->o->window) {
			if (push(&a->win, &a->nwin, &a->capwin, &sm))
				c->oom = 1;
		} else if (s < first + c->o->warmup) {
			if (push(&a->early, &a->nearly, &a->capearly, &sm))
				c->oom = 1;
		}
	}
	a->prev_t = r->t_end;
	a->prev_end = !isnan(r->t_start) && per > 0 ? r->t_start + per : NAN;
	if (!isnan(r->t_end) && !isnan(r->t_start))
		a->prev_end = r->t_end;
	a->prev_step = r->step >= 0 ? r->step : a->prev_step + 1;
	a->prev_ckpt = r->ckpt_sec;
	return c->oom ? CH_ERR_RUNTIME : 0;
}

/* ------------------------------------------------------- the derivation */

static double median_of(double *v, size_t n)
{
	struct ch_stats st;
	if (!n || ch_stats_compute(v, n, &st))
		return NAN;
	return st.median;
}

/* the median of the non-NAN values of a field over samples */
static double med_field(const struct sample *s, size_t n, size_t off, double *buf)
{
	size_t i, k = 0;
	for (i = 0; i < n; i++) {
		double v = *(const double *)((const char *)&s[i] + off);
		if (!isnan(v))
			buf[k++] = v;
	}
	return k == n && k ? median_of(buf, k) : NAN;
}

/* the median of a field over the samples that have it (the job's tokens:
 * a log's first line has no earlier count to take a difference from) */
static double med_field_any(const struct sample *s, size_t n, size_t off, double *buf)
{
	size_t i, k = 0;
	for (i = 0; i < n; i++) {
		double v = *(const double *)((const char *)&s[i] + off);
		if (!isnan(v))
			buf[k++] = v;
	}
	return k ? median_of(buf, k) : NAN;
}

static void rank_stats(struct ctx *c, const struct acc *a, struct hr_steps_rank *rk, double *buf)
{
	const struct sample *s = a->nwin ? a->win : a->early;
	size_t n = a->nwin ? a->nwin : a->nearly, i;
	struct ch_stats st;
	double sum_in = 0, sum_step = 0, mad = NAN, med;
	int p;

	memset(rk, 0, sizeof(*rk));
	rk->rank = a->rank;
	rk->local_rank = a->local_rank;
	rk->format = a->format;
	rk->records = a->nstep_recs;
	rk->first_step = a->first_step;
	rk->last_step = a->last_step;
	snprintf(rk->node, sizeof(rk->node), "%s", a->node);
	for (p = 0, i = 0; i < HR_SF_N; i++)
		p += c->run->records_by_format[i] > 0;
	if (a->rank >= 0 && p > 1) /* the same number may be two ranks, one a format */
		snprintf(rk->id, sizeof(rk->id), "rank %d (%s)", a->rank, hr_steps_format_name(a->format));
	else if (a->rank >= 0)
		snprintf(rk->id, sizeof(rk->id), "rank %d", a->rank);
	else if (a->local_rank >= 0)
		snprintf(rk->id, sizeof(rk->id), "local rank %d (%s)", a->local_rank, a->path);
	else {
		/* the k-th line of each step in a file without ranks: stream k */
		const char *d = strrchr(a->key, '\x1f');
		int dup = d ? atoi(d + 2) : 0;
		if (dup)
			snprintf(rk->id, sizeof(rk->id), "%s (line stream %d)", a->path, dup + 1);
		else
			snprintf(rk->id, sizeof(rk->id), "%s", a->path);
	}
	rk->nwin = n;
	rk->step_med = rk->step_p95 = rk->step_mad = rk->compute_med = rk->input_frac = NAN;
	rk->tokens_step = rk->tps = rk->mfu_logged = rk->tflops_logged = rk->host_cpu = rk->z = NAN;
	rk->job_tokens_step = NAN;
	rk->excess_sec = NAN;
	for (p = 0; p < HR_PH_N; p++)
		rk->phase_med[p] = NAN;
	if (!n)
		return;
	if (!a->nwin)
		c->run->window_all = 1;
	for (i = 0; i < n; i++)
		buf[i] = s[i].step_sec;
	if (ch_stats_compute(buf, n, &st))
		return;
	rk->step_med = st.median;
	rk->step_p95 = st.p95;
	if (!ch_median_mad(buf, n, &med, &mad))
		rk->step_mad = mad;
	for (p = 0; p < HR_PH_N; p++)
		rk->phase_med[p] = med_field(s, n, offsetof(struct sample, ph) + (size_t)p * sizeof(double), buf);
	rk->tokens_step = med_field(s, n, offsetof(struct sample, tokens), buf);
	rk->job_tokens_step = med_field_any(s, n, offsetof(struct sample, job_tokens), buf);
	rk->tps = med_field(s, n, offsetof(struct sample, tps), buf);
	if (isnan(rk->tps) && rk->tokens_step > 0)
		rk->tps = rk->tokens_step / rk->step_med;
	rk->mfu_logged = med_field(s, n, offsetof(struct sample, mfu), buf);
	rk->tflops_logged = med_field(s, n, offsetof(struct sample, tflops), buf);
	rk->host_cpu = med_field(s, n, offsetof(struct sample, cpu), buf);
	for (i = 0; i < n; i++) {
		if (isnan(s[i].ph[HR_PH_INPUT]))
			break;
		sum_in += s[i].ph[HR_PH_INPUT];
		sum_step += s[i].step_sec;
	}
	if (i == n && sum_step > 0)
		rk->input_frac = sum_in / sum_step;
	{
		const double *ph = rk->phase_med;
		double opt = isnan(ph[HR_PH_OPTIMIZER]) ? 0 : ph[HR_PH_OPTIMIZER];
		if (!isnan(ph[HR_PH_FORWARD]) && !isnan(ph[HR_PH_BACKWARD]))
			rk->compute_med = ph[HR_PH_FORWARD] + ph[HR_PH_BACKWARD] + opt;
		else if (!isnan(ph[HR_PH_FWDBWD]))
			rk->compute_med = ph[HR_PH_FWDBWD] + opt;
		else if (!isnan(ph[HR_PH_ALLREDUCE]))
			rk->compute_med = rk->step_med - ph[HR_PH_ALLREDUCE] - (isnan(ph[HR_PH_INPUT]) ? 0 : ph[HR_PH_INPUT]);
	}
}

static int cmp_rank(const void *x, const void *y)
{
	const struct hr_steps_rank *a = x, *b = y;
	double ka = !isnan(a->compute_med) ? a->compute_med : a->step_med;
	double kb = !isnan(b->compute_med) ? b->compute_med : b->step_med;
	if (isnan(ka) != isnan(kb))
		return isnan(ka) ? 1 : -1;
	if (ka != kb)
		return ka > kb ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	return strcmp(a->id, b->id);
}

static int cmp_ev(const void *x, const void *y)
{
	const struct hr_steps_event *a = x, *b = y;
	if (isnan(a->t_start) != isnan(b->t_start))
		return isnan(a->t_start) ? 1 : -1;
	if (!isnan(a->t_start) && a->t_start != b->t_start)
		return a->t_start < b->t_start ? -1 : 1;
	return a->step < b->step ? -1 : a->step > b->step;
}

/* the samples a rank is judged on: its window, else its warm-up (a fallback) */
static const struct sample *rank_samples(const struct acc *a, size_t *n)
{
	*n = a->nwin ? a->nwin : a->nearly;
	return a->nwin ? a->win : a->early;
}

/* the first and the last step of the windows, over ranks */
static void derive_window(const struct ctx *c, struct hr_steps_run *run)
{
	size_t i, n;

	run->win_first = run->win_last = -1;
	for (i = 0; i < c->nacc; i++) {
		const struct sample *s = rank_samples(c->acc[i], &n);
		if (!n)
			continue;
		if (run->win_first < 0 || s[0].step < run->win_first)
			run->win_first = s[0].step;
		if (s[n - 1].step > run->win_last)
			run->win_last = s[n - 1].step;
	}
}

/* the step: the median of the ranks' medians, their median spread, the worst p95 */
static void derive_step(struct hr_steps_run *run, double *buf, double *buf2)
{
	size_t i, k;

	run->step_sec = run->step_p95 = run->spread_frac = run->other_sec = NAN;
	for (k = 0, i = 0; i < run->nranks; i++)
		if (!isnan(run->ranks[i].step_med)) {
			buf[k] = run->ranks[i].step_med;
			buf2[k++] = run->ranks[i].step_mad / run->ranks[i].step_med;
			if (isnan(run->step_p95) || run->ranks[i].step_p95 > run->step_p95)
				run->step_p95 = run->ranks[i].step_p95;
		}
	if (k) {
		run->step_sec = median_of(buf, k);
		run->spread_frac = median_of(buf2, k);
	}
}

/* the median over every rank's window of phase @p's Megatron minmax bound
 * (@hi: the max, else the min); NAN when none is logged */
static double phase_bound(const struct ctx *c, int p, int hi, double *buf, size_t maxn)
{
	size_t i, j, n, m = 0;

	for (i = 0; i < c->nacc; i++) {
		const struct sample *s = rank_samples(c->acc[i], &n);
		for (j = 0; j < n && m < maxn; j++) {
			double v = hi ? s[j].hi[p] : s[j].lo[p];
			if (!isnan(v))
				buf[m++] = v;
		}
	}
	return m ? median_of(buf, m) : NAN;
}

/* the split: each phase's mean over ranks and its across-ranks range, and
 * the rest of the step */
static void derive_split(const struct ctx *c, struct hr_steps_run *run, double *buf, size_t maxn)
{
	size_t i, m;
	int p;

	run->have_split = 0;
	for (p = 0; p < HR_PH_N; p++) {
		double sum = 0;
		run->phase_lo[p] = run->phase_hi[p] = NAN;
		for (m = 0, i = 0; i < run->nranks; i++)
			if (!isnan(run->ranks[i].phase_med[p])) {
				sum += run->ranks[i].phase_med[p];
				m++;
			}
		run->phase_mean[p] = m ? sum / (double)m : NAN;
		run->have_split |= m > 0;
		/* Megatron minmax: the across-ranks range, median over the window */
		run->phase_hi[p] = phase_bound(c, p, 1, buf, maxn);
		run->phase_lo[p] = phase_bound(c, p, 0, buf, maxn);
	}
	if (run->have_split && !isnan(run->step_sec)) {
		double sum = 0;
		for (p = 0; p < HR_PH_N; p++)
			if (!isnan(run->phase_mean[p]) && p != HR_PH_FWDBWD)
				sum += run->phase_mean[p];
		if (isnan(run->phase_mean[HR_PH_FORWARD]) && !isnan(run->phase_mean[HR_PH_FWDBWD]))
			sum += run->phase_mean[HR_PH_FWDBWD];
		run->other_sec = run->step_sec - sum;
	}
}

/* stragglers: the robust z of each rank's own work across ranks, and what
 * the slowest costs the step over the next one */
static void derive_stragglers(const struct ctx *c, struct hr_steps_run *run, double *buf)
{
	size_t i, k;

	run->compute_median = NAN;
	for (k = 0, i = 0; i < run->nranks; i++)
		if (!isnan(run->ranks[i].compute_med))
			buf[k++] = run->ranks[i].compute_med;
	run->stragglers_visible = k >= 3 && k == run->nranks;
	if (k >= 3) {
		double med, mad, d, next = NAN, worst = NAN;
		ch_median_mad(buf, k, &med, &mad);
		run->compute_median = med;
		d = mad > 0.01 * med ? mad : 0.01 * med; /* a floor: identical ranks are not all outliers */
		for (i = 0; i < run->nranks; i++) {
			struct hr_steps_rank *rk = &run->ranks[i];
			if (isnan(rk->compute_med))
				continue;
			rk->excess_sec = rk->compute_med - med;
			rk->z = d > 0 ? 0.6745 * rk->excess_sec / d : 0;
			rk->straggler = rk->z >= c->o->z && rk->excess_sec >= c->o->min_excess * med;
			if (rk->straggler) {
				run->nstragglers++;
				if (isnan(worst) || rk->compute_med > worst)
					worst = rk->compute_med;
			} else if (isnan(next) || rk->compute_med > next) {
				next = rk->compute_med;
			}
		}
		if (run->nstragglers)
			run->straggler_cost_sec = worst - (isnan(next) ? med : next);
	}
}

/* input wait: the worst rank's (the synchronous step waits for it) */
static void derive_input(struct hr_steps_run *run)
{
	size_t i;

	run->input_frac = NAN;
	run->input_rank = -1;
	for (i = 0; i < run->nranks; i++)
		if (!isnan(run->ranks[i].input_frac) &&
		    (run->input_rank < 0 || run->ranks[i].input_frac > run->input_frac)) {
			run->input_frac = run->ranks[i].input_frac;
			run->input_rank = (int)i;
		}
}

/* nodes: the distinct node names of the ranks, hashed (O(ranks)); none
 * counted when memory runs out for the table */
static void count_nodes(struct hr_steps_run *run)
{
	size_t cap = 16, i, j;
	int64_t *tab;

	while (cap < 2 * run->nranks)
		cap *= 2;
	if (!(tab = malloc(cap * sizeof(*tab))))
		return;
	memset(tab, 0xff, cap * sizeof(*tab));
	for (i = 0; i < run->nranks; i++) {
		const char *node = run->ranks[i].node;
		if (!node[0])
			continue;
		for (j = hash_str(node) & (cap - 1); tab[j] >= 0; j = (j + 1) & (cap - 1))
			if (!strcmp(run->ranks[tab[j]].node, node))
				break;
		if (tab[j] < 0) {
			tab[j] = (int64_t)i;
			run->nnodes++;
		}
	}
	free(tab);
}

/* the median over ranks of the field at offset @off of struct hr_steps_rank
 * where not NAN; NAN when none */
static double ranks_median(const struct hr_steps_run *run, size_t off, double *buf)
{
	size_t i, m = 0;

	for (i = 0; i < run->nranks; i++) {
		double v = *(const double *)((const char *)&run->ranks[i] + off);
		if (!isnan(v))
			buf[m++] = v;
	}
	return m ? median_of(buf, m) : NAN;
}

/* throughput: tokens per step, per second and per GPU; the logged MFU,
 * TFLOP/s and host CPU */
static void derive_throughput(struct hr_steps_run *run, double *buf)
{
	double sum = 0;
	size_t i, n_tok = 0;

	run->tokens_per_step = run->tokens_per_sec = run->tps_per_gpu = NAN;
	run->mfu_logged = run->tflops_logged = run->host_cpu = NAN;
	for (i = 0; i < run->nranks; i++)
		if (!isnan(run->ranks[i].tokens_step)) {
			sum += run->ranks[i].tokens_step;
			n_tok++;
		}
	if (n_tok && n_tok == run->nranks && run->step_sec > 0) {
		/* every record's tokens are its own GPU's: the sum over the ranks
		 * is the job's only when the logs hold more than one rank (one
		 * rank's log: the job's needs its GPU count, hr_steps_job_tokens()) */
		run->tps_per_gpu = sum / run->step_sec / (double)run->nranks;
		if (run->nranks > 1) {
			run->tokens_per_step = sum;
			run->tokens_per_sec = sum / run->step_sec;
		}
	} else {
		run->tps_per_gpu = ranks_median(run, offsetof(struct hr_steps_rank, tps), buf);
	}
	/* the job's count a log prints (not per GPU: per GPU needs the GPUs) */
	if (isnan(run->tokens_per_step) && run->step_sec > 0) {
		double job = ranks_median(run, offsetof(struct hr_steps_rank, job_tokens_step), buf);
		if (job > 0) {
			run->tokens_per_step = job;
			run->tokens_per_sec = job / run->step_sec;
		}
	}
	run->mfu_logged = ranks_median(run, offsetof(struct hr_steps_rank, mfu_logged), buf);
	run->tflops_logged = ranks_median(run, offsetof(struct hr_steps_rank, tflops_logged), buf);
	run->host_cpu = ranks_median(run, offsetof(struct hr_steps_rank, host_cpu), buf);
}

/* stalls: the events, moved into @run in time order and counted; the median
 * block, the interval between them, the stall share and the wall-clock step.
 * *@bufp (@maxn values) grows by one value per event. */
static int derive_stalls(struct ctx *c, struct hr_steps_run *run, double **bufp, size_t maxn)
{
	double first = NAN, last = NAN, *buf;
	size_t i, m = 0, nt = 0;

	run->events = c->ev;
	run->nevents = c->nev;
	c->ev = NULL;
	if (run->nevents) /* none: no array (qsort's is never NULL) */
		qsort(run->events, run->nevents, sizeof(run->events[0]), cmp_ev);
	run->ckpt_block_sec = run->ckpt_interval_sec = run->stall_frac = run->wall_step_sec = NAN;
	run->span_sec = !isnan(c->tmin) ? c->tmax - c->tmin : NAN;
	buf = realloc(*bufp, (run->nevents + maxn) * sizeof(double));
	if (!buf)
		return CH_ERR_RUNTIME;
	*bufp = buf;
	for (i = 0; i < run->nevents; i++) {
		const struct hr_steps_event *e = &run->events[i];
		run->nckpt += e->kind == HR_SE_CKPT;
		run->neval += e->kind == HR_SE_EVAL;
		run->nstall += e->kind == HR_SE_STALL;
		if (e->kind == HR_SE_EVAL)
			continue;
		if (!isnan(e->sec))
			buf[m++] = e->sec;
		if (!isnan(e->t_start)) {
			if (isnan(first))
				first = e->t_start;
			last = e->t_start;
			nt++;
		}
	}
	if (m)
		run->ckpt_block_sec = median_of(buf, m);
	if (nt >= 2 && last > first)
		run->ckpt_interval_sec = (last - first) / (double)(nt - 1);
	if (run->ckpt_block_sec >= 0 && run->ckpt_interval_sec > run->ckpt_block_sec)
		run->stall_frac = run->ckpt_block_sec / run->ckpt_interval_sec;
	else if (!run->nckpt && !run->nstall)
		run->stall_frac = 0;
	if (run->step_sec > 0 && !isnan(run->stall_frac))
		run->wall_step_sec = run->step_sec / (1 - run->stall_frac);
	return 0;
}

/* the run from the ranks' windows: per rank, then over ranks */
static int derive(struct ctx *c)
{
	struct hr_steps_run *run = c->run;
	size_t i, maxn = 1;
	double *buf, *buf2;
	int rc;

	for (i = 0; i < c->nacc; i++) {
		size_t n = c->acc[i]->nwin > c->acc[i]->nearly ? c->acc[i]->nwin : c->acc[i]->nearly;
		if (n > maxn)
			maxn = n;
	}
	if (c->nacc + 1 > maxn)
		maxn = c->nacc + 1;
	buf = malloc(maxn * sizeof(double));
	buf2 = malloc(maxn * sizeof(double));
	run->ranks = calloc(c->nacc ? c->nacc : 1, sizeof(*run->ranks));
	if (!buf || !buf2 || !run->ranks) {
		free(buf);
		free(buf2);
		return CH_ERR_RUNTIME;
	}
	run->nranks = c->nacc;
	for (i = 0; i < c->nacc; i++)
		rank_stats(c, c->acc[i], &run->ranks[i], buf);
	derive_window(c, run);
	derive_step(run, buf, buf2);
	derive_split(c, run, buf, maxn);
	derive_stragglers(c, run, buf);
	qsort(run->ranks, run->nranks, sizeof(run->ranks[0]), cmp_rank); /* the slowest first */
	derive_input(run);
	count_nodes(run);
	derive_throughput(run, buf);
	rc = derive_stalls(c, run, &buf, maxn);
	if (!rc) {
		run->nexcluded = c->nexcl;
		memcpy(run->excluded, c->excluded_steps, sizeof(run->excluded));
	}
	free(buf);
	free(buf2);
	return rc;
}

/* ------------------------------------------------------------ the driver */

int hr_steps_run_load(char *const *paths, int n, const struct hr_steps_opts *o, struct hr_steps_run *run,
		      struct hr_issues *issues)
{
	static const char *const exts[] = { ".log", ".txt", ".out", ".jsonl", ".json", NULL };
	struct hr_steps_opts def;
	struct hr_file_list files;
	struct ctx *c;
	size_t i;
	int rc, f;

	memset(run, 0, sizeof(*run));
	if (!o) {
		hr_steps_opts_init(&def);
		o = &def;
	}
	run->warmup = o->warmup;
	run->window = o->window;
	if ((rc = hr_collect_files(paths, n, NULL, exts, &files, issues)))
		return rc;
	c = calloc(1, sizeof(*c));
	if (!c) {
		hr_file_list_release(&files);
		return CH_ERR_RUNTIME;
	}
	c->o = o;
	c->run = run;
	c->issues = issues;
	c->tmin = c->tmax = NAN;
	run->nfiles = files.n;
	/* the file names must outlive the run (events point at them): keep the list */
	for (i = 0; i < files.n && !rc; i++) {
		struct hr_steps_file_info info;
		int r = hr_steps_read(files.paths[i], on_rec, c, issues, &info);
		run->lines += info.lines;
		if (r < 0)
			rc = r;
		else if (r == 0)
			run->nfiles_read++;
	}
	if (!rc && !run->records && !files.n)
		rc = ch_usage_error("no step log in the paths given (a folder is read for its *.log, *.txt, *.out, *.jsonl and *.json files)");
	else if (!rc && !run->records)
		rc = ch_usage_error("no training-step record in the %zu step log%s given%s", files.n, files.n == 1 ? "" : "s",
				    issues && issues->n ? " (see 'input problems' below)" : "");
	if (!rc)
		rc = derive(c);
	for (f = 1; f < HR_SF_N; f++)
		if (!run->format || run->records_by_format[f] > run->records_by_format[run->format])
			run->format = run->records_by_format[f] ? f : run->format;
	for (i = 0; i < c->nacc; i++) {
		free(c->acc[i]->win);
		free(c->acc[i]->early);
		free(c->acc[i]);
	}
	free(c->acc);
	free(c->tab);
	free(c->ev);
	free(c->evtab);
	free(c);
	/* the events' paths point into files: hand the list's strings over */
	run->file_names = files.paths;
	run->nfile_names = files.n;
	free(files.named);
	if (rc)
		hr_steps_run_release(run);
	return rc;
}

void hr_steps_run_release(struct hr_steps_run *run)
{
	size_t i;
	free(run->ranks);
	free(run->events);
	for (i = 0; i < run->nfile_names; i++)
		free(run->file_names[i]);
	free(run->file_names);
	memset(run, 0, sizeof(*run));
}

/* ---------------------------------------------------- MFU and scaling */

double hr_steps_run_gpus(const struct hr_steps_run *r)
{
	/* the ranks seen; one rank's log says nothing of the job's other ranks */
	return r && r->nranks > 1 ? (double)r->nranks : 0;
}

int hr_steps_mfu(const struct hr_steps_run *r, double params, double gpus, double peak_tflops,
		 struct hr_steps_mfu *out)
{
	double per_gpu;

	out->gpus = gpus;
	out->peak_tflops = peak_tflops;
	out->mfu = out->mfu_wall = out->ratio = out->implied_peak_tflops = out->implied_flops_per_token = NAN;
	out->logged = r->mfu_logged;
	per_gpu = r->tps_per_gpu;
	if (isnan(per_gpu) && r->tokens_per_sec > 0 && gpus > 0)
		per_gpu = r->tokens_per_sec / gpus; /* the job's count a log prints */
	out->tokens_per_sec = gpus > 0 ? per_gpu * gpus : NAN; /* the job's: needs its GPU count */
	if (!(per_gpu > 0) || !(params > 0) || !(peak_tflops > 0))
		return -1;
	/* 6 N tokens/s / (GPUs x peak) = 6 N (tokens/s per GPU) / peak */
	out->mfu = 6.0 * params * per_gpu / (peak_tflops * 1e12);
	out->mfu_wall = !isnan(r->stall_frac) ? out->mfu * (1 - r->stall_frac) : NAN;
	if (out->logged > 0) {
		out->ratio = out->logged / out->mfu;
		out->implied_peak_tflops = 6.0 * params * per_gpu / out->logged / 1e12;
		out->implied_flops_per_token = out->logged * peak_tflops * 1e12 / per_gpu;
	}
	return 0;
}

double hr_steps_job_tokens(const struct hr_steps_run *r, double gpus)
{
	if (r->tokens_per_step > 0)
		return r->tokens_per_step;
	if (r->tps_per_gpu > 0 && r->step_sec > 0 && gpus > 0)
		return r->tps_per_gpu * r->step_sec * gpus;
	return NAN;
}

int hr_steps_scaling(const struct hr_steps_run *base, const struct hr_steps_run *now, double n0, double n1,
		     struct hr_steps_scaling *out)
{
	double t0 = !isnan(base->wall_step_sec) ? base->wall_step_sec : base->step_sec;
	double t1 = !isnan(now->wall_step_sec) ? now->wall_step_sec : now->step_sec;
	double tok0, tok1;

	memset(out, 0, sizeof(*out));
	out->n0 = n0;
	out->n1 = n1;
	out->t0 = t0;
	out->t1 = t1;
	out->speedup = out->efficiency = NAN;
	if (!(t0 > 0) || !(t1 > 0) || !(n0 > 0) || !(n1 > 0))
		return -1;
	tok0 = hr_steps_job_tokens(base, n0);
	tok1 = hr_steps_job_tokens(now, n1);
	if (tok0 > 0 && tok1 > 0) {
		double g0 = tok0 / n0, g1 = tok1 / n1;
		if (fabs(g1 / g0 - 1) <= 0.02)
			out->mode = 1;
		else if (fabs(tok1 / tok0 - 1) <= 0.02)
			out->mode = 2;
		out->speedup = (tok1 / t1) / (tok0 / t0);
	} else {
		out->speedup = (n1 / t1) / (n0 / t0);
	}
	out->efficiency = out->speedup / (n1 / n0);
	return 0;
}
