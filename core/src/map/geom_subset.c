/* topoplace — the closest subset of the allocation's slots, when there are
 * more slots than tasks (k-means over the nodes' positions). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "map/geom_part.h"
#include "input/alloc_internal.h"

/* ------------------------------------------------------------------------ */
/* Closest subset (k-means), when there are more slots than tasks            */

typedef struct dist_idx {
	double d;
	int32_t i;
} dist_idx;

static int cmp_dist_idx(const void *x, const void *y)
{
	const dist_idx *a = x, *b = y;
	if (a->d < b->d)
		return -1;
	if (a->d > b->d)
		return 1;
	return a->i - b->i;
}

static double sqdist(const double *a, const double *b, int D)
{
	double s = 0;
	for (int d = 0; d < D; d++)
		s += (a[d] - b[d]) * (a[d] - b[d]);
	return s;
}

/* Choose slots so that exactly ntasks remain: k-means with a centre at every
 * bounding-box corner plus the middle (10 rounds), then for each centre the
 * nearest nodes until the tasks fit; keep the centre whose chosen nodes lie
 * closest to it in total.  slots_out[i] receives the used slots of node i.
 * Past the deadline, after one round and one centre, it keeps what it has. */
int tp__closest_subset(const tp_alloc *a, const double *pos, int D,
		       int64_t ntasks, int *slots_out, double deadline)
{
	int32_t n = a->nnodes;
	int nc = (1 << D) + 1;
	double *ctr = tp__calloc((size_t)nc * (size_t)D, sizeof(double));
	double *sum = tp__calloc((size_t)nc * (size_t)D, sizeof(double));
	int64_t *cnt = tp__calloc((size_t)nc, sizeof(int64_t));
	dist_idx *di = tp__malloc_array((size_t)n, sizeof(dist_idx));
	int *best = tp__malloc_array((size_t)n, sizeof(int));
	int rc = 0;
	if (!ctr || !sum || !cnt || !di || !best) {
		rc = TP_ENOMEM;
		goto out;
	}
	double lo[TP_MAX_DIMS], hi[TP_MAX_DIMS];
	for (int d = 0; d < D; d++) {
		lo[d] = INFINITY;
		hi[d] = -INFINITY;
	}
	for (int32_t i = 0; i < n; i++)
		for (int d = 0; d < D; d++) {
			double v = pos[(int64_t)i * D + d];
			lo[d] = v < lo[d] ? v : lo[d];
			hi[d] = v > hi[d] ? v : hi[d];
		}
	for (int c = 0; c < nc - 1; c++)
		for (int d = 0; d < D; d++)
			ctr[c * D + d] = (c >> d) & 1 ? hi[d] : lo[d];
	for (int d = 0; d < D; d++)
		ctr[(nc - 1) * D + d] = (lo[d] + hi[d]) / 2;

	for (int it = 0; it < 10 && (it == 0 || tp__now_ms() <= deadline); it++) {
		memset(sum, 0, sizeof(double) * (size_t)nc * (size_t)D);
		memset(cnt, 0, sizeof(int64_t) * (size_t)nc);
		for (int32_t i = 0; i < n; i++) {
			const double *x = &pos[(int64_t)i * D];
			int bc = 0;
			double bd = sqdist(x, ctr, D);
			for (int c = 1; c < nc; c++) {
				double dd = sqdist(x, &ctr[c * D], D);
				if (dd < bd)
					bd = dd, bc = c;
			}
			cnt[bc] += a->slots[i];
			for (int d = 0; d < D; d++)
				sum[bc * D + d] += x[d] * a->slots[i];
		}
		for (int c = 0; c < nc; c++)
			if (cnt[c])
				for (int d = 0; d < D; d++)
					ctr[c * D + d] = sum[c * D + d] / (double)cnt[c];
	}

	double best_cost = INFINITY;
	for (int c = 0; c < nc && (c == 0 || tp__now_ms() <= deadline); c++) {
		for (int32_t i = 0; i < n; i++) {
			di[i].d = sqrt(sqdist(&pos[(int64_t)i * D], &ctr[c * D], D));
			di[i].i = i;
		}
		qsort(di, (size_t)n, sizeof *di, cmp_dist_idx);
		double cost = 0;
		int64_t need = ntasks;
		for (int32_t j = 0; j < n && need > 0; j++) {
			int use = a->slots[di[j].i];
			if (use > need)
				use = (int)need;
			cost += di[j].d * use;
			need -= use;
		}
		if (cost < best_cost) {
			best_cost = cost;
			memset(best, 0, sizeof(int) * (size_t)n);
			need = ntasks;
			for (int32_t j = 0; j < n && need > 0; j++) {
				int use = a->slots[di[j].i];
				if (use > need)
					use = (int)need;
				best[di[j].i] = use;
				need -= use;
			}
		}
	}
	memcpy(slots_out, best, sizeof(int) * (size_t)n);
out:
	free(ctr);
	free(sum);
	free(cnt);
	free(di);
	free(best);
	return rc;
}
