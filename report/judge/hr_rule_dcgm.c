/*
 * hr_rule_dcgm.c - the DCGM diagnostic rules: each test result of a
 * `dcgmi diag -j` file (report/read/hr_dcgm.h) that DCGM itself marked Fail
 * is a FAIL of that GPU, and Warn a WARN, naming the test, the GPU and
 * DCGM's message; Pass is no finding, Skip and Not Run are not judged. The
 * judgement is DCGM's (its own thresholds per test and SKU); this family
 * carries it into the node's verdict.
 * And nvbandwidth's results (report/read/hr_nvbw.h): each GPU's
 * host-to-device and device-to-host copies judged as roofline's host link
 * (hr_rule_hostlink.c: the same expectation of the PCIe link's maximum
 * generation and width, hw/ch_pcie.h, and the same shares, host_link_low's
 * parameters) where the node's inventory gives the GPU's link, else listed
 * as not judged; each device-to-device matrix shown. A record alone family
 * (hr_family.h).
 */
#include "report/judge/hr_family.h"
#include "report/judge/hr_analyze.h"
#include "report/judge/hr_rules.h"
#include "report/read/hr_dcgm.h"
#include "report/read/hr_nvbw.h"
#include "hw/ch_pcie.h"

#include <math.h>

#include <stdio.h>
#include <string.h>

static void dcgm_rules(const struct hr_fleet *f, hr_emit_fn emit, void *ctx)
{
	size_t i;

	for (i = 0; i < f->ndcgm; i++) {
		const struct hr_dcgm_result *r = &f->dcgm[i];
		char subj[160], text[3072];
		int fail = r->status == HR_DCGM_FAIL;

		if ((!fail && r->status != HR_DCGM_WARN) || r->node < 0)
			continue; /* node < 0: not placed (loaded without hr_fleet_load_files()) */
		if (!r->gpus[0])
			snprintf(subj, sizeof(subj), "node (DCGM %s)", r->test);
		else if (strchr(r->gpus, ',') || strchr(r->gpus, ' '))
			snprintf(subj, sizeof(subj), "gpus %s", r->gpus);
		else
			snprintf(subj, sizeof(subj), "gpu%s", r->gpus);
		snprintf(text, sizeof(text),
			 "DCGM's diagnostic test '%s'%s%s%s on %s: %s (DCGM %s); DCGM's message: %s",
			 r->test, r->category ? " (" : "", r->category ? r->category : "", r->category ? ")" : "",
			 r->gpus[0] ? subj : "the node (no GPU named)", hr_dcgm_status_name(r->status),
			 r->version ? r->version : "version not given", r->message ? r->message : "none given");
		emit(ctx, r->node, fail ? HR_FAIL : HR_WARN, fail ? "dcgm_diag_fail" : "dcgm_diag_warn", subj,
		     r->source,
		     fail ? "follow DCGM's message: a Deployment (software) failure is a node setting to fix; a Hardware, "
			    "Integration or Stress failure is a fault of that GPU: drain the node and re-run `dcgmi diag` on it "
			    "(a ticket when it repeats)"
			  : "read DCGM's message; re-run `dcgmi diag` on that GPU and watch it",
		     text);
	}
}

/* the inventory's PCIe link of nvbandwidth's device @j of @r: the GPU of
 * the same PCI address, else of index @j when the file gives no address;
 * NULL none */
static const json_t *inv_pcie(const struct hr_fleet *f, const struct hr_nvbw *r, int j)
{
	const json_t *gpus = json_object_get(f->nodes[r->node].inventory, "gpus"), *g;
	unsigned want = r->pci && j < r->ngpus ? r->pci[j] : 0;
	size_t i;

	json_array_foreach(gpus, i, g) {
		const char *bus = json_string_value(json_object_get(g, "pci_bus_id"));
		unsigned dom, b, dev;
		int match = want ? bus && sscanf(bus, "%x:%x:%x", &dom, &b, &dev) == 3 &&
					   ((dom & 0xffffu) << 16 | (b & 0xffu) << 8 | (dev & 0xffu)) == want
				 : json_integer_value(json_object_get(g, "index")) == j;
		if (match)
			return json_object_get(g, "pcie");
	}
	return NULL;
}

static double cell(const struct hr_nvbw_case *c, int j)
{
	return c && j < c->cols ? c->m[j] : NAN;
}

/* "12.40 GB/s", or "no figure" (N/A, or a cell the reader skipped) */
static const char *figure(double v, char *buf, size_t n)
{
	if (isnan(v))
		snprintf(buf, n, "no figure");
	else
		snprintf(buf, n, "%.2f GB/s", v);
	return buf;
}

static void nvbw_hostlink(const struct hr_fleet *f, const struct hr_nvbw *r, hr_emit_fn emit, void *ctx)
{
	const struct hr_nvbw_case *h = hr_nvbw_find(r, "host_to_device_memcpy_ce");
	const struct hr_nvbw_case *d = hr_nvbw_find(r, "device_to_host_memcpy_ce");
	double warn = hr_rule_param("host_link_low", "warn_share"), fail = hr_rule_param("host_link_low", "fail_share");
	int j, n = h ? h->cols : d ? d->cols : 0;

	for (j = 0; j < n; j++) {
		const json_t *pcie = inv_pcie(f, r, j);
		int gm = (int)json_integer_value(json_object_get(pcie, "gen_max"));
		int wm = (int)json_integer_value(json_object_get(pcie, "width_max"));
		int wc = (int)json_integer_value(json_object_get(pcie, "width_current"));
		double hv = cell(h, j), dv = cell(d, j), low = hv < dv ? hv : dv, exp = ch_pcie_expected_gbps(gm, wm);
		char subj[32], text[1024], hb[32], db[32];
		int level;

		snprintf(subj, sizeof(subj), "gpu%d", j);
		if (isnan(hv) || isnan(dv))
			low = NAN;
		if (!(low > 0) || !(exp > 0)) {
			snprintf(text, sizeof(text),
				 "%s%s%s%s's host copies by nvbandwidth (CE memcpy, measured): %s host to device, %s "
				 "device to host; not judged: %s",
				 subj, r->gpus && j < r->ngpus ? " (" : "", r->gpus && j < r->ngpus ? r->gpus[j] : "",
				 r->gpus && j < r->ngpus ? ")" : "", figure(hv, hb, sizeof(hb)), figure(dv, db, sizeof(db)),
				 !(low > 0) ? "a direction has no figure (not run, N/A or zero)"
					    : "the node's inventory gives no PCIe link for this GPU (no roofline or "
					      "allreduce_bw result with host.inventory from this node)");
			emit(ctx, r->node, HR_INFO, "nvbw_host_link_not_judged", subj, r->source, NULL, text);
			continue;
		}
		if (low / exp >= warn)
			continue;
		level = low / exp < fail || (wc > 0 && wc < wm) ? HR_FAIL : HR_WARN;
		snprintf(text, sizeof(text),
			 "%s's host copies by nvbandwidth reach %.1f GB/s host to device and %.1f device to host "
			 "(CE memcpy, measured), %.0f%% of the %.1f GB/s one-way expectation of its link's maximum, "
			 "Gen%d x%d (given: %s; the link from the node's inventory)%s (threshold: as host_link_low, "
			 "below %.2f of the expectation WARN, below %.2f or with the link narrower than its maximum FAIL)",
			 subj, hv, dv, 100.0 * low / exp, exp, gm, wm, CH_PCIE_EXPECT_SOURCE,
			 wc > 0 && wc < wm ? "; the link is narrower than its maximum" : "", warn, fail);
		emit(ctx, r->node, level, "nvbw_host_link_low", subj, r->source,
		     "check the GPU's slot, riser and link width (a link narrower than its maximum: reseat), then "
		     "re-run nvbandwidth and roofline with every other GPU idle",
		     text);
	}
}

/* each device-to-device matrix, shown as measured */
static void nvbw_d2d(const struct hr_nvbw *r, hr_emit_fn emit, void *ctx)
{
	size_t k;
	for (k = 0; k < r->ncases; k++) {
		const struct hr_nvbw_case *c = &r->cases[k];
		char text[4096], subj[] = "gpus";
		size_t len, len0;
		int i, j;

		if (strncmp(c->name, "device_to_device", 16) || c->rows < 2)
			continue;
		len = (size_t)snprintf(text, sizeof(text), "nvbandwidth %s (%s, measured, GB/s; row -> column):",
				       c->name, c->description ? c->description : "no description");
		len0 = len;
		for (i = 0; i < c->rows && len < sizeof(text); i++)
			for (j = 0; j < c->cols && len < sizeof(text); j++)
				if (!isnan(c->m[(size_t)i * (size_t)c->cols + (size_t)j]))
					len += (size_t)snprintf(text + len, sizeof(text) - len, " %d->%d %.1f", i, j,
							       c->m[(size_t)i * (size_t)c->cols + (size_t)j]);
		if (len == len0)
			snprintf(text + len, sizeof(text) - len, " no figure (every cell N/A or skipped)");
		emit(ctx, r->node, HR_INFO, "nvbw_d2d", subj, r->source, NULL, text);
	}
}

static void dcgm_nvbw_rules(const struct hr_fleet *f, hr_emit_fn emit, void *ctx)
{
	size_t i;
	dcgm_rules(f, emit, ctx);
	for (i = 0; i < f->nnvbw; i++) {
		if (f->nvbw[i].node < 0)
			continue;
		nvbw_hostlink(f, &f->nvbw[i], emit, ctx);
		nvbw_d2d(&f->nvbw[i], emit, ctx);
	}
}

const struct hr_family hr_family_dcgm = {
	"DCGM diagnostics and nvbandwidth",
	"the test results of dcgmi diag -j files (status per test and GPU, DCGM's messages); nvbandwidth -j "
	"matrices, and the node's host.inventory PCIe links",
	NULL,
	dcgm_nvbw_rules,
};
