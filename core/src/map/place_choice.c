/* topoplace — auto's choice between candidates: by the rank option, the
 * metric, the auto rule on congestion, or the predicted exchange time; and
 * the best and the runners-up kept. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "net/network.h"
#include "map/predict_internal.h"
#include "map/place_cand.h"
#include "input/alloc_internal.h"
#include "pattern/pattern_internal.h"

/* A congestion routes every message: about this much a link crossed, half
 * the longest route on average.  The rule only tells apart candidates
 * within 20 % of each other, so under a budget the two congestions of a
 * comparison get at most a quarter of what is left: unbounded, comparing
 * the first candidates took most of a launch and left the later ones no
 * time. */
#define CONGESTION_NS_PER_LINK 10.0

static bool congestion_fits(const cand_run *r)
{
	if (r->o->geom.time_budget_ms <= 0)
		return true;
	int64_t longest = r->a->m->net->max_route_links(r->a->m);
	double est = (double)r->g->nedges * (double)(longest > 0 ? longest : 1) *
		     CONGESTION_NS_PER_LINK / 1e6;
	return 2 * est <= remaining_ms(r) / 4;
}

/* The maximum link congestion of map into c (once), for the auto rule.
 * False when it cannot be had (out of memory, or past the budget). */
bool tp__place_congestion_of(cand_run *r, tp_place_candidate *c,
			  const int32_t *map)
{
	if (c->has_congestion)
		return true;
	if (out_of_time(r) || !congestion_fits(r) ||
	    (!r->cws && tp_congestion_ws_create(&r->cws, r->a->m, NULL)))
		return false;
	double x = tp_metrics_max_congestion(r->g, r->a, map, r->cws, NULL);
	if (x < 0)
		return false;
	c->congestion = x;
	c->has_congestion = true;
	return true;
}

/* Is a filling affordable now: time left, and its cost within what is? */
static bool filling_affordable(const cand_run *r)
{
	return !out_of_time(r) &&
	       tp__predict_affordable(r->g, r->a, r->o->geom.time_budget_ms > 0
					  ? remaining_ms(r) : 0);
}

/* c's map is from's: its predicted time too. */
static void same_time(tp_place_candidate *c, const tp_place_candidate *from)
{
	c->predicted_us = from->predicted_us;
	c->predicted_bound = from->predicted_bound;
	c->predicted_work = from->predicted_work;
	c->has_predicted = true;
}

/* The predicted exchange time of map into c (once).  False when it cannot
 * be had (out of memory, past the budget), and when (past_us > 0) it is
 * past past_us: c then holds the bound that showed it (has_lower). */
bool tp__place_predicted_of(cand_run *r, tp_place_candidate *c, const int32_t *map,
			    double past_us)
{
	if (c->has_predicted)
		return true;
	if (!filling_affordable(r))
		return false;
	/* the best's own map (z-order is often Slurm's order): its time */
	const tp_place_candidate *b = &r->rep->cand[r->best_idx];
	if (r->rep->best >= 0 && b != c && b->has_predicted &&
	    !memcmp(map, r->best, map_bytes(r))) {
		same_time(c, b);
		return true;
	}
	for (int k = 0; k < r->nmemo; k++)
		if (!memcmp(map, r->memo[k].map, map_bytes(r))) {
			tp__place_take_prediction(c, &r->memo[k].p);
			return true;
		}
	tp_prediction p;
	if (tp__place_early_filled(r, map, &p)) {
		tp__place_take_prediction(c, &p);
		return true;
	}
	bool past = false;
	if (tp__predict_launch_past(r->g, r->a, map, r->o->geom.time_budget_ms > 0,
				    past_us, &p, &past))
		return false;
	if (past) {
		c->has_lower = true;
		c->lower_us = p.bound_us;
		return false;
	}
	tp__place_take_prediction(c, &p);
	return true;
}

void tp__place_memo_add(cand_run *r, const int32_t *map, const tp_prediction *p)
{
	if (r->nmemo == MEMO_MAX || !(r->memo[r->nmemo].map = malloc(map_bytes(r))))
		return;
	memcpy(r->memo[r->nmemo].map, map, map_bytes(r));
	r->memo[r->nmemo++].p = *p;
}

void tp__place_take_prediction(tp_place_candidate *c, const tp_prediction *p)
{
	c->predicted_us = p->exchange_us;
	c->predicted_bound = p->bound_only;
	c->predicted_work = tp__prediction_work(p);
	c->has_predicted = true;
}

void tp__place_take_bound(tp_place_candidate *c, double bound_us)
{
	c->predicted_us = bound_us;
	c->predicted_bound = true;
	c->predicted_work = 0;
	c->has_predicted = true;
	c->judged_bound = true;
}

/* An exchange whose filling stops at the work limit (TP__PREDICT_MAX_WORK)
 * is predicted as its bound from where the filling stopped: a bound, and
 * the candidates' fillings stop at different points, so comparing them is
 * comparing bounds at different depths, each 0.5 s of filling (fftMPI's
 * 512-rank trace on a 16^3 torus: 36,000 flows, every filling cut, ten of
 * them in a map).  So the first prediction auto's verdicts take decides:
 * cut (or too large to route), every candidate of the run is judged on
 * its exchange's bound (tp__predict_lower: a routing, milliseconds), the
 * same measure for all; otherwise on fillings, as before.  The first is
 * the same on any number of threads: one with no time to stop past
 * (fillings made ahead are made so too).  Not under a budget, where every
 * filling is cut by design. */
static void decide_bounds(cand_run *r, const tp_place_candidate *c)
{
	if (r->bounds_decided)
		return;
	r->bounds_decided = true;
	r->rep->on_bounds = c->predicted_bound && r->o->geom.time_budget_ms <= 0;
	if (r->rep->on_bounds)
		tp__place_early_no_fills(r);
}

/* c's (map's) bound as its time, once (rep->on_bounds).  False when it
 * cannot be had. */
static bool bound_of(cand_run *r, tp_place_candidate *c, const int32_t *map)
{
	if (c->judged_bound)
		return true;
	double lower;
	if (out_of_time(r) || tp__predict_launch_lower(r->g, r->a, map, false, &lower))
		return false;
	tp__place_take_bound(c, lower);
	return true;
}

/* Times pc against the best's pb: 1 faster, 0 slower, -1 a tie
 * (TP__PREDICT_TIE_SHARE). */
static int times_verdict(double pc, double pb)
{
	if (pc < (1 - TP__PREDICT_TIE_SHARE) * pb)
		return 1;
	if (pc > (1 + TP__PREDICT_TIE_SHARE) * pb)
		return 0;
	return -1;
}

/* time_verdict on the bounds (rep->on_bounds). */
static int bounds_verdict(cand_run *r, tp_place_candidate *c)
{
	tp_place_candidate *b = &r->rep->cand[r->best_idx];
	if (!bound_of(r, c, r->trial) || !bound_of(r, b, r->best))
		return -1;
	return times_verdict(c->predicted_us, b->predicted_us);
}

/* The auto rule (place.h): candidate c against the best so far, both by
 * hop-bytes and, where it can decide, by their maximum congestion. */
static bool rule_better(cand_run *r, tp_place_candidate *c, bool ties_win)
{
	tp_place_candidate *b = &r->rep->cand[r->best_idx];
	double hc = c->score, hb = r->best_score;
	bool by_hops = ties_win ? hc <= hb : hc < hb;
	/* far apart in hop-bytes: congestion cannot overturn them */
	if (!rule_close(hc, hb))
		return by_hops;
	if (!tp__place_congestion_of(r, c, r->trial) || !tp__place_congestion_of(r, b, r->best))
		return by_hops;
	return rule_by_congestion(hc, hb, c->congestion, b->congestion, by_hops);
}

/* A candidate whose exchange's lower bound (tp__predict_lower) is past
 * this share of the other's predicted time is not filled: it loses the
 * verdict, and (LANES_RUNNER_SHARE) is no runner-up worth refining from
 * either, so leaving out its filling changes no choice.  The bound costs
 * a routing, the filling hundreds of rounds: Slurm's order on a sparse
 * 4,096-node torus, 0.8 s of the default's 7 s. */
#define LOWER_PAST_SHARE (LANES_RUNNER_SHARE * (1 + 2 * TP__PREDICT_TIE_SHARE))

/* Is map's (c's) lower bound past share x us?  Then c holds it
 * (has_lower), unless predicted already.  False when it cannot be had. */
static bool lower_past(cand_run *r, tp_place_candidate *c, const int32_t *map,
		       double us, double share)
{
	if (c->has_predicted || out_of_time(r))
		return false;
	double lower;
	if (tp__predict_launch_lower(r->g, r->a, map, r->o->geom.time_budget_ms > 0,
				     &lower) ||
	    !(lower > share * us))
		return false;
	c->has_lower = true;
	c->lower_us = lower;
	return true;
}

/* auto by predicted time: c (in r->trial) against the best.  1: c is
 * tp__place_better, 0: it is not, -1: the times do not decide.  A candidate far
 * above in hop-bytes loses unmodelled; otherwise the lower predicted time
 * wins, unless within TP__PREDICT_TIE_SHARE (then the hop-bytes rule
 * decides), or when either cannot be predicted. */
static int time_verdict(cand_run *r, tp_place_candidate *c)
{
	tp_place_candidate *b = &r->rep->cand[r->best_idx];
	if (c->score > PREDICT_FILTER_HOPS * r->best_score && r->best_score > 0) {
		tp__place_early_leave(r, r->trial);
		return 0;
	}
	if (b->has_predicted)
		decide_bounds(r, b);
	if (r->rep->on_bounds)
		return bounds_verdict(r, c);
	if (b->has_predicted && !b->predicted_bound)
		tp__place_early_best(r, b->predicted_us);
	/* the one not yet predicted, when its bound is past the other's
	 * time, loses unfilled: a time is never below its bound.  A
	 * challenger's past the tie already (a runner-up's filling waits
	 * for the lane stage, tp__place_keep_loser: on a sparse 4,096-node
	 * torus, bipartition's 328 rounds were a fifth of the default's
	 * time, and the best had moved out of its reach by then) */
	if (b->has_predicted && lower_past(r, c, r->trial, b->predicted_us,
					   1 + TP__PREDICT_TIE_SHARE)) {
		tp__place_early_leave(r, r->trial);
		return 0;
	}
	/* out of reach of the best, c need not be filled to the end: it
	 * loses, and is no runner-up (LOWER_PAST_SHARE) */
	if (!tp__place_predicted_of(r, c, r->trial, b->has_predicted &&
				    !b->predicted_bound ? tp__place_reach_us(r) : 0))
		return c->has_lower ? 0 : -1;
	decide_bounds(r, c);
	if (r->rep->on_bounds)
		return bounds_verdict(r, c);
	if (!b->has_predicted && !memcmp(r->trial, r->best, map_bytes(r)))
		same_time(b, c);
	if (lower_past(r, b, r->best, c->predicted_us, LOWER_PAST_SHARE))
		return 1;
	if (!tp__place_predicted_of(r, b, r->best, 0))
		return -1;
	return times_verdict(c->predicted_us, b->predicted_us);
}

/* Candidate c (its mapping in r->trial) against the best so far: by the
 * rank option first when given (relative tolerance 1e-9), then by the
 * metric, or the auto rule; strictly tp__place_better, or also equal when
 * ties_win. */
bool tp__place_better(cand_run *r, tp_place_candidate *c, bool ties_win)
{
	if (r->o->rank) {
		double tol = 1e-9 * fmax(fabs(c->rank), fabs(r->best_rank));
		if (c->rank < r->best_rank - tol)
			return true;
		if (c->rank > r->best_rank + tol)
			return false;
	}
	int v = r->by_time ? time_verdict(r, c) : -1;
	if (v >= 0)
		return v;
	if (r->rule)
		return rule_better(r, c, ties_win);
	return ties_win ? c->score <= r->best_score : c->score < r->best_score;
}

/* c becomes the best (its mapping in r->trial). */
void tp__place_keep_best(cand_run *r, int idx)
{
	tp_place_report *rep = r->rep;
	tp_place_candidate *c = &rep->cand[idx];
	rep->best = idx;
	r->best_idx = idx;
	r->best_score = c->score;
	r->best_rank = c->rank;
	memcpy(r->best, r->trial, map_bytes(r));
}

/* Candidate idx (its mapping in map, predicted) among the runners-up when
 * it is among the LANES_RUNNERS fastest; out of memory, it is left out
 * (the runners-up only add starts). */
void tp__place_keep_runner(cand_run *r, int idx, const int32_t *map)
{
	const tp_place_candidate *c = &r->rep->cand[idx];
	if (!r->by_time || !c->has_predicted)
		return;
	int at = r->nrunners;
	while (at > 0 && c->predicted_us <
			 (1 - TP__PREDICT_ROUNDING_SHARE) *
			 r->rep->cand[r->runner[at - 1].idx].predicted_us)
		at--;
	if (at >= LANES_RUNNERS)
		return;
	int32_t *m;
	if (r->nrunners == LANES_RUNNERS) {
		m = r->runner[LANES_RUNNERS - 1].map;   /* the slowest drops */
		r->nrunners--;
	} else if (!(m = malloc(map_bytes(r)))) {
		return;
	}
	memmove(&r->runner[at + 1], &r->runner[at],
		sizeof r->runner[0] * (size_t)(r->nrunners - at));
	memcpy(m, map, map_bytes(r));
	r->runner[at].map = m;
	r->runner[at].idx = idx;
	r->nrunners++;
}

/* A candidate that lost (its mapping in map) among the runners-up when
 * predicted; when it lost on its bound alone (time_verdict), kept for
 * tp__place_fill_losers while that bound is within LOWER_PAST_SHARE of
 * the best's time. */
void tp__place_keep_loser(cand_run *r, int idx, const int32_t *map)
{
	const tp_place_candidate *c = &r->rep->cand[idx];
	const tp_place_candidate *b = &r->rep->cand[r->best_idx];
	if (c->has_predicted || !c->has_lower) {
		tp__place_keep_runner(r, idx, map);
		return;
	}
	if (!r->by_time || !b->has_predicted || r->nmaybe >= TP_PLACE_MAX_CANDIDATES ||
	    c->lower_us > tp__place_reach_us(r))
		return;
	int32_t *m = malloc(map_bytes(r));
	if (!m)
		return;   /* the runners-up only add starts */
	memcpy(m, map, map_bytes(r));
	r->maybe[r->nmaybe].map = m;
	r->maybe[r->nmaybe++].idx = idx;
}

double tp__place_reach_us(const cand_run *r)
{
	return LOWER_PAST_SHARE * r->rep->cand[r->best_idx].predicted_us;
}

/* Is loser k (in r->maybe) within reach of the best's time? */
static bool loser_in_reach(const cand_run *r, int k)
{
	const tp_place_candidate *b = &r->rep->cand[r->best_idx];
	const tp_place_candidate *c = &r->rep->cand[r->maybe[k].idx];
	return b->has_predicted && !b->predicted_bound &&
	       !(c->lower_us > tp__place_reach_us(r));
}

int tp__place_losers_to_fill(const cand_run *r, int *which)
{
	int n = 0;
	if (!filling_affordable(r))
		return 0;
	for (int k = 0; k < r->nmaybe; k++)
		if (loser_in_reach(r, k))
			which[n++] = k;
	return n;
}

/* The losers kept on their bounds, in their order: filled where their
 * bound is within LOWER_PAST_SHARE of the best's time now, and among the
 * runners-up then.  Those past it could not be worth a start
 * (LANES_RUNNER_SHARE), nor push one that is out of the runners-up: the
 * starts are those that filling every loser would give. */
void tp__place_fill_losers(cand_run *r)
{
	for (int k = 0; k < r->nmaybe; k++) {
		tp_place_candidate *c = &r->rep->cand[r->maybe[k].idx];
		if (loser_in_reach(r, k) &&
		    tp__place_predicted_of(r, c, r->maybe[k].map, tp__place_reach_us(r))) {
			c->has_lower = false;   /* filled: its time stands */
			tp__place_keep_runner(r, r->maybe[k].idx, r->maybe[k].map);
		}
		free(r->maybe[k].map);
	}
	r->nmaybe = 0;
}
