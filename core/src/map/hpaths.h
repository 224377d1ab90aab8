/* topoplace — every allocation node's path in the network's hierarchy
 * (network.h: hierarchy), collected once for the mappers that sort nodes
 * by it (hiermap.c, parmap.c). */
#ifndef TOPOPLACE_HPATHS_H
#define TOPOPLACE_HPATHS_H

#include <stdint.h>
#include <topoplace/alloc.h>

/* The paths of a's nodes: path[i * depth + d] is node i's group at level d
 * for d < plen[i] (0 beyond it), depth the longest path (at least 1).
 * The machine must have TP_CAP_HIERARCHY.  Returns 0, TP_ENOMEM, or
 * TP_EINVAL when a path is deeper than TP__HIER_MAX_LEVELS; on failure
 * nothing stays allocated. */
struct tp__hpaths {
	int64_t *path;
	int *plen;
	int depth;
};

int tp__hpaths_collect(const tp_alloc *a, struct tp__hpaths *out);
void tp__hpaths_free(struct tp__hpaths *p);

#endif
