/* topoplace — hierarchical mapping (tp_graphmap_hierarchical), for networks
 * that are hierarchies: switch trees (the switches from the top down),
 * dragonflies (groups, then routers) and block networks (the switches above
 * the blocks, then the blocks: NVLink domains).  After Mt-KaHyPar's
 * hierarchical process mapping and Wu et al.'s recursive mapping.
 *
 * The allocation's nodes are sorted by their path in the hierarchy
 * (network.h: hierarchy), so that every group is a contiguous run.  From the
 * top down, the tasks of a group are split over its children (subgroups, or
 * at the bottom the nodes themselves) with METIS, each child receiving
 * exactly as many tasks as it has slots (target part weights, tpwgts, then
 * an exact repair by best gain), and every child is split the same way in
 * turn.  A level with a single child is passed through.  With fewer tasks
 * than slots the largest children are filled first: fewer groups in use
 * means less traffic over their uplinks.
 *
 * Why this beats a flat bisection on trees: the leaf switches of a
 * fragmented allocation hold unequal numbers of nodes, and a cut along the
 * node order does not follow them; here every cut is one of the network's
 * own, with the exact capacities.  Which part goes to which child does not
 * matter: the children of one switch are all equally far from each other
 * and from everything outside the switch (a dragonfly's groups nearly so).
 *
 * Deterministic (METIS with a fixed seed, ties to the lower index); memory
 * linear in tasks, edges and nodes; the time budget is checked before every
 * METIS call, which is not started when it would not fit (TP_ETIME).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include "map/geom_select.h"
#include "map/hpaths.h"
#include "map/metis_load.h"
#include "map/metis_split.h"
#include "net/network.h"
#include "map/graphmap_internal.h"
#include "input/alloc_internal.h"

typedef struct hm {
	const tp_graph *g;
	const tp_alloc *a;
	int64_t *path;          /* nnodes x depth */
	int depth;              /* the longest path (its stride) */
	int *plen;
	int32_t *order;         /* allocation indices sorted by path */
	int32_t *map;
	int32_t *local;         /* task -> index in the current part, or -1 */
	int32_t *scratch;       /* ntasks */
	struct tp__metis metis; /* linked, or loaded (metis_load.h) */
	tp__pt *keys;           /* ntasks, for coordinate splits; NULL: METIS */
	int seed;
	double deadline;        /* tp__now_ms() limit, 0: none */
	char why[128];
} hm;

/* The key of allocation node i at depth d: its group there, or itself
 * below the end of its path. */
static int64_t key_at(const hm *h, int32_t i, int d)
{
	return d < h->plen[i] ? h->path[(size_t)i * (size_t)h->depth + (size_t)d]
			      : -1 - (int64_t)i;
}

static int cmp_path(const void *x, const void *y, void *arg)
{
	const hm *h = arg;
	int32_t i = *(const int32_t *)x, j = *(const int32_t *)y;
	int n = h->plen[i] < h->plen[j] ? h->plen[i] : h->plen[j];
	for (int d = 0; d < n; d++) {
		int64_t a = key_at(h, i, d), b = key_at(h, j, d);
		if (a != b)
			return a < b ? -1 : 1;
	}
	if (h->plen[i] != h->plen[j])
		return h->plen[i] < h->plen[j] ? -1 : 1;
	return i < j ? -1 : i > j;
}

/* ---- one split ---- */

/* Split the nT tasks T into k parts of exactly cnt[0..k-1] tasks
 * (part[i] for T[i]).  Returns 0 or a negative code. */
static int split_k(hm *h, const int32_t *T, int32_t nT, int k,
		   const int32_t *cnt, idx_t *part)
{
	int64_t *want = tp__malloc_array((size_t)k, sizeof *want);
	if (!want)
		return TP_ENOMEM;
	for (int p = 0; p < k; p++)
		want[p] = cnt[p];
	for (int32_t i = 0; i < nT; i++)
		h->local[T[i]] = i;
	struct tp__metis_sub sub = { h->g, T, nT, h->local };
	struct tp__metis_split s = { &h->metis, h->seed, h->deadline, METIS_OK };
	int rc = tp__metis_split_exact(&s, &sub, want, k, part);
	if (!rc && s.metis_rc != METIS_OK) {
		rc = s.metis_rc == METIS_ERROR_MEMORY ? TP_ENOMEM : TP_EINVAL;
		snprintf(h->why, sizeof h->why, "METIS_PartGraphRecursive failed (%d)",
			 s.metis_rc);
	}
	for (int32_t i = 0; i < nT; i++)
		h->local[T[i]] = -1;
	free(want);
	return rc;
}

/* ---- one split by task coordinates ---- */

/* A task's place along the cut's dimension is a geom_select point: the
 * coordinate as an ordered key, the task as its id (ties go by task, the
 * same on every platform) and its index in T in w. */

/* The bits of x as a key of the same order (finite x; -0 as +0). */
static uint64_t key_of(double x)
{
	x += 0.0;
	uint64_t u;
	memcpy(&u, &x, sizeof u);
	return u >> 63 ? ~u : u | (UINT64_C(1) << 63);
}

static double double_of(uint64_t k)
{
	uint64_t u = k >> 63 ? k & ~(UINT64_C(1) << 63) : ~k;
	double x;
	memcpy(&x, &u, sizeof x);
	return x;
}

/* Task t's coordinate d: its own, or its stencil grid position (x
 * fastest, tp__grid_next). */
static double tcoord(const tp_graph *g, int32_t t, int d)
{
	if (g->coords)
		return g->coords[(size_t)t * (size_t)g->coord_dims + (size_t)d];
	for (int e = 0; e < d; e++)
		t /= g->grid[e];
	return d < g->grid_ndims - 1 ? t % g->grid[d] : t;
}

/* All of task t's coordinates into x. */
static void tpos(const tp_graph *g, int32_t t, double *x)
{
	if (g->coords) {
		const double *c = &g->coords[(size_t)t * (size_t)g->coord_dims];
		for (int d = 0; d < g->coord_dims; d++)
			x[d] = c[d];
		return;
	}
	int last = g->grid_ndims - 1;
	for (int d = 0; d < last; d++) {
		x[d] = t % g->grid[d];
		t /= g->grid[d];
	}
	x[last] = t;
}

/* Children c0..c1-1 (counts cnt) in two runs of about equal counts: the
 * first child of the second run, and in *m the first run's count. */
static int children_cut(const int32_t *cnt, int c0, int c1, int64_t *m)
{
	int64_t half = 0, left = 0, best_gap = INT64_MAX;
	for (int c = c0; c < c1; c++)
		half += cnt[c];
	int s = c0 + 1;
	for (int c = c0; c < c1 - 1; c++) {
		left += cnt[c];
		int64_t gap = 2 * left - half;
		if (gap < 0)
			gap = -gap;
		if (gap < best_gap) {
			best_gap = gap;
			s = c + 1;
		}
	}
	*m = 0;
	for (int c = c0; c < s; c++)
		*m += cnt[c];
	return s;
}

/* Split the tasks of k[0..n) over children c0..c1-1 (counts cnt, summing
 * to n): the children in two runs of about equal counts, the tasks cut
 * across the longest extent of their box [lo, hi] at the first run's
 * count, and each side split the same way.  A side's box is its parent's
 * with the cut dimension narrowed to its own keys: one pass over the keys
 * already there, where the exact box took a pass decoding every position
 * (a large share of the time on large graphs). */
/* What stays the same down bisect_coords' recursion: the tasks'
 * coordinates (g), the children's counts and the part of every task (by
 * its w, the task's index in split_k_coords' list). */
struct coord_split {
	const tp_graph *g;
	const int32_t *cnt;
	idx_t *part;
};

/* A box of task coordinates, lo[d] <= x[d] <= hi[d]. */
struct coord_box {
	double lo[TP_MAX_DIMS], hi[TP_MAX_DIMS];
};

static void bisect_coords(const struct coord_split *cs, tp__pt *k, int32_t n,
			  int c0, int c1, const struct coord_box *bx)
{
	const tp_graph *g = cs->g;
	const int32_t *cnt = cs->cnt;
	int nd = g->coord_dims;
	double blo[TP_MAX_DIMS], bhi[TP_MAX_DIMS];
	for (int d = 0; d < nd; d++) {
		blo[d] = bx->lo[d];
		bhi[d] = bx->hi[d];
	}
	while (c1 - c0 > 1) {
		int64_t m64;
		int s = children_cut(cnt, c0, c1, &m64);
		int32_t m = (int32_t)m64;
		/* the sides' boxes: this one, the cut dimension narrowed */
		struct coord_box l, r;
		double *llo = l.lo, *lhi = l.hi, *rlo = r.lo, *rhi = r.hi;
		for (int d = 0; d < nd; d++) {
			llo[d] = rlo[d] = blo[d];
			lhi[d] = rhi[d] = bhi[d];
		}
		if (m > 0 && m < n) {
			int dim = 0;
			for (int d = 1; d < nd; d++)
				if (bhi[d] - blo[d] > bhi[dim] - blo[dim])
					dim = d;
			for (int32_t j = 0; j < n; j++)
				k[j].key = key_of(tcoord(g, (int32_t)k[j].id, dim));
			tp__select(k, n, m);
			uint64_t lmax = 0, rmin = UINT64_MAX;
			for (int32_t j = 0; j < m; j++)
				lmax = k[j].key > lmax ? k[j].key : lmax;
			for (int32_t j = m; j < n; j++)
				rmin = k[j].key < rmin ? k[j].key : rmin;
			lhi[dim] = double_of(lmax);
			rlo[dim] = double_of(rmin);
		}
		/* the smaller side by recursion, the larger in the loop */
		const double *nlo, *nhi;
		if (m <= n - m) {
			bisect_coords(cs, k, m, c0, s, &l);
			k += m;
			n -= m;
			c0 = s;
			nlo = rlo;
			nhi = rhi;
		} else {
			bisect_coords(cs, k + m, n - m, s, c1, &r);
			n = m;
			c1 = s;
			nlo = llo;
			nhi = lhi;
		}
		for (int d = 0; d < nd; d++) {
			blo[d] = nlo[d];
			bhi[d] = nhi[d];
		}
	}
	for (int32_t j = 0; j < n; j++)
		cs->part[k[j].w] = c0;
}

/* split_k by coordinates: no METIS, and no edges read. */
static int split_k_coords(hm *h, const int32_t *T, int32_t nT, int k,
			  const int32_t *cnt, idx_t *part)
{
	if (h->deadline > 0 && tp__now_ms() > h->deadline)
		return TP_ETIME;
	const tp_graph *g = h->g;
	int nd = g->coord_dims;
	struct coord_box bx;
	double *lo = bx.lo, *hi = bx.hi, x[TP_MAX_DIMS];
	for (int d = 0; d < nd; d++) {
		lo[d] = HUGE_VAL;
		hi[d] = -HUGE_VAL;
	}
	for (int32_t i = 0; i < nT; i++) {
		h->keys[i] = (tp__pt){ 0, (uint32_t)T[i], (uint32_t)i };
		tpos(g, T[i], x);
		for (int d = 0; d < nd; d++) {
			lo[d] = x[d] < lo[d] ? x[d] : lo[d];
			hi[d] = x[d] > hi[d] ? x[d] : hi[d];
		}
	}
	struct coord_split cs = { g, cnt, part };
	bisect_coords(&cs, h->keys, nT, 0, k, &bx);
	return 0;
}

/* ---- the recursion ---- */

static int cmp_cap_desc(const void *x, const void *y, void *arg)
{
	const int64_t *cap = arg;
	int32_t a = *(const int32_t *)x, b = *(const int32_t *)y;
	if (cap[a] != cap[b])
		return cap[a] > cap[b] ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* How many of the n tasks each child takes: the largest children are filled
 * first (ties: the earlier one); by[0..k) is scratch. */
static void child_counts(const int64_t *cap, int k, int64_t n, int32_t *cnt,
			 int32_t *by)
{
	int64_t total = 0;
	for (int c = 0; c < k; c++) {
		cnt[c] = 0;
		total += cap[c];
		by[c] = c;
	}
	if (n >= total) {
		/* every slot taken, as in most jobs: no order needed */
		for (int c = 0; c < k; c++)
			cnt[c] = (int32_t)cap[c];
		return;
	}
	/* sorted once: picking the largest left each time was quadratic in
	 * the children (67 million steps for a million nodes under routers
	 * of 64) */
	qsort_r(by, (size_t)k, sizeof *by, cmp_cap_desc, (void *)cap);
	for (int i = 0; i < k && n > 0; i++) {
		int64_t take = cap[by[i]] < n ? cap[by[i]] : n;
		cnt[by[i]] = (int32_t)take;
		n -= take;
	}
}

static int rec(hm *h, int32_t *T, int32_t nT, int32_t lo, int32_t hi, int d);

/* The children of order[lo, hi) at depth d: their starts, into start[0..k]
 * (start[k] = hi).  Returns k, or -1 when out of memory. */
static int children(const hm *h, int32_t lo, int32_t hi, int d, int32_t **start)
{
	int k = 1;
	for (int32_t i = lo + 1; i < hi; i++)
		k += key_at(h, h->order[i], d) != key_at(h, h->order[i - 1], d);
	*start = tp__malloc_array((size_t)k + 1, sizeof(int32_t));
	if (!*start)
		return -1;
	int c = 0;
	(*start)[c++] = lo;
	for (int32_t i = lo + 1; i < hi; i++)
		if (key_at(h, h->order[i], d) != key_at(h, h->order[i - 1], d))
			(*start)[c++] = i;
	(*start)[k] = hi;
	return k;
}

/* Which of the k children (starts in start) take how many of n tasks:
 * used[0..ku) in order, with their counts ucnt[0..ku). */
typedef struct {
	int64_t *cap;
	int32_t *cnt, *used, *ucnt;
	int ku;
} child_plan;

static void plan_free(child_plan *p)
{
	free(p->cap);
	free(p->cnt);
	free(p->used);
}

static int plan_children(const hm *h, const int32_t *start, int k, int64_t n,
			 child_plan *p)
{
	p->cap = tp__calloc((size_t)k, sizeof(int64_t));
	p->cnt = tp__malloc_array((size_t)k, sizeof(int32_t));
	p->used = tp__malloc_array((size_t)k, sizeof(int32_t));
	if (!p->cap || !p->cnt || !p->used)
		return TP_ENOMEM;
	for (int c = 0; c < k; c++)
		for (int32_t i = start[c]; i < start[c + 1]; i++)
			p->cap[c] += h->a->slots[h->order[i]];
	child_counts(p->cap, k, n, p->cnt, p->used);
	/* the children that take tasks, and their counts, in order */
	p->ku = 0;
	p->ucnt = (int32_t *)p->cap;   /* reuse: cap is no longer needed */
	for (int c = 0; c < k; c++)
		if (p->cnt[c] > 0) {
			p->used[p->ku] = c;
			p->ucnt[p->ku++] = p->cnt[c];
		}
	return 0;
}

/* Split T over the k children of order[lo, hi) at depth d and recurse. */
static int split_children(hm *h, int32_t *T, int32_t nT, const int32_t *start,
			  int k, int d)
{
	child_plan pl = { 0 };
	idx_t *part = tp__malloc_array((size_t)nT + 1, sizeof(idx_t));
	int rc = part ? plan_children(h, start, k, nT, &pl) : TP_ENOMEM;
	if (rc)
		goto out;
	int ku = pl.ku;
	int32_t *ucnt = pl.ucnt, *used = pl.used;
	if (ku > 1 && h->keys && h->deadline > 0 &&
	    tp__now_ms() + (double)nT * log2((double)(start[k] - start[0]) + 1) *
				   TP__HIER_COORDS_NS_PER_TASK_LEVEL / 1e6 > h->deadline) {
		/* the passes over these tasks would not fit even at the
		 * lower estimate: stop now, not at the deadline */
		snprintf(h->why, sizeof h->why,
			 "splitting %d tasks over %d nodes needs about %.0f ms more",
			 (int)nT, (int)(start[k] - start[0]),
			 (double)nT * log2((double)(start[k] - start[0]) + 1) *
				 TP__HIER_COORDS_NS_PER_TASK_LEVEL / 1e6);
		rc = TP_ETIME;
		goto out;
	}
	if (ku > 1)
		rc = h->keys ? split_k_coords(h, T, nT, ku, ucnt, part)
			     : split_k(h, T, nT, ku, ucnt, part);
	else
		for (int32_t i = 0; i < nT; i++)
			part[i] = 0;
	if (rc)
		goto out;
	/* group T by part, stably, then recurse into each child: a counting
	 * sort, ucnt[] turned into the parts' starts, their ends, and back
	 * (one pass over T per part was 256 passes at a dragonfly's top) */
	int32_t pos = 0;
	for (int p = 0; p < ku; p++) {
		int32_t c = ucnt[p];
		ucnt[p] = pos;
		pos += c;
	}
	for (int32_t i = 0; i < nT; i++)
		h->scratch[ucnt[part[i]]++] = T[i];
	for (int32_t i = 0; i < nT; i++)
		T[i] = h->scratch[i];
	for (int p = ku - 1; p > 0; p--)   /* back from ends to counts */
		ucnt[p] -= ucnt[p - 1];
	pos = 0;
	for (int p = 0; p < ku && !rc; p++) {
		int c = used[p];
		rc = rec(h, T + pos, ucnt[p], start[c], start[c + 1], d + 1);
		pos += ucnt[p];
	}
out:
	plan_free(&pl);
	free(part);
	return rc;
}

static int rec(hm *h, int32_t *T, int32_t nT, int32_t lo, int32_t hi, int d)
{
	if (nT == 0)
		return 0;
	if (hi - lo == 1) {
		for (int32_t i = 0; i < nT; i++)
			h->map[T[i]] = h->order[lo];
		return 0;
	}
	int32_t *start;
	int k = children(h, lo, hi, d, &start);
	if (k < 0)
		return TP_ENOMEM;
	int rc = k == 1 ? rec(h, T, nT, lo, hi, d + 1)
			: split_children(h, T, nT, start, k, d);
	free(start);
	return rc;
}

/* ---- boxes of a stencil's grid ---- */

/* A stencil's tasks fill their grid, and a split of a box of it whose count
 * is a multiple of the cross-section is a plane: both sides are boxes again,
 * known without reading a task.  rec_box follows rec with boxes while every
 * cut is a plane (a million tasks on a dragonfly of 256 groups: 20 levels
 * of keys and selections over every task became one pass writing the map)
 * and hands a box whose cut falls inside a plane to rec as its task list,
 * in task order: the same list rec would hold there, so the mapping is the
 * same bit for bit. */
typedef struct {
	int lo[3], hi[3];        /* grid positions, inclusive */
} gbox;

static int64_t box_count(const gbox *b, int nd)
{
	int64_t n = 1;
	for (int d = 0; d < nd; d++)
		n *= b->hi[d] - b->lo[d] + 1;
	return n;
}

/* The tasks of box b in task order (x fastest): into T, or with T NULL
 * their map entries set to node. */
static void box_fill(const hm *h, const gbox *b, int32_t *T, int32_t node)
{
	const tp_graph *g = h->g;
	int nd = g->grid_ndims, at[3] = { 0, 0, 0 };
	int64_t stride[3] = { 1, 0, 0 }, n = 0;
	for (int d = 1; d < nd; d++)
		stride[d] = stride[d - 1] * g->grid[d - 1];
	for (int d = 0; d < nd; d++)
		at[d] = b->lo[d];
	for (;;) {
		int64_t base = 0;
		for (int d = 1; d < nd; d++)
			base += at[d] * stride[d];
		if (T)
			for (int x = b->lo[0]; x <= b->hi[0]; x++)
				T[n++] = (int32_t)(base + x);
		else
			for (int x = b->lo[0]; x <= b->hi[0]; x++)
				h->map[base + x] = node;
		int d = 1;
		for (; d < nd; d++) {
			if (++at[d] <= b->hi[d])
				break;
			at[d] = b->lo[d];
		}
		if (d >= nd)
			return;
	}
}

/* bisect_coords on a box: the same grouping of the children and the same
 * cut dimension; false as soon as a cut is not a plane. */
static bool bisect_box(int nd, const gbox *b, const int32_t *cnt, int c0, int c1,
		       gbox *out)
{
	gbox box = *b;
	while (c1 - c0 > 1) {
		int64_t m, half = 0;
		int s = children_cut(cnt, c0, c1, &m);
		for (int c = c0; c < c1; c++)
			half += cnt[c];
		int dim = 0;
		for (int d = 1; d < nd; d++)
			if (box.hi[d] - box.lo[d] > box.hi[dim] - box.lo[dim])
				dim = d;
		int64_t cross = box_count(&box, nd) / (box.hi[dim] - box.lo[dim] + 1);
		if (m % cross)
			return false;
		gbox l = box, r = box;
		l.hi[dim] = box.lo[dim] + (int)(m / cross) - 1;
		r.lo[dim] = l.hi[dim] + 1;
		if (m <= half - m) {
			if (!bisect_box(nd, &l, cnt, c0, s, out))
				return false;
			box = r;
			c0 = s;
		} else {
			if (!bisect_box(nd, &r, cnt, s, c1, out))
				return false;
			box = l;
			c1 = s;
		}
	}
	out[c0] = box;
	return true;
}

static int rec_box(hm *h, const gbox *b, int32_t lo, int32_t hi, int d);

/* A box rec cannot follow as a box: its task list to rec. */
static int box_as_list(hm *h, const gbox *b, int32_t lo, int32_t hi, int d)
{
	int64_t n = box_count(b, h->g->grid_ndims);
	int32_t *T = tp__malloc_array((size_t)n, sizeof(int32_t));
	if (!T)
		return TP_ENOMEM;
	box_fill(h, b, T, 0);
	int rc = rec(h, T, (int32_t)n, lo, hi, d);
	free(T);
	return rc;
}

/* split_children for a box: the counts as there, then plane cuts. */
static int split_children_box(hm *h, const gbox *b, const int32_t *start, int k,
			      int d)
{
	int nd = h->g->grid_ndims;
	child_plan pl = { 0 };
	gbox *part = tp__malloc_array((size_t)k, sizeof(gbox));
	int rc = !part ? TP_ENOMEM
		 : h->deadline > 0 && tp__now_ms() > h->deadline ? TP_ETIME
		 : plan_children(h, start, k, box_count(b, nd), &pl);
	if (rc)
		goto out;
	if (pl.ku > 1 && !bisect_box(nd, b, pl.ucnt, 0, pl.ku, part)) {
		/* the list rec would hold: its children, all of them, as it
		 * would split them */
		rc = box_as_list(h, b, start[0], start[k], d);
		goto out;
	}
	if (pl.ku == 1)
		part[0] = *b;
	for (int p = 0; p < pl.ku && !rc; p++)
		rc = rec_box(h, &part[p], start[pl.used[p]], start[pl.used[p] + 1], d + 1);
out:
	plan_free(&pl);
	free(part);
	return rc;
}

static int rec_box(hm *h, const gbox *b, int32_t lo, int32_t hi, int d)
{
	if (hi - lo == 1) {
		box_fill(h, b, NULL, h->order[lo]);
		return 0;
	}
	int32_t *start;
	int k = children(h, lo, hi, d, &start);
	if (k < 0)
		return TP_ENOMEM;
	int rc = k == 1 ? rec_box(h, b, lo, hi, d + 1)
			: split_children_box(h, b, start, k, d);
	free(start);
	return rc;
}

bool tp__hier_coords_boxes(const tp_graph *g)
{
	if (g->coords || g->grid_ndims < 1 || g->grid_ndims > 3 || g->ntasks < 1)
		return false;
	int64_t n = 1;
	for (int d = 0; d < g->grid_ndims; d++)
		n *= g->grid[d];
	return n == g->ntasks;
}

/* ---- entry ---- */

static void hm_free(hm *h)
{
	free(h->path);
	free(h->plen);
	free(h->order);
	free(h->local);
	free(h->scratch);
	free(h->keys);
}

static int hm_init(hm *h, const tp_graph *g, const tp_alloc *a, int32_t *map)
{
	memset(h, 0, sizeof *h);
	h->g = g;
	h->a = a;
	h->map = map;
	int32_t nn = a->nnodes, nt = g->ntasks;
	h->order = tp__malloc_array((size_t)nn + 1, sizeof(int32_t));
	h->local = tp__malloc_array((size_t)nt + 1, sizeof(int32_t));
	h->scratch = tp__malloc_array((size_t)nt + 1, sizeof(int32_t));
	if (!h->order || !h->local || !h->scratch)
		return TP_ENOMEM;
	for (int32_t t = 0; t < nt; t++)
		h->local[t] = -1;
	for (int32_t i = 0; i < nn; i++)
		h->order[i] = i;
	struct tp__hpaths hp;
	int rc = tp__hpaths_collect(a, &hp);
	if (rc)
		return rc;
	h->path = hp.path;
	h->plen = hp.plen;
	h->depth = hp.depth;
	/* an allocation in the network's order (a whole machine, a hostlist
	 * sorted by name on a machine numbered like its network) needs no
	 * sort: one pass checks the order, where a sort compares paths
	 * n log n times */
	int32_t i = 1;
	while (i < nn && cmp_path(&h->order[i - 1], &h->order[i], h) < 0)
		i++;
	if (i < nn)
		qsort_r(h->order, (size_t)nn, sizeof(int32_t), cmp_path, h);
	return 0;
}

static int hier_map(const tp_graph *g, const tp_alloc *a,
		    const tp_graphmap_opts *o, int32_t *map, bool by_coords,
		    tp_error *err)
{
	tp_graphmap_opts def;
	if (!o) {
		tp_graphmap_opts_default(&def);
		o = &def;
	}
	if (!g || !a || (!map && g->ntasks > 0))
		return tp_error_set(err, TP_EINVAL,
				    "hierarchical mapping: missing graph, allocation or map");
	if (!tp_machine_has(a->m, TP_CAP_HIERARCHY))
		return tp_error_set(err, TP_ENOTSUP,
				    "hierarchical mapping: a %s is no hierarchy (switch trees, dragonflies and block networks are)",
				    a->m->net->kind);
	if (g->ntasks > a->total_slots)
		return tp_error_set(err, TP_EINVAL,
				    "hierarchical mapping: %d tasks do not fit in the allocation's %lld slots",
				    g->ntasks, (long long)a->total_slots);
	if (by_coords && (g->coord_dims <= 0 || g->coord_dims > TP_MAX_DIMS))
		return tp_error_set(err, TP_EINVAL,
				    "hierarchical mapping by coordinates: the tasks have %s",
				    g->coord_dims <= 0 ? "none" : "too many dimensions");
	double t0 = tp__now_ms();
	/* no libmetis5 on this node (the plugin loads it when needed):
	 * TP_ENOMETIS, which auto skips with TP__METIS_MISSING */
	struct tp__metis metis;
	memset(&metis, 0, sizeof metis);
	int rc = by_coords ? 0 : tp__metis_open(&metis, err);
	if (rc)
		return rc;
	hm h;
	rc = hm_init(&h, g, a, map);
	h.metis = metis;
	if (!rc && by_coords &&
	    !(h.keys = tp__malloc_array((size_t)g->ntasks + 1, sizeof(tp__pt))))
		rc = TP_ENOMEM;
	if (rc == TP_EINVAL) {
		hm_free(&h);
		tp__metis_close(&metis);
		return tp_error_set(err, TP_ENOTSUP,
				    "hierarchical mapping: the %s network's hierarchy "
				    "is deeper than %d levels", a->m->net->kind,
				    TP__HIER_MAX_LEVELS);
	}
	int32_t *T = rc ? NULL : tp__malloc_array((size_t)g->ntasks + 1, sizeof(int32_t));
	if (!rc && !T)
		rc = TP_ENOMEM;
	if (!rc) {
		h.seed = o->seed;
		h.deadline = o->time_budget_ms > 0 ? t0 + o->time_budget_ms : 0;
		if (by_coords && tp__hier_coords_boxes(g)) {
			gbox all = { { 0, 0, 0 }, { 0, 0, 0 } };
			for (int d = 0; d < g->grid_ndims; d++) {
				all.lo[d] = 0;
				all.hi[d] = g->grid[d] - 1;
			}
			rc = rec_box(&h, &all, 0, a->nnodes, 0);
		} else {
			for (int32_t t = 0; t < g->ntasks; t++)
				T[t] = t;
			rc = rec(&h, T, g->ntasks, 0, a->nnodes, 0);
		}
	}
	free(T);
	char why[sizeof h.why];
	snprintf(why, sizeof why, "%s", h.why);
	hm_free(&h);
	tp__metis_close(&metis);
	if (!rc && o->refine_passes > 0) {
		tp_graphmap_opts ro = *o;
		if (ro.time_budget_ms > 0) {
			ro.time_budget_ms -= tp__now_ms() - t0;
			if (ro.time_budget_ms <= 0)
				return 0;   /* the construction is the result */
		}
		return tp_graphmap_refine(g, a, &ro, map, NULL, err);
	}
	if (rc == TP_ETIME && why[0])
		return tp_error_set(err, rc, "hierarchical mapping: time budget of %g ms: %s",
				    o->time_budget_ms, why);
	if (rc == TP_ETIME)
		return tp_error_set(err, rc, "hierarchical mapping: time budget of %g ms "
				    "reached before the last split", o->time_budget_ms);
	if (rc)
		return tp_error_set(err, rc, "hierarchical mapping: %s",
				    why[0] ? why : "out of memory");
	return 0;
}

int tp_graphmap_hierarchical(const tp_graph *g, const tp_alloc *a,
			     const tp_graphmap_opts *o, int32_t *map,
			     tp_error *err)
{
	return hier_map(g, a, o, map, false, err);
}

int tp__graphmap_hier_coords(const tp_graph *g, const tp_alloc *a,
			     const tp_graphmap_opts *o, int32_t *map,
			     tp_error *err)
{
	return hier_map(g, a, o, map, true, err);
}
