/*
 * ch_nvml.h - GPU telemetry through NVML, loaded at run time.
 *
 * libnvidia-ml.so.1 (installed with the NVIDIA driver) is opened with
 * dlopen() on first use: no binary links against it, and a machine without
 * the driver gets CH_ERR_UNAVAILABLE with a reason, never a crash. Every
 * quantity a device cannot report is "n/a": NAN for numbers, 0 in the
 * matching *_valid flag, JSON null in ch_nvml_sample_json().
 *
 * Functions and constants follow NVIDIA's "NVML API Reference Guide"
 * (docs.nvidia.com/deploy/nvml-api/): nvmlInit_v2, nvmlDeviceGetClockInfo
 * (MHz), nvmlDeviceGetPowerUsage (milliwatts), nvmlDeviceGetTemperature
 * (degrees C), nvmlDeviceGetCurrentClocksEventReasons (bit mask; the older
 * name nvmlDeviceGetCurrentClocksThrottleReasons is used when the driver
 * predates it), nvmlDeviceGetTotalEnergyConsumption (millijoules since the
 * driver was loaded, Volta and newer), nvmlDeviceGetViolationStatus
 * (nanoseconds the clocks were held below the applications clocks, per
 * policy), nvmlDeviceGetFieldValues (the clock-event reason counters),
 * nvmlSystemGetDriverVersion.
 *
 * Not thread-safe: call from one thread.
 */
#ifndef CH_NVML_H
#define CH_NVML_H

#include <jansson.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Clock event ("throttle") reason bits, as in nvml.h (nvmlClocksEventReason*). */
#define CH_NVML_REASON_GPU_IDLE            0x0000000000000001ULL
#define CH_NVML_REASON_APP_CLOCKS          0x0000000000000002ULL
#define CH_NVML_REASON_SW_POWER_CAP        0x0000000000000004ULL
#define CH_NVML_REASON_HW_SLOWDOWN         0x0000000000000008ULL
#define CH_NVML_REASON_SYNC_BOOST          0x0000000000000010ULL
#define CH_NVML_REASON_SW_THERMAL          0x0000000000000020ULL
#define CH_NVML_REASON_HW_THERMAL          0x0000000000000040ULL
#define CH_NVML_REASON_HW_POWER_BRAKE      0x0000000000000080ULL
#define CH_NVML_REASON_DISPLAY_CLOCKS      0x0000000000000100ULL

/* The reasons that mean the clocks were held down by power or temperature. */
#define CH_NVML_THROTTLE_MASK (CH_NVML_REASON_SW_POWER_CAP | CH_NVML_REASON_HW_SLOWDOWN | \
	CH_NVML_REASON_SW_THERMAL | CH_NVML_REASON_HW_THERMAL | CH_NVML_REASON_HW_POWER_BRAKE)

/* An NVML device handle (nvmlDevice_t), opaque here. */
typedef struct ch_nvml_device_s *ch_nvml_dev_t;

/* One reading of a device's state. */
struct ch_nvml_sample {
	double sm_mhz;        /* current SM clock, MHz; NAN when n/a */
	double mem_mhz;       /* current memory clock, MHz; NAN when n/a */
	double power_w;       /* board power draw, W; NAN when n/a */
	double temp_c;        /* GPU core temperature, degrees C; NAN when n/a */
	double energy_j;      /* energy counter since driver load, J; NAN when n/a.
			       * The driver refreshes it only every few tens of
			       * ms: difference it over a window of many
			       * refreshes (struct ch_energy_window), never
			       * across a few ms of calls */
	unsigned long long reasons; /* clock event reasons (CH_NVML_REASON_*) */
	int reasons_valid;    /* 1 when @reasons was read */
};

/**
 * ch_nvml_init - load libnvidia-ml.so.1 and call nvmlInit_v2().
 * @why: [out] reason when unavailable (may be NULL).  @n: [in] size of @why.
 * Reference counted: each successful call must be matched by
 * ch_nvml_shutdown(). A failure is remembered, so later calls return at
 * once with the same reason.
 * Returns 0, or CH_ERR_UNAVAILABLE ("libnvidia-ml.so.1 not found (no NVIDIA
 * driver)", "nvmlInit failed: ...", or "NVML support not built in").
 */
int ch_nvml_init(char *why, size_t n);

/** ch_nvml_shutdown - drop one reference; the last one calls nvmlShutdown(). */
void ch_nvml_shutdown(void);

/**
 * ch_nvml_driver_version - the driver version string, e.g. "570.124.06".
 * @buf: [out] destination.  @n: [in] its size (80 is enough).
 * Returns @buf, or NULL when NVML is not initialised or cannot tell.
 */
char *ch_nvml_driver_version(char *buf, size_t n);

/** ch_nvml_device_count - number of GPUs NVML sees; 0 when not initialised. */
int ch_nvml_device_count(void);

/**
 * ch_nvml_device_by_index - handle of GPU @index in NVML's order.
 * @out: [out] handle, valid until the last ch_nvml_shutdown().
 * Returns 0, CH_ERR_UNAVAILABLE (NVML not initialised) or CH_ERR_USAGE (no
 * such index).
 */
int ch_nvml_device_by_index(unsigned index, ch_nvml_dev_t *out);

/**
 * ch_nvml_device_by_pci - handle of the GPU at a PCI bus id.
 * @bus_id: [in] "0000:3b:00.0" (as cudaDeviceGetPCIBusId() or hwloc print it).
 * @out: [out] handle. Returns 0, CH_ERR_UNAVAILABLE or CH_ERR_USAGE (not found).
 * Use this to pair a CUDA device with its NVML handle: CUDA and NVML may
 * number devices differently (CUDA_VISIBLE_DEVICES, CUDA_DEVICE_ORDER).
 */
int ch_nvml_device_by_pci(const char *bus_id, ch_nvml_dev_t *out);

/* How a CUDA device was paired with its NVML handle. */
enum ch_nvml_match {
	CH_NVML_MATCH_NONE,  /* not paired */
	CH_NVML_MATCH_PCI,   /* by PCI bus id (the usual case) */
	CH_NVML_MATCH_UUID,  /* by UUID: the bus id lookup failed (a VM or
			      * container can show CUDA another bus id) */
	CH_NVML_MATCH_INDEX, /* by index: neither worked, and NVML and CUDA
			      * see the same number of GPUs */
};

/** ch_nvml_match_name - "pci_bus_id", "uuid", "index" or "none". */
const char *ch_nvml_match_name(enum ch_nvml_match how);

/**
 * ch_nvml_uuid_str - a device UUID's 16 bytes (cudaDeviceProp.uuid) as
 * NVML writes it, "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx" (lower-case
 * hex, 40 characters). @buf: [out] at least 41 bytes. Returns @buf.
 */
char *ch_nvml_uuid_str(const unsigned char bytes[16], char *buf, size_t n);

/**
 * ch_nvml_device_for_cuda - the NVML handle of a CUDA device: by its PCI
 * bus id (nvmlDeviceGetHandleByPciBusId_v2), else by its UUID
 * (nvmlDeviceGetHandleByUUID), else by its index when NVML sees exactly
 * @cuda_count GPUs (CUDA_VISIBLE_DEVICES hides GPUs from CUDA, not from
 * NVML, so unequal counts mean the indexes may differ).
 * @bus_id: [in] "0000:3b:00.0" or NULL.  @uuid: [in] "GPU-..." or NULL.
 * @cuda_index, @cuda_count: [in] the device's CUDA index and CUDA's count.
 * @out: [out] handle.  @how: [out] which lookup matched (NONE on failure).
 * Returns 0, CH_ERR_UNAVAILABLE (NVML not initialised) or CH_ERR_USAGE
 * (none matched).
 */
int ch_nvml_device_for_cuda(const char *bus_id, const char *uuid, int cuda_index, int cuda_count,
			    ch_nvml_dev_t *out, enum ch_nvml_match *how);

/**
 * ch_nvml_device_name - product name, e.g. "NVIDIA H200".
 * @buf: [out] destination (96 bytes is enough). Returns @buf, or NULL (n/a).
 */
char *ch_nvml_device_name(ch_nvml_dev_t dev, char *buf, size_t n);

/**
 * ch_nvml_sample - read clocks, power, temperature, reasons and energy.
 * @dev: [in] handle.  @out: [out] the reading; each field n/a on its own.
 * Returns 0 when at least one field was read, CH_ERR_UNAVAILABLE otherwise.
 */
int ch_nvml_sample(ch_nvml_dev_t dev, struct ch_nvml_sample *out);

/** ch_nvml_sample_na - fill @out with "n/a" everywhere. */
void ch_nvml_sample_na(struct ch_nvml_sample *out);

/**
 * ch_nvml_sample_json - a reading as JSON: {sm_mhz, mem_mhz, power_w,
 * temp_c, energy_j, clock_event_reasons: ["sw_power_cap", ...] | null,
 * throttled: bool | null}; n/a values are null. New reference; NULL when out
 * of memory.
 */
json_t *ch_nvml_sample_json(const struct ch_nvml_sample *s);

/**
 * ch_nvml_reasons_str - the names of the bits set in @reasons, comma
 * separated ("sw_power_cap,hw_thermal"), "none" when 0.
 * @buf: [out] destination (160 bytes hold every name).  Returns @buf.
 */
char *ch_nvml_reasons_str(unsigned long long reasons, char *buf, size_t n);

/** ch_nvml_throttled - 1 when @reasons holds a power or thermal reason. */
int ch_nvml_throttled(unsigned long long reasons);

/**
 * ch_nvml_energy_total_j - sum of the energy counters of every GPU.
 * @out: [out] joules since driver load, summed over GPUs (refreshed every
 *       few tens of ms, see struct ch_nvml_sample.energy_j).
 * Returns 0, or CH_ERR_UNAVAILABLE when NVML is not initialised, there is no
 * GPU, or a GPU has no energy counter (pre-Volta).
 */
int ch_nvml_energy_total_j(double *out);

/**
 * ch_nvml_energy_j - one GPU's energy counter, and nothing else (one NVML
 * call: what an energy window reads between its batches of calls).
 * @j: [out] joules since driver load. Refreshed by the driver every few
 * tens of ms. Returns 0 or CH_ERR_UNAVAILABLE.
 */
int ch_nvml_energy_j(ch_nvml_dev_t dev, double *j);

/*
 * Cumulative time a GPU's clocks were held down, in nanoseconds since
 * driver load, per cause; NAN where the driver cannot tell. Difference two
 * readings over a measurement window: the clocks were held down for that
 * long during it, however brief (two instantaneous reason reads miss it).
 */
struct ch_nvml_violations {
	double power_ns;          /* nvmlDeviceGetViolationStatus(NVML_PERF_POLICY_POWER) */
	double thermal_ns;        /* ... (NVML_PERF_POLICY_THERMAL) */
	double sw_thermal_ns;     /* field NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN */
	double hw_thermal_ns;     /* ... _HW_THERM_SLOWDOWN */
	double hw_power_brake_ns; /* ... _HW_POWER_BRAKE_SLOWDOWN */
	double t_sec;             /* ch_now_sec() when read */
};

/** ch_nvml_violations_na - every counter n/a (NAN). */
void ch_nvml_violations_na(struct ch_nvml_violations *v);

/**
 * ch_nvml_violations - read the counters of @dev.
 * The three clock-event reason counters are read with
 * nvmlDeviceGetFieldValues (field ids 251-253 of nvml.h, driver R570 and
 * later, declared in ch_nvml.c so that every build reads them); a driver
 * that does not know a field leaves that counter NAN.
 * Returns 0 when at least one counter was read, CH_ERR_UNAVAILABLE otherwise.
 */
int ch_nvml_violations(ch_nvml_dev_t dev, struct ch_nvml_violations *v);

/**
 * ch_nvml_gpu_inventory - what NVML tells of one GPU, for the "inventory"
 * of a result file (docs/results-schema.md, "host.inventory.gpus").
 * @dev:   [in] handle (ch_nvml_device_by_index()).
 * @index: [in] its NVML index, recorded as "index".
 * Returns a new object (caller owns it): index, name, pci_bus_id
 * ("0000:18:00.0"), uuid, serial, pcie {gen_current, gen_max,
 * width_current, width_max}, nvlink {links, up, states ["up"|"down"],
 * errors {replay, recovery, crc_flit, crc_data, ecc_data} summed over the
 * links}, ecc {mode_current, mode_pending, volatile {corrected,
 * uncorrected}, aggregate {...}}, remap {correctable_rows,
 * uncorrectable_rows, pending, failure}, retired_pages {single_bit,
 * double_bit, pending}, power {limit_default_w, limit_enforced_w}, clocks
 * {sm_mhz, sm_max_mhz, mem_mhz, mem_max_mhz, sm_app_mhz,
 * sm_default_app_mhz}, persistence, clock_event_reasons, driver_version,
 * vbios_version, and reasons {"field.path": "why"} for every value that is
 * null (the NVML call and its error, or the symbol missing from an older
 * driver). NULL when NVML is not initialised or out of memory.
 * NVML calls: nvmlDeviceGetPciInfo_v3, GetUUID, GetSerial, GetVbiosVersion,
 * Get{Curr,Max}PcieLink{Generation,Width}, GetNvLinkState,
 * GetNvLinkErrorCounter, GetEccMode, GetTotalEccErrors, GetRemappedRows,
 * GetRetiredPages, GetRetiredPagesPendingStatus,
 * GetPowerManagementDefaultLimit and GetEnforcedPowerLimit (mW),
 * Get{Clock,MaxClock,ApplicationsClock,DefaultApplicationsClock}Info (MHz),
 * GetPersistenceMode, GetCurrentClocksEventReasons.
 */
json_t *ch_nvml_gpu_inventory(ch_nvml_dev_t dev, unsigned index);

/**
 * ch_nvml_symbol - a function of the loaded libnvidia-ml.so.1 by name, for
 * modules that call NVML functions this file does not wrap (the power
 * limits of hw/ch_powercap.h).
 * Returns the address (cast it to the function's type as nvml.h declares
 * it), or NULL when NVML is not initialised or the driver lacks @name.
 */
void *ch_nvml_symbol(const char *name);

/** ch_nvml_error_string - nvmlErrorString() of an NVML return code @r. */
const char *ch_nvml_error_string(int r);

#ifdef __cplusplus
}
#endif
#endif
