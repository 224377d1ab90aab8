/* topoplace — Slurm's own topology, found as slurmctld finds it
 * (slurm_topology.c): topology.yaml beside slurm.conf, else topology.conf
 * under slurm.conf's TopologyPlugin=, and the topology of a partition. */
#ifndef TOPOPLACE_SLURM_TOPOLOGY_H
#define TOPOPLACE_SLURM_TOPOLOGY_H

#include "slurm/slurm_topo.h"

struct tp__slurm_topology {
	char file[4096];          /* the file read ("": none, flat) */
	char why[TP_ERROR_MSG_MAX];   /* why that file (check-config) */
	bool yaml;
	char *text;               /* topology.conf's text */
	struct tp__stopo_set set; /* topology.yaml's topologies, or
				     topology.conf's one, "default" */
	struct tp__slurm_keys keys;   /* slurm.conf: plugin, partitions */
	int chosen;               /* the partition's topology (-1: none) */
	char chosen_why[TP_ERROR_MSG_MAX];
};

/* Find and read Slurm's topology for the partition (NULL: the default
 * partition of slurm.conf, else the cluster default).  slurm_version
 * (TP__SLURM_VERSION, slurm_release.h; 0: unknown, taken as current):
 * releases before 25.05 do not read topology.yaml.  live (NULL: none): slurmctld's live view,
 * which places the nodes neither file does (tp__stopo_live). */
int tp__slurm_topology_load(const char *slurm_conf, const char *partition,
			    unsigned slurm_version,
			    const struct tp__slurm_live *live,
			    struct tp__slurm_topology *st,
			    struct tp__warnings *warn, tp_error *err);
void tp__slurm_topology_free(struct tp__slurm_topology *st);
/* The same with slurm.conf's keys already read (tp__slurm_conf_keys):
 * *keys is taken over (st->keys; freed with st, also on failure). */
int tp__slurm_topology_find(const char *slurm_conf, struct tp__slurm_keys *keys,
			    const char *partition, unsigned slurm_version,
			    const struct tp__slurm_live *live,
			    struct tp__slurm_topology *st,
			    struct tp__warnings *warn, tp_error *err);

/* What a topology of Slurm's builds: the machine (NULL on failure), the
 * tree topology taken for the network between blocks (NULL: none), and
 * where loading's warnings go. */
struct tp__stopo_built {
	tp_machine *m;
	const char *tree_used;
	struct tp__warnings *warn;
};

/* The topology of that name (-1: none). */
int tp__slurm_topology_index(const struct tp__slurm_topology *st,
			     const char *name);
const char *tp__stopo_kind_name(enum tp__stopo_kind k);


#endif
