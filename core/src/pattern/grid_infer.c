/* topoplace — finding the grid under a traced halo exchange that is not an
 * exact stencil.
 *
 * A real code's trace is a stencil with noise: LULESH's 26 neighbours carry
 * unequal bytes (faces, edges and corners; some fields go one way only),
 * boundary ranks send less, and the collectives the trace expands add edges
 * to far ranks (recursive doubling's rank XOR 2^k).  tp_graph_detect_stencil
 * asks for exact regularity and refuses all of that, so the graph was
 * mapped without coordinates and lost most of the stencil's gain.
 *
 * Here a shape X x Y (x Z), tasks numbered x fastest as codes lay out their
 * ranks (LULESH: col = rank % X; MPI_Cart_create's row-major order is the
 * same with the axes reversed), is accepted when most bytes travel between
 * grid neighbours (Chebyshev distance 1, each axis wrapped when its seam
 * carries the bytes of a face) and every axis carries face bytes of its own
 * (a ring is no 2 x N grid).  Among accepted shapes the one whose bytes
 * travel the fewest grid steps wins: the layout the code used makes its
 * halos short, any other factorisation stretches them.
 *
 * Cost: a strided sample of tasks screens each factorisation first; only
 * shapes whose sample passes get two passes over the edges.  A graph whose
 * tasks send most of their bytes beyond any 26 partners (an all-to-all)
 * tries no shape at all (neighbours_may_carry).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pattern/pattern_internal.h"

#define NEAR_SHARE 0.9     /* bytes between grid neighbours, at least */
#define AXIS_SHARE 0.02    /* each axis's face bytes, of the near bytes */
#define SAMPLE_TASKS 2048
#define GRID_NEIGHBOURS 26 /* a task's grid neighbours at most: 3^3 - 1 */

struct cand {
	int nd;
	int32_t ext[3];
	bool wrap[3];
};

/* Task t's grid position under c. */
static void position(const struct cand *c, int64_t t, int32_t *p)
{
	for (int d = 0; d < 3; d++) {
		int32_t e = d < c->nd ? c->ext[d] : 1;
		p[d] = (int32_t)(t % e);
		t /= e;
	}
}

/* The step from a to b along axis d, the short way round when it wraps. */
static int32_t axis_step(const struct cand *c, int d, int32_t a, int32_t b)
{
	int32_t o = b - a;
	if (c->wrap[d]) {
		if (o > c->ext[d] / 2)
			o -= c->ext[d];
		else if (o < -(c->ext[d] / 2))
			o += c->ext[d];
	}
	return o < 0 ? -o : o;
}

struct tally {
	double total, near, cost;
	double face[3], seam[3];   /* only axis d moved: by 1, by ext - 1 */
	bool diagonal;             /* bytes between edge or corner neighbours */
};

/* Add task t's edges to *s under c. */
static void tally_task(const tp_graph *g, const struct cand *c, int64_t t,
		       struct tally *s)
{
	int32_t p[3], q[3];
	position(c, t, p);
	for (int64_t e = g->xadj[t]; e < g->xadj[t + 1]; e++) {
		double w = tp__graph_w(g, e);
		position(c, g->adjncy[e], q);
		int32_t steps = 0, far = 0, moved = 0, axis = 0, raw = 0;
		for (int d = 0; d < c->nd; d++) {
			int32_t o = axis_step(c, d, p[d], q[d]);
			steps += o;
			far = o > far ? o : far;
			if (o) {
				moved++;
				axis = d;
				raw = q[d] > p[d] ? q[d] - p[d] : p[d] - q[d];
			}
		}
		s->total += w;
		s->cost += w * steps;
		if (far <= 1)
			s->near += w;
		if (far == 1 && moved > 1)
			s->diagonal = s->diagonal || w > 0;
		if (moved == 1) {
			if (raw == 1)
				s->face[axis] += w;
			else if (raw == c->ext[axis] - 1)
				s->seam[axis] += w;
		}
	}
}

/* Does a strided sample of the tasks keep NEAR_SHARE of its bytes between
 * neighbours when every axis may wrap (the most a shape can accept)? */
static bool sample_passes(const tp_graph *g, const struct cand *c)
{
	struct cand all = *c;
	for (int d = 0; d < c->nd; d++)
		all.wrap[d] = c->ext[d] > 2;
	struct tally s = { 0 };
	int64_t n = g->ntasks, step = n > SAMPLE_TASKS ? n / SAMPLE_TASKS : 1;
	for (int64_t t = 0; t < n; t += step)
		tally_task(g, &all, t, &s);
	return s.total > 0 && s.near >= NEAR_SHARE * s.total;
}

static void tally_all(const tp_graph *g, const struct cand *c,
		      struct tally *s)
{
	memset(s, 0, sizeof *s);
	for (int64_t t = 0; t < g->ntasks; t++)
		tally_task(g, c, t, s);
}

/* Score shape c (its wraps decided here): true when accepted, with its
 * tally in *s. */
static bool judge(const tp_graph *g, struct cand *c, struct tally *s)
{
	if (!sample_passes(g, c))
		return false;
	/* first pass without wrap: each seam's bytes against its faces' */
	for (int d = 0; d < 3; d++)
		c->wrap[d] = false;
	tally_all(g, c, s);
	bool any = false;
	for (int d = 0; d < c->nd; d++) {
		/* a wrapped axis has one seam pair for every ext - 1 face
		 * pairs; it wraps when a seam pair carries at least half of
		 * what a face pair does on average */
		c->wrap[d] = c->ext[d] > 2 && s->seam[d] > 0 &&
			     s->seam[d] * (c->ext[d] - 1) >= 0.5 * s->face[d];
		any = any || c->wrap[d];
	}
	if (any)
		tally_all(g, c, s);
	if (s->total <= 0 || s->near < NEAR_SHARE * s->total)
		return false;
	for (int d = 0; d < c->nd; d++)
		if (s->face[d] < AXIS_SHARE * s->near)
			return false;
	return true;
}

static void describe(const struct cand *c, const struct tally *s,
		     tp_stencil_shape *out)
{
	memset(out, 0, sizeof *out);
	out->ndims = c->nd;
	out->points = c->nd == 2 ? (s->diagonal ? 9 : 5) : (s->diagonal ? 27 : 7);
	int64_t n = 1;
	for (int d = 0; d < c->nd; d++)
		n *= c->ext[d];
	for (int d = 0; d < 3; d++) {
		out->dims[d] = d < c->nd ? c->ext[d] : 1;
		out->wrap[d] = d < c->nd && c->wrap[d];
		if (d < c->nd) {
			/* the average bytes of a face pair, both ways summed
			 * as the graph's entries hold them */
			int64_t pairs = n / c->ext[d] * (c->ext[d] - 1);
			out->bytes[d] = pairs > 0 ? s->face[d] / 2 / (double)pairs
						  : 0;
		}
	}
	tp__stencil_spec_head(out);
}

/* The shapes' search (tp__grid_shapes_each): the lowest cost so far. */
struct search {
	const tp_graph *g;
	struct cand best;
	struct tally bt;
	bool found;
};

/* Keep the shape when it beats the best so far (fewer grid steps a byte;
 * the first found on a tie, so the answer does not depend on anything but
 * the graph). */
static int consider_shape(void *arg, int nd, const int32_t ext[3])
{
	struct search *sr = arg;
	struct cand c = { nd, { ext[0], ext[1], ext[2] }, { false } };
	struct tally s;
	if (judge(sr->g, &c, &s) &&
	    (!sr->found || s.cost < sr->bt.cost * (1 - 1e-12))) {
		sr->best = c;
		sr->bt = s;
		sr->found = true;
	}
	return 0;
}

/* Could any shape keep NEAR_SHARE of the bytes between grid neighbours?
 * A task has at most GRID_NEIGHBOURS of them, so its bytes to them are at
 * most GRID_NEIGHBOURS times its heaviest edge's: where the tasks' sums of
 * that are short, no shape passes judge, and none need be tried (a
 * captured all-to-all of 512 ranks: 36 shapes, each a pass over its
 * 261,000 entries, 90 ms before the mapping began). */
static bool neighbours_may_carry(const tp_graph *g)
{
	double total = 0, most = 0;
	for (int32_t t = 0; t < g->ntasks; t++) {
		double sum = 0, heaviest = 0;
		for (int64_t e = g->xadj[t]; e < g->xadj[t + 1]; e++) {
			double w = tp__graph_w(g, e);
			sum += w;
			heaviest = w > heaviest ? w : heaviest;
		}
		total += sum;
		most += fmin(sum, GRID_NEIGHBOURS * heaviest);
	}
	return total > 0 && most >= NEAR_SHARE * total;
}

int tp__graph_infer_grid(const tp_graph *g, tp_stencil_shape *out,
			 double *near_share)
{
	memset(out, 0, sizeof *out);
	if (near_share)
		*near_share = 0;
	if (!g || g->ntasks < 4 || g->nedges == 0 || g->total_bytes <= 0 ||
	    !neighbours_may_carry(g))
		return 0;
	/* 3-D shapes, then 2-D; a 3-D grid seen as 2-D stretches one axis's
	 * halos over a whole plane, so its cost is never the lower one */
	struct search sr = { .g = g };
	tp__grid_shapes_each(g->ntasks, consider_shape, &sr);
	if (!sr.found)
		return 0;
	describe(&sr.best, &sr.bt, out);
	if (near_share)
		*near_share = sr.bt.near / sr.bt.total;
	return 1;
}
