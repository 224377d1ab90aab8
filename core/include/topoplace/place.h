/* topoplace — the policy layer: one call that picks the algorithm, runs it and
 * returns the mapping, plus the baselines users compare against.  Hostfiles
 * are in topoplace/hostfile.h; a whole placement with Slurm's rules (the
 * policy defaults, auto's margin, every policy held to Slurm's order) is
 * tp_job, topoplace/job.h.
 */
#ifndef TOPOPLACE_PLACE_H
#define TOPOPLACE_PLACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <topoplace/error.h>
#include <topoplace/export.h>
#include <topoplace/geom.h>
#include <topoplace/graphmap.h>
#include <topoplace/alloc.h>
#include <topoplace/machine.h>
#include <topoplace/metrics.h>
#include <topoplace/pattern.h>

#ifdef __cplusplus
extern "C" {
#endif

enum tp_policy {
	TP_POLICY_NONE = 0,      /* leave Slurm's placement alone */
	TP_POLICY_GEOMETRIC,     /* geometric mapping (needs task coordinates) */
	TP_POLICY_BLOCK,         /* Slurm's default: fill nodes in order */
	TP_POLICY_CYCLIC,        /* round-robin over nodes */
	TP_POLICY_RANDOM,        /* seeded random permutation of slots */
	TP_POLICY_ZORDER,        /* Slurm torus topology order: Morton order of
				    seam-shifted coordinates, then block */
	TP_POLICY_GRAPH,         /* graph mapping: best of greedy growth and
				    recursive bipartitioning, both refined */
	TP_POLICY_AUTO,          /* every applicable candidate (block,
				    geometric, zorder, greedy, bipartition;
				    hierarchical on trees, dragonflies and
				    block networks, and hier-coords there,
				    its splits made by the task coordinates;
				    modcolor on dragonflies with 2-D grid
				    patterns) judged by the auto rule below,
				    the winner swap-refined, and Slurm's block
				    order refined too when it is within 10 %
				    of the winner; the best is kept, never
				    worse than block */
	TP_POLICY_MODCOLOR,      /* PERCS mod-colour halo mapping (2-D grid
				    patterns on dragonflies) */
	TP_POLICY_HIERARCHICAL,  /* switch trees, dragonflies and block
				    networks: the tasks split over the
				    hierarchy's groups level by level with
				    exact capacities */
};

TP_EXPORT int tp_policy_parse(const char *name, enum tp_policy *out, tp_error *err);
TP_EXPORT const char *tp_policy_name(enum tp_policy p);
/* Does the policy need a communication pattern to do anything?  cyclic,
 * random and zorder do not; none and block never change Slurm's order. */
TP_EXPORT bool tp_policy_needs_pattern(enum tp_policy p);

typedef struct tp_place_opts {
	enum tp_policy policy;
	tp_geom_opts geom;       /* metric, time budget, search for geometric */
	uint64_t seed;           /* for TP_POLICY_RANDOM */
	tp_graphmap_opts graph;  /* refinement passes and METIS seed; the time
				    budget and metric come from geom */
	/* Optional (auto and graph): rank the candidates by this score of a
	 * whole mapping first (lower is better) and by the metric on ties;
	 * e.g. the GPU-link congestion after MAGC's phases 2 and 3
	 * (tp_nodes_gpu_congestion), so that phase 1 sees the inside of the
	 * nodes.  NULL: the metric alone. */
	double (*rank)(const int32_t *map, void *arg);
	void *rank_arg;
} tp_place_opts;

/* The auto rule, when the metric is hop-bytes: candidates are
 * compared by hop-bytes, except that
 *   - a candidate whose maximum link congestion is at least
 *     TP_PLACE_CONGESTION_SHARE (20 %) below the other's wins when its
 *     hop-bytes are at most that share above the other's;
 *   - hop-bytes within TP_PLACE_EQUAL_HOPS (0.5 %) of each other count as
 *     equal, and then the lower maximum congestion wins.
 * The congestion (metrics.h, both directions on directed links) is only
 * computed where it can decide: for hop-bytes within the share of the best,
 * and for graphs of at most TP_PLACE_CONGESTION_MAX_WORK message-hops
 * (edges x 2 x the machine's longest route); under a time budget, only
 * when the two congestions of a comparison are estimated to take at most
 * a quarter of what is left. */
#define TP_PLACE_CONGESTION_SHARE 0.2
#define TP_PLACE_EQUAL_HOPS 0.005
#define TP_PLACE_CONGESTION_MAX_WORK ((int64_t)1 << 26)

TP_EXPORT void tp_place_opts_default(tp_place_opts *o);

/* Run the policy.  map[t] = allocation index of task t's node. */
TP_EXPORT int tp_place(const tp_graph *g, const tp_alloc *a, const tp_place_opts *o,
	     int32_t *map, tp_geom_report *report, tp_error *err);

/* Baselines (ntasks <= total slots). */
TP_EXPORT int tp_map_block(const tp_alloc *a, int32_t ntasks, int32_t *map, tp_error *err);
TP_EXPORT int tp_map_zorder(const tp_alloc *a, int32_t ntasks, int32_t *map, tp_error *err);

#ifdef __cplusplus
}
#endif
#endif
