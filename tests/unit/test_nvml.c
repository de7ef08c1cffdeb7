#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <string.h>

#include "base/ch_common.h"
#include "hw/ch_nvml.h"

Test(nvml, reasons_named_and_throttle_mask)
{
	char buf[256];
	cr_assert_str_eq(ch_nvml_reasons_str(0, buf, sizeof(buf)), "none");
	cr_assert_str_eq(ch_nvml_reasons_str(CH_NVML_REASON_SW_POWER_CAP | CH_NVML_REASON_HW_THERMAL, buf, sizeof(buf)),
			 "sw_power_cap,hw_thermal_slowdown");
	cr_assert_str_eq(ch_nvml_reasons_str(0x1ULL | (1ULL << 40), buf, sizeof(buf)), "gpu_idle,other");
	cr_assert_eq(ch_nvml_throttled(CH_NVML_REASON_GPU_IDLE), 0);
	cr_assert_eq(ch_nvml_throttled(CH_NVML_REASON_APP_CLOCKS | CH_NVML_REASON_SYNC_BOOST), 0);
	cr_assert_eq(ch_nvml_throttled(CH_NVML_REASON_SW_POWER_CAP), 1);
	cr_assert_eq(ch_nvml_throttled(CH_NVML_REASON_HW_SLOWDOWN), 1);
	cr_assert_eq(ch_nvml_throttled(CH_NVML_REASON_SW_THERMAL), 1);
	cr_assert_eq(ch_nvml_throttled(CH_NVML_REASON_HW_POWER_BRAKE), 1);
	/* the bit values are NVML's (nvml.h, nvmlClocksEventReason*) */
	cr_assert_eq(CH_NVML_REASON_SW_POWER_CAP, 0x4ULL);
	cr_assert_eq(CH_NVML_REASON_HW_SLOWDOWN, 0x8ULL);
	cr_assert_eq(CH_NVML_REASON_SW_THERMAL, 0x20ULL);
	cr_assert_eq(CH_NVML_REASON_HW_THERMAL, 0x40ULL);
}

Test(nvml, sample_json_na_is_null)
{
	struct ch_nvml_sample s;
	json_t *j;

	ch_nvml_sample_na(&s);
	j = ch_nvml_sample_json(&s);
	cr_assert(json_is_null(json_object_get(j, "sm_mhz")));
	cr_assert(json_is_null(json_object_get(j, "power_w")));
	cr_assert(json_is_null(json_object_get(j, "energy_j")));
	cr_assert(json_is_null(json_object_get(j, "clock_event_reasons")));
	cr_assert(json_is_null(json_object_get(j, "throttled")));
	json_decref(j);

	s.sm_mhz = 1980;
	s.power_w = 650.5;
	s.reasons = CH_NVML_REASON_SW_POWER_CAP;
	s.reasons_valid = 1;
	j = ch_nvml_sample_json(&s);
	cr_assert_float_eq(json_number_value(json_object_get(j, "sm_mhz")), 1980, 0);
	cr_assert_float_eq(json_number_value(json_object_get(j, "power_w")), 650.5, 0);
	cr_assert_str_eq(json_string_value(json_array_get(json_object_get(j, "clock_event_reasons"), 0)), "sw_power_cap");
	cr_assert(json_is_true(json_object_get(j, "throttled")));
	json_decref(j);
}

/* Without the driver NVML is "unavailable" with a reason, never a crash. */
Test(nvml, no_driver_unavailable)
{
	char why[256] = "", buf[96];
	ch_nvml_dev_t d;
	struct ch_nvml_sample s;
	double e;
	int rc = ch_nvml_init(why, sizeof(why));

	if (rc == 0) {
		ch_nvml_shutdown();
		cr_skip_test("an NVIDIA driver is present here: the no-driver path cannot be exercised");
	}
	cr_assert_eq(rc, CH_ERR_UNAVAILABLE);
	cr_assert(strlen(why) > 0);
	/* the failure is remembered with its reason */
	cr_assert_eq(ch_nvml_init(why, sizeof(why)), CH_ERR_UNAVAILABLE);
	cr_assert(strlen(why) > 0);
	cr_assert_eq(ch_nvml_device_count(), 0);
	cr_assert_eq(ch_nvml_device_by_index(0, &d), CH_ERR_UNAVAILABLE);
	cr_assert_eq(ch_nvml_device_by_pci("0000:3b:00.0", &d), CH_ERR_UNAVAILABLE);
	cr_assert_null(ch_nvml_driver_version(buf, sizeof(buf)));
	cr_assert_eq(ch_nvml_sample(NULL, &s), CH_ERR_UNAVAILABLE);
	cr_assert(isnan(s.power_w));
	cr_assert_eq(ch_nvml_energy_total_j(&e), CH_ERR_UNAVAILABLE);
	ch_nvml_shutdown(); /* unmatched: harmless */
}
