/* topoplace — geometric mapping (Deveci et al., "Exploiting geometric
 * partitioning in task mapping", IPDPS 2014, extended).
 *
 * Task coordinates and the allocated nodes' router coordinates are partitioned
 * together by paired multi-jagged cuts: each level cuts the node set into k
 * parts along one dimension, sized by the node slots they hold, and the task set
 * into parts of exactly those slot counts along the paired task dimension, so
 * part numbering is consistent on both sides by construction.  On a torus the
 * node coordinates are first shifted so that the largest empty gap of every
 * wrapped dimension becomes the seam.  The search tries every permutation of
 * task and machine dimensions and every reflection of the machine axes (the
 * same set of mappings as reflecting the task axes, on fewer points), plus one
 * "longest extent first" variant, scores each with the chosen metric (on large
 * graphs: screened on a sample of edges, the best few scored exactly) and
 * keeps the best.  Surplus slots are dropped first by closest-subset selection
 * (k-means).  Ties are broken by the other coordinates, then by index, so the
 * result does not depend on the machine it runs on (unless the time budget
 * stops the search early).
 *
 * Folding: when the task grid's extents factor onto the machine's (each task
 * dimension a product of whole machine dimensions, the node's tasks a block
 * of the grid; e.g. 96x92x72 tasks, 4 per node, on a 24x23x24x2x3x2 torus),
 * and the allocation is a full box (the whole machine or a sub-box, across
 * the seam too), the snake-order embeddings that keep grid neighbours one
 * hop apart are variants of their own, tried first (geom_fold.c).
 *
 * The search is anytime: variants are built lazily and tried most promising
 * first (longest task extent onto longest machine extent), and the time
 * budget bounds the partitions and the scoring as well as the search (the
 * preparation before them is linear in the nodes and tasks).  Past the
 * budget the best variant scored so far is kept; the first variant always
 * completes, so a result exists.
 */
#ifndef TOPOPLACE_GEOM_H
#define TOPOPLACE_GEOM_H

#include <stdbool.h>
#include <stdint.h>
#include <topoplace/error.h>
#include <topoplace/export.h>
#include <topoplace/alloc.h>
#include <topoplace/machine.h>
#include <topoplace/metrics.h>
#include <topoplace/pattern.h>

#ifdef __cplusplus
extern "C" {
#endif

enum tp_geom_search {
	TP_SEARCH_FULL = 0,       /* rotations and reflections */
	TP_SEARCH_ROTATIONS = 1,  /* permutations only, as in the paper */
	TP_SEARCH_NONE = 2,       /* the longest-extent variant only */
	TP_SEARCH_AUTO = 3,       /* default: FULL while the allocation has at
				     most TP_SEARCH_AUTO_MAX_NODES nodes, then
				     ROTATIONS (reflections cost one node
				     partition each, 49 instead of 7 in 3-D) */
};

#define TP_SEARCH_AUTO_MAX_NODES 262144

typedef struct tp_geom_opts {
	/* Parts per cut: 2 = recursive bisection (RCB, default).  k > 2 cuts each
	 * set into k parts per level (multi-jagged, fewer levels). */
	int parts_per_level;
	enum tp_geom_search search;
	bool seam_shift;               /* torus seam shift (default true) */
	enum tp_metric_kind metric;    /* how variants are scored */
	double time_budget_ms;         /* <= 0: no limit.  Bounds the whole call:
					  overrun at most one exact scoring,
					  or the first variant when nothing
					  was ready in time */
	int nthreads;                  /* 0: one per CPU the process may run on
					  (sched_getaffinity), at most 256 */
} tp_geom_opts;

typedef struct tp_geom_report {
	int variants_total;     /* variants the search would try, folds
				   included */
	int variants_scored;    /* variants actually scored */
	int best_variant;       /* index of the winner */
	char best_desc[96];     /* e.g. "tasks yxz (reflect x) -> machine xzy" */
	double best_score;
	bool budget_hit;        /* search stopped by the time budget */
	bool subset_selected;   /* closest-subset selection dropped slots */
	int shifted_dims;       /* number of dimensions the seam shift moved */
	bool default_kept;      /* tp_place kept Slurm's block order because it
				   scored better than every variant */
	double elapsed_ms;
	int variants_folded;    /* folded embeddings among the variants (0
				   when folding does not apply) */
} tp_geom_report;

TP_EXPORT void tp_geom_opts_default(tp_geom_opts *o);

/* Map the tasks of g (which must have coordinates) onto allocation a.
 * map[t] receives the allocation index of task t's node.  report may be NULL.
 * Fails with TP_EINVAL when g has no coordinates or the allocation has fewer
 * slots than tasks. */
TP_EXPORT int tp_geom_map(const tp_graph *g, const tp_alloc *a, const tp_geom_opts *o,
		int32_t *map, tp_geom_report *report, tp_error *err);

#ifdef __cplusplus
}
#endif
#endif
