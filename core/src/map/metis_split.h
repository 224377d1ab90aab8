/* topoplace — one split of a task subset into parts of exact sizes, by
 * METIS and a repair, as hierarchical mapping (a switch's tasks over its
 * children) and block networks (a job's tasks over its blocks, then a
 * block's over its nodes) make it.  Not installed. */
#ifndef TOPOPLACE_METIS_SPLIT_H
#define TOPOPLACE_METIS_SPLIT_H

#include <metis.h>
#include <stdint.h>
#include "map/metis_load.h"

struct tp__metis_split {
	const struct tp__metis *metis;
	int seed;
	double deadline;   /* tp__now_ms() limit for starting METIS; 0: none */
	int metis_rc;      /* out: METIS's code where it failed, else METIS_OK */
};

/* The tasks of sub into parts 0..k-1 of exactly want[p] tasks each (they
 * sum to sub->nT), part[i] for sub->T[i]; sub->local[T[i]] is i, and for
 * a task outside T anything (T[local[t]] tells).  METIS's recursive
 * bisection (seeded; ufactor 1: a thousandth over) on the parts that get
 * tasks, then the tasks of overfull parts moved, best gain first, into
 * parts with room.  Where METIS has nothing to cut, or fails (s->metis_rc),
 * the parts start in order.  0; TP_ENOMEM; TP_ETIME when METIS would run
 * past s->deadline (the parts then in order, unrepaired). */
int tp__metis_split_exact(struct tp__metis_split *s,
			  const struct tp__metis_sub *sub, const int64_t *want,
			  int k, idx_t *part);

#endif
