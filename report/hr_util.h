/*
 * hr_util.h - small helpers of health_report: a growable text buffer,
 * whole-file reading, escaping for HTML, Markdown and Prometheus, UTC time
 * parsing and number formatting.
 */
#ifndef HR_UTIL_H
#define HR_UTIL_H

#include <jansson.h>
#include <stddef.h>
#include <stdio.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A growable NUL-terminated text buffer. Zero-initialise, then append. */
struct hr_buf {
	char *s;      /* the text (NULL until the first append) */
	size_t len;   /* bytes used, without the NUL */
	size_t cap;   /* bytes allocated */
	int oom;      /* set when an allocation failed; later appends do nothing */
};

/**
 * hr_buf_printf - append formatted text.
 * @b: [in,out] buffer. @fmt: [in] printf format.
 * Returns 0, or -1 when out of memory (b->oom is set and stays set).
 */
int hr_buf_printf(struct hr_buf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/** hr_buf_append - append @n bytes of @data. Returns 0 or -1 (out of memory). */
int hr_buf_append(struct hr_buf *b, const char *data, size_t n);

/** hr_buf_puts - append a NUL-terminated string. Returns 0 or -1. */
int hr_buf_puts(struct hr_buf *b, const char *s);

/** hr_buf_release - free the text and zero @b. */
void hr_buf_release(struct hr_buf *b);

/*
 * Every string that comes from an input (a result file, an nccl-tests log,
 * a file name) is data wherever it is written: one escaping function per
 * output format. The terminal's, hr_buf_term(), is the first step of the
 * others, so an unsafe character reads the same in every output.
 */

/**
 * hr_utf8_next - decode the UTF-8 character at @s (@n bytes left).
 * @len: [out] bytes it takes (1 for an invalid byte).
 * Returns the code point, or -1 for a byte that does not start a valid
 * UTF-8 character (overlong forms and surrogates are invalid).
 */
long hr_utf8_next(const char *s, size_t n, size_t *len);

/**
 * hr_utf8_copy - copy @src into @dst (@n bytes, NUL included) as UTF-8
 * text: each byte that is not UTF-8 written "\xNN" (4 characters), and
 * never a character cut at the end (what does not fit is left out). For
 * strings that do not come from JSON (a text log's host name, a file
 * name): jansson refuses a string that is not UTF-8, which would lose it.
 * NULL @src gives "".
 */
void hr_utf8_copy(char *dst, size_t n, const char *src);

/**
 * hr_utf8_text - @src as hr_utf8_copy() writes it, in a new string
 * (free() it). Returns NULL when out of memory (or for NULL @src).
 */
char *hr_utf8_text(const char *src);

/**
 * hr_char_shown_escaped - 1 when code point @c is never written as it is:
 * C0 controls (newline and tab too), DEL, C1 controls (U+0080..U+009F),
 * bidirectional marks, embeddings, overrides and isolates (U+061C, U+200E,
 * U+200F, U+202A..U+202E, U+2066..U+2069), line and paragraph separators
 * (U+2028, U+2029). -1 (an invalid byte) counts as such.
 */
int hr_char_shown_escaped(long c);

/**
 * hr_buf_term - append @s for a terminal (and as the first step of every
 * other format): '\' as "\\", newline, tab, carriage return and escape as
 * "\n", "\t", "\r", "\e", other C0 controls, DEL and bytes that are not
 * UTF-8 as "\xNN", the other characters of hr_char_shown_escaped() as
 * "\uNNNN"; everything else as is. NULL appends nothing.
 * Returns 0 or -1 (out of memory).
 */
int hr_buf_term(struct hr_buf *b, const char *s);

/**
 * hr_term - @s escaped as hr_buf_term() does, for a printf argument.
 * Returns one of 8 per-thread buffers, used in turn (valid until the 8th
 * call after this one), "?" when out of memory, NULL for NULL.
 */
const char *hr_term(const char *s);

/**
 * hr_buf_html - append @s for HTML text or a quoted attribute: escaped as
 * hr_buf_term() does, then the five HTML special characters (& < > " ')
 * as entities. NULL appends nothing.
 */
int hr_buf_html(struct hr_buf *b, const char *s);

/**
 * hr_buf_md - append @s for Markdown text and table cells: escaped as
 * hr_buf_term() does (no newline survives, so a row or a list item is never
 * ended), then '&', '<' and '>' as entities (no raw HTML, no autolink) and
 * '\', '|', '`', '[' and ']' backslash-escaped (no cell break, code span or
 * link). NULL appends nothing.
 */
int hr_buf_md(struct hr_buf *b, const char *s);

/**
 * hr_buf_prom_label - append a Prometheus label value (text exposition
 * format): escaped as hr_buf_term() does, then backslash, double quote and
 * newline as \\, \" and \n.
 */
int hr_buf_prom_label(struct hr_buf *b, const char *s);

/**
 * hr_read_file - read a whole file into memory.
 * @path:     [in] file name: a regular file; a directory, named pipe, socket
 *            or device is refused without blocking ("not a regular file").
 * @max_bytes:[in] refuse files larger than this (0: no limit).
 * @out:      [out] the contents, NUL-terminated and followed by
 *            HR_READ_FILE_PAD more zero bytes (room for a parser that reads
 *            ahead in blocks, report/read/hr_fastjson.h); free() it.
 * @len:      [out] number of bytes read (the NUL not counted); may be NULL.
 * @err:      [out] on failure, a message without the file name ("no such
 *            file or directory", "file is larger than 268435456 bytes").
 * @errn:     [in] size of @err.
 * Returns 0, or -1 with @err set; CH_ERR_RUNTIME (@err "out of memory")
 * when the text could not be allocated: not a fault of the file.
 */
int hr_read_file(const char *path, size_t max_bytes, char **out, size_t *len,
		 char *err, size_t errn);

/* Zero bytes hr_read_file() allocates past a file's terminating NUL. */
#define HR_READ_FILE_PAD 64

/**
 * hr_parse_utc - parse "YYYY-MM-DDTHH:MM:SSZ" (the result files' time
 * format; fractional seconds are accepted and dropped).
 * @s: [in] text. @out: [out] seconds since the epoch.
 * Returns 0, or -1 when @s is NULL or not in that format.
 */
int hr_parse_utc(const char *s, time_t *out);

/**
 * hr_fmt_num - format a value with 3 significant digits for tables
 * ("1.23e+03" is avoided: 1230, 12.3, 0.123). NAN formats as "n/a".
 * @buf: [out] at least 32 bytes. Returns @buf.
 */
char *hr_fmt_num(double v, char *buf, size_t n);

/**
 * hr_fmt_bytes - nccl-tests style size: exact value with the largest
 * 1024-power suffix that divides it ("8", "64K", "1M", "8G"); NAN (no
 * size measured) and infinities format as "n/a".
 * @buf: [out] at least 24 bytes. Returns @buf.
 */
char *hr_fmt_bytes(double bytes, char *buf, size_t n);

/** hr_jnum - number member @k of @o, NAN when absent, null or not a number. */
double hr_jnum(const json_t *o, const char *k);

/** hr_jstr - string member @k of @o (borrowed), NULL when absent or not a string. */
const char *hr_jstr(const json_t *o, const char *k);

/** hr_jint - integer (or number) member @k of @o, @dflt when absent. */
long long hr_jint(const json_t *o, const char *k, long long dflt);

/** hr_strdup - strdup that accepts NULL (returns NULL). */
char *hr_strdup(const char *s);

/** hr_streq - strcmp()==0 that accepts NULL on either side (NULL==NULL). */
int hr_streq(const char *a, const char *b);

#ifdef __cplusplus
}
#endif
#endif
