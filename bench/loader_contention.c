/*
 * loader_contention - do dataloader workers on the feeder threads' CPUs
 * stall the GPU feed, and which placement and worker count avoid it?
 * Thin main: parse options, run the sweep (or plan for another machine),
 * emit the result file. The model lives in bench/loader/.
 */
#include "base/ch_common.h"
#include "bench/loader/ch_loader.h"
#include "bench/common/ch_opts.h"
#include "base/ch_result.h"

#include <getopt.h>
#include <stdio.h>

static int lc_opt(int c, const char *arg, void *o)
{
	return ch_lc_opt(c, arg, o);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = { CH_LC_LONGOPTS, CH_COMMON_LONGOPTS, { NULL, 0, NULL, 0 } };
	struct ch_common_opts co;
	struct ch_lc_opts o;
	struct ch_result *r = NULL;
	char reason[1024] = "";
	int rc;

	ch_set_prog("loader_contention");
	ch_common_opts_init(&co);
	ch_lc_opts_init(&o);
	if ((rc = ch_opts_getopt(argc, argv, CH_COMMON_SHORTOPTS, longopts, lc_opt, &o, &co)) != 0)
		return ch_exit_code(rc);
	if (co.help) {
		ch_lc_help(stdout);
		return CH_EXIT_OK;
	}
	if (co.version) {
		ch_print_version("loader_contention");
		return CH_EXIT_OK;
	}
	if (optind < argc)
		return ch_exit_code(ch_usage_error("unexpected argument '%s'", argv[optind]));
	if (co.min_time_sec >= 0) {
		if (co.min_time_sec < 0.1)
			return ch_exit_code(ch_usage_error("--min-time '%g' is below 0.1 s", co.min_time_sec));
		o.duration_sec = co.min_time_sec;
	}
	if ((rc = ch_lc_opts_check(&o)) != 0)
		return ch_exit_code(rc);
	if ((rc = ch_run_begin("loader_contention", argc, argv, &co, &r)) != 0)
		return ch_exit_code(rc);

	rc = o.topology ? ch_lc_plan_mode(&o, r, reason, sizeof(reason))
			: ch_lc_sweep(&o, r, reason, sizeof(reason));
	if (ch_result_finish(r, rc, reason[0] ? "%s" : NULL, reason) != 0 && rc == 0)
		rc = CH_ERR_RUNTIME;
	ch_result_free(r);
	return ch_exit_code(rc);
}
