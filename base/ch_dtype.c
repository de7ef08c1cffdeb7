#include "base/ch_dtype.h"

#include <math.h>
#include <string.h>

static const struct {
	const char *name;
	const char *comm_name; /* nccl-tests -d name; NULL: not a collective type */
	size_t size;
	int digits;            /* significand bits, implicit one included */
} dtypes[CH_NDTYPES_ALL] = {
	[CH_FP64] = { "fp64", "double", 8, 53 },
	[CH_FP32] = { "fp32", "float", 4, 24 },
	[CH_TF32] = { "tf32", NULL, 4, 11 },
	[CH_BF16] = { "bf16", "bfloat16", 2, 8 },
	[CH_FP16] = { "fp16", "half", 2, 11 },
	[CH_FP8] = { "fp8", NULL, 1, 4 },
	[CH_INT32] = { "int32", "int32", 4, 31 },
	[CH_INT8] = { "int8", "int8", 1, 7 },
};

const char *ch_dtype_name(int dt)
{
	return dt >= 0 && dt < CH_NDTYPES_ALL ? dtypes[dt].name : NULL;
}

int ch_dtype_parse(const char *name)
{
	int i;
	for (i = 0; name && i < CH_NDTYPES; i++)
		if (!strcmp(name, dtypes[i].name))
			return i;
	return -1;
}

const char *ch_dtype_comm_name(int dt)
{
	return dt >= 0 && dt < CH_NDTYPES_ALL ? dtypes[dt].comm_name : NULL;
}

size_t ch_dtype_size(enum ch_dtype dt) { return dtypes[dt].size; }
int ch_dtype_digits(enum ch_dtype dt) { return dtypes[dt].digits; }
double ch_dtype_eps(enum ch_dtype dt) { return ldexp(1.0, 1 - dtypes[dt].digits); }
