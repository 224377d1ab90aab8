/* topoplace — Slurm's topology as records, whichever file it came from.
 *
 * Slurm describes one network in two syntaxes: topology.conf's lines
 * (SwitchName=, BlockName=, RingName=) and topology.yaml's entries
 * (switches:, blocks:, rings:, toruses:).  Each reader turns its file into
 * the records below, and each network kind builds its machine from records
 * alone (tree.c, block.c, ring.c, torus3d.c), so both files give the same
 * machine and the same rules.  A record keeps the line it came from, and
 * whether that line is YAML, so that every message names the file, the line
 * and the key as the admin wrote it.
 */
#ifndef TOPOPLACE_SLURM_TOPO_H
#define TOPOPLACE_SLURM_TOPO_H

#include <stdbool.h>
#include <stdint.h>

#include "internal.h"

/* One switch, block or ring. */
struct tp__topo_rec {
	const char *name;        /* SwitchName= / switch:, BlockName= / block:,
				    RingName= / ring: */
	const char *nodes;       /* Nodes= / nodes: (a Slurm hostlist), or NULL */
	const char *switches;    /* tree only: Switches= / children:, or NULL */
	int line;                /* of the record, for messages (0: unknown) */
};

/* The records of one topology, and where they came from. */
struct tp__topo_recs {
	const struct tp__topo_rec *rec;
	int32_t n;
	const char *what;        /* the file, in messages */
	bool yaml;               /* messages say "switch s1", not "SwitchName=s1" */
	struct tp__warnings *warn;   /* NULL: warnings dropped */
};

/* A tree (topology/tree) from its switch records: the machine that
 * tp__machine_from_topology builds from topology.conf's text. */
int tp__tree_from_records(tp_machine **out, const struct tp__topo_recs *r,
			  const struct tp__topo_opts *o, tp_error *err);

/* The block sizes of a block topology: BlockSizes= / block_sizes:, or
 * BlockLevels= (Slurm 23.11) as the topology.conf reader converts it. */
struct tp__block_sizes {
	int n;                   /* 0: not given (Slurm's default) */
	int size[17];
	int line;                /* for messages */
};

/* A block network (topology/block) from its block records; the tree
 * between the blocks from o (tree_text), else from tree (records, e.g. the
 * tree topology of the same topology.yaml), else generated. */
int tp__blocks_from_records(tp_machine **out, const struct tp__topo_recs *r,
			    const struct tp__block_sizes *sizes,
			    const struct tp__topo_recs *tree,
			    const tp_block_opts *o, tp_error *err);

/* topology/ring (Slurm 26.05): rings of at most 16 nodes each, in order. */
int tp__rings_from_records(tp_machine **out, const struct tp__topo_recs *r,
			   tp_error *err);

/* topology/torus3d (Slurm 26.05, topology.yaml only). */
struct tp__torus_region {
	int anchor[3], dims[3];
	const char *nodes;
	int line;
};
struct tp__torus3d {
	const char *name;
	int dims[3];             /* x, y, z */
	const char *nodes;       /* x-major over the whole torus, or NULL */
	const struct tp__torus_region *region;   /* or these */
	int nregions;
	int line;
};
int tp__torus3d_from_records(tp_machine **out, const struct tp__torus3d *t,
			     int n, const char *what, struct tp__warnings *warn,
			     tp_error *err);

#endif
