/*
 * hr_canary_cli.c - the `canary` subcommand: options and the --inputs file,
 * reading allreduce_bw and loader_contention results, fitting the
 * all-reduce models (hr_fit.h), then the model of hr_canary.c.
 * Interface: hr_canary.h; method: docs/canary.md.
 */
#include "report/canary/hr_canary_power.h"
#include "report/canary/hr_canary.h"
#include "report/canary/hr_canary_eff.h"
#include "report/canary/hr_ckpt_canary.h"
#include "report/judge/hr_checkpoint.h"
#include "report/judge/hr_quality.h"
#include "report/canary/hr_fit.h"
#include "report/canary/hr_steps_canary.h"
#include "report/canary/hr_steps_run.h"
#include "report/read/hr_result.h"
#include "report/hr_util.h"
#include "report/read/hr_walk.h"
#include "base/ch_common.h"
#include "base/ch_datasheet.h"
#include "base/ch_dtype.h"
#include "base/ch_parse.h"
#include "base/ch_result.h"

#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* -------------------------------------------------------- option parsing */

enum kind { K_COUNT, K_NUM, K_DUR, K_FRAC, K_MODEL /* a word: comm-model, loader-placement, parallelism */ };

struct opt_def {
	const char *name;
	enum kind kind;
	size_t off;      /* offset of the struct hr_fig in struct hr_canary_in */
	double min, max; /* the plausible range accepted (inclusive; "> min" when excl_min,
			    "< max" when excl_max); outside: exit 2 */
	int excl_min;    /* min is exclusive; 2: max is exclusive (excl_max) */
	const char *help;
};

#define OFF(field) offsetof(struct hr_canary_in, field)
static const struct opt_def opt_defs[] = {
	{ "gpus-now", K_COUNT, OFF(gpus_now), 1, 1e7, 0, "GPUs the job runs on today (else allreduce_bw's world size)" },
	{ "step-time", K_DUR, OFF(step_sec), 1e-4, 1e6, 0, "today's wall-clock time per step, checkpoints included" },
	{ "target-gpus", K_COUNT, OFF(target_gpus), 1, 1e7, 0, "GPUs to decide on; above --gpus-now (required but for --target-efficiency alone)" },
	{ "baseline-gpus", K_COUNT, OFF(baseline_gpus), 1, 1e7, 0, "GPUs of an earlier, smaller run at the same work per GPU" },
	{ "baseline-step-time", K_DUR, OFF(baseline_step_sec), 1e-4, 1e6, 0, "its step time: the ideal under weak scaling" },
	{ "params", K_NUM, OFF(params), 1e3, 1e16, 0, "model parameters (e.g. 7e9)" },
	{ "grad-bytes-per-param", K_NUM, OFF(grad_bytes_per_param), 0.125, 64, 0, "bytes all-reduced per parameter (2 for bf16; default 2, assumed)" },
	{ "mfu-now", K_FRAC, OFF(mfu_now), 0.001, 1, 0, "MFU today (0.38 or 38%)" },
	{ "baseline-mfu", K_FRAC, OFF(mfu_baseline), 0.001, 1, 0, "MFU at the baseline" },
	{ "peak-tflops", K_NUM, OFF(peak_tflops), 0.1, 1e5, 0, "dense peak per GPU in TFLOP/s for the training dtype" },
	{ "tokens-per-step", K_NUM, OFF(tokens_per_step), 1, 1e12, 0, "global tokens per step today" },
	{ "checkpoint-interval", K_DUR, OFF(ckpt_interval_sec), 1, 1e8, 0, "wall-clock between checkpoints (30m)" },
	{ "checkpoint-block", K_DUR, OFF(ckpt_block_sec), 0, 1e6, 0, "time each checkpoint blocks every rank (5.5m)" },
	{ "input-wait", K_FRAC, OFF(input_wait_frac), 0, 1, 2, "share of the step waiting on input (else measured by loader_contention on an idle host); with --compute-share at most the whole step" },
	{ "overlap", K_FRAC, OFF(overlap), 0, 1, 0, "share of the all-reduce hidden behind compute (else calibrated)" },
	{ "gpus-per-node", K_COUNT, OFF(gpus_per_node), 1, 1024, 0, "GPUs per node (else measured from allreduce_bw's rank layout)" },
	{ "price-per-gpu-hour", K_NUM, OFF(price_per_gpu_hour), 0, 1e4, 0, "price of one GPU-hour, for the cost lines" },
	{ "min-efficiency", K_FRAC, OFF(min_efficiency), 0.01, 1, 0, "book only at or above this efficiency (default 80%)" },
	{ "significant", K_FRAC, OFF(significant_frac), 0.001, 1, 2, "a loss this share of the step is worth fixing first (default 5%)" },
	{ "target-efficiency", K_FRAC, OFF(target_efficiency), 0.01, 1, 0, "the efficiency question: can today's scale reach this? (without --target-gpus: the question only)" },
	{ "scaling-efficiency", K_FRAC, OFF(scaling_efficiency), 0.01, 1, 0, "today's scaling efficiency vs --baseline-gpus, for the question (instead of step times)" },
	{ "host-cpu", K_FRAC, OFF(host_cpu_frac), 0, 1, 0, "busy share of the host CPUs while training (else from --steps)" },
	{ "loader-workers", K_COUNT, OFF(loader_workers), 1, 100000, 0, "dataloader worker processes per node (none: leave it out)" },
	{ "loader-placement", K_MODEL, 0, 0, 0, 0, "where the dataloader workers run, as loader_contention names it: shared (pinned with the GPU feeder threads, on their cores), isolated, numa-local, numa-remote or as-is" },
	{ "parallelism", K_MODEL, 0, 0, 0, 0, "ddp (default: one all-reduce of the gradient per step) or fsdp (a reduce-scatter of the gradient and two all-gathers of the parameters, the first exposed)" },
	{ "nic-gbps", K_NUM, 0, 0.1, 1e5, 0, "each GPU's NIC line rate, Gb/s: the inter-node all-reduce when none was measured" },
	{ "alpha-us", K_NUM, 0, 0, 1e7, 0, "all-reduce latency per step, us (instead of fitting)" },
	{ "bw-gbps", K_NUM, 0, 0.01, 1e5, 0, "all-reduce bandwidth B, GB/s (instead of fitting)" },
	{ "comm-model", K_MODEL, 0, 0, 0, 0, "model of --alpha-us/--bw-gbps: ring (default) or log" },
	{ "power-cap", K_NUM, OFF(power_cap_w), 1, 1e4, 0, "step time and energy per step with every GPU capped at W watts (needs a roofline --power-limits sweep among the inputs)" },
	{ "compute-share", K_FRAC, OFF(power_compute_share), 0.001, 1, 0, "share of the step the GPUs compute, from a training log's time split (else modelled); with --input-wait at most the whole step" },
	{ "run-steps", K_NUM, OFF(run_steps), 1, 1e12, 0, "steps per run, for kWh, cost and CO2e per run" },
	{ "pue", K_NUM, OFF(pue), 1, 5, 0, "facility energy / IT energy (default 1.58, assumed)" },
	{ "price-per-kwh", K_NUM, OFF(price_per_kwh), 0, 100, 0, "electricity price per kWh (default 0.0806 USD, assumed)" },
	{ "carbon", K_NUM, OFF(carbon_g_per_kwh), 0, 5000, 0, "grid carbon intensity, gCO2e per kWh (default 480, assumed)" },
};
#define NDEFS ((int)(sizeof(opt_defs) / sizeof(opt_defs[0])))

enum { O_INPUTS = 0x2000, O_JSON, O_FORCE, O_STRICT, O_STEPS, O_BASE_STEPS, O_WARMUP, O_WINDOW, O_GPU, O_DTYPE,
       O_BASE = 0x2100 };

#define MAX_STEP_PATHS 64

/* the step logs of today's run and of the baseline (--steps, --baseline-steps) */
struct steps_in {
	char *now[MAX_STEP_PATHS], *base[MAX_STEP_PATHS];
	int nnow, nbase;
	struct hr_steps_opts o;
	struct hr_steps_run run_now, run_base;
	int have_now, have_base;
	const char *gpu, *dtype;
};

struct given_model {
	double alpha_us, bw_gbps, nic_gbps;
	int have_alpha, have_bw, have_nic;
	enum hr_fit_model model;
};

/* "0.38" or "38%" */
static int parse_frac(const char *opt, const char *s, double *out)
{
	char *end;
	double v;

	if (ch_parse_leading_double(s, &v, &end))
		goto bad;
	if (!strcmp(end, "%"))
		v /= 100;
	else if (*end || v > 1)
		goto bad;
	*out = v;
	return 0;
bad:
	return ch_usage_error("invalid fraction '%s' for %s (expected a number from 0 to 1, or a percentage such as '12%%')",
			      s ? s : "", opt);
}

/* the options that take a word: --comm-model, --loader-placement, --parallelism */
static int set_word(struct hr_canary_in *in, struct given_model *gm, const char *name, const char *label,
		    const char *val)
{
	static const char *const places[] = { "shared", "isolated", "numa-local", "numa-remote", "as-is" };
	size_t i;

	if (!strcmp(name, "comm-model")) {
		if (!strcmp(val, "ring"))
			gm->model = HR_FIT_RING;
		else if (!strcmp(val, "log"))
			gm->model = HR_FIT_LOG;
		else
			return ch_usage_error("unknown value '%s' for %s (expected: ring, log)", val, label);
		return 0;
	}
	if (!strcmp(name, "parallelism")) {
		if (!strcmp(val, "ddp"))
			in->parallelism = HR_PAR_DDP;
		else if (!strcmp(val, "fsdp"))
			in->parallelism = HR_PAR_FSDP;
		else
			return ch_usage_error("unknown value '%s' for %s (expected: ddp, fsdp)", val, label);
		return 0;
	}
	for (i = 0; i < sizeof(places) / sizeof(places[0]); i++)
		if (!strcmp(val, places[i])) {
			snprintf(in->loader_placement, sizeof(in->loader_placement), "%s", places[i]);
			return 0;
		}
	return ch_usage_error("unknown value '%s' for %s (expected: shared, isolated, numa-local, numa-remote, as-is)",
			      val, label);
}

static int set_opt(struct hr_canary_in *in, struct given_model *gm, const struct opt_def *d,
		   const char *label, const char *val)
{
	double v = 0;
	int rc;

	switch (d->kind) {
	case K_COUNT: {
		long l;
		rc = ch_parse_long(label, val, (long)d->min, (long)d->max, &l);
		v = (double)l;
		break;
	}
	case K_NUM: {
		char *end;
		errno = 0;
		v = val && *val && ch_decimal_len(val) == strlen(val) ? strtod(val, &end) : NAN;
		if (!isfinite(v) || errno)
			return ch_usage_error("invalid number '%s' for %s", val ? val : "", label);
		rc = 0;
		break;
	}
	case K_DUR:
		rc = ch_parse_duration(label, val, &v);
		break;
	case K_FRAC:
		rc = parse_frac(label, val, &v);
		break;
	case K_MODEL:
		return set_word(in, gm, d->name, label, val);
	default:
		return CH_ERR_USAGE;
	}
	if (rc)
		return rc;
	if (!(v >= d->min) || (d->excl_min == 1 && v <= d->min) || !(v <= d->max) || (d->excl_min == 2 && v >= d->max))
		return ch_usage_error("value '%s' for %s is out of range (expected %s%g to %s%g%s: the plausible range, "
				      "docs/canary.md)", val, label, d->excl_min == 1 ? "more than " : "", d->min,
				      d->excl_min == 2 ? "below " : "", d->max, d->kind == K_DUR ? " s" : "");
	if (!strcmp(d->name, "nic-gbps")) {
		gm->nic_gbps = v;
		gm->have_nic = 1;
	} else if (!strcmp(d->name, "alpha-us")) {
		gm->alpha_us = v;
		gm->have_alpha = 1;
	} else if (!strcmp(d->name, "bw-gbps")) {
		gm->bw_gbps = v;
		gm->have_bw = 1;
	} else {
		struct hr_fig *f = (struct hr_fig *)((char *)in + d->off);
		*f = (struct hr_fig){ v, HR_SRC_GIVEN };
	}
	return 0;
}

/* the --inputs file: "key = value" lines, keys as the long options, '#' comments */
static int load_inputs(const char *path, struct hr_canary_in *in, struct given_model *gm)
{
	FILE *fp;
	char line[512], *text = NULL, err[256];
	size_t len = 0;
	int lineno = 0, rc = 0, i, seen[NDEFS];

	/* a regular file only: a directory or a named pipe is an error, never a hang */
	if (hr_read_file(path, 1u << 20, &text, &len, err, sizeof(err)))
		return ch_usage_error("cannot read --inputs file '%s': %s", path, err);
	fp = fmemopen(text, len ? len : 1, "r");
	if (!fp) {
		free(text);
		return CH_ERR_RUNTIME;
	}
	memset(seen, 0, sizeof(seen));
	while (!rc && fgets(line, sizeof(line), fp)) {
		char *p = line, *eq, *key, *val, *e, label[600];
		lineno++;
		if (!strchr(line, '\n') && !feof(fp)) {
			rc = ch_usage_error("%s:%d: line too long", path, lineno);
			break;
		}
		if ((e = strchr(p, '#')))
			*e = '\0';
		while (isspace((unsigned char)*p))
			p++;
		e = p + strlen(p);
		while (e > p && isspace((unsigned char)e[-1]))
			*--e = '\0';
		if (!*p)
			continue;
		eq = strchr(p, '=');
		if (!eq) {
			rc = ch_usage_error("%s:%d: expected 'key = value', got '%s'", path, lineno, p);
			break;
		}
		*eq = '\0';
		key = p;
		val = eq + 1;
		e = key + strlen(key);
		while (e > key && isspace((unsigned char)e[-1]))
			*--e = '\0';
		while (isspace((unsigned char)*val))
			val++;
		for (i = 0; i < NDEFS; i++)
			if (!strcmp(opt_defs[i].name, key))
				break;
		if (i == NDEFS) {
			rc = ch_usage_error("%s:%d: unknown key '%s' (the keys are the long options of 'canary' without '--')",
					    path, lineno, key);
			break;
		}
		/* a key given twice: which one was meant is not known (the last
		 * one silently won) */
		if (seen[i]) {
			rc = ch_usage_error("%s:%d: key '%s' given twice (also line %d)", path, lineno, key, seen[i]);
			break;
		}
		seen[i] = lineno;
		snprintf(label, sizeof(label), "%s (%s:%d)", key, path, lineno);
		rc = set_opt(in, gm, &opt_defs[i], label, val);
	}
	fclose(fp);
	free(text);
	return rc;
}

/* ---------------------------------------------------- reading the results */

#define MAX_SERIES 32

struct series {
	char algo[64];
	int level;
	struct hr_fit_point *p;
	size_t n, cap;
	struct hr_fit fit[HR_FIT_NMODELS];
	int fit_rc[HR_FIT_NMODELS];
	int chosen; /* model used, -1 when no fit */
};

struct scan {
	struct series s[MAX_SERIES];
	int ns;
	int gpus_per_node;
	double input_wait;
	char input_wait_from[96];
	int have_input_wait;
	char loader_busy[400]; /* the first loader_contention result not judgeable (host busy) */
	char ar_empty[600];    /* the first allreduce_bw result whose sweeps of 2 or more
				  ranks measured no size (a run stopped early), "" none */
	int n_allreduce, n_loader, n_other, n_unavailable, wrong_rows;
	int used[HR_NLEVELS]; /* series used for the prediction, -1 none */
	struct hr_issues *is; /* the walk's input problems */
	int world_ranks;      /* largest world group: the allocation measured */
	double max_bytes;     /* largest message measured */
	struct hr_ckpt_canary ckpt; /* checkpoint_io results */
	char gpu_name[128];   /* the GPUs of the inputs (allreduce_bw's rank layout, roofline's devices) */
	struct hr_power_canary power; /* roofline power-cap sweeps */
	struct hr_power_canary_out power_out;
};

static struct series *series_get(struct scan *sc, const char *algo, int level)
{
	int i;

	for (i = 0; i < sc->ns; i++)
		if (sc->s[i].level == level && !strcmp(sc->s[i].algo, algo))
			return &sc->s[i];
	if (sc->ns == MAX_SERIES)
		return NULL;
	memset(&sc->s[sc->ns], 0, sizeof(sc->s[0]));
	snprintf(sc->s[sc->ns].algo, sizeof(sc->s[0].algo), "%s", algo);
	sc->s[sc->ns].level = level;
	return &sc->s[sc->ns++];
}

static int bad_key(struct hr_issues *is, const char *path, const char *where, const char *what,
		   const struct hr_rv *v)
{
	char *txt = hr_rv_text(v);
	hr_issue_add(is, HR_ISSUE_SKIPPED, path, 0, 0, "%s: expected %s, got '%s'; file skipped", where, what,
		     txt ? txt : "nothing");
	free(txt);
	return CH_ERR_USAGE;
}

/* the rows of one sweep into its series: fit points, and rows with wrong results counted */
static int read_rows(struct scan *sc, const char *path, size_t i, const struct hr_result_sweep *sw,
		     struct series *se)
{
	char where[160];
	size_t j;

	for (j = 0; j < sw->rows_list.n; j++) {
		const struct hr_result_row *row = &sw->rows[j];
		snprintf(where, sizeof(where), "results.sweeps[%zu].rows[%zu]", i, j);
		if (!(row->bytes.num > 0))
			return bad_key(sc->is, path, where, "\"bytes\" a positive number", &row->bytes);
		snprintf(where, sizeof(where), "results.sweeps[%zu].rows[%zu].out_of_place.time_us.median", i, j);
		if (!(row->oop_time_us.num > 0))
			return bad_key(sc->is, path, where, "a positive time", &row->oop_time_us);
		if (row->oop_wrong.i > 0) {
			sc->wrong_rows++;
			continue;
		}
		if (se->n == se->cap) {
			size_t cap = se->cap ? 2 * se->cap : 64;
			struct hr_fit_point *np = realloc(se->p, cap * sizeof(*np));
			if (!np)
				return CH_ERR_RUNTIME;
			se->p = np;
			se->cap = cap;
		}
		if (row->bytes.num > sc->max_bytes)
			sc->max_bytes = row->bytes.num;
		se->p[se->n].bytes = row->bytes.num;
		se->p[se->n].nranks = (int)sw->nranks.i;
		se->p[se->n].time_us = row->oop_time_us.num;
		se->n++;
	}
	return 0;
}

static int read_allreduce(struct scan *sc, const char *path, const struct hr_result *r)
{
	size_t i, rows;
	char where[160];

	if (r->status && !strcmp(r->status, "unavailable")) {
		sc->n_unavailable++;
		return 0;
	}
	if (!r->sweeps_list.is_array) {
		struct hr_rv v = { .json = r->sweeps_list.json };
		return bad_key(sc->is, path, "results.sweeps", "an array", &v);
	}
	sc->n_allreduce++;
	rows = 0;
	for (i = 0; !sc->gpu_name[0] && i < r->layout_list.n; i++)
		if (r->layout[i].gpu_name.str && r->layout[i].gpu_name.str[0])
			snprintf(sc->gpu_name, sizeof(sc->gpu_name), "%s", r->layout[i].gpu_name.str);
	if (r->ranks_per_host_max > sc->gpus_per_node)
		sc->gpus_per_node = r->ranks_per_host_max;
	for (i = 0; i < r->sweeps_list.n; i++) {
		const struct hr_result_sweep *sw = &r->sweeps[i];
		struct series *se;
		int rc;

		snprintf(where, sizeof(where), "results.sweeps[%zu]", i);
		if (!sw->group_kind.str)
			return bad_key(sc->is, path, where, "a string \"group_kind\"", &sw->group_kind);
		if (!sw->algo.str)
			return bad_key(sc->is, path, where, "a string \"algo\"", &sw->algo);
		if (!sw->nranks.is_int || sw->nranks.i < 1 || sw->nranks.i > INT_MAX)
			return bad_key(sc->is, path, where, "\"nranks\" a positive integer", &sw->nranks);
		if (!sw->rows_list.is_array) {
			struct hr_rv v = { .json = sw->rows_list.json };
			return bad_key(sc->is, path, where, "an array \"rows\"", &v);
		}
		if (!strcmp(sw->group_kind.str, "world") && sw->nranks.i > sc->world_ranks)
			sc->world_ranks = (int)sw->nranks.i;
		if (sw->nranks.i < 2)
			continue; /* one rank: nothing to communicate */
		se = series_get(sc, sw->algo.str, sw->nodes_list.n > 1 ? HR_INTER : HR_INTRA);
		if (!se) {
			hr_issue_add(sc->is, HR_ISSUE_SKIPPED, path, 0, 0,
				     "more than %d algorithm and fabric level combinations; file skipped", MAX_SERIES);
			return CH_ERR_USAGE;
		}
		if ((rc = read_rows(sc, path, i, sw, se)))
			return rc;
		rows += sw->rows_list.n;
	}
	if (!rows && !sc->ar_empty[0])
		snprintf(sc->ar_empty, sizeof(sc->ar_empty), "allreduce_bw's run in %s measured no size of 2 or more ranks (status '%s'%s%s)",
			 path, r->status ? r->status : "?", r->reason && r->reason[0] ? ": " : "",
			 r->reason ? r->reason : "");
	return 0;
}

static int read_loader(struct scan *sc, const char *path, const struct hr_result *r)
{
	const struct hr_result_config *pick = NULL;
	double w = -1;
	size_t i;
	int p;

	if (r->status && !strcmp(r->status, "unavailable")) {
		sc->n_unavailable++;
		return 0;
	}
	if (!r->configs_list.is_array) {
		struct hr_rv v = { .json = r->configs_list.json };
		return bad_key(sc->is, path, "results.configs", "an array", &v);
	}
	sc->n_loader++;
	/* the placement the job runs with: as-is, else shared, else the worst */
	p = hr_result_pick_config(r);
	if (p >= 0)
		pick = &r->configs[p];
	for (i = 0; i < r->configs_list.n; i++) {
		const struct hr_rv *v = &r->configs[i].input_wait_frac;
		char where[80];
		snprintf(where, sizeof(where), "results.configs[%zu].input_wait_frac", i);
		if (isnan(v->num) || v->num < 0 || v->num >= 1)
			return bad_key(sc->is, path, where, "a fraction in [0, 1)", v);
		if (p < 0 && v->num > w) {
			w = v->num;
			pick = &r->configs[i];
		}
	}
	{
		/* measured on a busy host: its feeders were late from the other
		 * work, not the job's (the health report's rule: not judged) */
		struct hr_quality q;
		hr_quality_loader_result(&q, r);
		if (q.noisy) {
			if (!sc->loader_busy[0])
				snprintf(sc->loader_busy, sizeof(sc->loader_busy),
					 "loader_contention on %s was measured on a busy host (%s); re-run on an idle node or give --input-wait",
					 r->hostname ? r->hostname : "?", q.why);
			return 0;
		}
	}
	if (!pick)
		return 0;
	w = pick->input_wait_frac.num;
	/* the step waits for the slowest node: keep the worst */
	if (!sc->have_input_wait || w > sc->input_wait) {
		sc->input_wait = w;
		sc->have_input_wait = 1;
		snprintf(sc->input_wait_from, sizeof(sc->input_wait_from),
			 "(loader_contention on %s, placement %s, config %s)", r->hostname ? r->hostname : "?",
			 pick->placement.str ?: "?", pick->name.str ?: "?");
	}
	return 0;
}

static int read_doc(struct scan *sc, const char *path, const struct hr_result *r)
{
	if (!strcmp(r->tool, "allreduce_bw"))
		return read_allreduce(sc, path, r);
	if (!strcmp(r->tool, "loader_contention"))
		return read_loader(sc, path, r);
	if (!strcmp(r->tool, "checkpoint_io"))
		return hr_ckpt_canary_read(&sc->ckpt, path, r, sc->is);
	if (!strcmp(r->tool, "roofline")) {
		size_t i;
		/* the GPUs' name, for their datasheet peak; and the power-cap sweeps */
		for (i = 0; !sc->gpu_name[0] && i < r->devices_list.n; i++)
			if (r->devices[i].kind.str && !strcmp(r->devices[i].kind.str, "gpu") && r->devices[i].name.str)
				snprintf(sc->gpu_name, sizeof(sc->gpu_name), "%s", r->devices[i].name.str);
		return hr_power_canary_read(&sc->power, path, r, sc->is);
	}
	sc->n_other++;
	return 0;
}

/* one file: all of it, or nothing (what it added is undone when it breaks the schema) */
static int on_result(const char *path, const struct hr_result *r, struct hr_issues *is, void *ctx)
{
	struct scan *sc = ctx;
	struct scan *before = malloc(sizeof(*before));
	int rc, i;

	if (!before)
		return CH_ERR_RUNTIME;
	*before = *sc;
	sc->is = is;
	rc = read_doc(sc, path, r);
	if (rc == CH_ERR_USAGE) {
		for (i = 0; i < sc->ns; i++) {
			if (i < before->ns) {
				before->s[i].p = sc->s[i].p; /* keep the (possibly moved) buffer */
				before->s[i].cap = sc->s[i].cap;
			} else {
				free(sc->s[i].p);
			}
		}
		*sc = *before;
		rc = HR_WALK_SKIP;
	}
	free(before);
	return rc;
}

/* fit every series; pick per level the algorithm fastest at (bytes, n) */
static void fit_all(struct scan *sc, struct hr_canary_in *in, double bytes, double n)
{
	int i, m, best[HR_NLEVELS] = { -1, -1 };
	double best_t[HR_NLEVELS] = { 0, 0 };

	for (i = 0; i < sc->ns; i++) {
		struct series *se = &sc->s[i];
		se->chosen = -1;
		for (m = 0; m < HR_FIT_NMODELS; m++)
			se->fit_rc[m] = se->n >= 3 ? hr_fit_solve((enum hr_fit_model)m, se->p, se->n, &se->fit[m]) : CH_ERR_USAGE;
		if (!strcmp(se->algo, "ring"))
			se->chosen = se->fit_rc[HR_FIT_RING] ? -1 : HR_FIT_RING;
		else if (!strcmp(se->algo, "tree") || !strcmp(se->algo, "recursive_doubling"))
			se->chosen = se->fit_rc[HR_FIT_LOG] ? -1 : HR_FIT_LOG;
		else if (!se->fit_rc[HR_FIT_RING] && !se->fit_rc[HR_FIT_LOG])
			se->chosen = se->fit[HR_FIT_LOG].rms_rel_pct < se->fit[HR_FIT_RING].rms_rel_pct ? HR_FIT_LOG : HR_FIT_RING;
		else
			se->chosen = !se->fit_rc[HR_FIT_RING] ? HR_FIT_RING : !se->fit_rc[HR_FIT_LOG] ? HR_FIT_LOG : -1;
	}
	for (i = 0; i < sc->ns; i++) {
		struct series *se = &sc->s[i];
		double b = bytes > 0 ? bytes : se->n ? se->p[se->n - 1].bytes : 0, t;
		if (se->chosen < 0)
			continue;
		t = hr_fit_predict_us(&se->fit[se->chosen], b, (int)n);
		if (best[se->level] < 0 || t < best_t[se->level]) {
			best[se->level] = i;
			best_t[se->level] = t;
		}
	}
	for (i = 0; i < HR_NLEVELS; i++) {
		sc->used[i] = -1;
		if (best[i] < 0 || in->comm[i].set)
			continue;
		sc->used[i] = best[i];
		in->comm[i].set = 1;
		in->comm[i].fit = sc->s[best[i]].fit[sc->s[best[i]].chosen];
		in->comm[i].src = HR_SRC_FITTED;
		snprintf(in->comm[i].algo, sizeof(in->comm[i].algo), "fit of allreduce_bw %s", sc->s[best[i]].algo);
	}
}

static void print_fits(FILE *f, const struct scan *sc, double bytes, int target)
{
	static const char *const lv[] = { "intra", "inter" };
	char sz[32], hdr_t[40], hdr_b[40];
	int i, m;

	if (!sc->ns)
		return;
	if (bytes >= 1e9)
		snprintf(sz, sizeof(sz), "%.3g GB", bytes / 1e9);
	else if (bytes >= 1e6)
		snprintf(sz, sizeof(sz), "%.3g MB", bytes / 1e6);
	else
		snprintf(sz, sizeof(sz), "%.3g kB", bytes / 1e3);
	snprintf(hdr_t, sizeof(hdr_t), "T_us@%d", target);
	snprintf(hdr_b, sizeof(hdr_b), "busbw@%d", target);
	fprintf(f, "all-reduce model fits (allreduce_bw out-of-place median times; * = model used for the algorithm, > = algorithm used for the prediction;\n"
		"  T_us and busbw (GB/s) predicted for %s per rank at %d ranks)\n", sz, target);
	fprintf(f, "  %-6s %-20s %-6s %10s %10s %8s %9s %9s %6s %7s %11s %9s\n", "level", "algo", "model",
		"alpha_us", "B_gbps", "R2", "rms_rel%", "max_rel%", "points", "ranks", hdr_t, hdr_b);
	for (i = 0; i < sc->ns; i++) {
		const struct series *se = &sc->s[i];
		for (m = 0; m < HR_FIT_NMODELS; m++) {
			const struct hr_fit *ft = &se->fit[m];
			int used = se->chosen == m && sc->used[se->level] == i;
			char mark[4];
			double t;
			snprintf(mark, sizeof(mark), "%c%c", used ? '>' : ' ', se->chosen == m ? '*' : ' ');
			if (se->fit_rc[m]) {
				fprintf(f, "%s%-6s %-20s %-6s no fit: %s (%zu points)\n", mark, lv[se->level], hr_term(se->algo),
					hr_fit_model_name((enum hr_fit_model)m),
					se->n < 3 ? "fewer than 3 points or one message size" :
					se->fit_rc[m] == CH_ERR_CHECK ? "no positive bandwidth term (messages too small)" :
					se->fit_rc[m] == CH_ERR_RUNTIME ? "LAPACK's least-squares solver unavailable or failed (said above)" :
					"the points cannot separate latency from bandwidth", se->n);
				continue;
			}
			t = hr_fit_predict_us(ft, bytes, target);
			fprintf(f, "%s%-6s %-20s %-6s %10.3g %10.4g %8.4f %9.2f %9.2f %6zu %3d-%-3d %11.4g %9.4g%s [fitted]\n", mark,
				lv[se->level], hr_term(se->algo), hr_fit_model_name(ft->model), ft->alpha_us, ft->bw_gbps, ft->r2,
				ft->rms_rel_pct, ft->max_rel_pct, ft->npoints, ft->min_nranks, ft->max_nranks,
				t, hr_fit_busbw_gbps(bytes, target, t), ft->alpha_clamped ? " alpha<0 clamped" : "");
		}
	}
	fputc('\n', f);
}

static json_t *fits_json(const struct scan *sc, double bytes, int target)
{
	static const char *const lv[] = { "intra", "inter" };
	json_t *a = json_array();
	int i, m;

	for (i = 0; a && i < sc->ns; i++)
		for (m = 0; m < HR_FIT_NMODELS; m++) {
			const struct series *se = &sc->s[i];
			const struct hr_fit *ft = &se->fit[m];
			if (se->fit_rc[m])
				json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:b, s:i, s:n}", "level", lv[se->level],
								  "algo", se->algo, "model", hr_fit_model_name((enum hr_fit_model)m),
								  "chosen", se->chosen == m, "points", (int)se->n, "fit"));
			else
				json_array_append_new(a, json_pack("{s:s, s:s, s:s, s:b, s:i, s:{s:f, s:f, s:b, s:f, s:f, s:f}, s:{s:I, s:i, s:f, s:f}}",
								  "level", lv[se->level], "algo", se->algo,
								  "model", hr_fit_model_name(ft->model), "chosen", se->chosen == m,
								  "points", (int)ft->npoints, "fit", "alpha_us", ft->alpha_us,
								  "bw_gbps", ft->bw_gbps, "alpha_clamped", ft->alpha_clamped,
								  "r2", ft->r2, "rms_rel_pct", ft->rms_rel_pct,
								  "max_rel_pct", ft->max_rel_pct, "predicted",
								  "bytes", (json_int_t)llround(bytes), "nranks", target,
								  "time_us", hr_fit_predict_us(ft, bytes, target),
								  "busbw_gbps", hr_fit_busbw_gbps(bytes, target, hr_fit_predict_us(ft, bytes, target))));
		}
	return a;
}

/* What the results measured, into the canary's inputs where not given; the all-reduce fits. */
static void apply_scan(struct scan *sc, struct hr_canary_in *in)
{
	double gb;

	if (sc->have_input_wait && !in->input_wait_frac.src) {
		in->input_wait_frac = (struct hr_fig){ sc->input_wait, HR_SRC_MEASURED };
		snprintf(in->input_wait_from, sizeof(in->input_wait_from), "%s", sc->input_wait_from);
	}
	if (sc->ar_empty[0] && !sc->max_bytes)
		snprintf(in->comm_not_measured, sizeof(in->comm_not_measured), "%s", sc->ar_empty);
	if (!in->input_wait_frac.src && sc->loader_busy[0])
		snprintf(in->input_wait_not_measured, sizeof(in->input_wait_not_measured), "%s", sc->loader_busy);
	hr_ckpt_canary_apply(&sc->ckpt, in);
	if (!in->peak_tflops.src && sc->gpu_name[0]) {
		/* the datasheet's dense bf16 peak of the GPUs measured (the dtype assumed) */
		const struct ch_datasheet *ds = ch_datasheet_lookup(sc->gpu_name);
		if (ds && ds->gflops[CH_BF16] > 0)
			in->peak_tflops = (struct hr_fig){ ds->gflops[CH_BF16] / 1e3, HR_SRC_MEASURED | HR_SRC_ASSUMED };
	}
	in->wrong_rows = sc->wrong_rows;
	if (sc->gpus_per_node > 0 && !in->gpus_per_node.src)
		in->gpus_per_node = (struct hr_fig){ sc->gpus_per_node, HR_SRC_MEASURED };
	if (sc->world_ranks > 0 && !in->gpus_now.src) {
		in->gpus_now = (struct hr_fig){ sc->world_ranks, HR_SRC_MEASURED };
		snprintf(in->gpus_now_from, sizeof(in->gpus_now_from), "the allreduce_bw results' world size: %d ranks",
			 sc->world_ranks);
	}
	if (sc->max_bytes > 0)
		in->probe_bytes = (struct hr_fig){ sc->max_bytes, HR_SRC_MEASURED };
	gb = in->params.src ? in->params.v * (in->grad_bytes_per_param.src ? in->grad_bytes_per_param.v : 2) : 0;
	fit_all(sc, in, gb, in->gpus_now.src ? in->gpus_now.v : 2);
}

/* The full text output; @any_inputs: result files or directories were given. */
static void print_all(const struct scan *sc, const struct hr_canary_in *in, const struct hr_canary_out *out,
		      int any_inputs, size_t skipped)
{
	char ckpt_count[96] = "";

	if (sc->ckpt.nfiles)
		snprintf(ckpt_count, sizeof(ckpt_count), ", %d checkpoint_io", sc->ckpt.nfiles);
	if (sc->power.nfiles)
		snprintf(ckpt_count + strlen(ckpt_count), sizeof(ckpt_count) - strlen(ckpt_count), ", %d roofline power-cap",
			 sc->power.nfiles);
	if (any_inputs)
		printf("inputs: %d allreduce_bw, %d loader_contention%s result files read; %d unavailable, %d other JSON files skipped, %zu unreadable or broken files skipped%s\n",
		       sc->n_allreduce, sc->n_loader, ckpt_count, sc->n_unavailable, sc->n_other, skipped,
		       sc->wrong_rows ? "; rows with wrong results left out of the fit" : "");
	print_fits(stdout, sc, out->grad_bytes.src ? out->grad_bytes.v : sc->max_bytes, (int)in->target_gpus.v);
	hr_ckpt_canary_print(stdout, &sc->ckpt, in);
	hr_canary_print(stdout, in, out);
	hr_power_canary_print(stdout, &sc->power, &sc->power_out);
}

/* --quiet: the verdict line only. */
static void print_verdict(const struct hr_canary_out *out)
{
	char fx[HR_CANARY_FIXES_TEXT];

	hr_canary_fixes_text(out, fx, sizeof(fx));
	printf("verdict: %s%s%s\n", hr_canary_verdict_name(out->verdict),
	       out->verdict == HR_VERDICT_FIX_FIRST ? ": fix " : out->verdict == HR_VERDICT_MEASURE_FIRST ? ": " : "",
	       out->verdict == HR_VERDICT_FIX_FIRST ? fx : out->verdict == HR_VERDICT_MEASURE_FIRST ? out->measure : "");
}

/* The --json file: the canary report, the fits and the checkpoint. */
struct steps_in;
static int write_json(const char *path, const struct scan *sc, const struct hr_canary_in *in,
		      const struct hr_canary_out *out, const struct steps_in *st)
{
	json_t *doc = hr_canary_json(in, out);
	int rc;

	if (!doc)
		return CH_ERR_RUNTIME;
	json_object_set_new(doc, "fits", fits_json(sc, out->grad_bytes.src ? out->grad_bytes.v : sc->max_bytes,
						    (int)in->target_gpus.v));
	json_object_set_new(doc, "checkpoint_io", hr_ckpt_canary_json(&sc->ckpt, in));
	json_object_set_new(doc, "step_logs", st->have_now || st->have_base ?
			    hr_steps_canary_json(st->have_now ? &st->run_now : NULL, st->have_base ? &st->run_base : NULL) :
			    json_null());
	json_object_set_new(doc, "power_cap", hr_power_canary_json(&sc->power_out));
	rc = ch_json_write_atomic(path, doc, JSON_INDENT(2) | JSON_SORT_KEYS);
	json_decref(doc);
	return rc;
}

/* ------------------------------------------------------------------ main */

static void usage(FILE *f)
{
	int i;

	fprintf(f,
		"Usage: health_report canary [OPTIONS] [RESULT_FILE|DIR]...\n"
		"\n"
		"Predict what a larger allocation buys before booking it (weak scaling: work per\n"
		"GPU and step constant). Reads allreduce_bw results (sweeps and --scaling points:\n"
		"the all-reduce model is fitted to them), loader_contention results (input\n"
		"wait) and checkpoint_io results (the checkpoint's block and interval, and its\n"
		"stall at the target) from the files and directories given, takes what you know\n"
		"from the options or an --inputs file, and prints today's loss in order of size,\n"
		"the predicted "
		"step time, scaling efficiency, MFU and cost at --target-gpus, and a verdict:\n"
		"book, fix first and re-measure, do not book, or measure first (inputs that\n"
		"contradict each other, too few, or an all-reduce fit that misses its points\n"
		"by more than 20%% rms). Every figure is labelled given,\n"
		"measured, fitted or assumed. Method: docs/canary.md.\n"
		"\n"
		"What you know (durations take ms, s, m/min or h; fractions 0.12 or 12%%):\n");
	for (i = 0; i < NDEFS; i++) {
		const char *arg = opt_defs[i].kind == K_COUNT ? "N" : opt_defs[i].kind == K_DUR ? "TIME" :
				  opt_defs[i].kind == K_FRAC ? "FRAC" : opt_defs[i].kind == K_MODEL ? "NAME" : "X";
		char l[64];
		snprintf(l, sizeof(l), "--%s %s", opt_defs[i].name, arg);
		if (opt_defs[i].kind == K_MODEL)
			fprintf(f, "  %-28s %s\n", l, opt_defs[i].help);
		else
			fprintf(f, "  %-28s %s [%s%g to %s%g%s]\n", l, opt_defs[i].help, opt_defs[i].excl_min == 1 ? "above " : "",
				opt_defs[i].min, opt_defs[i].excl_min == 2 ? "below " : "", opt_defs[i].max,
				opt_defs[i].kind == K_DUR ? " s" : "");
	}
	fprintf(f,
		"\nOther options:\n"
		"  --inputs FILE                'key = value' lines, keys as the options above\n"
		"                               without '--', '#' comments; options override it\n"
		"  --steps PATH                 today's step logs (a file or directory; repeatable):\n"
		"                               GPUs, step time, checkpoint stalls, input wait,\n"
		"                               tokens and stragglers measured (docs/canary.md)\n"
		"  --baseline-steps PATH        the baseline run's step logs: its GPUs and step\n"
		"                               (a log printed by one rank holds no GPU count:\n"
		"                               give --gpus-now / --baseline-gpus with it)\n"
		"  --warmup N, --window N       steps skipped, then judged, in each log (%d, %d)\n"
		"  --gpu NAME [--dtype D]       the GPU, for its datasheet peak (MFU; bf16 default)\n"
		"  --json FILE                  also write the canary report as JSON\n"
		"  --force                      replace the --json FILE if it exists (only a\n"
		"                               regular file clusterhealth wrote)\n"
		"  --strict                     a result file that cannot be read or breaks\n"
		"                               the schema is an error (exit 2); without it,\n"
		"                               it is skipped and listed under input problems\n"
		"                               (exit 2 when none is usable and no --inputs\n"
		"                               file was given)\n"
		"  -q, --quiet                  print only the verdict lines\n"
		"  -h, --help                   show this help\n"
		"\n"
		"Exit status: 0 book, 1 fix first, do not book or measure first, 2 usage or input error,\n"
		"4 run-time error.\n"
		"\n"
		"Examples:\n"
		"  health_report canary --gpus-now 64 --step-time 1.6s --baseline-gpus 32 \\\n"
		"      --baseline-step-time 1.0s --checkpoint-interval 30m --checkpoint-block 5.5m \\\n"
		"      --target-gpus 128 --params 7e9 results/canary/\n"
		"  health_report canary --inputs job.txt --target-gpus 128 --json canary.json results/\n"
		"  health_report canary --steps logs/64gpu --baseline-steps logs/32gpu --target-gpus 128\n",
		HR_STEPS_WARMUP, HR_STEPS_WINDOW);
}

/* What the command line asked for, besides the figures (struct hr_canary_in). */
struct canary_opts {
	const char *inputs, *json_path;
	int force, quiet, strict;
};

/* The long options: one per figure of opt_defs, then the others. */
static void make_longopts(struct option *longopts)
{
	int i;

	for (i = 0; i < NDEFS; i++) {
		longopts[i].name = opt_defs[i].name;
		longopts[i].has_arg = required_argument;
		longopts[i].flag = NULL;
		longopts[i].val = O_BASE + i;
	}
	longopts[i++] = (struct option){ "inputs", required_argument, NULL, O_INPUTS };
	longopts[i++] = (struct option){ "json", required_argument, NULL, O_JSON };
	longopts[i++] = (struct option){ "force", no_argument, NULL, O_FORCE };
	longopts[i++] = (struct option){ "strict", no_argument, NULL, O_STRICT };
	longopts[i++] = (struct option){ "steps", required_argument, NULL, O_STEPS };
	longopts[i++] = (struct option){ "baseline-steps", required_argument, NULL, O_BASE_STEPS };
	longopts[i++] = (struct option){ "warmup", required_argument, NULL, O_WARMUP };
	longopts[i++] = (struct option){ "window", required_argument, NULL, O_WINDOW };
	longopts[i++] = (struct option){ "gpu", required_argument, NULL, O_GPU };
	longopts[i++] = (struct option){ "dtype", required_argument, NULL, O_DTYPE };
	longopts[i++] = (struct option){ "quiet", no_argument, NULL, 'q' };
	longopts[i++] = (struct option){ "help", no_argument, NULL, 'h' };
	longopts[i++] = (struct option){ NULL, 0, NULL, 0 };
}

/* One option of the second pass (@c from getopt_long, @arg its argument); 0 or an error code. */
static int set_cli_opt(int c, char *arg, struct canary_opts *co, struct hr_canary_in *in, struct given_model *gm,
		       struct steps_in *st)
{
	if (c >= O_BASE && c < O_BASE + NDEFS) {
		char label[64];
		snprintf(label, sizeof(label), "--%s", opt_defs[c - O_BASE].name);
		return set_opt(in, gm, &opt_defs[c - O_BASE], label, arg);
	} else if (c == O_JSON) {
		if (!*arg)
			return ch_usage_error("empty file name for --json");
		co->json_path = arg;
	} else if (c == O_FORCE) {
		co->force = 1;
	} else if (c == O_STRICT) {
		co->strict = 1;
	} else if (c == O_STEPS || c == O_BASE_STEPS) {
		int *k = c == O_STEPS ? &st->nnow : &st->nbase;
		if (*k == MAX_STEP_PATHS)
			return ch_usage_error("more than %d %s paths", MAX_STEP_PATHS,
					      c == O_STEPS ? "--steps" : "--baseline-steps");
		(c == O_STEPS ? st->now : st->base)[(*k)++] = arg;
	} else if (c == O_WARMUP) {
		return ch_parse_long("--warmup", arg, 0, 100000000, &st->o.warmup);
	} else if (c == O_WINDOW) {
		return ch_parse_long("--window", arg, 1, 100000000, &st->o.window);
	} else if (c == O_GPU) {
		st->gpu = arg;
	} else if (c == O_DTYPE) {
		st->dtype = arg;
	} else if (c == 'q') {
		co->quiet = 1;
	}
	return 0;
}

/* The options in two passes: --inputs, --help and the options' syntax, then
 * the command line over the --inputs file. Returns -1 to go on, else the
 * exit code. */
static int parse_opts(int argc, char **argv, const struct option *longopts, struct canary_opts *co,
		      struct hr_canary_in *in, struct given_model *gm, struct steps_in *st)
{
	int c, rc;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "qh", longopts, NULL)) != -1) {
		if (c == 'h') {
			usage(stdout);
			return CH_EXIT_OK;
		}
		if (c == '?' || c == ':')
			return ch_exit_code(ch_option_error(argv, "qh", longopts));
		if (c == O_INPUTS)
			co->inputs = optarg;
	}
	if (co->inputs && (rc = load_inputs(co->inputs, in, gm)))
		return ch_exit_code(rc);
	optind = 0;
	while ((c = getopt_long(argc, argv, "qh", longopts, NULL)) != -1)
		if ((rc = set_cli_opt(c, optarg, co, in, gm, st)))
			return ch_exit_code(rc);
	return -1;
}

/* What the options give together: the all-reduce model of --alpha-us and
 * --bw-gbps, the --json file's check, the peak of --gpu. 0 or an error code. */
static int apply_given(const struct canary_opts *co, struct hr_canary_in *in, const struct given_model *gm,
		       const struct steps_in *st)
{
	int i, rc;

	if (gm->have_alpha != gm->have_bw)
		return ch_usage_error("--alpha-us and --bw-gbps go together (give both, or neither to fit them)");
	if (gm->have_alpha) {
		for (i = 0; i < HR_NLEVELS; i++) {
			in->comm[i].set = 1;
			in->comm[i].fit.model = gm->model;
			in->comm[i].fit.alpha_us = gm->alpha_us;
			in->comm[i].fit.bw_gbps = gm->bw_gbps;
			in->comm[i].src = HR_SRC_GIVEN;
			snprintf(in->comm[i].algo, sizeof(in->comm[i].algo), "given");
		}
	}
	if (co->json_path && (rc = ch_check_output_file("--json", co->json_path, co->force)))
		return rc;
	if (st->gpu && !in->peak_tflops.src) {
		const struct ch_datasheet *ds = ch_datasheet_lookup(st->gpu);
		int dt = ch_dtype_parse(st->dtype ? st->dtype : "bf16");
		if (!ds)
			return ch_usage_error("GPU '%s' is not in the datasheet table (base/ch_datasheet.c): give --peak-tflops", st->gpu);
		if (dt < 0 || !(ds->gflops[dt] > 0))
			return ch_usage_error("no %s datasheet peak for %s: give --peak-tflops",
					      st->dtype ? st->dtype : "bf16", ds->sku);
		in->peak_tflops = (struct hr_fig){ ds->gflops[dt] / 1e3, HR_SRC_GIVEN };
	}
	return 0;
}

/* "--steps PATH" (", and N more" when repeated): where a run's figures came from */
static void steps_from(char *b, size_t n, const char *opt, char *const *paths, int np)
{
	if (np > 1)
		snprintf(b, n, "%s %s (and %d more)", opt, np ? hr_term(paths[0]) : "", np - 1);
	else
		snprintf(b, n, "%s %s", opt, np ? hr_term(paths[0]) : "");
}

/* The step logs of today's run and of the baseline, then their figures into
 * @in. 0 or an error code (a GPU count needed and unknown: CH_ERR_USAGE). */
static int load_steps(struct steps_in *st, struct hr_canary_in *in, struct hr_issues *issues)
{
	char now_from[HR_CANARY_PATH_TEXT], base_from[HR_CANARY_PATH_TEXT];
	int rc;

	if (st->nnow) {
		if ((rc = hr_steps_run_load(st->now, st->nnow, &st->o, &st->run_now, issues)))
			return rc;
		st->have_now = 1;
	}
	if (st->nbase) {
		if ((rc = hr_steps_run_load(st->base, st->nbase, &st->o, &st->run_base, issues)))
			return rc;
		st->have_base = 1;
	}
	steps_from(now_from, sizeof(now_from), "--steps", st->now, st->nnow);
	steps_from(base_from, sizeof(base_from), "--baseline-steps", st->base, st->nbase);
	return hr_steps_canary_apply(st->have_now ? &st->run_now : NULL, now_from, st->have_base ? &st->run_base : NULL,
				     base_from, in);
}

/* The result files and directories @args into @sc, the input problems
 * printed; *@skipped: the files skipped. 0 or an error code. */
static int read_results(char **args, int nargs, const struct canary_opts *co, const struct steps_in *st,
			struct scan *sc, struct hr_issues *issues, size_t *skipped)
{
	struct hr_walk_count cnt;
	char msg[256];
	int rc;

	if (!nargs) {
		*skipped = hr_issues_count(issues, HR_ISSUE_SKIPPED);
		hr_issues_print(co->quiet ? stderr : stdout, issues);
		if (co->strict && *skipped)
			return ch_usage_error("%zu input problem%s skipped (--strict)", *skipped, *skipped == 1 ? "" : "s");
		return 0;
	}
	if ((rc = hr_walk_results(args, nargs, issues, on_result, sc, &cnt)))
		return rc;
	*skipped = hr_issues_count(issues, HR_ISSUE_SKIPPED);
	hr_issues_print(co->quiet ? stderr : stdout, issues);
	/* the rule of every entry point; the canary alone may go on without
	 * a usable result file, on an --inputs file or step logs */
	if (hr_inputs_verdict(cnt.files, cnt.used, issues, co->strict, msg, sizeof(msg)) &&
	    (co->strict || (!co->inputs && !st->have_now)))
		return ch_usage_error("%s", msg);
	if (!cnt.used && !co->quiet && co->inputs)
		printf("no usable result file among the inputs: the canary runs on the --inputs file '%s' and the options\n",
		       co->inputs);
	else if (!cnt.used && !co->quiet)
		printf("no usable result file among the inputs: the canary runs on the step logs and the options\n");
	return 0;
}

/* --nic-gbps: the inter-node all-reduce where none was measured or given. */
static void apply_nic(struct hr_canary_in *in, const struct given_model *gm)
{
	if (!gm->have_nic || in->comm[HR_INTER].set)
		return;
	/* NCCL's all-reduce across nodes is bounded by the NICs per GPU
	 * (REFERENCE: 46-48 GB/s busbw per 400 Gb/s NIC): one NIC per GPU
	 * at line rate, latency left out */
	in->comm[HR_INTER].set = 1;
	in->comm[HR_INTER].fit.model = HR_FIT_RING;
	in->comm[HR_INTER].fit.alpha_us = 0;
	in->comm[HR_INTER].fit.bw_gbps = gm->nic_gbps / 8;
	in->comm[HR_INTER].src = HR_SRC_GIVEN | HR_SRC_ASSUMED;
	snprintf(in->comm[HR_INTER].algo, sizeof(in->comm[HR_INTER].algo),
		 "--nic-gbps %g, one NIC per GPU, latency 0", gm->nic_gbps);
}

/* The efficiency question alone (--target-efficiency without --target-gpus):
 * printed, and into the --json file. CH_OK when reached, CH_ERR_CHECK when
 * not, else an error code. */
static int efficiency_only(const struct hr_canary_in *in, const struct steps_in *st, const struct canary_opts *co)
{
	struct hr_canary_eff eff;
	int rc;

	if ((rc = hr_canary_eff_compute(in, &eff)))
		return rc;
	if (!co->quiet)
		hr_steps_canary_print(stdout, st->have_now ? &st->run_now : NULL, st->have_base ? &st->run_base : NULL);
	hr_canary_eff_print(stdout, &eff);
	if (co->json_path) {
		json_t *doc = json_pack("{s:s, s:i, s:o}", "schema", "clusterhealth.canary", "schema_version", 1,
					"efficiency_question", hr_canary_eff_json(&eff));
		if (!doc)
			return CH_ERR_RUNTIME;
		rc = ch_json_write_atomic(co->json_path, doc, JSON_INDENT(2) | JSON_SORT_KEYS);
		json_decref(doc);
		if (rc)
			return rc;
	}
	return eff.reached ? CH_OK : CH_ERR_CHECK;
}

/* The canary at --target-gpus: computed, printed (the verdict alone with
 * --quiet), into the --json file. CH_OK for BOOK, CH_ERR_CHECK for another
 * verdict, else an error code. @any_inputs: result files or directories
 * were given. */
static int canary_report(struct scan *sc, const struct hr_canary_in *in, const struct steps_in *st,
			 const struct canary_opts *co, int any_inputs, size_t skipped)
{
	struct hr_canary_out out;
	int rc;

	if ((rc = hr_canary_compute(in, &out)))
		return rc;
	hr_power_canary_compute(&sc->power, in, &out, &sc->power_out);
	if (!co->quiet) {
		hr_steps_canary_print(stdout, st->have_now ? &st->run_now : NULL, st->have_base ? &st->run_base : NULL);
		print_all(sc, in, &out, any_inputs, skipped);
	} else {
		print_verdict(&out);
	}
	if (in->target_efficiency.src) {
		struct hr_canary_eff eff;
		if (!hr_canary_eff_compute(in, &eff))
			hr_canary_eff_print(stdout, &eff);
	}
	if (co->json_path && (rc = write_json(co->json_path, sc, in, &out, st)))
		return rc;
	return out.verdict == HR_VERDICT_BOOK ? CH_OK : CH_ERR_CHECK;
}

static int canary_main(int argc, char **argv)
{
	struct option longopts[NDEFS + 16];
	struct canary_opts co = { 0 };
	struct steps_in st;
	struct hr_canary_in in;
	struct given_model gm = { .model = HR_FIT_RING };
	struct scan *sc = NULL;
	struct hr_issues issues = { 0 };
	size_t skipped = 0;
	int i, nargs, rc;

	hr_canary_in_init(&in);
	memset(&st, 0, sizeof(st));
	hr_steps_opts_init(&st.o);
	make_longopts(longopts);
	if ((rc = parse_opts(argc, argv, longopts, &co, &in, &gm, &st)) >= 0)
		return rc;
	nargs = argc - optind;
	if ((rc = apply_given(&co, &in, &gm, &st)))
		return ch_exit_code(rc);

	sc = calloc(1, sizeof(*sc));
	if (!sc)
		return CH_EXIT_RUNTIME;
	/* the step logs first: they are the job's own, ahead of the result files */
	if ((rc = load_steps(&st, &in, &issues)))
		goto out;
	if ((rc = read_results(argv + optind, nargs, &co, &st, sc, &issues, &skipped)))
		goto out;
	apply_scan(sc, &in);
	apply_nic(&in, &gm);
	if (in.target_efficiency.src && !in.target_gpus.src)
		rc = efficiency_only(&in, &st, &co);
	else
		rc = canary_report(sc, &in, &st, &co, nargs > 0, skipped);
out:
	hr_issues_release(&issues);
	hr_steps_run_release(&st.run_now);
	hr_steps_run_release(&st.run_base);
	for (i = 0; sc && i < sc->ns; i++)
		free(sc->s[i].p);
	if (sc)
		hr_power_canary_release(&sc->power);
	free(sc);
	return ch_exit_code(rc);
}

int hr_canary_main(int argc, char **argv)
{
	return hr_run_subcommand(argc, argv, "canary", canary_main);
}
