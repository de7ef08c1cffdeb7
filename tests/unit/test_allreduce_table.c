#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/allreduce/ch_ar_table.h"

#define LOG01 "tests/data/nccl-tests-logs/01_h100_2node_16gpu_gcp_a3mega_allreduce.txt"

/* The lines of a real nccl-tests log (nccl-tests 2.13 format). */
static char **read_lines(const char *path, int *n)
{
	FILE *f = fopen(path, "r");
	char **v = NULL, buf[1024];
	*n = 0;
	if (!f)
		return NULL;
	while (fgets(buf, sizeof(buf), f)) {
		v = realloc(v, (size_t)(*n + 1) * sizeof(*v));
		v[(*n)++] = strdup(buf);
	}
	fclose(f);
	return v;
}

static int find_line(char **v, int n, const char *prefix)
{
	int i;
	for (i = 0; i < n; i++)
		if (!strncmp(v[i], prefix, strlen(prefix)))
			return i;
	return -1;
}

Test(allreduce_table, header_matches_nccl_tests_log)
{
	char **v, *text = NULL;
	size_t len = 0;
	int n, i;
	FILE *f;

	v = read_lines(LOG01, &n);
	if (!v)
		cr_assert_fail("%s not found (tests run from the repository root)", LOG01);
	i = find_line(v, n, "#                                                              out-of-place");
	cr_assert_geq(i, 0);
	f = open_memstream(&text, &len);
	ch_ar_table_header(f);
	fclose(f);
	{
		char expect[4096];
		snprintf(expect, sizeof(expect), "%s%s%s", v[i], v[i + 1], v[i + 2]);
		cr_assert_str_eq(text, expect);
	}
	free(text);
}

Test(allreduce_table, rows_and_footer_match_nccl_tests_log)
{
	char **v, *text = NULL;
	size_t len = 0;
	int n;
	FILE *f;
	struct ch_ar_cell oop = { 135.8, 0.00, 0.00, 0 }, ip = { 123.5, 0.00, 0.00, 0 };
	struct ch_ar_cell big_o = { 47535, 180.71, 338.82, 0 }, big_i = { 47743, 179.92, 337.35, 0 };
	struct ch_ar_cell mid_o = { 3817.5, 140.63, 263.69, 0 }, mid_i = { 3828.0, 140.25, 262.97, 0 };

	v = read_lines(LOG01, &n);
	if (!v)
		cr_assert_fail("%s not found", LOG01);
	f = open_memstream(&text, &len);
	ch_ar_table_row(f, 8, 2, "float", "sum", -1, &oop, &ip);
	ch_ar_table_row(f, 536870912, 134217728, "float", "sum", -1, &mid_o, &mid_i);
	ch_ar_table_row(f, 8589934592ULL, 2147483648ULL, "float", "sum", -1, &big_o, &big_i);
	ch_ar_table_footer(f, 0, 70.742);
	fclose(f);
	{
		char expect[8192];
		int a = find_line(v, n, "           8             2"), b = find_line(v, n, "   536870912"),
		    c = find_line(v, n, "  8589934592"), d = find_line(v, n, "# Out of bounds");
		cr_assert(a >= 0 && b >= 0 && c >= 0 && d >= 0);
		snprintf(expect, sizeof(expect), "%s%s%s%s%s#\n", v[a], v[b], v[c], v[d], v[d + 1]);
		cr_assert_str_eq(text, expect);
	}
	free(text);
}

Test(allreduce_table, failed_footer_and_unchecked_cells)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct ch_ar_cell c = { 12.5, 1.0, 1.5, -1 };
	ch_ar_table_row(f, 64, 16, "half", "max", -1, &c, &c);
	ch_ar_table_footer(f, 4, 4.79995);
	fclose(f);
	cr_assert_str_eq(text,
		"          64            16      half     max      -1    12.50    1.00    1.50     -1    12.50    1.00    1.50     -1\n"
		"# Out of bounds values : 4 FAILED\n"
		"# Avg bus bandwidth    : 4.79995 \n"
		"#\n");
	free(text);
}

Test(allreduce_table, time_column_precision)
{
	char b[32];
	cr_assert_str_eq(ch_ar_format_time(99.994, b, sizeof(b)), "  99.99");
	cr_assert_str_eq(ch_ar_format_time(100.0, b, sizeof(b)), "  100.0");
	cr_assert_str_eq(ch_ar_format_time(9999.94, b, sizeof(b)), " 9999.9");
	cr_assert_str_eq(ch_ar_format_time(10000.0, b, sizeof(b)), "  10000");
	cr_assert_str_eq(ch_ar_format_time(1234567.0, b, sizeof(b)), "1234567");
}
