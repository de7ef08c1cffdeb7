/*
 * ch_host.h - host topology through hwloc: packages, cores, NUMA nodes,
 * caches, and GPUs with their PCI bus id and local CPUs.
 *
 * Every function takes a loaded topology, so the same code serves this
 * machine (ch_topo_load(NULL, ...)) and a saved hwloc XML file of another
 * machine (plan mode, tests against shared/data/topologies).
 */
#ifndef CH_HOST_H
#define CH_HOST_H

#include <hwloc.h>
#include <jansson.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * ch_topo_load - load and return a topology with I/O (PCI) devices kept.
 * @xml_path: [in] hwloc XML file (version 2), or NULL for this machine.
 * @out:      [out] the topology; the caller frees it with
 *            hwloc_topology_destroy().
 * Returns 0; CH_ERR_USAGE when the XML file cannot be read or parsed
 * (message names the file); CH_ERR_RUNTIME when hwloc fails on this machine.
 */
int ch_topo_load(const char *xml_path, hwloc_topology_t *out);

/* A GPU as seen on the PCI bus. */
struct ch_gpu_loc {
	char pci_bus_id[20];  /* "0000:3b:00.0" */
	unsigned vendor_id;   /* 0x10de for NVIDIA */
	unsigned device_id;
	char name[128];       /* PCI device name or "unknown" */
	int numa_node;        /* logical index of the nearest NUMA node, -1 if none */
	hwloc_const_bitmap_t cpuset; /* local CPUs (owned by the topology, do not modify or free) */
};

/**
 * ch_topo_gpus - list the GPUs (PCI class display 0x03xx, or 3D controller;
 * NVIDIA, AMD and Intel vendors) in PCI order.
 * @topo: [in] topology loaded with ch_topo_load().
 * @gpus: [out] array of at least @max entries (may be NULL when @max is 0).
 * @max:  [in] capacity.
 * Returns the number of GPUs found (may exceed @max; only @max are filled).
 */
int ch_topo_gpus(hwloc_topology_t topo, struct ch_gpu_loc *gpus, int max);

/**
 * ch_topo_llc_bytes - total bytes of all last-level caches (sum over
 * instances), 0 when the topology has no cache information.
 */
uint64_t ch_topo_llc_bytes(hwloc_topology_t topo);

/**
 * ch_host_describe - the "host" section of a result file.
 * @topo: [in] topology.
 * Returns a new object: hostname, kernel, cpu_model, packages, cores, pus,
 * numa_nodes, memory_bytes, caches (array of {level, type, size_bytes,
 * count}), llc_total_bytes and gpus (array of {index, pci_bus_id,
 * vendor_id, device_id, name, numa_node, local_cpus}); NULL when out of
 * memory. The caller owns the reference.
 */
json_t *ch_host_describe(hwloc_topology_t topo);

/**
 * ch_host_mem_available_bytes - memory the kernel estimates is available
 * for new allocations without swapping, in bytes: MemAvailable of
 * /proc/meminfo, else free pages x page size (sysconf); 0 when neither can
 * be read.
 */
uint64_t ch_host_mem_available_bytes(void);

/**
 * ch_cpuset_to_list - format a cpuset as a list string ("0-3,8").
 * @set: [in] bitmap.  @buf: [out] destination.  @n: [in] size of @buf.
 * Returns @buf (truncated when too small).
 */
char *ch_cpuset_to_list(hwloc_const_bitmap_t set, char *buf, size_t n);

#ifdef __cplusplus
}
#endif
#endif
