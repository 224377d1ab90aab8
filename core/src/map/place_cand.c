/* topoplace — one candidate of the graph and auto policies: its budget
 * (what is left, whether it fits), building it (construct), scoring it
 * and judging it against the best (finish).  Which candidates run, and in
 * what order, is in place_auto.c. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "map/metis_load.h"
#include "map/graphmap_internal.h"
#include "map/place_cand.h"
#include "map/block_map.h"
#include "map/geom_internal.h"

static const char *const CAND_NAMES[] = { "block", "zorder", "geometric",
					  "greedy", "bipartition", "modcolor", "blocks",
					  "hierarchical", "hier-coords", "tiles" };

/* Wait for block's score, if it is being computed: every comparison and
 * every reserve for a scoring needs it. */
void tp__place_settle(cand_run *r)
{
	if (!r->scoring)
		return;
	pthread_join(r->scorer, NULL);
	r->scoring = false;
	r->best_score = r->rep->cand[r->best_idx].score;
	if (r->async_ms > r->score_ms)
		r->score_ms = r->async_ms;
}

/* Under a budget: is there time for work estimated at cost_ms, with its
 * scoring after it?  Otherwise the candidate's note says why not. */
bool tp__place_fits(cand_run *r, tp_place_candidate *c, double cost_ms)
{
	tp__place_settle(r);
	if (r->o->geom.time_budget_ms <= 0)
		return true;
	double left = r->o->geom.time_budget_ms - (tp__now_ms() - r->t0) -
		      r->reserve_ms;
	if (left > 0 && left >= cost_ms + r->score_ms)
		return true;
	if (left <= 0)
		snprintf(c->note, sizeof c->note, "skipped: time budget reached");
	else
		snprintf(c->note, sizeof c->note, "skipped: needs about %.0f ms, "
			 "%.0f ms of the budget left", cost_ms + r->score_ms, left);
	r->rep->budget_hit = true;
	return false;
}

/* What a step may spend: what is left, less one scoring after it. */
double tp__place_step_budget(const cand_run *r)
{
	if (r->o->geom.time_budget_ms <= 0)
		return 0;   /* no limit */
	double left = remaining_ms(r) - r->score_ms - r->reserve_ms;
	return left > 1e-3 ? left : 1e-3;
}

/* Score r->trial into c, timing it for the next candidates' reserve. */
void tp__place_score_trial(cand_run *r, tp_place_candidate *c)
{
	double t = tp__now_ms();
	c->score = tp_metrics_score(r->g, r->a, r->trial, r->rep->metric, r->ws);
	double ms = tp__now_ms() - t;
	if (ms > r->score_ms)
		r->score_ms = ms;
}

/* Candidate k's construction into out (c's note says why when it does not
 * run: *skipped).  Reads r but changes nothing in it but rep->geom and
 * rep->have_geom (geometric's), so that candidates can run side by side
 * (tp__place_run_side_by_side).  Returns the mapper's code, its message in e. */
int tp__place_construct(cand_run *r, enum cand_kind k, bool force,
		     tp_place_candidate *c, int32_t *out, tp_error *e,
		     bool *skipped)
{
	tp_place_report *rep = r->rep;
	int32_t n = r->g->ntasks;
	int rc = 0;
	*skipped = false;
	switch (k) {
	case C_BLOCK:
		rc = tp_map_block(r->a, n, out, e);
		break;
	case C_ZORDER:
		rc = tp_map_zorder(r->a, n, out, e);
		break;
	case C_GEOMETRIC: {
		if (r->g->coord_dims == 0) {
			snprintf(c->note, sizeof c->note, "skipped: no task coordinates");
			*skipped = true;
			return 0;
		}
		tp_geom_opts go = r->o->geom;
		/* with coordinates the geometric search is the candidate that
		 * counts, and its first variant the one that counts most (the
		 * best at machine scale: bench_scale): a third of what is left,
		 * the rest for the others and the refinement (its first variant
		 * completes even past it) */
		if (go.time_budget_ms > 0)
			go.time_budget_ms = tp__place_step_budget(r) / 3;
		/* its first variant completes past the budget when it is what
		 * the job gets; after another candidate's result (hier-coords
		 * on a hierarchy) it keeps to its budget or gives nothing */
		rc = r->alt ? tp__geom_map_bounded(r->g, r->a, &go, out, &rep->geom, e)
			    : tp_geom_map(r->g, r->a, &go, out, &rep->geom, e);
		if (!rc) {
			rep->have_geom = true;
			snprintf(c->note, sizeof c->note, "%d of %d variants, %d thread%s",
				 rep->geom.variants_scored, rep->geom.variants_total,
				 go.nthreads > 0 ? go.nthreads : tp__cpus(),
				 go.nthreads == 1 ? "" : "s");
		}
		break;
	}
	case C_MODCOLOR:
		rc = tp_graphmap_modcolor(r->g, r->a, &r->o->graph, out, e);
		if (rc == TP_ENOTSUP) {
			const char *m = strncmp(e->msg, "modcolor: ", 10) ? e->msg : e->msg + 10;
			snprintf(c->note, sizeof c->note, "skipped: %.70s", m);
			*skipped = true;
			return 0;
		}
		break;
	case C_TILES: {
		/* the pattern between the tiles, by auto under what is left */
		tp_place_opts po = *r->o;
		po.policy = TP_POLICY_AUTO;
		po.geom.time_budget_ms = tp__place_step_budget(r);
		const struct tp__tiles *t = &r->tiles;
		rc = tp__tiles_map(r->g, r->a, &po, t, out, e);
		if (!rc) {
			char shape[32] = "";
			for (int d = 0; d < t->dims; d++) {
				size_t at = strlen(shape);
				snprintf(shape + at, sizeof shape - at, "%s%d", d ? "x" : "",
					 t->shape[d]);
			}
			snprintf(c->note, sizeof c->note, "%s tiles, the busiest node "
				 "%.2f x the blocks' bytes", shape,
				 t->busiest / t->blocks_busiest);
		}
		break;
	}
	case C_BLOCKS:
		rc = tp__block_map(r->g, r->a, r->o->graph.seed, out, e);
		if (rc == TP_ENOMETIS) {
			snprintf(c->note, sizeof c->note, "skipped: " TP__METIS_MISSING);
			*skipped = true;
			return 0;
		}
		break;
	case C_GREEDY:
	case C_BIPART:
	case C_HIER:
	case C_HIER_COORDS: {
		/* construction only: the winner is refined once, afterwards;
		 * a forced candidate (graph's greedy) must give a result */
		if (k == C_HIER_COORDS && r->g->coord_dims == 0) {
			snprintf(c->note, sizeof c->note, "skipped: no task coordinates");
			*skipped = true;
			return 0;
		}
		tp_graphmap_opts go = r->o->graph;
		go.time_budget_ms = force ? 0 : tp__place_step_budget(r);
		go.refine_passes = 0;
		go.refine_congestion = false;
		rc = k == C_GREEDY ? tp_graphmap_greedy(r->g, r->a, &go, out, e)
		     : k == C_BIPART ? tp__graphmap_bipartition_threads(r->g, r->a, &go,
							 r->o->geom.nthreads, out, e)
		     : k == C_HIER ? tp_graphmap_hierarchical(r->g, r->a, &go, out, e)
		     : tp__graphmap_hier_coords(r->g, r->a, &go, out, e);
		if (rc && force && k == C_HIER)
			/* policy hierarchical promises this mapping: its
			 * error, not another candidate in its place */
			return rc;
		if (rc == TP_ENOMETIS || rc == TP_ENOTSUP) {
			/* no METIS on this node: auto goes on without it (and
			 * without a hierarchy, hierarchical says why) */
			if (rc == TP_ENOMETIS)
				snprintf(c->note, sizeof c->note, "skipped: " TP__METIS_MISSING);
			else
				snprintf(c->note, sizeof c->note, "skipped: %.70s", e->msg);
			*skipped = true;
			return 0;
		}
		break;
	}
	}
	return rc;
}

/* A constructed candidate (its mapping in r->trial): scored (unless score
 * has it), and kept when strictly tp__place_better than the best so far (ties keep
 * the earlier one).  Only out-of-memory is an error. */
/* Did candidate k's construction score its result with the metric?  The
 * geometric search scores exactly with its own (one hop-bytes pass over
 * the graph saved). */
bool tp__place_scored_by_search(const cand_run *r, enum cand_kind k)
{
	return k == C_GEOMETRIC && r->o->geom.metric == r->rep->metric;
}

int tp__place_finish(cand_run *r, enum cand_kind k, int idx, int rc,
		  const tp_error *e, const double *score, tp_error *err)
{
	tp_place_report *rep = r->rep;
	tp_place_candidate *c = &rep->cand[idx];
	tp__place_settle(r);
	if (rc == TP_ENOMEM)
		return tp_error_set(err, rc, "%s", e->msg);
	if (rc) {
		snprintf(c->note, sizeof c->note, "failed: %.70s", e->msg);
		if (rc == TP_ETIME)
			rep->budget_hit = true;
		return 0;
	}
	c->ran = true;
	r->alt |= k != C_BLOCK;
	if (tp__place_scored_by_search(r, k))
		c->score = rep->geom.best_score;
	else if (score)   /* scored beside its construction */
		c->score = *score;
	else
		tp__place_score_trial(r, c);
	if (r->o->rank)
		c->rank = r->o->rank(r->trial, r->o->rank_arg);
	bool wins = rep->best < 0 || tp__place_better(r, c, false);
	if (wins && rep->best >= 0)
		tp__place_keep_runner(r, rep->best, r->best);
	else if (!wins)
		tp__place_keep_loser(r, idx, r->trial);
	if (wins)
		tp__place_keep_best(r, idx);
	return 0;
}

tp_place_candidate *tp__place_new_candidate(tp_place_report *rep, enum cand_kind k)
{
	tp_place_candidate *c = &rep->cand[rep->ncandidates++];
	memset(c, 0, sizeof *c);
	snprintf(c->name, sizeof c->name, "%s", CAND_NAMES[k]);
	return c;
}
