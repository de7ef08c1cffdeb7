#include <criterion/criterion.h>
#include <string.h>
#include <math.h>

#include "bench/allreduce/ch_ar_analysis.h"
#include "bench/allreduce/ch_ar_plan.h"

Test(allreduce_analysis, own_times)
{
	/* rank arrived 3 us after the last one left... it waited 5 us more than
	 * the latest rank (call 7 vs min 2): own = period 10 - wait 5 */
	double iter[2] = { 10, 20 }, call[2] = { 7, 4 }, minc[2] = { 2, 4 }, own[2];
	ch_ar_own_times(iter, call, minc, 2, own);
	cr_assert_float_eq(own[0], 5, 0);
	cr_assert_float_eq(own[1], 20, 0);
}

Test(allreduce_analysis, median_excluding)
{
	double x[5] = { 5, 1, 100, 3, 2 };
	cr_assert_float_eq(ch_ar_median_excluding(x, 5, -1), 3, 0);
	cr_assert_float_eq(ch_ar_median_excluding(x, 5, 2), 2.5, 0);
	cr_assert_float_eq(ch_ar_median_excluding(x, 1, 0), 0, 0);
}

Test(allreduce_analysis, rank_spread)
{
	double own[4] = { 10, 11, 30, 9 };
	int s;
	double spread, excess;
	ch_ar_rank_spread(own, 4, &s, &spread, &excess);
	cr_assert_eq(s, 2);
	cr_assert_float_eq(spread, (30.0 - 9) / 10.5 * 100, 1e-9);
	cr_assert_float_eq(excess, (30.0 - 10) / 10 * 100, 1e-9);
	ch_ar_rank_spread(own, 1, &s, &spread, &excess);
	cr_assert_eq(s, 0);
	cr_assert_float_eq(excess, 0, 0);
}

static const int r4[4] = { 0, 1, 2, 3 }, r01[2] = { 0, 1 }, r23[2] = { 2, 3 };

Test(allreduce_analysis, straggler_named)
{
	double world[4] = { 10, 10.5, 40, 10.2 }, n0[2] = { 10, 12 }, n1[2] = { 30, 10 };
	struct ch_ar_rank_row rows[6] = {
		{ 4, r4, world }, { 4, r4, world }, { 4, r4, world },
		{ 2, r01, n0 }, { 2, r23, n1 }, { 2, r23, n1 },
	};
	struct ch_ar_straggler s[4];
	int n = ch_ar_find_stragglers(rows, 6, 4, s, 4);
	cr_assert_eq(n, 1);
	cr_assert_eq(s[0].rank, 2);
	cr_assert_eq(s[0].rows, 5);
	cr_assert_eq(s[0].slowest_rows, 5);
	cr_assert_float_eq(s[0].slowest_fraction, 1.0, 0);
	/* 40 vs the others' median 10.2 in 3 rows, 30 vs 10 in 2: median 292% */
	cr_assert_float_eq(s[0].excess_pct, (40 - 10.2) / 10.2 * 100, 1e-9);
}

Test(allreduce_analysis, no_straggler_when_noise_or_small)
{
	double a[4] = { 10, 10.5, 11, 10.2 }, b[4] = { 12, 10.5, 11, 10.2 }, c[4] = { 10, 13, 11, 10.2 };
	double big[4] = { 10, 10, 50, 10 };
	struct ch_ar_rank_row rows[3] = { { 4, r4, a }, { 4, r4, b }, { 4, r4, c } };
	struct ch_ar_rank_row two[2] = { { 4, r4, big }, { 4, r4, big } };
	struct ch_ar_straggler s[4];
	/* slowest rank changes, and the excess is small */
	cr_assert_eq(ch_ar_find_stragglers(rows, 3, 4, s, 4), 0);
	/* consistent, but fewer rows than CH_AR_STRAGGLER_MIN_ROWS */
	cr_assert_eq(ch_ar_find_stragglers(two, 2, 4, s, 4), 0);
	/* consistent but only a few percent slower */
	a[2] = 11.5;
	rows[1].own_us = a;
	rows[2].own_us = a;
	cr_assert_eq(ch_ar_find_stragglers(rows, 3, 4, s, 4), 0);
}

static const int nodes0[1] = { 0 }, nodes1[1] = { 1 }, nodes2[1] = { 2 };
static const int p01[2] = { 0, 1 }, p02[2] = { 0, 2 }, p12[2] = { 1, 2 }, p03[2] = { 0, 3 }, p13[2] = { 1, 3 }, p23[2] = { 2, 3 };

Test(allreduce_analysis, node_group_flagged_and_suspect)
{
	struct ch_ar_group_bw g[4] = {
		{ CH_AR_KIND_WORLD, "world", "ring", 1.0, 3, NULL },
		{ CH_AR_KIND_NODE, "node0", "ring", 100, 1, nodes0 },
		{ CH_AR_KIND_NODE, "node1", "ring", 60, 1, nodes1 },
		{ CH_AR_KIND_NODE, "node2", "ring", 98, 1, nodes2 },
	};
	struct ch_ar_group_flag f[4];
	struct ch_ar_suspect s[3];
	int nf = ch_ar_flag_groups(g, 4, 25.0, f, 4), ns;
	cr_assert_eq(nf, 1);
	cr_assert_eq(f[0].index, 2);
	cr_assert_float_eq(f[0].ref_gbps, 99, 1e-12); /* median of the others: 98, 100 */
	cr_assert_float_eq(f[0].pct_below, (99.0 - 60) / 99 * 100, 1e-9);
	ns = ch_ar_suspect_nodes(g, 4, f, nf, 3, s, 3);
	cr_assert_eq(ns, 1);
	cr_assert_eq(s[0].node, 1);
	cr_assert_not_null(strstr(s[0].reason, "node group node1"));
}

Test(allreduce_analysis, node_common_to_slow_pairs)
{
	/* 4 nodes, 2 rounds: node 2 is in pair1-2 and pair0-2, both slow */
	struct ch_ar_group_bw g[4] = {
		{ CH_AR_KIND_PAIR, "pair0-3", "ring", 45, 2, p03 },
		{ CH_AR_KIND_PAIR, "pair1-2", "ring", 20, 2, p12 },
		{ CH_AR_KIND_PAIR, "pair1-3", "ring", 46, 2, p13 },
		{ CH_AR_KIND_PAIR, "pair0-2", "ring", 21, 2, p02 },
	};
	struct ch_ar_group_flag f[4];
	struct ch_ar_suspect s[4];
	int nf = ch_ar_flag_groups(g, 4, 25.0, f, 4), ns;
	cr_assert_eq(nf, 2);
	cr_assert_eq(f[0].index, 1);
	cr_assert_eq(f[1].index, 3);
	ns = ch_ar_suspect_nodes(g, 4, f, nf, 4, s, 4);
	cr_assert_eq(ns, 1);
	cr_assert_eq(s[0].node, 2);
	cr_assert_str_eq(s[0].reason, "common to slow pairs pair1-2, pair0-2 (ring)");
}

Test(allreduce_analysis, one_slow_link_names_no_node)
{
	struct ch_ar_group_bw g[4] = {
		{ CH_AR_KIND_PAIR, "pair0-3", "ring", 45, 2, p03 },
		{ CH_AR_KIND_PAIR, "pair1-2", "ring", 20, 2, p12 },
		{ CH_AR_KIND_PAIR, "pair1-3", "ring", 46, 2, p13 },
		{ CH_AR_KIND_PAIR, "pair0-2", "ring", 44, 2, p02 },
	};
	struct ch_ar_group_flag f[4];
	struct ch_ar_suspect s[4];
	int nf = ch_ar_flag_groups(g, 4, 25.0, f, 4);
	cr_assert_eq(nf, 1);
	cr_assert_eq(ch_ar_suspect_nodes(g, 4, f, nf, 4, s, 4), 0);
}

Test(allreduce_analysis, algorithms_and_kinds_compared_separately)
{
	struct ch_ar_group_bw g[5] = {
		{ CH_AR_KIND_NODE, "node0", "ring", 100, 1, nodes0 },
		{ CH_AR_KIND_NODE, "node1", "ring", 100, 1, nodes1 },
		{ CH_AR_KIND_NODE, "node0", "tree", 10, 1, nodes0 },
		{ CH_AR_KIND_NODE, "node1", "tree", 10, 1, nodes1 },
		{ CH_AR_KIND_PAIR, "pair0-1", "ring", 5, 2, p01 },
	};
	struct ch_ar_group_flag f[5];
	/* tree is slower than ring everywhere: nothing flagged; one pair: no reference */
	cr_assert_eq(ch_ar_flag_groups(g, 5, 25.0, f, 5), 0);
	(void)p23;
}

/* bw[s * 4 + place * 2 + fig]: the same value in both placements and figures */
static void fill(double *bw, const double *v, int n)
{
	int s, k;
	for (s = 0; s < n; s++)
		for (k = 0; k < 4; k++)
			bw[s * 4 + k] = v[s];
}

Test(allreduce_analysis, confirm_dip_below_both_neighbours)
{
	/* the cell: 2.06 GB/s between 3.46 and 2.20 (6% below the
	 * lower one, 25% below their geometric mean 2.76) */
	double v[] = { 1.0, 2.0, 3.46, 2.06, 2.20, 2.30 }, bw[6 * 4];
	unsigned char why[12];

	fill(bw, v, 6);
	cr_assert_eq(ch_ar_confirm_cells(bw, 6, 2, why), 2);
	cr_assert_eq(why[3 * 2], CH_AR_CONFIRM_WHY_DIP);
	cr_assert_eq(why[3 * 2 + 1], CH_AR_CONFIRM_WHY_DIP);
	/* 5% below two equal neighbours is not a dip; 11% is */
	{
		double w[] = { 2.0, 1.90, 2.0 }, x[] = { 2.0, 1.78, 2.0 }, b[12];
		unsigned char y[6];
		fill(b, w, 3);
		cr_assert_eq(ch_ar_confirm_cells(b, 3, 2, y), 0);
		fill(b, x, 3);
		cr_assert_eq(ch_ar_confirm_cells(b, 3, 2, y), 2);
		cr_assert_eq(y[2], CH_AR_CONFIRM_WHY_DIP);
	}
}

Test(allreduce_analysis, confirm_rising_curve_and_last_size)
{
	/* a healthy rising curve: nothing; the largest size 15% below the one
	 * before: a drop at the end */
	double v[] = { 0.01, 0.08, 0.6, 3.0, 9.0, 9.5 }, bw[6 * 4];
	unsigned char why[12];

	fill(bw, v, 6);
	cr_assert_eq(ch_ar_confirm_cells(bw, 6, 2, why), 0);
	v[5] = 9.0 * 0.85;
	fill(bw, v, 6);
	cr_assert_eq(ch_ar_confirm_cells(bw, 6, 2, why), 2);
	cr_assert_eq(why[5 * 2], CH_AR_CONFIRM_WHY_DIP);
	/* the smallest size below its one neighbour is the normal start of a curve */
	cr_assert_eq(why[0], 0);
}

Test(allreduce_analysis, confirm_gap_between_placements)
{
	double v[] = { 4.0, 4.0, 4.0 }, bw[12];
	unsigned char why[6];

	fill(bw, v, 3);
	bw[1 * 4 + 2] = bw[1 * 4 + 3] = 4.0 * 0.84; /* in-place 16% below out-of-place */
	cr_assert_eq(ch_ar_confirm_cells(bw, 3, 2, why), 2);
	/* both cells of the size; the in-place one is a dip of its own too */
	cr_assert_eq(why[2], CH_AR_CONFIRM_WHY_GAP);
	cr_assert_eq(why[3], CH_AR_CONFIRM_WHY_GAP | CH_AR_CONFIRM_WHY_DIP);
	bw[1 * 4 + 2] = bw[1 * 4 + 3] = 4.0 * 0.90; /* 10% apart: not a gap, not a dip (10% = the limit) */
	cr_assert_eq(ch_ar_confirm_cells(bw, 3, 2, why), 0);
}

/* a group of one rank: in-place moves nothing, out-of-place copies the
 * buffer, so every size's two placements differ by design; no gap is
 * flagged and a smooth sweep needs no confirmation at all */
Test(allreduce_analysis, confirm_no_gap_in_a_group_of_one_rank)
{
	double v[] = { 1.0, 2.0, 4.0, 8.0 }, bw[16];
	unsigned char why[8];
	int s;

	fill(bw, v, 4);
	for (s = 0; s < 4; s++)
		bw[s * 4 + 2] = bw[s * 4 + 3] = 5.0 * v[s]; /* in-place 5x faster everywhere */
	cr_assert_eq(ch_ar_confirm_cells(bw, 4, 2, why), 8, "two ranks: every size a gap");
	cr_assert_eq(ch_ar_confirm_cells(bw, 4, 1, why), 0, "one rank: nothing to confirm");
	/* a dip is still a dip in a group of one */
	bw[2 * 4 + 0] = bw[2 * 4 + 1] = 1.0;
	cr_assert_eq(ch_ar_confirm_cells(bw, 4, 1, why), 1);
	cr_assert_eq(why[2 * 2], CH_AR_CONFIRM_WHY_DIP);
}

Test(allreduce_analysis, confirm_on_either_figure)
{
	/* the loop time is smooth, the median period dips (one figure suffices) */
	double v[] = { 4.0, 4.0, 4.0 }, bw[12];
	unsigned char why[6];

	fill(bw, v, 3);
	bw[1 * 4 + 1] = 2.0; /* out-of-place, median period */
	cr_assert_eq(ch_ar_confirm_cells(bw, 3, 2, why), 2);
	cr_assert_eq(why[2], CH_AR_CONFIRM_WHY_DIP | CH_AR_CONFIRM_WHY_GAP);
	cr_assert_eq(why[3], CH_AR_CONFIRM_WHY_GAP);
}

Test(allreduce_analysis, confirm_skips_unmeasured_cells)
{
	/* a size of 0 bytes (busbw 0) and a NAN are neither flagged nor
	 * neighbours: the dip at index 3 is judged against 4.0 and 4.0 */
	double v[] = { 0.0, 4.0, NAN, 2.0, 4.0 }, bw[20];
	unsigned char why[10];

	fill(bw, v, 5);
	cr_assert_eq(ch_ar_confirm_cells(bw, 5, 2, why), 2);
	cr_assert_eq(why[0], 0);
	cr_assert_eq(why[4], 0);
	cr_assert_eq(why[6], CH_AR_CONFIRM_WHY_DIP);
	cr_assert_eq(ch_ar_confirm_cells(bw, 0, 2, why), 0);
}

/* the largest size is measured again whatever the curve's shape (the figure
 * the reporter compares with the fleet); sizes without a figure are skipped,
 * a cell already flagged keeps its reason and is not counted twice */
Test(allreduce_analysis, confirm_largest_always)
{
	double v[] = { 0.01, 0.08, 0.6, 3.0, 9.0, 9.5 }, bw[6 * 4];
	unsigned char why[12];

	fill(bw, v, 6);
	cr_assert_eq(ch_ar_confirm_cells(bw, 6, 2, why), 0);
	cr_assert_eq(ch_ar_confirm_largest(bw, 6, why), 2);
	cr_assert_eq(why[5 * 2], CH_AR_CONFIRM_WHY_LARGEST);
	cr_assert_eq(why[5 * 2 + 1], CH_AR_CONFIRM_WHY_LARGEST);
	cr_assert_eq(why[4 * 2], 0);
	/* the largest size not measured (NAN, 0): the one before it */
	bw[5 * 4 + 0] = bw[5 * 4 + 1] = NAN;
	bw[5 * 4 + 2] = bw[5 * 4 + 3] = 0;
	cr_assert_eq(ch_ar_confirm_cells(bw, 6, 2, why), 0);
	cr_assert_eq(ch_ar_confirm_largest(bw, 6, why), 2);
	cr_assert_eq(why[5 * 2], 0);
	cr_assert_eq(why[4 * 2], CH_AR_CONFIRM_WHY_LARGEST);
	/* a drop at the end: a dip and the largest size, counted once */
	v[5] = 9.0 * 0.85;
	fill(bw, v, 6);
	cr_assert_eq(ch_ar_confirm_cells(bw, 6, 2, why), 2);
	cr_assert_eq(ch_ar_confirm_largest(bw, 6, why), 0);
	cr_assert_eq(why[5 * 2], CH_AR_CONFIRM_WHY_DIP | CH_AR_CONFIRM_WHY_LARGEST);
	/* nothing measured at all: nothing marked */
	for (int i = 0; i < 24; i++)
		bw[i] = NAN;
	memset(why, 0, sizeof(why));
	cr_assert_eq(ch_ar_confirm_largest(bw, 6, why), 0);
	cr_assert_eq(why[5 * 2], 0);
}
