#include "bench/allreduce/ch_ar_plan.h"
#include "base/ch_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const ch_ar_kind_names[CH_AR_KIND_COUNT + 1] = {
	[CH_AR_KIND_WORLD] = "world",
	[CH_AR_KIND_NODE] = "node",
	[CH_AR_KIND_PAIR] = "pair",
	[CH_AR_KIND_SCALING] = "scaling",
	[CH_AR_KIND_COUNT] = NULL,
};

const char *const ch_ar_groups_names[] = { "world", "node", "pairs", NULL };

int ch_ar_pair_rounds(int nnodes, int (*pairs)[2], int *round, int max)
{
	int m, rounds, r, i, n = 0;

	if (nnodes < 2)
		return 0;
	m = nnodes + (nnodes & 1); /* with a dummy (index nnodes) when odd */
	rounds = nnodes == 2 ? 1 : (nnodes % 2 == 0 ? 2 : 3);
	if (rounds > m - 1)
		rounds = m - 1;
	for (r = 0; r < rounds; r++) {
		for (i = 0; i < m / 2; i++) {
			int a, b;
			if (i == 0) {
				a = m - 1;
				b = r;
			} else {
				a = (r + i) % (m - 1);
				b = (r - i + (m - 1)) % (m - 1);
			}
			if (a >= nnodes || b >= nnodes)
				continue; /* paired with the dummy: sits this round out */
			if (n < max) {
				pairs[n][0] = a < b ? a : b;
				pairs[n][1] = a < b ? b : a;
				if (round)
					round[n] = r;
			}
			n++;
		}
	}
	return n;
}

int ch_ar_scaling_points(int nranks, int ppn, int points[4])
{
	static const int div[4] = { 8, 4, 2, 1 };
	int i, n = 0;

	for (i = 0; i < 4; i++) {
		int k = nranks / div[i];
		if (ppn > 0 && k >= ppn)
			k = k / ppn * ppn;
		if (k < 2 || (n > 0 && points[n - 1] == k))
			continue;
		points[n++] = k;
	}
	return n;
}

int ch_ar_phase_group_of(const struct ch_ar_phase *phase, int rank)
{
	int g, i;

	for (g = 0; g < phase->ngroups; g++)
		for (i = 0; i < phase->groups[g].nranks; i++)
			if (phase->groups[g].ranks[i] == rank)
				return g;
	return -1;
}

static void add_note(struct ch_ar_plan *p, const char *text)
{
	if (p->nnotes < CH_AR_PLAN_MAX_NOTES)
		snprintf(p->notes[p->nnotes++], sizeof(p->notes[0]), "%s", text);
}

static struct ch_ar_phase *add_phase(struct ch_ar_plan *p, int kind, int ngroups)
{
	struct ch_ar_phase *ph = &p->phases[p->nphases];
	ph->kind = kind;
	ph->ngroups = 0;
	ph->groups = calloc((size_t)(ngroups > 0 ? ngroups : 1), sizeof(*ph->groups));
	if (!ph->groups)
		return NULL;
	p->nphases++;
	return ph;
}

/* Add a group of the ranks of the nodes in @nodes (all of them: ranks with
 * node_of[r] in the set), or the first @limit of them in node order. */
static int add_group(struct ch_ar_phase *ph, int kind, const char *name, const int *node_of,
		     int nranks, const int *nodes, int nnodes, int limit)
{
	struct ch_ar_group *g = &ph->groups[ph->ngroups];
	int i, j, r, n = 0;

	g->kind = kind;
	snprintf(g->name, sizeof(g->name), "%s", name);
	g->ranks = malloc((size_t)nranks * sizeof(int));
	g->nodes = malloc((size_t)(nnodes > 0 ? nnodes : 1) * sizeof(int));
	if (!g->ranks || !g->nodes) {
		free(g->ranks);
		free(g->nodes);
		g->ranks = g->nodes = NULL;
		return CH_ERR_RUNTIME;
	}
	/* node order, then rank order within a node */
	for (j = 0; j < nnodes; j++)
		for (r = 0; r < nranks; r++)
			if (node_of[r] == nodes[j] && (limit <= 0 || n < limit))
				g->ranks[n++] = r;
	g->nranks = n;
	/* ranks ascending; nodes: those that contributed, ascending */
	for (i = 1; i < n; i++)
		for (j = i; j > 0 && g->ranks[j - 1] > g->ranks[j]; j--) {
			int t = g->ranks[j];
			g->ranks[j] = g->ranks[j - 1];
			g->ranks[j - 1] = t;
		}
	g->nnodes = 0;
	for (j = 0; j < nnodes; j++) {
		for (i = 0; i < n; i++)
			if (node_of[g->ranks[i]] == nodes[j])
				break;
		if (i < n)
			g->nodes[g->nnodes++] = nodes[j];
	}
	for (i = 1; i < g->nnodes; i++)
		for (j = i; j > 0 && g->nodes[j - 1] > g->nodes[j]; j--) {
			int t = g->nodes[j];
			g->nodes[j] = g->nodes[j - 1];
			g->nodes[j - 1] = t;
		}
	ph->ngroups++;
	return 0;
}

int ch_ar_plan_build(const int *node_of, int nranks, unsigned groups, int scaling,
		     struct ch_ar_plan *out)
{
	int nnodes = 0, r, i, rc = CH_ERR_RUNTIME, npairs, maxph, npoints, ppn;
	int *count = NULL, *all = NULL, (*pairs)[2] = NULL, *round = NULL, points[4];
	struct ch_ar_phase *ph;

	memset(out, 0, sizeof(*out));
	if (nranks < 1 || !node_of)
		return CH_ERR_USAGE;
	for (r = 0; r < nranks; r++) {
		if (node_of[r] < 0 || node_of[r] >= nranks)
			return CH_ERR_USAGE;
		if (node_of[r] + 1 > nnodes)
			nnodes = node_of[r] + 1;
	}
	count = calloc((size_t)nnodes, sizeof(int));
	all = malloc((size_t)nnodes * sizeof(int));
	if (!count || !all)
		goto out;
	for (r = 0; r < nranks; r++)
		count[node_of[r]]++;
	for (i = 0; i < nnodes; i++) {
		if (!count[i]) {
			rc = CH_ERR_USAGE; /* a gap in the node numbering */
			goto out;
		}
		all[i] = i;
	}
	ppn = count[0];
	for (i = 1; i < nnodes; i++)
		if (count[i] != ppn)
			ppn = 0; /* not uniform: no node alignment */
	npairs = ch_ar_pair_rounds(nnodes, NULL, NULL, 0);
	pairs = malloc((size_t)(npairs > 0 ? npairs : 1) * sizeof(*pairs));
	round = malloc((size_t)(npairs > 0 ? npairs : 1) * sizeof(int));
	if (!pairs || !round)
		goto out;
	ch_ar_pair_rounds(nnodes, pairs, round, npairs);
	npoints = scaling ? ch_ar_scaling_points(nranks, ppn, points) : 0;

	maxph = 2 + 3 + 4;
	out->phases = calloc((size_t)maxph, sizeof(*out->phases));
	if (!out->phases)
		goto out;
	out->nranks = nranks;
	out->nnodes = nnodes;

	if (groups & CH_AR_GROUPS_WORLD) {
		if (!(ph = add_phase(out, CH_AR_KIND_WORLD, 1)) ||
		    add_group(ph, CH_AR_KIND_WORLD, "world", node_of, nranks, all, nnodes, 0))
			goto fail;
		if (nranks == 1)
			add_note(out, CH_AR_NOTE_WORLD_OF_ONE);
	}
	if (groups & CH_AR_GROUPS_NODE) {
		int multi = 0;
		for (i = 0; i < nnodes; i++)
			multi += count[i] >= 2;
		if (!multi) {
			add_note(out, "node groups not measured: every node has a single rank");
		} else {
			if (!(ph = add_phase(out, CH_AR_KIND_NODE, nnodes)))
				goto fail;
			for (i = 0; i < nnodes; i++) {
				char name[40];
				if (count[i] < 2)
					continue;
				snprintf(name, sizeof(name), "node%d", i);
				if (add_group(ph, CH_AR_KIND_NODE, name, node_of, nranks, &all[i], 1, 0))
					goto fail;
			}
			if (multi < nnodes)
				add_note(out, "node groups of a single rank not measured");
		}
	}
	if (groups & CH_AR_GROUPS_PAIRS) {
		if (nnodes < 2) {
			add_note(out, "node pairs not measured: a single node");
		} else {
			int cur = -1;
			ph = NULL;
			for (i = 0; i < npairs; i++) {
				char name[40];
				if (round[i] != cur) {
					cur = round[i];
					if (!(ph = add_phase(out, CH_AR_KIND_PAIR, nnodes / 2)))
						goto fail;
				}
				snprintf(name, sizeof(name), "pair%d-%d", pairs[i][0], pairs[i][1]);
				if (add_group(ph, CH_AR_KIND_PAIR, name, node_of, nranks, pairs[i], 2, 0))
					goto fail;
			}
			if (nnodes == 2)
				add_note(out, "two nodes: a single pair, so a slow pair cannot point at one node");
		}
	}
	for (i = 0; i < npoints; i++) {
		char name[40];
		snprintf(name, sizeof(name), "scale%d", points[i]);
		if (!(ph = add_phase(out, CH_AR_KIND_SCALING, 1)) ||
		    add_group(ph, CH_AR_KIND_SCALING, name, node_of, nranks, all, nnodes, points[i]))
			goto fail;
	}
	if (scaling && npoints == 0)
		add_note(out, "no scaling points: fewer than 2 ranks");
	rc = 0;
	goto out;
fail:
	ch_ar_plan_release(out);
	rc = CH_ERR_RUNTIME;
out:
	free(count);
	free(all);
	free(pairs);
	free(round);
	return rc;
}

int ch_ar_plan_set_sizes(struct ch_ar_plan *p, const uint64_t *bytes, int n, size_t esize)
{
	struct ch_ar_size *sz;
	int i;

	if (!p || n < 0 || esize == 0 || (n > 0 && !bytes))
		return CH_ERR_USAGE;
	free(p->sizes);
	p->sizes = NULL;
	p->nsizes = 0;
	sz = calloc(n > 0 ? (size_t)n : 1, sizeof(*sz));
	if (!sz)
		return CH_ERR_RUNTIME;
	for (i = 0; i < n; i++) {
		sz[i].count = (size_t)(bytes[i] / esize);
		sz[i].bytes = (uint64_t)sz[i].count * esize;
	}
	p->sizes = sz;
	p->nsizes = n;
	return 0;
}

void ch_ar_plan_release(struct ch_ar_plan *p)
{
	int i, g;

	free(p->sizes);
	p->sizes = NULL;
	p->nsizes = 0;
	if (!p->phases)
		return;
	for (i = 0; i < p->nphases; i++) {
		for (g = 0; g < p->phases[i].ngroups; g++) {
			free(p->phases[i].groups[g].ranks);
			free(p->phases[i].groups[g].nodes);
		}
		free(p->phases[i].groups);
	}
	free(p->phases);
	p->phases = NULL;
	p->nphases = 0;
}
