/*
 * hr_fastjson.cpp - JSON text into jansson values through simdjson's
 * DOM parser (hr_fastjson.h; its kernels chosen for the CPU at run time).
 * Every value of the document is visited
 * once, in document order, and made with jansson's constructors, as
 * jansson's own parser makes it (keys in order, a repeated key's later
 * value in the first one's place, integers as json_integer, numbers with a
 * fraction or an exponent as json_real). Anything read otherwise than
 * jansson reads it is refused (NULL), for the caller to parse with
 * json_loadb().
 */
#define SIMDJSON_EXCEPTIONS 0
#include <string.h>
#include <simdjson.h>

#include "report/read/hr_fastjson.h"

#include <cstring>
#include <string_view>

using namespace simdjson;

namespace {

/* Texts above this size get a parser of their own, freed after the parse
 * (a thread's parser keeps its buffers, sized for the largest text). */
constexpr size_t kOwnParserBytes = 64u << 20;

json_t *make_value(dom::element e);

json_t *make_object(dom::object o)
{
	json_t *obj = json_object();
	if (!obj)
		return nullptr;
	for (dom::key_value_pair kv : o) {
		json_t *val = make_value(kv.value);
		if (!val || json_object_setn_new_nocheck(obj, kv.key.data(), kv.key.size(), val)) {
			json_decref(obj);
			return nullptr;
		}
	}
	return obj;
}

json_t *make_array(dom::array a)
{
	json_t *arr = json_array();
	if (!arr)
		return nullptr;
	for (dom::element e : a) {
		json_t *val = make_value(e);
		if (!val || json_array_append_new(arr, val)) {
			json_decref(arr);
			return nullptr;
		}
	}
	return arr;
}

/* simdjson's tape holds an integer token as an integer (one beyond 64 bits
 * is its error), a token with a fraction or an exponent as a double: as
 * jansson reads them, but for an integer above INT64_MAX (jansson: "too
 * big"), refused. */
json_t *make_value(dom::element e)
{
	switch (e.type()) {
	case dom::element_type::OBJECT:
		return make_object(e.get_object().value_unsafe());
	case dom::element_type::ARRAY:
		return make_array(e.get_array().value_unsafe());
	case dom::element_type::INT64:
		return json_integer((json_int_t)e.get_int64().value_unsafe());
	case dom::element_type::UINT64:
		return nullptr;
	case dom::element_type::DOUBLE:
		return json_real(e.get_double().value_unsafe());
	case dom::element_type::STRING: {
		std::string_view s = e.get_string().value_unsafe();
		return json_stringn_nocheck(s.data(), s.size());
	}
	case dom::element_type::BOOL:
		return json_boolean(e.get_bool().value_unsafe());
	case dom::element_type::NULL_VALUE:
		return json_null();
	}
	return nullptr;
}

/* Whether the text holds an escape \uXXXX (or a backslash at its end). */
bool has_u_escape(const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	while ((p = static_cast<const char *>(memchr(p, '\\', (size_t)(end - p))))) {
		if (p + 1 >= end || p[1] == 'u')
			return true;
		p += 2; /* past the escaped character (a backslash too) */
	}
	return false;
}

json_t *load_with(dom::parser &parser, const char *text, size_t len)
{
	dom::element root;
	/* an escape \uXXXX anywhere: jansson's own rules (surrogates, U+0000) */
	if (has_u_escape(text, len))
		return nullptr;
	if (parser.parse(text, len, false).get(root))
		return nullptr;
	if (root.type() == dom::element_type::OBJECT || root.type() == dom::element_type::ARRAY)
		return make_value(root);
	return nullptr;
}

} // namespace

static_assert(HR_FASTJSON_PAD >= SIMDJSON_PADDING, "HR_FASTJSON_PAD is simdjson's padding");

extern "C" json_t *hr_fastjson_load(const char *text, size_t len)
{
	static thread_local dom::parser parser;
	if (len > kOwnParserBytes) {
		dom::parser own;
		return load_with(own, text, len);
	}
	return load_with(parser, text, len);
}
