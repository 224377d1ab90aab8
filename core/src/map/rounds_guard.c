/* topoplace — the rounds' guard of the lane refinement (rounds_guard.h).
 * Each task's rounds, summed as the time model sums them (the rounds sent
 * along each of its messages times that route's hops), are kept up to date
 * as tasks move; a move is allowed while every sum it changes stays within
 * the largest sum of the start.  A move changes the sums of the tasks it
 * moves (costed again) and of the tasks that send them rounds (by the
 * difference of one route each): a few dozen routes, beside the hundreds a
 * lane trial routes. */
#include <stdlib.h>

#include <topoplace/error.h>

#include "map/rounds_guard.h"
#include "pattern/pattern_internal.h"
#include "util/util_internal.h"

struct rounds_guard {
	int32_t nt;
	int64_t *out_off;        /* task u's rounds out: (out_v, out_r) */
	int32_t *out_v;
	double *out_r;
	int64_t *in_off;         /* rounds sent to task x: (in_v, in_r) */
	int32_t *in_v;
	double *in_r;
	double *sum;             /* per task: its rounds x hops */
	double cap;              /* the most a task may reach */
	rounds_hops_fn hops;
	void *arg;
	/* the last move asked about */
	int32_t stamp;
	int32_t *moved_at;       /* per task: stamp when moved, */
	int32_t *moved_to;       /* and where to */
	int32_t *delta_at;       /* per task: stamp of its delta */
	double *delta;
	int32_t *pend;           /* tasks whose sums the move changes */
	double *pend_sum;        /* and their sums after it */
	int64_t npend, pend_cap;
	bool allowed;
};

void tp__rounds_guard_free(rounds_guard *rg)
{
	if (!rg)
		return;
	free(rg->out_off);
	free(rg->out_v);
	free(rg->out_r);
	free(rg->in_off);
	free(rg->in_v);
	free(rg->in_r);
	free(rg->sum);
	free(rg->moved_at);
	free(rg->moved_to);
	free(rg->delta_at);
	free(rg->delta);
	free(rg->pend);
	free(rg->pend_sum);
	free(rg);
}

/* The hops from node i to node j (0 on one node). */
static int hops_of(const rounds_guard *rg, int32_t i, int32_t j, int *rc)
{
	if (i == j)
		return 0;
	int h = rg->hops(rg->arg, i, j);
	if (h < 0) {
		*rc = h;
		return 0;
	}
	return h;
}

/* Room for one more pending sum. */
static bool pend_room(rounds_guard *rg)
{
	if (rg->npend < rg->pend_cap)
		return true;
	int64_t nc = rg->pend_cap ? 2 * rg->pend_cap : 64;
	int32_t *p = tp__realloc_array(rg->pend, (size_t)nc, sizeof *p);
	if (!p)
		return false;
	rg->pend = p;
	double *s = tp__realloc_array(rg->pend_sum, (size_t)nc, sizeof *s);
	if (!s)
		return false;
	rg->pend_sum = s;
	rg->pend_cap = nc;
	return true;
}

int tp__rounds_guard_new(const struct tp_graph *g, const int32_t *map,
			 rounds_hops_fn hops, void *arg, rounds_guard **out)
{
	*out = NULL;
	if (!g->rounds || g->ntasks < 2)
		return TP_OK;
	int32_t nt = g->ntasks;
	int64_t n = 0;
	for (int64_t e = 0; e < g->xadj[nt]; e++)
		n += tp__graph_rounds_exchange(g, e) > 0;
	if (n == 0)
		return TP_OK;
	rounds_guard *rg = tp__calloc(1, sizeof *rg);
	if (!rg)
		return TP_ENOMEM;
	rg->nt = nt;
	rg->hops = hops;
	rg->arg = arg;
	rg->out_off = tp__calloc((size_t)nt + 1, sizeof *rg->out_off);
	rg->in_off = tp__calloc((size_t)nt + 2, sizeof *rg->in_off);
	rg->out_v = tp__malloc_array((size_t)n, sizeof *rg->out_v);
	rg->out_r = tp__malloc_array((size_t)n, sizeof *rg->out_r);
	rg->in_v = tp__malloc_array((size_t)n, sizeof *rg->in_v);
	rg->in_r = tp__malloc_array((size_t)n, sizeof *rg->in_r);
	rg->sum = tp__calloc((size_t)nt, sizeof *rg->sum);
	rg->moved_at = tp__calloc((size_t)nt, sizeof *rg->moved_at);
	rg->moved_to = tp__calloc((size_t)nt, sizeof *rg->moved_to);
	rg->delta_at = tp__calloc((size_t)nt, sizeof *rg->delta_at);
	rg->delta = tp__calloc((size_t)nt, sizeof *rg->delta);
	if (!rg->out_off || !rg->in_off || !rg->out_v || !rg->out_r || !rg->in_v ||
	    !rg->in_r || !rg->sum || !rg->moved_at || !rg->moved_to ||
	    !rg->delta_at || !rg->delta) {
		tp__rounds_guard_free(rg);
		return TP_ENOMEM;
	}
	/* out by task as the graph lists them; in counted, then placed */
	int64_t k = 0;
	for (int32_t u = 0; u < nt; u++) {
		for (int64_t e = g->xadj[u]; e < g->xadj[u + 1]; e++) {
			double r = tp__graph_rounds_exchange(g, e);
			if (!(r > 0))
				continue;
			rg->out_v[k] = g->adjncy[e];
			rg->out_r[k++] = r;
			rg->in_off[g->adjncy[e] + 2]++;
		}
		rg->out_off[u + 1] = k;
	}
	for (int32_t x = 0; x < nt; x++)
		rg->in_off[x + 2] += rg->in_off[x + 1];
	for (int32_t u = 0; u < nt; u++)
		for (int64_t j = rg->out_off[u]; j < rg->out_off[u + 1]; j++) {
			int64_t at = rg->in_off[rg->out_v[j] + 1]++;
			rg->in_v[at] = u;
			rg->in_r[at] = rg->out_r[j];
		}
	int rc = TP_OK;
	double most = 0;
	for (int32_t u = 0; u < nt && !rc; u++) {
		double s = 0;
		for (int64_t j = rg->out_off[u]; j < rg->out_off[u + 1]; j++)
			s += rg->out_r[j] * hops_of(rg, map[u], map[rg->out_v[j]], &rc);
		rg->sum[u] = s;
		most = s > most ? s : most;
	}
	if (rc) {
		tp__rounds_guard_free(rg);
		return rc;
	}
	/* the sums move by differences: room for their rounding */
	rg->cap = most * (1 + 1e-9);
	*out = rg;
	return TP_OK;
}

/* The next stamp; before it would wrap, the marks are cleared. */
static void next_stamp(rounds_guard *rg)
{
	if (rg->stamp == INT32_MAX) {
		for (int32_t t = 0; t < rg->nt; t++)
			rg->moved_at[t] = rg->delta_at[t] = 0;
		rg->stamp = 0;
	}
	rg->stamp++;
}

bool tp__rounds_guard_allows(rounds_guard *rg, const int32_t *map,
			     const int32_t *moved, const int32_t *to, int n,
			     int *rc)
{
	*rc = TP_OK;
	rg->allowed = false;
	rg->npend = 0;
	next_stamp(rg);
	int32_t st = rg->stamp;
	for (int k = 0; k < n; k++) {
		rg->moved_at[moved[k]] = st;
		rg->moved_to[moved[k]] = to[k];
	}
	/* the moved tasks, costed again where they go */
	for (int k = 0; k < n; k++) {
		int32_t x = moved[k];
		double s = 0;
		for (int64_t j = rg->out_off[x]; j < rg->out_off[x + 1]; j++) {
			int32_t v = rg->out_v[j];
			int32_t at = rg->moved_at[v] == st ? rg->moved_to[v] : map[v];
			s += rg->out_r[j] * hops_of(rg, to[k], at, rc);
		}
		if (*rc || s > rg->cap)
			return false;
		if (!pend_room(rg)) {
			*rc = TP_ENOMEM;
			return false;
		}
		rg->pend[rg->npend] = x;
		rg->pend_sum[rg->npend++] = s;
	}
	/* the tasks that send them rounds, by one route's difference each */
	int64_t first = rg->npend;
	for (int k = 0; k < n; k++) {
		int32_t x = moved[k];
		if (map[x] == to[k])
			continue;
		for (int64_t j = rg->in_off[x]; j < rg->in_off[x + 1]; j++) {
			int32_t v = rg->in_v[j];
			if (rg->moved_at[v] == st)
				continue;
			double d = rg->in_r[j] * (hops_of(rg, map[v], to[k], rc) -
						  hops_of(rg, map[v], map[x], rc));
			if (*rc)
				return false;
			if (rg->delta_at[v] != st) {
				if (!pend_room(rg)) {
					*rc = TP_ENOMEM;
					return false;
				}
				rg->delta_at[v] = st;
				rg->delta[v] = 0;
				rg->pend[rg->npend++] = v;
			}
			rg->delta[v] += d;
		}
	}
	for (int64_t k = first; k < rg->npend; k++) {
		int32_t v = rg->pend[k];
		rg->pend_sum[k] = rg->sum[v] + rg->delta[v];
		if (rg->pend_sum[k] > rg->cap)
			return false;
	}
	rg->allowed = true;
	return true;
}

void tp__rounds_guard_commit(rounds_guard *rg)
{
	if (!rg || !rg->allowed)
		return;
	for (int64_t k = 0; k < rg->npend; k++)
		rg->sum[rg->pend[k]] = rg->pend_sum[k];
	rg->allowed = false;
}
