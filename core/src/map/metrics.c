/* topoplace — metrics that judge a mapping (definitions in topoplace/metrics.h).
 *
 * Why these two: hop-bytes (bytes x hops over the undirected edges) is what
 * every mapper minimises, and divided by the total bytes it is Scotch gmtst's
 * CommExpan (the unit tests compare both to 1e-6); the largest link load under
 * the network's routing model catches what hop-bytes averages away, many
 * short routes over one link.  Links are full duplex (Scotch's and SimGrid's
 * model): each direction is a link id of its own (network.h), and both
 * directions of every edge are routed, u -> v and v -> u, each carrying the
 * edge's bytes (a symmetric exchange, as in a halo).
 *
 * Two hot paths:
 *   tp_metrics_hop_bytes()       one pass over the CSR, each undirected edge
 *                                once (neighbour v > u), router coordinates read
 *                                straight from the machine, no allocation; on
 *                                plain-hop tori and meshes the distance loop
 *                                is inlined and specialised for 1-3 dims, other
 *                                networks take their distance through the
 *                                network interface (network.h).
 *   tp_metrics_max_congestion()  routes each message with tp_machine_route() into a
 *                                reusable workspace; only the links a call
 *                                touched are scanned and cleared afterwards, so
 *                                a call costs O(edges x hops), not O(links).
 *
 * Candidates are ranked by one number, tp_metrics_score(): hop-bytes, or for
 * the congestion metric the largest load first and hop-bytes second, folded
 * into one double (congestion_score below).
 */
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "net/network.h"
#include "map/metrics_internal.h"
#include "net/machine_internal.h"
#include "input/alloc_internal.h"
#include "pattern/pattern_internal.h"

#define TP_HOT static inline __attribute__((always_inline))

/* ---- validation ---- */

int tp_mapping_validate(const tp_graph *g, const tp_alloc *a,
			const int32_t *map, tp_error *err)
{
	if (!g || !a || (!map && g->ntasks > 0))
		return tp_error_set(err, TP_EINVAL,
				    "mapping: missing graph, allocation or map");
	if (g->ntasks > 0 && a->nnodes <= 0)
		return tp_error_set(err, TP_EINVAL,
				    "mapping: %d tasks but the allocation has no nodes",
				    (int)g->ntasks);
	int *count = tp__calloc((size_t)a->nnodes, sizeof *count);
	if (!count)
		return tp_error_set(err, TP_ENOMEM, "mapping: out of memory");
	int rc = TP_OK;
	for (int32_t t = 0; t < g->ntasks; t++) {
		int32_t i = map[t];
		if (i < 0 || i >= a->nnodes) {
			rc = tp_error_set(err, TP_EINVAL,
					  "mapping: task %d is on allocation index %d, outside 0..%d",
					  (int)t, (int)i, (int)a->nnodes - 1);
			break;
		}
		if (++count[i] > a->slots[i]) {
			char name[TP__HOSTNAME_MAX];
			tp__machine_name_put(a->m, a->node[i], name);
			rc = tp_error_set(err, TP_EINVAL,
					  "mapping: task %d exceeds the %d slot%s of node %s (allocation index %d)",
					  (int)t, a->slots[i], a->slots[i] == 1 ? "" : "s",
					  name, (int)i);
			break;
		}
	}
	free(count);
	return rc;
}

/* ---- distance helpers ---- */

/* The specialised loops below work in int, as fast as it gets: they serve
 * plain-hop machines whose distances and doubled mesh extents (wrap_extents)
 * fit one, i.e. every real machine.  The others, weighted or with extents
 * near 2^31, take the generic loop and its 64-bit distances. */
static bool int_hops(const struct tp_machine *m)
{
	if (!m->plain_hops)
		return false;
	int64_t diameter = 0;
	for (int d = 0; d < m->ndims; d++) {
		if (!m->wrap[d] && m->dims[d] > INT_MAX / 2)
			return false;
		diameter += m->wrap[d] ? m->dims[d] / 2 : m->dims[d] - 1;
	}
	return diameter <= INT_MAX;
}

/* wd[d] = dims[d] on a wrapped dimension, 2*dims[d] otherwise: then the hop
 * count along d is min(x, wd[d] - x) for x = |a - b| < dims[d], branch-free
 * (on a mesh wd - x > x always).  Only for int_hops machines. */
static void wrap_extents(const struct tp_machine *m, int *wd)
{
	for (int d = 0; d < m->ndims; d++)
		wd[d] = m->wrap[d] ? m->dims[d] : 2 * m->dims[d];
}

TP_HOT int dist1(int a, int b, int wd)
{
	int x = a - b;
	x = x < 0 ? -x : x;
	int y = wd - x;
	return x < y ? x : y;
}

TP_HOT int dist_nd(const int *ca, const int *cb, const int *wd, int nd)
{
	int h = 0;
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC unroll 6
#endif
	for (int d = 0; d < nd; d++)
		h += dist1(ca[d], cb[d], wd[d]);
	return h;
}

/* Index of the first neighbour of u with v > u (lists are sorted). */
TP_HOT int64_t first_above(const int32_t *adj, int64_t e, int64_t end,
			   int32_t u)
{
	while (e < end && adj[e] < u)
		e++;
	return e;
}

/* One scoring of hop_bytes_loop: tasks [u0, u1).  Without part, the sum
 * of their per-task sums in task order; with part, each task's sum stored
 * in part[u - u0] as well (the return value then only serves the bound).
 * Past the bound, or once *stop is set, it returns early with a value above
 * the bound. */
struct hb_range {
	const struct tp_graph *g;
	const struct tp_alloc *a;
	const int32_t *map;
	const int *tc;        /* or per-task router coordinates (ntasks x nd),
				 read instead of a, map */
	const int *wd;
	int nd;
	int32_t u0, u1;
	double *part;
	double bound;
	atomic_int *stop;
	double sum;
};

/* The hop-bytes loop for a fixed dimension count nd (a constant at each call
 * site, so the distance loop is unrolled), for stored weights or the
 * graph's one weight (stored, also a constant), and for coordinates through
 * the mapping or per task (bytc, likewise: one load per neighbour instead
 * of three dependent ones).  Per-task partial sums keep the summation order
 * fixed: the result is bit-for-bit reproducible. */
TP_HOT double hop_bytes_loop(const struct hb_range *r, int nd, bool stored,
			     bool bytc)
{
	const struct tp_graph *g = r->g;
	const int64_t *xadj = g->xadj;
	const int32_t *adj = g->adjncy;
	const double *w = g->weights, uw = g->unit_w;
	const int32_t *node = bytc ? NULL : r->a->node;
	const int *coords = bytc ? r->tc : r->a->m->coords;
	const int32_t *map = r->map;
	const int *wd = r->wd;
	double sum = 0.0, *part = r->part;

	for (int32_t u = r->u0; u < r->u1; u++) {
		const int *cu = coords + (size_t)(bytc ? u : node[map[u]]) * (size_t)nd;
		const int64_t end = xadj[u + 1];
		double s = 0.0;
		for (int64_t e = first_above(adj, xadj[u], end, u); e < end; e++) {
			const int *cv = coords + (size_t)(bytc ? adj[e] : node[map[adj[e]]]) *
						 (size_t)nd;
			s += (stored ? w[e] : uw) * (double)dist_nd(cu, cv, wd, nd);
		}
		if (part)
			part[u - r->u0] = s;
		sum += s;
		/* weights are >= 0: once past the bound the sum can only grow */
		if ((u & 1023) == 1023 &&
		    (sum > r->bound || (r->stop && atomic_load_explicit(r->stop,
									memory_order_relaxed))))
			return sum > r->bound ? sum : INFINITY;
	}
	return sum;
}

/* hop_bytes_loop with its constants chosen once */
#define HB_LOOP(r, nd, sw, tc)                                              \
	((sw) ? ((tc) ? hop_bytes_loop(r, nd, true, true)                   \
		      : hop_bytes_loop(r, nd, true, false))                 \
	      : ((tc) ? hop_bytes_loop(r, nd, false, true)                  \
		      : hop_bytes_loop(r, nd, false, false)))

static void hop_bytes_run(struct hb_range *r)
{
	const bool sw = r->g->weights != NULL, tc = r->tc != NULL;
	switch (r->nd) {
	case 1: r->sum = HB_LOOP(r, 1, sw, tc); break;
	case 2: r->sum = HB_LOOP(r, 2, sw, tc); break;
	case 3: r->sum = HB_LOOP(r, 3, sw, tc); break;
	default: r->sum = hop_bytes_loop(r, r->nd, sw, tc); break;
	}
}

static void *hop_bytes_thread(void *arg)
{
	hop_bytes_run(arg);
	return NULL;
}

/* From this many edges a second thread scores the upper part of the tasks:
 * below it one thread is done before a second would pay off. */
#define HB_PARALLEL_EDGES ((int64_t)1 << 20)
/* The lower part's share, in percent: it also folds the upper part's
 * per-task sums afterwards. */
#define HB_LOWER_SHARE 52

/* Hop-bytes of every task, through the mapping or from per-task
 * coordinates tc as all says (its range, part, stop and sum are set
 * here).  Large
 * graphs on two threads: the lower tasks are summed as one loop would, the
 * upper ones kept per task and then added in task order, so the additions
 * and their order, and therefore the bits of the result, are those of the
 * single loop. */
static double hop_bytes_split(const struct hb_range *all, int threads)
{
	const struct tp_graph *g = all->g;
	double bound = all->bound;
	struct hb_range lo = *all;
	lo.u0 = 0;
	lo.u1 = g->ntasks;
	int32_t mid = (int32_t)((int64_t)g->ntasks * HB_LOWER_SHARE / 100);
	double *part = NULL;
	if (g->nedges >= HB_PARALLEL_EDGES && threads != 1 && tp__cpus() > 1)
		part = tp__malloc_array((size_t)(g->ntasks - mid), sizeof(double));
	if (!part) {
		hop_bytes_run(&lo);
		return lo.sum;
	}
	atomic_int stop = 0;
	struct hb_range hi = lo;
	lo.u1 = hi.u0 = mid;
	hi.part = part;
	hi.stop = &stop;
	pthread_t th;
	bool two = pthread_create(&th, NULL, hop_bytes_thread, &hi) == 0;
	hop_bytes_run(&lo);
	if (two) {
		if (lo.sum > bound)
			atomic_store(&stop, 1);
		pthread_join(th, NULL);
	} else {
		hop_bytes_run(&hi);
	}
	double sum = lo.sum;
	if (sum > bound || hi.sum > bound) {
		free(part);
		return sum > bound ? sum : hi.sum;
	}
	for (int32_t u = mid; u < g->ntasks; u++) {
		sum += part[u - mid];
		if ((u & 1023) == 1023 && sum > bound)
			break;
	}
	free(part);
	return sum;
}

/* The scoring fast path: map must be valid (tp_mapping_validate), which is
 * not re-checked here.  Returns -1 for missing arguments. */
double tp_metrics_hop_bytes(const tp_graph *g, const tp_alloc *a,
			    const int32_t *map)
{
	if (!g || !a || (!map && g->ntasks > 0))
		return -1.0;
	return tp__hop_bytes_bounded(g, a, map, HUGE_VAL);
}

/* Router coordinates of task t: tc row t, or through the mapping when
 * node/map are given. */
static inline const int *task_router(const struct tp_machine *m, const int *tc,
				     const int32_t *node, const int32_t *map,
				     int32_t t)
{
	size_t nd = (size_t)m->ndims;
	return map ? m->coords + (size_t)node[map[t]] * nd : tc + (size_t)t * nd;
}

/* Every other machine: the same loop with the network's own distance (not
 * inlined: the specialised loops keep their registers). */
static __attribute__((noinline)) double
hop_bytes_generic(const struct tp_graph *g, const struct tp_machine *m,
		  const int *tc, const int32_t *node, const int32_t *map,
		  double bound)
{
	double sum = 0.0;
	for (int32_t u = 0; u < g->ntasks; u++) {
		const int *ru = task_router(m, tc, node, map, u);
		const int64_t end = g->xadj[u + 1];
		double s = 0.0;
		for (int64_t e = first_above(g->adjncy, g->xadj[u], end, u); e < end; e++) {
			const int *rv = task_router(m, tc, node, map, g->adjncy[e]);
			s += tp__graph_w(g, e) * (double)tp__coord_dist(m, ru, rv);
		}
		sum += s;
		if ((u & 1023) == 1023 && sum > bound)
			return sum;
	}
	return sum;
}

double tp__hop_bytes_task_coords(const tp_graph *g, const tp_machine *m,
				 const int *tc, double bound, int threads)
{
	if (!int_hops(m))
		return hop_bytes_generic(g, m, tc, NULL, NULL, bound);
	int wd[TP_MAX_DIMS];
	wrap_extents(m, wd);
	struct hb_range all = { .g = g, .tc = tc, .wd = wd, .nd = m->ndims,
				.bound = bound };
	return hop_bytes_split(&all, threads);
}

double tp__hop_bytes_threads(const tp_graph *g, const tp_alloc *a,
			     const int32_t *map, double bound, int threads)
{
	if (!int_hops(a->m))
		return hop_bytes_generic(g, a->m, NULL, a->node, map, bound);
	int wd[TP_MAX_DIMS];
	wrap_extents(a->m, wd);
	struct hb_range all = { .g = g, .a = a, .map = map, .wd = wd,
				.nd = a->m->ndims, .bound = bound };
	return hop_bytes_split(&all, threads);
}

double tp__hop_bytes_bounded(const tp_graph *g, const tp_alloc *a,
			     const int32_t *map, double bound)
{
	return tp__hop_bytes_threads(g, a, map, bound, 0);
}

/* ---- congestion ---- */

/* The most links a route of the machine crosses. */
static int64_t machine_diameter(const struct tp_machine *m)
{
	return m->net->max_route_links(m);
}

/* Counted messages not routed yet: a node pair's (from a to b) since it
 * last came into its entry of a direct-mapped table.  The tasks of a node
 * send to the same few nodes: one route then loads a link with all of
 * them at once. */
#define PENDING_BITS 12
#define PENDING (1 << PENDING_BITS)

struct pending {
	int32_t a, b;
	int64_t msgs;    /* messages from a to b */
	int64_t edges;   /* of them, each edge's once (hop-bytes) */
};

/* A link's load: bytes and messages side by side, so that loading a link
 * of a large machine costs one cache miss, not two. */
struct link_load {
	double bytes;
	int64_t msgs;
};

struct tp_congestion_ws {
	const struct tp_machine *m;
	int64_t nlinks;
	struct link_load *ld;   /* per link, all zero between calls */
	uint32_t *count;        /* per link, all zero between calls: the
				   messages, when they alone say the bytes
				   (4 bytes a link: on a machine of millions
				   of links, half the cache misses and the
				   pages of 8) */
	double unit;            /* then: each message's bytes */
	bool counted;           /* the last load_links counted in count */
	bool scan_all;          /* counted and loading most links: no touched
				   list (every link is read and cleared in
				   order after: a sequential pass instead of
				   a cache miss a link) */
	bool diff;              /* counted through the kind's route_diff:
				   count holds differences until
				   route_diff_sum (scan_all too) */
	struct pending *pend;   /* PENDING entries, a < 0 between calls */
	int64_t *touched;   /* links loaded by the current call (each once) */
	int64_t *route;     /* one route, route_cap links */
	int route_cap;
};

int tp_congestion_ws_create(tp_congestion_ws **out, const tp_machine *m,
			    tp_error *err)
{
	if (!out || !m)
		return tp_error_set(err, TP_EINVAL,
				    "congestion workspace: missing machine");
	*out = NULL;
	/* a minimal route is never longer than the diameter */
	int64_t cap64 = machine_diameter(m) + 1;
	int64_t nl = tp_machine_link_count(m);
	if (nl < 0 || cap64 > INT_MAX)
		return tp_error_set(err, TP_EINVAL,
				    "congestion workspace: machine too large to route");
	int cap = (int)cap64;
	tp_congestion_ws *ws = calloc(1, sizeof *ws);
	if (ws) {
		ws->m = m;
		ws->nlinks = nl;
		ws->route_cap = cap;
		ws->ld = tp__calloc((size_t)nl, sizeof *ws->ld);
		ws->count = tp__calloc((size_t)nl, sizeof *ws->count);
		ws->pend = tp__malloc_array(PENDING, sizeof *ws->pend);
		for (int i = 0; ws->pend && i < PENDING; i++)
			ws->pend[i].a = -1;
		ws->touched = tp__malloc_array((size_t)nl, sizeof *ws->touched);
		ws->route = tp__malloc_array((size_t)cap, sizeof *ws->route);
	}
	if (!ws || !ws->ld || !ws->count || !ws->pend || !ws->touched || !ws->route) {
		tp_congestion_ws_destroy(ws);
		return tp_error_set(err, TP_ENOMEM,
				    "congestion workspace: out of memory (%lld links)",
				    (long long)nl);
	}
	*out = ws;
	return TP_OK;
}

void tp_congestion_ws_destroy(tp_congestion_ws *ws)
{
	if (!ws)
		return;
	free(ws->ld);
	free(ws->count);
	free(ws->pend);
	free(ws->touched);
	free(ws->route);
	free(ws);
}

struct cong_result {
	double max_bytes;
	int64_t max_msgs;
	double hop_bytes;   /* sum of w * route length, same order as above */
	double min_weight;  /* smallest positive edge weight (0 if none) */
};

/* Route the pending messages of p (if any) and count them on its links;
 * *edge_hops gets the hops of its edges.  Empties p.  -1 when the route
 * function misbehaves. */
static int flush_pending(const struct tp_alloc *a, tp_congestion_ws *ws,
			 struct pending *p, int64_t *nt, int64_t *edge_hops)
{
	if (p->a < 0)
		return 0;
	int32_t from = p->a;
	p->a = -1;
	if (ws->diff) {
		*edge_hops += p->edges *
			      a->m->net->route_diff(a->m, tp_machine_node_coords(a->m, from),
						    tp_machine_node_coords(a->m, p->b),
						    (uint32_t)p->msgs, ws->count);
		return 0;
	}
	int len = tp_machine_route(a->m, from, p->b, ws->route, ws->route_cap);
	if (len < 0)
		return -1;
	*edge_hops += p->edges * len;
	for (int k = 0; k < len; k++) {
		int64_t l = ws->route[k];
		if (l < 0 || l >= ws->nlinks)
			return -1;
		if (!ws->scan_all && ws->count[l] == 0)
			ws->touched[(*nt)++] = l;
		ws->count[l] += (uint32_t)p->msgs;
	}
	return 0;
}

/* Every message carries the same whole number of bytes on unweighted
 * links, and no link can add up past 2^53: then each partial sum of a
 * link's bytes is exact, the bytes are its messages times that number, and
 * counting the messages alone (4 bytes a link, not 16: fewer cache misses)
 * gives the same loads to the bit, in any order of the additions. */
static bool counts_say_bytes(const struct tp_graph *g,
			     const struct tp_alloc *a,
			     const tp_congestion_ws *ws)
{
	double uw = g->unit_w;
	int64_t entries = g->xadj[g->ntasks];
	return !g->weights && !a->m->link_weight && uw >= 0.0 &&
	       uw == floor(uw) &&
	       uw * (double)entries * (double)ws->route_cap <= 9007199254740992.0 &&
	       entries <= (int64_t)UINT32_MAX;   /* a link's count */
}

/* Route both directions of every edge (u -> v and v -> u, each carrying
 * the edge's bytes) on the directed links and load the links of ws: bytes
 * (times the link's weight) and messages, each loaded link listed once in
 * ws->touched (*ntouched of them).  *hop_bytes gets the sum of w * route
 * length over the edges (each edge once), *min_weight the smallest positive
 * edge weight.  Returns 0, or -1 when the route function misbehaves (the
 * loads so far stay listed, for the caller to clear). */
static int load_links(const struct tp_graph *g, const struct tp_alloc *a,
		      const int32_t *map, int32_t u0, int32_t u1,
		      tp_congestion_ws *ws, int64_t *ntouched,
		      double *hop_bytes, double *min_weight)
{
	const int64_t *xadj = g->xadj;
	const int32_t *adj = g->adjncy;
	const double *w = g->weights, uw = g->unit_w;
	const int32_t *node = a->node;
	struct link_load *ld = ws->ld;
	int64_t *touched = ws->touched;
	int64_t *route = ws->route;
	const int64_t nlinks = ws->nlinks;
	int64_t nt = 0, edge_hops = 0;
	int rc = 0;
	double hb = 0.0, wmin = 0.0;
	/* bytes / bandwidth where the network weighs its links, else bytes */
	const double *link_weight = a->m->link_weight;
	const bool counted = counts_say_bytes(g, a, ws);
	const bool one_each = a->total_slots == a->nnodes;
	ws->counted = counted;
	ws->unit = uw;

	/* every CSR entry is one direction of an edge: u's message to v */
	for (int32_t u = u0; u < u1 && rc == 0; u++) {
		const int32_t nu = node[map[u]];
		const int64_t end = xadj[u + 1];
		double s = 0.0;
		for (int64_t e = xadj[u]; e < end; e++) {
			const double we = w ? w[e] : uw;
			if (we > 0.0 && (wmin == 0.0 || we < wmin))
				wmin = we;
			const int32_t nv = node[map[adj[e]]];
			if (nv == nu)
				continue;
			if (counted && one_each) {
				/* one slot a node: no pair of nodes repeats
				 * (but for the other direction), so routed at
				 * once, while u's node is in the cache */
				struct pending q = { nu, nv, 1, adj[e] > u };
				if (flush_pending(a, ws, &q, &nt, &edge_hops)) {
					rc = -1;
					break;
				}
				continue;
			}
			if (counted) {
				/* Whole numbers below 2^53 (hop-bytes too:
				 * the bound has the longest route in it): the
				 * order of the additions does not matter, the
				 * messages of a pair are routed together. */
				uint32_t h = ((uint32_t)nu * 0x9e3779b1u ^
					      (uint32_t)nv * 0x85ebca77u) >>
					     (32 - PENDING_BITS);
				struct pending *p = &ws->pend[h];
				if (p->a != nu || p->b != nv) {
					if (flush_pending(a, ws, p, &nt, &edge_hops)) {
						rc = -1;
						break;
					}
					*p = (struct pending){ nu, nv, 0, 0 };
				}
				p->msgs++;
				p->edges += adj[e] > u;
				continue;
			}
			int len = tp_machine_route(a->m, nu, nv, route,
						   ws->route_cap);
			if (len < 0) {
				rc = -1;
				break;
			}
			if (adj[e] > u)   /* hop-bytes: each edge once */
				s += we * (double)len;
			for (int k = 0; k < len; k++) {
				int64_t l = route[k];
				if (l < 0 || l >= nlinks) {
					rc = -1;
					break;
				}
				if (ld[l].msgs++ == 0)
					touched[nt++] = l;
				ld[l].bytes += link_weight ? we * link_weight[l] : we;
			}
			if (rc)
				break;
		}
		hb += s;
	}
	if (counted) {
		for (int i = 0; i < PENDING; i++)
			if (flush_pending(a, ws, &ws->pend[i], &nt, &edge_hops) && !rc)
				rc = -1;
		hb = uw * (double)edge_hops;   /* exact, as the sums above */
	}
	*ntouched = nt;
	*hop_bytes = hb;
	*min_weight = wmin;
	return rc;
}

/* One part of a congestion pass: load_links over tasks u0..u1 into a
 * workspace of its own. */
struct load_part {
	const struct tp_graph *g;
	const struct tp_alloc *a;
	const int32_t *map;
	int32_t u0, u1;
	tp_congestion_ws *ws;
	int64_t nt;
	double hb, wmin;
	int rc;
};

static void *load_part_run(void *arg)
{
	struct load_part *p = arg;
	p->rc = load_links(p->g, p->a, p->map, p->u0, p->u1, p->ws, &p->nt,
			   &p->hb, &p->wmin);
	return NULL;
}

/* From this many CSR entries a counted pass splits its tasks over threads:
 * each part's links in a workspace of its own, added into the first's. */
#define CONGESTION_PARALLEL_ENTRIES ((int64_t)1 << 19)
#define CONGESTION_MAX_PARTS 16   /* each part: 4 bytes a link and more */

/* load_links over every task, on up to threads threads where the counts
 * say the bytes (integers: the loads are the same to the bit in any
 * split); ws holds every load afterwards.  The helpers' workspaces are
 * made and freed here; without memory for one, fewer parts. */
static int load_links_parts(const struct tp_graph *g, const struct tp_alloc *a,
			    const int32_t *map, tp_congestion_ws *ws,
			    int threads, int64_t *ntouched, double *hop_bytes,
			    double *min_weight)
{
	int32_t n = g->ntasks;
	int k = threads < CONGESTION_MAX_PARTS ? threads : CONGESTION_MAX_PARTS;
	bool counted = counts_say_bytes(g, a, ws);
	/* as many messages as an eighth of the links: most are loaded */
	ws->scan_all = counted && g->xadj[n] >= ws->nlinks / 8;
	/* and on a torus or mesh, counted as runs: a few differences a route,
	 * not a count a hop (Slurm's order of a million tasks on 128^3: 17
	 * hops a message), then one more pass over the links */
	ws->diff = ws->scan_all && a->m->net->route_diff;
	if (k < 2 || g->xadj[n] < CONGESTION_PARALLEL_ENTRIES || !counted) {
		int rc = load_links(g, a, map, 0, n, ws, ntouched, hop_bytes,
				    min_weight);
		if (ws->diff)
			a->m->net->route_diff_sum(a->m, ws->count);
		return rc;
	}
	struct load_part part[CONGESTION_MAX_PARTS];
	pthread_t th[CONGESTION_MAX_PARTS];
	bool started[CONGESTION_MAX_PARTS] = { false };
	int np = 1;
	while (np < k && !tp_congestion_ws_create(&part[np].ws, a->m, NULL)) {
		part[np].ws->diff = ws->diff;
		part[np++].ws->scan_all = ws->scan_all;
	}
	for (int i = 0; i < np; i++) {
		if (i == 0)
			part[0].ws = ws;
		part[i].g = g;
		part[i].a = a;
		part[i].map = map;
		part[i].u0 = (int32_t)((int64_t)n * i / np);
		part[i].u1 = (int32_t)((int64_t)n * (i + 1) / np);
		if (i > 0)
			started[i] = !pthread_create(&th[i], NULL, load_part_run,
						     &part[i]);
	}
	load_part_run(&part[0]);
	for (int i = 1; i < np; i++)
		if (started[i])
			pthread_join(th[i], NULL);
		else
			load_part_run(&part[i]);
	/* every part's counts into ws's (its touched list grows) */
	int rc = part[0].rc;
	int64_t nt = part[0].nt;
	double hb = part[0].hb, wmin = part[0].wmin;
	for (int i = 1; i < np; i++) {
		tp_congestion_ws *h = part[i].ws;
		if (ws->scan_all) {   /* no touched lists: every link in order */
			for (int64_t l = 0; l < ws->nlinks; l++)
				ws->count[l] += h->count[l];
		} else {
			for (int64_t j = 0; j < part[i].nt; j++) {
				int64_t l = h->touched[j];
				if (ws->count[l] == 0)
					ws->touched[nt++] = l;
				ws->count[l] += h->count[l];
			}
		}
		if (part[i].rc && !rc)
			rc = part[i].rc;
		hb += part[i].hb;   /* exact: whole multiples of the bytes */
		if (part[i].wmin > 0 && (wmin == 0 || part[i].wmin < wmin))
			wmin = part[i].wmin;
		tp_congestion_ws_destroy(h);
	}
	if (ws->diff)   /* the parts' differences add up as their counts */
		a->m->net->route_diff_sum(a->m, ws->count);
	*ntouched = nt;
	*hop_bytes = hb;
	*min_weight = wmin;
	return rc;
}

/* Load the links (load_links_parts), take the maxima, clear the touched
 * links.  Returns 0, or -1 when the workspace does not fit the machine or
 * the route function misbehaves (the workspace is left clean either way). */
static int congestion_pass(const struct tp_graph *g, const struct tp_alloc *a,
			   const int32_t *map, tp_congestion_ws *ws,
			   int threads, struct cong_result *r)
{
	memset(r, 0, sizeof *r);
	if (!g || !a || (!map && g->ntasks > 0) || !ws || ws->m != a->m)
		return -1;
	int64_t nt = 0;
	double hb = 0.0, wmin = 0.0;
	int rc = load_links_parts(g, a, map, ws, threads, &nt, &hb, &wmin);
	struct link_load *ld = ws->ld;
	double mb = 0.0;
	int64_t mm = 0;
	if (ws->counted && ws->scan_all) {
		uint32_t top = 0;
		for (int64_t l = 0; l < ws->nlinks; l++)
			top = ws->count[l] > top ? ws->count[l] : top;
		memset(ws->count, 0, sizeof *ws->count * (size_t)ws->nlinks);
		mm = top;
	}
	ws->scan_all = false;
	if (ws->counted) {
		for (int64_t i = 0; i < nt; i++) {
			int64_t l = ws->touched[i];
			if ((int64_t)ws->count[l] > mm)
				mm = ws->count[l];
			ws->count[l] = 0;
		}
		/* the largest count's bytes, as the loop below would find
		 * them (exact; 0 bytes a message: every load 0) */
		mb = (double)mm * ws->unit;
		nt = 0;
	}
	for (int64_t i = 0; i < nt; i++) {
		int64_t l = ws->touched[i];
		if (ld[l].bytes > mb)
			mb = ld[l].bytes;
		if (ld[l].msgs > mm)
			mm = ld[l].msgs;
		ld[l].bytes = 0.0;
		ld[l].msgs = 0;
	}
	if (rc)
		return rc;
	r->max_bytes = mb;
	r->max_msgs = mm;
	r->hop_bytes = hb;
	/* loads in bytes / bandwidth: the smallest step is wmin / max bw */
	double maxbw = a->m->net->max_link_bandwidth
		? a->m->net->max_link_bandwidth(a->m) : 0.0;
	if (maxbw > 0)
		wmin /= maxbw;
	r->min_weight = wmin;
	return 0;
}

/* ws must have been created for a's machine (the same tp_machine object);
 * otherwise, or on missing arguments, returns -1 (and *msgs = -1). */
double tp_metrics_max_congestion(const tp_graph *g, const tp_alloc *a,
				 const int32_t *map, tp_congestion_ws *ws,
				 int64_t *msgs)
{
	struct cong_result r;
	if (congestion_pass(g, a, map, ws, 1, &r) < 0) {
		if (msgs)
			*msgs = -1;
		return -1.0;
	}
	if (msgs)
		*msgs = r.max_msgs;
	return r.max_bytes;
}

/* Every link's load, as the congestion pass counts it (pictures, reports):
 * the same routes and weights, so that the largest entry is
 * max_congestion_bytes. */
int tp_metrics_link_loads(const tp_graph *g, const tp_alloc *a,
			  const int32_t *map, double *loads, int64_t *msgs,
			  int64_t nlinks, tp_error *err)
{
	return tp__metrics_link_loads_threads(g, a, map, loads, msgs, nlinks, 1,
					      err);
}

int tp__metrics_link_loads_threads(const tp_graph *g, const tp_alloc *a,
				   const int32_t *map, double *loads,
				   int64_t *msgs, int64_t nlinks, int threads,
				   tp_error *err)
{
	if (!g || !a || !loads || (!map && g->ntasks > 0))
		return tp_error_set(err, TP_EINVAL,
				    "link loads: missing graph, allocation, map or output");
	if (nlinks != tp_machine_link_count(a->m))
		return tp_error_set(err, TP_EINVAL,
				    "link loads: room for %lld links, the machine has %lld",
				    (long long)nlinks,
				    (long long)tp_machine_link_count(a->m));
	for (int32_t t = 0; t < g->ntasks; t++)
		if (map[t] < 0 || map[t] >= a->nnodes)
			return tp_error_set(err, TP_EINVAL,
					    "link loads: task %d is on allocation index %d, outside 0..%d",
					    (int)t, (int)map[t], (int)a->nnodes - 1);
	tp_congestion_ws *ws;
	int rc = tp_congestion_ws_create(&ws, a->m, err);
	if (rc)
		return rc;
	int64_t nt = 0;
	double hb, wmin;
	rc = load_links_parts(g, a, map, ws, threads, &nt, &hb, &wmin);
	memset(loads, 0, sizeof *loads * (size_t)nlinks);
	if (msgs)
		memset(msgs, 0, sizeof *msgs * (size_t)nlinks);
	/* counts over every link (scan_all) keep no list of those touched */
	bool all = ws->counted && ws->scan_all;
	if (all)
		nt = nlinks;
	for (int64_t i = 0; i < nt && !rc; i++) {
		int64_t l = all ? i : ws->touched[i];
		int64_t k = ws->counted ? ws->count[l] : ws->ld[l].msgs;
		loads[l] = ws->counted ? (double)k * ws->unit : ws->ld[l].bytes;
		if (msgs)
			msgs[l] = k;
	}
	tp_congestion_ws_destroy(ws);
	if (rc)
		return tp_error_set(err, TP_EINVAL,
				    "link loads: routing failed (machine route inconsistent with its link count)");
	return TP_OK;
}

/* ---- all metrics ---- */

int tp_metrics_compute(const tp_graph *g, const tp_alloc *a,
		       const int32_t *map, bool want_congestion,
		       tp_metrics *out, tp_error *err)
{
	return tp__metrics_compute_threads(g, a, map, want_congestion, 1, out,
					   err);
}

int tp__metrics_compute_threads(const tp_graph *g, const tp_alloc *a,
				const int32_t *map, bool want_congestion,
				int threads, tp_metrics *out, tp_error *err)
{
	if (!g || !a || !out || (!map && g->ntasks > 0))
		return tp_error_set(err, TP_EINVAL,
				    "metrics: missing graph, allocation, map or output");
	memset(out, 0, sizeof *out);
	for (int32_t t = 0; t < g->ntasks; t++)
		if (map[t] < 0 || map[t] >= a->nnodes)
			return tp_error_set(err, TP_EINVAL,
					    "metrics: task %d is on allocation index %d, outside 0..%d",
					    (int)t, (int)map[t], (int)a->nnodes - 1);

	const struct tp_machine *m = a->m;
	const int nd = m->ndims;
	const int *coords = m->coords;
	const int32_t *node = a->node;
	const int64_t *xadj = g->xadj;
	const int32_t *adj = g->adjncy;
	const double *w = g->weights, uw = g->unit_w;
	const bool fast = int_hops(m);
	int wd[TP_MAX_DIMS] = { 0 };
	if (fast)
		wrap_extents(m, wd);

	/* hops summed in a double: exact while below 2^53, never wrapping */
	int64_t nedges = 0, max_hops = 0;
	double hops_sum = 0.0;
	double total = 0.0, hb = 0.0, intra_node = 0.0, intra_router = 0.0;
	for (int32_t u = 0; u < g->ntasks; u++) {
		const int32_t iu = map[u];
		const int *cu = coords + (size_t)node[iu] * (size_t)nd;
		const int64_t end = xadj[u + 1];
		double s = 0.0;
		for (int64_t e = first_above(adj, xadj[u], end, u); e < end; e++) {
			const int32_t iv = map[adj[e]];
			const int *cv = coords + (size_t)node[iv] * (size_t)nd;
			const int64_t h = fast ? dist_nd(cu, cv, wd, nd)
					  : tp__coord_dist(m, cu, cv);
			const double we = w ? w[e] : uw;
			nedges++;
			total += we;
			s += we * (double)h;
			hops_sum += (double)h;
			if (h > max_hops)
				max_hops = h;
			if (h == 0)
				intra_router += we;
			if (iv == iu)
				intra_node += we;
		}
		hb += s;
	}

	out->nedges = nedges;
	out->total_bytes = total;
	out->hop_bytes = hb;
	out->avg_hop_bytes = total > 0.0 ? hb / total : 0.0;
	out->avg_dilation = nedges > 0 ? hops_sum / (double)nedges : 0.0;
	out->max_dilation = max_hops;
	out->frac_intra_node = total > 0.0 ? intra_node / total : 0.0;
	out->frac_intra_router = total > 0.0 ? intra_router / total : 0.0;

	if (want_congestion && nedges > 0) {
		tp_congestion_ws *ws;
		int rc = tp_congestion_ws_create(&ws, m, err);
		if (rc)
			return rc;
		struct cong_result r;
		rc = congestion_pass(g, a, map, ws, threads, &r);
		tp_congestion_ws_destroy(ws);
		if (rc)
			return tp_error_set(err, TP_EINVAL,
					    "metrics: routing failed (machine route inconsistent with its link count)");
		out->max_congestion_bytes = r.max_bytes;
		out->max_congestion_msgs = r.max_msgs;
	}
	return TP_OK;
}

/* ---- scoring ---- */

/* CONGESTION score, lexicographic (max link load C, then hop-bytes H):
 *
 *     score = C + 2^-20 * w_min * H / (total_bytes * diameter)
 *
 * H / (total_bytes * diameter) lies in [0, 1] (no edge is longer than the
 * machine's diameter) and depends only on H for a given graph and machine, so
 * mappings with equal C are ranked by H, and C always decides when two loads
 * differ by more than 2^-20 of the smallest positive edge weight w_min (loads
 * are sums of edge weights; with whole-number bytes they are exact and differ
 * by >= 1, so the order is strictly lexicographic while w_min <= 1 MiB).  The
 * scale makes the ranking independent of the unit of the weights. */
static double congestion_score(const struct cong_result *r,
			       const struct tp_graph *g,
			       const struct tp_machine *m)
{
	double denom = g->total_bytes * (double)machine_diameter(m);
	double t = denom > 0.0 ? r->hop_bytes / denom : 0.0;
	if (t > 1.0)
		t = 1.0;
	return r->max_bytes + ldexp(r->min_weight, -20) * t;
}

/* Lower is better.  HOP_BYTES: hop_bytes.  CONGESTION: see congestion_score;
 * ws may be NULL (a temporary workspace is made, which allocates).  Misuse
 * (missing arguments, unknown kind, foreign workspace, no memory) scores
 * HUGE_VAL, i.e. never best. */
double tp_metrics_score(const tp_graph *g, const tp_alloc *a,
			const int32_t *map, enum tp_metric_kind kind,
			tp_congestion_ws *ws)
{
	if (!g || !a || (!map && g->ntasks > 0))
		return HUGE_VAL;
	if (kind == TP_METRIC_HOP_BYTES)
		return tp_metrics_hop_bytes(g, a, map);
	if (kind != TP_METRIC_CONGESTION)
		return HUGE_VAL;

	tp_congestion_ws *own = NULL;
	if (!ws) {
		if (tp_congestion_ws_create(&own, a->m, NULL))
			return HUGE_VAL;
		ws = own;
	}
	struct cong_result r;
	int rc = congestion_pass(g, a, map, ws, 1, &r);
	tp_congestion_ws_destroy(own);
	if (rc)
		return HUGE_VAL;
	return congestion_score(&r, g, a->m);
}
