/* topoplace — topoplace.conf, the admin's description of the network.
 *
 * Slurm's Key=Value style: several pairs per line, keys case-insensitive,
 * '#' starts a comment, a trailing '\' continues the line.  Forms:
 *
 *   Network=torus Dims=24x24x24 Wrap=yes        # or Network=mesh, Wrap=no,
 *                                                # Wrap=yes,yes,no
 *   NodesPerRouter=2                             # nodes sharing a router
 *   LinkBandwidth=75,37.5,75                     # per dimension (or one value)
 *   Distance=bandwidth                           # hop cost = fastest bw / bw
 *                                                # per dimension (default hops)
 *   Network=dragonfly Groups=9 RoutersPerGroup=4 # groups of fully connected
 *     NodesPerRouter=2 LinksPerGroupPair=2       # routers; nodes placed on a
 *     Routing=direct|valiant                     # RoutersPerGroup x Groups grid
 *   NodeName=nid[00000-13823] CoordOrder=x-major # i-th name at i-th position,
 *                                                # x fastest (z-major: last
 *                                                # dimension fastest);
 *                                                # optional Offset=N skips N
 *                                                # positions first
 *   NodeName=nid00012 Coords=0,0,6               # explicit router coordinates
 *   NodeName=gpu[01-64] CoordOrder=x-major \
 *            NodeTopology=nodes/dgx.xml          # hwloc XML of these nodes
 *            GpuLinks=nodes/dgx.links            # NVLink or xGMI counts
 *                                                # (gres.conf Links=, nvidia-smi
 *                                                # topo -m, rocm-smi --showtopo
 *                                                # --shownodesbw)
 *   CoordFile=/etc/slurm/topoplace.coords        # lines "name x y z", site
 *                                                # generated; relative paths are
 *                                                # relative to the config file
 *   Network=tree TopologyFile=topology.conf      # a switch tree from Slurm's
 *     LevelCost=1,2 LevelBandwidth=100,200       # topology.conf (no Dims=);
 *     ForestCost=4                               # a forest's trees joined by
 *                                                # a virtual top switch, each
 *                                                # link to it costing 4
 *                                                # (default: the top level's
 *                                                # LevelCost, else 1)
 *   NodeName=tux[000-127]                        # optional check: each node
 *                                                # under some switch
 *   Network=block TopologyFile=block.conf        # Slurm's topology/block
 *     TreeTopologyFile=tree.conf                 # (BlockName=, BlockSizes=);
 *     BlockBandwidth=3600 NetworkBandwidth=200   # the tree between blocks
 *     NetworkCost=18                             # (optional), GB/s per node
 *   Network=dragonfly ... Routing=adaptive       # a share of the traffic
 *     AdaptiveShare=0.5                          # non-minimal (Valiant)
 *     NodeNameFormat=x{group-1000}c{switch}s{*}b{*}n{*}  # group, switch
 *     SwitchFile=slingshot.switches              # from names, or from
 *                                                # "name group switch" lines
 *   NodeName=gpu[01-64] NodeTopology=dgx.xml     # models for nodes placed
 *                                                # before (by a CoordFile= or
 *                                                # the tree); a later line
 *                                                # wins
 *   DefaultPolicy=geometric                      # policy for jobs with no hint
 *   DefaultMetric=hop-bytes
 *   TimeBudgetMs=300
 *
 * Network/Dims/Wrap/NodesPerRouter/LinkBandwidth must come before NodeName
 * lines.  A node may be placed only once.
 */
#ifndef TOPOPLACE_CONF_H
#define TOPOPLACE_CONF_H

#include <stdint.h>
#include <stdio.h>
#include <topoplace/error.h>
#include <topoplace/export.h>
#include <topoplace/machine.h>
#include <topoplace/metrics.h>
#include <topoplace/place.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct tp_conf tp_conf;

/* Load and validate a config file.  Errors name the file and line:
 * "topoplace.conf:7: Coords=0,0,24: coordinate 2 outside 0..23".  Every file
 * read (the config, TopologyFile=, CoordFile=) must be a regular file, is
 * opened without blocking, and is bounded: 64 MiB for the config and the
 * topology file, 256 MiB for a CoordFile; a NUL byte is an error naming its
 * line.  A hostlist value names at most 4,194,304 nodes, counted before it
 * is expanded. */
TP_EXPORT int tp_conf_load(const char *path, tp_conf **out, tp_error *err);
/* Where Slurm's own topology is, for a config whose network is Slurm's
 * (Network=slurm, or no Network= line): topology.yaml beside slurm.conf
 * when it exists (Slurm 25.05 and later), else topology.conf under
 * slurm.conf's TopologyPlugin=, as slurmctld finds them.  The partition
 * picks its topology of topology.yaml (PartitionName= Topology=), else the
 * cluster default; topology names one directly. */
#define TP_DEFAULT_SLURM_CONF "/etc/slurm/slurm.conf"
/* In the message of tp_conf_load_slurm's TP_ENOENT when Slurm's topology
 * is a skeleton (switches or blocks, no node in any): its nodes join at
 * run time (slurm.conf NodeName=... Topology=, slurmd --conf), and a site
 * may run that way; check-config passes it. */
#define TP_CONF_SKELETON "no node placed yet: nodes join at run time " \
	"(slurm.conf NodeName=... Topology=, slurmd --conf \"Topology=...\")"
typedef struct tp_conf_slurm {
	const char *slurm_conf;     /* NULL: TP_DEFAULT_SLURM_CONF */
	const char *partition;      /* NULL: slurm.conf's Default=YES one */
	const char *topology;       /* NULL: the partition's */
	unsigned slurm_version;     /* TP_SLURM_VERSION (job.h); 0: current */
} tp_conf_slurm;
TP_EXPORT int tp_conf_load_slurm(const char *path, const tp_conf_slurm *slurm,
				 tp_conf **out, tp_error *err);
/* The same with slurmctld's live view of topology live_topology (NULL:
 * the partition's): the text `scontrol show topology NAME` prints, or
 * slurm_print_topo_info_msg() after slurm_load_topo(), live_len bytes,
 * read as untrusted input.  The nodes that neither topology.yaml or
 * topology.conf nor slurm.conf's NodeName=... Topology= place, and that
 * slurmctld has in a leaf switch or a base block (nodes that joined at run
 * time: slurmd -Z --conf "Topology=..."), take that place; anything else
 * of it is ignored.  A text that is not such lines is a warning
 * (tp_conf_warning) and places nothing; live_what names it in messages
 * (NULL: "slurmctld's topology").  live_text NULL: tp_conf_load_slurm. */
TP_EXPORT int tp_conf_load_slurm_live(const char *path, const tp_conf_slurm *slurm,
				      const char *live_text, size_t live_len,
				      const char *live_topology,
				      const char *live_what, tp_conf **out,
				      tp_error *err);
/* Same from a string; what names it in messages. */
TP_EXPORT int tp_conf_load_string(const char *text, const char *what, tp_conf **out,
			tp_error *err);
TP_EXPORT void tp_conf_destroy(tp_conf *c);

TP_EXPORT const tp_machine *tp_conf_machine(const tp_conf *c);

/* NodeTopology= / GpuLinks= of a machine node's NodeName= line (relative
 * paths resolved against the config file's directory), NULL when none.  The
 * files are only read when used (tp_node_load_xml, tp_node_load_links). */
TP_EXPORT const char *tp_conf_node_topology(const tp_conf *c, int32_t node);

/* For a network from Slurm's topology: which file, why that one, each
 * topology and its partitions, the one used, what the config added
 * (lines, for check-config); NULL when the config describes the network
 * itself.  The topologies of topology.yaml by name (0 for topology.conf). */
TP_EXPORT const char *tp_conf_network_source(const tp_conf *c);
TP_EXPORT int tp_conf_slurm_ntopologies(const tp_conf *c);
TP_EXPORT const char *tp_conf_slurm_topology(const tp_conf *c, int i);
/* Which of them the config's machine is (-1: topology.conf, or not
 * Slurm's). */
TP_EXPORT int tp_conf_slurm_topology_used(const tp_conf *c);
/* The names of the topologies of topology.yaml beside s's slurm.conf
 * (none: topology.conf, or no file), without building any: for
 * check-config when the one a config would use has no network. */
TP_EXPORT int tp_conf_slurm_topology_names(const tp_conf_slurm *s, char ***names,
					   int *n, tp_error *err);
TP_EXPORT void tp_conf_slurm_topology_names_free(char **names, int n);

/* What loading accepted with a warning, one line each naming the file and
 * line: Slurm's own warnings on a topology.conf (a forest, a node or
 * switch under two switches).  check-config prints them, and every job
 * made with the config carries them in its notes. */
TP_EXPORT int tp_conf_nwarnings(const tp_conf *c);
TP_EXPORT const char *tp_conf_warning(const tp_conf *c, int i);

/* The node models the config names (distinct NodeTopology=/GpuLinks=
 * pairs), and check-config's test of model i: read as a job would read it
 * (hwloc XML, then the NVLink counts).  Errors name the config line:
 * "topoplace.conf:7: NodeTopology=/etc/slurm/dgx.xml: No such file or
 * directory".  tp_conf_load itself never reads a model. */
TP_EXPORT int tp_conf_nmodels(const tp_conf *c);
TP_EXPORT int tp_conf_check_model(const tp_conf *c, int i, tp_error *err);

/* The nodes of Slurm's slurm.conf against the config's (check-config
 * --slurm-conf): NodeName= lines (NodeName=DEFAULT names none), following
 * "Include FILE" lines (relative to slurm.conf's directory, 8 deep at
 * most), 262,144 names at most; every other line is ignored.  Nodes of slurm.conf the config lacks
 * keep Slurm's placement in every job that has one of them; nodes of the
 * config slurm.conf lacks are harmless (service nodes of the network, a
 * second cluster).  Both as Slurm hostlists, sorted. */
typedef struct tp_conf_slurm_diff {
	int64_t nslurm;      /* distinct nodes of slurm.conf */
	int64_t nmissing;    /* of them, not in the config */
	int64_t nextra;      /* nodes of the config not in slurm.conf */
	char *missing;       /* "node[09-10]", "" when none; malloc'ed */
	char *extra;
} tp_conf_slurm_diff;

TP_EXPORT int tp_conf_compare_slurm(const tp_conf *c, const char *slurm_conf,
				    tp_conf_slurm_diff *out, tp_error *err);
TP_EXPORT void tp_conf_slurm_diff_free(tp_conf_slurm_diff *d);

/* A short human summary for check-config:
 * "torus 24x24x24 (wrap yes,yes,yes), 13824 nodes, 1 per router". */
TP_EXPORT void tp_conf_describe(const tp_conf *c, FILE *out);

#ifdef __cplusplus
}
#endif
#endif
