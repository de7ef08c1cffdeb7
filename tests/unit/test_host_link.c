/*
 * roofline's host link measurement (bench/roofline/ch_roofline_copy.h) over
 * a mock backend whose copies report fixed figures, with the stand-in NVML
 * of tests/fake-nvml for the links (gpu0 0000:1b:00.0 PCIe Gen5 x16, gpu1
 * 0000:43:00.0 Gen5 x8 of x16); and the PCIe expectations (hw/ch_pcie.h).
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/ch_common.h"
#include "bench/roofline/ch_roofline_copy.h"
#include "hw/ch_nvml.h"
#include "hw/ch_pcie.h"
#include "kernels/ch_kernels.h"

struct ch_dev {
	int index;
	double gbps;
};

static int mock_calls;

static int mock_host_copy(struct ch_dev *d, uint64_t bytes, int calls, struct ch_copy_bw *out)
{
	__atomic_add_fetch(&mock_calls, 1, __ATOMIC_SEQ_CST);
	memset(out, 0, sizeof(*out));
	if (d->gbps < 0)
		return CH_ERR_RUNTIME;
	out->h2d_gbps = d->gbps;
	out->d2h_gbps = d->gbps + 1;
	out->bidir_h2d_gbps = out->bidir_d2h_gbps = 0.9 * d->gbps;
	out->bidir_gbps = 1.8 * d->gbps;
	out->bytes = bytes;
	out->calls = calls;
	return 0;
}

static int mock_peer_copy(struct ch_dev *s, struct ch_dev *d, int p2p, uint64_t bytes, int calls, double *g)
{
	(void)bytes;
	(void)calls;
	if (p2p && s->index == 1)
		return CH_ERR_UNAVAILABLE; /* gpu1 cannot reach its peer directly */
	*g = p2p ? 300 + d->index : 20 + d->index;
	return 0;
}

static const struct ch_backend mock = { .name = "mock", .host_copy = mock_host_copy, .peer_copy = mock_peer_copy };

static void load_fake(void)
{
	const char *b = getenv("B");
	char path[512];
	snprintf(path, sizeof(path), "%s/tests/fake-nvml/libnvidia-ml.so.1", b && *b ? b : "build");
	cr_assert_not_null(dlopen(path, RTLD_NOW | RTLD_GLOBAL), "%s: %s (make unit builds it)", path, dlerror());
}

Test(host_link, pcie_expectations_per_generation_and_width)
{
	cr_assert_float_eq(ch_pcie_expected_gbps(5, 16), 0.85 * 32 * 16 * 128.0 / 130 / 8, 1e-9);
	cr_assert(fabs(ch_pcie_expected_gbps(5, 16) - 53.6) < 0.05, "Gen5 x16: %g", ch_pcie_expected_gbps(5, 16));
	cr_assert(fabs(ch_pcie_expected_gbps(4, 16) - 26.8) < 0.05);
	cr_assert_float_eq(ch_pcie_expected_gbps(5, 8), ch_pcie_expected_gbps(4, 16), 1e-9);
	cr_assert_float_eq(ch_pcie_expected_gbps(3, 16), 0.5 * ch_pcie_expected_gbps(4, 16), 1e-9);
	cr_assert_eq(ch_pcie_expected_gbps(0, 16), 0);
	cr_assert_eq(ch_pcie_expected_gbps(5, 0), 0);
	cr_assert_eq(ch_pcie_expected_gbps(9, 16), 0);
}

Test(host_link, every_gpu_alone_at_once_with_its_link_and_the_peer_matrix)
{
	struct ch_dev d0 = { 0, 54.0 }, d1 = { 1, 27.0 };
	struct ch_dev *devs[2] = { &d0, &d1 };
	const char *labels[2] = { "gpu0", "gpu1" }, *bus[2] = { "0000:1b:00.0", "0000:43:00.0" };
	json_t *hl, *g0, *g1, *peer;

	load_fake();
	mock_calls = 0;
	hl = ch_rl_host_link(&mock, devs, labels, bus, 2, 1 << 20, 3);
	cr_assert_not_null(hl);
	cr_assert_eq(mock_calls, 4, "alone twice, at once twice: %d", mock_calls);
	g0 = json_array_get(json_object_get(hl, "gpus"), 0);
	g1 = json_array_get(json_object_get(hl, "gpus"), 1);
	cr_assert_str_eq(json_string_value(json_object_get(g1, "device")), "gpu1");
	cr_assert_float_eq(json_real_value(json_object_get(json_object_get(g1, "alone"), "h2d_gbps")), 27.0, 1e-12);
	cr_assert_float_eq(json_real_value(json_object_get(json_object_get(g1, "alone"), "d2h_gbps")), 28.0, 1e-12);
	cr_assert(json_is_object(json_object_get(g0, "all_at_once")));
	/* the link beside it: gpu1 trained to x8 of x16 */
	cr_assert_eq(json_integer_value(json_object_get(json_object_get(g1, "pcie"), "width_current")), 8);
	cr_assert_eq(json_integer_value(json_object_get(json_object_get(g1, "pcie"), "width_max")), 16);
	cr_assert_float_eq(json_real_value(json_object_get(g1, "expected_gbps")), ch_pcie_expected_gbps(5, 8), 1e-9);
	cr_assert_float_eq(json_real_value(json_object_get(g1, "expected_max_gbps")), ch_pcie_expected_gbps(5, 16), 1e-9);
	cr_assert_float_eq(json_real_value(json_object_get(g0, "expected_gbps")), ch_pcie_expected_gbps(5, 16), 1e-9);
	cr_assert_float_eq(json_real_value(json_object_get(json_object_get(hl, "all_at_once_total_gbps"), "h2d")), 81.0,
			   1e-9);
	/* the matrix: null on the diagonal and where P2P is not possible */
	peer = json_object_get(hl, "peer");
	cr_assert(json_is_null(json_array_get(json_array_get(json_object_get(peer, "p2p_on"), 0), 0)));
	cr_assert_float_eq(json_real_value(json_array_get(json_array_get(json_object_get(peer, "p2p_on"), 0), 1)), 301,
			   1e-12);
	cr_assert(json_is_null(json_array_get(json_array_get(json_object_get(peer, "p2p_on"), 1), 0)));
	cr_assert_float_eq(json_real_value(json_array_get(json_array_get(json_object_get(peer, "p2p_off"), 1), 0)), 20,
			   1e-12);
	json_decref(hl);
}

Test(host_link, one_gpu_no_peer_matrix_a_failed_copy_recorded_no_host_link_on_a_cpu)
{
	struct ch_dev d0 = { 0, -1 };
	struct ch_dev *devs[1] = { &d0 };
	const char *labels[1] = { "gpu0" }, *bus[1] = { "0000:99:00.0" };
	const struct ch_backend none = { .name = "cpu" };
	json_t *hl, *g0;

	load_fake();
	hl = ch_rl_host_link(&mock, devs, labels, bus, 1, 1 << 20, 3);
	cr_assert(json_is_null(json_object_get(hl, "peer")));
	cr_assert(json_is_null(json_object_get(hl, "all_at_once_total_gbps")));
	g0 = json_array_get(json_object_get(hl, "gpus"), 0);
	cr_assert_str_eq(json_string_value(json_object_get(g0, "status")), "failed");
	cr_assert(json_is_null(json_object_get(g0, "alone")));
	cr_assert(json_is_null(json_object_get(g0, "pcie")), "no NVML device at that bus id");
	cr_assert(json_is_null(json_object_get(g0, "expected_gbps")));
	json_decref(hl);
	cr_assert_null(ch_rl_host_link(&none, devs, labels, bus, 1, 1 << 20, 3));
}
