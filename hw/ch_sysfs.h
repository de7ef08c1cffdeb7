/*
 * ch_sysfs.h - network ports and CPU frequency settings read from Linux
 * sysfs, for the "inventory" of a result file (docs/results-schema.md).
 *
 * Every reader takes a root directory that is prepended to the kernel's
 * paths: "" (or NULL) reads this machine's /sys; tests pass a directory
 * holding a copied or hand-built tree (tests/data/sysfs). The harness uses
 * ch_sysfs_root(): the environment variable CH_SYSFS_ROOT, meant for tests.
 *
 * Files and formats read (Linux Documentation/ABI/stable/sysfs-class-infiniband,
 * Documentation/ABI/testing/sysfs-class-net, Documentation/admin-guide/pm/cpufreq.rst,
 * Documentation/admin-guide/pm/intel_pstate.rst):
 *   /sys/class/infiniband/<dev>/fw_ver                    "28.39.1002"
 *   /sys/class/infiniband/<dev>/ports/<n>/state           "4: ACTIVE"
 *   /sys/class/infiniband/<dev>/ports/<n>/phys_state      "5: LinkUp"
 *   /sys/class/infiniband/<dev>/ports/<n>/rate            "400 Gb/sec (4X NDR)"
 *   /sys/class/infiniband/<dev>/ports/<n>/link_layer      "InfiniBand" | "Ethernet"
 *   /sys/class/infiniband/<dev>/device -> PCI function    (numa_node, net/<if>)
 *   /sys/class/infiniband/<dev>/ports/<n>/counters/<name>     "4294967295"
 *       (the port's IB counters: symbol_error, link_downed, link_error_recovery,
 *       port_rcv_errors, ...; Documentation/ABI/stable/sysfs-class-infiniband)
 *   /sys/class/infiniband/<dev>/ports/<n>/hw_counters/<name>  "0"
 *       (the driver's: out_of_sequence, local_ack_timeout_err, ...)
 *   /sys/class/net/<if>/{operstate,carrier,speed,device}  "up", "1", "25000" (Mb/s)
 *   /sys/devices/system/cpu/cpu<N>/cpufreq/scaling_governor
 *   /sys/devices/system/cpu/intel_pstate/no_turbo, /sys/devices/system/cpu/cpufreq/boost
 *
 * What cannot be read is JSON null, with the reason under the record's
 * "reasons" object keyed by the field name.
 */
#ifndef CH_SYSFS_H
#define CH_SYSFS_H

#include <jansson.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * ch_sysfs_root - the sysfs root for this process: $CH_SYSFS_ROOT when set
 * (for tests: a directory holding a "sys" tree), else "" (this machine).
 * Returns a borrowed string, never NULL.
 */
const char *ch_sysfs_root(void);

/**
 * ch_sysfs_parse_ib_state - parse an InfiniBand "state" or "phys_state"
 * file: "<number>: <NAME>" such as "4: ACTIVE" or "5: LinkUp".
 * @text: [in] file contents (trailing newline allowed).
 * @name: [out] the name ("ACTIVE").  @n: [in] size of @name.
 * Returns the number (0 to 15), or -1 when @text is not in that format
 * (@name is then "").
 */
int ch_sysfs_parse_ib_state(const char *text, char *name, size_t n);

/**
 * ch_sysfs_parse_ib_rate - parse an InfiniBand port "rate" file:
 * "<Gb/s> Gb/sec (<width> <speed>)" such as "400 Gb/sec (4X NDR)" or
 * "2.5 Gb/sec (1X SDR)".
 * Returns the rate in Gb/s (> 0), or NAN when @text is not in that format.
 */
double ch_sysfs_parse_ib_rate(const char *text);

/**
 * ch_sysfs_pci_bus_id - the PCI function a sysfs device path lives under.
 * @path: [in] a path whose real path (symbolic links resolved) contains a
 *        PCI function component "DDDD:BB:DD.F", e.g.
 *        ".../pci0000:17/0000:17:00.0/0000:18:00.0/infiniband/mlx5_0".
 * @bus:  [out] the last such component ("0000:18:00.0"); at least 16 bytes.
 * @dir:  [out] the real path up to and including it (may be NULL).
 * @ndir: [in] size of @dir.
 * Returns 0, or -1 when the path cannot be resolved or has no PCI component.
 */
int ch_sysfs_pci_bus_id(const char *path, char *bus, char *dir, size_t ndir);

/**
 * ch_sysfs_nics - the network ports of a machine.
 * @root: [in] sysfs root ("" or NULL: this machine).
 * Returns a new JSON array (caller owns it), NULL only when out of memory.
 * One object per RDMA port (/sys/class/infiniband, sorted by device and
 * port), then one per network interface with a device behind it that is not
 * the netdev of an RDMA device listed (/sys/class/net, sorted by name):
 *   {device, port, kind: "rdma" | "netdev", netdev, state, phys_state,
 *    rate_gbps, rate_text, link_layer, fw_version, numa_node, pci_bus_id,
 *    counters, hw_counters (RDMA ports: {name: count}, null when the port
 *    has no such directory), reasons: {field: why}}
 * For a netdev, state is "ACTIVE" when operstate reads "up", otherwise the
 * operstate in capitals ("DOWN"); phys_state is "LinkUp" when carrier
 * reads 1, "NoCarrier" when 0; rate_gbps is speed / 1000; link_layer is
 * "Ethernet"; port is 1. The caller adds near_gpus (ch_inventory.h).
 */
json_t *ch_sysfs_nics(const char *root);

/**
 * ch_sysfs_rdma_counters - every RDMA port's counters now, for the end of a
 * run (the start is in ch_sysfs_nics()' records).
 * @root: [in] sysfs root ("" or NULL: this machine).
 * Returns a new object {utc, ports: [{device, port, counters, hw_counters,
 * reasons}]} (counters as in ch_sysfs_nics(); ports empty without RDMA
 * devices); NULL only when out of memory. Reads sysfs only: safe in a
 * signal thread.
 */
json_t *ch_sysfs_rdma_counters(const char *root);

/**
 * ch_sysfs_cpu - CPU frequency settings.
 * @root: [in] sysfs root.
 * Returns a new object {governor, governors, turbo, turbo_source, reasons}:
 * governor is the scaling governor shared by every CPU that has cpufreq
 * ("performance"), "mixed" when they differ (governors then counts each:
 * {"performance": 62, "powersave": 2}); turbo is true/false from
 * intel_pstate/no_turbo (0 = on) or else cpufreq/boost (1 = on), with
 * turbo_source naming the file. NULL only when out of memory.
 */
json_t *ch_sysfs_cpu(const char *root);

#ifdef __cplusplus
}
#endif
#endif
