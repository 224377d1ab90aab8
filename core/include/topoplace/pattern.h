/* topoplace — the job's communication pattern: a weighted, undirected task
 * graph in CSR form, with optional task coordinates.
 *
 * Every undirected edge {u,v} appears twice in the CSR arrays (in u's list and
 * in v's), both times with the same weight: the bytes exchanged between the two
 * tasks (both directions together).  Self-loops are never stored.  Neighbour
 * lists are sorted by task index.
 */
#ifndef TOPOPLACE_PATTERN_H
#define TOPOPLACE_PATTERN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <topoplace/error.h>
#include <topoplace/export.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tp_graph tp_graph;

TP_EXPORT void tp_graph_destroy(tp_graph *g);

/* How many input edges were summed into an earlier edge of the same pair
 * when the graph was built: for edge lists (undirected JSON graphs)
 * pairs in either direction; for JSON graphs with "directed": true
 * only repeats of the same ordered pair (u->v plus v->u is not a duplicate
 * there).  0 for stencils.  Lets callers say once that duplicates were
 * summed. */
TP_EXPORT int64_t tp_graph_merged_duplicates(const tp_graph *g);

/* Task coordinates: ncoord_dims 0 when the graph has none. */
TP_EXPORT int tp_graph_coord_dims(const tp_graph *g);
/* Row-major ntasks x coord_dims array, or NULL.  A stencil's coordinates
 * are its grid positions and are not stored: the array is made on the first
 * call (NULL if that runs out of memory) and lives as long as the graph, or
 * until tp_graph_set_coords.  Safe to call from several threads. */
TP_EXPORT const double *tp_graph_coords(const tp_graph *g);

/* ---- Builders ---- */

/* Stencil from a spec string:
 *   DIMS[:POINTS][:OPTION]...
 *   DIMS    = NxM or NxMxK (positive integers)
 *   POINTS  = 5pt | 9pt (2-D), 7pt | 27pt (3-D); default 5pt / 7pt
 *   OPTION  = periodic=AXES   axes that wrap: letters from xyz, "all" or "none"
 *             bytes=B         bytes per neighbour pair (default 1)
 *             weights=a,b[,c] per-dimension multipliers (default 1 each)
 * e.g. "64x32x32:7pt:periodic=x:bytes=4096:weights=2,1,1".
 * Tasks are numbered x fastest; task coordinates are the grid positions.
 * A diagonal neighbour (9pt, 27pt) carries bytes times the smallest weight of
 * the dimensions it moves in.  If expect_ntasks > 0 it must equal the product
 * of the dimensions. */
TP_EXPORT int tp_graph_from_stencil(tp_graph **out, const char *spec,
			  int64_t expect_ntasks, tp_error *err);

/* A training job's communication in one step, from its parallel layout
 * (doc/ai-clusters.md):
 *   tp=N,cp=N,ep=N,pp=N[,dp=N][,order=tp-cp-ep-dp-pp | mesh=pp,dp,cp,tp]
 *   [,bytes=tp:64,cp:32,ep:16,dp:8,pp:1]
 * order= is Megatron's (the first kind varies fastest, the default as
 * shown), mesh= torchtitan's (outermost first).  Unnamed sizes are 1; dp
 * defaults to ntasks over the others (ntasks 0: dp= must be given).  TP, CP
 * and DP groups all-reduce in NCCL's ring, EP groups all-to-all, pipeline
 * stages send to the next.  The rings follow map (task -> node index, as
 * NCCL orders a ring: nodes by their lowest rank); NULL: rank order.
 * Weights in bytes (bytes= volumes x 1 MiB). */
TP_EXPORT int tp_graph_from_parallel(tp_graph **out, const char *spec,
				     int64_t ntasks, const int32_t *map,
				     tp_error *err);

/* JSON graph file (see doc/algorithms.md, "The communication pattern"):
 *   { "tasks": N,
 *     "edges": [ [u, v, bytes], ... ]        or [ {"src":u,"dst":v,"bytes":b}, ...]
 *     "directed": false,                     optional; true sums u->v and v->u
 *     "coords": [ [x, y, z], ... ] }         optional, one row per task
 * If expect_ntasks > 0 the task count must match.  The file must be a
 * regular file of at most 1 GiB (opened without blocking: a FIFO is refused,
 * not waited on).  Byte counts, and their sum, must be finite. */
TP_EXPORT int tp_graph_from_json_file(tp_graph **out, const char *path,
			    int64_t expect_ntasks, tp_error *err);

#ifdef __cplusplus
}
#endif
#endif
