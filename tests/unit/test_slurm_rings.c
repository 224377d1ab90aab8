/* Unit tests: Slurm's topology/ring (core/src/net/ring.c: records;
 * core/src/slurm/topology_conf.c: RingName= lines) and topology/torus3d
 * (core/src/net/torus3d.c: one torus, regions, several toruses side by
 * side). */
#include "testutil.h"
#include "net/records.h"
#include "util/util_internal.h"
#include "net/network.h"
#include "slurm/slurm_topo.h"
#include "map/graphmap_internal.h"
#include "map/place_internal.h"
#include "conf/conf_records.h"
#include "net/machine_internal.h"
#include "pattern/pattern_internal.h"

static int32_t node(const tp_machine *m, const char *name)
{
	int32_t i = tp_machine_find_node(m, name);
	ck_assert_msg(i >= 0, "no node %s", name);
	return i;
}

static int64_t dist(const tp_machine *m, const char *a, const char *b)
{
	return tp_machine_distance(m, node(m, a), node(m, b));
}

static void assert_coords(const tp_machine *m, const char *name, int n,
			  const int *want)
{
	const int *c = tp_machine_node_coords(m, node(m, name));
	for (int d = 0; d < n; d++)
		ck_assert_msg(c[d] == want[d], "%s: coordinate %d is %d, not %d", name, d,
			      c[d], want[d]);
}

static tp_machine *rings(const char *text, struct tp__warnings *w)
{
	tp_machine *m = NULL;
	tp_error err;
	tp_error_clear(&err);
	ck_assert_msg(tp__rings_from_conf_text(&m, text, "topology.conf", w, &err) == 0,
		      "%s", err.msg);
	return m;
}

static void rings_fail(const char *text, const char *msg)
{
	tp_machine *m = NULL;
	tp_error err;
	tp_error_clear(&err);
	ck_assert_int_eq(tp__rings_from_conf_text(&m, text, "topology.conf", NULL, &err),
			 TP_EINVAL);
	ck_assert_ptr_null(m);
	ck_assert_str_eq(err.msg, msg);
}

static void link_named(const tp_machine *m, int64_t l, const char *want)
{
	char buf[128];
	tp_machine_link_name(m, l, buf, sizeof buf);
	ck_assert_str_eq(buf, want);
}

/* Two rings of 8 and 4: positions in list order, wrap-around, a fixed cost
 * of 4 + 1 (the ring of 8's longest distance + 1) between rings. */
START_TEST(ring_distances_and_wrap)
{
	tp_machine *m = rings("# two rings\n"
			      "RingName=r0 Nodes=n[00-07]\n"
			      "RingName=r1 Nodes=n[08-11]   # four\n", NULL);
	ck_assert_str_eq(tp_machine_kind(m), "ring");
	ck_assert_int_eq(tp_machine_node_count(m), 12);
	ck_assert_int_eq(tp_machine_ndims(m), 2);
	ck_assert_int_eq(tp_machine_dim(m, 0), 8);
	ck_assert_int_eq(tp_machine_dim(m, 1), 2);
	ck_assert(!tp_machine_wraps(m, 0));     /* rings of two sizes */
	assert_coords(m, "n03", 2, (int[]){ 3, 0 });
	assert_coords(m, "n09", 2, (int[]){ 1, 1 });
	ck_assert_int_eq(dist(m, "n00", "n00"), 0);
	ck_assert_int_eq(dist(m, "n00", "n01"), 1);
	ck_assert_int_eq(dist(m, "n00", "n07"), 1);     /* round the end */
	ck_assert_int_eq(dist(m, "n00", "n04"), 4);
	ck_assert_int_eq(dist(m, "n01", "n06"), 3);
	ck_assert_int_eq(dist(m, "n08", "n10"), 2);
	ck_assert_int_eq(dist(m, "n08", "n11"), 1);
	ck_assert_int_eq(dist(m, "n00", "n08"), 5);
	ck_assert_int_eq(dist(m, "n11", "n04"), 5);
	/* routes: the shorter way round; between rings two ports */
	int64_t l[16];
	ck_assert_int_eq(tp_machine_route(m, node(m, "n00"), node(m, "n07"), l, 16), 1);
	link_named(m, l[0], "r0:0->r0:7");
	ck_assert_int_eq(l[0], 15);             /* cable 7 (7 -> 0), downwards */
	ck_assert_int_eq(tp_machine_route(m, node(m, "n01"), node(m, "n03"), l, 16), 2);
	link_named(m, l[0], "r0:1->r0:2");
	link_named(m, l[1], "r0:2->r0:3");
	ck_assert_int_eq(tp_machine_route(m, node(m, "n11"), node(m, "n08"), l, 16), 1);
	link_named(m, l[0], "r1:3->r1:0");
	ck_assert_int_eq(tp_machine_route(m, node(m, "n00"), node(m, "n09"), l, 16), 2);
	ck_assert_int_eq(l[0], 32);             /* 16 routers x 2: ports after cables */
	ck_assert_int_eq(l[1], 32 + 2 * 9 + 1);
	link_named(m, l[0], "r0:0->(between rings)");
	link_named(m, l[1], "(between rings)->r1:1");
	ck_assert_int_eq(tp_machine_route(m, node(m, "n00"), node(m, "n09"), l, 1), TP_EINVAL);
	ck_assert_int_eq(tp_machine_link_count(m), 64);
	ck_assert_int_eq(m->net->max_route_links(m), 4);
	/* link ends: cables join routers, ports and the ring of 4's unused
	 * positions 4..7 do not */
	int a[2], b[2];
	ck_assert_int_eq(tp_machine_link_ends(m, 15, a, b), 0);
	ck_assert_int_eq(a[0], 0);
	ck_assert_int_eq(b[0], 7);
	ck_assert_int_eq(tp_machine_link_ends(m, 2 * 12, a, b), TP_ENOENT);
	ck_assert_int_eq(tp_machine_link_ends(m, 32, a, b), TP_ENOENT);
	/* the hierarchy: the ring */
	int64_t path[4];
	const int *c = tp_machine_node_coords(m, node(m, "n10"));
	ck_assert_int_eq(m->net->hierarchy(m, c, path, 4), 1);
	ck_assert_int_eq(path[0], 1);
	/* lower bounds: 0 inside, the ring distance to a slice of p's ring,
	 * the fixed cost for another ring only */
	int p[2] = { 0, 0 }, lo[2] = { 3, 0 }, hi[2] = { 6, 0 };
	ck_assert_int_eq(m->net->range_lower_bound(m, p, lo, hi), 2);
	int lo2[2] = { 0, 1 }, hi2[2] = { 7, 1 };
	ck_assert_int_eq(m->net->range_lower_bound(m, p, lo2, hi2), 5);
	int lo3[2] = { 4, 0 }, hi3[2] = { 4, 1 };
	ck_assert_int_eq(m->net->range_lower_bound(m, p, lo3, hi3), 4);
	tp_machine_destroy(m);

	/* rings of one size wrap in the box too */
	m = rings("RingName=a Nodes=x[0-3]\nRingName=b Nodes=y[0-3]\n", NULL);
	ck_assert(tp_machine_wraps(m, 0));
	ck_assert(!tp_machine_wraps(m, 1));
	ck_assert_int_eq(dist(m, "x0", "y0"), 3);   /* 2 + 1 */
	tp_machine_destroy(m);
}
END_TEST

/* At most 16 nodes a ring; names, lines and keys as Slurm reads them. */
START_TEST(ring_limits_and_errors)
{
	tp_machine *m = rings("RingName=full Nodes=n[00-15]\n", NULL);
	ck_assert_int_eq(tp_machine_node_count(m), 16);
	ck_assert_int_eq(dist(m, "n00", "n08"), 8);
	ck_assert_int_eq(dist(m, "n00", "n15"), 1);
	tp_machine_destroy(m);
	rings_fail("RingName=ok Nodes=n[0-3]\nRingName=big Nodes=n[10-26]\n",
		   "topology.conf:2: RingName=big Nodes=n[10-26]: 17 names, more than 16 "
		   "(the most nodes of a ring, Slurm's MAX_RING_SIZE)");
	rings_fail("RingName=r0 Nodes=a[0-1]\nRingName=r1 Nodes=b0\n\nRingName=r0 Nodes=c0\n",
		   "topology.conf:4: RingName=r0: duplicate ring (first at line 1)");
	rings_fail("# nothing\n\n", "topology.conf: no RingName= lines (Slurm refuses a "
		   "ring topology without one)");
	rings_fail("RingName=r0 Nodes=n[0-3] Foo=1\n",
		   "topology.conf:1: RingName=r0: unknown key 'Foo' (expected Nodes=)");
	rings_fail("SwitchName=s0 Nodes=n[0-3]\n",
		   "topology.conf:1: unknown key 'SwitchName' (expected RingName=, Nodes=); "
		   "a topology/ring file holds rings only");
	rings_fail("Nodes=n[0-3] RingName=r0\n",
		   "topology.conf:1: Nodes= before RingName= (Slurm reads each line from its "
		   "RingName=)");
	rings_fail("RingName=r0 RingName=r1\n",
		   "topology.conf:1: RingName= given twice (one ring per line)");
	rings_fail("RingName=r0 Nodes=\n",
		   "topology.conf:1: 'Nodes=': expected Key=Value (RingName=NAME Nodes=HOSTLIST)");
	rings_fail("RingName=r0 n[0-3]\n",
		   "topology.conf:1: 'n[0-3]': expected Key=Value (RingName=NAME Nodes=HOSTLIST)");
	rings_fail("RingName=\"\" Nodes=n0\n", "topology.conf:1: RingName=: empty value");
	tp_error err;
	tp_error_clear(&err);
	ck_assert_int_eq(tp__rings_from_conf_text(&m, "RingName=r0 Nodes=n[0-3\n",
						  "topology.conf", NULL, &err), TP_EINVAL);
	const char *pre = "topology.conf:1: RingName=r0 Nodes=n[0-3: ";
	ck_assert_msg(!strncmp(err.msg, pre, strlen(pre)), "%s", err.msg);
	/* 65536 rings at most: the 65537th line is refused */
	size_t cap = 65537 * 32;
	char *big = malloc(cap), *at = big;
	for (int i = 0; i < 65537; i++)
		at += sprintf(at, "RingName=r%d Nodes=n%d\n", i, i);
	ck_assert_int_eq(tp__rings_from_conf_text(&m, big, "topology.conf", NULL, &err),
			 TP_EINVAL);
	ck_assert_str_eq(err.msg, "topology.conf:65537: more than 65536 rings (Slurm "
			 "numbers rings in 16 bits)");
	*strrchr(big, 'R') = '\0';               /* 65536 rings: accepted */
	m = rings(big, NULL);
	ck_assert_int_eq(tp_machine_node_count(m), 65536);
	ck_assert_int_eq(tp_machine_dim(m, 1), 65536);
	ck_assert_int_eq(dist(m, "n0", "n65535"), 1);   /* rings of one: 0 + 1 */
	tp_machine_destroy(m);
	free(big);
}
END_TEST

/* RingName= lines as Slurm's parser reads them. */
START_TEST(ring_conf_syntax)
{
	struct tp__warnings w;
	memset(&w, 0, sizeof w);
	tp_machine *m = rings("ringname = r0   nodes = n[0-3]\n"
			      "RINGNAME=r1 Nodes=\"m[0-1],m5\"\n"
			      "RingName=empty Nodes=\"\"\n"
			      "RingName=bare\n"
			      "RingName=r4 Nodes=x0 Nodes=y[0-2]\n", &w);
	ck_assert_int_eq(tp_machine_node_count(m), 4 + 3 + 3);
	assert_coords(m, "m5", 2, (int[]){ 2, 1 });
	assert_coords(m, "y2", 2, (int[]){ 2, 4 });
	ck_assert_int_lt(tp_machine_find_node(m, "x0"), 0);   /* the latest Nodes= */
	ck_assert_int_eq(tp_machine_dim(m, 1), 5);              /* empty rings count */
	ck_assert_int_eq(w.n, 1);
	ck_assert_str_eq(w.line[0], "topology.conf:5: RingName=r4: Nodes= given twice; "
			 "the latest value is used, as in Slurm");
	/* the ring of 4 is the largest: 2 + 1 between rings */
	ck_assert_int_eq(dist(m, "n0", "y0"), 3);
	tp_machine_destroy(m);

	/* no ring with nodes: accepted, as Slurm does, with its warning */
	memset(&w, 0, sizeof w);
	m = rings("RingName=a\nRingName=b Nodes=\"\"\n", &w);
	ck_assert_int_eq(tp_machine_node_count(m), 0);
	ck_assert_int_eq(w.n, 1);
	ck_assert_str_eq(w.line[0], "topology.conf: no ring has nodes (Slurm warns that "
			 "the rings lack access to every node)");
	tp_machine_destroy(m);
}
END_TEST

/* A node listed twice keeps its first place; the second position stays,
 * without a node, so the ring's other distances are Slurm's. */
START_TEST(ring_node_twice)
{
	struct tp__warnings w;
	memset(&w, 0, sizeof w);
	tp_machine *m = rings("RingName=r0 Nodes=a[0-3]\n"
			      "RingName=r1 Nodes=b0,a1,b2,b3,b4\n", &w);
	ck_assert_int_eq(tp_machine_node_count(m), 8);
	assert_coords(m, "a1", 2, (int[]){ 1, 0 });
	assert_coords(m, "b2", 2, (int[]){ 2, 1 });
	ck_assert_int_eq(dist(m, "b0", "b2"), 2);    /* over the empty position */
	ck_assert_int_eq(dist(m, "b0", "b4"), 1);    /* a ring of 5 */
	ck_assert_int_eq(dist(m, "b0", "b3"), 2);
	ck_assert_int_eq(w.n, 1);
	ck_assert_str_eq(w.line[0], "topology.conf:2: node 'a1' is at r0:1 (line 1) and "
			 "again at r1:1; it stays at the first place, where Slurm's ranks "
			 "and addresses find it, and the second position is left without a "
			 "node");
	tp_machine_destroy(m);
	/* a numbered range holding nodes placed before goes name by name */
	memset(&w, 0, sizeof w);
	m = rings("RingName=r0 Nodes=n[00-07]\nRingName=r1 Nodes=n[04-11]\n", &w);
	ck_assert_int_eq(tp_machine_node_count(m), 12);
	assert_coords(m, "n08", 2, (int[]){ 4, 1 });
	assert_coords(m, "n11", 2, (int[]){ 7, 1 });
	ck_assert_int_eq(dist(m, "n08", "n11"), 3);
	ck_assert_int_eq(w.n, 1);
	ck_assert_str_eq(w.line[0], "topology.conf:2: node 'n04' is at r0:4 (line 1) and "
			 "again at r1:0 (and more nodes listed twice); it stays at the first "
			 "place, where Slurm's ranks and addresses find it, and the second "
			 "position is left without a node");
	tp_machine_destroy(m);
	/* twice in one ring, and more than one such node */
	memset(&w, 0, sizeof w);
	m = rings("RingName=r0 Nodes=a0,a1,a0,a2,a1\n", &w);
	ck_assert_int_eq(tp_machine_node_count(m), 3);
	ck_assert_int_eq(tp_machine_dim(m, 0), 5);
	ck_assert_int_eq(dist(m, "a0", "a2"), 2);    /* positions 0 and 3 of 5 */
	ck_assert_int_eq(w.n, 1);
	ck_assert_str_eq(w.line[0], "topology.conf:1: node 'a0' is at r0:0 (line 1) and "
			 "again at r0:2 (and more nodes listed twice); it stays at the first "
			 "place, where Slurm's ranks and addresses find it, and the second "
			 "position is left without a node");
	tp_machine_destroy(m);
}
END_TEST

/* Records from topology.yaml: messages in YAML's words. */
START_TEST(ring_records_yaml)
{
	struct tp__topo_rec rec[3] = {
		{ "r0", "n[0-3]", NULL, 3 },
		{ "r1", "n[4-5]", NULL, 5 },
		{ "r2", NULL, NULL, 7 },
	};
	struct tp__warnings w;
	memset(&w, 0, sizeof w);
	struct tp__topo_recs r = { rec, 3, "topology.yaml", true, &w };
	tp_machine *m = NULL;
	tp_error err;
	tp_error_clear(&err);
	ck_assert_msg(tp__rings_from_records(&m, &r, &err) == 0, "%s", err.msg);
	ck_assert_str_eq(tp_machine_kind(m), "ring");
	ck_assert_int_eq(tp_machine_node_count(m), 6);
	ck_assert_int_eq(dist(m, "n4", "n5"), 1);
	ck_assert_int_eq(dist(m, "n0", "n5"), 3);
	ck_assert_int_eq(w.n, 0);
	tp_machine_destroy(m);
	m = NULL;

	rec[2].name = "r0";
	ck_assert_int_eq(tp__rings_from_records(&m, &r, &err), TP_EINVAL);
	ck_assert_str_eq(err.msg, "topology.yaml:7: ring r0: duplicate ring (first at line 3)");
	rec[2].name = NULL;
	ck_assert_int_eq(tp__rings_from_records(&m, &r, &err), TP_EINVAL);
	ck_assert_str_eq(err.msg, "topology.yaml:7: ring without a name (Slurm refuses it: "
			 "ring: must be given)");
	rec[2].name = "big";
	rec[2].nodes = "x[00-16]";
	ck_assert_int_eq(tp__rings_from_records(&m, &r, &err), TP_EINVAL);
	ck_assert_str_eq(err.msg, "topology.yaml:7: ring big: nodes x[00-16]: 17 names, "
			 "more than 16 (the most nodes of a ring, Slurm's MAX_RING_SIZE)");
	r.n = 0;
	ck_assert_int_eq(tp__rings_from_records(&m, &r, &err), TP_EINVAL);
	ck_assert_str_eq(err.msg, "topology.yaml: no rings (Slurm refuses a ring topology "
			 "without one)");
	ck_assert_ptr_null(m);
}
END_TEST

/* The hierarchical mapper keeps each ring's talking tasks on one ring. */
START_TEST(ring_hierarchical)
{
	tp_machine *m = rings("RingName=a Nodes=a[0-7]\nRingName=b Nodes=b[0-7]\n", NULL);
	tp_alloc *al = NULL;
	tp_error err;
	tp_error_clear(&err);
	ck_assert_int_eq(tp_alloc_from_hostlist(m, "a0,b0,a1,b1,a2,b2,a3,b3", 1, "t",
						&al, &err), 0);
	/* two groups of four tasks, each a ring of its own */
	int32_t u[8], v[8];
	double bytes[8];
	for (int k = 0; k < 8; k++) {
		int g = k / 4, i = k % 4;
		u[k] = 4 * g + i;
		v[k] = 4 * g + (i + 1) % 4;
		bytes[k] = 1000;
	}
	tp_graph *g = NULL;
	ck_assert_int_eq(tp_graph_from_edges(&g, 8, 8, u, v, bytes, "t", &err), 0);
	int32_t blk[8], h[8];
	ck_assert_int_eq(tp_map_block(al, 8, blk, &err), 0);
	tp_graphmap_opts go;
	tp_graphmap_opts_default(&go);
	ck_assert_msg(tp_graphmap_hierarchical(g, al, &go, h, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(tp_mapping_validate(g, al, h, &err), 0);
	/* each group on one ring: every edge 1 hop (ring positions 0..3) or
	 * 3 round the ring of 8 */
	for (int k = 0; k < 8; k++) {
		const int *cu = tp_machine_node_coords(m, tp_alloc_node(al, h[u[k]]));
		const int *cv = tp_machine_node_coords(m, tp_alloc_node(al, h[v[k]]));
		ck_assert_int_eq(cu[1], cv[1]);
	}
	ck_assert_double_lt(tp_metrics_hop_bytes(g, al, h), tp_metrics_hop_bytes(g, al, blk));
	tp_graph_destroy(g);
	tp_alloc_destroy(al);
	tp_machine_destroy(m);
}
END_TEST

/* ---- torus3d ---- */

static tp_machine *toruses(const struct tp__torus3d *t, int n,
			   struct tp__warnings *w)
{
	tp_machine *m = NULL;
	tp_error err;
	tp_error_clear(&err);
	ck_assert_msg(tp__torus3d_from_records(&m, t, n, "topology.yaml", w, &err) == 0,
		      "%s", err.msg);
	return m;
}

static void toruses_fail(const struct tp__torus3d *t, int n, const char *msg)
{
	tp_machine *m = NULL;
	tp_error err;
	tp_error_clear(&err);
	ck_assert_int_eq(tp__torus3d_from_records(&m, t, n, "topology.yaml", NULL, &err),
			 TP_EINVAL);
	ck_assert_ptr_null(m);
	ck_assert_str_eq(err.msg, msg);
}

/* One torus: exactly tp_machine_create's, nodes x-major. */
START_TEST(torus3d_nodes)
{
	struct tp__torus_placement pl[2] = {
		{ { 2, 2, 1 }, { 0, 0, 0 }, { 0, 0, 0 }, 9 },
		{ { 4, 4, 2 }, { 1, 1, 1 }, { 4, 4, 2 }, 12 },
	};
	struct tp__torus3d t = { "pod1", { 4, 4, 2 }, "n[01-32]", NULL, 0, 2, pl, 2 };
	tp_machine *m = toruses(&t, 1, NULL);
	ck_assert_str_eq(tp_machine_kind(m), "torus");
	ck_assert_int_eq(tp_machine_ndims(m), 3);
	ck_assert_int_eq(tp_machine_node_count(m), 32);
	for (int d = 0; d < 3; d++)
		ck_assert(tp_machine_wraps(m, d));
	assert_coords(m, "n01", 3, (int[]){ 0, 0, 0 });
	assert_coords(m, "n02", 3, (int[]){ 1, 0, 0 });
	assert_coords(m, "n05", 3, (int[]){ 0, 1, 0 });
	assert_coords(m, "n17", 3, (int[]){ 0, 0, 1 });
	assert_coords(m, "n32", 3, (int[]){ 3, 3, 1 });
	ck_assert_int_eq(dist(m, "n01", "n04"), 1);     /* x wraps */
	ck_assert_int_eq(dist(m, "n01", "n32"), 3);
	ck_assert_int_eq(dist(m, "n01", "n11"), 4);     /* (2,2,0) */
	/* the same distances as the torus tp_machine_create makes */
	tp_machine *ref = NULL;
	tp_error err;
	ck_assert_int_eq(tp_machine_create(&ref, 3, (int[]){ 4, 4, 2 },
					   (bool[]){ true, true, true }, &err), 0);
	for (int32_t i = 0; i < 32; i++)
		for (int32_t j = 0; j < 32; j++)
			ck_assert_int_eq(tp_machine_distance(m, i, j),
					 tp_machine_coord_distance(ref, tp_machine_node_coords(m, i),
								   tp_machine_node_coords(m, j)));
	ck_assert_int_eq(tp_machine_link_count(m), tp_machine_link_count(ref));
	tp_machine_destroy(ref);
	tp_machine_destroy(m);
}
END_TEST

/* Regions: x-major inside each box; cells outside them are routers
 * without nodes, the torus keeps its links. */
START_TEST(torus3d_regions)
{
	struct tp__torus_region rg[2] = {
		{ { 0, 0, 0 }, { 4, 4, 1 }, "a[00-15]", 5 },
		{ { 1, 2, 1 }, { 2, 2, 1 }, "b[0-3]", 9 },
	};
	struct tp__torus3d t = { "pod", { 4, 4, 2 }, NULL, rg, 2, 2, NULL, 0 };
	tp_machine *m = toruses(&t, 1, NULL);
	ck_assert_str_eq(tp_machine_kind(m), "torus");
	ck_assert_int_eq(tp_machine_node_count(m), 20);
	assert_coords(m, "a05", 3, (int[]){ 1, 1, 0 });
	assert_coords(m, "b0", 3, (int[]){ 1, 2, 1 });
	assert_coords(m, "b1", 3, (int[]){ 2, 2, 1 });
	assert_coords(m, "b3", 3, (int[]){ 2, 3, 1 });
	ck_assert_int_eq(dist(m, "a09", "b0"), 1);      /* (1,2,0) under (1,2,1) */
	ck_assert_int_eq(dist(m, "a00", "b3"), 2 + 1 + 1);
	tp_machine_destroy(m);
}
END_TEST

/* Several toruses: each a true torus, a fixed cost between them. */
START_TEST(torus3d_several)
{
	struct tp__torus_region rg = { { 0, 0, 0 }, { 2, 2, 1 }, "q[0-3]", 14 };
	struct tp__torus3d t[3] = {
		{ "pod1", { 4, 4, 2 }, "n[01-32]", NULL, 0, 2, NULL, 0 },
		{ "pod2", { 2, 2, 2 }, "p[0-7]", NULL, 0, 8, NULL, 0 },
		{ "pod3", { 2, 2, 2 }, NULL, &rg, 1, 12, NULL, 0 },
	};
	tp_machine *m = toruses(t, 3, NULL);
	ck_assert_str_eq(tp_machine_kind(m), "tori");
	ck_assert_int_eq(tp_machine_ndims(m), 4);
	ck_assert_int_eq(tp_machine_node_count(m), 32 + 8 + 4);
	int want[4] = { 4, 4, 2, 3 };
	for (int d = 0; d < 4; d++)
		ck_assert_int_eq(tp_machine_dim(m, d), want[d]);
	ck_assert(!tp_machine_wraps(m, 0));     /* 4 and 2 */
	ck_assert(tp_machine_wraps(m, 2));      /* every torus has z = 2 */
	ck_assert(!tp_machine_wraps(m, 3));
	assert_coords(m, "n32", 4, (int[]){ 3, 3, 1, 0 });
	assert_coords(m, "p7", 4, (int[]){ 1, 1, 1, 1 });
	assert_coords(m, "q3", 4, (int[]){ 1, 1, 0, 2 });
	ck_assert_int_eq(dist(m, "n01", "n04"), 1);     /* pod1's x wraps at 4 */
	ck_assert_int_eq(dist(m, "n01", "n32"), 3);
	ck_assert_int_eq(dist(m, "p0", "p7"), 3);
	ck_assert_int_eq(dist(m, "q0", "q3"), 2);
	/* between toruses: pod1's diameter 2 + 2 + 1, + 1 */
	ck_assert_int_eq(dist(m, "n01", "p0"), 6);
	ck_assert_int_eq(dist(m, "p0", "q0"), 6);
	int64_t l[16];
	ck_assert_int_eq(tp_machine_route(m, node(m, "n01"), node(m, "n04"), l, 16), 1);
	link_named(m, l[0], "pod1:0:0:0->pod1:3:0:0");
	ck_assert_int_eq(tp_machine_route(m, node(m, "n01"), node(m, "n32"), l, 16), 3);
	link_named(m, l[0], "pod1:0:0:0->pod1:3:0:0");
	link_named(m, l[1], "pod1:3:0:0->pod1:3:3:0");
	link_named(m, l[2], "pod1:3:3:0->pod1:3:3:1");
	ck_assert_int_eq(tp_machine_route(m, node(m, "p7"), node(m, "q0"), l, 16), 2);
	link_named(m, l[0], "pod2:1:1:1->(between toruses)");
	link_named(m, l[1], "(between toruses)->pod3:0:0:0");
	ck_assert_int_eq(tp_machine_link_count(m), 4 * 4 * 2 * 3 * 4 * 2);
	int64_t path[2];
	ck_assert_int_eq(m->net->hierarchy(m, tp_machine_node_coords(m, node(m, "p3")),
					   path, 2), 1);
	ck_assert_int_eq(path[0], 1);
	tp_machine_destroy(m);

	/* equal toruses: every axis but the torus's wraps */
	struct tp__torus3d e[2] = {
		{ "a", { 3, 2, 2 }, "a[00-11]", NULL, 0, 2, NULL, 0 },
		{ "b", { 3, 2, 2 }, "b[00-11]", NULL, 0, 6, NULL, 0 },
	};
	m = toruses(e, 2, NULL);
	for (int d = 0; d < 3; d++)
		ck_assert(tp_machine_wraps(m, d));
	ck_assert_int_eq(dist(m, "a00", "a02"), 1);
	ck_assert_int_eq(dist(m, "a00", "b00"), 4);   /* 1 + 1 + 1, + 1 */
	tp_machine_destroy(m);
}
END_TEST

/* What Slurm refuses, refused with the line, in YAML's words. */
START_TEST(torus3d_errors)
{
	struct tp__torus_region rg[2] = {
		{ { 0, 0, 0 }, { 4, 4, 1 }, "a[00-15]", 5 },
		{ { 2, 0, 0 }, { 4, 1, 1 }, "b[0-3]", 12 },
	};
	struct tp__torus3d t = { "pod1", { 4, 4, 2 }, NULL, rg, 2, 3, NULL, 0 };
	toruses_fail(&t, 1, "topology.yaml:12: torus pod1: region at (2,0,0) of 4x1x1 "
		     "reaches past the torus's 4x4x2 (regions do not wrap)");
	rg[1] = (struct tp__torus_region){ { 1, 1, 0 }, { 2, 2, 2 }, "b[0-7]", 12 };
	toruses_fail(&t, 1, "topology.yaml:12: torus pod1: region at (1,1,0) of 2x2x2 "
		     "overlaps the region at (0,0,0) of 4x4x1 (line 5) at (1,1,0) (Slurm "
		     "refuses it)");
	rg[1] = (struct tp__torus_region){ { 0, 0, 1 }, { 2, 2, 1 }, "b[0-2]", 12 };
	toruses_fail(&t, 1, "topology.yaml:12: torus pod1: region at (0,0,1) of 2x2x1: "
		     "4 cells, but its nodes name 3");
	rg[1].nodes = NULL;
	toruses_fail(&t, 1, "topology.yaml:12: torus pod1: region at (0,0,1) of 2x2x1 has "
		     "no nodes (Slurm refuses it)");
	rg[1].nodes = "b[0-3]";
	t.nodes = "n[01-32]";
	toruses_fail(&t, 1, "topology.yaml:3: torus pod1: nodes and regions are mutually "
		     "exclusive (Slurm refuses both)");
	t.nregions = 0;
	t.region = NULL;
	t.nodes = "n[01-31]";
	toruses_fail(&t, 1, "topology.yaml:3: torus pod1: dims 4x4x2 = 32 cells, but nodes "
		     "names 31 (x-major, one node a cell)");
	t.nodes = "n[01-32]";
	t.dims[1] = 0;
	toruses_fail(&t, 1, "topology.yaml:3: torus pod1: dims 4x0x2: x, y and z must be "
		     "1..65535");
	t.dims[0] = t.dims[1] = 65535;
	toruses_fail(&t, 1, "topology.yaml:3: torus pod1: dims 65535x65535x2 = 8589672450 "
		     "cells, more than Slurm's 4294967295");
	t.dims[0] = t.dims[1] = 4;
	t.name = "";
	toruses_fail(&t, 1, "topology.yaml:3: torus without a name (Slurm refuses it: "
		     "name: must be given)");
	t.name = "pod1";
	toruses_fail(&t, 0, "topology.yaml: no toruses (Slurm refuses a torus3d topology "
		     "without one)");
	/* the nodes are counted without expanding, and bounded */
	t.dims[0] = 1024;
	t.dims[1] = 1024;
	t.dims[2] = 2;
	t.nodes = "n[0-2097151]";
	toruses_fail(&t, 1, "topology.yaml:3: torus pod1: nodes n[0-2097151]: 2097152 names, "
		     "more than 1048576 (the most nodes a topology may have)");
	t.dims[0] = t.dims[1] = 4;
	t.nodes = "n[01-32]";
	/* placements, as Slurm validates them */
	struct tp__torus_placement pl = { { 2, 2, 3 }, { 0, 0, 0 }, { 0, 0, 0 }, 20 };
	t.placement = &pl;
	t.nplacements = 1;
	toruses_fail(&t, 1, "topology.yaml:20: torus pod1: placement dims 2x2x3 exceed the "
		     "torus's 4x4x2");
	pl.dims[2] = 0;
	toruses_fail(&t, 1, "topology.yaml:20: torus pod1: placement dims 2x2x0: x, y and z "
		     "must be 1..65535");
	pl.dims[2] = 1;
	pl.spacing[0] = 5;
	toruses_fail(&t, 1, "topology.yaml:20: torus pod1: placement anchor_spacing 5x2x1 "
		     "exceeds the torus's 4x4x2");
	pl.spacing[0] = 0;
	pl.seed[2] = 2;
	toruses_fail(&t, 1, "topology.yaml:20: torus pod1: placement anchor_seed (0,0,2) "
		     "lies outside the torus's 4x4x2");
	pl.seed[2] = 1;
	tp_machine *m = toruses(&t, 1, NULL);
	tp_machine_destroy(m);
	/* two toruses: names and nodes their own */
	struct tp__torus3d two[2] = { t, { "pod1", { 2, 1, 1 }, "x[0-1]", NULL, 0, 9, NULL, 0 } };
	toruses_fail(two, 2, "topology.yaml:9: torus pod1: duplicate torus (first at line 3)");
	two[1].name = "pod2";
	two[1].nodes = "x0,n05";
	toruses_fail(two, 2, "topology.yaml:9: torus pod2: node 'n05' is in torus pod1 "
		     "(line 3) too (Slurm refuses toruses that share nodes)");
}
END_TEST

/* A node twice in one torus: accepted, as Slurm does; it keeps its first
 * cell.  A torus without nodes: accepted too. */
START_TEST(torus3d_node_twice_and_empty)
{
	struct tp__warnings w;
	memset(&w, 0, sizeof w);
	struct tp__torus3d t[2] = {
		{ "pod1", { 2, 2, 1 }, "n0,n1,n0,n3", NULL, 0, 2, NULL, 0 },
		{ "spare", { 2, 2, 2 }, NULL, NULL, 0, 6, NULL, 0 },
	};
	tp_machine *m = toruses(t, 2, &w);
	ck_assert_str_eq(tp_machine_kind(m), "tori");
	ck_assert_int_eq(tp_machine_node_count(m), 3);
	assert_coords(m, "n0", 4, (int[]){ 0, 0, 0, 0 });
	assert_coords(m, "n3", 4, (int[]){ 1, 1, 0, 0 });
	ck_assert_int_eq(dist(m, "n0", "n3"), 2);
	ck_assert_int_eq(w.n, 1);
	ck_assert_str_eq(w.line[0], "topology.yaml:2: torus pod1: node 'n0' is listed at "
			 "(0,0,0) and again at (0,1,0); it stays at the first cell and the "
			 "second is left without a node (Slurm maps both cells to it; a node "
			 "has one place in topoplace)");
	tp_machine_destroy(m);
}
END_TEST

/* Every mapper runs on rings and on tori side by side (policy auto: block,
 * geometric, zorder, hierarchical, graph), routes included. */
START_TEST(place_auto_runs)
{
	struct tp__torus3d t[2] = {
		{ "pod1", { 4, 2, 2 }, "n[00-15]", NULL, 0, 2, NULL, 0 },
		{ "pod2", { 2, 2, 2 }, "p[0-7]", NULL, 0, 8, NULL, 0 },
	};
	tp_machine *ms[2] = {
		rings("RingName=a Nodes=a[0-7]\nRingName=b Nodes=b[0-5]\n"
		      "RingName=c Nodes=c[0-9]\n", NULL),
		toruses(t, 2, NULL),
	};
	const char *nodes[2] = { "a[1-6],b[0-5],c[0-9]", "n[00-15],p[0-7]" };
	for (int k = 0; k < 2; k++) {
		tp_alloc *al = NULL;
		tp_error err;
		tp_error_clear(&err);
		ck_assert_int_eq(tp_alloc_from_hostlist(ms[k], nodes[k], 2, "t", &al, &err), 0);
		tp_graph *g = NULL;
		ck_assert_int_eq(tp_graph_from_stencil(&g, "8x5:5pt", 40, &err), 0);
		int32_t map[40];
		tp_place_opts po;
		tp_place_opts_default(&po);
		po.policy = TP_POLICY_AUTO;
		tp_place_report rep;
		ck_assert_msg(tp_place_ex(g, al, &po, map, &rep, &err) == 0, "%s", err.msg);
		ck_assert_int_eq(tp_mapping_validate(g, al, map, &err), 0);
		tp_metrics mt;
		ck_assert_msg(tp_metrics_compute(g, al, map, true, &mt, &err) == 0, "%s",
			      err.msg);
		ck_assert(mt.hop_bytes > 0);
		tp_graph_destroy(g);
		tp_alloc_destroy(al);
		tp_machine_destroy(ms[k]);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("slurm_rings");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, ring_distances_and_wrap);
	tcase_add_test(tc, ring_limits_and_errors);
	tcase_add_test(tc, ring_conf_syntax);
	tcase_add_test(tc, ring_node_twice);
	tcase_add_test(tc, ring_records_yaml);
	tcase_add_test(tc, ring_hierarchical);
	tcase_add_test(tc, torus3d_nodes);
	tcase_add_test(tc, torus3d_regions);
	tcase_add_test(tc, torus3d_several);
	tcase_add_test(tc, torus3d_errors);
	tcase_add_test(tc, torus3d_node_twice_and_empty);
	tcase_add_test(tc, place_auto_runs);
	suite_add_tcase(s, tc);
	return tp_test_run(s);
}
