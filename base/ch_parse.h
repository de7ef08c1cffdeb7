/*
 * ch_parse.h - strict parsing of command-line values.
 *
 * Every parser rejects empty strings, trailing garbage, overflow and values
 * out of range; on failure it prints a usage error that names the option and
 * the value (through ch_usage_error) and returns CH_ERR_USAGE. Nothing here
 * ever substitutes a default for a bad value.
 */
#ifndef CH_PARSE_H
#define CH_PARSE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * ch_parse_size - parse a byte count.
 * @opt:  [in] option name for messages, e.g. "--maxbytes".
 * @s:    [in] text: an integer with an optional suffix. K, M, G, T and KiB,
 *        MiB, GiB, TiB are powers of 1024 (nccl-tests' convention, suffixes
 *        case-insensitive); B or no suffix means bytes. "1.5G" is accepted
 *        when the result is a whole number of bytes.
 * @out:  [out] the value in bytes.
 * Returns 0, or CH_ERR_USAGE (message printed) for an empty, negative,
 * malformed or overflowing value. Zero is accepted; callers that need a
 * positive size check it themselves.
 */
int ch_parse_size(const char *opt, const char *s, uint64_t *out);

/**
 * ch_format_size - format a byte count for tables, nccl-tests style.
 * @bytes: [in] value in bytes.
 * @buf:   [out] destination, at least 16 bytes.
 * @n:     [in] size of @buf.
 * Writes the exact value with the largest 1024-power suffix that divides it
 * ("8", "64K", "1M", "3G"), or plain bytes. Returns @buf.
 */
char *ch_format_size(uint64_t bytes, char *buf, size_t n);

/**
 * Numbers are plain decimal everywhere (every binary and option): an
 * optional '-', digits, for ch_parse_double() an optional fraction and
 * exponent ("1.5e3"). A leading '+', hexadecimal ("0x10"), "inf", "nan"
 * and surrounding blanks are rejected as invalid.
 *
 * ch_parse_long - parse a decimal integer within [min, max].
 * @opt: [in] option name for messages.  @s: [in] text.  @out: [out] value.
 * Returns 0 or CH_ERR_USAGE (message printed).
 */
int ch_parse_long(const char *opt, const char *s, long min, long max, long *out);

/**
 * ch_parse_double - parse a finite floating-point number within [min, max].
 * @opt: [in] option name for messages.  @s: [in] text.  @out: [out] value.
 * Returns 0 or CH_ERR_USAGE (message printed).
 */
int ch_parse_double(const char *opt, const char *s, double min, double max,
		    double *out);

/**
 * ch_decimal_len - length of the plain decimal number at the start of @s:
 * an optional '-', digits with an optional '.' and fraction, an optional
 * exponent ("e-3"). Returns 0 when @s does not start with one (a '+', "0x",
 * "inf" or "nan" included). Used by parsers that accept a unit after the
 * number; does not print.
 */
size_t ch_decimal_len(const char *s);

/**
 * ch_valid_utc - is @s a real UTC date "YYYY-MM-DD" (@date_only) or time
 * "YYYY-MM-DDTHH:MM:SSZ": digits in those places, month 1-12, a day that
 * exists in that month (leap years: Gregorian rule), hour 0-23, minutes and
 * seconds 0-59. Returns 1 or 0; does not print.
 */
int ch_valid_utc(const char *s, int date_only);

/**
 * ch_parse_leading_double - the plain decimal number at the start of @s
 * (ch_decimal_len(), read with strtod), for parsers that read a unit after
 * it.
 * @v: [out] the number.  @end: [out] the first character after it.
 * Returns 0, or -1 (nothing printed) when @s is NULL or empty, or does not
 * start with a plain decimal number (white space, '+', "0x", "inf", "nan").
 */
int ch_parse_leading_double(const char *s, double *v, char **end);

/**
 * ch_parse_duration - parse a time span into seconds.
 * @opt: [in] option name for messages.
 * @s:   [in] text: a number with an optional unit: us, ms, s, m or min, h
 *       (seconds when none), e.g. "12", "1.6s", "1600ms", "5.5m", "2h".
 * @out: [out] the value in seconds. The sign and range are not checked:
 *       callers check them against their own limits.
 * Returns 0, or CH_ERR_USAGE (message printed, naming @opt and @s).
 */
int ch_parse_duration(const char *opt, const char *s, double *out);

/**
 * ch_split_list - split a comma-separated list in place.
 * @s:     [in,out] writable string; commas are replaced by NULs.
 * @items: [out] pointers into @s, one per item.
 * @max:   [in] capacity of @items.
 * Returns the number of items (>= 1), or -1 when an item is empty (",,")
 * or there are more than @max items. Does not print.
 */
int ch_split_list(char *s, char **items, int max);

/**
 * ch_lookup - find a name in a NULL-terminated table of names.
 * @opt:   [in] option name for messages.
 * @s:     [in] the value given.
 * @names: [in] NULL-terminated list of accepted values.
 * Returns the index of @s in @names, or CH_ERR_USAGE after printing
 * "unknown value 'X' for OPT (expected: a, b, c)".
 */
int ch_lookup(const char *opt, const char *s, const char *const *names);

struct option;

/**
 * ch_option_error - the one wording of a command-line option error in
 * every binary and subcommand, after getopt_long() (run with opterr = 0,
 * so that it prints nothing itself) returned '?' or ':'. Prints to stderr
 *   "PROG: error: unknown option '--grups' (did you mean --groups?)",
 *   "PROG: error: unknown option '-z'",
 *   "PROG: error: ambiguous option '--g' (--gpus, --groups)",
 *   "PROG: error: option '--json' needs a value",
 *   "PROG: error: option '--force' takes no value",
 * then "try 'PROG --help' for more information" (PROG: ch_prog(), never a
 * path). The suggestion is the long option nearest in edit distance (at
 * most 2 edits, or 1 for names of 4 letters or fewer), none when no name is
 * that near.
 * @argv:      [in] the argument vector getopt_long() read (optind and optopt
 *             as it left them).
 * @shortopts: [in] its short options; @longopts: [in] its long options.
 * Returns CH_ERR_USAGE.
 */
int ch_option_error(char *const argv[], const char *shortopts, const struct option *longopts);

#ifdef __cplusplus
}
#endif
#endif
