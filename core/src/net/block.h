/* topoplace — what net/block.c's block networks offer beyond their table
 * and the queries of machine_internal.h: how the time model weighs their
 * links, for check-config's account (conf/kind_block.c). */
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

#endif
