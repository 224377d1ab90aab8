/* topoplace — the task graph: CSR construction from an edge list, accessors,
 * task coordinates.
 *
 * tp_graph_from_edges() builds the symmetric CSR in O(ntasks + nedges) time
 * with two stable counting passes and no comparison sort:
 *
 *   1. bucket every edge by its larger endpoint (hi), in input order;
 *   2. walk those buckets in increasing hi and scatter each edge into the
 *      bucket of its smaller endpoint (lo).  Each lo bucket is now sorted by
 *      hi, and equal pairs sit next to each other in input order;
 *   3. merge equal pairs (summing bytes in input order), count degrees;
 *   4. walk the unique pairs in (lo, hi) order and append hi to row lo and
 *      lo to row hi.  Row t receives its neighbours below t (as "hi") before
 *      those above t (as "lo"), each group in increasing order, so every row
 *      comes out sorted.
 *
 * Each undirected pair's weight is computed once, so both stored directions
 * carry bit-identical values and the result does not depend on anything but
 * the input order.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/util_internal.h"
#include "pattern/pattern_internal.h"

#define GRAPH_MAX_COORD_DIMS 6

static const char *what_or(const char *what)
{
	return what && *what ? what : "graph";
}

void tp_graph_destroy(tp_graph *g)
{
	if (!g)
		return;
	free(g->xadj);
	free(g->adjncy);
	free(g->weights);
	free(g->send);
	free(g->rounds);
	free(atomic_load(&g->shown_w));
	free(atomic_load(&g->shown_c));
	free(g->coords);
	free(g);
}

/* Check every edge before allocating anything large. */
static int check_edges(int32_t ntasks, int64_t nedges, const int32_t *u,
		       const int32_t *v, const double *bytes, const char *what,
		       tp_error *err)
{
	for (int64_t i = 0; i < nedges; i++) {
		int32_t a = u[i], b = v[i];
		if (a < 0 || a >= ntasks)
			return tp_error_set(err, TP_EINVAL,
					    "%s: edge %lld: task %ld does not exist (tasks: %ld)",
					    what, (long long)i, (long)a, (long)ntasks);
		if (b < 0 || b >= ntasks)
			return tp_error_set(err, TP_EINVAL,
					    "%s: edge %lld: task %ld does not exist (tasks: %ld)",
					    what, (long long)i, (long)b, (long)ntasks);
		if (a == b)
			return tp_error_set(err, TP_EINVAL,
					    "%s: edge %lld: self-loop on task %ld",
					    what, (long long)i, (long)a);
		if (bytes) {
			double w = bytes[i];
			if (!isfinite(w))
				return tp_error_set(err, TP_EINVAL,
						    "%s: edge %lld (%ld-%ld): bytes %g is not a finite number",
						    what, (long long)i, (long)a, (long)b, w);
			if (w < 0)
				return tp_error_set(err, TP_EINVAL,
						    "%s: edge %lld (%ld-%ld): bytes %g is negative",
						    what, (long long)i, (long)a, (long)b, w);
		}
	}
	return 0;
}

int tp_graph_from_edges(tp_graph **out, int32_t ntasks, int64_t nedges,
			const int32_t *u, const int32_t *v,
			const double *bytes, const char *what, tp_error *err)
{
	what = what_or(what);
	if (!out)
		return tp_error_set(err, TP_EINVAL, "%s: no output graph given", what);
	*out = NULL;
	if (ntasks < 0)
		return tp_error_set(err, TP_EINVAL, "%s: task count %ld is negative",
				    what, (long)ntasks);
	if (nedges < 0)
		return tp_error_set(err, TP_EINVAL, "%s: edge count %lld is negative",
				    what, (long long)nedges);
	if (nedges > 0 && (!u || !v))
		return tp_error_set(err, TP_EINVAL,
				    "%s: %lld edges but no endpoint arrays",
				    what, (long long)nedges);
	if ((uint64_t)nedges > (uint64_t)(INT64_MAX / 2) ||
	    (uint64_t)nedges * 2 > SIZE_MAX / sizeof(double))
		return tp_error_set(err, TP_EINVAL, "%s: %lld edges are too many",
				    what, (long long)nedges);
	int rc = check_edges(ntasks, nedges, u, v, bytes, what, err);
	if (rc)
		return rc;

	size_t n = (size_t)ntasks, m = (size_t)nedges;
	tp_graph *g = calloc(1, sizeof *g);
	int64_t *cnt = tp__calloc(n + 1, sizeof *cnt);   /* bucket starts */
	int32_t *a_lo = tp__malloc_array(m, sizeof *a_lo);  /* by hi */
	double *a_w = tp__malloc_array(m, sizeof *a_w);
	int32_t *b_hi = NULL;
	double *b_w = NULL;
	int64_t *deg = NULL;
	if (!g || !cnt || !a_lo || !a_w)
		goto nomem;
	g->ntasks = ntasks;

	/* 1. bucket by hi, input order. */
	for (size_t i = 0; i < m; i++) {
		int32_t hi = u[i] > v[i] ? u[i] : v[i];
		cnt[hi + 1]++;
	}
	for (size_t t = 0; t < n; t++)
		cnt[t + 1] += cnt[t];
	for (size_t i = 0; i < m; i++) {
		int32_t lo = u[i] < v[i] ? u[i] : v[i];
		int32_t hi = u[i] > v[i] ? u[i] : v[i];
		int64_t p = cnt[hi]++;
		a_lo[p] = lo;
		a_w[p] = bytes ? bytes[i] : 1.0;
	}
	/* cnt[t] is now the end of bucket t (= start of bucket t+1). */

	/* 2. scatter into lo buckets, visiting hi in increasing order. */
	b_hi = tp__malloc_array(m, sizeof *b_hi);
	b_w = tp__malloc_array(m, sizeof *b_w);
	deg = tp__calloc(n + 1, sizeof *deg);
	if (!b_hi || !b_w || !deg)
		goto nomem;
	for (size_t i = 0; i < m; i++)
		deg[a_lo[i] + 1]++;
	for (size_t t = 0; t < n; t++)
		deg[t + 1] += deg[t];
	{
		int64_t p = 0;
		for (size_t hi = 0; hi < n; hi++) {
			for (; p < cnt[hi]; p++) {
				int64_t q = deg[a_lo[p]]++;
				b_hi[q] = (int32_t)hi;
				b_w[q] = a_w[p];
			}
		}
	}
	free(a_lo);
	free(a_w);
	a_lo = NULL;
	a_w = NULL;
	/* deg[t] is now the end of lo bucket t; bucket t starts at deg[t-1]. */

	/* 3. merge equal pairs in place; count final degrees in cnt. */
	memset(cnt, 0, (n + 1) * sizeof *cnt);
	int64_t uniq = 0;
	{
		int64_t start = 0;
		for (size_t lo = 0; lo < n; lo++) {
			int64_t end = deg[lo];
			for (int64_t p = start; p < end;) {
				int32_t hi = b_hi[p];
				double w = b_w[p++];
				while (p < end && b_hi[p] == hi)
					w += b_w[p++];
				b_hi[uniq] = hi;
				b_w[uniq] = w;
				uniq++;
				cnt[lo + 1]++;
				cnt[hi + 1]++;
			}
			deg[lo] = uniq;   /* new end of lo bucket */
			start = end;
		}
	}

	/* 4. final CSR. */
	g->nedges = uniq;
	g->merged_dups = (int64_t)m - uniq;
	g->xadj = tp__malloc_array(n + 1, sizeof *g->xadj);
	g->adjncy = tp__malloc_array((size_t)uniq * 2, sizeof *g->adjncy);
	g->weights = tp__malloc_array((size_t)uniq * 2, sizeof *g->weights);
	if (!g->xadj || !g->adjncy || !g->weights)
		goto nomem;
	for (size_t t = 0; t < n; t++)
		cnt[t + 1] += cnt[t];
	memcpy(g->xadj, cnt, (n + 1) * sizeof *cnt);
	{
		double total = 0;
		int64_t p = 0;
		for (size_t lo = 0; lo < n; lo++) {
			for (; p < deg[lo]; p++) {
				int32_t hi = b_hi[p];
				double w = b_w[p];
				int64_t ql = cnt[lo]++, qh = cnt[hi]++;
				g->adjncy[ql] = hi;
				g->weights[ql] = w;
				g->adjncy[qh] = (int32_t)lo;
				g->weights[qh] = w;
				total += w;
			}
		}
		g->total_bytes = total;
	}
	free(b_hi);
	b_hi = NULL;
	if (!isfinite(g->total_bytes)) {
		/* every count was finite, their sums are not */
		free(b_w);
		free(deg);
		free(cnt);
		tp_graph_destroy(g);
		return tp_error_set(err, TP_EINVAL,
				    "%s: the byte counts add up to more than %g (repeated pairs?)",
				    what, DBL_MAX);
	}
	free(b_w);
	free(deg);
	free(cnt);
	*out = g;
	return 0;

nomem:
	free(a_lo);
	free(a_w);
	free(b_hi);
	free(b_w);
	free(deg);
	free(cnt);
	tp_graph_destroy(g);
	return tp_error_set(err, TP_ENOMEM,
			    "%s: out of memory building the graph (%ld tasks, %lld edges)",
			    what, (long)ntasks, (long long)nedges);
}

void tp__graph_drop_rounds(tp_graph *g)
{
	free(g->rounds);
	g->rounds = NULL;
}

int tp__graph_add_rounds(tp_graph *g, size_t n, const int32_t *u,
			 const int32_t *v, const double *rounds)
{
	for (size_t i = 0; i < n; i++) {
		if (!(rounds[i] > 0) || u[i] == v[i])
			continue;
		int64_t e = tp__graph_entry(g, u[i], v[i]);
		if (e < 0)
			continue;
		if (!g->rounds &&
		    !(g->rounds = tp__calloc((size_t)(2 * g->nedges) + 1,
					     sizeof *g->rounds)))
			return TP_ENOMEM;
		g->rounds[e] += rounds[i];
	}
	return TP_OK;
}

int32_t tp_graph_ntasks(const tp_graph *g)
{
	return g ? g->ntasks : 0;
}

int64_t tp_graph_nedges(const tp_graph *g)
{
	return g ? g->nedges : 0;
}

double tp_graph_total_bytes(const tp_graph *g)
{
	return g ? g->total_bytes : 0.0;
}

int32_t tp_graph_neighbors(const tp_graph *g, int32_t t, const int32_t **adj,
			   const double **bytes)
{
	if (!g || t < 0 || t >= g->ntasks) {
		if (adj)
			*adj = NULL;
		if (bytes)
			*bytes = NULL;
		return 0;
	}
	int64_t s = g->xadj[t];
	if (adj)
		*adj = g->adjncy + s;
	if (bytes) {
		const double *w = tp_graph_weights(g);
		*bytes = w ? w + s : NULL;
	}
	return (int32_t)(g->xadj[t + 1] - s);
}

const int64_t *tp_graph_xadj(const tp_graph *g)
{
	return g ? g->xadj : NULL;
}

const int32_t *tp_graph_adjncy(const tp_graph *g)
{
	return g ? g->adjncy : NULL;
}

/* An array the graph leaves implicit, made on the first request: racing
 * callers keep the first one stored (*slot); fill writes its n values.  NULL
 * when out of memory. */
static const double *shown(_Atomic(double *) *slot, size_t n, const tp_graph *g,
			   void (*fill)(const tp_graph *, double *))
{
	double *w = atomic_load_explicit(slot, memory_order_acquire);
	if (w)
		return w;
	double *fresh = malloc((n ? n : 1) * sizeof *fresh);
	if (!fresh)
		return NULL;
	fill(g, fresh);
	if (!atomic_compare_exchange_strong_explicit(slot, &w, fresh,
						     memory_order_acq_rel,
						     memory_order_acquire)) {
		free(fresh);
		return w;
	}
	return fresh;
}

static void fill_unit_weights(const tp_graph *g, double *w)
{
	for (int64_t i = 0; i < g->xadj[g->ntasks]; i++)
		w[i] = g->unit_w;
}

static void fill_grid_coords(const tp_graph *g, double *c)
{
	int at[3] = { 0, 0, 0 }, nd = g->grid_ndims;
	for (int32_t t = 0; t < g->ntasks; t++) {
		for (int d = 0; d < nd; d++)
			*c++ = at[d];
		tp__grid_next(at, g->grid);
	}
}

/* The graph is never const-defined: the casts below only reach the slot. */
const double *tp_graph_weights(const tp_graph *g)
{
	if (!g)
		return NULL;
	if (g->weights)
		return g->weights;
	return shown(&((tp_graph *)g)->shown_w, (size_t)g->xadj[g->ntasks], g,
		     fill_unit_weights);
}

int tp_graph_coord_dims(const tp_graph *g)
{
	return g ? g->coord_dims : 0;
}

const double *tp_graph_coords(const tp_graph *g)
{
	if (!g || g->coord_dims <= 0)
		return NULL;
	if (g->coords)
		return g->coords;
	return shown(&((tp_graph *)g)->shown_c,
		     (size_t)g->ntasks * (size_t)g->grid_ndims, g, fill_grid_coords);
}

int tp_graph_set_coords(tp_graph *g, int dims, const double *coords,
			tp_error *err)
{
	if (!g)
		return tp_error_set(err, TP_EINVAL, "coordinates: no graph given");
	if (dims < 1 || dims > GRAPH_MAX_COORD_DIMS)
		return tp_error_set(err, TP_EINVAL,
				    "coordinates: %d dimensions, expected 1..%d",
				    dims, GRAPH_MAX_COORD_DIMS);
	size_t n = (size_t)g->ntasks * (size_t)dims;
	if (n > 0 && !coords)
		return tp_error_set(err, TP_EINVAL,
				    "coordinates: no values given for %ld tasks",
				    (long)g->ntasks);
	for (size_t i = 0; i < n; i++)
		if (!isfinite(coords[i]))
			return tp_error_set(err, TP_EINVAL,
					    "coordinates: task %zu, dimension %zu: value %g is not finite",
					    i / (size_t)dims, i % (size_t)dims, coords[i]);
	double *c = tp__malloc_array(n, sizeof *c);
	if (!c)
		return tp_error_set(err, TP_ENOMEM,
				    "coordinates: out of memory (%ld tasks x %d)",
				    (long)g->ntasks, dims);
	if (n)
		memcpy(c, coords, n * sizeof *c);
	free(g->coords);
	free(atomic_exchange(&g->shown_c, NULL));
	g->coords = c;
	g->coord_dims = dims;
	return 0;
}

int64_t tp_graph_merged_duplicates(const tp_graph *g)
{
	return g ? g->merged_dups : 0;
}

int tp_graph_grid_dims(const tp_graph *g, int *dims)
{
	if (!g || g->grid_ndims <= 0)
		return 0;
	if (dims)
		for (int d = 0; d < g->grid_ndims; d++)
			dims[d] = g->grid[d];
	return g->grid_ndims;
}
