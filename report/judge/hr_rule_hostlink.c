/*
 * hr_rule_hostlink.c - the host link rules: each GPU's host<->device copy
 * bandwidth (roofline's host link step, docs/roofline.md "Host link")
 * against what its PCIe link can carry at its maximum generation and width
 * (hw/ch_pcie.h: line rate x 0.85). A link that trained down (x8 of x16,
 * Gen4 of Gen5) or a slot behind a slower switch shows here before any job
 * does. A record alone family (hr_family.h): one reason per GPU judged, and
 * "not judged" where the result file has no figure or no link.
 */
#include "report/judge/hr_family.h"
#include "report/judge/hr_analyze.h"
#include "report/judge/hr_rules.h"
#include "hw/ch_pcie.h"

#include <math.h>
#include <stdio.h>

/* Below these shares of the expectation: WARN, FAIL (policy: half is what a
 * link at half its width or one generation down carries) */
/* the thresholds are the host_link_low row's parameters (hr_rules.c) */
#define HL_WARN hr_rule_param("host_link_low", "warn_share")
#define HL_FAIL hr_rule_param("host_link_low", "fail_share")

static void hostlink_rules(const struct hr_fleet *f, hr_emit_fn emit, void *ctx)
{
	size_t i;

	for (i = 0; i < f->ndevices; i++) {
		const struct hr_device *d = &f->devices[i];
		const struct hr_host_link *h = d->host_link;
		char text[1024], subj[96], link[96] = "";
		double low, share;
		int level;

		if (!h)
			continue;
		snprintf(subj, sizeof(subj), "%s", d->device ? d->device : "gpu");
		low = h->h2d_gbps < h->d2h_gbps ? h->h2d_gbps : h->d2h_gbps;
		if (isnan(h->h2d_gbps) || isnan(h->d2h_gbps))
			low = NAN;
		if (h->width > 0 && h->width_max > 0)
			snprintf(link, sizeof(link), "PCIe Gen%d x%d (maximum Gen%d x%d)", h->gen, h->width, h->gen_max,
				 h->width_max);
		if (!(low > 0) || !(h->expected_max_gbps > 0)) {
			snprintf(text, sizeof(text), "%s's host link not judged: %s", subj,
				 !(low > 0) ? "no host-to-device or device-to-host copy figure in the result file"
					    : "NVML did not report its PCIe link, so no expectation applies");
			emit(ctx, d->node, HR_INFO, "host_link_not_judged", subj, d->source, NULL, text);
			continue;
		}
		share = low / h->expected_max_gbps;
		if (share >= HL_WARN)
			continue;
		/* FAIL: far below, or below with the link narrower than its
		 * maximum (the measurement and NVML agree it trained down) */
		level = share < HL_FAIL || (h->width > 0 && h->width < h->width_max) ? HR_FAIL : HR_WARN;
		snprintf(text, sizeof(text),
			 "%s's host copies reach %.1f GB/s host to device and %.1f device to host (median, measured), "
			 "%.0f%% of the %.1f GB/s one-way expectation of its link's maximum, Gen%d x%d (given: %s); "
			 "%s%s (threshold: below %.2f of the expectation WARN, below %.2f or with the link narrower than its maximum FAIL)",
			 subj, h->h2d_gbps, h->d2h_gbps, 100.0 * share, h->expected_max_gbps, h->gen_max, h->width_max,
			 CH_PCIE_EXPECT_SOURCE, link[0] ? "the link reports " : "", link[0] ? link : "", HL_WARN, HL_FAIL);
		emit(ctx, d->node, level, "host_link_low", subj, d->source,
		     h->width > 0 && h->width_max > 0 && h->width < h->width_max
			     ? "the link trained below its width: reseat the GPU or its riser, check the slot and cable, then "
			       "re-run roofline; a link that stays narrow is a hardware ticket"
			     : "check the GPU's slot (a shared PCIe switch, a slower root port, BIOS link settings) and "
			       "re-run roofline with every other GPU idle",
		     text);
	}
}

const struct hr_family hr_family_hostlink = {
	"host link",
	"each GPU's host_link of its roofline result (copy medians, PCIe link from NVML)",
	NULL,
	hostlink_rules,
};
