/* topoplace — graph mapping for task graphs without coordinates, its entry
 * points: each sets up the shared context and runs a part: greedy growth
 * (graphmap_greedy.c), recursive bipartitioning (graphmap_bipart.c), the
 * hop-bytes refinement (graphmap_refine.c) or the link-load refinements
 * (graphmap_lanes.c).
 * See topoplace/graphmap.h for the algorithms. */
#include <stdlib.h>
#include <string.h>

#include <topoplace/metrics.h>
#include "map/geom_internal.h"
#include "map/graphmap_parts.h"

void tp_graphmap_opts_default(tp_graphmap_opts *o)
{
	memset(o, 0, sizeof *o);
	o->refine_passes = 8;
	o->seed = 1;
}

static void gm_free(gm *c)
{
	free(c->rc);
	free(c->sc);
	free((void *)c->dtab);
}

/* shifted: the constructions' seam-shifted coordinates too (the
 * refinements measure distances on the raw ones alone). */
static int gm_init(gm *c, const tp_graph *g, const tp_alloc *a, bool shifted,
		   tp_error *err, const char *what)
{
	memset(c, 0, sizeof *c);
	c->g = g;
	c->a = a;
	c->m = a->m;
	c->nd = a->m->ndims;
	c->nn = a->nnodes;
	c->nt = g->ntasks;
	c->recost_degree = REFINE_RECOST_DEGREE;
	if (g->ntasks > a->total_slots)
		return tp_error_set(err, TP_EINVAL,
				    "%s: %d tasks do not fit in the allocation's %lld slots",
				    what, g->ntasks, (long long)a->total_slots);
	size_t cells = (size_t)c->nn * (size_t)c->nd;
	c->rc = tp__malloc_array(cells ? cells : 1, sizeof(int));
	if (shifted)
		c->sc = tp__malloc_array(cells ? cells : 1, sizeof(int));
	if (!c->rc || (shifted && (!c->sc || tp_geom_seam_shift(a, c->sc) < 0))) {
		gm_free(c);
		return tp_error_set(err, TP_ENOMEM, "%s: out of memory", what);
	}
	for (int32_t i = 0; i < c->nn; i++)
		memcpy(&c->rc[(size_t)i * (size_t)c->nd],
		       &c->m->coords[(size_t)a->node[i] * (size_t)c->nd],
		       sizeof(int) * (size_t)c->nd);
	/* where a distance walks the network (trees, dragonflies, blocks),
	 * each node pair's is kept once asked for: a captured all-to-all's
	 * refinements ask for the same 128 x 128 pairs millions of times
	 * (default-speed's a2a-512: 5-7 % of its CPU time).  As asked, not
	 * up front: at 1,000 nodes all pairs cost more than they saved.
	 * Without memory for it, every distance is computed (the same). */
	if (!c->m->plain_hops && c->nn <= GM_DIST_TABLE_NODES)
		c->dtab = calloc((size_t)c->nn * (size_t)c->nn, sizeof *c->dtab);
	return 0;
}

/* ------------------------------------------------------------------------ */
/* Public entry points                                                       */

/* The two public refinements: validate, set up, run one pass function. */
typedef int (*refine_fn)(const gm *c, const tp_graphmap_opts *o, int32_t *map,
			 int64_t *moves_out, double t0);

/* A refinement: its name in messages and its pass function. */
struct refinement {
	const char *what;
	refine_fn run;
};

static const struct refinement BY_HOP_BYTES = { "refinement", tp__refine_run };
static const struct refinement BY_CONGESTION = { "congestion refinement",
						 tp__refine_cong_run };
static const struct refinement BY_LANES = { "lane refinement", tp__refine_lanes_run };

/* What a refinement's entry sets beyond the options (gm's fields of the
 * same names; recost -1: the default). */
struct refine_set {
	int threads;
	double hop_weight;
	bool rounds_guard;
	int recost;
	int link_threads;
	struct tp__lender *lender;
	const atomic_bool *stop;
	int64_t *told;
};

#define REFINE_DEFAULTS .recost = -1, .link_threads = 1

/* A refinement's context for map, once map is checked (what: the name
 * in messages). */
static int refine_context(gm *c, const tp_graph *g, const tp_alloc *a,
			  const int32_t *map, const char *what, tp_error *err)
{
	int rc = tp_mapping_validate(g, a, map, err);
	return rc ? rc : gm_init(c, g, a, false, err, what);
}

static int refine_entry(const struct refinement *r, const tp_graph *g,
			const tp_alloc *a, const tp_graphmap_opts *o,
			struct refine_set set, int32_t *map, int64_t *moves,
			tp_error *err)
{
	const char *what = r->what;
	tp_graphmap_opts def;
	if (!o) {
		tp_graphmap_opts_default(&def);
		o = &def;
	}
	if (moves)
		*moves = 0;
	/* the budget counts from here: the checks and the set-up are part
	 * of what the caller gave it for */
	double t0 = tp__now_ms();
	gm c;
	int rc = refine_context(&c, g, a, map, what, err);
	if (rc)
		return rc;
	c.threads = set.threads;
	c.link_threads = set.link_threads;
	c.lender = set.lender;
	c.hop_weight = set.hop_weight;
	c.rounds_guard = set.rounds_guard;
	c.stop = set.stop;
	c.told = set.told;
	if (set.recost >= 0)
		c.recost_degree = set.recost;
	rc = r->run(&c, o, map, moves, t0);
	gm_free(&c);
	if (rc)
		return tp_error_set(err, rc, "%s: %s", what,
				    rc == TP_ENOMEM ? "out of memory" : "routing failed");
	return 0;
}

int tp_graphmap_refine(const tp_graph *g, const tp_alloc *a,
		       const tp_graphmap_opts *o, int32_t *map,
		       int64_t *moves, tp_error *err)
{
	return refine_entry(&BY_HOP_BYTES, g, a, o, (struct refine_set){ REFINE_DEFAULTS },
			    map, moves, err);
}

int tp__graphmap_refine_recost(const tp_graph *g, const tp_alloc *a,
			       const tp_graphmap_opts *o, int recost_degree,
			       int32_t *map, int64_t *moves, tp_error *err)
{
	struct refine_set set = { REFINE_DEFAULTS };
	set.recost = recost_degree;
	return refine_entry(&BY_HOP_BYTES, g, a, o, set, map, moves, err);
}

int tp__graphmap_refine_threads(const tp_graph *g, const tp_alloc *a,
				const tp_graphmap_opts *o, int threads,
				const atomic_bool *stop, int32_t *map, int64_t *moves,
				tp_error *err)
{
	struct refine_set set = { REFINE_DEFAULTS };
	set.threads = threads;
	set.stop = stop;
	return refine_entry(&BY_HOP_BYTES, g, a, o, set, map, moves, err);
}

int tp_graphmap_refine_congestion(const tp_graph *g, const tp_alloc *a,
				  const tp_graphmap_opts *o, int32_t *map,
				  int64_t *moves, tp_error *err)
{
	return refine_entry(&BY_CONGESTION, g, a, o, (struct refine_set){ REFINE_DEFAULTS },
			    map, moves, err);
}

int tp__graphmap_refine_congestion_threads(const tp_graph *g, const tp_alloc *a,
					  const tp_graphmap_opts *o, int threads,
					  struct tp__lender *lender,
					  const atomic_bool *stop, int32_t *map,
					  int64_t *moves, tp_error *err)
{
	struct refine_set set = { REFINE_DEFAULTS };
	set.link_threads = threads;
	set.lender = lender;
	set.stop = stop;
	return refine_entry(&BY_CONGESTION, g, a, o, set, map, moves, err);
}

int tp__graphmap_refine_lanes(const tp_graph *g, const tp_alloc *a,
			      const tp_graphmap_opts *o, int32_t *map,
			      int64_t *moves, tp_error *err)
{
	return refine_entry(&BY_LANES, g, a, o, (struct refine_set){ REFINE_DEFAULTS }, map,
			    moves, err);
}

int tp__graphmap_refine_lanes_hops(const tp_graph *g, const tp_alloc *a,
				   const tp_graphmap_opts *o, double hop_weight,
				   bool rounds_guard, int threads,
				   struct tp__lender *lender, int32_t *map,
				   int64_t *moves, tp_error *err)
{
	struct refine_set set = { REFINE_DEFAULTS };
	set.hop_weight = hop_weight;
	set.rounds_guard = rounds_guard;
	set.link_threads = threads;
	set.lender = lender;
	return refine_entry(&BY_LANES, g, a, o, set, map, moves, err);
}

int tp__graphmap_refine_lanes_told(const tp_graph *g, const tp_alloc *a,
				   const tp_graphmap_opts *o, int threads,
				   struct tp__lender *lender, int32_t *map,
				   int64_t *moves, int64_t *told, tp_error *err)
{
	struct refine_set set = { REFINE_DEFAULTS };
	set.link_threads = threads;
	set.lender = lender;
	set.told = told;
	*told = 0;
	return refine_entry(&BY_LANES, g, a, o, set, map, moves, err);
}

int tp__graphmap_bound_audit(const tp_graph *g, const tp_alloc *a,
			     const int32_t *map, bool lanes, int64_t n[3], tp_error *err)
{
	const char *what = "bound audit";
	gm c;
	int rc = refine_context(&c, g, a, map, what, err);
	if (rc)
		return rc;
	rc = tp__refine_bound_audit(&c, map, lanes, n);
	gm_free(&c);
	if (rc)
		return tp_error_set(err, rc, "%s: %s", what,
				    rc == TP_ENOMEM ? "out of memory"
				    : rc == TP_EINVAL ? "too few peers a task"
						      : "routing failed");
	return 0;
}

int tp_graphmap_greedy(const tp_graph *g, const tp_alloc *a,
		       const tp_graphmap_opts *o, int32_t *map, tp_error *err)
{
	tp_graphmap_opts def;
	if (!o) {
		tp_graphmap_opts_default(&def);
		o = &def;
	}
	double t0 = tp__now_ms();
	gm c;
	int rc = gm_init(&c, g, a, true, err, "greedy mapping");
	if (rc)
		return rc;
	c.deadline = o->time_budget_ms > 0 ? t0 + o->time_budget_ms : 0;
	rc = tp__greedy_run(&c, map);
	if (!rc && o->refine_passes > 0)
		rc = tp__refine_run(&c, o, map, NULL, t0);
	if (!rc && o->refine_passes > 0 && o->refine_congestion)
		rc = tp__refine_cong_run(&c, o, map, NULL, t0);
	gm_free(&c);
	if (rc == TP_ETIME && c.projected_ms > 0)
		return tp_error_set(err, rc, "greedy mapping: would take about %.0f ms, "
				    "over the time budget of %g ms",
				    c.projected_ms, o->time_budget_ms);
	if (rc == TP_ETIME)
		return tp_error_set(err, rc, "greedy mapping: time budget of %g ms "
				    "reached before every task was placed",
				    o->time_budget_ms);
	if (rc)
		return tp_error_set(err, rc, "greedy mapping: out of memory");
	return 0;
}

int tp_graphmap_bipartition(const tp_graph *g, const tp_alloc *a,
			    const tp_graphmap_opts *o, int32_t *map,
			    tp_error *err)
{
	return tp__graphmap_bipartition_threads(g, a, o, 0, map, err);
}

int tp__graphmap_bipartition_threads(const tp_graph *g, const tp_alloc *a,
				     const tp_graphmap_opts *o, int threads,
				     int32_t *map, tp_error *err)
{
	tp_graphmap_opts def;
	if (!o) {
		tp_graphmap_opts_default(&def);
		o = &def;
	}
	double t0 = tp__now_ms();
	gm c;
	int rc = gm_init(&c, g, a, true, err, "bipartition mapping");
	if (rc)
		return rc;
	c.deadline = o->time_budget_ms > 0 ? t0 + o->time_budget_ms : 0;
	rc = tp__bipart_run(&c, o->seed, threads > 0 ? threads : tp__cpus(), map);
	if (rc) {
		gm_free(&c);
		if (rc == TP_ETIME)
			return tp_error_set(err, rc, "bipartition mapping: time budget "
					    "of %g ms reached before the last cut",
					    o->time_budget_ms);
		return tp_error_set(err, rc, "bipartition mapping: out of memory");
	}
	if (o->refine_passes > 0) {
		rc = tp__refine_run(&c, o, map, NULL, t0);
		if (!rc && o->refine_congestion)
			rc = tp__refine_cong_run(&c, o, map, NULL, t0);
	}
	gm_free(&c);
	if (rc)
		return tp_error_set(err, rc, "bipartition mapping: %s", rc == TP_ENOMEM
				    ? "out of memory" : "routing failed");
	return 0;
}
