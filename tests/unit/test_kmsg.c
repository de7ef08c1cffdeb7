/*
 * hw/ch_kmsg.h: kernel-log fault lines in every format read (dmesg,
 * /dev/kmsg, journalctl short-iso / short-unix / default, dmesg -x), the
 * fixtures of tests/data/kernel-log (real-format lines, sources in its
 * README), bus ids, and the Xid table with a user's file.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "base/ch_common.h"
#include "hw/ch_kmsg.h"

#define KLOG "tests/data/kernel-log/"

static int one(const char *line, struct ch_kfault *f)
{
	struct ch_kmsg_parser p;
	ch_kmsg_parser_init(&p);
	return ch_kmsg_parse_line(&p, line, f);
}

/* every fault of FILE, at most @max */
static int read_all(const char *path, struct ch_kfault *out, int max)
{
	FILE *fp = fopen(path, "r");
	char line[1024];
	struct ch_kmsg_parser p;
	int n = 0;

	cr_assert_not_null(fp, "%s", path);
	ch_kmsg_parser_init(&p);
	while (fgets(line, sizeof(line), fp))
		if (n < max && ch_kmsg_parse_line(&p, line, &out[n]))
			n++;
	fclose(fp);
	return n;
}

Test(kmsg, bus_ids_normalised)
{
	char b[16];
	cr_assert_eq(ch_kmsg_bus_norm("PCI:0000:17:00", b, sizeof(b)), 0);
	cr_assert_str_eq(b, "0000:17:00.0");
	cr_assert_eq(ch_kmsg_bus_norm("00000000:1B:00.0", b, sizeof(b)), 0); /* NVML's */
	cr_assert_str_eq(b, "0000:1b:00.0");
	cr_assert_eq(ch_kmsg_bus_norm("0019:01:00", b, sizeof(b)), 0);
	cr_assert_str_eq(b, "0019:01:00.0");
	cr_assert_eq(ch_kmsg_bus_norm("b3:00.1", b, sizeof(b)), 0);
	cr_assert_str_eq(b, "0000:b3:00.1");
	cr_assert_eq(ch_kmsg_bus_norm("PCI:...", b, sizeof(b)), -1);
	cr_assert_str_eq(b, "");
	cr_assert_eq(ch_kmsg_bus_norm("0000:1g:00.0", b, sizeof(b)), -1);
	cr_assert_eq(ch_kmsg_bus_norm("123", b, sizeof(b)), -1);
}

Test(kmsg, xid_in_every_time_format)
{
	struct ch_kfault f;
	const char *m = "NVRM: Xid (PCI:0000:43:00): 79, pid=0, name=(null), GPU has fallen off the bus.";
	char line[256];

	snprintf(line, sizeof(line), "[ 1843.308145] %s", m);
	cr_assert_eq(one(line, &f), 1);
	cr_assert_eq(f.kind, CH_KF_XID);
	cr_assert_eq(f.code, 79);
	cr_assert_str_eq(f.bus_id, "0000:43:00.0");
	cr_assert_float_eq(f.boot_sec, 1843.308145, 1e-6);
	cr_assert(isnan(f.wall_sec));
	cr_assert_str_eq(f.text, m);

	snprintf(line, sizeof(line), "3,2213,1843308145,-;%s\n", m);
	cr_assert_eq(one(line, &f), 1);
	cr_assert_float_eq(f.boot_sec, 1843.308145, 1e-6);

	snprintf(line, sizeof(line), "2026-12-06T02:14:07+0000 gpu3 kernel: %s", m);
	cr_assert_eq(one(line, &f), 1);
	cr_assert_float_eq(f.wall_sec, 1796523247.0, 1e-6); /* date -u -d 2026-12-06T02:14:07Z +%s */
	cr_assert_str_eq(f.clock, "02:14:07");

	snprintf(line, sizeof(line), "2026-12-06T03:14:07+01:00 gpu3 kernel: %s", m);
	cr_assert_eq(one(line, &f), 1);
	cr_assert_str_eq(f.clock, "02:14:07");

	snprintf(line, sizeof(line), "1796523247.859532 gpu3 kernel: %s", m);
	cr_assert_eq(one(line, &f), 1);
	cr_assert_float_eq(f.wall_sec, 1796523247.859532, 1e-5);

	snprintf(line, sizeof(line), "Dec 06 02:14:07 gpu3 kernel: %s", m);
	cr_assert_eq(one(line, &f), 1);
	cr_assert(isnan(f.wall_sec)); /* no year */
	cr_assert_str_eq(f.clock, "02:14:07");

	snprintf(line, sizeof(line), "kern  :err   : 2026-12-06T02:14:07,859532+00:00 %s", m);
	cr_assert_eq(one(line, &f), 1);
	cr_assert_str_eq(f.clock, "02:14:07");
	cr_assert_eq(f.code, 79);
}

Test(kmsg, not_faults)
{
	struct ch_kfault f;
	cr_assert_eq(one("[    5.1] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  570.158.01", &f), 0);
	cr_assert_eq(one("mlx5_core 0000:ab:00.0 mlx5_5: Port: 1 Link INIT", &f), 0);
	cr_assert_eq(one("", &f), 0);
	cr_assert_eq(one("NVRM: Xid (PCI:0000:43:00): , no code", &f), 0);
	cr_assert_eq(one("[ 12.0] usb 1-1: new high-speed USB device", &f), 0);
}

Test(kmsg, quoted_messages_are_not_faults)
{
	struct ch_kfault f;
	cr_assert_eq(one("2026-12-06T02:10:00+0000 gpu3 bash[42]: NVRM: Xid (PCI:0000:43:00): 79, pid=0, GPU has fallen off the bus.", &f), 0);
	cr_assert_eq(one("[ 12.0] audit: msg='echo NVRM: Xid (PCI:0000:43:00): 48, DBE'", &f), 0);
	cr_assert_eq(one("[ 12.0] python3: saw nvidia-nvswitch3: SXid (PCI:0000:04:00.0): 12028, Fatal", &f), 0);
	cr_assert_eq(one("[ 12.0] sshd: NVRM: GPU 0000:43:00.0: GPU has fallen off the bus.", &f), 0);
	/* the same messages at the message's start are */
	cr_assert_eq(one("[ 12.0] nvidia-nvswitch3: SXid (PCI:0000:04:00.0): 12028, Fatal, Link 32", &f), 1);
	cr_assert_eq(f.kind, CH_KF_SXID);
	cr_assert_eq(one("[ 12.0] NVRM: GPU 0000:43:00.0: GPU has fallen off the bus.", &f), 1);
	cr_assert_eq(f.code, 79);
}

Test(kmsg, impossible_times_marked)
{
	struct ch_kfault f;
	const char *m = "NVRM: Xid (PCI:0000:43:00): 79, pid=0";
	const char *bad[] = { "[   -5.000000] ", "[nan] ", "[inf] ", "[1e300] ", "4,1,-5000000,-;",
			      "2026-13-40T02:14:07+0000 h kernel: ", "1969-12-31T23:59:59+0000 h kernel: " };
	const char *good[] = { "[    0.000000] ", "4,1,5000000,-;", "2026-12-06T02:14:07+0000 h kernel: ",
			       "[Sun Dec  6 02:14:07 2026] " };
	char line[256];
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(line, sizeof(line), "%s%s", bad[i], m);
		cr_assert_eq(one(line, &f), 1, "%s", line);
		cr_assert_eq(f.bad_time, 1, "%s", line);
	}
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		snprintf(line, sizeof(line), "%s%s", good[i], m);
		cr_assert_eq(one(line, &f), 1, "%s", line);
		cr_assert_eq(f.bad_time, 0, "%s", line);
		cr_assert_eq(f.code, 79, "%s", line);
	}
}

Test(kmsg, every_class_of_the_table_in_the_fixture)
{
	struct ch_kfault f[64];
	size_t nb;
	const struct ch_xid_class *b = ch_xid_builtin(&nb);
	int n = read_all(KLOG "every-class.log", f, 64);

	cr_assert_eq((size_t)n, nb, "one line per built-in code: %d lines, %zu codes", n, nb);
	for (size_t i = 0; i < nb; i++) {
		cr_assert_eq(f[i].kind, CH_KF_XID);
		cr_assert_eq(f[i].code, b[i].code, "line %zu: code %d, table %d", i, f[i].code, b[i].code);
		cr_assert(!strcmp(f[i].bus_id, "0000:1b:00.0") || !strcmp(f[i].bus_id, "0000:43:00.0"));
	}
}

Test(kmsg, journal_fixture_flaps_aer_and_off_bus)
{
	struct ch_kfault f[32];
	int n = read_all(KLOG "h100-node-journal.log", f, 32);
	/* 3 downs, 3 ups, 1 AER, Xid 79 and its "fallen off the bus" line */
	cr_assert_eq(n, 9);
	cr_assert_eq(f[0].kind, CH_KF_LINK_DOWN);
	cr_assert_str_eq(f[0].bus_id, "0000:18:00.0");
	cr_assert_eq(f[1].kind, CH_KF_LINK_UP);
	cr_assert_eq(f[2].kind, CH_KF_LINK_DOWN);
	cr_assert_eq(f[3].kind, CH_KF_LINK_UP);
	cr_assert_eq(f[6].kind, CH_KF_AER);
	cr_assert_eq(f[6].code, 0);
	cr_assert_str_eq(f[6].bus_id, "0000:1b:00.0");
	cr_assert_eq(f[7].kind, CH_KF_XID);
	cr_assert_eq(f[7].code, 79);
	cr_assert_str_eq(f[7].clock, "02:14:07");
	cr_assert_eq(f[8].code, 79);
	cr_assert_str_eq(f[8].bus_id, "0000:43:00.0");
}

Test(kmsg, off_bus_over_three_lines)
{
	struct ch_kfault f[4];
	int n = read_all(KLOG "off-bus-multiline.log", f, 4);
	cr_assert_eq(n, 1);
	cr_assert_eq(f[0].code, 79);
	cr_assert_str_eq(f[0].bus_id, "0000:43:00.0");
}

Test(kmsg, sxid_once_and_aer_from_the_device_named)
{
	struct ch_kfault f[8];
	struct ch_xid_table t;
	char why[256] = "";
	int n = read_all(KLOG "nvswitch-aer-kmsg.log", f, 8);

	cr_assert_eq(ch_xid_table_load(&t, NULL, why, sizeof(why)), 0);
	cr_assert_eq(n, 3); /* the Data/Severity follow-ups not counted */
	cr_assert_eq(f[0].kind, CH_KF_SXID);
	cr_assert_eq(f[0].code, 22013);
	cr_assert_eq(ch_kfault_action(&t, &f[0]), CH_KA_INFORM);
	cr_assert_eq(f[1].code, 12028);
	cr_assert_eq(ch_kfault_action(&t, &f[1]), CH_KA_DRAIN);
	cr_assert_eq(f[2].kind, CH_KF_AER);
	cr_assert_eq(f[2].code, 2);
	cr_assert_str_eq(f[2].bus_id, "0000:40:00.0");
	cr_assert_eq(ch_kfault_action(&t, &f[2]), CH_KA_DRAIN);
	cr_assert_float_eq(f[2].boot_sec, 60.00001, 1e-9);
	ch_xid_table_free(&t);
}

Test(kmsg, table_actions_and_a_users_file)
{
	struct ch_xid_table t;
	char why[256] = "", path[] = "/tmp/ch_kmsg_XXXXXX";
	struct ch_kfault f = { .kind = CH_KF_XID, .code = 79 };
	int fd = mkstemp(path);

	cr_assert_eq(ch_xid_table_load(&t, NULL, why, sizeof(why)), 0);
	cr_assert_eq(ch_kfault_action(&t, &f), CH_KA_REBOOT);
	f.code = 13;
	cr_assert_eq(ch_kfault_action(&t, &f), CH_KA_INFORM);
	cr_assert_eq(ch_xid_lookup(&t, 13)->hardware, 0);
	f.code = 48;
	cr_assert_eq(ch_kfault_action(&t, &f), CH_KA_DRAIN);
	f.code = 999; /* not in the table: information */
	cr_assert_null(ch_xid_lookup(&t, 999));
	cr_assert_eq(ch_kfault_action(&t, &f), CH_KA_INFORM);
	ch_xid_table_free(&t);

	dprintf(fd, "# site additions\n\n999\tdrain\tSITE_999\ta fault of ours\n13\treset\tGR\tgraphics exception, reset here\n");
	close(fd);
	cr_assert_eq(ch_xid_table_load(&t, path, why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(ch_kfault_action(&t, &f), CH_KA_DRAIN);
	cr_assert_eq(ch_xid_lookup(&t, 999)->user, 1);
	cr_assert_eq(ch_xid_lookup(&t, 13)->action, CH_KA_RESET);
	cr_assert_eq(ch_xid_lookup(&t, 79)->action, CH_KA_REBOOT); /* kept */
	ch_xid_table_free(&t);

	fd = open(path, O_WRONLY | O_TRUNC);
	dprintf(fd, "12\tpanic\tX\ty\n");
	close(fd);
	cr_assert_eq(ch_xid_table_load(&t, path, why, sizeof(why)), CH_ERR_USAGE);
	cr_assert(strstr(why, "line 1") && strstr(why, "'panic'"), "%s", why);
	cr_assert_eq(t.n, 0);
	fd = open(path, O_WRONLY | O_TRUNC);
	dprintf(fd, "x12\tdrain\tX\n");
	close(fd);
	cr_assert_eq(ch_xid_table_load(&t, path, why, sizeof(why)), CH_ERR_USAGE);
	unlink(path);
	cr_assert_eq(ch_xid_table_load(&t, path, why, sizeof(why)), CH_ERR_RUNTIME);
	cr_assert(strstr(why, "cannot read"), "%s", why);
}

/* journalctl -k in each -o format (tests/data/kernel-log/journal-formats.log,
 * the code telling which format): every one read, its time and zone */
Test(kmsg, every_journalctl_output_format)
{
	struct ch_kfault f[16];
	static const int codes[] = { 79, 48, 64, 74, 95, 119, 120 };
	setenv("TZ", "UTC", 1);
	tzset();
	int n = read_all(KLOG "journal-formats.log", f, 16);

	cr_assert_eq(n, 7, "one Xid per format: %d read", n);
	for (int i = 0; i < 7; i++) {
		cr_assert_eq(f[i].code, codes[i], "line %d: code %d", i + 1, f[i].code);
		cr_assert_str_eq(f[i].bus_id, "0000:43:00.0");
		cr_assert_eq(f[i].bad_time, 0, "line %d", i + 1);
		cr_assert(!strncmp(f[i].text, "NVRM: Xid", 9), "line %d: %s", i + 1, f[i].text);
	}
	/* short, short-precise: no year, the time of day in this machine's zone */
	cr_assert(isnan(f[0].wall_sec));
	cr_assert_str_eq(f[0].clock, "02:14:07");
	cr_assert_str_eq(f[0].zone, "UTC");
	cr_assert_str_eq(f[1].clock, "02:14:08");
	/* short-iso(-precise), short-full, short-unix: the wall time */
	cr_assert_float_eq(f[2].wall_sec, 1796523249.0, 1e-6);
	cr_assert_float_eq(f[3].wall_sec, 1796523250.859532, 1e-5);
	cr_assert_float_eq(f[4].wall_sec, 1796523251.0, 1e-6);
	cr_assert_str_eq(f[4].clock, "02:14:11");
	cr_assert_str_eq(f[4].zone, "UTC");
	cr_assert_float_eq(f[5].wall_sec, 1796523252.412907, 1e-5);
	/* short-monotonic: seconds since boot */
	cr_assert_float_eq(f[6].boot_sec, 1843.308145, 1e-6);
	cr_assert(isnan(f[6].wall_sec));
}

/* short-full's zone: UTC, an offset, this machine's zone name give the wall
 * time; another zone name keeps the time of day and the zone only */
Test(kmsg, short_full_zones)
{
	struct ch_kfault f;
	const char *m = "gpu3 kernel: NVRM: Xid (PCI:0000:43:00): 79, pid=0";
	char line[256];
	setenv("TZ", "Europe/Berlin", 1);
	tzset();
	snprintf(line, sizeof(line), "Sun 2026-12-06 03:14:07 CET %s", m);
	cr_assert_eq(one(line, &f), 1);
	cr_assert_float_eq(f.wall_sec, 1796523247.0, 1e-6);
	cr_assert_str_eq(f.clock, "02:14:07"); /* shown in UTC */
	cr_assert_str_eq(f.zone, "UTC");
	snprintf(line, sizeof(line), "Sun 2026-12-06 03:14:07 +0100 %s", m);
	cr_assert_eq(one(line, &f), 1);
	cr_assert_float_eq(f.wall_sec, 1796523247.0, 1e-6);
	snprintf(line, sizeof(line), "Sun 2026-12-06 21:14:07 EST %s", m);
	cr_assert_eq(one(line, &f), 1);
	cr_assert(isnan(f.wall_sec));
	cr_assert_eq(f.bad_time, 0);
	cr_assert_str_eq(f.clock, "21:14:07");
	cr_assert_str_eq(f.zone, "EST");
	/* the yearless stamp: this machine's zone name */
	snprintf(line, sizeof(line), "Dec 06 02:14:07 %s", m);
	cr_assert_eq(one(line, &f), 1);
	cr_assert_str_eq(f.zone, "CET");
	setenv("TZ", "UTC", 1);
	tzset();
}

/* a date or time no clock shows: dmesg -T "Feb 30", "25:14:07"; the same in
 * ISO, short-full and the yearless stamp: read (the line is a fault line)
 * and marked impossible, never normalised into another date */
Test(kmsg, impossible_dates_marked)
{
	struct ch_kfault f;
	const char *m = "NVRM: Xid (PCI:0000:43:00): 79, pid=0";
	const char *bad[] = { "[Mon Feb 30 02:14:07 2026] ", "[Sun Dec  6 25:14:07 2026] ", "[Sun Dec  6 02:61:07 2026] ",
			      "[Sun Feb 29 02:14:07 2026] ", "2026-02-30T02:14:07+0000 h kernel: ",
			      "2026-04-31T02:14:07Z h kernel: ", "Mon 2026-02-30 02:14:07 UTC h kernel: ",
			      "Feb 30 02:14:07 h kernel: ", "Dec 06 24:00:00 h kernel: " };
	const char *good[] = { "[Sat Feb 29 02:14:07 2020] ", "2024-02-29T02:14:07Z h kernel: ", "Feb 29 02:14:07 h kernel: " };
	char line[256];
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(line, sizeof(line), "%s%s", bad[i], m);
		cr_assert_eq(one(line, &f), 1, "%s", line);
		cr_assert_eq(f.bad_time, 1, "%s", line);
	}
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		snprintf(line, sizeof(line), "%s%s", good[i], m);
		cr_assert_eq(one(line, &f), 1, "%s", line);
		cr_assert_eq(f.bad_time, 0, "%s", line);
	}
}

/* bytes that are not UTF-8 (Latin-1, stray, a character cut by the 200-byte
 * text) become '?'; valid UTF-8 is kept */
Test(kmsg, text_is_valid_utf8)
{
	struct ch_kfault f;
	char line[512];
	cr_assert_eq(one("[ 1.0] NVRM: Xid (PCI:0000:43:00): 13, pid=2, name=caf\xc3\xa9 \xff\xfe x\xe9y \xc0\xaf \xed\xa0\x80", &f), 1);
	cr_assert_str_eq(f.text, "NVRM: Xid (PCI:0000:43:00): 13, pid=2, name=caf\xc3\xa9 ?? x?y ?? ???");
	/* a 3-byte character across the 199th byte: cut, so '?' */
	int k = snprintf(line, sizeof(line), "[ 1.0] NVRM: Xid (PCI:0000:43:00): 13, ");
	int msg0 = 7;
	while (k - msg0 < 198)
		line[k++] = 'a';
	snprintf(line + k, sizeof(line) - (size_t)k, "\xe2\x82\xac tail");
	cr_assert_eq(one(line, &f), 1);
	cr_assert_eq(strlen(f.text), 199);
	cr_assert_eq(f.text[198], '?');
	char s[] = "ok \xe2\x82\xac \x01 \x80";
	ch_kmsg_text_clean(s);
	cr_assert_str_eq(s, "ok \xe2\x82\xac ? ?");
}

/* a user table's bad rows: each an input error naming the file and line,
 * the table left empty */
Test(kmsg, users_table_bad_rows)
{
	static const struct { const char *text, *why; } bad[] = {
		{ "13\tpanic\tX\ty\n", "invalid action 'panic'" },
		{ "# c\nabc\tdrain\tX\ty\n", "line 2: invalid code 'abc'" },
		{ "13x\tdrain\tX\ty\n", "invalid code '13x'" },
		{ "-3\tdrain\tX\ty\n", "invalid code '-3'" },
		{ " 13\tdrain\tX\ty\n", "invalid code ' 13'" },
		{ "99999999999999999999\tdrain\tX\ty\n", "invalid code" },
		{ "13\tdrain\tX\ty\n\n13\tinform\tX\tz\n", "line 3: code 13 given twice (also line 1)" },
		{ "13\tdrain\tX\ty\textra\n", "line 1: expected 4 TAB-separated fields (CODE ACTION MNEMONIC MEANING), found more" },
		{ "13\tdrain\t\tX\ty\n", "found more" },
		{ "13\tdrain\tX\n", "found 3" },
		{ "13\tdrain\tX\t\n", "must not be empty" },
		{ "\t\t\t\n", "line 1: invalid code ''" },     /* TABs only: a row, not a blank line */
		{ " \t \n", "line 1: expected 4 TAB-separated fields" },
	};
	char why[256], path[] = "/tmp/ch_kmsg_XXXXXX";
	struct ch_xid_table t;
	int fd = mkstemp(path);
	close(fd);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		FILE *fp = fopen(path, "w");
		fputs(bad[i].text, fp);
		fclose(fp);
		cr_assert_eq(ch_xid_table_load(&t, path, why, sizeof(why)), CH_ERR_USAGE, "%zu: %s", i, bad[i].text);
		cr_assert(strstr(why, path) && strstr(why, bad[i].why), "%zu: '%s' lacks '%s'", i, why, bad[i].why);
		cr_assert_eq(t.n, 0);
	}
	/* a NUL byte inside a row: an error naming it, never the row cut at
	 * the NUL and read as a shorter one */
	{
		static const char nul[] = "13\tdrain\tX\tmeaning\0 and more\n";
		FILE *fp = fopen(path, "w");
		fwrite(nul, 1, sizeof(nul) - 1, fp);
		fclose(fp);
		cr_assert_eq(ch_xid_table_load(&t, path, why, sizeof(why)), CH_ERR_USAGE);
		cr_assert(strstr(why, "line 1: a NUL byte"), "%s", why);
		cr_assert_eq(t.n, 0);
	}
	/* a directory, /dev/zero are no table: a usage error before a line is
	 * read, not an empty file, never a read without end */
	cr_assert_eq(ch_xid_table_load(&t, "/tmp", why, sizeof(why)), CH_ERR_USAGE);
	cr_assert(strstr(why, "/tmp") && strstr(why, "not a regular file"), "%s", why);
	cr_assert_eq(ch_xid_table_load(&t, "/dev/zero", why, sizeof(why)), CH_ERR_USAGE);
	cr_assert(strstr(why, "/dev/zero"), "%s", why);
	unlink(path);
}

/* time stamps in another language's words (dmesg -T and journalctl's
 * default under LANG=de_DE): the fault read, the time of day kept, the
 * date unknown; an hour no clock shows marked; a prefix with a ':' word is
 * no stamp */
Test(kmsg, stamps_in_another_language)
{
	struct ch_kfault f;
	setenv("TZ", "UTC", 1);
	tzset();
	cr_assert_eq(one("[So Dez  6 02:14:07 2026] NVRM: Xid (PCI:0000:43:00): 79, pid=0", &f), 1);
	cr_assert_eq(f.code, 79);
	cr_assert_str_eq(f.clock, "02:14:07");
	cr_assert(isnan(f.wall_sec));
	cr_assert_eq(f.bad_time, 0);
	cr_assert_eq(one("M\xc3\xa4r 02 02:14:10.123 gpu3 kernel: NVRM: Xid (PCI:0000:43:00): 74, pid=0", &f), 1);
	cr_assert_eq(f.code, 74);
	cr_assert_str_eq(f.clock, "02:14:10");
	cr_assert_str_eq(f.zone, "UTC");
	cr_assert_eq(one("Dez 06 26:14:10 gpu3 kernel: NVRM: Xid (PCI:0000:43:00): 95, pid=0", &f), 1);
	cr_assert_eq(f.bad_time, 1);
	cr_assert_eq(one("foo bar: 02:14:10 gpu3 kernel: NVRM: Xid (PCI:0000:43:00): 62, pid=0", &f), 0);
	cr_assert_eq(one("02:14:10 gpu3 kernel: NVRM: Xid (PCI:0000:43:00): 62, pid=0", &f), 0);
}

/* a table of 65,536 rows loads (codes 1000 up; a lookup indexed by code,
 * not a scan per row), each code found; the same code again on the last
 * line names both lines */
Test(kmsg, users_table_large)
{
	char why[256], path[] = "/tmp/ch_kmsg_XXXXXX";
	struct ch_xid_table t;
	size_t nb;
	int fd = mkstemp(path);
	FILE *fp = fdopen(fd, "w");
	for (int i = 0; i < 65536; i++)
		fprintf(fp, "%d\tdrain\tM%d\tmeaning %d\n", 1000 + i, i, i);
	fclose(fp);
	ch_xid_builtin(&nb);
	cr_assert_eq(ch_xid_table_load(&t, path, why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(t.n, nb + 65536);
	cr_assert_eq(t.rows[t.n - 1].code, 1000 + 65535);
	cr_assert_str_eq(t.rows[t.n - 1].mnemonic, "M65535");
	ch_xid_table_free(&t);
	fp = fopen(path, "a");
	fprintf(fp, "1007\tinform\tX\ty\n");
	fclose(fp);
	cr_assert_eq(ch_xid_table_load(&t, path, why, sizeof(why)), CH_ERR_USAGE);
	cr_assert(strstr(why, "line 65537: code 1007 given twice (also line 8)"), "%s", why);
	unlink(path);
}
