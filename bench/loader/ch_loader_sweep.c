/*
 * ch_loader_sweep.c - loader_contention's two modes: the sweep on this
 * machine (run mode) and the plan for another machine (--topology).
 * Prints the table, the verdict and the recommendation; fills the result
 * document (docs/results-schema.md, "loader_contention").
 */
#include "bench/loader/ch_loader.h"
#include "bench/loader/ch_loader_copy.h"
#include "bench/loader/ch_loader_run.h"
#include "base/ch_common.h"
#include "hw/ch_host.h"
#include "base/ch_parse.h"

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

static json_t *place_json(hwloc_topology_t topo, const struct ch_lc_plan *p, int g, int workers)
{
	const struct ch_lc_place *pl = &p->gpu[g];
	json_t *o = json_object();
	struct ch_lc_lines l;
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
	if (ch_lc_lines_make(topo, p, g, &l) == 0) {
		json_object_set_new(o, "numactl", json_string(l.numactl));
		json_object_set_new(o, "hwloc_bind", json_string(l.hwloc_bind));
		json_object_set_new(o, "in_process", json_string(l.in_process));
		ch_lc_lines_release(&l);
	}
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

int ch_lc_plan_mode(const struct ch_lc_opts *o, struct ch_result *r, char *reason, size_t rn)
{
	static const int order[] = { CH_LC_ISOLATED, CH_LC_SHARED, CH_LC_NUMA_LOCAL, CH_LC_NUMA_REMOTE };
	json_t *res = ch_result_results(r), *jplan = json_object(), *jskip = json_array(), *jg = json_array();
	struct ch_lc_gpu gpus[CH_LC_MAX_GPUS];
	struct ch_lc_plan plans[4];
	hwloc_topology_t topo;
	int n, ng, i, g, rc = 0, asked = 0;
	char buf[2048], why[256];

	memset(plans, 0, sizeof(plans));
	if ((rc = ch_topo_load(o->topology, &topo)) != 0) {
		snprintf(reason, rn, "cannot load topology '%s'", o->topology);
		json_decref(jplan); json_decref(jskip); json_decref(jg);
		return rc;
	}
	n = ch_lc_gpus_find(topo, gpus, CH_LC_MAX_GPUS);
	if (n < 0) {
		rc = CH_ERR_RUNTIME;
		goto out_topo;
	}
	if (n == 0) {
		rc = ch_usage_error("topology '%s' has no GPU (no NVIDIA, AMD or Intel display or 3D controller on its PCI bus); nothing to plan",
				    o->topology);
		snprintf(reason, rn, "topology '%s' has no GPU", o->topology);
		goto out_topo;
	}
	ng = n > CH_LC_MAX_GPUS ? CH_LC_MAX_GPUS : n;
	if (o->gpus > 0) {
		if (o->gpus > ng) {
			rc = ch_usage_error("--gpus '%d' but topology '%s' has %d GPU(s)", o->gpus, o->topology, ng);
			snprintf(reason, rn, "--gpus %d exceeds the %d GPU(s) of the topology", o->gpus, ng);
			goto out_gpus;
		}
		ng = o->gpus;
	}
	if (o->nworkers == 1)
		asked = o->workers[0];

	printf("plan for %s: %d GPU(s), %d core(s), %d NUMA node(s) (hwloc XML; nothing is run or bound)\n",
	       o->topology, ng, hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE),
	       hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE));
	for (g = 0; g < ng; g++) {
		json_t *e = json_object();
		json_object_set_new(e, "gpu", json_integer(g));
		json_object_set_new(e, "pci_bus_id", json_string(gpus[g].pci_bus_id));
		json_object_set_new(e, "name", json_string(gpus[g].name));
		json_object_set_new(e, "local_cpus", json_string(ch_cpuset_to_list(gpus[g].cpuset, buf, sizeof(buf))));
		json_array_append_new(jg, e);
	}
	for (i = 0; i < 4; i++) {
		int p = order[i], prc;
		json_t *arr;
		prc = ch_lc_plan_make(topo, gpus, ng, p, NULL, &plans[i], why, sizeof(why));
		if (prc == CH_ERR_UNAVAILABLE) {
			json_t *s = json_object();
			json_object_set_new(s, "placement", json_string(ch_lc_placement_name(p)));
			json_object_set_new(s, "reason", json_string(why));
			json_array_append_new(jskip, s);
			continue;
		}
		if (prc) {
			rc = prc;
			snprintf(reason, rn, "cannot plan placement '%s': %s", ch_lc_placement_name(p), why);
			ch_error("cannot plan placement '%s' on '%s'%s%s", ch_lc_placement_name(p), o->topology,
				 *why ? ": " : "", why);
			goto out_plans;
		}
		arr = json_array();
		for (g = 0; g < ng; g++)
			json_array_append_new(arr, place_json(topo, &plans[i], g, plan_workers(&plans[i].gpu[g], asked)));
		json_object_set_new(jplan, ch_lc_placement_name(p), arr);
	}

	/* the recommendation: isolated (a reserved core per feeder) */
	{
		struct ch_lc_plan *p = &plans[0];
		json_t *rec = json_object(), *per = json_array();
		char *slurm = ch_lc_slurm_line(p);
		struct ch_lc_lines l0;

		printf("\n%-4s %-14s %-5s %-16s %-24s %-8s %s\n", "gpu", "pci", "numa", "feeder cpus", "worker cpus", "workers", "shared by");
		for (g = 0; g < ng; g++) {
			const struct ch_lc_place *pl = &p->gpu[g];
			char fb[256], wb[256];
			printf("%-4d %-14s %-5d %-16s %-24s %-8d feeder core: %d GPU(s), worker cores: %d GPU(s)\n", g,
			       gpus[g].pci_bus_id, pl->cpu_numa_os, ch_cpuset_to_list(pl->feeder_cpus, fb, sizeof(fb)),
			       ch_cpuset_to_list(pl->worker_cpus, wb, sizeof(wb)), plan_workers(pl, asked),
			       pl->feeder_sharers, pl->worker_sharers);
			json_array_append_new(per, place_json(topo, p, g, plan_workers(pl, asked)));
		}
		if (p->note[0])
			printf("note: %s\n", p->note);
		printf("\nplacement: isolated (feeder on a reserved core of the GPU's locality, workers on the others)\n"
		       "one rank per GPU, bound with one of these lines; inside the rank, pin the feeder thread and the\n"
		       "DataLoader workers to their CPUs from the table (PyTorch: os.sched_setaffinity(0, WORKER_CPUS) in\n"
		       "worker_init_fn, os.sched_setaffinity(0, FEEDER_CPUS) in the main process once the workers have started)\n");
		for (g = 0; g < ng; g++) {
			printf("  GPU %d:\n", g);
			print_lines(topo, p, g, "    ", 0);
		}
		printf("  slurm (one rank per GPU): %s\n", slurm ? slurm : "?");
		for (i = 0; i < (int)json_array_size(jskip); i++) {
			json_t *s = json_array_get(jskip, (size_t)i);
			printf("skipped %s: %s\n", json_string_value(json_object_get(s, "placement")),
			       json_string_value(json_object_get(s, "reason")));
		}
		json_object_set_new(rec, "placement", json_string("isolated"));
		json_object_set_new(rec, "workers", json_integer(plan_workers(&p->gpu[0], asked)));
		if (ch_lc_lines_make(topo, p, 0, &l0) == 0) {
			json_object_set_new(rec, "numactl", json_string(l0.numactl));
			json_object_set_new(rec, "hwloc_bind", json_string(l0.hwloc_bind));
			json_object_set_new(rec, "in_process", json_string(l0.in_process));
			ch_lc_lines_release(&l0);
		}
		json_object_set_new(rec, "slurm", slurm ? json_string(slurm) : json_null());
		json_object_set_new(rec, "feeder_cpus", union_list(p, 0));
		json_object_set_new(rec, "worker_cpus", union_list(p, 1));
		json_object_set_new(rec, "note", json_string(p->note));
		json_object_set_new(rec, "per_gpu", per);
		free(slurm);
		json_object_set_new(res, "recommendation", rec);
	}
	json_object_set_new(res, "mode", json_string("plan"));
	json_object_set_new(res, "topology", json_string(o->topology));
	json_object_set_new(res, "gpus", jg);
	json_object_set_new(res, "plan", jplan);
	json_object_set_new(res, "skipped", jskip);
	jg = jplan = jskip = NULL;
out_plans:
	for (i = 0; i < 4; i++)
		ch_lc_plan_release(&plans[i]);
out_gpus:
	ch_lc_gpus_release(gpus, ng);
out_topo:
	json_decref(jplan);
	json_decref(jskip);
	json_decref(jg);
	hwloc_topology_destroy(topo);
	return rc;
}

/* -------------------------------------------------------------- run mode */

static const struct ch_lc_copy_backend *choose_copy(const struct ch_lc_opts *o, char *note, size_t nn,
						    int *rc)
{
	const struct ch_lc_copy_backend *cuda = ch_lc_copy_find("cuda");
	char why[256] = "";

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
		if (cb->pci_bus_id && cb->ndevices() > 0 &&
		    cb->pci_bus_id(j % cb->ndevices(), bus, sizeof(bus)) == 0)
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

int ch_lc_sweep(const struct ch_lc_opts *o, struct ch_result *r, char *reason, size_t rn)
{
	json_t *res = ch_result_results(r), *jconfigs = json_array(), *jskip = json_array();
	static struct ch_lc_cfg cfgs[LC_MAX_CONFIGS];
	static struct ch_lc_metrics mets[LC_MAX_CONFIGS];
	struct ch_lc_plan plans[CH_LC_NPLACEMENTS];
	int have_plan[CH_LC_NPLACEMENTS] = { 0 };
	struct ch_lc_gpu gpus[CH_LC_MAX_GPUS];
	struct ch_lc_choice choices[LC_MAX_CONFIGS];
	struct ch_lc_env env;
	hwloc_topology_t topo = NULL;
	hwloc_bitmap_t pbind = NULL, tbind = NULL;
	const struct ch_lc_copy_backend *cb;
	int rc = 0, G, real = 0, ncfg = 0, g, i, p, w, collapsed = 0, best, overall;
	long bad_total = 0;
	double unit_sec, batch_sec;
	char note[512], buf[2048], why[256], abuf[256], pbuf[256], tbuf[256];
	int ngpus_loaded = 0;

	memset(&env, 0, sizeof(env));
	memset(plans, 0, sizeof(plans));
	reason[0] = '\0';

	cb = choose_copy(o, note, sizeof(note), &rc);
	if (!cb) {
		snprintf(reason, rn, "%s", note);
		ch_error("%s", note);
		json_object_set_new(res, "mode", json_string("run"));
		json_object_set_new(res, "cuda_copies", json_false());
		json_object_set_new(res, "copy_backend", json_null());
		json_object_set_new(res, "copy_note", json_string(note));
		json_decref(jconfigs);
		json_decref(jskip);
		return rc;
	}
	if ((rc = ch_topo_load(NULL, &topo)) != 0) {
		snprintf(reason, rn, "cannot load this machine's topology");
		goto out;
	}
	env.topo = topo;
	env.copy = cb;

	/* affinity: has the process or this thread collapsed to one CPU? */
	pbind = hwloc_bitmap_alloc();
	tbind = hwloc_bitmap_alloc();
	if (!pbind || !tbind) {
		rc = CH_ERR_RUNTIME;
		goto out;
	}
	if (hwloc_get_cpubind(topo, pbind, HWLOC_CPUBIND_PROCESS) != 0)
		hwloc_bitmap_copy(pbind, hwloc_topology_get_allowed_cpuset(topo));
	if (hwloc_get_cpubind(topo, tbind, HWLOC_CPUBIND_THREAD) != 0)
		hwloc_bitmap_copy(tbind, pbind);
	collapsed = ch_lc_mask_collapsed(hwloc_topology_get_allowed_cpuset(topo), pbind) ||
		    ch_lc_mask_collapsed(hwloc_topology_get_allowed_cpuset(topo), tbind);
	ch_cpuset_to_list(hwloc_topology_get_allowed_cpuset(topo), abuf, sizeof(abuf));
	ch_cpuset_to_list(pbind, pbuf, sizeof(pbuf));
	ch_cpuset_to_list(tbind, tbuf, sizeof(tbuf));

	/* feeders: one per GPU */
	G = o->gpus;
	if (G <= 0) {
		int n = ch_lc_gpus_find(topo, NULL, 0);
		G = (cb != &ch_lc_copy_staging) ? cb->ndevices() : n > 0 ? n : 1;
		if (G < 1)
			G = 1;
		if (G > CH_LC_MAX_GPUS)
			G = CH_LC_MAX_GPUS;
	}
	if ((rc = feeder_gpus(topo, cb, G, gpus, &real)) != 0)
		goto out;
	ngpus_loaded = G;
	env.ngpus = G;
	env.step_sec = o->step_sec;
	env.duration_sec = o->duration_sec;
	env.prefetch = o->prefetch;
	env.ntok = (size_t)(o->batch_bytes / 4);
	for (g = 0; g < G; g++)
		if ((rc = cb->open(cb->ndevices() > 0 ? g % cb->ndevices() : 0, (size_t)o->batch_bytes,
				   &env.copy_ctx[g])) != 0)
			goto out;

	/* the work per batch, calibrated on this machine */
	if ((rc = ch_lc_shard_make(&env.shard, LC_SEED)) != 0)
		goto out;
	unit_sec = ch_lc_unit_sec(&env.shard, 40);
	if (unit_sec < 0) {
		rc = unit_sec == CH_ERR_CHECK ? CH_ERR_CHECK : CH_ERR_RUNTIME;
		snprintf(reason, rn, "calibration failed: the synthetic shard did not inflate to its checksum");
		goto out;
	}
	batch_sec = o->batch_sec > 0 ? o->batch_sec : 0.8 * o->step_sec;
	env.units = ch_lc_units_per_batch(batch_sec, unit_sec);
	if ((rc = ch_lc_env_expect(&env)) != 0) {
		snprintf(reason, rn, "could not produce the reference batches");
		goto out;
	}

	/* plans */
	for (p = CH_LC_BASELINE; p < CH_LC_NPLACEMENTS; p++) {
		int prc;
		if (p != CH_LC_BASELINE && !o->placements[p])
			continue;
		prc = ch_lc_plan_make(topo, gpus, G, p, p == CH_LC_AS_IS ? tbind : NULL, &plans[p], why, sizeof(why));
		if (prc == CH_ERR_UNAVAILABLE) {
			json_t *s = json_object();
			json_object_set_new(s, "placement", json_string(ch_lc_placement_name(p)));
			json_object_set_new(s, "reason", json_string(why));
			json_array_append_new(jskip, s);
			continue;
		}
		if (prc) {
			rc = prc;
			snprintf(reason, rn, "cannot plan placement '%s'%s%s", ch_lc_placement_name(p), *why ? ": " : "", why);
			ch_error("%s", reason);
			goto out;
		}
		have_plan[p] = 1;
	}

	/* the configurations: baseline, then each worker count x placement */
	cfgs[ncfg] = (struct ch_lc_cfg){ .placement = CH_LC_BASELINE, .workers = 0, .hog_util = 0, .plan = &plans[CH_LC_BASELINE] };
	snprintf(cfgs[ncfg].name, sizeof(cfgs[ncfg].name), "baseline");
	ncfg++;
	for (w = 0; w < o->nworkers; w++)
		for (p = CH_LC_SHARED; p < CH_LC_NPLACEMENTS; p++) {
			if (!have_plan[p])
				continue;
			cfgs[ncfg] = (struct ch_lc_cfg){ .placement = p, .workers = o->workers[w], .hog_util = o->hog_util,
							 .plan = &plans[p] };
			snprintf(cfgs[ncfg].name, sizeof(cfgs[ncfg].name), "%s-w%d", ch_lc_placement_name(p), o->workers[w]);
			ncfg++;
		}

	/* results skeleton, written before the first measurement */
	json_object_set_new(res, "mode", json_string("run"));
	json_object_set_new(res, "step_ms", json_real(o->step_sec * 1e3));
	json_object_set_new(res, "duration_sec", json_real(env.duration_sec));
	json_object_set_new(res, "gpus_emulated", json_integer(G));
	json_object_set_new(res, "gpus_real", json_boolean(real));
	json_object_set_new(res, "cuda_copies", json_boolean(cb != &ch_lc_copy_staging));
	json_object_set_new(res, "copy_backend", json_string(cb->name));
	json_object_set_new(res, "copy_note", note[0] ? json_string(note) : json_null());
	{
		json_t *b = json_object();
		json_object_set_new(b, "bytes", json_integer((json_int_t)o->batch_bytes));
		json_object_set_new(b, "units", json_integer(env.units));
		json_object_set_new(b, "unit_bytes", json_integer(CH_LC_CHUNK_BYTES));
		json_object_set_new(b, "unit_us", json_real(unit_sec * 1e6));
		json_object_set_new(b, "cpu_ms_target", json_real(batch_sec * 1e3));
		json_object_set_new(b, "cpu_ms_calibrated", json_real(env.units * unit_sec * 1e3));
		json_object_set_new(b, "prefetch", json_integer(o->prefetch));
		json_object_set_new(res, "batch", b);
	}
	{
		json_t *t = json_object();
		json_object_set_new(t, "input_wait_warn_frac", json_real(CH_LC_WAIT_WARN_FRAC));
		json_object_set_new(t, "input_wait_fail_frac", json_real(CH_LC_WAIT_FAIL_FRAC));
		json_object_set_new(t, "input_wait_source", json_string(CH_LC_WAIT_SOURCE));
		json_object_set_new(t, "accel_util_pass_frac", json_real(CH_LC_UTIL_PASS_FRAC));
		json_object_set_new(t, "accel_util_fail_frac", json_real(CH_LC_UTIL_FAIL_FRAC));
		json_object_set_new(t, "accel_util_source", json_string(CH_LC_UTIL_SOURCE));
		json_object_set_new(res, "thresholds", t);
	}
	{
		json_t *mk = json_object();
		json_object_set_new(mk, "allowed_cpus", json_string(abuf));
		json_object_set_new(mk, "process_cpus", json_string(pbuf));
		json_object_set_new(mk, "thread_cpus", json_string(tbuf));
		json_object_set_new(res, "affinity", mk);
	}
	json_object_set_new(res, "mask_collapsed", json_boolean(collapsed));
	json_object_set_new(res, "configs", jconfigs);
	json_object_set_new(res, "skipped", jskip);
	jconfigs = jskip = NULL;
	json_object_set_new(res, "verdict", json_null());
	json_object_set_new(res, "recommendation", json_null());
	ch_result_checkpoint(r);

	ch_info("loader_contention: %d %s GPU(s), device hand-off: %s%s%s", G, real ? "real" : "emulated", cb->name,
		note[0] ? " - " : "", note);
	ch_info("step %.1f ms, %.2f s measured per configuration; batch %s collated from %d work units (inflate 64K + tokenize) = %.2f ms of CPU (target %.2f ms%s)",
		o->step_sec * 1e3, env.duration_sec, ch_format_size(o->batch_bytes, buf, sizeof(buf)), env.units,
		env.units * unit_sec * 1e3, batch_sec * 1e3, o->batch_sec > 0 ? "" : " = 0.8 x step");
	ch_info("affinity: allowed CPUs %s, process bound to %s, main thread to %s%s", abuf, pbuf, tbuf,
		collapsed ? " - COLLAPSED to a single CPU" : "");
	if (collapsed)
		ch_warn("the affinity mask has collapsed to CPU '%s' (allowed: %s): every DataLoader worker forked from this process would share that one CPU; check the launcher's binding and OMP_PROC_BIND / GOMP_CPU_AFFINITY / KMP_AFFINITY",
			hwloc_bitmap_weight(pbind) == 1 ? pbuf : tbuf, abuf);
	if (o->hog_util > 0)
		ch_info("hog: %.0f%% busy on every worker CPU during the worker configurations (not the baseline)",
			100 * o->hog_util);
	printf("\n");
	print_header_row();

	for (i = 0; i < ncfg; i++) {
		struct ch_lc_metrics *m = &mets[i];
		json_t *jc = json_object_get(res, "configs");
		rc = ch_lc_run_config(&env, &cfgs[i], m);
		if (rc) {
			snprintf(reason, rn, "configuration '%s' failed to run", cfgs[i].name);
			goto out;
		}
		ch_lc_judge(m, cfgs[i].workers > 0);
		bad_total += m->bad_batches;
		json_array_append_new(jc, config_json(&cfgs[i], m, topo));
		ch_result_checkpoint(r);
		print_row(&cfgs[i], m);
		choices[i] = (struct ch_lc_choice){ cfgs[i].placement, cfgs[i].workers, m->verdict, m->accel_util };
	}
	printf("\nlate_*: feeder wake-up minus its deadline, us, percentiles over every step; wait%%: time blocked on the\n"
	       "batch queue / wall time; util%%: emulated device busy / wall time; batch/s: batches handed over, all\n"
	       "feeders; runq_us: feeder run-queue wait per step (schedstat), mean; invcsw: feeder involuntary context\n"
	       "switches; psi%%: /proc/pressure/cpu \"some\" stall time / wall time; host%%, steal: /proc/stat, all CPUs.\n");
	for (i = 0; i < ncfg; i++) {
		int k;
		for (k = 0; k < mets[i].nreasons; k++)
			printf("%s: %s\n", cfgs[i].name, mets[i].reasons[k]);
	}
	{
		json_t *s = json_object_get(res, "skipped");
		for (i = 0; i < (int)json_array_size(s); i++)
			printf("skipped %s: %s\n", json_string_value(json_object_get(json_array_get(s, (size_t)i), "placement")),
			       json_string_value(json_object_get(json_array_get(s, (size_t)i), "reason")));
	}

	/* verdict and recommendation */
	best = ch_lc_pick(choices, ncfg, !collapsed);
	overall = best >= 0 ? mets[best].verdict : CH_LC_FAIL;
	if (collapsed || bad_total > 0)
		overall = CH_LC_FAIL;
	json_object_set_new(res, "verdict", json_string(ch_lc_verdict_name(overall)));
	json_object_set_new(res, "bad_batches", json_integer(bad_total));
	if (best >= 0) {
		const struct ch_lc_cfg *c = &cfgs[best];
		json_t *rec = json_object(), *per = json_array();
		char *slurm = ch_lc_slurm_line(c->plan);
		struct ch_lc_lines l0;

		json_object_set_new(rec, "placement", json_string(ch_lc_placement_name(c->placement)));
		json_object_set_new(rec, "workers", json_integer(c->workers));
		json_object_set_new(rec, "config", json_string(c->name));
		json_object_set_new(rec, "verdict", json_string(ch_lc_verdict_name(mets[best].verdict)));
		if (ch_lc_lines_make(topo, c->plan, 0, &l0) == 0) {
			json_object_set_new(rec, "numactl", json_string(l0.numactl));
			json_object_set_new(rec, "hwloc_bind", json_string(l0.hwloc_bind));
			json_object_set_new(rec, "in_process", json_string(l0.in_process));
			ch_lc_lines_release(&l0);
		}
		json_object_set_new(rec, "slurm", slurm ? json_string(slurm) : json_null());
		json_object_set_new(rec, "feeder_cpus", union_list(c->plan, 0));
		json_object_set_new(rec, "worker_cpus", union_list(c->plan, 1));
		for (g = 0; g < G; g++)
			json_array_append_new(per, place_json(topo, c->plan, g, c->workers));
		json_object_set_new(rec, "per_gpu", per);
		json_object_set_new(rec, "note", json_string(c->plan->note));
		json_object_set_new(res, "recommendation", rec);

		printf("\nverdict: %s", ch_lc_verdict_name(overall));
		if (collapsed)
			printf(" (affinity mask collapsed to a single CPU)");
		if (bad_total)
			printf(" (%ld batch(es) failed validation)", bad_total);
		printf("\nrecommendation: %s placement, %d worker(s) per GPU (%s: %s, accelerator utilisation %.1f%%, input wait %.1f%%)%s\n",
		       ch_lc_placement_name(c->placement), c->workers, c->name, ch_lc_verdict_name(mets[best].verdict),
		       100 * mets[best].accel_util, 100 * mets[best].input_wait_frac,
		       mets[best].verdict == CH_LC_PASS ? "" : " - no configuration met every target");
		for (g = 0; g < G; g++) {
			printf("  GPU %d:\n", g);
			print_lines(topo, c->plan, g, "    ", 1);
		}
		printf("  slurm (one rank per GPU): %s\n", slurm ? slurm : "?");
		if (c->plan->note[0])
			printf("  note: %s\n", c->plan->note);
		free(slurm);
	} else {
		printf("\nverdict: %s - no configuration that can be recommended was run (as-is with a collapsed mask is not one)\n",
		       ch_lc_verdict_name(overall));
	}

	if (overall == CH_LC_FAIL) {
		rc = CH_ERR_CHECK;
		if (bad_total)
			snprintf(reason, rn, "%ld batch(es) failed validation", bad_total);
		else if (collapsed)
			snprintf(reason, rn, "affinity mask collapsed to a single CPU ('%s' of '%s')",
				 hwloc_bitmap_weight(pbind) == 1 ? pbuf : tbuf, abuf);
		else if (best >= 0)
			snprintf(reason, rn, "no configuration met the targets; best '%s': %s", cfgs[best].name,
				 mets[best].nreasons ? mets[best].reasons[0] : "fail");
		else
			snprintf(reason, rn, "nothing to recommend");
	}
out:
	json_decref(jconfigs);
	json_decref(jskip);
	for (p = 0; p < CH_LC_NPLACEMENTS; p++)
		ch_lc_plan_release(&plans[p]);
	for (g = 0; g < CH_LC_MAX_GPUS; g++)
		if (env.copy_ctx[g])
			cb->close(env.copy_ctx[g]);
	ch_lc_shard_release(&env.shard);
	ch_lc_gpus_release(gpus, ngpus_loaded);
	hwloc_bitmap_free(pbind);
	hwloc_bitmap_free(tbind);
	if (topo)
		hwloc_topology_destroy(topo);
	return rc;
}
