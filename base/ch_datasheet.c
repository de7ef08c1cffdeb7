#include "base/ch_datasheet.h"

#include <string.h>

/*
 * Dense (no 2:4 sparsity) peaks. NVIDIA's datasheets print Tensor Core
 * figures "with sparsity"; the dense figure is half of it. The figure after
 * the peaks is the same datasheet's "FP64" row (CUDA cores, no tensor
 * cores), beside its "FP64 Tensor Core" row: H100/H200 SXM 34 vs 67 TFLOP/s,
 * NVL 30 vs 60, H100 PCIe 26 vs 51, A100 9.7 vs 19.5; B200 prints one
 * "FP64/FP64 Tensor Core" figure (37); the L40S datasheet prints no FP64.
 * Order matters: the first entry whose match string occurs in the device
 * name wins, so the more specific names come first.
 */
static const struct ch_datasheet table[] = {
	{ "H200 NVL", "H200 NVL", NULL, 4800,
	  { 60000, 60000, 417500, 835500, 835500, 1670500 }, 30000,
	  "NVIDIA H200 Tensor Core GPU datasheet (nvidia.com/en-us/data-center/h200), H200 NVL column; tensor figures halved (dense)" },
	{ "H200 SXM", "H200", "GH200", 4800,
	  { 67000, 67000, 494500, 989500, 989500, 1979000 }, 34000,
	  "NVIDIA H200 Tensor Core GPU datasheet (nvidia.com/en-us/data-center/h200), H200 SXM column; tensor figures halved (dense)" },
	{ "H100 NVL", "H100 NVL", NULL, 3900,
	  { 60000, 60000, 417500, 835500, 835500, 1670500 }, 30000,
	  "NVIDIA H100 Tensor Core GPU datasheet (nvidia.com/en-us/data-center/h100), H100 NVL column; tensor figures halved (dense)" },
	{ "H100 PCIe", "H100 PCIe", NULL, 2000,
	  { 51000, 51000, 378000, 756000, 756000, 1513000 }, 26000,
	  "NVIDIA H100 Tensor Core GPU datasheet (nvidia.com/en-us/data-center/h100), H100 PCIe column; tensor figures halved (dense)" },
	{ "H100 SXM", "H100", NULL, 3350,
	  { 67000, 67000, 494500, 989500, 989500, 1979000 }, 34000,
	  "NVIDIA H100 Tensor Core GPU datasheet (nvidia.com/en-us/data-center/h100), H100 SXM column; tensor figures halved (dense)" },
	{ "A100 PCIe 80GB", "A100 80GB PCIe", NULL, 1935,
	  { 19500, 19500, 156000, 312000, 312000, 0 }, 9700,
	  "NVIDIA A100 Tensor Core GPU datasheet (nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf), A100 80GB PCIe column" },
	{ "A100 SXM 80GB", "A100-SXM4-80GB", NULL, 2039,
	  { 19500, 19500, 156000, 312000, 312000, 0 }, 9700,
	  "NVIDIA A100 Tensor Core GPU datasheet (nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf), A100 80GB SXM column" },
	{ "A100 SXM 40GB", "A100", NULL, 1555,
	  { 19500, 19500, 156000, 312000, 312000, 0 }, 9700,
	  "NVIDIA A100 Tensor Core GPU datasheet (nvidia-a100-datasheet-us-nvidia-1758950-r4-web.pdf), A100 40GB SXM column" },
	{ "B200", "B200", NULL, 8000,
	  { 37000, 75000, 1100000, 2250000, 2250000, 4500000 }, 37000,
	  "NVIDIA DGX B200 / HGX B200 datasheet (nvidia.com/en-us/data-center/hgx), per-GPU figures; tensor figures halved (dense)" },
	{ "L40S", "L40S", NULL, 864,
	  { 0, 91600, 183000, 362050, 362050, 733000 }, 0,
	  "NVIDIA L40S datasheet (nvidia.com/en-us/data-center/l40s); tensor figures halved (dense); no FP64 figure" },
};

const struct ch_datasheet *ch_datasheet_lookup(const char *device_name)
{
	size_t i;
	if (!device_name)
		return NULL;
	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		if (!strstr(device_name, table[i].match))
			continue;
		if (table[i].match_not && strstr(device_name, table[i].match_not))
			continue;
		return &table[i];
	}
	return NULL;
}

const struct ch_datasheet *ch_datasheet_table(int *n)
{
	*n = (int)(sizeof(table) / sizeof(table[0]));
	return table;
}

double ch_datasheet_cuda_core_gflops(const struct ch_datasheet *ds, enum ch_dtype d)
{
	if (!ds)
		return 0;
	if (d == CH_FP64)
		return ds->fp64_cuda_core_gflops;
	if (d == CH_FP32)
		return ds->gflops[CH_FP32]; /* the FP32 row is CUDA cores already */
	return 0;
}
