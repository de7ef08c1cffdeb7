#include "bench/roofline/ch_roofline_mpi.h"
#include "base/ch_common.h"

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MPI_CHECK(call)                                                             \
	do {                                                                        \
		int mpi_rc_ = (call);                                               \
		if (mpi_rc_ != MPI_SUCCESS) {                                       \
			char mpi_msg_[MPI_MAX_ERROR_STRING];                        \
			int mpi_len_ = 0;                                           \
			MPI_Error_string(mpi_rc_, mpi_msg_, &mpi_len_);             \
			ch_error("%s:%d: %s failed: %s", __FILE__, __LINE__, #call, \
				 mpi_msg_);                                         \
			return CH_ERR_RUNTIME;                                      \
		}                                                                   \
	} while (0)

static int launched(void)
{
	return getenv("OMPI_COMM_WORLD_SIZE") || getenv("PMIX_RANK") || getenv("PMI_SIZE");
}

int ch_rl_mpi_init(int *argc, char ***argv, struct ch_rl_mpi *m)
{
	MPI_Comm local;
	char *all;
	int i, j;

	memset(m, 0, sizeof(*m));
	m->size = m->local_size = m->nhosts = 1;
	gethostname(m->host, sizeof(m->host) - 1);
	if (!launched())
		return 0;
	MPI_CHECK(MPI_Init(argc, argv));
	m->active = 1;
	MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &m->rank));
	MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &m->size));
	MPI_CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, m->rank, MPI_INFO_NULL, &local));
	MPI_CHECK(MPI_Comm_rank(local, &m->local_rank));
	MPI_CHECK(MPI_Comm_size(local, &m->local_size));
	MPI_Comm_free(&local);
	all = calloc((size_t)m->size, sizeof(m->host));
	if (!all)
		return CH_ERR_RUNTIME;
	MPI_CHECK(MPI_Allgather(m->host, sizeof(m->host), MPI_CHAR, all, sizeof(m->host), MPI_CHAR, MPI_COMM_WORLD));
	m->nhosts = 0;
	for (i = 0; i < m->size; i++) {
		for (j = 0; j < i; j++)
			if (!strcmp(all + (size_t)i * sizeof(m->host), all + (size_t)j * sizeof(m->host)))
				break;
		if (j == i)
			m->nhosts++;
	}
	free(all);
	return 0;
}

json_t *ch_rl_mpi_gather(const struct ch_rl_mpi *m, json_t *local)
{
	char *text;
	int len, *lens = NULL, *offs = NULL, total = 0, i;
	char *buf = NULL;
	json_t *out = NULL;

	if (!m->active)
		return json_incref(local);
	text = json_dumps(local, JSON_COMPACT);
	len = text ? (int)strlen(text) + 1 : 0;
	if (m->rank == 0) {
		lens = calloc((size_t)m->size, sizeof(int));
		offs = calloc((size_t)m->size, sizeof(int));
	}
	MPI_Gather(&len, 1, MPI_INT, lens, 1, MPI_INT, 0, MPI_COMM_WORLD);
	if (m->rank == 0) {
		for (i = 0; i < m->size; i++) {
			offs[i] = total;
			total += lens[i];
		}
		buf = malloc((size_t)total + 1);
	}
	MPI_Gatherv(text, len, MPI_CHAR, buf, lens, offs, MPI_CHAR, 0, MPI_COMM_WORLD);
	if (m->rank == 0 && buf) {
		out = json_array();
		for (i = 0; i < m->size; i++) {
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

int ch_rl_mpi_worst(const struct ch_rl_mpi *m, int status)
{
	static const int by_sev[] = { CH_OK, CH_ERR_UNAVAILABLE, CH_ERR_USAGE, CH_ERR_RUNTIME, CH_ERR_CHECK };
	int mine = severity(status), worst = mine;
	if (!m->active)
		return status;
	MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	return by_sev[worst];
}

json_t *ch_rl_mpi_ranks_json(const struct ch_rl_mpi *m)
{
	struct { int local_rank; char host[256]; } me, *all = NULL;
	json_t *o, *layout;
	int i;

	if (!m->active)
		return json_null();
	me.local_rank = m->local_rank;
	memcpy(me.host, m->host, sizeof(me.host));
	if (m->rank == 0)
		all = calloc((size_t)m->size, sizeof(*all));
	MPI_Gather(&me, (int)sizeof(me), MPI_BYTE, all, (int)sizeof(me), MPI_BYTE, 0, MPI_COMM_WORLD);
	if (m->rank != 0)
		return NULL;
	o = json_object();
	layout = json_array();
	for (i = 0; all && i < m->size; i++) {
		json_t *e = json_object();
		json_object_set_new(e, "rank", json_integer(i));
		json_object_set_new(e, "host", json_string(all[i].host));
		json_object_set_new(e, "local_rank", json_integer(all[i].local_rank));
		json_array_append_new(layout, e);
	}
	json_object_set_new(o, "world_size", json_integer(m->size));
	json_object_set_new(o, "layout", layout);
	free(all);
	return o;
}

void ch_rl_mpi_barrier(const struct ch_rl_mpi *m)
{
	if (m->active)
		MPI_Barrier(MPI_COMM_WORLD);
}

void ch_rl_mpi_finalize(struct ch_rl_mpi *m)
{
	if (m->active)
		MPI_Finalize();
	m->active = 0;
}
