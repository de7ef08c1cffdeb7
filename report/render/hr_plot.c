/*
 * hr_plot.c - PLplot SVG plots in memory.
 */
#include "report/render/hr_plot.h"
#include "report/hr_util.h"
#include "base/ch_common.h"
#include "base/ch_datasheet.h"

#include <math.h>
#include <plplot.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define W 720
#define H 420

enum {
	C_BG = 0, C_BLACK, C_RED, C_BLUE, C_GREEN, C_ORANGE, C_PURPLE, C_BROWN,
	C_GREY, C_PINK, C_OLIVE, C_CYAN, C_LIGHT, C_NCOLORS
};

static const unsigned char palette[C_NCOLORS][3] = {
	{ 255, 255, 255 }, { 0, 0, 0 }, { 214, 39, 40 }, { 31, 119, 180 },
	{ 44, 160, 44 }, { 255, 127, 14 }, { 148, 103, 189 }, { 140, 86, 75 },
	{ 127, 127, 127 }, { 227, 119, 194 }, { 188, 189, 34 }, { 23, 190, 207 },
	{ 210, 210, 210 },
};

/* colour of a dtype, for roofs and points */
static int dtype_color(const char *dt)
{
	static const char *const names[] = { "fp64", "fp32", "tf32", "bf16", "fp16", "fp8" };
	static const int col[] = { C_BLUE, C_GREEN, C_CYAN, C_PURPLE, C_PINK, C_BROWN };
	int i;
	for (i = 0; dt && i < 6; i++)
		if (!strcmp(dt, names[i]))
			return col[i];
	return C_GREY;
}

void hr_svg_release(struct hr_svg *s)
{
	free(s->svg);
	s->svg = NULL;
	s->len = 0;
}

/* ------------------------------------------------------------ stream */

static jmp_buf pl_jmp;
static int pl_active;
static char *pl_buf;
static size_t pl_len;
static FILE *pl_file;

static int pl_exit_handler(const char *msg)
{
	ch_warn("plot failed: PLplot: %s", msg ? msg : "fatal error");
	if (pl_active) {
		pl_active = 0;
		longjmp(pl_jmp, 1);
	}
	return 1;
}

static int pl_open(void)
{
	int i;
	pl_buf = NULL;
	pl_len = 0;
	pl_file = open_memstream(&pl_buf, &pl_len);
	if (!pl_file)
		return CH_ERR_RUNTIME;
	plsexit(pl_exit_handler);
	plsdev("svg");
	plsfile(pl_file);
	plspage(0, 0, W, H, 0, 0);
	plscolbg(palette[0][0], palette[0][1], palette[0][2]);
	plscmap0n(C_NCOLORS);
	for (i = 0; i < C_NCOLORS; i++)
		plscol0(i, palette[i][0], palette[i][1], palette[i][2]);
	plinit();
	pladv(0);
	plschr(0, 0.85);
	return 0;
}

/* Drop @pat (an attribute SVG has as its default) everywhere in @s[0..*n). */
static void drop_all(char *s, size_t *n, const char *pat)
{
	size_t l = strlen(pat), o = 0;
	const char *p = s, *end = s + *n, *hit;
	/* each leftmost occurrence, left to right (memmem(), not a compare
	 * at every byte: the SVG of a plot is hundreds of kB) */
	while ((hit = memmem(p, (size_t)(end - p), pat, l))) {
		memmove(s + o, p, (size_t)(hit - p));
		o += (size_t)(hit - p);
		p = hit + l;
	}
	memmove(s + o, p, (size_t)(end - p));
	o += (size_t)(end - p);
	*n = o;
	s[o] = '\0';
}

/*
 * PLplot's SVG draws a dashed line, a symbol's strokes or a grid as many
 * <polyline> elements in a row with the same attributes: consecutive ones
 * with the same attributes become one <path> of as many sub-paths
 * ("Mx,y x,y Mx,y ..."), which strokes the same (a dashed roof was 100
 * elements of 130 bytes). The attributes SVG has as defaults are dropped.
 */
static void merge_polylines(struct hr_svg *svg)
{
	static const char open[] = "<polyline ", pts[] = " points=\"";
	char *s = svg->svg, *out;
	size_t n = svg->len, i = 0, o = 0;

	drop_all(s, &n, " stroke-opacity=\"1.000000\"");
	drop_all(s, &n, " fill-opacity=\"1.000000\"");
	svg->len = n;
	out = malloc(n + 1);
	if (!out)
		return;
	while (i < n) {
		const char *a, *p, *e;
		size_t alen;
		if (s[i] != '<') {
			/* up to the next element, at once */
			const char *lt = memchr(s + i, '<', n - i);
			size_t run = lt ? (size_t)(lt - (s + i)) : n - i;
			memcpy(out + o, s + i, run);
			o += run;
			i += run;
			continue;
		}
		if (strncmp(s + i, open, sizeof(open) - 1) != 0) {
			out[o++] = s[i++];
			continue;
		}
		/* <polyline ATTRS points="P"/>: ATTRS from a to p */
		a = s + i + sizeof(open) - 1;
		p = strstr(a, pts);
		e = p ? strstr(p + sizeof(pts) - 1, "\"/>") : NULL;
		if (!p || !e || memchr(a, '>', (size_t)(p - a))) {
			out[o++] = s[i++];
			continue;
		}
		alen = (size_t)(p - a);
		o += (size_t)sprintf(out + o, "<path %.*s d=\"", (int)alen, a);
		for (;;) {
			const char *q = p + sizeof(pts) - 1;
			out[o++] = 'M';
			memcpy(out + o, q, (size_t)(e - q));
			o += (size_t)(e - q);
			i = (size_t)(e + 3 - s);
			/* the next element: a polyline with the same attributes? */
			if (strncmp(s + i, open, sizeof(open) - 1) != 0 ||
			    strncmp(s + i + sizeof(open) - 1, a, alen) != 0 ||
			    strncmp(s + i + sizeof(open) - 1 + alen, pts, sizeof(pts) - 1) != 0)
				break;
			p = s + i + sizeof(open) - 1 + alen;
			e = strstr(p + sizeof(pts) - 1, "\"/>");
			if (!e)
				break;
		}
		memcpy(out + o, "\"/>", 3);
		o += 3;
	}
	out[o] = '\0';
	free(svg->svg);
	svg->svg = out;
	svg->len = o;
}

/* Close the stream (PLplot closes the FILE) and keep "<svg ...>". */
static int pl_close(struct hr_svg *out)
{
	char *start;
	plend1();
	pl_file = NULL;
	if (!pl_buf)
		return CH_ERR_RUNTIME;
	start = strstr(pl_buf, "<svg");
	if (!start) {
		free(pl_buf);
		pl_buf = NULL;
		return CH_ERR_RUNTIME;
	}
	out->len = pl_len - (size_t)(start - pl_buf);
	out->svg = malloc(out->len + 1);
	if (!out->svg) {
		free(pl_buf);
		pl_buf = NULL;
		return CH_ERR_RUNTIME;
	}
	/* compact: PLplot writes one attribute per line; collapse white space
	 * and drop attributes that repeat SVG's defaults */
	{
		static const char *const dflt[] = { " stroke-opacity=\"1.000000\"",
			" fill-opacity=\"1.000000\"", NULL };
		size_t i = 0, o = 0, n = out->len;
		while (i < n) {
			int k, skipped = 0;
			char ch = start[i];
			for (k = 0; ch == ' ' && dflt[k]; k++) { /* both begin with a space */
				size_t l = strlen(dflt[k]);
				if (i + l <= n && !memcmp(start + i, dflt[k], l)) {
					i += l;
					skipped = 1;
					break;
				}
			}
			if (skipped)
				continue;
			if (ch == ' ' || ch == '\n' || ch == '\t' || ch == '\r') {
				while (i < n && (start[i] == ' ' || start[i] == '\n' || start[i] == '\t' || start[i] == '\r'))
					i++;
				if (o > 0 && out->svg[o - 1] != '>' && i < n && start[i] != '>' && start[i] != '/')
					out->svg[o++] = ' ';
				else if (o > 0 && out->svg[o - 1] == '>' && i < n && start[i] != '<')
					out->svg[o++] = ' ';
				continue;
			}
			out->svg[o++] = ch;
			i++;
		}
		out->len = o;
	}
	out->svg[out->len] = '\0';
	free(pl_buf);
	pl_buf = NULL;
	merge_polylines(out);
	return 0;
}

/* PLplot text: a string from an input shown as on the terminal
 * (hr_term(): no control character reaches the SVG; PLplot writes every
 * character as a numeric entity), and '#', which starts a PLplot escape
 * sequence, doubled. */
static void pl_text(char *dst, size_t n, const char *src)
{
	size_t j = 0;
	for (src = hr_term(src); src && *src && j + 2 < n; src++) {
		if (*src == '#')
			dst[j++] = '#';
		dst[j++] = *src;
	}
	dst[j] = '\0';
}

static void viewport(const char *title, const char *xl, const char *yl,
		     double x0, double x1, double y0, double y1, const char *xopt, const char *yopt)
{
	char t[256], a[128], b[128];
	if (!(x1 > x0)) { x0 -= 1; x1 += 1; }
	if (!(y1 > y0)) { y0 -= 1; y1 += 1; }
	plvpor(0.11, 0.97, 0.14, 0.9);
	plwind(x0, x1, y0, y1);
	plcol0(C_LIGHT);
	plwidth(0.5);
	plbox("g", 0, 0, "g", 0, 0);
	plcol0(C_BLACK);
	plwidth(1);
	plbox(xopt, 0, 0, yopt, 0, 0);
	pl_text(t, sizeof(t), title);
	pl_text(a, sizeof(a), xl);
	pl_text(b, sizeof(b), yl);
	pllab(a, b, t);
}

static void line2(double xa, double ya, double xb, double yb)
{
	double x[2] = { xa, xb }, y[2] = { ya, yb };
	plline(2, x, y);
}

static void label_at(double x, double y, double just, const char *s)
{
	char t[256];
	pl_text(t, sizeof(t), s);
	plptex(x, y, 1, 0, just, t);
}

/* Legend entries stacked in the top-left corner of the current window. */
static void legend(double x0, double x1, double y0, double y1, int i, int col, const char *text)
{
	plcol0(col);
	label_at(x0 + 0.02 * (x1 - x0), y1 - (0.07 * (i + 1)) * (y1 - y0), 0.0, text);
}

/* "1.5 PFLOP/s"-free GFLOP/s or TFLOP/s text */
static void fmt_flops(double g, char *buf, size_t n)
{
	char num[32];
	if (g >= 10000)
		snprintf(buf, n, "%s TFLOP/s", hr_fmt_num(g / 1000, num, sizeof(num)));
	else
		snprintf(buf, n, "%s GFLOP/s", hr_fmt_num(g, num, sizeof(num)));
}

/* ------------------------------------------------------------ helpers */

static double jnum(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

static const char *jstr(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* ------------------------------------------------------------ roofline */

struct roof { char dtype[8]; double meas, ds; };

static int roofline_draw(const char *node, const json_t *device)
{
	const json_t *metrics = json_object_get(device, "metrics"), *pts = json_object_get(device, "points"), *m;
	struct roof roofs[CH_NDTYPES];
	int nroofs = 0, i;
	double mem = NAN, mem_ds = NAN, amin = INFINITY, amax = -INFINITY, ylo = INFINITY, yhi = -INFINITY;
	double top = NAN;
	size_t k;
	char title[256], lab[320];

	json_array_foreach(metrics, k, m) {
		const char *mk = jstr(m, "metric");
		if (!mk)
			continue;
		if (!strcmp(mk, "memory_gbps")) {
			mem = jnum(m, "value");
			mem_ds = jnum(m, "datasheet");
		} else if (!strncmp(mk, "compute_gflops.", 15) && nroofs < CH_NDTYPES) {
			snprintf(roofs[nroofs].dtype, sizeof(roofs[0].dtype), "%s", mk + 15);
			roofs[nroofs].meas = jnum(m, "value");
			roofs[nroofs].ds = jnum(m, "datasheet");
			nroofs++;
		}
	}
	json_array_foreach(pts, k, m) {
		double ai = jnum(m, "ai_flop_per_byte"), g = jnum(m, "gflops");
		if (!(ai > 0) || !(g > 0))
			continue;
		amin = fmin(amin, ai);
		amax = fmax(amax, ai);
		ylo = fmin(ylo, g);
		yhi = fmax(yhi, g);
	}
	for (i = 0; i < nroofs; i++) {
		double r = fmax(roofs[i].meas, isnan(roofs[i].ds) ? 0 : roofs[i].ds);
		if (r > 0) {
			yhi = fmax(yhi, r);
			ylo = fmin(ylo, roofs[i].meas);
			if (mem > 0) {
				amax = fmax(amax, 4 * roofs[i].meas / mem);
				amin = fmin(amin, 0.25 * roofs[i].meas / fmax(mem, mem_ds > 0 ? mem_ds : 0) / 4);
			}
			if (isnan(top) || roofs[i].meas > top)
				top = roofs[i].meas;
		}
	}
	if (!isfinite(amin) || !isfinite(amax)) {
		amin = 0.01;
		amax = 100;
	}
	if (mem > 0) {
		ylo = fmin(ylo, mem * amin);
		yhi = fmax(yhi, mem * amin);
	}
	if (!isfinite(ylo) || !isfinite(yhi) || ylo <= 0)
		return CH_ERR_USAGE;
	snprintf(title, sizeof(title), "%s %s%s%s%s: roofline", node, jstr(device, "device"),
		 jstr(device, "name") ? " (" : "", jstr(device, "name") ? jstr(device, "name") : "",
		 jstr(device, "name") ? ")" : "");
	{
		double x0 = log10(amin) - 0.2, x1 = log10(amax) + 0.2;
		double y0 = log10(ylo) - 0.3, y1 = log10(yhi) + 0.3 + 0.08 * (nroofs + 1) * (log10(yhi) - log10(ylo) + 0.6);
		int li = 0;
		char num[32];
		viewport(title, "arithmetic intensity (FLOP/byte)", "GFLOP/s", x0, x1, y0, y1,
			 "bcnstl", "bcnstvl");
		/* datasheet roofs, dashed */
		plwidth(1.5);
		pllsty(2);
		for (i = 0; i < nroofs; i++) {
			double bw = mem_ds > 0 ? mem_ds : NAN;
			if (!(roofs[i].ds > 0))
				continue;
			plcol0(dtype_color(roofs[i].dtype));
			if (bw > 0 && roofs[i].ds / bw > amin) {
				double ridge = roofs[i].ds / bw;
				line2(x0, log10(bw) + x0, log10(ridge), log10(roofs[i].ds));
				line2(log10(ridge), log10(roofs[i].ds), x1, log10(roofs[i].ds));
			} else {
				line2(x0, log10(roofs[i].ds), x1, log10(roofs[i].ds));
			}
		}
		/* measured roofs, solid */
		pllsty(1);
		plwidth(2.5);
		for (i = 0; i < nroofs; i++) {
			double c = roofs[i].meas;
			if (!(c > 0))
				continue;
			plcol0(dtype_color(roofs[i].dtype));
			if (mem > 0 && c / mem > amin) {
				double ridge = c / mem;
				line2(x0, log10(mem) + x0, log10(ridge), log10(c));
				line2(log10(ridge), log10(c), x1, log10(c));
			} else {
				line2(x0, log10(c), x1, log10(c));
			}
		}
		if (mem > 0 && nroofs == 0) {
			plcol0(C_BLACK);
			line2(x0, log10(mem) + x0, x1, log10(mem) + x1);
		}
		plwidth(1);
		if (mem > 0) {
			snprintf(lab, sizeof(lab), "memory roof %s GB/s%s%s%s", hr_fmt_num(mem, num, sizeof(num)),
				 mem_ds > 0 ? " (datasheet " : "", mem_ds > 0 ? hr_fmt_num(mem_ds, title, sizeof(title)) : "",
				 mem_ds > 0 ? ")" : "");
			legend(x0, x1, y0, y1, li++, C_BLACK, lab);
		}
		for (i = 0; i < nroofs; i++) {
			char f1[48], f2[48];
			fmt_flops(roofs[i].meas, f1, sizeof(f1));
			if (roofs[i].ds > 0)
				fmt_flops(roofs[i].ds, f2, sizeof(f2));
			snprintf(lab, sizeof(lab), "%s roof %s%s%s%s", roofs[i].dtype, f1,
				 roofs[i].ds > 0 ? " (datasheet " : "", roofs[i].ds > 0 ? f2 : "",
				 roofs[i].ds > 0 ? ")" : "");
			legend(x0, x1, y0, y1, li++, dtype_color(roofs[i].dtype), lab);
		}
	}
	/* points */
	plwidth(1);
	json_array_foreach(pts, k, m) {
		double ai = jnum(m, "ai_flop_per_byte"), g = jnum(m, "gflops"), x, y;
		if (!(ai > 0) || !(g > 0))
			continue;
		x = log10(ai);
		y = log10(g);
		plcol0(json_is_true(json_object_get(m, "throttled")) ? C_RED : dtype_color(jstr(m, "dtype")));
		plpoin(1, &x, &y, jstr(m, "family") && !strcmp(jstr(m, "family"), "gemm") ? 5 : 4);
	}
	(void)top;
	return 0;
}

/* What a plot's drawing function takes, for plot_run(). */
struct plot_args {
	const char *name;              /* node or title */
	const json_t *json;            /* the plotted part of the profile */
	const unsigned char *flagged;  /* busbw_fleet: the groups flagged */
	double warn, fail;             /* distribution: the rule's cut-offs, % below */
};

/* One plot: PLplot opened on a memory buffer, @draw run (a PLplot error
 * jumps back here: pl_jmp), the SVG handed to @out (hr_plot.h says whose it
 * is). Returns 0, @draw's error, or CH_ERR_RUNTIME. */
static int plot_run(int (*draw)(const struct plot_args *), const struct plot_args *a, struct hr_svg *out)
{
	int rc;
	memset(out, 0, sizeof(*out));
	if (setjmp(pl_jmp)) {
		pl_active = 0;
		return CH_ERR_RUNTIME;
	}
	if (pl_open())
		return CH_ERR_RUNTIME;
	pl_active = 1;
	rc = draw(a);
	pl_active = 0;
	if (rc) {
		plend1();
		free(pl_buf);
		pl_buf = NULL;
		return rc;
	}
	return pl_close(out);
}

static int run_roofline(const struct plot_args *a)
{
	return roofline_draw(a->name, a->json);
}

int hr_plot_roofline(const char *node, const json_t *device, struct hr_svg *out)
{
	struct plot_args a = { .name = node, .json = device };
	return plot_run(run_roofline, &a, out);
}

/* ------------------------------------------------------------ busbw */

/* x axis in log2 bytes, labelled with nccl-tests' size suffixes */
static void size_label(PLINT axis, PLFLT value, char *label, PLINT length, PLPointer data)
{
	(void)data;
	if (axis == PL_X_AXIS && fabs(value - round(value)) < 1e-6 && value >= 0 && value < 63)
		hr_fmt_bytes(ldexp(1.0, (int)round(value)), label, (size_t)length);
	else
		snprintf(label, (size_t)length, "%g", value);
}

static int busbw_draw(const char *title, const json_t *groups)
{
	static const int cols[] = { C_BLUE, C_ORANGE, C_GREEN, C_RED, C_PURPLE, C_BROWN, C_CYAN };
	double xmin = INFINITY, xmax = -INFINITY, ymax = 0;
	const json_t *g, *r;
	size_t i, k;
	int nlines = 0;
	char lab[160];

	json_array_foreach(groups, i, g) {
		const json_t *rows = json_object_get(g, "rows");
		if (json_array_size(rows) >= 2)
			nlines++;
		json_array_foreach(rows, k, r) {
			double b = jnum(r, "bytes"), o = jnum(r, "busbw_oop_gbps"), p = jnum(r, "busbw_ip_gbps");
			if (!(b > 0))
				continue;
			xmin = fmin(xmin, log2(b));
			xmax = fmax(xmax, log2(b));
			if (o > ymax) ymax = o;
			if (p > ymax) ymax = p;
		}
	}
	if (!nlines || !isfinite(xmin))
		return CH_ERR_USAGE;
	plslabelfunc(size_label, NULL);
	viewport(title, "message size (bytes)", "busbw (GB/s)", xmin - 0.5, xmax + 0.5, 0,
		 ymax > 0 ? ymax * 1.15 : 1, "bcnsto", "bcnstv");
	plslabelfunc(NULL, NULL);
	nlines = 0;
	json_array_foreach(groups, i, g) {
		const json_t *rows = json_object_get(g, "rows");
		size_t n = json_array_size(rows), m, half;
		double *x, *y;
		int col = cols[nlines % 7];
		if (n < 2)
			continue;
		x = malloc(n * sizeof(*x));
		y = malloc(n * sizeof(*y));
		if (!x || !y) {
			free(x);
			free(y);
			return CH_ERR_RUNTIME;
		}
		for (half = 0; half < 2; half++) {
			m = 0;
			json_array_foreach(rows, k, r) {
				double b = jnum(r, "bytes"), v = jnum(r, half ? "busbw_ip_gbps" : "busbw_oop_gbps");
				if (!(b > 0) || isnan(v))
					continue;
				x[m] = log2(b);
				y[m] = v;
				m++;
			}
			if (m < 1)
				continue;
			plcol0(col);
			plwidth(half ? 1.2 : 2.2);
			pllsty(half ? 2 : 1);
			if (m >= 2)
				plline((PLINT)m, x, y);
			plpoin((PLINT)m, x, y, half ? 5 : 4);
		}
		pllsty(1);
		snprintf(lab, sizeof(lab), "%s %s (%lld ranks)", jstr(g, "algo") ? jstr(g, "algo") : "?",
			 jstr(g, "collective") ? jstr(g, "collective") : "",
			 (long long)json_integer_value(json_object_get(g, "nranks")));
		plcol0(col);
		label_at(xmin - 0.3, ymax * (1.1 - 0.07 * nlines), 0.0, lab);
		free(x);
		free(y);
		nlines++;
	}
	return 0;
}

static int run_busbw(const struct plot_args *a)
{
	return busbw_draw(a->name, a->json);
}

int hr_plot_busbw(const char *title, const json_t *groups, struct hr_svg *out)
{
	struct plot_args a = { .name = title, .json = groups };
	return plot_run(run_busbw, &a, out);
}

/* ------------------------------------------------------------ busbw, like groups overlaid */

/* One message size of a class of like groups: the out-of-place busbw of
 * each group that measured it. */
struct fsize {
	double bytes;
	double *v;
	size_t n, cap;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The @q quantile (0..1) of @n sorted values, linear between ranks. */
static double quantile(const double *v, size_t n, double q)
{
	double h = q * (double)(n - 1);
	size_t lo = (size_t)floor(h);
	if (lo + 1 >= n)
		return v[n - 1];
	return v[lo] + (h - (double)lo) * (v[lo + 1] - v[lo]);
}

static struct fsize *fsize_at(struct fsize **s, size_t *n, size_t *cap, double bytes)
{
	size_t i;
	for (i = 0; i < *n; i++)
		if ((*s)[i].bytes == bytes)
			return &(*s)[i];
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 32;
		struct fsize *x = realloc(*s, c * sizeof(*x));
		if (!x)
			return NULL;
		*s = x;
		*cap = c;
	}
	memset(&(*s)[*n], 0, sizeof(**s));
	(*s)[*n].bytes = bytes;
	return &(*s)[(*n)++];
}

static int cmp_fsize(const void *a, const void *b)
{
	double x = ((const struct fsize *)a)->bytes, y = ((const struct fsize *)b)->bytes;
	return (x > y) - (x < y);
}

/* A group's out-of-place curve: its rows with a size and a busbw, as log2
 * size and GB/s. Returns the points (at most @cap). */
static size_t group_curve(const json_t *g, double *x, double *y, size_t cap)
{
	const json_t *r;
	size_t k, m = 0;
	json_array_foreach(json_object_get(g, "rows"), k, r) {
		double b = jnum(r, "bytes"), v = jnum(r, "busbw_oop_gbps");
		if (!(b > 0) || isnan(v) || m >= cap)
			continue;
		x[m] = log2(b);
		y[m] = v;
		m++;
	}
	return m;
}

#define FLEET_MAX_CURVES 48   /* flagged curves drawn on one plot */
#define FLEET_MAX_LABELS 8    /* of them labelled */
#define FLEET_ALL_CURVES 8    /* a class this small draws every curve */

static int busbw_fleet_draw(const char *title, const json_t *groups, const unsigned char *flagged)
{
	struct fsize *sz = NULL;
	size_t nsz = 0, capsz = 0, i, k, ncurves = 0, ngroups = json_array_size(groups);
	double xmin = INFINITY, xmax = -INFINITY, ymax = 0, *bx = NULL, *bm = NULL, *blo = NULL, *bhi = NULL;
	double px[256], py[256];
	const json_t *g;
	int labels = 0, rc = 0, drawn = 0;
	char lab[200];

	json_array_foreach(groups, i, g) {
		size_t m = group_curve(g, px, py, 256);
		if (m >= 2)
			ncurves++;
		for (k = 0; k < m; k++) {
			struct fsize *f = fsize_at(&sz, &nsz, &capsz, px[k]);
			if (!f) {
				rc = CH_ERR_RUNTIME;
				goto out;
			}
			if (f->n == f->cap) {
				size_t c = f->cap ? f->cap * 2 : 16;
				double *v = realloc(f->v, c * sizeof(*v));
				if (!v) {
					rc = CH_ERR_RUNTIME;
					goto out;
				}
				f->v = v;
				f->cap = c;
			}
			f->v[f->n++] = py[k];
			xmin = fmin(xmin, px[k]);
			xmax = fmax(xmax, px[k]);
			ymax = fmax(ymax, py[k]);
		}
	}
	if (!ncurves || !isfinite(xmin)) {
		rc = CH_ERR_USAGE;
		goto out;
	}
	qsort(sz, nsz, sizeof(*sz), cmp_fsize);
	bx = malloc(2 * nsz * sizeof(*bx));
	bm = malloc(nsz * sizeof(*bm));
	blo = malloc(2 * nsz * sizeof(*blo));
	bhi = malloc(nsz * sizeof(*bhi));
	if (!bx || !bm || !blo || !bhi) {
		rc = CH_ERR_RUNTIME;
		goto out;
	}
	for (i = 0; i < nsz; i++) {
		qsort(sz[i].v, sz[i].n, sizeof(double), cmp_double);
		bx[i] = sz[i].bytes;
		bm[i] = quantile(sz[i].v, sz[i].n, 0.5);
		blo[i] = quantile(sz[i].v, sz[i].n, 0.1);
		bhi[i] = quantile(sz[i].v, sz[i].n, 0.9);
	}
	plslabelfunc(size_label, NULL);
	viewport(title, "message size (bytes)", "busbw out-of-place (GB/s)", xmin - 0.5, xmax + 0.5, 0,
		 ymax > 0 ? ymax * 1.15 : 1, "bcnsto", "bcnstv");
	plslabelfunc(NULL, NULL);
	/* the band: the 10th to 90th percentile of the like groups per size,
	 * as one polygon (lower edge left to right, upper edge back) */
	if (ngroups >= 3 && nsz >= 2) {
		for (i = 0; i < nsz; i++) {
			bx[nsz + i] = bx[nsz - 1 - i];
			blo[nsz + i] = bhi[nsz - 1 - i];
		}
		plcol0(C_LIGHT);
		plfill((PLINT)(2 * nsz), bx, blo);
	}
	/* a small class: every curve, thin */
	if (ngroups <= FLEET_ALL_CURVES)
		json_array_foreach(groups, i, g) {
			size_t m = group_curve(g, px, py, 256);
			if (m < 2 || flagged[i])
				continue;
			plcol0(C_GREY);
			plwidth(1);
			plline((PLINT)m, px, py);
		}
	/* the median */
	plcol0(C_BLACK);
	plwidth(2.5);
	if (nsz >= 2)
		plline((PLINT)nsz, bx, bm);
	plpoin((PLINT)nsz, bx, bm, 4);
	/* the flagged groups, highlighted and labelled at their last point */
	json_array_foreach(groups, i, g) {
		size_t m;
		const char *lvl = jstr(json_object_get(g, "comparison"), "level");
		int col = lvl && !strcmp(lvl, "warn") ? C_ORANGE : C_RED;
		if (!flagged[i] || drawn >= FLEET_MAX_CURVES)
			continue;
		m = group_curve(g, px, py, 256);
		if (m < 1)
			continue;
		plcol0(col);
		plwidth(2);
		if (m >= 2)
			plline((PLINT)m, px, py);
		plpoin((PLINT)m, px, py, 5);
		drawn++;
		if (labels < FLEET_MAX_LABELS) {
			const json_t *nodes = json_object_get(g, "nodes");
			snprintf(lab, sizeof(lab), "%s%s%s", jstr(g, "name") ? jstr(g, "name") : "?",
				 json_array_size(nodes) ? " " : "",
				 json_array_size(nodes) ? json_string_value(json_array_get(nodes, 0)) : "");
			/* right-aligned at its last point, just under the curve */
			label_at(px[m - 1] - 0.1, py[m - 1] - 0.045 * (ymax > 0 ? ymax : 1) * (1 + labels % 2), 1.0, lab);
			labels++;
		}
	}
	plwidth(1);
	{
		double x0 = xmin - 0.5, x1 = xmax + 0.5, y1 = ymax > 0 ? ymax * 1.15 : 1;
		int li = 0;
		snprintf(lab, sizeof(lab), "median of %zu like group%s", ngroups, ngroups == 1 ? "" : "s");
		legend(x0, x1, 0, y1, li++, C_BLACK, lab);
		if (ngroups >= 3 && nsz >= 2)
			legend(x0, x1, 0, y1, li++, C_GREY, "band: 10th-90th percentile");
		if (drawn) {
			snprintf(lab, sizeof(lab), "flagged: %d group%s (red FAIL, orange WARN)", drawn, drawn == 1 ? "" : "s");
			legend(x0, x1, 0, y1, li++, C_RED, lab);
		}
	}
out:
	for (i = 0; i < nsz; i++)
		free(sz[i].v);
	free(sz);
	free(bx);
	free(bm);
	free(blo);
	free(bhi);
	return rc;
}

static int run_busbw_fleet(const struct plot_args *a)
{
	return busbw_fleet_draw(a->name, a->json, a->flagged);
}

int hr_plot_busbw_fleet(const char *title, const json_t *groups, const unsigned char *flagged,
			struct hr_svg *out)
{
	struct plot_args a = { .name = title, .json = groups, .flagged = flagged };
	return plot_run(run_busbw_fleet, &a, out);
}

/* ------------------------------------------------------------ lateness */

static int lateness_draw(const char *node, const json_t *loader)
{
	const json_t *cfgs = json_object_get(loader, "configs"), *c;
	size_t n = json_array_size(cfgs), i;
	double ymin = INFINITY, ymax = -INFINITY;
	char title[256];

	if (!n)
		return CH_ERR_USAGE;
	json_array_foreach(cfgs, i, c) {
		double a = jnum(c, "lateness_p50_us"), b = jnum(c, "lateness_p99_us");
		if (a > 0) { ymin = fmin(ymin, a); ymax = fmax(ymax, a); }
		if (b > 0) { ymin = fmin(ymin, b); ymax = fmax(ymax, b); }
	}
	if (!isfinite(ymin)) {
		ymin = 1;
		ymax = 10;
	}
	snprintf(title, sizeof(title), "%s: feeder lateness per placement (loader_contention)", node);
	viewport(title, "", "lateness (us)", -0.6, (double)n - 0.4, log10(ymin) - 0.3,
		 log10(ymax) + 0.5, "bc", "bcnstvl");
	json_array_foreach(cfgs, i, c) {
		double p50 = jnum(c, "lateness_p50_us"), p99 = jnum(c, "lateness_p99_us");
		const char *v = jstr(c, "verdict");
		double y0 = log10(ymin) - 0.3, x, y;
		int col = v && !strcmp(v, "fail") ? C_RED : v && !strcmp(v, "warn") ? C_ORANGE : C_GREEN;
		char lab[96];
		if (p99 > 0) {
			double bx[4] = { i - 0.3, i + 0.3, i + 0.3, i - 0.3 };
			double by[4] = { y0, y0, log10(p99), log10(p99) };
			plcol0(col);
			plfill(4, bx, by);
			plcol0(C_BLACK);
			plline(4, bx, by);
		}
		if (p50 > 0) {
			x = (double)i;
			y = log10(p50);
			plcol0(C_BLACK);
			plwidth(2);
			line2(x - 0.3, y, x + 0.3, y);
			plwidth(1);
		}
		snprintf(lab, sizeof(lab), "%s", jstr(c, "name") ? jstr(c, "name") : "?");
		plcol0(C_BLACK);
		{
			char t[128];
			pl_text(t, sizeof(t), lab);
			plmtex("b", 1.5 + 1.2 * (double)(i % 2), ((double)i + 0.6) / ((double)n + 0.2), 0.5, t);
		}
	}
	return 0;
}

static int run_lateness(const struct plot_args *a)
{
	return lateness_draw(a->name, a->json);
}

int hr_plot_lateness(const char *node, const json_t *loader, struct hr_svg *out)
{
	struct plot_args a = { .name = node, .json = loader };
	return plot_run(run_lateness, &a, out);
}

/* ------------------------------------------------------------ distribution */

struct dv { double v; const char *subject, *level; size_t rank; };

static int cmp_dv(const void *a, const void *b)
{
	double x = ((const struct dv *)a)->v, y = ((const struct dv *)b)->v;
	size_t r = ((const struct dv *)a)->rank, q = ((const struct dv *)b)->rank;
	if (r || q) /* a bounded profile's values: by their rank in the fleet */
		return (r > q) - (r < q);
	return (x > y) - (x < y);
}

/* Most in-range points one distribution plot draws (see distribution_draw). */
#define DIST_MAX_POINTS 1000
/* Past this many values the points are one line, not a symbol each. */
#define DIST_SYMBOLS 200

static int distribution_draw(const json_t *dist, double warn_pct, double fail_pct)
{
	const json_t *vals = json_object_get(dist, "values"), *v;
	size_t n = json_array_size(vals), i, m = 0, ranks = 0; /* ranks: the highest "rank" */
	struct dv *d;
	size_t kept;
	double med = jnum(dist, "median"), ymin = INFINITY, ymax = -INFINITY;
	char title[256], yl[64];

	if (n < 2)
		return CH_ERR_USAGE;
	d = calloc(n, sizeof(*d));
	if (!d)
		return CH_ERR_RUNTIME;
	json_array_foreach(vals, i, v) {
		double x = jnum(v, "value");
		if (isnan(x))
			continue;
		d[m].v = x;
		d[m].subject = jstr(v, "subject");
		d[m].level = jstr(v, "level");
		if (json_is_integer(json_object_get(v, "rank")) && json_integer_value(json_object_get(v, "rank")) > 0) {
			d[m].rank = (size_t)json_integer_value(json_object_get(v, "rank"));
			if (d[m].rank > ranks)
				ranks = d[m].rank;
		}
		ymin = fmin(ymin, x);
		ymax = fmax(ymax, x);
		m++;
	}
	if (m < 2) {
		free(d);
		return CH_ERR_USAGE;
	}
	qsort(d, m, sizeof(*d), cmp_dv);
	/* a bounded profile keeps the values drawn below, each at its rank
	 * among all the class's values (docs/profile-schema.md) */
	kept = m;
	if (ranks)
		m = ranks;
	if (med > 0) {
		ymin = fmin(ymin, med * (1 - fail_pct / 100));
		ymax = fmax(ymax, med);
	}
	snprintf(title, sizeof(title), "fleet: %s (n=%zu)", jstr(dist, "metric") ? jstr(dist, "metric") : "?", m);
	snprintf(yl, sizeof(yl), "%s", jstr(dist, "unit") ? jstr(dist, "unit") : "");
	{
		double pad = (ymax - ymin) * 0.1 + fabs(ymax) * 0.01;
		viewport(title, "rank (sorted by value)", yl, 0, (double)m + 1, ymin - pad, ymax + pad,
			 "bcnst", "bcnstv");
	}
	if (med > 0) {
		plcol0(C_BLACK);
		plwidth(1.5);
		line2(0, med, (double)m + 1, med);
		label_at(0.2, med, 0.0, "median");
		pllsty(2);
		plcol0(C_ORANGE);
		line2(0, med * (1 - warn_pct / 100), (double)m + 1, med * (1 - warn_pct / 100));
		plcol0(C_RED);
		line2(0, med * (1 - fail_pct / 100), (double)m + 1, med * (1 - fail_pct / 100));
		pllsty(1);
	}
	plwidth(1);
	/* Every outlier is drawn and labelled. Of the others, at most
	 * DIST_MAX_POINTS evenly spaced ranks of the sorted values are drawn
	 * (the first and last included): the quantile curve stays exact to the
	 * plot's resolution while the SVG stays small for a large fleet; past
	 * DIST_SYMBOLS values the curve is one line through them, not a
	 * symbol each. */
	{
		size_t step = m > DIST_MAX_POINTS ? (m + DIST_MAX_POINTS - 1) / DIST_MAX_POINTS : 1, nc = 0;
		double *cx = malloc(kept * sizeof(*cx)), *cy = malloc(kept * sizeof(*cy));
		for (i = 0; i < kept; i++) {
			size_t at = d[i].rank ? d[i].rank - 1 : i; /* its sorted position */
			double x = (double)at + 1, y = d[i].v;
			int out = d[i].level && (!strcmp(d[i].level, "warn") || !strcmp(d[i].level, "fail"));
			if (!out && at % step != 0 && at != m - 1)
				continue;
			if (cx && cy) {
				cx[nc] = x;
				cy[nc++] = y;
			}
			if (!out && m > DIST_SYMBOLS && cx && cy)
				continue;
			plcol0(!out ? C_BLUE : !strcmp(d[i].level, "fail") ? C_RED : C_ORANGE);
			plpoin(1, &x, &y, out ? 5 : 4);
			if (out && d[i].subject)
				label_at(x + 0.3, y, 0.0, d[i].subject);
		}
		if (m > DIST_SYMBOLS && cx && cy && nc >= 2) {
			plcol0(C_BLUE);
			plwidth(1.5);
			plline((PLINT)nc, cx, cy);
			plwidth(1);
		}
		free(cx);
		free(cy);
	}
	free(d);
	return 0;
}

static int run_distribution(const struct plot_args *a)
{
	return distribution_draw(a->json, a->warn, a->fail);
}

int hr_plot_distribution(const json_t *dist, double warn_pct_below,
			 double fail_pct_below, struct hr_svg *out)
{
	struct plot_args a = { .json = dist, .warn = warn_pct_below, .fail = fail_pct_below };
	memset(out, 0, sizeof(*out));
	if (json_array_size(json_object_get(dist, "values")) < 2)
		return CH_ERR_USAGE;
	return plot_run(run_distribution, &a, out);
}

/* ------------------------------------------------------------ power caps */

static int powercap_draw(const json_t *pc)
{
	static const int cols[] = { C_BLUE, C_RED, C_GREEN, C_ORANGE, C_PURPLE, C_BROWN };
	const json_t *models = json_object_get(pc, "models"), *m, *c;
	double xmin = INFINITY, xmax = -INFINITY, ymin = INFINITY, ymax = -INFINITY;
	size_t i, j;
	int any = 0;

	json_array_foreach(models, i, m)
		json_array_foreach(json_object_get(m, "curve"), j, c) {
			double x = jnum(c, "pct_of_default"), a = jnum(c, "perf_pct"), b = jnum(c, "gflop_per_j_pct");
			if (isnan(x))
				continue;
			xmin = fmin(xmin, x);
			xmax = fmax(xmax, x);
			if (!isnan(a)) { ymin = fmin(ymin, a); ymax = fmax(ymax, a); any = 1; }
			if (!isnan(b)) { ymin = fmin(ymin, b); ymax = fmax(ymax, b); any = 1; }
		}
	if (!any)
		return CH_ERR_USAGE;
	viewport("Power caps: GFLOP/s (solid), GFLOP/J (dashed), median per GPU model",
		 "power cap (% of the default limit)", "% of the figure at the default limit",
		 xmin - 3, xmax + 3, ymin - 4, ymax + 6, "bcnst", "bcnstv");
	json_array_foreach(models, i, m) {
		const json_t *curve = json_object_get(m, "curve");
		size_t n = json_array_size(curve), k;
		double *x = calloc(n + 1, sizeof(double)), *y = calloc(n + 1, sizeof(double));
		double rec = jnum(m, "pct_of_default");
		int col = cols[i % 6], pass;
		char lab[160];
		if (!x || !y) {
			free(x);
			free(y);
			return CH_ERR_RUNTIME;
		}
		for (pass = 0; pass < 2; pass++) {
			k = 0;
			json_array_foreach(curve, j, c) {
				double v = jnum(c, pass ? "gflop_per_j_pct" : "perf_pct");
				if (isnan(v) || isnan(jnum(c, "pct_of_default")))
					continue;
				x[k] = jnum(c, "pct_of_default");
				y[k++] = v;
			}
			plcol0(col);
			pllsty(pass ? 3 : 1);
			plwidth(2);
			if (k > 1)
				plline((PLINT)k, x, y);
			plpoin((PLINT)k, x, y, pass ? 5 : 4);
			plwidth(1);
			pllsty(1);
		}
		if (!isnan(rec)) { /* the recommended cap */
			plcol0(col);
			pllsty(2);
			line2(rec, ymin - 4, rec, ymax + 6);
			pllsty(1);
		}
		if (!isnan(jnum(m, "recommended_cap_w")))
			snprintf(lab, sizeof(lab), "%s: recommended %.0f W (%.0f%%, dotted)",
				 jstr(m, "gpu_model") ? jstr(m, "gpu_model") : "?", jnum(m, "recommended_cap_w"), rec);
		else
			snprintf(lab, sizeof(lab), "%s: no recommendation", jstr(m, "gpu_model") ? jstr(m, "gpu_model") : "?");
		legend(xmin - 3, xmax + 3, ymin - 4, ymax + 6, (int)i, col, lab);
		free(x);
		free(y);
	}
	return 0;
}

static int run_powercap(const struct plot_args *a)
{
	return powercap_draw(a->json);
}

int hr_plot_powercap(const json_t *power_caps, struct hr_svg *out)
{
	struct plot_args a = { .json = power_caps };
	return plot_run(run_powercap, &a, out);
}

/* ------------------------------------------------------------ step logs */

/* every rank's window median step time (black) and its own compute (blue;
 * stragglers red), worst first; and the time split as a stacked bar */
static int steps_draw(const json_t *steps)
{
	static const char *const ph[] = { "forward", "backward", "forward+backward", "optimizer", "all-reduce",
					  "input wait" };
	static const int col[] = { C_BLUE, C_PURPLE, C_CYAN, C_OLIVE, C_ORANGE, C_RED };
	const json_t *ranks = json_object_get(steps, "ranks"), *r, *split = json_object_get(steps, "time_split_sec");
	size_t n = json_array_size(ranks), i;
	double ymax = 0, y0, x1;
	int k, have_split = json_is_object(split);

	if (!n)
		return CH_ERR_USAGE;
	json_array_foreach(ranks, i, r) {
		ymax = fmax(ymax, jnum(r, "step_sec") > 0 ? jnum(r, "step_sec") : 0);
		ymax = fmax(ymax, jnum(r, "compute_sec") > 0 ? jnum(r, "compute_sec") : 0);
	}
	if (!(ymax > 0))
		return CH_ERR_USAGE;
	x1 = (double)n - 0.5 + (have_split ? 0.3 * (double)n + 4 : 0);
	viewport("step logs: step per rank (dots), own compute (circles; straggler: x)",
		 "rank, worst first", "seconds per step (window median)", -0.5, x1, 0, ymax * 1.15, "bcst", "bcnstv");
	json_array_foreach(ranks, i, r) {
		double x = (double)i, s = jnum(r, "step_sec"), c = jnum(r, "compute_sec");
		int strag = json_is_true(json_object_get(r, "straggler"));
		if (s > 0) {
			plcol0(C_BLACK);
			plpoin(1, &x, &s, 17);
		}
		if (c > 0) {
			plcol0(strag ? C_RED : C_BLUE);
			plpoin(1, &x, &c, strag ? 5 : 4);
		}
	}
	if (have_split) {
		/* the mean split, stacked at the right, each part named beside it */
		double w = 0.05 * (double)n + 0.6, bx = (double)n + w + 0.5;
		y0 = 0;
		for (k = 0; k < 6; k++) {
			double v = jnum(split, ph[k]);
			if (!(v > 0) || (k == 2 && jnum(split, "forward") > 0))
				continue;
			{
				double fx[4] = { bx - w, bx + w, bx + w, bx - w };
				double fy[4] = { y0, y0, y0 + v, y0 + v };
				plcol0(col[k]);
				plfill(4, fx, fy);
				plcol0(C_BLACK);
				plline(4, fx, fy);
				plcol0(col[k]);
				label_at(bx + 1.4 * w, y0 + v / 2, 0.0, ph[k]);
			}
			y0 += v;
		}
		plcol0(C_BLACK);
		label_at(bx, ymax * 1.08, 0.5, "mean split");
	}
	return 0;
}

static int run_steps(const struct plot_args *a)
{
	return steps_draw(a->json);
}

int hr_plot_steps(const json_t *steps, struct hr_svg *out)
{
	struct plot_args a = { .json = steps };
	return plot_run(run_steps, &a, out);
}
