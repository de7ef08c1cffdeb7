/*
 * slowallreduce.c - a fault in the all-reduce of one message size, for
 * tests, as an LD_PRELOAD shim (PMPI interposition): MPI_Allreduce calls of
 * exactly $CH_SLOWAR_BYTES bytes (count x the datatype's size) sleep first.
 *
 *   CH_SLOWAR_BYTES=1048576    the size that is slow (bytes per rank)
 *   CH_SLOWAR_USEC=100000      microseconds before each such call
 *   CH_SLOWAR_MODE=every       every call of that size (a real fault: the
 *                              confirmation at the end of the sweep is slow too)
 *   CH_SLOWAR_MODE=first       only until the process has made an all-reduce
 *                              larger than that size (the first pass of an
 *                              ascending sweep: a transient fault, the
 *                              confirmation is not slowed)
 *
 * Built by `make test` as $(B)/tests/libslowallreduce.so; used by
 * tests/cli/confirm.sh under mpirun -x LD_PRELOAD. allreduce_bw's own
 * control exchanges are all-reduces of a few bytes and are never slowed.
 * Not part of any binary.
 */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long long slow_bytes = -1;
static long slow_usec;
static int first_only, past, ready;

static void setup(void)
{
	const char *b = getenv("CH_SLOWAR_BYTES"), *u = getenv("CH_SLOWAR_USEC"), *m = getenv("CH_SLOWAR_MODE");

	slow_bytes = b && *b ? atoll(b) : -1;
	slow_usec = u && *u ? atol(u) : 0;
	first_only = m && !strcmp(m, "first");
	ready = 1;
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
		  MPI_Comm comm)
{
	long long bytes;
	int size = 0;

	if (!ready)
		setup();
	PMPI_Type_size(datatype, &size);
	bytes = (long long)count * size;
	if (slow_bytes > 0 && bytes > slow_bytes)
		past = 1;
	if (slow_bytes > 0 && bytes == slow_bytes && slow_usec > 0 && !(first_only && past)) {
		struct timespec ts = { slow_usec / 1000000, (slow_usec % 1000000) * 1000 };
		while (nanosleep(&ts, &ts) != 0)
			;
	}
	return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
}
