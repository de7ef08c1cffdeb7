#include "hw/ch_energy.h"
#include "base/ch_common.h"
#include "base/ch_result.h"
#include "hw/ch_nvml.h"
#include "base/ch_stats.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int read_ull(const char *path, unsigned long long *out)
{
	FILE *f = fopen(path, "r");
	int ok;
	if (!f)
		return -1;
	ok = fscanf(f, "%llu", out) == 1;
	fclose(f);
	return ok ? 0 : -1;
}

static int read_line(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "r");
	size_t l;
	if (!f)
		return -1;
	if (!fgets(buf, (int)n, f)) {
		fclose(f);
		return -1;
	}
	fclose(f);
	l = strlen(buf);
	while (l && (buf[l - 1] == '\n' || buf[l - 1] == ' '))
		buf[--l] = '\0';
	return 0;
}

/* "intel-rapl:<digits>" exactly: a top-level domain, not a sub-domain. */
static int is_top_domain(const char *name)
{
	const char *p;
	if (strncmp(name, "intel-rapl:", 11))
		return 0;
	p = name + 11;
	if (!*p)
		return 0;
	for (; *p; p++)
		if (*p < '0' || *p > '9')
			return 0;
	return 1;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int ch_energy_start_at(struct ch_energy *e, const char *powercap, int use_nvml)
{
	DIR *d;
	struct dirent *de;
	char *names[CH_ENERGY_MAX_DOMAINS];
	int nn = 0, i;

	memset(e, 0, sizeof(*e));
	e->t0_sec = ch_now_sec();
	d = powercap ? opendir(powercap) : NULL;
	while (d && (de = readdir(d)) != NULL && nn < CH_ENERGY_MAX_DOMAINS)
		if (is_top_domain(de->d_name) && (names[nn] = strdup(de->d_name)) != NULL)
			nn++;
	if (d)
		closedir(d);
	qsort(names, (size_t)nn, sizeof(names[0]), cmp_str);
	for (i = 0; i < nn; i++) {
		char path[512], name[64];
		unsigned long long v, range;
		int k = e->n_rapl;

		snprintf(path, sizeof(path), "%s/%s/name", powercap, names[i]);
		if (read_line(path, name, sizeof(name)) != 0 || strncmp(name, "package", 7))
			continue;
		snprintf(path, sizeof(path), "%s/%s/max_energy_range_uj", powercap, names[i]);
		if (read_ull(path, &range) != 0 || range == 0)
			continue;
		snprintf(e->rapl_path[k], sizeof(e->rapl_path[k]), "%s/%s/energy_uj", powercap, names[i]);
		if (read_ull(e->rapl_path[k], &v) != 0)
			continue; /* root-only since Linux 5.10: n/a */
		e->rapl_range_uj[k] = range;
		e->rapl_last_uj[k] = v;
		e->n_rapl++;
	}
	for (i = 0; i < nn; i++)
		free(names[i]);
	if (use_nvml && ch_nvml_init(NULL, 0) == 0) {
		if (ch_nvml_energy_total_j(&e->nvml_start_j) == 0)
			e->nvml = 1;
		else
			ch_nvml_shutdown();
	}
	return 0;
}

int ch_energy_start(struct ch_energy *e)
{
	return ch_energy_start_at(e, "/sys/class/powercap", 1);
}

unsigned long long ch_energy_rapl_delta_uj(unsigned long long last,
					   unsigned long long now,
					   unsigned long long range_uj)
{
	if (now >= last)
		return now - last;
	return range_uj - last + now;
}

int ch_energy_read(struct ch_energy *e, struct ch_energy_reading *out)
{
	int i, rapl_ok = e->n_rapl > 0, nvml_ok = 0;
	double g;

	for (i = 0; i < e->n_rapl; i++) {
		unsigned long long v;
		if (read_ull(e->rapl_path[i], &v) != 0) {
			rapl_ok = 0; /* a domain became unreadable: the sum is incomplete */
			continue;
		}
		e->rapl_acc_j += (double)ch_energy_rapl_delta_uj(e->rapl_last_uj[i], v,
								 e->rapl_range_uj[i]) * 1e-6;
		e->rapl_last_uj[i] = v;
	}
	out->cpu_j = rapl_ok ? e->rapl_acc_j : NAN;
	out->gpu_j = NAN;
	if (e->nvml && ch_nvml_energy_total_j(&g) == 0) {
		out->gpu_j = g - e->nvml_start_j;
		nvml_ok = 1;
	}
	out->wall_sec = ch_now_sec() - e->t0_sec;
	out->source = rapl_ok && nvml_ok ? "rapl+nvml" : rapl_ok ? "rapl" :
		nvml_ok ? "nvml" : "unavailable";
	return 0;
}

void ch_energy_stop(struct ch_energy *e)
{
	if (e->nvml)
		ch_nvml_shutdown();
	e->nvml = 0;
}

json_t *ch_energy_json(const struct ch_energy_reading *r)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	json_object_set_new(o, "cpu_j", isnan(r->cpu_j) ? json_null() : json_real(r->cpu_j));
	json_object_set_new(o, "gpu_j", isnan(r->gpu_j) ? json_null() : json_real(r->gpu_j));
	json_object_set_new(o, "wall_sec", json_real(r->wall_sec));
	json_object_set_new(o, "source", json_string(r->source));
	return o;
}

void ch_energy_window_start(struct ch_energy_window *w, double t0, double e0, double min_sec,
			    int min_updates, double max_sec)
{
	memset(w, 0, sizeof(*w));
	w->min_sec = min_sec;
	w->max_sec = max_sec > min_sec ? max_sec : min_sec;
	w->min_updates = min_updates > 0 ? min_updates : 1;
	w->t0 = w->t1 = t0;
	w->e0 = w->e1 = e0;
}

void ch_energy_window_add(struct ch_energy_window *w, int calls, double t, double e)
{
	w->calls += calls;
	w->t1 = t;
	if (isnan(e))
		return;
	if (e != w->e1)
		w->updates++;
	w->e1 = e;
}

int ch_energy_window_more(const struct ch_energy_window *w)
{
	double el = w->t1 - w->t0;
	if (el < w->min_sec)
		return 1;
	return w->updates < w->min_updates && el < w->max_sec;
}

void ch_energy_window_result(const struct ch_energy_window *w, double flops_per_call,
			     struct ch_energy_window_result *out)
{
	double ej = w->e1 - w->e0;

	memset(out, 0, sizeof(*out));
	out->wall_sec = w->t1 - w->t0;
	out->calls = w->calls;
	out->updates = w->updates;
	out->energy_j = out->avg_power_w = out->gflop_per_j = NAN;
	if (out->wall_sec < w->min_sec)
		snprintf(out->why, sizeof(out->why), "window of %.3f s, shorter than %.3f s", out->wall_sec,
			 w->min_sec);
	else if (w->updates < w->min_updates)
		snprintf(out->why, sizeof(out->why), "the counter changed %d time(s) in %.3f s (needs %d)",
			 w->updates, out->wall_sec, w->min_updates);
	else if (!(ej > 0))
		snprintf(out->why, sizeof(out->why), "the counter did not increase (%.6g J)", ej);
	else
		out->ok = 1;
	if (!out->ok)
		return;
	out->energy_j = ej;
	out->avg_power_w = ej / out->wall_sec;
	if (flops_per_call > 0 && w->calls > 0)
		out->gflop_per_j = flops_per_call * w->calls / ej / 1e9;
}

static json_t *energy_value(void *ctx)
{
	struct ch_energy_reading er;
	ch_energy_read(ctx, &er);
	return ch_energy_json(&er);
}

static void energy_release(void *ctx)
{
	ch_energy_stop(ctx);
	free(ctx);
}

int ch_result_energy_start(struct ch_result *r)
{
	struct ch_energy *e = malloc(sizeof(*e));
	if (!e)
		return CH_ERR_RUNTIME;
	ch_result_set_live(r, "energy", energy_value, energy_release, e);
	return ch_energy_start(e);
}
