/* topoplace — the simple orders (baselines): block (Slurm's default, the
 * slots in allocation order), cyclic (round-robin over the nodes), random
 * (Fisher-Yates over the slots with splitmix64, identical on every
 * platform for a seed) and zorder (Slurm's torus topology order: nodes by
 * the Morton code of their seam-shifted coordinates, then block). */
#include <stdlib.h>
#include <string.h>

#include "map/place_cand.h"
#include "map/geom_part.h"
#include "input/alloc_internal.h"

int tp__place_check_fit(const tp_alloc *a, int32_t ntasks, tp_error *err)
{
	if (ntasks < 0 || ntasks > a->total_slots)
		return tp_error_set(err, TP_EINVAL,
				    "%d tasks do not fit in the allocation's %lld slots",
				    ntasks, (long long)a->total_slots);
	return 0;
}

int tp_map_block(const tp_alloc *a, int32_t ntasks, int32_t *map, tp_error *err)
{
	int rc = tp__place_check_fit(a, ntasks, err);
	if (rc)
		return rc;
	int32_t t = 0;
	for (int32_t i = 0; i < a->nnodes && t < ntasks; i++)
		for (int s = 0; s < a->slots[i] && t < ntasks; s++)
			map[t++] = i;
	return 0;
}

int tp_map_cyclic(const tp_alloc *a, int32_t ntasks, int32_t *map, tp_error *err)
{
	int rc = tp__place_check_fit(a, ntasks, err);
	if (rc)
		return rc;
	int *left = tp__malloc_array((size_t)a->nnodes, sizeof(int));
	if (!left)
		return tp_error_set(err, TP_ENOMEM, "cyclic mapping: out of memory");
	memcpy(left, a->slots, sizeof(int) * (size_t)a->nnodes);
	int32_t t = 0;
	while (t < ntasks)
		for (int32_t i = 0; i < a->nnodes && t < ntasks; i++)
			if (left[i] > 0) {
				left[i]--;
				map[t++] = i;
			}
	free(left);
	return 0;
}

int tp_map_random(const tp_alloc *a, int32_t ntasks, uint64_t seed,
		  int32_t *map, tp_error *err)
{
	int rc = tp__place_check_fit(a, ntasks, err);
	if (rc)
		return rc;
	int64_t S = a->total_slots;
	int32_t *slot = tp__malloc_array((size_t)S, sizeof(int32_t));
	if (!slot)
		return tp_error_set(err, TP_ENOMEM, "random mapping: out of memory");
	int64_t k = 0;
	for (int32_t i = 0; i < a->nnodes; i++)
		for (int s = 0; s < a->slots[i]; s++)
			slot[k++] = i;
	uint64_t st = seed;
	/* Fisher-Yates over the first ntasks positions */
	for (int64_t i = 0; i < ntasks; i++) {
		int64_t j = i + (int64_t)(tp__splitmix64(&st) % (uint64_t)(S - i));
		int32_t tmp = slot[i];
		slot[i] = slot[j];
		slot[j] = tmp;
		map[i] = slot[i];
	}
	free(slot);
	return 0;
}

typedef struct zkey {
	uint64_t key;
	int32_t i;
} zkey;

static int cmp_zkey(const void *x, const void *y)
{
	const zkey *a = x, *b = y;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->i - b->i;
}

/* Slurm's torus topology order: nodes sorted by the Morton (Z-order) code of
 * their coordinates relative to the minimal wrap-aware arc of every axis, then
 * tasks laid out block-wise in that order. */
int tp_map_zorder(const tp_alloc *a, int32_t ntasks, int32_t *map, tp_error *err)
{
	int rc = tp__place_check_fit(a, ntasks, err);
	if (rc)
		return rc;
	int D = a->m->ndims;
	int32_t n = a->nnodes;
	int *c = tp__malloc_array((size_t)n * (size_t)D, sizeof(int));
	zkey *z = tp__malloc_array((size_t)n, sizeof(zkey));
	if (!c || !z) {
		free(c);
		free(z);
		return tp_error_set(err, TP_ENOMEM, "zorder mapping: out of memory");
	}
	if (tp__seam_shift(a, c, false) < 0) {   /* Slurm's seam rule */
		free(c);
		free(z);
		return tp_error_set(err, TP_ENOMEM, "zorder mapping: out of memory");
	}
	int lo[TP_MAX_DIMS];
	for (int d = 0; d < D; d++) {
		lo[d] = INT32_MAX;
		for (int32_t i = 0; i < n; i++)
			if (c[(int64_t)i * D + d] < lo[d])
				lo[d] = c[(int64_t)i * D + d];
	}
	int bits = 64 / D;
	for (int32_t i = 0; i < n; i++) {
		uint64_t key = 0;
		for (int b = bits - 1; b >= 0; b--)
			for (int d = D - 1; d >= 0; d--) {
				uint64_t v = (uint64_t)(c[(int64_t)i * D + d] - lo[d]);
				key = (key << 1) | ((v >> b) & 1);
			}
		z[i].key = key;
		z[i].i = i;
	}
	qsort(z, (size_t)n, sizeof *z, cmp_zkey);
	int32_t t = 0;
	for (int32_t k = 0; k < n && t < ntasks; k++)
		for (int s = 0; s < a->slots[z[k].i] && t < ntasks; s++)
			map[t++] = z[k].i;
	free(c);
	free(z);
	return 0;
}
