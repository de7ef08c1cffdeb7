/*
 * hr_index.h - lookups over a loaded fleet (hr_model.h) that the judge
 * makes once per node or per entry: a run by its file, a node's loader,
 * devices, stragglers and checkpoint entries, a checkpoint entry's peers on its
 * mount. Each answers as the scan over the fleet it replaces did (the
 * first run of a path, the last loader of a node, entries in the order
 * read), in constant or logarithmic time, so that judging a fleet takes
 * time linear in its size.
 *
 * The index is built on first use and kept in the fleet (hr_fleet.index,
 * freed by hr_fleet_release()); it is built again when the fleet's arrays
 * have grown or moved since (entries are only appended while loading). Not
 * for use from more than one thread at a time.
 */
#ifndef HR_INDEX_H
#define HR_INDEX_H

#include <stddef.h>

#include "report/read/hr_model.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * hr_index_run_of_path - the first run (index into f->runs) whose path is
 * @path, or -1 when none (or @path is NULL, or out of memory: then by a
 * scan, the same answer).
 */
long hr_index_run_of_path(const struct hr_fleet *f, const char *path);

/**
 * hr_index_run_next_of_path - the next run after run @run with the same
 * path (in f->runs order), -1 when none.
 */
long hr_index_run_next_of_path(const struct hr_fleet *f, long run);

/**
 * hr_index_node_loader - the last loader (f->loaders index) of node @node
 * (the newest read), -1 when none.
 */
long hr_index_node_loader(const struct hr_fleet *f, int node);

/**
 * hr_index_node_straggler - node @node's first straggler (f->stragglers
 * index) when @after is -1, else the one after straggler @after; -1 when
 * no more. In f->stragglers order.
 */
long hr_index_node_straggler(const struct hr_fleet *f, int node, long after);

/**
 * hr_index_node_ckpt - node @node's first checkpoint entry (f->ckpts index)
 * when @after is -1, else the one after entry @after; -1 when no more. In
 * f->ckpts order.
 */
long hr_index_node_ckpt(const struct hr_fleet *f, int node, long after);

/**
 * hr_index_node_device - node @node's first device (f->devices index) when
 * @after is -1, else the one after device @after; -1 when no more. In
 * f->devices order.
 */
long hr_index_node_device(const struct hr_fleet *f, int node, long after);

/**
 * hr_index_ckpt_latest - the newest entry (the last read) of node @node on
 * mount @mount, -1 when none.
 */
long hr_index_ckpt_latest(const struct hr_fleet *f, int node, const char *mount);

/**
 * hr_index_ckpt_peers_median - the median (ch_stats' median, as
 * ch_stats_compute() gives it over the same values) of the per-rank write
 * bandwidth (GB/s) of the newest entry of every node of the fleet other
 * than @node on @mount, NaN ones left out; NAN when there are none.
 * @npeers: [out] how many values it is over.
 */
double hr_index_ckpt_peers_median(const struct hr_fleet *f, int node, const char *mount, int *npeers);

/**
 * hr_index_ckpt_peers_median_again - the same over the second writes
 * (checkpoint_io --repeat: hr_ckpt's again_gbps, GB/s per rank) of the
 * newest entries of the other nodes on @mount that have one; NAN when none.
 * @npeers: [out] how many values it is over.
 */
double hr_index_ckpt_peers_median_again(const struct hr_fleet *f, int node, const char *mount, int *npeers);

/** hr_index_release - free @f's index (hr_fleet_release() calls it). */
void hr_index_release(struct hr_fleet *f);

#ifdef __cplusplus
}
#endif
#endif
