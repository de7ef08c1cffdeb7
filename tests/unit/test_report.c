/*
 * health_report's verdicts, profile and outputs on the synthetic fleets of
 * tests/data/report (make-fleet.py): a healthy fleet flags nothing; the
 * faulty fleet flags exactly its one degraded GPU, one slow node pair and
 * one contended loader, with the right reasons; variations of the healthy
 * fleet (made in memory) exercise the other rules.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/ch_common.h"
#include "report/judge/hr_analyze.h"
#include "report/judge/hr_cost.h"
#include "report/judge/hr_expect.h"
#include "report/read/hr_input.h"
#include "report/read/hr_model.h"
#include "report/render/hr_plot.h"
#include "report/render/hr_render.h"
#include "report/hr_util.h"

#define DATA "tests/data/report/"

typedef void (*mutator)(const char *path, json_t *doc);

static void load_dir(struct hr_fleet *f, const char *dir, mutator mut)
{
	struct hr_file_list files;
	char *args[1] = { (char *)dir };
	size_t i;
	memset(f, 0, sizeof(*f));
	cr_assert_eq(hr_collect_inputs(args, 1, NULL, &files, &f->issues), 0);
	cr_assert_gt(files.n, 0, "no files under %s", dir);
	for (i = 0; i < files.n; i++) {
		if (mut) {
			json_error_t je;
			json_t *doc = json_load_file(files.paths[i], 0, &je);
			cr_assert(doc, "%s: %s", files.paths[i], je.text);
			mut(files.paths[i], doc);
			cr_assert_eq(hr_fleet_load_json(f, files.paths[i], doc, files.named[i]), 0);
			json_decref(doc);
		} else {
			cr_assert_eq(hr_fleet_load_file(f, files.paths[i], files.named[i]), 0);
		}
	}
	hr_file_list_release(&files);
}

static json_t *analyze(const struct hr_fleet *f, struct hr_expect *ex)
{
	struct hr_cost_params cp;
	struct hr_analyze_opts o;
	struct hr_expect local;
	json_t *p;
	hr_cost_defaults(&cp);
	if (!ex) {
		cr_assert_eq(hr_expect_init(&local), 0);
		ex = &local;
	}
	memset(&o, 0, sizeof(o));
	o.expect = ex;
	o.cost = &cp;
	o.generated_utc = "2025-06-01T03:00:00Z";
	o.input_files = 13;
	p = hr_analyze(f, &o);
	cr_assert(p);
	if (ex == &local)
		hr_expect_release(&local);
	return p;
}

static const json_t *node(const json_t *p, const char *name)
{
	const json_t *n;
	size_t i;
	json_array_foreach(json_object_get(p, "nodes"), i, n)
		if (!strcmp(hr_jstr(n, "name"), name))
			return n;
	cr_assert_fail("node '%s' not in the profile", name);
	return NULL;
}

static const char *verdict(const json_t *p, const char *name)
{
	return hr_jstr(node(p, name), "verdict");
}

/* The node's reasons of level warn or fail; *n_out of them; the first. */
static const json_t *flagged(const json_t *p, const char *name, size_t *n_out)
{
	const json_t *r, *first = NULL;
	size_t i, n = 0;
	json_array_foreach(json_object_get(node(p, name), "reasons"), i, r)
		if (strcmp(hr_jstr(r, "level"), "info")) {
			if (!first)
				first = r;
			n++;
		}
	*n_out = n;
	return first;
}

static const char *const NODES[] = { "node01", "node02", "node03", "node04", "node05", "node06" };

Test(report, healthy_fleet_flags_nothing)
{
	struct hr_fleet f;
	json_t *p;
	size_t i, n;
	load_dir(&f, DATA "fleet-healthy", NULL);
	cr_expect_eq(f.nnodes, 6);
	cr_expect_eq(f.ndevices, 54);
	cr_expect_eq(f.ngroups, 13);
	cr_expect_eq(f.issues.n, 0);
	p = analyze(&f, NULL);
	for (i = 0; i < 6; i++) {
		const json_t *r = flagged(p, NODES[i], &n);
		cr_expect_str_eq(verdict(p, NODES[i]), "PASS", "%s: %s", NODES[i], r ? hr_jstr(r, "text") : "");
		cr_expect_eq(n, 0);
	}
	cr_expect_eq(hr_jint(p, "exit_code", -1), 0);
	cr_expect_eq(json_array_size(json_object_get(p, "findings")), 0);
	cr_expect_eq(json_array_size(json_object_get(p, "drift")), 0);
	cr_expect_eq(json_array_size(json_object_get(json_object_get(p, "summary"), "drain_candidates")), 0);
	json_decref(p);
	hr_fleet_release(&f);
}

Test(report, faulty_fleet_flags_exactly_its_three_faults)
{
	struct hr_fleet f;
	json_t *p;
	const json_t *r, *drain, *d, *m;
	size_t n, i, k;
	load_dir(&f, DATA "fleet-faulty", NULL);
	p = analyze(&f, NULL);

	/* the degraded GPU: node02 gpu3, bf16 18% low under a power cap */
	cr_expect_str_eq(verdict(p, "node02"), "FAIL");
	r = flagged(p, "node02", &n);
	cr_assert_eq(n, 1, "node02: %zu reasons", n);
	cr_expect_str_eq(hr_jstr(r, "code"), "compute_low");
	cr_expect_str_eq(hr_jstr(r, "subject"), "gpu3");
	cr_expect(strstr(hr_jstr(r, "text"), "bf16 compute roof"), "%s", hr_jstr(r, "text"));
	cr_expect(strstr(hr_jstr(r, "text"), "18% below the fleet median"), "%s", hr_jstr(r, "text"));
	cr_expect(strstr(hr_jstr(r, "text"), "also low: fp16"), "%s", hr_jstr(r, "text"));
	cr_expect(strstr(hr_jstr(r, "action"), "check power and cooling"));
	cr_expect(strstr(hr_jstr(r, "action"), "sw_power_cap"));
	json_array_foreach(json_object_get(node(p, "node02"), "devices"), i, d)
		json_array_foreach(json_object_get(d, "metrics"), k, m) {
			int bad = !strcmp(hr_jstr(d, "device"), "gpu3") &&
				  (!strcmp(hr_jstr(m, "metric"), "compute_gflops.bf16") ||
				   !strcmp(hr_jstr(m, "metric"), "compute_gflops.fp16"));
			cr_expect_str_eq(hr_jstr(m, "level"), bad ? "fail" : "info", "%s %s",
					 hr_jstr(d, "device"), hr_jstr(m, "metric"));
			if (bad && !strcmp(hr_jstr(m, "metric"), "compute_gflops.bf16")) {
				cr_expect_float_eq(hr_jnum(m, "pct_of_fleet_median"), 82.0, 1.0);
				cr_expect_float_eq(hr_jnum(m, "pct_of_datasheet"), 100 * 647800.0 / 989500, 1e-6);
				cr_expect_float_eq(hr_jnum(m, "expected"), 989500 * 0.80, 1e-6);
				cr_expect_lt(hr_jnum(m, "z"), -3.5);
			}
		}

	/* the slow node pair: pair3-4 = node04 + node05, 63% of the 368 GB/s
	 * the assumed 8 x 400 Gb/s per node allow; 35% below its 5 like pairs,
	 * which are too few to make that improbable at the node's cut-off: a
	 * verdict on an assumed reference alone, at most WARN, asking for the
	 * NIC inventory */
	for (i = 3; i <= 4; i++) {
		const json_t *bw = json_array_get(json_object_get(node(p, NODES[i]), "busbw"), 0);
		cr_expect_str_eq(verdict(p, NODES[i]), "WARN");
		r = flagged(p, NODES[i], &n);
		cr_assert_eq(n, 1, "%s: %zu reasons", NODES[i], n);
		cr_expect_str_eq(hr_jstr(r, "code"), "inter_node_busbw_low");
		cr_expect_str_eq(hr_jstr(r, "subject"), "pair3-4");
		cr_expect(strstr(hr_jstr(r, "text"), "63% of the expected 368 GB/s (assumed cluster reference; WARN below 90%, FAIL below 75%"),
			  "%s", hr_jstr(r, "text"));
		cr_expect(strstr(hr_jstr(r, "text"), "an assumed reference alone: at most WARN"), "%s", hr_jstr(r, "text"));
		cr_expect(strstr(hr_jstr(r, "action"), "record the NIC inventory"), "%s", hr_jstr(r, "action"));
		cr_expect(strstr(hr_jstr(r, "action"), "NCCL_IB_HCA"), "%s", hr_jstr(r, "action"));
		cr_expect(!json_is_true(json_object_get(r, "drain")));
		(void)bw;
	}
	json_array_foreach(json_object_get(p, "groups"), i, d)
		if (!strcmp(hr_jstr(d, "name"), "pair3-4")) {
			m = json_object_get(d, "comparison");
			cr_expect_float_eq(hr_jnum(m, "pct_of_fleet_median"), 65.0, 1.0);
			cr_expect_lt(hr_jnum(m, "z"), -20); /* far out, yet ... */
			cr_expect_gt(hr_jnum(m, "cut_off"), -hr_jnum(m, "z")); /* ... 6 like pairs cannot make it improbable */
			cr_expect_str_eq(hr_jstr(m, "level"), "warn");
		}

	/* the contended loader: node06, late unless workers are moved off the
	 * feeder cores (the recommended placement passes) */
	cr_expect_str_eq(verdict(p, "node06"), "WARN");
	r = flagged(p, "node06", &n);
	cr_assert_eq(n, 1);
	cr_expect_str_eq(hr_jstr(r, "code"), "loader_contention");
	cr_expect(strstr(hr_jstr(r, "text"), "feeders are late under the inherited placement"), "%s", hr_jstr(r, "text"));
	cr_expect(strstr(hr_jstr(r, "text"), "input wait 27.0% of the step"), "%s", hr_jstr(r, "text"));
	cr_expect(strstr(hr_jstr(r, "text"), "likewise with workers on the feeder cores (shared-w4"), "%s", hr_jstr(r, "text"));
	cr_expect(strstr(hr_jstr(r, "text"), "the recommended placement passes: isolated-w4"), "%s", hr_jstr(r, "text"));
	cr_expect(strstr(hr_jstr(r, "text"), "(a placement to change, not a fault of the node: WARN, whatever the figures' levels)"),
		  "%s", hr_jstr(r, "text"));
	cr_expect(strstr(hr_jstr(r, "action"), "move workers off the feeder cores"));
	cr_expect(strstr(hr_jstr(r, "action"), "numactl --physcpubind=8-15"));

	/* and nothing else */
	cr_expect_str_eq(verdict(p, "node01"), "PASS");
	cr_expect_str_eq(verdict(p, "node03"), "PASS");
	cr_expect_eq(json_array_size(json_object_get(p, "findings")), 0);
	/* node02's FAIL rests on one run that nothing re-measured: not a
	 * drain candidate (no hard fault, not confirmed) */
	drain = json_object_get(json_object_get(p, "summary"), "drain_candidates");
	cr_expect_eq(json_array_size(drain), 0);
	r = flagged(p, "node02", &n);
	cr_expect(strstr(hr_jstr(r, "text"), "FAIL not confirmed (no re-measurement, earlier run or persisting history agrees): re-run before draining"), "%s", hr_jstr(r, "text"));
	cr_expect(strstr(hr_jstr(r, "text"), "not confirmed (no re-measurement in the input): this comparison at most WARN"), "%s", hr_jstr(r, "text"));
	cr_expect_eq(hr_jint(p, "exit_code", -1), 1);
	/* worst first */
	cr_expect_str_eq(hr_jstr(json_array_get(json_object_get(p, "nodes"), 0), "verdict"), "FAIL");
	cr_expect_str_eq(hr_jstr(json_array_get(json_object_get(p, "nodes"), 5), "verdict"), "PASS");
	json_decref(p);
	hr_fleet_release(&f);
}

/* ---------------------------------------------------------------- variants */

static void scale_sweep(json_t *sw, double k)
{
	json_t *row;
	size_t i;
	json_object_set_new(sw, "large_msg_busbw_gbps",
			    json_real(hr_jnum(sw, "large_msg_busbw_gbps") * k));
	json_array_foreach(json_object_get(sw, "rows"), i, row) {
		json_t *o = json_object_get(row, "out_of_place"), *ip = json_object_get(row, "in_place");
		json_object_set_new(o, "busbw_gbps", json_real(hr_jnum(o, "busbw_gbps") * k));
		json_object_set_new(ip, "busbw_gbps", json_real(hr_jnum(ip, "busbw_gbps") * k));
	}
}

static json_t *sweep_named(json_t *doc, const char *name)
{
	json_t *sw;
	size_t i;
	json_array_foreach(json_object_get(json_object_get(doc, "results"), "sweeps"), i, sw)
		if (!strcmp(hr_jstr(sw, "group_name"), name))
			return sw;
	return NULL;
}

static void two_slow_pairs(const char *path, json_t *doc)
{
	(void)path;
	if (strcmp(hr_jstr(doc, "tool"), "allreduce_bw"))
		return;
	scale_sweep(sweep_named(doc, "pair1-2"), 0.6);
	scale_sweep(sweep_named(doc, "pair2-3"), 0.62);
}

/* every node's files with 8 active 400 Gb/s RDMA ports in host.inventory */
static void with_nics(json_t *doc)
{
	json_t *nics = json_array(), *inv;
	int k;
	for (k = 0; k < 8; k++)
		json_array_append_new(nics, json_pack("{s:s, s:i, s:s, s:s, s:f, s:s, s:o}", "device", k < 4 ? "mlx5_0" : "mlx5_1",
						      "port", k + 1, "kind", "rdma", "state", "ACTIVE", "rate_gbps", 400.0,
						      "link_layer", "InfiniBand", "reasons", json_object()));
	inv = json_pack("{s:[], s:o, s:o}", "gpus", "nics", nics, "reasons", json_object());
	json_object_set_new(json_object_get(doc, "host"), "inventory", inv);
}

static void two_slow_pairs_nics(const char *path, json_t *doc)
{
	two_slow_pairs(path, doc);
	with_nics(doc);
}

Test(report, node_common_to_two_slow_pairs_is_the_suspect)
{
	struct hr_fleet f;
	json_t *p;
	const json_t *r, *drain;
	size_t n, i;
	int pass;
	/* judged against an assumed reference only (no NIC inventory, too few
	 * like pairs to make it improbable): WARN, asking for the inventory;
	 * against the NICs the nodes recorded: FAIL, confirmed by the two pairs
	 * that share the node, a drain candidate */
	for (pass = 0; pass < 2; pass++) {
		load_dir(&f, DATA "fleet-healthy", pass ? two_slow_pairs_nics : two_slow_pairs);
		p = analyze(&f, NULL);
		cr_expect_str_eq(verdict(p, "node03"), pass ? "FAIL" : "WARN");
		r = flagged(p, "node03", &n);
		cr_assert_eq(n, 1);
		cr_expect_str_eq(hr_jstr(r, "code"), "inter_node_link");
		cr_expect(strstr(hr_jstr(r, "text"), "common to 2 slow node pairs: "), "%s", hr_jstr(r, "text"));
		cr_expect(strstr(hr_jstr(r, "text"), "pair1-2 ("), "%s", hr_jstr(r, "text"));
		cr_expect(strstr(hr_jstr(r, "text"), "pair2-3 ("), "%s", hr_jstr(r, "text"));
		cr_expect(strstr(hr_jstr(r, "text"), pass ? "confirmed by two pairs that share the node" :
							     "judged against an assumed reference only"), "%s", hr_jstr(r, "text"));
		cr_expect(strstr(hr_jstr(r, "action"), pass ? "then drain" : "record the NIC inventory"), "%s",
			  hr_jstr(r, "action"));
		drain = json_object_get(json_object_get(p, "summary"), "drain_candidates");
		cr_expect_eq(json_array_size(drain), (size_t)pass);
		if (pass)
			cr_expect_str_eq(json_string_value(json_array_get(drain, 0)), "node03");
		/* its partners are explained by it */
		for (i = 0; i < 6; i++)
			if (strcmp(NODES[i], "node03"))
				cr_expect_str_eq(verdict(p, NODES[i]), "PASS", "%s", NODES[i]);
		json_decref(p);
		hr_fleet_release(&f);
	}
}

static void drift_node05(const char *path, json_t *doc)
{
	(void)path;
	if (strcmp(hr_jstr(json_object_get(doc, "host"), "hostname"), "node05"))
		return;
	json_object_set_new(json_object_get(doc, "software"), "nccl", json_string("2.18.3"));
}

Test(report, configuration_drift_is_listed_and_not_like_for_like)
{
	struct hr_fleet f;
	json_t *p;
	const json_t *r, *d;
	size_t n;
	load_dir(&f, DATA "fleet-healthy", drift_node05);
	p = analyze(&f, NULL);
	cr_expect_str_eq(verdict(p, "node05"), "WARN");
	r = flagged(p, "node05", &n);
	cr_assert_eq(n, 1);
	cr_expect_str_eq(hr_jstr(r, "code"), "config_drift");
	cr_expect(strstr(hr_jstr(r, "text"), "nccl '2.18.3' differs from the fleet's '2.21.5' (5 of 6 nodes)"),
		  "%s", hr_jstr(r, "text"));
	cr_expect(json_is_false(json_object_get(node(p, "node05"), "like_for_like")));
	cr_expect(json_is_true(json_object_get(node(p, "node01"), "like_for_like")));
	cr_assert_eq(json_array_size(json_object_get(p, "drift")), 1);
	d = json_array_get(json_object_get(p, "drift"), 0);
	cr_expect_str_eq(hr_jstr(d, "key"), "nccl");
	cr_expect_str_eq(hr_jstr(d, "majority"), "2.21.5");
	cr_expect_str_eq(hr_jstr(json_array_get(json_object_get(d, "nodes"), 0), "node"), "node05");
	cr_expect_str_eq(verdict(p, "node01"), "PASS");
	json_decref(p);
	hr_fleet_release(&f);
}

static void nvlink_node2(const char *path, json_t *doc)
{
	(void)path;
	if (strcmp(hr_jstr(doc, "tool"), "allreduce_bw"))
		return;
	scale_sweep(sweep_named(doc, "node2"), 40.0 / 362.0);
}

Test(report, pcie_class_busbw_on_nvlink_node_fails)
{
	struct hr_fleet f;
	json_t *p;
	const json_t *r;
	size_t n;
	load_dir(&f, DATA "fleet-healthy", nvlink_node2);
	p = analyze(&f, NULL);
	cr_expect_str_eq(verdict(p, "node03"), "FAIL");
	r = flagged(p, "node03", &n);
	cr_assert_eq(n, 1);
	cr_expect_str_eq(hr_jstr(r, "code"), "nvlink_degraded");
	cr_expect(strstr(hr_jstr(r, "text"), "PCIe-class"), "%s", hr_jstr(r, "text"));
	cr_expect(strstr(hr_jstr(r, "action"), "NVLink degraded"));
	json_decref(p);
	hr_fleet_release(&f);
}

static void wrong_in_node0(const char *path, json_t *doc)
{
	json_t *row;
	(void)path;
	if (strcmp(hr_jstr(doc, "tool"), "allreduce_bw"))
		return;
	row = json_array_get(json_object_get(sweep_named(doc, "node0"), "rows"), 2);
	json_object_set_new(json_object_get(row, "in_place"), "wrong", json_integer(7));
	json_object_set_new(doc, "status", json_string("failed"));
}

Test(report, wrong_elements_fail_the_node)
{
	struct hr_fleet f;
	json_t *p;
	const json_t *r;
	size_t n;
	load_dir(&f, DATA "fleet-healthy", wrong_in_node0);
	p = analyze(&f, NULL);
	cr_expect_str_eq(verdict(p, "node01"), "FAIL");
	r = flagged(p, "node01", &n);
	cr_assert_eq(n, 1, "%zu reasons, first %s", n, r ? hr_jstr(r, "text") : "");
	cr_expect_str_eq(hr_jstr(r, "code"), "wrong_results");
	cr_expect(strstr(hr_jstr(r, "text"), "7 wrong elements"));
	cr_expect_str_eq(verdict(p, "node02"), "PASS");
	json_decref(p);
	hr_fleet_release(&f);
}

static void loader_input_bound_node03(const char *path, json_t *doc)
{
	json_t *res, *c;
	size_t i;
	(void)path;
	if (strcmp(hr_jstr(doc, "tool"), "loader_contention") ||
	    strcmp(hr_jstr(json_object_get(doc, "host"), "hostname"), "node03"))
		return;
	res = json_object_get(doc, "results");
	json_object_set_new(res, "verdict", json_string("fail"));
	json_array_foreach(json_object_get(res, "configs"), i, c)
		if (!strcmp(hr_jstr(c, "name"), "isolated-w4")) {
			json_object_set_new(c, "input_wait_frac", json_real(0.31));
			json_object_set_new(c, "accel_util", json_real(0.66));
			json_object_set_new(c, "verdict", json_string("fail"));
		}
	json_object_set_new(json_object_get(res, "recommendation"), "verdict", json_string("fail"));
}

Test(report, loader_failing_even_when_isolated_fails_the_node)
{
	struct hr_fleet f;
	json_t *p;
	const json_t *r;
	size_t n;
	load_dir(&f, DATA "fleet-healthy", loader_input_bound_node03);
	p = analyze(&f, NULL);
	cr_expect_str_eq(verdict(p, "node03"), "FAIL");
	r = flagged(p, "node03", &n);
	cr_assert_eq(n, 1);
	cr_expect_str_eq(hr_jstr(r, "code"), "loader_input_bound");
	/* judged on its figures, with the margins */
	cr_expect(strstr(hr_jstr(r, "text"), "with the recommended placement: input wait 31.0% of the step (WARN from 5%, FAIL from 20%"),
		  "%s", hr_jstr(r, "text"));
	cr_expect(strstr(hr_jstr(r, "text"), "accelerator utilisation 66.0% (WARN below 90%, FAIL below 70%"), "%s", hr_jstr(r, "text"));
	cr_expect(strstr(hr_jstr(r, "action"), "cannot keep the GPUs fed"));
	cr_expect_str_eq(verdict(p, "node01"), "PASS");
	json_decref(p);
	hr_fleet_release(&f);
}

static void straggler_rank13(const char *path, json_t *doc)
{
	(void)path;
	if (strcmp(hr_jstr(doc, "tool"), "allreduce_bw"))
		return;
	json_array_append_new(json_object_get(json_object_get(doc, "results"), "stragglers"),
			      json_pack("{s:i, s:s, s:s, s:i, s:i, s:f, s:f}", "rank", 13, "host", "node02",
					"node", "node02", "rows", 12, "slowest_rows", 11,
					"slowest_fraction", 11.0 / 12, "excess_pct", 35.0));
}

Test(report, straggler_warns_its_node)
{
	struct hr_fleet f;
	json_t *p;
	const json_t *r;
	size_t n;
	load_dir(&f, DATA "fleet-healthy", straggler_rank13);
	p = analyze(&f, NULL);
	cr_expect_str_eq(verdict(p, "node02"), "WARN");
	r = flagged(p, "node02", &n);
	cr_assert_eq(n, 1);
	cr_expect_str_eq(hr_jstr(r, "code"), "straggler");
	cr_expect_str_eq(hr_jstr(r, "subject"), "rank 13");
	cr_expect(strstr(hr_jstr(r, "text"), "slowest rank at 92% of the sizes, 35% slower"), "%s", hr_jstr(r, "text"));
	cr_expect_eq(json_array_size(json_object_get(node(p, "node02"), "stragglers")), 1);
	cr_expect_str_eq(verdict(p, "node01"), "PASS");
	json_decref(p);
	hr_fleet_release(&f);
}

Test(report, absolute_expectations_apply_where_the_fleet_agrees)
{
	/* a whole fleet below its expectation is flagged even though no GPU is
	 * a fleet outlier: bf16 expected 900 TFLOP/s, measured 790 (88%) */
	struct hr_fleet f;
	struct hr_expect ex;
	char path[] = "/tmp/hr_expect_XXXXXX";
	int fd = mkstemp(path);
	const char *text = "{\"schema\": \"clusterhealth.expectations\", \"schema_version\": 1,"
			   " \"skus\": {\"H100 SXM\": {\"compute_gflops\": {\"bf16\": 900000},"
			   " \"cuda_core_gflops\": {\"fp32\": 50000},"
			   " \"source\": \"site acceptance test\"}}}";
	json_t *p;
	const json_t *r;
	size_t n;
	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
	cr_assert_eq(hr_expect_init(&ex), 0);
	cr_assert_eq(hr_expect_load_file(&ex, path), 0);
	unlink(path);
	cr_expect_float_eq(hr_expect_for(&ex, "H100 SXM", NULL)->compute_gflops[CH_BF16], 900000, 0);
	cr_expect_float_eq(hr_expect_for(&ex, "H100 SXM", NULL)->compute_gflops[CH_FP16], 989500 * 0.8, 1e-6);
	/* FMA-ladder roofs: the datasheet's CUDA-core rows (FP64 34 TFLOP/s, not
	 * FP64 Tensor Core) x 0.80, unless given */
	cr_expect_float_eq(hr_expect_for(&ex, "H100 SXM", NULL)->cuda_core_gflops[CH_FP64], 34000 * 0.8, 1e-6);
	cr_expect_float_eq(hr_expect_for(&ex, "H100 SXM", NULL)->cuda_core_gflops[CH_FP32], 50000, 0);
	cr_expect(isnan(hr_expect_for(&ex, "H100 SXM", NULL)->cuda_core_gflops[CH_BF16]));
	load_dir(&f, DATA "fleet-healthy", NULL);
	p = analyze(&f, &ex);
	r = flagged(p, "node01", &n);
	cr_expect_str_eq(verdict(p, "node01"), "WARN");
	cr_expect_eq(n, 8, "one reason per GPU, got %zu", n);
	cr_expect(strstr(hr_jstr(r, "text"), "of the expected 900 TFLOP/s"), "%s", hr_jstr(r, "text"));
	json_decref(p);
	hr_fleet_release(&f);
	hr_expect_release(&ex);
}

Test(report, bad_expectations_file_is_a_usage_error)
{
	static const char *const bad[] = {
		"{\"skus\": {\"H100 SXM\": {\"memory_gbps\": -5}}}",
		"{\"skus\": {\"H100 SXM\": {\"memroy_gbps\": 3000}}}",
		"{\"skus\": {\"MI300X\": {\"memory_gbps\": 4000}}}",
		"{\"thresholds\": {\"warn_ratio\": 0.5, \"fail_ratio\": 0.7}}",
		"{\"thresholds\": {\"false_alarm_per_node\": 1e-5, \"fail_false_alarm_per_node\": 1e-4}}",
		"{\"thresholds\": {\"fail_false_alarm_per_node\": 0}}",
		"{\"thresholds\": {\"fail_false_alarm_per_node\": 5e-324}}",
		"{\"thresholds\": {\"false_alarm_per_node\": 1e-20}}",
		"{\"skus\": {\"H100 SXM\": {\"compute_gflops\": {\"fp4\": 1}}}}",
		"{\"skus\": {\"H100 SXM\": {\"cuda_core_gflops\": {\"fp64\": 0}}}}",
		"{\"skus\": {\"H100 SXM\": {\"cuda_core_gflops\": 5}}}",
		"[1, 2",
	};
	size_t i;
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct hr_expect ex;
		char path[] = "/tmp/hr_expect_XXXXXX";
		int fd = mkstemp(path);
		cr_assert(fd >= 0);
		cr_assert_eq(write(fd, bad[i], strlen(bad[i])), (ssize_t)strlen(bad[i]));
		close(fd);
		cr_assert_eq(hr_expect_init(&ex), 0);
		cr_expect_eq(hr_expect_load_file(&ex, path), CH_ERR_USAGE, "case %zu: %s", i, bad[i]);
		unlink(path);
		hr_expect_release(&ex);
	}
}

/* a stricter flag budget given alone is taken, and the FAIL's budget
 * (default 1e-6) follows it down; given both, a FAIL's above the flags' is
 * refused (bad_expectations_file_is_a_usage_error) */
Test(report, fail_budget_follows_a_stricter_flag_budget)
{
	static const char doc[] = "{\"thresholds\": {\"false_alarm_per_node\": 1e-7}}";
	struct hr_expect ex;
	char path[] = "/tmp/hr_expect_XXXXXX";
	int fd = mkstemp(path);
	cr_assert(fd >= 0);
	cr_assert_eq(write(fd, doc, strlen(doc)), (ssize_t)strlen(doc));
	close(fd);
	cr_assert_eq(hr_expect_init(&ex), 0);
	cr_expect_float_eq(ex.th.fail_false_alarm, 1e-6, 0);
	cr_expect_eq(hr_expect_load_file(&ex, path), 0);
	cr_expect_float_eq(ex.th.false_alarm, 1e-7, 0);
	cr_expect_float_eq(ex.th.fail_false_alarm, 1e-7, 0);
	unlink(path);
	hr_expect_release(&ex);
}

Test(report, robust_z_and_levels_known_answers)
{
	struct hr_expect ex;
	cr_assert_eq(hr_expect_init(&ex), 0);
	cr_expect_float_eq(hr_robust_z(90, 100, 2, 0.001), 0.6745 * -10 / 2, 1e-12);
	cr_expect_float_eq(hr_robust_z(95, 100, 0, 0.001), 0.6745 * -5 / 0.1, 1e-12); /* MAD floor */
	cr_expect_float_eq(hr_robust_z(0, 0, 0, 0.001), 0, 0);
	cr_expect_eq(hr_relative_level(&ex.th, -4, 3.5, 4), HR_INFO);   /* improbable, but only 4% */
	cr_expect_eq(hr_relative_level(&ex.th, -4, 3.5, 6), HR_WARN);
	cr_expect_eq(hr_relative_level(&ex.th, -4, 3.5, 12), HR_FAIL);
	cr_expect_eq(hr_relative_level(&ex.th, -4, 5.07, 12), HR_INFO); /* 12% below, within the cut-off of many comparisons */
	cr_expect_eq(hr_relative_level(&ex.th, -3, 3.5, 50), HR_INFO);  /* not improbable */
	cr_expect_eq(hr_relative_level(&ex.th, 8, 3.5, -30), HR_INFO);  /* faster is fine */
	cr_expect_eq(hr_relative_level(&ex.th, NAN, 3.5, 50), HR_INFO);
	cr_expect_eq(hr_relative_level(&ex.th, -9, NAN, 50), HR_INFO);
	cr_expect_eq(hr_absolute_level(&ex.th, 0.74), HR_FAIL);
	cr_expect_eq(hr_absolute_level(&ex.th, 0.80), HR_WARN);
	cr_expect_eq(hr_absolute_level(&ex.th, 0.95), HR_INFO);
	cr_expect_eq(hr_absolute_level(&ex.th, NAN), HR_INFO);
	/* expectation = datasheet x attainable fraction */
	cr_expect_float_eq(hr_expect_for(&ex, "H200 SXM", NULL)->memory_gbps, 4800 * 0.85, 1e-9);
	cr_expect_float_eq(hr_expect_for(&ex, "H100 SXM", NULL)->intra_busbw_gbps, 370, 0);
	cr_expect_eq(hr_expect_for(&ex, NULL, "NVIDIA GH200 120GB"), NULL);
	hr_expect_release(&ex);
}

Test(report, run_cost_known_answer)
{
	struct hr_fleet f;
	struct hr_cost_params cp;
	struct hr_run *r;
	json_t *c;
	int n;
	const struct ch_datasheet *t = ch_datasheet_table(&n);
	const struct ch_datasheet *h100 = NULL;
	int i;
	for (i = 0; i < n; i++)
		if (!strcmp(t[i].sku, "H100 SXM"))
			h100 = &t[i];
	cr_assert(h100);
	cr_expect_float_eq(hr_gpu_rated_w(h100, NULL), 700, 0);
	memset(&f, 0, sizeof(f));
	f.runs = calloc(4, sizeof(*f.runs));
	f.nruns = 4;
	r = &f.runs[0]; /* measured: 1 kWh */
	r->start = 1000; r->end = 1000 + 3600; r->wall_sec = 3600;
	r->energy_measured = 1; r->cpu_j = 1.2e6; r->gpu_j = 2.4e6;
	r = &f.runs[1]; /* estimated: 1 h x (700 W + 1 x 250 W) = 0.95 kWh */
	r->start = 2000; r->end = 2000 + 3600; r->wall_sec = 3600;
	r->cpu_j = r->gpu_j = NAN; r->gpus_used = 1; r->gpu_rated_w = 700; r->cpu_packages = 1;
	r = &f.runs[2]; /* no time: not counted */
	r->wall_sec = NAN; r->cpu_j = r->gpu_j = NAN;
	r = &f.runs[3]; /* CPU measured (RAPL), GPU not (no NVML): 100 s x 700 W estimated */
	r->wall_sec = 100; r->cpu_j = 5e4; r->gpu_j = NAN; r->gpu_rated_w = 700; r->cpu_packages = 1;
	hr_cost_defaults(&cp);
	c = hr_cost_profile(&f, &cp);
	cr_assert(c);
	cr_expect_float_eq(hr_jnum(c, "wall_span_sec"), 5600 - 1000, 0);
	cr_expect_float_eq(hr_jnum(c, "it_energy_j"), 3.6e6 + 3.42e6 + 5e4 + 7e4, 1e-3);
	cr_expect_float_eq(hr_jnum(c, "estimated_energy_j"), 3.42e6 + 7e4, 1e-3);
	cr_expect_float_eq(hr_jnum(c, "facility_energy_kwh"), 1.95 * 1.58 + 1.2e5 / 3.6e6 * 1.58, 1e-9);
	cr_expect_float_eq(hr_jnum(c, "cost"), (1.95 + 1.2e5 / 3.6e6) * 1.58 * 0.0806, 1e-9);
	cr_expect_float_eq(hr_jnum(c, "co2e_kg"), (1.95 + 1.2e5 / 3.6e6) * 1.58 * 480 / 1000, 1e-9);
	cr_expect_eq(hr_jint(c, "runs_measured", -1), 1);
	cr_expect_eq(hr_jint(c, "runs_counted", -1), 3);
	cr_expect_str_eq(hr_jstr(c, "energy_source"), "partly estimated");
	cr_expect_eq(hr_jint(c, "runs_without_time", -1), 1);
	cr_expect(strstr(hr_jstr(json_object_get(c, "sources"), "pue"), "Uptime Institute"));
	json_decref(c);
	free(f.runs);
}

Test(report, fleet_cost_from_result_files)
{
	/* roofline: 6 nodes x (2 x 350 W x 60 s + 8 x 600 W x 60 s) measured;
	 * allreduce_bw: 120 s x (48 H100 x 700 W + 12 packages x 250 W) estimated;
	 * loader: 6 x 20 s x 2 packages x 250 W estimated */
	struct hr_fleet f;
	json_t *p;
	const json_t *c;
	double want = 6 * (2 * 350.0 * 60 + 8 * 600.0 * 60) + 120 * (48 * 700.0 + 12 * 250.0) +
		      6 * 20 * 2 * 250.0;
	load_dir(&f, DATA "fleet-healthy", NULL);
	p = analyze(&f, NULL);
	c = json_object_get(p, "run_cost");
	cr_expect_float_eq(hr_jnum(c, "it_energy_j"), want, 1e-3);
	cr_expect_float_eq(hr_jnum(c, "wall_span_sec"), 35 * 60 + 20, 0);
	cr_expect_eq(hr_jint(c, "runs_measured", 0), 6);
	cr_expect_eq(hr_jint(c, "runs_counted", 0), 13);
	json_decref(p);
	hr_fleet_release(&f);
}

Test(report, unusable_inputs_are_listed_not_fatal)
{
	struct hr_fleet f;
	size_t i;
	int seen[4] = { 0, 0, 0, 0 };
	load_dir(&f, DATA "bad", NULL);
	for (i = 0; i < f.issues.n; i++) {
		const struct hr_issue *is = &f.issues.v[i];
		if (strstr(is->path, "schema_v2.json") && strstr(is->msg, "schema_version '2' is not supported"))
			seen[0] = 1;
		if (strstr(is->path, "notes.txt") && strstr(is->msg, "not a result file or nccl-tests log"))
			seen[1] = 1;
		if (strstr(is->path, "roofline_missing_roofs.json") &&
		    strstr(is->msg, "results.devices[0]: missing 'roofs' object"))
			seen[2] = 1;
		if (strstr(is->path, "syntax_error.json") && is->line == 5)
			seen[3] = 1;
	}
	for (i = 0; i < 4; i++)
		cr_expect(seen[i], "case %zu not reported", i);
	/* found in a directory, notes and allreduce_bw's stdout are ignored
	 * (notes); named on the command line, the notes are skipped */
	cr_expect_eq(f.files_ignored, 2);
	for (i = 0; i < f.issues.n; i++) {
		if (strstr(f.issues.v[i].path, "notes.txt"))
			cr_expect_eq(f.issues.v[i].kind, HR_ISSUE_NOTE);
		if (strstr(f.issues.v[i].path, "allreduce_bw_stdout.log"))
			cr_expect(strstr(f.issues.v[i].msg, "allreduce_bw's own output"));
	}
	cr_expect_eq(f.ngroups, 0);
	hr_fleet_release(&f);
	memset(&f, 0, sizeof(f));
	cr_assert_eq(hr_fleet_load_file(&f, DATA "bad/notes.txt", 1), 0);
	cr_assert_eq(f.issues.n, 1);
	cr_expect_eq(f.issues.v[0].kind, HR_ISSUE_SKIPPED);
	cr_expect_eq(f.files_ignored, 0);
	hr_fleet_release(&f);
	memset(&f, 0, sizeof(f));
	load_dir(&f, DATA "bad", NULL);
	/* the device without roofs is still known (status ok, no metrics) */
	cr_expect_eq(f.ndevices, 1);
	cr_expect(isnan(f.devices[0].memory_gbps));
	hr_fleet_release(&f);
}

Test(report, own_profile_is_ignored_and_out_dir_skipped)
{
	char dir[] = "/tmp/hr_in_XXXXXX", sub[300], file[400], *args[1];
	struct hr_file_list files;
	struct hr_issues is = { 0 };
	struct hr_fleet f;
	FILE *fp;
	cr_assert(mkdtemp(dir));
	snprintf(file, sizeof(file), "%s/profile.json", dir);
	fp = fopen(file, "w");
	cr_assert(fp);
	fputs("{\"schema\": \"clusterhealth.profile\", \"schema_version\": 1}\n", fp);
	fclose(fp);
	snprintf(sub, sizeof(sub), "%s/health-report", dir);
	cr_assert_eq(mkdir(sub, 0755), 0);
	snprintf(file, sizeof(file), "%s/profile.json", sub);
	fp = fopen(file, "w");
	cr_assert(fp);
	fputs("{}\n", fp);
	fclose(fp);
	args[0] = dir;
	cr_assert_eq(hr_collect_inputs(args, 1, sub, &files, &is), 0);
	cr_assert_eq(files.n, 1, "files: %zu", files.n); /* the out dir was not entered */
	memset(&f, 0, sizeof(f));
	cr_assert_eq(hr_fleet_load_file(&f, files.paths[0], 1), 0);
	cr_expect_eq(f.files_ignored, 1);
	cr_expect_eq(f.issues.n, 0);
	unlink(file);
	rmdir(sub);
	snprintf(file, sizeof(file), "%s/profile.json", dir);
	unlink(file);
	rmdir(dir);
	hr_file_list_release(&files);
	hr_issues_release(&is);
	hr_fleet_release(&f);
}

Test(report, outputs_render_from_the_profile)
{
	struct hr_fleet f;
	struct hr_buf md = { 0 }, prom = { 0 }, html = { 0 };
	json_t *p;
	const char *s, *line;
	int nplots = 0, figs = 0, svgs = 0;
	load_dir(&f, DATA "fleet-faulty", NULL);
	p = analyze(&f, NULL);
	cr_assert_eq(hr_render_markdown(p, &md), 0);
	cr_expect(strstr(md.s, "| FAIL | node02 | **fail** gpu3 bf16 compute roof"), "%.400s", md.s);
	cr_expect(!strstr(md.s, "**Drain candidates:**")); /* node02's FAIL is not confirmed */
	cr_assert_eq(hr_render_prom(p, &prom), 0);
	cr_expect(strstr(prom.s, "clusterhealth_node_verdict{node=\"node02\"} 2\n"));
	cr_expect(strstr(prom.s, "clusterhealth_node_verdict{node=\"node04\"} 1\n"));
	cr_expect(strstr(prom.s, "clusterhealth_node_verdict{node=\"node06\"} 1\n"));
	cr_expect(strstr(prom.s, "clusterhealth_drain_candidate{node=\"node02\"} 0\n"));
	cr_expect(strstr(prom.s, "clusterhealth_drain_candidate{node=\"node06\"} 0\n"));
	cr_expect(strstr(prom.s, "# TYPE clusterhealth_device_compute_flops gauge\n"));
	/* every sample line: name{labels} value */
	for (line = prom.s; *line; line = strchr(line, '\n') + 1) {
		const char *e = strchr(line, '\n');
		cr_assert(e, "unterminated line");
		if (*line != '#') {
			const char *sp = memrchr(line, ' ', (size_t)(e - line));
			char *end;
			cr_assert(sp, "%.80s", line);
			cr_expect((*line >= 'a' && *line <= 'z') || *line == '_');
			strtod(sp + 1, &end);
			cr_expect_eq(end, e, "value of %.80s", line);
		}
	}
	cr_assert_eq(hr_render_html(p, 8, &html, &nplots), 0);
	for (s = html.s; (s = strstr(s, "<figure class=\"plot\"")); s++)
		figs++;
	for (s = html.s; (s = strstr(s, "<svg")); s++)
		svgs++;
	cr_expect_eq(figs, nplots);
	cr_expect_eq(svgs, nplots);
	/* 8 rooflines (cap), 3 busbw (one per class of like groups overlaid),
	 * 4 loaders (the flagged nodes': a PASS node's entry is bounded, its
	 * configurations not in the profile), 8 distributions (cap) */
	cr_expect_eq(nplots, 23, "plots: %d", nplots);
	cr_expect_eq(figs, 23);
	cr_expect(strstr(html.s, "data-subject=\"node02/gpu3\""), "flagged device plotted first");
	cr_expect(strstr(html.s, "more device rooflines not drawn (--max-plots 8"));
	/* a profile of bounded detail: the PASS nodes' devices and loaders
	 * are said to be left out, never absent */
	cr_expect(strstr(html.s, "The 18 devices of 2 PASS nodes are not drawn: a PASS node's entry is bounded"));
	cr_expect(strstr(html.s, "The loader results of 2 PASS nodes are not drawn"));
	cr_expect(!strstr(html.s, "No roofline results") && !strstr(html.s, "No loader_contention results"));
	cr_expect(strstr(md.s, "The 118 device metrics of 2 PASS nodes are not listed"), "%s", strstr(md.s, "## Devices"));
	cr_expect(strstr(md.s, "The 2 flagged of 236 device metrics (all of them are in report.html and profile.json)."));
	cr_expect(!strstr(html.s, "http://") || strstr(html.s, "xmlns=\"http://www.w3.org/2000/svg\""));
	cr_expect(!strstr(html.s, "<script src"));
	cr_expect(!strstr(html.s, "<link"));
	hr_buf_release(&md);
	hr_buf_release(&prom);
	hr_buf_release(&html);
	json_decref(p);
	hr_fleet_release(&f);
}

/* Real outputs of the tools on this machine (tests/data/report/real-vm):
 * the contract holds, nothing is skipped. */
/* whether node @name has a reason @code whose text holds @text */
static int reason_with(const json_t *p, const char *name, const char *code, const char *text)
{
	const json_t *r;
	size_t i;
	json_array_foreach(json_object_get(node(p, name), "reasons"), i, r)
		if (!strcmp(hr_jstr(r, "code"), code) && strstr(hr_jstr(r, "text"), text))
			return 1;
	return 0;
}

Test(report, real_tool_outputs_load_without_problems)
{
	struct hr_fleet f;
	json_t *p;
	size_t n, i;
	load_dir(&f, DATA "real-vm", NULL);
	cr_expect_eq(hr_issues_count(&f.issues, HR_ISSUE_SKIPPED), 0);
	cr_expect_eq(hr_issues_count(&f.issues, HR_ISSUE_TRUNCATED), 0);
	cr_expect_eq(f.files_read, 3);
	cr_expect_eq(f.files_ignored, 1); /* allreduce_bw's stdout */
	cr_assert_eq(f.ndevices, 1);
	cr_expect_str_eq(f.devices[0].kind, "cpu");
	cr_expect_gt(f.devices[0].memory_gbps, 0);
	cr_expect_gt(f.devices[0].compute_gflops[CH_FP64], 0);
	cr_expect_gt(f.devices[0].npoints, 10);
	cr_expect_eq(f.ngroups, 8);
	for (i = 0; i < f.ngroups; i++) {
		cr_expect_gt(f.groups[i].nrows, 2);
		cr_expect_eq(f.groups[i].wrong_total, 0);
		cr_expect(f.groups[i].large_busbw_gbps > 0);
	}
	cr_assert_eq(f.nloaders, 1);
	p = analyze(&f, NULL);
	/* this busy 2-core VM: the loader's baseline recorded host CPU pressure
	 * of 67%, the CPU's fp64 GEMM a per-call CV of 0.13: not judged, noisy */
	cr_expect_str_eq(verdict(p, "vm"), "NOT JUDGED");
	flagged(p, "vm", &n);
	cr_expect_eq(n, 0);
	cr_expect(reason_with(p, "vm", "loader_not_judged", "host busy (host CPU pressure 67% before the load started"));
	cr_expect(reason_with(p, "vm", "measurement_noisy", "cpu fp64 compute roof: CV 0.13"));
	cr_expect_eq(hr_jint(node(p, "vm"), "checks_noisy", -1), 2);
	/* the emulated nodes of --node-size 2: host-memory sweeps with no
	 * reference and 2 like groups; node1's in-place busbw at 256 KiB is a
	 * third of its out-of-place, on cells whose per-call CV is 0.79: not
	 * judged (noisy), never a WARN */
	flagged(p, "node1", &n);
	cr_expect_eq(n, 0);
	cr_expect(reason_with(p, "node1", "curve_not_judged", "an out-of-place/in-place gap at 256K on noisy cells (CV 0.79)"));
	cr_expect(reason_with(p, "node1", "fabric_not_judged", "not judged: noisy measurement (CV 0.77 at 2M)"));
	json_decref(p);
	hr_fleet_release(&f);
}

Test(report, plots_are_svg_and_refuse_empty_input)
{
	json_error_t je;
	json_t *g = json_loads("[{\"name\": \"pair#1\", \"algo\": \"ring\", \"collective\": \"all_reduce\","
			       " \"nranks\": 2, \"rows\": [{\"bytes\": 1024, \"busbw_oop_gbps\": 1.5,"
			       " \"busbw_ip_gbps\": 1.4}, {\"bytes\": 1048576, \"busbw_oop_gbps\": 20,"
			       " \"busbw_ip_gbps\": 19}]}]", 0, &je);
	json_t *empty = json_loads("[{\"rows\": []}]", 0, &je);
	struct hr_svg svg;
	cr_assert(g && empty);
	cr_assert_eq(hr_plot_busbw("pair#1 (a title with a PLplot escape)", g, &svg), 0);
	cr_expect_eq(strncmp(svg.svg, "<svg", 4), 0);
	/* lines: PLplot's polylines, runs of alike ones merged into a path */
	cr_expect(strstr(svg.svg, "<polyline") || strstr(svg.svg, "<path "));
	cr_expect(strstr(svg.svg, " d=\"M"), "a merged run of polylines: %.300s", svg.svg);
	cr_expect(!strstr(svg.svg, "stroke-opacity=\"1.000000\""));
	cr_expect(strstr(svg.svg, "</svg>"));
	cr_expect_eq(strlen(svg.svg), svg.len);
	hr_svg_release(&svg);
	cr_expect_eq(hr_plot_busbw("empty", empty, &svg), CH_ERR_USAGE);
	json_decref(g);
	json_decref(empty);
}

/* The readers' pool and parse arena (hr_fleet_load_files, hr_json_alloc_init)
 * load the same fleet as one file after another with plain allocation: the
 * profiles of both are the same text, --detail all and bounded. */
static char *profile_text(const char *dir, int pool, int detail_all)
{
	struct hr_fleet f;
	struct hr_file_list files;
	char *args[1] = { (char *)dir }, *t;
	struct hr_cost_params cp;
	struct hr_analyze_opts o;
	struct hr_expect ex;
	json_t *p;
	size_t i;
	memset(&f, 0, sizeof(f));
	cr_assert_eq(hr_collect_inputs(args, 1, NULL, &files, &f.issues), 0);
	if (pool)
		cr_assert_eq(hr_fleet_load_files(&f, (const char *const *)files.paths, files.named, files.n), 0);
	else
		for (i = 0; i < files.n; i++)
			cr_assert_eq(hr_fleet_load_file(&f, files.paths[i], files.named[i]), 0);
	hr_cost_defaults(&cp);
	cr_assert_eq(hr_expect_init(&ex), 0);
	memset(&o, 0, sizeof(o));
	o.expect = &ex;
	o.cost = &cp;
	o.generated_utc = "2025-06-01T03:00:00Z";
	o.input_files = files.n;
	o.detail_all = detail_all;
	p = hr_analyze(&f, &o);
	cr_assert(p);
	t = json_dumps(p, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
	cr_assert(t);
	json_decref(p);
	hr_expect_release(&ex);
	hr_fleet_release(&f);
	hr_file_list_release(&files);
	return t;
}

Test(report, pool_and_arena_load_the_same_fleet)
{
	static const char *const dirs[] = { DATA "fleet-faulty", DATA "fleet-inventory", DATA "nccl-tests", DATA "bad" };
	size_t i;
	int all;
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		for (all = 0; all < 2; all++) {
			char *plain = profile_text(dirs[i], 0, all), *pooled;
			hr_json_alloc_init();
			pooled = profile_text(dirs[i], 1, all);
			cr_assert_str_eq(pooled, plain, "%s (detail all %d): the pool and arena load another fleet", dirs[i], all);
			json_set_alloc_funcs(malloc, free);
			free(plain);
			free(pooled);
		}
}
