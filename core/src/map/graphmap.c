/* topoplace — graph mapping for task graphs without coordinates: greedy
 * growth, recursive bipartitioning (METIS) and swap refinement.  See
 * topoplace/graphmap.h for the algorithms. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "map/metis_load.h"
#include "net/network.h"
#include "map/bisect.h"
#include "map/free_shells.h"
#include "map/geom_internal.h"
#include "map/graphmap_internal.h"
#include "map/predict_internal.h"
#include "net/machine_internal.h"

#define KD_LEAF 8            /* points per k-d tree leaf */
#define SHELL_READS 128      /* routers read around a point before the
				k-d tree takes over */
#define NEIGH_CANDIDATES 8   /* neighbour nodes tried per greedy placement */
#define REFINE_NODES 16      /* candidate nodes per task in refinement */
#define REFINE_SWAPS 64      /* tasks scanned per candidate node */
#define REFINE_HEAVY_SHARE 0.99   /* of each task's bytes the link-load
				    refinement sees (graph_heavy.c) */
#define REFINE_GATHER 32     /* a task's edges read once when it has at most
				this many */
#define TRADE_NEIGHBOURS 8   /* lane refinement: a node trades with its
				tasks' neighbours' nodes, */
#define TRADE_WINDOW 8       /* and with this many nodes either side of it
				in router order */
#define HOT_SHARE 0.85       /* congestion refinement: tasks on links loaded
				at least this share of the maximum move */

void tp_graphmap_opts_default(tp_graphmap_opts *o)
{
	memset(o, 0, sizeof *o);
	o->refine_passes = 8;
	o->seed = 1;
}

/* ------------------------------------------------------------------------ */
/* Shared context                                                            */

typedef struct gm {
	const struct tp_graph *g;
	const struct tp_alloc *a;
	const struct tp_machine *m;
	int nd;
	int32_t nn, nt;
	int *rc;        /* nn x nd raw router coordinates of allocated nodes */
	int *sc;        /* nn x nd seam-shifted coordinates */
	int threads;    /* the refinement's, at most (0: one per CPU) */
	double hop_weight;   /* the lane refinement: a message's bytes count
				(1 + hop_weight x links) times */
	double deadline;   /* tp__now_ms() past which construction stops with
			      TP_ETIME; 0: none */
	double projected_ms;   /* greedy: what the whole run would have
				  taken, when it stopped early for it */
} gm;

static bool past(const gm *c, double extra_ms)
{
	return c->deadline > 0 && tp__now_ms() + extra_ms > c->deadline;
}

static void gm_free(gm *c)
{
	free(c->rc);
	free(c->sc);
}

/* shifted: the constructions' seam-shifted coordinates too (the
 * refinements measure distances on the raw ones alone). */
static int gm_init(gm *c, const tp_graph *g, const tp_alloc *a, bool shifted,
		   tp_error *err, const char *what)
{
	memset(c, 0, sizeof *c);
	c->g = g;
	c->a = a;
	c->m = a->m;
	c->nd = a->m->ndims;
	c->nn = a->nnodes;
	c->nt = g->ntasks;
	if (g->ntasks > a->total_slots)
		return tp_error_set(err, TP_EINVAL,
				    "%s: %d tasks do not fit in the allocation's %lld slots",
				    what, g->ntasks, (long long)a->total_slots);
	size_t cells = (size_t)c->nn * (size_t)c->nd;
	c->rc = tp__malloc_array(cells ? cells : 1, sizeof(int));
	if (shifted)
		c->sc = tp__malloc_array(cells ? cells : 1, sizeof(int));
	if (!c->rc || (shifted && (!c->sc || tp_geom_seam_shift(a, c->sc) < 0))) {
		gm_free(c);
		return tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
	}
	for (int32_t i = 0; i < c->nn; i++)
		memcpy(&c->rc[(size_t)i * (size_t)c->nd],
		       &c->m->coords[(size_t)a->node[i] * (size_t)c->nd],
		       sizeof(int) * (size_t)c->nd);
	return 0;
}

static inline const int *rcoord(const gm *c, int32_t i)
{
	return &c->rc[(size_t)i * (size_t)c->nd];
}

static inline int64_t ndist(const gm *c, int32_t i, int32_t j)
{
	return tp__coord_dist(c->m, rcoord(c, i), rcoord(c, j));
}

/* The bytes of task t's edges. */
static double task_bytes(const struct tp_graph *g, int32_t t)
{
	double s = 0.0;
	for (int64_t e = g->xadj[t]; e < g->xadj[t + 1]; e++)
		s += tp__graph_w(g, e);
	return s;
}

static bool budget_over(double t0, double budget)
{
	return budget > 0 && tp__now_ms() - t0 > budget;
}

/* ------------------------------------------------------------------------ */
/* k-d tree over the allocated nodes with free-slot counts                   */

typedef struct kdn {
	int32_t lo, hi;          /* range in perm */
	int32_t left, right, parent;
	int64_t free;            /* free slots below */
	int32_t minfree;         /* lowest node index with a free slot below
				    (INT32_MAX: none), for the ties */
	int bmin[TP_MAX_DIMS], bmax[TP_MAX_DIMS];
} kdn;

typedef struct kdtree {
	const gm *c;
	int32_t *perm;
	kdn *t;
	int32_t nt, cap;
	int32_t *leaf_of;        /* alloc node -> leaf */
	int *freeslots;          /* per alloc node */
	tp__free_shells *shells; /* tori and meshes: the near answers first */
} kdtree;

/* The build works on rows of a node's coordinates followed by its index,
 * so that its passes read memory in order (scattered reads of the
 * coordinates took most of its time). */
typedef struct kd_rows {
	int *x;          /* row p: x[p * w .. p * w + nd), then the node */
	int nd, w;       /* w = nd + 1 */
} kd_rows;

static inline int32_t row_node(const kd_rows *R, int32_t p)
{
	return R->x[(size_t)p * (size_t)R->w + (size_t)R->nd];
}

/* rows ordered by coordinate d, then node */
static inline bool row_before(const int *a, const int *b, int d, int nd)
{
	return a[d] != b[d] ? a[d] < b[d] : a[nd] < b[nd];
}

static void row_swap(int *a, int *b, int w)
{
	for (int i = 0; i < w; i++) {
		int t = a[i];
		a[i] = b[i];
		b[i] = t;
	}
}

struct row_cmp_ctx {
	int d, nd;
};

static int row_cmp(const void *x, const void *y, void *arg)
{
	const struct row_cmp_ctx *k = arg;
	return row_before(x, y, k->d, k->nd) ? -1 : row_before(y, x, k->d, k->nd);
}

/* Rows lo..hi) rearranged so that row kth is where sorting them by
 * coordinate d would put it, the rows before it no later and the rows
 * after no earlier (quickselect).  A split only needs its halves as sets,
 * and the order is total, so the tree is the one full sorts would build,
 * in O(n) a level instead of O(n log n) (the sorts took about 60 of
 * greedy's 113 ms of set-up on 79,488 nodes).  A range that shrinks too
 * slowly is sorted instead, which bounds the worst case. */
static void kd_select(kd_rows *R, int32_t lo, int32_t hi, int32_t kth, int d)
{
	int w = R->w, nd = R->nd;
	int pv[TP_MAX_DIMS + 1];
	hi--;
	for (int tries = 64; hi > lo; tries--) {
		if (tries == 0) {
			struct row_cmp_ctx k = { d, nd };
			qsort_r(&R->x[(size_t)lo * (size_t)w], (size_t)(hi - lo + 1),
				sizeof(int) * (size_t)w, row_cmp, &k);
			return;
		}
		/* the median of the first, middle and last rows as pivot */
		const int *x = &R->x[(size_t)lo * (size_t)w];
		const int *y = &R->x[(size_t)(lo + (hi - lo) / 2) * (size_t)w];
		const int *z = &R->x[(size_t)hi * (size_t)w];
		const int *m = row_before(x, y, d, nd)
			? (row_before(y, z, d, nd) ? y : row_before(x, z, d, nd) ? z : x)
			: (row_before(x, z, d, nd) ? x : row_before(y, z, d, nd) ? z : y);
		memcpy(pv, m, sizeof(int) * (size_t)w);
		int32_t i = lo, j = hi;
		while (i <= j) {
			while (row_before(&R->x[(size_t)i * (size_t)w], pv, d, nd))
				i++;
			while (row_before(pv, &R->x[(size_t)j * (size_t)w], d, nd))
				j--;
			if (i <= j)
				row_swap(&R->x[(size_t)i++ * (size_t)w],
					 &R->x[(size_t)j-- * (size_t)w], w);
		}
		if (kth <= j)
			hi = j;
		else if (kth >= i)
			lo = i;
		else
			return;
	}
}

static int32_t kd_build(kdtree *k, kd_rows *R, int32_t lo, int32_t hi,
			int32_t parent)
{
	int nd = R->nd;
	int32_t id = k->nt++;
	kdn *n = &k->t[id];
	n->lo = lo;
	n->hi = hi;
	n->parent = parent;
	n->left = n->right = -1;
	n->free = 0;
	n->minfree = INT32_MAX;
	for (int d = 0; d < nd; d++) {
		n->bmin[d] = INT32_MAX;
		n->bmax[d] = INT32_MIN;
	}
	for (int32_t p = lo; p < hi; p++) {
		const int *x = &R->x[(size_t)p * (size_t)R->w];
		int32_t i = x[nd];
		for (int d = 0; d < nd; d++) {
			if (x[d] < n->bmin[d])
				n->bmin[d] = x[d];
			if (x[d] > n->bmax[d])
				n->bmax[d] = x[d];
		}
		n->free += k->freeslots[i];
		if (k->freeslots[i] > 0 && i < n->minfree)
			n->minfree = i;
	}
	int sd = 0, ext = -1;
	for (int d = 0; d < nd; d++)
		if (n->bmax[d] - n->bmin[d] > ext) {
			ext = n->bmax[d] - n->bmin[d];
			sd = d;
		}
	if (hi - lo <= KD_LEAF || ext == 0) {
		for (int32_t p = lo; p < hi; p++) {
			k->perm[p] = row_node(R, p);
			k->leaf_of[k->perm[p]] = id;
		}
		return id;
	}
	int32_t mid = lo + (hi - lo) / 2;
	kd_select(R, lo, hi, mid, sd);
	int32_t l = kd_build(k, R, lo, mid, id);
	int32_t r = kd_build(k, R, mid, hi, id);
	k->t[id].left = l;   /* k->t may not move: allocated up front */
	k->t[id].right = r;
	return id;
}

static void kd_free(kdtree *k)
{
	tp__free_shells_destroy(k->shells);
	free(k->perm);
	free(k->t);
	free(k->leaf_of);
	free(k->freeslots);
}

static int kd_init(kdtree *k, const gm *c)
{
	memset(k, 0, sizeof *k);
	k->c = c;
	size_t n = (size_t)c->nn;
	k->perm = tp__malloc_array(n, sizeof(int32_t));
	k->t = tp__malloc_array(2 * n + 1, sizeof(kdn));
	k->leaf_of = tp__malloc_array(n, sizeof(int32_t));
	k->freeslots = tp__malloc_array(n, sizeof(int));
	if (!k->perm || !k->t || !k->leaf_of || !k->freeslots) {
		kd_free(k);
		return TP_ENOMEM;
	}
	kd_rows R = { NULL, c->nd, c->nd + 1 };
	R.x = tp__malloc_array(n * (size_t)R.w + 1, sizeof(int));
	if (!R.x) {
		kd_free(k);
		return TP_ENOMEM;
	}
	for (int32_t i = 0; i < c->nn; i++) {
		int *x = &R.x[(size_t)i * (size_t)R.w];
		memcpy(x, rcoord(c, i), sizeof(int) * (size_t)c->nd);
		x[c->nd] = i;
		k->freeslots[i] = c->a->slots[i];
	}
	kd_build(k, &R, 0, c->nn, -1);
	free(R.x);
	k->shells = tp__free_shells_create(c->m, c->rc, k->freeslots, c->nn);
	return 0;
}

static void kd_take(kdtree *k, int32_t i)
{
	k->freeslots[i]--;
	for (int32_t id = k->leaf_of[i]; id >= 0; id = k->t[id].parent)
		k->t[id].free--;
	if (k->shells)
		tp__free_shells_taken(k->shells, i);
	if (k->freeslots[i] > 0)
		return;
	/* node i is full: the lowest free index of its leaf, then upwards
	 * while it changes */
	kdn *n = &k->t[k->leaf_of[i]];
	int32_t m = INT32_MAX;
	for (int32_t q = n->lo; q < n->hi; q++)
		if (k->freeslots[k->perm[q]] > 0 && k->perm[q] < m)
			m = k->perm[q];
	n->minfree = m;
	for (int32_t id = n->parent; id >= 0; id = k->t[id].parent) {
		const kdn *l = &k->t[k->t[id].left], *r = &k->t[k->t[id].right];
		m = l->minfree < r->minfree ? l->minfree : r->minfree;
		if (k->t[id].minfree == m)
			break;
		k->t[id].minfree = m;
	}
}

/* Lower bound on the distance from point p to any router in the box. */
static int64_t kd_box_lb(const kdtree *k, const kdn *n, const int *p)
{
	return tp__range_lower_bound(k->c->m, p, n->bmin, n->bmax);
}

static void kd_nearest_rec(const kdtree *k, int32_t id, const int *p,
			   int64_t *best_d, int32_t *best)
{
	const kdn *n = &k->t[id];
	if (n->free <= 0)
		return;
	/* a box as near as the best can only win on a lower index */
	int64_t lb = kd_box_lb(k, n, p);
	if (lb > *best_d || (lb == *best_d && n->minfree >= *best))
		return;
	if (n->left < 0) {
		for (int32_t q = n->lo; q < n->hi; q++) {
			int32_t i = k->perm[q];
			if (k->freeslots[i] <= 0)
				continue;
			int64_t d = tp__coord_dist(k->c->m, p, rcoord(k->c, i));
			if (d < *best_d || (d == *best_d && i < *best)) {
				*best_d = d;
				*best = i;
			}
		}
		return;
	}
	int64_t ll = kd_box_lb(k, &k->t[n->left], p);
	int64_t lr = kd_box_lb(k, &k->t[n->right], p);
	if (ll <= lr) {
		kd_nearest_rec(k, n->left, p, best_d, best);
		kd_nearest_rec(k, n->right, p, best_d, best);
	} else {
		kd_nearest_rec(k, n->right, p, best_d, best);
		kd_nearest_rec(k, n->left, p, best_d, best);
	}
}

/* Free node nearest to router coordinates p (ties: lower index), -1 if
 * none.  `known` (or -1) is a free node already at hand: the search only
 * looks for better, and most boxes are then left out at once. */
static int32_t kd_nearest(const kdtree *k, const int *p, int32_t known)
{
	int64_t best_d = INT64_MAX;
	int32_t best = -1;
	if (known >= 0) {
		best = known;
		best_d = tp__coord_dist(k->c->m, p, rcoord(k->c, known));
	}
	if (k->shells && tp__free_shells_nearest(k->shells, p, &best, &best_d,
						 SHELL_READS))
		return best;
	if (k->c->nn > 0)
		kd_nearest_rec(k, 0, p, &best_d, &best);
	return best;
}

/* Router coordinates of a point given in seam-shifted space. */
static void shifted_to_raw(const gm *c, const double *x, int *p)
{
	for (int d = 0; d < c->nd; d++) {
		long v = lround(x[d]);
		int D = c->m->dims[d];
		if (c->m->wrap[d]) {
			v %= D;
			if (v < 0)
				v += D;
		} else if (v < 0) {
			v = 0;
		} else if (v >= D) {
			v = D - 1;
		}
		p[d] = (int)v;
	}
}

/* ------------------------------------------------------------------------ */
/* Indexed max-heap of unmapped tasks keyed by bytes to mapped tasks         */

typedef struct heap {
	int32_t *h, *pos;
	double *key;
	int32_t n;
} heap;

static bool heap_above(const heap *q, int32_t a, int32_t b)
{
	if (q->key[a] != q->key[b])
		return q->key[a] > q->key[b];
	return a < b;
}

static void heap_swap(heap *q, int32_t i, int32_t j)
{
	int32_t a = q->h[i], b = q->h[j];
	q->h[i] = b;
	q->h[j] = a;
	q->pos[b] = i;
	q->pos[a] = j;
}

static void heap_up(heap *q, int32_t i)
{
	while (i > 0) {
		int32_t p = (i - 1) / 2;
		if (!heap_above(q, q->h[i], q->h[p]))
			break;
		heap_swap(q, i, p);
		i = p;
	}
}

static void heap_down(heap *q, int32_t i)
{
	for (;;) {
		int32_t l = 2 * i + 1, r = l + 1, b = i;
		if (l < q->n && heap_above(q, q->h[l], q->h[b]))
			b = l;
		if (r < q->n && heap_above(q, q->h[r], q->h[b]))
			b = r;
		if (b == i)
			return;
		heap_swap(q, i, b);
		i = b;
	}
}

static void heap_raise(heap *q, int32_t t, double add)
{
	q->key[t] += add;
	if (q->pos[t] < 0) {
		q->h[q->n] = t;
		q->pos[t] = q->n++;
	}
	heap_up(q, q->pos[t]);
}

static int32_t heap_pop(heap *q)
{
	int32_t t = q->h[0];
	heap_swap(q, 0, --q->n);
	q->pos[t] = -2;   /* taken */
	heap_down(q, 0);
	return t;
}

/* ------------------------------------------------------------------------ */
/* Greedy growth                                                             */

typedef struct tw {
	double w;
	int32_t t;
} tw;

/* a before b: heavier, then the lower task */
static bool tw_before(const tw *a, const tw *b)
{
	return a->w != b->w ? a->w > b->w : a->t < b->t;
}

static void tw_sift_down(tw *h, int32_t n, int32_t i)
{
	for (;;) {
		int32_t l = 2 * i + 1, b = i;
		if (l < n && tw_before(&h[l], &h[b]))
			b = l;
		if (l + 1 < n && tw_before(&h[l + 1], &h[b]))
			b = l + 1;
		if (b == i)
			return;
		tw t = h[i];
		h[i] = h[b];
		h[b] = t;
		i = b;
	}
}

/* The seeds of greedy's components, heaviest first: a heap built in O(n)
 * and popped only when a component is done (once on a connected graph),
 * where sorting every task took 30 ms of a 318k-task launch. */
static void tw_heapify(tw *h, int32_t n)
{
	for (int32_t i = n / 2 - 1; i >= 0; i--)
		tw_sift_down(h, n, i);
}

static tw tw_pop(tw *h, int32_t *n)
{
	tw top = h[0];
	h[0] = h[--*n];
	tw_sift_down(h, *n, 0);
	return top;
}

/* Cost of putting task t on node q against its mapped neighbours. */
static double place_cost(const gm *c, const int32_t *map, int32_t t, int32_t q)
{
	const struct tp_graph *g = c->g;
	double s = 0.0;
	for (int64_t e = g->xadj[t]; e < g->xadj[t + 1]; e++) {
		int32_t u = g->adjncy[e];
		if (map[u] >= 0)
			s += tp__graph_w(g, e) * (double)ndist(c, q, map[u]);
	}
	return s;
}

static int32_t greedy_choose(const gm *c, const kdtree *k, const int32_t *map,
			     int32_t t)
{
	const struct tp_graph *g = c->g;
	int nd = c->nd;
	double cen[TP_MAX_DIMS] = { 0 }, wsum = 0.0;
	int cnt = 0;
	for (int64_t e = g->xadj[t]; e < g->xadj[t + 1]; e++) {
		int32_t u = g->adjncy[e];
		if (map[u] < 0)
			continue;
		double w = tp__graph_w(g, e);
		const int *x = &c->sc[(size_t)map[u] * (size_t)nd];
		for (int d = 0; d < nd; d++)
			cen[d] += w * x[d];
		wsum += w;
		cnt++;
	}
	if (wsum <= 0.0) {   /* zero-byte edges: unweighted centroid */
		memset(cen, 0, sizeof cen);
		for (int64_t e = g->xadj[t]; e < g->xadj[t + 1]; e++) {
			int32_t u = g->adjncy[e];
			if (map[u] < 0)
				continue;
			const int *x = &c->sc[(size_t)map[u] * (size_t)nd];
			for (int d = 0; d < nd; d++)
				cen[d] += x[d];
		}
		wsum = cnt > 0 ? cnt : 1;
	}
	for (int d = 0; d < nd; d++)
		cen[d] /= wsum;
	int p[TP_MAX_DIMS];
	shifted_to_raw(c, cen, p);
	/* the nearest of the neighbours' nodes with a free slot starts the
	 * search for the nearest free node */
	int32_t known = -1;
	int64_t known_d = INT64_MAX;
	for (int64_t e = g->xadj[t]; e < g->xadj[t + 1]; e++) {
		int32_t q = map[g->adjncy[e]];
		if (q < 0 || k->freeslots[q] <= 0)
			continue;
		int64_t d = tp__coord_dist(c->m, p, rcoord(c, q));
		if (d < known_d || (d == known_d && q < known)) {
			known_d = d;
			known = q;
		}
	}
	int32_t best = kd_nearest(k, p, known);
	double best_cost = place_cost(c, map, t, best);
	int64_t best_d = tp__coord_dist(c->m, p, rcoord(c, best));
	int tried = 0;
	for (int64_t e = g->xadj[t]; e < g->xadj[t + 1] && tried < NEIGH_CANDIDATES; e++) {
		int32_t u = g->adjncy[e];
		if (map[u] < 0 || k->freeslots[map[u]] <= 0 || map[u] == best)
			continue;
		tried++;
		int32_t q = map[u];
		double cost = place_cost(c, map, t, q);
		int64_t dq = tp__coord_dist(c->m, p, rcoord(c, q));
		if (cost < best_cost ||
		    (cost == best_cost && (dq < best_d || (dq == best_d && q < best)))) {
			best = q;
			best_cost = cost;
			best_d = dq;
		}
	}
	return best;
}

static int greedy_run(gm *c, int32_t *map)
{
	const struct tp_graph *g = c->g;
	int32_t nt = c->nt;
	kdtree k;
	heap q = { 0 };
	tw *order = tp__malloc_array((size_t)nt + 1, sizeof(tw));
	q.h = tp__malloc_array((size_t)nt + 1, sizeof(int32_t));
	q.pos = tp__malloc_array((size_t)nt + 1, sizeof(int32_t));
	q.key = tp__calloc((size_t)nt + 1, sizeof(double));
	if (!order || !q.h || !q.pos || !q.key || kd_init(&k, c) < 0) {
		free(order);
		free(q.h);
		free(q.pos);
		free(q.key);
		return TP_ENOMEM;
	}
	for (int32_t t = 0; t < nt; t++) {
		map[t] = -1;
		q.pos[t] = -1;
		order[t].w = task_bytes(g, t);
		order[t].t = t;
	}
	int32_t nseeds = nt;
	tw_heapify(order, nseeds);

	/* the allocation's centre, in router coordinates */
	double cen[TP_MAX_DIMS] = { 0 };
	for (int32_t i = 0; i < c->nn; i++)
		for (int d = 0; d < c->nd; d++)
			cen[d] += c->sc[(size_t)i * (size_t)c->nd + (size_t)d];
	for (int d = 0; d < c->nd; d++)
		cen[d] /= c->nn > 0 ? c->nn : 1;
	int seedp[TP_MAX_DIMS];
	shifted_to_raw(c, cen, seedp);

	int rc = 0;
	double t0 = tp__now_ms();
	for (int32_t done = 0; done < nt; done++) {
		int32_t t, node;
		if ((done & 127) == 127 && c->deadline > 0) {
			/* a run that cannot finish in time stops as soon as
			 * that shows, and leaves the rest of the budget to
			 * the other candidates: the nearest-node searches
			 * are cheap on tori but tens of times dearer on
			 * switch trees and dragonflies, whose distances
			 * bound the k-d tree's boxes poorly */
			double now = tp__now_ms();
			double whole = (now - t0) * (double)nt / (double)(done + 1);
			/* early on, only by a clear margin: the first tasks
			 * also pay for the memory they touch first */
			bool over = done >= nt / 16 ? t0 + whole > c->deadline
						    : t0 + whole / 1.5 > c->deadline;
			if (now > c->deadline ||
			    (done >= 255 && done >= nt / 64 && over)) {
				c->projected_ms = now > c->deadline ? 0 : whole;
				rc = TP_ETIME;
				break;
			}
		}
		if (q.n == 0) {
			/* an unplaced task is left: done < nt */
			do
				t = tw_pop(order, &nseeds).t;
			while (map[t] >= 0);
			q.pos[t] = -2;
			node = kd_nearest(&k, seedp, -1);
		} else {
			t = heap_pop(&q);
			node = greedy_choose(c, &k, map, t);
		}
		map[t] = node;
		kd_take(&k, node);
		/* a new component later starts next to the last placed task */
		memcpy(seedp, rcoord(c, node), sizeof(int) * (size_t)c->nd);
		for (int64_t e = g->xadj[t]; e < g->xadj[t + 1]; e++) {
			int32_t u = g->adjncy[e];
			if (map[u] < 0)
				heap_raise(&q, u, tp__graph_w(g, e));
		}
	}
	kd_free(&k);
	free(order);
	free(q.h);
	free(q.pos);
	free(q.key);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* Refinement                                                                */

/* Weight of edge t-s (0 when absent): neighbour lists are sorted. */
static double edge_w(const struct tp_graph *g, int32_t t, int32_t s)
{
	int64_t lo = g->xadj[t], hi = g->xadj[t + 1];
	while (lo < hi) {
		int64_t mid = lo + (hi - lo) / 2;
		if (g->adjncy[mid] < s)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < g->xadj[t + 1] && g->adjncy[lo] == s ? tp__graph_w(g, lo) : 0.0;
}

/* Bytes times hops of t's edges with t on node q: on its own node, its
 * share of the hop-bytes. */
static double cost_at(const gm *c, const int32_t *map, int32_t t, int32_t q)
{
	const struct tp_graph *g = c->g;
	double s = 0.0;
	for (int64_t e = g->xadj[t]; e < g->xadj[t + 1]; e++)
		s += tp__graph_w(g, e) * (double)ndist(c, q, map[g->adjncy[e]]);
	return s;
}

/* Which slot of its node each task holds, for the refinements' moves:
 * node i's slots are off[i] .. off[i+1]-1, used[i] of them taken. */
typedef struct slot_table {
	int64_t *off;
	int32_t *used, *slot_task, *task_slot;
} slot_table;

static void slots_free(slot_table *st)
{
	free(st->off);
	free(st->used);
	free(st->slot_task);
	free(st->task_slot);
	memset(st, 0, sizeof *st);
}

static int slots_init(slot_table *st, const struct tp_alloc *a,
		      const int32_t *map, int32_t nt)
{
	int32_t nn = a->nnodes;
	int64_t S = a->total_slots;
	st->off = tp__malloc_array((size_t)nn + 1, sizeof(int64_t));
	st->used = tp__calloc((size_t)nn + 1, sizeof(int32_t));
	st->slot_task = tp__malloc_array((size_t)S + 1, sizeof(int32_t));
	st->task_slot = tp__malloc_array((size_t)nt + 1, sizeof(int32_t));
	if (!st->off || !st->used || !st->slot_task || !st->task_slot) {
		slots_free(st);
		return TP_ENOMEM;
	}
	st->off[0] = 0;
	for (int32_t i = 0; i < nn; i++)
		st->off[i + 1] = st->off[i] + a->slots[i];
	for (int64_t x = 0; x < S; x++)
		st->slot_task[x] = -1;
	for (int32_t t = 0; t < nt; t++) {
		int32_t i = map[t];
		int64_t x = st->off[i] + st->used[i]++;
		st->slot_task[x] = t;
		st->task_slot[t] = (int32_t)(x - st->off[i]);
	}
	return 0;
}

/* Task t leaves node p for node q: into a free slot of q (s < 0), or
 * trading slots with task s of q.  The caller updates map. */
static void slots_move(slot_table *st, int32_t t, int32_t p, int32_t q,
		       int32_t s)
{
	int64_t sp = st->off[p] + st->task_slot[t];
	if (s < 0) {
		int64_t sq = st->off[q];
		while (st->slot_task[sq] >= 0)
			sq++;
		st->slot_task[sp] = -1;
		st->slot_task[sq] = t;
		st->task_slot[t] = (int32_t)(sq - st->off[q]);
		st->used[p]--;
		st->used[q]++;
	} else {
		int64_t sq = st->off[q] + st->task_slot[s];
		st->slot_task[sp] = s;
		st->slot_task[sq] = t;
		int32_t tmp = st->task_slot[t];
		st->task_slot[t] = st->task_slot[s];
		st->task_slot[s] = tmp;
	}
}

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

/* t has moved: its neighbours' costs and its own are brought up to date,
 * and its neighbours are listed for the next round. */
static void task_moved(refiner *r, int32_t t)
{
	const gm *c = r->c;
	const struct tp_graph *g = c->g;
	for (int64_t e = g->xadj[t]; e < g->xadj[t + 1]; e++) {
		int32_t u = g->adjncy[e];
		r->cost[u] = cost_at(c, r->map, u, r->map[u]);
		r->mark[u] = 1;
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
	slots_move(&r->st, t, p, q, s);
	map[t] = q;
	if (s >= 0)
		map[s] = p;
	task_moved(r, t);
	if (s >= 0)
		task_moved(r, s);
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
	slots_free(&r->st);
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
	int rc = slots_init(&r.st, c->a, map, nt);
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
			if (budget_over(t0, o->time_budget_ms))
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
		if ((k & 1023) == 1023 && budget_over(t0, budget)) {
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
static int refine_run(const gm *c, const tp_graphmap_opts *o, int32_t *map,
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
		cc.threads = c->threads;
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

/* ------------------------------------------------------------------------ */
/* Congestion refinement                                                     */

/* Routes between allocation nodes, kept as they are asked for: a trial
 * routes every edge of the tasks it moves, out and back (each task's
 * edges again for every node it tries), and on trees and dragonflies
 * routing was half the refinement's time.  Open addressing on (i, j);
 * past ROUTE_CACHE_LANES lanes kept, routes are computed again. */
#define ROUTE_CACHE_LANES ((size_t)1 << 21)

/* A lane of a route and a byte's weight on it. */
struct lane_w {
	int64_t l;
	double w;
};

struct route_ent {
	int64_t key;             /* i * nodes + j, -1: empty */
	int64_t off;             /* its lanes in pool */
	int32_t len;
};

/* Up to ROUTE_DENSE_NODES allocation nodes, every pair has its place
 * (8 MB at most, and no hashing); above, the table is hashed. */
#define ROUTE_DENSE_NODES 1024

struct route_at {
	int32_t off, len;        /* off -1: not kept */
};

struct route_cache {
	struct route_at *dense;  /* i * nodes + j */
	struct route_ent *e;
	size_t cap, used;        /* cap: a power of two */
	struct lane_w *pool;
	size_t npool, poolcap;
};

static void route_cache_free(struct route_cache *c)
{
	free(c->dense);
	free(c->e);
	free(c->pool);
	memset(c, 0, sizeof *c);
}

/* The dense table where the nodes are few enough (none: hashed). */
static void route_cache_init(struct route_cache *c, int32_t nodes)
{
	memset(c, 0, sizeof *c);
	if (nodes > ROUTE_DENSE_NODES)
		return;
	size_t n = (size_t)nodes * (size_t)nodes + 1;
	if ((c->dense = tp__malloc_array(n, sizeof *c->dense)))
		for (size_t k = 0; k < n; k++)
			c->dense[k].off = -1;
}

/* The slot of key, or of the empty place where it goes. */
static size_t route_cache_slot(const struct route_cache *c, int64_t key)
{
	size_t h = (size_t)tp__mix64((uint64_t)key) & (c->cap - 1);
	while (c->e[h].key >= 0 && c->e[h].key != key)
		h = (h + 1) & (c->cap - 1);
	return h;
}

/* Doubles the table (at least 4,096 slots); false when out of memory
 * (the cache then stays as it is). */
static bool route_cache_grow(struct route_cache *c)
{
	size_t ncap = c->cap ? 2 * c->cap : 4096;
	struct route_cache n = { .cap = ncap, .used = c->used, .pool = c->pool,
				 .npool = c->npool, .poolcap = c->poolcap };
	if (!(n.e = tp__malloc_array(ncap, sizeof *n.e)))
		return false;
	for (size_t k = 0; k < ncap; k++)
		n.e[k].key = -1;
	for (size_t k = 0; k < c->cap; k++)
		if (c->e[k].key >= 0)
			n.e[route_cache_slot(&n, c->e[k].key)] = c->e[k];
	free(c->e);
	*c = n;
	return true;
}

/* Keeps the route of len lanes under key when there is room. */
static void route_cache_put(struct route_cache *c, int64_t key,
			    const struct lane_w *lanes, int len)
{
	if (c->npool + (size_t)len > ROUTE_CACHE_LANES ||
	    (!c->dense && 2 * (c->used + 1) > c->cap && !route_cache_grow(c)))
		return;
	if (c->npool + (size_t)len > c->poolcap) {
		size_t np = c->poolcap ? 2 * c->poolcap : 16384;
		while (np < c->npool + (size_t)len)
			np *= 2;
		struct lane_w *p = realloc(c->pool, np * sizeof *p);
		if (!p)
			return;
		c->pool = p;
		c->poolcap = np;
	}
	if (c->dense) {
		c->dense[key] = (struct route_at){ (int32_t)c->npool, len };
	} else {
		size_t h = route_cache_slot(c, key);
		c->e[h] = (struct route_ent){ key, (int64_t)c->npool, len };
		c->used++;
	}
	if (len > 0)   /* a route of no lanes: the pool may not exist yet */
		memcpy(c->pool + c->npool, lanes, (size_t)len * sizeof *lanes);
	c->npool += (size_t)len;
}

/* A link's (or lane's) load, and the trial that last touched it. */
struct link_load {
	double load;
	int64_t stamp, sub;
};

typedef struct cref {
	const gm *c;
	int32_t *map;
	struct link_load *ll;    /* per link */
	int64_t nl;
	int64_t *route;
	struct lane_w *routew;   /* route with its weights */
	int cap;
	const struct lane_w *rt; /* the last route (cr_route): in routew or
				    in the cache */
	struct route_cache rc;
	bool over;               /* the current trial's additions took a
				    link past the largest load */
	/* a task's moves share its edges' removal (cr_improve_task): each
	 * move is a sub-trial, undone back to that removal */
	bool in_sub;
	int64_t sub;             /* sub-trial number */
	int64_t *sl;             /* links it changed */
	double *sl_old;          /* their loads before it */
	int64_t nsl, slcap;
	int64_t *tl;             /* touched links of the current trial */
	double *tl_old;          /* their loads before it */
	int64_t ntl, tlcap;
	int64_t trial;
	slot_table st;           /* who sits in which slot */
	char *hot;               /* per task: has an edge on a most-loaded link */
	int32_t *cand;           /* candidate nodes of the current task */
	int64_t *nstamp;         /* per node: candidate round when listed */
	int64_t ns;
	double M;                /* the largest link load */
	int64_t nmax;            /* links carrying it */
	double Mref;             /* the largest load at the start: scale of
				    the potential */
	double hot_at;           /* tasks with a message over a link this
				    loaded are tried */
	double dhop;             /* hop-bytes change of the current trial */
	bool keep_hops;          /* refuse moves that raise hop-bytes */
	int64_t moves;
	double *lw;              /* lanes (the time model's fabric,
				    predict_internal.h): per lane 1 /
				    bandwidth; NULL: the machine's links */
	double hop_weight;       /* lanes: see gm */
	int64_t *tstamp;         /* per task: node trades' edge counting */
	int64_t ts;
	int32_t *swap_set;       /* the tasks of the two nodes traded */
	int32_t *by_router;      /* nodes in router-coordinate order */
	int32_t *router_pos;     /* node -> its place there */
	int32_t *tcand;          /* a node's trade partners */
} cref;

/* A byte's weight on link (or lane) l. */
static double cr_weight(const cref *cr, int64_t l)
{
	return cr->lw ? cr->lw[l] : tp__link_weight(cr->c->a->m, l);
}

/* Route between allocation nodes i and j into cr->rt (cached, or in
 * cr->route, grown as needed); returns the length or a negative code. */
static int cr_route(cref *cr, int32_t i, int32_t j)
{
	const struct tp_alloc *a = cr->c->a;
	int64_t key = (int64_t)i * cr->c->nn + j;
	if (cr->rc.dense) {
		struct route_at at = cr->rc.dense[key];
		if (at.off >= 0) {
			cr->rt = at.len ? cr->rc.pool + at.off : cr->routew;
			return at.len;
		}
	} else if (cr->rc.cap) {
		const struct route_ent *e = &cr->rc.e[route_cache_slot(&cr->rc, key)];
		if (e->key == key) {
			cr->rt = e->len ? cr->rc.pool + e->off : cr->routew;
			return e->len;
		}
	}
	for (;;) {
		int n = cr->lw ? tp__fabric_route(a->m, a->node[i], a->node[j],
						  cr->route, cr->cap)
			       : tp_machine_route(a->m, a->node[i], a->node[j],
						  cr->route, cr->cap);
		if (n >= 0) {
			for (int k = 0; k < n; k++)
				cr->routew[k] = (struct lane_w){ cr->route[k],
					cr->route[k] >= 0 && cr->route[k] < cr->nl
					? cr_weight(cr, cr->route[k]) : 0 };
			route_cache_put(&cr->rc, key, cr->routew, n);
			cr->rt = cr->routew;
			return n;
		}
		if (cr->cap >= (1 << 20))
			return n;
		int64_t *nr = realloc(cr->route, sizeof(int64_t) * (size_t)cr->cap * 2);
		if (!nr)
			return TP_ENOMEM;
		cr->route = nr;
		struct lane_w *nw = realloc(cr->routew, sizeof *nw * (size_t)cr->cap * 2);
		if (!nw)
			return TP_ENOMEM;
		cr->routew = nw;
		cr->cap *= 2;
	}
}

/* Add sign * bytes of the message from allocation node i to node j to the
 * loads, remembering every link touched in this trial and its load
 * before. */
static int cr_message(cref *cr, int32_t i, int32_t j, double bytes)
{
	int n = cr_route(cr, i, j);
	if (n < 0)
		return n;
	bytes *= 1 + cr->hop_weight * n;
	double past = cr->M + 1e-9 * cr->M;   /* as cr_accept judges it */
	for (int k = 0; k < n; k++) {
		int64_t l = cr->rt[k].l;
		if (l < 0 || l >= cr->nl)
			return TP_EINVAL;
		struct link_load *x = &cr->ll[l];
		if (x->stamp != cr->trial) {
			if (cr->ntl == cr->tlcap) {
				int64_t nc = cr->tlcap * 2;
				int64_t *a1 = realloc(cr->tl, sizeof(int64_t) * (size_t)nc);
				if (!a1)
					return TP_ENOMEM;
				cr->tl = a1;
				double *a2 = realloc(cr->tl_old, sizeof(double) * (size_t)nc);
				if (!a2)
					return TP_ENOMEM;
				cr->tl_old = a2;
				cr->tlcap = nc;
			}
			x->stamp = cr->trial;
			cr->tl[cr->ntl] = l;
			cr->tl_old[cr->ntl++] = x->load;
		}
		if (cr->in_sub && x->sub != cr->sub) {
			if (cr->nsl == cr->slcap) {
				int64_t nc = cr->slcap ? cr->slcap * 2 : 256;
				int64_t *a1 = realloc(cr->sl, sizeof(int64_t) * (size_t)nc);
				if (!a1)
					return TP_ENOMEM;
				cr->sl = a1;
				double *a2 = realloc(cr->sl_old, sizeof(double) * (size_t)nc);
				if (!a2)
					return TP_ENOMEM;
				cr->sl_old = a2;
				cr->slcap = nc;
			}
			x->sub = cr->sub;
			cr->sl[cr->nsl] = l;
			cr->sl_old[cr->nsl++] = x->load;
		}
		x->load += bytes * cr->rt[k].w;
		if (bytes > 0 && x->load > past)
			cr->over = true;
	}
	return 0;
}

/* Add sign * bytes of edge e of task t to the loads: both directions, as
 * the metrics route them. */
static int cr_edge(cref *cr, int32_t t, int64_t e, double sign)
{
	const struct tp_graph *g = cr->c->g;
	int32_t u = g->adjncy[e];
	double b = sign * tp__graph_w(g, e);
	if (cr->keep_hops)
		cr->dhop += b * (double)ndist(cr->c, cr->map[t], cr->map[u]);
	int rc = cr_message(cr, cr->map[t], cr->map[u], b);
	return rc ? rc : cr_message(cr, cr->map[u], cr->map[t], b);
}

/* The same for each of t's edges off its node but the one to skip. */
static int cr_edges(cref *cr, int32_t t, int32_t skip, double sign)
{
	const struct tp_graph *g = cr->c->g;
	for (int64_t e = g->xadj[t]; e < g->xadj[t + 1]; e++) {
		int32_t u = g->adjncy[e];
		if (u == skip || cr->map[u] == cr->map[t])
			continue;
		int rc = cr_edge(cr, t, e, sign);
		if (rc)
			return rc;
		/* past the largest load already: the rest only adds */
		if (cr->over)
			return 0;
	}
	return 0;
}

/* Max link load and how many links carry it (within eps). */
static double cr_max(const cref *cr, int64_t *count)
{
	double m = 0.0;
	for (int64_t l = 0; l < cr->nl; l++)
		if (cr->ll[l].load > m)
			m = cr->ll[l].load;
	int64_t n = 0;
	double eps = 1e-9 * m;
	for (int64_t l = 0; l < cr->nl; l++)
		if (m > 0 && cr->ll[l].load >= m - eps)
			n++;
	*count = n;
	return m;
}

static void cref_free(cref *cr)
{
	free(cr->ll);
	free(cr->routew);
	free(cr->sl);
	free(cr->sl_old);
	free(cr->route);
	route_cache_free(&cr->rc);
	free(cr->tl);
	free(cr->tl_old);
	slots_free(&cr->st);
	free(cr->hot);
	free(cr->cand);
	free(cr->nstamp);
	free(cr->lw);
	free(cr->tstamp);
	free(cr->swap_set);
	free(cr->by_router);
	free(cr->router_pos);
	free(cr->tcand);
}

/* Allocation nodes by router coordinates, then index: a switch's nodes
 * side by side on trees, dragonflies and blocks (one router coordinate
 * each), a torus' along its last dimension. */
static int cmp_router(const void *x, const void *y, void *arg)
{
	const gm *c = arg;
	int32_t i = *(const int32_t *)x, j = *(const int32_t *)y;
	const int *a = rcoord(c, i), *b = rcoord(c, j);
	for (int d = 0; d < c->nd; d++)
		if (a[d] != b[d])
			return a[d] < b[d] ? -1 : 1;
	return i < j ? -1 : i > j;
}

/* lanes: on the time model's fabric, loads in seconds (bytes /
 * bandwidth), else on the machine's links. */
static int cref_init(cref *cr, const gm *c, int32_t *map, bool lanes)
{
	const struct tp_alloc *a = c->a;
	memset(cr, 0, sizeof *cr);
	cr->c = c;
	cr->map = map;
	cr->nl = lanes ? tp__fabric_lanes(a->m) : tp_machine_link_count(a->m);
	cr->hop_weight = lanes ? c->hop_weight : 0;
	if (lanes) {
		if (!(cr->lw = tp__malloc_array((size_t)cr->nl + 1, sizeof(double))))
			return TP_ENOMEM;
		for (int64_t l = 0; l < cr->nl; l++)
			cr->lw[l] = 1.0 / tp__fabric_bandwidth(a->m, l);
	}
	cr->cap = 64;
	cr->tlcap = 256;
	route_cache_init(&cr->rc, c->nn);
	cr->ll = tp__calloc((size_t)cr->nl + 1, sizeof *cr->ll);
	cr->routew = tp__malloc_array((size_t)cr->cap, sizeof *cr->routew);
	cr->route = tp__malloc_array((size_t)cr->cap, sizeof(int64_t));
	cr->tl = tp__malloc_array((size_t)cr->tlcap, sizeof(int64_t));
	cr->tl_old = tp__malloc_array((size_t)cr->tlcap, sizeof(double));
	int rc = slots_init(&cr->st, a, map, c->nt);
	cr->hot = tp__calloc((size_t)c->nt + 1, 1);
	cr->cand = tp__malloc_array(REFINE_NODES, sizeof(int32_t));
	cr->nstamp = tp__calloc((size_t)c->nn + 1, sizeof(int64_t));
	if (rc || !cr->ll || !cr->routew || !cr->route || !cr->tl ||
	    !cr->tl_old || !cr->hot || !cr->cand || !cr->nstamp)
		return TP_ENOMEM;
	if (lanes) {
		int32_t most = 0;
		for (int32_t i = 0; i < a->nnodes; i++)
			most = a->slots[i] > most ? a->slots[i] : most;
		cr->tstamp = tp__calloc((size_t)c->nt + 1, sizeof(int64_t));
		cr->swap_set = tp__malloc_array(2 * (size_t)most + 1, sizeof(int32_t));
		cr->by_router = tp__malloc_array((size_t)c->nn + 1, sizeof(int32_t));
		cr->router_pos = tp__malloc_array((size_t)c->nn + 1, sizeof(int32_t));
		cr->tcand = tp__malloc_array(TRADE_NEIGHBOURS + 2 * TRADE_WINDOW,
					     sizeof(int32_t));
		if (!cr->tstamp || !cr->swap_set || !cr->by_router ||
		    !cr->router_pos || !cr->tcand)
			return TP_ENOMEM;
		for (int32_t i = 0; i < c->nn; i++)
			cr->by_router[i] = i;
		qsort_r(cr->by_router, (size_t)c->nn, sizeof(int32_t), cmp_router,
			(void *)c);
		for (int32_t k = 0; k < c->nn; k++)
			cr->router_pos[cr->by_router[k]] = k;
	}
	return 0;
}

/* Link loads of the whole mapping: every message, t to each neighbour. */
/* The loads of every link; TP_ETIME when the budget runs out first (routing
 * every message costs as much as the refinement's first pass). */
static int cr_load_all(cref *cr, double t0, double budget)
{
	const struct tp_graph *g = cr->c->g;
	const int32_t *map = cr->map;
	for (int32_t t = 0; t < cr->c->nt; t++) {
		if ((t & 255) == 255 && budget_over(t0, budget))
			return TP_ETIME;
		for (int64_t e = g->xadj[t]; e < g->xadj[t + 1]; e++) {
			int32_t u = g->adjncy[e];
			if (map[u] == map[t])
				continue;
			int n = cr_route(cr, map[t], map[u]);
			if (n < 0)
				return n;
			double b = tp__graph_w(g, e) * (1 + cr->hop_weight * n);
			for (int k = 0; k < n; k++)
				cr->ll[cr->rt[k].l].load += b * cr->rt[k].w;
		}
	}
	return 0;
}

/* Mark the tasks with a message across a link loaded at least hot_at
 * (near the maximum: relieving those makes room for the maximum). */
static int cr_mark_hot(cref *cr)
{
	const struct tp_graph *g = cr->c->g;
	const int32_t *map = cr->map;
	char *hot = cr->hot;
	double eps = 1e-9 * cr->M;
	cr->hot_at = HOT_SHARE * cr->M - eps;
	memset(hot, 0, (size_t)cr->c->nt);
	/* each message t -> u (both directions appear, in t's and u's lists) */
	for (int32_t t = 0; t < cr->c->nt; t++)
		for (int64_t e = g->xadj[t]; e < g->xadj[t + 1]; e++) {
			int32_t u = g->adjncy[e];
			if (map[u] == map[t] || (hot[t] && hot[u]))
				continue;
			int n = cr_route(cr, map[t], map[u]);
			if (n < 0)
				return n;
			for (int k = 0; k < n; k++)
				if (cr->ll[cr->rt[k].l].load >= cr->hot_at) {
					hot[t] = hot[u] = 1;
					break;
				}
		}
	return 0;
}

/* The nodes of t's neighbours other than its own node p, at most
 * REFINE_NODES, into cr->cand; returns how many. */
static int cr_candidates(cref *cr, int32_t t, int32_t p)
{
	const struct tp_graph *g = cr->c->g;
	int ncand = 0;
	cr->ns++;
	cr->nstamp[p] = cr->ns;
	for (int64_t e = g->xadj[t]; e < g->xadj[t + 1] && ncand < REFINE_NODES; e++) {
		int32_t q = cr->map[g->adjncy[e]];
		if (cr->nstamp[q] != cr->ns) {
			cr->nstamp[q] = cr->ns;
			cr->cand[ncand++] = q;
		}
	}
	return ncand;
}

/* The potential the refinement lowers: sum over the touched links of
 * (load / Mref)^8.  The eighth power makes the heaviest links dominate, so
 * lowering it relieves the maximum first, yet a move that only lightens
 * links just below the maximum also counts (it makes room). */
static double cr_potential(double load, double Mref)
{
	double x = load / Mref, x2 = x * x, x4 = x2 * x2;
	return x4 * x4;
}

/* The current trial's touched loads judged (ok: its other terms hold):
 * true, and the maximum's count kept up, when no touched link ends above
 * the largest load and the potential drops; the caller then commits it,
 * or else undoes it (cr_undo). */
static bool cr_accept(cref *cr, bool ok)
{
	double eps = 1e-9 * cr->M, dphi = 0;
	int64_t freed = 0, reached = 0;
	for (int64_t k = 0; k < cr->ntl && ok; k++) {
		double now = cr->ll[cr->tl[k]].load, was = cr->tl_old[k];
		if (now > cr->M + eps)
			ok = false;
		dphi += cr_potential(now, cr->Mref) - cr_potential(was, cr->Mref);
		freed += was >= cr->M - eps && now < cr->M - eps;
		reached += was < cr->M - eps && now >= cr->M - eps;
	}
	if (!ok || dphi >= -1e-12)
		return false;
	cr->moves++;
	cr->nmax += reached - freed;
	if (cr->nmax <= 0)
		cr->M = cr_max(cr, &cr->nmax);
	return true;
}

/* The current trial's loads put back. */
static void cr_undo(cref *cr)
{
	for (int64_t k = 0; k < cr->ntl; k++)
		cr->ll[cr->tl[k]].load = cr->tl_old[k];
}

/* A sub-trial's changes undone, back to its task's removal (the nbase
 * links touched then). */
static void cr_sub_undo(cref *cr, int64_t nbase)
{
	for (int64_t k = cr->nsl - 1; k >= 0; k--)
		cr->ll[cr->sl[k]].load = cr->sl_old[k];
	for (int64_t k = nbase; k < cr->ntl; k++)
		cr->ll[cr->tl[k]].stamp = -1;
	cr->ntl = nbase;
}

/* One trial: t, whose edges are already off p (cr_improve_task: the nbase
 * links touched, dhop0 their hop-bytes), moves to q, into a free slot
 * (s2 < 0) or trading places with s2.  Kept (*kept = true) when no touched
 * link ends above the largest load, the potential drops, and (keep_hops)
 * hop-bytes do not grow; otherwise undone back to t's removal.  So the
 * maximum never grows and the potential falls with every move: the
 * refinement ends.  The loads are summed in the order of a trial that
 * removed t's edges itself: the same result. */
static int cr_try_move(cref *cr, int32_t t, int32_t p, int32_t q, int32_t s2,
		       int64_t nbase, double dhop0, bool *kept)
{
	int32_t *map = cr->map;
	int rc = 0;
	*kept = false;
	cr->sub++;
	cr->nsl = 0;
	cr->in_sub = true;
	cr->over = false;
	cr->dhop = dhop0;
	/* the edge t-s2 counts once, with t */
	if (s2 >= 0 && (rc = cr_edges(cr, s2, t, -1.0)))
		goto out;
	map[t] = q;
	if (s2 >= 0)
		map[s2] = p;
	if ((rc = cr_edges(cr, t, -1, 1.0)) ||
	    (s2 >= 0 && !cr->over && (rc = cr_edges(cr, s2, t, 1.0))))
		goto out;
	if (cr_accept(cr, !cr->over &&
			  (!cr->keep_hops ||
			   cr->dhop <= 1e-12 * (cr->c->g->total_bytes + 1.0)))) {
		slots_move(&cr->st, t, p, q, s2);
		*kept = true;
		goto out;
	}
	map[t] = p;
	if (s2 >= 0)
		map[s2] = q;
	cr_sub_undo(cr, nbase);
out:
	cr->in_sub = false;
	return rc;
}

/* Try t's moves to the nodes of its neighbours (a free slot first, then
 * swaps with up to REFINE_SWAPS tasks there) until one is kept.  t's edges
 * leave p once for all of them. */
static int cr_improve_task(cref *cr, int32_t t)
{
	const struct tp_alloc *a = cr->c->a;
	const int64_t *off = cr->st.off;
	int32_t p = cr->map[t];
	int ncand = cr_candidates(cr, t, p);
	if (ncand == 0)
		return 0;
	cr->trial++;
	cr->ntl = 0;
	cr->dhop = 0;
	cr->over = false;
	int rc = cr_edges(cr, t, -1, -1.0);
	if (rc)
		return rc;
	int64_t nbase = cr->ntl;
	double dhop0 = cr->dhop;
	bool done_t = false;
	for (int ci = 0; ci < ncand && !done_t; ci++) {
		int32_t q = cr->cand[ci];
		int scanned = 0;
		/* s = -1: move into a free slot of q; else swap with s */
		for (int64_t x = cr->st.used[q] < a->slots[q] ? off[q] - 1 : off[q];
		     x < off[q + 1] && scanned < REFINE_SWAPS && !done_t; x++) {
			int32_t s2 = x < off[q] ? -1 : cr->st.slot_task[x];
			if (x >= off[q] && s2 < 0)
				continue;
			scanned++;
			if ((rc = cr_try_move(cr, t, p, q, s2, nbase, dhop0, &done_t)))
				return rc;
		}
	}
	if (!done_t)
		cr_undo(cr);   /* t's edges back as they were */
	return 0;
}

/* Add sign * bytes of the edges of the swap set's n tasks to the loads,
 * each edge once (an edge inside the set with the first of its ends). */
static int cr_set_edges(cref *cr, int n, double sign)
{
	const struct tp_graph *g = cr->c->g;
	int64_t mark = ++cr->ts;
	for (int k = 0; k < n; k++) {
		int32_t t = cr->swap_set[k];
		for (int64_t e = g->xadj[t]; e < g->xadj[t + 1]; e++) {
			int32_t u = g->adjncy[e];
			if (cr->tstamp[u] == mark || cr->map[u] == cr->map[t])
				continue;
			int rc = cr_edge(cr, t, e, sign);
			if (rc)
				return rc;
			if (cr->over)
				return 0;   /* past the largest load: the rest only adds */
		}
		cr->tstamp[t] = mark;
	}
	return 0;
}

/* The tasks of nodes p and q into cr->swap_set, p's first; returns how
 * many. */
static int trade_set(cref *cr, int32_t p, int32_t q)
{
	const slot_table *st = &cr->st;
	int n = 0;
	for (int64_t x = st->off[p]; x < st->off[p + 1]; x++)
		if (st->slot_task[x] >= 0)
			cr->swap_set[n++] = st->slot_task[x];
	for (int64_t x = st->off[q]; x < st->off[q + 1]; x++)
		if (st->slot_task[x] >= 0)
			cr->swap_set[n++] = st->slot_task[x];
	return n;
}

/* Nodes p and q trade all their tasks, the n of cr->swap_set (trade_set):
 * each goes to the other node's slots from the first. */
static void cr_trade(cref *cr, int32_t p, int32_t q, int n)
{
	slot_table *st = &cr->st;
	int32_t np = st->used[p], nq = st->used[q];
	for (int64_t x = st->off[p]; x < st->off[p + 1]; x++)
		st->slot_task[x] = -1;
	for (int64_t x = st->off[q]; x < st->off[q + 1]; x++)
		st->slot_task[x] = -1;
	for (int k = 0; k < n; k++) {
		int32_t t = cr->swap_set[k], to = k < np ? q : p;
		int32_t i = k < np ? k : k - np;
		st->slot_task[st->off[to] + i] = t;
		st->task_slot[t] = i;
		cr->map[t] = to;
	}
	st->used[p] = nq;
	st->used[q] = np;
}

/* The hop-bytes change of nodes p and q trading their n tasks (in
 * cr->swap_set, p's first): edges between the two nodes keep their
 * length, the others' far ends stay. */
static double trade_hops(const cref *cr, int32_t p, int32_t q, int n)
{
	const struct tp_graph *g = cr->c->g;
	double d = 0;
	for (int k = 0; k < n; k++) {
		int32_t t = cr->swap_set[k], from = cr->map[t], to = from == p ? q : p;
		for (int64_t e = g->xadj[t]; e < g->xadj[t + 1]; e++) {
			int32_t v = cr->map[g->adjncy[e]];
			if (v == p || v == q)
				continue;
			d += tp__graph_w(g, e) * (double)(ndist(cr->c, to, v) -
							   ndist(cr->c, from, v));
		}
	}
	return d;
}

/* One trial of trading nodes p and q whole: kept on the terms of
 * cr_try_move.  It moves a node's traffic to another node's links without
 * splitting its tasks: two nodes on one switch trade at no cost in hops,
 * and which of a switch's nodes holds the traffic decides which of its
 * links (d-mod-k's uplinks, a torus' dimension order) carries it. */
static int cr_try_trade(cref *cr, int32_t p, int32_t q, bool *kept)
{
	const struct tp_alloc *a = cr->c->a;
	slot_table *st = &cr->st;
	*kept = false;
	/* two nodes of one task at most: a swap, the tasks' own moves */
	if (st->used[p] > a->slots[q] || st->used[q] > a->slots[p] ||
	    (st->used[p] <= 1 && st->used[q] <= 1))
		return 0;
	int n = trade_set(cr, p, q), rc;
	/* never at a cost in hop-bytes (a trade moves whole nodes' traffic,
	 * and the potential would let it spread far over idle links): checked
	 * before routing anything, as most partners cost hops */
	if (trade_hops(cr, p, q, n) > 1e-12 * (cr->c->g->total_bytes + 1.0))
		return 0;
	cr->trial++;
	cr->ntl = 0;
	cr->dhop = 0;
	cr->over = false;
	if ((rc = cr_set_edges(cr, n, -1.0)))
		return rc;
	for (int j = 0; j < n; j++)
		cr->map[cr->swap_set[j]] = j < st->used[p] ? q : p;
	if ((rc = cr_set_edges(cr, n, 1.0)))
		return rc;
	bool ok = cr_accept(cr, !cr->over);
	for (int j = 0; j < n; j++)
		cr->map[cr->swap_set[j]] = j < st->used[p] ? p : q;
	if (ok) {
		cr_trade(cr, p, q, n);
		*kept = true;
	} else {
		cr_undo(cr);
	}
	return 0;
}

/* Node p's trades, until one is kept: with the nodes of its tasks'
 * neighbours (up to TRADE_NEIGHBOURS), then with up to TRADE_WINDOW nodes
 * either side of it in router order (its switch-mates first). */
static int cr_improve_node(cref *cr, int32_t p)
{
	const struct tp_graph *g = cr->c->g;
	const slot_table *st = &cr->st;
	int32_t *cand = cr->tcand;
	int n = 0;
	cr->ns++;
	cr->nstamp[p] = cr->ns;
	for (int64_t x = st->off[p]; x < st->off[p + 1] && n < TRADE_NEIGHBOURS; x++) {
		int32_t t = st->slot_task[x];
		if (t < 0)
			continue;
		for (int64_t e = g->xadj[t]; e < g->xadj[t + 1] && n < TRADE_NEIGHBOURS; e++) {
			int32_t q = cr->map[g->adjncy[e]];
			if (cr->nstamp[q] != cr->ns) {
				cr->nstamp[q] = cr->ns;
				cand[n++] = q;
			}
		}
	}
	int32_t k = cr->router_pos[p];
	for (int32_t w = 1; w <= TRADE_WINDOW; w++)
		for (int side = -1; side <= 1; side += 2) {
			int32_t at = k + side * w;
			if (at < 0 || at >= cr->c->nn)
				continue;
			int32_t q = cr->by_router[at];
			if (cr->nstamp[q] != cr->ns) {
				cr->nstamp[q] = cr->ns;
				cand[n++] = q;
			}
		}
	bool kept = false;
	for (int ci = 0; ci < n && !kept; ci++) {
		int rc = cr_try_trade(cr, p, cand[ci], &kept);
		if (rc)
			return rc;
	}
	return 0;
}

/* Congestion refinement: passes over the tasks with a message on a link
 * loaded near the maximum, moving each where that lowers the potential
 * (cr_potential) without raising the maximum; stops when a pass moves
 * nothing or the budget runs out. */
static int refine_cong_common(const gm *c, const tp_graphmap_opts *o,
			      int32_t *map, int64_t *moves_out, double t0,
			      bool lanes)
{
	cref cr;
	/* A weighted graph (a trace's) is refined on its heavy part, each
	 * task's messages heaviest first (graph_heavy.c): its light pairs cost
	 * most of the moves' time and move no load, and a task's candidate
	 * nodes are then those of its heaviest peers. */
	struct tp_graph heavy = { 0 };
	gm hc = *c;
	if (c->g->weights) {
		int hr = tp__graph_heavy_view(c->g, REFINE_HEAVY_SHARE, &heavy);
		if (hr)
			return hr;
		hc.g = &heavy;
	}
	int rc = cref_init(&cr, &hc, map, lanes);
	if (!rc)
		rc = cr_load_all(&cr, t0, o->time_budget_ms);
	if (rc == TP_ETIME) {
		rc = 0;   /* nothing moved yet: the map stands as it was */
		goto out;
	}
	if (rc)
		goto out;
	cr.M = cr_max(&cr, &cr.nmax);
	cr.Mref = cr.M;
	cr.keep_hops = o->congestion_keep_hops;
	for (int pass = 0; pass < o->refine_passes && cr.M > 0; pass++) {
		if ((rc = cr_mark_hot(&cr)))
			goto out;
		int64_t before = cr.moves;
		for (int32_t t = 0; t < c->nt && cr.M > 0; t++) {
			if (!cr.hot[t])
				continue;
			if (budget_over(t0, o->time_budget_ms))
				goto done;
			if ((rc = cr_improve_task(&cr, t)))
				goto out;
		}
		/* then whole nodes holding a task on a busy lane */
		for (int32_t i = 0; cr.swap_set && i < c->nn && cr.M > 0; i++) {
			bool busy = false;
			for (int64_t x = cr.st.off[i]; x < cr.st.off[i + 1] && !busy; x++)
				busy = cr.st.slot_task[x] >= 0 && cr.hot[cr.st.slot_task[x]];
			if (!busy)
				continue;
			if (budget_over(t0, o->time_budget_ms))
				goto done;
			if ((rc = cr_improve_node(&cr, i)))
				goto out;
		}
		if (cr.moves == before)
			break;
		cr.M = cr_max(&cr, &cr.nmax);
	}
done:
	if (moves_out)
		*moves_out = cr.moves;
out:
	cref_free(&cr);
	tp__graph_view_free(&heavy);
	return rc;
}

static int refine_cong_run(const gm *c, const tp_graphmap_opts *o,
			   int32_t *map, int64_t *moves_out, double t0)
{
	return refine_cong_common(c, o, map, moves_out, t0, false);
}

/* The same on the time model's lanes: the busiest lane's seconds, where
 * the exchange waits (auto's refinement by predicted time). */
static int refine_lanes_run(const gm *c, const tp_graphmap_opts *o,
			    int32_t *map, int64_t *moves_out, double t0)
{
	return refine_cong_common(c, o, map, moves_out, t0, true);
}

/* ------------------------------------------------------------------------ */
/* Recursive bipartitioning                                                  */

/* The recursion goes level by level.  A job is one split: its tasks
 * T[t0 .. t0+nT) go to its nodes N[n0 .. n0+nN).  The splits of a level are
 * made at once, on the threads; then, in job order, each split's halves are
 * paired with the halves of its nodes, against its outside neighbours'
 * positions: where the jobs before it in this level put them, else where
 * the level before did.  A job so sees its earlier siblings' choices, as the
 * depth-first recursion did, and the result is the same on any number of
 * threads. */
typedef struct bp_job {
	int32_t t0, nT, n0, nN;
} bp_job;

#define BP_THREADED_TASKS 8192   /* the splits run on threads from here */

/* A job's split, between the parallel part and the pairing. */
typedef struct bp_cut {
	bool split;              /* part[] holds a split of its tasks */
	bool can_swap;           /* either half fits either half of the nodes */
	int32_t cut;             /* its nodes N[0..cut) and N[cut..nN) */
	double c0[TP_MAX_DIMS], c1[TP_MAX_DIMS];   /* their centroids */
} bp_cut;

typedef struct bp {
	const gm *c;
	int32_t *map;
	int32_t *T, *N;     /* tasks and nodes, each job's a range */
	int32_t *local;     /* task -> its index in its job's range */
	int32_t *owner;     /* task -> its job in this level */
	int32_t *part;      /* task at T[i] -> its half (0 or 1), this level */
	bp_cut *cuts;       /* per job */
	double *pt;         /* task -> provisional position (nt x nd, shifted) */
	double *pt_next;    /* the same, for the next level */
	int32_t *tscratch;  /* nt */
	const bp_job *jobs; /* this level's */
	bp_job *next;       /* two per job: the halves */
	int *rc;            /* per job */
	uint64_t seed;
} bp;

typedef struct node_sort_ctx {
	const int *sc;
	int nd, d;
} node_sort_ctx;

static int cmp_node_dim(const void *x, const void *y, void *arg)
{
	const node_sort_ctx *k = arg;
	int32_t i = *(const int32_t *)x, j = *(const int32_t *)y;
	const int *a = &k->sc[(size_t)i * (size_t)k->nd];
	const int *b = &k->sc[(size_t)j * (size_t)k->nd];
	if (a[k->d] != b[k->d])
		return a[k->d] < b[k->d] ? -1 : 1;
	for (int d = 0; d < k->nd; d++)
		if (a[d] != b[d])
			return a[d] < b[d] ? -1 : 1;
	return i < j ? -1 : i > j;
}

static void centroid(const gm *c, const int32_t *N, int32_t n, double *out)
{
	for (int d = 0; d < c->nd; d++)
		out[d] = 0.0;
	for (int32_t k = 0; k < n; k++)
		for (int d = 0; d < c->nd; d++)
			out[d] += c->sc[(size_t)N[k] * (size_t)c->nd + (size_t)d];
	for (int d = 0; d < c->nd; d++)
		out[d] /= n > 0 ? n : 1;
}

static double l1(const double *x, const double *y, int nd)
{
	double s = 0.0;
	for (int d = 0; d < nd; d++)
		s += fabs(x[d] - y[d]);
	return s;
}

/* With task coordinates: each task's along the longest extent of T's, so
 * that the split also tries a straight cut across them (NULL without
 * coordinates, or out of memory). */
static double *tasks_key(const struct tp_graph *g, const int32_t *T, int32_t nT)
{
	const double *x = g->coord_dims > 0 ? tp_graph_coords(g) : NULL;
	if (!x)
		return NULL;
	int nd = g->coord_dims, sd = 0;
	int use = nd < TP_MAX_DIMS ? nd : TP_MAX_DIMS;
	double lo[TP_MAX_DIMS], hi[TP_MAX_DIMS], ext = -1.0;
	for (int d = 0; d < use; d++) {
		lo[d] = HUGE_VAL;
		hi[d] = -HUGE_VAL;
	}
	for (int32_t i = 0; i < nT; i++)
		for (int d = 0; d < use; d++) {
			double v = x[(size_t)T[i] * (size_t)nd + (size_t)d];
			lo[d] = v < lo[d] ? v : lo[d];
			hi[d] = v > hi[d] ? v : hi[d];
		}
	for (int d = 0; d < use; d++)
		if (hi[d] - lo[d] > ext) {
			ext = hi[d] - lo[d];
			sd = d;
		}
	double *key = tp__malloc_array((size_t)nT + 1, sizeof(double));
	for (int32_t i = 0; key && i < nT; i++)
		key[i] = x[(size_t)T[i] * (size_t)nd + (size_t)sd];
	return key;
}

/* Split T into part[] with exactly n0 tasks labelled 0.  Returns 0 or a
 * negative code. */
static int split_tasks(const bp *b, const int32_t *T, int32_t nT, int32_t n0,
		       int32_t *part)
{
	const struct tp_graph *g = b->c->g;
	int64_t ne;
	double W;
	struct tp__metis_sub sub = { g, T, nT, b->local };
	tp__metis_sub_count(&sub, &ne, &W);
	for (int32_t i = 0; i < nT; i++)
		part[i] = i < n0 ? 0 : 1;
	if (ne == 0 || nT < 3)
		return 0;
	if (ne > INT32_MAX / 2)
		return TP_ENOMEM;
	if (past(b->c, (double)ne * TP__METIS_US_PER_ENTRY / 1e3))
		return TP_ETIME;
	idx_t *xadj = tp__malloc_array((size_t)nT + 1, sizeof(idx_t));
	idx_t *adj = tp__malloc_array((size_t)ne, sizeof(idx_t));
	idx_t *wgt = tp__malloc_array((size_t)ne, sizeof(idx_t));
	double *key = tasks_key(g, T, nT);
	int rc = TP_ENOMEM;
	if (xadj && adj && wgt && (key || g->coord_dims == 0)) {
		tp__metis_sub_fill(&sub, W, xadj, adj, wgt);
		rc = tp__bisect(nT, xadj, adj, wgt, key, n0, b->seed, part);
	}
	free(key);
	free(xadj);
	free(adj);
	free(wgt);
	return rc;
}

/* The node cut of a job: its nodes sorted along the longest extent of their
 * shifted coordinates, cut where the slots halve; *S0 and *S the slots
 * before the cut and in all. */
static int32_t node_cut(const bp *b, int32_t *N, int32_t nN, int64_t *S0,
			int64_t *S)
{
	const gm *c = b->c;
	int nd = c->nd;
	int lo[TP_MAX_DIMS], hi[TP_MAX_DIMS], sd = 0, ext = -1;
	for (int d = 0; d < nd; d++) {
		lo[d] = INT32_MAX;
		hi[d] = INT32_MIN;
	}
	*S = 0;
	for (int32_t k = 0; k < nN; k++) {
		const int *x = &c->sc[(size_t)N[k] * (size_t)nd];
		for (int d = 0; d < nd; d++) {
			if (x[d] < lo[d])
				lo[d] = x[d];
			if (x[d] > hi[d])
				hi[d] = x[d];
		}
		*S += c->a->slots[N[k]];
	}
	for (int d = 0; d < nd; d++)
		if (hi[d] - lo[d] > ext) {
			ext = hi[d] - lo[d];
			sd = d;
		}
	node_sort_ctx nctx = { c->sc, nd, sd };
	qsort_r(N, (size_t)nN, sizeof(int32_t), cmp_node_dim, &nctx);
	int32_t cut = 1;
	int64_t cum = 0, bestdiff = INT64_MAX;
	*S0 = 0;
	for (int32_t k = 0; k + 1 < nN; k++) {
		cum += c->a->slots[N[k]];
		int64_t diff = 2 * cum - *S;
		if (diff < 0)
			diff = -diff;
		if (diff < bestdiff) {
			bestdiff = diff;
			cut = k + 1;
			*S0 = cum;
		}
	}
	return cut;
}

/* Job j's pairing, direct (part 0 to the first half of the nodes) or
 * exchanged: whichever puts the parts nearer their outside neighbours. */
static bool exchange_better(const bp *b, int32_t j, const int32_t *T,
			    int32_t nT, const int32_t *part, const double *c0,
			    const double *c1)
{
	const struct tp_graph *g = b->c->g;
	int nd = b->c->nd;
	double direct = 0.0, exch = 0.0;
	for (int32_t i = 0; i < nT; i++) {
		const double *mine = part[i] == 0 ? c0 : c1;
		const double *other = part[i] == 0 ? c1 : c0;
		for (int64_t e = g->xadj[T[i]]; e < g->xadj[T[i] + 1]; e++) {
			int32_t u = g->adjncy[e];
			if (b->owner[u] == j)
				continue;
			const double *pu = b->owner[u] < j
				? &b->pt_next[(size_t)u * (size_t)nd]
				: &b->pt[(size_t)u * (size_t)nd];
			direct += tp__graph_w(g, e) * l1(mine, pu, nd);
			exch += tp__graph_w(g, e) * l1(other, pu, nd);
		}
	}
	return exch < direct;
}

/* Job j's split (on any thread): a job on one node is placed there; any
 * other gets its node cut and its tasks' halves in b->part. */
static int bp_split(bp *b, int32_t j)
{
	const gm *c = b->c;
	const bp_job *job = &b->jobs[j];
	int32_t *T = b->T + job->t0, *N = b->N + job->n0, nT = job->nT, nN = job->nN;
	int32_t *part = b->part + job->t0;
	size_t nd = (size_t)c->nd;
	bp_cut *k = &b->cuts[j];
	k->split = false;
	if (nN == 1) {
		/* placed: its position, in both levels' arrays from now on */
		for (int32_t i = 0; i < nT; i++) {
			size_t at = (size_t)T[i] * nd;
			b->map[T[i]] = N[0];
			memcpy(&b->pt_next[at], &b->pt[at], sizeof(double) * nd);
		}
		return 0;
	}
	int64_t S0, S;
	k->cut = node_cut(b, N, nN, &S0, &S);
	int64_t S1 = S - S0;
	int64_t t0 = nT == S ? S0 : llround((double)nT * (double)S0 / (double)S);
	if (t0 > S0)
		t0 = S0;
	if (t0 > nT)
		t0 = nT;
	if (nT - t0 > S1)
		t0 = nT - S1;
	if (t0 < 0)
		t0 = 0;
	centroid(c, N, k->cut, k->c0);
	centroid(c, N + k->cut, nN - k->cut, k->c1);
	k->split = true;
	k->can_swap = t0 > 0 && t0 < nT && nT - t0 <= S0 && t0 <= S1;
	if (t0 == 0 || t0 == nT) {
		for (int32_t i = 0; i < nT; i++)
			part[i] = t0 == 0 ? 1 : 0;
		return 0;
	}
	return split_tasks(b, T, nT, (int32_t)t0, part);
}

/* Job j's pairing (in job order): its halves, the next level's jobs, in
 * b->next[2 * j] and [2 * j + 1] (nT 0 when there is none), and their
 * positions in pt_next. */
static void bp_pair(bp *b, int32_t j)
{
	const bp_job *job = &b->jobs[j];
	const bp_cut *k = &b->cuts[j];
	bp_job *out = &b->next[2 * (size_t)j];
	memset(out, 0, 2 * sizeof *out);
	if (!k->split)
		return;
	int32_t *T = b->T + job->t0, *part = b->part + job->t0, nT = job->nT;
	size_t nd = (size_t)b->c->nd;
	if (k->can_swap && exchange_better(b, j, T, nT, part, k->c0, k->c1))
		for (int32_t i = 0; i < nT; i++)
			part[i] = 1 - part[i];
	/* stable partition of T */
	int32_t n0 = 0, k1 = 0;
	int32_t *scratch = b->tscratch + job->t0;
	for (int32_t i = 0; i < nT; i++)
		n0 += part[i] == 0;
	for (int32_t i = 0; i < nT; i++) {
		int32_t t = T[i];
		memcpy(&b->pt_next[(size_t)t * nd], part[i] == 0 ? k->c0 : k->c1,
		       sizeof(double) * nd);
		if (part[i] == 0)
			scratch[i - k1] = t;
		else
			scratch[n0 + k1++] = t;
	}
	memcpy(T, scratch, sizeof(int32_t) * (size_t)nT);
	out[0] = (bp_job){ job->t0, n0, job->n0, k->cut };
	out[1] = (bp_job){ job->t0 + n0, nT - n0, job->n0 + k->cut, job->nN - k->cut };
}

static void bp_split_run(void *arg, int32_t j)
{
	bp *b = arg;
	b->rc[j] = bp_split(b, j);
}

static int bipart_run(const gm *c, int seed, int threads, int32_t *map)
{
	bp b;
	memset(&b, 0, sizeof b);
	b.c = c;
	b.map = map;
	b.seed = (uint64_t)seed;
	size_t nt = (size_t)c->nt + 1, nn = (size_t)c->nn + 1;
	size_t nd = (size_t)c->nd;
	b.T = tp__malloc_array(nt, sizeof(int32_t));
	b.N = tp__malloc_array(nn, sizeof(int32_t));
	b.local = tp__malloc_array(nt, sizeof(int32_t));
	b.owner = tp__malloc_array(nt, sizeof(int32_t));
	b.part = tp__malloc_array(nt, sizeof(int32_t));
	b.cuts = tp__malloc_array(nn, sizeof(bp_cut));
	b.pt = tp__malloc_array(nt * nd, sizeof(double));
	b.pt_next = tp__malloc_array(nt * nd, sizeof(double));
	b.tscratch = tp__malloc_array(nt, sizeof(int32_t));
	/* a level has at most one job per node */
	bp_job *jobs = tp__malloc_array(nn, sizeof(bp_job));
	b.next = tp__malloc_array(2 * nn, sizeof(bp_job));
	b.rc = tp__malloc_array(nn, sizeof(int));
	int rc = 0;
	if (!b.T || !b.N || !b.local || !b.owner || !b.part || !b.cuts || !b.pt || !b.pt_next || !b.tscratch ||
	    !jobs || !b.next || !b.rc) {
		rc = TP_ENOMEM;
		goto out;
	}
	double cen[TP_MAX_DIMS];
	for (int32_t i = 0; i < c->nn; i++)
		b.N[i] = i;
	centroid(c, b.N, c->nn, cen);
	for (int32_t t = 0; t < c->nt; t++) {
		b.local[t] = -1;
		b.owner[t] = -1;
		b.T[t] = t;
		memcpy(&b.pt[(size_t)t * nd], cen, sizeof(double) * nd);
	}
	memcpy(b.pt_next, b.pt, sizeof(double) * nd * (size_t)c->nt);
	int32_t njobs = 1;
	jobs[0] = (bp_job){ 0, c->nt, 0, c->nn };
	/* a level of a small graph takes less than starting a thread (tens of
	 * microseconds, milliseconds on a busy node) */
	if (c->nt < BP_THREADED_TASKS)
		threads = 1;
	while (njobs > 0 && !rc) {
		b.jobs = jobs;
		for (int32_t j = 0; j < njobs; j++)
			for (int32_t i = 0; i < jobs[j].nT; i++) {
				b.local[b.T[jobs[j].t0 + i]] = i;
				b.owner[b.T[jobs[j].t0 + i]] = j;
			}
		tp__parallel_for(njobs, threads, bp_split_run, &b);
		/* the first error by job order, the same on any thread count */
		for (int32_t j = 0; j < njobs && !rc; j++)
			rc = b.rc[j];
		for (int32_t j = 0; j < njobs && !rc; j++)
			bp_pair(&b, j);
		int32_t k = 0;
		for (int32_t j = 0; j < 2 * njobs; j++)
			if (b.next[j].nT > 0)
				jobs[k++] = b.next[j];
		njobs = k;
		double *t = b.pt;
		b.pt = b.pt_next;
		b.pt_next = t;
	}
out:
	free(b.T);
	free(b.N);
	free(b.local);
	free(b.owner);
	free(b.part);
	free(b.cuts);
	free(b.pt);
	free(b.pt_next);
	free(b.tscratch);
	free(jobs);
	free(b.next);
	free(b.rc);
	return rc;
}

/* ------------------------------------------------------------------------ */
/* Public entry points                                                       */

/* The two public refinements: validate, set up, run one pass function. */
typedef int (*refine_fn)(const gm *c, const tp_graphmap_opts *o, int32_t *map,
			 int64_t *moves_out, double t0);

/* A refinement: its name in messages and its pass function. */
struct refinement {
	const char *what;
	refine_fn run;
};

static const struct refinement BY_HOP_BYTES = { "refinement", refine_run };
static const struct refinement BY_CONGESTION = { "congestion refinement",
						 refine_cong_run };
static const struct refinement BY_LANES = { "lane refinement", refine_lanes_run };

static int refine_entry(const struct refinement *r, const tp_graph *g,
			const tp_alloc *a, const tp_graphmap_opts *o,
			int threads, double hop_weight, int32_t *map,
			int64_t *moves, tp_error *err)
{
	const char *what = r->what;
	tp_graphmap_opts def;
	if (!o) {
		tp_graphmap_opts_default(&def);
		o = &def;
	}
	if (moves)
		*moves = 0;
	/* the budget counts from here: the checks and the set-up are part
	 * of what the caller gave it for */
	double t0 = tp__now_ms();
	int rc = tp_mapping_validate(g, a, map, err);
	if (rc)
		return rc;
	gm c;
	if ((rc = gm_init(&c, g, a, false, err, what)))
		return rc;
	c.threads = threads;
	c.hop_weight = hop_weight;
	rc = r->run(&c, o, map, moves, t0);
	gm_free(&c);
	if (rc)
		return tp_error_set(err, rc, "%s: %s", what,
				    rc == TP_ENOMEM ? "out of memory" : "routing failed");
	return 0;
}

int tp_graphmap_refine(const tp_graph *g, const tp_alloc *a,
		       const tp_graphmap_opts *o, int32_t *map,
		       int64_t *moves, tp_error *err)
{
	return refine_entry(&BY_HOP_BYTES, g, a, o, 0, 0, map, moves, err);
}

int tp__graphmap_refine_threads(const tp_graph *g, const tp_alloc *a,
				const tp_graphmap_opts *o, int threads,
				int32_t *map, int64_t *moves, tp_error *err)
{
	return refine_entry(&BY_HOP_BYTES, g, a, o, threads, 0, map, moves, err);
}

int tp_graphmap_refine_congestion(const tp_graph *g, const tp_alloc *a,
				  const tp_graphmap_opts *o, int32_t *map,
				  int64_t *moves, tp_error *err)
{
	return refine_entry(&BY_CONGESTION, g, a, o, 0, 0, map, moves, err);
}

int tp__graphmap_refine_lanes(const tp_graph *g, const tp_alloc *a,
			      const tp_graphmap_opts *o, int32_t *map,
			      int64_t *moves, tp_error *err)
{
	return refine_entry(&BY_LANES, g, a, o, 0, 0, map, moves, err);
}

int tp__graphmap_refine_lanes_hops(const tp_graph *g, const tp_alloc *a,
				   const tp_graphmap_opts *o, double hop_weight,
				   int32_t *map, int64_t *moves, tp_error *err)
{
	return refine_entry(&BY_LANES, g, a, o, 0, hop_weight, map, moves, err);
}

int tp_graphmap_greedy(const tp_graph *g, const tp_alloc *a,
		       const tp_graphmap_opts *o, int32_t *map, tp_error *err)
{
	tp_graphmap_opts def;
	if (!o) {
		tp_graphmap_opts_default(&def);
		o = &def;
	}
	double t0 = tp__now_ms();
	gm c;
	int rc = gm_init(&c, g, a, true, err, "greedy mapping");
	if (rc)
		return rc;
	c.deadline = o->time_budget_ms > 0 ? t0 + o->time_budget_ms : 0;
	rc = greedy_run(&c, map);
	if (!rc && o->refine_passes > 0)
		rc = refine_run(&c, o, map, NULL, t0);
	if (!rc && o->refine_passes > 0 && o->refine_congestion)
		rc = refine_cong_run(&c, o, map, NULL, t0);
	gm_free(&c);
	if (rc == TP_ETIME && c.projected_ms > 0)
		return tp_error_set(err, rc, "greedy mapping: would take about %.0f ms, "
				    "over the time budget of %g ms",
				    c.projected_ms, o->time_budget_ms);
	if (rc == TP_ETIME)
		return tp_error_set(err, rc, "greedy mapping: time budget of %g ms "
				    "reached before every task was placed",
				    o->time_budget_ms);
	if (rc)
		return tp_error_set(err, rc, "greedy mapping: out of memory");
	return 0;
}

int tp_graphmap_bipartition(const tp_graph *g, const tp_alloc *a,
			    const tp_graphmap_opts *o, int32_t *map,
			    tp_error *err)
{
	return tp__graphmap_bipartition_threads(g, a, o, 0, map, err);
}

int tp__graphmap_bipartition_threads(const tp_graph *g, const tp_alloc *a,
				     const tp_graphmap_opts *o, int threads,
				     int32_t *map, tp_error *err)
{
	tp_graphmap_opts def;
	if (!o) {
		tp_graphmap_opts_default(&def);
		o = &def;
	}
	double t0 = tp__now_ms();
	gm c;
	int rc = gm_init(&c, g, a, true, err, "bipartition mapping");
	if (rc)
		return rc;
	c.deadline = o->time_budget_ms > 0 ? t0 + o->time_budget_ms : 0;
	rc = bipart_run(&c, o->seed, threads > 0 ? threads : tp__cpus(), map);
	if (rc) {
		gm_free(&c);
		if (rc == TP_ETIME)
			return tp_error_set(err, rc, "bipartition mapping: time budget "
					    "of %g ms reached before the last cut",
					    o->time_budget_ms);
		return tp_error_set(err, rc, "bipartition mapping: out of memory");
	}
	if (o->refine_passes > 0) {
		rc = refine_run(&c, o, map, NULL, t0);
		if (!rc && o->refine_congestion)
			rc = refine_cong_run(&c, o, map, NULL, t0);
	}
	gm_free(&c);
	if (rc)
		return tp_error_set(err, rc, "bipartition mapping: %s", rc == TP_ENOMEM
				    ? "out of memory" : "routing failed");
	return 0;
}
