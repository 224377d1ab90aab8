/* Unit tests: tp_machine (shape, nodes, distance, routing) and tp_alloc. */
#include "testutil.h"

#include <stdint.h>

#include "input/alloc_internal.h"
#include "net/machine_internal.h"

static tp_machine *mk(int ndims, const int *dims, const bool *wrap)
{
	tp_machine *m = NULL;
	tp_error err;
	tp_error_clear(&err);
	ck_assert_int_eq(tp_machine_create(&m, ndims, dims, wrap, &err), 0);
	ck_assert_ptr_nonnull(m);
	return m;
}

static int32_t add(tp_machine *m, const char *name, int x, int y, int z)
{
	int c[3] = { x, y, z };
	tp_error err;
	tp_error_clear(&err);
	int idx = tp_machine_add_node(m, name, c, &err);
	ck_assert_msg(idx >= 0, "add %s: %s", name, err.msg);
	return idx;
}

/* A machine with one node per router, named r<id>, in router-id order. */
static tp_machine *full(int ndims, const int *dims, const bool *wrap)
{
	tp_machine *m = mk(ndims, dims, wrap);
	int64_t n = tp_machine_router_count(m);
	for (int64_t r = 0; r < n; r++) {
		int c[TP_MAX_DIMS];
		int64_t q = r;
		for (int d = 0; d < ndims; d++) {
			c[d] = (int)(q % dims[d]);
			q /= dims[d];
		}
		char name[32];
		snprintf(name, sizeof name, "r%lld", (long long)r);
		ck_assert_int_eq(tp_machine_add_node(m, name, c, NULL), (int)r);
	}
	return m;
}

START_TEST(create_errors)
{
	tp_machine *m = (tp_machine *)1;
	tp_error err;
	int dims[7] = { 4, 4, 4, 4, 4, 4, 4 };
	ck_assert_int_eq(tp_machine_create(&m, 0, dims, NULL, &err), TP_EINVAL);
	ck_assert_ptr_null(m);
	tp_assert_err_has(&err, "0 dimensions, expected 1..6");
	ck_assert_int_eq(tp_machine_create(&m, 7, dims, NULL, &err), TP_EINVAL);
	int bad[3] = { 4, 0, 4 };
	ck_assert_int_eq(tp_machine_create(&m, 3, bad, NULL, &err), TP_EINVAL);
	tp_assert_err_has(&err, "machine: dims[1] is 0, expected >= 1");
	int huge[6] = { 1 << 30, 1 << 30, 1 << 30, 2, 2, 2 };
	ck_assert_int_eq(tp_machine_create(&m, 6, huge, NULL, &err), TP_EINVAL);
	tp_assert_err_has(&err, "too many routers");
	ck_assert_int_eq(tp_machine_create(&m, 3, NULL, NULL, &err), TP_EINVAL);
	ck_assert_int_eq(tp_machine_create(NULL, 3, dims, NULL, &err), TP_EINVAL);
	/* Six dimensions is fine; NULL wrap means a mesh. */
	ck_assert_int_eq(tp_machine_create(&m, 6, dims, NULL, &err), 0);
	ck_assert_int_eq(tp_machine_ndims(m), 6);
	ck_assert(!tp_machine_wraps(m, 5));
	ck_assert_int_eq(tp_machine_router_count(m), 4096);
	ck_assert_int_eq(tp_machine_link_count(m), 4096 * 6 * 2);
	tp_machine_destroy(m);
	tp_machine_destroy(NULL);
}
END_TEST

START_TEST(accessors)
{
	int dims[3] = { 4, 5, 6 };
	bool wrap[3] = { true, false, true };
	tp_machine *m = mk(3, dims, wrap);
	ck_assert_int_eq(tp_machine_ndims(m), 3);
	ck_assert_int_eq(tp_machine_dim(m, 1), 5);
	ck_assert_int_eq(tp_machine_dim(m, 3), 0);
	ck_assert_int_eq(tp_machine_dim(m, -1), 0);
	ck_assert(tp_machine_wraps(m, 0));
	ck_assert(!tp_machine_wraps(m, 1));
	ck_assert(tp_machine_wraps(m, 2));
	ck_assert(!tp_machine_wraps(m, 3));
	ck_assert_int_eq(tp_machine_router_count(m), 120);
	ck_assert_int_eq(tp_machine_link_count(m), 360 * 2);
	ck_assert_int_eq(tp_machine_nodes_per_router(m), 1);
	ck_assert_int_eq(tp_machine_node_count(m), 0);

	ck_assert_int_eq(add(m, "a", 1, 2, 3), 0);
	ck_assert_int_eq(add(m, "b", 3, 4, 5), 1);
	ck_assert_int_eq(tp_machine_node_count(m), 2);
	ck_assert_str_eq(tp_machine_node_name(m, 1), "b");
	ck_assert_ptr_null(tp_machine_node_name(m, 2));
	ck_assert_ptr_null(tp_machine_node_name(m, -1));
	const int *c = tp_machine_node_coords(m, 0);
	ck_assert_int_eq(c[0], 1);
	ck_assert_int_eq(c[1], 2);
	ck_assert_int_eq(c[2], 3);
	ck_assert_ptr_null(tp_machine_node_coords(m, 5));
	ck_assert_int_eq(tp_machine_find_node(m, "a"), 0);
	ck_assert_int_eq(tp_machine_find_node(m, "b"), 1);
	ck_assert_int_eq(tp_machine_find_node(m, "c"), -1);
	ck_assert_int_eq(tp_machine_find_node(m, ""), -1);
	/* router = x + X*(y + Y*z) */
	ck_assert_int_eq(tp_machine_router_of(m, 0), 1 + 4 * (2 + 5 * 3));
	ck_assert_int_eq(tp_machine_router_of(m, 1), 3 + 4 * (4 + 5 * 5));
	ck_assert_int_eq(tp_machine_router_of(m, 2), -1);
	ck_assert_int_eq(tp_machine_distance(m, 0, 2), -1);
	tp_machine_destroy(m);
}
END_TEST

START_TEST(add_node_errors)
{
	int dims[3] = { 4, 4, 4 };
	tp_machine *m = mk(3, dims, NULL);
	tp_error err;
	int c[3] = { 0, 0, 4 };
	ck_assert_int_eq(tp_machine_add_node(m, "n0", c, &err), TP_EINVAL);
	tp_assert_err_has(&err, "node 'n0' at (0,0,4): coordinate 2 is outside 0..3");
	c[2] = -1;
	ck_assert_int_eq(tp_machine_add_node(m, "n0", c, &err), TP_EINVAL);
	tp_assert_err_has(&err, "coordinate 2 is outside 0..3");
	add(m, "n0", 0, 0, 0);
	c[2] = 1;
	ck_assert_int_eq(tp_machine_add_node(m, "n0", c, &err), TP_EINVAL);
	tp_assert_err_has(&err, "node 'n0': duplicate node name");
	c[2] = 0;
	ck_assert_int_eq(tp_machine_add_node(m, "n1", c, &err), TP_EINVAL);
	tp_assert_err_has(&err, "node 'n1': router (0,0,0) already has 1 node (NodesPerRouter=1)");
	ck_assert_int_eq(tp_machine_add_node(m, "", c, &err), TP_EINVAL);
	tp_assert_err_has(&err, "empty node name");
	ck_assert_int_eq(tp_machine_add_node(m, "a b", c, &err), TP_EINVAL);
	ck_assert_int_eq(tp_machine_add_node(m, "n[1-2]", c, &err), TP_EINVAL);
	ck_assert_int_eq(tp_machine_add_node(m, NULL, c, &err), TP_EINVAL);
	ck_assert_int_eq(tp_machine_add_node(m, "x", NULL, &err), TP_EINVAL);
	/* Failed adds leave nothing behind. */
	ck_assert_int_eq(tp_machine_node_count(m), 1);
	ck_assert_int_eq(tp_machine_find_node(m, "n1"), -1);
	tp_machine_destroy(m);
}
END_TEST

START_TEST(nodes_per_router)
{
	int dims[2] = { 4, 4 };
	bool wrap[2] = { true, true };
	tp_machine *m = mk(2, dims, wrap);
	tp_error err;
	ck_assert_int_eq(tp_machine_set_nodes_per_router(m, 0, &err), TP_EINVAL);
	tp_assert_err_has(&err, "NodesPerRouter=0");
	ck_assert_int_eq(tp_machine_set_nodes_per_router(m, 2, &err), 0);
	ck_assert_int_eq(tp_machine_nodes_per_router(m), 2);
	add(m, "a", 1, 1, 0);
	add(m, "b", 1, 1, 0);
	add(m, "c", 2, 1, 0);
	int c[2] = { 1, 1 };
	ck_assert_int_eq(tp_machine_add_node(m, "d", c, &err), TP_EINVAL);
	tp_assert_err_has(&err, "router (1,1) already has 2 nodes (NodesPerRouter=2)");
	ck_assert_int_eq(tp_machine_distance(m, 0, 1), 0);
	ck_assert_int_eq(tp_machine_distance(m, 0, 2), 1);
	ck_assert_int_eq(tp_machine_router_of(m, 0), tp_machine_router_of(m, 1));
	int64_t l[4];
	ck_assert_int_eq(tp_machine_route(m, 0, 1, l, 4), 0);
	/* Lowering the limit below what is in use fails and changes nothing. */
	ck_assert_int_eq(tp_machine_set_nodes_per_router(m, 1, &err), TP_EINVAL);
	tp_assert_err_has(&err, "router (1,1) already has 2 nodes");
	ck_assert_int_eq(tp_machine_nodes_per_router(m), 2);
	ck_assert_int_eq(tp_machine_set_nodes_per_router(m, 3, &err), 0);
	ck_assert_int_eq(tp_machine_add_node(m, "d", c, &err), 3);
	tp_machine_destroy(m);
}
END_TEST

START_TEST(link_bandwidth)
{
	int dims[3] = { 2, 2, 2 };
	tp_machine *m = mk(3, dims, NULL);
	tp_error err;
	ck_assert(tp_machine_link_bandwidth(m, 0) == 1.0);
	ck_assert(tp_machine_link_bandwidth(m, 3) == 0.0);
	double bw[3] = { 75, 37.5, 75 };
	ck_assert_int_eq(tp_machine_set_link_bandwidth(m, bw, &err), 0);
	ck_assert(tp_machine_link_bandwidth(m, 1) == 37.5);
	double bad[3] = { 75, 0, 75 };
	ck_assert_int_eq(tp_machine_set_link_bandwidth(m, bad, &err), TP_EINVAL);
	tp_assert_err_has(&err, "bw[1] is 0, expected a positive number");
	ck_assert(tp_machine_link_bandwidth(m, 1) == 37.5);
	ck_assert_int_eq(tp_machine_set_link_bandwidth(m, NULL, &err), TP_EINVAL);
	tp_machine_destroy(m);
}
END_TEST

START_TEST(distance_wrap_and_mesh)
{
	int dims1[1] = { 8 };
	bool yes[1] = { true }, no[1] = { false };
	tp_machine *t = full(1, dims1, yes);
	tp_machine *m = full(1, dims1, no);
	int want_t[8] = { 0, 1, 2, 3, 4, 3, 2, 1 };
	for (int i = 0; i < 8; i++) {
		ck_assert_int_eq(tp_machine_distance(t, 0, i), want_t[i]);
		ck_assert_int_eq(tp_machine_distance(t, i, 0), want_t[i]);
		ck_assert_int_eq(tp_machine_distance(m, 0, i), i);
		ck_assert_int_eq(tp_machine_distance(m, i, 0), i);
	}
	ck_assert_int_eq(tp_machine_distance(t, 6, 1), 3);
	ck_assert_int_eq(tp_machine_distance(m, 6, 1), 5);
	tp_machine_destroy(t);
	tp_machine_destroy(m);

	int dims3[3] = { 4, 4, 4 };
	bool w3[3] = { true, true, true }, mixed[3] = { true, false, true };
	t = full(3, dims3, w3);
	m = full(3, dims3, NULL);
	tp_machine *x = full(3, dims3, mixed);
	/* r0 = (0,0,0), r63 = (3,3,3), r42 = (2,2,2) */
	ck_assert_int_eq(tp_machine_distance(t, 0, 63), 3);
	ck_assert_int_eq(tp_machine_distance(m, 0, 63), 9);
	ck_assert_int_eq(tp_machine_distance(x, 0, 63), 5);
	ck_assert_int_eq(tp_machine_distance(t, 0, 42), 6); /* ties: 2 each way */
	ck_assert_int_eq(tp_machine_distance(m, 0, 42), 6);
	int a[3] = { 0, 3, 1 }, b[3] = { 3, 0, 3 };
	ck_assert_int_eq(tp_machine_coord_distance(t, a, b), 1 + 1 + 2);
	ck_assert_int_eq(tp_machine_coord_distance(m, a, b), 3 + 3 + 2);
	ck_assert_int_eq(tp_machine_coord_distance(x, a, b), 1 + 3 + 2);
	ck_assert_int_eq(tp_machine_coord_distance(x, a, a), 0);
	tp_machine_destroy(t);
	tp_machine_destroy(m);
	tp_machine_destroy(x);
}
END_TEST

static void assert_route(const tp_machine *m, int32_t a, int32_t b,
			 const int64_t *want, int n)
{
	int64_t got[64];
	int k = tp_machine_route(m, a, b, got, 64);
	ck_assert_int_eq(k, n);
	ck_assert_int_eq(k, tp_machine_distance(m, a, b));
	for (int i = 0; i < n; i++)
		ck_assert_msg(got[i] == want[i], "route %d->%d link %d: %lld, want %lld",
			      a, b, i, (long long)got[i], (long long)want[i]);
}

/* Directed link ids of cable c (router * ndims + d): up to the +1
 * neighbour, and back down. */
#define UP(c) (2 * (int64_t)(c))
#define DN(c) (2 * (int64_t)(c) + 1)

START_TEST(route_1d)
{
	int dims[1] = { 8 };
	bool yes[1] = { true }, no[1] = { false };
	tp_machine *t = full(1, dims, yes);
	/* + direction: cable r joins r and r+1, travelled up. */
	assert_route(t, 0, 3, (int64_t[]){ UP(0), UP(1), UP(2) }, 3);
	/* − direction: leaving r uses cable r−1 downwards, wrapping at 0. */
	assert_route(t, 0, 5, (int64_t[]){ DN(7), DN(6), DN(5) }, 3);
	assert_route(t, 2, 0, (int64_t[]){ DN(1), DN(0) }, 2);
	/* Tie (4 hops either way): the + direction. */
	assert_route(t, 0, 4, (int64_t[]){ UP(0), UP(1), UP(2), UP(3) }, 4);
	assert_route(t, 5, 1, (int64_t[]){ UP(5), UP(6), UP(7), UP(0) }, 4);
	/* + direction across the seam. */
	assert_route(t, 6, 1, (int64_t[]){ UP(6), UP(7), UP(0) }, 3);
	assert_route(t, 3, 3, NULL, 0);
	tp_machine_destroy(t);

	tp_machine *m = full(1, dims, no);
	assert_route(m, 0, 5, (int64_t[]){ UP(0), UP(1), UP(2), UP(3), UP(4) }, 5);
	assert_route(m, 7, 1, (int64_t[]){ DN(6), DN(5), DN(4), DN(3), DN(2),
					    DN(1) }, 6);
	tp_machine_destroy(m);

	/* Two routers on a ring: tie, + direction, cable 1 is the wrap. */
	int two[1] = { 2 };
	t = full(1, two, yes);
	assert_route(t, 0, 1, (int64_t[]){ UP(0) }, 1);
	assert_route(t, 1, 0, (int64_t[]){ UP(1) }, 1);
	tp_machine_destroy(t);
}
END_TEST

START_TEST(route_3d)
{
	int dims[3] = { 4, 4, 4 };
	bool w[3] = { true, true, true };
	tp_machine *t = full(3, dims, w);
	/* (0,0,0) -> (1,3,2): +x one hop; y: 3 forward vs 1 back -> −y from
	 * (1,0,0) to (1,3,0) = router 13, cable 13*3+1 downwards; z: tie ->
	 * +z from router 13 then 29. */
	int32_t b = 1 + 4 * (3 + 4 * 2);
	assert_route(t, 0, b, (int64_t[]){ UP(0 * 3 + 0), DN(13 * 3 + 1),
					    UP(13 * 3 + 2), UP(29 * 3 + 2) }, 4);
	/* Reverse: x first: (1,3,2) -> (0,3,2) is −x, the cable of router
	 * (0,3,2) downwards; y: 3 -> 0 is +1 across the wrap; z: tie, +. */
	int64_t r032 = 0 + 4 * (3 + 4 * 2);
	int64_t r002 = 0 + 4 * (0 + 4 * 2);
	assert_route(t, b, 0, (int64_t[]){ DN(r032 * 3 + 0), UP(r032 * 3 + 1),
					    UP(r002 * 3 + 2), UP((r002 + 16) * 3 + 2) }, 4);
	char name[64];
	tp_machine_link_name(t, UP(13 * 3 + 1), name, sizeof name);
	ck_assert_str_eq(name, "(1,3,0)->+y");
	/* the same cable the other way, named after its sender */
	tp_machine_link_name(t, DN(13 * 3 + 1), name, sizeof name);
	ck_assert_str_eq(name, "(1,0,0)->-y");
	tp_machine_link_name(t, UP(29 * 3 + 2), name, sizeof name);
	ck_assert_str_eq(name, "(1,3,1)->+z");
	ck_assert_int_eq(tp_machine_link_count(t), 64 * 3 * 2);
	tp_machine_link_name(t, 64 * 3 * 2, name, sizeof name);
	ck_assert_str_eq(name, "(invalid link 384)");
	tp_machine_link_name(t, -1, name, sizeof name);
	ck_assert_str_eq(name, "(invalid link -1)");
	tp_machine_link_name(t, 0, name, 4); /* truncated, still terminated */
	ck_assert_str_eq(name, "(0,");
	/* Capacity too small. */
	int64_t l[3];
	ck_assert_int_lt(tp_machine_route(t, 0, b, l, 3), 0);
	ck_assert_int_lt(tp_machine_route(t, 0, 64, l, 3), 0);
	tp_machine_destroy(t);

	int d2[3] = { 4, 4, 8 };
	t = mk(3, d2, w);
	add(t, "n", 3, 0, 7);
	tp_machine_link_name(t, UP(tp_machine_router_of(t, 0) * 3), name, sizeof name);
	ck_assert_str_eq(name, "(3,0,7)->+x");
	/* x wraps: the cable from (3,0,7) to (0,0,7), travelled down */
	tp_machine_link_name(t, DN(tp_machine_router_of(t, 0) * 3), name, sizeof name);
	ck_assert_str_eq(name, "(0,0,7)->-x");
	tp_machine_destroy(t);
}
END_TEST

/* Every route on small machines: length = distance, each link joins the
 * current router to the next one, and the route ends at the destination. */
static void check_all_routes(int ndims, const int *dims, const bool *wrap)
{
	tp_machine *m = full(ndims, dims, wrap);
	int32_t n = tp_machine_node_count(m);
	int64_t links[64];
	for (int32_t a = 0; a < n; a++) {
		for (int32_t b = 0; b < n; b++) {
			int k = tp_machine_route(m, a, b, links, 64);
			ck_assert_int_eq(k, tp_machine_distance(m, a, b));
			int cur[TP_MAX_DIMS];
			memcpy(cur, tp_machine_node_coords(m, a), ndims * sizeof(int));
			int last_dim = 0;
			for (int i = 0; i < k; i++) {
				int64_t r = links[i] / 2 / ndims;
				int d = (int)(links[i] / 2 % ndims);
				bool down = links[i] & 1;
				ck_assert_int_ge(d, last_dim); /* dimension order */
				last_dim = d;
				int lo[TP_MAX_DIMS];
				int64_t q = r;
				for (int e = 0; e < ndims; e++) {
					lo[e] = (int)(q % dims[e]);
					q /= dims[e];
				}
				ck_assert(wrap[d] || lo[d] < dims[d] - 1);
				int hi = (lo[d] + 1) % dims[d];
				/* The link's ends are lo and lo+1 in d; cur is one. */
				for (int e = 0; e < ndims; e++)
					if (e != d)
						ck_assert_int_eq(cur[e], lo[e]);
				/* up leaves lo for hi, down leaves hi for lo */
				if (!down) {
					ck_assert_int_eq(cur[d], lo[d]);
					cur[d] = hi;
				} else {
					ck_assert_int_eq(cur[d], hi);
					cur[d] = lo[d];
				}
			}
			ck_assert(memcmp(cur, tp_machine_node_coords(m, b),
					 ndims * sizeof(int)) == 0);
		}
	}
	tp_machine_destroy(m);
}

START_TEST(route_all_pairs)
{
	int d3[3] = { 3, 4, 5 };
	bool t3[3] = { true, true, true }, m3[3] = { false, false, false };
	bool x3[3] = { false, true, true };
	check_all_routes(3, d3, t3);
	check_all_routes(3, d3, m3);
	check_all_routes(3, d3, x3);
	int d2[2] = { 6, 1 };
	bool t2[2] = { true, true };
	check_all_routes(2, d2, t2);
}
END_TEST

START_TEST(many_routers_sparse)
{
	/* A million routers and only a handful of nodes: memory follows the
	 * nodes, not the routers. */
	int dims[3] = { 1000, 1000, 1000 };
	bool w[3] = { true, true, true };
	tp_machine *m = mk(3, dims, w);
	ck_assert_int_eq(tp_machine_router_count(m), 1000000000LL);
	add(m, "a", 999, 0, 0);
	add(m, "b", 0, 999, 500);
	ck_assert_int_eq(tp_machine_distance(m, 0, 1), 1 + 1 + 500);
	ck_assert_int_eq(tp_machine_router_of(m, 1), 999LL * 1000 + 500LL * 1000000);
	int64_t l[502];
	ck_assert_int_eq(tp_machine_route(m, 0, 1, l, 502), 502);
	ck_assert_int_eq(l[0], UP(tp_machine_router_of(m, 0) * 3 + 0)); /* +x wraps */
	tp_machine_destroy(m);
}
END_TEST

START_TEST(many_nodes)
{
	int dims[3] = { 24, 24, 24 };
	bool w[3] = { true, true, true };
	tp_machine *m = full(3, dims, w);
	ck_assert_int_eq(tp_machine_node_count(m), 13824);
	for (int32_t i = 0; i < 13824; i += 97) {
		char name[32];
		snprintf(name, sizeof name, "r%d", i);
		ck_assert_int_eq(tp_machine_find_node(m, name), i);
		ck_assert_int_eq(tp_machine_router_of(m, i), i);
	}
	ck_assert_int_eq(tp_machine_distance(m, 0, 13823), 3);
	tp_machine_destroy(m);
}
END_TEST

/* ---- allocations ---- */

static tp_machine *named(void)
{
	int dims[2] = { 4, 4 };
	bool w[2] = { true, true };
	tp_machine *m = mk(2, dims, w);
	for (int i = 0; i < 16; i++) {
		char name[16];
		snprintf(name, sizeof name, "nid%05d", i);
		add(m, name, i % 4, i / 4, 0);
	}
	return m;
}

START_TEST(alloc_hostlist)
{
	tp_machine *m = named();
	tp_alloc *a = NULL;
	tp_error err;
	ck_assert_int_eq(tp_alloc_from_hostlist(m, "nid[00003,00001-00002],nid00010", 2,
						"--nodes", &a, &err), 0);
	ck_assert_int_eq(tp_alloc_nnodes(a), 4);
	ck_assert_int_eq(tp_alloc_node(a, 0), 3);
	ck_assert_int_eq(tp_alloc_node(a, 1), 1);
	ck_assert_int_eq(tp_alloc_node(a, 2), 2);
	ck_assert_int_eq(tp_alloc_node(a, 3), 10);
	ck_assert_int_eq(tp_alloc_node(a, 4), -1);
	ck_assert_int_eq(tp_alloc_slots(a, 0), 2);
	ck_assert_int_eq(tp_alloc_total_slots(a), 8);
	ck_assert_ptr_eq(tp_alloc_machine(a), m);
	tp_alloc_destroy(a);

	/* Whole machine. */
	ck_assert_int_eq(tp_alloc_from_hostlist(m, "nid[00000-00015]", 1, NULL, &a, &err), 0);
	ck_assert_int_eq(tp_alloc_nnodes(a), 16);
	ck_assert_int_eq(tp_alloc_node(a, 15), 15);
	tp_alloc_destroy(a);
	tp_machine_destroy(m);
}
END_TEST

START_TEST(alloc_hostlist_errors)
{
	tp_machine *m = named();
	tp_alloc *a = (tp_alloc *)1;
	tp_error err;
	ck_assert_int_eq(tp_alloc_from_hostlist(m, "nid[00000-00001],nid99999", 1,
						"--nodes", &a, &err), TP_ENOENT);
	ck_assert_ptr_null(a);
	ck_assert_str_eq(err.msg, "--nodes: unknown node 'nid99999'");
	ck_assert_int_eq(tp_alloc_from_hostlist(m, "nid[00000-00002],nid00001", 1,
						"--nodes", &a, &err), TP_EINVAL);
	ck_assert_str_eq(err.msg, "--nodes: duplicate node 'nid00001'");
	ck_assert_int_eq(tp_alloc_from_hostlist(m, "", 1, "SLURM_NODELIST", &a, &err),
			 TP_EINVAL);
	ck_assert_str_eq(err.msg, "SLURM_NODELIST: empty node list");
	ck_assert_int_eq(tp_alloc_from_hostlist(m, " , ", 1, "x", &a, &err), TP_EINVAL);
	tp_assert_err_has(&err, "empty node list");
	ck_assert_int_eq(tp_alloc_from_hostlist(m, "nid[0-", 1, "--nodes", &a, &err),
			 TP_EINVAL);
	tp_assert_err_has(&err, "--nodes: malformed hostlist: unbalanced brackets in 'nid[0-'");
	ck_assert_int_eq(tp_alloc_from_hostlist(m, "nid0]", 1, "--nodes", &a, &err),
			 TP_EINVAL);
	tp_assert_err_has(&err, "malformed hostlist");
	ck_assert_int_eq(tp_alloc_from_hostlist(m, "nid[00005-00003]", 1, "--nodes", &a, &err),
			 TP_EINVAL);
	ck_assert_str_eq(err.msg, "--nodes: malformed hostlist: "
			 "bad range '00005-00003' (decreasing) in 'nid[00005-00003]'");
	const char *bad[] = { "nid[a-b]", "nid[1,,2]", "nid[]", "nid[1-]", "nid[-1]",
			      "nid[1x2]", "nid[1--2]", "nid[[1]]", "nid[1-2", "nid[1]]" };
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		ck_assert_int_eq(tp_alloc_from_hostlist(m, bad[i], 1, "--nodes", &a, &err),
				 TP_EINVAL);
		tp_assert_err_has(&err, "malformed hostlist");
	}
	ck_assert_int_eq(tp_alloc_from_hostlist(m, "nid00001", 0, "--nodes", &a, &err),
			 TP_EINVAL);
	tp_assert_err_has(&err, "0 slots per node");
	/* More names than the machine has nodes: the first unknown one is
	 * named, as with fewer names. */
	ck_assert_int_eq(tp_alloc_from_hostlist(m, "nid[00000-65535]", 1, "--nodes", &a, &err),
			 TP_ENOENT);
	ck_assert_str_eq(err.msg, "--nodes: unknown node 'nid00016'");
	ck_assert_int_eq(tp_alloc_from_hostlist(m, NULL, 1, "--nodes", &a, &err), TP_EINVAL);
	ck_assert_int_eq(tp_alloc_from_hostlist(NULL, "x", 1, "--nodes", &a, &err), TP_EINVAL);
	tp_machine_destroy(m);
}
END_TEST

/* A job's node list with more names than topoplace.conf has nodes names
 * the node that is missing (or repeated), not the count, wherever it is in
 * the list; a huge list stops at that name. */
START_TEST(alloc_hostlist_more_names_than_nodes)
{
	tp_machine *m = named();
	tp_alloc *a = (tp_alloc *)1;
	tp_error err;
	/* the whole machine and one node topoplace.conf lacks */
	ck_assert_int_eq(tp_alloc_from_hostlist(m, "nid[00000-00015],nid00016", 1,
						"SLURM_JOB_NODELIST", &a, &err), TP_ENOENT);
	ck_assert_ptr_null(a);
	ck_assert_str_eq(err.msg, "SLURM_JOB_NODELIST: unknown node 'nid00016'");
	ck_assert_int_eq(tp_alloc_from_hostlist(m, "login1,nid[00000-00015]", 1,
						"SLURM_JOB_NODELIST", &a, &err), TP_ENOENT);
	ck_assert_str_eq(err.msg, "SLURM_JOB_NODELIST: unknown node 'login1'");
	ck_assert_int_eq(tp_alloc_from_hostlist(m, "nid[00000-00007],gpu[01-09]", 1,
						"SLURM_JOB_NODELIST", &a, &err), TP_ENOENT);
	ck_assert_str_eq(err.msg, "SLURM_JOB_NODELIST: unknown node 'gpu01'");
	/* all known, one twice */
	ck_assert_int_eq(tp_alloc_from_hostlist(m, "nid[00000-00015],nid00003", 1,
						"--nodes", &a, &err), TP_EINVAL);
	ck_assert_str_eq(err.msg, "--nodes: duplicate node 'nid00003'");
	/* 2^33 names: the first is unknown, nothing more is expanded */
	ck_assert_int_eq(tp_alloc_from_hostlist(m, "a[0-65535]b[0-65535]c[0-1]", 1,
						"--nodes", &a, &err), TP_ENOENT);
	ck_assert_str_eq(err.msg, "--nodes: unknown node 'a0b0c0'");
	ck_assert_int_eq(tp_alloc_from_hostlist(m, "nid[00000-00015],nid[00000-99999]",
						1, "--nodes", &a, &err), TP_EINVAL);
	ck_assert_str_eq(err.msg, "--nodes: duplicate node 'nid00000'");
	ck_assert_ptr_null(a);
	/* exactly the machine's node count still fits */
	ck_assert_int_eq(tp_alloc_from_hostlist(m, "nid[00008-00015],nid[00000-00007]", 1,
						"--nodes", &a, &err), 0);
	ck_assert_int_eq(tp_alloc_nnodes(a), 16);
	ck_assert_int_eq(tp_alloc_node(a, 0), 8);
	tp_alloc_destroy(a);
	tp_machine_destroy(m);
}
END_TEST

START_TEST(alloc_nodes)
{
	tp_machine *m = named();
	tp_alloc *a = NULL;
	tp_error err;
	int32_t nodes[3] = { 7, 0, 15 };
	ck_assert_int_eq(tp_alloc_from_nodes(m, nodes, 3, 4, &a, &err), 0);
	nodes[0] = 1; /* copied */
	ck_assert_int_eq(tp_alloc_node(a, 0), 7);
	ck_assert_int_eq(tp_alloc_total_slots(a), 12);
	tp_alloc_destroy(a);
	int32_t dup[3] = { 7, 0, 7 };
	ck_assert_int_eq(tp_alloc_from_nodes(m, dup, 3, 1, &a, &err), TP_EINVAL);
	tp_assert_err_has(&err, "entry 2: duplicate node 'nid00007'");
	int32_t out[2] = { 7, 16 };
	ck_assert_int_eq(tp_alloc_from_nodes(m, out, 2, 1, &a, &err), TP_EINVAL);
	tp_assert_err_has(&err, "entry 1: node index 16 outside 0..15");
	ck_assert_int_eq(tp_alloc_from_nodes(m, out, 0, 1, &a, &err), TP_EINVAL);
	ck_assert_int_eq(tp_alloc_from_nodes(m, out, 1, 0, &a, &err), TP_EINVAL);
	ck_assert_ptr_null(a);
	tp_machine_destroy(m);
}
END_TEST

/* tp__alloc_reorder moves nodes and slots together, cycle by cycle in
 * place: the k-th becomes order[k]; an order that is not a permutation
 * changes nothing. */
START_TEST(alloc_reorder)
{
	tp_machine *m = named();
	tp_alloc *a = NULL;
	tp_error err;
	int32_t nodes[9] = { 3, 1, 4, 15, 9, 2, 6, 5, 8 };
	ck_assert_int_eq(tp_alloc_from_nodes(m, nodes, 9, 1, &a, &err), 0);
	for (int i = 0; i < 9; i++)
		ck_assert_int_eq(tp_alloc_set_slots(a, i, i + 1, &err), 0);
	/* three cycles (0 4 7)(1 2)(3 8 6 5) and nothing else */
	int32_t order[9] = { 4, 2, 1, 8, 7, 3, 5, 0, 6 };
	ck_assert_int_eq(tp__alloc_reorder(a, order), 0);
	for (int k = 0; k < 9; k++) {
		ck_assert_int_eq(tp_alloc_node(a, k), nodes[order[k]]);
		ck_assert_int_eq(tp_alloc_slots(a, k), order[k] + 1);
	}
	ck_assert_int_eq(tp_alloc_total_slots(a), 45);
	int32_t same[9] = { 0, 1, 2, 3, 4, 5, 6, 7, 8 };
	ck_assert_int_eq(tp__alloc_reorder(a, same), 0);
	ck_assert_int_eq(tp_alloc_node(a, 0), nodes[4]);
	int32_t dup[9] = { 0, 1, 2, 3, 4, 5, 6, 7, 7 }, out[9] = { 1, 0, 2, 3, 4, 5, 6, 7, 9 };
	ck_assert_int_eq(tp__alloc_reorder(a, dup), TP_EINVAL);
	ck_assert_int_eq(tp__alloc_reorder(a, out), TP_EINVAL);
	for (int k = 0; k < 9; k++)
		ck_assert_int_eq(tp_alloc_node(a, k), nodes[order[k]]);
	tp_alloc_destroy(a);
	tp_machine_destroy(m);
}
END_TEST

START_TEST(alloc_slots)
{
	tp_machine *m = named();
	tp_alloc *a = NULL;
	tp_error err;
	ck_assert_int_eq(tp_alloc_from_hostlist(m, "nid[00000-00003]", 1, "t", &a, &err), 0);
	ck_assert_int_eq(tp_alloc_set_slots_spec(a, "2(x3),1", &err), 0);
	int want[4] = { 2, 2, 2, 1 };
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(tp_alloc_slots(a, i), want[i]);
	ck_assert_int_eq(tp_alloc_total_slots(a), 7);
	ck_assert_int_eq(tp_alloc_set_slots_spec(a, "1,3,5,7", &err), 0);
	ck_assert_int_eq(tp_alloc_total_slots(a), 16);
	ck_assert_int_eq(tp_alloc_set_slots_spec(a, "16(x4)", &err), 0);
	ck_assert_int_eq(tp_alloc_total_slots(a), 64);

	/* Errors leave the slots alone. */
	const char *bad[] = { "2(x3)", "2(x3),1,1", "", "a", "2(x3", "2(3)", "2,,1",
			      "2,", "2(x0),1,1,1", "-1,1,1,1", "99999999999,1,1,1", "1 ,1,1,1" };
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		ck_assert_msg(tp_alloc_set_slots_spec(a, bad[i], &err) == TP_EINVAL,
			      "spec '%s' accepted", bad[i]);
		tp_assert_err_has(&err, "tasks per node");
		ck_assert_int_eq(tp_alloc_total_slots(a), 64);
	}
	ck_assert_int_eq(tp_alloc_set_slots_spec(a, "2(x3)", &err), TP_EINVAL);
	tp_assert_err_has(&err, "describes 3 nodes, the allocation has 4");

	ck_assert_int_eq(tp_alloc_set_slots(a, 1, 3, &err), 0);
	ck_assert_int_eq(tp_alloc_slots(a, 1), 3);
	ck_assert_int_eq(tp_alloc_total_slots(a), 16 * 3 + 3);
	ck_assert_int_eq(tp_alloc_set_slots(a, 4, 3, &err), TP_EINVAL);
	ck_assert_int_eq(tp_alloc_set_slots(a, 0, -1, &err), TP_EINVAL);

	ck_assert_int_eq(tp_alloc_spread_tasks(a, 10, &err), 0);
	int sp[4] = { 3, 3, 2, 2 };
	for (int i = 0; i < 4; i++)
		ck_assert_int_eq(tp_alloc_slots(a, i), sp[i]);
	ck_assert_int_eq(tp_alloc_total_slots(a), 10);
	ck_assert_int_eq(tp_alloc_spread_tasks(a, 8, &err), 0);
	ck_assert_int_eq(tp_alloc_slots(a, 3), 2);
	ck_assert_int_eq(tp_alloc_spread_tasks(a, 0, &err), TP_EINVAL);
	ck_assert_int_eq(tp_alloc_spread_tasks(a, (int64_t)1 << 40, &err), TP_EINVAL);
	tp_alloc_destroy(a);
	tp_alloc_destroy(NULL);
	tp_machine_destroy(m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("machine");
	TCase *tc = tcase_create("machine");
	tcase_add_test(tc, create_errors);
	tcase_add_test(tc, accessors);
	tcase_add_test(tc, add_node_errors);
	tcase_add_test(tc, nodes_per_router);
	tcase_add_test(tc, link_bandwidth);
	tcase_add_test(tc, distance_wrap_and_mesh);
	tcase_add_test(tc, route_1d);
	tcase_add_test(tc, route_3d);
	tcase_add_test(tc, route_all_pairs);
	tcase_add_test(tc, many_routers_sparse);
	tcase_add_test(tc, many_nodes);
	suite_add_tcase(s, tc);
	TCase *ta = tcase_create("alloc");
	tcase_add_test(ta, alloc_hostlist);
	tcase_add_test(ta, alloc_hostlist_errors);
	tcase_add_test(ta, alloc_hostlist_more_names_than_nodes);
	tcase_add_test(ta, alloc_nodes);
	tcase_add_test(ta, alloc_slots);
	tcase_add_test(ta, alloc_reorder);
	suite_add_tcase(s, ta);
	return tp_test_run(s);
}
