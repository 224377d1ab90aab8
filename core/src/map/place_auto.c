/* topoplace — the graph and auto policies' candidates: which run and in
 * what order, their estimated costs against the time budget (block's score
 * on a second thread), and place_candidates, which runs them and the
 * refinement stages.  One candidate's building and scoring is in
 * place_cand.c; see place.c for the policies. */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "map/metis_load.h"
#include "net/network.h"
#include "map/graphmap_internal.h"
#include "map/predict_internal.h"
#include "map/place_cand.h"
#include "input/alloc_internal.h"

/* Greedy growth costs at least this much per task and, for its k-d tree
 * of the nodes, per node (set well below what it measures, 1 to 4.6 us a
 * task and 0.45 a node on tori, so that a run that tp__place_fits is not refused).
 * Its set-up cannot stop half-way: counted at a tenth of this, a 318k-task
 * launch started it and lost 110 ms of its 300 to a greedy that could not
 * tp__place_finish. */
#define GREEDY_US_PER_TASK 0.5
#define GREEDY_US_PER_NODE 0.3

/* Z-order sorts the nodes' keys, at about this cost per node (the low end
 * of what it measures on tori and dragonflies).  Unbounded, it ran
 * whenever geometric finished early and overran the budget; estimated at
 * half this, it still started when it could not tp__place_finish. */
#define ZORDER_US_PER_NODE 0.1

/* hier-coords passes over every task once per level of bisection, about
 * log2(nodes) levels (TP__HIER_COORDS_NS_PER_TASK_LEVEL).  On a stencil's
 * grid it follows boxes, and on a regular allocation only writes the map
 * and walks the hierarchy; estimated then at its lower end, since on an irregular one it
 * stops by itself as soon as a split would not fit. */
#define HIER_COORDS_BOX_NS_PER_TASK 3.0
#define HIER_COORDS_BOX_NS_PER_NODE 30.0

/* A lower estimate of what candidate k costs, in ms: only those whose
 * cost grows with the graph and that cannot stop half-way with a result. */
static double cost_estimate(const cand_run *r, int k)
{
	const tp_graph *g = r->g;
	switch (k) {
	case C_ZORDER:
		return (double)r->a->nnodes * ZORDER_US_PER_NODE / 1e3;
	case C_GREEDY:
		return ((double)g->ntasks * GREEDY_US_PER_TASK +
			(double)r->a->nnodes * GREEDY_US_PER_NODE) / 1e3;
	case C_HIER_COORDS:
		if (tp__hier_coords_boxes(g))
			return ((double)g->ntasks * HIER_COORDS_BOX_NS_PER_TASK +
				(double)r->a->nnodes * HIER_COORDS_BOX_NS_PER_NODE) / 1e6;
		return (double)g->ntasks * log2((double)r->a->nnodes + 1) *
		       TP__HIER_COORDS_NS_PER_TASK_LEVEL / 1e6;
	case C_HIER:
		/* every level below the first splits the same edges again,
		 * in smaller pieces: the whole costs about a quarter more
		 * than the first call on switch trees and dragonflies */
		return 1.25 * (double)g->nedges * 2 * TP__METIS_US_PER_ENTRY / 1e3;
	case C_BIPART:
	case C_BLOCKS:
		/* the first split takes the whole graph */
		return (double)g->nedges * 2 * TP__METIS_US_PER_ENTRY / 1e3;
	default:
		return 0;
	}
}

/* From this many edges auto scores Slurm's block order on a second thread
 * while the next candidate (geometric) prepares, instead of before it: at
 * that size a scoring takes about what the geometric search spends on one
 * thread preparing its point sets. */
#define ASYNC_BLOCK_EDGES ((int64_t)1 << 20)

static void *block_score_run(void *arg)
{
	cand_run *r = arg;
	tp_place_candidate *c = &r->rep->cand[r->best_idx];
	double t = tp__now_ms();
	/* one thread: the other CPU prepares geometric's point sets; the
	 * bits are those of tp_metrics_score's hop-bytes */
	c->score = tp__hop_bytes_threads(r->g, r->a, r->best, HUGE_VAL, 1);
	r->async_ms = tp__now_ms() - t;
	return NULL;
}

/* Is block, the first candidate, worth scoring on a second thread?  Only
 * under the hop-bytes metric (no shared workspace) and without a rank
 * callback (it would read the same mapping meanwhile). */
static bool block_async_worth(const cand_run *r)
{
	return r->rep->best < 0 && r->rep->metric == TP_METRIC_HOP_BYTES &&
	       !r->o->rank && r->g->nedges >= ASYNC_BLOCK_EDGES && tp__cpus() >= 2;
}

/* Block's mapping, already the best (in r->best), scored on a second
 * thread; false when the thread cannot start (then it is scored in its
 * turn). */
static bool block_async(cand_run *r, int idx)
{
	r->best_idx = idx;
	if (pthread_create(&r->scorer, NULL, block_score_run, r))
		return false;
	r->scoring = true;
	r->rep->best = idx;
	return true;
}

/* Run one candidate into r->trial, score it and keep it when strictly tp__place_better
 * than the best so far (ties keep the earlier one).  Only out-of-memory is an
 * error; a candidate that cannot run is recorded as skipped. */
static int run_candidate(cand_run *r, enum cand_kind k, bool force,
			 tp_error *err)
{
	tp_place_report *rep = r->rep;
	tp_place_candidate *c = tp__place_new_candidate(rep, k);
	int idx = rep->ncandidates - 1;
	if (!force && !tp__place_fits(r, c, cost_estimate(r, k)))
		return 0;
	tp_error e;
	tp_error_clear(&e);
	double t = tp__now_ms();
	int32_t n = r->g->ntasks;
	if (k == C_BLOCK && block_async_worth(r)) {
		/* the first candidate, straight into the result */
		int rc = tp_map_block(r->a, n, r->best, &e);
		if (!rc && block_async(r, idx)) {
			c->ms = tp__now_ms() - t;
			c->ran = true;
			return 0;
		}
		if (!rc)   /* no thread: scored in its turn */
			memcpy(r->trial, r->best, map_bytes(r));
		c->ms = tp__now_ms() - t;
		return tp__place_finish(r, k, idx, rc, &e, NULL, err);
	}
	bool skipped;
	int rc = tp__place_construct(r, k, force, c, r->trial, &e, &skipped);
	c->ms = tp__now_ms() - t;
	if (skipped)
		return 0;
	if (rc && force && k == C_HIER)
		return tp_error_set(err, rc, "%s", e.msg);
	return tp__place_finish(r, k, idx, rc, &e, NULL, err);
}

/* z-order knows nothing of the pattern: where the tasks have coordinates
 * and geometric has mapped them, it scores 2-7 times worse on every
 * benchmark.  Under a budget it is then skipped, and its time (20-30 ms
 * on 80k nodes) goes to the refinement; without one it runs. */
static int zorder_after_geometric(cand_run *r, tp_error *err)
{
	if (r->o->geom.time_budget_ms <= 0 || !r->rep->have_geom)
		return run_candidate(r, C_ZORDER, false, err);
	tp_place_candidate *c = tp__place_new_candidate(r->rep, C_ZORDER);
	snprintf(c->note, sizeof c->note, "skipped: geometric has mapped the "
		 "tasks' coordinates");
	return 0;
}

/* Policy hierarchical promises METIS partitions: without METIS it fails
 * (the plugin then keeps Slurm's placement with this one line) rather than
 * give another mapping in their place. */
static int metis_present(tp_error *err)
{
	struct tp__metis m;
	int rc = tp__metis_open(&m, err);
	if (!rc)
		tp__metis_close(&m);
	return rc;
}

/* The auto rule's congestion costs about edges x 2 x the longest route per
 * candidate: only below TP_PLACE_CONGESTION_MAX_WORK (place.h). */
static bool congestion_affordable(const tp_graph *g, const tp_alloc *a)
{
	int64_t longest = a->m->net->max_route_links(a->m);
	return longest <= 0 || g->nedges <= TP_PLACE_CONGESTION_MAX_WORK / 2 / longest;
}

/* Does the network split into groups (hiermap.c)? */
static bool hierarchy(const tp_alloc *a)
{
	return tp_machine_has(a->m, TP_CAP_HIERARCHY);
}

/* Under a time budget, the tilings are weighed (each shape a pass over
 * the edges) only on graphs up to this many edges. */
#define TILES_BUDGET_EDGES ((int64_t)1 << 20)

/* auto's candidate "tiles" (node_tiles.h): every node holds the same k >=
 * 2 tasks, all of them used, and the grid has a tiling whose busiest tile
 * sends less than the blocks'; r->tiles then says which.  Not with a rank
 * callback, which judges tasks the tiles' pattern does not have. */
static bool tiles_apply(cand_run *r)
{
	const tp_alloc *a = r->a;
	const tp_graph *g = r->g;
	if (r->o->policy != TP_POLICY_AUTO || r->o->rank || g->coord_dims == 0 ||
	    a->nnodes < 2 || (r->o->geom.time_budget_ms > 0 && g->nedges > TILES_BUDGET_EDGES))
		return false;
	int k = a->slots[0];
	if (k < 2 || (int64_t)a->nnodes * k != g->ntasks)
		return false;
	for (int32_t i = 1; i < a->nnodes; i++)
		if (a->slots[i] != k)
			return false;
	return tp__tiles_worth(g, k, &r->tiles);
}

/* The job's rules (job_map.c) judge the winner against Slurm's block order
 * (candidate 0) with the same rule: both congestions, where it can decide. */
static void rule_against_block(cand_run *r)
{
	tp_place_report *rep = r->rep;
	tp_place_candidate *w = &rep->cand[rep->best], *b = &rep->cand[0];
	if (rep->best == 0 || !b->ran || !rule_close(w->score, b->score))
		return;
	if (!tp__place_congestion_of(r, w, r->best) ||
	    tp_map_block(r->a, r->g->ntasks, r->trial, NULL))
		return;
	tp__place_congestion_of(r, b, r->trial);
}

/* The share of Slurm's order's exchange (its bound) that the trace's
 * collectives' rounds take, 0 without rounds: decided before any lane
 * start is begun, the same on any number of threads. */
static double rounds_share(cand_run *r)
{
	double in_us, off_us, lower_us;
	if (!r->g->rounds || tp_map_block(r->a, r->g->ntasks, r->trial, NULL) ||
	    tp__predict_rounds(r->g, r->a, r->trial, &in_us, &off_us) ||
	    tp__predict_launch_lower(r->g, r->a, r->trial,
				     r->o->geom.time_budget_ms > 0, &lower_us) ||
	    !(lower_us > 0))
		return 0;
	return in_us / lower_us;
}

int tp__place_candidates(const tp_graph *g, const tp_alloc *a,
			    const tp_place_opts *o, int32_t *map,
			    tp_place_report *rep, bool greedy_last, tp_error *err)
{
	int rc = tp__place_check_fit(a, g->ntasks, err);
	if (rc)
		return rc;
	cand_run r;
	tp__lender lender;
	tp__lender_init(&lender);
	memset(&r, 0, sizeof r);
	r.lender = &lender;
	r.g = g;
	r.a = a;
	r.o = o;
	r.rep = rep;
	r.best = map;
	r.greedy_last = greedy_last;
	r.t0 = tp__now_ms();
	r.trial = tp__malloc_array((size_t)g->ntasks + 1, sizeof(int32_t));
	if (!r.trial)
		return tp_error_set(err, TP_ENOMEM, "policy %s: out of memory",
				    tp_policy_name(o->policy));
	if (rep->metric == TP_METRIC_CONGESTION &&
	    (rc = tp_congestion_ws_create(&r.ws, a->m, err)) < 0) {
		free(r.trial);
		return rc;
	}
	r.rule = o->policy == TP_POLICY_AUTO &&
		 rep->metric == TP_METRIC_HOP_BYTES &&
		 congestion_affordable(g, a);
	/* auto chooses by predicted time where the model is affordable; the
	 * rule above breaks its ties */
	r.by_time = o->policy == TP_POLICY_AUTO &&
		    rep->metric == TP_METRIC_HOP_BYTES &&
		    tp__predict_work(g, a) <= TP__PREDICT_LAUNCH_WORK;
	rep->by_time = r.by_time;
	if (r.by_time && o->graph.refine_passes > 0) {
		r.rounds_share = rounds_share(&r);
		r.lanes_by_hops = r.rounds_share >= LANES_ROUNDS_SHARE;
	}
	if (o->policy == TP_POLICY_AUTO) {
		/* block first and always: the result is never worse than it;
		 * on a hierarchy with task coordinates, its splits by
		 * coordinates (milliseconds, where METIS takes the budget);
		 * then geometric, always too when the tasks have coordinates
		 * (a budget spent before it would leave a poor order); then
		 * while time lasts the cheaper candidates, and the ones made
		 * for the network (hierarchical) before the generic ones */
		bool hier = hierarchy(a), coords = g->coord_dims > 0;
		bool groups = tp_machine_has(a->m, TP_CAP_GROUPS);
		r.has_tiles = tiles_apply(&r);
		int threads = o->geom.nthreads > 0 ? o->geom.nthreads : tp__cpus();
		if (!(rc = run_candidate(&r, C_BLOCK, true, err)) &&
		    !(rc = hier && coords ? run_candidate(&r, C_HIER_COORDS, false, err) : 0) &&
		    o->geom.time_budget_ms <= 0 && threads > 1) {
			/* without a budget nothing decides between them until
			 * all are built: side by side */
			enum cand_kind ks[SIDE_MAX];
			int nk = 0;
			ks[nk++] = C_GEOMETRIC;
			ks[nk++] = C_ZORDER;
			if (hier)
				ks[nk++] = C_HIER;
			ks[nk++] = C_GREEDY;
			ks[nk++] = C_BIPART;
			if (groups)
				ks[nk++] = C_MODCOLOR;
			if (r.has_tiles)
				ks[nk++] = C_TILES;
			rc = tp__place_run_side_by_side(&r, ks, nk, threads, err);
		} else if (!rc) {
			rc = run_candidate(&r, C_GEOMETRIC, true, err);
			/* past a geometric result, half of what is left
			 * refines the winner: where the budget binds, the
			 * refinement gains more than the constructions that
			 * would fill it (a random half of a 6-D torus: 2 to
			 * 5 %, where greedy and bipartition do not tp__place_finish) */
			if (!rc && rep->have_geom && o->geom.time_budget_ms > 0 &&
			    o->graph.refine_passes > 0) {
				/* at least what lets it start (its set-up and
				 * a scoring each side) and move for as long:
				 * one CPU leaves little after geometric, and
				 * z-order took it all */
				double left = remaining_ms(&r);
				double need = 2.0 * (tp__refine_setup_ms(g) + r.score_ms);
				r.reserve_ms = fmax(left / 2, fmin(left, need));
			}
			if (!rc &&
			    !(rc = zorder_after_geometric(&r, err)) &&
			    !(rc = hier ? run_candidate(&r, C_HIER, false, err) : 0) &&
			    !(rc = run_candidate(&r, C_GREEDY, false, err)) &&
			    !(rc = run_candidate(&r, C_BIPART, false, err)) &&
			    !(rc = groups ? run_candidate(&r, C_MODCOLOR, false, err) : 0) &&
			    r.has_tiles)
				rc = run_candidate(&r, C_TILES, false, err);
		}
	} else if (o->policy == TP_POLICY_HIERARCHICAL && !hierarchy(a)) {
		rc = tp_error_set(err, TP_ENOTSUP, "policy hierarchical: a %s network "
				  "has no hierarchy (switch trees, dragonflies and block "
				  "networks have)",
				  tp_machine_kind(a->m));
	} else if (o->policy == TP_POLICY_HIERARCHICAL) {
		if (!(rc = metis_present(err)))
			rc = run_candidate(&r, C_HIER, true, err);
	} else if (!(rc = run_candidate(&r, C_GREEDY, true, err))) {
		/* graph: greedy always runs, so there is a result */
		rc = run_candidate(&r, C_BIPART, false, err);
	}
	/* block networks: the partition that follows the blocks */
	if (!rc && tp_machine_has(a->m, TP_CAP_BLOCKS))
		rc = run_candidate(&r, C_BLOCKS, false, err);
	if (!rc && rep->best >= 0)
		rc = tp__place_refine_stage(&r, err);
	if (!rc && rep->best >= 0)
		rc = tp__place_lanes_stage(&r, err);
	if (!rc && rep->best >= 0)
		rc = tp__place_trades_stage(&r, err);
	if (!rc && rep->best < 0)
		rc = tp_error_set(err, TP_EINVAL, "policy %s: no candidate produced "
				  "a mapping (%s: %s)", tp_policy_name(o->policy),
				  rep->cand[0].name, rep->cand[0].note);
	tp__place_early_end(&r);   /* joined already, unless an error came */
	tp__place_settle(&r);   /* an error may have come first */
	if (!rc && (r.rule || r.by_time))
		rule_against_block(&r);
	tp_congestion_ws_destroy(r.ws);
	tp_congestion_ws_destroy(r.cws);
	free(r.trial);
	free(r.built);
	free(r.spec.map);
	free(r.spec.stepped);
	for (int k = 0; k < r.nmemo; k++)
		free(r.memo[k].map);
	tp__place_spec_lanes_end(&r);
	for (int k = 0; k < r.nrunners; k++)
		free(r.runner[k].map);
	for (int k = 0; k < r.nmaybe; k++)
		free(r.maybe[k].map);
	return rc;
}
