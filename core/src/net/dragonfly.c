/* topoplace — two-level dragonfly / PERCS networks (Network=dragonfly).
 *
 * G groups of A routers; the routers of a group are fully connected by local
 * links; every pair of groups is joined by L global links (LinksPerGroupPair).
 * Router coordinates are (a, g): router a of group g, the embedding geometric
 * mapping works in.  Global link k between groups g and h attaches in group g
 * to router gw(g, h, k) = ((h - g - 1 mod G) * L + k) mod A, i.e. the L(G-1)
 * global ports of a group are dealt round-robin over its routers, peers in
 * increasing order.
 *
 * Distance (minimal, "direct" routing): 0 on one router, 1 inside a group,
 * else min over the L global links of [a != gw] + 1 + [b != gw'].  Every
 * distance is 0 to 3, so hop-bytes barely tell mappings apart: the few global
 * links, which many routers share, are where a mapping shows (congestion;
 * modcolor.c).  The lower bound for a box of routers (graph mapping's
 * nearest-free search) is 0 inside it, else 1.
 * Congestion routing: direct (that minimal path, lowest k on ties), Valiant
 * (through an intermediate group chosen by a hash of the two routers,
 * direct to it and direct on from it), or adaptive: an oblivious model of
 * UGAL-style routing in steady state, where a share s of the traffic takes
 * the non-minimal (Valiant) way and the rest the minimal one.  The share is
 * dealt by router pair: the pair's traffic goes the Valiant way when a
 * second hash of the two routers, as a fraction of 2^32, is below s; over
 * the many router pairs of a job's traffic that is a share s of it
 * (AdaptiveShare=, default 0.5; 0 is direct, 1 Valiant).  A single router
 * pair is not split: the hashes take the pair in one order, so both
 * directions of it go the same kind of way, through the same intermediate
 * group, each on its own directed links.
 * Links are full duplex, one id per direction (network.h): local link x -> y
 * of group g = g*A*A + x*A + y; global link k from group g to group h =
 * G*A*A + (g*G + h)*L + k (some ids unused: x == y, g == h).  Names:
 * "g3:r0->r2" (local), "g1->g4#0" (global).  Every link weighs 1 for
 * congestion; a route has at most 6 links (Valiant: local, global, local,
 * global, local), a distance at most 3.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "net/dragonfly.h"
#include "net/network.h"
#include "net/machine_internal.h"

/* The dragonfly (m->net_data).  The machine has two dimensions: router in
 * group, group. */
struct tp_dfly {
	int groups, routers, links;
	enum tp_dfly_routing routing;
	uint32_t share;      /* adaptive: pairs with a hash below go Valiant */
	double share_f;      /* the share as given */
	double local_bw, global_bw;   /* bytes/s (time model); 0: default */
};

static const struct tp_net_ops dragonfly_ops;

static const struct tp_dfly *dfly_of(const tp_machine *m)
{
	return m && m->net == &dragonfly_ops ? m->net_data : NULL;
}

static inline int mod(int x, int n)
{
	x %= n;
	return x < 0 ? x + n : x;
}

static inline int gw(const struct tp_dfly *d, int g, int h, int k)
{
	return (int)(((int64_t)mod(h - g - 1, d->groups) * d->links + k) %
		     d->routers);
}

/* Best global link between (a,g) and (b,h), g != h: its index and cost. */
static int best_global(const struct tp_dfly *d, int a, int g, int b, int h,
		       int *kbest)
{
	int best = 4, bk = 0;
	int L = d->links < d->routers * 2 ? d->links : d->routers * 2;
	for (int k = 0; k < L && best > 1; k++) {
		int c = (a != gw(d, g, h, k)) + 1 + (b != gw(d, h, g, k));
		if (c < best) {
			best = c;
			bk = k;
		}
	}
	if (kbest)
		*kbest = bk;
	return best;
}

static int64_t distance(const struct tp_machine *m, const int *x, const int *y)
{
	const struct tp_dfly *d = m->net_data;
	if (x[1] == y[1])
		return x[0] != y[0];
	return best_global(d, x[0], x[1], y[0], y[1], NULL);
}

static int64_t range_lower_bound(const struct tp_machine *m, const int *p,
				 const int *lo, const int *hi)
{
	(void)m;
	bool in_a = p[0] >= lo[0] && p[0] <= hi[0];
	bool in_g = p[1] >= lo[1] && p[1] <= hi[1];
	if (in_g)
		return in_a ? 0 : 1;
	return 1;
}

/* Directed: from router x to router y of group g. */
static int64_t local_link(const struct tp_dfly *d, int g, int x, int y)
{
	return (int64_t)g * d->routers * d->routers + (int64_t)x * d->routers + y;
}

/* Directed: global link k from group g to group h. */
static int64_t global_link(const struct tp_dfly *d, int g, int h, int k)
{
	return (int64_t)d->groups * d->routers * d->routers +
	       ((int64_t)g * d->groups + h) * d->links + k;
}

static int64_t link_count(const struct tp_machine *m)
{
	const struct tp_dfly *d = m->net_data;
	return (int64_t)d->groups * d->routers * d->routers +
	       (int64_t)d->groups * d->groups * d->links;
}

/* The time model: a local link at LocalBandwidth=, a global one at
 * GlobalBandwidth=, else the fabric's default. */
static double lane_bandwidth(const struct tp_machine *m, int64_t lane)
{
	const struct tp_dfly *d = m->net_data;
	bool local = lane < (int64_t)d->groups * d->routers * d->routers;
	double bw = local ? d->local_bw : d->global_bw;
	return bw > 0 ? bw : m->fab.node_bw;
}

/* Direct route (a,g) -> (b,h) appended to links; returns the new count. */
static int direct(const struct tp_dfly *d, int a, int g, int b, int h,
		  int64_t *links, int n)
{
	if (g == h) {
		if (a != b)
			links[n++] = local_link(d, g, a, b);
		return n;
	}
	int k;
	best_global(d, a, g, b, h, &k);
	int ga = gw(d, g, h, k), gb = gw(d, h, g, k);
	if (a != ga)
		links[n++] = local_link(d, g, a, ga);
	links[n++] = global_link(d, g, h, k);
	if (gb != b)
		links[n++] = local_link(d, h, gb, b);
	return n;
}

/* Adaptive routing's choice for the router pair: Valiant when its hash is
 * below the share (a hash independent of the intermediate group's). */
static bool adaptive_valiant(const struct tp_dfly *d, int a, int g, int b, int h)
{
	if (d->share == 0)
		return false;
	uint64_t z = ((uint64_t)(a + 1) * 0xd6e8feb86659fd93ULL) ^
		     ((uint64_t)(g + 1) * 0xa0761d6478bd642fULL) ^
		     ((uint64_t)(b + 1) * 0xe7037ed1a0b428dbULL) ^
		     ((uint64_t)(h + 1) * 0x8ebc6af09c88c6e3ULL);
	z ^= z >> 29;
	z *= 0xbf58476d1ce4e5b9ULL;
	z ^= z >> 32;
	return d->share == UINT32_MAX || (uint32_t)z < d->share;
}

static int route(const struct tp_machine *m, const int *x, const int *y,
		 int64_t *links, int cap)
{
	const struct tp_dfly *d = m->net_data;
	int64_t tmp[6];
	int a = x[0], g = x[1], b = y[0], h = y[1], n;
	/* the hashes see the router pair in one order whatever the message's
	 * direction: both directions of a pair take the same kind of way and
	 * the same intermediate group (on their own directed links) */
	bool swap = g > h || (g == h && a > b);
	int pa = swap ? b : a, pg = swap ? h : g, qa = swap ? a : b, qg = swap ? g : h;
	bool valiant = d->routing == TP_DFLY_VALIANT ||
		       (d->routing == TP_DFLY_ADAPTIVE &&
			adaptive_valiant(d, pa, pg, qa, qg));
	if (!valiant || g == h || d->groups < 3) {
		n = direct(d, a, g, b, h, tmp, 0);
	} else {
		/* intermediate group: a hash of the two routers, never g or h */
		uint64_t z = ((uint64_t)(pa + 1) * 0x9e3779b97f4a7c15ULL) ^
			     ((uint64_t)(pg + 1) * 0xbf58476d1ce4e5b9ULL) ^
			     ((uint64_t)(qa + 1) * 0x94d049bb133111ebULL) ^
			     ((uint64_t)(qg + 1) * 0x2545f4914f6cdd1dULL);
		z ^= z >> 31;
		int i = (int)(z % (uint64_t)(d->groups - 2));
		int lo = g < h ? g : h, hi = g < h ? h : g;
		if (i >= lo)
			i++;
		if (i >= hi)
			i++;
		/* enter group i where the global link from a's side lands */
		int k = 0;
		for (int kk = 0; kk < d->links && kk < 2 * d->routers; kk++)
			if (gw(d, g, i, kk) == a) {
				k = kk;
				break;
			}
		int in = gw(d, i, g, k);
		n = direct(d, a, g, in, i, tmp, 0);
		n = direct(d, in, i, b, h, tmp, n);
	}
	if (n > cap || (n > 0 && !links))
		return TP_EINVAL;
	memcpy(links, tmp, sizeof(int64_t) * (size_t)n);
	return n;
}

static void link_name(const struct tp_machine *m, int64_t link, char *buf,
		      size_t len)
{
	const struct tp_dfly *d = m->net_data;
	int64_t nl = (int64_t)d->groups * d->routers * d->routers;
	if (link < nl) {
		int g = (int)(link / ((int64_t)d->routers * d->routers));
		int64_t r = link % ((int64_t)d->routers * d->routers);
		snprintf(buf, len, "g%d:r%d->r%d", g, (int)(r / d->routers),
			 (int)(r % d->routers));
	} else {
		int64_t r = link - nl;
		int k = (int)(r % d->links);
		r /= d->links;
		snprintf(buf, len, "g%d->g%d#%d", (int)(r / d->groups),
			 (int)(r % d->groups), k);
	}
}

/* Directed local link x -> y (x != y) of group g, or global link k from
 * group g to group h != g (from router gw(g, h, k) to gw(h, g, k)): a is
 * where the direction starts, b where it ends; other ids are unused. */
static int link_ends(const struct tp_machine *m, int64_t link, int *a, int *b)
{
	const struct tp_dfly *d = m->net_data;
	int64_t aa = (int64_t)d->routers * d->routers;
	int64_t nl = (int64_t)d->groups * aa;
	if (link < nl) {
		int g = (int)(link / aa);
		int x = (int)(link % aa / d->routers), y = (int)(link % d->routers);
		a[0] = x; a[1] = g;
		b[0] = y; b[1] = g;
		return x != y ? TP_OK : TP_ENOENT;
	}
	int64_t r = link - nl;
	int k = (int)(r % d->links);
	r /= d->links;
	int g = (int)(r / d->groups), h = (int)(r % d->groups);
	a[0] = gw(d, g, h, k); a[1] = g;
	b[0] = gw(d, h, g, k); b[1] = h;
	return g != h ? TP_OK : TP_ENOENT;
}

/* Valiant: local, global, local, global, local (direct needs 3). */
static int64_t max_route_links(const struct tp_machine *m)
{
	(void)m;
	return 6;
}

/* The group, then the router (numbered over the whole machine). */
static int hierarchy(const struct tp_machine *m, const int *r, int64_t *path,
		     int cap)
{
	const struct tp_dfly *d = m->net_data;
	if (cap < 2)
		return TP_EINVAL;
	path[0] = r[1];
	path[1] = (int64_t)r[1] * d->routers + r[0];
	return 2;
}

static const struct tp_net_ops dragonfly_ops = {
	.kind = "dragonfly",
	.caps = TP__CAP(TP_CAP_GROUPS),
	TP__NET_OPS_ROUTING,
	.link_ends = link_ends,
	.destroy = free,
	.hierarchy = hierarchy,
	.lane_bandwidth = lane_bandwidth,
	.port_cables = true,
};

int tp_machine_create_dragonfly(tp_machine **out, int groups, int routers,
				int nodes_per_router, int links, bool valiant,
				tp_error *err)
{
	if (!out)
		return tp_error_set(err, TP_EINVAL, "dragonfly: out is NULL");
	*out = NULL;
	if (groups < 1 || routers < 1 || links < 1 || nodes_per_router < 1)
		return tp_error_set(err, TP_EINVAL,
				    "dragonfly: Groups=%d RoutersPerGroup=%d LinksPerGroupPair=%d NodesPerRouter=%d: each must be >= 1",
				    groups, routers, links, nodes_per_router);
	if ((int64_t)groups * groups * links > ((int64_t)1 << 40) ||
	    (int64_t)groups * routers * routers > ((int64_t)1 << 40))
		return tp_error_set(err, TP_EINVAL, "dragonfly: too many links");
	struct tp_dfly *d = calloc(1, sizeof *d);
	if (!d)
		return tp_error_set(err, TP_ENOMEM, "dragonfly: out of memory");
	d->groups = groups;
	d->routers = routers;
	d->links = links;
	d->routing = valiant ? TP_DFLY_VALIANT : TP_DFLY_DIRECT;
	d->share_f = valiant ? 1 : 0;
	int dims[2] = { routers, groups };
	bool wrap[2] = { false, false };
	int rc = tp__machine_new(out, 2, dims, wrap, &dragonfly_ops, d, err);
	if (rc) {
		free(d);
		return rc;
	}
	if ((rc = tp_machine_set_nodes_per_router(*out, nodes_per_router, err))) {
		tp_machine_destroy(*out);
		*out = NULL;
		return rc;
	}
	return 0;
}

int tp_machine_dragonfly_links(const tp_machine *m)
{
	const struct tp_dfly *d = dfly_of(m);
	return d ? d->links : 0;
}

bool tp_machine_dragonfly_valiant(const tp_machine *m)
{
	const struct tp_dfly *d = dfly_of(m);
	return d && d->routing == TP_DFLY_VALIANT;
}

int tp_machine_set_dragonfly_routing(tp_machine *m, enum tp_dfly_routing r,
				     double share, tp_error *err)
{
	struct tp_dfly *d = m && m->net == &dragonfly_ops ? m->net_data : NULL;
	if (!d)
		return tp_error_set(err, TP_EINVAL, "Routing=: the network is not a dragonfly");
	if (r != TP_DFLY_DIRECT && r != TP_DFLY_VALIANT && r != TP_DFLY_ADAPTIVE)
		return tp_error_set(err, TP_EINVAL, "Routing=: unknown routing %d", (int)r);
	if (r == TP_DFLY_ADAPTIVE && !(share >= 0 && share <= 1))
		return tp_error_set(err, TP_EINVAL,
				    "AdaptiveShare=%g: expected a fraction in 0..1", share);
	d->routing = r;
	d->share_f = r == TP_DFLY_ADAPTIVE ? share : r == TP_DFLY_VALIANT;
	d->share = r != TP_DFLY_ADAPTIVE ? 0 : share >= 1 ? UINT32_MAX
		   : (uint32_t)(share * 4294967296.0);
	return TP_OK;
}

enum tp_dfly_routing tp_machine_dragonfly_routing(const tp_machine *m,
						  double *share)
{
	const struct tp_dfly *d = dfly_of(m);
	if (share)
		*share = d ? d->share_f : 0;
	return d ? d->routing : TP_DFLY_DIRECT;
}

const char *tp_dfly_routing_name(enum tp_dfly_routing r)
{
	return r == TP_DFLY_VALIANT ? "valiant" : r == TP_DFLY_ADAPTIVE ? "adaptive"
	       : "direct";
}

void tp__dfly_set_bandwidths(tp_machine *m, double local_bw, double global_bw)
{
	struct tp_dfly *d = m && m->net == &dragonfly_ops ? m->net_data : NULL;
	if (!d)
		return;
	d->local_bw = local_bw;
	d->global_bw = global_bw;
}

/* ---- node names: NodeNameFormat= ----
 *
 * "x{group-1000}c{switch}s{*}b{*}n{*}": literal text matches itself; a
 * field {group}, {switch} or {*} matches a decimal number (1-9 digits, the
 * longest run), {*} is skipped; "-N" / "+N" in a field subtracts / adds N
 * (x1000 -> group 0 above).  {group} and {switch} appear once each; two
 * fields must not touch (a digit run would have no end).  The whole name
 * must match. */

struct tp__dfly_format {
	int nparts;
	struct part {
		int kind;            /* 0 literal, 1 group, 2 switch, 3 any */
		char lit[64];
		long long add;
	} part[16];
};

int tp__dfly_format_parse(const char *fmt, struct tp__dfly_format **out,
			  tp_error *err)
{
	*out = NULL;
	struct tp__dfly_format *f = calloc(1, sizeof *f);
	if (!f)
		return tp_error_set(err, TP_ENOMEM, "NodeNameFormat=: out of memory");
	int seen[4] = { 0 }, rc = 0;
	for (const char *p = fmt; *p && !rc;) {
		if (f->nparts == (int)(sizeof f->part / sizeof f->part[0])) {
			rc = tp_error_set(err, TP_EINVAL, "NodeNameFormat=%s: more than %d parts",
					  fmt, (int)(sizeof f->part / sizeof f->part[0]));
			break;
		}
		struct part *q = &f->part[f->nparts];
		if (*p != '{') {
			size_t n = strcspn(p, "{}");
			if (p[n] == '}' || n >= sizeof q->lit) {
				rc = tp_error_set(err, TP_EINVAL, "NodeNameFormat=%s: %s", fmt,
						  p[n] == '}' ? "'}' without '{'"
							      : "literal text too long");
				break;
			}
			memcpy(q->lit, p, n);
			q->lit[n] = '\0';
			p += n;
			f->nparts++;
			continue;
		}
		const char *e = strchr(p, '}');
		char name[32];
		size_t n = e ? (size_t)(e - p - 1) : 0;
		if (!e || n == 0 || n >= sizeof name) {
			rc = tp_error_set(err, TP_EINVAL,
					  "NodeNameFormat=%s: a field is {group}, {switch} or {*}",
					  fmt);
			break;
		}
		memcpy(name, p + 1, n);
		name[n] = '\0';
		char *sign = strpbrk(name, "+-");
		if (sign) {
			char *end;
			long long v = strtoll(sign + 1, &end, 10);
			if (end == sign + 1 || *end || v > 1000000000LL) {
				rc = tp_error_set(err, TP_EINVAL,
						  "NodeNameFormat=%s: {%s}: the offset is not a number",
						  fmt, name);
				break;
			}
			q->add = *sign == '-' ? -v : v;
			*sign = '\0';
		}
		q->kind = !strcmp(name, "group") ? 1 : !strcmp(name, "switch") ? 2
			  : !strcmp(name, "*") ? 3 : 0;
		if (!q->kind || (q->kind == 3 && sign)) {
			rc = tp_error_set(err, TP_EINVAL,
					  "NodeNameFormat=%s: unknown field {%s} (a field is "
					  "{group}, {switch} or {*})", fmt, name);
			break;
		}
		if (q->kind != 3 && seen[q->kind]++) {
			rc = tp_error_set(err, TP_EINVAL, "NodeNameFormat=%s: {%s} twice",
					  fmt, name);
			break;
		}
		if (f->nparts && f->part[f->nparts - 1].kind) {
			rc = tp_error_set(err, TP_EINVAL,
					  "NodeNameFormat=%s: two fields touch (put text "
					  "between them)", fmt);
			break;
		}
		f->nparts++;
		p = e + 1;
	}
	if (!rc && (!seen[1] || !seen[2]))
		rc = tp_error_set(err, TP_EINVAL,
				  "NodeNameFormat=%s: needs {group} and {switch}", fmt);
	if (rc) {
		free(f);
		return rc;
	}
	*out = f;
	return 0;
}

void tp__dfly_format_free(struct tp__dfly_format *f)
{
	free(f);
}

int tp__dfly_format_match(const struct tp__dfly_format *f, const char *name,
			  long long *group, long long *sw)
{
	const char *s = name;
	for (int i = 0; i < f->nparts; i++) {
		const struct part *q = &f->part[i];
		if (!q->kind) {
			size_t n = strlen(q->lit);
			if (strncmp(s, q->lit, n))
				return (int)(s - name);
			s += n;
			continue;
		}
		long long v = 0;
		int d = 0;
		while (*s >= '0' && *s <= '9' && d < 10) {
			v = v * 10 + (*s++ - '0');
			d++;
		}
		if (d == 0 || d > 9)
			return (int)(s - name) - d;
		if (q->kind == 1)
			*group = v + q->add;
		else if (q->kind == 2)
			*sw = v + q->add;
	}
	return *s ? (int)(s - name) : -1;
}

/* The machines of this kind (network.h), by which the config tells which
 * kind built a machine. */
const struct tp_net_ops *const tp__dfly_machines[] = { &dragonfly_ops, NULL };
