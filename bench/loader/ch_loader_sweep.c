/*
 * ch_loader_sweep.c - loader_contention's two modes: the sweep on this
 * machine (run mode) and the plan for another machine (--topology).
 * Prints the table, the verdict and the recommendation; fills the result
 * document (docs/results-schema.md, "loader_contention").
 */
#include "bench/loader/ch_loader.h"
#include "bench/loader/ch_loader_copy.h"
#include "bench/loader/ch_loader_run.h"
#include "bench/common/ch_opts.h"
#include "base/ch_common.h"
#include "hw/ch_host.h"
#include "base/ch_parse.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LC_MAX_CONFIGS (1 + CH_LC_MAX_WORKER_COUNTS * CH_LC_NPLACEMENTS)
#define LC_SEED 0x6c6f61646572ull /* "loader": the shard is the same everywhere */

static json_t *num_or_null(double v)
{
	return v < 0 ? json_null() : json_real(v);
}

/* List string of the union of one kind of set over all GPUs. */
static json_t *union_list(const struct ch_lc_plan *p, int workers)
{
	hwloc_bitmap_t u = hwloc_bitmap_alloc();
	char buf[2048];
	int g;
	if (!u)
		return json_null();
	for (g = 0; g < p->ngpus; g++)
		hwloc_bitmap_or(u, u, workers ? p->gpu[g].worker_cpus : p->gpu[g].feeder_cpus);
	ch_cpuset_to_list(u, buf, sizeof(buf));
	hwloc_bitmap_free(u);
	return json_string(buf);
}

/* The binding lines of GPU @g of @p into @o: "numactl", "hwloc_bind",
 * "in_process" (none when they cannot be made). */
static void set_lines_json(json_t *o, hwloc_topology_t topo, const struct ch_lc_plan *p, int g)
{
	struct ch_lc_lines l;

	if (ch_lc_lines_make(topo, p, g, &l) != 0)
		return;
	json_object_set_new(o, "numactl", json_string(l.numactl));
	json_object_set_new(o, "hwloc_bind", json_string(l.hwloc_bind));
	json_object_set_new(o, "in_process", json_string(l.in_process));
	ch_lc_lines_release(&l);
}

static json_t *place_json(hwloc_topology_t topo, const struct ch_lc_plan *p, int g, int workers)
{
	const struct ch_lc_place *pl = &p->gpu[g];
	json_t *o = json_object();
	char buf[2048];

	json_object_set_new(o, "gpu", json_integer(g));
	json_object_set_new(o, "feeder_cpus", json_string(ch_cpuset_to_list(pl->feeder_cpus, buf, sizeof(buf))));
	json_object_set_new(o, "worker_cpus", json_string(ch_cpuset_to_list(pl->worker_cpus, buf, sizeof(buf))));
	json_object_set_new(o, "feeder_cores", json_integer(pl->feeder_cores));
	json_object_set_new(o, "worker_cores", json_integer(pl->worker_cores));
	json_object_set_new(o, "feeder_core_shared_by", json_integer(pl->feeder_sharers));
	json_object_set_new(o, "worker_cores_shared_by", json_integer(pl->worker_sharers));
	json_object_set_new(o, "numa_node", pl->cpu_numa_os >= 0 ? json_integer(pl->cpu_numa_os) : json_null());
	json_object_set_new(o, "mem_numa_node", pl->mem_numa_os >= 0 ? json_integer(pl->mem_numa_os) : json_null());
	if (workers >= 0)
		json_object_set_new(o, "workers", json_integer(workers));
	set_lines_json(o, topo, p, g);
	return o;
}

/* Suggested workers per GPU in plan mode: one per worker core it owns. */
static int plan_workers(const struct ch_lc_place *pl, int asked)
{
	int w;
	if (asked > 0)
		return asked;
	w = pl->worker_sharers > 0 ? pl->worker_cores / pl->worker_sharers : pl->worker_cores;
	return w < 1 ? 1 : w;
}

static void print_lines(hwloc_topology_t topo, const struct ch_lc_plan *p, int g, const char *indent,
			int in_process)
{
	struct ch_lc_lines l;
	if (ch_lc_lines_make(topo, p, g, &l) != 0)
		return;
	if (in_process)
		printf("%s%s\n", indent, l.in_process);
	printf("%s%s\n%s%s\n", indent, l.numactl, indent, l.hwloc_bind);
	ch_lc_lines_release(&l);
}

/* ------------------------------------------------------------- plan mode */

/* A placement that could not be planned here, and why. */
struct lc_skip {
	int placement; /* enum ch_lc_placement */
	char reason[256];
};

static json_t *skipped_json(const struct lc_skip *sk, int n)
{
	json_t *a = json_array();
	int i;
	for (i = 0; i < n; i++) {
		json_t *s = json_object();
		json_object_set_new(s, "placement", json_string(ch_lc_placement_name(sk[i].placement)));
		json_object_set_new(s, "reason", json_string(sk[i].reason));
		json_array_append_new(a, s);
	}
	return a;
}

static void print_skipped(const struct lc_skip *sk, int n)
{
	int i;
	for (i = 0; i < n; i++)
		printf("skipped %s: %s\n", ch_lc_placement_name(sk[i].placement), sk[i].reason);
}

/* Plan mode: the placements of a topology file's GPUs, and which of them
 * to recommend. Filled by plan_load() and plan_placements(); read by the
 * emitters. */
#define LC_NPLANNED 4

struct lc_planned {
	const struct ch_lc_opts *o;
	hwloc_topology_t topo;
	struct ch_lc_gpu gpus[CH_LC_MAX_GPUS];
	int ng;                           /* GPUs planned for */
	int nloaded;                      /* entries of gpus[] to release (>= ng) */
	int asked;                        /* workers per GPU given (one --workers value), or 0 */
	struct ch_lc_plan plans[LC_NPLANNED]; /* in plan_order[]; [0] is the recommendation */
	int have[LC_NPLANNED];
	struct lc_skip skipped[LC_NPLANNED];
	int nskipped;
};

static const int plan_order[LC_NPLANNED] = { CH_LC_ISOLATED, CH_LC_SHARED, CH_LC_NUMA_LOCAL, CH_LC_NUMA_REMOTE };

/* The topology file and its GPUs. On failure, what is loaded is released
 * here. */
static int plan_load(struct lc_planned *pv, char *reason, size_t rn)
{
	const struct ch_lc_opts *o = pv->o;
	int n, rc;

	if ((rc = ch_topo_load(o->topology, &pv->topo)) != 0) {
		snprintf(reason, rn, "cannot load topology '%s'", o->topology);
		return rc;
	}
	n = ch_lc_gpus_find(pv->topo, pv->gpus, CH_LC_MAX_GPUS);
	if (n < 0) {
		rc = CH_ERR_RUNTIME;
	} else if (n == 0) {
		rc = ch_usage_error("topology '%s' has no GPU (no NVIDIA, AMD or Intel display or 3D controller on its PCI bus); nothing to plan",
				    o->topology);
		snprintf(reason, rn, "topology '%s' has no GPU", o->topology);
	} else {
		pv->ng = n > CH_LC_MAX_GPUS ? CH_LC_MAX_GPUS : n;
		pv->nloaded = pv->ng;
		if (o->gpus > pv->ng) {
			rc = ch_usage_error("--gpus '%d' but topology '%s' has %d GPU(s)", o->gpus, o->topology, pv->ng);
			snprintf(reason, rn, "--gpus %d exceeds the %d GPU(s) of the topology", o->gpus, pv->ng);
			ch_lc_gpus_release(pv->gpus, pv->ng);
		} else if (o->gpus > 0) {
			pv->ng = o->gpus;
		}
	}
	if (rc) {
		hwloc_topology_destroy(pv->topo);
		return rc;
	}
	if (o->nworkers == 1)
		pv->asked = o->workers[0];
	return 0;
}

/* Every placement of plan_order[]; one that does not exist on the
 * topology is skipped with its reason. */
static int plan_placements(struct lc_planned *pv, char *reason, size_t rn)
{
	int i;

	for (i = 0; i < LC_NPLANNED; i++) {
		int p = plan_order[i], prc;
		char why[256];
		prc = ch_lc_plan_make(pv->topo, pv->gpus, pv->ng, p, NULL, &pv->plans[i], why, sizeof(why));
		if (prc == CH_ERR_UNAVAILABLE) {
			pv->skipped[pv->nskipped].placement = p;
			snprintf(pv->skipped[pv->nskipped].reason, sizeof(pv->skipped[0].reason), "%s", why);
			pv->nskipped++;
			continue;
		}
		if (prc) {
			snprintf(reason, rn, "cannot plan placement '%s': %s", ch_lc_placement_name(p), why);
			ch_error("cannot plan placement '%s' on '%s'%s%s", ch_lc_placement_name(p), pv->o->topology,
				 *why ? ": " : "", why);
			return prc;
		}
		pv->have[i] = 1;
	}
	return 0;
}

static void print_plan_header(const struct lc_planned *pv)
{
	printf("plan for %s: %d GPU(s), %d core(s), %d NUMA node(s) (hwloc XML; nothing is run or bound)\n",
	       pv->o->topology, pv->ng, hwloc_get_nbobjs_by_type(pv->topo, HWLOC_OBJ_CORE),
	       hwloc_get_nbobjs_by_type(pv->topo, HWLOC_OBJ_NUMANODE));
}

/* The recommendation (isolated: a reserved core per feeder) as a table and
 * binding lines, then what was skipped. */
static void print_plan(const struct lc_planned *pv)
{
	const struct ch_lc_plan *p = &pv->plans[0];
	char *slurm = ch_lc_slurm_line(p);
	int g;

	printf("\n%-4s %-14s %-5s %-16s %-24s %-8s %s\n", "gpu", "pci", "numa", "feeder cpus", "worker cpus", "workers", "shared by");
	for (g = 0; g < pv->ng; g++) {
		const struct ch_lc_place *pl = &p->gpu[g];
		char fb[256], wb[256];
		printf("%-4d %-14s %-5d %-16s %-24s %-8d feeder core: %d GPU(s), worker cores: %d GPU(s)\n", g,
		       pv->gpus[g].pci_bus_id, pl->cpu_numa_os, ch_cpuset_to_list(pl->feeder_cpus, fb, sizeof(fb)),
		       ch_cpuset_to_list(pl->worker_cpus, wb, sizeof(wb)), plan_workers(pl, pv->asked),
		       pl->feeder_sharers, pl->worker_sharers);
	}
	if (p->note[0])
		printf("note: %s\n", p->note);
	printf("\nplacement: isolated (feeder on a reserved core of the GPU's locality, workers on the others)\n"
	       "one rank per GPU, bound with one of these lines; inside the rank, pin the feeder thread and the\n"
	       "DataLoader workers to their CPUs from the table (PyTorch: os.sched_setaffinity(0, WORKER_CPUS) in\n"
	       "worker_init_fn, os.sched_setaffinity(0, FEEDER_CPUS) in the main process once the workers have started)\n");
	for (g = 0; g < pv->ng; g++) {
		printf("  GPU %d:\n", g);
		print_lines(pv->topo, p, g, "    ", 0);
	}
	printf("  slurm (one rank per GPU): %s\n", slurm ? slurm : "?");
	print_skipped(pv->skipped, pv->nskipped);
	free(slurm);
}

/* Every GPU of one plan, with the workers it would get. */
static json_t *plan_per_gpu_json(const struct lc_planned *pv, const struct ch_lc_plan *p)
{
	json_t *arr = json_array();
	int g;
	for (g = 0; g < pv->ng; g++)
		json_array_append_new(arr, place_json(pv->topo, p, g, plan_workers(&p->gpu[g], pv->asked)));
	return arr;
}

static void emit_plan_json(const struct lc_planned *pv, json_t *res)
{
	const struct ch_lc_plan *p = &pv->plans[0];
	json_t *rec = json_object(), *jplan = json_object(), *jg = json_array();
	char *slurm = ch_lc_slurm_line(p), buf[2048];
	int i, g;

	json_object_set_new(rec, "placement", json_string("isolated"));
	json_object_set_new(rec, "workers", json_integer(plan_workers(&p->gpu[0], pv->asked)));
	set_lines_json(rec, pv->topo, p, 0);
	json_object_set_new(rec, "slurm", slurm ? json_string(slurm) : json_null());
	json_object_set_new(rec, "feeder_cpus", union_list(p, 0));
	json_object_set_new(rec, "worker_cpus", union_list(p, 1));
	json_object_set_new(rec, "note", json_string(p->note));
	json_object_set_new(rec, "per_gpu", plan_per_gpu_json(pv, p));
	free(slurm);
	json_object_set_new(res, "recommendation", rec);
	for (g = 0; g < pv->ng; g++) {
		json_t *e = json_object();
		json_object_set_new(e, "gpu", json_integer(g));
		json_object_set_new(e, "pci_bus_id", json_string(pv->gpus[g].pci_bus_id));
		json_object_set_new(e, "name", json_string(pv->gpus[g].name));
		json_object_set_new(e, "local_cpus", json_string(ch_cpuset_to_list(pv->gpus[g].cpuset, buf, sizeof(buf))));
		json_array_append_new(jg, e);
	}
	for (i = 0; i < LC_NPLANNED; i++)
		if (pv->have[i])
			json_object_set_new(jplan, ch_lc_placement_name(plan_order[i]), plan_per_gpu_json(pv, &pv->plans[i]));
	json_object_set_new(res, "mode", json_string("plan"));
	json_object_set_new(res, "topology", json_string(pv->o->topology));
	json_object_set_new(res, "gpus", jg);
	json_object_set_new(res, "plan", jplan);
	json_object_set_new(res, "skipped", skipped_json(pv->skipped, pv->nskipped));
}

int ch_lc_plan_mode(const struct ch_lc_opts *o, struct ch_result *r, char *reason, size_t rn)
{
	struct lc_planned pv;
	int i, rc;

	memset(&pv, 0, sizeof(pv));
	pv.o = o;
	if ((rc = plan_load(&pv, reason, rn)) != 0)
		return rc;
	print_plan_header(&pv);
	if ((rc = plan_placements(&pv, reason, rn)) == 0) {
		print_plan(&pv);
		emit_plan_json(&pv, ch_result_results(r));
	}
	for (i = 0; i < LC_NPLANNED; i++)
		ch_lc_plan_release(&pv.plans[i]);
	ch_lc_gpus_release(pv.gpus, pv.nloaded);
	hwloc_topology_destroy(pv.topo);
	return rc;
}

/* -------------------------------------------------------------- run mode */

static const struct ch_lc_copy_backend *choose_copy(const struct ch_lc_opts *o, char *note, size_t nn,
						    int *rc)
{
	const struct ch_lc_copy_backend *cuda = ch_lc_copy_find("cuda");
	char why[640] = ""; /* a driver older than the build's CUDA: versions and the fix */

	*rc = 0;
	note[0] = '\0';
	if (o->copy == CH_LC_COPY_STAGING)
		return &ch_lc_copy_staging;
	if (!cuda) {
		snprintf(why, sizeof(why), "CUDA support not built in");
	} else if (cuda->probe(why, sizeof(why)) == 0) {
		return cuda;
	}
	if (o->copy == CH_LC_COPY_CUDA) {
		snprintf(note, nn, "--copy cuda: %s", why);
		*rc = CH_ERR_UNAVAILABLE;
		return NULL;
	}
	snprintf(note, nn, "%s: feeding a host staging buffer instead of a device", why);
	return &ch_lc_copy_staging;
}

static int busid_eq(const char *a, const char *b)
{
	unsigned x[4], y[4];
	if (sscanf(a, "%x:%x:%x.%x", &x[0], &x[1], &x[2], &x[3]) != 4 ||
	    sscanf(b, "%x:%x:%x.%x", &y[0], &y[1], &y[2], &y[3]) != 4)
		return 0;
	return !memcmp(x, y, sizeof(x));
}

/* Localities of the G feeders: the GPUs the copy backend uses when they are
 * in the topology, else hwloc's GPUs in PCI order, else emulated ones. */
static int feeder_gpus(hwloc_topology_t topo, const struct ch_lc_copy_backend *cb, int G,
		       struct ch_lc_gpu *out, int *real)
{
	struct ch_lc_gpu found[CH_LC_MAX_GPUS];
	int n = ch_lc_gpus_find(topo, found, CH_LC_MAX_GPUS), j, k, rc = 0;

	*real = 0;
	if (n < 0)
		return CH_ERR_RUNTIME;
	if (n > CH_LC_MAX_GPUS)
		n = CH_LC_MAX_GPUS;
	if (n < G) {
		ch_lc_gpus_release(found, n);
		return ch_lc_gpus_emulate(topo, G, out);
	}
	for (j = 0; j < G; j++) {
		int pick = j;
		char bus[32];
		if (cb->pci_bus_id && cb->count() > 0 &&
		    cb->pci_bus_id(j % cb->count(), bus, sizeof(bus)) == 0)
			for (k = 0; k < n; k++)
				if (busid_eq(bus, found[k].pci_bus_id))
					pick = k;
		out[j] = found[pick];
		out[j].cpuset = hwloc_bitmap_dup(found[pick].cpuset);
		if (!out[j].cpuset)
			rc = CH_ERR_RUNTIME;
	}
	*real = 1;
	ch_lc_gpus_release(found, n);
	if (rc)
		ch_lc_gpus_release(out, G);
	return rc;
}

static void print_header_row(void)
{
	printf("%-15s %3s %-9s %-9s %8s %8s %8s %6s %6s %7s %8s %6s %5s %5s %5s  %s\n", "config", "wrk",
	       "feeder", "workers", "late_p50", "late_p99", "late_max", "wait%", "util%", "batch/s", "runq_us",
	       "invcsw", "psi%", "host%", "steal", "verdict");
}

static void fmt_num(char *b, size_t n, double v, const char *fmt)
{
	if (v < 0)
		snprintf(b, n, "-");
	else
		snprintf(b, n, fmt, v);
}

static void print_row(const struct ch_lc_cfg *c, const struct ch_lc_metrics *m)
{
	char fb[64], wb[64], rq[32], cs[32], psi[32], host[32], st[32];
	json_t *f = union_list(c->plan, 0), *w = union_list(c->plan, 1);
	snprintf(fb, sizeof(fb), "%s", json_string_value(f));
	snprintf(wb, sizeof(wb), "%s", c->workers ? json_string_value(w) : "-");
	json_decref(f);
	json_decref(w);
	fmt_num(rq, sizeof(rq), m->runq_delay_us, "%.1f");
	fmt_num(cs, sizeof(cs), m->invol_ctx_switches, "%.0f");
	fmt_num(psi, sizeof(psi), m->psi_some_frac < 0 ? -1 : 100 * m->psi_some_frac, "%.1f");
	fmt_num(host, sizeof(host), m->host_cpu_util < 0 ? -1 : 100 * m->host_cpu_util, "%.0f");
	fmt_num(st, sizeof(st), m->steal_frac < 0 ? -1 : 100 * m->steal_frac, "%.1f");
	printf("%-15s %3d %-9s %-9s %8.0f %8.0f %8.0f %6.1f %6.1f %7.1f %8s %6s %5s %5s %5s  %s\n", c->name,
	       c->workers, fb, wb, m->late_p50_us, m->late_p99_us, m->late_max_us, 100 * m->input_wait_frac,
	       100 * m->accel_util, m->batches_per_sec, rq, cs, psi, host, st, ch_lc_verdict_name(m->verdict));
	fflush(stdout);
}

static json_t *config_json(const struct ch_lc_cfg *c, const struct ch_lc_metrics *m, hwloc_topology_t topo)
{
	json_t *o = json_object(), *lat = json_object(), *rs = json_array(), *per = json_array();
	int i, g;

	json_object_set_new(o, "name", json_string(c->name));
	json_object_set_new(o, "placement", json_string(ch_lc_placement_name(c->placement)));
	json_object_set_new(o, "workers", json_integer(c->workers));
	json_object_set_new(o, "hog_util", json_real(c->hog_util));
	json_object_set_new(o, "feeder_cpus", union_list(c->plan, 0));
	json_object_set_new(o, "worker_cpus", c->workers ? union_list(c->plan, 1) : json_string(""));
	json_object_set_new(lat, "p50", json_real(m->late_p50_us));
	json_object_set_new(lat, "p99", json_real(m->late_p99_us));
	json_object_set_new(lat, "max", json_real(m->late_max_us));
	json_object_set_new(o, "lateness_us", lat);
	json_object_set_new(o, "input_wait_frac", json_real(m->input_wait_frac));
	json_object_set_new(o, "accel_util", json_real(m->accel_util));
	json_object_set_new(o, "repeats", json_integer(m->repeats));
	json_object_set_new(o, "input_wait_frac_sd", isnan(m->input_wait_frac_sd) ? json_null() : json_real(m->input_wait_frac_sd));
	json_object_set_new(o, "accel_util_sd", isnan(m->accel_util_sd) ? json_null() : json_real(m->accel_util_sd));
	json_object_set_new(o, "batches_per_sec", json_real(m->batches_per_sec));
	json_object_set_new(o, "runq_delay_us", num_or_null(m->runq_delay_us));
	json_object_set_new(o, "invol_ctx_switches", num_or_null(m->invol_ctx_switches));
	json_object_set_new(o, "psi_cpu_some_avg10", num_or_null(m->psi_some_avg10));
	json_object_set_new(o, "host_cpu_util", num_or_null(m->host_cpu_util));
	json_object_set_new(o, "steal_frac", num_or_null(m->steal_frac));
	json_object_set_new(o, "verdict", json_string(ch_lc_verdict_name(m->verdict)));
	for (i = 0; i < m->nreasons; i++)
		json_array_append_new(rs, json_string(m->reasons[i]));
	json_object_set_new(o, "reasons", rs);
	/* additions (documented in docs/results-schema.md) */
	json_object_set_new(o, "steps", json_integer(m->steps));
	json_object_set_new(o, "wall_sec", json_real(m->wall_sec));
	json_object_set_new(o, "input_wait_p99_us", json_real(m->wait_p99_us));
	json_object_set_new(o, "copy_p50_us", json_real(m->copy_p50_us));
	json_object_set_new(o, "psi_cpu_some_frac", num_or_null(m->psi_some_frac));
	json_object_set_new(o, "worker_invol_ctx_switches", num_or_null(m->worker_invol_ctx_switches));
	json_object_set_new(o, "worker_cpu_sec", json_real(m->worker_cpu_sec));
	json_object_set_new(o, "bad_batches", json_integer(m->bad_batches));
	for (g = 0; g < c->plan->ngpus; g++)
		json_array_append_new(per, place_json(topo, c->plan, g, c->workers));
	json_object_set_new(o, "per_gpu", per);
	return o;
}

/* One sweep on this machine: what it ran on, what it measured and what it
 * decided. Filled by the measuring steps below; read by the emitters (the
 * result document and the printed table, verdict and recommendation). */
struct lc_sweep {
	const struct ch_lc_opts *o;
	hwloc_topology_t topo;
	hwloc_bitmap_t pbind, tbind;     /* process and main-thread binding */
	int collapsed;                   /* either has collapsed to one CPU */
	char abuf[256], pbuf[256], tbuf[256]; /* allowed, process, thread CPU lists */
	const struct ch_lc_copy_backend *cb;
	char note[768];                  /* why the copy backend is what it is, or "" */
	int G, real;                     /* feeders; localities of real GPUs */
	struct ch_lc_gpu gpus[CH_LC_MAX_GPUS];
	int ngpus_loaded;                /* entries of gpus[] to release */
	struct ch_lc_env env;
	double unit_sec, batch_sec;      /* calibrated work unit; CPU time per batch asked */
	struct ch_lc_plan plans[CH_LC_NPLACEMENTS];
	int have_plan[CH_LC_NPLACEMENTS];
	struct lc_skip skipped[CH_LC_NPLACEMENTS];
	int nskipped;
	struct ch_lc_cfg cfgs[LC_MAX_CONFIGS];
	struct ch_lc_metrics mets[LC_MAX_CONFIGS];
	struct ch_lc_choice choices[LC_MAX_CONFIGS];
	int ncfg;
	long bad_total;                  /* bad batches, all configurations */
	int best, overall;               /* recommended configuration (-1: none); verdict */
	int not_judged;                  /* 1: the host was busy before the load (busy_why) */
	char busy_why[512];
};

/* Affinity: has the process or this thread collapsed to one CPU? */
static int sweep_affinity(struct lc_sweep *sw)
{
	hwloc_const_bitmap_t allowed = hwloc_topology_get_allowed_cpuset(sw->topo);

	sw->pbind = hwloc_bitmap_alloc();
	sw->tbind = hwloc_bitmap_alloc();
	if (!sw->pbind || !sw->tbind)
		return CH_ERR_RUNTIME;
	if (hwloc_get_cpubind(sw->topo, sw->pbind, HWLOC_CPUBIND_PROCESS) != 0)
		hwloc_bitmap_copy(sw->pbind, allowed);
	if (hwloc_get_cpubind(sw->topo, sw->tbind, HWLOC_CPUBIND_THREAD) != 0)
		hwloc_bitmap_copy(sw->tbind, sw->pbind);
	sw->collapsed = ch_lc_mask_collapsed(allowed, sw->pbind) || ch_lc_mask_collapsed(allowed, sw->tbind);
	ch_cpuset_to_list(allowed, sw->abuf, sizeof(sw->abuf));
	ch_cpuset_to_list(sw->pbind, sw->pbuf, sizeof(sw->pbuf));
	ch_cpuset_to_list(sw->tbind, sw->tbuf, sizeof(sw->tbuf));
	return 0;
}

/* Feeders, one per GPU, and their copy paths. */
static int sweep_feeders(struct lc_sweep *sw)
{
	const struct ch_lc_opts *o = sw->o;
	const struct ch_lc_copy_backend *cb = sw->cb;
	int G = o->gpus, g, rc;

	if (G <= 0) {
		int n = ch_lc_gpus_find(sw->topo, NULL, 0);
		G = (cb != &ch_lc_copy_staging) ? cb->count() : n > 0 ? n : 1;
		if (G < 1)
			G = 1;
		if (G > CH_LC_MAX_GPUS)
			G = CH_LC_MAX_GPUS;
	}
	sw->G = G;
	if ((rc = feeder_gpus(sw->topo, cb, G, sw->gpus, &sw->real)) != 0)
		return rc;
	sw->ngpus_loaded = G;
	sw->env.ngpus = G;
	sw->env.step_sec = o->step_sec;
	sw->env.duration_sec = o->duration_sec;
	sw->env.prefetch = o->prefetch;
	sw->env.ntok = (size_t)(o->batch_bytes / 4);
	for (g = 0; g < G; g++) {
		char why[256] = "";
		if ((rc = cb->open(cb->count() > 0 ? g % cb->count() : 0, (size_t)o->batch_bytes,
				   &sw->env.copy_ctx[g], why, sizeof(why))) != 0) {
			if (why[0])
				ch_error("%s", why);
			return rc;
		}
	}
	return 0;
}

/* The work per batch, calibrated on this machine, and the reference
 * checksums. */
static int sweep_calibrate(struct lc_sweep *sw, char *reason, size_t rn)
{
	const struct ch_lc_opts *o = sw->o;
	int rc;

	if ((rc = ch_lc_shard_make(&sw->env.shard, LC_SEED)) != 0)
		return rc;
	sw->unit_sec = ch_lc_unit_sec(&sw->env.shard, 40);
	if (sw->unit_sec < 0) {
		snprintf(reason, rn, "calibration failed: the synthetic shard did not inflate to its checksum");
		return sw->unit_sec == CH_ERR_CHECK ? CH_ERR_CHECK : CH_ERR_RUNTIME;
	}
	sw->batch_sec = o->batch_sec > 0 ? o->batch_sec : 0.8 * o->step_sec;
	sw->env.units = ch_lc_units_per_batch(sw->batch_sec, sw->unit_sec);
	if ((rc = ch_lc_env_expect(&sw->env)) != 0) {
		snprintf(reason, rn, "could not produce the reference batches");
		return rc;
	}
	return 0;
}

/* The plans of the baseline and of every placement asked for; a placement
 * that does not exist here is skipped with its reason. */
static int sweep_plans(struct lc_sweep *sw, char *reason, size_t rn)
{
	int p;

	for (p = CH_LC_BASELINE; p < CH_LC_NPLACEMENTS; p++) {
		char why[256];
		int prc;
		if (p != CH_LC_BASELINE && !sw->o->placements[p])
			continue;
		prc = ch_lc_plan_make(sw->topo, sw->gpus, sw->G, p, p == CH_LC_AS_IS ? sw->tbind : NULL, &sw->plans[p],
				      why, sizeof(why));
		if (prc == CH_ERR_UNAVAILABLE) {
			sw->skipped[sw->nskipped].placement = p;
			snprintf(sw->skipped[sw->nskipped].reason, sizeof(sw->skipped[0].reason), "%s", why);
			sw->nskipped++;
			continue;
		}
		if (prc) {
			snprintf(reason, rn, "cannot plan placement '%s'%s%s", ch_lc_placement_name(p), *why ? ": " : "", why);
			ch_error("%s", reason);
			return prc;
		}
		sw->have_plan[p] = 1;
	}
	return 0;
}

/* The configurations: baseline, then each worker count x placement. */
static void sweep_configs(struct lc_sweep *sw)
{
	const struct ch_lc_opts *o = sw->o;
	int w, p;

	sw->cfgs[0] = (struct ch_lc_cfg){ .placement = CH_LC_BASELINE, .workers = 0, .hog_util = 0,
					  .plan = &sw->plans[CH_LC_BASELINE] };
	snprintf(sw->cfgs[0].name, sizeof(sw->cfgs[0].name), "baseline");
	sw->ncfg = 1;
	for (w = 0; w < o->nworkers; w++)
		for (p = CH_LC_SHARED; p < CH_LC_NPLACEMENTS; p++) {
			struct ch_lc_cfg *c = &sw->cfgs[sw->ncfg];
			if (!sw->have_plan[p])
				continue;
			*c = (struct ch_lc_cfg){ .placement = p, .workers = o->workers[w], .hog_util = o->hog_util,
						 .plan = &sw->plans[p] };
			snprintf(c->name, sizeof(c->name), "%s-w%d", ch_lc_placement_name(p), o->workers[w]);
			sw->ncfg++;
		}
}

/* The results skeleton, written before the first measurement. */
static void emit_skeleton_json(const struct lc_sweep *sw, json_t *res)
{
	const struct ch_lc_opts *o = sw->o;
	json_t *b = json_object(), *t = json_object(), *mk = json_object();

	json_object_set_new(res, "mode", json_string("run"));
	json_object_set_new(res, "step_ms", json_real(o->step_sec * 1e3));
	json_object_set_new(res, "duration_sec", json_real(sw->env.duration_sec));
	json_object_set_new(res, "gpus_emulated", json_integer(sw->G));
	json_object_set_new(res, "gpus_real", json_boolean(sw->real));
	json_object_set_new(res, "cuda_copies", json_boolean(sw->cb != &ch_lc_copy_staging));
	json_object_set_new(res, "copy_backend", json_string(sw->cb->name));
	json_object_set_new(res, "copy_note", sw->note[0] ? json_string(sw->note) : json_null());
	json_object_set_new(b, "bytes", json_integer((json_int_t)o->batch_bytes));
	json_object_set_new(b, "units", json_integer(sw->env.units));
	json_object_set_new(b, "unit_bytes", json_integer(CH_LC_CHUNK_BYTES));
	json_object_set_new(b, "unit_us", json_real(sw->unit_sec * 1e6));
	json_object_set_new(b, "cpu_ms_target", json_real(sw->batch_sec * 1e3));
	json_object_set_new(b, "cpu_ms_calibrated", json_real(sw->env.units * sw->unit_sec * 1e3));
	json_object_set_new(b, "prefetch", json_integer(o->prefetch));
	json_object_set_new(res, "batch", b);
	json_object_set_new(t, "input_wait_warn_frac", json_real(CH_LC_WAIT_WARN_FRAC));
	json_object_set_new(t, "input_wait_fail_frac", json_real(CH_LC_WAIT_FAIL_FRAC));
	json_object_set_new(t, "input_wait_source", json_string(CH_LC_WAIT_SOURCE));
	json_object_set_new(t, "accel_util_pass_frac", json_real(CH_LC_UTIL_PASS_FRAC));
	json_object_set_new(t, "accel_util_fail_frac", json_real(CH_LC_UTIL_FAIL_FRAC));
	json_object_set_new(t, "accel_util_source", json_string(CH_LC_UTIL_SOURCE));
	json_object_set_new(res, "thresholds", t);
	json_object_set_new(mk, "allowed_cpus", json_string(sw->abuf));
	json_object_set_new(mk, "process_cpus", json_string(sw->pbuf));
	json_object_set_new(mk, "thread_cpus", json_string(sw->tbuf));
	json_object_set_new(res, "affinity", mk);
	json_object_set_new(res, "mask_collapsed", json_boolean(sw->collapsed));
	json_object_set_new(res, "configs", json_array());
	json_object_set_new(res, "skipped", skipped_json(sw->skipped, sw->nskipped));
	json_object_set_new(res, "verdict", json_null());
	json_object_set_new(res, "not_judged_reason", json_null());
	json_object_set_new(res, "recommendation", json_null());
}

/* What runs, on what, and the table's header. */
static void print_intro(const struct lc_sweep *sw)
{
	const struct ch_lc_opts *o = sw->o;
	char buf[2048];

	ch_info("loader_contention: %d %s GPU(s), device hand-off: %s%s%s", sw->G, sw->real ? "real" : "emulated",
		sw->cb->name, sw->note[0] ? " - " : "", sw->note);
	ch_info("step %.1f ms, %.2f s measured per configuration; batch %s collated from %d work units (inflate 64K + tokenize) = %.2f ms of CPU (target %.2f ms%s)",
		o->step_sec * 1e3, sw->env.duration_sec, ch_format_size(o->batch_bytes, buf, sizeof(buf)), sw->env.units,
		sw->env.units * sw->unit_sec * 1e3, sw->batch_sec * 1e3, o->batch_sec > 0 ? "" : " = 0.8 x step");
	ch_info("affinity: allowed CPUs %s, process bound to %s, main thread to %s%s", sw->abuf, sw->pbuf, sw->tbuf,
		sw->collapsed ? " - COLLAPSED to a single CPU" : "");
	if (sw->collapsed)
		ch_warn("the affinity mask has collapsed to CPU '%s' (allowed: %s): every DataLoader worker forked from this process would share that one CPU; check the launcher's binding and OMP_PROC_BIND / GOMP_CPU_AFFINITY / KMP_AFFINITY",
			hwloc_bitmap_weight(sw->pbind) == 1 ? sw->pbuf : sw->tbuf, sw->abuf);
	if (o->hog_util > 0)
		ch_info("hog: %.0f%% busy on every worker CPU during the worker configurations (not the baseline)",
			100 * o->hog_util);
	printf("\n");
	print_header_row();
}

/* Run, judge and emit every configuration in turn: each is added to the
 * result file (checkpointed) and printed as soon as it is measured. */
static int sweep_measure(struct lc_sweep *sw, struct ch_result *r, char *reason, size_t rn)
{
	json_t *jc = json_object_get(ch_result_results(r), "configs");
	int i, rc;

	for (i = 0; i < sw->ncfg; i++) {
		const struct ch_lc_cfg *c = &sw->cfgs[i];
		struct ch_lc_metrics *m = &sw->mets[i];
		rc = ch_lc_run_config(&sw->env, c, m);
		if (rc) {
			snprintf(reason, rn, "configuration '%s' failed to run", c->name);
			return rc;
		}
		ch_lc_judge(m, c->workers > 0);
		sw->bad_total += m->bad_batches;
		json_array_append_new(jc, config_json(c, m, sw->topo));
		ch_result_checkpoint(r);
		print_row(c, m);
		sw->choices[i] = (struct ch_lc_choice){ c->placement, c->workers, m->verdict, m->accel_util };
	}
	return 0;
}

/* Under the table: what the columns are, every reason, what was skipped. */
static void print_footer(const struct lc_sweep *sw)
{
	int i, k;

	printf("\nlate_*: feeder wake-up minus its deadline, us, percentiles over every step; wait%%: time blocked on the\n"
	       "batch queue / wall time; util%%: emulated device busy / wall time; batch/s: batches handed over, all\n"
	       "feeders; runq_us: feeder run-queue wait per step (schedstat), mean; invcsw: feeder involuntary context\n"
	       "switches; psi%%: /proc/pressure/cpu \"some\" stall time / wall time; host%%, steal: /proc/stat, all CPUs.\n");
	for (i = 0; i < sw->ncfg; i++)
		for (k = 0; k < sw->mets[i].nreasons; k++)
			printf("%s: %s\n", sw->cfgs[i].name, sw->mets[i].reasons[k]);
	print_skipped(sw->skipped, sw->nskipped);
}

static double before_pct(struct ch_result *r, const char *key)
{
	const json_t *v = json_object_get(json_object_get(json_object_get(ch_result_doc(r), "conditions"), "before"), key);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

/* The verdict and the configuration to recommend. A host busy with other
 * work before the load started gives no verdict ("not judged": the
 * feeders would be late from the other work, not from the placement),
 * unless a hard fault (a collapsed mask, a bad batch) fails it. */
static void sweep_decide(struct lc_sweep *sw, struct ch_result *r)
{
	sw->best = ch_lc_pick(sw->choices, sw->ncfg, !sw->collapsed);
	sw->overall = sw->best >= 0 ? sw->mets[sw->best].verdict : CH_LC_FAIL;
	if (sw->collapsed || sw->bad_total > 0) {
		sw->overall = CH_LC_FAIL;
		return;
	}
	sw->not_judged = ch_lc_host_busy(before_pct(r, "cpu_pressure_some_avg10_pct"), before_pct(r, "cpu_busy_pct"),
					 sw->ncfg > 0 ? sw->mets[0].psi_some_avg10 : NAN, sw->busy_why,
					 sizeof(sw->busy_why));
}

static void emit_verdict_json(const struct lc_sweep *sw, json_t *res)
{
	const struct ch_lc_cfg *c;
	json_t *rec, *per;
	char *slurm;
	int g;

	json_object_set_new(res, "verdict", json_string(sw->not_judged ? "not judged" : ch_lc_verdict_name(sw->overall)));
	json_object_set_new(res, "not_judged_reason", sw->not_judged ? json_string(sw->busy_why) : json_null());
	json_object_set_new(res, "bad_batches", json_integer(sw->bad_total));
	if (sw->best < 0)
		return;
	c = &sw->cfgs[sw->best];
	rec = json_object();
	per = json_array();
	slurm = ch_lc_slurm_line(c->plan);
	json_object_set_new(rec, "placement", json_string(ch_lc_placement_name(c->placement)));
	json_object_set_new(rec, "workers", json_integer(c->workers));
	json_object_set_new(rec, "config", json_string(c->name));
	json_object_set_new(rec, "verdict", json_string(ch_lc_verdict_name(sw->mets[sw->best].verdict)));
	set_lines_json(rec, sw->topo, c->plan, 0);
	json_object_set_new(rec, "slurm", slurm ? json_string(slurm) : json_null());
	json_object_set_new(rec, "feeder_cpus", union_list(c->plan, 0));
	json_object_set_new(rec, "worker_cpus", union_list(c->plan, 1));
	for (g = 0; g < sw->G; g++)
		json_array_append_new(per, place_json(sw->topo, c->plan, g, c->workers));
	json_object_set_new(rec, "per_gpu", per);
	json_object_set_new(rec, "note", json_string(c->plan->note));
	json_object_set_new(res, "recommendation", rec);
	free(slurm);
}

static void print_verdict(const struct lc_sweep *sw)
{
	const struct ch_lc_cfg *c;
	const struct ch_lc_metrics *m;
	char *slurm;
	int g;

	if (sw->best < 0) {
		printf("\nverdict: %s - no configuration that can be recommended was run (as-is with a collapsed mask is not one)\n",
		       ch_lc_verdict_name(sw->overall));
		return;
	}
	c = &sw->cfgs[sw->best];
	m = &sw->mets[sw->best];
	slurm = ch_lc_slurm_line(c->plan);
	if (sw->not_judged)
		printf("\nverdict: not judged - the host was busy with other work before the load started (%s): the feeders would be late from that work, not from the placement; re-run on an idle node",
		       sw->busy_why);
	else
		printf("\nverdict: %s", ch_lc_verdict_name(sw->overall));
	if (!sw->not_judged && !sw->collapsed && !sw->bad_total) /* what it judged: not the table's worst row */
		printf(" (of the recommended configuration, %s)", c->name);
	if (sw->collapsed)
		printf(" (affinity mask collapsed to a single CPU)");
	if (sw->bad_total)
		printf(" (%ld batch(es) failed validation)", sw->bad_total);
	printf("\nrecommendation: %s placement, %d worker(s) per GPU (%s: %s, accelerator utilisation %.1f%%, input wait %.1f%%)%s\n",
	       ch_lc_placement_name(c->placement), c->workers, c->name, ch_lc_verdict_name(m->verdict),
	       100 * m->accel_util, 100 * m->input_wait_frac,
	       m->verdict == CH_LC_PASS ? "" : " - no configuration met every target");
	for (g = 0; g < sw->G; g++) {
		printf("  GPU %d:\n", g);
		print_lines(sw->topo, c->plan, g, "    ", 1);
	}
	printf("  slurm (one rank per GPU): %s\n", slurm ? slurm : "?");
	if (c->plan->note[0])
		printf("  note: %s\n", c->plan->note);
	free(slurm);
}

/* A failed sweep's exit status and its one-line reason. */
static int fail_reason(const struct lc_sweep *sw, char *reason, size_t rn)
{
	if (sw->overall != CH_LC_FAIL || sw->not_judged)
		return 0;
	if (sw->bad_total)
		snprintf(reason, rn, "%ld batch(es) failed validation", sw->bad_total);
	else if (sw->collapsed)
		snprintf(reason, rn, "affinity mask collapsed to a single CPU ('%s' of '%s')",
			 hwloc_bitmap_weight(sw->pbind) == 1 ? sw->pbuf : sw->tbuf, sw->abuf);
	else if (sw->best >= 0)
		snprintf(reason, rn, "no configuration met the targets; best '%s': %s", sw->cfgs[sw->best].name,
			 sw->mets[sw->best].nreasons ? sw->mets[sw->best].reasons[0] : "fail");
	else
		snprintf(reason, rn, "nothing to recommend");
	return CH_ERR_CHECK;
}

static void sweep_release(struct lc_sweep *sw)
{
	int p, g;

	for (p = 0; p < CH_LC_NPLACEMENTS; p++)
		ch_lc_plan_release(&sw->plans[p]);
	for (g = 0; g < CH_LC_MAX_GPUS; g++)
		if (sw->env.copy_ctx[g])
			sw->cb->close(sw->env.copy_ctx[g]);
	ch_lc_shard_release(&sw->env.shard);
	ch_lc_gpus_release(sw->gpus, sw->ngpus_loaded);
	hwloc_bitmap_free(sw->pbind);
	hwloc_bitmap_free(sw->tbind);
	if (sw->topo)
		hwloc_topology_destroy(sw->topo);
}

/* Everything before the first measurement: backend, machine, feeders,
 * calibration, plans, configurations. */
static int sweep_prepare(struct lc_sweep *sw, char *reason, size_t rn)
{
	int rc;

	if ((rc = ch_topo_load(NULL, &sw->topo)) != 0) {
		snprintf(reason, rn, "cannot load this machine's topology");
		return rc;
	}
	sw->env.topo = sw->topo;
	sw->env.copy = sw->cb;
	if ((rc = sweep_affinity(sw)) != 0 || (rc = sweep_feeders(sw)) != 0 ||
	    (rc = sweep_calibrate(sw, reason, rn)) != 0 || (rc = sweep_plans(sw, reason, rn)) != 0)
		return rc;
	sweep_configs(sw);
	return 0;
}

int ch_lc_sweep(const struct ch_lc_opts *o, struct ch_result *r, char *reason, size_t rn)
{
	static struct lc_sweep sw; /* large (every configuration's metrics); one sweep at a time */
	json_t *res = ch_result_results(r);
	int rc = 0;

	memset(&sw, 0, sizeof(sw));
	sw.o = o;
	reason[0] = '\0';

	sw.cb = choose_copy(o, sw.note, sizeof(sw.note), &rc);
	if (!sw.cb) {
		snprintf(reason, rn, "%s", sw.note);
		ch_error("%s", sw.note);
		json_object_set_new(res, "mode", json_string("run"));
		json_object_set_new(res, "cuda_copies", json_false());
		json_object_set_new(res, "copy_backend", json_null());
		json_object_set_new(res, "copy_note", json_string(sw.note));
		return rc;
	}
	if ((rc = sweep_prepare(&sw, reason, rn)) == 0) {
		int w, maxw = 0;
		for (w = 0; w < o->nworkers; w++)
			if (o->workers[w] > maxw)
				maxw = o->workers[w];
		/* at most: a feeder and the largest worker count per GPU at once */
		ch_run_set_threads(r, sw.G * (1 + maxw));
		emit_skeleton_json(&sw, res);
		ch_result_checkpoint(r);
		print_intro(&sw);
		rc = sweep_measure(&sw, r, reason, rn);
	}
	if (rc == 0) {
		print_footer(&sw);
		sweep_decide(&sw, r);
		emit_verdict_json(&sw, res);
		print_verdict(&sw);
		rc = fail_reason(&sw, reason, rn);
	}
	sweep_release(&sw);
	return rc;
}
