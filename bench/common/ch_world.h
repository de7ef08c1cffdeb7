/*
 * ch_world.h - the MPI world of a benchmark: launch, the rank layout (rank,
 * size, rank and size on the node, node count, every rank's host name and
 * pid), and the few exchanges over the whole world that the drivers share
 * (agreement on a status, a JSON gather to rank 0, the ranks object of the
 * result envelope; parsing the command line on every rank is
 * ch_world_parse() in bench/common/ch_opts.h, which uses this). Used by
 * roofline, allreduce_bw and checkpoint_io; what differs between them is
 * a struct ch_world_how.
 *
 * Everything here is collective over MPI_COMM_WORLD (through a duplicate of
 * it, the control communicator) unless it says "local". When the world is
 * not active (roofline started without a launcher) every call is local and
 * describes a world of one. No MPI types cross this header: communicators
 * are Fortran handles (MPI_Comm_f2c() turns them back).
 */
#ifndef CH_WORLD_H
#define CH_WORLD_H

#include <jansson.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Room for a host name, terminator included (more than Linux's 64). */
#define CH_WORLD_HOST_MAX 256

/* One world rank, known on every rank after ch_world_init(). */
struct ch_world_rank {
	int local_rank;  /* rank among the ranks sharing memory (MPI_COMM_TYPE_SHARED) */
	int local_size;
	int host_node;   /* node index from the shared-memory split, 0..nodes-1 */
	long pid;
	char host[CH_WORLD_HOST_MAX]; /* gethostname(), cut to ch_world_how.host_len - 1 bytes */
};

/* How a driver wants its world set up. */
struct ch_world_how {
	/* 1: initialise MPI only when a launcher started the process (Open MPI's
	 * OMPI_COMM_WORLD_SIZE, PMIx's PMIX_RANK or PMI's PMI_SIZE in the
	 * environment), else a world of one without MPI (roofline);
	 * 0: always initialise MPI (a singleton without a launcher) */
	int only_launched;
	/* 1: MPI_Init_thread with MPI_THREAD_FUNNELED (only the main thread calls
	 * MPI; other threads may exist); 0: MPI_Init */
	int funneled;
	/* 1: nhosts counts the distinct host names; 0: the nodes of the
	 * shared-memory split */
	int hosts_by_name;
	/* bytes of the host name kept, terminator included: 2..CH_WORLD_HOST_MAX
	 * (allreduce_bw and checkpoint_io 64, roofline 256) */
	int host_len;
};

struct ch_world {
	int active;       /* 1: MPI initialised by ch_world_init() */
	int rank, size;   /* world rank and size (0 and 1 when not active) */
	int local_rank;   /* rank among the ranks of this node (shared-memory split) */
	int local_size;
	int nhosts;       /* hosts among the ranks (see ch_world_how.hosts_by_name) */
	char host[CH_WORLD_HOST_MAX]; /* this rank's host name */
	/* when active: */
	struct ch_world_rank *info; /* size entries, every rank's layout (owned; without MPI the one
				     * rank's: local rank 0 of 1, node 0, this host and pid) */
	int ctrl;         /* Fortran handle of the control communicator (a dup of the world); -1 when not active */
	int local;        /* Fortran handle of this node's communicator; -1 when not active */
	int thread_level; /* MPI_Query_thread() right after MPI's start (MPI_THREAD_SINGLE ...);
			   * -1 when not active. Read then: MPI_T_init_thread() in Open MPI
			   * rewrites what MPI_Query_thread() answers later */
};

/**
 * ch_world_init - start MPI as @how says and find the layout.
 * @argc, @argv: [in,out] as for MPI_Init.
 * @how: [in] the driver's choices (borrowed).
 * @w:   [out] the world; release with ch_world_finalize().
 * Returns 0, or CH_ERR_RUNTIME when MPI does not start (message printed).
 * A failure after MPI started (creating the communicators, the exchange of
 * the layout) prints a message and calls MPI_Abort with exit code 4: the
 * other ranks would wait for this one.
 */
int ch_world_init(int *argc, char ***argv, const struct ch_world_how *how, struct ch_world *w);

/**
 * ch_world_launched - local: 1 when a launcher started this process (Open
 * MPI's OMPI_COMM_WORLD_SIZE, PMIx's PMIX_RANK or PMI's PMI_SIZE in the
 * environment), 0 when it was started by hand.
 */
int ch_world_launched(void);

/**
 * ch_world_finalize - free the communicators and the layout, MPI_Finalize
 * when active. Safe to call twice.
 */
void ch_world_finalize(struct ch_world *w);

/**
 * ch_world_info - local: rank @r's layout, NULL when @r is out of range
 * (a world of one without MPI has rank 0's).
 */
const struct ch_world_rank *ch_world_info(const struct ch_world *w, int r);

/**
 * ch_world_agree - the most negative (most severe in ch_status order) of
 * every rank's @status (0 or a negative ch_status), on every rank.
 * Returns @status when the world is not active.
 */
int ch_world_agree(const struct ch_world *w, int status);

/**
 * ch_world_worst - the most severe status over all ranks in roofline's
 * order: a failed check first, then run-time error, usage, unavailable, ok.
 * Returns it on every rank; @status when the world is not active.
 */
int ch_world_worst(const struct ch_world *w, int status);

/** ch_world_barrier - MPI_Barrier on the control communicator (no-op when not active). */
void ch_world_barrier(const struct ch_world *w);

/**
 * ch_world_gather_json - collect every rank's array of objects on rank 0.
 * @local: [in] this rank's array of objects (borrowed; its objects get a
 *         "rank" key when gathered).
 * Returns, on rank 0, a new array of all ranks' objects in rank order, each
 * with "rank" set to the rank it came from; NULL on other ranks or when out
 * of memory. When the world is not active, a new reference to @local.
 */
json_t *ch_world_gather_json(const struct ch_world *w, json_t *local);

/**
 * ch_world_bcast_json - world rank 0's @value on every rank.
 * @value: [in] rank 0: the value to send (borrowed); other ranks: ignored.
 * Returns a new reference on every rank (rank 0: @value itself), NULL when
 * @value cannot be serialised (on every rank). A rank that cannot allocate
 * the text calls MPI_Abort with exit code 4 (the others would wait for it).
 * When the world is not active, a new reference to @value.
 */
json_t *ch_world_bcast_json(const struct ch_world *w, json_t *value);

/**
 * ch_world_ranks_json - local: the result envelope's "ranks" object,
 * {world_size, layout: [{rank, host, local_rank}]}, on rank 0 (new
 * reference); NULL on other ranks; JSON null when the world is not active.
 */
json_t *ch_world_ranks_json(const struct ch_world *w);

#ifdef __cplusplus
}
#endif
#endif
