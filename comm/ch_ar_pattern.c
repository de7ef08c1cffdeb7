#include "comm/ch_ar_pattern.h"
#include "base/ch_common.h"

#include <stdlib.h>
#include <string.h>

uint64_t ch_ar_exact_limit(int dtype)
{
	switch (dtype) {
	case CH_INT8: return 127;
	case CH_BF16: return 256;         /* 8 significant bits */
	case CH_FP16: return 2048;        /* 11 significant bits */
	case CH_FP32: return 1ULL << 24;  /* 24 significant bits */
	case CH_INT32: return 2147483647ULL;
	case CH_FP64: return 1ULL << 53;  /* 53 significant bits */
	default: return 0;
	}
}

static uint64_t gcd_u64(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

int ch_ar_pattern_init(struct ch_ar_pattern *p, int dtype, int op, int nranks)
{
	uint64_t limit = ch_ar_exact_limit(dtype), n, c;

	if (!limit || op < 0 || op >= CH_COMM_REDOP_COUNT || nranks < 1)
		return CH_ERR_USAGE;
	n = (uint64_t)nranks;
	p->dtype = dtype;
	p->op = op;
	p->nranks = nranks;
	if (op == CH_COMM_REDOP_SUM) {
		/* at most c = ceil(n / q) non-zero contributions per element */
		p->q = n <= limit ? 1 : (n + limit - 1) / limit;
		c = (n + p->q - 1) / p->q;
		p->m = limit / c;
		if (p->m > CH_AR_PATTERN_MAX_M)
			p->m = CH_AR_PATTERN_MAX_M;
	} else {
		p->q = 1;
		p->m = CH_AR_PATTERN_MAX_M;
	}
	p->period = p->q / gcd_u64(p->q, p->m) * p->m;
	return 0;
}

uint64_t ch_ar_expected_value(const struct ch_ar_pattern *p, uint64_t t)
{
	uint64_t acc = 0;
	int r;

	for (r = 0; r < p->nranks; r++) {
		uint64_t v = ch_ar_pattern_value(p, r, t);
		if (r == 0 || p->op == CH_COMM_REDOP_SUM)
			acc = r == 0 ? v : acc + v;
		else if (p->op == CH_COMM_REDOP_MIN)
			acc = v < acc ? v : acc;
		else
			acc = v > acc ? v : acc;
	}
	return acc;
}

int ch_ar_expected_table(const struct ch_ar_pattern *p, void **out)
{
	size_t es = ch_dtype_size(p->dtype);
	uint64_t u;
	void *t = malloc((size_t)p->period * es);

	*out = NULL;
	if (!t)
		return CH_ERR_RUNTIME;
	for (u = 0; u < p->period; u++)
		ch_ar_encode(p->dtype, ch_ar_expected_value(p, u), t, (size_t)u);
	*out = t;
	return 0;
}

void ch_ar_fill_input_host(void *buf, const struct ch_ar_pattern *p, size_t count,
			   int rank, uint64_t seed)
{
	size_t i;

	for (i = 0; i < count; i++)
		ch_ar_encode(p->dtype, ch_ar_pattern_value(p, rank, (uint64_t)i + seed), buf, i);
}

int ch_ar_fill_expected_host(void *buf, const struct ch_ar_pattern *p, size_t count,
			     uint64_t seed)
{
	size_t es = ch_dtype_size(p->dtype), i, u;
	void *table;
	int rc = ch_ar_expected_table(p, &table);

	if (rc)
		return rc;
	u = (size_t)(seed % p->period);
	for (i = 0; i < count; i++) {
		memcpy((char *)buf + i * es, (char *)table + u * es, es);
		if (++u == p->period)
			u = 0;
	}
	free(table);
	return 0;
}

uint64_t ch_ar_count_wrong_host(const void *a, const void *b, size_t count,
				size_t elem_bytes)
{
	const unsigned char *x = a, *y = b;
	uint64_t wrong = 0;
	size_t i;

	if (!memcmp(a, b, count * elem_bytes))
		return 0;
	for (i = 0; i < count; i++)
		if (memcmp(x + i * elem_bytes, y + i * elem_bytes, elem_bytes))
			wrong++;
	return wrong;
}

/* ---- 16-bit floats */

static uint32_t f2u(float f)
{
	uint32_t u;
	memcpy(&u, &f, sizeof(u));
	return u;
}

static float u2f(uint32_t u)
{
	float f;
	memcpy(&f, &u, sizeof(f));
	return f;
}

uint16_t ch_half_from_float(float f)
{
	uint32_t x = f2u(f);
	uint32_t sign = (x >> 16) & 0x8000;
	uint32_t exp = (x >> 23) & 0xff;
	uint32_t man = x & 0x7fffff;
	int e;

	if (exp == 0xff) /* infinity or NaN (keep NaN quiet and non-zero) */
		return (uint16_t)(sign | 0x7c00 | (man ? 0x200 | (man >> 13) : 0));
	e = (int)exp - 127 + 15;
	if (e >= 31)
		return (uint16_t)(sign | 0x7c00);
	if (e <= 0) {
		/* subnormal half (or zero): shift the full significand */
		uint32_t sig, shift, half, rest, h;
		if (e < -10)
			return (uint16_t)sign;
		sig = man | 0x800000;
		shift = (uint32_t)(14 - e);
		h = sig >> shift;
		rest = sig & ((1u << shift) - 1);
		half = 1u << (shift - 1);
		if (rest > half || (rest == half && (h & 1)))
			h++;
		return (uint16_t)(sign | h);
	}
	{
		uint32_t h = ((uint32_t)e << 10) | (man >> 13);
		uint32_t rest = man & 0x1fff;
		if (rest > 0x1000 || (rest == 0x1000 && (h & 1)))
			h++; /* may carry into the exponent, up to infinity: correct */
		return (uint16_t)(sign | h);
	}
}

float ch_half_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h & 0x8000) << 16;
	uint32_t exp = (h >> 10) & 0x1f;
	uint32_t man = h & 0x3ff;

	if (exp == 0x1f)
		return u2f(sign | 0x7f800000 | (man << 13));
	if (exp == 0) {
		/* zero or subnormal: man x 2^-24 */
		float v = (float)man * (1.0f / 16777216.0f);
		return sign ? -v : v;
	}
	return u2f(sign | ((exp - 15 + 127) << 23) | (man << 13));
}

uint16_t ch_bf16_from_float(float f)
{
	uint32_t x = f2u(f);

	if ((x & 0x7f800000) == 0x7f800000 && (x & 0x7fffff))
		return (uint16_t)((x >> 16) | 0x40); /* quiet NaN */
	x += 0x7fff + ((x >> 16) & 1);           /* round to nearest, ties to even */
	return (uint16_t)(x >> 16);
}

float ch_bf16_to_float(uint16_t h)
{
	return u2f((uint32_t)h << 16);
}
