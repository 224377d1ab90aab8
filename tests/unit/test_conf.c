/* Unit tests: topoplace.conf reader. */
#include "testutil.h"

#include <errno.h>
#include <unistd.h>

#include <topoplace/job.h>
#include "net/network.h"
#include "util/hostlist.h"
#include "util/util_internal.h"
#include "conf/conf_kind.h"

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#include "conf/conf_internal.h"
#include "net/machine_internal.h"
#endif
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif

#ifndef TP_SOURCE_DIR
#define TP_SOURCE_DIR "."
#endif
#define EXAMPLES TP_SOURCE_DIR "/conf/examples/"
#define DATA TP_TEST_DATA "/conf/"

static tp_conf *load_ok(const char *path)
{
	tp_conf *c = NULL;
	tp_error err;
	tp_error_clear(&err);
	int rc = tp_conf_load(path, &c, &err);
	ck_assert_msg(rc == 0, "%s: rc %d: %s", path, rc, err.msg);
	ck_assert_ptr_nonnull(c);
	return c;
}

static tp_conf *str_ok(const char *text)
{
	tp_conf *c = NULL;
	tp_error err;
	tp_error_clear(&err);
	int rc = tp_conf_load_string(text, "cfg", &c, &err);
	ck_assert_msg(rc == 0, "rc %d: %s\n--- config:\n%s", rc, err.msg, text);
	return c;
}

static void assert_at(const tp_machine *m, const char *name, int x, int y, int z)
{
	int32_t i = tp_machine_find_node(m, name);
	ck_assert_msg(i >= 0, "node %s missing", name);
	const int *c = tp_machine_node_coords(m, i);
	int want[3] = { x, y, z };
	for (int d = 0; d < tp_machine_ndims(m); d++)
		ck_assert_msg(c[d] == want[d], "%s: coordinate %d is %d, want %d",
			      name, d, c[d], want[d]);
}

static int32_t idx(const tp_machine *m, const char *name)
{
	int32_t i = tp_machine_find_node(m, name);
	ck_assert_msg(i >= 0, "node %s missing", name);
	return i;
}

/* Node i is on router q of a 16x16x4 grid in x-major (x fastest) or
 * z-major order. */
static void assert_router(const tp_machine *m, int32_t i, int64_t q, bool x_major)
{
	static const int dims[3] = { 16, 16, 4 };
	const int *co = tp_machine_node_coords(m, i);
	for (int k = 0; k < 3; k++) {
		int d = x_major ? k : 2 - k;
		ck_assert_int_eq(co[d], q % dims[d]);
		q /= dims[d];
	}
}

/* A long numbered range is one record of the machine (name_runs.c), found
 * by number; its nodes get the same names, places and lookups as nodes
 * placed one by one. */
/* A numbered run's names are written when first asked for: threads that
 * ask at once all get the one copy, and every name is right. */
struct name_reader {
	const tp_machine *m;
	const char *got[992];
};

static void *read_names(void *arg)
{
	struct name_reader *r = arg;
	for (int32_t i = 991; i >= 0; i--)
		r->got[i] = tp_machine_node_name(r->m, i);
	return NULL;
}

START_TEST(run_names_on_request)
{
	tp_conf *c = str_ok("Network=mesh Dims=16x16x4 NodesPerRouter=2\n"
			    "NodeName=n[0-299] CoordOrder=x-major Offset=1200\n"
			    "NodeName=n[0000-0299] CoordOrder=x-major Offset=400\n"
			    "NodeName=login1 Coords=15,15,3\n"
			    "NodeName=r[0010-0400]-ib CoordOrder=x-major Offset=1500\n");
	const tp_machine *m = tp_conf_machine(c);
	static struct name_reader rd[4];
	pthread_t th[4];
	for (int k = 0; k < 4; k++) {
		rd[k].m = m;
		ck_assert_int_eq(pthread_create(&th[k], NULL, read_names, &rd[k]), 0);
	}
	for (int k = 0; k < 4; k++)
		pthread_join(th[k], NULL);
	char want[32];
	for (int32_t i = 0; i < 992; i++) {
		if (i < 300)
			snprintf(want, sizeof want, "n%d", i);
		else if (i < 600)
			snprintf(want, sizeof want, "n%04d", i - 300);
		else if (i == 600)
			snprintf(want, sizeof want, "login1");
		else
			snprintf(want, sizeof want, "r%04d-ib", i - 601 + 10);
		ck_assert_str_eq(rd[0].got[i], want);
		for (int k = 1; k < 4; k++)
			ck_assert_ptr_eq(rd[k].got[i], rd[0].got[i]);
		/* the hostfile's way: formatted, nothing written out */
		char buf[TP__HOSTNAME_MAX];
		ck_assert_uint_eq(tp__machine_name_put(m, i, buf), strlen(want));
		ck_assert_str_eq(buf, want);
	}
	ck_assert_ptr_null(tp_machine_node_name(m, 992));
	ck_assert_ptr_null(tp_machine_node_name(m, -1));
	tp_conf_destroy(c);
}
END_TEST

START_TEST(numbered_runs)
{
	/* z-major: the last dimension fastest; two nodes per router */
	tp_conf *c = str_ok("Network=mesh Dims=16x16x4 NodesPerRouter=2\n"
			    "NodeName=n[0-299] CoordOrder=z-major Offset=3\n");
	const tp_machine *m = tp_conf_machine(c);
	char name[32];
	for (int v = 0; v < 300; v++) {
		snprintf(name, sizeof name, "n%d", v);
		int32_t i = idx(m, name);
		ck_assert_int_eq(i, v);
		ck_assert_str_eq(tp_machine_node_name(m, i), name);
		assert_router(m, i, (3 + v) / 2, false);
	}
	tp_conf_destroy(c);

	c = str_ok("Network=mesh Dims=16x16x4 NodesPerRouter=2\n"
		   "NodeName=n[0-299] CoordOrder=x-major Offset=1200\n"
		   "NodeName=n[0000-0299] CoordOrder=x-major Offset=400\n"
		   "NodeName=login1 Coords=15,15,3\n"
		   "NodeName=r[10-400]-ib CoordOrder=x-major Offset=1500\n"
		   "NodeName=n[0000-0299] NodeTopology=nodes/nvl4.xml\n");
	m = tp_conf_machine(c);
	ck_assert_int_eq(tp_machine_node_count(m), 300 + 300 + 1 + 391);
	/* three runs in two families ("n", "r..-ib"); login1 in the index */
	ck_assert_uint_eq(m->runs.n, 2);
	ck_assert_uint_eq(m->runs.f[0].n + m->runs.f[1].n, 3);
	ck_assert_uint_eq(m->by_name.n, 1);
	/* every name found, where CoordOrder= puts it */
	for (int v = 0; v < 300; v++) {
		snprintf(name, sizeof name, "n%d", v);
		int32_t i = idx(m, name);
		ck_assert_int_eq(i, v);
		ck_assert_ptr_null(tp_conf_node_topology(c, i));
		snprintf(name, sizeof name, "n%04d", v);
		i = idx(m, name);
		ck_assert_int_eq(i, 300 + v);
		ck_assert_str_eq(tp_machine_node_name(m, i), name);
		assert_router(m, i, (400 + v) / 2, true);
		ck_assert_ptr_nonnull(tp_conf_node_topology(c, i));
	}
	ck_assert_int_eq(idx(m, "login1"), 600);
	ck_assert_int_eq(idx(m, "r10-ib"), 601);
	ck_assert_int_eq(idx(m, "r400-ib"), 991);
	/* names the runs do not hold */
	const char *absent[] = { "n300", "n0300", "n00005", "n005", "r9-ib",
				 "r401-ib", "r10", "r10-i", "x0005", "n",
				 "n99999999999999999999", "" };
	for (size_t k = 0; k < sizeof absent / sizeof *absent; k++)
		ck_assert_msg(tp_machine_find_node(m, absent[k]) < 0, "%s found",
			      absent[k]);

	/* allocations from hostlists: numbered ranges resolved by number,
	 * in Slurm's order, with the same messages as name by name */
	tp_alloc *a = NULL;
	tp_error err;
	ck_assert_int_eq(tp_alloc_from_hostlist(m, "n[0290-0299,0003],login1,n[7-9],r[399-400]-ib",
						1, "nodes", &a, &err), TP_OK);
	int32_t want[] = { 590, 591, 592, 593, 594, 595, 596, 597, 598, 599,
			   303, 600, 7, 8, 9, 990, 991 };
	ck_assert_int_eq(tp_alloc_nnodes(a), 17);
	for (int k = 0; k < 17; k++)
		ck_assert_int_eq(tp_alloc_node(a, k), want[k]);
	tp_alloc_destroy(a);
	ck_assert_int_eq(tp_alloc_from_hostlist(m, "n[0-10],n[005-007]", 1, "nodes",
						&a, &err), TP_ENOENT);
	ck_assert_str_eq(err.msg, "nodes: unknown node 'n005'");
	ck_assert_int_eq(tp_alloc_from_hostlist(m, "n[0100-0120],n[0110-0111]", 1,
						"nodes", &a, &err), TP_EINVAL);
	ck_assert_str_eq(err.msg, "nodes: duplicate node 'n0110'");
	ck_assert_int_eq(tp_alloc_from_hostlist(m, "r[398-401]-ib", 1, "nodes", &a,
						&err), TP_ENOENT);
	ck_assert_str_eq(err.msg, "nodes: unknown node 'r401-ib'");
	/* ranges are resolved a digit count at a time: across 9/10 and
	 * 99/100, padded and not, and past a run's end */
	ck_assert_int_eq(tp_alloc_from_hostlist(m, "n[8-12,98-101],n[0009-0010]",
						1, "nodes", &a, &err), TP_OK);
	int32_t cross[] = { 8, 9, 10, 11, 12, 98, 99, 100, 101, 309, 310 };
	ck_assert_int_eq(tp_alloc_nnodes(a), 11);
	for (int k = 0; k < 11; k++)
		ck_assert_int_eq(tp_alloc_node(a, k), cross[k]);
	tp_alloc_destroy(a);
	ck_assert_int_eq(tp_alloc_from_hostlist(m, "n[08-12]", 1, "nodes", &a,
						&err), TP_ENOENT);
	ck_assert_str_eq(err.msg, "nodes: unknown node 'n08'");
	ck_assert_int_eq(tp_alloc_from_hostlist(m, "n[295-300]", 1, "nodes", &a,
						&err), TP_ENOENT);
	ck_assert_str_eq(err.msg, "nodes: unknown node 'n300'");
	ck_assert_int_eq(tp_alloc_from_hostlist(m, "n[5-20],n[9-16]", 1, "nodes", &a,
						&err), TP_EINVAL);
	ck_assert_str_eq(err.msg, "nodes: duplicate node 'n9'");
	tp_conf_destroy(c);

	/* one range over two runs of a family, placed in the other order */
	c = str_ok("Network=mesh Dims=16x16\n"
		   "NodeName=m[100-199] CoordOrder=x-major\n"
		   "NodeName=m[0-99] CoordOrder=x-major Offset=100\n");
	m = tp_conf_machine(c);
	ck_assert_int_eq(tp_alloc_from_hostlist(m, "m[97-102]", 1, "nodes", &a,
						&err), TP_OK);
	int32_t two[] = { 197, 198, 199, 0, 1, 2 };
	ck_assert_int_eq(tp_alloc_nnodes(a), 6);
	for (int k = 0; k < 6; k++)
		ck_assert_int_eq(tp_alloc_node(a, k), two[k]);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

static char *describe(const tp_conf *c)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_ptr_nonnull(f);
	tp_conf_describe(c, f);
	fclose(f);
	return buf;
}

/* ---- the example configs ---- */

START_TEST(example_torus3d)
{
	tp_conf *c = load_ok(EXAMPLES "torus3d.conf");
	const tp_machine *m = tp_conf_machine(c);
	ck_assert_int_eq(tp_machine_ndims(m), 3);
	for (int d = 0; d < 3; d++) {
		ck_assert_int_eq(tp_machine_dim(m, d), 24);
		ck_assert(tp_machine_wraps(m, d));
		ck_assert(tp_machine_link_bandwidth(m, d) == 25.0);
	}
	ck_assert_int_eq(tp_machine_node_count(m), 13824);
	ck_assert_int_eq(tp_machine_nodes_per_router(m), 1);
	assert_at(m, "nid00000", 0, 0, 0);
	assert_at(m, "nid00001", 1, 0, 0);
	assert_at(m, "nid00024", 0, 1, 0);
	assert_at(m, "nid00576", 0, 0, 1);
	assert_at(m, "nid13823", 23, 23, 23);
	ck_assert_int_eq(tp_machine_distance(m, idx(m, "nid00000"), idx(m, "nid13823")), 3);
	ck_assert_int_eq(tp_machine_distance(m, idx(m, "nid00000"), idx(m, "nid00012")), 12);
	ck_assert_int_eq(tp_machine_find_node(m, "nid13824"), -1);
	ck_assert(tp_conf_has_default_policy(c));
	ck_assert_int_eq(tp_conf_default_policy(c), TP_POLICY_GEOMETRIC);
	ck_assert_int_eq(tp_conf_default_metric(c), TP_METRIC_HOP_BYTES);
	ck_assert(tp_conf_time_budget_ms(c) == 300.0);
	char *d = describe(c);
	ck_assert_msg(strncmp(d, "torus 24x24x24 (wrap yes,yes,yes), 13824 nodes, 1 per router\n",
			      strlen("torus 24x24x24 (wrap yes,yes,yes), 13824 nodes, 1 per router\n")) == 0,
		      "describe: %s", d);
	ck_assert_ptr_nonnull(strstr(d, "time budget 300 ms"));
	free(d);
	tp_conf_destroy(c);
}
END_TEST

START_TEST(example_mesh2d)
{
	tp_conf *c = load_ok(EXAMPLES "mesh2d.conf");
	const tp_machine *m = tp_conf_machine(c);
	ck_assert_int_eq(tp_machine_ndims(m), 2);
	ck_assert_int_eq(tp_machine_dim(m, 0), 4);
	ck_assert_int_eq(tp_machine_dim(m, 1), 4);
	ck_assert(!tp_machine_wraps(m, 0) && !tp_machine_wraps(m, 1));
	ck_assert_int_eq(tp_machine_node_count(m), 16);
	assert_at(m, "node05", 1, 1, 0);
	assert_at(m, "node15", 3, 3, 0);
	ck_assert_int_eq(tp_machine_distance(m, idx(m, "node00"), idx(m, "node15")), 6);
	ck_assert_int_eq(tp_machine_distance(m, idx(m, "node00"), idx(m, "node03")), 3);
	ck_assert(!tp_conf_has_default_policy(c));
	ck_assert_int_eq(tp_conf_default_policy(c), TP_POLICY_NONE);
	ck_assert_int_eq(tp_conf_default_metric(c), TP_METRIC_HOP_BYTES);
	ck_assert(tp_conf_time_budget_ms(c) == 0.0);
	char *d = describe(c);
	ck_assert_msg(strncmp(d, "mesh 4x4 (wrap no,no), 16 nodes, 1 per router\n", 46) == 0,
		      "describe: %s", d);
	free(d);
	tp_conf_destroy(c);
}
END_TEST

START_TEST(example_gemini)
{
	tp_conf *c = load_ok(EXAMPLES "gemini.conf");
	const tp_machine *m = tp_conf_machine(c);
	ck_assert_int_eq(tp_machine_node_count(m), 512);
	ck_assert_int_eq(tp_machine_nodes_per_router(m), 2);
	ck_assert(tp_machine_wraps(m, 0) && tp_machine_wraps(m, 1) && tp_machine_wraps(m, 2));
	ck_assert(tp_machine_link_bandwidth(m, 0) == 75.0);
	ck_assert(tp_machine_link_bandwidth(m, 1) == 37.5);
	ck_assert(tp_machine_link_bandwidth(m, 2) == 75.0);
	/* z-major, two per router: nid 2r and 2r+1 share router r of the
	 * order where z varies fastest. */
	assert_at(m, "nid00000", 0, 0, 0);
	assert_at(m, "nid00001", 0, 0, 0);
	assert_at(m, "nid00002", 0, 0, 1);
	assert_at(m, "nid00016", 0, 1, 0);
	assert_at(m, "nid00064", 1, 0, 0);
	assert_at(m, "nid00511", 7, 3, 7);
	ck_assert_int_eq(tp_machine_distance(m, idx(m, "nid00000"), idx(m, "nid00001")), 0);
	ck_assert_int_eq(tp_machine_router_of(m, idx(m, "nid00000")),
			 tp_machine_router_of(m, idx(m, "nid00001")));
	ck_assert_int_eq(tp_conf_default_metric(c), TP_METRIC_CONGESTION);
	ck_assert(tp_conf_time_budget_ms(c) == 500.0);
	char *d = describe(c);
	ck_assert_ptr_nonnull(strstr(d, "torus 8x4x8 (wrap yes,yes,yes), 512 nodes, 2 per router"));
	ck_assert_ptr_nonnull(strstr(d, "link bandwidth 75,37.5,75"));
	free(d);
	tp_conf_destroy(c);
}
END_TEST

START_TEST(example_explicit)
{
	tp_conf *c = load_ok(EXAMPLES "explicit.conf");
	const tp_machine *m = tp_conf_machine(c);
	ck_assert_int_eq(tp_machine_node_count(m), 14);
	ck_assert(tp_machine_wraps(m, 0) && tp_machine_wraps(m, 1) && !tp_machine_wraps(m, 2));
	assert_at(m, "login1", 0, 0, 0);
	assert_at(m, "io1", 3, 3, 1);
	assert_at(m, "c0-0", 1, 0, 0);
	assert_at(m, "c1-3", 1, 0, 1);
	assert_at(m, "c2-3", 1, 1, 1);
	/* Node order: as placed (explicit lines, then the file's lines). */
	ck_assert_str_eq(tp_machine_node_name(m, 0), "login1");
	ck_assert_str_eq(tp_machine_node_name(m, 2), "c0-0");
	ck_assert_str_eq(tp_machine_node_name(m, 13), "c2-3");
	/* (0,0,0) -> (3,3,1): 1 + 1 (wrapped) + 1 (z, no wrap) */
	ck_assert_int_eq(tp_machine_distance(m, 0, 1), 3);
	ck_assert_int_eq(tp_conf_default_policy(c), TP_POLICY_GEOMETRIC);
	ck_assert(tp_conf_time_budget_ms(c) == 200.0); /* continued line */
	tp_conf_destroy(c);
}
END_TEST

START_TEST(example_lab4)
{
	tp_conf *c = load_ok(EXAMPLES "lab4.conf");
	const tp_machine *m = tp_conf_machine(c);
	ck_assert_int_eq(tp_machine_node_count(m), 8);
	assert_at(m, "node1", 0, 0, 0);
	assert_at(m, "node2", 1, 0, 0);
	assert_at(m, "node3", 0, 1, 0);
	assert_at(m, "node8", 1, 1, 1);
	ck_assert_int_eq(tp_machine_distance(m, idx(m, "node1"), idx(m, "node8")), 3);
	ck_assert_int_eq(tp_machine_distance(m, idx(m, "node1"), idx(m, "node4")), 2);
	tp_conf_destroy(c);
}
END_TEST

/* ---- syntax ---- */

START_TEST(syntax_forms)
{
	/* Keys case-insensitive, several pairs per line, comments, '\'
	 * continuation, CRLF, blank lines, quoted values. */
	tp_conf *c = str_ok("# header comment\r\n"
			    "\n"
			    "network=TORUS   dims=4X4 \\\r\n"
			    "   WRAP=Yes,no   # trailing comment\n"
			    "   \t\n"
			    "nodename=n[0-15] coordorder=Z-MAJOR\n"
			    "TIMEBUDGETMS=\"12.5\"\n");
	const tp_machine *m = tp_conf_machine(c);
	ck_assert_int_eq(tp_machine_node_count(m), 16);
	ck_assert(tp_machine_wraps(m, 0));
	ck_assert(!tp_machine_wraps(m, 1));
	assert_at(m, "n1", 0, 1, 0);  /* z-major: the last dimension fastest */
	assert_at(m, "n4", 1, 0, 0);
	assert_at(m, "n15", 3, 3, 0);
	ck_assert(tp_conf_time_budget_ms(c) == 12.5);
	tp_conf_destroy(c);

	/* A continuation on the last line, and no final newline. */
	c = str_ok("Network=mesh Dims=3 NodesPerRouter=2\nNodeName=a[1-6] CoordOrder=x-major \\");
	m = tp_conf_machine(c);
	ck_assert_int_eq(tp_machine_node_count(m), 6);
	ck_assert(!tp_machine_wraps(m, 0));
	assert_at(m, "a2", 0, 0, 0);
	assert_at(m, "a3", 1, 0, 0);
	tp_conf_destroy(c);
}
END_TEST

START_TEST(wrap_defaults)
{
	tp_conf *c = str_ok("Network=torus Dims=2x3x4\nNodeName=a Coords=1,2,3\n");
	const tp_machine *m = tp_conf_machine(c);
	for (int d = 0; d < 3; d++)
		ck_assert(tp_machine_wraps(m, d));
	tp_conf_destroy(c);
	c = str_ok("Network=mesh Dims=2x3x4\nNodeName=a Coords=1,2,3\n");
	m = tp_conf_machine(c);
	for (int d = 0; d < 3; d++)
		ck_assert(!tp_machine_wraps(m, d));
	tp_conf_destroy(c);
	/* An explicit Wrap wins over the default; one value sets all. */
	c = str_ok("Wrap=no Network=torus Dims=2x3x4\nNodeName=a Coords=1,2,3\n");
	m = tp_conf_machine(c);
	for (int d = 0; d < 3; d++)
		ck_assert(!tp_machine_wraps(m, d));
	char *d = describe(c);
	ck_assert_ptr_nonnull(strstr(d, "torus 2x3x4 (wrap no,no,no), 1 nodes, 1 per router"));
	free(d);
	tp_conf_destroy(c);
	c = str_ok("Network=torus Dims=2x3x4 Wrap=no,yes,true\nNodeName=a Coords=1,2,3\n");
	m = tp_conf_machine(c);
	ck_assert(!tp_machine_wraps(m, 0) && tp_machine_wraps(m, 1) && tp_machine_wraps(m, 2));
	tp_conf_destroy(c);
}
END_TEST

START_TEST(coord_order_offset)
{
	/* With NodesPerRouter=k the i-th name sits at router (Offset+i)/k. */
	tp_conf *c = str_ok("Network=torus Dims=4x2 NodesPerRouter=2 LinkBandwidth=3\n"
			    "NodeName=a[0-2] CoordOrder=x-major Offset=1\n"
			    "NodeName=b[0-3] CoordOrder=x-major Offset=10\n"
			    "NodeName=z Coords=0,0\n");
	const tp_machine *m = tp_conf_machine(c);
	ck_assert_int_eq(tp_machine_node_count(m), 8);
	assert_at(m, "a0", 0, 0, 0);
	assert_at(m, "a1", 1, 0, 0);
	assert_at(m, "a2", 1, 0, 0);
	assert_at(m, "b0", 1, 1, 0);
	assert_at(m, "b1", 1, 1, 0);
	assert_at(m, "b2", 2, 1, 0);
	assert_at(m, "b3", 2, 1, 0);
	assert_at(m, "z", 0, 0, 0);
	ck_assert(tp_machine_link_bandwidth(m, 1) == 3.0);
	tp_conf_destroy(c);

	/* The last position of the grid is fine. */
	c = str_ok("Network=mesh Dims=4x4\nNodeName=n[0-15] CoordOrder=x-major Offset=0\n");
	tp_conf_destroy(c);
	c = str_ok("Network=mesh Dims=4x4\nNodeName=n15 CoordOrder=z-major Offset=15\n");
	assert_at(tp_conf_machine(c), "n15", 3, 3, 0);
	tp_conf_destroy(c);
}
END_TEST

START_TEST(defaults_and_settings)
{
	tp_conf *c = str_ok("Network=mesh Dims=2\nNodeName=a Coords=0\n"
			    "DefaultMetric=congestion TimeBudgetMs=0\n");
	ck_assert(!tp_conf_has_default_policy(c));
	ck_assert_int_eq(tp_conf_default_policy(c), TP_POLICY_NONE);
	ck_assert_int_eq(tp_conf_default_metric(c), TP_METRIC_CONGESTION);
	ck_assert(tp_conf_time_budget_ms(c) == 0.0);
	tp_conf_destroy(c);
	c = str_ok("DefaultPolicy=block Network=mesh Dims=2\nNodeName=a Coords=0\n");
	ck_assert(tp_conf_has_default_policy(c));
	ck_assert_int_eq(tp_conf_default_policy(c), TP_POLICY_BLOCK);
	tp_conf_destroy(c);
	/* NULL-safe accessors. */
	ck_assert_ptr_null(tp_conf_machine(NULL));
	ck_assert(!tp_conf_has_default_policy(NULL));
	tp_conf_destroy(NULL);
	tp_conf_describe(NULL, stdout);
}
END_TEST

/* ---- errors ---- */

struct bad {
	const char *text;
	int code;
	const char *frag;
};

static const struct bad bad_configs[] = {
	{ "Network=torus\n", TP_EINVAL, "cfg: no Dims= line" },
	{ "Network=torus Dims=4x4\n", TP_EINVAL, "cfg: no nodes" },
	{ "Network=torus Dims=4x4\nFoo=bar\n", TP_EINVAL, "cfg:2: unknown key 'Foo' in 'Foo=bar'" },
	{ "NodeName=n[1-4] CoordOrder=x-major\nNetwork=torus Dims=4\n", TP_EINVAL,
	  "cfg:1: NodeName= before Network=" },
	{ "Network=torus\n\nNodeName=n1 Coords=0\n", TP_EINVAL, "cfg:3: NodeName= before Dims=" },
	{ "Network=torus\nCoordFile=x.coords\n", TP_EINVAL, "cfg:2: CoordFile= before Dims=" },
	{ "Network=torus Dims=4x4\nNodesPerRouter=abc\n", TP_EINVAL,
	  "cfg:2: NodesPerRouter=abc: not a number" },
	{ "Network=torus Dims=4x4\nNodesPerRouter=0\n", TP_EINVAL, "cfg:2: NodesPerRouter=0: expected 1.." },
	{ "Network=torus Dims=24x0x24\n", TP_EINVAL, "cfg:1: Dims=24x0x24: dimension 2 is zero" },
	{ "Network=torus Dims=24xax24\n", TP_EINVAL,
	  "cfg:1: Dims=24xax24: dimension 2 ('a') is not a number" },
	{ "Network=torus Dims=24x\n", TP_EINVAL, "Dims=24x: dimension 2 ('') is not a number" },
	{ "Network=torus Dims=-4\n", TP_EINVAL, "Dims=-4: dimension 1 is negative" },
	{ "Network=torus Dims=99999999999\n", TP_EINVAL, "dimension 1 is too large" },
	{ "Network=torus Dims=2x2x2x2x2x2x2\n", TP_EINVAL, "more than 6 dimensions" },
	{ "Network=torus Dims=100000x100000x100000x100000x100000\nNodeName=a CoordOrder=x-major\n",
	  TP_EINVAL, "cfg:1: Dims=100000x100000x100000x100000x100000: machine: too many routers" },
	{ "Network=torus Dims=4\nTimeBudgetMs=-1\n", TP_EINVAL, "cfg:2: TimeBudgetMs=-1: not a number >= 0" },
	{ "Network=torus Dims=4\nTimeBudgetMs=fast\n", TP_EINVAL, "cfg:2: TimeBudgetMs=fast: not a number" },
	{ "Network=torus Dims=4\nTimeBudgetMs=inf\n", TP_EINVAL, "TimeBudgetMs=inf: not a number" },
	{ "Network=torus Dims=4\nMaxThreads=0\n", TP_EINVAL, "cfg:2: MaxThreads=0: a thread count in 1..256 is needed" },
	{ "Network=torus Dims=4\nMaxThreads=4x\n", TP_EINVAL, "cfg:2: MaxThreads=4x: a thread count" },
	{ "Network=torus Dims=4\nMaxThreads=1000\n", TP_EINVAL, "MaxThreads=1000: a thread count" },
	{ "Network=torus Dims=4\nMaxThreads=2\nMaxThreads=3\n", TP_EINVAL, "cfg:3: MaxThreads= given twice (first on line 2)" },
	{ "Network=torus Dims=4x4x4 LinkBandwidth=75,0,75\n", TP_EINVAL,
	  "cfg:1: LinkBandwidth=75,0,75: value 2 ('0') is not a positive number" },
	{ "Network=torus Dims=4x4x4\nLinkBandwidth=1,2\nNodeName=a Coords=0,0,0\n", TP_EINVAL,
	  "cfg:2: LinkBandwidth=1,2: 2 values, Dims=4x4x4 has 3 dimensions (give 1 or 3)" },
	{ "Network=torus Dims=4x4x4 Wrap=yes,no\nNodeName=a Coords=0,0,0\n", TP_EINVAL,
	  "cfg:1: Wrap=yes,no: 2 values, Dims=4x4x4 has 3 dimensions (give 1 or 3)" },
	{ "Network=torus Dims=4x4 Wrap=maybe\n", TP_EINVAL,
	  "cfg:1: Wrap=maybe: value 1 ('maybe') is not yes or no" },
	{ "Network=torus Dims=4x4x4\nNodeName=a Coords=0,0\n", TP_EINVAL,
	  "cfg:2: Coords=0,0: 2 coordinates, Dims=4x4x4 has 3 dimensions" },
	{ "Network=torus Dims=4x4x4\nNodeName=a Coords=0,0,0,0,0,0,0,0\n", TP_EINVAL,
	  "cfg:2: Coords=0,0,0,0,0,0,0,0: more than 6 coordinates" },
	{ "Network=torus Dims=24x24x24\n\n\n\n\n\nNodeName=nid00012 Coords=0,0,24\n", TP_EINVAL,
	  "cfg:7: Coords=0,0,24: coordinate 2 is outside 0..23" },
	{ "Network=torus Dims=4x4x4\nNodeName=a Coords=0,-1,0\n", TP_EINVAL,
	  "cfg:2: Coords=0,-1,0: coordinate 1 is outside 0..3" },
	{ "Network=torus Dims=4x4x4\nNodeName=a Coords=0,x,0\n", TP_EINVAL,
	  "cfg:2: Coords=0,x,0: coordinate 1 ('x') is not a number" },
	{ "Network=mesh Dims=4x4\nNodeName=n[0-16] CoordOrder=x-major\n", TP_EINVAL,
	  "cfg:2: NodeName=n[0-16] CoordOrder=x-major: 17 nodes from position 0 go beyond the grid's 16 positions" },
	{ "Network=mesh Dims=4x4\nNodeName=n[0-3] CoordOrder=x-major Offset=13\n", TP_EINVAL,
	  "4 nodes from position 13 go beyond the grid's 16 positions" },
	{ "Network=mesh Dims=4x4 NodesPerRouter=2\nNodeName=n[0-32] CoordOrder=z-major\n", TP_EINVAL,
	  "33 nodes from position 0 go beyond the grid's 32 positions (Dims=4x4, 2 per router)" },
	{ "Network=mesh Dims=4x4\nNodeName=n[0-3] CoordOrder=x-major Offset=-1\n", TP_EINVAL,
	  "cfg:2: Offset=-1: expected a number >= 0" },
	{ "Network=mesh Dims=4x4\nNodeName=n[0-3] CoordOrder=x-major Offset=one\n", TP_EINVAL,
	  "cfg:2: Offset=one: not a number" },
	{ "Network=mesh Dims=4x4\nNodeName=n[0-3] CoordOrder=y-major\n", TP_EINVAL,
	  "cfg:2: CoordOrder=y-major: expected x-major or z-major" },
	{ "Network=mesh Dims=4x4\nNodeName=n[0-3] CoordOrder=x-major\nNodeName=n2 Coords=3,3\n", TP_EINVAL,
	  "cfg:3: duplicate node 'n2' (already placed at cfg:2)" },
	{ "Network=mesh Dims=4x4\nNodeName=n[0-2,1] CoordOrder=x-major\n", TP_EINVAL,
	  "cfg:2: duplicate node 'n1' (already placed at cfg:2)" },
	/* ranges of 256 names or more are numbered runs of the machine: the
	 * same checks, by number */
	{ "Network=mesh Dims=32x32\nNodeName=n[000-299] CoordOrder=x-major\n"
	  "NodeName=n[200-499] CoordOrder=x-major Offset=300\n", TP_EINVAL,
	  "cfg:3: duplicate node 'n200' (already placed at cfg:2)" },
	{ "Network=mesh Dims=32x32\nNodeName=n[0-299] CoordOrder=x-major\n"
	  "NodeName=n[000-299] CoordOrder=x-major Offset=300\n", TP_EINVAL,
	  "cfg:3: duplicate node 'n100' (already placed at cfg:2)" },
	{ "Network=mesh Dims=32x32\nNodeName=n0300 Coords=0,31\n"
	  "NodeName=n[0000-0511] CoordOrder=x-major\n", TP_EINVAL,
	  "cfg:3: duplicate node 'n0300' (already placed at cfg:2)" },
	{ "Network=mesh Dims=32x32\nNodeName=n[0000-0511] CoordOrder=x-major\n"
	  "NodeName=n0300 Coords=31,31\n", TP_EINVAL,
	  "cfg:3: duplicate node 'n0300' (already placed at cfg:2)" },
	/* where a duplicate was first placed, among lines that alternate
	 * runs and single nodes (the loader keeps a span per line) */
	{ "Network=mesh Dims=32x32\nNodeName=n[0000-0299] CoordOrder=x-major\n"
	  "NodeName=a Coords=0,31\nNodeName=b Coords=1,31\n"
	  "NodeName=m[0000-0299] CoordOrder=x-major Offset=300\n"
	  "NodeName=c Coords=2,31\nNodeName=m0150 Coords=3,31\n", TP_EINVAL,
	  "cfg:7: duplicate node 'm0150' (already placed at cfg:5)" },
	{ "Network=mesh Dims=32x32\nNodeName=n[0000-0299] CoordOrder=x-major\n"
	  "NodeName=a Coords=0,31\nNodeName=b Coords=1,31\n"
	  "NodeName=m[0000-0299] CoordOrder=x-major Offset=300\n"
	  "NodeName=c Coords=2,31\nNodeName=b Coords=3,31\n", TP_EINVAL,
	  "cfg:7: duplicate node 'b' (already placed at cfg:4)" },
	{ "Network=mesh Dims=32x32\nNodeName=n[0000-0299] CoordOrder=x-major\n"
	  "NodeName=a Coords=0,31\nNodeName=b Coords=1,31\n"
	  "NodeName=m[0000-0299] CoordOrder=x-major Offset=300\n"
	  "NodeName=c Coords=2,31\nNodeName=n[0299-0310] CoordOrder=x-major Offset=600\n",
	  TP_EINVAL, "cfg:7: duplicate node 'n0299' (already placed at cfg:2)" },
	{ "Network=mesh Dims=32x32\nNodeName=a Coords=5,0\n"
	  "NodeName=n[0000-0511] CoordOrder=x-major\n", TP_EINVAL,
	  "cfg:3: node 'n0005': router (5,0) already has 1 node (NodesPerRouter=1)" },
	{ "Network=mesh Dims=32x32\nNodeName=n[0000-1023] CoordOrder=x-major Offset=1\n",
	  TP_EINVAL, "cfg:2: NodeName=n[0000-1023] CoordOrder=x-major: 1024 nodes from position 1 go beyond the grid's 1024 positions" },
	{ "Network=mesh Dims=4x4\nNodeName=n[0-3 CoordOrder=x-major\n", TP_EINVAL,
	  "cfg:2: NodeName=n[0-3: malformed hostlist" },
	{ "Network=mesh Dims=4x4\nNodeName=n[3-1] CoordOrder=x-major\n", TP_EINVAL,
	  "cfg:2: NodeName=n[3-1]: malformed hostlist: bad range '3-1' (decreasing)" },
	{ "Network=mesh Dims=4x4\nNodeName=n[0-3 CoordOrder=x-major\n", TP_EINVAL,
	  "cfg:2: NodeName=n[0-3: malformed hostlist: unbalanced brackets" },
	{ "Network=torus Dims=48x48x48\nNodeName=a[0-65535]b[0-65535] CoordOrder=x-major\n", TP_EINVAL,
	  "cfg:2: NodeName=a[0-65535]b[0-65535]: 4294967296 names, more than 4194304 "
	  "(the most one config line may name)" },
	{ "Network=mesh Dims=4x4\nNodeName=n[1,a] CoordOrder=x-major\n", TP_EINVAL,
	  "cfg:2: NodeName=n[1,a]: malformed hostlist: bad range 'a'" },
	{ "Network=mesh Dims=4x4\nNodeName=n1] CoordOrder=x-major\n", TP_EINVAL,
	  "cfg:2: NodeName=n1]: malformed hostlist" },
	{ "Network=mesh Dims=4x4\nNodeName=, CoordOrder=x-major\n", TP_EINVAL,
	  "cfg:2: NodeName=,: no node names" },
	{ "Network=mesh Dims=4x4\nNodeName=a Coords=1,1\nNodeName=b Coords=1,1\n", TP_EINVAL,
	  "cfg:3: node 'b': router (1,1) already has 1 node (NodesPerRouter=1)" },
	{ "Network=mesh Dims=4x4 NodesPerRouter=2\nNodeName=n[0-2] CoordOrder=x-major Offset=1\n"
	  "NodeName=x Coords=1,0\n", TP_EINVAL,
	  "cfg:3: node 'x': router (1,0) already has 2 nodes (NodesPerRouter=2)" },
	{ "Network=mesh Dims=4x4\nNodeName=a Coords=0,0\nNodesPerRouter=2\n", TP_EINVAL,
	  "cfg:3: NodesPerRouter= must come before the first NodeName= or CoordFile= line (line 2)" },
	{ "Network=mesh Dims=4x4\nNodeName=a Coords=0,0\nWrap=yes\n", TP_EINVAL,
	  "cfg:3: Wrap= must come before" },
	{ "Network=mesh Dims=4x4\nDims=4x4\n", TP_EINVAL, "cfg:2: Dims= given twice (first on line 1)" },
	{ "Network=mesh Network=torus Dims=4x4\n", TP_EINVAL, "cfg:1: Network= given twice (first on line 1)" },
	{ "Network=mesh Dims=4x4\nTimeBudgetMs=1\nTimeBudgetMs=2\n", TP_EINVAL,
	  "cfg:3: TimeBudgetMs= given twice (first on line 2)" },
	{ "Network=mesh Dims=4x4\nNodeName=a\n", TP_EINVAL, "cfg:2: NodeName=a: needs Coords= or CoordOrder=" },
	{ "Network=mesh Dims=4x4\nNodeName=a Coords=0,0 CoordOrder=x-major\n", TP_EINVAL,
	  "cfg:2: NodeName=a: Coords= and CoordOrder= exclude each other" },
	{ "Network=mesh Dims=4x4\nNodeName=a Coords=0,0 Offset=3\n", TP_EINVAL,
	  "cfg:2: NodeName=a: Offset= needs CoordOrder=" },
	{ "Network=mesh Dims=4x4\nCoords=0,0\n", TP_EINVAL, "cfg:2: Coords=0,0: needs NodeName= on the same line" },
	{ "Network=mesh Dims=4x4\nNodeName=a Coords=0,0 Network=mesh\n", TP_EINVAL,
	  "cfg:2: Network=mesh: not allowed on a NodeName= line" },
	{ "Network=mesh Dims=4x4\nNodeName=a Coords=0,0 NodeName=b\n", TP_EINVAL,
	  "cfg:2: NodeName= given twice on one line" },
	{ "Network=mesh Dims=4x4\nNodeName=a Coords=0,0 Coords=1,1\n", TP_EINVAL,
	  "cfg:2: Coords= given twice on one line" },
	{ "Network=mesh Dims=4x4\nNodeName=n[1-2] Coords=0,0\n", TP_EINVAL,
	  "cfg:2: NodeName=n[1-2]: Coords= places one node, the hostlist has 2 names" },
	{ "Network=mesh Dims=4x4 bogus\n", TP_EINVAL, "cfg:1: 'bogus': expected Key=Value" },
	{ "Network=mesh Dims=\n", TP_EINVAL, "cfg:1: Dims=: empty value" },
	{ "Network=mesh =4\n", TP_EINVAL, "cfg:1: '=4': missing key" },
	{ "Network=mesh Dims=4\nCoordFile=\"abc\n", TP_EINVAL, "cfg:2: unterminated '\"'" },
	{ "Network=tree Dims=4\n", TP_EINVAL, "cfg:1: Dims= does not apply to Network=tree" },
	{ "Network=ring Dims=4\n", TP_EINVAL, "cfg:1: Network=ring: unknown network, expected slurm, torus, mesh, tree, dragonfly or block" },
	{ "Network=tree\n", TP_EINVAL, "cfg: end of file before TopologyFile=" },
	{ "Network=tree TopologyFile=/nonexistent/topology.conf\n", TP_ENOENT, "cfg:1: TopologyFile=/nonexistent/topology.conf: cannot read" },
	{ "Network=torus Dims=4 TopologyFile=x\nNodeName=n[0-3] CoordOrder=x-major\n", TP_EINVAL, "cfg:1: TopologyFile= needs Network=tree" },
	{ "Network=torus Dims=4 LevelCost=1\nNodeName=n[0-3] CoordOrder=x-major\n", TP_EINVAL, "cfg:1: LevelCost= needs Network=tree" },
	{ "Network=tree TopologyFile=x LevelCost=1,0\n", TP_EINVAL, "cfg:1: LevelCost=1,0: value 2 ('0') is not an integer in 1..1000000" },
	{ "Network=tree TopologyFile=x LevelBandwidth=1,-2\n", TP_EINVAL, "cfg:1: LevelBandwidth=1,-2: value 2 ('-2') is not a positive number" },
	{ "Network=mesh \\\n  Dims=4x0\n", TP_EINVAL, "cfg:2: Dims=4x0: dimension 2 is zero" },
	/* each token of a continued line keeps its own physical line */
	{ "Network=mesh Dims=4 \\\nbogus\n", TP_EINVAL, "cfg:2: 'bogus': expected Key=Value" },
	{ "Network=mesh \\\r\n Dims=4 \\\r\n Dims=5\r\n", TP_EINVAL,
	  "cfg:3: Dims= given twice (first on line 2)" },
	/* a '#' inside quotes is no comment, one after them is */
	{ "Network=mesh Dims=4\nCoordFile=\"/nonexistent#dir/x.coords\" # note\n", TP_ENOENT,
	  "cfg:2: CoordFile=/nonexistent#dir/x.coords: cannot read" },
	{ "Network=mesh Dims=4\nCoordFile=\"abc # x\n", TP_EINVAL,
	  "cfg:2: unterminated '\"' in 'CoordFile=abc # x'" },
	{ "Network=mesh Wrap=\"#\nDims=4\n", TP_EINVAL, "cfg:1: unterminated '\"' in 'Wrap=#" },
	{ "Network=mesh Dims=4\nDefaultMetric=speed\n", TP_EINVAL, "cfg:2: DefaultMetric=speed: " },
	{ "Network=mesh Dims=4\nDefaultPolicy=magic\n", TP_EINVAL, "cfg:2: DefaultPolicy=magic: " },
	{ "Network=torus Dims=4 ForestCost=2\nNodeName=n[0-3] CoordOrder=x-major\n", TP_EINVAL,
	  "cfg:1: ForestCost= needs Network=tree" },
	{ "Network=tree TopologyFile=x ForestCost=0\n", TP_EINVAL,
	  "cfg:1: ForestCost=0: expected an integer in 1..1000000" },
	{ "Network=tree TopologyFile=x\nForestCost=2\nForestCost=3\n", TP_EINVAL,
	  "cfg:3: ForestCost= given twice (first on line 2)" },
	{ "Network=mesh Dims=4\nNodeName=a NodeTopology=x.xml\n", TP_EINVAL,
	  "cfg:2: NodeName=a: node 'a' is not placed (give Coords= or CoordOrder=, or place it with a CoordFile= line before this one)" },
	{ "Network=mesh Dims=4\nNodeName=a\n", TP_EINVAL,
	  "cfg:2: NodeName=a: needs Coords= or CoordOrder= (or NodeTopology= for nodes a CoordFile= placed)" },
	{ "Network=mesh Dims=4\nCoordFile=/nonexistent-dir/x.coords\n", TP_ENOENT,
	  "cfg:2: CoordFile=/nonexistent-dir/x.coords: cannot read: No such file or directory" },
};

START_TEST(bad_config)
{
	const struct bad *b = &bad_configs[_i];
	tp_conf *c = (tp_conf *)1;
	tp_error err;
	tp_error_clear(&err);
	int rc = tp_conf_load_string(b->text, "cfg", &c, &err);
	ck_assert_msg(rc == b->code, "config %d: rc %d, want %d (%s)\n%s", _i, rc,
		      b->code, err.msg, b->text);
	ck_assert_ptr_null(c);
	ck_assert_int_eq(err.code, rc);
	ck_assert_msg(strstr(err.msg, b->frag) != NULL,
		      "config %d: error \"%s\" lacks \"%s\"", _i, err.msg, b->frag);
	ck_assert_ptr_null(strchr(err.msg, '\n'));
}
END_TEST

START_TEST(bad_files)
{
	tp_conf *c = (tp_conf *)1;
	tp_error err;
	ck_assert_int_eq(tp_conf_load(DATA "no-such.conf", &c, &err), TP_ENOENT);
	ck_assert_ptr_null(c);
	tp_assert_err_has(&err, DATA "no-such.conf: cannot read: No such file or directory");
	ck_assert_int_eq(tp_conf_load(DATA, &c, &err), TP_EIO); /* a directory */
	/* no Network=: Slurm's topology, from beside slurm.conf */
	ck_assert_int_eq(tp_conf_load_slurm(DATA "empty.conf", &(tp_conf_slurm){
		.slurm_conf = "/nonexistent/slurm.conf" }, &c, &err), TP_ENOENT);
	ck_assert_str_eq(err.msg, DATA "empty.conf: Slurm's topology: "
			 "/nonexistent/slurm.conf: cannot read: No such file or directory");
	/* CoordFile errors carry the coordinate file's own name and line. */
	ck_assert_int_eq(tp_conf_load(DATA "coords-range.conf", &c, &err), TP_EINVAL);
	ck_assert_str_eq(err.msg, DATA "coords-range.coords:3: node 'b': coordinate 1 is outside 0..3");
	ck_assert_int_eq(tp_conf_load(DATA "coords-fields.conf", &c, &err), TP_EINVAL);
	ck_assert_str_eq(err.msg, DATA "coords-fields.coords:3: expected a node name and 2 coordinates, found 4 fields");
	ck_assert_int_eq(tp_conf_load(DATA "coords-dup.conf", &c, &err), TP_EINVAL);
	ck_assert_str_eq(err.msg, DATA "coords-dup.coords:2: duplicate node 'a' (already placed at "
			 DATA "coords-dup.conf:2)");
	ck_assert_int_eq(tp_conf_load(DATA "coords-missing.conf", &c, &err), TP_ENOENT);
	ck_assert_str_eq(err.msg, DATA "coords-missing.conf:3: CoordFile=no-such-file.coords: "
			 DATA "no-such-file.coords: cannot read: No such file or directory");
	ck_assert_int_eq(tp_conf_load(DATA "coords-empty.conf", &c, &err), TP_EINVAL);
	ck_assert_str_eq(err.msg, DATA "coords-empty.coords: no nodes in CoordFile");
	ck_assert_ptr_null(c);
	ck_assert_int_eq(tp_conf_load(NULL, &c, &err), TP_EINVAL);
	ck_assert_int_eq(tp_conf_load_string(NULL, "x", &c, &err), TP_EINVAL);
	ck_assert_int_eq(tp_conf_load_string("x", "x", NULL, &err), TP_EINVAL);
}
END_TEST

/* A coordinate file's lines of consecutive numbers become numbered runs of
 * the machine (see cf_run_flush): the same machine as the same lines kept
 * apart (a comment between each: name by name), widths that grow (n8 n9
 * n10) included; duplicates and full routers inside a run keep their own
 * line in the message. */
START_TEST(coord_file_runs)
{
	enum { N = 256 };
	int pos[320];
	uint64_t x = 7;
	for (int i = 0; i < 320; i++)
		pos[i] = i;
	for (int i = 319; i > 0; i--) {
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
		int j = (int)((x >> 33) % (uint64_t)(i + 1)), t = pos[i];
		pos[i] = pos[j];
		pos[j] = t;
	}
	size_t cap = 1 << 16;
	char *a = malloc(cap), *b = malloc(cap);
	*a = *b = '\0';
	for (int i = 0; i < 300; i++) {
		char nm[32], ln[64];
		if (i < N)
			snprintf(nm, sizeof nm, "nid%03d", i);
		else if (i < 290)
			snprintf(nm, sizeof nm, "n%d", i - N + 5);     /* n5 .. n38 */
		else
			snprintf(nm, sizeof nm, "login%d-ib", i - 290);
		snprintf(ln, sizeof ln, "%s %d %d %d\n", nm, pos[i] % 8, pos[i] / 8 % 8, pos[i] / 64);
		strcat(a, ln);
		strcat(b, ln);
		strcat(b, "# apart\n");
	}
	char *fa = tp_test_tmpfile(a), *fb = tp_test_tmpfile(b), text[512];
	snprintf(text, sizeof text, "Network=torus Dims=8x8x5\nCoordFile=%s\n", fa);
	tp_conf *ca = str_ok(text);
	snprintf(text, sizeof text, "Network=torus Dims=8x8x5\nCoordFile=%s\n", fb);
	tp_conf *cb = str_ok(text);
	const tp_machine *ma = tp_conf_machine(ca), *mb = tp_conf_machine(cb);
	ck_assert_int_eq(tp_machine_node_count(ma), 300);
	ck_assert_int_eq(tp_machine_node_count(mb), 300);
	for (int32_t i = 0; i < 300; i++) {
		const char *na = tp_machine_node_name(ma, i);
		ck_assert_str_eq(na, tp_machine_node_name(mb, i));
		ck_assert_int_eq(tp_machine_find_node(ma, na), i);
		for (int d = 0; d < 3; d++)
			ck_assert_int_eq(tp_machine_node_coords(ma, i)[d],
					 tp_machine_node_coords(mb, i)[d]);
	}
	ck_assert_int_eq(tp_machine_find_node(ma, "n10"), 261);
	ck_assert_int_eq(tp_machine_find_node(ma, "n010"), -1);
	tp_conf_destroy(ca);
	tp_conf_destroy(cb);

	/* a later line, and a NodeName= line, repeat a node of a run: the
	 * run's own line is named */
	tp_error err;
	tp_conf *c = NULL;
	strcat(a, "nid005 7 7 4\n");
	char *fc = tp_test_tmpfile(a), want[600];
	snprintf(text, sizeof text, "Network=torus Dims=8x8x5\nCoordFile=%s\n", fc);
	ck_assert_int_eq(tp_conf_load_string(text, "cfg", &c, &err), TP_EINVAL);
	snprintf(want, sizeof want, "%s:301: duplicate node 'nid005' (already placed at %s:6)", fc, fc);
	ck_assert_str_eq(err.msg, want);
	snprintf(text, sizeof text, "Network=torus Dims=8x8x5\nCoordFile=%s\nNodeName=nid100 Coords=7,7,4\n", fa);
	ck_assert_int_eq(tp_conf_load_string(text, "cfg", &c, &err), TP_EINVAL);
	snprintf(want, sizeof want, "cfg:3: duplicate node 'nid100' (already placed at %s:101)", fa);
	ck_assert_str_eq(err.msg, want);
	/* a router taken twice inside a run: that line, that name */
	char *fd = tp_test_tmpfile("nid000 0 0 0\nnid001 1 0 0\nnid002 2 0 0\nnid003 3 0 0\n"
				   "nid004 4 0 0\nnid005 5 0 0\nnid006 6 0 0\nnid007 7 0 0\n"
				   "nid008 1 0 0\nnid009 0 1 0\n");
	snprintf(text, sizeof text, "Network=torus Dims=8x8x5\nCoordFile=%s\n", fd);
	ck_assert_int_eq(tp_conf_load_string(text, "cfg", &c, &err), TP_EINVAL);
	snprintf(want, sizeof want, "%s:9: node 'nid008': router", fd);
	tp_assert_err_has(&err, want);
	const char *files[] = { fa, fb, fc, fd };
	for (int i = 0; i < 4; i++) {
		unlink(files[i]);
		free((void *)files[i]);
	}
	free(a);
	free(b);
}
END_TEST

START_TEST(coord_file_relative_to_conf)
{
	/* Loaded from another directory, CoordFile= still resolves next to
	 * the config file. */
	char *dir = strdup("/tmp/tp-conf-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char path[512], coords[512];
	snprintf(path, sizeof path, "%s/site.conf", dir);
	snprintf(coords, sizeof coords, "%s/site.coords", dir);
	FILE *f = fopen(path, "w");
	fputs("Network=mesh Dims=8 CoordFile=site.coords\n", f);
	fclose(f);
	f = fopen(coords, "w");
	fputs("a 7\nb 0 # end\n", f);
	fclose(f);
	tp_conf *c = load_ok(path);
	const tp_machine *m = tp_conf_machine(c);
	ck_assert_int_eq(tp_machine_node_count(m), 2);
	ck_assert_int_eq(tp_machine_distance(m, 0, 1), 7);
	tp_conf_destroy(c);
	/* A '#' inside quotes names the file; CRLF in the config and the
	 * coordinates; a continued line. */
	char hashed[512];
	snprintf(hashed, sizeof hashed, "%s/site#2.coords", dir);
	f = fopen(hashed, "w");
	fputs("a 3\r\nb 0 # end\r\n", f);
	fclose(f);
	f = fopen(path, "w");
	fputs("Network=mesh \\\r\n Dims=8 CoordFile=\"site#2.coords\" # site\r\n", f);
	fclose(f);
	c = load_ok(path);
	ck_assert_int_eq(tp_machine_node_count(tp_conf_machine(c)), 2);
	ck_assert_int_eq(tp_machine_distance(tp_conf_machine(c), 0, 1), 3);
	tp_conf_destroy(c);
	unlink(hashed);
	/* An absolute CoordFile path from a string config. */
	char text[700];
	snprintf(text, sizeof text, "Network=torus Dims=8\nCoordFile=%s\n", coords);
	c = str_ok(text);
	ck_assert_int_eq(tp_machine_distance(tp_conf_machine(c), 0, 1), 1);
	tp_conf_destroy(c);
	unlink(coords);
	unlink(path);
	rmdir(dir);
	free(dir);
}
END_TEST

/* ---- size ---- */

static void timed_load(const char *path, int32_t want_nodes, double limit_ms)
{
	double t0 = tp__now_ms();
	tp_conf *c = load_ok(path);
	double ms = tp__now_ms() - t0;
	ck_assert_int_eq(tp_machine_node_count(tp_conf_machine(c)), want_nodes);
	if (!RUNNING_ON_VALGRIND)
		ck_assert_msg(ms < limit_ms, "%s loaded in %.0f ms", path, ms);
	tp_conf_destroy(c);
}

START_TEST(large_configs)
{
	timed_load(EXAMPLES "torus3d.conf", 13824, 500);
	timed_load(DATA "big48.conf", 110592, 1000);
	tp_conf *c = load_ok(DATA "big48.conf");
	const tp_machine *m = tp_conf_machine(c);
	assert_at(m, "nid065535", 15, 21, 28);  /* 65535 = 15 + 48*(21 + 48*28) */
	assert_at(m, "nid065536", 16, 21, 28);
	assert_at(m, "nid110591", 47, 47, 47);
	tp_conf_destroy(c);
	/* a whole 6-D machine from one range (more than Slurm's 65536
	 * names per range); its timing is in bench_input */
	c = str_ok("Network=torus Dims=24x23x24x2x3x2 Wrap=yes,yes,yes,no,yes,no\n"
		   "NodeName=nid[000000-158975] CoordOrder=x-major\n");
	m = tp_conf_machine(c);
	ck_assert_int_eq(tp_machine_node_count(m), 158976);
	int32_t i = tp_machine_find_node(m, "nid158975");
	ck_assert_int_eq(i, 158975);
	const int *co = tp_machine_node_coords(m, i);
	static const int last[6] = { 23, 22, 23, 1, 2, 1 };
	for (int d = 0; d < 6; d++)
		ck_assert_int_eq(co[d], last[d]);
	ck_assert_int_eq(tp_machine_find_node(m, "nid158976"), -1);
	tp_conf_destroy(c);
}
END_TEST


START_TEST(node_topology_per_group)
{
	tp_conf *c = NULL;
	tp_error err;
	const char *text =
		"Network=mesh Dims=4\n"
		"NodeName=gpu[01-02] CoordOrder=x-major NodeTopology=nodes/nvl4.xml "
		"GpuLinks=nodes/nvl4.links\n"
		"NodeName=cpu01 Coords=2 NodeTopology=/abs/cpu2.xml\n"
		"NodeName=plain Coords=3\n";
	ck_assert_msg(tp_conf_load_string(text, "t.conf", &c, &err) == 0, "%s", err.msg);
	const tp_machine *m = tp_conf_machine(c);
	int32_t g1 = tp_machine_find_node(m, "gpu01"), g2 = tp_machine_find_node(m, "gpu02");
	ck_assert_str_eq(tp_conf_node_topology(c, g1), "nodes/nvl4.xml");
	ck_assert_str_eq(tp_conf_node_gpu_links(c, g2), "nodes/nvl4.links");
	/* one stored pair for the group */
	ck_assert_ptr_eq(tp_conf_node_topology(c, g1), tp_conf_node_topology(c, g2));
	int32_t c1 = tp_machine_find_node(m, "cpu01");
	ck_assert_str_eq(tp_conf_node_topology(c, c1), "/abs/cpu2.xml");
	ck_assert_ptr_null(tp_conf_node_gpu_links(c, c1));
	ck_assert_ptr_null(tp_conf_node_topology(c, tp_machine_find_node(m, "plain")));
	ck_assert_ptr_null(tp_conf_node_topology(c, 99));
	tp_conf_destroy(c);

	ck_assert_int_eq(tp_conf_load_string("Network=mesh Dims=4\nNodeName=a Coords=0 "
					     "GpuLinks=x.links\n", "t.conf", &c, &err),
			 TP_EINVAL);
	tp_assert_err_has(&err, "t.conf:2: NodeName=a: GpuLinks= needs NodeTopology=");
	/* GpuLinkBandwidth=: the speed of what GpuLinks= counts */
	ck_assert_int_eq(tp_conf_load_string("Network=mesh Dims=4\nNodeName=a Coords=0 "
					     "NodeTopology=x.xml GpuLinkBandwidth=50\n",
					     "t.conf", &c, &err), TP_EINVAL);
	tp_assert_err_has(&err, "t.conf:2: NodeName=a: GpuLinkBandwidth= needs GpuLinks=");
	ck_assert_int_eq(tp_conf_load_string("Network=mesh Dims=4\nNodeName=a Coords=0 "
					     "NodeTopology=x.xml GpuLinks=x.links "
					     "GpuLinkBandwidth=fast\n", "t.conf", &c, &err),
			 TP_EINVAL);
	tp_assert_err_has(&err, "t.conf:2: GpuLinkBandwidth=fast: not a bandwidth");
	ck_assert_int_eq(tp_conf_load_string("Network=mesh Dims=4\nNodeName=a Coords=0 "
					     "NodeTopology=x.xml GpuLinks=x.links "
					     "GpuLinkBandwidth=0\n", "t.conf", &c, &err),
			 TP_EINVAL);
	tp_assert_err_has(&err, "GpuLinkBandwidth=0: not a positive bandwidth");
	ck_assert_msg(tp_conf_load_string("Network=mesh Dims=4\n"
					  "NodeName=a Coords=0 NodeTopology=x.xml GpuLinks=x.links "
					  "GpuLinkBandwidth=400Gb/s\n"
					  "NodeName=b Coords=1 NodeTopology=x.xml GpuLinks=x.links\n",
					  "t.conf", &c, &err) == 0, "%s", err.msg);
	m = tp_conf_machine(c);
	ck_assert_double_eq_tol(tp_conf_node_gpu_link_bw(c, tp_machine_find_node(m, "a")),
				50, 1e-9);
	ck_assert_double_eq_tol(tp_conf_node_gpu_link_bw(c, tp_machine_find_node(m, "b")),
				0, 1e-9);
	/* two models: the same files at two speeds */
	ck_assert_ptr_ne(tp_conf_node_topology(c, tp_machine_find_node(m, "a")),
			 tp_conf_node_topology(c, tp_machine_find_node(m, "b")));
	tp_conf_destroy(c);
	ck_assert_int_eq(tp_conf_load_string("Network=mesh Dims=4\nNodeName=a Coords=0 "
					     "NodeTopology=\n", "t.conf", &c, &err),
			 TP_EINVAL);
	tp_assert_err_has(&err, "NodeTopology=: empty value");
	ck_assert_int_eq(tp_conf_load_string("Network=mesh Dims=4\nNodeName=a Coords=0 "
					     "Gres=gpu:4\n", "t.conf", &c, &err),
			 TP_EINVAL);
	tp_assert_err_has(&err, "NodeTopology=, GpuLinks=, GpuLinkBandwidth=)");

	/* on a switch tree the NodeName= line only names nodes of the tree */
	char *topo = tp_test_tmpfile("SwitchName=a Nodes=n[0-3]\n");
	char text2[512];
	snprintf(text2, sizeof text2,
		 "Network=tree TopologyFile=%s\nNodeName=n[0-1] NodeTopology=/x/dgx.xml\n",
		 topo);
	ck_assert_msg(tp_conf_load_string(text2, "t.conf", &c, &err) == 0, "%s", err.msg);
	m = tp_conf_machine(c);
	ck_assert_str_eq(tp_conf_node_topology(c, tp_machine_find_node(m, "n1")), "/x/dgx.xml");
	ck_assert_ptr_null(tp_conf_node_topology(c, tp_machine_find_node(m, "n2")));
	tp_conf_destroy(c);
	unlink(topo);
	free(topo);

	/* long ranges on both sides (numbered runs, resolved a span at a
	 * time): exactly the nodes named get the topology; a name outside
	 * the runs is named in the error */
	topo = tp_test_tmpfile("SwitchName=a Nodes=n[000-099]\nSwitchName=b Nodes=n[100-199]\n"
			       "SwitchName=top Switches=a,b\n");
	snprintf(text2, sizeof text2,
		 "Network=tree TopologyFile=%s\nNodeName=n[010-049],n[060-061],n150 NodeTopology=/x/dgx.xml\n",
		 topo);
	ck_assert_msg(tp_conf_load_string(text2, "t.conf", &c, &err) == 0, "%s", err.msg);
	m = tp_conf_machine(c);
	for (int i = 0; i < 200; i++) {
		char nm[16];
		snprintf(nm, sizeof nm, "n%03d", i);
		bool has = (i >= 10 && i <= 49) || i == 60 || i == 61 || i == 150;
		const char *t = tp_conf_node_topology(c, tp_machine_find_node(m, nm));
		ck_assert_msg(has ? t && !strcmp(t, "/x/dgx.xml") : !t, "%s: %s", nm, t ? t : "none");
	}
	tp_conf_destroy(c);
	snprintf(text2, sizeof text2, "Network=tree TopologyFile=%s\nNodeName=n[150-200]\n", topo);
	ck_assert_int_eq(tp_conf_load_string(text2, "t.conf", &c, &err), TP_EINVAL);
	tp_assert_err_has(&err, "t.conf:2: NodeName=n[150-200]: node 'n200' is under no switch of");
	snprintf(text2, sizeof text2, "Network=tree TopologyFile=%s\nNodeName=n[0-20]\n", topo);
	ck_assert_int_eq(tp_conf_load_string(text2, "t.conf", &c, &err), TP_EINVAL);
	tp_assert_err_has(&err, "t.conf:2: NodeName=n[0-20]: node 'n0' is under no switch of");
	unlink(topo);
	free(topo);
}
END_TEST


/* ---- what real sites' configs need ---- */

static char *write_file(const char *dir, const char *name, const char *text)
{
	char *path = malloc(strlen(dir) + strlen(name) + 2);
	sprintf(path, "%s/%s", dir, name);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	return path;
}

/* A topology.conf forest: accepted with a warning that check-config and
 * every job's notes carry, ForestCost= pricing the virtual top. */
START_TEST(forest_with_warning)
{
	char dir[] = "/tmp/tp-forest-XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char *topo = write_file(dir, "topology.conf",
				"SwitchName=a Nodes=n[0-1]\nSwitchName=b Nodes=n[2-3]\n");
	char *cfg = write_file(dir, "tp.conf",
			       "Network=tree TopologyFile=topology.conf ForestCost=5\n");
	tp_conf *c = load_ok(cfg);
	const tp_machine *m = tp_conf_machine(c);
	ck_assert_int_eq(tp_conf_nwarnings(c), 1);
	ck_assert_ptr_null(tp_conf_warning(c, 1));
	const char *w = tp_conf_warning(c, 0);
	ck_assert_msg(strstr(w, "/topology.conf:2: no switch reaches every node: 2 separate trees "
			     "(tops 'a' line 1, 'b' line 2)") && strstr(w, "costing 5 (ForestCost=)"),
		      "%s", w);
	ck_assert_int_eq(tp_machine_distance(m, tp_machine_find_node(m, "n0"),
					     tp_machine_find_node(m, "n3")), 12);
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	tp_conf_describe(c, mem);
	fclose(mem);
	ck_assert_msg(strstr(buf, "2 switches, 0 levels of links, 4 nodes\nforest of 2 trees "
			     "joined by a virtual top switch\n"), "%s", buf);
	free(buf);
	/* the job's notes carry it */
	tp_job_request q;
	tp_job_request_init(&q);
	q.conf = c;
	q.nodes = "n[0-3]";
	q.slots = "1";
	q.stencil = "4x1";
	tp_job *job = NULL;
	tp_error err;
	ck_assert_msg(tp_job_create(&q, &job, &err) == 0, "%s", err.msg);
	ck_assert_int_ge(tp_job_nnotes(job), 1);
	ck_assert_msg(!strncmp(tp_job_note(job, 0), "warning: ", 9) &&
		      strstr(tp_job_note(job, 0), "separate trees"), "%s", tp_job_note(job, 0));
	tp_job_destroy(job);
	tp_conf_destroy(c);
	/* a config without warnings has none */
	c = str_ok("Network=mesh Dims=4\nNodeName=n[0-3] CoordOrder=x-major\n");
	ck_assert_int_eq(tp_conf_nwarnings(c), 0);
	ck_assert_ptr_null(tp_conf_warning(c, 0));
	tp_conf_destroy(c);
	/* what Slurm refuses, refused with the topology file's line */
	unlink(topo);
	free(topo);
	topo = write_file(dir, "topology.conf",
			  "SwitchName=a Nodes=n[0-1]\nSwitchName=b Nodes=n2 Switches=a\n");
	ck_assert_int_eq(tp_conf_load(cfg, &c, &err), TP_EINVAL);
	tp_assert_err_has(&err, "/topology.conf:2: SwitchName=b has both Nodes= and Switches=");
	unlink(topo);
	unlink(cfg);
	rmdir(dir);
	free(topo);
	free(cfg);
}
END_TEST

/* Nodes placed by a CoordFile= get their models from a later NodeName=
 * line; check-config reads every model and names the config line. */
START_TEST(coord_file_models_and_check)
{
	char dir[] = "/tmp/tp-models-XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char *coords = write_file(dir, "site.coords", "gpu1 0\ngpu2 1\ncpu1 2\n");
	char text[2048];
	snprintf(text, sizeof text,
		 "Network=mesh Dims=4 CoordFile=site.coords\n"
		 "NodeName=gpu[1-2] NodeTopology=%s/nodes/nvl4.xml \\\n"
		 "  GpuLinks=%s/nodes/nvl4.links\n"
		 "NodeName=cpu1 NodeTopology=nodes/missing.xml\n",
		 TP_SOURCE_DIR "/conf/examples", TP_SOURCE_DIR "/conf/examples");
	char *cfg = write_file(dir, "tp.conf", text);
	tp_conf *c = load_ok(cfg);     /* loading reads no model */
	const tp_machine *m = tp_conf_machine(c);
	int32_t g2 = tp_machine_find_node(m, "gpu2"), c1 = tp_machine_find_node(m, "cpu1");
	ck_assert(strstr(tp_conf_node_topology(c, g2), "nodes/nvl4.xml"));
	ck_assert(strstr(tp_conf_node_gpu_links(c, g2), "nodes/nvl4.links"));
	ck_assert(strstr(tp_conf_node_topology(c, c1), "/nodes/missing.xml"));
	ck_assert_int_eq(tp_conf_nmodels(c), 2);
	tp_error err;
	ck_assert_msg(tp_conf_check_model(c, 0, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(tp_conf_check_model(c, 1, &err), TP_ENOENT);
	ck_assert_msg(strstr(err.msg, "/tp.conf:4: NodeTopology=") &&
		      strstr(err.msg, "/nodes/missing.xml: cannot read") &&
		      !strstr(strstr(err.msg, "missing.xml") + 1, "missing.xml"), "%s", err.msg);
	ck_assert_int_eq(tp_conf_check_model(c, 2, &err), TP_EINVAL);
	tp_conf_destroy(c);
	/* a bad GpuLinks= file: the line of GpuLinks= (a continuation) */
	snprintf(text, sizeof text,
		 "Network=mesh Dims=4 CoordFile=site.coords\n"
		 "NodeName=gpu[1-2] NodeTopology=%s/nodes/nvl4.xml \\\n"
		 "  GpuLinks=%s/nodes/nvl4.xml\n", TP_SOURCE_DIR "/conf/examples",
		 TP_SOURCE_DIR "/conf/examples");
	unlink(cfg);
	free(cfg);
	cfg = write_file(dir, "tp.conf", text);
	c = load_ok(cfg);
	ck_assert_int_lt(tp_conf_check_model(c, 0, &err), 0);
	ck_assert_msg(strstr(err.msg, "/tp.conf:3: GpuLinks="), "%s", err.msg);
	tp_conf_destroy(c);
	/* a model line before the CoordFile= names a node not placed yet */
	unlink(cfg);
	free(cfg);
	cfg = write_file(dir, "tp.conf", "Network=mesh Dims=4\nNodeName=gpu1 NodeTopology=x.xml\n"
			 "CoordFile=site.coords\n");
	ck_assert_int_eq(tp_conf_load(cfg, &c, &err), TP_EINVAL);
	ck_assert_msg(strstr(err.msg, "/tp.conf:2: NodeName=gpu1: node 'gpu1' is not placed"),
		      "%s", err.msg);
	unlink(cfg);
	unlink(coords);
	rmdir(dir);
	free(cfg);
	free(coords);
}
END_TEST

START_TEST(hostlist_format)
{
	const char *names[] = { "n10", "n09", "n1", "n2", "n3", "login", "n01", "x",
				"a5b", "n2", "n5" };
	char *out = NULL;
	ck_assert_int_eq(tp__hostlist_format(names, 11, &out), 0);
	ck_assert_str_eq(out, "a5b,login,n[1-3,5],n[01,09-10],x");
	/* it expands to exactly the names given */
	struct tp__hostlist *hl;
	int64_t count;
	ck_assert_int_eq(tp__hostlist_parse(out, "t", 100, "t", &hl, &count, NULL), 0);
	ck_assert_int_eq(count, 10);
	char h[TP__HOSTNAME_MAX];
	int found = 0;
	while (tp__hostlist_next(hl, h))
		for (int i = 0; i < 11; i++)
			if (!strcmp(h, names[i])) {
				found++;
				break;
			}
	ck_assert_int_eq(found, 10);
	tp__hostlist_free(hl);
	free(out);
	/* unpadded numbers of any length share a bracket; padded ones take
	 * the unpadded of their width along */
	const char *more[] = { "c10", "c9", "c11", "c100", "d001", "d100", "d099", "d5",
			       "e01234567890123456789" };
	ck_assert_int_eq(tp__hostlist_format(more, 9, &out), 0);
	ck_assert_str_eq(out, "c[9-11,100],d5,d[001,099-100],e01234567890123456789");
	free(out);
	ck_assert_int_eq(tp__hostlist_format(names, 0, &out), 0);
	ck_assert_str_eq(out, "");
	free(out);
}
END_TEST

/* check-config --slurm-conf: the nodes of slurm.conf against the config's. */
START_TEST(compare_with_slurm_conf)
{
	char dir[] = "/tmp/tp-slurmconf-XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char *sc = write_file(dir, "slurm.conf",
			      "ClusterName=t\n"
			      "NodeName=DEFAULT CPUs=8 # defaults name no node\n"
			      "# NodeName=commented[1-9]\n"
			      "NodeName=node[1-4] CPUs=8 State=UNKNOWN\n"
			      "nodename=node5 \\\n"
			      "   CPUs=4\n"
			      "Include nodes.conf\n"
			      "PartitionName=all Nodes=ALL Default=YES\n");
	char *inc = write_file(dir, "nodes.conf", "NodeName=\"gpu[01-02]\" Gres=gpu:4\n");
	tp_conf *c = str_ok("Network=mesh Dims=8\nNodeName=node[1-6] CoordOrder=x-major\n");
	tp_conf_slurm_diff d;
	tp_error err;
	ck_assert_msg(tp_conf_compare_slurm(c, sc, &d, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(d.nslurm, 7);
	ck_assert_int_eq(d.nmissing, 2);
	ck_assert_str_eq(d.missing, "gpu[01-02]");
	ck_assert_int_eq(d.nextra, 1);
	ck_assert_str_eq(d.extra, "node6");
	tp_conf_slurm_diff_free(&d);
	ck_assert_ptr_null(d.missing);

	/* errors name the file and line */
	unlink(inc);
	ck_assert_int_eq(tp_conf_compare_slurm(c, sc, &d, &err), TP_ENOENT);
	ck_assert_msg(strstr(err.msg, "/slurm.conf:7: Include nodes.conf: ") &&
		      strstr(err.msg, "No such file"), "%s", err.msg);
	free(inc);
	inc = write_file(dir, "nodes.conf", "\nNodeName=gpu[01-\n");
	ck_assert_int_eq(tp_conf_compare_slurm(c, sc, &d, &err), TP_EINVAL);
	ck_assert_msg(strstr(err.msg, "/nodes.conf:2: NodeName=gpu[01-: malformed hostlist"),
		      "%s", err.msg);
	free(inc);
	inc = write_file(dir, "nodes.conf", "Include nodes.conf\n");
	ck_assert_int_eq(tp_conf_compare_slurm(c, sc, &d, &err), TP_EINVAL);
	ck_assert_msg(strstr(err.msg, "more than 8 levels of Include"), "%s", err.msg);
	ck_assert_int_eq(tp_conf_compare_slurm(c, "/nonexistent/slurm.conf", &d, &err), TP_ENOENT);
	free(inc);
	inc = write_file(dir, "nodes.conf", "# none\n");
	unlink(sc);
	free(sc);
	sc = write_file(dir, "slurm.conf", "ClusterName=t\n");
	ck_assert_int_eq(tp_conf_compare_slurm(c, sc, &d, &err), TP_EINVAL);
	tp_assert_err_has(&err, "no NodeName= lines");
	tp_conf_destroy(c);
	unlink(sc);
	unlink(inc);
	rmdir(dir);
	free(sc);
	free(inc);
}
END_TEST

/* The kinds of network topoplace.conf knows (conf/kinds.c): each is named
 * and says what it builds; Network= reaches those it can build; a key
 * belongs to one kind only, its line kept inside the kind's state, and no
 * kind takes a key conf.c reads itself. */
START_TEST(kinds_table)
{
	static const char *const common[] = {
		"Network", "Dims", "Wrap", "NodesPerRouter", "LinkBandwidth",
		"Distance", "TopologyFile", "LevelCost", "LevelBandwidth",
		"DefaultPolicy", "DefaultMetric", "TimeBudgetMs", "MaxThreads",
		"CoordFile",
		"SwitchFile", "NodeName", "CoordOrder", "Offset", "Coords",
		"NodeTopology", "GpuLinks", "GpuLinkBandwidth",
	};
	int n = 0, selectable = 0;
	for (; tp__conf_kinds[n]; n++) {
		const struct tp__conf_kind *k = tp__conf_kinds[n];
		ck_assert_msg(k->name && *k->name, "kind %d has no name", n);
		ck_assert_msg(k->machines && k->machines[0], "%s builds no machine", k->name);
		ck_assert_msg(k->describe, "%s: no describe", k->name);
		ck_assert_msg(!k->selectable || k->build, "%s: Network=%s builds nothing",
			      k->name, k->name);
		ck_assert_msg(!k->place_names == !k->names_place, "%s: place_names", k->name);
		ck_assert_msg(!k->nodes_sit == !k->unplaced, "%s: nodes_sit", k->name);
		ck_assert_msg(k->nkeys == 0 || (k->keys && k->state_size >= sizeof(int)),
			      "%s: keys without a state", k->name);
		selectable += k->selectable;
		for (int i = 0; i < n; i++)
			ck_assert_msg(strcasecmp(k->name, tp__conf_kinds[i]->name),
				      "two kinds named %s", k->name);
		for (int j = 0; j < k->nkeys; j++) {
			const struct tp__conf_key *key = &k->keys[j];
			ck_assert_msg(key->name && !key->set != !key->rule, "%s: key %d",
				      k->name, j);
			ck_assert_msg(key->set || key->val_at + (key->rule == TP__CONF_INT
								 ? sizeof(int) : sizeof(double))
						  <= k->state_size,
				      "%s: %s= value outside the state", k->name, key->name);
			ck_assert_msg(key->line_at + sizeof(int) <= k->state_size,
				      "%s: %s= line outside the state", k->name, key->name);
			for (size_t c = 0; c < sizeof common / sizeof *common; c++)
				ck_assert_msg(strcasecmp(key->name, common[c]),
					      "%s= is conf.c's and %s's", key->name, k->name);
			for (int i = 0; i <= n; i++)
				for (int l = 0; l < (i < n ? tp__conf_kinds[i]->nkeys : j); l++)
					ck_assert_msg(strcasecmp(key->name,
								 tp__conf_kinds[i]->keys[l].name),
						      "%s= is %s's and %s's", key->name,
						      tp__conf_kinds[i]->name, k->name);
		}
	}
	ck_assert_int_ge(n, 5);
	ck_assert_int_ge(selectable, 5);
	/* every machine a kind lists is described by that kind */
	for (int i = 0; i < n; i++)
		for (const struct tp_net_ops *const *t = tp__conf_kinds[i]->machines; *t; t++)
			for (int j = 0; j < i; j++)
				for (const struct tp_net_ops *const *u = tp__conf_kinds[j]->machines;
				     *u; u++)
					ck_assert_ptr_ne(*t, *u);
	tp_machine *m = NULL;
	ck_assert_int_eq(tp_machine_create(&m, 2, (int[]){ 2, 2 }, (bool[]){ true, true },
					   NULL), TP_OK);
	ck_assert_ptr_eq(tp__conf_kind_of(m), &tp__conf_torus);
	tp_machine_destroy(m);
	ck_assert_int_eq(tp_machine_create(&m, 2, (int[]){ 2, 2 }, NULL, NULL), TP_OK);
	ck_assert_ptr_eq(tp__conf_kind_of(m), &tp__conf_mesh);
	tp_machine_destroy(m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("conf");
	TCase *tc = tcase_create("conf");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, example_torus3d);
	tcase_add_test(tc, example_mesh2d);
	tcase_add_test(tc, example_gemini);
	tcase_add_test(tc, example_explicit);
	tcase_add_test(tc, example_lab4);
	tcase_add_test(tc, syntax_forms);
	tcase_add_test(tc, wrap_defaults);
	tcase_add_test(tc, coord_order_offset);
	tcase_add_test(tc, defaults_and_settings);
	tcase_add_loop_test(tc, bad_config, 0, (int)(sizeof bad_configs / sizeof *bad_configs));
	tcase_add_test(tc, bad_files);
	tcase_add_test(tc, coord_file_relative_to_conf);
	tcase_add_test(tc, coord_file_runs);
	tcase_add_test(tc, large_configs);
	tcase_add_test(tc, node_topology_per_group);
	tcase_add_test(tc, forest_with_warning);
	tcase_add_test(tc, coord_file_models_and_check);
	tcase_add_test(tc, hostlist_format);
	tcase_add_test(tc, numbered_runs);
	tcase_add_test(tc, run_names_on_request);
	tcase_add_test(tc, compare_with_slurm_conf);
	tcase_add_test(tc, kinds_table);
	suite_add_tcase(s, tc);
	return tp_test_run(s);
}
