/*
 * checkpoint_io - what a synchronous checkpoint costs on the file system a
 * job writes to, and what staging it saves; every file read back. See
 * README.md and docs/checkpoint_io.md.
 *
 *   mpirun -np N checkpoint_io --dir DIR --size SIZE [OPTION]...
 */
#include "bench/common/ch_ar_world.h"
#include "bench/checkpoint/ch_ckpt.h"
#include "bench/checkpoint/ch_ckpt_run.h"
#include "base/ch_common.h"

static int parse(int argc, char **argv, void *out)
{
	return ch_ckpt_opts_parse(argc, argv, out);
}

static const struct ch_world_cli cli = { .tool = "checkpoint_io", .parse = parse, .usage = ch_ckpt_usage };

int main(int argc, char **argv)
{
	struct ch_ar_world *w;
	struct ch_ckpt_opts o;
	int rc;

	ch_set_prog("checkpoint_io");
	ch_ckpt_block_signals();
	rc = ch_ar_world_init(&argc, &argv, CH_CKPT_DEFAULT_TIMEOUT_SEC, &w);
	if (rc)
		return ch_exit_code(rc);
	rc = ch_world_parse(ch_ar_world_base(w), &cli, argc, argv, &o, &o.common);
	if (rc == 0 && !o.common.help && !o.common.version)
		rc = ch_ckpt_run(w, &o, argc, argv);
	return ch_ar_world_finalize(w, rc);
}
