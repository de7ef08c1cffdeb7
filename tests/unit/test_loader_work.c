/*
 * The workers' batch work (ch_loader_work.c): tokenizer known answers,
 * inflate + scan + collation checked against an independent inflate, and
 * a corrupted shard caught by its checksum.
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/ch_common.h"
#include "bench/loader/ch_loader.h"

Test(loader_work, token_ids_are_fnv1a)
{
	/* FNV-1a 32-bit of "hello" is 0x4f9f2cab; 2 + 0x4f9f2cab % 50255 = 3570 */
	cr_assert_eq(ch_lc_token_id((const unsigned char *)"hello", 5), 3570);
	cr_assert_eq(ch_lc_token_id((const unsigned char *)"world", 5), 2164);
	cr_assert_eq(ch_lc_token_id((const unsigned char *)"!", 1), 33872);
	cr_assert_eq(ch_lc_token_id((const unsigned char *)"", 0), 2 + (int32_t)(2166136261u % 50255));
}

Test(loader_work, tokenizer_splits_words_and_punctuation)
{
	const char *text = "Hello, world!\n  ";
	int32_t out[8] = { 0 };
	size_t pos = 0, n = ch_lc_tokenize((const unsigned char *)text, strlen(text), out, 8, &pos);

	cr_assert_eq(n, 4);
	cr_assert_eq(pos, 4);
	cr_assert_eq(out[0], 22548); /* "Hello" */
	cr_assert_eq(out[1], 46372); /* "," */
	cr_assert_eq(out[2], 2164);  /* "world" */
	cr_assert_eq(out[3], 33872); /* "!" */
	cr_assert_eq(out[4], 0);
}

Test(loader_work, tokenizer_wraps_into_the_batch)
{
	const char *text = "Hello, world!";
	int32_t out[3] = { 0 };
	size_t pos = 0;

	ch_lc_tokenize((const unsigned char *)text, strlen(text), out, 3, &pos);
	cr_assert_eq(pos, 4);
	cr_assert_eq(out[0], 33872); /* the 4th token wrapped onto slot 0 */
	cr_assert_eq(out[1], 46372);
	cr_assert_eq(out[2], 2164);
}

Test(loader_work, shard_is_deterministic_and_compressed)
{
	struct ch_lc_shard a, b;
	int i;

	cr_assert_eq(ch_lc_shard_make(&a, 42), 0);
	cr_assert_eq(ch_lc_shard_make(&b, 42), 0);
	for (i = 0; i < CH_LC_NCHUNKS; i++) {
		cr_assert_eq(a.crc[i], b.crc[i]);
		cr_assert_eq(a.zlen[i], b.zlen[i]);
		cr_assert(a.zlen[i] < CH_LC_CHUNK_BYTES / 2, "chunk %d: %zu bytes compressed", i, a.zlen[i]);
		cr_assert_eq(memcmp(a.z[i], b.z[i], a.zlen[i]), 0);
	}
	cr_assert_neq(a.crc[0], a.crc[1]);
	ch_lc_shard_release(&a);
	ch_lc_shard_release(&b);
}

Test(loader_work, batch_matches_an_independent_inflate)
{
	struct ch_lc_shard s;
	struct ch_lc_scratch sc;
	unsigned char *raw = malloc(CH_LC_CHUNK_BYTES);
	size_t ntok = 1 << 16, pos = 0, n;
	int32_t *got = calloc(ntok, 4), *want = calloc(ntok, 4);
	uLongf rl = CH_LC_CHUNK_BYTES;
	uint32_t crc;

	cr_assert_eq(ch_lc_shard_make(&s, 7), 0);
	cr_assert_eq(ch_lc_scratch_init(&sc), 0);
	/* batch 3 with 2 units covers chunks 6 and 7 */
	cr_assert_eq(ch_lc_batch_make(&s, 3, 2, &sc, got, ntok, &crc), 0);
	cr_assert_eq(uncompress(raw, &rl, s.z[6], s.zlen[6]), Z_OK);
	cr_assert_eq(rl, CH_LC_CHUNK_BYTES);
	cr_assert_eq((uint32_t)crc32(0L, raw, (uInt)rl), s.crc[6]);
	n = ch_lc_tokenize(raw, rl, want, ntok, &pos);
	rl = CH_LC_CHUNK_BYTES;
	cr_assert_eq(uncompress(raw, &rl, s.z[7], s.zlen[7]), Z_OK);
	n += ch_lc_tokenize(raw, rl, want, ntok, &pos);
	cr_assert(n > 1000 && n < ntok, "%zu tokens", n);
	cr_assert_eq(memcmp(got, want, ntok * 4), 0);
	cr_assert_eq(got[n], 0, "padding after the last token");
	cr_assert_eq(crc, (uint32_t)crc32(0L, (const Bytef *)want, (uInt)(ntok * 4)));
	ch_lc_scratch_release(&sc);
	ch_lc_shard_release(&s);
	free(raw);
	free(got);
	free(want);
}

Test(loader_work, corrupted_shard_fails_its_checksum)
{
	struct ch_lc_shard s;
	struct ch_lc_scratch sc;
	int32_t *out = calloc(4096, 4);

	cr_assert_eq(ch_lc_shard_make(&s, 7), 0);
	cr_assert_eq(ch_lc_scratch_init(&sc), 0);
	s.z[0][s.zlen[0] / 2] ^= 0x5a;
	cr_assert_eq(ch_lc_batch_make(&s, 0, 1, &sc, out, 4096, NULL), CH_ERR_CHECK);
	cr_assert_eq(ch_lc_batch_make(&s, 1, 1, &sc, out, 4096, NULL), 0); /* chunk 1 is intact */
	ch_lc_scratch_release(&sc);
	ch_lc_shard_release(&s);
	free(out);
}

Test(loader_work, units_per_batch)
{
	cr_assert_eq(ch_lc_units_per_batch(8e-3, 1e-3), 8);
	cr_assert_eq(ch_lc_units_per_batch(2.5e-3, 1e-3), 3);
	cr_assert_eq(ch_lc_units_per_batch(2.4e-3, 1e-3), 2);
	cr_assert_eq(ch_lc_units_per_batch(1e-3, 8e-3), 1);
	cr_assert_eq(ch_lc_units_per_batch(1e-3, 0), 1);
}

Test(loader_work, calibration_measures_a_unit)
{
	struct ch_lc_shard s;
	double u;

	cr_assert_eq(ch_lc_shard_make(&s, 1), 0);
	u = ch_lc_unit_sec(&s, 3);
	cr_assert(u > 0 && u < 1.0, "unit time %g s", u);
	cr_assert_eq(ch_lc_unit_sec(&s, 0), CH_ERR_USAGE);
	ch_lc_shard_release(&s);
}
