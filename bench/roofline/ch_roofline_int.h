/*
 * ch_roofline_int.h - what the files of roofline's driver share among
 * themselves (not for other parts; the module's interface is ch_roofline.h):
 * the limits and methods, one device's state (struct rl_dev), one point as
 * measured (struct rl_point), and the functions one file calls in another.
 *
 * The driver's files, by what they do:
 *   ch_roofline_opts.c     the plan: options, default array sizes
 *   ch_roofline.c          the run: devices and backends, the points of a
 *                          device, the power-cap sweep, ch_rl_run()
 *   ch_roofline_measure.c  one point measured: shape, timed calls, energy
 *   ch_roofline_confirm.c  validation: flagged points measured again
 *   ch_roofline_record.c   the record: a point's JSON, roofs, node summary,
 *                          the printed tables
 */
#ifndef CH_ROOFLINE_INT_H
#define CH_ROOFLINE_INT_H

#include <jansson.h>
#include <math.h>
#include <stdint.h>

#include "bench/roofline/ch_roofline.h"
#include "base/ch_common.h"
#include "base/ch_datasheet.h"
#include "base/ch_stats.h"
#include "hw/ch_energy.h"
#include "kernels/ch_kernels.h"

/* roofline's --confirm values (ch_roofline_opts.c), indexed by its mode */
extern const char *const confirm_names[];

#define MIB (1024ull * 1024ull)
#define MAX_SAMPLES 100000
#define LADDER_TARGET_SEC 0.02  /* a shortened rung's call at the peak */

/* Energy per point (ch_energy_window): at least the backend's window (this
 * when it gives none), at least this many counter changes, at most this
 * many times the window. */
#define ENERGY_WINDOW_SEC 0.5
#define ENERGY_MIN_UPDATES 5
#define ENERGY_MAX_FACTOR 4.0
#define ENERGY_METHOD "energy counter differenced over a window of repeated calls (>= min_sec and >= min_updates counter changes); power = energy / wall-clock window"
#define ENERGY_BATCH_METHOD "energy counter differenced between two observed counter changes, >= min_sec apart, with batches of >= 50 ms of calls queued back to back (no host synchronisation per call) and only the counter read in between; calls = the calls that ran inside the window (batch times from device events); duty cycle = calls x median call time / window; power = energy / window"
#define NODE_FLAG_PCT 5.0

static inline json_t *jnum(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static inline double jget(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

static inline int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

struct rl_dev {
	const struct ch_rl_opts *o;
	const struct ch_backend *be;
	struct ch_dev *dev;
	struct ch_dev_info info;
	struct ch_result *res;
	json_t *jdev;               /* this device's object (borrowed) */
	json_t *points;             /* its points array (borrowed) */
	const struct ch_datasheet *ds;
	double peak_est[CH_NDTYPES];
	uint64_t array_bytes;
	int invalid, errors;
	const struct ch_shape *force_shape; /* the confirmation: the first measurement's shape */
};

/* One point as measured, before anything is written: measure_point() fills
 * it, emit_point() turns it into the point's JSON object. */
struct rl_point {
	struct ch_point_spec p;
	int shaped;                 /* the shape and counts are known */
	struct ch_counts cnt;
	int rc;                     /* 0, or the status that stopped the point */
	char error[640];            /* why it stopped (rc != 0) */
	struct ch_check chk;
	struct ch_stats st;         /* over the timed calls after the first */
	double t_shape, t_setup, t_check; /* harness seconds */
	int ns, extra;              /* timed calls; extra calls for the energy window */
	int thr0, thr1;             /* throttled before / after: 1, 0, -1 unknown */
	json_t *tel0, *tel1;        /* telemetry before / after (owned), NULL: none */
	int have_e;                 /* an energy counter was read */
	struct ch_energy_window ew;
	int have_plain;             /* plain_st holds the plain-store calls */
	struct ch_stats plain_st;   /* streaming-store CPU stream points: the same calls with plain stores */
	int batched;                /* energy from ch_rl_energy_window() (eb), not ew */
	struct ch_rl_energy eb;
};

static inline int worse(int a, int b)
{
	/* a failed check first, then run-time error, usage, unavailable, ok */
	static const int order[] = { CH_ERR_CHECK, CH_ERR_RUNTIME, CH_ERR_USAGE, CH_ERR_UNAVAILABLE, CH_OK };
	size_t i;
	for (i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if (a == order[i] || b == order[i])
			return order[i];
	return a;
}

json_t *stats_json(const struct ch_stats *s);

int point_shape(struct rl_dev *r, const struct ch_kernel *k, enum ch_dtype dt,
		       struct ch_shape *s);

/* Measure kernel @k in @dt into @pt: shape, set-up, calls, check. A point
 * that fails keeps the status and reason in pt->rc and pt->error. */
void measure_point(struct rl_dev *r, const struct ch_kernel *k, enum ch_dtype dt, int fast_accum,
			  struct rl_point *pt);

/* Append the point's JSON object to the device's points and count it as an
 * error or invalid; returns pt->rc. */
int emit_point(struct rl_dev *r, struct rl_point *pt);

void update_roofs(struct rl_dev *r);

/* A device's table, from its result-file object @d. */
void print_table(json_t *d, const struct ch_rl_opts *o);

void print_node(json_t *node_median, json_t *flagged);

#endif
