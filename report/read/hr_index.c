/*
 * hr_index.c - lookups over a loaded fleet (hr_index.h): open-addressing
 * hash tables keyed by (a number, a string the fleet owns), per-node
 * chains in the order read, and per mount the sorted bandwidths of the
 * nodes' newest checkpoint entries.
 */
#include "report/read/hr_index.h"
#include "report/read/hr_ckpt_load.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* A table from (tag, string) to a value; strings borrowed from the fleet. */
struct map {
	size_t cap;                /* a power of two, 0: empty */
	const char **key;
	long *tag, *val;
};

struct mount_vals {
	double *v;                 /* sorted (ascending) */
	size_t n;
	double *a;                 /* the second writes' (again_gbps), sorted */
	size_t na;
};

struct hr_index {
	/* what it was built over: rebuilt when any differs */
	const void *runs, *loaders, *stragglers, *ckpts, *devices;
	size_t nruns, nloaders, nstragglers, nckpts, nnodes, ndevices;
	struct map run_path;       /* (0, path) -> first run */
	long *run_next;            /* [nruns] next run of the same path */
	long *node_loader;         /* [nnodes] last loader */
	long *strag_first, *strag_next;
	long *dev_first, *dev_next;
	long *ckpt_first, *ckpt_next;
	struct map ckpt_latest;    /* (node, mount) -> newest entry */
	struct map mount_id;       /* (0, mount) -> index into mounts */
	struct mount_vals *mounts;
	size_t nmounts;
};

static uint64_t hash(long tag, const char *s)
{
	uint64_t h = 1469598103934665603ULL ^ (uint64_t)tag;
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h ^ (h >> 29);
}

static int map_init(struct map *m, size_t n)
{
	m->cap = 16;
	while (m->cap < 2 * n + 1)
		m->cap *= 2;
	m->key = calloc(m->cap, sizeof(*m->key));
	m->tag = malloc(m->cap * sizeof(*m->tag));
	m->val = malloc(m->cap * sizeof(*m->val));
	return m->key && m->tag && m->val ? 0 : -1;
}

static void map_free(struct map *m)
{
	free(m->key);
	free(m->tag);
	free(m->val);
	memset(m, 0, sizeof(*m));
}

/* the slot of (tag, s): its own, or the empty one where it would go */
static size_t map_slot(const struct map *m, long tag, const char *s)
{
	size_t i = (size_t)hash(tag, s) & (m->cap - 1);
	while (m->key[i] && (m->tag[i] != tag || strcmp(m->key[i], s)))
		i = (i + 1) & (m->cap - 1);
	return i;
}

/* the value of (tag, s), -1 none */
static long map_get(const struct map *m, long tag, const char *s)
{
	size_t i;
	if (!m->cap || !s)
		return -1;
	i = map_slot(m, tag, s);
	return m->key[i] ? m->val[i] : -1;
}

/* set (tag, s) to @val; @first: keep an existing value. The table holds at
 * most half its slots (map_init's size). */
static void map_put(struct map *m, long tag, const char *s, long val, int first)
{
	size_t i = map_slot(m, tag, s);
	if (m->key[i] && first)
		return;
	m->key[i] = s;
	m->tag[i] = tag;
	m->val[i] = val;
}

static void index_free(struct hr_index *x)
{
	size_t i;
	if (!x)
		return;
	map_free(&x->run_path);
	map_free(&x->ckpt_latest);
	map_free(&x->mount_id);
	for (i = 0; i < x->nmounts; i++) {
		free(x->mounts[i].v);
		free(x->mounts[i].a);
	}
	free(x->mounts);
	free(x->run_next);
	free(x->node_loader);
	free(x->strag_first);
	free(x->strag_next);
	free(x->dev_first);
	free(x->dev_next);
	free(x->ckpt_first);
	free(x->ckpt_next);
	free(x);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* per node, the chain of entries i with node_of(i) == node, in order */
static int chains(size_t nnodes, size_t n, const int *node_of, size_t stride, long **first, long **next)
{
	size_t i;
	*first = malloc((nnodes ? nnodes : 1) * sizeof(**first));
	*next = malloc((n ? n : 1) * sizeof(**next));
	if (!*first || !*next)
		return -1;
	for (i = 0; i < nnodes; i++)
		(*first)[i] = -1;
	for (i = n; i-- > 0;) {
		int nd = *(const int *)((const char *)node_of + i * stride);
		(*next)[i] = -1;
		if (nd < 0 || (size_t)nd >= nnodes)
			continue;
		(*next)[i] = (*first)[nd];
		(*first)[nd] = (long)i;
	}
	return 0;
}

static int build_ckpt(struct hr_index *x, const struct hr_fleet *f)
{
	size_t i, *cnt;

	if (chains(f->nnodes, f->nckpts, f->nckpts ? &f->ckpts[0].node : NULL, sizeof(*f->ckpts), &x->ckpt_first,
		   &x->ckpt_next) ||
	    map_init(&x->ckpt_latest, f->nckpts) || map_init(&x->mount_id, f->nckpts))
		return -1;
	x->mounts = calloc(f->nckpts ? f->nckpts : 1, sizeof(*x->mounts));
	if (!x->mounts)
		return -1;
	for (i = 0; i < f->nckpts; i++) {
		map_put(&x->ckpt_latest, f->ckpts[i].node, f->ckpts[i].mount, (long)i, 0);
		if (map_get(&x->mount_id, 0, f->ckpts[i].mount) < 0)
			map_put(&x->mount_id, 0, f->ckpts[i].mount, (long)x->nmounts++, 1);
	}
	/* per mount the bandwidths of the newest entries of the fleet's nodes */
	cnt = calloc(x->nmounts ? x->nmounts : 1, sizeof(*cnt));
	if (!cnt)
		return -1;
	for (i = 0; i < f->nckpts; i++) {
		const struct hr_ckpt *e = &f->ckpts[i];
		if (e->node >= 0 && (size_t)e->node < f->nnodes && !isnan(e->rank_gbps) &&
		    map_get(&x->ckpt_latest, e->node, e->mount) == (long)i)
			cnt[map_get(&x->mount_id, 0, e->mount)]++;
	}
	for (i = 0; i < x->nmounts; i++)
		if (!(x->mounts[i].v = malloc((cnt[i] ? cnt[i] : 1) * sizeof(double))) ||
		    !(x->mounts[i].a = malloc((cnt[i] ? cnt[i] : 1) * sizeof(double)))) {
			free(cnt);
			return -1;
		}
	free(cnt);
	for (i = 0; i < f->nckpts; i++) {
		const struct hr_ckpt *e = &f->ckpts[i];
		if (e->node >= 0 && (size_t)e->node < f->nnodes && !isnan(e->rank_gbps) &&
		    map_get(&x->ckpt_latest, e->node, e->mount) == (long)i) {
			struct mount_vals *m = &x->mounts[map_get(&x->mount_id, 0, e->mount)];
			m->v[m->n++] = e->rank_gbps;
			if (e->again_gbps > 0)
				m->a[m->na++] = e->again_gbps;
		}
	}
	for (i = 0; i < x->nmounts; i++) {
		qsort(x->mounts[i].v, x->mounts[i].n, sizeof(double), cmp_double);
		qsort(x->mounts[i].a, x->mounts[i].na, sizeof(double), cmp_double);
	}
	return 0;
}

static struct hr_index *build(const struct hr_fleet *f)
{
	struct hr_index *x = calloc(1, sizeof(*x));
	size_t i;

	if (!x)
		return NULL;
	x->runs = f->runs, x->loaders = f->loaders, x->stragglers = f->stragglers, x->ckpts = f->ckpts;
	x->devices = f->devices, x->ndevices = f->ndevices;
	x->nruns = f->nruns, x->nloaders = f->nloaders, x->nstragglers = f->nstragglers;
	x->nckpts = f->nckpts, x->nnodes = f->nnodes;
	x->run_next = malloc((f->nruns ? f->nruns : 1) * sizeof(*x->run_next));
	x->node_loader = malloc((f->nnodes ? f->nnodes : 1) * sizeof(*x->node_loader));
	if (!x->run_next || !x->node_loader || map_init(&x->run_path, f->nruns))
		goto fail;
	for (i = f->nruns; i-- > 0;) {
		const char *p = f->runs[i].path;
		x->run_next[i] = p ? map_get(&x->run_path, 0, p) : -1;
		if (p)
			map_put(&x->run_path, 0, p, (long)i, 0);
	}
	for (i = 0; i < f->nnodes; i++)
		x->node_loader[i] = -1;
	for (i = 0; i < f->nloaders; i++)
		if (f->loaders[i].node >= 0 && (size_t)f->loaders[i].node < f->nnodes)
			x->node_loader[f->loaders[i].node] = (long)i;
	if (chains(f->nnodes, f->nstragglers, f->nstragglers ? &f->stragglers[0].node : NULL, sizeof(*f->stragglers),
		   &x->strag_first, &x->strag_next) ||
	    chains(f->nnodes, f->ndevices, f->ndevices ? &f->devices[0].node : NULL, sizeof(*f->devices),
		   &x->dev_first, &x->dev_next) ||
	    build_ckpt(x, f))
		goto fail;
	return x;
fail:
	index_free(x);
	return NULL;
}

/* the fleet's index, built or built again as needed; NULL out of memory */
static const struct hr_index *get(const struct hr_fleet *f)
{
	struct hr_fleet *m = (struct hr_fleet *)f; /* the index is a cache of f's own */
	const struct hr_index *x = m->index;
	if (x && x->runs == f->runs && x->nruns == f->nruns && x->loaders == f->loaders &&
	    x->nloaders == f->nloaders && x->stragglers == f->stragglers && x->nstragglers == f->nstragglers &&
	    x->ckpts == f->ckpts && x->nckpts == f->nckpts && x->nnodes == f->nnodes && x->devices == f->devices &&
	    x->ndevices == f->ndevices)
		return x;
	index_free(m->index);
	m->index = build(f);
	return m->index;
}

long hr_index_run_of_path(const struct hr_fleet *f, const char *path)
{
	const struct hr_index *x = get(f);
	size_t i;
	if (!path)
		return -1;
	if (x)
		return map_get(&x->run_path, 0, path);
	for (i = 0; i < f->nruns; i++)
		if (f->runs[i].path && !strcmp(f->runs[i].path, path))
			return (long)i;
	return -1;
}

long hr_index_run_next_of_path(const struct hr_fleet *f, long run)
{
	const struct hr_index *x = get(f);
	size_t i;
	if (run < 0 || (size_t)run >= f->nruns || !f->runs[run].path)
		return -1;
	if (x)
		return x->run_next[run];
	for (i = (size_t)run + 1; i < f->nruns; i++)
		if (f->runs[i].path && !strcmp(f->runs[i].path, f->runs[run].path))
			return (long)i;
	return -1;
}

long hr_index_node_loader(const struct hr_fleet *f, int node)
{
	const struct hr_index *x = get(f);
	long l = -1;
	size_t i;
	if (x)
		return node >= 0 && (size_t)node < f->nnodes ? x->node_loader[node] : -1;
	for (i = 0; i < f->nloaders; i++)
		if (f->loaders[i].node == node)
			l = (long)i;
	return l;
}

long hr_index_node_straggler(const struct hr_fleet *f, int node, long after)
{
	const struct hr_index *x = get(f);
	size_t i;
	if (x) {
		if (after >= 0)
			return (size_t)after < f->nstragglers ? x->strag_next[after] : -1;
		return node >= 0 && (size_t)node < f->nnodes ? x->strag_first[node] : -1;
	}
	for (i = after >= 0 ? (size_t)after + 1 : 0; i < f->nstragglers; i++)
		if (f->stragglers[i].node == node)
			return (long)i;
	return -1;
}

long hr_index_node_ckpt(const struct hr_fleet *f, int node, long after)
{
	const struct hr_index *x = get(f);
	size_t i;
	if (x) {
		if (after >= 0)
			return (size_t)after < f->nckpts ? x->ckpt_next[after] : -1;
		return node >= 0 && (size_t)node < f->nnodes ? x->ckpt_first[node] : -1;
	}
	for (i = after >= 0 ? (size_t)after + 1 : 0; i < f->nckpts; i++)
		if (f->ckpts[i].node == node)
			return (long)i;
	return -1;
}

long hr_index_node_device(const struct hr_fleet *f, int node, long after)
{
	const struct hr_index *x = get(f);
	size_t i;
	if (x) {
		if (after >= 0)
			return (size_t)after < f->ndevices ? x->dev_next[after] : -1;
		return node >= 0 && (size_t)node < f->nnodes ? x->dev_first[node] : -1;
	}
	for (i = after >= 0 ? (size_t)after + 1 : 0; i < f->ndevices; i++)
		if (f->devices[i].node == node)
			return (long)i;
	return -1;
}

long hr_index_ckpt_latest(const struct hr_fleet *f, int node, const char *mount)
{
	const struct hr_index *x = get(f);
	long e = -1;
	size_t i;
	if (x)
		return map_get(&x->ckpt_latest, node, mount);
	for (i = 0; mount && i < f->nckpts; i++)
		if (f->ckpts[i].node == node && !strcmp(f->ckpts[i].mount, mount))
			e = (long)i;
	return e;
}

/* element @j of sorted @s with element @skip left out (@skip >= n: none) */
static double at(const double *s, size_t skip, size_t j)
{
	return j < skip ? s[j] : s[j + 1];
}

/* ch_percentile_sorted(.., 50.0) over sorted @v[0..n) less one value equal
 * to @own (the lowest such; none when @own is NAN or not among them);
 * *@npeers how many it is over; NAN when none */
static double median_less_own(const double *v, size_t n, double own, int *npeers)
{
	size_t skip = n, lo; /* skip past the end: none left out */
	double pos, frac;

	if (!isnan(own)) {
		size_t a = 0, b = n;
		while (a < b) {
			size_t mid = a + (b - a) / 2;
			if (v[mid] < own)
				a = mid + 1;
			else
				b = mid;
		}
		if (a < n && v[a] == own)
			skip = a, n--;
	}
	*npeers = (int)n;
	if (!n)
		return NAN;
	if (n == 1)
		return at(v, skip, 0);
	pos = 50.0 / 100.0 * (double)(n - 1);
	lo = (size_t)floor(pos);
	if (lo >= n - 1)
		return at(v, skip, n - 1);
	frac = pos - (double)lo;
	return at(v, skip, lo) + frac * (at(v, skip, lo + 1) - at(v, skip, lo));
}

/* the node's own newest entry on the mount's (first, or @again: second
 * write's) rate, NAN when none */
static double own_rate(const struct hr_index *x, const struct hr_fleet *f, int node, const char *mount, int again)
{
	long own = node >= 0 && (size_t)node < f->nnodes ? map_get(&x->ckpt_latest, node, mount) : -1;
	double v;
	if (own < 0)
		return NAN;
	v = again ? f->ckpts[own].again_gbps : f->ckpts[own].rank_gbps;
	return again && !(v > 0) ? NAN : v;
}

double hr_index_ckpt_peers_median(const struct hr_fleet *f, int node, const char *mount, int *npeers)
{
	const struct hr_index *x = get(f);
	long id;

	*npeers = 0;
	if (!x || !mount || (id = map_get(&x->mount_id, 0, mount)) < 0)
		return NAN;
	return median_less_own(x->mounts[id].v, x->mounts[id].n, own_rate(x, f, node, mount, 0), npeers);
}

double hr_index_ckpt_peers_median_again(const struct hr_fleet *f, int node, const char *mount, int *npeers)
{
	const struct hr_index *x = get(f);
	long id;

	*npeers = 0;
	if (!x || !mount || (id = map_get(&x->mount_id, 0, mount)) < 0)
		return NAN;
	return median_less_own(x->mounts[id].a, x->mounts[id].na, own_rate(x, f, node, mount, 1), npeers);
}

void hr_index_release(struct hr_fleet *f)
{
	index_free(f->index);
	f->index = NULL;
}
