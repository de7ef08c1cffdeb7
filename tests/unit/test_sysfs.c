#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hw/ch_host.h"
#include "hw/ch_inventory.h"
#include "hw/ch_sysfs.h"

#define TREES "tests/data/sysfs/"

static const char *str(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static const char *why(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(json_object_get(o, "reasons"), k));
}

Test(sysfs, ib_state_format)
{
	char name[32];
	cr_assert_eq(ch_sysfs_parse_ib_state("4: ACTIVE\n", name, sizeof(name)), 4);
	cr_assert_str_eq(name, "ACTIVE");
	cr_assert_eq(ch_sysfs_parse_ib_state("5: LinkUp", name, sizeof(name)), 5);
	cr_assert_str_eq(name, "LinkUp");
	cr_assert_eq(ch_sysfs_parse_ib_state("1: DOWN", name, sizeof(name)), 1);
	cr_assert_eq(ch_sysfs_parse_ib_state("ACTIVE", name, sizeof(name)), -1);
	cr_assert_str_eq(name, "");
	cr_assert_eq(ch_sysfs_parse_ib_state("4:ACTIVE", name, sizeof(name)), -1);
	cr_assert_eq(ch_sysfs_parse_ib_state("4: ", name, sizeof(name)), -1);
	cr_assert_eq(ch_sysfs_parse_ib_state("", name, sizeof(name)), -1);
}

Test(sysfs, ib_rate_format)
{
	cr_assert_float_eq(ch_sysfs_parse_ib_rate("400 Gb/sec (4X NDR)\n"), 400.0, 1e-12);
	cr_assert_float_eq(ch_sysfs_parse_ib_rate("100 Gb/sec (1X NDR)"), 100.0, 1e-12);
	cr_assert_float_eq(ch_sysfs_parse_ib_rate("2.5 Gb/sec (1X SDR)"), 2.5, 1e-12);
	cr_assert_float_eq(ch_sysfs_parse_ib_rate("200 Gb/sec"), 200.0, 1e-12);
	cr_assert(isnan(ch_sysfs_parse_ib_rate("400 Gbps")));
	cr_assert(isnan(ch_sysfs_parse_ib_rate("fast")));
	cr_assert(isnan(ch_sysfs_parse_ib_rate("0 Gb/sec (4X)")));
	cr_assert(isnan(ch_sysfs_parse_ib_rate("")));
}

Test(sysfs, ndr8_ports)
{
	json_t *a = ch_sysfs_nics(TREES "hgx-ndr8");
	static const char *const bus[] = { "0000:18:00.0", "0000:40:00.0", "0000:4f:00.0", "0000:5e:00.0",
		"0000:9a:00.0", "0000:c0:00.0", "0000:ce:00.0", "0000:dc:00.0" };
	size_t i;

	cr_assert_not_null(a);
	/* 8 RDMA ports, then eno1; their IPoIB netdevs and lo are not listed */
	cr_assert_eq(json_array_size(a), 9);
	for (i = 0; i < 8; i++) {
		json_t *p = json_array_get(a, i);
		char dev[16];
		snprintf(dev, sizeof(dev), "mlx5_%zu", i);
		cr_assert_str_eq(str(p, "device"), dev);
		cr_assert_eq(json_integer_value(json_object_get(p, "port")), 1);
		cr_assert_str_eq(str(p, "kind"), "rdma");
		cr_assert_str_eq(str(p, "state"), "ACTIVE");
		cr_assert_str_eq(str(p, "phys_state"), "LinkUp");
		cr_assert_float_eq(json_real_value(json_object_get(p, "rate_gbps")), 400.0, 1e-12);
		cr_assert_str_eq(str(p, "rate_text"), "400 Gb/sec (4X NDR)");
		cr_assert_str_eq(str(p, "link_layer"), "InfiniBand");
		cr_assert_str_eq(str(p, "fw_version"), "28.39.1002");
		cr_assert_eq(json_integer_value(json_object_get(p, "numa_node")), i < 4 ? 0 : 1);
		cr_assert_str_eq(str(p, "pci_bus_id"), bus[i]);
		cr_assert_eq(json_object_size(json_object_get(p, "reasons")), 0);
	}
	cr_assert_str_eq(str(json_array_get(a, 0), "netdev"), "ibp24s0");
	{
		json_t *e = json_array_get(a, 8);
		cr_assert_str_eq(str(e, "device"), "eno1");
		cr_assert_str_eq(str(e, "kind"), "netdev");
		cr_assert_str_eq(str(e, "state"), "ACTIVE");
		cr_assert_float_eq(json_real_value(json_object_get(e, "rate_gbps")), 25.0, 1e-12);
		cr_assert_str_eq(str(e, "pci_bus_id"), "0000:01:00.0");
		cr_assert(json_is_null(json_object_get(e, "fw_version")));
		cr_assert_not_null(why(e, "fw_version"));
	}
	json_decref(a);
}

Test(sysfs, port_down_and_quarter_rate)
{
	json_t *a = ch_sysfs_nics(TREES "hgx-ndr8-port-down"), *p;
	p = json_array_get(a, 3);
	cr_assert_str_eq(str(p, "device"), "mlx5_3");
	cr_assert_str_eq(str(p, "state"), "DOWN");
	cr_assert_str_eq(str(p, "phys_state"), "Polling");
	cr_assert_str_eq(str(json_array_get(a, 2), "state"), "ACTIVE");
	json_decref(a);
	a = ch_sysfs_nics(TREES "hgx-ndr8-quarter");
	p = json_array_get(a, 5);
	cr_assert_str_eq(str(p, "device"), "mlx5_5");
	cr_assert_str_eq(str(p, "state"), "ACTIVE");
	cr_assert_float_eq(json_real_value(json_object_get(p, "rate_gbps")), 100.0, 1e-12);
	cr_assert_str_eq(str(p, "rate_text"), "100 Gb/sec (1X NDR)");
	cr_assert_float_eq(json_real_value(json_object_get(json_array_get(a, 4), "rate_gbps")), 400.0, 1e-12);
	json_decref(a);
}

Test(sysfs, roce_ports)
{
	json_t *a = ch_sysfs_nics(TREES "hgx-roce8"), *p;
	size_t i;
	cr_assert_eq(json_array_size(a), 9);
	for (i = 0; i < 8; i++) {
		char nd[16];
		p = json_array_get(a, i);
		snprintf(nd, sizeof(nd), "ens%zunp0", i + 1);
		cr_assert_str_eq(str(p, "kind"), "rdma");
		cr_assert_str_eq(str(p, "link_layer"), "Ethernet");
		cr_assert_float_eq(json_real_value(json_object_get(p, "rate_gbps")), 200.0, 1e-12);
		cr_assert_str_eq(str(p, "fw_version"), "22.36.1010");
		cr_assert_str_eq(str(p, "netdev"), nd);
	}
	json_decref(a);
}

Test(sysfs, cpu_settings)
{
	json_t *c = ch_sysfs_cpu(TREES "hgx-ndr8");
	cr_assert_str_eq(str(c, "governor"), "performance");
	cr_assert_eq(json_integer_value(json_object_get(json_object_get(c, "governors"), "performance")), 4);
	cr_assert(json_is_true(json_object_get(c, "turbo")));
	cr_assert_str_eq(str(c, "turbo_source"), "intel_pstate/no_turbo");
	json_decref(c);
	c = ch_sysfs_cpu(TREES "hgx-roce8");
	cr_assert_str_eq(str(c, "governor"), "mixed");
	cr_assert_eq(json_integer_value(json_object_get(json_object_get(c, "governors"), "schedutil")), 2);
	cr_assert(json_is_true(json_object_get(c, "turbo")));
	cr_assert_str_eq(str(c, "turbo_source"), "cpufreq/boost");
	json_decref(c);
}

/* this machine's own tree, copied (make-trees.py --copy-this-machine): a
 * virtual machine with one virtio NIC, no RDMA, no cpufreq */
Test(sysfs, copied_vm_tree)
{
	json_t *a = ch_sysfs_nics(TREES "this-vm"), *p, *c;
	cr_assert_eq(json_array_size(a), 1);
	p = json_array_get(a, 0);
	cr_assert_str_eq(str(p, "device"), "eth0");
	cr_assert_str_eq(str(p, "kind"), "netdev");
	cr_assert_str_eq(str(p, "state"), "ACTIVE");
	cr_assert_str_eq(str(p, "pci_bus_id"), "0000:00:03.0");
	cr_assert(json_is_null(json_object_get(p, "rate_gbps")));
	cr_assert_str_eq(why(p, "rate_gbps"), "/sys/class/net/eth0/speed reads '-1' (the driver reports no link speed)");
	cr_assert(json_is_null(json_object_get(p, "numa_node")));
	cr_assert_not_null(why(p, "numa_node"));
	json_decref(a);
	c = ch_sysfs_cpu(TREES "this-vm");
	cr_assert(json_is_null(json_object_get(c, "governor")));
	cr_assert(json_is_null(json_object_get(c, "turbo")));
	cr_assert_not_null(why(c, "governor"));
	cr_assert_not_null(why(c, "turbo"));
	json_decref(c);
}

Test(sysfs, absent_tree_lists_nothing)
{
	json_t *a = ch_sysfs_nics("/nonexistent/sysfs-root");
	cr_assert_eq(json_array_size(a), 0);
	json_decref(a);
}

Test(inventory, near_gpus_by_switch_and_numa)
{
	hwloc_topology_t t;
	json_t *nics = ch_sysfs_nics(TREES "hgx-ndr8"), *gpus, *p;
	size_t i;

	cr_assert_eq(ch_topo_load(TREES "hgx-8gpu.xml", &t), 0);
	gpus = ch_inventory_gpus_from_topology(t, "NVML unavailable: test");
	cr_assert_eq(json_array_size(gpus), 8);
	cr_assert_str_eq(str(json_array_get(gpus, 0), "pci_bus_id"), "0000:1b:00.0");
	cr_assert_str_eq(why(json_array_get(gpus, 0), "ecc"), "NVML unavailable: test");
	ch_inventory_near_gpus(t, nics, gpus);
	for (i = 0; i < 8; i++) {
		json_t *near = json_object_get(json_array_get(nics, i), "near_gpus");
		cr_assert_eq(json_array_size(near), 1, "mlx5_%zu", i);
		cr_assert_eq(json_integer_value(json_array_get(near, 0)), (json_int_t)i);
		cr_assert_str_eq(str(json_array_get(nics, i), "near_by"), "pcie_switch");
	}
	p = json_array_get(nics, 8); /* eno1: its own root port on package 0 */
	cr_assert_str_eq(str(p, "near_by"), "numa_node");
	cr_assert_eq(json_array_size(json_object_get(p, "near_gpus")), 4);
	for (i = 0; i < 4; i++)
		cr_assert_eq(json_integer_value(json_array_get(json_object_get(p, "near_gpus"), i)), (json_int_t)i);
	json_decref(nics);
	json_decref(gpus);
	hwloc_topology_destroy(t);
}

Test(inventory, near_gpus_without_topology_says_why)
{
	json_t *nics = ch_sysfs_nics(TREES "hgx-ndr8"), *gpus = json_array();
	ch_inventory_near_gpus(NULL, nics, gpus);
	cr_assert(json_is_null(json_object_get(json_array_get(nics, 0), "near_gpus")));
	cr_assert_str_eq(why(json_array_get(nics, 0), "near_gpus"), "no hwloc topology");
	json_decref(nics);
	json_decref(gpus);
}

Test(inventory, this_machine_says_why_per_item)
{
	json_t *inv = ch_inventory_collect(NULL, TREES "this-vm");
	cr_assert_not_null(inv);
	cr_assert(json_is_array(json_object_get(inv, "gpus")));
	cr_assert(json_is_array(json_object_get(inv, "nics")));
	cr_assert(json_is_object(json_object_get(inv, "cpu")));
	/* no RDMA here: the reason says so */
	cr_assert_not_null(strstr(why(inv, "nics"), "no RDMA port"));
	if (json_array_size(json_object_get(inv, "gpus")) == 0)
		cr_assert_not_null(why(inv, "gpus"));
	json_decref(inv);
}

static long long counter(const json_t *o, const char *group, const char *name)
{
	const json_t *v = json_object_get(json_object_get(o, group), name);
	return json_is_integer(v) ? (long long)json_integer_value(v) : -1;
}

Test(sysfs, port_counters)
{
	json_t *a = ch_sysfs_nics(TREES "hgx-ndr8"), *p = json_array_get(a, 2), *e;

	cr_assert_str_eq(str(p, "device"), "mlx5_2");
	cr_assert_eq(counter(p, "counters", "link_downed"), 0);
	cr_assert_eq(counter(p, "counters", "link_error_recovery"), 0);
	cr_assert_eq(counter(p, "counters", "symbol_error"), 0);
	cr_assert_eq(counter(p, "counters", "port_rcv_data"), 3000000000LL);
	cr_assert_eq(json_object_size(json_object_get(p, "counters")), 17);
	cr_assert_eq(counter(p, "hw_counters", "out_of_sequence"), 0);
	cr_assert_null(json_object_get(json_object_get(p, "hw_counters"), "lifespan"));
	/* a netdev has none */
	cr_assert_null(json_object_get(json_array_get(a, 8), "counters"));
	json_decref(a);

	/* the end of a run on which mlx5_2's link flapped */
	e = ch_sysfs_rdma_counters(TREES "hgx-ndr8-flapping");
	cr_assert_not_null(e);
	cr_assert(json_is_string(json_object_get(e, "utc")));
	cr_assert_eq(json_array_size(json_object_get(e, "ports")), 8);
	p = json_array_get(json_object_get(e, "ports"), 2);
	cr_assert_str_eq(str(p, "device"), "mlx5_2");
	cr_assert_eq(json_integer_value(json_object_get(p, "port")), 1);
	cr_assert_eq(counter(p, "counters", "link_downed"), 2);
	cr_assert_eq(counter(p, "counters", "link_error_recovery"), 5);
	cr_assert_eq(counter(p, "counters", "symbol_error"), 1800);
	cr_assert_eq(counter(p, "counters", "port_rcv_data"), 3500000000LL);
	json_decref(e);
	e = ch_sysfs_rdma_counters("/nonexistent/sysfs-root");
	cr_assert_eq(json_array_size(json_object_get(e, "ports")), 0);
	json_decref(e);
}

/* a counter that is not a count is left out, with its reason; no directory: null, with its reason */
Test(sysfs, port_counters_bad_values)
{
	char root[] = "/tmp/ch_sysfs_XXXXXX", path[512], cmd[600];
	const char *files[][2] = { { "counters/symbol_error", "7\n" }, { "counters/link_downed", "-1\n" },
				   { "counters/port_rcv_errors", "lots\n" }, { "counters/port_rcv_data", "" } };
	json_t *e, *p, *rs;
	size_t i;

	cr_assert_not_null(mkdtemp(root));
	for (i = 0; i < 4; i++) {
		FILE *f;
		snprintf(path, sizeof(path), "%s/sys/class/infiniband/mlx5_0/ports/1/%s", root, files[i][0]);
		snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", path);
		cr_assert_eq(system(cmd), 0);
		cr_assert_not_null(f = fopen(path, "w"));
		fputs(files[i][1], f);
		fclose(f);
	}
	e = ch_sysfs_rdma_counters(root);
	p = json_array_get(json_object_get(e, "ports"), 0);
	rs = json_object_get(p, "reasons");
	cr_assert_eq(counter(p, "counters", "symbol_error"), 7);
	cr_assert_eq(json_object_size(json_object_get(p, "counters")), 1);
	cr_assert(strstr(json_string_value(json_object_get(rs, "counters.link_downed")), "reads '-1' (not a count)"));
	cr_assert(strstr(json_string_value(json_object_get(rs, "counters.port_rcv_errors")), "reads 'lots'"));
	cr_assert(strstr(json_string_value(json_object_get(rs, "counters.port_rcv_data")), "reads ''"));
	cr_assert(json_is_null(json_object_get(p, "hw_counters")));
	cr_assert(strstr(json_string_value(json_object_get(rs, "hw_counters")), "not present"));
	json_decref(e);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	cr_assert_eq(system(cmd), 0);
}

#include "report/judge/hr_ibcounters.h"

struct ib_found {
	int n, level[16];
	char code[16][40], subj[16][40], text[16][1400];
};

static void ib_emit(void *ctx, int level, const char *code, const char *subject, const char *text)
{
	struct ib_found *f = ctx;
	if (f->n >= 16)
		return;
	f->level[f->n] = level;
	snprintf(f->code[f->n], sizeof(f->code[0]), "%s", code);
	snprintf(f->subj[f->n], sizeof(f->subj[0]), "%s", subject);
	snprintf(f->text[f->n], sizeof(f->text[0]), "%s", text);
	f->n++;
}

/* a run that started as hgx-ndr8 and ended as hgx-ndr8-flapping */
Test(ibcounters, flapping_link_found)
{
	json_t *start = ch_sysfs_nics(TREES "hgx-ndr8"), *end = ch_sysfs_rdma_counters(TREES "hgx-ndr8-flapping");
	struct ib_found f = { 0 };

	cr_assert_eq(hr_ib_counters_judge(start, end, ib_emit, &f), 8);
	cr_assert_eq(f.n, 4);
	cr_assert_str_eq(f.code[0], "ib_link_down");
	cr_assert_eq(f.level[0], HR_IB_FAIL);
	cr_assert_str_eq(f.subj[0], "mlx5_2 port 1");
	cr_assert(strstr(f.text[0], "link_downed +2 (0 to 2; threshold 1)"), "%s", f.text[0]);
	cr_assert_str_eq(f.code[1], "ib_link_recovery");
	cr_assert(strstr(f.text[1], "link_error_recovery +5"));
	cr_assert_str_eq(f.code[2], "ib_port_errors");
	cr_assert_eq(f.level[2], HR_IB_WARN);
	cr_assert(strstr(f.text[2], "symbol_error +1800 (0 to 1800; threshold 10), port_rcv_errors +240"), "%s", f.text[2]);
	cr_assert(strstr(f.text[2], "rdma-core"));
	/* mlx5_6: 12 receive errors, above 10 */
	cr_assert_str_eq(f.subj[3], "mlx5_6 port 1");
	cr_assert(strstr(f.text[3], "port_rcv_errors +12"));
	json_decref(start);
	json_decref(end);
}

/* a clean run: nothing; counters that went down: not judged; no end: nothing compared */
Test(ibcounters, clean_cleared_and_absent)
{
	json_t *start = ch_sysfs_nics(TREES "hgx-ndr8"), *end = ch_sysfs_rdma_counters(TREES "hgx-ndr8");
	json_t *flap = ch_sysfs_nics(TREES "hgx-ndr8-flapping");
	struct ib_found f = { 0 };

	cr_assert_eq(hr_ib_counters_judge(start, end, ib_emit, &f), 8);
	cr_assert_eq(f.n, 0);
	/* started flapped, ended clean: the counters were cleared */
	cr_assert_eq(hr_ib_counters_judge(flap, end, ib_emit, &f), 8);
	cr_assert_eq(f.n, 2);
	cr_assert_str_eq(f.code[0], "ib_counters_not_judged");
	cr_assert(strstr(f.text[0], "link_downed 2 to 0"));
	f.n = 0;
	cr_assert_eq(hr_ib_counters_judge(start, NULL, ib_emit, &f), 0);
	cr_assert_eq(hr_ib_counters_judge(NULL, end, ib_emit, &f), 0);
	cr_assert_eq(f.n, 0);
	json_decref(start);
	json_decref(end);
	json_decref(flap);
}
