/* topoplace — recognising a regular stencil in a task graph (a traced
 * communication graph has no coordinates; when it is a 2-D or 3-D halo
 * exchange, the grid positions are its coordinates and the geometric
 * mapping applies as if --stencil had been given).
 *
 * A graph is a stencil of shape X x Y (x Z) when, with tasks numbered x
 * fastest, every task is linked to exactly its grid neighbours (faces only:
 * 5/7 points; faces, edges and corners: 9/27 points), each axis with or
 * without wrap, and every neighbour direction carries the same bytes
 * everywhere (per-direction weights: a halo's faces may differ per axis).
 *
 * Shapes tried: every factorisation of the task count into 3, then 2
 * extents of at least 2.  Task 0's neighbours decide wrap and points for a
 * shape, so each shape is checked in one pass over the edges; most fail at
 * task 0.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pattern/pattern_internal.h"

enum { NCLASS = 27 };   /* offset index (dx+1) + 3 (dy+1) + 9 (dz+1) */

struct shape {
	int nd;
	int32_t ext[3];
	int64_t stride[3];
	bool wrap[3];
	bool full;           /* 9 or 27 points */
};

static bool has_edge(const tp_graph *g, int32_t t, int64_t v)
{
	const int32_t *adj = g->adjncy + g->xadj[t];
	int64_t lo = 0, hi = g->xadj[t + 1] - g->xadj[t];
	while (lo < hi) {   /* neighbour lists are sorted */
		int64_t mid = (lo + hi) / 2;
		if (adj[mid] == v)
			return true;
		if (adj[mid] < v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* Offset k's class, the same for +offset and -offset (a pair's two rows). */
static int offset_class(const int *o)
{
	int s = o[2] ? o[2] : o[1] ? o[1] : o[0];
	return (s * o[0] + 1) + 3 * (s * o[1] + 1) + 9 * (s * o[2] + 1);
}

struct expect {
	int32_t target;
	int cls;
};

static int cmp_expect(const void *a, const void *b)
{
	const struct expect *x = a, *y = b;
	return (x->target > y->target) - (x->target < y->target);
}

/* The grid neighbours of task t under shape s, sorted. */
static int neighbours(const struct shape *s, int64_t t, struct expect *out)
{
	int c[3] = { 0, 0, 0 }, n = 0;
	int64_t rest = t;
	for (int d = 0; d < s->nd; d++) {
		c[d] = (int)(rest % s->ext[d]);
		rest /= s->ext[d];
	}
	int zr = s->nd == 3 ? 1 : 0;
	for (int dz = -zr; dz <= zr; dz++)
		for (int dy = -1; dy <= 1; dy++)
			for (int dx = -1; dx <= 1; dx++) {
				int o[3] = { dx, dy, dz };
				int moved = (dx != 0) + (dy != 0) + (dz != 0);
				if (!moved || (!s->full && moved > 1))
					continue;
				int64_t idx = 0;
				bool ok = true;
				for (int d = 0; d < s->nd && ok; d++) {
					int p = c[d] + o[d];
					if (p < 0 || p >= s->ext[d]) {
						ok = s->wrap[d];
						p = p < 0 ? s->ext[d] - 1 : 0;
					}
					idx += p * s->stride[d];
				}
				if (ok)
					out[n++] = (struct expect){ (int32_t)idx,
								    offset_class(o) };
			}
	qsort(out, (size_t)n, sizeof *out, cmp_expect);
	return n;
}

/* Does g equal shape s, every direction with one weight?  cw: the weight
 * of each offset class. */
static bool matches(const tp_graph *g, const struct shape *s, double *cw)
{
	struct expect e[26];
	bool seen[NCLASS] = { false };
	for (int32_t t = 0; t < g->ntasks; t++) {
		int n = neighbours(s, t, e);
		int64_t b = g->xadj[t];
		if (g->xadj[t + 1] - b != n)
			return false;
		for (int k = 0; k < n; k++) {
			if (g->adjncy[b + k] != e[k].target)
				return false;
			double w = tp__graph_w(g, b + k);
			if (!seen[e[k].cls]) {
				seen[e[k].cls] = true;
				cw[e[k].cls] = w;
			} else if (w != cw[e[k].cls]) {
				return false;
			}
		}
	}
	return true;
}

/* Shape nd x ext with wrap and points as task 0's neighbours say. */
static void make_shape(const tp_graph *g, int nd, const int32_t *ext,
		       struct shape *s)
{
	memset(s, 0, sizeof *s);
	s->nd = nd;
	int64_t stride = 1;
	for (int d = 0; d < nd; d++) {
		s->ext[d] = ext[d];
		s->stride[d] = stride;
		stride *= ext[d];
	}
	for (int d = 0; d < nd; d++)
		/* an axis of 2 reads the same with or without wrap: without */
		s->wrap[d] = ext[d] > 2 &&
			     has_edge(g, 0, s->stride[d] * (ext[d] - 1));
	s->full = has_edge(g, 0, 1 + s->stride[1]);
}

size_t tp__stencil_spec_head(tp_stencil_shape *s)
{
	char *p = s->spec, *end = s->spec + sizeof s->spec;
	p += snprintf(p, (size_t)(end - p), "%dx%d", s->dims[0], s->dims[1]);
	if (s->ndims == 3)
		p += snprintf(p, (size_t)(end - p), "x%d", s->dims[2]);
	p += snprintf(p, (size_t)(end - p), ":%dpt", s->points);
	if (s->wrap[0] || s->wrap[1] || s->wrap[2]) {
		p += snprintf(p, (size_t)(end - p), ":periodic=");
		for (int d = 0; d < s->ndims; d++)
			if (s->wrap[d])
				p += snprintf(p, (size_t)(end - p), "%c", "xyz"[d]);
	}
	return (size_t)(p - s->spec);
}

static void fmt_num(char *out, size_t len, double v)
{
	snprintf(out, len, "%.15g", v);
}

static void describe(const struct shape *s, const double *cw,
		     tp_stencil_shape *out)
{
	static const int face[3][3] = { { 1, 0, 0 }, { 0, 1, 0 }, { 0, 0, 1 } };
	memset(out, 0, sizeof *out);
	out->ndims = s->nd;
	out->points = s->nd == 2 ? (s->full ? 9 : 5) : (s->full ? 27 : 7);
	double minb = INFINITY;
	for (int d = 0; d < 3; d++) {
		out->dims[d] = d < s->nd ? s->ext[d] : 1;
		out->wrap[d] = d < s->nd && s->wrap[d];
		out->bytes[d] = d < s->nd ? cw[offset_class(face[d])] : 0;
		if (d < s->nd && out->bytes[d] < minb)
			minb = out->bytes[d];
	}
	char *p = out->spec + tp__stencil_spec_head(out);
	char *end = out->spec + sizeof out->spec;
	char num[40];
	fmt_num(num, sizeof num, minb);
	p += snprintf(p, (size_t)(end - p), ":bytes=%s", num);
	bool uniform = true;
	for (int d = 0; d < s->nd; d++)
		uniform &= out->bytes[d] == minb;
	if (!uniform && minb > 0) {
		p += snprintf(p, (size_t)(end - p), ":weights=");
		for (int d = 0; d < s->nd; d++) {
			fmt_num(num, sizeof num, out->bytes[d] / minb);
			p += snprintf(p, (size_t)(end - p), "%s%s", d ? "," : "", num);
		}
	}
}

static bool try_shape(const tp_graph *g, int nd, const int32_t *ext,
		      tp_stencil_shape *out)
{
	struct shape s;
	double cw[NCLASS];
	make_shape(g, nd, ext, &s);
	if (!matches(g, &s, cw))
		return false;
	describe(&s, cw, out);
	return true;
}

int tp__grid_shapes_each(int32_t n, int (*fn)(void *arg, int nd,
					      const int32_t ext[3]),
			 void *arg)
{
	int rc;
	for (int32_t x = 2; x <= n / 4; x++) {
		if (n % x)
			continue;
		for (int32_t y = 2; y <= n / x / 2; y++) {
			if ((n / x) % y)
				continue;
			int32_t ext[3] = { x, y, n / x / y };
			if ((rc = fn(arg, 3, ext)))
				return rc;
		}
	}
	for (int32_t x = 2; x <= n / 2; x++) {
		if (n % x)
			continue;
		int32_t ext[3] = { x, n / x, 1 };
		if ((rc = fn(arg, 2, ext)))
			return rc;
	}
	return 0;
}

struct detect {
	const tp_graph *g;
	tp_stencil_shape *out;
};

static int detect_shape(void *arg, int nd, const int32_t ext[3])
{
	struct detect *d = arg;
	return try_shape(d->g, nd, ext, d->out);
}

int tp_graph_detect_stencil(const tp_graph *g, tp_stencil_shape *out,
			    tp_error *err)
{
	if (!g || !out)
		return tp_error_set(err, TP_EINVAL, "stencil detection: no graph");
	memset(out, 0, sizeof *out);
	int32_t n = g->ntasks;
	if (n < 4 || g->nedges == 0)
		return 0;
	/* 3-D first: a 3-D box is never also a 2-D stencil of the same
	 * tasks (task 0 has a third kind of neighbour) */
	return tp__grid_shapes_each(n, detect_shape,
				    &(struct detect){ g, out }) ? 1 : 0;
}

/* The grid positions, left implicit as a --stencil graph has them. */
void tp__graph_adopt_grid(tp_graph *g, const tp_stencil_shape *s)
{
	free(g->coords);
	free(atomic_exchange(&g->shown_c, NULL));
	g->coords = NULL;
	g->coord_dims = s->ndims;
	g->grid_ndims = s->ndims;
	for (int d = 0; d < 3; d++)
		g->grid[d] = d < s->ndims ? s->dims[d] : 1;
}
