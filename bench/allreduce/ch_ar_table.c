#include "bench/allreduce/ch_ar_table.h"

char *ch_ar_format_time(double us, char *buf, size_t n)
{
	if (us >= 10000.0)
		snprintf(buf, n, "%7.0f", us);
	else if (us >= 100.0)
		snprintf(buf, n, "%7.1f", us);
	else
		snprintf(buf, n, "%7.2f", us);
	return buf;
}

void ch_ar_table_header(FILE *f)
{
	fprintf(f, "# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          \n",
		"", "", "", "", "");
	fprintf(f, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s %6s  %7s  %6s  %6s %6s\n",
		"size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong",
		"time", "algbw", "busbw", "#wrong");
	fprintf(f, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %5s  %7s  %6s  %6s  %5s\n",
		"(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)",
		"(GB/s)", "");
}

static void cell(FILE *f, const struct ch_ar_cell *c)
{
	char t[32];
	fprintf(f, "  %7s  %6.2f  %6.2f  %5lli", ch_ar_format_time(c->time_us, t, sizeof(t)),
		c->algbw_gbps, c->busbw_gbps, c->wrong);
}

void ch_ar_table_row(FILE *f, uint64_t bytes, uint64_t count, const char *type,
		     const char *redop, int root, const struct ch_ar_cell *oop,
		     const struct ch_ar_cell *ip)
{
	fprintf(f, "%12lli  %12lli  %8s  %6s  %6i", (long long)bytes, (long long)count, type, redop, root);
	cell(f, oop);
	cell(f, ip);
	fputc('\n', f);
}

void ch_ar_table_footer(FILE *f, long oob, double avg_busbw_gbps)
{
	fprintf(f, "# Out of bounds values : %ld %s\n", oob, oob ? "FAILED" : "OK");
	fprintf(f, "# Avg bus bandwidth    : %g \n", avg_busbw_gbps);
	fprintf(f, "#\n");
}
