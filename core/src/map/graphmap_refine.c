/* topoplace — graph mapping, the hop-bytes refinement: passes of moves
 * and swaps that lower hop-bytes, on several threads, moving nodes' groups
 * first where every node has the same slots (tp_graphmap_refine). */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "map/graphmap_parts.h"

#define REFINE_GATHER 32     /* a task's edges read once when it has at most
				this many */

/* ------------------------------------------------------------------------ */
/* Refinement                                                                */

/* The hop-bytes refinement.  Rounds of moves and swaps: the first round
 * takes every task, later ones only the neighbours of the tasks the round
 * before moved (the others face what they faced then).  A round goes
 * through its tasks in chunks: every task of a chunk proposes its best move
 * or swap against the mapping as the chunk found it (on several threads,
 * each a slice of the chunk), then the proposals are applied in the round's
 * order, each only if it still gains with what was applied before it.  The chunk
 * depends on the graph's size alone, so the result does not depend on the
 * thread count.  Small graphs take chunks of one task: each proposal then
 * sees every move before it. */
#define REFINE_CHUNK 1024          /* tasks a chunk, on large graphs */
#define REFINE_CHUNKED_TASKS 16384 /* large: from this many tasks */

typedef struct proposal {
	int32_t p, q, s;      /* from node p to node q, swapping with task s
				 (-1: into a free slot); q < 0: none */
} proposal;

typedef struct refiner {
	const gm *c;
	int32_t *map;
	slot_table st;
	double *cost;         /* per task: cost_at its node */
	double *wsum;         /* per task: its edges' bytes */
	unsigned char *mark;  /* per task: listed for the next round */
	int32_t *list;        /* this round's tasks */
	int32_t *rest;        /* costliest_first's */
	proposal *prop;       /* the chunk's */
	double eps;
	/* the chunk the threads work on: set before gen moves on */
	int32_t i0, i1;
	int nthreads;
	pthread_mutex_t mu;
	pthread_cond_t go, done;
	void (*job)(struct refiner *, int);  /* thread k's part of the chunk */
	_Atomic uint64_t gen; /* chunks handed out */
	atomic_int pending;   /* helpers still on this chunk */
	atomic_bool quit;
} refiner;

/* t's best move or swap now, or q = -1. */
static void propose(const refiner *r, int32_t t, proposal *out)
{
	const gm *c = r->c;
	const struct tp_graph *g = c->g;
	const struct tp_alloc *a = c->a;
	const int32_t *map = r->map;
	const int32_t *used = r->st.used, *slot_task = r->st.slot_task;
	const int64_t *off = r->st.off;
	int32_t p = map[t], cand[REFINE_NODES];
	int ncand = 0;
	for (int64_t e = g->xadj[t]; e < g->xadj[t + 1] && ncand < REFINE_NODES; e++) {
		int32_t q = map[g->adjncy[e]];
		int k = 0;
		while (k < ncand && cand[k] != q)
			k++;
		if (q != p && k == ncand)
			cand[ncand++] = q;
	}
	/* t's neighbours' nodes and bytes, read once for all candidates */
	int32_t nb[REFINE_GATHER];
	double nw[REFINE_GATHER];
	int64_t deg = g->xadj[t + 1] - g->xadj[t];
	if (deg <= REFINE_GATHER)
		for (int64_t e = g->xadj[t], k = 0; e < g->xadj[t + 1]; e++, k++) {
			nb[k] = map[g->adjncy[e]];
			nw[k] = tp__graph_w(g, e);
		}
	double best = -r->eps;
	out->p = p;
	out->q = -1;
	out->s = -1;
	for (int ci = 0; ci < ncand; ci++) {
		int32_t q = cand[ci];
		double ct = 0.0;
		if (deg <= REFINE_GATHER)
			for (int64_t k = 0; k < deg; k++)
				ct += nw[k] * (double)ndist(c, q, nb[k]);
		else
			ct = cost_at(c, map, t, q);
		double mt = ct - r->cost[t];
		if (used[q] < a->slots[q] && mt < best) {
			best = mt;
			out->q = q;
			out->s = -1;
		}
		int64_t dpq = ndist(c, p, q);
		int scanned = 0;
		for (int64_t x = off[q]; x < off[q + 1] && scanned < REFINE_SWAPS; x++) {
			int32_t u = slot_task[x];
			if (u < 0)
				continue;
			scanned++;
			/* u's move gains at most its cost, and no more than
			 * its bytes times the p-q distance (each neighbour
			 * of u is at most dpq nearer p than q: distances are
			 * path lengths) */
			double gain_u = r->wsum[u] * (double)dpq;
			if (gain_u > r->cost[u])
				gain_u = r->cost[u];
			if (mt - gain_u >= best)
				continue;
			double d = mt + cost_at(c, map, u, p) - r->cost[u] +
				   2.0 * edge_w(g, t, u) * dpq;
			if (d < best) {
				best = d;
				out->q = q;
				out->s = u;
			}
		}
	}
}

/* t has moved from node p to node q, and task s (>= 0) the other way
 * (its own call brings its cost up to date): t's neighbours' costs and its
 * own are brought up to date, and its neighbours are listed for the next
 * round.  A neighbour of few edges is costed again (exact); one of many
 * takes the move's difference alone: costing every neighbour again made a
 * move cost its degree squared, and on a captured all-to-all (511
 * neighbours a task, 512 ranks) the refinement took seconds there. */
static void task_moved(refiner *r, int32_t t, int32_t p, int32_t q, int32_t s)
{
	const gm *c = r->c;
	const struct tp_graph *g = c->g;
	for (int64_t e = g->xadj[t]; e < g->xadj[t + 1]; e++) {
		int32_t u = g->adjncy[e];
		r->mark[u] = 1;
		if (u == s)
			continue;
		int32_t at = r->map[u];
		if (g->xadj[u + 1] - g->xadj[u] <= c->recost_degree)
			r->cost[u] = cost_at(c, r->map, u, at);
		else
			r->cost[u] += tp__graph_w(g, e) *
				      (double)(ndist(c, at, q) - ndist(c, at, p));
	}
	r->cost[t] = cost_at(c, r->map, t, r->map[t]);
}

/* Task t's proposal, if it still holds and still gains: applied.  Returns
 * the gain, 0 when not applied. */
static double apply(refiner *r, int32_t t, const proposal *pr)
{
	const gm *c = r->c;
	int32_t *map = r->map;
	int32_t p = pr->p, q = pr->q, s = pr->s;
	if (map[t] != p || (s >= 0 ? map[s] != q
				   : r->st.used[q] >= c->a->slots[q]))
		return 0.0;
	double d = cost_at(c, map, t, q) - r->cost[t];
	if (s >= 0)
		d += cost_at(c, map, s, p) - r->cost[s] +
		     2.0 * edge_w(c->g, t, s) * (double)ndist(c, p, q);
	if (!(d < -r->eps))
		return 0.0;
	tp__slots_move(&r->st, t, p, q, s);
	map[t] = q;
	if (s >= 0)
		map[s] = p;
	task_moved(r, t, p, q, s);
	if (s >= 0)
		task_moved(r, s, q, p, t);
	return -d;
}

/* Thread k's slice of i0..i1. */
static void slice(const refiner *r, int k, int32_t *a, int32_t *b)
{
	int64_t len = r->i1 - r->i0;
	*a = r->i0 + (int32_t)(len * k / r->nthreads);
	*b = r->i0 + (int32_t)(len * (k + 1) / r->nthreads);
}

/* Proposals of the chunk's tasks list[i0..i1). */
static void propose_slice(refiner *r, int k)
{
	int32_t a, b;
	slice(r, k, &a, &b);
	for (int32_t i = a; i < b; i++)
		propose(r, r->list[i], &r->prop[i - r->i0]);
}

/* The costs of tasks i0..i1 (the set-up: as long as a few chunks). */
static void cost_slice(refiner *r, int k)
{
	int32_t a, b;
	slice(r, k, &a, &b);
	for (int32_t t = a; t < b; t++) {
		r->cost[t] = cost_at(r->c, r->map, t, r->map[t]);
		r->wsum[t] = task_bytes(r->c->g, t);
	}
}

struct refine_worker {
	refiner *r;
	int k;
};

/* A chunk's hand-over: the helpers wait while the caller applies the last
 * chunk's proposals (tens of microseconds), and the caller for the
 * slowest helper.  Sleeping on the condition each time cost a wake-up
 * each way, a chunk: on a 2-vCPU VM the 6-D half machine's refinement
 * from the bipartition (645 chunks) took about 1,230 ms on two threads,
 * 1,160 polling first.  So each side first polls for this long, then
 * sleeps. */
#define HANDOVER_SPIN_NS 200000

static bool poll_until(bool (*ready)(refiner *, uint64_t), refiner *r,
		       uint64_t arg)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (unsigned i = 1;; i++) {
		if (ready(r, arg))
			return true;
		if (i % 64 == 0) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			if ((t.tv_sec - t0.tv_sec) * 1000000000L +
			    (t.tv_nsec - t0.tv_nsec) > HANDOVER_SPIN_NS)
				return false;
		}
	}
}

static bool chunk_handed(refiner *r, uint64_t seen)
{
	return atomic_load(&r->gen) != seen || atomic_load(&r->quit);
}

static bool chunk_done(refiner *r, uint64_t unused)
{
	(void)unused;
	return atomic_load(&r->pending) == 0;
}

static void *refine_worker(void *arg)
{
	struct refine_worker *w = arg;
	refiner *r = w->r;
	uint64_t seen = 0;
	for (;;) {
		if (!poll_until(chunk_handed, r, seen)) {
			pthread_mutex_lock(&r->mu);
			while (!chunk_handed(r, seen))
				pthread_cond_wait(&r->go, &r->mu);
			pthread_mutex_unlock(&r->mu);
		}
		if (atomic_load(&r->quit))
			return NULL;
		seen = atomic_load(&r->gen);
		r->job(r, w->k);
		if (atomic_fetch_sub(&r->pending, 1) == 1) {
			pthread_mutex_lock(&r->mu);
			pthread_cond_signal(&r->done);
			pthread_mutex_unlock(&r->mu);
		}
	}
}

/* job over i0..i1, on every thread. */
static void run_chunk(refiner *r, void (*job)(refiner *, int), int32_t i0,
		      int32_t i1)
{
	r->job = job;
	r->i0 = i0;
	r->i1 = i1;
	if (r->nthreads == 1) {
		job(r, 0);
		return;
	}
	atomic_store(&r->pending, r->nthreads - 1);
	pthread_mutex_lock(&r->mu);
	atomic_fetch_add(&r->gen, 1);
	pthread_cond_broadcast(&r->go);
	pthread_mutex_unlock(&r->mu);
	job(r, 0);
	if (!poll_until(chunk_done, r, 0)) {
		pthread_mutex_lock(&r->mu);
		while (!chunk_done(r, 0))
			pthread_cond_wait(&r->done, &r->mu);
		pthread_mutex_unlock(&r->mu);
	}
}

/* The tasks listed, in task order (access follows memory, and the order
 * does not depend on which move listed a task first); the marks cleared. */
static int32_t take_listed(refiner *r, int32_t nt)
{
	int32_t n = 0;
	for (int32_t t = 0; t < nt; t++)
		if (r->mark[t]) {
			r->mark[t] = 0;
			r->list[n++] = t;
		}
	return n;
}

static void refiner_free(refiner *r)
{
	tp__slots_free(&r->st);
	free(r->cost);
	free(r->wsum);
	free(r->mark);
	free(r->list);
	free(r->rest);
	free(r->prop);
}

/* A round's list reordered: the costliest quarter of its tasks first, then
 * the others, each part in the list's order (task order, which memory
 * follows), and tasks that cost nothing dropped (every neighbour shares
 * their node: no move or swap of theirs gains).  A refinement that its
 * budget stops has then spent it where the gains are: on a random half of a
 * 6-D torus (318k tasks, 2 threads) 200 ms of it gain 5.8 % instead of
 * 3.1 %.  Returns the new length. */
#define COST_BINS 64          /* 4 per halving of the cost */
static int32_t costliest_first(refiner *r, int32_t n)
{
	int32_t bins[COST_BINS] = { 0 };
	double top = 0.0;
	for (int32_t i = 0; i < n; i++)
		if (r->cost[r->list[i]] > top)
			top = r->cost[r->list[i]];
	int32_t costly = 0;
	for (int32_t i = 0; i < n; i++) {
		double x = r->cost[r->list[i]];
		if (x > 0.0) {
			double k = -4.0 * log2(x / top);
			bins[k < COST_BINS - 1 ? (int)k : COST_BINS - 1]++;
			costly++;
		}
	}
	int b = 0;
	for (int32_t sum = bins[0]; b < COST_BINS - 1 && sum < costly / 4; )
		sum += bins[++b];
	double cut = top * exp2(-(b + 1) / 4.0);
	int32_t k = 0, m = 0;
	for (int32_t i = 0; i < n; i++) {
		int32_t t = r->list[i];
		if (r->cost[t] >= cut)
			r->list[k++] = t;
		else if (r->cost[t] > 0.0)
			r->rest[m++] = t;
	}
	memcpy(r->list + k, r->rest, sizeof(int32_t) * (size_t)m);
	return k + m;
}

static int refine_tasks(const gm *c, const tp_graphmap_opts *o, int32_t *map,
			int64_t *moves_out, double t0)
{
	const struct tp_graph *g = c->g;
	int32_t nt = c->nt;
	int32_t chunk = nt >= REFINE_CHUNKED_TASKS ? REFINE_CHUNK : 1;
	refiner r = { .c = c, .map = map, .nthreads = 1 };
	int rc = tp__slots_init(&r.st, c->a, map, nt);
	r.cost = tp__malloc_array((size_t)nt + 1, sizeof(double));
	r.wsum = tp__malloc_array((size_t)nt + 1, sizeof(double));
	r.mark = tp__calloc((size_t)nt + 1, 1);
	r.list = tp__malloc_array((size_t)nt + 1, sizeof(int32_t));
	r.rest = tp__malloc_array((size_t)nt + 1, sizeof(int32_t));
	r.prop = tp__malloc_array((size_t)chunk, sizeof(proposal));
	if (rc || !r.cost || !r.wsum || !r.mark || !r.list || !r.rest || !r.prop) {
		refiner_free(&r);
		return TP_ENOMEM;
	}
	r.eps = 1e-12 * (g->total_bytes > 0 ? g->total_bytes : 1.0);
	int64_t moves = 0;
	/* helpers beside the caller's thread, which is the first */
	pthread_t th[TP__MAX_THREADS];
	struct refine_worker wk[TP__MAX_THREADS];
	int want = chunk == 1 ? 1 : c->threads > 0 ? c->threads : tp__cpus();
	want = want < 1 ? 1 : want > TP__MAX_THREADS ? TP__MAX_THREADS : want;
	bool sync = want > 1 && !pthread_mutex_init(&r.mu, NULL);
	if (sync && pthread_cond_init(&r.go, NULL)) {
		pthread_mutex_destroy(&r.mu);
		sync = false;
	}
	if (sync && pthread_cond_init(&r.done, NULL)) {
		pthread_cond_destroy(&r.go);
		pthread_mutex_destroy(&r.mu);
		sync = false;
	}
	int helpers = 0;
	while (sync && helpers < want - 1) {
		wk[helpers] = (struct refine_worker){ &r, helpers + 1 };
		if (pthread_create(&th[helpers], NULL, refine_worker, &wk[helpers]))
			break;   /* fewer threads, the same result */
		helpers++;
	}
	r.nthreads = 1 + helpers;
	run_chunk(&r, cost_slice, 0, nt);
	double hb = 0.0;      /* every edge counted from both ends */
	int32_t n = nt;
	for (int32_t t = 0; t < nt; t++) {
		r.list[t] = t;
		hb += 0.5 * r.cost[t];
	}
	for (int pass = 0; pass < o->refine_passes && n > 0; pass++) {
		n = costliest_first(&r, n);
		int64_t before = moves;
		double gain = 0.0;
		for (int32_t i0 = 0; i0 < n; i0 += chunk) {
			if (refine_over(c, t0, o->time_budget_ms))
				goto done;
			int32_t i1 = n - i0 < chunk ? n : i0 + chunk;
			run_chunk(&r, propose_slice, i0, i1);
			for (int32_t i = i0; i < i1; i++) {
				const proposal *pr = &r.prop[i - i0];
				if (pr->q < 0)
					continue;
				double d = apply(&r, r.list[i], pr);
				if (d > 0.0) {
					gain += d;
					moves++;
				}
			}
		}
		/* a round that gains under 1 % ends the refinement: the
		 * rounds after it gain less still */
		if (moves == before || gain < 1e-2 * hb)
			break;
		hb -= gain;
		n = take_listed(&r, nt);
	}
done:
	if (sync) {
		pthread_mutex_lock(&r.mu);
		atomic_store(&r.quit, true);
		pthread_cond_broadcast(&r.go);
		pthread_mutex_unlock(&r.mu);
		for (int k = 0; k < helpers; k++)
			pthread_join(th[k], NULL);
		pthread_cond_destroy(&r.done);
		pthread_cond_destroy(&r.go);
		pthread_mutex_destroy(&r.mu);
	}
	if (moves_out)
		*moves_out = moves;
	refiner_free(&r);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Group refinement                                                          */

/* The refinement moves one task at a time, or swaps two.  A node's tasks
 * that talk to each other cannot move together that way: each single move
 * breaks their bonds and costs more than it gains.  So first the groups
 * move: every node's tasks are one vertex of the graph contracted by the
 * mapping (the bytes between two groups summed), each node one slot, and
 * the same refinement swaps whole groups between nodes (or moves one to an
 * empty node); then the tasks.  A random half of a 6-D torus, 4 tasks a
 * node, from geometric's blocks (2.628 average hops), two threads: the
 * tasks alone 2.55-2.57 in 200 ms and 2.436 to their end (0.9 s); the
 * groups first 2.30-2.34 in 200 ms and 2.273 to the end (0.65 s).
 * Hop-bytes change exactly as the contracted graph's do (the bytes inside
 * a group stay at distance 0), so they never rise.  It needs the same
 * slots on every node, so that any group fits any node. */
typedef struct groups {
	struct tp_graph g;       /* the contracted graph */
	struct tp_alloc a;       /* the same nodes, one slot each */
	int32_t *of;             /* node -> its group, or -1 */
	int32_t *node;           /* group -> its node */
	int32_t n;
} groups;

/* The tasks' set-up per adjacency entry (measured 11 ns: a million tasks
 * spend 60-80 ms checking the mapping, building the node tables and
 * scoring the start). */
#define REFINE_SETUP_NS_PER_ENTRY 8.0

double tp__refine_setup_ms(const tp_graph *g)
{
	return 2.0 * (double)g->nedges * REFINE_SETUP_NS_PER_ENTRY / 1e6;
}

bool tp__refine_by_groups(const tp_alloc *a)
{
	for (int32_t i = 1; i < a->nnodes; i++)
		if (a->slots[i] != a->slots[0])
			return false;
	return a->nnodes >= 2 && a->slots[0] >= 2;
}

/* Each group on its own node. */
static int32_t *gmap_init(int32_t *gmap, const groups *G)
{
	for (int32_t k = 0; k < G->n; k++)
		gmap[k] = G->node[k];
	return gmap;
}

static void groups_free(groups *G)
{
	free(G->g.xadj);
	free(G->g.adjncy);
	free(G->g.weights);
	free(G->a.slots);
	free(G->of);
	free(G->node);
}

/* The contracted graph: groups in node order, each group's neighbours in
 * increasing order.  Returns 0, 1 when there is nothing to move (fewer
 * than two groups, unequal or single slots) or no time left (the budget
 * from t0), or TP_ENOMEM. */
static int groups_build(const gm *c, const int32_t *map, groups *G,
			double t0, double budget)
{
	const struct tp_graph *g = c->g;
	const struct tp_alloc *a = c->a;
	int32_t nn = c->nn, nt = c->nt;
	memset(G, 0, sizeof *G);
	if (!tp__refine_by_groups(a))
		return 1;
	G->of = tp__malloc_array((size_t)nn, sizeof(int32_t));
	G->node = tp__malloc_array((size_t)nn, sizeof(int32_t));
	G->a.slots = tp__malloc_array((size_t)nn, sizeof(int));
	int64_t *first = tp__calloc((size_t)nn + 1, sizeof(int64_t));   /* tasks by group */
	int32_t *tasks = tp__malloc_array((size_t)nt + 1, sizeof(int32_t));
	int32_t *seen = tp__malloc_array((size_t)nn, sizeof(int32_t));   /* group -> last group that listed it */
	double *acc = tp__malloc_array((size_t)nn, sizeof(double));
	int32_t *list = tp__malloc_array((size_t)nn, sizeof(int32_t));
	int rc = TP_ENOMEM;
	if (!G->of || !G->node || !G->a.slots || !first || !tasks || !seen || !acc || !list)
		goto out;
	for (int32_t i = 0; i < nn; i++) {
		G->of[i] = -1;
		G->a.slots[i] = 1;
		seen[i] = -1;
	}
	for (int32_t t = 0; t < nt; t++)
		first[map[t] + 1]++;
	for (int32_t i = 0; i < nn; i++)
		if (first[i + 1] > 0) {
			G->of[i] = G->n;
			G->node[G->n++] = i;
		}
	rc = 1;
	if (G->n < 2)
		goto out;
	for (int32_t i = 0; i < nn; i++)
		first[i + 1] += first[i];
	for (int32_t t = 0; t < nt; t++)   /* counting sort by node, in task order */
		tasks[first[map[t]]++] = t;
	for (int32_t i = nn; i > 0; i--)
		first[i] = first[i - 1];
	first[0] = 0;
	/* one pass, the lists growing (the contracted graph has a few times
	 * fewer entries than the tasks': 463k against 1.9M on the 6-D case) */
	rc = TP_ENOMEM;
	int64_t cap = (int64_t)G->n * 8 + 64, len = 0;
	G->g.xadj = tp__malloc_array((size_t)G->n + 1, sizeof(int64_t));
	G->g.adjncy = tp__malloc_array((size_t)cap, sizeof(int32_t));
	G->g.weights = tp__malloc_array((size_t)cap, sizeof(double));
	if (!G->g.xadj || !G->g.adjncy || !G->g.weights)
		goto out;
	G->g.xadj[0] = 0;
	for (int32_t k = 0; k < G->n; k++) {
		/* it cannot move anything before it is done: past the budget
		 * it gives up (the 6-D whole machine: 63 ms) */
		if ((k & 1023) == 1023 && refine_over(c, t0, budget)) {
			rc = 1;
			goto out;
		}
		int32_t i = G->node[k], nl = 0;
		for (int64_t x = first[i]; x < first[i + 1]; x++) {
			int32_t t = tasks[x];
			for (int64_t e = g->xadj[t]; e < g->xadj[t + 1]; e++) {
				int32_t h = G->of[map[g->adjncy[e]]];
				if (h == k)
					continue;
				if (seen[h] != k) {
					seen[h] = k;
					acc[h] = 0.0;
					list[nl++] = h;
				}
				acc[h] += tp__graph_w(g, e);
			}
		}
		if (len + nl > cap) {
			cap = 2 * (len + nl);
			int32_t *na = tp__realloc_array(G->g.adjncy, (size_t)cap, sizeof(int32_t));
			if (na)
				G->g.adjncy = na;
			double *nw = tp__realloc_array(G->g.weights, (size_t)cap, sizeof(double));
			if (nw)
				G->g.weights = nw;
			if (!na || !nw)
				goto out;
		}
		/* sorted, as edge_w's search needs (few: insertion) */
		for (int32_t j = 1; j < nl; j++)
			for (int32_t x = j; x > 0 && list[x] < list[x - 1]; x--) {
				int32_t tmp = list[x];
				list[x] = list[x - 1];
				list[x - 1] = tmp;
			}
		for (int32_t j = 0; j < nl; j++) {
			G->g.adjncy[len + j] = list[j];
			G->g.weights[len + j] = acc[list[j]];
		}
		len += nl;
		G->g.xadj[k + 1] = len;
	}
	G->g.ntasks = G->n;
	G->g.nedges = G->g.xadj[G->n] / 2;
	G->g.total_bytes = g->total_bytes;
	G->a.m = a->m;
	G->a.nnodes = nn;
	G->a.node = a->node;
	G->a.total_slots = nn;
	rc = 0;
out:
	free(first);
	free(tasks);
	free(seen);
	free(acc);
	free(list);
	return rc;
}

/* The groups' refinement, then the tasks'.  Under a budget the groups
 * may take all of it: they gain the most for the time (the 6-D case under
 * a 300 ms launch budget: 2.48 average hops when they had half of the
 * refinement's, 2.36 with nine tenths, 2.33-2.35 with all), and the tasks
 * get what they leave. */
int tp__refine_run(const gm *c, const tp_graphmap_opts *o, int32_t *map,
		      int64_t *moves_out, double t0)
{
	groups G;
	int rc = groups_build(c, map, &G, t0, o->time_budget_ms);
	int64_t gmoves = 0;
	if (rc == 0) {
		gm cc;
		memset(&cc, 0, sizeof cc);
		cc.g = &G.g;
		cc.a = &G.a;
		cc.m = c->m;
		cc.nd = c->nd;
		cc.nn = c->nn;
		cc.nt = G.n;
		cc.rc = c->rc;      /* the same nodes */
		cc.dtab = c->dtab;
		cc.threads = c->threads;
		cc.recost_degree = c->recost_degree;
		cc.stop = c->stop;
		int32_t *gmap = tp__malloc_array((size_t)G.n, sizeof(int32_t));
		rc = gmap ? refine_tasks(&cc, o, gmap_init(gmap, &G), &gmoves, t0)
			  : TP_ENOMEM;
		if (!rc)
			for (int32_t t = 0; t < c->nt; t++)
				map[t] = gmap[G.of[map[t]]];
		free(gmap);
	}
	groups_free(&G);
	if (rc < 0)
		return rc;
	int64_t moves = 0;
	/* the tasks' set-up cannot stop half-way: under a budget they start
	 * only with time for it and as long again to move (a 524k-task launch
	 * overran by 40 ms when they started late) */
	bool late = o->time_budget_ms > 0 &&
		    tp__now_ms() - t0 + 2 * tp__refine_setup_ms(c->g) > o->time_budget_ms;
	rc = late ? 0 : refine_tasks(c, o, map, &moves, t0);
	if (moves_out)
		*moves_out = gmoves + moves;
	return rc;
}
