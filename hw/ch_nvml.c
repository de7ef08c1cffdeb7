#include "hw/ch_nvml.h"
#include "base/ch_common.h"

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
	nvmlReturn_t (*name)(nvmlDevice_t, char *, unsigned int);
	nvmlReturn_t (*clock)(nvmlDevice_t, nvmlClockType_t, unsigned int *);
	nvmlReturn_t (*power)(nvmlDevice_t, unsigned int *);
	nvmlReturn_t (*temperature)(nvmlDevice_t, nvmlTemperatureSensors_t, unsigned int *);
	nvmlReturn_t (*reasons)(nvmlDevice_t, unsigned long long *);
	nvmlReturn_t (*energy)(nvmlDevice_t, unsigned long long *);
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
	*(void **)&nv.name = sym("nvmlDeviceGetName");
	*(void **)&nv.clock = sym("nvmlDeviceGetClockInfo");
	*(void **)&nv.power = sym("nvmlDeviceGetPowerUsage");
	*(void **)&nv.temperature = sym("nvmlDeviceGetTemperature");
	*(void **)&nv.reasons = sym("nvmlDeviceGetCurrentClocksEventReasons");
	if (!nv.reasons)
		*(void **)&nv.reasons = sym("nvmlDeviceGetCurrentClocksThrottleReasons");
	*(void **)&nv.energy = sym("nvmlDeviceGetTotalEnergyConsumption");
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
