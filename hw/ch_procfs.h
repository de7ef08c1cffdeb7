/*
 * ch_procfs.h - the host's load, read from Linux procfs: the CPU pressure
 * (PSI), the load average and the share of CPU time that was busy, for the
 * "conditions" a result file records before and after its run
 * (docs/results-schema.md), and the parsers of those files that
 * loader_contention uses as well.
 *
 * Every reader takes a root directory prepended to the kernel's paths: ""
 * (or NULL) reads this machine's /proc; tests pass a directory holding a
 * "proc" tree (tests/data/procfs). The harness uses ch_procfs_root(): the
 * environment variable CH_PROCFS_ROOT, meant for tests, as CH_SYSFS_ROOT is
 * for sysfs (hw/ch_sysfs.h).
 *
 * Files and formats read (proc(5), Documentation/accounting/psi.rst):
 *   /proc/loadavg        "1.93 0.96 0.42 2/106 17363": runnable and
 *                        uninterruptible tasks, 1, 5 and 15 minute averages
 *   /proc/pressure/cpu   "some avg10=37.20 avg60=13.00 avg300=9.84 total=44681229":
 *                        percent of the last 10 s some runnable task waited
 *                        for a CPU (Linux 4.20+, CONFIG_PSI; absent otherwise)
 *   /proc/stat           "cpu  user nice system idle iowait irq softirq steal ...",
 *                        then one "cpuN" line per online CPU, in USER_HZ ticks
 *   /proc/PID/stat       fields 14 and 15 (utime, stime) of a process, in
 *                        USER_HZ ticks, all its threads included
 *
 * What cannot be read is NAN here and JSON null in a document, with the
 * reason beside it.
 */
#ifndef CH_PROCFS_H
#define CH_PROCFS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The busy share of the CPUs is sampled over this interval, seconds. */
#define CH_HOST_LOAD_INTERVAL_SEC 0.2

/* A host too busy for a measurement to be judged (health_report's
 * measurement_noisy rule, its defaults; loader_contention's own verdict):
 * CPU pressure ("some avg10", %) at or above CH_NOISY_PRESSURE_PCT, or
 * other work on CH_NOISY_BUSY_PCT % or more of the CPUs. */
#define CH_NOISY_PRESSURE_PCT 20
#define CH_NOISY_BUSY_PCT 50

/**
 * ch_procfs_root - the procfs root for this process: $CH_PROCFS_ROOT when
 * set (for tests: a directory holding a "proc" tree), else "" (this
 * machine). Returns a borrowed string, never NULL.
 */
const char *ch_procfs_root(void);

/**
 * ch_proc_read_text - read a small text file (at most @n - 1 bytes) into
 * @buf, NUL-terminated. Returns the length, or -1 (errno set) when the file
 * cannot be opened or read.
 */
long ch_proc_read_text(const char *path, char *buf, size_t n);

/* The aggregate "cpu" line of /proc/stat, in USER_HZ ticks (proc(5)). */
struct ch_proc_cpu_times {
	uint64_t user, nice, system, idle, iowait, irq, softirq, steal;
};

/**
 * ch_proc_parse_stat - parse the first "cpu " line of /proc/stat text.
 * @out:   [out] the eight fields; missing later fields (old kernels) read 0.
 * @ncpus: [out] the number of "cpuN" lines (online CPUs); may be NULL.
 * Returns 0, or CH_ERR_RUNTIME when there is no such line or it has fewer
 * than 4 fields.
 */
int ch_proc_parse_stat(const char *text, struct ch_proc_cpu_times *out, int *ncpus);

/** ch_proc_cpu_ticks - the sum of the eight fields of @t (guest time is inside user). */
uint64_t ch_proc_cpu_ticks(const struct ch_proc_cpu_times *t);

/**
 * ch_proc_cpu_util - host CPU utilisation between two /proc/stat samples.
 * @a, @b: [in] earlier and later sample.
 * @util:  [out] 1 - (idle + iowait) / total, steal counted as busy (the
 *         guest did not get that time), in [0, 1].
 * @steal: [out] steal / total.
 * total is ch_proc_cpu_ticks(b) - ch_proc_cpu_ticks(a). Both are 0 when no
 * tick elapsed.
 */
void ch_proc_cpu_util(const struct ch_proc_cpu_times *a, const struct ch_proc_cpu_times *b,
		      double *util, double *steal);

/**
 * ch_proc_busy_pct - the busy share of all CPUs between two /proc/stat
 * samples, less the ticks of this run's own processes.
 * @a, @b:      [in] earlier and later sample.
 * @run_ticks:  [in] utime + stime the run's processes used between the two
 *              samples (0 when none are known).
 * @busy_pct:   [out] 100 x (busy ticks - @run_ticks) / total ticks, busy as
 *              in ch_proc_cpu_util(), at least 0.
 * @run_pct:    [out] 100 x @run_ticks / total ticks, at most 100.
 * Returns 0, or -1 when no tick elapsed (both NAN).
 */
int ch_proc_busy_pct(const struct ch_proc_cpu_times *a, const struct ch_proc_cpu_times *b,
		     uint64_t run_ticks, double *busy_pct, double *run_pct);

/**
 * ch_proc_parse_psi - parse /proc/pressure/cpu text (kernel PSI, 4.20+):
 * "some avg10=X avg60=Y avg300=Z total=T".
 * @avg10: [out] the "some" 10-second average, percent.
 * @total_us: [out] the "some" cumulative stall time, microseconds.
 * Returns 0, or CH_ERR_RUNTIME when the "some" line is missing or malformed.
 */
int ch_proc_parse_psi(const char *text, double *avg10, uint64_t *total_us);

/**
 * ch_proc_parse_loadavg - parse /proc/loadavg text: "L1 L5 L15 R/T PID".
 * @l1: [out] the 1-minute load average (>= 0).
 * Returns 0, or CH_ERR_RUNTIME when malformed.
 */
int ch_proc_parse_loadavg(const char *text, double *l1);

/**
 * ch_proc_parse_pid_stat - parse /proc/PID/stat text: "PID (COMM) S ..."
 * (COMM may hold spaces and parentheses: the fields start after the last
 * ')').
 * @ticks: [out] utime + stime (fields 14 and 15), USER_HZ ticks.
 * Returns 0, or CH_ERR_RUNTIME when malformed.
 */
int ch_proc_parse_pid_stat(const char *text, uint64_t *ticks);

/* The host's load at one moment (and the busy share over a short interval). */
struct ch_host_load {
	char utc[32];              /* when the sample ended, YYYY-MM-DDTHH:MM:SSZ */
	double loadavg_1m;         /* /proc/loadavg; NAN: not read */
	double psi_some_avg10_pct; /* /proc/pressure/cpu "some avg10"; NAN: not read */
	double cpu_busy_pct;       /* all CPUs over the interval, less the run's own
				    * processes; NAN: not read */
	double run_cpu_pct;        /* the run's own processes over the interval, % of
				    * all CPUs; NAN: not read */
	double interval_sec;       /* the interval cpu_busy_pct was sampled over */
	int online_cpus;           /* "cpuN" lines of /proc/stat; 0: not read */
	/* why a value is NAN ("" when it was read) */
	char why_loadavg[256], why_psi[256], why_busy[256], why_run[256];
};

/**
 * ch_host_load_sample - read the host's load now: the load average and the
 * CPU pressure, then /proc/stat and the run's processes' /proc/PID/stat
 * twice, @interval_sec apart (the calling thread sleeps meanwhile).
 * @root:         [in] procfs root ("" or NULL: this machine).
 * @interval_sec: [in] seconds between the two readings (> 0).
 * @pids:         [in] the run's own processes on this host, whose CPU time
 *                is taken out of cpu_busy_pct (their own load is not the
 *                host's); NULL or @npids 0: this process alone.
 * @out:          [out] the sample; a value that cannot be read is NAN with
 *                its reason (the file absent, unparsable, no tick elapsed).
 * Returns 0 (a host without procfs gives a sample of NANs and reasons).
 */
int ch_host_load_sample(const char *root, double interval_sec, const long *pids, int npids,
			struct ch_host_load *out);

/**
 * ch_conditions_json - the envelope's "conditions" object
 * (docs/results-schema.md):
 *   {"before": SAMPLE, "after": SAMPLE | null, "online_cpus": N,
 *    "procs_on_host": P, "threads_per_proc": T, "per_core": P x T / N | null,
 *    "cpu_busy_interval_sec": 0.2, "reasons": {field: why}}
 * SAMPLE = {"utc", "loadavg_1m", "cpu_pressure_some_avg10_pct",
 *           "cpu_busy_pct", "run_cpu_pct"}, null values with their reason.
 * @before: [in] the sample taken as the run started.
 * @after:  [in] the sample taken as it finished, NULL while it runs.
 * Returns a new object, NULL when out of memory.
 */
json_t *ch_conditions_json(const struct ch_host_load *before, const struct ch_host_load *after,
			   int procs_on_host, int threads_per_proc);

/**
 * ch_conditions_set_after - a copy of @cond with "after" set from @after
 * (its null values' reasons added under "reasons"), or, when @after is NULL,
 * "after" null with @why under reasons.after.
 * @cond: [in] a "conditions" object (borrowed, not changed).
 * Returns a new object, NULL when @cond is not an object or out of memory.
 */
json_t *ch_conditions_set_after(const json_t *cond, const struct ch_host_load *after, const char *why);

/**
 * ch_conditions_set_load - set procs_on_host and threads_per_proc of the
 * "conditions" object @cond in place and recompute per_core from its
 * online_cpus (null when that is unknown).
 * Returns 0, or CH_ERR_USAGE when @cond is not an object or a count is < 1.
 */
int ch_conditions_set_load(json_t *cond, int procs_on_host, int threads_per_proc);

#ifdef __cplusplus
}
#endif
#endif
