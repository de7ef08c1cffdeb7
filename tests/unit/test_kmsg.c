/*
 * hw/ch_kmsg.h: kernel-log fault lines in every format read (dmesg,
 * /dev/kmsg, journalctl short-iso / short-unix / default, dmesg -x), the
 * fixtures of tests/data/kernel-log (real-format lines, sources in its
 * README), bus ids, and the Xid table with a user's file.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
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
