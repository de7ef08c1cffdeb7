/*
 * ch_cpu.c - the "cpu" compute backend: OpenMP, one thread per core bound
 * with hwloc, arrays first-touched by the threads that use them, GEMM
 * through CBLAS (OpenBLAS).
 */
#include "kernels/ch_kernels.h"
#include "base/ch_common.h"
#include "hw/ch_energy.h"
#include "hw/ch_host.h"
#include "kernels/ch_patterns.h"
#include "base/ch_stats.h"
#include "kernels/cpu/ch_cpu_ops.h"

#include <cblas.h>
#include <dlfcn.h>
#include <glob.h>
#include <hwloc.h>
#include <jansson.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PAGE_BYTES 4096u
#define HUGE_BYTES (2u << 20)
#define GEMM_SAMPLES 64

/* OpenBLAS's bf16 GEMM (built only with BUILD_BFLOAT16=1; Debian 12's is
 * not): cblas_sbgemm(order, transa, transb, m, n, k, alpha, A (bf16), lda,
 * B (bf16), ldb, beta, C (fp32), ldc), looked up at run time. */
typedef void (*sbgemm_fn)(int, int, int, int, int, int, float, const uint16_t *, int,
			  const uint16_t *, int, float, float *, int);

struct ch_dev {
	sbgemm_fn sbgemm;          /* NULL when the BLAS has no bf16 GEMM */
	hwloc_topology_t topo;
	int ncores;
	hwloc_bitmap_t *core_pu;   /* one PU of each core: where thread t runs */
	hwloc_bitmap_t all;        /* the cores' PUs together */
	const struct ch_cpu_ops *ops;
	int streaming;             /* stream kernels use non-temporal stores */
	void *a, *b, *c;           /* elementwise arrays */
	uint64_t array_bytes;
	int fill_dt;               /* dtype a and b hold, -1 before the first fill */
	float *gamma, *beta;       /* layernorm weights */
	uint64_t gamma_cols;
	double *partial;           /* per-thread dot sums */
	double dot;                /* last dot result */
	void *ga, *gb, *gc;        /* GEMM operands */
	uint64_t gm, gn, gk;
	int gdt;
	struct ch_energy energy;
	double clock_mhz;
	char clock_source[64];
	unsigned long long throttle_last;
	int throttle_have;
};

static enum ch_stores stores_mode = CH_STORES_AUTO;

void ch_cpu_set_stores(enum ch_stores s) { stores_mode = s; }

/* The core thread t of the current team is bound to (-1: none). */
static __thread int bound_core = -1;

static void bind_self(struct ch_dev *d, int t)
{
	if (bound_core == t)
		return;
	if (hwloc_set_cpubind(d->topo, d->core_pu[t], HWLOC_CPUBIND_THREAD) == 0)
		bound_core = t;
}

/* Element range of thread t over n elements of `size` bytes: contiguous,
 * split at page boundaries computed in bytes, so that every dtype maps the
 * same pages to the same thread as the first touch did. */
static void chunk(int t, int nt, uint64_t n, size_t size, uint64_t *lo, uint64_t *hi)
{
	uint64_t bytes = n * size;
	uint64_t l = (uint64_t)t * bytes / (uint64_t)nt / PAGE_BYTES * PAGE_BYTES;
	uint64_t h = t == nt - 1 ? bytes : (uint64_t)(t + 1) * bytes / (uint64_t)nt / PAGE_BYTES * PAGE_BYTES;
	*lo = l / size;
	*hi = t == nt - 1 ? n : h / size;
	if (*lo > n)
		*lo = n;
	if (*hi < *lo)
		*hi = *lo;
}

/* ------------------------------------------------------------ host facts */

static double read_max_mhz(char *src, size_t n)
{
	FILE *f = fopen("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "r");
	double mhz = 0;
	char line[256];

	if (f) {
		unsigned long khz;
		if (fscanf(f, "%lu", &khz) == 1 && khz > 0) {
			mhz = khz / 1000.0;
			snprintf(src, n, "cpufreq cpuinfo_max_freq");
		}
		fclose(f);
		if (mhz > 0)
			return mhz;
	}
	f = fopen("/proc/cpuinfo", "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		double v;
		if (sscanf(line, "cpu MHz : %lf", &v) == 1 && v > mhz)
			mhz = v;
	}
	fclose(f);
	if (mhz > 0)
		snprintf(src, n, "/proc/cpuinfo cpu MHz, current; turbo may exceed it");
	return mhz;
}

static double read_cur_mhz(void)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];
	double sum = 0;
	int n = 0;

	if (!f)
		return NAN;
	while (fgets(line, sizeof(line), f)) {
		double v;
		if (sscanf(line, "cpu MHz : %lf", &v) == 1) {
			sum += v;
			n++;
		}
	}
	fclose(f);
	return n ? sum / n : NAN;
}

/* Sum of the kernel's thermal throttle event counters, -1 when absent. */
static long long throttle_count(void)
{
	glob_t g;
	long long sum = -1;
	size_t i;

	if (glob("/sys/devices/system/cpu/cpu[0-9]*/thermal_throttle/*_throttle_count", 0, NULL, &g) != 0)
		return -1;
	for (i = 0; i < g.gl_pathc; i++) {
		FILE *f = fopen(g.gl_pathv[i], "r");
		unsigned long long v;
		if (!f)
			continue;
		if (fscanf(f, "%llu", &v) == 1)
			sum = (sum < 0 ? 0 : sum) + (long long)v;
		fclose(f);
	}
	globfree(&g);
	return sum;
}

/* ------------------------------------------------------------ backend */

static int cpu_probe(char *why, size_t n)
{
	(void)why;
	(void)n;
	return 0;
}

static int cpu_count(void) { return 1; }

static void cpu_close(struct ch_dev *d)
{
	int i;
	if (!d)
		return;
	free(d->a);
	free(d->b);
	free(d->c);
	free(d->gamma);
	free(d->beta);
	free(d->partial);
	free(d->ga);
	free(d->gb);
	free(d->gc);
	ch_energy_stop(&d->energy);
	for (i = 0; d->core_pu && i < d->ncores; i++)
		hwloc_bitmap_free(d->core_pu[i]);
	free(d->core_pu);
	hwloc_bitmap_free(d->all);
	if (d->topo)
		hwloc_topology_destroy(d->topo);
	free(d);
}

/* Add to @set the CPUs of OpenMP's places (OMP_PLACES, or the default
 * places of OMP_PROC_BIND; none when neither is set). With a binding
 * policy, libgomp binds the initial thread to the first place when it
 * starts, before main(): the process's binding read then is that one place
 * (one core), while the places together are the CPUs the process was given
 * (libgomp builds them from its affinity at start: taskset, cgroups and
 * mpirun --bind-to still restrict them). */
static void add_omp_places(hwloc_bitmap_t set)
{
	int p, np = omp_get_num_places();

	for (p = 0; p < np; p++) {
		int k, nid = omp_get_place_num_procs(p);
		int *ids = nid > 0 ? malloc(sizeof(int) * (size_t)nid) : NULL;
		if (!ids)
			continue;
		omp_get_place_proc_ids(p, ids);
		for (k = 0; k < nid; k++)
			if (ids[k] >= 0)
				hwloc_bitmap_set(set, (unsigned)ids[k]);
		free(ids);
	}
}

/* The CPUs this process may use: its binding (taskset, cgroups, mpirun
 * --bind-to) and OpenMP's places, all of the topology's when the binding
 * cannot be read. When the calling thread is bound to fewer (OpenMP bound
 * it to its first place), every thread of the process is bound to them
 * all, so that the BLAS threads created from it (openblas_set_num_threads)
 * and OpenBLAS's own, created at start, are not held on one core. Returns
 * a new bitmap (NULL: out of memory). */
static hwloc_bitmap_t process_cpus(hwloc_topology_t topo)
{
	hwloc_bitmap_t bind = hwloc_bitmap_alloc(), self = hwloc_bitmap_alloc();

	if (!bind || !self) {
		hwloc_bitmap_free(bind);
		hwloc_bitmap_free(self);
		return NULL;
	}
	if (hwloc_get_cpubind(topo, bind, HWLOC_CPUBIND_PROCESS) != 0 || hwloc_bitmap_iszero(bind))
		hwloc_bitmap_copy(bind, hwloc_topology_get_allowed_cpuset(topo));
	add_omp_places(bind);
	hwloc_bitmap_and(bind, bind, hwloc_topology_get_allowed_cpuset(topo));
	if (hwloc_get_cpubind(topo, self, HWLOC_CPUBIND_THREAD) == 0 && !hwloc_bitmap_isequal(self, bind) &&
	    !hwloc_bitmap_iszero(bind))
		hwloc_set_cpubind(topo, bind, HWLOC_CPUBIND_PROCESS); /* best effort: the threads bind again */
	hwloc_bitmap_free(self);
	return bind;
}

static int cpu_open(int index, struct ch_dev **out, char *why, size_t n)
{
	struct ch_dev *d;
	hwloc_bitmap_t bind;
	hwloc_obj_type_t type;
	int i, total;

	*out = NULL;
	if (index != 0) {
		snprintf(why, n, "the cpu backend has one device (index 0), not '%d'", index);
		return CH_ERR_USAGE;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return CH_ERR_RUNTIME;
	d->fill_dt = -1;
	d->gdt = -1;
	if (ch_topo_load(NULL, &d->topo) != 0) {
		snprintf(why, n, "hwloc cannot load this machine's topology");
		cpu_close(d);
		return CH_ERR_RUNTIME;
	}
	/* the cores of the process's CPU binding (taskset, cgroups, mpirun
	 * --bind-to; OpenMP's places), all of them when it cannot be read */
	bind = process_cpus(d->topo);
	if (!bind) {
		cpu_close(d);
		return CH_ERR_RUNTIME;
	}
	type = hwloc_get_nbobjs_by_type(d->topo, HWLOC_OBJ_CORE) > 0 ? HWLOC_OBJ_CORE : HWLOC_OBJ_PU;
	total = hwloc_get_nbobjs_by_type(d->topo, type);
	d->core_pu = calloc((size_t)(total > 0 ? total : 1), sizeof(*d->core_pu));
	d->all = hwloc_bitmap_alloc();
	d->partial = calloc((size_t)(total > 0 ? total : 1), sizeof(double));
	if (!d->core_pu || !d->all || !d->partial) {
		hwloc_bitmap_free(bind);
		cpu_close(d);
		return CH_ERR_RUNTIME;
	}
	for (i = 0; i < total; i++) {
		hwloc_obj_t o = hwloc_get_obj_by_type(d->topo, type, (unsigned)i);
		hwloc_bitmap_t set;
		if (!o || !hwloc_bitmap_intersects(o->cpuset, bind))
			continue;
		set = hwloc_bitmap_alloc();
		hwloc_bitmap_and(set, o->cpuset, bind);
		hwloc_bitmap_singlify(set); /* one PU: no hopping between SMT siblings */
		d->core_pu[d->ncores++] = set;
		hwloc_bitmap_or(d->all, d->all, set);
	}
	hwloc_bitmap_free(bind);
	if (d->ncores <= 0) {
		snprintf(why, n, "hwloc found no core in this process's CPU binding");
		cpu_close(d);
		return CH_ERR_RUNTIME;
	}
	d->ops = ch_cpu_ops_select(NULL);
	d->streaming = stores_mode != CH_STORES_WRITE_ALLOCATE && d->ops->stream_nt_f64;
	if (stores_mode == CH_STORES_STREAMING && !d->streaming) {
		snprintf(why, n, "this CPU's kernels (%s) have no streaming stores", d->ops->isa);
		cpu_close(d);
		return CH_ERR_UNAVAILABLE;
	}
	*(void **)&d->sbgemm = dlsym(RTLD_DEFAULT, "cblas_sbgemm");
	d->clock_mhz = read_max_mhz(d->clock_source, sizeof(d->clock_source));
	ch_energy_start_at(&d->energy, "/sys/class/powercap", 0);
#ifdef OPENBLAS_VERSION
	openblas_set_num_threads(d->ncores); /* one BLAS thread per core */
#endif
	*out = d;
	return 0;
}

static int blas_generic_core(const char *core)
{
	static const char *const generic[] = { "Prescott", "Core2", "Penryn", "Dunnington",
		"Nehalem", "Atom", "Katmai", "Coppermine", "Northwood", "Banias", NULL };
	int i;
	for (i = 0; core && generic[i]; i++)
		if (!strcmp(core, generic[i]))
			return 1;
	return 0;
}

static int cpu_info(struct ch_dev *d, struct ch_dev_info *o)
{
	hwloc_obj_t pkg = hwloc_get_obj_by_type(d->topo, HWLOC_OBJ_PACKAGE, 0);
	const char *model = pkg ? hwloc_obj_get_info_by_name(pkg, "CPUModel") : NULL;

	memset(o, 0, sizeof(*o));
	snprintf(o->kind, sizeof(o->kind), "cpu");
	snprintf(o->name, sizeof(o->name), "%s", model ? model : "unknown CPU");
	o->mem_total_bytes = hwloc_get_root_obj(d->topo)->total_memory;
	o->mem_free_bytes = ch_host_mem_available_bytes();
	o->cache_bytes = ch_topo_llc_bytes(d->topo);
	o->units = d->ncores;
	o->threads = d->ncores;
	o->clock_mhz = d->clock_mhz;
	snprintf(o->clock_source, sizeof(o->clock_source), "%s", d->clock_source);
	snprintf(o->isa, sizeof(o->isa), "%s", d->ops->isa);
	snprintf(o->stores, sizeof(o->stores), "%s", d->streaming ? "streaming" : "write-allocate");
#ifdef OPENBLAS_VERSION
	{
		const char *core = openblas_get_corename();
		char ver[32];
		size_t l;
		/* OPENBLAS_VERSION is " OpenBLAS 0.3.21 ": keep the number */
		snprintf(ver, sizeof(ver), "%s", OPENBLAS_VERSION + strspn(OPENBLAS_VERSION, " "));
		l = strlen(ver);
		while (l && ver[l - 1] == ' ')
			ver[--l] = '\0';
		snprintf(o->blas, sizeof(o->blas), "%s, core %s, %d threads",
			 ver, core ? core : "?", openblas_get_num_threads());
		if (blas_generic_core(core) && d->ops->has_fma)
			snprintf(o->note, sizeof(o->note),
				 "OpenBLAS chose its generic core '%s' on a CPU with %s: GEMM runs without "
				 "AVX; set OPENBLAS_CORETYPE (e.g. SkylakeX or Haswell) to the closest core it knows",
				 core, d->ops->isa);
	}
#else
	snprintf(o->blas, sizeof(o->blas), "CBLAS");
#endif
	return 0;
}

static unsigned cpu_dtypes(struct ch_dev *d, const struct ch_kernel *k)
{
	switch (k->family) {
	case CH_FAM_STREAM:
	case CH_FAM_LADDER:
		return CH_DT_BIT(CH_FP64) | CH_DT_BIT(CH_FP32);
	case CH_FAM_ELEMENTWISE:
		return CH_DT_BIT(CH_FP32);
	case CH_FAM_GEMM:
		return CH_DT_BIT(CH_FP64) | CH_DT_BIT(CH_FP32) | (d->sbgemm ? CH_DT_BIT(CH_BF16) : 0);
	default:
		return 0;
	}
}

/* Fill a and b with their patterns in dtype dt (and c with 0.5 when
 * first_touch), each thread its own chunk. */
static void fill_arrays(struct ch_dev *d, enum ch_dtype dt, int first_touch)
{
	const size_t size = ch_dtype_size(dt);
	const uint64_t n = d->array_bytes / size;
	const int nt = d->ncores;

#pragma omp parallel num_threads(nt)
	{
		int t = omp_get_thread_num();
		uint64_t lo, hi, i;
		bind_self(d, t);
		chunk(t, nt, n, size, &lo, &hi);
		if (dt == CH_FP64) {
			double *a = d->a, *b = d->b, *c = d->c;
			for (i = lo; i < hi; i++) {
				a[i] = ch_pat_a(i);
				b[i] = ch_pat_b(i);
			}
			if (first_touch)
				for (i = lo; i < hi; i++)
					c[i] = ch_pat_c(i);
		} else {
			float *a = d->a, *b = d->b, *c = d->c;
			for (i = lo; i < hi; i++) {
				a[i] = (float)ch_pat_a(i);
				b[i] = (float)ch_pat_b(i);
			}
			if (first_touch)
				for (i = lo; i < hi; i++)
					c[i] = (float)ch_pat_c(i);
		}
	}
	d->fill_dt = dt;
}

/* 2 MiB-aligned memory (aligned_alloc wants a size that is a multiple of
 * the alignment), advised to use transparent huge pages. */
static void *alloc_huge(uint64_t bytes)
{
	void *p;
	bytes = (bytes + HUGE_BYTES - 1) / HUGE_BYTES * HUGE_BYTES;
	p = aligned_alloc(HUGE_BYTES, bytes ? bytes : HUGE_BYTES);
	if (p)
		madvise(p, bytes, MADV_HUGEPAGE); /* fewer TLB misses; advice only */
	return p;
}

static int cpu_alloc_arrays(struct ch_dev *d, uint64_t bytes)
{
	bytes = (bytes + HUGE_BYTES - 1) / HUGE_BYTES * HUGE_BYTES;
	free(d->a);
	free(d->b);
	free(d->c);
	d->a = alloc_huge(bytes);
	d->b = alloc_huge(bytes);
	d->c = alloc_huge(bytes);
	if (!d->a || !d->b || !d->c) {
		ch_error("cannot allocate three arrays of %llu bytes", (unsigned long long)bytes);
		free(d->a);
		free(d->b);
		free(d->c);
		d->a = d->b = d->c = NULL;
		return CH_ERR_RUNTIME;
	}
	d->array_bytes = bytes;
	fill_arrays(d, CH_FP64, 1);
	return 0;
}

/* ------------------------------------------------------------ GEMM */

static void gemm_free(struct ch_dev *d)
{
	free(d->ga);
	free(d->gb);
	free(d->gc);
	d->ga = d->gb = d->gc = NULL;
	d->gdt = -1;
}

/* Element p of a GEMM operand in dtype dt (values are exact in dt: see
 * ch_gemm_value(); bf16 is the top half of the fp32 bits). */
static void store_value(void *base, enum ch_dtype dt, uint64_t p, double v)
{
	if (dt == CH_FP64) {
		((double *)base)[p] = v;
	} else if (dt == CH_BF16) {
		float f = (float)v;
		uint32_t bits;
		memcpy(&bits, &f, sizeof(bits));
		((uint16_t *)base)[p] = (uint16_t)(bits >> 16);
	} else {
		((float *)base)[p] = (float)v;
	}
}

static int gemm_alloc(struct ch_dev *d, enum ch_dtype dt, uint64_t m, uint64_t n, uint64_t k)
{
	const size_t size = ch_dtype_size(dt), osize = ch_dtype_size(ch_gemm_out_dtype(dt));
	const int digits = ch_gemm_input_digits(dt);
	const int nt = d->ncores;

	if (d->gdt == (int)dt && d->gm == m && d->gn == n && d->gk == k)
		return 0;
	gemm_free(d);
	d->ga = alloc_huge(m * k * size);
	d->gb = alloc_huge(k * n * size);
	d->gc = alloc_huge(m * n * osize);
	if (!d->ga || !d->gb || !d->gc) {
		gemm_free(d);
		ch_error("cannot allocate GEMM operands of %llu x %llu x %llu", (unsigned long long)m,
			 (unsigned long long)n, (unsigned long long)k);
		return CH_ERR_RUNTIME;
	}
#pragma omp parallel num_threads(nt)
	{
		int t = omp_get_thread_num();
		uint64_t lo, hi, p;
		bind_self(d, t);
		chunk(t, nt, m * k, size, &lo, &hi);
		for (p = lo; p < hi; p++)
			store_value(d->ga, dt, p, ch_gemm_value(CH_GEMM_SEED_A, p, digits));
		chunk(t, nt, k * n, size, &lo, &hi);
		for (p = lo; p < hi; p++)
			store_value(d->gb, dt, p, ch_gemm_value(CH_GEMM_SEED_B, p, digits));
		chunk(t, nt, m * n, osize, &lo, &hi);
		/* NaN (0xff bytes in fp64, fp32, bf16): an entry never written fails */
		memset((char *)d->gc + lo * osize, 0xff, (hi - lo) * osize);
	}
	d->gdt = dt;
	d->gm = m;
	d->gn = n;
	d->gk = k;
	return 0;
}

static void gemm_call(struct ch_dev *d)
{
	const int m = (int)d->gm, n = (int)d->gn, k = (int)d->gk;
	/* OpenBLAS runs its own threads: let the calling thread (bound to
	 * core 0 by the OpenMP team) use every core again meanwhile. */
	hwloc_set_cpubind(d->topo, d->all, HWLOC_CPUBIND_THREAD);
	bound_core = -1;
	if (d->gdt == CH_FP64)
		cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, m, n, k, 1.0,
			    d->ga, k, d->gb, k, 0.0, d->gc, m);
	else if (d->gdt == CH_BF16)
		d->sbgemm(CblasColMajor, CblasTrans, CblasNoTrans, m, n, k, 1.0f,
			  d->ga, k, d->gb, k, 0.0f, d->gc, m);
	else
		cblas_sgemm(CblasColMajor, CblasTrans, CblasNoTrans, m, n, k, 1.0f,
			    d->ga, k, d->gb, k, 0.0f, d->gc, m);
}

static int cpu_gemm_size(struct ch_dev *d, enum ch_dtype dt, double min_sec, uint64_t *out)
{
	const size_t size = ch_dtype_size(dt);
	uint64_t n = 256, cap;
	double t = 0;
	int rc;

	/* time growing sizes until one call takes 20 ms, then scale by the
	 * cube root to reach min_sec with 30% to spare (the machine may be
	 * busy while we calibrate) */
	for (;;) {
		double t0;
		if ((rc = gemm_alloc(d, dt, n, n, n)) != 0)
			return rc;
		gemm_call(d); /* warm: threads, pages */
		t0 = ch_now_sec();
		gemm_call(d);
		t = ch_now_sec() - t0;
		if (t >= 0.02 || n >= 2048)
			break;
		n *= 2;
	}
	if (t < min_sec) {
		double f = cbrt(1.3 * min_sec / (t > 1e-6 ? t : 1e-6));
		n = (uint64_t)ceil((double)n * f / 128.0) * 128;
	}
	/* three operands in at most a quarter of free memory, and n <= 32768 */
	cap = (uint64_t)sqrt((double)ch_host_mem_available_bytes() / 4.0 / 3.0 / (double)size) / 128 * 128;
	if (cap < 128)
		cap = 128;
	if (n > cap)
		n = cap;
	if (n > 32768)
		n = 32768;
	gemm_free(d);
	*out = n;
	return 0;
}

/* ------------------------------------------------------------ points */

static int cpu_setup(struct ch_dev *d, const struct ch_point_spec *p)
{
	const struct ch_kernel *k = p->k;

	if (k->family == CH_FAM_GEMM)
		return gemm_alloc(d, p->dt, p->shape.m, p->shape.nn, p->shape.kk);
	if (!d->a) {
		ch_error("cpu backend: arrays not allocated");
		return CH_ERR_RUNTIME;
	}
	if (p->shape.n * ch_dtype_size(p->dt) > d->array_bytes) {
		ch_error("point of %llu elements does not fit arrays of %llu bytes",
			 (unsigned long long)p->shape.n, (unsigned long long)d->array_bytes);
		return CH_ERR_RUNTIME;
	}
	if (d->fill_dt != (int)p->dt)
		fill_arrays(d, p->dt, 0);
	if (k->id == CH_K_LAYERNORM && d->gamma_cols != p->shape.cols) {
		uint64_t j;
		free(d->gamma);
		free(d->beta);
		d->gamma = malloc(p->shape.cols * sizeof(float));
		d->beta = malloc(p->shape.cols * sizeof(float));
		if (!d->gamma || !d->beta) {
			free(d->gamma);
			free(d->beta);
			d->gamma = d->beta = NULL;
			d->gamma_cols = 0;
			return CH_ERR_RUNTIME;
		}
		for (j = 0; j < p->shape.cols; j++) {
			d->gamma[j] = (float)ch_pat_gamma(j);
			d->beta[j] = (float)ch_pat_beta(j);
		}
		d->gamma_cols = p->shape.cols;
	}
	return 0;
}

static int cpu_run(struct ch_dev *d, const struct ch_point_spec *p, double *sec)
{
	const struct ch_kernel *k = p->k;
	const enum ch_dtype dt = p->dt;
	const size_t size = ch_dtype_size(dt);
	const uint64_t n = p->shape.n;
	const int nt = d->ncores;
	double t0;
	int t;

	if (k->family == CH_FAM_GEMM) {
		t0 = ch_now_sec();
		gemm_call(d);
		*sec = ch_now_sec() - t0;
		return 0;
	}
	t0 = ch_now_sec();
#pragma omp parallel num_threads(nt)
	{
		int me = omp_get_thread_num();
		uint64_t lo, hi;
		bind_self(d, me);
		if (k->id == CH_K_LAYERNORM) {
			uint64_t rows = n / p->shape.cols, cols = p->shape.cols;
			uint64_t r0 = (uint64_t)me * rows / (uint64_t)nt, r1 = (uint64_t)(me + 1) * rows / (uint64_t)nt;
			d->ops->layernorm_f32((const float *)d->b + r0 * cols, (float *)d->c + r0 * cols,
					      r1 - r0, cols, d->gamma, d->beta, (float)CH_LN_EPS);
		} else {
			chunk(me, nt, n, size, &lo, &hi);
			switch (k->id) {
			case CH_K_FMA:
				if (dt == CH_FP64)
					d->ops->ladder_f64((const double *)d->a + lo, (double *)d->c + lo, hi - lo,
							   k->k, CH_LADDER_ALPHA, CH_LADDER_BETA);
				else
					d->ops->ladder_f32((const float *)d->a + lo, (float *)d->c + lo, hi - lo,
							   k->k, (float)CH_LADDER_ALPHA, (float)CH_LADDER_BETA);
				break;
			case CH_K_GELU:
				d->ops->gelu_f32((const float *)d->b + lo, (float *)d->c + lo, hi - lo);
				break;
			default:
				if (dt == CH_FP64)
					(d->streaming && !p->plain_stores ? d->ops->stream_nt_f64 : d->ops->stream_f64)(k->id, (const double *)d->a + lo, (const double *)d->b + lo,
							   (double *)d->c + lo, hi - lo, CH_STREAM_SCALAR,
							   &d->partial[me]);
				else
					(d->streaming && !p->plain_stores ? d->ops->stream_nt_f32 : d->ops->stream_f32)(k->id, (const float *)d->a + lo, (const float *)d->b + lo,
							   (float *)d->c + lo, hi - lo, (float)CH_STREAM_SCALAR,
							   &d->partial[me]);
			}
		}
	}
	*sec = ch_now_sec() - t0;
	if (k->id == CH_K_DOT) {
		d->dot = 0;
		for (t = 0; t < nt; t++)
			d->dot += d->partial[t];
	}
	return 0;
}

static int cpu_check(struct ch_dev *d, const struct ch_point_spec *p, struct ch_check *out)
{
	if (p->k->family == CH_FAM_GEMM) {
		struct ch_gemm_sample s[GEMM_SAMPLES];
		int q;
		ch_gemm_sample_positions(p->shape.m, p->shape.nn, GEMM_SAMPLES, s);
		for (q = 0; q < GEMM_SAMPLES; q++) {
			uint64_t idx = s[q].i + s[q].j * p->shape.m;
			s[q].got = p->dt == CH_FP64 ? ((double *)d->gc)[idx] : ((float *)d->gc)[idx]; /* bf16: fp32 C */
		}
		ch_check_gemm(p->dt, p->shape.m, p->shape.nn, p->shape.kk, s, GEMM_SAMPLES, out);
		return 0;
	}
	if (p->k->id == CH_K_DOT) {
		ch_check_dot(p->dt, p->shape.n, d->dot, out);
		return 0;
	}
	return ch_check_elementwise(p->k, p->dt, &p->shape, d->c, out);
}

static void cpu_teardown(struct ch_dev *d, const struct ch_point_spec *p)
{
	if (p->k->family == CH_FAM_GEMM)
		gemm_free(d);
}

/* Test hook (CH_ROOFLINE_CORRUPT, see docs/roofline.md): damage the output
 * value the check reaches: element n/2 becomes v + 1 + |v|, the dot sum is
 * scaled by 1.001, the last sampled C entry becomes v + 2k + |v|; each is
 * far outside its tolerance. */
static int cpu_corrupt(struct ch_dev *d, const struct ch_point_spec *p)
{
	if (p->k->family == CH_FAM_GEMM) {
		struct ch_gemm_sample s[GEMM_SAMPLES];
		uint64_t idx;
		double add;
		ch_gemm_sample_positions(p->shape.m, p->shape.nn, GEMM_SAMPLES, s);
		idx = s[GEMM_SAMPLES - 1].i + s[GEMM_SAMPLES - 1].j * p->shape.m;
		add = 2.0 * (double)p->shape.kk;
		if (p->dt == CH_FP64)
			((double *)d->gc)[idx] += add + fabs(((double *)d->gc)[idx]);
		else
			((float *)d->gc)[idx] += (float)add + fabsf(((float *)d->gc)[idx]);
	} else if (p->k->id == CH_K_DOT) {
		d->dot *= 1.001;
	} else if (p->dt == CH_FP64) {
		double *c = d->c;
		c[p->shape.n / 2] += 1.0 + fabs(c[p->shape.n / 2]);
	} else {
		float *c = d->c;
		c[p->shape.n / 2] += 1.0f + fabsf(c[p->shape.n / 2]);
	}
	return 0;
}

static int cpu_peak_estimate(struct ch_dev *d, enum ch_dtype dt, double *gflops, char *how, size_t n)
{
	int lanes;
	if ((dt != CH_FP64 && dt != CH_FP32) || d->clock_mhz <= 0)
		return CH_ERR_UNAVAILABLE;
	lanes = d->ops->lanes_fp64 * (dt == CH_FP32 ? 2 : 1);
	/* 2 FMA units per core: Intel since Haswell (Xeon Scalable Gold and
	 * Platinum for AVX-512), AMD since Zen; older or smaller cores have
	 * fewer, so this is an upper estimate. */
	*gflops = d->ncores * d->clock_mhz * 1e-3 * lanes * 2.0 * 2.0;
	snprintf(how, n, "estimate: %d cores x %.3f GHz (%s) x %d %s lanes (%s) x 2 FMA units (assumed) x 2 FLOP/FMA",
		 d->ncores, d->clock_mhz * 1e-3, d->clock_source, lanes, ch_dtype_name(dt), d->ops->isa);
	return 0;
}

static void *cpu_telemetry_json(struct ch_dev *d)
{
	json_t *o = json_object();
	struct ch_energy_reading r;
	double mhz = read_cur_mhz();
	long long tc = throttle_count();

	ch_energy_read(&d->energy, &r);
	json_object_set_new(o, "cpu_mhz", isnan(mhz) ? json_null() : json_real(mhz));
	json_object_set_new(o, "energy_j", isnan(r.cpu_j) ? json_null() : json_real(r.cpu_j));
	json_object_set_new(o, "thermal_throttle_count", tc < 0 ? json_null() : json_integer(tc));
	return o;
}

static int cpu_energy_j(struct ch_dev *d, double *j)
{
	struct ch_energy_reading r;
	ch_energy_read(&d->energy, &r);
	if (isnan(r.cpu_j))
		return CH_ERR_UNAVAILABLE;
	*j = r.cpu_j;
	return 0;
}

static int cpu_throttled(struct ch_dev *d)
{
	long long tc = throttle_count();
	int was;
	if (tc < 0)
		return CH_ERR_UNAVAILABLE;
	was = d->throttle_have && (unsigned long long)tc > d->throttle_last;
	d->throttle_last = (unsigned long long)tc;
	d->throttle_have = 1;
	return was;
}

const struct ch_backend ch_backend_cpu = {
	.name = "cpu",
	.probe = cpu_probe,
	.count = cpu_count,
	.open = cpu_open,
	.close = cpu_close,
	.info = cpu_info,
	.dtypes = cpu_dtypes,
	.alloc_arrays = cpu_alloc_arrays,
	.gemm_size = cpu_gemm_size,
	.setup = cpu_setup,
	.run = cpu_run,
	.check = cpu_check,
	.teardown = cpu_teardown,
	.corrupt = cpu_corrupt,
	.peak_estimate = cpu_peak_estimate,
	.telemetry_json = cpu_telemetry_json,
	.energy_j = cpu_energy_j,
	.energy_window_sec = 0.1, /* RAPL refreshes about every 1 ms */
	.throttled = cpu_throttled,
};
