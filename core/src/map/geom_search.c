/* topoplace — geometric mapping, the search: the variants, the order they
 * are tried in, their scoring, and tp_geom_map.  See <topoplace/geom.h> for
 * the overview, geom.c for the partitions and geom_fold.c for folding.
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

#include "map/geom_fold.h"
#include "map/geom_part.h"
#include "map/metrics_internal.h"

#define MAX_PERMS 720
#define MAX_MACHINE_VARIANTS 512
#define WINDOW 64            /* variants a worker may run ahead */
#define TASKS_KEPT 8         /* task partitions held at once */
#define SAMPLE_EDGES 16384   /* screening sample */
#define FINALISTS 8          /* screened variants scored exactly */
#define NO_VARIANT INT32_MAX

enum { B_TODO, B_BUSY, B_DONE };            /* partition state */
enum { V_PENDING, V_CLAIMED, V_DONE };      /* variant state */
enum { J_NODES, J_TASKS, J_SCORE };         /* job kinds */

typedef struct node_part {
	side_order so;
	int state;
	int tree;             /* index into search.trees once built */
	int32_t *leaf_node;   /* allocation index of each leaf, in order */
	int32_t nleaves;
} node_part;

typedef struct task_part {
	int state;
	int users;            /* scoring jobs reading it now */
	uint64_t used_at;     /* last use, for eviction */
	int32_t *arr;         /* equal slots: task -> slot position (pos);
				 else slot position -> task (order) */
} task_part;

/* A variant's screening result. */
struct cand {
	double sample;
	int variant;
	bool done;
	bool exact;           /* also scored exactly */
};

typedef struct job {
	int kind, idx, pos;
	bool must;            /* needed by the first variant: no deadline */
	double deadline;      /* builds give up past it */
} job;

typedef struct search {
	const tp_graph *g;
	const tp_alloc *a;
	const tp_geom_opts *o;
	double t0, deadline;  /* deadline: INFINITY without a budget */
	double stop_at;       /* no new job after it: the deadline less the
				 time of one exact scoring when screening */
	double exact_ms;      /* longest exact scoring so far */
	pointset tasks, nodes;
	const int32_t *ids;   /* node pointset id -> allocation index, or NULL
				 when every node is used (the identity):
				 alloc_of */
	const int *used;      /* slots in use per allocation index: the
				 allocation's own, or own_used */
	int *own_used;        /* the closest subset's */
	int32_t nn;
	int slots_each;       /* the used nodes' common slots, or -1 */
	bool subset;          /* closest-subset selection dropped slots */
	int shifted;          /* dimensions moved by the seam shift */
	int porig[TP_MAX_DIMS], torig[TP_MAX_DIMS];  /* kept dim -> axis */
	/* variants */
	node_part *np;        /* [0] longest; then (machine perm, reflection) */
	int nnp;
	side_order *tso;      /* [0] longest; then one per task permutation */
	int ntso;
	int nperm_var;        /* 1 + (ntso - 1) * (nnp - 1) */
	tp__fold *fold;       /* variants nperm_var.. */
	int nfold;
	int32_t *cell_node;   /* folds: box cell -> node pointset id */
	/* blocked variants (nperm_var + nfold ..): the first permutation
	 * variant tried (block_base), with every node's tasks one block */
	int block[TP__BLOCK_MAX][TP_MAX_DIMS];   /* per grid axis */
	int nblock;
	int block_base;
	int64_t mstride[TP_MAX_DIMS];
	int nvar;
	bool eager;           /* tests: every node partition before any
				 scoring, variants in number order */
	bool bounded;         /* the first variant too stops at the
				 deadline (then no result, TP_ETIME) */
	int np_built;
	int32_t *order;       /* variants, most promising first */
	unsigned char *vstate;  /* per order position */
	int cursor;           /* first position not done */
	/* partitions */
	tree *trees;          /* distinct split trees (fixed capacity) */
	int ntrees;
	int predicted;        /* the equal-slots tree, or -1 */
	task_part *tp;        /* [task order * tp_stride + tree] */
	int tp_stride;
	int kept;             /* task partitions held or being built */
	uint64_t clock;
	/* releasing partitions no variant left can use */
	int *np_left;         /* per node partition: variants not yet scored */
	int *ti_left;         /* per task order: likewise */
	double *np_min, *ti_min;  /* their lowest screening score so far */
	double top[FINALISTS];    /* the lowest screening scores so far */
	int ntop;
	bool tree_mismatch;   /* a node partition missed the predicted tree */
	/* scoring */
	int32_t stride;       /* screening: every stride-th task; 1 = exact */
	struct cand *cand;    /* per variant (screening) */
	/* shared between the workers, under mu */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int inflight;
	bool first_done;      /* some variant has been scored */
	bool first_splits;    /* a node side cuts its root's last part on a
				 thread of its own (tp__part_nodes) */
	double best_score;
	int best_variant;
	int32_t *best_map;
	int scored;
	bool budget_hit;
	int err;
	bool exact_claimed;   /* a screened variant is being scored exactly */
	int next_final;       /* finalists: next to score */
	struct cand *finals;
	int nfinals;
} search;

/* Allocation index of node pointset id j. */
static inline int32_t alloc_of(const search *s, int32_t j)
{
	return s->ids ? s->ids[j] : j;
}

/* One worker's buffers. */
typedef struct wsp {
	tp__pt *buf, *tmp;    /* max(tasks, nodes) points each */
	uint64_t *hist;
	int32_t *map;         /* exact scoring */
	tp_congestion_ws *cws;
} wsp;

static bool out_of_time(const search *s)
{
	return tp__now_ms() > s->stop_at;
}

/* ------------------------------------------------------------------------ */
/* Variants                                                                  */

static bool is_blocked(const search *s, int v)
{
	return v >= s->nperm_var + s->nfold;
}

/* Blocked variant v's block, per grid axis. */
static const int *block_shape(const search *s, int v)
{
	return s->block[v - s->nperm_var - s->nfold];
}

static void variant_parts(const search *s, int v, int *ti, int *ni)
{
	if (is_blocked(s, v))
		v = s->block_base;
	if (v == 0) {
		*ti = *ni = 0;
		return;
	}
	*ti = 1 + (v - 1) / (s->nnp - 1);
	*ni = 1 + (v - 1) % (s->nnp - 1);
}

static int next_perm(int *p, int n)
{
	int i = n - 2;
	while (i >= 0 && p[i] >= p[i + 1])
		i--;
	if (i < 0)
		return 0;
	int j = n - 1;
	while (p[j] <= p[i])
		j--;
	int t = p[i];
	p[i] = p[j];
	p[j] = t;
	for (int a = i + 1, b = n - 1; a < b; a++, b--)
		t = p[a], p[a] = p[b], p[b] = t;
	return 1;
}

static int all_perms(int n, int (*out)[TP_MAX_DIMS], int max)
{
	int p[TP_MAX_DIMS], cnt = 0;
	for (int i = 0; i < n; i++)
		p[i] = i;
	do {
		memcpy(out[cnt++], p, sizeof p);
	} while (cnt < max && next_perm(p, n));
	return cnt;
}

/* Task permutations x machine permutations x reflections of the machine
 * axes (reflecting the node side instead of the task side gives the same
 * set of mappings and partitions fewer points).  np[0] and tso[0] are the
 * longest-extent variant. */
static int make_variants(search *s)
{
	int tdim = s->tasks.dims, pdim = s->nodes.dims;
	int (*tperms)[TP_MAX_DIMS] = calloc(MAX_PERMS, sizeof *tperms);
	int (*pperms)[TP_MAX_DIMS] = calloc(MAX_PERMS, sizeof *pperms);
	int rc = TP_ENOMEM;
	if (!tperms || !pperms)
		goto out;
	enum tp_geom_search mode = s->o->search;
	if (mode == TP_SEARCH_AUTO)
		mode = s->nn <= TP_SEARCH_AUTO_MAX_NODES ? TP_SEARCH_FULL
							 : TP_SEARCH_ROTATIONS;
	bool searching = mode != TP_SEARCH_NONE;
	int ntp = searching ? all_perms(tdim, tperms, 64) : 0;
	int npp = searching ? all_perms(pdim, pperms, MAX_PERMS) : 0;
	int nrefl = mode == TP_SEARCH_FULL ? 1 << pdim : 1;
	while ((int64_t)npp * nrefl > MAX_MACHINE_VARIANTS && nrefl > 1)
		nrefl >>= 1;   /* bounded work for many dimensions */
	if (npp * nrefl > MAX_MACHINE_VARIANTS)
		npp = MAX_MACHINE_VARIANTS / nrefl;
	s->nnp = 1 + npp * nrefl;
	s->ntso = 1 + ntp;
	s->nperm_var = 1 + ntp * (s->nnp - 1);
	s->np = calloc((size_t)s->nnp, sizeof *s->np);
	s->tso = calloc((size_t)s->ntso, sizeof *s->tso);
	if (!s->np || !s->tso)
		goto out;
	s->np[0].so.longest = true;
	s->tso[0].longest = true;
	for (int d = 0; d < TP_MAX_DIMS; d++)
		s->np[0].so.perm[d] = s->tso[0].perm[d] = d;
	for (int pp = 0; pp < npp; pp++)
		for (int r = 0; r < nrefl; r++) {
			side_order *so = &s->np[1 + pp * nrefl + r].so;
			memcpy(so->perm, pperms[pp], sizeof so->perm);
			for (int d = 0; d < pdim; d++)
				so->reflect[d] = (r >> d) & 1;
		}
	for (int t = 0; t < ntp; t++)
		memcpy(s->tso[1 + t].perm, tperms[t], sizeof s->tso[1 + t].perm);
	for (int i = 0; i < s->nnp; i++)
		s->np[i].tree = -1;
	rc = 0;
out:
	free(tperms);
	free(pperms);
	return rc;
}

/* Place of every dimension when sorted by decreasing extent (ties: lower
 * dimension first). */
static void extent_ranks(const pointset *ps, int *rank)
{
	for (int d = 0; d < ps->dims; d++) {
		rank[d] = 0;
		for (int e = 0; e < ps->dims; e++)
			if (ps->maxrank[e] > ps->maxrank[d] ||
			    (ps->maxrank[e] == ps->maxrank[d] && e < d))
				rank[d]++;
	}
}

typedef struct keyed {
	uint64_t key;
	int32_t v;
} keyed;

static int cmp_keyed(const void *x, const void *y)
{
	const keyed *a = x, *b = y;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return (a->v > b->v) - (a->v < b->v);
}

/* Promise of a permutation variant (lower first): its task order and its
 * machine order compared lexicographically, by extent rank, with the sorted
 * orders ("longest onto longest") first; then fewer reflections. */
static uint64_t promise(const search *s, int v, const int *rt, const int *rm)
{
	int ti, ni;
	variant_parts(s, v, &ti, &ni);
	const side_order *t = &s->tso[ti], *m = &s->np[ni].so;
	uint64_t key = 0;
	int refl = 0, mask = 0;
	for (int d = 0; d < TP_MAX_DIMS; d++)
		key = (key << 3) | (uint64_t)(d < s->tasks.dims ? rt[t->perm[d]] : 0);
	for (int d = 0; d < TP_MAX_DIMS; d++)
		key = (key << 3) | (uint64_t)(d < s->nodes.dims ? rm[m->perm[d]] : 0);
	for (int d = 0; d < s->nodes.dims; d++)
		if (m->reflect[d]) {
			refl++;
			mask |= 1 << d;
		}
	return (key << 9) | ((uint64_t)refl << 6) | (uint64_t)mask;
}

/* The order the variants are tried in: folds, then the permutation
 * variants by promise, with the longest-extent variant first or second
 * (see the top of the file). */
static int make_order(search *s)
{
	s->nvar = s->nperm_var + s->nfold + s->nblock;
	s->order = tp__malloc_array((size_t)s->nvar, sizeof(int32_t));
	s->vstate = tp__calloc((size_t)s->nvar, 1);
	keyed *k = tp__malloc_array((size_t)s->nperm_var, sizeof(keyed));
	if (!s->order || !s->vstate || !k) {
		free(k);
		return TP_ENOMEM;
	}
	int rt[TP_MAX_DIMS], rm[TP_MAX_DIMS];
	extent_ranks(&s->tasks, rt);
	extent_ranks(&s->nodes, rm);
	int nk = 0;
	for (int v = 1; v < s->nperm_var; v++) {
		k[nk].key = promise(s, v, rt, rm);
		k[nk++].v = v;
	}
	qsort(k, (size_t)nk, sizeof *k, cmp_keyed);
	bool longest_first = s->nodes.dims > s->tasks.dims || nk == 0;
	int at = 0;
	if (s->eager) {
		for (int v = 0; v < s->nvar; v++)
			s->order[at++] = v;
	} else {
		for (int f = 0; f < s->nfold; f++)
			s->order[at++] = s->nperm_var + f;
		for (int b = 0; b < s->nblock; b++)
			s->order[at++] = s->nperm_var + s->nfold + b;
		if (longest_first)
			s->order[at++] = 0;
		for (int i = 0; i < nk; i++) {
			s->order[at++] = k[i].v;
			if (i == 0 && !longest_first)
				s->order[at++] = 0;
		}
	}
	/* the blocked variants pair their blocks with the first permutation
	 * variant tried, and share its node partition */
	s->block_base = longest_first ? 0 : k[0].v;
	free(k);
	if (s->nblock > 0) {
		int ti, ni;
		variant_parts(s, s->block_base, &ti, &ni);
		s->np_left[ni] += s->nblock;
	}
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Folds                                                                     */

/* Folded embeddings, when the tasks form a full grid and the used nodes a
 * full box with equal slots, all used (geom_fold.c). */
/* Extents of a point set's ranks when they fill a box of exactly n cells
 * (cells counted, not yet checked distinct). */
static bool box_extents(const pointset *ps, int64_t n, int *ext, int64_t *stride)
{
	int64_t cells = 1;
	for (int d = 0; d < ps->dims; d++) {
		ext[d] = (int)ps->maxrank[d] + 1;
		stride[d] = cells;
		cells *= ext[d];
		if (cells > n)
			return false;
	}
	return cells == n;
}

/* Every task at its own grid cell. */
static int distinct_tasks(const pointset *T, const int64_t *stride, bool *ok)
{
	unsigned char *seen = tp__calloc((size_t)T->n / 8 + 1, 1);
	if (!seen)
		return TP_ENOMEM;
	*ok = true;
	for (int32_t t = 0; t < T->n && *ok; t++) {
		int64_t c = 0;
		for (int d = 0; d < T->dims; d++)
			c += (int64_t)tp__pointset_rank(T, (uint32_t)t, d) * stride[d];
		*ok = !(seen[c / 8] & (1 << (c % 8)));
		seen[c / 8] |= (unsigned char)(1 << (c % 8));
	}
	free(seen);
	return 0;
}

/* Box cell -> node table, when every node has a cell of its own. */
static int node_cells(search *s, bool *ok)
{
	const pointset *N = &s->nodes;
	int32_t *cell = tp__malloc_array((size_t)s->nn, sizeof(int32_t));
	if (!cell)
		return TP_ENOMEM;
	for (int32_t i = 0; i < s->nn; i++)
		cell[i] = -1;
	*ok = true;
	for (int32_t i = 0; i < s->nn && *ok; i++) {
		int64_t c = 0;
		for (int d = 0; d < N->dims; d++)
			c += (int64_t)tp__pointset_rank(N, (uint32_t)i, d) * s->mstride[d];
		*ok = cell[c] < 0;
		cell[c] = i;
	}
	if (*ok)
		s->cell_node = cell;
	else
		free(cell);
	return 0;
}

static int setup_folds(search *s)
{
	const pointset *T = &s->tasks, *N = &s->nodes;
	int text[TP_MAX_DIMS], mext[TP_MAX_DIMS];
	int64_t tstride[TP_MAX_DIMS];
	if (s->subset || s->slots_each <= 0 || T->pos || N->pos ||
	    !box_extents(T, s->g->ntasks, text, tstride) ||
	    !box_extents(N, s->nn, mext, s->mstride))
		return 0;
	tp__fold f[TP__FOLD_MAX];
	int nf = tp__fold_find(text, T->dims, mext, N->dims, s->slots_each, f,
			       TP__FOLD_MAX);
	bool grid = nf > 0;
	/* a whole grid's tasks are distinct cells */
	int rc = grid && !T->grid ? distinct_tasks(T, tstride, &grid) : 0;
	if (!rc && grid)
		rc = node_cells(s, &grid);
	if (rc || !grid)
		return rc;
	s->fold = tp__malloc_array((size_t)nf, sizeof *s->fold);
	if (!s->fold)
		return TP_ENOMEM;
	memcpy(s->fold, f, sizeof *f * (size_t)nf);
	s->nfold = nf;
	return 0;
}

static void fold_map(const search *s, const tp__fold *f, int32_t *map)
{
	const pointset *T = &s->tasks;
	for (int32_t t = 0; t < s->g->ntasks; t++) {
		int mc[TP_MAX_DIMS];
		uint32_t tr[TP_MAX_DIMS];
		for (int d = 0; d < T->dims; d++)
			tr[d] = tp__pointset_rank(T, (uint32_t)t, d);
		tp__fold_place(f, tr, mc);
		int64_t c = 0;
		for (int d = 0; d < s->nodes.dims; d++)
			c += mc[d] * s->mstride[d];
		map[t] = alloc_of(s, s->cell_node[c]);
	}
}

/* ------------------------------------------------------------------------ */
/* Split trees                                                               */

/* Index of tree t among the distinct trees, adding it (and taking its
 * storage, trimmed) when new.  Under s->mu. */
static int add_tree(search *s, tree *t)
{
	if (t->expect) {
		const tree *e = t->expect;
		if (t->len == e->len) {   /* matched all along: e itself */
			memset(t, 0, sizeof *t);
			return (int)(e - s->trees);
		}
		if (tp__tree_materialize(t))   /* a prefix of it */
			return -1;
	}
	int32_t *trim = realloc(t->v, sizeof(int32_t) * (size_t)(t->len + 1));
	if (trim)
		t->v = trim;
	for (int i = 0; i < s->ntrees; i++)
		if (s->trees[i].v && s->trees[i].len == t->len &&
		    !memcmp(s->trees[i].v, t->v, sizeof *t->v * (size_t)t->len)) {
			free(t->v);
			memset(t, 0, sizeof *t);
			return i;
		}
	s->trees[s->ntrees] = *t;
	memset(t, 0, sizeof *t);
	return s->ntrees++;
}

/* Subtree lengths by node count: a tree's parts hold few distinct counts
 * at each depth (two, when the cuts are even). */
struct len_memo {
	int n;
	int64_t nodes[256], len[256];
};

/* Entries of the implicit tree of n nodes: one for a leaf, 1 + k for an
 * inner node, plus its parts'. */
static int64_t tree_len(int64_t n, uint64_t w, int kparts, struct len_memo *m)
{
	if (n == 1)
		return 1;
	for (int i = 0; i < m->n; i++)
		if (m->nodes[i] == n)
			return m->len[i];
	int64_t size[64];
	int k = tp__tree_rule(n, w, kparts, size);
	int64_t len = 1 + k;
	for (int j = 0; j < k; j++)
		len += tree_len(size[j], w, kparts, m);
	if (m->n < 256) {
		m->nodes[m->n] = n;
		m->len[m->n++] = len;
	}
	return len;
}

static int setup_trees(search *s)
{
	s->tp_stride = s->nnp + 1;
	s->trees = tp__calloc((size_t)s->tp_stride, sizeof *s->trees);
	s->tp = tp__calloc((size_t)s->ntso * (size_t)s->tp_stride, sizeof *s->tp);
	if (!s->trees || !s->tp)
		return TP_ENOMEM;
	s->np_left = tp__malloc_array((size_t)s->nnp, sizeof(int));
	s->ti_left = tp__malloc_array((size_t)s->ntso, sizeof(int));
	s->np_min = tp__malloc_array((size_t)s->nnp, sizeof(double));
	s->ti_min = tp__malloc_array((size_t)s->ntso, sizeof(double));
	if (!s->np_left || !s->ti_left || !s->np_min || !s->ti_min)
		return TP_ENOMEM;
	for (int i = 0; i < s->nnp; i++) {
		s->np_left[i] = i ? s->ntso - 1 : 1;
		s->np_min[i] = INFINITY;
	}
	for (int t = 0; t < s->ntso; t++) {
		s->ti_left[t] = t ? s->nnp - 1 : 1;
		s->ti_min[t] = INFINITY;
	}
	s->predicted = -1;
	if (s->slots_each <= 0)
		return 0;
	/* implicit: the node partitions are checked against its rule, and
	 * the task partitions follow it, node by node */
	tree t = { .rule_n = s->nn, .rule_w = (uint64_t)s->slots_each,
		   .rule_k = s->o->parts_per_level };
	struct len_memo memo = { .n = 0 };
	t.len = tree_len(s->nn, t.rule_w, t.rule_k, &memo);
	s->trees[s->ntrees] = t;
	s->predicted = s->ntrees++;
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Building partitions                                                       */

static int wsp_parts(const search *s, wsp *w);
static int thread_count(const tp_geom_opts *opt);

static int build_nodes(search *s, int i, wsp *w, double deadline)
{
	node_part *np = &s->np[i];
	if (wsp_parts(s, w))
		return TP_ENOMEM;
	int32_t *leaf = tp__malloc_array((size_t)s->nn, sizeof(int32_t));
	if (!leaf)
		return TP_ENOMEM;
	for (int32_t j = 0; j < s->nn; j++)
		w->buf[j] = tp__pointset_pt(&s->nodes, (uint32_t)j,
					    (uint32_t)s->used[alloc_of(s, j)]);
	/* with equal slots the tree is checked against the predicted one
	 * instead of stored */
	tree t = { .expect = s->predicted >= 0 ? &s->trees[s->predicted] : NULL };
	/* the leaves' point ids, made allocation indices after: one by one
	 * as the partition reaches them, each would wait on a cache miss */
	tp__part_side side = { &s->nodes, &np->so, w->hist, w->tmp, deadline };
	tp__node_cuts cuts = {
		.k = s->o->parts_per_level,
		.split = thread_count(s->o) > 1,
		.tr = &t,
		.leaf_node = leaf,
	};
	int rc = tp__part_nodes(&side, &cuts, w->buf, s->nn);
	int32_t nleaves = cuts.nleaves;
	if (rc) {
		free(leaf);
		free(t.v);
		return rc;
	}
	for (int32_t j = 0; s->ids && j < nleaves; j++)
		leaf[j] = s->ids[leaf[j]];
	pthread_mutex_lock(&s->mu);
	int tr = add_tree(s, &t);
	if (tr >= 0) {
		s->tree_mismatch |= tr != s->predicted;
		np->tree = tr;
		np->leaf_node = leaf;
		np->nleaves = nleaves;
	}
	pthread_mutex_unlock(&s->mu);
	if (tr < 0) {
		free(leaf);
		free(t.v);
		return TP_ENOMEM;
	}
	return 0;
}

static int build_tasks(search *s, int idx, wsp *w, double deadline)
{
	int32_t n = s->g->ntasks;
	int ti = idx / s->tp_stride, tr = idx % s->tp_stride;
	if (wsp_parts(s, w))
		return TP_ENOMEM;
	int32_t *arr = tp__malloc_array((size_t)n, sizeof(int32_t));
	if (!arr)
		return TP_ENOMEM;
	for (int32_t t = 0; !s->tasks.grid && t < n; t++)
		w->buf[t] = tp__pointset_pt(&s->tasks, (uint32_t)t, 1);
	/* equal slots: each task's place; else the task at each place */
	tp__task_order out = { s->slots_each > 0 ? arr : NULL,
			       s->slots_each > 0 ? NULL : arr };
	tp__part_side side = { &s->tasks, &s->tso[ti], w->hist, w->tmp, deadline };
	int rc = tp__part_tasks(&side, &s->trees[tr], w->buf, n, &out);
	if (rc) {
		free(arr);
		return rc;
	}
	pthread_mutex_lock(&s->mu);
	s->tp[idx].arr = arr;
	pthread_mutex_unlock(&s->mu);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Scoring                                                                   */

/* Screening score: bytes x hops over the edges of every stride-th task,
 * nodes found through the slot positions (equal slots per node). */
static double sample_score(const search *s, const int32_t *pos,
			   const node_part *np)
{
	const tp_graph *g = s->g;
	const tp_machine *m = s->a->m;
	const int32_t *node = s->a->node;
	int k = s->slots_each, nd = m->ndims;
	double sum = 0;
	for (int32_t u = 0; u < g->ntasks; u += s->stride) {
		const int *cu = &m->coords[(int64_t)node[np->leaf_node[pos[u] / k]] * nd];
		for (int64_t e = g->xadj[u]; e < g->xadj[u + 1]; e++) {
			int32_t v = g->adjncy[e];
			if (v < u)
				continue;   /* each undirected edge once */
			const int *cv = &m->coords[(int64_t)node[np->leaf_node[pos[v] / k]] * nd];
			sum += tp__graph_w(g, e) * tp__coord_dist(m, cu, cv);
		}
	}
	return sum;
}

/* map[t] for every task of a permutation variant whose nodes have unequal
 * slots: the leaves in order, each its node's share of arr (equal slots:
 * map_range_fill). */
static void perm_map(const search *s, const node_part *np, const int32_t *arr,
		     int32_t *map)
{
	int64_t at = 0;
	for (int32_t l = 0; l < np->nleaves; l++) {
		int32_t node = np->leaf_node[l];
		for (int k = 0; k < s->used[node]; k++)
			map[arr[at++]] = node;
	}
}

/* Room for router coordinates per task for an exact hop-bytes scoring, in
 * the worker's partition scratch (free between jobs), else NULL (scored
 * through the mapping).  A million tasks: 15 ms to score from them, 40 ms
 * through the mapping on two threads, whose three dependent loads per edge
 * end miss the cache. */
static int *tc_room(const search *s, const wsp *w)
{
	int nd = s->a->m->ndims;
	int32_t n = s->g->ntasks;
	size_t room = (size_t)(n > s->nn ? n : s->nn) * sizeof(tp__pt);
	if (s->o->metric != TP_METRIC_HOP_BYTES || !w->tmp ||
	    (size_t)n * (size_t)nd * sizeof(int) > room)
		return NULL;
	return (int *)(void *)w->tmp;
}

/* Tasks [t0, t1) of a permutation variant: their nodes into map and, with
 * tc, their router coordinates into tc. */
struct map_range {
	const search *s;
	const node_part *np;
	const int32_t *arr;
	int32_t *map;
	int *tc;
	int32_t t0, t1;
};

/* Router coordinates of tasks [t0, t1) of map into tc. */
static void fill_tc(const search *s, const int32_t *map, int *tc, int32_t t0,
		    int32_t t1)
{
	const tp_alloc *a = s->a;
	size_t nd = (size_t)a->m->ndims;
	for (int32_t t = t0; t < t1; t++)
		memcpy(tc + (size_t)t * nd, a->m->coords + (size_t)a->node[map[t]] * nd,
		       sizeof(int) * nd);
}

static void map_range_fill(const struct map_range *r)
{
	for (int32_t t = r->t0; t < r->t1; t++)
		r->map[t] = r->np->leaf_node[r->arr[t] / r->s->slots_each];
	if (r->tc)
		fill_tc(r->s, r->map, r->tc, r->t0, r->t1);
}

static void *map_range_run(void *arg)
{
	map_range_fill(arg);
	return NULL;
}

/* From this many tasks, the first variant's mapping and coordinates are
 * written on two threads while nothing else runs (scoring_alone). */
#define PAR_MAP_TASKS (1 << 18)

/* map (and tc, when given) of a permutation variant, on two threads when
 * two is given and it pays. */
static void variant_map(const search *s, const node_part *np, const int32_t *arr,
			int32_t *map, int *tc, bool two)
{
	int32_t n = s->g->ntasks;
	if (s->slots_each <= 0) {
		perm_map(s, np, arr, map);
		if (tc)
			fill_tc(s, map, tc, 0, n);
		return;
	}
	struct map_range lo = { s, np, arr, map, tc, 0, n }, hi = lo;
	pthread_t th;
	if (two && n >= PAR_MAP_TASKS) {
		lo.t1 = hi.t0 = n / 2;
		if (pthread_create(&th, NULL, map_range_run, &hi) == 0) {
			map_range_fill(&lo);
			pthread_join(th, NULL);
			return;
		}
		lo.t1 = n;
	}
	map_range_fill(&lo);
}

/* Under a budget, while a node side splits its root (two CPUs), the first
 * variant runs alone: next_job hands out nothing else until it is scored,
 * and its scoring writes the best mapping itself.  Under s->mu. */
static bool first_alone(const search *s)
{
	return !s->first_done && s->deadline < INFINITY && s->first_splits;
}

static bool scoring_alone(search *s)
{
	pthread_mutex_lock(&s->mu);
	bool alone = first_alone(s);
	pthread_mutex_unlock(&s->mu);
	return alone;
}

static int wsp_scoring(const search *s, wsp *w)
{
	int32_t n = s->g->ntasks;
	if (!w->map && !(w->map = tp__malloc_array((size_t)n, sizeof(int32_t))))
		return TP_ENOMEM;
	if (s->o->metric != TP_METRIC_HOP_BYTES && !w->cws &&
	    tp_congestion_ws_create(&w->cws, s->a->m, NULL))
		return TP_ENOMEM;
	return 0;
}

/* Score map (w->map, or s->best_map itself when scoring alone) exactly and
 * keep it when it is the best so far (lowest score, ties to the lowest
 * variant); tc: its router coordinates per task, or NULL.  t0: when the
 * scoring began (the mapping's writing included). */
static int exact_score(search *s, int v, wsp *w, const int32_t *map,
		       const int *tc, int threads, double t0)
{
	double score;
	if (s->o->metric == TP_METRIC_HOP_BYTES) {
		/* the bounded sum: a candidate cut off above the best so far
		 * could never win, ties included, so the result stays
		 * deterministic.  From per-task coordinates in scratch the
		 * worker already holds (fresh memory for them would cost more
		 * than they save), else through the map */
		pthread_mutex_lock(&s->mu);
		double bound = s->best_score;
		pthread_mutex_unlock(&s->mu);
		score = tc ? tp__hop_bytes_task_coords(s->g, s->a->m, tc, bound, threads)
		     : tp__hop_bytes_threads(s->g, s->a, map, bound, threads);
	} else {
		score = tp_metrics_score(s->g, s->a, map, s->o->metric, w->cws);
	}
	pthread_mutex_lock(&s->mu);
	double took = tp__now_ms() - t0;
	if (took > s->exact_ms) {
		s->exact_ms = took;
		if (s->stride > 1)   /* keep time for one finalist */
			s->stop_at = s->deadline - took;
	}
	if (score < s->best_score ||
	    (score == s->best_score && v < s->best_variant)) {
		s->best_score = score;
		s->best_variant = v;
		if (map != s->best_map)
			memcpy(s->best_map, map, sizeof(int32_t) * (size_t)s->g->ntasks);
	}
	pthread_mutex_unlock(&s->mu);
	return 0;
}

static int score_blocked(search *s, int v, wsp *w);

static int score_variant(search *s, int v, wsp *w)
{
	if (is_blocked(s, v))
		return score_blocked(s, v, w);
	if (v >= s->nperm_var) {
		int rc = wsp_scoring(s, w);
		if (rc)
			return rc;
		double t0 = tp__now_ms();
		fold_map(s, &s->fold[v - s->nperm_var], w->map);
		int *tc = tc_room(s, w);
		if (tc)
			fill_tc(s, w->map, tc, 0, s->g->ntasks);
		return exact_score(s, v, w, w->map, tc, 1, t0);
	}
	int ti, ni;
	variant_parts(s, v, &ti, &ni);
	const node_part *np = &s->np[ni];
	const int32_t *arr = s->tp[ti * s->tp_stride + np->tree].arr;
	if (s->stride > 1) {
		/* each variant owns its slot: no lock needed */
		struct cand *c = &s->cand[v];
		c->sample = sample_score(s, arr, np);
		c->variant = v;
		c->done = true;
		/* under a budget the first one is also scored exactly, so
		 * that a whole result exists whenever the search stops */
		pthread_mutex_lock(&s->mu);
		c->exact = s->deadline < INFINITY && s->exact_ms == 0 &&
			   !s->exact_claimed;
		s->exact_claimed |= c->exact;
		pthread_mutex_unlock(&s->mu);
		if (!c->exact)
			return 0;
	}
	int rc = wsp_scoring(s, w);
	if (rc)
		return rc;
	/* alone: straight into the result, on both CPUs */
	bool alone = scoring_alone(s);
	int32_t *map = alone ? s->best_map : w->map;
	int *tc = tc_room(s, w);
	double t0 = tp__now_ms();
	variant_map(s, np, arr, map, tc, alone);
	return exact_score(s, v, w, map, tc, alone ? 2 : 1, t0);
}

/* ------------------------------------------------------------------------ */
/* Blocked variants                                                          */

/* With k > 1 tasks on every node, the cuts of a permutation variant end in
 * any k tasks of a node's part of the grid: on a random half of a 6-D torus
 * (4 a node, stencil 96x92x36) a third of the nodes held a 2x2x2 box's
 * scattered four, and a quarter of the bytes stayed in a node where a block
 * keeps a third.  A blocked variant partitions the grid of blocks instead
 * (each block a k-task box, the most task pairs inside; one point, one
 * node) and gives every node one block: 2.775 -> 2.628 average hops there.
 * Folds, where they apply, embed such blocks exactly already. */
static int setup_blocks(search *s)
{
	const pointset *T = &s->tasks;
	const tp_graph *g = s->g;
	if (s->nfold > 0 || !T->grid || s->subset || s->slots_each < 2 ||
	    (int64_t)s->nn * s->slots_each != g->ntasks)
		return 0;
	int text[TP_MAX_DIMS], b[TP__BLOCK_MAX][TP_MAX_DIMS];
	for (int d = 0; d < T->dims; d++)
		text[d] = (int)T->maxrank[d] + 1;
	int nb = tp__block_find(text, T->dims, s->slots_each, b, TP__BLOCK_MAX);
	/* the grid of blocks nearest a cube first (on the 6-D torus above:
	 * 2x2x1 2.640, 2x1x2 2.628, 1x2x2 2.661; under a budget only the
	 * first is scored) */
	int longest[TP__BLOCK_MAX];
	for (int i = 0; i < nb; i++) {
		longest[i] = 0;
		for (int d = 0; d < T->dims; d++)
			if (text[d] / b[i][d] > longest[i])
				longest[i] = text[d] / b[i][d];
	}
	for (int i = 1; i < nb; i++)
		for (int j = i; j > 0 && longest[j] < longest[j - 1]; j--) {
			int t = longest[j];
			longest[j] = longest[j - 1];
			longest[j - 1] = t;
			int tb[TP_MAX_DIMS];
			memcpy(tb, b[j], sizeof tb);
			memcpy(b[j], b[j - 1], sizeof tb);
			memcpy(b[j - 1], tb, sizeof tb);
		}
	for (int i = 0; i < nb; i++) {
		for (int a = 0; a < TP_MAX_DIMS; a++)
			s->block[i][a] = 1;
		for (int d = 0; d < T->dims; d++)
			s->block[i][s->torig[d]] = b[i][d];
	}
	s->nblock = nb;
	return 0;
}

/* Blocked variant v: its blocks cut as its base variant cuts tasks, onto
 * the base's node partition, leaf for leaf. */
static int score_blocked(search *s, int v, wsp *w)
{
	const tp_graph *g = s->g;
	const int *b = block_shape(s, v);
	int ti, ni;
	variant_parts(s, v, &ti, &ni);
	const node_part *np = &s->np[ni];
	/* its leaves one node each, as the rule for equal slots cuts them
	 * (bisection cuts a node count alike whatever the slots) */
	if (np->tree != s->predicted || np->nleaves != s->nn)
		return 0;
	int rc = wsp_parts(s, w);
	if (!rc)
		rc = wsp_scoring(s, w);
	if (rc)
		return rc;
	double t0 = tp__now_ms();
	int cg[3];
	for (int a = 0; a < 3; a++)
		cg[a] = g->grid[a] / b[a];
	int32_t nb = cg[0] * cg[1] * cg[2];
	pointset C;
	int32_t *pos = tp__malloc_array((size_t)nb, sizeof(int32_t));
	if (!pos || tp__pointset_grid(&C, cg, s->tasks.dims, s->torig)) {
		free(pos);
		return TP_ENOMEM;
	}
	struct len_memo memo = { .n = 0 };
	tree ct = { .rule_n = s->nn, .rule_w = 1, .rule_k = s->o->parts_per_level };
	ct.len = tree_len(s->nn, 1, ct.rule_k, &memo);
	tp__task_order out = { pos, NULL };
	tp__part_side side = { &C, &s->tso[ti], w->hist, w->tmp, INFINITY };
	rc = tp__part_tasks(&side, &ct, w->buf, nb, &out);
	tp__pointset_free(&C);
	if (rc) {
		free(pos);
		return rc;
	}
	int32_t *map = w->map;
	int at[3] = { 0, 0, 0 };
	for (int32_t t = 0; t < g->ntasks; t++) {
		int32_t c = at[0] / b[0] + cg[0] * (at[1] / b[1] + cg[1] * (at[2] / b[2]));
		map[t] = np->leaf_node[pos[c]];
		tp__grid_next(at, g->grid);
	}
	free(pos);
	int *tc = tc_room(s, w);
	if (tc)
		fill_tc(s, map, tc, 0, g->ntasks);
	return exact_score(s, v, w, map, tc, scoring_alone(s) ? 2 : 1, t0);
}

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
		return build_nodes(s, j->idx, w, j->deadline);
	case J_TASKS:
		return build_tasks(s, j->idx, w, j->deadline);
	default:
		return score_variant(s, j->idx, w);
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

/* The partition buffers, on first use. */
static int wsp_parts(const search *s, wsp *w)
{
	if (w->buf)
		return 0;
	int32_t n = s->g->ntasks;
	size_t len = (size_t)(n > s->nn ? n : s->nn);
	size_t hl = tp__pointset_hist_len(&s->tasks), hn = tp__pointset_hist_len(&s->nodes);
	w->buf = tp__malloc_array(len, sizeof(tp__pt));
	w->tmp = tp__malloc_array(len, sizeof(tp__pt));
	w->hist = tp__malloc_array(hl > hn ? hl : hn, sizeof(uint64_t));
	if (w->buf && w->tmp && w->hist)
		return 0;
	free(w->buf);
	free(w->tmp);
	free(w->hist);
	w->buf = w->tmp = NULL;
	w->hist = NULL;
	return TP_ENOMEM;
}

static void wsp_free(wsp *w)
{
	free(w->buf);
	free(w->tmp);
	free(w->hist);
	free(w->map);
	tp_congestion_ws_destroy(w->cws);
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
	wsp_free(&w);
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
		*rc = build_tasks(s, ti * s->tp_stride + tr, w, INFINITY);
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
		if (!arr || (rc = wsp_scoring(s, &w)))
			break;
		int *tc = tc_room(s, &w);
		double t0 = tp__now_ms();
		variant_map(s, &s->np[ni], arr, w.map, tc, false);
		rc = exact_score(s, v, &w, w.map, tc, 1, t0);
	}
	if (rc) {
		pthread_mutex_lock(&s->mu);
		s->err = rc;
		pthread_mutex_unlock(&s->mu);
	}
	wsp_free(&w);
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
/* Preparation                                                               */

static int check_inputs(const tp_graph *g, const tp_alloc *a,
			const tp_geom_opts *opt, tp_error *err)
{
	if (g->coord_dims <= 0)
		return tp_error_set(err, TP_EINVAL,
				    "geometric mapping: the pattern has no task coordinates");
	if (a->total_slots < g->ntasks)
		return tp_error_set(err, TP_EINVAL,
				    "geometric mapping: %d tasks but the allocation has only %lld slots",
				    g->ntasks, (long long)a->total_slots);
	if (opt->parts_per_level < 2 || opt->parts_per_level > 64)
		return tp_error_set(err, TP_EINVAL,
				    "geometric mapping: parts per level must be 2..64, not %d",
				    opt->parts_per_level);
	return 0;
}

/* Node coordinates: seam-shifted on wrapped dimensions when asked. */
/* Node coordinates: the seam shift as a cut per wrapped dimension (none
 * without the shift). */
static int seam_cuts(search *s, int *cut)
{
	for (int d = 0; d < TP_MAX_DIMS; d++)
		cut[d] = -1;
	if (!s->o->seam_shift)
		return 0;
	s->shifted = tp__seam_cuts(s->a, cut, true);
	return s->shifted < 0 ? TP_ENOMEM : 0;
}

/* Slots in use: all of them, or the closest subset. */
static int choose_slots(search *s, const int *cut)
{
	const tp_alloc *a = s->a;
	int pdim = a->m->ndims;
	s->subset = a->total_slots > s->g->ntasks;
	s->used = a->slots;
	if (!s->subset)
		return 0;
	int *used = s->own_used = tp__malloc_array((size_t)a->nnodes, sizeof(int));
	if (!used)
		return TP_ENOMEM;
	s->used = used;
	double *allpos = tp__malloc_array((size_t)a->nnodes * (size_t)pdim, sizeof(double));
	if (!allpos)
		return TP_ENOMEM;
	for (int32_t i = 0; i < a->nnodes; i++) {
		int c[TP_MAX_DIMS];
		tp__seam_coords(a->m, a->node[i], cut, c);
		for (int d = 0; d < pdim; d++)
			allpos[(int64_t)i * pdim + d] = c[d];
	}
	int rc = tp__closest_subset(a, allpos, pdim, s->g->ntasks, used, s->deadline);
	free(allpos);
	return rc;
}

/* Ranks of the used nodes straight from their (seam-shifted) router
 * coordinates when every kept dimension spans a modest range, as
 * tp__pointset_init would make them; else through positions. */
static int node_ranks(search *s, const int *cut, const int *lo, const int *hi,
		      int k)
{
	const tp_machine *m = s->a->m;
	pointset *ps = &s->nodes;
	int32_t nn = s->nn;
	uint32_t r[TP_MAX_DIMS];   /* maxrank, then each node's ranks */
	for (int d = 0; d < k; d++)
		if ((double)hi[s->porig[d]] - lo[s->porig[d]] >= 4.0 * nn + 1024.0)
			break;
		else if (d == k - 1)
			goto direct;
	double *pos = tp__malloc_array((size_t)nn * (size_t)k, sizeof(double));
	if (!pos)
		return TP_ENOMEM;
	for (int32_t j = 0; j < nn; j++) {
		int c[TP_MAX_DIMS];
		tp__seam_coords(m, s->a->node[alloc_of(s, j)], cut, c);
		for (int d = 0; d < k; d++)
			pos[(int64_t)j * k + d] = c[s->porig[d]];
	}
	int rc = tp__pointset_init(ps, nn, k, pos);
	if (ps->pos != pos)
		free(pos);   /* else owned by the point set */
	return rc;
direct:
	for (int d = 0; d < k; d++)
		r[d] = (uint32_t)(hi[s->porig[d]] - lo[s->porig[d]]);
	if (tp__pointset_alloc_ranked(ps, nn, k, r))
		return TP_ENOMEM;
	for (int32_t j = 0; j < nn; j++) {
		int c[TP_MAX_DIMS];
		tp__seam_coords(m, s->a->node[alloc_of(s, j)], cut, c);
		for (int d = 0; d < k; d++)
			r[d] = (uint32_t)(c[s->porig[d]] - lo[s->porig[d]]);
		tp__pointset_set(ps, (uint32_t)j, r);
	}
	return 0;
}

/* The used nodes as a point set over the dimensions along which they vary
 * (a flat dimension carries no information and would put the paired cut
 * orders of the two sides out of step). */
static int node_points(search *s, const int *cut, int32_t *ids)
{
	const tp_alloc *a = s->a;
	int pdim = a->m->ndims, k = 0;
	int lo[TP_MAX_DIMS], hi[TP_MAX_DIMS];
	int32_t nn = 0;
	for (int d = 0; d < pdim; d++) {
		lo[d] = INT32_MAX;
		hi[d] = INT32_MIN;
	}
	/* ids written only once a node is left out: the identity until then */
	s->ids = NULL;
	for (int32_t i = 0; i < a->nnodes; i++) {
		if (!s->used[i]) {
			for (int32_t j = 0; !s->ids && j < nn; j++)
				ids[j] = j;
			s->ids = ids;
			continue;
		}
		if (s->ids)
			ids[nn] = i;
		nn++;
		int c[TP_MAX_DIMS];
		tp__seam_coords(a->m, a->node[i], cut, c);
		for (int d = 0; d < pdim; d++) {
			lo[d] = c[d] < lo[d] ? c[d] : lo[d];
			hi[d] = c[d] > hi[d] ? c[d] : hi[d];
		}
	}
	for (int d = 0; d < pdim; d++)
		if (hi[d] > lo[d])
			s->porig[k++] = d;
	if (k == 0)
		s->porig[k++] = 0;   /* all nodes equal: one (flat) dimension */
	s->nn = nn;
	return node_ranks(s, cut, lo, hi, k);
}

/* The tasks likewise; their coordinates are used in place when every
 * dimension varies, and a stencil's grid positions are ranked from the grid
 * (never written out). */
static int task_points(search *s, double **copy)
{
	const tp_graph *g = s->g;
	int dims = g->coord_dims, k = 0;
	int32_t n = g->ntasks;
	if (!g->coords) {
		for (int d = 0; d < g->grid_ndims; d++)
			if (g->grid[d] > 1)
				s->torig[k++] = d;
		if (k == 0)
			s->torig[k++] = 0;
		return tp__pointset_grid(&s->tasks, g->grid, k, s->torig);
	}
	double lo[TP_MAX_DIMS], hi[TP_MAX_DIMS];
	for (int d = 0; d < dims; d++) {
		lo[d] = INFINITY;
		hi[d] = -INFINITY;
	}
	for (int32_t i = 0; i < n; i++)
		for (int d = 0; d < dims; d++) {
			double v = g->coords[(int64_t)i * dims + d];
			lo[d] = v < lo[d] ? v : lo[d];
			hi[d] = v > hi[d] ? v : hi[d];
		}
	for (int d = 0; d < dims; d++)
		if (hi[d] > lo[d])
			s->torig[k++] = d;
	if (k == 0)
		s->torig[k++] = 0;
	const double *pos = g->coords;
	if (k < dims) {
		*copy = tp__malloc_array((size_t)n * (size_t)k, sizeof(double));
		if (!*copy)
			return TP_ENOMEM;
		for (int32_t i = 0; i < n; i++)
			for (int j = 0; j < k; j++)
				(*copy)[(int64_t)i * k + j] = g->coords[(int64_t)i * dims + s->torig[j]];
		pos = *copy;
	}
	return tp__pointset_init(&s->tasks, n, k, pos);
}

/* Screening pays off on large graphs scored by hop-bytes when every used
 * node has the same slots (positions map to leaves by division). */
static int setup_screening(search *s)
{
	const tp_graph *g = s->g;
	int32_t n = g->ntasks;
	s->stride = 1;
	if (s->o->metric != TP_METRIC_HOP_BYTES || s->slots_each <= 0 ||
	    g->nedges <= 4 * SAMPLE_EDGES || (int64_t)s->ntso * n > ((int64_t)1 << 27))
		return 0;
	s->stride = (int32_t)((g->nedges + SAMPLE_EDGES - 1) / SAMPLE_EDGES);
	s->cand = tp__calloc((size_t)s->nperm_var, sizeof *s->cand);
	return s->cand ? 0 : TP_ENOMEM;
}

static int thread_count(const tp_geom_opts *opt)
{
	int nthreads = opt->nthreads;
	if (nthreads <= 0)
		nthreads = tp__cpus();
	return nthreads > TP__MAX_THREADS ? TP__MAX_THREADS : nthreads;
}

/* The tasks' point set, on its own thread. */
struct task_prep {
	search *s;
	double *copy;
	int rc;
};

static void *task_prep_run(void *arg)
{
	struct task_prep *t = arg;
	t->rc = task_points(t->s, &t->copy);
	return NULL;
}

/* From this many tasks their point set is built beside the nodes' (it
 * depends on the graph alone: a million tasks, 15-20 ms). */
#define PREP_THREAD_TASKS 262144

/* Everything before the search proper: node coordinates, the used slots,
 * both point sets, the variants, folds, split trees, screening, order. */
static int prepare(search *s, int32_t *ids)
{
	struct task_prep tp = { s, NULL, 0 };
	pthread_t th;
	bool beside = s->g->ntasks >= PREP_THREAD_TASKS && thread_count(s->o) > 1 &&
		      pthread_create(&th, NULL, task_prep_run, &tp) == 0;
	int cut[TP_MAX_DIMS];
	int rc = seam_cuts(s, cut);
	if (!rc)
		rc = choose_slots(s, cut);
	if (!rc)
		rc = node_points(s, cut, ids);
	if (beside)
		pthread_join(th, NULL);
	else if (!rc)
		task_prep_run(&tp);
	if (!rc)
		rc = tp.rc;
	/* the task point set keeps (and owns) positions only where ranks do
	 * not suffice */
	if (s->tasks.pos != tp.copy)
		free(tp.copy);
	if (rc)
		return rc;
	s->slots_each = 0;
	for (int32_t j = 0; j < s->nn; j++) {
		int u = s->used[alloc_of(s, j)];
		s->slots_each = !s->slots_each || s->slots_each == u ? u : -1;
	}
	/* as tp__part_nodes splits its root: k parts, the last one large */
	s->first_splits = thread_count(s->o) > 1 &&
			  s->nn / s->o->parts_per_level >= TP__SPLIT_NODES;
	/* packed ranks: tasks weigh 1; nodes when their slots are equal */
	tp__pointset_pack(&s->tasks, 1);
	tp__pointset_pack(&s->nodes, s->slots_each > 0 ? (uint32_t)s->slots_each : 0);
	if (!rc)
		rc = make_variants(s);
	if (!rc)
		rc = setup_folds(s);
	if (!rc)
		rc = setup_blocks(s);
	if (!rc)
		rc = setup_trees(s);
	if (!rc)
		rc = setup_screening(s);
	if (!rc)
		rc = make_order(s);
	return rc;
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
	int rc = check_inputs(g, a, opt, err);
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
	int nthreads = thread_count(opt);
	rc = ids ? prepare(&s, ids) : TP_ENOMEM;
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
