/*
 * ch_roofline_power.h - roofline's power-cap sweep (--power-limits): for
 * each cap, set it on the GPU through NVML (hw/ch_powercap.h), wait until
 * the enforced limit reads back and the power settles, measure the chosen
 * points, and put the original limit back; then the recommendation: the
 * lowest cap whose compute-bound performance stays within a tolerance of
 * the figure at the default limit, with the energy per FLOP saved there.
 *
 * The method, the restore guarantees and the recommendation rule with its
 * sources: docs/roofline.md, "Power caps". The result keys:
 * docs/results-schema.md, "roofline", power_sweep.
 */
#ifndef CH_ROOFLINE_POWER_H
#define CH_ROOFLINE_POWER_H

#include <jansson.h>
#include <stdio.h>

#include "bench/common/ch_opts.h"
#include "kernels/ch_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CH_RL_MAX_CAPS 32
#define CH_RL_SWEEP_MAX_POINTS 16
#define CH_RL_POWER_TOLERANCE_PCT 5.0

/* Long-only options of the sweep (after roofline's own). */
enum {
	CH_RL_OPT_POWER_LIMITS = CH_OPT_FIRST_TOOL + 0x40,
	CH_RL_OPT_POWER_TOLERANCE,
	CH_RL_OPT_POWER_STATE,
	CH_RL_OPT_POWER_RESTORE,
	CH_RL_OPT_POWER_ABOVE
};

#define CH_RL_POWER_LONGOPTS                                                        \
	{ "power-limits", required_argument, NULL, CH_RL_OPT_POWER_LIMITS },        \
	{ "power-tolerance", required_argument, NULL, CH_RL_OPT_POWER_TOLERANCE },  \
	{ "power-state", required_argument, NULL, CH_RL_OPT_POWER_STATE },          \
	{ "power-restore", no_argument, NULL, CH_RL_OPT_POWER_RESTORE },          \
	{ "power-above-original", no_argument, NULL, CH_RL_OPT_POWER_ABOVE }

/* One requested cap: watts, or percent of the limit the GPU had when the
 * run started (its original limit, which an operator may have set below
 * the default). */
struct ch_rl_cap {
	double value;
	int pct;                /* 1: value is a percentage of the original limit */
	char text[24];          /* as given, e.g. "85%" or "450" */
};

struct ch_rl_power_opts {
	int ncaps;                         /* 0: no sweep */
	struct ch_rl_cap caps[CH_RL_MAX_CAPS];
	double tolerance_pct;              /* --power-tolerance, default 5 */
	const char *state;                 /* --power-state FILE, NULL: ch_powercap_state_path() */
	int restore_only;                  /* --power-restore */
	int above_original;                /* --power-above-original: caps above the original limit allowed */
	json_t *restored_at_start;         /* ch_rl_power_recover()'s report (owned), NULL: none */
};

/** ch_rl_power_opts_init - no sweep, tolerance 5%, the default state file. */
void ch_rl_power_opts_init(struct ch_rl_power_opts *p);

/**
 * ch_rl_power_opt - one of the sweep's options (ch_opts_getopt() handler
 * style). Returns 1 when handled, 0 when @c is not one of them, or
 * CH_ERR_USAGE (message printed).
 */
int ch_rl_power_opt(int c, const char *arg, struct ch_rl_power_opts *p);

/**
 * ch_rl_parse_caps - parse --power-limits: a comma-separated list of caps,
 * each watts ("450", "450W") or percent of the GPU's original limit ("85%"),
 * plain decimal, watts in (0, 10000], percent in (0, 200]; at most
 * CH_RL_MAX_CAPS. Returns 0 or CH_ERR_USAGE (printed).
 */
int ch_rl_parse_caps(const char *arg, struct ch_rl_power_opts *p);

/** ch_rl_power_usage - the sweep's part of roofline --help. */
void ch_rl_power_usage(FILE *f);

/**
 * ch_rl_power_recover - at start, before anything else: restore the limits
 * an earlier run left (ch_powercap_recover() on the state file); the report
 * goes into p->restored_at_start. Returns its status (0 nothing, 1 restored,
 * CH_ERR_UNAVAILABLE, CH_ERR_RUNTIME).
 */
int ch_rl_power_recover(struct ch_rl_power_opts *p);

/* What the sweep needs of roofline's driver for one open GPU. */
struct ch_rl_sweep_ops {
	void *ctx;                          /* roofline's device record */
	const struct ch_backend *be;
	struct ch_dev *dev;
	const char *device;                 /* "gpu0" */
	const char *pci_bus_id;             /* "0000:1b:00.0": finds the GPU in NVML */
	int npoints;                        /* the points measured at each cap */
	const struct ch_kernel *k[CH_RL_SWEEP_MAX_POINTS];
	enum ch_dtype dt[CH_RL_SWEEP_MAX_POINTS];
	/* shape - fill @out (k, dt, shape) for the settle calls; 0 or a status */
	int (*shape)(void *ctx, const struct ch_kernel *k, enum ch_dtype dt, struct ch_point_spec *out);
	/* measure - measure the point as roofline does (calls, energy window,
	 * check) and append its object to @points; 0, or the status of a point
	 * that failed (an invalid point returns 0 with "valid": false) */
	int (*measure)(void *ctx, const struct ch_kernel *k, enum ch_dtype dt, json_t *points);
	/* checkpoint - write the result file as it is now */
	void (*checkpoint)(void *ctx);
};

/**
 * ch_rl_power_sweep - the sweep of one GPU into @sweep (an empty object,
 * already part of the device's object so that checkpoints show it).
 * Order: the GPU's limits and constraints; the caps in watts, sorted from
 * the highest down, with the default limit added as the reference when the
 * list lacks it (a cap outside the constraints: CH_ERR_USAGE, nothing
 * changed); the permission probe (not root: CH_ERR_UNAVAILABLE, nothing
 * changed); the state file (cannot be written: CH_ERR_RUNTIME, nothing
 * changed); then for each cap: set, read back (5 s), settle, the points;
 * a cap that does not read back or a point that fails or is invalid ends
 * the sweep; the original limit is set back at once, and the caps left are
 * listed as not measured. Then the per-cap losses and the recommendation.
 * @ref_points: [out] the index in sweep.caps of the reference cap (the
 *              default limit), -1 when it was not measured.
 * Returns 0, or the status with @reason.
 */
int ch_rl_power_sweep(const struct ch_rl_power_opts *p, const struct ch_rl_sweep_ops *ops, json_t *sweep,
		      int *ref_cap, char *reason, size_t n);

/* One cap of a curve, for the recommendation (NAN: not measured). */
struct ch_rl_curve_pt {
	double cap_w;
	double perf;            /* compute-bound point: GFLOP/s */
	double gflop_per_j;     /* its energy efficiency */
	double power_w;         /* its average power */
	double mem_perf;        /* memory-bound point: GB/s */
};

struct ch_rl_rec {
	int index;              /* the recommended cap in the curve, -1: none */
	int ref;                /* the reference (default limit) in the curve, -1: none */
	double cap_w;
	double loss_pct;        /* compute-bound performance lost there, % of the reference */
	double energy_saved_pct;/* energy per FLOP saved there, % (NAN: not measured) */
	double power_saved_w;   /* average power saved there, W (NAN: not measured) */
	double mem_loss_pct;    /* memory-bound performance lost there, % (NAN: none) */
	int stopped_at;         /* the first cap below it that lost more than the tolerance, -1: none */
	char why[256];          /* when index < 0: why there is none */
};

/**
 * ch_rl_power_recommend - the recommendation rule on one curve.
 * @pts: [in] @n caps sorted from the highest cap down.
 * @ref_cap_w: [in] the reference cap (the default limit), W: the cap of
 *             @pts within 0.5 W of it is the uncapped figure.
 * @tol_pct:   [in] tolerance, % (5).
 * Walking down from the reference, every cap whose compute-bound
 * performance is at least (1 - tol/100) x the reference's passes; the
 * first that does not, or that was not measured, stops the walk (a lower
 * cap that passes again is not recommended: performance falls with the
 * cap, so that is noise). The recommendation is the last cap that passed:
 * the reference itself when the first cap below it already loses more.
 * Returns 0 with @out filled, or CH_ERR_CHECK with out->why when there is
 * no reference figure (not measured, invalid, zero).
 */
int ch_rl_power_recommend(const struct ch_rl_curve_pt *pts, int n, double ref_cap_w, double tol_pct,
			  struct ch_rl_rec *out);

/**
 * ch_rl_power_node - the node's recommendation from its GPU devices'
 * power_sweep objects: the highest of their recommended caps (in a
 * synchronous job the slowest GPU sets the pace, so the node's cap must
 * keep every GPU within the tolerance), with each GPU's loss and energy
 * saved at that cap. Returns a new object, or JSON null when no device has
 * a recommendation.
 */
json_t *ch_rl_power_node(json_t *devices, double tol_pct);

/** ch_rl_power_print - the sweep's lines below a device's table. */
void ch_rl_power_print(json_t *device);

/** ch_rl_power_print_node - the node's recommendation line (@node from
 * ch_rl_power_node(); nothing for null). */
void ch_rl_power_print_node(json_t *node);

#ifdef __cplusplus
}
#endif
#endif
