#include "hw/ch_sysfs.h"
#include "base/ch_result.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *ch_sysfs_root(void)
{
	const char *r = getenv("CH_SYSFS_ROOT");
	return r ? r : "";
}

/* Read a small sysfs file into @buf, trailing white space removed.
 * Returns 0, or -1 with errno set (the file is absent or unreadable). */
static int read_text(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "r");
	size_t len;
	int err;

	if (!f)
		return -1;
	len = fread(buf, 1, n - 1, f);
	err = ferror(f) ? errno : 0;
	fclose(f);
	if (err) {
		errno = err;
		return -1;
	}
	buf[len] = '\0';
	while (len > 0 && isspace((unsigned char)buf[len - 1]))
		buf[--len] = '\0';
	return 0;
}

/* The reason text for a file that could not be read. */
static void why_unreadable(char *why, size_t n, const char *root, const char *path)
{
	const char *p = path + strlen(root);
	snprintf(why, n, "%s: %s", p, errno == ENOENT ? "not present" : strerror(errno));
}

static void set_reason(json_t *o, const char *field, const char *why)
{
	json_t *r = json_object_get(o, "reasons");
	json_object_set_new(o, field, json_null());
	json_object_set_new(r, field, json_string(why));
}

int ch_sysfs_parse_ib_state(const char *text, char *name, size_t n)
{
	char *end;
	long v;
	size_t len;

	if (n)
		name[0] = '\0';
	if (!text || !isdigit((unsigned char)text[0]))
		return -1;
	v = strtol(text, &end, 10);
	if (end[0] != ':' || end[1] != ' ' || v < 0 || v > 15)
		return -1;
	end += 2;
	len = strcspn(end, "\n");
	if (len == 0 || len >= n)
		return -1;
	memcpy(name, end, len);
	name[len] = '\0';
	return (int)v;
}

double ch_sysfs_parse_ib_rate(const char *text)
{
	char *end;
	double v;

	if (!text || !isdigit((unsigned char)text[0]))
		return NAN;
	v = strtod(text, &end);
	if (!(v > 0) || strncmp(end, " Gb/sec", 7) != 0)
		return NAN;
	end += 7;
	if (*end && *end != '\n' && strncmp(end, " (", 2) != 0)
		return NAN;
	return v;
}

static int is_pci_component(const char *s, size_t len)
{
	/* DDDD:BB:DD.F with hexadecimal digits */
	static const char pat[] = "xxxx:xx:xx.x";
	size_t i;
	if (len != sizeof(pat) - 1)
		return 0;
	for (i = 0; i < len; i++)
		if (pat[i] == 'x' ? !isxdigit((unsigned char)s[i]) : s[i] != pat[i])
			return 0;
	return 1;
}

int ch_sysfs_pci_bus_id(const char *path, char *bus, char *dir, size_t ndir)
{
	char real[PATH_MAX];
	const char *p, *best = NULL;

	if (!realpath(path, real))
		return -1;
	for (p = real; *p; ) {
		size_t len;
		while (*p == '/')
			p++;
		len = strcspn(p, "/");
		if (is_pci_component(p, len))
			best = p;
		p += len;
	}
	if (!best)
		return -1;
	memcpy(bus, best, 12);
	bus[12] = '\0';
	if (dir && ndir) {
		size_t dl = (size_t)(best - real) + 12;
		if (dl >= ndir)
			return -1;
		memcpy(dir, real, dl);
		dir[dl] = '\0';
	}
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted entry names of a directory (not "." or ".."); *out is NULL and 0 is
 * returned when it cannot be opened. The caller frees each name and *out. */
static size_t list_dir(const char *path, char ***out)
{
	DIR *d = opendir(path);
	struct dirent *e;
	char **v = NULL;
	size_t n = 0, cap = 0;

	*out = NULL;
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		if (n == cap) {
			char **nv = realloc(v, (cap = cap ? cap * 2 : 16) * sizeof(*v));
			if (!nv)
				break;
			v = nv;
		}
		if (!(v[n] = strdup(e->d_name)))
			break;
		n++;
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), cmp_str);
	*out = v;
	return n;
}

static void free_list(char **v, size_t n)
{
	size_t i;
	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static json_t *new_record(void)
{
	json_t *o = json_object();
	if (o)
		json_object_set_new(o, "reasons", json_object());
	return o;
}

/* pci_bus_id and numa_node of the device behind @devlink. */
static void set_pci(json_t *o, const char *root, const char *devlink)
{
	char bus[16], dir[PATH_MAX], path[PATH_MAX + 16], buf[32], why[256];

	if (ch_sysfs_pci_bus_id(devlink, bus, dir, sizeof(dir)) != 0) {
		snprintf(why, sizeof(why), "%s: no PCI function behind it", devlink + strlen(root));
		set_reason(o, "pci_bus_id", why);
		set_reason(o, "numa_node", why);
		return;
	}
	json_object_set_new(o, "pci_bus_id", json_string(bus));
	snprintf(path, sizeof(path), "%s/numa_node", dir);
	if (read_text(path, buf, sizeof(buf)) != 0) {
		snprintf(why, sizeof(why), "numa_node of %s: %s", bus, errno == ENOENT ? "not present" : strerror(errno));
		set_reason(o, "numa_node", why);
	} else if (!strcmp(buf, "-1")) {
		snprintf(why, sizeof(why), "numa_node of %s reads -1 (the kernel knows no NUMA affinity)", bus);
		set_reason(o, "numa_node", why);
	} else {
		char *end;
		long v = strtol(buf, &end, 10);
		if (*end || v < 0) {
			snprintf(why, sizeof(why), "numa_node of %s reads '%s' (not a node number)", bus, buf);
			set_reason(o, "numa_node", why);
		} else {
			json_object_set_new(o, "numa_node", json_integer(v));
		}
	}
}

/* One field from "<dir>/<file>", stored as a string, or null with reason. */
static int set_text(json_t *o, const char *field, const char *root, const char *dir,
		    const char *file, char *buf, size_t n)
{
	char path[PATH_MAX + 64], why[512];
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if (read_text(path, buf, n) != 0) {
		why_unreadable(why, sizeof(why), root, path);
		set_reason(o, field, why);
		return -1;
	}
	if (!buf[0]) {
		snprintf(why, sizeof(why), "%s is empty", path + strlen(root));
		set_reason(o, field, why);
		return -1;
	}
	json_object_set_new(o, field, json_string(buf));
	return 0;
}

static void set_state(json_t *o, const char *field, const char *root, const char *dir, const char *file)
{
	char buf[128], name[64], path[PATH_MAX + 64], why[512];
	snprintf(path, sizeof(path), "%s/%s", dir, file);
	if (read_text(path, buf, sizeof(buf)) != 0) {
		why_unreadable(why, sizeof(why), root, path);
		set_reason(o, field, why);
	} else if (ch_sysfs_parse_ib_state(buf, name, sizeof(name)) < 0) {
		snprintf(why, sizeof(why), "%s reads '%s' (expected '<n>: <NAME>')", path + strlen(root), buf);
		set_reason(o, field, why);
	} else {
		json_object_set_new(o, field, json_string(name));
	}
}

/* @field of @o: every file of @dir that reads as a non-negative decimal
 * integer, as {name: integer} (the kernel's port "counters" and the
 * driver's "hw_counters"); null with the reason when @dir has none. A file
 * that cannot be read or is not such a number is left out, its reason under
 * "@field.<name>". "lifespan" (hw_counters' cache time, not a count) is
 * skipped. */
static void set_counters(json_t *o, const char *field, const char *root, const char *dir)
{
	char **names, path[PATH_MAX + 320], buf[64], why[PATH_MAX + 128], key[320];
	size_t n = list_dir(dir, &names), i;
	json_t *c;

	if (!n) {
		snprintf(why, sizeof(why), "%s: %s", dir + strlen(root),
			 access(dir, F_OK) == 0 ? "empty or unreadable" : "not present");
		set_reason(o, field, why);
		free_list(names, n);
		return;
	}
	if (!(c = json_object())) {
		free_list(names, n);
		return;
	}
	for (i = 0; i < n; i++) {
		char *end;
		unsigned long long v;
		if (!strcmp(names[i], "lifespan"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		snprintf(key, sizeof(key), "%s.%s", field, names[i]);
		if (read_text(path, buf, sizeof(buf)) != 0) {
			why_unreadable(why, sizeof(why), root, path);
			json_object_set_new(json_object_get(o, "reasons"), key, json_string(why));
			continue;
		}
		errno = 0;
		v = strtoull(buf, &end, 10);
		if (!buf[0] || *end || buf[0] == '-' || errno || v > (unsigned long long)LLONG_MAX) {
			snprintf(why, sizeof(why), "%s reads '%.40s' (not a count)", path + strlen(root), buf);
			json_object_set_new(json_object_get(o, "reasons"), key, json_string(why));
			continue;
		}
		json_object_set_new(c, names[i], json_integer((json_int_t)v));
	}
	free_list(names, n);
	json_object_set_new(o, field, c);
}

/* "counters" and "hw_counters" of the port directory @pdir into @o */
static void set_port_counters(json_t *o, const char *root, const char *pdir)
{
	char path[PATH_MAX + 160];
	snprintf(path, sizeof(path), "%s/counters", pdir);
	set_counters(o, "counters", root, path);
	snprintf(path, sizeof(path), "%s/hw_counters", pdir);
	set_counters(o, "hw_counters", root, path);
}

static void add_rdma_port(json_t *arr, const char *root, const char *dev, const char *devdir,
			  const char *port, json_t *busids)
{
	json_t *o = new_record();
	char pdir[PATH_MAX + 128], path[PATH_MAX + 160], buf[128], why[512], fw[64], **nets;
	double rate;
	size_t nn;
	long pn = strtol(port, NULL, 10);

	if (!o)
		return;
	json_object_set_new(o, "device", json_string(dev));
	json_object_set_new(o, "port", json_integer(pn));
	json_object_set_new(o, "kind", json_string("rdma"));
	snprintf(pdir, sizeof(pdir), "%s/ports/%s", devdir, port);
	set_state(o, "state", root, pdir, "state");
	set_state(o, "phys_state", root, pdir, "phys_state");
	snprintf(path, sizeof(path), "%s/rate", pdir);
	if (read_text(path, buf, sizeof(buf)) != 0) {
		why_unreadable(why, sizeof(why), root, path);
		set_reason(o, "rate_gbps", why);
		set_reason(o, "rate_text", why);
	} else {
		json_object_set_new(o, "rate_text", json_string(buf));
		rate = ch_sysfs_parse_ib_rate(buf);
		if (isnan(rate)) {
			snprintf(why, sizeof(why), "%s reads '%s' (expected '<Gb/s> Gb/sec (<width> <speed>)')",
				 path + strlen(root), buf);
			set_reason(o, "rate_gbps", why);
		} else {
			json_object_set_new(o, "rate_gbps", json_real(rate));
		}
	}
	set_text(o, "link_layer", root, pdir, "link_layer", buf, sizeof(buf));
	set_port_counters(o, root, pdir);
	set_text(o, "fw_version", root, devdir, "fw_ver", fw, sizeof(fw));
	snprintf(path, sizeof(path), "%s/device", devdir);
	set_pci(o, root, path);
	if (json_is_string(json_object_get(o, "pci_bus_id")))
		json_array_append(busids, json_object_get(o, "pci_bus_id"));
	snprintf(path, sizeof(path), "%s/device/net", devdir);
	nn = list_dir(path, &nets);
	if (nn)
		json_object_set_new(o, "netdev", json_string(nets[0]));
	else
		set_reason(o, "netdev", "no network interface on the device (device/net is absent or empty)");
	free_list(nets, nn);
	json_array_append_new(arr, o);
}

static int listed(const json_t *busids, const char *bus)
{
	size_t i;
	json_t *v;
	json_array_foreach(busids, i, v)
		if (!strcmp(json_string_value(v), bus))
			return 1;
	return 0;
}

static void add_netdev(json_t *arr, const char *root, const char *ifname, const json_t *busids)
{
	char dir[PATH_MAX], path[PATH_MAX + 64], bus[16], buf[64], why[512];
	json_t *o;

	snprintf(dir, sizeof(dir), "%s/sys/class/net/%s", root, ifname);
	snprintf(path, sizeof(path), "%s/device", dir);
	if (access(path, F_OK) != 0)
		return; /* a virtual interface (lo, bridges, bonds, ...) */
	if (ch_sysfs_pci_bus_id(path, bus, NULL, 0) == 0 && listed(busids, bus))
		return; /* the netdev of an RDMA device already listed */
	if (!(o = new_record()))
		return;
	json_object_set_new(o, "device", json_string(ifname));
	json_object_set_new(o, "port", json_integer(1));
	json_object_set_new(o, "kind", json_string("netdev"));
	json_object_set_new(o, "netdev", json_string(ifname));
	if (set_text(o, "state", root, dir, "operstate", buf, sizeof(buf)) == 0) {
		char *p;
		if (!strcmp(buf, "up"))
			snprintf(buf, sizeof(buf), "ACTIVE");
		for (p = buf; *p; p++)
			*p = (char)toupper((unsigned char)*p);
		json_object_set_new(o, "state", json_string(buf));
	}
	snprintf(path, sizeof(path), "%s/carrier", dir);
	if (read_text(path, buf, sizeof(buf)) != 0) {
		why_unreadable(why, sizeof(why), root, path);
		set_reason(o, "phys_state", why);
	} else if (!strcmp(buf, "1") || !strcmp(buf, "0")) {
		json_object_set_new(o, "phys_state", json_string(buf[0] == '1' ? "LinkUp" : "NoCarrier"));
	} else {
		snprintf(why, sizeof(why), "%s reads '%s' (expected 0 or 1)", path + strlen(root), buf);
		set_reason(o, "phys_state", why);
	}
	snprintf(path, sizeof(path), "%s/speed", dir);
	if (read_text(path, buf, sizeof(buf)) != 0) {
		why_unreadable(why, sizeof(why), root, path);
		set_reason(o, "rate_gbps", why);
	} else {
		char *end;
		long mbps = strtol(buf, &end, 10);
		if (*end || mbps <= 0) {
			snprintf(why, sizeof(why), "%s reads '%s' (the driver reports no link speed)",
				 path + strlen(root), buf);
			set_reason(o, "rate_gbps", why);
		} else {
			json_object_set_new(o, "rate_gbps", json_real(mbps / 1000.0));
		}
	}
	set_reason(o, "rate_text", "a netdev has no InfiniBand rate file");
	json_object_set_new(o, "link_layer", json_string("Ethernet"));
	set_reason(o, "fw_version", "not in sysfs for a plain netdev (ethtool -i shows it)");
	snprintf(path, sizeof(path), "%s/device", dir);
	set_pci(o, root, path);
	json_array_append_new(arr, o);
}

json_t *ch_sysfs_nics(const char *root)
{
	json_t *arr = json_array(), *busids = json_array();
	char base[PATH_MAX], devdir[PATH_MAX + 64], pdir[PATH_MAX + 128], **devs, **ports, **ifs;
	size_t nd, np, ni, i, j;

	if (!root)
		root = "";
	if (!arr || !busids) {
		json_decref(arr);
		json_decref(busids);
		return NULL;
	}
	snprintf(base, sizeof(base), "%s/sys/class/infiniband", root);
	nd = list_dir(base, &devs);
	for (i = 0; i < nd; i++) {
		snprintf(devdir, sizeof(devdir), "%s/%s", base, devs[i]);
		snprintf(pdir, sizeof(pdir), "%s/ports", devdir);
		np = list_dir(pdir, &ports);
		for (j = 0; j < np; j++)
			add_rdma_port(arr, root, devs[i], devdir, ports[j], busids);
		free_list(ports, np);
	}
	free_list(devs, nd);
	snprintf(base, sizeof(base), "%s/sys/class/net", root);
	ni = list_dir(base, &ifs);
	for (i = 0; i < ni; i++)
		add_netdev(arr, root, ifs[i], busids);
	free_list(ifs, ni);
	json_decref(busids);
	return arr;
}

json_t *ch_sysfs_rdma_counters(const char *root)
{
	json_t *arr = json_array();
	char base[PATH_MAX], pdir[PATH_MAX + 192], **devs, **ports, now[32];
	size_t nd, np, i, j;

	if (!root)
		root = "";
	if (!arr)
		return NULL;
	snprintf(base, sizeof(base), "%s/sys/class/infiniband", root);
	nd = list_dir(base, &devs);
	for (i = 0; i < nd; i++) {
		snprintf(pdir, sizeof(pdir), "%s/%s/ports", base, devs[i]);
		np = list_dir(pdir, &ports);
		for (j = 0; j < np; j++) {
			json_t *o = new_record();
			char dir[PATH_MAX + 256];
			if (!o)
				continue;
			json_object_set_new(o, "device", json_string(devs[i]));
			json_object_set_new(o, "port", json_integer(strtol(ports[j], NULL, 10)));
			snprintf(dir, sizeof(dir), "%s/%s", pdir, ports[j]);
			set_port_counters(o, root, dir);
			json_array_append_new(arr, o);
		}
		free_list(ports, np);
	}
	free_list(devs, nd);
	{
		json_t *doc = json_object();
		if (!doc) {
			json_decref(arr);
			return NULL;
		}
		json_object_set_new(doc, "utc", json_string(ch_utc_now(now, sizeof(now))));
		json_object_set_new(doc, "ports", arr);
		return doc;
	}
}

json_t *ch_sysfs_cpu(const char *root)
{
	json_t *o = new_record(), *govs = json_object(), *it;
	char base[PATH_MAX], path[PATH_MAX + 96], buf[64], why[PATH_MAX + 128], **cpus;
	size_t nc, i, with = 0;
	const char *key;

	if (!root)
		root = "";
	if (!o || !govs) {
		json_decref(o);
		json_decref(govs);
		return NULL;
	}
	snprintf(base, sizeof(base), "%s/sys/devices/system/cpu", root);
	nc = list_dir(base, &cpus);
	for (i = 0; i < nc; i++) {
		const char *s = cpus[i] + 3;
		if (strncmp(cpus[i], "cpu", 3) || !*s || strspn(s, "0123456789") != strlen(s))
			continue;
		snprintf(path, sizeof(path), "%s/%s/cpufreq/scaling_governor", base, cpus[i]);
		if (read_text(path, buf, sizeof(buf)) != 0 || !buf[0])
			continue;
		with++;
		it = json_object_get(govs, buf);
		json_object_set_new(govs, buf, json_integer(it ? json_integer_value(it) + 1 : 1));
	}
	free_list(cpus, nc);
	if (with == 0) {
		snprintf(why, sizeof(why), "no CPU under %s/sys/devices/system/cpu has cpufreq/scaling_governor "
			 "(no cpufreq driver: a virtual machine, or firmware controls the frequency)", root);
		set_reason(o, "governor", why);
		set_reason(o, "governors", why);
		json_decref(govs);
	} else {
		if (json_object_size(govs) == 1) {
			json_object_foreach(govs, key, it)
				json_object_set_new(o, "governor", json_string(key));
		} else {
			json_object_set_new(o, "governor", json_string("mixed"));
		}
		json_object_set_new(o, "governors", govs);
	}
	snprintf(path, sizeof(path), "%s/intel_pstate/no_turbo", base);
	if (read_text(path, buf, sizeof(buf)) == 0 && (!strcmp(buf, "0") || !strcmp(buf, "1"))) {
		json_object_set_new(o, "turbo", json_boolean(buf[0] == '0'));
		json_object_set_new(o, "turbo_source", json_string("intel_pstate/no_turbo"));
		return o;
	}
	snprintf(path, sizeof(path), "%s/cpufreq/boost", base);
	if (read_text(path, buf, sizeof(buf)) == 0 && (!strcmp(buf, "0") || !strcmp(buf, "1"))) {
		json_object_set_new(o, "turbo", json_boolean(buf[0] == '1'));
		json_object_set_new(o, "turbo_source", json_string("cpufreq/boost"));
		return o;
	}
	set_reason(o, "turbo", "neither intel_pstate/no_turbo nor cpufreq/boost is in sysfs");
	set_reason(o, "turbo_source", "neither intel_pstate/no_turbo nor cpufreq/boost is in sysfs");
	return o;
}
