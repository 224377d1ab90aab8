/* topoplace — geometric mapping, the search: running the variants' jobs
 * (scheduling, finalists, the report) and tp_geom_map.  See
 * <topoplace/geom.h> for the overview, geom_prepare.c for the set-up and
 * the variants' order, geom_score.c for a job's partitions and scoring,
 * geom_part.c for the partitions and geom_fold.c for folding.
 *
 * Variants.  Variant 0 cuts the longest extent on both sides at every level.
 * Variants 1.. pair a task dimension order with a machine dimension order
 * and reflection (numbered 1 + t * (machine variants) + m).  Then come the
 * folded embeddings (geom_fold.c) where they apply, then the blocked ones
 * (score_blocked).  A variant needs its node partition (per machine
 * variant: a split tree and the node of every leaf) and a task partition
 * (per task order and split tree).  With equal slots on every node all
 * split trees are the same, so the search costs about
 * (#machine variants) node partitions + (#task orders) task partitions and
 * one cheap scoring per variant.
 *
 * Anytime search.  Nothing is built before it is needed:
 *  - Order.  Variants are tried most promising first: folds (exact
 *    embeddings), blocked variants, then "longest task extent onto longest
 *    machine extent" (Deveci et al.): the task order and the machine
 *    order each sorted by decreasing extent, then the orders
 *    lexicographically further from that, unreflected before reflected.  The longest-extent variant comes
 *    first when the machine has more dimensions than the tasks (measured:
 *    on a 6-D torus it beats every fixed pairing by 20 %; on 3-D tori it is
 *    about 2x worse than the sorted pairing), else second.
 *  - Laziness.  Workers take jobs in that order: build a node partition,
 *    build a task partition, score a variant whose two partitions exist.  A
 *    worker may run ahead of the first unfinished variant by WINDOW
 *    variants.  With equal slots the split tree is known before any node is
 *    cut (predict_tree), so a variant's task and node partitions are built
 *    at the same time by two threads, and node partitions only check their
 *    tree against it.  A partition is freed once no variant left and no
 *    possible finalist needs it; at most TASKS_KEPT task partitions are held
 *    (least recently used ones are dropped and rebuilt if needed).
 *  - Sampling.  On graphs of more than 4 x SAMPLE_EDGES edges scored by
 *    hop-bytes, every variant is screened on the edges of every stride-th
 *    task; the FINALISTS best (and ties) are then scored exactly.
 *  - Budget.  Every job checks the clock before it starts, and partitions
 *    check it while they cut (every part of CLOCK_EVERY points or more), so
 *    the search stops within about one cut of the budget, keeping the best
 *    variant scored so far.  The jobs of the first variant always finish (a
 *    result must exist).  When screening, the first screened variant is
 *    also scored exactly, the search stops early by the time one exact
 *    scoring took, and finalists are scored while one more fits.  So the
 *    overrun is about one cut, or the first variant when it alone takes
 *    longer than the budget.
 * Without a budget every variant is scored; the result is the lowest score,
 * ties to the lowest variant number, so it depends neither on the order,
 * nor on the thread count, nor on the machine.  With a budget it depends only
 * on which variants were scored.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "map/geom_search.h"
#include "map/geom_internal.h"
#include "input/alloc_internal.h"
#include "pattern/pattern_internal.h"

/* ------------------------------------------------------------------------ */
/* Scheduling                                                                */

/* Drop the least recently used task partition nobody reads, when TASKS_KEPT
 * are held.  False when all of them are in use.  Under s->mu. */
static bool make_room(search *s)
{
	if (s->kept < TASKS_KEPT || s->eager)
		return true;
	task_part *lru = NULL;
	int total = s->ntso * s->tp_stride;
	for (int i = 0; i < total; i++) {
		task_part *t = &s->tp[i];
		if (t->state == B_DONE && t->users == 0 &&
		    (!lru || t->used_at < lru->used_at))
			lru = t;
	}
	if (!lru)
		return false;
	free(lru->arr);
	lru->arr = NULL;
	lru->state = B_TODO;
	s->kept--;
	return true;
}

/* What the variant at order position pos needs next, claimed into j; false
 * when that is being built by another worker.  Under s->mu. */
static bool plan(search *s, int pos, job *j)
{
	int v = s->order[pos];
	j->pos = pos;
	if (v >= s->nperm_var && !is_blocked(s, v)) {
		s->vstate[pos] = V_CLAIMED;
		j->kind = J_SCORE;
		j->idx = v;
		return true;
	}
	int ti, ni;
	variant_parts(s, v, &ti, &ni);
	node_part *np = &s->np[ni];
	if (np->state == B_TODO) {
		np->state = B_BUSY;
		j->kind = J_NODES;
		j->idx = ni;
		return true;
	}
	if (is_blocked(s, v)) {
		/* its task side is built as it is scored */
		if (np->state != B_DONE)
			return false;
		s->vstate[pos] = V_CLAIMED;
		j->kind = J_SCORE;
		j->idx = v;
		return true;
	}
	/* the task side can start on the predicted tree before the nodes */
	int tr = np->state == B_DONE ? np->tree : s->predicted;
	if (tr < 0)
		return false;
	int idx = ti * s->tp_stride + tr;
	task_part *t = &s->tp[idx];
	if (t->state == B_TODO) {
		if (!make_room(s))
			return false;
		t->state = B_BUSY;
		s->kept++;
		j->kind = J_TASKS;
		j->idx = idx;
		return true;
	}
	if (np->state != B_DONE || t->state != B_DONE ||
	    (s->eager && s->np_built < s->nnp))
		return false;
	t->users++;
	t->used_at = ++s->clock;
	s->vstate[pos] = V_CLAIMED;
	j->kind = J_SCORE;
	j->idx = v;
	return true;
}

/* The next job, most promising first; false when the search is over (all
 * scored, the budget spent after a first result, or an error).  Under
 * s->mu; may wait for other workers. */
static bool next_job(search *s, job *j)
{
	for (;;) {
		if (s->err)
			return false;
		while (s->cursor < s->nvar && s->vstate[s->cursor] == V_DONE)
			s->cursor++;
		if (s->cursor == s->nvar)
			return false;
		bool late = out_of_time(s);
		if (late && (s->first_done || s->bounded)) {
			s->budget_hit = true;
			return false;
		}
		/* late without a result: only the first variant's jobs; also
		 * while it runs alone, since work started beside a node side
		 * on two CPUs only delays the first result (a million nodes:
		 * the node side 100 -> 160 ms) */
		int end = late || first_alone(s) ? s->cursor + 1
			  : s->eager ? s->nvar : s->cursor + WINDOW;
		if (end > s->nvar)
			end = s->nvar;
		for (int pos = s->cursor; pos < end; pos++)
			if (s->vstate[pos] == V_PENDING && plan(s, pos, j)) {
				j->must = !s->first_done && !s->bounded && pos == s->cursor;
				j->deadline = j->must ? INFINITY : s->stop_at;
				s->inflight++;
				return true;
			}
		if (s->inflight == 0)
			return false;   /* nothing left that can run */
		pthread_cond_wait(&s->cv, &s->mu);
	}
}

static int run_job(search *s, const job *j, wsp *w)
{
	switch (j->kind) {
	case J_NODES:
		return tp__geom_build_nodes(s, j->idx, w, j->deadline);
	case J_TASKS:
		return tp__geom_build_tasks(s, j->idx, w, j->deadline);
	default:
		return tp__geom_score_variant(s, j->idx, w);
	}
}

/* Variant v (task order ti, node partition ni) is scored: drop the
 * partitions that no variant left can use and, when screening, that no
 * finalist can use either (a finalist's sample is at most the FINALISTS-th
 * lowest so far, which only falls).  Under s->mu. */
static void release_parts(search *s, int v, int ti, int ni)
{
	s->np_left[ni]--;
	s->ti_left[ti]--;
	double th = -INFINITY;   /* exact scoring: nothing to wait for */
	if (s->stride > 1) {
		double x = s->cand[v].sample;
		s->np_min[ni] = fmin(s->np_min[ni], x);
		s->ti_min[ti] = fmin(s->ti_min[ti], x);
		int at = s->ntop < FINALISTS ? s->ntop++
			 : x < s->top[FINALISTS - 1] ? FINALISTS - 1 : -1;
		if (at >= 0) {   /* insert x, the largest drops out */
			while (at > 0 && s->top[at - 1] > x) {
				s->top[at] = s->top[at - 1];
				at--;
			}
			s->top[at] = x;
		}
		th = s->ntop == FINALISTS ? s->top[FINALISTS - 1] : INFINITY;
	}
	for (int i = 0; i < s->nnp; i++)
		if (s->np_left[i] == 0 && s->np[i].leaf_node && s->np_min[i] > th) {
			free(s->np[i].leaf_node);
			s->np[i].leaf_node = NULL;
		}
	if (s->predicted < 0 || s->tree_mismatch)
		return;   /* task partitions per tree: the LRU limit only */
	for (int t = 0; t < s->ntso; t++) {
		task_part *p = &s->tp[t * s->tp_stride + s->predicted];
		if (s->ti_left[t] == 0 && p->state == B_DONE && p->users == 0 &&
		    s->ti_min[t] > th) {
			free(p->arr);
			p->arr = NULL;
			p->state = B_TODO;
			s->kept--;
		}
	}
}

/* Record a finished job (rc: TP_ETIME = interrupted, to be redone if still
 * needed).  Under s->mu. */
static void finish_job(search *s, const job *j, int rc)
{
	s->inflight--;
	if (j->kind == J_NODES) {
		s->np[j->idx].state = rc ? B_TODO : B_DONE;
		s->np_built += !rc;
	} else if (j->kind == J_TASKS) {
		s->tp[j->idx].state = rc ? B_TODO : B_DONE;
		if (rc)
			s->kept--;
	} else {
		int ti, ni;
		if (j->idx < s->nperm_var) {
			variant_parts(s, j->idx, &ti, &ni);
			s->tp[ti * s->tp_stride + s->np[ni].tree].users--;
			if (!rc)
				release_parts(s, j->idx, ti, ni);
		} else if (is_blocked(s, j->idx)) {
			/* its base variant's release frees the node partition
			 * once this count falls to zero too, else the end */
			variant_parts(s, j->idx, &ti, &ni);
			s->np_left[ni]--;
		}
		s->vstate[j->pos] = V_DONE;
		if (!rc) {
			s->scored++;
			s->first_done = true;
		}
	}
	if (rc && rc != TP_ETIME)
		s->err = rc;
	pthread_cond_broadcast(&s->cv);
}

static void *search_worker(void *arg)
{
	search *s = arg;
	wsp w = { 0 };
	job j;
	pthread_mutex_lock(&s->mu);
	while (next_job(s, &j)) {
		pthread_mutex_unlock(&s->mu);
		int jrc = run_job(s, &j, &w);
		pthread_mutex_lock(&s->mu);
		finish_job(s, &j, jrc);
	}
	pthread_mutex_unlock(&s->mu);
	tp__geom_wsp_free(&w);
	return NULL;
}

static int cmp_cand(const void *x, const void *y)
{
	const struct cand *a = x, *b = y;
	if (a->done != b->done)
		return a->done ? -1 : 1;
	if (a->sample != b->sample)
		return a->sample < b->sample ? -1 : 1;
	return a->variant - b->variant;
}

/* Finalists: the next screened variant to score exactly, if any, while an
 * exact scoring still fits in the budget (always while there is no result).
 * Those already scored exactly are skipped.  The best-screened variant, its
 * partitions still built, is always scored, even past the budget by one
 * exact scoring: otherwise a host that stalls the search keeps whichever
 * variant happened to finish first (on t64-65k-8 once in about 70 runs:
 * Zoltan's longest-extent cut, twice the hop-bytes of the best). */
static bool final_built(const search *s, int c)
{
	int ti, ni;
	variant_parts(s, s->finals[c].variant, &ti, &ni);
	return s->np[ni].leaf_node &&
	       s->tp[ti * s->tp_stride + s->np[ni].tree].state == B_DONE;
}

static bool next_final(search *s, int *c)
{
	pthread_mutex_lock(&s->mu);
	while (s->next_final < s->nfinals && s->finals[s->next_final].exact)
		s->next_final++;
	bool go = s->next_final < s->nfinals &&
		  (s->best_variant == NO_VARIANT ||
		   (s->next_final == 0 && final_built(s, 0)) ||
		   tp__now_ms() + s->exact_ms <= s->deadline);
	if (go)
		*c = s->next_final++;
	else if (s->next_final < s->nfinals)
		s->budget_hit = true;
	pthread_mutex_unlock(&s->mu);
	return go;
}

/* A finalist's task partition, rebuilt if it was dropped (by this worker,
 * or another one while this one waits). */
static const int32_t *final_tasks(search *s, int ti, int tr, wsp *w, int *rc)
{
	task_part *t = &s->tp[ti * s->tp_stride + tr];
	pthread_mutex_lock(&s->mu);
	while (t->state == B_BUSY)
		pthread_cond_wait(&s->cv, &s->mu);
	bool build = t->state == B_TODO;
	if (build)
		t->state = B_BUSY;
	pthread_mutex_unlock(&s->mu);
	if (build) {
		*rc = tp__geom_build_tasks(s, ti * s->tp_stride + tr, w, INFINITY);
		pthread_mutex_lock(&s->mu);
		t->state = *rc ? B_TODO : B_DONE;
		pthread_cond_broadcast(&s->cv);
		pthread_mutex_unlock(&s->mu);
	}
	return *rc ? NULL : t->arr;
}

static void *final_worker(void *arg)
{
	search *s = arg;
	wsp w = { 0 };
	int rc = 0, c;
	while (!rc && next_final(s, &c)) {
		int ti, ni, v = s->finals[c].variant;
		variant_parts(s, v, &ti, &ni);
		const int32_t *arr = final_tasks(s, ti, s->np[ni].tree, &w, &rc);
		if (!arr || (rc = tp__geom_wsp_scoring(s, &w)))
			break;
		int *tc = tp__geom_tc_room(s, &w);
		double t0 = tp__now_ms();
		tp__geom_variant_map(s, &s->np[ni], arr, w.map, tc, false);
		rc = tp__geom_exact_score(s, v, &w, w.map, tc, 1, t0);
	}
	if (rc) {
		pthread_mutex_lock(&s->mu);
		s->err = rc;
		pthread_mutex_unlock(&s->mu);
	}
	tp__geom_wsp_free(&w);
	return NULL;
}

static void run_threads(search *s, int nthreads, void *(*fn)(void *))
{
	pthread_t th[TP__MAX_THREADS];
	int started;
	for (started = 0; started < nthreads - 1; started++)
		if (pthread_create(&th[started], NULL, fn, s))
			break;
	fn(s);
	for (int i = 0; i < started; i++)
		pthread_join(th[i], NULL);
}

/* After screening: the FINALISTS variants with the lowest sample scores
 * (plus every variant tied with the last of them) are scored exactly; the
 * best exact score wins (folds included), ties to the lowest variant. */
static int score_finalists(search *s, int nthreads)
{
	s->finals = tp__malloc_array((size_t)s->nperm_var, sizeof *s->finals);
	if (!s->finals)
		return TP_ENOMEM;
	memcpy(s->finals, s->cand, sizeof *s->cand * (size_t)s->nperm_var);
	qsort(s->finals, (size_t)s->nperm_var, sizeof *s->finals, cmp_cand);
	int k = 0;
	while (k < s->nperm_var && s->finals[k].done &&
	       (k < FINALISTS || s->finals[k].sample == s->finals[FINALISTS - 1].sample))
		k++;
	s->nfinals = k;
	run_threads(s, nthreads < k ? nthreads : k, final_worker);
	return s->err;
}

/* ------------------------------------------------------------------------ */
/* Report                                                                    */

static const char AXES[] = "xyzuvw";

static void describe_variant(const search *s, int variant, char *buf, size_t len)
{
	if (variant == 0) {
		snprintf(buf, len, "longest extent first");
		return;
	}
	char tn[TP_MAX_DIMS + 1] = "", mn[TP_MAX_DIMS + 1] = "";
	for (int d = 0; d < s->tasks.dims; d++)
		tn[d] = AXES[s->torig[d]];
	for (int d = 0; d < s->nodes.dims; d++)
		mn[d] = AXES[s->porig[d]];
	if (is_blocked(s, variant)) {
		const int *b = block_shape(s, variant);
		char base[64];
		describe_variant(s, s->block_base, base, sizeof base);
		snprintf(buf, len, "%s, %dx%dx%d blocks per node", base, b[0], b[1], b[2]);
		return;
	}
	if (variant >= s->nperm_var) {
		tp__fold_describe(&s->fold[variant - s->nperm_var], tn, mn, buf, len);
		return;
	}
	int ti, ni;
	variant_parts(s, variant, &ti, &ni);
	const side_order *t = &s->tso[ti];
	const side_order *m = &s->np[ni].so;
	char tp[8] = "", mp[8] = "", rf[8] = "";
	int k = 0;
	for (int d = 0; d < s->tasks.dims; d++)
		tp[d] = tn[t->perm[d]];
	for (int d = 0; d < s->nodes.dims; d++) {
		mp[d] = mn[m->perm[d]];
		if (m->reflect[d])
			rf[k++] = mn[d];
	}
	snprintf(buf, len, "tasks %s -> machine %s%s%s%s", tp, mp,
		 k ? " (reflected " : "", rf, k ? ")" : "");
}

static void fill_report(const search *s, tp_geom_report *report)
{
	memset(report, 0, sizeof *report);
	report->variants_total = s->nvar;
	report->variants_folded = s->nfold;
	report->variants_scored = s->scored;
	report->best_variant = s->best_variant;
	describe_variant(s, s->best_variant, report->best_desc,
			 sizeof report->best_desc);
	report->best_score = s->best_score;
	report->budget_hit = s->budget_hit;
	report->subset_selected = s->subset;
	report->shifted_dims = s->shifted;
	report->elapsed_ms = tp__now_ms() - s->t0;
}

static void search_free(search *s)
{
	if (s->np)
		for (int i = 0; i < s->nnp; i++)
			free(s->np[i].leaf_node);
	if (s->tp)
		for (int i = 0; i < s->ntso * s->tp_stride; i++)
			free(s->tp[i].arr);
	if (s->trees)
		for (int i = 0; i < s->ntrees; i++)
			free(s->trees[i].v);
	free(s->np);
	free(s->tso);
	free(s->tp);
	free(s->np_left);
	free(s->ti_left);
	free(s->np_min);
	free(s->ti_min);
	free(s->trees);
	free(s->fold);
	free(s->cell_node);
	free(s->order);
	free(s->vstate);
	free(s->cand);
	free(s->finals);
	free(s->nodes.pos);
	if (s->tasks.pos != s->g->coords)
		free(s->tasks.pos);
	tp__pointset_free(&s->nodes);
	tp__pointset_free(&s->tasks);
	free(s->own_used);
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
}

/* How geom_map searches: tp_geom_map's lazy search, or the ways of
 * tp__geom_map_bounded and tp__geom_map_eager (search.bounded, .eager). */
enum search_mode {
	SEARCH_LAZY,
	SEARCH_BOUNDED,
	SEARCH_EAGER,
};

static int geom_map(const tp_graph *g, const tp_alloc *a, const tp_geom_opts *opt,
		    enum search_mode mode, int32_t *map, tp_geom_report *report,
		    tp_error *err)
{
	tp_geom_opts defaults;
	if (!opt) {
		tp_geom_opts_default(&defaults);
		opt = &defaults;
	}
	double t0 = tp__now_ms();
	int rc = tp__geom_check_inputs(g, a, opt, err);
	if (rc)
		return rc;

	search s;
	memset(&s, 0, sizeof s);
	s.g = g;
	s.a = a;
	s.o = opt;
	s.eager = mode == SEARCH_EAGER;
	s.bounded = mode == SEARCH_BOUNDED && opt->time_budget_ms > 0;
	s.t0 = t0;
	s.deadline = opt->time_budget_ms > 0 ? t0 + opt->time_budget_ms : INFINITY;
	s.stop_at = s.deadline;
	s.best_score = INFINITY;
	s.best_variant = NO_VARIANT;
	pthread_mutex_init(&s.mu, NULL);
	pthread_cond_init(&s.cv, NULL);
	int32_t *ids = tp__malloc_array((size_t)a->nnodes, sizeof(int32_t));
	/* the best so far straight into the caller's map (it holds nothing
	 * of worth when the search fails) */
	s.best_map = map;
	int nthreads = tp__geom_thread_count(opt);
	rc = ids ? tp__geom_prepare(&s, ids) : TP_ENOMEM;
	if (!rc) {
		/* at most two jobs per variant can run at once */
		run_threads(&s, nthreads < 2 * s.nvar ? nthreads : 2 * s.nvar,
			    search_worker);
		rc = s.err;
	}
	if (!rc && s.stride > 1)
		rc = score_finalists(&s, nthreads);
	if (!rc && s.best_variant == NO_VARIANT && s.bounded && s.budget_hit)
		rc = tp_error_set(err, TP_ETIME,
				  "geometric mapping: time budget of %g ms reached before a first variant",
				  opt->time_budget_ms);
	else if (!rc && s.best_variant == NO_VARIANT)
		rc = TP_ENOMEM;   /* nothing could be scored */
	if (rc == TP_ENOMEM) {
		rc = tp_error_set(err, TP_ENOMEM, "geometric mapping: out of memory");
	} else if (!rc && report) {
		fill_report(&s, report);
	}
	search_free(&s);
	free(ids);
	return rc;
}

void tp_geom_opts_default(tp_geom_opts *o)
{
	memset(o, 0, sizeof *o);
	o->parts_per_level = 2;
	o->search = TP_SEARCH_AUTO;
	o->seam_shift = true;
	o->metric = TP_METRIC_HOP_BYTES;
	o->time_budget_ms = 0;
	o->nthreads = 0;
}

int tp_geom_map(const tp_graph *g, const tp_alloc *a, const tp_geom_opts *opt,
		int32_t *map, tp_geom_report *report, tp_error *err)
{
	return geom_map(g, a, opt, SEARCH_LAZY, map, report, err);
}

int tp__geom_map_bounded(const tp_graph *g, const tp_alloc *a,
			 const tp_geom_opts *opt, int32_t *map,
			 tp_geom_report *report, tp_error *err)
{
	return geom_map(g, a, opt, SEARCH_BOUNDED, map, report, err);
}

int tp__geom_map_eager(const tp_graph *g, const tp_alloc *a,
		       const tp_geom_opts *opt, int32_t *map,
		       tp_geom_report *report, tp_error *err)
{
	return geom_map(g, a, opt, SEARCH_EAGER, map, report, err);
}
