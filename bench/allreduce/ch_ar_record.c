/*
 * ch_ar_record.c - allreduce_bw's record on rank 0: a sweep's rows and
 * tables, its object in the result file, the analysis after the phases (see ch_ar_run.h;
 * the sweep's files: ch_ar_run_int.h).
 */
#include <mpi.h>

#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/allreduce/ch_ar_analysis.h"
#include "comm/ch_ar_pattern.h"
#include "bench/allreduce/ch_ar_plan.h"
#include "bench/allreduce/ch_ar_run_int.h"
#include "bench/allreduce/ch_ar_table.h"
#include "comm/ch_comm.h"
#include "base/ch_common.h"
#include "bench/common/ch_opts.h"
#include "base/ch_stats.h"

/* "0-3", "0,2,4-5" */
static void format_ranks(const int *r, int n, char *buf, size_t len)
{
	int i = 0;
	buf[0] = '\0';
	while (i < n) {
		int j = i;
		size_t l = strlen(buf);
		while (j + 1 < n && r[j + 1] == r[j] + 1)
			j++;
		if (j > i)
			snprintf(buf + l, len - l, "%s%d-%d", l ? "," : "", r[i], r[j]);
		else
			snprintf(buf + l, len - l, "%s%d", l ? "," : "", r[i]);
		i = j + 1;
	}
}

json_t *stats_json_us(const double *st)
{
	return json_pack("{s:I, s:f, s:f, s:f, s:f, s:f, s:f}", "n", (json_int_t)st[0],
			 "min", st[1] * 1e6, "median", st[2] * 1e6, "mean", st[3] * 1e6,
			 "p95", st[4] * 1e6, "max", st[5] * 1e6, "cv", st[6]);
}

/* ------------------------------------------------------------- rank 0 side */

static json_t *int_array(const int *v, int n)
{
	json_t *a = json_array();
	int i;
	for (i = 0; i < n; i++)
		json_array_append_new(a, json_integer(v[i]));
	return a;
}

void begin_sweep(struct ctx *c, struct sweep *sw, const struct ch_ar_group *g, int a, int live)
{
	char ranks[256], nodes[256] = "";
	json_t *jn = json_array();
	FILE *f;
	int i;

	memset(sw, 0, sizeof(*sw));
	sw->g = g;
	for (i = 0; i < g->nnodes; i++) {
		json_array_append_new(jn, json_string(c->node_names[g->nodes[i]]));
		snprintf(nodes + strlen(nodes), sizeof(nodes) - strlen(nodes), "%s%s", i ? "," : "",
			 c->node_names[g->nodes[i]]);
	}
	sw->rows = json_array();
	sw->obj = json_pack("{s:s, s:s, s:o, s:o, s:i, s:s, s:s, s:s, s:O, s:f, s:f, s:i}",
			    "group_kind", ch_ar_kind_names[g->kind], "group_name", g->name,
			    "ranks", int_array(g->ranks, g->nranks), "nodes", jn, "nranks", g->nranks,
			    "algo", c->labels[a], "algo_requested", c->o->algos[a],
			    "algo_detail", ch_comm_algo_detail(c->be, c->o->algos[a]), "rows", sw->rows,
			    "avg_busbw_gbps", 0.0, "large_msg_busbw_gbps", 0.0, "oob_count", 0);
	json_decref(sw->rows); /* the sweep object holds it; sw->rows stays borrowed */
	ch_ar_wd_lock(c->w);
	json_array_append_new(c->sweeps, sw->obj);
	ch_ar_wd_unlock(c->w);
	sw->rankbuf = open_memstream(&sw->ranktext, &sw->ranklen);
	if (!live)
		sw->buf = open_memstream(&sw->text, &sw->textlen);
	f = live ? stdout : sw->buf;
	format_ranks(g->ranks, g->nranks, ranks, sizeof(ranks));
	if (f) {
		fprintf(f, "#\n# Group %s (%s: %d rank%s %s on %s), algorithm %s: %s\n#\n", g->name,
			ch_ar_kind_names[g->kind], g->nranks, g->nranks == 1 ? "" : "s", ranks, nodes,
			c->labels[a], ch_comm_algo_detail(c->be, c->o->algos[a]));
		ch_ar_table_header(f);
		fflush(f);
	}
}

/* The row of group @sw->g at one size: cells and per-rank spread from the
 * gathered records (@allrec: REC_N doubles per world rank). */
static void row_compute(struct ctx *c, const struct sweep *sw, const double *allrec, int a,
			const struct ch_ar_size *sz, struct row *rw)
{
	const struct ch_ar_group *g = sw->g;
	int i, p;

	memset(rw, 0, sizeof(*rw));
	rw->root = (const struct rec *)(allrec + (size_t)g->ranks[0] * REC_N);
	rw->factor = ch_comm_busbw_factor(g->nranks);
	rw->own_us = xmalloc_or_abort(c, (size_t)g->nranks * sizeof(double));
	rw->eff = ch_comm_algo_effective(c->be, c->o->algos[a], sz->count, g->nranks);
	for (p = 0; p < 2; p++) {
		double mean = rw->root->loop[p];
		rw->cell[p].time_us = mean * 1e6;
		rw->cell[p].algbw_gbps = ch_comm_algbw_gbps(sz->bytes, mean);
		rw->cell[p].busbw_gbps = rw->cell[p].algbw_gbps * rw->factor; /* 2(n-1)/n: nccl-tests doc/PERFORMANCE.md */
		rw->cell[p].wrong = rw->root->wrong[p] < 0 ? -1 : (long long)rw->root->wrong[p];
	}
	for (i = 0; i < g->nranks; i++) {
		const struct rec *rr = (const struct rec *)(allrec + (size_t)g->ranks[i] * REC_N);
		rw->own_us[i] = (rr->own[0] + rr->own[1]) / 2 * 1e6;
	}
	ch_ar_rank_spread(rw->own_us, g->nranks, &rw->slow, &rw->spread, &rw->excess);
}

/* The row into the result document (the sweep's headline figures updated). */
static void row_json(struct ctx *c, struct sweep *sw, const struct row *rw, const double *allrec,
		     const struct ch_ar_size *sz)
{
	const struct ch_ar_group *g = sw->g;
	json_t *row, *pr = json_array(), *pc = json_array(), *place[2];
	int i, p;

	for (p = 0; p < 2; p++)
		place[p] = json_pack("{s:f, s:o, s:f, s:f, s:o}", "loop_time_us", rw->root->loop[p] * 1e6,
				     "time_us", stats_json_us(rw->root->stats[p]),
				     "algbw_gbps", rw->cell[p].algbw_gbps, "busbw_gbps", rw->cell[p].busbw_gbps,
				     "wrong", rw->cell[p].wrong < 0 ? json_null() : json_integer(rw->cell[p].wrong));
	for (i = 0; i < g->nranks; i++) {
		const struct rec *rr = (const struct rec *)(allrec + (size_t)g->ranks[i] * REC_N);
		json_array_append_new(pr, json_real(rw->own_us[i]));
		json_array_append_new(pc, json_real((rr->call[0] + rr->call[1]) / 2 * 1e6));
	}
	row = json_pack("{s:I, s:I, s:s, s:s, s:i, s:i, s:f, s:o, s:o, s:o, s:o, s:i, s:f, s:f}",
			"bytes", (json_int_t)sz->bytes, "count", (json_int_t)sz->count,
			"dtype", ch_dtype_comm_name(c->o->dtype), "redop", ch_comm_redop_names[c->o->op], "root", -1,
			"iterations", (int)rw->root->iters, "busbw_factor", rw->factor,
			"out_of_place", place[0], "in_place", place[1],
			"per_rank_mean_us", pr, "per_rank_call_mean_us", pc,
			"slowest_rank", g->ranks[rw->slow], "rank_spread_pct", rw->spread,
			"slowest_excess_pct", rw->excess);
	if (rw->eff)
		json_object_set_new(row, "algo_effective", json_string(rw->eff));
	ch_ar_wd_lock(c->w);
	json_array_append_new(sw->rows, row);
	json_object_set_new(sw->obj, "avg_busbw_gbps", json_real(sw->busbw_sum / (double)sw->busbw_n));
	json_object_set_new(sw->obj, "large_msg_busbw_gbps", json_real(sw->large_busbw));
	json_object_set_new(sw->obj, "oob_count", json_integer(sw->oob));
	ch_ar_wd_unlock(c->w);
}

/* The row into the table (live or buffered) and the per-rank lines. */
static void row_table(struct ctx *c, struct sweep *sw, const struct row *rw, const struct ch_ar_size *sz,
		      int live)
{
	const struct ch_ar_group *g = sw->g;

	ch_ar_table_row(live ? stdout : sw->buf, sz->bytes, sz->count, ch_dtype_comm_name(c->o->dtype),
			ch_comm_redop_names[c->o->op], -1, &rw->cell[0], &rw->cell[1]);
	if (live)
		fflush(stdout);
	if (g->nranks >= 2 && sw->rankbuf)
		fprintf(sw->rankbuf, "# %12llu  %12d  %+16.1f%%  %19.1f%%\n", (unsigned long long)sz->bytes,
			g->ranks[rw->slow], rw->excess, rw->spread);
	if (rw->eff && strlen(sw->eff) < sizeof(sw->eff) - 24)
		snprintf(sw->eff + strlen(sw->eff), sizeof(sw->eff) - strlen(sw->eff), "%s%llu",
			 sw->eff[0] ? ", " : "", (unsigned long long)sz->bytes);
}

/* The row's figures into the sweep's and the run's totals; the per-rank
 * times kept for the straggler analysis (c->rows takes rw->own_us). */
static void row_account(struct ctx *c, struct sweep *sw, struct row *rw, const struct ch_ar_size *sz)
{
	int p;

	for (p = 0; p < 2; p++) {
		sw->busbw_sum += rw->cell[p].busbw_gbps;
		sw->busbw_n++;
		if (rw->cell[p].wrong > 0) {
			sw->oob++;
			c->wrong_total += (uint64_t)rw->cell[p].wrong;
		}
	}
	sw->large_busbw = rw->cell[0].busbw_gbps;
	sw->large_bytes = sz->bytes;
}

static void keep_rank_row(struct ctx *c, const struct ch_ar_group *g, struct row *rw)
{
	if (g->nranks < 2) {
		free(rw->own_us);
		rw->own_us = NULL;
		return;
	}
	c->rows = grow_or_abort(c, c->rows, c->nrows, &c->caprows, 64, sizeof(*c->rows));
	c->rows[c->nrows].nranks = g->nranks;
	c->rows[c->nrows].ranks = g->ranks;
	c->rows[c->nrows].own_us = rw->own_us;
	c->nrows++;
	rw->own_us = NULL;
}

/* Index of (group @g, algorithm @a, size @s) in the phase's pfig / prow. */
size_t cell_index(const struct ctx *c, int g, int a, int s)
{
	return ((size_t)g * (size_t)c->o->nalgos + (size_t)a) * (size_t)c->plan.nsizes + (size_t)s;
}

/* The row's algbw figures for the confirmation: loop time and median period */
static void row_figures(const struct row *rw, const struct ch_ar_size *sz, double *fig)
{
	int p;
	for (p = 0; p < 2; p++) {
		double med = rw->root->stats[p][2];
		fig[p * 2] = rw->cell[p].algbw_gbps;
		fig[p * 2 + 1] = med > 0 ? ch_comm_algbw_gbps(sz->bytes, med) : NAN;
	}
}

/* One size of a sweep: measure's records -> a row -> JSON and table; its
 * figures and row object kept for the confirmation (@g, @s: indices). */
void add_row(struct ctx *c, struct sweep *sw, const double *allrec, int g, int a, int s,
		    const struct ch_ar_size *sz, int live)
{
	struct row rw;

	row_compute(c, sw, allrec, a, sz, &rw);
	row_account(c, sw, &rw, sz);
	row_json(c, sw, &rw, allrec, sz);
	row_table(c, sw, &rw, sz, live);
	if (c->pfig) {
		row_figures(&rw, sz, c->pfig + cell_index(c, g, a, s) * 4);
		c->prow[cell_index(c, g, a, s)] = json_array_get(sw->rows, json_array_size(sw->rows) - 1);
	}
	keep_rank_row(c, sw->g, &rw);
}

void end_sweep(struct ctx *c, struct sweep *sw, int a, int live)
{
	const struct ch_ar_group *g = sw->g;
	const char *eff_algo = ch_comm_algo_effective(c->be, c->o->algos[a], 0, 2);

	if (!live && sw->buf) {
		fclose(sw->buf);
		sw->buf = NULL;
		if (sw->text)
			fwrite(sw->text, 1, sw->textlen, stdout);
	}
	ch_ar_table_footer(stdout, sw->oob, sw->busbw_n ? sw->busbw_sum / (double)sw->busbw_n : 0.0);
	if (sw->rankbuf) {
		fclose(sw->rankbuf);
		sw->rankbuf = NULL;
		if (!c->quiet && g->nranks >= 2 && sw->ranklen) {
			printf("# Per-rank time: mean over out-of-place and in-place iterations of each rank's own\n"
			       "# time (the iteration period minus its wait for later ranks); per size, the\n"
			       "# slowest rank, its excess over the median of the others, and max-min over median:\n");
			printf("# %12s  %12s  %17s  %20s\n", "size (B)", "slowest rank", "excess", "spread across ranks");
			fwrite(sw->ranktext, 1, sw->ranklen, stdout);
		}
	}
	if (sw->eff[0] && !c->quiet)
		printf("# note: %s ran %s at %s bytes (Open MPI's ring does so when count < ranks)\n",
		       c->labels[a], eff_algo ? eff_algo : "another algorithm", sw->eff);
	fflush(stdout);
	free(sw->text);
	free(sw->ranktext);
	sw->text = sw->ranktext = NULL;
	/* headline of node and pair groups, for the group analysis */
	if (g->kind == CH_AR_KIND_NODE || g->kind == CH_AR_KIND_PAIR) {
		c->gbw = grow_or_abort(c, c->gbw, c->ngbw, &c->capgbw, 32, sizeof(*c->gbw));
		c->gbw[c->ngbw].kind = g->kind;
		c->gbw[c->ngbw].name = g->name;
		c->gbw[c->ngbw].algo = c->labels[a];
		c->gbw[c->ngbw].busbw_gbps = sw->large_busbw;
		c->gbw[c->ngbw].nnodes = g->nnodes;
		c->gbw[c->ngbw].nodes = g->nodes;
		c->ngbw++;
	}
	/* --min-busbw: world groups (or every group when the world is not measured) */
	if (c->o->min_busbw_gbps >= 0 && (g->kind == CH_AR_KIND_WORLD || !(c->o->groups & CH_AR_GROUPS_WORLD))) {
		int bad = sw->large_busbw < c->o->min_busbw_gbps;
		printf("# --min-busbw %g GB/s: %s, group %s: out-of-place busbw %.4g GB/s at %llu bytes %s\n",
		       c->o->min_busbw_gbps, c->labels[a], g->name, sw->large_busbw,
		       (unsigned long long)sw->large_bytes, bad ? "FAILED" : "OK");
		if (bad && !c->fail_busbw) {
			c->fail_busbw = 1;
			snprintf(c->fail_reason, sizeof(c->fail_reason),
				 "busbw %.4g GB/s (%s, group %s, %llu bytes) is below --min-busbw %g",
				 sw->large_busbw, c->labels[a], g->name, (unsigned long long)sw->large_bytes,
				 c->o->min_busbw_gbps);
		}
	}
	fflush(stdout);
}

/* ------------------------------------------------------- analysis (rank 0) */

void analyse(struct ctx *c)
{
	struct ch_ar_straggler *st = NULL;
	struct ch_ar_group_flag *fl = NULL;
	struct ch_ar_suspect *su = NULL;
	json_t *jst = json_array(), *jfl = json_array(), *jsu = json_array();
	int nst, nfl, nsu, i, groups = c->ngbw > 0;

	st = calloc((size_t)c->size, sizeof(*st));
	fl = calloc((size_t)(c->ngbw > 0 ? c->ngbw : 1), sizeof(*fl));
	su = calloc((size_t)c->nnodes, sizeof(*su));
	if (!st || !fl || !su)
		ch_ar_world_abort(c->w, CH_ERR_RUNTIME, "out of memory");
	nst = ch_ar_find_stragglers(c->rows, c->nrows, c->size, st, c->size);
	if (nst < 0)
		ch_ar_world_abort(c->w, CH_ERR_RUNTIME, "out of memory");
	nfl = ch_ar_flag_groups(c->gbw, c->ngbw, CH_AR_FLAG_BELOW_PCT, fl, c->ngbw);
	nsu = ch_ar_suspect_nodes(c->gbw, c->ngbw, fl, nfl, c->nnodes, su, c->nnodes);
	if (nsu < 0)
		ch_ar_world_abort(c->w, CH_ERR_RUNTIME, "out of memory");

	printf("#\n# Stragglers (slowest rank of at least %.0f%% of its rows, by a median of %.0f%% or more):",
	       CH_AR_STRAGGLER_MIN_FRACTION * 100, CH_AR_STRAGGLER_MIN_EXCESS_PCT);
	printf(nst ? "\n" : " none\n");
	for (i = 0; i < nst; i++) {
		const struct ch_world_rank *ri = rank_info(c, st[i].rank);
		printf("#   rank %d (host '%s', local rank %d, node %s): slowest in %d of %d rows, median excess %+.1f%%\n",
		       st[i].rank, ri->host, ri->local_rank, c->node_names[c->node_of[st[i].rank]],
		       st[i].slowest_rows, st[i].rows, st[i].excess_pct);
		json_array_append_new(jst, json_pack("{s:i, s:s, s:s, s:i, s:i, s:f, s:f}", "rank", st[i].rank,
			"host", ri->host, "node", c->node_names[c->node_of[st[i].rank]], "rows", st[i].rows,
			"slowest_rows", st[i].slowest_rows, "slowest_fraction", st[i].slowest_fraction,
			"excess_pct", st[i].excess_pct));
	}
	if (groups) {
		printf("# Slow groups (large-message busbw %.0f%% or more below the median of the other groups of their kind):",
		       CH_AR_FLAG_BELOW_PCT);
		printf(nfl ? "\n" : " none\n");
		for (i = 0; i < nfl; i++) {
			const struct ch_ar_group_bw *g = &c->gbw[fl[i].index];
			printf("#   %s (%s): %.4g GB/s against %.4g GB/s, %.1f%% below\n", g->name, g->algo,
			       fl[i].busbw_gbps, fl[i].ref_gbps, fl[i].pct_below);
			json_array_append_new(jfl, json_pack("{s:s, s:s, s:s, s:f, s:f, s:f}", "group_name", g->name,
				"group_kind", ch_ar_kind_names[g->kind], "algo", g->algo, "busbw_gbps", fl[i].busbw_gbps,
				"kind_median_gbps", fl[i].ref_gbps, "pct_below", fl[i].pct_below));
		}
		printf("# Suspect nodes:");
		printf(nsu ? "\n" : " none\n");
		for (i = 0; i < nsu; i++) {
			printf("#   %s: %s\n", c->node_names[su[i].node], su[i].reason);
			json_array_append_new(jsu, json_pack("{s:s, s:i, s:s}", "node", c->node_names[su[i].node],
				"node_index", su[i].node, "reason", su[i].reason));
		}
	}
	ch_ar_wd_lock(c->w);
	json_object_set_new(c->results, "stragglers", jst);
	json_object_set_new(c->results, "group_flags", jfl);
	json_object_set_new(c->results, "suspect_nodes", jsu);
	json_object_set_new(c->results, "wrong_total", json_integer((json_int_t)c->wrong_total));
	ch_ar_wd_unlock(c->w);
	free(st);
	free(fl);
	free(su);
}

/* Scaling points, one line per algorithm (the reporter fits the model). */
void print_scaling(struct ctx *c)
{
	size_t i, n = json_array_size(c->sweeps);
	int a, any = 0;

	for (a = 0; a < c->o->nalgos; a++) {
		int first = 1;
		for (i = 0; i < n; i++) {
			json_t *sw = json_array_get(c->sweeps, i);
			if (strcmp(json_string_value(json_object_get(sw, "group_kind")), "scaling") ||
			    strcmp(json_string_value(json_object_get(sw, "algo")), c->labels[a]))
				continue;
			if (!any)
				printf("#\n# Scaling points (out-of-place busbw at the largest size):\n");
			any = 1;
			printf("%s%d ranks %.4g GB/s", first ? "#   " : ", ",
			       (int)json_integer_value(json_object_get(sw, "nranks")),
			       json_real_value(json_object_get(sw, "large_msg_busbw_gbps")));
			if (first)
				first = 0;
		}
		if (!first)
			printf(" (%s)\n", c->labels[a]);
	}
}

/* ------------------------------------------------------------------- main */

/* The thread level MPI provided when it started (struct ch_world's
 * thread_level): "single", "funneled", "serialized" or "multiple"; null
 * without MPI (-g N without a launcher). */
static json_t *mpi_thread_level(const struct ctx *c)
{
	int level = ch_ar_world_base(c->w)->thread_level;

	if (!ch_ar_world_base(c->w)->active || level < 0)
		return json_null();
	return json_string(level == MPI_THREAD_SINGLE ? "single" : level == MPI_THREAD_FUNNELED ? "funneled" :
			   level == MPI_THREAD_SERIALIZED ? "serialized" : "multiple");
}

void results_skeleton(struct ctx *c)
{
	const struct ch_ar_opts *o = c->o;
	json_t *r = c->results, *algos = json_array(), *sizes = json_array(), *groups = json_array();
	json_t *notes = json_array(), *nodes = json_array();
	int i;

	for (i = 0; i < o->nalgos; i++)
		json_array_append_new(algos, json_pack("{s:s, s:s, s:s}", "requested", o->algos[i],
						       "label", c->labels[i], "detail", ch_comm_algo_detail(c->be, o->algos[i])));
	for (i = 0; i < c->plan.nsizes; i++)
		json_array_append_new(sizes, json_integer((json_int_t)c->plan.sizes[i].bytes));
	for (i = 0; ch_ar_groups_names[i]; i++)
		if (o->groups & (1u << i))
			json_array_append_new(groups, json_string(ch_ar_groups_names[i]));
	for (i = 0; i < c->plan.nnotes; i++)
		json_array_append_new(notes, json_string(c->plan.notes[i]));
	for (i = 0; i < c->nnodes; i++)
		json_array_append_new(nodes, json_string(c->node_names[i]));
	json_object_set_new(r, "backend", json_string(c->be->name));
	json_object_set_new(r, "memory", json_string(c->be->memory));
	json_object_set_new(r, "launch", json_string(c->gmode ? "single-process" : "mpi"));
	json_object_set_new(r, "mpi_thread_level", mpi_thread_level(c));
	json_object_set_new(r, "dtype", json_string(ch_dtype_comm_name(o->dtype)));
	json_object_set_new(r, "op", json_string(ch_comm_redop_names[o->op]));
	json_object_set_new(r, "busbw_factor_formula", json_string("2(n-1)/n"));
	json_object_set_new(r, "busbw_factor_source", json_string("nccl-tests doc/PERFORMANCE.md"));
	json_object_set_new(r, "time_statistic", json_string(
		"table time and algbw/busbw (loop_time_us): the timed loop's time / iterations averaged over the group's ranks, the loop timed as a whole (nccl-tests' -a 1); time_us: statistics of the per-iteration period from a second pass of the same iterations with every call timed"));
	json_object_set_new(r, "iterations", json_pack("{s:s, s:i, s:i, s:o, s:f, s:i}", "mode",
		o->common.min_time_sec >= 0 ? "adaptive" : o->iters_given ? "fixed" : "default",
		"iters", o->iters, "warmup", o->warmup,
		"min_time_sec", o->common.min_time_sec >= 0 ? json_real(o->common.min_time_sec) : json_null(),
		"default_budget_sec", CH_AR_DEFAULT_BUDGET_SEC, "min_iters", CH_AR_ADAPTIVE_MIN_ITERS));
	json_object_set_new(r, "check", json_boolean(o->check));
	json_object_set_new(r, "sizes_bytes", sizes);
	json_object_set_new(r, "max_bytes_requested", json_integer((json_int_t)o->max_bytes));
	json_object_set_new(r, "max_bytes_reduced", c->reduced ? json_integer((json_int_t)c->reduced) : json_null());
	json_object_set_new(r, "algos", algos);
	json_object_set_new(r, "groups", groups);
	json_object_set_new(r, "scaling", json_boolean(o->scaling));
	json_object_set_new(r, "nodes", nodes);
	json_object_set_new(r, "plan_notes", notes);
	json_object_set_new(r, "timeout_sec", json_real(o->timeout_sec));
	json_object_set_new(r, "min_busbw_gbps", o->min_busbw_gbps >= 0 ? json_real(o->min_busbw_gbps) : json_null());
	json_object_set_new(r, "inject_delay", o->delay_rank >= 0 ?
		json_pack("{s:i, s:I, s:I}", "rank", o->delay_rank, "usec", (json_int_t)o->delay_us,
			  "from_bytes", (json_int_t)o->delay_min_bytes) : json_null());
	json_object_set_new(r, "confirm", json_pack("{s:b, s:f, s:f, s:s, s:i}", "enabled", o->confirm,
		"dip_ratio", CH_AR_CONFIRM_DIP, "gap_ratio", CH_AR_CONFIRM_GAP, "method",
		"at the end of each phase, every cell measured again whose algbw (of the loop time or of the median period) is below both neighbours' and below dip_ratio x their geometric mean (the largest size: below dip_ratio x the size before), or whose out-of-place and in-place figures differ, the lower below gap_ratio x the higher, and the largest size of every sweep always (why \"largest\": the figure compared with the fleet); both placements of the size are measured, with the first measurement's iterations, and the flagged cells get \"confirm\"",
		"cells", 0));
	json_object_set_new(r, "thresholds", json_pack("{s:f, s:i, s:f, s:f}",
		"straggler_min_fraction", CH_AR_STRAGGLER_MIN_FRACTION,
		"straggler_min_rows", CH_AR_STRAGGLER_MIN_ROWS,
		"straggler_min_excess_pct", CH_AR_STRAGGLER_MIN_EXCESS_PCT,
		"group_flag_below_pct", CH_AR_FLAG_BELOW_PCT));
	c->sweeps = json_array();
	json_object_set_new(r, "sweeps", c->sweeps);
	json_object_set_new(r, "stragglers", json_array());
	json_object_set_new(r, "group_flags", json_array());
	json_object_set_new(r, "suspect_nodes", json_array());
	json_object_set_new(r, "wrong_total", json_integer(0));
}
