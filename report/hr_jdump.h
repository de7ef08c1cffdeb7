/*
 * hr_jdump.h - a JSON value written as jansson's json_dumpf() writes it
 * with JSON_INDENT(2) | JSON_REAL_PRECISION(10) | JSON_ENCODE_ANY, byte for
 * byte, into a stdio stream, nested at a given depth: the text of
 * profile.json (its nodes are written one at a time, each 2 levels deep).
 *
 * jansson's own writer checks every array and object for a loop (a printf
 * of its address into a hash table) and hands the text over in many small
 * pieces; this one writes into a buffer of its own and formats a real of
 * 10 significant digits without glibc's multi-precision printf where that
 * is exact (the rest goes to snprintf "%.10g", as jansson does).
 */
#ifndef HR_JDUMP_H
#define HR_JDUMP_H

#include <jansson.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * hr_jdump - write @v to @f as json_dumpf(@v, @f, JSON_INDENT(2) |
 * JSON_REAL_PRECISION(10) | JSON_ENCODE_ANY) writes it, every line after
 * the first indented by 2 x @depth spaces more (the value nested @depth
 * levels deep in a document written the same way).
 * @f:     [in,out] the stream.
 * @v:     [in] the value (not modified; a loop in it is not looked for:
 *         the profile's values are trees).
 * @depth: [in] >= 0.
 * Returns 0, or -1 on a write error or where jansson fails too: a string or
 * key that is not valid UTF-8, a real that is not finite (part of the text
 * may have been written then).
 */
int hr_jdump(FILE *f, const json_t *v, int depth);

/**
 * hr_jdump_real - a real as jansson writes it with JSON_REAL_PRECISION(10):
 * "%.10g", with ".0" added when it has neither a point nor an exponent and
 * the exponent's '+' and leading zeros dropped (1e10, 1e-5, 97.0).
 * @buf: [out] at least 32 bytes; NUL-terminated.
 * @v:   [in] a finite double.
 * Returns the length written, or -1 when @v is not finite.
 */
int hr_jdump_real(char *buf, double v);

/**
 * hr_fmt_g10 - snprintf(@buf, 32, "%.10g", @v)'s text, byte for byte,
 * without glibc's multi-precision printf where long double arithmetic makes
 * the rounding exact (the rest, and Inf and NaN, by snprintf).
 * @buf: [out] at least 32 bytes; NUL-terminated.
 * Returns the length written.
 */
int hr_fmt_g10(char *buf, double v);

#ifdef __cplusplus
}
#endif
#endif
