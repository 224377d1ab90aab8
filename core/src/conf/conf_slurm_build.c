/* topoplace — Slurm's topology built into the network: the topology that
 * slurm/slurm_topology.c chose and read (records, or topology.conf's text
 * read here into records), handed to net/'s builders.  The readers build
 * nothing (issue 51): this is conf/'s side of the border.  The text of a
 * topology.conf kept whole, and topology.yaml's blocks with the tree of the
 * same file, come through here too. */
#include <string.h>

#include "conf/conf_records.h"
#include "slurm/slurm_topology.h"

/* Blocks of topology.yaml: the network between them is the first tree
 * topology of the same file that holds every node of the blocks (an
 * NVLink site's InfiniBand fabric, described beside its blocks), else the
 * aggregation Slurm enforces.  out->tree_used names the tree topology
 * taken. */
static int yaml_blocks(const struct tp__slurm_topology *st,
		       const struct tp__topo_recs *recs,
		       const struct tp__block_sizes *sizes, const tp_block_opts *bo,
		       struct tp__stopo_built *out, tp_error *err)
{
	for (int j = 0; !bo->tree_text && j < st->set.n; j++) {
		const struct tp__stopo *t = &st->set.t[j];
		if (t->kind != TP__STOPO_TREE || !t->nrec)
			continue;
		/* a tree that lacks a block node is not this network: quietly
		 * the next one, its warnings kept only when it is taken */
		struct tp__warnings w;
		memset(&w, 0, sizeof w);
		struct tp__topo_recs tr = { t->rec, t->nrec, st->file, true, &w };
		struct tp__topo_recs br = *recs;
		br.warn = &w;
		tp_error e;
		tp_error_clear(&e);
		if (tp__blocks_from_records(&out->m, &br, sizes, &tr, bo, &e) == TP_OK) {
			for (int i = 0; i < w.n; i++)
				tp__warn(out->warn, "%s", w.line[i]);
			out->tree_used = t->name;
			return TP_OK;
		}
	}
	return tp__blocks_with_tree_text(&out->m, recs, sizes, NULL, bo, err);
}

int tp__slurm_topology_machine(const struct tp__slurm_topology *st, int which,
			       const struct tp__topo_opts *tree_opts,
			       const tp_block_opts *block_opts,
			       struct tp__stopo_built *built, tp_error *err)
{
	struct tp__warnings *warn = built->warn;
	tp_machine **out = &built->m;
	*out = NULL;
	built->tree_used = NULL;
	if (which < 0 || which >= st->set.n)
		return tp_error_set(err, TP_ENOENT, "%s", st->why);
	const struct tp__stopo *t = &st->set.t[which];
	struct tp__topo_recs recs = { t->rec, t->nrec, st->file, st->yaml, warn };
	bool from_recs = st->yaml || t->conf_records;
	tp_block_opts bo = block_opts ? *block_opts : (tp_block_opts){ 0 };
	struct tp__topo_opts to = tree_opts ? *tree_opts : (struct tp__topo_opts){ 0 };
	to.warn = warn;
	switch (t->kind) {
	case TP__STOPO_TREE:
		return from_recs ? tp__tree_from_records(out, &recs, &to, err)
				 : tp__machine_from_topology(out, st->text, st->file, &to, err);
	case TP__STOPO_BLOCK:
		if (st->yaml)
			return yaml_blocks(st, &recs, &t->sizes, &bo, built, err);
		return from_recs ? tp__blocks_with_tree_text(out, &recs, &t->sizes, NULL,
							     &bo, err)
				 : tp__machine_from_blocks(out, st->text, st->file, &bo,
							   warn, err);
	case TP__STOPO_RING:
		return st->yaml ? tp__rings_from_records(out, &recs, err)
				: tp__rings_from_conf_text(out, st->text, st->file, warn,
							   err);
	case TP__STOPO_TORUS3D:
		return tp__torus3d_from_records(out, t->torus, t->ntorus, st->file,
						warn, err);
	case TP__STOPO_FLAT:
		return tp_error_set(err, TP_ENOENT, "%s:%d: topology %s is flat: "
				    "Slurm knows no network to place on", st->file,
				    t->line, t->name);
	default:
		return tp_error_set(err, TP_EINVAL, "%s: topology %s: no kind",
				    st->file, t->name);
	}
}
