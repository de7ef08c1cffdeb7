/*
 * ch_powercap.c - GPU power limits and their state file (see ch_powercap.h).
 */
#include "hw/ch_powercap.h"
#include "base/ch_common.h"
#include "base/ch_result.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* NVML's types as nvml.h declares them: return codes an int enum, a device
 * a pointer; nvmlViolationTime_t; NVML_PERF_POLICY_POWER 0, _THERMAL 1;
 * NVML_ERROR_NO_PERMISSION 4. */
typedef int nv_ret;
typedef void *nv_dev;
struct nv_violation { unsigned long long reference_time, violation_time; };
struct nv_pci { char legacy[16]; unsigned domain, bus, device, dev_id, subsys; char bus_id[32]; };
#define NV_OK 0
#define NV_NO_PERMISSION 4

typedef nv_ret (*fn_u)(nv_dev, unsigned *);
typedef nv_ret (*fn_uu)(nv_dev, unsigned *, unsigned *);
typedef nv_ret (*fn_set)(nv_dev, unsigned);
typedef nv_ret (*fn_str)(nv_dev, char *, unsigned);
typedef nv_ret (*fn_pci)(nv_dev, struct nv_pci *);
typedef nv_ret (*fn_viol)(nv_dev, int, struct nv_violation *);
typedef nv_ret (*fn_by_uuid)(const char *, nv_dev *);

#define SYM(type, name) ((type)ch_nvml_symbol(name))
#define READBACK_TOL_W 0.5
#define RESTORE_WAIT_SEC 5.0
#define LOCK_WAIT_SEC 10.0
#define MAX_HELD 64

static void say(char *why, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *why, size_t n, const char *fmt, ...)
{
	va_list ap;
	if (!why || !n)
		return;
	va_start(ap, fmt);
	vsnprintf(why, n, fmt, ap);
	va_end(ap);
}

const char *ch_powercap_state_path(const char *option)
{
	const char *e = getenv("CH_POWER_STATE");
	if (option)
		return option;
	return e && *e ? e : CH_POWERCAP_STATE_DEFAULT;
}

/* one unsigned mW reading as W; NAN when n/a, with the reason in @why */
static double get_w(const char *fname, nv_dev d, char *why, size_t n)
{
	fn_u f = SYM(fn_u, fname);
	unsigned mw = 0;
	nv_ret r;
	if (!f) {
		say(why, n, "%s is not in this driver's libnvidia-ml.so.1", fname);
		return NAN;
	}
	if ((r = f(d, &mw)) != NV_OK) {
		say(why, n, "%s: %s", fname, ch_nvml_error_string(r));
		return NAN;
	}
	return mw / 1000.0;
}

double ch_powercap_enforced_w(ch_nvml_dev_t dev)
{
	return get_w("nvmlDeviceGetEnforcedPowerLimit", (nv_dev)dev, NULL, 0);
}

double ch_powercap_limit_w(ch_nvml_dev_t dev)
{
	return get_w("nvmlDeviceGetPowerManagementLimit", (nv_dev)dev, NULL, 0);
}

double ch_powercap_violation_ms(ch_nvml_dev_t dev, int thermal)
{
	fn_viol f = SYM(fn_viol, "nvmlDeviceGetViolationStatus");
	struct nv_violation v;
	if (!f || f((nv_dev)dev, thermal ? 1 : 0, &v) != NV_OK)
		return NAN;
	return (double)v.violation_time / 1e6;
}

/* "00000000:1B:00.0" (NVML) -> "0000:1b:00.0" */
static void bus_id_short(const char *in, char *out, size_t n)
{
	unsigned dom, bus, dev, fn;
	if (sscanf(in, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) == 4)
		snprintf(out, n, "%04x:%02x:%02x.%x", dom, bus, dev, fn);
	else
		snprintf(out, n, "%s", in);
}

int ch_powercap_read(ch_nvml_dev_t dev, struct ch_powercap_gpu *g, char *why, size_t n)
{
	nv_dev d = (nv_dev)dev;
	fn_str uuid = SYM(fn_str, "nvmlDeviceGetUUID");
	fn_pci pci = SYM(fn_pci, "nvmlDeviceGetPciInfo_v3");
	fn_uu cons = SYM(fn_uu, "nvmlDeviceGetPowerManagementLimitConstraints");
	unsigned lo = 0, hi = 0;
	struct nv_pci p;
	nv_ret r;

	memset(g, 0, sizeof(*g));
	g->dev = dev;
	g->limit_w = g->enforced_w = g->default_w = g->min_w = g->max_w = NAN;
	if (!uuid || (r = uuid(d, g->uuid, sizeof(g->uuid))) != NV_OK) {
		say(why, n, "nvmlDeviceGetUUID: %s", uuid ? ch_nvml_error_string(r) : "not in this driver");
		return CH_ERR_UNAVAILABLE;
	}
	if (pci && pci(d, &p) == NV_OK)
		bus_id_short(p.bus_id, g->pci_bus_id, sizeof(g->pci_bus_id));
	if (isnan(g->limit_w = get_w("nvmlDeviceGetPowerManagementLimit", d, why, n)) ||
	    isnan(g->enforced_w = get_w("nvmlDeviceGetEnforcedPowerLimit", d, why, n)) ||
	    isnan(g->default_w = get_w("nvmlDeviceGetPowerManagementDefaultLimit", d, why, n)))
		return CH_ERR_UNAVAILABLE;
	if (!cons || (r = cons(d, &lo, &hi)) != NV_OK) {
		say(why, n, "nvmlDeviceGetPowerManagementLimitConstraints: %s",
		    cons ? ch_nvml_error_string(r) : "not in this driver");
		return CH_ERR_UNAVAILABLE;
	}
	g->min_w = lo / 1000.0;
	g->max_w = hi / 1000.0;
	return 0;
}

static int set_raw(ch_nvml_dev_t dev, double w, char *why, size_t n)
{
	fn_set f = SYM(fn_set, "nvmlDeviceSetPowerManagementLimit");
	nv_ret r;

	if (!f) {
		say(why, n, "nvmlDeviceSetPowerManagementLimit is not in this driver's libnvidia-ml.so.1");
		return CH_ERR_UNAVAILABLE;
	}
	r = f((nv_dev)dev, (unsigned)lround(w * 1000.0));
	if (r == NV_OK)
		return 0;
	if (r == NV_NO_PERMISSION) {
		say(why, n, "setting a GPU power limit needs root: nvmlDeviceSetPowerManagementLimit answered %s "
		    "(running as uid %ld)", ch_nvml_error_string(r), (long)geteuid());
		return CH_ERR_UNAVAILABLE;
	}
	say(why, n, "nvmlDeviceSetPowerManagementLimit(%.0f W): %s", w, ch_nvml_error_string(r));
	return CH_ERR_RUNTIME;
}

/* Does this process hold the privilege the driver asks of
 * nvmlDeviceSetPowerManagementLimit (root: CAP_SYS_ADMIN in the effective
 * set, /proc/self/status "CapEff", bit 21)? 1 yes, 0 no; without /proc,
 * the effective uid 0. */
static int privileged(void)
{
	char line[256];
	unsigned long long eff;
	int got = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && got < 0 && fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			got = (eff >> 21) & 1ULL;
	if (f)
		fclose(f);
	return got >= 0 ? got : geteuid() == 0;
}

int ch_powercap_probe(const struct ch_powercap_gpu *g, char *why, size_t n)
{
	if (!SYM(fn_set, "nvmlDeviceSetPowerManagementLimit")) {
		say(why, n, "nvmlDeviceSetPowerManagementLimit is not in this driver's libnvidia-ml.so.1");
		return CH_ERR_UNAVAILABLE;
	}
	if (isnan(ch_powercap_limit_w(g->dev)) || !(g->min_w > 0) || !(g->max_w >= g->min_w)) {
		say(why, n, "the power limit or its constraints cannot be read on %s "
		    "(nvmlDeviceGetPowerManagementLimit, nvmlDeviceGetPowerManagementLimitConstraints)", g->uuid);
		return CH_ERR_UNAVAILABLE;
	}
	if (!privileged()) {
		say(why, n, "setting a GPU power limit needs root: this process lacks CAP_SYS_ADMIN (running as uid %ld)",
		    (long)geteuid());
		return CH_ERR_UNAVAILABLE;
	}
	return 0;
}

static double now_sec(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void nap(double sec)
{
	struct timespec ts = { (time_t)sec, (long)((sec - floor(sec)) * 1e9) };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

int ch_powercap_wait_enforced(ch_nvml_dev_t dev, double w, double timeout_sec, double *got, double *waited)
{
	double t0 = now_sec(), v;

	for (;;) {
		v = ch_powercap_enforced_w(dev);
		*got = v;
		*waited = now_sec() - t0;
		if (!isnan(v) && fabs(v - w) <= READBACK_TOL_W)
			return 0;
		if (*waited >= timeout_sec)
			break;
		nap(0.02);
	}
	return !isnan(v) && v < w ? CH_ERR_CHECK : CH_ERR_RUNTIME;
}

/* ------------------------------------------------------------ the state file */

/* The process's start time (/proc/PID/stat field 22, clock ticks since
 * boot): with the pid it names one process, even after the pid is reused.
 * "" when it cannot be read (the process is gone). */
static void pid_start(long pid, char *out, size_t n)
{
	char path[64], buf[1024], *p;
	FILE *f;
	size_t len;
	int field;

	out[0] = '\0';
	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	if (!(f = fopen(path, "r")))
		return;
	len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = '\0';
	if (!(p = strrchr(buf, ')')))
		return;
	/* after ") " come fields 3, 4, ...: field 22 is the 20th of them */
	for (field = 2; *p && field < 22; p++)
		if (*p == ' ')
			field++;
	len = strcspn(p, " \n");
	if (len && len < n) {
		memcpy(out, p, len);
		out[len] = '\0';
	}
}

static int pid_alive(long pid, const char *start)
{
	char now[32];
	if (pid <= 0 || !start)
		return 0;
	pid_start(pid, now, sizeof(now));
	return now[0] && !strcmp(now, start);
}

static void this_host(char *buf, size_t n)
{
	if (gethostname(buf, n) != 0)
		snprintf(buf, n, "unknown");
	buf[n - 1] = '\0';
}

/* mkdir -p of @path's directory (mode 0755). */
static int make_dir_of(const char *path, char *why, size_t n)
{
	char dir[4096], *p;

	if (snprintf(dir, sizeof(dir), "%s", path) >= (int)sizeof(dir)) {
		say(why, n, "state file name too long");
		return CH_ERR_RUNTIME;
	}
	if (!(p = strrchr(dir, '/')) || p == dir)
		return 0;
	*p = '\0';
	for (p = dir + 1; *p; p++)
		if (*p == '/') {
			*p = '\0';
			if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
				say(why, n, "cannot create directory '%s': %s", dir, strerror(errno));
				return CH_ERR_RUNTIME;
			}
			*p = '/';
		}
	if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		say(why, n, "cannot create directory '%s': %s", dir, strerror(errno));
		return CH_ERR_RUNTIME;
	}
	return 0;
}

/* Who may own the state file and its folder: root or this process's user. */
static int trusted_owner(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

/* @what ("the power-limit state file", "its folder") at @path with @st:
 * owned by root or this user and writable by no one else; 0 or -1 with @why. */
static int check_owner_mode(const char *what, const char *path, const struct stat *st, char *why, size_t n)
{
	if (!trusted_owner(st->st_uid)) {
		say(why, n, "%s '%s' is owned by uid %ld, neither root nor this user (uid %ld): not trusting it",
		    what, path, (long)st->st_uid, (long)geteuid());
		return -1;
	}
	if (st->st_mode & (S_IWGRP | S_IWOTH)) {
		say(why, n, "%s '%s' is writable by others (mode %04o): not trusting it; make it writable by its "
		    "owner only (chmod go-w)", what, path, (unsigned)(st->st_mode & 07777));
		return -1;
	}
	return 0;
}

/* The folder of @state: owned by root or this user, writable by no one
 * else (anyone who may write there may replace the file). */
static int check_dir_of(const char *state, char *why, size_t n)
{
	char dir[4096], *p;
	struct stat st;

	snprintf(dir, sizeof(dir), "%s", state);
	if (!(p = strrchr(dir, '/')))
		snprintf(dir, sizeof(dir), ".");
	else if (p == dir)
		dir[1] = '\0';
	else
		*p = '\0';
	if (stat(dir, &st) != 0) {
		if (errno == ENOENT)
			return -2;
		say(why, n, "cannot inspect the folder '%s' of the power-limit state file: %s", dir, strerror(errno));
		return -1;
	}
	return check_owner_mode("the folder of the power-limit state file", dir, &st, why, n);
}

/* An exclusive flock() on "STATE.lock" (made when @create), waited for up
 * to LOCK_WAIT_SEC; returns the descriptor, -1 with @why (-2: no lock file
 * and !@create: nothing to lock). */
static int lock_state(const char *state, int create, char *why, size_t n)
{
	char path[4200];
	double t0 = now_sec();
	int fd;

	snprintf(path, sizeof(path), "%s.lock", state);
	if (create && make_dir_of(state, why, n) != 0)
		return -1;
	if (check_dir_of(state, why, n) == -1)
		return -1;
	fd = open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW | (create ? O_CREAT : 0), 0644); /* never through a link */
	if (fd < 0) {
		if (!create && errno == ENOENT)
			return -2;
		say(why, n, "cannot open the lock file '%s': %s", path, strerror(errno));
		return -1;
	}
	{
		struct stat st;
		if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || !trusted_owner(st.st_uid)) {
			say(why, n, "the lock file '%s' is not a regular file owned by root or this user: not using it", path);
			close(fd);
			return -1;
		}
	}
	while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		if (errno != EWOULDBLOCK && errno != EINTR) {
			say(why, n, "cannot lock '%s': %s", path, strerror(errno));
			close(fd);
			return -1;
		}
		if (now_sec() - t0 > LOCK_WAIT_SEC) {
			say(why, n, "'%s' stayed locked by another process for %.0f s", path, LOCK_WAIT_SEC);
			close(fd);
			return -1;
		}
		nap(0.05);
	}
	return fd;
}

static void unlock_state(int fd)
{
	if (fd >= 0) {
		flock(fd, LOCK_UN);
		close(fd);
	}
}

/* Open @state for reading, checked before a byte is read: never through a
 * link, never blocking (a named pipe), a regular file of at most
 * STATE_MAX_BYTES, owned by root or this user and writable by no one else,
 * in a folder that is the same. Returns the descriptor, -2 when the file
 * does not exist, -1 with @why. */
#define STATE_MAX_BYTES (1 << 20)
static int state_open(const char *state, char *why, size_t n)
{
	struct stat st;
	int fd, rc;

	if ((rc = check_dir_of(state, why, n)) == -1)
		return -1;
	if (rc == -2)
		return -2;
	fd = open(state, O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOENT)
			return -2;
		say(why, n, "cannot open the power-limit state file '%s': %s%s", state, strerror(errno),
		    errno == ELOOP ? " (a symbolic link: not followed)" : "");
		return -1;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		say(why, n, "the power-limit state file '%s' is not a regular file: not reading it", state);
		close(fd);
		return -1;
	}
	if (check_owner_mode("the power-limit state file", state, &st, why, n) != 0) {
		close(fd);
		return -1;
	}
	if (st.st_size > STATE_MAX_BYTES) {
		say(why, n, "the power-limit state file '%s' is %lld bytes, more than %d: not reading it", state,
		    (long long)st.st_size, STATE_MAX_BYTES);
		close(fd);
		return -1;
	}
	return fd;
}

/* The state document: a new one when the file does not exist; NULL with
 * @why when it cannot be read, is not trusted (state_open()) or is not ours. */
static json_t *state_load(const char *state, char *why, size_t n)
{
	json_error_t err;
	json_t *doc;
	const char *schema;
	int fd = state_open(state, why, n);

	if (fd == -1)
		return NULL;
	if (fd == -2)
		return json_pack("{s:s,s:i,s:s,s:[]}", "schema", CH_POWERCAP_STATE_SCHEMA, "version", 1, "note",
				 "GPU power limits changed by clusterhealth's roofline --power-limits and the limits to "
				 "put back; each GPU is removed when restored (docs/roofline.md, \"Power caps\")", "gpus");
	doc = json_loadfd(fd, 0, &err);
	close(fd);
	if (!doc) {
		say(why, n, "cannot read the power-limit state file '%s': %s (line %d); it may name GPUs left "
		    "capped: restore them (nvidia-smi -i UUID -pl WATTS) and remove it", state, err.text, err.line);
		return NULL;
	}
	schema = json_string_value(json_object_get(doc, "schema"));
	if (!schema || strcmp(schema, CH_POWERCAP_STATE_SCHEMA) || !json_is_array(json_object_get(doc, "gpus"))) {
		say(why, n, "'%s' is not a clusterhealth power-limit state file (no schema \"%s\" with a \"gpus\" "
		    "array): not touching it", state, CH_POWERCAP_STATE_SCHEMA);
		json_decref(doc);
		return NULL;
	}
	return doc;
}

/* Write @doc, or remove the file when it lists no GPU. */
static int state_store(const char *state, json_t *doc, char *why, size_t n)
{
	if (json_array_size(json_object_get(doc, "gpus")) == 0) {
		if (unlink(state) != 0 && errno != ENOENT) {
			say(why, n, "cannot remove '%s': %s", state, strerror(errno));
			return CH_ERR_RUNTIME;
		}
		return 0;
	}
	ch_clear_last_error();
	if (ch_json_write_atomic(state, doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0) {
		say(why, n, "cannot write the power-limit state file: %s", ch_last_error());
		return CH_ERR_RUNTIME;
	}
	return 0;
}

static int entry_index(json_t *gpus, const char *uuid)
{
	size_t i;
	json_t *e;
	json_array_foreach(gpus, i, e)
		if (json_is_string(json_object_get(e, "uuid")) && !strcmp(json_string_value(json_object_get(e, "uuid")), uuid))
			return (int)i;
	return -1;
}

/* ------------------------------------------------------------ what this process holds */

static struct {
	pthread_mutex_t lock;
	int closing;                 /* a signal's restore began: no new limit */
	int atexit_done;
	char state[4096];
	struct held {
		int used;
		struct ch_powercap_gpu g;
		double original_w;
	} h[MAX_HELD];
} pc = { .lock = PTHREAD_MUTEX_INITIALIZER };

static struct held *find_held(const char *uuid)
{
	int i;
	for (i = 0; i < MAX_HELD; i++)
		if (pc.h[i].used && !strcmp(pc.h[i].g.uuid, uuid))
			return &pc.h[i];
	return NULL;
}

static void at_exit_restore(void)
{
	char note[1024];
	if (ch_powercap_held() > 0 && ch_powercap_restore_all(note, sizeof(note)) != 0 && note[0])
		ch_warn("at exit: %s", note);
}

int ch_powercap_held(void)
{
	int i, k = 0;
	pthread_mutex_lock(&pc.lock);
	for (i = 0; i < MAX_HELD; i++)
		k += pc.h[i].used;
	pthread_mutex_unlock(&pc.lock);
	return k;
}

int ch_powercap_begin(const char *state, const struct ch_powercap_gpu *g, const double *caps_w, int ncaps,
		      char *why, size_t n)
{
	char host[256], start[32], now[32];
	json_t *doc, *gpus, *e, *caps;
	double orig;
	int fd, k, rc, i, slot = -1;

	pthread_mutex_lock(&pc.lock);
	if (pc.closing) {
		pthread_mutex_unlock(&pc.lock);
		say(why, n, "restoring the power limits after a signal: no new limit");
		return CH_ERR_RUNTIME;
	}
	if (pc.state[0] && strcmp(pc.state, state)) {
		pthread_mutex_unlock(&pc.lock);
		say(why, n, "one state file per process ('%s' already in use)", pc.state);
		return CH_ERR_USAGE;
	}
	for (i = 0; i < MAX_HELD && slot < 0; i++)
		if (!pc.h[i].used)
			slot = i;
	pthread_mutex_unlock(&pc.lock);
	if (slot < 0) {
		say(why, n, "too many GPUs capped at once (at most %d)", MAX_HELD);
		return CH_ERR_USAGE;
	}
	if (find_held(g->uuid)) {
		say(why, n, "GPU %s is already capped by this run", g->uuid);
		return CH_ERR_USAGE;
	}
	if ((fd = lock_state(state, 1, why, n)) < 0)
		return CH_ERR_RUNTIME;
	if (!(doc = state_load(state, why, n))) {
		unlock_state(fd);
		return CH_ERR_RUNTIME;
	}
	gpus = json_object_get(doc, "gpus");
	this_host(host, sizeof(host));
	if ((k = entry_index(gpus, g->uuid)) >= 0) {
		json_t *o = json_array_get(gpus, (size_t)k);
		long pid = (long)json_integer_value(json_object_get(o, "pid"));
		const char *oh = json_string_value(json_object_get(o, "host"));
		if (oh && !strcmp(oh, host) && pid_alive(pid, json_string_value(json_object_get(o, "pid_start")))) {
			say(why, n, "GPU %s is being capped by another run now (pid %ld, recorded in '%s'): one sweep "
			    "per GPU at a time", g->uuid, pid, state);
			json_decref(doc);
			unlock_state(fd);
			return CH_ERR_USAGE;
		}
		/* a dead run's entry that ch_powercap_recover() could not clear:
		 * its original limit is the one to put back, not today's */
		say(why, n, "GPU %s is still recorded in '%s' by a run that died (pid %ld) with its original limit "
		    "%.0f W: restore it first (roofline --power-restore)", g->uuid, state, pid,
		    json_number_value(json_object_get(o, "original_limit_w")));
		json_decref(doc);
		unlock_state(fd);
		return CH_ERR_RUNTIME;
	}
	/* the original is read here, under the lock, from a GPU no live run
	 * holds: a reading taken before (another run's cap, restored since)
	 * must not become the limit this run puts back */
	if (!isnan(orig = ch_powercap_limit_w(g->dev)) && fabs(orig - g->limit_w) > READBACK_TOL_W) {
		say(why, n, "the power limit of GPU %s changed from %.1f W to %.1f W while this run started (another "
		    "run's cap being put back?): no limit changed; run again", g->uuid, g->limit_w, orig);
		json_decref(doc);
		unlock_state(fd);
		return CH_ERR_RUNTIME;
	}
	pid_start((long)getpid(), start, sizeof(start));
	caps = json_array();
	for (i = 0; i < ncaps; i++)
		json_array_append_new(caps, json_real(caps_w[i]));
	e = json_pack("{s:s,s:s,s:s,s:f,s:o,s:I,s:s,s:s}", "uuid", g->uuid, "pci_bus_id", g->pci_bus_id, "host", host,
		      "original_limit_w", g->limit_w, "caps_w", caps, "pid", (json_int_t)getpid(), "pid_start", start,
		      "since_utc", ch_utc_now(now, sizeof(now)));
	if (!e || json_array_append_new(gpus, e) != 0) {
		say(why, n, "out of memory");
		json_decref(doc);
		unlock_state(fd);
		return CH_ERR_RUNTIME;
	}
	rc = state_store(state, doc, why, n);
	json_decref(doc);
	unlock_state(fd);
	if (rc != 0)
		return CH_ERR_RUNTIME;
	ch_nvml_init(NULL, 0); /* NVML stays loaded while a limit is ours (released by ch_powercap_restore()) */
	pthread_mutex_lock(&pc.lock);
	snprintf(pc.state, sizeof(pc.state), "%s", state);
	pc.h[slot].used = 1;
	pc.h[slot].g = *g;
	pc.h[slot].original_w = g->limit_w;
	if (!pc.atexit_done) {
		atexit(at_exit_restore);
		pc.atexit_done = 1;
	}
	pthread_mutex_unlock(&pc.lock);
	return 0;
}

int ch_powercap_set(const struct ch_powercap_gpu *g, double w, char *why, size_t n)
{
	int rc;

	pthread_mutex_lock(&pc.lock);
	if (pc.closing) {
		rc = CH_ERR_RUNTIME;
		say(why, n, "restoring the power limits after a signal: no new limit");
	} else if (!find_held(g->uuid)) {
		rc = CH_ERR_RUNTIME;
		say(why, n, "GPU %s was not recorded in the state file: not changing its limit", g->uuid);
	} else {
		rc = set_raw(g->dev, w, why, n);
	}
	pthread_mutex_unlock(&pc.lock);
	return rc;
}

/* Remove @uuid from the state file. */
static int state_drop(const char *state, const char *uuid, char *why, size_t n)
{
	json_t *doc;
	int fd, k, rc;

	if ((fd = lock_state(state, 0, why, n)) == -2)
		return 0;
	if (fd < 0)
		return CH_ERR_RUNTIME;
	if (!(doc = state_load(state, why, n))) {
		unlock_state(fd);
		return CH_ERR_RUNTIME;
	}
	rc = 0;
	if ((k = entry_index(json_object_get(doc, "gpus"), uuid)) >= 0) {
		json_array_remove(json_object_get(doc, "gpus"), (size_t)k);
		rc = state_store(state, doc, why, n);
	}
	json_decref(doc);
	unlock_state(fd);
	return rc;
}

/* Set @h's original limit back and drop it; called with pc.lock held. */
static int restore_held(struct held *h, double wait_sec, double *readback_w, char *why, size_t n)
{
	double got, waited;
	int rc;

	*readback_w = NAN;
	if ((rc = set_raw(h->g.dev, h->original_w, why, n)) != 0)
		return CH_ERR_RUNTIME;
	ch_powercap_wait_enforced(h->g.dev, h->original_w, wait_sec, &got, &waited);
	*readback_w = ch_powercap_limit_w(h->g.dev);
	if (isnan(*readback_w) || fabs(*readback_w - h->original_w) > READBACK_TOL_W) {
		say(why, n, "the limit of %s reads %.1f W after setting %.1f W back", h->g.uuid, *readback_w, h->original_w);
		return CH_ERR_RUNTIME;
	}
	h->used = 0;
	return state_drop(pc.state, h->g.uuid, why, n);
}

int ch_powercap_restore(const struct ch_powercap_gpu *g, double *readback_w, char *why, size_t n)
{
	struct held *h;
	int rc;

	*readback_w = NAN;
	pthread_mutex_lock(&pc.lock);
	h = find_held(g->uuid);
	rc = h ? restore_held(h, RESTORE_WAIT_SEC, readback_w, why, n) : 0;
	if (h && !h->used)
		ch_nvml_shutdown(); /* the reference ch_powercap_begin() took */
	pthread_mutex_unlock(&pc.lock);
	return rc;
}

int ch_powercap_restore_all(char *note, size_t n)
{
	struct timespec until;
	size_t len = 0;
	int i, done = 0, failed = 0, locked;

	if (note && n)
		note[0] = '\0';
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 5; /* a set in progress in another thread ends first */
	locked = pthread_mutex_timedlock(&pc.lock, &until) == 0;
	pc.closing = 1;
	for (i = 0; i < MAX_HELD; i++) {
		char why[512] = "";
		double rb;
		struct held *h = &pc.h[i];
		const char *uuid = h->g.uuid;
		double orig = h->original_w;
		if (!h->used)
			continue;
		if (restore_held(h, 2.0, &rb, why, sizeof(why)) == 0) {
			done++;
			if (note && len < n)
				len += (size_t)snprintf(note + len, n - len, "%s%s %.0f W", done + failed == 1 ?
							"power limits restored: " : ", ", uuid, orig);
		} else {
			failed++;
			if (note && len < n)
				len += (size_t)snprintf(note + len, n - len, "%sNOT restored %s to %.0f W (%s; the next "
							"roofline start restores it from '%s')", done + failed == 1 ? "" : ", ",
							uuid, orig, why, pc.state);
		}
	}
	if (locked)
		pthread_mutex_unlock(&pc.lock);
	return failed ? CH_ERR_RUNTIME : done;
}

void ch_powercap_on_signal(void *ctx, char *note, size_t n)
{
	(void)ctx;
	if (ch_powercap_held() > 0)
		ch_powercap_restore_all(note, n);
	else if (note && n)
		note[0] = '\0';
}

/* ------------------------------------------------------------ recovery */

static int near(double a, double b)
{
	return fabs(a - b) <= READBACK_TOL_W;
}

/* Is @w within @d's settable range (nvmlDeviceGetPowerManagementLimitConstraints)?
 * 1 yes; 0 with @why (outside, or the range cannot be read). */
static int in_constraints(nv_dev d, double w, char *why, size_t n)
{
	fn_uu cons = SYM(fn_uu, "nvmlDeviceGetPowerManagementLimitConstraints");
	unsigned lo = 0, hi = 0;

	if (!cons || cons(d, &lo, &hi) != NV_OK) {
		say(why, n, "the GPU's power limit constraints cannot be read: not setting %.1f W", w);
		return 0;
	}
	if (w < lo / 1000.0 - 1e-9 || w > hi / 1000.0 + 1e-9) {
		say(why, n, "original_limit_w %.1f W is outside the range this GPU accepts, %.0f-%.0f W "
		    "(nvmlDeviceGetPowerManagementLimitConstraints): a damaged or forged entry, not set", w, lo / 1000.0,
		    hi / 1000.0);
		return 0;
	}
	return 1;
}

/* Handle one dead run's entry @e; returns 1 when it is to be dropped. */
static int recover_one(const json_t *e, json_t *rep, int *status)
{
	const char *uuid = json_string_value(json_object_get(e, "uuid"));
	double orig = json_number_value(json_object_get(e, "original_limit_w")), cur;
	fn_by_uuid by_uuid = SYM(fn_by_uuid, "nvmlDeviceGetHandleByUUID");
	const json_t *caps = json_object_get(e, "caps_w"), *c;
	char why[512] = "";
	nv_dev d = NULL;
	int ours = 0;
	size_t i;

	if (!uuid || !json_is_number(json_object_get(e, "original_limit_w"))) {
		json_object_set_new(rep, "action", json_string("not restored"));
		json_object_set_new(rep, "why", json_string("the entry has no uuid or original_limit_w"));
		*status = CH_ERR_UNAVAILABLE;
		return 0;
	}
	if (!by_uuid || by_uuid(uuid, &d) != NV_OK) {
		json_object_set_new(rep, "action", json_string("not restored"));
		json_object_set_new(rep, "why", json_string(by_uuid ? "no GPU with this UUID here" :
				    "nvmlDeviceGetHandleByUUID is not in this driver"));
		*status = CH_ERR_UNAVAILABLE;
		return 0;
	}
	cur = ch_powercap_limit_w((ch_nvml_dev_t)d);
	json_object_set_new(rep, "found_limit_w", isnan(cur) ? json_null() : json_real(cur));
	if (!(orig > 0) || !in_constraints(d, orig, why, sizeof(why))) {
		/* a forged or damaged entry: never set a limit the GPU would not
		 * have had; the entry stays for a person to look at */
		json_object_set_new(rep, "action", json_string("refused"));
		json_object_set_new(rep, "why", json_string(why[0] ? why : "original_limit_w is not a positive number"));
		*status = CH_ERR_RUNTIME;
		return 0;
	}
	if (!isnan(cur) && near(cur, orig)) {
		json_object_set_new(rep, "action", json_string("already at its original limit"));
		return 1;
	}
	json_array_foreach(caps, i, c)
		ours |= json_is_number(c) && !isnan(cur) && near(cur, json_number_value(c));
	if (!isnan(cur) && !ours) {
		json_object_set_new(rep, "action", json_string("left as found: changed since by someone else"));
		return 1;
	}
	if (set_raw((ch_nvml_dev_t)d, orig, why, sizeof(why)) != 0) {
		json_object_set_new(rep, "action", json_string("not restored"));
		json_object_set_new(rep, "why", json_string(why));
		*status = CH_ERR_UNAVAILABLE;
		return 0;
	}
	json_object_set_new(rep, "action", json_string("restored"));
	return 1;
}

int ch_powercap_recover(const char *state, json_t **report)
{
	char why[1024] = "", host[256];
	json_t *doc, *gpus, *keep, *e;
	int fd, status = 0, nvml = 0, changed = 0, any = 0;
	size_t i;

	*report = json_array();
	if (!*report)
		return CH_ERR_RUNTIME;
	if (access(state, F_OK) != 0)
		return 0;
	if ((fd = lock_state(state, 0, why, sizeof(why))) == -2)
		fd = -1; /* a state file without its lock file: read it as it is */
	else if (fd < 0) {
		ch_error("%s", why);
		return CH_ERR_RUNTIME;
	}
	if (!(doc = state_load(state, why, sizeof(why)))) {
		unlock_state(fd);
		ch_error("%s", why);
		return CH_ERR_RUNTIME;
	}
	gpus = json_object_get(doc, "gpus");
	keep = json_array();
	this_host(host, sizeof(host));
	json_array_foreach(gpus, i, e) {
		const char *eh = json_string_value(json_object_get(e, "host"));
		long pid = (long)json_integer_value(json_object_get(e, "pid"));
		json_t *rep;
		int drop;
		if (!eh || strcmp(eh, host) || pid_alive(pid, json_string_value(json_object_get(e, "pid_start")))) {
			json_array_append(keep, e);
			continue;
		}
		any = 1;
		if (!nvml) {
			char nwhy[256];
			if (ch_nvml_init(nwhy, sizeof(nwhy)) != 0) {
				ch_error("the power-limit state file '%s' names GPUs a run that died left capped, but NVML is "
					 "unavailable (%s): cannot restore them", state, nwhy);
				json_decref(keep);
				json_decref(doc);
				unlock_state(fd);
				return CH_ERR_UNAVAILABLE;
			}
			nvml = 1;
		}
		rep = json_pack("{s:O?,s:O?,s:O?,s:O?,s:O?,s:O?}", "uuid", json_object_get(e, "uuid"), "pci_bus_id",
				json_object_get(e, "pci_bus_id"), "host", json_object_get(e, "host"), "pid",
				json_object_get(e, "pid"), "since_utc", json_object_get(e, "since_utc"),
				"original_limit_w", json_object_get(e, "original_limit_w"));
		drop = recover_one(e, rep, &status);
		if (drop)
			changed = 1;
		else
			json_array_append(keep, e);
		{
			const char *act = json_string_value(json_object_get(rep, "action"));
			const char *u = json_string_value(json_object_get(rep, "uuid"));
			double fl = json_number_value(json_object_get(rep, "found_limit_w"));
			double ol = json_number_value(json_object_get(rep, "original_limit_w"));
			const char *since = json_string_value(json_object_get(e, "since_utc"));
			if (act && (!strcmp(act, "not restored") || !strcmp(act, "refused")))
				ch_error("GPU %s: run pid %ld (since %s) died before restoring its power limit; original %.0f W: "
					 "NOT restored: %s; the entry stays in '%s'", u ? u : "?", pid, since ? since : "?", ol,
					 json_string_value(json_object_get(rep, "why")), state);
			else
				ch_warn("GPU %s: run pid %ld (since %s) died before restoring its power limit; found %.0f W, "
					"original %.0f W: %s (state file '%s')", u ? u : "?", pid, since ? since : "?", fl, ol,
					act ? act : "?", state);
		}
		json_array_append_new(*report, rep);
	}
	if (changed) {
		json_object_set(doc, "gpus", keep);
		if (state_store(state, doc, why, sizeof(why)) != 0) {
			ch_error("%s", why);
			status = CH_ERR_RUNTIME;
		}
	}
	json_decref(keep);
	json_decref(doc);
	unlock_state(fd);
	if (nvml)
		ch_nvml_shutdown();
	return status ? status : any;
}
