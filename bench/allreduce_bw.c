/*
 * allreduce_bw - all-reduce bus bandwidth across sizes, ranks, algorithms
 * and groups of ranks (NCCL or Open MPI), with every result checked and the
 * slow rank or node named. See README.md and docs/allreduce_bw.md.
 *
 *   mpirun -np N allreduce_bw [OPTION]...
 */
#include "bench/allreduce/ch_ar_opts.h"
#include "bench/allreduce/ch_ar_run.h"
#include "bench/common/ch_ar_world.h"
#include "base/ch_common.h"

#ifdef __SANITIZE_ADDRESS__
/*
 * Sanitizer builds only (make SANITIZE=1): Open MPI dlopens its components
 * and dlcloses them in MPI_Finalize, so the fast unwinder's one-frame stacks
 * of their allocations end in an unloaded "<unknown module>" that no
 * suppression can name. Full unwinding reaches libmpi / libopen-pal, which
 * tests/lsan.supp suppresses. ASAN_OPTIONS in the environment still wins.
 */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "fast_unwind_on_malloc=0";
}
#endif

static int parse(int argc, char **argv, void *out)
{
	return ch_ar_opts_parse(argc, argv, out);
}

static const struct ch_world_cli cli = { .tool = "allreduce_bw", .parse = parse, .usage = ch_ar_usage };

int main(int argc, char **argv)
{
	struct ch_ar_world *w;
	struct ch_ar_opts o;
	int rc;

	ch_set_prog("allreduce_bw");
	rc = ch_ar_world_init(&argc, &argv, CH_AR_DEFAULT_TIMEOUT_SEC, &w);
	if (rc)
		return ch_exit_code(rc);
	rc = ch_world_parse(ch_ar_world_base(w), &cli, argc, argv, &o, &o.common);
	if (rc == 0 && !o.common.help && !o.common.version)
		rc = ch_ar_run(w, &o, argc, argv);
	return ch_ar_world_finalize(w, rc);
}
