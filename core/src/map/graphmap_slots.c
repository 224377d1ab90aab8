/* topoplace — graph mapping, the refinements' slot table: which slot of
 * its node each task holds, kept as tasks move (graphmap_refine.c and
 * graphmap_lanes.c). */
#include <stdlib.h>
#include <string.h>

#include "map/graphmap_parts.h"

void tp__slots_free(slot_table *st)
{
	free(st->off);
	free(st->used);
	free(st->slot_task);
	free(st->task_slot);
	memset(st, 0, sizeof *st);
}

int tp__slots_init(slot_table *st, const struct tp_alloc *a,
		      const int32_t *map, int32_t nt)
{
	int32_t nn = a->nnodes;
	int64_t S = a->total_slots;
	st->off = tp__malloc_array((size_t)nn + 1, sizeof(int64_t));
	st->used = tp__calloc((size_t)nn + 1, sizeof(int32_t));
	st->slot_task = tp__malloc_array((size_t)S + 1, sizeof(int32_t));
	st->task_slot = tp__malloc_array((size_t)nt + 1, sizeof(int32_t));
	if (!st->off || !st->used || !st->slot_task || !st->task_slot) {
		tp__slots_free(st);
		return TP_ENOMEM;
	}
	st->off[0] = 0;
	for (int32_t i = 0; i < nn; i++)
		st->off[i + 1] = st->off[i] + a->slots[i];
	for (int64_t x = 0; x < S; x++)
		st->slot_task[x] = -1;
	for (int32_t t = 0; t < nt; t++) {
		int32_t i = map[t];
		int64_t x = st->off[i] + st->used[i]++;
		st->slot_task[x] = t;
		st->task_slot[t] = (int32_t)(x - st->off[i]);
	}
	return 0;
}

/* Task t leaves node p for node q: into a free slot of q (s < 0), or
 * trading slots with task s of q.  The caller updates map. */
void tp__slots_move(slot_table *st, int32_t t, int32_t p, int32_t q,
		       int32_t s)
{
	int64_t sp = st->off[p] + st->task_slot[t];
	if (s < 0) {
		int64_t sq = st->off[q];
		while (st->slot_task[sq] >= 0)
			sq++;
		st->slot_task[sp] = -1;
		st->slot_task[sq] = t;
		st->task_slot[t] = (int32_t)(sq - st->off[q]);
		st->used[p]--;
		st->used[q]++;
	} else {
		int64_t sq = st->off[q] + st->task_slot[s];
		st->slot_task[sp] = s;
		st->slot_task[sq] = t;
		int32_t tmp = st->task_slot[t];
		st->task_slot[t] = st->task_slot[s];
		st->task_slot[s] = tmp;
	}
}
