/*
 * hr_checkpoint.h - checkpoint_io results in health_report: per node and
 * per mount, the synchronous checkpoint's blocking time and write bandwidth
 * against the node's peers on the same mount (the fleet), and in the
 * canary, the checkpoint block and interval taken from a result (measured)
 * with the stall predicted at the target GPU count.
 *
 * Rule (docs/health_report.md, "Checkpoint writes"): a node whose median
 * per-rank write bandwidth to a mount is min_ratio times or more (the
 * parameters of the row checkpoint_slow_write of the rule table, hr_rules.c)
 * below the median of its peers' (other nodes writing to the same mount:
 * same file system type, source and mount point) is graded by the stall
 * its slowness adds at the checkpoint interval (hr_ckpt_grade()): it
 * points at the node's NIC, its link to the storage or its mount options.
 * A checkpoint file that did not read back is FAIL for the node of its
 * rank.
 */
#ifndef HR_CHECKPOINT_H
#define HR_CHECKPOINT_H

#include <stdio.h>
#include <jansson.h>

#include "report/read/hr_ckpt_load.h"
#include "report/read/hr_model.h"
#include "report/read/hr_result.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A node's synchronous checkpoint is graded by the stall it adds at the
 * job's checkpoint interval over what its peers' speed would give
 * (docs/health_report.md, "Checkpoint writes"): the added stall is
 * block x (1 - peers' speed / ... ) = block - block / ratio, over the
 * interval. Below min_ratio times slower than its peers it is
 * ordinary spread of writes to a shared mount (not judged as slow); from
 * there WARN when the added stall is warn_stall of wall-clock or
 * more, FAIL from fail_stall; from symptom_ratio times slower (3x) WARN
 * at least, whatever the stall: a node that much slower than its peers on
 * the same mount is a storage or network symptom even where it costs
 * little at today's interval. The interval is the result's own
 * (checkpoint_io --interval), else the row's interval_sec (30 min,
 * docs/checkpoint_io.md's example), labelled assumed. */

/* Called once per finding: node, level (hr_analyze.h's: 0 info, 1 warn, 2 fail),
 * code, subject, source, action (may be NULL) and text. */
typedef void (*hr_ckpt_reason_fn)(void *ctx, int node, int level, const char *code,
				  const char *subject, const char *source, const char *action,
				  const char *text);

/** hr_ckpt_reasons - apply the rule above to every node's entries. */
void hr_ckpt_reasons(const struct hr_fleet *f, hr_ckpt_reason_fn fn, void *ctx);

/**
 * hr_ckpt_grade - the level of entry @e against its peers' median per-rank
 * bandwidth @peers_gbps (the rule above).
 * Written twice (e->again_gbps), the level is at most the second write's
 * (hr_ckpt_grade_again()). @stall: [out] the first write's added stall,
 * fraction of wall-clock (NAN when not judged); @interval: [out] the interval used (s); @assumed: [out]
 *         1 when it is the row's interval_sec (assumed).
 * Returns 0 info, 1 warn, 2 fail.
 */
int hr_ckpt_grade(const struct hr_fleet *f, const struct hr_ckpt *e, double peers_gbps, double *stall, double *interval,
		  int *assumed);

/**
 * hr_ckpt_grade_again - the level hr_ckpt_grade()'s rule gives the second
 * write of @e (checkpoint_io --repeat: e->again_gbps, a fresh measurement)
 * against its peers' second writes on the mount (hr_ckpt_peers_again(): the
 * writes made under the same conditions, after the first's files were
 * removed; @peers_gbps, the first writes' median, when no peer wrote
 * twice) at @interval s, its block the first's bytes at its own rate.
 * hr_ckpt_grade() caps the first write's level at it: a node is judged
 * slow only as far as its second write agrees.
 * Returns 0 info, 1 warn, 2 fail, or -1 when @e was written once.
 */
int hr_ckpt_grade_again(const struct hr_fleet *f, const struct hr_ckpt *e, double peers_gbps, double interval);

/**
 * hr_ckpt_peers_again - the median per-rank bandwidth (GB/s) of the second
 * writes of @e's peers on its mount (hr_index_ckpt_peers_median_again()),
 * or @peers_gbps when none of them wrote twice; @npeers: [out] how many
 * second writes it is over (0: @peers_gbps), may be NULL.
 */
double hr_ckpt_peers_again(const struct hr_fleet *f, const struct hr_ckpt *e, double peers_gbps, int *npeers);

/**
 * hr_ckpt_symptom - whether a node @ratio times slower than its peers'
 * median (peers' per-rank bandwidth / the node's) is at least the row's
 * symptom_ratio: WARN whatever the stall (the rule above).
 * Returns 1 or 0 (0 for NAN).
 */
int hr_ckpt_symptom(double ratio);

/**
 * hr_ckpt_node_json - the profile's "checkpoint" array of node @node: per
 * mount its figures and the comparison with its peers. New reference.
 */
json_t *hr_ckpt_node_json(const struct hr_fleet *f, int node);

/**
 * hr_ckpt_node_checks - count node @node's checkpoint checks: per mount the
 * read-back (judged when the result has a valid verify.sync) and the
 * comparison with its peers (judged only when another node wrote to that
 * mount and the run's host was not busy: hr_quality.h).
 * @judged, @not_judged: [in,out] incremented; @noisy: [in,out] incremented
 * for a speed not judged because the host was busy (may be NULL);
 * @speed_judged, @speed_not_judged: [in,out] incremented for each speed
 * comparison judged, not judged (of @judged, @not_judged: the performance
 * checks among them; the read-back is a correctness check; may be NULL); @why: [out] @n bytes, set to what made
 * the first such one noisy (may be NULL).
 */
void hr_ckpt_node_checks(const struct hr_fleet *f, int node, int *judged, int *not_judged, int *noisy,
			 int *speed_judged, int *speed_not_judged, char *why, size_t n);

/**
 * hr_ckpt_render_terminal - the "checkpoint writes" table of a profile (its
 * nodes' "checkpoint" arrays) to @out; prints nothing when there are none.
 */
void hr_ckpt_render_terminal(const json_t *profile, FILE *out);

/**
 * hr_ckpt_render_terminal_node - the rows of one profile node @n of that
 * table, its header first when *@had_header is 0 and the node has rows
 * (then set to 1).
 */
void hr_ckpt_render_terminal_node(const json_t *n, FILE *out, int *had_header);

/**
 * hr_ckpt_host_rates - for the nightly history: per host of a checkpoint_io
 * result @r (read by hr_result_read()), the median over its ranks of the
 * synchronous per-rank write bandwidth (GB/s), and the same of the
 * checkpoint's second write (results.sync.again[0], checkpoint_io --repeat
 * 2 or more: a fresh measurement), NAN when it was written once or the
 * host has no positive rate there; @fn(@ctx, host, gbps, again) is called
 * once per host with a first rate.
 * Returns the number of hosts (0 for a result without a synchronous
 * measurement), or CH_ERR_RUNTIME when out of memory.
 */
int hr_ckpt_host_rates(const struct hr_result *r, void (*fn)(void *ctx, const char *host, double gbps, double again),
		       void *ctx);

#ifdef __cplusplus
}
#endif
#endif
