/*
 * The fleet's kept texts (hr_fleet_text(), report/read/hr_model.h): a
 * roofline point's kernel, family and dtype are kept once per distinct
 * text and cut as snprintf() into the old fixed fields cut them (31, 15
 * and 7 bytes), so that profile.json names what it named before.
 */
#include <criterion/criterion.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/read/hr_model.h"

Test(fleet_text, same_text_same_id_cut_as_before)
{
	struct hr_fleet f;
	uint32_t a, b, c, d, e;
	memset(&f, 0, sizeof(f));
	cr_assert_eq(hr_fleet_text(&f, "triad", 32, &a), 0);
	cr_assert_eq(hr_fleet_text(&f, "gemm", 32, &b), 0);
	cr_assert_eq(hr_fleet_text(&f, "triad", 32, &c), 0);
	cr_assert_eq(a, c);
	cr_assert_neq(a, b);
	cr_assert_str_eq(hr_fleet_text_at(&f, a), "triad");
	cr_assert_str_eq(hr_fleet_text_at(&f, b), "gemm");
	/* cut to max - 1 bytes: two texts alike in their first 7 bytes are one */
	cr_assert_eq(hr_fleet_text(&f, "float64-extended", 8, &d), 0);
	cr_assert_eq(hr_fleet_text(&f, "float64-other", 8, &e), 0);
	cr_assert_str_eq(hr_fleet_text_at(&f, d), "float64");
	cr_assert_eq(d, e);
	/* many distinct texts: every one kept, each found again */
	for (int i = 0; i < 1000; i++) {
		char s[32];
		uint32_t id, again;
		snprintf(s, sizeof(s), "kernel%d", i);
		cr_assert_eq(hr_fleet_text(&f, s, 32, &id), 0);
		cr_assert_eq(hr_fleet_text(&f, s, 32, &again), 0);
		cr_assert_eq(id, again);
		cr_assert_str_eq(hr_fleet_text_at(&f, id), s);
	}
	cr_assert_str_eq(hr_fleet_text_at(&f, a), "triad");
	hr_fleet_release(&f);
}

/* hr_fleet_str(): one copy per distinct string, whole (never cut), owned by
 * the fleet; NULL stays NULL. */
Test(fleet_text, str_kept_once_whole)
{
	struct hr_fleet f;
	char long_s[400];
	const char *a, *b, *c, *l;
	memset(&f, 0, sizeof(f));
	memset(long_s, 'x', sizeof(long_s) - 1);
	long_s[sizeof(long_s) - 1] = '\0';
	cr_assert_null(hr_fleet_str(&f, NULL));
	a = hr_fleet_str(&f, "NVIDIA H100 80GB HBM3");
	b = hr_fleet_str(&f, "cpu");
	c = hr_fleet_str(&f, "NVIDIA H100 80GB HBM3");
	cr_assert_not_null(a);
	cr_assert_eq(a, c, "the same string is one copy");
	cr_assert_neq(a, b);
	cr_assert_str_eq(a, "NVIDIA H100 80GB HBM3");
	cr_assert_str_eq(b, "cpu");
	l = hr_fleet_str(&f, long_s);
	cr_assert_str_eq(l, long_s, "kept whole, not cut");
	cr_assert_eq(hr_fleet_str(&f, ""), hr_fleet_str(&f, ""));
	hr_fleet_release(&f);
}

/* hr_fleet_drop_points(): every device's points gone, the rest kept. */
Test(fleet_text, drop_points_keeps_the_rest)
{
	struct hr_fleet f;
	memset(&f, 0, sizeof(f));
	f.ndevices = 2;
	f.devices = calloc(2, sizeof(*f.devices));
	cr_assert_not_null(f.devices);
	f.devices[0].points = calloc(3, sizeof(struct hr_point));
	f.devices[0].npoints = 3;
	f.devices[0].memory_gbps = 3000;
	f.devices[1].device = hr_fleet_str(&f, "gpu1");
	hr_fleet_drop_points(&f);
	cr_assert_null(f.devices[0].points);
	cr_assert_eq(f.devices[0].npoints, 0);
	cr_assert_eq(f.devices[0].memory_gbps, 3000);
	cr_assert_str_eq(f.devices[1].device, "gpu1");
	hr_fleet_release(&f);
}

/* hr_fleet_point_kind(): a triple of text ids kept once, the same id for the
 * same triple whatever place it is looked up at, a different one for any
 * other triple (also one met at the same place: the place is only where to
 * look first). */
Test(fleet_text, point_kind_kept_once)
{
	struct hr_fleet f;
	uint32_t a, b, c, d, e;
	memset(&f, 0, sizeof(f));
	cr_assert_eq(hr_fleet_point_kind(&f, 1, 2, 3, 0, &a), 0);
	cr_assert_eq(hr_fleet_point_kind(&f, 1, 2, 4, 0, &b), 0);
	cr_assert_eq(hr_fleet_point_kind(&f, 1, 2, 3, 5, &c), 0);
	cr_assert_eq(hr_fleet_point_kind(&f, 1, 2, 3, 0, &d), 0);
	cr_assert_eq(hr_fleet_point_kind(&f, 3, 2, 1, 5, &e), 0);
	cr_assert_neq(a, b);
	cr_assert_eq(a, c);
	cr_assert_eq(a, d);
	cr_assert_neq(e, a);
	cr_assert_neq(e, b);
	cr_assert_eq(hr_fleet_kind_at(&f, b)->dtype, 4);
	cr_assert_eq(hr_fleet_kind_at(&f, e)->kernel, 3);
	cr_assert_eq(hr_fleet_kind_at(&f, e)->dtype, 1);
	cr_assert_eq(hr_fleet_kind_at(&f, a)->family, 2);
	hr_fleet_release(&f);
}

/* hr_fleet_drop_devices(): every device record gone, the rest kept. */
Test(fleet_text, drop_devices_keeps_the_rest)
{
	struct hr_fleet f;
	memset(&f, 0, sizeof(f));
	cr_assert_geq(hr_fleet_node(&f, "n1"), 0);
	f.ndevices = 2;
	f.devices = calloc(2, sizeof(*f.devices));
	cr_assert_not_null(f.devices);
	f.devices[0].points = calloc(3, sizeof(struct hr_point));
	f.devices[0].npoints = 3;
	f.devices[1].pci_bus_id = strdup("0000:01:00.0");
	hr_fleet_drop_devices(&f);
	cr_assert_null(f.devices);
	cr_assert_eq(f.ndevices, 0);
	cr_assert_eq(f.nnodes, 1);
	cr_assert_str_eq(f.nodes[0].name, "n1");
	hr_fleet_release(&f);
}
