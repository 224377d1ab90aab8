/* topoplace — the winner's refinement stages: hop-bytes refinement
 * (refine_stage), the lane refinement under the time model from the winner
 * and the runners-up (lanes_stage, the lanes side), and time trades
 * (trades_stage), each judged against the best. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "map/graphmap_internal.h"
#include "map/predict_internal.h"
#include "map/time_trades.h"
#include "map/place_cand.h"
#include "net/network.h"
#include "pattern/pattern_internal.h"
#include "input/alloc_internal.h"

/* A stage's candidate c, its mapping in r->trial: scored (and ranked),
 * and kept as the best when it changed its start and is tp__place_better. */
static void judge_stage(cand_run *r, tp_place_candidate *c, bool changed,
			bool ties_win)
{
	tp__place_score_trial(r, c);
	if (r->o->rank)
		c->rank = r->o->rank(r->trial, r->o->rank_arg);
	if (changed && tp__place_better(r, c, ties_win))
		tp__place_keep_best(r, (int)(c - r->rep->cand));
}

/* The construction a candidate's name starts with: "bipartition" of
 * "bipartition+refine". */
static void construction_of(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s", name);
	char *plus = strchr(buf, '+');
	if (plus)
		*plus = '\0';
}

/* Refinement is most of the cost of graph mapping and gains a few per cent,
 * so only the winning construction is refined (refining every one costs
 * far more for the same result), plus Slurm's block order when it is close to the
 * winner: on fat trees and on allocations Slurm already packed well, block
 * refined is often the best there is.  A refined mapping is kept only if it
 * does not score worse (hop-bytes refinement can raise congestion); each is
 * reported as a "NAME+refine" candidate. */
static int refine_from(cand_run *r, const int32_t *start, const char *of,
		       const struct spec_refine *pre, const char *pre_how, int threads,
		       tp_error *err)
{
	tp_place_report *rep = r->rep;
	if (rep->ncandidates >= TP_PLACE_MAX_CANDIDATES)
		return 0;
	tp_place_candidate *c = &rep->cand[rep->ncandidates++];
	memset(c, 0, sizeof *c);
	snprintf(c->name, sizeof c->name, "%.16s+refine", of);
	/* a refinement checks the mapping, builds its node tables and scores
	 * its start before it moves anything: on a large graph as long as a
	 * scoring or more, which overran the budget when only one scoring was
	 * counted.
	 * The tables by the entry, its start's scoring on top (tp__place_fits adds the
	 * scoring after it) */
	double setup = tp__refine_setup_ms(r->g);
	if (!tp__place_fits(r, c, setup + r->score_ms))
		return 0;
	double t = tp__now_ms();
	tp_graphmap_opts go = r->o->graph;
	go.time_budget_ms = tp__place_step_budget(r);
	tp_error e;
	tp_error_clear(&e);
	int64_t moves = 0, cmoves = 0;
	int rc;
	/* pre: start's refinement made ahead (block_ahead), else the
	 * winner's (r->spec) where start is it */
	const struct spec_refine *sp = pre ? pre : &r->spec;
	bool early = pre ? pre->ready : sp->ready && start == r->best && sp->idx == rep->best;
	if (early) {
		/* refined already, from this start (tp__place_run_side_by_side) */
		memcpy(r->trial, sp->map, map_bytes(r));
		moves = sp->moves;
		rc = 0;
		t -= sp->ms;
	} else {
		memmove(r->trial, start, map_bytes(r));
		rc = tp__graphmap_refine_threads(r->g, r->a, &go, r->o->geom.nthreads,
						 NULL, r->trial, &moves, &e);
	}
	/* what the hop-bytes refinement left, not the budget again; the
	 * congestion refinement routes every message before its first move
	 * (its tables and that: long on a large graph, and once started with
	 * little time left), so it starts only when that set-up tp__place_fits */
	double left = tp__place_step_budget(r);
	if (!rc && early && sp->stepped && left <= 0) {
		/* the step made ahead too, as it would be made here */
		memcpy(r->trial, sp->stepped, map_bytes(r));
		cmoves = sp->cmoves;
	} else if (!rc && !out_of_time(r) && (left <= 0 || left >= setup)) {
		rc = tp__place_congestion_step(r, r->trial, left, threads, r->lender,
					       NULL, &cmoves, &e);
	}
	c->ms = tp__now_ms() - t;
	if (rc == TP_ENOMEM)
		return tp_error_set(err, rc, "%s", e.msg);
	if (rc) {
		snprintf(c->note, sizeof c->note, "failed: %.70s", e.msg);
		return 0;
	}
	c->ran = true;
	snprintf(c->note, sizeof c->note, "%lld move%s%s", (long long)(moves + cmoves),
		 moves + cmoves == 1 ? "" : "s",
		 !early ? "" : pre ? pre_how : ", begun before the constructions ended");
	/* a refinement that moved nothing is its start: the start keeps the
	 * credit (ties otherwise go to the refined mapping) */
	judge_stage(r, c, moves + cmoves > 0, true);
	return 0;
}

int tp__place_congestion_step(const cand_run *r, int32_t *map, double budget_ms,
			      int threads, tp__lender *lender, const atomic_bool *stop,
			      int64_t *cmoves, tp_error *e)
{
	/* auto by predicted time refines on the time model's lanes (the lane
	 * stage).  Where the kind routes that model on lanes of its own (a
	 * tree's uplinks taken d-mod-k, a block network's), this step's
	 * busiest cable is not one the model waits on, and on captured
	 * all-to-alls on trees it was a third of the map's CPU (a2a-512: two
	 * steps of 0.3 s, the busiest cable 0.2 % lower); on tori and
	 * dragonflies the cables are the lanes, and it stays */
	if (r->rep->metric != TP_METRIC_CONGESTION &&
	    (!r->rule || (r->by_time && r->a->m->net->lane_route)))
		return 0;
	tp_graphmap_opts go = r->o->graph;
	/* under the congestion metric the maximum goes down whatever it
	 * costs in hop-bytes; under the auto rule only at no cost in
	 * hop-bytes (the hop-bytes refinement has done what it could) */
	go.congestion_keep_hops = r->rep->metric != TP_METRIC_CONGESTION;
	go.time_budget_ms = budget_ms;
	return tp__graphmap_refine_congestion_threads(r->g, r->a, &go, threads, lender,
						      stop, map, cmoves, e);
}

/* The lane refinement from start into r->trial: 0 and its moves, or the
 * refinement's code (its message in c's note, or in err when out of
 * memory). */
static int lanes_from(cand_run *r, tp_place_candidate *c, const int32_t *start,
		      double hop_weight, int64_t *moves, tp_error *err)
{
	memcpy(r->trial, start, map_bytes(r));
	tp_graphmap_opts go = r->o->graph;
	go.time_budget_ms = tp__place_step_budget(r);
	go.congestion_keep_hops = false;
	tp_error e;
	tp_error_clear(&e);
	*moves = 0;
	/* under a budget the stage runs one start at a time: every thread */
	int rc = tp__graphmap_refine_lanes_hops(r->g, r->a, &go, hop_weight,
						r->lanes_by_hops, run_threads(r), NULL,
						r->trial, moves, &e);
	if (rc == TP_ENOMEM)
		tp_error_set(err, rc, "%s", e.msg);
	else if (rc)
		snprintf(c->note, sizeof c->note, "failed: %.70s", e.msg);
	return rc;
}

/* Another start of the lane refinement (tp__place_lanes_stage), when there is time
 * for it: true when it is predicted faster than what r->trial holds (then
 * it is in r->trial).  Either way c holds the prediction of what is in
 * r->trial.  *rc: out of memory only. */
static bool lanes_other_start(cand_run *r, tp_place_candidate *c,
			      const int32_t *start, double hop_weight,
			      double setup, int64_t *moves, int *rc, tp_error *err)
{
	if (out_of_time(r) || (r->o->geom.time_budget_ms > 0 &&
			       remaining_ms(r) < 2 * setup + r->score_ms) ||
	    !tp__place_predicted_of(r, c, r->trial, 0))
		return false;
	double p1 = c->predicted_us;
	bool b1 = c->predicted_bound;
	int32_t *first = malloc(map_bytes(r));
	if (!first) {
		*rc = tp_error_set(err, TP_ENOMEM, "policy auto: out of memory");
		return false;
	}
	memcpy(first, r->trial, map_bytes(r));
	int64_t m2 = 0;
	int e2 = lanes_from(r, c, start, hop_weight, &m2, err);
	if (e2 == TP_ENOMEM)
		*rc = e2;
	c->has_predicted = false;
	/* a bound not below the first's time: not faster, left unfilled */
	double lower;
	bool out = !e2 && !tp__predict_launch_lower(r->g, r->a, r->trial,
						    r->o->geom.time_budget_ms > 0,
						    &lower) && lower >= p1;
	bool faster = !e2 && !out && tp__place_predicted_of(r, c, r->trial, 0) &&
		      c->predicted_us < (1 - TP__PREDICT_ROUNDING_SHARE) * p1;
	if (faster) {
		*moves = m2;
	} else {
		memcpy(r->trial, first, map_bytes(r));
		c->predicted_us = p1;
		c->predicted_bound = b1;
		c->has_predicted = true;
		c->note[0] = '\0';
	}
	free(first);
	return faster;
}

/* One start of the lane refinement run beside the others (lanes_side):
 * refined from its own copy, then predicted. */
struct lane_try {
	const int32_t *start;
	double hop_weight;
	int32_t *map;
	int64_t moves;
	int rc;
	tp_error err;
	bool bounded;        /* lower: its exchange's lower bound */
	double lower;
	bool tried;          /* its prediction was run */
	bool predicted;
	bool past;           /* stopped past the fastest (lanes_predict) */
	bool claimed, done;  /* a speculative start: being refined, and
				refined (under its spec_lanes' mu) */
	int threads;         /* its refinement's (0: one) */
	tp__lender *lender;  /* and those lent to it meanwhile, or NULL */
	tp_prediction p;
};

struct lane_tries {
	const cand_run *r;
	struct lane_try *y;
	int *batch;          /* the starts predicted side by side */
	double past_us;      /* their fillings stop past it (0: none) */
	int *run;            /* the starts refined here (the others begun
				beside the refinement stage) */
	int nrun;
};

/* y's lane refinement from its start into its map, without a budget,
 * and the result's lower bound. */
static void lane_refine(const cand_run *r, struct lane_try *y)
{
	memcpy(y->map, y->start, map_bytes(r));
	tp_graphmap_opts go = r->o->graph;
	go.time_budget_ms = 0;
	go.congestion_keep_hops = false;
	tp_error_clear(&y->err);
	y->rc = tp__graphmap_refine_lanes_hops(r->g, r->a, &go, y->hop_weight,
					       r->lanes_by_hops, y->threads, y->lender,
					       y->map, &y->moves, &y->err);
	y->bounded = !y->rc &&
		     !tp__predict_launch_lower(r->g, r->a, y->map, false, &y->lower);
}

/* Do a and b refine the same map with the same weight (a refinement made
 * ahead for a start asked for)? */
static bool same_start(const cand_run *r, const struct lane_try *a,
		       const struct lane_try *b)
{
	return a->hop_weight == b->hop_weight &&
	       !memcmp(a->start, b->start, map_bytes(r));
}

/* ---- the best's lane refinement made ahead ----
 *
 * From LANES_AHEAD_THREADS, the winning construction's refinement (made
 * ahead, place_side.c) is refined by lanes while it is filled: it is
 * nearly always the best, and the lane stage's first start waited for
 * the judgement, and the judgement for the fillings (on a 16-CPU machine
 * torus-4096's lane refinement began after two fillings of 0.3 s).  The
 * refinement lanes_side would make from the same map: the same result. */
struct lanes_ahead {
	int32_t *start;      /* the map refined from */
	struct lane_try y;
};

static void lanes_ahead_free(struct lanes_ahead *la)
{
	if (!la)
		return;
	free(la->start);
	free(la->y.map);
	free(la);
}

static struct lanes_ahead *lanes_ahead_new(const cand_run *r, const int32_t *start)
{
	struct lanes_ahead *la = calloc(1, sizeof *la);
	if (!la)
		return NULL;
	la->start = malloc(map_bytes(r));
	la->y.map = malloc(map_bytes(r));
	if (!la->start || !la->y.map) {
		lanes_ahead_free(la);
		return NULL;
	}
	memcpy(la->start, start, map_bytes(r));
	la->y.start = la->start;
	la->y.hop_weight = lanes_base_weight(r);
	return la;
}

struct fill_and_lanes {
	const cand_run *r;
	const int32_t *map;
	tp_prediction *p;
	bool filled;
	struct lanes_ahead *la;
};

static void fill_and_lanes_task(void *arg, int32_t i)
{
	struct fill_and_lanes *f = arg;
	if (i == 0)
		f->filled = !tp__predict_launch(f->r->g, f->r->a, f->map, false, f->p);
	else
		lane_refine(f->r, &f->la->y);
}

/* ---- the construction's lane starts, begun beside the refinement ----
 *
 * By predicted time and without a budget, the winning construction X is
 * a start of the lane stage whether X+refine wins (X's own start) or not
 * (the best's), and so is X with long routes weighed wherever the best's
 * time is modelled in full.  Their refinements need nothing the
 * refinement stage decides: begun on a thread of their own while X+refine
 * is refined and filled (300 ms of one CPU on a 4,096-task torus, where
 * the lane stage waited), and taken by lanes_side where its start is the
 * same map with the same weight.  Each is the refinement lanes_side would
 * make, so the result is the same.
 *
 * Where geometric's refinement was made and filled beside it
 * (place_side.c), the starts are begun earlier still, while the
 * constructions are judged: the judgement fills a close loser on one
 * thread (bipartition on torus-4096, 0.47 s) and the other CPU waited.
 * Geometric nearly always wins then, and its refinement when filled
 * faster: that refinement's two starts (the lane stage's first and its
 * hop-weighted one) are begun too, first.  A start is claimed by whoever
 * runs first, this thread or lanes_side's, so no CPU waits on a queue;
 * starts of a construction that did not win are left unclaimed.
 *
 * Where another construction wins, its starts are begun, and then the
 * runners-up's that are predicted within reach already (the lane stage
 * takes them as starts too, and one of them may win it): on default-speed's
 * torus-4096 seed 629438 bipartition won the judgement, and geometric's
 * start, the one the lane stage kept, was refined there alone for 0.39 s
 * while this thread had been idle. */
#define SPEC_MAX (4 + LANES_RUNNERS)

struct spec_lanes {
	pthread_t th;
	bool started;
	const cand_run *r;
	int32_t *built;      /* X, as it was when begun */
	int32_t *refined;    /* X+refine, or NULL */
	int32_t *runner[LANES_RUNNERS];   /* runners-up's maps, or NULL */
	struct lane_try one[SPEC_MAX];
	int n;
	pthread_mutex_t mu;
	int next;            /* the first start not claimed (under mu) */
	bool decided;        /* the lane stage has said which it takes
				(wanted; under mu): the others are left */
	bool wanted[SPEC_MAX];
	tp__lender lender;   /* CPUs the lane stage's pool lends to the
				start refined here (its team) */
};

/* The next start not claimed, refined here; false when none is left. */
static bool spec_lane_claim(struct spec_lanes *sl)
{
	pthread_mutex_lock(&sl->mu);
	while (sl->decided && sl->next < sl->n && !sl->wanted[sl->next])
		sl->next++;
	int i = sl->next < sl->n ? sl->next++ : -1;
	if (i >= 0)
		sl->one[i].claimed = true;
	pthread_mutex_unlock(&sl->mu);
	if (i < 0)
		return false;
	lane_refine(sl->r, &sl->one[i]);
	pthread_mutex_lock(&sl->mu);
	sl->one[i].done = true;
	pthread_mutex_unlock(&sl->mu);
	return true;
}

static void spec_lane_run(void *arg, int32_t i)
{
	(void)i;
	while (spec_lane_claim(arg))
		;
}

/* The speculative starts' claimers: one, or two on three threads or
 * more. */
static int spec_claimers(const cand_run *r)
{
	return run_threads(r) >= 3 ? 2 : 1;
}

/* One claimer, or two side by side on three threads or more: begun now
 * that the winner's refinement and its filling are made ahead
 * (place_side.c), the starts alone held up the lane stage there. */
static void *spec_lanes_run(void *arg)
{
	struct spec_lanes *sl = arg;
	int claimers = spec_claimers(sl->r);
	tp__parallel_for(2, claimers, spec_lane_run, sl);
	/* their CPUs to the refinement stage's congestion steps (torus
	 * fftMPI trace: block's ran alone for a second after these) */
	tp__lender_give(sl->r->lender, claimers);
	return NULL;
}

/* Until every claimed start has ended (then sl->started is false). */
static void spec_lanes_join(struct spec_lanes *sl)
{
	if (!sl || !sl->started)
		return;
	pthread_join(sl->th, NULL);
	sl->started = false;
}

static void spec_lanes_free(struct spec_lanes *sl)
{
	if (!sl)
		return;
	spec_lanes_join(sl);
	pthread_mutex_destroy(&sl->mu);
	free(sl->built);
	free(sl->refined);
	for (int k = 0; k < LANES_RUNNERS; k++)
		free(sl->runner[k]);
	for (int k = 0; k < sl->n; k++)
		free(sl->one[k].map);
	free(sl);
}

static bool spec_lanes_may(const cand_run *r)
{
	return r->by_time && r->o->geom.time_budget_ms <= 0 && run_threads(r) >= 2 &&
	       r->o->graph.refine_passes > 0 && tp__predict_affordable(r->g, r->a, 0);
}

static bool runner_worth(const tp_place_candidate *c, const tp_place_candidate *best);

/* Was the start from map (unweighted) claimed in sl, a stale one?  It is
 * taken from there when refined (spec_lane_of), not begun again. */
static bool spec_claimed(const cand_run *r, struct spec_lanes *sl, const int32_t *map)
{
	bool claimed = false;
	if (!sl)
		return false;
	pthread_mutex_lock(&sl->mu);
	for (int k = 0; k < sl->n && !claimed; k++)
		claimed = sl->one[k].claimed && sl->one[k].hop_weight == 0 &&
			  !memcmp(sl->one[k].start, map, map_bytes(r));
	pthread_mutex_unlock(&sl->mu);
	return claimed;
}

/* The starts of built (and of refined, when not NULL: first; with
 * runners, then the runners-up's within reach), begun on a thread of
 * their own; NULL when not begun. */
static struct spec_lanes *spec_lanes_new(const cand_run *r, const int32_t *built,
					 const int32_t *refined, bool runners)
{
	struct spec_lanes *sl = calloc(1, sizeof *sl);
	if (!sl)
		return NULL;
	pthread_mutex_init(&sl->mu, NULL);
	tp__lender_init(&sl->lender);
	sl->r = r;
	sl->built = malloc(map_bytes(r));
	bool ok = sl->built != NULL;
	if (ok && refined && (ok = (sl->refined = malloc(map_bytes(r))) != NULL))
		memcpy(sl->refined, refined, map_bytes(r));
	if (ok)
		memcpy(sl->built, built, map_bytes(r));
	/* by what lanes_side is likeliest to ask for: the refinement's start
	 * (its first), the construction's, then the two hop-weighted (the
	 * first two already, where the rounds bound the exchange) */
	const int32_t *from[SPEC_MAX] = { sl->refined, sl->built, sl->refined, sl->built };
	/* then the runners-up within reach of the best (as lanes_stage
	 * takes them, where it takes any) */
	const tp_place_candidate *b = &r->rep->cand[r->rep->best];
	for (int k = 0; ok && runners && !r->lanes_by_hops && k < r->nrunners &&
			strncmp(b->name, "tiles", 5) &&
			runner_worth(&r->rep->cand[r->runner[k].idx], b);
	     k++) {
		if (spec_claimed(r, r->slanes_stale, r->runner[k].map))
			continue;
		if ((ok = (sl->runner[k] = malloc(map_bytes(r))) != NULL)) {
			memcpy(sl->runner[k], r->runner[k].map, map_bytes(r));
			from[4 + k] = sl->runner[k];
		}
	}
	for (int k = 0; ok && k < SPEC_MAX; k++) {
		/* the weighted starts are the lane stage's only where the
		 * best's time is filled in full (not on bounds) */
		if (!from[k] ||
		    (k >= 2 && k < 4 && (r->lanes_by_hops || r->rep->on_bounds)))
			continue;
		sl->one[sl->n] = (struct lane_try){ .start = from[k],
						    .hop_weight = k >= 2 && k < 4 ? LANES_HOP_WEIGHT
									  : lanes_base_weight(r),
						    .map = malloc(map_bytes(r)),
						    .lender = &sl->lender };
		ok = sl->one[sl->n++].map != NULL;
	}
	if (ok)
		sl->started = !pthread_create(&sl->th, NULL, spec_lanes_run, sl);
	if (!sl->started) {
		spec_lanes_free(sl);
		return NULL;   /* lanes_side refines them */
	}
	return sl;
}

void tp__place_spec_lanes_early(cand_run *r, const int32_t *built,
				const int32_t *refined)
{
	if (!r->slanes && spec_lanes_may(r))
		r->slanes = spec_lanes_new(r, built,
					   run_threads(r) >= LANES_AHEAD_THREADS ? NULL : refined,
					   false);
}

/* The starts of the winning construction (r->built), unless begun
 * already; ones begun for another are left unclaimed (kept until the end:
 * a start being refined is not waited for). */
static void spec_lanes_begin(cand_run *r)
{
	struct spec_lanes *sl = r->slanes;
	if (sl && !memcmp(sl->built, r->built, map_bytes(r)))
		return;
	if (sl) {
		pthread_mutex_lock(&sl->mu);
		sl->next = sl->n;
		pthread_mutex_unlock(&sl->mu);
		r->slanes_stale = sl;
		r->slanes = NULL;
	}
	if (spec_lanes_may(r))
		r->slanes = spec_lanes_new(r, r->built, NULL, true);
}

void tp__place_spec_lanes_end(cand_run *r)
{
	lanes_ahead_free(r->lahead);
	r->lahead = NULL;
	spec_lanes_free(r->slanes);
	spec_lanes_free(r->slanes_stale);
	r->slanes = r->slanes_stale = NULL;
}

/* Has the speculative start x of sl been refined? */
static bool spec_done(struct spec_lanes *sl, const struct lane_try *x)
{
	pthread_mutex_lock(&sl->mu);
	bool done = x->done;
	pthread_mutex_unlock(&sl->mu);
	return done;
}

/* The speculative start the same as y's (the same map and weight), or
 * NULL: one begun for the winning construction, or one begun for another
 * that was refined already (on torus-4096 of default-speed's seed 629438
 * bipartition beat geometric once filled, and geometric's start, made
 * ahead and then a runner-up's, was refined again: 0.28 s). */
static const struct lane_try *spec_lane_of(const cand_run *r, const struct lane_try *y)
{
	struct spec_lanes *sl = r->slanes, *st = r->slanes_stale;
	for (int k = 0; sl && k < sl->n; k++)
		if (same_start(r, &sl->one[k], y))
			return &sl->one[k];
	for (int k = 0; st && k < st->n; k++)
		if (same_start(r, &st->one[k], y) && spec_done(st, &st->one[k]))
			return &st->one[k];
	return NULL;
}

/* Is y's start being refined among sl's speculative starts (claimed
 * there, not done)? */
static bool spec_refining(const cand_run *r, struct spec_lanes *sl,
			  const struct lane_try *y)
{
	bool running = false;
	if (!sl)
		return false;
	pthread_mutex_lock(&sl->mu);
	for (int k = 0; k < sl->n && !running; k++)
		running = sl->one[k].claimed && !sl->one[k].done &&
			  same_start(r, &sl->one[k], y);
	pthread_mutex_unlock(&sl->mu);
	return running;
}

/* Is y's start being refined among the stale speculative starts?  Then
 * it is taken from there once done (spec_lane_of), not begun again: on
 * default-speed's torus-4096 seed 629438 geometric's start, claimed there
 * as the judgement chose bipartition, was refined a second time by the
 * lane stage in 3 runs of 4, 0.33 s of a CPU each. */
static bool spec_stale_running(const cand_run *r, const struct lane_try *y)
{
	return spec_refining(r, r->slanes_stale, y);
}

/* The refinement of y's start made ahead (beside the losers' fillings,
 * beside the best's own filling, or the speculative starts), or NULL. */
static const struct lane_try *made_ahead(const cand_run *r, const struct lane_try *ahead,
					 const struct lane_try *y)
{
	if (ahead && same_start(r, ahead, y))
		return ahead;
	if (r->lahead && same_start(r, &r->lahead->y, y))
		return &r->lahead->y;
	return spec_lane_of(r, y);
}

/* ---- the losers' fillings, beside the best's lane refinement ----
 *
 * Without a budget, on two threads or more, the losers kept on their
 * bounds and still within reach are filled beside the best's own lane
 * refinement, the lane stage's first start whatever they give: the
 * stage waited for their fillings, one after the other, and most lose
 * again (on a sparse 4,096-node torus, bipartition's: 41,665 lanes, 319
 * rounds, 0.49 s, for no start).  The fillings are those
 * tp__place_fill_losers makes (r->memo), the refinement the one
 * lanes_side makes: the same result. */
struct losers_beside {
	const cand_run *r;
	struct lane_try *y;  /* the best's refinement */
	const int *which;    /* the losers, places in r->maybe */
	double reach_us;     /* tp__place_reach_us */
	tp_prediction p[TP_PLACE_MAX_CANDIDATES];
	bool ok[TP_PLACE_MAX_CANDIDATES], past[TP_PLACE_MAX_CANDIDATES];
};

static void loser_task(void *arg, int32_t i)
{
	struct losers_beside *lb = arg;
	if (i == 0) {
		if (lb->y->map)
			lane_refine(lb->r, lb->y);
		else if (lb->r->slanes)   /* made ahead: help with it */
			spec_lane_claim(lb->r->slanes);
		return;
	}
	int k = lb->which[i - 1];
	lb->ok[i - 1] = !tp__predict_launch_past(lb->r->g, lb->r->a,
						  lb->r->maybe[k].map, false, lb->reach_us,
						  &lb->p[i - 1], &lb->past[i - 1]);
}

/* The losers' fillings and the best's refinement (into y, its map
 * allocated here) side by side; false when there was nothing to fill
 * (y then unused). */
static bool losers_beside(cand_run *r, struct lane_try *y)
{
	int which[TP_PLACE_MAX_CANDIDATES];
	int threads = run_threads(r);
	int n = threads >= 2 ? tp__place_losers_to_fill(r, which) : 0;
	if (n == 0)
		return false;
	y->start = r->best;
	y->hop_weight = lanes_base_weight(r);
	/* the best's refinement made already, or being made: the fillings
	 * alone */
	bool own = !made_ahead(r, NULL, y) && !spec_stale_running(r, y);
	if (own && !(y->map = malloc(map_bytes(r))))
		return false;
	struct losers_beside lb = { .r = r, .y = y, .which = which,
				    .reach_us = tp__place_reach_us(r) };
	tp__parallel_for(n + 1, threads < n + 1 ? threads : n + 1, loser_task, &lb);
	for (int k = 0; k < n; k++) {
		tp_place_candidate *c = &r->rep->cand[r->maybe[which[k]].idx];
		bool filled = false;
		/* out of reach, its bound as tp__place_predicted_of has it:
		 * tp__place_fill_losers leaves it; else the filling is kept
		 * for it (made again when the memo is full) */
		if (lb.ok[k] && lb.past[k]) {
			c->lower_us = lb.p[k].bound_us;
			filled = true;
		} else if (lb.ok[k]) {
			int was = r->nmemo;
			tp__place_memo_add(r, r->maybe[which[k]].map, &lb.p[k]);
			filled = r->nmemo > was;
		}
		if (filled) {
			size_t at = strlen(c->note);
			snprintf(c->note + at, sizeof c->note - at, "%sfilled beside the "
				 "lane refinement", at ? ", " : "");
		}
	}
	return y->map != NULL;
}

/* A start's filling stops once its bound is past this share of the
 * fastest start's time: a filling ends below the bound it passed only by
 * what its batched completions free early (0.16 % on a sparse torus),
 * so it could not have been the fastest. */
#define LANE_PAST_SHARE (1 + 2 * TP__PREDICT_TIE_SHARE)

static void lane_predict_run(void *arg, int32_t i)
{
	struct lane_tries *ls = arg;
	struct lane_try *y = &ls->y[ls->batch[i]];
	y->tried = true;
	y->predicted = !tp__predict_launch_past(ls->r->g, ls->r->a, y->map, false,
						ls->past_us, &y->p, &y->past) &&
		       !y->past;
}

/* The refined starts predicted, `threads` at a time, by their lower
 * bounds (then index), each only while its bound is not past the fastest
 * predicted so far: past it, it cannot be the fastest, and its filling
 * (hundreds of rounds) is left out, the first start's too (on a sparse
 * torus the best's lanes were bounded at 10.49 us where the
 * construction's ended at 9.54: a fifth of the whole mapping's time).
 * Those filled stop once past it (LANE_PAST_SHARE).  A first start
 * without a bound goes first.  Which start is fastest is the same as
 * with every start predicted, on any number of threads. */
static int lanes_predict(struct lane_tries *ls, int n, int threads)
{
	struct lane_try *y = ls->y;
	if (ls->r->rep->on_bounds)
		return TP_OK;    /* judged on their bounds (lanes_side) */
	if (y[0].rc || (y[0].tried && !y[0].predicted && !y[0].past))
		return TP_OK;    /* lanes_side cannot judge the others */
	int *order = malloc(sizeof *order * (size_t)n);
	int *batch = malloc(sizeof *batch * (size_t)n);
	if (!order || !batch) {
		free(order);
		free(batch);
		return TP_ENOMEM;
	}
	int no = 0;
	for (int k = 0; k < n; k++) {
		/* a start refined to an earlier one's map ties it, and an
		 * earlier start wins its ties (on a sparse torus the
		 * construction weighed ends where the best did) */
		bool repeat = false;
		for (int j = 0; j < k && !repeat; j++)
			repeat = !y[j].rc && !memcmp(y[j].map, y[k].map, map_bytes(ls->r));
		if (!y[k].rc && y[k].bounded && !repeat && !y[k].tried)
			order[no++] = k;
	}
	/* by bound, then index (insertion: a handful of starts) */
	for (int i = 1; i < no; i++) {
		int x = order[i], j = i;
		while (j > 0 && (y[order[j - 1]].lower > y[x].lower ||
				 (y[order[j - 1]].lower == y[x].lower && order[j - 1] > x)))
			order[j] = order[j - 1], j--;
		order[j] = x;
	}
	ls->batch = batch;
	/* those lanes_pool filled already */
	double fastest = HUGE_VAL;
	for (int k = 0; k < n; k++)
		if (y[k].predicted && y[k].p.exchange_us < fastest)
			fastest = y[k].p.exchange_us;
	int next = 0;
	bool first = !y[0].bounded && !y[0].tried;
	while (first || next < no) {
		int nb = 0;
		if (first)
			batch[nb++] = 0;
		while (nb < threads && next < no && !(y[order[next]].lower > fastest))
			batch[nb++] = order[next++];
		if (nb == 0)
			break;   /* the rest are past the fastest */
		ls->past_us = fastest < HUGE_VAL ? LANE_PAST_SHARE * fastest : 0;
		tp__parallel_for(nb, nb, lane_predict_run, ls);
		for (int i = 0; i < nb; i++)
			if (y[batch[i]].predicted && y[batch[i]].p.exchange_us < fastest)
				fastest = y[batch[i]].p.exchange_us;
		if (first && !y[0].predicted)
			break;   /* lanes_side cannot judge the others */
		first = false;
	}
	free(order);
	free(batch);
	return TP_OK;
}

/* y as refined ahead (o). */
static void lane_take(const cand_run *r, struct lane_try *y, const struct lane_try *o)
{
	memcpy(y->map, o->map, map_bytes(r));
	y->moves = o->moves;
	y->rc = o->rc;
	y->err = o->err;
	y->bounded = o->bounded;
	y->lower = o->lower;
	y->done = true;
}

/* ---- the lane stage's refinements and fillings on one pool ----
 *
 * The starts still to refine (ls->run, and the speculative ones no
 * thread has claimed) and the fillings of those refined, on the same
 * threads: a thread with no refinement left fills the refined start of
 * the lowest bound while the others are refined, where it waited for
 * them (torus-4096 on default-speed's seeds 934601 and 934606: one CPU
 * idle for 0.3 s while bipartition's start was refined, then the best's
 * start filled, 0.14-0.23 s).  Each filling stops past the fastest so far
 * (LANE_PAST_SHARE), and a start whose bound is past it is left: the
 * fastest, and so the start kept (lanes_side), are those lanes_predict
 * alone finds, whichever fillings ran first.  lanes_predict then fills
 * the rest (those made ahead on the speculative thread after the pool
 * ended). */
struct lane_pool {
	struct lane_tries *ls;
	const struct lane_try *ahead;
	int n;
	int next_run;        /* the next of ls->run to refine */
	bool spec_left;      /* speculative starts may be unclaimed */
	int busy;            /* refinements and fillings under way */
	int spec_here;       /* of them, speculative starts (spec_running
				counts them too) */
	int threads;
	tp__lender lender;   /* the CPUs of pool threads with nothing to do,
				lent to the last refinement's team */
	int lent;            /* how many (counted as in use) */
	bool lending;        /* that refinement runs */
	tp__lender *spec_lender;   /* a speculative start's (spec_lanes) that
				      CPUs with nothing to do are lent to, */
	int spec_lent;       /* and how many (counted as in use) */
	bool *taken;         /* per start: its filling begun, or left */
	bool *here;          /* per start: refined by the pool (ls->run) */
	double fastest;
	bool stop;           /* the first start failed: nothing is judged */
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

/* Starts of sl being refined now (claimed, not done). */
static int spec_running(struct spec_lanes *sl)
{
	if (!sl)
		return 0;
	pthread_mutex_lock(&sl->mu);
	int n = 0;
	for (int k = 0; k < sl->next && k < sl->n; k++)
		n += sl->one[k].claimed && !sl->one[k].done;
	pthread_mutex_unlock(&sl->mu);
	return n;
}

/* Are starts of sl still to be claimed (those the lane stage wants, once
 * it has said)? */
static bool spec_unclaimed(struct spec_lanes *sl)
{
	if (!sl)
		return false;
	pthread_mutex_lock(&sl->mu);
	bool any = false;
	for (int k = sl->next; k < sl->n && !any; k++)
		any = !sl->decided || sl->wanted[k];
	pthread_mutex_unlock(&sl->mu);
	return any;
}

/* The starts refined ahead and ready taken into ls->y (under lp->mu). */
static void pool_take_ahead(struct lane_pool *lp)
{
	const cand_run *r = lp->ls->r;
	struct spec_lanes *sl = r->slanes;
	for (int k = 0; k < lp->n; k++) {
		struct lane_try *y = &lp->ls->y[k];
		if (y->done || lp->here[k])
			continue;
		const struct lane_try *o = made_ahead(r, lp->ahead, y);
		if (o && (!sl || o < sl->one || o >= sl->one + sl->n || spec_done(sl, o)))
			lane_take(r, y, o);
	}
}

/* The refined start to fill next, -1 for none (under lp->mu): the first
 * without a bound first, then by bound and index, as lanes_predict; one
 * whose bound is past the fastest is left, as a repeat of an earlier
 * start's map is. */
static int pool_next_fill(struct lane_pool *lp)
{
	struct lane_try *y = lp->ls->y;
	if (lp->ls->r->rep->on_bounds)
		return -1;   /* judged on their bounds (lanes_side) */
	if (lp->stop || (y[0].done && y[0].rc)) {
		lp->stop = true;
		return -1;
	}
	if (y[0].done && !y[0].bounded && !lp->taken[0])
		return 0;
	int best = -1;
	for (int k = 0; k < lp->n; k++) {
		if (!y[k].done || lp->taken[k] || y[k].rc || !y[k].bounded)
			continue;
		bool repeat = false;
		for (int j = 0; j < k && !repeat; j++)
			repeat = y[j].done && !y[j].rc &&
				 !memcmp(y[j].map, y[k].map, map_bytes(lp->ls->r));
		if (repeat || y[k].lower > lp->fastest) {
			lp->taken[k] = !repeat;   /* a repeat: lanes_predict leaves it too */
			continue;
		}
		if (best < 0 || y[k].lower < y[best].lower)
			best = k;
	}
	return best;
}

/* The speculative starts refining one of the pool's starts that it
 * neither refines nor has taken (under lp->mu), or NULL: the pool waits
 * to fill it, and lends that refinement's team the CPUs it has nothing
 * for.  On a captured all-to-all (default-speed's a2a-512) the one lane
 * start was refined on the speculative thread, 1.3 s on one CPU, while
 * the pool's threads waited in the join. */
static struct spec_lanes *pool_waits_on(const struct lane_pool *lp)
{
	const cand_run *r = lp->ls->r;
	for (int k = 0; k < lp->n; k++) {
		const struct lane_try *y = &lp->ls->y[k];
		if (y->done || lp->here[k])
			continue;
		if (spec_refining(r, r->slanes, y))
			return r->slanes;
		if (spec_refining(r, r->slanes_stale, y))
			return r->slanes_stale;
	}
	return NULL;
}

static void pool_fill(struct lane_pool *lp, int k)
{
	struct lane_try *y = &lp->ls->y[k];
	double past = lp->fastest < HUGE_VAL ? LANE_PAST_SHARE * lp->fastest : 0;
	lp->taken[k] = true;
	lp->busy++;
	pthread_mutex_unlock(&lp->mu);
	y->tried = true;
	y->predicted = !tp__predict_launch_past(lp->ls->r->g, lp->ls->r->a, y->map, false,
						past, &y->p, &y->past) &&
		       !y->past;
	pthread_mutex_lock(&lp->mu);
	lp->busy--;
	if (y->predicted && y->p.exchange_us < lp->fastest)
		lp->fastest = y->p.exchange_us;
	if (k == 0 && !y->predicted && !y->past)
		lp->stop = true;    /* lanes_side cannot judge the others */
}

/* The threads of the refinement just taken (under lp->mu): its share of
 * those no other refinement or filling uses, with the refinements still
 * to take (its team, graphmap_lanes.c: the same result on any number).
 * On a captured all-to-all the best's refinement ran alone at the end, a
 * third of the map's time (fftMPI's 512-rank trace on a torus). */
static int pool_team(struct lane_pool *lp)
{
	const cand_run *r = lp->ls->r;
	int left = lp->ls->nrun - lp->next_run +
		   (lp->spec_left && spec_unclaimed(r->slanes) ? 1 : 0);
	/* pool_run's count of the CPUs in use */
	int free = lp->threads - (lp->busy - lp->spec_here) - spec_running(r->slanes) -
		   spec_running(r->slanes_stale) - lp->lent - lp->spec_lent;
	int share = free / (1 + left);
	return share > 1 ? share : 1;
}

static void pool_run(void *arg, int32_t i)
{
	struct lane_pool *lp = arg;
	struct lane_tries *ls = lp->ls;
	(void)i;
	pthread_mutex_lock(&lp->mu);
	for (;;) {
		if (lp->next_run < ls->nrun || lp->spec_left) {
			struct lane_try *y = lp->next_run < ls->nrun
					     ? &ls->y[ls->run[lp->next_run++]] : NULL;
			int cpus = y ? pool_team(lp) : 1;
			if (y) {
				y->threads = cpus;
				/* the last: and the pool's threads left
				 * with nothing to do */
				y->lender = lp->next_run == ls->nrun ? &lp->lender : NULL;
				lp->lending |= y->lender != NULL;
			}
			lp->busy += cpus;
			lp->spec_here += !y;
			pthread_mutex_unlock(&lp->mu);
			bool claimed = true;
			if (y)
				lane_refine(ls->r, y);
			else
				claimed = spec_lane_claim(ls->r->slanes);
			pthread_mutex_lock(&lp->mu);
			if (y && y->lender) {
				/* its team has given back what it took */
				tp__lender_forget(&lp->lender);
				lp->lent = 0;
				lp->lending = false;
			}
			if (y)
				y->done = true;
			lp->spec_left &= claimed;
			lp->spec_here -= !y;
			lp->busy -= cpus;
			pthread_cond_broadcast(&lp->cv);
			continue;
		}
		pool_take_ahead(lp);
		/* a filling only on a CPU no refinement uses (the speculative
		 * threads' too): one beside them slowed both, and the start
		 * filled may yet lose to one not refined */
		const cand_run *r = ls->r;
		/* those lent and not taken are here again (the team takes one
		 * only where its tries are long enough) */
		while (lp->lent > 0 && tp__lender_take(&lp->lender))
			lp->lent--;
		while (lp->spec_lent > 0 && tp__lender_take(lp->spec_lender))
			lp->spec_lent--;
		int running = lp->busy - lp->spec_here + spec_running(r->slanes) +
			      spec_running(r->slanes_stale) + lp->lent + lp->spec_lent;
		int k = running < lp->threads ? pool_next_fill(lp) : -1;
		if (k >= 0) {
			pool_fill(lp, k);
			pthread_cond_broadcast(&lp->cv);
			continue;
		}
		struct spec_lanes *wait = pool_waits_on(lp);
		if (lp->busy == 0 && !wait)
			break;
		/* nothing here to do: this CPU to the last refinement's team
		 * (on fftMPI's torus it ran alone once the speculative start
		 * beside it ended), else to the speculative start waited for
		 * (lent to one at a time) */
		if (lp->lending && running < lp->threads) {
			tp__lender_give(&lp->lender, 1);
			lp->lent++;
		} else if (wait && running < lp->threads &&
			   (lp->spec_lent == 0 || lp->spec_lender == &wait->lender)) {
			lp->spec_lender = &wait->lender;
			tp__lender_give(lp->spec_lender, 1);
			lp->spec_lent++;
		}
		/* until a refinement or filling here ends, or a while (one on
		 * the speculative thread does not say when it ends) */
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += 2000000;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_cond_timedwait(&lp->cv, &lp->mu, &ts);
	}
	pthread_mutex_unlock(&lp->mu);
}

/* ls's refinements, and fillings as they are refined, on `threads`
 * threads. */
static int lanes_pool(struct lane_tries *ls, const struct lane_try *ahead, int n,
		      int threads)
{
	struct lane_pool lp = { .ls = ls, .ahead = ahead, .n = n, .threads = threads,
				.spec_left = ls->r->slanes != NULL, .fastest = HUGE_VAL };
	tp__lender_init(&lp.lender);
	lp.taken = calloc((size_t)n, sizeof *lp.taken);
	lp.here = calloc((size_t)n, sizeof *lp.here);
	if (!lp.taken || !lp.here) {
		free(lp.taken);
		free(lp.here);
		return TP_ENOMEM;
	}
	for (int i = 0; i < ls->nrun; i++)
		lp.here[ls->run[i]] = true;
	pthread_mutex_init(&lp.mu, NULL);
	pthread_cond_init(&lp.cv, NULL);
	tp__parallel_for(threads, threads, pool_run, &lp);
	pthread_cond_destroy(&lp.cv);
	pthread_mutex_destroy(&lp.mu);
	free(lp.taken);
	free(lp.here);
	return TP_OK;
}

/* Without a budget, the lane refinement's n starts (the first: the best)
 * run side by side and are then judged in order as lanes_other_start
 * judges them one by one: a start is kept when predicted faster than the
 * one kept so far.  The same result on any number of threads; *won: the
 * start kept, or -1 when the first failed (its note in c). */
static int lanes_side(cand_run *r, tp_place_candidate *c, const int32_t *const *start,
		      const double *hop_weight, int n, const struct lane_try *ahead,
		      int *won, int64_t *moves, tp_error *err)
{
	struct lane_try *y = calloc((size_t)n, sizeof *y);
	int rc = y ? TP_OK : TP_ENOMEM, nalloc = n;
	for (int k = 0; !rc && k < n; k++) {
		y[k] = (struct lane_try){ .start = start[k], .hop_weight = hop_weight[k] };
		if (!(y[k].map = malloc(map_bytes(r))))
			rc = TP_ENOMEM;
	}
	if (!rc) {
		/* the other starts only where the first's prediction is
		 * affordable (lanes_other_start, tp__place_predicted_of) */
		if (!tp__predict_affordable(r->g, r->a, 0))
			n = 1;
		int threads = run_threads(r);
		int *run = malloc(sizeof *run * (size_t)n), nrun = 0;
		struct lane_tries ls = { .r = r, .y = y, .run = run };
		if (!run)
			rc = TP_ENOMEM;
		struct spec_lanes *sl = r->slanes;
		if (sl)
			pthread_mutex_lock(&sl->mu);
		for (int k = 0; !rc && k < n; k++) {
			const struct lane_try *o = made_ahead(r, ahead, &y[k]);
			if (!o && !spec_stale_running(r, &y[k]))
				run[nrun++] = k;
			else if (sl && o >= sl->one && o < sl->one + sl->n)
				sl->wanted[o - sl->one] = true;
		}
		if (sl) {
			sl->decided = true;   /* the starts it does not take: left */
			pthread_mutex_unlock(&sl->mu);
		}
		/* and the speculative starts no thread has claimed yet */
		ls.nrun = nrun;
		if (!rc)
			rc = lanes_pool(&ls, ahead, n, threads);
		spec_lanes_join(r->slanes);
		spec_lanes_join(r->slanes_stale);
		for (int k = 0; !rc && k < n; k++) {
			const struct lane_try *o = made_ahead(r, ahead, &y[k]);
			if (o && !y[k].done)
				lane_take(r, &y[k], o);
		}
		free(run);
		if (!rc)
			rc = lanes_predict(&ls, n, threads);
	}
	*won = -1;
	/* judged on the bounds (rep->on_bounds): the same order and rule,
	 * each start's bound for its time */
	bool on_b = r->rep->on_bounds;
	for (int k = 0; !rc && k < n; k++) {
		if (y[k].rc == TP_ENOMEM) {
			rc = tp_error_set(err, TP_ENOMEM, "%s", y[k].err.msg);
			break;
		}
		if (k == 0 && y[k].rc) {
			snprintf(c->note, sizeof c->note, "failed: %.70s", y[k].err.msg);
			break;
		}
		if (k == 0 && (on_b ? !y[k].bounded
				    : !y[k].predicted && !y[k].past &&
				      (y[k].tried || !y[k].bounded)))
			break;    /* lanes_other_start cannot judge the others */
		bool timed = on_b ? y[k].bounded : y[k].predicted;
		double us = on_b ? y[k].lower : y[k].p.exchange_us;
		if (y[k].rc || !timed ||
		    (*won >= 0 && !(us < (1 - TP__PREDICT_ROUNDING_SHARE) * c->predicted_us)))
			continue;
		*won = k;
		*moves = y[k].moves;
		if (on_b)
			tp__place_take_bound(c, us);
		else
			tp__place_take_prediction(c, &y[k].p);
	}
	if (*won < 0 && !rc && !y[0].rc) {
		*won = 0;    /* kept, unpredicted, as the one-by-one stage keeps it */
		*moves = y[0].moves;
	}
	if (*won >= 0)
		memcpy(r->trial, y[*won].map, map_bytes(r));
	for (int k = 0; y && k < nalloc; k++)
		free(y[k].map);
	free(y);
	return rc;
}

/* A runner-up is a start worth refining when both its time and the
 * best's were modelled in full (bounds tie on a large exchange: 0.7 us
 * for every candidate of bench_hier's dfly-64k-4, where four starts took
 * 44 s for nothing) and it is within LANES_RUNNER_SHARE of the best. */
static bool runner_worth(const tp_place_candidate *c, const tp_place_candidate *best)
{
	return best->has_predicted && !best->predicted_bound && !c->predicted_bound &&
	       c->predicted_us <= LANES_RUNNER_SHARE * best->predicted_us;
}

/* A start of the lane refinement after the first (the best so far, with
 * lanes_base_weight). */
struct lane_start {
	const int32_t *map;
	double hop_weight;
	const char *name;
};

/* start[ns] = (map, hop_weight, name), unless the same map with the same
 * weight is the first start or already listed (constructions often agree:
 * on a dense trace, two runners-up were one mapping).  A repeat would
 * refine to the same result and could not win, which must be strictly
 * faster: skipping it changes nothing but the time.  The new count. */
static int add_start(const cand_run *r, struct lane_start *start, int ns,
		     const int32_t *map, double hop_weight, const char *name)
{
	if (hop_weight == lanes_base_weight(r) && !memcmp(map, r->best, map_bytes(r)))
		return ns;
	for (int k = 0; k < ns; k++)
		if (start[k].hop_weight == hop_weight &&
		    !memcmp(map, start[k].map, map_bytes(r)))
			return ns;
	start[ns] = (struct lane_start){ map, hop_weight, name };
	return ns + 1;
}

/* auto by predicted time: the best so far with its busiest lanes relieved
 * (tp__graphmap_refine_lanes_hops, whatever it costs in hop-bytes), kept
 * as "X+lanes" when predicted faster.  Other starts, the fastest of all
 * kept: when the best is a construction's hop-bytes refinement, the
 * construction itself (the refinement can leave the lanes a poorer start:
 * rgg-ft4-s1 of simgrid.sh, 88.4 us from bipartition+refine, 81.4 from
 * bipartition); the runners-up (LANES_RUNNERS); the best and its
 * construction with long routes weighed (LANES_HOP_WEIGHT). */
int tp__place_lanes_stage(cand_run *r, tp_error *err)
{
	tp_place_report *rep = r->rep;
	if (!r->by_time || r->o->graph.refine_passes <= 0 ||
	    rep->ncandidates >= TP_PLACE_MAX_CANDIDATES)
		return 0;
	char of[sizeof rep->cand[0].name];
	construction_of(of, sizeof of, rep->cand[rep->best].name);
	const char *from = rep->cand[rep->best].name;
	const int32_t *built = r->built && rep->best == r->built_refined ? r->built
									 : NULL;
	tp_place_candidate *c = &rep->cand[rep->ncandidates++];
	memset(c, 0, sizeof *c);
	snprintf(c->name, sizeof c->name, "%.16s+lanes", of);
	double setup = tp__refine_setup_ms(r->g);
	if (!tp__place_fits(r, c, setup))
		return 0;
	double t = tp__now_ms();
	int64_t moves = 0;
	bool side = r->o->geom.time_budget_ms <= 0;
	int rc = side ? TP_OK : lanes_from(r, c, r->best, lanes_base_weight(r), &moves,
					   err);
	struct lane_try ahead = { 0 };
	bool beside = side && losers_beside(r, &ahead);
	tp__place_fill_losers(r);
	/* the other starts, in this order: the construction, the runners-up,
	 * then the best and its construction with long routes weighed; where
	 * the rounds bound the exchange, the weighted construction alone
	 * (LANES_ROUNDS_SHARE) */
	struct lane_start start[3 + LANES_RUNNERS];
	int ns = 0;
	const tp_place_candidate *b = &rep->cand[rep->best];
	bool hops = r->lanes_by_hops;
	if (built && !hops)
		ns = add_start(r, start, ns, built, 0, of);
	/* behind the tiles (node_tiles.c) the runners are those the best
	 * other construction would have had: a whole other tiling's lanes can
	 * end slower (with tiles at any gain, an 8x8x8 27-point stencil on a
	 * 4:1 tree: the tiles 249 us, hierarchical 326, hier-coords 352;
	 * their lanes 218 us, and 207 from hier-coords) */
	const tp_place_candidate *ref = b;
	if (!strcmp(of, "tiles") && r->nrunners > 0 && b->has_predicted &&
	    !b->predicted_bound)
		ref = &rep->cand[r->runner[0].idx];
	for (int k = 0; !hops && k < r->nrunners; k++)
		if (runner_worth(&rep->cand[r->runner[k].idx], ref))
			ns = add_start(r, start, ns, r->runner[k].map, 0,
				       rep->cand[r->runner[k].idx].name);
	if (b->has_predicted && !b->predicted_bound) {
		ns = add_start(r, start, ns, r->best, LANES_HOP_WEIGHT, b->name);
		if (built)
			ns = add_start(r, start, ns, built, LANES_HOP_WEIGHT, of);
	}
	bool by_hops = hops, early = false;
	if (side) {
		/* without a budget, every start at once (lanes_side) */
		const int32_t *maps[4 + LANES_RUNNERS] = { r->best };
		double hw[4 + LANES_RUNNERS] = { lanes_base_weight(r) };
		for (int k = 0; k < ns; k++) {
			maps[k + 1] = start[k].map;
			hw[k + 1] = start[k].hop_weight;
		}
		int won = -1;
		rc = lanes_side(r, c, maps, hw, ns + 1, beside ? &ahead : NULL, &won,
				&moves, err);
		if (!rc && won < 0)
			rc = TP_EINVAL;    /* the first failed: its note says why */
		if (won > 0) {
			from = start[won - 1].name;
			by_hops = start[won - 1].hop_weight > 0;
		}
		early = won == 0 && r->lahead &&
			!memcmp(r->lahead->start, r->best, map_bytes(r));
	}
	for (int k = 0; !side && k < ns && !rc; k++)
		if (lanes_other_start(r, c, start[k].map, start[k].hop_weight, setup,
				      &moves, &rc, err)) {
			from = start[k].name;
			by_hops = start[k].hop_weight > 0;
		}
	free(ahead.map);
	c->ms = tp__now_ms() - t;
	if (rc)
		return rc == TP_ENOMEM ? rc : 0;
	c->ran = true;
	/* named after the start that won */
	char won[sizeof c->name];
	construction_of(won, sizeof won, from);
	snprintf(c->name, sizeof c->name, "%.16s+lanes", won);
	char why[24] = "";
	if (hops)
		snprintf(why, sizeof why, ", rounds %.0f %%", r->rounds_share * 100);
	snprintf(c->note, sizeof c->note, "%lld move%s from %s%s%s%s", (long long)moves,
		 moves == 1 ? "" : "s", from, by_hops ? ", long routes weighed" : "",
		 why, early ? ", begun as its start was filled" : "");
	judge_stage(r, c, moves > 0, false);
	return 0;
}

/* auto by predicted time, last: the best's nodes trade places for its
 * slowest messages, each trade judged by the model (tp__time_trades),
 * kept as "X+trades" when predicted faster.  Only where the best's time
 * was modelled in full: a bound does not tell the slowest messages. */
int tp__place_trades_stage(cand_run *r, tp_error *err)
{
	tp_place_report *rep = r->rep;
	if (!r->by_time || r->o->graph.refine_passes <= 0 ||
	    rep->ncandidates >= TP_PLACE_MAX_CANDIDATES)
		return 0;
	const tp_place_candidate *b = &rep->cand[rep->best];
	if (!b->has_predicted || b->predicted_bound)
		return 0;
	/* b's name copied: the note is written into the same array */
	char of[sizeof rep->cand[0].name], from[sizeof rep->cand[0].name];
	snprintf(from, sizeof from, "%s", b->name);
	construction_of(of, sizeof of, b->name);
	int64_t work = b->predicted_work;
	tp_place_candidate *c = &rep->cand[rep->ncandidates++];
	memset(c, 0, sizeof *c);
	snprintf(c->name, sizeof c->name, "%.16s+trades", of);
	if (!tp__time_trades_worth(work)) {
		snprintf(c->note, sizeof c->note, "skipped: %lld tries affordable, "
			 "a node has %d partners", (long long)tp__time_trades_tries(work),
			 TP__TIME_TRADES_PARTNERS);
		return 0;
	}
	if (!tp__place_fits(r, c, 2 * r->score_ms))
		return 0;
	double t = tp__now_ms(), budget = r->o->geom.time_budget_ms;
	double deadline = budget > 0 ? r->t0 + budget - r->reserve_ms - r->score_ms : 0;
	memcpy(r->trial, r->best, map_bytes(r));
	int64_t trades = 0;
	tp_error e;
	tp_error_clear(&e);
	int rc = tp__time_trades(r->g, r->a, r->trial, deadline, run_threads(r),
				 &trades, &e);
	c->ms = tp__now_ms() - t;
	if (rc)
		return tp_error_set(err, rc, "%s", e.msg);
	c->ran = true;
	snprintf(c->note, sizeof c->note, "%lld trade%s from %s", (long long)trades,
		 trades == 1 ? "" : "s", from);
	judge_stage(r, c, trades > 0, false);
	return 0;
}

/* Slurm's block order refined and filled ahead, on a thread of its own
 * while the winner is refined and filled (block_ahead_begin): refine_from
 * takes the refinement and its congestion step, tp__place_predicted_of
 * the filling (r->memo), the same as made in turn. */
struct block_ahead {
	pthread_t th;
	bool started;
	const cand_run *r;
	int32_t *start;      /* block's order */
	struct spec_refine sp;
	int32_t *final;      /* after the congestion step, filled (p) */
	bool filled;
	tp_prediction p;
};

bool tp__place_refine_ahead(const cand_run *r, const int32_t *start,
			    struct spec_refine *sp, int32_t *final, tp_prediction *p,
			    struct lanes_ahead **lanes, const atomic_bool *stop)
{
	memcpy(sp->map, start, map_bytes(r));
	tp_graphmap_opts go = r->o->graph;
	go.time_budget_ms = 0;   /* as refine_from without a budget */
	double t = tp__now_ms();
	sp->ready = !tp__graphmap_refine_threads(r->g, r->a, &go, r->o->geom.nthreads,
						 stop, sp->map, &sp->moves, NULL);
	sp->ms = tp__now_ms() - t;
	if (!sp->ready)
		return false;
	int64_t cmoves = 0;
	memcpy(final, sp->map, map_bytes(r));
	if (tp__place_congestion_step(r, final, 0, 1, NULL, stop, &cmoves, NULL))
		return false;
	/* for refine_from, which made the step again (as long as the
	 * hop-bytes refinement, or longer, on a captured all-to-all) */
	if ((sp->stepped = malloc(map_bytes(r)))) {
		memcpy(sp->stepped, final, map_bytes(r));
		sp->cmoves = cmoves;
	}
	if (!p)
		return true;
	struct lanes_ahead *la = lanes && r->o->graph.refine_passes > 0
				 ? lanes_ahead_new(r, final) : NULL;
	if (!la)
		return !tp__predict_launch(r->g, r->a, final, false, p);
	struct fill_and_lanes f = { .r = r, .map = final, .p = p, .la = la };
	tp__parallel_for(2, 2, fill_and_lanes_task, &f);
	*lanes = la;
	return f.filled;
}

static void *block_ahead_run(void *arg)
{
	struct block_ahead *b = arg;
	const cand_run *r = b->r;
	if (!tp_map_block(r->a, r->g->ntasks, b->start, NULL))
		b->filled = tp__place_refine_ahead(r, b->start, &b->sp, b->final, &b->p,
						   NULL, NULL);
	return NULL;
}

/* Beside the winner's on BLOCK_AHEAD_THREADS or more (by predicted time,
 * without a budget, its filling affordable); false: refined in turn. */
static bool block_ahead_begin(cand_run *r, struct block_ahead *b)
{
	memset(b, 0, sizeof *b);
	if (!r->by_time || r->o->geom.time_budget_ms > 0 ||
	    !tp__predict_affordable(r->g, r->a, 0) || run_threads(r) < BLOCK_AHEAD_THREADS)
		return false;
	b->r = r;
	b->start = malloc(map_bytes(r));
	b->sp.map = malloc(map_bytes(r));
	b->final = malloc(map_bytes(r));
	b->started = b->start && b->sp.map && b->final &&
		     !pthread_create(&b->th, NULL, block_ahead_run, b);
	return b->started;
}

/* Joined; its filling kept for the judgement when start is block's
 * order.  The refinement made ahead, or NULL. */
static const struct spec_refine *block_ahead_join(cand_run *r, struct block_ahead *b,
						  const int32_t *start)
{
	if (!b || !b->started)
		return NULL;
	pthread_join(b->th, NULL);
	b->started = false;
	if (!b->sp.ready || memcmp(start, b->start, map_bytes(r)))
		return NULL;
	if (b->filled)
		tp__place_memo_add(r, b->final, &b->p);
	return &b->sp;
}

static void block_ahead_free(struct block_ahead *b)
{
	if (b->started)
		pthread_join(b->th, NULL);
	free(b->start);
	free(b->sp.map);
	free(b->sp.stepped);
	free(b->final);
}

/* The threads of the refinement stage's congestion step: those the
 * speculative lane starts and the refinements made ahead (ahead) do
 * not hold when it begins (every one under a budget, where neither
 * runs), and those they give back later (r->lender). */
static int refine_team(const cand_run *r, bool ahead)
{
	/* counted here: only those given from now on are lent */
	tp__lender_forget(r->lender);
	int claimers = spec_claimers(r), spec = 0;
	struct spec_lanes *const both[] = { r->slanes, r->slanes_stale };
	for (int k = 0; k < 2; k++)
		spec += !both[k] ? 0 : spec_unclaimed(both[k]) ? claimers
							     : spec_running(both[k]);
	int free = run_threads(r) - spec - (ahead ? 1 : 0);
	return free > 1 ? free : 1;
}

/* The winner of the constructions, refined; in auto also Slurm's block
 * order when it scores within 10 % of the winner. */
int tp__place_refine_stage(cand_run *r, tp_error *err)
{
	tp_place_report *rep = r->rep;
	r->reserve_ms = 0;
	if (r->o->graph.refine_passes <= 0)
		return 0;
	char won[sizeof rep->cand[0].name];
	snprintf(won, sizeof won, "%s", rep->cand[rep->best].name);
	double won_score = rep->cand[rep->best].score;
	bool auto_ = r->o->policy == TP_POLICY_AUTO;
	if (r->by_time && (r->built = malloc(map_bytes(r)))) {
		memcpy(r->built, r->best, map_bytes(r));
		r->built_refined = rep->ncandidates;   /* refine_from's */
		spec_lanes_begin(r);
	}
	bool block_too = auto_ && strcmp(won, "block") && rep->cand[0].ran &&
			 rep->cand[0].score <= BLOCK_REFINE_SHARE * won_score;
	static const char made_early[] = ", made while the constructions were judged";
	/* those made early (place_early.c) and not wanted stopped before the
	 * winner's refinement, whose CPU they held */
	tp__place_early_keep(r, r->best, block_too);
	struct block_ahead ahead;
	memset(&ahead, 0, sizeof ahead);
	if (block_too && !r->early)
		block_ahead_begin(r, &ahead);
	const struct spec_refine *pre = tp__place_early_take(r, r->best);
	bool beside = ahead.started || tp__place_early_busy(r);
	int rc = refine_from(r, r->best, won, pre, made_early, refine_team(r, beside), err);
	int32_t *start = NULL;
	if (!rc && block_too) {
		start = tp__malloc_array((size_t)r->g->ntasks + 1, sizeof(int32_t));
		rc = start ? tp_map_block(r->a, r->g->ntasks, start, err)
			   : tp_error_set(err, TP_ENOMEM, "policy auto: out of memory");
		if (!rc)
			rc = refine_from(r, start, "block",
					 r->early ? tp__place_early_take(r, start)
						  : block_ahead_join(r, &ahead, start),
					 r->early ? made_early : ", made beside the winner's",
					 refine_team(r, false), err);
	}
	block_ahead_free(&ahead);
	tp__place_early_end(r);
	free(start);
	/* the lane stage's pool lends its own (lane_pool) */
	tp__lender_close(r->lender);
	return rc;
}
