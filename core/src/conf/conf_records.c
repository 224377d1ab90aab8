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
