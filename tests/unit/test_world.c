/*
 * The drivers' MPI world (bench/common/ch_world.c) without a launcher, as
 * roofline runs it (only_launched): a world of one without MPI, whose
 * collective calls are local, and the parse-on-every-rank step.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/ch_common.h"
#include "bench/common/ch_opts.h"
#include "bench/common/ch_world.h"

static void no_launcher(void)
{
	unsetenv("OMPI_COMM_WORLD_SIZE");
	unsetenv("PMIX_RANK");
	unsetenv("PMI_SIZE");
}

static const struct ch_world_how solo = { .only_launched = 1, .hosts_by_name = 1, .host_len = CH_WORLD_HOST_MAX };

Test(world, one_without_a_launcher, .init = no_launcher)
{
	struct ch_world w;
	char host[CH_WORLD_HOST_MAX] = "";
	int argc = 1;
	char *args[] = { "roofline", NULL }, **argv = args;

	gethostname(host, sizeof(host) - 1);
	cr_assert_eq(ch_world_init(&argc, &argv, &solo, &w), 0);
	cr_assert(!w.active && w.rank == 0 && w.size == 1, "a world of one without MPI");
	cr_assert(w.local_rank == 0 && w.local_size == 1 && w.nhosts == 1, "one rank on one host");
	cr_assert_str_eq(w.host, host);
	/* the one rank's layout, as an MPI world of one would have it */
	cr_assert_not_null(ch_world_info(&w, 0));
	cr_assert(ch_world_info(&w, 0)->local_rank == 0 && ch_world_info(&w, 0)->local_size == 1 &&
		  ch_world_info(&w, 0)->host_node == 0 && ch_world_info(&w, 0)->pid == (long)getpid());
	cr_assert_str_eq(ch_world_info(&w, 0)->host, host);
	cr_assert_null(ch_world_info(&w, 1));
	cr_assert_eq(argc, 1);
	ch_world_finalize(&w);
	ch_world_finalize(&w); /* safe twice */
}

Test(world, host_name_cut_to_host_len, .init = no_launcher)
{
	struct ch_world_how how = solo;
	struct ch_world w;
	char host[CH_WORLD_HOST_MAX] = "";
	int argc = 1;
	char *args[] = { "x", NULL }, **argv = args;

	gethostname(host, sizeof(host) - 1);
	how.host_len = 4; /* 3 bytes and the terminator */
	cr_assert_eq(ch_world_init(&argc, &argv, &how, &w), 0);
	cr_assert_leq(strlen(w.host), 3);
	cr_assert_eq(strncmp(w.host, host, strlen(w.host)), 0);
	cr_assert_eq(strlen(w.host), strlen(host) < 3 ? strlen(host) : 3);
}

Test(world, collectives_are_local_when_not_active)
{
	struct ch_world w = { .size = 1, .local_size = 1, .nhosts = 1, .host = "test" };
	json_t *local = json_pack("[{s:i}]", "id", 7), *all, *ranks;

	cr_assert_eq(ch_world_agree(&w, CH_ERR_USAGE), CH_ERR_USAGE);
	cr_assert_eq(ch_world_agree(&w, CH_OK), CH_OK);
	cr_assert_eq(ch_world_worst(&w, CH_ERR_CHECK), CH_ERR_CHECK);
	cr_assert_eq(ch_world_worst(&w, CH_ERR_UNAVAILABLE), CH_ERR_UNAVAILABLE);
	ch_world_barrier(&w);
	all = ch_world_gather_json(&w, local);
	cr_assert_eq(all, local); /* a new reference to the same array, no "rank" added */
	cr_assert_eq(local->refcount, 2);
	cr_assert_null(json_object_get(json_array_get(all, 0), "rank"));
	json_decref(all);
	ranks = ch_world_ranks_json(&w);
	cr_assert(json_is_null(ranks));
	json_decref(ranks);
	json_decref(local);
}

struct fake_opts {
	struct ch_common_opts common;
	int calls;
	int rc;
};

static int usage_calls;

static void fake_usage(FILE *f)
{
	(void)f;
	usage_calls++;
}

static int fake_parse(int argc, char **argv, void *out)
{
	struct fake_opts *o = out;
	(void)argv;
	ch_common_opts_init(&o->common);
	o->calls++;
	o->common.help = argc > 1;
	return o->rc;
}

static const struct ch_world_cli fake_cli = { .tool = "fake", .parse = fake_parse, .usage = fake_usage };

Test(world, parse_runs_the_parser_prints_help_once_and_returns_its_status)
{
	struct ch_world w = { .size = 1, .local_size = 1, .nhosts = 1, .host = "test" };
	struct fake_opts o = { .calls = 0, .rc = 0 };
	char *help[] = { "fake", "-h", NULL }, *plain[] = { "fake", NULL };

	usage_calls = 0;
	cr_assert_eq(ch_world_parse(&w, &fake_cli, 2, help, &o, &o.common), 0);
	cr_assert_eq(o.calls, 1);
	cr_assert_eq(usage_calls, 1);
	cr_assert_eq(ch_world_parse(&w, &fake_cli, 1, plain, &o, &o.common), 0);
	cr_assert_eq(usage_calls, 1);
	o.rc = CH_ERR_USAGE; /* a bad command line: no help, the status comes back */
	cr_assert_eq(ch_world_parse(&w, &fake_cli, 2, help, &o, &o.common), CH_ERR_USAGE);
	cr_assert_eq(o.calls, 3);
	cr_assert_eq(usage_calls, 1);
}
