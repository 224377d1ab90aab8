/* topoplace — what the graph mapping's files share: the context of one
 * run (the allocation's coordinates, the budget), the distances and edge
 * costs every construction and refinement reads, the slot table of the
 * refinements' moves, and each part's entry.  graphmap.c holds the public
 * entry points; graphmap_greedy.c, graphmap_bipart.c, graphmap_refine.c
 * and graphmap_lanes.c the parts, graphmap_slots.c the slot table.
 * Private to those files. */
#ifndef TOPOPLACE_GRAPHMAP_PARTS_H
#define TOPOPLACE_GRAPHMAP_PARTS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "net/network.h"
#include "map/graphmap_internal.h"
#include "net/machine_internal.h"
#include "input/alloc_internal.h"
#include "pattern/pattern_internal.h"

#define REFINE_NODES 16      /* candidate nodes per task in refinement */
#define REFINE_SWAPS 64      /* tasks scanned per candidate node */
#define REFINE_HEAVY_SHARE 0.99   /* of each task's bytes the link-load
				    refinement sees (graph_heavy.c) */

/* ------------------------------------------------------------------------ */
/* Shared context                                                            */

typedef struct gm {
	const struct tp_graph *g;
	const struct tp_alloc *a;
	const struct tp_machine *m;
	int nd;
	int32_t nn, nt;
	int *rc;        /* nn x nd raw router coordinates of allocated nodes */
	int *sc;        /* nn x nd seam-shifted coordinates */
	int threads;    /* the hop-bytes refinement's, at most (0: one per
			   CPU) */
	int link_threads;   /* the link-load refinements' (graphmap_lanes.c),
			       at most (0: one) */
	struct tp__lender *lender;   /* and those lent to them later, or
					NULL */
	double hop_weight;   /* the lane refinement: a message's bytes count
				(1 + hop_weight x links) times */
	double deadline;   /* tp__now_ms() past which construction stops with
			      TP_ETIME; 0: none */
	double projected_ms;   /* greedy: what the whole run would have
				  taken, when it stopped early for it */
	bool rounds_guard;     /* the lane refinement keeps the rounds'
				  latency from rising (rounds_guard.h) */
	int recost_degree;     /* the hop-bytes refinement: a moved task's
				  neighbour of at most this many edges is
				  costed again, one of more takes the move's
				  difference (graphmap_refine.c) */
	const atomic_bool *stop;   /* a refinement ends, as past its
				      budget, once set (one made ahead
				      that is no longer wanted), or NULL */
	_Atomic int32_t *dtab;   /* nn x nn distances + 1 as found (0: not
				    yet), or NULL; written by any thread
				    that computes one, with the same value */
	int64_t *told;   /* the link-load refinements count here the
			    verdicts their helpers' tries ahead gave, or
			    NULL (the tests') */
} gm;

#define REFINE_RECOST_DEGREE 64   /* gm.recost_degree's */
#define GM_DIST_TABLE_NODES 1024   /* gm.dtab up to this many nodes (4 MB
				      a refinement, touched as asked; at
				      1,000 nodes the table gained nothing
				      measurable) */

static inline bool past(const gm *c, double extra_ms)
{
	return c->deadline > 0 && tp__now_ms() + extra_ms > c->deadline;
}

static inline const int *rcoord(const gm *c, int32_t i)
{
	return &c->rc[(size_t)i * (size_t)c->nd];
}

static inline int64_t ndist(const gm *c, int32_t i, int32_t j)
{
	if (!c->dtab)
		return tp__coord_dist(c->m, rcoord(c, i), rcoord(c, j));
	_Atomic int32_t *x = &c->dtab[(size_t)i * (size_t)c->nn + (size_t)j];
	int32_t v = atomic_load_explicit(x, memory_order_relaxed);
	if (v > 0)
		return v - 1;
	int64_t d = tp__coord_dist(c->m, rcoord(c, i), rcoord(c, j));
	if (d >= 0 && d < INT32_MAX)
		atomic_store_explicit(x, (int32_t)(d + 1), memory_order_relaxed);
	return d;
}

/* The bytes of task t's edges. */
static inline double task_bytes(const struct tp_graph *g, int32_t t)
{
	double s = 0.0;
	for (int64_t e = g->xadj[t]; e < g->xadj[t + 1]; e++)
		s += tp__graph_w(g, e);
	return s;
}

static inline bool budget_over(double t0, double budget)
{
	return budget > 0 && tp__now_ms() - t0 > budget;
}

/* A refinement ends here: past its budget, or stopped (gm.stop). */
static inline bool refine_over(const gm *c, double t0, double budget)
{
	return budget_over(t0, budget) || (c->stop && atomic_load(c->stop));
}

/* Weight of edge t-s (0 when absent): neighbour lists are sorted. */
static inline double edge_w(const struct tp_graph *g, int32_t t, int32_t s)
{
	int64_t e = tp__graph_entry(g, t, s);
	return e >= 0 ? tp__graph_w(g, e) : 0.0;
}

/* Bytes times hops of t's edges with t on node q: on its own node, its
 * share of the hop-bytes. */
static inline double cost_at(const gm *c, const int32_t *map, int32_t t, int32_t q)
{
	const struct tp_graph *g = c->g;
	double s = 0.0;
	for (int64_t e = g->xadj[t]; e < g->xadj[t + 1]; e++)
		s += tp__graph_w(g, e) * (double)ndist(c, q, map[g->adjncy[e]]);
	return s;
}

/* Which slot of its node each task holds, for the refinements' moves:
 * node i's slots are off[i] .. off[i+1]-1, used[i] of them taken. */
typedef struct slot_table {
	int64_t *off;
	int32_t *used, *slot_task, *task_slot;
} slot_table;

/* The refinements' slot table (graphmap_slots.c). */
void tp__slots_free(slot_table *st);
int tp__slots_init(slot_table *st, const struct tp_alloc *a,
		      const int32_t *map, int32_t nt);
void tp__slots_move(slot_table *st, int32_t t, int32_t p, int32_t q,
		       int32_t s);

/* The parts, each run on a context set up by graphmap.c's entry points. */
int tp__greedy_run(gm *c, int32_t *map);
int tp__bipart_run(const gm *c, int seed, int threads, int32_t *map);
int tp__refine_run(const gm *c, const tp_graphmap_opts *o, int32_t *map,
		      int64_t *moves_out, double t0);
int tp__refine_cong_run(const gm *c, const tp_graphmap_opts *o,
			   int32_t *map, int64_t *moves_out, double t0);
int tp__refine_lanes_run(const gm *c, const tp_graphmap_opts *o,
			    int32_t *map, int64_t *moves_out, double t0);
int tp__refine_bound_audit(const gm *c, const int32_t *map, bool lanes, int64_t n[3]);

#endif
