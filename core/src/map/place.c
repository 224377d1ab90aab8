/* topoplace — the policy layer (tp_place_ex) and the baseline mappings.
 *
 * Baselines: block (Slurm's default: the slots in allocation order), cyclic
 * (round-robin over the nodes), random (Fisher-Yates over the slots with
 * splitmix64, identical on every platform for a seed) and zorder (Slurm's
 * torus topology order: nodes by the Morton code of their seam-shifted
 * coordinates, then block).
 *
 * geometric is held to block here already: coordinates can mislead (a graph
 * whose coordinates do not follow its edges), and a placement tool must not
 * make a job slower.
 *
 * graph and auto run candidates and keep the best under the metric (or,
 * with a rank callback, by the GPU-link congestion first):
 *   graph   greedy growth (always runs, so there is a result), bipartition;
 *   auto    block (always), hier-coords (on a hierarchy, with task
 *           coordinates), geometric (with them), zorder, hierarchical (on a
 *           hierarchy), greedy, bipartition, modcolor (dragonflies); ties
 *           keep the earlier candidate, so auto starts no worse than block.
 * The constructions are not refined; the winner is refined once ("X+refine",
 * kept when it scores no worse), and in auto so is Slurm's block order when
 * it scores within 10 % of the winner ("block+refine").  Refinement is most
 * of graph mapping's cost and gains a few per cent: refining only the winner
 * costs a fraction of refining every candidate, for the same result.
 * Time budget: block always runs, and geometric where the tasks have
 * coordinates (a third of what is left; its first variant completes even
 * past that); then half of what is left is kept for the refinement of the
 * winner.  Every other candidate, and each refinement, runs only
 * when what is left covers its estimated cost plus one scoring (scoring
 * is measured on block, the first candidate: on a large graph it costs as
 * much as some candidates), and gets what is left less that
 * scoring as its own budget.  On large graphs block is scored on a second
 * thread while geometric runs (block_async).  The rules every front end
 * adds on top (auto's 0.5 % margin over Slurm's order, every policy held to
 * it) are in job_map.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "internal.h"
#include "map/metis_load.h"
#include "net/network.h"
#include "map/graphmap_internal.h"
#include "map/metrics_internal.h"
#include "map/place_internal.h"
#include "map/predict_internal.h"
#include "map/time_trades.h"

bool tp_policy_needs_pattern(enum tp_policy p)
{
	return p != TP_POLICY_CYCLIC && p != TP_POLICY_RANDOM &&
	       p != TP_POLICY_ZORDER;
}

void tp_place_opts_default(tp_place_opts *o)
{
	memset(o, 0, sizeof *o);
	o->policy = TP_POLICY_GEOMETRIC;
	tp_geom_opts_default(&o->geom);
	tp_graphmap_opts_default(&o->graph);
	o->seed = 1;
}

static int check_fit(const tp_alloc *a, int32_t ntasks, tp_error *err)
{
	if (ntasks < 0 || ntasks > a->total_slots)
		return tp_error_set(err, TP_EINVAL,
				    "%d tasks do not fit in the allocation's %lld slots",
				    ntasks, (long long)a->total_slots);
	return 0;
}

int tp_map_block(const tp_alloc *a, int32_t ntasks, int32_t *map, tp_error *err)
{
	int rc = check_fit(a, ntasks, err);
	if (rc)
		return rc;
	int32_t t = 0;
	for (int32_t i = 0; i < a->nnodes && t < ntasks; i++)
		for (int s = 0; s < a->slots[i] && t < ntasks; s++)
			map[t++] = i;
	return 0;
}

int tp_map_cyclic(const tp_alloc *a, int32_t ntasks, int32_t *map, tp_error *err)
{
	int rc = check_fit(a, ntasks, err);
	if (rc)
		return rc;
	int *left = tp__malloc_array((size_t)a->nnodes, sizeof(int));
	if (!left)
		return tp_error_set(err, TP_ENOMEM, "cyclic mapping: out of memory");
	memcpy(left, a->slots, sizeof(int) * (size_t)a->nnodes);
	int32_t t = 0;
	while (t < ntasks)
		for (int32_t i = 0; i < a->nnodes && t < ntasks; i++)
			if (left[i] > 0) {
				left[i]--;
				map[t++] = i;
			}
	free(left);
	return 0;
}

int tp_map_random(const tp_alloc *a, int32_t ntasks, uint64_t seed,
		  int32_t *map, tp_error *err)
{
	int rc = check_fit(a, ntasks, err);
	if (rc)
		return rc;
	int64_t S = a->total_slots;
	int32_t *slot = tp__malloc_array((size_t)S, sizeof(int32_t));
	if (!slot)
		return tp_error_set(err, TP_ENOMEM, "random mapping: out of memory");
	int64_t k = 0;
	for (int32_t i = 0; i < a->nnodes; i++)
		for (int s = 0; s < a->slots[i]; s++)
			slot[k++] = i;
	uint64_t st = seed;
	/* Fisher-Yates over the first ntasks positions */
	for (int64_t i = 0; i < ntasks; i++) {
		int64_t j = i + (int64_t)(tp__splitmix64(&st) % (uint64_t)(S - i));
		int32_t tmp = slot[i];
		slot[i] = slot[j];
		slot[j] = tmp;
		map[i] = slot[i];
	}
	free(slot);
	return 0;
}

typedef struct zkey {
	uint64_t key;
	int32_t i;
} zkey;

static int cmp_zkey(const void *x, const void *y)
{
	const zkey *a = x, *b = y;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->i - b->i;
}

/* Slurm's torus topology order: nodes sorted by the Morton (Z-order) code of
 * their coordinates relative to the minimal wrap-aware arc of every axis, then
 * tasks laid out block-wise in that order. */
int tp_map_zorder(const tp_alloc *a, int32_t ntasks, int32_t *map, tp_error *err)
{
	int rc = check_fit(a, ntasks, err);
	if (rc)
		return rc;
	int D = a->m->ndims;
	int32_t n = a->nnodes;
	int *c = tp__malloc_array((size_t)n * (size_t)D, sizeof(int));
	zkey *z = tp__malloc_array((size_t)n, sizeof(zkey));
	if (!c || !z) {
		free(c);
		free(z);
		return tp_error_set(err, TP_ENOMEM, "zorder mapping: out of memory");
	}
	if (tp__seam_shift(a, c, false) < 0) {   /* Slurm's seam rule */
		free(c);
		free(z);
		return tp_error_set(err, TP_ENOMEM, "zorder mapping: out of memory");
	}
	int lo[TP_MAX_DIMS];
	for (int d = 0; d < D; d++) {
		lo[d] = INT32_MAX;
		for (int32_t i = 0; i < n; i++)
			if (c[(int64_t)i * D + d] < lo[d])
				lo[d] = c[(int64_t)i * D + d];
	}
	int bits = 64 / D;
	for (int32_t i = 0; i < n; i++) {
		uint64_t key = 0;
		for (int b = bits - 1; b >= 0; b--)
			for (int d = D - 1; d >= 0; d--) {
				uint64_t v = (uint64_t)(c[(int64_t)i * D + d] - lo[d]);
				key = (key << 1) | ((v >> b) & 1);
			}
		z[i].key = key;
		z[i].i = i;
	}
	qsort(z, (size_t)n, sizeof *z, cmp_zkey);
	int32_t t = 0;
	for (int32_t k = 0; k < n && t < ntasks; k++)
		for (int s = 0; s < a->slots[z[k].i] && t < ntasks; s++)
			map[t++] = z[k].i;
	free(c);
	free(z);
	return 0;
}

/* Geometric mapping, but never worse than Slurm's own block order under the
 * chosen metric: coordinates can mislead (a graph whose coordinates do not
 * follow its edges), and a placement tool must not make a job slower. */
static int place_geometric(const tp_graph *g, const tp_alloc *a,
			   const tp_place_opts *o, int32_t *map,
			   tp_geom_report *report, tp_error *err)
{
	tp_geom_report local;
	if (!report)
		report = &local;
	int rc = tp_geom_map(g, a, &o->geom, map, report, err);
	if (rc)
		return rc;
	int32_t n = g->ntasks;
	int32_t *block = tp__malloc_array((size_t)n, sizeof(int32_t));
	tp_congestion_ws *ws = NULL;
	if (!block || (o->geom.metric == TP_METRIC_CONGESTION &&
		       tp_congestion_ws_create(&ws, a->m, NULL))) {
		free(block);
		return tp_error_set(err, TP_ENOMEM, "geometric mapping: out of memory");
	}
	if (tp_map_block(a, n, block, NULL) == 0) {
		/* the search's best score is this metric of map, exactly */
		double sg = report->best_score;
		double sb = tp_metrics_score(g, a, block, o->geom.metric, ws);
		if (sb < sg) {
			memcpy(map, block, sizeof(int32_t) * (size_t)n);
			report->default_kept = true;
			report->best_score = sb;
			snprintf(report->best_desc, sizeof report->best_desc,
				 "Slurm's block order (better than every variant)");
		}
	}
	tp_congestion_ws_destroy(ws);
	free(block);
	return 0;
}

/* ---- candidates: graph and auto ---- */

enum cand_kind { C_BLOCK, C_ZORDER, C_GEOMETRIC, C_GREEDY, C_BIPART, C_MODCOLOR,
		 C_BLOCKS, C_HIER, C_HIER_COORDS };

static const char *const CAND_NAMES[] = { "block", "zorder", "geometric",
					  "greedy", "bipartition", "modcolor", "blocks",
					  "hierarchical", "hier-coords" };

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
 * predicted; on its trees it never wins. */
#define LANES_HOP_WEIGHT 1.0

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
	bool alt;            /* a candidate other than block has a result */
	tp_congestion_ws *cws;  /* the rule's congestion workspace */
	double t0;
	double score_ms;     /* the slowest scoring so far: kept for each next one */
	double reserve_ms;   /* kept from the constructions for refining the
				winner (auto_constructions) */
	int32_t *built;      /* by time: the winning construction before its
				refinement (lanes_stage), else NULL */
	int built_refined;   /* the candidate that refinement is */
	struct runner_up {   /* by time: the fastest constructions but the
				best, fastest first (lanes_stage's other
				starts) */
		int32_t *map;
		int idx;
	} runner[LANES_RUNNERS];
	int nrunners;
	/* the winner's refinement made while the last constructions ran
	 * (run_side_by_side), for refine_from */
	struct spec_refine {
		int32_t *map;
		int idx;             /* the candidate refined */
		bool ready;          /* refined without error */
		int64_t moves;
		double ms;
	} spec;
	bool greedy_last;    /* tp__place_ex_greedy_last: greedy starts once
				the others are built, and ends before the
				refinement begun beside it does */
	/* block's score, being computed on a second thread (block_async) */
	pthread_t scorer;
	bool scoring;
	double async_ms;
} cand_run;

/* Bytes of one mapping (at least one entry: malloc and memcpy of 0). */
static size_t map_bytes(const cand_run *r)
{
	return sizeof(int32_t) * (size_t)(r->g->ntasks > 0 ? r->g->ntasks : 1);
}

static double remaining_ms(const cand_run *r)
{
	double b = r->o->geom.time_budget_ms;
	if (b <= 0)
		return 0;   /* no limit */
	double left = b - (tp__now_ms() - r->t0);
	return left > 1e-3 ? left : 1e-3;
}

static bool out_of_time(const cand_run *r)
{
	double b = r->o->geom.time_budget_ms;
	return b > 0 && tp__now_ms() - r->t0 >= b;
}

/* Greedy growth costs at least this much per task and, for its k-d tree
 * of the nodes, per node (set well below what it measures, 1 to 4.6 us a
 * task and 0.45 a node on tori, so that a run that fits is not refused).
 * Its set-up cannot stop half-way: counted at a tenth of this, a 318k-task
 * launch started it and lost 110 ms of its 300 to a greedy that could not
 * finish. */
#define GREEDY_US_PER_TASK 0.5
#define GREEDY_US_PER_NODE 0.3

/* Z-order sorts the nodes' keys, at about this cost per node (the low end
 * of what it measures on tori and dragonflies).  Unbounded, it ran
 * whenever geometric finished early and overran the budget; estimated at
 * half this, it still started when it could not finish. */
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

/* Wait for block's score, if it is being computed: every comparison and
 * every reserve for a scoring needs it. */
static void settle(cand_run *r)
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
static bool fits(cand_run *r, tp_place_candidate *c, double cost_ms)
{
	settle(r);
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
static double step_budget(const cand_run *r)
{
	if (r->o->geom.time_budget_ms <= 0)
		return 0;   /* no limit */
	double left = remaining_ms(r) - r->score_ms - r->reserve_ms;
	return left > 1e-3 ? left : 1e-3;
}

/* Score r->trial into c, timing it for the next candidates' reserve. */
static void score_trial(cand_run *r, tp_place_candidate *c)
{
	double t = tp__now_ms();
	c->score = tp_metrics_score(r->g, r->a, r->trial, r->rep->metric, r->ws);
	double ms = tp__now_ms() - t;
	if (ms > r->score_ms)
		r->score_ms = ms;
}

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
static bool congestion_of(cand_run *r, tp_place_candidate *c,
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

/* A candidate this far above the best in hop-bytes is not modelled: it
 * loses (the quick filter before the model). */
#define PREDICT_FILTER_HOPS 2.0

/* The predicted exchange time of map into c (once).  False when it cannot
 * be had (out of memory, past the budget). */
/* The threads the stages may run on: --threads, else one a CPU. */
static int run_threads(const cand_run *r)
{
	return r->o->geom.nthreads > 0 ? r->o->geom.nthreads : tp__cpus();
}

static bool predicted_of(cand_run *r, tp_place_candidate *c, const int32_t *map)
{
	if (c->has_predicted)
		return true;
	if (out_of_time(r) || !tp__predict_affordable(r->g, r->a,
						       r->o->geom.time_budget_ms > 0
						       ? remaining_ms(r) : 0))
		return false;
	tp_prediction p;
	if (tp__predict_launch(r->g, r->a, map, r->o->geom.time_budget_ms > 0, &p))
		return false;
	c->predicted_us = p.exchange_us;
	c->predicted_bound = p.bound_only;
	c->has_predicted = true;
	return true;
}

/* Is hop-bytes a at most share above b? */
static bool within(double a, double b, double share)
{
	return a <= (1 + share) * b + 1e-12 * fabs(b);
}

/* The auto rule (place.h): candidate c against the best so far, both by
 * hop-bytes and, where it can decide, by their maximum congestion. */
static bool rule_better(cand_run *r, tp_place_candidate *c, bool ties_win)
{
	tp_place_candidate *b = &r->rep->cand[r->best_idx];
	double hc = c->score, hb = r->best_score;
	const double S = TP_PLACE_CONGESTION_SHARE;
	bool by_hops = ties_win ? hc <= hb : hc < hb;
	/* far apart in hop-bytes: congestion cannot overturn them */
	if (!within(hc, hb, S) || !within(hb, hc, S))
		return by_hops;
	if (!congestion_of(r, c, r->trial) || !congestion_of(r, b, r->best))
		return by_hops;
	double cc = c->congestion, cb = b->congestion;
	if (cc <= (1 - S) * cb)
		return true;
	if (cb <= (1 - S) * cc)
		return false;
	if (fabs(hc - hb) <= TP_PLACE_EQUAL_HOPS * fmax(hc, hb) && cc != cb)
		return cc < cb;
	return by_hops;
}

/* auto by predicted time: c (in r->trial) against the best.  1: c is
 * better, 0: it is not, -1: the times do not decide.  A candidate far
 * above in hop-bytes loses unmodelled; otherwise the lower predicted time
 * wins, unless within TP__PREDICT_TIE_SHARE (then the hop-bytes rule
 * decides), or when either cannot be predicted. */
static int time_verdict(cand_run *r, tp_place_candidate *c)
{
	tp_place_candidate *b = &r->rep->cand[r->best_idx];
	if (c->score > PREDICT_FILTER_HOPS * r->best_score && r->best_score > 0)
		return 0;
	if (!predicted_of(r, c, r->trial) || !predicted_of(r, b, r->best))
		return -1;
	double pc = c->predicted_us, pb = b->predicted_us;
	if (pc < (1 - TP__PREDICT_TIE_SHARE) * pb)
		return 1;
	if (pc > (1 + TP__PREDICT_TIE_SHARE) * pb)
		return 0;
	return -1;
}

/* Candidate c (its mapping in r->trial) against the best so far: by the
 * rank option first when given (relative tolerance 1e-9), then by the
 * metric, or the auto rule; strictly better, or also equal when
 * ties_win. */
static bool better(cand_run *r, tp_place_candidate *c, bool ties_win)
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
static void keep_best(cand_run *r, int idx)
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
static void keep_runner(cand_run *r, int idx, const int32_t *map)
{
	const tp_place_candidate *c = &r->rep->cand[idx];
	if (!r->by_time || !c->has_predicted)
		return;
	int at = r->nrunners;
	while (at > 0 && c->predicted_us <
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

/* Candidate k's construction into out (c's note says why when it does not
 * run: *skipped).  Reads r but changes nothing in it but rep->geom and
 * rep->have_geom (geometric's), so that candidates can run side by side
 * (run_side_by_side).  Returns the mapper's code, its message in e. */
static int construct(cand_run *r, enum cand_kind k, bool force,
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
			go.time_budget_ms = step_budget(r) / 3;
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
		go.time_budget_ms = force ? 0 : step_budget(r);
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
 * has it), and kept when strictly better than the best so far (ties keep
 * the earlier one).  Only out-of-memory is an error. */
/* Did candidate k's construction score its result with the metric?  The
 * geometric search scores exactly with its own (one hop-bytes pass over
 * the graph saved). */
static bool scored_by_search(const cand_run *r, enum cand_kind k)
{
	return k == C_GEOMETRIC && r->o->geom.metric == r->rep->metric;
}

static int finish(cand_run *r, enum cand_kind k, int idx, int rc,
		  const tp_error *e, const double *score, tp_error *err)
{
	tp_place_report *rep = r->rep;
	tp_place_candidate *c = &rep->cand[idx];
	settle(r);
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
	if (scored_by_search(r, k))
		c->score = rep->geom.best_score;
	else if (score)   /* scored beside its construction */
		c->score = *score;
	else
		score_trial(r, c);
	if (r->o->rank)
		c->rank = r->o->rank(r->trial, r->o->rank_arg);
	bool wins = rep->best < 0 || better(r, c, false);
	if (wins && rep->best >= 0)
		keep_runner(r, rep->best, r->best);
	else if (!wins)
		keep_runner(r, idx, r->trial);
	if (wins)
		keep_best(r, idx);
	return 0;
}

static tp_place_candidate *new_candidate(tp_place_report *rep, enum cand_kind k)
{
	tp_place_candidate *c = &rep->cand[rep->ncandidates++];
	memset(c, 0, sizeof *c);
	snprintf(c->name, sizeof c->name, "%s", CAND_NAMES[k]);
	return c;
}

/* Run one candidate into r->trial, score it and keep it when strictly better
 * than the best so far (ties keep the earlier one).  Only out-of-memory is an
 * error; a candidate that cannot run is recorded as skipped. */
static int run_candidate(cand_run *r, enum cand_kind k, bool force,
			 tp_error *err)
{
	tp_place_report *rep = r->rep;
	tp_place_candidate *c = new_candidate(rep, k);
	int idx = rep->ncandidates - 1;
	if (!force && !fits(r, c, cost_estimate(r, k)))
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
		return finish(r, k, idx, rc, &e, NULL, err);
	}
	bool skipped;
	int rc = construct(r, k, force, c, r->trial, &e, &skipped);
	c->ms = tp__now_ms() - t;
	if (skipped)
		return 0;
	if (rc && force && k == C_HIER)
		return tp_error_set(err, rc, "%s", e.msg);
	return finish(r, k, idx, rc, &e, NULL, err);
}

/* z-order knows nothing of the pattern: where the tasks have coordinates
 * and geometric has mapped them, it scores 2-7 times worse on every
 * benchmark.  Under a budget it is then skipped, and its time (20-30 ms
 * on 80k nodes) goes to the refinement; without one it runs. */
static int zorder_after_geometric(cand_run *r, tp_error *err)
{
	if (r->o->geom.time_budget_ms <= 0 || !r->rep->have_geom)
		return run_candidate(r, C_ZORDER, false, err);
	tp_place_candidate *c = new_candidate(r->rep, C_ZORDER);
	snprintf(c->note, sizeof c->note, "skipped: geometric has mapped the "
		 "tasks' coordinates");
	return 0;
}

/* Candidates side by side, without a budget: what each builds does not
 * depend on the others, so they run at once, each into a mapping of its
 * own (the geometric search on its own threads besides) and scored there,
 * and are then compared in their order, as one after the other: the same
 * result.  The candidates that call METIS share one thread, in order:
 * METIS 5.1 draws from the C library's rand(), one state for the process,
 * so two calls at once take each other's numbers and their results would
 * depend on timing (seen: three runs, three bipartitions).
 *
 * Once the lanes still running hold only one-thread constructions (greedy
 * growth, z-order, METIS's) and CPUs are idle, the best construction so
 * far is refined on them meanwhile (speculation): the refinement stage
 * takes that result when the same construction wins after all, which is
 * the mapping refining it then would give (the refinement's result does
 * not depend on its threads), and refines the winner itself otherwise.
 * On many cores the 6-D half machine's greedy growth (1.3 s, one thread)
 * ends last, and the refinement no longer waits for it. */
#define SIDE_MAX 8

struct side_run {
	cand_run *r;
	enum cand_kind k;
	int idx;
	int32_t *map;
	int rc;
	bool skipped;
	bool done;           /* built (read and written under side_sync's lock) */
	bool scored;         /* score holds the metric's score of map */
	double score;
	tp_error e;
};

/* The lanes' progress, for the speculation. */
struct side_sync {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int running;         /* lanes not done */
	int wide;            /* lanes with a many-thread construction to come */
	bool wide_done;      /* wide reached 0: a held greedy goes on */
};

struct side_lane {
	struct side_run *run[SIDE_MAX];
	int n;
	pthread_t th;
	bool started;
	struct side_sync *sync;
};

static bool uses_metis(enum cand_kind k)
{
	return k == C_HIER || k == C_BLOCKS;
}

/* Does candidate k run on threads of its own? */
static bool many_threads(enum cand_kind k)
{
	return k == C_GEOMETRIC || k == C_BIPART;
}

static bool lane_wide_from(const struct side_lane *l, int i)
{
	for (; i < l->n; i++)
		if (many_threads(l->run[i]->k))
			return true;
	return false;
}

static void *side_lane_run(void *arg)
{
	struct side_lane *l = arg;
	struct side_sync *y = l->sync;
	for (int i = 0; i < l->n; i++) {
		struct side_run *s = l->run[i];
		cand_run *r = s->r;
		if (s->k == C_GREEDY && r->greedy_last) {
			pthread_mutex_lock(&y->mu);
			while (!y->wide_done)
				pthread_cond_wait(&y->cv, &y->mu);
			pthread_mutex_unlock(&y->mu);
		}
		double t = tp__now_ms();
		tp_error_clear(&s->e);
		tp_place_candidate *c = &r->rep->cand[s->idx];
		s->rc = construct(r, s->k, false, c, s->map, &s->e, &s->skipped);
		c->ms = tp__now_ms() - t;
		/* scored here, side by side: geometric's search scored its
		 * own; hop-bytes read the graph only */
		if (!s->rc && !s->skipped && scored_by_search(r, s->k)) {
			s->score = r->rep->geom.best_score;
			s->scored = true;
		} else if (!s->rc && !s->skipped &&
			   r->rep->metric == TP_METRIC_HOP_BYTES) {
			s->score = tp_metrics_score(r->g, r->a, s->map,
						    TP_METRIC_HOP_BYTES, NULL);
			s->scored = true;
		}
		pthread_mutex_lock(&y->mu);
		s->done = true;
		if (many_threads(s->k) && !lane_wide_from(l, i + 1))
			y->wide--;
		if (i == l->n - 1)
			y->running--;
		pthread_cond_broadcast(&y->cv);
		pthread_mutex_unlock(&y->mu);
	}
	return NULL;
}

/* The speculation (above): of the constructions done (as the lanes' lock
 * last showed them), the one of least score, when below the best before
 * the lanes (Slurm's block order), refined on `threads` threads into
 * r->spec. */
static void speculate(cand_run *r, const struct side_run *run, const bool *done,
		      int nk, int threads)
{
	/* the winner is foreseen by hop-bytes alone: not when predicted
	 * times or the caller's rank choose it */
	if (r->o->graph.refine_passes <= 0 || r->rep->best < 0 ||
	    r->rep->metric != TP_METRIC_HOP_BYTES || r->by_time || r->o->rank)
		return;
	int idx = -1;
	const int32_t *start = NULL;
	double best = r->best_score;
	for (int i = 0; i < nk; i++) {
		if (done[i] && run[i].scored && run[i].score < best) {
			best = run[i].score;
			idx = run[i].idx;
			start = run[i].map;
		}
	}
	if (idx < 0)
		return;   /* no construction yet better than block */
	struct spec_refine *sp = &r->spec;
	sp->map = tp__malloc_array((size_t)r->g->ntasks + 1, sizeof(int32_t));
	if (!sp->map)
		return;   /* the refinement stage refines in its turn */
	memcpy(sp->map, start, map_bytes(r));
	tp_graphmap_opts go = r->o->graph;
	go.time_budget_ms = 0;   /* as refine_from without a budget */
	double t = tp__now_ms();
	/* failed, it is not used: the refinement stage refines in its turn */
	sp->ready = !tp__graphmap_refine_threads(r->g, r->a, &go, threads, sp->map,
						 &sp->moves, NULL);
	sp->ms = tp__now_ms() - t;
	sp->idx = idx;
}

/* Until every lane has ended. */
static void wait_lanes(struct side_sync *y)
{
	pthread_mutex_lock(&y->mu);
	while (y->running > 0)
		pthread_cond_wait(&y->cv, &y->mu);
	pthread_mutex_unlock(&y->mu);
}

static int run_side_by_side(cand_run *r, const enum cand_kind *ks, int nk,
			    int threads, tp_error *err)
{
	tp_place_report *rep = r->rep;
	struct side_run run[SIDE_MAX];
	struct side_lane lane[SIDE_MAX];
	struct side_sync y = { .running = 0, .wide = 0 };
	int nl = 0, metis_lane = -1, rc = 0;
	size_t bytes = map_bytes(r);
	memset(lane, 0, sizeof lane);
	settle(r);   /* block's score, before anything compares with it */
	nk = nk < SIDE_MAX ? nk : SIDE_MAX;
	for (int i = 0; i < nk; i++) {
		run[i] = (struct side_run){ .r = r, .k = ks[i], .map = NULL };
		new_candidate(rep, ks[i]);
		run[i].idx = rep->ncandidates - 1;
		run[i].map = malloc(bytes);
		if (!run[i].map) {
			for (int j = 0; j <= i; j++)
				free(run[j].map);
			return tp_error_set(err, TP_ENOMEM, "policy auto: out of memory");
		}
		int at = uses_metis(ks[i]) && metis_lane >= 0 ? metis_lane : nl++;
		if (uses_metis(ks[i]))
			metis_lane = at;
		lane[at].run[lane[at].n++] = &run[i];
	}
	pthread_mutex_init(&y.mu, NULL);
	pthread_cond_init(&y.cv, NULL);
	y.running = nl;
	for (int i = 0; i < nl; i++) {
		lane[i].sync = &y;
		y.wide += lane_wide_from(&lane[i], 0);
	}
	for (int i = 0; i < nl; i++)
		lane[i].started = !pthread_create(&lane[i].th, NULL, side_lane_run,
						  &lane[i]);
	/* a lane whose thread cannot start runs here, before the wait (a
	 * held greedy no longer waits then: nothing would release it) */
	for (int i = 0; i < nl; i++)
		if (!lane[i].started) {
			pthread_mutex_lock(&y.mu);
			y.wide_done = true;
			pthread_cond_broadcast(&y.cv);
			pthread_mutex_unlock(&y.mu);
			side_lane_run(&lane[i]);
		}
	bool tried = false;
	pthread_mutex_lock(&y.mu);
	while (y.running > 0) {
		if (y.wide == 0 && !y.wide_done) {   /* a held greedy goes on */
			y.wide_done = true;
			pthread_cond_broadcast(&y.cv);
		}
		int idle = threads - y.running;
		if (!tried && y.wide == 0 && idle > 0) {
			bool done[SIDE_MAX];
			for (int i = 0; i < nk; i++)
				done[i] = run[i].done;
			tried = true;
			pthread_mutex_unlock(&y.mu);
			speculate(r, run, done, nk, idle);
			if (r->greedy_last)   /* the test's: greedy ends first */
				wait_lanes(&y);
			pthread_mutex_lock(&y.mu);
			/* lanes may have ended meanwhile, the last one too:
			 * their signals came while nobody waited */
			continue;
		}
		pthread_cond_wait(&y.cv, &y.mu);
	}
	pthread_mutex_unlock(&y.mu);
	for (int i = 0; i < nl; i++)
		if (lane[i].started)
			pthread_join(lane[i].th, NULL);
	pthread_cond_destroy(&y.cv);
	pthread_mutex_destroy(&y.mu);
	for (int i = 0; i < nk && !rc; i++) {
		if (run[i].skipped)
			continue;
		memcpy(r->trial, run[i].map, bytes);
		rc = finish(r, run[i].k, run[i].idx, run[i].rc, &run[i].e,
			    run[i].scored ? &run[i].score : NULL, err);
	}
	for (int i = 0; i < nk; i++)
		free(run[i].map);
	return rc;
}

/* A stage's candidate c, its mapping in r->trial: scored (and ranked),
 * and kept as the best when it changed its start and is better. */
static void judge_stage(cand_run *r, tp_place_candidate *c, bool changed,
			bool ties_win)
{
	score_trial(r, c);
	if (r->o->rank)
		c->rank = r->o->rank(r->trial, r->o->rank_arg);
	if (changed && better(r, c, ties_win))
		keep_best(r, (int)(c - r->rep->cand));
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
	 * The tables by the entry, its start's scoring on top (fits adds the
	 * scoring after it) */
	double setup = tp__refine_setup_ms(r->g);
	if (!fits(r, c, setup + r->score_ms))
		return 0;
	double t = tp__now_ms();
	tp_graphmap_opts go = r->o->graph;
	go.time_budget_ms = step_budget(r);
	tp_error e;
	tp_error_clear(&e);
	int64_t moves = 0, cmoves = 0;
	int rc;
	const struct spec_refine *sp = &r->spec;
	bool early = sp->ready && start == r->best && sp->idx == rep->best;
	if (early) {
		/* refined already, from this start (run_side_by_side) */
		memcpy(r->trial, sp->map, map_bytes(r));
		moves = sp->moves;
		rc = 0;
		t -= sp->ms;
	} else {
		memmove(r->trial, start, map_bytes(r));
		rc = tp__graphmap_refine_threads(r->g, r->a, &go, r->o->geom.nthreads,
						 r->trial, &moves, &e);
	}
	/* under the congestion metric the maximum goes down whatever it
	 * costs in hop-bytes; under the auto rule only at no cost in
	 * hop-bytes (the hop-bytes refinement has done what it could) */
	go.congestion_keep_hops = rep->metric != TP_METRIC_CONGESTION;
	/* what the hop-bytes refinement left, not the budget again; the
	 * congestion refinement routes every message before its first move
	 * (its tables and that: long on a large graph, and once started with
	 * little time left), so it starts only when that set-up fits */
	go.time_budget_ms = step_budget(r);
	if (!rc && (rep->metric == TP_METRIC_CONGESTION || r->rule) &&
	    !out_of_time(r) &&
	    (go.time_budget_ms <= 0 || go.time_budget_ms >= setup))
		rc = tp_graphmap_refine_congestion(r->g, r->a, &go, r->trial,
						   &cmoves, &e);
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
		 early ? ", begun before the constructions ended" : "");
	/* a refinement that moved nothing is its start: the start keeps the
	 * credit (ties otherwise go to the refined mapping) */
	judge_stage(r, c, moves + cmoves > 0, true);
	return 0;
}

/* The lane refinement from start into r->trial: 0 and its moves, or the
 * refinement's code (its message in c's note, or in err when out of
 * memory). */
static int lanes_from(cand_run *r, tp_place_candidate *c, const int32_t *start,
		      double hop_weight, int64_t *moves, tp_error *err)
{
	memcpy(r->trial, start, map_bytes(r));
	tp_graphmap_opts go = r->o->graph;
	go.time_budget_ms = step_budget(r);
	go.congestion_keep_hops = false;
	tp_error e;
	tp_error_clear(&e);
	*moves = 0;
	int rc = tp__graphmap_refine_lanes_hops(r->g, r->a, &go, hop_weight, r->trial,
						moves, &e);
	if (rc == TP_ENOMEM)
		tp_error_set(err, rc, "%s", e.msg);
	else if (rc)
		snprintf(c->note, sizeof c->note, "failed: %.70s", e.msg);
	return rc;
}

/* Another start of the lane refinement (lanes_stage), when there is time
 * for it: true when it is predicted faster than what r->trial holds (then
 * it is in r->trial).  Either way c holds the prediction of what is in
 * r->trial.  *rc: out of memory only. */
static bool lanes_other_start(cand_run *r, tp_place_candidate *c,
			      const int32_t *start, double hop_weight,
			      double setup, int64_t *moves, int *rc, tp_error *err)
{
	if (out_of_time(r) || (r->o->geom.time_budget_ms > 0 &&
			       remaining_ms(r) < 2 * setup + r->score_ms) ||
	    !predicted_of(r, c, r->trial))
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
	bool faster = !e2 && predicted_of(r, c, r->trial) && c->predicted_us < p1;
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
	bool predicted;
	tp_prediction p;
};

struct lane_tries {
	const cand_run *r;
	struct lane_try *y;
};

static void lane_try_run(void *arg, int32_t i)
{
	struct lane_tries *ls = arg;
	const cand_run *r = ls->r;
	struct lane_try *y = &ls->y[i];
	memcpy(y->map, y->start, map_bytes(r));
	tp_graphmap_opts go = r->o->graph;
	go.time_budget_ms = 0;
	go.congestion_keep_hops = false;
	tp_error_clear(&y->err);
	y->rc = tp__graphmap_refine_lanes_hops(r->g, r->a, &go, y->hop_weight, y->map,
					       &y->moves, &y->err);
	y->predicted = !y->rc && !tp__predict_launch(r->g, r->a, y->map, false, &y->p);
}

/* Without a budget, the lane refinement's n starts (the first: the best)
 * run side by side and are then judged in order as lanes_other_start
 * judges them one by one: a start is kept when predicted faster than the
 * one kept so far.  The same result on any number of threads; *won: the
 * start kept, or -1 when the first failed (its note in c). */
static int lanes_side(cand_run *r, tp_place_candidate *c, const int32_t *const *start,
		      const double *hop_weight, int n, int *won, int64_t *moves,
		      tp_error *err)
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
		 * affordable (lanes_other_start, predicted_of) */
		if (!tp__predict_affordable(r->g, r->a, 0))
			n = 1;
		int threads = run_threads(r);
		tp__parallel_for(n, threads < n ? threads : n, lane_try_run,
				 &(struct lane_tries){ r, y });
	}
	*won = -1;
	for (int k = 0; !rc && k < n; k++) {
		if (y[k].rc == TP_ENOMEM) {
			rc = tp_error_set(err, TP_ENOMEM, "%s", y[k].err.msg);
			break;
		}
		if (k == 0 && y[k].rc) {
			snprintf(c->note, sizeof c->note, "failed: %.70s", y[k].err.msg);
			break;
		}
		if (k == 0 && !y[k].predicted)
			break;    /* lanes_other_start cannot judge the others */
		if (y[k].rc || !y[k].predicted ||
		    (k > 0 && !(y[k].p.exchange_us < c->predicted_us)))
			continue;
		*won = k;
		*moves = y[k].moves;
		c->predicted_us = y[k].p.exchange_us;
		c->predicted_bound = y[k].p.bound_only;
		c->has_predicted = true;
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
 * hop weight 0). */
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
	if (hop_weight == 0 && !memcmp(map, r->best, map_bytes(r)))
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
static int lanes_stage(cand_run *r, tp_error *err)
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
	if (!fits(r, c, setup))
		return 0;
	double t = tp__now_ms();
	int64_t moves = 0;
	bool side = r->o->geom.time_budget_ms <= 0;
	int rc = side ? TP_OK : lanes_from(r, c, r->best, 0, &moves, err);
	/* the other starts, in this order: the construction, the runners-up,
	 * then the best and its construction with long routes weighed */
	struct lane_start start[3 + LANES_RUNNERS];
	int ns = 0;
	const tp_place_candidate *b = &rep->cand[rep->best];
	if (built)
		ns = add_start(r, start, ns, built, 0, of);
	for (int k = 0; k < r->nrunners; k++)
		if (runner_worth(&rep->cand[r->runner[k].idx], b))
			ns = add_start(r, start, ns, r->runner[k].map, 0,
				       rep->cand[r->runner[k].idx].name);
	if (b->has_predicted && !b->predicted_bound) {
		ns = add_start(r, start, ns, r->best, LANES_HOP_WEIGHT, b->name);
		if (built)
			ns = add_start(r, start, ns, built, LANES_HOP_WEIGHT, of);
	}
	bool by_hops = false;
	if (side) {
		/* without a budget, every start at once (lanes_side) */
		const int32_t *maps[4 + LANES_RUNNERS] = { r->best };
		double hw[4 + LANES_RUNNERS] = { 0 };
		for (int k = 0; k < ns; k++) {
			maps[k + 1] = start[k].map;
			hw[k + 1] = start[k].hop_weight;
		}
		int won = -1;
		rc = lanes_side(r, c, maps, hw, ns + 1, &won, &moves, err);
		if (!rc && won < 0)
			rc = TP_EINVAL;    /* the first failed: its note says why */
		if (won > 0) {
			from = start[won - 1].name;
			by_hops = start[won - 1].hop_weight > 0;
		}
	}
	for (int k = 0; !side && k < ns && !rc; k++)
		if (lanes_other_start(r, c, start[k].map, start[k].hop_weight, setup,
				      &moves, &rc, err)) {
			from = start[k].name;
			by_hops = start[k].hop_weight > 0;
		}
	c->ms = tp__now_ms() - t;
	if (rc)
		return rc == TP_ENOMEM ? rc : 0;
	c->ran = true;
	/* named after the start that won */
	char won[sizeof c->name];
	construction_of(won, sizeof won, from);
	snprintf(c->name, sizeof c->name, "%.16s+lanes", won);
	snprintf(c->note, sizeof c->note, "%lld move%s from %s%s", (long long)moves,
		 moves == 1 ? "" : "s", from, by_hops ? ", long routes weighed" : "");
	judge_stage(r, c, moves > 0, false);
	return 0;
}

/* auto by predicted time, last: the best's nodes trade places for its
 * slowest messages, each trade judged by the model (tp__time_trades),
 * kept as "X+trades" when predicted faster.  Only where the best's time
 * was modelled in full: a bound does not tell the slowest messages. */
static int trades_stage(cand_run *r, tp_error *err)
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
	tp_place_candidate *c = &rep->cand[rep->ncandidates++];
	memset(c, 0, sizeof *c);
	snprintf(c->name, sizeof c->name, "%.16s+trades", of);
	if (!fits(r, c, 2 * r->score_ms))
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

/* The winner of the constructions, refined; in auto also Slurm's block
 * order when it scores within 10 % of the winner. */
static int refine_stage(cand_run *r, tp_error *err)
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
	}
	int rc = refine_from(r, r->best, won, err);
	if (rc || !auto_ || !strcmp(won, "block") || !rep->cand[0].ran ||
	    rep->cand[0].score > 1.1 * won_score)
		return rc;
	int32_t *start = tp__malloc_array((size_t)r->g->ntasks + 1, sizeof(int32_t));
	if (!start)
		return tp_error_set(err, TP_ENOMEM, "policy auto: out of memory");
	rc = tp_map_block(r->a, r->g->ntasks, start, err);
	if (!rc)
		rc = refine_from(r, start, "block", err);
	free(start);
	return rc;
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

/* The job's rules (job_map.c) judge the winner against Slurm's block order
 * (candidate 0) with the same rule: both congestions, where it can decide. */
static void rule_against_block(cand_run *r)
{
	tp_place_report *rep = r->rep;
	tp_place_candidate *w = &rep->cand[rep->best], *b = &rep->cand[0];
	if (rep->best == 0 || !b->ran || !within(w->score, b->score,
						 TP_PLACE_CONGESTION_SHARE) ||
	    !within(b->score, w->score, TP_PLACE_CONGESTION_SHARE))
		return;
	if (!congestion_of(r, w, r->best) ||
	    tp_map_block(r->a, r->g->ntasks, r->trial, NULL))
		return;
	congestion_of(r, b, r->trial);
}

static int place_candidates(const tp_graph *g, const tp_alloc *a,
			    const tp_place_opts *o, int32_t *map,
			    tp_place_report *rep, bool greedy_last, tp_error *err)
{
	int rc = check_fit(a, g->ntasks, err);
	if (rc)
		return rc;
	cand_run r;
	memset(&r, 0, sizeof r);
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
			rc = run_side_by_side(&r, ks, nk, threads, err);
		} else if (!rc) {
			rc = run_candidate(&r, C_GEOMETRIC, true, err);
			/* past a geometric result, half of what is left
			 * refines the winner: where the budget binds, the
			 * refinement gains more than the constructions that
			 * would fill it (a random half of a 6-D torus: 2 to
			 * 5 %, where greedy and bipartition do not finish) */
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
			    !(rc = run_candidate(&r, C_BIPART, false, err)) && groups)
				rc = run_candidate(&r, C_MODCOLOR, false, err);
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
		rc = refine_stage(&r, err);
	if (!rc && rep->best >= 0)
		rc = lanes_stage(&r, err);
	if (!rc && rep->best >= 0)
		rc = trades_stage(&r, err);
	if (!rc && rep->best < 0)
		rc = tp_error_set(err, TP_EINVAL, "policy %s: no candidate produced "
				  "a mapping (%s: %s)", tp_policy_name(o->policy),
				  rep->cand[0].name, rep->cand[0].note);
	settle(&r);   /* an error may have come first */
	if (!rc && (r.rule || r.by_time))
		rule_against_block(&r);
	tp_congestion_ws_destroy(r.ws);
	tp_congestion_ws_destroy(r.cws);
	free(r.trial);
	free(r.built);
	free(r.spec.map);
	for (int k = 0; k < r.nrunners; k++)
		free(r.runner[k].map);
	return rc;
}

static int place_ex(const tp_graph *g, const tp_alloc *a, const tp_place_opts *o,
		    int32_t *map, tp_place_report *report, bool greedy_last,
		    tp_error *err)
{
	tp_place_opts defaults;
	if (!o) {
		tp_place_opts_default(&defaults);
		o = &defaults;
	}
	tp_place_report local;
	tp_place_report *rep = report ? report : &local;
	memset(rep, 0, sizeof *rep);
	rep->policy = o->policy;
	rep->metric = o->geom.metric;
	rep->best = -1;
	double t0 = tp__now_ms();
	int32_t n = g->ntasks;
	int rc;
	switch (o->policy) {
	case TP_POLICY_GEOMETRIC:
		rc = place_geometric(g, a, o, map, &rep->geom, err);
		rep->have_geom = rc == 0;
		break;
	case TP_POLICY_NONE:
	case TP_POLICY_BLOCK:
		rc = tp_map_block(a, n, map, err);
		break;
	case TP_POLICY_CYCLIC:
		rc = tp_map_cyclic(a, n, map, err);
		break;
	case TP_POLICY_RANDOM:
		rc = tp_map_random(a, n, o->seed, map, err);
		break;
	case TP_POLICY_ZORDER:
		rc = tp_map_zorder(a, n, map, err);
		break;
	case TP_POLICY_MODCOLOR:
		rc = tp_graphmap_modcolor(g, a, &o->graph, map, err);
		break;
	case TP_POLICY_GRAPH:
	case TP_POLICY_AUTO:
	case TP_POLICY_HIERARCHICAL:
		rc = place_candidates(g, a, o, map, rep, greedy_last, err);
		break;
	default:
		rc = tp_error_set(err, TP_EINVAL, "unknown policy %d", (int)o->policy);
	}
	rep->elapsed_ms = tp__now_ms() - t0;
	return rc;
}

int tp_place_ex(const tp_graph *g, const tp_alloc *a, const tp_place_opts *o,
		int32_t *map, tp_place_report *report, tp_error *err)
{
	return place_ex(g, a, o, map, report, false, err);
}

int tp__place_ex_greedy_last(const tp_graph *g, const tp_alloc *a,
			     const tp_place_opts *o, int32_t *map,
			     tp_place_report *report, tp_error *err)
{
	return place_ex(g, a, o, map, report, true, err);
}

int tp_place(const tp_graph *g, const tp_alloc *a, const tp_place_opts *o,
	     int32_t *map, tp_geom_report *report, tp_error *err)
{
	tp_place_report rep;
	int rc = tp_place_ex(g, a, o, map, &rep, err);
	if (report) {
		if (rep.have_geom)
			*report = rep.geom;
		else
			memset(report, 0, sizeof *report);
	}
	return rc;
}
