/*
 * ch_ar_plan.h - which sub-communicators allreduce_bw measures, and when.
 *
 * A plan is a list of phases; the groups of one phase are disjoint sets of
 * world ranks measured concurrently (each on its own communicator), so one
 * launch covers every node alone, node pairs and the whole world:
 *
 *   world    one group of every rank
 *   node     one group per node (ranks sharing memory, or --node-size K
 *            consecutive ranks), all nodes at once: the intra-node fabric
 *   pair     node pairs, in rounds of disjoint pairs (round-robin "circle"
 *            schedule), enough rounds that every node is in at least two
 *            pairs when there are 3 nodes or more: the inter-node links
 *   scaling  the first n/8, n/4, n/2 and n ranks in node order, whole nodes
 *            where possible: points for fitting the ring model
 *
 * Pure functions: no MPI, so they are unit-tested directly.
 */
#ifndef CH_AR_PLAN_H
#define CH_AR_PLAN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

enum ch_ar_kind { CH_AR_KIND_WORLD, CH_AR_KIND_NODE, CH_AR_KIND_PAIR, CH_AR_KIND_SCALING, CH_AR_KIND_COUNT };

/* "world", "node", "pair", "scaling" (the JSON group_kind), NULL-terminated. */
extern const char *const ch_ar_kind_names[CH_AR_KIND_COUNT + 1];

/* --groups values and their bits. */
#define CH_AR_GROUPS_WORLD 1u
#define CH_AR_GROUPS_NODE 2u
#define CH_AR_GROUPS_PAIRS 4u
extern const char *const ch_ar_groups_names[]; /* "world", "node", "pairs", NULL */

struct ch_ar_group {
	int kind;        /* enum ch_ar_kind */
	char name[40];   /* "world", "node1", "pair0-2", "scale4" */
	int nranks;
	int *ranks;      /* world ranks, ascending (owned by the plan) */
	int nnodes;
	int *nodes;      /* node indices, ascending (owned by the plan) */
};

struct ch_ar_phase {
	int kind;        /* enum ch_ar_kind of every group in the phase */
	int ngroups;
	struct ch_ar_group *groups;
};

/* The note of a world of one rank: NCCL and MPI turn a one-rank all-reduce
 * into a local copy (NCCL without launching a collective kernel), so the
 * algorithms are the same call and nothing is reduced or sent. */
#define CH_AR_NOTE_WORLD_OF_ONE \
	"a world of one: the all-reduce is a local copy, every algorithm the same call, " \
	"nothing reduced; this checks setup, copy and check, not a collective"

/* One message size of the sweep: the element count of a call and the bytes it
 * reduces (count x element size, the requested size rounded down to whole
 * elements), computed once by ch_ar_plan_set_sizes(). */
struct ch_ar_size {
	size_t count;     /* elements per call */
	uint64_t bytes;   /* count x element size, bytes */
};

#define CH_AR_PLAN_MAX_NOTES 4
struct ch_ar_plan {
	int nranks;
	int nnodes;
	int nphases;
	struct ch_ar_phase *phases;
	int nnotes;
	char notes[CH_AR_PLAN_MAX_NOTES][160]; /* what was skipped and why */
	int nsizes;
	struct ch_ar_size *sizes;  /* ascending (owned by the plan), NULL before ch_ar_plan_set_sizes() */
};

/**
 * ch_ar_plan_build - the phases for a run.
 * @node_of: [in] @nranks node indices, node_of[r] for world rank r; nodes
 *           are numbered 0..N-1 without gaps.
 * @groups:  [in] CH_AR_GROUPS_* bits (--groups).
 * @scaling: [in] non-zero to add the scaling points (--scaling).
 * @out:     [out] the plan; release with ch_ar_plan_release().
 * Phases come in this order: world, node, pair rounds, scaling points
 * (ascending). Groups of fewer than 2 ranks are not measured (a note says
 * so), except the world of a single rank (measured, with the note
 * CH_AR_NOTE_WORLD_OF_ONE first). Returns 0, CH_ERR_USAGE for bad
 * arguments (nranks < 1, a node index out of range or a gap), or
 * CH_ERR_RUNTIME when out of memory.
 */
int ch_ar_plan_build(const int *node_of, int nranks, unsigned groups, int scaling,
		     struct ch_ar_plan *out);

/**
 * ch_ar_plan_set_sizes - the plan's message sizes, {count, bytes} each.
 * @p:      [in,out] a built plan; sizes already set are replaced.
 * @bytes:  [in] @n requested sizes in bytes (ch_ar_size_list()), ascending.
 * @n:      [in] number of sizes, >= 0.
 * @esize:  [in] element size in bytes, >= 1.
 * count = bytes / esize (integer division), bytes = count x esize.
 * Returns 0, CH_ERR_USAGE for bad arguments (n < 0, esize 0, NULL @bytes
 * with n > 0), or CH_ERR_RUNTIME when out of memory (the plan's sizes are
 * then left empty).
 */
int ch_ar_plan_set_sizes(struct ch_ar_plan *p, const uint64_t *bytes, int n, size_t esize);

/** ch_ar_plan_release - free what ch_ar_plan_build() and ch_ar_plan_set_sizes() allocated (twice is fine). */
void ch_ar_plan_release(struct ch_ar_plan *p);

/**
 * ch_ar_phase_group_of - the index of the group of @phase that holds world
 * rank @rank, or -1 when the rank sits this phase out.
 */
int ch_ar_phase_group_of(const struct ch_ar_phase *phase, int rank);

/**
 * ch_ar_pair_rounds - node pairs, round by round (circle method: node N-1,
 * or a dummy when N is odd, stays fixed while the others rotate; pairs with
 * the dummy are dropped).
 * @nnodes: [in] N >= 2.
 * @pairs:  [out] up to @max pairs {a, b} with a < b, round after round.
 * @round:  [out] up to @max round indices, one per pair (may be NULL).
 * Rounds: 1 when N = 2, 2 when N is even, 3 when N is odd: every node is
 * in at least two pairs when N >= 3, and in exactly two when N is even.
 * Returns the number of pairs (may exceed @max; only @max are written),
 * 0 when N < 2.
 */
int ch_ar_pair_rounds(int nnodes, int (*pairs)[2], int *round, int max);

/**
 * ch_ar_scaling_points - rank counts n/8, n/4, n/2, n (integer division),
 * rounded down to a multiple of @ppn when @ppn > 0 and the count is at
 * least @ppn (whole nodes), counts below 2 and repeats dropped, ascending.
 * @points: [out] up to 4 counts.
 * Returns how many were written.
 */
int ch_ar_scaling_points(int nranks, int ppn, int points[4]);

#ifdef __cplusplus
}
#endif
#endif
