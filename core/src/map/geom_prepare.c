/* topoplace — geometric mapping, setting the search up: the inputs' check,
 * the point sets of nodes and tasks (seam shift, used slots), the variants
 * and the order they are tried in, folds, split trees, blocked variants and
 * screening.  The search itself is in geom_search.c. */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "map/geom_search.h"
#include "input/alloc_internal.h"
#include "pattern/pattern_internal.h"

/* ------------------------------------------------------------------------ */
/* Variants                                                                  */

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

void tp__geom_fold_map(const search *s, const tp__fold *f, int32_t *map)
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
int tp__geom_add_tree(search *s, tree *t)
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

/* Entries of the implicit tree of n nodes: one for a leaf, 1 + k for an
 * inner node, plus its parts'. */
int64_t tp__geom_tree_len(int64_t n, uint64_t w, int kparts, struct len_memo *m)
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
		len += tp__geom_tree_len(size[j], w, kparts, m);
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
	t.len = tp__geom_tree_len(s->nn, t.rule_w, t.rule_k, &memo);
	s->trees[s->ntrees] = t;
	s->predicted = s->ntrees++;
	return 0;
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

/* ------------------------------------------------------------------------ */
/* Preparation                                                               */

int tp__geom_check_inputs(const tp_graph *g, const tp_alloc *a,
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

int tp__geom_thread_count(const tp_geom_opts *opt)
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
int tp__geom_prepare(search *s, int32_t *ids)
{
	struct task_prep tp = { s, NULL, 0 };
	pthread_t th;
	bool beside = s->g->ntasks >= PREP_THREAD_TASKS && tp__geom_thread_count(s->o) > 1 &&
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
	s->first_splits = tp__geom_thread_count(s->o) > 1 &&
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
