/*
 * hr_inventory.h - health_report's passive hardware checks: the rules that
 * judge each node's "host.inventory" (docs/results-schema.md) - PCIe links,
 * NVLink, ECC and row remapping, power limits, clocks, NIC ports, CPU
 * governor - its configuration-drift keys, its part of the profile and of
 * the Prometheus file, and the network rate each GPU can reach. The
 * inventory is read, and its drift keys set, by
 * report/read/hr_inventory_load.h.
 *
 * Rules, thresholds and sources: docs/health_report.md, "Hardware inventory
 * checks". Every reason text names its threshold and source.
 */
#ifndef HR_INVENTORY_H
#define HR_INVENTORY_H

#include <jansson.h>
#include <time.h>

#include "report/read/hr_model.h"
#include "report/hr_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One verdict reason: as the judge's reasons (hr_family.h) (level HR_INFO/WARN/FAIL
 * of hr_analyze.h; code, subject, source and action as in the profile). */
typedef void (*hr_inventory_emit_fn)(void *ctx, int node, int level, const char *code,
				     const char *subject, const char *source,
				     const char *action, const char *text);

/**
 * hr_inventory_rules - judge every node's inventory; @emit is called once
 * per reason. Nodes without an inventory get none (nothing is judged).
 */
void hr_inventory_rules(const struct hr_fleet *f, hr_inventory_emit_fn emit, void *ctx);

/**
 * hr_inventory_drift_action - the suggested action for a drifted
 * inventory key (HR_CFG_VBIOS, HR_CFG_NIC_FW, HR_CFG_POWER_LIMIT), NULL
 * for any other key.
 */
const char *hr_inventory_drift_action(int key);

/**
 * hr_inventory_gpu_nic_gbps - the network rate a GPU can reach: the sum of
 * rate_gbps of the ACTIVE RDMA ports whose near_gpus lists GPU @gpu.
 * Returns Gb/s, 0 when no such port, NAN when the node has no inventory.
 */
double hr_inventory_gpu_nic_gbps(const struct hr_fleet *f, int node, int gpu);

/**
 * hr_inventory_profile - the node's "inventory" object of the profile:
 * {source, gpus, nics, cpu} as read, plus gpu_nic_gbps (per GPU index, from
 * hr_inventory_gpu_nic_gbps()). JSON null when the node has none. New
 * reference.
 */
json_t *hr_inventory_profile(const struct hr_fleet *f, int node);

/**
 * hr_inventory_prom - append the inventory counters of every node of the
 * profile @p to the Prometheus text in @b (families clusterhealth_gpu_* and
 * clusterhealth_nic_*, documented in docs/health_report.md).
 */
void hr_inventory_prom(const json_t *p, struct hr_buf *b);

/*
 * The same node by node: the counters are hr_inventory_prom_sections()
 * sections (a family, or a part of one), each written as its head (the
 * family's HELP and TYPE when the section starts one, else nothing) and
 * then every node's samples of that section, in node order.
 */
size_t hr_inventory_prom_sections(void);
/** hr_inventory_prom_head - the head of section @k (may be empty). */
void hr_inventory_prom_head(size_t k, struct hr_buf *b);
/** hr_inventory_prom_node - the samples of profile node @n in section @k. */
void hr_inventory_prom_node(const json_t *n, size_t k, struct hr_buf *b);

#ifdef __cplusplus
}
#endif
#endif
