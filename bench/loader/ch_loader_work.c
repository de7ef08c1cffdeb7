/*
 * ch_loader_work.c - the dataloader workers' real CPU work: a synthetic
 * zlib-compressed shard, a tokenizer-like scan, and collation into a
 * fixed-size batch of token ids; plus the calibration of that work.
 */
#include "bench/loader/ch_loader.h"
#include "base/ch_common.h"
#include "base/ch_stats.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

#define LC_WORDS 4096

/* A vocabulary of LC_WORDS pseudo-words of 1-10 letters over a skewed
 * alphabet, stored as NUL-terminated strings of 11 bytes. */
static void gen_words(char (*w)[11], uint64_t *st)
{
	static const char letters[] = "etaoinshrdlcumwfgypbvkjxqz";
	int i, k;
	for (i = 0; i < LC_WORDS; i++) {
		uint64_t r = splitmix64(st);
		int len = 1 + (int)(r % 10);
		r >>= 8;
		for (k = 0; k < len; k++, r >>= 5) {
			unsigned a = (unsigned)(r % 26), b = (unsigned)((r >> 24) % 26);
			w[i][k] = letters[a < b ? a : b]; /* min of two draws: frequent letters first */
		}
		w[i][len] = '\0';
	}
}

/* Text-like bytes: words drawn with a skew towards the first ones (the
 * product of two uniform draws), punctuation, spaces and newlines. */
static void gen_text(unsigned char *p, size_t n, char (*words)[11], uint64_t *st)
{
	static const char punct[] = ".,;:!?'-()";
	size_t i = 0;

	while (i < n) {
		uint64_t r = splitmix64(st);
		unsigned a = (unsigned)(r % LC_WORDS), b = (unsigned)((r >> 16) % LC_WORDS);
		const char *w = words[(unsigned long)a * b / LC_WORDS];
		for (; *w && i < n; w++)
			p[i++] = (unsigned char)*w;
		r >>= 32;
		if (r % 9 == 0 && i < n)
			p[i++] = (unsigned char)punct[(r >> 8) % (sizeof(punct) - 1)];
		if (i < n)
			p[i++] = (r % 23 == 0) ? '\n' : ' ';
	}
}

void ch_lc_shard_release(struct ch_lc_shard *s)
{
	int i;
	for (i = 0; i < CH_LC_NCHUNKS; i++) {
		free(s->z[i]);
		s->z[i] = NULL;
	}
}

int ch_lc_shard_make(struct ch_lc_shard *s, uint64_t seed)
{
	unsigned char *raw = malloc(CH_LC_CHUNK_BYTES);
	char (*words)[11] = malloc(LC_WORDS * sizeof(*words));
	uint64_t st = seed;
	int i;

	memset(s, 0, sizeof(*s));
	s->raw_bytes = CH_LC_CHUNK_BYTES;
	if (!raw || !words) {
		free(raw);
		free(words);
		ch_error("out of memory for the synthetic shard");
		return CH_ERR_RUNTIME;
	}
	gen_words(words, &st);
	for (i = 0; i < CH_LC_NCHUNKS; i++) {
		uLongf zl = compressBound(CH_LC_CHUNK_BYTES);
		gen_text(raw, CH_LC_CHUNK_BYTES, words, &st);
		s->crc[i] = (uint32_t)crc32(0L, raw, CH_LC_CHUNK_BYTES);
		s->z[i] = malloc(zl);
		if (!s->z[i] || compress2(s->z[i], &zl, raw, CH_LC_CHUNK_BYTES, 6) != Z_OK) {
			ch_error("cannot compress the synthetic shard (zlib)");
			free(raw);
			free(words);
			ch_lc_shard_release(s);
			return CH_ERR_RUNTIME;
		}
		s->zlen[i] = zl;
	}
	free(raw);
	free(words);
	return 0;
}

int32_t ch_lc_token_id(const unsigned char *tok, size_t len)
{
	uint32_t h = 2166136261u;
	size_t i;
	for (i = 0; i < len; i++) {
		h ^= tok[i];
		h *= 16777619u;
	}
	return (int32_t)(2 + h % (CH_LC_VOCAB - 2));
}

size_t ch_lc_tokenize(const unsigned char *text, size_t len, int32_t *out, size_t cap,
		      size_t *pos)
{
	size_t i = 0, n = 0;

	while (i < len) {
		unsigned char c = text[i];
		if (isspace(c)) {
			i++;
			continue;
		}
		if (isalnum(c)) {
			size_t j = i;
			while (j < len && isalnum(text[j]))
				j++;
			out[(*pos)++ % cap] = ch_lc_token_id(text + i, j - i);
			i = j;
		} else {
			out[(*pos)++ % cap] = ch_lc_token_id(text + i, 1);
			i++;
		}
		n++;
	}
	return n;
}

int ch_lc_scratch_init(struct ch_lc_scratch *sc)
{
	sc->raw = malloc(CH_LC_CHUNK_BYTES);
	return sc->raw ? 0 : CH_ERR_RUNTIME;
}

void ch_lc_scratch_release(struct ch_lc_scratch *sc)
{
	free(sc->raw);
	sc->raw = NULL;
}

/* One work unit: inflate chunk @c, check it, scan it into @out. */
static int unit(const struct ch_lc_shard *s, int c, struct ch_lc_scratch *sc,
		int32_t *out, size_t ntok, size_t *pos)
{
	uLongf rl = CH_LC_CHUNK_BYTES;
	if (uncompress(sc->raw, &rl, s->z[c], s->zlen[c]) != Z_OK || rl != s->raw_bytes ||
	    (uint32_t)crc32(0L, sc->raw, (uInt)rl) != s->crc[c])
		return CH_ERR_CHECK;
	ch_lc_tokenize(sc->raw, rl, out, ntok, pos);
	return 0;
}

int ch_lc_batch_make(const struct ch_lc_shard *s, uint64_t seq, int units,
		     struct ch_lc_scratch *sc, int32_t *out, size_t ntok, uint32_t *crc)
{
	size_t pos = 0;
	int u, rc;

	for (u = 0; u < units; u++) {
		int c = (int)((seq * (uint64_t)units + (uint64_t)u) % CH_LC_NCHUNKS);
		if ((rc = unit(s, c, sc, out, ntok, &pos)) != 0)
			return rc;
	}
	if (pos < ntok) /* padding of a short batch */
		memset(out + pos, 0, (ntok - pos) * sizeof(*out));
	if (crc)
		*crc = (uint32_t)crc32(0L, (const Bytef *)out, (uInt)(ntok * sizeof(*out)));
	return 0;
}

double ch_lc_unit_sec(const struct ch_lc_shard *s, int reps)
{
	struct ch_lc_scratch sc;
	size_t ntok = CH_LC_CHUNK_BYTES, pos;
	int32_t *out;
	double *t, med;
	struct ch_stats st;
	int i, rc = 0;

	if (reps < 1)
		return CH_ERR_USAGE;
	out = malloc(ntok * sizeof(*out));
	t = malloc((size_t)reps * sizeof(*t));
	if (!out || !t || ch_lc_scratch_init(&sc) != 0) {
		free(out);
		free(t);
		return CH_ERR_RUNTIME;
	}
	for (i = 0; i < reps && !rc; i++) {
		double t0 = ch_now_sec();
		pos = 0;
		rc = unit(s, i % CH_LC_NCHUNKS, &sc, out, ntok, &pos);
		t[i] = ch_now_sec() - t0;
	}
	if (!rc)
		rc = ch_stats_compute(t, (size_t)reps, &st);
	med = rc ? (double)rc : st.median;
	if (!rc && med <= 0)
		med = 1e-9;
	ch_lc_scratch_release(&sc);
	free(out);
	free(t);
	return med;
}

int ch_lc_units_per_batch(double batch_sec, double unit_sec)
{
	double u;
	if (!(unit_sec > 0))
		return 1;
	u = batch_sec / unit_sec + 0.5;
	if (u < 1)
		return 1;
	if (u > 1e6)
		return 1000000;
	return (int)u;
}
