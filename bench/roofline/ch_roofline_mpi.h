/*
 * ch_roofline_mpi.h - roofline under mpirun: one rank per GPU, rank 0
 * gathers every rank's devices and writes the result. The MPI header stays
 * in ch_roofline_mpi.c.
 */
#ifndef CH_ROOFLINE_MPI_H
#define CH_ROOFLINE_MPI_H

#include <jansson.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ch_rl_mpi {
	int active;       /* 1: launched by an MPI launcher, MPI initialised here */
	int rank, size;   /* world rank and size (0 and 1 when not active) */
	int local_rank;   /* rank among the ranks of this host */
	int local_size;
	int nhosts;       /* distinct hosts among the ranks */
	char host[256];   /* this rank's host name */
};

/**
 * ch_rl_mpi_init - initialise MPI when the process was started by a
 * launcher (Open MPI's OMPI_COMM_WORLD_SIZE, PMIx's PMIX_RANK or PMI's
 * PMI_SIZE in the environment); otherwise a single process with rank 0.
 * @argc, @argv: [in,out] as for MPI_Init.  @m: [out] layout.
 * Returns 0, or CH_ERR_RUNTIME when MPI_Init fails (message printed).
 */
int ch_rl_mpi_init(int *argc, char ***argv, struct ch_rl_mpi *m);

/**
 * ch_rl_mpi_gather - collect every rank's device objects on rank 0.
 * @local: [in] this rank's array of device objects (not stolen).
 * Each gathered device gets "rank" and "host" keys. Returns, on rank 0, a
 * new array of all ranks' devices in rank order; on other ranks NULL. When
 * MPI is not active, a new reference to @local.
 */
json_t *ch_rl_mpi_gather(const struct ch_rl_mpi *m, json_t *local);

/**
 * ch_rl_mpi_worst - the most severe status over all ranks (a failed check
 * first, then run-time error, usage, unavailable, ok). Returns @status
 * when MPI is not active.
 */
int ch_rl_mpi_worst(const struct ch_rl_mpi *m, int status);

/**
 * ch_rl_mpi_ranks_json - the envelope's "ranks" object: {world_size,
 * layout: [{rank, host, local_rank}]} (collective: every rank calls it);
 * JSON null when MPI is not active; NULL on other ranks than 0.
 */
json_t *ch_rl_mpi_ranks_json(const struct ch_rl_mpi *m);

/** ch_rl_mpi_barrier - wait for every rank (no-op when not active). */
void ch_rl_mpi_barrier(const struct ch_rl_mpi *m);

/** ch_rl_mpi_finalize - MPI_Finalize when active. */
void ch_rl_mpi_finalize(struct ch_rl_mpi *m);

#ifdef __cplusplus
}
#endif
#endif
