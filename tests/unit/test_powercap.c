#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/ch_common.h"
#include "bench/roofline/ch_roofline.h"
#include "bench/roofline/ch_roofline_power.h"
#include "hw/ch_powercap.h"

/* ------------------------------------------------------------ --power-limits */

Test(powercap, parse_caps_watts_and_percent, .init = cr_redirect_stderr)
{
	struct ch_rl_power_opts p;

	ch_rl_power_opts_init(&p);
	cr_assert_eq(p.tolerance_pct, 5.0);
	cr_assert_eq(ch_rl_parse_caps("100%,85%,450,300W,212.5w", &p), 0);
	cr_assert_eq(p.ncaps, 5);
	cr_assert(p.caps[0].pct && p.caps[0].value == 100);
	cr_assert(p.caps[1].pct && p.caps[1].value == 85);
	cr_assert(!p.caps[2].pct && p.caps[2].value == 450);
	cr_assert(!p.caps[3].pct && p.caps[3].value == 300);
	cr_assert(!p.caps[4].pct && p.caps[4].value == 212.5);
	cr_assert_str_eq(p.caps[1].text, "85%");
	cr_assert_str_eq(p.caps[3].text, "300W");
}

Test(powercap, parse_caps_bad_values, .init = cr_redirect_stderr)
{
	static const char *const bad[] = { "", "0", "0%", "-5%", "abc", "250%", "+100", "0x10", "inf", "nan", "85%%",
		"W", "%", "100,,90", "12000", "100%,abc" };
	struct ch_rl_power_opts p;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ch_rl_power_opts_init(&p);
		cr_assert_eq(ch_rl_parse_caps(bad[i], &p), CH_ERR_USAGE, "'%s' accepted", bad[i]);
	}
}

Test(powercap, roofline_options, .init = cr_redirect_stderr)
{
	struct ch_rl_opts o;
	const char *ok[] = { "roofline", "--power-limits", "100%,70%", "--power-tolerance", "3", "--power-state",
			     "/tmp/x.json" };
	const char *cpu[] = { "roofline", "--backend", "cpu", "--power-limits", "80%" };
	const char *tol[] = { "roofline", "--power-limits", "80%", "--power-tolerance", "0" };
	const char *rest[] = { "roofline", "--power-restore" };

	cr_assert_eq(ch_rl_parse(7, (char **)ok, &o), 0);
	cr_assert_eq(o.power.ncaps, 2);
	cr_assert_eq(o.power.tolerance_pct, 3.0);
	cr_assert_str_eq(o.power.state, "/tmp/x.json");
	cr_assert_eq(ch_rl_parse(5, (char **)cpu, &o), CH_ERR_USAGE);
	cr_assert_eq(ch_rl_parse(5, (char **)tol, &o), CH_ERR_USAGE);
	cr_assert_eq(ch_rl_parse(2, (char **)rest, &o), 0);
	cr_assert_eq(o.power.restore_only, 1);
}

Test(powercap, state_path_order)
{
	unsetenv("CH_POWER_STATE");
	cr_assert_str_eq(ch_powercap_state_path(NULL), CH_POWERCAP_STATE_DEFAULT);
	cr_assert_str_eq(CH_POWERCAP_STATE_DEFAULT, "/run/clusterhealth/power-limits.json");
	setenv("CH_POWER_STATE", "/tmp/env.json", 1);
	cr_assert_str_eq(ch_powercap_state_path(NULL), "/tmp/env.json");
	cr_assert_str_eq(ch_powercap_state_path("/tmp/opt.json"), "/tmp/opt.json");
	setenv("CH_POWER_STATE", "", 1);
	cr_assert_str_eq(ch_powercap_state_path(NULL), CH_POWERCAP_STATE_DEFAULT);
	unsetenv("CH_POWER_STATE");
}

/* ------------------------------------------------------------ the recommendation on known knees */

#define NA NAN

static void curve(struct ch_rl_curve_pt *pts, const double *caps, const double *perf, int n)
{
	int i;
	for (i = 0; i < n; i++) {
		pts[i].cap_w = caps[i];
		pts[i].perf = perf[i];
		pts[i].gflop_per_j = perf[i] / caps[i]; /* power held at the cap */
		pts[i].power_w = caps[i];
		pts[i].mem_perf = 3000;
	}
}

/* A plateau then a knee: 4% lost at 500 W, 10% at 450 W. */
Test(powercap, recommend_knee_after_a_plateau)
{
	const double caps[] = { 700, 650, 600, 550, 500, 450, 400 };
	const double perf[] = { 100, 100, 99.5, 98, 96, 90, 80 };
	struct ch_rl_curve_pt pts[7];
	struct ch_rl_rec r;

	curve(pts, caps, perf, 7);
	cr_assert_eq(ch_rl_power_recommend(pts, 7, 700, 5, &r), 0);
	cr_assert_eq(r.index, 4);
	cr_assert_eq(r.cap_w, 500);
	cr_assert_eq(r.ref, 0);
	cr_assert_eq(r.stopped_at, 5);
	cr_assert_float_eq(r.loss_pct, 4.0, 1e-9);
	/* energy per FLOP: (500 / 96) against (700 / 100): 25.6% less */
	cr_assert_float_eq(r.energy_saved_pct, 100 * (1 - (100.0 / 700) / (96.0 / 500)), 1e-9);
	cr_assert_float_eq(r.energy_saved_pct, 25.595238095238095, 1e-9);
	cr_assert_float_eq(r.power_saved_w, 200, 1e-9);
	cr_assert_float_eq(r.mem_loss_pct, 0, 1e-12);
	/* a tolerance of 12%: the knee moves to 450 W; of 1%: 600 W */
	cr_assert_eq(ch_rl_power_recommend(pts, 7, 700, 12, &r), 0);
	cr_assert_eq(r.cap_w, 450);
	cr_assert_eq(ch_rl_power_recommend(pts, 7, 700, 1, &r), 0);
	cr_assert_eq(r.cap_w, 600);
}

/* The first cap below the default already loses more: the default itself. */
Test(powercap, recommend_knee_at_the_top)
{
	const double caps[] = { 700, 630, 560 };
	const double perf[] = { 100, 93, 85 };
	struct ch_rl_curve_pt pts[3];
	struct ch_rl_rec r;

	curve(pts, caps, perf, 3);
	cr_assert_eq(ch_rl_power_recommend(pts, 3, 700, 5, &r), 0);
	cr_assert_eq(r.cap_w, 700);
	cr_assert_eq(r.index, 0);
	cr_assert_eq(r.stopped_at, 1);
	cr_assert_float_eq(r.loss_pct, 0, 1e-12);
	cr_assert_float_eq(r.energy_saved_pct, 0, 1e-12);
}

/* A cap below a failing one that passes again is noise, not a recommendation. */
Test(powercap, recommend_stops_at_the_first_failure)
{
	const double caps[] = { 700, 600, 500, 400 };
	const double perf[] = { 100, 97, 94, 96 };
	struct ch_rl_curve_pt pts[4];
	struct ch_rl_rec r;

	curve(pts, caps, perf, 4);
	cr_assert_eq(ch_rl_power_recommend(pts, 4, 700, 5, &r), 0);
	cr_assert_eq(r.cap_w, 600);
	cr_assert_eq(r.stopped_at, 2);
}

/* Every cap within the tolerance: the lowest, nothing stopped the walk. */
Test(powercap, recommend_all_within)
{
	const double caps[] = { 400, 350, 300, 250 };
	const double perf[] = { 50, 50, 49.9, 49.0 };
	struct ch_rl_curve_pt pts[4];
	struct ch_rl_rec r;

	curve(pts, caps, perf, 4);
	cr_assert_eq(ch_rl_power_recommend(pts, 4, 400, 5, &r), 0);
	cr_assert_eq(r.cap_w, 250);
	cr_assert_eq(r.stopped_at, -1);
	cr_assert_float_eq(r.loss_pct, 2.0, 1e-9);
}

/* A cap above the default (max above default) is not the reference and is
 * not recommended; a cap not measured stops the walk. */
Test(powercap, recommend_above_default_and_gaps)
{
	const double caps[] = { 770, 700, 600, 500 };
	const double perf[] = { 101, 100, NA, 99 };
	struct ch_rl_curve_pt pts[4];
	struct ch_rl_rec r;

	curve(pts, caps, perf, 4);
	cr_assert_eq(ch_rl_power_recommend(pts, 4, 700, 5, &r), 0);
	cr_assert_eq(r.ref, 1);
	cr_assert_eq(r.cap_w, 700);
	cr_assert_eq(r.stopped_at, 2);
}

/* No reference figure: not judged, with the reason (never a cap). */
Test(powercap, recommend_needs_the_reference)
{
	const double caps[] = { 650, 600 };
	const double perf[] = { 100, 99 };
	const double caps2[] = { 700, 600 };
	const double nan_ref[] = { NA, 99 };
	const double zero_ref[] = { 0, 99 };
	struct ch_rl_curve_pt pts[2];
	struct ch_rl_rec r;

	curve(pts, caps, perf, 2);
	cr_assert_eq(ch_rl_power_recommend(pts, 2, 700, 5, &r), CH_ERR_CHECK);
	cr_assert_eq(r.index, -1);
	cr_assert(isnan(r.cap_w));
	cr_assert(strstr(r.why, "700 W was not measured"));
	curve(pts, caps2, nan_ref, 2);
	cr_assert_eq(ch_rl_power_recommend(pts, 2, 700, 5, &r), CH_ERR_CHECK);
	cr_assert(strstr(r.why, "no compute-bound figure"));
	curve(pts, caps2, zero_ref, 2);
	cr_assert_eq(ch_rl_power_recommend(pts, 2, 700, 5, &r), CH_ERR_CHECK);
	cr_assert_eq(ch_rl_power_recommend(pts, 0, 700, 5, &r), CH_ERR_CHECK);
}

/* The node's cap: the highest of its GPUs' (the slowest GPU sets the pace). */
Test(powercap, node_takes_the_highest_cap)
{
	json_t *devs = json_loads(
		"[{\"device\": \"gpu0\", \"power_sweep\": {\"default_limit_w\": 700, \"recommendation\": {\"judged\": true, \"cap_w\": 560},"
		"  \"curve\": [{\"cap_w\": 700, \"gflops\": 100, \"gflop_per_j\": 1}, {\"cap_w\": 630, \"gflops\": 99, \"gflop_per_j\": 1.1},"
		"             {\"cap_w\": 560, \"gflops\": 96, \"gflop_per_j\": 1.2}]}},"
		" {\"device\": \"gpu1\", \"power_sweep\": {\"default_limit_w\": 700, \"recommendation\": {\"judged\": true, \"cap_w\": 630},"
		"  \"curve\": [{\"cap_w\": 700, \"gflops\": 100, \"gflop_per_j\": 1}, {\"cap_w\": 630, \"gflops\": 97, \"gflop_per_j\": 1.25},"
		"             {\"cap_w\": 560, \"gflops\": 90, \"gflop_per_j\": 1.3}]}},"
		" {\"device\": \"gpu2\", \"power_sweep\": {\"default_limit_w\": 700, \"recommendation\": {\"judged\": false, \"cap_w\": null},"
		"  \"curve\": []}},"
		" {\"device\": \"cpu\"}]", 0, NULL);
	json_t *n = ch_rl_power_node(devs, 5), *g;

	cr_assert(json_is_object(n));
	cr_assert_eq(json_number_value(json_object_get(n, "cap_w")), 630);
	cr_assert_eq(json_integer_value(json_object_get(n, "gpus_swept")), 3);
	cr_assert_float_eq(json_number_value(json_object_get(n, "worst_compute_loss_pct")), 3.0, 1e-9);
	cr_assert_str_eq(json_string_value(json_object_get(n, "worst_device")), "gpu1");
	/* median of 1 - 1/1.1 and 1 - 1/1.25 */
	cr_assert_float_eq(json_number_value(json_object_get(n, "median_energy_per_flop_saved_pct")),
			   (100 * (1 - 1 / 1.1) + 100 * (1 - 1 / 1.25)) / 2, 1e-9);
	g = json_array_get(json_object_get(n, "gpus"), 2);
	cr_assert(json_is_null(json_object_get(g, "compute_loss_pct")));
	cr_assert_str_eq(json_string_value(json_object_get(g, "why")), "this cap was not measured on this GPU");
	json_decref(n);
	/* no GPU with a recommendation: null, never a cap */
	json_array_remove(devs, 1);
	json_array_remove(devs, 0);
	n = ch_rl_power_node(devs, 5);
	cr_assert(json_is_null(n));
	json_decref(devs);
}

/* ------------------------------------------------------------ the state file (no NVML here) */

static struct ch_powercap_gpu gpu(const char *uuid, double limit)
{
	struct ch_powercap_gpu g;
	memset(&g, 0, sizeof(g));
	snprintf(g.uuid, sizeof(g.uuid), "%s", uuid);
	snprintf(g.pci_bus_id, sizeof(g.pci_bus_id), "0000:1b:00.0");
	g.limit_w = limit;
	return g;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *b = calloc(1, 65536);
	if (f) {
		size_t n = fread(b, 1, 65535, f);
		b[n] = '\0';
		fclose(f);
	}
	return b;
}

/* When the state file cannot be written or read, nothing may be changed:
 * ch_powercap_begin() refuses and leaves a file it does not own as it was. */
Test(powercap, state_file_refusals, .init = cr_redirect_stderr)
{
	char dir[] = "/tmp/ch_pc_unit.XXXXXX", path[256], cmd[300], why[512];
	struct ch_powercap_gpu g = gpu("GPU-unit-0", 700);
	const double caps[] = { 700, 500 };
	FILE *f;
	char *before, *after;

	cr_assert(mkdtemp(dir));
	/* a directory that cannot be made */
	cr_assert_eq(ch_powercap_begin("/dev/null/sub/state.json", &g, caps, 2, why, sizeof(why)), CH_ERR_RUNTIME);
	cr_assert(strstr(why, "cannot create directory '/dev/null/sub'"), "%s", why);
	/* not JSON: left as it is */
	snprintf(path, sizeof(path), "%s/bad.json", dir);
	f = fopen(path, "w");
	fputs("{\"gpus\": [", f);
	fclose(f);
	before = slurp(path);
	cr_assert_eq(ch_powercap_begin(path, &g, caps, 2, why, sizeof(why)), CH_ERR_RUNTIME);
	cr_assert(strstr(why, "cannot read the power-limit state file"), "%s", why);
	after = slurp(path);
	cr_assert_str_eq(before, after);
	free(before);
	free(after);
	/* another application's JSON: left as it is */
	snprintf(path, sizeof(path), "%s/other.json", dir);
	f = fopen(path, "w");
	fputs("{\"schema\": \"something.else\", \"gpus\": []}\n", f);
	fclose(f);
	cr_assert_eq(ch_powercap_begin(path, &g, caps, 2, why, sizeof(why)), CH_ERR_RUNTIME);
	cr_assert(strstr(why, "is not a clusterhealth power-limit state file"), "%s", why);
	cr_assert_eq(ch_powercap_held(), 0);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

/* A recorded GPU: its UUID, original limit, caps, this process; a second
 * record of it by the same run is refused. */
Test(powercap, state_file_records_the_original, .init = cr_redirect_stderr)
{
	char dir[] = "/tmp/ch_pc_unit.XXXXXX", path[256], cmd[300], why[512];
	struct ch_powercap_gpu g = gpu("GPU-unit-1", 450);
	const double caps[] = { 700, 450, 350 };
	json_t *doc, *e;

	cr_assert(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/deep/er/state.json", dir);
	cr_assert_eq(ch_powercap_begin(path, &g, caps, 3, why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(ch_powercap_held(), 1);
	doc = json_load_file(path, 0, NULL);
	cr_assert(doc);
	cr_assert_str_eq(json_string_value(json_object_get(doc, "schema")), CH_POWERCAP_STATE_SCHEMA);
	e = json_array_get(json_object_get(doc, "gpus"), 0);
	cr_assert_str_eq(json_string_value(json_object_get(e, "uuid")), "GPU-unit-1");
	cr_assert_eq(json_number_value(json_object_get(e, "original_limit_w")), 450);
	cr_assert_eq(json_array_size(json_object_get(e, "caps_w")), 3);
	cr_assert_eq(json_integer_value(json_object_get(e, "pid")), getpid());
	cr_assert(json_string_length(json_object_get(e, "pid_start")) > 0);
	json_decref(doc);
	cr_assert_eq(ch_powercap_begin(path, &g, caps, 3, why, sizeof(why)), CH_ERR_USAGE);
	cr_assert(strstr(why, "already capped by this run"), "%s", why);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

/* Recovery without NVML: a dead run's entry is kept (and said), a live
 * process's entry and another host's are left alone; no file, nothing to do. */
Test(powercap, recover_without_nvml_keeps_entries, .init = cr_redirect_stderr)
{
	char dir[] = "/tmp/ch_pc_unit.XXXXXX", path[256], cmd[300], host[256], start[64] = "";
	json_t *rep = NULL, *doc;
	FILE *f;
	char stat[1024], *p;
	int field;

	cr_assert(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/none.json", dir);
	cr_assert_eq(ch_powercap_recover(path, &rep), 0);
	cr_assert_eq(json_array_size(rep), 0);
	json_decref(rep);
	gethostname(host, sizeof(host));
	f = fopen("/proc/self/stat", "r");
	cr_assert(f && fgets(stat, sizeof(stat), f));
	fclose(f);
	p = strrchr(stat, ')');
	for (field = 2; *p && field < 22; p++)
		field += *p == ' ';
	sscanf(p, "%63s", start);
	/* a live process (this one) and another host: nothing to do */
	snprintf(path, sizeof(path), "%s/live.json", dir);
	f = fopen(path, "w");
	fprintf(f, "{\"schema\": \"%s\", \"version\": 1, \"gpus\": ["
		"{\"uuid\": \"GPU-a\", \"host\": \"%s\", \"original_limit_w\": 700, \"caps_w\": [500], \"pid\": %ld, \"pid_start\": \"%s\"},"
		"{\"uuid\": \"GPU-b\", \"host\": \"elsewhere\", \"original_limit_w\": 700, \"caps_w\": [500], \"pid\": 1, \"pid_start\": \"1\"}]}",
		CH_POWERCAP_STATE_SCHEMA, host, (long)getpid(), start);
	fclose(f);
	cr_assert_eq(ch_powercap_recover(path, &rep), 0);
	cr_assert_eq(json_array_size(rep), 0);
	json_decref(rep);
	doc = json_load_file(path, 0, NULL);
	cr_assert_eq(json_array_size(json_object_get(doc, "gpus")), 2);
	json_decref(doc);
	/* a dead run on this host: cannot be restored without NVML, kept */
	snprintf(path, sizeof(path), "%s/dead.json", dir);
	f = fopen(path, "w");
	fprintf(f, "{\"schema\": \"%s\", \"version\": 1, \"gpus\": ["
		"{\"uuid\": \"GPU-c\", \"host\": \"%s\", \"original_limit_w\": 700, \"caps_w\": [500], \"pid\": 0, \"pid_start\": \"1\"}]}",
		CH_POWERCAP_STATE_SCHEMA, host);
	fclose(f);
	cr_assert_eq(ch_powercap_recover(path, &rep), CH_ERR_UNAVAILABLE);
	json_decref(rep);
	doc = json_load_file(path, 0, NULL);
	cr_assert_eq(json_array_size(json_object_get(doc, "gpus")), 1);
	json_decref(doc);
	/* an unreadable state file is an error, never "nothing to do" */
	snprintf(path, sizeof(path), "%s/garbage.json", dir);
	f = fopen(path, "w");
	fputs("not json", f);
	fclose(f);
	cr_assert_eq(ch_powercap_recover(path, &rep), CH_ERR_RUNTIME);
	json_decref(rep);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

/* ------------------------------------------------------------ the canary at a cap */

#include "report/canary/hr_canary_power.h"
#include "report/judge/hr_cost.h"

static void sweep_gpu(struct hr_power_canary *k, const char *name, double r700, double r560)
{
	struct hr_power_canary_gpu *g;
	k->gpus = realloc(k->gpus, (size_t)(k->ngpus + 1) * sizeof(*k->gpus));
	g = &k->gpus[k->ngpus++];
	memset(g, 0, sizeof(*g));
	snprintf(g->name, sizeof(g->name), "%s", name);
	g->default_w = 700;
	g->npts = 2;
	g->cap_w[0] = 700, g->gflops[0] = r700, g->power_w[0] = 680;
	g->cap_w[1] = 560, g->gflops[1] = r560, g->power_w[1] = 560;
}

static void canary_io(struct hr_canary_in *in, struct hr_canary_out *o)
{
	hr_canary_in_init(in);
	memset(o, 0, sizeof(*o));
	in->target_gpus = (struct hr_fig){ 128, HR_SRC_GIVEN };
	in->power_cap_w = (struct hr_fig){ 560, HR_SRC_GIVEN };
	o->step_target_sec = (struct hr_fig){ 2.0, HR_SRC_GIVEN };
	o->ckpt_frac = (struct hr_fig){ 0.1, HR_SRC_GIVEN };
	o->input_wait_sec = (struct hr_fig){ 0.1, HR_SRC_GIVEN };
	o->comm_target_sec = (struct hr_fig){ 0.5, HR_SRC_FITTED };
	o->overlap = (struct hr_fig){ 0.2, HR_SRC_ASSUMED };
}

/* The slowdown applies to the compute-bound share only, the slowest GPU's. */
Test(powercap, canary_step_and_energy_at_the_cap)
{
	struct hr_power_canary k = { 0 };
	struct hr_canary_in in;
	struct hr_canary_out o;
	struct hr_power_canary_out po;
	double c, s, t;

	sweep_gpu(&k, "n1 gpu0", 1000, 960);
	sweep_gpu(&k, "n1 gpu1", 1000, 920); /* the slowest: x1000/920 */
	canary_io(&in, &o);
	/* given share: 60% of the 2 s step */
	in.power_compute_share = (struct hr_fig){ 0.6, HR_SRC_GIVEN };
	in.run_steps = (struct hr_fig){ 1e5, HR_SRC_GIVEN };
	hr_power_canary_compute(&k, &in, &o, &po);
	cr_assert(po.asked && po.judged, "%s", po.why);
	s = 1000.0 / 920;
	cr_assert_float_eq(po.slowdown.v, s, 1e-12);
	cr_assert_str_eq(po.worst, "n1 gpu1");
	cr_assert_float_eq(po.compute_sec.v, 1.2, 1e-12);
	t = (2.0 * 0.9 + 1.2 * (s - 1)) / 0.9;
	cr_assert_float_eq(po.step_cap_sec.v, t, 1e-12);
	cr_assert_float_eq(po.energy_step_j.v, 128 * 680 * 2.0, 1e-6);
	cr_assert_float_eq(po.energy_step_cap_j.v, 128 * 560 * t, 1e-6);
	cr_assert_float_eq(po.kwh_run.v, 128 * 680 * 2.0 * 1e5 / 3.6e6 * HR_DEFAULT_PUE, 1e-6);
	cr_assert_float_eq(po.cost_run_cap.v, 128 * 560 * t * 1e5 / 3.6e6 * HR_DEFAULT_PUE * HR_DEFAULT_PRICE_PER_KWH, 1e-6);
	cr_assert_float_eq(po.co2e_kg_run.v, po.kwh_run.v * HR_DEFAULT_CARBON_G_PER_KWH / 1000, 1e-9);
	cr_assert(po.pue.src == HR_SRC_ASSUMED && po.energy_step_cap_j.src & HR_SRC_ASSUMED);
	/* modelled share: the step less the checkpoint stall, input wait and exposed all-reduce */
	in.power_compute_share = (struct hr_fig){ 0, 0 };
	hr_power_canary_compute(&k, &in, &o, &po);
	cr_assert(po.judged, "%s", po.why);
	c = 2.0 * 0.9 - 0.1 - 0.8 * 0.5;
	cr_assert_float_eq(po.compute_sec.v, c, 1e-12);
	cr_assert(po.compute_sec.src & HR_SRC_ASSUMED);
	cr_assert_float_eq(po.step_cap_sec.v, (1.8 + c * (s - 1)) / 0.9, 1e-12);
	cr_assert(strstr(po.compute_from, "upper bound"));
	hr_power_canary_release(&k);
}

/* What cannot be computed is said, never a figure. */
Test(powercap, canary_not_judged)
{
	struct hr_power_canary k = { 0 };
	struct hr_canary_in in;
	struct hr_canary_out o;
	struct hr_power_canary_out po;

	canary_io(&in, &o);
	in.power_cap_w = (struct hr_fig){ 0, 0 };
	hr_power_canary_compute(&k, &in, &o, &po);
	cr_assert(!po.asked);
	canary_io(&in, &o);
	hr_power_canary_compute(&k, &in, &o, &po); /* no sweep */
	cr_assert(po.asked && !po.judged && strstr(po.why, "no roofline --power-limits sweep"));
	sweep_gpu(&k, "n1 gpu0", 1000, 960);
	in.power_cap_w = (struct hr_fig){ 490, HR_SRC_GIVEN }; /* not swept */
	hr_power_canary_compute(&k, &in, &o, &po);
	cr_assert(!po.judged && strstr(po.why, "was not measured"), "%s", po.why);
	cr_assert(!po.slowdown.src);
	in.power_cap_w = (struct hr_fig){ 560, HR_SRC_GIVEN };
	o.trend_used = 1; /* no all-reduce model and no --compute-share */
	hr_power_canary_compute(&k, &in, &o, &po);
	cr_assert(!po.judged && strstr(po.why, "--compute-share"), "%s", po.why);
	cr_assert(po.slowdown.src == HR_SRC_MEASURED);
	o.trend_used = 0;
	o.comm_only = 1;
	hr_power_canary_compute(&k, &in, &o, &po);
	cr_assert(!po.judged && strstr(po.why, "--step-time"), "%s", po.why);
	o.comm_only = 0;
	in.power_compute_share = (struct hr_fig){ 0.95, HR_SRC_GIVEN }; /* more than the step less its stall */
	hr_power_canary_compute(&k, &in, &o, &po);
	cr_assert(!po.judged && strstr(po.why, "inputs are off"), "%s", po.why);
	k.gpus[0].gflops[0] = NAN; /* never measured at the default limit */
	in.power_compute_share = (struct hr_fig){ 0.5, HR_SRC_GIVEN };
	hr_power_canary_compute(&k, &in, &o, &po);
	cr_assert(!po.judged && !po.slowdown.src);
	hr_power_canary_release(&k);
}
