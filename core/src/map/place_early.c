/* topoplace — auto's refinements begun while the constructions are judged:
 * the winner as the exchanges' bounds guess it, then Slurm's block order
 * where the refinement stage would refine it beside that winner.  The
 * stage takes those it wants and stops the others. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "map/graphmap_internal.h"
#include "map/predict_internal.h"
#include "map/place_cand.h"
#include "input/alloc_internal.h"
#include "pattern/pattern_internal.h"

/* On two or three threads the judgement of the constructions leaves a CPU
 * idle: on a captured all-to-all its first filling runs alone (0.7 s on
 * fftMPI's 512-rank trace on a 16^3 torus), and it decides nothing but that
 * the run is judged on the exchanges' bounds.  The refinement stage then
 * refines the winner and, where block's hop-bytes are within
 * BLOCK_REFINE_SHARE of the winner's, block's order (0.5 s each there, a
 * team of two threads no faster than one).  In turn, until the stage
 * begins:
 *   - block's order, where its hop-bytes are within that share of the
 *     least construction's: the stage refines it whoever wins;
 *   - the winner a judgement on the exchanges' bounds would keep, each
 *     construction against the best so far as the verdicts go (the
 *     lower bound; tied, the auto rule's hop-bytes and congestion: on a
 *     captured all-to-all on a tree every construction tied, and
 *     congestion chose);
 *   - block's order, where it is within the share of that winner's.
 * It named the winner on the ten fftMPI tori it was tried on.  A wrong
 * guess costs the CPU that was idle: the stage stops what it does not
 * want (a refinement stopped ends as one past its budget) and refines the
 * winner itself.  The bounds come after block's refinement where that is
 * wanted anyway: on the all-to-all they took long enough that block's was
 * still under way when the stage began.  Whether the guess's refinements
 * were made here depends on when the stage begins (their notes say so);
 * the maps do not. */

/* Then, once its refinements are made (or none is wanted) and while the
 * judgement goes on, the constructions' fillings the judgement will ask
 * for, in its order: a filling taken by whichever thread comes to it
 * first, the judgement waiting for one under way here.  Two threads
 * judged one after the other on one CPU (a 4,096-task mesh graph on a
 * torus: five fillings of 50 ms while the other CPU was idle; fftMPI's
 * 512-rank trace on a 4:1 tree: 0.3 s).  A filling made here is the
 * whole one, as those made beside their constructions on
 * FILL_BESIDE_THREADS (place_side.c): the judgement takes it as it takes
 * those (r->memo), and the choices are the same.  None once the
 * judgement goes by the exchanges' bounds (tp__place_early_no_fills) or
 * the lane starts hold the CPU. */
enum fill_state { FILL_FREE, FILL_BUSY, FILL_DONE, FILL_TAKEN };

struct early_fill {
	int k;                   /* its map (map_at) */
	enum fill_state state;   /* under mu */
	bool ok;                 /* filled: p */
	tp_prediction p;
};

/* One start refined ahead. */
struct early_item {
	int32_t *start;
	struct spec_refine sp;   /* its refinement, for refine_from */
	int32_t *final;          /* after the congestion step */
	atomic_bool stop;        /* not wanted: ends it */
	bool block;              /* block's order */
	bool done;               /* refined or stopped (under mu) */
};

struct early_run {
	pthread_t th;
	const cand_run *r;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int32_t *maps;           /* the constructions in the running, n x ntasks,
				    block's order first */
	double *score;           /* their hop-bytes */
	int *idx;                /* their candidates */
	int n;
	int spec_idx;            /* the candidate refined beside its filling
				    already (r->spec), or -1 */
	bool guess;              /* the winner guessed too: no lane starts
				    hold the CPU the judgement leaves */
	struct early_item item[2];   /* in the order they were begun */
	int nitems;              /* begun (under mu) */
	bool closed;             /* the stage has begun: nothing more (under mu) */
	struct early_fill fill[SIDE_MAX + 2];   /* in the judgement's order:
						   block, the best before, the
						   constructions */
	int nfill;
	bool no_fills;           /* judged on bounds: none (under mu) */
	double best_us;          /* the judgement's best time so far (under
				    mu; HUGE_VAL: none) */
};

static int32_t *map_at(const struct early_run *e, int k)
{
	return e->maps + (size_t)k * (size_t)(e->r->g->ntasks > 0 ? e->r->g->ntasks : 1);
}

static bool closed(struct early_run *e)
{
	pthread_mutex_lock(&e->mu);
	bool c = e->closed;
	pthread_mutex_unlock(&e->mu);
	return c;
}

/* Map k's congestion into cong[k] once (-1: not yet); false when it
 * cannot be had. */
static bool congestion_at(struct early_run *e, int k, double *cong,
			  tp_congestion_ws **ws)
{
	if (cong[k] >= 0)
		return true;
	if (!*ws && tp_congestion_ws_create(ws, e->r->a->m, NULL))
		return false;
	cong[k] = tp_metrics_max_congestion(e->r->g, e->r->a, map_at(e, k), *ws, NULL);
	return cong[k] >= 0;
}

/* Would k beat best where their bounds tie?  The auto rule's verdict
 * (place_choice.c's rule_better), on congestions of its own.  -1 when a
 * congestion cannot be had. */
static int tie_verdict(struct early_run *e, int k, int best, double *cong,
		       tp_congestion_ws **ws)
{
	double hc = e->score[k], hb = e->score[best];
	bool by_hops = hc < hb;
	if (!e->r->rule || !rule_close(hc, hb))
		return by_hops;
	if (!congestion_at(e, k, cong, ws) || !congestion_at(e, best, cong, ws))
		return -1;
	return rule_by_congestion(hc, hb, cong[k], cong[best], by_hops);
}

/* The construction a judgement on bounds would keep, from the maps alone,
 * or -1 (a bound or congestion could not be had, or the stage has begun):
 * each in turn against the best so far, as place_choice.c's verdicts on
 * bounds: far above in hop-bytes it loses (PREDICT_FILTER_HOPS), the
 * lower bound wins, and bounds within TP__PREDICT_TIE_SHARE go to the
 * auto rule. */
static int guess_winner(struct early_run *e)
{
	const cand_run *r = e->r;
	double *lb = tp__malloc_array((size_t)e->n + 1, sizeof *lb);
	double *cong = tp__malloc_array((size_t)e->n + 1, sizeof *cong);
	tp_congestion_ws *ws = NULL;
	int best = lb && cong ? 0 : -1;
	for (int k = 0; best >= 0 && k < e->n; k++) {
		cong[k] = -1;
		if (closed(e) ||
		    (k > 0 && e->score[k] > PREDICT_FILTER_HOPS * e->score[best]))
			continue;
		if (tp__predict_launch_lower(r->g, r->a, map_at(e, k), false, &lb[k])) {
			best = -1;
			break;
		}
		if (k == 0)
			continue;
		int v = lb[k] < (1 - TP__PREDICT_TIE_SHARE) * lb[best] ? 1
			: lb[k] > (1 + TP__PREDICT_TIE_SHARE) * lb[best] ? 0
			: tie_verdict(e, k, best, cong, &ws);
		if (v < 0)
			best = -1;
		else if (v)
			best = k;
	}
	if (closed(e))
		best = -1;
	if (ws)
		tp_congestion_ws_destroy(ws);
	free(lb);
	free(cong);
	return best;
}

/* Map k the next item (block: it is block's order), unless the stage has
 * begun or memory is short: the item, or NULL. */
static struct early_item *add_item(struct early_run *e, int k, bool block)
{
	size_t bytes = map_bytes(e->r);
	int32_t *start = malloc(bytes), *sp = malloc(bytes), *final = malloc(bytes);
	struct early_item *it = NULL;
	pthread_mutex_lock(&e->mu);
	if (start && sp && final && !e->closed && e->nitems < 2) {
		it = &e->item[e->nitems++];
		memcpy(start, map_at(e, k), bytes);
		it->start = start;
		it->sp.map = sp;
		it->final = final;
		it->block = block;
	}
	pthread_mutex_unlock(&e->mu);
	if (!it) {
		free(start);
		free(sp);
		free(final);
	}
	return it;
}

static void refine_item(struct early_run *e, struct early_item *it)
{
	if (!it)
		return;
	tp__place_refine_ahead(e->r, it->start, &it->sp, it->final, NULL, NULL, &it->stop);
	pthread_mutex_lock(&e->mu);
	it->done = true;
	pthread_cond_broadcast(&e->cv);
	pthread_mutex_unlock(&e->mu);
}

/* Would the judgement leave map k unfilled, as far as the fillings made
 * here and its best so far tell (fastest_us, HUGE_VAL: none)?  Far above
 * in hop-bytes, or its lower bound past the tie of the fastest
 * (place_choice.c's verdicts).  Only what is filled ahead depends on it,
 * not what is chosen: a pencil FFT's trace on a tree filled greedy's map
 * here, which the judgement leaves on its bound. */
static bool fill_unwanted(struct early_run *e, int k, double fastest_us)
{
	double least = HUGE_VAL, lower;
	for (int j = 0; j < e->n; j++)
		least = fmin(least, e->score[j]);
	if (least > 0 && e->score[k] > PREDICT_FILTER_HOPS * least)
		return true;
	return fastest_us < HUGE_VAL &&
	       !tp__predict_launch_lower(e->r->g, e->r->a, map_at(e, k), false, &lower) &&
	       lower > (1 + TP__PREDICT_TIE_SHARE) * fastest_us;
}

/* The fillings ahead, one after the other, while any is free and the
 * judgement goes on. */
static void fill_ahead(struct early_run *e)
{
	for (;;) {
		pthread_mutex_lock(&e->mu);
		struct early_fill *f = NULL;
		double fastest = e->best_us;
		for (int i = 0; i < e->nfill; i++) {
			if (e->fill[i].state == FILL_DONE && e->fill[i].ok)
				fastest = fmin(fastest, e->fill[i].p.exchange_us);
			if (!f && e->fill[i].state == FILL_FREE)
				f = &e->fill[i];
		}
		if (f && !e->closed && !e->no_fills)
			f->state = FILL_BUSY;
		else
			f = NULL;
		pthread_mutex_unlock(&e->mu);
		if (!f)
			return;
		if (fill_unwanted(e, f->k, fastest)) {
			pthread_mutex_lock(&e->mu);
			f->state = FILL_TAKEN;    /* the judgement fills it if it asks */
			pthread_cond_broadcast(&e->cv);
			pthread_mutex_unlock(&e->mu);
			continue;
		}
		tp_prediction p;
		bool ok = !tp__predict_launch(e->r->g, e->r->a, map_at(e, f->k), false, &p);
		pthread_mutex_lock(&e->mu);
		f->ok = ok;
		f->p = p;
		f->state = FILL_DONE;
		pthread_cond_broadcast(&e->cv);
		pthread_mutex_unlock(&e->mu);
	}
}

static void *early_main(void *arg)
{
	struct early_run *e = arg;
	/* block's, wanted whoever wins, added before the thread began */
	bool block = e->nitems > 0;
	if (block)
		refine_item(e, &e->item[0]);
	int w = e->guess ? guess_winner(e) : -1;
	/* a construction may give block's order itself */
	if (w > 0 && !memcmp(map_at(e, w), map_at(e, 0), map_bytes(e->r)))
		w = 0;
	if (w > 0 && e->idx[w] != e->spec_idx)
		refine_item(e, add_item(e, w, false));
	if (w >= 0 && !block && (w == 0 || e->score[0] <= BLOCK_REFINE_SHARE * e->score[w]))
		refine_item(e, add_item(e, 0, true));
	if (e->guess)
		fill_ahead(e);
	return NULL;
}

static void early_free(struct early_run *e)
{
	for (int k = 0; k < 2; k++) {
		free(e->item[k].start);
		free(e->item[k].sp.map);
		free(e->item[k].sp.stepped);
		free(e->item[k].final);
	}
	free(e->maps);
	free(e->score);
	free(e->idx);
	pthread_cond_destroy(&e->cv);
	pthread_mutex_destroy(&e->mu);
	free(e);
}

void tp__place_early(cand_run *r, const int32_t *const *maps, const double *score,
		     const int *idx, int n, double least)
{
	const tp_place_candidate *blk = &r->rep->cand[0];
	if (r->early || r->o->policy != TP_POLICY_AUTO || !r->by_time ||
	    r->o->geom.time_budget_ms > 0 || r->o->graph.refine_passes <= 0 ||
	    run_threads(r) < 2 || run_threads(r) >= BLOCK_AHEAD_THREADS || !blk->ran ||
	    tp_machine_has(r->a->m, TP_CAP_BLOCKS) || !tp__predict_affordable(r->g, r->a, 0))
		return;
	struct early_run *e = calloc(1, sizeof *e);
	if (!e)
		return;   /* refined in turn */
	size_t bytes = map_bytes(r);
	e->r = r;
	e->best_us = HUGE_VAL;
	e->spec_idx = r->spec.ready ? r->spec.idx : -1;
	/* geometric's lane starts (tp__place_spec_lanes_early) hold that CPU:
	 * its refinement is made beside its filling, and it nearly always
	 * wins there (torus-4096: the bounds took 3 % of the map's time) */
	e->guess = !r->slanes;
	pthread_mutex_init(&e->mu, NULL);
	pthread_cond_init(&e->cv, NULL);
	for (int k = 0; k < 2; k++)
		atomic_init(&e->item[k].stop, false);
	/* block's order first, then the others in the running */
	e->maps = tp__malloc_array((size_t)(n + 1), bytes);
	e->score = tp__malloc_array((size_t)(n + 1), sizeof *e->score);
	e->idx = tp__malloc_array((size_t)(n + 1), sizeof *e->idx);
	if (!e->maps || !e->score || !e->idx ||
	    tp_map_block(r->a, r->g->ntasks, e->maps, NULL)) {
		early_free(e);
		return;
	}
	e->score[0] = blk->score;
	e->idx[0] = 0;
	e->n = 1;
	for (int k = 0; k < n; k++)
		if (idx[k] != 0) {
			memcpy(map_at(e, e->n), maps[k], bytes);
			e->score[e->n] = score[k];
			e->idx[e->n++] = idx[k];
		}
	/* the fillings the judgement may ask for: those not made yet */
	for (int k = 0; k < e->n && e->guess && e->nfill < SIDE_MAX + 2; k++) {
		bool made = r->rep->cand[e->idx[k]].has_predicted;
		for (int j = 0; j < r->nmemo && !made; j++)
			made = !memcmp(map_at(e, k), r->memo[j].map, bytes);
		for (int j = 0; j < e->nfill && !made; j++)
			made = !memcmp(map_at(e, k), map_at(e, e->fill[j].k), bytes);
		if (!made)
			e->fill[e->nfill++] = (struct early_fill){ .k = k };
	}
	/* block's wanted whoever wins: begun however soon the stage comes */
	if (blk->score <= BLOCK_REFINE_SHARE * least)
		add_item(e, 0, true);
	if (pthread_create(&e->th, NULL, early_main, e)) {
		early_free(e);
		return;
	}
	r->early = e;
}

/* The item refining start, or NULL (under mu). */
static struct early_item *item_of(struct early_run *e, const int32_t *start)
{
	for (int k = 0; k < e->nitems; k++)
		if (!memcmp(e->item[k].start, start, map_bytes(e->r)))
			return &e->item[k];
	return NULL;
}

void tp__place_early_keep(cand_run *r, const int32_t *winner, bool block)
{
	struct early_run *e = r->early;
	if (!e)
		return;
	pthread_mutex_lock(&e->mu);
	e->closed = true;
	for (int k = 0; k < e->nitems; k++) {
		struct early_item *it = &e->item[k];
		if (!(it->block && block) && memcmp(it->start, winner, map_bytes(r)))
			atomic_store(&it->stop, true);
	}
	pthread_mutex_unlock(&e->mu);
}

const struct spec_refine *tp__place_early_take(cand_run *r, const int32_t *start)
{
	struct early_run *e = r->early;
	if (!e)
		return NULL;
	pthread_mutex_lock(&e->mu);
	struct early_item *it = item_of(e, start);
	while (it && !atomic_load(&it->stop) && !it->done)
		pthread_cond_wait(&e->cv, &e->mu);
	pthread_mutex_unlock(&e->mu);
	return it && !atomic_load(&it->stop) ? &it->sp : NULL;
}

/* The filling ahead of map, or NULL (under mu). */
static struct early_fill *fill_of(struct early_run *e, const int32_t *map)
{
	for (int i = 0; i < e->nfill; i++)
		if (!memcmp(map_at(e, e->fill[i].k), map, map_bytes(e->r)))
			return &e->fill[i];
	return NULL;
}

bool tp__place_early_filled(cand_run *r, const int32_t *map, tp_prediction *p)
{
	struct early_run *e = r->early;
	if (!e)
		return false;
	pthread_mutex_lock(&e->mu);
	struct early_fill *f = fill_of(e, map);
	while (f && f->state == FILL_BUSY)
		pthread_cond_wait(&e->cv, &e->mu);
	bool ok = f && f->state == FILL_DONE && f->ok;
	if (ok)
		*p = f->p;
	else if (f && f->state == FILL_FREE)
		f->state = FILL_TAKEN;    /* filled by the judgement */
	pthread_mutex_unlock(&e->mu);
	return ok;
}

void tp__place_early_leave(cand_run *r, const int32_t *map)
{
	struct early_run *e = r->early;
	if (!e)
		return;
	pthread_mutex_lock(&e->mu);
	struct early_fill *f = fill_of(e, map);
	if (f && f->state == FILL_FREE)
		f->state = FILL_TAKEN;
	pthread_mutex_unlock(&e->mu);
}

void tp__place_early_best(cand_run *r, double us)
{
	struct early_run *e = r->early;
	if (!e)
		return;
	pthread_mutex_lock(&e->mu);
	e->best_us = fmin(e->best_us, us);
	pthread_mutex_unlock(&e->mu);
}

void tp__place_early_no_fills(cand_run *r)
{
	struct early_run *e = r->early;
	if (!e)
		return;
	pthread_mutex_lock(&e->mu);
	e->no_fills = true;
	pthread_mutex_unlock(&e->mu);
}

bool tp__place_early_busy(cand_run *r)
{
	struct early_run *e = r->early;
	if (!e)
		return false;
	pthread_mutex_lock(&e->mu);
	bool busy = !e->closed;
	for (int k = 0; !busy && k < e->nitems; k++)
		busy = !e->item[k].done && !atomic_load(&e->item[k].stop);
	pthread_mutex_unlock(&e->mu);
	return busy;
}

void tp__place_early_end(cand_run *r)
{
	struct early_run *e = r->early;
	if (!e)
		return;
	pthread_mutex_lock(&e->mu);
	e->closed = true;
	for (int k = 0; k < 2; k++)
		atomic_store(&e->item[k].stop, true);
	pthread_mutex_unlock(&e->mu);
	pthread_join(e->th, NULL);
	early_free(e);
	r->early = NULL;
}
