/*
 * hr_hist_out.h - what `health_report history` prints and writes after its
 * check: one line per regression (REGRESSED, WARN) and per far night not
 * judged (info), the drain candidates, the --json document and the --prom
 * text (docs/workflows.md, "Change detection").
 */
#ifndef HR_HIST_OUT_H
#define HR_HIST_OUT_H

#include <stddef.h>
#include <jansson.h>

#include "report/history/hr_history.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * hr_history_report - print the check's findings and write its files.
 * @cfg:        [in] the check's settings (printed into the JSON document).
 * @json_path:  [in] the --json FILE, or NULL (written atomically).
 * @prom_path:  [in] the --prom FILE, or NULL (written atomically).
 * @night:      [in] the night checked ("" when the history is empty).
 * @reg, @nreg: [in] hr_history_check()'s findings: REGRESSED (persisted),
 *              WARN, and info (r.info: "one night far, not judged until it
 *              repeats": printed with -q off only by the caller's choice of
 *              stdout, kept out of "regressions", the drain candidates, the
 *              exit status and --prom; listed in the JSON's "far_once").
 * @cnt:        [in] series checked and not judged.
 * @kernel_log: [in] the kernel_log part of the JSON (borrowed), or NULL.
 * @quiet:      [in] 1: no info lines on stdout.
 * Returns 0, or CH_ERR_RUNTIME when a file cannot be written (printed).
 */
int hr_history_report(const struct hr_check_cfg *cfg, const char *json_path, const char *prom_path,
		      const char *night, const struct hr_regression *reg, size_t nreg,
		      const struct hr_check_count *cnt, json_t *kernel_log, int quiet);

#ifdef __cplusplus
}
#endif
#endif
