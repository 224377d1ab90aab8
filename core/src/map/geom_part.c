/* topoplace — geometric mapping, the partitions: paired multi-jagged cuts
 * of the nodes (recording a split tree) and of the tasks (into that tree's
 * counts).  Point sets are in geom_points.c, split trees in geom_tree.c, the
 * seam shift in geom_seam.c, the closest subset in geom_subset.c, and the
 * search over variants in geom_search.c; see <topoplace/geom.h> for the
 * overview.
 *
 * A variant's node side depends only on the machine order: partitioning the
 * nodes yields a split tree (the slot counts of every part, in depth-first
 * order) and the node of every slot position.  The task side is partitioned
 * into exactly the counts of that tree along the paired task dimensions,
 * which yields a task order; task order[i] runs on the node of slot position
 * i.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "map/geom_part.h"

/* Rank of point p in dimension d: from the point itself when packed (a
 * table lookup by id misses the cache on large sets at every level), else
 * from the table. */
static inline uint32_t point_rank(const pointset *ps, const tp__pt *p, int d)
{
	return ps->packed ? (p->w >> ps->shift[d]) & ps->mask[d]
			  : tp__pointset_rank(ps, p->id, d);
}

/* The same, reflected as the order says. */
static inline uint32_t rank_of(const pointset *ps, const side_order *so,
			       const tp__pt *p, int d)
{
	uint32_t r = point_rank(ps, p, d);
	return so->reflect[d] ? ps->maxrank[d] - r : r;
}

static void fill_keys(const pointset *ps, const side_order *so, int level_pos,
		      int cutdim, tp__pt *p, int64_t n)
{
	int D = ps->dims;
	int others[TP_MAX_DIMS], no = 0;
	/* remaining dimensions, cyclically after the cut's place in perm */
	for (int k = 1; k < D; k++)
		others[no++] = so->perm[(level_pos + k) % D];
	int bits = no ? 31 / no : 0;
	uint32_t cap = bits >= 32 ? UINT32_MAX : ((1u << bits) - 1);
	for (int64_t i = 0; i < n; i++) {
		uint64_t key = (uint64_t)rank_of(ps, so, &p[i], cutdim) << 31;
		uint64_t low = 0;
		for (int k = 0; k < no; k++) {
			uint32_t r = rank_of(ps, so, &p[i], others[k]);
			if (r > cap)
				r = cap;
			low = (low << bits) | r;
		}
		p[i].key = key | low;
	}
}

/* Dimension and its place in perm for a cut at this depth. */
static int cut_dim(const pointset *ps, const side_order *so, int depth,
		   const tp__pt *p, int64_t n, int *level_pos)
{
	int D = ps->dims;
	if (!so->longest) {
		*level_pos = depth % D;
		return so->perm[*level_pos];
	}
	double lo[TP_MAX_DIMS], hi[TP_MAX_DIMS];
	for (int d = 0; d < D; d++) {
		lo[d] = INFINITY;
		hi[d] = -INFINITY;
	}
	if (!ps->pos) {
		/* ranks are coordinates minus a constant: same extents */
		uint32_t rl[TP_MAX_DIMS], rh[TP_MAX_DIMS];
		for (int d = 0; d < D; d++) {
			rl[d] = UINT32_MAX;
			rh[d] = 0;
		}
		for (int64_t i = 0; i < n; i++)
			for (int d = 0; d < D; d++) {
				uint32_t x = point_rank(ps, &p[i], d);
				rl[d] = x < rl[d] ? x : rl[d];
				rh[d] = x > rh[d] ? x : rh[d];
			}
		for (int d = 0; d < D; d++) {
			lo[d] = rl[d];
			hi[d] = rh[d];
		}
	}
	for (int64_t i = 0; ps->pos && i < n; i++) {
		const double *x = &ps->pos[(int64_t)p[i].id * D];
		for (int d = 0; d < D; d++) {
			if (x[d] < lo[d])
				lo[d] = x[d];
			if (x[d] > hi[d])
				hi[d] = x[d];
		}
	}
	int best = 0;
	for (int d = 1; d < D; d++)
		if (hi[d] - lo[d] > hi[best] - lo[best])
			best = d;
	*level_pos = best;   /* perm is the identity for the longest variant */
	return best;
}

/* Split p[0..n) so that p[0..cut) are the cut smallest points in the side's
 * order at this level (cut coordinate, then the other coordinates, then id).
 * Unweighted: cut = target exactly (0 <= target <= n).  Weighted (slots): the
 * cut whose weight is nearest target (ties to the smaller), 1 <= cut <= n-1.
 * *wleft receives the weight (or count) of p[0..cut).
 *
 * Coordinates are usually small integers with many ties (nodes in planes,
 * grid tasks), so this is a radix select: a histogram of the cut coordinate
 * finds the plane where the target falls, one pass partitions around it, and
 * only that plane is ordered by the full key.  Wide-ranged coordinates fall
 * back to quickselect.  hist needs 2n + 17 entries (or
 * tp__pointset_hist_len), tmp n points. */
/* One side's points as its cuts read them: the point set, its order, how
 * the points weigh, and the scratch of a cut. */
typedef struct cut_side {
	const pointset *ps;
	const side_order *so;
	bool weighted;       /* by their slots (nodes), else by count (tasks) */
	uint32_t wconst;     /* weighted: every point's weight when they all
				weigh the same, else 0 */
	uint64_t *hist;      /* tp__pointset_hist_len(ps) entries */
	tp__pt *tmp;         /* as many points as a cut takes */
} cut_side;

/* A cut's dimension d and its place lp in the order's perm (fill_keys
 * orders the other dimensions after it). */
typedef struct cut_axis {
	int lp, d;
} cut_axis;

/* Where a cut fell. */
typedef struct cut_result {
	uint32_t plane;      /* the rank the cut falls in (the left side is
				at most it, the right side at least it), or
				UINT32_MAX when the cut was by full keys and
				says nothing of the box */
	uint64_t wleft;      /* the weight (or count) left of the cut */
} cut_result;

/* Three-way partition of p[0..n) by key, or (by_rank) by the rank in
 * dimension d (no pass to write keys first): [< pv][== pv][> pv]; returns
 * the start of the middle part.  Branch-free (the comparisons are coin
 * flips): the smaller points are compacted in place, the equal ones
 * collected at the front of s->tmp and the larger ones at its back, then
 * both copied behind.  *neq receives the size of the middle part.  Inlined
 * into both callers, each with its own comparison. */
static inline __attribute__((always_inline)) int64_t
partition3_by(const cut_side *s, bool by_rank, int d, tp__pt *p, int64_t n,
	      uint64_t pv, int64_t *neq)
{
	const pointset *ps = s->ps;
	const side_order *so = s->so;
	tp__pt *tmp = s->tmp;
	int64_t lt = 0, eq = 0, gt = n - 1;
	for (int64_t i = 0; i < n; i++) {
		tp__pt c = p[i];
		uint64_t v = by_rank ? rank_of(ps, so, &c, d) : c.key;
		int64_t below = v < pv, above = v > pv;
		p[lt] = c;
		tmp[eq] = c;
		tmp[gt] = c;
		lt += below;
		eq += !(below | above);
		gt -= above;
	}
	memcpy(p + lt, tmp, sizeof *p * (size_t)eq);
	memcpy(p + lt + eq, tmp + gt + 1, sizeof *p * (size_t)(n - 1 - gt));
	*neq = eq;
	return lt;
}

static int64_t partition3(const cut_side *s, tp__pt *p, int64_t n,
			  uint64_t pv, int64_t *neq)
{
	return partition3_by(s, false, 0, p, n, pv, neq);
}

static int64_t partition3_rank(const cut_side *s, int d, tp__pt *p, int64_t n,
			       uint32_t pv, int64_t *neq)
{
	return partition3_by(s, true, d, p, n, pv, neq);
}

/* The plane a cut falls in, once partitioned: its points p[lt..lt+g), the
 * weight below it, and what is left of the target within it (t2). */
typedef struct plane_cut {
	int64_t lt, g;
	uint64_t below, t2;
} plane_cut;

/* The weighted cut of cut_range when every point weighs w = s->wconst: the
 * prefix of the plane nearest the target is a count (ties to the smaller),
 * and selecting that many gives the same set as sorting the plane, in
 * linear time. */
static int64_t cut_equal_weights(const cut_side *s, cut_axis ax, tp__pt *p,
				 int64_t n, const plane_cut *pc, uint64_t *wleft)
{
	int64_t lt = pc->lt, g = pc->g;
	uint64_t below = pc->below, t2 = pc->t2, w = s->wconst;
	int64_t j = (int64_t)(t2 / w);
	if ((uint64_t)(j + 1) * w - t2 < t2 - (uint64_t)j * w)
		j++;
	if (j > g)
		j = g;
	int64_t cut = lt + j;
	uint64_t wl = below + (uint64_t)j * w;
	int64_t k = -1;             /* the plane's point to select, if any */
	if (cut < 1) {              /* lt = 0: the smallest first */
		k = 0;
		cut = 1;
		wl = w;
	} else if (cut > n - 1) {   /* the largest last */
		k = g - 1;
		cut = n - 1;
		wl -= w;
	} else if (j > 0 && j < g) {
		k = j;
	}
	if (k >= 0) {
		fill_keys(s->ps, s->so, ax.lp, ax.d, p + lt, g);
		tp__select(p + lt, g, k);
	}
	*wleft = wl;
	return cut;
}

/* tp__wselect when every point weighs w and the points hold packed ranks
 * instead of their weight: the same cut, by count.  tp__wselect stops at
 * the point pos where the target falls (the last one at most) and cuts
 * after it when that lands nearer the target, or when pos is the first;
 * never after the last. */
static int64_t wselect_equal(tp__pt *p, int64_t n, uint64_t target,
			     uint64_t w, uint64_t *wleft)
{
	if (n < 2) {
		*wleft = n ? w : 0;
		return n;
	}
	int64_t pos = (int64_t)(target / w);
	if (pos > n - 1)
		pos = n - 1;
	uint64_t before = (uint64_t)pos * w, after = before + w;
	int64_t cut = pos;
	if (after - target < target - before || pos == 0)
		cut = pos + 1;
	if (cut >= n)
		cut = pos;
	tp__select(p, n, cut);
	*wleft = (uint64_t)cut * w;
	return cut;
}

/* A part's box: every point's rank in dimension d (as rank_of gives it)
 * lies in [lo[d], hi[d]].  Cuts narrow it, so it may be wider than the
 * points but never narrower. */
typedef struct box {
	uint32_t lo[TP_MAX_DIMS], hi[TP_MAX_DIMS];
} box;

static void box_whole(const pointset *ps, box *b)
{
	for (int d = 0; d < ps->dims; d++) {
		b->lo[d] = 0;
		b->hi[d] = ps->maxrank[d];
	}
}

/* The histogram of cut_range over few planes [lo, lo + size) into
 * s->hist, when every point weighs the same: four counters in turn, since
 * neighbouring points mostly share a plane and one counter would chain each
 * increment to the last. */
#define FEW_PLANES 256

static void count_planes(const cut_side *s, int d, const tp__pt *p, int64_t n,
			 uint32_t lo, uint32_t size)
{
	const pointset *ps = s->ps;
	const side_order *so = s->so;
	uint64_t unit = s->weighted ? s->wconst : 1, *hist = s->hist;
	uint32_t c[4][FEW_PLANES];
	memset(c, 0, sizeof c);
	int64_t i = 0;
	for (; i + 4 <= n; i += 4)
		for (int k = 0; k < 4; k++)
			c[k][rank_of(ps, so, &p[i + k], d) - lo]++;
	for (; i < n; i++)
		c[0][rank_of(ps, so, &p[i], d) - lo]++;
	for (uint32_t v = 0; v < size; v++)
		hist[v] = ((uint64_t)c[0][v] + c[1][v] + c[2][v] + c[3][v]) * unit;
}

/* Cuts p[0..n), all in box bx, across ax.d so that the left part weighs
 * (or counts) as near target as the points allow; returns the left part's
 * size, and where the cut fell in *res. */
static int64_t cut_range(const cut_side *s, cut_axis ax, tp__pt *p, int64_t n,
			 uint64_t target, const box *bx, cut_result *res)
{
	const pointset *ps = s->ps;
	const side_order *so = s->so;
	bool weighted = s->weighted;
	uint32_t wconst = s->wconst;
	uint64_t *hist = s->hist;
	int lp = ax.lp, d = ax.d;
	uint32_t *plane = &res->plane;
	uint64_t *wleft = &res->wleft;
	*plane = UINT32_MAX;
	uint32_t lo = bx->lo[d], hi = bx->hi[d];
	/* The box is narrow enough for the histogram: no pass to find the
	 * points' own range (empty ranks at its ends cost nothing), and the
	 * partition reads the ranks itself.  Otherwise the points' range. */
	bool fused = (uint64_t)(hi - lo) <= 2 * (uint64_t)n + 16;
	if (!fused) {
		lo = UINT32_MAX;
		hi = 0;
		for (int64_t i = 0; i < n; i++) {
			uint32_t r = rank_of(ps, so, &p[i], d);
			p[i].key = r;
			lo = r < lo ? r : lo;
			hi = r > hi ? r : hi;
		}
	}
	if ((uint64_t)(hi - lo) > 2 * (uint64_t)n + 16) {
		fill_keys(ps, so, lp, d, p, n);
		if (weighted && ps->packed)
			return wselect_equal(p, n, target, wconst, wleft);
		if (weighted)
			return tp__wselect(p, n, target, wleft);
		if (target > 0 && (int64_t)target < n)
			tp__select(p, n, (int64_t)target);
		*wleft = target;
		return (int64_t)target;
	}
	uint32_t size = hi - lo + 1;
	memset(hist, 0, sizeof(uint64_t) * size);
	if (fused && (!weighted || wconst) && size <= FEW_PLANES &&
	    n >= 16 * (int64_t)size)
		count_planes(s, d, p, n, lo, size);
	else if (fused)
		for (int64_t i = 0; i < n; i++)
			hist[rank_of(ps, so, &p[i], d) - lo] +=
				!weighted ? 1 : wconst ? wconst : p[i].w;
	else
		for (int64_t i = 0; i < n; i++)
			hist[p[i].key - lo] += !weighted ? 1 : wconst ? wconst : p[i].w;
	/* plane v where the target falls: W(< v) <= target < W(<= v) */
	uint64_t below = 0;
	uint32_t v = 0;
	while (v < size && below + hist[v] <= target)
		below += hist[v++];
	if (v == size) {         /* target is the whole weight: the last
				    plane that holds points */
		v = size - 1;
		while (v > 0 && hist[v] == 0)
			v--;
		below -= hist[v];
	}
	uint64_t pv = (uint64_t)v + lo;
	*plane = (uint32_t)pv;
	int64_t g, lt = fused ? partition3_rank(s, d, p, n, (uint32_t)pv, &g)
			      : partition3(s, p, n, pv, &g);
	/* the plane's points need their full keys only where some of them
	 * are selected: a cut on the plane's edge takes it whole */
	uint64_t t2 = target - below;
	if (!weighted) {
		if (t2 > 0 && (int64_t)t2 < g) {
			fill_keys(ps, so, lp, d, p + lt, g);
			tp__select(p + lt, g, (int64_t)t2);
		}
		*wleft = target;
		return lt + (int64_t)t2;
	}
	if (wconst) {
		plane_cut pc = { lt, g, below, t2 };
		return cut_equal_weights(s, ax, p, n, &pc, wleft);
	}
	/* weighted: order the plane and take the prefix nearest the target */
	fill_keys(ps, so, lp, d, p + lt, g);
	tp__sort(p + lt, g);
	uint64_t acc = 0, best_w = 0, best_d = UINT64_MAX;
	int64_t best_j = 0;
	for (int64_t j = 0; j <= g; j++) {
		uint64_t dist = acc > t2 ? acc - t2 : t2 - acc;
		if (dist < best_d) {
			best_d = dist;
			best_j = j;
			best_w = acc;
		}
		if (j < g)
			acc += p[lt + j].w;
	}
	int64_t cut = lt + best_j;
	uint64_t w = below + best_w;
	if (cut < 1) {              /* p[0] is the smallest: the plane is sorted */
		cut = 1;
		w = p[0].w;
	} else if (cut > n - 1) {   /* p[n-1] is the largest, likewise */
		cut = n - 1;
		w -= p[n - 1].w;
	}
	*wleft = w;
	return cut;
}

typedef struct node_ctx {
	cut_side cs;                  /* weighted by the nodes' slots */
	const int32_t *alloc_index;  /* pointset id -> allocation index */
	int k;
	tree *tr;
	int32_t *leaf_node;
	int32_t nleaves;
	double deadline;              /* tp__now_ms() past it: give up */
	bool split;                   /* the root's last part on a thread */
} node_ctx;

static int node_rec(node_ctx *c, tp__pt *p, int64_t n, int depth, const box *bx);

/* The root's last part: its own tree (checked against the same rule for
 * its size, or stored), its leaves in place after the other parts', its
 * own histogram, and its own stretch of the scratch (the other parts use
 * no more than the first start of it). */
struct node_part_job {
	node_ctx c;
	tree t, rule;
	tp__pt *p;
	int64_t n;
	int depth;
	box bx;
	int rc;
	pthread_t th;
};

static void *node_part_run(void *arg)
{
	struct node_part_job *j = arg;
	j->rc = node_rec(&j->c, j->p, j->n, j->depth, &j->bx);
	return NULL;
}

/* Start part [at, at + m) of c's root on a thread; false when it is not
 * worth it or not possible (the caller cuts it itself). */
static bool node_part_start(node_ctx *c, struct node_part_job *j, tp__pt *p,
			    int64_t at, int64_t m, int depth, const box *bx)
{
	const tree *e = c->tr->expect;
	if (!c->split || m < TP__SPLIT_NODES || (e && e->v))
		return false;
	memset(j, 0, sizeof *j);
	j->c = *c;
	j->c.split = false;
	j->c.tr = &j->t;
	j->c.leaf_node = c->leaf_node + at;   /* one leaf per node */
	j->c.nleaves = 0;
	j->c.cs.tmp = c->cs.tmp + at;
	size_t hl = tp__pointset_hist_len(c->cs.ps);
	if (hl > 2 * (size_t)m + 17)
		hl = 2 * (size_t)m + 17;
	if (!(j->c.cs.hist = malloc(sizeof(uint64_t) * hl)))
		return false;
	if (e) {   /* implicit: the same rule for the part's size */
		j->rule = *e;
		j->rule.rule_n = m;
		j->t.expect = &j->rule;
	}
	j->p = p + at;
	j->n = m;
	j->depth = depth;
	j->bx = *bx;
	if (pthread_create(&j->th, NULL, node_part_run, j)) {
		free(j->c.cs.hist);
		return false;
	}
	return true;
}

/* Wait for the part and put its tree after c's, its leaves after c's. */
static int node_part_join(node_ctx *c, struct node_part_job *j, int rc)
{
	pthread_join(j->th, NULL);
	free(j->c.cs.hist);
	if (!rc)
		rc = j->rc;
	tree *t = c->tr;
	if (!rc && t->expect && j->t.expect) {
		t->len += j->t.len;   /* both followed the rule */
	} else if (!rc) {
		/* one of them stored: c's tree written out, the part's after */
		if (t->expect)
			rc = tp__tree_materialize(t);
		if (!rc && j->t.expect)
			rc = tp__tree_predict(t, j->rule.rule_n, j->rule.rule_w,
					      j->rule.rule_k);
		for (int64_t i = 0; !rc && !j->t.expect && i < j->t.len; i++)
			rc = tp__tree_push(t, j->t.v[i]);
	}
	free(j->t.v);
	c->nleaves += j->c.nleaves;
	return rc;
}

/* Parts this large check the clock before they are cut (a cut costs far
 * more than reading the clock). */
#define CLOCK_EVERY 4096

static int node_rec(node_ctx *c, tp__pt *p, int64_t n, int depth, const box *bx)
{
	if (n >= CLOCK_EVERY && tp__now_ms() > c->deadline)
		return TP_ETIME;
	if (n == 1) {
		c->leaf_node[c->nleaves++] = c->alloc_index ? c->alloc_index[p[0].id]
							    : (int32_t)p[0].id;
		return tp__tree_push(c->tr, 0);
	}
	int lp, d = cut_dim(c->cs.ps, c->cs.so, depth, p, n, &lp);
	if (n == 2) {
		/* a pair (half of all splits with one slot per node): order it */
		fill_keys(c->cs.ps, c->cs.so, lp, d, p, 2);
		tp__sort(p, 2);
		int64_t two[2] = { c->cs.wconst ? c->cs.wconst : p[0].w,
				   c->cs.wconst ? c->cs.wconst : p[1].w };
		int rc = tp__tree_check(c->tr, 2, 2, two);
		if (!rc)
			rc = tp__tree_push(c->tr, 2);
		for (int j = 0; j < 2 && !rc; j++)
			rc = tp__tree_push(c->tr, two[j]);
		if (!rc)
			rc = node_rec(c, p, 1, depth + 1, bx);
		return rc ? rc : node_rec(c, p + 1, 1, depth + 1, bx);
	}
	uint64_t total = (uint64_t)n * c->cs.wconst;
	for (int64_t i = 0; !c->cs.wconst && i < n; i++)
		total += p[i].w;
	int k = c->k < n ? c->k : (int)n;
	int64_t start[64 + 1], cnt[64];
	uint32_t plane[64];
	uint64_t done = 0;
	int64_t pos = 0;
	box rest = *bx;   /* what is left after the cuts so far */
	for (int j = 0; j < k - 1; j++) {
		/* target for the end of part j, relative to what is left */
		uint64_t target = total * (uint64_t)(j + 1) / (uint64_t)k - done;
		int64_t left = n - pos;
		cut_result r;
		int64_t cut = cut_range(&c->cs, (cut_axis){ lp, d }, p + pos, left,
					target, &rest, &r);
		uint64_t wl = r.wleft;
		plane[j] = r.plane;
		/* leave at least one node for each remaining part */
		int64_t maxcut = left - (k - 1 - j);
		if (cut > maxcut) {
			/* the smallest maxcut points instead */
			fill_keys(c->cs.ps, c->cs.so, lp, d, p + pos, left);
			tp__select(p + pos, left, maxcut);
			cut = maxcut;
			plane[j] = UINT32_MAX;
			wl = (uint64_t)cut * c->cs.wconst;
			for (int64_t i = 0; !c->cs.wconst && i < cut; i++)
				wl += p[pos + i].w;
		}
		start[j] = pos;
		cnt[j] = (int64_t)wl;
		pos += cut;
		done += wl;
		if (plane[j] != UINT32_MAX)
			rest.lo[d] = plane[j];
	}
	start[k - 1] = pos;
	cnt[k - 1] = (int64_t)(total - done);
	start[k] = n;
	int rc = tp__tree_check(c->tr, n, k, cnt);
	if (!rc)
		rc = tp__tree_push(c->tr, k);
	for (int j = 0; j < k && !rc; j++)
		rc = tp__tree_push(c->tr, cnt[j]);
	/* at the root, the last part (its box is what the cuts left) on a
	 * thread while this one cuts the others */
	struct node_part_job last;
	bool split = !rc && depth == 0 &&
		     node_part_start(c, &last, p, start[k - 1], n - start[k - 1],
				     depth + 1, &rest);
	box part = *bx;
	for (int j = 0; j < k - split && !rc; j++) {
		part.hi[d] = j < k - 1 && plane[j] != UINT32_MAX ? plane[j] : bx->hi[d];
		rc = node_rec(c, p + start[j], start[j + 1] - start[j], depth + 1,
			      &part);
		if (j < k - 1 && plane[j] != UINT32_MAX)
			part.lo[d] = plane[j];
	}
	return split ? node_part_join(c, &last, rc) : rc;
}

/* ------------------------------------------------------------------------ */
/* Task side: partition into the counts of a split tree                     */

typedef struct task_ctx {
	cut_side cs;                 /* by count */
	const tree *tr;
	int64_t cur;
	double deadline;
	const tp__task_order *out;   /* or NULL: p is the result */
	const tp__pt *base;          /* p of the root: places are from it */
} task_ctx;

/* A leaf's tasks p[0..n) at their places, when they go to c->out. */
static void put_leaf(const task_ctx *c, const tp__pt *p, int64_t n)
{
	int32_t at = (int32_t)(p - c->base);
	for (int64_t i = 0; i < n; i++) {
		if (c->out->pos)
			c->out->pos[p[i].id] = at + (int32_t)i;
		else
			c->out->at[at + i] = (int32_t)p[i].id;
	}
}

/* A whole box of a grid point set (ps->grid) is every point whose ranks, as
 * rank_of gives them, lie in bx; its points are not in p until box_points
 * writes them there, in any order (a part's order is not its result), as
 * tp__pointset_pt(ps, id, 1) gives them.  A leaf's (leaf, with c->out) go
 * straight to their places instead. */
static void box_points(const task_ctx *c, const box *bx, tp__pt *p, bool leaf)
{
	const pointset *ps = c->cs.ps;
	const side_order *so = c->cs.so;
	const tp__task_order *out = leaf ? c->out : NULL;
	int32_t place = (int32_t)(p - c->base);
	int D = ps->dims;
	uint32_t lo[TP_MAX_DIMS], hi[TP_MAX_DIMS], at[TP_MAX_DIMS];
	for (int d = 0; d < D; d++) {
		/* rank_of reflects: back to the point's own ranks */
		lo[d] = so->reflect[d] ? ps->maxrank[d] - bx->hi[d] : bx->lo[d];
		hi[d] = so->reflect[d] ? ps->maxrank[d] - bx->lo[d] : bx->hi[d];
		at[d] = lo[d];
	}
	for (int64_t i = 0;; i++) {
		int64_t id = 0;
		uint32_t w = ps->packed ? 0 : 1;
		for (int d = 0; d < D; d++) {
			id += (int64_t)at[d] * ps->idstride[d];
			if (ps->packed)
				w |= at[d] << ps->shift[d];
		}
		if (out && out->pos)
			out->pos[id] = place + (int32_t)i;
		else if (out)
			out->at[place + i] = (int32_t)id;
		else
			p[i] = (tp__pt){ .key = 0, .id = (uint32_t)id, .w = w };
		int d = 0;
		while (d < D && at[d] == hi[d]) {
			at[d] = lo[d];
			d++;
		}
		if (d == D)
			return;
		at[d]++;
	}
}

/* cut_dim for a whole box: its points span it exactly. */
static int box_cut_dim(const pointset *ps, const side_order *so, int depth,
		       const box *bx, int *level_pos)
{
	int D = ps->dims;
	if (!so->longest) {
		*level_pos = depth % D;
		return so->perm[*level_pos];
	}
	int best = 0;
	for (int d = 1; d < D; d++)
		if (bx->hi[d] - bx->lo[d] > bx->hi[best] - bx->lo[best])
			best = d;
	*level_pos = best;
	return best;
}

/* Whether every one of the k counts of a whole box is a positive number of
 * its planes across d, which go to nplanes[]: then cut_range would cut each
 * between two planes, and each part is again a whole box.  (This runs at
 * every part: one 32-bit division a count.) */
static bool box_cuts_between_planes(const box *bx, int dims, int d, int64_t k,
				    const int64_t *cnt, uint32_t *nplanes)
{
	uint32_t plane = 1;   /* the other extents' product: n / extent */
	for (int e = 0; e < dims; e++)
		if (e != d)
			plane *= bx->hi[e] - bx->lo[e] + 1;
	uint32_t left = bx->hi[d] - bx->lo[d] + 1;
	for (int64_t j = 0; j < k - 1; j++) {
		uint32_t q = (uint32_t)cnt[j] / plane;
		if (cnt[j] <= 0 || q * plane != (uint32_t)cnt[j] || q >= left)
			return false;
		nplanes[j] = q;
		left -= q;
	}
	nplanes[k - 1] = left;   /* what is left is whole planes too */
	return true;
}

static int task_rec(task_ctx *c, tp__pt *p, int64_t n, int depth, const box *bx,
		    bool whole)
{
	if (n >= CLOCK_EVERY && tp__now_ms() > c->deadline)
		return TP_ETIME;
	int64_t k, cnt[64];
	if (c->tr->v) {
		k = c->tr->v[c->cur++];
		for (int64_t j = 0; j < k; j++)
			cnt[j] = c->tr->v[c->cur + j];
		c->cur += k;
	} else {   /* implicit: n tasks are n / w nodes */
		uint64_t w = c->tr->rule_w;
		int64_t nodes = (int64_t)((uint64_t)n / w);
		k = nodes > 1 ? tp__tree_rule(nodes, w, c->tr->rule_k, cnt) : 0;
		for (int64_t j = 0; j < k; j++)
			cnt[j] = (int64_t)((uint64_t)cnt[j] * w);
	}
	if (k == 0) {
		if (whole)
			box_points(c, bx, p, true);
		else if (c->out)
			put_leaf(c, p, n);
		return 0;
	}
	int lp, d;
	if (whole) {
		d = box_cut_dim(c->cs.ps, c->cs.so, depth, bx, &lp);
		uint32_t nplanes[64];
		if (box_cuts_between_planes(bx, c->cs.ps->dims, d, k, cnt, nplanes)) {
			/* each part its planes, as cut_range would cut them */
			box part = *bx;
			int64_t pos = 0;
			int rc = 0;
			for (int64_t j = 0; j < k && !rc; j++) {
				part.hi[d] = part.lo[d] + nplanes[j] - 1;
				rc = task_rec(c, p + pos, cnt[j], depth + 1, &part, true);
				part.lo[d] = part.hi[d] + 1;
				pos += cnt[j];
			}
			return rc;
		}
		box_points(c, bx, p, false);
	} else {
		d = cut_dim(c->cs.ps, c->cs.so, depth, p, n, &lp);
	}
	if (n == 2 && k == 2) {
		/* two tasks, one per part: order them */
		fill_keys(c->cs.ps, c->cs.so, lp, d, p, 2);
		tp__sort(p, 2);
		task_rec(c, p, 1, depth + 1, bx, false);
		return task_rec(c, p + 1, 1, depth + 1, bx, false);
	}
	int64_t pos = 0;
	uint32_t plane[64];
	box rest = *bx;
	for (int64_t j = 0; j < k - 1; j++) {
		cut_result r;
		cut_range(&c->cs, (cut_axis){ lp, d }, p + pos, n - pos,
			  (uint64_t)cnt[j], &rest, &r);
		plane[j] = r.plane;
		if (plane[j] != UINT32_MAX)
			rest.lo[d] = plane[j];
		pos += cnt[j];
	}
	pos = 0;
	int rc = 0;
	box part = *bx;
	for (int64_t j = 0; j < k && !rc; j++) {
		part.hi[d] = j < k - 1 && plane[j] != UINT32_MAX ? plane[j] : bx->hi[d];
		rc = task_rec(c, p + pos, cnt[j], depth + 1, &part, false);
		if (j < k - 1 && plane[j] != UINT32_MAX)
			part.lo[d] = plane[j];
		pos += cnt[j];
	}
	return rc;
}

int tp__part_nodes(const tp__part_side *side, tp__node_cuts *cuts, tp__pt *p,
		   int64_t n)
{
	const pointset *ps = side->ps;
	/* packed points hold their ranks, not their (common) weight */
	uint32_t wconst = ps->packed ? ps->wconst : n > 0 ? p[0].w : 0;
	for (int64_t i = 1; i < n && wconst && !ps->packed; i++)
		if (p[i].w != wconst)
			wconst = 0;
	node_ctx nc = {
		.cs = { ps, side->so, true, wconst, side->hist, side->tmp },
		.alloc_index = cuts->alloc_index,
		.k = cuts->k,
		.tr = cuts->tr,
		.leaf_node = cuts->leaf_node,
		.deadline = side->deadline,
		.split = cuts->split,
	};
	box bx;
	box_whole(ps, &bx);
	int rc = node_rec(&nc, p, n, 0, &bx);
	cuts->nleaves = nc.nleaves;
	return rc;
}

int tp__part_tasks(const tp__part_side *side, const tree *tr, tp__pt *p,
		   int64_t n, const tp__task_order *out)
{
	const pointset *ps = side->ps;
	task_ctx tctx = {
		.cs = { ps, side->so, false, 0, side->hist, side->tmp },
		.tr = tr,
		.deadline = side->deadline,
		.out = out,
		.base = p,
	};
	box bx;
	box_whole(ps, &bx);
	return task_rec(&tctx, p, n, 0, &bx, ps->grid && n > 0 && n == ps->n);
}
