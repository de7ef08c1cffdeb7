#include "hw/ch_procfs.h"
#include "base/ch_common.h"
#include "base/ch_result.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char *ch_procfs_root(void)
{
	const char *r = getenv("CH_PROCFS_ROOT");
	return r ? r : "";
}

long ch_proc_read_text(const char *path, char *buf, size_t n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t len = 0;

	if (fd < 0 || n == 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	while (len + 1 < n) {
		ssize_t r = read(fd, buf + len, n - 1 - len);
		if (r < 0) {
			int e = errno;
			if (e == EINTR)
				continue;
			close(fd);
			errno = e;
			return -1;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	buf[len] = '\0';
	close(fd);
	return (long)len;
}

int ch_proc_parse_stat(const char *text, struct ch_proc_cpu_times *out, int *ncpus)
{
	const char *p = text, *agg = NULL;
	unsigned long long v[8] = { 0 };
	int n, cpus = 0;

	memset(out, 0, sizeof(*out));
	while (p && *p) {
		if (!agg && !strncmp(p, "cpu ", 4))
			agg = p;
		else if (!strncmp(p, "cpu", 3) && p[3] >= '0' && p[3] <= '9')
			cpus++;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	if (ncpus)
		*ncpus = cpus;
	if (!agg)
		return CH_ERR_RUNTIME;
	n = sscanf(agg + 4, "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
		   &v[3], &v[4], &v[5], &v[6], &v[7]);
	if (n < 4)
		return CH_ERR_RUNTIME;
	out->user = v[0];
	out->nice = v[1];
	out->system = v[2];
	out->idle = v[3];
	out->iowait = v[4];
	out->irq = v[5];
	out->softirq = v[6];
	out->steal = v[7];
	return 0;
}

uint64_t ch_proc_cpu_ticks(const struct ch_proc_cpu_times *t)
{
	return t->user + t->nice + t->system + t->idle + t->iowait + t->irq + t->softirq + t->steal;
}

void ch_proc_cpu_util(const struct ch_proc_cpu_times *a, const struct ch_proc_cpu_times *b,
		      double *util, double *steal)
{
	uint64_t ta = ch_proc_cpu_ticks(a), tb = ch_proc_cpu_ticks(b);
	double dt, didle;

	*util = 0;
	*steal = 0;
	if (tb <= ta)
		return;
	dt = (double)(tb - ta);
	didle = ((double)b->idle - (double)a->idle) + ((double)b->iowait - (double)a->iowait);
	if (didle < 0) /* iowait may go backwards (proc(5)) */
		didle = 0;
	*util = 1.0 - didle / dt;
	if (*util < 0)
		*util = 0;
	if (*util > 1)
		*util = 1;
	*steal = b->steal < a->steal ? 0 : (double)(b->steal - a->steal) / dt;
}

int ch_proc_busy_pct(const struct ch_proc_cpu_times *a, const struct ch_proc_cpu_times *b,
		     uint64_t run_ticks, double *busy_pct, double *run_pct)
{
	uint64_t ta = ch_proc_cpu_ticks(a), tb = ch_proc_cpu_ticks(b);
	double util, steal, total, run;

	*busy_pct = *run_pct = NAN;
	if (tb <= ta)
		return -1;
	total = (double)(tb - ta);
	ch_proc_cpu_util(a, b, &util, &steal);
	run = 100.0 * (double)run_ticks / total;
	if (run > 100)
		run = 100;
	*run_pct = run;
	*busy_pct = 100.0 * util - run;
	if (*busy_pct < 0)
		*busy_pct = 0;
	return 0;
}

int ch_proc_parse_psi(const char *text, double *avg10, uint64_t *total_us)
{
	const char *p = text;
	double a10, a60, a300;
	unsigned long long t;

	while (p && *p) {
		if (!strncmp(p, "some ", 5))
			break;
		p = strchr(p, '\n');
		if (p)
			p++;
	}
	if (!p || !*p)
		return CH_ERR_RUNTIME;
	if (sscanf(p, "some avg10=%lf avg60=%lf avg300=%lf total=%llu", &a10, &a60, &a300, &t) != 4 ||
	    !(a10 >= 0 && a10 <= 100))
		return CH_ERR_RUNTIME;
	*avg10 = a10;
	*total_us = t;
	return 0;
}

int ch_proc_parse_loadavg(const char *text, double *l1)
{
	double a, b, c;
	int run, all;

	if (sscanf(text, "%lf %lf %lf %d/%d", &a, &b, &c, &run, &all) != 5 || !(a >= 0) || !isfinite(a))
		return CH_ERR_RUNTIME;
	*l1 = a;
	return 0;
}

int ch_proc_parse_pid_stat(const char *text, uint64_t *ticks)
{
	const char *p = strrchr(text, ')');
	unsigned long long ut, st;
	char state;

	/* after "(COMM)": state (3), ppid, pgrp, session, tty_nr, tpgid, flags,
	 * minflt, cminflt, majflt, cmajflt (13), utime (14), stime (15) */
	if (!p || sscanf(p + 1, " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &state, &ut, &st) != 3)
		return CH_ERR_RUNTIME;
	*ticks = (uint64_t)(ut + st);
	return 0;
}

/* ------------------------------------------------------------ sampling */

static void why_file(char *why, size_t n, const char *root, const char *path, int err)
{
	const char *p = path + strlen(root);
	snprintf(why, n, "%s: %s", p, err == ENOENT ? "absent" : strerror(err));
}

/* the run's processes' utime + stime; -1 when one cannot be read (@why) */
static int run_ticks(const char *root, const long *pids, int npids, uint64_t *sum, char *why, size_t n)
{
	char path[4200], buf[4096];
	long self = (long)getpid();
	int i;

	*sum = 0;
	if (!pids || npids <= 0) {
		pids = &self;
		npids = 1;
	}
	for (i = 0; i < npids; i++) {
		uint64_t t;
		snprintf(path, sizeof(path), "%s/proc/%ld/stat", root, pids[i]);
		if (ch_proc_read_text(path, buf, sizeof(buf)) < 0) {
			why_file(why, n, root, path, errno);
			return -1;
		}
		if (ch_proc_parse_pid_stat(buf, &t) != 0) {
			snprintf(why, n, "%s: not in the format \"PID (COMM) STATE ...\"", path + strlen(root));
			return -1;
		}
		*sum += t;
	}
	return 0;
}

static int read_stat(const char *root, struct ch_proc_cpu_times *t, int *ncpus, char *why, size_t n)
{
	char path[4200], buf[65536];

	snprintf(path, sizeof(path), "%s/proc/stat", root);
	if (ch_proc_read_text(path, buf, sizeof(buf)) < 0) {
		why_file(why, n, root, path, errno);
		return -1;
	}
	if (ch_proc_parse_stat(buf, t, ncpus) != 0) {
		snprintf(why, n, "/proc/stat: no aggregate \"cpu \" line with at least 4 fields");
		return -1;
	}
	return 0;
}

static void sleep_sec(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

int ch_host_load_sample(const char *root, double interval_sec, const long *pids, int npids,
			struct ch_host_load *out)
{
	struct ch_proc_cpu_times a, b;
	uint64_t tot_us, r0 = 0, r1 = 0;
	char path[4200], buf[4096];
	int have_run0, have_stat, ncpus = 0;

	if (!root)
		root = "";
	memset(out, 0, sizeof(*out));
	out->loadavg_1m = out->psi_some_avg10_pct = out->cpu_busy_pct = out->run_cpu_pct = NAN;
	out->interval_sec = interval_sec;

	snprintf(path, sizeof(path), "%s/proc/loadavg", root);
	if (ch_proc_read_text(path, buf, sizeof(buf)) < 0)
		why_file(out->why_loadavg, sizeof(out->why_loadavg), root, path, errno);
	else if (ch_proc_parse_loadavg(buf, &out->loadavg_1m) != 0)
		snprintf(out->why_loadavg, sizeof(out->why_loadavg),
			 "/proc/loadavg: not in the format \"L1 L5 L15 R/T PID\"");

	snprintf(path, sizeof(path), "%s/proc/pressure/cpu", root);
	if (ch_proc_read_text(path, buf, sizeof(buf)) < 0) {
		int e = errno;
		if (e == ENOENT)
			snprintf(out->why_psi, sizeof(out->why_psi), "/proc/pressure/cpu absent (kernel without PSI)");
		else if (e == EOPNOTSUPP)
			snprintf(out->why_psi, sizeof(out->why_psi), "/proc/pressure/cpu: PSI disabled (boot with psi=1)");
		else
			why_file(out->why_psi, sizeof(out->why_psi), root, path, e);
	} else if (ch_proc_parse_psi(buf, &out->psi_some_avg10_pct, &tot_us) != 0) {
		snprintf(out->why_psi, sizeof(out->why_psi),
			 "/proc/pressure/cpu: no line \"some avg10=X avg60=Y avg300=Z total=T\"");
	}

	have_stat = read_stat(root, &a, &ncpus, out->why_busy, sizeof(out->why_busy)) == 0;
	have_run0 = run_ticks(root, pids, npids, &r0, out->why_run, sizeof(out->why_run)) == 0;
	out->online_cpus = have_stat ? ncpus : 0;
	if (have_stat) {
		sleep_sec(interval_sec);
		if (read_stat(root, &b, NULL, out->why_busy, sizeof(out->why_busy)) != 0) {
			have_stat = 0;
		} else {
			int have_run1 = have_run0 &&
					run_ticks(root, pids, npids, &r1, out->why_run, sizeof(out->why_run)) == 0;
			uint64_t run = have_run1 && r1 >= r0 ? r1 - r0 : 0;
			if (ch_proc_busy_pct(&a, &b, run, &out->cpu_busy_pct, &out->run_cpu_pct) != 0) {
				snprintf(out->why_busy, sizeof(out->why_busy),
					 "/proc/stat: no CPU tick elapsed in %.3g s between two readings", interval_sec);
				snprintf(out->why_run, sizeof(out->why_run), "%s", out->why_busy);
			} else if (!have_run1) {
				/* the run's own ticks unknown: the busy share includes them */
				out->run_cpu_pct = NAN;
				snprintf(out->why_busy, sizeof(out->why_busy),
					 "includes this run's own processes (their CPU time could not be read: %.180s)",
					 out->why_run);
			}
		}
	}
	if (!have_stat)
		snprintf(out->why_run, sizeof(out->why_run), "%s", out->why_busy);
	ch_utc_now(out->utc, sizeof(out->utc));
	return 0;
}

/* ------------------------------------------------------------ JSON */

static json_t *num_or_null(double v)
{
	return isfinite(v) ? json_real(v) : json_null();
}

/* percentages to 0.01 (/proc's own precision for the pressure and the
 * load average): 5e-15 from the subtraction reads 0 */
static json_t *pct_or_null(double v)
{
	return isfinite(v) ? json_real(round(v * 100.0) / 100.0) : json_null();
}

static json_t *sample_json(const struct ch_host_load *l)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	json_object_set_new(o, "utc", json_string(l->utc));
	json_object_set_new(o, "loadavg_1m", num_or_null(l->loadavg_1m));
	json_object_set_new(o, "cpu_pressure_some_avg10_pct", num_or_null(l->psi_some_avg10_pct));
	json_object_set_new(o, "cpu_busy_pct", pct_or_null(l->cpu_busy_pct));
	json_object_set_new(o, "run_cpu_pct", pct_or_null(l->run_cpu_pct));
	return o;
}

/* reasons[field]: @why of a null value, "after: why" for the end of the run,
 * both when they differ */
static void add_reason(json_t *reasons, const char *field, const char *when, const char *why)
{
	const char *old = json_string_value(json_object_get(reasons, field));
	char buf[600];

	if (!why || !*why)
		return;
	if (!old) {
		snprintf(buf, sizeof(buf), "%s%s", when, why);
	} else {
		if (strstr(old, why))
			return;
		snprintf(buf, sizeof(buf), "%s; %s%s", old, when, why);
	}
	json_object_set_new(reasons, field, json_string(buf));
}

static void add_reasons(json_t *reasons, const struct ch_host_load *l, const char *when)
{
	/* a value that was read but needs a word (busy share with the run's
	 * own processes in it) has its reason too */
	if (!isfinite(l->loadavg_1m))
		add_reason(reasons, "loadavg_1m", when, l->why_loadavg);
	if (!isfinite(l->psi_some_avg10_pct))
		add_reason(reasons, "cpu_pressure_some_avg10_pct", when, l->why_psi);
	if (l->why_busy[0])
		add_reason(reasons, "cpu_busy_pct", when, l->why_busy);
	if (!isfinite(l->run_cpu_pct))
		add_reason(reasons, "run_cpu_pct", when, l->why_run);
}

static json_t *per_core(int procs, int threads, int cpus)
{
	return cpus > 0 && procs > 0 && threads > 0 ? json_real((double)procs * threads / cpus) : json_null();
}

json_t *ch_conditions_json(const struct ch_host_load *before, const struct ch_host_load *after,
			   int procs_on_host, int threads_per_proc)
{
	json_t *o = json_object(), *reasons = json_object();
	int cpus = before->online_cpus;

	if (!o || !reasons) {
		json_decref(o);
		json_decref(reasons);
		return NULL;
	}
	if (cpus <= 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		cpus = n > 0 ? (int)n : 0;
	}
	if (procs_on_host < 1)
		procs_on_host = 1;
	if (threads_per_proc < 1)
		threads_per_proc = 1;
	json_object_set_new(o, "before", sample_json(before));
	json_object_set_new(o, "after", after ? sample_json(after) : json_null());
	json_object_set_new(o, "online_cpus", cpus > 0 ? json_integer(cpus) : json_null());
	json_object_set_new(o, "procs_on_host", json_integer(procs_on_host));
	json_object_set_new(o, "threads_per_proc", json_integer(threads_per_proc));
	json_object_set_new(o, "per_core", per_core(procs_on_host, threads_per_proc, cpus));
	json_object_set_new(o, "cpu_busy_interval_sec", json_real(before->interval_sec));
	add_reasons(reasons, before, "");
	if (after)
		add_reasons(reasons, after, "after: ");
	if (cpus <= 0)
		json_object_set_new(reasons, "online_cpus", json_string(before->why_busy[0] ? before->why_busy :
			"neither /proc/stat nor sysconf(_SC_NPROCESSORS_ONLN) gave a count"));
	json_object_set_new(o, "reasons", reasons);
	return o;
}

json_t *ch_conditions_set_after(const json_t *cond, const struct ch_host_load *after, const char *why)
{
	json_t *o, *reasons;

	if (!json_is_object(cond) || !(o = json_deep_copy(cond)))
		return NULL;
	reasons = json_object_get(o, "reasons");
	if (!json_is_object(reasons)) {
		reasons = json_object();
		json_object_set_new(o, "reasons", reasons);
	}
	if (after) {
		json_object_set_new(o, "after", sample_json(after));
		add_reasons(reasons, after, "after: ");
		json_object_del(reasons, "after");
	} else {
		json_object_set_new(o, "after", json_null());
		if (why && *why)
			json_object_set_new(reasons, "after", json_string(why));
	}
	return o;
}

int ch_conditions_set_load(json_t *cond, int procs_on_host, int threads_per_proc)
{
	json_t *cpus;

	if (!json_is_object(cond) || procs_on_host < 1 || threads_per_proc < 1)
		return CH_ERR_USAGE;
	cpus = json_object_get(cond, "online_cpus");
	json_object_set_new(cond, "procs_on_host", json_integer(procs_on_host));
	json_object_set_new(cond, "threads_per_proc", json_integer(threads_per_proc));
	json_object_set_new(cond, "per_core", per_core(procs_on_host, threads_per_proc,
						      json_is_integer(cpus) ? (int)json_integer_value(cpus) : 0));
	return 0;
}
