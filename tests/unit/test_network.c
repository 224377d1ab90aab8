/* Unit tests: the network kinds behind one interface (core/src/net/network.h)
 * and distances that do not overflow (64-bit): long weighted
 * paths on tori and meshes, mesh dimensions above 2^30, large LevelCost=
 * on trees; what each kind offers (tp_machine_has). */
#include <limits.h>
#include <stdint.h>

#include "testutil.h"
#include "input/alloc_internal.h"
#include "map/graphmap_internal.h"
#include "map/metrics_internal.h"
#include "net/machine_internal.h"
#include "pattern/pattern_internal.h"
#include "slurm/slurm_topo.h"

static tp_machine *mk(int ndims, const int *dims, const bool *wrap)
{
	tp_machine *m = NULL;
	tp_error err;
	tp_error_clear(&err);
	ck_assert_msg(tp_machine_create(&m, ndims, dims, wrap, &err) == 0, "%s",
		      err.msg);
	return m;
}

static int32_t add(tp_machine *m, const char *name, const int *c)
{
	tp_error err;
	tp_error_clear(&err);
	int idx = tp_machine_add_node(m, name, c, &err);
	ck_assert_msg(idx >= 0, "add %s: %s", name, err.msg);
	return idx;
}

/* Two tasks joined by one edge of `bytes`, on machine nodes a and b. */
struct pair {
	tp_graph *g;
	tp_alloc *al;
	int32_t map[2];
};

static void pair_init(struct pair *p, const tp_machine *m, int32_t a,
		      int32_t b, double bytes)
{
	tp_error err;
	tp_error_clear(&err);
	int32_t u = 0, v = 1, nodes[2] = { a, b };
	ck_assert_msg(tp_graph_from_edges(&p->g, 2, 1, &u, &v, &bytes, "pair",
					  &err) == 0, "%s", err.msg);
	ck_assert_msg(tp_alloc_from_nodes(m, nodes, 2, 1, &p->al, &err) == 0,
		      "%s", err.msg);
	p->map[0] = 0;
	p->map[1] = 1;
}

static void pair_free(struct pair *p)
{
	tp_graph_destroy(p->g);
	tp_alloc_destroy(p->al);
}

/* hop-bytes (fast path and full metrics) and max dilation of the pair */
static double pair_hop_bytes(const tp_machine *m, int32_t a, int32_t b,
			     int64_t *dilation)
{
	struct pair p;
	pair_init(&p, m, a, b, 1.0);
	tp_metrics mt;
	tp_error err;
	tp_error_clear(&err);
	ck_assert_msg(tp_metrics_compute(p.g, p.al, p.map, false, &mt, &err) == 0,
		      "%s", err.msg);
	double fast = tp_metrics_hop_bytes(p.g, p.al, p.map);
	ck_assert_msg(fast == mt.hop_bytes, "fast %.17g, full %.17g", fast,
		      mt.hop_bytes);
	ck_assert(tp_metrics_score(p.g, p.al, p.map, TP_METRIC_HOP_BYTES, NULL) ==
		  mt.hop_bytes);
	*dilation = mt.max_dilation;
	pair_free(&p);
	return mt.hop_bytes;
}

START_TEST(kinds)
{
	int d3[3] = { 4, 4, 4 };
	bool tw[3] = { true, false, false }, mw[3] = { false, false, false };
	tp_machine *t = mk(3, d3, tw), *m = mk(3, d3, mw);
	ck_assert_str_eq(tp_machine_kind(t), "torus");
	ck_assert_str_eq(tp_machine_kind(m), "mesh");
	ck_assert(!tp_machine_has(t, TP_CAP_SWITCHES) && !tp_machine_has(m, TP_CAP_GROUPS));
	ck_assert_ptr_null(tp_machine_kind(NULL));
	tp_machine_destroy(t);
	tp_machine_destroy(m);

	tp_machine *f = NULL;
	tp_error err;
	tp_error_clear(&err);
	ck_assert_int_eq(tp_machine_create_dragonfly(&f, 5, 4, 2, 3, true, &err), 0);
	ck_assert_str_eq(tp_machine_kind(f), "dragonfly");
	ck_assert_int_eq(tp_machine_dragonfly_links(f), 3);
	ck_assert(tp_machine_dragonfly_valiant(f));
	/* hop costs and link bandwidths belong to tori and meshes */
	int cost[2] = { 2, 2 };
	double bw[2] = { 5, 5 };
	ck_assert_int_eq(tp_machine_set_hop_cost(f, cost, &err), TP_ENOTSUP);
	tp_assert_err_has(&err, "only for tori and meshes");
	ck_assert_int_eq(tp_machine_set_link_bandwidth(f, bw, &err), TP_ENOTSUP);
	tp_assert_err_has(&err, "only for tori and meshes");
	ck_assert_int_eq(tp_machine_hop_cost(f, 0), 1);
	ck_assert(tp_machine_link_bandwidth(f, 1) == 1.0);
	ck_assert_int_eq(tp_machine_tree_levels(f), 0);
	ck_assert_int_eq(tp_machine_switch_count(f), 0);
	tp_machine_destroy(f);

	tp_machine *tr = NULL;
	ck_assert_int_eq(tp_machine_from_topology(&tr, "SwitchName=s Nodes=a,b\n",
						  "topo", NULL, 0, &err), 0);
	ck_assert_str_eq(tp_machine_kind(tr), "tree");
	ck_assert_int_eq(tp_machine_dragonfly_links(tr), 0);
	ck_assert(!tp_machine_dragonfly_valiant(tr));
	char name[64];
	/* directed: 2s up, 2s + 1 down (s, then the nodes a and b) */
	ck_assert_int_eq(tp_machine_link_count(tr), 6);
	tp_machine_link_name(tr, 0, name, sizeof name);
	ck_assert_str_eq(name, "s->(top)");
	tp_machine_link_name(tr, 2, name, sizeof name);
	ck_assert_str_eq(name, "a->s");
	tp_machine_link_name(tr, 3, name, sizeof name);
	ck_assert_str_eq(name, "s->a");
	tp_machine_link_name(tr, 6, name, sizeof name);
	ck_assert_str_eq(name, "(invalid link 6)");
	tp_machine_destroy(tr);
}
END_TEST

/* Distance=bandwidth: a 5,000-hop pair at 10^6 per hop (5 * 10^9, beyond
 * int) must weigh more than a 1,000-hop pair (10^9). */
START_TEST(weighted_long_paths)
{
	int dims[2] = { 6001, 3 };
	bool wrap[2] = { false, true };
	tp_machine *m = mk(2, dims, wrap);
	int cost[2] = { 1000000, 1000000 };
	tp_error err;
	tp_error_clear(&err);
	ck_assert_int_eq(tp_machine_set_hop_cost(m, cost, &err), 0);
	int c0[2] = { 0, 0 }, c1[2] = { 1000, 0 }, c5[2] = { 5000, 1 };
	int32_t a = add(m, "a", c0), b = add(m, "b", c1), c = add(m, "c", c5);

	ck_assert_int_eq(tp_machine_distance(m, a, b), 1000000000LL);
	ck_assert_int_eq(tp_machine_distance(m, a, c), 5001000000LL);
	ck_assert_int_eq(tp_machine_coord_distance(m, c0, c5), 5001000000LL);
	ck_assert_int_gt(tp_machine_distance(m, a, c), tp_machine_distance(m, a, b));

	int64_t dil_ab, dil_ac;
	double hb_ab = pair_hop_bytes(m, a, b, &dil_ab);
	double hb_ac = pair_hop_bytes(m, a, c, &dil_ac);
	ck_assert(hb_ab == 1e9);
	ck_assert(hb_ac == 5.001e9);
	ck_assert(hb_ac > hb_ab);
	ck_assert_int_eq(dil_ac, 5001000000LL);

	/* routes still count links, not cost */
	int64_t links[5001];
	ck_assert_int_eq(tp_machine_route(m, a, c, links, 5001), 5001);
	ck_assert_int_eq(tp_machine_route(m, a, c, links, 5000), TP_EINVAL);

	/* graph mapping on it: the heavy pairs stay 1 hop apart */
	int c2[2] = { 1, 0 }, c6[2] = { 5000, 0 };
	int32_t d = add(m, "d", c2), e = add(m, "e", c6);
	int32_t u[3] = { 0, 2, 1 }, v[3] = { 1, 3, 2 };
	double w[3] = { 100, 100, 1 };
	tp_graph *g = NULL;
	ck_assert_int_eq(tp_graph_from_edges(&g, 4, 3, u, v, w, "g", &err), 0);
	int32_t nodes[4] = { a, c, d, e };
	tp_alloc *al = NULL;
	ck_assert_int_eq(tp_alloc_from_nodes(m, nodes, 4, 1, &al, &err), 0);
	int32_t map[4];
	ck_assert_msg(tp_graphmap_greedy(g, al, NULL, map, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(tp_mapping_validate(g, al, map, &err), 0);
	tp_metrics mt;
	ck_assert_int_eq(tp_metrics_compute(g, al, map, true, &mt, &err), 0);
	/* 2 x 100 bytes x 1 hop x 10^6 + 1 byte x 4999 hops x 10^6 */
	ck_assert_msg(mt.hop_bytes == 2e8 + 4.999e9, "hop-bytes %.17g", mt.hop_bytes);
	ck_assert_int_eq(mt.max_dilation, 4999000000LL);
	tp_alloc_destroy(al);
	tp_graph_destroy(g);
	tp_machine_destroy(m);
}
END_TEST

/* A mesh dimension above 2^30: 2 * extent no longer fits an int. */
START_TEST(mesh_above_2_30)
{
	int dims[2] = { INT_MAX, 1 << 29 };
	bool wrap[2] = { false, false };
	tp_machine *m = mk(2, dims, wrap);
	int ca[2] = { 0, 0 }, cb[2] = { INT_MAX - 1, (1 << 29) - 1 };
	int cc[2] = { (1 << 30) + 5, 0 };
	int32_t a = add(m, "a", ca), b = add(m, "b", cb), c = add(m, "c", cc);
	int64_t far = (int64_t)INT_MAX - 1 + (1 << 29) - 1;
	ck_assert_int_eq(tp_machine_distance(m, a, b), far);
	ck_assert_int_eq(tp_machine_distance(m, a, c), (1 << 30) + 5);
	ck_assert_int_eq(tp_machine_coord_distance(m, ca, cb), far);
	/* coordinates outside the box are refused */
	int out1[2] = { -1, 0 }, out2[2] = { 0, 1 << 29 };
	ck_assert_int_eq(tp_machine_coord_distance(m, out1, ca), -1);
	ck_assert_int_eq(tp_machine_coord_distance(m, ca, out2), -1);

	int64_t dil;
	ck_assert(pair_hop_bytes(m, a, b, &dil) == (double)far);
	ck_assert_int_eq(dil, far);
	ck_assert(pair_hop_bytes(m, a, c, &dil) == (double)((1 << 30) + 5));
	ck_assert(pair_hop_bytes(m, c, b, &dil) == (double)(far - (1 << 30) - 5));

	/* routes this long do not fit an int: refused, not wrapped */
	int64_t l[4];
	ck_assert_int_eq(tp_machine_route(m, a, b, l, 4), TP_EINVAL);
	struct pair p;
	pair_init(&p, m, a, b, 1.0);
	tp_metrics mt;
	tp_error err;
	tp_error_clear(&err);
	ck_assert_int_eq(tp_metrics_compute(p.g, p.al, p.map, true, &mt, &err),
			 TP_EINVAL);
	tp_assert_err_has(&err, "machine too large to route");
	pair_free(&p);
	tp_machine_destroy(m);

	/* the same extent wrapped: the short way round */
	int d1 = INT_MAX;
	bool w1 = true;
	m = mk(1, &d1, &w1);
	int x0 = 0, x1 = INT_MAX - 1, x2 = INT_MAX / 2;
	a = add(m, "a", &x0);
	b = add(m, "b", &x1);
	c = add(m, "c", &x2);
	ck_assert_int_eq(tp_machine_distance(m, a, b), 1);
	ck_assert_int_eq(tp_machine_distance(m, a, c), INT_MAX / 2);
	ck_assert(pair_hop_bytes(m, a, b, &dil) == 1.0);
	ck_assert(pair_hop_bytes(m, b, c, &dil) == (double)(INT_MAX / 2));
	tp_machine_destroy(m);

	/* what cannot be represented is refused with one line */
	int huge[3] = { INT_MAX, INT_MAX, 2 };
	tp_machine *r = NULL;
	ck_assert_int_eq(tp_machine_create(&r, 3, huge, NULL, &err), TP_EINVAL);
	tp_assert_err_has(&err, "too many routers (the product of the dimensions overflows)");
	ck_assert_ptr_null(r);
}
END_TEST

/* LevelCost= in the billions: a path over the top switch costs 6 * 10^9. */
START_TEST(tree_large_level_cost)
{
	static const char *FAT =
		"SwitchName=leaf0 Nodes=tux[00-03]\n"
		"SwitchName=leaf1 Nodes=tux[04-07]\n"
		"SwitchName=leaf2 Nodes=tux[08-11]\n"
		"SwitchName=leaf3 Nodes=tux[12-15]\n"
		"SwitchName=spine0 Switches=leaf[0-1]\n"
		"SwitchName=spine1 Switches=leaf[2-3]\n"
		"SwitchName=core Switches=spine[0-1]\n";
	int cost[2] = { 1000000000, 2000000000 };
	tp_machine *m = NULL;
	tp_error err;
	tp_error_clear(&err);
	ck_assert_msg(tp_machine_from_topology(&m, FAT, "topo", cost, 2, &err) == 0,
		      "%s", err.msg);
	int32_t t0 = tp_machine_find_node(m, "tux00");
	int32_t t1 = tp_machine_find_node(m, "tux01");
	int32_t t5 = tp_machine_find_node(m, "tux05");
	int32_t t15 = tp_machine_find_node(m, "tux15");
	ck_assert_int_eq(tp_machine_distance(m, t0, t1), 2);
	ck_assert_int_eq(tp_machine_distance(m, t0, t5), 2000000002LL);
	ck_assert_int_eq(tp_machine_distance(m, t0, t15), 6000000002LL);
	ck_assert_int_eq(tp_machine_distance(m, t15, t0), 6000000002LL);

	int64_t dil;
	double near = pair_hop_bytes(m, t0, t5, &dil);
	ck_assert(near == 2000000002.0);
	double far = pair_hop_bytes(m, t0, t15, &dil);
	ck_assert(far == 6000000002.0);
	ck_assert_int_eq(dil, 6000000002LL);
	ck_assert(far > near);

	/* graph mapping: the heavy pairs share a leaf switch */
	int32_t u[3] = { 0, 2, 1 }, v[3] = { 1, 3, 2 };
	double w[3] = { 100, 100, 1 };
	tp_graph *g = NULL;
	ck_assert_int_eq(tp_graph_from_edges(&g, 4, 3, u, v, w, "g", &err), 0);
	int32_t nodes[4] = { t0, t15, t1, tp_machine_find_node(m, "tux14") };
	tp_alloc *al = NULL;
	ck_assert_int_eq(tp_alloc_from_nodes(m, nodes, 4, 1, &al, &err), 0);
	int32_t map[4];
	ck_assert_msg(tp_graphmap_greedy(g, al, NULL, map, &err) == 0, "%s", err.msg);
	tp_metrics mt;
	ck_assert_int_eq(tp_metrics_compute(g, al, map, true, &mt, &err), 0);
	ck_assert_msg(mt.hop_bytes == 2 * 100 * 2.0 + 6000000002.0,
		      "hop-bytes %.17g", mt.hop_bytes);
	tp_alloc_destroy(al);
	tp_graph_destroy(g);
	tp_machine_destroy(m);
}
END_TEST

/* Torus and mesh link ends: cable (r, d) joins r and its +1 neighbour,
 * round the ring on a wrapped dimension; a mesh line's last router has no
 * +1 cable, nor has a ring of one.  Directed ids: cable * 2 from r up,
 * cable * 2 + 1 back down. */
START_TEST(torus_link_ends)
{
	int dims[3] = { 4, 3, 1 };
	bool wrap[3] = { true, false, true };
	tp_machine *m = mk(3, dims, wrap);
	int a[3], b[3];
	/* router (3,1,0) = 3 + 4*1 = 7: x wraps to (0,1,0) */
	ck_assert_int_eq(tp_machine_link_ends(m, (7 * 3 + 0) * 2, a, b), 0);
	ck_assert_int_eq(a[0], 3);
	ck_assert_int_eq(a[1], 1);
	ck_assert_int_eq(b[0], 0);
	ck_assert_int_eq(b[1], 1);
	ck_assert_int_eq(b[2], 0);
	/* the same cable back: from (0,1,0) to (3,1,0) */
	ck_assert_int_eq(tp_machine_link_ends(m, (7 * 3 + 0) * 2 + 1, a, b), 0);
	ck_assert_int_eq(a[0], 0);
	ck_assert_int_eq(b[0], 3);
	ck_assert_int_eq(b[1], 1);
	ck_assert_int_eq(tp_machine_link_ends(m, (7 * 3 + 1) * 2, a, b), 0);
	ck_assert_int_eq(b[1], 2);
	/* (3,2,0) = 11: y is a mesh line, ends there; z is a ring of one */
	ck_assert_int_eq(tp_machine_link_ends(m, (11 * 3 + 1) * 2, a, b), TP_ENOENT);
	ck_assert_int_eq(tp_machine_link_ends(m, (11 * 3 + 1) * 2 + 1, a, b), TP_ENOENT);
	ck_assert_int_eq(tp_machine_link_ends(m, (7 * 3 + 2) * 2, a, b), TP_ENOENT);
	ck_assert_int_eq(tp_machine_link_ends(m, 12 * 3 * 2, a, b), TP_EINVAL);
	ck_assert_int_eq(tp_machine_link_ends(NULL, 0, a, b), TP_EINVAL);
	/* every hop of every route joins consecutive routers */
	int32_t ids[12];
	for (int r = 0; r < 12; r++) {
		char name[8];
		int c[3] = { r % 4, r / 4, 0 };
		snprintf(name, sizeof name, "n%d", r);
		ids[r] = add(m, name, c);
	}
	for (int i = 0; i < 12; i++)
		for (int j = 0; j < 12; j++) {
			int64_t l[8];
			int len = tp_machine_route(m, ids[i], ids[j], l, 8);
			ck_assert_int_eq(len, tp_machine_distance(m, ids[i], ids[j]));
			int cur[3] = { i % 4, i / 4, 0 };
			for (int k = 0; k < len; k++) {
				ck_assert_int_eq(tp_machine_link_ends(m, l[k], a, b), 0);
				/* directed: leaves from a, arrives at b */
				ck_assert(!memcmp(a, cur, sizeof cur));
				memcpy(cur, b, sizeof cur);
			}
			ck_assert_int_eq(cur[0], j % 4);
			ck_assert_int_eq(cur[1], j / 4);
		}
	tp_machine_destroy(m);
}
END_TEST

/* What each kind offers (tp_machine_has): want is a mask of 1 << cap. */
static void assert_caps(const tp_machine *m, unsigned want)
{
	static const char *const name[] = { "coordinates", "hierarchy", "switches",
					    "groups", "blocks" };
	for (int c = TP_CAP_COORDINATES; c <= TP_CAP_BLOCKS; c++)
		ck_assert_msg(tp_machine_has(m, (enum tp_machine_cap)c) == (want >> c & 1),
			      "%s: %s %s", tp_machine_kind(m), name[c],
			      want >> c & 1 ? "missing" : "not expected");
	/* the older spellings answer the same */
}

#define CAP(c) (1u << (c))

START_TEST(capabilities)
{
	tp_error err;
	tp_error_clear(&err);
	int d2[2] = { 4, 3 };
	bool tw[2] = { true, false }, mw[2] = { false, false };
	tp_machine *m = mk(2, d2, tw);
	assert_caps(m, CAP(TP_CAP_COORDINATES));
	tp_machine_destroy(m);
	m = mk(2, d2, mw);
	assert_caps(m, CAP(TP_CAP_COORDINATES));
	/* NULL, and a value this release does not know */
	ck_assert(!tp_machine_has(m, (enum tp_machine_cap)99));
	ck_assert(!tp_machine_has(m, (enum tp_machine_cap)-1));
	ck_assert(!tp_machine_has(NULL, TP_CAP_COORDINATES));
	tp_machine_destroy(m);

	ck_assert_int_eq(tp_machine_from_topology(&m, "SwitchName=s0 Nodes=a,b\n"
						  "SwitchName=s1 Nodes=c\n"
						  "SwitchName=top Switches=s[0-1]\n",
						  "topo", NULL, 0, &err), 0);
	assert_caps(m, CAP(TP_CAP_HIERARCHY) | CAP(TP_CAP_SWITCHES));
	tp_machine_destroy(m);

	ck_assert_int_eq(tp_machine_create_dragonfly(&m, 3, 2, 1, 1, false, &err), 0);
	assert_caps(m, CAP(TP_CAP_HIERARCHY) | CAP(TP_CAP_GROUPS));
	tp_machine_destroy(m);

	ck_assert_msg(tp_machine_from_blocks(&m, "BlockName=b0 Nodes=g[1-2]\n"
					     "BlockName=b1 Nodes=g[3-4]\n",
					     "blocks", NULL, &err) == 0, "%s", err.msg);
	assert_caps(m, CAP(TP_CAP_HIERARCHY) | CAP(TP_CAP_BLOCKS));
	/* the network between the blocks is a switch tree */
	assert_caps(tp_machine_block_tree(m),
		    CAP(TP_CAP_HIERARCHY) | CAP(TP_CAP_SWITCHES));
	tp_machine_destroy(m);

	/* rings (nd 1) and toruses (nd 3) side by side: a box per domain */
	struct tp__tori_domain dom[2] = { { "r0", { 4, 0, 0 } }, { "r1", { 3, 0, 0 } } };
	ck_assert_msg(tp__tori_new(&m, 1, dom, 2, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(tp_machine_kind(m), "ring");
	assert_caps(m, CAP(TP_CAP_COORDINATES) | CAP(TP_CAP_HIERARCHY));
	tp_machine_destroy(m);
	struct tp__tori_domain tor[2] = { { "t0", { 2, 2, 2 } }, { "t1", { 2, 2, 2 } } };
	ck_assert_msg(tp__tori_new(&m, 3, tor, 2, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(tp_machine_kind(m), "tori");
	assert_caps(m, CAP(TP_CAP_COORDINATES) | CAP(TP_CAP_HIERARCHY));
	tp_machine_destroy(m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("network");
	TCase *tc = tcase_create("network");
	tcase_add_test(tc, kinds);
	tcase_add_test(tc, weighted_long_paths);
	tcase_add_test(tc, mesh_above_2_30);
	tcase_add_test(tc, tree_large_level_cost);
	tcase_add_test(tc, torus_link_ends);
	tcase_add_test(tc, capabilities);
	suite_add_tcase(s, tc);
	return tp_test_run(s);
}
