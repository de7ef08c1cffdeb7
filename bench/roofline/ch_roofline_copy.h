/*
 * ch_roofline_copy.h - roofline's host link measurement: host<->device copy
 * bandwidth of every GPU (pinned memory, each direction and both at once),
 * alone and with all the GPUs copying at once (a PCIe switch or root port
 * shared by two GPUs shows there), the device-to-device matrix with P2P on
 * and off on a node with several GPUs, and beside each GPU the PCIe link it
 * trained to (NVML: generation and width, current and maximum) with the
 * bandwidth such a link is expected to carry (hw/ch_pcie.h). The result
 * file's "host_link" object: docs/results-schema.md; the verdict:
 * health_report's host_link rule.
 */
#ifndef CH_ROOFLINE_COPY_H
#define CH_ROOFLINE_COPY_H

#include <jansson.h>
#include <stdint.h>

#include "kernels/ch_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Default copy size and copies per direction: 256 MiB (nvbandwidth's
 * default buffer is 64 MiB; larger copies hide the launch cost, about
 * 10 us, below 0.1%) and 5 (median). */
#define CH_RL_COPY_BYTES (256ull << 20)
#define CH_RL_COPY_CALLS 5

/*
 * ch_rl_host_link - measure the host link of @ndev open devices of backend
 * @be and return the "host_link" object (caller owns it):
 *   {bytes, calls, method, expectation_source,
 *    gpus: [ {device, pci_bus_id, alone {h2d_gbps, d2h_gbps, bidir_gbps,
 *             bidir_h2d_gbps, bidir_d2h_gbps}, all_at_once {...} | null,
 *             pcie {gen_current, width_current, gen_max, width_max} | null,
 *             expected_gbps (the current link's), expected_max_gbps (the
 *             maximum link's), status "ok" | "failed", reason} ],
 *    all_at_once_total_gbps {h2d, d2h} | null,
 *    peer: null | {devices [...], p2p_on [[GB/s | null]], p2p_off [[...]]}}
 * (all_at_once and peer only with more than one device). Each figure is
 * measured (median of @calls copies of @bytes); expectations are given
 * (hw/ch_pcie.h). NULL when @be has no host_copy (a CPU).
 * @devs, @labels ("gpu0"), @bus_ids: [in] @ndev each.
 */
json_t *ch_rl_host_link(const struct ch_backend *be, struct ch_dev **devs, const char *const *labels,
			const char *const *bus_ids, int ndev, uint64_t bytes, int calls);

/*
 * ch_rl_host_link_run - roofline's host link step for a GPU backend: open
 * the @nidx GPUs @idx (indices of @be, below @count) together, measure
 * (ch_rl_host_link(), CH_RL_COPY_BYTES, CH_RL_COPY_CALLS; all at once and
 * the peer matrix only when this process holds more than one GPU), close
 * them, and record: each GPU's entry as "host_link" of its device object in
 * @devices (found by "device" name, "gpuI"), the run's {bytes, calls,
 * method, expectation_source, all_at_once_total_gbps, peer} as
 * @results["host_link"]. Devices that cannot be opened get no entry.
 * Returns 0, or CH_ERR_UNAVAILABLE when @be has no host_copy or no GPU
 * opened (nothing recorded).
 */
int ch_rl_host_link_run(const struct ch_backend *be, const int *idx, int nidx, int count, json_t *results,
			json_t *devices);

/*
 * ch_rl_host_link_print - the host link lines of the terminal output: per
 * GPU its measured medians, the link and the expectation (given); then the
 * peer matrices. Nothing when @hl is not an object.
 */
void ch_rl_host_link_print(const json_t *hl, const json_t *devices);

/*
 * ch_rl_host_link_pcie - the PCIe link of the GPU at @bus_id from NVML
 * (ch_nvml_gpu_inventory's "pcie"), a new object, or NULL when NVML cannot
 * tell.
 */
json_t *ch_rl_host_link_pcie(const char *bus_id);

#ifdef __cplusplus
}
#endif
#endif
