#include "bench/allreduce/ch_ar_analysis.h"
#include "bench/allreduce/ch_ar_plan.h"
#include "base/ch_common.h"
#include "base/ch_stats.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ch_ar_own_times(const double *iter_sec, const double *call_sec,
		     const double *min_call_sec, int n, double *own_sec)
{
	int k;
	for (k = 0; k < n; k++) {
		double wait = call_sec[k] - min_call_sec[k];
		own_sec[k] = iter_sec[k] - (wait > 0 ? wait : 0);
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double ch_ar_median_excluding(const double *x, int n, int skip)
{
	double *s, m;
	int i, k = 0;

	if (n <= 0 || (n == 1 && skip == 0))
		return 0.0;
	s = malloc((size_t)n * sizeof(*s));
	if (!s)
		return 0.0;
	for (i = 0; i < n; i++)
		if (i != skip)
			s[k++] = x[i];
	qsort(s, (size_t)k, sizeof(*s), cmp_double);
	m = ch_percentile_sorted(s, (size_t)k, 50.0);
	free(s);
	return m;
}

void ch_ar_rank_spread(const double *own_us, int n, int *slowest, double *spread_pct,
		       double *excess_pct)
{
	double mx = own_us[0], mn = own_us[0], med, others;
	int i, s = 0;

	for (i = 1; i < n; i++) {
		if (own_us[i] > mx) {
			mx = own_us[i];
			s = i;
		}
		if (own_us[i] < mn)
			mn = own_us[i];
	}
	*slowest = s;
	med = ch_ar_median_excluding(own_us, n, -1);
	*spread_pct = med > 0 ? (mx - mn) / med * 100.0 : 0.0;
	others = n >= 2 ? ch_ar_median_excluding(own_us, n, s) : 0.0;
	*excess_pct = others > 0 ? (mx - others) / others * 100.0 : 0.0;
}

int ch_ar_find_stragglers(const struct ch_ar_rank_row *rows, int nrows, int world_size,
			  struct ch_ar_straggler *out, int max)
{
	int *part = calloc((size_t)world_size, sizeof(int));
	int *slow = calloc((size_t)world_size, sizeof(int));
	double *exc = malloc((size_t)(nrows > 0 ? nrows : 1) * sizeof(double));
	int i, r, nfound = 0;

	if (!part || !slow || !exc) {
		free(part);
		free(slow);
		free(exc);
		return CH_ERR_RUNTIME;
	}
	for (i = 0; i < nrows; i++) {
		int s;
		double spread, excess;
		if (rows[i].nranks < 2)
			continue;
		for (r = 0; r < rows[i].nranks; r++)
			if (rows[i].ranks[r] >= 0 && rows[i].ranks[r] < world_size)
				part[rows[i].ranks[r]]++;
		ch_ar_rank_spread(rows[i].own_us, rows[i].nranks, &s, &spread, &excess);
		if (rows[i].ranks[s] >= 0 && rows[i].ranks[s] < world_size)
			slow[rows[i].ranks[s]]++;
	}
	for (r = 0; r < world_size; r++) {
		double frac, med;
		int k = 0;
		if (part[r] < CH_AR_STRAGGLER_MIN_ROWS || slow[r] == 0)
			continue;
		frac = (double)slow[r] / (double)part[r];
		if (frac < CH_AR_STRAGGLER_MIN_FRACTION)
			continue;
		/* median excess over the rows where r was the slowest */
		for (i = 0; i < nrows; i++) {
			int s;
			double spread, excess;
			if (rows[i].nranks < 2)
				continue;
			ch_ar_rank_spread(rows[i].own_us, rows[i].nranks, &s, &spread, &excess);
			if (rows[i].ranks[s] == r)
				exc[k++] = excess;
		}
		med = ch_ar_median_excluding(exc, k, -1);
		if (med < CH_AR_STRAGGLER_MIN_EXCESS_PCT)
			continue;
		if (nfound < max) {
			out[nfound].rank = r;
			out[nfound].rows = part[r];
			out[nfound].slowest_rows = slow[r];
			out[nfound].slowest_fraction = frac;
			out[nfound].excess_pct = med;
		}
		nfound++;
	}
	free(part);
	free(slow);
	free(exc);
	return nfound;
}

int ch_ar_flag_groups(const struct ch_ar_group_bw *g, int n, double below_pct,
		      struct ch_ar_group_flag *out, int max)
{
	double *others = malloc((size_t)(n > 0 ? n : 1) * sizeof(double));
	int i, j, nflags = 0;

	if (!others)
		return 0;
	for (i = 0; i < n; i++) {
		int k = 0;
		double ref, pct;
		if (g[i].kind != CH_AR_KIND_NODE && g[i].kind != CH_AR_KIND_PAIR)
			continue;
		for (j = 0; j < n; j++)
			if (j != i && g[j].kind == g[i].kind && !strcmp(g[j].algo, g[i].algo))
				others[k++] = g[j].busbw_gbps;
		if (k == 0)
			continue;
		ref = ch_ar_median_excluding(others, k, -1);
		if (!(ref > 0))
			continue;
		pct = (ref - g[i].busbw_gbps) / ref * 100.0;
		if (pct < below_pct)
			continue;
		if (nflags < max) {
			out[nflags].index = i;
			out[nflags].busbw_gbps = g[i].busbw_gbps;
			out[nflags].ref_gbps = ref;
			out[nflags].pct_below = pct;
		}
		nflags++;
	}
	free(others);
	return nflags;
}

static int is_flagged(const struct ch_ar_group_flag *flags, int nflags, int index)
{
	int i;
	for (i = 0; i < nflags; i++)
		if (flags[i].index == index)
			return i;
	return -1;
}

static int has_node(const struct ch_ar_group_bw *g, int node)
{
	int i;
	for (i = 0; i < g->nnodes; i++)
		if (g->nodes[i] == node)
			return 1;
	return 0;
}

/* Append @sep (when @dst is not empty) and @text, truncating at @n - 1. */
static void append(char *dst, size_t n, const char *sep, const char *text)
{
	size_t len = strlen(dst);
	if (len)
		strncat(dst, sep, n - 1 - len);
	len = strlen(dst);
	strncat(dst, text, n - 1 - len);
}

int ch_ar_suspect_nodes(const struct ch_ar_group_bw *g, int n,
			const struct ch_ar_group_flag *flags, int nflags, int nnodes,
			struct ch_ar_suspect *out, int max)
{
	int node, i, j, nsus = 0;
	char reason[512], part[512], list[400];

	for (node = 0; node < nnodes; node++) {
		reason[0] = '\0';
		/* its own node group is flagged */
		for (i = 0; i < n; i++) {
			int f;
			if (g[i].kind != CH_AR_KIND_NODE || !has_node(&g[i], node))
				continue;
			if ((f = is_flagged(flags, nflags, i)) < 0)
				continue;
			snprintf(part, sizeof(part), "node group %s is %.0f%% below the median of the other node groups (%s)",
				 g[i].name, flags[f].pct_below, g[i].algo);
			append(reason, sizeof(reason), "; ", part);
		}
		/* every pair it is in, for some algorithm, is flagged (at least two) */
		for (i = 0; i < n; i++) {
			int total = 0, slow = 0, seen = 0;
			if (g[i].kind != CH_AR_KIND_PAIR || !has_node(&g[i], node))
				continue;
			for (j = 0; j < i; j++) /* first pair of this algorithm with this node */
				if (g[j].kind == CH_AR_KIND_PAIR && has_node(&g[j], node) &&
				    !strcmp(g[j].algo, g[i].algo))
					seen = 1;
			if (seen)
				continue;
			list[0] = '\0';
			for (j = 0; j < n; j++) {
				if (g[j].kind != CH_AR_KIND_PAIR || !has_node(&g[j], node) ||
				    strcmp(g[j].algo, g[i].algo))
					continue;
				total++;
				if (is_flagged(flags, nflags, j) >= 0) {
					slow++;
					append(list, sizeof(list), ", ", g[j].name);
				}
			}
			if (total >= 2 && slow == total) {
				snprintf(part, sizeof(part), "common to slow pairs %s (%s)", list, g[i].algo);
				append(reason, sizeof(reason), "; ", part);
			}
		}
		if (!reason[0])
			continue;
		if (nsus < max) {
			out[nsus].node = node;
			snprintf(out[nsus].reason, sizeof(out[nsus].reason), "%s", reason);
		}
		nsus++;
	}
	return nsus;
}

/* ------------------------------------------------------------ confirmation */

static int usable(double v)
{
	return isfinite(v) && v > 0;
}

int ch_ar_confirm_cells(const double *bw, int n, int group_ranks, unsigned char *why)
{
	int s, p, f, count = 0;

	memset(why, 0, (size_t)(n > 0 ? n : 0) * 2);
	for (s = 0; s < n; s++) {
		for (p = 0; p < 2; p++)
			for (f = 0; f < 2; f++) {
				double v = bw[s * 4 + p * 2 + f], lo = NAN, hi = NAN;
				int k;
				if (!usable(v))
					continue;
				for (k = s - 1; k >= 0 && !usable(bw[k * 4 + p * 2 + f]); k--)
					;
				if (k >= 0)
					lo = bw[k * 4 + p * 2 + f];
				for (k = s + 1; k < n && !usable(bw[k * 4 + p * 2 + f]); k++)
					;
				if (k < n)
					hi = bw[k * 4 + p * 2 + f];
				if (isfinite(lo) && isfinite(hi)) {
					if (v < lo && v < hi && v < CH_AR_CONFIRM_DIP * sqrt(lo * hi))
						why[s * 2 + p] |= CH_AR_CONFIRM_WHY_DIP;
				} else if (isfinite(lo) && !isfinite(hi)) {
					/* the largest size: a drop at the end of the sweep */
					if (v < CH_AR_CONFIRM_DIP * lo)
						why[s * 2 + p] |= CH_AR_CONFIRM_WHY_DIP;
				}
			}
		for (f = 0; f < 2 && group_ranks > 1; f++) {
			double a = bw[s * 4 + f], b = bw[s * 4 + 2 + f];
			if (usable(a) && usable(b) && (a < b ? a < CH_AR_CONFIRM_GAP * b : b < CH_AR_CONFIRM_GAP * a)) {
				why[s * 2] |= CH_AR_CONFIRM_WHY_GAP;
				why[s * 2 + 1] |= CH_AR_CONFIRM_WHY_GAP;
			}
		}
		count += (why[s * 2] != 0) + (why[s * 2 + 1] != 0);
	}
	return count;
}

int ch_ar_confirm_largest(const double *bw, int n, unsigned char *why)
{
	int s, p, count = 0;

	for (s = n - 1; s >= 0; s--) {
		int any = 0;
		for (p = 0; p < 4; p++)
			any |= usable(bw[s * 4 + p]);
		if (!any)
			continue;
		for (p = 0; p < 2; p++)
			if (usable(bw[s * 4 + p * 2]) || usable(bw[s * 4 + p * 2 + 1])) {
				count += why[s * 2 + p] == 0;
				why[s * 2 + p] |= CH_AR_CONFIRM_WHY_LARGEST;
			}
		break;
	}
	return count;
}
