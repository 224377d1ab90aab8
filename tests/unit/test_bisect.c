/* Unit tests: the bipartition's two-way partitioner (core/src/map/bisect.c)
 * and the loop over the CPUs (core/src/util/parallel.c). */
#include <stdatomic.h>

#include "util/util_internal.h"
#include "map/bisect.h"
#include "testutil.h"

/* A CSR graph built edge by edge (both directions), weights 1 unless set. */
struct csr {
	int32_t n, *xadj, *adj, *w, *deg;
	int32_t (*e)[3];
	int32_t ne, cap;
};

static void csr_init(struct csr *g, int32_t n)
{
	memset(g, 0, sizeof *g);
	g->n = n;
	g->cap = 64;
	g->e = malloc(sizeof *g->e * (size_t)g->cap);
}

static void csr_edge(struct csr *g, int32_t u, int32_t v, int32_t w)
{
	if (g->ne == g->cap) {
		g->cap *= 2;
		g->e = realloc(g->e, sizeof *g->e * (size_t)g->cap);
	}
	g->e[g->ne][0] = u;
	g->e[g->ne][1] = v;
	g->e[g->ne++][2] = w;
}

static void csr_build(struct csr *g)
{
	g->xadj = calloc((size_t)g->n + 1, sizeof(int32_t));
	g->adj = malloc(sizeof(int32_t) * (size_t)(2 * g->ne + 1));
	g->w = malloc(sizeof(int32_t) * (size_t)(2 * g->ne + 1));
	g->deg = calloc((size_t)g->n + 1, sizeof(int32_t));
	for (int32_t i = 0; i < g->ne; i++) {
		g->xadj[g->e[i][0] + 1]++;
		g->xadj[g->e[i][1] + 1]++;
	}
	for (int32_t v = 0; v < g->n; v++)
		g->xadj[v + 1] += g->xadj[v];
	for (int32_t i = 0; i < g->ne; i++)
		for (int s = 0; s < 2; s++) {
			int32_t a = g->e[i][s], b = g->e[i][1 - s];
			int32_t at = g->xadj[a] + g->deg[a]++;
			g->adj[at] = b;
			g->w[at] = g->e[i][2];
		}
}

static void csr_free(struct csr *g)
{
	free(g->xadj);
	free(g->adj);
	free(g->w);
	free(g->deg);
	free(g->e);
}

/* A side-by-side grid, x by y, unit weights. */
static void grid(struct csr *g, int x, int y)
{
	csr_init(g, x * y);
	for (int j = 0; j < y; j++)
		for (int i = 0; i < x; i++) {
			if (i + 1 < x)
				csr_edge(g, j * x + i, j * x + i + 1, 1);
			if (j + 1 < y)
				csr_edge(g, j * x + i, (j + 1) * x + i, 1);
		}
	csr_build(g);
}

/* The weight of the cut edges, and the size of side 0. */
static int64_t cut_of(const struct csr *g, const int32_t *part, int32_t *n0)
{
	int64_t cut = 0;
	*n0 = 0;
	for (int32_t v = 0; v < g->n; v++) {
		ck_assert(part[v] == 0 || part[v] == 1);
		*n0 += part[v] == 0;
		for (int32_t e = g->xadj[v]; e < g->xadj[v + 1]; e++)
			if (part[g->adj[e]] != part[v])
				cut += g->w[e];
	}
	return cut / 2;
}

/* A 32 x 16 grid halves with one straight cut of 16 edges, the best there
 * is; the same seed gives the same split, and every size asked for is
 * exact. */
START_TEST(grid_halves_straight)
{
	struct csr g;
	grid(&g, 32, 16);
	int32_t p[512], q[512], n0;
	ck_assert_int_eq(tp__bisect(g.n, g.xadj, g.adj, g.w, NULL, 256, 1, p), 0);
	ck_assert_int_eq(cut_of(&g, p, &n0), 16);
	ck_assert_int_eq(n0, 256);
	ck_assert_int_eq(tp__bisect(g.n, g.xadj, g.adj, g.w, NULL, 256, 1, q), 0);
	ck_assert_mem_eq(p, q, sizeof p);
	/* a quarter: a straight cut of 16 again (8 columns of 16) */
	ck_assert_int_eq(tp__bisect(g.n, g.xadj, g.adj, g.w, NULL, 128, 1, p), 0);
	ck_assert_int_eq(cut_of(&g, p, &n0), 16);
	ck_assert_int_eq(n0, 128);
	/* any size is exact, and the cut stays within 1.5 times the best, a
	 * straight cut with a step (17): METIS's are 12 to 24 here */
	for (int32_t k = 1; k < 512; k += 37) {
		ck_assert_int_eq(tp__bisect(g.n, g.xadj, g.adj, g.w, NULL, k, 7, p), 0);
		int64_t cut = cut_of(&g, p, &n0);
		ck_assert_int_eq(n0, k);
		ck_assert_msg(cut <= 24, "%d of 512: cut %lld", k, (long long)cut);
	}
	csr_free(&g);
}
END_TEST

/* With a key per vertex (its x), the split of the lowest keys is one of
 * the starts: on a 32 x 16 grid halved, the cut across x (16 edges, the
 * best) is kept, and the random starts cannot replace it. */
START_TEST(key_cuts_across)
{
	struct csr g;
	grid(&g, 32, 16);
	double key[512];
	for (int v = 0; v < 512; v++)
		key[v] = v % 32;
	int32_t p[512], n0;
	for (uint64_t seed = 1; seed <= 3; seed++) {
		ck_assert_int_eq(tp__bisect(g.n, g.xadj, g.adj, g.w, key, 256, seed, p), 0);
		ck_assert_int_eq(cut_of(&g, p, &n0), 16);
		ck_assert_int_eq(n0, 256);
		for (int v = 0; v < 512; v++)
			ck_assert_int_eq(p[v], v % 32 < 16 ? 0 : 1);
	}
	csr_free(&g);
}
END_TEST

/* Heavy edges stay inside: two 8-vertex rings tied by heavy chords, joined
 * by light edges, split along the light ones. */
START_TEST(weights_decide)
{
	struct csr g;
	csr_init(&g, 16);
	for (int i = 0; i < 16; i++)
		csr_edge(&g, i, (i + 1) % 16, 1);
	/* vertices 0..7 and 8..15 each tied together */
	for (int i = 0; i < 7; i++) {
		csr_edge(&g, i, (i + 3) % 8, 100);
		csr_edge(&g, 8 + i, 8 + (i + 3) % 8, 100);
	}
	csr_build(&g);
	int32_t p[16], n0;
	ck_assert_int_eq(tp__bisect(g.n, g.xadj, g.adj, g.w, NULL, 8, 3, p), 0);
	ck_assert_int_eq(cut_of(&g, p, &n0), 2);
	for (int i = 1; i < 8; i++) {
		ck_assert_int_eq(p[i], p[0]);
		ck_assert_int_eq(p[8 + i], p[8]);
	}
	csr_free(&g);
}
END_TEST

/* Two components of 40 apart: cut 0, whichever the random starts; edge
 * cases: nothing to split, too small to split. */
START_TEST(components_and_edges)
{
	struct csr g;
	csr_init(&g, 80);
	for (int i = 0; i < 40; i++) {
		csr_edge(&g, i, (i + 1) % 40, 1);
		csr_edge(&g, 40 + i, 40 + (i + 1) % 40, 1);
	}
	csr_build(&g);
	int32_t p[80], n0;
	for (uint64_t seed = 0; seed < 5; seed++) {
		ck_assert_int_eq(tp__bisect(g.n, g.xadj, g.adj, g.w, NULL, 40, seed, p), 0);
		ck_assert_int_eq(cut_of(&g, p, &n0), 0);
		ck_assert_int_eq(n0, 40);
	}
	ck_assert_int_eq(tp__bisect(g.n, g.xadj, g.adj, g.w, NULL, 0, 1, p), 0);
	ck_assert_int_eq(cut_of(&g, p, &n0), 0);
	ck_assert_int_eq(n0, 0);
	ck_assert_int_eq(tp__bisect(g.n, g.xadj, g.adj, g.w, NULL, 80, 1, p), 0);
	ck_assert_int_eq(cut_of(&g, p, &n0), 0);
	ck_assert_int_eq(n0, 80);
	ck_assert_int_eq(tp__bisect(2, g.xadj, g.adj, g.w, NULL, 1, 1, p), 0);
	ck_assert(p[0] != p[1]);
	csr_free(&g);
}
END_TEST

/* Large enough to coarsen many levels: a 3-D grid of 32,768 vertices,
 * split 3:5.  The cut is near the best straight one (32 x 32 = 1,024). */
START_TEST(large_grid)
{
	struct csr g;
	int x = 32;
	csr_init(&g, x * x * x);
	for (int k = 0; k < x; k++)
		for (int j = 0; j < x; j++)
			for (int i = 0; i < x; i++) {
				int v = (k * x + j) * x + i;
				if (i + 1 < x)
					csr_edge(&g, v, v + 1, 1);
				if (j + 1 < x)
					csr_edge(&g, v, v + x, 1);
				if (k + 1 < x)
					csr_edge(&g, v, v + x * x, 1);
			}
	csr_build(&g);
	int32_t *p = malloc(sizeof(int32_t) * (size_t)g.n), n0;
	ck_assert_int_eq(tp__bisect(g.n, g.xadj, g.adj, g.w, NULL, 12288, 5, p), 0);
	int64_t cut = cut_of(&g, p, &n0);
	ck_assert_int_eq(n0, 12288);
	ck_assert_msg(cut <= 1024 * 5 / 4, "cut %lld", (long long)cut);
	free(p);
	csr_free(&g);
}
END_TEST

struct seen {
	atomic_int count[1000];
};

static void mark(void *arg, int32_t i)
{
	struct seen *s = arg;
	atomic_fetch_add(&s->count[i], 1);
}

/* Every index once, on 1, 3 and more threads than indices. */
START_TEST(parallel_for_each_once)
{
	static struct seen s;
	int threads[] = { 1, 3, 64 };
	for (int k = 0; k < 3; k++) {
		for (int i = 0; i < 1000; i++)
			atomic_init(&s.count[i], 0);
		int32_t n = k == 2 ? 10 : 1000;
		tp__parallel_for(n, threads[k], mark, &s);
		for (int i = 0; i < 1000; i++)
			ck_assert_int_eq(atomic_load(&s.count[i]), i < n ? 1 : 0);
	}
	tp__parallel_for(0, 4, mark, &s);   /* nothing to do */
}
END_TEST

int main(void)
{
	Suite *s = suite_create("bisect");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, grid_halves_straight);
	tcase_add_test(tc, weights_decide);
	tcase_add_test(tc, key_cuts_across);
	tcase_add_test(tc, components_and_edges);
	tcase_add_test(tc, large_grid);
	tcase_add_test(tc, parallel_for_each_once);
	suite_add_tcase(s, tc);
	return tp_test_run(s);
}
