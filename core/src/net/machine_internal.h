/* topoplace — the machine: the part of <topoplace/machine.h> that is not
 * exported.  The core's modules, the unit tests, the benchmarks and the
 * fuzzers (all linked with the static archive) use it; the front ends and
 * outside programs see only the public header. */
#ifndef TOPOPLACE_MACHINE_INTERNAL_H
#define TOPOPLACE_MACHINE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <topoplace/machine.h>
#include "net/hashtab.h"
#include "net/name_runs.h"
#include "util/hostlist.h"

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
int tp_machine_from_topology(tp_machine **out, const char *text,
			     const char *what, const int *level_cost,
			     int nlevels, tp_error *err);
/* Link bandwidth per level of links (LevelBandwidth=; nlevels 1 = the same
 * for every level, else one per level, leaf links first; 0 clears).  With
 * it, congestion on the tree is measured in bytes / bandwidth (time-like
 * units, e.g. seconds for bytes over bytes/s) instead of bytes: a route
 * adds bytes / bandwidth to each link it crosses. */
/* The time model's lanes of a tree (tree.c): LevelUplinks= (n values,
 * one per level of switch links or one for all; 0: non-blocking) and
 * UplinkRouting= (adaptive, else destination mod k). */
int tp__tree_set_lanes(tp_machine *m, const int *uplinks, int n,
		       bool adaptive, tp_error *err);
/* Rails= (tree.c, "rails"): rails network cards a node, card r on the
 * plane of rail r (1..TP__RAILS_MAX; 1: none). */
#define TP__RAILS_MAX 64
int tp__tree_set_rails(tp_machine *m, int rails, tp_error *err);
/* The rails of a node's cards the time model routes over (1: none): a
 * tree's Rails= planes, or a block network's NetworkCards=. */
int tp__machine_rails(const tp_machine *m);
/* Is m a rail-optimised tree (Rails= on a tree: a plane of switches a
 * rail)?  A block network's cards share the tree's cables, as one port
 * does: not. */
bool tp__machine_rail_planes(const tp_machine *m);
int tp_machine_set_tree_level_bandwidth(tp_machine *m, const double *bw,
					int nlevels, tp_error *err);
/* Levels of links in the tree (0 for a single switch, or not a tree). */
int tp_machine_tree_levels(const tp_machine *m);

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
int tp_machine_create_dragonfly(tp_machine **out, int groups,
				int routers_per_group, int nodes_per_router,
				int links_per_group_pair, bool valiant,
				tp_error *err);
/* LinksPerGroupPair (0 when not a dragonfly). */
int tp_machine_dragonfly_links(const tp_machine *m);
/* Valiant congestion routing? (false when not a dragonfly) */
bool tp_machine_dragonfly_valiant(const tp_machine *m);

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
int tp_machine_set_dragonfly_routing(tp_machine *m,
					       enum tp_dfly_routing r,
					       double share, tp_error *err);
enum tp_dfly_routing tp_machine_dragonfly_routing(const tp_machine *m,
							    double *share);
/* "direct", "valiant", "adaptive" */
const char *tp_dfly_routing_name(enum tp_dfly_routing r);

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
	int network_cards;            /* NetworkCards=: cards a node into the
					 network between the blocks, one a
					 GPU by local rank (0 or 1: one
					 port; 1..TP__RAILS_MAX) */
} tp_block_opts;
int tp_machine_from_blocks(tp_machine **out, const char *text,
				     const char *what, const tp_block_opts *opts,
				     tp_error *err);
int32_t tp_machine_block_count(const tp_machine *m);
const char *tp_machine_block_name(const tp_machine *m, int32_t b);
/* The block of a node (-1 for a bad index or not a block network). */
int32_t tp_machine_node_block(const tp_machine *m, int32_t node);
int tp_machine_block_base_size(const tp_machine *m);
int tp_machine_block_network_cost(const tp_machine *m);
/* The tree between the blocks (owned by m), NULL when not a block network. */
const tp_machine *tp_machine_block_tree(const tp_machine *m);

/* bytes/s of a node's own port as the time model weighs it (a tree's
 * follow its first level unless NodeBandwidth= is given). */
double tp__machine_node_port_bw(const tp_machine *m);

struct tp_net_ops; /* network.h: one table per kind of network */

/* How a link's bandwidth is shared among the messages crossing it: equally
 * (credit flow control, InfiniBand), in inverse proportion to each
 * message's route latency (TCP, RoCE's congestion control, SimGrid's flow
 * model), or not known: the worse of the two, so that a map is chosen
 * that is fast under either (predict.c fills the exchange both ways). */
enum tp__sharing { TP__SHARING_FAIR, TP__SHARING_RTT, TP__SHARING_WORSE };

/* A machine: named nodes on routers, the routers embedded in a box of
 * integer coordinates, and the network that joins them (network.h). */
/* The fabric's speeds for the time model (map/predict.c), from
 * topoplace.conf (HopLatency=, NodeBandwidth=, IntraNodeBandwidth=); the
 * kinds' own bandwidths (LevelBandwidth=, LinkBandwidth=, ...) stay with
 * the kind (tp_net_ops.lane_bandwidth). */
struct tp__fabric {
	double node_bw;       /* bytes/s of a node's network port, each
				 direction; also every link whose own
				 bandwidth is not given */
	double hop_lat;       /* seconds per link crossed */
	double intra_bw;      /* bytes/s between two tasks of one node */
	bool node_bw_set;     /* NodeBandwidth= given (else a kind may take
				 its first level's) */
	enum tp__sharing sharing;   /* FlowSharing= where given
				       (sharing_set); tp__fabric_sharing
				       says what the time model uses */
	double eager_bytes;   /* EagerLimit=: a larger message pays its
				 route's latency three times (MPI's
				 rendezvous); < 0: none does */
	bool sharing_set, eager_set;   /* FlowSharing=, EagerLimit= given
					  (else assumed: the report says so) */
};

/* The defaults: a 200 Gb/s port (HDR InfiniBand, Slingshot 11), 100 ns a
 * link (a switch hop and its cable), shared memory at 100 GB/s. */
#define TP__DEFAULT_NODE_BW 25e9
#define TP__DEFAULT_HOP_LAT 1e-7
#define TP__DEFAULT_INTRA_BW 100e9
/* Unless told (EagerLimit=), every message is sent eagerly, its data
 * behind its route's latency once (a link's sharing, unless told, is the
 * kind's: tp__fabric_sharing).  Real MPI libraries send a message past
 * their eager limit (8 to 64 KiB in Open MPI, MPICH and UCX) only after a
 * request and a reply have crossed the route; stated alone under SimGrid
 * SMPI it made the 2:1 tree's maps no faster (doc/benchmarks.md, "sharing
 * not stated"): not the default. */
#define TP__DEFAULT_EAGER_BYTES (-1.0)

/* The sharing the time model uses: FlowSharing= where given.  Else, on a
 * network of switches (trees, dragonflies, blocks), the worse of fair and
 * RTT-weighted: a message to the node's own switch crosses two links, one
 * over the spine four or more, and which of them wins a node's port
 * decides when the far ones start to queue on the cables up; whether the
 * fabric favours the short routes (Ethernet and RoCE do, InfiniBand's
 * credits mostly not) is what an admin rarely says.  On tori and meshes
 * (the routers on the network's own coordinates: proprietary
 * credit-based fabrics) fair: judged both ways there, SMPI ran the maps
 * 1.4 % slower and the time to map 4,096 tasks tripled (doc/benchmarks.md,
 * "sharing not stated"). */
enum tp__sharing tp__fabric_sharing(const tp_machine *m);

struct tp_machine {
	int ndims;                     /* the coordinate box */
	int dims[TP_MAX_DIMS];
	bool wrap[TP_MAX_DIMS];
	int64_t stride[TP_MAX_DIMS];   /* router id = sum coords[d]*stride[d] */
	int64_t nrouters;
	int nodes_per_router;

	const struct tp_net_ops *net;  /* the kind of network */
	void *net_data;                /* its own data, owned */
	bool plain_hops;               /* distance = unweighted hop count in
					  the box (tori and meshes with every
					  hop cost 1): computed inline */
	const double *link_weight;     /* congestion weight of a byte per link
					  (1/bandwidth on trees with
					  LevelBandwidth=), in net_data; NULL:
					  every link weighs 1 */
	struct tp__fabric fab;         /* speeds for the time model */

	int32_t nnodes, cap;
	char **names;                  /* names of the nodes not in a numbered
					  run, in by_name's arena (the entries
					  of run nodes are never written) */
	struct tp__run_names *rn;      /* the numbered runs by node index */
	size_t nrn, rncap;
	pthread_mutex_t names_mu;      /* writing a run's names when first
					  asked for (tp_machine_node_name) */
	int *coords;                   /* nnodes x ndims router coordinates */
	struct tp__names by_name;      /* name -> index, but for... */
	struct tp__name_runs runs;     /* ...names placed as numbered runs */
	struct tp__routers router_use; /* router id -> nodes on it (sparse) */
};

/* The name of node into buf (TP__HOSTNAME_MAX bytes), its length: a
 * numbered run's without writing the run's names out. */
size_t tp__machine_name_put(const tp_machine *m, int32_t node, char *buf);

/* Room for n nodes (a hint for loaders that know their count; the name
 * index grows on its own, or tp__names_reserve sizes it), and
 * tp_machine_add_node() that also returns the index of the node a
 * duplicate name repeats (*dup, when not NULL). */
int tp__machine_reserve(tp_machine *m, int64_t n);
/* Add the nodes of run hr, node i of it at the coordinates coords(arg, i,
 * c) gives; all or none.  A name placed before: *dup is its node. */
int tp__machine_add_run(tp_machine *m, const struct tp__hostlist_run *hr,
			void (*coords)(void *arg, int64_t i, int *c), void *arg,
			int32_t *dup, tp_error *err);
int tp__machine_add(tp_machine *m, const char *name, const int *coords,
		    int32_t *dup, tp_error *err);

/* A hostlist's names resolved against a machine, in the list's order
 * (tp__machine_each_listed): fn gets node first and the count-1 nodes after
 * it, named l's names 0..count-1, or first -1 (count 1) for a name the
 * machine does not have.  A numbered range goes a span of consecutive nodes
 * at a time, its names written only if asked for (tp__listed_name, into
 * buf, TP__HOSTNAME_MAX bytes).  Stops at fn's first non-zero return. */
struct tp__listed {
	const char *name;                    /* or NULL: run's number v on */
	const struct tp__hostlist_run *run;
	uint64_t v;
};
typedef int (*tp__listed_fn)(void *arg, int32_t first, int32_t count,
			     const struct tp__listed *l);
int tp__machine_each_listed(const tp_machine *m, struct tp__hostlist *hl,
			    tp__listed_fn fn, void *arg);
const char *tp__listed_name(const struct tp__listed *l, int32_t k, char *buf);

/* A loader's list of new nodes into m, in order (tp__machine_add_list): a
 * numbered range of at least min_run names is one run of the machine
 * (coords(arg, i, c) places its node i; then ran(arg, first, count)), when
 * the run table takes it in order (tp__runs_appends); any other name, and
 * every name of a range holding a name placed before, goes to one(arg,
 * name), which applies the loader's rule for duplicates.  A run that fails
 * otherwise goes to fail(arg, rc, e), whose return is returned.  Stops at
 * the first non-zero return.  tp__add_list_named: how many names of a fresh
 * hl would go to one() at most (a size for the name index). */
#define TP__LIST_RUN_MIN 8   /* ranges shorter go name by name: the run
				table stays at most an eighth of the nodes */
struct tp__add_list {
	uint64_t min_run;
	void (*coords)(void *arg, int64_t i, int *c);
	int (*one)(void *arg, const char *name);
	int (*ran)(void *arg, int32_t first, int32_t count);
	int (*fail)(void *arg, int rc, const tp_error *e);
};
int tp__machine_add_list(tp_machine *m, struct tp__hostlist *hl,
			 const struct tp__add_list *ops, void *arg);
int tp__add_list_named(struct tp__hostlist *hl, uint64_t min_run);

#endif
