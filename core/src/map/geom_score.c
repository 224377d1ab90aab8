/* topoplace — geometric mapping, one search job's work: building a
 * variant's node and task partitions and scoring the variant (screened or
 * exactly, permutation, fold and blocked variants).  The scheduling is in
 * geom_search.c. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "map/geom_search.h"
#include "input/alloc_internal.h"
#include "pattern/pattern_internal.h"

/* ------------------------------------------------------------------------ */
/* Building partitions                                                       */

static int wsp_parts(const search *s, wsp *w);

int tp__geom_build_nodes(search *s, int i, wsp *w, double deadline)
{
	node_part *np = &s->np[i];
	if (wsp_parts(s, w))
		return TP_ENOMEM;
	int32_t *leaf = tp__malloc_array((size_t)s->nn, sizeof(int32_t));
	if (!leaf)
		return TP_ENOMEM;
	for (int32_t j = 0; j < s->nn; j++)
		w->buf[j] = tp__pointset_pt(&s->nodes, (uint32_t)j,
					    (uint32_t)s->used[alloc_of(s, j)]);
	/* with equal slots the tree is checked against the predicted one
	 * instead of stored */
	tree t = { .expect = s->predicted >= 0 ? &s->trees[s->predicted] : NULL };
	/* the leaves' point ids, made allocation indices after: one by one
	 * as the partition reaches them, each would wait on a cache miss */
	tp__part_side side = { &s->nodes, &np->so, w->hist, w->tmp, deadline };
	tp__node_cuts cuts = {
		.k = s->o->parts_per_level,
		.split = tp__geom_thread_count(s->o) > 1,
		.tr = &t,
		.leaf_node = leaf,
	};
	int rc = tp__part_nodes(&side, &cuts, w->buf, s->nn);
	int32_t nleaves = cuts.nleaves;
	if (rc) {
		free(leaf);
		free(t.v);
		return rc;
	}
	for (int32_t j = 0; s->ids && j < nleaves; j++)
		leaf[j] = s->ids[leaf[j]];
	pthread_mutex_lock(&s->mu);
	int tr = tp__geom_add_tree(s, &t);
	if (tr >= 0) {
		s->tree_mismatch |= tr != s->predicted;
		np->tree = tr;
		np->leaf_node = leaf;
		np->nleaves = nleaves;
	}
	pthread_mutex_unlock(&s->mu);
	if (tr < 0) {
		free(leaf);
		free(t.v);
		return TP_ENOMEM;
	}
	return 0;
}

int tp__geom_build_tasks(search *s, int idx, wsp *w, double deadline)
{
	int32_t n = s->g->ntasks;
	int ti = idx / s->tp_stride, tr = idx % s->tp_stride;
	if (wsp_parts(s, w))
		return TP_ENOMEM;
	int32_t *arr = tp__malloc_array((size_t)n, sizeof(int32_t));
	if (!arr)
		return TP_ENOMEM;
	for (int32_t t = 0; !s->tasks.grid && t < n; t++)
		w->buf[t] = tp__pointset_pt(&s->tasks, (uint32_t)t, 1);
	/* equal slots: each task's place; else the task at each place */
	tp__task_order out = { s->slots_each > 0 ? arr : NULL,
			       s->slots_each > 0 ? NULL : arr };
	tp__part_side side = { &s->tasks, &s->tso[ti], w->hist, w->tmp, deadline };
	int rc = tp__part_tasks(&side, &s->trees[tr], w->buf, n, &out);
	if (rc) {
		free(arr);
		return rc;
	}
	pthread_mutex_lock(&s->mu);
	s->tp[idx].arr = arr;
	pthread_mutex_unlock(&s->mu);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Scoring                                                                   */

/* Screening score: bytes x hops over the edges of every stride-th task,
 * nodes found through the slot positions (equal slots per node). */
static double sample_score(const search *s, const int32_t *pos,
			   const node_part *np)
{
	const tp_graph *g = s->g;
	const tp_machine *m = s->a->m;
	const int32_t *node = s->a->node;
	int k = s->slots_each, nd = m->ndims;
	double sum = 0;
	for (int32_t u = 0; u < g->ntasks; u += s->stride) {
		const int *cu = &m->coords[(int64_t)node[np->leaf_node[pos[u] / k]] * nd];
		for (int64_t e = g->xadj[u]; e < g->xadj[u + 1]; e++) {
			int32_t v = g->adjncy[e];
			if (v < u)
				continue;   /* each undirected edge once */
			const int *cv = &m->coords[(int64_t)node[np->leaf_node[pos[v] / k]] * nd];
			sum += tp__graph_w(g, e) * tp__coord_dist(m, cu, cv);
		}
	}
	return sum;
}

/* map[t] for every task of a permutation variant whose nodes have unequal
 * slots: the leaves in order, each its node's share of arr (equal slots:
 * map_range_fill). */
static void perm_map(const search *s, const node_part *np, const int32_t *arr,
		     int32_t *map)
{
	int64_t at = 0;
	for (int32_t l = 0; l < np->nleaves; l++) {
		int32_t node = np->leaf_node[l];
		for (int k = 0; k < s->used[node]; k++)
			map[arr[at++]] = node;
	}
}

/* Room for router coordinates per task for an exact hop-bytes scoring, in
 * the worker's partition scratch (free between jobs), else NULL (scored
 * through the mapping).  A million tasks: 15 ms to score from them, 40 ms
 * through the mapping on two threads, whose three dependent loads per edge
 * end miss the cache. */
int *tp__geom_tc_room(const search *s, const wsp *w)
{
	int nd = s->a->m->ndims;
	int32_t n = s->g->ntasks;
	size_t room = (size_t)(n > s->nn ? n : s->nn) * sizeof(tp__pt);
	if (s->o->metric != TP_METRIC_HOP_BYTES || !w->tmp ||
	    (size_t)n * (size_t)nd * sizeof(int) > room)
		return NULL;
	return (int *)(void *)w->tmp;
}

/* Tasks [t0, t1) of a permutation variant: their nodes into map and, with
 * tc, their router coordinates into tc. */
struct map_range {
	const search *s;
	const node_part *np;
	const int32_t *arr;
	int32_t *map;
	int *tc;
	int32_t t0, t1;
};

/* Router coordinates of tasks [t0, t1) of map into tc. */
static void fill_tc(const search *s, const int32_t *map, int *tc, int32_t t0,
		    int32_t t1)
{
	const tp_alloc *a = s->a;
	size_t nd = (size_t)a->m->ndims;
	for (int32_t t = t0; t < t1; t++)
		memcpy(tc + (size_t)t * nd, a->m->coords + (size_t)a->node[map[t]] * nd,
		       sizeof(int) * nd);
}

static void map_range_fill(const struct map_range *r)
{
	for (int32_t t = r->t0; t < r->t1; t++)
		r->map[t] = r->np->leaf_node[r->arr[t] / r->s->slots_each];
	if (r->tc)
		fill_tc(r->s, r->map, r->tc, r->t0, r->t1);
}

static void *map_range_run(void *arg)
{
	map_range_fill(arg);
	return NULL;
}

/* From this many tasks, the first variant's mapping and coordinates are
 * written on two threads while nothing else runs (scoring_alone). */
#define PAR_MAP_TASKS (1 << 18)

/* map (and tc, when given) of a permutation variant, on two threads when
 * two is given and it pays. */
void tp__geom_variant_map(const search *s, const node_part *np, const int32_t *arr,
			int32_t *map, int *tc, bool two)
{
	int32_t n = s->g->ntasks;
	if (s->slots_each <= 0) {
		perm_map(s, np, arr, map);
		if (tc)
			fill_tc(s, map, tc, 0, n);
		return;
	}
	struct map_range lo = { s, np, arr, map, tc, 0, n }, hi = lo;
	pthread_t th;
	if (two && n >= PAR_MAP_TASKS) {
		lo.t1 = hi.t0 = n / 2;
		if (pthread_create(&th, NULL, map_range_run, &hi) == 0) {
			map_range_fill(&lo);
			pthread_join(th, NULL);
			return;
		}
		lo.t1 = n;
	}
	map_range_fill(&lo);
}

static bool scoring_alone(search *s)
{
	pthread_mutex_lock(&s->mu);
	bool alone = first_alone(s);
	pthread_mutex_unlock(&s->mu);
	return alone;
}

int tp__geom_wsp_scoring(const search *s, wsp *w)
{
	int32_t n = s->g->ntasks;
	if (!w->map && !(w->map = tp__malloc_array((size_t)n, sizeof(int32_t))))
		return TP_ENOMEM;
	if (s->o->metric != TP_METRIC_HOP_BYTES && !w->cws &&
	    tp_congestion_ws_create(&w->cws, s->a->m, NULL))
		return TP_ENOMEM;
	return 0;
}

/* Score map (w->map, or s->best_map itself when scoring alone) exactly and
 * keep it when it is the best so far (lowest score, ties to the lowest
 * variant); tc: its router coordinates per task, or NULL.  t0: when the
 * scoring began (the mapping's writing included). */
int tp__geom_exact_score(search *s, int v, wsp *w, const int32_t *map,
		       const int *tc, int threads, double t0)
{
	double score;
	if (s->o->metric == TP_METRIC_HOP_BYTES) {
		/* the bounded sum: a candidate cut off above the best so far
		 * could never win, ties included, so the result stays
		 * deterministic.  From per-task coordinates in scratch the
		 * worker already holds (fresh memory for them would cost more
		 * than they save), else through the map */
		pthread_mutex_lock(&s->mu);
		double bound = s->best_score;
		pthread_mutex_unlock(&s->mu);
		score = tc ? tp__hop_bytes_task_coords(s->g, s->a->m, tc, bound, threads)
		     : tp__hop_bytes_threads(s->g, s->a, map, bound, threads);
	} else {
		score = tp_metrics_score(s->g, s->a, map, s->o->metric, w->cws);
	}
	pthread_mutex_lock(&s->mu);
	double took = tp__now_ms() - t0;
	if (took > s->exact_ms) {
		s->exact_ms = took;
		if (s->stride > 1)   /* keep time for one finalist */
			s->stop_at = s->deadline - took;
	}
	if (score < s->best_score ||
	    (score == s->best_score && v < s->best_variant)) {
		s->best_score = score;
		s->best_variant = v;
		if (map != s->best_map)
			memcpy(s->best_map, map, sizeof(int32_t) * (size_t)s->g->ntasks);
	}
	pthread_mutex_unlock(&s->mu);
	return 0;
}

static int score_blocked(search *s, int v, wsp *w);

int tp__geom_score_variant(search *s, int v, wsp *w)
{
	if (is_blocked(s, v))
		return score_blocked(s, v, w);
	if (v >= s->nperm_var) {
		int rc = tp__geom_wsp_scoring(s, w);
		if (rc)
			return rc;
		double t0 = tp__now_ms();
		tp__geom_fold_map(s, &s->fold[v - s->nperm_var], w->map);
		int *tc = tp__geom_tc_room(s, w);
		if (tc)
			fill_tc(s, w->map, tc, 0, s->g->ntasks);
		return tp__geom_exact_score(s, v, w, w->map, tc, 1, t0);
	}
	int ti, ni;
	variant_parts(s, v, &ti, &ni);
	const node_part *np = &s->np[ni];
	const int32_t *arr = s->tp[ti * s->tp_stride + np->tree].arr;
	if (s->stride > 1) {
		/* each variant owns its slot: no lock needed */
		struct cand *c = &s->cand[v];
		c->sample = sample_score(s, arr, np);
		c->variant = v;
		c->done = true;
		/* under a budget the first one is also scored exactly, so
		 * that a whole result exists whenever the search stops */
		pthread_mutex_lock(&s->mu);
		c->exact = s->deadline < INFINITY && s->exact_ms == 0 &&
			   !s->exact_claimed;
		s->exact_claimed |= c->exact;
		pthread_mutex_unlock(&s->mu);
		if (!c->exact)
			return 0;
	}
	int rc = tp__geom_wsp_scoring(s, w);
	if (rc)
		return rc;
	/* alone: straight into the result, on both CPUs */
	bool alone = scoring_alone(s);
	int32_t *map = alone ? s->best_map : w->map;
	int *tc = tp__geom_tc_room(s, w);
	double t0 = tp__now_ms();
	tp__geom_variant_map(s, np, arr, map, tc, alone);
	return tp__geom_exact_score(s, v, w, map, tc, alone ? 2 : 1, t0);
}

/* Blocked variant v: its blocks cut as its base variant cuts tasks, onto
 * the base's node partition, leaf for leaf. */
static int score_blocked(search *s, int v, wsp *w)
{
	const tp_graph *g = s->g;
	const int *b = block_shape(s, v);
	int ti, ni;
	variant_parts(s, v, &ti, &ni);
	const node_part *np = &s->np[ni];
	/* its leaves one node each, as the rule for equal slots cuts them
	 * (bisection cuts a node count alike whatever the slots) */
	if (np->tree != s->predicted || np->nleaves != s->nn)
		return 0;
	int rc = wsp_parts(s, w);
	if (!rc)
		rc = tp__geom_wsp_scoring(s, w);
	if (rc)
		return rc;
	double t0 = tp__now_ms();
	int cg[3];
	for (int a = 0; a < 3; a++)
		cg[a] = g->grid[a] / b[a];
	int32_t nb = cg[0] * cg[1] * cg[2];
	pointset C;
	int32_t *pos = tp__malloc_array((size_t)nb, sizeof(int32_t));
	if (!pos || tp__pointset_grid(&C, cg, s->tasks.dims, s->torig)) {
		free(pos);
		return TP_ENOMEM;
	}
	struct len_memo memo = { .n = 0 };
	tree ct = { .rule_n = s->nn, .rule_w = 1, .rule_k = s->o->parts_per_level };
	ct.len = tp__geom_tree_len(s->nn, 1, ct.rule_k, &memo);
	tp__task_order out = { pos, NULL };
	tp__part_side side = { &C, &s->tso[ti], w->hist, w->tmp, INFINITY };
	rc = tp__part_tasks(&side, &ct, w->buf, nb, &out);
	tp__pointset_free(&C);
	if (rc) {
		free(pos);
		return rc;
	}
	int32_t *map = w->map;
	int at[3] = { 0, 0, 0 };
	for (int32_t t = 0; t < g->ntasks; t++) {
		int32_t c = at[0] / b[0] + cg[0] * (at[1] / b[1] + cg[1] * (at[2] / b[2]));
		map[t] = np->leaf_node[pos[c]];
		tp__grid_next(at, g->grid);
	}
	free(pos);
	int *tc = tp__geom_tc_room(s, w);
	if (tc)
		fill_tc(s, map, tc, 0, g->ntasks);
	return tp__geom_exact_score(s, v, w, map, tc, scoring_alone(s) ? 2 : 1, t0);
}

/* The partition buffers, on first use. */
static int wsp_parts(const search *s, wsp *w)
{
	if (w->buf)
		return 0;
	int32_t n = s->g->ntasks;
	size_t len = (size_t)(n > s->nn ? n : s->nn);
	size_t hl = tp__pointset_hist_len(&s->tasks), hn = tp__pointset_hist_len(&s->nodes);
	w->buf = tp__malloc_array(len, sizeof(tp__pt));
	w->tmp = tp__malloc_array(len, sizeof(tp__pt));
	w->hist = tp__malloc_array(hl > hn ? hl : hn, sizeof(uint64_t));
	if (w->buf && w->tmp && w->hist)
		return 0;
	free(w->buf);
	free(w->tmp);
	free(w->hist);
	w->buf = w->tmp = NULL;
	w->hist = NULL;
	return TP_ENOMEM;
}

void tp__geom_wsp_free(wsp *w)
{
	free(w->buf);
	free(w->tmp);
	free(w->hist);
	free(w->map);
	tp_congestion_ws_destroy(w->cws);
}
