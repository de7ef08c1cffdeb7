/*
 * fake_nvml_power.c - the power side of the stand-in libnvidia-ml.so.1
 * (tests/fake-nvml): settable power limits with constraints and a default,
 * and a power and clock model that responds to the enforced limit, so that
 * roofline's power-cap sweep (--power-limits), its read-back, its restores
 * and its refusal without root are tested on a machine without a GPU.
 *
 * The GPUs of fake_nvml.c (FAKE_NVML_GPUS, default 2):
 *   constraints 200-700 W, default limit 700 W (nvmlDeviceGetPowerManagement*)
 *   limits at first: gpu1 500 W (an administrator's cap), every other 700 W
 *
 * Environment (read on every call, so a test can change it between runs):
 *   FAKE_NVML_STATE=FILE    the limits persist in FILE across processes, as
 *                           a driver keeps them until reset or reboot (a run
 *                           killed with -9 leaves its cap for the next run);
 *                           without it they live in the process
 *   FAKE_NVML_NO_PERMISSION=1  nvmlDeviceSetPowerManagementLimit answers
 *                           NVML_ERROR_NO_PERMISSION, as it does for a user
 *                           who is not root
 *   FAKE_NVML_SET_LOG=FILE  every nvmlDeviceSetPowerManagementLimit call
 *                           is appended to FILE as "GPU MW" (before its
 *                           answer: a refused call is logged too), so a
 *                           test sees every limit a run tried to write
 *   FAKE_NVML_READBACK_MS=N the enforced limit follows a new limit N ms
 *                           after it was set (default 0)
 *   FAKE_NVML_OTHER_LIMIT_W=N  another limiter (a chassis or system limit)
 *                           holds the enforced limit at or below N W
 *   FAKE_NVML_LOAD=compute  the GPUs run a steady compute-bound load: SM
 *                           clock, power, energy and clock event reasons
 *                           follow the model below; otherwise they are idle
 *                           (the readings of fake_nvml.c: SM 345 MHz, 70 W)
 *
 * The model under load (a cubic voltage/frequency curve: dynamic power
 * ~ f V^2 with V ~ f near the top of the curve):
 *   P(f) = 80 W + 600 W x (f / 1980 MHz)^3, so 680 W at the top clock;
 *   under an enforced limit L < 680 W the clock drops to
 *   f = 1980 x ((L - 80) / 600)^(1/3) MHz (whole MHz, at least 210) and the
 *   power is held at L, with clock event reason sw_power_cap; the memory
 *   clock stays at 2619 MHz. Energy (nvmlDeviceGetTotalEnergyConsumption)
 *   is the integral of that power over wall-clock time in this process;
 *   power violation time (nvmlDeviceGetViolationStatus, NVML_PERF_POLICY_POWER)
 *   grows with wall-clock time while the clock is held down.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef int nvmlReturn_t;
typedef struct fake_dev { int i; } *nvmlDevice_t;

#define OK 0
#define INVALID_ARGUMENT 2
#define NOT_SUPPORTED 3
#define NO_PERMISSION 4
#define NGPU 16 /* at most: fake_nvml.c's FAKE_MAX_GPUS */

#define MIN_MW 200000u
#define MAX_MW 700000u
#define DEFAULT_MW 700000u
#define TOP_MHZ 1980.0
#define IDLE_W 80.0
#define DYN_W 600.0

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned i, nvmlDevice_t *d); /* fake_nvml.c */
/* fake_nvml.c's busy-interval model (the energy-window tests): it answers
 * for a GPU a test drives through fake_nvml_busy() */
int fake_busy_energy_mj(unsigned d, unsigned long long *mj);
int fake_busy_violation_ns(unsigned d, int policy, unsigned long long *ref_us, unsigned long long *ns);
int fake_nvml_gpu_count(void); /* fake_nvml.c: FAKE_NVML_GPUS, -1 when invalid */

struct gpu_state {
	unsigned limit_mw;    /* the limit last set */
	unsigned prev_mw;     /* the limit before it */
	double set_at;        /* CLOCK_REALTIME seconds of the last set, 0 never */
};

#define W700 { 700000u, 700000u, 0 }
static struct gpu_state mem_state[NGPU] = { W700, { 500000u, 500000u, 0 }, W700, W700, W700, W700, W700, W700,
					    W700, W700, W700, W700, W700, W700, W700, W700 };

static double now_real(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double now_mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double env_num(const char *name, double dflt)
{
	const char *e = getenv(name);
	char *end;
	double v;
	if (!e || !*e)
		return dflt;
	v = strtod(e, &end);
	return *end ? dflt : v;
}

/* The file's state as last read or written, and when (monotonic): reads
 * within CACHE_SEC reuse it, so a call costs no file read (another
 * process's change is seen at most that late). */
#define CACHE_SEC 0.005
static struct gpu_state cache[NGPU];
static double cache_at = -1;

/* The state: from FAKE_NVML_STATE when set (a missing file is the initial
 * state), else the process's own. */
static void load(struct gpu_state *s)
{
	const char *path = getenv("FAKE_NVML_STATE");
	FILE *f;
	int i;

	memcpy(s, mem_state, sizeof(mem_state));
	if (!path || !*path)
		return;
	if (cache_at >= 0 && now_mono() - cache_at < CACHE_SEC) {
		memcpy(s, cache, sizeof(cache));
		return;
	}
	f = fopen(path, "r");
	if (f) {
		/* a line a GPU; GPUs past the file's last line (it was written
		 * with a smaller FAKE_NVML_GPUS) keep their first limits */
		for (i = 0; i < NGPU; i++)
			if (fscanf(f, "%u %u %lf", &s[i].limit_mw, &s[i].prev_mw, &s[i].set_at) != 3) {
				memcpy(s + i, mem_state + i, sizeof(*s) * (NGPU - i));
				break;
			}
		fclose(f);
	}
	memcpy(cache, s, sizeof(cache));
	cache_at = now_mono();
}

static int save(const struct gpu_state *s)
{
	const char *path = getenv("FAKE_NVML_STATE");
	char tmp[4096];
	FILE *f;
	int i;

	if (!path || !*path) {
		memcpy(mem_state, s, sizeof(mem_state));
		return 0;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
	f = fopen(tmp, "w");
	if (!f)
		return -1;
	for (i = 0; i < NGPU && i < fake_nvml_gpu_count(); i++) /* one line a GPU of this node */
		fprintf(f, "%u %u %.6f\n", s[i].limit_mw, s[i].prev_mw, s[i].set_at);
	if (fclose(f) != 0 || rename(tmp, path) != 0) {
		unlink(tmp);
		cache_at = -1;
		return -1;
	}
	memcpy(cache, s, sizeof(cache));
	cache_at = now_mono();
	return 0;
}

static int idx(nvmlDevice_t d)
{
	return d && d->i >= 0 && d->i < NGPU && d->i < fake_nvml_gpu_count() ? d->i : -1;
}

/* The enforced limit now: the set limit once FAKE_NVML_READBACK_MS have
 * passed since it was set (the one before until then), at most
 * FAKE_NVML_OTHER_LIMIT_W. */
static unsigned enforced_mw(int i)
{
	struct gpu_state s[NGPU];
	double delay = env_num("FAKE_NVML_READBACK_MS", 0) / 1000.0, other = env_num("FAKE_NVML_OTHER_LIMIT_W", 0);
	unsigned v;

	load(s);
	v = s[i].set_at > 0 && now_real() - s[i].set_at < delay ? s[i].prev_mw : s[i].limit_mw;
	if (other > 0 && v > other * 1000.0)
		v = (unsigned)(other * 1000.0);
	return v;
}

static int busy(void)
{
	const char *e = getenv("FAKE_NVML_LOAD");
	return e && !strcmp(e, "compute");
}

/* SM clock (MHz) and power (W) of GPU @i now. */
static void model(int i, double *mhz, double *w)
{
	double lim = enforced_mw(i) / 1000.0, f;

	if (!busy()) {
		*mhz = 345;
		*w = 70;
		return;
	}
	if (lim >= IDLE_W + DYN_W) {
		*mhz = TOP_MHZ;
		*w = IDLE_W + DYN_W;
		return;
	}
	f = floor(TOP_MHZ * cbrt((lim - IDLE_W) / DYN_W));
	*mhz = f < 210 ? 210 : f;
	*w = lim;
}

nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *bus, nvmlDevice_t *d)
{
	unsigned dom, b, dev, fn;
	if (!bus || sscanf(bus, "%x:%x:%x.%x", &dom, &b, &dev, &fn) != 4 || dom || dev || fn)
		return INVALID_ARGUMENT;
	if (b == 0x1b)
		return nvmlDeviceGetHandleByIndex_v2(0, d);
	if (b == 0x43)
		return nvmlDeviceGetHandleByIndex_v2(1, d);
	return INVALID_ARGUMENT;
}

nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, nvmlDevice_t *d)
{
	if (uuid && !strcmp(uuid, "GPU-00000000-0000-0000-0000-000000000000"))
		return nvmlDeviceGetHandleByIndex_v2(0, d);
	if (uuid && !strcmp(uuid, "GPU-00000000-0000-0000-0000-000000000001"))
		return nvmlDeviceGetHandleByIndex_v2(1, d);
	return INVALID_ARGUMENT;
}

nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t d, unsigned *mw)
{
	if (idx(d) < 0)
		return INVALID_ARGUMENT;
	*mw = DEFAULT_MW;
	return OK;
}

nvmlReturn_t nvmlDeviceGetPowerManagementLimitConstraints(nvmlDevice_t d, unsigned *min, unsigned *max)
{
	if (idx(d) < 0)
		return INVALID_ARGUMENT;
	*min = MIN_MW;
	*max = MAX_MW;
	return OK;
}

nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t d, unsigned *mw)
{
	struct gpu_state s[NGPU];
	if (idx(d) < 0)
		return INVALID_ARGUMENT;
	load(s);
	*mw = s[idx(d)].limit_mw;
	return OK;
}

nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t d, unsigned *mw)
{
	if (idx(d) < 0)
		return INVALID_ARGUMENT;
	*mw = enforced_mw(idx(d));
	return OK;
}

nvmlReturn_t nvmlDeviceSetPowerManagementLimit(nvmlDevice_t d, unsigned mw)
{
	struct gpu_state s[NGPU];
	int i = idx(d);

	const char *log = getenv("FAKE_NVML_SET_LOG");

	if (log && *log) {
		FILE *f = fopen(log, "a");
		if (f) {
			fprintf(f, "%d %u\n", i, mw);
			fclose(f);
		}
	}
	if (i < 0 || mw < MIN_MW || mw > MAX_MW)
		return INVALID_ARGUMENT;
	if (env_num("FAKE_NVML_NO_PERMISSION", 0) != 0)
		return NO_PERMISSION;
	load(s);
	if (mw != s[i].limit_mw) {
		s[i].prev_mw = enforced_mw(i);
		s[i].limit_mw = mw;
		s[i].set_at = now_real();
	}
	return save(s) == 0 ? OK : 999; /* NVML_ERROR_UNKNOWN */
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned *mw)
{
	double mhz, w;
	if (idx(d) < 0)
		return INVALID_ARGUMENT;
	model(idx(d), &mhz, &w);
	*mw = (unsigned)lround(w * 1000.0);
	return OK;
}

/* energy and violation time of each GPU, integrated in this process */
static struct {
	double last, mj, viol_ns;
} acc[NGPU];

static void integrate(int i)
{
	double t = now_mono(), mhz, w;
	model(i, &mhz, &w);
	if (acc[i].last == 0) {
		acc[i].mj = 1.0e6 * (i + 1); /* the counter runs since the driver was loaded */
	} else {
		acc[i].mj += w * (t - acc[i].last) * 1000.0;
		if (busy() && mhz < TOP_MHZ)
			acc[i].viol_ns += (t - acc[i].last) * 1e9;
	}
	acc[i].last = t;
}

nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t d, unsigned long long *mj)
{
	if (idx(d) < 0)
		return INVALID_ARGUMENT;
	if (fake_busy_energy_mj((unsigned)idx(d), mj))
		return OK;
	integrate(idx(d));
	*mj = (unsigned long long)acc[idx(d)].mj;
	return OK;
}

struct violation_time { unsigned long long reference_time, violation_time; };

/* policy 0: NVML_PERF_POLICY_POWER, 1: NVML_PERF_POLICY_THERMAL */
nvmlReturn_t nvmlDeviceGetViolationStatus(nvmlDevice_t d, int policy, struct violation_time *v)
{
	if (idx(d) < 0 || policy < 0)
		return INVALID_ARGUMENT;
	if (policy > 1)
		return NOT_SUPPORTED;
	if (fake_busy_violation_ns((unsigned)idx(d), policy, &v->reference_time, &v->violation_time))
		return OK;
	integrate(idx(d));
	v->reference_time = (unsigned long long)(now_real() * 1e6);
	v->violation_time = policy == 0 ? (unsigned long long)acc[idx(d)].viol_ns : 0;
	return OK;
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, int type, unsigned *v)
{
	double mhz, w;
	if (idx(d) < 0)
		return INVALID_ARGUMENT;
	model(idx(d), &mhz, &w);
	*v = type == 1 ? (unsigned)mhz : 2619; /* 1: NVML_CLOCK_SM, 2: NVML_CLOCK_MEM */
	return OK;
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, int sensor, unsigned *v)
{
	double mhz, w;
	if (idx(d) < 0 || sensor != 0)
		return INVALID_ARGUMENT;
	model(idx(d), &mhz, &w);
	*v = (unsigned)(30 + w / 20); /* a steady 33 C idle, 64 C at 680 W */
	return OK;
}

nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(nvmlDevice_t d, unsigned long long *r)
{
	double mhz, w;
	if (idx(d) < 0)
		return INVALID_ARGUMENT;
	if (!busy()) {
		*r = d->i == 1 ? 0x9ULL : 0x1ULL; /* gpu_idle (0x1), hw_slowdown (0x8) */
		return OK;
	}
	model(idx(d), &mhz, &w);
	*r = mhz < TOP_MHZ ? 0x4ULL : 0; /* sw_power_cap */
	return OK;
}
