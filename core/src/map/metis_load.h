/* topoplace — METIS, linked or loaded at run time (metis_load.c).
 *
 * The library and the command link libmetis as usual.  The SPANK plugin runs
 * inside srun and slurmstepd on compute nodes, and Debian's slurmd does not
 * pull in libmetis5: its copy of metis_load.c is built with
 * TP_METIS_DLOPEN and loads libmetis.so.5 with dlopen() only when a graph
 * mapping needs it, so that the plugin loads (and every other policy works)
 * on a node without METIS.  Not installed.
 */
#ifndef TOPOPLACE_METIS_LOAD_H
#define TOPOPLACE_METIS_LOAD_H

#include <metis.h>
#include <stdint.h>
#include <topoplace/error.h>
#include "pattern/pattern_internal.h"

/* The library the plugin loads; a test build names a missing one. */
#ifndef TP_METIS_SONAME
#define TP_METIS_SONAME "libmetis.so.5"
#endif
/* The one line a job sees when METIS is missing (a note, or the error). */
#define TP__METIS_MISSING "graph mapping needs libmetis5 on this node"

typedef int (*tp__metis_defaults_fn)(idx_t *options);
typedef int (*tp__metis_part_fn)(idx_t *nvtxs, idx_t *ncon, idx_t *xadj,
				 idx_t *adjncy, idx_t *vwgt, idx_t *vsize,
				 idx_t *adjwgt, idx_t *nparts, real_t *tpwgts,
				 real_t *ubvec, idx_t *options, idx_t *edgecut,
				 idx_t *part);

/* A METIS partitioning costs about this many microseconds per adjacency
 * entry of its graph (set below its measured cost, so that a call that
 * fits is not refused).  A call is uninterruptible, so
 * none is started when this estimate runs past the time budget. */
#define TP__METIS_US_PER_ENTRY 1.0

/* The two METIS calls topoplace makes; handle is NULL when linked. */
struct tp__metis {
	void *handle;
	tp__metis_defaults_fn set_default_options;
	tp__metis_part_fn part_graph_recursive;
};

/* METIS as this build gets it: linked, or loaded (TP_METIS_DLOPEN).
 * TP_ENOMETIS "graph mapping needs libmetis5 on this node (DETAIL)" when it
 * cannot be loaded.  Pair with tp__metis_close. */
int tp__metis_open(struct tp__metis *m, tp_error *err);
/* Load the named shared library with dlopen() whatever the build (tests). */
int tp__metis_load(struct tp__metis *m, const char *soname, tp_error *err);
void tp__metis_close(struct tp__metis *m);

/* The subgraph of g on the tasks T[0..nT) in METIS's form, as graph
 * mapping, hierarchical mapping and block networks give it: local[t] is t's
 * index in T; for a task outside T it may be anything (-1, or its index in
 * another subset: T[local[t]] tells), so that subsets split side by side
 * share one array.  tp__metis_sub_count gives the
 * edges inside T (*ne) and their bytes (*W); tp__metis_sub_fill writes
 * xadj (nT + 1), adj and wgt (ne each), the bytes scaled to integers >= 1
 * that sum to about 2^30 (bytes overflow idx_t, and METIS balances cuts by
 * their integer weights). */
struct tp_graph;
struct tp__metis_sub {
	const struct tp_graph *g;
	const int32_t *T;
	int32_t nT;
	const int32_t *local;
};
void tp__metis_sub_count(const struct tp__metis_sub *s, int64_t *ne, double *W);
void tp__metis_sub_fill(const struct tp__metis_sub *s, double W, idx_t *xadj,
			idx_t *adj, idx_t *wgt);

#endif
