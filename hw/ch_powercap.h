/*
 * ch_powercap.h - GPU power limits through NVML, and the state file that
 * makes sure a limit this process set is put back.
 *
 * NVML calls (NVML API Reference Guide, "Device Queries" and "Device
 * Commands"; every limit in milliwatts there, in watts here):
 * nvmlDeviceGetPowerManagementLimit (the limit set now),
 * nvmlDeviceGetEnforcedPowerLimit (the one in force: the lowest of every
 * limiter), nvmlDeviceGetPowerManagementDefaultLimit,
 * nvmlDeviceGetPowerManagementLimitConstraints (the settable range),
 * nvmlDeviceSetPowerManagementLimit (needs root; the limit persists until it
 * is set again, the GPU is reset or the machine reboots),
 * nvmlDeviceGetViolationStatus (time the clocks were held down by power or
 * temperature, ns), nvmlDeviceGetHandleByUUID. NVML itself is thread-safe;
 * the functions here may be called from the thread that takes a signal
 * (ch_powercap_on_signal()).
 *
 * The restore guarantee (docs/roofline.md, "Power caps"):
 *  - before a GPU's limit is first changed, ch_powercap_begin() records its
 *    UUID and its original limit in the state file (written atomically and
 *    flushed; when it cannot be written nothing is changed);
 *  - ch_powercap_restore() sets the original limit back, waits until it
 *    reads back and removes the GPU from the state file; the caller does it
 *    at the end and on a failed point, ch_powercap_on_signal() on SIGINT and
 *    SIGTERM, an atexit() handler on any other exit;
 *  - a run that died without restoring (kill -9, a crash, a power loss of
 *    the process) leaves its entries; ch_powercap_recover() restores them at
 *    the next start, before anything else, and says so.
 * The state file is shared by the processes of a node (one rank per GPU):
 * every read-modify-write holds an flock() on "STATE.lock".
 */
#ifndef CH_POWERCAP_H
#define CH_POWERCAP_H

#include <jansson.h>
#include <stddef.h>

#include "hw/ch_nvml.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where the state file lives when neither --power-state nor the
 * environment variable CH_POWER_STATE names one: /run is emptied at boot,
 * when the limits go back to their defaults too. */
#define CH_POWERCAP_STATE_DEFAULT "/run/clusterhealth/power-limits.json"
#define CH_POWERCAP_STATE_SCHEMA "clusterhealth.power-limits-state"

/* A GPU's power limits as NVML reports them, W (NAN: n/a). */
struct ch_powercap_gpu {
	ch_nvml_dev_t dev;
	char uuid[96];          /* "GPU-8c5f..." */
	char pci_bus_id[32];    /* "0000:1b:00.0" */
	double limit_w;         /* the limit set now */
	double enforced_w;      /* the limit in force */
	double default_w;       /* the default limit */
	double min_w, max_w;    /* the settable range */
};

/**
 * ch_powercap_state_path - the state file: @option when not NULL, else
 * $CH_POWER_STATE when set and not empty, else CH_POWERCAP_STATE_DEFAULT.
 * Returns a borrowed string (@option, the environment's, or the constant).
 */
const char *ch_powercap_state_path(const char *option);

/**
 * ch_powercap_read - read the limits of @dev into @g (uuid and bus id too).
 * NVML must be initialised (ch_nvml_init()).
 * Returns 0, or CH_ERR_UNAVAILABLE with @why naming the NVML call that
 * failed and its error (or the symbol the driver lacks).
 */
int ch_powercap_read(ch_nvml_dev_t dev, struct ch_powercap_gpu *g, char *why, size_t n);

/** ch_powercap_enforced_w - nvmlDeviceGetEnforcedPowerLimit, W; NAN when n/a. */
double ch_powercap_enforced_w(ch_nvml_dev_t dev);

/** ch_powercap_limit_w - nvmlDeviceGetPowerManagementLimit, W; NAN when n/a. */
double ch_powercap_limit_w(ch_nvml_dev_t dev);

/**
 * ch_powercap_violation_ms - cumulative time the clocks were held down,
 * nvmlDeviceGetViolationStatus(NVML_PERF_POLICY_POWER (@thermal 0) or
 * NVML_PERF_POLICY_THERMAL (@thermal 1)), in ms; difference it over a window.
 * Returns NAN when n/a (driver without it, or not supported).
 */
double ch_powercap_violation_ms(ch_nvml_dev_t dev, int thermal);

/**
 * ch_powercap_probe - may this process set @g's limit? Writes nothing: the
 * driver's nvmlDeviceSetPowerManagementLimit must be there, the limit and
 * its constraints (read into @g by ch_powercap_read()) readable, and the
 * process must hold the privilege NVML asks for it (root: CAP_SYS_ADMIN in
 * its effective set, /proc/self/status; without /proc, uid 0).
 * Returns 0, or CH_ERR_UNAVAILABLE with @why: "setting a GPU power limit
 * needs root: this process lacks CAP_SYS_ADMIN (running as uid N)", or the
 * missing call or reading.
 */
int ch_powercap_probe(const struct ch_powercap_gpu *g, char *why, size_t n);

/**
 * ch_powercap_begin - record @g (its UUID, bus id, original limit
 * g->limit_w, this process and the caps it will set) in the state file
 * @state, then remember it for ch_powercap_restore_all(). Call before the
 * first ch_powercap_set() of @g; installs the atexit() restore once.
 * @caps_w: [in] @ncaps caps the run will set, W.
 * The limit is read again under the state file's lock, once no live run
 * holds @g: when it is no longer g->limit_w (another run's cap was put back
 * meanwhile), nothing is recorded (CH_ERR_RUNTIME, "run again").
 * Returns 0; CH_ERR_RUNTIME with @why when the state file cannot be read
 * (not ours, corrupt, not trusted: see ch_powercap_recover()) or written (its directory cannot be made, no space,
 * read-only), or still holds @g for a run that died (its original limit is
 * the one to put back: ch_powercap_recover() first): then no limit may be
 * changed; CH_ERR_USAGE when @g is already recorded by another live process
 * (two runs capping one GPU) or by this one.
 */
int ch_powercap_begin(const char *state, const struct ch_powercap_gpu *g, const double *caps_w, int ncaps,
		      char *why, size_t n);

/**
 * ch_powercap_set - set @g's limit to @w watts (rounded to whole mW).
 * Refused (CH_ERR_RUNTIME, "restoring: no new limit") once a signal's
 * restore has begun, and for a GPU not recorded by ch_powercap_begin().
 * Returns 0, CH_ERR_UNAVAILABLE (no permission) or CH_ERR_RUNTIME, with @why.
 */
int ch_powercap_set(const struct ch_powercap_gpu *g, double w, char *why, size_t n);

/**
 * ch_powercap_wait_enforced - poll the enforced limit every 20 ms until it
 * is within 0.5 W of @w or @timeout_sec have passed.
 * @got: [out] the last enforced limit read, W (NAN: unreadable).
 * @waited: [out] seconds waited.
 * Returns 0 when it read back; CH_ERR_CHECK when it stayed below @w (another
 * limiter holds it lower: the GPU runs at *got); CH_ERR_RUNTIME when it
 * stayed above @w or could not be read (the cap is not in force).
 */
int ch_powercap_wait_enforced(ch_nvml_dev_t dev, double w, double timeout_sec, double *got, double *waited);

/**
 * ch_powercap_restore - set @g's original limit (as recorded by
 * ch_powercap_begin()) back, wait up to 5 s for it to read back, and
 * remove @g from the state file and from the process's list.
 * @readback_w: [out] the limit read back (nvmlDeviceGetPowerManagementLimit), W.
 * Returns 0; CH_ERR_RUNTIME with @why when the limit could not be set (the
 * state entry stays for the next start's ch_powercap_recover()) or the
 * state file could not be updated. A GPU not recorded: 0, nothing done.
 */
int ch_powercap_restore(const struct ch_powercap_gpu *g, double *readback_w, char *why, size_t n);

/**
 * ch_powercap_restore_all - restore every GPU this process still holds
 * capped (ch_powercap_restore() each), refusing every later
 * ch_powercap_set(). @note gets "power limits restored: GPU-... 700 W" or
 * what failed ("" when nothing was held). Returns the number restored, or
 * CH_ERR_RUNTIME when one failed.
 */
int ch_powercap_restore_all(char *note, size_t n);

/**
 * ch_powercap_on_signal - the signal hook of the result writer
 * (ch_result_on_signal(), base/ch_result.h): ch_powercap_restore_all()
 * from the thread that finishes the result file; @ctx unused.
 */
void ch_powercap_on_signal(void *ctx, char *note, size_t n);

/** ch_powercap_held - the number of GPUs this process holds capped now. */
int ch_powercap_held(void);

/**
 * ch_powercap_recover - restore what an earlier run left capped: read the
 * state file @state (a missing file: nothing to do) and, for each GPU of
 * this host whose recording process is gone (its pid is not alive, or is
 * another process started later), compare its limit now with what was
 * recorded: at the original limit, the entry is dropped; at one of the
 * run's caps, the original is set back and the entry dropped; at any
 * other limit (set by someone since), it is left as it is and the entry
 * dropped; a GPU that cannot be set (no permission, not found) keeps its
 * entry, and so does an entry whose original limit is outside the GPU's
 * constraints (action "refused": never set). Entries of live processes and
 * of other hosts are left alone. The file is trusted only when it is a
 * regular file (opened without following a link and without blocking, so a
 * named pipe is refused, not waited on), at most 1 MiB, owned by root or
 * this user and writable by no one else, in a folder that is the same
 * (docs/reliability.md); otherwise nothing is read or set.
 * Initialises NVML itself when there is something to restore.
 * @report: [out] a new array, one object per entry handled: {uuid,
 *          pci_bus_id, host, pid, since_utc, original_limit_w,
 *          found_limit_w, action: "restored" | "already at its original
 *          limit" | "left as found: changed since by someone else" | "not
 *          restored", why (for "not restored")}; empty when nothing to do.
 *          NULL only when out of memory.
 * Prints one line per GPU handled (stderr). Returns 0 when nothing was
 * left capped by a dead run, 1 when something was restored or dropped,
 * CH_ERR_UNAVAILABLE when a GPU could not be restored (no permission, no
 * NVML, not found), CH_ERR_RUNTIME when the state file is unreadable or
 * untrusted or an entry was refused.
 */
int ch_powercap_recover(const char *state, json_t **report);

#ifdef __cplusplus
}
#endif
#endif
