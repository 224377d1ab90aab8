/* topoplace — the rounds' guard of the lane refinement: a trace's
 * collectives' rounds (an all-reduce's steps, an all-to-all's rounds) are
 * a few bytes each, nothing to the loads the lane refinement lowers, yet
 * each task waits out its rounds' hops one after another (the time model's
 * rounds latency, predict.c).  Where they bound the exchange the
 * refinement moved the rounds' partners apart; the guard refuses a move
 * that would take any task's rounds past the most a task had when the
 * refinement began, so the rounds' latency never rises. */
#ifndef TOPOPLACE_ROUNDS_GUARD_H
#define TOPOPLACE_ROUNDS_GUARD_H

#include <stdbool.h>
#include <stdint.h>

struct tp_graph;
typedef struct rounds_guard rounds_guard;

/* Hops between allocation nodes i and j as the time model counts a
 * route's latency (0 for i == j), or a negative code. */
typedef int (*rounds_hops_fn)(void *arg, int32_t i, int32_t j);

/* A guard over g's rounds under map (task -> allocation node), or NULL in
 * *out when g has none.  TP_OK, TP_ENOMEM or hops' code. */
int tp__rounds_guard_new(const struct tp_graph *g, const int32_t *map,
			 rounds_hops_fn hops, void *arg, rounds_guard **out);
void tp__rounds_guard_free(rounds_guard *rg);

/* Would the n tasks moved[k], each to allocation node to[k] (the others
 * where map has them), keep every task's rounds within the guard?  *rc:
 * hops' code where it failed (then false).  The answer's sums are kept
 * for tp__rounds_guard_commit. */
bool tp__rounds_guard_allows(rounds_guard *rg, const int32_t *map,
			     const int32_t *moved, const int32_t *to, int n,
			     int *rc);
/* The last move allowed was made: its sums become the tasks'. */
void tp__rounds_guard_commit(rounds_guard *rg);

#endif
