/* topoplace — block networks: Slurm's topology/block (Slurm 23.11 and
 * later), NVLink domains such as GB200 NVL72 racks.
 *
 *   BlockName=nvl0 Nodes=gb[001-018]      a base block: one NVLink domain
 *   BlockName=nvl1 Nodes=gb[019-036]
 *   BlockSizes=18,36,72                   base block size, then the sizes of
 *                                         the aggregated blocks Slurm enforces
 *
 * As Slurm reads it (topology.conf(5), src/plugins/topology/block): blocks
 * in file order; BlockSizes= starts with the base block size (default: the
 * node count of the first block with nodes), each other size is the base
 * size times a power of two (at most 2^15); without BlockSizes= every
 * aggregation level up to 16 blocks counts.  An aggregated block of level k
 * is 2^k consecutive base blocks, aligned (blocks j 2^k .. (j+1) 2^k - 1),
 * blocks with few nodes or none included (see "the blocks, from records"
 * in block_build.c).  The blocks come as records (records.h): from
 * topology.conf's lines (read by slurm/topology_conf.c), or from
 * topology.yaml's block topology; block_build.c builds the network from
 * them, this file is the network.
 *
 * The model: every node has two ways out.  Its link into its block's NVLink
 * switch carries all traffic to the nodes of its own block (two links: up to
 * the switch, down to the other node).  Traffic to another block leaves
 * through the node's network port into the network between the blocks,
 * which is a tree: either the one of a Slurm topology/tree file given with
 * the blocks (TreeTopologyFile= in the config), or, without one, the
 * aggregation Slurm enforces: a leaf switch per base block, one switch per
 * aggregated block of each enforced level, a top switch over the highest
 * ones.  Routes cross the tree up/down (tree.c); each link of it costs
 * network_cost NVLink-domain links (default 4: a message between two blocks
 * on one leaf switch costs 8, one inside a block 2).
 *
 * Machine: one dimension, the node number (blocks in file order, a block's
 * nodes in its hostlist's order); every node is a router of its own.  Links
 * are full duplex, one id per direction (network.h): node i's NVLink-domain
 * link is 2i going up to the block's switch and 2i + 1 coming down from it;
 * the tree's directed link l (tree.c: 2s up, 2s + 1 down) is 2n + l.
 * Congestion: with bandwidths (GB/s, one direction) a byte weighs
 * 1 / block_bandwidth on an NVLink-domain link and 1 / network_bandwidth on
 * a node's network port; a switch link of the generated tree carries what
 * the nodes below it inject (non-blocking: 1 / (network_bandwidth x nodes
 * below)); a switch link of a tree file weighs 1 / network_bandwidth, or
 * 1 / its level's bandwidth when LevelBandwidth= is given (one value per
 * level of switch links, as for Network=tree).  Without bandwidths every link weighs 1.
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/block.h"
#include "net/block_internal.h"
#include "net/network.h"
#include "net/machine_internal.h"


static const struct tp_net_ops block_ops;

static const struct tp_blocks *blocks_of(const tp_machine *m)
{
	return m && m->net == &block_ops ? m->net_data : NULL;
}

/* ---- the network ---- */

static int64_t distance(const struct tp_machine *m, const int *a, const int *b)
{
	const struct tp_blocks *k = m->net_data;
	if (a[0] == b[0])
		return 0;
	if (k->node_block[a[0]] == k->node_block[b[0]])
		return 2;
	return k->cost * tp_machine_distance(k->tree, k->tree_node[a[0]],
					     k->tree_node[b[0]]);
}

/* Two distinct nodes are at least 2 apart: 2 inside a block, two network
 * links (2 x cost) between blocks. */
static int64_t range_lower_bound(const struct tp_machine *m, const int *p,
				 const int *lo, const int *hi)
{
	const struct tp_blocks *k = m->net_data;
	if (p[0] >= lo[0] && p[0] <= hi[0])
		return 0;
	int32_t b = k->node_block[p[0]];
	if (k->bfirst[b] <= hi[0] && k->bfirst[b + 1] - 1 >= lo[0])
		return 2;
	return 2 * (int64_t)k->cost;
}

static int route(const struct tp_machine *m, const int *a, const int *b,
		 int64_t *links, int cap)
{
	const struct tp_blocks *k = m->net_data;
	if (a[0] == b[0])
		return 0;
	if (k->node_block[a[0]] == k->node_block[b[0]]) {
		if (cap < 2 || !links)
			return TP_EINVAL;
		links[0] = 2 * (int64_t)a[0];        /* a up to the switch */
		links[1] = 2 * (int64_t)b[0] + 1;    /* down to b */
		return 2;
	}
	int len = tp_machine_route(k->tree, k->tree_node[a[0]], k->tree_node[b[0]],
				   links, cap);
	for (int i = 0; i < len; i++)
		links[i] += 2 * (int64_t)k->n;
	return len;
}

/* The time model: inside a block as route(); between blocks the lanes of
 * the tree (tree.c: destination mod k over parallel uplinks), after the
 * 2n node lanes. */
static int lane_route(const struct tp_machine *m, const int *a, const int *b,
		      int64_t *lanes, int cap)
{
	const struct tp_blocks *k = m->net_data;
	if (k->node_block[a[0]] == k->node_block[b[0]])
		return route(m, a, b, lanes, cap);
	const tp_machine *t = k->tree;
	int ta = k->tree_node[a[0]], tb = k->tree_node[b[0]];
	const int *ca = &t->coords[(size_t)ta * t->ndims];
	const int *cb = &t->coords[(size_t)tb * t->ndims];
	int len = t->net->lane_route(t, ca, cb, lanes, cap);
	for (int i = 0; i < len; i++)
		lanes[i] += 2 * (int64_t)k->n;
	return len;
}

static int64_t tree_lanes(const struct tp_blocks *k)
{
	return k->tree->net->lane_count(k->tree);
}

static int64_t lane_count(const struct tp_machine *m)
{
	const struct tp_blocks *k = m->net_data;
	int64_t cards = k->cards > 1 ? 2 * (int64_t)k->n * k->cards : 0;
	return 2 * (int64_t)k->n + tree_lanes(k) + cards;
}

/* ---- cards: a network card a GPU (NetworkCards=C) ----
 *
 * An NVL72 tray has a card for each of its GPUs.  With C cards a node, a
 * task's traffic to another block leaves on the card of its rail (its
 * local rank mod C, as Rails= on a tree: predict.c, the GPU choice of
 * job_node.c) and arrives on the card of the receiver's rail, each card at
 * NetworkBandwidth= / C: lanes 2n + T + 2 (i C + r) up and + 1 down (T: the
 * tree's lanes), in place of the node's port in the tree's route (its
 * first and last lane).  Every card of a node goes to the node's switch
 * of the tree between the blocks, so there is no rail plane and no PXN:
 * the tree's cables are shared by the rails.  Inside a block the NVLink
 * domain as without cards. */
static int rails(const struct tp_machine *m)
{
	const struct tp_blocks *k = m->net_data;
	return k->cards > 1 ? k->cards : 1;
}

static int rail_route(const struct tp_machine *m, const int *a, const int *b,
		      int ra, int rb, int64_t *lanes, int cap)
{
	const struct tp_blocks *k = m->net_data;
	int len = lane_route(m, a, b, lanes, cap);
	if (len < 2 || k->cards <= 1 ||
	    k->node_block[a[0]] == k->node_block[b[0]])
		return len;
	int64_t base = 2 * (int64_t)k->n + tree_lanes(k);
	int c = k->cards;
	lanes[0] = base + 2 * ((int64_t)a[0] * c + ra % c);
	lanes[len - 1] = base + 2 * ((int64_t)b[0] * c + rb % c) + 1;
	return len;
}

/* An NVLink-domain link at BlockBandwidth= (default 900 GB/s, one NVLink 5
 * GPU); the tree's lanes as tree.c gives them, its nodes' ports and its
 * non-blocking default cables at NetworkBandwidth= (else the fabric's
 * default). */
#define NVLINK_DEFAULT_BW 900e9
static double lane_bandwidth(const struct tp_machine *m, int64_t lane)
{
	const struct tp_blocks *k = m->net_data;
	if (lane < 2 * (int64_t)k->n)
		return k->bbw > 0 ? k->bbw * 1e9 : NVLINK_DEFAULT_BW;
	const tp_machine *t = k->tree;
	if (lane >= 2 * (int64_t)k->n + tree_lanes(k))   /* a card */
		return (k->nbw > 0 ? k->nbw * 1e9 : m->fab.node_bw) / k->cards;
	double bw = t->net->lane_bandwidth(t, lane - 2 * (int64_t)k->n);
	if (!tp_machine_has_level_bandwidth(t)) {
		double port = k->nbw > 0 ? k->nbw * 1e9 : m->fab.node_bw;
		bw = bw / t->fab.node_bw * port;
	}
	return bw;
}

/* A node's port into the network between the blocks, as lane_bandwidth
 * weighs it (check-config says it). */
static double node_port_bandwidth(const struct tp_machine *m)
{
	const struct tp_blocks *k = m->net_data;
	return k->nbw > 0 ? k->nbw * 1e9 : m->fab.node_bw;
}

static int64_t max_route_links(const struct tp_machine *m)
{
	const struct tp_blocks *k = m->net_data;
	int64_t t = k->tree->net->max_route_links(k->tree);
	return t > 2 ? t : 2;
}

static int64_t link_count(const struct tp_machine *m)
{
	const struct tp_blocks *k = m->net_data;
	return 2 * (int64_t)k->n + tp_machine_link_count(k->tree);
}

static void link_name(const struct tp_machine *m, int64_t link, char *buf,
		      size_t len)
{
	const struct tp_blocks *k = m->net_data;
	if (link < 2 * (int64_t)k->n) {
		int32_t i = (int32_t)(link >> 1);
		char node[TP__HOSTNAME_MAX];
		tp__machine_name_put(m, i, node);
		const char *blk = k->bname[k->node_block[i]];
		if (link & 1)
			snprintf(buf, len, "%s(NVLink)->%s", blk, node);
		else
			snprintf(buf, len, "%s->%s(NVLink)", node, blk);
	} else {
		tp_machine_link_name(k->tree, link - 2 * (int64_t)k->n, buf, len);
	}
}

static double max_link_bandwidth(const struct tp_machine *m)
{
	const struct tp_blocks *k = m->net_data;
	if (!k->weight)
		return 0.0;
	double mx = k->bbw;
	int64_t nl = tp_machine_link_count(k->tree);
	for (int64_t l = 0; l < nl; l++) {
		double w = k->weight[2 * (int64_t)k->n + l];
		if (w > 0 && 1.0 / w > mx)
			mx = 1.0 / w;
	}
	return mx;
}

/* Block keys in the hierarchy: above every switch id of the tree. */
#define BLOCK_KEY(b) (((int64_t)1 << 32) + (b))

/* The tree's switches that hold all of the node's block, top first, then
 * the block itself unless the lowest of them holds only that block (the
 * generated tree's b<i>): nodes -> blocks -> aggregated blocks or the
 * switches of the tree file. */
static int hierarchy(const struct tp_machine *m, const int *r, int64_t *path,
		     int cap)
{
	const struct tp_blocks *k = m->net_data;
	int32_t b = k->node_block[r[0]];
	int n = k->anchor[b];
	if (n < 0 || n + k->own_group[b] > cap)
		return TP_EINVAL;
	/* the anchor is a prefix of every node's path: the first node's */
	const tp_machine *t = k->tree;
	int64_t full[TP__HIER_MAX_LEVELS];
	const int *tr = &t->coords[(size_t)k->tree_node[k->bfirst[b]] * (size_t)t->ndims];
	if (t->net->hierarchy(t, tr, full, TP__HIER_MAX_LEVELS) < n)
		return TP_EINVAL;
	memcpy(path, full, sizeof(int64_t) * (size_t)n);
	if (k->own_group[b])
		path[n++] = BLOCK_KEY(b);
	return n;
}

void tp__blocks_free(struct tp_blocks *k)
{
	if (!k)
		return;
	for (int32_t b = 0; b < k->nblocks; b++)
		free(k->bname[b]);
	free(k->bname);
	free(k->bline);
	free(k->bfirst);
	free(k->node_block);
	free(k->tree_node);
	free(k->weight);
	free(k->anchor);
	free(k->own_group);
	tp_machine_destroy(k->tree);
	free(k);
}

static void destroy(void *net_data)
{
	tp__blocks_free(net_data);
}

static const struct tp_net_ops block_ops = {
	.kind = "block",
	.caps = TP__CAP(TP_CAP_BLOCKS),
	TP__NET_OPS_ROUTING,
	.max_link_bandwidth = max_link_bandwidth,
	.destroy = destroy,
	.hierarchy = hierarchy,
	.lane_count = lane_count,
	.lane_route = lane_route,
	.lane_bandwidth = lane_bandwidth,
	.node_port_bandwidth = node_port_bandwidth,
	.rails = rails,
	.rail_route = rail_route,
	.routes_ports = true,
};

int32_t tp_machine_block_count(const tp_machine *m)
{
	const struct tp_blocks *k = blocks_of(m);
	return k ? k->nblocks : 0;
}

const char *tp_machine_block_name(const tp_machine *m, int32_t b)
{
	const struct tp_blocks *k = blocks_of(m);
	return k && b >= 0 && b < k->nblocks ? k->bname[b] : NULL;
}

int32_t tp_machine_node_block(const tp_machine *m, int32_t node)
{
	const struct tp_blocks *k = blocks_of(m);
	return k && node >= 0 && node < k->n ? k->node_block[node] : -1;
}

int tp_machine_block_base_size(const tp_machine *m)
{
	const struct tp_blocks *k = blocks_of(m);
	return k ? k->base : 0;
}

int tp_machine_block_network_cost(const tp_machine *m)
{
	const struct tp_blocks *k = blocks_of(m);
	return k ? k->cost : 0;
}

double tp__blocks_nvlink_bw(const tp_machine *m, bool *given)
{
	const struct tp_blocks *k = blocks_of(m);
	*given = k && k->bbw > 0;
	return !k ? 0 : k->bbw > 0 ? k->bbw : NVLINK_DEFAULT_BW / 1e9;
}

bool tp__blocks_tree_file(const tp_machine *m)
{
	const struct tp_blocks *k = blocks_of(m);
	return k && k->tree_file;
}

tp_machine *tp__blocks_file_tree(tp_machine *m)
{
	struct tp_blocks *k = m && m->net == &block_ops ? m->net_data : NULL;
	return k && k->tree_file ? k->tree : NULL;
}

const tp_machine *tp_machine_block_tree(const tp_machine *m)
{
	const struct tp_blocks *k = blocks_of(m);
	return k ? k->tree : NULL;
}

/* The machines of this kind (network.h), by which the config tells which
 * kind built a machine. */
const struct tp_net_ops *const tp__block_machines[] = { &block_ops, NULL };
