/*
 * test_sizes.c - the sizes the reporter's memory at 12,500 nodes rests on
 * (docs/performance.md, "health_report, seventh pass"): the judge holds one
 * compared value (struct inst) for each measured roof of each device, about
 * 59 a node, and the fleet model about 130 roofline points a node until the
 * nodes are written. A field added to either without making room elsewhere
 * fails here, before the bench finds the peak past 300 MB.
 */
#include <criterion/criterion.h>
#include "report/judge/hr_judge.h"
#include "report/read/hr_model.h"

Test(sizes, judged_value_at_most_112_bytes)
{
	cr_assert_leq(sizeof(struct inst), 112, "struct inst: %zu bytes", sizeof(struct inst));
}

Test(sizes, roofline_point_at_most_32_bytes)
{
	cr_assert_leq(sizeof(struct hr_point), 32, "struct hr_point: %zu bytes", sizeof(struct hr_point));
}
