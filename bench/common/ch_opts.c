#include "bench/common/ch_opts.h"
#include "base/ch_common.h"
#include "hw/ch_energy.h"
#include "hw/ch_host.h"
#include "bench/common/ch_world.h"
#include "hw/ch_inventory.h"
#include "hw/ch_procfs.h"
#include "hw/ch_sysfs.h"
#include "base/ch_parse.h"

#include <hwloc.h>
#include <jansson.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void ch_common_opts_init(struct ch_common_opts *o)
{
	o->json_path = NULL;
	o->force = 0;
	o->quiet = 0;
	o->min_time_sec = -1.0;
	o->help = 0;
	o->version = 0;
}

int ch_common_opt(int c, const char *arg, struct ch_common_opts *o)
{
	switch (c) {
	case CH_OPT_JSON:
		if (!arg || !*arg)
			return ch_usage_error("empty file name for --json");
		o->json_path = arg;
		return 1;
	case CH_OPT_FORCE:
		o->force = 1;
		return 1;
	case CH_OPT_MIN_TIME:
		return ch_parse_double("--min-time", arg, 0.0, 3600.0, &o->min_time_sec) ? CH_ERR_USAGE : 1;
	case 'q':
		o->quiet = 1;
		ch_set_quiet(1);
		return 1;
	case 'h':
		o->help = 1;
		return 1;
	case 'V':
		o->version = 1;
		return 1;
	case '?':
	case ':':
		/* ch_opts_getopt() words it (ch_option_error()); a caller of its own */
		return ch_usage_error("unknown option");
	default:
		return 0;
	}
}

int ch_opts_getopt(int argc, char **argv, const char *shortopts, const struct option *longopts,
		   int (*tool)(int c, const char *arg, void *ctx), void *ctx, struct ch_common_opts *common)
{
	int c, rc;

	optind = 0; /* glibc: start again from argv[1], forgetting any earlier scan */
	opterr = 0; /* ch_option_error() words what was wrong */
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		if (c == '?' || c == ':')
			return ch_option_error(argv, shortopts, longopts);
		rc = tool(c, optarg, ctx);
		if (rc == 0)
			rc = ch_common_opt(c, optarg, common);
		if (rc < 0)
			return rc;
		if (rc == 0)
			return ch_usage_error("option '%c' is not handled", c);
	}
	return 0;
}

void ch_common_help(FILE *f)
{
	fputs("Common options:\n"
	      "  --json FILE        write the result document (JSON) to FILE, atomically,\n"
	      "                     after every measurement\n"
	      "  --force            replace FILE if it already exists (only a regular file\n"
	      "                     that clusterhealth wrote)\n"
	      "  --min-time SEC     repeat each measurement until its samples add up to\n"
	      "                     SEC seconds, 0 to 3600 (adaptive repetition; roofline\n"
	      "                     stops a point at 100000 timed calls even when they\n"
	      "                     add up to less)\n"
	      "  -q, --quiet        print only errors and the result table\n"
	      "  -h, --help         show this help and exit\n"
	      "  -V, --version      show the version and exit\n", f);
}

void ch_print_version(const char *tool)
{
	printf("%s (clusterhealth) %s (git %s)\n", tool, CH_VERSION, ch_git_rev());
}

/* What the conditions' "after" needs: the procfs root and the run's
 * processes on this host, fixed when the run begins (read from the signal
 * thread too, so never changed). */
struct run_cond {
	char root[4096];
	char sysroot[4096]; /* sysfs root: the RDMA port counters at the end */
	int npids;
	long pids[];
};

static json_t *conditions_after(void *ctx, const json_t *now)
{
	const struct run_cond *c = ctx;
	struct ch_host_load after;
	json_t *out;

	if (!json_is_object(now))
		return NULL;
	ch_host_load_sample(c->root, CH_HOST_LOAD_INTERVAL_SEC, c->pids, c->npids, &after);
	out = ch_conditions_set_after(now, &after, NULL);
	/* the RDMA ports' counters at the end, against host.inventory's at the start */
	if (out)
		json_object_set_new(out, "rdma_counters_end", ch_sysfs_rdma_counters(c->sysroot));
	return out;
}

/* The procfs root and the processes of @w on this process's host (this
 * process alone without a world); NULL when out of memory. */
static struct run_cond *run_cond_new(const struct ch_world *w)
{
	const struct ch_world_rank *me = w && w->active ? ch_world_info(w, w->rank) : NULL;
	struct run_cond *c;
	int i, n = 0;

	c = calloc(1, sizeof(*c) + (size_t)(me ? w->size : 1) * sizeof(long));
	if (!c)
		return NULL;
	snprintf(c->root, sizeof(c->root), "%s", ch_procfs_root());
	snprintf(c->sysroot, sizeof(c->sysroot), "%s", ch_sysfs_root());
	if (me) {
		for (i = 0; i < w->size; i++) {
			const struct ch_world_rank *ri = ch_world_info(w, i);
			if (ri && ri->host_node == me->host_node)
				c->pids[n++] = ri->pid;
		}
	}
	if (!n)
		c->pids[n++] = (long)getpid();
	c->npids = n;
	return c;
}

json_t *ch_run_conditions_end(const json_t *cond, const struct ch_world *w)
{
	struct run_cond *c = json_is_object(cond) ? run_cond_new(w) : NULL;
	json_t *out = c ? conditions_after(c, cond) : NULL;

	free(c);
	return out;
}

/* "conditions" with "before" sampled now; the hook that fills "after" */
static int begin_conditions(struct ch_result *r, const struct ch_world *w)
{
	struct ch_host_load before;
	struct run_cond *c = run_cond_new(w);
	json_t *cond;

	if (!c)
		return CH_ERR_RUNTIME;
	ch_host_load_sample(c->root, CH_HOST_LOAD_INTERVAL_SEC, c->pids, c->npids, &before);
	cond = ch_conditions_json(&before, NULL, c->npids, 1);
	if (!cond || ch_result_set(r, "conditions", cond)) {
		free(c);
		return CH_ERR_RUNTIME;
	}
	ch_result_on_finish(r, "conditions", conditions_after, free, c);
	return 0;
}

int ch_run_set_threads(struct ch_result *r, int n)
{
	json_t *cond = json_object_get(ch_result_doc(r), "conditions");
	json_t *p = json_object_get(cond, "procs_on_host");

	if (!json_is_integer(p))
		return CH_ERR_USAGE;
	return ch_conditions_set_load(cond, (int)json_integer_value(p), n);
}

int ch_run_begin(const char *tool, int argc, char **argv,
		 const struct ch_common_opts *o, struct ch_result **out)
{
	return ch_run_begin_world(tool, argc, argv, o, NULL, out);
}

int ch_run_begin_world(const char *tool, int argc, char **argv, const struct ch_common_opts *o,
		       const struct ch_world *w, struct ch_result **out)
{
	struct ch_result *r = ch_result_new(tool, argc, argv);
	hwloc_topology_t topo;
	unsigned v = hwloc_get_api_version();
	char buf[32];
	int rc;

	*out = NULL;
	if (!r) {
		ch_error("out of memory");
		return CH_ERR_RUNTIME;
	}
	if ((rc = ch_result_set_path(r, o->json_path, o->force)) != 0) {
		ch_result_free(r);
		return rc;
	}
	snprintf(buf, sizeof(buf), "%u.%u.%u", v >> 16, (v >> 8) & 0xff, v & 0xff);
	ch_result_set_software(r, "hwloc", buf);
	ch_result_set_software(r, "jansson", jansson_version_str());
	if (ch_topo_load(NULL, &topo) == 0) {
		json_t *h = ch_host_describe(topo);
		if (h) {
			json_object_set_new(h, "inventory", ch_inventory_collect(topo, ch_sysfs_root()));
			ch_result_set(r, "host", h);
		}
		hwloc_topology_destroy(topo);
	} else {
		json_object_set_new(json_object_get(ch_result_doc(r), "host"), "inventory",
				    ch_inventory_collect(NULL, ch_sysfs_root()));
	}
	if ((rc = ch_result_energy_start(r)) != 0 || (rc = begin_conditions(r, w)) != 0 ||
	    (rc = ch_result_catch_signals(r)) != 0) {
		ch_result_free(r);
		return rc;
	}
	*out = r;
	return 0;
}

/* Run @fn(@argc, @argv, @out) with stdout and stderr sent to /dev/null on
 * every rank but world rank 0, so that a step every rank runs speaks once. */
static int quiet_call(const struct ch_world *w, int (*fn)(int argc, char **argv, void *out), int argc,
		      char **argv, void *out)
{
	int rc, out_fd = -1, err_fd = -1, null_fd = -1;

	if (w->rank != 0) {
		/* every rank runs the same step; only rank 0 speaks */
		fflush(stdout);
		fflush(stderr);
		null_fd = open("/dev/null", O_WRONLY);
		out_fd = dup(1);
		err_fd = dup(2);
		if (null_fd >= 0 && out_fd >= 0 && err_fd >= 0) {
			dup2(null_fd, 1);
			dup2(null_fd, 2);
		}
	}
	rc = fn(argc, argv, out);
	if (w->rank != 0) {
		fflush(stdout);
		fflush(stderr);
		if (out_fd >= 0 && err_fd >= 0) {
			dup2(out_fd, 1);
			dup2(err_fd, 2);
		}
		if (out_fd >= 0)
			close(out_fd);
		if (err_fd >= 0)
			close(err_fd);
		if (null_fd >= 0)
			close(null_fd);
	}
	return rc;
}

int ch_world_parse(const struct ch_world *w, const struct ch_world_cli *cli, int argc, char **argv, void *out,
		   const struct ch_common_opts *common)
{
	int rc = quiet_call(w, cli->parse, argc, argv, out);

	if (w->rank == 0 && rc == 0 && common->help)
		cli->usage(stdout);
	else if (w->rank == 0 && rc == 0 && common->version)
		ch_print_version(cli->tool);
	fflush(stdout);
	return ch_world_agree(w, rc);
}
