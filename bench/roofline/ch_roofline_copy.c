#include "bench/roofline/ch_roofline_copy.h"
#include "base/ch_common.h"
#include "hw/ch_nvml.h"
#include "hw/ch_pcie.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

json_t *ch_rl_host_link_pcie(const char *bus_id)
{
	ch_nvml_dev_t dev;
	json_t *inv, *pcie = NULL;
	int n, i;

	if (!bus_id || !bus_id[0] || ch_nvml_init(NULL, 0) != 0)
		return NULL;
	if (ch_nvml_device_by_pci(bus_id, &dev) == 0) {
		/* the inventory's index is NVML's: find it for the record */
		n = ch_nvml_device_count();
		for (i = 0; i < n; i++) {
			ch_nvml_dev_t x;
			if (ch_nvml_device_by_index((unsigned)i, &x) == 0 && x == dev)
				break;
		}
		inv = ch_nvml_gpu_inventory(dev, (unsigned)(i < n ? i : 0));
		if (inv && json_is_object(json_object_get(inv, "pcie")))
			pcie = json_deep_copy(json_object_get(inv, "pcie"));
		json_decref(inv);
	}
	ch_nvml_shutdown();
	return pcie;
}

static json_t *num_or_null(double v)
{
	return v > 0 ? json_real(v) : json_null();
}

static json_t *bw_json(const struct ch_copy_bw *b)
{
	return json_pack("{s:o,s:o,s:o,s:o,s:o}", "h2d_gbps", num_or_null(b->h2d_gbps), "d2h_gbps",
			 num_or_null(b->d2h_gbps), "bidir_gbps", num_or_null(b->bidir_gbps), "bidir_h2d_gbps",
			 num_or_null(b->bidir_h2d_gbps), "bidir_d2h_gbps", num_or_null(b->bidir_d2h_gbps));
}

/* one thread of the all-at-once measurement */
struct copy_job {
	const struct ch_backend *be;
	struct ch_dev *dev;
	uint64_t bytes;
	int calls, rc;
	struct ch_copy_bw bw;
};

static void *copy_thread(void *arg)
{
	struct copy_job *j = arg;
	j->rc = j->be->host_copy(j->dev, j->bytes, j->calls, &j->bw);
	return NULL;
}

/* every device copying at once, one thread each (started within
 * microseconds of each other; each thread's warm-up copy covers the skew) */
static int all_at_once(const struct ch_backend *be, struct ch_dev **devs, int ndev, uint64_t bytes, int calls,
		       struct copy_job *jobs)
{
	pthread_t *t = calloc((size_t)ndev, sizeof(*t));
	int i, started = 0;

	if (!t)
		return CH_ERR_RUNTIME;
	for (i = 0; i < ndev; i++)
		jobs[i] = (struct copy_job){ .be = be, .dev = devs[i], .bytes = bytes, .calls = calls, .rc = CH_ERR_RUNTIME };
	for (i = 0; i < ndev && pthread_create(&t[i], NULL, copy_thread, &jobs[i]) == 0; i++)
		started++;
	for (i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	free(t);
	return started == ndev ? 0 : CH_ERR_RUNTIME;
}

static json_t *peer_matrix(const struct ch_backend *be, struct ch_dev **devs, const char *const *labels, int ndev,
			   uint64_t bytes, int calls)
{
	json_t *peer = json_object(), *on = json_array(), *off = json_array(), *names = json_array();
	int i, j, p;

	for (i = 0; i < ndev; i++)
		json_array_append_new(names, json_string(labels[i]));
	for (i = 0; i < ndev; i++) {
		json_t *row[2] = { json_array(), json_array() };
		for (j = 0; j < ndev; j++)
			for (p = 0; p < 2; p++) {
				double g = 0;
				if (i == j || be->peer_copy(devs[i], devs[j], !p, bytes, calls, &g) != 0)
					g = 0;
				json_array_append_new(row[p], num_or_null(g));
			}
		json_array_append_new(on, row[0]);
		json_array_append_new(off, row[1]);
	}
	json_object_set_new(peer, "devices", names);
	json_object_set_new(peer, "p2p_on", on);
	json_object_set_new(peer, "p2p_off", off);
	json_object_set_new(peer, "note", json_string("row: source, column: destination; GB/s, median of the copies; "
						       "null on the diagonal and where the pair cannot copy"));
	return peer;
}

/* one GPU's entry: its alone figures, link and expectations */
static json_t *gpu_entry(const char *label, const char *bus_id, int rc, const struct ch_copy_bw *bw)
{
	json_t *g = json_object(), *pcie = ch_rl_host_link_pcie(bus_id);
	double exp_cur = 0, exp_max = 0;

	json_object_set_new(g, "device", json_string(label));
	json_object_set_new(g, "pci_bus_id", bus_id && bus_id[0] ? json_string(bus_id) : json_null());
	json_object_set_new(g, "status", json_string(rc == 0 ? "ok" : "failed"));
	json_object_set_new(g, "reason", rc == 0 ? json_null() : json_string("the copies failed (see the log)"));
	json_object_set_new(g, "alone", rc == 0 ? bw_json(bw) : json_null());
	if (pcie) {
		exp_cur = ch_pcie_expected_gbps((int)json_integer_value(json_object_get(pcie, "gen_current")),
						(int)json_integer_value(json_object_get(pcie, "width_current")));
		exp_max = ch_pcie_expected_gbps((int)json_integer_value(json_object_get(pcie, "gen_max")),
						(int)json_integer_value(json_object_get(pcie, "width_max")));
	}
	json_object_set_new(g, "pcie", pcie ? pcie : json_null());
	json_object_set_new(g, "expected_gbps", num_or_null(exp_cur));
	json_object_set_new(g, "expected_max_gbps", num_or_null(exp_max));
	return g;
}

json_t *ch_rl_host_link(const struct ch_backend *be, struct ch_dev **devs, const char *const *labels,
			const char *const *bus_ids, int ndev, uint64_t bytes, int calls)
{
	json_t *hl, *gpus;
	struct copy_job *jobs;
	int i;

	if (!be || !be->host_copy || ndev <= 0)
		return NULL;
	hl = json_object();
	gpus = json_array();
	json_object_set_new(hl, "bytes", json_integer((json_int_t)bytes));
	json_object_set_new(hl, "calls", json_integer(calls));
	json_object_set_new(hl, "method", json_string("pinned host memory (cudaHostAlloc), cudaMemcpyAsync timed with "
						       "CUDA events, one warm-up copy, median of the copies; both "
						       "directions at once on two streams started together"));
	json_object_set_new(hl, "expectation_source", json_string(CH_PCIE_EXPECT_SOURCE));
	for (i = 0; i < ndev; i++) {
		struct ch_copy_bw bw;
		int rc = be->host_copy(devs[i], bytes, calls, &bw);
		json_array_append_new(gpus, gpu_entry(labels[i], bus_ids[i], rc, &bw));
	}
	json_object_set_new(hl, "all_at_once_total_gbps", json_null());
	jobs = ndev > 1 ? calloc((size_t)ndev, sizeof(*jobs)) : NULL;
	if (jobs && all_at_once(be, devs, ndev, bytes, calls, jobs) == 0) {
		double th = 0, td = 0;
		for (i = 0; i < ndev; i++) {
			json_object_set_new(json_array_get(gpus, (size_t)i), "all_at_once",
					    jobs[i].rc == 0 ? bw_json(&jobs[i].bw) : json_null());
			th += jobs[i].rc == 0 ? jobs[i].bw.h2d_gbps : 0;
			td += jobs[i].rc == 0 ? jobs[i].bw.d2h_gbps : 0;
		}
		json_object_set_new(hl, "all_at_once_total_gbps", json_pack("{s:f,s:f}", "h2d", th, "d2h", td));
	}
	for (i = 0; i < ndev; i++)
		if (!json_object_get(json_array_get(gpus, (size_t)i), "all_at_once"))
			json_object_set_new(json_array_get(gpus, (size_t)i), "all_at_once", json_null());
	free(jobs);
	json_object_set_new(hl, "gpus", gpus);
	json_object_set_new(hl, "peer", ndev > 1 && be->peer_copy ? peer_matrix(be, devs, labels, ndev, bytes, calls)
								   : json_null());
	return hl;
}

/* the device object named @name in @devices, or NULL */
static json_t *device_named(json_t *devices, const char *name)
{
	size_t i;
	json_t *d;
	json_array_foreach(devices, i, d) {
		const char *n = json_string_value(json_object_get(d, "device"));
		if (n && !strcmp(n, name))
			return d;
	}
	return NULL;
}

int ch_rl_host_link_run(const struct ch_backend *be, const int *idx, int nidx, int count, json_t *results,
			json_t *devices)
{
	struct ch_dev *devs[64];
	char labels[64][32], bus[64][32], why[256];
	const char *lp[64], *bp[64];
	json_t *hl, *gpus, *g;
	int n = 0, i;
	size_t k;

	if (!be->host_copy)
		return CH_ERR_UNAVAILABLE;
	for (i = 0; i < nidx && n < 64; i++) {
		struct ch_dev_info info;
		if (idx[i] < 0 || idx[i] >= count || be->open(idx[i], &devs[n], why, sizeof(why)) != 0)
			continue;
		memset(&info, 0, sizeof(info));
		be->info(devs[n], &info);
		snprintf(labels[n], sizeof(labels[n]), "gpu%d", idx[i]);
		snprintf(bus[n], sizeof(bus[n]), "%s", info.pci_bus_id);
		lp[n] = labels[n];
		bp[n] = bus[n];
		n++;
	}
	if (!n)
		return CH_ERR_UNAVAILABLE;
	hl = ch_rl_host_link(be, devs, lp, bp, n, CH_RL_COPY_BYTES, CH_RL_COPY_CALLS);
	for (i = 0; i < n; i++)
		be->close(devs[i]);
	if (!hl)
		return CH_ERR_UNAVAILABLE;
	gpus = json_object_get(hl, "gpus");
	json_array_foreach(gpus, k, g) {
		json_t *d = device_named(devices, json_string_value(json_object_get(g, "device")));
		if (d)
			json_object_set(d, "host_link", g);
	}
	json_object_del(hl, "gpus");
	json_object_set_new(results, "host_link", hl);
	return 0;
}

static double num(const json_t *o, const char *k)
{
	const json_t *v = json_object_get(o, k);
	return json_is_number(v) ? json_number_value(v) : NAN;
}

void ch_rl_host_link_print(const json_t *hl, const json_t *devices)
{
	const json_t *d, *peer;
	size_t i;

	if (!json_is_object(hl))
		return;
	printf("\n# host link (pinned copies, median of %lld copies of %lld MiB each way, measured; expectation given: %s)\n",
	       (long long)json_integer_value(json_object_get(hl, "calls")),
	       (long long)json_integer_value(json_object_get(hl, "bytes")) >> 20, CH_PCIE_EXPECT_SOURCE);
	json_array_foreach(devices, i, d) {
		const json_t *g = json_object_get(d, "host_link"), *a = json_object_get(g, "alone"), *p;
		const json_t *all = json_object_get(g, "all_at_once");
		if (!json_is_object(g))
			continue;
		p = json_object_get(g, "pcie");
		if (!json_is_object(a)) {
			printf("# %-6s copies failed\n", json_string_value(json_object_get(g, "device")));
			continue;
		}
		printf("# %-6s H2D %.1f GB/s, D2H %.1f, both at once %.1f", json_string_value(json_object_get(g, "device")),
		       num(a, "h2d_gbps"), num(a, "d2h_gbps"), num(a, "bidir_gbps"));
		if (json_is_object(all))
			printf("; with every GPU copying: H2D %.1f, D2H %.1f", num(all, "h2d_gbps"), num(all, "d2h_gbps"));
		if (json_is_object(p))
			printf("; PCIe Gen%lld x%lld (max Gen%lld x%lld), expected %.1f GB/s one way",
			       (long long)json_integer_value(json_object_get(p, "gen_current")),
			       (long long)json_integer_value(json_object_get(p, "width_current")),
			       (long long)json_integer_value(json_object_get(p, "gen_max")),
			       (long long)json_integer_value(json_object_get(p, "width_max")), num(g, "expected_max_gbps"));
		else
			printf("; PCIe link not known (NVML)");
		printf("\n");
	}
	peer = json_object_get(hl, "peer");
	if (json_is_object(peer)) {
		const json_t *names = json_object_get(peer, "devices");
		int q;
		for (q = 0; q < 2; q++) {
			const json_t *m = json_object_get(peer, q ? "p2p_off" : "p2p_on"), *row;
			printf("# device to device, P2P %s (GB/s, median, measured; row: source)\n", q ? "off" : "on");
			json_array_foreach(m, i, row) {
				size_t j;
				const json_t *v;
				printf("#   %-6s", json_string_value(json_array_get(names, i)));
				json_array_foreach(row, j, v) {
					if (json_is_number(v))
						printf(" %8.1f", json_number_value(v));
					else
						printf(" %8s", "-");
				}
				printf("\n");
			}
		}
	}
}
