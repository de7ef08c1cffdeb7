/*
 * ch_cpu_ops.c - the CPU kernels, built once per ISA from ch_cpu_ops_body.h.
 */
/* Every function here, ch_gelu_f32() included, without -ftrapping-math: it
 * lets GELU's clamp (compare and select) vectorise without AVX-512 masks,
 * and changes no result (no floating-point exception is ever enabled). */
#pragma GCC optimize("no-trapping-math")

#include "kernels/cpu/ch_cpu_ops.h"
#include "kernels/ch_patterns.h"

#include <math.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#define SFX avx512
#define ATTR __attribute__((target("avx512f,avx512dq,avx512vl,fma,avx2,prefer-vector-width=512")))
#define VB 64
#define ISA_NAME "avx512"
#define HAS_FMA 1
#include "kernels/cpu/ch_cpu_ops_body.h"
#undef SFX
#undef ATTR
#undef VB
#undef ISA_NAME
#undef HAS_FMA

#define SFX avx2
#define ATTR __attribute__((target("avx2,fma")))
#define VB 32
#define ISA_NAME "avx2+fma"
#define HAS_FMA 1
#include "kernels/cpu/ch_cpu_ops_body.h"
#undef SFX
#undef ATTR
#undef VB
#undef ISA_NAME
#undef HAS_FMA
#endif

#define SFX base
#define ATTR
#define VB 16
#if defined(__x86_64__)
#define ISA_NAME "sse2"
#else
#define ISA_NAME "baseline"
#endif
#define HAS_FMA 0
#include "kernels/cpu/ch_cpu_ops_body.h"
#undef SFX
#undef ATTR
#undef VB
#undef ISA_NAME
#undef HAS_FMA

const struct ch_cpu_ops *ch_cpu_ops_select(const char *force)
{
#if defined(__x86_64__) && defined(__GNUC__)
	int avx512, avx2;
	__builtin_cpu_init();
	avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
		 __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("fma");
	avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
	if (!force)
		return avx512 ? &ops_avx512 : avx2 ? &ops_avx2 : &ops_base;
	if (!strcmp(force, "avx512"))
		return avx512 ? &ops_avx512 : NULL;
	if (!strcmp(force, "avx2+fma"))
		return avx2 ? &ops_avx2 : NULL;
#endif
	if (!force || !strcmp(force, ops_base.isa))
		return &ops_base;
	return NULL;
}
