/*
 * test_escape.c - one escaping function per output format (report/hr_util.h):
 * a string from an input (a result file, an nccl-tests log, a file name) is
 * data in the terminal, report.md, report.html and health.prom. Each hostile
 * input of the adversarial rounds (a newline that forges a line, a backtick
 * that closes a code span, an escape sequence, raw HTML, C1 controls, a
 * bidirectional override, a byte that is not UTF-8) against its exact
 * escaped form; and the result reader's gate that skips such a file.
 */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "report/hr_util.h"
#include "report/read/hr_result.h"

typedef int (*esc_fn)(struct hr_buf *b, const char *s);

static void expect_esc(esc_fn f, const char *in, const char *want)
{
	struct hr_buf b = { 0 };
	hr_buf_puts(&b, "<<"); /* what was in the buffer before stays as it was */
	cr_assert_eq(f(&b, in), 0);
	cr_expect_str_eq(b.s + 2, want, "escaping '%s'", in);
	cr_expect_eq(strncmp(b.s, "<<", 2), 0);
	hr_buf_release(&b);
}

Test(escape, terminal_shows_controls_escaped)
{
	expect_esc(hr_buf_term, "node04\ngpu-innocent", "node04\\ngpu-innocent");
	expect_esc(hr_buf_term, "gpu0\nREGRESSED gpu-innocent", "gpu0\\nREGRESSED gpu-innocent");
	expect_esc(hr_buf_term, "node\x1b[2J01", "node\\e[2J01");
	expect_esc(hr_buf_term, "a\tb\rc\x7f" "d\x01", "a\\tb\\rc\\x7fd\\x01");
	expect_esc(hr_buf_term, "back\\slash", "back\\\\slash");
	/* C1 controls (CSI U+009B, NEL U+0085), a bidi override, a line separator */
	expect_esc(hr_buf_term, "x\xc2\x9b" "2Jy\xc2\x85z", "x\\u009b2Jy\\u0085z");
	expect_esc(hr_buf_term, "evil\xe2\x80\xae" "txt.exe", "evil\\u202etxt.exe");
	expect_esc(hr_buf_term, "a\xe2\x80\xa8" "b", "a\\u2028b");
	/* bytes that are not UTF-8 (a raw 8-bit CSI, a cut sequence, an overlong '/') */
	expect_esc(hr_buf_term, "a\x9b" "b\xe2\x80", "a\\x9bb\\xe2\\x80");
	expect_esc(hr_buf_term, "\xc0\xaf", "\\xc0\\xaf");
	/* what is safe stays as it is */
	expect_esc(hr_buf_term, "NVIDIA H100 80GB HBM3 (SXM5) é 日本 `x` <b>", "NVIDIA H100 80GB HBM3 (SXM5) é 日本 `x` <b>");
	expect_esc(hr_buf_term, "", "");
	cr_expect_null(hr_term(NULL));
	cr_expect_str_eq(hr_term("a\nb"), "a\\nb");
}

Test(escape, term_ring_keeps_several_arguments)
{
	const char *a = hr_term("one\n"), *b = hr_term("two\x1b"), *c = hr_term("three");
	cr_expect_str_eq(a, "one\\n");
	cr_expect_str_eq(b, "two\\e");
	cr_expect_str_eq(c, "three");
}

Test(escape, markdown_is_cell_safe_without_raw_html)
{
	/* a backtick closed the drain list's code span */
	expect_esc(hr_buf_md, "`node04` all nodes healthy", "\\`node04\\` all nodes healthy");
	/* a newline ended the row and started Markdown of the file's choosing */
	expect_esc(hr_buf_md, "gpu0\n# forged heading", "gpu0\\\\n# forged heading");
	expect_esc(hr_buf_md, "a|b\\c", "a\\|b\\\\\\\\c");
	expect_esc(hr_buf_md, "<img src=x onerror=alert(1)>", "&lt;img src=x onerror=alert(1)&gt;");
	expect_esc(hr_buf_md, "[click](javascript:alert(1))", "\\[click\\](javascript:alert(1))");
	expect_esc(hr_buf_md, "<javascript:alert(1)> &amp;", "&lt;javascript:alert(1)&gt; &amp;amp;");
	expect_esc(hr_buf_md, "ring\x1b[31m", "ring\\\\e\\[31m");
	expect_esc(hr_buf_md, "H100 80GB (SXM5) node_01", "H100 80GB (SXM5) node_01");
}

Test(escape, html_is_entity_escaped)
{
	expect_esc(hr_buf_html, "<img src=x onerror=\"alert('1')\">&",
		   "&lt;img src=x onerror=&quot;alert(&#39;1&#39;)&quot;&gt;&amp;");
	expect_esc(hr_buf_html, "gpu\x1b[2J\n<script>", "gpu\\e[2J\\n&lt;script&gt;");
	expect_esc(hr_buf_html, "x\xe2\x80\xaey", "x\\u202ey");
}

Test(escape, prometheus_label_per_exposition_format)
{
	/* the terminal form, then \\, \" and \n as the text format wants */
	expect_esc(hr_buf_prom_label, "a\"b\\c", "a\\\"b\\\\\\\\c");
	expect_esc(hr_buf_prom_label, "n\x1b[2J\nx", "n\\\\e[2J\\\\nx");
	expect_esc(hr_buf_prom_label, "node01", "node01");
}

Test(escape, reader_gate_skips_c1_and_bidi)
{
	static const struct {
		const char *json;
		long cp;
		const char *where;
	} cases[] = {
		{ "{\"host\": {\"hostname\": \"n\\u009b2J\"}}", 0x9b, "host.hostname" },
		{ "{\"host\": {\"hostname\": \"n\\u0085x\"}}", 0x85, "host.hostname" },
		{ "{\"results\": {\"devices\": [{\"name\": \"gpu\\u202e0\"}]}}", 0x202e, "results.devices[0].name" },
		{ "{\"a\": \"\\u001b[2J\"}", 0x1b, "a" },
		{ "{\"reason\": \"line one\\nline two\\tend\"}", 0, "" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_error_t je;
		json_t *d = json_loads(cases[i].json, 0, &je);
		char where[64];
		cr_assert(d, "%s", je.text);
		cr_expect_eq(hr_result_control_char(d, where, sizeof(where)), cases[i].cp, "%s", cases[i].json);
		cr_expect_str_eq(where, cases[i].where);
		json_decref(d);
	}
}

/* a name that is not UTF-8 (a text log's host, a file name) as UTF-8 text:
 * jansson refuses the bytes as they are, so the name would be lost */
Test(escape, utf8_copy_writes_bad_bytes_as_text)
{
	char b[16];
	char *t;
	hr_utf8_copy(b, sizeof(b), "node\xff" "01");
	cr_expect_str_eq(b, "node\\xff01");
	json_t *s = json_string(b);
	cr_expect_not_null(s);
	json_decref(s);
	/* valid UTF-8 (é, U+2028) unchanged; an overlong form and a lone
	 * continuation byte are not UTF-8 */
	hr_utf8_copy(b, sizeof(b), "caf\xc3\xa9\xe2\x80\xa8");
	cr_expect_str_eq(b, "caf\xc3\xa9\xe2\x80\xa8");
	hr_utf8_copy(b, sizeof(b), "\xc0\xaf\x80");
	cr_expect_str_eq(b, "\\xc0\\xaf\\x80");
	/* never a character cut at the end: what does not fit is left out */
	hr_utf8_copy(b, 6, "abcd\xc3\xa9");
	cr_expect_str_eq(b, "abcd");
	hr_utf8_copy(b, 8, "abc\xff\xff");
	cr_expect_str_eq(b, "abc\\xff");
	hr_utf8_copy(b, 1, "abc");
	cr_expect_str_eq(b, "");
	hr_utf8_copy(b, sizeof(b), NULL);
	cr_expect_str_eq(b, "");
	t = hr_utf8_text("\xfe\xff");
	cr_assert_not_null(t);
	cr_expect_str_eq(t, "\\xfe\\xff");
	free(t);
}

/* the quick look at the text (hr_result_text_plain()): a text it calls
 * plain has no string the gate would skip the file for; every text whose
 * document holds such a string (raw or escaped, key or value) is not plain */
Test(escape, text_plain_never_hides_a_control_character)
{
	static const char *const docs[] = {
		"{\"host\": {\"hostname\": \"n\\u009b2J\"}}",
		"{\"a\": \"\\u001b[2J\"}",
		"{\"a\": \"x\\by\"}",
		"{\"a\": \"x\\fy\"}",
		"{\"a\": \"x\\ry\"}",
		"{\"k\\u0007\": 1}",
		"{\"a\": \"x\x7fy\"}",
		"{\"a\": \"x\xc2\x85y\"}",
		"{\"a\": \"gpu\xe2\x80\xae\x30\"}",
		"{\"a\": \"\xd8\x9c\"}",
		"{\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\": \"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbb\\u0085\"}",
	};
	static const struct {
		const char *text;
		int plain;
	} plain[] = {
		{ "{\"reason\": \"line one\\nline two\\tend \\\"q\\\" \\\\ \\/\"}", 1 },
		{ "{\"a\": \"x\\\\by\"}", 1 },           /* an escaped backslash, then b */
		{ "{\"a\": \"x\\\\\\by\"}", 0 },         /* then \b */
		{ "{\"a\": \"caf\xc3\xa9\"}", 0 },       /* any byte above 0x7F: looked at */
		{ "", 1 },
		{ "\\", 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		json_error_t je;
		json_t *d = json_loads(docs[i], 0, &je);
		char where[64];
		cr_assert(d, "%s: %s", docs[i], je.text);
		cr_expect_neq(hr_result_control_char(d, where, sizeof(where)), 0, "%s", docs[i]);
		cr_expect_eq(hr_result_text_plain(docs[i], strlen(docs[i])), 0, "%s", docs[i]);
		json_decref(d);
	}
	for (i = 0; i < sizeof(plain) / sizeof(plain[0]); i++)
		cr_expect_eq(hr_result_text_plain(plain[i].text, strlen(plain[i].text)), plain[i].plain, "%s",
			     plain[i].text);
}

/* the quick look read in blocks: a byte it looks for is found wherever it
 * stands (in a block, across two, in the tail), and an escape's second
 * character is read as such across a block's end */
Test(escape, text_plain_finds_a_byte_at_every_offset)
{
	static const unsigned char flagged[] = { 0x7f, 0x80, 0xc3, 0xff };
	static const struct {
		const char *esc;
		int plain;
	} escs[] = { { "\\b", 0 }, { "\\n", 1 }, { "\\\\b", 1 }, { "\\\\\\f", 0 }, { "\\u0041", 0 } };
	size_t lens[] = { 63, 64, 65, 130, 200 }, li, p, k;
	char t[256];

	for (li = 0; li < sizeof(lens) / sizeof(lens[0]); li++) {
		size_t n = lens[li];
		memset(t, 'a', n);
		cr_expect_eq(hr_result_text_plain(t, n), 1, "%zu bytes of 'a'", n);
		for (p = 0; p < n; p++) {
			for (k = 0; k < sizeof(flagged); k++) {
				memset(t, 'a', n);
				t[p] = (char)flagged[k];
				cr_expect_eq(hr_result_text_plain(t, n), 0, "byte 0x%02x at %zu of %zu", flagged[k], p, n);
			}
			for (k = 0; k < sizeof(escs) / sizeof(escs[0]); k++) {
				size_t m = strlen(escs[k].esc);
				if (p + m > n)
					continue;
				memset(t, 'a', n);
				memcpy(t + p, escs[k].esc, m);
				cr_expect_eq(hr_result_text_plain(t, n), escs[k].plain, "'%s' at %zu of %zu", escs[k].esc, p, n);
			}
			memset(t, 'a', n);
			t[n - 1] = '\\';
			cr_expect_eq(hr_result_text_plain(t, n), 0, "a backslash at the end of %zu bytes", n);
		}
	}
}
