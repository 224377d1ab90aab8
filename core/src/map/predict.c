/* topoplace — the predicted time of one exchange (topoplace/predict.h).
 *
 * A flow-level model, as SimGrid's: the messages of one exchange start
 * together; each crosses the lanes its route gives (network.h: the
 * fabric's cables as it routes them, plus each node's port where the
 * kind's routes do not include it); at any moment the lanes' bandwidths
 * are shared max-min fairly (progressive filling: the lane with the least
 * bandwidth per unit of unfrozen weight fixes their rates, its messages
 * freeze, the others go on with what is left); each message weighs 1, or
 * with FlowSharing=rtt 1 / its hops (TCP's and SimGrid's RTT unfairness);
 * a message first waits a latency per link crossed (a torus's added ports
 * excepted: network.h, port_cables), then transfers; the rates are
 * recomputed when messages finish and when a route length's latency is
 * paid.  The exchange's time is the latest message's end.
 *
 * Costs: routing is one pass over the messages (O(M x H)); each round of
 * rates O(F x H + L log L) for F flows of H lanes over L lanes (a heap of
 * the lanes by share, one entry a lane).  Messages of one size between the
 * same two nodes are one flow of that multiplicity (they share alike), so
 * a node's tasks do not multiply the flows.  Flows finishing close to the
 * next completion finish with it (BATCH_SHARE), which keeps the rounds to
 * hundreds where RTT sharing spreads the completions.  A round after
 * completions (or a few starts) redoes the last rates only where they
 * change, and a lane one flow crosses enters the filling only as that
 * flow's slowest (map/predict_fill.c: the filling; here the routing into
 * flows and the entry points).
 * Past max_work lane crossings (tp__predict) the exchange is only bounded:
 * the busiest lane's bytes / bandwidth, or the slowest message alone.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <topoplace/metrics.h>
#include "net/network.h"
#include "map/predict_internal.h"
#include "map/predict_fill.h"
#include "net/machine_internal.h"
#include "input/alloc_internal.h"
#include "pattern/pattern_internal.h"


static size_t pow2_at_least(size_t n)
{
	size_t p = 16;
	while (p < n)
		p <<= 1;
	return p;
}

/* The dense index of lane id in lm (tp__routers: lane id -> index + 1,
 * 0 when new), added when new; -1 when out of memory. */
static int32_t lane_index(struct tp__routers *lm, int32_t *n, int64_t id)
{
	int32_t *slot = tp__routers_slot(lm, id, true);
	if (!slot)
		return -1;
	if (!*slot)
		*slot = ++*n;
	return *slot - 1;
}

struct lane_bw_arg {
	const tp_machine *m;
	int64_t nlane_ids;
	double *bw;
};

/* ---- the flows ---- */


static void flows_free(struct tp__flows *f)
{
	free(f->start);
	free(f->lanes);
	free(f->bytes);
	free(f->mult);
	free(f->w);
	free(f->w_rtt);
	free(f->hops);
	free(f->ends[0]);
	free(f->ends[1]);
	free(f->bw);
}

/* (node i, node j, bytes, rails) -> flow, for merging */
struct flow_key {
	int32_t i, j;
	double w;
	int ri, rj;          /* the ends' rails (-1 without rails) */
	int64_t f;           /* -1: empty */
};

static int route_of(const tp_machine *m, int64_t nlane_ids, int32_t ni,
		    int32_t nj, int64_t *buf, int cap);

/* A message's place in build_flows' table of flows. */
static uint64_t flow_hash(int32_t ni, int32_t nj, double w, int ri, int rj)
{
	uint64_t wb;
	memcpy(&wb, &w, sizeof wb);
	return tp__mix64(((uint64_t)(uint32_t)ni << 32 | (uint32_t)nj) ^
			 tp__mix64(wb ^ ((uint64_t)(uint32_t)(ri + 1) << 40 |
					 (uint64_t)(uint32_t)(rj + 1) << 20)));
}

/* build_flows asks for this many messages' places in its table at once:
 * the table is four slots a message (64 MB for a captured all-to-all of
 * 512 ranks), and each look-up waited for memory, three quarters of the
 * building's time. */
#define FLOW_PREFETCH 16
static int route_rails(const tp_machine *m, int64_t nlane_ids, int32_t ni,
		       int32_t nj, int ri, int rj, int64_t *buf, int cap);
static int task_rails(const tp_graph *g, const tp_alloc *a, const int32_t *map,
		      int **out);
static double lane_bw(const tp_machine *m, int64_t nlane_ids, int64_t id);

int64_t tp__fabric_kind_lanes(const tp_machine *m)
{
	return m->net->lane_count ? m->net->lane_count(m) : m->net->link_count(m);
}

int64_t tp__fabric_lanes(const tp_machine *m)
{
	return tp__fabric_kind_lanes(m) + 2 * (int64_t)m->nnodes;
}

int tp__fabric_route(const tp_machine *m, int32_t ni, int32_t nj,
		     int64_t *buf, int cap)
{
	return route_of(m, tp__fabric_kind_lanes(m), ni, nj, buf, cap);
}

double tp__fabric_bandwidth(const tp_machine *m, int64_t lane)
{
	return lane_bw(m, tp__fabric_kind_lanes(m), lane);
}

/* One route from machine node i to j into buf (lane ids): the kind's
 * lanes, and the nodes' ports around them unless its routes have them;
 * with rails (ri >= 0), from the card of rail ri to that of rail rj. */
static int route_rails(const tp_machine *m, int64_t nlane_ids, int32_t ni,
		       int32_t nj, int ri, int rj, int64_t *buf, int cap)
{
	const struct tp_net_ops *net = m->net;
	const int *ca = &m->coords[(size_t)ni * m->ndims];
	const int *cb = &m->coords[(size_t)nj * m->ndims];
	int off = net->routes_ports ? 0 : 1;
	if (cap < 2)
		return TP_EINVAL;
	int len = ri >= 0 && net->rail_route
		  ? net->rail_route(m, ca, cb, ri, rj, buf + off, cap - 2)
		  : net->lane_route ? net->lane_route(m, ca, cb, buf + off, cap - 2)
		  : net->route(m, ca, cb, buf + off, cap - 2);
	if (len < 0)
		return len;
	if (!net->routes_ports) {
		buf[0] = nlane_ids + 2 * (int64_t)ni;           /* injection */
		buf[len + 1] = nlane_ids + 2 * (int64_t)nj + 1; /* ejection */
		len += 2;
	}
	return len;
}

static int route_of(const tp_machine *m, int64_t nlane_ids, int32_t ni,
		    int32_t nj, int64_t *buf, int cap)
{
	return route_rails(m, nlane_ids, ni, nj, -1, -1, buf, cap);
}

/* Each task's rail with rails (its local rank on its node, in task order
 * as Slurm numbers SLURM_LOCALID, mod the rails), else NULL: *out NULL.
 * TP_ENOMEM. */
static int task_rails(const tp_graph *g, const tp_alloc *a, const int32_t *map,
		      int **out)
{
	int nr = tp__machine_rails(a->m);
	*out = NULL;
	if (nr <= 1)
		return TP_OK;
	int *rail = tp__malloc_array((size_t)g->ntasks + 1, sizeof *rail);
	int32_t *seen = tp__calloc((size_t)a->nnodes + 1, sizeof *seen);
	if (!rail || !seen) {
		free(rail);
		free(seen);
		return TP_ENOMEM;
	}
	for (int32_t u = 0; u < g->ntasks; u++)
		rail[u] = (int)(seen[map[u]]++ % nr);
	free(seen);
	*out = rail;
	return TP_OK;
}

static double lane_bw(const tp_machine *m, int64_t nlane_ids, int64_t id)
{
	if (id >= nlane_ids)
		return m->fab.node_bw;    /* a node's port */
	return m->net->lane_bandwidth ? m->net->lane_bandwidth(m, id)
				      : m->fab.node_bw;
}

/* (predict_internal.h; network.h says which kinds' ports are cables) */
int tp__fabric_route_hops(const tp_machine *m, int len)
{
	return len - (m->net->routes_ports || m->net->port_cables ? 0 : 2);
}

/* The latencies a message of `bytes` waits for before its data flows, in
 * hops: its route's, and past the eager limit (EagerLimit=) three times
 * (MPI's rendezvous: the request and the reply cross the route first). */
static int message_hops(const tp_machine *m, double bytes, int hops)
{
	return m->fab.eager_bytes >= 0 && bytes > m->fab.eager_bytes ? 3 * hops : hops;
}

static int put_lane_bw(int64_t id, int32_t slot, void *arg)
{
	struct lane_bw_arg *x = arg;
	x->bw[slot - 1] = lane_bw(x->m, x->nlane_ids, id);
	return 0;
}

/* flow_of (NULL: not wanted; else g->xadj[g->ntasks] entries): each
 * message's flow, by its entry in g's adjacency, -1 for none (inside a
 * node, or nothing sent). */
static int build_flows(const tp_graph *g, const tp_alloc *a,
		       const int32_t *map, struct tp__flows *fl,
		       int64_t *flow_of, tp_error *err)
{
	const tp_machine *m = a->m;
	memset(fl, 0, sizeof *fl);
	int64_t nmsg = 2 * g->nedges;
	/* + 1: a rail's PXN lane */
	int64_t cap_r = m->net->max_route_links(m) + 3;
	int *rail = NULL;
	int64_t nlane_ids = tp__fabric_kind_lanes(m);
	size_t kcap = pow2_at_least((size_t)nmsg * 2 + 1);
	struct flow_key *keys = tp__malloc_array(kcap, sizeof *keys);
	int64_t *buf = tp__malloc_array((size_t)cap_r, sizeof *buf);
	fl->start = tp__malloc_array((size_t)nmsg + 1, sizeof *fl->start);
	fl->bytes = tp__malloc_array((size_t)nmsg + 1, sizeof *fl->bytes);
	fl->mult = tp__malloc_array((size_t)nmsg + 1, sizeof *fl->mult);
	fl->w = tp__malloc_array((size_t)nmsg + 1, sizeof *fl->w);
	enum tp__sharing sharing = m->fab.hop_lat > 0 ? tp__fabric_sharing(m)
						       : TP__SHARING_FAIR;
	if (sharing == TP__SHARING_WORSE)
		fl->w_rtt = tp__malloc_array((size_t)nmsg + 1, sizeof *fl->w_rtt);
	fl->hops = tp__malloc_array((size_t)nmsg + 1, sizeof *fl->hops);
	for (int k = 0; k < 2; k++)
		fl->ends[k] = tp__malloc_array((size_t)nmsg + 1, sizeof *fl->ends[k]);
	size_t lcap = (size_t)(nmsg > 0 ? nmsg : 1) * 4;
	fl->lanes = tp__malloc_array(lcap, sizeof *fl->lanes);
	/* dense below TP__DENSE_ROUTERS ids, hashed above */
	struct tp__routers lm = { .nrouters = nlane_ids + 2 * (int64_t)m->nnodes };
	int32_t nlanes = 0;
	int rc = TP_OK;
	if (!keys || !buf || !fl->start || !fl->bytes || !fl->mult || !fl->w ||
	    (sharing == TP__SHARING_WORSE && !fl->w_rtt) ||
	    !fl->hops || !fl->ends[0] || !fl->ends[1] || !fl->lanes ||
	    task_rails(g, a, map, &rail)) {
		rc = TP_ENOMEM;
		goto out;
	}
	for (size_t k = 0; k < kcap; k++)
		keys[k].f = -1;
	size_t nl = 0;
	fl->start[0] = 0;
	for (int32_t u = 0; u < g->ntasks; u++) {
		int32_t ni = a->node[map[u]];
		int64_t ahead = g->xadj[u];
		for (int64_t e = g->xadj[u]; e < g->xadj[u + 1]; e++) {
			for (; ahead < g->xadj[u + 1] && ahead < e + FLOW_PREFETCH; ahead++) {
				int32_t nv = a->node[map[g->adjncy[ahead]]];
				if (nv != ni)
					__builtin_prefetch(&keys[flow_hash(ni, nv,
						tp__graph_w_exchange(g, u, ahead),
						rail ? rail[u] : -1,
						rail ? rail[g->adjncy[ahead]] : -1) & (kcap - 1)]);
			}
			int32_t v = g->adjncy[e];
			int32_t nj = a->node[map[v]];
			double w = tp__graph_w_exchange(g, u, e);
			if (flow_of)
				flow_of[e] = -1;
			if (!(w > 0))
				continue;
			if (ni == nj) {
				double s = w / m->fab.intra_bw;
				if (s > fl->intra_s)
					fl->intra_s = s;
				continue;
			}
			fl->messages++;
			int ri = rail ? rail[u] : -1, rj = rail ? rail[v] : -1;
			size_t h = flow_hash(ni, nj, w, ri, rj) & (kcap - 1);
			while (keys[h].f >= 0 && !(keys[h].i == ni && keys[h].j == nj &&
						   keys[h].w == w && keys[h].ri == ri &&
						   keys[h].rj == rj))
				h = (h + 1) & (kcap - 1);
			if (keys[h].f >= 0) {
				fl->mult[keys[h].f] += 1;
				if (flow_of)
					flow_of[e] = keys[h].f;
				continue;
			}
			int len = route_rails(m, nlane_ids, ni, nj, ri, rj, buf,
					      (int)cap_r);
			if (len < 0) {
				rc = tp_error_set(err, TP_EINVAL, "predict: no route "
						  "between nodes %d and %d", (int)ni,
						  (int)nj);
				goto out;
			}
			if (nl + (size_t)len > lcap) {
				size_t ncap = 2 * lcap + (size_t)len;
				int32_t *grown = realloc(fl->lanes, ncap * sizeof *grown);
				if (!grown) {
					rc = TP_ENOMEM;
					goto out;
				}
				fl->lanes = grown;
				lcap = ncap;
			}
			for (int k = 0; k < len; k++) {
				int32_t d = lane_index(&lm, &nlanes, buf[k]);
				if (d < 0) {
					rc = TP_ENOMEM;
					goto out;
				}
				fl->lanes[nl++] = d;
			}
			int64_t f = fl->nflows++;
			if (flow_of)
				flow_of[e] = f;
			keys[h] = (struct flow_key){ ni, nj, w, ri, rj, f };
			fl->bytes[f] = w;
			fl->mult[f] = 1;
			int hops = tp__fabric_route_hops(m, len);
			fl->hops[f] = message_hops(m, w, hops);
			fl->ends[0][f] = map[u];
			fl->ends[1][f] = map[v];
			/* every lane has the same latency: a route's is its
			 * hops */
			double rtt = hops > 0 ? 1.0 / hops : 1.0;
			fl->w[f] = sharing == TP__SHARING_RTT ? rtt : 1.0;
			if (fl->w_rtt)
				fl->w_rtt[f] = rtt;
			fl->start[f + 1] = (int64_t)nl;
		}
	}
	fl->nlanes = nlanes;
	fl->bw = tp__malloc_array((size_t)nlanes + 1, sizeof *fl->bw);
	if (!fl->bw) {
		rc = TP_ENOMEM;
		goto out;
	}
	tp__routers_each(&lm, put_lane_bw, &(struct lane_bw_arg){ m, nlane_ids,
								   fl->bw });
out:
	if (rc == TP_ENOMEM)
		tp_error_set(err, rc, "predict: out of memory");
	free(keys);
	free(buf);
	free(rail);
	tp__routers_free(&lm);
	if (rc)
		flows_free(fl);
	return rc;
}

/* ---- the entry points ---- */

int64_t tp__predict_work(const tp_graph *g, const tp_alloc *a)
{
	int64_t longest = a->m->net->max_route_links(a->m) + 2;
	return 2 * g->nedges * longest;
}

/* What a lane visit costs, about (routing and each round of rates). */
#define PREDICT_NS_PER_VISIT 10.0

bool tp__predict_affordable(const tp_graph *g, const tp_alloc *a,
			    double left_ms)
{
	int64_t work = tp__predict_work(g, a);
	if (work > TP__PREDICT_LAUNCH_WORK)
		return false;
	double est = (double)work * PREDICT_NS_PER_VISIT * TP__PREDICT_ROUNDS / 1e6;
	return left_ms <= 0 || est <= left_ms / 4;
}

/* What predict_run is asked besides the map: the filling's limits, and
 * (past_us > 0) the time past which the candidate is out of the running
 * (tp__fill_opts.past: then *past and out's time is the bound reached). */
struct predict_ask {
	int64_t max_work;
	bool every_pass, afresh;
	bool no_fill;        /* the bound alone, as past the work limit */
	double past_us;
	bool *past;
	/* what it gives besides out (each NULL: not wanted) */
	double *task_end;    /* each task's end (us) */
	double *node_end;    /* each allocation node's latest end (us) */
	double *alone_us;    /* the slowest message alone */
};

static int predict_run(const tp_graph *g, const tp_alloc *a, const int32_t *map,
		       const struct predict_ask *ask, tp_prediction *out,
		       tp_error *err);

static int64_t launch_limit(const tp_graph *g, const tp_alloc *a, bool budget)
{
	if (!budget)
		return TP__PREDICT_MAX_WORK;
	/* the rounds tp__predict_affordable counted, then the bound */
	int64_t work = tp__predict_work(g, a);
	return (work < TP__PREDICT_LAUNCH_WORK ? work : TP__PREDICT_LAUNCH_WORK) *
	       TP__PREDICT_ROUNDS;
}

int tp__predict_launch(const tp_graph *g, const tp_alloc *a,
		       const int32_t *map, bool budget, tp_prediction *out)
{
	return tp__predict_launch_tasks(g, a, map, budget, out, NULL);
}

int tp__predict_launch_tasks(const tp_graph *g, const tp_alloc *a,
			     const int32_t *map, bool budget, tp_prediction *out,
			     double *task_end)
{
	struct predict_ask ask = { .max_work = launch_limit(g, a, budget),
				   .every_pass = budget, .task_end = task_end };
	return predict_run(g, a, map, &ask, out, NULL);
}

int tp__predict_launch_past(const tp_graph *g, const tp_alloc *a,
			    const int32_t *map, bool budget, double past_us,
			    tp_prediction *out, bool *past)
{
	struct predict_ask ask = { .max_work = launch_limit(g, a, budget),
				   .every_pass = budget, .past_us = past_us,
				   .past = past };
	*past = false;
	return predict_run(g, a, map, &ask, out, NULL);
}

/* The latency of the pattern's collective rounds (tp__graph_rounds_exchange)
 * in one exchange, in seconds: each round waits for the one before, so a
 * task pays the latency of every one (its route's hops x the hop latency;
 * none inside a node) where the exchange's own messages overlap theirs.
 * The slowest task's sum; rounds of different tasks overlap.  A trace's
 * all-reduce steps and all-to-all rounds are a few bytes each: their bytes
 * are nothing to the filling, their latency is what the placement adds
 * (miniAMR's all-reduces, a checksum a stage).  *off: the same with a
 * round inside a node at split_hops hops (what it would cost split).  0
 * without rounds or without a hop latency.  TP_OK or TP_ENOMEM. */
static int rounds_latency_split(const tp_graph *g, const tp_alloc *a,
				const int32_t *map, int split_hops, double *in,
				double *off)
{
	const tp_machine *m = a->m;
	double lat = m->fab.hop_lat;
	*in = *off = 0;
	if (!g->rounds || !(lat > 0))
		return TP_OK;
	int64_t nids = tp__fabric_kind_lanes(m);
	int cap = (int)(m->net->max_route_links(m) + 3);
	int64_t *buf = tp__malloc_array((size_t)cap, sizeof *buf);
	int *rail = NULL;
	if (!buf || task_rails(g, a, map, &rail)) {
		free(buf);
		return TP_ENOMEM;
	}
	for (int32_t u = 0; u < g->ntasks; u++) {
		int32_t ni = a->node[map[u]];
		double sum = 0, inside = 0;
		for (int64_t e = g->xadj[u]; e < g->xadj[u + 1]; e++) {
			double r = tp__graph_rounds_exchange(g, e);
			int32_t v = g->adjncy[e], nj = a->node[map[v]];
			if (!(r > 0))
				continue;
			if (ni == nj) {
				inside += r;
				continue;
			}
			int len = route_rails(m, nids, ni, nj, rail ? rail[u] : -1,
					      rail ? rail[v] : -1, buf, cap);
			if (len > 0)
				sum += r * tp__fabric_route_hops(m, len) * lat;
		}
		*in = fmax(*in, sum);
		*off = fmax(*off, sum + inside * split_hops * lat);
	}
	free(buf);
	free(rail);
	return TP_OK;
}

/* rounds_latency_split's *in, or -1: out of memory. */
static double rounds_latency(const tp_graph *g, const tp_alloc *a,
			     const int32_t *map)
{
	double in, off;
	return rounds_latency_split(g, a, map, 0, &in, &off) ? -1 : in;
}

/* The fewest hops between two consecutive nodes of a (0: one node):
 * between two nodes of a leaf where a has them. */
static int fewest_hops(const tp_alloc *a)
{
	const tp_machine *m = a->m;
	int64_t nids = tp__fabric_kind_lanes(m);
	int cap = (int)(m->net->max_route_links(m) + 3), best = 0;
	int64_t *buf = tp__malloc_array((size_t)cap, sizeof *buf);
	for (int32_t k = 1; buf && k < a->nnodes; k++) {
		int len = route_rails(m, nids, a->node[k - 1], a->node[k], -1, -1,
				      buf, cap);
		int h = len > 0 ? tp__fabric_route_hops(m, len) : 0;
		if (h > 0 && (best == 0 || h < best))
			best = h;
	}
	free(buf);
	return best;
}

int tp__predict_rounds(const tp_graph *g, const tp_alloc *a, const int32_t *map,
		       double *in_us, double *off_us)
{
	int rc = rounds_latency_split(g, a, map, fewest_hops(a), in_us, off_us);
	*in_us *= 1e6;
	*off_us *= 1e6;
	return rc;
}

/* The bound alone, message by message: nothing kept but each lane's load
 * (an exchange too large to keep its routes). */
static int bound_streaming(const tp_graph *g, const tp_alloc *a,
			   const int32_t *map, tp_prediction *out, tp_error *err)
{
	const tp_machine *m = a->m;
	int64_t nids = tp__fabric_kind_lanes(m), nall = tp__fabric_lanes(m);
	int cap = (int)(m->net->max_route_links(m) + 3);
	double *load = tp__calloc((size_t)nall + 1, sizeof *load);
	int64_t *buf = tp__malloc_array((size_t)cap, sizeof *buf);
	int *rail = NULL;
	if (!load || !buf || task_rails(g, a, map, &rail)) {
		free(load);
		free(buf);
		return tp_error_set(err, TP_ENOMEM, "predict: out of memory");
	}
	double b = 0, lat = m->fab.hop_lat;
	int rc = TP_OK;
	for (int32_t u = 0; u < g->ntasks && !rc; u++) {
		int32_t ni = a->node[map[u]];
		for (int64_t e = g->xadj[u]; e < g->xadj[u + 1]; e++) {
			int32_t v = g->adjncy[e];
			int32_t nj = a->node[map[v]];
			double w = tp__graph_w_exchange(g, u, e);
			if (!(w > 0))
				continue;
			if (ni == nj) {
				b = fmax(b, w / m->fab.intra_bw);
				continue;
			}
			int len = route_rails(m, nids, ni, nj, rail ? rail[u] : -1,
					      rail ? rail[v] : -1, buf, cap);
			if (len < 0) {
				rc = tp_error_set(err, TP_EINVAL, "predict: no route "
						  "between nodes %d and %d", (int)ni, (int)nj);
				break;
			}
			double minbw = HUGE_VAL;
			for (int k = 0; k < len; k++) {
				load[buf[k]] += w;
				minbw = fmin(minbw, lane_bw(m, nids, buf[k]));
			}
			int hops = message_hops(m, w, tp__fabric_route_hops(m, len));
			b = fmax(b, w / minbw + hops * lat);
			out->messages++;
		}
	}
	for (int64_t l = 0; l < nall && !rc; l++)
		if (load[l] > 0) {
			out->links++;
			b = fmax(b, load[l] / lane_bw(m, nids, l));
		}
	free(load);
	free(buf);
	free(rail);
	double rl = rc ? 0 : rounds_latency(g, a, map);
	if (rl < 0)
		rc = tp_error_set(err, TP_ENOMEM, "predict: out of memory");
	out->flows = out->messages;
	out->bound_us = out->exchange_us = (b + fmax(rl, 0)) * 1e6;
	out->bound_only = true;
	return rc;
}

/* Each task's end (us): when the last message it sends or receives
 * between nodes ends (end_of: each flow's, seconds), 0 without one. */
static void tasks_end(const tp_graph *g, const int64_t *flow_of,
		      const double *end_of, double *task_end)
{
	for (int32_t u = 0; u < g->ntasks; u++)
		task_end[u] = 0;
	for (int32_t u = 0; u < g->ntasks; u++)
		for (int64_t e = g->xadj[u]; e < g->xadj[u + 1]; e++) {
			if (flow_of[e] < 0)
				continue;
			double t = end_of[flow_of[e]] * 1e6;
			int32_t v = g->adjncy[e];
			task_end[u] = fmax(task_end[u], t);
			task_end[v] = fmax(task_end[v], t);
		}
}

/* The exchange filled with fl's sharing; where it is not known (w_rtt),
 * filled again with the RTT weights, and the later end of each (the
 * exchange's and every flow's) kept, the rounds of both counted (the
 * callers' work limits count fillings).  A first filling past fo's past
 * needs no second. */
static int fill_sharings(struct tp__flows *fl, double lat,
			 const struct tp__fill_opts *fo, struct tp__fill_out *fill,
			 double *end_of)
{
	int rc = tp__flows_fill(fl, lat, fo, fill, end_of);
	if (rc || !fl->w_rtt || fill->past)
		return rc;
	double *end2 = NULL;
	if (end_of && !(end2 = tp__malloc_array((size_t)fl->nflows + 1,
						 sizeof *end2)))
		return TP_ENOMEM;
	double *fair = fl->w;
	struct tp__fill_out rtt = { 0 };
	fl->w = fl->w_rtt;
	rc = tp__flows_fill(fl, lat, fo, &rtt, end2);
	fl->w = fair;
	if (!rc) {
		for (int64_t f = 0; end_of && f < fl->nflows; f++)
			end_of[f] = fmax(end_of[f], end2[f]);
		fill->time = fmax(fill->time, rtt.time);
		fill->rounds += rtt.rounds;
		fill->lazy += rtt.lazy;
		fill->work += rtt.work;
		fill->cut_short |= rtt.cut_short;
		fill->past |= rtt.past;
	}
	free(end2);
	return rc;
}

static int predict_run(const tp_graph *g, const tp_alloc *a, const int32_t *map,
		       const struct predict_ask *ask, tp_prediction *out,
		       tp_error *err)
{
	double *node_end = ask->node_end, *alone_us = ask->alone_us;
	int64_t max_work = ask->max_work;
	memset(out, 0, sizeof *out);
	if (!g || !a || (!map && g->ntasks > 0))
		return tp_error_set(err, TP_EINVAL, "predict: missing graph, "
				    "allocation or map");
	/* too large to keep every route: the bound, streamed */
	if (max_work > 0 && tp__predict_work(g, a) > max_work) {
		if (node_end)
			return tp_error_set(err, TP_EINVAL, "predict: too large "
					    "to model message by message");
		int rc = bound_streaming(g, a, map, out, err);
		for (int32_t u = 0; ask->task_end && u < g->ntasks; u++)
			ask->task_end[u] = out->bound_us;
		return rc;
	}
	struct tp__flows fl;
	int64_t *flow_of = NULL;
	size_t nent = (size_t)g->xadj[g->ntasks] + 1;
	if (ask->task_end && !(flow_of = tp__malloc_array(nent, sizeof *flow_of)))
		return tp_error_set(err, TP_ENOMEM, "predict: out of memory");
	int rc = build_flows(g, a, map, &fl, flow_of, err);
	if (rc) {
		free(flow_of);
		return rc;
	}
	const tp_machine *m = a->m;
	double lat = m->fab.hop_lat;
	double alone = 0, b = tp__flows_bound(&fl, lat, &alone);
	/* the rounds' latency comes after the exchange's own (both in the
	 * bound and in the time) */
	double rl = b < 0 ? 0 : rounds_latency(g, a, map);
	if (b < 0 || rl < 0) {
		flows_free(&fl);
		return tp_error_set(err, TP_ENOMEM, "predict: out of memory");
	}
	b += rl;
	out->bound_us = b * 1e6;
	if (alone_us)
		*alone_us = alone * 1e6;
	out->messages = fl.messages;
	out->flows = fl.nflows;
	out->links = fl.nlanes;
	int64_t route_work = fl.start[fl.nflows];
	if (ask->no_fill || (max_work > 0 && route_work > max_work)) {
		out->exchange_us = out->bound_us;
		out->bound_only = true;
		if (node_end)
			for (int32_t k = 0; k < a->nnodes; k++)
				node_end[k] = out->bound_us;
		for (int32_t u = 0; ask->task_end && u < g->ntasks; u++)
			ask->task_end[u] = out->bound_us;
	} else {
		double *end_of = NULL;
		if ((node_end || ask->task_end) &&
		    !(end_of = tp__malloc_array((size_t)fl.nflows + 1, sizeof *end_of)))
			rc = TP_ENOMEM;
		/* the exchange's own past what is left of past_us once the
		 * rounds' latency is paid */
		struct tp__fill_opts fo = { max_work, ask->every_pass, ask->afresh,
					    ask->past_us > 0 ? ask->past_us * 1e-6 - rl : 0 };
		struct tp__fill_out fill = { 0 };
		if (!rc && ask->past_us > 0 && !(b * 1e6 <= ask->past_us))
			fill = (struct tp__fill_out){ .time = b - rl, .past = true };
		else if (!rc)
			rc = fill_sharings(&fl, lat, &fo, &fill, end_of);
		if (rc)
			tp_error_set(err, rc, "predict: out of memory");
		out->rounds = fill.rounds;
		out->bound_only = fill.cut_short || fill.past;
		if (ask->past)
			*ask->past = fill.past;
		/* rounding aside, never below the bound */
		out->exchange_us = rc ? 0 : fmax(fill.time + rl, b) * 1e6;
		if (fill.past)
			out->bound_us = out->exchange_us;
		if (!rc && node_end) {
			for (int32_t k = 0; k < a->nnodes; k++)
				node_end[k] = 0;
			for (int64_t f = 0; f < fl.nflows; f++)
				for (int e = 0; e < 2; e++) {
					double *ne = &node_end[fl.ends[e][f]];
					*ne = fmax(*ne, end_of[f] * 1e6);
				}
		}
		if (!rc && ask->task_end)
			tasks_end(g, flow_of, end_of, ask->task_end);
		free(end_of);
	}
	free(flow_of);
	flows_free(&fl);
	return rc;
}

/* The bound alone (predict_run's, the same bits): no filling. */
int tp__predict_lower(const tp_graph *g, const tp_alloc *a, const int32_t *map,
		      int64_t max_work, double *bound_us)
{
	tp_prediction out;
	memset(&out, 0, sizeof out);
	if (!g || !a || (!map && g->ntasks > 0))
		return TP_EINVAL;
	if (max_work > 0 && tp__predict_work(g, a) > max_work) {
		int rc = bound_streaming(g, a, map, &out, NULL);
		*bound_us = out.bound_us;
		return rc;
	}
	struct tp__flows fl;
	int rc = build_flows(g, a, map, &fl, NULL, NULL);
	if (rc)
		return rc;
	double b = tp__flows_bound(&fl, a->m->fab.hop_lat, NULL);
	flows_free(&fl);
	double rl = b < 0 ? 0 : rounds_latency(g, a, map);
	if (b < 0 || rl < 0)
		return TP_ENOMEM;
	*bound_us = (b + rl) * 1e6;
	return TP_OK;
}

int tp__predict_launch_lower(const tp_graph *g, const tp_alloc *a,
			     const int32_t *map, bool budget, double *bound_us)
{
	return tp__predict_lower(g, a, map, launch_limit(g, a, budget), bound_us);
}

int tp__predict_launch_bound(const tp_graph *g, const tp_alloc *a,
			     const int32_t *map, tp_prediction *out)
{
	struct predict_ask ask = { .max_work = launch_limit(g, a, false),
				   .no_fill = true };
	return predict_run(g, a, map, &ask, out, NULL);
}

int tp__predict(const tp_graph *g, const tp_alloc *a, const int32_t *map,
		int64_t max_work, tp_prediction *out, tp_error *err)
{
	struct predict_ask ask = { .max_work = max_work };
	return predict_run(g, a, map, &ask, out, err);
}

int tp__predict_nodes(const tp_graph *g, const tp_alloc *a, const int32_t *map,
		      int64_t max_work, tp_prediction *out, double *node_end,
		      double *alone_us, tp_error *err)
{
	struct predict_ask ask = { .max_work = max_work, .node_end = node_end,
				   .alone_us = alone_us };
	return predict_run(g, a, map, &ask, out, err);
}

int tp__predict_afresh(const tp_graph *g, const tp_alloc *a, const int32_t *map,
		       int64_t max_work, tp_prediction *out, double *node_end,
		       tp_error *err)
{
	struct predict_ask ask = { .max_work = max_work, .afresh = true,
				   .node_end = node_end };
	return predict_run(g, a, map, &ask, out, err);
}

int tp_predict_exchange(const tp_graph *g, const tp_alloc *a,
			const int32_t *map, tp_prediction *out, tp_error *err)
{
	if (!out)
		return tp_error_set(err, TP_EINVAL, "predict: out is NULL");
	int rc = tp_mapping_validate(g, a, map, err);
	return rc ? rc : tp__predict(g, a, map, TP__PREDICT_MAX_WORK, out, err);
}

void tp__fmt_us(char *buf, size_t len, double us)
{
	if (us >= 100)
		snprintf(buf, len, "%.0f", us);
	else if (us >= 10)
		snprintf(buf, len, "%.1f", us);
	else
		snprintf(buf, len, "%.3g", us);
}

int tp_prediction_line(char *buf, size_t len, const tp_prediction *from,
		       const tp_prediction *to)
{
	if (!buf || !from || !to)
		return -1;
	char a[32], b[32];
	tp__fmt_us(a, sizeof a, from->exchange_us);
	tp__fmt_us(b, sizeof b, to->exchange_us);
	double ratio = from->exchange_us > 0 ? to->exchange_us / from->exchange_us : 1;
	return snprintf(buf, len, "predicted exchange %s us -> %s us (%.2fx)%s", a,
			b, ratio, from->bound_only || to->bound_only
			? " (bounds: too large to model in full)" : "");
}

int tp_step_phases_line(char *buf, size_t len, const double *from,
			const double *to)
{
	if (!buf || !from || !to)
		return -1;
	int n = snprintf(buf, len, "step by phase:");
	const char *sep = " ";
	for (int i = 0; i < TP_STEP_PHASES && n >= 0; i++) {
		if (from[i] <= 0 && to[i] <= 0)
			continue;    /* a kind of one rank: no exchange */
		char a[32], b[32];
		tp__fmt_us(a, sizeof a, from[i]);
		tp__fmt_us(b, sizeof b, to[i]);
		size_t at = (size_t)n < len ? (size_t)n : len;
		int k = snprintf(buf + at, len - at, "%s%s %s -> %s us", sep,
				 tp_step_phase_name(i), a, b);
		n = k < 0 ? k : n + k;
		sep = ", ";
	}
	return n;
}
