/* topoplace — metrics that judge a mapping.
 *
 * A mapping is an array map[t] = i: task t runs on the i-th node of the
 * allocation (0 <= i < tp_alloc_nnodes).  Hops are measured between the routers
 * of the two nodes (the machine's distance).
 *
 * Definitions (edges are the undirected edges of the task graph, w = bytes):
 *   hop_bytes        = sum over edges of w * hops
 *   avg_hop_bytes    = hop_bytes / total bytes  ("average hops per byte";
 *                      equals Scotch gmtst's CommExpan on the same input)
 *   avg_dilation     = mean hops over edges, unweighted (Scotch CommDilat)
 *   max_dilation     = largest hops of any edge (64-bit: with hop costs a
 *                      distance may exceed the range of int)
 *   congestion       = links are full duplex, each direction a link of its
 *                      own (Scotch's and SimGrid's link model); an edge
 *                      {u, v} of w bytes is a symmetric exchange: a message
 *                      of w bytes from u to v and one of w bytes from v to u,
 *                      each routed from its sender's node to its receiver's
 *                      under the machine's routing model (the two routes may
 *                      differ, e.g. dimension order from either end).  A
 *                      directed link's load is the bytes (and the number of
 *                      messages) of the routes crossing it in its direction;
 *                      max_congestion_* is the largest load over all directed
 *                      links.  On switch trees with LevelBandwidth= a route
 *                      adds bytes / bandwidth of the link's level instead of
 *                      bytes (time-like units); max_congestion_bytes then
 *                      holds that.  (Earlier versions routed each edge once,
 *                      lower task to higher, and both directions of a link
 *                      shared one load.)
 *   frac_intra_node  = bytes of edges whose two tasks share a node / total
 *   frac_intra_router= bytes of edges whose tasks share a router / total
 */
#ifndef TOPOPLACE_METRICS_H
#define TOPOPLACE_METRICS_H

#include <stdint.h>
#include <topoplace/error.h>
#include <topoplace/export.h>
#include <topoplace/alloc.h>
#include <topoplace/machine.h>
#include <topoplace/pattern.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tp_metrics {
	int64_t nedges;
	double total_bytes;
	double hop_bytes;
	double avg_hop_bytes;
	double avg_dilation;
	int64_t max_dilation;
	double max_congestion_bytes;
	int64_t max_congestion_msgs;
	double frac_intra_node;
	double frac_intra_router;
} tp_metrics;

enum tp_metric_kind {
	TP_METRIC_HOP_BYTES = 0,   /* minimise hop_bytes */
	TP_METRIC_CONGESTION = 1,  /* minimise max_congestion_bytes, then hop_bytes */
};

TP_EXPORT const char *tp_metric_name(enum tp_metric_kind k);

/* Check that map is a valid mapping of g onto a: every entry in range and no
 * node given more tasks than its slots. */
TP_EXPORT int tp_mapping_validate(const tp_graph *g, const tp_alloc *a,
			const int32_t *map, tp_error *err);

/* All metrics. want_congestion=false skips the routing pass (faster). */
TP_EXPORT int tp_metrics_compute(const tp_graph *g, const tp_alloc *a,
		       const int32_t *map, bool want_congestion,
		       tp_metrics *out, tp_error *err);

/* Hop-bytes alone: the fast path used to score candidate mappings. */
TP_EXPORT double tp_metrics_hop_bytes(const tp_graph *g, const tp_alloc *a,
			    const int32_t *map);

typedef struct tp_congestion_ws tp_congestion_ws;

/* Every link's load under the routing model, as the congestion metric
 * counts it (pictures, reports): loads[l] for every link id l in
 * 0..nlinks-1, nlinks = tp_machine_link_count() of the allocation's machine
 * (bytes; bytes / bandwidth on trees with LevelBandwidth=), and msgs[l] the
 * number of routes crossing it (msgs may be NULL).  Both arrays are
 * overwritten; their largest entries are max_congestion_bytes and _msgs. */
TP_EXPORT int tp_metrics_link_loads(const tp_graph *g, const tp_alloc *a,
				    const int32_t *map, double *loads,
				    int64_t *msgs, int64_t nlinks,
				    tp_error *err);

#ifdef __cplusplus
}
#endif
#endif
