/*
 * fake_nvml.c - a stand-in libnvidia-ml.so.1 for tests on machines without
 * a GPU: two GPUs (FAKE_NVML_GPUS, below) with fixed, documented readings, so that the NVML
 * inventory (hw/ch_nvml.c, ch_nvml_gpu_inventory) is exercised end to end
 * through dlopen. Built by `make test` as $(B)/tests/fake-nvml/libnvidia-ml.so.1
 * (with fake_nvml_power.c) and used by tests/cli/inventory.sh and
 * tests/cli/powercap.sh through LD_LIBRARY_PATH.
 *
 * Signatures and constants follow the NVML API Reference Guide. Readings:
 *   gpu0 0000:1b:00.0: PCIe Gen5 x16 of Gen5 x16, 18 NVLink links up,
 *        CRC FLIT errors 2 on link 0, ECC on and clean, a row remap
 *        pending, 700 W of 700 W, SM 345 of 1980 MHz, reasons gpu_idle
 *   gpu1 0000:43:00.0: PCIe Gen5 x8 of Gen5 x16, link 3 of 18 down, NVLink
 *        error counters not supported, 1 volatile uncorrectable ECC error,
 *        500 W of 700 W, SM applications clock 1410 of 1980 MHz, reasons
 *        gpu_idle and hw_slowdown
 *   gpu2 .. gpuN-1 (FAKE_NVML_GPUS=N, a whole number 1 to 16, default 2;
 *        an 8-GPU node is the gate's stand-in): healthy, as gpu0 without
 *        its faults: PCIe Gen5 x16, 18 links up, NVLink error counters 0,
 *        ECC on and clean, no row remap, 700 W of 700 W, SM 1980 of 1980
 *        MHz, reasons gpu_idle; bus ids 52, 61, 9d, c3, d1, df (a DGX H100's
 *        after 1b and 43), then 0c, 2c, 6c, 7c, 8c, ac, bc, ec; UUID and
 *        serial end in the index. Any other FAKE_NVML_GPUS is refused:
 *        nvmlInit_v2 answers NVML_ERROR_UNKNOWN, whose nvmlErrorString
 *        names the variable and the accepted range (also on stderr)
 * nvmlDeviceGetRetiredPages and nvmlDeviceGetRetiredPagesPendingStatus are
 * deliberately absent (as in a driver without them).
 *
 * Power limits, power, energy, clocks, temperature and clock event reasons
 * are in fake_nvml_power.c (a model that responds to a settable limit; the
 * readings above are its idle ones).
 *
 * The busy-interval model, for the energy-window tests
 * (tests/unit/test_energy_window.c), takes over a GPU's energy counter and
 * violation counters once a test has told it about a call with
 * fake_nvml_busy(): the GPU draws FAKE_NVML_BUSY_W (default 500 W) while a
 * call runs and FAKE_NVML_IDLE_W (default 0) otherwise; its total-energy
 * counter (nvmlDeviceGetTotalEnergyConsumption, mJ, from 123456 J at
 * nvmlInit) is refreshed every FAKE_NVML_REFRESH_MS (default 20 ms): a read
 * returns the energy at the last refresh, as the driver's counter does.
 * fake_nvml_energy_between() and fake_nvml_busy_between() give the truth
 * over any interval. Its power violation time (nvmlDeviceGetViolationStatus)
 * is 0 on gpu0 and a quarter of the busy time on gpu1, thermal 0 on both.
 * Times are CLOCK_MONOTONIC seconds (ch_now_sec()'s clock).
 *
 * Clock-event reason counters (nvmlDeviceGetFieldValues, fields 251 SW
 * thermal, 252 HW thermal, 253 HW power brake, ns): gpu0 0, 0, 0; gpu1
 * 2,000,000, 500,000 and "not supported" for the power brake (as a driver
 * without that counter); any other field id: invalid argument. Under the
 * busy-interval model gpu1's SW and HW thermal counters add a tenth and a
 * twentieth of its busy time.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef int nvmlReturn_t;
typedef struct fake_dev { int i; } *nvmlDevice_t;
struct pci { char legacy[16]; unsigned domain, bus, device, dev_id, subsys; char bus_id[32]; };

#define OK 0
#define INVALID_ARGUMENT 2
#define NOT_SUPPORTED 3

#define FAKE_MAX_GPUS 16
static struct fake_dev devs[FAKE_MAX_GPUS] = { { 0 }, { 1 }, { 2 }, { 3 }, { 4 }, { 5 }, { 6 }, { 7 },
					      { 8 }, { 9 }, { 10 }, { 11 }, { 12 }, { 13 }, { 14 }, { 15 } };
static const unsigned bus_of[FAKE_MAX_GPUS] = { 0x1b, 0x43, 0x52, 0x61, 0x9d, 0xc3, 0xd1, 0xdf,
						0x0c, 0x2c, 0x6c, 0x7c, 0x8c, 0xac, 0xbc, 0xec };
static char count_why[160];

/* The GPU count: FAKE_NVML_GPUS (1 to 16, default 2), or -1 (with
 * count_why) when it is not a whole number in that range. Shared with
 * fake_nvml_power.c. */
int fake_nvml_gpu_count(void)
{
	const char *e = getenv("FAKE_NVML_GPUS");
	char *end;
	long v;
	if (!e || !*e)
		return 2;
	v = strtol(e, &end, 10);
	if (*end || end == e || v < 1 || v > FAKE_MAX_GPUS || e[0] == '+' || e[0] == '-' || e[0] == ' ') {
		snprintf(count_why, sizeof(count_why),
			 "fake NVML: FAKE_NVML_GPUS='%.40s' is not a GPU count (expected a whole number, 1 to %d)", e,
			 FAKE_MAX_GPUS);
		return -1;
	}
	return (int)v;
}

/* @d is a GPU of this node */
static int have(unsigned d)
{
	int n = fake_nvml_gpu_count();
	return n > 0 && d < (unsigned)n;
}

static nvmlReturn_t text(char *buf, unsigned n, const char *s)
{
	snprintf(buf, n, "%s", s);
	return OK;
}

/* ---- the energy model */
struct fake_batch { double t0, period, busy; int calls; };
#define FAKE_MAX_BATCHES 65536
static struct fake_batch batches[FAKE_MAX_GPUS][FAKE_MAX_BATCHES];
static int nbatches[FAKE_MAX_GPUS];
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static double busy_w = 500, idle_w = 0, refresh_s = 0.020, origin = -1;
static const double base_j = 123456.0, power_frac[FAKE_MAX_GPUS] = { 0, 0.25 };
static int busy_model_on[FAKE_MAX_GPUS];   /* a test told the model about GPU d's calls */

static double now_sec(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static double env_num(const char *name, double def)
{
	const char *v = getenv(name);
	return v && *v ? atof(v) : def;
}

/* locked */
static void model_init(void)
{
	if (origin >= 0)
		return;
	busy_w = env_num("FAKE_NVML_BUSY_W", 500);
	idle_w = env_num("FAKE_NVML_IDLE_W", 0);
	refresh_s = env_num("FAKE_NVML_REFRESH_MS", 20) * 1e-3;
	origin = now_sec();
}

static double overlap(double a0, double a1, double b0, double b1)
{
	double lo = a0 > b0 ? a0 : b0, hi = a1 < b1 ? a1 : b1;
	return hi > lo ? hi - lo : 0;
}

/* seconds device @d ran calls within [a, b]; locked */
static double busy_in(unsigned d, double a, double b)
{
	double s = 0;
	int i, k;
	for (i = 0; i < nbatches[d]; i++) {
		const struct fake_batch *x = &batches[d][i];
		double end = x->t0 + x->calls * x->period;
		if (end <= a || x->t0 >= b)
			continue;
		if (x->t0 >= a && end <= b) {
			s += x->calls * x->busy;
			continue;
		}
		for (k = 0; k < x->calls; k++)
			s += overlap(x->t0 + k * x->period, x->t0 + k * x->period + x->busy, a, b);
	}
	return s;
}

static double energy_in(unsigned d, double a, double b)
{
	double busy = busy_in(d, a, b);
	return busy_w * busy + idle_w * ((b - a) - busy);
}

/* test hooks */
int fake_nvml_busy(unsigned d, double t0, int calls, double period, double busy)
{
	int rc = -1;
	pthread_mutex_lock(&mu);
	model_init();
	if (have(d) && nbatches[d] < FAKE_MAX_BATCHES && calls > 0) {
		batches[d][nbatches[d]++] = (struct fake_batch){ t0, period, busy, calls };
		busy_model_on[d] = 1;
		rc = 0;
	}
	pthread_mutex_unlock(&mu);
	return rc;
}

double fake_nvml_energy_between(unsigned d, double a, double b)
{
	double e;
	pthread_mutex_lock(&mu);
	model_init();
	e = have(d) ? energy_in(d, a, b) : NAN;
	pthread_mutex_unlock(&mu);
	return e;
}

double fake_nvml_busy_between(unsigned d, double a, double b)
{
	double s;
	pthread_mutex_lock(&mu);
	model_init();
	s = have(d) ? busy_in(d, a, b) : NAN;
	pthread_mutex_unlock(&mu);
	return s;
}

nvmlReturn_t nvmlInit_v2(void)
{
	if (fake_nvml_gpu_count() < 0) {
		fprintf(stderr, "%s\n", count_why);
		return 999; /* NVML_ERROR_UNKNOWN */
	}
	pthread_mutex_lock(&mu);
	model_init();
	pthread_mutex_unlock(&mu);
	return OK;
}
nvmlReturn_t nvmlShutdown(void) { return OK; }
const char *nvmlErrorString(nvmlReturn_t r)
{
	return r == NOT_SUPPORTED ? "Not Supported" : r == 4 ? "Insufficient Permissions" : r == 999 ? (fake_nvml_gpu_count() < 0 ? count_why : "Unknown Error") :
	       r ? "Invalid Argument" : "Success";
}
nvmlReturn_t nvmlSystemGetDriverVersion(char *b, unsigned n) { return text(b, n, "550.54.15"); }
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned *c)
{
	int n = fake_nvml_gpu_count();
	if (n < 0)
		return 999;
	*c = (unsigned)n;
	return OK;
}
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned i, nvmlDevice_t *d)
{
	if (!have(i))
		return INVALID_ARGUMENT;
	*d = &devs[i];
	return OK;
}
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *b, unsigned n) { (void)d; return text(b, n, "NVIDIA H100 80GB HBM3"); }
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, struct pci *p)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->bus_id, sizeof(p->bus_id), "00000000:%02X:00.0", bus_of[d->i]);
	return OK;
}
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *b, unsigned n)
{
	snprintf(b, n, "GPU-00000000-0000-0000-0000-%012d", d->i);
	return OK;
}
nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t d, char *b, unsigned n)
{
	snprintf(b, n, "16523000000%02d", d->i);
	return OK;
}
nvmlReturn_t nvmlDeviceGetVbiosVersion(nvmlDevice_t d, char *b, unsigned n) { (void)d; return text(b, n, "96.00.74.00.01"); }
nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t d, unsigned *v) { (void)d; *v = 5; return OK; }
nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t d, unsigned *v) { (void)d; *v = 5; return OK; }
nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t d, unsigned *v) { *v = d->i == 1 ? 8 : 16; return OK; }
nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t d, unsigned *v) { (void)d; *v = 16; return OK; }
nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t d, unsigned link, int *active)
{
	if (link >= 18)
		return INVALID_ARGUMENT;
	*active = !(d->i == 1 && link == 3);
	return OK;
}
nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(nvmlDevice_t d, unsigned link, int counter, unsigned long long *v)
{
	if (d->i == 1)
		return NOT_SUPPORTED;
	*v = (d->i == 0 && link == 0 && counter == 2) ? 2 : 0; /* counter 2: NVML_NVLINK_ERROR_DL_CRC_FLIT */
	return OK;
}
nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t d, int *cur, int *pend) { (void)d; *cur = *pend = 1; return OK; }
nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, int type, int counter, unsigned long long *v)
{
	*v = (d->i == 1 && type == 1) ? 1 : 0; /* type 1 uncorrected; volatile (0) and aggregate (1) alike */
	(void)counter;
	return OK;
}
nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t d, unsigned *corr, unsigned *unc, unsigned *pending, unsigned *failure)
{
	*corr = 0;
	*unc = d->i == 0;
	*pending = d->i == 0;
	*failure = 0;
	return OK;
}
nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t d, int type, unsigned *v) { (void)d; *v = type == 1 ? 1980 : 2619; return OK; }
nvmlReturn_t nvmlDeviceGetApplicationsClock(nvmlDevice_t d, int type, unsigned *v)
{
	*v = type == 1 ? (d->i == 1 ? 1410 : 1980) : 2619;
	return OK;
}
nvmlReturn_t nvmlDeviceGetDefaultApplicationsClock(nvmlDevice_t d, int type, unsigned *v) { (void)d; *v = type == 1 ? 1980 : 2619; return OK; }
nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t d, int *m) { (void)d; *m = 1; return OK; }
/* The busy-interval model's answers (fake_nvml_power.c asks first): 1 with
 * the value when a test drove GPU @d through fake_nvml_busy(), else 0. */
int fake_busy_energy_mj(unsigned d, unsigned long long *mj)
{
	double t, tick;
	int on;
	pthread_mutex_lock(&mu);
	on = have(d) && busy_model_on[d];
	if (on) {
		t = now_sec();
		tick = origin + floor((t - origin) / refresh_s) * refresh_s; /* the last refresh */
		*mj = (unsigned long long)llround((base_j + energy_in(d, origin, tick)) * 1000.0);
	}
	pthread_mutex_unlock(&mu);
	return on;
}

int fake_busy_violation_ns(unsigned d, int policy, unsigned long long *ref_us, unsigned long long *ns)
{
	double t;
	int on;
	pthread_mutex_lock(&mu);
	on = have(d) && busy_model_on[d];
	if (on) {
		t = now_sec();
		*ref_us = (unsigned long long)(t * 1e6);
		*ns = policy == 0 ? (unsigned long long)llround(power_frac[d] * busy_in(d, origin, t) * 1e9) : 0;
	}
	pthread_mutex_unlock(&mu);
	return on;
}

/* nvmlFieldValue_t (nvml.h) */
struct field_value {
	unsigned field_id, scope_id;
	long long timestamp, latency_usec;
	int value_type, nvml_return;
	union { double d; unsigned ui; unsigned long ul; unsigned long long ull; long long sll; int si; unsigned short us; } value;
};

nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t d, int count, struct field_value *v)
{
	static const unsigned long long ns[FAKE_MAX_GPUS][3] = { { 0, 0, 0 }, { 2000000, 500000, 0 } };
	int i;
	if (count < 0 || (count && !v))
		return INVALID_ARGUMENT;
	for (i = 0; i < count; i++) {
		unsigned f = v[i].field_id;
		v[i].timestamp = (long long)(now_sec() * 1e6);
		v[i].latency_usec = 0;
		if (f < 251 || f > 253) {
			v[i].nvml_return = INVALID_ARGUMENT;
			continue;
		}
		if (d->i == 1 && f == 253) {
			v[i].nvml_return = NOT_SUPPORTED;
			continue;
		}
		v[i].nvml_return = OK;
		v[i].value_type = 3; /* NVML_VALUE_TYPE_UNSIGNED_LONG_LONG */
		v[i].value.ull = ns[d->i][f - 251];
		pthread_mutex_lock(&mu);
		if (d->i == 1 && busy_model_on[1] && f != 253)
			v[i].value.ull += (unsigned long long)llround((f == 251 ? 0.10 : 0.05) * busy_in(1, origin, now_sec()) * 1e9);
		pthread_mutex_unlock(&mu);
	}
	return OK;
}
