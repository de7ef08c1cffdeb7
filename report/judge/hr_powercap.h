/*
 * hr_powercap.h - health_report's power-cap parts: the uneven-cap rule for
 * the nodes of one all-reduce group, and the fleet's recommended power cap
 * per GPU model from roofline's power-cap sweeps (roofline --power-limits).
 *
 * Rules, thresholds and sources: docs/health_report.md, "Power caps".
 */
#ifndef HR_POWERCAP_H
#define HR_POWERCAP_H

#include <jansson.h>

#include "report/judge/hr_inventory.h"
#include "report/read/hr_model.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Within one node, the uneven-cap rule is the inventory's
 * "power_limit_mismatch" (hr_inventory.h): a GPU capped below its node's
 * others. Across the nodes of a group, hr_powercap_rules() compares each
 * node's power limit (the enforced limit most of its GPUs run at,
 * HR_CFG_POWER_LIMIT): separate from the fleet-majority drift of the same
 * key, which compares every node with the fleet. */

/**
 * hr_powercap_rules - the uneven-cap rule across nodes: for every
 * all-reduce group (allreduce_bw or nccl-tests) over two or more nodes
 * whose power limits are known, each node whose limit is lower than the
 * highest in the group gets one WARN "power_cap_uneven" (subject: the
 * largest such group), naming the group, its highest limit and the node
 * that runs at it. A node without an inventory is not judged.
 * @emit: called once per reason (level, code, subject, source, action, text).
 */
void hr_powercap_rules(const struct hr_fleet *f, hr_inventory_emit_fn emit, void *ctx);

/**
 * hr_powercap_profile - the profile's "power_caps": per GPU model with a
 * sweep, {gpu_model, default_limit_w, recommended_cap_w (the highest of its
 * GPUs' recommended caps: in a synchronous job the slowest GPU sets the
 * pace), pct_of_default, gpus_swept, nodes_swept, worst_compute_loss_pct
 * and worst (node and device) at that cap, median_energy_per_flop_saved_pct,
 * gpus_without_the_cap (GPUs that did not measure it), tolerance_pct,
 * nodes [{node, cap_w (its own), worst_compute_loss_pct}], curve [{cap_w,
 * pct_of_default, gpus, perf_pct, gflop_per_j_pct} medians over the GPUs
 * of the figures against each GPU's own at the default limit], rule,
 * source}; only each device's latest sweep counts. JSON null when no
 * device has a sweep. New reference; NULL when out of memory.
 */
json_t *hr_powercap_profile(const struct hr_fleet *f);

#ifdef __cplusplus
}
#endif
#endif
