/*
 * ch_kmsg.h - GPU and NIC faults in the kernel log: the NVIDIA driver's Xid
 * and NVSwitch SXid reports, "fallen off the bus", PCIe AER errors and
 * mlx5_core link changes, parsed line by line, and the table that
 * classifies an Xid code by NVIDIA's documented meaning and action.
 *
 * Line formats read (each optionally after a syslog or dmesg prefix):
 *   /dev/kmsg records    "3,1234,1843308145,-;MESSAGE" (Documentation/ABI/
 *                        testing/dev-kmsg: priority, sequence, microseconds
 *                        since boot, flags)
 *   dmesg                "[ 1843.308145] MESSAGE" (seconds since boot)
 *   journalctl -k        "-o short-unix": "1706180094.859532 HOST kernel: MESSAGE";
 *                        "-o short-iso" (and short-iso-precise):
 *                        "2025-01-25T10:34:54+0000 HOST kernel: MESSAGE";
 *                        "-o short-full": "Sat 2025-01-25 10:34:54 UTC HOST kernel: MESSAGE"
 *                        (a zone UTC/GMT, +HH[MM] or this machine's zone name
 *                        gives the wall time; another zone name keeps the
 *                        time of day and zone only);
 *                        "-o short-monotonic": "[ 1843.308145] HOST kernel: MESSAGE"
 *                        (seconds since boot);
 *                        the default "Feb 14 05:03:41 HOST kernel: MESSAGE" and
 *                        "-o short-precise" "Feb 14 05:03:41.123456 HOST kernel: ..."
 *                        (and syslog files): no year, the local time of the
 *                        machine that wrote it: the wall time stays unknown,
 *                        the time of day is kept for display with this
 *                        machine's zone name
 *   dmesg -x --time-format iso  "kern  :err   : 2025-01-25T10:34:54,859532+00:00 MESSAGE"
 *   dmesg -T             "[Sun Dec  6 02:14:07 2026] MESSAGE" (local time)
 *   a stamp in another language's words ("[So Dez  6 02:14:07 2026]",
 *                        "Dez 06 02:14:07 HOST kernel:"): the time of day
 *                        kept, the date unknown
 * A time stamp that no kernel wrote (a negative or not-a-number time since
 * boot, one over CH_KMSG_MAX_UPTIME, a date before 1970 or with a field
 * out of range: a day past its month's end as "Feb 30", an hour 24 or
 * more) is read and marked impossible (ch_kfault.bad_time);
 * a time in the future is the caller's to judge (it knows now).
 * Messages recognised at the message's start, past those prefixes (a line
 * that quotes one further in, e.g. a user's echo or a log of a log, is no
 * fault) (real lines: tests/data/kernel-log/README):
 *   "NVRM: Xid (PCI:0000:17:00): 79, pid=..., GPU has fallen off the bus."
 *   "nvidia-nvswitch3: SXid (PCI:0000:04:00.0): 22013, Non-fatal, Link 44 ..."
 *     (the "Data {...}" and "Severity ..." follow-up lines of an SXid are
 *     not counted again)
 *   "NVRM: GPU 0000:b3:00.0: GPU has fallen off the bus." and the
 *     multi-line "NVRM: The NVIDIA GPU 0000:b3:00.0 / ... / NVRM: fallen off
 *     the bus and is not responding to commands." (as Xid 79)
 *   "DRIVER 0000:17:00.0: PCIe Bus Error: severity=Corrected, type=..."
 *     (the bus id of the device that a preceding "AER: ... received from
 *     BUS" line named, else the line's own)
 *   "mlx5_core 0000:ab:00.0 IFNAME: Link down" / "Link up" and
 *     "mlx5_core 0000:ab:00.0 mlx5_5: Port: 1 Link DOWN" / "Link ACTIVE"
 *
 * Bus ids are normalised to "dddd:bb:dd.f", lower case (a 2-field Xid id
 * "0000:17:00" gets ".0"; NVML's 8-digit domain is cut to 4), so that they
 * compare equal to the inventory's (hw/ch_inventory.h).
 */
#ifndef CH_KMSG_H
#define CH_KMSG_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What a fault line reports. */
enum ch_kfault_kind {
	CH_KF_XID,       /* NVRM Xid CODE (and "fallen off the bus", as 79) */
	CH_KF_SXID,      /* NVSwitch SXid CODE */
	CH_KF_AER,       /* PCIe AER error; code 0 corrected, 1 uncorrected non-fatal, 2 fatal */
	CH_KF_LINK_DOWN, /* mlx5_core link down */
	CH_KF_LINK_UP,   /* mlx5_core link up / active */
};

/* What the operator is to do about a fault: the tool's action, derived
 * from NVIDIA's resolution bucket (docs/xid.md). Ordered by severity. */
enum ch_kaction {
	CH_KA_NONE,   /* not a fault (a link coming back up) */
	CH_KA_INFORM, /* information: application fault or corrected error; no drain */
	CH_KA_RESET,  /* reset the GPU, then return it to service */
	CH_KA_DRAIN,  /* drain: a hardware fault to be repaired */
	CH_KA_REBOOT, /* drain and reboot the node */
};

/* One fault line. */
struct ch_kfault {
	enum ch_kfault_kind kind;
	int code;             /* Xid / SXid number; AER severity (above); 0 for links */
	char bus_id[16];      /* "dddd:bb:dd.f", "" when the line names none */
	double boot_sec;      /* seconds since boot, NAN when the line has none */
	double wall_sec;      /* seconds since the epoch (UTC), NAN when unknown */
	char clock[9];        /* "HH:MM:SS": the time of day the line shows ("" unknown) */
	char zone[16];        /* the zone of @clock: "UTC" (a known wall time, shown in
	                       * UTC), the zone a short-full line names, or this
	                       * machine's local zone name for the yearless
	                       * short/syslog stamp ("" unknown) */
	char text[200];       /* the message, cut to fit, as ch_kmsg_text_clean() leaves it */
	int bad_time;         /* 1: the line's time stamp is impossible (above); skip the line */
};

/* The longest time since boot taken as real (seconds; about 31.7 years). */
#define CH_KMSG_MAX_UPTIME 1e9

/* Parser state carried from line to line (multi-line messages). Zero it
 * (or use ch_kmsg_parser_init()) before the first line. */
struct ch_kmsg_parser {
	char off_bus_id[16];  /* bus of a pending "The NVIDIA GPU BUS" line */
	char aer_from[16];    /* bus of the last "AER: ... received from BUS" */
};

/** ch_kmsg_parser_init - zero @p. */
void ch_kmsg_parser_init(struct ch_kmsg_parser *p);

/**
 * ch_kmsg_parse_line - one kernel-log line.
 * @p:    [in,out] state between lines.
 * @line: [in] the line, with or without its '\n'; NUL-terminated.
 * @f:    [out] the fault, filled only when 1 is returned.
 * Returns 1 when the line reports a fault (or a link coming up), 0 when it
 * does not (including the follow-up lines of one already counted).
 */
int ch_kmsg_parse_line(struct ch_kmsg_parser *p, const char *line, struct ch_kfault *f);

/**
 * ch_kmsg_text_clean - make @s (NUL-terminated, changed in place) printable
 * and valid UTF-8: each control character and each byte that is not part
 * of a whole valid UTF-8 character (Latin-1, a stray byte, a character cut
 * short) becomes '?'; the length is kept. Every output (terminal, JSON,
 * Markdown) can then carry the text as it is.
 */
void ch_kmsg_text_clean(char *s);

/**
 * ch_kmsg_bus_norm - @in (a PCI bus id in any of the forms above) as
 * "dddd:bb:dd.f" into @out (at least 16 bytes). Returns 0, or -1 (and @out
 * "") when @in is not a bus id.
 */
int ch_kmsg_bus_norm(const char *in, char *out, size_t n);

/* One row of the Xid table. */
struct ch_xid_class {
	int code;
	char mnemonic[64];    /* NVIDIA's name of the code */
	char meaning[96];     /* what NVIDIA's catalog says it is */
	char nvidia[32];      /* NVIDIA's resolution bucket (immediate action) */
	enum ch_kaction action;
	int hardware;         /* 1 a hardware fault, 0 an application's or the driver's */
	int user;             /* 1 from a user table file, 0 built in */
};

/**
 * ch_xid_builtin - the built-in table (source: NVIDIA's Xid catalog,
 * docs/xid.md). @n: [out] its length. Returns a borrowed array, sorted by code.
 */
const struct ch_xid_class *ch_xid_builtin(size_t *n);

/* A table: the built-in rows, replaced or extended by a user's file. */
struct ch_xid_table {
	struct ch_xid_class *rows;
	size_t n;
};

/**
 * ch_xid_table_load - the built-in table, then, when @path is not NULL, the
 * rows of the file @path replacing those of the same code or added. The
 * file: one row a line, TAB-separated "CODE ACTION MNEMONIC MEANING" (ACTION
 * one of inform, reset, drain, reboot; MNEMONIC and MEANING free text; the
 * row counts as a hardware fault unless ACTION is inform); '#' starts a
 * comment line, empty lines are skipped. A bad row: an unknown action, a
 * code not a whole number 0-1000000, a code given twice in the file, not
 * exactly 4 fields (each TAB separates), an empty or too long MNEMONIC
 * (63) or MEANING (95), a line over 4096 characters.
 * @t:   [out] the table; free with ch_xid_table_free().
 * @why: [out] on error, what is wrong, naming the file and line.
 * Returns 0, CH_ERR_USAGE (a bad row, or @path not a regular file: a
 * folder, a device, a FIFO) or CH_ERR_RUNTIME (the file cannot
 * be read, or out of memory) (base/ch_common.h); on error @t is empty.
 */
int ch_xid_table_load(struct ch_xid_table *t, const char *path, char *why, size_t n);

/** ch_xid_table_free - release @t's rows (NULL-safe); @t is left empty. */
void ch_xid_table_free(struct ch_xid_table *t);

/**
 * ch_xid_lookup - the row of @code in @t, or NULL when the table has none
 * (an unknown code: the caller says "not in the table", and treats it as
 * information). Returns a pointer into @t.
 */
const struct ch_xid_class *ch_xid_lookup(const struct ch_xid_table *t, int code);

/**
 * ch_kfault_action - the action for @f by @t: an Xid by its row (an unknown
 * code: CH_KA_INFORM); an SXid: CH_KA_DRAIN when its text says "Fatal",
 * else CH_KA_INFORM; AER: fatal CH_KA_DRAIN, else CH_KA_INFORM; a link down
 * CH_KA_INFORM (the caller judges flaps by count), a link up CH_KA_NONE.
 */
enum ch_kaction ch_kfault_action(const struct ch_xid_table *t, const struct ch_kfault *f);

/** ch_kaction_name - "none", "inform", "reset", "drain", "reboot". */
const char *ch_kaction_name(enum ch_kaction a);

/** ch_kfault_kind_name - "xid", "sxid", "aer", "link_down", "link_up". */
const char *ch_kfault_kind_name(enum ch_kfault_kind k);

#ifdef __cplusplus
}
#endif
#endif
