/*
 * ch_loader_proc.c - the parser of the per-thread schedstat loader_contention
 * reads (run-queue delay); /proc/stat and /proc/pressure/cpu are read with
 * hw/ch_procfs.h. It takes text, so it is tested on known inputs.
 */
#include "bench/loader/ch_loader.h"
#include "base/ch_common.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int ch_lc_parse_schedstat(const char *text, uint64_t *run_ns, uint64_t *wait_ns,
			  uint64_t *slices)
{
	unsigned long long a, b, c;
	char extra;
	if (sscanf(text, "%llu %llu %llu %c", &a, &b, &c, &extra) != 3)
		return CH_ERR_RUNTIME;
	*run_ns = a;
	*wait_ns = b;
	*slices = c;
	return 0;
}
