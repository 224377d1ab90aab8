/* topoplace — graph mapping's options, part of tp_place_opts (place.h):
 * greedy growth, recursive bipartitioning with METIS, hierarchical
 * mapping, and swap refinement of the result (doc/algorithms.md, "Graph
 * mapping").
 */
#ifndef TOPOPLACE_GRAPHMAP_H
#define TOPOPLACE_GRAPHMAP_H

#include <stdbool.h>
#include <stdint.h>
#include <topoplace/error.h>
#include <topoplace/export.h>
#include <topoplace/alloc.h>
#include <topoplace/machine.h>
#include <topoplace/pattern.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tp_graphmap_opts {
	int refine_passes;       /* refinement passes (default 8; 0 = none) */
	double time_budget_ms;   /* <= 0: none.  The constructions stop with
				    TP_ETIME when it runs out (greedy checks
				    the clock as it places, bipartition
				    before each METIS call and does not
				    start one that would not fit);
				    refinement stops and keeps what it has */
	int seed;                /* METIS seed (default 1) */
	bool refine_congestion;  /* after the hop-bytes refinement, also lower
				    the maximum link congestion (default false;
				    the graph and auto policies set it for the
				    congestion metric) */
	bool congestion_keep_hops;  /* the congestion refinement refuses moves
				    that raise hop-bytes (default false) */
} tp_graphmap_opts;

#ifdef __cplusplus
}
#endif
#endif
