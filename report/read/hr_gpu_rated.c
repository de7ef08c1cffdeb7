/*
 * hr_gpu_rated.c - the rated board power of a GPU model (hr_model.h): read
 * with the results (a run's estimated energy), used by the run's cost.
 */
#include "report/read/hr_model.h"

#include <string.h>

/* Maximum board power (TDP) from the vendor datasheets cited in
 * ch_datasheet.c; keyed by the datasheet SKU. */
static const struct {
	const char *sku;
	double watts;
	const char *source;
} rated[] = {
	{ "H200 NVL", 600, "NVIDIA H200 datasheet: max TDP up to 600 W (H200 NVL)" },
	{ "H200 SXM", 700, "NVIDIA H200 datasheet: max TDP up to 700 W (H200 SXM)" },
	{ "H100 NVL", 400, "NVIDIA H100 datasheet: max TDP 350-400 W (H100 NVL)" },
	{ "H100 PCIe", 350, "NVIDIA H100 datasheet: max TDP 300-350 W (H100 PCIe)" },
	{ "H100 SXM", 700, "NVIDIA H100 datasheet: max TDP up to 700 W (H100 SXM)" },
	{ "A100 PCIe 80GB", 300, "NVIDIA A100 datasheet: max TDP 300 W (A100 80GB PCIe)" },
	{ "A100 SXM 80GB", 400, "NVIDIA A100 datasheet: max TDP 400 W (A100 SXM)" },
	{ "A100 SXM 40GB", 400, "NVIDIA A100 datasheet: max TDP 400 W (A100 SXM)" },
	{ "B200", 1000, "NVIDIA HGX B200 datasheet: 1000 W per GPU" },
	{ "L40S", 350, "NVIDIA L40S datasheet: max power 350 W" },
};

double hr_gpu_rated_w(const struct ch_datasheet *ds, const char **source)
{
	size_t i;
	for (i = 0; ds && i < sizeof(rated) / sizeof(rated[0]); i++)
		if (!strcmp(ds->sku, rated[i].sku)) {
			if (source)
				*source = rated[i].source;
			return rated[i].watts;
		}
	if (source)
		*source = "assumed 300 W (GPU model not in the rated-power table)";
	return HR_DEFAULT_GPU_W;
}
