/*
 * hr_kernlog_cmd.h - the `health_report kernel-log` command: the GPU and
 * NIC faults in the kernel log (hw/ch_kmsg.h: NVRM Xid, NVSwitch SXid,
 * "fallen off the bus", PCIe AER errors, mlx5_core link flaps) since the
 * last run or in a time window, mapped to GPU index and UUID (and NIC) by
 * the bus ids of a result file's inventory, classified by the Xid table
 * (docs/xid.md) and printed one line each in NHC's style
 * ("ERROR: clusterhealth: gpu1 Xid 79 (fallen off the bus) at 02:14:07 UTC:
 * drain (...)"), most severe first. Method: docs/xid.md.
 */
#ifndef HR_KERNLOG_CMD_H
#define HR_KERNLOG_CMD_H

#ifdef __cplusplus
extern "C" {
#endif

/**
 * hr_kernlog_main - entry point of the `kernel-log` subcommand.
 * @argc, @argv: [in] argv[0] is the subcommand's name; options: see
 *               `health_report kernel-log --help`.
 * Returns the process exit code: 0 no fault that drains (information
 * lines only, or none); 1 a fault whose action is reset, drain or reboot
 * (or a link that flapped --flaps times); 2 usage or input error (a bad
 * option, an unreadable log, inventory or Xid table); 4 run-time error
 * (the result or state file cannot be written).
 */
int hr_kernlog_main(int argc, char **argv);

#ifdef __cplusplus
}
#endif
#endif
