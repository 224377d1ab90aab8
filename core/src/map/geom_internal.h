/* topoplace — the geometric mapper's parts that tests reach but callers
 * do not (tp_geom_map in <topoplace/geom.h> is the public entry). */
#ifndef TOPOPLACE_GEOM_INTERNAL_H
#define TOPOPLACE_GEOM_INTERNAL_H

#include <topoplace/alloc.h>
#include <topoplace/geom.h>

/* The torus seam shift on its own: writes shifted router coordinates of the
 * allocated nodes (nnodes x ndims, row-major) into out.  On every wrapped
 * dimension the largest run of unoccupied coordinates becomes the seam when
 * it is longer than the natural wrap gap; when every coordinate is occupied
 * (dense allocations), the seam goes between the two adjacent planes with
 * the fewest nodes together (ties: the lowest).  Memory is linear in the
 * nodes, whatever the extents.  Returns the number of dimensions that were
 * shifted. */
int tp_geom_seam_shift(const tp_alloc *a, int *out);

/* tp_geom_map whose first variant also stops at the time budget: TP_ETIME
 * and no result when it cannot finish one (auto, when a candidate already
 * has a result: one partition of a million points can take longer than
 * all that is left of the budget). */
int tp__geom_map_bounded(const tp_graph *g, const tp_alloc *a,
			 const tp_geom_opts *opt, int32_t *map,
			 tp_geom_report *report, tp_error *err);

#endif
