/* topoplace — topoplace.conf's Network=block: its keys (TreeTopologyFile=,
 * BlockBandwidth=, NetworkBandwidth=, NetworkCost=, NetworkCards=; conf.c's
 * LevelBandwidth=, LevelUplinks=, UplinkRouting= on that tree), the blocks
 * read from TopologyFile= by Slurm's reader and built by net/block.c, and
 * check-config's account. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "conf/conf_kind.h"
#include "net/network.h"
#include "net/block.h"
#include "slurm/slurm_topo.h"
#include "net/machine_internal.h"
#include "conf/conf_records.h"

/* ---- topoplace.conf: Network=block (conf_kind.h) ----
 *
 * The blocks are Slurm's topology/block file (TopologyFile=, conf.c's),
 * the tree between them TreeTopologyFile= (else the aggregation of
 * BlockSizes=), with BlockBandwidth= and NetworkBandwidth= (GB/s, both or
 * neither) and NetworkCost=; LevelBandwidth= (conf.c's) weighs the links of
 * TreeTopologyFile=, LevelUplinks= and UplinkRouting= (conf.c's) give its
 * cables up, as on Network=tree.  Slurm's blocks take the same keys, the
 * cables also for topology.yaml's tree between the blocks. */

struct block_conf {
	int tree_line;              /* TreeTopologyFile= */
	char *tree_file;
	int blk_bw_line, net_bw_line, net_cost_line;
	double blk_bw, net_bw;      /* BlockBandwidth=, NetworkBandwidth= (GB/s) */
	int net_cost;               /* NetworkCost= (2..10^6) */
	int cards_line, cards;      /* NetworkCards= */
	char *tree_text;            /* Slurm's blocks: TreeTopologyFile='s */
};

static int conf_set_tree_file(struct tp__conf_reader *r, void *state,
			      const struct tp__conf_tok *t)
{
	struct block_conf *bc = state;
	return tp__conf_keep(r, &bc->tree_file, t->val) ? TP_OK : TP_ENOMEM;
}

static void conf_free_block(void *state)
{
	struct block_conf *bc = state;
	free(bc->tree_file);
	free(bc->tree_text);
}

/* BlockBandwidth= and NetworkBandwidth= come together. */
static int conf_block_pair(struct tp__conf_reader *r, const void *state)
{
	const struct block_conf *bc = state;
	if (bc->blk_bw_line && !bc->net_bw_line)
		return tp__conf_error(r, NULL, bc->blk_bw_line, TP_EINVAL,
				      "BlockBandwidth= needs NetworkBandwidth= too");
	if (bc->net_bw_line && !bc->blk_bw_line)
		return tp__conf_error(r, NULL, bc->net_bw_line, TP_EINVAL,
				      "NetworkBandwidth= needs BlockBandwidth= too");
	return TP_OK;
}

/* What the keys say about the tree and the links between the blocks. */
static void conf_block_opts(const struct tp__conf_reader *r,
			    const struct block_conf *bc, const char *tree_text,
			    tp_block_opts *o)
{
	o->tree_text = tree_text;
	o->tree_what = r->out->tree_path;
	o->block_bandwidth = bc->blk_bw_line ? bc->blk_bw : 0;
	o->network_bandwidth = bc->net_bw_line ? bc->net_bw : 0;
	o->network_cost = bc->net_cost_line ? bc->net_cost : 0;
	o->network_cards = bc->cards_line ? bc->cards : 0;
}

/* The settings of Network=block, checked before any file is read. */
static int conf_block_check(struct tp__conf_reader *r, const struct block_conf *bc,
			    int line, const char *key)
{
	int bad = r->dims_line ? r->dims_line : r->wrap_line ? r->wrap_line
		  : r->npr_line ? r->npr_line : r->bw_line ? r->bw_line
		  : r->dist_line ? r->dist_line : r->cost_line;
	if (bad)
		return tp__conf_error(r, NULL, bad, TP_EINVAL,
				      "%s does not apply to Network=block (the shape comes from TopologyFile=)",
				      bad == r->dims_line ? "Dims=" : bad == r->wrap_line
				      ? "Wrap=" : bad == r->npr_line ? "NodesPerRouter="
				      : bad == r->bw_line ? "LinkBandwidth=" : bad == r->dist_line
				      ? "Distance=" : "LevelCost=");
	if (!r->topo_line)
		return tp__conf_error(r, NULL, line, TP_EINVAL,
				      "%s before TopologyFile= (Network=block needs TopologyFile=PATH first)",
				      key);
	if (r->lbw_line && !bc->tree_line)
		return tp__conf_error(r, NULL, r->lbw_line, TP_EINVAL,
				      "LevelBandwidth= with Network=block needs TreeTopologyFile=");
	int ul = r->uplinks_line ? r->uplinks_line : r->routing_line;
	if (ul && !bc->tree_line)
		return tp__conf_error(r, NULL, ul, TP_EINVAL,
				      "%s= with Network=block needs TreeTopologyFile= "
				      "(Slurm's aggregation of blocks has no cables to count)",
				      ul == r->uplinks_line ? "LevelUplinks" : "UplinkRouting");
	int rc = conf_block_pair(r, bc);
	if (rc)
		return rc;
	if (r->lbw_line && !bc->net_bw_line)
		return tp__conf_error(r, NULL, r->lbw_line, TP_EINVAL,
				      "LevelBandwidth= with Network=block needs BlockBandwidth= and NetworkBandwidth=");
	return TP_OK;
}

static int conf_build_block(struct tp__conf_reader *r, void *state, int line,
			    const char *key)
{
	const struct block_conf *bc = state;
	int rc = conf_block_check(r, bc, line, key);
	if (rc)
		return rc;
	struct tp__conf_built *b = r->out;
	char *text = NULL, *tree = NULL;
	rc = tp__conf_read_topology(r, r->topo_line, "TopologyFile", r->topo_text,
				    &b->topo_path, &text);
	if (!rc && bc->tree_line)
		rc = tp__conf_read_topology(r, bc->tree_line, "TreeTopologyFile",
					    bc->tree_file, &b->tree_path, &tree);
	if (!rc) {
		tp_block_opts o = { 0 };
		conf_block_opts(r, bc, tree, &o);
		o.level_bandwidth = b->level_bw;
		o.nlevel_bandwidth = r->lbw_line ? b->nlevel_bw : 0;
		rc = tp__machine_from_blocks(&b->m, text, b->topo_path, &o, &b->warn,
					     r->err);
	}
	free(text);
	free(tree);
	return rc;
}

/* LevelUplinks= and UplinkRouting= on the tree between the blocks, when it
 * is a file's (Network=block checked that it is; for Slurm's blocks over
 * the aggregation they are ignored, as check-config says). */
static int conf_finish_block(struct tp__conf_reader *r, void *state)
{
	(void)state;
	tp_machine *t = tp__blocks_file_tree(r->out->m);
	return t ? tp__conf_apply_uplinks(r, t) : TP_OK;
}

/* Slurm's blocks: the bandwidths, and the tree between them from
 * TreeTopologyFile= (read only for a topology of blocks). */
static int conf_slurm_block(struct tp__conf_reader *r, void *state,
			    enum tp__stopo_kind sk, struct tp__topo_opts *to,
			    tp_block_opts *bo)
{
	(void)to;
	struct block_conf *bc = state;
	int rc = TP_OK;
	if (bc->tree_line && sk == TP__STOPO_BLOCK)
		rc = tp__conf_read_topology(r, bc->tree_line, "TreeTopologyFile",
					    bc->tree_file, &r->out->tree_path,
					    &bc->tree_text);
	if (!rc)
		conf_block_opts(r, bc, bc->tree_text, bo);
	return rc;
}

static void conf_describe_block(const struct tp__conf_built *b, FILE *out)
{
	const tp_machine *m = b->m;
	int32_t nb = tp_machine_block_count(m);
	fprintf(out, "blocks from %s: %ld block%s, base size %d, %ld nodes; between blocks: %s%s, network links cost %d\n",
		b->topo_path ? b->topo_path : "?", (long)nb, nb == 1 ? "" : "s",
		tp_machine_block_base_size(m), (long)m->nnodes,
		b->tree_path ? "the tree of " : "Slurm's block aggregation",
		b->tree_path ? b->tree_path : "", tp_machine_block_network_cost(m));
	/* the time model's two ways out of a node (lane_bandwidth) */
	bool given;
	double nvlink = tp__blocks_nvlink_bw(m, &given);
	double port = tp__machine_node_port_bw(m);
	int cards = tp__machine_rails(m);
	fprintf(out, "inside a block: NVLink domain at %g GB/s a node%s; between "
		"blocks: node ports at %g GB/s%s\n",
		nvlink,
		given ? "" : " (BlockBandwidth= not given: one NVLink 5 GPU)",
		port / 1e9,
		!tp__blocks_tree_file(m) ? ", the aggregation's switches non-blocking"
		: tp_machine_has_level_bandwidth(tp_machine_block_tree(m))
		? ", the tree's cables at LevelBandwidth=" : ", the tree's cables at the ports' bandwidth");
	if (tp__blocks_tree_file(m)) {
		fputs("the tree's uplinks per switch ", out);
		tp__conf_describe_uplinks(tp_machine_block_tree(m), out);
		fputc('\n', out);
	}
	if (cards > 1)
		fprintf(out, "network cards: %d a node, each at %g GB/s; local rank "
			"k leaves and arrives on card k mod %d (no rail planes: the "
			"tree's cables are shared)\n", cards,
			port / 1e9 / cards, cards);
}

/* In this order the messages about keys given to another kind name them. */
static const struct tp__conf_key block_keys[] = {
	{ "TreeTopologyFile", offsetof(struct block_conf, tree_line),
	  .set = conf_set_tree_file, .flags = TP__CONF_KEY_SLURM },
	{ "BlockBandwidth", offsetof(struct block_conf, blk_bw_line),
	  .flags = TP__CONF_KEY_SLURM, TP__CONF_GBS_AT(struct block_conf, blk_bw) },
	{ "NetworkBandwidth", offsetof(struct block_conf, net_bw_line),
	  .flags = TP__CONF_KEY_SLURM, TP__CONF_GBS_AT(struct block_conf, net_bw) },
	{ "NetworkCost", offsetof(struct block_conf, net_cost_line),
	  .flags = TP__CONF_KEY_SLURM,
	  TP__CONF_INT_AT(struct block_conf, net_cost, 2, 1000000) },
	{ "NetworkCards", offsetof(struct block_conf, cards_line),
	  .flags = TP__CONF_KEY_SLURM,
	  TP__CONF_INT_AT(struct block_conf, cards, 1, TP__RAILS_MAX) },
};


const struct tp__conf_kind tp__conf_block = {
	.name = "block",
	.selectable = true,
	.machines = tp__block_machines,
	TP__CONF_KEYS(block_keys, struct block_conf),
	.free_state = conf_free_block,
	.build = conf_build_block,
	.finish = conf_finish_block,
	.nodes_sit = "in their blocks",
	.unplaced = "in no block",
	.slurm_kind = TP__STOPO_BLOCK,
	.slurm_check = conf_block_pair,
	.slurm_options = conf_slurm_block,
	.describe = conf_describe_block,
};
