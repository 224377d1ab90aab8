/* topoplace — tori and meshes (Network=torus, Network=mesh).
 *
 * Routers sit at every point of the coordinate box dims[0] x ... x
 * dims[ndims-1]; a wrapped dimension closes into a ring (torus), an
 * unwrapped one is a line (mesh); a machine may mix both.
 *
 * Distance: the hop count between two routers, the shorter way round on
 * every wrapped dimension.  With hop costs (tp_machine_set_hop_cost, the
 * config's Distance=bandwidth: round(fastest bandwidth / bandwidth of d), at
 * least 1) a hop along dimension d costs hop_cost[d] and the distance is the
 * weighted sum, so that a slow dimension's hop counts as several.  Without
 * them (every cost 1) the machine is "plain_hops" and the core computes
 * distances inline (network.h, metrics.c) without calling into this file.
 * At most 6 dimensions of < 2^31 hops at <= 10^6 each: distances stay far
 * inside int64.
 *
 * Routing (for congestion): dimension-order, dimensions in increasing order;
 * on a wrapped dimension the shorter direction, the positive one when both
 * are equally short.  Routes count links, never cost, and every link weighs
 * 1: LinkBandwidth= changes distances only through the hop costs.
 *
 * Links are full duplex, one id per direction (network.h): the cable
 * (router * ndims + d) joins router r to its +1 neighbour along d (wrapping
 * round on a torus; on a mesh the cables of the last router of each line are
 * unused); id cable * 2 runs from r up to that neighbour, cable * 2 + 1 back
 * down.  Names, after the sending router: "(3,0,7)->+x", "(4,0,7)->-x".
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "net/network.h"
#include "net/machine_internal.h"

struct torus {
	double link_bw[TP_MAX_DIMS];   /* per dimension, default 1 */
	int hop_cost[TP_MAX_DIMS];     /* cost of one hop per dimension */
	bool bw_given;                 /* LinkBandwidth= (GB/s) set */
};

static const struct tp_net_ops torus_ops, mesh_ops;

static struct torus *torus_of(const tp_machine *m)
{
	if (!m || (m->net != &torus_ops && m->net != &mesh_ops))
		return NULL;
	return m->net_data;
}

/* Hops weighted by hop_cost. */
static int64_t distance(const struct tp_machine *m, const int *a, const int *b)
{
	const struct torus *t = m->net_data;
	int64_t h = 0;
	for (int d = 0; d < m->ndims; d++)
		h += tp__axis_hops(m, d, a[d], b[d]) * t->hop_cost[d];
	return h;
}

static int64_t range_lower_bound(const struct tp_machine *m, const int *p,
				 const int *lo, const int *hi)
{
	const struct torus *t = m->net_data;
	int64_t lb = 0;
	for (int d = 0; d < m->ndims; d++)
		lb += tp__axis_gap(m, d, p[d], lo[d], hi[d]) * t->hop_cost[d];
	return lb;
}

/* How a route moves along dimension d from x to y: its steps, and whether
 * up (+1).  Round a ring the shorter way, ties up; both inside 0..D-1:
 * one correction, no division (it was two per dimension of every route).
 * route() and route_diff() both take it, so their links are the same. */
static inline int axis_steps(const struct tp_machine *m, int d, int x, int y,
			     bool *up)
{
	if (m->wrap[d]) {
		int D = m->dims[d], fwd = y - x;
		if (fwd < 0)
			fwd += D;
		*up = fwd <= D - fwd;
		return *up ? fwd : D - fwd;
	}
	*up = y >= x;
	return *up ? y - x : x - y;
}

static int route(const struct tp_machine *m, const int *ca, const int *cb,
		 int64_t *links, int cap)
{
	int64_t hops = 0, r = 0;
	for (int d = 0; d < m->ndims; d++) {
		hops += tp__axis_hops(m, d, ca[d], cb[d]);
		r += (int64_t)ca[d] * m->stride[d];
	}
	if (hops > cap || (hops > 0 && !links))
		return TP_EINVAL;
	int n = 0;
	for (int d = 0; d < m->ndims; d++) {
		int D = m->dims[d];
		int x = ca[d];
		bool up;
		int steps = axis_steps(m, d, x, cb[d], &up);
		int64_t st = m->stride[d];
		for (int s = 0; s < steps; s++) {
			if (up) {
				links[n++] = (r * m->ndims + d) * 2;
				if (x == D - 1) {
					x = 0;
					r -= (int64_t)(D - 1) * st;
				} else {
					x++;
					r += st;
				}
			} else {
				if (x == 0) {
					x = D - 1;
					r += (int64_t)(D - 1) * st;
				} else {
					x--;
					r -= st;
				}
				/* the same cable as r's +d link, the other way */
				links[n++] = (r * m->ndims + d) * 2 + 1;
			}
		}
	}
	return n;
}

/* Positions [p0, p0 + len) of dimension d's ring through router base (its
 * position 0), up links (dir 0) or down ones (dir 1), as k messages in the
 * difference array: wrapping past the last position, the run is two. */
static void ring_add(const struct tp_machine *m, int64_t base, int d, int dir,
		     int p0, int len, uint32_t k, uint32_t *diff)
{
	int D = m->dims[d], end = p0 + len;
	int64_t st = m->stride[d], nd = m->ndims;
#define RING_LINK(p) (((base + (int64_t)(p) * st) * nd + d) * 2 + dir)
	diff[RING_LINK(p0)] += k;
	if (end < D) {
		diff[RING_LINK(end)] -= k;
	} else if (end > D) {
		diff[RING_LINK(0)] += k;
		diff[RING_LINK(end - D)] -= k;
	}
#undef RING_LINK
}

/* route()'s links as runs: the same steps on each dimension (axis_steps),
 * the same order of dimensions. */
static int route_diff(const struct tp_machine *m, const int *ca, const int *cb,
		      uint32_t k, uint32_t *diff)
{
	int64_t r = 0;
	for (int d = 0; d < m->ndims; d++)
		r += (int64_t)ca[d] * m->stride[d];
	int n = 0;
	for (int d = 0; d < m->ndims; d++) {
		int D = m->dims[d], x = ca[d];
		bool up;
		int steps = axis_steps(m, d, x, cb[d], &up);
		if (steps == 0)
			continue;
		int64_t base = r - (int64_t)x * m->stride[d];
		if (up) {
			ring_add(m, base, d, 0, x, steps, k, diff);
		} else {
			/* down from x: the cables below it, x - steps .. x - 1 */
			int p0 = x - steps < 0 ? x - steps + D : x - steps;
			ring_add(m, base, d, 1, p0, steps, k, diff);
		}
		n += steps;
		r = base + (int64_t)cb[d] * m->stride[d];
	}
	return n;
}

/* Prefix sums along every ring, each dimension and direction: a block of
 * stride[d] routers at a time, so that the sums run along memory. */
static void route_diff_sum(const struct tp_machine *m, uint32_t *diff)
{
	int64_t nd = m->ndims;
	for (int d = 0; d < m->ndims; d++) {
		int D = m->dims[d];
		int64_t st = m->stride[d], span = st * D;
		for (int64_t hi = 0; hi < m->nrouters; hi += span)
			for (int p = 1; p < D; p++)
				for (int64_t lo = 0; lo < st; lo++) {
					int64_t r = hi + (int64_t)p * st + lo, q = r - st;
					uint32_t *to = &diff[(r * nd + d) * 2];
					const uint32_t *from = &diff[(q * nd + d) * 2];
					to[0] += from[0];
					to[1] += from[1];
				}
	}
}

static int64_t max_route_links(const struct tp_machine *m)
{
	int64_t dia = 0;
	for (int d = 0; d < m->ndims; d++)
		dia += m->wrap[d] ? m->dims[d] / 2 : m->dims[d] - 1;
	return dia;
}

/* Two directed ids per cable: (router * ndims + d) * 2 + dir. */
static int64_t link_count(const struct tp_machine *m)
{
	return m->nrouters * m->ndims * 2;
}

/* Named after the sending router: "(3,0,7)->+x" leaves (3,0,7) towards
 * (4,0,7); "(4,0,7)->-x" is the same cable the other way. */
static void link_name(const struct tp_machine *m, int64_t link, char *buf,
		      size_t len)
{
	static const char dim_letter[TP_MAX_DIMS] = { 'x', 'y', 'z', 'u', 'v', 'w' };
	int c[TP_MAX_DIMS];
	int dir = (int)(link & 1);
	int64_t cable = link >> 1;
	int d = (int)(cable % m->ndims);
	tp__router_coords(m, cable / m->ndims, c);
	if (dir)
		c[d] = c[d] + 1 == m->dims[d] ? 0 : c[d] + 1;
	char cb[96];
	tp__fmt_coords(cb, sizeof cb, c, m->ndims);
	snprintf(buf, len, "%s->%c%c", cb, dir ? '-' : '+', dim_letter[d]);
}

/* Cable (r, d) joins router r to its +1 neighbour along d: round the ring
 * on a wrapped dimension; on a mesh the last router of a line has none, and
 * a ring of one router has no cable either.  Directed: a is the sending end
 * (r for id cable * 2, the neighbour for cable * 2 + 1), b the receiving
 * one. */
static int link_ends(const struct tp_machine *m, int64_t link, int *a, int *b)
{
	int64_t cable = link >> 1;
	int64_t r = cable / m->ndims;
	int d = (int)(cable - r * m->ndims);
	tp__router_coords(m, r, a);
	for (int k = 0; k < m->ndims; k++)
		b[k] = a[k];
	if (m->dims[d] == 1 || (!m->wrap[d] && a[d] == m->dims[d] - 1))
		return TP_ENOENT;
	b[d] = a[d] + 1 == m->dims[d] ? 0 : a[d] + 1;
	if (link & 1) {
		int t = a[d];
		a[d] = b[d];
		b[d] = t;
	}
	return TP_OK;
}

/* One table per name; a machine with any wrapped dimension is a torus. */
/* The time model: link (router * ndims + d) * 2 + direction runs at its
 * dimension's LinkBandwidth= (GB/s), else at the fabric's default. */
static double lane_bandwidth(const struct tp_machine *m, int64_t lane)
{
	const struct torus *t = m->net_data;
	if (!t->bw_given)
		return m->fab.node_bw;
	return t->link_bw[(lane >> 1) % m->ndims] * 1e9;
}

/* A torus and a mesh differ only in their boxes' wrap. */
#define TORUS_OPS(name) { \
	.kind = (name), \
	.caps = TP__CAP(TP_CAP_COORDINATES), \
	TP__NET_OPS_ROUTING, \
	.route_diff = route_diff, \
	.route_diff_sum = route_diff_sum, \
	.link_ends = link_ends, \
	.destroy = free, \
	.lane_bandwidth = lane_bandwidth, \
}

static const struct tp_net_ops torus_ops = TORUS_OPS("torus");
static const struct tp_net_ops mesh_ops = TORUS_OPS("mesh");

int tp_machine_create(tp_machine **out, int ndims, const int *dims,
		      const bool *wrap, tp_error *err)
{
	if (!out)
		return tp_error_set(err, TP_EINVAL, "tp_machine_create: out is NULL");
	*out = NULL;
	struct torus *t = calloc(1, sizeof *t);
	if (!t)
		return tp_error_set(err, TP_ENOMEM, "machine: out of memory");
	for (int d = 0; d < TP_MAX_DIMS; d++) {
		t->link_bw[d] = 1.0;
		t->hop_cost[d] = 1;
	}
	int rc = tp__machine_new(out, ndims, dims, wrap, &torus_ops, t, err);
	if (rc) {
		free(t);
		return rc;
	}
	tp_machine *m = *out;
	bool wraps = false;
	for (int d = 0; d < m->ndims; d++)
		wraps |= m->wrap[d];
	if (!wraps)
		m->net = &mesh_ops;
	m->plain_hops = true;
	return TP_OK;
}

int tp_machine_set_hop_cost(tp_machine *m, const int *cost, tp_error *err)
{
	if (!m || !cost)
		return tp_error_set(err, TP_EINVAL, "hop cost: missing machine or costs");
	struct torus *t = torus_of(m);
	if (!t)
		return tp_error_set(err, TP_ENOTSUP,
				    "hop cost: only for tori and meshes");
	for (int d = 0; d < m->ndims; d++)
		if (cost[d] < 1 || cost[d] > 1000000)
			return tp_error_set(err, TP_EINVAL,
					    "hop cost of dimension %d is %d, expected 1..1000000",
					    d, cost[d]);
	bool weighted = false;
	for (int d = 0; d < m->ndims; d++) {
		t->hop_cost[d] = cost[d];
		if (cost[d] != 1)
			weighted = true;
	}
	m->plain_hops = !weighted;
	return TP_OK;
}

int tp_machine_hop_cost(const tp_machine *m, int d)
{
	if (!m || d < 0 || d >= m->ndims)
		return 0;
	const struct torus *t = torus_of(m);
	return t ? t->hop_cost[d] : 1;
}

int tp_machine_set_link_bandwidth(tp_machine *m, const double *bw,
				  tp_error *err)
{
	if (!m || !bw)
		return tp_error_set(err, TP_EINVAL, "LinkBandwidth: %s is NULL",
				    m ? "bw" : "machine");
	struct torus *t = torus_of(m);
	if (!t)
		return tp_error_set(err, TP_ENOTSUP,
				    "LinkBandwidth: only for tori and meshes");
	for (int d = 0; d < m->ndims; d++)
		if (!isfinite(bw[d]) || bw[d] <= 0)
			return tp_error_set(err, TP_EINVAL,
					    "LinkBandwidth: bw[%d] is %g, expected a positive number",
					    d, bw[d]);
	for (int d = 0; d < m->ndims; d++)
		t->link_bw[d] = bw[d];
	t->bw_given = true;
	return TP_OK;
}

double tp_machine_link_bandwidth(const tp_machine *m, int dim)
{
	if (!m || dim < 0 || dim >= m->ndims)
		return 0.0;
	const struct torus *t = torus_of(m);
	return t ? t->link_bw[dim] : 1.0;
}

/* The machines of this kind (network.h), by which the config tells which
 * kind built a machine. */
const struct tp_net_ops *const tp__torus_machines[] = { &torus_ops, NULL };
const struct tp_net_ops *const tp__mesh_machines[] = { &mesh_ops, NULL };
