/* Unit tests for core/src/map/metrics.c: hand-computed cases on tiny machines,
 * brute-force cross-checks, validation errors, scoring, and parity with
 * Scotch's gmtst (CommExpan / CommDilat). */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/names_internal.h"
#include "testutil.h"
#include "input/alloc_internal.h"
#include "map/metrics_internal.h"
#include "net/machine_internal.h"
#include "pattern/pattern_internal.h"

/* ---- helpers ---- */

static tp_machine *mk_machine(int ndims, const int *dims, const bool *wrap,
			      int npr)
{
	tp_error err = {0};
	tp_machine *m = NULL;
	ck_assert_int_eq(tp_machine_create(&m, ndims, dims, wrap, &err), 0);
	if (npr > 1)
		ck_assert_int_eq(tp_machine_set_nodes_per_router(m, npr, &err), 0);
	return m;
}

/* npr nodes on every router, named n<router>_<k>; node index =
 * router * npr + k. */
static tp_machine *mk_full_machine(int ndims, const int *dims,
				   const bool *wrap, int npr)
{
	tp_machine *m = mk_machine(ndims, dims, wrap, npr);
	int64_t nr = 1;
	for (int d = 0; d < ndims; d++)
		nr *= dims[d];
	tp_error err = {0};
	for (int64_t r = 0; r < nr; r++) {
		int c[TP_MAX_DIMS];
		int64_t x = r;
		for (int d = 0; d < ndims; d++) {
			c[d] = (int)(x % dims[d]);
			x /= dims[d];
		}
		for (int k = 0; k < npr; k++) {
			char name[48];
			snprintf(name, sizeof name, "n%lld_%d", (long long)r, k);
			ck_assert_int_eq(tp_machine_add_node(m, name, c, &err),
					 (int)(r * npr + k));
		}
	}
	return m;
}

static tp_alloc *mk_alloc(const tp_machine *m, const int32_t *nodes,
			  int32_t n, int slots)
{
	tp_error err = {0};
	tp_alloc *a = NULL;
	ck_assert_msg(tp_alloc_from_nodes(m, nodes, n, slots, &a, &err) == 0,
		      "%s", err.msg);
	return a;
}

static tp_graph *mk_graph(int32_t ntasks, int64_t ne, const int32_t *u,
			  const int32_t *v, const double *w)
{
	tp_error err = {0};
	tp_graph *g = NULL;
	ck_assert_msg(tp_graph_from_edges(&g, ntasks, ne, u, v, w, "test",
					  &err) == 0, "%s", err.msg);
	return g;
}

static tp_graph *mk_stencil(const char *spec)
{
	tp_error err = {0};
	tp_graph *g = NULL;
	ck_assert_msg(tp_graph_from_stencil(&g, spec, 0, &err) == 0, "%s",
		      err.msg);
	return g;
}

static void assert_close(double got, double want, const char *what)
{
	double tol = 1e-12 * (fabs(want) > 1.0 ? fabs(want) : 1.0);
	ck_assert_msg(fabs(got - want) <= tol, "%s: got %.15g, want %.15g",
		      what, got, want);
}

static uint64_t splitmix64(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* First k of a seeded Fisher-Yates shuffle of 0..n-1 (k <= n). */
static int32_t *random_subset(int32_t n, int32_t k, uint64_t seed)
{
	int32_t *p = malloc((size_t)n * sizeof *p);
	ck_assert_ptr_nonnull(p);
	for (int32_t i = 0; i < n; i++)
		p[i] = i;
	for (int32_t i = 0; i < k; i++) {
		int32_t j = i + (int32_t)(splitmix64(&seed) % (uint64_t)(n - i));
		int32_t t = p[i];
		p[i] = p[j];
		p[j] = t;
	}
	return p;
}

/* ---- names ---- */

START_TEST(test_parse_and_name)
{
	tp_error err = {0};
	enum tp_metric_kind k = TP_METRIC_CONGESTION;
	ck_assert_int_eq(tp_metric_parse("hop-bytes", &k, &err), 0);
	ck_assert_int_eq(k, TP_METRIC_HOP_BYTES);
	k = TP_METRIC_CONGESTION;
	ck_assert_int_eq(tp_metric_parse("hopbytes", &k, &err), 0);
	ck_assert_int_eq(k, TP_METRIC_HOP_BYTES);
	ck_assert_int_eq(tp_metric_parse("Congestion", &k, &err), 0);
	ck_assert_int_eq(k, TP_METRIC_CONGESTION);

	ck_assert_int_eq(tp_metric_parse("latency", &k, &err), TP_EINVAL);
	ck_assert_int_eq(err.code, TP_EINVAL);
	tp_assert_err_has(&err, "latency");
	tp_assert_err_has(&err, "hop-bytes");
	tp_assert_err_has(&err, "congestion");
	ck_assert_ptr_null(strchr(err.msg, '\n'));
	ck_assert_int_eq(tp_metric_parse("", &k, &err), TP_EINVAL);
	ck_assert_int_eq(tp_metric_parse(NULL, &k, &err), TP_EINVAL);
	ck_assert_int_eq(tp_metric_parse("hop-bytes", &k, NULL), 0);

	ck_assert_str_eq(tp_metric_name(TP_METRIC_HOP_BYTES), "hop-bytes");
	ck_assert_str_eq(tp_metric_name(TP_METRIC_CONGESTION), "congestion");
	/* name -> parse round trip */
	ck_assert_int_eq(tp_metric_parse(tp_metric_name(TP_METRIC_CONGESTION),
					 &k, &err), 0);
	ck_assert_int_eq(k, TP_METRIC_CONGESTION);
}
END_TEST

/* ---- 4-node ring (1-D torus): every metric by hand ---- */

START_TEST(test_ring_identity)
{
	int dims[1] = {4};
	bool wrap[1] = {true};
	tp_machine *m = mk_full_machine(1, dims, wrap, 1);
	int32_t nodes[4] = {0, 1, 2, 3};
	tp_alloc *a = mk_alloc(m, nodes, 4, 1);
	/* edges: 0-1 (1 byte, 1 hop), 0-2 (5, 2 hops, tie), 1-3 (7, 2, tie) */
	int32_t u[3] = {0, 0, 1}, v[3] = {1, 2, 3};
	double w[3] = {1, 5, 7};
	tp_graph *g = mk_graph(4, 3, u, v, w);
	int32_t map[4] = {0, 1, 2, 3};

	tp_metrics mt;
	tp_error err = {0};
	ck_assert_int_eq(tp_metrics_compute(g, a, map, true, &mt, &err), 0);
	ck_assert_int_eq(mt.nedges, 3);
	assert_close(mt.total_bytes, 13, "total");
	assert_close(mt.hop_bytes, 25, "hop_bytes");
	assert_close(mt.avg_hop_bytes, 25.0 / 13, "avg_hop_bytes");
	assert_close(mt.avg_dilation, 5.0 / 3, "avg_dilation");
	ck_assert_int_eq(mt.max_dilation, 2);
	/* Both directions of every edge, on directed links (cable c joins
	 * x_c and x_c+1; +c runs up, -c down).  Ties go the positive way:
	 *   0->1: +0        1->0: -0              (1 B each)
	 *   0->2: +0 +1     2->0: +2 +3 (tie: up) (5 B each)
	 *   1->3: +1 +2     3->1: +3 +0           (7 B each)
	 * Loads: +0 13 B / 3 messages, +1 +2 +3 12 B / 2, -0 1 B / 1. */
	assert_close(mt.max_congestion_bytes, 13, "max_cong_bytes");
	ck_assert_int_eq(mt.max_congestion_msgs, 3);
	assert_close(mt.frac_intra_node, 0, "intra node");
	assert_close(mt.frac_intra_router, 0, "intra router");
	assert_close(tp_metrics_hop_bytes(g, a, map), 25, "fast hop_bytes");
	ck_assert_int_eq(tp_mapping_validate(g, a, map, &err), 0);

	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_machine_destroy(m);
}
END_TEST

/* Each direction of an edge takes its own route (here both ways of a tie
 * go the positive way round), and the map indexes the allocation (here in
 * reverse machine order). */
START_TEST(test_ring_route_direction)
{
	int dims[1] = {4};
	bool wrap[1] = {true};
	tp_machine *m = mk_full_machine(1, dims, wrap, 1);
	int32_t nodes[4] = {3, 2, 1, 0};       /* alloc index i = x (3 - i) */
	tp_alloc *a = mk_alloc(m, nodes, 4, 2);
	/* A = {0,1} (5 B): task 0 on x2, task 1 on x0, a tie either way:
	 * x2 -> x0 runs +2 +3, x0 -> x2 runs +0 +1.  B = {2,3} (7 B): x3 -> x0
	 * runs +3, x0 -> x3 runs -3.  So +3 carries 12 B in 2 messages; one
	 * undirected link per cable would have put 5 + 5 + 7 + 7 on it. */
	int32_t u[2] = {0, 2}, v[2] = {1, 3};
	double w[2] = {5, 7};
	tp_graph *g = mk_graph(4, 2, u, v, w);
	int32_t map[4] = {1, 3, 0, 3};         /* x2, x0, x3, x0 */

	tp_metrics mt;
	tp_error err = {0};
	ck_assert_int_eq(tp_metrics_compute(g, a, map, true, &mt, &err), 0);
	assert_close(mt.max_congestion_bytes, 12, "max_cong_bytes");
	ck_assert_int_eq(mt.max_congestion_msgs, 2);
	assert_close(mt.hop_bytes, 17, "hop_bytes");
	assert_close(mt.avg_hop_bytes, 17.0 / 12, "avg_hop_bytes");
	assert_close(mt.avg_dilation, 1.5, "avg_dilation");
	ck_assert_int_eq(mt.max_dilation, 2);

	tp_congestion_ws *ws = NULL;
	ck_assert_int_eq(tp_congestion_ws_create(&ws, m, &err), 0);
	int64_t msgs = 0;
	assert_close(tp_metrics_max_congestion(g, a, map, ws, &msgs), 12,
		     "ws max_cong");
	ck_assert_int_eq(msgs, 2);
	tp_congestion_ws_destroy(ws);

	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_machine_destroy(m);
}
END_TEST

/* ---- 3x3 mesh, two nodes per router ---- */

/* node index = 2 * (x + 3y) + k */
#define MESH_NODE(x, y, k) (2 * ((x) + 3 * (y)) + (k))

START_TEST(test_mesh_two_per_router)
{
	int dims[2] = {3, 3};
	bool wrap[2] = {false, false};
	tp_machine *m = mk_full_machine(2, dims, wrap, 2);
	/* A=(0,0)a B=(0,0)b C=(2,0)a D=(1,2)a E=(2,2)a */
	int32_t nodes[5] = {MESH_NODE(0, 0, 0), MESH_NODE(0, 0, 1),
			    MESH_NODE(2, 0, 0), MESH_NODE(1, 2, 0),
			    MESH_NODE(2, 2, 0)};
	tp_alloc *a = mk_alloc(m, nodes, 5, 2);
	enum { A, B, C, D, E };
	int32_t map[8] = {A, A, B, C, D, E, E, B};
	/*  edge      bytes hops  routes (cable = router*2 + dim; +c up, -c
	 *                        down; both directions of every edge)
	 *  0-1 A-A    10    0    intra node
	 *  0-2 A-B    20    0    intra router
	 *  2-3 B-C     4    2    B->C +0 +2          C->B -2 -0
	 *  3-4 C-D     3    3    C->D -2, y: +3 +9   D->C +14, y: -11 -5
	 *  4-5 D-E    10    1    D->E +14            E->D -14
	 *  5-6 E-E     8    0    intra node
	 *  1-7 A-B     5    0    intra router
	 *  3-7 C-B     2    2    C->B -2 -0          B->C +0 +2
	 *  0-4 A-D     1    3    A->D +0, y: +3 +9   D->A -12, y: -7 -1
	 * loads: +0 7 B/3, +2 6/2, -2 9/3, -0 6/2, +3 +9 4/2, +14 13/2,
	 * -14 10/1, -11 -5 3/1, -12 -7 -1 1/1 */
	int32_t u[9] = {0, 0, 2, 3, 4, 5, 1, 3, 0};
	int32_t v[9] = {1, 2, 3, 4, 5, 6, 7, 7, 4};
	double w[9] = {10, 20, 4, 3, 10, 8, 5, 2, 1};
	tp_graph *g = mk_graph(8, 9, u, v, w);

	tp_metrics mt;
	tp_error err = {0};
	ck_assert_int_eq(tp_mapping_validate(g, a, map, &err), 0);
	ck_assert_int_eq(tp_metrics_compute(g, a, map, true, &mt, &err), 0);
	ck_assert_int_eq(mt.nedges, 9);
	assert_close(mt.total_bytes, 63, "total");
	assert_close(mt.hop_bytes, 34, "hop_bytes");
	assert_close(mt.avg_hop_bytes, 34.0 / 63, "avg_hop_bytes");
	assert_close(mt.avg_dilation, 11.0 / 9, "avg_dilation");
	ck_assert_int_eq(mt.max_dilation, 3);
	assert_close(mt.max_congestion_bytes, 13, "max_cong_bytes");
	ck_assert_int_eq(mt.max_congestion_msgs, 3);
	assert_close(mt.frac_intra_node, 18.0 / 63, "intra node");
	assert_close(mt.frac_intra_router, 43.0 / 63, "intra router");

	/* without congestion: same numbers, congestion left zero */
	tp_metrics m2;
	ck_assert_int_eq(tp_metrics_compute(g, a, map, false, &m2, &err), 0);
	assert_close(m2.hop_bytes, 34, "hop_bytes (no congestion)");
	assert_close(m2.max_congestion_bytes, 0, "congestion skipped");
	ck_assert_int_eq(m2.max_congestion_msgs, 0);

	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_machine_destroy(m);
}
END_TEST

START_TEST(test_no_edges)
{
	int dims[2] = {3, 3};
	bool wrap[2] = {true, false};
	tp_machine *m = mk_full_machine(2, dims, wrap, 1);
	int32_t nodes[2] = {0, 8};
	tp_alloc *a = mk_alloc(m, nodes, 2, 2);
	int32_t dummy_i[1] = {0};
	double dummy_w[1] = {0};
	tp_graph *g = mk_graph(3, 0, dummy_i, dummy_i, dummy_w);
	int32_t map[3] = {0, 1, 1};
	tp_metrics mt;
	tp_error err = {0};
	ck_assert_int_eq(tp_metrics_compute(g, a, map, true, &mt, &err), 0);
	ck_assert_int_eq(mt.nedges, 0);
	ck_assert(mt.total_bytes == 0 && mt.hop_bytes == 0);
	ck_assert(mt.avg_hop_bytes == 0 && mt.avg_dilation == 0);
	ck_assert(mt.frac_intra_node == 0 && mt.frac_intra_router == 0);
	ck_assert(mt.max_congestion_bytes == 0 && mt.max_congestion_msgs == 0);
	ck_assert_int_eq(mt.max_dilation, 0);
	ck_assert(tp_metrics_hop_bytes(g, a, map) == 0);
	ck_assert(tp_metrics_score(g, a, map, TP_METRIC_CONGESTION, NULL) == 0);
	tp_graph_destroy(g);

	/* zero-byte edges count as edges but carry no bytes */
	int32_t u[1] = {0}, v[1] = {2};
	double w[1] = {0};
	g = mk_graph(3, 1, u, v, w);
	ck_assert_int_eq(tp_metrics_compute(g, a, map, true, &mt, &err), 0);
	ck_assert_int_eq(mt.nedges, 1);
	ck_assert(mt.total_bytes == 0 && mt.avg_hop_bytes == 0);
	assert_close(mt.avg_dilation, 3, "dilation of a zero-byte edge");
	ck_assert_int_eq(mt.max_dilation, 3);
	ck_assert_int_eq(mt.max_congestion_msgs, 1);
	ck_assert(mt.max_congestion_bytes == 0);
	ck_assert(!isnan(mt.frac_intra_node) && !isnan(mt.frac_intra_router));

	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_machine_destroy(m);
}
END_TEST

/* ---- validation ---- */

START_TEST(test_validate_errors)
{
	int dims[1] = {4};
	bool wrap[1] = {false};
	tp_machine *m = mk_full_machine(1, dims, wrap, 1);
	int32_t nodes[2] = {2, 3};
	tp_alloc *a = mk_alloc(m, nodes, 2, 2);
	tp_error err = {0};
	ck_assert_int_eq(tp_alloc_set_slots(a, 1, 1, &err), 0);
	int32_t u[1] = {0}, v[1] = {3};
	double w[1] = {1};
	tp_graph *g = mk_graph(4, 1, u, v, w);

	int32_t over[4] = {0, 1, 0, 1};     /* node n3_0 (index 1) has 1 slot */
	ck_assert_int_eq(tp_mapping_validate(g, a, over, &err), TP_EINVAL);
	ck_assert_int_eq(err.code, TP_EINVAL);
	tp_assert_err_has(&err, "task 3");
	tp_assert_err_has(&err, "n3_0");
	tp_assert_err_has(&err, "1 slot");

	int32_t full[4] = {0, 0, 1, 0};     /* node n2_0 has 2 slots */
	ck_assert_int_eq(tp_mapping_validate(g, a, full, &err), TP_EINVAL);
	tp_assert_err_has(&err, "task 3");
	tp_assert_err_has(&err, "n2_0");

	int32_t range[4] = {0, 2, 1, 0};
	ck_assert_int_eq(tp_mapping_validate(g, a, range, &err), TP_EINVAL);
	tp_assert_err_has(&err, "task 1");
	tp_assert_err_has(&err, "0..1");
	tp_metrics mt;
	ck_assert_int_eq(tp_metrics_compute(g, a, range, false, &mt, &err),
			 TP_EINVAL);
	tp_assert_err_has(&err, "task 1");

	int32_t neg[4] = {0, 1, -1, 0};
	ck_assert_int_eq(tp_mapping_validate(g, a, neg, &err), TP_EINVAL);
	tp_assert_err_has(&err, "task 2");
	tp_assert_err_has(&err, "-1");
	ck_assert_ptr_null(strchr(err.msg, '\n'));

	int32_t ok[4] = {0, 1, 0, 0};
	ck_assert_int_eq(tp_alloc_set_slots(a, 0, 3, &err), 0);
	tp_error_clear(&err);
	ck_assert_int_eq(tp_mapping_validate(g, a, ok, &err), 0);
	ck_assert_int_eq(err.code, 0);
	ck_assert_int_eq(tp_mapping_validate(g, a, ok, NULL), 0);
	ck_assert_int_eq(tp_mapping_validate(g, a, over, NULL), TP_EINVAL);
	ck_assert_int_eq(tp_mapping_validate(NULL, a, ok, &err), TP_EINVAL);
	ck_assert_int_eq(tp_mapping_validate(g, a, NULL, &err), TP_EINVAL);

	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_machine_destroy(m);
}
END_TEST

/* ---- scoring and workspace reuse (8-node ring) ---- */

START_TEST(test_score_and_workspace)
{
	int dims[1] = {8};
	bool wrap[1] = {true};
	tp_machine *m = mk_full_machine(1, dims, wrap, 1);
	int32_t nodes[8] = {0, 1, 2, 3, 4, 5, 6, 7};
	tp_alloc *a = mk_alloc(m, nodes, 8, 1);
	int32_t u[2] = {0, 2}, v[2] = {1, 3};
	double w[2] = {1, 1};
	tp_graph *g = mk_graph(4, 2, u, v, w);
	/* Both directions of each edge; loads per direction of a cable.
	 * P: 0-1 on x0<->x2 (cables 0,1), 2-3 on x1<->x3 (1,2): C 2, H 4
	 * Q: 0-1 on x0->x2, 2-3 on x3->x6 (3,4,5):        C 1, H 5
	 * R: 0-1 on x0->x1, 2-3 on x3->x6:                  C 1, H 4
	 * S: 0-1 on x0->x1, 2-3 on x4->x6:                  C 1, H 3 */
	int32_t P[4] = {0, 2, 1, 3}, Q[4] = {0, 2, 3, 6};
	int32_t R[4] = {0, 1, 3, 6}, S[4] = {0, 1, 4, 6};
	tp_error err = {0};
	tp_congestion_ws *ws = NULL;
	ck_assert_int_eq(tp_congestion_ws_create(&ws, m, &err), 0);

	int64_t msgs;
	/* repeated use: every call must start from a clean workspace */
	for (int rep = 0; rep < 3; rep++) {
		assert_close(tp_metrics_max_congestion(g, a, P, ws, &msgs), 2, "P");
		ck_assert_int_eq(msgs, 2);
		assert_close(tp_metrics_max_congestion(g, a, Q, ws, &msgs), 1, "Q");
		ck_assert_int_eq(msgs, 1);
		assert_close(tp_metrics_max_congestion(g, a, S, ws, NULL), 1, "S");
	}

	double hp = tp_metrics_score(g, a, P, TP_METRIC_HOP_BYTES, NULL);
	double hq = tp_metrics_score(g, a, Q, TP_METRIC_HOP_BYTES, ws);
	ck_assert(hp == tp_metrics_hop_bytes(g, a, P));
	assert_close(hp, 4, "hop score P");
	assert_close(hq, 5, "hop score Q");

	double cp = tp_metrics_score(g, a, P, TP_METRIC_CONGESTION, ws);
	double cq = tp_metrics_score(g, a, Q, TP_METRIC_CONGESTION, ws);
	double cr = tp_metrics_score(g, a, R, TP_METRIC_CONGESTION, ws);
	double cs = tp_metrics_score(g, a, S, TP_METRIC_CONGESTION, ws);
	ck_assert_msg(cq < cp, "lower congestion wins despite more hop-bytes");
	ck_assert_msg(cr < cq && cs < cr, "equal congestion: hop-bytes decide");
	ck_assert(cp >= 2 && cp < 2 + 1e-3);
	ck_assert(cs >= 1 && cs < 1 + 1e-3);
	/* no workspace: same result (temporary one) */
	ck_assert(tp_metrics_score(g, a, R, TP_METRIC_CONGESTION, NULL) == cr);
	/* deterministic */
	ck_assert(tp_metrics_score(g, a, R, TP_METRIC_CONGESTION, ws) == cr);

	/* a workspace built for another machine is refused */
	tp_machine *m2 = mk_full_machine(1, dims, wrap, 1);
	tp_congestion_ws *ws2 = NULL;
	ck_assert_int_eq(tp_congestion_ws_create(&ws2, m2, &err), 0);
	ck_assert(tp_metrics_max_congestion(g, a, P, ws2, &msgs) < 0);
	ck_assert_int_eq(msgs, -1);
	ck_assert(isinf(tp_metrics_score(g, a, P, TP_METRIC_CONGESTION, ws2)));
	ck_assert(isinf(tp_metrics_score(g, a, P, (enum tp_metric_kind)7, ws)));
	tp_congestion_ws_destroy(ws2);
	tp_machine_destroy(m2);
	tp_congestion_ws_destroy(NULL);
	ck_assert_int_eq(tp_congestion_ws_create(&ws2, NULL, &err), TP_EINVAL);

	tp_congestion_ws_destroy(ws);
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_machine_destroy(m);
}
END_TEST

/* ---- brute-force cross-check on random graphs, 1-D to 4-D ---- */

static void brute_check(int ndims, const int *dims, const bool *wrap,
			int npr, uint64_t seed)
{
	tp_machine *m = mk_full_machine(ndims, dims, wrap, npr);
	int32_t nn = tp_machine_node_count(m);
	int32_t na = nn / 2 > 1 ? nn / 2 : 1;
	int32_t *nodes = random_subset(nn, na, seed);
	tp_alloc *a = mk_alloc(m, nodes, na, 3);
	int32_t nt = 3 * na;
	int64_t ne = 4 * (int64_t)nt;
	int32_t *u = malloc((size_t)ne * sizeof *u);
	int32_t *v = malloc((size_t)ne * sizeof *v);
	double *w = malloc((size_t)ne * sizeof *w);
	int32_t *map = malloc((size_t)nt * sizeof *map);
	int64_t k = 0;
	while (k < ne) {
		u[k] = (int32_t)(splitmix64(&seed) % (uint64_t)nt);
		v[k] = (int32_t)(splitmix64(&seed) % (uint64_t)nt);
		w[k] = (double)(1 + splitmix64(&seed) % 100);
		if (u[k] != v[k])
			k++;
	}
	/* random permutation of the slots */
	int32_t *perm = random_subset(nt, nt, seed ^ 0x55);
	for (int32_t t = 0; t < nt; t++)
		map[t] = perm[t] / 3;
	free(perm);
	tp_graph *g = mk_graph(nt, ne, u, v, w);
	tp_error err = {0};
	ck_assert_int_eq(tp_mapping_validate(g, a, map, &err), 0);

	/* brute force through the public API: every CSR entry t -> s is one
	 * message, routed on the directed links */
	int64_t nl = tp_machine_link_count(m);
	double *load = calloc((size_t)nl, sizeof *load);
	int64_t *cnt = calloc((size_t)nl, sizeof *cnt);
	int64_t route[64];
	double hb2 = 0, tot2 = 0, in_node2 = 0, in_router2 = 0;
	int64_t hops2 = 0;
	int64_t maxh = 0;
	for (int32_t t = 0; t < nt; t++) {
		const int32_t *adj;
		const double *bw;
		int32_t deg = tp_graph_neighbors(g, t, &adj, &bw);
		for (int32_t j = 0; j < deg; j++) {
			int32_t s = adj[j];
			int32_t na_ = tp_alloc_node(a, map[t]);
			int32_t nb_ = tp_alloc_node(a, map[s]);
			int64_t h = tp_machine_distance(m, na_, nb_);
			hb2 += bw[j] * h;     /* counted twice */
			tot2 += bw[j];
			hops2 += h;
			if (h > maxh)
				maxh = h;
			if (map[t] == map[s])
				in_node2 += bw[j];
			if (tp_machine_router_of(m, na_) ==
			    tp_machine_router_of(m, nb_))
				in_router2 += bw[j];
			int len = tp_machine_route(m, na_, nb_, route, 64);
			ck_assert_int_eq(len, h);
			for (int q = 0; q < len; q++) {
				load[route[q]] += bw[j];
				cnt[route[q]]++;
			}
		}
	}
	double maxl = 0;
	int64_t maxc = 0;
	for (int64_t l = 0; l < nl; l++) {
		if (load[l] > maxl)
			maxl = load[l];
		if (cnt[l] > maxc)
			maxc = cnt[l];
	}

	tp_metrics mt;
	ck_assert_int_eq(tp_metrics_compute(g, a, map, true, &mt, &err), 0);
	ck_assert_int_eq(mt.nedges, tp_graph_nedges(g));
	assert_close(mt.total_bytes, tot2 / 2, "total");
	assert_close(mt.hop_bytes, hb2 / 2, "hop_bytes");
	assert_close(tp_metrics_hop_bytes(g, a, map), hb2 / 2, "fast hop_bytes");
	assert_close(mt.avg_dilation, (double)hops2 / 2 / (double)mt.nedges,
		     "avg_dilation");
	ck_assert_int_eq(mt.max_dilation, maxh);
	assert_close(mt.frac_intra_node, in_node2 / tot2, "intra node");
	assert_close(mt.frac_intra_router, in_router2 / tot2, "intra router");
	assert_close(mt.max_congestion_bytes, maxl, "max cong bytes");
	ck_assert_int_eq(mt.max_congestion_msgs, maxc);

	free(load);
	free(cnt);
	free(u);
	free(v);
	free(w);
	free(map);
	free(nodes);
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_machine_destroy(m);
}

/* Messages of one size on a torus or mesh are counted as runs of links
 * (the kind's route_diff, prefix sums along the rings): every link's
 * load and route count against each message routed hop by hop, and the
 * congestion and hop-bytes, on rings that wrap, lines that do not, rings
 * of 1 and 2, even rings (ties go up), two nodes a router, and with one
 * slot a node (each message routed at once) as with two (pairs of nodes
 * gathered first). */
static tp_graph *stored_copy(const tp_graph *g);

static void runs_check_slots(int ndims, const int *dims, const bool *wrap,
			     int npr, int slots, uint64_t seed)
{
	tp_machine *m = mk_full_machine(ndims, dims, wrap, npr);
	int32_t nn = tp_machine_node_count(m);
	int32_t *nodes = random_subset(nn, nn, seed);
	tp_alloc *a = mk_alloc(m, nodes, nn, slots);
	int32_t nt = slots * nn;
	/* a stencil's pairs all carry the same bytes (no weights kept: the
	 * counted pass), its tasks on the slots in a random order */
	char spec[64];
	snprintf(spec, sizeof spec, "%dx2:9pt:periodic=x:bytes=3", (int)nt / 2);
	tp_graph *g = mk_stencil(spec);
	ck_assert_int_eq(tp_graph_ntasks(g), nt);
	int32_t *map = malloc((size_t)nt * sizeof *map);
	int32_t *perm = random_subset(nt, nt, seed ^ 0x77);
	for (int32_t t = 0; t < nt; t++)
		map[t] = perm[t] / slots;
	free(perm);
	int64_t nl = tp_machine_link_count(m);
	double *load = calloc((size_t)nl, sizeof *load), *got = calloc((size_t)nl, sizeof *got);
	int64_t *cnt = calloc((size_t)nl, sizeof *cnt), *gotc = calloc((size_t)nl, sizeof *gotc);
	int64_t route[64];
	double hb = 0;
	for (int32_t t = 0; t < nt; t++) {
		const int32_t *adj;
		const double *bw;
		int32_t deg = tp_graph_neighbors(g, t, &adj, &bw);
		for (int32_t j = 0; j < deg; j++) {
			int len = tp_machine_route(m, tp_alloc_node(a, map[t]),
						   tp_alloc_node(a, map[adj[j]]), route, 64);
			ck_assert_int_ge(len, 0);
			hb += bw[j] * len;
			for (int q = 0; q < len; q++) {
				load[route[q]] += bw[j];
				cnt[route[q]]++;
			}
		}
	}
	tp_error err = {0};
	ck_assert_int_eq(tp_metrics_link_loads(g, a, map, got, gotc, nl, &err), 0);
	double top = 0;
	int64_t topc = 0;
	for (int64_t l = 0; l < nl; l++) {
		ck_assert_msg(got[l] == load[l] && gotc[l] == cnt[l],
			      "%dd, link %lld: %g bytes, %lld routes; want %g, %lld",
			      ndims, (long long)l, got[l], (long long)gotc[l], load[l],
			      (long long)cnt[l]);
		top = load[l] > top ? load[l] : top;
		topc = cnt[l] > topc ? cnt[l] : topc;
	}
	ck_assert(topc > 1);
	tp_metrics mt;
	ck_assert_int_eq(tp_metrics_compute(g, a, map, true, &mt, &err), 0);
	ck_assert(mt.max_congestion_bytes == top);
	ck_assert_int_eq(mt.max_congestion_msgs, topc);
	assert_close(mt.hop_bytes, hb / 2, "hop_bytes");
	/* the congestion score (its hop-bytes too) as the same graph with
	 * stored weights gives it, routed hop by hop */
	tp_graph *gw = stored_copy(g);
	tp_congestion_ws *ws;
	ck_assert_int_eq(tp_congestion_ws_create(&ws, m, NULL), 0);
	ck_assert(tp_metrics_score(g, a, map, TP_METRIC_CONGESTION, ws) ==
		  tp_metrics_score(gw, a, map, TP_METRIC_CONGESTION, ws));
	tp_congestion_ws_destroy(ws);
	tp_graph_destroy(gw);
	free(load);
	free(got);
	free(cnt);
	free(gotc);
	free(map);
	free(nodes);
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_machine_destroy(m);
}

static void runs_check(int ndims, const int *dims, const bool *wrap, int npr,
		       uint64_t seed)
{
	runs_check_slots(ndims, dims, wrap, npr, 2, seed);
	runs_check_slots(ndims, dims, wrap, npr, 1, seed + 100);
}

START_TEST(test_route_runs)
{
	int d1[1] = {8};
	bool yes1[1] = {true}, no1[1] = {false};
	runs_check(1, d1, yes1, 1, 11);
	runs_check(1, d1, no1, 2, 12);
	int d3[3] = {4, 5, 6};
	bool w3[3] = {true, false, true};
	runs_check(3, d3, w3, 2, 13);
	int d3b[3] = {6, 1, 2};
	bool y3[3] = {true, true, true};
	runs_check(3, d3b, y3, 1, 14);
	int d6[6] = {4, 3, 4, 2, 3, 2};
	bool w6[6] = {true, true, true, false, true, false};
	runs_check(6, d6, w6, 1, 15);
	bool m3[3] = {false, false, false};
	runs_check(3, d3, m3, 1, 16);
}
END_TEST

START_TEST(test_brute_force)
{
	int d1[1] = {7};
	bool w1[1] = {true};
	brute_check(1, d1, w1, 2, 1);
	int d2[2] = {5, 4};
	bool w2[2] = {true, false};
	brute_check(2, d2, w2, 1, 2);
	int d3[3] = {4, 5, 6};
	bool w3[3] = {true, false, true};
	brute_check(3, d3, w3, 2, 3);
	int d4[4] = {3, 4, 2, 5};
	bool w4[4] = {true, true, false, true};
	brute_check(4, d4, w4, 1, 4);
	bool m3[3] = {false, false, false};
	brute_check(3, d3, m3, 1, 5);
}
END_TEST

/* ---- Scotch gmtst parity ----
 *
 * Same graph, target and mapping given to Scotch's gmtst: its CommExpan must
 * equal our avg_hop_bytes and CommDilat our avg_dilation (the totals it prints
 * in parentheses must equal hop_bytes and the hop sum exactly).  The target is
 * "sub N l0 .. lN-1 torus3D 16 16 16" with l_i the router label of allocation
 * index i (x + 16y + 256z), so Scotch part i = our allocation index i.
 *
 * gmtst 7.0.3 renumbers the parts a mapping file actually uses (when some part
 * of a sub-architecture gets no vertex, distances come out wrong), so every
 * mapping here uses every node of the allocation.  gmtst is part of Debian's
 * "scotch" package, a declared test dependency: its absence fails the test. */

struct gmtst_out {
	int rc;              /* 0, or what went wrong (see msg) */
	char msg[256];
	double dilat, dilat_sum, expan, expan_sum;
};

static int write_grf(const char *path, const tp_graph *g)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	int32_t n = tp_graph_ntasks(g);
	bool weighted = false;
	const double *wt = tp_graph_weights(g);
	for (int64_t e = 0; e < 2 * tp_graph_nedges(g); e++)
		if (wt[e] != 1.0)
			weighted = true;
	fprintf(f, "0\n%d\t%lld\n0\t%s\n", (int)n,
		(long long)(2 * tp_graph_nedges(g)), weighted ? "010" : "000");
	int bad = 0;
	for (int32_t t = 0; t < n; t++) {
		const int32_t *adj;
		const double *w;
		int32_t deg = tp_graph_neighbors(g, t, &adj, &w);
		fprintf(f, "%d", (int)deg);
		for (int32_t j = 0; j < deg; j++) {
			if (w[j] != floor(w[j]) || w[j] < 0)
				bad = 1;  /* Scotch weights are integers */
			if (weighted)
				fprintf(f, "\t%.0f", w[j]);
			fprintf(f, "\t%d", (int)adj[j]);
		}
		fputc('\n', f);
	}
	return (fclose(f) || bad) ? -1 : 0;
}

static int write_target(const char *path, const tp_alloc *a)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	const tp_machine *m = tp_alloc_machine(a);
	fprintf(f, "sub %d", (int)tp_alloc_nnodes(a));
	for (int32_t i = 0; i < tp_alloc_nnodes(a); i++)
		fprintf(f, " %lld", (long long)tp_machine_router_of(m,
				    tp_alloc_node(a, i)));
	fprintf(f, "\ntorus3D %d %d %d\n", tp_machine_dim(m, 0),
		tp_machine_dim(m, 1), tp_machine_dim(m, 2));
	return fclose(f) ? -1 : 0;
}

static int write_map(const char *path, const int32_t *map, int32_t n)
{
	FILE *f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "%d\n", (int)n);
	for (int32_t t = 0; t < n; t++)
		fprintf(f, "%d\t%d\n", (int)t, (int)map[t]);
	return fclose(f) ? -1 : 0;
}

/* Run "gmtst grf tgt map" and parse CommDilat / CommExpan. */
static void run_gmtst(const char *grf, const char *tgt, const char *mapf,
		      struct gmtst_out *o)
{
	char cmd[1024];
	snprintf(cmd, sizeof cmd, "gmtst '%s' '%s' '%s' 2>&1", grf, tgt, mapf);
	FILE *p = popen(cmd, "r");
	if (!p) {
		o->rc = -1;
		snprintf(o->msg, sizeof o->msg, "popen: %s", strerror(errno));
		return;
	}
	char line[512], first[200] = "";
	int got = 0;
	while (fgets(line, sizeof line, p)) {
		if (!first[0])
			snprintf(first, sizeof first, "%.199s", line);
		char *s;
		if ((s = strstr(line, "CommDilat=")) &&
		    sscanf(s, "CommDilat=%lf (%lf)", &o->dilat, &o->dilat_sum) == 2)
			got |= 1;
		if ((s = strstr(line, "CommExpan=")) &&
		    sscanf(s, "CommExpan=%lf (%lf)", &o->expan, &o->expan_sum) == 2)
			got |= 2;
	}
	int st = pclose(p);
	int code = (st != -1 && WIFEXITED(st)) ? WEXITSTATUS(st) : -1;
	if (code != 0 || got != 3) {
		o->rc = -1;
		first[strcspn(first, "\n")] = '\0';
		snprintf(o->msg, sizeof o->msg,
			 "gmtst (Debian package \"scotch\", a test dependency) "
			 "failed: exit %d, output \"%s\"", code, first);
	}
}

struct parity_case {
	const char *stencil;
	int32_t nnodes;
	int slots;
	bool random_map;     /* seeded permutation of the slots, else block */
	bool use_gmk_m3;     /* also evaluate gmk_m3's own graph file */
};

static void parity(const struct parity_case *pc)
{
	int dims[3] = {16, 16, 16};
	bool wrap[3] = {true, true, true};
	tp_machine *m = mk_full_machine(3, dims, wrap, 1);
	int32_t *nodes = random_subset(4096, pc->nnodes, 20240611);
	tp_alloc *a = mk_alloc(m, nodes, pc->nnodes, pc->slots);
	free(nodes);
	tp_graph *g = mk_stencil(pc->stencil);
	int32_t nt = tp_graph_ntasks(g);
	ck_assert_int_eq(nt, pc->nnodes * pc->slots);
	int32_t *map = malloc((size_t)nt * sizeof *map);
	int32_t *perm = random_subset(nt, nt, 7);
	for (int32_t t = 0; t < nt; t++)
		map[t] = (pc->random_map ? perm[t] : t) / pc->slots;
	free(perm);
	tp_error err = {0};
	ck_assert_int_eq(tp_mapping_validate(g, a, map, &err), 0);
	tp_metrics mt;
	ck_assert_int_eq(tp_metrics_compute(g, a, map, false, &mt, &err), 0);

	/* files under a private directory, removed before any assertion */
	char dir[] = "/tmp/tp-metrics-XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char grf[64], tgt[64], mapf[64], gm[64];
	snprintf(grf, sizeof grf, "%s/g.grf", dir);
	snprintf(tgt, sizeof tgt, "%s/t.tgt", dir);
	snprintf(mapf, sizeof mapf, "%s/m.map", dir);
	snprintf(gm, sizeof gm, "%s/gmk.grf", dir);
	int wrc = write_grf(grf, g) | write_target(tgt, a) |
		  write_map(mapf, map, nt);
	struct gmtst_out ours = {0}, gmk = {0};
	if (wrc == 0)
		run_gmtst(grf, tgt, mapf, &ours);
	if (wrc == 0 && pc->use_gmk_m3) {
		int gd[3];
		ck_assert_int_eq(tp_graph_grid_dims(g, gd), 3);
		char cmd[256];
		snprintf(cmd, sizeof cmd, "gmk_m3 %d %d %d '%s' 2>&1", gd[0],
			 gd[1], gd[2], gm);
		int st = system(cmd);
		if (st != 0) {
			gmk.rc = -1;
			snprintf(gmk.msg, sizeof gmk.msg,
				 "gmk_m3 (package \"scotch\") failed: status %d", st);
		} else {
			run_gmtst(gm, tgt, mapf, &gmk);
		}
	}
	unlink(grf);
	unlink(tgt);
	unlink(mapf);
	unlink(gm);
	ck_assert_int_eq(rmdir(dir), 0);

	ck_assert_msg(wrc == 0, "could not write the Scotch input files");
	ck_assert_msg(ours.rc == 0, "%s", ours.msg);
	if (getenv("TP_TEST_VERBOSE"))
		printf("parity %-34s %4d nodes x %d %-6s: avg_hop_bytes %.9f "
		       "CommExpan %.6f (%.0f); avg_dilation %.9f CommDilat %.6f (%.0f)\n",
		       pc->stencil, (int)pc->nnodes, pc->slots,
		       pc->random_map ? "random" : "block", mt.avg_hop_bytes,
		       ours.expan, ours.expan_sum, mt.avg_dilation, ours.dilat,
		       ours.dilat_sum);
	ck_assert_msg(fabs(mt.avg_hop_bytes - ours.expan) <= 1e-6 * ours.expan,
		      "avg_hop_bytes %.9f vs gmtst CommExpan %.6f",
		      mt.avg_hop_bytes, ours.expan);
	ck_assert_msg(mt.hop_bytes == ours.expan_sum,
		      "hop_bytes %.1f vs gmtst CommExpan total %.1f",
		      mt.hop_bytes, ours.expan_sum);
	ck_assert_msg(fabs(mt.avg_dilation - ours.dilat) <= 1e-6 * ours.dilat,
		      "avg_dilation %.9f vs gmtst CommDilat %.6f",
		      mt.avg_dilation, ours.dilat);
	ck_assert_msg(fabs(mt.avg_dilation * (double)mt.nedges - ours.dilat_sum)
		      < 1e-6, "hop sum %.3f vs gmtst CommDilat total %.1f",
		      mt.avg_dilation * (double)mt.nedges, ours.dilat_sum);
	if (pc->use_gmk_m3) {
		/* gmk_m3 numbers x fastest, as our stencils do */
		ck_assert_msg(gmk.rc == 0, "%s", gmk.msg);
		ck_assert_msg(gmk.expan_sum == ours.expan_sum &&
			      gmk.dilat_sum == ours.dilat_sum,
			      "gmk_m3 graph: CommExpan total %.0f, ours %.0f",
			      gmk.expan_sum, ours.expan_sum);
	}
	ck_assert(mt.avg_hop_bytes > 1.0);   /* a non-trivial case */

	free(map);
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_machine_destroy(m);
}

START_TEST(test_scotch_parity_one_per_node)
{
	struct parity_case pc = {"8x8x8:7pt", 512, 1, false, true};
	parity(&pc);
}
END_TEST

START_TEST(test_scotch_parity_weighted)
{
	struct parity_case pc = {"8x8x8:7pt:bytes=3:weights=2,1,1", 512, 1,
				 false, false};
	parity(&pc);
	pc.random_map = true;
	parity(&pc);
}
END_TEST

START_TEST(test_scotch_parity_eight_per_node)
{
	struct parity_case pc = {"8x8x8:7pt", 64, 8, false, true};
	parity(&pc);
	struct parity_case pw = {"8x8x8:7pt:periodic=x:bytes=5:weights=1,3,2",
				 64, 8, false, false};
	parity(&pw);
	pw.random_map = true;
	parity(&pw);
}
END_TEST

/* ---- every link's load ---- */

START_TEST(test_link_loads)
{
	/* ring of 8: task pairs 0-1 on x0->x2 (cables 0, 1), 2-3 on x1->x3
	 * (cables 1, 2), bytes 3 and 5: cable loads 3, 8, 5, the rest 0, in
	 * each direction (ids cable * 2 up, cable * 2 + 1 back down) */
	int dims[1] = {8};
	bool wrap[1] = {true};
	tp_machine *m = mk_full_machine(1, dims, wrap, 1);
	int32_t nodes[8] = {0, 1, 2, 3, 4, 5, 6, 7};
	tp_alloc *a = mk_alloc(m, nodes, 8, 1);
	int32_t u[2] = {0, 2}, v[2] = {1, 3};
	double w[2] = {3, 5};
	tp_graph *g = mk_graph(4, 2, u, v, w);
	int32_t P[4] = {0, 2, 1, 3};
	int64_t nl = tp_machine_link_count(m);
	ck_assert_int_eq(nl, 16);
	double loads[16];
	int64_t msgs[16];
	for (int i = 0; i < 16; i++) {
		loads[i] = -1;   /* overwritten, not added to */
		msgs[i] = -1;
	}
	tp_error err = {0};
	ck_assert_int_eq(tp_metrics_link_loads(g, a, P, loads, msgs, nl, &err), 0);
	double want[16] = {3, 3, 8, 8, 5, 5};
	int64_t wmsgs[16] = {1, 1, 2, 2, 1, 1};
	for (int i = 0; i < 16; i++) {
		assert_close(loads[i], want[i], "load");
		ck_assert_int_eq(msgs[i], wmsgs[i]);
	}
	/* msgs may be NULL; the largest load is the metric's congestion */
	ck_assert_int_eq(tp_metrics_link_loads(g, a, P, loads, NULL, nl, &err), 0);
	tp_metrics mt;
	ck_assert_int_eq(tp_metrics_compute(g, a, P, true, &mt, &err), 0);
	assert_close(mt.max_congestion_bytes, 8, "max");

	/* wrong sizes and bad maps are refused with one line */
	ck_assert_int_eq(tp_metrics_link_loads(g, a, P, loads, msgs, 8, &err),
			 TP_EINVAL);
	ck_assert_ptr_nonnull(strstr(err.msg, "room for 8 links"));
	int32_t bad[4] = {0, 2, 1, 9};
	ck_assert_int_eq(tp_metrics_link_loads(g, a, bad, loads, msgs, nl, &err),
			 TP_EINVAL);
	ck_assert_ptr_nonnull(strstr(err.msg, "task 3"));
	ck_assert_int_eq(tp_metrics_link_loads(g, a, P, NULL, msgs, nl, &err),
			 TP_EINVAL);
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_machine_destroy(m);
}
END_TEST

/* On a random mapping of a 3-D stencil: the loads sum to twice the routed
 * hop-bytes (every edge loads each link of its route with its bytes, in
 * both directions) and their maximum is the congestion metric. */
START_TEST(test_link_loads_sum)
{
	int dims[3] = {4, 3, 5};
	bool wrap[3] = {true, false, true};
	tp_machine *m = mk_full_machine(3, dims, wrap, 2);
	int32_t *nodes = random_subset(120, 40, 7);
	tp_alloc *a = mk_alloc(m, nodes, 40, 2);
	tp_graph *g = mk_stencil("5x4x4:27pt:periodic=x");
	int32_t map[80];
	int32_t *perm = random_subset(80, 80, 11);
	for (int t = 0; t < 80; t++)
		map[t] = perm[t] / 2;
	int64_t nl = tp_machine_link_count(m);
	double *loads = malloc(sizeof *loads * (size_t)nl);
	ck_assert_ptr_nonnull(loads);
	tp_error err = {0};
	ck_assert_int_eq(tp_metrics_link_loads(g, a, map, loads, NULL, nl, &err), 0);
	double sum = 0, mx = 0;
	for (int64_t l = 0; l < nl; l++) {
		sum += loads[l];
		if (loads[l] > mx)
			mx = loads[l];
	}
	tp_metrics mt;
	ck_assert_int_eq(tp_metrics_compute(g, a, map, true, &mt, &err), 0);
	/* dimension-order routes are minimal: route length = hops */
	ck_assert_msg(fabs(sum - 2 * mt.hop_bytes) <= 1e-9 * mt.hop_bytes,
		      "sum %g, hop-bytes %g", sum, mt.hop_bytes);
	assert_close(mx, mt.max_congestion_bytes, "max");
	free(loads);
	free(perm);
	free(nodes);
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_machine_destroy(m);
}
END_TEST

/* Graphs of a million edges or more are scored on two threads: the very
 * same additions in the same order as one loop, so the same bits, and a
 * bound is still honoured wherever the sum crosses it. */
START_TEST(test_two_threads_same_bits)
{
	const int dims[3] = { 16, 16, 16 };
	const bool wrap[3] = { true, true, true };
	tp_machine *m = mk_full_machine(3, dims, wrap, 1);
	int32_t *nodes = random_subset(4096, 4096, 7);
	tp_alloc *a = mk_alloc(m, nodes, 4096, 86);
	tp_graph *g = mk_stencil("64x64x86:7pt:periodic=all:weights=1.1,0.7,0.3");
	int32_t n = tp_graph_ntasks(g);
	ck_assert_int_ge(tp_graph_nedges(g), (int64_t)1 << 20);
	int32_t *map = malloc(sizeof(int32_t) * (size_t)n);
	ck_assert_ptr_nonnull(map);
	uint64_t seed = 11;
	for (int32_t t = 0; t < n; t++)   /* scattered: uneven task sums */
		map[t] = (int32_t)(splitmix64(&seed) % 4096);
	double want = 0;
	for (int32_t u = 0; u < n; u++) {
		const int *cu = tp_machine_node_coords(m, tp_alloc_node(a, map[u]));
		const int32_t *adj;
		const double *w;
		int32_t k = tp_graph_neighbors(g, u, &adj, &w);
		double su = 0;
		for (int32_t i = 0; i < k; i++) {
			if (adj[i] < u)
				continue;
			const int *cv = tp_machine_node_coords(m, tp_alloc_node(a, map[adj[i]]));
			int h = 0;
			for (int d = 0; d < 3; d++) {
				int x = abs(cu[d] - cv[d]);
				h += x < 16 - x ? x : 16 - x;
			}
			su += w[i] * (double)h;
		}
		want += su;
	}
	double got = tp_metrics_hop_bytes(g, a, map);
	ck_assert_msg(got == want, "got %.17g, want %.17g", got, want);
	ck_assert(tp__hop_bytes_bounded(g, a, map, 2 * want) == want);
	/* crossed in the lower part, in the upper part alone, in the fold */
	ck_assert(tp__hop_bytes_bounded(g, a, map, 0.3 * want) > 0.3 * want);
	ck_assert(tp__hop_bytes_bounded(g, a, map, 0.9 * want) > 0.9 * want);
	ck_assert(tp__hop_bytes_bounded(g, a, map, 0.99999 * want) > 0.99999 * want);
	/* from per-task router coordinates, on one thread and on two: the
	 * same bits, and the same bounds */
	int *tc = malloc(sizeof(int) * 3 * (size_t)n);
	ck_assert_ptr_nonnull(tc);
	for (int32_t t = 0; t < n; t++)
		memcpy(tc + 3 * (size_t)t,
		       tp_machine_node_coords(m, tp_alloc_node(a, map[t])), 3 * sizeof(int));
	for (int th = 1; th <= 2; th++) {
		ck_assert(tp__hop_bytes_task_coords(g, m, tc, HUGE_VAL, th) == want);
		ck_assert(tp__hop_bytes_task_coords(g, m, tc, 2 * want, th) == want);
		ck_assert(tp__hop_bytes_task_coords(g, m, tc, 0.3 * want, th) > 0.3 * want);
		ck_assert(tp__hop_bytes_task_coords(g, m, tc, 0.99999 * want, th) >
			  0.99999 * want);
	}
	free(tc);
	free(map);
	free(nodes);
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_machine_destroy(m);
}
END_TEST

/* The same graph with its weights stored: a uniform stencil rebuilt from
 * its public CSR through tp_graph_from_edges. */
static tp_graph *stored_copy(const tp_graph *g)
{
	int32_t n = tp_graph_ntasks(g);
	int64_t ne = tp_graph_nedges(g), k = 0;
	const int64_t *x = tp_graph_xadj(g);
	const int32_t *adj = tp_graph_adjncy(g);
	const double *w = tp_graph_weights(g);
	ck_assert_ptr_nonnull(w);
	int32_t *u = malloc(sizeof(int32_t) * (size_t)ne);
	int32_t *v = malloc(sizeof(int32_t) * (size_t)ne);
	double *b = malloc(sizeof(double) * (size_t)ne);
	ck_assert(u && v && b);
	for (int32_t t = 0; t < n; t++)
		for (int64_t e = x[t]; e < x[t + 1]; e++)
			if (adj[e] > t) {
				u[k] = t;
				v[k] = adj[e];
				b[k++] = w[e];
			}
	ck_assert_int_eq(k, ne);
	tp_graph *c = mk_graph(n, ne, u, v, b);
	free(u);
	free(v);
	free(b);
	return c;
}

/* A large graph whose messages all carry the same whole bytes routes its
 * congestion on several threads, each part on links of its own, added
 * after: every metric the same to the bits on 1, 2 and 3 threads. */
START_TEST(test_congestion_threads_same_bits)
{
	const int dims[3] = { 16, 16, 16 };
	const bool wrap[3] = { true, true, false };
	tp_machine *m = mk_full_machine(3, dims, wrap, 2);
	tp_graph *g = mk_stencil("64x64x32:7pt:periodic=all:bytes=4096");
	ck_assert_ptr_null(g->weights);
	int32_t n = tp_graph_ntasks(g);
	int32_t nn = n / 64;
	int32_t *nodes = random_subset(8192, nn, 7);
	tp_alloc *a = mk_alloc(m, nodes, nn, 64);
	int32_t *map = malloc(sizeof(int32_t) * (size_t)n);
	uint64_t seed = 9;
	int *used = calloc((size_t)nn, sizeof *used);
	for (int32_t t = 0; t < n; t++) {
		int32_t q = (int32_t)(splitmix64(&seed) % (uint64_t)nn);
		while (used[q] == 64)
			q = (q + 1) % nn;
		used[q]++;
		map[t] = q;
	}
	tp_metrics m1, mt;
	tp_error err = {0};
	ck_assert_int_eq(tp_metrics_compute(g, a, map, true, &m1, &err), 0);
	ck_assert(m1.max_congestion_msgs > 0);
	for (int th = 2; th <= 3; th++) {
		ck_assert_int_eq(tp__metrics_compute_threads(g, a, map, true, th,
							     &mt, &err), 0);
		ck_assert(!memcmp(&m1, &mt, sizeof m1));
	}
	free(used);
	free(map);
	free(nodes);
	tp_alloc_destroy(a);
	tp_graph_destroy(g);
	tp_machine_destroy(m);
}
END_TEST

/* A stencil whose pairs all weigh the same stores no weights; every metric
 * reads it to the same bits as the graph with its weights stored, on one
 * thread and on two (1,048,576 edges or more). */
START_TEST(test_unweighted_stencil_same_bits)
{
	static const char *const specs[] = {
		"64x64x86:7pt:periodic=all:bytes=3.25",
		"8x8x8:27pt:bytes=1e6",
		"16x32:9pt:periodic=y",
	};
	const int dims[3] = { 16, 16, 16 };
	const bool wrap[3] = { true, true, false };
	tp_machine *m = mk_full_machine(3, dims, wrap, 2);
	tp_error err = {0};
	for (size_t i = 0; i < sizeof specs / sizeof specs[0]; i++) {
		tp_graph *g = mk_stencil(specs[i]);
		ck_assert_ptr_null(g->weights);
		tp_graph *c = stored_copy(g);
		ck_assert_ptr_nonnull(c->weights);
		int32_t n = tp_graph_ntasks(g);
		int32_t nn = (int32_t)((n + 255) / 256);
		int32_t *nodes = random_subset(8192, nn, 3 + i);
		tp_alloc *a = mk_alloc(m, nodes, nn, 256);
		int32_t *map = malloc(sizeof(int32_t) * (size_t)n);
		ck_assert_ptr_nonnull(map);
		uint64_t seed = 5 + i;
		int *used = calloc((size_t)nn, sizeof *used);
		for (int32_t t = 0; t < n; t++) {   /* scattered, within slots */
			int32_t q = (int32_t)(splitmix64(&seed) % (uint64_t)nn);
			while (used[q] == 256)
				q = (q + 1) % nn;
			used[q]++;
			map[t] = q;
		}
		ck_assert(tp_metrics_hop_bytes(g, a, map) ==
			  tp_metrics_hop_bytes(c, a, map));
		ck_assert(tp__hop_bytes_threads(g, a, map, HUGE_VAL, 1) ==
			  tp__hop_bytes_threads(c, a, map, HUGE_VAL, 1));
		tp_metrics mg, mc;
		ck_assert_int_eq(tp_metrics_compute(g, a, map, true, &mg, &err), 0);
		ck_assert_int_eq(tp_metrics_compute(c, a, map, true, &mc, &err), 0);
		ck_assert(!memcmp(&mg, &mc, sizeof mg));
		ck_assert(mg.total_bytes == tp_graph_total_bytes(g));
		tp_congestion_ws *ws = NULL;
		ck_assert_int_eq(tp_congestion_ws_create(&ws, m, &err), 0);
		int64_t pg = 0, pc = 0;
		ck_assert(tp_metrics_max_congestion(g, a, map, ws, &pg) ==
			  tp_metrics_max_congestion(c, a, map, ws, &pc));
		ck_assert_int_eq(pg, pc);
		tp_congestion_ws_destroy(ws);
		free(used);
		free(map);
		free(nodes);
		tp_alloc_destroy(a);
		tp_graph_destroy(c);
		tp_graph_destroy(g);
	}
	tp_machine_destroy(m);

	/* stored where a pair differs: per-axis weights, offsets summed onto
	 * one neighbour (extent 2 or 1, periodic) */
	static const struct { const char *spec; bool stored; } kinds[] = {
		{ "16x16x4:weights=2,1,1", true },
		{ "16x16x4:weights=2,2,2", false },
		{ "2x16x16:periodic=all", true },
		{ "2x16x16:periodic=yz", false },
		{ "1x16x16:27pt:periodic=x", true },
		{ "1x16x16:27pt:periodic=y", false },
	};
	for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
		tp_graph *g = mk_stencil(kinds[i].spec);
		ck_assert_msg((g->weights != NULL) == kinds[i].stored, "%s",
			      kinds[i].spec);
		tp_graph_destroy(g);
	}
}
END_TEST

static Suite *metrics_suite(void)
{
	Suite *s = suite_create("metrics");
	TCase *tc = tcase_create("hand");
	tcase_add_test(tc, test_parse_and_name);
	tcase_add_test(tc, test_ring_identity);
	tcase_add_test(tc, test_ring_route_direction);
	tcase_add_test(tc, test_mesh_two_per_router);
	tcase_add_test(tc, test_no_edges);
	tcase_add_test(tc, test_validate_errors);
	tcase_add_test(tc, test_score_and_workspace);
	tcase_add_test(tc, test_link_loads);
	tcase_add_test(tc, test_link_loads_sum);
	suite_add_tcase(s, tc);

	TCase *tb = tcase_create("brute");
	tcase_set_timeout(tb, 60);
	tcase_add_test(tb, test_brute_force);
	tcase_add_test(tb, test_route_runs);
	tcase_add_test(tb, test_two_threads_same_bits);
	tcase_add_test(tb, test_unweighted_stencil_same_bits);
	tcase_add_test(tb, test_congestion_threads_same_bits);
	suite_add_tcase(s, tb);

	TCase *ts = tcase_create("scotch");
	tcase_set_timeout(ts, 120);
	tcase_add_test(ts, test_scotch_parity_one_per_node);
	tcase_add_test(ts, test_scotch_parity_weighted);
	tcase_add_test(ts, test_scotch_parity_eight_per_node);
	suite_add_tcase(s, ts);
	return s;
}

int main(void)
{
	return tp_test_run(metrics_suite());
}
