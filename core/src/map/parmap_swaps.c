/* topoplace — a training job's layout refined by whole nodes trading their
 * ranks, each trade kept when the step's predicted time falls
 * (tp__parallel_swaps).
 *
 * The layout's constructions (parmap.c) choose which nodes hold a stage
 * and leave the rest to the network's order: which replica sits on which
 * node.  Under static routing that is what decides the step on a tapered
 * tree: a pipeline send from one scalable unit to another takes the cable
 * of its destination's number (d-mod-k), and two sends of one stage
 * boundary to destinations of the same residue share one.  On
 * simgrid-train.sh's rail development seed 564487 Slurm's order has two
 * sends a cable at every boundary; traded nodes (found by hand) ran the
 * step 0.88x as long in SMPI, where the model predicted 0.91x, and no
 * construction came near.  A trade moves a node's ranks together, so its
 * tensor-parallel groups and each rank's local rank (its GPU, its rail)
 * stay as they were; one that splits more stages over NVLink domains
 * (tp__parallel_splits) is not kept, as the layout's goals come first,
 * nor one that slows the gradients' all-reduce and the backward sends at
 * once (tp__parallel_overlap): on rail seed 92021 trades that made the
 * pipeline's sends 24 % faster alone made that exchange 8 % slower, and
 * SMPI ran the two phases together 4 % slower than Slurm's order. */
#include <stdlib.h>
#include <string.h>

#include "map/parmap.h"
#include "util/util_internal.h"
#include "input/alloc_internal.h"

/* A trade is kept when it lowers the step by more than this share: the
 * model's sums differ in the last bits between equal layouts. */
#define SWAP_GAIN 1e-6

static double phases_sum(const struct tp__par_time *t)
{
	double us = 0;
	for (int k = 0; k < TP__PAR_PHASES; k++)
		us += t->phase_us[k];
	return us;
}

/* Is x's step faster than t's?  By its time, or, as fast, by the step
 * with every replica's pipeline in step (in_step_us), or, as fast both
 * ways, by its phases' sum.  The time waits for the slowest replica's
 * sends alone: a trade that frees one of two replicas slowed on a cable
 * leaves it as it was, and with the time alone the trades stopped there
 * (rail seed 848000 of simgrid-train.sh --draw runs: none kept, another
 * variant placed, 0.96x of Slurm's order simulated; with the waves in
 * step on a tie, nine kept, 0.81x).  And it waits for the longest path
 * through the stages alone (the schedule): a trade that speeds a stage
 * off that path leaves it as it was, and the trades stopped after one
 * (rail seed 848001: 0.94x predicted; with the sum on a tie, six kept,
 * 0.87x). */
static bool faster(const struct tp__par_time *x, const struct tp__par_time *t)
{
	if (x->p.exchange_us < (1 - SWAP_GAIN) * t->p.exchange_us)
		return true;
	if (x->p.exchange_us > t->p.exchange_us)   /* never a cycle */
		return false;
	if (x->in_step_us < (1 - SWAP_GAIN) * t->in_step_us)
		return true;
	return x->in_step_us <= t->in_step_us &&
	       phases_sum(x) < (1 - SWAP_GAIN) * phases_sum(t);
}

/* The ranks of each allocation node, as groups that trade places. */
struct node_ranks {
	int32_t *grp;        /* node -> its group */
	int64_t *off;        /* group g's ranks: rk[off[g] .. off[g + 1]) */
	int32_t *rk;
};

static void node_ranks_free(struct node_ranks *nr)
{
	free(nr->grp);
	free(nr->off);
	free(nr->rk);
}

static int node_ranks_init(struct node_ranks *nr, const tp_alloc *a,
			   const int32_t *map, int64_t ntasks)
{
	int32_t n = a->nnodes;
	nr->grp = tp__malloc_array((size_t)n + 1, sizeof *nr->grp);
	nr->off = tp__calloc((size_t)n + 2, sizeof *nr->off);
	nr->rk = tp__malloc_array((size_t)ntasks + 1, sizeof *nr->rk);
	if (!nr->grp || !nr->off || !nr->rk)
		return TP_ENOMEM;
	for (int64_t r = 0; r < ntasks; r++)
		nr->off[map[r] + 1]++;
	for (int32_t i = 0; i < n; i++) {
		nr->off[i + 1] += nr->off[i];
		nr->grp[i] = i;
	}
	int64_t *at = tp__malloc_array((size_t)n + 1, sizeof *at);
	if (!at)
		return TP_ENOMEM;
	memcpy(at, nr->off, sizeof *at * (size_t)n);
	for (int64_t r = 0; r < ntasks; r++)   /* rank order: local ranks kept */
		nr->rk[at[map[r]]++] = (int32_t)r;
	free(at);
	return TP_OK;
}

static int64_t ranks_on(const struct node_ranks *nr, int32_t node)
{
	int32_t g = nr->grp[node];
	return nr->off[g + 1] - nr->off[g];
}

/* Nodes u and v trade their ranks (map and the groups). */
static void trade(struct node_ranks *nr, int32_t *map, int32_t u, int32_t v)
{
	int32_t gu = nr->grp[u], gv = nr->grp[v];
	for (int64_t k = nr->off[gu]; k < nr->off[gu + 1]; k++)
		map[nr->rk[k]] = v;
	for (int64_t k = nr->off[gv]; k < nr->off[gv + 1]; k++)
		map[nr->rk[k]] = u;
	nr->grp[u] = gv;
	nr->grp[v] = gu;
}

int tp__parallel_swaps(const tp__parallel *p, const tp_alloc *a, int32_t *map,
		       int mode, int64_t max_tries, double deadline_ms,
		       struct tp__par_time *t, int64_t *kept, tp_error *err)
{
	*kept = 0;
	struct node_ranks nr = { 0 };
	int rc = node_ranks_init(&nr, a, map, p->ntasks);
	if (rc) {
		node_ranks_free(&nr);
		return tp_error_set(err, rc, "parallel: out of memory");
	}
	double j0 = 0;
	rc = tp__parallel_overlap(p, a, map, mode, &j0, err);
	int64_t tries = 0;
	bool moved = !rc;
	/* passes over every pair of nodes, a trade kept as soon as it is
	 * faster (first improvement), until a pass keeps none or the tries
	 * or the time run out */
	while (moved && !rc) {
		moved = false;
		for (int32_t u = 0; u < a->nnodes && !rc; u++) {
			for (int32_t v = u + 1; v < a->nnodes && !rc; v++) {
				int64_t cu = ranks_on(&nr, u), cv = ranks_on(&nr, v);
				if ((cu == 0 && cv == 0) || cu > a->slots[v] ||
				    cv > a->slots[u])
					continue;
				if (tries >= max_tries ||
				    (deadline_ms > 0 && tp__now_ms() > deadline_ms))
					goto out;
				tries++;
				trade(&nr, map, u, v);
				struct tp__par_time x;
				double j = 0;
				rc = tp__parallel_predict(p, a, map, mode, &x.p, x.phase_us,
							  &x.in_step_us, err);
				bool keep = !rc && faster(&x, t);
				if (keep && (rc = tp__parallel_splits(p, a, map, &x.tp_split,
								      &x.pp_split)))
					tp_error_set(err, rc, "parallel: out of memory");
				keep = keep && !rc && x.tp_split <= t->tp_split &&
				       x.pp_split <= t->pp_split;
				if (keep)
					rc = tp__parallel_overlap(p, a, map, mode, &j, err);
				if (keep && !rc && j <= (1 + SWAP_GAIN) * j0) {
					*t = x;
					j0 = j;
					++*kept;
					moved = true;
				} else {
					trade(&nr, map, u, v);   /* back */
				}
			}
		}
	}
out:
	node_ranks_free(&nr);
	return rc;
}
