/*
 * hr_kernlog_cmd.c - `health_report kernel-log` (hr_kernlog_cmd.h).
 */
#include "report/hr_kernlog_cmd.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "base/ch_common.h"
#include "base/ch_parse.h"
#include "base/ch_result.h"
#include "hw/ch_kmsg.h"

#define KL_MAX_DEVS 256
/* the devices and codes listed one by one; the fault lines of any more are
 * counted together, their worst action kept (a drain is never lost) */
#define KL_MAX_GROUPS 65536
/* a line more than this after --now (the clock) is in the future: its time
 * is impossible (seconds) */
#define KL_FUTURE_SEC 86400.0
/* --since and --now: the accepted times (help and errors say the same) */
#define KL_TIME_MAX 1e11
#define KL_TIME_RANGE "YYYY-MM-DDTHH:MM:SSZ, or seconds since the epoch (a decimal number, 1733451247 or 1.733451247e9), from 0 (1970-01-01T00:00:00Z) to 100000000000 (5138-11-16T09:46:40Z)"
/* --window: the accepted durations (help and errors say the same) */
#define KL_WINDOW_MAX (366 * 86400.0)
#define KL_WINDOW_RANGE "a number with an optional unit s, m or min, h, d (seconds when none), more than 0 and at most 366 d"

struct kl_opts {
	const char *log, *inventory, *table, *json, *state;
	double since, window, now;
	long flaps;
	int force, quiet, print_table;
};

/* a GPU or NIC of the inventory */
struct kl_dev {
	char bus[16], name[48], uuid[64];
	int gpu_index; /* -1 a NIC */
};

/* the faults of one kind and code on one device */
struct kl_group {
	char dev[48], bus[16], uuid[64];
	int gpu_index;
	enum ch_kfault_kind kind;
	int code;
	long count, ups;
	double first_wall, last_wall, last_boot;
	char last_clock[9], last_zone[16];
	char text[200];
	enum ch_kaction action;
};

struct kl_run {
	struct kl_opts o;
	struct ch_xid_table table;
	struct kl_dev devs[KL_MAX_DEVS];
	int ndevs, have_inventory;
	struct kl_group *g;         /* grown as needed, at most KL_MAX_GROUPS */
	int ng, gcap;
	int *hash, hcap;            /* index + 1 of a group by its key, 0 free */
	long over_lines;            /* fault lines past KL_MAX_GROUPS groups */
	enum ch_kaction over_action; /* their worst action */
	long lines, skipped_old, bad_time;
	long not_inventory;      /* AER and link lines of devices not in --inventory: left out */
	double boot_epoch; /* wall time of boot for /dev/kmsg, NAN otherwise */
};

static void usage(void)
{
	printf("Usage: health_report kernel-log [OPTIONS]\n"
	       "\n"
	       "The GPU and NIC faults in the kernel log: NVRM Xid and NVSwitch SXid\n"
	       "reports, 'fallen off the bus', PCIe AER errors, mlx5_core link flaps.\n"
	       "Each is mapped to its GPU (index, UUID) or NIC by the bus ids of\n"
	       "--inventory, classified by the Xid table (NVIDIA's catalog; docs/xid.md)\n"
	       "and printed one line per device and code in NHC's style, most severe\n"
	       "first: 'ERROR: clusterhealth: gpu1 Xid 79 (fallen off the bus) at\n"
	       "02:14:07 UTC: drain (...)' for a fault to drain for (action reset, drain\n"
	       "or reboot), 'INFO: clusterhealth: ...' for one that informs. The time is\n"
	       "the fault's last line's, with its zone: UTC where the line's wall time is\n"
	       "known; this machine's zone name for a yearless 'Dec 06 02:14:07' stamp\n"
	       "(journalctl's default, syslog), which is the local time of the machine\n"
	       "that wrote it; 'N s after boot' for dmesg's seconds since boot.\n"
	       "\n"
	       "Options:\n"
	       "  --kernel-log FILE  read FILE ('-': standard input): dmesg (also -T and\n"
	       "                     -x --time-format iso), journalctl -k (-o short,\n"
	       "                     short-precise, short-iso, short-iso-precise,\n"
	       "                     short-full, short-unix, short-monotonic), syslog\n"
	       "                     or /dev/kmsg lines\n"
	       "                     (default: /dev/kmsg, this machine's kernel log)\n"
	       "  --inventory FILE   a result file of this node (any binary's): the bus\n"
	       "                     ids of its GPUs and NICs; without it devices are\n"
	       "                     named by bus id\n"
	       "  --since TIME       only lines at or after TIME: YYYY-MM-DDTHH:MM:SSZ,\n"
	       "                     or seconds since the epoch (a decimal number,\n"
	       "                     1733451247 or 1.733451247e9), from 0\n"
	       "                     (1970-01-01T00:00:00Z) to 100000000000\n"
	       "                     (5138-11-16T09:46:40Z)\n"
	       "  --window DURATION  only lines of the last DURATION before --now: a\n"
	       "                     number with an optional unit s, m or min, h, d\n"
	       "                     (seconds when none), more than 0 and at most 366 d\n"
	       "  --state FILE       since the last run: read the time FILE holds (when it\n"
	       "                     exists; a time after --now is ignored with a\n"
	       "                     warning), then write this run's time into it\n"
	       "  --now TIME         the time taken as now (tests; default: the clock), as\n"
	       "                     --since; lines more than a day after it are in the\n"
	       "                     future (so --now 0 counts no line of a known time)\n"
	       "  --xid-table FILE   rows that replace or add to the built-in Xid table:\n"
	       "                     CODE<TAB>ACTION<TAB>MNEMONIC<TAB>MEANING, ACTION one\n"
	       "                     of inform, reset, drain, reboot\n"
	       "  --flaps N          a NIC link that went down N times drains (default 3)\n"
	       "  --json FILE        write the result document (JSON), atomically\n"
	       "  --force            replace FILE if it exists (one clusterhealth wrote)\n"
	       "  --table            print the Xid table (Markdown) and exit\n"
	       "  -q, --quiet        print only the ERROR lines\n"
	       "  -h, --help         show this help\n"
	       "\n"
	       "--since, --window and --state given together each set a start: the\n"
	       "latest one wins (a line is read when it is at or after each of them).\n"
	       "A line whose time is unknown (dmesg's seconds since boot in a file) is\n"
	       "counted whatever --since or --window say. A line whose time is\n"
	       "impossible (a negative or not-a-number time since boot, a date before\n"
	       "1970 or with a field out of range, a time more than a day after --now)\n"
	       "is skipped and counted (a warning; lines_bad_time in the result file).\n"
	       "Lines of an Xid code not in the table inform.\n"
	       "\n"
	       "Exit status: 0 nothing to drain for, 1 a fault to drain for, 2 usage or\n"
	       "input error, 4 run-time error.\n"
	       "\n"
	       "Examples:\n"
	       "  health_report kernel-log --inventory results/gpu3/last/roofline.json --window 1h\n"
	       "  journalctl -k -o short-iso --since -1h | health_report kernel-log --kernel-log -\n");
}

/* TIME: ISO UTC or epoch seconds, within KL_TIME_RANGE */
static int parse_time(const char *opt, const char *s, double *out)
{
	struct tm tm = { 0 };
	char *end;
	double v;
	if (ch_valid_utc(s, 0)) {
		sscanf(s, "%4d-%2d-%2dT%2d:%2d:%2dZ", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
		       &tm.tm_min, &tm.tm_sec);
		tm.tm_year -= 1900;
		tm.tm_mon -= 1;
		v = (double)timegm(&tm);
	} else if (ch_parse_leading_double(s, &v, &end) || *end) {
		return ch_usage_error("invalid time '%s' for %s (expected " KL_TIME_RANGE ")", s, opt);
	}
	if (!(v >= 0 && v <= KL_TIME_MAX))
		return ch_usage_error("time '%s' for %s is out of range (expected " KL_TIME_RANGE ")", s, opt);
	*out = v;
	return 0;
}

/* DURATION: KL_WINDOW_RANGE, into seconds */
static int parse_window(const char *opt, const char *s, double *out)
{
	static const struct { const char *u; double mul; } units[] = {
		{ "", 1 }, { "s", 1 }, { "m", 60 }, { "min", 60 }, { "h", 3600 }, { "d", 86400 },
	};
	char *end;
	double v;
	if (ch_parse_leading_double(s, &v, &end) == 0)
		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (!strcmp(end, units[i].u)) {
				v *= units[i].mul;
				if (!(v > 0) || v > KL_WINDOW_MAX)
					break;
				*out = v;
				return 0;
			}
	return ch_usage_error("invalid value '%s' for %s (expected " KL_WINDOW_RANGE ")", s, opt);
}

static int parse_opts(struct kl_opts *o, int argc, char **argv)
{
	static const struct option longs[] = {
		{ "kernel-log", required_argument, 0, 'k' }, { "inventory", required_argument, 0, 'i' },
		{ "since", required_argument, 0, 's' },      { "window", required_argument, 0, 'w' },
		{ "state", required_argument, 0, 'S' },      { "now", required_argument, 0, 'n' },
		{ "xid-table", required_argument, 0, 't' },  { "flaps", required_argument, 0, 'f' },
		{ "json", required_argument, 0, 'j' },       { "force", no_argument, 0, 'F' },
		{ "table", no_argument, 0, 'T' },            { "quiet", no_argument, 0, 'q' },
		{ "help", no_argument, 0, 'h' },             { 0, 0, 0, 0 }
	};
	int c;

	memset(o, 0, sizeof(*o));
	o->since = o->window = o->now = NAN;
	o->flaps = 3;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "qh", longs, NULL)) != -1) {
		switch (c) {
		case 'k': o->log = optarg; break;
		case 'i': o->inventory = optarg; break;
		case 's': if (parse_time("--since", optarg, &o->since)) return CH_ERR_USAGE; break;
		case 'w': if (parse_window("--window", optarg, &o->window)) return CH_ERR_USAGE; break;
		case 'S': o->state = optarg; break;
		case 'n': if (parse_time("--now", optarg, &o->now)) return CH_ERR_USAGE; break;
		case 't': o->table = optarg; break;
		case 'f': if (ch_parse_long("--flaps", optarg, 1, 1000000, &o->flaps)) return CH_ERR_USAGE; break;
		case 'j': o->json = optarg; break;
		case 'F': o->force = 1; break;
		case 'T': o->print_table = 1; break;
		case 'q': o->quiet = 1; break;
		case 'h': usage(); exit(0);
		default: return ch_option_error(argv, "qh", longs);
		}
	}
	if (optind < argc)
		return ch_usage_error("unexpected argument '%s' (the log is given with --kernel-log)", argv[optind]);
	if (isnan(o->now)) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		o->now = (double)ts.tv_sec + ts.tv_nsec * 1e-9;
	}
	if (o->json && ch_check_output_file("--json", o->json, o->force))
		return CH_ERR_USAGE;
	return 0;
}

static void print_table(const struct ch_xid_table *t)
{
	printf("| Xid | NVIDIA's mnemonic | meaning | NVIDIA's action | our action | hardware fault |\n");
	printf("|---|---|---|---|---|---|\n");
	for (size_t i = 0; i < t->n; i++) {
		const struct ch_xid_class *c = &t->rows[i];
		printf("| %d | `%s` | %s | %s | %s | %s |\n", c->code, c->mnemonic, c->meaning, c->nvidia,
		       ch_kaction_name(c->action), c->hardware ? "yes" : "no");
	}
}

/* the GPUs and NICs of a result file's host.inventory */
static int load_inventory(struct kl_run *r)
{
	json_error_t err;
	json_t *doc = json_load_file(r->o.inventory, 0, &err), *inv, *v;
	size_t i;

	if (!doc) {
		ch_error("cannot read the inventory '%s' (--inventory): %s", r->o.inventory, err.text);
		return CH_ERR_USAGE;
	}
	inv = json_object_get(json_object_get(doc, "host"), "inventory");
	if (!json_is_object(inv)) {
		ch_error("'%s' (--inventory) has no host.inventory (a clusterhealth result file is expected)", r->o.inventory);
		json_decref(doc);
		return CH_ERR_USAGE;
	}
	json_array_foreach(json_object_get(inv, "gpus"), i, v) {
		const char *b = json_string_value(json_object_get(v, "pci_bus_id"));
		struct kl_dev *d = &r->devs[r->ndevs];
		if (!b || r->ndevs >= KL_MAX_DEVS || ch_kmsg_bus_norm(b, d->bus, sizeof(d->bus)))
			continue;
		d->gpu_index = (int)json_integer_value(json_object_get(v, "index"));
		snprintf(d->name, sizeof(d->name), "gpu%d", d->gpu_index);
		snprintf(d->uuid, sizeof(d->uuid), "%s", json_string_value(json_object_get(v, "uuid")) ?: "");
		r->ndevs++;
	}
	json_array_foreach(json_object_get(inv, "nics"), i, v) {
		const char *b = json_string_value(json_object_get(v, "pci_bus_id"));
		const char *n = json_string_value(json_object_get(v, "device"));
		struct kl_dev *d = &r->devs[r->ndevs];
		if (!b || r->ndevs >= KL_MAX_DEVS || ch_kmsg_bus_norm(b, d->bus, sizeof(d->bus)))
			continue;
		d->gpu_index = -1;
		snprintf(d->name, sizeof(d->name), "%s", n ? n : d->bus);
		r->ndevs++;
	}
	r->have_inventory = 1;
	json_decref(doc);
	return 0;
}

static const struct kl_dev *find_dev(const struct kl_run *r, const char *bus)
{
	for (int i = 0; bus[0] && i < r->ndevs; i++)
		if (!strcmp(r->devs[i].bus, bus))
			return &r->devs[i];
	return NULL;
}

static unsigned group_key(enum ch_kfault_kind kind, int code, const char *dev)
{
	unsigned h = 2166136261u ^ (unsigned)kind;
	h = (h ^ (unsigned)code) * 16777619u;
	for (; *dev; dev++)
		h = (h ^ (unsigned char)*dev) * 16777619u;
	return h;
}

/* the group of @kind, @code on @dev, made when new; NULL when there are
 * KL_MAX_GROUPS already, -1 in *oom when out of memory */
static struct kl_group *group_get(struct kl_run *r, enum ch_kfault_kind kind, int code, const char *dev, int *oom)
{
	unsigned m, i;
	if (r->hcap) {
		m = (unsigned)r->hcap - 1;
		for (i = group_key(kind, code, dev) & m; r->hash[i]; i = (i + 1) & m) {
			struct kl_group *g = &r->g[r->hash[i] - 1];
			if (g->kind == kind && g->code == code && !strcmp(g->dev, dev))
				return g;
		}
	}
	if (r->ng >= KL_MAX_GROUPS)
		return NULL;
	if (r->ng == r->gcap) {
		int cap = r->gcap ? 2 * r->gcap : 64;
		struct kl_group *g = realloc(r->g, (size_t)cap * sizeof(*g));
		if (!g) {
			*oom = 1;
			return NULL;
		}
		r->g = g;
		r->gcap = cap;
	}
	if (2 * (r->ng + 1) > r->hcap) {
		int hcap = r->hcap ? 2 * r->hcap : 128, *h = calloc((size_t)hcap, sizeof(*h));
		if (!h) {
			*oom = 1;
			return NULL;
		}
		free(r->hash);
		r->hash = h;
		r->hcap = hcap;
		for (int k = 0; k < r->ng; k++) {
			for (i = group_key(r->g[k].kind, r->g[k].code, r->g[k].dev) & (unsigned)(hcap - 1); h[i];
			     i = (i + 1) & (unsigned)(hcap - 1))
				;
			h[i] = k + 1;
		}
	}
	m = (unsigned)r->hcap - 1;
	for (i = group_key(kind, code, dev) & m; r->hash[i]; i = (i + 1) & m)
		;
	r->hash[i] = r->ng + 1;
	struct kl_group *g = &r->g[r->ng++];
	memset(g, 0, sizeof(*g));
	snprintf(g->dev, sizeof(g->dev), "%s", dev);
	g->kind = kind;
	g->code = code;
	return g;
}

static void group_note(struct kl_run *r, struct kl_group *g, const struct ch_kfault *f, double wall);

/* one fault line into its group; -1 out of memory */
static int add_fault(struct kl_run *r, const struct ch_kfault *f)
{
	const struct kl_dev *d = find_dev(r, f->bus_id);
	double wall = f->wall_sec;
	enum ch_kfault_kind kind = f->kind == CH_KF_LINK_UP ? CH_KF_LINK_DOWN : f->kind;
	int code = kind == CH_KF_LINK_DOWN ? 0 : f->code, oom = 0;
	char name[48];
	struct kl_group *g;

	if (isnan(wall) && !isnan(r->boot_epoch) && !isnan(f->boot_sec))
		wall = r->boot_epoch + f->boot_sec;
	/* an impossible time: no kernel wrote it (ch_kmsg.h), or it is more
	 * than a day after now */
	if (f->bad_time || (!isnan(wall) && !(wall >= 0 && wall <= r->o.now + KL_FUTURE_SEC))) {
		r->bad_time++;
		return 0;
	}
	if (!isnan(r->o.since) && !isnan(wall) && wall < r->o.since) {
		r->skipped_old++;
		return 0;
	}
	/* AER and link lines of other devices than the inventory's GPUs and NICs */
	if (r->have_inventory && !d && (f->kind == CH_KF_AER || kind == CH_KF_LINK_DOWN)) {
		r->not_inventory++;
		return 0;
	}
	if (d)
		snprintf(name, sizeof(name), "%s", d->name);
	else
		snprintf(name, sizeof(name), "%s%s", f->kind == CH_KF_SXID ? "nvswitch " : "pci ",
			 f->bus_id[0] ? f->bus_id : "(bus unknown)");
	if (!(g = group_get(r, kind, code, name, &oom))) {
		enum ch_kaction a = f->kind == CH_KF_LINK_UP ? CH_KA_NONE : ch_kfault_action(&r->table, f);
		if (oom)
			return -1;
		r->over_lines++;
		if (a > r->over_action)
			r->over_action = a;
		return 0;
	}
	if (!g->count && !g->ups) {
		snprintf(g->bus, sizeof(g->bus), "%s", f->bus_id);
		snprintf(g->uuid, sizeof(g->uuid), "%s", d ? d->uuid : "");
		g->gpu_index = d ? d->gpu_index : -1;
		g->first_wall = wall;
	}
	if (f->kind == CH_KF_LINK_UP) {
		g->ups++;
		return 0;
	}
	group_note(r, g, f, wall);
	return 0;
}

/* the fault line @f (of wall time @wall) counted in @g */
static void group_note(struct kl_run *r, struct kl_group *g, const struct ch_kfault *f, double wall)
{
	g->count++;
	g->last_wall = wall;
	g->last_boot = f->boot_sec;
	snprintf(g->last_clock, sizeof(g->last_clock), "%s", f->clock);
	snprintf(g->last_zone, sizeof(g->last_zone), "%s", f->zone);
	if (!g->last_clock[0] && !isnan(wall)) {
		time_t t = (time_t)wall;
		struct tm tm;
		gmtime_r(&t, &tm);
		strftime(g->last_clock, sizeof(g->last_clock), "%H:%M:%S", &tm);
		snprintf(g->last_zone, sizeof(g->last_zone), "UTC");
	}
	snprintf(g->text, sizeof(g->text), "%s", f->text);
	enum ch_kaction a = ch_kfault_action(&r->table, f);
	if (a > g->action)
		g->action = a;
}

/* Each line whole (a fixed buffer split a long line and read its tail as a
 * line of its own, with no time, which no --window leaves out), its NUL
 * bytes dropped (a syslog file holds runs of them after a crash, before the
 * next line); a line longer than any kernel record (KL_LINE_MAX) is no
 * kernel record and is skipped, read past without being held (a file with
 * no newline, /dev/zero, takes no more memory than one record). */
#define KL_LINE_MAX 65536
static int read_stream(struct kl_run *r, FILE *fp)
{
	char *line = malloc(KL_LINE_MAX + 1);
	size_t k = 0;
	int c, over = 0, rc = 0;
	struct ch_kmsg_parser p;
	struct ch_kfault f;

	if (!line)
		return -2;
	ch_kmsg_parser_init(&p);
	for (;;) {
		c = getc_unlocked(fp);
		if (c != EOF && c != '\n') {
			if (c && !over && k < KL_LINE_MAX)
				line[k++] = (char)c;
			else if (c)
				over = 1;
			continue;
		}
		if (c == EOF && k == 0 && !over)
			break;
		r->lines++;
		line[k] = 0;
		if (!over && ch_kmsg_parse_line(&p, line, &f) && add_fault(r, &f)) {
			rc = -2;
			break;
		}
		k = 0;
		over = 0;
		if (c == EOF)
			break;
	}
	free(line);
	return rc ? rc : ferror(fp) ? -1 : 0;
}

/* /dev/kmsg: one record per read(), until none is left (non-blocking) */
static int read_kmsg(struct kl_run *r)
{
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	char rec[8192];
	struct ch_kmsg_parser p;
	struct ch_kfault f;
	struct timespec rt, bt;

	if (fd < 0) {
		ch_error("cannot read the kernel log '/dev/kmsg': %s (give a file with --kernel-log, e.g. from journalctl -k -o short-iso)",
			 strerror(errno));
		return CH_ERR_USAGE;
	}
	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_BOOTTIME, &bt);
	r->boot_epoch = (rt.tv_sec - bt.tv_sec) + (rt.tv_nsec - bt.tv_nsec) * 1e-9;
	ch_kmsg_parser_init(&p);
	for (;;) {
		ssize_t n = read(fd, rec, sizeof(rec) - 1);
		if (n < 0 && errno == EPIPE)
			continue; /* records overwritten while we read: go on */
		if (n <= 0)
			break;
		rec[n] = 0;
		rec[strcspn(rec, "\n")] = 0; /* the continuation lines (key=value) aside */
		r->lines++;
		if (ch_kmsg_parse_line(&p, rec, &f) && add_fault(r, &f)) {
			close(fd);
			ch_error("out of memory");
			return CH_ERR_RUNTIME;
		}
	}
	close(fd);
	return 0;
}

static int read_log(struct kl_run *r)
{
	FILE *fp;
	int rc;

	r->boot_epoch = NAN;
	if (!r->o.log)
		return read_kmsg(r);
	if (!strcmp(r->o.log, "-")) {
		rc = read_stream(r, stdin);
		if (rc == -2)
			return ch_error("out of memory"), CH_ERR_RUNTIME;
		return rc ? (ch_error("cannot read the kernel log from standard input: %s", strerror(errno)), CH_ERR_USAGE) : 0;
	}
	fp = fopen(r->o.log, "r");
	if (!fp) {
		ch_error("cannot read the kernel log '%s' (--kernel-log): %s", r->o.log, strerror(errno));
		return CH_ERR_USAGE;
	}
	errno = 0;
	rc = read_stream(r, fp);
	int err = errno;
	fclose(fp);
	if (rc == -2) {
		ch_error("out of memory");
		return CH_ERR_RUNTIME;
	}
	if (rc) {
		ch_error("cannot read the kernel log '%s' (--kernel-log): %s", r->o.log, err ? strerror(err) : "a read error");
		return CH_ERR_USAGE;
	}
	return 0;
}

/* the flaps rule: a link down --flaps times drains */
static void judge_links(struct kl_run *r)
{
	for (int i = 0; i < r->ng; i++)
		if (r->g[i].kind == CH_KF_LINK_DOWN)
			r->g[i].action = r->g[i].count >= r->o.flaps ? CH_KA_DRAIN
					 : r->g[i].count > 0 ? CH_KA_INFORM : CH_KA_NONE;
}

static int group_cmp(const void *a, const void *b)
{
	const struct kl_group *x = a, *y = b;
	if (x->action != y->action)
		return (int)y->action - (int)x->action;
	int c = strcmp(x->dev, y->dev);
	return c ? c : x->code - y->code;
}

/* "Xid 79 (fallen off the bus)" and the action's detail */
static void describe(const struct kl_run *r, const struct kl_group *g, char *what, size_t n, char *detail, size_t m)
{
	const struct ch_xid_class *c;
	static const char *const aer[] = { "corrected", "uncorrected non-fatal", "uncorrected fatal" };

	switch (g->kind) {
	case CH_KF_XID:
		c = ch_xid_lookup(&r->table, g->code);
		snprintf(what, n, "Xid %d (%s)", g->code, c ? c->meaning : "not in the Xid table");
		snprintf(detail, m, "%s%s%s; ", c && !c->hardware ? "an application's or the driver's fault; " : "",
			 c ? "NVIDIA " : "an unknown code informs", c ? c->nvidia : "");
		break;
	case CH_KF_SXID:
		snprintf(what, n, "SXid %d (NVSwitch%s)", g->code, g->action >= CH_KA_DRAIN ? ", fatal" : ", non-fatal");
		snprintf(detail, m, "the line: %.120s; ", g->text);
		break;
	case CH_KF_AER:
		snprintf(what, n, "PCIe AER %s error", aer[g->code < 0 || g->code > 2 ? 2 : g->code]);
		snprintf(detail, m, "the line: %.120s; ", g->text);
		break;
	default:
		snprintf(what, n, "link down %ld times, up %ld times", g->count, g->ups);
		snprintf(detail, m, "--flaps %ld; ", r->o.flaps);
		break;
	}
}

static void print_groups(const struct kl_run *r)
{
	char what[160], detail[200], at[48];
	static const char *const todo[] = { "", "", "reset the GPU; ", "repair; ", "reboot the node; " };

	for (int i = 0; i < r->ng; i++) {
		const struct kl_group *g = &r->g[i];
		int err = g->action >= CH_KA_RESET;
		if ((!err && r->o.quiet) || g->action == CH_KA_NONE)
			continue;
		describe(r, g, what, sizeof(what), detail, sizeof(detail));
		if (g->last_clock[0])
			snprintf(at, sizeof(at), "%s%s%s", g->last_clock, g->last_zone[0] ? " " : "", g->last_zone);
		else if (!isnan(g->last_boot))
			snprintf(at, sizeof(at), "%.1f s after boot", g->last_boot);
		else
			snprintf(at, sizeof(at), "an unknown time");
		printf("%s: clusterhealth: %s %s at %s: %s (%s%s%ld line%s)\n", err ? "ERROR" : "INFO", g->dev, what, at,
		       err ? "drain" : "no drain", todo[g->action], detail, g->count, g->count == 1 ? "" : "s");
	}
}

static json_t *iso_or_null(double t)
{
	char buf[32];
	if (isnan(t))
		return json_null();
	time_t s = (time_t)t;
	struct tm tm;
	gmtime_r(&s, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return json_string(buf);
}

static json_t *groups_json(const struct kl_run *r)
{
	json_t *arr = json_array();
	for (int i = 0; i < r->ng; i++) {
		const struct kl_group *g = &r->g[i];
		const struct ch_xid_class *c = g->kind == CH_KF_XID ? ch_xid_lookup(&r->table, g->code) : NULL;
		json_t *o = json_pack("{s:s, s:s, s:s, s:i, s:s, s:s, s:I, s:I, s:o, s:o, s:s}", "device", g->dev,
				      "bus_id", g->bus, "kind", ch_kfault_kind_name(g->kind), "code", g->code,
				      "action", ch_kaction_name(g->action), "drain",
				      g->action >= CH_KA_RESET ? "yes" : "no", "lines", (json_int_t)g->count,
				      "link_ups", (json_int_t)g->ups, "first_utc", iso_or_null(g->first_wall),
				      "last_utc", iso_or_null(g->last_wall), "last_line", g->text);
		if (!o)
			continue;
		json_object_set_new(o, "gpu_index", g->gpu_index >= 0 ? json_integer(g->gpu_index) : json_null());
		json_object_set_new(o, "uuid", g->uuid[0] ? json_string(g->uuid) : json_null());
		if (c) {
			json_object_set_new(o, "mnemonic", json_string(c->mnemonic));
			json_object_set_new(o, "meaning", json_string(c->meaning));
			json_object_set_new(o, "nvidia_action", json_string(c->nvidia));
			json_object_set_new(o, "hardware", json_boolean(c->hardware));
			json_object_set_new(o, "table", json_string(c->user ? "user" : "built-in (docs/xid.md)"));
		}
		json_array_append_new(arr, o);
	}
	return arr;
}

static int write_json(const struct kl_run *r, int argc, char **argv, int drains)
{
	struct ch_result *res = ch_result_new("kernel_log", argc, argv);
	int rc;

	if (!res)
		return CH_ERR_RUNTIME;
	if (ch_result_set_path(res, r->o.json, r->o.force)) {
		ch_result_free(res);
		return CH_ERR_USAGE;
	}
	json_t *kl = json_pack("{s:s, s:o, s:o, s:I, s:I, s:I, s:o}", "source", r->o.log ? r->o.log : "/dev/kmsg",
			       "since_utc", iso_or_null(r->o.since), "window_sec",
			       isnan(r->o.window) ? json_null() : json_real(r->o.window), "lines_read", (json_int_t)r->lines,
			       "lines_before_since", (json_int_t)r->skipped_old, "lines_bad_time", (json_int_t)r->bad_time,
			       "faults", groups_json(r));
	json_object_set_new(kl, "lines_not_listed", json_integer(r->over_lines));
	json_object_set_new(kl, "lines_not_in_inventory", json_integer(r->not_inventory));
	json_object_set_new(kl, "not_listed_action", json_string(ch_kaction_name(r->over_action)));
	json_object_set_new(ch_result_results(res), "kernel_log", kl);
	rc = ch_result_finish(res, drains ? CH_ERR_CHECK : CH_OK,
			      drains ? "a kernel-log fault to drain for" : NULL);
	ch_result_free(res);
	return rc;
}

/* the folder of the state file @path: an error (CH_ERR_USAGE) when it is
 * not a folder this process can write in */
static int state_dir_check(const char *path)
{
	char dir[4096];
	ch_path_dir(path, dir, sizeof(dir));
	if (access(dir, W_OK | X_OK)) {
		ch_error("cannot write the state file '%s' (--state): its folder '%s': %s", path, dir, strerror(errno));
		return CH_ERR_USAGE;
	}
	return 0;
}

/* --state: the time of the last run in, this run's out (atomically). A
 * time after now (a clock set back since, a file copied from another
 * machine) is ignored with a warning: taken as "since" it would leave out
 * every line up to it. */
static int state_read(struct kl_run *r)
{
	FILE *fp;
	char buf[64] = "", *end;
	double t = NAN;
	struct stat st;
	/* it is written here at the end (a new file renamed over it): its
	 * folder must take it, and it must be a file, before any work */
	if (state_dir_check(r->o.state))
		return CH_ERR_USAGE;
	if (stat(r->o.state, &st) == 0 && !S_ISREG(st.st_mode)) {
		ch_error("the state file '%s' (--state) is not a regular file", r->o.state);
		return CH_ERR_USAGE;
	}
	fp = fopen(r->o.state, "r");
	if (!fp)
		return errno == ENOENT ? 0 : (ch_error("cannot read the state file '%s' (--state): %s", r->o.state, strerror(errno)), CH_ERR_USAGE);
	size_t n = fread(buf, 1, sizeof(buf) - 1, fp);
	int ok = !ferror(fp) && n < sizeof(buf) - 1;
	fclose(fp);
	buf[n] = 0;
	if (ok && !ch_parse_leading_double(buf, &t, &end))
		ok = end[strspn(end, " \t\r\n")] == 0 && t >= 0 && t <= KL_TIME_MAX;
	else
		ok = 0;
	if (!ok) {
		ch_error("the state file '%s' (--state) does not hold a time (seconds since the epoch); remove it to read the whole log", r->o.state);
		return CH_ERR_USAGE;
	}
	if (t > r->o.now) {
		ch_warn("the state file '%s' (--state) holds %.3f, %.0f s after now (%.3f): ignored, not taken as the time of "
			"the last run (the lines it would leave out are read)", r->o.state, t, t - r->o.now, r->o.now);
		return 0;
	}
	if (isnan(r->o.since) || t > r->o.since)
		r->o.since = t;
	return 0;
}

static int state_write(const struct kl_run *r)
{
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s.tmp.%d", r->o.state, (int)getpid());
	/* a new file of its own (O_EXCL, no link followed): a link planted at
	 * the temporary name cannot make it write elsewhere */
	int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	FILE *fp = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!fp || fprintf(fp, "%.3f\n", r->o.now) < 0 || fflush(fp) || fsync(fileno(fp))) {
		int err = errno;
		if (fp)
			fclose(fp);
		else if (fd >= 0)
			close(fd);
		if (fd >= 0)
			unlink(tmp);
		ch_error("cannot write the state file '%s' (--state): %s", r->o.state, strerror(err));
		return CH_ERR_RUNTIME;
	}
	fclose(fp);
	if (rename(tmp, r->o.state)) {
		unlink(tmp);
		ch_error("cannot write the state file '%s' (--state): %s", r->o.state, strerror(errno));
		return CH_ERR_RUNTIME;
	}
	return 0;
}

static int run(struct kl_run *r, int argc, char **argv)
{
	char why[512] = "";
	int rc, drains = 0;

	if (ch_xid_table_load(&r->table, r->o.table, why, sizeof(why))) {
		ch_error("%s (--xid-table)", why);
		return 2;
	}
	if (r->o.print_table) {
		print_table(&r->table);
		return 0;
	}
	if (!isnan(r->o.window) && (isnan(r->o.since) || r->o.now - r->o.window > r->o.since))
		r->o.since = r->o.now - r->o.window;
	if ((r->o.state && state_read(r)) || (r->o.inventory && load_inventory(r)))
		return 2;
	if ((rc = read_log(r)))
		return rc == CH_ERR_RUNTIME ? 4 : 2;
	if (r->bad_time)
		ch_warn("%ld fault line(s) of the kernel log skipped: an impossible time (negative, not a number, before 1970, "
			"a date or hour no clock shows such as Feb 30 or 25:14, or more than a day after now)", r->bad_time);
	if (r->not_inventory)
		ch_warn("%ld AER or link line(s) of devices that are neither a GPU nor a NIC of the inventory '%s' left out "
			"(not judged; another host's inventory leaves out this host's devices: docs/xid.md)",
			r->not_inventory, r->o.inventory);
	judge_links(r);
	qsort(r->g, (size_t)r->ng, sizeof(r->g[0]), group_cmp);
	for (int i = 0; i < r->ng; i++)
		drains += r->g[i].action >= CH_KA_RESET;
	drains += r->over_action >= CH_KA_RESET;
	print_groups(r);
	if (r->over_lines)
		printf("%s: clusterhealth: %ld more fault line%s on devices and codes past the first %d not listed one by one "
		       "(the worst action among them: %s): %s\n", r->over_action >= CH_KA_RESET ? "ERROR" : "INFO",
		       r->over_lines, r->over_lines == 1 ? "" : "s", KL_MAX_GROUPS, ch_kaction_name(r->over_action),
		       r->over_action >= CH_KA_RESET ? "drain" : "no drain");
	if (r->o.json && (rc = write_json(r, argc, argv, drains)))
		return rc == CH_ERR_USAGE ? 2 : 4;
	if (r->o.state && state_write(r))
		return 4;
	return drains ? 1 : 0;
}

int hr_kernlog_main(int argc, char **argv)
{
	struct kl_run *r = calloc(1, sizeof(*r));
	int rc;

	ch_set_prog("health_report kernel-log");
	if (!r) {
		ch_error("out of memory");
		return 4;
	}
	if (parse_opts(&r->o, argc, argv)) {
		free(r);
		return 2;
	}
	rc = run(r, argc, argv);
	ch_xid_table_free(&r->table);
	free(r->g);
	free(r->hash);
	free(r);
	return rc;
}
