#include "report/read/hr_nccltests.h"
#include "base/ch_common.h"
#include "report/hr_util.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_TOK 64

/* Column roles of the results table header. */
enum col {
	C_SIZE, C_COUNT, C_TYPE, C_REDOP, C_ROOT, C_TIME, C_ALGBW, C_BUSBW,
	C_WRONG, C_ERROR, C_TIMESTAMP, C_OTHER
};

struct table {
	int ncols;
	int role[MAX_TOK];
	int half[MAX_TOK]; /* 0 out-of-place, 1 in-place */
	int has_timestamp;
	int has_error_col;
};

struct parser {
	const char *path;
	struct hr_nt_log *log;
	struct hr_issues *issues;
	struct hr_nt_run *run;       /* run under way, or NULL */
	int seen_version, seen_start, seen_nthread; /* markers of the run under way */
	struct table tab;
	int have_tab;
	char pending_algo[48];
	char pending_nccl[32];
	char guess_coll[48];
	int oom;
};

/* ------------------------------------------------------------ helpers */

static int tokenize(char *s, char **tok, int max)
{
	int n = 0;
	while (*s) {
		while (*s && isspace((unsigned char)*s))
			s++;
		if (!*s)
			break;
		if (n == max)
			return max + 1;
		tok[n++] = s;
		while (*s && !isspace((unsigned char)*s))
			s++;
		if (*s)
			*s++ = '\0';
	}
	return n;
}

static int parse_num(const char *s, double *out)
{
	char *end;
	double v;
	if (!s || !*s)
		return -1;
	v = strtod(s, &end);
	if (*end || end == s)
		return -1;
	*out = v;
	return 0;
}

static int all_digits(const char *s)
{
	if (!*s)
		return 0;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return 0;
	return 1;
}

static int decimals_of(const char *tok)
{
	const char *d = strchr(tok, '.');
	int n = 0;
	if (!d || strpbrk(tok, "eE"))
		return 0;
	for (d++; isdigit((unsigned char)*d); d++)
		n++;
	return n;
}

/* a log's words as UTF-8 text (hr_utf8_copy(): bytes that are not UTF-8
 * as "\xNN", no character cut), so that every string kept can go into the
 * profile's JSON */
static void copy_str(char *dst, size_t n, const char *src)
{
	hr_utf8_copy(dst, n, src);
}

static void lower_str(char *s)
{
	for (; *s; s++)
		*s = (char)tolower((unsigned char)*s);
}

/* "all_reduce_perf" -> "all_reduce"; path basename guesses as fallback. */
static void collective_from_name(const char *name, char *out, size_t n)
{
	static const struct { const char *key, *coll; } map[] = {
		{ "all_reduce", "all_reduce" }, { "allreduce", "all_reduce" },
		{ "all_gather", "all_gather" }, { "allgather", "all_gather" },
		{ "reduce_scatter", "reduce_scatter" }, { "reducescatter", "reduce_scatter" },
		{ "alltoall", "alltoall" }, { "all_to_all", "alltoall" },
		{ "broadcast", "broadcast" }, { "sendrecv", "sendrecv" },
		{ "hypercube", "hypercube" }, { "gather", "gather" },
		{ "scatter", "scatter" }, { "reduce", "reduce" },
	};
	char low[512];
	const char *base;
	size_t i;
	out[0] = '\0';
	if (!name)
		return;
	base = strrchr(name, '/');
	base = base ? base + 1 : name;
	copy_str(low, sizeof(low), base);
	lower_str(low);
	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (strstr(low, map[i].key)) {
			copy_str(out, n, map[i].coll);
			return;
		}
}

/* NCCL version code (2.9 and later: major*10000 + minor*100 + patch). */
static void nccl_code_to_version(long code, char *out, size_t n)
{
	if (code >= 20900)
		snprintf(out, n, "%ld.%ld.%ld", code / 10000, (code / 100) % 100, code % 100);
	else if (code > 0)
		snprintf(out, n, "%ld.%ld.%ld", code / 1000, (code / 100) % 10, code % 100);
	else
		out[0] = '\0';
}

static struct hr_nt_run *new_run(struct parser *p, int line)
{
	struct hr_nt_log *l = p->log;
	struct hr_nt_run *v = realloc(l->runs, (l->nruns + 1) * sizeof(*v));
	struct hr_nt_run *r;
	if (!v) {
		p->oom = 1;
		return NULL;
	}
	l->runs = v;
	r = &l->runs[l->nruns++];
	memset(r, 0, sizeof(*r));
	r->first_line = r->last_line = line;
	copy_str(r->algo, sizeof(r->algo), p->pending_algo[0] ? p->pending_algo : "default");
	copy_str(r->nccl_version, sizeof(r->nccl_version), p->pending_nccl);
	r->busbw_ratio = NAN;
	r->format = HR_NT_FMT_UNKNOWN;
	p->run = r;
	p->seen_version = p->seen_start = p->seen_nthread = 0;
	p->have_tab = 0;
	return r;
}

static struct hr_nt_run *cur_run(struct parser *p, int line)
{
	return p->run ? p->run : new_run(p, line);
}

static int run_started_table(const struct hr_nt_run *r)
{
	return r->header_line || r->nrows || r->has_avg || r->has_oob;
}

/* ---- rows reduced as they are read: one per size, type, redop and root */

static uint64_t row_hash(const struct hr_nt_row *w)
{
	uint64_t h = 1469598103934665603ULL;
	const unsigned char *b = (const unsigned char *)&w->bytes;
	size_t i;
	for (i = 0; i < sizeof(w->bytes); i++)
		h = (h ^ b[i]) * 1099511628211ULL;
	for (i = 0; w->type[i]; i++)
		h = (h ^ (unsigned char)w->type[i]) * 1099511628211ULL;
	for (i = 0; w->redop[i]; i++)
		h = (h ^ (unsigned char)w->redop[i]) * 1099511628211ULL;
	return (h ^ (uint64_t)(w->root + 1)) * 1099511628211ULL;
}

static int same_key(const struct hr_nt_row *a, const struct hr_nt_row *b)
{
	return a->bytes == b->bytes && a->root == b->root && !strcmp(a->type, b->type) && !strcmp(a->redop, b->redop);
}

/* (re)build the index at @cap slots (a power of two, at most half full) */
static int index_rows(struct hr_nt_run *r, size_t cap)
{
	size_t *ix = malloc(cap * sizeof(*ix)), i;
	if (!ix)
		return -1;
	for (i = 0; i < cap; i++)
		ix[i] = SIZE_MAX;
	for (i = 0; i < r->nrows; i++) {
		size_t k = row_hash(&r->rows[i]) & (cap - 1);
		while (ix[k] != SIZE_MAX)
			k = (k + 1) & (cap - 1);
		ix[k] = i;
	}
	free(r->row_index);
	r->row_index = ix;
	r->row_index_cap = cap;
	return 0;
}

static void merge_cell(struct hr_nt_cell *d, const struct hr_nt_cell *s, int n, int error_col)
{
	if (!s->present)
		return;
	if (!d->present) {
		*d = *s;
		return;
	}
	/* running means over the n prints of the size */
	d->time_us += (s->time_us - d->time_us) / n;
	d->algbw_gbps += (s->algbw_gbps - d->algbw_gbps) / n;
	d->busbw_gbps += (s->busbw_gbps - d->busbw_gbps) / n;
	if (d->wrong < 0 || s->wrong < 0)
		d->wrong = d->wrong < 0 ? s->wrong : d->wrong;
	else
		d->wrong = error_col ? fmax(d->wrong, s->wrong) : d->wrong + s->wrong;
}

/* Add a row to @r, or merge it into the row of its size that the run has
 * (a soak's cycles print every size again: 10^6 rows of a few dozen sizes
 * took 42x the log's size in memory). Returns 0 or -1 (out of memory). */
static int add_row(struct hr_nt_run *r, const struct hr_nt_row *row)
{
	size_t k = 0, cap;

	/* the sizes of one pass only grow (a size printed twice in a row, as
	 * several small sizes that print as 0, is kept); a smaller size starts
	 * the next cycle, whose sizes are merged from then on */
	if (!r->cycling && r->nrows && row->bytes < r->rows[r->nrows - 1].bytes) {
		for (cap = 64; cap < 2 * (r->nrows + 1); cap *= 2)
			;
		if (index_rows(r, cap))
			return -1;
		r->cycling = 1;
	}
	if (r->cycling && 2 * (r->nrows + 1) > r->row_index_cap && index_rows(r, 2 * r->row_index_cap))
		return -1;
	for (k = r->cycling ? row_hash(row) & (r->row_index_cap - 1) : 0; r->cycling && r->row_index[k] != SIZE_MAX;
	     k = (k + 1) & (r->row_index_cap - 1)) {
		struct hr_nt_row *d = &r->rows[r->row_index[k]];
		if (same_key(d, row)) {
			d->reps++;
			merge_cell(&d->oop, &row->oop, d->reps, r->format == HR_NT_FMT_ERROR);
			merge_cell(&d->ip, &row->ip, d->reps, r->format == HR_NT_FMT_ERROR);
			r->rows_merged++;
			return 0;
		}
	}
	if (r->nrows == r->rows_cap) {
		size_t cap = r->rows_cap ? 2 * r->rows_cap : 32;
		struct hr_nt_row *v = realloc(r->rows, cap * sizeof(*v));
		if (!v)
			return -1;
		r->rows = v;
		r->rows_cap = cap;
	}
	r->rows[r->nrows] = *row;
	r->rows[r->nrows].reps = 1;
	if (r->cycling)
		r->row_index[k] = r->nrows;
	r->nrows++;
	return 0;
}

static void add_error(struct parser *p, int line, const char *text)
{
	struct hr_nt_run *r = cur_run(p, line);
	const char *s = text;
	if (!r)
		return;
	while (*s && isspace((unsigned char)*s))
		s++;
	if (r->n_errors++ == 0) {
		r->first_error_line = line;
		copy_str(r->first_error, sizeof(r->first_error), s);
	}
	r->last_line = line;
}

static int is_error_line(const char *s)
{
	static const char *const pat[] = {
		"Test NCCL failure", "Test CUDA failure", "Test failure",
		"NCCL WARN", "mpirun detected", "mpirun noticed", "Segmentation fault",
		"Bus error", "terminate called", "Invalid number of GPUs",
		"srun: error", "Aborted (core dumped)", NULL
	};
	int i;
	for (i = 0; pat[i]; i++)
		if (strstr(s, pat[i]))
			return 1;
	return 0;
}

/* NCCL_ALGO hints: "NCCL_ALGO set by environment to Ring", "NCCL_ALGO=Tree". */
static void algo_hint(struct parser *p, const char *s)
{
	const char *a = strstr(s, "NCCL_ALGO");
	char algo[48];
	size_t n = 0;
	if (!a)
		return;
	a += strlen("NCCL_ALGO");
	if (!strncmp(a, " set by environment to ", 23))
		a += 23;
	else if (*a == '=')
		a++;
	else
		return;
	while (a[n] && n + 1 < sizeof(algo) && (isalnum((unsigned char)a[n]) ||
						 a[n] == '_' || a[n] == ',' || a[n] == '^'))
		n++;
	if (!n)
		return;
	memcpy(algo, a, n);
	algo[n] = '\0';
	lower_str(algo);
	copy_str(p->pending_algo, sizeof(p->pending_algo), algo);
	if (p->run && !p->run->nrows)
		copy_str(p->run->algo, sizeof(p->run->algo), algo);
}

/* Column header: "# size count type redop root time algbw busbw #wrong ..." */
static int parse_header(struct parser *p, char **tok, int ntok, int line)
{
	struct table t;
	int i, ntime = 0;
	struct hr_nt_run *r;

	memset(&t, 0, sizeof(t));
	for (i = 0; i < ntok; i++) {
		const char *s = tok[i];
		int role = C_OTHER;
		if (!strcmp(s, "size")) role = C_SIZE;
		else if (!strcmp(s, "count")) role = C_COUNT;
		else if (!strcmp(s, "type")) role = C_TYPE;
		else if (!strcmp(s, "redop")) role = C_REDOP;
		else if (!strcmp(s, "root")) role = C_ROOT;
		else if (!strcmp(s, "time") || !strcmp(s, "cputime")) { role = C_TIME; ntime++; }
		else if (!strcmp(s, "algbw")) role = C_ALGBW;
		else if (!strcmp(s, "busbw")) role = C_BUSBW;
		else if (!strcmp(s, "#wrong")) role = C_WRONG;
		else if (!strcmp(s, "error")) { role = C_ERROR; t.has_error_col = 1; }
		else if (!strcmp(s, "timestamp")) { role = C_TIMESTAMP; t.has_timestamp = 1; }
		t.role[i] = role;
		t.half[i] = ntime >= 2 ? 1 : 0;
	}
	t.ncols = ntok;
	if (t.role[0] != C_SIZE || ntime < 1) {
		hr_issue_add(p->issues, HR_ISSUE_SKIPPED, p->path, line, 0,
			     "unrecognised results header (expected 'size count type ... time algbw busbw'); its table is skipped");
		p->have_tab = 0;
		return 0;
	}
	r = cur_run(p, line);
	if (!r)
		return CH_ERR_RUNTIME;
	if (r->header_line && (r->nrows || r->has_avg)) {
		/* a second table without a new "# nThread" line: a new run */
		r = new_run(p, line);
		if (!r)
			return CH_ERR_RUNTIME;
	}
	p->tab = t;
	p->have_tab = 1;
	r->header_line = line;
	r->format = t.has_error_col ? HR_NT_FMT_ERROR : HR_NT_FMT_WRONG;
	r->last_line = line;
	return 0;
}

/*
 * Old alltoall_perf (and other collectives with no reduction) printed an
 * empty redop cell: "268435456  1048576  float  520935  0.52 ..." under a
 * "size count type redop time ..." header, one token short. When the
 * token under the redop column (and the one under root, if any) is a
 * number, the row is read with an empty redop: *@tok is pointed at
 * @fixed, the row with "" inserted. Returns 1 when done, else 0.
 */
static int fill_empty_redop(const struct table *t, char ***tok, int ntok, char **fixed)
{
	static char empty[1] = "";
	int i, k = -1;
	double v;

	for (i = 0; i < t->ncols && i < ntok; i++)
		if (t->role[i] == C_REDOP) {
			k = i;
			break;
		}
	if (k < 0 || ntok + 1 > MAX_TOK || parse_num((*tok)[k], &v))
		return 0;
	for (i = 0; i < k; i++)
		fixed[i] = (*tok)[i];
	fixed[k] = empty;
	for (i = k; i < ntok; i++)
		fixed[i + 1] = (*tok)[i];
	fixed[ntok + 1] = NULL;
	*tok = fixed;
	return 1;
}

static int parse_row(struct parser *p, char **tok, int ntok, int line, int last_line,
		     const char *raw)
{
	struct hr_nt_run *r = p->run;
	struct hr_nt_row row;
	const struct table *t = &p->tab;
	char *fixed[MAX_TOK + 1];
	int want, i, ti;

	if (!r || !p->have_tab) {
		hr_issue_add(p->issues, HR_ISSUE_SKIPPED, p->path, line, 0,
			     "results row before any column header; skipped");
		return 0;
	}
	want = t->ncols + (t->has_timestamp ? 1 : 0);
	if (ntok == want - 1 && fill_empty_redop(t, &tok, ntok, fixed))
		ntok = want;
	if (ntok != want) {
		if (ntok < want && last_line)
			hr_issue_add(p->issues, HR_ISSUE_SKIPPED, p->path, line, 0,
				     "truncated results row (%d of %d columns; the file ends here): '%.60s'",
				     ntok, want, raw);
		else
			hr_issue_add(p->issues, HR_ISSUE_SKIPPED, p->path, line, 0,
				     "malformed results row: expected %d columns, found %d: '%.60s'",
				     want, ntok, raw);
		return 0;
	}
	memset(&row, 0, sizeof(row));
	row.root = -1;
	row.line = line;
	row.oop.wrong = row.ip.wrong = -1;
	for (i = 0, ti = 0; i < t->ncols; i++, ti++) {
		const char *s = tok[ti];
		struct hr_nt_cell *c = t->half[i] ? &row.ip : &row.oop;
		double v;
		int bad = 0;
		switch (t->role[i]) {
		case C_SIZE: bad = parse_num(s, &row.bytes) || row.bytes < 0; break;
		case C_COUNT: bad = parse_num(s, &row.count) || row.count < 0; break;
		case C_TYPE: copy_str(row.type, sizeof(row.type), s); break;
		case C_REDOP: copy_str(row.redop, sizeof(row.redop), s); break;
		case C_ROOT:
			if (parse_num(s, &v))
				bad = 1;
			else
				row.root = (int)v;
			break;
		case C_TIME: bad = parse_num(s, &c->time_us); c->present = 1; break;
		case C_ALGBW: bad = parse_num(s, &c->algbw_gbps); break;
		case C_BUSBW:
			bad = parse_num(s, &c->busbw_gbps);
			if (!bad && decimals_of(s) > r->cell_decimals)
				r->cell_decimals = decimals_of(s);
			break;
		case C_WRONG:
		case C_ERROR:
			if (!strcmp(s, "N/A"))
				c->wrong = -1;
			else
				bad = parse_num(s, &c->wrong);
			break;
		case C_TIMESTAMP: ti++; break; /* date and time: two tokens */
		default: break;
		}
		if (bad) {
			static const char *const names[] = { "size", "count", "type", "redop", "root",
				"time", "algbw", "busbw", "#wrong", "error", "timestamp", "?" };
			hr_issue_add(p->issues, HR_ISSUE_SKIPPED, p->path, line, 0,
				     "malformed results row: column %d (%s%s) is not a valid number: '%s'; row skipped",
				     i + 1, names[t->role[i]],
				     t->role[i] >= C_TIME && t->role[i] <= C_ERROR ?
				     (t->half[i] ? ", in-place" : ", out-of-place") : "", s);
			return 0;
		}
	}
	if (!row.oop.present && !row.ip.present) {
		hr_issue_add(p->issues, HR_ISSUE_SKIPPED, p->path, line, 0,
			     "results row without time columns; skipped");
		return 0;
	}
	if (add_row(r, &row))
		return CH_ERR_RUNTIME;
	r->last_line = line;
	return 0;
}

/* "#  Rank  0 Group  0 Pid   6899 on     node01 device  0 [0000:04:00] NVIDIA H100 80GB HBM3"
 * "#   Rank  0 Pid  87569 on     node01 device  0 [0x36] Tesla V100-SXM3-32GB" */
static int parse_rank(struct parser *p, const char *s, int line)
{
	struct hr_nt_rank k;
	const char *q = strstr(s, "Rank");
	char host[128], bus[32];
	int n = 0, rank, dev, group = -1;
	long pid;
	struct hr_nt_run *r;

	memset(&k, 0, sizeof(k));
	if (sscanf(q, "Rank %d Group %d Pid %ld on %127s device %d [%31[^]]] %n",
		   &rank, &group, &pid, host, &dev, bus, &n) == 6 && n > 0) {
	} else if (group = -1, n = 0,
		   sscanf(q, "Rank %d Pid %ld on %127s device %d [%31[^]]] %n",
			  &rank, &pid, host, &dev, bus, &n) == 5 && n > 0) {
	} else {
		hr_issue_add(p->issues, HR_ISSUE_NOTE, p->path, line, 0,
			     "unrecognised device line; ignored: '%.60s'", s);
		return 0;
	}
	k.rank = rank;
	k.group = group;
	k.pid = pid;
	k.device = dev;
	copy_str(k.host, sizeof(k.host), host);
	copy_str(k.bus_id, sizeof(k.bus_id), bus);
	copy_str(k.name, sizeof(k.name), q + n);
	/* trim trailing blanks */
	for (n = (int)strlen(k.name); n > 0 && isspace((unsigned char)k.name[n - 1]); n--)
		k.name[n - 1] = '\0';
	r = cur_run(p, line);
	if (!r)
		return CH_ERR_RUNTIME;
	{
		struct hr_nt_rank *v = realloc(r->ranks, (r->nranks_listed + 1) * sizeof(*v));
		if (!v)
			return CH_ERR_RUNTIME;
		r->ranks = v;
		r->ranks[r->nranks_listed++] = k;
	}
	r->last_line = line;
	return 0;
}

static void parse_nthread(struct hr_nt_run *r, const char *s)
{
	const char *q;
	if ((q = strstr(s, "nThread")))
		sscanf(q, "nThread %d", &r->nthread);
	if ((q = strstr(s, "nGpus")))
		sscanf(q, "nGpus %d", &r->ngpus);
	if ((q = strstr(s, "minBytes")))
		sscanf(q, "minBytes %lf", &r->min_bytes);
	if ((q = strstr(s, "maxBytes")))
		sscanf(q, "maxBytes %lf", &r->max_bytes);
}

/* A comment line that starts a new run? Returns the marker (1 version,
 * 2 start, 3 nThread) or 0. */
static int run_marker(const char *s)
{
	if (!strncmp(s, "# nccl-tests version", 20))
		return 1;
	if (!strncmp(s, "# Collective test starting:", 27))
		return 2;
	if (!strncmp(s, "# nThread", 9))
		return 3;
	return 0;
}

static int handle_marker(struct parser *p, int m, const char *s, int line)
{
	struct hr_nt_run *r = p->run;
	int need_new = !r || run_started_table(r) ||
		       (m == 1 && (p->seen_version || p->seen_start || p->seen_nthread)) ||
		       (m == 2 && (p->seen_start || p->seen_nthread)) ||
		       (m == 3 && p->seen_nthread);
	if (need_new) {
		r = new_run(p, line);
		if (!r)
			return CH_ERR_RUNTIME;
	}
	r->last_line = line;
	if (m == 1) {
		const char *q = s + 20;
		char ver[32] = "";
		long lib = 0;
		const char *lq;
		p->seen_version = 1;
		if (sscanf(q, " %31s", ver) == 1)
			copy_str(r->tests_version, sizeof(r->tests_version), ver);
		if ((lq = strstr(s, "nccl-library=")) && sscanf(lq, "nccl-library=%ld", &lib) == 1) {
			nccl_code_to_version(lib, r->nccl_version, sizeof(r->nccl_version));
			copy_str(p->pending_nccl, sizeof(p->pending_nccl), r->nccl_version);
		}
	} else if (m == 2) {
		char name[64] = "";
		p->seen_start = 1;
		if (sscanf(s + 27, " %63s", name) == 1) {
			char c[48];
			collective_from_name(name, c, sizeof(c));
			if (c[0]) {
				copy_str(r->collective, sizeof(r->collective), c);
				snprintf(r->collective_from, sizeof(r->collective_from),
					 "the log's 'Collective test starting: %.60s' line", name);
			}
		}
	} else {
		p->seen_nthread = 1;
		parse_nthread(r, s);
	}
	return 0;
}

int hr_nt_text_detect(const char *text)
{
	return strstr(text, "# nThread") || strstr(text, "# Avg bus bandwidth") ||
	       (strstr(text, "busbw") && strstr(text, "algbw") && strstr(text, "size"));
}

static void finish_runs(struct parser *p)
{
	size_t i;
	struct hr_nt_log *l = p->log;
	for (i = 0; i < l->nruns; i++) {
		struct hr_nt_run *r = &l->runs[i];
		r->complete = r->has_avg;
		if (!r->header_line && !r->nrows) {
			if (r->n_errors)
				hr_issue_add(p->issues, HR_ISSUE_TRUNCATED, p->path, r->first_error_line, 0,
					     "run failed before its results table: '%.120s'", r->first_error);
			else if (r->nranks_listed || p->seen_nthread)
				hr_issue_add(p->issues, HR_ISSUE_TRUNCATED, p->path, r->last_line, 0,
					     "run has no results table (the log ends after line %d)",
					     r->last_line);
			continue;
		}
		if (!r->nrows)
			hr_issue_add(p->issues, HR_ISSUE_TRUNCATED, p->path, r->header_line, 0,
				     "results table has no rows%s%.120s%s",
				     r->n_errors ? " (the run failed: '" : "",
				     r->n_errors ? r->first_error : "", r->n_errors ? "')" : "");
		else if (!r->has_avg)
			hr_issue_add(p->issues, HR_ISSUE_TRUNCATED, p->path, r->last_line, 0,
				     "run has no '# Avg bus bandwidth' footer: the log ends or the run failed after %zu row%s%s%.120s%s",
				     r->nrows, r->nrows == 1 ? "" : "s",
				     r->n_errors ? " ('" : "", r->n_errors ? r->first_error : "",
				     r->n_errors ? "')" : "");
		if (r->rows_merged)
			hr_issue_add(p->issues, HR_ISSUE_NOTE, p->path, r->header_line, 0,
				     "%zu rows print a size again (nccl-tests -N cycles): %zu sizes kept, each the mean of its prints (time, algbw, busbw; #wrong added)",
				     r->rows_merged, r->nrows);
		if (r->nrows && r->has_avg) {
			double c = hr_nt_avg_busbw(r);
			if (fabs(c - r->avg_reported_gbps) > hr_nt_avg_tolerance(r))
				hr_issue_add(p->issues, HR_ISSUE_NOTE, p->path, r->avg_line, 0,
					     "the rows average %.4f GB/s busbw but the log says '%.*f': rows are missing or were edited",
					     c, r->avg_decimals, r->avg_reported_gbps);
		}
		if (!r->collective[0])
			hr_nt_infer_collective(r, p->guess_coll, r->collective, sizeof(r->collective),
					       r->collective_from, sizeof(r->collective_from));
		else
			hr_nt_infer_collective(r, "", NULL, 0, NULL, 0); /* busbw_ratio only */
	}
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Median of busbw / (size / time) over the cells of rows of 1 MB or more
 * (below, latency and the 2-decimal rounding of busbw dominate). */
static double measured_ratio(const struct hr_nt_run *r)
{
	double *v, med = NAN;
	size_t i, n = 0;
	if (!r->nrows)
		return NAN;
	v = malloc(2 * r->nrows * sizeof(*v));
	if (!v)
		return NAN;
	for (i = 0; i < r->nrows; i++) {
		const struct hr_nt_row *w = &r->rows[i];
		const struct hr_nt_cell *c[2] = { &w->oop, &w->ip };
		int h;
		if (w->bytes < 1e6)
			continue;
		for (h = 0; h < 2; h++)
			if (c[h]->present && c[h]->time_us > 0 && c[h]->busbw_gbps > 0)
				v[n++] = c[h]->busbw_gbps / (w->bytes / c[h]->time_us / 1e3);
	}
	if (n) {
		qsort(v, n, sizeof(*v), cmp_dbl);
		med = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
	}
	free(v);
	return med;
}

void hr_nt_infer_collective(struct hr_nt_run *r, const char *hint, char *coll, size_t ncoll,
			    char *from, size_t nfrom)
{
	const char *cand[4] = { NULL, NULL, NULL, NULL };
	const char *cls = NULL;
	int n = hr_nt_nranks(r), ncand = 0, i, has_cols = r->nrows && r->rows[0].redop[0];
	int rooted = r->nrows && r->rows[0].root >= 0;
	int noop = has_cols && !strcmp(r->rows[0].redop, "none");
	double q = measured_ratio(r), ar, ag;
	char why[160] = "";

	r->busbw_ratio = q;
	if (!coll)
		return;
	ar = n > 0 ? 2.0 * (n - 1) / n : NAN;
	ag = n > 0 ? (double)(n - 1) / n : NAN;
	if (n >= 2 && !isnan(q)) {
		if (fabs(q / ar - 1) <= 0.10 && !(n == 2 && (rooted || noop))) {
			cls = "2(n-1)/n";
			cand[ncand++] = "all_reduce";
			if (n == 2 && has_cols)
				cand[ncand++] = "sendrecv"; /* 2(n-1)/n = 1 at n = 2 */
		} else if (fabs(q / ag - 1) <= 0.10) {
			cls = "(n-1)/n";
			if (!has_cols) {
				cand[ncand++] = "all_gather";
				cand[ncand++] = "reduce_scatter";
				cand[ncand++] = "alltoall";
			} else if (rooted) {
				cand[ncand++] = "gather";
				cand[ncand++] = "scatter";
			} else if (noop) {
				cand[ncand++] = "all_gather";
				cand[ncand++] = "alltoall";
			} else {
				cand[ncand++] = "reduce_scatter";
			}
		} else if (fabs(q - 1) <= 0.10) {
			cls = "1";
			if (!has_cols) {
				cand[ncand++] = "broadcast";
				cand[ncand++] = "reduce";
				cand[ncand++] = "sendrecv";
			} else if (rooted) {
				cand[ncand++] = noop ? "broadcast" : "reduce";
			} else {
				cand[ncand++] = "sendrecv";
			}
		}
	}
	if (cls)
		snprintf(why, sizeof(why), "busbw / (size / time) = %.3f, the bus factor %s for %d ranks%s",
			 q, cls, n, has_cols ? ", and the redop and root columns" : " (no redop or root column)");
	if (ncand == 1) {
		copy_str(coll, ncoll, cand[0]);
		snprintf(from, nfrom, "%s", why);
		return;
	}
	for (i = 0; i < ncand; i++)
		if (hint && !strcmp(hint, cand[i])) {
			copy_str(coll, ncoll, cand[i]);
			snprintf(from, nfrom, "%s; the file name (last hint) chose among %s%s%s%s%s", why,
				 cand[0], ncand > 1 ? ", " : "", ncand > 1 ? cand[1] : "",
				 ncand > 2 ? ", " : "", ncand > 2 ? cand[2] : "");
			return;
		}
	if (ncand > 1) {
		copy_str(coll, ncoll, cand[0]);
		snprintf(from, nfrom, "%s: one of %s, %s%s%s (the content cannot tell them apart; the file name does not say)",
			 why, cand[0], cand[1], ncand > 2 ? ", " : "", ncand > 2 ? cand[2] : "");
		return;
	}
	if (hint && hint[0]) {
		copy_str(coll, ncoll, hint);
		snprintf(from, nfrom, "the file name only (last hint): the log has no 'Collective test starting' line and its busbw/algbw ratio %s",
			 isnan(q) ? "could not be measured" : "matches no collective for its rank count");
		return;
	}
	copy_str(coll, ncoll, "unknown");
	snprintf(from, nfrom, "not identified: no 'Collective test starting' line, %s, and the file name does not say",
		 isnan(q) ? "no row to measure the bus factor" : "a bus factor that matches no collective");
}

int hr_nt_parse_text(const char *path, const char *text, struct hr_nt_log *out,
		     struct hr_issues *issues)
{
	struct parser p;
	const char *s = text;
	int line = 0, rc = 0;
	char buf[4096];

	memset(out, 0, sizeof(*out));
	memset(&p, 0, sizeof(p));
	out->path = strdup(path);
	if (!out->path)
		return CH_ERR_RUNTIME;
	p.path = path;
	p.log = out;
	p.issues = issues;
	collective_from_name(path, p.guess_coll, sizeof(p.guess_coll));

	while (*s && !rc && !p.oom) {
		const char *nl = strchr(s, '\n');
		size_t n = nl ? (size_t)(nl - s) : strlen(s);
		int last = !nl || !nl[1];
		char *tok[MAX_TOK + 1];
		int ntok, m;
		char raw[128];

		line++;
		if (n >= sizeof(buf))
			n = sizeof(buf) - 1;
		memcpy(buf, s, n);
		buf[n] = '\0';
		if (n && buf[n - 1] == '\r')
			buf[--n] = '\0';
		s = nl ? nl + 1 : s + strlen(s);
		copy_str(raw, sizeof(raw), buf);

		if (strstr(buf, "NCCL_ALGO"))
			algo_hint(&p, buf);

		if (buf[0] == '#') {
			const char *q;
			if ((m = run_marker(buf))) {
				rc = handle_marker(&p, m, buf, line);
				continue;
			}
			if (strstr(buf, "Rank") && strstr(buf, " on ") && strstr(buf, "device")) {
				rc = parse_rank(&p, buf, line);
				continue;
			}
			if ((q = strstr(buf, "Out of bounds values"))) {
				struct hr_nt_run *r = cur_run(&p, line);
				if (!r)
					break;
				q = strchr(q, ':');
				if (q && sscanf(q + 1, "%ld", &r->oob_count) == 1)
					r->has_oob = 1;
				r->last_line = line;
				continue;
			}
			if ((q = strstr(buf, "Avg bus bandwidth"))) {
				struct hr_nt_run *r = cur_run(&p, line);
				char num[64];
				if (!r)
					break;
				q = strchr(q, ':');
				if (q && sscanf(q + 1, " %63s", num) == 1 &&
				    parse_num(num, &r->avg_reported_gbps) == 0) {
					r->has_avg = 1;
					r->avg_decimals = decimals_of(num);
					r->avg_line = line;
				} else {
					hr_issue_add(issues, HR_ISSUE_NOTE, path, line, 0,
						     "unreadable '# Avg bus bandwidth' value");
				}
				r->last_line = line;
				continue;
			}
			if (strstr(buf, "Reducing maxBytes")) {
				struct hr_nt_run *r = cur_run(&p, line);
				if (r) {
					r->max_bytes_reduced = 1;
					r->last_line = line;
				}
				continue;
			}
			if (!strncmp(buf, "# Collective test concluded", 27)) {
				if (p.run)
					p.run->last_line = line;
				continue;
			}
			ntok = tokenize(buf + 1, tok, MAX_TOK);
			if (ntok >= 1 && ntok <= MAX_TOK && !strcmp(tok[0], "size") && ntok > 3) {
				int k, has_busbw = 0;
				for (k = 0; k < ntok; k++)
					if (!strcmp(tok[k], "busbw"))
						has_busbw = 1;
				if (has_busbw) {
					rc = parse_header(&p, tok, ntok, line);
					continue;
				}
			}
			continue;
		}
		if (!strncmp(buf, "NCCL version ", 13)) {
			char ver[32] = "";
			if (sscanf(buf + 13, "%31[0-9.]", ver) == 1) {
				copy_str(p.pending_nccl, sizeof(p.pending_nccl), ver);
				if (p.run)
					copy_str(p.run->nccl_version, sizeof(p.run->nccl_version), ver);
			}
			continue;
		}
		if (is_error_line(buf)) {
			add_error(&p, line, buf);
			continue;
		}
		ntok = tokenize(buf, tok, MAX_TOK);
		if (ntok >= 1 && all_digits(tok[0])) {
			if (ntok > MAX_TOK) {
				hr_issue_add(issues, HR_ISSUE_SKIPPED, path, line, 0,
					     "results row with more than %d columns; skipped", MAX_TOK);
				continue;
			}
			rc = parse_row(&p, tok, ntok, line, last, raw);
			continue;
		}
		/* anything else (NCCL INFO, blank lines, launcher chatter): ignored */
	}
	if (p.oom)
		rc = CH_ERR_RUNTIME;
	if (!rc)
		finish_runs(&p);
	return rc;
}

/* ---------------------------------------------------------------- JSON */

int hr_nt_json_detect(const json_t *doc)
{
	return json_is_object(doc) && json_is_array(json_object_get(doc, "results")) &&
	       json_is_object(json_object_get(doc, "config"));
}

static int json_num(const json_t *v, double *out)
{
	if (json_is_number(v)) {
		*out = json_number_value(v);
		return 0;
	}
	if (json_is_string(v) && !strcmp(json_string_value(v), "nan")) {
		*out = NAN;
		return 0;
	}
	return -1;
}

static int json_cell(const json_t *o, struct hr_nt_cell *c)
{
	const json_t *t;
	memset(c, 0, sizeof(*c));
	c->wrong = -1;
	if (!o || json_is_null(o))
		return 0;
	if (!json_is_object(o))
		return -1;
	t = json_object_get(o, "time");
	if (!t)
		t = json_object_get(o, "cpu_time");
	if (json_num(t, &c->time_us) || json_num(json_object_get(o, "alg_bw"), &c->algbw_gbps) ||
	    json_num(json_object_get(o, "bus_bw"), &c->busbw_gbps))
		return -1;
	t = json_object_get(o, "nwrong");
	if (t && !json_is_null(t) && json_num(t, &c->wrong))
		return -1;
	c->present = 1;
	return 0;
}

/* nccl-tests -J: "start_time"/"end_time" are local times ("%Y-%m-%d
 * %H:%M:%S", zone unknown): their difference is the wall time. */
static void json_wall(struct hr_nt_log *log, const json_t *doc)
{
	struct tm a, b;
	const char *s = json_string_value(json_object_get(doc, "start_time"));
	const char *e = json_string_value(json_object_get(doc, "end_time"));
	const char *pa, *pb;
	time_t ta, tb;
	if (!s || !e)
		return;
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	pa = strptime(s, "%Y-%m-%d %H:%M:%S", &a);
	pb = strptime(e, "%Y-%m-%d %H:%M:%S", &b);
	if (!pa || !pb || *pa || *pb)
		return;
	ta = timegm(&a);
	tb = timegm(&b);
	if (tb >= ta) {
		log->has_wall = 1;
		log->wall_sec = difftime(tb, ta);
	}
}

int hr_nt_parse_json(const char *path, const json_t *doc, struct hr_nt_log *out,
		     struct hr_issues *issues)
{
	struct hr_nt_run *r;
	const json_t *cfg = json_object_get(doc, "config");
	const json_t *res = json_object_get(doc, "results");
	const json_t *v, *args, *env;
	size_t i;

	memset(out, 0, sizeof(*out));
	out->path = strdup(path);
	out->is_json = 1;
	r = calloc(1, sizeof(*r));
	if (!out->path || !r) {
		free(r);
		return CH_ERR_RUNTIME;
	}
	out->runs = r;
	out->nruns = 1;
	json_wall(out, doc);
	r->format = HR_NT_FMT_JSON;
	r->cell_decimals = 6; /* written with "%lf" */
	copy_str(r->algo, sizeof(r->algo), "default");

	args = json_object_get(doc, "args");
	r->busbw_ratio = NAN;
	if (json_is_array(args) && json_is_string(json_array_get(args, 0))) {
		collective_from_name(json_string_value(json_array_get(args, 0)),
				     r->collective, sizeof(r->collective));
		if (r->collective[0])
			snprintf(r->collective_from, sizeof(r->collective_from),
				 "the JSON's args[0] '%.80s'", json_string_value(json_array_get(args, 0)));
	}
	env = json_object_get(doc, "env");
	json_array_foreach(env, i, v) {
		if (json_is_string(v) && !strncmp(json_string_value(v), "NCCL_ALGO=", 10)) {
			copy_str(r->algo, sizeof(r->algo), json_string_value(v) + 10);
			lower_str(r->algo);
		}
	}
	v = json_object_get(doc, "nccl_version");
	if (json_is_integer(v))
		nccl_code_to_version((long)json_integer_value(v), r->nccl_version,
				     sizeof(r->nccl_version));
	if (json_is_object(cfg)) {
		const json_t *devs = json_object_get(cfg, "devices");
		json_t *d;
		v = json_object_get(cfg, "nthreads");
		if (json_is_integer(v)) r->nthread = (int)json_integer_value(v);
		v = json_object_get(cfg, "ngpus");
		if (json_is_integer(v)) r->ngpus = (int)json_integer_value(v);
		json_num(json_object_get(cfg, "minimum_bytes"), &r->min_bytes);
		json_num(json_object_get(cfg, "maximum_bytes"), &r->max_bytes);
		if (json_is_array(devs) && json_array_size(devs)) {
			r->ranks = calloc(json_array_size(devs), sizeof(*r->ranks));
			if (!r->ranks)
				return CH_ERR_RUNTIME;
			json_array_foreach(devs, i, d) {
				struct hr_nt_rank *k = &r->ranks[r->nranks_listed];
				if (!json_is_object(d) || !json_is_string(json_object_get(d, "hostname"))) {
					hr_issue_add(issues, HR_ISSUE_SKIPPED, path, 0, 0,
						     "config.devices[%zu] has no 'hostname' string; skipped", i);
					continue;
				}
				k->rank = (int)json_integer_value(json_object_get(d, "rank"));
				k->group = (int)json_integer_value(json_object_get(d, "group"));
				k->pid = (long)json_integer_value(json_object_get(d, "pid"));
				k->device = (int)json_integer_value(json_object_get(d, "device"));
				copy_str(k->host, sizeof(k->host), json_string_value(json_object_get(d, "hostname")));
				copy_str(k->bus_id, sizeof(k->bus_id), json_string_value(json_object_get(d, "device_hex")));
				copy_str(k->name, sizeof(k->name), json_string_value(json_object_get(d, "device_info")));
				r->nranks_listed++;
			}
		}
	}
	json_array_foreach(res, i, v) {
		struct hr_nt_row rowv, *row = &rowv;
		const json_t *t;
		double root = -1;
		memset(row, 0, sizeof(*row));
		if (!json_is_object(v) || json_num(json_object_get(v, "size"), &row->bytes) ||
		    json_num(json_object_get(v, "count"), &row->count)) {
			hr_issue_add(issues, HR_ISSUE_SKIPPED, path, 0, 0,
				     "results[%zu] has no numeric 'size' and 'count'; skipped", i);
			continue;
		}
		copy_str(row->type, sizeof(row->type), json_string_value(json_object_get(v, "type")));
		copy_str(row->redop, sizeof(row->redop), json_string_value(json_object_get(v, "redop")));
		t = json_object_get(v, "root");
		if (json_is_string(t))
			root = strtod(json_string_value(t), NULL);
		else if (json_is_number(t))
			root = json_number_value(t);
		row->root = (int)root;
		if (json_cell(json_object_get(v, "out_of_place"), &row->oop) ||
		    json_cell(json_object_get(v, "in_place"), &row->ip) ||
		    (!row->oop.present && !row->ip.present)) {
			hr_issue_add(issues, HR_ISSUE_SKIPPED, path, 0, 0,
				     "results[%zu] (size %.0f): 'out_of_place'/'in_place' lack numeric time, alg_bw and bus_bw; skipped",
				     i, row->bytes);
			continue;
		}
		if (add_row(r, row))
			return CH_ERR_RUNTIME;
	}
	if (r->rows_merged)
		hr_issue_add(issues, HR_ISSUE_NOTE, path, 0, 0,
			     "%zu results print a size again: %zu sizes kept, each the mean of its prints (time, algbw, busbw; #wrong added)",
			     r->rows_merged, r->nrows);
	v = json_object_get(doc, "out_of_bounds");
	if (json_is_object(v) && json_is_integer(json_object_get(v, "count"))) {
		r->has_oob = 1;
		r->oob_count = (long)json_integer_value(json_object_get(v, "count"));
	}
	v = json_object_get(doc, "average_bus_bandwidth");
	if (json_is_object(v) && json_num(json_object_get(v, "bandwidth"), &r->avg_reported_gbps) == 0 &&
	    !isnan(r->avg_reported_gbps)) {
		r->has_avg = 1;
		r->avg_decimals = 6;
	}
	r->complete = r->has_avg;
	if (!r->nrows)
		hr_issue_add(issues, HR_ISSUE_TRUNCATED, path, 0, 0, "nccl-tests JSON has no usable results");
	else if (!r->has_avg)
		hr_issue_add(issues, HR_ISSUE_TRUNCATED, path, 0, 0,
			     "nccl-tests JSON has no 'average_bus_bandwidth': the run did not finish");
	v = json_object_get(doc, "errors");
	if (json_is_array(v) && json_array_size(v) && json_is_string(json_array_get(v, 0))) {
		r->n_errors = (int)json_array_size(v);
		copy_str(r->first_error, sizeof(r->first_error), json_string_value(json_array_get(v, 0)));
	}
	{
		char hint[48];
		collective_from_name(path, hint, sizeof(hint));
		if (!r->collective[0])
			hr_nt_infer_collective(r, hint, r->collective, sizeof(r->collective),
					       r->collective_from, sizeof(r->collective_from));
		else
			hr_nt_infer_collective(r, "", NULL, 0, NULL, 0);
	}
	return 0;
}

/* --------------------------------------------------------- computations */

double hr_nt_avg_busbw(const struct hr_nt_run *run)
{
	double sum = 0;
	size_t i, n = 0;
	for (i = 0; i < run->nrows; i++) {
		const struct hr_nt_row *r = &run->rows[i];
		size_t w = r->reps > 1 ? (size_t)r->reps : 1; /* a merged row weighs its prints */
		if (r->oop.present && !isnan(r->oop.busbw_gbps)) {
			sum += r->oop.busbw_gbps * (double)w;
			n += w;
		}
		if (r->ip.present && !isnan(r->ip.busbw_gbps)) {
			sum += r->ip.busbw_gbps * (double)w;
			n += w;
		}
	}
	return n ? sum / (double)n : NAN;
}

double hr_nt_avg_tolerance(const struct hr_nt_run *run)
{
	return 0.5 * pow(10, -run->cell_decimals) + 0.5 * pow(10, -run->avg_decimals);
}

double hr_nt_large_busbw(const struct hr_nt_run *run, double *bytes)
{
	const struct hr_nt_row *best = NULL;
	size_t i;
	for (i = 0; i < run->nrows; i++)
		if (!best || run->rows[i].bytes >= best->bytes)
			best = &run->rows[i];
	if (bytes)
		*bytes = best ? best->bytes : NAN;
	if (!best)
		return NAN;
	return best->oop.present ? best->oop.busbw_gbps : best->ip.busbw_gbps;
}

double hr_nt_wrong_total(const struct hr_nt_run *run)
{
	double sum = 0;
	size_t i;
	if (run->format == HR_NT_FMT_ERROR)
		return run->has_oob ? (double)run->oob_count : 0;
	for (i = 0; i < run->nrows; i++) {
		if (run->rows[i].oop.wrong > 0)
			sum += run->rows[i].oop.wrong;
		if (run->rows[i].ip.wrong > 0)
			sum += run->rows[i].ip.wrong;
	}
	if (sum == 0 && run->has_oob && run->oob_count > 0)
		sum = (double)run->oob_count;
	return sum;
}

int hr_nt_nranks(const struct hr_nt_run *run)
{
	if (run->nranks_listed)
		return run->nranks_listed;
	return run->nthread * run->ngpus;
}

void hr_nt_log_release(struct hr_nt_log *l)
{
	size_t i;
	for (i = 0; i < l->nruns; i++) {
		free(l->runs[i].rows);
		free(l->runs[i].row_index);
		free(l->runs[i].ranks);
	}
	free(l->runs);
	free(l->path);
	memset(l, 0, sizeof(*l));
}
