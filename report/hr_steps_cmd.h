/*
 * hr_steps_cmd.h - the `health_report steps LOG|DIR...` command: what a
 * training job's own step logs say (per-rank step times, stragglers, the
 * time split, input wait, checkpoint stalls, tokens/s and MFU, and the
 * scaling from a baseline run). Method: docs/canary.md, "Step logs".
 */
#ifndef HR_STEPS_CMD_H
#define HR_STEPS_CMD_H

#include "report/read/hr_steps_model.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * hr_steps_main - entry point of the `steps` subcommand.
 * @argc, @argv: [in] argv[0] is the subcommand's name; options (see
 *               `health_report steps --help`) and step logs or directories.
 * Returns the process exit code: 0 the logs were read (and, with
 * --fail-on-straggler, no straggler); 1 a straggler with
 * --fail-on-straggler; 2 usage or input error (no step record in the
 * inputs, a path that does not exist, a bad option, with --strict any
 * skipped file); 4 run-time error.
 */
int hr_steps_main(int argc, char **argv);

/**
 * hr_steps_peak_tflops - the dense datasheet peak of a GPU for a dtype.
 * @gpu: [in] a device name ("H100 SXM", "NVIDIA H100 80GB HBM3").
 * @dtype: [in] "bf16", "fp16", "fp8", "tf32", "fp32", "fp64" (NULL: bf16).
 * @from: [out] "datasheet H100 SXM, bf16" (at least 96 bytes). @n: its size.
 * Returns TFLOP/s, or NAN (message printed) when the GPU is not in the
 * table or the dtype unknown or not supported by it.
 */
double hr_steps_peak_tflops(const char *gpu, const char *dtype, char *from, size_t n);

#ifdef __cplusplus
}
#endif
#endif
