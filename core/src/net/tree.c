/* topoplace — switch trees from Slurm's topology.conf or topology.yaml
 * (topology/tree).
 *
 *   SwitchName=s0 Nodes=tux[0-15]          a switch with nodes
 *   SwitchName=s2 Switches=s[0-1]          a switch above other switches
 *   LinkSpeed=...                          accepted and ignored
 *
 * The machine is a tree of switches with the nodes as its leaves: the link
 * from a node to its switch is part of the tree (a "switch" of its own in
 * the arrays below, named after the node, after the real switches), so two
 * nodes on one switch are two links apart and a node's traffic to every
 * other node loads its own link, as its network port is loaded.  Each node
 * is a "router" of the generic machine; routers are numbered in depth-first
 * order (children in the order their Switches= lists them, a switch's own
 * nodes first), and a node's only coordinate is its router's number.
 * Distance between two routers is the cost of the links up to their lowest
 * common switch and down again; a node's link costs 1, and the link from a
 * switch at level l (leaf switches are level 0, a switch above them 1 + the
 * highest level below it) to its parent costs LevelCost[l] (default 1).
 * Routing for congestion is up/down through the lowest common switch.  Links
 * are full duplex, one id per direction (network.h): the link above switch
 * (or node entry) s is 2s going up, named "child->parent", and 2s + 1 going
 * down, "parent->child".  With LevelBandwidth= a byte on a link weighs 1 /
 * the bandwidth of the link's level, so congestion comes in time-like
 * units.
 *
 * The switches come as records (records.h), which tree_build.c turns into
 * this tree with Slurm's rules; this file is the network: distances,
 * routes, links, lanes and rails.
 *
 * A link costs at most INT_MAX and a route has at most 2 x depth < 2^32
 * links, so a distance stays below 2^63: int64 never overflows.
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/network.h"
#include "net/tree.h"
#include "net/tree_internal.h"
#include "net/machine_internal.h"

static const struct tp_net_ops tree_ops;

static struct tp_tree *tree_of(const tp_machine *m)
{
	return m && m->net == &tree_ops ? m->net_data : NULL;
}

/* The two directions of the link above switch (or node entry) s. */
#define UP_LINK(s) (2 * (int64_t)(s))
#define DOWN_LINK(s) (2 * (int64_t)(s) + 1)

/* ---- the network ---- */

static int64_t distance(const struct tp_machine *m, const int *ra,
			const int *rb)
{
	const struct tp_tree *t = m->net_data;
	int32_t a = t->router_sw[ra[0]], b = t->router_sw[rb[0]];
	int64_t d = 0;
	while (a != b) {
		if (t->depth[a] >= t->depth[b]) {
			d += t->upcost[a];
			a = t->parent[a];
		} else {
			d += t->upcost[b];
			b = t->parent[b];
		}
	}
	return d;
}

static int64_t range_lower_bound(const struct tp_machine *m, const int *pp,
				 const int *lo, const int *hi)
{
	int p = pp[0];
	if (p >= lo[0] && p <= hi[0])
		return 0;
	/* Routers are in depth-first order: the lowest common switch of p and
	 * any router beyond the nearer end e is e's or above it, and at least
	 * one link leads down from it. */
	const struct tp_tree *t = m->net_data;
	int e = p < lo[0] ? lo[0] : hi[0];
	int32_t a = t->router_sw[p], b = t->router_sw[e];
	int64_t up = 0;
	while (a != b) {
		if (t->depth[a] >= t->depth[b]) {
			up += t->upcost[a];
			a = t->parent[a];
		} else {
			b = t->parent[b];
		}
	}
	/* at least a node's link leads down to any node */
	return up + t->mincost;
}

static int route(const struct tp_machine *m, const int *ra, const int *rb,
		 int64_t *links, int cap)
{
	const struct tp_tree *t = m->net_data;
	int32_t a = t->router_sw[ra[0]], b = t->router_sw[rb[0]];
	int na = 0, nb = 0;
	/* count first, then write: up links from a, then b's up links reversed */
	int32_t x = a, y = b;
	while (x != y) {
		if (t->depth[x] >= t->depth[y]) {
			na++;
			x = t->parent[x];
		} else {
			nb++;
			y = t->parent[y];
		}
	}
	if (na + nb > cap || (na + nb > 0 && !links))
		return TP_EINVAL;
	int i = 0, j = na + nb;
	while (a != b) {
		if (t->depth[a] >= t->depth[b]) {
			links[i++] = UP_LINK(a);
			a = t->parent[a];
		} else {
			links[--j] = DOWN_LINK(b);
			b = t->parent[b];
		}
	}
	return na + nb;
}

/* Up and down the deepest path. */
static int64_t max_route_links(const struct tp_machine *m)
{
	const struct tp_tree *t = m->net_data;
	int64_t dia = 0;
	for (int32_t s = 0; s < t->nsw; s++)
		if (2 * (int64_t)t->depth[s] > dia)
			dia = 2 * (int64_t)t->depth[s];
	return dia;
}

static int64_t link_count(const struct tp_machine *m)
{
	const struct tp_tree *t = m->net_data;
	return 2 * (int64_t)t->nsw;
}

static void link_name(const struct tp_machine *m, int64_t link, char *buf,
		      size_t len)
{
	const struct tp_tree *t = m->net_data;
	int32_t s = (int32_t)(link >> 1), up = t->parent[s];
	const char *parent = up >= 0 ? t->name[up] : "(top)";
	char node[TP__HOSTNAME_MAX];
	const char *self = s < t->nreal ? t->name[s] : node;
	if (s >= t->nreal)
		tp__machine_name_put(m, s - t->nreal, node);
	if (link & 1)
		snprintf(buf, len, "%s->%s", parent, self);
	else
		snprintf(buf, len, "%s->%s", self, parent);
}

/* The switches above the node at router r, top first. */
static int hierarchy(const struct tp_machine *m, const int *r, int64_t *path,
		     int cap)
{
	const struct tp_tree *t = m->net_data;
	int32_t leaf = t->parent[t->router_sw[r[0]]];
	int n = leaf >= 0 ? t->depth[leaf] + 1 : 0;
	if (n > cap)
		return TP_EINVAL;
	for (int i = n - 1; i >= 0; i--, leaf = t->parent[leaf])
		path[i] = leaf;
	return n;
}

static double max_link_bandwidth(const struct tp_machine *m)
{
	const struct tp_tree *t = m->net_data;
	return t->upinvbw ? t->maxbw : 0.0;
}

void tp__tree_free(struct tp_tree *t)
{
	if (!t)
		return;
	for (int32_t s = 0; s < t->nname; s++)
		free(t->name[s]);
	free(t->name);
	if (t->block) {
		free(t->block);
	} else {
		free(t->parent);
		free(t->depth);
		free(t->level);
		free(t->upcost);
		free(t->router_sw);
	}
	free(t->upinvbw);
	free(t->nlanes);
	free(t->cables);
	free(t->lane0);
	free(t->lane_sw);
	free(t);
}

static void destroy(void *net_data)
{
	tp__tree_free(net_data);
}


/* ---- lanes: the fabric as it routes (the time model, map/predict.c) ----
 *
 * Slurm's file gives one link above each switch; a fat tree has several
 * parallel cables there, to several switches of the level above, and a
 * static routing that spreads destinations over them: destination mod k
 * (OpenSM's ftree and updn, SimGrid's fat trees).  Entry s has U(s) lanes
 * above it: LevelUplinks= per level of switch links, else a quarter as many
 * as it has nodes below (an assumed 4:1 taper); a node has one.  A message to the
 * node d (its number in depth-first order, topology.conf's order) leaves a
 * switch x of level l on lane (d / D) mod U(x), D the product of the lane
 * counts of d's own switches below level l, and comes down into d's switch
 * of level l on the lane of the same rule: the up and down lanes of one
 * level meet at one switch of the level above, as in a parallel-ports
 * generalised fat tree.  UplinkRouting=adaptive spreads every message over all
 * lanes alike: one lane of U(s) times the bandwidth. */

static int32_t lane_count_of(const struct tp_tree *t, int32_t s,
			     const int32_t *below)
{
	if (t->parent[s] < 0)
		return 0;
	if (t->level[s] == 0)
		return 1;
	if (t->nuplinks > 0) {
		int l = t->level[s] - 1;
		return t->uplinks[l < t->nuplinks ? l : t->nuplinks - 1];
	}
	/* not given (Slurm's files never say them): a quarter of the nodes
	 * below, a 4:1 taper, the steepest sites build.  Fewer lanes than the
	 * tree has cables only merge cables (d mod 8 splits no pair that d mod
	 * 16 joins): the model may see contention the tree spares, never miss
	 * contention it has.  Assuming more lanes than there are hides the
	 * collisions of a tapered tree, and the lane refinement then spreads
	 * messages over cables that do not exist.  Told nothing
	 * (simgrid.sh --told-nothing, seeds 321625-30), auto against block:
	 * 4:1 trees 0.654 -> 0.567 and random graphs on them 0.924 -> 0.816 of
	 * Scotch; 2:1 trees 0.683 -> 0.711.  A 3:1 guess (11 lanes a leaf)
	 * routes d mod 11, which neither tree does: 0.812 on the 2:1 tree. */
	return below[s] > 1 ? (below[s] + 3) / 4 : 1;
}

/* Nodes below each entry, children after parents in index order is not
 * guaranteed: walk each node's path up. */
int tp__tree_build_lanes(struct tp_tree *t)
{
	int32_t *below = calloc((size_t)t->nsw + 1, sizeof *below);
	int32_t *nl = tp__malloc_array((size_t)t->nsw + 1, sizeof *nl);
	int32_t *nc = tp__malloc_array((size_t)t->nsw + 1, sizeof *nc);
	int64_t *l0 = tp__malloc_array((size_t)t->nsw + 1, sizeof *l0);
	if (!below || !nl || !nc || !l0)
		goto oom;
	for (int32_t s = t->nreal; s < t->nsw; s++)
		for (int32_t x = s; x >= 0; x = t->parent[x])
			below[x]++;
	int64_t n = 0;
	for (int32_t s = 0; s < t->nsw; s++) {
		nc[s] = lane_count_of(t, s, below);
		nl[s] = t->adaptive && nc[s] > 1 ? 1 : nc[s];
		l0[s] = n;
		n += nl[s];
	}
	int32_t *ls = tp__malloc_array((size_t)n + 1, sizeof *ls);
	if (!ls)
		goto oom;
	for (int32_t s = 0; s < t->nsw; s++)
		for (int32_t j = 0; j < nl[s]; j++)
			ls[l0[s] + j] = s;
	free(t->nlanes);
	free(t->cables);
	free(t->lane0);
	free(t->lane_sw);
	t->nlanes = nl;
	t->cables = nc;
	t->lane0 = l0;
	t->lane_sw = ls;
	t->nlane = n;
	free(below);
	return TP_OK;
oom:
	free(below);
	free(nl);
	free(nc);
	free(l0);
	return TP_ENOMEM;
}

/* ---- rails: a rail-optimised fat tree (Rails=R) ----
 *
 * Every node has R network cards, card r on rail r: in each scalable unit
 * (a leaf switch of the file) rail r has a switch of its own that holds
 * card r of every node of the unit, and the rail switches go up to the
 * spine.  The model has R planes, each a copy of the tree's lanes (lane
 * ids r x P .. (r + 1) x P - 1, P = 2 x nlane): the file describes one
 * rail's plane, a leaf switch standing for the unit's switch of each rail,
 * LevelUplinks= for each rail switch's cables up.  A task's traffic leaves
 * through the card of its rail; to a task of another rail it first crosses
 * NVLink to the GPU of the destination's rail on its own node, then that
 * GPU's card (PXN, as NCCL routes by default since 2.12): one more lane, the
 * node's PXN lane (R x P + node, at IntraNodeBandwidth=), and no message
 * ever changes plane, so the planes need not meet in the model (the spine
 * only carries traffic of one rail between units).  On a two-level tree
 * (rail switches, spine) the planes are exact: every cable up from a rail
 * switch and down into one belongs to one rail.  Node-to-node routes
 * without rails (the mappers' congestion) stay on plane 0. */

static int rails_of(const struct tp_tree *t)
{
	return t->rails > 1 ? t->rails : 1;
}

static int64_t lane_count(const struct tp_machine *m)
{
	const struct tp_tree *t = m->net_data;
	int r = rails_of(t);
	return 2 * t->nlane * r + (r > 1 ? (int64_t)m->nnodes : 0);
}

/* d / D with D the lanes of d's own entries below level l (saturating). */
static int64_t lane_of(const struct tp_tree *t, int32_t x, int64_t d,
		       const int32_t *dpath, int nd)
{
	int64_t q = d;
	for (int i = 0; i < nd && q > 0; i++)
		if (t->level[dpath[i]] < t->level[x])
			q /= t->nlanes[dpath[i]] > 0 ? t->nlanes[dpath[i]] : 1;
	return t->lane0[x] + q % t->nlanes[x];
}

static int lane_route(const struct tp_machine *m, const int *ra,
		      const int *rb, int64_t *lanes, int cap)
{
	const struct tp_tree *t = m->net_data;
	int32_t a = t->router_sw[ra[0]], b = t->router_sw[rb[0]];
	int32_t up[128], down[128];
	int na = 0, nb = 0;
	while (a != b) {
		if (na == 128 || nb == 128)
			return TP_EINVAL;
		if (t->depth[a] >= t->depth[b]) {
			up[na++] = a;
			a = t->parent[a];
		} else {
			down[nb++] = b;
			b = t->parent[b];
		}
	}
	if (na + nb > cap || (na + nb > 0 && !lanes))
		return TP_EINVAL;
	int64_t d = rb[0];
	int n = 0;
	for (int i = 0; i < na; i++)
		lanes[n++] = 2 * lane_of(t, up[i], d, down, nb);
	for (int i = nb - 1; i >= 0; i--)
		lanes[n++] = 2 * lane_of(t, down[i], d, down, nb) + 1;
	return n;
}

/* Which of nlevels LevelBandwidth= values the link above entry s takes:
 * a node's link (level 0) runs at the leaf switches' speed, a forest's
 * links to its virtual top at the top level's. */
static int bandwidth_level(const struct tp_tree *t, int32_t s, int nlevels)
{
	int l = nlevels == 1 || t->level[s] == 0 ? 0 : t->level[s] - 1;
	if (l >= nlevels || (t->parent[s] >= 0 && t->parent[s] == t->forest_top))
		l = nlevels - 1;
	return l;
}

/* bytes/s of one lane: a node's own port (NodeBandwidth=, else the leaf
 * level's), a switch lane its level's (LevelBandwidth=, GB/s), else the
 * fabric's default. */
static double lane_bandwidth(const struct tp_machine *m, int64_t lane)
{
	const struct tp_tree *t = m->net_data;
	int64_t plane = 2 * t->nlane;
	if (lane >= plane * rails_of(t))
		return m->fab.intra_bw;         /* a node's PXN lane (NVLink) */
	lane %= plane;
	int32_t s = t->lane_sw[lane >> 1];
	double bw = m->fab.node_bw;
	if (t->level[s] == 0) {
		if (!m->fab.node_bw_set && t->nlbw > 0)
			bw = t->lbw[0] * 1e9;
		return bw;
	}
	if (t->nlbw > 0) {
		bw = t->lbw[bandwidth_level(t, s, t->nlbw)] * 1e9;
	}
	/* adaptive: the one lane stands for all the switch's cables */
	return bw * t->cables[s] / t->nlanes[s];
}

static int rails(const struct tp_machine *m)
{
	return rails_of(m->net_data);
}

/* From the card of rail ra on router a to the card of rail rb on router
 * b: rb's plane, after the PXN lane when the rails differ. */
static int rail_route(const struct tp_machine *m, const int *a, const int *b,
		      int ra, int rb, int64_t *lanes, int cap)
{
	const struct tp_tree *t = m->net_data;
	int nr = rails_of(t), off = 0;
	ra %= nr;
	rb %= nr;
	if (ra != rb) {
		if (cap < 1 || !lanes)
			return TP_EINVAL;
		lanes[off++] = 2 * t->nlane * nr + a[0];
	}
	int len = lane_route(m, a, b, lanes ? lanes + off : NULL, cap - off);
	if (len < 0)
		return len;
	for (int i = off; i < off + len; i++)
		lanes[i] += 2 * t->nlane * rb;
	return off + len;
}

static double node_port_bandwidth(const struct tp_machine *m)
{
	const struct tp_tree *t = m->net_data;
	return !m->fab.node_bw_set && t->nlbw > 0 ? t->lbw[0] * 1e9 : m->fab.node_bw;
}

static const struct tp_net_ops tree_ops = {
	.kind = "tree",
	.caps = TP__CAP(TP_CAP_SWITCHES),
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


int tp_machine_set_tree_level_bandwidth(tp_machine *m, const double *bw,
					int nlevels, tp_error *err)
{
	struct tp_tree *t = tree_of(m);
	if (!t)
		return tp_error_set(err, TP_EINVAL, "LevelBandwidth=: the network is not a switch tree");
	if (nlevels < 0 || (nlevels > 0 && !bw) ||
	    (nlevels > 1 && nlevels != t->height))
		return tp_error_set(err, TP_EINVAL,
				    "LevelBandwidth= has %d values, the tree has %d level%s of links",
				    nlevels, t->height, t->height == 1 ? "" : "s");
	for (int l = 0; l < nlevels; l++)
		if (!(bw[l] > 0) || !isfinite(bw[l]))
			return tp_error_set(err, TP_EINVAL,
					    "LevelBandwidth=: value %d is not a positive number", l + 1);
	t->nlbw = nlevels;
	for (int l = 0; l < nlevels && l < 16; l++)
		t->lbw[l] = bw[l];
	if (nlevels == 0) {
		free(t->upinvbw);
		t->upinvbw = NULL;
		t->maxbw = 0;
		m->link_weight = NULL;
		return TP_OK;
	}
	double *inv = tp__malloc_array(2 * (size_t)t->nsw + 1, sizeof(double));
	if (!inv)
		return tp_error_set(err, TP_ENOMEM, "LevelBandwidth=: out of memory");
	double mx = 0;
	for (int32_t s = 0; s < t->nsw; s++) {
		double b = bw[bandwidth_level(t, s, nlevels)];
		inv[UP_LINK(s)] = inv[DOWN_LINK(s)] = 1.0 / b;
	}
	for (int l = 0; l < nlevels; l++)
		if (bw[l] > mx)
			mx = bw[l];
	free(t->upinvbw);
	t->upinvbw = inv;
	t->maxbw = mx;
	m->link_weight = inv;
	return TP_OK;
}

int tp__tree_set_lanes(tp_machine *m, const int *uplinks, int n,
		       bool adaptive, tp_error *err)
{
	struct tp_tree *t = tree_of(m);
	if (!t)
		return tp_error_set(err, TP_EINVAL, "LevelUplinks=: the network is not a switch tree");
	if (n < 0 || n > 16 || (n > 0 && !uplinks) || (n > 1 && n != t->height))
		return tp_error_set(err, TP_EINVAL,
				    "LevelUplinks= has %d values, the tree has %d level%s of links",
				    n, t->height, t->height == 1 ? "" : "s");
	for (int l = 0; l < n; l++)
		if (uplinks[l] < 1)
			return tp_error_set(err, TP_EINVAL,
					    "LevelUplinks=: value %d is not a positive integer", l + 1);
	t->nuplinks = n;
	for (int l = 0; l < n; l++)
		t->uplinks[l] = uplinks[l];
	t->adaptive = adaptive;
	if (tp__tree_build_lanes(t))
		return tp_error_set(err, TP_ENOMEM, "LevelUplinks=: out of memory");
	return TP_OK;
}

int tp__tree_set_rails(tp_machine *m, int rails, tp_error *err)
{
	struct tp_tree *t = tree_of(m);
	if (!t)
		return tp_error_set(err, TP_EINVAL, "Rails=: the network is not a switch tree");
	if (rails < 1 || rails > TP__RAILS_MAX)
		return tp_error_set(err, TP_EINVAL, "Rails=%d: expected 1..%d", rails,
				    TP__RAILS_MAX);
	t->rails = rails;
	return TP_OK;
}

bool tp_machine_has_level_bandwidth(const tp_machine *m)
{
	const struct tp_tree *t = tree_of(m);
	return t && t->upinvbw;
}

int tp_machine_tree_levels(const tp_machine *m)
{
	const struct tp_tree *t = tree_of(m);
	return t ? t->height : 0;
}

/* The switches of the file: a forest's virtual top is the last entry. */
int32_t tp_machine_switch_count(const tp_machine *m)
{
	const struct tp_tree *t = tree_of(m);
	return t ? t->nreal - (t->forest_top >= 0) : 0;
}

const char *tp_machine_switch_name(const tp_machine *m, int32_t s)
{
	const struct tp_tree *t = tree_of(m);
	if (!t || s < 0 || s >= tp_machine_switch_count(m))
		return NULL;
	return t->name[s];
}

/* A forest's virtual top is no switch of the file: the tops of its trees
 * have no parent here. */
int32_t tp_machine_switch_parent(const tp_machine *m, int32_t s)
{
	const struct tp_tree *t = tree_of(m);
	if (!t || s < 0 || s >= tp_machine_switch_count(m))
		return -1;
	int32_t up = t->parent[s];
	return up == t->forest_top ? -1 : up;
}

/* The arrays count nodes as level 0 (their links are part of the tree);
 * the public levels start at the leaf switches. */
int tp_machine_switch_level(const tp_machine *m, int32_t s)
{
	const struct tp_tree *t = tree_of(m);
	if (!t || s < 0 || s >= tp_machine_switch_count(m))
		return -1;
	return t->level[s] - 1;
}

int32_t tp_machine_node_switch(const tp_machine *m, int32_t node)
{
	const struct tp_tree *t = tree_of(m);
	if (!t || node < 0 || node >= m->nnodes)
		return -1;
	return t->parent[t->router_sw[node]];
}

int64_t tp_machine_node_link(const tp_machine *m, int32_t node)
{
	const struct tp_tree *t = tree_of(m);
	if (!t || node < 0 || node >= m->nnodes)
		return -1;
	return UP_LINK(t->router_sw[node]);
}

int tp__tree_uplinks(const tp_machine *m, int *uplinks, bool *adaptive)
{
	const struct tp_tree *t = tree_of(m);
	if (!t)
		return 0;
	for (int l = 0; l < t->nuplinks; l++)
		uplinks[l] = t->uplinks[l];
	*adaptive = t->adaptive;
	return t->nuplinks;
}

int32_t tp_machine_tree_count(const tp_machine *m)
{
	const struct tp_tree *t = tree_of(m);
	return t ? t->ntrees : 0;
}

/* The machines of this kind (network.h), by which the config tells which
 * kind built a machine. */
const struct tp_net_ops *const tp__tree_machines[] = { &tree_ops, NULL };
