#include "hw/ch_host.h"
#include "base/ch_common.h"

#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

int ch_topo_load(const char *xml_path, hwloc_topology_t *out)
{
	hwloc_topology_t t;

	if (hwloc_topology_init(&t) != 0) {
		ch_error("hwloc_topology_init failed");
		return CH_ERR_RUNTIME;
	}
	hwloc_topology_set_io_types_filter(t, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
	/* PCI devices are all we need: skip the OpenCL and GL plugins, which
	 * initialise whole ICD loaders (slow, and they leak at exit) */
	hwloc_topology_set_components(t, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "opencl");
	hwloc_topology_set_components(t, HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, "gl");
	if (xml_path) {
		if (access(xml_path, R_OK) != 0) {
			hwloc_topology_destroy(t);
			return ch_usage_error("cannot read topology file '%s'", xml_path);
		}
		if (hwloc_topology_set_xml(t, xml_path) != 0) {
			hwloc_topology_destroy(t);
			return ch_usage_error("'%s' is not an hwloc XML topology (version 2) that hwloc can read", xml_path);
		}
	}
	if (hwloc_topology_load(t) != 0) {
		hwloc_topology_destroy(t);
		if (xml_path)
			return ch_usage_error("hwloc cannot load topology file '%s'", xml_path);
		ch_error("hwloc cannot load this machine's topology");
		return CH_ERR_RUNTIME;
	}
	*out = t;
	return 0;
}

static int is_gpu(hwloc_obj_t o)
{
	unsigned cls = o->attr->pcidev.class_id;
	unsigned v = o->attr->pcidev.vendor_id;
	if ((cls >> 8) != 0x03) /* display controllers: VGA 0x0300, 3D 0x0302 */
		return 0;
	return v == 0x10de || v == 0x1002 || v == 0x8086;
}

int ch_topo_gpus(hwloc_topology_t topo, struct ch_gpu_loc *gpus, int max)
{
	hwloc_obj_t o = NULL;
	int n = 0;

	while ((o = hwloc_get_next_pcidev(topo, o)) != NULL) {
		struct ch_gpu_loc *g;
		hwloc_obj_t anc, numa;
		const char *name;

		if (!is_gpu(o))
			continue;
		if (n < max) {
			g = &gpus[n];
			memset(g, 0, sizeof(*g));
			snprintf(g->pci_bus_id, sizeof(g->pci_bus_id), "%04x:%02x:%02x.%01x",
				 o->attr->pcidev.domain, o->attr->pcidev.bus,
				 o->attr->pcidev.dev, o->attr->pcidev.func);
			g->vendor_id = o->attr->pcidev.vendor_id;
			g->device_id = o->attr->pcidev.device_id;
			name = hwloc_obj_get_info_by_name(o, "PCIDevice");
			snprintf(g->name, sizeof(g->name), "%s", name ? name : (o->name ? o->name : "unknown"));
			anc = hwloc_get_non_io_ancestor_obj(topo, o);
			g->cpuset = anc ? anc->cpuset : hwloc_topology_get_topology_cpuset(topo);
			g->numa_node = -1;
			if (anc) {
				numa = NULL;
				/* nearest NUMA node: first one inside the ancestor's nodeset */
				while ((numa = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, numa)))
					if (hwloc_bitmap_isincluded(numa->cpuset, anc->cpuset) ||
					    hwloc_bitmap_isincluded(anc->cpuset, numa->cpuset)) {
						g->numa_node = (int)numa->logical_index;
						break;
					}
			}
		}
		n++;
	}
	return n;
}

uint64_t ch_topo_llc_bytes(hwloc_topology_t topo)
{
	static const hwloc_obj_type_t levels[] = { HWLOC_OBJ_L5CACHE, HWLOC_OBJ_L4CACHE,
		HWLOC_OBJ_L3CACHE, HWLOC_OBJ_L2CACHE, HWLOC_OBJ_L1CACHE };
	size_t i;

	for (i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
		int k, n = hwloc_get_nbobjs_by_type(topo, levels[i]);
		uint64_t sum = 0;
		for (k = 0; k < n; k++) {
			hwloc_obj_t c = hwloc_get_obj_by_type(topo, levels[i], (unsigned)k);
			sum += c->attr->cache.size;
		}
		if (n > 0 && sum > 0)
			return sum;
	}
	return 0;
}

char *ch_cpuset_to_list(hwloc_const_bitmap_t set, char *buf, size_t n)
{
	if (hwloc_bitmap_list_snprintf(buf, n, set) < 0 && n)
		buf[0] = '\0';
	return buf;
}

json_t *ch_host_describe(hwloc_topology_t topo)
{
	static const struct { hwloc_obj_type_t t; const char *name; } caches[] = {
		{ HWLOC_OBJ_L1CACHE, "L1" }, { HWLOC_OBJ_L2CACHE, "L2" },
		{ HWLOC_OBJ_L3CACHE, "L3" }, { HWLOC_OBJ_L4CACHE, "L4" },
	};
	json_t *h = json_object(), *jc = json_array(), *jg = json_array();
	hwloc_obj_t root = hwloc_get_root_obj(topo), pkg;
	struct ch_gpu_loc gpus[64];
	struct utsname u;
	const char *model = NULL;
	char hn[256] = "", buf[1024];
	size_t i;
	int ng, k;

	if (!h || !jc || !jg) {
		json_decref(h); json_decref(jc); json_decref(jg);
		return NULL;
	}
	gethostname(hn, sizeof(hn) - 1);
	json_object_set_new(h, "hostname", json_string(hn));
	if (uname(&u) == 0)
		json_object_set_new(h, "kernel", json_string(u.release));
	pkg = hwloc_get_obj_by_type(topo, HWLOC_OBJ_PACKAGE, 0);
	if (pkg)
		model = hwloc_obj_get_info_by_name(pkg, "CPUModel");
	json_object_set_new(h, "cpu_model", model ? json_string(model) : json_null());
	json_object_set_new(h, "packages", json_integer(hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PACKAGE)));
	json_object_set_new(h, "cores", json_integer(hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE)));
	json_object_set_new(h, "pus", json_integer(hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_PU)));
	json_object_set_new(h, "numa_nodes", json_integer(hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE)));
	json_object_set_new(h, "memory_bytes", json_integer((json_int_t)root->total_memory));
	for (i = 0; i < sizeof(caches) / sizeof(caches[0]); i++) {
		int n = hwloc_get_nbobjs_by_type(topo, caches[i].t);
		hwloc_obj_t c;
		json_t *e;
		if (n <= 0)
			continue;
		c = hwloc_get_obj_by_type(topo, caches[i].t, 0);
		e = json_object();
		json_object_set_new(e, "level", json_string(caches[i].name));
		json_object_set_new(e, "type", json_string(c->attr->cache.type == HWLOC_OBJ_CACHE_DATA ? "data" :
			c->attr->cache.type == HWLOC_OBJ_CACHE_INSTRUCTION ? "instruction" : "unified"));
		json_object_set_new(e, "size_bytes", json_integer((json_int_t)c->attr->cache.size));
		json_object_set_new(e, "count", json_integer(n));
		json_array_append_new(jc, e);
	}
	json_object_set_new(h, "caches", jc);
	json_object_set_new(h, "llc_total_bytes", json_integer((json_int_t)ch_topo_llc_bytes(topo)));
	ng = ch_topo_gpus(topo, gpus, 64);
	for (k = 0; k < ng && k < 64; k++) {
		json_t *e = json_object();
		char id[16];
		json_object_set_new(e, "index", json_integer(k));
		json_object_set_new(e, "pci_bus_id", json_string(gpus[k].pci_bus_id));
		snprintf(id, sizeof(id), "0x%04x", gpus[k].vendor_id);
		json_object_set_new(e, "vendor_id", json_string(id));
		snprintf(id, sizeof(id), "0x%04x", gpus[k].device_id);
		json_object_set_new(e, "device_id", json_string(id));
		json_object_set_new(e, "name", json_string(gpus[k].name));
		json_object_set_new(e, "numa_node", gpus[k].numa_node >= 0 ? json_integer(gpus[k].numa_node) : json_null());
		json_object_set_new(e, "local_cpus", json_string(ch_cpuset_to_list(gpus[k].cpuset, buf, sizeof(buf))));
		json_array_append_new(jg, e);
	}
	json_object_set_new(h, "gpus", jg);
	return h;
}

uint64_t ch_host_mem_available_bytes(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[256];
	unsigned long long kb = 0;

	if (f) {
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
				break;
		fclose(f);
	}
	if (!kb) {
		long pages = sysconf(_SC_AVPHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
		if (pages > 0 && psz > 0)
			return (uint64_t)pages * (uint64_t)psz;
	}
	return (uint64_t)kb * 1024;
}
