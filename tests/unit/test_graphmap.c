/* Unit tests: graph mapping (core/src/map/graphmap*.c) and the graph and auto
 * policies (core/src/map/place_*.c). */
#include "testutil.h"
#include "map/predict_internal.h"
#include "input/alloc_internal.h"
#include "map/graphmap_internal.h"
#include "map/place_internal.h"
#include "net/machine_internal.h"
#include "pattern/pattern_internal.h"
#include "test_graphs.h"
#include <topoplace/conf.h>

/* The config of text, which must load. */
static tp_conf *conf_of(const char *text, const char *what)
{
	tp_conf *c = NULL;
	tp_error err;
	ck_assert_msg(tp_conf_load_string(text, what, &c, &err) == 0, "%s", err.msg);
	return c;
}

#define TORUS8_CONF "Network=torus Dims=8x8x8 Wrap=yes\n" \
		    "NodeName=n[000-511] CoordOrder=x-major\n"

static tp_conf *torus8(void)
{
	return conf_of(TORUS8_CONF, "t.conf");
}

static uint64_t rng(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void shuffle(int32_t *p, int32_t n, uint64_t seed)
{
	for (int32_t i = 0; i < n; i++)
		p[i] = i;
	for (int32_t i = n - 1; i > 0; i--) {
		int32_t j = (int32_t)(rng(&seed) % (uint64_t)(i + 1));
		int32_t t = p[i];
		p[i] = p[j];
		p[j] = t;
	}
}

/* Sparse allocation: nn distinct random nodes of the 8x8x8 torus. */
static tp_alloc *sparse_alloc_of(const tp_conf *c, int32_t total, int32_t nn,
				 int slots, uint64_t seed)
{
	int32_t *perm = malloc(sizeof *perm * (size_t)total);
	ck_assert_ptr_nonnull(perm);
	shuffle(perm, total, seed);
	tp_alloc *a = NULL;
	ck_assert_int_eq(tp_alloc_from_nodes(tp_conf_machine(c), perm, nn, slots,
					     &a, NULL), 0);
	free(perm);
	return a;
}

/* nn random nodes of torus8(). */
static tp_alloc *sparse_alloc(const tp_conf *c, int32_t nn, int slots,
			      uint64_t seed)
{
	return sparse_alloc_of(c, 512, nn, slots, seed);
}

/* A ring of n tasks whose labels are randomly permuted (no coordinates). */
static tp_graph *random_ring(int32_t n, uint64_t seed)
{
	int32_t *p = malloc(sizeof(int32_t) * (size_t)n);
	int32_t *u = malloc(sizeof(int32_t) * (size_t)n);
	int32_t *v = malloc(sizeof(int32_t) * (size_t)n);
	double *w = malloc(sizeof(double) * (size_t)n);
	shuffle(p, n, seed);
	for (int32_t i = 0; i < n; i++) {
		u[i] = p[i];
		v[i] = p[(i + 1) % n];
		w[i] = 1000;
	}
	tp_graph *g = NULL;
	tp_error err;
	ck_assert_msg(tp_graph_from_edges(&g, n, n, u, v, w, "ring", &err) == 0,
		      "%s", err.msg);
	free(p);
	free(u);
	free(v);
	free(w);
	return g;
}

/* A W x H non-periodic grid, labels permuted (no coordinates). */
static tp_graph *random_grid(int32_t W, int32_t H, uint64_t seed)
{
	int32_t n = W * H, ne = 0;
	int32_t *p = malloc(sizeof(int32_t) * (size_t)n);
	int32_t *u = malloc(sizeof(int32_t) * (size_t)n * 2);
	int32_t *v = malloc(sizeof(int32_t) * (size_t)n * 2);
	double *w = malloc(sizeof(double) * (size_t)n * 2);
	shuffle(p, n, seed);
	for (int32_t y = 0; y < H; y++)
		for (int32_t x = 0; x < W; x++) {
			if (x + 1 < W) {
				u[ne] = p[y * W + x];
				v[ne] = p[y * W + x + 1];
				w[ne++] = 100;
			}
			if (y + 1 < H) {
				u[ne] = p[y * W + x];
				v[ne] = p[(y + 1) * W + x];
				w[ne++] = 100;
			}
		}
	tp_graph *g = NULL;
	ck_assert_int_eq(tp_graph_from_edges(&g, n, ne, u, v, w, "grid", NULL), 0);
	free(p);
	free(u);
	free(v);
	free(w);
	return g;
}

typedef int (*mapper)(const tp_graph *, const tp_alloc *,
		      const tp_graphmap_opts *, int32_t *, tp_error *);

static double block_hb(const tp_graph *g, const tp_alloc *a)
{
	int32_t n = tp_graph_ntasks(g);
	int32_t *m = malloc(sizeof(int32_t) * (size_t)n);
	ck_assert_int_eq(tp_map_block(a, n, m, NULL), 0);
	double hb = tp_metrics_hop_bytes(g, a, m);
	free(m);
	return hb;
}

/* Map with f twice: valid, identical, and below ratio x block. */
static double check_mapper(mapper f, const tp_graph *g, const tp_alloc *a,
			   double ratio)
{
	int32_t n = tp_graph_ntasks(g);
	int32_t *m1 = malloc(sizeof(int32_t) * (size_t)n);
	int32_t *m2 = malloc(sizeof(int32_t) * (size_t)n);
	tp_error err;
	ck_assert_msg(f(g, a, NULL, m1, &err) == 0, "%s", err.msg);
	ck_assert_msg(tp_mapping_validate(g, a, m1, &err) == 0, "%s", err.msg);
	ck_assert_int_eq(f(g, a, NULL, m2, NULL), 0);
	ck_assert_mem_eq(m1, m2, sizeof(int32_t) * (size_t)n);
	double hb = tp_metrics_hop_bytes(g, a, m1), bhb = block_hb(g, a);
	ck_assert_msg(hb < ratio * bhb, "hop-bytes %g not below %g x block %g",
		      hb, ratio, bhb);
	free(m1);
	free(m2);
	return hb;
}

START_TEST(greedy_and_bipartition_ring)
{
	tp_conf *c = torus8();
	tp_alloc *a = sparse_alloc(c, 64, 4, 7);
	tp_graph *g = random_ring(256, 11);
	check_mapper(tp_graphmap_greedy, g, a, 0.5);
	check_mapper(tp_graphmap_bipartition, g, a, 0.5);
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

START_TEST(greedy_and_bipartition_grid)
{
	tp_conf *c = torus8();
	tp_alloc *a = sparse_alloc(c, 100, 4, 3);
	tp_graph *g = random_grid(20, 20, 5);
	check_mapper(tp_graphmap_greedy, g, a, 0.5);
	check_mapper(tp_graphmap_bipartition, g, a, 0.5);
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

START_TEST(refine_never_increases)
{
	tp_conf *c = torus8();
	tp_alloc *a = sparse_alloc(c, 50, 4, 9);
	tp_graph *g = random_grid(10, 20, 8);
	int32_t map[200];
	tp_graphmap_opts o;
	tp_graphmap_opts_default(&o);
	for (uint64_t seed = 1; seed <= 5; seed++) {
		ck_assert_int_eq(tp_map_random(a, 200, seed, map, NULL), 0);
		double before = tp_metrics_hop_bytes(g, a, map);
		int64_t moves = -1;
		tp_error err;
		ck_assert_msg(tp_graphmap_refine(g, a, &o, map, &moves, &err) == 0,
			      "%s", err.msg);
		ck_assert_int_eq(tp_mapping_validate(g, a, map, NULL), 0);
		double after = tp_metrics_hop_bytes(g, a, map);
		ck_assert(after <= before * (1 + 1e-12));
		ck_assert(moves > 0 && after < before);
		/* refining again from a refined mapping never increases */
		ck_assert_int_eq(tp_graphmap_refine(g, a, &o, map, NULL, NULL), 0);
		ck_assert(tp_metrics_hop_bytes(g, a, map) <= after * (1 + 1e-12));
	}
	/* zero passes: nothing changes */
	o.refine_passes = 0;
	int32_t copy[200];
	memcpy(copy, map, sizeof map);
	ck_assert_int_eq(tp_graphmap_refine(g, a, &o, map, NULL, NULL), 0);
	ck_assert_mem_eq(copy, map, sizeof map);
	/* an invalid mapping is refused */
	map[0] = 50;
	tp_error err;
	ck_assert_int_eq(tp_graphmap_refine(g, a, &o, map, NULL, &err), TP_EINVAL);
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

/* The n (at most 100) nodes of a line (a torus of n x 1 x 1 without
 * wrap), 4 slots each; *c: its config. */
static tp_alloc *line_of(tp_conf **c, int32_t n)
{
	char text[128];
	snprintf(text, sizeof text, "Network=torus Dims=%dx1x1 Wrap=no\n"
		 "NodeName=n[00-%02d] CoordOrder=x-major\n", (int)n, (int)n - 1);
	*c = conf_of(text, "line.conf");
	int32_t ids[100];
	for (int32_t k = 0; k < n; k++)
		ids[k] = k;
	tp_alloc *a = NULL;
	ck_assert_int_eq(tp_alloc_from_nodes(tp_conf_machine(*c), ids, n, 4, &a, NULL), 0);
	return a;
}

/* n tasks all to all: seed 0, two cliques (100 bytes a pair inside each
 * half, 1 between); else each pair 1 to 100 bytes drawn from seed. */
static tp_graph *all_to_all(int32_t n, uint64_t seed)
{
	int64_t ne = (int64_t)n * (n - 1) / 2, k = 0;
	double *w = malloc(sizeof *w * (size_t)ne);
	ck_assert_ptr_nonnull(w);
	for (int32_t i = 0; i < n; i++)
		for (int32_t j = i + 1; j < n; j++, k++)
			w[k] = seed == 0 ? ((i < n / 2) == (j < n / 2) ? 100 : 1)
					 : (double)(1 + rng(&seed) % 100);
	tp_graph *g = tp_test_all_pairs(n, n, w);
	free(w);
	return g;
}

/* Dense graphs, every task's peers past the degree up to which a moved
 * task's neighbours are costed again (beyond it task_moved takes the
 * move's difference): two cliques of 80 tasks (100 bytes a pair inside, 1
 * between), and every pair a random 1 to 100 bytes, on a line of 40 nodes
 * of 4 slots from random starts.  The refinement lowers hop-bytes (the
 * cliques by more than a third: each on its half is 0.51x), and keeping
 * the costs by differences gives the very mapping costing every
 * neighbour again gives (integer bytes and hops: no rounding apart). */
START_TEST(refine_dense_by_differences)
{
	tp_conf *c = NULL;
	tp_alloc *a = line_of(&c, 40);
	enum { N = 160 };
	tp_graphmap_opts o;
	tp_graphmap_opts_default(&o);
	for (int kind = 0; kind < 2; kind++) {
		tp_graph *g = all_to_all(N, kind == 0 ? 0 : 77);
		for (uint64_t seed = 1; seed <= 2; seed++) {
			int32_t start[N], by_diff[N], exact[N];
			ck_assert_int_eq(tp_map_random(a, N, seed, start, NULL), 0);
			double before = tp_metrics_hop_bytes(g, a, start);
			memcpy(by_diff, start, sizeof start);
			memcpy(exact, start, sizeof start);
			int64_t moves = 0, moves2 = 0;
			tp_error err;
			ck_assert_msg(tp__graphmap_refine_recost(g, a, &o, 0, by_diff, &moves,
								  &err) == 0, "%s", err.msg);
			ck_assert_int_eq(tp__graphmap_refine_recost(g, a, &o, INT32_MAX, exact,
								    &moves2, NULL), 0);
			ck_assert_int_eq(tp_mapping_validate(g, a, by_diff, NULL), 0);
			ck_assert_int_eq(moves, moves2);
			ck_assert_mem_eq(by_diff, exact, sizeof exact);
			double after = tp_metrics_hop_bytes(g, a, by_diff);
			ck_assert_msg(after < (kind == 0 ? 0.62 : 1.0) * before,
				      "kind %d seed %d: %g -> %g", kind, (int)seed, before, after);
			/* the default (differences past 64 edges) is the same */
			ck_assert_int_eq(tp_graphmap_refine(g, a, &o, start, NULL, NULL), 0);
			ck_assert_mem_eq(start, exact, sizeof exact);
		}
		tp_graph_destroy(g);
	}
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

/* Pairs of tasks that talk 100 bytes inside, chained by 1 byte, 2 slots a
 * node along a line of 16: from pairs scattered at random, no single move
 * or swap of a task gains (each breaks a pair), but the pairs (the nodes'
 * groups) move as wholes: they come out together, and the chain shorter
 * (with a single task's moves alone nothing moved). */
START_TEST(refine_moves_groups)
{
	tp_conf *c = conf_of("Network=torus Dims=16x1x1 Wrap=no\n"
			     "NodeName=n[00-15] CoordOrder=x-major\n", "line.conf");
	tp_error err;
	int32_t nodes[16], u[31], v[31], perm[16], map[32];
	double w[31];
	for (int i = 0; i < 16; i++)
		nodes[i] = i;
	for (int i = 0; i < 16; i++) {
		u[i] = 2 * i;
		v[i] = 2 * i + 1;
		w[i] = 100;
	}
	for (int i = 0; i < 15; i++) {
		u[16 + i] = 2 * i + 1;
		v[16 + i] = 2 * i + 2;
		w[16 + i] = 1;
	}
	tp_graph *g = NULL;
	ck_assert_int_eq(tp_graph_from_edges(&g, 32, 31, u, v, w, "pairs", &err), 0);
	tp_alloc *a = NULL;
	ck_assert_int_eq(tp_alloc_from_nodes(tp_conf_machine(c), nodes, 16, 2, &a, NULL), 0);
	for (uint64_t seed = 1; seed <= 4; seed++) {
		shuffle(perm, 16, seed);
		for (int i = 0; i < 16; i++)
			map[2 * i] = map[2 * i + 1] = perm[i];
		double before = tp_metrics_hop_bytes(g, a, map);
		int64_t moves = 0;
		ck_assert_msg(tp_graphmap_refine(g, a, NULL, map, &moves, &err) == 0,
			      "%s", err.msg);
		double after = tp_metrics_hop_bytes(g, a, map);
		for (int i = 0; i < 16; i++)
			ck_assert_int_eq(map[2 * i], map[2 * i + 1]);
		/* 89 -> 65, 72 -> 51, 73 -> 59, 72 -> 53 (swaps of pairs
		 * stop in a local minimum above the chain's 15) */
		ck_assert_msg(moves > 0 && after <= 0.85 * before, "seed %d: %g -> %g",
			      (int)seed, before, after);
	}
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

START_TEST(heterogeneous_and_subset)
{
	tp_conf *c = torus8();
	mapper fs[2] = { tp_graphmap_greedy, tp_graphmap_bipartition };
	/* heterogeneous: 1,2,3,4,1,2,3,4,... on 40 nodes = 100 slots */
	tp_alloc *a = sparse_alloc(c, 40, 1, 21);
	ck_assert_int_eq(tp_alloc_set_slots_spec(a, "1,2,3,4,1,2,3,4,1,2,3,4,1,2,3,4,1,2,3,4,"
						    "1,2,3,4,1,2,3,4,1,2,3,4,1,2,3,4,1,2,3,4",
						 NULL), 0);
	tp_graph *g = random_grid(10, 10, 2);
	for (int k = 0; k < 2; k++)
		check_mapper(fs[k], g, a, 0.8);
	tp_graph_destroy(g);
	/* subset: 60 tasks on those 100 slots; and 1 task */
	g = random_ring(60, 4);
	for (int k = 0; k < 2; k++)
		check_mapper(fs[k], g, a, 0.8);
	tp_graph_destroy(g);
	int32_t one;
	ck_assert_int_eq(tp_graph_from_edges(&g, 1, 0, NULL, NULL, NULL, "one", NULL), 0);
	for (int k = 0; k < 2; k++) {
		ck_assert_int_eq(fs[k](g, a, NULL, &one, NULL), 0);
		ck_assert_int_eq(tp_mapping_validate(g, a, &one, NULL), 0);
	}
	tp_graph_destroy(g);
	/* too many tasks: one-line error */
	g = random_ring(101, 4);
	int32_t *m = malloc(sizeof(int32_t) * 101);
	tp_error err;
	for (int k = 0; k < 2; k++) {
		ck_assert_int_eq(fs[k](g, a, NULL, m, &err), TP_EINVAL);
		tp_assert_err_has(&err, "101 tasks do not fit");
	}
	free(m);
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

START_TEST(disconnected_and_edgeless)
{
	tp_conf *c = torus8();
	tp_alloc *a = sparse_alloc(c, 32, 4, 13);
	/* two rings of 64 tasks, interleaved labels: valid, and each ring
	 * compact (well below block) */
	int32_t u[128], v[128];
	double w[128];
	for (int32_t i = 0; i < 64; i++) {
		u[i] = 2 * i;
		v[i] = 2 * ((i + 1) % 64);
		u[64 + i] = 2 * i + 1;
		v[64 + i] = 2 * ((i + 1) % 64) + 1;
		w[i] = w[64 + i] = 10;
	}
	tp_graph *g = NULL;
	ck_assert_int_eq(tp_graph_from_edges(&g, 128, 128, u, v, w, "two", NULL), 0);
	check_mapper(tp_graphmap_greedy, g, a, 0.6);
	check_mapper(tp_graphmap_bipartition, g, a, 0.6);
	tp_graph_destroy(g);
	/* no edges at all: valid */
	ck_assert_int_eq(tp_graph_from_edges(&g, 100, 0, NULL, NULL, NULL, "none", NULL), 0);
	int32_t m[100];
	ck_assert_int_eq(tp_graphmap_greedy(g, a, NULL, m, NULL), 0);
	ck_assert_int_eq(tp_mapping_validate(g, a, m, NULL), 0);
	ck_assert_int_eq(tp_graphmap_bipartition(g, a, NULL, m, NULL), 0);
	ck_assert_int_eq(tp_mapping_validate(g, a, m, NULL), 0);
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

START_TEST(policies_graph_auto)
{
	enum tp_policy p;
	ck_assert_int_eq(tp_policy_parse("graph", &p, NULL), 0);
	ck_assert_int_eq(p, TP_POLICY_GRAPH);
	ck_assert_str_eq(tp_policy_name(p), "graph");
	ck_assert_int_eq(tp_policy_parse("AUTO", &p, NULL), 0);
	ck_assert_int_eq(p, TP_POLICY_AUTO);
	ck_assert_str_eq(tp_policy_name(p), "auto");

	tp_conf *c = torus8();
	tp_alloc *a = sparse_alloc(c, 64, 4, 17);
	tp_graph *g = random_ring(256, 19);
	int32_t m1[256], m2[256];
	tp_place_opts o;
	tp_place_opts_default(&o);
	o.geom.time_budget_ms = 0;
	tp_place_report r;
	tp_error err;
	o.policy = TP_POLICY_GRAPH;
	ck_assert_msg(tp_place_ex(g, a, &o, m1, &r, &err) == 0, "%s", err.msg);
	/* both constructions, then the refinement of the better one */
	ck_assert_int_eq(r.ncandidates, 3);
	ck_assert_str_eq(r.cand[0].name, "greedy");
	ck_assert_str_eq(r.cand[1].name, "bipartition");
	/* named after what it refined: the better construction */
	char want[32];
	snprintf(want, sizeof want, "%s+refine",
		 r.cand[0].score <= r.cand[1].score ? "greedy" : "bipartition");
	ck_assert_str_eq(r.cand[2].name, want);
	ck_assert(r.cand[2].ran);
	ck_assert(r.best >= 0 && r.best <= 2);
	double hb = tp_metrics_hop_bytes(g, a, m1);
	ck_assert(hb == r.cand[r.best].score);
	ck_assert(hb <= r.cand[0].score && hb <= r.cand[1].score);

	o.policy = TP_POLICY_AUTO;
	ck_assert_msg(tp_place_ex(g, a, &o, m2, &r, &err) == 0, "%s", err.msg);
	/* block, geometric (skipped), zorder, greedy, bipartition, then the
	 * winner refined; block is far (> 10 %) behind, so not refined too;
	 * by predicted time, last the best refined on the lanes, then its
	 * nodes' trades */
	ck_assert_int_eq(r.ncandidates, r.by_time ? 8 : 6);
	ck_assert(strstr(r.cand[5].name, "+refine"));
	ck_assert(!r.by_time || strstr(r.cand[6].name, "+lanes"));
	ck_assert(!r.by_time || strstr(r.cand[7].name, "+trades"));
	ck_assert_str_eq(r.cand[0].name, "block");
	ck_assert_str_eq(r.cand[1].name, "geometric");
	ck_assert(!r.cand[1].ran);
	ck_assert(strstr(r.cand[1].note, "no task coordinates"));
	/* auto keeps the candidate predicted fastest: no slower than
	 * graph's within the tie share, and far below block */
	tp_prediction p1, p2;
	ck_assert_int_eq(tp_predict_exchange(g, a, m1, &p1, NULL), 0);
	ck_assert_int_eq(tp_predict_exchange(g, a, m2, &p2, NULL), 0);
	ck_assert(!r.by_time || p2.exchange_us <= (1 + 0.005) * p1.exchange_us);
	ck_assert(r.by_time || tp_metrics_hop_bytes(g, a, m2) <= hb);
	ck_assert(tp_metrics_hop_bytes(g, a, m2) < 0.5 * r.cand[0].score);
	/* tp_place (the old entry point) gives the same mapping */
	int32_t m3[256];
	ck_assert_int_eq(tp_place(g, a, &o, m3, NULL, NULL), 0);
	ck_assert_mem_eq(m2, m3, sizeof m2);

	/* congestion metric: never worse than block on congestion */
	o.geom.metric = TP_METRIC_CONGESTION;
	ck_assert_int_eq(tp_place_ex(g, a, &o, m2, &r, NULL), 0);
	ck_assert_int_eq(r.metric, TP_METRIC_CONGESTION);
	ck_assert(r.cand[r.best].score <= r.cand[0].score);
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

/* Block order is already optimal: a ring in task order on a 1-D ring of
 * nodes listed in order.  auto must keep a mapping exactly as good. */
START_TEST(auto_never_worse_than_block)
{
	tp_conf *c = conf_of("Network=torus Dims=16 Wrap=yes\n"
			     "NodeName=r[0-15] CoordOrder=x-major\n", "r.conf");
	tp_alloc *a = NULL;
	ck_assert_int_eq(tp_alloc_from_hostlist(tp_conf_machine(c), "r[0-15]", 2,
						"t", &a, NULL), 0);
	int32_t u[32], v[32];
	double w[32];
	for (int32_t i = 0; i < 32; i++) {
		u[i] = i;
		v[i] = (i + 1) % 32;
		w[i] = 1;
	}
	tp_graph *g = NULL;
	ck_assert_int_eq(tp_graph_from_edges(&g, 32, 32, u, v, w, "ring", NULL), 0);
	int32_t m[32];
	tp_place_opts o;
	tp_place_opts_default(&o);
	o.policy = TP_POLICY_AUTO;
	tp_place_report r;
	ck_assert_int_eq(tp_place_ex(g, a, &o, m, &r, NULL), 0);
	double bhb = block_hb(g, a);
	ck_assert(bhb == 16.0);
	ck_assert(tp_metrics_hop_bytes(g, a, m) <= bhb);

	/* random cases, with and without a tiny time budget */
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
	c = torus8();
	for (uint64_t s = 1; s <= 4; s++) {
		a = sparse_alloc(c, 30, 3, s);
		g = random_grid(9, 10, s + 100);
		int32_t mm[90];
		for (int b = 0; b < 2; b++) {
			o.geom.time_budget_ms = b ? 1e-6 : 0;
			ck_assert_int_eq(tp_place_ex(g, a, &o, mm, &r, NULL), 0);
			ck_assert_int_eq(tp_mapping_validate(g, a, mm, NULL), 0);
			ck_assert(tp_metrics_hop_bytes(g, a, mm) <= block_hb(g, a));
			if (b) {
				ck_assert(r.budget_hit);
				ck_assert(r.cand[0].ran);   /* block always runs */
			}
		}
		tp_graph_destroy(g);
		tp_alloc_destroy(a);
	}
	tp_conf_destroy(c);
}
END_TEST

/* With task coordinates auto runs geometric too, and the stencil case stays
 * as good as geometric alone. */
START_TEST(auto_with_coordinates)
{
	tp_conf *c = torus8();
	tp_alloc *a = NULL;
	ck_assert_int_eq(tp_alloc_from_hostlist(tp_conf_machine(c), "n[000-511]", 1,
						"t", &a, NULL), 0);
	tp_graph *g = NULL;
	ck_assert_int_eq(tp_graph_from_stencil(&g, "8x8x8:7pt:periodic=all", 512, NULL), 0);
	int32_t *m = malloc(sizeof(int32_t) * 512);
	tp_place_opts o;
	tp_place_opts_default(&o);
	o.geom.time_budget_ms = 0;
	o.policy = TP_POLICY_AUTO;
	tp_place_report r;
	ck_assert_int_eq(tp_place_ex(g, a, &o, m, &r, NULL), 0);
	ck_assert(r.cand[2].ran && r.have_geom);
	ck_assert(tp_metrics_hop_bytes(g, a, m) == tp_graph_total_bytes(g));
	free(m);
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

/* Two runs of auto reported the same candidates, results and scores. */
static void assert_same_candidates(const tp_place_report *x,
				   const tp_place_report *y)
{
	ck_assert_int_eq(x->ncandidates, y->ncandidates);
	ck_assert_int_eq(x->best, y->best);
	for (int i = 0; i < x->ncandidates; i++) {
		ck_assert_str_eq(x->cand[i].name, y->cand[i].name);
		ck_assert_int_eq(x->cand[i].ran, y->cand[i].ran);
		ck_assert(x->cand[i].score == y->cand[i].score);
		/* fillings made ahead on other threads are the same */
		ck_assert_int_eq(x->cand[i].has_predicted, y->cand[i].has_predicted);
		ck_assert(x->cand[i].predicted_us == y->cand[i].predicted_us);
		ck_assert_int_eq(x->cand[i].predicted_bound, y->cand[i].predicted_bound);
		ck_assert_int_eq(x->cand[i].has_lower, y->cand[i].has_lower);
		ck_assert(!x->cand[i].has_lower || x->cand[i].lower_us == y->cand[i].lower_us);
	}
}

/* auto without a budget on one thread (r1) and on `threads` (rk): the
 * same mapping and the same candidates (assert_same_candidates). */
static void auto_one_and(const tp_graph *g, const tp_alloc *a, int threads,
			 tp_place_report *r1, tp_place_report *rk)
{
	int32_t n = tp_graph_ntasks(g);
	int32_t *m1 = malloc(sizeof(int32_t) * (size_t)n), *mk = malloc(sizeof(int32_t) * (size_t)n);
	tp_place_opts o;
	tp_place_opts_default(&o);
	o.geom.time_budget_ms = 0;
	o.policy = TP_POLICY_AUTO;
	o.geom.nthreads = 1;
	tp_error err;
	ck_assert_msg(tp_place_ex(g, a, &o, m1, r1, &err) == 0, "%s", err.msg);
	o.geom.nthreads = threads;
	ck_assert_msg(tp_place_ex(g, a, &o, mk, rk, &err) == 0, "%s", err.msg);
	ck_assert_mem_eq(m1, mk, sizeof(int32_t) * (size_t)n);
	assert_same_candidates(r1, rk);
	free(m1);
	free(mk);
}

/* Without a budget auto builds its candidates side by side when it may use
 * more than one thread: the same candidates, scores, predicted times and
 * mapping as one after the other on one thread. */
START_TEST(auto_side_by_side_same_result)
{
	tp_conf *c = torus8();
	tp_alloc *a = sparse_alloc(c, 200, 4, 21);
	tp_graph *g = NULL;
	ck_assert_int_eq(tp_graph_from_stencil(&g, "10x10x8:7pt", 800, NULL), 0);
	tp_place_report r1, rk;
	for (int th = 2; th <= 4; th += 2) {
		auto_one_and(g, a, th, &r1, &rk);
		/* by predicted time, geometric's refinement and its filling
		 * were made beside geometric's own (place_side.c) */
		ck_assert(rk.by_time);
		bool early = false;
		for (int i = 0; i < rk.ncandidates; i++)
			early |= !strcmp(rk.cand[i].name, "geometric+refine") &&
				 strstr(rk.cand[i].note, "begun before the constructions ended");
		ck_assert_msg(early, "%d threads: geometric's refinement not begun early", th);
	}
	/* geometric, greedy and bipartition all ran, and the best beat block */
	int ran = 0;
	for (int i = 0; i < r1.ncandidates; i++)
		ran += r1.cand[i].ran && (!strcmp(r1.cand[i].name, "geometric") ||
					  !strcmp(r1.cand[i].name, "greedy") ||
					  !strcmp(r1.cand[i].name, "bipartition"));
	ck_assert_int_eq(ran, 3);
	ck_assert(r1.cand[r1.best].score < r1.cand[0].score);
	/* filled in full: judged on fillings, not on bounds */
	ck_assert(!r1.on_bounds && !r1.cand[r1.best].judged_bound &&
		  !r1.cand[r1.best].predicted_bound);
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

/* An all-to-all of 96 tasks, each pair its own bytes, on 96 nodes of the
 * 8^3 torus: every filling of it stops at the work limit.  auto judges it
 * on its candidates' bounds (place_choice.c, decide_bounds): the kept time
 * is the map's bound to the last bit, every candidate judged holds its
 * bound, and one thread, two and four give the same.  Under a budget it
 * is not judged so.  (A halo filled in full is judged on fillings:
 * auto_side_by_side_same_result.) */
START_TEST(auto_judges_on_bounds_past_the_work_limit)
{
	tp_conf *c = torus8();
	tp_alloc *a = sparse_alloc(c, 96, 1, 7);
	int32_t n = 96;
	int64_t ne = (int64_t)n * (n - 1) / 2, k = 0;
	int32_t *u = malloc(sizeof *u * (size_t)ne), *v = malloc(sizeof *v * (size_t)ne);
	double *w = malloc(sizeof *w * (size_t)ne);
	uint64_t st = 7;
	for (int32_t i = 0; i < n; i++)
		for (int32_t j = i + 1; j < n; j++, k++) {
			u[k] = i;
			v[k] = j;
			w[k] = 1000 + (double)(rng(&st) % 199000);
		}
	tp_graph *g = NULL;
	ck_assert_int_eq(tp_graph_from_edges(&g, n, ne, u, v, w, "a2a", NULL), 0);
	/* Slurm's order cannot be filled within the limit */
	int32_t *m = malloc(sizeof *m * (size_t)n);
	ck_assert_int_eq(tp_map_block(a, n, m, NULL), 0);
	tp_prediction p;
	ck_assert_int_eq(tp__predict_launch(g, a, m, false, &p), 0);
	ck_assert(p.bound_only && p.exchange_us > p.bound_us);
	tp_place_report r1, rk;
	/* two threads, and four, where every construction is filled beside
	 * (place_side.c): the same */
	auto_one_and(g, a, 4, &r1, &rk);
	ck_assert(rk.on_bounds);
	auto_one_and(g, a, 2, &r1, &rk);
	ck_assert(r1.by_time && r1.on_bounds && rk.on_bounds);
	int judged = 0;
	for (int i = 0; i < r1.ncandidates; i++) {
		const tp_place_candidate *x = &r1.cand[i];
		ck_assert(!x->has_predicted || x->predicted_bound);
		judged += x->judged_bound;
		ck_assert(!x->judged_bound || (x->has_predicted && x->predicted_work == 0));
	}
	ck_assert_int_ge(judged, 3);
	/* the kept time is the kept map's bound */
	tp_place_opts o;
	tp_place_opts_default(&o);
	o.geom.time_budget_ms = 0;
	o.policy = TP_POLICY_AUTO;
	ck_assert_int_eq(tp_place_ex(g, a, &o, m, &r1, NULL), 0);
	double lower;
	ck_assert_int_eq(tp__predict_launch_lower(g, a, m, false, &lower), 0);
	ck_assert(r1.cand[r1.best].judged_bound && r1.cand[r1.best].predicted_us == lower);
	ck_assert_int_eq(tp__predict_launch_bound(g, a, m, &p), 0);
	ck_assert(p.bound_only && p.exchange_us == lower && p.bound_us == lower &&
		  p.rounds == 0 && p.flows == ne * 2);
	/* under a budget every filling stops by design: not judged so */
	o.geom.time_budget_ms = 5000;
	ck_assert_int_eq(tp_place_ex(g, a, &o, m, &r1, NULL), 0);
	ck_assert(!r1.on_bounds);
	for (int i = 0; i < r1.ncandidates; i++)
		ck_assert(!r1.cand[i].judged_bound);
	free(m);
	free(u);
	free(v);
	free(w);
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

/* Sparse draws for draws_to_note: nodes of a torus and a halo. */
struct draw_case {
	const char *conf;
	int32_t total, nodes;
	const char *stencil;
};

/* 8x4x4 halos on 128 nodes of the 8^3 torus (torus8). */
static const struct draw_case SMALL_DRAWS = {
	TORUS8_CONF, 512, 128, "8x4x4:7pt:bytes=32768"
};

/* auto on one thread and on `threads` (auto_one_and) for draws of dc,
 * until a candidate whose name holds `name` has `note` on `threads` (and
 * not on one thread), filled to its end or (past) stopped out of reach
 * with a bound; the draws it took, 0 when none of the first `draws` did.
 * Sparse tori lose constructions on their bounds and refine geometric's
 * refinement by lanes often: a few draws find one. */
static int draws_to_note(const struct draw_case *dc, int threads, int draws,
			 const char *name, const char *note, bool past)
{
	tp_conf *c = conf_of(dc->conf, "t.conf");
	tp_graph *g = NULL;
	ck_assert_int_eq(tp_graph_from_stencil(&g, dc->stencil, dc->nodes, NULL), 0);
	int found = 0;
	for (int seed = 1; seed <= draws && !found; seed++) {
		tp_alloc *a = sparse_alloc_of(c, dc->total, dc->nodes, 1, (uint64_t)seed);
		tp_place_report r1, rk;
		auto_one_and(g, a, threads, &r1, &rk);
		for (int i = 0; i < rk.ncandidates; i++)
			if (strstr(rk.cand[i].name, name) && strstr(rk.cand[i].note, note) &&
			    rk.cand[i].has_predicted == !past) {
				found = seed;
				ck_assert(past ? rk.cand[i].has_lower && rk.cand[i].lower_us >
							  rk.cand[rk.best].predicted_us
					       : !rk.cand[i].predicted_bound);
				ck_assert(!strstr(r1.cand[i].note, note));
			}
		tp_alloc_destroy(a);
	}
	tp_graph_destroy(g);
	tp_conf_destroy(c);
	return found;
}

/* From eight threads the winning construction's refinement is refined by
 * lanes while it is filled (place_refine.c): the lane candidate's note
 * says so when that start won, and the candidates, predicted times and
 * mapping are those of one thread. */
START_TEST(auto_lanes_begun_early)
{
	ck_assert_msg(draws_to_note(&SMALL_DRAWS, 8, 6, "+lanes",
				    "begun as its start was filled", false),
		      "no lane refinement begun early in 6 draws");
}
END_TEST

/* On two threads or more the losers kept on their bounds, still within
 * reach of the best's time, are filled beside the best's own lane
 * refinement (place_refine.c): their notes say so, and the candidates,
 * predicted times and mapping are those of one thread. */
START_TEST(auto_losers_filled_beside)
{
	ck_assert_msg(draws_to_note(&SMALL_DRAWS, 4, 12, "",
				    "filled beside the lane refinement", false),
		      "no loser filled beside in 12 draws");
}
END_TEST

/* A loser's filling stops once its bound shows it out of reach of the
 * best's time (no start worth refining): on one thread and beside the
 * lane refinement alike, it is left with that bound.  8x8x8 halos on 512
 * nodes of a 16^3 torus (the first draws have one). */
START_TEST(auto_loser_stops_out_of_reach)
{
	static const struct draw_case big = {
		"Network=torus Dims=16x16x16\nNodeName=n[0-4095] CoordOrder=x-major\n",
		4096, 512, "8x8x8"
	};
	ck_assert_msg(draws_to_note(&big, 4, 8, "", "filled beside the lane refinement",
				    true), "no loser stopped out of reach in 8 draws");
}
END_TEST

/* On four threads or more Slurm's block order, when close to the winner,
 * is refined and filled beside the winner's refinement (place_refine.c):
 * its note says so, and the candidates, predicted times and mapping are
 * those of one thread. */
START_TEST(auto_block_refined_beside)
{
	tp_conf *c = torus8();
	int32_t nodes[128];
	for (int32_t i = 0; i < 128; i++)
		nodes[i] = i;
	tp_alloc *a = NULL;
	ck_assert_int_eq(tp_alloc_from_nodes(tp_conf_machine(c), nodes, 128, 2, &a, NULL), 0);
	tp_graph *g = NULL;
	ck_assert_int_eq(tp_graph_from_stencil(&g, "16x16", 256, NULL), 0);
	tp_place_report r1, rk;
	auto_one_and(g, a, 4, &r1, &rk);
	int beside = -1;
	for (int i = 0; i < rk.ncandidates; i++)
		if (!strcmp(rk.cand[i].name, "block+refine"))
			beside = i;
	ck_assert_msg(beside >= 0, "no block+refine");
	ck_assert_msg(strstr(rk.cand[beside].note, "made beside the winner's"), "%s",
		      rk.cand[beside].note);
	ck_assert_ptr_null(strstr(r1.cand[beside].note, "beside"));
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

/* On many cores greedy growth, on one thread, ends after the others: the
 * refinement of the best construction so far begins meanwhile, and is kept
 * when that construction wins after all.  Here greedy is held back until
 * the others are built: the refinement begins early (its note says so),
 * and the candidates, scores and mapping are those of one thread. */
START_TEST(auto_refines_before_greedy_ends)
{
	/* a ring of 4,096 nodes: routes too long for predicted times, so
	 * hop-bytes (and the congestion rule) choose the winner */
	tp_conf *c = conf_of("Network=torus Dims=4096 Wrap=yes\n"
			     "NodeName=r[0-4095] CoordOrder=x-major\n", "ring.conf");
	int32_t *perm = malloc(sizeof(int32_t) * 4096);
	shuffle(perm, 4096, 3);
	tp_alloc *a = NULL;
	ck_assert_int_eq(tp_alloc_from_nodes(tp_conf_machine(c), perm, 1024, 2,
					     &a, NULL), 0);
	tp_graph *g = random_grid(64, 32, 9);   /* no coordinates */
	int32_t *m1 = malloc(sizeof(int32_t) * 2048), *mk = malloc(sizeof(int32_t) * 2048);
	tp_place_opts o;
	tp_place_opts_default(&o);
	o.policy = TP_POLICY_AUTO;
	o.geom.time_budget_ms = 0;
	o.geom.nthreads = 1;
	tp_place_report r1, rk;
	tp_error err;
	ck_assert_msg(tp_place_ex(g, a, &o, m1, &r1, &err) == 0, "%s", err.msg);
	ck_assert(!r1.by_time);
	o.geom.nthreads = 4;
	ck_assert_msg(tp__place_ex_greedy_last(g, a, &o, mk, &rk, &err) == 0, "%s",
		      err.msg);
	ck_assert_mem_eq(m1, mk, sizeof(int32_t) * 2048);
	assert_same_candidates(&r1, &rk);
	int early = -1, bip = -1;
	for (int i = 0; i < rk.ncandidates; i++) {
		if (strstr(rk.cand[i].note, "begun before the constructions ended"))
			early = i;
		if (!strcmp(rk.cand[i].name, "bipartition"))
			bip = i;
	}
	ck_assert_msg(early >= 0, "no refinement begun early");
	ck_assert_str_eq(rk.cand[early].name, "bipartition+refine");
	ck_assert_msg(atoll(rk.cand[early].note) > 0, "%s", rk.cand[early].note);
	ck_assert(bip >= 0 && rk.cand[early].score < rk.cand[bip].score);
	ck_assert_str_eq(r1.cand[early].note + strcspn(r1.cand[early].note, ","), "");
	free(perm);
	free(m1);
	free(mk);
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

/* Distance=bandwidth: a hop along a link half as fast costs 2. */
START_TEST(weighted_torus)
{
	tp_conf *c = conf_of("Network=torus Dims=4x4x4 LinkBandwidth=10,5,10 Distance=bandwidth\n"
			     "NodeName=n[00-63] CoordOrder=x-major\n", "w.conf");
	tp_error err;
	const tp_machine *m = tp_conf_machine(c);
	ck_assert_int_eq(tp_machine_hop_cost(m, 0), 1);
	ck_assert_int_eq(tp_machine_hop_cost(m, 1), 2);
	/* n00 = (0,0,0), n21 = (1,1,1): 1 + 2 + 1 */
	int32_t a0 = tp_machine_find_node(m, "n00"), a1 = tp_machine_find_node(m, "n21");
	ck_assert_int_eq(tp_machine_distance(m, a0, a1), 4);
	int64_t links[8];
	ck_assert_int_eq(tp_machine_route(m, a0, a1, links, 8), 3);
	/* the y hops of a 2x2x1 block cost twice the x hops */
	tp_alloc *a = NULL;
	ck_assert_int_eq(tp_alloc_from_hostlist(m, "n[00-01,04-05]", 1, "t", &a, NULL), 0);
	tp_graph *g = NULL;
	ck_assert_int_eq(tp_graph_from_stencil(&g, "2x2", 4, NULL), 0);
	int32_t map[4] = { 0, 1, 2, 3 };
	ck_assert(tp_metrics_hop_bytes(g, a, map) == 6.0);
	tp_metrics mt;
	ck_assert_int_eq(tp_metrics_compute(g, a, map, true, &mt, NULL), 0);
	ck_assert(mt.hop_bytes == 6.0 && mt.max_dilation == 2);
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	/* auto on a shuffled ring: valid, never worse than block */
	ck_assert_int_eq(tp_alloc_from_hostlist(m, "n[00-63]", 2, "t", &a, NULL), 0);
	g = random_ring(128, 3);
	int32_t mm[128];
	tp_place_opts o;
	tp_place_opts_default(&o);
	o.policy = TP_POLICY_AUTO;
	o.geom.time_budget_ms = 0;
	ck_assert_int_eq(tp_place_ex(g, a, &o, mm, NULL, NULL), 0);
	ck_assert_int_eq(tp_mapping_validate(g, a, mm, NULL), 0);
	ck_assert(tp_metrics_hop_bytes(g, a, mm) < 0.5 * block_hb(g, a));
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
	ck_assert_int_eq(tp_conf_load_string("Network=torus Dims=4 Distance=far\nNodeName=n[0-3] CoordOrder=x-major\n",
					     "w.conf", &c, &err), TP_EINVAL);
	tp_assert_err_has(&err, "w.conf:1: Distance=far: expected hops or bandwidth");
}
END_TEST

/* A 32^3 torus and `nodes` of its nodes drawn by seed, `slots` each. */
#define T32 "Network=torus Dims=32x32x32 Wrap=yes\nNodeName=n[00000-32767] CoordOrder=x-major\n"

static tp_alloc *torus32_random(tp_conf **c, int32_t nodes, int slots, uint64_t seed)
{
	*c = conf_of(T32, "t32.conf");
	int32_t *perm = malloc(sizeof(int32_t) * 32768);
	shuffle(perm, 32768, seed);
	tp_alloc *a = NULL;
	ck_assert_int_eq(tp_alloc_from_nodes(tp_conf_machine(*c), perm, nodes, slots,
					     &a, NULL), 0);
	free(perm);
	return a;
}

/* The bipartition's splits of a level run side by side: the mapping is the
 * same on 1, 2 and 5 threads, valid, and far below Slurm's order in
 * hop-bytes. */
START_TEST(bipartition_threads_same_result)
{
	tp_conf *c = NULL;
	tp_alloc *a = torus32_random(&c, 2048, 4, 5);
	tp_graph *g = NULL;
	ck_assert_int_eq(tp_graph_from_stencil(&g, "32x16x16", 8192, NULL), 0);
	int32_t *m1 = malloc(sizeof(int32_t) * 8192);
	int32_t *mk = malloc(sizeof(int32_t) * 8192);
	tp_graphmap_opts o;
	tp_graphmap_opts_default(&o);
	o.refine_passes = 0;
	tp_error err;
	ck_assert_msg(tp__graphmap_bipartition_threads(g, a, &o, 1, m1, &err) == 0,
		      "%s", err.msg);
	ck_assert_int_eq(tp_mapping_validate(g, a, m1, NULL), 0);
	for (int th = 2; th <= 5; th += 3) {
		ck_assert_int_eq(tp__graphmap_bipartition_threads(g, a, &o, th, mk, NULL), 0);
		ck_assert_mem_eq(mk, m1, sizeof(int32_t) * 8192);
	}
	ck_assert_int_eq(tp_map_block(a, 8192, mk, NULL), 0);
	double block = tp_metrics_hop_bytes(g, a, mk);
	double bip = tp_metrics_hop_bytes(g, a, m1);
	ck_assert_msg(bip < 0.6 * block, "bipartition %g, block %g", bip, block);
	free(m1);
	free(mk);
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

/* Large graphs refine in chunks whose proposals may run on several threads:
 * the result is the same on 1, 2 and 5 threads, a valid mapping, lower in
 * hop-bytes than the start, and refining it again never raises it. */
START_TEST(refine_threads_same_result)
{
	tp_conf *c = NULL;
	/* 4,096 random nodes x 4 slots: 16,384 tasks, the chunked size */
	tp_alloc *a = torus32_random(&c, 4096, 4, 11);
	tp_graph *g = NULL;
	ck_assert_int_eq(tp_graph_from_stencil(&g, "32x32x16", 16384, NULL), 0);
	int32_t *start = malloc(sizeof(int32_t) * 16384);
	int32_t *m1 = malloc(sizeof(int32_t) * 16384);
	int32_t *mk = malloc(sizeof(int32_t) * 16384);
	ck_assert_int_eq(tp_map_block(a, 16384, start, NULL), 0);
	double before = tp_metrics_hop_bytes(g, a, start);
	tp_graphmap_opts o;
	tp_graphmap_opts_default(&o);
	int64_t moves1 = 0;
	memcpy(m1, start, sizeof(int32_t) * 16384);
	tp_error err;
	ck_assert_msg(tp__graphmap_refine_threads(g, a, &o, 1, NULL, m1, &moves1, &err) == 0,
		      "%s", err.msg);
	ck_assert_int_eq(tp_mapping_validate(g, a, m1, NULL), 0);
	double after = tp_metrics_hop_bytes(g, a, m1);
	ck_assert_msg(moves1 > 1000 && after < 0.8 * before, "%lld moves: %g -> %g",
		      (long long)moves1, before, after);
	for (int th = 2; th <= 5; th += 3) {
		int64_t moves = 0;
		memcpy(mk, start, sizeof(int32_t) * 16384);
		ck_assert_int_eq(tp__graphmap_refine_threads(g, a, &o, th, NULL, mk, &moves,
							     NULL), 0);
		ck_assert_int_eq(moves, moves1);
		ck_assert_mem_eq(mk, m1, sizeof(int32_t) * 16384);
	}
	ck_assert_int_eq(tp__graphmap_refine_threads(g, a, &o, 2, NULL, mk, NULL, NULL), 0);
	ck_assert(tp_metrics_hop_bytes(g, a, mk) <= after * (1 + 1e-12));
	/* stopped (a refinement made ahead, no longer wanted): it ends at
	 * once, as past its budget, and the map is its start */
	atomic_bool stop;
	atomic_init(&stop, true);
	int64_t smoves = -1;
	memcpy(mk, start, sizeof(int32_t) * 16384);
	ck_assert_int_eq(tp__graphmap_refine_threads(g, a, &o, 2, &stop, mk, &smoves, NULL), 0);
	ck_assert_int_eq(smoves, 0);
	ck_assert_mem_eq(mk, start, sizeof(int32_t) * 16384);
	free(start);
	free(m1);
	free(mk);
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

/* Under a budget nothing starts that cannot finish in it: a candidate whose
 * lower cost estimate is past the budget is skipped with why, the
 * congestion refinement gives back its start when the budget runs out
 * while it routes, and the result is still a valid mapping. */
START_TEST(budget_gates_candidates)
{
	tp_conf *c = conf_of(T32, "t32.conf");
	tp_alloc *a = NULL;
	ck_assert_int_eq(tp_alloc_from_hostlist(tp_conf_machine(c), "n[00000-32767]",
						1, "t32", &a, NULL), 0);
	tp_graph *g = NULL;
	ck_assert_int_eq(tp_graph_from_stencil(&g, "32x32x32", 32768, NULL), 0);
	int32_t *m = malloc(sizeof(int32_t) * 32768);
	tp_place_opts o;
	tp_place_opts_default(&o);
	o.policy = TP_POLICY_AUTO;
	/* METIS on 196,608 adjacency entries is estimated at >= 196 ms */
	o.geom.time_budget_ms = 50;
	tp_place_report r;
	ck_assert_int_eq(tp_place_ex(g, a, &o, m, &r, NULL), 0);
	ck_assert_int_eq(tp_mapping_validate(g, a, m, NULL), 0);
	ck_assert(r.budget_hit);
	int seen = 0;
	for (int i = 0; i < r.ncandidates; i++)
		if (!strcmp(r.cand[i].name, "bipartition")) {
			seen = 1;
			ck_assert(!r.cand[i].ran);
			ck_assert_msg(!strncmp(r.cand[i].note, "skipped: ", 9), "%s",
				      r.cand[i].note);
		}
	ck_assert(seen);
	tp_graph_destroy(g);

	/* the auto rule's congestions: a shuffled 100x80 grid without
	 * coordinates, block and zorder within 20 % of each other.  Its
	 * 15,820 edges on routes of up to 48 links are estimated at 7.6 ms a
	 * congestion, more than an eighth of a 50 ms budget: the comparison
	 * goes by hop-bytes.  Without a budget they are computed. */
	g = random_grid(100, 80, 5);
	for (int b = 0; b < 2; b++) {
		o.geom.time_budget_ms = b ? 0 : 50;
		ck_assert_int_eq(tp_place_ex(g, a, &o, m, &r, NULL), 0);
		ck_assert_int_eq(tp_mapping_validate(g, a, m, NULL), 0);
		ck_assert_str_eq(r.cand[0].name, "block");
		bool any = false;
		for (int i = 0; i < r.ncandidates; i++)
			any |= r.cand[i].has_congestion;
		ck_assert_msg(any == (b == 1), "budget %g: congestion %s",
			      o.geom.time_budget_ms, any ? "computed" : "not computed");
	}
	free(m);
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);

	/* the congestion refinement, out of time while routing */
	c = torus8();
	g = random_grid(16, 16, 3);
	a = sparse_alloc(c, 64, 4, 1);
	int32_t m1[256], m2[256];
	tp_graphmap_opts go;
	tp_graphmap_opts_default(&go);
	ck_assert_int_eq(tp_graphmap_bipartition(g, a, &go, m1, NULL), 0);
	memcpy(m2, m1, sizeof m1);
	go.time_budget_ms = 1e-9;
	int64_t moves = -1;
	ck_assert_int_eq(tp_graphmap_refine_congestion(g, a, &go, m1, &moves, NULL), 0);
	ck_assert_mem_eq(m1, m2, sizeof m1);
	ck_assert(moves <= 0);
	tp_alloc_destroy(a);
	tp_graph_destroy(g);
	tp_conf_destroy(c);
}
END_TEST

/* Congestion refinement on a shuffled grid over sparse allocations: never
 * raises the maximum link load of the hop-bytes result, lowers it on most
 * of them (e.g. 1200 to 800 bytes on directed links: 8 messages of 100
 * bytes), deterministically, and the mappers' option does the same. */
START_TEST(congestion_refinement)
{
	tp_conf *c = torus8();
	tp_graph *g = random_grid(16, 16, 3);
	int lowered = 0;
	for (uint64_t seed = 1; seed <= 8; seed++) {
		tp_alloc *a = sparse_alloc(c, 64, 4, seed);
		int32_t m1[256], m2[256];
		tp_graphmap_opts o;
		tp_graphmap_opts_default(&o);
		ck_assert_int_eq(tp_graphmap_bipartition(g, a, &o, m1, NULL), 0);
		tp_metrics before, after;
		ck_assert_int_eq(tp_metrics_compute(g, a, m1, true, &before, NULL), 0);
		memcpy(m2, m1, sizeof m1);
		int64_t moves = 0;
		ck_assert_int_eq(tp_graphmap_refine_congestion(g, a, &o, m1, &moves, NULL), 0);
		ck_assert_int_eq(tp_graphmap_refine_congestion(g, a, &o, m2, NULL, NULL), 0);
		ck_assert_mem_eq(m1, m2, sizeof m1);
		ck_assert_int_eq(tp_mapping_validate(g, a, m1, NULL), 0);
		ck_assert_int_eq(tp_metrics_compute(g, a, m1, true, &after, NULL), 0);
		ck_assert_msg(after.max_congestion_bytes <= before.max_congestion_bytes,
			      "seed %d: %g -> %g", (int)seed, before.max_congestion_bytes,
			      after.max_congestion_bytes);
		lowered += moves > 0 && after.max_congestion_bytes < before.max_congestion_bytes;
		/* the option does the same inside the mapper */
		o.refine_congestion = true;
		ck_assert_int_eq(tp_graphmap_bipartition(g, a, &o, m2, NULL), 0);
		ck_assert_mem_eq(m1, m2, sizeof m1);
		/* keeping hop-bytes: the maximum still never grows, hop-bytes
		 * neither */
		ck_assert_int_eq(tp_graphmap_bipartition(g, a, NULL, m2, NULL), 0);
		o.congestion_keep_hops = true;
		ck_assert_int_eq(tp_graphmap_refine_congestion(g, a, &o, m2, NULL, NULL), 0);
		tp_metrics kept;
		ck_assert_int_eq(tp_metrics_compute(g, a, m2, true, &kept, NULL), 0);
		ck_assert(kept.max_congestion_bytes <= before.max_congestion_bytes);
		ck_assert(kept.hop_bytes <= before.hop_bytes);
		tp_alloc_destroy(a);
	}
	ck_assert_msg(lowered >= 3, "lowered on %d of 8 allocations", lowered);
	tp_graph_destroy(g);
	tp_conf_destroy(c);
}
END_TEST

/* A captured all-to-all (every pair of 320 tasks its own 1 to 100 bytes)
 * on a line of 80 nodes of 4 slots: a try routes a message to each of the
 * 79 other nodes and back, so a task's tries stop after routing so many
 * messages (it tries its heaviest peers' nodes first), and
 * the congestion refinement still keeps its terms (a valid mapping, the
 * same on every run, the busiest link never heavier) and lowers the
 * busiest link from a random start. */
START_TEST(congestion_dense)
{
	tp_conf *c = NULL;
	tp_alloc *a = line_of(&c, 80);
	enum { N = 320 };
	tp_graph *g = all_to_all(N, 5);
	int32_t m1[N], m2[N];
	ck_assert_int_eq(tp_map_random(a, N, 3, m1, NULL), 0);
	memcpy(m2, m1, sizeof m1);
	tp_metrics before, after;
	ck_assert_int_eq(tp_metrics_compute(g, a, m1, true, &before, NULL), 0);
	int64_t moves = 0;
	ck_assert_int_eq(tp_graphmap_refine_congestion(g, a, NULL, m1, &moves, NULL), 0);
	ck_assert_int_eq(tp_graphmap_refine_congestion(g, a, NULL, m2, NULL, NULL), 0);
	ck_assert_mem_eq(m1, m2, sizeof m1);
	ck_assert_int_eq(tp_mapping_validate(g, a, m1, NULL), 0);
	ck_assert_int_eq(tp_metrics_compute(g, a, m1, true, &after, NULL), 0);
	ck_assert_msg(moves > 0 && after.max_congestion_bytes < before.max_congestion_bytes,
		      "%lld moves: %g -> %g", (long long)moves,
		      before.max_congestion_bytes, after.max_congestion_bytes);
	tp_graph_destroy(g);
	tp_alloc_destroy(a);
	tp_conf_destroy(c);
}
END_TEST

/* Random instances on every machine kind: valid, deterministic, refinement
 * never increases hop-bytes, auto never worse than block. */
START_TEST(random_instances)
{
	static const char *const confs[] = {
		"Network=torus Dims=6x5x4\nNodeName=n[000-119] CoordOrder=x-major\n",
		"Network=mesh Dims=12x10\nNodeName=n[000-119] CoordOrder=x-major\n",
		"Network=torus Dims=10x12 LinkBandwidth=4,1 Distance=bandwidth NodesPerRouter=1\n"
		"NodeName=n[000-119] CoordOrder=x-major\n",
		"Network=dragonfly Groups=6 RoutersPerGroup=5 NodesPerRouter=4 LinksPerGroupPair=2 Routing=valiant\n"
		"NodeName=n[000-119] CoordOrder=x-major\n",
	};
	uint64_t st = 12345;
	for (int inst = 0; inst < 30; inst++) {
		tp_conf *c = NULL;
		tp_machine *tree = NULL;
		tp_error err;
		const tp_machine *m;
		if (inst % 5 == 4) {
			/* a switch tree: 10 leaves of 12 nodes, irregular above */
			static const char *topo =
				"SwitchName=l0 Nodes=n[000-011]\nSwitchName=l1 Nodes=n[012-023]\n"
				"SwitchName=l2 Nodes=n[024-035]\nSwitchName=l3 Nodes=n[036-047]\n"
				"SwitchName=l4 Nodes=n[048-059]\nSwitchName=l5 Nodes=n[060-071]\n"
				"SwitchName=l6 Nodes=n[072-083]\nSwitchName=l7 Nodes=n[084-095]\n"
				"SwitchName=l8 Nodes=n[096-107]\nSwitchName=l9 Nodes=n[108-119]\n"
				"SwitchName=a0 Switches=l[0-2]\nSwitchName=a1 Switches=l[3-4]\n"
				"SwitchName=b0 Switches=a[0-1],l5\nSwitchName=top Switches=b0,l[6-9]\n";
			int cost[3] = { 1, 2, 3 };
			ck_assert_msg(tp_machine_from_topology(&tree, topo, "t", cost, 3, &err) == 0,
				      "%s", err.msg);
			m = tree;
		} else {
			ck_assert_msg(tp_conf_load_string(confs[inst % 4], "r.conf", &c, &err) == 0,
				      "%s", err.msg);
			m = tp_conf_machine(c);
		}
		int32_t nn = 5 + (int32_t)(rng(&st) % 40), perm[120];
		shuffle(perm, 120, rng(&st));
		tp_alloc *a = NULL;
		ck_assert_int_eq(tp_alloc_from_nodes(m, perm, nn, 1, &a, NULL), 0);
		int64_t slots = 0;
		for (int32_t i = 0; i < nn; i++) {
			int k = 1 + (int)(rng(&st) % 4);
			ck_assert_int_eq(tp_alloc_set_slots(a, i, k, NULL), 0);
			slots += k;
		}
		int32_t nt = 1 + (int32_t)(rng(&st) % (uint64_t)slots);
		int64_t ne = (int64_t)(rng(&st) % (uint64_t)(3 * nt + 1));
		int32_t *u = malloc(sizeof(int32_t) * (size_t)(ne + 1));
		int32_t *v = malloc(sizeof(int32_t) * (size_t)(ne + 1));
		double *w = malloc(sizeof(double) * (size_t)(ne + 1));
		int64_t k = 0;
		for (int64_t e = 0; e < ne && nt > 1; e++) {
			u[k] = (int32_t)(rng(&st) % (uint64_t)nt);
			v[k] = (int32_t)(rng(&st) % (uint64_t)nt);
			w[k] = (double)(rng(&st) % 5);   /* zero-byte edges too */
			if (u[k] != v[k])
				k++;
		}
		tp_graph *g = NULL;
		ck_assert_int_eq(tp_graph_from_edges(&g, nt, k, u, v, w, "rnd", NULL), 0);
		int32_t *m1 = malloc(sizeof(int32_t) * (size_t)nt);
		int32_t *m2 = malloc(sizeof(int32_t) * (size_t)nt);
		mapper fs[2] = { tp_graphmap_greedy, tp_graphmap_bipartition };
		for (int f = 0; f < 2; f++) {
			ck_assert_msg(fs[f](g, a, NULL, m1, &err) == 0, "%d/%d: %s", inst, f, err.msg);
			ck_assert_msg(tp_mapping_validate(g, a, m1, &err) == 0, "%d/%d: %s", inst, f, err.msg);
			ck_assert_int_eq(fs[f](g, a, NULL, m2, NULL), 0);
			ck_assert_mem_eq(m1, m2, sizeof(int32_t) * (size_t)nt);
		}
		ck_assert_int_eq(tp_map_random(a, nt, inst + 1, m1, NULL), 0);
		double before = tp_metrics_hop_bytes(g, a, m1);
		ck_assert_int_eq(tp_graphmap_refine(g, a, NULL, m1, NULL, NULL), 0);
		ck_assert_int_eq(tp_mapping_validate(g, a, m1, NULL), 0);
		ck_assert(tp_metrics_hop_bytes(g, a, m1) <= before * (1 + 1e-12));
		/* congestion refinement never raises the maximum link load */
		tp_metrics mb, ma;
		ck_assert_int_eq(tp_map_random(a, nt, inst + 7, m1, NULL), 0);
		ck_assert_int_eq(tp_metrics_compute(g, a, m1, true, &mb, NULL), 0);
		ck_assert_msg(tp_graphmap_refine_congestion(g, a, NULL, m1, NULL, &err) == 0, "%s", err.msg);
		ck_assert_int_eq(tp_mapping_validate(g, a, m1, NULL), 0);
		ck_assert_int_eq(tp_metrics_compute(g, a, m1, true, &ma, NULL), 0);
		ck_assert_msg(ma.max_congestion_bytes <= mb.max_congestion_bytes * (1 + 1e-9),
			      "%d: %g > %g", inst, ma.max_congestion_bytes, mb.max_congestion_bytes);
		tp_place_opts o;
		tp_place_opts_default(&o);
		o.policy = TP_POLICY_AUTO;
		o.geom.time_budget_ms = 0;
		o.geom.metric = inst % 3 == 2 ? TP_METRIC_CONGESTION : TP_METRIC_HOP_BYTES;
		tp_place_report r;
		ck_assert_int_eq(tp_place_ex(g, a, &o, m1, &r, NULL), 0);
		ck_assert_int_eq(tp_mapping_validate(g, a, m1, NULL), 0);
		ck_assert(r.best >= 0 && r.cand[r.best].score <= r.cand[0].score);
		free(u);
		free(v);
		free(w);
		free(m1);
		free(m2);
		tp_graph_destroy(g);
		tp_alloc_destroy(a);
		tp_conf_destroy(c);
		tp_machine_destroy(tree);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("graphmap");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, greedy_and_bipartition_ring);
	tcase_add_test(tc, greedy_and_bipartition_grid);
	tcase_add_test(tc, refine_never_increases);
	tcase_add_test(tc, refine_threads_same_result);
	tcase_add_test(tc, bipartition_threads_same_result);
	tcase_add_test(tc, heterogeneous_and_subset);
	tcase_add_test(tc, disconnected_and_edgeless);
	tcase_add_test(tc, policies_graph_auto);
	tcase_add_test(tc, auto_never_worse_than_block);
	tcase_add_test(tc, auto_with_coordinates);
	tcase_add_test(tc, auto_side_by_side_same_result);
	tcase_add_test(tc, auto_judges_on_bounds_past_the_work_limit);
	tcase_add_test(tc, auto_block_refined_beside);
	tcase_add_test(tc, auto_losers_filled_beside);
	tcase_add_test(tc, auto_loser_stops_out_of_reach);
	tcase_add_test(tc, auto_lanes_begun_early);
	tcase_add_test(tc, auto_refines_before_greedy_ends);
	tcase_add_test(tc, weighted_torus);
	tcase_add_test(tc, congestion_refinement);
	tcase_add_test(tc, congestion_dense);
	tcase_add_test(tc, budget_gates_candidates);
	tcase_add_test(tc, random_instances);
	tcase_add_test(tc, refine_moves_groups);
	tcase_add_test(tc, refine_dense_by_differences);
	suite_add_tcase(s, tc);
	return tp_test_run(s);
}
