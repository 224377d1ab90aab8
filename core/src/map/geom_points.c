/* topoplace — the geometric mapper's point sets: dense per-dimension ranks
 * of the tasks' and nodes' positions, packed into the points' words when
 * they fit. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "map/geom_part.h"
#include "pattern/pattern_internal.h"

/* ------------------------------------------------------------------------ */
/* Point sets: dense per-dimension ranks packed into sort keys               */

typedef struct rank_sort_ctx {
	const double *v;
	int dims, d;
} rank_sort_ctx;

static int cmp_by_coord(const void *x, const void *y, void *arg)
{
	const rank_sort_ctx *c = arg;
	double a = c->v[(int64_t)*(const int32_t *)x * c->dims + c->d];
	double b = c->v[(int64_t)*(const int32_t *)y * c->dims + c->d];
	if (a < b)
		return -1;
	if (a > b)
		return 1;
	return *(const int32_t *)x - *(const int32_t *)y;
}

/* Ranks of dimension d by sorting the coordinates (ties share a rank). */
static int rank_by_sorting(pointset *ps, const double *pos, int d)
{
	int32_t n = ps->n;
	int dims = ps->dims;
	int32_t *ord = tp__malloc_array((size_t)n, sizeof(int32_t));
	if (!ord)
		return TP_ENOMEM;
	for (int32_t i = 0; i < n; i++)
		ord[i] = i;
	rank_sort_ctx ctx = { pos, dims, d };
	qsort_r(ord, (size_t)n, sizeof(int32_t), cmp_by_coord, &ctx);
	uint32_t r = 0;
	for (int32_t i = 0; i < n; i++) {
		if (i > 0 && pos[(int64_t)ord[i] * dims + d] !=
				     pos[(int64_t)ord[i - 1] * dims + d])
			r++;
		ps->rank[(int64_t)ord[i] * dims + d] = r;
	}
	ps->maxrank[d] = r;
	free(ord);
	return 0;
}

/* Each dimension's place in a packed word, from maxrank; whether they fit
 * in 32 bits. */
static bool pack_layout(pointset *ps)
{
	int at = 0;
	for (int d = 0; d < ps->dims; d++) {
		int bits = 0;
		while (bits < 32 && (ps->maxrank[d] >> bits))
			bits++;
		ps->shift[d] = (uint8_t)(at < 32 ? at : 0);
		ps->mask[d] = bits >= 32 ? UINT32_MAX : (1u << bits) - 1;
		at += bits;
	}
	return at <= 32;
}

int tp__pointset_alloc_ranked(pointset *ps, int32_t n, int dims,
			      const uint32_t *maxrank)
{
	memset(ps, 0, sizeof *ps);
	ps->n = n;
	ps->dims = dims;
	memcpy(ps->maxrank, maxrank, sizeof(uint32_t) * (size_t)dims);
	/* a million nodes of three dimensions: 4 MB to write, not 12 */
	ps->rank_word = pack_layout(ps);
	ps->rank = tp__malloc_array((size_t)n * (size_t)(ps->rank_word ? 1 : dims),
				    sizeof(uint32_t));
	return ps->rank ? 0 : TP_ENOMEM;
}

int tp__pointset_alloc(pointset *ps, int32_t n, int dims)
{
	memset(ps, 0, sizeof *ps);
	ps->n = n;
	ps->dims = dims;
	ps->rank = tp__malloc_array((size_t)n * (size_t)dims, sizeof(uint32_t));
	return ps->rank ? 0 : TP_ENOMEM;
}

/* Ranks per dimension.  Integer coordinates in a modest range use the value
 * itself (minus the minimum); anything else is ranked by sorting.  When every
 * dimension is of the first kind, rank extents are coordinate extents and
 * ps->pos is left NULL: the caller may free pos. */
int tp__pointset_init(pointset *ps, int32_t n, int dims, const double *pos)
{
	double lo[TP_MAX_DIMS], hi[TP_MAX_DIMS];
	bool integral[TP_MAX_DIMS], direct = true, any = false;
	if (tp__pointset_alloc(ps, n, dims))
		return TP_ENOMEM;
	/* one pass for every dimension's range */
	for (int d = 0; d < dims; d++) {
		lo[d] = INFINITY;
		hi[d] = -INFINITY;
		integral[d] = true;
	}
	for (int32_t i = 0; i < n; i++)
		for (int d = 0; d < dims; d++) {
			double v = pos[(int64_t)i * dims + d];
			lo[d] = v < lo[d] ? v : lo[d];
			hi[d] = v > hi[d] ? v : hi[d];
			/* integral: exact through int64 inside its range */
			if (fabs(v) < 9e15 ? v != (double)(int64_t)v : v != floor(v))
				integral[d] = false;
		}
	bool use[TP_MAX_DIMS];   /* ranked by value */
	for (int d = 0; d < dims; d++) {
		use[d] = n > 0 && integral[d] && hi[d] - lo[d] < 4.0 * n + 1024.0 &&
			 hi[d] - lo[d] < 2147483647.0;
		if (use[d])
			ps->maxrank[d] = (uint32_t)(hi[d] - lo[d]);
		else
			direct = direct && n == 0;
		any = any || use[d];
	}
	for (int32_t i = 0; any && i < n; i++)
		for (int d = 0; d < dims; d++)
			if (use[d])
				ps->rank[(int64_t)i * dims + d] =
					(uint32_t)(pos[(int64_t)i * dims + d] - lo[d]);
	for (int d = 0; d < dims; d++) {
		if (use[d] || n == 0)
			continue;
		int rc = rank_by_sorting(ps, pos, d);
		if (rc)
			return rc;
	}
	ps->pos = direct ? NULL : (double *)pos;
	return 0;
}

int tp__pointset_grid(pointset *ps, const int *grid, int k, const int *used)
{
	int32_t n = grid[0] * grid[1] * grid[2];
	memset(ps, 0, sizeof *ps);
	ps->n = n;
	ps->dims = k;
	ps->grid = true;
	for (int j = 0; j < k; j++) {
		ps->maxrank[j] = (uint32_t)(grid[used[j]] - 1);
		ps->idstride[j] = used[j] == 0 ? 1
				  : used[j] == 1 ? grid[0]
				  : (int64_t)grid[0] * grid[1];
	}
	tp__pointset_pack(ps, 1);
	if (ps->packed)
		return 0;   /* ranks from the ids, packed in the points */
	ps->rank = tp__malloc_array((size_t)n * (size_t)k, sizeof(uint32_t));
	if (!ps->rank)
		return TP_ENOMEM;
	int at[3] = { 0, 0, 0 };
	uint32_t *r = ps->rank;
	for (int32_t t = 0; t < n; t++) {
		for (int j = 0; j < k; j++)
			*r++ = (uint32_t)at[used[j]];
		tp__grid_next(at, grid);
	}
	return 0;
}

void tp__pointset_pack(pointset *ps, uint32_t wconst)
{
	ps->packed = pack_layout(ps) && wconst > 0;
	ps->wconst = ps->packed ? wconst : 0;
}

size_t tp__pointset_hist_len(const pointset *ps)
{
	uint64_t top = 0;
	for (int d = 0; d < ps->dims; d++)
		if (ps->maxrank[d] > top)
			top = ps->maxrank[d];
	/* cut_range histograms a range of ranks only when it spans at most
	 * 2n + 17 values, and never more than the largest rank + 1 */
	uint64_t cap = 2 * (uint64_t)ps->n + 17;
	return (size_t)(top + 1 < cap ? top + 1 : cap);
}

void tp__pointset_free(pointset *ps)
{
	free(ps->rank);
}
