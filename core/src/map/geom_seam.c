/* topoplace — the torus seam shift: on every wrapped dimension, where the
 * allocation's coordinates are cut so that they do not straddle the wrap
 * (geometric mapping and the zorder baseline). */
#include <stdlib.h>
#include <string.h>

#include "map/geom_internal.h"
#include "map/geom_part.h"
#include "input/alloc_internal.h"

/* ------------------------------------------------------------------------ */
/* Torus seam shift                                                          */

/* The occupied coordinates of one dimension, increasing, each with its
 * node count: val[0..k-1], cnt[0..k-1]. */
typedef struct planes {
	int *val;
	int32_t *cnt;
	int k;
} planes;

static int cmp_int(const void *x, const void *y)
{
	int a = *(const int *)x, b = *(const int *)y;
	return (a > b) - (a < b);
}

/* From a histogram when the extent is at most a few times the node count
 * (O(nodes + extent)), else by sorting the nodes' coordinates, so that
 * memory stays linear in the nodes whatever the extent (a 2^31 extent
 * would otherwise take 8 GiB of counters). */
static int planes_of(const tp_alloc *a, int d, planes *pl)
{
	const tp_machine *m = a->m;
	int nd = m->ndims, extent = m->dims[d];
	int32_t n = a->nnodes;
	memset(pl, 0, sizeof *pl);
	bool dense = (int64_t)extent <= 4 * (int64_t)n + 1024;
	size_t cap = dense ? (size_t)extent : (size_t)n;
	pl->val = tp__malloc_array(cap + 1, sizeof(int));
	pl->cnt = tp__calloc(cap + 1, sizeof(int32_t));
	if (!pl->val || !pl->cnt)
		return TP_ENOMEM;
	if (dense) {
		int32_t *h = pl->cnt;   /* the histogram, compacted in place */
		for (int32_t i = 0; i < n; i++)
			h[m->coords[(int64_t)a->node[i] * nd + d]]++;
		for (int x = 0; x < extent; x++)
			if (h[x]) {
				pl->val[pl->k] = x;
				h[pl->k++] = h[x];
			}
		return 0;
	}
	int *c = pl->val;
	for (int32_t i = 0; i < n; i++)
		c[i] = m->coords[(int64_t)a->node[i] * nd + d];
	qsort(c, (size_t)n, sizeof(int), cmp_int);
	for (int32_t i = 0; i < n; i++) {
		if (pl->k == 0 || c[pl->k - 1] != c[i])
			c[pl->k++] = c[i];
		pl->cnt[pl->k - 1]++;
	}
	return 0;
}

/* Every plane occupied (no gap to put the seam in): the seam goes between
 * the two adjacent planes with the fewest nodes together (Zoltan2's rule;
 * ties: the lowest), so that as few nodes as possible sit right beside the
 * cut geometric mapping cannot see across.  -1 when that is the natural
 * wrap already. */
static int seam_in_full(const planes *pl)
{
	int extent = pl->k, best = -1;
	int64_t best_sum = 0;
	for (int x = 0; x < extent; x++) {
		int64_t sum = (int64_t)pl->cnt[x] + pl->cnt[(x + 1) % extent];
		if (best < 0 || sum < best_sum) {
			best = x;
			best_sum = sum;
		}
	}
	return best == extent - 1 ? -1 : best;
}

/* The seam of one wrapped dimension: the largest run of unoccupied
 * coordinates becomes it.  Ties between equal gaps go to the gap with fewer
 * nodes on its two bordering coordinates, then to the lowest position.
 * With every coordinate occupied, seam_in_full.  Returns the coordinate
 * below the seam (coordinates up to it move up by the extent), -1 when
 * nothing moves, or TP_ENOMEM (< -1). */
static int seam_cut(const tp_alloc *a, int d, bool full_planes)
{
	int extent = a->m->dims[d];
	planes pl;
	int rc = planes_of(a, d, &pl), cut = -1;
	if (rc || pl.k == 0) {
		free(pl.val);
		free(pl.cnt);
		return rc ? TP_ENOMEM : -1;
	}
	int first = pl.val[0], last = pl.val[pl.k - 1];
	int64_t wrap_gap = (int64_t)extent - 1 - last + first;
	int64_t best_gap = 0, best_border = 0;
	for (int i = 1; i < pl.k; i++) {
		int64_t gap = (int64_t)pl.val[i] - pl.val[i - 1] - 1;
		int64_t border = (int64_t)pl.cnt[i - 1] + pl.cnt[i];
		if (gap > best_gap || (gap == best_gap && gap > 0 && border < best_border)) {
			best_gap = gap;
			cut = pl.val[i - 1];
			best_border = border;
		}
	}
	if (cut >= 0 && best_gap <= wrap_gap)
		cut = -1;
	else if (pl.k == extent && full_planes)
		cut = seam_in_full(&pl);
	free(pl.val);
	free(pl.cnt);
	return cut;
}

int tp__seam_cuts(const tp_alloc *a, int *cut, bool full_planes)
{
	const tp_machine *m = a->m;
	int nd = m->ndims, shifted = 0;
	for (int d = 0; d < nd; d++) {
		cut[d] = -1;
		if (m->wrap[d] && m->dims[d] > 2) {
			cut[d] = seam_cut(a, d, full_planes);
			if (cut[d] < -1)
				return TP_ENOMEM;
			shifted += cut[d] >= 0;
		}
	}
	return shifted;
}

int tp__seam_shift(const tp_alloc *a, int *out, bool full_planes)
{
	const tp_machine *m = a->m;
	int nd = m->ndims, cut[TP_MAX_DIMS];
	int shifted = tp__seam_cuts(a, cut, full_planes);
	if (shifted < 0)
		return shifted;
	for (int32_t i = 0; i < a->nnodes; i++)
		tp__seam_coords(m, a->node[i], cut, &out[(int64_t)i * nd]);
	return shifted;
}

int tp_geom_seam_shift(const tp_alloc *a, int *out)
{
	return tp__seam_shift(a, out, true);
}
