/*
 * ch_ar_table.h - allreduce_bw's stdout table in nccl-tests' layout
 * (all_reduce_perf, nccl-tests 2.13 and later: src/common.cu), so that
 * parsers written for nccl-tests read it unchanged: the three column header
 * lines, one row per size with out-of-place then in-place time, algbw,
 * busbw and #wrong, and the "# Out of bounds values" and "# Avg bus
 * bandwidth" footer.
 */
#ifndef CH_AR_TABLE_H
#define CH_AR_TABLE_H

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One half of a row (out-of-place or in-place). */
struct ch_ar_cell {
	double time_us;     /* the time column */
	double algbw_gbps;
	double busbw_gbps;
	long long wrong;    /* wrong elements summed over ranks; -1: not checked */
};

/**
 * ch_ar_format_time - nccl-tests' time column: "%7.0f" from 10000 us,
 * "%7.1f" from 100 us, else "%7.2f".
 * @buf: [out] at least 32 bytes. Returns @buf.
 */
char *ch_ar_format_time(double us, char *buf, size_t n);

/** ch_ar_table_header - the three column header lines. */
void ch_ar_table_header(FILE *f);

/**
 * ch_ar_table_row - one row: size (bytes), count (elements), type, redop,
 * root (-1 for all-reduce), then the out-of-place and in-place cells.
 */
void ch_ar_table_row(FILE *f, uint64_t bytes, uint64_t count, const char *type,
		     const char *redop, int root, const struct ch_ar_cell *oop,
		     const struct ch_ar_cell *ip);

/**
 * ch_ar_table_footer - "# Out of bounds values : N OK|FAILED",
 * "# Avg bus bandwidth    : X " and "#".
 * @oob: [in] number of cells with wrong elements (nccl-tests counts one per
 *       failing out-of-place or in-place test).
 * @avg_busbw_gbps: [in] mean of every busbw cell (printed with %g).
 */
void ch_ar_table_footer(FILE *f, long oob, double avg_busbw_gbps);

#ifdef __cplusplus
}
#endif
#endif
