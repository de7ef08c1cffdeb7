#include "hw/ch_nvml.h"
#include "base/ch_common.h"
#include "base/ch_stats.h"

#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#ifdef HAVE_NVML_H
#include <nvml.h>
#else
/*
 * The few NVML types used here, as declared by nvml.h (NVML API Reference
 * Guide, "Device Structs" and "Device Enums"): return codes are an int enum
 * with NVML_SUCCESS = 0, a device is a pointer to an opaque struct, clock
 * types are NVML_CLOCK_SM = 1 and NVML_CLOCK_MEM = 2, and the GPU
 * temperature sensor is NVML_TEMPERATURE_GPU = 0.
 */
typedef int nvmlReturn_t;
typedef struct nvmlDevice_st *nvmlDevice_t;
typedef int nvmlClockType_t;
typedef int nvmlTemperatureSensors_t;
#define NVML_SUCCESS 0
#define NVML_CLOCK_SM 1
#define NVML_CLOCK_MEM 2
#define NVML_TEMPERATURE_GPU 0
#endif

/*
 * nvmlPciInfo_t as nvmlDeviceGetPciInfo_v3 fills it (nvml.h: busIdLegacy
 * NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE = 16, then domain, bus, device,
 * pciDeviceId, pciSubSystemId, busId NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE = 32).
 */
struct ch_nvml_pci_info {
	char bus_id_legacy[16];
	unsigned int domain, bus, device, pci_device_id, pci_subsystem_id;
	char bus_id[32];
};

/*
 * nvmlFieldValue_t and the field ids of the clock-event reason counters, as
 * nvml.h declares them (NVML API Reference Guide, "Field Value Queries";
 * nvml.h of driver R570 and later, CUDA 12.8 and 13.0): fieldId, scopeId
 * (unsigned int), timestamp, latencyUsec (long long), valueType
 * (nvmlValueType_t, NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3), nvmlReturn,
 * then an 8-byte union. The ids follow the NVLink FEC history counters
 * (235-250); a driver that predates them answers
 * NVML_ERROR_INVALID_ARGUMENT or _NOT_SUPPORTED for each field, which leaves
 * that counter n/a. Declared here so that every build reads them, with or
 * without nvml.h; checked against nvml.h when the build has it.
 */
struct ch_nvml_field_value {
	unsigned int field_id;
	unsigned int scope_id;
	long long timestamp;
	long long latency_usec;
	int value_type;
	int nvml_return;
	union {
		double d;
		unsigned int ui;
		unsigned long ul;
		unsigned long long ull;
		long long sll;
		int si;
		unsigned short us;
	} value;
};
#define CH_NVML_VALUE_TYPE_UNSIGNED_LONG_LONG 3
#define CH_NVML_FI_SW_THERM_SLOWDOWN 251   /* NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN */
#define CH_NVML_FI_HW_THERM_SLOWDOWN 252   /* ..._HW_THERM_SLOWDOWN */
#define CH_NVML_FI_HW_POWER_BRAKE 253      /* ..._HW_POWER_BRAKE_SLOWDOWN */
#ifdef HAVE_NVML_H
_Static_assert(sizeof(struct ch_nvml_field_value) == sizeof(nvmlFieldValue_t), "nvmlFieldValue_t layout");
#ifdef NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_THERM_SLOWDOWN
_Static_assert(CH_NVML_FI_SW_THERM_SLOWDOWN == NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN &&
	       CH_NVML_FI_HW_THERM_SLOWDOWN == NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_THERM_SLOWDOWN &&
	       CH_NVML_FI_HW_POWER_BRAKE == NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN,
	       "clock-event reason field ids");
#endif
#endif

/* Return codes and arguments used by the inventory (nvml.h values). */
#define CH_NVML_ERROR_INVALID_ARGUMENT 2
#define CH_NVML_ERROR_INSUFFICIENT_SIZE 7
#define CH_NVML_NVLINK_MAX_LINKS 18

#ifdef HAVE_NVML
static struct {
	void *lib;
	int refs;
	int failed;          /* dlopen or nvmlInit failed: remembered */
	char why[256];
	nvmlReturn_t (*init)(void);
	nvmlReturn_t (*shutdown)(void);
	const char *(*error_string)(nvmlReturn_t);
	nvmlReturn_t (*driver_version)(char *, unsigned int);
	nvmlReturn_t (*count)(unsigned int *);
	nvmlReturn_t (*by_index)(unsigned int, nvmlDevice_t *);
	nvmlReturn_t (*by_pci)(const char *, nvmlDevice_t *);
	nvmlReturn_t (*by_uuid)(const char *, nvmlDevice_t *);
	nvmlReturn_t (*name)(nvmlDevice_t, char *, unsigned int);
	nvmlReturn_t (*clock)(nvmlDevice_t, nvmlClockType_t, unsigned int *);
	nvmlReturn_t (*power)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*temperature)(nvmlDevice_t, nvmlTemperatureSensors_t, unsigned int *);
	nvmlReturn_t (*reasons)(nvmlDevice_t, unsigned long long *);
	nvmlReturn_t (*energy)(nvmlDevice_t, unsigned long long *);
	/* nvmlViolationTime_t *: {referenceTime (us), violationTime (ns)} */
	nvmlReturn_t (*violation)(nvmlDevice_t, int, unsigned long long *);
	nvmlReturn_t (*field_values)(nvmlDevice_t, int, struct ch_nvml_field_value *);
	/* inventory (ch_nvml_gpu_inventory); each may be NULL in an old driver.
	 * Enum arguments are passed as int and unsigned int (the ABI of C enums). */
	nvmlReturn_t (*pci_info)(nvmlDevice_t, struct ch_nvml_pci_info *);
	nvmlReturn_t (*uuid)(nvmlDevice_t, char *, unsigned int);
	nvmlReturn_t (*serial)(nvmlDevice_t, char *, unsigned int);
	nvmlReturn_t (*vbios)(nvmlDevice_t, char *, unsigned int);
	nvmlReturn_t (*pcie_gen)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*pcie_gen_max)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*pcie_width)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*pcie_width_max)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*nvlink_state)(nvmlDevice_t, unsigned int, int *);
	nvmlReturn_t (*nvlink_errors)(nvmlDevice_t, unsigned int, int, unsigned long long *);
	nvmlReturn_t (*ecc_mode)(nvmlDevice_t, int *, int *);
	nvmlReturn_t (*ecc_total)(nvmlDevice_t, int, int, unsigned long long *);
	nvmlReturn_t (*remapped_rows)(nvmlDevice_t, unsigned int *, unsigned int *, unsigned int *, unsigned int *);
	nvmlReturn_t (*retired_pages)(nvmlDevice_t, int, unsigned int *, unsigned long long *);
	nvmlReturn_t (*retired_pending)(nvmlDevice_t, int *);
	nvmlReturn_t (*power_default)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*power_enforced)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*max_clock)(nvmlDevice_t, nvmlClockType_t, unsigned int *);
	nvmlReturn_t (*app_clock)(nvmlDevice_t, nvmlClockType_t, unsigned int *);
	nvmlReturn_t (*default_app_clock)(nvmlDevice_t, nvmlClockType_t, unsigned int *);
	nvmlReturn_t (*persistence)(nvmlDevice_t, int *);
} nv;

static void *sym(const char *name)
{
	return dlsym(nv.lib, name);
}

static const char *nvml_err(nvmlReturn_t r)
{
	const char *s = nv.error_string ? nv.error_string(r) : NULL;
	return s ? s : "unknown NVML error";
}
#endif

static void set_why(char *why, size_t n, const char *text)
{
	if (why && n)
		snprintf(why, n, "%s", text);
}

int ch_nvml_init(char *why, size_t n)
{
#ifndef HAVE_NVML
	set_why(why, n, "NVML support not built in (WITH_NVML=no)");
	return CH_ERR_UNAVAILABLE;
#else
	nvmlReturn_t r;

	if (nv.refs > 0) {
		nv.refs++;
		return 0;
	}
	if (nv.failed) {
		set_why(why, n, nv.why);
		return CH_ERR_UNAVAILABLE;
	}
	nv.lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	if (!nv.lib) {
		snprintf(nv.why, sizeof(nv.why), "libnvidia-ml.so.1 not found (no NVIDIA driver)");
		goto fail;
	}
	*(void **)&nv.init = sym("nvmlInit_v2");
	*(void **)&nv.shutdown = sym("nvmlShutdown");
	*(void **)&nv.error_string = sym("nvmlErrorString");
	*(void **)&nv.driver_version = sym("nvmlSystemGetDriverVersion");
	*(void **)&nv.count = sym("nvmlDeviceGetCount_v2");
	*(void **)&nv.by_index = sym("nvmlDeviceGetHandleByIndex_v2");
	*(void **)&nv.by_pci = sym("nvmlDeviceGetHandleByPciBusId_v2");
	*(void **)&nv.by_uuid = sym("nvmlDeviceGetHandleByUUID");
	*(void **)&nv.name = sym("nvmlDeviceGetName");
	*(void **)&nv.clock = sym("nvmlDeviceGetClockInfo");
	*(void **)&nv.power = sym("nvmlDeviceGetPowerUsage");
	*(void **)&nv.temperature = sym("nvmlDeviceGetTemperature");
	*(void **)&nv.reasons = sym("nvmlDeviceGetCurrentClocksEventReasons");
	if (!nv.reasons)
		*(void **)&nv.reasons = sym("nvmlDeviceGetCurrentClocksThrottleReasons");
	*(void **)&nv.energy = sym("nvmlDeviceGetTotalEnergyConsumption");
	*(void **)&nv.violation = sym("nvmlDeviceGetViolationStatus");
	*(void **)&nv.field_values = sym("nvmlDeviceGetFieldValues");
	*(void **)&nv.pci_info = sym("nvmlDeviceGetPciInfo_v3");
	*(void **)&nv.uuid = sym("nvmlDeviceGetUUID");
	*(void **)&nv.serial = sym("nvmlDeviceGetSerial");
	*(void **)&nv.vbios = sym("nvmlDeviceGetVbiosVersion");
	*(void **)&nv.pcie_gen = sym("nvmlDeviceGetCurrPcieLinkGeneration");
	*(void **)&nv.pcie_gen_max = sym("nvmlDeviceGetMaxPcieLinkGeneration");
	*(void **)&nv.pcie_width = sym("nvmlDeviceGetCurrPcieLinkWidth");
	*(void **)&nv.pcie_width_max = sym("nvmlDeviceGetMaxPcieLinkWidth");
	*(void **)&nv.nvlink_state = sym("nvmlDeviceGetNvLinkState");
	*(void **)&nv.nvlink_errors = sym("nvmlDeviceGetNvLinkErrorCounter");
	*(void **)&nv.ecc_mode = sym("nvmlDeviceGetEccMode");
	*(void **)&nv.ecc_total = sym("nvmlDeviceGetTotalEccErrors");
	*(void **)&nv.remapped_rows = sym("nvmlDeviceGetRemappedRows");
	*(void **)&nv.retired_pages = sym("nvmlDeviceGetRetiredPages");
	*(void **)&nv.retired_pending = sym("nvmlDeviceGetRetiredPagesPendingStatus");
	*(void **)&nv.power_default = sym("nvmlDeviceGetPowerManagementDefaultLimit");
	*(void **)&nv.power_enforced = sym("nvmlDeviceGetEnforcedPowerLimit");
	*(void **)&nv.max_clock = sym("nvmlDeviceGetMaxClockInfo");
	*(void **)&nv.app_clock = sym("nvmlDeviceGetApplicationsClock");
	*(void **)&nv.default_app_clock = sym("nvmlDeviceGetDefaultApplicationsClock");
	*(void **)&nv.persistence = sym("nvmlDeviceGetPersistenceMode");
	if (!nv.init || !nv.shutdown || !nv.count || !nv.by_index) {
		snprintf(nv.why, sizeof(nv.why), "libnvidia-ml.so.1 lacks nvmlInit_v2 or nvmlDeviceGetCount_v2 (driver too old)");
		goto fail;
	}
	r = nv.init();
	if (r != NVML_SUCCESS) {
		snprintf(nv.why, sizeof(nv.why), "nvmlInit failed: %s", nvml_err(r));
		goto fail;
	}
	nv.refs = 1;
	return 0;
fail:
	if (nv.lib)
		dlclose(nv.lib);
	nv.lib = NULL;
	nv.failed = 1;
	set_why(why, n, nv.why);
	return CH_ERR_UNAVAILABLE;
#endif
}

void ch_nvml_shutdown(void)
{
#ifdef HAVE_NVML
	if (nv.refs <= 0)
		return;
	if (--nv.refs == 0) {
		nv.shutdown();
		dlclose(nv.lib);
		nv.lib = NULL;
	}
#endif
}

char *ch_nvml_driver_version(char *buf, size_t n)
{
#ifdef HAVE_NVML
	char v[96];
	if (nv.refs > 0 && nv.driver_version && nv.driver_version(v, sizeof(v)) == NVML_SUCCESS) {
		snprintf(buf, n, "%s", v);
		return buf;
	}
#else
	(void)buf; (void)n;
#endif
	return NULL;
}

int ch_nvml_device_count(void)
{
#ifdef HAVE_NVML
	unsigned int c = 0;
	if (nv.refs > 0 && nv.count(&c) == NVML_SUCCESS)
		return (int)c;
#endif
	return 0;
}

int ch_nvml_device_by_index(unsigned index, ch_nvml_dev_t *out)
{
#ifdef HAVE_NVML
	nvmlDevice_t d;
	if (nv.refs <= 0)
		return CH_ERR_UNAVAILABLE;
	if (nv.by_index(index, &d) != NVML_SUCCESS)
		return CH_ERR_USAGE;
	*out = (ch_nvml_dev_t)d;
	return 0;
#else
	(void)index; (void)out;
	return CH_ERR_UNAVAILABLE;
#endif
}

int ch_nvml_device_by_pci(const char *bus_id, ch_nvml_dev_t *out)
{
#ifdef HAVE_NVML
	nvmlDevice_t d;
	if (nv.refs <= 0 || !nv.by_pci)
		return CH_ERR_UNAVAILABLE;
	if (!bus_id || nv.by_pci(bus_id, &d) != NVML_SUCCESS)
		return CH_ERR_USAGE;
	*out = (ch_nvml_dev_t)d;
	return 0;
#else
	(void)bus_id; (void)out;
	return CH_ERR_UNAVAILABLE;
#endif
}

const char *ch_nvml_match_name(enum ch_nvml_match how)
{
	switch (how) {
	case CH_NVML_MATCH_PCI: return "pci_bus_id";
	case CH_NVML_MATCH_UUID: return "uuid";
	case CH_NVML_MATCH_INDEX: return "index";
	default: return "none";
	}
}

char *ch_nvml_uuid_str(const unsigned char bytes[16], char *buf, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	char s[41];
	int i, o = 0;

	memcpy(s, "GPU-", 4);
	o = 4;
	for (i = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			s[o++] = '-';
		s[o++] = hex[bytes[i] >> 4];
		s[o++] = hex[bytes[i] & 15];
	}
	s[o] = '\0';
	snprintf(buf, n, "%s", s);
	return buf;
}

int ch_nvml_device_for_cuda(const char *bus_id, const char *uuid, int cuda_index, int cuda_count,
			    ch_nvml_dev_t *out, enum ch_nvml_match *how)
{
	*how = CH_NVML_MATCH_NONE;
#ifdef HAVE_NVML
	nvmlDevice_t d;
	if (nv.refs <= 0)
		return CH_ERR_UNAVAILABLE;
	if (bus_id && bus_id[0] && nv.by_pci && nv.by_pci(bus_id, &d) == NVML_SUCCESS) {
		*how = CH_NVML_MATCH_PCI;
	} else if (uuid && uuid[0] && nv.by_uuid && nv.by_uuid(uuid, &d) == NVML_SUCCESS) {
		*how = CH_NVML_MATCH_UUID;
	} else if (cuda_index >= 0 && cuda_count > 0 && ch_nvml_device_count() == cuda_count &&
		   nv.by_index((unsigned)cuda_index, &d) == NVML_SUCCESS) {
		*how = CH_NVML_MATCH_INDEX;
	} else {
		return CH_ERR_USAGE;
	}
	*out = (ch_nvml_dev_t)d;
	return 0;
#else
	(void)bus_id; (void)uuid; (void)cuda_index; (void)cuda_count; (void)out;
	return CH_ERR_UNAVAILABLE;
#endif
}

char *ch_nvml_device_name(ch_nvml_dev_t dev, char *buf, size_t n)
{
#ifdef HAVE_NVML
	char v[128];
	if (nv.refs > 0 && nv.name && nv.name((nvmlDevice_t)dev, v, sizeof(v)) == NVML_SUCCESS) {
		snprintf(buf, n, "%s", v);
		return buf;
	}
#else
	(void)dev; (void)buf; (void)n;
#endif
	return NULL;
}

void ch_nvml_sample_na(struct ch_nvml_sample *s)
{
	s->sm_mhz = s->mem_mhz = s->power_w = s->temp_c = s->energy_j = NAN;
	s->reasons = 0;
	s->reasons_valid = 0;
}

int ch_nvml_sample(ch_nvml_dev_t dev, struct ch_nvml_sample *s)
{
	ch_nvml_sample_na(s);
#ifdef HAVE_NVML
	{
		nvmlDevice_t d = (nvmlDevice_t)dev;
		unsigned int u;
		unsigned long long ull;
		int got = 0;

		if (nv.refs <= 0)
			return CH_ERR_UNAVAILABLE;
		if (nv.clock && nv.clock(d, NVML_CLOCK_SM, &u) == NVML_SUCCESS)
			s->sm_mhz = u, got = 1;
		if (nv.clock && nv.clock(d, NVML_CLOCK_MEM, &u) == NVML_SUCCESS)
			s->mem_mhz = u, got = 1;
		if (nv.power && nv.power(d, &u) == NVML_SUCCESS)
			s->power_w = u / 1000.0, got = 1;           /* milliwatts */
		if (nv.temperature && nv.temperature(d, NVML_TEMPERATURE_GPU, &u) == NVML_SUCCESS)
			s->temp_c = u, got = 1;
		if (nv.energy && nv.energy(d, &ull) == NVML_SUCCESS)
			s->energy_j = (double)ull / 1000.0, got = 1; /* millijoules */
		if (nv.reasons && nv.reasons(d, &ull) == NVML_SUCCESS)
			s->reasons = ull, s->reasons_valid = 1, got = 1;
		return got ? 0 : CH_ERR_UNAVAILABLE;
	}
#else
	(void)dev;
	return CH_ERR_UNAVAILABLE;
#endif
}

static const struct { unsigned long long bit; const char *name; } reason_names[] = {
	{ CH_NVML_REASON_GPU_IDLE, "gpu_idle" },
	{ CH_NVML_REASON_APP_CLOCKS, "applications_clocks_setting" },
	{ CH_NVML_REASON_SW_POWER_CAP, "sw_power_cap" },
	{ CH_NVML_REASON_HW_SLOWDOWN, "hw_slowdown" },
	{ CH_NVML_REASON_SYNC_BOOST, "sync_boost" },
	{ CH_NVML_REASON_SW_THERMAL, "sw_thermal_slowdown" },
	{ CH_NVML_REASON_HW_THERMAL, "hw_thermal_slowdown" },
	{ CH_NVML_REASON_HW_POWER_BRAKE, "hw_power_brake_slowdown" },
	{ CH_NVML_REASON_DISPLAY_CLOCKS, "display_clock_setting" },
};

#define NREASONS (sizeof(reason_names) / sizeof(reason_names[0]))

char *ch_nvml_reasons_str(unsigned long long reasons, char *buf, size_t n)
{
	size_t i, len = 0;

	if (!n)
		return buf;
	buf[0] = '\0';
	if (!reasons) {
		snprintf(buf, n, "none");
		return buf;
	}
	for (i = 0; i < NREASONS; i++) {
		if (!(reasons & reason_names[i].bit))
			continue;
		len += (size_t)snprintf(buf + len, len < n ? n - len : 0, "%s%s",
					len ? "," : "", reason_names[i].name);
		if (len >= n)
			break;
	}
	if (reasons & ~((CH_NVML_REASON_DISPLAY_CLOCKS << 1) - 1) && len < n)
		snprintf(buf + len, n - len, "%sother", len ? "," : "");
	return buf;
}

int ch_nvml_throttled(unsigned long long reasons)
{
	return (reasons & CH_NVML_THROTTLE_MASK) != 0;
}

static json_t *num_or_null(double v)
{
	return isnan(v) ? json_null() : json_real(v);
}

json_t *ch_nvml_sample_json(const struct ch_nvml_sample *s)
{
	json_t *o = json_object(), *r;
	size_t i;

	if (!o)
		return NULL;
	json_object_set_new(o, "sm_mhz", num_or_null(s->sm_mhz));
	json_object_set_new(o, "mem_mhz", num_or_null(s->mem_mhz));
	json_object_set_new(o, "power_w", num_or_null(s->power_w));
	json_object_set_new(o, "temp_c", num_or_null(s->temp_c));
	json_object_set_new(o, "energy_j", num_or_null(s->energy_j));
	if (s->reasons_valid) {
		r = json_array();
		for (i = 0; i < NREASONS; i++)
			if (s->reasons & reason_names[i].bit)
				json_array_append_new(r, json_string(reason_names[i].name));
		json_object_set_new(o, "clock_event_reasons", r);
		json_object_set_new(o, "throttled", json_boolean(ch_nvml_throttled(s->reasons)));
	} else {
		json_object_set_new(o, "clock_event_reasons", json_null());
		json_object_set_new(o, "throttled", json_null());
	}
	return o;
}

int ch_nvml_energy_total_j(double *out)
{
#ifdef HAVE_NVML
	unsigned int c = 0, i;
	double sum = 0;

	if (nv.refs <= 0 || !nv.energy || nv.count(&c) != NVML_SUCCESS || c == 0)
		return CH_ERR_UNAVAILABLE;
	for (i = 0; i < c; i++) {
		nvmlDevice_t d;
		unsigned long long mj;
		if (nv.by_index(i, &d) != NVML_SUCCESS || nv.energy(d, &mj) != NVML_SUCCESS)
			return CH_ERR_UNAVAILABLE;
		sum += (double)mj / 1000.0;
	}
	*out = sum;
	return 0;
#else
	(void)out;
	return CH_ERR_UNAVAILABLE;
#endif
}

int ch_nvml_energy_j(ch_nvml_dev_t dev, double *j)
{
#ifdef HAVE_NVML
	unsigned long long mj;
	if (nv.refs <= 0 || !nv.energy || nv.energy((nvmlDevice_t)dev, &mj) != NVML_SUCCESS)
		return CH_ERR_UNAVAILABLE;
	*j = (double)mj / 1000.0; /* millijoules */
	return 0;
#else
	(void)dev; (void)j;
	return CH_ERR_UNAVAILABLE;
#endif
}

void ch_nvml_violations_na(struct ch_nvml_violations *v)
{
	v->power_ns = v->thermal_ns = v->sw_thermal_ns = v->hw_thermal_ns = v->hw_power_brake_ns = NAN;
	v->t_sec = NAN;
}

int ch_nvml_violations(ch_nvml_dev_t dev, struct ch_nvml_violations *v)
{
	ch_nvml_violations_na(v);
	v->t_sec = ch_now_sec();
#ifdef HAVE_NVML
	{
		nvmlDevice_t d = (nvmlDevice_t)dev;
		unsigned long long t[2]; /* nvmlViolationTime_t: referenceTime, violationTime */
		int got = 0;

		if (nv.refs <= 0)
			return CH_ERR_UNAVAILABLE;
		/* nvmlPerfPolicyType_t: NVML_PERF_POLICY_POWER 0, _THERMAL 1 */
		if (nv.violation && nv.violation(d, 0, t) == NVML_SUCCESS)
			v->power_ns = (double)t[1], got = 1;
		if (nv.violation && nv.violation(d, 1, t) == NVML_SUCCESS)
			v->thermal_ns = (double)t[1], got = 1;
		/* the clock-event reason counters (ns); a driver without them
		 * answers per field */
		if (nv.field_values) {
			struct ch_nvml_field_value f[3];
			double *dst[3] = { &v->sw_thermal_ns, &v->hw_thermal_ns, &v->hw_power_brake_ns };
			int i;
			memset(f, 0, sizeof(f));
			f[0].field_id = CH_NVML_FI_SW_THERM_SLOWDOWN;
			f[1].field_id = CH_NVML_FI_HW_THERM_SLOWDOWN;
			f[2].field_id = CH_NVML_FI_HW_POWER_BRAKE;
			if (nv.field_values(d, 3, f) == NVML_SUCCESS)
				for (i = 0; i < 3; i++)
					if (f[i].nvml_return == NVML_SUCCESS &&
					    f[i].value_type == CH_NVML_VALUE_TYPE_UNSIGNED_LONG_LONG)
						*dst[i] = (double)f[i].value.ull, got = 1;
		}
		return got ? 0 : CH_ERR_UNAVAILABLE;
	}
#else
	(void)dev;
	return CH_ERR_UNAVAILABLE;
#endif
}

/* ------------------------------------------------------------ inventory */

#ifdef HAVE_NVML
/* 1 when the call was made and succeeded; otherwise the reason is recorded
 * under @path in @rs and 0 returned. @have: the symbol was found. */
static int got(json_t *rs, const char *path, const char *fn, int have, nvmlReturn_t r)
{
	char why[256];
	if (have && r == NVML_SUCCESS)
		return 1;
	if (!have)
		snprintf(why, sizeof(why), "%s is not in this driver's libnvidia-ml.so.1", fn);
	else
		snprintf(why, sizeof(why), "%s: %s", fn, nvml_err(r));
	json_object_set_new(rs, path, json_string(why));
	return 0;
}

static void set_or_null(json_t *o, const char *key, json_t *v)
{
	json_object_set_new(o, key, v ? v : json_null());
}

#define CALL(rs, path, fnp, fname, ...) \
	got(rs, path, fname, (fnp) != NULL, (fnp) ? (fnp)(__VA_ARGS__) : 0)

static json_t *text_field(json_t *rs, const char *path, const char *fname,
			  nvmlReturn_t (*fn)(nvmlDevice_t, char *, unsigned int), nvmlDevice_t d)
{
	char buf[128];
	if (CALL(rs, path, fn, fname, d, buf, sizeof(buf)))
		return json_string(buf);
	return NULL;
}

static json_t *uint_field(json_t *rs, const char *path, const char *fname,
			  nvmlReturn_t (*fn)(nvmlDevice_t, unsigned int *), nvmlDevice_t d, double scale)
{
	unsigned int u;
	if (!CALL(rs, path, fn, fname, d, &u))
		return NULL;
	return scale == 1 ? json_integer(u) : json_real(u * scale);
}

static json_t *clock_field(json_t *rs, const char *path, const char *fname,
			   nvmlReturn_t (*fn)(nvmlDevice_t, nvmlClockType_t, unsigned int *),
			   nvmlDevice_t d, nvmlClockType_t type)
{
	unsigned int u;
	return CALL(rs, path, fn, fname, d, type, &u) ? json_integer(u) : NULL;
}

static json_t *nvlink_json(json_t *rs, nvmlDevice_t d)
{
	static const char *const names[] = { "replay", "recovery", "crc_flit", "crc_data", "ecc_data" };
	json_t *o = json_object(), *states = json_array(), *errs = json_object();
	unsigned long long sum[5] = { 0 };
	nvmlReturn_t err[5] = { 0 };
	int have[5] = { 0 }, links = 0, up = 0, c;
	unsigned l;
	nvmlReturn_t last = 0;

	for (l = 0; l < CH_NVML_NVLINK_MAX_LINKS && nv.nvlink_state; l++) {
		int active = 0;
		nvmlReturn_t r = nv.nvlink_state(d, l, &active);
		if (r != NVML_SUCCESS) {
			last = r;
			if (r == CH_NVML_ERROR_INVALID_ARGUMENT)
				break; /* past the device's last link */
			continue;
		}
		links++;
		up += active != 0;
		json_array_append_new(states, json_string(active ? "up" : "down"));
		for (c = 0; c < 5 && nv.nvlink_errors; c++) {
			unsigned long long v;
			nvmlReturn_t r2 = nv.nvlink_errors(d, l, c, &v);
			if (r2 == NVML_SUCCESS)
				sum[c] += v, have[c] = 1;
			else
				err[c] = r2;
		}
	}
	json_object_set_new(o, "links", json_integer(links));
	json_object_set_new(o, "up", json_integer(up));
	json_object_set_new(o, "states", states);
	if (links == 0) {
		got(rs, "nvlink.links", "nvmlDeviceGetNvLinkState", nv.nvlink_state != NULL, last ? last : 3);
		json_object_set_new(rs, "nvlink.errors", json_string("no NVLink link reported"));
		json_object_set_new(o, "errors", json_null());
		json_decref(errs);
		return o;
	}
	for (c = 0; c < 5; c++) {
		char path[48];
		snprintf(path, sizeof(path), "nvlink.errors.%s", names[c]);
		if (have[c]) {
			json_object_set_new(errs, names[c], json_integer((json_int_t)sum[c]));
		} else {
			json_object_set_new(errs, names[c], json_null());
			got(rs, path, "nvmlDeviceGetNvLinkErrorCounter", nv.nvlink_errors != NULL, err[c]);
		}
	}
	json_object_set_new(o, "errors", errs);
	return o;
}

static json_t *ecc_json(json_t *rs, nvmlDevice_t d)
{
	static const char *const kind[] = { "corrected", "uncorrected" };
	static const char *const ctr[] = { "volatile", "aggregate" };
	json_t *o = json_object();
	int cur, pend, t, c;

	if (CALL(rs, "ecc.mode_current", nv.ecc_mode, "nvmlDeviceGetEccMode", d, &cur, &pend)) {
		json_object_set_new(o, "mode_current", json_string(cur ? "enabled" : "disabled"));
		json_object_set_new(o, "mode_pending", json_string(pend ? "enabled" : "disabled"));
	} else {
		json_object_set_new(o, "mode_current", json_null());
		json_object_set_new(o, "mode_pending", json_null());
		json_object_set(rs, "ecc.mode_pending", json_object_get(rs, "ecc.mode_current"));
	}
	for (c = 0; c < 2; c++) {
		json_t *x = json_object();
		for (t = 0; t < 2; t++) {
			unsigned long long v;
			char path[48];
			snprintf(path, sizeof(path), "ecc.%s.%s", ctr[c], kind[t]);
			set_or_null(x, kind[t], CALL(rs, path, nv.ecc_total, "nvmlDeviceGetTotalEccErrors",
						     d, t, c, &v) ? json_integer((json_int_t)v) : NULL);
		}
		json_object_set_new(o, ctr[c], x);
	}
	return o;
}

static json_t *remap_json(json_t *rs, nvmlDevice_t d)
{
	static const char *const keys[] = { "correctable_rows", "uncorrectable_rows", "pending", "failure" };
	json_t *o = json_object();
	unsigned int v[4];
	int k;

	if (CALL(rs, "remap.pending", nv.remapped_rows, "nvmlDeviceGetRemappedRows", d, &v[0], &v[1], &v[2], &v[3])) {
		for (k = 0; k < 4; k++)
			json_object_set_new(o, keys[k], k < 2 ? json_integer(v[k]) : json_boolean(v[k]));
		return o;
	}
	for (k = 0; k < 4; k++) {
		char path[48];
		snprintf(path, sizeof(path), "remap.%s", keys[k]);
		json_object_set_new(o, keys[k], json_null());
		if (k != 2)
			json_object_set(rs, path, json_object_get(rs, "remap.pending"));
	}
	return o;
}

static json_t *retired_json(json_t *rs, nvmlDevice_t d)
{
	static const char *const keys[] = { "single_bit", "double_bit" };
	json_t *o = json_object();
	int c, pend;

	for (c = 0; c < 2; c++) {
		unsigned int n = 0;
		nvmlReturn_t r = nv.retired_pages ? nv.retired_pages(d, c, &n, NULL) : 0;
		char path[48];
		snprintf(path, sizeof(path), "retired_pages.%s", keys[c]);
		if (r == CH_NVML_ERROR_INSUFFICIENT_SIZE)
			r = NVML_SUCCESS; /* the count is in n; the addresses were not asked for */
		set_or_null(o, keys[c], got(rs, path, "nvmlDeviceGetRetiredPages", nv.retired_pages != NULL, r) ?
			    json_integer(n) : NULL);
	}
	set_or_null(o, "pending", CALL(rs, "retired_pages.pending", nv.retired_pending,
				       "nvmlDeviceGetRetiredPagesPendingStatus", d, &pend) ? json_boolean(pend) : NULL);
	return o;
}

/* "00000000:18:00.0" (NVML) -> "0000:18:00.0" (hwloc, sysfs). */
static void bus_id_short(const char *in, char *out, size_t n)
{
	unsigned dom, bus, dev, fn;
	if (sscanf(in, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) == 4)
		snprintf(out, n, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
	else
		snprintf(out, n, "%s", in);
}
#endif

json_t *ch_nvml_gpu_inventory(ch_nvml_dev_t dev, unsigned index)
{
#ifdef HAVE_NVML
	nvmlDevice_t d = (nvmlDevice_t)dev;
	json_t *o = json_object(), *rs = json_object(), *x, *r;
	struct ch_nvml_pci_info pci;
	char buf[128];
	unsigned long long ull;
	int mode;
	size_t i;

	if (!o || !rs || nv.refs <= 0) {
		json_decref(o);
		json_decref(rs);
		return NULL;
	}
	json_object_set_new(o, "index", json_integer(index));
	set_or_null(o, "name", text_field(rs, "name", "nvmlDeviceGetName", nv.name, d));
	if (CALL(rs, "pci_bus_id", nv.pci_info, "nvmlDeviceGetPciInfo_v3", d, &pci)) {
		bus_id_short(pci.bus_id, buf, sizeof(buf));
		json_object_set_new(o, "pci_bus_id", json_string(buf));
	} else {
		json_object_set_new(o, "pci_bus_id", json_null());
	}
	set_or_null(o, "uuid", text_field(rs, "uuid", "nvmlDeviceGetUUID", nv.uuid, d));
	set_or_null(o, "serial", text_field(rs, "serial", "nvmlDeviceGetSerial", nv.serial, d));
	x = json_object();
	set_or_null(x, "gen_current", uint_field(rs, "pcie.gen_current", "nvmlDeviceGetCurrPcieLinkGeneration", nv.pcie_gen, d, 1));
	set_or_null(x, "gen_max", uint_field(rs, "pcie.gen_max", "nvmlDeviceGetMaxPcieLinkGeneration", nv.pcie_gen_max, d, 1));
	set_or_null(x, "width_current", uint_field(rs, "pcie.width_current", "nvmlDeviceGetCurrPcieLinkWidth", nv.pcie_width, d, 1));
	set_or_null(x, "width_max", uint_field(rs, "pcie.width_max", "nvmlDeviceGetMaxPcieLinkWidth", nv.pcie_width_max, d, 1));
	json_object_set_new(o, "pcie", x);
	json_object_set_new(o, "nvlink", nvlink_json(rs, d));
	json_object_set_new(o, "ecc", ecc_json(rs, d));
	json_object_set_new(o, "remap", remap_json(rs, d));
	json_object_set_new(o, "retired_pages", retired_json(rs, d));
	x = json_object();
	set_or_null(x, "limit_default_w", uint_field(rs, "power.limit_default_w", "nvmlDeviceGetPowerManagementDefaultLimit",
						      nv.power_default, d, 1e-3));
	set_or_null(x, "limit_enforced_w", uint_field(rs, "power.limit_enforced_w", "nvmlDeviceGetEnforcedPowerLimit",
						       nv.power_enforced, d, 1e-3));
	json_object_set_new(o, "power", x);
	x = json_object();
	set_or_null(x, "sm_mhz", clock_field(rs, "clocks.sm_mhz", "nvmlDeviceGetClockInfo", nv.clock, d, NVML_CLOCK_SM));
	set_or_null(x, "sm_max_mhz", clock_field(rs, "clocks.sm_max_mhz", "nvmlDeviceGetMaxClockInfo", nv.max_clock, d, NVML_CLOCK_SM));
	set_or_null(x, "mem_mhz", clock_field(rs, "clocks.mem_mhz", "nvmlDeviceGetClockInfo", nv.clock, d, NVML_CLOCK_MEM));
	set_or_null(x, "mem_max_mhz", clock_field(rs, "clocks.mem_max_mhz", "nvmlDeviceGetMaxClockInfo", nv.max_clock, d, NVML_CLOCK_MEM));
	set_or_null(x, "sm_app_mhz", clock_field(rs, "clocks.sm_app_mhz", "nvmlDeviceGetApplicationsClock", nv.app_clock, d, NVML_CLOCK_SM));
	set_or_null(x, "sm_default_app_mhz", clock_field(rs, "clocks.sm_default_app_mhz", "nvmlDeviceGetDefaultApplicationsClock",
							 nv.default_app_clock, d, NVML_CLOCK_SM));
	json_object_set_new(o, "clocks", x);
	set_or_null(o, "persistence", CALL(rs, "persistence", nv.persistence, "nvmlDeviceGetPersistenceMode", d, &mode) ?
		    json_boolean(mode) : NULL);
	if (CALL(rs, "clock_event_reasons", nv.reasons, "nvmlDeviceGetCurrentClocksEventReasons", d, &ull)) {
		r = json_array();
		for (i = 0; i < NREASONS; i++)
			if (ull & reason_names[i].bit)
				json_array_append_new(r, json_string(reason_names[i].name));
		json_object_set_new(o, "clock_event_reasons", r);
	} else {
		json_object_set_new(o, "clock_event_reasons", json_null());
	}
	if (ch_nvml_driver_version(buf, sizeof(buf)))
		json_object_set_new(o, "driver_version", json_string(buf));
	else {
		json_object_set_new(o, "driver_version", json_null());
		json_object_set_new(rs, "driver_version", json_string("nvmlSystemGetDriverVersion gave no version"));
	}
	set_or_null(o, "vbios_version", text_field(rs, "vbios_version", "nvmlDeviceGetVbiosVersion", nv.vbios, d));
	json_object_set_new(o, "reasons", rs);
	return o;
#else
	(void)dev; (void)index;
	return NULL;
#endif
}

void *ch_nvml_symbol(const char *name)
{
#ifdef HAVE_NVML
	return nv.refs > 0 && name ? dlsym(nv.lib, name) : NULL;
#else
	(void)name;
	return NULL;
#endif
}

const char *ch_nvml_error_string(int r)
{
#ifdef HAVE_NVML
	if (nv.refs > 0)
		return nvml_err((nvmlReturn_t)r);
#endif
	(void)r;
	return "NVML not loaded";
}
