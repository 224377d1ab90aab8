/* Graphs the unit tests build from edges (tp_graph_from_edges, an internal
 * entry: for the tests that see the core's internals). */
#ifndef TP_TEST_GRAPHS_H
#define TP_TEST_GRAPHS_H

#include "testutil.h"
#include "pattern/pattern_internal.h"

/* A graph of ntasks tasks whose first n talk all to all: w[k] bytes for
 * the k-th pair (i, j), i < j, in order (i, then j). */
static inline tp_graph *tp_test_all_pairs(int32_t ntasks, int32_t n, const double *w)
{
	int64_t ne = (int64_t)n * (n - 1) / 2, k = 0;
	int32_t *a = malloc(sizeof *a * (size_t)ne), *b = malloc(sizeof *b * (size_t)ne);
	ck_assert(a && b);
	for (int32_t i = 0; i < n; i++)
		for (int32_t j = i + 1; j < n; j++, k++) {
			a[k] = i;
			b[k] = j;
		}
	tp_graph *g = NULL;
	tp_error err;
	ck_assert_msg(tp_graph_from_edges(&g, ntasks, ne, a, b, w, "all pairs", &err) == 0,
		      "%s", err.msg);
	free(a);
	free(b);
	return g;
}

#endif
