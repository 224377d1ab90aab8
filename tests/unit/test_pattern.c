/* Unit tests for core/pattern: tp_graph_from_edges, stencils, JSON graphs. */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "pattern/pattern_internal.h"

#define GDATA TP_TEST_DATA "/graphs/"

/* ---- helpers ---- */

/* Weight of edge {a,b} via the accessor, or -1 when absent. */
static double wt(const tp_graph *g, int32_t a, int32_t b)
{
	const int32_t *adj;
	const double *w;
	int32_t k = tp_graph_neighbors(g, a, &adj, &w);
	for (int32_t i = 0; i < k; i++)
		if (adj[i] == b)
			return w[i];
	return -1;
}

static int32_t deg(const tp_graph *g, int32_t t)
{
	return tp_graph_neighbors(g, t, NULL, NULL);
}

/* CSR invariants: sorted rows, no self-loops, no duplicates, symmetric with
 * bit-identical weights, counts and total consistent. */
static void check_csr(const tp_graph *g)
{
	int32_t n = tp_graph_ntasks(g);
	const int64_t *x = tp_graph_xadj(g);
	const int32_t *a = tp_graph_adjncy(g);
	const double *w = tp_graph_weights(g);
	ck_assert_ptr_nonnull(x);
	ck_assert_int_eq(x[0], 0);
	ck_assert_int_eq(x[n], 2 * tp_graph_nedges(g));
	double total = 0;
	for (int32_t t = 0; t < n; t++) {
		ck_assert_int_le(x[t], x[t + 1]);
		for (int64_t p = x[t]; p < x[t + 1]; p++) {
			ck_assert_int_ge(a[p], 0);
			ck_assert_int_lt(a[p], n);
			ck_assert_int_ne(a[p], t);
			if (p > x[t])
				ck_assert_int_lt(a[p - 1], a[p]);
			double back = wt(g, a[p], t);
			ck_assert_msg(back == w[p], "edge %d-%d: %g vs %g", t,
				      a[p], w[p], back);
			if (a[p] > t)
				total += w[p];
		}
	}
	ck_assert_double_eq_tol(total, tp_graph_total_bytes(g),
				1e-9 * (1 + total));
}

static bool msg_starts(const tp_error *e, const char *prefix)
{
	return strncmp(e->msg, prefix, strlen(prefix)) == 0;
}

/* ---- tp_graph_from_edges ---- */

START_TEST(edges_basic)
{
	int32_t u[] = { 2, 0, 1 }, v[] = { 3, 1, 2 };
	double b[] = { 3, 1, 2 };
	tp_graph *g = NULL;
	tp_error err = { 0 };
	ck_assert_int_eq(tp_graph_from_edges(&g, 4, 3, u, v, b, "t", &err), 0);
	ck_assert_int_eq(tp_graph_ntasks(g), 4);
	ck_assert_int_eq(tp_graph_nedges(g), 3);
	ck_assert_double_eq(tp_graph_total_bytes(g), 6);
	ck_assert_int_eq(deg(g, 0), 1);
	ck_assert_int_eq(deg(g, 1), 2);
	ck_assert_int_eq(deg(g, 3), 1);
	ck_assert_double_eq(wt(g, 1, 2), 2);
	ck_assert_double_eq(wt(g, 3, 2), 3);
	ck_assert_double_eq(wt(g, 0, 3), -1);
	ck_assert_int_eq(tp_graph_coord_dims(g), 0);
	ck_assert_ptr_null(tp_graph_coords(g));
	int dims[3] = { 9, 9, 9 };
	ck_assert_int_eq(tp_graph_grid_dims(g, dims), 0);
	ck_assert_int_eq(dims[0], 9);
	/* out-of-range neighbour query */
	const int32_t *adj = (const int32_t *)1;
	ck_assert_int_eq(tp_graph_neighbors(g, 4, &adj, NULL), 0);
	ck_assert_ptr_null(adj);
	ck_assert_int_eq(tp_graph_neighbors(g, -1, NULL, NULL), 0);
	check_csr(g);
	tp_graph_destroy(g);
}
END_TEST

START_TEST(edges_duplicates_summed)
{
	int32_t u[] = { 0, 1, 0, 2 }, v[] = { 1, 0, 1, 1 };
	double b[] = { 10, 5, 1.5, 7 };
	tp_graph *g = NULL;
	ck_assert_int_eq(tp_graph_from_edges(&g, 3, 4, u, v, b, "t", NULL), 0);
	ck_assert_int_eq(tp_graph_nedges(g), 2);
	ck_assert_double_eq(wt(g, 0, 1), 16.5);
	ck_assert_double_eq(wt(g, 1, 0), 16.5);
	ck_assert_double_eq(wt(g, 1, 2), 7);
	ck_assert_double_eq(tp_graph_total_bytes(g), 23.5);
	check_csr(g);
	tp_graph_destroy(g);
}
END_TEST

/* The heavy part: task 0 sends 90 to 1, 8 to 2, 1 to 3, 1 to 4; at 0.95
 * of its bytes it keeps 1 and 2 (98 of 100), heaviest first.  Task 3's
 * only message (1 byte to 0) is all of its bytes, so the pair 0-3 stays
 * on both sides: a pair is kept when either end keeps it.  Task 4 also
 * sends 50 to 5, so its message to 0 is 2 % of its bytes; 0 drops it too:
 * 0-4 is gone from both lists. */
START_TEST(heavy_view)
{
	int32_t u[] = { 0, 0, 0, 0, 4 }, v[] = { 1, 2, 3, 4, 5 };
	double b[] = { 90, 8, 1, 1, 50 };
	tp_graph *g = NULL;
	ck_assert_int_eq(tp_graph_from_edges(&g, 6, 5, u, v, b, "t", NULL), 0);
	tp_graph h;
	ck_assert_int_eq(tp__graph_heavy_view(g, 0.95, &h), 0);
	ck_assert_int_eq(h.ntasks, 6);
	ck_assert_double_eq(h.total_bytes, tp_graph_total_bytes(g));
	/* task 0: 1 (90), 2 (8), 3 (1): heaviest first, 4 dropped */
	ck_assert_int_eq(h.xadj[1] - h.xadj[0], 3);
	ck_assert_int_eq(h.adjncy[0], 1);
	ck_assert_int_eq(h.adjncy[1], 2);
	ck_assert_int_eq(h.adjncy[2], 3);
	ck_assert_double_eq(h.weights[0], 90);
	ck_assert_double_eq(h.weights[2], 1);
	/* task 4: only 5; task 3: only 0 */
	ck_assert_int_eq(h.xadj[5] - h.xadj[4], 1);
	ck_assert_int_eq(h.adjncy[h.xadj[4]], 5);
	ck_assert_int_eq(h.xadj[4] - h.xadj[3], 1);
	ck_assert_int_eq(h.adjncy[h.xadj[3]], 0);
	ck_assert_int_eq(h.nedges, 4);
	/* symmetric: every kept entry has its reverse */
	for (int32_t t = 0; t < 6; t++)
		for (int64_t e = h.xadj[t]; e < h.xadj[t + 1]; e++) {
			int32_t w = h.adjncy[e];
			bool back = false;
			for (int64_t f = h.xadj[w]; f < h.xadj[w + 1]; f++)
				back = back || (h.adjncy[f] == t && h.weights[f] == h.weights[e]);
			ck_assert_msg(back, "%d-%d kept one way only", t, w);
		}
	tp__graph_view_free(&h);
	/* share 1: everything, still heaviest first */
	ck_assert_int_eq(tp__graph_heavy_view(g, 1.0, &h), 0);
	ck_assert_int_eq(h.nedges, 5);
	ck_assert_int_eq(h.adjncy[h.xadj[4]], 5);
	tp__graph_view_free(&h);
	tp_graph_destroy(g);
}
END_TEST

START_TEST(edges_null_bytes_and_empty)
{
	int32_t u[] = { 0, 2 }, v[] = { 1, 1 };
	tp_graph *g = NULL;
	ck_assert_int_eq(tp_graph_from_edges(&g, 3, 2, u, v, NULL, "t", NULL), 0);
	ck_assert_double_eq(wt(g, 2, 1), 1);
	ck_assert_double_eq(tp_graph_total_bytes(g), 2);
	tp_graph_destroy(g);

	ck_assert_int_eq(tp_graph_from_edges(&g, 5, 0, NULL, NULL, NULL, "t", NULL), 0);
	ck_assert_int_eq(tp_graph_ntasks(g), 5);
	ck_assert_int_eq(tp_graph_nedges(g), 0);
	ck_assert_int_eq(deg(g, 4), 0);
	check_csr(g);
	tp_graph_destroy(g);

	ck_assert_int_eq(tp_graph_from_edges(&g, 0, 0, NULL, NULL, NULL, "t", NULL), 0);
	ck_assert_int_eq(tp_graph_ntasks(g), 0);
	tp_graph_destroy(g);
	tp_graph_destroy(NULL);
	ck_assert_int_eq(tp_graph_ntasks(NULL), 0);
	ck_assert_ptr_null(tp_graph_xadj(NULL));
}
END_TEST

/* Random multigraph against a dense reference. */
START_TEST(edges_random_vs_dense)
{
	enum { N = 40, M = 900 };
	static int32_t u[M], v[M];
	static double b[M], ref[N][N];
	uint64_t s = 12345;
	memset(ref, 0, sizeof ref);
	for (int i = 0; i < M; i++) {
		do {
			s = s * 6364136223846793005ULL + 1442695040888963407ULL;
			u[i] = (int32_t)((s >> 33) % N);
			s = s * 6364136223846793005ULL + 1442695040888963407ULL;
			v[i] = (int32_t)((s >> 33) % N);
		} while (u[i] == v[i]);
		b[i] = (double)((s >> 40) % 1000) / 8.0;
		ref[u[i]][v[i]] += b[i];
		ref[v[i]][u[i]] += b[i];
	}
	tp_graph *g = NULL;
	ck_assert_int_eq(tp_graph_from_edges(&g, N, M, u, v, b, "rand", NULL), 0);
	check_csr(g);
	int64_t ne = 0;
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++) {
			bool has = false;
			for (int k = 0; k < M; k++)
				if ((u[k] == i && v[k] == j) || (u[k] == j && v[k] == i))
					has = true;
			if (has) {
				ck_assert_double_eq_tol(wt(g, i, j), ref[i][j], 1e-9);
				ne += i < j;
			} else {
				ck_assert_double_eq(wt(g, i, j), -1);
			}
		}
	ck_assert_int_eq(tp_graph_nedges(g), ne);
	tp_graph_destroy(g);
}
END_TEST

START_TEST(edges_errors)
{
	tp_graph *g = (tp_graph *)1;
	tp_error err = { 0 };
	int32_t u[] = { 0, 1 }, v[] = { 1, 4 };
	double b[] = { 1, 1 };
	ck_assert_int_eq(tp_graph_from_edges(&g, 4, 2, u, v, b, "g.json", &err),
			 TP_EINVAL);
	ck_assert_ptr_null(g);
	ck_assert_str_eq(err.msg, "g.json: edge 1: task 4 does not exist (tasks: 4)");
	ck_assert_int_eq(err.code, TP_EINVAL);

	int32_t un[] = { -1 }, vn[] = { 0 };
	ck_assert_int_eq(tp_graph_from_edges(&g, 4, 1, un, vn, NULL, "g", &err), TP_EINVAL);
	tp_assert_err_has(&err, "edge 0: task -1 does not exist");

	int32_t us[] = { 0, 3 }, vs[] = { 1, 3 };
	ck_assert_int_eq(tp_graph_from_edges(&g, 4, 2, us, vs, NULL, "g", &err), TP_EINVAL);
	ck_assert_str_eq(err.msg, "g: edge 1: self-loop on task 3");

	double bneg[] = { 1, -2 };
	int32_t v2[] = { 1, 2 };
	ck_assert_int_eq(tp_graph_from_edges(&g, 4, 2, u, v2, bneg, "g", &err), TP_EINVAL);
	tp_assert_err_has(&err, "edge 1 (1-2): bytes -2 is negative");
	double bnan[] = { NAN, 1 };
	ck_assert_int_eq(tp_graph_from_edges(&g, 4, 2, u, v2, bnan, "g", &err), TP_EINVAL);
	tp_assert_err_has(&err, "edge 0 (0-1): bytes nan is not a finite number");
	double binf[] = { 1, INFINITY };
	ck_assert_int_eq(tp_graph_from_edges(&g, 4, 2, u, v2, binf, "g", &err), TP_EINVAL);
	tp_assert_err_has(&err, "is not a finite number");

	ck_assert_int_eq(tp_graph_from_edges(&g, -1, 0, NULL, NULL, NULL, "g", &err), TP_EINVAL);
	tp_assert_err_has(&err, "g: task count -1 is negative");
	ck_assert_int_eq(tp_graph_from_edges(&g, 4, -2, u, v, NULL, "g", &err), TP_EINVAL);
	tp_assert_err_has(&err, "edge count -2 is negative");
	ck_assert_int_eq(tp_graph_from_edges(&g, 4, 2, NULL, v, NULL, "g", &err), TP_EINVAL);
	tp_assert_err_has(&err, "no endpoint arrays");
	ck_assert_int_eq(tp_graph_from_edges(NULL, 4, 0, NULL, NULL, NULL, "g", &err), TP_EINVAL);
	/* what defaults to "graph"; a NULL err is allowed */
	ck_assert_int_eq(tp_graph_from_edges(&g, 4, 2, u, v, b, NULL, &err), TP_EINVAL);
	ck_assert_str_eq(err.msg, "graph: edge 1: task 4 does not exist (tasks: 4)");
	ck_assert_int_eq(tp_graph_from_edges(&g, 4, 2, u, v, b, NULL, NULL), TP_EINVAL);
}
END_TEST

START_TEST(coords_set)
{
	int32_t u[] = { 0 }, v[] = { 1 };
	tp_graph *g = NULL;
	tp_error err = { 0 };
	ck_assert_int_eq(tp_graph_from_edges(&g, 3, 1, u, v, NULL, "t", NULL), 0);
	double c[] = { 0, 1, 2, 3, 4, 5 };
	ck_assert_int_eq(tp_graph_set_coords(g, 2, c, &err), 0);
	c[0] = 99;   /* copied */
	ck_assert_int_eq(tp_graph_coord_dims(g), 2);
	ck_assert_double_eq(tp_graph_coords(g)[0], 0);
	ck_assert_double_eq(tp_graph_coords(g)[5], 5);
	/* replace with 1-D */
	ck_assert_int_eq(tp_graph_set_coords(g, 1, c, &err), 0);
	ck_assert_int_eq(tp_graph_coord_dims(g), 1);
	ck_assert_double_eq(tp_graph_coords(g)[0], 99);

	ck_assert_int_eq(tp_graph_set_coords(g, 0, c, &err), TP_EINVAL);
	tp_assert_err_has(&err, "0 dimensions, expected 1..6");
	ck_assert_int_eq(tp_graph_set_coords(g, 7, c, &err), TP_EINVAL);
	tp_assert_err_has(&err, "7 dimensions, expected 1..6");
	double bad[] = { 0, 1, 2, INFINITY, 4, 5 };
	ck_assert_int_eq(tp_graph_set_coords(g, 2, bad, &err), TP_EINVAL);
	tp_assert_err_has(&err, "task 1, dimension 1: value inf is not finite");
	ck_assert_int_eq(tp_graph_set_coords(g, 2, NULL, &err), TP_EINVAL);
	ck_assert_int_eq(tp_graph_set_coords(NULL, 2, c, &err), TP_EINVAL);
	/* failed calls keep the old coordinates */
	ck_assert_int_eq(tp_graph_coord_dims(g), 1);
	tp_graph_destroy(g);
}
END_TEST

/* ---- stencils ---- */

static tp_graph *stencil_ok(const char *spec)
{
	tp_graph *g = NULL;
	tp_error err = { 0 };
	int rc = tp_graph_from_stencil(&g, spec, 0, &err);
	ck_assert_msg(rc == 0, "%s: %s", spec, err.msg);
	check_csr(g);
	return g;
}

static void nbrs_are(const tp_graph *g, int32_t t, int n, const int32_t *want)
{
	const int32_t *adj;
	ck_assert_int_eq(tp_graph_neighbors(g, t, &adj, NULL), n);
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(adj[i], want[i]);
}

START_TEST(stencil_5pt)
{
	tp_graph *g = stencil_ok("4x3");     /* default 5pt */
	ck_assert_int_eq(tp_graph_ntasks(g), 12);
	ck_assert_int_eq(tp_graph_nedges(g), 3 * 3 + 4 * 2);
	ck_assert_double_eq(tp_graph_total_bytes(g), 17);
	nbrs_are(g, 0, 2, (int32_t[]){ 1, 4 });            /* corner */
	nbrs_are(g, 1, 3, (int32_t[]){ 0, 2, 5 });         /* edge */
	nbrs_are(g, 5, 4, (int32_t[]){ 1, 4, 6, 9 });      /* interior */
	nbrs_are(g, 11, 2, (int32_t[]){ 7, 10 });          /* far corner */
	int dims[3] = { 0 };
	ck_assert_int_eq(tp_graph_grid_dims(g, dims), 2);
	ck_assert_int_eq(dims[0], 4);
	ck_assert_int_eq(dims[1], 3);
	ck_assert_int_eq(tp_graph_grid_dims(g, NULL), 2);
	ck_assert_int_eq(tp_graph_coord_dims(g), 2);
	const double *c = tp_graph_coords(g);
	ck_assert_double_eq(c[2 * 5 + 0], 1);
	ck_assert_double_eq(c[2 * 5 + 1], 1);
	ck_assert_double_eq(c[2 * 11 + 0], 3);
	ck_assert_double_eq(c[2 * 11 + 1], 2);
	tp_graph_destroy(g);

	g = stencil_ok("4x3:5pt:periodic=all");
	ck_assert_int_eq(tp_graph_nedges(g), 24);
	for (int t = 0; t < 12; t++)
		ck_assert_int_eq(deg(g, t), 4);
	nbrs_are(g, 0, 4, (int32_t[]){ 1, 3, 4, 8 });
	tp_graph_destroy(g);

	g = stencil_ok("4x3:periodic=x");
	nbrs_are(g, 0, 3, (int32_t[]){ 1, 3, 4 });
	ck_assert_int_eq(tp_graph_nedges(g), 4 * 3 + 4 * 2);
	tp_graph_destroy(g);

	g = stencil_ok("4x3:periodic=y");
	nbrs_are(g, 0, 3, (int32_t[]){ 1, 4, 8 });
	tp_graph_destroy(g);

	g = stencil_ok("4x3:periodic=x,y:5pt");
	ck_assert_int_eq(tp_graph_nedges(g), 24);
	tp_graph_destroy(g);
	g = stencil_ok("4x3:periodic=none");
	ck_assert_int_eq(tp_graph_nedges(g), 17);
	tp_graph_destroy(g);
	g = stencil_ok("4X3:bytes=2:5pt");   /* upper-case X, points after options */
	ck_assert_int_eq(tp_graph_nedges(g), 17);
	ck_assert_double_eq(tp_graph_total_bytes(g), 34);
	tp_graph_destroy(g);
}
END_TEST

START_TEST(stencil_7pt)
{
	tp_graph *g = stencil_ok("4x4x4:7pt");
	ck_assert_int_eq(tp_graph_ntasks(g), 64);
	ck_assert_int_eq(tp_graph_nedges(g), 3 * 4 * 4 * 3);
	nbrs_are(g, 0, 3, (int32_t[]){ 1, 4, 16 });
	int32_t mid = 1 + 4 * 1 + 16 * 1;   /* (1,1,1) = 21 */
	nbrs_are(g, mid, 6, (int32_t[]){ 5, 17, 20, 22, 25, 37 });
	int dims[3];
	ck_assert_int_eq(tp_graph_grid_dims(g, dims), 3);
	ck_assert_int_eq(dims[2], 4);
	ck_assert_int_eq(tp_graph_coord_dims(g), 3);
	const double *c = tp_graph_coords(g);
	ck_assert_double_eq(c[3 * 39 + 0], 3);   /* 39 = 3 + 4*1 + 16*2 */
	ck_assert_double_eq(c[3 * 39 + 1], 1);
	ck_assert_double_eq(c[3 * 39 + 2], 2);
	tp_graph_destroy(g);

	g = stencil_ok("4x4x4:periodic=all");
	ck_assert_int_eq(tp_graph_nedges(g), 192);
	for (int t = 0; t < 64; t++)
		ck_assert_int_eq(deg(g, t), 6);
	nbrs_are(g, 0, 6, (int32_t[]){ 1, 3, 4, 12, 16, 48 });
	tp_graph_destroy(g);

	g = stencil_ok("5x4x3:7pt:periodic=z");
	nbrs_are(g, 0, 4, (int32_t[]){ 1, 5, 20, 40 });
	ck_assert_int_eq(tp_graph_nedges(g), 4 * 4 * 3 + 5 * 3 * 3 + 5 * 4 * 3);
	tp_graph_destroy(g);
}
END_TEST

START_TEST(stencil_9pt_27pt)
{
	tp_graph *g = stencil_ok("4x4:9pt");
	ck_assert_int_eq(tp_graph_nedges(g), 12 + 12 + 18);
	nbrs_are(g, 0, 3, (int32_t[]){ 1, 4, 5 });
	nbrs_are(g, 1, 5, (int32_t[]){ 0, 2, 4, 5, 6 });
	nbrs_are(g, 5, 8, (int32_t[]){ 0, 1, 2, 4, 6, 8, 9, 10 });
	tp_graph_destroy(g);

	g = stencil_ok("4x4:9pt:periodic=all");
	for (int t = 0; t < 16; t++)
		ck_assert_int_eq(deg(g, t), 8);
	nbrs_are(g, 0, 8, (int32_t[]){ 1, 3, 4, 5, 7, 12, 13, 15 });
	tp_graph_destroy(g);

	g = stencil_ok("4x4x4:27pt");
	ck_assert_int_eq(deg(g, 0), 7);
	ck_assert_int_eq(deg(g, 21), 26);
	ck_assert_int_eq(deg(g, 1), 11);     /* on an edge of the cube */
	ck_assert_int_eq(deg(g, 5), 17);     /* on a face */
	tp_graph_destroy(g);

	g = stencil_ok("4x4x4:27pt:periodic=all");
	ck_assert_int_eq(tp_graph_nedges(g), 64 * 26 / 2);
	for (int t = 0; t < 64; t++)
		ck_assert_int_eq(deg(g, t), 26);
	tp_graph_destroy(g);
}
END_TEST

START_TEST(stencil_weights)
{
	tp_graph *g = stencil_ok("4x4x4:27pt:bytes=10:weights=3,2,5");
	int32_t t = 21;   /* (1,1,1) */
	ck_assert_double_eq(wt(g, t, t + 1), 30);            /* x face */
	ck_assert_double_eq(wt(g, t, t - 4), 20);            /* y face */
	ck_assert_double_eq(wt(g, t, t + 16), 50);           /* z face */
	ck_assert_double_eq(wt(g, t, t + 1 + 4), 20);        /* xy diagonal */
	ck_assert_double_eq(wt(g, t, t - 1 + 16), 30);       /* xz diagonal */
	ck_assert_double_eq(wt(g, t, t + 4 - 16), 20);       /* yz diagonal */
	ck_assert_double_eq(wt(g, t, t + 1 + 4 + 16), 20);   /* corner */
	tp_graph_destroy(g);

	g = stencil_ok("4x4:9pt:bytes=4:weights=2,0.5");
	ck_assert_double_eq(wt(g, 5, 6), 8);
	ck_assert_double_eq(wt(g, 5, 9), 2);
	ck_assert_double_eq(wt(g, 5, 10), 2);
	/* 12 x edges * 8 + 12 y edges * 2 + 18 diagonals * 2 */
	ck_assert_double_eq(tp_graph_total_bytes(g), 96 + 24 + 36);
	tp_graph_destroy(g);

	g = stencil_ok("8x8x8:7pt:bytes=4096:weights=2,1,1");
	ck_assert_double_eq(wt(g, 0, 1), 8192);
	ck_assert_double_eq(wt(g, 0, 8), 4096);
	ck_assert_double_eq(wt(g, 0, 64), 4096);
	ck_assert_double_eq(tp_graph_total_bytes(g),
			    7 * 64 * 8192.0 + 2 * 7 * 64 * 4096.0);
	tp_graph_destroy(g);

	g = stencil_ok("3x3:bytes=1.5e3");
	ck_assert_double_eq(wt(g, 0, 1), 1500);
	tp_graph_destroy(g);
}
END_TEST

START_TEST(stencil_small_periodic)
{
	/* extent 2 periodic: +1 and -1 reach the same task, summed */
	tp_graph *g = stencil_ok("2x3:5pt:periodic=x");
	nbrs_are(g, 0, 2, (int32_t[]){ 1, 2 });
	ck_assert_double_eq(wt(g, 0, 1), 2);
	ck_assert_double_eq(wt(g, 0, 2), 1);
	ck_assert_int_eq(tp_graph_nedges(g), 3 + 4);
	ck_assert_double_eq(tp_graph_total_bytes(g), 10);
	tp_graph_destroy(g);

	/* extent 1 periodic: no self edge */
	g = stencil_ok("1x4:periodic=all");
	ck_assert_int_eq(tp_graph_nedges(g), 4);
	nbrs_are(g, 0, 2, (int32_t[]){ 1, 3 });
	ck_assert_double_eq(wt(g, 0, 1), 1);
	tp_graph_destroy(g);

	g = stencil_ok("1x1");
	ck_assert_int_eq(tp_graph_ntasks(g), 1);
	ck_assert_int_eq(tp_graph_nedges(g), 0);
	tp_graph_destroy(g);
	g = stencil_ok("1x1x1:27pt:periodic=all");
	ck_assert_int_eq(tp_graph_nedges(g), 0);
	tp_graph_destroy(g);

	/* 2x2x2 fully periodic 27pt: every other task, 2^k offsets each */
	g = stencil_ok("2x2x2:27pt:periodic=all");
	ck_assert_int_eq(tp_graph_nedges(g), 28);
	ck_assert_double_eq(wt(g, 0, 1), 2);
	ck_assert_double_eq(wt(g, 0, 3), 4);
	ck_assert_double_eq(wt(g, 0, 7), 8);
	ck_assert_double_eq(tp_graph_total_bytes(g), 8 * 26 / 2);
	tp_graph_destroy(g);
}
END_TEST

/* Independent dense reference: every task, every stencil offset, wrap, drop
 * self, sum. */
static void stencil_vs_dense(const char *spec, int nd, const int *ext,
			     const bool *wrap, bool full, double bytes,
			     const double *wgt)
{
	int n = ext[0] * ext[1] * (nd == 3 ? ext[2] : 1);
	double *ref = calloc((size_t)n * (size_t)n, sizeof *ref);
	int zr = nd == 3 ? 1 : 0;
	for (int t = 0; t < n; t++) {
		int c[3] = { t % ext[0], (t / ext[0]) % ext[1],
			     nd == 3 ? t / (ext[0] * ext[1]) : 0 };
		for (int dz = -zr; dz <= zr; dz++)
			for (int dy = -1; dy <= 1; dy++)
				for (int dx = -1; dx <= 1; dx++) {
					int o[3] = { dx, dy, dz };
					int moved = !!dx + !!dy + !!dz;
					if (!moved || (!full && moved > 1))
						continue;
					int p[3];
					bool ok = true;
					double w = 1e300;
					for (int d = 0; d < nd; d++) {
						p[d] = c[d] + o[d];
						if (p[d] < 0 || p[d] >= ext[d]) {
							if (!wrap[d])
								ok = false;
							p[d] = (p[d] + ext[d]) % ext[d];
						}
						if (o[d] && wgt[d] < w)
							w = wgt[d];
					}
					if (!ok)
						continue;
					int s = p[0] + ext[0] * (p[1] + (nd == 3 ? ext[1] * p[2] : 0));
					if (s != t)
						ref[(size_t)t * n + s] += bytes * w;
				}
	}
	tp_graph *g = stencil_ok(spec);
	ck_assert_int_eq(tp_graph_ntasks(g), n);
	int64_t ne = 0;
	for (int a = 0; a < n; a++)
		for (int b = 0; b < n; b++) {
			double r = ref[(size_t)a * n + b];
			ck_assert_double_eq_tol(r, ref[(size_t)b * n + a], 1e-12);
			if (r > 0) {
				ck_assert_msg(fabs(wt(g, a, b) - r) < 1e-9,
					      "%s: %d-%d: %g, expected %g", spec,
					      a, b, wt(g, a, b), r);
				ne += a < b;
			} else {
				ck_assert_double_eq(wt(g, a, b), -1);
			}
		}
	ck_assert_int_eq(tp_graph_nedges(g), ne);
	free(ref);
	tp_graph_destroy(g);
}

START_TEST(stencil_reference)
{
	static const int sizes[][3] = { { 1, 3, 2 }, { 2, 2, 3 }, { 3, 2, 1 },
					{ 4, 3, 2 }, { 2, 1, 5 }, { 3, 3, 3 } };
	double w3[3] = { 3, 1.5, 2 }, w1[3] = { 1, 1, 1 };
	char spec[128];
	for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
		for (int mask = 0; mask < 8; mask++) {
			bool wrap[3] = { mask & 1, mask & 2, mask & 4 };
			char per[8] = "";
			int np = 0;
			for (int d = 0; d < 3; d++)
				if (wrap[d])
					per[np++] = "xyz"[d];
			const int *e = sizes[i];
			for (int full = 0; full < 2; full++) {
				snprintf(spec, sizeof spec,
					 "%dx%dx%d:%s:periodic=%s:bytes=2:weights=3,1.5,2",
					 e[0], e[1], e[2], full ? "27pt" : "7pt",
					 mask ? per : "none");
				stencil_vs_dense(spec, 3, e, wrap, full, 2, w3);
				/* one weight: no per-entry weights stored,
				 * unless offsets land on one neighbour */
				snprintf(spec, sizeof spec, "%dx%dx%d:%s:periodic=%s:bytes=2.5",
					 e[0], e[1], e[2], full ? "27pt" : "7pt",
					 mask ? per : "none");
				stencil_vs_dense(spec, 3, e, wrap, full, 2.5, w1);
				tp_graph *g = stencil_ok(spec);
				check_csr(g);
				tp_graph_destroy(g);
				if (mask < 4) {
					snprintf(spec, sizeof spec,
						 "%dx%d:%s:periodic=%s:weights=3,1.5",
						 e[0], e[1], full ? "9pt" : "5pt",
						 mask ? per : "none");
					stencil_vs_dense(spec, 2, e, wrap, full, 1, w3);
				}
			}
		}
	}
}
END_TEST

struct shown { const tp_graph *g; const double *w, *c; };

static void *show_arrays(void *arg)
{
	struct shown *s = arg;
	s->w = tp_graph_weights(s->g);
	s->c = tp_graph_coords(s->g);
	return NULL;
}

/* A stencil stores neither its one weight per entry nor its grid positions:
 * each is shown as one array, whichever thread asks first, holding the
 * stencil's bytes and positions and living until the graph goes (or, for
 * the positions, until others are set). */
START_TEST(stencil_shown_arrays)
{
	tp_graph *g = stencil_ok("32x16x8:7pt:periodic=all:bytes=7");
	struct shown s[4];
	pthread_t th[4];
	for (int i = 0; i < 4; i++) {
		s[i] = (struct shown){ g, NULL, NULL };
		ck_assert_int_eq(pthread_create(&th[i], NULL, show_arrays, &s[i]), 0);
	}
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	const double *w = tp_graph_weights(g), *c = tp_graph_coords(g);
	ck_assert_ptr_nonnull(w);
	ck_assert_ptr_nonnull(c);
	for (int i = 0; i < 4; i++) {
		ck_assert_ptr_eq(s[i].w, w);
		ck_assert_ptr_eq(s[i].c, c);
	}
	for (int64_t e = 0; e < 2 * tp_graph_nedges(g); e++)
		ck_assert(w[e] == 7.0);
	for (int32_t t = 0; t < tp_graph_ntasks(g); t++) {
		ck_assert(c[3 * t] == t % 32);
		ck_assert(c[3 * t + 1] == (t / 32) % 16);
		ck_assert(c[3 * t + 2] == t / 512);
	}
	const int32_t *adj;
	const double *b;
	ck_assert_int_eq(tp_graph_neighbors(g, 100, &adj, &b), 6);
	ck_assert_ptr_eq(b, w + tp_graph_xadj(g)[100]);
	double one[2 * 4096];
	for (int i = 0; i < 2 * 4096; i++)
		one[i] = -i;
	ck_assert_int_eq(tp_graph_set_coords(g, 2, one, NULL), 0);
	ck_assert_int_eq(tp_graph_coord_dims(g), 2);
	ck_assert(tp_graph_coords(g)[5] == -5);
	tp_graph_destroy(g);
}
END_TEST

START_TEST(stencil_expect)
{
	tp_graph *g = NULL;
	tp_error err = { 0 };
	ck_assert_int_eq(tp_graph_from_stencil(&g, "64x32x32:7pt", 1000, &err), TP_EINVAL);
	ck_assert_ptr_null(g);
	ck_assert_str_eq(err.msg, "stencil 64x32x32: 65536 tasks, but the job has 1000 tasks");
	ck_assert_int_eq(tp_graph_from_stencil(&g, "8x4x2:periodic=x", 64, &err), 0);
	ck_assert_int_eq(tp_graph_ntasks(g), 64);
	tp_graph_destroy(g);
}
END_TEST

static void stencil_bad(const char *spec, const char *frag)
{
	tp_graph *g = (tp_graph *)1;
	tp_error err = { 0 };
	int rc = tp_graph_from_stencil(&g, spec, 0, &err);
	ck_assert_msg(rc == TP_EINVAL, "%s: rc %d", spec ? spec : "(null)", rc);
	ck_assert_ptr_null(g);
	ck_assert_msg(strstr(err.msg, frag) != NULL, "%s: error \"%s\" lacks \"%s\"",
		      spec ? spec : "(null)", err.msg, frag);
	ck_assert_msg(msg_starts(&err, "stencil"), "%s", err.msg);
}

START_TEST(stencil_errors)
{
	stencil_bad("", "empty spec");
	stencil_bad(NULL, "empty spec");
	stencil_bad("64", "1 dimension, expected 2 or 3");
	stencil_bad("4x4x4x4", "more than 3 dimensions");
	stencil_bad("0x4", "stencil '0x4': dimension 1 (x) is zero");
	stencil_bad("4x4x0:7pt", "dimension 3 (z) is zero");
	stencil_bad("-4x4", "dimension 1 (x) '-4' is not a positive integer");
	stencil_bad("4xabc", "dimension 2 (y) 'abc' is not a positive integer");
	stencil_bad("4x", "dimension 2 (y) '' is not a positive integer");
	stencil_bad("4x 4", "' 4' is not a positive integer");
	stencil_bad("4.5x4", "'4.5' is not a positive integer");
	stencil_bad(":5pt", "dimension 1 (x) '' is not a positive integer");
	stencil_bad("65536x65536", "too many tasks (more than 2147483647)");
	stencil_bad("2048x1024x1024", "too many tasks");
	stencil_bad("99999999999999999999999x2", "too many tasks");
	stencil_bad("4x4:7pt", "7pt needs a 3-D grid, this one is 2-D (use 5pt or 9pt)");
	stencil_bad("4x4:27pt", "27pt needs a 3-D grid");
	stencil_bad("4x4x4:9pt", "9pt needs a 2-D grid, this one is 3-D (use 7pt or 27pt)");
	stencil_bad("4x4x4:5pt", "5pt needs a 2-D grid");
	stencil_bad("4x4:13pt", "unknown field '13pt'");
	stencil_bad("4x4:5PT", "unknown field '5PT'");
	stencil_bad("4x4:periodic=z", "periodic=z: axis z, but the grid has only 2 dimensions");
	stencil_bad("4x4:periodic=q", "unknown axis 'q'");
	stencil_bad("4x4:periodic=", "periodic= needs axes");
	stencil_bad("4x4:periodic=xx", "axis x given twice");
	stencil_bad("4x4:bytes=abc", "bytes=abc is not a positive number");
	stencil_bad("4x4:bytes=-1", "bytes=-1 is not a positive number");
	stencil_bad("4x4:bytes=0", "bytes=0 is not a positive number");
	stencil_bad("4x4:bytes=nan", "is not a positive number");
	stencil_bad("4x4:bytes=inf", "is not a positive number");
	stencil_bad("4x4:bytes=1e999", "is not a positive number");
	stencil_bad("4x4:bytes=12k", "is not a positive number");
	stencil_bad("4x4:bytes=", "is not a positive number");
	stencil_bad("4x4:weights=1,2,3", "more values than the grid's 2 dimensions");
	stencil_bad("4x4x4:weights=1,2", "2 values, but the grid has 3 dimensions");
	stencil_bad("4x4:weights=1,x", "value 2 'x' is not a positive number");
	stencil_bad("4x4:weights=1,0", "value 2 '0' is not a positive number");
	stencil_bad("4x4:weights=1,", "value 2 '' is not a positive number");
	stencil_bad("4x4:foo=1", "unknown option 'foo' (periodic=, bytes=, weights=, order=)");
	stencil_bad("4x4:order=zyx", "order=zyx: unknown order (x: the first dimension fastest, "
		    "the default; mpi: the last, as MPI_Cart_create numbers ranks)");
	stencil_bad("4x4:order=", "order=: unknown order");
	stencil_bad("4x4:order=MPI", "order=MPI: unknown order");
	stencil_bad("4x4:order=mpi:order=mpi", "option order= given twice");
	stencil_bad("8x2:order=mpi:periodic=z", "axis z, but the grid has only 2 dimensions");
	stencil_bad("4x4::5pt", "empty field");
	stencil_bad("4x4:5pt:", "empty field");
	stencil_bad("4x4:5pt:9pt", "points given twice");
	stencil_bad("4x4:bytes=1:bytes=2", "option bytes= given twice");
	stencil_bad("4x4:periodic=x:periodic=y", "option periodic= given twice");

	tp_error err = { 0 };
	ck_assert_int_eq(tp_graph_from_stencil(NULL, "4x4", 0, &err), TP_EINVAL);
	/* NULL err is fine */
	tp_graph *g = NULL;
	ck_assert_int_eq(tp_graph_from_stencil(&g, "4x0", 0, NULL), TP_EINVAL);
	ck_assert_ptr_null(g);
}
END_TEST

/* Each weights= value was once cut at 63 characters, so trailing
 * junk was ignored and a 64-digit number lost a digit. */
START_TEST(stencil_weights_long_values)
{
	char ones[64], spec[256];
	memset(ones, '1', 63);
	ones[63] = '\0';
	snprintf(spec, sizeof spec, "4x2:weights=%sJUNK,1", ones);
	stencil_bad(spec, "value 1 '1111111111111111111111111111111111111111...' is not a positive number");
	snprintf(spec, sizeof spec, "4x2:weights=%s1e-60,1", ones);   /* 64 digits */
	tp_graph *g = NULL;
	tp_error err = { 0 };
	ck_assert_msg(tp_graph_from_stencil(&g, spec, 8, &err) == 0, "%s", err.msg);
	tp_graph_destroy(g);
	snprintf(spec, sizeof spec, "4x2:weights=%s1,%s1", ones, ones);
	ck_assert_msg(tp_graph_from_stencil(&g, spec, 8, &err) == 0, "%s", err.msg);
	/* both weights 1.11e63: every edge carries all 64 digits */
	const double *w;
	const int32_t *adj;
	ck_assert_int_eq(tp_graph_neighbors(g, 0, &adj, &w), 2);
	ck_assert(w[0] == strtod("11111111111111111111111111111111111111111111111111111111111111111", NULL) / 10);
	tp_graph_destroy(g);
	/* bytes times weights, and their sum, must stay finite */
	stencil_bad("4x4:bytes=1e300:weights=1e10,1e10", "bytes times weights is not a finite number");
	stencil_bad("64x64:bytes=1e305", "the bytes of all edges add up to more than");
}
END_TEST

/* Byte counts that are each finite but add up to infinity were
 * accepted (NaN in graph mapping, "-nan%" in tables). */
START_TEST(edges_infinite_sum)
{
	int32_t u[] = { 0, 1, 0 }, v[] = { 1, 0, 1 };
	double b[] = { 1e308, 1e308, 1e308 };
	tp_graph *g = (tp_graph *)1;
	tp_error err = { 0 };
	ck_assert_int_eq(tp_graph_from_edges(&g, 2, 3, u, v, b, "rep", &err), TP_EINVAL);
	ck_assert_ptr_null(g);
	ck_assert_str_eq(err.msg, "rep: the byte counts add up to more than "
			 "1.79769e+308 (repeated pairs?)");
	/* distinct pairs whose total overflows */
	int32_t u2[] = { 0, 1 }, v2[] = { 1, 2 };
	ck_assert_int_eq(tp_graph_from_edges(&g, 3, 2, u2, v2, b, "two", &err), TP_EINVAL);
	tp_assert_err_has(&err, "two: the byte counts add up to more than");
	const char *json = "{\"tasks\": 2, \"edges\": [[0, 1, 1e308], [1, 0, 1e308]]}";
	ck_assert_int_eq(tp_graph_from_json_string(&g, json, strlen(json), "in.json", 0, &err),
			 TP_EINVAL);
	tp_assert_err_has(&err, "in.json: the byte counts add up to more than");
	const char *gm = "{\"tasks\": 2, \"traffic\": [[0, 1, 1e308], [0, 1, 1e308]]}";
	ck_assert_int_eq(tp_graph_from_gpu_matrix_string(&g, gm, strlen(gm), "gm.json", 2, &err),
			 TP_EINVAL);
	tp_assert_err_has(&err, "gm.json: the byte counts add up to more than");
	const char *csv = "0,1,1e308\n1,0,1e308\n";
	ck_assert_int_eq(tp_graph_from_gpu_matrix_string(&g, csv, strlen(csv), "gm.csv", 2, &err),
			 TP_EINVAL);
	tp_assert_err_has(&err, "gm.csv: the byte counts add up to more than");
}
END_TEST

/* ---- JSON graphs ---- */

static tp_graph *json_file_ok(const char *name, int64_t expect)
{
	char path[512];
	snprintf(path, sizeof path, GDATA "%s", name);
	tp_graph *g = NULL;
	tp_error err = { 0 };
	int rc = tp_graph_from_json_file(&g, path, expect, &err);
	ck_assert_msg(rc == 0, "%s: %s", name, err.msg);
	check_csr(g);
	return g;
}

static tp_graph *json_str_ok(const char *text)
{
	tp_graph *g = NULL;
	tp_error err = { 0 };
	int rc = tp_graph_from_json_string(&g, text, strlen(text), "s", 0, &err);
	ck_assert_msg(rc == 0, "%s: %s", text, err.msg);
	check_csr(g);
	return g;
}

START_TEST(json_ring)
{
	tp_graph *g = json_file_ok("ring8.json", 8);
	ck_assert_int_eq(tp_graph_ntasks(g), 8);
	ck_assert_int_eq(tp_graph_nedges(g), 8);
	ck_assert_double_eq(tp_graph_total_bytes(g), 800);
	for (int t = 0; t < 8; t++)
		ck_assert_int_eq(deg(g, t), 2);
	nbrs_are(g, 0, 2, (int32_t[]){ 1, 7 });
	ck_assert_double_eq(wt(g, 7, 0), 100);
	ck_assert_int_eq(tp_graph_coord_dims(g), 0);
	ck_assert_int_eq(tp_graph_grid_dims(g, NULL), 0);
	tp_graph_destroy(g);

	/* object form, both directions summed, default bytes */
	g = json_file_ok("ring8-objects.json", 0);
	ck_assert_int_eq(tp_graph_nedges(g), 8);
	ck_assert_double_eq(wt(g, 0, 1), 100);
	ck_assert_double_eq(wt(g, 0, 7), 1);
	ck_assert_double_eq(tp_graph_total_bytes(g), 701);
	tp_graph_destroy(g);
}
END_TEST

START_TEST(json_grid_coords)
{
	tp_graph *g = json_file_ok("grid4x4.json", 16);
	ck_assert_int_eq(tp_graph_nedges(g), 24);
	ck_assert_double_eq(tp_graph_total_bytes(g), 12 * 2048 + 12 * 1024);
	nbrs_are(g, 5, 4, (int32_t[]){ 1, 4, 6, 9 });
	ck_assert_double_eq(wt(g, 5, 6), 2048);
	ck_assert_double_eq(wt(g, 5, 9), 1024);
	ck_assert_int_eq(tp_graph_coord_dims(g), 2);
	const double *c = tp_graph_coords(g);
	ck_assert_double_eq(c[2 * 7 + 0], 3);
	ck_assert_double_eq(c[2 * 7 + 1], 1);
	tp_graph_destroy(g);
}
END_TEST

START_TEST(json_duplicates_and_forms)
{
	tp_graph *g = json_file_ok("dup.json", 0);
	ck_assert_int_eq(tp_graph_nedges(g), 2);
	ck_assert_double_eq(wt(g, 0, 1), 16.5);
	ck_assert_double_eq(wt(g, 1, 2), 7);
	tp_graph_destroy(g);

	/* [u, v] defaults to 1 byte; integral numbers accepted as ids */
	g = json_str_ok("{\"tasks\": 3.0, \"edges\": [[0, 1], [1.0, 2, 2.5], [1, 0]],"
			" \"directed\": false, \"comment\": \"ignored\"}");
	ck_assert_int_eq(tp_graph_ntasks(g), 3);
	ck_assert_double_eq(wt(g, 0, 1), 2);
	ck_assert_double_eq(wt(g, 2, 1), 2.5);
	tp_graph_destroy(g);

	/* mixed forms in one list, zero bytes allowed */
	g = json_str_ok("{\"tasks\": 4, \"edges\": [{\"dst\": 3, \"src\": 2}, [0, 3, 0],"
			" {\"src\": 3, \"dst\": 2, \"bytes\": 1e3}]}");
	ck_assert_double_eq(wt(g, 2, 3), 1001);
	ck_assert_double_eq(wt(g, 0, 3), 0);
	tp_graph_destroy(g);

	/* no edges at all; coordinates only */
	g = json_str_ok("{\"tasks\": 2, \"coords\": [[0.5, 1, 2], [3, 4, 5]]}");
	ck_assert_int_eq(tp_graph_nedges(g), 0);
	ck_assert_int_eq(tp_graph_coord_dims(g), 3);
	ck_assert_double_eq(tp_graph_coords(g)[0], 0.5);
	tp_graph_destroy(g);
	g = json_str_ok("{\"tasks\": 2, \"edges\": []}");
	ck_assert_int_eq(tp_graph_nedges(g), 0);
	tp_graph_destroy(g);

	/* a terminating NUL counted in len is tolerated */
	const char *t = "{\"tasks\": 2, \"edges\": [[0, 1, 3]]}";
	tp_error err = { 0 };
	ck_assert_int_eq(tp_graph_from_json_string(&g, t, strlen(t) + 1, NULL, 2, &err), 0);
	ck_assert_double_eq(wt(g, 0, 1), 3);
	tp_graph_destroy(g);
}
END_TEST

static bool same_graph(const tp_graph *a, const tp_graph *b);

/* The same graph, merged duplicates included. */
static void assert_same_graph(const tp_graph *a, const tp_graph *b)
{
	ck_assert(same_graph(a, b));
	ck_assert_int_eq(tp_graph_merged_duplicates(a), tp_graph_merged_duplicates(b));
}

/* The common shape is read without json-c (tp__graph_from_json_fast), and
 * gives the graph json-c's reading gives: random graphs with repeated
 * pairs both ways, [u, v] and [u, v, bytes], odd white space, the keys in
 * any order, "directed" both ways, against the same text with one key
 * more (which only json-c reads), as strings and as files.  Whatever is
 * not the common shape, valid or not, is left to json-c (1), so its
 * messages stay. */
START_TEST(json_fast_path_same_graph)
{
	uint64_t x = 12345;
	for (int round = 0; round < 6; round++) {
		int nt = 50 + 37 * round, ne = 40 * nt;
		size_t cap = (size_t)ne * 48 + 256, k = 0;
		char *t = malloc(cap), *slow = malloc(cap + 64);
		const char *ws[] = { "", " ", "\n", "\t ", "\r\n  " };
		const char *dir = round % 3 == 0 ? "" : round % 3 == 1 ? ", \"directed\": true"
								: ",\"directed\":false";
		if (round % 2)
			k += (size_t)sprintf(t + k, "{%s\"edges\"%s:%s[", ws[round % 5], ws[(round + 1) % 5],
					     ws[(round + 2) % 5]);
		else
			k += (size_t)sprintf(t + k, "{\"tasks\": %d%s, \"edges\": [", nt, dir);
		for (int e = 0; e < ne; e++) {
			x = x * 6364136223846793005ULL + 1442695040888963407ULL;
			int u = (int)((x >> 33) % (uint64_t)nt), v = (int)((x >> 13) % (uint64_t)nt);
			if (u == v)
				v = (v + 1) % nt;
			unsigned b = (unsigned)(x >> 50);
			if (b % 4 == 0)
				k += (size_t)sprintf(t + k, "%s[%d,%s%d]", e ? "," : "", u, ws[b % 5], v);
			else
				k += (size_t)sprintf(t + k, "%s%s[ %d , %d , %u ]", e ? "," : "",
						     ws[e % 5], u, v, b);
		}
		if (round % 2)
			k += (size_t)sprintf(t + k, "]%s, \"tasks\" : %d%s }\n", ws[round % 5], nt, dir);
		else
			k += (size_t)sprintf(t + k, "]}");
		/* the same with a key json-c ignores */
		sprintf(slow, "{\"name\": \"x\",%s", t + 1);
		tp_graph *f = NULL, *j = NULL, *ff = NULL, *jf = NULL;
		tp_error err;
		ck_assert_msg(tp__graph_from_json_fast(t, k, "t", 0, &f, &err) == 0, "%s", err.msg);
		ck_assert_int_eq(tp__graph_from_json_fast(slow, strlen(slow), "t", 0, &j, NULL), 1);
		ck_assert_ptr_null(j);
		ck_assert_msg(tp_graph_from_json_string(&j, slow, strlen(slow), "t", nt, &err) == 0,
			      "%s", err.msg);
		assert_same_graph(f, j);
		if (round % 3 == 1)
			ck_assert_int_gt(tp_graph_merged_duplicates(f), 0);
		/* files: both paths */
		char *pf = tp_test_tmpfile(t), *ps = tp_test_tmpfile(slow);
		ck_assert_int_eq(tp_graph_from_json_file(&ff, pf, nt, NULL), 0);
		ck_assert_int_eq(tp_graph_from_json_file(&jf, ps, 0, NULL), 0);
		assert_same_graph(ff, j);
		assert_same_graph(jf, j);
		unlink(pf);
		unlink(ps);
		free(pf);
		free(ps);
		tp_graph_destroy(f);
		tp_graph_destroy(j);
		tp_graph_destroy(ff);
		tp_graph_destroy(jf);
		free(t);
		free(slow);
	}

	/* not the common shape: json-c's, with its message where it is wrong */
	static const struct {
		const char *text;
		const char *msg;   /* NULL: valid */
	} other[] = {
		{ "{\"tasks\": 2, \"edges\": [[0, 1, 2.5]]}", NULL },
		{ "{\"tasks\": 2, \"edges\": [[0, 1, 1e3]]}", NULL },
		{ "{\"tasks\": 2.0, \"edges\": [[0, 1]]}", NULL },
		{ "{\"tasks\": 2, \"edges\": [{\"src\": 0, \"dst\": 1}]}", NULL },
		{ "{\"tasks\": 2, \"edges\": [[0, 1]], \"coords\": [[0], [1]]}", NULL },
		{ "{\"tasks\": 2, \"edges\": [[0, 1]], \"tasks\": 2}", NULL },
		{ "{\"tasks\": 2, \"edges\": [[0, 1,]]}", "JSON parse error" },
		{ "{\"tasks\": 02, \"edges\": [[0, 1]]}", "JSON parse error" },
		{ "{\"tasks\": 2, \"edges\": [[0, 1]]} x", "unexpected data after" },
		{ "{\"tasks \": 2, \"edges\": [[0, 1]]}", "missing \"tasks\"" },
		{ "{\"tasks\": 2, \"edges\": [[0, 2]]}", "task 2 does not exist" },
		{ "{\"tasks\": 2, \"edges\": [[0, 1, -3]]}", "negative" },
		{ "{\"tasks\": 2, \"edges\": [[0, 1, 2, 3, 4]]}", "has 5 elements" },
		{ "{\"tasks\": 2, \"edges\": [[0, 1, 2, 3]]}", NULL },
		{ "{\"tasks\": 0, \"edges\": []}", "expected 1.." },
		{ "{\"tasks\": 2, \"edges\": [[0, 1]], \"directed\": 1}", "\"directed\" is" },
		{ "{\"tasks\": 2, \"edges\": [[0, 99999999999]]}", "does not exist" },
		{ "{\"tasks\": 2, \"edges\": [[0, 1]]", "unexpected end of data" },
	};
	for (size_t i = 0; i < sizeof other / sizeof other[0]; i++) {
		tp_graph *g = NULL;
		tp_error err;
		size_t len = strlen(other[i].text);
		ck_assert_msg(tp__graph_from_json_fast(other[i].text, len, "s", 0, &g, &err) == 1,
			      "fast path took %s", other[i].text);
		int rc = tp_graph_from_json_string(&g, other[i].text, len, "s", 0, &err);
		if (other[i].msg) {
			ck_assert_msg(rc == TP_EINVAL, "%s: %d", other[i].text, rc);
			tp_assert_err_has(&err, other[i].msg);
		} else {
			ck_assert_msg(rc == 0, "%s: %s", other[i].text, err.msg);
			tp_graph_destroy(g);
		}
	}
	/* the job's task count, checked by json-c's path */
	tp_graph *g = NULL;
	tp_error err;
	ck_assert_int_eq(tp__graph_from_json_fast("{\"tasks\": 2, \"edges\": []}", 26, "s", 3,
						  &g, NULL), 1);
	ck_assert_int_eq(tp_graph_from_json_string(&g, "{\"tasks\": 2, \"edges\": []}", 26,
						   "s", 3, &err), TP_EINVAL);
	tp_assert_err_has(&err, "but the job has 3 tasks");
}
END_TEST

/* A ring of n tasks, one edge per line: crosses several 1 MiB chunks. */
static char *big_ring(int n, size_t *len)
{
	size_t cap = (size_t)n * 40 + 64, k = 0;
	char *s = malloc(cap);
	k += (size_t)sprintf(s + k, "{\"tasks\": %d,\n\"edges\": [\n", n);
	for (int i = 0; i < n; i++)
		k += (size_t)sprintf(s + k, "[%d, %d, %d]%s\n", i, (i + 1) % n,
				     i % 7, i + 1 < n ? "," : "");
	k += (size_t)sprintf(s + k, "]}\n");
	*len = k;
	return s;
}

START_TEST(json_big_chunks)
{
	size_t len;
	int n = 70000;   /* about 1.4 MiB: two 1 MiB chunks */
	char *s = big_ring(n, &len);
	ck_assert_uint_gt(len, 1u << 20);
	tp_graph *g = NULL;
	tp_error err = { 0 };
	ck_assert_int_eq(tp_graph_from_json_string(&g, s, len, "ring", n, &err), 0);
	ck_assert_int_eq(tp_graph_nedges(g), n);
	ck_assert_double_eq(wt(g, 0, n - 1), (n - 1) % 7);
	check_csr(g);
	tp_graph_destroy(g);

	/* a file truncated in its second 1 MiB chunk */
	char *path = tp_test_tmpfile("");
	FILE *f = fopen(path, "w");
	fwrite(s, 1, len - 100, f);
	fclose(f);
	ck_assert_int_eq(tp_graph_from_json_file(&g, path, 0, &err), TP_EINVAL);
	tp_assert_err_has(&err, "unexpected end of data");
	ck_assert(msg_starts(&err, path));

	/* a syntax error on a known line in a later chunk */
	char *bad = strstr(s, "\n[65000, ");
	ck_assert_ptr_nonnull(bad);
	ck_assert_uint_gt((size_t)(bad - s), 1u << 20);   /* in the second chunk */
	bad[2] = 'x';   /* line 65003: header 2 lines, edge i on line i + 3 */
	ck_assert_int_eq(tp_graph_from_json_string(&g, s, len, "ring", 0, &err), TP_EINVAL);
	tp_assert_err_has(&err, "ring: line 65003: JSON parse error");
	unlink(path);
	free(path);
	free(s);
}
END_TEST

static void json_file_bad(const char *name, int code, const char *frag)
{
	char path[512];
	snprintf(path, sizeof path, GDATA "%s", name);
	tp_graph *g = (tp_graph *)1;
	tp_error err = { 0 };
	int rc = tp_graph_from_json_file(&g, path, 0, &err);
	ck_assert_msg(rc == code, "%s: rc %d, expected %d (%s)", name, rc, code, err.msg);
	ck_assert_ptr_null(g);
	ck_assert_msg(msg_starts(&err, path), "%s: \"%s\"", name, err.msg);
	ck_assert_msg(strstr(err.msg, frag) != NULL, "%s: error \"%s\" lacks \"%s\"",
		      name, err.msg, frag);
}

static void json_str_bad(const char *text, const char *frag)
{
	tp_graph *g = (tp_graph *)1;
	tp_error err = { 0 };
	int rc = tp_graph_from_json_string(&g, text, strlen(text), "in.json", 0, &err);
	ck_assert_msg(rc == TP_EINVAL, "%s: rc %d", text, rc);
	ck_assert_ptr_null(g);
	ck_assert_msg(msg_starts(&err, "in.json: "), "%s", err.msg);
	ck_assert_msg(strstr(err.msg, frag) != NULL, "%s: error \"%s\" lacks \"%s\"",
		      text, err.msg, frag);
}

START_TEST(json_bad_files)
{
	json_file_bad("no-such-file.json", TP_ENOENT, "cannot read: No such file or directory");
	json_file_bad("", TP_EIO, "not a regular file (a directory)");
	json_file_bad("bad-empty.json", TP_EINVAL, ": empty file");
	json_file_bad("bad-blank.json", TP_EINVAL, ": empty file");
	json_file_bad("bad-truncated.json", TP_EINVAL, "line 4: unexpected end of data");
	json_file_bad("bad-syntax.json", TP_EINVAL, "line 2: JSON parse error");
	json_file_bad("bad-toplevel.json", TP_EINVAL, "top level is an array, expected an object");
	json_file_bad("bad-tasks-string.json", TP_EINVAL, "\"tasks\" is a string \"8\", expected a positive integer");
	json_file_bad("bad-edges-object.json", TP_EINVAL, "\"edges\" is an object, expected an array");
	json_file_bad("bad-arity.json", TP_EINVAL, "edge 1 has 5 elements");
	json_file_bad("bad-bytes-string.json", TP_EINVAL, "edge 0: bytes is a string \"lots\", expected a number");
	json_file_bad("bad-range.json", TP_EINVAL, "bad-range.json: edge 3: task 4 does not exist (tasks: 4)");
	json_file_bad("bad-selfloop.json", TP_EINVAL, "edge 1: self-loop on task 2");
	json_file_bad("bad-coords-rows.json", TP_EINVAL, "coords row 2 has 1 values, row 0 has 2");

	tp_graph *g = NULL;
	tp_error err = { 0 };
	ck_assert_int_eq(tp_graph_from_json_file(&g, GDATA "ring8.json", 9, &err), TP_EINVAL);
	tp_assert_err_has(&err, "ring8.json: 8 tasks, but the job has 9 tasks");
	ck_assert_ptr_null(g);
	ck_assert_int_eq(tp_graph_from_json_file(&g, NULL, 0, &err), TP_EINVAL);
	ck_assert_int_eq(tp_graph_from_json_file(NULL, GDATA "ring8.json", 0, &err), TP_EINVAL);

	/* unreadable (meaningless as root) */
	if (geteuid() != 0) {
		char *p = tp_test_tmpfile("{\"tasks\": 1}");
		chmod(p, 0);
		ck_assert_int_eq(tp_graph_from_json_file(&g, p, 0, &err), TP_EIO);
		tp_assert_err_has(&err, "cannot open: Permission denied");
		unlink(p);
		free(p);
	}

	/* larger than 1 GiB (sparse) */
	char *p = tp_test_tmpfile("{");
	ck_assert_int_eq(truncate(p, (1LL << 30) + 1), 0);
	ck_assert_int_eq(tp_graph_from_json_file(&g, p, 0, &err), TP_EINVAL);
	tp_assert_err_has(&err, "more than the 1 GiB limit");
	ck_assert(msg_starts(&err, p));
	unlink(p);
	free(p);

	/* trailing garbage after the object, on line 2 */
	p = tp_test_tmpfile("{\"tasks\": 1}\n  x\n");
	ck_assert_int_eq(tp_graph_from_json_file(&g, p, 0, &err), TP_EINVAL);
	tp_assert_err_has(&err, "line 2: unexpected data after the JSON object");
	unlink(p);
	free(p);
}
END_TEST

START_TEST(json_bad_strings)
{
	json_str_bad("", "empty input");
	json_str_bad("123", "top level is not a JSON object");
	json_str_bad("\"x\"", "top level is a string");
	json_str_bad("{\"tasks\": 2,", "line 1: unexpected end of data");
	json_str_bad("{\"tasks\": 2, \"edges\": [[0,1,],]}", "JSON parse error");
	json_str_bad("{\"tasks\": 2} {}", "unexpected data after the JSON object");
	json_str_bad("{\"tasks\": 2, /* c */ \"edges\": []}", "JSON parse error");
	json_str_bad("{\"edges\": []}", "missing \"tasks\"");
	json_str_bad("{\"tasks\": -3}", "\"tasks\" is -3, expected 1..2147483647");
	json_str_bad("{\"tasks\": 0}", "\"tasks\" is 0, expected 1..");
	json_str_bad("{\"tasks\": 2.5}", "\"tasks\" is 2.5, expected a positive integer");
	json_str_bad("{\"tasks\": 1e10}", "\"tasks\" is 1e10, expected 1..");
	json_str_bad("{\"tasks\": null}", "\"tasks\" is null, expected a positive integer");
	json_str_bad("{\"tasks\": true}", "\"tasks\" is a boolean true");
	json_str_bad("{\"tasks\": 2, \"edges\": 5}", "\"edges\" is an integer, expected an array");
	json_str_bad("{\"tasks\": 2, \"exchanges\": 0}", "\"exchanges\" is 0, expected a number from 1");
	json_str_bad("{\"tasks\": 2, \"exchanges\": \"4\"}", "\"exchanges\" is \"4\", expected a number");
	json_str_bad("{\"tasks\": 2, \"exchanges\": 1e300}", "\"exchanges\" is 1e300, expected");
	json_str_bad("{\"tasks\": 2, \"edges\": null}", "\"edges\" is null, expected an array");
	json_str_bad("{\"tasks\": 2, \"edges\": [[0]]}", "edge 0 has 1 elements");
	json_str_bad("{\"tasks\": 2, \"edges\": [[]]}", "edge 0 has 0 elements");
	json_str_bad("{\"tasks\": 2, \"edges\": [7]}", "edge 0 is an integer, expected [src, dst, bytes]");
	json_str_bad("{\"tasks\": 2, \"edges\": [[0, 1, -5]]}", "edge 0: bytes -5 is negative");
	json_str_bad("{\"tasks\": 2, \"edges\": [[0, 1, null]]}", "edge 0: bytes is null");
	json_str_bad("{\"tasks\": 2, \"edges\": [[0, 1, 8, -1]]}", "edge 0: rounds -1 is negative");
	json_str_bad("{\"tasks\": 2, \"edges\": [[0, 1, 8, null]]}", "edge 0: rounds is null");
	json_str_bad("{\"tasks\": 2, \"edges\": [[0, 1, 8, 1e300]]}", "edge 0: rounds 1e+300 is over 1e12");
	json_str_bad("{\"tasks\": 2, \"edges\": [[0, 1, 8, \"3\"]]}", "edge 0: rounds is a string \"3\"");
	json_str_bad("{\"tasks\": 2, \"edges\": [[0, 1, 8, 3, 1]]}", "edge 0 has 5 elements");
	json_str_bad("{\"tasks\": 2, \"edges\": [{\"src\": 0, \"dst\": 1, \"rounds\": 1e999}]}",
		     "edge 0: rounds 1e999 is not finite");
	json_str_bad("{\"tasks\": 2, \"edges\": [[0, 1, true]]}", "bytes is a boolean true");
	json_str_bad("{\"tasks\": 2, \"edges\": [[0, 1, 1e999]]}", "edge 0: bytes 1e999 is not finite");
	json_str_bad("{\"tasks\": 2, \"edges\": [[0, 1, NaN]]}", "edge 0: bytes NaN is not finite");
	json_str_bad("{\"tasks\": 2, \"edges\": [[0, -1, 1]]}", "edge 0: task -1 does not exist (tasks: 2)");
	json_str_bad("{\"tasks\": 2, \"edges\": [[0, 1], [0, 5000000000]]}", "edge 1: task 5000000000 does not exist");
	json_str_bad("{\"tasks\": 2, \"edges\": [[0.5, 1]]}", "edge 0: src is 0.5, expected an integer task number");
	json_str_bad("{\"tasks\": 2, \"edges\": [[0, \"1\"]]}", "edge 0: dst is a string \"1\"");
	json_str_bad("{\"tasks\": 2, \"edges\": [[null, 1]]}", "edge 0: src is null");
	json_str_bad("{\"tasks\": 2, \"edges\": [[1, 1]]}", "edge 0: self-loop on task 1");
	json_str_bad("{\"tasks\": 2, \"edges\": [{\"src\": 0}]}", "edge 0: missing \"dst\"");
	json_str_bad("{\"tasks\": 2, \"edges\": [{\"dst\": 0}]}", "edge 0: missing \"src\"");
	json_str_bad("{\"tasks\": 2, \"edges\": [{\"src\": 0, \"dst\": 1, \"byte\": 9}]}",
		     "edge 0: unknown key \"byte\" (src, dst, bytes, rounds)");
	json_str_bad("{\"tasks\": 2, \"edges\": [{\"src\": 0, \"dst\": 1, \"bytes\": null}]}",
		     "edge 0: bytes is null");
	json_str_bad("{\"tasks\": 2, \"edges\": [{\"src\": 0, \"dst\": 1, \"bytes\": \"9\"}]}",
		     "bytes is a string \"9\"");
	json_str_bad("{\"tasks\": 2, \"directed\": \"yes\"}", "\"directed\" is a string, expected true or false");
	json_str_bad("{\"tasks\": 2, \"coords\": {}}", "\"coords\" is an object, expected an array");
	json_str_bad("{\"tasks\": 2, \"coords\": [[0, 0]]}", "\"coords\" has 1 rows, expected 2 (one per task)");
	json_str_bad("{\"tasks\": 2, \"coords\": [[0, 0], 5]}", "coords row 1 is an integer, expected an array");
	json_str_bad("{\"tasks\": 2, \"coords\": [[], []]}", "coords row 0 has 0 values, expected 1..6");
	json_str_bad("{\"tasks\": 1, \"coords\": [[1,2,3,4,5,6,7]]}", "coords row 0 has 7 values, expected 1..6");
	json_str_bad("{\"tasks\": 2, \"coords\": [[0, 0], [1, 2, 3]]}", "coords row 1 has 3 values, row 0 has 2");
	json_str_bad("{\"tasks\": 2, \"coords\": [[0, 0], [1, \"a\"]]}",
		     "coords row 1, value 1 is a string \"a\", expected a finite number");
	json_str_bad("{\"tasks\": 2, \"coords\": [[0, 0], [1, 1e999]]}", "coords row 1, value 1 is 1e999, expected a finite");
	json_str_bad("{\"tasks\": 4294967296}", "\"tasks\" is 4294967296, expected 1..2147483647");
	json_str_bad("{\"tasks\": 2, \"edges\": [[0, {}]]}", "edge 0: dst is an object, expected an integer task number");

	/* NUL inside the buffer */
	const char txt[] = "{\"tasks\": 2}\0 garbage";
	tp_graph *g = (tp_graph *)1;
	tp_error err = { 0 };
	ck_assert_int_eq(tp_graph_from_json_string(&g, txt, sizeof txt - 1, "n", 0, &err), TP_EINVAL);
	tp_assert_err_has(&err, "n: line 1: NUL byte in the input (byte 12)");
	ck_assert_ptr_null(g);
	/* what defaults to "JSON graph"; NULL buffer is empty */
	ck_assert_int_eq(tp_graph_from_json_string(&g, NULL, 0, NULL, 0, &err), TP_EINVAL);
	ck_assert_str_eq(err.msg, "JSON graph: empty input");
	ck_assert_int_eq(tp_graph_from_json_string(&g, "{\"tasks\": 4}", 12, "j", 5, &err), TP_EINVAL);
	ck_assert_str_eq(err.msg, "j: 4 tasks, but the job has 5 tasks");
	ck_assert_int_eq(tp_graph_from_json_string(NULL, "{}", 2, "j", 0, &err), TP_EINVAL);
}
END_TEST

/* Duplicate edges are summed, and the count of merged ones is kept so that
 * callers can say so once. */
START_TEST(merged_duplicates)
{
	tp_graph *g = NULL;
	tp_error err;
	const char *t = "{\"tasks\":4,\"edges\":[[0,1,5],[1,0,5],[2,3,1],[0,1,1]]}";
	ck_assert_int_eq(tp_graph_from_json_string(&g, t, strlen(t), "d", 4, &err), 0);
	ck_assert_int_eq(tp_graph_nedges(g), 2);
	ck_assert_int_eq(tp_graph_merged_duplicates(g), 2);
	ck_assert(tp_graph_total_bytes(g) == 12.0);
	tp_graph_destroy(g);
	/* directed: u->v plus v->u is not a duplicate, a repeated u->v is */
	t = "{\"tasks\":4,\"directed\":true,\"edges\":[[0,1,5],[1,0,5],[2,3,1],[2,3,1]]}";
	ck_assert_int_eq(tp_graph_from_json_string(&g, t, strlen(t), "d", 4, &err), 0);
	ck_assert_int_eq(tp_graph_nedges(g), 2);
	ck_assert_int_eq(tp_graph_merged_duplicates(g), 1);
	tp_graph_destroy(g);
	t = "{\"tasks\":4,\"directed\":true,\"edges\":[[0,1,5],[1,0,5]]}";
	ck_assert_int_eq(tp_graph_from_json_string(&g, t, strlen(t), "d", 4, &err), 0);
	ck_assert_int_eq(tp_graph_merged_duplicates(g), 0);
	tp_graph_destroy(g);
	t = "{\"tasks\":4,\"edges\":[[0,1,5],[2,3,1]]}";
	ck_assert_int_eq(tp_graph_from_json_string(&g, t, strlen(t), "d", 4, &err), 0);
	ck_assert_int_eq(tp_graph_merged_duplicates(g), 0);
	tp_graph_destroy(g);
	/* self-loops are still errors */
	t = "{\"tasks\":4,\"edges\":[[1,1,5]]}";
	ck_assert_int_eq(tp_graph_from_json_string(&g, t, strlen(t), "d", 4, &err), TP_EINVAL);
	/* edge lists and stencils */
	int32_t u[3] = { 0, 1, 0 }, v[3] = { 1, 0, 2 };
	double w[3] = { 1, 2, 3 };
	ck_assert_int_eq(tp_graph_from_edges(&g, 3, 3, u, v, w, "e", &err), 0);
	ck_assert_int_eq(tp_graph_merged_duplicates(g), 1);
	tp_graph_destroy(g);
	ck_assert_int_eq(tp_graph_from_stencil(&g, "4x4:9pt:periodic=all", 16, &err), 0);
	ck_assert_int_eq(tp_graph_merged_duplicates(g), 0);
	tp_graph_destroy(g);
	ck_assert_int_eq(tp_graph_merged_duplicates(NULL), 0);
}
END_TEST

/* ---- recognising a stencil (pattern_detect.c) ---- */

/* g's edges again, without the coordinates and grid a stencil carries:
 * what a trace would give. */
static tp_graph *bare_copy(const tp_graph *g)
{
	int64_t m = tp_graph_nedges(g), k = 0;
	int32_t *u = malloc(sizeof *u * (size_t)(m + 1));
	int32_t *v = malloc(sizeof *v * (size_t)(m + 1));
	double *b = malloc(sizeof *b * (size_t)(m + 1));
	for (int32_t t = 0; t < tp_graph_ntasks(g); t++) {
		const int32_t *adj;
		const double *w;
		int32_t n = tp_graph_neighbors(g, t, &adj, &w);
		for (int32_t i = 0; i < n; i++)
			if (adj[i] > t) {
				u[k] = t;
				v[k] = adj[i];
				b[k++] = w[i];
			}
	}
	tp_graph *out = NULL;
	tp_error err;
	ck_assert_int_eq(tp_graph_from_edges(&out, tp_graph_ntasks(g), k, u, v,
					     b, "copy", &err), 0);
	free(u);
	free(v);
	free(b);
	ck_assert_int_eq(tp_graph_coord_dims(out), 0);
	return out;
}

static tp_graph *stencil(const char *spec)
{
	tp_graph *g = NULL;
	tp_error err;
	ck_assert_msg(tp_graph_from_stencil(&g, spec, 0, &err) == 0, "%s: %s",
		      spec, err.msg);
	return g;
}

static bool same_graph(const tp_graph *a, const tp_graph *b)
{
	int32_t n = tp_graph_ntasks(a);
	if (n != tp_graph_ntasks(b) || tp_graph_nedges(a) != tp_graph_nedges(b))
		return false;
	const int64_t *xa = tp_graph_xadj(a), *xb = tp_graph_xadj(b);
	for (int32_t t = 0; t <= n; t++)
		if (xa[t] != xb[t])
			return false;
	for (int64_t p = 0; p < xa[n]; p++)
		if (tp_graph_adjncy(a)[p] != tp_graph_adjncy(b)[p] ||
		    tp_graph_weights(a)[p] != tp_graph_weights(b)[p])
			return false;
	return true;
}

/* order=mpi: the dimensions as MPI_Cart_create numbers ranks (row-major,
 * the last fastest) are the same graph as topoplace's x-fastest spec with
 * them reversed, periodic= and weights= following them as written. */
START_TEST(stencil_mpi_order)
{
	static const struct {
		const char *mpi, *x;
	} t[] = {
		{ "8x8x4:7pt:order=mpi", "4x8x8:7pt" },
		{ "4x2x3:periodic=x:weights=1,2,3:order=mpi", "3x2x4:periodic=z:weights=3,2,1" },
		{ "8x4:order=mpi:periodic=y:bytes=64", "4x8:periodic=x:bytes=64" },
		{ "5x3:9pt:order=mpi:weights=2,1", "3x5:9pt:weights=1,2" },
		{ "4x4x4:27pt:order=mpi:weights=1,2,3", "4x4x4:27pt:weights=3,2,1" },
		{ "6x4:order=x", "6x4" },
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		tp_graph *a = stencil_ok(t[i].mpi), *b = stencil_ok(t[i].x);
		ck_assert_msg(same_graph(a, b), "%s against %s", t[i].mpi, t[i].x);
		tp_graph_destroy(a);
		tp_graph_destroy(b);
	}
	/* rank r of MPI's 3x2 grid is (r / 2, r % 2): rank 0's neighbours are
	 * 1 (second dimension) and 2 (first) */
	tp_graph *g = stencil_ok("3x2:order=mpi");
	nbrs_are(g, 0, 2, (int32_t[]){ 1, 2 });
	nbrs_are(g, 1, 2, (int32_t[]){ 0, 3 });
	tp_graph_destroy(g);
}
END_TEST

START_TEST(detect_stencils)
{
	static const struct {
		const char *spec, *want;
	} t[] = {
		{ "4x4", "4x4:5pt:bytes=1" },
		{ "6x4:5pt:periodic=y:bytes=8", "6x4:5pt:periodic=y:bytes=8" },
		{ "5x3:9pt:periodic=x", "5x3:9pt:periodic=x:bytes=1" },
		{ "4x3x5:7pt:periodic=all:bytes=100:weights=3,2,1",
		  "4x3x5:7pt:periodic=xyz:bytes=100:weights=3,2,1" },
		{ "3x3x3:27pt:periodic=all", "3x3x3:27pt:periodic=xyz:bytes=1" },
		{ "2x2x2", "2x2x2:7pt:bytes=1" },
		{ "4x4x4:7pt:periodic=xz:bytes=4096",
		  "4x4x4:7pt:periodic=xz:bytes=4096" },
		{ "8x2x3:7pt:periodic=z", "8x2x3:7pt:periodic=z:bytes=1" },
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		tp_graph *g = stencil(t[i].spec), *bare = bare_copy(g);
		tp_stencil_shape s;
		tp_error err;
		ck_assert_msg(tp_graph_detect_stencil(bare, &s, &err) == 1,
			      "%s not recognised", t[i].spec);
		ck_assert_str_eq(s.spec, t[i].want);
		/* the spec found builds the same graph */
		tp_graph *again = stencil(s.spec);
		ck_assert_msg(same_graph(again, bare), "%s -> %s differs",
			      t[i].spec, s.spec);
		tp_graph_destroy(again);
		tp_graph_destroy(bare);
		tp_graph_destroy(g);
	}
}
END_TEST

START_TEST(detect_not_stencils)
{
	tp_stencil_shape s;
	tp_error err;
	/* a ring, a 4x4 grid less one edge, with one odd weight, numbered
	 * another way, and a grid with one extra chord */
	int32_t u[64], v[64];
	double b[64];
	for (int i = 0; i < 8; i++) {
		u[i] = i;
		v[i] = (i + 1) % 8;
		b[i] = 1;
	}
	tp_graph *g = NULL;
	ck_assert_int_eq(tp_graph_from_edges(&g, 8, 8, u, v, b, "ring", &err), 0);
	ck_assert_int_eq(tp_graph_detect_stencil(g, &s, &err), 0);
	tp_graph_destroy(g);

	tp_graph *grid = stencil("4x4:bytes=10");
	int64_t m = 0;
	for (int32_t t = 0; t < 16; t++) {
		const int32_t *adj;
		const double *w;
		int32_t n = tp_graph_neighbors(grid, t, &adj, &w);
		for (int32_t k = 0; k < n; k++)
			if (adj[k] > t) {
				u[m] = t;
				v[m] = adj[k];
				b[m++] = w[k];
			}
	}
	tp_graph_destroy(grid);
	ck_assert_int_eq(m, 24);
	ck_assert_int_eq(tp_graph_from_edges(&g, 16, m - 1, u, v, b, "less", &err), 0);
	ck_assert_int_eq(tp_graph_detect_stencil(g, &s, &err), 0);
	tp_graph_destroy(g);
	b[5] = 11;
	ck_assert_int_eq(tp_graph_from_edges(&g, 16, m, u, v, b, "odd", &err), 0);
	ck_assert_int_eq(tp_graph_detect_stencil(g, &s, &err), 0);
	tp_graph_destroy(g);
	b[5] = 10;
	int32_t pu[64], pv[64];
	for (int64_t k = 0; k < m; k++) {   /* tasks 1 and 2 swapped */
		pu[k] = u[k] == 1 ? 2 : u[k] == 2 ? 1 : u[k];
		pv[k] = v[k] == 1 ? 2 : v[k] == 2 ? 1 : v[k];
	}
	ck_assert_int_eq(tp_graph_from_edges(&g, 16, m, pu, pv, b, "perm", &err), 0);
	ck_assert_int_eq(tp_graph_detect_stencil(g, &s, &err), 0);
	tp_graph_destroy(g);
	u[m] = 0;
	v[m] = 15;
	b[m] = 10;
	ck_assert_int_eq(tp_graph_from_edges(&g, 16, m + 1, u, v, b, "chord", &err), 0);
	ck_assert_int_eq(tp_graph_detect_stencil(g, &s, &err), 0);
	tp_graph_destroy(g);
	/* no edges, too few tasks, no graph */
	ck_assert_int_eq(tp_graph_from_edges(&g, 16, 0, u, v, b, "empty", &err), 0);
	ck_assert_int_eq(tp_graph_detect_stencil(g, &s, &err), 0);
	tp_graph_destroy(g);
	ck_assert_int_lt(tp_graph_detect_stencil(NULL, &s, &err), 0);
}
END_TEST

/* A traced halo exchange: a 3-D grid numbered x fastest, faces, edges and
 * corners with unequal bytes, boundary ranks sending less, messages one way
 * only along z, and recursive doubling's edges to rank XOR 2^k (a
 * collective the trace expands).  (x, y, z) of rank t: t % X, t / X % Y,
 * t / (X Y), as LULESH lays its ranks out. */
static tp_graph *traced_grid(int X, int Y, int Z, bool wrap_x, double coll)
{
	int n = X * Y * Z, m = 0, cap = n * 40;
	int32_t *u = malloc(sizeof *u * (size_t)cap), *v = malloc(sizeof *v * (size_t)cap);
	double *b = malloc(sizeof *b * (size_t)cap);
	ck_assert(u && v && b);
	for (int t = 0; t < n; t++) {
		int x = t % X, y = t / X % Y, z = t / (X * Y);
		for (int dz = -1; dz <= 1; dz++)
			for (int dy = -1; dy <= 1; dy++)
				for (int dx = -1; dx <= 1; dx++) {
					int moved = (dx != 0) + (dy != 0) + (dz != 0);
					int nx = x + dx, ny = y + dy, nz = z + dz;
					if (!moved)
						continue;
					if (wrap_x)
						nx = (nx + X) % X;
					if (nx < 0 || nx >= X || ny < 0 || ny >= Y ||
					    nz < 0 || nz >= Z)
						continue;
					if (dz < 0 && moved == 1)
						continue;    /* z faces one way */
					u[m] = t;
					v[m] = nx + X * (ny + Y * nz);
					/* faces 18 KB, edges 1 KB, corners 128 B;
					 * boundary ranks a little less */
					b[m++] = (moved == 1 ? 18080 : moved == 2 ? 1152 : 128) -
						 (x == 0 ? 32 : 0);
				}
		for (int k = 1; coll > 0 && k < n; k <<= 1)
			if ((t ^ k) < n) {
				u[m] = t;
				v[m] = t ^ k;
				b[m++] = coll;
			}
	}
	tp_graph *g = NULL;
	tp_error err;
	ck_assert_int_eq(tp_graph_from_edges(&g, n, m, u, v, b, "trace", &err), 0);
	free(u);
	free(v);
	free(b);
	return g;
}

START_TEST(infer_traced_grids)
{
	static const struct {
		int X, Y, Z;
		bool wrap;
		const char *want;
	} t[] = {
		{ 8, 8, 8, false, "8x8x8:27pt" },
		{ 4, 6, 5, false, "4x6x5:27pt" },
		{ 6, 4, 4, true, "6x4x4:27pt:periodic=x" },
		{ 16, 8, 1, false, "16x8:9pt" },
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
		tp_graph *g = traced_grid(t[i].X, t[i].Y, t[i].Z, t[i].wrap, 32);
		tp_stencil_shape s;
		tp_error err;
		double near = 0;
		/* not exact: the strict detection refuses it */
		ck_assert_int_eq(tp_graph_detect_stencil(g, &s, &err), 0);
		ck_assert_msg(tp__graph_infer_grid(g, &s, &near) == 1, "%s not found",
			      t[i].want);
		ck_assert_str_eq(s.spec, t[i].want);
		ck_assert(near > 0.99 && near < 1);
		ck_assert_int_eq(s.dims[0], t[i].X);
		tp_graph_destroy(g);
	}
}
END_TEST

START_TEST(infer_not_grids)
{
	tp_stencil_shape s;
	tp_error err;
	double near = 1;
	/* a ring fits every 2 x N/2 grid's neighbourhoods, but no axis but x
	 * carries faces of its own */
	int32_t u[600], v[600];
	double b[600];
	for (int i = 0; i < 64; i++) {
		u[i] = i;
		v[i] = (i + 1) % 64;
		b[i] = 100;
	}
	tp_graph *g = NULL;
	ck_assert_int_eq(tp_graph_from_edges(&g, 64, 64, u, v, b, "ring", &err), 0);
	ck_assert_int_eq(tp__graph_infer_grid(g, &s, &near), 0);
	ck_assert(near == 0);
	tp_graph_destroy(g);
	/* collectives heavier than the halo: most bytes are not between grid
	 * neighbours */
	g = traced_grid(4, 4, 4, false, 1e6);
	ck_assert_int_eq(tp__graph_infer_grid(g, &s, &near), 0);
	tp_graph_destroy(g);
	/* random pairs */
	uint64_t r = 12345;
	for (int i = 0; i < 600; i++) {
		r = r * 6364136223846793005ULL + 1442695040888963407ULL;
		u[i] = (int32_t)(r >> 33) % 64;
		v[i] = (int32_t)((r >> 13) % 64);
		if (v[i] == u[i])
			v[i] = (v[i] + 1) % 64;
		b[i] = 1000;
	}
	ck_assert_int_eq(tp_graph_from_edges(&g, 64, 600, u, v, b, "random", &err), 0);
	ck_assert_int_eq(tp__graph_infer_grid(g, &s, &near), 0);
	tp_graph_destroy(g);
	ck_assert_int_eq(tp__graph_infer_grid(NULL, &s, &near), 0);
}
END_TEST

/* Every task sending to every other: the halo's grid is still found
 * where the other pairs are light (each task has far more than its 26
 * grid neighbours' partners), and no grid where they carry the bytes. */
static tp_graph *grid_and_all_pairs(int X, int Y, double pair)
{
	int n = X * Y, m = 0, cap = n * n;
	int32_t *u = malloc(sizeof *u * (size_t)cap), *v = malloc(sizeof *v * (size_t)cap);
	double *b = malloc(sizeof *b * (size_t)cap);
	ck_assert(u && v && b);
	for (int t = 0; t < n; t++)
		for (int o = t + 1; o < n; o++) {
			int dx = abs(t % X - o % X), dy = abs(t / X - o / X);
			u[m] = t;
			v[m] = o;
			b[m++] = dx + dy == 1 ? 10000 : pair;
		}
	tp_graph *g = NULL;
	tp_error err;
	ck_assert_int_eq(tp_graph_from_edges(&g, n, m, u, v, b, "pairs", &err), 0);
	free(u);
	free(v);
	free(b);
	return g;
}

START_TEST(infer_grid_beside_all_pairs)
{
	tp_stencil_shape s;
	double near = 0;
	tp_graph *g = grid_and_all_pairs(16, 8, 1);
	ck_assert_int_eq(tp__graph_infer_grid(g, &s, &near), 1);
	/* the diagonal neighbours carry bytes too: 9 points */
	ck_assert_str_eq(s.spec, "16x8:9pt");
	ck_assert(near > 0.9 && near < 1);
	tp_graph_destroy(g);
	/* the pairs as heavy as a face: 4 of 127 partners carry a task's
	 * bytes to its neighbours */
	g = grid_and_all_pairs(16, 8, 10000);
	near = 1;
	ck_assert_int_eq(tp__graph_infer_grid(g, &s, &near), 0);
	ck_assert(near == 0);
	tp_graph_destroy(g);
	/* light enough that the shape passes only just: an inner task's 4
	 * faces of 10,000 against 123 pairs of 33; 90.2 % of all bytes
	 * between neighbours */
	g = grid_and_all_pairs(16, 8, 33);
	ck_assert_int_eq(tp__graph_infer_grid(g, &s, &near), 1);
	ck_assert_str_eq(s.spec, "16x8:9pt");
	ck_assert(near > 0.9 && near < 0.905);
	tp_graph_destroy(g);
}
END_TEST

START_TEST(json_exchanges)
{
	tp_graph *g = NULL;
	const char *txt = "{\"tasks\": 2, \"generator\": \"x\", \"exchanges\": 4,"
			  " \"edges\": [[0, 1, 400]]}";
	g = json_str_ok(txt);
	ck_assert(g->exchanges == 4);
	ck_assert(tp__graph_w_exchange(g, 0, 0) == 100);
	ck_assert(tp__graph_w(g, 0) == 400);
	tp_graph_destroy(g);
	/* without it: one exchange */
	txt = "{\"tasks\": 2, \"edges\": [[0, 1, 400]]}";
	g = json_str_ok(txt);
	ck_assert(tp__graph_w_exchange(g, 0, 0) == 400);
	tp_graph_destroy(g);
}
END_TEST

/* A trace's collectives' rounds (the fourth element, or "rounds"): per
 * direction on its CSR entry, summed over duplicates, divided by the
 * exchanges like the bytes; none without them. */
START_TEST(json_rounds)
{
	tp_graph *g = NULL;
	const char *txt = "{\"tasks\": 3, \"directed\": true, \"exchanges\": 2,"
			  " \"edges\": [[0, 1, 400, 6], [1, 0, 400], [0, 1, 8, 2],"
			  " {\"src\": 2, \"dst\": 0, \"bytes\": 8, \"rounds\": 4}]}";
	g = json_str_ok(txt);
	ck_assert_ptr_nonnull(g->rounds);
	int64_t e01 = tp__graph_entry(g, 0, 1), e10 = tp__graph_entry(g, 1, 0);
	int64_t e20 = tp__graph_entry(g, 2, 0), e02 = tp__graph_entry(g, 0, 2);
	ck_assert(e01 >= 0 && e10 >= 0 && e20 >= 0 && e02 >= 0);
	ck_assert(g->rounds[e01] == 8 && g->rounds[e10] == 0);
	ck_assert(g->rounds[e20] == 4 && g->rounds[e02] == 0);
	ck_assert(tp__graph_rounds_exchange(g, e01) == 4);
	ck_assert(tp__graph_w(g, e01) == 808);
	ck_assert_int_eq(tp__graph_entry(g, 1, 2), -1);
	tp_graph_destroy(g);
	/* zeros are no rounds */
	txt = "{\"tasks\": 2, \"edges\": [[0, 1, 400, 0]]}";
	g = json_str_ok(txt);
	ck_assert_ptr_null(g->rounds);
	ck_assert(tp__graph_rounds_exchange(g, 0) == 0);
	tp_graph_destroy(g);
}
END_TEST

/* Tasks in groups of two: {0,1}, {2,3}, {4,5}.  Inside a group nothing
 * stays (0-1, 4-5 and its rounds); between groups the pairs' bytes add up
 * whichever way they went (1-2, 3-0 and the rounds' own 8 bytes twice:
 * 46), and a group's rounds are its tasks' mean ((8 + 4) / 2, one way). */
START_TEST(graph_groups)
{
	tp_graph *g = NULL, *q = NULL;
	tp_error err;
	const char *txt = "{\"tasks\": 6, \"directed\": true, \"exchanges\": 2,"
			  " \"edges\": [[0, 1, 100], [1, 2, 10], [3, 0, 20], [2, 5, 7],"
			  " [4, 5, 1000, 9], [0, 2, 8, 8], [1, 3, 8, 4]]}";
	g = json_str_ok(txt);
	ck_assert_int_eq(tp__graph_groups(g, 2, &q, &err), 0);
	ck_assert_int_eq(q->ntasks, 3);
	ck_assert_int_eq(q->nedges, 2);
	ck_assert_double_eq(wt(q, 0, 1), 46);
	ck_assert_double_eq(wt(q, 1, 2), 7);
	ck_assert_double_eq(wt(q, 0, 2), -1);
	ck_assert_double_eq(tp_graph_total_bytes(q), 53);
	ck_assert_double_eq(q->exchanges, 2);
	ck_assert_ptr_nonnull(q->rounds);
	int64_t e01 = tp__graph_entry(q, 0, 1), e10 = tp__graph_entry(q, 1, 0);
	ck_assert(q->rounds[e01] == 6 && q->rounds[e10] == 0);
	ck_assert(tp__graph_rounds_exchange(q, e01) == 3);
	tp_graph_destroy(q);
	/* groups of one: the same pairs; groups that do not divide: refused */
	ck_assert_int_eq(tp__graph_groups(g, 1, &q, &err), 0);
	ck_assert_int_eq(q->nedges, g->nedges);
	ck_assert_double_eq(wt(q, 4, 5), 1000);
	tp_graph_destroy(q);
	ck_assert_int_eq(tp__graph_groups(g, 4, &q, &err), TP_EINVAL);
	ck_assert_ptr_null(q);
	tp_assert_err_has(&err, "6 tasks in groups of 4");
	ck_assert_int_eq(tp__graph_groups(g, 0, &q, &err), TP_EINVAL);
	/* one group: no pairs left */
	ck_assert_int_eq(tp__graph_groups(g, 6, &q, &err), 0);
	ck_assert_int_eq(q->ntasks, 1);
	ck_assert_int_eq(q->nedges, 0);
	ck_assert_ptr_null(q->rounds);
	tp_graph_destroy(q);
	tp_graph_destroy(g);
}
END_TEST

/* Any groups of k (tp__graph_quotient): the line 0-1-2-3 of 1-byte pairs
 * in the groups {0, 3} and {1, 2}: 0-1 and 2-3 cross between them (2
 * bytes), 1-2 stays inside.  A group past k tasks, one out of range, or
 * groups that are not the tasks are refused, saying which. */
START_TEST(graph_quotient)
{
	tp_graph *g = NULL, *q = NULL;
	tp_error err;
	const char *txt = "{\"tasks\": 4, \"edges\": [[0, 1, 1], [1, 2, 1], [2, 3, 1]]}";
	g = json_str_ok(txt);
	int32_t of[4] = { 0, 1, 1, 0 };
	ck_assert_int_eq(tp__graph_quotient(g, of, 2, 2, &q, &err), 0);
	ck_assert_int_eq(q->ntasks, 2);
	ck_assert_int_eq(q->nedges, 1);
	ck_assert_double_eq(wt(q, 0, 1), 2);
	tp_graph_destroy(q);
	/* NULL: consecutive tasks, as tp__graph_groups */
	ck_assert_int_eq(tp__graph_quotient(g, NULL, 2, 2, &q, &err), 0);
	ck_assert_double_eq(wt(q, 0, 1), 1);
	tp_graph_destroy(q);
	int32_t three[4] = { 0, 0, 0, 1 };
	ck_assert_int_eq(tp__graph_quotient(g, three, 2, 2, &q, &err), TP_EINVAL);
	ck_assert_ptr_null(q);
	tp_assert_err_has(&err, "task 2 in group 0 of 2, past 2 tasks a group");
	int32_t out[4] = { 0, 1, 2, 1 };
	ck_assert_int_eq(tp__graph_quotient(g, out, 2, 2, &q, &err), TP_EINVAL);
	tp_assert_err_has(&err, "task 2 in group 2 of 2");
	ck_assert_int_eq(tp__graph_quotient(g, of, 3, 2, &q, &err), TP_EINVAL);
	tp_assert_err_has(&err, "4 tasks in 3 groups of 2");
	tp_graph_destroy(g);
}
END_TEST

/* A stencil without bytes=: the time model's message sizes are assumed, a
 * face 32 KiB, an edge 512 bytes, a corner 8; with bytes= as given. */
START_TEST(stencil_assumed_sizes)
{
	tp_graph *g = stencil("3x3x3:27pt");
	ck_assert(g->size_scale == TP__ASSUMED_MESSAGE_BYTES);
	int32_t t = 13;   /* the centre: (1, 1, 1) */
	int faces = 0, edges = 0, corners = 0;
	for (int64_t e = g->xadj[t]; e < g->xadj[t + 1]; e++) {
		double w = tp__graph_w_exchange(g, t, e);
		faces += w == 32768;
		edges += w == 512;
		corners += w == 8;
	}
	ck_assert_int_eq(faces, 6);
	ck_assert_int_eq(edges, 12);
	ck_assert_int_eq(corners, 8);
	tp_graph_destroy(g);
	g = stencil("3x3x3:27pt:bytes=10");
	ck_assert(g->size_scale == 0);
	for (int64_t e = g->xadj[t]; e < g->xadj[t + 1]; e++)
		ck_assert(tp__graph_w_exchange(g, t, e) == 10);
	tp_graph_destroy(g);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("pattern");
	TCase *tc = tcase_create("edges");
	tcase_add_test(tc, edges_basic);
	tcase_add_test(tc, edges_duplicates_summed);
	tcase_add_test(tc, heavy_view);
	tcase_add_test(tc, graph_groups);
	tcase_add_test(tc, graph_quotient);
	tcase_add_test(tc, edges_null_bytes_and_empty);
	tcase_add_test(tc, edges_random_vs_dense);
	tcase_add_test(tc, edges_errors);
	tcase_add_test(tc, coords_set);
	tcase_add_test(tc, edges_infinite_sum);
	tcase_add_test(tc, detect_stencils);
	tcase_add_test(tc, detect_not_stencils);
	tcase_add_test(tc, infer_traced_grids);
	tcase_add_test(tc, infer_not_grids);
	tcase_add_test(tc, infer_grid_beside_all_pairs);
	suite_add_tcase(s, tc);

	tc = tcase_create("stencil");
	tcase_add_test(tc, stencil_5pt);
	tcase_add_test(tc, stencil_7pt);
	tcase_add_test(tc, stencil_9pt_27pt);
	tcase_add_test(tc, stencil_weights);
	tcase_add_test(tc, stencil_mpi_order);
	tcase_add_test(tc, stencil_small_periodic);
	tcase_add_test(tc, stencil_reference);
	tcase_add_test(tc, stencil_shown_arrays);
	tcase_add_test(tc, stencil_expect);
	tcase_add_test(tc, stencil_errors);
	tcase_add_test(tc, stencil_weights_long_values);
	tcase_add_test(tc, stencil_assumed_sizes);
	suite_add_tcase(s, tc);

	tc = tcase_create("json");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, json_ring);
	tcase_add_test(tc, json_exchanges);
	tcase_add_test(tc, json_rounds);
	tcase_add_test(tc, json_grid_coords);
	tcase_add_test(tc, json_duplicates_and_forms);
	tcase_add_test(tc, json_fast_path_same_graph);
	tcase_add_test(tc, json_big_chunks);
	tcase_add_test(tc, json_bad_files);
	tcase_add_test(tc, json_bad_strings);
	tcase_add_test(tc, merged_duplicates);
	suite_add_tcase(s, tc);
	return tp_test_run(s);
}
