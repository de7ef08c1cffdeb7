/*
 * hr_fastjson.h - JSON text into a jansson document through simdjson
 * (report/read/hr_fastjson.cpp): the parse of health_report's reading
 * threads. simdjson reads the text; the values are made with jansson's
 * constructors (so through jansson's allocator, the reading thread's arena
 * of hr_load_files.c), giving the document json_loadb() would give.
 * Whatever it does not read exactly as jansson would (an error of any kind,
 * an escape \uXXXX in a string or any escape in a key, an integer beyond
 * the 64-bit signed range, a nesting deeper than simdjson's 1,024 levels)
 * it refuses, and the caller parses the text with json_loadb() instead, for
 * the document or for jansson's own error text: what is reported of a
 * malformed file is jansson's, word for word.
 */
#ifndef HR_FASTJSON_H
#define HR_FASTJSON_H

#include <jansson.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bytes that must be allocated (readable) past the end of the text handed
 * to hr_fastjson_load(): simdjson reads ahead in blocks. */
#define HR_FASTJSON_PAD 64

/**
 * hr_fastjson_load - parse one JSON document into jansson values.
 * @text: [in] the text, @len bytes, an object or an array at the top
 *        (leading white space allowed); HR_FASTJSON_PAD more bytes after
 *        it must be allocated (their contents do not matter).
 * @len:  [in] its length in bytes.
 * Returns a new reference (the caller json_decref()s it, or releases the
 * arena it was made in), or NULL: refused (malformed, or not read exactly
 * as jansson reads it; see above) or out of memory. On NULL the caller
 * parses @text with json_loadb(), which gives the document or the error.
 * Thread-safe: each thread has a parser of its own (kept until it exits).
 */
json_t *hr_fastjson_load(const char *text, size_t len);

#ifdef __cplusplus
}
#endif
#endif
