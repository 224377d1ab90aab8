/* topoplace — the network interface: what one kind of network provides.
 *
 * A machine (machine.c) holds what every network shares: the nodes and their
 * names, the routers they sit on (several nodes per router), and the box of
 * integer router coordinates the routers are embedded in (ndims, dims, wrap;
 * geometric mapping works in that box).  Everything that depends on the kind
 * of network — distance, routing, link numbering and names, the congestion
 * weights of the links — comes from the kind: one table of operations,
 * struct tp_net_ops, with the kind's own data in m->net_data.  One file per
 * kind:
 *
 *   torus.c      tori and meshes           tp_machine_create
 *   tree.c       switch trees (Slurm's     tp__tree_from_records
 *                topology/tree)
 *   dragonfly.c  two-level dragonflies     tp_machine_create_dragonfly
 *   block.c      NVLink domains (Slurm's   tp__blocks_from_records
 *                topology/block) joined
 *                by a tree
 *   torus3d.c    tori side by side that    tp__tori_new, and
 *                share no link (Slurm's    tp__torus3d_from_records (one
 *                toruses, kind "tori";     torus: torus.c's machine)
 *                rings, kind "ring")
 *   ring.c       (Slurm's topology/ring    tp__rings_from_records
 *                records into tori)
 *
 * Slurm's own files reach the kinds as records (net/records.h), never as
 * text: slurm/topology_conf.c reads topology.conf, slurm/slurm_yaml.c
 * topology.yaml, slurm_topology.c finds the file slurmctld reads and the
 * topology of a partition; conf/ hands the records to the builders
 * (conf_records.c: tp_machine_from_topology, tp_machine_from_blocks,
 * tp__rings_from_conf_text; conf_slurm_build.c: Slurm's chosen topology).
 *
 * A new kind is one new file here: fill in a tp_net_ops (its caps say what it
 * offers), build the machine with tp__machine_new(), add its nodes with
 * tp_machine_add_node(), list the file in the Makefile's CORE_SRC, its
 * machines in the tables below; for topoplace.conf, its keys and build in
 * a struct tp__conf_kind of its own file conf/kind_NAME.c (conf_kind.h)
 * listed in conf/kinds.c.  Nothing else in the core names a kind:
 * the mappers and the front ends ask tp_machine_has() what a machine
 * offers (coordinates, a hierarchy, switches, groups, blocks) and then the
 * queries of that capability; tp_machine_kind() is only printed.  Besides the
 * table a kind may set two machine fields that hot loops read directly:
 * m->plain_hops (below) and m->link_weight, its per-link congestion weights
 * (a table in its own data; NULL = every link weighs 1).
 *
 * Links are directed.  Every physical link is full duplex,
 * as Scotch's and SimGrid's link models have it: its two directions are two
 * link ids, loaded independently, and a route lists the ids of the
 * directions it travels, in order.  So route(a, b) and route(b, a) share no
 * id, link_count counts directed ids (twice the cables, plus any unused
 * ids), link_name names one direction ("(3,0,7)->+x", "leaf0->agg0",
 * "g1->g4#0"), and m->link_weight has one entry per directed id.  The
 * metrics route both directions of every task-graph edge (metrics.h).  A
 * kind only has to number its directions; nothing else changes: torus.c uses
 * cable * 2 + direction, tree.c 2 * switch (up) and 2 * switch + 1 (down),
 * dragonfly.c ordered (from, to) pairs.
 *
 * Distances are int64_t everywhere.  Each kind keeps its distances inside
 * that range by construction (tori: at most 6 x 2^31 hops x 10^6 per hop;
 * trees: fewer than 2^32 links of cost < 2^31 on any path; dragonflies: at
 * most 3 hops) or rejects the machine with an error line.
 *
 * Fast path: distance sits in the hottest loops (metrics, geometric search
 * scoring, graph refinement).  When m->plain_hops is set — a torus or mesh
 * whose hops all cost 1 — tp__coord_dist() and tp__range_lower_bound() work
 * inline on the coordinate box; every other machine pays one indirect call.
 * The metrics go further and keep their own loops specialised by dimension
 * count for plain_hops machines (metrics.c).
 */
#ifndef TOPOPLACE_NETWORK_H
#define TOPOPLACE_NETWORK_H

#include <stddef.h>
#include <stdint.h>

#include "net/machine_internal.h"

/* A capability's bit in struct tp_net_ops' caps. */
#define TP__CAP(cap) (1u << (cap))

struct tp_net_ops {
	/* "torus", "mesh", "tree", "dragonfly", ... (tp_machine_kind): for
	 * reports only, nothing decides on it. */
	const char *kind;

	/* What the kind offers (tp_machine_has, machine.h): TP__CAP() of
	 * TP_CAP_COORDINATES, TP_CAP_SWITCHES, TP_CAP_GROUPS, TP_CAP_BLOCKS.
	 * TP_CAP_HIERARCHY is not listed here: a kind has it when it fills in
	 * hierarchy (below). */
	unsigned caps;

	/* Distance between the routers at coordinates a and b (ndims values
	 * each): what hop-bytes and dilation sum; >= 0.  Never called when
	 * m->plain_hops is set (tp__coord_dist computes it inline). */
	int64_t (*distance)(const struct tp_machine *m, const int *a,
			    const int *b);

	/* A lower bound of distance(p, r) over every router r inside the box
	 * lo <= r <= hi (per coordinate): graphmap's k-d search prunes boxes
	 * with it.  0 when p is inside. */
	int64_t (*range_lower_bound)(const struct tp_machine *m, const int *p,
				     const int *lo, const int *hi);

	/* The directed links a message from router a to router b crosses, in
	 * order, written to links[0..cap-1]: the ids of the directions it
	 * travels (a full-duplex cable has one id per direction).  Returns how
	 * many, or TP_EINVAL when cap is too small (or links is NULL for a
	 * non-empty route). */
	int (*route)(const struct tp_machine *m, const int *a, const int *b,
		     int64_t *links, int cap);

	/* The most links any route crosses: the size of a route buffer, and
	 * the congestion score's normaliser. */
	int64_t (*max_route_links)(const struct tp_machine *m);

	/* Directed link ids run over 0..link_count - 1 (some may be
	 * unused). */
	int64_t (*link_count)(const struct tp_machine *m);

	/* A readable name of directed link 0 <= link < link_count into buf,
	 * "from->to" style. */
	void (*link_name)(const struct tp_machine *m, int64_t link, char *buf,
			  size_t len);

	/* The coordinates of the two routers link 0 <= link < link_count
	 * joins, into a and b (ndims values each): 0, or TP_ENOENT for an id
	 * no link has.  NULL: the links do not join routers (trees: their
	 * links join switches), tp_machine_link_ends says TP_ENOTSUP. */
	int (*link_ends)(const struct tp_machine *m, int64_t link, int *a,
			 int *b);

	/* Optional (NULL: route() alone), for kinds whose every route is one
	 * run of consecutive links along a ring or line per dimension (tori
	 * and meshes), so that counting many routes costs a few additions
	 * each, not one a hop: the links route() gives from router a to b,
	 * added as k messages to diff, a difference array with one entry a
	 * link id (+k where a run starts, -k after its end while that is on
	 * its ring); returns the route's length.  route_diff_sum then makes
	 * the whole array every link's count (prefix sums along each ring,
	 * modulo 2^32: exact while the counts fit). */
	int (*route_diff)(const struct tp_machine *m, const int *a, const int *b,
			  uint32_t k, uint32_t *diff);
	void (*route_diff_sum)(const struct tp_machine *m, uint32_t *diff);

	/* When the kind weighs its links (m->link_weight = 1 / bandwidth):
	 * the largest bandwidth, so that the smallest load step is bytes / it;
	 * 0 when loads are plain bytes.  NULL: 0. */
	double (*max_link_bandwidth)(const struct tp_machine *m);

	/* Free the kind's data (m->net_data, may be NULL).  NULL: nothing to
	 * free. */
	void (*destroy)(void *net_data);

	/* Optional (NULL: the kind is no hierarchy).  The
	 * groups that hold the router at coordinates r, from the top down,
	 * written to path[0..cap-1]: ids unique among their level (tree:
	 * the switches from the top switch down to the node's leaf switch;
	 * dragonfly: the group, then the router; block: the switches that
	 * hold the node's whole block, then the block).  Routers of one group are
	 * closer to each other than to any router outside it, and the groups
	 * under one parent are about equally far apart: the hierarchical
	 * mapper (hiermap.c) splits the tasks over them level by level.
	 * Returns the path's length (>= 0; paths may differ in length), or
	 * TP_EINVAL when cap is too small. */
	int (*hierarchy)(const struct tp_machine *m, const int *r,
			 int64_t *path, int cap);

	/* The time model (map/predict.c) routes each message over lanes: the
	 * fabric's cables, one id per direction, as the fabric routes them.
	 * They may be finer than the links above (a tree switch's parallel
	 * uplinks, one chosen per destination).  Each optional: NULL
	 * lane_route means the lanes are the links (route, link_count);
	 * NULL lane_bandwidth gives every lane m->fab.node_bw. */
	int64_t (*lane_count)(const struct tp_machine *m);
	int (*lane_route)(const struct tp_machine *m, const int *a,
			  const int *b, int64_t *lanes, int cap);
	/* bytes/s of one direction of a lane. */
	double (*lane_bandwidth)(const struct tp_machine *m, int64_t lane);
	/* bytes/s of a node's own port as lane_bandwidth weighs it, for what
	 * check-config says (a tree's follow its first level unless
	 * NodeBandwidth= is given).  NULL: m->fab.node_bw. */
	double (*node_port_bandwidth)(const struct tp_machine *m);
	/* Optional (NULL: one rail).  A rail-optimised fabric (tree.c's
	 * Rails=): every node has rails(m) network cards, one a rail, and a
	 * task's traffic leaves through the card of its rail (its local rank
	 * mod rails: the GPU choice keeps each local rank on its rail,
	 * job_node.c).  rail_route is lane_route from the card of rail ra on
	 * router a to that of rail rb on router b (0 <= ra, rb < rails). */
	int (*rails)(const struct tp_machine *m);
	int (*rail_route)(const struct tp_machine *m, const int *a,
			  const int *b, int ra, int rb, int64_t *lanes,
			  int cap);
	/* Routes begin and end with the nodes' own ports (a tree's, a block
	 * network's node links); otherwise the model adds each node's port,
	 * its injection and ejection at m->fab.node_bw. */
	bool routes_ports;
	/* Those added ports are cables, with a hop's latency (a dragonfly's
	 * NIC to its switch); false: the node sits on its router (tori), the
	 * port limits bandwidth only. */
	bool port_cables;
};

/* The members of a struct tp_net_ops that every kind fills in, with the
 * static functions of its file named as the members are. */
#define TP__NET_OPS_ROUTING \
	.distance = distance, \
	.range_lower_bound = range_lower_bound, \
	.route = route, \
	.max_route_links = max_route_links, \
	.link_count = link_count, \
	.link_name = link_name

/* The deepest hierarchy the hierarchical mapper handles (its cap). */
#define TP__HIER_MAX_LEVELS 64

/* A machine of the given kind over a coordinate box (ndims in
 * 1..TP_MAX_DIMS, every dims[d] >= 1, wrap NULL = no wrap) without nodes.
 * net_data is the kind's data: on success the machine owns it (freed by
 * net->destroy); on failure the caller still does.  plain_hops starts
 * false. */
int tp__machine_new(tp_machine **out, int ndims, const int *dims,
		    const bool *wrap, const struct tp_net_ops *net,
		    void *net_data, tp_error *err);

/* "(3,0,7)" into buf. */
void tp__fmt_coords(char *buf, size_t len, const int *c, int n);
/* Coordinates of router id r (x + X*(y + Y*(z + ...))). */
void tp__router_coords(const tp_machine *m, int64_t r, int *c);

/* Hops along dimension d of the box between coordinates x and y, both
 * inside the box (0..dims[d]-1, so x - y fits an int): |x - y|, or the
 * shorter way round on a wrapped dimension.  Callers sum in 64 bits. */
static inline int64_t tp__axis_hops(const struct tp_machine *m, int d, int x,
				    int y)
{
	int h = x - y;
	h = h < 0 ? -h : h;
	if (m->wrap[d] && m->dims[d] - h < h)
		h = m->dims[d] - h;
	return (int64_t)(uint32_t)h;   /* h >= 0: zero-extension is free */
}

/* Hops along dimension d from coordinate p to the nearest of lo..hi (0
 * inside). */
static inline int64_t tp__axis_gap(const struct tp_machine *m, int d, int p,
				   int lo, int hi)
{
	if (p >= lo && p <= hi)
		return 0;
	int64_t a = tp__axis_hops(m, d, p, lo);
	int64_t b = tp__axis_hops(m, d, p, hi);
	return a < b ? a : b;
}

/* Distance between router coordinates inside the box (inlined in hot
 * loops). */
static inline int64_t tp__coord_dist(const struct tp_machine *m, const int *a,
				     const int *b)
{
	if (__builtin_expect(!m->plain_hops, 0))
		return m->net->distance(m, a, b);
	int64_t h = 0;
	for (int d = 0; d < m->ndims; d++)
		h += tp__axis_hops(m, d, a[d], b[d]);
	return h;
}

/* Lower bound of the distance from p to any router of the box lo..hi (all
 * inside the machine's box). */
static inline int64_t tp__range_lower_bound(const struct tp_machine *m,
					    const int *p, const int *lo,
					    const int *hi)
{
	if (__builtin_expect(!m->plain_hops, 0))
		return m->net->range_lower_bound(m, p, lo, hi);
	int64_t lb = 0;
	for (int d = 0; d < m->ndims; d++)
		lb += tp__axis_gap(m, d, p[d], lo[d], hi[d]);
	return lb;
}

/* The tables of the machines each kind builds, NULL-terminated: topoplace.conf's
 * kinds (conf/kind_*.c) say by them which kind built a machine. */
extern const struct tp_net_ops *const tp__torus_machines[];   /* torus.c */
extern const struct tp_net_ops *const tp__mesh_machines[];    /* torus.c */
extern const struct tp_net_ops *const tp__tree_machines[];    /* tree.c */
extern const struct tp_net_ops *const tp__dfly_machines[];    /* dragonfly.c */
extern const struct tp_net_ops *const tp__block_machines[];   /* block.c */
/* torus3d.c: the rings' first, then the toruses' */
extern const struct tp_net_ops *const tp__rings_machines[];

/* Weight of one byte on a link for congestion. */
static inline double tp__link_weight(const struct tp_machine *m, int64_t link)
{
	return m->link_weight ? m->link_weight[link] : 1.0;
}

#endif
