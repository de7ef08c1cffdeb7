/*
 * ch_roofline.h - the roofline measurement: options, the plan of points,
 * the timing loop and its statistics, validation, roofs, the result
 * section (docs/results-schema.md, "roofline") and the printed table.
 *
 * bench/roofline.c is a thin main over this module; the pure parts (default
 * sizes, roofs, node median and flags) are exposed for the unit tests.
 */
#ifndef CH_ROOFLINE_H
#define CH_ROOFLINE_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "kernels/ch_kernels.h"
#include "bench/common/ch_opts.h"
#include "base/ch_result.h"
#include "bench/common/ch_world.h"
#include "bench/roofline/ch_roofline_power.h"
#include "hw/ch_nvml.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CH_RL_MAX_DEVICES 64

/* Backends requested with --backend. */
#define CH_RL_BACKEND_CPU 1u
#define CH_RL_BACKEND_CUDA 2u

struct ch_rl_opts {
	struct ch_common_opts common;
	unsigned backends;      /* CH_RL_BACKEND_* mask; 0 = auto */
	int devices_all;        /* --devices all (the default) */
	int ndevices;           /* --devices LIST: count ... */
	int devices[CH_RL_MAX_DEVICES]; /* ... and GPU indices */
	uint64_t kernels;       /* bit i: table entry i selected; 0 = all */
	unsigned dtypes;        /* CH_DT_BIT mask from --dtype; 0 = each kernel's defaults */
	uint64_t size_bytes;    /* --size: bytes per array; 0 = default */
	uint64_t gemm_n;        /* --gemm-size: m = n = k; 0 = default */
	int iters;              /* --iters: timed calls, the first dropped (>= 2) */
	int warmup;             /* --warmup: untimed calls before them (>= 0) */
	int list;               /* --list: print the kernel table and exit */
	int stores;             /* --stores: enum ch_stores (CPU stream kernels) */
	int confirm;            /* --confirm: CH_RL_CONFIRM_* (default CH_RL_CONFIRM_ON) */
	struct ch_rl_power_opts power; /* --power-limits and its options (ch_roofline_power.h) */
	const struct ch_backend *gpu;  /* the GPU backend; NULL: ch_backend_cuda (tests pass a stand-in) */
};

/* --confirm: 0 off; 1 (default) measure again, at the end, every point of a
 * GPU more than the flag threshold below the node median (the same point on
 * the node's GPUs, or a flagged roof's points); all: every valid point of
 * every device (a repeatability check; the run takes about twice as long). */
#define CH_RL_CONFIRM_OFF 0
#define CH_RL_CONFIRM_ON 1
#define CH_RL_CONFIRM_ALL 2

/** ch_rl_opts_init - defaults: auto backend, all devices, default kernels
 * and dtypes, iters 4, warmup 1, confirm on. */
void ch_rl_opts_init(struct ch_rl_opts *o);

/**
 * ch_rl_parse - parse roofline's command line.
 * @argc, @argv: [in] the command line.  @o: [out] options (initialised here).
 * Returns 0, or CH_ERR_USAGE after printing what is wrong (unknown option,
 * backend, kernel or dtype; a size, count or list out of range).
 */
int ch_rl_parse(int argc, char **argv, struct ch_rl_opts *o);

/** ch_rl_usage - the --help text (docs/usage.md's roofline section agrees with it). */
void ch_rl_usage(FILE *f);

/** ch_rl_list - print the kernel table: name, family, FLOPs and words per
 * element, dtypes, formula. */
void ch_rl_list(FILE *f);

/**
 * ch_rl_run - measure every requested device, print the tables, fill the
 * result's "results" object, checkpointing after every point.
 * @o:       [in] options.
 * @mpi:     [in] rank layout from ch_world_init().
 * @res:     [in,out] the run's result document (ch_run_begin()).
 * @reason:  [out] why the status is not ok ("" when ok).  @n: [in] its size.
 * Returns CH_OK, CH_ERR_CHECK (a point failed validation),
 * CH_ERR_UNAVAILABLE (a requested backend or device is not here),
 * CH_ERR_USAGE (a size that does not fit the device) or CH_ERR_RUNTIME.
 * Under mpirun (one rank per GPU) every rank measures its GPU and rank 0
 * gathers the devices and writes the result.
 */
int ch_rl_run(const struct ch_rl_opts *o, const struct ch_world *mpi, struct ch_result *res,
	      char *reason, size_t n);

/**
 * ch_rl_run_backend - measure the devices of one backend (what ch_rl_run()
 * does for cuda and cpu; tests pass a stand-in backend).
 * @be:      [in] the backend.  @devices: [in,out] array the device objects
 *           are appended to.  Other parameters as ch_rl_run().
 * A point that fails (run-time error in its setup, calls or check) is
 * recorded with "valid": false and "error": "<stage> failed (<status>):
 * <message>", and the next points run; the device is then "error".
 * Returns the worst status of the backend's devices.
 */
int ch_rl_run_backend(const struct ch_rl_opts *o, const struct ch_world *mpi, const struct ch_backend *be,
		      struct ch_result *res, json_t *devices, char *reason, size_t n);

/* The energy window of a point on a backend that queues calls (GPU). */
#define CH_RL_ENERGY_BATCH_SEC 0.05    /* each batch: at least this long of calls */
#define CH_RL_ENERGY_POLL_SEC 0.0002   /* sleep between counter reads at the window's ends */
#define CH_RL_ENERGY_MIN_DUTY 0.95     /* GFLOP/J only from windows this busy */
#define CH_RL_ENERGY_EDGE_MAX_SEC 2.0  /* give up when the counter does not change for this long */

struct ch_rl_energy {
	int ok;                 /* the window was measured: energy_j and the rest are set */
	double energy_j;        /* counter increase between the two observed changes, J */
	double wall_sec;        /* their distance (each placed at the middle of its two reads), s */
	double t0, t1;          /* the window's start and end on ch_now_sec()'s clock */
	double edge_sec;        /* half-widths of the two changes' read intervals, summed, s */
	double calls;           /* calls that ran inside the window (batches from device times, pro rata) */
	double call_sec;        /* the median call time used */
	double duty;            /* calls x call_sec / wall_sec */
	double avg_power_w;     /* energy_j / wall_sec */
	double gflop_per_j;     /* flops x calls / energy_j / 1e9; NAN when duty < CH_RL_ENERGY_MIN_DUTY */
	double min_sec;         /* the window's shortest length */
	int batch_calls;        /* calls per batch: >= CH_RL_ENERGY_BATCH_SEC of them */
	int batches;            /* batches run (warm-up, edges and drain included) */
	int updates;            /* counter changes seen inside the window */
	char why[192];          /* not ok: why */
	char withheld[192];     /* gflop_per_j NAN although ok: why */
	/* clocks held down during the window (backend throttle_ns()):
	 * nanosecond counters read just before the start's and just after the
	 * end's detection; have_thr 0 when the backend cannot tell */
	int have_thr;
	struct ch_nvml_violations v0, v1;
	/* telemetry snapshots (telemetry_json(), throttled()) taken while the
	 * device was busy: after the first batch and after the window's end */
	json_t *tel0, *tel1;    /* owned; NULL when n/a */
	int thr0, thr1;         /* 1, 0, or -1 unknown */
};

/**
 * ch_rl_energy_window - the energy of a set-up point over a window of calls
 * kept back to back, with no host synchronisation between them: batches of
 * ceil(CH_RL_ENERGY_BATCH_SEC / @call_sec) calls are queued two at a time
 * (be->queue(), be->batch_done()), and between batches only the energy
 * counter is read. The window opens at an observed change of the counter
 * (so that its value is fresh, not up to one refresh old) after the first
 * batch has finished, and closes at the first change after @min_sec; each
 * change is placed at the middle of the two reads around it. The calls
 * inside the window are counted from the batches' device times, pro rata;
 * the duty cycle is calls x @call_sec / window, and GFLOP/J is withheld
 * below CH_RL_ENERGY_MIN_DUTY (the window's energy would include idle time).
 * @be, @dev, @p: [in] a backend with queue(), batch_done() and energy_j(),
 *                the open device, the set-up point.
 * @call_sec:     [in] the median time of one call (> 0).
 * @flops:        [in] FLOPs per call (0: no GFLOP/J).
 * @min_sec:      [in] the shortest window, s.
 * @out:          [out] see struct ch_rl_energy (release out->tel0/tel1 with
 *                json_decref when set).
 * Returns 0 (out->ok says whether the energy was measured), or the status
 * of a failed queue() or batch_done() (the queued calls are drained first).
 */
int ch_rl_energy_window(const struct ch_backend *be, struct ch_dev *dev, const struct ch_point_spec *p,
			double call_sec, double flops, double min_sec, struct ch_rl_energy *out);

/**
 * ch_rl_energy_json - the point's telemetry.energy_window object for @e.
 */
json_t *ch_rl_energy_json(const struct ch_rl_energy *e);

/**
 * ch_rl_throttle_json - the point's throttle_window object: seconds the
 * clocks were held down during the window per cause ({power_sec,
 * thermal_sec, sw_thermal_sec, hw_thermal_sec, hw_power_brake_sec}, null
 * where n/a), the window's seconds and the source; JSON null when
 * !e->have_thr. @throttled: [out] 1 when any cause held them down, 0 when
 * none did, -1 when none could be read.
 */
json_t *ch_rl_throttle_json(const struct ch_rl_energy *e, int *throttled);

/**
 * ch_rl_rank_device - the GPU a rank measures under mpirun.
 * @local_rank: [in] rank among its host's ranks.
 * @visible:    [in] GPUs the rank sees (honours CUDA_VISIBLE_DEVICES).
 * @ndevices, @devices: [in] --devices list (0, NULL: none).
 * Returns devices[local_rank] with a --devices list (-1 past its end),
 * else ch_comm_pick_device(local_rank, visible) = local_rank % visible, as
 * the comm layer: GPU i when every rank sees every GPU, GPU 0 under a
 * one-GPU-per-rank mask (Slurm --gpus-per-task=1); -1 when @visible < 1.
 * Two local ranks on the same GPU are found afterwards by
 * ch_rl_mark_shared_gpus().
 */
int ch_rl_rank_device(int local_rank, int visible, int ndevices, const int *devices);

/**
 * ch_rl_mark_shared_gpus - mark GPU devices measured by two ranks at once.
 * @devices: [in,out] gathered device objects (with "host", "rank",
 *           "pci_bus_id"); both objects of every pair with the same host and
 *           PCI bus id get status "error" and a reason naming the ranks
 *           (ch_rl_run() then returns CH_ERR_USAGE: a launch mistake).
 * Returns the number of such pairs.
 */
int ch_rl_mark_shared_gpus(json_t *devices);

/**
 * ch_rl_default_array_bytes - the default size of each of the three arrays.
 * @cache_bytes: [in] CPU: sum of last-level caches; GPU: L2 size.
 * @free_bytes:  [in] free memory of the device.
 * @gpu:         [in] non-zero for a GPU.
 * Returns max(4 x cache / 3, floor) rounded up to 1 MiB, so that a
 * three-array kernel's working set is at least 4x the cache (STREAM's rule
 * applied to the working set, see docs/roofline.md); floor 64 MiB (CPU) or
 * 1 GiB (GPU, to keep a call far longer than a launch); capped at
 * free_bytes / 8 (three arrays plus GEMM operands fit comfortably).
 */
uint64_t ch_rl_default_array_bytes(uint64_t cache_bytes, uint64_t free_bytes, int gpu);

/**
 * ch_rl_ladder_elems - elements of a ladder rung.
 * @n:          [in] elements of the full arrays.
 * @ai:         [in] the rung's arithmetic intensity (FLOP/byte).
 * @flops_per_elem: [in] 2k.
 * @mem_gbps:   [in] measured memory roof so far (<= 0: unknown).
 * @peak_gflops:[in] peak estimate or datasheet peak (<= 0: unknown).
 * @target_sec: [in] time one call should take at the peak.
 * @min_elems:  [in] lower bound.
 * Rungs at or below the estimated ridge point (peak / bandwidth) use all @n
 * elements: they run from memory. Rungs above it are compute-bound even
 * from memory, so they run on fewer elements (those needed for @target_sec
 * at the peak, at least @min_elems): what they measure is the same, in a
 * fraction of the time. Returns a multiple of 4096 (or @n).
 */
uint64_t ch_rl_ladder_elems(uint64_t n, double ai, double flops_per_elem, double mem_gbps,
			    double peak_gflops, double target_sec, uint64_t min_elems);

/**
 * ch_rl_roofs - the measured roofs of one device from its points.
 * @points: [in] array of point objects (schema "roofline").
 * Returns a new object {"memory_gbps": best headline GB/s of a valid stream
 * point, "memory_kernel": "triad fp64", "compute_gflops": {dtype: best
 * headline GFLOP/s of a valid ladder or gemm point}, "compute_kernel":
 * {dtype: "gemm"}, "ridge_flop_per_byte": {dtype: compute / memory}};
 * missing roofs are left out (memory_gbps null).
 */
json_t *ch_rl_roofs(json_t *points);

/**
 * ch_rl_node_summary - node median and flags over the GPU devices.
 * @devices:  [in] array of device objects (only kind "gpu", status "ok").
 * @flagged:  [out] new array of {device, metric, value, node_median,
 *            pct_below} for every metric more than @threshold_pct below its
 *            node median.
 * @threshold_pct: [in] 5 in roofline.
 * Metrics: roofs.memory_gbps and roofs.compute_gflops.<dtype>. Returns the
 * new node_median object {"memory_gbps": m, "compute_gflops": {...},
 * "gpus": count}, or JSON null when there is no GPU device.
 */
json_t *ch_rl_node_summary(json_t *devices, double threshold_pct, json_t **flagged);

/**
 * ch_rl_confirm_plan - the points to measure again (roofline --confirm).
 * @devices: [in] the gathered device objects (with "rank" under mpirun).
 * @flagged: [in] ch_rl_node_summary()'s flags (may be NULL).
 * @threshold_pct: [in] the flag threshold (results.flag_threshold_pct).
 * @mode:    [in] CH_RL_CONFIRM_ON or CH_RL_CONFIRM_ALL.
 * A valid point of a GPU with status ok is planned, why
 * "below_node_median", when its headline rate (GFLOP/s, or GB/s for a
 * point without FLOPs) is more than @threshold_pct below the median of the
 * same kernel and dtype over the node's GPUs with status ok, and so is every
 * valid point behind a flagged roof of its device (memory_gbps: the stream
 * points; compute_gflops.DTYPE: the ladder and gemm points of DTYPE), so
 * that the roof can be taken again. A CPU socket with status ok (kind
 * "cpu") has no like device on its node: the points that set its roofs
 * (ch_rl_roofs_again()) are planned every run, why "cpu_socket", a fresh
 * second measurement for the reporter. With CH_RL_CONFIRM_ALL every valid
 * point of every device is planned, why "requested".
 * Returns a new array of {dev, point (indices into @devices and its
 * points), rank (-1 without MPI), device, backend, kernel, dtype, shape,
 * array_bytes, why}, NULL when out of memory.
 */
json_t *ch_rl_confirm_plan(json_t *devices, json_t *flagged, double threshold_pct, int mode);

/**
 * ch_rl_confirm_verdicts - "confirmed" of every flagged roof, from the
 * points' "confirm" objects: the roof taken again over the second
 * measurements of its points (ch_rl_roofs()) is still more than
 * @threshold_pct below the node median (true), or not (false); null when
 * none of its points was measured again validly. Sets "confirmed", and
 * "confirm_value" and "confirm_pct_below" when it is not null.
 * @devices: [in] device objects with the confirm objects in their points.
 * @flagged: [in,out] the flags.
 */
void ch_rl_confirm_verdicts(json_t *devices, json_t *flagged, double threshold_pct);

/**
 * ch_rl_roofs_again - each device's roofs taken again from its second
 * measurements: "roofs_again" {"memory_gbps": GB/s, "compute_gflops":
 * {DTYPE: GFLOP/s}} holds a roof whose point that set it (the highest rate
 * behind the roof, ch_rl_roofs()) was measured again validly, at that
 * point's second rate; absent when no such point was. A CPU socket's roof
 * points are measured again every run (ch_rl_confirm_plan(), why
 * "cpu_socket"), a flagged GPU roof's every point.
 * @devices: [in,out] device objects with the confirm objects in their points.
 */
void ch_rl_roofs_again(json_t *devices);

/**
 * ch_rl_confirm - measure the planned points again at the end of the run;
 * collective under mpirun: world rank 0 plans (ch_rl_confirm_plan()) and
 * broadcasts the plan, each rank measures its own devices' points again
 * (the GPUs' first; after a barrier, the CPU's, as in the first measurement)
 * (reopening the device, the arrays as large as before, every point of the
 * shape it had) and rank 0 gathers the second measurements into each
 * point's "confirm" object {why, time_sec, gbps, gflops, valid, error?}
 * and the flags' verdicts (ch_rl_confirm_verdicts()).
 * @backends: [in] @nbackends backends, found by the devices' "backend".
 * @devices, @flagged: [in,out] rank 0: the gathered devices and their
 *           flags; other ranks: NULL.
 * Returns on every rank its own worst status: CH_ERR_CHECK when a second
 * measurement failed validation, CH_ERR_RUNTIME when one could not be
 * taken (reason in @reason), else CH_OK; CH_OK at once with
 * o->confirm == CH_RL_CONFIRM_OFF (the flags' "confirmed" then null).
 */
int ch_rl_confirm(const struct ch_rl_opts *o, const struct ch_world *mpi, const struct ch_backend *const *backends,
		  int nbackends, json_t *devices, json_t *flagged, double threshold_pct, char *reason, size_t rn);

#ifdef __cplusplus
}
#endif
#endif
