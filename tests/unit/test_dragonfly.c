/* Unit tests: two-level dragonflies (core/src/net/dragonfly.c) and
 * Network=dragonfly in topoplace.conf. */
#include "testutil.h"
#include "map/predict_internal.h"
#include <topoplace/conf.h>
#include "util/util_internal.h"
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#include "input/alloc_internal.h"
#include "map/graphmap_internal.h"
#include "map/place_internal.h"
#include "net/machine_internal.h"
#include "pattern/pattern_internal.h"
#endif
#endif

/* 9 groups x 4 routers, 2 nodes per router, 2 global links per group pair:
 * global link k of groups 0 and 1 joins router k of group 0 with router
 * 2 + k of group 1. */
static tp_conf *dfly(const char *routing)
{
	char text[256];
	snprintf(text, sizeof text,
		 "Network=dragonfly Groups=9 RoutersPerGroup=4 NodesPerRouter=2 "
		 "LinksPerGroupPair=2 Routing=%s\nNodeName=d[000-071] CoordOrder=x-major\n",
		 routing);
	tp_conf *c = NULL;
	tp_error err;
	ck_assert_msg(tp_conf_load_string(text, "df.conf", &c, &err) == 0, "%s", err.msg);
	return c;
}

/* node name of router a in group g, first node */
static int32_t at(const tp_machine *m, int a, int g)
{
	char name[16];
	snprintf(name, sizeof name, "d%03d", 2 * (a + 4 * g));
	int32_t i = tp_machine_find_node(m, name);
	ck_assert_int_ge(i, 0);
	const int *c = tp_machine_node_coords(m, i);
	ck_assert_int_eq(c[0], a);
	ck_assert_int_eq(c[1], g);
	return i;
}

START_TEST(distances_and_routes)
{
	tp_conf *c = dfly("direct");
	const tp_machine *m = tp_conf_machine(c);
	ck_assert(tp_machine_has(m, TP_CAP_GROUPS));
	ck_assert(!tp_machine_has(m, TP_CAP_SWITCHES));
	ck_assert_int_eq(tp_machine_distance(m, at(m, 0, 0), at(m, 0, 0) + 1), 0);
	ck_assert_int_eq(tp_machine_distance(m, at(m, 0, 0), at(m, 3, 0)), 1);
	ck_assert_int_eq(tp_machine_distance(m, at(m, 0, 0), at(m, 2, 1)), 1);
	ck_assert_int_eq(tp_machine_distance(m, at(m, 0, 0), at(m, 3, 1)), 2);
	ck_assert_int_eq(tp_machine_distance(m, at(m, 2, 0), at(m, 0, 1)), 3);
	ck_assert_int_eq(tp_machine_distance(m, at(m, 0, 1), at(m, 2, 0)), 3);
	int64_t l[8];
	char buf[64];
	ck_assert_int_eq(tp_machine_route(m, at(m, 0, 0), at(m, 2, 1), l, 8), 1);
	tp_machine_link_name(m, l[0], buf, sizeof buf);
	ck_assert_str_eq(buf, "g0->g1#0");
	ck_assert_int_eq(tp_machine_route(m, at(m, 2, 1), at(m, 0, 0), l, 8), 1);
	tp_machine_link_name(m, l[0], buf, sizeof buf);
	ck_assert_str_eq(buf, "g1->g0#0");   /* the same cable the other way */
	ck_assert_int_eq(tp_machine_route(m, at(m, 0, 1), at(m, 2, 0), l, 8), 3);
	tp_machine_link_name(m, l[2], buf, sizeof buf);
	ck_assert_str_eq(buf, "g0:r0->r2");
	ck_assert_int_eq(tp_machine_route(m, at(m, 2, 0), at(m, 0, 1), l, 8), 3);
	tp_machine_link_name(m, l[0], buf, sizeof buf);
	ck_assert_str_eq(buf, "g0:r2->r0");
	ck_assert_int_eq(tp_machine_route(m, at(m, 2, 0), at(m, 0, 1), l, 2), TP_EINVAL);
	for (int64_t k = 0; k < 3; k++)
		ck_assert(l[k] >= 0 && l[k] < tp_machine_link_count(m));
	tp_conf_destroy(c);
	/* Valiant: through a third group, at most 6 links, every pair */
	c = dfly("valiant");
	m = tp_conf_machine(c);
	int32_t n = tp_machine_node_count(m);
	for (int32_t a = 0; a < n; a += 3)
		for (int32_t b = 0; b < n; b += 5) {
			int len = tp_machine_route(m, a, b, l, 8);
			int64_t dist = tp_machine_distance(m, a, b);
			ck_assert_int_ge(len, dist);
			ck_assert_int_le(len, 6);
			for (int k = 0; k < len; k++)
				ck_assert(l[k] >= 0 && l[k] < tp_machine_link_count(m));
		}
	tp_conf_destroy(c);
}
END_TEST

/* Auto chooses by predicted time (predict.h): on this sparse allocation
 * the candidate with the fewest hop-bytes loads a global link more than
 * another; of those it modelled, auto keeps the one predicted fastest,
 * and never one predicted slower than Slurm's order. */
START_TEST(auto_rule_congestion)
{
	tp_conf *c = dfly("direct");
	const tp_machine *m = tp_conf_machine(c);
	tp_alloc *a = NULL;
	tp_error err;
	ck_assert_msg(tp_alloc_from_hostlist(m, "d058,d003,d029,d060,d061,d023,d006,"
					     "d063,d017,d019,d054,d001,d016,d046,"
					     "d039,d049", 4, "t", &a, &err) == 0,
		      "%s", err.msg);
	tp_graph *g = NULL;
	ck_assert_int_eq(tp_graph_from_stencil(&g, "8x8:5pt:bytes=65536", 64, NULL), 0);
	int32_t map[64];
	tp_place_opts o;
	tp_place_opts_default(&o);
	o.policy = TP_POLICY_AUTO;
	tp_place_report r;
	ck_assert_int_eq(tp_place_ex(g, a, &o, map, &r, &err), 0);
	ck_assert(r.by_time);
	const tp_place_candidate *k = &r.cand[r.best];
	ck_assert(k->has_predicted && r.cand[0].has_predicted);
	ck_assert(k->predicted_us <= r.cand[0].predicted_us);
	for (int i = 0; i < r.ncandidates; i++)
		if (r.cand[i].has_predicted)
			ck_assert_msg(k->predicted_us <= (1 + 0.005) * r.cand[i].predicted_us,
				      "kept %s (%g us) over %s (%g us)", k->name,
				      k->predicted_us, r.cand[i].name, r.cand[i].predicted_us);
	tp_prediction p;
	ck_assert_int_eq(tp_predict_exchange(g, a, map, &p, NULL), 0);
	ck_assert(fabs(p.exchange_us - k->predicted_us) <= 1e-9 * p.exchange_us);
	tp_metrics mt;
	ck_assert_int_eq(tp_metrics_compute(g, a, map, true, &mt, NULL), 0);
	ck_assert(mt.hop_bytes == k->score);
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

static const struct bad {
	const char *text, *frag;
} bad_configs[] = {
	{ "Network=dragonfly Dims=4x4\nNodeName=a Coords=0,0\n", "cfg:1: Dims= does not apply to Network=dragonfly" },
	{ "Network=dragonfly Groups=4\nNodeName=a Coords=0,0\n", "cfg:2: NodeName= before RoutersPerGroup=" },
	{ "Network=dragonfly Groups=4 RoutersPerGroup=0\n", "cfg:1: RoutersPerGroup=0: expected an integer in 1.." },
	{ "Network=dragonfly Groups=4 RoutersPerGroup=2 Routing=ugal\n", "cfg:1: Routing=ugal: expected direct, valiant or adaptive" },
	{ "Network=torus Dims=4 Groups=2\nNodeName=n[0-3] CoordOrder=x-major\n", "cfg:1: Groups= needs Network=dragonfly" },
	/* more nodes than Groups x RoutersPerGroup x NodesPerRouter */
	{ "Network=dragonfly Groups=2 RoutersPerGroup=2 NodesPerRouter=2\nNodeName=d[0-8] CoordOrder=x-major\n",
	  "cfg:2: NodeName=d[0-8] CoordOrder=x-major: 9 nodes from position 0 go beyond the grid's 8 positions" },
	{ "Network=dragonfly Groups=2 RoutersPerGroup=2\nNodeName=a Coords=0,2\n", "cfg:2: " },
	{ "Network=dragonfly Groups=2 RoutersPerGroup=2\n", "no nodes" },
};

START_TEST(bad_dragonfly)
{
	const struct bad *b = &bad_configs[_i];
	tp_conf *c = (tp_conf *)1;
	tp_error err;
	tp_error_clear(&err);
	ck_assert_int_eq(tp_conf_load_string(b->text, "cfg", &c, &err), TP_EINVAL);
	ck_assert_ptr_null(c);
	ck_assert_msg(strstr(err.msg, b->frag) != NULL, "config %d: \"%s\" lacks \"%s\"", _i,
		      err.msg, b->frag);
	ck_assert_ptr_null(strchr(err.msg, '\n'));
}
END_TEST

/* Greedy growth's nearest-node search is slow on a dragonfly (its
 * distances bound the k-d tree's boxes poorly), about a second for 32,768
 * tasks (so the budget is well below that: at 1000 ms its projection of
 * 994 ms was on the line).
 * Under a budget it stops as soon as its pace shows it cannot finish, and
 * leaves the budget to auto's other candidates; the line says how long it
 * would have taken. */
START_TEST(greedy_stops_early)
{
	tp_conf *c = NULL;
	tp_error err;
	ck_assert_msg(tp_conf_load_string("Network=dragonfly Groups=64 RoutersPerGroup=32 "
					  "NodesPerRouter=16\n"
					  "NodeName=e[00000-32767] CoordOrder=x-major\n",
					  "df.conf", &c, &err) == 0, "%s", err.msg);
	tp_alloc *a = NULL;
	ck_assert_int_eq(tp_alloc_from_hostlist(tp_conf_machine(c), "e[00000-32767]", 1,
						"t", &a, NULL), 0);
	tp_graph *g = NULL;
	ck_assert_int_eq(tp_graph_from_stencil(&g, "32x32x32:7pt", 32768, NULL), 0);
	int32_t *map = malloc(32768 * sizeof *map);
	ck_assert_ptr_nonnull(map);
	tp_graphmap_opts o;
	tp_graphmap_opts_default(&o);
	o.refine_passes = 0;
	o.time_budget_ms = 400;
	double t0 = tp__now_ms();
	ck_assert_int_eq(tp_graphmap_greedy(g, a, &o, map, &err), TP_ETIME);
	double ms = tp__now_ms() - t0;
#ifdef RUNNING_ON_VALGRIND
	if (RUNNING_ON_VALGRIND)   /* 50 times slower: the deadline may come first */
		tp_assert_err_has(&err, "greedy mapping: ");
	else
#endif
	{
		tp_assert_err_has(&err, "greedy mapping: would take about ");
		tp_assert_err_has(&err, " ms, over the time budget of 400 ms");
		ck_assert_msg(ms < 400, "stopped after %.0f ms", ms);
	}
	free(map);
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

START_TEST(map_on_dragonfly)
{
	tp_conf *c = dfly("valiant");
	const tp_machine *m = tp_conf_machine(c);
	tp_alloc *a = NULL;
	/* 24 nodes spread over every group, listed group-interleaved */
	int32_t nodes[24];
	for (int i = 0; i < 24; i++)
		nodes[i] = (i % 8) * 8 + i / 8;
	ck_assert_int_eq(tp_alloc_from_nodes(m, nodes, 24, 2, &a, NULL), 0);
	int32_t u[48], v[48];
	double w[48];
	for (int i = 0; i < 48; i++) {
		u[i] = i;
		v[i] = (i + 1) % 48;
		w[i] = 1;
	}
	tp_graph *g = NULL;
	ck_assert_int_eq(tp_graph_from_edges(&g, 48, 48, u, v, w, "ring", NULL), 0);
	int32_t map[48], blk[48];
	ck_assert_int_eq(tp_map_block(a, 48, blk, NULL), 0);
	tp_place_opts o;
	tp_place_opts_default(&o);
	o.geom.time_budget_ms = 0;
	o.policy = TP_POLICY_AUTO;
	for (int k = 0; k < 2; k++) {
		o.geom.metric = k ? TP_METRIC_CONGESTION : TP_METRIC_HOP_BYTES;
		tp_place_report r;
		ck_assert_int_eq(tp_place_ex(g, a, &o, map, &r, NULL), 0);
		ck_assert_int_eq(tp_mapping_validate(g, a, map, NULL), 0);
		tp_metrics mm, mb;
		ck_assert_int_eq(tp_metrics_compute(g, a, map, true, &mm, NULL), 0);
		ck_assert_int_eq(tp_metrics_compute(g, a, blk, true, &mb, NULL), 0);
		if (k)
			ck_assert(mm.max_congestion_bytes <= mb.max_congestion_bytes);
		else
			ck_assert_msg(mm.hop_bytes <= 0.5 * mb.hop_bytes, "%g vs block %g",
				      mm.hop_bytes, mb.hop_bytes);
	}
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

/* PERCS mod-colour halo mapping: 16 groups x 4 routers, one node per router
 * with 16 slots (64 per group), one global link per group pair, direct
 * routing; a periodic 32x32 5-point halo (1024 tasks). */
static tp_conf *percs(const char *routing)
{
	char text[256];
	snprintf(text, sizeof text,
		 "Network=dragonfly Groups=16 RoutersPerGroup=4 NodesPerRouter=1 "
		 "LinksPerGroupPair=1 Routing=%s\nNodeName=p[00-63] CoordOrder=x-major\n",
		 routing);
	tp_conf *c = NULL;
	tp_error err;
	ck_assert_msg(tp_conf_load_string(text, "percs.conf", &c, &err) == 0, "%s", err.msg);
	return c;
}

START_TEST(modcolor_halo)
{
	tp_conf *c = percs("direct");
	const tp_machine *m = tp_conf_machine(c);
	tp_alloc *a = NULL;
	tp_error err;
	ck_assert_int_eq(tp_alloc_from_hostlist(m, "p[00-63]", 16, "t", &a, &err), 0);
	tp_graph *g = NULL;
	ck_assert_int_eq(tp_graph_from_stencil(&g, "32x32:5pt:periodic=all", 1024, &err), 0);
	int32_t *map = malloc(1024 * sizeof *map), *map2 = malloc(1024 * sizeof *map2),
		*blk = malloc(1024 * sizeof *blk);
	ck_assert_int_eq(tp_graphmap_modcolor(g, a, NULL, map, &err), 0);
	ck_assert_int_eq(tp_mapping_validate(g, a, map, NULL), 0);
	ck_assert_int_eq(tp_graphmap_modcolor(g, a, NULL, map2, &err), 0);
	ck_assert_mem_eq(map, map2, 1024 * sizeof *map);   /* deterministic */
	/* every group holds exactly 64 tasks */
	int per[16] = { 0 };
	for (int t = 0; t < 1024; t++)
		per[tp_machine_node_coords(m, tp_alloc_node(a, map[t]))[1]]++;
	for (int k = 0; k < 16; k++)
		ck_assert_int_eq(per[k], 64);
	ck_assert_int_eq(tp_map_block(a, 1024, blk, NULL), 0);
	tp_metrics mm, mb;
	ck_assert_int_eq(tp_metrics_compute(g, a, map, true, &mm, NULL), 0);
	ck_assert_int_eq(tp_metrics_compute(g, a, blk, true, &mb, NULL), 0);
	ck_assert_msg(mm.max_congestion_bytes < mb.max_congestion_bytes,
		      "modcolor %g vs block %g", mm.max_congestion_bytes,
		      mb.max_congestion_bytes);
	/* auto with the congestion metric runs it and keeps a result at least
	 * as good */
	tp_place_opts o;
	tp_place_opts_default(&o);
	o.policy = TP_POLICY_AUTO;
	o.geom.metric = TP_METRIC_CONGESTION;
	o.geom.time_budget_ms = 0;
	o.graph.refine_passes = 1;
	tp_place_report r;
	ck_assert_int_eq(tp_place_ex(g, a, &o, map2, &r, &err), 0);
	int mc = -1;
	for (int i = 0; i < r.ncandidates; i++)
		if (!strcmp(r.cand[i].name, "modcolor"))
			mc = i;
	ck_assert_int_ge(mc, 0);
	ck_assert(r.cand[mc].ran);
	ck_assert(r.cand[r.best].score <= r.cand[mc].score);
	/* the policy by name */
	enum tp_policy pol;
	ck_assert_int_eq(tp_policy_parse("modcolor", &pol, NULL), 0);
	o.policy = pol;
	ck_assert_int_eq(tp_place_ex(g, a, &o, map2, &r, &err), 0);
	ck_assert_mem_eq(map, map2, 1024 * sizeof *map);
	/* fewer slots in some groups, more elsewhere: still valid */
	ck_assert_int_eq(tp_alloc_set_slots_spec(a, "8(x8),24(x8),16(x48)", &err), 0);
	ck_assert_int_eq(tp_graphmap_modcolor(g, a, NULL, map, &err), 0);
	ck_assert_int_eq(tp_mapping_validate(g, a, map, NULL), 0);
	/* more slots than tasks */
	ck_assert_int_eq(tp_alloc_set_slots_spec(a, "20(x64)", &err), 0);
	ck_assert_int_eq(tp_graphmap_modcolor(g, a, NULL, map, &err), 0);
	ck_assert_int_eq(tp_mapping_validate(g, a, map, NULL), 0);
	tp_graph_destroy(g);
	/* not a 2-D grid: skipped */
	ck_assert_int_eq(tp_graph_from_stencil(&g, "8x8x16", 1024, &err), 0);
	ck_assert_int_eq(tp_graphmap_modcolor(g, a, NULL, map, &err), TP_ENOTSUP);
	tp_assert_err_has(&err, "not a 2-D grid");
	o.policy = TP_POLICY_AUTO;
	ck_assert_int_eq(tp_place_ex(g, a, &o, map, &r, &err), 0);
	mc = -1;
	for (int i = 0; i < r.ncandidates; i++)
		if (!strcmp(r.cand[i].name, "modcolor"))
			mc = i;
	ck_assert_int_ge(mc, 0);
	ck_assert(!r.cand[mc].ran);
	ck_assert_ptr_nonnull(strstr(r.cand[mc].note, "skipped"));
	tp_graph_destroy(g);
	/* odd x odd grid: skipped, one line */
	ck_assert_int_eq(tp_graph_from_stencil(&g, "33x31", 0, &err), 0);
	ck_assert_int_eq(tp_graphmap_modcolor(g, a, NULL, map, &err), TP_ENOTSUP);
	ck_assert_ptr_null(strchr(err.msg, '\n'));
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
	/* not two-level: a torus */
	ck_assert_int_eq(tp_conf_load_string("Network=torus Dims=4x4 Wrap=yes\nNodeName=n[0-15] CoordOrder=x-major\n",
					     "t.conf", &c, &err), 0);
	ck_assert_int_eq(tp_alloc_from_hostlist(tp_conf_machine(c), "n[0-15]", 4, "t", &a, &err), 0);
	ck_assert_int_eq(tp_graph_from_stencil(&g, "8x8", 64, &err), 0);
	ck_assert_int_eq(tp_graphmap_modcolor(g, a, NULL, map, &err), TP_ENOTSUP);
	tp_assert_err_has(&err, "two-level");
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
	free(map);
	free(map2);
	free(blk);
}
END_TEST

/* The paper's Figure 2: an 8x8 grid of blocks (here one task each) on 32
 * groups, two blocks per group; block row 2j gets colours 8j + y, row 2j+1
 * 8j + ((5y + 2) mod 8) (the printed figure's last cell, 19, is the erratum
 * for 29).  The colouring is perfect: the 8 neighbours (torus) of each
 * group's two tasks lie in 8 distinct other groups. */
START_TEST(modcolor_figure2)
{
	tp_conf *c = NULL;
	tp_error err;
	ck_assert_msg(tp_conf_load_string("Network=dragonfly Groups=32 RoutersPerGroup=1 "
					  "NodesPerRouter=1 LinksPerGroupPair=1\n"
					  "NodeName=f[00-31] CoordOrder=x-major\n",
					  "fig2.conf", &c, &err) == 0, "%s", err.msg);
	const tp_machine *m = tp_conf_machine(c);
	tp_alloc *a = NULL;
	ck_assert_int_eq(tp_alloc_from_hostlist(m, "f[00-31]", 2, "t", &a, &err), 0);
	tp_graph *g = NULL;
	ck_assert_int_eq(tp_graph_from_stencil(&g, "8x8:5pt:periodic=all", 64, &err), 0);
	int32_t map[64];
	ck_assert_int_eq(tp_graphmap_modcolor(g, a, NULL, map, &err), 0);
	int grp[8][8];
	for (int t = 0; t < 64; t++)
		grp[t % 8][t / 8] = tp_machine_node_coords(m, tp_alloc_node(a, map[t]))[1];
	for (int x = 0; x < 8; x++)
		for (int y = 0; y < 8; y++)
			ck_assert_int_eq(grp[x][y], x % 2 == 0 ? (x / 2) * 8 + y
							       : (x / 2) * 8 + (5 * y + 2) % 8);
	ck_assert_int_eq(grp[7][7], 29);
	for (int k = 0; k < 32; k++) {
		int nb[8], n = 0;
		for (int x = 0; x < 8; x++)
			for (int y = 0; y < 8; y++) {
				if (grp[x][y] != k)
					continue;
				nb[n++] = grp[(x + 1) % 8][y];
				nb[n++] = grp[(x + 7) % 8][y];
				nb[n++] = grp[x][(y + 1) % 8];
				nb[n++] = grp[x][(y + 7) % 8];
			}
		ck_assert_int_eq(n, 8);
		for (int i = 0; i < 8; i++) {
			ck_assert_int_ne(nb[i], k);
			for (int j = i + 1; j < 8; j++)
				ck_assert_int_ne(nb[i], nb[j]);
		}
	}
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

/* Link ends: every link a route crosses joins the routers the route walks
 * through, in order; unused ids say so. */
START_TEST(link_ends)
{
	tp_conf *c = dfly("valiant");
	const tp_machine *m = tp_conf_machine(c);
	int32_t n = tp_machine_node_count(m);
	int64_t l[8];
	for (int32_t a = 0; a < n; a += 5)
		for (int32_t b = 0; b < n; b += 7) {
			int len = tp_machine_route(m, a, b, l, 8);
			ck_assert_int_ge(len, 0);
			int cur[2] = { tp_machine_node_coords(m, a)[0],
				       tp_machine_node_coords(m, a)[1] };
			for (int k = 0; k < len; k++) {
				int x[2], y[2];
				ck_assert_int_eq(tp_machine_link_ends(m, l[k], x, y), 0);
				/* directed: the walk leaves through the link's first
				 * end and arrives at its second */
				bool fx = x[0] == cur[0] && x[1] == cur[1];
				ck_assert_msg(fx, "link %lld does not leave (%d,%d)",
					      (long long)l[k], cur[0], cur[1]);
				cur[0] = y[0];
				cur[1] = y[1];
			}
			ck_assert_int_eq(cur[0], tp_machine_node_coords(m, b)[0]);
			ck_assert_int_eq(cur[1], tp_machine_node_coords(m, b)[1]);
		}
	int x[2], y[2];
	/* global link 1 of groups 0 and 1: router 1 of group 0, 3 of group 1 */
	int64_t g01 = 9 * 4 * 4 + (0 * 9 + 1) * 2 + 1;
	ck_assert_int_eq(tp_machine_link_ends(m, g01, x, y), 0);
	ck_assert_int_eq(x[0], 1);
	ck_assert_int_eq(x[1], 0);
	ck_assert_int_eq(y[0], 3);
	ck_assert_int_eq(y[1], 1);
	/* the same cable from group 1 to group 0: the ends swap */
	ck_assert_int_eq(tp_machine_link_ends(m, 9 * 4 * 4 + (1 * 9 + 0) * 2 + 1,
					      x, y), 0);
	ck_assert_int_eq(x[0], 3);
	ck_assert_int_eq(x[1], 1);
	ck_assert_int_eq(y[0], 1);
	ck_assert_int_eq(y[1], 0);
	/* local links are directed too: r2 -> r0 of group 0 */
	ck_assert_int_eq(tp_machine_link_ends(m, 2 * 4 + 0, x, y), 0);
	ck_assert_int_eq(x[0], 2);
	ck_assert_int_eq(y[0], 0);
	/* unused: a router with itself, a group with itself */
	ck_assert_int_eq(tp_machine_link_ends(m, 0, x, y), TP_ENOENT);
	ck_assert_int_eq(tp_machine_link_ends(m, 9 * 16 + (1 * 9 + 1) * 2, x, y),
			 TP_ENOENT);
	ck_assert_int_eq(tp_machine_link_ends(m, tp_machine_link_count(m), x, y),
			 TP_EINVAL);
	ck_assert_int_eq(tp_machine_link_ends(m, -1, x, y), TP_EINVAL);
	tp_conf_destroy(c);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("dragonfly");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, distances_and_routes);
	tcase_add_test(tc, link_ends);
	tcase_add_loop_test(tc, bad_dragonfly, 0, (int)(sizeof bad_configs / sizeof bad_configs[0]));
	tcase_add_test(tc, map_on_dragonfly);
	tcase_add_test(tc, modcolor_halo);
	tcase_add_test(tc, modcolor_figure2);
	tcase_add_test(tc, auto_rule_congestion);
	tcase_add_test(tc, greedy_stops_early);
	suite_add_tcase(s, tc);
	return tp_test_run(s);
}
