/*
 * nolapack.c - an LD_PRELOAD shim for tests/cli/canary.sh: dlopen() of any
 * library whose name contains "openblas" fails, as on a host without
 * OpenBLAS (the canary's all-reduce fit opens it on its first fit,
 * report/canary/hr_fit.c); dlerror() then says so. Every other dlopen() is
 * the real one.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <string.h>

static int hidden; /* the last dlopen() was one this shim failed */

void *dlopen(const char *file, int mode)
{
	void *(*real)(const char *, int) = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
	if (file && strstr(file, "openblas")) {
		hidden = 1;
		return NULL;
	}
	hidden = 0;
	return real ? real(file, mode) : NULL;
}

char *dlerror(void)
{
	char *(*real)(void) = (char *(*)(void))dlsym(RTLD_NEXT, "dlerror");
	if (hidden) {
		hidden = 0;
		return (char *)"libopenblas hidden by the test's shim (tests/nolapack.c)";
	}
	return real ? real() : NULL;
}
