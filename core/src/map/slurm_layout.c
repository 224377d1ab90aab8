/* topoplace — Slurm's own layout of a step's tasks as a mapping: task ids
 * to the nodes by the distribution srun takes (block, cyclic, or blocks of
 * plane=N), the nodes in the order slurm/slurm_order.c found for it.
 *
 * slurm_order.c reads what Slurm would do (the distribution, the order of
 * the nodes, from Slurm's files and rules); turning that into a map is a
 * mapping, and sits here beside the baselines it is made of (place.c's
 * block and cyclic), so that the reader does not call up into map/.
 */
#include <stdlib.h>

#include "slurm/slurm_conf.h"
#include "util/util_internal.h"
#include "input/alloc_internal.h"
#include "map/place_internal.h"
#include "map/slurm_layout.h"

int tp__slurm_layout_map(enum tp__slurm_dist d, int plane, const tp_alloc *a,
			 int32_t ntasks, int32_t *map, tp_error *err)
{
	if (d == TP__DIST_CYCLIC)
		return tp_map_cyclic(a, ntasks, map, err);
	if (d != TP__DIST_PLANE)
		return tp_map_block(a, ntasks, map, err);
	if (ntasks < 0 || ntasks > tp_alloc_total_slots(a))
		return tp_map_block(a, ntasks, map, err);   /* its message */
	/* _task_layout_plane's second loop: blocks of plane tasks, node by
	 * node, each node to its count */
	int32_t nn = tp_alloc_nnodes(a);
	int *left = tp__malloc_array((size_t)(nn ? nn : 1), sizeof(int));
	if (!left)
		return tp_error_set(err, TP_ENOMEM, "out of memory");
	for (int32_t i = 0; i < nn; i++)
		left[i] = tp_alloc_slots(a, i);
	int32_t t = 0;
	while (t < ntasks)
		for (int32_t i = 0; i < nn && t < ntasks; i++)
			for (int k = 0; k < plane && left[i] > 0 && t < ntasks; k++) {
				left[i]--;
				map[t++] = i;
			}
	free(left);
	return 0;
}
