#include "hw/ch_inventory.h"
#include "hw/ch_host.h"
#include "hw/ch_nvml.h"
#include "hw/ch_sysfs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void nic_reason(json_t *nic, const char *field, const char *why)
{
	json_t *r = json_object_get(nic, "reasons");
	json_object_set_new(nic, field, json_null());
	if (json_is_object(r))
		json_object_set_new(r, field, json_string(why));
}

/* 1 when the lowest common ancestor of @a and @b is a PCI-to-PCI bridge. */
static int share_pci_bridge(hwloc_obj_t a, hwloc_obj_t b)
{
	hwloc_obj_t x, y;
	for (x = a->parent; x; x = x->parent)
		for (y = b->parent; y; y = y->parent)
			if (x == y)
				return x->type == HWLOC_OBJ_BRIDGE &&
				       x->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI;
	return 0;
}

static int cmp_int(const void *a, const void *b)
{
	json_int_t x = *(const json_int_t *)a, y = *(const json_int_t *)b;
	return x < y ? -1 : x > y;
}

void ch_inventory_near_gpus(hwloc_topology_t topo, json_t *nics, const json_t *gpus)
{
	size_t i, j;
	json_t *nic, *gpu;

	json_array_foreach(nics, i, nic) {
		const char *bus = json_string_value(json_object_get(nic, "pci_bus_id"));
		json_int_t sw[64], numa[64];
		size_t nsw = 0, nnuma = 0, k;
		hwloc_obj_t o, oa;
		char why[160];
		json_t *arr;

		if (!topo) {
			nic_reason(nic, "near_gpus", "no hwloc topology");
			nic_reason(nic, "near_by", "no hwloc topology");
			continue;
		}
		if (!bus) {
			nic_reason(nic, "near_gpus", "the port has no PCI bus id");
			nic_reason(nic, "near_by", "the port has no PCI bus id");
			continue;
		}
		o = hwloc_get_pcidev_by_busidstring(topo, bus);
		if (!o) {
			snprintf(why, sizeof(why), "PCI function %s is not in the hwloc topology", bus);
			nic_reason(nic, "near_gpus", why);
			nic_reason(nic, "near_by", why);
			continue;
		}
		oa = hwloc_get_non_io_ancestor_obj(topo, o);
		json_array_foreach(gpus, j, gpu) {
			const char *gb = json_string_value(json_object_get(gpu, "pci_bus_id"));
			json_t *ix = json_object_get(gpu, "index");
			hwloc_obj_t g = gb ? hwloc_get_pcidev_by_busidstring(topo, gb) : NULL;
			if (!g || !json_is_integer(ix))
				continue;
			if (share_pci_bridge(o, g) && nsw < 64)
				sw[nsw++] = json_integer_value(ix);
			else if (oa && hwloc_get_non_io_ancestor_obj(topo, g) == oa && nnuma < 64)
				numa[nnuma++] = json_integer_value(ix);
		}
		arr = json_array();
		if (nsw) {
			qsort(sw, nsw, sizeof(*sw), cmp_int);
			for (k = 0; k < nsw; k++)
				json_array_append_new(arr, json_integer(sw[k]));
			json_object_set_new(nic, "near_by", json_string("pcie_switch"));
		} else if (nnuma) {
			qsort(numa, nnuma, sizeof(*numa), cmp_int);
			for (k = 0; k < nnuma; k++)
				json_array_append_new(arr, json_integer(numa[k]));
			json_object_set_new(nic, "near_by", json_string("numa_node"));
		} else {
			json_object_set_new(nic, "near_by", json_null());
			json_object_set_new(json_object_get(nic, "reasons"), "near_by",
					    json_string("no GPU shares a PCIe switch or NUMA node with it"));
		}
		json_object_set_new(nic, "near_gpus", arr);
	}
}

json_t *ch_inventory_gpus_from_topology(hwloc_topology_t topo, const char *why)
{
	static const char *const fields[] = { "uuid", "serial", "pcie", "nvlink", "ecc", "remap",
		"retired_pages", "power", "clocks", "persistence", "clock_event_reasons",
		"driver_version", "vbios_version" };
	struct ch_gpu_loc g[64];
	json_t *arr = json_array();
	int n = topo ? ch_topo_gpus(topo, g, 64) : 0, k;
	size_t f;

	if (!arr)
		return NULL;
	for (k = 0; k < n && k < 64; k++) {
		json_t *o = json_object(), *rs = json_object();
		json_object_set_new(o, "index", json_integer(k));
		json_object_set_new(o, "name", json_string(g[k].name));
		json_object_set_new(o, "pci_bus_id", json_string(g[k].pci_bus_id));
		for (f = 0; f < sizeof(fields) / sizeof(fields[0]); f++) {
			json_object_set_new(o, fields[f], json_null());
			json_object_set_new(rs, fields[f], json_string(why));
		}
		json_object_set_new(o, "reasons", rs);
		json_array_append_new(arr, o);
	}
	return arr;
}

json_t *ch_inventory_collect(hwloc_topology_t topo, const char *sysfs_root)
{
	json_t *inv = json_object(), *rs = json_object(), *gpus = NULL, *nics, *v;
	char why[512], nwhy[300];
	size_t i;
	int rdma = 0;

	if (!inv || !rs) {
		json_decref(inv);
		json_decref(rs);
		return NULL;
	}
	if (ch_nvml_init(nwhy, sizeof(nwhy)) == 0) {
		int n = ch_nvml_device_count(), k;
		gpus = json_array();
		for (k = 0; k < n; k++) {
			ch_nvml_dev_t d;
			json_t *g = ch_nvml_device_by_index((unsigned)k, &d) == 0 ? ch_nvml_gpu_inventory(d, (unsigned)k) : NULL;
			if (g)
				json_array_append_new(gpus, g);
		}
		if (n == 0)
			json_object_set_new(rs, "gpus", json_string("NVML lists no GPU"));
		ch_nvml_shutdown();
	} else {
		snprintf(why, sizeof(why), "NVML unavailable: %s", nwhy);
		gpus = ch_inventory_gpus_from_topology(topo, why);
		if (gpus && json_array_size(gpus) == 0)
			snprintf(why, sizeof(why), "no GPU: hwloc lists none and NVML is unavailable (%s)", nwhy);
		json_object_set_new(rs, "gpus", json_string(why));
	}
	nics = ch_sysfs_nics(sysfs_root);
	if (nics && gpus)
		ch_inventory_near_gpus(topo, nics, gpus);
	json_array_foreach(nics, i, v) {
		const char *kind = json_string_value(json_object_get(v, "kind"));
		if (kind && !strcmp(kind, "rdma"))
			rdma++;
	}
	if (!rdma) {
		snprintf(why, sizeof(why), "no RDMA port: %s/sys/class/infiniband is absent or empty "
			 "(no InfiniBand or RoCE NIC, or its driver is not loaded)", sysfs_root ? sysfs_root : "");
		json_object_set_new(rs, "nics", json_string(why));
	}
	json_object_set_new(inv, "gpus", gpus ? gpus : json_array());
	json_object_set_new(inv, "nics", nics ? nics : json_array());
	v = ch_sysfs_cpu(sysfs_root);
	json_object_set_new(inv, "cpu", v ? v : json_null());
	json_object_set_new(inv, "reasons", rs);
	return inv;
}
