/* topoplace — the mapping for block networks (block_map.c). */
#ifndef TOPOPLACE_MAP_BLOCK_MAP_H
#define TOPOPLACE_MAP_BLOCK_MAP_H

#include <topoplace/alloc.h>
#include <topoplace/error.h>
#include <topoplace/pattern.h>

/* Block networks (map/block_map.c): tasks split among the job's blocks by a
 * min-cut partition holding each block's share exactly, then among each
 * block's nodes (policy auto's and graph's candidate "blocks"). */
int tp__block_map(const tp_graph *g, const tp_alloc *a, int seed, int32_t *map,
		  tp_error *err);

#endif
