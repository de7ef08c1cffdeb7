/*
 * ch_energy.h - energy a run consumed: CPU packages through RAPL (Linux
 * powercap), GPUs through NVML's total energy counter.
 *
 * Sources:
 *  - RAPL: /sys/class/powercap/intel-rapl:N/energy_uj (micro-joules, a
 *    counter that wraps at max_energy_range_uj), Linux
 *    Documentation/power/powercap/powercap.rst. Only the package domains
 *    (name "package-N") are summed: their sub-domains (core, uncore) are
 *    inside them, and "psys" would count the package twice. DRAM domains are
 *    not added. Since Linux 5.10 energy_uj is readable by root only.
 *  - NVML: nvmlDeviceGetTotalEnergyConsumption (millijoules since the driver
 *    was loaded), summed over every GPU (see ch_nvml.h).
 * A source that cannot be read is "n/a" (NAN here, JSON null): never an
 * error.
 *
 * The envelope key "energy" of every result file comes from here (see
 * ch_result_energy_start() and docs/results-schema.md).
 */
#ifndef CH_ENERGY_H
#define CH_ENERGY_H

#include <jansson.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CH_ENERGY_MAX_DOMAINS 16

struct ch_result;

/* A running measurement. Treat as opaque; fill with ch_energy_start(). */
struct ch_energy {
	int n_rapl;                                     /* readable package domains */
	char rapl_path[CH_ENERGY_MAX_DOMAINS][320];     /* .../energy_uj */
	unsigned long long rapl_range_uj[CH_ENERGY_MAX_DOMAINS]; /* wrap point */
	unsigned long long rapl_last_uj[CH_ENERGY_MAX_DOMAINS];  /* last reading */
	double rapl_acc_j;                              /* joules since start */
	int nvml;                                       /* 1: NVML counter in use */
	double nvml_start_j;                            /* NVML total at start */
	double t0_sec;                                  /* ch_now_sec() at start */
};

/* What ch_energy_read() returns. */
struct ch_energy_reading {
	double cpu_j;        /* CPU package energy since start, J; NAN when n/a */
	double gpu_j;        /* GPU energy since start (all GPUs), J; NAN when n/a */
	double wall_sec;     /* seconds since start (monotonic clock) */
	const char *source;  /* "rapl", "nvml", "rapl+nvml" or "unavailable" */
};

/**
 * ch_energy_start - start measuring from this machine's counters.
 * @e: [out] the measurement; release it with ch_energy_stop().
 * Same as ch_energy_start_at(e, "/sys/class/powercap", 1).
 * Returns 0 (a machine with no readable counter still measures wall time).
 */
int ch_energy_start(struct ch_energy *e);

/**
 * ch_energy_start_at - start measuring, reading RAPL under another root.
 * @e:         [out] the measurement.
 * @powercap:  [in] directory holding intel-rapl:N/ folders (tests pass a
 *             fake tree here).
 * @use_nvml:  [in] non-zero to add NVML's GPU energy counter when present.
 * Returns 0.
 */
int ch_energy_start_at(struct ch_energy *e, const char *powercap, int use_nvml);

/**
 * ch_energy_read - energy and time since ch_energy_start().
 * @e:   [in,out] the measurement: RAPL counters are re-read and their
 *       wrap-arounds accumulated, so read at least once per wrap period
 *       (max_energy_range_uj / package power: minutes to hours) on long runs.
 * @out: [out] the reading.
 * Returns 0.
 */
int ch_energy_read(struct ch_energy *e, struct ch_energy_reading *out);

/** ch_energy_stop - release what ch_energy_start() took (NVML reference). */
void ch_energy_stop(struct ch_energy *e);

/**
 * ch_energy_json - the envelope object {"cpu_j": number|null,
 * "gpu_j": number|null, "wall_sec": number, "source": "..."}.
 * Returns a new reference, NULL when out of memory.
 */
json_t *ch_energy_json(const struct ch_energy_reading *r);

/**
 * ch_result_energy_start - start measuring the run's energy (RAPL and NVML
 * counters, wall time) from now on, for result document @r (base/ch_result.h).
 * Every later checkpoint and the finish write the envelope key "energy":
 * {"cpu_j", "gpu_j", "wall_sec", "source"} (docs/results-schema.md), through
 * ch_result_set_live(); ch_result_free() stops the measurement.
 * ch_run_begin() calls it. Call it once per document.
 * Returns 0, or CH_ERR_RUNTIME when out of memory.
 */
int ch_result_energy_start(struct ch_result *r);

/**
 * ch_energy_rapl_delta_uj - micro-joules between two readings of a counter
 * that wraps at @range_uj (the value of max_energy_range_uj).
 * @last, @now: [in] consecutive readings.
 * Returns now - last, or range_uj - last + now when the counter wrapped.
 */
unsigned long long ch_energy_rapl_delta_uj(unsigned long long last,
					   unsigned long long now,
					   unsigned long long range_uj);

/*
 * The energy of one measurement point, from a device counter differenced
 * over a window of repeated calls. A counter that is refreshed only now and
 * then (NVML's total-energy counter: every few tens of milliseconds) gives
 * nothing, or nonsense, over a few milliseconds of calls; so the window
 * runs until it is at least min_sec long AND the counter has changed
 * min_updates times (giving up at max_sec). Each end of the window is off
 * by at most one refresh period of the counter, so a window of many
 * refreshes is accurate to a few percent. Power is that energy over the
 * window's wall-clock time (calls and the gaps between them), never over
 * the kernels' own time.
 */
struct ch_energy_window {
	double min_sec, max_sec;  /* window bounds, s */
	int min_updates;          /* counter changes needed */
	double t0, e0;            /* start: time (s), counter (J) */
	double t1, e1;            /* last reading */
	int calls;                /* calls inside the window */
	int updates;              /* times the counter changed */
};

/* What a window measured. */
struct ch_energy_window_result {
	int ok;               /* 1: enough time and counter updates */
	double energy_j;      /* e1 - e0; NAN unless ok */
	double wall_sec;      /* t1 - t0 */
	double avg_power_w;   /* energy_j / wall_sec; NAN unless ok */
	double gflop_per_j;   /* flops_per_call x calls / energy_j / 1e9; NAN unless ok and flops > 0 */
	int calls, updates;
	char why[160];        /* why not ok ("" when ok) */
};

/**
 * ch_energy_window_start - open a window.
 * @w:           [out] the window.
 * @t0, @e0:     [in] time (s, monotonic) and counter reading (J) at the start.
 * @min_sec:     [in] shortest window, s (> 0).
 * @min_updates: [in] counter changes needed (>= 1).
 * @max_sec:     [in] give up after this long, s (>= min_sec).
 */
void ch_energy_window_start(struct ch_energy_window *w, double t0, double e0, double min_sec,
			    int min_updates, double max_sec);

/**
 * ch_energy_window_add - account for @calls more calls, then a reading.
 * @t: [in] time of the reading, s.  @e: [in] counter, J (NAN: not read,
 * only the calls and the time count).
 */
void ch_energy_window_add(struct ch_energy_window *w, int calls, double t, double e);

/**
 * ch_energy_window_more - 1 while the window needs more calls: shorter than
 * min_sec, or fewer than min_updates counter changes and shorter than
 * max_sec; else 0.
 */
int ch_energy_window_more(const struct ch_energy_window *w);

/**
 * ch_energy_window_result - the window's figures.
 * @flops_per_call: [in] FLOPs of one call (0: no gflop_per_j).
 * @out:            [out] see struct ch_energy_window_result.
 */
void ch_energy_window_result(const struct ch_energy_window *w, double flops_per_call,
			     struct ch_energy_window_result *out);

#ifdef __cplusplus
}
#endif
#endif
