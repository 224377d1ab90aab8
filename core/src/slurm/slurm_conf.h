/* topoplace — Slurm's own configuration (slurm_conf.c, slurm_order.c):
 * slurm.conf's nodes and the keys that decide Slurm's task layout, and
 * that layout. */
#ifndef TOPOPLACE_SLURM_SLURM_CONF_H
#define TOPOPLACE_SLURM_SLURM_CONF_H

#include <stdbool.h>
#include <stdint.h>
#include <topoplace/alloc.h>
#include <topoplace/error.h>
#include "net/hashtab.h"

/* ---- Slurm's own configuration (slurm_conf.c, slurm_order.c) ---- */
/* The slurm.conf keys that decide Slurm's task layout (NULL: not set),
 * read as Slurm reads them (Include followed, the last line wins). */
struct tp__slurm_part {
	char *name, *topology;       /* Topology= (NULL: the cluster default) */
	bool is_default;             /* Default=YES */
	char *file;                  /* where it is said */
	int line;
};
/* NodeName=HOSTLIST ... Topology=TOPO:UNIT[,TOPO:UNIT...] (Slurm 25.11 and
 * later): where those nodes join each named topology at run time, over
 * what topology.yaml says (slurm_join.c). */
struct tp__slurm_node_topo {
	char *nodes, *topology;      /* the two values as written */
	char *file;                  /* where it is said */
	int line;
};
struct tp__slurm_keys {
	char *topology_plugin, *select_type, *select_params;
	char *topology_param;        /* TopologyParam= (node ranks) */
	/* PartitionName= lines, in order */
	struct tp__slurm_part *part;
	int npart;
	char *default_topology;      /* of PartitionName=DEFAULT */
	/* NodeName= lines with Topology= (or NodeName=DEFAULT's), in order */
	struct tp__slurm_node_topo *node_topo;
	int nnode_topo;
	char *default_node_topology; /* of NodeName=DEFAULT */
};
/* slurm.conf's node names (Include= followed), in the order first listed:
 * TP_OK with *names filled (the caller frees it: tp__name_set_free), or an
 * error in err, also when it names no node. */
int tp__slurm_conf_nodes(const char *slurm_conf, struct tp__name_set *names,
			 tp_error *err);
int tp__slurm_conf_keys(const char *slurm_conf, struct tp__slurm_keys *k,
			tp_error *err);
void tp__slurm_keys_free(struct tp__slurm_keys *k);

/* Slurm's own order of a's nodes, as its step layout takes them: order[k]
 * is the allocation index of the k-th node.  Slurm 26.05 and later with
 * topology/tree or topology/block (unless CR_NO_DIST_TOPO_BLOCK) go leaf
 * switch by leaf switch, or block by block, in topology.conf's order;
 * every other case is the hostlist's order.  *how says which in words
 * (TP_ERROR_MSG_MAX bytes), "" for the hostlist's order with nothing to
 * say (before 26.05, no slurm.conf).  A file that cannot be read is not an error:
 * the hostlist's order, and *how says why. */
void tp__slurm_order(const char *slurm_conf, const char *partition,
		     unsigned version,
		     const tp_alloc *a, int32_t *order, char *how);
/* Slurm's layout of a step (slurm_order.c, where each rule cites Slurm's
 * code): the distribution srun takes, the node index order (the
 * hostlist's, or TopologyParam=BlockAsNodeRank/SwitchAsNodeRank's) and,
 * from 26.05, the partition topology's rank order that block follows. */
enum tp__slurm_dist { TP__DIST_DEFAULT, TP__DIST_BLOCK, TP__DIST_CYCLIC,
		      TP__DIST_PLANE, TP__DIST_ARBITRARY };
struct tp__slurm_layout {
	enum tp__slurm_dist dist;   /* asked (-m); DEFAULT: srun picks */
	int plane;                  /* plane=N */
	char flags[16];             /* after ',': Pack, NoPack ("": none) */
	bool pack;                  /* CR_PACK_NODES */
	bool ranked;                /* rank_order is the topology's */
	unsigned version;
	int32_t *index_order;       /* allocation indexes in node index order */
	int32_t *rank_order;        /* in block's order (26.05 ranks) */
	char index_how[TP_ERROR_MSG_MAX / 2];   /* " sorted by ..." or " (why
						   slurm.conf was not read)" */
	char rank_how[TP_ERROR_MSG_MAX / 2];
};
/* -m's text (NULL or "": srun's default) into its node level; what names
 * it in the one-line error. */
int tp__slurm_dist_parse(const char *text, const char *what,
			 enum tp__slurm_dist *dist, int *plane, char *flags16,
			 tp_error *err);
/* Everything but the task count: fails only on a bad distribution (a
 * slurm.conf that does not read is the hostlist's order, index_how says
 * why). */
struct tp__slurm_live;   /* slurmctld's live view (slurm_topo.h), or NULL */
int tp__slurm_layout_load(const char *slurm_conf, const char *partition,
			  unsigned version, const struct tp__slurm_live *live,
			  const char *distribution,
			  const char *what, const tp_alloc *a,
			  struct tp__slurm_layout *L, tp_error *err);
void tp__slurm_layout_free(struct tp__slurm_layout *L);
/* The distribution srun takes for ntasks on nnodes, the order the nodes go
 * in for it (*order points into L), and the words for the report. */
enum tp__slurm_dist tp__slurm_layout_pick(const struct tp__slurm_layout *L,
					  int64_t ntasks, int32_t nnodes,
					  const int32_t **order, char *how);
/* plane=N's tasks a node (_task_layout_plane, room everywhere). */
void tp__slurm_plane_counts(int32_t nn, int64_t n, int plane, int64_t *count);

#endif
