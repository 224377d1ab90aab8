/* topoplace — Slurm's topology files read into records, whichever file
 * it came from.
 *
 * Slurm describes one network in two syntaxes: topology.conf's lines
 * (SwitchName=, BlockName=, RingName=) and topology.yaml's entries
 * (switches:, blocks:, rings:, toruses:).  Each reader turns its file into
 * the records of net/records.h (topology_conf.c, slurm_yaml.c), and each
 * network kind builds its machine from records alone (net/tree.c, block.c,
 * ring.c, torus3d.c), so both files give the same machine and the same
 * rules.  This header holds the readers: the texts into records (the
 * tree and block records built by the caller: conf/conf_records.c), and
 * topology.yaml's topologies, slurm.conf's and slurmctld's placements of
 * nodes into them.
 */
#ifndef TOPOPLACE_SLURM_TOPO_H
#define TOPOPLACE_SLURM_TOPO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "slurm/slurm_conf.h"
#include "util/util_internal.h"
#include "net/machine_internal.h"
#include "net/records.h"

/* topology.conf's text read into records and nothing built: its
 * SwitchName= lines (for tp__tree_from_records), or its BlockName= lines
 * and block sizes (for tp__blocks_from_records), with what Slurm accepts
 * but logs as warnings into warn.  The records own their strings; free
 * them with tp__conf_records_free, also after an error. */
struct tp__conf_records {
	struct tp__topo_rec *rec;
	int32_t n;
	struct tp__block_sizes sizes;   /* blocks: BlockSizes=/BlockLevels= */
};
int tp__tree_conf_records(const char *text, const char *what,
			  struct tp__warnings *warn, struct tp__conf_records *out,
			  tp_error *err);
int tp__block_conf_records(const char *text, const char *what,
			   struct tp__warnings *warn, struct tp__conf_records *out,
			   tp_error *err);
void tp__conf_records_free(struct tp__conf_records *r);

/* topology.conf's RingName=NAME [Nodes=HOSTLIST] lines read into records
 * as Slurm reads them, nothing built (for tp__rings_from_records).  what
 * names the file in messages; warn may be NULL. */
int tp__ring_conf_records(const char *text, const char *what,
			  struct tp__warnings *warn, struct tp__conf_records *out,
			  tp_error *err);

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
/* The same with at most max_names names, counted before any is expanded
 * (bound_what names the bound in the message). */
int tp__stopo_each_name_within(const char *hl_text, const char *what,
			       int64_t max_names, const char *bound_what,
			       tp_error *err, int (*fn)(void *arg, const char *name),
			       void *arg, int64_t *count);

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
