/*
 * hr_ckpt_load.h - checkpoint_io results into the fleet record (the read
 * stage): per node and result its synchronous checkpoint writes to one
 * mount (struct hr_ckpt, in struct hr_fleet's ckpts), which the judge
 * grades (report/judge/hr_checkpoint.h).
 */
#ifndef HR_CKPT_LOAD_H
#define HR_CKPT_LOAD_H

#include <stddef.h>

#include "report/read/hr_model.h"
#include "report/read/hr_result.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One node's synchronous checkpoint writes to one mount, from one result. */
struct hr_ckpt {
	int node;              /* fleet node index */
	char *path;            /* the result file */
	char mount[400];       /* "FSTYPE SOURCE on POINT": the peer key */
	int network_fs;        /* the result's dir_mount.network_fs */
	int nranks;            /* the node's ranks in that result */
	double block_sec;      /* max over the node's ranks */
	double rank_gbps;      /* median over the node's ranks of bytes / block, GB/s */
	double node_gbps;      /* the node's bytes / block_sec, GB/s */
	double again_gbps;     /* the same median of the second write (results.sync.again[0],
	                        * checkpoint_io --repeat 2 or more), GB/s; NAN when written once */
	int bad_files;         /* files of the node's ranks that did not read back */
	int read_back;         /* 1: the result's verify.sync says how many files read back */
	double interval_sec;   /* the result's --interval (config.interval_sec), NAN none */
};

/**
 * hr_ckpt_load - read a checkpoint_io result into @f (one struct hr_ckpt
 * per node it ran on). @path: [in] its file name (copied).
 * @r: [in] the result read by hr_result_read() (borrowed).
 * A result without a synchronous measurement or rank layout adds nothing
 * (its run is still listed); in a result of status "ok" that, a per-rank
 * record that is not a rank with a positive finite block_sec and finite
 * write_gbps and bytes >= 0 (skipped), and a missing or malformed
 * verify.sync (the read-back is then not judged) are input problems in
 * @f->issues. Returns 0, or CH_ERR_RUNTIME when out of memory.
 */
int hr_ckpt_load(struct hr_fleet *f, const char *path, const struct hr_result *r);

/** hr_ckpt_release - free what hr_ckpt_load() added to @f. */
void hr_ckpt_release(struct hr_fleet *f);

/**
 * hr_ckpt_mount_key - the peer key of mount @m into @b (@n bytes):
 * "FSTYPE SOURCE on POINT" ("?" for what the result does not say);
 * @network_fs: [out] its network_fs flag (may be NULL).
 */
void hr_ckpt_mount_key(const struct hr_result_mount *m, char *b, size_t n, int *network_fs);

/**
 * hr_ckpt_rank_mount - the mount of rank @i of result @r's layout (@i
 * below r->layout_list.n); never NULL.
 */
const struct hr_result_mount *hr_ckpt_rank_mount(const struct hr_result *r, size_t i);

#ifdef __cplusplus
}
#endif
#endif
