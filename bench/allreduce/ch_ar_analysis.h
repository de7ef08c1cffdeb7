/*
 * ch_ar_analysis.h - per-rank times, stragglers, slow groups and suspect
 * nodes from allreduce_bw's measurements. Pure functions (no MPI).
 *
 * Per-rank time. In a blocking all-reduce every rank leaves at about the
 * same moment, so the ranks that arrived early spend the difference waiting
 * inside the call, and the rank everyone waits for spends the least time in
 * it. For iteration k and rank r, with period(r,k) the time from the end of
 * the previous call to the end of this one and call(r,k) the time inside the
 * call, the rank's own time is
 *
 *     own(r,k) = period(r,k) - (call(r,k) - min over ranks j of call(j,k))
 *
 * i.e. the period minus the time it waited for later ranks. The rank the
 * others wait for (late to arrive: slow host, injected delay, OS noise) has
 * the largest own time: it is the slowest rank of that iteration.
 */
#ifndef CH_AR_ANALYSIS_H
#define CH_AR_ANALYSIS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A rank is named a straggler when it was the slowest rank of at least
 * this fraction of the rows it took part in (rows of groups of 2 ranks or
 * more), in at least CH_AR_STRAGGLER_MIN_ROWS rows, by a median excess over
 * the other ranks of at least CH_AR_STRAGGLER_MIN_EXCESS_PCT. */
#define CH_AR_STRAGGLER_MIN_FRACTION (2.0 / 3.0)
#define CH_AR_STRAGGLER_MIN_ROWS 3
#define CH_AR_STRAGGLER_MIN_EXCESS_PCT 25.0

/* A group is flagged when its large-message busbw is at least this many
 * percent below the median of the other groups of its kind (and algorithm).
 * 25% below is the 0.75x margin DCGM diag applies to its per-SKU
 * thresholds (REFERENCE.md). */
#define CH_AR_FLAG_BELOW_PCT 25.0

/**
 * ch_ar_own_times - per-iteration own time of one rank (see above).
 * @iter_sec: [in] n iteration periods of this rank.
 * @call_sec: [in] n times inside the call, this rank.
 * @min_call_sec: [in] n per-iteration minima of call_sec over the group.
 * @own_sec: [out] n own times (may alias @iter_sec).
 */
void ch_ar_own_times(const double *iter_sec, const double *call_sec,
		     const double *min_call_sec, int n, double *own_sec);

/**
 * ch_ar_median_excluding - median of @x[0..n-1] without element @skip
 * (leave-one-out reference; @skip < 0 keeps every element).
 * Returns the median, or 0 when no element is left.
 */
double ch_ar_median_excluding(const double *x, int n, int skip);

/**
 * ch_ar_rank_spread - the slowest rank of a row and the spread across ranks.
 * @own_us: [in] n per-rank mean own times (any unit), n >= 1.
 * @slowest: [out] index (0..n-1) of the largest.
 * @spread_pct: [out] (max - min) / median x 100; 0 when the median is 0.
 * @excess_pct: [out] (max - median of the others) / median of the others
 *              x 100; 0 when n < 2 or that median is 0.
 */
void ch_ar_rank_spread(const double *own_us, int n, int *slowest, double *spread_pct,
		       double *excess_pct);

/* One measured row, as the straggler analysis sees it. */
struct ch_ar_rank_row {
	int nranks;          /* ranks in the group */
	const int *ranks;    /* world ranks, nranks entries */
	const double *own_us;/* per-rank mean own times, same order */
};

struct ch_ar_straggler {
	int rank;               /* world rank */
	int rows;               /* rows it took part in (groups of >= 2 ranks) */
	int slowest_rows;       /* rows in which it was the slowest */
	double slowest_fraction;/* slowest_rows / rows */
	double excess_pct;      /* median, over its slowest rows, of the excess over the others' median */
};

/**
 * ch_ar_find_stragglers - ranks that are consistently the slowest.
 * @rows: [in] @nrows rows. @world_size: [in] ranks in the world.
 * @out:  [out] up to @max stragglers, by rank.
 * Returns the number found (may exceed @max), or CH_ERR_RUNTIME when out
 * of memory.
 */
int ch_ar_find_stragglers(const struct ch_ar_rank_row *rows, int nrows, int world_size,
			  struct ch_ar_straggler *out, int max);

/* One sweep's headline number, as the group analysis sees it. */
struct ch_ar_group_bw {
	int kind;             /* enum ch_ar_kind */
	const char *name;     /* "node1", "pair0-1" */
	const char *algo;     /* algorithm label */
	double busbw_gbps;    /* large-message busbw */
	int nnodes;
	const int *nodes;     /* node indices of the group */
};

struct ch_ar_group_flag {
	int index;            /* into the array given to ch_ar_flag_groups() */
	double busbw_gbps;
	double ref_gbps;      /* median of the other groups of the same kind and algorithm */
	double pct_below;     /* (ref - busbw) / ref x 100 */
};

/**
 * ch_ar_flag_groups - node and pair groups well below the others of their
 * kind: busbw at least @below_pct percent under the median of the other
 * groups of the same kind and algorithm (world and scaling groups are never
 * compared). @out: [out] up to @max flags, in input order.
 * Returns the number of flags (may exceed @max).
 */
int ch_ar_flag_groups(const struct ch_ar_group_bw *g, int n, double below_pct,
		      struct ch_ar_group_flag *out, int max);

struct ch_ar_suspect {
	int node;             /* node index */
	char reason[512];     /* "node group node1 is 48% below ...; common to slow pairs pair0-1, pair1-2 (ring)" */
};

/**
 * ch_ar_suspect_nodes - nodes to look at first.
 * A node is a suspect when its own node group is flagged, or when it is in
 * at least two pairs of an algorithm and every one of them is flagged (the
 * node common to the slow pairs). Reasons of several algorithms are joined.
 * @g, @n: [in] every group (as given to ch_ar_flag_groups()).
 * @flags, @nflags: [in] its result.
 * @nnodes: [in] nodes in the world.
 * @out: [out] up to @max suspects, by node.
 * Returns the number of suspects (may exceed @max), CH_ERR_RUNTIME when out
 * of memory.
 */
int ch_ar_suspect_nodes(const struct ch_ar_group_bw *g, int n,
			const struct ch_ar_group_flag *flags, int nflags, int nnodes,
			struct ch_ar_suspect *out, int max);

/*
 * Confirmation (--confirm 1, the default). At the end of each phase of the
 * sweep, every cell (size x out-of-place / in-place, per group and
 * algorithm) that looks like a dip or a gap is measured again and the
 * second measurement recorded beside the first; the reporter decides what
 * to make of it. The criterion is deliberately liberal (a cell measured
 * again for nothing costs a step; a fault accused on one noisy measurement
 * costs a node):
 *   dip: the cell's algbw is below both neighbours' (the sizes before and
 *        after it in the sweep, same placement) and below
 *        CH_AR_CONFIRM_DIP x their geometric mean; the largest size, below
 *        CH_AR_CONFIRM_DIP x its one neighbour;
 *   gap: the lower of the out-of-place and in-place cells of a size is
 *        below CH_AR_CONFIRM_GAP x the higher (more than 15% apart); both
 *        cells are measured again. Only where the two placements measure
 *        the same work: in a group of one rank the in-place all-reduce
 *        moves nothing and the out-of-place one copies the buffer, so their
 *        figures differ by design and are never compared.
 * Each test runs on two figures of the cell, the algbw of the loop time
 * (the table's) and that of the median iteration period (time_us.median);
 * either one flags it. algbw has the shape of busbw (one factor per
 * sweep) and is defined for a group of one rank too. Cells without a
 * positive finite figure (size 0, not measured) are never flagged and are
 * not neighbours.
 */
#define CH_AR_CONFIRM_DIP 0.90
#define CH_AR_CONFIRM_GAP 0.85
#define CH_AR_CONFIRM_WHY_DIP 1u
#define CH_AR_CONFIRM_WHY_GAP 2u
#define CH_AR_CONFIRM_WHY_LARGEST 4u

/**
 * ch_ar_confirm_cells - the cells of one sweep to measure again.
 * @bw:  [in] the algbw figures of @n sizes in ascending order, 4 per size:
 *       bw[s * 4 + place * 2 + fig], place 0 out-of-place, 1 in-place; fig
 *       0 from the loop time, 1 from the median period (any unit; NAN, 0 or
 *       negative: not measured).
 * @group_ranks: [in] ranks in the group measured: the gap test runs only
 *       for more than one (see above).
 * @why: [out] 2 per size (why[s * 2 + place]): 0, or CH_AR_CONFIRM_WHY_DIP
 *       and / or CH_AR_CONFIRM_WHY_GAP.
 * Returns the number of cells flagged (0: no confirmation pass is needed).
 */
int ch_ar_confirm_cells(const double *bw, int n, int group_ranks, unsigned char *why);

/**
 * ch_ar_confirm_largest - mark the largest size of one sweep to measure
 * again, whatever its shape. The largest size's out-of-place busbw is the
 * figure health_report compares with the fleet and the reference; whether
 * it is low against the fleet only the reporter can tell (allreduce_bw sees
 * one node), so allreduce_bw always measures it a second time (one step
 * per sweep) and the reporter holds the second value to the same rules as
 * the first (agreement, docs/health_report.md).
 * @bw:  [in] as for ch_ar_confirm_cells().
 * @n:   [in] sizes.
 * @why: [in, out] as for ch_ar_confirm_cells(): CH_AR_CONFIRM_WHY_LARGEST
 *       is added to each placement of the largest size with a usable figure
 *       (positive and finite, loop time or median period).
 * Returns the number of cells marked that had no other reason (0 or 2).
 */
int ch_ar_confirm_largest(const double *bw, int n, unsigned char *why);

#ifdef __cplusplus
}
#endif
#endif
