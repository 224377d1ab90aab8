/* topoplace — the records the network kinds build their machines from:
 * Slurm's switches, blocks, rings and toruses, whichever file they came
 * from, and the builders that take them (tree.c, block.c, ring.c,
 * torus3d.c).
 *
 * Records are the only border between Slurm's files and the model: the
 * readers (slurm/topology_conf.c for topology.conf, slurm/slurm_yaml.c for
 * topology.yaml) turn a file into these records, and each builder makes
 * its machine from records alone, so that both files give the same machine
 * and the same rules.  A record keeps the line it came from, and whether
 * that line is YAML, so that every message names the file, the line and
 * the key as the admin wrote it.  No builder reads a file.
 */
#ifndef TOPOPLACE_NET_RECORDS_H
#define TOPOPLACE_NET_RECORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "net/machine_internal.h"
#include "util/util_internal.h"

/* tp_machine_from_topology with topoplace.conf's settings
 * (slurm/topology_conf.c reads the text, net/tree_build.c builds the tree,
 * conf/conf_records.c joins the two). */
struct tp__topo_opts {
	const int *level_cost;      /* LevelCost=, nlevels values */
	int nlevels;
	int forest_cost;            /* ForestCost=; 0: the top level's cost */
	struct tp__warnings *warn;  /* NULL: warnings dropped */
	const char *cost_where;     /* "FILE:LINE" of LevelCost= for its
				       errors; NULL: the topology file */
};

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
 * tp__machine_from_topology builds from topology.conf's text.  o (NULL: no
 * settings) gives LevelCost= and ForestCost=; the warnings go to r->warn,
 * o->warn is not read (tp__machine_from_topology passes it as r->warn). */
int tp__tree_from_records(tp_machine **out, const struct tp__topo_recs *r,
			  const struct tp__topo_opts *o, tp_error *err);

/* The most levels of aggregated blocks: Slurm's block sizes go up to the
 * base size x 2^15. */
#define TP__BLOCK_MAX_LEVEL 15
/* Nodes of a block network: each is added twice (the machine and the tree
 * between the blocks), so the bound is lower than a tree's; the largest
 * NVLink-domain systems have tens of thousands of nodes. */
#define TP__BLOCK_MAX_NODES ((int64_t)1 << 18)

/* The block sizes of a block topology: BlockSizes= / block_sizes:, or
 * BlockLevels= (Slurm 23.11) as the topology.conf reader converts it. */
struct tp__block_sizes {
	int n;                   /* 0: not given (Slurm's default) */
	int size[17];
	int line;                /* for messages */
};

/* A block network (topology/block) from its block records; the tree
 * between the blocks from tree (records: the tree topology of the same
 * topology.yaml, or TreeTopologyFile= as slurm/topology_conf.c reads it),
 * else generated.  o->tree_text is refused: text is a reader's
 * (conf/conf_records.c: tp__blocks_with_tree_text). */
int tp__blocks_from_records(tp_machine **out, const struct tp__topo_recs *r,
			    const struct tp__block_sizes *sizes,
			    const struct tp__topo_recs *tree,
			    const tp_block_opts *o, tp_error *err);
/* topology/ring (Slurm 26.05): rings of at most 16 nodes each, in order
 * (ring.c: kind "ring", coordinates (position, ring)); at most
 * TP__MAX_RINGS rings, as Slurm numbers rings in 16 bits. */
#define TP__MAX_RINGS 65536
int tp__rings_from_records(tp_machine **out, const struct tp__topo_recs *r,
			   tp_error *err);
/* topology/torus3d (Slurm 26.05, topology.yaml only). */
struct tp__torus_region {
	int anchor[3], dims[3];
	const char *nodes;
	int line;
};
/* An allocation shape Slurm allows on the torus (placements:): validated
 * as Slurm validates it, no part of the network.  spacing 0: the dims. */
struct tp__torus_placement {
	int dims[3], seed[3], spacing[3];
	int line;
};
struct tp__torus3d {
	const char *name;
	int dims[3];             /* x, y, z */
	const char *nodes;       /* x-major over the whole torus, or NULL */
	const struct tp__torus_region *region;   /* or these */
	int nregions;
	int line;
	const struct tp__torus_placement *placement;   /* or NULL */
	int nplacements;
};
/* One torus: the torus tp_machine_create gives (3 wrapped dimensions, kind
 * "torus"); several: kind "tori", coordinates (x, y, z, torus) (torus3d.c). */
int tp__torus3d_from_records(tp_machine **out, const struct tp__torus3d *t,
			     int n, const char *what, struct tp__warnings *warn,
			     tp_error *err);

/* Tori side by side that share no link (torus3d.c): Slurm's rings (nd 1,
 * kind "ring") and toruses (nd 3, kind "tori").  Domain i is a torus of
 * dims[0..nd-1] routers (0: none, an empty ring); the machine's box is the
 * largest extent of each axis, then the domain's number (coordinate nd).
 * Names are copied (messages and link names). */
struct tp__tori_domain {
	const char *name;
	int dims[3];
};
int tp__tori_new(tp_machine **out, int nd, const struct tp__tori_domain *d,
		 int32_t n, tp_error *err);

/* The builders' words for a topology with no node placed yet (Slurm 25.05
 * and later run so: nodes join at run time).  The same text as the public
 * TP_CONF_SKELETON of <topoplace/conf.h>, which the tree and block tests
 * compare the builders' messages with; net/ includes no reader's header. */
#define TP__NET_SKELETON "no node placed yet: nodes join at run time " \
	"(slurm.conf NodeName=... Topology=, slurmd --conf \"Topology=...\")"

#endif
