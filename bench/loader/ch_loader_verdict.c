/*
 * ch_loader_verdict.c - verdict of one configuration against the documented
 * thresholds, and the choice of the configuration to recommend.
 */
#include "bench/loader/ch_loader.h"
#include "hw/ch_procfs.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>

const char *ch_lc_verdict_name(int v)
{
	switch (v) {
	case CH_LC_PASS: return "pass";
	case CH_LC_WARN: return "warn";
	case CH_LC_FAIL: return "fail";
	default: return "?";
	}
}

static void reason(struct ch_lc_metrics *m, int v, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void reason(struct ch_lc_metrics *m, int v, const char *fmt, ...)
{
	va_list ap;
	if (v > m->verdict)
		m->verdict = v;
	if (m->nreasons >= CH_LC_MAX_REASONS)
		return;
	va_start(ap, fmt);
	vsnprintf(m->reasons[m->nreasons++], sizeof(m->reasons[0]), fmt, ap);
	va_end(ap);
}

int ch_lc_judge(struct ch_lc_metrics *m, int has_workers)
{
	m->verdict = CH_LC_PASS;
	m->nreasons = 0;
	if (m->bad_batches > 0)
		reason(m, CH_LC_FAIL, "%ld batch(es) failed validation (checksum of the collated batch after the copy)",
		       m->bad_batches);
	if (has_workers) {
		double w = m->input_wait_frac;
		if (w >= CH_LC_WAIT_FAIL_FRAC)
			reason(m, CH_LC_FAIL, "input wait %.1f%% of the step >= %.0f%% (fail; TensorFlow profiler input-pipeline analysis)",
			       100 * w, 100 * CH_LC_WAIT_FAIL_FRAC);
		else if (w >= CH_LC_WAIT_WARN_FRAC)
			reason(m, CH_LC_WARN, "input wait %.1f%% of the step >= %.0f%% (warn; TensorFlow profiler input-pipeline analysis)",
			       100 * w, 100 * CH_LC_WAIT_WARN_FRAC);
	}
	if (m->accel_util < CH_LC_UTIL_FAIL_FRAC)
		reason(m, CH_LC_FAIL, "accelerator utilisation %.1f%% < %.0f%% (fail)",
		       100 * m->accel_util, 100 * CH_LC_UTIL_FAIL_FRAC);
	else if (m->accel_util < CH_LC_UTIL_PASS_FRAC)
		reason(m, CH_LC_WARN, "accelerator utilisation %.1f%% < %.0f%% (warn; DLIO / MLPerf Storage pass at 90%%)",
		       100 * m->accel_util, 100 * CH_LC_UTIL_PASS_FRAC);
	return m->verdict;
}

static int known_pct(double v)
{
	return v >= 0 && isfinite(v);
}

int ch_lc_host_busy(double pressure_pct, double busy_pct, double base_psi_pct, char *why, size_t n)
{
	size_t l = 0;
	int busy = 0;

	if (n)
		why[0] = '\0';
	if (known_pct(pressure_pct) && pressure_pct >= (double)CH_NOISY_PRESSURE_PCT && l < n) {
		l += (size_t)snprintf(why + l, n - l, "%shost CPU pressure %.0f%% as the run started (>= %.0f%%)",
				      busy ? "; " : "", pressure_pct, (double)CH_NOISY_PRESSURE_PCT);
		busy = 1;
	}
	if (known_pct(busy_pct) && busy_pct >= (double)CH_NOISY_BUSY_PCT && l < n) {
		l += (size_t)snprintf(why + l, n - l, "%shost CPUs %.0f%% busy with other work as the run started (>= %.0f%%)",
				      busy ? "; " : "", busy_pct, (double)CH_NOISY_BUSY_PCT);
		busy = 1;
	}
	if (known_pct(base_psi_pct) && base_psi_pct >= (double)CH_NOISY_PRESSURE_PCT && l < n) {
		snprintf(why + l, n - l, "%shost CPU pressure %.0f%% in the baseline, before any worker started (>= %.0f%%)",
			 busy ? "; " : "", base_psi_pct, (double)CH_NOISY_PRESSURE_PCT);
		busy = 1;
	}
	return busy;
}

/* Placement preference for ties: numa-local, isolated, shared, numa-remote, as-is. */
static int pref(int placement, int allow_as_is)
{
	switch (placement) {
	case CH_LC_NUMA_LOCAL: return 0;
	case CH_LC_ISOLATED: return 1;
	case CH_LC_SHARED: return 2;
	case CH_LC_NUMA_REMOTE: return 3;
	case CH_LC_AS_IS: return allow_as_is ? 4 : 99;
	default: return 99;
	}
}

int ch_lc_pick(const struct ch_lc_choice *c, int n, int allow_as_is)
{
	int i, best = -1;

	for (i = 0; i < n; i++) {
		const struct ch_lc_choice *x = &c[i], *b;
		if (pref(x->placement, allow_as_is) == 99 || x->workers < 1)
			continue;
		if (best < 0) {
			best = i;
			continue;
		}
		b = &c[best];
		if (x->verdict != b->verdict) {
			if (x->verdict < b->verdict)
				best = i;
			continue;
		}
		if (x->workers != b->workers) {
			if (x->workers < b->workers)
				best = i;
			continue;
		}
		if (pref(x->placement, allow_as_is) != pref(b->placement, allow_as_is)) {
			if (pref(x->placement, allow_as_is) < pref(b->placement, allow_as_is))
				best = i;
			continue;
		}
		if (x->accel_util > b->accel_util)
			best = i;
	}
	return best;
}
