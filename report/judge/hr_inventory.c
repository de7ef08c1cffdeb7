/*
 * hr_inventory.c - passive hardware checks on host.inventory: rules, drift
 * actions, profile and Prometheus parts (the loading, drift keys included:
 * report/read/hr_inventory_load.c). Thresholds and sources are written
 * out in the reason texts and in docs/health_report.md.
 */
#include "report/judge/hr_inventory.h"
#include "report/read/hr_inventory_load.h"
#include "report/judge/hr_ibcounters.h"
#include "report/judge/hr_rules.h"
#include "report/judge/hr_family.h"
#include "report/judge/hr_analyze.h"
#include "base/ch_common.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Sources named in the reason texts. */
#define SRC_PCIE "NVML current vs maximum PCIe link width and generation, as nvidia-smi -q 'GPU Link Info'"
#define SRC_NVLINK_UP "NVIDIA Health Validation check nvlink_active: 0 inactive links tolerated"
#define SRC_NVLINK_ERR "Meta GCM check-dcgmi nvlink: CRC data, CRC FLIT, replay and recovery error thresholds 0"
#define SRC_ECC "NVML volatile uncorrected ECC count, as nvidia-smi -q -d ECC; Meta GCM and DCGM treat any as a failure"
#define SRC_REMAP "NVIDIA GPU memory error management: a pending remap needs a GPU reset, a failed one a replacement; Meta GCM row_remap"
#define SRC_POWER "fleet practice: every GPU of a node at one power limit (a collective runs at the pace of its slowest rank)"
#define SRC_CLOCKS "NVML clock event reasons read at idle, and applications clock vs its default"
#define SRC_GOV "Linux cpufreq (Documentation/admin-guide/pm/cpufreq.rst): the performance governor holds the highest frequency"

/* ------------------------------------------------------------ JSON access */

static int has_string(const json_t *arr, const char *s)
{
	size_t i;
	const json_t *v;
	json_array_foreach(arr, i, v)
		if (json_is_string(v) && !strcmp(json_string_value(v), s))
			return 1;
	return 0;
}

static int gpu_index(const json_t *g, size_t pos)
{
	const json_t *ix = json_object_get(g, "index");
	return json_is_integer(ix) ? (int)json_integer_value(ix) : (int)pos;
}

/* ------------------------------------------------------------ drift */

const char *hr_inventory_drift_action(int key)
{
	switch (key) {
	case HR_CFG_VBIOS:
		return "update the GPUs' VBIOS to the fleet's version (nvidia-smi -q | grep VBIOS; the vendor's firmware bundle)";
	case HR_CFG_NIC_FW:
		return "update the NICs' firmware to the fleet's version (ibv_devinfo, mlxfwmanager)";
	case HR_CFG_POWER_LIMIT:
		return "set the fleet's GPU power limit (nvidia-smi -q -d POWER; nvidia-smi -pl), or compare the node only with its like";
	default:
		return NULL;
	}
}

/* ------------------------------------------------------------ rules */

struct port {
	int node;
	const char *device, *layer;
	long long port;
	int active;
	double rate;   /* NAN unknown */
};

struct ctx {
	const struct hr_fleet *f;
	hr_inventory_emit_fn emit;
	void *ectx;
	struct port *ports;
	size_t nports;
	size_t *node_first;  /* [nnodes + 1]: node n's ports are ports[node_first[n] .. node_first[n + 1]) */
	struct pgroup *groups; /* the fleet's ports by device and port number (same_port()) */
	size_t *group_of;    /* [nports] index into groups */
	struct { const char *name; double best; } up[16]; /* fleet_nvlink_up() by GPU name */
	size_t nup;
	int gen_idle;  /* GPUs of the node below their maximum generation at idle */
	int node;      /* the node whose port counters are judged (ib_emit) */
};

static void emit(struct ctx *c, int node, int level, const char *code, const char *subject,
		 const char *action, const char *fmt, ...) __attribute__((format(printf, 7, 8)));

static void emit(struct ctx *c, int node, int level, const char *code, const char *subject,
		 const char *action, const char *fmt, ...)
{
	char text[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	c->emit(c->ectx, node, level, code, subject, c->f->nodes[node].inventory_source, action, text);
}

/* a port counter finding (hr_ibcounters.h) as a reason of node c->node */
static void ib_emit(void *ctx, int level, const char *code, const char *subject, const char *text)
{
	struct ctx *c = ctx;
	c->emit(c->ectx, c->node, level == HR_IB_FAIL ? HR_FAIL : level == HR_IB_WARN ? HR_WARN : HR_INFO, code,
		subject, c->f->nodes[c->node].inventory_source,
		level == HR_IB_INFO ? NULL :
		"the cable, transceiver and switch port (mlxlink -d <dev> -m, ibstat); re-run the node's fabric checks",
		text);
}

/* The most links up of any GPU named @name in the fleet (-1: none known);
 * kept per name in @c (the first 16 names asked). */
static double fleet_nvlink_up(struct ctx *c, const char *name)
{
	const struct hr_fleet *f = c->f;
	double best = -1;
	size_t n, i;
	const json_t *g;
	for (i = 0; name && i < c->nup; i++)
		if (!strcmp(c->up[i].name, name))
			return c->up[i].best;
	for (n = 0; n < f->nnodes; n++)
		json_array_foreach(json_object_get(f->nodes[n].inventory, "gpus"), i, g)
			if (name && hr_inv_str(g, "name") && !strcmp(hr_inv_str(g, "name"), name) &&
			    hr_inv_num(g, "nvlink.up") > best)
				best = hr_inv_num(g, "nvlink.up");
	if (name && c->nup < sizeof(c->up) / sizeof(c->up[0])) {
		c->up[c->nup].name = name;
		c->up[c->nup++].best = best;
	}
	return best;
}

static void gpu_rules(struct ctx *c, int node, const json_t *g, size_t pos)
{
	static const char *const throttles[] = { "sw_power_cap", "hw_slowdown", "sw_thermal_slowdown",
		"hw_thermal_slowdown", "hw_power_brake_slowdown" };
	static const char *const nvl[] = { "crc_data", "crc_flit", "ecc_data", "recovery", "replay" };
	const char *bus = hr_inv_str(g, "pci_bus_id") ? hr_inv_str(g, "pci_bus_id") : "?";
	const json_t *reasons = json_object_get(g, "clock_event_reasons");
	double w = hr_inv_num(g, "pcie.width_current"), wm = hr_inv_num(g, "pcie.width_max");
	double gen = hr_inv_num(g, "pcie.gen_current"), genm = hr_inv_num(g, "pcie.gen_max");
	double links = hr_inv_num(g, "nvlink.links"), up = hr_inv_num(g, "nvlink.up");
	double unc = hr_inv_num(g, "ecc.volatile.uncorrected"), agg = hr_inv_num(g, "ecc.aggregate.uncorrected");
	char subj[32], list[256];
	size_t i, len;

	snprintf(subj, sizeof(subj), "gpu%d", gpu_index(g, pos));
	if (w > 0 && wm > 0 && w < wm)
		emit(c, node, HR_FAIL, "pcie_link", subj,
		     "reseat or replace the GPU, its riser or cable; check the slot (lspci -vv, LnkSta)",
		     "%s (%s) PCIe link at x%.0f of x%.0f (threshold: below its maximum width; source: %s)",
		     subj, bus, w, wm, SRC_PCIE);
	if (gen > 0 && genm > 0 && gen < genm) {
		if (json_is_array(reasons) && !has_string(reasons, "gpu_idle"))
			emit(c, node, HR_FAIL, "pcie_link", subj,
			     "reseat or replace the GPU, its riser or cable; check the slot's BIOS setting",
			     "%s (%s) PCIe link at Gen%.0f of Gen%.0f while busy (threshold: below its maximum generation; source: %s)",
			     subj, bus, gen, genm, SRC_PCIE);
		else
			c->gen_idle++;
	}
	if (links > 0 && up < links && fleet_nvlink_up(c, hr_inv_str(g, "name")) > 0) {
		const json_t *st = json_object_get(json_object_get(g, "nvlink"), "states"), *s;
		len = 0;
		list[0] = '\0';
		json_array_foreach(st, i, s)
			if (json_is_string(s) && strcmp(json_string_value(s), "up") && len < sizeof(list))
				len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%zu", len ? "," : "", i);
		emit(c, node, HR_FAIL, "nvlink_down", subj,
		     "drain; reset the GPU (nvidia-smi -r) or reboot; if the link stays down, service the baseboard",
		     "%s: %.0f of %.0f NVLink links down (link %s) (threshold: 0 inactive; source: %s)",
		     subj, links - up, links, list[0] ? list : "?", SRC_NVLINK_UP);
	}
	len = 0;
	list[0] = '\0';
	for (i = 0; i < sizeof(nvl) / sizeof(nvl[0]); i++) {
		char p[48];
		double v;
		snprintf(p, sizeof(p), "nvlink.errors.%s", nvl[i]);
		v = hr_inv_num(g, p);
		if (v > 0 && len < sizeof(list))
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s %.0f", len ? ", " : "", nvl[i], v);
	}
	if (len)
		emit(c, node, HR_FAIL, "nvlink_errors", subj,
		     "drain; read the NVLink counters (nvidia-smi nvlink -e), reset the GPU and watch whether they grow",
		     "%s NVLink errors since the driver loaded: %s (threshold: 0 per counter; source: %s)",
		     subj, list, SRC_NVLINK_ERR);
	if (unc > 0 || (isnan(unc) && agg > 0))
		emit(c, node, HR_FAIL, "ecc_uncorrected", subj,
		     "drain: reset the GPU (nvidia-smi -r) to retire or remap the row; replace it if errors recur",
		     "%s: %.0f uncorrectable ECC error(s) %s (threshold: 0; source: %s)",
		     subj, unc > 0 ? unc : agg, unc > 0 ? "since the driver loaded" : "in its lifetime", SRC_ECC);
	else if (agg > 0)
		emit(c, node, HR_INFO, "ecc_history", subj, NULL,
		     "%s: %.0f uncorrectable ECC error(s) in its lifetime, none since the driver loaded (recorded, not judged)",
		     subj, agg);
	if (hr_inv_num(g, "remap.failure") > 0)
		emit(c, node, HR_FAIL, "row_remap", subj, "drain and replace the GPU (row remapping failed: no spare rows)",
		     "%s: row remapping failed (threshold: any failure; source: %s)", subj, SRC_REMAP);
	else if (hr_inv_num(g, "remap.pending") > 0)
		emit(c, node, HR_FAIL, "row_remap", subj, "drain, then reset the GPU (nvidia-smi -r) to apply the remap",
		     "%s: row remap pending (threshold: any pending; source: %s)", subj, SRC_REMAP);
	if (hr_inv_num(g, "retired_pages.pending") > 0)
		emit(c, node, HR_FAIL, "row_remap", subj, "drain, then reset the GPU (nvidia-smi -r) to retire the page",
		     "%s: page retirement pending (threshold: any pending; source: %s)", subj, SRC_REMAP);
	len = 0;
	list[0] = '\0';
	for (i = 0; i < sizeof(throttles) / sizeof(throttles[0]); i++)
		if (has_string(reasons, throttles[i]) && len < sizeof(list))
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", len ? "," : "", throttles[i]);
	if (len)
		emit(c, node, HR_WARN, "clocks_capped", subj,
		     "check cooling and power delivery (nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER)",
		     "%s clocks held down at idle: %s (threshold: any power or thermal reason at idle; source: %s)",
		     subj, list, SRC_CLOCKS);
	if (hr_inv_num(g, "clocks.sm_app_mhz") > 0 && hr_inv_num(g, "clocks.sm_default_app_mhz") > 0 &&
	    hr_inv_num(g, "clocks.sm_app_mhz") < hr_inv_num(g, "clocks.sm_default_app_mhz"))
		emit(c, node, HR_WARN, "clocks_capped", subj, "reset the applications clocks (nvidia-smi -rac)",
		     "%s SM applications clock %.0f MHz, below its default %.0f MHz (threshold: below the default; source: %s)",
		     subj, hr_inv_num(g, "clocks.sm_app_mhz"), hr_inv_num(g, "clocks.sm_default_app_mhz"), SRC_CLOCKS);
}

static void power_rule(struct ctx *c, int node, const json_t *gpus)
{
	double max = -1, v, same_w = hr_rule_param("power_limit_mismatch", "same_w");
	size_t i, n = 0, at_max = 0;
	const json_t *g;
	json_array_foreach(gpus, i, g)
		if ((v = hr_inv_num(g, "power.limit_enforced_w")) > max)
			max = v;
	json_array_foreach(gpus, i, g)
		if (!isnan(v = hr_inv_num(g, "power.limit_enforced_w")))
			n++, at_max += v >= max - same_w;
	json_array_foreach(gpus, i, g) {
		char subj[32];
		v = hr_inv_num(g, "power.limit_enforced_w");
		if (isnan(v) || v >= max - same_w)
			continue;
		snprintf(subj, sizeof(subj), "gpu%d", gpu_index(g, i));
		emit(c, node, HR_WARN, "power_limit_mismatch", subj,
		     "cap every GPU of a job alike (nvidia-smi -pl), or find what capped this one (nvidia-smi -q -d POWER)",
		     "%s enforced power limit %.0f W, below the %.0f W of %zu of the node's %zu GPUs: the capped GPU is the "
		     "straggler of every collective (threshold: any difference within a node; source: %s)",
		     subj, v, max, at_max, n, SRC_POWER);
	}
}

static int same_port(const struct port *a, const struct port *b)
{
	return a->port == b->port && a->device && b->device && !strcmp(a->device, b->device);
}

/* The ports of the fleet that are one port (same_port()): how many list it,
 * how many have it ACTIVE, the rates of the first 512 of them ACTIVE with a
 * rate, in the fleet's order, and their mode (computed once: mode_n 0). */
struct pgroup {
	size_t listed, active, n, mode_n;
	double v[512], mode;
};

static int cmp_port_at(const void *x, const void *y, void *ctx)
{
	const struct port *p = ctx, *a = &p[*(const size_t *)x], *b = &p[*(const size_t *)y];
	int c;
	if (!a->device || !b->device) /* no device: a port of its own */
		return a->device ? -1 : b->device ? 1 : (*(const size_t *)x > *(const size_t *)y) - (*(const size_t *)x < *(const size_t *)y);
	if ((c = strcmp(a->device, b->device)))
		return c;
	if (a->port != b->port)
		return a->port < b->port ? -1 : 1;
	return (*(const size_t *)x > *(const size_t *)y) - (*(const size_t *)x < *(const size_t *)y);
}

/* c->groups and c->group_of: the ports sorted by (device, port, order),
 * each run of one port a group. Returns 0, -1 out of memory. */
static int group_ports(struct ctx *c)
{
	size_t *ord = malloc((c->nports ? c->nports : 1) * sizeof(*ord)), i, ng = 0;
	if (!ord)
		return -1;
	c->group_of = malloc((c->nports ? c->nports : 1) * sizeof(*c->group_of));
	if (!c->group_of) {
		free(ord);
		return -1;
	}
	for (i = 0; i < c->nports; i++)
		ord[i] = i;
	qsort_r(ord, c->nports, sizeof(*ord), cmp_port_at, c->ports);
	for (i = 0; i < c->nports; i++) {
		if (!i || !same_port(&c->ports[ord[i]], &c->ports[ord[i - 1]]))
			ng++;
		c->group_of[ord[i]] = ng - 1;
	}
	free(ord);
	if (!(c->groups = calloc(ng ? ng : 1, sizeof(*c->groups))))
		return -1;
	for (i = 0; i < c->nports; i++) { /* in the fleet's order, as the scan it replaces */
		const struct port *p = &c->ports[i];
		struct pgroup *g = &c->groups[c->group_of[i]];
		g->listed++;
		g->active += p->active;
		if (p->active && !isnan(p->rate) && g->n < 512)
			g->v[g->n++] = p->rate;
	}
	return 0;
}

static void nic_rules(struct ctx *c, int node)
{
	size_t i, j;
	int unjudged = 0;
	for (i = c->node_first[node]; i < c->node_first[node + 1]; i++) {
		const struct port *p = &c->ports[i];
		struct pgroup *g = &c->groups[c->group_of[i]];
		double v[512], ref = NAN;
		size_t n = 0, cnt, listed, active;
		char subj[96];
		const char *how = NULL;

		snprintf(subj, sizeof(subj), "%s port %lld", p->device, p->port);
		if (p->device) { /* the fleet's ports that are this one (same_port()) */
			listed = g->listed;
			active = g->active;
			n = g->n;
		} else {
			listed = active = n = 0;
		}
		if (!p->active) {
			if (listed >= 2 && active == 0)
				emit(c, node, HR_INFO, "nic_port_unused", subj, NULL,
				     "%s is down on every node that has it (%zu): taken as unused, not judged", subj, listed);
			else
				emit(c, node, HR_FAIL, "nic_port_down", subj,
				     "check the cable and the switch port (ibstat, ibportstate; mlxlink -d <dev>)",
				     "%s is not ACTIVE (threshold: every port ACTIVE that is ACTIVE elsewhere in the fleet; "
				     "source: sysfs /sys/class/infiniband/%s/ports/%lld/state)", subj, p->device, p->port);
			continue;
		}
		if (isnan(p->rate))
			continue;
		if (n >= 2) {
			if (!g->mode_n)
				g->mode = hr_inv_mode(g->v, g->n, &g->mode_n);
			ref = g->mode;
			how = "the fleet's rate of that port";
		} else {
			n = 0;
			for (j = c->node_first[node]; j < c->node_first[node + 1]; j++)
				if (c->ports[j].active && !isnan(c->ports[j].rate) &&
				    p->layer && c->ports[j].layer && !strcmp(p->layer, c->ports[j].layer) && n < 512)
					v[n++] = c->ports[j].rate;
			ref = hr_inv_mode(v, n, &cnt);
			if (n >= 3 && cnt * 2 > n)
				how = "the rate of most of the node's ports of that link layer";
			else
				ref = NAN;
		}
		if (isnan(ref)) {
			unjudged++;
			continue;
		}
		if (p->rate < ref)
			emit(c, node, HR_FAIL, "nic_rate", subj,
			     "check the cable, transceiver and switch port: a link that trained at fewer lanes or a lower speed (mlxlink -d <dev>)",
			     "%s at %g Gb/s, below %g Gb/s (threshold: %s; source: sysfs /sys/class/infiniband/%s/ports/%lld/rate)",
			     subj, p->rate, ref, how, p->device, p->port);
	}
	if (unjudged)
		emit(c, node, HR_INFO, "nic_rate_not_judged", "nics", NULL,
		     "%d NIC port rate(s) not judged: no other node has the port and the node has too few like ports", unjudged);
}

static void cpu_rules(struct ctx *c, int node, const json_t *cpu)
{
	const char *gov = hr_inv_str(cpu, "governor");
	if (gov && strcmp(gov, "performance"))
		emit(c, node, HR_WARN, "cpu_governor", "cpu",
		     "set the performance governor (cpupower frequency-set -g performance), or accept slower host-side work",
		     "CPU frequency governor '%s', not 'performance' (threshold: performance on every CPU; source: %s)",
		     gov, SRC_GOV);
	if (json_is_false(json_object_get(cpu, "turbo")))
		emit(c, node, HR_WARN, "cpu_turbo", "cpu", "enable turbo (BIOS, or the turbo_source file in sysfs)",
		     "CPU turbo is off (%s) (threshold: on; source: %s)",
		     hr_inv_str(cpu, "turbo_source") ? hr_inv_str(cpu, "turbo_source") : "sysfs", SRC_GOV);
}

void hr_inventory_rules(const struct hr_fleet *f, hr_inventory_emit_fn fn, void *ectx)
{
	struct ctx c;
	size_t n, i, cap = 0;
	const json_t *o;

	memset(&c, 0, sizeof(c));
	c.f = f, c.emit = fn, c.ectx = ectx;
	for (n = 0; n < f->nnodes; n++)
		json_array_foreach(json_object_get(f->nodes[n].inventory, "nics"), i, o) {
			struct port *p;
			if (!hr_inv_str(o, "kind") || strcmp(hr_inv_str(o, "kind"), "rdma") || !hr_inv_str(o, "state"))
				continue;
			if (c.nports == cap) {
				struct port *np = realloc(c.ports, (cap = cap ? 2 * cap : 64) * sizeof(*np));
				if (!np)
					goto out;
				c.ports = np;
			}
			p = &c.ports[c.nports++];
			p->node = (int)n;
			p->device = hr_inv_str(o, "device");
			p->port = json_is_integer(json_object_get(o, "port")) ? json_integer_value(json_object_get(o, "port")) : 0;
			p->layer = hr_inv_str(o, "link_layer");
			p->active = !strcmp(hr_inv_str(o, "state"), "ACTIVE");
			p->rate = hr_inv_num(o, "rate_gbps");
		}
	/* the ports were listed node by node: each node's are one range */
	c.node_first = malloc((f->nnodes + 1) * sizeof(*c.node_first));
	if (!c.node_first || group_ports(&c))
		goto out;
	for (n = 0, i = 0; n <= f->nnodes; n++) {
		while (i < c.nports && (size_t)c.ports[i].node < n)
			i++;
		c.node_first[n] = i;
	}
	for (n = 0; n < f->nnodes; n++) {
		const json_t *inv = f->nodes[n].inventory, *gpus = json_object_get(inv, "gpus");
		if (!inv)
			continue;
		c.gen_idle = 0;
		json_array_foreach(gpus, i, o)
			gpu_rules(&c, (int)n, o, i);
		if (c.gen_idle)
			emit(&c, (int)n, HR_INFO, "pcie_gen_not_judged", "gpus", NULL,
			     "PCIe generation of %d GPU(s) below its maximum not judged: read at idle, when the link "
			     "lowers its generation to save power", c.gen_idle);
		power_rule(&c, (int)n, gpus);
		nic_rules(&c, (int)n);
		c.node = (int)n;
		hr_ib_counters_judge(json_object_get(inv, "nics"), f->nodes[n].rdma_counters_end, ib_emit, &c);
		cpu_rules(&c, (int)n, json_object_get(inv, "cpu"));
	}
out:
	free(c.ports);
	free(c.node_first);
	free(c.groups);
	free(c.group_of);
}

/* ------------------------------------------------------------ expectations */

static double nic_gbps_of(const json_t *inv, int gpu)
{
	double sum = 0;
	size_t i;
	const json_t *o, *ix;
	json_array_foreach(json_object_get(inv, "nics"), i, o) {
		size_t k;
		if (!hr_inv_str(o, "kind") || strcmp(hr_inv_str(o, "kind"), "rdma") || !hr_inv_str(o, "state") ||
		    strcmp(hr_inv_str(o, "state"), "ACTIVE") || isnan(hr_inv_num(o, "rate_gbps")))
			continue;
		json_array_foreach(json_object_get(o, "near_gpus"), k, ix)
			if (json_is_integer(ix) && json_integer_value(ix) == gpu)
				sum += hr_inv_num(o, "rate_gbps");
	}
	return sum;
}

double hr_inventory_gpu_nic_gbps(const struct hr_fleet *f, int node, int gpu)
{
	if (node < 0 || (size_t)node >= f->nnodes || !f->nodes[node].inventory)
		return NAN;
	return nic_gbps_of(f->nodes[node].inventory, gpu);
}

json_t *hr_inventory_profile(const struct hr_fleet *f, int node)
{
	const json_t *inv = f->nodes[node].inventory, *g;
	json_t *o, *rates;
	size_t i;

	if (!inv)
		return json_null();
	o = json_object();
	rates = json_array();
	json_object_set_new(o, "source", json_string(f->nodes[node].inventory_source));
	json_object_set(o, "gpus", json_object_get(inv, "gpus"));
	json_object_set(o, "nics", json_object_get(inv, "nics"));
	json_object_set(o, "cpu", json_object_get(inv, "cpu"));
	json_array_foreach(json_object_get(inv, "gpus"), i, g)
		json_array_append_new(rates, json_real(nic_gbps_of(inv, gpu_index(g, i))));
	json_object_set_new(o, "gpu_nic_gbps", rates);
	return o;
}

/* ------------------------------------------------------------ Prometheus */

struct gauge {
	const char *family, *help, *path, *lk, *lv, *lk2, *lv2;
};

static const struct gauge gpu_gauges[] = {
	{ "clusterhealth_gpu_pcie_link_width", "PCIe link width of a GPU in lanes, current and maximum (NVML).", "pcie.width_current", "kind", "current", NULL, NULL },
	{ NULL, NULL, "pcie.width_max", "kind", "max", NULL, NULL },
	{ "clusterhealth_gpu_pcie_link_gen", "PCIe link generation of a GPU, current and maximum (NVML).", "pcie.gen_current", "kind", "current", NULL, NULL },
	{ NULL, NULL, "pcie.gen_max", "kind", "max", NULL, NULL },
	{ "clusterhealth_gpu_nvlink_links", "NVLink links of a GPU: all it has and those up (NVML).", "nvlink.links", "state", "all", NULL, NULL },
	{ NULL, NULL, "nvlink.up", "state", "up", NULL, NULL },
	{ "clusterhealth_gpu_nvlink_errors_total", "NVLink error counters of a GPU summed over its links, since the driver loaded (NVML).", "nvlink.errors.replay", "counter", "replay", NULL, NULL },
	{ NULL, NULL, "nvlink.errors.recovery", "counter", "recovery", NULL, NULL },
	{ NULL, NULL, "nvlink.errors.crc_flit", "counter", "crc_flit", NULL, NULL },
	{ NULL, NULL, "nvlink.errors.crc_data", "counter", "crc_data", NULL, NULL },
	{ NULL, NULL, "nvlink.errors.ecc_data", "counter", "ecc_data", NULL, NULL },
	{ "clusterhealth_gpu_ecc_errors_total", "ECC error counts of a GPU: corrected or uncorrected, volatile (since the driver loaded) or aggregate (lifetime) (NVML).", "ecc.volatile.corrected", "type", "corrected", "counter", "volatile" },
	{ NULL, NULL, "ecc.volatile.uncorrected", "type", "uncorrected", "counter", "volatile" },
	{ NULL, NULL, "ecc.aggregate.corrected", "type", "corrected", "counter", "aggregate" },
	{ NULL, NULL, "ecc.aggregate.uncorrected", "type", "uncorrected", "counter", "aggregate" },
	{ "clusterhealth_gpu_remapped_rows", "Remapped memory rows of a GPU, for correctable and uncorrectable errors (NVML).", "remap.correctable_rows", "kind", "correctable", NULL, NULL },
	{ NULL, NULL, "remap.uncorrectable_rows", "kind", "uncorrectable", NULL, NULL },
	{ "clusterhealth_gpu_remap_pending", "1 when a row remap of a GPU waits for a reset (NVML).", "remap.pending", NULL, NULL, NULL, NULL },
	{ "clusterhealth_gpu_remap_failure", "1 when row remapping of a GPU has failed (NVML).", "remap.failure", NULL, NULL, NULL, NULL },
	{ "clusterhealth_gpu_power_limit_watts", "Power limit of a GPU, enforced and default, W (NVML).", "power.limit_enforced_w", "kind", "enforced", NULL, NULL },
	{ NULL, NULL, "power.limit_default_w", "kind", "default", NULL, NULL },
};

static void label(struct hr_buf *b, const char *k, const char *v)
{
	hr_buf_printf(b, ",%s=\"", k);
	hr_buf_prom_label(b, v ? v : "");
	hr_buf_puts(b, "\"");
}

static void head(struct hr_buf *b, const char *family, const char *help)
{
	size_t l = strlen(family);
	/* the driver's error counters only grow while it stays loaded: counters */
	hr_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", family, help, family,
		      l > 6 && !strcmp(family + l - 6, "_total") ? "counter" : "gauge");
}

#define NGAUGES (sizeof(gpu_gauges) / sizeof(gpu_gauges[0]))

size_t hr_inventory_prom_sections(void)
{
	return NGAUGES + 3; /* the GPU gauges, the NIC rate near each GPU, the NIC rate and state */
}

static const char *const nic_family[2] = { "clusterhealth_nic_rate_bytes_per_second", "clusterhealth_nic_port_active" };

void hr_inventory_prom_head(size_t k, struct hr_buf *b)
{
	if (k < NGAUGES) {
		if (gpu_gauges[k].family)
			head(b, gpu_gauges[k].family, gpu_gauges[k].help);
	} else if (k == NGAUGES) {
		head(b, "clusterhealth_gpu_nic_rate_bytes_per_second", "Rate of the ACTIVE RDMA ports near a GPU (sharing its PCIe switch or NUMA node), bytes per second.");
	} else if (k <= NGAUGES + 2) {
		head(b, nic_family[k - NGAUGES - 1], k == NGAUGES + 2 ? "1 when a network port is ACTIVE, 0 when not (sysfs)." :
			 "Rate of a network port, bytes per second (sysfs: InfiniBand rate, or netdev speed; 1 Gb/s = 125000000 bytes/s).");
	}
}

void hr_inventory_prom_node(const json_t *n, size_t k, struct hr_buf *b)
{
	const json_t *g, *o;
	const char *family = NULL;
	size_t j, q;
	char ix[16];

	if (k < NGAUGES) {
		const struct gauge *x = &gpu_gauges[k];
		for (q = k + 1; q-- > 0 && !family;) /* the family this gauge continues */
			family = gpu_gauges[q].family;
		json_array_foreach(hr_inv_dot(n, "inventory.gpus"), j, g) {
			double v = hr_inv_num(g, x->path);
			if (isnan(v))
				continue;
			snprintf(ix, sizeof(ix), "%d", gpu_index(g, j));
			hr_buf_printf(b, "%s{node=\"", family);
			hr_buf_prom_label(b, json_string_value(json_object_get(n, "name")));
			hr_buf_puts(b, "\"");
			label(b, "gpu", ix);
			if (x->lk)
				label(b, x->lk, x->lv);
			if (x->lk2)
				label(b, x->lk2, x->lv2);
			hr_buf_printf(b, "} %.10g\n", v);
		}
	} else if (k == NGAUGES) {
		json_array_foreach(hr_inv_dot(n, "inventory.gpu_nic_gbps"), j, o) {
			snprintf(ix, sizeof(ix), "%d", gpu_index(json_array_get(hr_inv_dot(n, "inventory.gpus"), j), j));
			hr_buf_puts(b, "clusterhealth_gpu_nic_rate_bytes_per_second{node=\"");
			hr_buf_prom_label(b, json_string_value(json_object_get(n, "name")));
			hr_buf_puts(b, "\"");
			label(b, "gpu", ix);
			hr_buf_printf(b, "} %.10g\n", json_number_value(o) * 125e6); /* Gb/s */
		}
	} else if (k <= NGAUGES + 2) {
		int act = k == NGAUGES + 2;
		json_array_foreach(hr_inv_dot(n, "inventory.nics"), j, o) {
			double v = act ? (hr_inv_str(o, "state") ? !strcmp(hr_inv_str(o, "state"), "ACTIVE") : NAN) : hr_inv_num(o, "rate_gbps") * 125e6;
			if (isnan(v))
				continue;
			snprintf(ix, sizeof(ix), "%lld", (long long)hr_inv_num(o, "port"));
			hr_buf_printf(b, "%s{node=\"", nic_family[act]);
			hr_buf_prom_label(b, json_string_value(json_object_get(n, "name")));
			hr_buf_puts(b, "\"");
			label(b, "device", hr_inv_str(o, "device"));
			label(b, "port", ix);
			label(b, "link_layer", hr_inv_str(o, "link_layer"));
			hr_buf_printf(b, "} %.10g\n", v);
		}
	}
}

void hr_inventory_prom(const json_t *p, struct hr_buf *b)
{
	const json_t *n;
	size_t k, i;
	for (k = 0; k < hr_inventory_prom_sections(); k++) {
		hr_inventory_prom_head(k, b);
		json_array_foreach(json_object_get(p, "nodes"), i, n)
			hr_inventory_prom_node(n, k, b);
	}
}

const struct hr_family hr_family_inventory = {
	"inventory and hardware faults",
	"each host's inventory (host.inventory: GPUs, NICs, CPU settings)",
	NULL,
	hr_inventory_rules,
};
