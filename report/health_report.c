/*
 * health_report - fold result files and nccl-tests logs into a
 * cluster-health profile (hr_report.h), or run a subcommand:
 * `health_report canary ...` (hr_canary.h), `health_report history ...`
 * (hr_history.h), `health_report steps ...` (hr_steps_cmd.h), `health_report rules`
 * (hr_rules.h), `health_report kernel-log ...` (hr_kernlog_cmd.h). See README.md and docs/health_report.md.
 */
#include <string.h>

#include "base/ch_common.h"
#include "report/hr_report.h"
#include "report/canary/hr_canary.h"
#include "report/history/hr_history.h"
#include "report/judge/hr_rules.h"
#include "report/read/hr_model.h"
#include "report/hr_steps_cmd.h"
#include "report/hr_kernlog_cmd.h"

int main(int argc, char **argv)
{
	/* messages of the subcommands read "health_report canary: ..." */
	ch_set_prog("health_report");
	hr_json_alloc_init(); /* before any JSON value is made */
	if (argc > 1 && !strcmp(argv[1], "canary"))
		return hr_canary_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "history"))
		return hr_history_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "rules"))
		return hr_rules_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "steps"))
		return hr_steps_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "kernel-log"))
		return hr_kernlog_main(argc - 1, argv + 1);
	return hr_report_main(argc, argv);
}
