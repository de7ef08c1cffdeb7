/*
 * ch_world.c - MPI launch and rank layout shared by the drivers (see
 * ch_world.h).
 */
#include "bench/common/ch_world.h"
#include "base/ch_common.h"

#include <mpi.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int ch_world_launched(void)
{
	return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_SIZE");
}

/* Print what @call returned (rc) when it is not MPI_SUCCESS; returns 1 then. */
static int mpi_failed(int rc, const char *call)
{
	char msg[MPI_MAX_ERROR_STRING];
	int len = 0;

	if (rc == MPI_SUCCESS)
		return 0;
	msg[0] = '\0';
	MPI_Error_string(rc, msg, &len);
	ch_error("%s failed: %s", call, msg);
	return 1;
}

/* After MPI started: a step that fails leaves the other ranks waiting. */
static void __attribute__((noreturn)) abort_world(const struct ch_world *w, const char *what)
{
	ch_error("cannot set up the MPI world (rank %d): %s", w->rank, what);
	MPI_Abort(MPI_COMM_WORLD, CH_EXIT_RUNTIME);
	_exit(CH_EXIT_RUNTIME);
}

/* The layout of every rank: the shared-memory split, the node index (rank
 * of the node's first rank among all first ranks) and the host names. */
static void find_layout(const struct ch_world_how *how, struct ch_world *w)
{
	struct ch_world_rank me;
	MPI_Comm ctrl, local, leaders = MPI_COMM_NULL;
	int node = 0, maxnode = 0, i, j;

	w->info = calloc((size_t)w->size, sizeof(*w->info));
	if (!w->info)
		abort_world(w, "out of memory");
	if (MPI_Comm_dup(MPI_COMM_WORLD, &ctrl) != MPI_SUCCESS ||
	    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, w->rank, MPI_INFO_NULL, &local) != MPI_SUCCESS)
		abort_world(w, "cannot create the communicators");
	w->ctrl = (int)MPI_Comm_c2f(ctrl);
	w->local = (int)MPI_Comm_c2f(local);
	MPI_Comm_rank(local, &w->local_rank);
	MPI_Comm_size(local, &w->local_size);
	if (MPI_Comm_split(ctrl, w->local_rank == 0 ? 0 : MPI_UNDEFINED, w->rank, &leaders) != MPI_SUCCESS)
		abort_world(w, "cannot number the nodes");
	if (leaders != MPI_COMM_NULL) {
		MPI_Comm_rank(leaders, &node);
		MPI_Comm_free(&leaders);
	}
	MPI_Bcast(&node, 1, MPI_INT, 0, local);
	MPI_Allreduce(&node, &maxnode, 1, MPI_INT, MPI_MAX, ctrl);
	memset(&me, 0, sizeof(me));
	me.local_rank = w->local_rank;
	me.local_size = w->local_size;
	me.host_node = node;
	me.pid = (long)getpid();
	memcpy(me.host, w->host, sizeof(me.host));
	if (MPI_Allgather(&me, (int)sizeof(me), MPI_BYTE, w->info, (int)sizeof(me), MPI_BYTE, ctrl) != MPI_SUCCESS)
		abort_world(w, "cannot exchange the rank layout");
	if (!how->hosts_by_name) {
		w->nhosts = maxnode + 1;
		return;
	}
	w->nhosts = 0;
	for (i = 0; i < w->size; i++) {
		for (j = 0; j < i; j++)
			if (!strcmp(w->info[i].host, w->info[j].host))
				break;
		if (j == i)
			w->nhosts++;
	}
}

int ch_world_init(int *argc, char ***argv, const struct ch_world_how *how, struct ch_world *w)
{
	int len = how->host_len, provided = 0;

	if (len < 2 || len > CH_WORLD_HOST_MAX)
		len = CH_WORLD_HOST_MAX;
	memset(w, 0, sizeof(*w));
	w->thread_level = -1;
	w->size = w->local_size = w->nhosts = 1;
	w->ctrl = w->local = -1;
	gethostname(w->host, (size_t)len - 1);
	if (how->only_launched && !ch_world_launched()) {
		/* a world of one without MPI: the one rank's layout, so that
		 * ch_world_info() answers as in an MPI world of one */
		w->info = calloc(1, sizeof(*w->info));
		if (w->info) {
			w->info[0].local_size = 1;
			w->info[0].pid = (long)getpid();
			memcpy(w->info[0].host, w->host, sizeof(w->info[0].host));
		}
		return 0;
	}
	if (how->funneled ? mpi_failed(MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread")
			  : mpi_failed(MPI_Init(argc, argv), "MPI_Init"))
		return CH_ERR_RUNTIME;
	w->active = 1;
	if (MPI_Query_thread(&w->thread_level) != MPI_SUCCESS)
		w->thread_level = -1;
	MPI_Comm_rank(MPI_COMM_WORLD, &w->rank);
	MPI_Comm_size(MPI_COMM_WORLD, &w->size);
	find_layout(how, w);
	return 0;
}

void ch_world_finalize(struct ch_world *w)
{
	MPI_Comm c;

	if (!w->active) {
		free(w->info);
		w->info = NULL;
		return;
	}
	c = MPI_Comm_f2c(w->ctrl);
	MPI_Comm_free(&c);
	c = MPI_Comm_f2c(w->local);
	MPI_Comm_free(&c);
	MPI_Finalize();
	free(w->info);
	w->info = NULL;
	w->active = 0;
}

const struct ch_world_rank *ch_world_info(const struct ch_world *w, int r)
{
	return (w->info && r >= 0 && r < w->size) ? &w->info[r] : NULL;
}

int ch_world_agree(const struct ch_world *w, int status)
{
	int all = status;

	if (!w->active)
		return status;
	MPI_Allreduce(&status, &all, 1, MPI_INT, MPI_MIN, MPI_Comm_f2c(w->ctrl));
	return all;
}

/* severity order: failed check > runtime > usage > unavailable > ok */
static int severity(int status)
{
	switch (status) {
	case CH_OK: return 0;
	case CH_ERR_UNAVAILABLE: return 1;
	case CH_ERR_USAGE: return 2;
	case CH_ERR_RUNTIME: return 3;
	case CH_ERR_CHECK: return 4;
	default: return 3;
	}
}

int ch_world_worst(const struct ch_world *w, int status)
{
	static const int by_sev[] = { CH_OK, CH_ERR_UNAVAILABLE, CH_ERR_USAGE, CH_ERR_RUNTIME, CH_ERR_CHECK };
	int mine = severity(status), worst = mine;

	if (!w->active)
		return status;
	MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, MPI_Comm_f2c(w->ctrl));
	return by_sev[worst];
}

void ch_world_barrier(const struct ch_world *w)
{
	if (w->active)
		MPI_Barrier(MPI_Comm_f2c(w->ctrl));
}

json_t *ch_world_gather_json(const struct ch_world *w, json_t *local)
{
	MPI_Comm ctrl;
	char *text, *buf = NULL;
	int len, *lens = NULL, *offs = NULL, total = 0, i;
	json_t *out = NULL;

	if (!w->active)
		return json_incref(local);
	ctrl = MPI_Comm_f2c(w->ctrl);
	text = json_dumps(local, JSON_COMPACT);
	len = text ? (int)strlen(text) + 1 : 0;
	if (w->rank == 0) {
		lens = calloc((size_t)w->size, sizeof(int));
		offs = calloc((size_t)w->size, sizeof(int));
	}
	MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, ctrl);
	if (w->rank == 0) {
		for (i = 0; i < w->size; i++) {
			offs[i] = total;
			total += lens[i];
		}
		buf = malloc((size_t)total + 1);
	}
	MPI_Gatherv(text, len, MPI_CHAR, buf, lens, offs, MPI_CHAR, 0, ctrl);
	if (w->rank == 0 && buf) {
		out = json_array();
		for (i = 0; i < w->size; i++) {
			json_t *arr, *dev;
			size_t k;
			if (!lens[i])
				continue;
			arr = json_loads(buf + offs[i], 0, NULL);
			json_array_foreach(arr, k, dev) {
				json_object_set_new(dev, "rank", json_integer(i));
				json_array_append(out, dev);
			}
			json_decref(arr);
		}
	}
	free(text);
	free(buf);
	free(lens);
	free(offs);
	return out;
}

json_t *ch_world_bcast_json(const struct ch_world *w, json_t *value)
{
	MPI_Comm ctrl;
	char *text = NULL;
	int len = 0;
	json_t *out;

	if (!w->active)
		return json_incref(value);
	ctrl = MPI_Comm_f2c(w->ctrl);
	if (w->rank == 0) {
		text = value ? json_dumps(value, JSON_COMPACT | JSON_ENCODE_ANY) : NULL;
		len = text ? (int)strlen(text) + 1 : 0;
	}
	MPI_Bcast(&len, 1, MPI_INT, 0, ctrl);
	if (w->rank != 0 && len > 0)
		text = malloc((size_t)len);
	if (len > 0 && !text) {
		/* the others would wait for this rank's part of the exchange */
		ch_error("rank %d: out of memory receiving %d bytes from rank 0", w->rank, len);
		MPI_Abort(MPI_COMM_WORLD, CH_EXIT_RUNTIME);
	}
	if (len > 0)
		MPI_Bcast(text, len, MPI_CHAR, 0, ctrl);
	if (w->rank == 0)
		out = text ? json_incref(value) : NULL;
	else
		out = len > 0 ? json_loads(text, JSON_DECODE_ANY, NULL) : NULL;
	free(text);
	return out;
}

json_t *ch_world_ranks_json(const struct ch_world *w)
{
	json_t *o, *layout;
	int i;

	if (!w->active)
		return json_null();
	if (w->rank != 0)
		return NULL;
	o = json_object();
	layout = json_array();
	for (i = 0; i < w->size; i++) {
		json_t *e = json_object();
		json_object_set_new(e, "rank", json_integer(i));
		json_object_set_new(e, "host", json_string(w->info[i].host));
		json_object_set_new(e, "local_rank", json_integer(w->info[i].local_rank));
		json_array_append_new(layout, e);
	}
	json_object_set_new(o, "world_size", json_integer(w->size));
	json_object_set_new(o, "layout", layout);
	return o;
}
