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
 *                       the blocks of a block network, tp_machine_block_tree,
 *                       is one).
 *   TP_CAP_GROUPS       a two-level network of groups of routers (dimension
 *                       0 the router in its group, dimension 1 the group):
 *                       tp_machine_dragonfly_* describe it.
 *   TP_CAP_BLOCKS       blocks of nodes joined by a network (Slurm's
 *                       topology/block): tp_machine_block_* describe them.
 * Values are stable; a later release may add more. */
enum tp_machine_cap {
	TP_CAP_COORDINATES = 0,
	TP_CAP_HIERARCHY = 1,
	TP_CAP_SWITCHES = 2,
	TP_CAP_GROUPS = 3,
	TP_CAP_BLOCKS = 4,
};
/* Does machine m offer cap?  false for a NULL machine or an unknown cap.
 * The query to use wherever a front end or mapper decides by the network:
 * tp_machine_is_tree, tp_machine_is_dragonfly and tp_machine_is_block are
 * the same questions for TP_CAP_SWITCHES, TP_CAP_GROUPS and TP_CAP_BLOCKS,
 * kept for existing callers. */
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

/* ---- Switch trees (Slurm's topology.conf, topology/tree) ----
 *
 * Build a machine from the text of a topology.conf: lines
 *   SwitchName=NAME Nodes=HOSTLIST|Switches=HOSTLIST [LinkSpeed=N]
 * (LinkSpeed is ignored).  What slurmctld 26.05 refuses is refused: a
 * switch with both Nodes= and Switches=, a duplicate switch, a child not
 * defined or the switch itself, a loop ("not a tree"), a name over 64
 * characters.  What it accepts with a warning is accepted (tp_conf_warning
 * tells, through topoplace.conf): a forest, whose trees' tops go under a
 * virtual top switch "(forest)" with links of the top level's cost
 * (topoplace.conf's ForestCost= sets it); a node or switch listed under two
 * switches, which stays under the first in file order; a switch with
 * neither nodes nor switches (refused before 25.05).  Nodes are added in depth-first switch order.  Nodes on the
 * same switch are 0 hops
 * apart; otherwise the distance is the cost of the links up to the lowest
 * common switch and down again, the link above a level-l switch (leaf
 * switches are level 0) costing level_cost[l] (nlevels values: 0 = all 1,
 * 1 = the same for every level, else one per level of links).  The machine
 * has one dimension (the number of the node's switch in depth-first order,
 * no wrap); routing is up/down, the link above switch (or node) s is id 2s
 * going up ("leaf0->agg0") and 2s + 1 going down ("agg0->leaf0"), and a
 * route's length counts links, not cost.  what names the file in messages
 * ("topology.conf:7: ..."). */
TP_EXPORT int tp_machine_from_topology(tp_machine **out, const char *text,
			     const char *what, const int *level_cost,
			     int nlevels, tp_error *err);
/* tp_machine_has(m, TP_CAP_SWITCHES), its older spelling. */
TP_EXPORT bool tp_machine_is_tree(const tp_machine *m);
/* Link bandwidth per level of links (LevelBandwidth=; nlevels 1 = the same
 * for every level, else one per level, leaf links first; 0 clears).  With
 * it, congestion on the tree is measured in bytes / bandwidth (time-like
 * units, e.g. seconds for bytes over bytes/s) instead of bytes: a route
 * adds bytes / bandwidth to each link it crosses. */
TP_EXPORT int tp_machine_set_tree_level_bandwidth(tp_machine *m, const double *bw,
					int nlevels, tp_error *err);
TP_EXPORT bool tp_machine_has_level_bandwidth(const tp_machine *m);
/* Levels of links in the tree (0 for a single switch, or not a tree). */
TP_EXPORT int tp_machine_tree_levels(const tp_machine *m);
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

/* ---- Dragonflies (two-level, PERCS-style) ----
 *
 * groups groups of routers_per_group routers, fully connected inside a group,
 * links_per_group_pair global links between every two groups, nodes_per_router
 * nodes on each router.  Router coordinates are (router, group): dimension 0
 * is the router in its group, dimension 1 the group (a mesh embedding for
 * geometric mapping; distances use the dragonfly).  Global link k between
 * groups g and h leaves group g at router ((h - g - 1 mod G) * L + k) mod A.
 * Distance: 0 on one router, 1 inside a group, else the fewest of local +
 * global + local hops over the L global links.  Congestion routing: minimal
 * ("direct"), or Valiant through a third group chosen by a hash of the two
 * routers (valiant = true). */
TP_EXPORT int tp_machine_create_dragonfly(tp_machine **out, int groups,
				int routers_per_group, int nodes_per_router,
				int links_per_group_pair, bool valiant,
				tp_error *err);
/* tp_machine_has(m, TP_CAP_GROUPS), its older spelling. */
TP_EXPORT bool tp_machine_is_dragonfly(const tp_machine *m);
/* LinksPerGroupPair (0 when not a dragonfly). */
TP_EXPORT int tp_machine_dragonfly_links(const tp_machine *m);
/* Valiant congestion routing? (false when not a dragonfly) */
TP_EXPORT bool tp_machine_dragonfly_valiant(const tp_machine *m);

/* Congestion routing on a dragonfly: minimal ("direct"), non-minimal
 * (Valiant), or adaptive: a share of the traffic non-minimal, the rest
 * minimal, as UGAL-style adaptive routing spreads it in steady state.  The
 * share is dealt by router pair (a pair's traffic goes one way, chosen by
 * a hash of the two routers below the share), so over a job's many router
 * pairs that share of the traffic takes the Valiant way; distances stay
 * minimal. */
enum tp_dfly_routing { TP_DFLY_DIRECT = 0, TP_DFLY_VALIANT, TP_DFLY_ADAPTIVE };
/* share: the non-minimal fraction (0..1) for TP_DFLY_ADAPTIVE, else
 * ignored. */
TP_EXPORT int tp_machine_set_dragonfly_routing(tp_machine *m,
					       enum tp_dfly_routing r,
					       double share, tp_error *err);
TP_EXPORT enum tp_dfly_routing tp_machine_dragonfly_routing(const tp_machine *m,
							    double *share);
/* "direct", "valiant", "adaptive" */
TP_EXPORT const char *tp_dfly_routing_name(enum tp_dfly_routing r);

/* ---- Blocks (Slurm's topology/block: NVLink domains, e.g. GB200 NVL72) ----
 *
 * Build a machine from the text of a topology.conf for topology/block:
 *   BlockName=NAME Nodes=HOSTLIST     one base block per line (file order)
 *   BlockSizes=N0[,N1,...]            the base block size, then the sizes
 *                                     of the aggregated blocks Slurm
 *                                     enforces (N0 x a power of two);
 *                                     or 23.11's BlockLevels=
 * As Slurm 25.05 and later, a block may hold fewer than N0 nodes, or none
 * (it keeps its place among the blocks); default N0: the node count of the
 * first block with nodes.  A node Slurm lists in two blocks counts in the
 * first (a warning).  Nodes are numbered block by block (one
 * dimension, the node number; one node per router).  Inside a block, nodes
 * talk over the block's NVLink switch: distance 2 (node to switch to node),
 * route = the two nodes' NVLink-domain links.  Between blocks, over the
 * network: a tree, from opts->tree_text (Slurm's topology/tree SwitchName=
 * lines holding every block node) or, without it, the aggregation Slurm
 * enforces (a leaf switch per block, a switch per aggregated block of each
 * enforced level, a top switch); distance = network_cost x the tree's link
 * count, routes up/down the tree.  Link ids (directed): node i's
 * NVLink-domain link is 2i up to the block's switch, 2i + 1 down from it;
 * the tree's directed link l is 2 x nodes + l.  With bandwidths (GB/s per direction)
 * congestion weighs bytes / bandwidth: block_bandwidth on NVLink-domain
 * links, network_bandwidth on node ports, the switch links of the generated
 * tree non-blocking (network_bandwidth x the nodes below), those of a tree
 * file at network_bandwidth or the level bandwidths given.  Errors name the
 * file and line. */
typedef struct tp_block_opts {
	const char *tree_text;        /* the tree between the blocks, or NULL */
	const char *tree_what;        /* its name in messages */
	double block_bandwidth;       /* a node's NVLink-domain link; 0: none */
	double network_bandwidth;     /* a node's network port; 0: none (give
					 both or neither) */
	int network_cost;             /* cost of a network link relative to an
					 NVLink-domain link (2..1000000; 0:
					 block / network bandwidth when both
					 are given, else 4) */
	const double *level_bandwidth;   /* tree_text's LevelBandwidth=, or NULL */
	int nlevel_bandwidth;
} tp_block_opts;
TP_EXPORT int tp_machine_from_blocks(tp_machine **out, const char *text,
				     const char *what, const tp_block_opts *opts,
				     tp_error *err);
/* tp_machine_has(m, TP_CAP_BLOCKS), its older spelling. */
TP_EXPORT bool tp_machine_is_block(const tp_machine *m);
TP_EXPORT int32_t tp_machine_block_count(const tp_machine *m);
TP_EXPORT const char *tp_machine_block_name(const tp_machine *m, int32_t b);
/* The block of a node (-1 for a bad index or not a block network). */
TP_EXPORT int32_t tp_machine_node_block(const tp_machine *m, int32_t node);
TP_EXPORT int tp_machine_block_base_size(const tp_machine *m);
TP_EXPORT int tp_machine_block_network_cost(const tp_machine *m);
/* The tree between the blocks (owned by m), NULL when not a block network. */
TP_EXPORT const tp_machine *tp_machine_block_tree(const tp_machine *m);

#ifdef __cplusplus
}
#endif
#endif
