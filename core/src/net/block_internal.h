/* topoplace — the block network shared by its two files: block.c (the
 * network: distances, routes, lanes, cards) and block_build.c (the blocks
 * and the tree between them from Slurm's records).  Nothing else includes
 * it. */
#ifndef TOPOPLACE_NET_BLOCK_INTERNAL_H
#define TOPOPLACE_NET_BLOCK_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "net/network.h"

/* The block network (m->net_data). */
struct tp_blocks {
	int32_t n;              /* nodes */
	int32_t nblocks;
	char **bname;           /* block names, owned */
	int *bline;             /* line of each block */
	int32_t *bfirst;        /* nblocks + 1: first node of each block */
	int32_t *node_block;    /* n */
	int base;               /* base block size (BlockSizes= first value) */
	unsigned levels;        /* bit k: aggregation level k enforced */
	tp_machine *tree;       /* the network between the blocks */
	int32_t *tree_node;     /* n: the node's index in tree */
	bool tree_file;         /* tree from a file (else generated) */
	int cost;               /* network link cost */
	double bbw, nbw;        /* bandwidths; 0: links weigh 1 */
	double *weight;         /* every link's weight of one byte, n node
				   ports then the tree's links (bandwidths
				   given; m->link_weight), else NULL */
	int *anchor;            /* nblocks: how many switches of the tree's
				   hierarchy all of the block's nodes share
				   (-1: deeper than TP__HIER_MAX_LEVELS) */
	bool *own_group;        /* nblocks: the block is a group below its
				   anchor (the anchor holds other blocks) */
	int cards;              /* NetworkCards= (0 or 1: one port a node) */
};

/* Frees k and everything it owns, its tree included (NULL: nothing). */
void tp__blocks_free(struct tp_blocks *k);

#endif
