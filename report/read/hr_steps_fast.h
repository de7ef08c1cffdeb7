/*
 * hr_steps_fast.h - the fields of one clusterhealth JSON-lines step record
 * (docs/canary.md, "Step logs") and the record they make, from either of
 * two sources that give the same fields:
 *
 *  - hr_jl_from_json(): an object jansson parsed (every record can take
 *    this way);
 *  - hr_jl_scan(): a strict scanner for the one layout the trainers'
 *    loggers write, an object of known keys with plain values, that needs
 *    no allocation. It is not a JSON parser: it recognises only an object
 *    of "key": value pairs whose keys are plain printable ASCII (no
 *    escape), whose values are plain strings (printable ASCII, no escape),
 *    true, false, null or numbers that convert exactly without strtod (an
 *    integer of at most 18 digits; a decimal fraction of at most 2^53 in
 *    its digits and 22 decimals, no exponent), and "phases" an object of
 *    such pairs; each known key at most once, nothing after the closing
 *    brace. Anything else (an escape, an exponent, any other nested value,
 *    a duplicated key, a large number, a syntax error, a byte outside
 *    printable ASCII in a string) is "not recognised", and the line goes to
 *    jansson. What it does
 *    recognise gives the fields jansson's parse gives, bit for bit
 *    (tests/unit/test_steps_fast.c).
 *
 * hr_jl_apply() then turns the fields into the step record (struct
 * hr_step_rec, hr_steps.h) with the reader's checks, one code for both.
 */
#ifndef HR_STEPS_FAST_H
#define HR_STEPS_FAST_H

#include <jansson.h>
#include <stddef.h>

#include "report/read/hr_steps.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The keys of a record that the reader reads. */
enum hr_jl_key {
	HR_JL_STEP = 0, HR_JL_RANK, HR_JL_HOST, HR_JL_START, HR_JL_END, HR_JL_STEP_TIME, HR_JL_PHASES,
	HR_JL_INPUT_WAIT, HR_JL_CKPT, HR_JL_TOKENS, HR_JL_HOST_CPU, HR_JL_LOSS, HR_JL_MFU, HR_JL_EVAL,
	HR_JL_NKEYS
};

/* The keys of its "phases" object, in the order of hr_jl_phase_ph[]. */
#define HR_JL_NPHASES 6

/* A value's kind. */
enum hr_jv_type {
	HR_JV_ABSENT = 0, HR_JV_INT, HR_JV_REAL, HR_JV_STRING, HR_JV_NULL, HR_JV_TRUE, HR_JV_FALSE,
	HR_JV_OBJECT, HR_JV_OTHER
};

/* One value: its kind; a number's value (an integer's as a double too); a
 * string's text (borrowed from the line or the parsed object: valid as
 * long as that is; not NUL-terminated for the scanner) and length. */
struct hr_jv {
	int type;
	long long i;
	double d;
	const char *s;
	size_t slen;
};

/* A record's fields; absent ones HR_JV_ABSENT. */
struct hr_jl_fields {
	struct hr_jv v[HR_JL_NKEYS];
	struct hr_jv phase[HR_JL_NPHASES];
};

/**
 * hr_jl_scan - the fields of the object at @s (@n bytes, from its "{" to
 * its "}") when it has the layout above.
 * @f: [out] the fields (borrowing from @s).
 * Returns 1 when recognised, 0 when not (the line must then be parsed by
 * jansson: it may still be valid JSON, or not).
 */
int hr_jl_scan(const char *s, size_t n, struct hr_jl_fields *f);

/**
 * hr_jl_from_json - the fields of the object @o parsed by jansson (@f
 * borrows @o's strings).
 */
void hr_jl_from_json(const json_t *o, struct hr_jl_fields *f);

/**
 * hr_jl_is_record - whether the fields are a clusterhealth step record
 * rather than another JSON line (e.g. a Hugging Face dict): one of "rank",
 * "phases", "step_time" or "end" is there. Returns 1 or 0.
 */
int hr_jl_is_record(const struct hr_jl_fields *f);

/**
 * hr_jl_apply - the fields onto record @r (initialised by the reader:
 * absent values stay as they are, NAN): step, rank, host, start, end, the
 * step time (its "step_time", else end - start), phases, input wait,
 * checkpoint write, tokens, host CPU, loss, MFU and "eval".
 * Returns NULL, or the reason the record is malformed (a static string:
 * the record is then not to be used).
 */
const char *hr_jl_apply(const struct hr_jl_fields *f, struct hr_step_rec *r);

/**
 * hr_steps_fast_enable - use the scanner (1, the default) or jansson for
 * every line (0: for the tests that compare the two). Not thread-safe:
 * set it before reading.
 */
void hr_steps_fast_enable(int on);

/** hr_steps_fast_enabled - the setting of hr_steps_fast_enable(). */
int hr_steps_fast_enabled(void);

#ifdef __cplusplus
}
#endif
#endif
