/*
 * hr_inventory_load.h - health_report's reading of each node's
 * "host.inventory" (docs/results-schema.md): the copy kept for the node,
 * checked field by field, and its configuration-drift keys; and the
 * dotted-path access to an inventory record that the rules judging it
 * (report/judge/hr_inventory.h) read it with.
 */
#ifndef HR_INVENTORY_LOAD_H
#define HR_INVENTORY_LOAD_H

#include <jansson.h>
#include <stddef.h>
#include <time.h>

#include "report/read/hr_model.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * hr_inventory_load - keep the inventory of one result file for its node.
 * @f:     [in,out] fleet; f->nodes[@node] gets a copy of host.inventory
 *         (the newest by @start when several files carry one) and its
 *         drift keys HR_CFG_VBIOS, HR_CFG_NIC_FW, HR_CFG_POWER_LIMIT.
 * @node:  [in] node index.  @host: [in] the file's "host" object (borrowed).
 * @end:   [in] the file's conditions.rdma_counters_end (borrowed; NULL:
 *         none), kept with the inventory for the port counter rules
 *         (report/judge/hr_ibcounters.h).
 * @path:  [in] the file (recorded as the inventory's source).
 * @start: [in] the file's start time (0 unknown).
 * A field of the wrong type is listed in f->issues as skipped input and
 * made null in the copy (not read: the checks that read it are not
 * judged). A host without "inventory" (older result files) leaves the node
 * as it was. Returns 0, or CH_ERR_RUNTIME when out of memory.
 */
int hr_inventory_load(struct hr_fleet *f, int node, const json_t *host, const json_t *end,
		      const char *path, time_t start);

/** hr_inventory_node_release - free what hr_inventory_load() kept for @n. */
void hr_inventory_node_release(struct hr_node *n);

/**
 * hr_inv_dot - the value at dotted path @path ("ecc.volatile.uncorrected")
 * of @o, NULL when absent (or a key is 64 characters or longer). Borrowed.
 */
const json_t *hr_inv_dot(const json_t *o, const char *path);

/**
 * hr_inv_num - the number at @path of @o (hr_inv_dot()); a boolean reads
 * as 1 or 0. NAN when absent or of another type.
 */
double hr_inv_num(const json_t *o, const char *path);

/** hr_inv_str - the string at @path of @o (borrowed), NULL when none. */
const char *hr_inv_str(const json_t *o, const char *path);

/**
 * hr_inv_mode - the most common value of @v[0..@n) (ties: the larger), NAN
 * when @n is 0; its count into *@count when @count is not NULL.
 */
double hr_inv_mode(const double *v, size_t n, size_t *count);

#ifdef __cplusplus
}
#endif
#endif
