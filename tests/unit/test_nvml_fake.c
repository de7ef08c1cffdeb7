/*
 * hw/ch_nvml against the stand-in NVML of tests/fake-nvml (two GPUs, bus
 * ids 0000:1b:00.0 and 0000:43:00.0, UUIDs GPU-00000000-...-000 and -001):
 * pairing a CUDA device with its NVML handle by PCI bus id, then UUID, then
 * index, and which one matched; and the violation counters, the three
 * clock-event reason counters (nvmlDeviceGetFieldValues) included, which
 * every build reads. The fake library is loaded by path first, so that
 * ch_nvml_init()'s dlopen of "libnvidia-ml.so.1" finds it by its SONAME
 * (built by `make unit`: $B/tests/fake-nvml/libnvidia-ml.so.1).
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/ch_common.h"
#include "hw/ch_nvml.h"

static void load_fake(void)
{
	const char *b = getenv("B");
	char path[512];

	snprintf(path, sizeof(path), "%s/tests/fake-nvml/libnvidia-ml.so.1", b && *b ? b : "build");
	cr_assert_not_null(dlopen(path, RTLD_NOW | RTLD_GLOBAL), "%s: %s (make unit builds it)", path, dlerror());
	cr_assert_eq(ch_nvml_init(NULL, 0), 0);
}

static unsigned index_of(ch_nvml_dev_t d)
{
	unsigned i;
	for (i = 0; i < 2; i++) {
		ch_nvml_dev_t x;
		cr_assert_eq(ch_nvml_device_by_index(i, &x), 0);
		if (x == d)
			return i;
	}
	return 99;
}

Test(nvml_fake, cuda_device_matched_by_bus_id_then_uuid_then_index)
{
	const char *u1 = "GPU-00000000-0000-0000-0000-000000000001";
	enum ch_nvml_match how;
	ch_nvml_dev_t d;

	load_fake();
	/* the bus id wins, whatever the UUID and index say */
	cr_assert_eq(ch_nvml_device_for_cuda("0000:43:00.0", "GPU-00000000-0000-0000-0000-000000000000", 0, 2, &d, &how), 0);
	cr_assert_eq(how, CH_NVML_MATCH_PCI);
	cr_assert_eq(index_of(d), 1);
	/* a bus id NVML does not know (a VM's): the UUID */
	cr_assert_eq(ch_nvml_device_for_cuda("0000:99:00.0", u1, 0, 2, &d, &how), 0);
	cr_assert_eq(how, CH_NVML_MATCH_UUID);
	cr_assert_eq(index_of(d), 1);
	cr_assert_str_eq(ch_nvml_match_name(how), "uuid");
	/* neither: the index, when NVML sees as many GPUs as CUDA */
	cr_assert_eq(ch_nvml_device_for_cuda("0000:99:00.0", "GPU-ffffffff-0000-0000-0000-000000000000", 1, 2, &d, &how), 0);
	cr_assert_eq(how, CH_NVML_MATCH_INDEX);
	cr_assert_eq(index_of(d), 1);
	cr_assert_eq(ch_nvml_device_for_cuda(NULL, NULL, 0, 2, &d, &how), 0);
	cr_assert_eq(how, CH_NVML_MATCH_INDEX);
	cr_assert_eq(index_of(d), 0);
	/* CUDA sees one GPU of NVML's two (CUDA_VISIBLE_DEVICES): no index pairing */
	cr_assert_eq(ch_nvml_device_for_cuda("0000:99:00.0", NULL, 0, 1, &d, &how), CH_ERR_USAGE);
	cr_assert_eq(how, CH_NVML_MATCH_NONE);
	cr_assert_str_eq(ch_nvml_match_name(how), "none");
	cr_assert_eq(ch_nvml_device_for_cuda("", "", 5, 2, &d, &how), CH_ERR_USAGE);
	ch_nvml_shutdown();
}

Test(nvml_fake, uuid_bytes_written_as_nvml_does)
{
	unsigned char b[16];
	char s[48];
	int i;

	for (i = 0; i < 16; i++)
		b[i] = (unsigned char)(i == 15 ? 1 : (i * 17) & 0xff);
	cr_assert_str_eq(ch_nvml_uuid_str(b, s, sizeof(s)), "GPU-00112233-4455-6677-8899-aabbccddee01");
	memset(b, 0, sizeof(b));
	b[15] = 1;
	cr_assert_str_eq(ch_nvml_uuid_str(b, s, sizeof(s)), "GPU-00000000-0000-0000-0000-000000000001");
}

Test(nvml_fake, violation_counters_every_one_read)
{
	struct ch_nvml_violations v;
	ch_nvml_dev_t d0, d1;

	load_fake();
	cr_assert_eq(ch_nvml_device_by_index(0, &d0), 0);
	cr_assert_eq(ch_nvml_device_by_index(1, &d1), 0);
	cr_assert_eq(ch_nvml_violations(d0, &v), 0);
	cr_assert(v.power_ns == 0 && v.thermal_ns == 0);
	cr_assert(v.sw_thermal_ns == 0 && v.hw_thermal_ns == 0 && v.hw_power_brake_ns == 0,
		  "gpu0: %g %g %g", v.sw_thermal_ns, v.hw_thermal_ns, v.hw_power_brake_ns);
	cr_assert_eq(ch_nvml_violations(d1, &v), 0);
	cr_assert_float_eq(v.sw_thermal_ns, 2e6, 0);
	cr_assert_float_eq(v.hw_thermal_ns, 5e5, 0);
	cr_assert(isnan(v.hw_power_brake_ns), "a counter the driver does not support must stay n/a");
	cr_assert(v.t_sec > 0);
	ch_nvml_shutdown();
}
