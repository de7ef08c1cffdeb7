/*
 * fake_nvml.c - a stand-in libnvidia-ml.so.1 for tests on machines without
 * a GPU: two GPUs with fixed, documented readings, so that the NVML
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
 * nvmlDeviceGetRetiredPages and nvmlDeviceGetRetiredPagesPendingStatus are
 * deliberately absent (as in a driver without them).
 *
 * Power limits, power, energy, clocks, temperature and clock event reasons
 * are in fake_nvml_power.c (a model that responds to a settable limit; the
 * readings above are its idle ones).
 */
#include <stdio.h>
#include <string.h>

typedef int nvmlReturn_t;
typedef struct fake_dev { int i; } *nvmlDevice_t;
struct pci { char legacy[16]; unsigned domain, bus, device, dev_id, subsys; char bus_id[32]; };

#define OK 0
#define INVALID_ARGUMENT 2
#define NOT_SUPPORTED 3

static struct fake_dev devs[2] = { { 0 }, { 1 } };

static nvmlReturn_t text(char *buf, unsigned n, const char *s)
{
	snprintf(buf, n, "%s", s);
	return OK;
}

nvmlReturn_t nvmlInit_v2(void) { return OK; }
nvmlReturn_t nvmlShutdown(void) { return OK; }
const char *nvmlErrorString(nvmlReturn_t r)
{
	return r == NOT_SUPPORTED ? "Not Supported" : r == 4 ? "Insufficient Permissions" : r == 999 ? "Unknown Error" :
	       r ? "Invalid Argument" : "Success";
}
nvmlReturn_t nvmlSystemGetDriverVersion(char *b, unsigned n) { return text(b, n, "550.54.15"); }
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned *c) { *c = 2; return OK; }
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned i, nvmlDevice_t *d)
{
	if (i > 1)
		return INVALID_ARGUMENT;
	*d = &devs[i];
	return OK;
}
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *b, unsigned n) { (void)d; return text(b, n, "NVIDIA H100 80GB HBM3"); }
nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t d, struct pci *p)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->bus_id, sizeof(p->bus_id), "00000000:%s:00.0", d->i ? "43" : "1B");
	return OK;
}
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *b, unsigned n)
{
	return text(b, n, d->i ? "GPU-00000000-0000-0000-0000-000000000001" : "GPU-00000000-0000-0000-0000-000000000000");
}
nvmlReturn_t nvmlDeviceGetSerial(nvmlDevice_t d, char *b, unsigned n) { return text(b, n, d->i ? "1652300000001" : "1652300000000"); }
nvmlReturn_t nvmlDeviceGetVbiosVersion(nvmlDevice_t d, char *b, unsigned n) { (void)d; return text(b, n, "96.00.74.00.01"); }
nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t d, unsigned *v) { (void)d; *v = 5; return OK; }
nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t d, unsigned *v) { (void)d; *v = 5; return OK; }
nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t d, unsigned *v) { *v = d->i ? 8 : 16; return OK; }
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
	*v = (link == 0 && counter == 2) ? 2 : 0; /* counter 2: NVML_NVLINK_ERROR_DL_CRC_FLIT */
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
	*v = type == 1 ? (d->i ? 1410 : 1980) : 2619;
	return OK;
}
nvmlReturn_t nvmlDeviceGetDefaultApplicationsClock(nvmlDevice_t d, int type, unsigned *v) { (void)d; *v = type == 1 ? 1980 : 2619; return OK; }
nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t d, int *m) { (void)d; *m = 1; return OK; }
