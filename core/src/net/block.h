/* topoplace — what net/block.c's block networks offer beyond their table
 * and the queries of machine_internal.h: how the time model weighs their
 * links, for check-config's account, and the tree between the blocks for
 * the keys of its cables (conf/kind_block.c). */
#ifndef TOPOPLACE_NET_BLOCK_H
#define TOPOPLACE_NET_BLOCK_H

#include <stdbool.h>

#include "net/machine_internal.h"

/* A node's NVLink-domain link in GB/s as the time model weighs it:
 * BlockBandwidth= (*given true), else one NVLink 5 GPU's (*given false).
 * 0 when m is no block network. */
double tp__blocks_nvlink_bw(const tp_machine *m, bool *given);
/* The tree between the blocks came from a file (TreeTopologyFile=,
 * topology.yaml's tree), not from Slurm's aggregation. */
bool tp__blocks_tree_file(const tp_machine *m);
/* That tree, to be told its cables (LevelUplinks=, UplinkRouting=:
 * tp__tree_set_lanes; the block network's lanes follow it); NULL when m is
 * no block network or its tree is Slurm's aggregation. */
tp_machine *tp__blocks_file_tree(tp_machine *m);

#endif
