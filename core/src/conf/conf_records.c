/* topoplace — a topology.conf's text into a machine: the reader
 * (slurm/topology_conf.c) returns the records, then this side hands them
 * to the builder (net/tree_build.c, block_build.c).  Records are the only
 * border between Slurm's files and the model (issue 51): no reader builds,
 * no builder reads.  The tree and block keys of topoplace.conf
 * (kind_tree.c, kind_block.c) and tp_machine_from_topology/_from_blocks
 * go through here. */
#include <stddef.h>

#include "conf/conf_records.h"
#include "slurm/slurm_topo.h"

int tp_machine_from_topology(tp_machine **out, const char *text,
			     const char *what, const int *level_cost,
			     int nlevels, tp_error *err)
{
	struct tp__topo_opts o = { level_cost, nlevels, 0, NULL, NULL };
	return tp__machine_from_topology(out, text, what, &o, err);
}

/* topology.conf's text as records, then the tree (o->warn receives the
 * warnings of both). */
int tp__machine_from_topology(tp_machine **out, const char *text,
			      const char *what, const struct tp__topo_opts *o,
			      tp_error *err)
{
	if (!what)
		what = "topology.conf";
	if (!out || !text || !o)
		return tp_error_set(err, TP_EINVAL, "%s: missing text or output", what);
	*out = NULL;
	struct tp__conf_records c;
	int rc = tp__tree_conf_records(text, what, o->warn, &c, err);
	if (!rc) {
		struct tp__topo_recs r = { c.rec, c.n, what, false, o->warn };
		rc = tp__tree_from_records(out, &r, o, err);
	}
	tp__conf_records_free(&c);
	return rc;
}

/* The blocks of topology.conf's text as records, then the blocks (and the
 * tree between them from opts->tree_text: tp__blocks_with_tree_text). */
int tp__machine_from_blocks(tp_machine **out, const char *text, const char *what,
			    const tp_block_opts *opts, struct tp__warnings *warn,
			    tp_error *err)
{
	if (!what)
		what = "block topology";
	if (!out || !text)
		return tp_error_set(err, TP_EINVAL, "%s: missing text or output", what);
	*out = NULL;
	struct tp__conf_records c;
	int rc = tp__block_conf_records(text, what, warn, &c, err);
	if (!rc) {
		struct tp__topo_recs r = { c.rec, c.n, what, false, warn };
		rc = tp__blocks_with_tree_text(out, &r, &c.sizes, NULL, opts, err);
	}
	tp__conf_records_free(&c);
	return rc;
}

int tp_machine_from_blocks(tp_machine **out, const char *text, const char *what,
			   const tp_block_opts *opts, tp_error *err)
{
	return tp__machine_from_blocks(out, text, what, opts, NULL, err);
}

/* The blocks' builder takes records only: a tree between the blocks given
 * as text (o->tree_text, TreeTopologyFile='s) is read here into records
 * first.  When the text is refused, the blocks are built all the same
 * without it, so that an error of theirs is the one told, as when the
 * builder read the tree after them. */
int tp__blocks_with_tree_text(tp_machine **out, const struct tp__topo_recs *r,
			      const struct tp__block_sizes *sizes,
			      const struct tp__topo_recs *tree,
			      const tp_block_opts *o, tp_error *err)
{
	if (!o || !o->tree_text || !r)
		return tp__blocks_from_records(out, r, sizes, tree, o, err);
	const char *tw = o->tree_what ? o->tree_what : "tree topology";
	tp_block_opts bo = *o;
	bo.tree_text = NULL;
	struct tp__conf_records c;
	tp_error e;
	tp_error_clear(&e);
	int rc = tp__tree_conf_records(o->tree_text, tw, r->warn, &c, &e);
	if (rc) {
		/* the blocks' own error first; else the tree's */
		bo.level_bandwidth = NULL;
		bo.nlevel_bandwidth = 0;
		int brc = tp__blocks_from_records(out, r, sizes, NULL, &bo, err);
		if (brc == TP_OK) {
			tp_machine_destroy(*out);
			*out = NULL;
			if (err)
				*err = e;
		} else {
			rc = brc;
		}
	} else {
		struct tp__topo_recs tr = { c.rec, c.n, tw, false, r->warn };
		rc = tp__blocks_from_records(out, r, sizes, &tr, &bo, err);
	}
	tp__conf_records_free(&c);
	return rc;
}

int tp__rings_from_conf_text(tp_machine **out, const char *text,
			     const char *what, struct tp__warnings *warn,
			     tp_error *err)
{
	if (!what)
		what = "topology.conf";
	if (!out || !text)
		return tp_error_set(err, TP_EINVAL, "%s: missing text or output", what);
	*out = NULL;
	struct tp__conf_records c;
	int rc = tp__ring_conf_records(text, what, warn, &c, err);
	if (!rc) {
		struct tp__topo_recs recs = { c.rec, c.n, what, false, warn };
		rc = tp__rings_from_records(out, &recs, err);
	}
	tp__conf_records_free(&c);
	return rc;
}
