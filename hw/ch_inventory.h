/*
 * ch_inventory.h - the hardware inventory of a result file's "host"
 * section (docs/results-schema.md, "host.inventory"): every GPU as NVML
 * describes it (ch_nvml.h), every network port from sysfs (ch_sysfs.h) with
 * the GPUs near it (hwloc), and the CPU frequency settings.
 *
 * Gathered once per process by ch_run_begin(). What cannot be read is JSON
 * null, with the reason in the record's "reasons" object under the field's
 * name (nested fields by dotted path: "pcie.width_current").
 */
#ifndef CH_INVENTORY_H
#define CH_INVENTORY_H

#include <hwloc.h>
#include <jansson.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * ch_inventory_near_gpus - set "near_gpus" and "near_by" of every NIC.
 * @topo: [in] hwloc topology (NULL: every NIC gets null with a reason).
 * @nics: [in,out] array from ch_sysfs_nics().
 * @gpus: [in] array of objects with "index" and "pci_bus_id" (the
 *        inventory's GPUs).
 * A GPU is near a NIC when their closest common ancestor in the PCI tree is
 * a PCI bridge (they share a PCIe switch or root port): near_by
 * "pcie_switch". When no GPU is, the GPUs with the same non-I/O ancestor
 * (NUMA node or package) are listed instead: near_by "numa_node". near_gpus
 * holds the GPUs' "index" values, ascending. A NIC without a PCI bus id, or
 * one hwloc does not list, gets near_gpus null and a reason.
 */
void ch_inventory_near_gpus(hwloc_topology_t topo, json_t *nics, const json_t *gpus);

/**
 * ch_inventory_gpus_from_topology - GPU records when NVML cannot be used:
 * one per GPU hwloc lists ({index, name, pci_bus_id}, every NVML field
 * null with @why as its reason).
 * @topo: [in] topology (NULL: none).  @why: [in] why NVML is unavailable.
 * Returns a new array (empty when hwloc lists no GPU), NULL out of memory.
 */
json_t *ch_inventory_gpus_from_topology(hwloc_topology_t topo, const char *why);

/**
 * ch_inventory_collect - the whole inventory.
 * @topo:       [in] this machine's topology (NULL: near_gpus unknown).
 * @sysfs_root: [in] sysfs root (ch_sysfs_root(): "" or $CH_SYSFS_ROOT).
 * Returns a new object {gpus, nics, cpu, reasons}; reasons.gpus says why
 * the GPU list is empty or has no NVML data, reasons.nics why no RDMA port
 * is listed. NVML is initialised and shut down inside (reference counted).
 * NULL only when out of memory.
 */
json_t *ch_inventory_collect(hwloc_topology_t topo, const char *sysfs_root);

#ifdef __cplusplus
}
#endif
#endif
