/* topoplace — graph mapping: mapping task graphs that have no coordinates.
 * Not exported: the policy layer (place.c) calls it; the public part is
 * tp_graphmap_opts (<topoplace/graphmap.h>), inside tp_place_opts.
 *
 * Three building blocks, all deterministic and valid for heterogeneous slots
 * and for fewer tasks than slots (a subset of the slots is used):
 *
 *   greedy growth     start from the task with the most bytes, on the
 *                     allocated node nearest the allocation's centre; then
 *                     repeatedly take the unmapped task with the most bytes to
 *                     already mapped tasks and put it on the free node that
 *                     costs least against its mapped neighbours, among the
 *                     free node nearest the weighted centroid of their nodes
 *                     (k-d tree search with free-slot counts, O(log nodes)
 *                     typical) and the neighbours' own nodes.  Ties: lower
 *                     index.
 *   bipartition       recursive bipartitioning of the task graph (its own
 *                     multilevel partitioner, bisect.c: exact part sizes,
 *                     fixed seed) paired with a median cut
 *                     of the nodes along the longest extent of their
 *                     seam-shifted coordinates, sized by slots; at each level
 *                     the two task halves go to the two node halves in the
 *                     order (direct or exchanged) that costs less against the
 *                     provisional positions of the tasks outside the part
 *                     (the hierarchical mapping paper's pairing test).
 *   refinement        passes over the tasks trying moves to free slots and
 *                     swaps with tasks on the nodes of their neighbours; a
 *                     change is kept only when it lowers hop-bytes (delta
 *                     computed from the two tasks' edges).  With the same
 *                     slots on every node (tp__refine_by_groups), the same
 *                     passes first move every node's tasks as one (the
 *                     graph contracted by the mapping).  Never increases
 *                     hop-bytes.
 *
 *   hierarchical      on switch trees, dragonflies and block networks: the
 *                     tasks split over the hierarchy's groups level by
 *                     level with exact capacities (tp_graphmap_hierarchical
 *                     below).
 *
 * Disconnected task graphs are valid input: greedy growth starts a new seed
 * next to the last placed task when a component is exhausted, the
 * bipartition splits them as they are.  Graphs without edges map in task order.
 */
#ifndef TOPOPLACE_GRAPHMAP_INTERNAL_H
#define TOPOPLACE_GRAPHMAP_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <topoplace/graphmap.h>

void tp_graphmap_opts_default(tp_graphmap_opts *o);
/* Does the hop-bytes refinement move nodes' groups first on a? (every node
 * the same slots, at least 2, and 2 nodes or more) */
bool tp__refine_by_groups(const tp_alloc *a);
/* What the hop-bytes refinement spends before its first move, in ms: set a
 * little below its measured cost.  Moving nodes' groups first, it
 * contracts the graph in about that time instead (5-18 ns an entry), and
 * the tasks' set-up waits until the groups are done. */
double tp__refine_setup_ms(const tp_graph *g);
/* map[t] receives the allocation index of task t's node.  The result is
 * refined when o->refine_passes > 0.  o may be NULL (defaults).
 * Bipartition splits with its own partitioner (bisect.h), not METIS, so its
 * splits run side by side; it uses every CPU the process may use. */
int tp_graphmap_greedy(const tp_graph *g, const tp_alloc *a,
		       const tp_graphmap_opts *o, int32_t *map, tp_error *err);
int tp_graphmap_bipartition(const tp_graph *g, const tp_alloc *a,
			    const tp_graphmap_opts *o, int32_t *map,
			    tp_error *err);
/* tp_graphmap_bipartition on at most threads threads (0: one per CPU the
 * process may use); the result does not depend on the count. */
int tp__graphmap_bipartition_threads(const tp_graph *g, const tp_alloc *a,
				     const tp_graphmap_opts *o, int threads,
				     int32_t *map, tp_error *err);
/* Hierarchical mapping on networks that are hierarchies (switch trees:
 * the switches from the top down; dragonflies: groups, then routers; block
 * networks: the switches above the blocks, then the blocks): the
 * tasks are split over the children of each group with METIS, every child
 * taking exactly as many tasks as it has slots (the largest children first
 * when there are fewer tasks than slots), level by level down to the nodes.
 * Refined like the other constructions when o->refine_passes > 0.
 * TP_ENOTSUP on tori and meshes; TP_ETIME when the budget runs out before
 * the last split. */
int tp_graphmap_hierarchical(const tp_graph *g, const tp_alloc *a,
				       const tp_graphmap_opts *o, int32_t *map,
				       tp_error *err);
/* PERCS mod-colour halo mapping (Chakaravarthy et al.) for 2-D grid patterns
 * (stencils NxM, or NxMx1) on two-level networks (Network=dragonfly): the
 * block grid is coloured two rows at a time, row 2j with colours j*q + y and
 * row 2j+1 with j*q + ((5y + 2) mod q), so that each group's blocks have at
 * most one neighbouring block in any other group (perfect when the block rows
 * are a multiple of four and the block columns a power of two >= 8); colour c
 * goes to the c-th group of the allocation.  The block layout is chosen so
 * that the colours match the allocation's groups when the grid allows it.
 * Valid for any slot counts (tasks then fill the slots in colour order).  Not
 * refined.  TP_ENOTSUP when the pattern is not a 2-D grid, the network is not
 * a dragonfly, the allocation lies in one group, or no grid side is even. */
int tp_graphmap_modcolor(const tp_graph *g, const tp_alloc *a,
			 const tp_graphmap_opts *o, int32_t *map, tp_error *err);
/* Swap/move refinement of a valid mapping in place (o->refine_passes passes
 * at most, stopping early when a pass changes nothing).  *moves (may be NULL)
 * receives the number of changes made. */
int tp_graphmap_refine(const tp_graph *g, const tp_alloc *a,
		       const tp_graphmap_opts *o, int32_t *map,
		       int64_t *moves, tp_error *err);
/* tp_graphmap_refine on at most threads threads (0: one per CPU the process
 * may use); the result does not depend on the count.  stop (may be NULL)
 * ends it, as its budget would, once set. */
int tp__graphmap_refine_threads(const tp_graph *g, const tp_alloc *a,
				const tp_graphmap_opts *o, int threads,
				const atomic_bool *stop, int32_t *map, int64_t *moves,
				tp_error *err);
/* tp_graphmap_refine where a moved task's neighbour of at most
 * recost_degree edges is costed again and one of more takes the move's
 * difference (the default: REFINE_RECOST_DEGREE); the same result either
 * way, up to rounding (for the tests). */
int tp__graphmap_refine_recost(const tp_graph *g, const tp_alloc *a,
			       const tp_graphmap_opts *o, int recost_degree,
			       int32_t *map, int64_t *moves, tp_error *err);
/* Congestion refinement of a valid mapping in place: for the tasks with a
 * message across a link loaded at 85 % of the maximum or more (under the
 * machine's routing, both directions of every edge), moves to free slots and
 * swaps with tasks on their neighbours' nodes are kept when no link they
 * touch ends above the current maximum and the sum over those links of
 * (load / initial maximum)^8 drops: the heaviest links dominate it, so the
 * maximum goes first, and lightening links just below it makes room.  Never
 * increases the maximum link load; hop-bytes may grow, unless
 * o->congestion_keep_hops. */
/* tp_graphmap_refine_congestion on the time model's fabric (lanes,
 * predict_internal.h), each lane's load in seconds: it lowers the busiest
 * lane, where the predicted exchange waits.  o->congestion_keep_hops as
 * there. */
int tp__graphmap_refine_lanes(const tp_graph *g, const tp_alloc *a,
			      const tp_graphmap_opts *o, int32_t *map,
			      int64_t *moves, tp_error *err);
/* The same with each message's bytes counted (1 + hop_weight x its
 * links) times: long routes weigh more, as they do where the fabric
 * shares by round-trip time (FlowSharing=rtt), and where latency adds up
 * along them.  rounds_guard: no move may raise the latency of g's
 * collectives' rounds (rounds_guard.h).  On up to `threads` threads (a
 * team, graphmap_lanes.c), and those lender lends meanwhile (may be
 * NULL): the same result on any number. */
struct tp__lender;
int tp__graphmap_refine_lanes_hops(const tp_graph *g, const tp_alloc *a,
				   const tp_graphmap_opts *o, double hop_weight,
				   bool rounds_guard, int threads,
				   struct tp__lender *lender, int32_t *map,
				   int64_t *moves, tp_error *err);
/* The same, unweighted and unguarded, with *told: the tasks whose verdict
 * a helper's try ahead gave (graphmap_lanes.c's team_tasks; for the
 * tests). */
int tp__graphmap_refine_lanes_told(const tp_graph *g, const tp_alloc *a,
				   const tp_graphmap_opts *o, int threads,
				   struct tp__lender *lender, int32_t *map,
				   int64_t *moves, int64_t *told, tp_error *err);
/* The link-load refinements' first-order bound checked on every move
 * they would try from map (graphmap_lanes.c, for the tests): n[0] moves
 * the bound refuses, n[1] of them a full try would keep, n[2] bounds
 * apart from the sum written out an edge at a time. */
int tp__graphmap_bound_audit(const tp_graph *g, const tp_alloc *a,
			     const int32_t *map, bool lanes, int64_t n[3], tp_error *err);
int tp_graphmap_refine_congestion(const tp_graph *g, const tp_alloc *a,
				  const tp_graphmap_opts *o, int32_t *map,
				  int64_t *moves, tp_error *err);
/* tp_graphmap_refine_congestion on up to `threads` threads (a team,
 * graphmap_lanes.c), and those lender lends meanwhile (may be NULL): the
 * same result on any number.  stop as tp__graphmap_refine_threads's. */
int tp__graphmap_refine_congestion_threads(const tp_graph *g, const tp_alloc *a,
					  const tp_graphmap_opts *o, int threads,
					  struct tp__lender *lender,
					  const atomic_bool *stop, int32_t *map,
					  int64_t *moves, tp_error *err);

/* Hierarchical mapping (hiermap.c) with each group's tasks split over its
 * children by the tasks' coordinates instead of METIS: recursive
 * bisection along the longest extent, every child getting exactly its
 * count (policy auto's candidate "hier-coords", for tasks with
 * coordinates; no METIS needed).  TP_EINVAL without task coordinates,
 * otherwise as tp_graphmap_hierarchical. */
int tp__graphmap_hier_coords(const tp_graph *g, const tp_alloc *a,
			     const tp_graphmap_opts *o, int32_t *map,
			     tp_error *err);
/* Whether hier-coords can follow g's tasks as boxes of a stencil's grid
 * (a regular allocation then costs a pass writing the map, not a pass
 * over the tasks per level of bisection). */
bool tp__hier_coords_boxes(const tp_graph *g);
/* A split's lower cost per task and level of bisection below it, set
 * below its measured cost; a
 * split that would not fit its deadline even so is not started. */
#define TP__HIER_COORDS_NS_PER_TASK_LEVEL 15.0

#endif
