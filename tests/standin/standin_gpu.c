/*
 * standin_gpu.c - a stand-in GPU compute backend for roofline's command-line
 * tests on a machine without a GPU: build/tests/roofline-standin is
 * bench/roofline.c built over it (Makefile, -DCH_RL_GPU_BACKEND), so the
 * real roofline main, driver, power-cap sweep, restores and result file run
 * end to end against the stand-in NVML (tests/fake-nvml, LD_LIBRARY_PATH).
 *
 * It computes nothing: a call lasts (and reports) the time a model of an
 * H100 SXM takes for it at the clocks NVML reads now, so the power-cap
 * model of tests/fake-nvml/fake_nvml_power.c reaches the measured figures:
 *   GEMM:   2mnk / (peak(dtype) x SM MHz / 1980), peak bf16/fp16 791, fp8
 *           1400, tf32 395, fp32 51, fp64 53 TFLOP/s (80% of the datasheet,
 *           docs/roofline.md's H100 reference figures);
 *   stream: bytes / (2970 GB/s x memory MHz / 2619) (BabelStream's H100
 *           triad), independent of the SM clock;
 *   ladder: FLOPs / (51 TFLOP/s x SM MHz / 1980).
 * The call sleeps, then spins, until its modelled time has passed, so the
 * energy window (wall time x the fake's power) sees the same duration.
 * Every check passes (the kernels and checks are tested elsewhere).
 * Copies (host_copy, peer_copy) take no time and report a model of the link
 * NVML says the GPU trained to: one way 0.88 x the PCIe line rate
 * (hw/ch_pcie.h) of its current generation and width, each direction 0.9
 * of that when both run at once; device to device 360 GB/s with P2P on
 * (NVLink) and half the slower GPU's one-way host link with P2P off
 * (staged through the host).
 *
 * CH_STANDIN_FAIL="kernel:dtype:stage@W" makes that stage ("setup" or
 * "run") of that point fail while the enforced power limit is W watts
 * (a failed point in the middle of a sweep).
 */
#include "base/ch_common.h"
#include "base/ch_stats.h"
#include "hw/ch_nvml.h"
#include "hw/ch_pcie.h"
#include "hw/ch_powercap.h"
#include "kernels/ch_kernels.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct ch_dev {
	int index;
	ch_nvml_dev_t nv;
	char bus[32];
	char name[128];
};

static int sb_probe(char *why, size_t n)
{
	if (ch_nvml_init(why, n) != 0)
		return CH_ERR_UNAVAILABLE;
	ch_nvml_shutdown();
	return 0;
}

static int sb_count(void)
{
	int c = 0;
	if (ch_nvml_init(NULL, 0) == 0) {
		c = ch_nvml_device_count();
		ch_nvml_shutdown();
	}
	return c;
}

static int sb_open(int index, struct ch_dev **out, char *why, size_t n)
{
	struct ch_dev *d = calloc(1, sizeof(*d));
	struct ch_powercap_gpu g;

	if (!d || ch_nvml_init(why, n) != 0) {
		free(d);
		return CH_ERR_UNAVAILABLE;
	}
	if (ch_nvml_device_by_index((unsigned)index, &d->nv) != 0 || ch_powercap_read(d->nv, &g, why, n) != 0) {
		ch_nvml_shutdown();
		free(d);
		return CH_ERR_UNAVAILABLE;
	}
	d->index = index;
	snprintf(d->bus, sizeof(d->bus), "%s", g.pci_bus_id);
	if (!ch_nvml_device_name(d->nv, d->name, sizeof(d->name)))
		snprintf(d->name, sizeof(d->name), "stand-in GPU");
	*out = d;
	return 0;
}

static void sb_close(struct ch_dev *d)
{
	ch_nvml_shutdown();
	free(d);
}

static int sb_info(struct ch_dev *d, struct ch_dev_info *o)
{
	memset(o, 0, sizeof(*o));
	snprintf(o->kind, sizeof(o->kind), "gpu");
	snprintf(o->name, sizeof(o->name), "%s", d->name);
	snprintf(o->pci_bus_id, sizeof(o->pci_bus_id), "%s", d->bus);
	o->mem_total_bytes = o->mem_free_bytes = 80ull << 30;
	o->cache_bytes = 50ull << 20;
	o->units = 132;
	o->clock_mhz = 1980;
	snprintf(o->clock_source, sizeof(o->clock_source), "stand-in model");
	snprintf(o->isa, sizeof(o->isa), "sm_90");
	snprintf(o->blas, sizeof(o->blas), "stand-in (modelled times)");
	snprintf(o->runtime, sizeof(o->runtime), "stand-in");
	snprintf(o->nvml_match, sizeof(o->nvml_match), "index"); /* the stand-in opens NVML's device by index */
	snprintf(o->note, sizeof(o->note), "stand-in GPU for tests: times modelled from the NVML clocks (tests/standin)");
	return 0;
}

static unsigned sb_dtypes(struct ch_dev *d, const struct ch_kernel *k)
{
	(void)d;
	if (k->family == CH_FAM_GEMM || k->family == CH_FAM_STREAM)
		return k->dtypes;
	if (k->family == CH_FAM_LADDER)
		return k->dtypes & (CH_DT_BIT(CH_FP64) | CH_DT_BIT(CH_FP32));
	return 0;
}

static int sb_alloc(struct ch_dev *d, uint64_t bytes)
{
	(void)d; (void)bytes;
	return 0;
}

static int sb_gemm_size(struct ch_dev *d, enum ch_dtype dt, double min_sec, uint64_t *n)
{
	(void)d; (void)dt; (void)min_sec;
	*n = 8192;
	return 0;
}

static int fails(struct ch_dev *d, const struct ch_point_spec *p, const char *stage)
{
	const char *e = getenv("CH_STANDIN_FAIL"), *at;
	char want[96];
	double w;

	if (!e || !(at = strchr(e, '@')))
		return 0;
	snprintf(want, sizeof(want), "%s:%s:%s", p->k->name, ch_dtype_name(p->dt), stage);
	if (strlen(want) != (size_t)(at - e) || strncmp(e, want, (size_t)(at - e)))
		return 0;
	w = ch_powercap_enforced_w(d->nv);
	return fabs(w - atof(at + 1)) <= 0.5;
}

static int sb_setup(struct ch_dev *d, const struct ch_point_spec *p)
{
	if (fails(d, p, "setup")) {
		ch_error("stand-in: set-up of %s %s failed (CH_STANDIN_FAIL)", p->k->name, ch_dtype_name(p->dt));
		return CH_ERR_RUNTIME;
	}
	return 0;
}

static double gemm_peak(enum ch_dtype dt)
{
	switch (dt) {
	case CH_FP8: return 1400e12;
	case CH_BF16: case CH_FP16: return 791e12;
	case CH_TF32: return 395e12;
	case CH_FP32: return 51e12;
	default: return 53e12;
	}
}

static void wait_until(double t)
{
	double left;
	while ((left = t - ch_now_sec()) > 0) {
		if (left > 6e-4) { /* sleep, then spin the last 0.5 ms: a sleep overshoots */
			struct timespec ts = { 0, (long)((left - 5e-4) * 1e9) };
			nanosleep(&ts, NULL);
		}
	}
}

static int sb_run(struct ch_dev *d, const struct ch_point_spec *p, double *sec)
{
	struct ch_nvml_sample s;
	struct ch_counts c;
	double t0 = ch_now_sec(), t, sm, mem;

	if (fails(d, p, "run")) {
		ch_error("stand-in: a call of %s %s failed (CH_STANDIN_FAIL)", p->k->name, ch_dtype_name(p->dt));
		return CH_ERR_RUNTIME;
	}
	if (ch_kernel_counts(p->k, p->dt, &p->shape, &c) != 0 || ch_nvml_sample(d->nv, &s) != 0 ||
	    isnan(s.sm_mhz) || isnan(s.mem_mhz)) {
		ch_error("stand-in: no counts or no NVML clocks for %s %s", p->k->name, ch_dtype_name(p->dt));
		return CH_ERR_RUNTIME;
	}
	sm = s.sm_mhz / 1980.0;
	mem = s.mem_mhz / 2619.0;
	if (p->k->family == CH_FAM_GEMM)
		t = c.flops / (gemm_peak(p->dt) * sm);
	else if (p->k->family == CH_FAM_STREAM)
		t = c.bytes / (2970e9 * mem);
	else
		t = c.flops / (51e12 * sm);
	wait_until(t0 + t);
	*sec = t;
	return 0;
}

static int sb_check(struct ch_dev *d, const struct ch_point_spec *p, struct ch_check *c)
{
	(void)d; (void)p;
	memset(c, 0, sizeof(*c));
	c->ok = 1;
	c->checked = 1;
	return 0;
}

static void *sb_telemetry(struct ch_dev *d)
{
	struct ch_nvml_sample s;
	return ch_nvml_sample(d->nv, &s) == 0 ? ch_nvml_sample_json(&s) : NULL;
}

static int sb_energy(struct ch_dev *d, double *j)
{
	struct ch_nvml_sample s;
	if (ch_nvml_sample(d->nv, &s) != 0 || isnan(s.energy_j))
		return CH_ERR_UNAVAILABLE;
	*j = s.energy_j;
	return 0;
}

static int sb_throttled(struct ch_dev *d)
{
	struct ch_nvml_sample s;
	if (ch_nvml_sample(d->nv, &s) != 0 || !s.reasons_valid)
		return CH_ERR_UNAVAILABLE;
	return ch_nvml_throttled(s.reasons);
}

/* the modelled one-way host link of @d, GB/s (0 when NVML cannot tell) */
static double sb_link_gbps(struct ch_dev *d)
{
	json_t *inv = ch_nvml_gpu_inventory(d->nv, (unsigned)d->index), *pcie;
	double g = 0;
	if (!inv)
		return 0;
	pcie = json_object_get(inv, "pcie");
	g = 0.88 / CH_PCIE_COPY_EFFICIENCY *
	    ch_pcie_expected_gbps((int)json_integer_value(json_object_get(pcie, "gen_current")),
				  (int)json_integer_value(json_object_get(pcie, "width_current")));
	json_decref(inv);
	return g;
}

static int sb_host_copy(struct ch_dev *d, uint64_t bytes, int calls, struct ch_copy_bw *out)
{
	double g = sb_link_gbps(d);
	memset(out, 0, sizeof(*out));
	if (!(g > 0))
		return CH_ERR_UNAVAILABLE;
	out->h2d_gbps = out->d2h_gbps = g;
	out->bidir_h2d_gbps = out->bidir_d2h_gbps = 0.9 * g;
	out->bidir_gbps = 1.8 * g;
	out->bytes = bytes;
	out->calls = calls;
	return 0;
}

static int sb_peer_copy(struct ch_dev *src, struct ch_dev *dst, int p2p, uint64_t bytes, int calls, double *gbps)
{
	double a = sb_link_gbps(src), b = sb_link_gbps(dst);
	(void)bytes;
	(void)calls;
	*gbps = p2p ? 360.0 : 0.5 * (a < b ? a : b);
	return 0;
}

const struct ch_backend ch_backend_standin = {
	.name = "standin",
	.probe = sb_probe,
	.count = sb_count,
	.open = sb_open,
	.close = sb_close,
	.info = sb_info,
	.dtypes = sb_dtypes,
	.alloc_arrays = sb_alloc,
	.gemm_size = sb_gemm_size,
	.setup = sb_setup,
	.run = sb_run,
	.check = sb_check,
	.telemetry_json = sb_telemetry,
	.energy_j = sb_energy,
	.energy_window_sec = 0.1,
	.throttled = sb_throttled,
	.host_copy = sb_host_copy,
	.peer_copy = sb_peer_copy,
};
