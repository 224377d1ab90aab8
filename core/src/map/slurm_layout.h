/* topoplace — Slurm's task layout as a mapping (slurm_layout.c). */
#ifndef TOPOPLACE_MAP_SLURM_LAYOUT_H
#define TOPOPLACE_MAP_SLURM_LAYOUT_H

#include <stdint.h>
#include <topoplace/alloc.h>
#include <topoplace/error.h>
#include "slurm/slurm_conf.h"

/* rank -> allocation index as Slurm assigns task ids, the nodes in a's
 * order holding their slots: block, cyclic, or plane (blocks of plane).
 * A mapping, in map/slurm_layout.c. */
int tp__slurm_layout_map(enum tp__slurm_dist d, int plane, const tp_alloc *a,
			 int32_t ntasks, int32_t *map, tp_error *err);

#endif
