/*
 * stoprank.c - a rank that stops (SIGSTOP) in MPI_Init, for tests, as an
 * LD_PRELOAD shim over MPI's profiling interface: the set-up of
 * allreduce_bw and checkpoint_io (before their watchdog runs) must still
 * end within --timeout + 5 s on every rank.
 *
 *   CH_STOP_RANK=3          the world rank that stops (OMPI_COMM_WORLD_RANK)
 *   CH_STOP_WHEN=before     before MPI_Init or MPI_Init_thread, whichever
 *                           the binary calls (the others wait in MPI's
 *                           start), "after" (they wait in the first
 *                           collective of the rank layout), or
 *                           "allreduce:N" before the rank's Nth MPI_Allreduce
 *                           (a later step of the set-up: the result file is
 *                           made by then)
 *
 * Built by `make test` as $(B)/tests/libstoprank.so; used by
 * tests/cli/reliability.sh. Not part of any binary.
 */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void maybe_stop(const char *when)
{
	const char *r = getenv("CH_STOP_RANK"), *me = getenv("OMPI_COMM_WORLD_RANK");
	const char *w = getenv("CH_STOP_WHEN");

	if (r && me && !strcmp(r, me) && !strcmp(w ? w : "before", when))
		raise(SIGSTOP);
}

int MPI_Init(int *argc, char ***argv)
{
	int rc;
	maybe_stop("before");
	rc = PMPI_Init(argc, argv);
	maybe_stop("after");
	return rc;
}

int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	int rc;
	maybe_stop("before");
	rc = PMPI_Init_thread(argc, argv, required, provided);
	maybe_stop("after");
	return rc;
}

int MPI_Allreduce(const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c)
{
	static int calls;
	char when[32];
	snprintf(when, sizeof(when), "allreduce:%d", ++calls);
	maybe_stop(when);
	return PMPI_Allreduce(sb, rb, n, t, op, c);
}
