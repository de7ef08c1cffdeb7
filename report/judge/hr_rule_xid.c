/*
 * hr_rule_xid.c - the kernel-log family: the faults `health_report
 * kernel-log` found in a node's kernel log (kernel_log result files,
 * struct hr_kfault of hr_model.h; docs/xid.md): an Xid whose action in the
 * Xid table is reset, drain or reboot is a hardware fault (xid_fault, FAIL,
 * a drain candidate without a re-run: hr_profile.c's hard faults), one
 * that informs is information (xid_info: the application's Xids 13, 31,
 * 43 among them); an NVSwitch SXid and a PCIe AER error fail when the tool
 * drained for them; a NIC port's link flaps fail from {flaps} downs.
 */
#include "report/judge/hr_family.h"
#include "report/judge/hr_judge.h"
#include "report/judge/hr_rules.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* The source of an Xid's row: NVIDIA's catalog (the built-in table) or
 * the site's --xid-table. */
#define SRC_XID "NVIDIA Xid catalog (docs/xid.md)"

static int drains(const char *action)
{
	return !strcmp(action, "reset") || !strcmp(action, "drain") || !strcmp(action, "reboot");
}

/* What to do for the tool's action @action. */
static const char *todo(const char *action)
{
	if (!strcmp(action, "reboot"))
		return "drain and reboot the node (NVIDIA RESTART_BM); resume it when the gate passes";
	if (!strcmp(action, "reset"))
		return "drain, reset the GPU (nvidia-smi -r) and re-run the gate; replace it if the Xid recurs";
	return "drain for repair (NVIDIA's action for the code); resume it when the fault is fixed";
}

/* "gpu1 (GPU-..., 0000:43:00.0)" into @b */
static void device_name(const struct hr_kfault *k, char *b, size_t n)
{
	if (k->gpu_index >= 0)
		snprintf(b, n, "GPU %d (%s, %s)", k->gpu_index, k->uuid ? k->uuid : "UUID not known",
			 k->bus_id ? k->bus_id : "bus id not known");
	else
		snprintf(b, n, "%s (not a GPU of the node's inventory%s%s)", k->device, k->bus_id ? ", " : "",
			 k->bus_id ? k->bus_id : "");
}

/* "at 2026-12-06T02:14:07Z" (first one too when it differs) into @b */
static void when(const struct hr_kfault *k, char *b, size_t n)
{
	if (!k->last_utc)
		snprintf(b, n, "at a time the log gives only as seconds since boot");
	else if (k->first_utc && strcmp(k->first_utc, k->last_utc))
		snprintf(b, n, "from %s to %s", k->first_utc, k->last_utc);
	else
		snprintf(b, n, "at %s", k->last_utc);
}

static void xid(const struct hr_kfault *k, hr_emit_fn emit, void *ctx)
{
	char dev[200], at[96], text[1024], src[160];
	int fatal = drains(k->action);
	int user = k->mnemonic && !k->nvidia_action; /* a row without NVIDIA's bucket */

	device_name(k, dev, sizeof(dev));
	when(k, at, sizeof(at));
	snprintf(src, sizeof(src), "%s", k->nvidia_action && !user ? SRC_XID : "the Xid table given with --xid-table");
	if (!k->meaning)
		snprintf(src, sizeof(src), "%s", SRC_XID);
	snprintf(text, sizeof(text),
		 "%s: Xid %d%s%s (%s) in %s, %ld line%s %s: %s%s%s; the table's action %s%s "
		 "(threshold: %s; source: %s)",
		 dev, k->code, k->mnemonic ? " " : "", k->mnemonic ? k->mnemonic : "",
		 k->meaning ? k->meaning : "not in the Xid table", k->log, k->lines, k->lines == 1 ? "" : "s", at,
		 k->hardware == 1 ? "a hardware fault" : k->hardware == 0 ? "an application's or the driver's fault" :
		 "a code the table does not know", k->nvidia_action ? ", NVIDIA " : "",
		 k->nvidia_action ? k->nvidia_action : "", k->action, fatal ? " (a drain candidate without a re-run)" : "",
		 fatal ? "the table's action reset, drain or reboot" : "the table's action informs", src);
	emit(ctx, k->node, fatal ? HR_FAIL : HR_INFO, fatal ? "xid_fault" : "xid_info", k->device, k->source,
	     fatal ? todo(k->action) : NULL, text);
}

static void sxid_aer(const struct hr_kfault *k, hr_emit_fn emit, void *ctx)
{
	static const char *const sev[] = { "corrected", "uncorrected non-fatal", "uncorrected fatal" };
	char dev[200], at[96], text[1024], what[96];
	int fatal = drains(k->action), sx = !strcmp(k->kind, "sxid");

	device_name(k, dev, sizeof(dev));
	when(k, at, sizeof(at));
	if (sx)
		snprintf(what, sizeof(what), "NVSwitch SXid %d (%s)", k->code, fatal ? "fatal" : "non-fatal");
	else
		snprintf(what, sizeof(what), "PCIe AER %s error", sev[k->code > 2 ? 2 : k->code]);
	snprintf(text, sizeof(text), "%s: %s in %s, %ld line%s %s; the line: %.160s (threshold: %s; source: %s)", dev,
		 what, k->log, k->lines, k->lines == 1 ? "" : "s", at, k->last_line ? k->last_line : "not kept",
		 sx ? "the line says Fatal" : "an uncorrected fatal error",
		 sx ? "NVIDIA NVSwitch SXid messages (docs/xid.md)" : "Linux PCIe AER (docs/xid.md)");
	emit(ctx, k->node, fatal ? HR_FAIL : HR_INFO, sx ? "sxid" : "pcie_aer", k->device, k->source,
	     fatal ? (sx ? "drain for repair of the NVSwitch tray (NVIDIA's SXid workflow)"
			 : "drain; reseat or replace the device or its riser, then re-run the gate")
		   : NULL,
	     text);
}

static void link_flap(const struct hr_kfault *k, hr_emit_fn emit, void *ctx)
{
	double flaps = hr_rule_param("link_flap", "flaps");
	char at[96], text[1024];
	int fail = (double)k->lines >= flaps;

	when(k, at, sizeof(at));
	snprintf(text, sizeof(text),
		 "%s%s%s: link down %ld time%s, up %ld time%s in %s, %s (threshold: %s %.0f downs; source: %s)",
		 k->device, k->bus_id ? " at " : "", k->bus_id ? k->bus_id : "", k->lines, k->lines == 1 ? "" : "s",
		 k->link_ups, k->link_ups == 1 ? "" : "s", k->log, at, fail ? "at or above" : "below", flaps,
		 "health_report kernel-log's --flaps default (docs/xid.md)");
	emit(ctx, k->node, fail ? HR_FAIL : HR_INFO, "link_flap", k->device, k->source,
	     fail ? "drain; check the cable, transceiver and switch port (mlxlink -d <dev> -m, ibstat)" : NULL, text);
}

static void xid_rules(const struct hr_fleet *f, hr_emit_fn emit, void *ctx)
{
	size_t i;
	for (i = 0; i < f->nkfaults; i++) {
		const struct hr_kfault *k = &f->kfaults[i];
		if (k->node < 0 || (size_t)k->node >= f->nnodes || !strcmp(k->action, "none"))
			continue;
		if (!strcmp(k->kind, "xid"))
			xid(k, emit, ctx);
		else if (!strcmp(k->kind, "link_down"))
			link_flap(k, emit, ctx);
		else
			sxid_aer(k, emit, ctx);
	}
}

const struct hr_family hr_family_xid = {
	"kernel-log faults",
	"each node's kernel-log faults (kernel_log result files: struct hr_kfault)",
	NULL,
	xid_rules,
};
