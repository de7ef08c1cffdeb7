/*
 * Parsers of nccl-tests output: the real public logs in
 * tests/data/nccl-tests-logs (README.md there lists what each shows),
 * and constructed or broken inputs under tests/data/report.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "report/read/hr_model.h"
#include "report/read/hr_nccltests.h"
#include "report/hr_util.h"

#define LOGS "tests/data/nccl-tests-logs/"
#define DATA "tests/data/report/"

static char *slurp(const char *path)
{
	char *t = NULL, err[256];
	if (hr_read_file(path, 0, &t, NULL, err, sizeof(err)))
		cr_assert_fail("cannot read '%s': %s", path, err);
	return t;
}

static void parse(const char *path, struct hr_nt_log *l, struct hr_issues *is)
{
	char *t = slurp(path);
	memset(is, 0, sizeof(*is));
	cr_assert_eq(hr_nt_parse_text(path, t, l, is), 0, "parse '%s'", path);
	free(t);
}

/* Is there an issue of @kind at @line whose message contains @needle? */
static int has_issue(const struct hr_issues *is, int kind, int line, const char *needle)
{
	size_t i;
	for (i = 0; i < is->n; i++)
		if (is->v[i].kind == kind && (line < 0 || is->v[i].line == line) &&
		    strstr(is->v[i].msg, needle))
			return 1;
	return 0;
}

/* What each real log must give (figures from the shared README). */
struct known {
	const char *file;
	size_t rows;
	int format;
	const char *collective;
	int nranks;
	int complete;
	double reported_avg;   /* NAN when the log prints none */
	double computed_avg;   /* README's "computed", 3 decimals; NAN n/a */
	double large_busbw;    /* out-of-place busbw at the largest size */
	double large_bytes;
	double wrong;
	const char *nccl;
};

static const struct known logs[] = {
	{ "01_h100_2node_16gpu_gcp_a3mega_allreduce.txt", 31, HR_NT_FMT_WRONG, "all_reduce", 16, 1,
	  70.742, 70.741, 338.82, 8589934592.0, 0, "" },
	{ "03_h100_4node_32gpu_vm_allreduce.txt", 32, HR_NT_FMT_WRONG, "all_reduce", 32, 1,
	  107.51, 107.509, 365.84, 17179869184.0, 0, "2.26.2" },
	/* no "Collective test starting" line and no name hint: from its bus factor */
	{ "05_h100_128node_1024gpu_crash_at_32G.txt", 5, HR_NT_FMT_WRONG, "all_reduce", 100, 0,
	  NAN, 279.089, 367.29, 17179869184.0, 0, "" },
	{ "06_a100_1node_8gpu_oci_allreduce.txt", 28, HR_NT_FMT_WRONG, "all_reduce", 8, 1,
	  81.112, 81.112, 235.14, 8589934592.0, 0, "" },
	{ "08_v100_dgx2_12gpu_allgather_oldfmt_oob_failed.txt", 31, HR_NT_FMT_ERROR, "all_gather", 12, 1,
	  30.2993, 30.299, 73.75, 8589934560.0, 4, "" },
	{ "10_gh200_2node_2gpu_wrong_at_1M_oob_failed.txt", 25, HR_NT_FMT_WRONG, "all_reduce", 2, 1,
	  4.79995, 4.801, 22.87, 134217728.0, 128, "2.29.2" },
	{ "11_gh200_2node_8gpu_crash_device_busy.txt", 0, HR_NT_FMT_UNKNOWN, "all_reduce", 8, 0,
	  NAN, NAN, NAN, NAN, 0, "2.26.6" },
	{ "12_rtx5090_1node_2gpu_crash_after_header.txt", 0, HR_NT_FMT_WRONG, "unknown", 2, 0,
	  NAN, NAN, NAN, NAN, 0, "" },
	{ "14_gh200_2node_2gpu_cscs_newfmt.txt", 8, HR_NT_FMT_WRONG, "all_reduce", 2, 1,
	  14.9966, 14.997, 22.86, 134217728.0, 0, "2.30.7" },
	/* old alltoall_perf: an empty redop cell, 11 tokens under 12 columns */
	{ "15_v100_8node_64gpu_alltoall_oldfmt_empty_redop.txt", 2, HR_NT_FMT_ERROR, "alltoall", 0, 1,
	  0.507636, 0.51, 0.51, 536870912.0, 0, "" },
};

Test(nccltests, real_logs_parse_with_known_figures)
{
	size_t i;
	for (i = 0; i < sizeof(logs) / sizeof(logs[0]); i++) {
		const struct known *k = &logs[i];
		char path[512];
		struct hr_nt_log l;
		struct hr_issues is;
		const struct hr_nt_run *r;
		double b, v;
		snprintf(path, sizeof(path), LOGS "%s", k->file);
		parse(path, &l, &is);
		cr_assert_eq(l.nruns, 1, "%s: %zu runs", k->file, l.nruns);
		r = &l.runs[0];
		cr_expect_eq(r->nrows, k->rows, "%s: %zu rows, want %zu", k->file, r->nrows, k->rows);
		cr_expect_eq(r->format, k->format, "%s: format %d", k->file, r->format);
		cr_expect_str_eq(r->collective, k->collective, "%s: collective", k->file);
		cr_expect_eq(hr_nt_nranks(r), k->nranks, "%s: %d ranks", k->file, hr_nt_nranks(r));
		cr_expect_eq(r->complete, k->complete, "%s: complete", k->file);
		cr_expect_str_eq(r->nccl_version, k->nccl, "%s: nccl '%s'", k->file, r->nccl_version);
		cr_expect_eq(r->has_avg, !isnan(k->reported_avg), "%s: has avg", k->file);
		if (!isnan(k->reported_avg))
			cr_expect_float_eq(r->avg_reported_gbps, k->reported_avg, 1e-9, "%s", k->file);
		v = hr_nt_avg_busbw(r);
		if (!isnan(k->computed_avg))
			cr_expect_float_eq(v, k->computed_avg, 0.0005, "%s: computed avg %.4f", k->file, v);
		else
			cr_expect(isnan(v));
		v = hr_nt_large_busbw(r, &b);
		if (!isnan(k->large_busbw)) {
			cr_expect_float_eq(v, k->large_busbw, 1e-9, "%s: large busbw %.2f", k->file, v);
			cr_expect_float_eq(b, k->large_bytes, 0, "%s: largest size", k->file);
		}
		cr_expect_float_eq(hr_nt_wrong_total(r), k->wrong, 0, "%s: wrong %g", k->file,
				   hr_nt_wrong_total(r));
		/* no row of a real log is malformed */
		cr_expect_eq(hr_issues_count(&is, HR_ISSUE_SKIPPED), 0, "%s: %zu skipped", k->file,
			     hr_issues_count(&is, HR_ISSUE_SKIPPED));
		hr_nt_log_release(&l);
		hr_issues_release(&is);
	}
}

/* The issue's acceptance test: the average busbw the reporter computes for
 * each log equals the log's own "# Avg bus bandwidth" line to the printed
 * precision (cells printed to 2 decimals: their mean is within 0.005, plus
 * half a unit of the Avg line's last digit). */
Test(nccltests, computed_average_equals_logs_avg_line)
{
	size_t i, checked = 0;
	for (i = 0; i < sizeof(logs) / sizeof(logs[0]); i++) {
		char path[512];
		struct hr_nt_log l;
		struct hr_issues is;
		size_t j;
		snprintf(path, sizeof(path), LOGS "%s", logs[i].file);
		parse(path, &l, &is);
		for (j = 0; j < l.nruns; j++) {
			const struct hr_nt_run *r = &l.runs[j];
			double c, tol;
			if (!r->has_avg)
				continue;
			c = hr_nt_avg_busbw(r);
			tol = hr_nt_avg_tolerance(r);
			cr_expect_eq(r->cell_decimals, 2, "%s: cells printed with %d decimals", logs[i].file,
				     r->cell_decimals);
			cr_expect_leq(fabs(c - r->avg_reported_gbps), tol,
				      "%s: computed %.5f, log says %.*f (tolerance %.5f)", logs[i].file, c,
				      r->avg_decimals, r->avg_reported_gbps, tol);
			checked++;
		}
		/* and no "rows average ... but the log says" note */
		cr_expect(!has_issue(&is, HR_ISSUE_NOTE, -1, "rows average"), "%s", logs[i].file);
		hr_nt_log_release(&l);
		hr_issues_release(&is);
	}
	cr_assert_eq(checked, 7, "logs with an Avg line: %zu", checked);
}

/* The empty redop cell is read only where the cell under redop is a number:
 * a row one token short with a word there stays malformed. */
Test(nccltests, empty_redop_only_where_a_number_follows)
{
	char path[] = "/tmp/ch_nt_redop_XXXXXX";
	int fd = mkstemp(path);
	FILE *f;
	struct hr_nt_log l;
	struct hr_issues is;

	cr_assert(fd >= 0);
	f = fdopen(fd, "w");
	fputs("#       size         count      type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n"
	      "   268435456       1048576     float           520935    0.52    0.51  0e+00   519562    0.52    0.51  1e+00\n"
	      "   536870912       2097152     float     sum   1041974    0.52    0.51  0e+00  1041299    0.52    0.51\n"
	      "# Avg bus bandwidth    : 0.51\n",
	      f);
	fclose(f);
	parse(path, &l, &is);
	unlink(path);
	cr_assert_eq(l.nruns, 1);
	cr_assert_eq(l.runs[0].nrows, 1);
	cr_expect_str_eq(l.runs[0].rows[0].redop, "");
	cr_expect_float_eq(l.runs[0].rows[0].oop.time_us, 520935, 0);
	cr_expect_float_eq(l.runs[0].rows[0].ip.busbw_gbps, 0.51, 1e-12);
	cr_expect(has_issue(&is, HR_ISSUE_SKIPPED, 3, "expected 12 columns, found 11"));
	hr_nt_log_release(&l);
	hr_issues_release(&is);
}

Test(nccltests, tolerance_formula)
{
	struct hr_nt_run r;
	memset(&r, 0, sizeof(r));
	r.cell_decimals = 2;
	r.avg_decimals = 3;
	cr_assert_float_eq(hr_nt_avg_tolerance(&r), 0.005 + 0.0005, 1e-15);
}

Test(nccltests, device_lines_and_hosts)
{
	struct hr_nt_log l;
	struct hr_issues is;
	parse(LOGS "08_v100_dgx2_12gpu_allgather_oldfmt_oob_failed.txt", &l, &is);
	/* old format: no Group column, bus id as 0x.. */
	cr_assert_eq(l.runs[0].nranks_listed, 12);
	cr_expect_eq(l.runs[0].ranks[11].rank, 11);
	cr_expect_eq(l.runs[0].ranks[11].group, -1);
	cr_expect_str_eq(l.runs[0].ranks[11].bus_id, "0xe7");
	cr_expect_str_eq(l.runs[0].ranks[11].host, "node01");
	cr_expect_str_eq(l.runs[0].ranks[11].name, "Tesla V100-SXM3-32GB");
	/* rows of size 0 are rows too */
	cr_expect_float_eq(l.runs[0].rows[0].bytes, 0, 0);
	cr_expect_float_eq(l.runs[0].rows[30].ip.wrong, 1.0, 0);
	hr_nt_log_release(&l);
	hr_issues_release(&is);

	parse(LOGS "14_gh200_2node_2gpu_cscs_newfmt.txt", &l, &is);
	cr_assert_eq(l.runs[0].nranks_listed, 2);
	cr_expect_str_eq(l.runs[0].ranks[1].host, "node02");
	cr_expect_str_eq(l.runs[0].ranks[1].bus_id, "0009:01:00");
	cr_expect_str_eq(l.runs[0].tests_version, "2.18.2");
	cr_expect_float_eq(l.runs[0].min_bytes, 1048576, 0);
	cr_expect_float_eq(l.runs[0].max_bytes, 134217728, 0);
	cr_expect_float_eq(l.runs[0].rows[7].ip.busbw_gbps, 22.88, 1e-12);
	hr_nt_log_release(&l);
	hr_issues_release(&is);
}

Test(nccltests, crashed_and_truncated_logs_name_file_and_line)
{
	struct hr_nt_log l;
	struct hr_issues is;

	/* 05: 5 rows, then 'Test NCCL failure' lines, no footer */
	parse(LOGS "05_h100_128node_1024gpu_crash_at_32G.txt", &l, &is);
	cr_expect(l.runs[0].max_bytes_reduced);
	cr_expect_gt(l.runs[0].n_errors, 0);
	cr_expect(strstr(l.runs[0].first_error, "unhandled cuda error"));
	cr_expect(has_issue(&is, HR_ISSUE_TRUNCATED, -1, "no '# Avg bus bandwidth' footer"));
	cr_expect_str_eq(is.v[0].path, LOGS "05_h100_128node_1024gpu_crash_at_32G.txt");
	cr_expect_gt(is.v[0].line, 100);
	hr_nt_log_release(&l);
	hr_issues_release(&is);

	/* 11: crash before the table: line 14 holds the first failure */
	parse(LOGS "11_gh200_2node_8gpu_crash_device_busy.txt", &l, &is);
	cr_expect(has_issue(&is, HR_ISSUE_TRUNCATED, 14, "run failed before its results table"));
	cr_expect(has_issue(&is, HR_ISSUE_TRUNCATED, 14, "CUDA-capable device(s) is/are busy"));
	hr_nt_log_release(&l);
	hr_issues_release(&is);

	/* 12: crash right after the column header (line 8) */
	parse(LOGS "12_rtx5090_1node_2gpu_crash_after_header.txt", &l, &is);
	cr_expect(has_issue(&is, HR_ISSUE_TRUNCATED, 8, "results table has no rows"));
	hr_nt_log_release(&l);
	hr_issues_release(&is);

	/* a log cut in the middle of a row (line 49) */
	parse(DATA "nccl-tests/truncated_midrow.txt", &l, &is);
	cr_expect_eq(l.runs[0].nrows, 25);
	cr_expect(has_issue(&is, HR_ISSUE_SKIPPED, 49, "truncated results row (6 of 13 columns"));
	cr_expect(has_issue(&is, HR_ISSUE_TRUNCATED, 48, "no '# Avg bus bandwidth' footer"));
	hr_nt_log_release(&l);
	hr_issues_release(&is);
}

Test(nccltests, malformed_row_is_skipped_with_line_and_column_name)
{
	struct hr_nt_log l;
	struct hr_issues is;
	parse(DATA "nccl-tests/malformed_row.txt", &l, &is);
	cr_expect_eq(l.runs[0].nrows, 7);
	cr_expect(has_issue(&is, HR_ISSUE_SKIPPED, 16,
			    "column 7 (algbw, out-of-place) is not a valid number: '2O.5'"),
		  "issues: %zu, first: %s", is.n, is.n ? is.v[0].msg : "");
	/* the footer no longer matches the rows: said so, at the Avg line */
	cr_expect(has_issue(&is, HR_ISSUE_NOTE, 21, "the rows average"));
	hr_nt_log_release(&l);
	hr_issues_release(&is);
}

Test(nccltests, multi_algorithm_log_gives_one_run_per_algorithm)
{
	struct hr_nt_log l;
	struct hr_issues is;
	size_t j;
	parse(DATA "nccl-tests/multi_algo_allreduce.txt", &l, &is);
	cr_assert_eq(l.nruns, 2);
	cr_expect_str_eq(l.runs[0].algo, "ring");
	cr_expect_str_eq(l.runs[1].algo, "tree");
	for (j = 0; j < 2; j++) {
		cr_expect_eq(l.runs[j].nrows, 8);
		cr_expect(l.runs[j].complete);
		cr_expect_leq(fabs(hr_nt_avg_busbw(&l.runs[j]) - l.runs[j].avg_reported_gbps),
			      hr_nt_avg_tolerance(&l.runs[j]));
	}
	cr_expect_float_eq(hr_nt_large_busbw(&l.runs[1], NULL), 21.26, 1e-12); /* 22.86 x 0.93 */
	cr_expect_eq(is.n, 0);
	hr_nt_log_release(&l);
	hr_issues_release(&is);
}

Test(nccltests, json_output_parses_like_the_text)
{
	json_error_t je;
	json_t *doc = json_load_file(DATA "nccl-tests/gh200_allreduce.json", 0, &je);
	struct hr_nt_log l;
	struct hr_issues is = { 0 };
	const struct hr_nt_run *r;
	cr_assert(doc, "%s", je.text);
	cr_assert(hr_nt_json_detect(doc));
	cr_assert_eq(hr_nt_parse_json(DATA "nccl-tests/gh200_allreduce.json", doc, &l, &is), 0);
	r = &l.runs[0];
	cr_expect_eq(r->format, HR_NT_FMT_JSON);
	cr_expect_str_eq(r->collective, "all_reduce");
	cr_expect_str_eq(r->algo, "ring");
	cr_expect_str_eq(r->nccl_version, "2.30.7");
	cr_expect_eq(r->nrows, 8);
	cr_expect_eq(r->nranks_listed, 2);
	cr_expect_str_eq(r->ranks[1].host, "node02");
	cr_expect(r->complete);
	cr_expect_float_eq(r->rows[0].oop.time_us, 339.61, 1e-9);
	cr_expect_float_eq(r->rows[7].ip.busbw_gbps, 22.88, 1e-9);
	cr_expect_float_eq(r->rows[7].oop.wrong, 0, 0);
	/* the JSON average equals the rows' mean to its 6 printed decimals */
	cr_expect_leq(fabs(hr_nt_avg_busbw(r) - r->avg_reported_gbps), hr_nt_avg_tolerance(r));
	cr_expect_leq(hr_nt_avg_tolerance(r), 1.0000001e-6);
	cr_expect_eq(is.n, 0);
	hr_nt_log_release(&l);
	hr_issues_release(&is);
	json_decref(doc);
}

Test(nccltests, broken_json_gives_line_and_column)
{
	struct hr_fleet f;
	memset(&f, 0, sizeof(f));
	cr_assert_eq(hr_fleet_load_file(&f, DATA "bad/syntax_error.json", 1), 0);
	cr_assert_eq(f.issues.n, 1);
	cr_expect_eq(f.issues.v[0].kind, HR_ISSUE_SKIPPED);
	cr_expect_eq(f.issues.v[0].line, 5, "line %d", f.issues.v[0].line);
	cr_expect_gt(f.issues.v[0].column, 0);
	cr_expect(strstr(f.issues.v[0].msg, "malformed JSON"));
	cr_assert_eq(hr_fleet_load_file(&f, DATA "bad/truncated.json", 1), 0);
	cr_assert_eq(f.issues.n, 2);
	cr_expect_eq(f.issues.v[1].line, 1);
	cr_expect_gt(f.issues.v[1].column, 100);
	cr_expect(strstr(f.issues.v[1].msg, "end of"), "%s", f.issues.v[1].msg);
	cr_expect_eq(f.ngroups, 0);
	hr_fleet_release(&f);
}

Test(nccltests, logs_become_groups_with_hosts)
{
	struct hr_fleet f;
	size_t i;
	memset(&f, 0, sizeof(f));
	cr_assert_eq(hr_fleet_load_file(&f, LOGS "01_h100_2node_16gpu_gcp_a3mega_allreduce.txt", 1), 0);
	cr_assert_eq(hr_fleet_load_file(&f, LOGS "06_a100_1node_8gpu_oci_allreduce.txt", 1), 0);
	cr_assert_eq(hr_fleet_load_file(&f, DATA "nccl-tests/multi_algo_allreduce.txt", 1), 0);
	cr_assert_eq(f.ngroups, 4);
	cr_expect_eq(f.groups[0].kind, HR_G_PAIR);     /* node01 + node02 */
	cr_expect_eq(f.groups[0].nnodes, 2);
	cr_expect_eq(f.groups[1].kind, HR_G_NODE);     /* one host, 8 GPUs */
	cr_expect_str_eq(f.groups[1].gpu_name, "NVIDIA A100-SXM4-40GB");
	cr_expect_str_eq(f.groups[2].algo, "ring");
	cr_expect_str_eq(f.groups[3].algo, "tree");
	cr_expect(strstr(f.groups[3].name, "#2"));
	for (i = 0; i < f.ngroups; i++)
		cr_expect_eq(f.groups[i].complete, 1);
	cr_expect_float_eq(f.groups[0].reported_avg_gbps, 70.742, 1e-9);
	cr_expect_float_eq(f.groups[0].large_busbw_gbps, 338.82, 1e-9);
	cr_expect_eq(f.files_read, 3);
	hr_fleet_release(&f);
}

/* A run of @n ranks whose cells have busbw = factor x size / time. */
static void synth_run(struct hr_nt_run *r, struct hr_nt_row *rows, int n, double factor,
		      const char *redop, int root)
{
	int i;
	memset(r, 0, sizeof(*r));
	r->ngpus = n;
	r->nthread = 1;
	for (i = 0; i < 4; i++) {
		struct hr_nt_row *w = &rows[i];
		memset(w, 0, sizeof(*w));
		w->bytes = 1048576.0 * (1 << (2 * i));
		snprintf(w->redop, sizeof(w->redop), "%s", redop);
		w->root = root;
		w->oop.present = w->ip.present = 1;
		w->oop.time_us = w->ip.time_us = 100.0 * (1 << (2 * i));
		w->oop.algbw_gbps = w->ip.algbw_gbps = w->bytes / w->oop.time_us / 1e3;
		w->oop.busbw_gbps = w->ip.busbw_gbps = factor * w->oop.algbw_gbps;
	}
	r->rows = rows;
	r->nrows = 4;
}

Test(nccltests, collective_from_bus_factor_and_columns)
{
	static const struct {
		int n;
		double factor;
		const char *redop;
		int root;
		const char *hint, *want;
	} c[] = {
		{ 16, 2.0 * 15 / 16, "sum", -1, "", "all_reduce" },
		{ 16, 15.0 / 16, "sum", -1, "all_reduce", "reduce_scatter" }, /* the name is wrong */
		{ 16, 15.0 / 16, "none", -1, "", "all_gather" },
		{ 16, 15.0 / 16, "none", -1, "alltoall", "alltoall" },   /* the name chooses */
		{ 8, 1.0, "none", 0, "", "broadcast" },
		{ 8, 1.0, "sum", 0, "", "reduce" },
		{ 2, 1.0, "sum", -1, "", "all_reduce" },
		{ 2, 1.0, "sum", -1, "sendrecv", "sendrecv" },
		{ 12, 11.0 / 12, "", -1, "", "all_gather" },              /* old format */
		{ 12, 11.0 / 12, "", -1, "reduce_scatter", "reduce_scatter" },
		{ 8, 3.0, "sum", -1, "broadcast", "broadcast" },          /* no match: the name */
		{ 8, 3.0, "sum", -1, "", "unknown" },
	};
	size_t i;
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct hr_nt_run r;
		struct hr_nt_row rows[4];
		char coll[48], from[320];
		synth_run(&r, rows, c[i].n, c[i].factor, c[i].redop, c[i].root);
		hr_nt_infer_collective(&r, c[i].hint, coll, sizeof(coll), from, sizeof(from));
		cr_expect_str_eq(coll, c[i].want, "case %zu: %s (%s)", i, coll, from);
		cr_expect_float_eq(r.busbw_ratio, c[i].factor, 1e-9, "case %zu", i);
		/* the file name is named exactly where it decided */
		cr_expect_eq(strstr(from, "file name (last hint) chose") != NULL || strstr(from, "file name only") != NULL,
			     i == 3 || i == 7 || i == 9 || i == 10, "case %zu: %s", i, from);
	}
}

/* A soak (all_reduce_perf -N: every size printed again each cycle) is
 * reduced as it is read: one row per size, the mean of its prints, #wrong
 * added, the average over every printed cell unchanged (a 10^6-row log took
 * 42x its size in memory). Within one pass a size printed twice stays two
 * rows (see 08_..., whose three smallest sizes all print as 0). */
Test(nccltests, soak_cycles_reduced_to_one_row_per_size)
{
	static const char text[] =
		"# nThread 1 nGpus 2 minBytes 1024 maxBytes 4096 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n"
		"#\n"
		"#  Rank  0 Group  0 Pid   100 on     node01 device  0 [0000:04:00] NVIDIA H100 80GB HBM3\n"
		"#  Rank  1 Group  0 Pid   101 on     node01 device  1 [0000:05:00] NVIDIA H100 80GB HBM3\n"
		"#\n"
		"#                                                              out-of-place                       in-place          \n"
		"#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
		"#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       \n"
		"        1024           256     float     sum      -1    10.00    0.10    0.10      0    10.00    0.10    0.10      0\n"
		"        2048           512     float     sum      -1    20.00    0.10    0.10      0    20.00    0.10    0.10      0\n"
		"        4096          1024     float     sum      -1    40.00    0.10    1.00      0    40.00    0.10    1.00      0\n"
		"        1024           256     float     sum      -1    12.00    0.08    0.20      0    10.00    0.10    0.10      0\n"
		"        2048           512     float     sum      -1    20.00    0.10    0.10      1    20.00    0.10    0.10      0\n"
		"        4096          1024     float     sum      -1    40.00    0.10    2.00      0    40.00    0.10    1.00      0\n"
		"        1024           256     float     sum      -1    14.00    0.06    0.30      0    10.00    0.10    0.10      0\n"
		"        2048           512     float     sum      -1    20.00    0.10    0.10      2    20.00    0.10    0.10      0\n"
		"        4096          1024     float     sum      -1    40.00    0.10    3.00      0    40.00    0.10    1.00      0\n"
		"# Out of bounds values : 3 FAILED\n"
		"# Avg bus bandwidth    : 0.583333\n"
		"#\n";
	struct hr_nt_log l;
	struct hr_issues is = { 0 };
	const struct hr_nt_run *r;
	double bytes;

	cr_assert_eq(hr_nt_parse_text("soak.txt", text, &l, &is), 0);
	cr_assert_eq(l.nruns, 1);
	r = &l.runs[0];
	cr_assert_eq(r->nrows, 3, "one row per size, not %zu", r->nrows);
	cr_expect_eq(r->rows_merged, 6);
	cr_expect_eq(r->rows[0].reps, 3);
	cr_expect_float_eq(r->rows[0].oop.busbw_gbps, 0.2, 1e-12);
	cr_expect_float_eq(r->rows[0].oop.time_us, 12.0, 1e-12);
	cr_expect_float_eq(r->rows[0].oop.algbw_gbps, 0.08, 1e-12);
	cr_expect_float_eq(r->rows[1].oop.wrong, 3.0, 0);
	cr_expect_eq(r->rows[0].line, 9, "the first print's line");
	cr_expect_float_eq(hr_nt_large_busbw(r, &bytes), 2.0, 1e-12);
	cr_expect_float_eq(bytes, 4096, 0);
	cr_expect_float_eq(hr_nt_wrong_total(r), 3.0, 0);
	/* the mean over all 18 printed cells, as the log's Avg line says */
	cr_expect_float_eq(hr_nt_avg_busbw(r), 10.5 / 18, 1e-12);
	cr_expect(!has_issue(&is, HR_ISSUE_NOTE, -1, "rows are missing or were edited"));
	cr_expect(has_issue(&is, HR_ISSUE_NOTE, 7, "6 rows print a size again (nccl-tests -N cycles): 3 sizes kept, each the mean of its prints"));
	hr_nt_log_release(&l);
	hr_issues_release(&is);
}
