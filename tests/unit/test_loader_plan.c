/*
 * Placement planning (ch_loader_plan.c) against real machines' hwloc XML
 * (tests/data/topologies) and synthetic topologies: exact feeder and
 * worker CPUs, NUMA nodes, and binding lines.
 */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/ch_common.h"
#include "hw/ch_host.h"
#include "bench/loader/ch_loader.h"

#define TOPO "tests/data/topologies/"

static hwloc_topology_t load_xml(const char *file)
{
	hwloc_topology_t t;
	cr_assert_eq(ch_topo_load(file, &t), 0, "cannot load %s", file);
	return t;
}

static hwloc_topology_t load_synthetic(const char *desc)
{
	hwloc_topology_t t;
	cr_assert_eq(hwloc_topology_init(&t), 0);
	cr_assert_eq(hwloc_topology_set_synthetic(t, desc), 0, "synthetic '%s'", desc);
	cr_assert_eq(hwloc_topology_load(t), 0);
	return t;
}

static void assert_set(hwloc_const_bitmap_t set, const char *want, const char *what, int gpu)
{
	char buf[256];
	ch_cpuset_to_list(set, buf, sizeof(buf));
	cr_assert_str_eq(buf, want, "GPU %d %s: got '%s', want '%s'", gpu, what, buf, want);
}

Test(loader_plan, finds_the_one_cuda_gpu_of_the_two_socket_server)
{
	hwloc_topology_t t = load_xml(TOPO "2socket-16core-ht-1gpu.xml");
	struct ch_lc_gpu g[8];
	char buf[128];
	int n = ch_lc_gpus_find(t, g, 8);

	/* four display devices on the PCI bus; only 84:00.0 has a CUDA device */
	cr_assert_eq(ch_topo_gpus(t, NULL, 0), 4);
	cr_assert_eq(n, 1);
	cr_assert_str_eq(g[0].pci_bus_id, "0000:84:00.0");
	cr_assert_eq(g[0].numa, 1);
	cr_assert_str_eq(ch_cpuset_to_list(g[0].cpuset, buf, sizeof(buf)), "8-15,24-31");
	ch_lc_gpus_release(g, n);
	hwloc_topology_destroy(t);
}

Test(loader_plan, two_socket_server_isolated_and_shared)
{
	hwloc_topology_t t = load_xml(TOPO "2socket-16core-ht-1gpu.xml");
	struct ch_lc_gpu g[8];
	struct ch_lc_plan p;
	int n = ch_lc_gpus_find(t, g, 8);

	cr_assert_eq(n, 1);
	cr_assert_eq(ch_lc_plan_make(t, g, 1, CH_LC_ISOLATED, NULL, &p, NULL, 0), 0);
	assert_set(p.gpu[0].feeder_cpus, "8,24", "feeder", 0);      /* core L#8, both hyperthreads */
	assert_set(p.gpu[0].worker_cpus, "9-15,25-31", "workers", 0); /* cores L#9-15 */
	cr_assert_eq(p.gpu[0].cpu_numa_os, 1);
	cr_assert_eq(p.gpu[0].mem_numa_os, -1);
	cr_assert_eq(p.gpu[0].feeder_cores, 1);
	cr_assert_eq(p.gpu[0].worker_cores, 7);
	cr_assert_eq(p.gpu[0].feeder_sharers, 1);
	cr_assert_str_eq(p.note, "");
	ch_lc_plan_release(&p);

	cr_assert_eq(ch_lc_plan_make(t, g, 1, CH_LC_SHARED, NULL, &p, NULL, 0), 0);
	assert_set(p.gpu[0].feeder_cpus, "8-15,24-31", "feeder", 0);
	assert_set(p.gpu[0].worker_cpus, "8-15,24-31", "workers", 0);
	ch_lc_plan_release(&p);

	cr_assert_eq(ch_lc_plan_make(t, g, 1, CH_LC_BASELINE, NULL, &p, NULL, 0), 0);
	assert_set(p.gpu[0].feeder_cpus, "8,24", "feeder", 0);
	assert_set(p.gpu[0].worker_cpus, "", "workers", 0);
	ch_lc_plan_release(&p);
	ch_lc_gpus_release(g, n);
	hwloc_topology_destroy(t);
}

Test(loader_plan, two_socket_server_numa_local_and_remote)
{
	hwloc_topology_t t = load_xml(TOPO "2socket-16core-ht-1gpu.xml");
	struct ch_lc_gpu g[8];
	struct ch_lc_plan p;
	int n = ch_lc_gpus_find(t, g, 8);

	cr_assert_eq(ch_lc_plan_make(t, g, 1, CH_LC_NUMA_LOCAL, NULL, &p, NULL, 0), 0);
	assert_set(p.gpu[0].feeder_cpus, "8,24", "feeder", 0);
	assert_set(p.gpu[0].worker_cpus, "9-15,25-31", "workers", 0);
	cr_assert_eq(p.gpu[0].mem_numa_os, 1);
	ch_lc_plan_release(&p);

	cr_assert_eq(ch_lc_plan_make(t, g, 1, CH_LC_NUMA_REMOTE, NULL, &p, NULL, 0), 0);
	assert_set(p.gpu[0].feeder_cpus, "0,16", "feeder", 0);
	assert_set(p.gpu[0].worker_cpus, "1-7,17-23", "workers", 0);
	cr_assert_eq(p.gpu[0].mem_numa_os, 0);
	cr_assert_eq(p.gpu[0].cpu_numa_os, 0);
	ch_lc_plan_release(&p);
	ch_lc_gpus_release(g, n);
	hwloc_topology_destroy(t);
}

Test(loader_plan, two_socket_server_binding_lines)
{
	hwloc_topology_t t = load_xml(TOPO "2socket-16core-ht-1gpu.xml");
	struct ch_lc_gpu g[8];
	struct ch_lc_plan p;
	struct ch_lc_lines l;
	char *slurm;
	int n = ch_lc_gpus_find(t, g, 8);

	cr_assert_eq(ch_lc_plan_make(t, g, 1, CH_LC_ISOLATED, NULL, &p, NULL, 0), 0);
	cr_assert_eq(ch_lc_lines_make(t, &p, 0, &l), 0);
	cr_assert_str_eq(l.numactl, "numactl --physcpubind=8-15,24-31 --membind=1 -- CMD");
	cr_assert_str_eq(l.hwloc_bind, "hwloc-bind --cpubind core:8-15 --membind node:1 -- CMD");
	cr_assert(strstr(l.in_process, "feeder thread on CPUs 8,24, DataLoader workers on CPUs 9-15,25-31"),
		  "%s", l.in_process);
	ch_lc_lines_release(&l);
	slurm = ch_lc_slurm_line(&p);
	cr_assert_str_eq(slurm, "srun --ntasks-per-node=1 --cpu-bind=mask_cpu:0xff00ff00 --mem-bind=map_mem:1 CMD");
	free(slurm);
	cr_assert_eq(ch_lc_lines_make(t, &p, 1, &l), CH_ERR_USAGE);
	ch_lc_plan_release(&p);

	cr_assert_eq(ch_lc_plan_make(t, g, 1, CH_LC_NUMA_REMOTE, NULL, &p, NULL, 0), 0);
	cr_assert_eq(ch_lc_lines_make(t, &p, 0, &l), 0);
	cr_assert_str_eq(l.numactl, "numactl --physcpubind=0-7,16-23 --membind=0 -- CMD");
	cr_assert_str_eq(l.hwloc_bind, "hwloc-bind --cpubind core:0-7 --membind node:0 -- CMD");
	ch_lc_lines_release(&l);
	slurm = ch_lc_slurm_line(&p);
	cr_assert_str_eq(slurm, "srun --ntasks-per-node=1 --cpu-bind=mask_cpu:0xff00ff --mem-bind=map_mem:0 CMD");
	free(slurm);
	ch_lc_plan_release(&p);
	ch_lc_gpus_release(g, n);
	hwloc_topology_destroy(t);
}

Test(loader_plan, dgx2_sixteen_gpus_on_two_sockets)
{
	hwloc_topology_t t = load_xml(TOPO "dgx2-v100-16gpu.xml");
	struct ch_lc_gpu g[32];
	struct ch_lc_plan p;
	int n = ch_lc_gpus_find(t, g, 32), i;

	cr_assert_eq(n, 16);
	cr_assert_str_eq(g[0].pci_bus_id, "0000:34:00.0");
	cr_assert_str_eq(g[15].pci_bus_id, "0000:e7:00.0");
	cr_assert_eq(ch_lc_plan_make(t, g, n, CH_LC_ISOLATED, NULL, &p, NULL, 0), 0);
	/* 8 GPUs per socket on the 2 cores the (trimmed) file keeps per socket:
	 * fewer than 2 cores per GPU, so each socket's feeders share its first
	 * core and its workers the second */
	for (i = 0; i < 16; i++) {
		assert_set(p.gpu[i].feeder_cpus, i < 8 ? "0" : "24", "feeder", i);
		assert_set(p.gpu[i].worker_cpus, i < 8 ? "1" : "25", "workers", i);
		cr_assert_eq(p.gpu[i].cpu_numa_os, i < 8 ? 0 : 1, "GPU %d NUMA node", i);
		cr_assert_eq(p.gpu[i].feeder_sharers, 8);
		cr_assert_eq(p.gpu[i].worker_sharers, 8);
	}
	cr_assert(strstr(p.note, "8 GPUs on 2 cores (CPUs 0-1)"), "%s", p.note);
	ch_lc_plan_release(&p);

	cr_assert_eq(ch_lc_plan_make(t, g, n, CH_LC_NUMA_REMOTE, NULL, &p, NULL, 0), 0);
	for (i = 0; i < 16; i++) {
		assert_set(p.gpu[i].feeder_cpus, i < 8 ? "24" : "0", "remote feeder", i);
		cr_assert_eq(p.gpu[i].mem_numa_os, i < 8 ? 1 : 0, "GPU %d remote node", i);
	}
	ch_lc_plan_release(&p);
	ch_lc_gpus_release(g, n);
	hwloc_topology_destroy(t);
}

Test(loader_plan, dgx2_slurm_line_has_one_mask_per_rank)
{
	hwloc_topology_t t = load_xml(TOPO "dgx2-v100-16gpu.xml");
	struct ch_lc_gpu g[32];
	struct ch_lc_plan p;
	struct ch_lc_lines l;
	char *slurm;
	int n = ch_lc_gpus_find(t, g, 32);

	cr_assert_eq(ch_lc_plan_make(t, g, n, CH_LC_ISOLATED, NULL, &p, NULL, 0), 0);
	slurm = ch_lc_slurm_line(&p);
	cr_assert_str_eq(slurm, "srun --ntasks-per-node=16 --cpu-bind=mask_cpu:"
			 "0x3,0x3,0x3,0x3,0x3,0x3,0x3,0x3,"
			 "0x3000000,0x3000000,0x3000000,0x3000000,0x3000000,0x3000000,0x3000000,0x3000000"
			 " --mem-bind=map_mem:0,0,0,0,0,0,0,0,1,1,1,1,1,1,1,1 CMD");
	free(slurm);
	cr_assert_eq(ch_lc_lines_make(t, &p, 9, &l), 0);
	cr_assert_str_eq(l.numactl, "numactl --physcpubind=24-25 --membind=1 -- CMD");
	cr_assert_str_eq(l.hwloc_bind, "hwloc-bind --cpubind core:2-3 --membind node:1 -- CMD");
	ch_lc_lines_release(&l);
	ch_lc_plan_release(&p);
	ch_lc_gpus_release(g, n);
	hwloc_topology_destroy(t);
}

Test(loader_plan, one_numa_node_skips_numa_placements)
{
	hwloc_topology_t t = load_synthetic("pack:1 core:4 pu:2");
	struct ch_lc_gpu g[1];
	struct ch_lc_plan p;
	char why[64];

	cr_assert_eq(ch_lc_gpus_emulate(t, 1, g), 0);
	cr_assert_eq(ch_lc_plan_make(t, g, 1, CH_LC_NUMA_LOCAL, NULL, &p, why, sizeof(why)), CH_ERR_UNAVAILABLE);
	cr_assert_str_eq(why, "one NUMA node");
	cr_assert_eq(ch_lc_plan_make(t, g, 1, CH_LC_NUMA_REMOTE, NULL, &p, why, sizeof(why)), CH_ERR_UNAVAILABLE);
	cr_assert_str_eq(why, "one NUMA node");
	cr_assert_eq(ch_lc_plan_make(t, g, 1, CH_LC_ISOLATED, NULL, &p, why, sizeof(why)), 0);
	assert_set(p.gpu[0].feeder_cpus, "0-1", "feeder", 0);
	assert_set(p.gpu[0].worker_cpus, "2-7", "workers", 0);
	ch_lc_plan_release(&p);
	ch_lc_gpus_release(g, 1);
	hwloc_topology_destroy(t);
}

Test(loader_plan, blocks_and_pools)
{
	hwloc_topology_t t = load_synthetic("pack:1 core:5 pu:1");
	struct ch_lc_gpu g[3];
	struct ch_lc_plan p;
	int i;

	/* 5 cores, 2 GPUs: blocks of 3 and 2 cores */
	cr_assert_eq(ch_lc_gpus_emulate(t, 2, g), 0);
	cr_assert_eq(ch_lc_plan_make(t, g, 2, CH_LC_ISOLATED, NULL, &p, NULL, 0), 0);
	assert_set(p.gpu[0].feeder_cpus, "0", "feeder", 0);
	assert_set(p.gpu[0].worker_cpus, "1-2", "workers", 0);
	assert_set(p.gpu[1].feeder_cpus, "3", "feeder", 1);
	assert_set(p.gpu[1].worker_cpus, "4", "workers", 1);
	ch_lc_plan_release(&p);
	ch_lc_gpus_release(g, 2);

	/* 5 cores, 3 GPUs (< 2 per GPU): feeder pool cores 0-1, worker pool 2-4 */
	cr_assert_eq(ch_lc_gpus_emulate(t, 3, g), 0);
	cr_assert_eq(ch_lc_plan_make(t, g, 3, CH_LC_ISOLATED, NULL, &p, NULL, 0), 0);
	assert_set(p.gpu[0].feeder_cpus, "0", "feeder", 0);
	assert_set(p.gpu[1].feeder_cpus, "0", "feeder", 1);
	assert_set(p.gpu[2].feeder_cpus, "1", "feeder", 2);
	for (i = 0; i < 3; i++)
		assert_set(p.gpu[i].worker_cpus, "2-4", "workers", i);
	cr_assert_eq(p.gpu[0].feeder_sharers, 2);
	cr_assert_eq(p.gpu[2].feeder_sharers, 1);
	cr_assert_neq(p.note[0], '\0');
	ch_lc_plan_release(&p);
	ch_lc_gpus_release(g, 3);
	hwloc_topology_destroy(t);
}

Test(loader_plan, one_core_cannot_separate)
{
	hwloc_topology_t t = load_synthetic("pack:1 core:1 pu:2");
	struct ch_lc_gpu g[1];
	struct ch_lc_plan p;

	cr_assert_eq(ch_lc_gpus_emulate(t, 1, g), 0);
	cr_assert_eq(ch_lc_plan_make(t, g, 1, CH_LC_ISOLATED, NULL, &p, NULL, 0), 0);
	assert_set(p.gpu[0].feeder_cpus, "0-1", "feeder", 0);
	assert_set(p.gpu[0].worker_cpus, "0-1", "workers", 0);
	cr_assert(strstr(p.note, "cannot be separated"), "%s", p.note);
	ch_lc_plan_release(&p);
	ch_lc_gpus_release(g, 1);
	hwloc_topology_destroy(t);
}

Test(loader_plan, emulated_gpus_follow_numa_nodes)
{
	hwloc_topology_t t = load_synthetic("pack:2 numa:1 core:2 pu:1");
	struct ch_lc_gpu g[3];
	struct ch_lc_plan p;

	cr_assert_eq(ch_lc_gpus_emulate(t, 3, g), 0);
	cr_assert_eq(g[0].numa, 0);
	cr_assert_eq(g[1].numa, 1);
	cr_assert_eq(g[2].numa, 0);
	cr_assert_eq(ch_lc_plan_make(t, g, 3, CH_LC_NUMA_REMOTE, NULL, &p, NULL, 0), 0);
	cr_assert_eq(p.gpu[0].mem_numa_os, 1);
	cr_assert_eq(p.gpu[1].mem_numa_os, 0);
	ch_lc_plan_release(&p);
	ch_lc_gpus_release(g, 3);
	hwloc_topology_destroy(t);
}

Test(loader_plan, as_is_keeps_the_inherited_mask)
{
	hwloc_topology_t t = load_synthetic("pack:1 core:4 pu:1");
	hwloc_bitmap_t inh = hwloc_bitmap_alloc();
	struct ch_lc_gpu g[1];
	struct ch_lc_plan p;
	struct ch_lc_lines l;
	char *slurm;

	hwloc_bitmap_set_range(inh, 1, 2);
	cr_assert_eq(ch_lc_gpus_emulate(t, 1, g), 0);
	cr_assert_eq(ch_lc_plan_make(t, g, 1, CH_LC_AS_IS, inh, &p, NULL, 0), 0);
	assert_set(p.gpu[0].feeder_cpus, "1-2", "feeder", 0);
	assert_set(p.gpu[0].worker_cpus, "1-2", "workers", 0);
	cr_assert_eq(p.gpu[0].bind, 0);
	cr_assert_eq(ch_lc_lines_make(t, &p, 0, &l), 0);
	cr_assert(strstr(l.numactl, "nothing bound"));
	ch_lc_lines_release(&l);
	slurm = ch_lc_slurm_line(&p);
	cr_assert_str_eq(slurm, "srun --cpu-bind=none CMD");
	free(slurm);
	ch_lc_plan_release(&p);
	ch_lc_gpus_release(g, 1);
	hwloc_bitmap_free(inh);
	hwloc_topology_destroy(t);
}

Test(loader_plan, collapsed_mask)
{
	hwloc_bitmap_t all = hwloc_bitmap_alloc(), one = hwloc_bitmap_alloc(), two = hwloc_bitmap_alloc();

	hwloc_bitmap_set_range(all, 0, 1);
	hwloc_bitmap_set(one, 0);
	hwloc_bitmap_set_range(two, 0, 1);
	cr_assert_eq(ch_lc_mask_collapsed(all, one), 1);
	cr_assert_eq(ch_lc_mask_collapsed(all, two), 0);
	cr_assert_eq(ch_lc_mask_collapsed(one, one), 0); /* a one-CPU machine is not collapsed */
	hwloc_bitmap_free(all);
	hwloc_bitmap_free(one);
	hwloc_bitmap_free(two);
}

Test(loader_plan, bad_arguments)
{
	hwloc_topology_t t = load_synthetic("pack:1 core:2 pu:1");
	struct ch_lc_gpu g[1];
	struct ch_lc_plan p;

	cr_assert_eq(ch_lc_gpus_emulate(t, 1, g), 0);
	cr_assert_eq(ch_lc_plan_make(t, g, 0, CH_LC_ISOLATED, NULL, &p, NULL, 0), CH_ERR_USAGE);
	cr_assert_eq(ch_lc_plan_make(t, g, 1, CH_LC_NPLACEMENTS, NULL, &p, NULL, 0), CH_ERR_USAGE);
	cr_assert_eq(ch_lc_plan_make(t, g, 1, -1, NULL, &p, NULL, 0), CH_ERR_USAGE);
	ch_lc_gpus_release(g, 1);
	hwloc_topology_destroy(t);
}

Test(loader_plan, placement_names)
{
	cr_redirect_stderr();
	cr_assert_str_eq(ch_lc_placement_name(CH_LC_NUMA_REMOTE), "numa-remote");
	cr_assert_str_eq(ch_lc_placement_name(99), "?");
	cr_assert_eq(ch_lc_placement_lookup("--placements", "as-is"), CH_LC_AS_IS);
	cr_assert_eq(ch_lc_placement_lookup("--placements", "shared"), CH_LC_SHARED);
	cr_assert_eq(ch_lc_placement_lookup("--placements", "baseline"), CH_ERR_USAGE);
	cr_assert_eq(ch_lc_placement_lookup("--placements", "Shared"), CH_ERR_USAGE);
}
