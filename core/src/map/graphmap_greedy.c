/* topoplace — graph mapping, greedy growth: tasks placed one at a time,
 * the most bytes to placed tasks first, each on the free node that costs
 * least, found with a k-d tree of free slots (tp_graphmap_greedy). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "map/free_shells.h"
#include "map/graphmap_parts.h"

#define KD_LEAF 8            /* points per k-d tree leaf */
#define SHELL_READS 128      /* routers read around a point before the
				k-d tree takes over */
#define NEIGH_CANDIDATES 8   /* neighbour nodes tried per greedy placement */

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

int tp__greedy_run(gm *c, int32_t *map)
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
