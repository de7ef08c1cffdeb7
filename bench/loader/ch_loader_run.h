/*
 * ch_loader_run.h - running one configuration of the loader_contention
 * sweep on this machine: worker processes, feeder threads, the background
 * hog, and the metrics they produce. Used by ch_loader_sweep.c.
 */
#ifndef CH_LOADER_RUN_H
#define CH_LOADER_RUN_H

#include "bench/loader/ch_loader.h"
#include "bench/loader/ch_loader_copy.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What every configuration of a sweep shares. */
struct ch_lc_env {
	hwloc_topology_t topo;                   /* this machine (not owned) */
	const struct ch_lc_copy_backend *copy;   /* chosen backend */
	void *copy_ctx[CH_LC_MAX_GPUS];          /* one per GPU, from copy->open() */
	int ngpus;                               /* feeders */
	struct ch_lc_shard shard;                /* the compressed shard */
	int units;                               /* work units per batch (calibrated) */
	size_t ntok;                             /* int32 tokens per batch */
	uint32_t expect[CH_LC_NCHUNKS];          /* crc32 of a batch by its first chunk */
	double step_sec;                         /* device step period */
	double duration_sec;                     /* measured time per configuration */
	int prefetch;                            /* queue slots per worker */
};

/* One configuration. */
struct ch_lc_cfg {
	char name[48];                /* "isolated-w2" */
	int placement;                /* enum ch_lc_placement */
	int workers;                  /* per GPU; 0 for the baseline */
	double hog_util;              /* 0 = no hog */
	const struct ch_lc_plan *plan;/* placement of every GPU (borrowed) */
};

/**
 * ch_lc_env_expect - compute env->expect: the crc32 of every distinct batch
 * (a batch is determined by its first chunk), by producing them once on
 * the calling thread. Needs env->shard, units and ntok.
 * Returns 0, CH_ERR_CHECK (a chunk did not inflate to its checksum) or
 * CH_ERR_RUNTIME.
 */
int ch_lc_env_expect(struct ch_lc_env *env);

/**
 * ch_lc_run_config - run one configuration and measure it.
 * @env: [in] sweep environment.  @cfg: [in] configuration.
 * @m:   [out] metrics (not judged: see ch_lc_judge()).
 * Forks cfg->workers worker processes per GPU bound to the plan's worker
 * CPUs, one hog process per worker CPU when cfg->hog_util > 0, starts one
 * feeder thread per GPU bound to the plan's feeder CPUs, measures for
 * env->duration_sec (at most 3x that when the feed stalls), then stops and
 * reaps every process it started. Returns 0 or CH_ERR_RUNTIME (a worker
 * died, no batch arrived for 10 s, fork/bind/copy failure; printed).
 */
int ch_lc_run_config(struct ch_lc_env *env, const struct ch_lc_cfg *cfg, struct ch_lc_metrics *m);

#ifdef __cplusplus
}
#endif
#endif
