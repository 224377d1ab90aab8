/* topoplace — the machine: the part of <topoplace/machine.h> that is not
 * exported.  The core's modules, the unit tests, the benchmarks and the
 * fuzzers (all linked with the static archive) use it; the front ends and
 * outside programs see only the public header. */
#ifndef TOPOPLACE_MACHINE_INTERNAL_H
#define TOPOPLACE_MACHINE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <topoplace/machine.h>

/* Create an empty mesh/torus: ndims in 1..TP_MAX_DIMS, every dims[d] >= 1,
 * wrap[d] true for a wrapped (torus) dimension. */
int tp_machine_create(tp_machine **out, int ndims, const int *dims,
		      const bool *wrap, tp_error *err);
void tp_machine_destroy(tp_machine *m);
/* Nodes per router (>= 1, default 1): how many nodes may share one router. */
int tp_machine_set_nodes_per_router(tp_machine *m, int k, tp_error *err);
/* Link bandwidth per dimension (GB/s or any unit, > 0; default 1 each).
 * Tori and meshes only (TP_ENOTSUP otherwise; the query then gives 1). */
int tp_machine_set_link_bandwidth(tp_machine *m, const double *bw,
				  tp_error *err);
double tp_machine_link_bandwidth(const tp_machine *m, int dim);
/* Cost of one hop per dimension (tori and meshes; integers 1..1000000,
 * default 1 each).  With costs other than 1 every distance (and so
 * hop-bytes and dilation) is the weighted sum; routes still list links.
 * The config's Distance=bandwidth sets cost[d] = round(max bw / bw[d]).
 * Tori and meshes only (TP_ENOTSUP otherwise; the query then gives 1). */
int tp_machine_set_hop_cost(tp_machine *m, const int *cost, tp_error *err);
int tp_machine_hop_cost(const tp_machine *m, int dim);
/* Add a node at router coordinates coords[0..ndims-1].  Returns the new node's
 * index (>= 0) or a negative code: duplicate name, coordinates outside the
 * dimensions, or more than NodesPerRouter nodes on one router. */
int tp_machine_add_node(tp_machine *m, const char *name, const int *coords,
			tp_error *err);
bool tp_machine_wraps(const tp_machine *m, int d);    /* torus in dimension d? */
/* Distance between the routers of nodes a and b: minimal hops, or their
 * cost with hop costs or LevelCost=; -1 for a bad argument. */
int64_t tp_machine_distance(const tp_machine *m, int32_t a, int32_t b);
/* Same, from raw router coordinates (-1 when outside the dimensions). */
int64_t tp_machine_coord_distance(const tp_machine *m, const int *ca,
					    const int *cb);
/* The directed links used by the route from node a to node b, in order,
 * written to links[0..] (capacity cap); a message the other way travels
 * its links in the other direction, under their other ids.  Returns the
 * number of
 * links (on tori and meshes the hop count), or a negative code if cap is too
 * small.  Tori and meshes: id = (router * ndims + dim) * 2, plus 1 for the
 * way from the +1 neighbour back down. */
int tp_machine_route(const tp_machine *m, int32_t a, int32_t b,
		     int64_t *links, int cap);
/* Human-readable name of a directed link, after its sending end, e.g.
 * "(3,0,7)->+x" or "(4,0,7)->-x" (the same cable the other way). */
void tp_machine_link_name(const tp_machine *m, int64_t link, char *buf,
			  size_t len);

#endif
