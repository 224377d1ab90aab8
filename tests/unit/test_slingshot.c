/* Unit tests: dragonflies as Slingshot sites describe them
 * (core/src/net/dragonfly.c, core/src/conf/): groups and switches from node
 * names (NodeNameFormat=) or from a file (SwitchFile=), and adaptive
 * routing (a share of the traffic non-minimal). */
#include <unistd.h>

#include "testutil.h"
#include <topoplace/alloc.h>
#include <topoplace/conf.h>
#include "net/dragonfly.h"
#include "net/machine_internal.h"
#include "pattern/pattern_internal.h"

#define EXAMPLES TP_SOURCE_DIR "/conf/examples/"

static int32_t node(const tp_machine *m, const char *name)
{
	int32_t i = tp_machine_find_node(m, name);
	ck_assert_msg(i >= 0, "no node %s", name);
	return i;
}

START_TEST(format_parse_and_match)
{
	struct tp__dfly_format *f = NULL;
	tp_error err;
	ck_assert_int_eq(tp__dfly_format_parse("x{group-1000}c{switch}s{*}b{*}n{*}", &f,
					       &err), 0);
	long long g = -1, s = -1;
	ck_assert_int_eq(tp__dfly_format_match(f, "x1003c7s0b1n0", &g, &s), -1);
	ck_assert_int_eq(g, 3);
	ck_assert_int_eq(s, 7);
	ck_assert_int_eq(tp__dfly_format_match(f, "x1003c07s12b1n0", &g, &s), -1);
	ck_assert_int_eq(s, 7);
	/* the first character that does not match */
	ck_assert_int_eq(tp__dfly_format_match(f, "y1003c7s0b1n0", &g, &s), 0);
	ck_assert_int_eq(tp__dfly_format_match(f, "x1003k7s0b1n0", &g, &s), 5);
	ck_assert_int_eq(tp__dfly_format_match(f, "x1003cs0b1n0", &g, &s), 6);
	ck_assert_int_eq(tp__dfly_format_match(f, "x1003c7s0b1n0-ib", &g, &s), 13);
	ck_assert_int_eq(tp__dfly_format_match(f, "x1003c7s0b1n", &g, &s), 12);
	ck_assert_int_eq(tp__dfly_format_match(f, "x1234567890c7s0b1n0", &g, &s), 1);
	tp__dfly_format_free(f);
	/* offsets both ways, a field at the start */
	ck_assert_int_eq(tp__dfly_format_parse("{switch+1}-g{group}", &f, &err), 0);
	ck_assert_int_eq(tp__dfly_format_match(f, "4-g2", &g, &s), -1);
	ck_assert_int_eq(s, 5);
	ck_assert_int_eq(g, 2);
	tp__dfly_format_free(f);
	static const struct { const char *fmt, *frag; } bad[] = {
		{ "x{group}c{*}", "NodeNameFormat=x{group}c{*}: needs {group} and {switch}" },
		{ "x{group}{switch}", "two fields touch" },
		{ "x{group}c{switch}s{group}", "{group} twice" },
		{ "x{cab}c{switch}", "unknown field {cab}" },
		{ "x{group-x}c{switch}", "{group-x}: the offset is not a number" },
		{ "x{*+1}c{group}s{switch}", "unknown field {*}" },
		{ "x}{group}c{switch}", "'}' without '{'" },
		{ "x{group", "a field is {group}, {switch} or {*}" },
		{ "x{}c", "a field is {group}, {switch} or {*}" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		f = (struct tp__dfly_format *)1;
		ck_assert_int_eq(tp__dfly_format_parse(bad[i].fmt, &f, &err), TP_EINVAL);
		ck_assert_ptr_null(f);
		tp_assert_err_has(&err, bad[i].frag);
	}
}
END_TEST

START_TEST(example_config)
{
	tp_conf *c = NULL;
	tp_error err;
	ck_assert_msg(tp_conf_load(EXAMPLES "slingshot.conf", &c, &err) == 0, "%s",
		      err.msg);
	const tp_machine *m = tp_conf_machine(c);
	ck_assert(tp_machine_has(m, TP_CAP_GROUPS));
	ck_assert_int_eq(tp_machine_node_count(m), 512);
	double share = -1;
	ck_assert_int_eq(tp_machine_dragonfly_routing(m, &share), TP_DFLY_ADAPTIVE);
	ck_assert_double_eq(share, 0.5);
	ck_assert_str_eq(tp_dfly_routing_name(TP_DFLY_ADAPTIVE), "adaptive");
	const int *x = tp_machine_node_coords(m, node(m, "x1002c5s3b1n0"));
	ck_assert_int_eq(x[0], 5);    /* switch (chassis) */
	ck_assert_int_eq(x[1], 2);    /* group (cabinet) */
	/* 16 nodes per chassis: one router, distance 0 */
	ck_assert_int_eq(tp_machine_distance(m, node(m, "x1002c5s0b0n0"),
					     node(m, "x1002c5s7b1n0")), 0);
	ck_assert_int_eq(tp_machine_distance(m, node(m, "x1002c5s0b0n0"),
					     node(m, "x1002c6s0b0n0")), 1);
	tp_conf_destroy(c);
}
END_TEST

static int load_fails(const char *text, tp_error *err)
{
	tp_conf *c = (tp_conf *)1;
	int rc = tp_conf_load_string(text, "cfg", &c, err);
	ck_assert_ptr_null(c);
	return rc;
}

START_TEST(config_errors)
{
	static const struct { const char *text, *frag; } bad[] = {
		{ "Network=dragonfly Groups=2 RoutersPerGroup=2 NodeNameFormat=x{group}c{switch}\n"
		  "NodeName=x[0-1]c[0-1],y0c0\n",
		  "cfg:2: NodeName=x[0-1]c[0-1],y0c0: node 'y0c0' does not match NodeNameFormat=x{group}c{switch} (at character 1)" },
		{ "Network=dragonfly Groups=2 RoutersPerGroup=2 NodeNameFormat=x{group}c{switch}\n"
		  "NodeName=x[0-2]c0\n",
		  "cfg:2: NodeName=x[0-2]c0: node 'x2c0' is in group 2, switch 0: outside Groups=2, RoutersPerGroup=2" },
		{ "Network=dragonfly Groups=2 RoutersPerGroup=2 NodeNameFormat=x{group}c{switch}\n"
		  "NodeName=x0c0 Offset=3\n",
		  "cfg:2: NodeName=x0c0: needs Coords= or CoordOrder= or NodeNameFormat= (or NodeTopology= for nodes a CoordFile= or SwitchFile= placed)" },
		{ "Network=dragonfly Groups=2 RoutersPerGroup=2 NodeNameFormat=x{group}c{switch}\n"
		  "NodeName=x0c0,x0c0\n",
		  "duplicate node 'x0c0'" },
		{ "Network=dragonfly Groups=2 RoutersPerGroup=2 NodeNameFormat=x{group}\n",
		  "cfg:1: NodeNameFormat=x{group}: needs {group} and {switch}" },
		{ "Network=torus Dims=2 NodeNameFormat=x{group}c{switch}\nNodeName=a Coords=0\n",
		  "cfg:1: NodeNameFormat= needs Network=dragonfly" },
		{ "Network=dragonfly Groups=2 RoutersPerGroup=2 AdaptiveShare=0.3\nNodeName=a Coords=0,0\n",
		  "cfg:1: AdaptiveShare= needs Routing=adaptive" },
		{ "Network=dragonfly Groups=2 RoutersPerGroup=2 Routing=adaptive AdaptiveShare=1.5\n",
		  "cfg:1: AdaptiveShare=1.5: expected a fraction in 0..1" },
		{ "Network=dragonfly Groups=2 RoutersPerGroup=2 Routing=adaptive AdaptiveShare=x\n",
		  "cfg:1: AdaptiveShare=x: expected a fraction in 0..1" },
		{ "Network=torus Dims=2\nSwitchFile=s.txt\n", "cfg:2: SwitchFile= needs Network=dragonfly" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		tp_error err;
		ck_assert_int_eq(load_fails(bad[i].text, &err), TP_EINVAL);
		tp_assert_err_has(&err, bad[i].frag);
	}
}
END_TEST

/* SwitchFile=: "name group switch" lines. */
START_TEST(switch_file)
{
	char *f = tp_test_tmpfile("# name group switch\n"
				  "frontier0001 0 0\nfrontier0002 0 1   # comment\n"
				  "\nfrontier0003 1 1\n");
	char text[512];
	snprintf(text, sizeof text,
		 "Network=dragonfly Groups=2 RoutersPerGroup=2 NodesPerRouter=2\n"
		 "SwitchFile=%s\n", f);
	tp_conf *c = NULL;
	tp_error err;
	ck_assert_msg(tp_conf_load_string(text, "cfg", &c, &err) == 0, "%s", err.msg);
	const tp_machine *m = tp_conf_machine(c);
	ck_assert_int_eq(tp_machine_node_count(m), 3);
	const int *x = tp_machine_node_coords(m, node(m, "frontier0003"));
	ck_assert_int_eq(x[0], 1);
	ck_assert_int_eq(x[1], 1);
	x = tp_machine_node_coords(m, node(m, "frontier0002"));
	ck_assert_int_eq(x[0], 1);
	ck_assert_int_eq(x[1], 0);
	tp_conf_destroy(c);
	unlink(f);
	free(f);
	static const struct { const char *file, *frag; } bad[] = {
		{ "a 0\n", ":1: expected a node name, its group and its switch, found 2 fields" },
		{ "a 2 0\n", ":1: node 'a': group is outside 0..1" },
		{ "a 0 x\n", ":1: node 'a': switch ('x') is not a number" },
		{ "a 0 0\na 1 1\n", ":2: duplicate node 'a' (already placed at" },
		{ "# none\n", ": no nodes in SwitchFile" },
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		f = tp_test_tmpfile(bad[i].file);
		snprintf(text, sizeof text,
			 "Network=dragonfly Groups=2 RoutersPerGroup=2\nSwitchFile=%s\n", f);
		ck_assert_int_eq(load_fails(text, &err), TP_EINVAL);
		tp_assert_err_has(&err, f);
		tp_assert_err_has(&err, bad[i].frag);
		unlink(f);
		free(f);
	}
}
END_TEST

/* 9 groups of 4 routers, 2 global links per pair. */
static tp_conf *dfly(const char *routing)
{
	char text[256];
	snprintf(text, sizeof text,
		 "Network=dragonfly Groups=9 RoutersPerGroup=4 LinksPerGroupPair=2 %s\n"
		 "NodeName=d[00-35] CoordOrder=x-major\n", routing);
	tp_conf *c = NULL;
	tp_error err;
	ck_assert_msg(tp_conf_load_string(text, "df.conf", &c, &err) == 0, "%s", err.msg);
	return c;
}

static bool same_route(const tp_machine *m, const tp_machine *o, int32_t a, int32_t b)
{
	int64_t x[8], y[8];
	int n = tp_machine_route(m, a, b, x, 8), k = tp_machine_route(o, a, b, y, 8);
	return n == k && !memcmp(x, y, sizeof(int64_t) * (size_t)(n > 0 ? n : 0));
}

/* Adaptive with share 0 is direct, with 1 Valiant; with 0.5 about half of
 * the router pairs between groups go the Valiant way. */
START_TEST(adaptive_routes)
{
	tp_conf *cd = dfly("Routing=direct"), *cv = dfly("Routing=valiant");
	tp_conf *c0 = dfly("Routing=adaptive AdaptiveShare=0");
	tp_conf *c1 = dfly("Routing=adaptive AdaptiveShare=1");
	tp_conf *ch = dfly("Routing=adaptive");
	const tp_machine *md = tp_conf_machine(cd), *mv = tp_conf_machine(cv);
	const tp_machine *m0 = tp_conf_machine(c0), *m1 = tp_conf_machine(c1);
	const tp_machine *mh = tp_conf_machine(ch);
	double share = 0;
	ck_assert_int_eq(tp_machine_dragonfly_routing(mh, &share), TP_DFLY_ADAPTIVE);
	ck_assert_double_eq(share, 0.5);
	int pairs = 0, val = 0;
	for (int32_t a = 0; a < 36; a++)
		for (int32_t b = 0; b < 36; b++) {
			ck_assert(same_route(m0, md, a, b));
			ck_assert(same_route(m1, mv, a, b));
			if (tp_machine_node_coords(mh, a)[1] == tp_machine_node_coords(mh, b)[1])
				continue;
			pairs++;
			bool v = same_route(mh, mv, a, b) && !same_route(mh, md, a, b);
			ck_assert(v || same_route(mh, md, a, b));
			val += v;
			/* distances stay minimal */
			ck_assert_int_eq(tp_machine_distance(mh, a, b),
					 tp_machine_distance(md, a, b));
		}
	ck_assert_int_eq(pairs, 36 * 32);
	ck_assert_msg(val > pairs * 4 / 10 && val < pairs * 6 / 10, "%d of %d", val, pairs);
	tp_conf_destroy(cd);
	tp_conf_destroy(cv);
	tp_conf_destroy(c0);
	tp_conf_destroy(c1);
	tp_conf_destroy(ch);
}
END_TEST

/* Every router of group 0 sends to its partner in group 1: direct routing
 * crowds the 2 global links g0-g1; Valiant spreads it over the other
 * groups; adaptive lies between. */
START_TEST(adaptive_congestion)
{
	const char *r[3] = { "Routing=direct", "Routing=adaptive AdaptiveShare=0.5",
			     "Routing=valiant" };
	double cong[3];
	for (int k = 0; k < 3; k++) {
		tp_conf *c = dfly(r[k]);
		const tp_machine *m = tp_conf_machine(c);
		tp_alloc *al = NULL;
		tp_error err;
		ck_assert_int_eq(tp_alloc_from_hostlist(m, "d[00-07]", 1, "t", &al, &err), 0);
		int32_t u[4] = { 0, 1, 2, 3 }, v[4] = { 4, 5, 6, 7 };
		double w[4] = { 1e9, 1e9, 1e9, 1e9 };
		tp_graph *g = NULL;
		ck_assert_int_eq(tp_graph_from_edges(&g, 8, 4, u, v, w, "t", &err), 0);
		int32_t map[8];
		for (int i = 0; i < 8; i++)
			map[i] = i;
		tp_metrics x;
		ck_assert_int_eq(tp_metrics_compute(g, al, map, true, &x, &err), 0);
		cong[k] = x.max_congestion_bytes;
		tp_graph_destroy(g);
		tp_alloc_destroy(al);
		tp_conf_destroy(c);
	}
	/* directed links, but a router pair is dealt once: the 4 flows back
	 * spread as the 4 out do (each way 1e9 at most under Valiant) */
	/* direct: 4 flows over 2 links: 2e9 on one */
	ck_assert_double_eq_tol(cong[0], 2e9, 1);
	ck_assert(cong[2] < cong[0]);
	ck_assert(cong[1] <= cong[0] && cong[1] >= cong[2]);
	ck_assert_double_eq_tol(cong[2], 1e9, 1);
	/* both directions of a pair go through the same intermediate group */
	tp_conf *c = dfly("Routing=valiant");
	const tp_machine *m = tp_conf_machine(c);
	for (int32_t a = 0; a < 36; a += 3)
		for (int32_t b = 1; b < 36; b += 5) {
			int64_t x[8], y[8];
			int n = tp_machine_route(m, a, b, x, 8), k = tp_machine_route(m, b, a, y, 8);
			ck_assert_int_ge(n, 0);
			ck_assert_int_ge(k, 0);
			unsigned gx = 0, gy = 0;
			int e0[2], e1[2];
			for (int i = 0; i < n; i++)
				if (tp_machine_link_ends(m, x[i], e0, e1) == 0)
					gx |= 1u << e0[1] | 1u << e1[1];
			for (int i = 0; i < k; i++)
				if (tp_machine_link_ends(m, y[i], e0, e1) == 0)
					gy |= 1u << e0[1] | 1u << e1[1];
			ck_assert_msg(gx == gy, "%d <-> %d: groups %x and %x", a, b, gx, gy);
		}
	tp_conf_destroy(c);
}
END_TEST

START_TEST(routing_api)
{
	tp_machine *m = NULL;
	tp_error err;
	ck_assert_int_eq(tp_machine_create_dragonfly(&m, 3, 2, 1, 1, false, &err), 0);
	ck_assert_int_eq(tp_machine_dragonfly_routing(m, NULL), TP_DFLY_DIRECT);
	ck_assert_int_eq(tp_machine_set_dragonfly_routing(m, TP_DFLY_ADAPTIVE, 2, &err),
			 TP_EINVAL);
	tp_assert_err_has(&err, "AdaptiveShare=2: expected a fraction in 0..1");
	ck_assert_int_eq(tp_machine_set_dragonfly_routing(m, TP_DFLY_VALIANT, 0, &err), 0);
	ck_assert(tp_machine_dragonfly_valiant(m));
	tp_machine_destroy(m);
	ck_assert_int_eq(tp_machine_create(&m, 1, (int[]){ 2 }, NULL, &err), 0);
	ck_assert_int_eq(tp_machine_set_dragonfly_routing(m, TP_DFLY_DIRECT, 0, &err),
			 TP_EINVAL);
	tp_assert_err_has(&err, "not a dragonfly");
	ck_assert_int_eq(tp_machine_dragonfly_routing(m, NULL), TP_DFLY_DIRECT);
	tp_machine_destroy(m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("slingshot");
	TCase *tc = tcase_create("slingshot");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, format_parse_and_match);
	tcase_add_test(tc, example_config);
	tcase_add_test(tc, config_errors);
	tcase_add_test(tc, switch_file);
	tcase_add_test(tc, adaptive_routes);
	tcase_add_test(tc, adaptive_congestion);
	tcase_add_test(tc, routing_api);
	suite_add_tcase(s, tc);
	return tp_test_run(s);
}
