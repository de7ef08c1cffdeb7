/*
 * The fleet's kept texts (hr_fleet_text(), report/read/hr_model.h): a
 * roofline point's kernel, family and dtype are kept once per distinct
 * text and cut as snprintf() into the old fixed fields cut them (31, 15
 * and 7 bytes), so that profile.json names what it named before.
 */
#include <criterion/criterion.h>
#include <stdint.h>
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
