/* topoplace — topoplace.conf's Network=tree: its keys (ForestCost=,
 * Rails=; conf.c's LevelUplinks= and UplinkRouting= applied), the tree read
 * from TopologyFile= by Slurm's reader and built by net/tree.c, and
 * check-config's account. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "conf/conf_kind.h"
#include "net/network.h"
#include "net/tree.h"
#include "slurm/slurm_topo.h"
#include "net/machine_internal.h"
#include "conf/conf_records.h"

/* ---- topoplace.conf: Network=tree (conf_kind.h) ----
 *
 * The tree is a topology.conf (TopologyFile=), its links weighed by
 * LevelCost= and, for congestion, LevelBandwidth=, its cables up
 * LevelUplinks= and UplinkRouting= (conf.c reads those: the tree between
 * blocks takes them too); ForestCost= is the tree's own. */

struct tree_conf {
	int forest_line;
	int forest_cost;            /* ForestCost= (0: not given) */
	int rails_line, rails;      /* Rails= */
};

/* ForestCost=N: the cost of each link from the top of a tree of a forest
 * (a topology.conf whose switches have no common top) to the virtual top
 * switch joining the trees. */
static int conf_set_forest(struct tp__conf_reader *r, void *state,
			   const struct tp__conf_tok *t)
{
	return tp__conf_int(r, t, "ForestCost", 1, 1000000,
			    &((struct tree_conf *)state)->forest_cost);
}

/* LevelCost= for tp__machine_from_topology; where names "FILE:LINE" of it
 * for its errors. */
static struct tp__topo_opts conf_topo_opts(struct tp__conf_reader *r,
					   const struct tree_conf *tc,
					   char *where, size_t len)
{
	snprintf(where, len, "%s:%d", r->what, r->cost_line);
	return (struct tp__topo_opts){ r->cost, r->ncost, tc->forest_cost,
				       &r->out->warn, r->cost_line ? where : NULL };
}

/* The machine from Slurm's topology.conf named by TopologyFile=. */
static int conf_build_tree(struct tp__conf_reader *r, void *state, int line,
			   const char *key)
{
	int bad = r->dims_line ? r->dims_line : r->wrap_line ? r->wrap_line
		  : r->npr_line ? r->npr_line : r->bw_line ? r->bw_line
		  : r->dist_line;
	if (bad)
		return tp__conf_error(r, NULL, bad, TP_EINVAL,
				      "%s does not apply to Network=tree (the shape comes from TopologyFile=)",
				      bad == r->dims_line ? "Dims=" : bad == r->wrap_line
				      ? "Wrap=" : bad == r->npr_line ? "NodesPerRouter="
				      : bad == r->bw_line ? "LinkBandwidth=" : "Distance=");
	if (!r->topo_line)
		return tp__conf_error(r, NULL, line, TP_EINVAL,
				      "%s before TopologyFile= (Network=tree needs TopologyFile=PATH first)",
				      key);
	free(r->out->topo_path);
	r->out->topo_path = NULL;
	char *text;
	int rc = tp__conf_read_topology(r, r->topo_line, "TopologyFile",
					r->topo_text, &r->out->topo_path, &text);
	if (rc) {
		free(text);
		return rc;
	}
	char where[512];
	struct tp__topo_opts o = conf_topo_opts(r, state, where, sizeof where);
	rc = tp__machine_from_topology(&r->out->m, text, r->out->topo_path, &o, r->err);
	free(text);
	return rc;
}

/* LevelBandwidth= on the tree built (one value per level of links, or one
 * for all). */
static int conf_finish_tree(struct tp__conf_reader *r, void *state)
{
	const struct tree_conf *tc = state;
	const struct tp__conf_built *b = r->out;
	int levels = tp_machine_tree_levels(b->m);
	if (b->nlevel_bw > 1 && b->nlevel_bw != levels)
		return tp__conf_error(r, NULL, r->lbw_line, TP_EINVAL,
				      "LevelBandwidth= has %d values, the tree has %d level%s of links",
				      b->nlevel_bw, levels, levels == 1 ? "" : "s");
	int rc;
	if (b->nlevel_bw > 0 &&
	    (rc = tp_machine_set_tree_level_bandwidth(b->m, b->level_bw, b->nlevel_bw,
						      NULL)))
		return tp__conf_error(r, NULL, r->lbw_line, rc,
				      "LevelBandwidth=: cannot be applied to the tree");
	if (tc->rails_line && (rc = tp__tree_set_rails(b->m, tc->rails, NULL)))
		return tp__conf_error(r, NULL, tc->rails_line, rc,
				      "Rails=: cannot be applied to the tree");
	return tp__conf_apply_uplinks(r, b->m);
}

/* Slurm's trees take ForestCost=. */
static int conf_slurm_tree(struct tp__conf_reader *r, void *state,
			   enum tp__stopo_kind sk, struct tp__topo_opts *to,
			   tp_block_opts *bo)
{
	(void)r;
	(void)sk;
	(void)bo;
	to->forest_cost = ((const struct tree_conf *)state)->forest_cost;
	return TP_OK;
}

static void conf_describe_tree(const struct tp__conf_built *b, FILE *out)
{
	const tp_machine *m = b->m;
	fprintf(out, "tree from %s: %ld switches, %d level%s of links, %ld nodes\n",
		b->topo_path ? b->topo_path : "?", (long)tp_machine_switch_count(m),
		tp_machine_tree_levels(m), tp_machine_tree_levels(m) == 1 ? "" : "s",
		(long)m->nnodes);
	if (tp_machine_tree_count(m) > 1)
		fprintf(out, "forest of %ld trees joined by a virtual top switch\n",
			(long)tp_machine_tree_count(m));
	if (b->nlevel_bw > 0) {
		fputs("level bandwidth ", out);
		for (int l = 0; l < b->nlevel_bw; l++)
			fprintf(out, "%s%g", l ? "," : "", b->level_bw[l]);
		fputc('\n', out);
	}
	int rails = tp__machine_rails(m);
	fputs("uplinks per switch ", out);
	tp__conf_describe_uplinks(m, out);
	fputc('\n', out);
	if (rails > 1)
		fprintf(out, "rails %d: a network card a rail on every node, each "
			"leaf switch a scalable unit of %d rail switches; local rank "
			"k on rail k mod %d, traffic between rails over NVLink first "
			"(PXN) at %g GB/s\n", rails, rails, rails,
			m->fab.intra_bw / 1e9);
}

static const struct tp__conf_key tree_keys[] = {
	{ "ForestCost", offsetof(struct tree_conf, forest_line),
	  .set = conf_set_forest, .flags = TP__CONF_KEY_SLURM },
	{ "Rails", offsetof(struct tree_conf, rails_line),
	  .flags = TP__CONF_KEY_SLURM,
	  TP__CONF_INT_AT(struct tree_conf, rails, 1, TP__RAILS_MAX) },
};


const struct tp__conf_kind tp__conf_tree = {
	.name = "tree",
	.selectable = true,
	.machines = tp__tree_machines,
	TP__CONF_KEYS(tree_keys, struct tree_conf),
	.build = conf_build_tree,
	.finish = conf_finish_tree,
	.nodes_sit = "under their switches",
	.unplaced = "under no switch",
	.slurm_kind = TP__STOPO_TREE,
	.slurm_options = conf_slurm_tree,
	.describe = conf_describe_tree,
};
