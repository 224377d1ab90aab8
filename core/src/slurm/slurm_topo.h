/* topoplace — Slurm's topology as records, whichever file it came from.
 *
 * Slurm describes one network in two syntaxes: topology.conf's lines
 * (SwitchName=, BlockName=, RingName=) and topology.yaml's entries
 * (switches:, blocks:, rings:, toruses:).  Each reader turns its file into
 * the records below (topology_conf.c, slurm_yaml.c), and each network kind
 * builds its machine from records alone (net/tree.c, block.c, ring.c,
 * torus3d.c), so both files give the same
 * machine and the same rules.  A record keeps the line it came from, and
 * whether that line is YAML, so that every message names the file, the line
 * and the key as the admin wrote it.
 */
#ifndef TOPOPLACE_SLURM_TOPO_H
#define TOPOPLACE_SLURM_TOPO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "internal.h"
#include "net/machine_internal.h"

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
 * between the blocks from o (tree_text), else from tree (records, e.g. the
 * tree topology of the same topology.yaml), else generated. */
int tp__blocks_from_records(tp_machine **out, const struct tp__topo_recs *r,
			    const struct tp__block_sizes *sizes,
			    const struct tp__topo_recs *tree,
			    const tp_block_opts *o, tp_error *err);
/* tp_machine_from_blocks (topology.conf's text into records, then the
 * above), with what Slurm accepts but logs as warnings into warn. */
int tp__machine_from_blocks(tp_machine **out, const char *text, const char *what,
			    const tp_block_opts *o, struct tp__warnings *warn,
			    tp_error *err);

/* topology/ring (Slurm 26.05): rings of at most 16 nodes each, in order
 * (ring.c: kind "ring", coordinates (position, ring)); at most
 * TP__MAX_RINGS rings, as Slurm numbers rings in 16 bits. */
#define TP__MAX_RINGS 65536
int tp__rings_from_records(tp_machine **out, const struct tp__topo_recs *r,
			   tp_error *err);
/* The same from topology.conf's text: RingName=NAME [Nodes=HOSTLIST] lines,
 * read as Slurm reads them, then tp__rings_from_records.  what names the
 * file in messages; warn may be NULL. */
int tp__rings_from_conf_text(tp_machine **out, const char *text,
			     const char *what, struct tp__warnings *warn,
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

/* ---- topology.yaml (slurm_yaml.c) ---- */

enum tp__stopo_kind { TP__STOPO_NONE, TP__STOPO_TREE, TP__STOPO_BLOCK,
		      TP__STOPO_FLAT, TP__STOPO_RING, TP__STOPO_TORUS3D };

/* One topology of topology.yaml (or topology.conf's one, named
 * "default" as Slurm names it). */
struct tp__stopo {
	const char *name;
	int line;
	bool cluster_default;
	enum tp__stopo_kind kind;
	struct tp__topo_rec *rec;     /* switches, blocks or rings */
	int32_t nrec;
	struct tp__block_sizes sizes; /* block */
	bool alpha_step_rank;         /* flat: {alpha_step_rank: true} */
	struct tp__torus3d *torus;    /* torus3d */
	int ntorus;
	int64_t njoined;              /* nodes slurm.conf's Topology= put in
					 its units (tp__stopo_join) */
	int64_t nlive;                /* nodes slurmctld's live view put in
					 its units (tp__stopo_live) */
	bool conf_records;            /* topology.conf's: rec holds its
					 records, the machine is built from
					 them (else from the text) */
};

struct ynode;
struct tp__stopo_set {
	struct tp__stopo *t;
	int n;
	struct ynode *doc;            /* the document the records point into */
	char **owned;                 /* strings tp__stopo_join made */
	int nowned, owned_cap;
};

/* slurm.conf's NodeName=... Topology=TOPO:UNIT (k->node_topo) applied to
 * the records of every topology of s, as slurmctld applies it when the
 * nodes register (slurm_join.c): each node leaves wherever topology.yaml
 * put it and joins its unit, a tree switch path or a block.  What
 * slurmctld refuses (no such topology, switch or block; not a leaf) is a
 * warning naming the nodes, which then stay out.  what names the topology
 * file in messages. */
struct tp__slurm_keys;
int tp__stopo_join(struct tp__stopo_set *s, const char *what,
		   const struct tp__slurm_keys *k, struct tp__warnings *warn,
		   tp_error *err);

/* Keep str (malloc'ed) until the set is freed: str, or NULL when it
 * cannot be kept (str freed). */
char *tp__stopo_own(struct tp__stopo_set *s, char *str);

/* Nodes that slurmctld's live view places (slurm_live.c) into units of
 * topology which of s: q[i]'s nodes (a hostlist) into unit[i], a tree
 * switch path or a block, as tp__stopo_join does for slurm.conf's values
 * (a unit unknown to the topology is a warning; those nodes stay out).
 * The nodes are ones no record of the topology holds. */
int tp__stopo_join_units(struct tp__stopo_set *s, int which,
			 const struct tp__slurm_node_topo *q, const char *const *unit,
			 int nq, const char *what, struct tp__warnings *warn,
			 tp_error *err);

/* slurmctld's live view of one topology: the text of `scontrol show
 * topology [NAME]`, or of slurm_print_topo_info_msg() after
 * slurm_load_topo() in srun (the same lines): untrusted, read with bounds.
 * topology names the topology it is of (NULL: the partition's, the one
 * chosen; topology.conf's is "default"); what names it in messages. */
struct tp__slurm_live {
	const char *text;
	size_t len;
	const char *topology;
	const char *what;
};
/* Every name of the hostlist hl_text into fn (what names it in
 * messages); the count into *count (may be NULL).  TP_EINVAL (err set)
 * when it is no hostlist; fn's code otherwise (slurm_join.c). */
int tp__stopo_each_name(const char *hl_text, const char *what, tp_error *err,
			int (*fn)(void *arg, const char *name), void *arg,
			int64_t *count);

/* The nodes the live view places that no record of topology which holds
 * (neither its file nor slurm.conf's Topology= placed them) join their
 * unit: the leaf switch (Level=0) or base block (BlockName=) slurmctld
 * has them in.  Only tree and block topologies; a live view that is not
 * such lines is one warning and changes nothing.  file names the
 * topology's file in messages. */
int tp__stopo_live(struct tp__stopo_set *s, int which, const char *file,
		   const struct tp__slurm_live *live, struct tp__warnings *warn,
		   tp_error *err);

/* topology.conf's records (tree or block, t->kind) into t, strings owned
 * by s; block sizes into t->sizes (topology_conf.c).  On an error t keeps
 * no records. */
int tp__topology_conf_records(const char *text, const char *what,
			      struct tp__stopo_set *s, struct tp__stopo *t,
			      struct tp__warnings *warn, tp_error *err);

/* Read topology.yaml's text into its topologies, in file order (an empty
 * file: none).  Unknown keys are warnings, as in Slurm; the kinds' rules
 * are checked when a machine is built. */
int tp__topology_yaml_read(const char *text, size_t len, const char *what,
			   struct tp__stopo_set *out, struct tp__warnings *warn,
			   tp_error *err);
void tp__stopo_set_free(struct tp__stopo_set *s);

#endif
