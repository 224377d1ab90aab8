/* topoplace — metrics: the part of <topoplace/metrics.h> that is not
 * exported.  The core's modules, the unit tests, the benchmarks and the
 * fuzzers (all linked with the static archive) use it; the front ends and
 * outside programs see only the public header. */
#ifndef TOPOPLACE_METRICS_INTERNAL_H
#define TOPOPLACE_METRICS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <topoplace/metrics.h>

#include "util/names_internal.h"   /* tp_metric_parse */

/* Reusable scratch for repeated congestion scoring (one link-load array). */

int tp_congestion_ws_create(tp_congestion_ws **out, const tp_machine *m,
			    tp_error *err);
void tp_congestion_ws_destroy(tp_congestion_ws *ws);
/* Max directed link load in bytes (and messages via *msgs if non-NULL). */
/* tp_metrics_compute with the congestion's routes on up to threads
 * threads (large graphs whose messages all carry the same bytes; the
 * result is the same to the bit on any count). */
int tp__metrics_compute_threads(const tp_graph *g, const tp_alloc *a,
				const int32_t *map, bool want_congestion,
				int threads, tp_metrics *out, tp_error *err);
/* tp_metrics_link_loads on up to threads threads (as the congestion
 * pass: large graphs whose messages all carry the same bytes; the same
 * loads to the bit on any count). */
int tp__metrics_link_loads_threads(const tp_graph *g, const tp_alloc *a,
				   const int32_t *map, double *loads,
				   int64_t *msgs, int64_t nlinks, int threads,
				   tp_error *err);
double tp_metrics_max_congestion(const tp_graph *g, const tp_alloc *a,
				 const int32_t *map, tp_congestion_ws *ws,
				 int64_t *msgs);
/* Score of a mapping under kind, lower is better (for ranking candidates). */
double tp_metrics_score(const tp_graph *g, const tp_alloc *a,
			const int32_t *map, enum tp_metric_kind kind,
			tp_congestion_ws *ws);

/* Hop-bytes, but free to stop early and return any value above bound once
 * the sum exceeds it (used to discard losing candidates quickly). */
double tp__hop_bytes_bounded(const tp_graph *g, const tp_alloc *a,
			     const int32_t *map, double bound);
/* The same on at most `threads` threads (0: as many as pay off); the
 * result is the same to the last bit whatever the count. */
double tp__hop_bytes_threads(const tp_graph *g, const tp_alloc *a,
			     const int32_t *map, double bound, int threads);

/* Same from per-task router coordinates tc (ntasks x ndims of m), on at
 * most `threads` threads as above. */
double tp__hop_bytes_task_coords(const tp_graph *g, const tp_machine *m,
				 const int *tc, double bound, int threads);

#endif
