/*
 * hr_judge.h - inside the judge (report/judge/ only): the state the rule
 * families share (struct an: the fleet, the compared values, the reasons),
 * the helpers they call, and struct hr_family, the one interface of a rule
 * family. Not for the other stages: they read the profile (hr_analyze.h).
 */
#ifndef HR_JUDGE_H
#define HR_JUDGE_H

#include <jansson.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "report/judge/hr_analyze.h"
#include "report/judge/hr_family.h"
#include "report/read/hr_model.h"

struct reason {
	int node;          /* -1: fleet level */
	int level;
	int drain;         /* a hard fault or a confirmed FAIL: the node is a drain candidate */
	char code[32];
	char subject[96];
	char *text, *action, *source;
};

/* One compared value: a device metric or a group's large-message busbw.
 * The judge holds one for each measured roof of each device (tens a node,
 * 737,000 at 12,500 nodes): the doubles first, then the texts as 32-bit
 * ids (hj_text()), the counts, and the levels and flags as bit-fields
 * (levels -1 none to 2, flags 0 or 1), and what follows from other fields
 * is not kept: the fleet's median, the robust z scores and their cut-offs
 * follow from its class and its comparisons (hj_fleet_median(), hj_z(),
 * hj_cut(), hj_z_node(), hj_cut_node()), a device's datasheet figure and
 * its measurement's CV from its record (hj_datasheet(), hj_noise()), the
 * comparisons made for its node
 * from a->m_node (hj_m()), the percentages of the fleet's and the peers'
 * medians from those (hj_pct_fleet(), hj_pct_node()); the later run that
 * made it history is an index (hj_superseded_by()); what is rarely set
 * (its own history, a regression against it, a re-measurement) is kept
 * aside (struct inst_hist, hj_hist(), hj_again(), hj_again_in()). So it
 * takes 112 bytes instead of 336. */
struct inst {
	double value, expected;
	double node_median; /* NAN: not compared */
	/* significance (hr_quality.h) */
	double s_rel;      /* the fleet spread used: s / median (fleet_cmp) */
	double peer_median; /* devices: the median of the other like GPUs of its node */
	double s_node;     /* the spread (relative) of its comparison with them (node_cmp) */
	double ratio_allow; /* absolute rule: the ratio to the expectation with the spread allowed */
	/* texts kept once per distinct text (hj_keep(): ids, read with
	 * hj_text()), 0: "" */
	uint32_t noisy_why_id; /* what made it noisy, 0 clean */
	uint32_t basis_id; /* what the expectation is and its source, 0 none (at most 599 bytes) */
	uint32_t tag_id;   /* the same, short (terminal summary; at most 79 bytes) */
	uint32_t why_id;   /* why there is no expectation, 0 when there is one (at most 299 bytes) */
	int sup;           /* 1 + the device (metric >= 0) or group (metric -1) of a
			      later run of the same device or group in the inputs
			      (its value is history, not judged; hj_superseded_by()),
			      0 when latest */
	int cls;
	int node;          /* -1 when the subject has no single node */
	int subject;       /* device or group index */
	int fleet_n, node_n; /* like values: fleet, node (its own earlier runs: hj_hist()) */
	int peer_n;        /* ... and how many (peer_median's) */
	int hist_ix;       /* its rarely set fields: a->hist[hist_ix - 1], 0 none (hj_hist()) */
	signed int metric : 4; /* devices: 0 memory, 1 + dtype compute; groups: -1 */
	signed int level_abs : 3, level_rel : 3, level_node : 3, level_hist : 3, level : 3;
	signed int raw_level : 3; /* the level by the rules, also for an earlier run (whose
			      level is INFO: history), so that a later run can
			      say whether the earlier one found the same */
	signed int again_level : 3; /* the level the rules give that second value: the
			      finding stands at most at it (agreement) */
	unsigned int confirm : 2; /* per-GPU finding: enum hr_confirm from roofline's re-measurement */
	unsigned int hist_persist : 2; /* history: 1 one night, 2 persisted (hr_history_regressed()) */
	unsigned int fabric : 2; /* groups: 1 intra-node, 2 inter-node; devices 0 */
	unsigned int like : 1;  /* like for like (no drifted node involved) */
	unsigned int noisy : 1; /* not judged: noisy measurement */
	unsigned int quality_known : 1; /* the file recorded a CV or its conditions */
	unsigned int not_confirmed : 1; /* the finding rests on a comparison nothing re-measured: at most WARN */
	unsigned int not_reproduced : 1; /* roofline measured it again and it did not reproduce */
	unsigned int assumed_cap : 1; /* inter-node: rests on an assumed reference only: at most WARN */
	unsigned int pcie_class : 1; /* intra-node busbw PCIe-class on an NVLink node */
	unsigned int abs_by_median : 1; /* the absolute level is that of the median of its like values */
	unsigned int confirmed_fail : 1; /* a FAIL confirmed (re-measurement, the earlier run, or persisting history) */
	unsigned int again_judged : 1; /* its value was measured again and the rules judged that (hj_again()) */
	unsigned int fleet_cmp : 1; /* compared with its class's fleet (s_rel set) */
	unsigned int node_cmp : 1;  /* compared with its node's other like GPUs (s_node set) */
	unsigned int ladder : 1; /* devices: its compute roof was set by the FMA ladder
				    (its datasheet figure the CUDA cores': hj_datasheet()) */
};

/* What is rarely set of a value (struct inst's hist_ix): its own history,
 * its regression against it (level_hist WARN or FAIL), its re-measurement. */
struct inst_hist {
	double base;       /* the median of its earlier runs, 0 no regression */
	double pct;        /* the drop below it, %, 0 no regression */
	double again_v;    /* groups: the re-measurement of the headline figure in
			      the input (allreduce_bw's "confirm" of the largest
			      size's cell), GB/s, NAN: not re-measured (hj_again_in());
			      devices: the value roofline measured again, once judged
			      (again_judged); read with hj_again() */
	double noise;      /* groups: the per-call CV of the headline cell, NAN unknown (hj_noise()) */
	int nbase;         /* the earlier runs the baseline is the median of */
	int hist_n;        /* its own earlier runs judged with it (like values), 0 none */
};

/* A GPU's value in percent of the median of its node's other like GPUs
 * (peer_median), NAN when there is none or it is not positive. */
static inline double hj_pct_node(const struct inst *p)
{
	return p->peer_median > 0 ? 100.0 * p->value / p->peer_median : NAN;
}


#define INST_BASIS_MAX 600
#define INST_TAG_MAX 80
#define INST_WHY_MAX 300

struct cls {
	char key[256];
	char label[160];
	const char *unit;
	size_t n;          /* clean latest values */
	double median, mad;
	size_t res_n;      /* devices: leave-one-out residuals against the node's other like GPUs */
	double res_median, res_mad;
	double tail_w, res_tail_w; /* the tail weight of the values and of the
				      residuals, from their upper side
				      (hr_noise_tail_weight_high()); NAN: too
				      few values to learn it */
};

struct an {
	const struct hr_fleet *f;
	const struct hr_expect *e;
	const struct hr_thresholds *th;
	struct reason *r;
	size_t nr, capr;
	struct inst *di;  size_t ndi, capdi;  /* device metrics */
	struct inst *gi;  size_t ngi, capgi;  /* group metrics */
	struct cls *c;    size_t nc, capc;
	unsigned *drift;  /* per node: bit k set when cfg key k drifted */
	size_t *dev_first, *dev_n; /* per device: its instances in di[] */
	long *grp_inst;   /* per group: its instance in gi[], -1 none */
	int *slow_pairs;  /* per node: number of slow pairs it is in */
	long *node_dev, *dev_next; /* per node: its first device, per device: the next of its node; -1 none */
	long *node_grp, *grp_next; /* per node: its first (group, member) entry; per entry: the next; -1 none */
	long *grp_of;     /* per entry: the group */
	time_t *dev_t, *grp_t; /* per device, per group: the start of its result file's run (0 unknown) */
	long *dev_run, *grp_run; /* per device, per group: its run in f->runs, -1 none */
	int *curve;       /* per group: its curve shape 0 not looked at, 1 judged, 2 noisy */
	int *loader;      /* per node: its loader 0 none, 1 judged, 2 not judged (host busy) */
	int *loader_lv;   /* per node: the level its loader was judged at */
	char (*loader_why)[260];
	char (*curve_why)[240]; /* per group: why noisy */
	int *m_node;      /* per node: the comparisons made for it */
	json_t *texts;    /* the instances' basis, tag and why texts, each once (the keys), -> id */
	const char **text_v; size_t ntext, captext; /* id -> text (hj_text()); 0: "" */
	json_t *drift_json; /* the profile's drift (HR_PASS_DRIFT) */
	const char *bad_code; /* a reason code without its row in the rule table */
	struct inst_hist *hist; size_t nhist, caphist; /* the instances' regressions (hist_ix) */
	int oom;
};

/* What an instance's comparisons came to, from its class (a->c[p->cls])
 * and its own fields, each NAN where it was not compared: the fleet median;
 * the robust z against the fleet and its cut-off; the same against its
 * node's other like GPUs; the value in percent of the fleet median. */
double hj_fleet_median(const struct an *a, const struct inst *p);
double hj_z(const struct an *a, const struct inst *p);
double hj_cut(const struct an *a, const struct inst *p);
/* Has @p a fresh second measurement the rules judge too (roofline's
 * re-measurement of a device's roof: results.flagged[] confirmed, or
 * devices[].roofs_again; allreduce_bw's of a group's largest size)? 1 or 0.
 * Such a value's learned heavy-tail cut-off is taken at the square root of
 * its share (hj_cut(): both measurements must be beyond it). */
int hj_measured_twice(const struct an *a, const struct inst *p);
double hj_z_node(const struct an *a, const struct inst *p);
double hj_cut_node(const struct an *a, const struct inst *p);
/* The cut-offs a FAIL needs (robust sd, > 0; NAN where not compared):
 * hj_cut()'s, hj_cut_node()'s, raised where the class learned a heavy tail
 * to its quantile at the FAIL's budget (hr_thresholds.fail_false_alarm per
 * node and night, "fail_false_alarm_per_node", shared as hj_cut() shares
 * false_alarm); equal to hj_cut(), hj_cut_node() where no tail was learned.
 * A value between the two cut-offs is WARN whatever its % below: a FAIL
 * confirmed is a drain candidate, and two measurements of a heavy-tailed
 * class beyond hj_cut() come at the flags' budget, not the drains'. */
double hj_cut_fail(const struct an *a, const struct inst *p);
double hj_cut_node_fail(const struct an *a, const struct inst *p);
double hj_pct_fleet(const struct an *a, const struct inst *p);

/* @p's rarely set fields; an empty one (zeros, again_v and noise NAN) when
 * it has none. Borrowed: valid until the next hj_hist_new(). */
const struct inst_hist *hj_hist(const struct an *a, const struct inst *p);

/* Room for @p's rarely set fields (zeros, again_v and noise NAN, when new), NULL when
 * out of memory (a->oom set). Borrowed: valid until the next call. */
struct inst_hist *hj_hist_new(struct an *a, struct inst *p);

/* The value roofline (devices) or allreduce_bw (groups) measured again and
 * the rules judged, GB/s or GFLOP/s; NAN: none. */
static inline double hj_again(const struct an *a, const struct inst *p)
{
	return p->again_judged ? hj_hist(a, p)->again_v : NAN;
}

/* A group's re-measurement of its headline figure in the input, GB/s; NAN:
 * not re-measured, and always for a device. */
static inline double hj_again_in(const struct an *a, const struct inst *p)
{
	return p->metric < 0 ? hj_hist(a, p)->again_v : NAN;
}

/* A device value's datasheet figure (its SKU's memory or compute peak, the
 * CUDA cores' where the FMA ladder set the roof), GB/s or GFLOP/s; NAN none,
 * and always for a group. Reads the device's record (a->f->devices). */
double hj_datasheet(const struct an *a, const struct inst *p);

/* The per-call CV of the measurement behind @p, NAN unknown: a device's
 * from its record (a->f->devices), a group's kept aside (hj_hist()). */
double hj_noise(const struct an *a, const struct inst *p);

/* The comparisons made for @p's node (Bonferroni): the most made for any of
 * its nodes (a->m_node, complete once hj_judge_all() ran), at least 1. */
int hj_m(const struct an *a, const struct inst *p);

#define INTER_ACTION "check the node's NICs (ibstat: state Active, rate; port error counters), the transport NCCL chose (NCCL_DEBUG=INFO: NET/IB, not NET/Socket), NCCL_IB_HCA and the network stack (GPUDirect RDMA, nvidia-peermem, the fabric's own diagnostics such as ibdiagnet)"

struct node_order {
	int node, level;
	const char *name;
};

/* The node's checks: how many were judged, and its fabric checks. The
 * performance checks are the device roofs, the fabric's busbw and curve
 * shape, the loader and the checkpoint speed against its peers; the
 * checkpoint read-back (a correctness check) is a check but not one of
 * them: a node is PASS only when one of its performance checks was judged
 * (node_verdict()). */
struct node_checks {
	int judged, not_judged, fab, fab_judged;
	int perf_judged, perf_not_judged; /* of judged, not_judged: the performance checks */
	int noisy;                 /* of the not judged: noisy measurements (all performance checks) */
	char noisy_why[300];       /* the first of them: what and why */
	char nj_why[700];          /* the first performance check not judged but not noisy: why */
	const struct inst *mem, *comp, *intra, *inter; /* the worst of each, NULL none */
};

/* ---- hr_judge.c: the shared state, classes, comparisons and formatting */

/* A reason of @node (-1: the fleet). Returns it (valid until the next
 * reason is added), NULL when out of memory. */
struct reason *hj_add_reason(struct an *a, int node, int level, const char *code,
			     const char *subject, const char *source, const char *action,
			     const char *fmt, ...) __attribute__((format(printf, 8, 9)));

/* The class of like values @key (a label and unit for the outputs),
 * created when new. Returns its index in a->c, -1 out of memory. */
int hj_class_of(struct an *a, const char *key, const char *label, const char *unit);

/* The text printf would write into a buffer of @size bytes (truncated as
 * snprintf does), kept once in a->texts: returns its id (hj_text()), the
 * same for the same text; 0 for "" and when out of memory (a->oom set). */
uint32_t hj_keep(struct an *a, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* The text of id @id (hj_keep()), "" for 0; valid until a->texts is
 * released. */
static inline const char *hj_text(const struct an *a, uint32_t id)
{
	return id && id < a->ntext ? a->text_v[id] : "";
}

/* The result file of the later run that made @p history, NULL when @p is
 * the latest (p->sup 0). Owned by the fleet. */
const char *hj_superseded_by(const struct an *a, const struct inst *p);

/* A new value appended to *@arr (*@n values, room for *@cap), its
 * figures NAN until set. Returns it, NULL out of memory (a->oom set). */
struct inst *hj_new_inst(struct an *a, struct inst **arr, size_t *n, size_t *cap);
/* The value of group @g (made by hj_group_instances()), NULL when it has
 * none. */
const struct inst *hj_group_inst(const struct an *a, size_t g);

/* The spread floor of a value (relative): its own noise, mad_floor_frac. */
double hj_noise_floor(const struct an *a, const struct inst *p);

/* Per node the comparisons made for it (a->m_node), then every value judged. */
void hj_judge_all(struct an *a);

/* Values @v (@n of them) against their classes: each class's fleet
 * statistics, then each value's robust z and distance from its medians. */
void hj_compare(struct an *a, struct inst *v, size_t n);

/* A device metric as the outputs name it ("memory roof", "bf16 compute
 * roof") into @buf of @n bytes; returns @buf. */
const char *hj_metric_label(int metric, char *buf, size_t n);

/* A device metric's key ("memory_gbps", "compute_gflops.bf16") into @buf
 * of @n bytes; returns @buf. */
const char *hj_metric_key(int metric, char *buf, size_t n);

/* "812 TFLOP/s", "4.15 TB/s" style with the unit chosen by size. */
const char *hj_fmt_val(double v, int flops, char *buf, size_t n);

/* @v as a JSON real, null when not finite. New reference. */
json_t *hj_jnum(double v);

/* A size or a count: an exact JSON integer when it is integral (doubles
 * hold integers exactly up to 2^53), else a real, else null. */
json_t *hj_jcount(double v);

/* @s as a JSON string, null when NULL. New reference. */
json_t *hj_jstr_or_null(const char *s);

/* Whether the run started at @u from result file @r is later than the one
 * started at @t from @s (seconds since the epoch; 0: no start time, never
 * later): a later start, or the same start and the later file name, so
 * that of two runs stamped alike exactly one is the latest. Two entries of
 * one file are never later than each other. */
int hj_later_run(time_t u, const char *r, time_t t, const char *s);

/* Whether @x and @y are one device (node, device, and bus id where both
 * have one): runs of it from different result files. */
int hj_same_device(const struct hr_device *x, const struct hr_device *y);

/* Whether groups @a and @b span the same nodes. */
int hj_same_nodes(const struct hr_group *a, const struct hr_group *b);

/* Whether result file @source holds a group of @node that a later sweep in
 * the inputs superseded (its other figures are history too). */
int hj_source_superseded(const struct an *a, const char *source, int node);

/* hr_inventory_rules() and hr_ckpt_reasons() report through this */
void hj_inventory_reason(void *ctx, int node, int level, const char *code, const char *subject,
			 const char *source, const char *action, const char *text);

/* ---- hr_rule_device.c */

/* The measurement quality of value @p: the conditions of its run (@run in
 * f->runs, -1 none) and the CV @cv of its measurement at @at. */
void hj_set_quality(struct an *a, struct inst *p, long run, double cv, const char *at);

/* One value per device and metric (a->di): its expectation, class and
 * measurement quality. */
void hj_device_instances(struct an *a);

/* A FAIL is confirmed, and its node a drain candidate, when roofline's
 * re-measurement agreed with a per-GPU finding (the value held), when the history rule saw
 * it persist, or when the earlier run of the same device or group in the
 * inputs (a re-run, or last night's) FAILed by the same rules. */
void hj_confirm_fails(struct an *a);

/* The margins of a flagged value: every rule that flagged it, with the
 * value's distance and the rule's threshold ("12% below the fleet median
 * 2950 GB/s of 80 like devices (robust z -8.1; flagged beyond -4.6 and from
 * 5% below, FAIL from 10%)"). @model names the expectation's GPU model,
 * @like the like values. */
void hj_inst_margins(const struct an *a, const struct inst *p, const char *model, const char *like,
		     char *extra, size_t n);

/* ---- hr_rule_history.c */

/*
 * A device's own history, where the inputs hold it: the latest run of a
 * device (same node, device and bus id) against its earlier runs in the
 * inputs, metric by metric (same class), by the rule of `health_report
 * history` (hr_history_regressed(): at least 3 earlier runs, a drop of 10%
 * or more below the median of up to 14): WARN.
 */
void hj_device_history(struct an *a);

/* How a value regressed against its own history, as the margin's words:
 * "on consecutive runs " (persisted) or "regressed once; re-run: ". */
const char *hj_hist_how(const struct inst *p);

/* ---- hr_rule_fabric.c */

void hj_group_instances(struct an *a);

/* ---- hr_rule_loader.c */

const struct hr_loader *hj_node_loader(const struct hr_fleet *f, int node);

/* ---- hr_profile_json.c: the profile's parts */

/* Was the value judged by any rule: an expectation, enough like values in
 * the fleet, or (devices) enough like devices on its node? */
int hj_inst_judged(const struct an *a, const struct inst *p);

/* Why no rule could judge it (@buf, "" when judged). */
const char *hj_inst_not_judged(const struct an *a, const struct inst *p, char *buf, size_t n);

/* What the value was judged against, short: "expected 370 GB/s; fleet
 * median 365 GB/s of 10". */
const char *hj_inst_against(const struct an *a, const struct inst *p, char *buf, size_t n);

/* A reason as the profile writes it. New reference. */
json_t *hj_reason_json(const struct reason *r);

/* qsort order of reasons: worst level first, then by code. */
int hj_cmp_reason(const void *x, const void *y);

/* Device @i in full, as the profile writes it. New reference. */
json_t *hj_device_json(const struct an *a, size_t i);

/* Group @i as the profile writes it. New reference. */
json_t *hj_group_json(const struct an *a, size_t i);

/* A node's loader in full, as the profile writes it. New reference. */
json_t *hj_loader_json(const struct hr_loader *l);

/* qsort order of struct node_order: worst verdict first, then by name. */
int hj_cmp_node(const void *x, const void *y);

/* With @bounded, a class of more than HR_DIST_KEEP values keeps its
 * outliers (warn, fail) and HR_DIST_KEEP evenly spaced ranks of the others,
 * each with its rank (1 = lowest) and "values_kept" saying so. */
json_t *hj_distributions_json(const struct an *a, int bounded);

/* The profile's "inputs": the files found (@input_files) and read, and
 * the input problems. New reference. */
json_t *hj_inputs_json(const struct hr_fleet *f, size_t input_files);

/* A device of a node whose detail is bounded (--detail flagged, a PASS
 * node): what it is, the value of each metric by key, and its worst level
 * (its file is among the node's "inputs"). */
json_t *hj_device_bounded_json(const struct an *a, size_t i);

/* The loader of a bounded node: its verdict and recommendation, not each
 * configuration. */
json_t *hj_loader_bounded_json(const struct hr_loader *l);

/* Per node, the result files whose host section is the node (f->runs), as
 * a list: first[node], next[run]; -1 ends. Returns 0, or -1 out of memory. */
int hj_runs_by_node(const struct hr_fleet *f, long **first, long **next);

/* A bounded node's inputs: the paths of its result files, each once. */
json_t *hj_node_inputs_json(const struct hr_fleet *f, const long *first, const long *next, int n);

/* ---- hr_profile.c: the profile document */

void hj_node_checks(const struct an *a, int n, struct node_checks *c);

/* The profile, handed to @sink in three parts, one node at a time: no
 * more than one node's entry is held at once. The device instances
 * (a->di) are freed once the nodes and the distributions are made (a->di
 * NULL, a->ndi 0 after). Returns 0, CH_ERR_RUNTIME out of memory, or the
 * sink's error. */
int hj_build_profile(struct an *a, const struct hr_analyze_opts *o, json_t *drift,
		     const struct hr_profile_sink *sink);

/* hr_analyze()'s sink: the parts put together into one object. */
int hj_collect_part(void *ctx, const json_t *part);

/* hr_analyze()'s sink: each node appended to the document's "nodes". */
int hj_collect_node(void *ctx, const json_t *node, const json_t *full);

/* hr_analyze()'s sink: the head's members set in the document. */
int hj_collect_head(void *ctx, const json_t *head);

#endif
