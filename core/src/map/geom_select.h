/* topoplace — selection primitives for the geometric mapper.
 *
 * Points are (key, id) pairs ordered by key, then id; ids are unique, so the
 * order is total and every selection is deterministic. */
#ifndef TOPOPLACE_GEOM_SELECT_H
#define TOPOPLACE_GEOM_SELECT_H

#include <stdint.h>

typedef struct tp__pt {
	uint64_t key;
	uint32_t id;
	uint32_t w;   /* weight (slots) for weighted selection; where every
			 point weighs the same, geom_part.c may keep the point's
			 packed ranks here instead (pointset.packed) */
} tp__pt;

/* Rearrange p[0..n) so that p[k] is the element of rank k, everything before
 * it smaller and everything after it larger (nth_element). */
void tp__select(tp__pt *p, int64_t n, int64_t k);

/* Sort p[0..n) by (key, id). */
void tp__sort(tp__pt *p, int64_t n);

/* Weighted selection: rearrange p[0..n) and return the position c (0 < c < n
 * when n >= 2) such that p[0..c) are the smallest elements and their total
 * weight is as close as possible to target.  *wleft receives that weight. */
int64_t tp__wselect(tp__pt *p, int64_t n, uint64_t target, uint64_t *wleft);

#endif
