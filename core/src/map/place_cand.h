/* topoplace — the graph and auto policies' candidates, what their files
 * share: the state of one run of candidates (cand_run), its budget
 * accessors, and the functions the files call across.  place_auto.c runs
 * the candidates, place_cand.c builds and scores one, place_choice.c
 * compares them, place_side.c runs them side by side, place_refine.c
 * refines the winner (hop-bytes, lanes, trades); place.c dispatches the
 * policies. */
#ifndef TOPOPLACE_PLACE_CAND_H
#define TOPOPLACE_PLACE_CAND_H

#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <topoplace/predict.h>

#include "util/util_internal.h"
#include "map/metrics_internal.h"
#include "map/node_tiles.h"
#include "map/place_internal.h"
#include "pattern/pattern_internal.h"

/* ---- candidates: graph and auto ---- */

enum cand_kind { C_BLOCK, C_ZORDER, C_GEOMETRIC, C_GREEDY, C_BIPART, C_MODCOLOR,
		 C_BLOCKS, C_HIER, C_HIER_COORDS, C_TILES };

/* Constructions kept besides the best as starts of the lane refinement:
 * another construction's layout often ends faster under it (simgrid's
 * ft2-s4: 52.4 us from bipartition, 59.8 from hierarchical+refine, the
 * best before the lanes at 59.2). */
#define LANES_RUNNERS 2
/* ... when predicted at most this much slower than the best: from further
 * back the lanes do not catch up (simgrid's tori: bipartition and greedy
 * at 1.6-1.7x geometric), and each start costs a refinement */
#define LANES_RUNNER_SHARE 1.25
/* One more start, the best again, with each message counted (1 + this x
 * its links) times: where long messages end last (latency, round-trip
 * sharing) that relieves them first.  simgrid's tori: 3 % faster
 * predicted.  On two-level trees it is rarely the fastest, and then by
 * 0.1 % with sizes given, but by 5.5 % on a 4:1 tree told nothing (32 KiB
 * faces): another local optimum, so it stays a start there too
 * (doc/benchmarks.md, the defaults' time). */
#define LANES_HOP_WEIGHT 1.0
/* Where a trace's collectives' rounds are at least this share of Slurm's
 * order's exchange (its bound), every lane start weighs long routes and
 * only the best and its construction are starts (lanes_by_hops), and the
 * lane refinement keeps the rounds' latency from rising (rounds_guard.h).
 * The lane refinement relieves lanes of bytes; a round's few bytes are
 * nothing to it, and it moved the rounds' partners apart: on miniAMR's
 * 512-rank trace on a 16^3 torus (rounds 0.84x of the exchange) its
 * starts that weigh no hops raised the best's rounds from 11.2 us to
 * 15.0-18.3, and none was kept on 50 allocations, where the weighted ones
 * (rounds 11.5-13.0 us) were kept on 2.  They took three fifths of the
 * mapping's time (2.7 s of 4.0). */
#define LANES_ROUNDS_SHARE 0.5

/* Fillings made ahead at most: the constructions side by side,
 * geometric's refinement and the losers kept on their bounds. */
#define MEMO_MAX 16

typedef struct cand_run {
	const tp_graph *g;
	const tp_alloc *a;
	const tp_place_opts *o;
	tp_place_report *rep;
	tp_congestion_ws *ws;
	int32_t *trial;
	int32_t *best;       /* the caller's map */
	double best_score;
	double best_rank;    /* o->rank of the best, when given */
	int best_idx;        /* the best's candidate (for its congestion) */
	bool rule;           /* the auto rule applies (place.h) */
	bool by_time;        /* auto compares predicted exchange times */
	/* by time without a budget: the first prediction a verdict takes
	 * has decided (place_choice.c, decide_bounds) whether the exchange
	 * is judged on its candidates' bounds alone (rep->on_bounds) */
	bool bounds_decided;
	bool alt;            /* a candidate other than block has a result */
	tp_congestion_ws *cws;  /* the rule's congestion workspace */
	double t0;
	double score_ms;     /* the slowest scoring so far: kept for each next one */
	double reserve_ms;   /* kept from the constructions for refining the
				winner (auto_constructions) */
	int32_t *built;      /* by time: the winning construction before its
				refinement (tp__place_lanes_stage), else NULL */
	int built_refined;   /* the candidate that refinement is */
	struct runner_up {   /* by time: the fastest constructions but the
				best, fastest first (tp__place_lanes_stage's other
				starts) */
		int32_t *map;
		int idx;
	} runner[LANES_RUNNERS];
	int nrunners;
	/* by time: constructions that lost unfilled, their bound past the
	 * best's time but within the runners' share: filled at the lane
	 * stage only when still within it of the best then (tp__place_lanes_stage) */
	struct runner_up maybe[TP_PLACE_MAX_CANDIDATES];
	int nmaybe;
	/* the winner's refinement made while the last constructions ran
	 * (tp__place_run_side_by_side), for refine_from */
	struct spec_refine {
		int32_t *map;
		int idx;             /* the candidate refined */
		bool ready;          /* refined without error */
		int64_t moves;
		double ms;
		int32_t *stepped;    /* map after the congestion step, made
					ahead too (without a budget), or NULL */
		int64_t cmoves;      /* the step's moves */
	} spec;
	/* fillings made ahead on other threads (place_side.c: the
	 * constructions', geometric's refinement's), taken by
	 * tp__place_predicted_of for the same map (tp__place_memo_add) */
	struct memo_fill {
		int32_t *map;
		tp_prediction p;
	} memo[MEMO_MAX];
	int nmemo;
	/* the lane starts of the winning construction (hop weight 0 and
	 * LANES_HOP_WEIGHT), refined on a thread of their own while its
	 * hop-bytes refinement is made and filled (place_refine.c), for
	 * lanes_side; NULL: none */
	struct spec_lanes *slanes;
	struct spec_lanes *slanes_stale;   /* begun for a construction that
					      lost: joined at the end */
	/* the refinements begun while the constructions are judged
	 * (place_early.c), for the refinement stage; NULL: none */
	struct early_run *early;
	/* the CPUs the speculative starts leave when they end, lent to the
	 * refinement stage's congestion steps (closed when it ends: the
	 * lane stage's pool lends its own) */
	tp__lender *lender;
	/* the winning construction's refinement refined by lanes (hop
	 * weight 0) beside its filling (place_side.c, from
	 * LANES_AHEAD_THREADS), for lanes_side when the best is that map;
	 * NULL: none */
	struct lanes_ahead *lahead;
	/* by time: the rounds are LANES_ROUNDS_SHARE or more of Slurm's
	 * order's exchange (rounds_share, place_auto.c): every lane start
	 * weighs long routes (lanes_base_weight), and the runners-up and the
	 * construction's unweighted start are left out */
	bool lanes_by_hops;
	double rounds_share;
	/* auto: the grid's node tiles, where their busiest sends less than
	 * the blocks' (node_tiles.h); the candidate "tiles" runs then */
	bool has_tiles;
	struct tp__tiles tiles;
	bool greedy_last;    /* tp__place_ex_greedy_last: greedy starts once
				the others are built, and ends before the
				refinement begun beside it does */
	/* block's score, being computed on a second thread (block_async) */
	pthread_t scorer;
	bool scoring;
	double async_ms;
} cand_run;

/* The hop weight of the best's own lane start: 0, LANES_HOP_WEIGHT where
 * the rounds bound the exchange (lanes_by_hops). */
static inline double lanes_base_weight(const struct cand_run *r)
{
	return r->lanes_by_hops ? LANES_HOP_WEIGHT : 0;
}

/* Bytes of one mapping (at least one entry: malloc and memcpy of 0). */
static inline size_t map_bytes(const cand_run *r)
{
	return sizeof(int32_t) * (size_t)(r->g->ntasks > 0 ? r->g->ntasks : 1);
}

static inline double remaining_ms(const cand_run *r)
{
	double b = r->o->geom.time_budget_ms;
	if (b <= 0)
		return 0;   /* no limit */
	double left = b - (tp__now_ms() - r->t0);
	return left > 1e-3 ? left : 1e-3;
}

static inline bool out_of_time(const cand_run *r)
{
	double b = r->o->geom.time_budget_ms;
	return b > 0 && tp__now_ms() - r->t0 >= b;
}

/* The threads the stages may run on: --threads, else one a CPU. */
static inline int run_threads(const cand_run *r)
{
	return r->o->geom.nthreads > 0 ? r->o->geom.nthreads : tp__cpus();
}

/* Is hop-bytes a at most share above b? */
static inline bool within(double a, double b, double share)
{
	return a <= (1 + share) * b + 1e-12 * fabs(b);
}

/* The auto rule (place.h): hop-bytes within TP_PLACE_CONGESTION_SHARE
 * of each other both ways, where congestion may decide between them. */
static inline bool rule_close(double hc, double hb)
{
	return within(hc, hb, TP_PLACE_CONGESTION_SHARE) &&
	       within(hb, hc, TP_PLACE_CONGESTION_SHARE);
}

/* The auto rule's verdict between close candidates c and b (rule_close)
 * from their hop-bytes and congestions: does c win?  by_hops: what the
 * hop-bytes alone say. */
static inline bool rule_by_congestion(double hc, double hb, double cc, double cb,
				      bool by_hops)
{
	const double S = TP_PLACE_CONGESTION_SHARE;
	if (cc <= (1 - S) * cb)
		return true;
	if (cb <= (1 - S) * cc)
		return false;
	if (fabs(hc - hb) <= TP_PLACE_EQUAL_HOPS * fmax(hc, hb) && cc != cb)
		return cc < cb;
	return by_hops;
}

/* A candidate this far above the best in hop-bytes is not modelled: it
 * loses (the quick filter before the model; place_choice.c). */
#define PREDICT_FILTER_HOPS 2.0

/* Candidates side by side at most (place_side.c). */
#define SIDE_MAX 8

/* place_choice.c */
/* Keeps map's prediction p (made ahead) for tp__place_predicted_of; left
 * out when full or out of memory (the filling is then made again). */
void tp__place_memo_add(cand_run *r, const int32_t *map, const tp_prediction *p);

/* place_refine.c */
/* Threads from which the winning construction's refinement is also
 * refined by lanes beside its filling (tp__place_refine_ahead's lanes):
 * on fewer the CPUs are the constructions' and their fillings'. */
#define LANES_AHEAD_THREADS 8
/* Threads from which block's refinement is made ahead beside the
 * winner's: as for the constructions' fillings (place_side.c), on fewer
 * it would take a CPU from the winner's (place_early.c's is begun
 * before). */
#define BLOCK_AHEAD_THREADS 4
/* The refinement stage refines block's order whichever construction wins
 * when its hop-bytes are within this share of the winner's, and when
 * block wins. */
#define BLOCK_REFINE_SHARE 1.1
/* start refined as refine_from refines it without a budget, made ahead on
 * another thread: the hop-bytes refinement into sp (sp->map allocated,
 * for refine_from), then the congestion step into final (and a copy in
 * sp->stepped, where memory allows), filled into *p (NULL: not filled);
 * lanes (may be NULL): final's lane refinement as lanes_side makes it,
 * made beside the filling, into *lanes (NULL: not made).  True when
 * final is filled (p NULL: when refined).  stop (may be NULL) ends the
 * refinements once set, when the result is no longer wanted. */
bool tp__place_refine_ahead(const cand_run *r, const int32_t *start,
			    struct spec_refine *sp, int32_t *final, tp_prediction *p,
			    struct lanes_ahead **lanes, const atomic_bool *stop);
/* The congestion refinement refine_from makes after the hop-bytes one
 * (under the congestion metric, and under the auto rule except where auto
 * goes by predicted time on a kind with lanes of its own), on map, with
 * budget_ms
 * (0: none), on up to `threads` threads and those lender lends (may be
 * NULL): the same result on any number; 0 when not made.  stop as
 * tp__place_refine_ahead's. */
int tp__place_congestion_step(const cand_run *r, int32_t *map, double budget_ms,
			      int threads, tp__lender *lender, const atomic_bool *stop,
			      int64_t *cmoves, tp_error *e);

/* place_orders.c */
int tp__place_check_fit(const tp_alloc *a, int32_t ntasks, tp_error *err);

/* place_auto.c */
int tp__place_candidates(const tp_graph *g, const tp_alloc *a,
			    const tp_place_opts *o, int32_t *map,
			    tp_place_report *rep, bool greedy_last, tp_error *err);

/* place_cand.c */
void tp__place_score_trial(cand_run *r, tp_place_candidate *c);
double tp__place_step_budget(const cand_run *r);
bool tp__place_fits(cand_run *r, tp_place_candidate *c, double cost_ms);
void tp__place_settle(cand_run *r);
int tp__place_finish(cand_run *r, enum cand_kind k, int idx, int rc,
		  const tp_error *e, const double *score, tp_error *err);
tp_place_candidate *tp__place_new_candidate(tp_place_report *rep, enum cand_kind k);
int tp__place_construct(cand_run *r, enum cand_kind k, bool force,
		     tp_place_candidate *c, int32_t *out, tp_error *e,
		     bool *skipped);
bool tp__place_scored_by_search(const cand_run *r, enum cand_kind k);

/* place_choice.c */
bool tp__place_congestion_of(cand_run *r, tp_place_candidate *c,
			  const int32_t *map);
bool tp__place_predicted_of(cand_run *r, tp_place_candidate *c, const int32_t *map,
			    double past_us);
/* Prediction p as candidate c's predicted time. */
void tp__place_take_prediction(tp_place_candidate *c, const tp_prediction *p);
/* bound_us, its exchange's bound, as candidate c's time (rep->on_bounds). */
void tp__place_take_bound(tp_place_candidate *c, double bound_us);
bool tp__place_better(cand_run *r, tp_place_candidate *c, bool ties_win);
void tp__place_keep_best(cand_run *r, int idx);
void tp__place_keep_runner(cand_run *r, int idx, const int32_t *map);
/* Candidate idx (its mapping in map) among the runners-up, or among those
 * that may be when it lost on its bound alone (place_choice.c). */
void tp__place_keep_loser(cand_run *r, int idx, const int32_t *map);
/* The speculative lane starts (place_refine.c) ended and freed, and the
 * lane refinement made ahead (r->lahead). */
void tp__place_spec_lanes_end(cand_run *r);
/* place_early.c: on a thread of its own while the constructions are
 * judged, the winner as the exchanges' bounds guess it among maps[0..n)
 * (their hop-bytes score[], candidates idx[]) and block's order, refined
 * (hop-bytes, then the congestion step) for the refinement stage (least:
 * the least hop-bytes of every construction that ran); nothing when not
 * by time without a budget on two to BLOCK_AHEAD_THREADS - 1 threads (more
 * make block's beside the winner's). */
void tp__place_early(cand_run *r, const int32_t *const *maps, const double *score,
		     const int *idx, int n, double least);
/* Those not wanted stopped: all but winner's, and block's where block. */
void tp__place_early_keep(cand_run *r, const int32_t *winner, bool block);
/* start's refinement made early, once made (waited for), or NULL. */
const struct spec_refine *tp__place_early_take(cand_run *r, const int32_t *start);
/* map's filling made ahead on the early thread into *p (waited for when
 * under way); false when not made there (the caller fills it, and the
 * early thread leaves it). */
bool tp__place_early_filled(cand_run *r, const int32_t *map, tp_prediction *p);
/* map's filling not wanted (it lost unfilled): not made ahead. */
void tp__place_early_leave(cand_run *r, const int32_t *map);
/* The judgement's best time so far, us (fillings ahead past it left). */
void tp__place_early_best(cand_run *r, double us);
/* No more fillings ahead (the run is judged on the exchanges' bounds). */
void tp__place_early_no_fills(cand_run *r);
/* Is the early thread still on a refinement wanted? */
bool tp__place_early_busy(cand_run *r);
/* All stopped, the thread joined, and freed (nothing when none). */
void tp__place_early_end(cand_run *r);
/* The lane starts of built and of its refinement refined (may be NULL),
 * begun on a thread of their own while the constructions are judged
 * (place_side.c), for the lane stage when built wins; nothing when begun
 * already or not by time without a budget on two threads or more. */
void tp__place_spec_lanes_early(cand_run *r, const int32_t *built,
				const int32_t *refined);
/* The losers kept on their bounds filled, where still worth a start,
 * and among the runners-up then. */
void tp__place_fill_losers(cand_run *r);
/* Those of the losers kept on their bounds that tp__place_fill_losers
 * would fill now, as places in r->maybe, into which[]; their count. */
int tp__place_losers_to_fill(const cand_run *r, int *which);
/* The time past which a candidate is out of reach of the best's (it
 * loses, and is no runner-up worth a lane start): a filling can stop
 * there (tp__place_predicted_of's past_us). */
double tp__place_reach_us(const cand_run *r);

/* place_side.c */
int tp__place_run_side_by_side(cand_run *r, const enum cand_kind *ks, int nk,
			    int threads, tp_error *err);

/* place_refine.c */
int tp__place_refine_stage(cand_run *r, tp_error *err);
int tp__place_lanes_stage(cand_run *r, tp_error *err);
int tp__place_trades_stage(cand_run *r, tp_error *err);

#endif
