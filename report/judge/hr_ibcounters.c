#include "report/judge/hr_ibcounters.h"

#include <stdio.h>
#include <string.h>

/* The error counters judged, with their thresholds within one run: the
 * suggested thresholds of infiniband-diags' ibqueryerrors
 * (rdma-core, infiniband-diags/etc/error_thresholds); link_downed and
 * link_error_recovery at any rise (a link that went down or retrained
 * while the run measured through it). */
static const struct {
	const char *name;
	long long threshold;
	int level;
	const char *code;
} rules[] = {
	{ "link_downed", 1, HR_IB_FAIL, "ib_link_down" },
	{ "link_error_recovery", 1, HR_IB_WARN, "ib_link_recovery" },
	{ "symbol_error", 10, HR_IB_WARN, "ib_port_errors" },
	{ "port_rcv_errors", 10, HR_IB_WARN, "ib_port_errors" },
	{ "local_link_integrity_errors", 10, HR_IB_WARN, "ib_port_errors" },
	{ "excessive_buffer_overrun_errors", 10, HR_IB_WARN, "ib_port_errors" },
	{ "port_rcv_remote_physical_errors", 100, HR_IB_WARN, "ib_port_errors" },
	{ "port_xmit_discards", 100, HR_IB_WARN, "ib_port_errors" },
};
#define NRULES (sizeof(rules) / sizeof(rules[0]))

#define SOURCE "thresholds: infiniband-diags' suggested error_thresholds (rdma-core); link down and recovery: any"

static const json_t *end_port(const json_t *ports, const char *dev, json_int_t port)
{
	const json_t *p;
	size_t i;

	json_array_foreach(ports, i, p) {
		const char *d = json_string_value(json_object_get(p, "device"));
		const json_t *n = json_object_get(p, "port");
		if (d && !strcmp(d, dev) && json_is_integer(n) && json_integer_value(n) == port)
			return p;
	}
	return NULL;
}

/* the text of one code's rises on one port into @buf */
static int port_text(const json_t *a, const json_t *b, const char *code, char *buf, size_t n)
{
	size_t k, len = 0;
	int hits = 0;

	buf[0] = '\0';
	for (k = 0; k < NRULES; k++) {
		const json_t *x = json_object_get(a, rules[k].name), *y = json_object_get(b, rules[k].name);
		long long d;
		if (strcmp(rules[k].code, code) || !json_is_integer(x) || !json_is_integer(y))
			continue;
		d = (long long)(json_integer_value(y) - json_integer_value(x));
		if (d < rules[k].threshold)
			continue;
		if (len < n)
			len += (size_t)snprintf(buf + len, n - len, "%s%s +%lld (%lld to %lld; threshold %lld)", hits ? ", " : "",
						rules[k].name, d, (long long)json_integer_value(x),
						(long long)json_integer_value(y), rules[k].threshold);
		hits++;
	}
	return hits;
}

/* the counters that went down: cleared or reset during the run */
static int went_down(const json_t *a, const json_t *b, char *buf, size_t n)
{
	size_t k, len = 0;
	int hits = 0;

	buf[0] = '\0';
	for (k = 0; k < NRULES; k++) {
		const json_t *x = json_object_get(a, rules[k].name), *y = json_object_get(b, rules[k].name);
		if (!json_is_integer(x) || !json_is_integer(y) || json_integer_value(y) >= json_integer_value(x))
			continue;
		if (len < n)
			len += (size_t)snprintf(buf + len, n - len, "%s%s %lld to %lld", hits ? ", " : "", rules[k].name,
						(long long)json_integer_value(x), (long long)json_integer_value(y));
		hits++;
	}
	return hits;
}

int hr_ib_counters_judge(const json_t *nics, const json_t *end, hr_ib_emit_fn emit, void *ctx)
{
	static const char *const codes[] = { "ib_link_down", "ib_link_recovery", "ib_port_errors" };
	const json_t *ports = json_object_get(end, "ports"), *s;
	size_t i, c;
	int compared = 0;

	json_array_foreach(nics, i, s) {
		const char *dev = json_string_value(json_object_get(s, "device")), *kind = json_string_value(json_object_get(s, "kind"));
		const json_t *pn = json_object_get(s, "port"), *e, *a, *b;
		char subj[160], counts[1024], text[1400];
		if (!dev || !kind || strcmp(kind, "rdma") || !json_is_integer(pn))
			continue;
		if (!(e = end_port(ports, dev, json_integer_value(pn))))
			continue;
		a = json_object_get(s, "counters");
		b = json_object_get(e, "counters");
		if (!json_is_object(a) || !json_is_object(b))
			continue;
		compared++;
		snprintf(subj, sizeof(subj), "%s port %lld", dev, (long long)json_integer_value(pn));
		if (went_down(a, b, counts, sizeof(counts))) {
			snprintf(text, sizeof(text), "%s: counters went down during the run (%s): cleared or reset, not judged",
				 subj, counts);
			emit(ctx, HR_IB_INFO, "ib_counters_not_judged", subj, text);
			continue;
		}
		for (c = 0; c < 3; c++) {
			int level = c == 0 ? HR_IB_FAIL : HR_IB_WARN;
			if (!port_text(a, b, codes[c], counts, sizeof(counts)))
				continue;
			snprintf(text, sizeof(text), "%s: %s during the run: %s (sysfs counters at the run's start and end; %s)",
				 subj, c == 0 ? "the link went down" : c == 1 ? "the link retrained (error recovery)" : "port errors",
				 counts, SOURCE);
			emit(ctx, level, codes[c], subj, text);
		}
	}
	return compared;
}
