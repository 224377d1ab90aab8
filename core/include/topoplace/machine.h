/* topoplace — the machine: network shape, named nodes, distance and routing.
 *
 * Nodes hang off routers; a router sits at integer coordinates in a box of
 * 1..TP_MAX_DIMS dimensions, with a wrap-around flag per dimension.  Several
 * nodes may share one router (NodesPerRouter, as on Cray Gemini); they are 0
 * hops apart.  The kind of network (tp_machine_kind) decides distance and
 * routing: tori and meshes (below; the box is the network), switch trees and
 * dragonflies (further below; the box is an embedding for geometric mapping).
 * Distances are 64-bit: hop counts, or sums of hop costs.
 *
 * Tori and meshes: distance is the minimal hop count between the routers,
 * taking the shorter way round on every wrapped dimension.
 *
 * Routing model (for congestion): dimension-order routing, dimensions in
 * increasing order; on a wrapped dimension the shorter direction, and the
 * positive direction when both are equally short.  Links are full duplex:
 * the cable (r, d) joins router r to its +1 neighbour in dimension d
 * (wrapping on a torus), and each of its two directions is a link of its own
 * for congestion (directed link ids, below).
 */
#ifndef TOPOPLACE_MACHINE_H
#define TOPOPLACE_MACHINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <topoplace/error.h>
#include <topoplace/export.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TP_MAX_DIMS 6

typedef struct tp_machine tp_machine;

TP_EXPORT int tp_machine_nodes_per_router(const tp_machine *m);

TP_EXPORT int tp_machine_ndims(const tp_machine *m);
TP_EXPORT int tp_machine_dim(const tp_machine *m, int d);       /* extent of dimension d */
TP_EXPORT int32_t tp_machine_node_count(const tp_machine *m);
/* The node's name, valid as long as the machine; NULL for an index out of
 * range.  The names of a numbered run (a CoordOrder= range) are written out
 * the first time one of them is asked for (safe from several threads), so
 * NULL also means that memory ran out then. */
TP_EXPORT const char *tp_machine_node_name(const tp_machine *m, int32_t node);
TP_EXPORT const int *tp_machine_node_coords(const tp_machine *m, int32_t node);
/* Index of the node called name, or -1. O(1) expected. */
TP_EXPORT int32_t tp_machine_find_node(const tp_machine *m, const char *name);
/* Linear router id of a node: x + X*(y + Y*(z + ...)). */
TP_EXPORT int64_t tp_machine_router_of(const tp_machine *m, int32_t node);
TP_EXPORT int64_t tp_machine_router_count(const tp_machine *m);

/* The kind of network, for reports: "torus" (any dimension wraps), "mesh",
 * "tree", "dragonfly", "block", "ring" or "tori"; NULL for a NULL machine.
 * To decide what a machine offers, ask tp_machine_has: new kinds come with
 * new names, not with new capabilities. */
TP_EXPORT const char *tp_machine_kind(const tp_machine *m);

/* What a network offers beyond distance and routing, whatever its kind:
 *   TP_CAP_COORDINATES  the router coordinates are the network's own
 *                       geometry: routers next to each other in the box are
 *                       next to each other in the network, a wrapped axis
 *                       wraps (tori, meshes; rings and toruses side by side
 *                       inside each one).  Elsewhere the box is only an
 *                       embedding for geometric mapping (a tree's
 *                       depth-first order, a dragonfly's (router, group), a
 *                       block network's node numbers).
 *   TP_CAP_HIERARCHY    groups nested level by level, for the hierarchical
 *                       mapper (switch trees, dragonflies, block networks,
 *                       rings and toruses side by side).
 *   TP_CAP_SWITCHES     a switch tree whose leaves are the machine's nodes:
 *                       tp_machine_switch_* and tp_machine_node_switch
 *                       describe it (Slurm's topology/tree; the tree between
 *                       the blocks of a block network is one).
 *   TP_CAP_GROUPS       a two-level network of groups of routers (dimension
 *                       0 the router in its group, dimension 1 the group): a
 *                       dragonfly.
 *   TP_CAP_BLOCKS       blocks of nodes joined by a network (Slurm's
 *                       topology/block).
 * Values are stable; a later release may add more. */
enum tp_machine_cap {
	TP_CAP_COORDINATES = 0,
	TP_CAP_HIERARCHY = 1,
	TP_CAP_SWITCHES = 2,
	TP_CAP_GROUPS = 3,
	TP_CAP_BLOCKS = 4,
};
/* Does machine m offer cap?  false for a NULL machine or an unknown cap.
 * The query to use wherever a front end or mapper decides by the network. */
TP_EXPORT bool tp_machine_has(const tp_machine *m, enum tp_machine_cap cap);

/* Number of directed link ids: every full-duplex link counts once per
 * direction (tori and meshes: router_count * ndims * 2, some unused on
 * meshes). */
TP_EXPORT int64_t tp_machine_link_count(const tp_machine *m);
/* The routers a directed link joins, for pictures: the coordinates of the
 * router it leaves into ca, of the one it reaches into cb (ndims values
 * each).  Tori and meshes: id cable * 2 runs from r to its +1 neighbour
 * along d (cable = r * ndims + d), cable * 2 + 1 back; dragonflies: the two
 * routers of a local link, or the routers a global link leaves from in
 * either group, in the link's direction (the other direction is another
 * id).  Returns 0, TP_ENOENT
 * for an id no link has (the far end of a mesh line, unused dragonfly ids),
 * TP_EINVAL out of range, TP_ENOTSUP on trees (their links join switches:
 * tp_machine_switch_parent). */
TP_EXPORT int tp_machine_link_ends(const tp_machine *m, int64_t link, int *ca,
				   int *cb);

/* ---- Switch trees (TP_CAP_SWITCHES), for pictures and reports ----
 * Slurm's topology/tree, and the tree between the blocks of a block
 * network.  The machine's one dimension numbers the node's switch in
 * depth-first order. */
/* Link bandwidths per level were given (LevelBandwidth=): congestion on
 * the tree is then in bytes / bandwidth. */
TP_EXPORT bool tp_machine_has_level_bandwidth(const tp_machine *m);
TP_EXPORT int32_t tp_machine_switch_count(const tp_machine *m);
TP_EXPORT const char *tp_machine_switch_name(const tp_machine *m, int32_t s);
/* The tree's shape, for pictures: the switch above switch s (-1 for a top
 * one: the top, or each tree's top in a forest; or a bad argument), s's
 * level (leaf switches 0, a switch above them one more than the highest
 * switch below it; -1 for a bad argument), and the switch machine node
 * `node` hangs off (-1 for a bad argument).  Link ids (tp_machine_route,
 * tp_metrics_link_loads; directed): the link above switch s is 2s going up
 * and 2s + 1 coming down (in a forest, a top's link to the virtual top
 * switch); tp_machine_node_link is the id of machine node `node`'s link up
 * to its switch, that id + 1 the way down (-1 for a bad argument). */
TP_EXPORT int32_t tp_machine_switch_parent(const tp_machine *m, int32_t s);
TP_EXPORT int tp_machine_switch_level(const tp_machine *m, int32_t s);
TP_EXPORT int32_t tp_machine_node_switch(const tp_machine *m, int32_t node);
TP_EXPORT int64_t tp_machine_node_link(const tp_machine *m, int32_t node);

/* Separate trees with nodes: 1 for a tree, more for a forest, 0 when the
 * machine is no switch tree. */
TP_EXPORT int32_t tp_machine_tree_count(const tp_machine *m);

#ifdef __cplusplus
}
#endif
#endif
