/* topoplace — two-way graph partitioning for the recursive bipartition
 * (bisect.c): multilevel, as METIS's recursive bisection is, with its own
 * random numbers.
 *
 * Why not METIS here: Debian's METIS draws its random numbers from the C
 * library's rand(), one state for the whole process, so two calls made at
 * once take each other's numbers and their results change from run to run.
 * This one keeps its generator in the call, so the bipartition's splits run
 * side by side and the mapping stays the same on any number of threads.
 */
#ifndef TOPOPLACE_BISECT_H
#define TOPOPLACE_BISECT_H

#include <stdint.h>

/* Split the graph of n vertices (CSR: xadj[n + 1], adj and w of xadj[n]
 * entries, both directions of each edge, weights >= 1, no self loops) into
 * part[v] 0 or 1 with exactly n0 vertices in part 0 (0 <= n0 <= n), the
 * weight of the cut edges as low as it finds.  key (or NULL): a position
 * per vertex, e.g. a task's coordinate along its longest extent; the split
 * of the lowest keys is then one of the starts tried, so a grid tends to
 * be cut straight across.  Deterministic for a seed.  Returns 0, or
 * TP_ENOMEM (part then holds some valid split). */
int tp__bisect(int32_t n, const int32_t *xadj, const int32_t *adj,
	       const int32_t *w, const double *key, int32_t n0, uint64_t seed,
	       int32_t *part);

#endif
