/*
 * hr_steps_fast.c - a clusterhealth JSON-lines record's fields from the
 * strict scanner or from jansson, and the record they make (interface and
 * the scanner's limits: hr_steps_fast.h).
 */
#include "report/read/hr_steps_fast.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

static int fast_on = 1;

void hr_steps_fast_enable(int on)
{
	fast_on = !!on;
}

int hr_steps_fast_enabled(void)
{
	return fast_on;
}

static const char *const keys[HR_JL_NKEYS] = {
	[HR_JL_STEP] = "step", [HR_JL_RANK] = "rank", [HR_JL_HOST] = "host", [HR_JL_START] = "start",
	[HR_JL_END] = "end", [HR_JL_STEP_TIME] = "step_time", [HR_JL_PHASES] = "phases",
	[HR_JL_INPUT_WAIT] = "input_wait", [HR_JL_CKPT] = "checkpoint_write", [HR_JL_TOKENS] = "tokens",
	[HR_JL_HOST_CPU] = "host_cpu", [HR_JL_LOSS] = "loss", [HR_JL_MFU] = "mfu", [HR_JL_EVAL] = "eval",
};

/* "phases": its keys and the phase each gives */
static const struct {
	const char *k;
	int ph;
} phases[HR_JL_NPHASES] = {
	{ "forward", HR_PH_FORWARD }, { "backward", HR_PH_BACKWARD }, { "forward_backward", HR_PH_FWDBWD },
	{ "optimizer", HR_PH_OPTIMIZER }, { "allreduce", HR_PH_ALLREDUCE }, { "input_wait", HR_PH_INPUT },
};

/* ------------------------------------------------------------ the scanner */

/* 10^0 .. 10^22: exact doubles */
static const double pow10_exact[23] = {
	1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
	1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
};

static int is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* a plain string at *@p (after its opening quote): printable ASCII without
 * a backslash up to the closing quote; *@p after it. 0, or -1 not plain. */
static int plain_string(const char **p, const char *end, const char **s, size_t *len)
{
	const char *q = *p;
	while (q < end && *q != '"') {
		if ((unsigned char)*q < 0x20 || (unsigned char)*q > 0x7e || *q == '\\')
			return -1;
		q++;
	}
	if (q >= end)
		return -1;
	*s = *p;
	*len = (size_t)(q - *p);
	*p = q + 1;
	return 0;
}

/*
 * A number at *@p in JSON's grammar that converts exactly: an integer of
 * at most 18 digits (as jansson's strtoll gives it), or a decimal fraction
 * without exponent whose digits make at most 2^53 with at most 22 decimals
 * (then digits / 10^decimals, one correctly rounded division: what strtod
 * gives). 0 with *@p after it, or -1 (not such a number).
 */
static int exact_number(const char **p, const char *end, struct hr_jv *v)
{
	const char *q = *p;
	uint64_t m = 0;
	int neg = 0, nd = 0, nf = 0;

	if (q < end && *q == '-')
		neg = 1, q++;
	if (q >= end || *q < '0' || *q > '9')
		return -1;
	if (*q == '0' && q + 1 < end && q[1] >= '0' && q[1] <= '9')
		return -1; /* a leading zero: not JSON */
	for (; q < end && *q >= '0' && *q <= '9'; q++, nd++) {
		if (nd >= 18)
			return -1;
		m = m * 10 + (uint64_t)(*q - '0');
	}
	if (q < end && (*q == 'e' || *q == 'E'))
		return -1;
	if (q >= end || *q != '.') {
		v->type = HR_JV_INT;
		v->i = neg ? -(long long)m : (long long)m;
		v->d = (double)v->i;
		*p = q;
		return 0;
	}
	q++;
	if (q >= end || *q < '0' || *q > '9')
		return -1;
	for (; q < end && *q >= '0' && *q <= '9'; q++, nf++) {
		if (nf >= 22 || m > (UINT64_C(1) << 53) / 10)
			return -1;
		m = m * 10 + (uint64_t)(*q - '0');
	}
	if (m > (UINT64_C(1) << 53) || (q < end && (*q == 'e' || *q == 'E')))
		return -1;
	v->type = HR_JV_REAL;
	v->d = (double)m / pow10_exact[nf];
	if (neg)
		v->d = -v->d;
	*p = q;
	return 0;
}

/* a plain value at *@p: string, number, true, false or null; -1 other */
static int plain_value(const char **p, const char *end, struct hr_jv *v)
{
	const char *q = *p;
	memset(v, 0, sizeof(*v));
	if (q >= end)
		return -1;
	if (*q == '"') {
		*p = q + 1;
		v->type = HR_JV_STRING;
		return plain_string(p, end, &v->s, &v->slen);
	}
	if (end - q >= 4 && !memcmp(q, "true", 4))
		v->type = HR_JV_TRUE, *p = q + 4;
	else if (end - q >= 5 && !memcmp(q, "false", 5))
		v->type = HR_JV_FALSE, *p = q + 5;
	else if (end - q >= 4 && !memcmp(q, "null", 4))
		v->type = HR_JV_NULL, *p = q + 4;
	else
		return exact_number(p, end, v);
	/* a literal runs into a letter or digit: not JSON */
	if (*p < end && ((**p >= 'a' && **p <= 'z') || (**p >= 'A' && **p <= 'Z') || (**p >= '0' && **p <= '9')))
		return -1;
	return 0;
}

/* the index of key @k (@n bytes) in keys[], -1 none (by its length, then
 * compares of a known length, which the compiler inlines) */
static int key_index(const char *k, size_t n)
{
#define IS(lit) (!memcmp(k, lit, sizeof(lit) - 1))
	switch (n) {
	case 3:
		return IS("end") ? HR_JL_END : IS("mfu") ? HR_JL_MFU : -1;
	case 4:
		return IS("rank") ? HR_JL_RANK : IS("step") ? HR_JL_STEP : IS("host") ? HR_JL_HOST :
		       IS("loss") ? HR_JL_LOSS : IS("eval") ? HR_JL_EVAL : -1;
	case 5:
		return IS("start") ? HR_JL_START : -1;
	case 6:
		return IS("phases") ? HR_JL_PHASES : IS("tokens") ? HR_JL_TOKENS : -1;
	case 8:
		return IS("host_cpu") ? HR_JL_HOST_CPU : -1;
	case 9:
		return IS("step_time") ? HR_JL_STEP_TIME : -1;
	case 10:
		return IS("input_wait") ? HR_JL_INPUT_WAIT : -1;
	case 16:
		return IS("checkpoint_write") ? HR_JL_CKPT : -1;
	default:
		return -1;
	}
#undef IS
}

/* the index of phase key @k (@n bytes) in phases[], -1 none */
static int phase_index(const char *k, size_t n)
{
	int i;
	for (i = 0; i < HR_JL_NPHASES; i++)
		if (!strncmp(phases[i].k, k, n) && phases[i].k[n] == '\0')
			return i;
	return -1;
}

/*
 * The members of an object from *@pp (after its "{") to its "}" (*@pp
 * after it): at @depth 0 the record's keys into f->v, where "phases" may be
 * an object (read at @depth 1 into f->phase); no other object or array.
 * 0, or -1 when not of the layout.
 */
static int scan_members(const char **pp, const char *end, struct hr_jl_fields *f, int depth)
{
	const char *p = *pp;
	int first = 1;

	for (;;) {
		const char *k;
		size_t klen;
		struct hr_jv v, *slot;
		int ki;

		while (p < end && is_ws(*p))
			p++;
		if (p < end && *p == '}' && first) {
			if (!depth)
				return -1; /* {}: no record */
			*pp = p + 1;
			return 0;
		}
		if (p >= end || *p != '"')
			return -1;
		p++;
		if (plain_string(&p, end, &k, &klen))
			return -1;
		while (p < end && is_ws(*p))
			p++;
		if (p >= end || *p != ':')
			return -1;
		p++;
		while (p < end && is_ws(*p))
			p++;
		ki = depth ? phase_index(k, klen) : key_index(k, klen);
		slot = ki < 0 ? NULL : depth ? &f->phase[ki] : &f->v[ki];
		if (slot && slot->type != HR_JV_ABSENT)
			return -1; /* a key twice: jansson keeps the last */
		if (p < end && *p == '{' && !depth && ki == HR_JL_PHASES) {
			p++;
			if (scan_members(&p, end, f, 1))
				return -1;
			memset(slot, 0, sizeof(*slot));
			slot->type = HR_JV_OBJECT;
		} else {
			if (plain_value(&p, end, &v))
				return -1;
			if (slot)
				*slot = v;
		}
		while (p < end && is_ws(*p))
			p++;
		if (p >= end)
			return -1;
		if (*p == '}') {
			*pp = p + 1;
			return 0;
		}
		if (*p != ',')
			return -1;
		p++;
		first = 0;
	}
}

int hr_jl_scan(const char *s, size_t n, struct hr_jl_fields *f)
{
	const char *p = s + 1;

	memset(f, 0, sizeof(*f));
	if (n < 2 || *s != '{' || s[n - 1] != '}')
		return 0;
	/* the object, and nothing after it */
	return !scan_members(&p, s + n, f, 0) && p == s + n;
}

/* ------------------------------------------------------------ from jansson */

static void jv_of(const json_t *x, struct hr_jv *v)
{
	memset(v, 0, sizeof(*v));
	if (!x)
		return;
	if (json_is_integer(x)) {
		v->type = HR_JV_INT;
		v->i = json_integer_value(x);
		v->d = (double)v->i;
	} else if (json_is_real(x)) {
		v->type = HR_JV_REAL;
		v->d = json_real_value(x);
	} else if (json_is_string(x)) {
		v->type = HR_JV_STRING;
		v->s = json_string_value(x);
		v->slen = json_string_length(x);
	} else if (json_is_null(x)) {
		v->type = HR_JV_NULL;
	} else if (json_is_true(x)) {
		v->type = HR_JV_TRUE;
	} else if (json_is_false(x)) {
		v->type = HR_JV_FALSE;
	} else {
		v->type = json_is_object(x) ? HR_JV_OBJECT : HR_JV_OTHER;
	}
}

void hr_jl_from_json(const json_t *o, struct hr_jl_fields *f)
{
	const json_t *ph;
	int i;

	memset(f, 0, sizeof(*f));
	for (i = 0; i < HR_JL_NKEYS; i++)
		jv_of(json_object_get(o, keys[i]), &f->v[i]);
	ph = json_object_get(o, "phases");
	for (i = 0; i < HR_JL_NPHASES; i++)
		jv_of(json_object_get(ph, phases[i].k), &f->phase[i]);
}

/* ------------------------------------------------------------ the record */

int hr_jl_is_record(const struct hr_jl_fields *f)
{
	return f->v[HR_JL_RANK].type || f->v[HR_JL_PHASES].type || f->v[HR_JL_STEP_TIME].type || f->v[HR_JL_END].type;
}

/* a number's value, NAN for anything else */
static double num(const struct hr_jv *v)
{
	return v->type == HR_JV_INT || v->type == HR_JV_REAL ? v->d : NAN;
}

const char *hr_jl_apply(const struct hr_jl_fields *f, struct hr_step_rec *r)
{
	const struct hr_jv *v;
	const char *bad = NULL;
	double d;
	int i;

	v = &f->v[HR_JL_STEP];
	if (v->type != HR_JV_INT || v->i < 0)
		bad = "\"step\" is not a whole number of 0 or more";
	else
		r->step = v->i > HR_STEPS_MAX_STEP ? HR_STEPS_MAX_STEP + 1 : (long)v->i;
	v = &f->v[HR_JL_RANK];
	if (v->type && (v->type != HR_JV_INT || v->i < 0 || v->i > 100000000))
		bad = "\"rank\" is not a whole number of 0 or more";
	else if (v->type)
		r->rank = (int)v->i;
	v = &f->v[HR_JL_HOST];
	if (v->type == HR_JV_STRING) {
		size_t n = strnlen(v->s, v->slen);
		if (n > sizeof(r->host) - 1)
			n = sizeof(r->host) - 1;
		memcpy(r->host, v->s, n);
		r->host[n] = '\0';
	} else if (v->type && v->type != HR_JV_NULL) {
		bad = "\"host\" is not a string";
	}
	r->t_start = num(&f->v[HR_JL_START]);
	r->t_end = num(&f->v[HR_JL_END]);
	d = num(&f->v[HR_JL_STEP_TIME]);
	r->step_sec = d > 0 ? d : r->t_end - r->t_start;
	if (!(r->step_sec > 0) || !isfinite(r->step_sec))
		bad = bad ? bad : "no positive \"step_time\", and no \"end\" after \"start\"";
	if (f->v[HR_JL_PHASES].type && f->v[HR_JL_PHASES].type != HR_JV_OBJECT)
		bad = "\"phases\" is not an object";
	for (i = 0; f->v[HR_JL_PHASES].type && i < HR_JL_NPHASES; i++) {
		d = num(&f->phase[i]);
		if (f->phase[i].type && !(d >= 0))
			bad = "a phase time is not a number of 0 or more";
		r->phase[phases[i].ph] = d;
	}
	if (f->v[HR_JL_INPUT_WAIT].type) {
		d = num(&f->v[HR_JL_INPUT_WAIT]);
		if (!(d >= 0))
			bad = "\"input_wait\" is not a number of 0 or more";
		r->phase[HR_PH_INPUT] = d;
	}
	d = num(&f->v[HR_JL_CKPT]);
	if (f->v[HR_JL_CKPT].type && !(d >= 0))
		bad = "\"checkpoint_write\" is not a number of 0 or more";
	r->ckpt_sec = d;
	r->tokens = num(&f->v[HR_JL_TOKENS]);
	r->host_cpu = num(&f->v[HR_JL_HOST_CPU]);
	r->loss = num(&f->v[HR_JL_LOSS]);
	r->mfu = num(&f->v[HR_JL_MFU]);
	if (f->v[HR_JL_EVAL].type == HR_JV_TRUE)
		r->kind = HR_SK_EVAL;
	return bad;
}
