/* topoplace — a grid's node tiles mapped whole (map/node_tiles.h).
 *
 * Where links are not the bottleneck, an exchange lasts as long as its
 * busiest node takes to send: the bytes leaving its k tasks.  The tilings
 * the constructions make keep the most bytes inside a node (geometric's
 * blocks, METIS's cuts), and on an unbounded grid every tile of a shape
 * that does sends the same.  On a bounded one it does not: a tile on the
 * grid's edge has no neighbour there.  A 7-point 8x6x4 stencil, 4 tasks a
 * node: 2x2x1 blocks, the cube's, leave interior blocks 16 messages; 2x1x2
 * blocks all touch a z face, and the busiest sends 14, with the same bytes
 * kept inside.  Local moves do not turn one tiling into the other, and
 * simulated (SimGrid SMPI, a dragonfly of 48 nodes) the busiest node's 14
 * ran 39.0 us where its 16 ran 44.6.  So where such a tiling exists, auto
 * also maps it whole: the pattern between its tiles (tp__graph_quotient)
 * placed by auto on the nodes, a slot each, its result judged as the
 * other candidates are. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "input/alloc_internal.h"
#include "map/node_tiles.h"
#include "map/place_internal.h"
#include "pattern/pattern_internal.h"
#include "util/util_internal.h"

/* The tiles are worth a candidate when their busiest sends at least this
 * share less than the blocks': at 0.88 (the 8x6x4 above) their lanes won
 * by 12 % predicted; at 0.97 (an 8x8x8 27-point stencil in z columns, on
 * three 4:1 trees) they ended where the other starts did, for half a
 * second more. */
#define TILES_GAIN_SHARE 0.05

/* Tile shapes weighed at most (each a pass over the edges): 3-D shapes of
 * up to 64 tasks are at most 28, six dimensions' of 8 are 56; past it the
 * tiles are not weighed. */
#define TILES_MAX_SHAPES 64

/* The box of g's coordinates, when they are integers filling it, each
 * point once: lo and ext per dimension. */
static bool full_box(const tp_graph *g, int *lo, int *ext)
{
	int nd = g->coord_dims;
	const double *x = nd > 0 ? tp_graph_coords(g) : NULL;
	if (!x || g->ntasks < 2)
		return false;
	double mn[TP_MAX_DIMS], mx[TP_MAX_DIMS];
	for (int d = 0; d < nd; d++)
		mn[d] = mx[d] = x[d];
	for (int32_t t = 0; t < g->ntasks; t++)
		for (int d = 0; d < nd; d++) {
			double v = x[(size_t)t * (size_t)nd + (size_t)d];
			if (v != floor(v) || fabs(v) > 1e9)
				return false;
			mn[d] = fmin(mn[d], v);
			mx[d] = fmax(mx[d], v);
		}
	int64_t cells = 1;
	for (int d = 0; d < nd; d++) {
		lo[d] = (int)mn[d];
		ext[d] = (int)(mx[d] - mn[d]) + 1;
		cells *= ext[d];
		if (cells > g->ntasks)
			return false;
	}
	if (cells != g->ntasks)
		return false;
	bool *seen = tp__calloc((size_t)g->ntasks, sizeof *seen);
	bool ok = seen != NULL;
	for (int32_t t = 0; ok && t < g->ntasks; t++) {
		int64_t at = 0;
		for (int d = nd - 1; d >= 0; d--)
			at = at * ext[d] + ((int64_t)x[(size_t)t * (size_t)nd + (size_t)d] - lo[d]);
		ok = !seen[at];
		seen[at] = true;
	}
	free(seen);
	return ok;
}

/* Task t's tile under shape (tiles ext[d] / shape[d] a dimension). */
static int32_t tile_of(const tp_graph *g, const int *lo, const int *ext,
		       const int *shape, int32_t t)
{
	int nd = g->coord_dims;
	const double *x = tp_graph_coords(g) + (size_t)t * (size_t)nd;
	int64_t at = 0;
	for (int d = nd - 1; d >= 0; d--)
		at = at * (ext[d] / shape[d]) + ((int64_t)x[d] - lo[d]) / shape[d];
	return (int32_t)at;
}

/* A tiling's bytes leaving its busiest tile and all of them; out (per
 * tile) and of (per task) the caller's, of any contents. */
static void tiling_bytes(const tp_graph *g, const int *lo, const int *ext,
			 const int *shape, int32_t ntiles, double *out, int32_t *of,
			 double *busiest, double *total)
{
	memset(out, 0, (size_t)ntiles * sizeof *out);
	for (int32_t t = 0; t < g->ntasks; t++)
		of[t] = tile_of(g, lo, ext, shape, t);
	*total = 0;
	for (int32_t u = 0; u < g->ntasks; u++)
		for (int64_t e = g->xadj[u]; e < g->xadj[u + 1]; e++)
			if (of[g->adjncy[e]] != of[u]) {
				double w = tp__graph_w(g, e);
				out[of[u]] += w;
				*total += w;
			}
	*busiest = 0;
	for (int32_t i = 0; i < ntiles; i++)
		*busiest = fmax(*busiest, out[i]);
}

/* The tiling search's state: the best shape by the busiest tile, and the
 * one of the fewest bytes off the tiles (the blocks). */
struct search {
	const tp_graph *g;
	const int *lo, *ext;
	int32_t k;
	int shape[TP_MAX_DIMS];
	bool any;
	struct tp__tiles best;
	double best_total;
	int best_longest;
	double blocks_total;
	int blocks_longest;
	double *out;         /* per tile, per task: every shape's scratch */
	int32_t *of;
};

/* The shape's longest extent in tiles: the grid of tiles nearest a cube
 * first, as geometric orders its blocks. */
static int longest_of(const int *ext, const int *shape, int nd)
{
	int m = 0;
	for (int d = 0; d < nd; d++)
		m = ext[d] / shape[d] > m ? ext[d] / shape[d] : m;
	return m;
}

static void consider(struct search *s)
{
	int nd = s->g->coord_dims;
	int32_t ntiles = s->g->ntasks / s->k;
	double busiest, total;
	tiling_bytes(s->g, s->lo, s->ext, s->shape, ntiles, s->out, s->of, &busiest,
		     &total);
	int longest = longest_of(s->ext, s->shape, nd);
	/* ties: fewer bytes off the tiles, then nearer a cube, then the
	 * first enumerated */
	if (!s->any || busiest < s->best.busiest ||
	    (busiest == s->best.busiest &&
	     (total < s->best_total ||
	      (total == s->best_total && longest < s->best_longest)))) {
		s->best.busiest = busiest;
		s->best_total = total;
		s->best_longest = longest;
		memcpy(s->best.shape, s->shape, sizeof s->shape);
	}
	if (!s->any || total < s->blocks_total ||
	    (total == s->blocks_total && longest < s->blocks_longest)) {
		s->best.blocks_busiest = busiest;
		s->blocks_total = total;
		s->blocks_longest = longest;
	}
	s->any = true;
}

/* Every shape from dimension d on: extents dividing the grid's, k tasks;
 * weighed (consider) or, with count, only counted into *count. */
static void shapes(struct search *s, int d, int32_t left, int64_t *count)
{
	if (count && *count > TILES_MAX_SHAPES)
		return;
	if (d == s->g->coord_dims) {
		if (left == 1 && count)
			++*count;
		else if (left == 1)
			consider(s);
		return;
	}
	for (int x = 1; x <= left; x++)
		if (left % x == 0 && s->ext[d] % x == 0) {
			s->shape[d] = x;
			shapes(s, d + 1, left / x, count);
		}
}

bool tp__tiles_worth(const tp_graph *g, int32_t k, struct tp__tiles *t)
{
	memset(t, 0, sizeof *t);
	int lo[TP_MAX_DIMS], ext[TP_MAX_DIMS];
	if (k < 2 || g->ntasks % k != 0 || !full_box(g, lo, ext))
		return false;
	struct search s = { .g = g, .lo = lo, .ext = ext, .k = k };
	int64_t n = 0;
	shapes(&s, 0, k, &n);
	if (n > TILES_MAX_SHAPES)
		return false;
	s.out = tp__malloc_array((size_t)(g->ntasks / k), sizeof *s.out);
	s.of = tp__malloc_array((size_t)g->ntasks, sizeof *s.of);
	if (s.out && s.of)
		shapes(&s, 0, k, NULL);
	free(s.out);
	free(s.of);
	if (!s.any || !(s.best.busiest < (1 - TILES_GAIN_SHARE) * s.best.blocks_busiest))
		return false;
	*t = s.best;
	t->dims = g->coord_dims;
	t->ntiles = g->ntasks / k;
	for (int d = 0; d < t->dims; d++) {
		t->ext[d] = ext[d] / t->shape[d];
		t->lo[d] = lo[d];
	}
	return true;
}

int tp__tiles_map(const tp_graph *g, const tp_alloc *a, const tp_place_opts *o,
		  const struct tp__tiles *t, int32_t *map, tp_error *err)
{
	int32_t k = g->ntasks / t->ntiles;
	for (int32_t i = 0; i < a->nnodes; i++)
		if (a->slots[i] != k)
			return tp_error_set(err, TP_EINVAL, "tiles: node %d holds %d "
					    "tasks, not %d", (int)i, a->slots[i], (int)k);
	if (a->nnodes != t->ntiles)
		return tp_error_set(err, TP_EINVAL, "tiles: %d tiles on %d nodes",
				    (int)t->ntiles, (int)a->nnodes);
	/* the grid as tp__tiles_worth found it */
	int nd = t->dims, ext[TP_MAX_DIMS];
	for (int d = 0; d < nd; d++)
		ext[d] = t->ext[d] * t->shape[d];
	int32_t *of = tp__malloc_array((size_t)g->ntasks, sizeof *of);
	double *xy = tp__malloc_array((size_t)t->ntiles * (size_t)nd, sizeof *xy);
	int32_t *qmap = tp__malloc_array((size_t)t->ntiles, sizeof *qmap);
	tp_graph *q = NULL;
	tp_alloc *qa = NULL;
	int rc = of && xy && qmap ? 0 : tp_error_set(err, TP_ENOMEM, "tiles: out of memory");
	for (int32_t i = 0; !rc && i < g->ntasks; i++)
		of[i] = tile_of(g, t->lo, ext, t->shape, i);
	/* tile i's coordinates: its place in the grid of tiles */
	for (int32_t i = 0; !rc && i < t->ntiles; i++) {
		int64_t r = i;
		for (int d = 0; d < nd; d++) {
			xy[(size_t)i * (size_t)nd + (size_t)d] = (double)(r % t->ext[d]);
			r /= t->ext[d];
		}
	}
	if (!rc)
		rc = tp__graph_quotient(g, of, t->ntiles, k, &q, err);
	if (!rc)
		rc = tp_graph_set_coords(q, nd, xy, err);
	if (!rc)
		rc = tp_alloc_from_nodes(a->m, a->node, a->nnodes, 1, &qa, err);
	if (!rc)
		rc = tp_place_ex(q, qa, o, qmap, NULL, err);
	for (int32_t i = 0; !rc && i < g->ntasks; i++)
		map[i] = qmap[of[i]];
	tp_alloc_destroy(qa);
	tp_graph_destroy(q);
	free(of);
	free(xy);
	free(qmap);
	return rc;
}
