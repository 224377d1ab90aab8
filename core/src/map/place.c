/* topoplace — the policy layer (tp_place_ex): the policies' names and
 * options, and the dispatch of each policy to its mapping.  The baselines
 * (block, cyclic, random, zorder) are in place_orders.c; graph and auto's
 * candidates in place_auto.c, one candidate's building and scoring in
 * place_cand.c, their choice in place_choice.c, their run side by side in
 * place_side.c, the winner's refinement in place_refine.c.
 *
 * geometric is held to block here already: coordinates can mislead (a graph
 * whose coordinates do not follow its edges), and a placement tool must not
 * make a job slower.
 *
 * graph and auto run candidates and keep the best under the metric (or,
 * with a rank callback, by the GPU-link congestion first):
 *   graph   greedy growth (always runs, so there is a result), bipartition;
 *   auto    block (always), hier-coords (on a hierarchy, with task
 *           coordinates), geometric (with them), zorder, hierarchical (on a
 *           hierarchy), greedy, bipartition, modcolor (dragonflies); ties
 *           keep the earlier candidate, so auto starts no worse than block.
 * The constructions are not refined; the winner is refined once ("X+refine",
 * kept when it scores no worse), and in auto so is Slurm's block order when
 * it scores within 10 % of the winner ("block+refine").  Refinement is most
 * of graph mapping's cost and gains a few per cent: refining only the winner
 * costs a fraction of refining every candidate, for the same result.
 * Time budget: block always runs, and geometric where the tasks have
 * coordinates (a third of what is left; its first variant completes even
 * past that); then half of what is left is kept for the refinement of the
 * winner.  Every other candidate, and each refinement, runs only
 * when what is left covers its estimated cost plus one scoring (scoring
 * is measured on block, the first candidate: on a large graph it costs as
 * much as some candidates), and gets what is left less that
 * scoring as its own budget.  On large graphs block is scored on a second
 * thread while geometric runs (block_async).  The rules every front end
 * adds on top (auto's 0.5 % margin over Slurm's order, every policy held to
 * it) are in job_map.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "util/util_internal.h"
#include "map/metis_load.h"
#include "net/network.h"
#include "map/graphmap_internal.h"
#include "map/metrics_internal.h"
#include "map/place_internal.h"
#include "map/predict_internal.h"
#include "map/time_trades.h"
#include "map/place_cand.h"
#include "input/alloc_internal.h"

bool tp_policy_needs_pattern(enum tp_policy p)
{
	return p != TP_POLICY_CYCLIC && p != TP_POLICY_RANDOM &&
	       p != TP_POLICY_ZORDER;
}

void tp_place_opts_default(tp_place_opts *o)
{
	memset(o, 0, sizeof *o);
	o->policy = TP_POLICY_GEOMETRIC;
	tp_geom_opts_default(&o->geom);
	tp_graphmap_opts_default(&o->graph);
	o->seed = 1;
}

/* Geometric mapping, but never worse than Slurm's own block order under the
 * chosen metric: coordinates can mislead (a graph whose coordinates do not
 * follow its edges), and a placement tool must not make a job slower. */
static int place_geometric(const tp_graph *g, const tp_alloc *a,
			   const tp_place_opts *o, int32_t *map,
			   tp_geom_report *report, tp_error *err)
{
	tp_geom_report local;
	if (!report)
		report = &local;
	int rc = tp_geom_map(g, a, &o->geom, map, report, err);
	if (rc)
		return rc;
	int32_t n = g->ntasks;
	int32_t *block = tp__malloc_array((size_t)n, sizeof(int32_t));
	tp_congestion_ws *ws = NULL;
	if (!block || (o->geom.metric == TP_METRIC_CONGESTION &&
		       tp_congestion_ws_create(&ws, a->m, NULL))) {
		free(block);
		return tp_error_set(err, TP_ENOMEM, "geometric mapping: out of memory");
	}
	if (tp_map_block(a, n, block, NULL) == 0) {
		/* the search's best score is this metric of map, exactly */
		double sg = report->best_score;
		double sb = tp_metrics_score(g, a, block, o->geom.metric, ws);
		if (sb < sg) {
			memcpy(map, block, sizeof(int32_t) * (size_t)n);
			report->default_kept = true;
			report->best_score = sb;
			snprintf(report->best_desc, sizeof report->best_desc,
				 "Slurm's block order (tp__place_better than every variant)");
		}
	}
	tp_congestion_ws_destroy(ws);
	free(block);
	return 0;
}

static int place_ex(const tp_graph *g, const tp_alloc *a, const tp_place_opts *o,
		    int32_t *map, tp_place_report *report, bool greedy_last,
		    tp_error *err)
{
	tp_place_opts defaults;
	if (!o) {
		tp_place_opts_default(&defaults);
		o = &defaults;
	}
	tp_place_report local;
	tp_place_report *rep = report ? report : &local;
	memset(rep, 0, sizeof *rep);
	rep->policy = o->policy;
	rep->metric = o->geom.metric;
	rep->best = -1;
	double t0 = tp__now_ms();
	int32_t n = g->ntasks;
	int rc;
	switch (o->policy) {
	case TP_POLICY_GEOMETRIC:
		rc = place_geometric(g, a, o, map, &rep->geom, err);
		rep->have_geom = rc == 0;
		break;
	case TP_POLICY_NONE:
	case TP_POLICY_BLOCK:
		rc = tp_map_block(a, n, map, err);
		break;
	case TP_POLICY_CYCLIC:
		rc = tp_map_cyclic(a, n, map, err);
		break;
	case TP_POLICY_RANDOM:
		rc = tp_map_random(a, n, o->seed, map, err);
		break;
	case TP_POLICY_ZORDER:
		rc = tp_map_zorder(a, n, map, err);
		break;
	case TP_POLICY_MODCOLOR:
		rc = tp_graphmap_modcolor(g, a, &o->graph, map, err);
		break;
	case TP_POLICY_GRAPH:
	case TP_POLICY_AUTO:
	case TP_POLICY_HIERARCHICAL:
		rc = tp__place_candidates(g, a, o, map, rep, greedy_last, err);
		break;
	default:
		rc = tp_error_set(err, TP_EINVAL, "unknown policy %d", (int)o->policy);
	}
	rep->elapsed_ms = tp__now_ms() - t0;
	return rc;
}

int tp_place_ex(const tp_graph *g, const tp_alloc *a, const tp_place_opts *o,
		int32_t *map, tp_place_report *report, tp_error *err)
{
	return place_ex(g, a, o, map, report, false, err);
}

int tp__place_ex_greedy_last(const tp_graph *g, const tp_alloc *a,
			     const tp_place_opts *o, int32_t *map,
			     tp_place_report *report, tp_error *err)
{
	return place_ex(g, a, o, map, report, true, err);
}

int tp_place(const tp_graph *g, const tp_alloc *a, const tp_place_opts *o,
	     int32_t *map, tp_geom_report *report, tp_error *err)
{
	tp_place_report rep;
	int rc = tp_place_ex(g, a, o, map, &rep, err);
	if (report) {
		if (rep.have_geom)
			*report = rep.geom;
		else
			memset(report, 0, sizeof *report);
	}
	return rc;
}
