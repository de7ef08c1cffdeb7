#include <criterion/criterion.h>
#include <string.h>

#include "bench/allreduce/ch_ar_plan.h"
#include "base/ch_common.h"

static int pair_count_of(int (*pairs)[2], int n, int node)
{
	int i, k = 0;
	for (i = 0; i < n; i++)
		k += pairs[i][0] == node || pairs[i][1] == node;
	return k;
}

Test(allreduce_plan, pair_rounds_known_answer_four_nodes)
{
	int pairs[16][2], round[16];
	int n = ch_ar_pair_rounds(4, pairs, round, 16);
	/* circle method: round 0 {0,3} {1,2}; round 1 {1,3} {0,2} */
	cr_assert_eq(n, 4);
	cr_assert(pairs[0][0] == 0 && pairs[0][1] == 3 && round[0] == 0);
	cr_assert(pairs[1][0] == 1 && pairs[1][1] == 2 && round[1] == 0);
	cr_assert(pairs[2][0] == 1 && pairs[2][1] == 3 && round[2] == 1);
	cr_assert(pairs[3][0] == 0 && pairs[3][1] == 2 && round[3] == 1);
}

Test(allreduce_plan, every_node_in_two_pairs_and_rounds_disjoint)
{
	int nn, i, j;
	for (nn = 3; nn <= 33; nn++) {
		int pairs[64][2], round[64];
		int n = ch_ar_pair_rounds(nn, pairs, round, 64);
		cr_assert_leq(n, 64);
		for (i = 0; i < nn; i++)
			cr_assert_geq(pair_count_of(pairs, n, i), 2, "N=%d node %d", nn, i);
		for (i = 0; i < n; i++) {
			cr_assert_lt(pairs[i][0], pairs[i][1]);
			cr_assert_lt(pairs[i][1], nn);
			for (j = 0; j < i; j++) {
				cr_assert(!(pairs[i][0] == pairs[j][0] && pairs[i][1] == pairs[j][1]), "pair repeated");
				if (round[i] == round[j])
					cr_assert(pairs[i][0] != pairs[j][0] && pairs[i][0] != pairs[j][1] &&
						  pairs[i][1] != pairs[j][0] && pairs[i][1] != pairs[j][1],
						  "N=%d: a node twice in round %d", nn, round[i]);
			}
		}
		if (nn % 2 == 0)
			for (i = 0; i < nn; i++)
				cr_assert_eq(pair_count_of(pairs, n, i), 2);
	}
}

Test(allreduce_plan, pair_rounds_small)
{
	int pairs[4][2];
	cr_assert_eq(ch_ar_pair_rounds(1, pairs, NULL, 4), 0);
	cr_assert_eq(ch_ar_pair_rounds(2, pairs, NULL, 4), 1);
	cr_assert(pairs[0][0] == 0 && pairs[0][1] == 1);
	cr_assert_eq(ch_ar_pair_rounds(3, pairs, NULL, 4), 3);
	cr_assert_eq(ch_ar_pair_rounds(8, NULL, NULL, 0), 8); /* counting only */
}

Test(allreduce_plan, scaling_points)
{
	int p[4], n;
	n = ch_ar_scaling_points(4, 0, p);
	cr_assert_eq(n, 2);
	cr_assert(p[0] == 2 && p[1] == 4);
	n = ch_ar_scaling_points(64, 8, p);
	cr_assert_eq(n, 4);
	cr_assert(p[0] == 8 && p[1] == 16 && p[2] == 32 && p[3] == 64);
	/* 12 ranks, 4 per node: 1 dropped, 3 (< a node), 6 -> 4 (whole node), 12 */
	n = ch_ar_scaling_points(12, 4, p);
	cr_assert_eq(n, 3);
	cr_assert(p[0] == 3 && p[1] == 4 && p[2] == 12);
	cr_assert_eq(ch_ar_scaling_points(1, 0, p), 0);
}

Test(allreduce_plan, four_ranks_two_per_node)
{
	int node_of[4] = { 0, 0, 1, 1 };
	struct ch_ar_plan p;
	cr_assert_eq(ch_ar_plan_build(node_of, 4, CH_AR_GROUPS_WORLD | CH_AR_GROUPS_NODE | CH_AR_GROUPS_PAIRS, 0, &p), 0);
	cr_assert_eq(p.nnodes, 2);
	cr_assert_eq(p.nphases, 3);
	cr_assert_eq(p.phases[0].kind, CH_AR_KIND_WORLD);
	cr_assert_eq(p.phases[0].ngroups, 1);
	cr_assert_eq(p.phases[0].groups[0].nranks, 4);
	cr_assert_eq(p.phases[1].kind, CH_AR_KIND_NODE);
	cr_assert_eq(p.phases[1].ngroups, 2);
	cr_assert_str_eq(p.phases[1].groups[0].name, "node0");
	cr_assert_str_eq(p.phases[1].groups[1].name, "node1");
	cr_assert(p.phases[1].groups[1].ranks[0] == 2 && p.phases[1].groups[1].ranks[1] == 3);
	cr_assert_eq(p.phases[2].kind, CH_AR_KIND_PAIR);
	cr_assert_eq(p.phases[2].ngroups, 1);
	cr_assert_str_eq(p.phases[2].groups[0].name, "pair0-1");
	cr_assert_eq(p.phases[2].groups[0].nranks, 4);
	cr_assert_eq(p.phases[2].groups[0].nnodes, 2);
	cr_assert_eq(ch_ar_phase_group_of(&p.phases[1], 3), 1);
	cr_assert_eq(ch_ar_phase_group_of(&p.phases[1], 0), 0);
	cr_assert_eq(p.nnotes, 1); /* two nodes: one pair */
	ch_ar_plan_release(&p);
	ch_ar_plan_release(&p);
}

Test(allreduce_plan, pairs_of_single_rank_nodes_in_rounds)
{
	int node_of[4] = { 0, 1, 2, 3 };
	struct ch_ar_plan p;
	cr_assert_eq(ch_ar_plan_build(node_of, 4, CH_AR_GROUPS_NODE | CH_AR_GROUPS_PAIRS, 0, &p), 0);
	/* node groups of one rank are not measured; pairs in 2 rounds of 2 */
	cr_assert_eq(p.nphases, 2);
	cr_assert_eq(p.phases[0].kind, CH_AR_KIND_PAIR);
	cr_assert_eq(p.phases[0].ngroups, 2);
	cr_assert_str_eq(p.phases[0].groups[0].name, "pair0-3");
	cr_assert_str_eq(p.phases[0].groups[1].name, "pair1-2");
	cr_assert_str_eq(p.phases[1].groups[0].name, "pair1-3");
	cr_assert_str_eq(p.phases[1].groups[1].name, "pair0-2");
	cr_assert_eq(ch_ar_phase_group_of(&p.phases[1], 2), 1);
	cr_assert_geq(p.nnotes, 1);
	cr_assert_not_null(strstr(p.notes[0], "single rank"));
	ch_ar_plan_release(&p);
}

Test(allreduce_plan, scaling_groups_follow_node_order)
{
	/* round-robin placement: ranks 0,2,4,6 on node 0 and 1,3,5,7 on node 1 */
	int node_of[8] = { 0, 1, 0, 1, 0, 1, 0, 1 };
	struct ch_ar_plan p;
	cr_assert_eq(ch_ar_plan_build(node_of, 8, 0, 1, &p), 0);
	cr_assert_eq(p.nphases, 3); /* 2, 4 (a whole node), 8 */
	cr_assert_str_eq(p.phases[0].groups[0].name, "scale2");
	cr_assert(p.phases[0].groups[0].ranks[0] == 0 && p.phases[0].groups[0].ranks[1] == 2);
	cr_assert_str_eq(p.phases[1].groups[0].name, "scale4");
	cr_assert_eq(p.phases[1].groups[0].nnodes, 1);
	cr_assert_eq(p.phases[1].groups[0].ranks[3], 6);
	cr_assert_eq(p.phases[2].groups[0].nranks, 8);
	cr_assert_eq(p.phases[2].kind, CH_AR_KIND_SCALING);
	ch_ar_plan_release(&p);
}

Test(allreduce_plan, single_rank_world)
{
	int node_of[1] = { 0 };
	struct ch_ar_plan p;
	cr_assert_eq(ch_ar_plan_build(node_of, 1, CH_AR_GROUPS_WORLD | CH_AR_GROUPS_NODE | CH_AR_GROUPS_PAIRS, 1, &p), 0);
	cr_assert_eq(p.nphases, 1);
	cr_assert_eq(p.phases[0].groups[0].nranks, 1);
	cr_assert_eq(p.nnotes, 4);
	/* first: a world of one is a copy, not a collective */
	cr_assert_str_eq(p.notes[0], CH_AR_NOTE_WORLD_OF_ONE);
	cr_assert_lt(strlen(CH_AR_NOTE_WORLD_OF_ONE), sizeof(p.notes[0]));
	ch_ar_plan_release(&p);
	/* two ranks: no such note */
	int two[2] = { 0, 0 };
	cr_assert_eq(ch_ar_plan_build(two, 2, CH_AR_GROUPS_WORLD, 0, &p), 0);
	cr_assert_eq(p.nnotes, 0);
	ch_ar_plan_release(&p);
}

Test(allreduce_plan, bad_node_numbering)
{
	int gap[3] = { 0, 2, 2 }, neg[2] = { 0, -1 };
	struct ch_ar_plan p;
	cr_assert_eq(ch_ar_plan_build(gap, 3, CH_AR_GROUPS_WORLD, 0, &p), CH_ERR_USAGE);
	cr_assert_eq(ch_ar_plan_build(neg, 2, CH_AR_GROUPS_WORLD, 0, &p), CH_ERR_USAGE);
	cr_assert_eq(ch_ar_plan_build(neg, 0, CH_AR_GROUPS_WORLD, 0, &p), CH_ERR_USAGE);
}

Test(allreduce_plan, sizes_carry_count_and_whole_element_bytes)
{
	int node_of[2] = { 0, 0 };
	uint64_t req[3] = { 8, 1026, 4096 };
	struct ch_ar_plan p;
	cr_assert_eq(ch_ar_plan_build(node_of, 2, CH_AR_GROUPS_WORLD, 0, &p), 0);
	cr_assert_eq(ch_ar_plan_set_sizes(&p, req, 3, 4), 0);
	cr_assert_eq(p.nsizes, 3);
	cr_assert_eq(p.sizes[0].count, 2);
	cr_assert_eq(p.sizes[0].bytes, 8);
	cr_assert_eq(p.sizes[1].count, 256); /* 1026 / 4: whole elements only */
	cr_assert_eq(p.sizes[1].bytes, 1024);
	cr_assert_eq(p.sizes[2].count, 1024);
	cr_assert_eq(p.sizes[2].bytes, 4096);
	cr_assert_eq(ch_ar_plan_set_sizes(&p, req, 1, 0), CH_ERR_USAGE);
	cr_assert_eq(ch_ar_plan_set_sizes(&p, NULL, 1, 4), CH_ERR_USAGE);
	cr_assert_eq(ch_ar_plan_set_sizes(&p, req, -1, 4), CH_ERR_USAGE);
	ch_ar_plan_release(&p);
	cr_assert_null(p.sizes);
	cr_assert_eq(p.nsizes, 0);
	ch_ar_plan_release(&p);
}
