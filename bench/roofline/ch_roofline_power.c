/*
 * ch_roofline_power.c - roofline's power-cap sweep and its recommendation
 * (see ch_roofline_power.h; method and sources in docs/roofline.md, "Power
 * caps").
 */
#include "bench/roofline/ch_roofline_power.h"
#include "base/ch_common.h"
#include "base/ch_parse.h"
#include "base/ch_result.h"
#include "base/ch_stats.h"
#include "hw/ch_nvml.h"
#include "hw/ch_powercap.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define READBACK_SEC 5.0        /* the enforced limit reads back within this */
#define SETTLE_TOL 0.02         /* two windows' mean power within 2% */
#define SETTLE_MAX_SEC 20.0     /* at most this long settling */
#define SETTLE_SAMPLE_SEC 0.02  /* a power reading at most every 20 ms */
#define SETTLE_RULE "calls of the compute-bound point in windows of the backend's energy window (GPU 0.5 s); " \
	"settled when the mean NVML power of a window is within 2% of the window before (at most 20 s)"
#define REC_RULE "the lowest cap, walking down from the original limit (the GPU's limit when the run started), " \
	"whose compute-bound performance stays within the tolerance of the figure at the original limit; the first " \
	"cap that loses more ends the walk"
#define SAME_W 0.5

void ch_rl_power_opts_init(struct ch_rl_power_opts *p)
{
	memset(p, 0, sizeof(*p));
	p->tolerance_pct = CH_RL_POWER_TOLERANCE_PCT;
}

int ch_rl_parse_caps(const char *arg, struct ch_rl_power_opts *p)
{
	char buf[1024], *items[CH_RL_MAX_CAPS + 1];
	int n, i;

	if (!arg || !*arg)
		return ch_usage_error("empty value for --power-limits");
	if (strlen(arg) >= sizeof(buf))
		return ch_usage_error("value of --power-limits is too long");
	strcpy(buf, arg);
	n = ch_split_list(buf, items, CH_RL_MAX_CAPS + 1);
	if (n < 0 || n > CH_RL_MAX_CAPS)
		return ch_usage_error("bad list '%s' for --power-limits (empty item or more than %d caps)", arg,
				      CH_RL_MAX_CAPS);
	for (i = 0; i < n; i++) {
		struct ch_rl_cap *c = &p->caps[i];
		size_t len = strlen(items[i]);
		char num[32];
		if (len >= sizeof(num) || len >= sizeof(c->text))
			return ch_usage_error("cap '%s' of --power-limits is too long", items[i]);
		snprintf(c->text, sizeof(c->text), "%s", items[i]);
		snprintf(num, sizeof(num), "%s", items[i]);
		c->pct = len > 1 && num[len - 1] == '%';
		if (c->pct || (len > 1 && (num[len - 1] == 'W' || num[len - 1] == 'w')))
			num[len - 1] = '\0';
		if (ch_parse_double("--power-limits", num, 0, c->pct ? 200 : 10000, &c->value))
			return CH_ERR_USAGE;
		if (!(c->value > 0))
			return ch_usage_error("cap '%s' of --power-limits must be above 0", items[i]);
	}
	p->ncaps = n;
	return 0;
}

int ch_rl_power_opt(int c, const char *arg, struct ch_rl_power_opts *p)
{
	switch (c) {
	case CH_RL_OPT_POWER_LIMITS:
		return ch_rl_parse_caps(arg, p) == 0 ? 1 : CH_ERR_USAGE;
	case CH_RL_OPT_POWER_TOLERANCE:
		if (ch_parse_double("--power-tolerance", arg, 0, 99, &p->tolerance_pct))
			return CH_ERR_USAGE;
		if (!(p->tolerance_pct > 0))
			return ch_usage_error("--power-tolerance '%s' must be above 0", arg);
		return 1;
	case CH_RL_OPT_POWER_STATE:
		if (!arg || !*arg)
			return ch_usage_error("empty value for --power-state");
		p->state = arg;
		return 1;
	case CH_RL_OPT_POWER_RESTORE:
		p->restore_only = 1;
		return 1;
	case CH_RL_OPT_POWER_ABOVE:
		p->above_original = 1;
		return 1;
	default:
		return 0;
	}
}

void ch_rl_power_usage(FILE *f)
{
	fputs("\n"
	      "Power caps (GPUs, NVML; setting a limit needs root):\n"
	      "  --power-limits LIST  sweep power caps: watts (450) or percent of the\n"
	      "                     GPU's original limit, the one it has when the run\n"
	      "                     starts (85%), e.g. 100%,85%,70%,55%; at each cap the\n"
	      "                     limit is set, read back and the power settles, then\n"
	      "                     the points run (default: gemm bf16 and triad fp64, a\n"
	      "                     compute-bound and a memory-bound point); the original\n"
	      "                     limit is measured too, as the reference. The original\n"
	      "                     limits are always put back: at the end, on a failed\n"
	      "                     point, on SIGINT/SIGTERM, and at the next start after a\n"
	      "                     run that died (from the state file)\n"
	      "  --power-above-original  allow caps above the original limit (refused\n"
	      "                     otherwise, exit 2: an operator's lower cap is kept)\n"
	      "  --power-tolerance PCT  the recommended cap is the lowest one whose\n"
	      "                     compute-bound performance stays within PCT % of the\n"
	      "                     original limit's (default 5)\n"
	      "  --power-state FILE where the original limits are recorded while a GPU is\n"
	      "                     capped (default $CH_POWER_STATE, else\n"
	      "                     " CH_POWERCAP_STATE_DEFAULT "); when it cannot be\n"
	      "                     written no limit is changed\n"
	      "  --power-restore    only restore what the state file says an earlier run\n"
	      "                     left capped, then exit (0 done or nothing to do, 3 not\n"
	      "                     permitted or no NVML, 4 unreadable state file)\n", f);
}

int ch_rl_power_recover(struct ch_rl_power_opts *p)
{
	json_t *rep = NULL;
	int rc = ch_powercap_recover(ch_powercap_state_path(p->state), &rep);

	json_decref(p->restored_at_start);
	p->restored_at_start = rep;
	return rc;
}

/* ------------------------------------------------------------ helpers */

static json_t *jnum(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

static double jget(const json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

static const char *jstr(const json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static int is_compute(const struct ch_kernel *k)
{
	return k->family == CH_FAM_GEMM || k->family == CH_FAM_LADDER;
}

static int cmp_desc(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x < y) - (x > y);
}

/* ------------------------------------------------------------ the recommendation */

int ch_rl_power_recommend(const struct ch_rl_curve_pt *pts, int n, double ref_cap_w, double tol_pct,
			  struct ch_rl_rec *out)
{
	double floor_;
	int i, ref = -1;

	memset(out, 0, sizeof(*out));
	out->index = out->ref = out->stopped_at = -1;
	out->cap_w = out->loss_pct = out->energy_saved_pct = out->power_saved_w = out->mem_loss_pct = NAN;
	for (i = 0; i < n; i++)
		if (fabs(pts[i].cap_w - ref_cap_w) <= SAME_W)
			ref = i;
	if (ref < 0) {
		snprintf(out->why, sizeof(out->why), "the original limit %.0f W was not measured", ref_cap_w);
		return CH_ERR_CHECK;
	}
	out->ref = ref;
	if (!(pts[ref].perf > 0)) {
		snprintf(out->why, sizeof(out->why), "no compute-bound figure at the original limit %.0f W", ref_cap_w);
		return CH_ERR_CHECK;
	}
	floor_ = pts[ref].perf * (1 - tol_pct / 100.0);
	out->index = ref;
	for (i = ref + 1; i < n; i++) {
		if (!(pts[i].perf >= floor_)) {
			out->stopped_at = i;
			break;
		}
		out->index = i;
	}
	i = out->index;
	out->cap_w = pts[i].cap_w;
	out->loss_pct = 100.0 * (1 - pts[i].perf / pts[ref].perf);
	if (pts[i].gflop_per_j > 0 && pts[ref].gflop_per_j > 0)
		out->energy_saved_pct = 100.0 * (1 - pts[ref].gflop_per_j / pts[i].gflop_per_j);
	if (pts[i].power_w > 0 && pts[ref].power_w > 0)
		out->power_saved_w = pts[ref].power_w - pts[i].power_w;
	if (pts[i].mem_perf > 0 && pts[ref].mem_perf > 0)
		out->mem_loss_pct = 100.0 * (1 - pts[i].mem_perf / pts[ref].mem_perf);
	return 0;
}

/* ------------------------------------------------------------ the sweep */

struct sweep {
	const struct ch_rl_power_opts *p;
	const struct ch_rl_sweep_ops *ops;
	struct ch_powercap_gpu g;
	json_t *obj, *caps;
	int compute, memory;         /* index of the compute- and memory-bound point, -1 none */
};

/* Calls of the settle point until the power settles; fills @st. Returns 0,
 * or the status of a call that failed (@why). */
static int settle(struct sweep *s, json_t *st, char *why, size_t n)
{
	const struct ch_rl_sweep_ops *ops = s->ops;
	const double win = ops->be->energy_window_sec > 0 ? ops->be->energy_window_sec : 0.5;
	const int ip = s->compute >= 0 ? s->compute : 0;
	struct ch_point_spec sp;
	double t0 = ch_now_sec(), prev = NAN, mean = NAN, sec;
	int rc, windows = 0, settled = 0, readable = 0;

	memset(&sp, 0, sizeof(sp));
	ch_clear_last_error();
	if ((rc = ops->shape(ops->ctx, ops->k[ip], ops->dt[ip], &sp)) != 0 ||
	    (rc = ops->be->setup(ops->dev, &sp)) != 0) {
		snprintf(why, n, "settle: set-up of %s %s failed (%s): %s", ops->k[ip]->name, ch_dtype_name(ops->dt[ip]),
			 ch_status_name(rc), ch_last_error()[0] ? ch_last_error() : "no message");
		return rc ? rc : CH_ERR_RUNTIME;
	}
	sp.k = ops->k[ip];
	sp.dt = ops->dt[ip];
	for (;;) {
		double ws = ch_now_sec(), last = -1, sum = 0, now;
		int ns = 0;
		do {
			if ((rc = ops->be->run(ops->dev, &sp, &sec)) != 0) {
				snprintf(why, n, "settle: a call of %s %s failed (%s): %s", sp.k->name, ch_dtype_name(sp.dt),
					 ch_status_name(rc), ch_last_error()[0] ? ch_last_error() : "no message");
				if (ops->be->teardown)
					ops->be->teardown(ops->dev, &sp);
				return rc;
			}
			now = ch_now_sec();
			if (now - last >= SETTLE_SAMPLE_SEC) {
				struct ch_nvml_sample smp;
				if (ch_nvml_sample(s->g.dev, &smp) == 0 && !isnan(smp.power_w))
					sum += smp.power_w, ns++;
				last = now;
			}
		} while (now - ws < win);
		mean = ns ? sum / ns : NAN;
		readable |= ns > 0;
		windows++;
		if (windows >= 2 && (!readable || (!isnan(prev) && fabs(mean - prev) <= SETTLE_TOL * prev))) {
			settled = readable;
			break;
		}
		if (ch_now_sec() - t0 >= SETTLE_MAX_SEC)
			break;
		prev = mean;
	}
	if (ops->be->teardown)
		ops->be->teardown(ops->dev, &sp);
	json_object_set_new(st, "sec", json_real(ch_now_sec() - t0));
	json_object_set_new(st, "windows", json_integer(windows));
	json_object_set_new(st, "window_sec", json_real(win));
	json_object_set_new(st, "power_w", jnum(mean));
	json_object_set_new(st, "settled", readable ? json_boolean(settled) : json_null());
	json_object_set_new(st, "rule", json_string(readable ? SETTLE_RULE :
		"NVML power unreadable: two windows of calls, not judged settled"));
	return 0;
}

/* The per-cap summary of point @jp under @key ("compute", "memory"). */
static void cap_summary(json_t *cap, const char *key, const json_t *jp)
{
	const json_t *tel = json_object_get(jp, "telemetry");
	const json_t *after = json_object_get(tel, "after");
	int gemm = !strcmp(key, "compute");
	double perf = jget(jp, gemm ? "gflops" : "gbps"), pw = jget(tel, "avg_power_w");
	json_t *o;

	if (!jp) {
		json_object_set_new(cap, key, json_null());
		return;
	}
	o = json_pack("{s:O?,s:O?,s:b}", "kernel", json_object_get(jp, "kernel"), "dtype", json_object_get(jp, "dtype"),
		      "valid", json_is_true(json_object_get(jp, "valid")));
	json_object_set_new(o, gemm ? "gflops" : "gbps", jnum(perf));
	json_object_set_new(o, "avg_power_w", jnum(pw));
	json_object_set_new(o, "energy_j", jnum(jget(tel, "energy_j")));
	/* energy per unit of work while the point runs: its median rate over the
	 * average power of its energy window (GFLOP/s / W = GFLOP/J); the
	 * window's own figure (work / energy, gaps between calls included)
	 * beside it */
	json_object_set_new(o, gemm ? "gflop_per_j" : "gb_per_j", pw > 0 && perf > 0 ? json_real(perf / pw) : json_null());
	if (gemm)
		json_object_set_new(o, "gflop_per_j_window", jnum(jget(tel, "gflop_per_j")));
	json_object_set_new(o, "sm_mhz", jnum(jget(after, "sm_mhz")));
	json_object_set_new(o, "mem_mhz", jnum(jget(after, "mem_mhz")));
	json_object_set(o, "clock_event_reasons", json_object_get(after, "clock_event_reasons") ?
			json_object_get(after, "clock_event_reasons") : json_null());
	json_object_set_new(o, "throttled", json_is_boolean(json_object_get(jp, "throttled")) ?
			    json_boolean(json_is_true(json_object_get(jp, "throttled"))) : json_null());
	json_object_set_new(o, "loss_pct", json_null());
	json_object_set_new(cap, key, o);
}

/* Measure the points at one cap into @cap; returns 0 or the status that
 * ends the sweep (@why). */
static int measure_cap(struct sweep *s, json_t *cap, char *why, size_t n)
{
	const struct ch_rl_sweep_ops *ops = s->ops;
	json_t *points = json_array(), *st = json_object(), *jp;
	double v0[2], v1[2], t0, t1;
	int i, rc, t;

	json_object_set_new(cap, "settle", st);
	json_object_set_new(cap, "points", points);
	if ((rc = settle(s, st, why, n)) != 0)
		return rc;
	t0 = ch_now_sec();
	for (t = 0; t < 2; t++)
		v0[t] = ch_powercap_violation_ms(s->g.dev, t);
	for (i = 0; i < ops->npoints; i++) {
		rc = ops->measure(ops->ctx, ops->k[i], ops->dt[i], points);
		jp = json_array_get(points, json_array_size(points) - 1);
		ops->checkpoint(ops->ctx);
		if (rc != 0 || !jp) {
			snprintf(why, n, "%s %s at %.0f W: %s", ops->k[i]->name, ch_dtype_name(ops->dt[i]),
				 jget(cap, "cap_w"), jp && jstr(jp, "error") ? jstr(jp, "error") : ch_status_name(rc));
			return rc ? rc : CH_ERR_RUNTIME;
		}
		if (!json_is_true(json_object_get(jp, "valid"))) {
			snprintf(why, n, "%s %s at %.0f W failed validation", ops->k[i]->name, ch_dtype_name(ops->dt[i]),
				 jget(cap, "cap_w"));
			return CH_ERR_CHECK;
		}
	}
	t1 = ch_now_sec();
	for (t = 0; t < 2; t++)
		v1[t] = ch_powercap_violation_ms(s->g.dev, t);
	json_object_set_new(cap, "violation_ms", isnan(v0[0]) || isnan(v1[0]) ? json_null() :
			    json_pack("{s:f,s:o,s:f,s:s}", "power", v1[0] - v0[0], "thermal",
				      isnan(v0[1]) || isnan(v1[1]) ? json_null() : json_real(v1[1] - v0[1]),
				      "window_sec", t1 - t0, "source",
				      "nvmlDeviceGetViolationStatus (NVML_PERF_POLICY_POWER, _THERMAL) differenced over the points"));
	cap_summary(cap, "compute", s->compute >= 0 ? json_array_get(points, (size_t)s->compute) : NULL);
	cap_summary(cap, "memory", s->memory >= 0 ? json_array_get(points, (size_t)s->memory) : NULL);
	return 0;
}

/* Losses against the reference cap and the recommendation, into s->obj. */
static void recommend(struct sweep *s, int ref)
{
	struct ch_rl_curve_pt pts[CH_RL_MAX_CAPS + 1];
	struct ch_rl_rec rec;
	size_t i, n = json_array_size(s->caps);
	json_t *cap, *o, *curve = json_array();
	double pref = NAN, mref = NAN;

	if (ref >= 0) {
		pref = jget(json_object_get(json_array_get(s->caps, (size_t)ref), "compute"), "gflops");
		mref = jget(json_object_get(json_array_get(s->caps, (size_t)ref), "memory"), "gbps");
	}
	json_array_foreach(s->caps, i, cap) {
		json_t *c = json_object_get(cap, "compute"), *m = json_object_get(cap, "memory");
		int ok = !strcmp(jstr(cap, "status"), "ok");
		pts[i].cap_w = jget(cap, "cap_w");
		pts[i].perf = ok ? jget(c, "gflops") : NAN;
		pts[i].gflop_per_j = ok ? jget(c, "gflop_per_j") : NAN;
		pts[i].power_w = ok ? jget(c, "avg_power_w") : NAN;
		pts[i].mem_perf = ok ? jget(m, "gbps") : NAN;
		if (json_is_object(c) && pref > 0 && pts[i].perf > 0)
			json_object_set_new(c, "loss_pct", json_real(100.0 * (1 - pts[i].perf / pref)));
		if (json_is_object(m) && mref > 0 && pts[i].mem_perf > 0)
			json_object_set_new(m, "loss_pct", json_real(100.0 * (1 - pts[i].mem_perf / mref)));
		json_array_append_new(curve, json_pack("{s:f,s:o,s:o,s:o,s:o,s:o}", "cap_w", pts[i].cap_w,
			"pct_of_default", jnum(100.0 * pts[i].cap_w / s->g.default_w), "gflops", jnum(pts[i].perf),
			"gflop_per_j", jnum(pts[i].gflop_per_j), "avg_power_w", jnum(pts[i].power_w),
			"gbps", jnum(pts[i].mem_perf)));
	}
	json_object_set_new(s->obj, "curve", curve);
	if (s->compute < 0) {
		json_object_set_new(s->obj, "recommendation", json_pack("{s:n,s:b,s:s}", "cap_w", "judged", 0, "why",
			"no compute-bound point (gemm or ladder) was measured"));
		return;
	}
	if (ch_rl_power_recommend(pts, (int)n, s->g.limit_w, s->p->tolerance_pct, &rec) != 0) {
		json_object_set_new(s->obj, "recommendation", json_pack("{s:n,s:b,s:s}", "cap_w", "judged", 0, "why",
									rec.why));
		return;
	}
	o = json_object();
	json_object_set_new(o, "cap_w", json_real(rec.cap_w));
	json_object_set_new(o, "pct_of_default", json_real(100.0 * rec.cap_w / s->g.default_w));
	json_object_set_new(o, "pct_of_original", json_real(100.0 * rec.cap_w / s->g.limit_w));
	json_object_set_new(o, "judged", json_true());
	json_object_set_new(o, "compute_kernel", json_pack("{s:s,s:s}", "kernel", s->ops->k[s->compute]->name,
							   "dtype", ch_dtype_name(s->ops->dt[s->compute])));
	json_object_set_new(o, "compute_loss_pct", jnum(rec.loss_pct));
	json_object_set_new(o, "energy_per_flop_saved_pct", jnum(rec.energy_saved_pct));
	json_object_set_new(o, "power_saved_w", jnum(rec.power_saved_w));
	json_object_set_new(o, "memory_kernel", s->memory >= 0 ? json_pack("{s:s,s:s}", "kernel",
		s->ops->k[s->memory]->name, "dtype", ch_dtype_name(s->ops->dt[s->memory])) : json_null());
	json_object_set_new(o, "memory_loss_pct", jnum(rec.mem_loss_pct));
	json_object_set_new(o, "reference_cap_w", json_real(s->g.limit_w));
	json_object_set_new(o, "reference", json_string("the original limit: the GPU's limit when the run started"));
	json_object_set_new(o, "tolerance_pct", json_real(s->p->tolerance_pct));
	json_object_set_new(o, "stopped_at_cap_w", rec.stopped_at >= 0 ? json_real(pts[rec.stopped_at].cap_w) :
			    json_null());
	json_object_set_new(o, "lowest_cap_measured", json_boolean(rec.index == (int)n - 1));
	json_object_set_new(o, "rule", json_string(REC_RULE));
	json_object_set_new(s->obj, "recommendation", o);
}

/* Cap @i of the options in watts (whole milliwatts, as NVML takes them). */
static double cap_watts(const struct sweep *s, int i)
{
	const struct ch_rl_cap *c = &s->p->caps[i];
	double v = c->pct ? c->value / 100.0 * s->g.limit_w : c->value;
	return round(v * 1000.0) / 1000.0;
}

/* The caps in watts, from the highest down, the reference (the original
 * limit) added; 0 or CH_ERR_USAGE with @why (a cap outside the GPU's range,
 * or above the original limit without --power-above-original). */
static int plan_caps(struct sweep *s, double *w, const char **req, int *nw, char *why, size_t n)
{
	const struct ch_rl_power_opts *p = s->p;
	const double orig = s->g.limit_w;
	double raw[CH_RL_MAX_CAPS + 1];
	int i, j, k = 0, have_ref = 0;

	for (i = 0; i < p->ncaps; i++) {
		double v = cap_watts(s, i);
		if (v < s->g.min_w - 1e-9 || v > s->g.max_w + 1e-9) {
			snprintf(why, n, "power cap '%s' (%.1f W) is outside the range this GPU accepts, %.0f-%.0f W "
				 "(nvmlDeviceGetPowerManagementLimitConstraints); original limit %.0f W, default %.0f W; "
				 "no limit changed", p->caps[i].text, v, s->g.min_w, s->g.max_w, orig, s->g.default_w);
			return CH_ERR_USAGE;
		}
		if (v > orig + SAME_W && !p->above_original) {
			snprintf(why, n, "power cap '%s' (%.1f W) is above the limit this GPU has now, %.0f W (default "
				 "%.0f W): an operator's cap is not raised unless --power-above-original asks; no limit "
				 "changed", p->caps[i].text, v, orig, s->g.default_w);
			return CH_ERR_USAGE;
		}
		raw[k++] = v;
	}
	for (i = 0; i < k; i++)
		have_ref |= fabs(raw[i] - orig) <= SAME_W;
	if (!have_ref)
		raw[k++] = orig;
	qsort(raw, (size_t)k, sizeof(raw[0]), cmp_desc);
	*nw = 0;
	for (i = 0; i < k; i++) {
		if (*nw && fabs(w[*nw - 1] - raw[i]) <= SAME_W)
			continue;
		w[*nw] = raw[i];
		req[*nw] = fabs(raw[i] - orig) <= SAME_W && !have_ref ? "original (reference)" : NULL;
		for (j = 0; j < p->ncaps && !req[*nw]; j++)
			if (fabs(cap_watts(s, j) - raw[i]) <= SAME_W)
				req[*nw] = p->caps[j].text;
		(*nw)++;
	}
	return 0;
}

static void restore(struct sweep *s, const char *how, int *status, char *reason, size_t n)
{
	char why[512] = "";
	double rb;
	int rc = ch_powercap_restore(&s->g, &rb, why, sizeof(why));

	json_object_set_new(s->obj, "restored", json_pack("{s:f,s:o,s:s,s:b,s:s?}", "limit_w", s->g.limit_w,
		"readback_w", jnum(rb), "when", how, "ok", rc == 0, "why", rc ? why : NULL));
	json_object_set_new(s->obj, "limit_now_w", jnum(rb));
	if (rc != 0) {
		snprintf(reason, n, "the original power limit %.0f W was NOT put back: %s (the state file keeps it: "
			 "the next roofline start, or roofline --power-restore, restores it)", s->g.limit_w, why);
		*status = CH_ERR_RUNTIME;
		ch_error("%s: %s", s->ops->device, reason);
	}
}

int ch_rl_power_sweep(const struct ch_rl_power_opts *p, const struct ch_rl_sweep_ops *ops, json_t *sweep,
		      int *ref_cap, char *reason, size_t n)
{
	struct sweep s;
	ch_nvml_dev_t dev;
	double w[CH_RL_MAX_CAPS + 1];
	const char *req[CH_RL_MAX_CAPS + 1];
	const char *state = ch_powercap_state_path(p->state);
	char why[768] = "";
	int i, nw = 0, rc, status = 0, stop = -1;

	*ref_cap = -1;
	memset(&s, 0, sizeof(s));
	s.p = p;
	s.ops = ops;
	s.obj = sweep;
	s.compute = s.memory = -1;
	for (i = 0; i < ops->npoints; i++) {
		if (s.compute < 0 && is_compute(ops->k[i]))
			s.compute = i;
		if (s.memory < 0 && ops->k[i]->family == CH_FAM_STREAM)
			s.memory = i;
	}
	json_object_set_new(sweep, "state_file", json_string(state));
	json_object_set_new(sweep, "tolerance_pct", json_real(p->tolerance_pct));
	if (ch_nvml_init(why, sizeof(why)) != 0) {
		snprintf(reason, n, "power caps need NVML: %s", why);
		return CH_ERR_UNAVAILABLE;
	}
	if (!ops->pci_bus_id || !ops->pci_bus_id[0] || ch_nvml_device_by_pci(ops->pci_bus_id, &dev) != 0) {
		snprintf(reason, n, "NVML does not see a GPU at PCI bus id '%s': no power limit to set",
			 ops->pci_bus_id ? ops->pci_bus_id : "");
		ch_nvml_shutdown();
		return CH_ERR_UNAVAILABLE;
	}
	if (ch_powercap_read(dev, &s.g, why, sizeof(why)) != 0) {
		snprintf(reason, n, "cannot read its power limits: %s", why);
		ch_nvml_shutdown();
		return CH_ERR_UNAVAILABLE;
	}
	json_object_set_new(sweep, "gpu_uuid", json_string(s.g.uuid));
	json_object_set_new(sweep, "pci_bus_id", json_string(s.g.pci_bus_id));
	json_object_set_new(sweep, "default_limit_w", json_real(s.g.default_w));
	json_object_set_new(sweep, "original_limit_w", json_real(s.g.limit_w));
	json_object_set_new(sweep, "original_enforced_w", json_real(s.g.enforced_w));
	json_object_set_new(sweep, "constraints_w", json_pack("{s:f,s:f,s:s}", "min", s.g.min_w, "max", s.g.max_w,
		"source", "nvmlDeviceGetPowerManagementLimitConstraints"));
	s.caps = json_array();
	json_object_set_new(sweep, "caps", s.caps);
	json_object_set_new(sweep, "not_measured", json_array());
	json_object_set_new(sweep, "restored", json_null());
	json_object_set_new(sweep, "limit_now_w", json_real(s.g.limit_w));
	json_object_set_new(sweep, "curve", json_array());
	json_object_set_new(sweep, "recommendation", json_null());
	if ((rc = plan_caps(&s, w, req, &nw, why, sizeof(why))) != 0 ||
	    (rc = ch_powercap_probe(&s.g, why, sizeof(why))) != 0) {
		snprintf(reason, n, "%s%s", why, rc == CH_ERR_UNAVAILABLE ? "; no limit changed" : "");
		ch_nvml_shutdown();
		return rc;
	}
	/* a signal restores from the thread that takes it; a failed state
	 * file changes nothing */
	ch_result_on_signal(ch_powercap_on_signal, NULL);
	if ((rc = ch_powercap_begin(state, &s.g, w, nw, why, sizeof(why))) != 0) {
		snprintf(reason, n, "cannot record the original power limit in the state file '%s' (%s): "
			 "refusing to change any limit", state, why);
		ch_nvml_shutdown();
		return rc;
	}
	for (i = 0; i < nw && stop < 0; i++) {
		json_t *cap = json_object();
		double got = NAN, waited = 0;
		json_array_append_new(s.caps, cap);
		json_object_set_new(cap, "requested", req[i] ? json_string(req[i]) : json_null());
		json_object_set_new(cap, "cap_w", json_real(w[i]));
		json_object_set_new(cap, "pct_of_default", json_real(100.0 * w[i] / s.g.default_w));
		json_object_set_new(cap, "pct_of_original", json_real(100.0 * w[i] / s.g.limit_w));
		json_object_set_new(cap, "reference", json_boolean(fabs(w[i] - s.g.limit_w) <= SAME_W));
		json_object_set_new(cap, "status", json_string("incomplete"));
		json_object_set_new(cap, "error", json_null());
		if ((rc = ch_powercap_set(&s.g, w[i], why, sizeof(why))) != 0) {
			stop = i;
		} else {
			json_object_set_new(sweep, "limit_now_w", json_real(w[i]));
			rc = ch_powercap_wait_enforced(s.g.dev, w[i], READBACK_SEC, &got, &waited);
			json_object_set_new(cap, "enforced_w", jnum(got));
			json_object_set_new(cap, "readback_sec", json_real(waited));
			json_object_set_new(cap, "held_below", json_boolean(rc == CH_ERR_CHECK));
			if (rc == CH_ERR_RUNTIME) {
				snprintf(why, sizeof(why), "the enforced limit reads %.1f W, not the cap %.0f W, %.0f s after "
					 "setting it (nvmlDeviceGetEnforcedPowerLimit): the cap is not in force", got, w[i],
					 READBACK_SEC);
				stop = i;
			} else {
				rc = measure_cap(&s, cap, why, sizeof(why));
				if (rc != 0)
					stop = i;
			}
		}
		if (stop == i) {
			json_object_set_new(cap, "status", json_string("error"));
			json_object_set_new(cap, "error", json_string(why));
			status = rc ? rc : CH_ERR_RUNTIME;
			snprintf(reason, n, "%s; the sweep stopped there and the original limit was put back", why);
		} else {
			json_object_set_new(cap, "status", json_string("ok"));
			if (fabs(w[i] - s.g.limit_w) <= SAME_W)
				*ref_cap = i;
		}
		ops->checkpoint(ops->ctx);
	}
	for (i = stop + 1; stop >= 0 && i < nw; i++)
		json_array_append_new(json_object_get(sweep, "not_measured"), json_pack("{s:o,s:f,s:s}", "requested",
			req[i] ? json_string(req[i]) : json_null(), "cap_w", w[i], "why", "the sweep stopped at an earlier cap"));
	restore(&s, stop >= 0 ? "after the failed cap" : "at the end of the sweep", &status, reason, n);
	recommend(&s, *ref_cap);
	ops->checkpoint(ops->ctx);
	ch_nvml_shutdown();
	return status;
}

/* ------------------------------------------------------------ the node */

json_t *ch_rl_power_node(json_t *devices, double tol_pct)
{
	json_t *d, *gpus = json_array(), *o;
	double cap = -1, saved[CH_RL_MAX_CAPS * 8], worst = -INFINITY;
	const char *worst_dev = NULL;
	size_t i, j, nsaved = 0, ndev = 0;

	json_array_foreach(devices, i, d) {
		json_t *rec = json_object_get(json_object_get(d, "power_sweep"), "recommendation");
		if (json_is_true(json_object_get(rec, "judged")) && jget(rec, "cap_w") > cap)
			cap = jget(rec, "cap_w");
	}
	if (cap < 0) {
		json_decref(gpus);
		return json_null();
	}
	json_array_foreach(devices, i, d) {
		json_t *sw = json_object_get(d, "power_sweep"), *rec = json_object_get(sw, "recommendation"), *c;
		json_t *g = NULL;
		if (!json_is_object(sw))
			continue;
		ndev++;
		json_array_foreach(json_object_get(sw, "curve"), j, c) {
			/* the reference: the original limit (a file without it: the default) */
			double ref_p = NAN, ref_e = NAN, ref_w = isnan(jget(sw, "original_limit_w")) ?
				jget(sw, "default_limit_w") : jget(sw, "original_limit_w");
			size_t k;
			json_t *r;
			if (fabs(jget(c, "cap_w") - cap) > SAME_W)
				continue;
			json_array_foreach(json_object_get(sw, "curve"), k, r)
				if (fabs(jget(r, "cap_w") - ref_w) <= SAME_W)
					ref_p = jget(r, "gflops"), ref_e = jget(r, "gflop_per_j");
			g = json_pack("{s:O,s:O?,s:o,s:o,s:O?}", "device", json_object_get(d, "device"), "host",
				      json_object_get(d, "host"),
				      "compute_loss_pct", ref_p > 0 && jget(c, "gflops") > 0 ?
				      json_real(100.0 * (1 - jget(c, "gflops") / ref_p)) : json_null(),
				      "energy_per_flop_saved_pct", ref_e > 0 && jget(c, "gflop_per_j") > 0 ?
				      json_real(100.0 * (1 - ref_e / jget(c, "gflop_per_j"))) : json_null(),
				      "own_recommendation_w", json_object_get(rec, "cap_w"));
			if (jget(g, "compute_loss_pct") > worst)
				worst = jget(g, "compute_loss_pct"), worst_dev = jstr(d, "device");
			if (!isnan(jget(g, "energy_per_flop_saved_pct")) && nsaved < sizeof(saved) / sizeof(saved[0]))
				saved[nsaved++] = jget(g, "energy_per_flop_saved_pct");
			break;
		}
		if (!g)
			g = json_pack("{s:O,s:O?,s:n,s:n,s:O?,s:s}", "device", json_object_get(d, "device"), "host",
				      json_object_get(d, "host"), "compute_loss_pct", "energy_per_flop_saved_pct",
				      "own_recommendation_w", json_object_get(rec, "cap_w"), "why",
				      "this cap was not measured on this GPU");
		json_array_append_new(gpus, g);
	}
	o = json_object();
	json_object_set_new(o, "cap_w", json_real(cap));
	json_object_set_new(o, "gpus_swept", json_integer((json_int_t)ndev));
	json_object_set_new(o, "worst_compute_loss_pct", isfinite(worst) ? json_real(worst) : json_null());
	json_object_set_new(o, "worst_device", worst_dev ? json_string(worst_dev) : json_null());
	if (nsaved) {
		qsort(saved, nsaved, sizeof(saved[0]), cmp_desc);
		json_object_set_new(o, "median_energy_per_flop_saved_pct",
				    json_real(nsaved % 2 ? saved[nsaved / 2] : (saved[nsaved / 2 - 1] + saved[nsaved / 2]) / 2));
	} else {
		json_object_set_new(o, "median_energy_per_flop_saved_pct", json_null());
	}
	json_object_set_new(o, "tolerance_pct", json_real(tol_pct));
	json_object_set_new(o, "rule", json_string("the highest of the GPUs' recommended caps: in a synchronous job "
		"the slowest GPU sets the pace, so the node's cap keeps every GPU within the tolerance"));
	json_object_set_new(o, "gpus", gpus);
	return o;
}

/* ------------------------------------------------------------ output */

static void fmt(char *buf, size_t n, double v, int prec)
{
	if (isnan(v))
		snprintf(buf, n, "-");
	else
		snprintf(buf, n, "%.*f", prec, v);
}

void ch_rl_power_print(json_t *d)
{
	json_t *sw = json_object_get(d, "power_sweep"), *cap, *rec, *rs, *c0 = NULL, *m0 = NULL;
	size_t i;

	if (!json_is_object(sw) || !json_object_get(sw, "gpu_uuid"))
		return;
	json_array_foreach(json_object_get(sw, "caps"), i, cap) {
		if (!c0 && json_is_object(json_object_get(cap, "compute")))
			c0 = json_object_get(cap, "compute");
		if (!m0 && json_is_object(json_object_get(cap, "memory")))
			m0 = json_object_get(cap, "memory");
	}
	printf("# power sweep of %s (%s, %s): default limit %.0f W, limit before the run %.0f W (enforced %.0f W), "
	       "settable %.0f-%.0f W\n", jstr(d, "device"), jstr(sw, "gpu_uuid"), jstr(sw, "pci_bus_id"),
	       jget(sw, "default_limit_w"), jget(sw, "original_limit_w"), jget(sw, "original_enforced_w"),
	       jget(json_object_get(sw, "constraints_w"), "min"), jget(json_object_get(sw, "constraints_w"), "max"));
	printf("#   %-14s %9s %9s  %-10s %12s %6s %7s %8s %6s %8s", "cap", "enforced", "settle_s", "settle_W",
	       c0 ? "GFLOP/s" : "-", "loss%", "W", "GFLOP/J", "SM_MHz", "pwr_ms");
	if (m0)
		printf(" | %10s %6s %7s", "GB/s", "loss%", "GB/J");
	printf("\n");
	json_array_foreach(json_object_get(sw, "caps"), i, cap) {
		json_t *c = json_object_get(cap, "compute"), *m = json_object_get(cap, "memory");
		json_t *st = json_object_get(cap, "settle"), *vi = json_object_get(cap, "violation_ms");
		char a[24], b[24], e[24], f[24], g[24], h[24], k[24], l[24], x[24], y[24], z[24], nm[40];
		snprintf(nm, sizeof(nm), "%.0f W %.0f%%", jget(cap, "cap_w"), jget(cap, "pct_of_original"));
		fmt(a, sizeof(a), jget(cap, "enforced_w"), 0);
		fmt(b, sizeof(b), jget(st, "sec"), 1);
		fmt(e, sizeof(e), jget(st, "power_w"), 0);
		fmt(f, sizeof(f), jget(c, "gflops"), 1);
		fmt(g, sizeof(g), jget(c, "loss_pct"), 1);
		fmt(h, sizeof(h), jget(c, "avg_power_w"), 0);
		fmt(k, sizeof(k), jget(c, "gflop_per_j"), 2);
		fmt(l, sizeof(l), jget(c, "sm_mhz"), 0);
		fmt(x, sizeof(x), jget(vi, "power"), 0);
		if (strcmp(jstr(cap, "status"), "ok")) {
			printf("  %-14s %9s  ERROR: %s\n", nm, a, jstr(cap, "error") ? jstr(cap, "error") : jstr(cap, "status"));
			continue;
		}
		printf("  %-14s %9s %9s  %-10s %12s %6s %7s %8s %6s %8s", nm, a, b, e, f, g, h, k, l, x);
		if (m0) {
			fmt(y, sizeof(y), jget(m, "gbps"), 1);
			fmt(z, sizeof(z), jget(m, "loss_pct"), 1);
			fmt(a, sizeof(a), jget(m, "gb_per_j"), 2);
			printf(" | %10s %6s %7s", y, z, a);
		}
		printf("%s%s\n", json_is_true(json_object_get(cap, "reference")) ? "  reference" : "",
		       json_is_true(json_object_get(cap, "held_below")) ? "  (held below the cap by another limiter)" : "");
	}
	if (c0)
		printf("# compute: %s %s; memory: %s; cap W and %% of the original limit; loss against the original limit; W = average power over the "
		       "point's energy window; GFLOP/J, GB/J = the median rate / W; pwr_ms = power violation time over "
		       "the points (NVML)\n",
		       jstr(c0, "kernel"), jstr(c0, "dtype"), m0 ? jstr(m0, "kernel") : "-");
	json_array_foreach(json_object_get(sw, "not_measured"), i, cap)
		printf("# not measured: %.0f W (%s)\n", jget(cap, "cap_w"), jstr(cap, "why"));
	rs = json_object_get(sw, "restored");
	if (json_is_object(rs))
		printf("# restored %s: %.0f W (reads back %.0f W)%s%s\n", jstr(rs, "when"), jget(rs, "limit_w"),
		       jget(rs, "readback_w"), json_is_true(json_object_get(rs, "ok")) ? "" : " FAILED: ",
		       json_is_true(json_object_get(rs, "ok")) ? "" : jstr(rs, "why"));
	rec = json_object_get(sw, "recommendation");
	if (json_is_true(json_object_get(rec, "judged"))) {
		json_t *mk = json_object_get(rec, "memory_kernel"), *ck = json_object_get(rec, "compute_kernel");
		char e1[24], p1[24], m1[24], mem[96] = "no memory-bound point";
		fmt(e1, sizeof(e1), -jget(rec, "energy_per_flop_saved_pct"), 1);
		fmt(p1, sizeof(p1), -jget(rec, "power_saved_w"), 0);
		fmt(m1, sizeof(m1), -jget(rec, "memory_loss_pct"), 1);
		if (json_is_object(mk))
			snprintf(mem, sizeof(mem), "%s %s %s%%", jstr(mk, "kernel"), jstr(mk, "dtype"), m1);
		printf("# recommended cap: %.0f W (%.0f%% of the original limit %.0f W): %s %s %+.1f%% (tolerance %.0f%%), "
		       "energy per FLOP %s%%, power %s W; %s%s\n", jget(rec, "cap_w"), jget(rec, "pct_of_original"),
		       jget(rec, "reference_cap_w"), jstr(ck, "kernel"), jstr(ck, "dtype"), -jget(rec, "compute_loss_pct"),
		       jget(rec, "tolerance_pct"), e1, p1, mem,
		       json_is_true(json_object_get(rec, "lowest_cap_measured")) ?
		       " (the lowest cap measured: a lower one may do too)" : "");
	} else if (json_is_object(rec)) {
		printf("# no recommended cap: %s\n", jstr(rec, "why"));
	}
}

void ch_rl_power_print_node(json_t *node)
{
	char e[24], w[24];

	if (!json_is_object(node))
		return;
	fmt(e, sizeof(e), -jget(node, "median_energy_per_flop_saved_pct"), 1);
	fmt(w, sizeof(w), -jget(node, "worst_compute_loss_pct"), 1);
	printf("\n# node power cap: %.0f W for the %lld swept GPU(s) (the highest of their recommended caps): worst "
	       "compute-bound change %s%% (%s, tolerance %.0f%%), median energy per FLOP %s%%\n", jget(node, "cap_w"),
	       (long long)json_integer_value(json_object_get(node, "gpus_swept")), w,
	       jstr(node, "worst_device") ? jstr(node, "worst_device") : "-", jget(node, "tolerance_pct"), e);
}
