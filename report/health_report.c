/*
 * health_report - fold result files and nccl-tests logs into a
 * cluster-health profile (hr_report.h), or run a subcommand:
 * `health_report canary ...` (hr_canary.h), `health_report history ...`
 * (hr_history.h). See README.md and docs/health_report.md.
 */
#include <string.h>

#include "base/ch_common.h"
#include "report/hr_report.h"
#if __has_include("hr_canary.h")
#include "report/hr_canary.h"
#define HAVE_HR_CANARY 1
#endif
#if __has_include("hr_history.h")
#include "report/hr_history.h"
#define HAVE_HR_HISTORY 1
#endif

int main(int argc, char **argv)
{
	/* messages of the subcommands read "health_report canary: ..." */
	ch_set_prog("health_report");
#ifdef HAVE_HR_CANARY
	if (argc > 1 && !strcmp(argv[1], "canary"))
		return hr_canary_main(argc - 1, argv + 1);
#endif
#ifdef HAVE_HR_HISTORY
	if (argc > 1 && !strcmp(argv[1], "history"))
		return hr_history_main(argc - 1, argv + 1);
#endif
	return hr_report_main(argc, argv);
}
