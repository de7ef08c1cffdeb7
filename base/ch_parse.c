#include "base/ch_parse.h"
#include "base/ch_common.h"

#include <ctype.h>
#include <getopt.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int ch_parse_size(const char *opt, const char *s, uint64_t *out)
{
	static const struct { const char *suf; int shift; } sufs[] = {
		{ "", 0 }, { "b", 0 },
		{ "k", 10 }, { "kib", 10 }, { "m", 20 }, { "mib", 20 },
		{ "g", 30 }, { "gib", 30 }, { "t", 40 }, { "tib", 40 },
	};
	char *end;
	double v;
	size_t i;

	const char *q = s;
	int digits = 0;

	/* plain decimal only: digits, optionally one '.' and more digits */
	if (!s)
		goto bad;
	while (isdigit((unsigned char)*q)) { q++; digits++; }
	if (*q == '.')
		for (q++; isdigit((unsigned char)*q); q++)
			digits++;
	if (!digits)
		goto bad;
	errno = 0;
	v = strtod(s, &end);
	if (end != q || errno || !isfinite(v))
		goto bad;
	for (i = 0; i < sizeof(sufs) / sizeof(sufs[0]); i++) {
		if (!strcasecmp(end, sufs[i].suf)) {
			long double b = (long double)v * (long double)(1ULL << sufs[i].shift);
			if (b >= 18446744073709551615.0L)
				goto bad;
			if (b != floorl(b))
				goto bad;
			*out = (uint64_t)b;
			return 0;
		}
	}
bad:
	return ch_usage_error("invalid size '%s' for %s (expected bytes with an optional K, M, G, T or KiB, MiB, GiB, TiB suffix; 1K = 1024)",
			      s ? s : "", opt);
}

char *ch_format_size(uint64_t bytes, char *buf, size_t n)
{
	static const char sfx[] = { 'T', 'G', 'M', 'K' };
	static const int shift[] = { 40, 30, 20, 10 };
	int i;

	for (i = 0; i < 4; i++) {
		uint64_t unit = 1ULL << shift[i];
		if (bytes >= unit && bytes % unit == 0) {
			snprintf(buf, n, "%llu%c", (unsigned long long)(bytes / unit), sfx[i]);
			return buf;
		}
	}
	snprintf(buf, n, "%llu", (unsigned long long)bytes);
	return buf;
}

size_t ch_decimal_len(const char *s)
{
	size_t i = 0, d = 0, j;

	if (!s)
		return 0;
	if (s[i] == '-')
		i++;
	while (isdigit((unsigned char)s[i])) { i++; d++; }
	if (s[i] == '.')
		for (i++; isdigit((unsigned char)s[i]); i++)
			d++;
	if (!d)
		return 0;
	if (s[i] == 'e' || s[i] == 'E') {
		j = i + 1;
		if (s[j] == '-' || s[j] == '+')
			j++;
		if (isdigit((unsigned char)s[j])) {
			while (isdigit((unsigned char)s[j]))
				j++;
			i = j;
		}
	}
	return i;
}

int ch_valid_utc(const char *s, int date_only)
{
	static const int mdays[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	static const char *const pat = "dddd-dd-ddTdd:dd:ddZ";
	size_t i, n = date_only ? 10 : 20;
	int y, mo, d, h = 0, mi = 0, se = 0, leap;

	if (!s || strlen(s) != n)
		return 0;
	for (i = 0; i < n; i++)
		if (pat[i] == 'd' ? !isdigit((unsigned char)s[i]) : s[i] != pat[i])
			return 0;
	y = atoi(s);
	mo = atoi(s + 5);
	d = atoi(s + 8);
	if (!date_only) {
		h = atoi(s + 11);
		mi = atoi(s + 14);
		se = atoi(s + 17);
	}
	leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
	return mo >= 1 && mo <= 12 && d >= 1 && d <= mdays[mo - 1] + (mo == 2 && leap) &&
	       h <= 23 && mi <= 59 && se <= 59;
}

int ch_parse_long(const char *opt, const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	if (!s || !*s || s[0] == '+' || isspace((unsigned char)*s))
		goto bad;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end)
		goto bad;
	if (v < min || v > max)
		return ch_usage_error("value '%s' for %s is out of range (expected %ld to %ld)",
				      s, opt, min, max);
	*out = v;
	return 0;
bad:
	return ch_usage_error("invalid integer '%s' for %s", s ? s : "", opt);
}

int ch_parse_double(const char *opt, const char *s, double min, double max,
		    double *out)
{
	char *end;
	double v;

	if (!s || !*s || ch_decimal_len(s) != strlen(s))
		goto bad;
	errno = 0;
	v = strtod(s, &end);
	if (errno || *end || !isfinite(v))
		goto bad;
	if (v < min || v > max)
		return ch_usage_error("value '%s' for %s is out of range (expected %g to %g)",
				      s, opt, min, max);
	*out = v;
	return 0;
bad:
	return ch_usage_error("invalid number '%s' for %s", s ? s : "", opt);
}

int ch_split_list(char *s, char **items, int max)
{
	int n = 0;
	char *p = s;

	for (;;) {
		char *c = strchr(p, ',');
		if (c)
			*c = '\0';
		if (!*p || n >= max)
			return -1;
		items[n++] = p;
		if (!c)
			return n;
		p = c + 1;
	}
}

int ch_lookup(const char *opt, const char *s, const char *const *names)
{
	char list[512] = "";
	size_t used = 0;
	int i;

	for (i = 0; names[i]; i++)
		if (!strcmp(s, names[i]))
			return i;
	for (i = 0; names[i] && used < sizeof(list); i++)
		used += (size_t)snprintf(list + used, sizeof(list) - used, "%s%s",
					 i ? ", " : "", names[i]);
	return ch_usage_error("unknown value '%s' for %s (expected: %s)", s, opt, list);
}

int ch_parse_leading_double(const char *s, double *v, char **end)
{
	size_t n = ch_decimal_len(s);

	if (!n)
		return -1;
	errno = 0;
	*v = strtod(s, end);
	return errno || *end != s + n || !isfinite(*v) ? -1 : 0;
}

int ch_parse_duration(const char *opt, const char *s, double *out)
{
	static const struct { const char *u; double mul; } units[] = {
		{ "", 1 }, { "s", 1 }, { "ms", 1e-3 }, { "us", 1e-6 }, { "m", 60 },
		{ "min", 60 }, { "h", 3600 },
	};
	char *end;
	double v;
	size_t i;

	if (ch_parse_leading_double(s, &v, &end))
		goto bad;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].u)) {
			*out = v * units[i].mul;
			return 0;
		}
bad:
	return ch_usage_error("invalid duration '%s' for %s (expected a number with an optional unit: ms, s, m or min, h; seconds when none)",
			      s ? s : "", opt);
}

/* ------------------------------------------------------- option errors */

/* Levenshtein distance of @a and @b (names of options: short), capped */
static int edit_distance(const char *a, const char *b)
{
	int la = (int)strlen(a), lb = (int)strlen(b), i, j;
	int prev[64], cur[64];

	if (la > 62 || lb > 62)
		return 99;
	for (j = 0; j <= lb; j++)
		prev[j] = j;
	for (i = 1; i <= la; i++) {
		cur[0] = i;
		for (j = 1; j <= lb; j++) {
			int d = prev[j - 1] + (a[i - 1] != b[j - 1]);
			if (prev[j] + 1 < d)
				d = prev[j] + 1;
			if (cur[j - 1] + 1 < d)
				d = cur[j - 1] + 1;
			cur[j] = d;
		}
		memcpy(prev, cur, sizeof(int) * (size_t)(lb + 1));
	}
	return prev[lb];
}

static int option_message(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int option_message(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: error: ", ch_prog());
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\ntry '%s --help' for more information\n", ch_prog());
	return CH_ERR_USAGE;
}

/* an unknown or ambiguous long option: @text is "--name[=value]" */
static int long_option_error(const char *text, const struct option *longopts)
{
	char name[128], list[400];
	const char *best = NULL;
	size_t n = strcspn(text + 2, "="), u = 0;
	int i, nprefix = 0, bestd = 99, maxd;

	if (n >= sizeof(name))
		n = sizeof(name) - 1;
	memcpy(name, text + 2, n);
	name[n] = '\0';
	list[0] = '\0';
	for (i = 0; longopts && longopts[i].name; i++) {
		int d;
		if (n && !strncmp(longopts[i].name, name, n)) {
			nprefix++;
			if (u < sizeof(list))
				u += (size_t)snprintf(list + u, sizeof(list) - u, "%s--%s", u ? ", " : "",
						      longopts[i].name);
		}
		d = edit_distance(name, longopts[i].name);
		if (d < bestd) {
			bestd = d;
			best = longopts[i].name;
		}
	}
	if (nprefix > 1)
		return option_message("ambiguous option '--%s' (%s)", name, list);
	maxd = n <= 4 ? 1 : 2;
	if (best && bestd <= maxd)
		return option_message("unknown option '--%s' (did you mean --%s?)", name, best);
	return option_message("unknown option '--%s'", name);
}

int ch_option_error(char *const argv[], const char *shortopts, const struct option *longopts)
{
	const char *text = optind > 0 ? argv[optind - 1] : NULL;
	int i;

	if (text && text[0] == '-' && text[1] == '-' && text[2]) {
		/* a long option: known (a value missing or not taken) or not */
		size_t n = strcspn(text + 2, "=");
		int hit = -1, nhit = 0;
		for (i = 0; longopts && longopts[i].name; i++)
			if (!strncmp(longopts[i].name, text + 2, n)) {
				if (strlen(longopts[i].name) == n) { /* exact: that one */
					hit = i;
					nhit = 1;
					break;
				}
				hit = i; /* an abbreviation getopt_long took */
				nhit++;
			}
		if (nhit == 1) {
			if (text[2 + n] == '=' && longopts[hit].has_arg == no_argument)
				return option_message("option '--%s' takes no value", longopts[hit].name);
			return option_message("option '--%s' needs a value", longopts[hit].name);
		}
		return long_option_error(text, longopts);
	}
	if (optopt && optopt < 0x100 && shortopts && strchr(shortopts, optopt) && optopt != ':')
		return option_message("option '-%c' needs a value", optopt);
	if (optopt && optopt < 0x100)
		return option_message("unknown option '-%c'", optopt);
	return option_message("unknown option '%s'", text ? text : "?");
}
