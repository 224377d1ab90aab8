/* topoplace — tori side by side: the model of Slurm's topology/torus3d (its
 * records are built in torus3d_build.c), and the network kind topology/ring
 * builds on (ring.c: a ring is a torus of one dimension).
 *
 * The model.  One torus is exactly the torus tp_machine_create gives: three
 * wrapped dimensions x, y, z (kind "torus"; the geometric mapper works on
 * it).  Several toruses — and Slurm's rings — are tori that share no link
 * (kind "tori", "ring"): Slurm assumes nothing of what joins them and never
 * places a job's segment across two, so nothing between them is made up.
 * Inside a domain (a torus or ring) the distance is the hop count, the
 * shorter way round on every axis of the domain's own extents, routes are
 * dimension-order as on a torus (torus.c).  Between two domains the
 * distance is one fixed cost, the largest domain diameter + 1: more than any
 * two routers of one domain are apart, the same for every pair of domains,
 * so that a mapper keeps talking tasks inside a domain and finds no domain
 * nearer than another.  A route between domains crosses two links: the
 * sending router's port into the network between the domains, and the
 * receiving router's port out of it.  hierarchy(): the domain, then the
 * node, for the hierarchical mapper.
 *
 * Box: the largest extent of each axis over the domains, then the domain's
 * number: rings (position, ring), toruses (x, y, z, torus).  An axis wraps
 * in the box when every domain with routers spans its whole extent (rings of
 * one size, toruses of equal dims), as the geometric mapper's seam shift
 * reads it; routers of the box outside their domain's extents have no node.
 *
 * Links, full duplex, one id per direction (network.h): the cable (router
 * * nd + d) joins a router to its +1 neighbour along axis d of its domain,
 * round the domain's ring; id cable * 2 runs up, cable * 2 + 1 back down,
 * as on a torus.  Ports follow the cables: id cables + 2 * router leaves the
 * router for the network between domains, + 1 comes back.  Names in Slurm's
 * address style: "ring0:3->ring0:4", "pod1:1:2:0->pod1:2:2:0",
 * "pod1:0:0:0->(between toruses)".
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/network.h"
#include "net/records.h"
#include "net/machine_internal.h"

/* ---- the network: domains side by side ---- */

struct tori {
	int nd;                /* axes of a domain: 1 (rings) or 3 (toruses) */
	int32_t n;             /* domains */
	int (*dims)[3];        /* each domain's extents (0: no routers) */
	char **name;           /* each domain's name, owned */
	int64_t diam;          /* the largest domain diameter */
	int64_t cross;         /* distance between two domains: diam + 1 */
	int64_t cables;        /* nrouters * nd * 2: the first port id */
};

/* Hops between x and y along an axis of extent D, the shorter way round;
 * straight when either lies outside the domain (no router there: any
 * answer will do, this one is defined). */
static int64_t hops(int x, int y, int D)
{
	int h = x > y ? x - y : y - x;
	if (x < D && y < D && D - h < h)
		h = D - h;
	return h;
}

static int64_t distance(const struct tp_machine *m, const int *a, const int *b)
{
	const struct tori *t = m->net_data;
	int nd = t->nd;
	if (a[nd] != b[nd])
		return t->cross;
	const int *D = t->dims[a[nd]];
	int64_t h = 0;
	for (int d = 0; d < nd; d++)
		h += hops(a[d], b[d], D[d]);
	return h;
}

/* Inside p's domain the nearest router of the box's slice: per axis 0 when
 * p is inside the slice's range, else the nearer end of the range (clipped
 * to the domain), which on a ring is the nearest point of an arc not
 * holding p.  Any other domain in the box: the fixed cost. */
static int64_t range_lower_bound(const struct tp_machine *m, const int *p,
				 const int *lo, const int *hi)
{
	const struct tori *t = m->net_data;
	int nd = t->nd, dom = p[nd];
	int64_t best = -1;
	if (lo[nd] <= dom && dom <= hi[nd]) {
		const int *D = t->dims[dom];
		int64_t lb = 0;
		bool empty = false;
		for (int d = 0; d < nd && !empty; d++) {
			int top = hi[d] < D[d] - 1 ? hi[d] : D[d] - 1;
			if (lo[d] > top) {
				empty = true;   /* no router of the domain there */
			} else if (p[d] < lo[d] || p[d] > top) {
				int64_t x = hops(p[d], lo[d], D[d]), y = hops(p[d], top, D[d]);
				lb += x < y ? x : y;
			}
		}
		if (!empty)
			best = lb;
	}
	if ((lo[nd] < dom || hi[nd] > dom) && (best < 0 || t->cross < best))
		best = t->cross;
	return best < 0 ? 0 : best;   /* no router in the box: 0 is safe */
}

static int64_t router_id(const struct tp_machine *m, const int *c)
{
	int64_t r = 0;
	for (int d = 0; d < m->ndims; d++)
		r += (int64_t)c[d] * m->stride[d];
	return r;
}

static int route(const struct tp_machine *m, const int *a, const int *b,
		 int64_t *links, int cap)
{
	const struct tori *t = m->net_data;
	int nd = t->nd;
	int64_t ra = router_id(m, a), rb = router_id(m, b);
	if (ra == rb)
		return 0;
	if (a[nd] != b[nd]) {
		if (cap < 2 || !links)
			return TP_EINVAL;
		links[0] = t->cables + 2 * ra;          /* out of a's domain */
		links[1] = t->cables + 2 * rb + 1;      /* into b's */
		return 2;
	}
	const int *D = t->dims[a[nd]];
	int64_t total = 0;
	for (int d = 0; d < nd; d++)
		total += hops(a[d], b[d], D[d]);
	if (total > cap || !links)
		return TP_EINVAL;
	/* dimension order; on each axis the shorter way, up on a tie (as
	 * torus.c routes) */
	int n = 0;
	int64_t r = ra;
	for (int d = 0; d < nd; d++) {
		int x = a[d], y = b[d], Dd = D[d];
		bool ring = x < Dd && y < Dd;
		int steps, dir;
		if (ring) {
			int fwd = ((y - x) % Dd + Dd) % Dd;
			steps = fwd <= Dd - fwd ? fwd : Dd - fwd;
			dir = fwd <= Dd - fwd ? 1 : -1;
		} else {
			steps = y > x ? y - x : x - y;
			dir = y >= x ? 1 : -1;
		}
		int64_t st = m->stride[d];
		for (int s = 0; s < steps; s++) {
			if (dir > 0) {
				links[n++] = (r * nd + d) * 2;
				if (ring && x == Dd - 1) {
					x = 0;
					r -= (int64_t)(Dd - 1) * st;
				} else {
					x++;
					r += st;
				}
			} else {
				if (ring && x == 0) {
					x = Dd - 1;
					r += (int64_t)(Dd - 1) * st;
				} else {
					x--;
					r -= st;
				}
				/* the cable up from the router reached, the other way */
				links[n++] = (r * nd + d) * 2 + 1;
			}
		}
	}
	return n;
}

static int64_t max_route_links(const struct tp_machine *m)
{
	const struct tori *t = m->net_data;
	return t->n > 1 && t->diam < 2 ? 2 : t->diam;
}

static int64_t link_count(const struct tp_machine *m)
{
	const struct tori *t = m->net_data;
	return m->nrouters * (t->nd + 1) * 2;
}

/* "ring0:3", "pod1:1:2:0": Slurm's address of the router. */
static void label(const struct tp_machine *m, const int *c, char *buf,
		  size_t len)
{
	const struct tori *t = m->net_data;
	const char *nm = t->name[c[t->nd]];
	if (t->nd == 1)
		snprintf(buf, len, "%s:%d", nm, c[0]);
	else
		snprintf(buf, len, "%s:%d:%d:%d", nm, c[0], c[1], c[2]);
}

/* The router a cable leaves going up, and the one it reaches. */
static void cable_ends(const struct tp_machine *m, int64_t cable, int *a, int *b)
{
	const struct tori *t = m->net_data;
	int d = (int)(cable % t->nd);
	tp__router_coords(m, cable / t->nd, a);
	memcpy(b, a, sizeof(int) * (size_t)m->ndims);
	int Dd = t->dims[a[t->nd]][d];
	b[d] = a[d] + 1 == Dd ? 0 : a[d] + 1;
}

static void link_name(const struct tp_machine *m, int64_t link, char *buf,
		      size_t len)
{
	const struct tori *t = m->net_data;
	int a[TP_MAX_DIMS], b[TP_MAX_DIMS];
	char la[TP__HOSTNAME_MAX], lb[TP__HOSTNAME_MAX];
	if (link < t->cables) {
		cable_ends(m, link >> 1, a, b);
		label(m, a, la, sizeof la);
		label(m, b, lb, sizeof lb);
		if (link & 1)
			snprintf(buf, len, "%s->%s", lb, la);
		else
			snprintf(buf, len, "%s->%s", la, lb);
		return;
	}
	const char *net = t->nd == 1 ? "(between rings)" : "(between toruses)";
	tp__router_coords(m, (link - t->cables) >> 1, a);
	label(m, a, la, sizeof la);
	if (link & 1)
		snprintf(buf, len, "%s->%s", net, la);
	else
		snprintf(buf, len, "%s->%s", la, net);
}

/* Cables inside a domain join two routers; a port joins a router to the
 * network between domains, which has no coordinates: TP_ENOENT, as for
 * the ids of routers outside their domain and rings of one. */
static int link_ends(const struct tp_machine *m, int64_t link, int *a, int *b)
{
	const struct tori *t = m->net_data;
	if (link >= t->cables)
		return TP_ENOENT;
	cable_ends(m, link >> 1, a, b);
	const int *D = t->dims[a[t->nd]];
	for (int k = 0; k < t->nd; k++)
		if (a[k] >= D[k])
			return TP_ENOENT;
	if (D[(link >> 1) % t->nd] == 1)
		return TP_ENOENT;
	if (link & 1) {
		int tmp[TP_MAX_DIMS];
		memcpy(tmp, a, sizeof(int) * (size_t)m->ndims);
		memcpy(a, b, sizeof(int) * (size_t)m->ndims);
		memcpy(b, tmp, sizeof(int) * (size_t)m->ndims);
	}
	return TP_OK;
}

/* The domain: its routers are closer to each other than to any other
 * domain's, and the domains are all equally far apart. */
static int hierarchy(const struct tp_machine *m, const int *r, int64_t *path,
		     int cap)
{
	const struct tori *t = m->net_data;
	if (cap < 1)
		return TP_EINVAL;
	path[0] = r[t->nd];
	return 1;
}

static void tori_free(struct tori *t)
{
	if (!t)
		return;
	for (int32_t i = 0; t->name && i < t->n; i++)
		free(t->name[i]);
	free(t->name);
	free(t->dims);
	free(t);
}

static void destroy(void *net_data)
{
	tori_free(net_data);
}

/* Slurm's rings and its toruses side by side differ only in their names. */
#define TORI_OPS(name) { \
	.kind = (name), \
	.caps = TP__CAP(TP_CAP_COORDINATES), \
	TP__NET_OPS_ROUTING, \
	.link_ends = link_ends, \
	.destroy = destroy, \
	.hierarchy = hierarchy, \
}

static const struct tp_net_ops ring_ops = TORI_OPS("ring");
static const struct tp_net_ops tori_ops = TORI_OPS("tori");

int tp__tori_new(tp_machine **out, int nd, const struct tp__tori_domain *dom,
		 int32_t n, tp_error *err)
{
	if (!out)
		return tp_error_set(err, TP_EINVAL, "tori: out is NULL");
	*out = NULL;
	if ((nd != 1 && nd != 3) || !dom || n < 1)
		return tp_error_set(err, TP_EINVAL,
				    "tori: %ld domains of %d axes, expected some of 1 or 3",
				    (long)n, nd);
	struct tori *t = calloc(1, sizeof *t);
	if (!t || !(t->dims = tp__malloc_array((size_t)n, sizeof *t->dims)) ||
	    !(t->name = tp__calloc((size_t)n, sizeof *t->name))) {
		tori_free(t);
		return tp_error_set(err, TP_ENOMEM, "tori: out of memory");
	}
	t->nd = nd;
	t->n = n;
	int box[TP_MAX_DIMS];
	bool wrap[TP_MAX_DIMS] = { false };
	for (int d = 0; d < nd; d++)
		box[d] = 1;
	box[nd] = n;
	for (int32_t i = 0; i < n; i++) {
		int64_t diam = 0;
		for (int d = 0; d < 3; d++) {
			int v = d < nd ? dom[i].dims[d] : 1;
			if (v < 0) {
				tori_free(t);
				return tp_error_set(err, TP_EINVAL,
						    "tori: domain %ld: extent %d of axis %d",
						    (long)i, v, d);
			}
			t->dims[i][d] = v;
			if (d < nd && v > box[d])
				box[d] = v;
			diam += v / 2;
		}
		if (diam > t->diam)
			t->diam = diam;
		if (!(t->name[i] = strdup(dom[i].name ? dom[i].name : ""))) {
			tori_free(t);
			return tp_error_set(err, TP_ENOMEM, "tori: out of memory");
		}
	}
	/* an axis of the box wraps when every domain with routers spans it */
	for (int d = 0; d < nd; d++) {
		bool any = false, all = true;
		for (int32_t i = 0; i < n; i++) {
			bool has = t->dims[i][0] && t->dims[i][1] && t->dims[i][2];
			any |= has;
			all &= !has || t->dims[i][d] == box[d];
		}
		wrap[d] = any && all;
	}
	t->cross = t->diam + 1;
	/* link ids run to routers * (nd + 1) * 2: int64 */
	int64_t routers = 1;
	for (int d = 0; d <= nd; d++) {
		if (routers > INT64_MAX / (2 * (nd + 1)) / box[d]) {
			tori_free(t);
			return tp_error_set(err, TP_EINVAL,
					    "tori: too many routers (the box of the domains' "
					    "largest extents overflows)");
		}
		routers *= box[d];
	}
	int rc = tp__machine_new(out, nd + 1, box, wrap, nd == 1 ? &ring_ops : &tori_ops,
				 t, err);
	if (rc) {
		tori_free(t);
		return rc;
	}
	t->cables = routers * nd * 2;
	return TP_OK;
}

/* The machines of this kind (network.h), by which the config tells which
 * kind built a machine. */
const struct tp_net_ops *const tp__rings_machines[] = { &ring_ops, &tori_ops,
							 NULL };
