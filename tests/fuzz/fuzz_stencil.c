/* Stencil specs ("64x32x32:7pt:periodic=x:bytes=4096:weights=2,1,1"), and
 * the graph a valid one gives: weights and coordinates as the accessors show
 * them (a stencil may store neither) are checked against the CSR and the
 * grid; a mismatch aborts. */
#include "fuzz.h"
#include "pattern/pattern_internal.h"

static void check(const tp_graph *g)
{
	int32_t n = tp_graph_ntasks(g);
	const int64_t *x = tp_graph_xadj(g);
	const int32_t *adj = tp_graph_adjncy(g);
	const double *w = tp_graph_weights(g), *c = tp_graph_coords(g);
	int grid[3] = { 1, 1, 1 }, nd = tp_graph_grid_dims(g, grid);
	if (!x || !adj || !w || !c || nd != tp_graph_coord_dims(g))
		abort();
	double total = 0;
	for (int32_t t = 0; t < n; t++) {
		int32_t r = t;
		for (int d = 0; d < nd; d++) {
			if (c[(size_t)t * (size_t)nd + (size_t)d] != r % grid[d])
				abort();
			r /= grid[d];
		}
		const int32_t *a;
		const double *b;
		int32_t k = tp_graph_neighbors(g, t, &a, &b);
		if (k != x[t + 1] - x[t] || a != adj + x[t] || b != w + x[t])
			abort();
		for (int32_t i = 0; i < k; i++) {
			if (a[i] == t || (i && a[i - 1] >= a[i]) || !(b[i] >= 0))
				abort();
			int64_t e = x[a[i]];   /* the pair's other row: same bits */
			while (e < x[a[i] + 1] && adj[e] != t)
				e++;
			if (e == x[a[i] + 1] || memcmp(&w[e], &b[i], sizeof(double)))
				abort();
			if (a[i] > t)
				total += b[i];
		}
	}
	/* the same additions in the same order as the builder's */
	if (total != tp_graph_total_bytes(g))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_str(data, size);
	tp_graph *g = NULL;
	tp_error err;
	/* the whole spec is parsed before the task count is compared, so a
	 * fixed count bounds the graph without hiding any of the parser */
	if (tp_graph_from_stencil(&g, s, 64, &err) == 0) {
		check(g);
		tp_graph_destroy(g);
	}
	if (tp_graph_from_stencil(&g, s, 8, &err) == 0) {
		check(g);
		tp_graph_destroy(g);
	}
	free(s);
	return 0;
}
