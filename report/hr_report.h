/*
 * hr_report.h - the `health_report [options] INPUT...` command: read the
 * inputs, build the profile, write profile.json, report.md, report.html
 * and health.prom, print the terminal summary.
 */
#ifndef HR_REPORT_H
#define HR_REPORT_H

#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * hr_report_main - run the report command.
 * @argc, @argv: [in] the command line (argv[0] the program name); options
 *               are described by hr_report_usage() and docs/usage.md.
 * Returns the process exit code: 0 no FAIL; 1 at least one FAIL (drain
 * candidates listed); 2 usage or input error (bad option or value, an
 * input that does not exist, no usable input at all, a bad --expect
 * file, or with --strict any skipped input; the outputs are still written
 * when the inputs could be read); 4 run-time error (cannot create the
 * output directory or write a file, out of memory).
 */
int hr_report_main(int argc, char **argv);

/**
 * hr_report_usage - print the usage text (options, exit codes, examples).
 * @f: [in] stream. @subcommands: [in] non-zero to list the canary and
 * history subcommands.
 */
void hr_report_usage(FILE *f, int subcommands);

#ifdef __cplusplus
}
#endif
#endif
