#include <criterion/criterion.h>

#include "base/ch_datasheet.h"

Test(datasheet, lookup_by_device_name)
{
	const struct ch_datasheet *d;

	d = ch_datasheet_lookup("NVIDIA H200");
	cr_assert_not_null(d);
	cr_assert_str_eq(d->sku, "H200 SXM");
	cr_assert_float_eq(d->memory_gbps, 4800, 0);
	cr_assert_float_eq(d->gflops[CH_BF16], 989500, 0);
	cr_assert_str_eq(ch_datasheet_lookup("NVIDIA H200 NVL")->sku, "H200 NVL");
	cr_assert_str_eq(ch_datasheet_lookup("NVIDIA H100 80GB HBM3")->sku, "H100 SXM");
	cr_assert_str_eq(ch_datasheet_lookup("NVIDIA H100 PCIe")->sku, "H100 PCIe");
	cr_assert_str_eq(ch_datasheet_lookup("NVIDIA A100-SXM4-80GB")->sku, "A100 SXM 80GB");
	cr_assert_str_eq(ch_datasheet_lookup("NVIDIA A100-SXM4-40GB")->sku, "A100 SXM 40GB");
	cr_assert_str_eq(ch_datasheet_lookup("NVIDIA L40S")->sku, "L40S");
	cr_assert_null(ch_datasheet_lookup("Tesla V100-SXM2-32GB"));
	cr_assert_null(ch_datasheet_lookup(NULL));
}

Test(datasheet, every_entry_has_source_and_bandwidth)
{
	int n, i;
	const struct ch_datasheet *t = ch_datasheet_table(&n);
	cr_assert_geq(n, 6);
	for (i = 0; i < n; i++) {
		cr_assert_gt(t[i].memory_gbps, 0, "%s", t[i].sku);
		cr_assert_gt(t[i].gflops[CH_BF16], t[i].gflops[CH_FP32], "%s", t[i].sku);
		cr_assert(t[i].source && t[i].source[0], "%s", t[i].sku);
	}
	cr_assert_eq(ch_dtype_parse("bf16"), CH_BF16);
	cr_assert_eq(ch_dtype_parse("int4"), -1);
	cr_assert_str_eq(ch_dtype_name(CH_FP8), "fp8");
}

Test(datasheet, cuda_core_fp64_is_the_ladder_ceiling)
{
	const struct ch_datasheet *h200 = ch_datasheet_lookup("NVIDIA H200");
	int n, i;
	const struct ch_datasheet *t = ch_datasheet_table(&n);

	/* the "FP64" row, not the "FP64 Tensor Core" row (67000) */
	cr_assert_float_eq(ch_datasheet_cuda_core_gflops(h200, CH_FP64), 34000, 0);
	cr_assert_float_eq(h200->gflops[CH_FP64], 67000, 0);
	cr_assert_float_eq(ch_datasheet_cuda_core_gflops(h200, CH_FP32), 67000, 0);
	cr_assert_float_eq(ch_datasheet_cuda_core_gflops(h200, CH_BF16), 0, 0);
	cr_assert_float_eq(ch_datasheet_cuda_core_gflops(ch_datasheet_lookup("NVIDIA H100 PCIe"), CH_FP64), 26000, 0);
	cr_assert_float_eq(ch_datasheet_cuda_core_gflops(ch_datasheet_lookup("NVIDIA L40S"), CH_FP64), 0, 0);
	cr_assert_float_eq(ch_datasheet_cuda_core_gflops(NULL, CH_FP64), 0, 0);
	for (i = 0; i < n; i++)
		cr_assert_leq(t[i].fp64_cuda_core_gflops, t[i].gflops[CH_FP64], "%s", t[i].sku);
}
