/* topoplace — multilevel two-way partitioning (bisect.h).
 *
 * The graph is coarsened by heavy-edge matching until it is small, split
 * there by breadth-first growing from several random vertices, and the
 * split is carried back level by level, each level improved by boundary
 * Fiduccia–Mattheyses passes; last, the sides are brought to their exact
 * sizes by moving the vertices that cost least.  These are the steps of
 * METIS's recursive bisection (Karypis and Kumar, SIAM J. Sci. Comput.
 * 20(1), 1998), with one random generator per call.
 */
#include "map/bisect.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "util/util_internal.h"
#include "net/hashtab.h"

#define COARSEST 80          /* coarsen to about this many vertices */
#define STALL 0.95           /* stop coarsening when a level keeps more */
#define MAX_LEVELS 48
#define GROW_TRIES 4         /* random starts of the initial split */
#define FM_PASSES 10         /* at most, per level */
#define TRY_PASSES 4         /* at most, per initial split tried */

typedef struct level {
	int32_t n;
	int64_t *xadj;           /* n + 1 */
	int32_t *adj;
	int64_t *ew;             /* edge weights */
	int64_t *vw;             /* vertex weights */
	int32_t *cmap;           /* vertex -> vertex of the next coarser level */
	int64_t W;               /* total vertex weight */
} level;

/* a[0..n) in a random order (Fisher-Yates on the identity). */
static void random_order(int32_t *a, int32_t n, uint64_t *rng)
{
	for (int32_t i = 0; i < n; i++)
		a[i] = i;
	for (int32_t i = n - 1; i > 0; i--) {
		int32_t j = (int32_t)(tp__splitmix64(rng) % (uint64_t)(i + 1));
		int32_t t = a[i];
		a[i] = a[j];
		a[j] = t;
	}
}

static void level_free(level *L)
{
	free(L->xadj);
	free(L->adj);
	free(L->ew);
	free(L->vw);
	free(L->cmap);
	memset(L, 0, sizeof *L);
}

/* ------------------------------------------------------------------------ */
/* Coarsening                                                                */

/* Heavy-edge matching in a random order; the coarser level in *c and the
 * map in f->cmap.  Vertices heavier together than maxvw stay apart, so
 * that the coarsest level can still be split evenly. */
static int coarsen(level *f, level *c, uint64_t *rng, int64_t maxvw)
{
	int32_t n = f->n;
	int32_t *perm = tp__malloc_array((size_t)n, sizeof(int32_t));
	int32_t *match = tp__malloc_array((size_t)n, sizeof(int32_t));
	f->cmap = tp__malloc_array((size_t)n, sizeof(int32_t));
	if (!perm || !match || !f->cmap) {
		free(perm);
		free(match);
		return TP_ENOMEM;
	}
	for (int32_t i = 0; i < n; i++)
		match[i] = -1;
	random_order(perm, n, rng);
	for (int32_t k = 0; k < n; k++) {
		int32_t v = perm[k], best = -1;
		if (match[v] >= 0)
			continue;
		int64_t bw = -1;
		for (int64_t e = f->xadj[v]; e < f->xadj[v + 1]; e++) {
			int32_t u = f->adj[e];
			if (match[u] < 0 && f->ew[e] > bw &&
			    f->vw[v] + f->vw[u] <= maxvw) {
				bw = f->ew[e];
				best = u;
			}
		}
		if (best < 0) {
			match[v] = v;
		} else {
			match[v] = best;
			match[best] = v;
		}
	}
	int32_t cn = 0;
	for (int32_t v = 0; v < n; v++)
		if (match[v] >= v)
			f->cmap[v] = f->cmap[match[v]] = cn++;
	free(perm);
	memset(c, 0, sizeof *c);
	c->n = cn;
	c->W = f->W;
	c->xadj = tp__malloc_array((size_t)cn + 1, sizeof(int64_t));
	c->vw = tp__malloc_array((size_t)cn + 1, sizeof(int64_t));
	c->adj = tp__malloc_array((size_t)f->xadj[n] + 1, sizeof(int32_t));
	c->ew = tp__malloc_array((size_t)f->xadj[n] + 1, sizeof(int64_t));
	int64_t *at = tp__malloc_array((size_t)cn + 1, sizeof(int64_t));
	if (!c->xadj || !c->vw || !c->adj || !c->ew || !at) {
		free(match);
		free(at);
		level_free(c);
		return TP_ENOMEM;
	}
	/* each coarse vertex's edges merged: at[cv] is where cv's entry
	 * sits in the list being built (stale below its start) */
	for (int32_t i = 0; i < cn; i++)
		at[i] = -1;
	int64_t pos = 0;
	int32_t cv = 0;
	for (int32_t v = 0; v < n; v++) {
		if (match[v] < v)
			continue;
		int64_t start = pos;
		c->xadj[cv] = start;
		c->vw[cv] = f->vw[v];
		for (int side = 0; side < 2; side++) {
			int32_t x = side ? match[v] : v;
			if (side && x == v)
				break;
			if (side)
				c->vw[cv] += f->vw[x];
			for (int64_t e = f->xadj[x]; e < f->xadj[x + 1]; e++) {
				int32_t cu = f->cmap[f->adj[e]];
				if (cu == cv)
					continue;
				if (at[cu] >= start) {
					c->ew[at[cu]] += f->ew[e];
				} else {
					at[cu] = pos;
					c->adj[pos] = cu;
					c->ew[pos++] = f->ew[e];
				}
			}
		}
		cv++;
	}
	c->xadj[cn] = pos;
	free(match);
	free(at);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Refinement: boundary Fiduccia–Mattheyses                                  */

/* An indexed max-heap of vertices by gain, the lower vertex first on ties. */
typedef struct pq {
	int32_t *h, n;
	int32_t *pos;            /* shared by both sides' heaps: -1 outside */
	const int64_t *gain;
} pq;

static bool pq_above(const pq *q, int32_t a, int32_t b)
{
	if (q->gain[a] != q->gain[b])
		return q->gain[a] > q->gain[b];
	return a < b;
}

static void pq_set(pq *q, int32_t i, int32_t v)
{
	q->h[i] = v;
	q->pos[v] = i;
}

static void pq_up(pq *q, int32_t i)
{
	int32_t v = q->h[i];
	while (i > 0) {
		int32_t p = (i - 1) / 2;
		if (!pq_above(q, v, q->h[p]))
			break;
		pq_set(q, i, q->h[p]);
		i = p;
	}
	pq_set(q, i, v);
}

static void pq_down(pq *q, int32_t i)
{
	int32_t v = q->h[i];
	for (;;) {
		int32_t l = 2 * i + 1, b = -1;
		if (l >= q->n)
			break;
		b = l + 1 < q->n && pq_above(q, q->h[l + 1], q->h[l]) ? l + 1 : l;
		if (!pq_above(q, q->h[b], v))
			break;
		pq_set(q, i, q->h[b]);
		i = b;
	}
	pq_set(q, i, v);
}

static void pq_push(pq *q, int32_t v)
{
	q->h[q->n] = v;
	q->pos[v] = q->n++;
	pq_up(q, q->n - 1);
}

static void pq_remove(pq *q, int32_t v)
{
	int32_t i = q->pos[v], last = q->h[--q->n];
	q->pos[v] = -1;
	if (last == v)
		return;
	pq_set(q, i, last);
	pq_up(q, i);
	pq_down(q, q->pos[last]);
}

/* A key changed: to its place. */
static void pq_update(pq *q, int32_t v)
{
	pq_up(q, q->pos[v]);
	pq_down(q, q->pos[v]);
}

/* The heap of the vertices in list[0..n), at once. */
static void pq_build(pq *q, const int32_t *list, int32_t n)
{
	q->n = n;
	for (int32_t i = 0; i < n; i++)
		pq_set(q, i, list[i]);
	for (int32_t i = n / 2 - 1; i >= 0; i--)
		pq_down(q, i);
}

static void pq_clear(pq *q)
{
	for (int32_t j = 0; j < q->n; j++)
		q->pos[q->h[j]] = -1;
	q->n = 0;
}

static int32_t pq_pop(pq *q)
{
	int32_t v = q->h[0];
	pq_remove(q, v);
	return v;
}

typedef struct fm {
	const level *L;
	int32_t *where;
	int64_t *gain;           /* external - internal edge weight */
	int64_t *ext;            /* external edge weight */
	bool *locked;
	int32_t *moves;
	int32_t *bnd, nbnd;      /* the boundary: vertices with external edges */
	int32_t *bpos;           /* index in bnd, or -1 */
	pq q[2];
	int64_t pw[2], target[2], tol, cut;
} fm;

/* How far a state is from good: imbalance past the tolerance first, then
 * the cut, then the imbalance itself. */
typedef struct fm_key {
	int64_t excess, cut, imb;
} fm_key;

static fm_key key_of(const fm *s)
{
	int64_t imb = s->pw[0] - s->target[0];
	imb = imb < 0 ? -imb : imb;
	fm_key k = { imb > s->tol ? imb - s->tol : 0, s->cut, imb };
	return k;
}

static bool key_below(fm_key a, fm_key b)
{
	if (a.excess != b.excess)
		return a.excess < b.excess;
	if (a.cut != b.cut)
		return a.cut < b.cut;
	return a.imb < b.imb;
}

static void fm_params(fm *s)
{
	const level *L = s->L;
	s->pw[0] = s->pw[1] = 0;
	s->cut = 0;
	s->nbnd = 0;
	for (int32_t v = 0; v < L->n; v++) {
		int64_t in = 0, ex = 0;
		for (int64_t e = L->xadj[v]; e < L->xadj[v + 1]; e++)
			if (s->where[L->adj[e]] == s->where[v])
				in += L->ew[e];
			else
				ex += L->ew[e];
		s->gain[v] = ex - in;
		s->ext[v] = ex;
		s->bpos[v] = -1;
		if (ex > 0) {
			s->bpos[v] = s->nbnd;
			s->bnd[s->nbnd++] = v;
		}
		s->pw[s->where[v]] += L->vw[v];
		s->cut += ex;
	}
	s->cut /= 2;
}

static void bnd_track(fm *s, int32_t v)
{
	if (s->ext[v] > 0 && s->bpos[v] < 0) {
		s->bpos[v] = s->nbnd;
		s->bnd[s->nbnd++] = v;
	} else if (s->ext[v] == 0 && s->bpos[v] >= 0) {
		int32_t last = s->bnd[--s->nbnd];
		s->bnd[s->bpos[v]] = last;
		s->bpos[last] = s->bpos[v];
		s->bpos[v] = -1;
	}
}

/* Move v to the other side; its neighbours' gains follow, and with queues
 * the unlocked ones on the boundary are (re)queued. */
static void fm_flip(fm *s, int32_t v, bool queues)
{
	const level *L = s->L;
	int32_t from = s->where[v], to = 1 - from;
	s->where[v] = to;
	s->pw[from] -= L->vw[v];
	s->pw[to] += L->vw[v];
	s->cut -= s->gain[v];
	int64_t tot = 2 * s->ext[v] - s->gain[v];   /* all its edge weight */
	s->ext[v] = tot - s->ext[v];
	s->gain[v] = -s->gain[v];
	bnd_track(s, v);
	for (int64_t e = L->xadj[v]; e < L->xadj[v + 1]; e++) {
		int32_t u = L->adj[e];
		int64_t w = L->ew[e];
		if (s->where[u] == to) {   /* now an internal edge of u */
			s->gain[u] -= 2 * w;
			s->ext[u] -= w;
		} else {
			s->gain[u] += 2 * w;
			s->ext[u] += w;
		}
		bnd_track(s, u);
		if (!queues || s->locked[u])
			continue;
		pq *q = &s->q[s->where[u]];
		if (s->ext[u] > 0) {
			if (q->pos[u] >= 0)
				pq_update(q, u);
			else
				pq_push(q, u);
		} else if (q->pos[u] >= 0) {
			pq_remove(q, u);
		}
	}
}

/* One pass: moves from the heavier side (against its target) by best gain,
 * each vertex once, until `limit` moves in a row bring nothing; then back to
 * the best state seen.  True when that state is better than the start. */
static bool fm_pass(fm *s)
{
	int32_t n = s->L->n;
	/* each side's boundary into its heap: the moves list is free now */
	int32_t n0 = 0, n1 = s->nbnd;
	for (int32_t i = 0; i < s->nbnd; i++) {
		int32_t v = s->bnd[i];
		if (s->where[v] == 0)
			s->moves[n0++] = v;
		else
			s->moves[--n1] = v;
	}
	pq_build(&s->q[0], s->moves, n0);
	pq_build(&s->q[1], s->moves + n0, s->nbnd - n0);
	int32_t limit = n / 100;   /* METIS's limits */
	limit = limit < 15 ? 15 : limit > 100 ? 100 : limit;
	fm_key best = key_of(s);
	int32_t nm = 0, at_best = 0;
	for (;;) {
		int from = s->pw[0] - s->target[0] > s->pw[1] - s->target[1] ? 0 : 1;
		if (s->q[from].n == 0)
			break;
		int32_t v = pq_pop(&s->q[from]);
		s->locked[v] = true;
		fm_flip(s, v, true);
		s->moves[nm++] = v;
		fm_key k = key_of(s);
		if (key_below(k, best)) {
			best = k;
			at_best = nm;
		} else if (nm - at_best > limit) {
			break;
		}
	}
	pq_clear(&s->q[0]);
	pq_clear(&s->q[1]);
	for (int32_t i = 0; i < nm; i++)
		s->locked[s->moves[i]] = false;
	while (nm > at_best)
		fm_flip(s, s->moves[--nm], false);
	return at_best > 0;
}

static void fm_refine(fm *s, int passes)
{
	fm_params(s);
	for (int p = 0; p < passes && fm_pass(s); p++)
		;
}

/* ------------------------------------------------------------------------ */
/* The initial split                                                         */

/* Breadth-first from a random vertex into side 0 until it has its share
 * (the next start in a random order when a component runs out). */
static void grow(fm *s, uint64_t *rng, int32_t *queue, int32_t *order, bool *seen)
{
	const level *L = s->L;
	int32_t n = L->n, head = 0, tail = 0, left = n, next = 0;
	for (int32_t v = 0; v < n; v++) {
		s->where[v] = 1;
		seen[v] = false;
	}
	random_order(order, n, rng);
	int64_t pw0 = 0;
	while (left > 0) {
		if (head == tail) {
			while (seen[order[next]])
				next++;
			seen[order[next]] = true;
			queue[tail++] = order[next];
		}
		int32_t v = queue[head++];
		left--;
		/* stop where side 0 is nearest its target */
		if (pw0 + L->vw[v] - s->target[0] > s->target[0] - pw0)
			break;
		s->where[v] = 0;
		pw0 += L->vw[v];
		for (int64_t e = L->xadj[v]; e < L->xadj[v + 1]; e++)
			if (!seen[L->adj[e]]) {
				seen[L->adj[e]] = true;
				queue[tail++] = L->adj[e];
			}
	}
}

struct keyed {
	double key;
	int32_t v;
};

static int cmp_keyed(const void *x, const void *y)
{
	const struct keyed *a = x, *b = y;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->v < b->v ? -1 : a->v > b->v;
}

/* Side 0 the vertices of the lowest keys, until it is nearest its target.
 * Returns 0 or TP_ENOMEM. */
static int split_by_key(fm *s, const double *key)
{
	const level *L = s->L;
	struct keyed *k = tp__malloc_array((size_t)L->n + 1, sizeof *k);
	if (!k)
		return TP_ENOMEM;
	for (int32_t v = 0; v < L->n; v++) {
		k[v] = (struct keyed){ key[v], v };
		s->where[v] = 1;
	}
	qsort(k, (size_t)L->n, sizeof *k, cmp_keyed);
	int64_t pw0 = 0;
	for (int32_t i = 0; i < L->n; i++) {
		int32_t v = k[i].v;
		if (pw0 + L->vw[v] - s->target[0] > s->target[0] - pw0)
			break;
		s->where[v] = 0;
		pw0 += L->vw[v];
	}
	free(k);
	return 0;
}

/* The best of the random growths, and of the split by key (key may be
 * NULL), each refined. */
static int initial_split(fm *s, uint64_t *rng, const double *key)
{
	int32_t n = s->L->n;
	int32_t *queue = tp__malloc_array((size_t)n + 1, sizeof(int32_t));
	int32_t *best = tp__malloc_array((size_t)n + 1, sizeof(int32_t));
	int32_t *order = tp__malloc_array((size_t)n + 1, sizeof(int32_t));
	bool *seen = tp__malloc_array((size_t)n + 1, sizeof(bool));
	if (!queue || !best || !order || !seen) {
		free(queue);
		free(best);
		free(order);
		free(seen);
		return TP_ENOMEM;
	}
	fm_key bk = { 0, 0, 0 };
	int rc = 0;
	for (int t = key ? -1 : 0; t < GROW_TRIES && !rc; t++) {
		if (t < 0)
			rc = split_by_key(s, key);
		else
			grow(s, rng, queue, order, seen);
		fm_refine(s, TRY_PASSES);
		fm_key k = key_of(s);
		if (t == (key ? -1 : 0) || key_below(k, bk)) {
			bk = k;
			memcpy(best, s->where, sizeof(int32_t) * (size_t)n);
		}
	}
	memcpy(s->where, best, sizeof(int32_t) * (size_t)n);
	free(queue);
	free(best);
	free(order);
	free(seen);
	return rc;
}

/* A coarser level's keys: each vertex's, weighted by what it merged. */
static double *coarse_keys(const level *f, const level *c, const double *key)
{
	double *ck = tp__calloc((size_t)c->n + 1, sizeof(double));
	if (!ck)
		return NULL;
	for (int32_t v = 0; v < f->n; v++)
		ck[f->cmap[v]] += (double)f->vw[v] * key[v];
	for (int32_t v = 0; v < c->n; v++)
		ck[v] /= (double)c->vw[v];
	return ck;
}

/* ------------------------------------------------------------------------ */
/* Exact sizes                                                               */

/* Unit weights at the finest level: move `need` vertices out of side
 * `from`, each time the one whose move costs least. */
static void exact_sizes(fm *s, int from, int32_t need)
{
	pq *q = &s->q[from];
	int32_t m = 0;
	for (int32_t v = 0; v < s->L->n; v++)
		if (s->where[v] == from)
			s->moves[m++] = v;
	pq_build(q, s->moves, m);
	for (int32_t i = 0; i < need && q->n > 0; i++) {
		int32_t v = pq_pop(q);
		s->locked[v] = true;
		fm_flip(s, v, false);
		/* the neighbours left on this side change their gains */
		for (int64_t e = s->L->xadj[v]; e < s->L->xadj[v + 1]; e++) {
			int32_t u = s->L->adj[e];
			if (q->pos[u] >= 0)
				pq_update(q, u);
		}
	}
	pq_clear(q);
}

/* ------------------------------------------------------------------------ */

static void fm_free(fm *s)
{
	free(s->where);
	free(s->gain);
	free(s->ext);
	free(s->locked);
	free(s->moves);
	free(s->bnd);
	free(s->bpos);
	free(s->q[0].h);
	free(s->q[1].h);
	free(s->q[0].pos);
}

static int fm_init(fm *s, int32_t n)
{
	memset(s, 0, sizeof *s);
	size_t m = (size_t)n + 1;
	s->where = tp__malloc_array(m, sizeof(int32_t));
	s->gain = tp__malloc_array(m, sizeof(int64_t));
	s->ext = tp__malloc_array(m, sizeof(int64_t));
	s->locked = tp__calloc(m, sizeof(bool));
	s->moves = tp__malloc_array(m, sizeof(int32_t));
	s->bnd = tp__malloc_array(m, sizeof(int32_t));
	s->bpos = tp__malloc_array(m, sizeof(int32_t));
	s->q[0].h = tp__malloc_array(m, sizeof(int32_t));
	s->q[1].h = tp__malloc_array(m, sizeof(int32_t));
	s->q[0].pos = tp__malloc_array(m, sizeof(int32_t));
	if (!s->where || !s->gain || !s->ext || !s->locked || !s->moves ||
	    !s->bnd || !s->bpos ||
	    !s->q[0].h || !s->q[1].h || !s->q[0].pos) {
		fm_free(s);
		return TP_ENOMEM;
	}
	s->q[1].pos = s->q[0].pos;
	s->q[0].gain = s->q[1].gain = s->gain;
	for (int32_t v = 0; v < n; v++)
		s->q[0].pos[v] = -1;
	return 0;
}

/* The targets of a level: side 0's share of the weight, and the imbalance
 * tolerated: a thousandth (METIS's ufactor=1, as the mappers used), or an
 * average vertex where vertices are heavy. */
static void set_targets(fm *s, const level *L, int32_t n0, int32_t n)
{
	s->L = L;
	s->target[0] = (int64_t)((double)L->W * (double)n0 / (double)n + 0.5);
	s->target[1] = L->W - s->target[0];
	int64_t avg = L->n > 0 ? L->W / L->n : 1;
	s->tol = L->W / 1000 > avg ? L->W / 1000 : avg;
}

int tp__bisect(int32_t n, const int32_t *xadj, const int32_t *adj,
	       const int32_t *w, const double *key, int32_t n0, uint64_t seed,
	       int32_t *part)
{
	for (int32_t v = 0; v < n; v++)
		part[v] = v < n0 ? 0 : 1;
	if (n0 <= 0 || n0 >= n || n < 3)
		return 0;
	level lv[MAX_LEVELS];
	int nl = 1, rc = 0;
	memset(lv, 0, sizeof lv);
	level *L0 = &lv[0];
	L0->n = n;
	L0->W = n;
	L0->xadj = tp__malloc_array((size_t)n + 1, sizeof(int64_t));
	L0->vw = tp__malloc_array((size_t)n, sizeof(int64_t));
	L0->adj = (int32_t *)adj;   /* not freed: the caller's */
	L0->ew = tp__malloc_array((size_t)xadj[n] + 1, sizeof(int64_t));
	fm s;
	if (!L0->xadj || !L0->vw || !L0->ew || fm_init(&s, n)) {
		L0->adj = NULL;
		level_free(L0);
		return TP_ENOMEM;
	}
	for (int32_t v = 0; v <= n; v++)
		L0->xadj[v] = xadj[v];
	for (int32_t v = 0; v < n; v++)
		L0->vw[v] = 1;
	for (int64_t e = 0; e < xadj[n]; e++)
		L0->ew[e] = w[e];
	uint64_t rng = seed ^ 0x5851f42d4c957f2dULL;
	int64_t maxvw = (int64_t)(1.5 * (double)n / COARSEST) + 1;
	while (nl < MAX_LEVELS && lv[nl - 1].n > COARSEST) {
		if ((rc = coarsen(&lv[nl - 1], &lv[nl], &rng, maxvw)))
			break;
		nl++;
		if (lv[nl - 1].n > STALL * lv[nl - 2].n)
			break;
	}
	/* the keys carried to the coarsest level */
	double *ck = NULL;
	if (!rc && key) {
		const double *k = key;
		for (int l = 1; l < nl && k; l++) {
			double *next = coarse_keys(&lv[l - 1], &lv[l], k);
			if (k != key)
				free((double *)k);
			k = next;
		}
		if (!k)
			rc = TP_ENOMEM;
		ck = (double *)k;
	}
	if (!rc) {
		set_targets(&s, &lv[nl - 1], n0, n);
		rc = initial_split(&s, &rng, key ? ck : NULL);
	}
	if (ck != key)
		free(ck);
	for (int l = nl - 2; !rc && l >= 0; l--) {
		/* carry the split down: s.where is indexed by the coarser
		 * level's vertices, so copy it out first */
		const level *f = &lv[l];
		int32_t *coarse = tp__malloc_array((size_t)lv[l + 1].n + 1, sizeof(int32_t));
		if (!coarse) {
			rc = TP_ENOMEM;
			break;
		}
		memcpy(coarse, s.where, sizeof(int32_t) * (size_t)lv[l + 1].n);
		for (int32_t v = 0; v < f->n; v++)
			s.where[v] = coarse[f->cmap[v]];
		free(coarse);
		set_targets(&s, f, n0, n);
		fm_refine(&s, FM_PASSES);
	}
	if (!rc && nl == 1) {
		set_targets(&s, L0, n0, n);
		fm_refine(&s, FM_PASSES);
	}
	if (!rc && key && nl > 1) {
		/* the split by key at full resolution too: the coarse levels
		 * blur a straight cut, and a random start may win there */
		int32_t *ml = tp__malloc_array((size_t)n, sizeof(int32_t));
		if (!ml) {
			rc = TP_ENOMEM;
		} else {
			set_targets(&s, L0, n0, n);
			fm_params(&s);
			fm_key kml = key_of(&s);
			memcpy(ml, s.where, sizeof(int32_t) * (size_t)n);
			/* refined only when, as it stands, it is no worse: on
			 * an irregular graph a straight cut is far behind, and
			 * its passes would cost more than the rest */
			if (!(rc = split_by_key(&s, key))) {
				fm_params(&s);
				if (!key_below(kml, key_of(&s)))
					fm_refine(&s, FM_PASSES);
				if (!key_below(key_of(&s), kml))
					memcpy(s.where, ml, sizeof(int32_t) * (size_t)n);
			}
			free(ml);
		}
	}
	if (!rc) {
		s.L = L0;
		fm_params(&s);
		int64_t c0 = s.pw[0];
		if (c0 != n0) {
			exact_sizes(&s, c0 > n0 ? 0 : 1, (int32_t)(c0 > n0 ? c0 - n0 : n0 - c0));
			/* then the passes again, where only an exact state
			 * counts: they trade vertices in pairs */
			set_targets(&s, L0, n0, n);
			s.tol = 0;
			fm_refine(&s, FM_PASSES);
		}
		memcpy(part, s.where, sizeof(int32_t) * (size_t)n);
	}
	fm_free(&s);
	L0->adj = NULL;
	for (int l = 0; l < nl; l++)
		level_free(&lv[l]);
	return rc;
}
