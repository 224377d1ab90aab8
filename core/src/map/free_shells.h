/* topoplace — the nearest free node on a torus or mesh, found by walking the
 * shells of routers at distance 0, 1, 2, ... around a point (free_shells.c).
 *
 * Greedy growth asks for the nearest free node once a task.  Its k-d tree
 * must enter every box that reaches as near as the best so far; on a 6-D
 * torus that is 180 boxes a query.  Most answers lie a hop or two away, and
 * a shell that near holds a few dozen routers, each one array read.  Only
 * networks whose distance is the hop count on the box (plain hops) qualify.
 */
#ifndef TOPOPLACE_FREE_SHELLS_H
#define TOPOPLACE_FREE_SHELLS_H

#include <stdbool.h>
#include <stdint.h>
#include "net/machine_internal.h"

struct tp_machine;
typedef struct tp__free_shells tp__free_shells;

/* The nodes 0..nn-1 at router coordinates rc[i * ndims ..], slots_free[i]
 * free slots each (the caller's array, read as it changes).  NULL when
 * the network does not qualify, the box has more than 2^26 routers, or
 * memory runs out: the caller then does without. */
tp__free_shells *tp__free_shells_create(const struct tp_machine *m, const int *rc,
					const int *slots_free, int32_t nn);
void tp__free_shells_destroy(tp__free_shells *s);
/* Node i's free slots just dropped (slots_free[i] is already the new
 * count). */
void tp__free_shells_taken(tp__free_shells *s, int32_t i);
/* The free node nearest router coordinates p, ties to the lower index,
 * improving on *best at distance *best_d (-1 and INT64_MAX: none yet).
 * Walks shells until the best is certain, or until it has read max_routers
 * routers: false then, and *best is the best so far (for the caller's
 * exhaustive search to start from). */
bool tp__free_shells_nearest(const tp__free_shells *s, const int *p, int32_t *best,
			     int64_t *best_d, int64_t max_routers);

#endif
