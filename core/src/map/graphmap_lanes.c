/* topoplace — graph mapping, the link-load refinements: moves, swaps and
 * node trades that lower the busiest link (congestion) or the busiest lane
 * of the time model (lanes), with their route cache
 * (tp_graphmap_refine_congestion, tp__graphmap_refine_lanes). */
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "map/predict_internal.h"
#include "map/graphmap_parts.h"
#include "map/rounds_guard.h"

#define TRADE_NEIGHBOURS 8   /* lane refinement: a node trades with its
				tasks' neighbours' nodes, */
#define TRADE_WINDOW 8       /* and with this many nodes either side of it
				in router order */
#define LANES_TAIL_SHARE 0.02 /* lane refinement, and the congestion
				refinement under auto's rule: a pass that
				moves fewer than this share of the moves so
				far is the last.  Each pass tries nearly
				every task (on
				a torus nearly all are near the busiest
				lane); on default-speed's torus-4096 the last
				three of eight passes made 5 of 1,131 moves
				in a third of the time, and the predicted
				time moved by 0.01 %. */
#define PHI_RISEN 1e-9     /* a trial whose potential has risen this
				much can end: its additions only add (each
				term is at most 1, and the sums' rounding is
				far below this), and cr_accept, which sums
				its own, would refuse it.  On miniAMR's
				512-rank trace most trials fail, and routed
				every message first. */
#define TASK_ROUTES 8192     /* a task's moves (a node's trades) stop once
				they have routed this many messages: its
				heaviest peers' nodes are tried first, and on a
				captured all-to-all (511 peers on 127 nodes) a
				task's 64 tries routed 16,000 a round, seconds
				for a fraction of a percent.  A 27-point
				stencil on a tree, 4 tasks a node, routes up to
				5,900 a task (at 4,096 LULESH's hint ran 2.5 %
				slower on a 4:1 tree), LULESH's trace 3,574,
				miniAMR's 3,680 */
#define HOT_SHARE 0.85       /* congestion refinement: tasks on links loaded
				at least this share of the maximum move */
#define FILTER_PEERS 64      /* heavy peers a task, on average, from which
				a move's first-order bound (move_refused)
				is checked before it is routed: there a try
				routes hundreds of messages and most tries
				keep nothing (fftMPI's 512-rank trace, 71 a
				task: seven tries in eight refused, its
				refinements in a third of the time).  Below,
				a pass costs milliseconds and the check would
				only change the maps (LULESH's trace 19,
				miniAMR's 35 to 42, halos) */

/* ------------------------------------------------------------------------ */
/* Congestion refinement                                                     */

/* Routes between allocation nodes, kept as they are asked for: a trial
 * routes every edge of the tasks it moves, out and back (each task's
 * edges again for every node it tries), and on trees and dragonflies
 * routing was half the refinement's time.  Open addressing on (i, j);
 * past ROUTE_CACHE_LANES lanes kept, routes are computed again. */
#define ROUTE_CACHE_LANES ((size_t)1 << 21)

/* A route's lanes are kept as int32_t, -1 for a lane out of range (which
 * cr_message refuses), and a lane's weight with its load (link_load): a
 * refinement is bound by memory (on a 4,096-task torus two thirds of a
 * route's time went to the first load of its cache entry), and four bytes
 * a lane instead of sixteen keep more routes in the cache's reach. */
struct route_ent {
	int64_t key;             /* i * nodes + j, -1: empty */
	int32_t off;             /* its lanes in pool (< ROUTE_CACHE_LANES) */
	int32_t len;
};

/* Up to ROUTE_DENSE_NODES allocation nodes, every pair has its place
 * (8 MB at most, and no hashing); above, the table is hashed. */
#define ROUTE_DENSE_NODES 1024

struct route_at {
	int32_t off, len;        /* off -1: not kept */
};

struct route_cache {
	struct route_at *dense;  /* i * nodes + j */
	struct route_ent *e;
	size_t cap, used;        /* cap: a power of two */
	int32_t *pool;
	size_t npool, poolcap;
};

static void route_cache_free(struct route_cache *c)
{
	free(c->dense);
	free(c->e);
	free(c->pool);
	memset(c, 0, sizeof *c);
}

/* The dense table where the nodes are few enough (none: hashed). */
static void route_cache_init(struct route_cache *c, int32_t nodes)
{
	memset(c, 0, sizeof *c);
	if (nodes > ROUTE_DENSE_NODES)
		return;
	size_t n = (size_t)nodes * (size_t)nodes + 1;
	if ((c->dense = tp__malloc_array(n, sizeof *c->dense)))
		for (size_t k = 0; k < n; k++)
			c->dense[k].off = -1;
}

/* The slot of key, or of the empty place where it goes. */
static size_t route_cache_slot(const struct route_cache *c, int64_t key)
{
	size_t h = (size_t)tp__mix64((uint64_t)key) & (c->cap - 1);
	while (c->e[h].key >= 0 && c->e[h].key != key)
		h = (h + 1) & (c->cap - 1);
	return h;
}

/* The entry of key (i * nodes + j) asked for soon: on a 4,096-node torus
 * nearly every look-up missed the cache (the hashed table is megabytes),
 * 13 % of the map's time waiting on them one after another. */
static void route_cache_prefetch(const struct route_cache *c, int64_t key)
{
	if (c->dense)
		__builtin_prefetch(&c->dense[key]);
	else if (c->cap)
		__builtin_prefetch(&c->e[(size_t)tp__mix64((uint64_t)key) & (c->cap - 1)]);
}

/* Doubles the table (at least 4,096 slots); false when out of memory
 * (the cache then stays as it is). */
static bool route_cache_grow(struct route_cache *c)
{
	size_t ncap = c->cap ? 2 * c->cap : 4096;
	struct route_cache n = { .cap = ncap, .used = c->used, .pool = c->pool,
				 .npool = c->npool, .poolcap = c->poolcap };
	if (!(n.e = tp__malloc_array(ncap, sizeof *n.e)))
		return false;
	for (size_t k = 0; k < ncap; k++)
		n.e[k].key = -1;
	for (size_t k = 0; k < c->cap; k++)
		if (c->e[k].key >= 0)
			n.e[route_cache_slot(&n, c->e[k].key)] = c->e[k];
	free(c->e);
	*c = n;
	return true;
}

/* Keeps the route of len lanes under key when there is room. */
static void route_cache_put(struct route_cache *c, int64_t key,
			    const int32_t *lanes, int len)
{
	if (c->npool + (size_t)len > ROUTE_CACHE_LANES ||
	    (!c->dense && 2 * (c->used + 1) > c->cap && !route_cache_grow(c)))
		return;
	if (c->npool + (size_t)len > c->poolcap) {
		size_t np = c->poolcap ? 2 * c->poolcap : 16384;
		while (np < c->npool + (size_t)len)
			np *= 2;
		int32_t *p = realloc(c->pool, np * sizeof *p);
		if (!p)
			return;
		c->pool = p;
		c->poolcap = np;
	}
	if (c->dense) {
		c->dense[key] = (struct route_at){ (int32_t)c->npool, len };
	} else {
		size_t h = route_cache_slot(c, key);
		c->e[h] = (struct route_ent){ key, (int32_t)c->npool, len };
		c->used++;
	}
	if (len > 0)   /* a route of no lanes: the pool may not exist yet */
		memcpy(c->pool + c->npool, lanes, (size_t)len * sizeof *lanes);
	c->npool += (size_t)len;
}

/* A link's (or lane's) load, and the trial that last touched it.  Kept
 * by the link's place among those the refinement has routed over
 * (cref.dense_of): a 32^3 torus has 262k lanes where a 4,096-task halo
 * crosses 65k, and the loads the moves touch then stay in the cache.
 * 32 bytes on 32-byte boundaries, so that a record is one cache line's
 * read: with 64-bit stamps (40 bytes) half the records straddled two
 * lines, and the first read of a record was the refinement's largest
 * wait (torus-4096, captured all-to-alls). */
struct link_load {
	double load;
	double pot;              /* its term of the potential (cr_potential),
				    kept with the load: a trial computes the
				    new term only */
	double w;                /* a byte's weight on it (cr_weight) */
	int32_t stamp, sub;      /* cref.trial and cref.sub when last
				    touched (next_stamp) */
};
#define LINK_LOAD_ALIGN 32
_Static_assert(sizeof(struct link_load) == LINK_LOAD_ALIGN,
	       "a link's load is one aligned 32-byte record");

/* Bytes gathered by node, the nodes in the order first seen; a stamp a
 * gathering, so nothing is cleared between (node_sum_reset). */
struct node_sum {
	struct gathered {
		int64_t at;      /* the stamp when gathered */
		double bytes;
	} *node;                 /* per node: one record, one cache miss */
	int32_t *list, n;
	int64_t stamp;
};

/* A move's first-order bound.  The potential is a sum of convex terms,
 * so a link's term rises by at least its slope times its load's change,
 * and a move's change is at least the sum over its messages of bytes
 * times the slopes along their routes (a message's price): where that
 * sum is positive the move cannot lower the potential, and cr_accept
 * would refuse it.  The slopes are taken at a snapshot (each pass's
 * start), so the check is an estimate in between; a node pair's price is
 * summed once a snapshot, when first asked.  16 bytes a node pair (16 MB
 * on 1,024 nodes, for each member of a team). */
struct price_table {
	struct node_sum tn;      /* the moving task's bytes by node */
	double *dq;              /* per node m: its price from the moving
				    task's node less that from the node
				    tried (task_at's) */
	int64_t *dqat;           /* ... the try's stamp when set */
	int64_t qstamp;
	double *tw;              /* the moving task's bytes to each task */
	int64_t *twat;           /* ... gathered at tn's stamp */
	double base;             /* the moving task's bytes priced from
				    its node */
	double *slope;           /* per link index: its term's rise per byte */
	int64_t nslope;          /* links with an index at the snapshot (the
				    others carried nothing then) */
	int64_t slopecap;
	struct pair_price {      /* node pair i * nodes + j: */
		double both;     /* a byte's price, both ways */
		int32_t at;      /* the snapshot it was priced in (one
				    record: one cache miss a look-up) */
	} *pair;
	int32_t epoch;           /* the snapshot's number, from 1 */
};

static int node_sum_init(struct node_sum *ns, int32_t nodes)
{
	ns->node = tp__calloc((size_t)nodes + 1, sizeof *ns->node);
	ns->list = tp__malloc_array((size_t)nodes + 1, sizeof *ns->list);
	ns->n = 0;
	ns->stamp = 1;
	return ns->node && ns->list ? 0 : TP_ENOMEM;
}

static void node_sum_free(struct node_sum *ns)
{
	free(ns->node);
	free(ns->list);
}

/* Empty again: the next gathering. */
static void node_sum_reset(struct node_sum *ns)
{
	ns->stamp++;
	ns->n = 0;
}

static inline void node_sum_add(struct node_sum *ns, int32_t m, double w)
{
	struct gathered *x = &ns->node[m];
	if (x->at != ns->stamp) {
		x->at = ns->stamp;
		x->bytes = 0;
		ns->list[ns->n++] = m;
	}
	x->bytes += w;
}

/* A link's load and potential term before a trial (or sub-trial). */
struct load_was {
	double load, pot;
};

typedef struct cref {
	const gm *c;
	int32_t *map;
	struct link_load *ll;    /* per link routed over, by its dense index */
	int64_t nl;              /* links (or lanes) of the machine */
	int32_t *dense_of;       /* link -> its index in ll (-1: none yet) */
	int64_t nused;           /* links with an index */
	bool lanes;              /* on the time model's fabric */
	int64_t *route;
	int32_t *route32;        /* route as the cache keeps it */
	int cap;
	const int32_t *rt;       /* the last route (cr_route): in route32 or
				    in the cache */
	struct route_cache rc;
	bool over;               /* the current trial's additions took a
				    link past the largest load, or the
				    potential past PHI_RISEN */
	double phi;              /* the potential's change in this trial so
				    far, summed as the loads change */
	/* a task's moves share its edges' removal (cr_improve_task): each
	 * move is a sub-trial, undone back to that removal */
	bool in_sub;
	int32_t sub;             /* sub-trial number */
	int64_t *sl;             /* links it changed */
	struct load_was *sl_old; /* their loads and terms before it */
	int64_t nsl, slcap;
	int64_t *tl;             /* touched links of the current trial */
	struct load_was *tl_old; /* their loads and terms before it */
	int64_t ntl, tlcap;
	int32_t trial;           /* stamps: next_stamp */
	slot_table st;           /* who sits in which slot */
	char *hot;               /* per task: has an edge on a most-loaded link */
	int32_t *cand;           /* candidate nodes of the current task */
	int64_t *nstamp;         /* per node: candidate round when listed */
	int64_t ns;
	double M;                /* the largest link load */
	int64_t nmax;            /* links carrying it */
	double inv_mref;         /* 1 / the largest load at the start: scale of
				    the potential */
	double hot_at;           /* tasks with a message over a link this
				    loaded are tried */
	double dhop;             /* hop-bytes change of the current trial */
	bool keep_hops;          /* refuse moves that raise hop-bytes */
	int64_t moves;
	int64_t routed;          /* messages routed onto the loads (cr_message) */
	double hop_weight;       /* lanes: see gm */
	int64_t *tstamp;         /* per task: node trades' edge counting */
	int64_t ts;
	int32_t *swap_set;       /* the tasks of the two nodes traded */
	int32_t *by_router;      /* nodes in router-coordinate order */
	int32_t *router_pos;     /* node -> its place there */
	int32_t *tcand;          /* a node's trade partners */
	struct node_sum gather;  /* messages by destination node (gather_edge) */
	rounds_guard *rg;        /* the rounds' guard, or NULL */
	int32_t *swap_to;        /* a trade's tasks' nodes after it (rg) */
	int64_t *dist;           /* node pair -> hop distance (-1: not yet),
				    up to ROUTE_DENSE_NODES nodes; NULL:
				    computed each time */
	struct price_table pt;   /* the moves' bounds, where dense (pt.pair
				    set: FILTER_PEERS) */
	bool dry;                /* a trial that would be kept is undone and
				    only told (a team's helper, team_round) */
	const atomic_bool *quit; /* a helper's set-up ends when set (the
				    refinement has: team_free), or NULL */
	struct verdict {         /* the last trial kept (or told, dry) */
		int32_t q, s2;   /* a task's move: to node q, trading
				    places with s2 (-1: a free slot); a
				    node's trade: with node q */
	} found;
} cref;

/* A byte's weight on link (or lane) l: on lanes (the time model's fabric,
 * predict_internal.h) 1 / its bandwidth. */
static double cr_weight(const cref *cr, int64_t l)
{
	return cr->lanes ? 1.0 / tp__fabric_bandwidth(cr->c->a->m, l)
			 : tp__link_weight(cr->c->a->m, l);
}

/* Link l's index in cr->ll, given on first use; -1 for a link out of
 * range (which cr_message refuses). */
static int32_t cr_dense(cref *cr, int64_t l)
{
	if (l < 0 || l >= cr->nl)
		return -1;
	if (cr->dense_of[l] < 0) {
		cr->dense_of[l] = (int32_t)cr->nused;
		cr->ll[cr->nused++].w = cr_weight(cr, l);
	}
	return cr->dense_of[l];
}

/* The hop distance between allocation nodes i and j (ndist), kept: on a
 * tree each is a walk up the switches, and the lane refinement asks for
 * it for every node a moved task talks to (6 % of miniAMR's trace). */
static int64_t cr_dist(const cref *cr, int32_t i, int32_t j)
{
	if (!cr->dist)
		return ndist(cr->c, i, j);
	int64_t *d = &cr->dist[(size_t)i * (size_t)cr->c->nn + (size_t)j];
	if (*d < 0)
		*d = ndist(cr->c, i, j);
	return *d;
}

/* Route between allocation nodes i and j into cr->rt (cached, or in
 * cr->route, grown as needed); returns the length or a negative code. */
static int cr_route(cref *cr, int32_t i, int32_t j)
{
	const struct tp_alloc *a = cr->c->a;
	int64_t key = (int64_t)i * cr->c->nn + j;
	if (cr->rc.dense) {
		struct route_at at = cr->rc.dense[key];
		if (at.off >= 0) {
			cr->rt = at.len ? cr->rc.pool + at.off : cr->route32;
			return at.len;
		}
	} else if (cr->rc.cap) {
		const struct route_ent *e = &cr->rc.e[route_cache_slot(&cr->rc, key)];
		if (e->key == key) {
			cr->rt = e->len ? cr->rc.pool + e->off : cr->route32;
			return e->len;
		}
	}
	for (;;) {
		int n = cr->lanes ? tp__fabric_route(a->m, a->node[i], a->node[j],
						     cr->route, cr->cap)
				  : tp_machine_route(a->m, a->node[i], a->node[j],
						     cr->route, cr->cap);
		if (n >= 0) {
			for (int k = 0; k < n; k++)
				cr->route32[k] = cr_dense(cr, cr->route[k]);
			route_cache_put(&cr->rc, key, cr->route32, n);
			cr->rt = cr->route32;
			return n;
		}
		if (cr->cap >= (1 << 20))
			return n;
		int64_t *nr = realloc(cr->route, sizeof(int64_t) * (size_t)cr->cap * 2);
		if (!nr)
			return TP_ENOMEM;
		cr->route = nr;
		int32_t *nw = realloc(cr->route32, sizeof *nw * (size_t)cr->cap * 2);
		if (!nw)
			return TP_ENOMEM;
		cr->route32 = nw;
		cr->cap *= 2;
	}
}

/* The potential the refinement lowers: sum over the touched links of
 * (load / Mref)^8 (by 1 / Mref: a division a lane was a fifth of the
 * refinement's time).  The eighth power makes the heaviest links dominate, so
 * lowering it relieves the maximum first, yet a move that only lightens
 * links just below the maximum also counts (it makes room). */
static double cr_potential(double load, double inv_mref)
{
	double x = load * inv_mref, x2 = x * x, x4 = x2 * x2;
	return x4 * x4;
}

/* The next trial's (sub = false) or sub-trial's number.  They are
 * 32-bit (link_load): before one would wrap, every link's mark of that
 * kind is cleared and the count starts again, between trials, where no
 * mark is wanted. */
static int32_t next_stamp(cref *cr, bool sub)
{
	int32_t *n = sub ? &cr->sub : &cr->trial;
	if (*n == INT32_MAX) {
		for (int64_t l = 0; l < cr->nused; l++) {
			if (sub)
				cr->ll[l].sub = -1;
			else
				cr->ll[l].stamp = -1;
		}
		*n = 0;
	}
	return ++*n;
}

/* Room for `more` links past `used` in a trial's (or sub-trial's) log of
 * links and their loads before (the caller found too little), grown by
 * doubling. */
static int log_reserve(int64_t **ids, struct load_was **old, int64_t *cap,
		       int64_t used, int64_t more)
{
	int64_t nc = *cap ? *cap : 256;
	while (nc < used + more)
		nc *= 2;
	int64_t *a1 = realloc(*ids, sizeof **ids * (size_t)nc);
	if (!a1)
		return TP_ENOMEM;
	*ids = a1;
	struct load_was *a2 = realloc(*old, sizeof **old * (size_t)nc);
	if (!a2)
		return TP_ENOMEM;
	*old = a2;
	*cap = nc;
	return 0;
}

/* Add sign * bytes of the message from allocation node i to node j to the
 * loads, remembering every link touched in this trial and its load
 * before. */
static int cr_message(cref *cr, int32_t i, int32_t j, double bytes)
{
	int n = cr_route(cr, i, j);
	if (n < 0)
		return n;
	/* the logs' room first: no call in the loop, whose locals then stay
	 * in registers (`over` was stored and reloaded at every lane) */
	if ((cr->ntl + n > cr->tlcap &&
	     log_reserve(&cr->tl, &cr->tl_old, &cr->tlcap, cr->ntl, n)) ||
	    (cr->in_sub && cr->nsl + n > cr->slcap &&
	     log_reserve(&cr->sl, &cr->sl_old, &cr->slcap, cr->nsl, n)))
		return TP_ENOMEM;
	cr->routed++;
	bytes *= 1 + cr->hop_weight * n;
	double past = cr->M + 1e-9 * cr->M;   /* as cr_accept judges it */
	/* the potential summed in a local, in the same order: through cr
	 * the compiler stored and reloaded it at every lane */
	double phi = cr->phi, inv = cr->inv_mref;
	bool over = false, in_sub = cr->in_sub;
	int32_t trial = cr->trial, sub = cr->sub;
	int64_t ntl = cr->ntl, nsl = cr->nsl;
	const int32_t *rt = cr->rt;
	struct link_load *ll = cr->ll;
	int64_t *tl = cr->tl, *sl = cr->sl;
	struct load_was *tl_old = cr->tl_old, *sl_old = cr->sl_old;
	int rc = 0;
	for (int k = 0; k < n; k++) {
		int32_t l = rt[k];
		if (l < 0) {
			rc = TP_EINVAL;
			break;
		}
		struct link_load *x = &ll[l];
		if (x->stamp != trial) {
			x->stamp = trial;
			tl[ntl] = l;
			tl_old[ntl++] = (struct load_was){ x->load, x->pot };
		}
		if (in_sub && x->sub != sub) {
			x->sub = sub;
			sl[nsl] = l;
			sl_old[nsl++] = (struct load_was){ x->load, x->pot };
		}
		x->load += bytes * x->w;
		double pot = cr_potential(x->load, inv);
		phi += pot - x->pot;
		x->pot = pot;
		over |= bytes > 0 && (x->load > past || phi > PHI_RISEN);
	}
	cr->ntl = ntl;
	cr->nsl = nsl;
	cr->phi = phi;
	cr->over |= over;
	return rc;
}

/* The messages gathered by destination node (gather_edge) added to the
 * loads, sign * their bytes from node `from`: both directions, as the
 * metrics route them.  A node's tasks share their routes, and a trace's
 * task talks to several tasks of a node (miniAMR's 512-rank trace on 128
 * nodes of a 4:1 tree: the lane refinement walked every edge's route,
 * 60 % of the map's time).  Stops once past the largest load: the rest
 * only adds. */
static int gather_flush(cref *cr, int32_t from, double sign)
{
	int rc = 0;
	/* their routes' look-ups begun together, not one miss at a time */
	const struct node_sum *ns = &cr->gather;
	for (int32_t k = 0; k < ns->n; k++) {
		int64_t q = ns->list[k];
		route_cache_prefetch(&cr->rc, (int64_t)from * cr->c->nn + q);
		route_cache_prefetch(&cr->rc, q * cr->c->nn + from);
	}
	for (int32_t k = 0; k < ns->n && !rc && !cr->over; k++) {
		int32_t q = ns->list[k];
		double b = sign * ns->node[q].bytes;
		if (cr->keep_hops)
			cr->dhop += b * (double)cr_dist(cr, from, q);
		rc = cr_message(cr, from, q, b);
		if (!rc)
			rc = cr_message(cr, q, from, b);
	}
	node_sum_reset(&cr->gather);
	return rc;
}

/* Edge e's bytes gathered for its far end's node q. */
static inline void gather_edge(cref *cr, int32_t q, int64_t e)
{
	node_sum_add(&cr->gather, q, tp__graph_w(cr->c->g, e));
}

/* Add sign * bytes of each of t's edges off its node, but the one to
 * skip, to the loads. */
static int cr_edges(cref *cr, int32_t t, int32_t skip, double sign)
{
	const struct tp_graph *g = cr->c->g;
	int32_t p = cr->map[t];
	for (int64_t e = g->xadj[t]; e < g->xadj[t + 1]; e++) {
		int32_t u = g->adjncy[e];
		if (u != skip && cr->map[u] != p)
			gather_edge(cr, cr->map[u], e);
	}
	return gather_flush(cr, p, sign);
}

/* Max link load and how many links carry it (within eps). */
static double cr_max(const cref *cr, int64_t *count)
{
	double m = 0.0;
	for (int64_t l = 0; l < cr->nused; l++)
		if (cr->ll[l].load > m)
			m = cr->ll[l].load;
	int64_t n = 0;
	double eps = 1e-9 * m;
	for (int64_t l = 0; l < cr->nused; l++)
		if (m > 0 && cr->ll[l].load >= m - eps)
			n++;
	*count = n;
	return m;
}

/* The slopes taken from the loads now (price_table): at a refinement's
 * start and after each pass, where every team member's loads agree. */
static int prices_snapshot(cref *cr)
{
	struct price_table *pt = &cr->pt;
	if (!pt->pair)
		return 0;
	if (cr->nused > pt->slopecap) {
		int64_t cap = 2 * cr->nused;
		double *n = realloc(pt->slope, sizeof *n * (size_t)cap);
		if (!n)
			return TP_ENOMEM;
		pt->slope = n;
		pt->slopecap = cap;
	}
	if (pt->epoch == INT32_MAX) {
		size_t n = (size_t)cr->c->nn * (size_t)cr->c->nn + 1;
		for (size_t k = 0; k < n; k++)
			pt->pair[k].at = 0;
		pt->epoch = 0;
	}
	pt->epoch++;
	pt->nslope = cr->nused;
	double inv = cr->inv_mref;
	/* d/dbytes of (load * inv)^8, a byte adding w to the load */
	for (int64_t l = 0; l < pt->nslope; l++) {
		double x = cr->ll[l].load * inv, x2 = x * x, x3 = x2 * x;
		pt->slope[l] = 8.0 * x3 * x2 * x2 * inv * cr->ll[l].w;
	}
	return 0;
}

/* After a pass, as every team member takes it (TEAM_MAX_AGAIN): the
 * largest load again, and the bound's slopes from the loads now. */
static int cr_pass_end(cref *cr)
{
	cr->M = cr_max(cr, &cr->nmax);
	return prices_snapshot(cr);
}

/* A byte's price from node i to node j (i != j) at the snapshot; NaN
 * where its route cannot be had (the move is then tried, and says why). */
static __attribute__((noinline)) double one_way(cref *cr, int32_t i, int32_t j)
{
	const struct price_table *pt = &cr->pt;
	int n = cr_route(cr, i, j);
	double sum = n < 0 ? NAN : 0;
	for (int h = 0; h < n; h++) {
		int32_t l = cr->rt[h];
		if (l < 0)
			sum = NAN;
		else if (l < pt->nslope)
			sum += pt->slope[l];
	}
	return sum * (1 + cr->hop_weight * (n > 0 ? n : 0));   /* as cr_message */
}

/* Both ways between nodes i and j, as the loads carry an edge: summed
 * once for the pair, and kept at (i, j) and (j, i), so that one node's
 * prices lie side by side (a try reads a row). */
static inline double both_ways(cref *cr, int32_t i, int32_t j)
{
	if (i == j)
		return 0;
	struct price_table *pt = &cr->pt;
	size_t nn = (size_t)cr->c->nn;
	struct pair_price *x = &pt->pair[(size_t)i * nn + (size_t)j];
	if (x->at != pt->epoch) {
		int32_t lo = i < j ? i : j, hi = i < j ? j : i;
		x->both = one_way(cr, lo, hi) + one_way(cr, hi, lo);
		x->at = pt->epoch;
		pt->pair[(size_t)j * nn + (size_t)i] = *x;
	}
	return x->both;
}

/* t's bytes gathered by node and by peer, and priced from its node p,
 * for move_refused's tries of t. */
static void bound_task(cref *cr, int32_t t, int32_t p)
{
	const struct tp_graph *g = cr->c->g;
	struct price_table *pt = &cr->pt;
	node_sum_reset(&pt->tn);
	for (int64_t e = g->xadj[t]; e < g->xadj[t + 1]; e++) {
		int32_t u = g->adjncy[e];
		double w = tp__graph_w(g, e);
		node_sum_add(&pt->tn, cr->map[u], w);
		if (pt->twat[u] != pt->tn.stamp) {
			pt->twat[u] = pt->tn.stamp;
			pt->tw[u] = 0;
		}
		pt->tw[u] += w;
	}
	pt->base = 0;
	for (int32_t k = 0; k < pt->tn.n; k++) {
		int32_t m = pt->tn.list[k];
		pt->base += pt->tn.node[m].bytes * both_ways(cr, p, m);
	}
}

/* The change in t's bytes' price from its node to q (bound_task's t),
 * once for all of q's tries, which then share their swap partners'
 * differences (dq). */
static double task_at(cref *cr, int32_t q)
{
	struct price_table *pt = &cr->pt;
	pt->qstamp++;
	double d = -pt->base;
	for (int32_t k = 0; k < pt->tn.n; k++) {
		int32_t m = pt->tn.list[k];
		d += pt->tn.node[m].bytes * both_ways(cr, q, m);
	}
	return d;
}

/* Would t's move from p to q (trading places with s2, or -1) raise the
 * potential at first order, at the snapshot's slopes?  at_q: task_at(q).
 * The edge t-s2 joins p and q before and after, and is left out (t's
 * side: s2 on q priced nothing from q, and w(t, s2) from p in the
 * base). */
static double move_bound(cref *cr, int32_t p, int32_t q, double at_q, int32_t t,
			 int32_t s2)
{
	struct price_table *pt = &cr->pt;
	double d = at_q;
	if (s2 < 0)
		return d;
	if (pt->twat[s2] == pt->tn.stamp)
		d += pt->tw[s2] * both_ways(cr, p, q);
	/* s2's edges but t's, from q to p: a node's difference once for
	 * all of q's tasks */
	const struct tp_graph *g = cr->c->g;
	const int32_t *adj = g->adjncy, *map = cr->map;
	for (int64_t e = g->xadj[s2]; e < g->xadj[s2 + 1]; e++) {
		if (adj[e] == t)
			continue;
		int32_t m = map[adj[e]];
		if (pt->dqat[m] != pt->qstamp) {
			pt->dqat[m] = pt->qstamp;
			pt->dq[m] = both_ways(cr, p, m) - both_ways(cr, q, m);
		}
		d += tp__graph_w(g, e) * pt->dq[m];
	}
	return d;
}

static bool move_refused(cref *cr, int32_t p, int32_t q, double at_q, int32_t t,
			 int32_t s2)
{
	return move_bound(cr, p, q, at_q, t, s2) > 0;   /* NaN: tried */
}

/* move_bound as written out, an edge at a time (the audit's reference),
 * and in *scale the sum of its terms' sizes. */
static double move_bound_plain(cref *cr, int32_t p, int32_t q, int32_t t, int32_t s2,
			       double *scale)
{
	const struct tp_graph *g = cr->c->g;
	double d = 0;
	*scale = 0;
	for (int64_t e = g->xadj[t]; e < g->xadj[t + 1]; e++) {
		int32_t u = g->adjncy[e], m = cr->map[u];
		double a = both_ways(cr, q, m), b = both_ways(cr, p, m), w = tp__graph_w(g, e);
		if (u != s2) {
			d += w * (a - b);
			*scale += w * (a + b);
		}
	}
	for (int64_t e = s2 >= 0 ? g->xadj[s2] : 0; s2 >= 0 && e < g->xadj[s2 + 1]; e++) {
		int32_t u = g->adjncy[e], m = cr->map[u];
		double a = both_ways(cr, p, m), b = both_ways(cr, q, m), w = tp__graph_w(g, e);
		if (u != t) {
			d += w * (a - b);
			*scale += w * (a + b);
		}
	}
	return d;
}

static void cref_free(cref *cr)
{
	free(cr->pt.slope);
	free(cr->pt.pair);
	node_sum_free(&cr->pt.tn);
	free(cr->pt.dq);
	free(cr->pt.dqat);
	free(cr->pt.tw);
	free(cr->pt.twat);
	free(cr->ll);
	free(cr->route32);
	free(cr->sl);
	free(cr->sl_old);
	free(cr->route);
	route_cache_free(&cr->rc);
	free(cr->tl);
	free(cr->tl_old);
	tp__slots_free(&cr->st);
	free(cr->hot);
	free(cr->cand);
	free(cr->nstamp);
	free(cr->dense_of);
	free(cr->tstamp);
	free(cr->swap_set);
	free(cr->by_router);
	free(cr->router_pos);
	free(cr->tcand);
	node_sum_free(&cr->gather);
	free(cr->dist);
	free(cr->swap_to);
	tp__rounds_guard_free(cr->rg);
}

/* Allocation nodes by router coordinates, then index: a switch's nodes
 * side by side on trees, dragonflies and blocks (one router coordinate
 * each), a torus' along its last dimension. */
static int cmp_router(const void *x, const void *y, void *arg)
{
	const gm *c = arg;
	int32_t i = *(const int32_t *)x, j = *(const int32_t *)y;
	const int *a = rcoord(c, i), *b = rcoord(c, j);
	for (int d = 0; d < c->nd; d++)
		if (a[d] != b[d])
			return a[d] < b[d] ? -1 : 1;
	return i < j ? -1 : i > j;
}

/* lanes: on the time model's fabric, loads in seconds (bytes /
 * bandwidth), else on the machine's links. */
static int cref_init(cref *cr, const gm *c, int32_t *map, bool lanes)
{
	const struct tp_alloc *a = c->a;
	memset(cr, 0, sizeof *cr);
	cr->c = c;
	cr->map = map;
	cr->nl = lanes ? tp__fabric_lanes(a->m) : tp_machine_link_count(a->m);
	cr->lanes = lanes;
	cr->hop_weight = lanes ? c->hop_weight : 0;
	if (cr->nl >= INT32_MAX)
		return TP_ENOMEM;   /* beyond the route cache's int32_t */
	cr->cap = 64;
	cr->tlcap = 256;
	route_cache_init(&cr->rc, c->nn);
	if (c->nn <= ROUTE_DENSE_NODES) {
		/* without it each distance is computed: slower, the same */
		size_t n = (size_t)c->nn * (size_t)c->nn + 1;
		if ((cr->dist = tp__malloc_array(n, sizeof *cr->dist)))
			for (size_t k = 0; k < n; k++)
				cr->dist[k] = -1;
	}
	if (cr->rc.dense && c->nt > 0 &&
	    c->g->xadj[c->nt] >= (int64_t)FILTER_PEERS * c->nt) {
		size_t n = (size_t)c->nn * (size_t)c->nn + 1;
		cr->pt.pair = tp__calloc(n, sizeof *cr->pt.pair);
		if (!cr->pt.pair || node_sum_init(&cr->pt.tn, c->nn) ||
		    !(cr->pt.dq = tp__malloc_array((size_t)c->nn + 1, sizeof *cr->pt.dq)) ||
		    !(cr->pt.dqat = tp__calloc((size_t)c->nn + 1, sizeof *cr->pt.dqat)) ||
		    !(cr->pt.tw = tp__malloc_array((size_t)c->nt + 1, sizeof *cr->pt.tw)) ||
		    !(cr->pt.twat = tp__calloc((size_t)c->nt + 1, sizeof *cr->pt.twat)))
			return TP_ENOMEM;
	}
	cr->ll = tp__calloc_aligned((size_t)cr->nl + 1, sizeof *cr->ll, LINK_LOAD_ALIGN);
	cr->dense_of = tp__malloc_array((size_t)cr->nl + 1, sizeof *cr->dense_of);
	cr->route32 = tp__malloc_array((size_t)cr->cap, sizeof *cr->route32);
	cr->route = tp__malloc_array((size_t)cr->cap, sizeof(int64_t));
	cr->tl = tp__malloc_array((size_t)cr->tlcap, sizeof(int64_t));
	cr->tl_old = tp__malloc_array((size_t)cr->tlcap, sizeof *cr->tl_old);
	int rc = tp__slots_init(&cr->st, a, map, c->nt);
	cr->hot = tp__calloc((size_t)c->nt + 1, 1);
	cr->cand = tp__malloc_array(REFINE_NODES, sizeof(int32_t));
	cr->nstamp = tp__calloc((size_t)c->nn + 1, sizeof(int64_t));
	int grc = node_sum_init(&cr->gather, c->nn);
	if (rc || !cr->ll || !cr->dense_of || !cr->route32 || !cr->route || !cr->tl ||
	    !cr->tl_old || !cr->hot || !cr->cand || !cr->nstamp || grc)
		return TP_ENOMEM;
	for (int64_t l = 0; l < cr->nl; l++)
		cr->dense_of[l] = -1;
	if (lanes) {
		int32_t most = 0;
		for (int32_t i = 0; i < a->nnodes; i++)
			most = a->slots[i] > most ? a->slots[i] : most;
		cr->tstamp = tp__calloc((size_t)c->nt + 1, sizeof(int64_t));
		cr->swap_set = tp__malloc_array(2 * (size_t)most + 1, sizeof(int32_t));
		cr->swap_to = tp__malloc_array(2 * (size_t)most + 1, sizeof(int32_t));
		cr->by_router = tp__malloc_array((size_t)c->nn + 1, sizeof(int32_t));
		cr->router_pos = tp__malloc_array((size_t)c->nn + 1, sizeof(int32_t));
		cr->tcand = tp__malloc_array(TRADE_NEIGHBOURS + 2 * TRADE_WINDOW,
					     sizeof(int32_t));
		if (!cr->tstamp || !cr->swap_set || !cr->swap_to || !cr->by_router ||
		    !cr->router_pos || !cr->tcand)
			return TP_ENOMEM;
		for (int32_t i = 0; i < c->nn; i++)
			cr->by_router[i] = i;
		qsort_r(cr->by_router, (size_t)c->nn, sizeof(int32_t), cmp_router,
			(void *)c);
		for (int32_t k = 0; k < c->nn; k++)
			cr->router_pos[cr->by_router[k]] = k;
	}
	return 0;
}

/* Link loads of the whole mapping: every message, t to each neighbour. */
/* The loads of every link; TP_ETIME when the budget runs out first (routing
 * every message costs as much as the refinement's first pass). */
static int cr_load_all(cref *cr, double t0, double budget)
{
	const struct tp_graph *g = cr->c->g;
	const int32_t *map = cr->map;
	for (int32_t t = 0; t < cr->c->nt; t++) {
		if ((t & 255) == 255 &&
		    (budget_over(t0, budget) || (cr->quit && atomic_load(cr->quit))))
			return TP_ETIME;
		for (int64_t e = g->xadj[t]; e < g->xadj[t + 1]; e++) {
			int32_t u = g->adjncy[e];
			if (map[u] == map[t])
				continue;
			int n = cr_route(cr, map[t], map[u]);
			if (n < 0)
				return n;
			double b = tp__graph_w(g, e) * (1 + cr->hop_weight * n);
			for (int k = 0; k < n; k++) {
				if (cr->rt[k] < 0)
					return TP_EINVAL;
				struct link_load *x = &cr->ll[cr->rt[k]];
				x->load += b * x->w;
			}
		}
	}
	return 0;
}

/* Mark the tasks with a message across a link loaded at least hot_at
 * (near the maximum: relieving those makes room for the maximum). */
static int cr_mark_hot(cref *cr)
{
	const struct tp_graph *g = cr->c->g;
	const int32_t *map = cr->map;
	char *hot = cr->hot;
	double eps = 1e-9 * cr->M;
	cr->hot_at = HOT_SHARE * cr->M - eps;
	memset(hot, 0, (size_t)cr->c->nt);
	/* each message t -> u (both directions appear, in t's and u's lists) */
	for (int32_t t = 0; t < cr->c->nt; t++)
		for (int64_t e = g->xadj[t]; e < g->xadj[t + 1]; e++) {
			int32_t u = g->adjncy[e];
			if (map[u] == map[t] || (hot[t] && hot[u]))
				continue;
			int n = cr_route(cr, map[t], map[u]);
			if (n < 0)
				return n;
			for (int k = 0; k < n; k++)
				if (cr->rt[k] >= 0 && cr->ll[cr->rt[k]].load >= cr->hot_at) {
					hot[t] = hot[u] = 1;
					break;
				}
		}
	return 0;
}

/* The nodes of t's neighbours other than its own node p, at most
 * REFINE_NODES, into cr->cand; returns how many. */
static int cr_candidates(cref *cr, int32_t t, int32_t p)
{
	const struct tp_graph *g = cr->c->g;
	int ncand = 0;
	cr->ns++;
	cr->nstamp[p] = cr->ns;
	for (int64_t e = g->xadj[t]; e < g->xadj[t + 1] && ncand < REFINE_NODES; e++) {
		int32_t q = cr->map[g->adjncy[e]];
		if (cr->nstamp[q] != cr->ns) {
			cr->nstamp[q] = cr->ns;
			cr->cand[ncand++] = q;
		}
	}
	return ncand;
}

/* The current trial's touched loads judged (ok: its other terms hold):
 * true, and the maximum's count kept up, when no touched link ends above
 * the largest load and the potential drops; the caller then commits it,
 * or else undoes it (cr_undo). */
static bool cr_accept(cref *cr, bool ok)
{
	double eps = 1e-9 * cr->M, dphi = 0;
	int64_t freed = 0, reached = 0;
	for (int64_t k = 0; k < cr->ntl && ok; k++) {
		const struct link_load *x = &cr->ll[cr->tl[k]];
		double now = x->load, was = cr->tl_old[k].load;
		if (now > cr->M + eps)
			ok = false;
		dphi += x->pot - cr->tl_old[k].pot;
		freed += was >= cr->M - eps && now < cr->M - eps;
		reached += was < cr->M - eps && now >= cr->M - eps;
	}
	if (!ok || dphi >= -1e-12)
		return false;
	if (cr->dry)
		return true;     /* told, not made: nothing counted */
	cr->moves++;
	cr->nmax += reached - freed;
	if (cr->nmax <= 0)
		cr->M = cr_max(cr, &cr->nmax);
	return true;
}

/* The current trial's loads put back. */
static void cr_undo(cref *cr)
{
	for (int64_t k = 0; k < cr->ntl; k++) {
		cr->ll[cr->tl[k]].load = cr->tl_old[k].load;
		cr->ll[cr->tl[k]].pot = cr->tl_old[k].pot;
	}
}

/* A sub-trial's changes undone, back to its task's removal (the nbase
 * links touched then). */
static void cr_sub_undo(cref *cr, int64_t nbase)
{
	for (int64_t k = cr->nsl - 1; k >= 0; k--) {
		cr->ll[cr->sl[k]].load = cr->sl_old[k].load;
		cr->ll[cr->sl[k]].pot = cr->sl_old[k].pot;
	}
	for (int64_t k = nbase; k < cr->ntl; k++)
		cr->ll[cr->tl[k]].stamp = -1;
	cr->ntl = nbase;
}

/* A trial begun: a new stamp, nothing touched or summed yet. */
static void cr_trial_begin(cref *cr)
{
	next_stamp(cr, false);
	cr->ntl = 0;
	cr->dhop = 0;
	cr->phi = 0;
	cr->over = false;
}

/* One trial: t, whose edges are already off p (cr_improve_task: the nbase
 * links touched, dhop0 their hop-bytes, phi0 their potential's change),
 * moves to q, into a free slot (s2 < 0) or trading places with s2.  Kept
 * (*kept = true) when no touched link ends above the largest load, the
 * potential drops, and (keep_hops) hop-bytes do not grow; otherwise undone
 * back to t's removal.  So the maximum never grows and the potential
 * falls with every move: the refinement ends.  The loads are summed in
 * the order of a trial that removed t's edges itself: the same result. */
static int cr_try_move(cref *cr, int32_t t, int32_t p, int32_t q, int32_t s2,
		       int64_t nbase, double dhop0, double phi0, bool *kept)
{
	int32_t *map = cr->map;
	int rc = 0;
	*kept = false;
	if (cr->rg) {
		/* checked first: a few routes, where the trial routes hundreds */
		int32_t who[2] = { t, s2 }, to[2] = { q, p };
		if (!tp__rounds_guard_allows(cr->rg, map, who, to, s2 >= 0 ? 2 : 1, &rc))
			return rc;
	}
	next_stamp(cr, true);
	cr->nsl = 0;
	cr->in_sub = true;
	cr->over = false;
	cr->dhop = dhop0;
	cr->phi = phi0;
	/* the edge t-s2 counts once, with t */
	if (s2 >= 0 && (rc = cr_edges(cr, s2, t, -1.0)))
		goto out;
	map[t] = q;
	if (s2 >= 0)
		map[s2] = p;
	if ((rc = cr_edges(cr, t, -1, 1.0)) ||
	    (s2 >= 0 && !cr->over && (rc = cr_edges(cr, s2, t, 1.0))))
		goto out;
	if (cr_accept(cr, !cr->over &&
			  (!cr->keep_hops ||
			   cr->dhop <= 1e-12 * (cr->c->g->total_bytes + 1.0)))) {
		cr->found = (struct verdict){ q, s2 };
		*kept = true;
		if (!cr->dry) {
			tp__slots_move(&cr->st, t, p, q, s2);
			tp__rounds_guard_commit(cr->rg);
			goto out;
		}
	}
	map[t] = p;
	if (s2 >= 0)
		map[s2] = q;
	cr_sub_undo(cr, nbase);
out:
	cr->in_sub = false;
	return rc;
}

/* Try t's moves to the nodes of its neighbours (a free slot first, then
 * swaps with up to REFINE_SWAPS tasks there) until one is kept (*kept; a
 * dry one only told, in cr->found).  t's edges leave p once for all of
 * them. */
/* A task's moves to node q, one a slot place x from moves_from(q) to
 * off[q + 1] - 1: x = off[q] - 1 moves it into a free slot (where q has
 * one), the others swap it with the task there.  The partner of x into
 * *s2 (-1: the free slot); false for an empty slot, not a move. */
static int64_t moves_from(const cref *cr, int32_t q)
{
	return cr->st.used[q] < cr->c->a->slots[q] ? cr->st.off[q] - 1 : cr->st.off[q];
}

static bool move_partner(const cref *cr, int32_t q, int64_t x, int32_t *s2)
{
	*s2 = x < cr->st.off[q] ? -1 : cr->st.slot_task[x];
	return x < cr->st.off[q] || *s2 >= 0;
}

static int cr_improve_task(cref *cr, int32_t t, bool *kept)
{
	const int64_t *off = cr->st.off;
	int32_t p = cr->map[t];
	*kept = false;
	int ncand = cr_candidates(cr, t, p);
	if (ncand == 0)
		return 0;
	if (cr->pt.pair)
		bound_task(cr, t, p);
	cr_trial_begin(cr);
	int rc = cr_edges(cr, t, -1, -1.0);
	if (rc)
		return rc;
	int64_t nbase = cr->ntl;
	double dhop0 = cr->dhop, phi0 = cr->phi;
	bool done_t = false;
	int64_t until = cr->routed + TASK_ROUTES;
	for (int ci = 0; ci < ncand && !done_t && cr->routed < until; ci++) {
		int32_t q = cr->cand[ci];
		int scanned = 0;
		double at_q = cr->pt.pair ? task_at(cr, q) : 0;
		for (int64_t x = moves_from(cr, q);
		     x < off[q + 1] && scanned < REFINE_SWAPS && !done_t &&
		     cr->routed < until; x++) {
			int32_t s2;
			if (!move_partner(cr, q, x, &s2))
				continue;
			scanned++;
			if (cr->pt.pair && move_refused(cr, p, q, at_q, t, s2))
				continue;
			if ((rc = cr_try_move(cr, t, p, q, s2, nbase, dhop0, phi0,
					       &done_t)))
				return rc;
		}
	}
	if (!done_t || cr->dry)
		cr_undo(cr);   /* t's edges back as they were */
	*kept = done_t;
	return 0;
}

/* t's move as another team member told it (v, team_round) made here:
 * t's edges off its node, then that trial, as cr_improve_task made it
 * there, so the loads come out the same to the last bit. */
static int cr_apply_task(cref *cr, int32_t t, struct verdict v)
{
	int32_t p = cr->map[t];
	cr_trial_begin(cr);
	int rc = cr_edges(cr, t, -1, -1.0);
	bool kept = false;
	if (!rc)
		rc = cr_try_move(cr, t, p, v.q, v.s2, cr->ntl, cr->dhop, cr->phi, &kept);
	if (!rc && !kept)
		cr_undo(cr);   /* not kept here either: every member alike */
	return rc;
}

/* Add sign * bytes of the edges of the swap set's n tasks to the loads,
 * each edge once (an edge inside the set with the first of its ends),
 * gathered by node: the set's tasks lie in two runs, one a node. */
static int cr_set_edges(cref *cr, int n, double sign)
{
	const struct tp_graph *g = cr->c->g;
	int64_t mark = ++cr->ts;
	for (int k = 0; k < n; k++) {
		int32_t t = cr->swap_set[k], p = cr->map[t];
		for (int64_t e = g->xadj[t]; e < g->xadj[t + 1]; e++) {
			int32_t u = g->adjncy[e];
			if (cr->tstamp[u] != mark && cr->map[u] != p)
				gather_edge(cr, cr->map[u], e);
		}
		cr->tstamp[t] = mark;
		if (k + 1 == n || cr->map[cr->swap_set[k + 1]] != p) {
			int rc = gather_flush(cr, p, sign);
			if (rc || cr->over)
				return rc;
		}
	}
	return 0;
}

/* The tasks of nodes p and q into cr->swap_set, p's first; returns how
 * many. */
static int trade_set(cref *cr, int32_t p, int32_t q)
{
	const slot_table *st = &cr->st;
	int n = 0;
	for (int64_t x = st->off[p]; x < st->off[p + 1]; x++)
		if (st->slot_task[x] >= 0)
			cr->swap_set[n++] = st->slot_task[x];
	for (int64_t x = st->off[q]; x < st->off[q + 1]; x++)
		if (st->slot_task[x] >= 0)
			cr->swap_set[n++] = st->slot_task[x];
	return n;
}

/* Nodes p and q trade all their tasks, the n of cr->swap_set (trade_set):
 * each goes to the other node's slots from the first. */
static void cr_trade(cref *cr, int32_t p, int32_t q, int n)
{
	slot_table *st = &cr->st;
	int32_t np = st->used[p], nq = st->used[q];
	for (int64_t x = st->off[p]; x < st->off[p + 1]; x++)
		st->slot_task[x] = -1;
	for (int64_t x = st->off[q]; x < st->off[q + 1]; x++)
		st->slot_task[x] = -1;
	for (int k = 0; k < n; k++) {
		int32_t t = cr->swap_set[k], to = k < np ? q : p;
		int32_t i = k < np ? k : k - np;
		st->slot_task[st->off[to] + i] = t;
		st->task_slot[t] = i;
		cr->map[t] = to;
	}
	st->used[p] = nq;
	st->used[q] = np;
}

/* The hop-bytes change of nodes p and q trading their n tasks (in
 * cr->swap_set, p's first): edges between the two nodes keep their
 * length, the others' far ends stay. */
static double trade_hops(const cref *cr, int32_t p, int32_t q, int n)
{
	const struct tp_graph *g = cr->c->g;
	double d = 0;
	for (int k = 0; k < n; k++) {
		int32_t t = cr->swap_set[k], from = cr->map[t], to = from == p ? q : p;
		for (int64_t e = g->xadj[t]; e < g->xadj[t + 1]; e++) {
			int32_t v = cr->map[g->adjncy[e]];
			if (v == p || v == q)
				continue;
			d += tp__graph_w(g, e) * (double)(cr_dist(cr, to, v) -
							   cr_dist(cr, from, v));
		}
	}
	return d;
}

/* One trial of trading nodes p and q whole: kept on the terms of
 * cr_try_move.  It moves a node's traffic to another node's links without
 * splitting its tasks: two nodes on one switch trade at no cost in hops,
 * and which of a switch's nodes holds the traffic decides which of its
 * links (d-mod-k's uplinks, a torus' dimension order) carries it. */
static int cr_try_trade(cref *cr, int32_t p, int32_t q, bool *kept)
{
	const struct tp_alloc *a = cr->c->a;
	slot_table *st = &cr->st;
	*kept = false;
	/* two nodes of one task at most: a swap, the tasks' own moves */
	if (st->used[p] > a->slots[q] || st->used[q] > a->slots[p] ||
	    (st->used[p] <= 1 && st->used[q] <= 1))
		return 0;
	int n = trade_set(cr, p, q), rc;
	/* never at a cost in hop-bytes (a trade moves whole nodes' traffic,
	 * and the potential would let it spread far over idle links): checked
	 * before routing anything, as most partners cost hops */
	if (trade_hops(cr, p, q, n) > 1e-12 * (cr->c->g->total_bytes + 1.0))
		return 0;
	if (cr->rg) {
		for (int j = 0; j < n; j++)
			cr->swap_to[j] = j < st->used[p] ? q : p;
		if (!tp__rounds_guard_allows(cr->rg, cr->map, cr->swap_set, cr->swap_to, n,
					     &rc))
			return rc;
	}
	cr_trial_begin(cr);
	if ((rc = cr_set_edges(cr, n, -1.0)))
		return rc;
	for (int j = 0; j < n; j++)
		cr->map[cr->swap_set[j]] = j < st->used[p] ? q : p;
	if ((rc = cr_set_edges(cr, n, 1.0)))
		return rc;
	bool ok = cr_accept(cr, !cr->over);
	for (int j = 0; j < n; j++)
		cr->map[cr->swap_set[j]] = j < st->used[p] ? p : q;
	if (ok) {
		cr->found = (struct verdict){ q, -1 };
		*kept = true;
	}
	if (ok && !cr->dry) {
		cr_trade(cr, p, q, n);
		tp__rounds_guard_commit(cr->rg);
		*kept = true;
	} else {
		cr_undo(cr);
	}
	return 0;
}

/* Node p's trades, until one is kept: with the nodes of its tasks'
 * neighbours (up to TRADE_NEIGHBOURS), then with up to TRADE_WINDOW nodes
 * either side of it in router order (its switch-mates first). */
static int cr_improve_node(cref *cr, int32_t p, bool *kept_out)
{
	const struct tp_graph *g = cr->c->g;
	const slot_table *st = &cr->st;
	int32_t *cand = cr->tcand;
	int n = 0;
	cr->ns++;
	cr->nstamp[p] = cr->ns;
	for (int64_t x = st->off[p]; x < st->off[p + 1] && n < TRADE_NEIGHBOURS; x++) {
		int32_t t = st->slot_task[x];
		if (t < 0)
			continue;
		for (int64_t e = g->xadj[t]; e < g->xadj[t + 1] && n < TRADE_NEIGHBOURS; e++) {
			int32_t q = cr->map[g->adjncy[e]];
			if (cr->nstamp[q] != cr->ns) {
				cr->nstamp[q] = cr->ns;
				cand[n++] = q;
			}
		}
	}
	int32_t k = cr->router_pos[p];
	for (int32_t w = 1; w <= TRADE_WINDOW; w++)
		for (int side = -1; side <= 1; side += 2) {
			int32_t at = k + side * w;
			if (at < 0 || at >= cr->c->nn)
				continue;
			int32_t q = cr->by_router[at];
			if (cr->nstamp[q] != cr->ns) {
				cr->nstamp[q] = cr->ns;
				cand[n++] = q;
			}
		}
	bool kept = false;
	int64_t until = cr->routed + TASK_ROUTES;
	for (int ci = 0; ci < n && !kept && cr->routed < until; ci++) {
		int rc = cr_try_trade(cr, p, cand[ci], &kept);
		if (rc)
			return rc;
	}
	*kept_out = kept;
	return 0;
}

/* The rounds' guard's hops: a route's hops between allocation nodes, from
 * the route cache. */
static int cr_hops(void *arg, int32_t i, int32_t j)
{
	cref *cr = arg;
	int n = cr_route(cr, i, j);
	return n < 0 ? n : tp__fabric_route_hops(cr->c->m, n);
}

/* A refinement's state from map: the loads of every message, the
 * potential's scale, and the rounds' guard (c: the whole graph, hc: the
 * part refined).  TP_ETIME when the budget ran out first. */
static int cref_start(cref *cr, const gm *c, const gm *hc, const tp_graphmap_opts *o,
		      int32_t *map, bool lanes, double t0, double budget,
		      const atomic_bool *quit)
{
	int rc = cref_init(cr, hc, map, lanes);
	cr->quit = quit;
	if (!rc)
		rc = cr_load_all(cr, t0, budget);
	if (rc)
		return rc;
	cr->M = cr_max(cr, &cr->nmax);
	cr->inv_mref = 1.0 / cr->M;
	for (int64_t l = 0; l < cr->nused; l++)
		cr->ll[l].pot = cr_potential(cr->ll[l].load, cr->inv_mref);
	cr->keep_hops = o->congestion_keep_hops;
	if ((rc = prices_snapshot(cr)))
		return rc;
	/* on the whole graph: the heavy part leaves the rounds' few bytes out */
	if (lanes && c->rounds_guard && c->m->fab.hop_lat > 0 &&
	    tp__machine_rails(c->m) <= 1)
		rc = tp__rounds_guard_new(c->g, map, cr_hops, cr, &cr->rg);
	return rc;
}

/* ---- a refinement's team ----
 *
 * Where a refinement runs alone, its next few items (tasks, or nodes to
 * trade) are tried side by side, each by a helper on its own copy of the
 * state, and taken in order: the first whose move is kept is made, the
 * items before it moved nothing, and the tries after it are made again
 * from the new state.  So the moves are those of one thread, in the same
 * order, on any number of helpers.  The moves made are logged, and each
 * helper makes them again from the log before its next try, rather than
 * copying loads: in the order cr_improve_task made them, so that the
 * loads agree to the last bit.  On a captured all-to-all most tries keep
 * nothing (fftMPI's 512-rank trace on a torus: 20 to 170 moves a pass of
 * 512 tasks), and the best's lane refinement had run alone, one CPU idle,
 * for a third of the map's time.  Where an item's try is short (a halo's
 * task: a microsecond) the helpers' wake-ups cost more than they save,
 * and the items are tried here alone (TEAM_MIN_US) while the log grows;
 * so they are while the helpers set up their state (routing every
 * message, as long as a pass on a sparse graph). */
#define TEAM_MAX 8           /* members at most: each holds its own loads
				and route cache (up to 24 MB on 1,024
				nodes, and 16 more for the moves' bounds),
				and a round keeps one move */
#define TEAM_SPIN 2000       /* polls before a member sleeps: a round is
				tens to hundreds of microseconds, and a
				condition variable's wake-up costs tens */
#define TEAM_MIN_US 8.0      /* an item's try, on average, past which
				the helpers try items too: a round's
				wake-ups cost a few microseconds */
#define TEAM_AHEAD 4         /* a pass's tasks a helper may try ahead of
				the one decided, each (team_tasks) */

enum { TEAM_TASKS, TEAM_NODES, TEAM_MAX_AGAIN, TEAM_STOP, TEAM_WINDOW };

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

/* A logged step: a move made (kind TEAM_TASKS or TEAM_NODES, item, v),
 * or the largest load taken again after a pass (TEAM_MAX_AGAIN). */
struct team_ev {
	int kind;
	int32_t item;
	struct verdict v;
};

/* The log in chunks that never move: a helper that joins late reads it
 * while it grows. */
#define LOG_CHUNK_BITS 12
#define LOG_CHUNK (1 << LOG_CHUNK_BITS)
#define LOG_CHUNKS (1 << 14)

struct team;

/* A pass's task tried ahead by a helper (team_tasks): its verdict on the
 * loads after the first `at` steps of the log.  Written by one helper at
 * a time (owner), and only with a later `at` than it holds: the one the
 * decider reads at the log's length is never written over. */
struct team_slot {
	atomic_llong busy_at;  /* a helper tries it after this many steps */
	atomic_llong done_at;  /* its verdict is after this many (-1: none) */
	atomic_int owner;      /* a helper writing it (w), 0: none */
	atomic_int rc;
	atomic_bool kept;
	atomic_int q, s2;      /* the verdict */
};

struct team_member {
	struct team *tm;
	int w;                 /* its item in a round: 1 .. */
	cref cr;
	int32_t *map;
	pthread_t th;
	int64_t pos;           /* log steps made here */
	bool ready;            /* set up (under the team's mu) */
	int rc;                /* its start's, then its try's code */
	bool kept;
	struct verdict v;
};

struct team {
	const gm *c, *hc;
	const tp_graphmap_opts *o;
	bool lanes;
	int32_t *start;        /* the map the refinement began from */
	int n;                 /* helpers started (under mu) */
	int borrowed;          /* of them, CPUs taken from c->lender */
	struct team_member m[TEAM_MAX - 1];
	pthread_mutex_t mu;
	pthread_cond_t go, done;
	atomic_llong gen;      /* rounds posted */
	atomic_bool quit;      /* the refinement has ended */
	atomic_int pending;    /* helpers not done with the round */
	struct team_ev *chunk[LOG_CHUNKS];
	atomic_llong nlog;     /* steps logged (written here alone) */
	double us;             /* an item's try here, a running mean */
	int ready;             /* helpers 1 .. ready set up without fault */
	/* the round (under mu) */
	int kind;
	int engaged;           /* helpers 1 .. engaged take part */
	int32_t item[TEAM_MAX];
	/* a pass's tasks (TEAM_WINDOW, team_tasks): helpers take them in
	 * order, ahead of the one the refinement decides (at) */
	const int32_t *win;
	int32_t nwin;
	struct team_slot *slot; /* per place in win (nt of them) */
	atomic_int claim;      /* the next place a helper may take */
	atomic_int at;         /* the place being decided */
	atomic_bool open;
	atomic_int inside;     /* helpers reading win or slot */
	atomic_int ahead;      /* how far past at they may take */
};

static void team_wait_done(struct team *tm)
{
	for (int i = 0; i < TEAM_SPIN && atomic_load(&tm->pending) > 0; i++)
		cpu_relax();
	pthread_mutex_lock(&tm->mu);
	while (atomic_load(&tm->pending) > 0)
		pthread_cond_wait(&tm->done, &tm->mu);
	pthread_mutex_unlock(&tm->mu);
}

static void team_member_done(struct team *tm)
{
	pthread_mutex_lock(&tm->mu);
	if (atomic_fetch_sub(&tm->pending, 1) == 1)
		pthread_cond_signal(&tm->done);
	pthread_mutex_unlock(&tm->mu);
}

/* A round posted to helpers 1 .. k-1: items[1 ..] of kind (TEAM_STOP:
 * none, every helper ends). */
static void team_post(struct team *tm, int kind, const int32_t *items, int k)
{
	pthread_mutex_lock(&tm->mu);
	tm->kind = kind;
	if (k > 0)
		memcpy(tm->item, items, sizeof *items * (size_t)k);
	int engaged = k > 1 ? k - 1 : 0;
	tm->engaged = engaged;
	atomic_store(&tm->pending, engaged);
	atomic_fetch_add(&tm->gen, 1);
	pthread_cond_broadcast(&tm->go);
	pthread_mutex_unlock(&tm->mu);
}

/* A step logged; false when out of memory (or past the log's room). */
static bool team_log(struct team *tm, int kind, int32_t item, struct verdict v)
{
	long long n = atomic_load(&tm->nlog);
	size_t c = (size_t)(n >> LOG_CHUNK_BITS);
	if (c >= LOG_CHUNKS)
		return false;
	if (!tm->chunk[c] &&
	    !(tm->chunk[c] = malloc(sizeof(struct team_ev) * LOG_CHUNK)))
		return false;
	tm->chunk[c][n & (LOG_CHUNK - 1)] = (struct team_ev){ kind, item, v };
	atomic_store(&tm->nlog, n + 1);   /* published after it is written */
	return true;
}

/* Make the move of item (a task, or a node to trade) that v tells. */
static int cr_apply(cref *cr, int kind, int32_t item, struct verdict v)
{
	bool dry = cr->dry, kept;
	cr->dry = false;
	int rc = kind == TEAM_TASKS ? cr_apply_task(cr, item, v)
				    : cr_try_trade(cr, item, v.q, &kept);
	cr->dry = dry;
	return rc;
}

/* Try item (a task, or a node's trades): *kept, and its move in
 * cr->found. */
static int cr_try_item(cref *cr, int kind, int32_t item, bool *kept)
{
	return kind == TEAM_TASKS ? cr_improve_task(cr, item, kept)
				  : cr_improve_node(cr, item, kept);
}

/* The log's steps not yet made by me, up to what it holds now. */
static int team_catch_up(struct team_member *me)
{
	struct team *tm = me->tm;
	long long n = atomic_load(&tm->nlog);
	int rc = 0;
	for (; !rc && me->pos < n; me->pos++) {
		if ((me->pos & 255) == 0 && atomic_load(&tm->quit))
			return TP_ETIME;
		const struct team_ev *e = &tm->chunk[me->pos >> LOG_CHUNK_BITS]
						    [me->pos & (LOG_CHUNK - 1)];
		rc = e->kind == TEAM_MAX_AGAIN ? cr_pass_end(&me->cr)
					       : cr_apply(&me->cr, e->kind, e->item, e->v);
	}
	return rc;
}

/* Verdict for place i of the window, tried after `at` log steps,
 * published unless a later one is there. */
static void slot_publish(struct team *tm, int i, long long at, int rc, bool kept,
			 struct verdict v, int w)
{
	struct team_slot *sl = &tm->slot[i];
	int free_ = 0;
	while (!atomic_compare_exchange_weak(&sl->owner, &free_, w)) {
		free_ = 0;
		cpu_relax();
	}
	if (atomic_load(&sl->done_at) < at) {
		atomic_store_explicit(&sl->rc, rc, memory_order_relaxed);
		atomic_store_explicit(&sl->kept, kept, memory_order_relaxed);
		atomic_store_explicit(&sl->q, v.q, memory_order_relaxed);
		atomic_store_explicit(&sl->s2, v.s2, memory_order_relaxed);
		atomic_store(&sl->done_at, at);
	}
	atomic_store(&sl->owner, 0);
}

/* A wait's pause: polls first, then the CPU given up (on a busy machine
 * the member waited for may need it). */
static void team_pause(int spins)
{
	if (spins < TEAM_SPIN)
		cpu_relax();
	else
		sched_yield();
}

/* The next place of the window not taken, within tm->ahead of the one
 * being decided, taken; -1 for none. */
static int team_claim(struct team *tm)
{
	int c = atomic_load(&tm->claim);
	int lim = atomic_load(&tm->at) + 1 + atomic_load(&tm->ahead);
	if (c >= tm->nwin || c >= lim || !atomic_compare_exchange_strong(&tm->claim, &c, c + 1))
		return -1;
	return c;
}

/* Place c of the window tried on cr's loads (after `at` log steps) without
 * making its move, and its verdict published (w: the writer). */
static int team_try_ahead(struct team *tm, cref *cr, int c, long long at, int w)
{
	atomic_store(&tm->slot[c].busy_at, at);
	bool dry = cr->dry, kept = false;
	cr->dry = true;
	int rc = cr_try_item(cr, TEAM_TASKS, tm->win[c], &kept);
	cr->dry = dry;
	slot_publish(tm, c, at, rc, kept, cr->found, w);
	return rc;
}

/* A helper's share of a window: the next place not taken, tried on the
 * loads after every step logged so far, until the window closes. */
static void team_window(struct team_member *me)
{
	struct team *tm = me->tm;
	atomic_fetch_add(&tm->inside, 1);
	int spins = 0;
	while (atomic_load(&tm->open) && !me->rc) {
		int c = team_claim(tm);
		if (c < 0) {
			team_pause(++spins);   /* the decider is behind */
			continue;
		}
		spins = 0;
		int rc = team_catch_up(me);
		if (!rc)
			rc = team_try_ahead(tm, &me->cr, c, me->pos, me->w);
		me->rc = rc;
	}
	atomic_fetch_sub(&tm->inside, 1);
}

static void *team_helper(void *arg)
{
	struct team_member *me = arg;
	struct team *tm = me->tm;
	me->rc = cref_start(&me->cr, tm->c, tm->hc, tm->o, me->map, tm->lanes, 0, 0,
			    &tm->quit);
	me->cr.dry = true;
	/* one that joins late first makes the moves made so far */
	while (!me->rc && me->pos < atomic_load(&tm->nlog))
		me->rc = team_catch_up(me);
	pthread_mutex_lock(&tm->mu);
	me->ready = true;
	/* the helpers before me set up too: the ones rounds may engage */
	while (tm->ready < tm->n && tm->m[tm->ready].ready && !tm->m[tm->ready].rc)
		tm->ready++;
	long long seen = atomic_load(&tm->gen);
	bool stop = tm->kind == TEAM_STOP;   /* ended while set up */
	bool window = tm->kind == TEAM_WINDOW;   /* one is open: joined */
	pthread_mutex_unlock(&tm->mu);
	if (window && !me->rc)
		team_window(me);
	for (; !stop;) {
		for (int i = 0; i < TEAM_SPIN && atomic_load(&tm->gen) == seen; i++)
			cpu_relax();
		pthread_mutex_lock(&tm->mu);
		while (atomic_load(&tm->gen) == seen)
			pthread_cond_wait(&tm->go, &tm->mu);
		seen = atomic_load(&tm->gen);
		/* the round read under mu: one this helper takes no part in
		 * may be followed by the next at once */
		bool in = me->w <= tm->engaged;
		int kind = tm->kind;
		int32_t item = in ? tm->item[me->w] : -1;
		pthread_mutex_unlock(&tm->mu);
		if (kind == TEAM_STOP)
			break;
		if (kind == TEAM_WINDOW) {
			if (!me->rc)
				team_window(me);
			continue;
		}
		if (!in)
			continue;
		int rc = me->rc;
		if (!rc)
			rc = team_catch_up(me);
		me->kept = false;
		if (!rc)
			rc = cr_try_item(&me->cr, kind, item, &me->kept);
		me->v = me->cr.found;
		me->rc = rc;
		team_member_done(tm);
	}
	return NULL;
}

static void team_free(struct team *tm)
{
	if (!tm)
		return;
	atomic_store(&tm->quit, true);
	team_post(tm, TEAM_STOP, NULL, 0);
	for (int i = 0; i < tm->n; i++) {
		pthread_join(tm->m[i].th, NULL);
		cref_free(&tm->m[i].cr);
		free(tm->m[i].map);
	}
	tp__lender_give(tm->c->lender, tm->borrowed);
	for (int c = 0; c < LOG_CHUNKS && tm->chunk[c]; c++)
		free(tm->chunk[c]);
	free(tm->slot);
	free(tm->start);
	pthread_cond_destroy(&tm->go);
	pthread_cond_destroy(&tm->done);
	pthread_mutex_destroy(&tm->mu);
	free(tm);
}

/* One more helper, setting up its state from the start and the moves
 * logged since, on its own thread; false when it could not start. */
static bool team_add(struct team *tm)
{
	if (tm->n >= TEAM_MAX - 1)
		return false;
	struct team_member *me = &tm->m[tm->n];
	memset(me, 0, sizeof *me);
	me->tm = tm;
	me->w = tm->n + 1;
	size_t bytes = sizeof *tm->start * (size_t)tm->c->nt;
	if (!(me->map = malloc(bytes + 1)))
		return false;
	memcpy(me->map, tm->start, bytes);
	/* under mu: a helper counts the ready ones among tm->n */
	pthread_mutex_lock(&tm->mu);
	bool ok = !pthread_create(&me->th, NULL, team_helper, me);
	tm->n += ok;
	pthread_mutex_unlock(&tm->mu);
	if (!ok)
		free(me->map);
	return ok;
}

/* A team for the refinement of map, with `helpers` helpers now and
 * those c->lender lends later; NULL when it could not be set up (the
 * refinement then runs alone: the same result). */
static struct team *team_new(const gm *c, const gm *hc, const tp_graphmap_opts *o,
			     const int32_t *map, bool lanes, int helpers)
{
	struct team *tm = calloc(1, sizeof *tm);
	if (!tm)
		return NULL;
	tm->c = c;
	tm->hc = hc;
	tm->o = o;
	tm->lanes = lanes;
	size_t bytes = sizeof *map * (size_t)c->nt;
	if (!(tm->start = malloc(bytes + 1)) || pthread_mutex_init(&tm->mu, NULL)) {
		free(tm->start);
		free(tm);
		return NULL;
	}
	memcpy(tm->start, map, bytes);
	pthread_cond_init(&tm->go, NULL);
	pthread_cond_init(&tm->done, NULL);
	while (tm->n < helpers && team_add(tm))
		;
	return tm;
}

/* One more helper where a CPU is lent and the team has room: whether one
 * joined (a CPU it could not use is given back). */
static bool team_borrow(struct team *tm)
{
	if (tm->n >= TEAM_MAX - 1 || !tp__lender_take(tm->c->lender))
		return false;
	if (team_add(tm)) {
		tm->borrowed++;
		return true;
	}
	tp__lender_give(tm->c->lender, 1);
	return false;
}

/* An item's try took since t0 (ms): the running mean of the tries (us). */
static void team_timed(struct team *tm, double t0)
{
	tm->us += 0.125 * (1000 * (tp__now_ms() - t0) - tm->us);
}

/* How many items the next round tries: the set-up helpers' too where an
 * item's try is long enough to pay for their wake-ups, and then one more
 * helper where a CPU is lent. */
static int team_width(struct team *tm)
{
	if (!tm || tm->us < TEAM_MIN_US)
		return 1;
	team_borrow(tm);
	pthread_mutex_lock(&tm->mu);
	int ready = tm->ready;
	pthread_mutex_unlock(&tm->mu);
	return 1 + ready;
}

/* One round: items[0..k) tried side by side, items[0] here (cr), the
 * others by the helpers (k > 1); the first kept is made here and logged
 * for them.  *first: its place, -1 for none. */
static int team_round(struct team *tm, cref *cr, int kind, const int32_t *items, int k,
		      int *first)
{
	*first = -1;
	if (k > 1)
		team_post(tm, kind, items, k);
	bool kept = false;
	double t = tm ? tp__now_ms() : 0;
	int rc = cr_try_item(cr, kind, items[0], &kept);
	if (!tm)
		return rc;
	team_timed(tm, t);
	if (k > 1)
		team_wait_done(tm);
	if (rc)
		return rc;
	if (kept) {
		*first = 0;
	} else {
		for (int w = 1; w < k && *first < 0; w++) {
			const struct team_member *me = &tm->m[w - 1];
			if (me->rc)
				return me->rc;
			if (me->kept) {
				*first = w;
				if ((rc = cr_apply(cr, kind, items[w], me->v)))
					return rc;
			}
		}
	}
	if (*first >= 0 &&
	    !team_log(tm, kind, items[*first], *first ? tm->m[*first - 1].v : cr->found))
		return TP_ENOMEM;
	return 0;
}

/* A pass's tasks (hot, in order) decided here one by one, as
 * team_round's would be, while the helpers try the next ones ahead, each
 * on the loads after every move logged when it began: a task's verdict
 * made there after as many moves as made here is the one this thread
 * would reach (the same loads, to the last bit), and is taken; one made
 * before the last move is tried again here.  Rounds in lockstep kept both
 * CPUs of a team of two no faster than one: the helper caught up with
 * each move before its try, while the decider waited (fftMPI's 512-rank
 * trace on a torus, its lane refinement 700 ms either way; 510 ms
 * so).  The decider tries ahead too while a helper tries the task it
 * waits for.  *over: stopped by the budget or the stop flag. */
static int team_tasks(struct team *tm, cref *cr, const gm *c, const tp_graphmap_opts *o,
		      double t0, const int32_t *win, int32_t nwin, bool *over)
{
	*over = false;
	if (!tm->slot && !(tm->slot = tp__malloc_array((size_t)c->nt + 1, sizeof *tm->slot)))
		return TP_ENOMEM;
	for (int32_t k = 0; k < nwin; k++) {
		atomic_init(&tm->slot[k].busy_at, -1);
		atomic_init(&tm->slot[k].done_at, -1);
		atomic_init(&tm->slot[k].owner, 0);
	}
	pthread_mutex_lock(&tm->mu);
	tm->win = win;
	tm->nwin = nwin;
	atomic_store(&tm->ahead, TEAM_AHEAD * (tm->n > 0 ? tm->n : 1));
	atomic_store(&tm->at, 0);
	atomic_store(&tm->claim, 1);
	atomic_store(&tm->open, true);
	pthread_mutex_unlock(&tm->mu);
	team_post(tm, TEAM_WINDOW, NULL, 0);
	int rc = 0;
	for (int32_t k = 0; k < nwin && cr->M > 0 && !rc; k++) {
		if (refine_over(c, t0, o->time_budget_ms)) {
			*over = true;
			break;
		}
		atomic_store(&tm->at, k);
		/* a CPU lent meanwhile: one more helper, who joins */
		if (team_borrow(tm))
			atomic_store(&tm->ahead, TEAM_AHEAD * tm->n);
		/* not to be taken by a helper from now on */
		int cl = atomic_load(&tm->claim);
		while (cl <= k && !atomic_compare_exchange_weak(&tm->claim, &cl, k + 1))
			;
		long long now = atomic_load(&tm->nlog);
		struct team_slot *sl = &tm->slot[k];
		bool told = false, kept = false;
		struct verdict v = { 0 };
		for (int spins = 0; !rc; spins++) {
			if (atomic_load(&sl->owner) == 0 && atomic_load(&sl->done_at) == now) {
				int src = atomic_load_explicit(&sl->rc, memory_order_relaxed);
				kept = atomic_load_explicit(&sl->kept, memory_order_relaxed);
				v.q = atomic_load_explicit(&sl->q, memory_order_relaxed);
				v.s2 = atomic_load_explicit(&sl->s2, memory_order_relaxed);
				/* still that one (a later one is never written) */
				told = src == 0 && atomic_load(&sl->owner) == 0 &&
				       atomic_load(&sl->done_at) == now;
				break;
			}
			if (atomic_load(&sl->busy_at) != now)
				break;   /* not being tried on these loads */
			/* a helper tries it: meanwhile a later one, told as a
			 * helper tells it (on these loads, which are the
			 * ones it will be decided on unless k moves) */
			int a = team_claim(tm);
			if (a >= 0) {
				if (team_try_ahead(tm, cr, a, now, TEAM_MAX) == TP_ENOMEM)
					rc = TP_ENOMEM;
				spins = 0;
				continue;
			}
			team_pause(spins);
		}
		if (rc)
			break;
		if (told) {
			if (c->told)
				++*c->told;
			if (kept)
				rc = cr_apply(cr, TEAM_TASKS, win[k], v);
		} else {
			double t = tp__now_ms();
			rc = cr_try_item(cr, TEAM_TASKS, win[k], &kept);
			team_timed(tm, t);
			v = cr->found;
		}
		if (!rc && kept) {
			if (!team_log(tm, TEAM_TASKS, win[k], v))
				rc = TP_ENOMEM;
			/* those taken past it were tried on loads now gone */
			atomic_store(&tm->claim, k + 1);
		}
	}
	atomic_store(&tm->open, false);
	while (atomic_load(&tm->inside) > 0)
		cpu_relax();
	return rc;
}

/* Does node i hold a task on a busy lane (cr_mark_hot)? */
static bool node_busy(const cref *cr, int32_t i)
{
	for (int64_t x = cr->st.off[i]; x < cr->st.off[i + 1]; x++)
		if (cr->st.slot_task[x] >= 0 && cr->hot[cr->st.slot_task[x]])
			return true;
	return false;
}

/* Congestion refinement: passes over the tasks with a message on a link
 * loaded near the maximum, moving each where that lowers the potential
 * (cr_potential) without raising the maximum; stops when a pass moves
 * nothing (on lanes: few, LANES_TAIL_SHARE) or the budget runs out. */
static int refine_cong_common(const gm *c, const tp_graphmap_opts *o,
			      int32_t *map, int64_t *moves_out, double t0,
			      bool lanes)
{
	cref cr;
	/* A weighted graph (a trace's) is refined on its heavy part, each
	 * task's messages heaviest first (graph_heavy.c): its light pairs cost
	 * most of the moves' time and move no load, and a task's candidate
	 * nodes are then those of its heaviest peers. */
	struct tp_graph heavy = { 0 };
	gm hc = *c;
	struct team *tm = NULL;
	int32_t *win = NULL;     /* a pass's tasks (team_tasks) */
	memset(&cr, 0, sizeof cr);
	if (c->g->weights) {
		int hr = tp__graph_heavy_view(c->g, REFINE_HEAVY_SHARE, &heavy);
		if (hr)
			return hr;
		hc.g = &heavy;
	}
	int rc = cref_start(&cr, c, &hc, o, map, lanes, t0, o->time_budget_ms, c->stop);
	if (rc == TP_ETIME) {
		rc = 0;   /* nothing moved yet: the map stands as it was */
		goto out;
	}
	if (rc)
		goto out;
	int helpers = c->link_threads - 1;
	helpers = helpers > TEAM_MAX - 1 ? TEAM_MAX - 1 : helpers;
	if ((helpers > 0 || c->lender) && cr.M > 0)
		tm = team_new(c, &hc, o, map, lanes, helpers);
	int32_t items[TEAM_MAX];
	for (int pass = 0; pass < o->refine_passes && cr.M > 0; pass++) {
		if ((rc = cr_mark_hot(&cr)))
			goto out;
		int64_t before = cr.moves, nmax_was = cr.nmax;
		double m_was = cr.M;
		int first;
		for (int32_t t = 0; t < c->nt && cr.M > 0;) {
			/* once the helpers are set up and the tries long
			 * enough, the rest of the pass with them trying ahead */
			if (team_width(tm) > 1) {
				int32_t nwin = 0;
				bool over;
				if (!win && !(win = tp__malloc_array((size_t)c->nt + 1,
								     sizeof *win))) {
					rc = TP_ENOMEM;
					goto out;
				}
				for (; t < c->nt; t++)
					if (cr.hot[t])
						win[nwin++] = t;
				if ((rc = team_tasks(tm, &cr, c, o, t0, win, nwin, &over)))
					goto out;
				if (over)
					goto done;
				break;
			}
			for (; t < c->nt && !cr.hot[t]; t++)
				;
			if (t == c->nt)
				break;
			if (refine_over(c, t0, o->time_budget_ms))
				goto done;
			if ((rc = team_round(tm, &cr, TEAM_TASKS, &t, 1, &first)))
				goto out;
			t++;
		}
		/* then whole nodes holding a task on a busy lane */
		for (int32_t i = 0; cr.swap_set && i < c->nn && cr.M > 0;) {
			int k = 0, width = team_width(tm);
			for (; i < c->nn && k < width; i++)
				if (node_busy(&cr, i))
					items[k++] = i;
			if (k == 0)
				break;
			if (refine_over(c, t0, o->time_budget_ms))
				goto done;
			if ((rc = team_round(tm, &cr, TEAM_NODES, items, k, &first)))
				goto out;
			if (first >= 0)
				i = items[first] + 1;
		}
		if (cr.moves == before ||
		    ((lanes || cr.keep_hops) &&
		     (double)(cr.moves - before) < LANES_TAIL_SHARE * (double)cr.moves))
			break;
		if ((rc = cr_pass_end(&cr)))
			goto out;
		if (tm && !team_log(tm, TEAM_MAX_AGAIN, -1, cr.found)) {
			rc = TP_ENOMEM;
			goto out;
		}
		/* under auto's rule the busiest link breaks ties between maps
		 * of the same hop-bytes: a pass that left it, and the number
		 * of links carrying it, as they were did nothing for that.
		 * On captured all-to-alls every pass after the first was
		 * such (fftMPI's 512-rank trace on a 4:1 tree: 0.8 s in two
		 * refinements, for maps no candidate kept) */
		if (!lanes && cr.keep_hops && cr.M >= m_was && cr.nmax >= nmax_was)
			break;
	}
done:
	if (moves_out)
		*moves_out = cr.moves;
out:
	team_free(tm);
	free(win);
	cref_free(&cr);
	tp__graph_view_free(&heavy);
	return rc;
}

/* Every move the refinement would try from map (each task to each of its
 * candidate nodes, into a free slot or trading places), checked first by
 * the first-order bound and then tried in full: n[0] counts those the
 * bound refuses, n[1] those of them the full try would keep (none: the
 * bound holds at the snapshot), n[2] the bounds apart from the same sum
 * written out an edge at a time (none but for rounding).  For the tests;
 * TP_EINVAL where the graph is too sparse for the bound (FILTER_PEERS). */
int tp__refine_bound_audit(const gm *c, const int32_t *map, bool lanes, int64_t n[3])
{
	tp_graphmap_opts o;
	tp_graphmap_opts_default(&o);
	o.congestion_keep_hops = false;
	n[0] = n[1] = n[2] = 0;
	int32_t *m = tp__malloc_array((size_t)c->nt + 1, sizeof *m);
	if (!m)
		return TP_ENOMEM;
	memcpy(m, map, sizeof *m * (size_t)c->nt);
	cref cr;
	int rc = cref_start(&cr, c, c, &o, m, lanes, 0, 0, NULL);
	if (!rc && !cr.pt.pair)
		rc = TP_EINVAL;
	cr.dry = true;
	const int64_t *off = cr.st.off;
	for (int32_t t = 0; !rc && t < c->nt; t++) {
		int32_t p = m[t];
		int ncand = cr_candidates(&cr, t, p);
		bound_task(&cr, t, p);
		cr_trial_begin(&cr);
		if ((rc = cr_edges(&cr, t, -1, -1.0)))
			break;
		int64_t nbase = cr.ntl;
		double dhop0 = cr.dhop, phi0 = cr.phi;
		for (int ci = 0; !rc && ci < ncand; ci++) {
			int32_t q = cr.cand[ci];
			double at_q = task_at(&cr, q);
			for (int64_t x = moves_from(&cr, q); !rc && x < off[q + 1]; x++) {
				int32_t s2;
				if (!move_partner(&cr, q, x, &s2))
					continue;
				double d = move_bound(&cr, p, q, at_q, t, s2);
				double scale, ref = move_bound_plain(&cr, p, q, t, s2, &scale);
				bool no = d > 0, kept = false;
				rc = cr_try_move(&cr, t, p, q, s2, nbase, dhop0, phi0, &kept);
				n[0] += no;
				n[1] += no && kept;
				n[2] += !(fabs(d - ref) <= 1e-9 * scale);
			}
		}
		cr_undo(&cr);
	}
	cref_free(&cr);
	free(m);
	return rc;
}

int tp__refine_cong_run(const gm *c, const tp_graphmap_opts *o,
			   int32_t *map, int64_t *moves_out, double t0)
{
	return refine_cong_common(c, o, map, moves_out, t0, false);
}

/* The same on the time model's lanes: the busiest lane's seconds, where
 * the exchange waits (auto's refinement by predicted time). */
int tp__refine_lanes_run(const gm *c, const tp_graphmap_opts *o,
			    int32_t *map, int64_t *moves_out, double t0)
{
	return refine_cong_common(c, o, map, moves_out, t0, true);
}
