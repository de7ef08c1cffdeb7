#include "base/ch_common.h"

#include <stdarg.h>
#include <stdio.h>

static const char *prog = "clusterhealth";
static int quiet;

int ch_exit_code(int status)
{
	switch (status) {
	case CH_OK: return CH_EXIT_OK;
	case CH_ERR_CHECK: return CH_EXIT_CHECK;
	case CH_ERR_USAGE: return CH_EXIT_USAGE;
	case CH_ERR_UNAVAILABLE: return CH_EXIT_UNAVAILABLE;
	default: return CH_EXIT_RUNTIME;
	}
}

const char *ch_status_name(int status)
{
	switch (status) {
	case CH_OK: return "ok";
	case CH_ERR_CHECK: return "failed";
	case CH_ERR_USAGE: return "usage";
	case CH_ERR_UNAVAILABLE: return "unavailable";
	default: return "error";
	}
}

void ch_set_prog(const char *name) { prog = name; }
const char *ch_prog(void) { return prog; }
void ch_set_quiet(int q) { quiet = q; }
int ch_quiet(void) { return quiet; }

static void vmsg(FILE *f, const char *kind, const char *fmt, va_list ap)
{
	fflush(stdout);
	if (kind)
		fprintf(f, "%s: %s: ", prog, kind);
	vfprintf(f, fmt, ap);
	fputc('\n', f);
	fflush(f);
}

static __thread char last_error[512];

const char *ch_last_error(void) { return last_error; }
void ch_clear_last_error(void) { last_error[0] = '\0'; }

void ch_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	va_start(ap, fmt);
	vmsg(stderr, "error", fmt, ap);
	va_end(ap);
}

void ch_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg(stderr, "warning", fmt, ap);
	va_end(ap);
}

void ch_info(const char *fmt, ...)
{
	va_list ap;
	if (quiet)
		return;
	va_start(ap, fmt);
	vmsg(stdout, NULL, fmt, ap);
	va_end(ap);
}

int ch_usage_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	va_start(ap, fmt);
	vmsg(stderr, "error", fmt, ap);
	va_end(ap);
	fprintf(stderr, "try '%s --help' for more information\n", prog);
	return CH_ERR_USAGE;
}
