/* topoplace — a grid's node tiles mapped whole (auto's candidate "tiles"):
 * the tasks of a full grid cut into tiles of one node's k tasks, shaped so
 * that the busiest tile sends the least, the pattern between the tiles
 * mapped onto the nodes a tile each, every task following its tile. */
#ifndef TOPOPLACE_MAP_NODE_TILES_H
#define TOPOPLACE_MAP_NODE_TILES_H

#include <stdbool.h>
#include <stdint.h>

#include <topoplace/place.h>

struct tp__tiles {
	int dims;
	int shape[TP_MAX_DIMS];     /* tasks a tile along each dimension */
	int ext[TP_MAX_DIMS];       /* tiles along each */
	int lo[TP_MAX_DIMS];        /* the grid's first coordinate in each */
	int32_t ntiles;
	double busiest;             /* the busiest tile's bytes off it */
	double blocks_busiest;      /* the same for the blocks of the fewest
				       bytes off them (geometric's first) */
};

/* Is there a tiling of g's tasks (their coordinates a full box of
 * integers) into tiles of k whose busiest tile sends less (by a share,
 * node_tiles.c) than the busiest of the tiling that keeps the most bytes
 * inside?  Then *t says which. */
bool tp__tiles_worth(const tp_graph *g, int32_t k, struct tp__tiles *t);

/* Map g on a, every node holding t's k tasks (tp__tiles_worth's tiling),
 * by policy o (auto; under its time budget) on the pattern between the
 * tiles, a slot a node.  TP_EINVAL when a's nodes do not all hold k. */
int tp__tiles_map(const tp_graph *g, const tp_alloc *a, const tp_place_opts *o,
		  const struct tp__tiles *t, int32_t *map, tp_error *err);

#endif
