#include "report/judge/hr_expect.h"
#include "report/judge/hr_rules.h"
#include "report/hr_util.h"
#include "base/ch_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* Measured intra-node all-reduce references (REFERENCE.md). */
static const struct {
	const char *sku;
	double gbps, nvls_gbps;
	int nranks;
	const char *source;
} intra_ref[] = {
	{ "H100 SXM", 370, 480, 8, "measured reference, 8 x H100 SXM on NVSwitch: about 370 GB/s without NVLS, about 480 with NVLS (Azure ND H100 v5: 478.87 GB/s at 8 GB)" },
	{ "H200 SXM", 370, 480, 8, "measured reference, 8 x H200 SXM on NVSwitch (the NVLink 4 fabric of H100 SXM): about 370 GB/s without NVLS; 479.98 GB/s at 8 GB with NVLS (Azure ND H200 v5)" },
	{ "A100 SXM 80GB", 230, NAN, 8, "measured reference, 8 x A100 SXM on NVSwitch: about 230 GB/s" },
	{ "A100 SXM 40GB", 230, NAN, 8, "measured reference, 8 x A100 SXM on NVSwitch: about 230 GB/s (OCI BM.GPU4.8 nccl-tests log: 235 GB/s at 8 GB)" },
};

/* The network of a typical cluster of a GPU model, assumed when the result
 * files record no NICs: one NIC per GPU at this line rate. */
static const struct {
	const char *sku;
	double nic_gbps;
	const char *source;
} cluster_ref[] = {
	{ "H100 SXM", 400, "assumed: one 400 Gb/s NDR NIC per GPU, as in NVIDIA DGX H100 / HGX H100 clusters (8 x ConnectX-7 per 8 GPUs)" },
	{ "H200 SXM", 400, "assumed: one 400 Gb/s NDR NIC per GPU, as in DGX H200 / HGX H200 clusters (8 x ConnectX-7 per 8 GPUs; Azure ND H200 v5: 8 x 400 Gb/s)" },
	{ "B200", 400, "assumed: one 400 Gb/s NIC per GPU, as in DGX B200 clusters (8 x ConnectX-7 per 8 GPUs)" },
	{ "A100 SXM 80GB", 200, "assumed: one 200 Gb/s HDR NIC per GPU, as in NVIDIA DGX A100 clusters (8 x ConnectX-6 per 8 GPUs)" },
	{ "A100 SXM 40GB", 200, "assumed: one 200 Gb/s HDR NIC per GPU, as in NVIDIA DGX A100 clusters (8 x ConnectX-6 per 8 GPUs)" },
};

static void fill_from_datasheet(struct hr_sku_expect *x, const struct ch_datasheet *ds,
				double mf, double cf)
{
	int d;
	x->memory_gbps = ds->memory_gbps * mf;
	for (d = 0; d < CH_NDTYPES; d++) {
		double cc = ch_datasheet_cuda_core_gflops(ds, (enum ch_dtype)d);
		x->compute_gflops[d] = ds->gflops[d] > 0 ? ds->gflops[d] * cf : NAN;
		x->cuda_core_gflops[d] = cc > 0 ? cc * cf : NAN;
	}
}

/* Built-in figures of one datasheet SKU and their source text. */
static void apply_builtin(struct hr_sku_expect *x, const struct ch_datasheet *ds,
			  double mf, double cf)
{
	size_t k;
	fill_from_datasheet(x, ds, mf, cf);
	snprintf(x->source, sizeof(x->source),
		 "datasheet x %.2f (memory) and x %.2f (compute): %s", mf, cf, ds->source);
	for (k = 0; k < sizeof(intra_ref) / sizeof(intra_ref[0]); k++)
		if (!strcmp(intra_ref[k].sku, ds->sku)) {
			size_t l = strlen(x->source);
			x->intra_busbw_gbps = intra_ref[k].gbps;
			x->intra_nvls_busbw_gbps = intra_ref[k].nvls_gbps;
			x->intra_nranks = intra_ref[k].nranks;
			snprintf(x->intra_source, sizeof(x->intra_source), "%s", intra_ref[k].source);
			snprintf(x->source + l, sizeof(x->source) - l, "; intra-node: %s",
				 intra_ref[k].source);
		}
	for (k = 0; k < sizeof(cluster_ref) / sizeof(cluster_ref[0]); k++)
		if (!strcmp(cluster_ref[k].sku, ds->sku)) {
			x->cluster_nic_gbps_per_gpu = cluster_ref[k].nic_gbps;
			snprintf(x->cluster_source, sizeof(x->cluster_source), "%s", cluster_ref[k].source);
		}
}

static void blank(struct hr_sku_expect *x)
{
	int d;
	memset(x, 0, sizeof(*x));
	x->memory_gbps = x->intra_busbw_gbps = x->inter_busbw_gbps = NAN;
	x->intra_nvls_busbw_gbps = x->cluster_nic_gbps_per_gpu = NAN;
	for (d = 0; d < CH_NDTYPES; d++)
		x->compute_gflops[d] = x->cuda_core_gflops[d] = NAN;
}

int hr_expect_init(struct hr_expect *e)
{
	int n, i;
	const struct ch_datasheet *t = ch_datasheet_table(&n);

	memset(e, 0, sizeof(*e));
	/* the defaults are the rules' parameters (hr_rules.c): the expectation's
	 * fractions and the absolute and fleet thresholds of memory_low, the
	 * PCIe class of nvlink_degraded */
	e->memory_fraction = hr_rule_param("memory_low", "memory_fraction");
	e->compute_fraction = hr_rule_param("memory_low", "compute_fraction");
	e->th.warn_ratio = hr_rule_param("memory_low", "warn_ratio");
	e->th.fail_ratio = hr_rule_param("memory_low", "fail_ratio");
	e->th.z_outlier = hr_rule_param("memory_low", "z_outlier");
	e->th.warn_pct_below = hr_rule_param("memory_low", "warn_pct_below");
	e->th.fail_pct_below = hr_rule_param("memory_low", "fail_pct_below");
	e->th.mad_floor_frac = hr_rule_param("memory_low", "mad_floor_frac");
	e->th.min_fleet = (int)hr_rule_param("memory_low", "min_fleet");
	e->th.pcie_class_gbps = hr_rule_param("nvlink_degraded", "pcie_class_gbps");
	e->th.false_alarm = hr_rule_param("memory_low", "false_alarm");
	e->th.fail_false_alarm = hr_rule_param("memory_low", "fail_false_alarm");
	e->skus = calloc((size_t)n, sizeof(*e->skus));
	if (!e->skus)
		return CH_ERR_RUNTIME;
	e->nskus = (size_t)n;
	for (i = 0; i < n; i++) {
		struct hr_sku_expect *x = &e->skus[i];
		blank(x);
		snprintf(x->sku, sizeof(x->sku), "%s", t[i].sku);
		apply_builtin(x, &t[i], e->memory_fraction, e->compute_fraction);
	}
	return 0;
}

static const struct ch_datasheet *ds_by_sku(const char *sku)
{
	int n, i;
	const struct ch_datasheet *t = ch_datasheet_table(&n);
	for (i = 0; i < n; i++)
		if (!strcmp(t[i].sku, sku))
			return &t[i];
	return NULL;
}

static int positive(const char *path, const char *where, const json_t *v, double *out)
{
	if (!json_is_number(v) || !(json_number_value(v) > 0) || !isfinite(json_number_value(v)))
		return ch_usage_error("expectations file '%s': '%s' must be a positive number", path, where);
	*out = json_number_value(v);
	return 0;
}

static int check_keys(const char *path, const char *where, const json_t *o,
		      const char *const *allowed)
{
	const char *k;
	json_t *v;
	json_object_foreach((json_t *)o, k, v) {
		int i, ok = 0;
		for (i = 0; allowed[i]; i++)
			if (!strcmp(k, allowed[i]))
				ok = 1;
		if (!ok)
			return ch_usage_error("expectations file '%s': unknown key '%s%s%s'", path,
					      where, *where ? "." : "", k);
	}
	return 0;
}

/* The file's "schema" and "schema_version", when given. */
static int load_schema(const char *path, const json_t *doc)
{
	const json_t *v = json_object_get(doc, "schema");
	if (v && (!json_is_string(v) || strcmp(json_string_value(v), "clusterhealth.expectations")))
		return ch_usage_error("expectations file '%s': schema must be 'clusterhealth.expectations'", path);
	v = json_object_get(doc, "schema_version");
	if (v && (!json_is_integer(v) || json_integer_value(v) != 1))
		return ch_usage_error("expectations file '%s': schema_version must be 1", path);
	return 0;
}

/* "attainable_fraction": {memory, compute}, each in (0, 1]. */
static int load_fractions(struct hr_expect *e, const char *path, const json_t *o)
{
	static const char *const frac_keys[] = { "memory", "compute", NULL };
	const json_t *v;
	int rc;
	if (!o)
		return 0;
	if (!json_is_object(o))
		return ch_usage_error("expectations file '%s': 'attainable_fraction' must be an object", path);
	if ((rc = check_keys(path, "attainable_fraction", o, frac_keys)))
		return rc;
	if ((v = json_object_get(o, "memory")) &&
	    (rc = positive(path, "attainable_fraction.memory", v, &e->memory_fraction)))
		return rc;
	if ((v = json_object_get(o, "compute")) &&
	    (rc = positive(path, "attainable_fraction.compute", v, &e->compute_fraction)))
		return rc;
	if (e->memory_fraction > 1 || e->compute_fraction > 1)
		return ch_usage_error("expectations file '%s': attainable fractions must be at most 1", path);
	return 0;
}

/* "thresholds": each a positive number; fail <= warn <= 1. */
static int load_thresholds(struct hr_expect *e, const char *path, const json_t *o)
{
	static const char *const th_keys[] = { "warn_ratio", "fail_ratio", "z_outlier",
		"warn_pct_below", "fail_pct_below", "mad_floor_frac", "min_fleet",
		"pcie_class_gbps", "false_alarm_per_node", "fail_false_alarm_per_node", NULL };
	const char *k;
	json_t *v;
	int rc, fail_given = 0;
	if (!o)
		return 0;
	if (!json_is_object(o))
		return ch_usage_error("expectations file '%s': 'thresholds' must be an object", path);
	if ((rc = check_keys(path, "thresholds", o, th_keys)))
		return rc;
	json_object_foreach((json_t *)o, k, v) {
		char w[64];
		double x;
		snprintf(w, sizeof(w), "thresholds.%s", k);
		if ((rc = positive(path, w, v, &x)))
			return rc;
		if (!strcmp(k, "warn_ratio")) e->th.warn_ratio = x;
		else if (!strcmp(k, "fail_ratio")) e->th.fail_ratio = x;
		else if (!strcmp(k, "z_outlier")) e->th.z_outlier = x;
		else if (!strcmp(k, "warn_pct_below")) e->th.warn_pct_below = x;
		else if (!strcmp(k, "fail_pct_below")) e->th.fail_pct_below = x;
		else if (!strcmp(k, "mad_floor_frac")) e->th.mad_floor_frac = x;
		else if (!strcmp(k, "min_fleet")) e->th.min_fleet = x < 2 ? 2 : (int)x;
		else if (!strcmp(k, "pcie_class_gbps")) e->th.pcie_class_gbps = x;
		else if (!strcmp(k, "false_alarm_per_node")) e->th.false_alarm = x;
		else if (!strcmp(k, "fail_false_alarm_per_node")) e->th.fail_false_alarm = x, fail_given = 1;
	}
	if (!(e->th.false_alarm < 0.5))
		return ch_usage_error("expectations file '%s': thresholds.false_alarm_per_node must be below 0.5 (a probability per node and night)", path);
	/* below 1e-12 a node's share (the budget over its comparisons) nears
	 * the doubles' underflow, and the cut-offs mean nothing */
	if (!(e->th.false_alarm >= 1e-12) || !(e->th.fail_false_alarm >= 1e-12))
		return ch_usage_error("expectations file '%s': thresholds.%s %g is below 1e-12 (a probability per node and night)", path,
				      e->th.false_alarm >= 1e-12 ? "fail_false_alarm_per_node" : "false_alarm_per_node",
				      e->th.false_alarm >= 1e-12 ? e->th.fail_false_alarm : e->th.false_alarm);
	/* a FAIL's budget is within the flags': the default one follows a
	 * stricter flag budget given alone */
	if (!fail_given && e->th.fail_false_alarm > e->th.false_alarm)
		e->th.fail_false_alarm = e->th.false_alarm;
	if (!(e->th.fail_false_alarm <= e->th.false_alarm))
		return ch_usage_error("expectations file '%s': need fail_false_alarm_per_node (%g) <= false_alarm_per_node (%g): a FAIL's budget within the flags'", path,
				      e->th.fail_false_alarm, e->th.false_alarm);
	if (e->th.fail_ratio > e->th.warn_ratio || e->th.warn_ratio > 1)
		return ch_usage_error("expectations file '%s': need fail_ratio <= warn_ratio <= 1", path);
	if (e->th.fail_pct_below < e->th.warn_pct_below)
		return ch_usage_error("expectations file '%s': need warn_pct_below <= fail_pct_below", path);
	return 0;
}

/* A {dtype: positive GFLOP/s} object of SKU @k at @key into @out. */
static int load_dtype_map(const char *path, const char *k, const char *key, const json_t *cg,
			  double out[CH_NDTYPES])
{
	const char *dt;
	json_t *dv;
	char w[128];
	int rc;
	if (!cg)
		return 0;
	if (!json_is_object(cg))
		return ch_usage_error("expectations file '%s': 'skus.%s.%s' must be an object", path, k, key);
	json_object_foreach((json_t *)cg, dt, dv) {
		int di = ch_dtype_parse(dt);
		snprintf(w, sizeof(w), "skus.%s.%s.%s", k, key, dt);
		if (di < 0)
			return ch_usage_error("expectations file '%s': unknown dtype '%s' (expected fp64, fp32, tf32, bf16, fp16, fp8)", path, w);
		if ((rc = positive(path, w, dv, &out[di])))
			return rc;
	}
	return 0;
}

/* The positive number at @key of SKU @k's object @v into @out, when given. */
static int load_sku_num(const char *path, const char *k, const json_t *v, const char *key, double *out)
{
	char w[128];
	if (!json_object_get(v, key))
		return 0;
	snprintf(w, sizeof(w), "skus.%s.%s", k, key);
	return positive(path, w, json_object_get(v, key), out);
}

/* One entry of "skus": a datasheet SKU's figures replaced, or a new SKU
 * (which needs a "match" string). */
static int load_sku(struct hr_expect *e, const char *path, const char *k, const json_t *v)
{
	static const char *const sku_keys[] = { "memory_gbps", "compute_gflops", "cuda_core_gflops",
		"intra_node_busbw_gbps", "intra_node_nranks", "inter_node_busbw_gbps", "match",
		"source", NULL };
	struct hr_sku_expect *x = NULL;
	const json_t *m;
	double nr = 0;
	char w[128];
	size_t i;
	int rc;

	for (i = 0; i < e->nskus; i++)
		if (!strcmp(e->skus[i].sku, k))
			x = &e->skus[i];
	snprintf(w, sizeof(w), "skus.%s", k);
	if (!json_is_object(v))
		return ch_usage_error("expectations file '%s': '%s' must be an object", path, w);
	if ((rc = check_keys(path, w, v, sku_keys)))
		return rc;
	m = json_object_get(v, "match");
	if (!x) {
		struct hr_sku_expect *nv;
		if (!json_is_string(m) || !*json_string_value(m))
			return ch_usage_error("expectations file '%s': SKU '%s' is not in the datasheet table; give it a \"match\" string (part of the device name)", path, k);
		nv = realloc(e->skus, (e->nskus + 1) * sizeof(*nv));
		if (!nv)
			return CH_ERR_RUNTIME;
		e->skus = nv;
		x = &e->skus[e->nskus++];
		blank(x);
		snprintf(x->sku, sizeof(x->sku), "%s", k);
	}
	if (json_is_string(m))
		snprintf(x->match, sizeof(x->match), "%s", json_string_value(m));
	snprintf(x->source, sizeof(x->source), "%s (from '%s')",
		 json_is_string(json_object_get(v, "source")) ?
		 json_string_value(json_object_get(v, "source")) : "given", path);
	if ((rc = load_sku_num(path, k, v, "memory_gbps", &x->memory_gbps)) ||
	    (rc = load_sku_num(path, k, v, "intra_node_busbw_gbps", &x->intra_busbw_gbps)) ||
	    (rc = load_sku_num(path, k, v, "intra_node_nranks", &nr)) ||
	    (rc = load_sku_num(path, k, v, "inter_node_busbw_gbps", &x->inter_busbw_gbps)) ||
	    (rc = load_dtype_map(path, k, "compute_gflops", json_object_get(v, "compute_gflops"), x->compute_gflops)) ||
	    (rc = load_dtype_map(path, k, "cuda_core_gflops", json_object_get(v, "cuda_core_gflops"), x->cuda_core_gflops)))
		return rc;
	if (json_object_get(v, "intra_node_busbw_gbps")) {
		x->intra_nvls_busbw_gbps = x->intra_busbw_gbps;
		snprintf(x->intra_source, sizeof(x->intra_source), "%s", x->source);
	}
	if (nr > 0)
		x->intra_nranks = (int)nr;
	return 0;
}

int hr_expect_load_file(struct hr_expect *e, const char *path)
{
	static const char *const top_keys[] = { "schema", "schema_version", "attainable_fraction",
		"thresholds", "skus", "comment", NULL };
	json_error_t je;
	json_t *doc, *o, *v;
	const char *k;
	char *text = NULL, err[256];
	size_t len = 0, i;
	int rc = 0;

	/* only a regular file is opened: a named pipe or device never blocks */
	if (hr_read_file(path, 16u << 20, &text, &len, err, sizeof(err)))
		return ch_usage_error("cannot read expectations file '%s': %s", path, err);
	doc = json_loadb(text, len, 0, &je);
	free(text);
	if (!doc)
		return ch_usage_error("expectations file '%s': %s%s (line %d, column %d)", path,
				      je.text, "", je.line, je.column);
	if (!json_is_object(doc)) {
		rc = ch_usage_error("expectations file '%s': not a JSON object", path);
		goto out;
	}
	if ((rc = check_keys(path, "", doc, top_keys)) || (rc = load_schema(path, doc)) ||
	    (rc = load_fractions(e, path, json_object_get(doc, "attainable_fraction"))) ||
	    (rc = load_thresholds(e, path, json_object_get(doc, "thresholds"))))
		goto out;
	/* re-apply the fractions to the built-ins */
	for (i = 0; i < e->nskus; i++) {
		const struct ch_datasheet *ds = ds_by_sku(e->skus[i].sku);
		if (ds)
			apply_builtin(&e->skus[i], ds, e->memory_fraction, e->compute_fraction);
	}
	o = json_object_get(doc, "skus");
	if (o && !json_is_object(o)) {
		rc = ch_usage_error("expectations file '%s': 'skus' must be an object", path);
		goto out;
	}
	json_object_foreach(o, k, v)
		if ((rc = load_sku(e, path, k, v)))
			goto out;
	e->file = strdup(path);
	if (!e->file)
		rc = CH_ERR_RUNTIME;
out:
	json_decref(doc);
	return rc;
}

const struct hr_sku_expect *hr_expect_for(const struct hr_expect *e, const char *sku,
					  const char *name)
{
	size_t i;
	for (i = 0; sku && i < e->nskus; i++)
		if (!strcmp(e->skus[i].sku, sku))
			return &e->skus[i];
	for (i = 0; name && i < e->nskus; i++)
		if (e->skus[i].match[0] && strstr(name, e->skus[i].match))
			return &e->skus[i];
	return NULL;
}

static json_t *num_or_null(double v)
{
	return isnan(v) ? json_null() : json_real(v);
}

json_t *hr_expect_profile(const struct hr_expect *e)
{
	json_t *o = json_object(), *th = json_object(), *arr = json_array();
	size_t i;
	int d;
	if (!o || !th || !arr) {
		json_decref(o);
		json_decref(th);
		json_decref(arr);
		return NULL;
	}
	json_object_set_new(o, "file", e->file ? json_string(e->file) : json_null());
	json_object_set_new(o, "memory_fraction", json_real(e->memory_fraction));
	json_object_set_new(o, "compute_fraction", json_real(e->compute_fraction));
	json_object_set_new(th, "warn_ratio", json_real(e->th.warn_ratio));
	json_object_set_new(th, "fail_ratio", json_real(e->th.fail_ratio));
	json_object_set_new(th, "z_outlier", json_real(e->th.z_outlier));
	json_object_set_new(th, "warn_pct_below", json_real(e->th.warn_pct_below));
	json_object_set_new(th, "fail_pct_below", json_real(e->th.fail_pct_below));
	json_object_set_new(th, "mad_floor_frac", json_real(e->th.mad_floor_frac));
	json_object_set_new(th, "min_fleet", json_integer(e->th.min_fleet));
	json_object_set_new(th, "pcie_class_gbps", json_real(e->th.pcie_class_gbps));
	json_object_set_new(th, "false_alarm_per_node", json_real(e->th.false_alarm));
	json_object_set_new(th, "fail_false_alarm_per_node", json_real(e->th.fail_false_alarm));
	json_object_set_new(th, "nic_efficiency", json_real(hr_rule_param("inter_node_busbw_low", "nic_efficiency")));
	json_object_set_new(th, "curve_dip", json_real(hr_rule_param("curve_dip", "dip")));
	json_object_set_new(th, "curve_gap", json_real(hr_rule_param("curve_gap", "gap")));
	json_object_set_new(th, "curve_collapse_span", json_real(hr_rule_param("curve_collapse", "span")));
	json_object_set_new(th, "curve_collapse_rise", json_real(1 + hr_rule_param("curve_collapse", "rise")));
	json_object_set_new(th, "curve_latency_floor", json_real(hr_rule_param("curve_dip", "latency")));
	json_object_set_new(th, "curve_alternation_step", json_real(hr_rule_param("curve_alternation", "step")));
	json_object_set_new(o, "thresholds", th);
	for (i = 0; i < e->nskus; i++) {
		const struct hr_sku_expect *x = &e->skus[i];
		json_t *s = json_object(), *cg = json_object(), *cc = json_object();
		json_object_set_new(s, "sku", json_string(x->sku));
		if (x->match[0])
			json_object_set_new(s, "match", json_string(x->match));
		json_object_set_new(s, "memory_gbps", num_or_null(x->memory_gbps));
		for (d = 0; d < CH_NDTYPES; d++) {
			if (!isnan(x->compute_gflops[d]))
				json_object_set_new(cg, ch_dtype_name(d), json_real(x->compute_gflops[d]));
			if (!isnan(x->cuda_core_gflops[d]))
				json_object_set_new(cc, ch_dtype_name(d), json_real(x->cuda_core_gflops[d]));
		}
		json_object_set_new(s, "compute_gflops", cg);
		json_object_set_new(s, "cuda_core_gflops", cc);
		json_object_set_new(s, "intra_node_busbw_gbps", num_or_null(x->intra_busbw_gbps));
		json_object_set_new(s, "intra_node_nranks", json_integer(x->intra_nranks));
		json_object_set_new(s, "intra_node_nvls_busbw_gbps", num_or_null(x->intra_nvls_busbw_gbps));
		json_object_set_new(s, "inter_node_busbw_gbps", num_or_null(x->inter_busbw_gbps));
		json_object_set_new(s, "cluster_nic_gbps_per_gpu", num_or_null(x->cluster_nic_gbps_per_gpu));
		json_object_set_new(s, "cluster_source", x->cluster_source[0] ? json_string(x->cluster_source) : json_null());
		json_object_set_new(s, "source", json_string(x->source));
		json_array_append_new(arr, s);
	}
	json_object_set_new(o, "skus", arr);
	return o;
}

void hr_expect_release(struct hr_expect *e)
{
	free(e->skus);
	free(e->file);
	memset(e, 0, sizeof(*e));
}
