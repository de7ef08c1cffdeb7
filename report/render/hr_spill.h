/*
 * hr_spill.h - inside report/render: text that grows with the fleet (the
 * nodes' rows and samples of each output, hr_render_int.h), kept on disk
 * instead of in memory. Not part of the report's interface (hr_render.h is).
 */
#ifndef HR_SPILL_H
#define HR_SPILL_H

#include <stddef.h>
#include <stdio.h>

#include "report/hr_util.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Text that grows with the fleet, kept in an unnamed temporary file in
 * $TMPDIR (else /tmp): O_TMPFILE, or a name removed as soon as it is made,
 * so that nothing is left behind, also on a signal; f NULL until the first
 * append. */
struct hr_spill {
	FILE *f;
	size_t len;
	int err;
};

/** hr_spill_add - append @b's text to @s and empty @b. Returns 0, or
 * CH_ERR_RUNTIME (printed, naming the directory: no temporary file, or a
 * write error such as a full $TMPDIR). */
int hr_spill_add(struct hr_spill *s, struct hr_buf *b);
/** hr_spill_copy - write @s's text to @out. Returns 0 or CH_ERR_RUNTIME
 * (a temporary that cannot be written or read back: printed; a write
 * error of @out: ferror(@out), not printed). */
int hr_spill_copy(const struct hr_spill *s, FILE *out);
/** hr_spill_release - close @s's file and zero it. */
void hr_spill_release(struct hr_spill *s);

#ifdef __cplusplus
}
#endif
#endif
