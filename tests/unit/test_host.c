#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <jansson.h>
#include <string.h>

#include "base/ch_common.h"
#include "hw/ch_host.h"

#define TOPO "tests/data/topologies/"

Test(host, dgx2_has_16_gpus_on_two_sockets)
{
	hwloc_topology_t t;
	struct ch_gpu_loc g[32];
	int n;

	cr_assert_eq(ch_topo_load(TOPO "dgx2-v100-16gpu.xml", &t), 0);
	n = ch_topo_gpus(t, g, 32);
	cr_assert_eq(n, 16);
	cr_assert_eq(hwloc_get_nbobjs_by_type(t, HWLOC_OBJ_PACKAGE), 2);
	cr_assert_eq(g[0].vendor_id, 0x10de);
	cr_assert(g[0].numa_node >= 0);
	hwloc_topology_destroy(t);
}

Test(host, describe_this_machine)
{
	hwloc_topology_t t;
	json_t *h;
	cr_assert_eq(ch_topo_load(NULL, &t), 0);
	h = ch_host_describe(t);
	cr_assert_not_null(h);
	cr_assert(json_integer_value(json_object_get(h, "cores")) >= 1);
	cr_assert(json_integer_value(json_object_get(h, "pus")) >= 1);
	cr_assert(json_integer_value(json_object_get(h, "memory_bytes")) > 0);
	cr_assert(json_is_array(json_object_get(h, "gpus")));
	json_decref(h);
	hwloc_topology_destroy(t);
}

Test(host, bad_topology_file_is_usage_error)
{
	hwloc_topology_t t;
	cr_redirect_stderr();
	cr_assert_eq(ch_topo_load("/nonexistent.xml", &t), CH_ERR_USAGE);
	cr_assert_eq(ch_topo_load("Makefile", &t), CH_ERR_USAGE);
}
