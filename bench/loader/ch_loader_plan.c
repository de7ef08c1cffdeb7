/*
 * ch_loader_plan.c - placement planning from an hwloc topology, affinity
 * mask check, and the binding lines (numactl, hwloc-bind, Slurm).
 * Pure functions of the topology: nothing here binds anything.
 */
#include "bench/loader/ch_loader.h"
#include "base/ch_common.h"
#include "hw/ch_host.h"
#include "base/ch_parse.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const placement_names[CH_LC_NPLACEMENTS + 1] = {
	"baseline", "shared", "isolated", "numa-local", "numa-remote", "as-is", NULL
};

const char *ch_lc_placement_name(int p)
{
	return (p >= 0 && p < CH_LC_NPLACEMENTS) ? placement_names[p] : "?";
}

int ch_lc_placement_lookup(const char *opt, const char *s)
{
	/* "baseline" is always run first and is not a choice */
	static const char *const names[] = { "shared", "isolated", "numa-local",
					     "numa-remote", "as-is", NULL };
	int i = ch_lookup(opt, s, names);
	return i < 0 ? i : i + CH_LC_SHARED;
}

/* ------------------------------------------------------------------ GPUs */

static int name_is_compute(const char *n)
{
	static const char *const pfx[] = { "cuda", "nvml", "rsmi", NULL };
	int i;
	if (!n)
		return 0;
	for (i = 0; pfx[i]; i++)
		if (!strncmp(n, pfx[i], strlen(pfx[i])))
			return 1;
	return 0;
}

/* A compute driver exposed this PCI device (CUDA, NVML, OpenCL, ROCm SMI). */
static int has_compute_osdev(hwloc_obj_t pci)
{
	hwloc_obj_t c;
	for (c = pci->io_first_child; c; c = c->next_sibling) {
		if (c->type != HWLOC_OBJ_OS_DEVICE)
			continue;
		/* OS device types are not compared: XML files written by newer hwloc
		 * use other numbers for them; the names are stable */
		if (name_is_compute(c->name))
			return 1;
		if (c->subtype && (!strcmp(c->subtype, "CUDA") || !strcmp(c->subtype, "NVML") ||
				   !strcmp(c->subtype, "RSMI")))
			return 1;
	}
	return 0;
}

static hwloc_obj_t pci_obj(hwloc_topology_t topo, const char *busid)
{
	unsigned d, b, dev, f;
	if (sscanf(busid, "%x:%x:%x.%x", &d, &b, &dev, &f) != 4)
		return NULL;
	return hwloc_get_pcidev_by_busid(topo, d, b, dev, f);
}

void ch_lc_gpus_release(struct ch_lc_gpu *gpus, int n)
{
	int i;
	for (i = 0; gpus && i < n; i++) {
		hwloc_bitmap_free(gpus[i].cpuset);
		gpus[i].cpuset = NULL;
	}
}

int ch_lc_gpus_find(hwloc_topology_t topo, struct ch_lc_gpu *gpus, int max)
{
	struct ch_gpu_loc *all;
	int n, i, ncompute = 0, n3d = 0, out = 0;
	int *keep;

	n = ch_topo_gpus(topo, NULL, 0);
	if (n <= 0)
		return 0;
	all = calloc((size_t)n, sizeof(*all));
	keep = calloc((size_t)n, sizeof(*keep));
	if (!all || !keep) {
		free(all);
		free(keep);
		return CH_ERR_RUNTIME;
	}
	ch_topo_gpus(topo, all, n);
	for (i = 0; i < n; i++) {
		hwloc_obj_t o = pci_obj(topo, all[i].pci_bus_id);
		if (o && has_compute_osdev(o)) {
			keep[i] |= 1;
			ncompute++;
		}
		if (o && o->attr->pcidev.class_id == 0x0302) {
			keep[i] |= 2;
			n3d++;
		}
	}
	for (i = 0; i < n; i++) {
		int want = ncompute ? (keep[i] & 1) : n3d ? (keep[i] & 2) : 1;
		if (!want)
			continue;
		if (out < max) {
			struct ch_lc_gpu *g = &gpus[out];
			memset(g, 0, sizeof(*g));
			snprintf(g->pci_bus_id, sizeof(g->pci_bus_id), "%s", all[i].pci_bus_id);
			snprintf(g->name, sizeof(g->name), "%s", all[i].name);
			g->numa = all[i].numa_node;
			g->cpuset = hwloc_bitmap_dup(all[i].cpuset);
			if (!g->cpuset) {
				ch_lc_gpus_release(gpus, out);
				free(all);
				free(keep);
				return CH_ERR_RUNTIME;
			}
		}
		out++;
	}
	free(all);
	free(keep);
	return out;
}

/* NUMA nodes that hold at least one allowed PU, in logical order. */
static int numa_nodes_with_cpus(hwloc_topology_t topo, hwloc_obj_t *nodes, int max)
{
	hwloc_const_bitmap_t allowed = hwloc_topology_get_allowed_cpuset(topo);
	hwloc_obj_t o = NULL;
	int n = 0;
	while ((o = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, o)))
		if (o->cpuset && hwloc_bitmap_intersects(o->cpuset, allowed)) {
			if (n < max)
				nodes[n] = o;
			n++;
		}
	return n;
}

int ch_lc_gpus_emulate(hwloc_topology_t topo, int n, struct ch_lc_gpu *gpus)
{
	hwloc_obj_t nodes[256];
	int nn = numa_nodes_with_cpus(topo, nodes, 256), j;

	if (nn > 256)
		nn = 256;
	for (j = 0; j < n; j++) {
		struct ch_lc_gpu *g = &gpus[j];
		memset(g, 0, sizeof(*g));
		snprintf(g->name, sizeof(g->name), "emulated");
		if (nn > 0) {
			g->cpuset = hwloc_bitmap_dup(nodes[j % nn]->cpuset);
			g->numa = (int)nodes[j % nn]->logical_index;
		} else {
			g->cpuset = hwloc_bitmap_dup(hwloc_topology_get_allowed_cpuset(topo));
			g->numa = -1;
		}
		if (!g->cpuset) {
			ch_lc_gpus_release(gpus, j);
			return CH_ERR_RUNTIME;
		}
	}
	return 0;
}

/* ------------------------------------------------------------- planning */

void ch_lc_plan_release(struct ch_lc_plan *plan)
{
	int i;
	if (!plan || !plan->gpu)
		return;
	for (i = 0; i < plan->ngpus; i++) {
		hwloc_bitmap_free(plan->gpu[i].feeder_cpus);
		hwloc_bitmap_free(plan->gpu[i].worker_cpus);
	}
	free(plan->gpu);
	plan->gpu = NULL;
	plan->ngpus = 0;
}

int ch_lc_mask_collapsed(hwloc_const_bitmap_t allowed, hwloc_const_bitmap_t bound)
{
	return hwloc_bitmap_weight(bound) == 1 && hwloc_bitmap_weight(allowed) > 1;
}

static void setwhy(char *why, size_t n, const char *fmt, ...)
{
	va_list ap;
	if (!why || !n)
		return;
	va_start(ap, fmt);
	vsnprintf(why, n, fmt, ap);
	va_end(ap);
}

static void add_note(struct ch_lc_plan *p, const char *fmt, ...)
{
	size_t l = strlen(p->note);
	va_list ap;
	if (l && l + 2 < sizeof(p->note)) {
		memcpy(p->note + l, "; ", 3);
		l += 2;
	}
	va_start(ap, fmt);
	vsnprintf(p->note + l, sizeof(p->note) - l, fmt, ap);
	va_end(ap);
}

/* Cores (as PU sets, intersected with @set) that intersect @set, in logical
 * order. A topology without Core objects uses PUs. Returns the count. */
static int cores_in(hwloc_topology_t topo, hwloc_const_bitmap_t set, hwloc_bitmap_t *out, int max)
{
	hwloc_obj_type_t t = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
	hwloc_obj_t o = NULL;
	int n = 0;
	while ((o = hwloc_get_next_obj_by_type(topo, t, o))) {
		if (!hwloc_bitmap_intersects(o->cpuset, set))
			continue;
		if (n < max) {
			out[n] = hwloc_bitmap_alloc();
			if (!out[n])
				return -1;
			hwloc_bitmap_and(out[n], o->cpuset, set);
		}
		n++;
	}
	return n < max ? n : max;
}

static int count_cores(hwloc_topology_t topo, hwloc_const_bitmap_t set)
{
	hwloc_obj_type_t t = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
	hwloc_obj_t o = NULL;
	int n = 0;
	while ((o = hwloc_get_next_obj_by_type(topo, t, o)))
		if (hwloc_bitmap_intersects(o->cpuset, set))
			n++;
	return n;
}

/* OS index of the first NUMA node whose CPUs include all of @set, or -1. */
static int numa_holding(hwloc_topology_t topo, hwloc_const_bitmap_t set)
{
	hwloc_obj_t o = NULL;
	if (hwloc_bitmap_iszero(set))
		return -1;
	while ((o = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, o)))
		if (o->cpuset && hwloc_bitmap_isincluded(set, o->cpuset))
			return (int)o->os_index;
	return -1;
}

/* The NUMA node "remote" from @local: the farthest by hwloc's latency
 * matrix when there is one, else the next node with CPUs in logical order. */
static hwloc_obj_t remote_node(hwloc_topology_t topo, hwloc_obj_t local)
{
	hwloc_obj_t nodes[256], best = NULL;
	int nn = numa_nodes_with_cpus(topo, nodes, 256), i, li = -1;
	struct hwloc_distances_s *d = NULL;
	unsigned nr = 1;

	if (nn > 256)
		nn = 256;
	for (i = 0; i < nn; i++)
		if (nodes[i] == local)
			li = i;
	if (hwloc_distances_get_by_type(topo, HWLOC_OBJ_NUMANODE, &nr, &d,
					HWLOC_DISTANCES_KIND_MEANS_LATENCY, 0) == 0 && nr >= 1 && d) {
		hwloc_uint64_t far = 0;
		for (i = 0; i < nn; i++) {
			hwloc_uint64_t ab, ba;
			if (nodes[i] == local)
				continue;
			if (hwloc_distances_obj_pair_values(d, local, nodes[i], &ab, &ba) == 0 && ab > far) {
				far = ab;
				best = nodes[i];
			}
		}
		hwloc_distances_release(topo, d);
		if (best)
			return best;
	}
	if (nn < 2)
		return NULL;
	return nodes[(li < 0 ? 0 : li + 1) % nn] == local ? NULL : nodes[(li < 0 ? 0 : li + 1) % nn];
}

static hwloc_obj_t numa_obj(hwloc_topology_t topo, int logical)
{
	return logical < 0 ? NULL : hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, (unsigned)logical);
}

/* First NUMA node intersecting @set (for GPUs without a NUMA node). */
static hwloc_obj_t numa_of_set(hwloc_topology_t topo, hwloc_const_bitmap_t set)
{
	hwloc_obj_t o = NULL;
	while ((o = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, o)))
		if (o->cpuset && hwloc_bitmap_intersects(o->cpuset, set))
			return o;
	return NULL;
}

/* Split the cores of one locality among the k GPUs of a group. */
static int split_group(hwloc_topology_t topo, hwloc_const_bitmap_t loc, const int *members, int k,
		       struct ch_lc_plan *p)
{
	hwloc_bitmap_t cores[4096];
	int n = cores_in(topo, loc, cores, 4096), j, c, rc = 0;
	char buf[256];

	if (n < 0)
		return CH_ERR_RUNTIME;
	if (n == 0)
		return CH_ERR_RUNTIME;
	if (n >= 2 * k) {
		int base = n / k, extra = n % k, start = 0;
		for (j = 0; j < k; j++) {
			struct ch_lc_place *pl = &p->gpu[members[j]];
			int len = base + (j < extra ? 1 : 0);
			hwloc_bitmap_copy(pl->feeder_cpus, cores[start]);
			for (c = start + 1; c < start + len; c++)
				hwloc_bitmap_or(pl->worker_cpus, pl->worker_cpus, cores[c]);
			pl->feeder_sharers = 1;
			pl->worker_sharers = 1;
			start += len;
		}
	} else if (n >= 2) {
		int nf = n / 2;
		hwloc_bitmap_t pool = hwloc_bitmap_alloc();
		if (!pool) {
			rc = CH_ERR_RUNTIME;
			goto out;
		}
		for (c = nf; c < n; c++)
			hwloc_bitmap_or(pool, pool, cores[c]);
		for (j = 0; j < k; j++) {
			struct ch_lc_place *pl = &p->gpu[members[j]];
			int fc = (int)((long)j * nf / k), sharers = 0, i;
			hwloc_bitmap_copy(pl->feeder_cpus, cores[fc]);
			hwloc_bitmap_copy(pl->worker_cpus, pool);
			for (i = 0; i < k; i++)
				if ((int)((long)i * nf / k) == fc)
					sharers++;
			pl->feeder_sharers = sharers;
			pl->worker_sharers = k;
		}
		hwloc_bitmap_free(pool);
		add_note(p, "%d GPUs on %d cores (CPUs %s): fewer than 2 cores per GPU, so the feeders share %d core(s) and the workers share the other %d",
			 k, n, ch_cpuset_to_list(loc, buf, sizeof(buf)), nf, n - nf);
	} else {
		for (j = 0; j < k; j++) {
			struct ch_lc_place *pl = &p->gpu[members[j]];
			hwloc_bitmap_copy(pl->feeder_cpus, cores[0]);
			hwloc_bitmap_copy(pl->worker_cpus, cores[0]);
			pl->feeder_sharers = k;
			pl->worker_sharers = k;
		}
		add_note(p, "one core (CPUs %s) for %d GPU(s): feeders and workers cannot be separated",
			 ch_cpuset_to_list(loc, buf, sizeof(buf)), k);
	}
out:
	for (c = 0; c < n; c++)
		hwloc_bitmap_free(cores[c]);
	return rc;
}

int ch_lc_plan_make(hwloc_topology_t topo, const struct ch_lc_gpu *gpus, int ngpus,
		    int placement, hwloc_const_bitmap_t inherited,
		    struct ch_lc_plan *out, char *why, size_t whylen)
{
	hwloc_const_bitmap_t allowed = hwloc_topology_get_allowed_cpuset(topo);
	hwloc_bitmap_t *loc = NULL;
	int *done = NULL, *members = NULL;
	int i, j, rc = 0, nnuma;
	hwloc_obj_t nodes[2];

	memset(out, 0, sizeof(*out));
	setwhy(why, whylen, "%s", "");
	if (ngpus < 1 || placement < 0 || placement >= CH_LC_NPLACEMENTS)
		return CH_ERR_USAGE;
	out->placement = placement;
	nnuma = numa_nodes_with_cpus(topo, nodes, 2);
	if ((placement == CH_LC_NUMA_LOCAL || placement == CH_LC_NUMA_REMOTE) && nnuma < 2) {
		setwhy(why, whylen, "one NUMA node");
		return CH_ERR_UNAVAILABLE;
	}
	out->gpu = calloc((size_t)ngpus, sizeof(*out->gpu));
	loc = calloc((size_t)ngpus, sizeof(*loc));
	done = calloc((size_t)ngpus, sizeof(*done));
	members = calloc((size_t)ngpus, sizeof(*members));
	if (!out->gpu || !loc || !done || !members) {
		rc = CH_ERR_RUNTIME;
		goto out;
	}
	out->ngpus = ngpus;
	for (i = 0; i < ngpus; i++) {
		struct ch_lc_place *pl = &out->gpu[i];
		pl->feeder_cpus = hwloc_bitmap_alloc();
		pl->worker_cpus = hwloc_bitmap_alloc();
		loc[i] = hwloc_bitmap_alloc();
		if (!pl->feeder_cpus || !pl->worker_cpus || !loc[i]) {
			rc = CH_ERR_RUNTIME;
			goto out;
		}
		pl->mem_numa_os = -1;
		pl->bind = placement != CH_LC_AS_IS;
	}

	if (placement == CH_LC_AS_IS) {
		hwloc_const_bitmap_t set = inherited ? inherited : allowed;
		for (i = 0; i < ngpus; i++) {
			struct ch_lc_place *pl = &out->gpu[i];
			hwloc_bitmap_copy(pl->feeder_cpus, set);
			hwloc_bitmap_copy(pl->worker_cpus, set);
			pl->feeder_sharers = pl->worker_sharers = ngpus;
			pl->feeder_cores = pl->worker_cores = count_cores(topo, set);
			pl->cpu_numa_os = numa_holding(topo, set);
		}
		goto out;
	}

	/* each GPU's locality for this placement */
	for (i = 0; i < ngpus; i++) {
		const struct ch_lc_gpu *g = &gpus[i];
		hwloc_obj_t node = numa_obj(topo, g->numa);
		if (!node && g->cpuset)
			node = numa_of_set(topo, g->cpuset);
		if (placement == CH_LC_NUMA_LOCAL || placement == CH_LC_NUMA_REMOTE) {
			if (!node) {
				setwhy(why, whylen, "GPU %d has no NUMA node", i);
				rc = CH_ERR_UNAVAILABLE;
				goto out;
			}
			if (placement == CH_LC_NUMA_REMOTE) {
				hwloc_obj_t r = remote_node(topo, node);
				if (!r) {
					setwhy(why, whylen, "no other NUMA node with CPUs than GPU %d's", i);
					rc = CH_ERR_UNAVAILABLE;
					goto out;
				}
				node = r;
			}
			hwloc_bitmap_and(loc[i], node->cpuset, allowed);
			out->gpu[i].mem_numa_os = (int)node->os_index;
		} else {
			if (g->cpuset)
				hwloc_bitmap_and(loc[i], g->cpuset, allowed);
			if (hwloc_bitmap_iszero(loc[i]))
				hwloc_bitmap_copy(loc[i], allowed);
		}
		if (hwloc_bitmap_iszero(loc[i])) {
			setwhy(why, whylen, "GPU %d's locality has no allowed CPU", i);
			rc = CH_ERR_RUNTIME;
			goto out;
		}
	}

	/* group GPUs with the same locality, split each group's cores */
	for (i = 0; i < ngpus; i++) {
		int k = 0;
		if (done[i])
			continue;
		for (j = i; j < ngpus; j++)
			if (!done[j] && hwloc_bitmap_isequal(loc[i], loc[j])) {
				members[k++] = j;
				done[j] = 1;
			}
		if ((rc = split_group(topo, loc[i], members, k, out)) != 0)
			goto out;
	}

	for (i = 0; i < ngpus; i++) {
		struct ch_lc_place *pl = &out->gpu[i];
		if (placement == CH_LC_SHARED) {
			hwloc_bitmap_or(pl->feeder_cpus, pl->feeder_cpus, pl->worker_cpus);
			hwloc_bitmap_copy(pl->worker_cpus, pl->feeder_cpus);
			pl->feeder_sharers = pl->worker_sharers;
		} else if (placement == CH_LC_BASELINE) {
			hwloc_bitmap_zero(pl->worker_cpus);
		} else if (hwloc_bitmap_iszero(pl->worker_cpus)) {
			/* cannot happen with the split above; keep workers runnable */
			hwloc_bitmap_copy(pl->worker_cpus, pl->feeder_cpus);
		}
		pl->feeder_cores = count_cores(topo, pl->feeder_cpus);
		pl->worker_cores = count_cores(topo, pl->worker_cpus);
		{
			hwloc_bitmap_t u = hwloc_bitmap_alloc();
			if (!u) {
				rc = CH_ERR_RUNTIME;
				goto out;
			}
			hwloc_bitmap_or(u, pl->feeder_cpus, pl->worker_cpus);
			pl->cpu_numa_os = numa_holding(topo, u);
			hwloc_bitmap_free(u);
		}
	}
out:
	if (loc)
		for (i = 0; i < ngpus; i++)
			hwloc_bitmap_free(loc[i]);
	free(loc);
	free(done);
	free(members);
	if (rc)
		ch_lc_plan_release(out);
	return rc;
}

/* --------------------------------------------------------- binding lines */

/* Growable string. */
struct sbuf {
	char *s;
	size_t len, cap;
	int oom;
};

static void sb_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->oom)
		return;
	for (;;) {
		size_t room = b->cap - b->len;
		va_start(ap, fmt);
		n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? room : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = 1;
			return;
		}
		if (b->s && (size_t)n < room) {
			b->len += (size_t)n;
			return;
		}
		{
			size_t nc = (b->cap ? b->cap * 2 : 128) + (size_t)n + 1;
			char *ns = realloc(b->s, nc);
			if (!ns) {
				b->oom = 1;
				return;
			}
			if (!b->s)
				ns[0] = '\0';
			b->s = ns;
			b->cap = nc;
		}
	}
}

static char *sb_take(struct sbuf *b)
{
	if (b->oom) {
		free(b->s);
		return NULL;
	}
	if (!b->s)
		return strdup("");
	return b->s;
}

/* Plain hexadecimal mask ("0xff00ff00"), as Slurm's mask_cpu wants it. */
static void sb_hexmask(struct sbuf *b, hwloc_const_bitmap_t set)
{
	int last = hwloc_bitmap_last(set), nib;
	sb_printf(b, "0x");
	if (last < 0) {
		sb_printf(b, "0");
		return;
	}
	for (nib = last / 4; nib >= 0; nib--) {
		unsigned v = 0, bit;
		for (bit = 0; bit < 4; bit++)
			if (hwloc_bitmap_isset(set, (unsigned)(nib * 4) + bit))
				v |= 1u << bit;
		sb_printf(b, "%x", v);
	}
}

/* hwloc-calc locations for @set: logical core ranges when @set is made of
 * whole cores, else logical PU ranges ("core:8-15", "core:1-3 core:5"). */
static void sb_locations(struct sbuf *b, hwloc_topology_t topo, hwloc_const_bitmap_t set)
{
	hwloc_obj_type_t t = HWLOC_OBJ_CORE;
	hwloc_obj_t o = NULL;
	int whole = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE) > 0, first = 1;
	int run_start = -1, run_end = -1;
	const char *tn;

	if (whole)
		while ((o = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_CORE, o)))
			if (hwloc_bitmap_intersects(o->cpuset, set) && !hwloc_bitmap_isincluded(o->cpuset, set))
				whole = 0;
	if (!whole)
		t = HWLOC_OBJ_PU;
	tn = t == HWLOC_OBJ_CORE ? "core" : "pu";
	o = NULL;
	for (;;) {
		o = hwloc_get_next_obj_by_type(topo, t, o);
		if (o && hwloc_bitmap_intersects(o->cpuset, set)) {
			int li = (int)o->logical_index;
			if (run_start >= 0 && li == run_end + 1) {
				run_end = li;
				continue;
			}
			if (run_start >= 0) {
				sb_printf(b, first ? "%s:%d" : " %s:%d", tn, run_start);
				if (run_end > run_start)
					sb_printf(b, "-%d", run_end);
				first = 0;
			}
			run_start = run_end = li;
			continue;
		}
		if (!o)
			break;
	}
	if (run_start >= 0) {
		sb_printf(b, first ? "%s:%d" : " %s:%d", tn, run_start);
		if (run_end > run_start)
			sb_printf(b, "-%d", run_end);
	}
}

void ch_lc_lines_release(struct ch_lc_lines *l)
{
	free(l->numactl);
	free(l->hwloc_bind);
	free(l->in_process);
	l->numactl = l->hwloc_bind = l->in_process = NULL;
}

static int logical_numa(hwloc_topology_t topo, int os)
{
	hwloc_obj_t o = hwloc_get_numanode_obj_by_os_index(topo, (unsigned)os);
	return o ? (int)o->logical_index : -1;
}

int ch_lc_lines_make(hwloc_topology_t topo, const struct ch_lc_plan *plan, int gpu,
		     struct ch_lc_lines *out)
{
	struct sbuf a = { 0 }, h = { 0 }, p = { 0 };
	const struct ch_lc_place *pl;
	hwloc_bitmap_t u;
	char fb[1024], wb[1024], ub[1024];
	int mem;

	memset(out, 0, sizeof(*out));
	if (!plan || gpu < 0 || gpu >= plan->ngpus)
		return CH_ERR_USAGE;
	pl = &plan->gpu[gpu];
	if (!pl->bind) {
		sb_printf(&a, "(as-is: nothing bound) CMD");
		sb_printf(&h, "(as-is: nothing bound) CMD");
		sb_printf(&p, "feeder and workers inherit the launcher's affinity (CPUs %s)",
			  ch_cpuset_to_list(pl->feeder_cpus, fb, sizeof(fb)));
		goto done;
	}
	u = hwloc_bitmap_alloc();
	if (!u)
		return CH_ERR_RUNTIME;
	hwloc_bitmap_or(u, pl->feeder_cpus, pl->worker_cpus);
	mem = pl->mem_numa_os >= 0 ? pl->mem_numa_os : pl->cpu_numa_os;
	ch_cpuset_to_list(u, ub, sizeof(ub));
	ch_cpuset_to_list(pl->feeder_cpus, fb, sizeof(fb));
	ch_cpuset_to_list(pl->worker_cpus, wb, sizeof(wb));

	sb_printf(&a, "numactl --physcpubind=%s", ub);
	if (mem >= 0)
		sb_printf(&a, " --membind=%d", mem);
	sb_printf(&a, " -- CMD");

	sb_printf(&h, "hwloc-bind --cpubind ");
	sb_locations(&h, topo, u);
	if (mem >= 0 && logical_numa(topo, mem) >= 0)
		sb_printf(&h, " --membind node:%d", logical_numa(topo, mem));
	sb_printf(&h, " -- CMD");

	if (plan->placement == CH_LC_BASELINE)
		sb_printf(&p, "feeder on CPUs %s (no workers)", fb);
	else if (hwloc_bitmap_isequal(pl->feeder_cpus, pl->worker_cpus))
		sb_printf(&p, "feeder and workers share CPUs %s", fb);
	else
		sb_printf(&p, "feeder thread on CPUs %s, DataLoader workers on CPUs %s "
			  "(PyTorch: os.sched_setaffinity(0, WORKER_CPUS) in worker_init_fn, and "
			  "os.sched_setaffinity(0, FEEDER_CPUS) in the main process once the workers have started)",
			  fb, wb);
	hwloc_bitmap_free(u);
done:
	out->numactl = sb_take(&a);
	out->hwloc_bind = sb_take(&h);
	out->in_process = sb_take(&p);
	if (!out->numactl || !out->hwloc_bind || !out->in_process) {
		ch_lc_lines_release(out);
		return CH_ERR_RUNTIME;
	}
	return 0;
}

char *ch_lc_slurm_line(const struct ch_lc_plan *plan)
{
	struct sbuf b = { 0 };
	int i, allmem = 1;

	if (!plan || plan->ngpus < 1)
		return NULL;
	if (!plan->gpu[0].bind) {
		sb_printf(&b, "srun --cpu-bind=none CMD");
		return sb_take(&b);
	}
	sb_printf(&b, "srun --ntasks-per-node=%d --cpu-bind=mask_cpu:", plan->ngpus);
	for (i = 0; i < plan->ngpus; i++) {
		const struct ch_lc_place *pl = &plan->gpu[i];
		hwloc_bitmap_t u = hwloc_bitmap_alloc();
		if (!u) {
			free(b.s);
			return NULL;
		}
		hwloc_bitmap_or(u, pl->feeder_cpus, pl->worker_cpus);
		if (i)
			sb_printf(&b, ",");
		sb_hexmask(&b, u);
		hwloc_bitmap_free(u);
		if ((pl->mem_numa_os >= 0 ? pl->mem_numa_os : pl->cpu_numa_os) < 0)
			allmem = 0;
	}
	if (allmem) {
		sb_printf(&b, " --mem-bind=map_mem:");
		for (i = 0; i < plan->ngpus; i++) {
			const struct ch_lc_place *pl = &plan->gpu[i];
			sb_printf(&b, i ? ",%d" : "%d", pl->mem_numa_os >= 0 ? pl->mem_numa_os : pl->cpu_numa_os);
		}
	}
	sb_printf(&b, " CMD");
	return sb_take(&b);
}
