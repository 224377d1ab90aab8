/* topoplace — folding a task grid onto a box of a higher-dimensional torus.
 *
 * The problem.  A 3-D stencil of 96x92x72 tasks, 4 per node, on a 6-D torus
 * of 24x23x24x2x3x2 nodes (Fugaku's shape): recursive bisection pairs task
 * and machine dimensions level by level and cannot see that the grid embeds
 * exactly: 96 = 24*2*2, 92 = 23*2*2, 72 = 24*3.
 *
 * The embedding (Bhatele's thesis, ch. 9: "folding" a 2-D object grid onto a
 * 3-D mesh like an accordion; the same idea as Rubik's fold and tilt).
 *  1. The k tasks of a node are a block b[0] x b[1] x ... of the task grid
 *     (b[i] divides the task extent t[i], the b[i] multiply to k).  The nodes
 *     then form a grid of extents G[i] = t[i] / b[i].
 *  2. Every machine dimension of the box goes, whole, to one task dimension,
 *     so that the extents given to task dimension i multiply to G[i].
 *  3. Node coordinate x along task dimension i (0 <= x < G[i]) walks the
 *     sub-box of its machine dimensions m[0], m[1], ... in snake order (a
 *     reflected mixed-radix Gray code): digit j of x (m[0] fastest) is
 *     reversed when the number formed by the digits above it is odd.  Two
 *     consecutive x then differ in one digit by one, i.e. by one hop, and the
 *     other task dimensions' machine coordinates do not move.
 *  So every stencil edge along a grid axis joins two tasks of one node or of
 *  two nodes one hop apart (edges through the grid's periodic wrap, and the
 *  diagonals of 9- and 27-point stencils, may be longer; the search scores
 *  every fold like any other variant).
 *
 * Search.  Block shapes are enumerated (divisor tuples of k), and for each the
 * assignments of machine dimensions to task dimensions by backtracking (an
 * extent is given to task dimension i only while it divides what is left of
 * G[i]).  Folds are ranked by the number of task pairs inside a block (the
 * traffic that never leaves a node), then by enumeration order, and the best
 * TP__FOLD_MAX are kept.  Within a task dimension the machine dimensions are
 * walked in increasing index.
 *
 * When it applies: the task coordinates form a full grid, the allocated nodes
 * form a full box (after the seam shift, so a box across the torus seam
 * counts; the whole machine or a sub-box), every node has the same k slots,
 * all of them used, and the extents factor as above.  Otherwise there is no
 * fold and the geometric search runs as before.
 */
#include <stdio.h>
#include <string.h>

#include "map/geom_fold.h"

typedef struct fold_search {
	const int *text, *mext;
	int tdims, mdims, k;
	int block[TP_MAX_DIMS];
	int64_t left[TP_MAX_DIMS];     /* what is left of G[i] to cover */
	int assign[TP_MAX_DIMS];       /* machine dimension -> task dimension */
	tp__fold *out;
	int64_t *rank;                 /* per fold: sort key (lower is better) */
	int n, max, seq;
} fold_search;

/* Task pairs along the grid axes inside one block (a 2d+1-point stencil's
 * edges that stay in a node). */
static int64_t block_pairs(const int *b, int tdims)
{
	int64_t pairs = 0;
	for (int i = 0; i < tdims; i++) {
		int64_t p = b[i] - 1;
		for (int j = 0; j < tdims; j++)
			if (j != i)
				p *= b[j];
		pairs += p;
	}
	return pairs;
}

/* Keep the fold of fs->assign when it ranks among the best max. */
static void keep_fold(fold_search *fs)
{
	tp__fold f;
	memset(&f, 0, sizeof f);
	f.tdims = fs->tdims;
	f.mdims = fs->mdims;
	memcpy(f.block, fs->block, sizeof f.block);
	memcpy(f.mext, fs->mext, sizeof(int) * (size_t)fs->mdims);
	for (int j = 0; j < fs->mdims; j++) {
		int i = fs->assign[j];
		f.group[i][f.ngroup[i]++] = j;
	}
	/* more pairs inside a node first, then enumeration order */
	int64_t key = -block_pairs(fs->block, fs->tdims) * ((int64_t)1 << 32) + fs->seq++;
	int at = fs->n;
	while (at > 0 && fs->rank[at - 1] > key)
		at--;
	if (at >= fs->max)
		return;
	int last = fs->n < fs->max ? fs->n : fs->max - 1;
	for (int x = last; x > at; x--) {
		fs->out[x] = fs->out[x - 1];
		fs->rank[x] = fs->rank[x - 1];
	}
	fs->out[at] = f;
	fs->rank[at] = key;
	if (fs->n < fs->max)
		fs->n++;
}

/* Give machine dimension j (and the following ones) to task dimensions. */
static void assign_dims(fold_search *fs, int j)
{
	if (j == fs->mdims) {
		for (int i = 0; i < fs->tdims; i++)
			if (fs->left[i] != 1)
				return;
		keep_fold(fs);
		return;
	}
	for (int i = 0; i < fs->tdims; i++) {
		if (fs->left[i] % fs->mext[j])
			continue;
		fs->left[i] /= fs->mext[j];
		fs->assign[j] = i;
		assign_dims(fs, j + 1);
		fs->left[i] *= fs->mext[j];
	}
}

/* Every block shape: b[i] divides text[i], the b[i] multiply to k. */
static void block_shapes(fold_search *fs, int i, int k_left)
{
	if (i == fs->tdims) {
		if (k_left != 1)
			return;
		for (int d = 0; d < fs->tdims; d++)
			fs->left[d] = fs->text[d] / fs->block[d];
		assign_dims(fs, 0);
		return;
	}
	for (int b = 1; b <= k_left; b++) {
		if (k_left % b || fs->text[i] % b)
			continue;
		fs->block[i] = b;
		block_shapes(fs, i + 1, k_left / b);
	}
}

int tp__fold_find(const int *text, int tdims, const int *mext, int mdims,
		  int k, tp__fold *out, int max)
{
	int64_t rank[TP__FOLD_MAX];
	if (tdims < 1 || tdims > TP_MAX_DIMS || mdims < 1 || mdims > TP_MAX_DIMS ||
	    k < 1 || max < 1)
		return 0;
	if (max > TP__FOLD_MAX)
		max = TP__FOLD_MAX;
	int64_t tasks = 1, slots = k;
	for (int i = 0; i < tdims; i++)
		tasks *= text[i];
	for (int j = 0; j < mdims; j++) {
		if (mext[j] < 2)
			return 0;
		slots *= mext[j];
	}
	if (tasks != slots)
		return 0;
	fold_search fs;
	memset(&fs, 0, sizeof fs);
	fs.text = text;
	fs.mext = mext;
	fs.tdims = tdims;
	fs.mdims = mdims;
	fs.k = k;
	fs.out = out;
	fs.rank = rank;
	fs.max = max;
	block_shapes(&fs, 0, k);
	return fs.n;
}

/* Every block shape from dimension i on, the best kept in out. */
static void best_blocks(const int *text, int tdims, int i, int k_left, int *b,
			int64_t *best, int (*out)[TP_MAX_DIMS], int max, int *n)
{
	if (i == tdims) {
		if (k_left != 1)
			return;
		int64_t pairs = block_pairs(b, tdims);
		if (pairs > *best) {
			*best = pairs;
			*n = 0;
		}
		if (pairs > 0 && pairs == *best && *n < max)
			memcpy(out[(*n)++], b, sizeof(int) * TP_MAX_DIMS);
		return;
	}
	for (int x = 1; x <= k_left; x++) {
		if (k_left % x || text[i] % x)
			continue;
		b[i] = x;
		best_blocks(text, tdims, i + 1, k_left / x, b, best, out, max, n);
	}
}

int tp__block_find(const int *text, int tdims, int k,
		   int (*out)[TP_MAX_DIMS], int max)
{
	if (tdims < 1 || tdims > TP_MAX_DIMS || k < 2 || max < 1)
		return 0;
	int b[TP_MAX_DIMS] = { 0 }, n = 0;
	for (int i = 0; i < TP_MAX_DIMS; i++)
		b[i] = 1;
	int64_t best = 0;   /* a block with no pair inside is no block */
	best_blocks(text, tdims, 0, k, b, &best, out, max > TP__BLOCK_MAX ? TP__BLOCK_MAX : max, &n);
	return n;
}

void tp__fold_place(const tp__fold *f, const uint32_t *tc, int *mc)
{
	for (int i = 0; i < f->tdims; i++) {
		int64_t q = tc[i] / (uint32_t)f->block[i];
		for (int j = 0; j < f->ngroup[i]; j++) {
			int d = f->group[i][j], m = f->mext[d];
			int digit = (int)(q % m);
			q /= m;
			mc[d] = (q & 1) ? m - 1 - digit : digit;
		}
	}
}

void tp__fold_describe(const tp__fold *f, const char *tnames,
		       const char *mnames, char *buf, size_t len)
{
	size_t at = 0;
	buf[0] = '\0';
	at += (size_t)snprintf(buf, len, "folded:");
	for (int i = 0; i < f->tdims && at < len; i++) {
		at += (size_t)snprintf(buf + at, len - at, " %c=", tnames[i]);
		for (int j = 0; j < f->ngroup[i] && at < len; j++)
			at += (size_t)snprintf(buf + at, len - at, "%c",
					       mnames[f->group[i][j]]);
	}
	for (int i = 0; i < f->tdims && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%d", i ? "x" : ", ",
				       f->block[i]);
	if (at < len)
		snprintf(buf + at, len - at, " per node");
}
