/* topoplace — the allocation: the part of <topoplace/alloc.h> that is not
 * exported.  The core's modules, the unit tests, the benchmarks and the
 * fuzzers (all linked with the static archive) use it; the front ends and
 * outside programs see only the public header. */
#ifndef TOPOPLACE_ALLOC_INTERNAL_H
#define TOPOPLACE_ALLOC_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <topoplace/alloc.h>

/* Build from machine node indices (copied). */
int tp_alloc_from_nodes(const tp_machine *m, const int32_t *nodes,
			int32_t nnodes, int slots_per_node, tp_alloc **out,
			tp_error *err);
/* Spread ntasks over the nodes as Slurm does for -n without -N tasks per
 * node: every node floor(n/N), the first n%N nodes one more. */
int tp_alloc_spread_tasks(tp_alloc *a, int64_t ntasks, tp_error *err);
int tp_alloc_slots(const tp_alloc *a, int32_t i);

struct tp_alloc {
	const tp_machine *m;
	int32_t nnodes;
	int32_t *node;                 /* machine node index, Slurm's order */
	int *slots;                    /* task slots per allocated node */
	int64_t total_slots;
};

/* a's nodes (and their slots) put in order: the k-th becomes order[k].
 * TP_EINVAL, a unchanged, when order is not a permutation. */
int tp__alloc_reorder(tp_alloc *a, const int32_t *order);

#endif
