/*
 * hr_analyze.h - from the fleet model to the cluster-health profile:
 * absolute per-SKU expectations, fleet-relative robust z-scores,
 * configuration drift, and per node a verdict (PASS, WARN, FAIL) with every
 * reason and a suggested action. The profile (schema
 * "clusterhealth.profile", docs/profile-schema.md) is the single source of
 * every output: terminal summary, Markdown, HTML, Prometheus.
 */
#ifndef HR_ANALYZE_H
#define HR_ANALYZE_H

#include <jansson.h>

#include "report/judge/hr_cost.h"
#include "report/judge/hr_expect.h"
#include "report/read/hr_model.h"

#ifdef __cplusplus
extern "C" {
#endif

#define HR_PROFILE_SCHEMA "clusterhealth.profile"
#define HR_PROFILE_SCHEMA_VERSION 1

/* The profile's summary.history when the inputs hold one run of each
 * device and group (one night): what a history would add. The nights a
 * lasting drop needs are measured by scripts/measure-detection, not typed
 * here (docs/health_report.md, "Detection"). */
#define HR_ONE_NIGHT_NOTE \
	"1 night: devices are judged against the fleet only (large drops and hard faults); " \
	"a lasting drop of about 10% needs a few nights of history (health_report history; nights to detection: " \
	"docs/health_report.md, \"Detection\")"

/* Reason levels, in the profile as "info", "warn", "fail". */
enum hr_level { HR_INFO = 0, HR_WARN = 1, HR_FAIL = 2 };

/** hr_level_name - "info", "warn", "fail". */
const char *hr_level_name(int level);

/** hr_verdict_name - node verdict of a level: "PASS", "WARN", "FAIL". */
const char *hr_verdict_name(int level);

/**
 * hr_robust_z - robust z-score of @x against a sample's median and MAD:
 * 0.6745 x (x - median) / max(MAD, floor_frac x |median|)  (Iglewicz and
 * Hoaglin, 1993; the floor keeps identical samples from dividing by 0).
 * Returns 0 when the denominator is 0 and x equals the median, else +-1e9
 * in that case.
 */
double hr_robust_z(double x, double median, double mad, double floor_frac);

/**
 * hr_relative_level - verdict level of a comparison with like values.
 * @th:        [in] thresholds.
 * @z:         [in] robust z-score (negative: below the median).
 * @cut:       [in] the cut-off on -z for this comparison (hr_cutoff(),
 *             report/judge/hr_quality.h: corrected for the comparisons of
 *             the node and the like values the spread came from).
 * @pct_below: [in] 100 x (1 - value / median).
 * Returns HR_FAIL for a value both improbable (z <= -cut) and at least
 * fail_pct_below % below, HR_WARN for one improbable and at least
 * warn_pct_below % below, else HR_INFO (NAN z or cut: HR_INFO).
 */
int hr_relative_level(const struct hr_thresholds *th, double z, double cut, double pct_below);

/**
 * hr_absolute_level - verdict level against an absolute expectation.
 * @ratio: [in] measured / expected. Returns HR_FAIL below th->fail_ratio,
 * HR_WARN below th->warn_ratio, else HR_INFO (NAN ratio: HR_INFO).
 */
int hr_absolute_level(const struct hr_thresholds *th, double ratio);

struct hr_analyze_opts {
	const struct hr_expect *expect;   /* required */
	const struct hr_cost_params *cost; /* required */
	const char *generated_utc;        /* NULL: now */
	size_t input_files;               /* files found among the inputs */
	int detail_all;                   /* 0: a PASS node's entry and large
					     distributions are bounded (the
					     profile's "detail": "flagged"); 1:
					     everything in full */
	size_t full_pass_max;             /* with detail_all 0: when the fleet
					     has at most this many PASS nodes,
					     the sink's node() is also handed
					     each bounded node's full entry (for
					     report.md and report.html; the
					     profile keeps the bounded one);
					     0: never */
	struct hr_fleet *drop_points;     /* NULL, or the fleet @f itself: its
					     devices' roofline points are freed
					     (hr_fleet_drop_points()) once the
					     nodes' entries are made, the last
					     to read them, those of the nodes
					     whose entries leave them out
					     (bounded, no full entry made)
					     before the first node; the fleet
					     has none afterwards, and its
					     device records are freed
					     (hr_fleet_drop_devices()) before
					     the groups' entries */
};

/**
 * hr_analyze - build the profile.
 * @f: [in] the loaded fleet. @o: [in] options.
 * Groups are judged by where their ranks lie (one node: intra-node, whatever
 * their kind; several: inter-node, against the NICs the nodes recorded or an
 * assumed cluster of their GPU model), their curve shape, and their own
 * earlier sweeps among the inputs; every comparison says whether it was
 * judged and against what (docs/health_report.md).
 * Returns a new JSON object (caller owns it) with schema, summary
 * (verdict counts, nodes and checks not judged, drain candidates),
 * run_cost, inputs (issues), expectations, drift, nodes (verdict, PASS,
 * WARN, FAIL or NOT JUDGED; reasons, checks judged, headline figures,
 * config, devices with metrics and points, busbw, stragglers, loader),
 * groups, findings (fleet level) and distributions; "exit_code" is 1 when
 * any node or finding is FAIL, else 0 (usage and input errors are decided
 * by the caller). NULL when out of memory.
 */
json_t *hr_analyze(const struct hr_fleet *f, const struct hr_analyze_opts *o);

/*
 * The profile handed over in three parts, one node at a time (so that no
 * more than one node's entry is held at once): each callback borrows its
 * object for the call and returns 0, or a status that stops the profile.
 */
struct hr_profile_sink {
	void *ctx;
	/* the top level up to and with "drift" (schema ... summary, run_cost,
	 * inputs, expectations, drift), in the profile's order */
	int (*head)(void *ctx, const json_t *head);
	/* each entry of "nodes", worst first; @full: the entry --detail all
	 * would write, given only for a node of bounded detail ("detail":
	 * "bounded") when o->full_pass_max allows it, else NULL */
	int (*node)(void *ctx, const json_t *node, const json_t *full);
	/* the rest: "groups", "findings", "distributions", "power_caps" */
	int (*tail)(void *ctx, const json_t *tail);
};

/**
 * hr_analyze_stream - hr_analyze(), the profile handed to @sink part by
 * part: what is kept across nodes is the fleet model, the judged values
 * and the reasons, never the profile's nodes.
 * Returns 0, CH_ERR_RUNTIME when out of memory, or the first status a
 * callback returned.
 */
int hr_analyze_stream(const struct hr_fleet *f, const struct hr_analyze_opts *o, const struct hr_profile_sink *sink);

#ifdef __cplusplus
}
#endif
#endif
