/*
 * hr_rule_curve.c - the curve-shape family: a busbw curve's dips, gaps
 * between out-of-place and in-place, alternation and collapse.
 */
#include "report/judge/hr_judge.h"
#include "report/judge/hr_rules.h"
#include "report/judge/hr_quality.h"
#include "report/hr_util.h"
#include "base/ch_common.h"
#include "base/ch_result.h"
#include "base/ch_stats.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The curve rules' parameters (rows curve_dip, curve_gap, curve_alternation
 * and curve_collapse of hr_rules.c), read once per judge run by
 * curve_reasons(): dip, gap and mid as fractions, step and rise as
 * fractions of a step, span a ratio of sizes, latency a ratio of times,
 * min_bytes in bytes, min_sizes a count. */
static struct {
	double dip, gap, step, mid, rise, span, latency, min_bytes, min_sizes;
} cp;

static void curve_params(void)
{
	cp.dip = hr_rule_param("curve_dip", "dip");
	cp.latency = hr_rule_param("curve_dip", "latency");
	cp.min_bytes = hr_rule_param("curve_dip", "min_bytes");
	cp.gap = hr_rule_param("curve_gap", "gap");
	cp.step = hr_rule_param("curve_alternation", "step");
	cp.min_sizes = hr_rule_param("curve_alternation", "min_sizes");
	cp.mid = hr_rule_param("curve_collapse", "mid");
	cp.rise = hr_rule_param("curve_collapse", "rise");
	cp.span = hr_rule_param("curve_collapse", "span");
}

static void curve_add(struct an *a, const struct hr_group *g, int level, const char *code, const char *action,
		      const char *text)
{
	int k;
	if (!g->nnodes)
		hj_add_reason(a, -1, level, code, g->name, g->source, action, "%s %s: %s",
			   g->name, g->collective, text);
	for (k = 0; k < g->nnodes; k++)
		hj_add_reason(a, g->nodes[k], level, code, g->name, g->source, action,
			   "%s (%s %s, %d ranks): %s", g->name, g->collective, g->algo, g->nranks, text);
}

#define CURVE_ACTION "re-run the sweep; if it repeats, read which protocol and algorithm NCCL chose around those sizes (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=TUNING) and compare with NCCL_PROTO / NCCL_ALGO pinned; look for other traffic during the run"
#define CURVE_ACTION_MPI "re-run the sweep; if it repeats, read which algorithm and protocol MPI chose around those sizes (Open MPI: ompi_info --param coll tuned --level 9, the eager limits of ompi_info --param btl all --level 9) and compare with one pinned (--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm N); look for other traffic during the run"

/* The shape rules' action for group @g: NCCL's tuning knobs, or MPI's
 * for a sweep of allreduce_bw's mpi backend (NCCL's would not apply). */
static const char *curve_action(const struct hr_group *g)
{
	return g->backend && !strcmp(g->backend, "mpi") ? CURVE_ACTION_MPI : CURVE_ACTION;
}

/* One cell of a curve as the shape rules see it. */
struct ccell {
	int ok;            /* a value to judge (present, clean) */
	int noisy;         /* present but noisy: CV above max_cv (measurement_noisy, hr_rules.c) */
	int regime;        /* past the latency floor: its time at least
			      latency x the smallest of the half
			      (sizes >= min_bytes where the time is
			      not recorded) */
	double bytes;
	double bw;         /* busbw at the median per-call period where recorded */
	double e;          /* its relative spread: the CV and the 2-decimal print */
	double cv;
	int confirm;       /* measured again (enum hr_confirm: AGREED = measured) */
	double cbw, ce;    /* the re-measurement's busbw and spread */
};

/* The rows of @g the shape rules use: rows of size 0 dropped; 0 when the
 * rest is not one increasing sweep of at least 3 sizes. */
static size_t curve_rows(const struct hr_group *g, size_t *first)
{
	size_t j, n = 0, f0 = g->nrows;
	for (j = 0; j < g->nrows; j++) {
		if (!(g->rows[j].bytes > 0))
			continue;
		if (f0 == g->nrows)
			f0 = j;
		else if (!(g->rows[j].bytes > g->rows[j - 1].bytes) || j != f0 + n)
			return 0; /* not one increasing sweep (several roots or types) */
		n++;
	}
	*first = f0;
	return n >= 3 ? n : 0;
}

/* The relative spread of a busbw: its per-call CV, plus half a unit of the
 * last printed digit where it was read from text (nccl-tests prints busbw
 * with 2 decimals) */
static double spread_of(double cv, double bw, int printed)
{
	return (isnan(cv) ? 0 : cv) + (!printed ? 0 : bw > 0 ? 0.005 / bw : 1e9);
}

/* The cells of half @h (0 out-of-place, 1 in-place) of rows [f0, f0+n). */
static void curve_cells(const struct hr_group *g, size_t f0, size_t n, int h, struct ccell *c)
{
	double tmin = NAN;
	size_t j;
	int printed = g->backend && !strcmp(g->backend, "nccl-tests");
	for (j = 0; j < n; j++) {
		const struct hr_row *r = &g->rows[f0 + j];
		const struct hr_cell *cl = h ? &r->ip : &r->oop;
		double bw = h ? r->busbw_ip_gbps : r->busbw_oop_gbps, t = cl->median_us > 0 ? cl->median_us : cl->time_us;
		memset(&c[j], 0, sizeof(c[j]));
		c[j].bytes = r->bytes;
		c[j].cv = cl->cv;
		if (isnan(bw))
			continue;
		if (cl->time_us > 0 && cl->median_us > 0)
			bw *= cl->time_us / cl->median_us; /* at the median per-call period */
		c[j].bw = bw;
		c[j].e = spread_of(cl->cv, bw, printed);
		c[j].noisy = cl->cv > hr_rule_param("measurement_noisy", "max_cv");
		c[j].ok = !c[j].noisy && bw >= 0;
		c[j].confirm = cl->confirm;
		c[j].cbw = cl->confirm_busbw;
		c[j].ce = spread_of(cl->confirm_cv, cl->confirm_busbw, 0);
		if (t > 0 && (isnan(tmin) || t < tmin))
			tmin = t;
	}
	/* past the latency floor: the time of this size and of every larger
	 * one at least latency x the smallest (the trend of time with
	 * size, so that one slow call at a small size is not taken for it) */
	{
		double run = NAN;
		for (j = n; j-- > 0;) {
			const struct hr_row *r = &g->rows[f0 + j];
			const struct hr_cell *cl = h ? &r->ip : &r->oop;
			double t = cl->median_us > 0 ? cl->median_us : cl->time_us;
			if (t > 0 && (isnan(run) || t < run))
				run = t;
			c[j].regime = t > 0 && tmin > 0 ? run >= cp.latency * tmin : c[j].bytes >= cp.min_bytes;
		}
	}
}

/* Whether busbw @m (spread @em) is a dip between cells @l and @r. */
static int is_dip(double m, double em, const struct ccell *l, const struct ccell *r)
{
	double up = m * (1 + em);
	return m < l->bw && m < r->bw && m < cp.dip * sqrt(l->bw * r->bw) &&
	       up < l->bw * (1 - l->e) && up < r->bw * (1 - r->e);
}

/* Whether @lo (spread @elo) is below gap x @hi (spread @ehi) beyond both spreads. */
static int is_gap(double lo, double elo, double hi, double ehi)
{
	return lo * (1 + elo) < cp.gap * hi * (1 - ehi);
}

/* What the re-measurement of a finding says, for its text. */
struct cfind {
	int n, confirmed, unconfirmed, noisy;
	struct hr_buf txt, not_repro, noisy_txt;
};

static void cfind_add(struct cfind *f, int confirm, int agrees, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void cfind_add(struct cfind *f, int confirm, int agrees, const char *fmt, ...)
{
	char buf[400];
	va_list ap;
	struct hr_buf *b;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (confirm != HR_CONFIRM_NONE && !agrees) {
		b = &f->not_repro;
	} else {
		b = &f->txt;
		f->n++;
		if (confirm != HR_CONFIRM_NONE)
			f->confirmed++;
		else
			f->unconfirmed++;
	}
	if (b == &f->txt && f->n > 4)
		return;
	hr_buf_printf(b, "%s%s%s", b->len ? "; " : "", buf,
		      b == &f->txt ? (confirm != HR_CONFIRM_NONE ? ", confirmed by re-measurement"
								 : ", not confirmed (no re-measurement in the input)")
				   : "");
}

static void cfind_release(struct cfind *f)
{
	hr_buf_release(&f->txt);
	hr_buf_release(&f->not_repro);
	hr_buf_release(&f->noisy_txt);
}

/* Report a rule's findings: WARN when any, info for those that did not
 * reproduce and for those on noisy cells. */
static void cfind_report(struct an *a, const struct hr_group *g, const char *code, const char *action,
			 const struct cfind *f, const char *what, const char *crit)
{
	char t[1600];
	if (f->n) {
		snprintf(t, sizeof(t), "%s %s%s (%s)", what, f->txt.s, f->n > 4 ? "; and more" : "", crit);
		curve_add(a, g, HR_WARN, code, action, t);
	}
	if (f->not_repro.s) {
		snprintf(t, sizeof(t), "%s %s did not reproduce: the sweep's re-measurement at the end of the run did not show it",
			 what, f->not_repro.s);
		curve_add(a, g, HR_INFO, "did_not_reproduce", "nothing to do; re-run the sweep if it recurs", t);
	}
}

/* The shape findings of one sweep, both halves. */
struct cshape {
	struct cfind dip, gap, col;
	struct hr_buf alt, noisy; /* the alternations named; the first finding on noisy cells */
	int nnoisy;               /* findings on noisy cells */
	int dip_inside;           /* a dip judged against its like sizes, inside an alternation */
};

/* A regular alternation in half @x: the sign of the step flips at every
 * size, each step at least step and beyond the cells' spread, over
 * min_sizes sizes or more. The longest into [*lo, *hi], said in s->alt;
 * *hi 0 when none. */
static void curve_alternation(const struct ccell *x, size_t n, const char *half, struct cshape *s, size_t *lo,
			      size_t *hi)
{
	size_t j, k, start = 0, len = 0;
	int up_prev = 0;
	char s1[32], s2[32];

	*lo = *hi = 0;
	for (j = 1; j < n; j++) {
		int okj = x[j].ok && x[j - 1].ok && x[j].regime && x[j - 1].regime && x[j - 1].bw > 0 &&
			  fabs(x[j].bw / x[j - 1].bw - 1) >= cp.step &&
			  fabs(x[j].bw - x[j - 1].bw) > x[j].bw * x[j].e + x[j - 1].bw * x[j - 1].e;
		int up = x[j].bw > x[j - 1].bw;
		if (!okj) {
			len = 0;
			continue;
		}
		if (len == 0 || up == up_prev) {
			start = j - 1;
			len = 1;
		} else {
			len++;
		}
		up_prev = up;
		if (len + 1 >= (size_t)cp.min_sizes && j - start > *hi - *lo) {
			*lo = start;
			*hi = j;
		}
	}
	if (!*hi)
		return;
	hr_buf_printf(&s->alt, "%s%s busbw alternates up and down between neighbouring sizes from %s to %s (",
		      s->alt.len ? "; " : "", half, hr_fmt_bytes(x[*lo].bytes, s1, sizeof(s1)),
		      hr_fmt_bytes(x[*hi].bytes, s2, sizeof(s2)));
	for (k = *lo; k <= *hi; k++)
		hr_buf_printf(&s->alt, "%s%.2f", k > *lo ? ", " : "", x[k].bw);
	hr_buf_printf(&s->alt, " GB/s)");
}

/* Dips in half @x: a size past the latency floor below both neighbours
 * beyond their spread and below dip x their geometric mean. Inside the
 * alternation [alt_lo, alt_hi] (alt_hi 0: none) its neighbours are the
 * other phase of the alternation: there a size is judged the same way
 * against its like sizes instead, the sizes two steps away on either side
 * (the same phase), both within the alternation; a size without both is
 * not judged for a dip. */
static void curve_dips(struct ccell *x, size_t n, const char *half, size_t alt_lo, size_t alt_hi, struct cshape *s)
{
	size_t j;
	char s1[32], s2[32], sp[160];

	for (j = 1; j + 1 < n; j++) {
		int inside = alt_hi && j >= alt_lo && j <= alt_hi;
		struct ccell *l = &x[j - 1], *m = &x[j], *r = &x[j + 1];
		if (inside && (j < alt_lo + 2 || j + 2 > alt_hi))
			continue; /* in the alternation without like sizes on both sides */
		if (inside) {
			l = &x[j - 2];
			r = &x[j + 2];
		}
		if (!m->regime)
			continue; /* latency-bound */
		if (!(l->ok || l->noisy) || !(m->ok || m->noisy) || !(r->ok || r->noisy) ||
		    !(m->bw < l->bw && m->bw < r->bw && m->bw < cp.dip * sqrt(l->bw * r->bw)))
			continue;
		if (l->noisy || m->noisy || r->noisy) {
			const struct ccell *w = m->noisy ? m : l->noisy ? l : r;
			if (!s->nnoisy++)
				hr_buf_printf(&s->noisy, "a dip (%s) at %s on noisy cells (CV %.2f at %s)", half,
					      hr_fmt_bytes(m->bytes, s1, sizeof(s1)), w->cv,
					      hr_fmt_bytes(w->bytes, s2, sizeof(s2)));
			continue;
		}
		if (!is_dip(m->bw, m->e, l, r))
			continue;
		if (isnan(m->cv))
			snprintf(sp, sizeof(sp), "%s", "");
		else
			snprintf(sp, sizeof(sp), "; per-call CV %.2f, %.2f, %.2f", l->cv, m->cv, r->cv);
		if (m->confirm != HR_CONFIRM_NONE)
			snprintf(sp + strlen(sp), sizeof(sp) - strlen(sp), "; measured again %.2f GB/s", m->cbw);
		if (inside) {
			char s3[32], s4[32];
			s->dip_inside = 1;
			cfind_add(&s->dip, m->confirm, m->confirm != HR_CONFIRM_NONE && is_dip(m->cbw, m->ce, l, r),
				  "%s %s %.2f GB/s inside an alternation (%.2f of its neighbours' geometric mean, %.2f of its like sizes': %s %.2f and %s %.2f%s)",
				  hr_fmt_bytes(m->bytes, s1, sizeof(s1)), half, m->bw, m->bw / sqrt(x[j - 1].bw * x[j + 1].bw),
				  m->bw / sqrt(l->bw * r->bw),
				  hr_fmt_bytes(l->bytes, s3, sizeof(s3)), l->bw, hr_fmt_bytes(r->bytes, s4, sizeof(s4)), r->bw, sp);
		} else {
			cfind_add(&s->dip, m->confirm, m->confirm != HR_CONFIRM_NONE && is_dip(m->cbw, m->ce, l, r),
				  "%s %s %.2f GB/s (neighbours %.2f and %.2f%s)",
				  hr_fmt_bytes(m->bytes, s1, sizeof(s1)), half, m->bw, l->bw, r->bw, sp);
		}
	}
}

/* A mid-range collapse in half @x (the first of the sweep only): from a size
 * past the latency floor below mid x the plateau, busbw rises by
 * less than 1 + rise over at least span x in size. */
static void curve_collapse(const struct ccell *x, size_t n, const char *half, struct cshape *s)
{
	double plateau = 0;
	size_t j, k;
	char s1[32], s2[32];

	for (j = 0; j < n; j++)
		if (x[j].ok && x[j].bw > plateau)
			plateau = x[j].bw;
	for (j = 0; j < n && !s->col.n; j++) {
		double b0 = x[j].bw, mx = b0;
		size_t end = 0;
		if (!x[j].ok || !x[j].regime || !(b0 < cp.mid * plateau) || !(b0 > 0))
			continue;
		for (k = j + 1; k < n; k++) {
			double b = x[k].bw;
			if (!x[k].ok)
				break;
			if (b > mx)
				mx = b;
			if (mx >= (1 + cp.rise) * b0)
				break;
			if (x[k].bytes >= cp.span * x[j].bytes)
				end = k;
		}
		if (end)
			cfind_add(&s->col, HR_CONFIRM_NONE, 1,
				  "%s busbw flat or falling from %s (%.2f GB/s) to %s (%.2f GB/s), %.0fx the size, while the plateau is %.2f GB/s",
				  half, hr_fmt_bytes(x[j].bytes, s1, sizeof(s1)), b0,
				  hr_fmt_bytes(x[end].bytes, s2, sizeof(s2)), x[end].bw,
				  x[end].bytes / x[j].bytes, plateau);
	}
}

/* Out-of-place / in-place gaps between the halves @oop and @ip: one below
 * gap x the other beyond their spread, the re-measurement of
 * either cell replacing it. */
static void curve_gaps(const struct ccell *oop, const struct ccell *ip, size_t n, struct cshape *s)
{
	size_t j;
	char s1[32];

	for (j = 0; j < n; j++) {
		const struct ccell *o = &oop[j], *p = &ip[j], *lo, *hi;
		int agrees;
		if (!(o->ok || o->noisy) || !(p->ok || p->noisy) || !(o->regime || p->regime))
			continue;
		lo = o->bw < p->bw ? o : p;
		hi = lo == o ? p : o;
		if (!(lo->bw < cp.gap * hi->bw))
			continue;
		if (o->noisy || p->noisy) {
			if (!s->nnoisy++)
				hr_buf_printf(&s->noisy, "an out-of-place/in-place gap at %s on noisy cells (CV %.2f)",
					      hr_fmt_bytes(o->bytes, s1, sizeof(s1)), o->noisy ? o->cv : p->cv);
			continue;
		}
		if (!is_gap(lo->bw, lo->e, hi->bw, hi->e))
			continue;
		/* the re-measurement of either cell replaces it */
		agrees = 1;
		if (lo->confirm != HR_CONFIRM_NONE || hi->confirm != HR_CONFIRM_NONE) {
			double l2 = lo->confirm != HR_CONFIRM_NONE ? lo->cbw : lo->bw;
			double e2 = lo->confirm != HR_CONFIRM_NONE ? lo->ce : lo->e;
			double h2 = hi->confirm != HR_CONFIRM_NONE ? hi->cbw : hi->bw;
			double f2 = hi->confirm != HR_CONFIRM_NONE ? hi->ce : hi->e;
			agrees = l2 < h2 ? is_gap(l2, e2, h2, f2) : is_gap(h2, f2, l2, e2);
		}
		cfind_add(&s->gap, lo->confirm != HR_CONFIRM_NONE || hi->confirm != HR_CONFIRM_NONE ? HR_CONFIRM_AGREED
													: HR_CONFIRM_NONE,
			  agrees, "%s out-of-place %.2f, in-place %.2f GB/s (%.0f%%)",
			  hr_fmt_bytes(o->bytes, s1, sizeof(s1)), o->bw, p->bw, 100 * lo->bw / hi->bw);
	}
}

/* The shape findings of group @i (@g) as its reasons; a finding on noisy
 * cells leaves its shape not judged. */
static void curve_report(struct an *a, size_t i, const struct hr_group *g, const struct cshape *s)
{
	char crit[300], gap_action[600];

	snprintf(crit, sizeof(crit), "a size below both neighbours%s beyond their measured spread and below %.0f%% of their geometric mean, past the latency floor",
		 s->dip_inside ? " (inside an alternation: both like sizes, two steps away)" : "", 100 * cp.dip);
	cfind_report(a, g, "curve_dip", curve_action(g), &s->dip, s->dip.n > 1 ? "busbw dips at" : "busbw dip at", crit);
	snprintf(crit, sizeof(crit), "one below %.0f%% of the other beyond their spread", 100 * cp.gap);
	snprintf(gap_action, sizeof(gap_action), "out-of-place and in-place differ in buffer handling only: %s",
		 curve_action(g));
	cfind_report(a, g, "curve_gap", gap_action, &s->gap, "out-of-place and in-place busbw differ at", crit);
	snprintf(crit, sizeof(crit), "a rise under %.0f%% over at least %.0fx in size, past the latency floor, from below %.0f%% of the plateau",
		 100 * cp.rise, cp.span, 100 * cp.mid);
	cfind_report(a, g, "curve_collapse", curve_action(g), &s->col, "mid-range collapse:", crit);
	if (s->alt.s)
		curve_add(a, g, HR_INFO, "curve_alternation",
			  g->backend && !strcmp(g->backend, "mpi")
				  ? "a regular alternation between neighbouring sizes comes from the protocol or algorithm MPI chooses per size, not from the hardware: compare with one pinned (--mca coll_tuned_use_dynamic_rules 1 --mca coll_tuned_allreduce_algorithm N) if it matters"
				  : "a regular alternation between neighbouring sizes comes from the protocol or algorithm NCCL (or MPI) chooses per size, not from the hardware: compare with NCCL_PROTO / NCCL_ALGO pinned if it matters",
			  s->alt.s);
	if (s->noisy.s) {
		char t[600];
		a->curve[i] = 2;
		snprintf(a->curve_why[i], sizeof(a->curve_why[i]), "%s", s->noisy.s);
		snprintf(t, sizeof(t), "curve shape not judged: noisy measurement (%s)", s->noisy.s);
		curve_add(a, g, HR_INFO, "curve_not_judged", "re-run on an idle node", t);
	}
}

/* The curve shape of group @i: its rows' cells per half, the rules, the
 * reasons. -1 when out of memory. */
static int curve_group(struct an *a, size_t i)
{
	const struct hr_fleet *f = a->f;
	const struct hr_group *g = &f->groups[i];
	struct cshape s = { 0 };
	struct ccell *c[2] = { NULL, NULL };
	struct hr_quality hq;
	size_t f0, n = curve_rows(g, &f0), alt_lo, alt_hi;
	int h;

	if (!n || (hj_group_inst(a, i) && hj_group_inst(a, i)->sup))
		return 0; /* an earlier sweep's shape is history too */
	hr_quality_init(&hq);
	if (a->grp_run[i] >= 0)
		hr_quality_host(&hq, &f->runs[a->grp_run[i]].cond);
	if (hq.noisy) {
		a->curve[i] = 2;
		snprintf(a->curve_why[i], sizeof(a->curve_why[i]), "%s", hq.why);
		return 0;
	}
	c[0] = calloc(n, sizeof(*c[0]));
	c[1] = calloc(n, sizeof(*c[1]));
	if (!c[0] || !c[1]) {
		free(c[0]);
		free(c[1]);
		return -1;
	}
	curve_cells(g, f0, n, 0, c[0]);
	curve_cells(g, f0, n, 1, c[1]);
	a->curve[i] = 1;
	for (h = 0; h < 2; h++) {
		const char *half = h ? "in-place" : "out-of-place";
		curve_alternation(c[h], n, half, &s, &alt_lo, &alt_hi);
		curve_dips(c[h], n, half, alt_lo, alt_hi, &s);
		curve_collapse(c[h], n, half, &s);
	}
	curve_gaps(c[0], c[1], n, &s);
	curve_report(a, i, g, &s);
	cfind_release(&s.dip);
	cfind_release(&s.gap);
	cfind_release(&s.col);
	hr_buf_release(&s.alt);
	hr_buf_release(&s.noisy);
	free(c[0]);
	free(c[1]);
	return 0;
}

/*
 * Curve shape of every latest sweep with rows (docs/health_report.md,
 * "Curve shape"), per half (out-of-place, in-place), on the busbw at the
 * median per-call period where recorded, rows of size 0 dropped: a dip (a
 * size below both neighbours beyond the cells' measured spread and below
 * dip x their geometric mean), an out-of-place / in-place gap
 * (one below gap x the other beyond their spread), a mid-range
 * collapse (from a size past the latency floor below mid x the
 * plateau, busbw rises by less than 1 + rise over at least
 * span x in size), and a regular alternation (busbw up and down by
 * step or more over at least 5 neighbouring sizes, named as such,
 * not as dips; a size inside it is judged for a dip against its like
 * sizes, two steps away, instead of its neighbours). A dip or gap is WARN only when the cell's re-measurement
 * (allreduce_bw's "confirm") agrees, or without one ("not confirmed");
 * "did not reproduce" (info) otherwise. A finding on a noisy cell is not
 * judged; a sweep on a busy host is not judged.
 */
static void curve_reasons(struct an *a)
{
	size_t i;

	curve_params();
	for (i = 0; i < a->f->ngroups; i++)
		if (curve_group(a, i)) {
			a->oom = 1;
			return;
		}
}

const struct hr_family hr_family_curves = {
	"curve shape",
	"each group's busbw per message size (hr_group rows) and the re-measurements",
	curve_reasons,
	NULL,
};
