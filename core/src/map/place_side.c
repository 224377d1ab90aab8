/* topoplace — the candidates side by side, without a budget: each
 * construction on its own lane, compared in order afterwards, the winner's
 * refinement started speculatively on idle CPUs. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "map/graphmap_internal.h"
#include "map/predict_internal.h"
#include "map/place_cand.h"
#include "pattern/pattern_internal.h"

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
	bool predicted;      /* p holds map's predicted time (predict_beside) */
	tp_prediction p;
	int32_t *refined;    /* geometric's refinement, filled (rp) beside it
				(geometric_beside); NULL: none */
	tp_prediction rp;
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
	/* tiles: auto's hierarchical inside */
	return k == C_HIER || k == C_BLOCKS || k == C_TILES;
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

/* Threads from which every construction is filled in its own lane, not
 * geometric's alone: on fewer the others' fillings would take CPUs from
 * the constructions for candidates the judgement may leave unfilled. */
#define FILL_BESIDE_THREADS 4

/* By predicted time, geometric's result is filled in its own lane, while
 * the others are built: it is nearly always the first judged, and its
 * filling, after them all, held up the rest (on default-speed.sh's
 * torus-4096, 300 ms of one CPU).  The same prediction the judgement
 * makes (tp__place_predicted_of), so the same result.  On
 * FILL_BESIDE_THREADS or more every construction is filled so, and the
 * judgement takes the filling where it asks for one (r->memo): judged one
 * after the other, the fillings of miniAMR's 512-rank trace on a 4:1
 * tree (seven, 2 s of a 16-CPU machine's 4.2) ran on one thread. */
static void predict_beside(struct side_run *s)
{
	cand_run *r = s->r;
	if (!r->by_time || r->o->geom.time_budget_ms > 0 ||
	    (s->k != C_GEOMETRIC && run_threads(r) < FILL_BESIDE_THREADS) ||
	    !tp__predict_affordable(r->g, r->a, 0))
		return;
	s->predicted = !tp__predict_launch(r->g, r->a, s->map, false, &s->p);
}

/* geometric_beside's two tasks: 0 fills geometric, 1 refines and fills
 * its refinement (r->spec, s->refined). */
static void geometric_task(void *arg, int32_t i)
{
	struct side_run *s = arg;
	cand_run *r = s->r;
	if (i == 0) {
		predict_beside(s);
		return;
	}
	struct spec_refine *sp = &r->spec;
	size_t bytes = map_bytes(r);
	sp->map = malloc(bytes);
	s->refined = malloc(bytes);
	sp->idx = s->idx;
	/* failed: refine_from makes it, or the filling, in its turn */
	if (!sp->map || !s->refined ||
	    !tp__place_refine_ahead(r, s->map, sp, s->refined, &s->rp,
				    run_threads(r) >= LANES_AHEAD_THREADS ? &r->lahead
									   : NULL,
				    NULL)) {
		free(s->refined);
		s->refined = NULL;
	}
}

/* Threads from which geometric's refinement is begun beside its filling
 * (geometric_beside): on two, the other constructions still hold the
 * second CPU. */
#define REFINE_BESIDE_THREADS 2

/* By predicted time without a budget, on REFINE_BESIDE_THREADS or more,
 * geometric's refinement (the one refine_from makes: hop-bytes, then the
 * auto rule's congestion) and its filling are made as soon as geometric is
 * built, beside geometric's own filling: geometric nearly always wins, and
 * these waited for the other constructions and for that filling first (on
 * 16 CPUs torus-4096 of default-speed.sh ran no faster than on 2: fillings
 * one after the other).  refine_from takes the hop-bytes refinement
 * (r->spec) and tp__place_predicted_of the filling (r->memo) only for the
 * same start and map: the same results, on any number of threads. */
static void geometric_beside(struct side_run *s)
{
	cand_run *r = s->r;
	if (s->k != C_GEOMETRIC || !r->by_time || r->o->geom.time_budget_ms > 0 ||
	    r->o->graph.refine_passes <= 0 || r->o->rank ||
	    run_threads(r) < REFINE_BESIDE_THREADS ||
	    !tp__predict_affordable(r->g, r->a, 0)) {
		predict_beside(s);
		return;
	}
	/* geometric's filling and its refinement's, side by side */
	tp__parallel_for(2, 2, geometric_task, s);
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
		s->rc = tp__place_construct(r, s->k, false, c, s->map, &s->e, &s->skipped);
		c->ms = tp__now_ms() - t;
		/* scored here, side by side: geometric's search scored its
		 * own; hop-bytes read the graph only */
		if (!s->rc && !s->skipped && tp__place_scored_by_search(r, s->k)) {
			s->score = r->rep->geom.best_score;
			s->scored = true;
		} else if (!s->rc && !s->skipped &&
			   r->rep->metric == TP_METRIC_HOP_BYTES) {
			s->score = tp_metrics_score(r->g, r->a, s->map,
						    TP_METRIC_HOP_BYTES, NULL);
			s->scored = true;
		}
		if (!s->rc && !s->skipped)
			geometric_beside(s);
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
		return;   /* no construction yet tp__place_better than block */
	struct spec_refine *sp = &r->spec;
	sp->map = tp__malloc_array((size_t)r->g->ntasks + 1, sizeof(int32_t));
	if (!sp->map)
		return;   /* the refinement stage refines in its turn */
	memcpy(sp->map, start, map_bytes(r));
	tp_graphmap_opts go = r->o->graph;
	go.time_budget_ms = 0;   /* as refine_from without a budget */
	double t = tp__now_ms();
	/* failed, it is not used: the refinement stage refines in its turn */
	sp->ready = !tp__graphmap_refine_threads(r->g, r->a, &go, threads, NULL,
						 sp->map, &sp->moves, NULL);
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

int tp__place_run_side_by_side(cand_run *r, const enum cand_kind *ks, int nk,
			    int threads, tp_error *err)
{
	tp_place_report *rep = r->rep;
	struct side_run run[SIDE_MAX];
	struct side_lane lane[SIDE_MAX];
	struct side_sync y = { .running = 0, .wide = 0 };
	int nl = 0, metis_lane = -1, rc = 0;
	size_t bytes = map_bytes(r);
	memset(lane, 0, sizeof lane);
	tp__place_settle(r);   /* block's score, before anything compares with it */
	nk = nk < SIDE_MAX ? nk : SIDE_MAX;
	for (int i = 0; i < nk; i++) {
		run[i] = (struct side_run){ .r = r, .k = ks[i], .map = NULL };
		tp__place_new_candidate(rep, ks[i]);
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
	/* geometric's lane starts begun while the others are judged
	 * (place_refine.c): it nearly always wins where it is faster than
	 * the best before these constructions (was), and the judgement leaves
	 * CPUs idle while it fills a close loser (a LULESH-like trace on a
	 * tree, where hier-coords was faster: four starts begun for nothing,
	 * 6 % more CPU) */
	const tp_place_candidate *was = rep->best >= 0 ? &rep->cand[r->best_idx] : NULL;
	/* the fillings made ahead, for the judgement to take where it asks */
	for (int i = 0; i < nk; i++) {
		if (run[i].k == C_GEOMETRIC && !run[i].skipped && !run[i].rc &&
		    run[i].predicted && run[i].refined &&
		    (!was || !was->has_predicted || was->predicted_bound ||
		     run[i].p.exchange_us < was->predicted_us))
			tp__place_spec_lanes_early(r, run[i].map,
						   run[i].rp.exchange_us < run[i].p.exchange_us
						   ? run[i].refined : NULL);
		if (!run[i].skipped && !run[i].rc && run[i].predicted && run[i].k != C_GEOMETRIC)
			tp__place_memo_add(r, run[i].map, &run[i].p);
		if (run[i].refined)
			tp__place_memo_add(r, run[i].refined, &run[i].rp);
	}
	/* the guessed winner's refinement and block's, on the CPU the
	 * judgement's first filling leaves (place_early.c): the maps in the
	 * running, the best before these constructions among them */
	const int32_t *maps[SIDE_MAX + 1];
	double scores[SIDE_MAX + 1], least = HUGE_VAL;
	int idx[SIDE_MAX + 1], nm = 0;
	for (int k = 0; k < run[0].idx; k++)
		if (rep->cand[k].ran)
			least = fmin(least, rep->cand[k].score);
	if (rep->best > 0) {
		maps[nm] = r->best;
		scores[nm] = r->best_score;
		idx[nm++] = rep->best;
	}
	for (int i = 0; i < nk; i++)
		if (!run[i].skipped && !run[i].rc && run[i].scored) {
			maps[nm] = run[i].map;
			scores[nm] = run[i].score;
			idx[nm++] = run[i].idx;
			least = fmin(least, run[i].score);
		}
	tp__place_early(r, maps, scores, idx, nm, least);
	for (int i = 0; i < nk && !rc; i++) {
		if (run[i].skipped)
			continue;
		memcpy(r->trial, run[i].map, bytes);
		if (run[i].predicted && run[i].k == C_GEOMETRIC)
			tp__place_take_prediction(&rep->cand[run[i].idx], &run[i].p);
		rc = tp__place_finish(r, run[i].k, run[i].idx, run[i].rc, &run[i].e,
			    run[i].scored ? &run[i].score : NULL, err);
	}
	for (int i = 0; i < nk; i++) {
		free(run[i].map);
		free(run[i].refined);
	}
	return rc;
}
