/*
 * ch_cpu_ops_body.h - kernel bodies, included once per ISA by ch_cpu_ops.c
 * with SFX (name suffix), ATTR (function attributes: target ISA) and VB
 * (vector bytes) defined. Explicit vector types (GCC vector extensions) keep
 * the ladder's independent FMA chains in registers: NACC chains of VB bytes,
 * enough to cover FMA latency x throughput (4 cycles x 2 units on recent
 * x86 cores) and fit 16 registers on AVX2 and SSE2.
 */
#define CAT2(a, b) a##b
#define CAT(a, b) CAT2(a, b)
#define NACC 12

typedef double CAT(vd_, SFX) __attribute__((vector_size(VB)));
typedef float CAT(vf_, SFX) __attribute__((vector_size(VB)));

/* Copies are written as loops over vectors so that the compiler does not
 * turn them into memcpy() calls (glibc's memcpy switches to non-temporal
 * stores for large sizes, which would change what is measured). */
#define STREAM_BODY(T, VT)                                                     \
	size_t i = 0;                                                          \
	const size_t W = VB / sizeof(T);                                       \
	switch (op) {                                                          \
	case CH_K_COPY:                                                        \
		for (; i + W <= n; i += W) {                                   \
			VT v;                                                  \
			__builtin_memcpy(&v, a + i, VB);                       \
			__asm__ volatile("" : "+x"(v));                        \
			__builtin_memcpy(c + i, &v, VB);                       \
		}                                                              \
		for (; i < n; i++)                                             \
			c[i] = a[i];                                           \
		break;                                                         \
	case CH_K_MUL:                                                         \
		_Pragma("omp simd")                                            \
		for (i = 0; i < n; i++)                                        \
			c[i] = s * b[i];                                       \
		break;                                                         \
	case CH_K_ADD:                                                         \
		_Pragma("omp simd")                                            \
		for (i = 0; i < n; i++)                                        \
			c[i] = a[i] + b[i];                                    \
		break;                                                         \
	case CH_K_TRIAD:                                                       \
		_Pragma("omp simd")                                            \
		for (i = 0; i < n; i++)                                        \
			c[i] = a[i] + s * b[i];                                \
		break;                                                         \
	case CH_K_DOT: {                                                       \
		double sum = 0;                                                \
		_Pragma("omp simd reduction(+:sum)")                           \
		for (i = 0; i < n; i++)                                        \
			sum += (double)(a[i] * b[i]);                          \
		*dot = sum;                                                    \
		break;                                                         \
	}                                                                      \
	default:                                                               \
		break;                                                         \
	}

ATTR static void CAT(stream_f64_, SFX)(enum ch_kernel_id op, const double *restrict a,
					const double *restrict b, double *restrict c,
					size_t n, double s, double *dot)
{
	STREAM_BODY(double, CAT(vd_, SFX))
}

ATTR static void CAT(stream_f32_, SFX)(enum ch_kernel_id op, const float *restrict a,
					const float *restrict b, float *restrict c,
					size_t n, float s, double *dot)
{
	STREAM_BODY(float, CAT(vf_, SFX))
}

#ifdef NT_STORE_D
/* The same kernels with non-temporal (streaming) stores, NT_STORE_D/F
 * (movntpd/movntps): the written lines go to memory without being read
 * first (no write-allocate), as STREAM and BabelStream builds may do. The
 * head up to VB-byte alignment of c and the tail use plain stores; an
 * sfence orders the streaming stores before the caller reads c. dot writes
 * nothing and runs the plain kernel. */
#define STREAM_NT_BODY(T, VT, NTS, PLAIN)                                     \
	size_t i = 0, j;                                                       \
	const size_t W = VB / sizeof(T);                                       \
	VT vs, va, vb;                                                         \
	if (op == CH_K_DOT || (op != CH_K_COPY && op != CH_K_MUL &&            \
			       op != CH_K_ADD && op != CH_K_TRIAD)) {          \
		PLAIN(op, a, b, c, n, s, dot);                                 \
		return;                                                        \
	}                                                                      \
	for (j = 0; j < W; j++)                                                \
		vs[j] = s;                                                     \
	for (; i < n && ((uintptr_t)(c + i) % VB) != 0; i++)                   \
		c[i] = op == CH_K_COPY ? a[i] : op == CH_K_MUL ? s * b[i] :    \
		       op == CH_K_ADD ? a[i] + b[i] : a[i] + s * b[i];         \
	switch (op) {                                                          \
	case CH_K_COPY:                                                        \
		for (; i + W <= n; i += W) {                                   \
			__builtin_memcpy(&va, a + i, VB);                      \
			NTS(c + i, va);                                        \
		}                                                              \
		break;                                                         \
	case CH_K_MUL:                                                         \
		for (; i + W <= n; i += W) {                                   \
			__builtin_memcpy(&vb, b + i, VB);                      \
			NTS(c + i, vs * vb);                                   \
		}                                                              \
		break;                                                         \
	case CH_K_ADD:                                                         \
		for (; i + W <= n; i += W) {                                   \
			__builtin_memcpy(&va, a + i, VB);                      \
			__builtin_memcpy(&vb, b + i, VB);                      \
			NTS(c + i, va + vb);                                   \
		}                                                              \
		break;                                                         \
	default: /* triad */                                                   \
		for (; i + W <= n; i += W) {                                   \
			__builtin_memcpy(&va, a + i, VB);                      \
			__builtin_memcpy(&vb, b + i, VB);                      \
			NTS(c + i, va + vs * vb);                              \
		}                                                              \
	}                                                                      \
	for (; i < n; i++)                                                     \
		c[i] = op == CH_K_COPY ? a[i] : op == CH_K_MUL ? s * b[i] :    \
		       op == CH_K_ADD ? a[i] + b[i] : a[i] + s * b[i];         \
	_mm_sfence();

ATTR static void CAT(stream_nt_f64_, SFX)(enum ch_kernel_id op, const double *restrict a,
					   const double *restrict b, double *restrict c,
					   size_t n, double s, double *dot)
{
	STREAM_NT_BODY(double, CAT(vd_, SFX), NT_STORE_D, CAT(stream_f64_, SFX))
}

ATTR static void CAT(stream_nt_f32_, SFX)(enum ch_kernel_id op, const float *restrict a,
					   const float *restrict b, float *restrict c,
					   size_t n, float s, double *dot)
{
	STREAM_NT_BODY(float, CAT(vf_, SFX), NT_STORE_F, CAT(stream_f32_, SFX))
}
#undef STREAM_NT_BODY
#endif

#define LADDER_BODY(T, VT)                                                     \
	const size_t W = VB / sizeof(T), B = NACC * W;                         \
	VT va, vb;                                                             \
	size_t i = 0, j;                                                       \
	int q;                                                                 \
	for (j = 0; j < W; j++) {                                              \
		va[j] = alpha;                                                 \
		vb[j] = beta;                                                  \
	}                                                                      \
	for (; i + B <= n; i += B) {                                           \
		VT r0, r1, r2, r3, r4, r5, r6, r7, r8, r9, r10, r11;           \
		__builtin_memcpy(&r0, x + i + 0 * W, VB);                      \
		__builtin_memcpy(&r1, x + i + 1 * W, VB);                      \
		__builtin_memcpy(&r2, x + i + 2 * W, VB);                      \
		__builtin_memcpy(&r3, x + i + 3 * W, VB);                      \
		__builtin_memcpy(&r4, x + i + 4 * W, VB);                      \
		__builtin_memcpy(&r5, x + i + 5 * W, VB);                      \
		__builtin_memcpy(&r6, x + i + 6 * W, VB);                      \
		__builtin_memcpy(&r7, x + i + 7 * W, VB);                      \
		__builtin_memcpy(&r8, x + i + 8 * W, VB);                      \
		__builtin_memcpy(&r9, x + i + 9 * W, VB);                      \
		__builtin_memcpy(&r10, x + i + 10 * W, VB);                    \
		__builtin_memcpy(&r11, x + i + 11 * W, VB);                    \
		for (q = 0; q < k; q++) {                                      \
			r0 = r0 * va + vb; r1 = r1 * va + vb;                  \
			r2 = r2 * va + vb; r3 = r3 * va + vb;                  \
			r4 = r4 * va + vb; r5 = r5 * va + vb;                  \
			r6 = r6 * va + vb; r7 = r7 * va + vb;                  \
			r8 = r8 * va + vb; r9 = r9 * va + vb;                  \
			r10 = r10 * va + vb; r11 = r11 * va + vb;              \
		}                                                              \
		__builtin_memcpy(y + i + 0 * W, &r0, VB);                      \
		__builtin_memcpy(y + i + 1 * W, &r1, VB);                      \
		__builtin_memcpy(y + i + 2 * W, &r2, VB);                      \
		__builtin_memcpy(y + i + 3 * W, &r3, VB);                      \
		__builtin_memcpy(y + i + 4 * W, &r4, VB);                      \
		__builtin_memcpy(y + i + 5 * W, &r5, VB);                      \
		__builtin_memcpy(y + i + 6 * W, &r6, VB);                      \
		__builtin_memcpy(y + i + 7 * W, &r7, VB);                      \
		__builtin_memcpy(y + i + 8 * W, &r8, VB);                      \
		__builtin_memcpy(y + i + 9 * W, &r9, VB);                      \
		__builtin_memcpy(y + i + 10 * W, &r10, VB);                    \
		__builtin_memcpy(y + i + 11 * W, &r11, VB);                    \
	}                                                                      \
	for (; i < n; i++) {                                                   \
		T r = x[i];                                                    \
		for (q = 0; q < k; q++)                                        \
			r = r * alpha + beta;                                  \
		y[i] = r;                                                      \
	}

ATTR static void CAT(ladder_f64_, SFX)(const double *restrict x, double *restrict y,
					size_t n, int k, double alpha, double beta)
{
	LADDER_BODY(double, CAT(vd_, SFX))
}

ATTR static void CAT(ladder_f32_, SFX)(const float *restrict x, float *restrict y,
					size_t n, int k, float alpha, float beta)
{
	LADDER_BODY(float, CAT(vf_, SFX))
}

ATTR static void CAT(gelu_f32_, SFX)(const float *restrict x, float *restrict y, size_t n)
{
	size_t i;
#pragma omp simd
	for (i = 0; i < n; i++)
		y[i] = ch_gelu_f32(x[i]);
}

ATTR static void CAT(layernorm_f32_, SFX)(const float *restrict x, float *restrict y,
					   size_t rows, size_t cols,
					   const float *restrict gamma,
					   const float *restrict beta, float eps)
{
	size_t r, j;
	for (r = 0; r < rows; r++) {
		const float *xr = x + r * cols;
		float *yr = y + r * cols;
		float sum = 0, var = 0, mean, rstd;
#pragma omp simd reduction(+:sum)
		for (j = 0; j < cols; j++)
			sum += xr[j];
		mean = sum / (float)cols;
#pragma omp simd reduction(+:var)
		for (j = 0; j < cols; j++) {
			float d = xr[j] - mean;
			var += d * d;
		}
		rstd = 1.0f / sqrtf(var / (float)cols + eps);
#pragma omp simd
		for (j = 0; j < cols; j++)
			yr[j] = (xr[j] - mean) * rstd * gamma[j] + beta[j];
	}
}

#define CHECK_BODY(LOAD)                                                        \
	long bad = 0;                                                           \
	double w = 0;                                                           \
	long j;                                                                 \
	_Pragma("omp simd reduction(+:bad) reduction(max:w)")                   \
	for (j = 0; j < (long)m; j++) {                                         \
		double err = fabs((double)LOAD(c[j]) - want[j]);                \
		double r = err * itol[j];                                       \
		bad += !(err <= tol[j]);                                        \
		w = r > w ? r : w;                                              \
	}                                                                       \
	*worst = w;                                                             \
	return bad;

#define LOAD_PLAIN(x) (x)
#define LOAD_BF16(x) CAT(bf16_to_f32_, SFX)(x)

ATTR static inline float CAT(bf16_to_f32_, SFX)(uint16_t h)
{
	union { uint32_t u; float f; } v;
	v.u = (uint32_t)h << 16;
	return v.f;
}

ATTR static long CAT(check_f64_, SFX)(const double *restrict c, const double *restrict want,
				       const double *restrict tol, const double *restrict itol,
				       size_t m, double *worst)
{
	CHECK_BODY(LOAD_PLAIN)
}

ATTR static long CAT(check_f32_, SFX)(const float *restrict c, const double *restrict want,
				       const double *restrict tol, const double *restrict itol,
				       size_t m, double *worst)
{
	CHECK_BODY(LOAD_PLAIN)
}

ATTR static long CAT(check_bf16_, SFX)(const uint16_t *restrict c, const double *restrict want,
					const double *restrict tol, const double *restrict itol,
					size_t m, double *worst)
{
	CHECK_BODY(LOAD_BF16)
}

static const struct ch_cpu_ops CAT(ops_, SFX) = {
	.isa = ISA_NAME,
	.lanes_fp64 = VB / 8,
	.has_fma = HAS_FMA,
	.stream_f64 = CAT(stream_f64_, SFX),
	.stream_f32 = CAT(stream_f32_, SFX),
#ifdef NT_STORE_D
	.stream_nt_f64 = CAT(stream_nt_f64_, SFX),
	.stream_nt_f32 = CAT(stream_nt_f32_, SFX),
#endif
	.ladder_f64 = CAT(ladder_f64_, SFX),
	.ladder_f32 = CAT(ladder_f32_, SFX),
	.gelu_f32 = CAT(gelu_f32_, SFX),
	.layernorm_f32 = CAT(layernorm_f32_, SFX),
	.check_f64 = CAT(check_f64_, SFX),
	.check_f32 = CAT(check_f32_, SFX),
	.check_bf16 = CAT(check_bf16_, SFX),
};

#undef STREAM_BODY
#undef LADDER_BODY
#undef CHECK_BODY
#undef LOAD_PLAIN
#undef LOAD_BF16
#undef NACC
