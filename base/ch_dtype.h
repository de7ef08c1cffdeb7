/*
 * ch_dtype.h - the element types clusterhealth measures with, one enum and
 * one name table for every part: roofline's compute types (which are also
 * the columns of the datasheet, base/ch_datasheet.h) and allreduce_bw's
 * collective types (named as nccl-tests names them, -d).
 */
#ifndef CH_DTYPE_H
#define CH_DTYPE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The floating-point types with a compute roof come first, in the order of
 * the datasheet's gflops[] columns; the integer types of the collectives
 * follow them.
 */
enum ch_dtype {
	CH_FP64 = 0,
	CH_FP32,
	CH_TF32,  /* stored as fp32; GEMM inputs rounded to 10 mantissa bits by tensor cores */
	CH_BF16,  /* bfloat16: the upper half of a binary32 */
	CH_FP16,  /* IEEE 754 binary16 */
	CH_FP8,   /* e4m3 */
	CH_NDTYPES,           /* count of the floating-point (compute) types */
	CH_INT32 = CH_NDTYPES,
	CH_INT8,
	CH_NDTYPES_ALL        /* count of every type */
};

/**
 * ch_dtype_name - "fp64", "fp32", "tf32", "bf16", "fp16", "fp8", "int32",
 * "int8". @dt: [in] any int. Returns a static string, NULL if out of range.
 */
const char *ch_dtype_name(int dt);

/**
 * ch_dtype_parse - the compute type named @name ("fp64" ... "fp8", as
 * ch_dtype_name() gives them), or -1 when @name is NULL or not one of them.
 */
int ch_dtype_parse(const char *name);

/**
 * ch_dtype_comm_name - nccl-tests' name of @dt as a collective element type
 * (-d): "double", "float", "bfloat16", "half", "int32", "int8"; NULL for the
 * types collectives do not reduce (tf32, fp8) and out of range.
 */
const char *ch_dtype_comm_name(int dt);

/** ch_dtype_size - bytes per stored element: 8, 4, 4, 2, 2, 1, 4, 1. @dt in range. */
size_t ch_dtype_size(enum ch_dtype dt);

/**
 * ch_dtype_digits - significand bits with the implicit one: 53, 24, 11, 8,
 * 11, 4; value bits for the integers: 31, 7. @dt in range.
 */
int ch_dtype_digits(enum ch_dtype dt);

/**
 * ch_dtype_eps - machine epsilon (distance from 1 to the next value) of a
 * floating-point type: 2^-52, 2^-23, 2^-10 (tf32), 2^-7 (bf16), 2^-10
 * (fp16), 2^-3 (fp8 e4m3). @dt < CH_NDTYPES.
 */
double ch_dtype_eps(enum ch_dtype dt);

#ifdef __cplusplus
}
#endif

#endif
