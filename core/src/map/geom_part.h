/* topoplace — geometric mapping, the partitioning primitives shared by
 * the partitions (geom_part.c, geom_points.c, geom_tree.c, geom_seam.c,
 * geom_subset.c) and the search (geom_search.c and its parts).  Private. */
#ifndef TOPOPLACE_GEOM_PART_H
#define TOPOPLACE_GEOM_PART_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <topoplace/alloc.h>
#include <topoplace/geom.h>
#include "map/geom_select.h"
#include "net/network.h"

/* Point sets: dense per-dimension ranks packed into sort keys. */
typedef struct pointset {
	int32_t n;
	int dims;
	uint32_t *rank;      /* n x dims, monotone in the coordinate; or
				with rank_word, one word a point: its
				ranks packed as below (shift, mask) */
	bool rank_word;
	uint32_t maxrank[TP_MAX_DIMS];
	double *pos;         /* n x dims coordinates, for extents; NULL when
				the ranks are the coordinates minus a constant */
	/* When every dimension's ranks fit in 32 bits together and every
	 * point weighs the same (wconst), a point carries its ranks packed in
	 * tp__pt.w: rank d = w >> shift[d] & mask[d].  Cuts then read them in
	 * place instead of gathering them from the table by id at every
	 * level (cache misses on large sets). */
	bool packed;
	uint32_t wconst;
	uint8_t shift[TP_MAX_DIMS];
	uint32_t mask[TP_MAX_DIMS];
	/* A whole grid's positions (tp__pointset_grid): every rank vector
	 * up to maxrank is a point, whose id is the sum of its ranks times
	 * idstride.  The task partition then cuts boxes of it without
	 * touching their points while its cuts fall between planes, and
	 * rank is NULL when the ranks pack (tp__pointset_rank reads them). */
	bool grid;
	int64_t idstride[TP_MAX_DIMS];
} pointset;

/* Rank d of point id. */
static inline uint32_t tp__pointset_rank(const pointset *ps, uint32_t id, int d)
{
	if (ps->rank_word)
		return (ps->rank[id] >> ps->shift[d]) & ps->mask[d];
	if (ps->rank)
		return ps->rank[(int64_t)id * ps->dims + d];
	return (uint32_t)(((int64_t)id / ps->idstride[d]) % ((int64_t)ps->maxrank[d] + 1));
}

/* How one side orders its points at a given cut: the cut dimension first,
 * then the remaining dimensions in the variant's cyclic order, each possibly
 * reflected.  Primary rank in the high 32 bits, the others share 31 bits
 * (saturating; ties are then broken by id, which stays deterministic). */
typedef struct side_order {
	int perm[TP_MAX_DIMS];
	bool reflect[TP_MAX_DIMS];
	bool longest;            /* cut the longest extent instead of perm */
} side_order;

/* Tree encoding, depth-first: a leaf is 0; an internal node is k followed by
 * the k slot counts of its parts, then the k subtrees. */
typedef struct tree {
	int32_t *v;          /* counts fit: at most the task count */
	int64_t len, cap;
	/* While set, pushes are compared with this tree instead of stored
	 * (v stays NULL, len counts the matching prefix); the first
	 * difference stores the prefix and clears it. */
	const struct tree *expect;
	/* An implicit tree (v NULL, rule_w > 0): the one tp__tree_rule gives
	 * for rule_n nodes of rule_w slots, rule_k parts per level, at every
	 * node; len is its length.  Nothing is stored: a million nodes' would
	 * be 16 MB to write, and for the task side to read back. */
	int64_t rule_n;
	uint64_t rule_w;
	int rule_k;
} tree;

/* The torus seam shift as a cut per dimension: router coordinates up to
 * cut[d] move up by the extent (cut[d] = -1: none move).  Returns how many
 * dimensions move, or TP_ENOMEM.  full_planes: where every plane of a
 * dimension is occupied, the seam goes between the two adjacent planes
 * with the fewest nodes (geometric mapping); without it nothing moves
 * there (Slurm's torus order, the zorder baseline).  tp__seam_shift
 * applies them (below). */
int tp__seam_cuts(const tp_alloc *a, int *cut, bool full_planes);

/* Seam-shifted router coordinates of machine node i. */
static inline void tp__seam_coords(const tp_machine *m, int32_t i,
				   const int *cut, int *out)
{
	const int *c = &m->coords[(int64_t)i * m->ndims];
	for (int d = 0; d < m->ndims; d++)
		out[d] = c[d] <= cut[d] ? c[d] + m->dims[d] : c[d];
}

/* Append x to a split tree. */
int tp__tree_push(tree *t, int64_t x);

/* A tree that has followed its expectation so far (t->len entries of it)
 * written out, to be stored from there on. */
int tp__tree_materialize(tree *t);

/* The part sizes, in nodes, into size (64 at most) of n >= 2 nodes of w
 * slots each cut into kparts parts, as the node partition cuts them when
 * every node weighs the same (the count nearest each target, ties to the
 * smaller, whatever the coordinates); returns the part count. */
int tp__tree_rule(int64_t n, uint64_t w, int kparts, int64_t *size);

/* Append the whole split tree of n nodes of w slots each to t (the tree
 * tp__tree_rule gives at every node). */
int tp__tree_predict(tree *t, int64_t n, uint64_t w, int kparts);
/* Check a node of the partition (k parts of cnt slots) against an implicit
 * expected tree, storing the tree from there on the first difference. */
int tp__tree_check(tree *t, int64_t n, int k, const int64_t *cnt);

/* Ranks per dimension of n points (pos: n x dims, kept by reference). */
int tp__pointset_init(pointset *ps, int32_t n, int dims, const double *pos);
/* An empty point set of n points in dims dimensions, ranks allocated. */
int tp__pointset_alloc(pointset *ps, int32_t n, int dims);
/* The same with maxrank given: a table of one word a point (rank_word)
 * when the ranks pack in 32 bits, written with tp__pointset_set. */
int tp__pointset_alloc_ranked(pointset *ps, int32_t n, int dims,
			      const uint32_t *maxrank);

/* The ranks of point id set to r[0..dims) (r[d] <= maxrank[d]). */
static inline void tp__pointset_set(pointset *ps, uint32_t id, const uint32_t *r)
{
	if (!ps->rank_word) {
		memcpy(&ps->rank[(int64_t)id * ps->dims], r, sizeof *r * (size_t)ps->dims);
		return;
	}
	uint32_t w = 0;
	for (int d = 0; d < ps->dims; d++)
		w |= r[d] << ps->shift[d];
	ps->rank[id] = w;
}

/* The point set of a grid's positions (x fastest, extents grid[0..2]) in the
 * k dimensions used[0..k-1]: the ranks tp__pointset_init would give them,
 * without the coordinates, and without a table when they pack in 32 bits
 * (tp__pointset_pack will pack them). */
int tp__pointset_grid(pointset *ps, const int *grid, int k, const int *used);
void tp__pointset_free(pointset *ps);

/* Points of ps carry their ranks packed when they fit in 32 bits
 * (ps->packed); wconst (> 0) is every point's weight, which the points then
 * no longer hold.  Call once the ranks and maxrank are set.  A grid's
 * point set without a table is packed already (its ranks fit); packed again
 * with a weight, it stays so. */
void tp__pointset_pack(pointset *ps, uint32_t wconst);

/* Point id of ps as a partition's starting point, of weight w (or, when
 * ps->packed, ps->wconst, with the packed ranks in its place). */
static inline tp__pt tp__pointset_pt(const pointset *ps, uint32_t id, uint32_t w)
{
	tp__pt p = { .key = 0, .id = id, .w = w };
	if (ps->packed) {
		p.w = 0;
		for (int d = 0; d < ps->dims; d++)
			p.w |= tp__pointset_rank(ps, id, d) << ps->shift[d];
	}
	return p;
}

/* Entries a cut's histogram needs for this point set (cut_range). */
size_t tp__pointset_hist_len(const pointset *ps);

/* The last part of the root on a thread of its own, from this many nodes:
 * the node side is the longest of a variant's two partitions (a million
 * nodes: 150 ms against the tasks' 110), and its parts are independent. */
#define TP__SPLIT_NODES 131072

/* What both partitions take: the side's points ps in the order so, the
 * scratch (hist: tp__pointset_hist_len(ps) entries, tmp: as many points as
 * partitioned) and the clock: TP_ETIME when tp__now_ms passes deadline
 * first (INFINITY: never). */
typedef struct tp__part_side {
	const pointset *ps;
	const side_order *so;
	uint64_t *hist;
	tp__pt *tmp;
	double deadline;
} tp__part_side;

/* The node partition's own settings and results. */
typedef struct tp__node_cuts {
	const int32_t *alloc_index;  /* point set id -> allocation index
					(NULL: the id itself) */
	int k;                       /* parts per level */
	bool split;                  /* a large root's last part may be cut
					on a second thread (the same
					result) */
	tree *tr;                    /* the split tree is appended to it */
	int32_t *leaf_node;          /* every leaf's allocation index, in
					order */
	int32_t nleaves;             /* written: how many leaves */
} tp__node_cuts;

/* Partition the n nodes in p (id = point set index, w = slots) with
 * cuts->k parts per level into cuts' tree and leaves. */
int tp__part_nodes(const tp__part_side *side, tp__node_cuts *cuts, tp__pt *p,
		   int64_t n);

/* Where tp__part_tasks puts its result: each task's place in task order
 * (pos[id]), or the task at each place (at[place]). */
typedef struct tp__task_order {
	int32_t *pos, *at;
} tp__task_order;

/* Partition the n tasks in p into exactly the counts of the split tree tr;
 * the task order goes to out (NULL: p ends in task order).  When
 * side->ps->grid, p's contents are not read: its points are made from the
 * grid (tp__pointset_pt(ps, id, 1) for each), and with out, only where a
 * cut falls inside a plane. */
int tp__part_tasks(const tp__part_side *side, const tree *tr, tp__pt *p,
		   int64_t n, const tp__task_order *out);

/* Closest-subset selection: slots_out[i] = slots used on allocated node i so
 * that exactly ntasks remain (pos: nnodes x D coordinates).  Past deadline
 * it stops refining and keeps the best found so far. */
int tp__closest_subset(const tp_alloc *a, const double *pos, int D,
		       int64_t ntasks, int *slots_out, double deadline);

/* tp_geom_map without the laziness, for tests: every node partition is
 * built before any variant is scored, variants in number order, no task
 * partition dropped.  Must give the same result when there is no budget. */
int tp__geom_map_eager(const tp_graph *g, const tp_alloc *a,
		       const tp_geom_opts *opt, int32_t *map,
		       tp_geom_report *report, tp_error *err);

/* The seam-shifted router coordinates of the allocation's nodes (nnodes x
 * ndims) into out; full_planes as tp__seam_cuts (geom_part.h): true is
 * tp_geom_seam_shift, false Slurm's rule (zorder).  Returns the dimensions
 * shifted or TP_ENOMEM. */
int tp__seam_shift(const tp_alloc *a, int *out, bool full_planes);

#endif
