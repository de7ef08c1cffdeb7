/*
 * ch_kmsg.c - kernel-log fault lines and the Xid table (ch_kmsg.h).
 */
#include "hw/ch_kmsg.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/ch_common.h"

/*
 * The built-in table. Source: NVIDIA, "Xid Errors", the Xid catalog
 * (https://docs.nvidia.com/deploy/xid-errors/analyzing-xid-catalog.html):
 * mnemonic, description and the immediate-action resolution bucket of
 * each code; the tool's action follows the bucket (docs/xid.md):
 * RESTART_APP and IGNORE inform, RESET_GPU resets, RESTART_BM reboots,
 * CONTACT_SUPPORT and the NVLink workflow drain.
 */
static const struct ch_xid_class builtin[] = {
	{ 8, "ROBUST_CHANNEL_FIFO_ERROR_IDLE_TIMEOUT", "GPU stopped processing", "RESTART_APP", CH_KA_INFORM, 0, 0 },
	{ 13, "ROBUST_CHANNEL_GR_EXCEPTION", "graphics engine exception (an application's fault)", "RESTART_APP", CH_KA_INFORM, 0, 0 },
	{ 31, "ROBUST_CHANNEL_FIFO_ERROR_MMU_ERR_FLT", "GPU memory page fault (an application's fault)", "RESTART_APP", CH_KA_INFORM, 0, 0 },
	{ 32, "ROBUST_CHANNEL_PBDMA_ERROR", "invalid or corrupted push buffer stream", "RESTART_APP", CH_KA_INFORM, 0, 0 },
	{ 43, "ROBUST_CHANNEL_RESETCHANNEL_VERIF_ERROR", "GPU stopped processing (an application's fault)", "RESTART_APP", CH_KA_INFORM, 0, 0 },
	{ 45, "ROBUST_CHANNEL_PREEMPTIVE_REMOVAL", "preemptive cleanup, due to previous errors", "IGNORE", CH_KA_INFORM, 0, 0 },
	{ 48, "ROBUST_CHANNEL_DBE", "double bit ECC error", "RESET_GPU", CH_KA_DRAIN, 1, 0 },
	{ 61, "PMU_BREAKPOINT", "internal micro-controller breakpoint/warning", "RESET_GPU", CH_KA_RESET, 1, 0 },
	{ 62, "PMU_HALT_ERROR", "internal micro-controller halt", "RESET_GPU", CH_KA_RESET, 1, 0 },
	{ 63, "ROBUST_CHANNEL_ECC_PAGE_RETIREMENT_OR_ROW_REMAP", "ECC page retirement or row remapping recording event", "RESET_GPU", CH_KA_RESET, 1, 0 },
	{ 64, "ROBUST_CHANNEL_ECC_PAGE_RETIREMENT_OR_ROW_REMAP_FAILURE", "ECC page retirement or row remapper recording failure", "CONTACT_SUPPORT", CH_KA_DRAIN, 1, 0 },
	{ 74, "NVLINK_ERROR", "NVLink error", "WORKFLOW_NVLINK_ERR", CH_KA_DRAIN, 1, 0 },
	{ 79, "GPU_HAS_FALLEN_OFF_THE_BUS", "fallen off the bus", "RESTART_BM", CH_KA_REBOOT, 1, 0 },
	{ 92, "EXCESSIVE_SBE_INTERRUPTS", "high single-bit ECC error rate", "IGNORE", CH_KA_INFORM, 1, 0 },
	{ 94, "ROBUST_CHANNEL_CONTAINED_ERROR", "contained ECC error", "RESTART_APP", CH_KA_INFORM, 1, 0 },
	{ 95, "ROBUST_CHANNEL_UNCONTAINED_ERROR", "uncontained ECC error", "RESET_GPU", CH_KA_RESET, 1, 0 },
	{ 109, "ROBUST_CHANNEL_CTXSW_TIMEOUT_ERROR", "context switch timeout", "RESTART_APP", CH_KA_INFORM, 0, 0 },
	{ 119, "GSP_RPC_TIMEOUT", "GSP RPC timeout", "RESET_GPU", CH_KA_RESET, 1, 0 },
	{ 120, "GSP_ERROR", "GSP error", "RESET_GPU", CH_KA_RESET, 1, 0 },
	{ 121, "C2C_LINK_CORRECTED_ERROR", "C2C link corrected error", "IGNORE", CH_KA_INFORM, 1, 0 },
	{ 140, "ECC_UNRECOVERABLE_ERROR", "unrecovered ECC error", "RESET_GPU", CH_KA_RESET, 1, 0 },
	{ 154, "GPU_RECOVERY_ACTION_CHANGED", "GPU recovery action changed (a reset or reboot is required)", "RESET_GPU", CH_KA_RESET, 1, 0 },
};

const struct ch_xid_class *ch_xid_builtin(size_t *n)
{
	*n = sizeof(builtin) / sizeof(builtin[0]);
	return builtin;
}

void ch_kmsg_parser_init(struct ch_kmsg_parser *p)
{
	memset(p, 0, sizeof(*p));
}

static int hexn(const char *s, int n)
{
	for (int i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return 0;
	return 1;
}

int ch_kmsg_bus_norm(const char *in, char *out, size_t n)
{
	/* [dddd[dddd]:]bb:dd[.f] */
	const char *s = in;
	char dom[5] = "0000";
	size_t len;

	if (n < 16)
		return -1;
	out[0] = 0;
	if (!strncmp(s, "PCI:", 4))
		s += 4;
	len = strspn(s, "0123456789abcdefABCDEF");
	if (s[len] == ':' && (len == 4 || len == 8)) {
		memcpy(dom, s + len - 4, 4);
		s += len + 1;
	}
	if (!hexn(s, 2) || s[2] != ':' || !hexn(s + 3, 2))
		return -1;
	char fn = '0';
	if (s[5] == '.') {
		if (!isxdigit((unsigned char)s[6]) || isxdigit((unsigned char)s[7]))
			return -1;
		fn = s[6];
	} else if (isxdigit((unsigned char)s[5])) {
		return -1;
	}
	snprintf(out, n, "%.4s:%.2s:%.2s.%c", dom, s, s + 3, fn);
	for (char *c = out; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	return 0;
}

/* the first bus id in @s, normalised, into @out (16 bytes); -1 none */
static int find_bus(const char *s, char *out)
{
	for (const char *c = s; *c; c++) {
		if ((c == s || !isxdigit((unsigned char)c[-1])) && isxdigit((unsigned char)*c) &&
		    ch_kmsg_bus_norm(c, out, 16) == 0 && (c[2] == ':' || c[4] == ':' || c[8] == ':'))
			return 0;
	}
	out[0] = 0;
	return -1;
}

static const char *const months[] = { "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" };

static const char *const wdays[] = { "Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat" };

/* the index of the 3-letter name @s in @names (@n of them), -1 none */
static int name_at(const char *s, const char *const *names, int n)
{
	for (int i = 0; i < n; i++)
		if (!strncmp(s, names[i], 3))
			return i;
	return -1;
}

/* the days of month @mo (1-12) of year @y (y 0: a year unknown, February 29 days) */
static int month_days(int y, int mo)
{
	static const int d[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	if (mo != 2)
		return d[mo - 1];
	return y == 0 || (y % 4 == 0 && (y % 100 != 0 || y % 400 == 0)) ? 29 : 28;
}

/* a date and time a clock can show: year from 1970 (0: unknown), the day
 * within its month (no February 30), hour 0-23, minute 0-59, second 0-60 */
static int date_ok(int y, int mo, int d, int h, int mi, int sec)
{
	return (y == 0 || y >= 1970) && mo >= 1 && mo <= 12 && d >= 1 && d <= month_days(y, mo) && h >= 0 &&
	       h <= 23 && mi >= 0 && mi <= 59 && sec >= 0 && sec <= 60;
}

/* an ISO date-time "YYYY-MM-DDTHH:MM:SS[,.frac][Z|+hh[:]mm]" at @s: its
 * epoch seconds into *t; returns the characters read, 0 when not one */
static int parse_iso(const char *s, double *t)
{
	struct tm tm = { 0 };
	int y, mo, d, h, mi, sec, used = 0, zh = 0, zm = 0;
	double frac = 0;
	char sign = 0;

	if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec, &used) != 6 || used != 19)
		return 0;
	/* a time stamp whose fields are out of range: read, and impossible (NAN) */
	int impossible = !date_ok(y, mo, d, h, mi, sec);
	if (s[used] == ',' || s[used] == '.') {
		int k = used + 1;
		double scale = 0.1;
		while (isdigit((unsigned char)s[k])) {
			frac += (s[k] - '0') * scale;
			scale /= 10;
			k++;
		}
		used = k;
	}
	if (s[used] == 'Z') {
		used++;
	} else if (s[used] == '+' || s[used] == '-') {
		sign = s[used];
		if (isdigit((unsigned char)s[used + 1]) && isdigit((unsigned char)s[used + 2])) {
			zh = (s[used + 1] - '0') * 10 + (s[used + 2] - '0');
			used += 3;
			if (s[used] == ':')
				used++;
			if (isdigit((unsigned char)s[used]) && isdigit((unsigned char)s[used + 1])) {
				zm = (s[used] - '0') * 10 + (s[used + 1] - '0');
				used += 2;
			}
		}
	}
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	*t = (double)timegm(&tm) + frac - (sign == '-' ? -1 : 1) * (sign ? zh * 3600 + zm * 60 : 0);
	if (impossible || zh > 23 || zm > 59)
		*t = NAN;
	return used;
}

static void set_clock(struct ch_kfault *f)
{
	if (isnan(f->wall_sec))
		return;
	time_t t = (time_t)f->wall_sec;
	struct tm tm;
	gmtime_r(&t, &tm);
	snprintf(f->clock, sizeof(f->clock), "%02d:%02d:%02d", tm.tm_hour, tm.tm_min, tm.tm_sec);
	snprintf(f->zone, sizeof(f->zone), "UTC");
}

/* a time since boot that no kernel wrote: negative, not a number, or over
 * CH_KMSG_MAX_UPTIME */
static int bad_uptime(double t)
{
	return !(t >= 0 && t <= CH_KMSG_MAX_UPTIME);
}

/* dmesg -T: "[Sun Dec  6 02:14:07 2026]" (local time) at @s: its epoch
 * seconds into *t (NAN when the date or time cannot be: "Feb 30",
 * "25:14:07"); returns the characters read, 0 when not one */
static int parse_ctime(const char *s, double *t)
{
	char wd[4], mon[4];
	int d, h, mi, sec, y, used = 0, mo;
	struct tm tm = { 0 };

	if (sscanf(s, "[%3[A-Za-z] %3[A-Za-z] %d %d:%d:%d %d]%n", wd, mon, &d, &h, &mi, &sec, &y, &used) != 7 ||
	    used == 0 || name_at(wd, wdays, 7) < 0 || (mo = name_at(mon, months, 12)) < 0)
		return 0;
	if (!date_ok(y, mo + 1, d, h, mi, sec)) {
		*t = NAN;
		return used;
	}
	tm.tm_year = y - 1900;
	tm.tm_mon = mo;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	tm.tm_isdst = -1;
	*t = (double)mktime(&tm);
	return used;
}

/* the offset from UTC of the zone @z (seconds east) into *off: "UTC",
 * "GMT", "Z", "+HH", "+HHMM", "+HH:MM", or this machine's zone name
 * (tzname) at the local time @tm (its tm_isdst set); 0, or -1 unknown */
static int zone_offset(const char *z, struct tm *tm, double *off)
{
	int hh, mm = 0, n = 0;
	if (!strcmp(z, "UTC") || !strcmp(z, "GMT") || !strcmp(z, "Z")) {
		*off = 0;
		return 0;
	}
	if ((z[0] == '+' || z[0] == '-') && isdigit((unsigned char)z[1]) && isdigit((unsigned char)z[2])) {
		hh = (z[1] - '0') * 10 + (z[2] - '0');
		if (z[3] && sscanf(z + 3, ":%2d%n", &mm, &n) != 1 && sscanf(z + 3, "%2d%n", &mm, &n) != 1)
			return -1;
		if (z[3 + n] || hh > 23 || mm > 59)
			return -1;
		*off = (z[0] == '-' ? -1 : 1) * (hh * 3600.0 + mm * 60.0);
		return 0;
	}
	tzset();
	for (int i = 0; i < 2; i++)
		if (tzname[i] && !strcmp(z, tzname[i])) {
			struct tm c = *tm;
			c.tm_isdst = i;
			time_t local = mktime(&c);
			*off = (double)timegm(tm) - (double)local;
			return 0;
		}
	return -1;
}

/* journalctl -o short-full: "Sun 2026-12-06 02:14:07 UTC " at @s: the
 * wall time into @f (the zone unknown to this machine: the time of day and
 * zone kept, the wall time unknown); returns the characters read, 0 when
 * not one */
static int parse_full(const char *s, struct ch_kfault *f)
{
	char wd[4], zone[16];
	int y, mo, d, h, mi, sec, used = 0;
	struct tm tm = { 0 };
	double off;

	if (sscanf(s, "%3[A-Za-z] %4d-%2d-%2d %2d:%2d:%2d %15[^ ]%n", wd, &y, &mo, &d, &h, &mi, &sec, zone, &used) != 8 ||
	    used < 24 || s[3] != ' ' || name_at(wd, wdays, 7) < 0 || s[used] != ' ')
		return 0;
	if (!date_ok(y, mo, d, h, mi, sec)) {
		f->bad_time = 1;
		return used;
	}
	tm.tm_year = y - 1900;
	tm.tm_mon = mo - 1;
	tm.tm_mday = d;
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	snprintf(f->clock, sizeof(f->clock), "%02d:%02d:%02d", h, mi, sec);
	snprintf(f->zone, sizeof(f->zone), "%s", zone);
	if (zone_offset(zone, &tm, &off) == 0)
		f->wall_sec = (double)timegm(&tm) - off;
	return used;
}

/* a yearless local stamp's time, its zone named only for a fault line
 * (the zone's look-up costs more than reading a line) */
struct local_stamp {
	int set, mo, d, h, mi, sec;
};

/* this machine's zone name at month @mo (0-11; -1 today's) and day @d of
 * this year, time @h:@mi:@sec, into f->zone: the zone a yearless local
 * stamp was written in, when this machine wrote it */
static void local_zone(struct ch_kfault *f, int mo, int d, int h, int mi, int sec)
{
	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	if (mo >= 0) {
		tm.tm_mon = mo;
		tm.tm_mday = d;
	}
	tm.tm_hour = h;
	tm.tm_min = mi;
	tm.tm_sec = sec;
	tm.tm_isdst = -1;
	mktime(&tm);
	if (!strftime(f->zone, sizeof(f->zone), "%Z", &tm))
		snprintf(f->zone, sizeof(f->zone), "local time");
}

/* journalctl -o short / short-precise, syslog: "Dec 06 02:14:07[.123456] "
 * at @s (no year; this machine's local time): the time of day and zone
 * into @f; returns the characters read, 0 when not one */
static int parse_short(const char *s, struct ch_kfault *f, struct local_stamp *z)
{
	char mon[4];
	int d, h, mi, sec, used = 0, mo;

	if (sscanf(s, "%3[A-Za-z] %2d %2d:%2d:%2d%n", mon, &d, &h, &mi, &sec, &used) != 5 || used < 14 || s[3] != ' ' ||
	    (mo = name_at(mon, months, 12)) < 0)
		return 0;
	if (s[used] == '.' && isdigit((unsigned char)s[used + 1]))
		for (used++; isdigit((unsigned char)s[used]); used++)
			;
	if (s[used] != ' ')
		return 0;
	if (!date_ok(0, mo + 1, d, h, mi, sec)) {
		f->bad_time = 1;
		return used;
	}
	snprintf(f->clock, sizeof(f->clock), "%02d:%02d:%02d", h, mi, sec);
	*z = (struct local_stamp){ 1, mo, d, h, mi, sec };
	return used;
}

/* a time stamp in another language's words (dmesg -T, journalctl's
 * default under e.g. LANG=de_DE: "[So Dez  6 02:14:07 2026]", "Dez 06
 * 02:14:07"): one to four words without ':' before "HH:MM:SS[.frac]" (in
 * brackets, a year after it); the time of day kept, the date unknown;
 * returns the characters read, 0 when not one */
static int parse_foreign(const char *s, struct ch_kfault *f, struct local_stamp *z)
{
	const char *p = s + (*s == '[');
	int h, mi, sec, n;

	for (int w = 0; w < 5; w++) {
		while (*p == ' ')
			p++;
		n = 0;
		if (w > 0 && isdigit((unsigned char)p[0]) && isdigit((unsigned char)p[1]) &&
		    sscanf(p, "%2d:%2d:%2d%n", &h, &mi, &sec, &n) == 3 && n == 8) {
			p += n;
			if (*p == '.' && isdigit((unsigned char)p[1]))
				for (p++; isdigit((unsigned char)*p); p++)
					;
			if (*s == '[') {
				while (*p == ' ')
					p++;
				while (isdigit((unsigned char)*p))
					p++;
				if (*p++ != ']')
					return 0;
			}
			if (*p != ' ')
				return 0;
			if (!date_ok(0, 1, 1, h, mi, sec)) {
				f->bad_time = 1;
			} else {
				snprintf(f->clock, sizeof(f->clock), "%02d:%02d:%02d", h, mi, sec);
				*z = (struct local_stamp){ 1, -1, 0, h, mi, sec };
			}
			return (int)(p - s);
		}
		size_t k = strcspn(p, " :[]");
		if (k == 0 || p[k] != ' ')
			return 0;
		p += k;
	}
	return 0;
}

/* "[ 1843.308145]" (dmesg, journalctl -o short-monotonic) at @s: the
 * seconds since boot into @f; returns the characters read, 0 when not one */
static int parse_uptime(const char *s, struct ch_kfault *f)
{
	double t;
	int used = 0;
	if (*s != '[' || sscanf(s + 1, "%lf]%n", &t, &used) != 1 || used == 0)
		return 0;
	f->boot_sec = t;
	f->bad_time |= bad_uptime(t);
	return 1 + used;
}

/* the message of @line past its prefixes; times into @f (an impossible one:
 * f->bad_time) */
static const char *strip_prefix(const char *s, struct ch_kfault *f, struct local_stamp *z)
{
	int used, a, b, c;
	double t;

	/* dmesg -x: "kern  :err   : " */
	if (!strncmp(s, "kern ", 5) && strchr(s, ':')) {
		const char *q = strchr(s, ':');
		q = strchr(q + 1, ':');
		if (q)
			s = q + 1;
		while (*s == ' ')
			s++;
	}
	/* /dev/kmsg: "prio,seq,usec,flags;" */
	if (sscanf(s, "%d,%d,%d%n", &a, &b, &c, &used) == 3) {
		unsigned long long us;
		const char *semi = strchr(s, ';');
		if (semi && sscanf(s, "%*d,%*u,%llu", &us) == 1) {
			f->boot_sec = (double)us / 1e6;
			int k = 0;
			sscanf(s, "%*d,%*u,%n", &k);
			while (s[k] == ' ')
				k++;
			if (s[k] == '-' || bad_uptime(f->boot_sec)) /* "-5": strtoull wraps it */
				f->bad_time = 1;
			return semi + 1;
		}
	}
	if ((used = parse_iso(s, &t)) > 0 || (used = parse_ctime(s, &t)) > 0) {
		f->wall_sec = t;
		f->bad_time |= !isfinite(t) || t < 0;
		s += used;
	} else if (isdigit((unsigned char)s[0]) && sscanf(s, "%lf%n", &t, &used) == 1 && s[used] == ' ' && t > 1e8) {
		f->wall_sec = t; /* journalctl -o short-unix */
		s += used;
	} else if ((used = parse_full(s, f)) > 0 || (used = parse_short(s, f, z)) > 0 || (used = parse_uptime(s, f)) > 0 ||
		   (used = parse_foreign(s, f, z)) > 0) {
		s += used; /* short-full; short, short-precise, syslog; dmesg, short-monotonic; another language's */
	}
	while (*s == ' ')
		s++;
	/* "HOST kernel: " */
	const char *k = strstr(s, " kernel: ");
	if (k && memchr(s, ' ', (size_t)(k - s)) == NULL)
		s = k + 9;
	else if (!strncmp(s, "kernel: ", 8))
		s += 8;
	while (*s == ' ')
		s++;
	/* the kernel's own "[seconds since boot]" after a syslog prefix */
	if ((used = parse_uptime(s, f)) > 0)
		s += used;
	while (*s == ' ')
		s++;
	return s;
}

/* the length of the UTF-8 character at @s (1-4), 0 when @s holds no whole
 * valid one (a stray continuation byte, an overlong form, a surrogate, a
 * code point past U+10FFFF, a sequence cut short) */
static int utf8_len(const unsigned char *s)
{
	int n;
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4;
	else
		return 0;
	for (int i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] > 0x9f) || (s[0] == 0xf0 && s[1] < 0x90) ||
	    (s[0] == 0xf4 && s[1] > 0x8f))
		return 0;
	return n;
}

void ch_kmsg_text_clean(char *s)
{
	unsigned char *u = (unsigned char *)s;
	while (*u) {
		int n = utf8_len(u);
		if (n == 0 || *u < 0x20 || *u == 0x7f) {
			*u++ = '?';
			continue;
		}
		u += n;
	}
}

static void set_text(struct ch_kfault *f, const char *msg)
{
	size_t i = 0;
	for (; msg[i] && msg[i] != '\n' && i + 1 < sizeof(f->text); i++)
		f->text[i] = msg[i];
	f->text[i] = 0;
	ch_kmsg_text_clean(f->text);
	while (i > 0 && f->text[i - 1] == ' ')
		f->text[--i] = 0;
}

/* "PREFIX (PCI:BUS): CODE," at @m */
static int xid_code(const char *m, const char *key, char *bus, int *code)
{
	const char *p = strstr(m, key);
	if (!p)
		return 0;
	p += strlen(key);
	while (*p == ' ')
		p++;
	if (*p != '(')
		return 0;
	const char *close = strchr(p, ')');
	if (!close || close - p > 40)
		return 0;
	char inner[48];
	snprintf(inner, sizeof(inner), "%.*s", (int)(close - p - 1), p + 1);
	if (ch_kmsg_bus_norm(inner, bus, 16) != 0)
		bus[0] = 0;
	p = close + 1;
	if (*p == ':')
		p++;
	while (*p == ' ')
		p++;
	char *end;
	long v = strtol(p, &end, 10);
	if (end == p || v < 0 || v > 1000000)
		return 0;
	*code = (int)v;
	return 1;
}

/* "nvidia-nvswitchN: SXid" at the start of @m: its "SXid", else NULL */
static const char *sxid_at(const char *m)
{
	if (strncmp(m, "nvidia-nvswitch", 15))
		return NULL;
	m += 15;
	while (isdigit((unsigned char)*m))
		m++;
	return !strncmp(m, ": SXid", 6) ? m + 2 : NULL;
}

/* Each message is recognised at the message's start only (past the
 * prefixes), so that a line quoting one (a user's echo, a log of a log)
 * is no fault. */
static int parse_nvidia(struct ch_kmsg_parser *p, const char *m, struct ch_kfault *f)
{
	const char *sx = sxid_at(m);
	if (!strncmp(m, "NVRM: Xid", 9) && xid_code(m, "NVRM: Xid", f->bus_id, &f->code)) {
		f->kind = CH_KF_XID;
		return 1;
	}
	if (sx && xid_code(sx, "SXid", f->bus_id, &f->code)) {
		const char *rest = strchr(sx, ')');
		rest = rest ? strchr(rest, ',') : NULL;
		rest = rest ? rest + 1 : "";
		while (*rest == ' ')
			rest++;
		/* the follow-up lines of one SXid: not counted again */
		if (!strncmp(rest, "Data {", 6) || !strncmp(rest, "Severity", 8))
			return 0;
		f->kind = CH_KF_SXID;
		return 1;
	}
	if (!strncmp(m, "NVRM: The NVIDIA GPU ", 21)) {
		find_bus(m + 21, p->off_bus_id);
		return 0;
	}
	if (!strncmp(m, "NVRM: ", 6) && strstr(m, "fallen off the bus")) {
		if (find_bus(m, f->bus_id) != 0)
			snprintf(f->bus_id, sizeof(f->bus_id), "%s", p->off_bus_id);
		p->off_bus_id[0] = 0;
		f->kind = CH_KF_XID;
		f->code = 79;
		return 1;
	}
	return 0;
}

static int parse_aer(struct ch_kmsg_parser *p, const char *m, struct ch_kfault *f)
{
	const char *r = strstr(m, "AER:");
	if (r && strstr(r, "received")) {
		const char *from = strstr(r, " from ");
		if (!from || find_bus(from + 6, p->aer_from) != 0)
			p->aer_from[0] = 0;
		return 0;
	}
	const char *e = strstr(m, "PCIe Bus Error: severity=");
	if (!e)
		return 0;
	f->kind = CH_KF_AER;
	e += strlen("PCIe Bus Error: severity=");
	f->code = !strncmp(e, "Corrected", 9) || !strncmp(e, "Correctable", 11) ? 0
		: strstr(e, "Non-Fatal") || strstr(e, "Nonfatal") ? 1 : 2;
	if (p->aer_from[0])
		snprintf(f->bus_id, sizeof(f->bus_id), "%s", p->aer_from);
	else
		find_bus(m, f->bus_id);
	p->aer_from[0] = 0;
	return 1;
}

static int parse_mlx5(const char *m, struct ch_kfault *f)
{
	if (strncmp(m, "mlx5_core ", 10))
		return 0;
	if (strstr(m, "Link down") || strstr(m, "Link DOWN"))
		f->kind = CH_KF_LINK_DOWN;
	else if (strstr(m, "Link up") || strstr(m, "Link ACTIVE"))
		f->kind = CH_KF_LINK_UP;
	else
		return 0;
	find_bus(m + 10, f->bus_id);
	return 1;
}

int ch_kmsg_parse_line(struct ch_kmsg_parser *p, const char *line, struct ch_kfault *f)
{
	struct ch_kfault t;
	struct local_stamp z = { 0 };
	memset(&t, 0, sizeof(t));
	t.boot_sec = NAN;
	t.wall_sec = NAN;
	const char *m = strip_prefix(line, &t, &z);
	if (!parse_nvidia(p, m, &t) && !parse_aer(p, m, &t) && !parse_mlx5(m, &t))
		return 0;
	set_text(&t, m);
	set_clock(&t);
	if (z.set)
		local_zone(&t, z.mo, z.d, z.h, z.mi, z.sec);
	*f = t;
	return 1;
}

/* ---- the table */

static int action_from(const char *s, enum ch_kaction *a)
{
	static const char *const names[] = { "none", "inform", "reset", "drain", "reboot" };
	for (int i = 1; i < 5; i++)
		if (!strcmp(s, names[i])) {
			*a = (enum ch_kaction)i;
			return 0;
		}
	return -1;
}

const char *ch_kaction_name(enum ch_kaction a)
{
	static const char *const names[] = { "none", "inform", "reset", "drain", "reboot" };
	return (unsigned)a < 5 ? names[a] : "?";
}

const char *ch_kfault_kind_name(enum ch_kfault_kind k)
{
	static const char *const names[] = { "xid", "sxid", "aer", "link_down", "link_up" };
	return (unsigned)k < 5 ? names[k] : "?";
}

/* Codes of a table are 0 to CH_XID_CODE_MAX (a user row's bound): @at[code]
 * is the row's index + 1 in the table being built, 0 none; rows grow by
 * doubling (@cap), so a table of N rows loads in O(N). */
#define CH_XID_CODE_MAX 1000000

struct table_build {
	struct ch_xid_table *t;
	size_t cap;
	int *at;   /* CH_XID_CODE_MAX + 1 entries */
	int *line; /* per code, the user table's line that gave it, 0 none */
};

static int table_put(struct table_build *b, const struct ch_xid_class *c)
{
	struct ch_xid_table *t = b->t;
	if (c->code < 0 || c->code > CH_XID_CODE_MAX)
		return CH_ERR_RUNTIME; /* the built-in table and user_row() never give one */
	if (b->at[c->code]) {
		t->rows[b->at[c->code] - 1] = *c;
		return 0;
	}
	if (t->n == b->cap) {
		size_t cap = b->cap ? 2 * b->cap : 256;
		struct ch_xid_class *r = realloc(t->rows, cap * sizeof(*r));
		if (!r)
			return CH_ERR_RUNTIME;
		t->rows = r;
		b->cap = cap;
	}
	t->rows[t->n++] = *c;
	b->at[c->code] = (int)t->n;
	return 0;
}

/* one line of a user table into @c; 1 a row, 0 a comment or empty, -1 bad */
static int user_row(char *line, struct ch_xid_class *c, char *why, size_t n)
{
	char *f[4] = { 0 }, *end, *p = line;
	int k = 0;

	line[strcspn(line, "\r\n")] = 0;
	/* blank: spaces only (a line with a TAB is a row, its fields checked);
	 * a comment: '#' first after spaces and TABs */
	if (!line[strspn(line, " ")] || line[strspn(line, " \t")] == '#')
		return 0;
	/* every TAB separates: an empty field or a fifth one is an error, not
	 * a row read shifted */
	for (;;) {
		char *tab = strchr(p, '\t');
		if (k == 4) {
			snprintf(why, n, "expected 4 TAB-separated fields (CODE ACTION MNEMONIC MEANING), found more");
			return -1;
		}
		f[k++] = p;
		if (!tab)
			break;
		*tab = 0;
		p = tab + 1;
	}
	if (k < 4) {
		snprintf(why, n, "expected 4 TAB-separated fields (CODE ACTION MNEMONIC MEANING), found %d", k);
		return -1;
	}
	memset(c, 0, sizeof(*c));
	errno = 0;
	long v = strtol(f[0], &end, 10);
	if (*end || end == f[0] || !isdigit((unsigned char)f[0][0]) || errno || v < 0 || v > 1000000) {
		snprintf(why, n, "invalid code '%.40s' (expected a whole number, 0 to 1000000)", f[0]);
		return -1;
	}
	c->code = (int)v;
	if (action_from(f[1], &c->action) != 0) {
		snprintf(why, n, "invalid action '%.40s' (expected inform, reset, drain or reboot)", f[1]);
		return -1;
	}
	if (!f[2][0] || !f[3][0] || strlen(f[2]) >= sizeof(c->mnemonic) || strlen(f[3]) >= sizeof(c->meaning)) {
		snprintf(why, n, "MNEMONIC and MEANING must not be empty, at most %zu and %zu characters",
			 sizeof(c->mnemonic) - 1, sizeof(c->meaning) - 1);
		return -1;
	}
	snprintf(c->mnemonic, sizeof(c->mnemonic), "%s", f[2]);
	snprintf(c->meaning, sizeof(c->meaning), "%s", f[3]);
	ch_kmsg_text_clean(c->mnemonic);
	ch_kmsg_text_clean(c->meaning);
	snprintf(c->nvidia, sizeof(c->nvidia), "(user table)");
	c->hardware = c->action != CH_KA_INFORM;
	c->user = 1;
	return 1;
}

/* the rows of the user table @fp (@path) into @t; a bad row, a code given
 * twice: CH_ERR_USAGE with @why naming the file and line */
static int user_table(struct table_build *b, FILE *fp, const char *path, char *why, size_t n)
{
	char *line = NULL, msg[160];
	size_t cap = 0;
	ssize_t len;
	int ln = 0, rc = 0;
	struct ch_xid_class c;

	while (rc == 0 && (len = getline(&line, &cap, fp)) >= 0) {
		ln++;
		int r = len > 4096 ? (snprintf(msg, sizeof(msg), "a line over 4096 characters"), -1)
			: memchr(line, 0, (size_t)len) ? (snprintf(msg, sizeof(msg), "a NUL byte in the line (not a text file?)"), -1)
						     : user_row(line, &c, msg, sizeof(msg));
		if (r > 0 && b->line[c.code]) {
			snprintf(msg, sizeof(msg), "code %d given twice (also line %d)", c.code, b->line[c.code]);
			r = -1;
		}
		if (r < 0) {
			snprintf(why, n, "the Xid table '%s', line %d: %s", path, ln, msg);
			rc = CH_ERR_USAGE;
		} else if (r > 0) {
			b->line[c.code] = ln;
			rc = table_put(b, &c);
		}
	}
	if (rc == 0 && ferror(fp)) {
		snprintf(why, n, "cannot read the Xid table '%s': a read error", path);
		rc = CH_ERR_RUNTIME;
	}
	free(line);
	return rc;
}

int ch_xid_table_load(struct ch_xid_table *t, const char *path, char *why, size_t n)
{
	size_t nb;
	const struct ch_xid_class *b = ch_xid_builtin(&nb);
	struct table_build tb = { .t = t };
	int rc = 0;

	t->rows = NULL;
	t->n = 0;
	if (n)
		why[0] = 0;
	tb.at = calloc(CH_XID_CODE_MAX + 1, sizeof(*tb.at));
	tb.line = path ? calloc(CH_XID_CODE_MAX + 1, sizeof(*tb.line)) : NULL;
	if (!tb.at || (path && !tb.line))
		rc = CH_ERR_RUNTIME;
	for (size_t i = 0; i < nb && rc == 0; i++)
		rc = table_put(&tb, &b[i]);
	if (rc == 0 && path) {
		/* a regular file only: /dev/zero or a FIFO would never end (or
		 * block the open), so the open does not block and the type is
		 * checked before a line is read */
		struct stat st;
		int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
		FILE *fp = NULL;
		if (fd >= 0 && (fstat(fd, &st) || !S_ISREG(st.st_mode))) {
			snprintf(why, n, "the Xid table '%s' is not a regular file", path);
			close(fd);
			ch_xid_table_free(t);
			free(tb.at);
			free(tb.line);
			return CH_ERR_USAGE;
		}
		if (fd >= 0 && !(fp = fdopen(fd, "r")))
			close(fd);
		if (!fp) {
			snprintf(why, n, "cannot read the Xid table '%s': %s", path, strerror(errno));
			ch_xid_table_free(t);
			free(tb.at);
			free(tb.line);
			return CH_ERR_RUNTIME;
		}
		rc = user_table(&tb, fp, path, why, n);
		fclose(fp);
	}
	free(tb.at);
	free(tb.line);
	if (rc == CH_ERR_RUNTIME && why[0] == 0)
		snprintf(why, n, "out of memory");
	if (rc != 0)
		ch_xid_table_free(t);
	return rc;
}

void ch_xid_table_free(struct ch_xid_table *t)
{
	if (!t)
		return;
	free(t->rows);
	t->rows = NULL;
	t->n = 0;
}

const struct ch_xid_class *ch_xid_lookup(const struct ch_xid_table *t, int code)
{
	for (size_t i = 0; t && i < t->n; i++)
		if (t->rows[i].code == code)
			return &t->rows[i];
	return NULL;
}

enum ch_kaction ch_kfault_action(const struct ch_xid_table *t, const struct ch_kfault *f)
{
	const struct ch_xid_class *c;

	switch (f->kind) {
	case CH_KF_XID:
		c = ch_xid_lookup(t, f->code);
		return c ? c->action : CH_KA_INFORM;
	case CH_KF_SXID:
		return strstr(f->text, "Non-fatal") || strstr(f->text, "Nonfatal") || !strstr(f->text, "atal")
			? CH_KA_INFORM : CH_KA_DRAIN;
	case CH_KF_AER:
		return f->code == 2 ? CH_KA_DRAIN : CH_KA_INFORM;
	case CH_KF_LINK_DOWN:
		return CH_KA_INFORM;
	default:
		return CH_KA_NONE;
	}
}
