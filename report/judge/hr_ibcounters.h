/*
 * hr_ibcounters.h - health_report's rules on the RDMA port counters a run
 * saw: the difference between each port's counters at the start of the run
 * (host.inventory.nics[].counters) and at its end
 * (conditions.rdma_counters_end), both read from sysfs by the binaries
 * (hw/ch_sysfs.h; docs/results-schema.md).
 *
 * Rules, thresholds and sources: docs/health_report.md, "InfiniBand and
 * RoCE port counters". Every finding's text names the counts, the
 * threshold and its source.
 */
#ifndef HR_IBCOUNTERS_H
#define HR_IBCOUNTERS_H

#include <jansson.h>

#ifdef __cplusplus
extern "C" {
#endif

/* a finding's level */
enum { HR_IB_INFO = 0, HR_IB_WARN = 1, HR_IB_FAIL = 2 };

/* One finding on one port: @subject "mlx5_2 port 1", @text the counts,
 * threshold and source (borrowed for the call). */
typedef void (*hr_ib_emit_fn)(void *ctx, int level, const char *code, const char *subject, const char *text);

/**
 * hr_ib_counters_judge - judge every RDMA port found in both @nics (the
 * inventory's "nics" array at the start: records of kind "rdma" with a
 * "counters" object) and @end (an object {utc, ports: [{device, port,
 * counters}]}), by device and port.
 * Codes: ib_link_down (FAIL: link_downed rose), ib_link_recovery (WARN:
 * link_error_recovery rose), ib_port_errors (WARN: an error counter rose by
 * its threshold or more), ib_counters_not_judged (INFO: a counter went down,
 * cleared or reset during the run). Counters absent from either side are
 * not judged; nothing is emitted for a port without a rise.
 * Returns the number of ports compared (0 when @nics or @end has none).
 */
int hr_ib_counters_judge(const json_t *nics, const json_t *end, hr_ib_emit_fn emit, void *ctx);

#ifdef __cplusplus
}
#endif

#endif
