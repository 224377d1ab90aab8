/* topoplace — the switch tree shared by its two files: tree.c (the
 * network: distances, routes, links, lanes) and tree_build.c (the tree
 * from Slurm's switch records).  Nothing else includes it. */
#ifndef TOPOPLACE_NET_TREE_INTERNAL_H
#define TOPOPLACE_NET_TREE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include "net/network.h"

/* The tree (m->net_data).  The machine has one dimension whose coordinate
 * is the router (= node) number in depth-first order, no wrap. */
struct tp_tree {
	int32_t nsw;          /* the switches, then one entry per node: the
				 node's link to its switch */
	int32_t nreal;        /* switches: [0, nreal), the virtual top of a
				 forest last among them */
	int32_t forest_top;   /* that virtual top, or -1 */
	int32_t ntrees;       /* trees with nodes (1 unless a forest) */
	char **name;          /* switch names, owned: nname entries (a node's
				 link is named after the node) */
	int32_t nname;
	int32_t *parent;      /* -1 for the top switch */
	int *depth;           /* links from the top */
	int *level;           /* 0 for nodes, 1 for leaf switches, 1 + highest
				 child level */
	int *upcost;          /* hop cost of the link to the parent */
	int32_t *router_sw;   /* router number (= node) -> its entry */
	void *block;          /* the five arrays above once nodes are in, or
				 NULL: each its own */
	int height;           /* levels of switch-to-switch links */
	int mincost;          /* smallest link cost */
	double *upinvbw;      /* per directed link id: 1 / bandwidth of its
				 level (both directions alike), or
				 NULL (LevelBandwidth= not given) */
	double maxbw;         /* largest level bandwidth (0 when NULL) */
	int nlbw;             /* LevelBandwidth= as given (GB/s), for the */
	double lbw[16];       /* time model's lanes */
	/* Lanes, the parallel cables the time model routes on (see "lanes"
	 * below): entry s has nlanes[s] of them above it (a node: 1, a top
	 * switch: 0), lane ids lane0[s] .. lane0[s] + nlanes[s] - 1, each
	 * with an up and a down direction (2 lane, 2 lane + 1). */
	int32_t *nlanes;
	int32_t *cables;      /* cables above s (= nlanes unless adaptive) */
	int64_t *lane0;
	int32_t *lane_sw;     /* lane -> entry */
	int64_t nlane;
	int nuplinks;         /* LevelUplinks= (0: non-blocking) */
	int uplinks[16];
	bool adaptive;        /* UplinkRouting=adaptive: one lane of them all */
	int rails;            /* Rails= (0 or 1: none); see "rails" below */
};

/* Frees t and everything it owns (NULL: nothing). */
void tp__tree_free(struct tp_tree *t);
/* The time model's lanes of t from its uplinks (see "lanes" in tree.c):
 * 0, or TP_ENOMEM. */
int tp__tree_build_lanes(struct tp_tree *t);

#endif
