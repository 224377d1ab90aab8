/* A training job's parallel layout (--topo-parallel, --parallel): the
 * spec's parser, the step's graph a valid one gives (its CSR checked: a
 * symmetric pattern of finite, non-negative bytes), and the step's
 * predicted phases on a small torus, which must add up to the whole. */
#include <math.h>

#include "fuzz.h"
#include <topoplace/alloc.h>
#include <topoplace/conf.h>
#include <topoplace/predict.h>
#include "pattern/pattern_internal.h"

#define TASKS 64
#define PER_NODE 4

static void check(const tp_graph *g, int32_t ntasks)
{
	int32_t n = tp_graph_ntasks(g);
	const int64_t *x = tp_graph_xadj(g);
	const int32_t *adj = tp_graph_adjncy(g);
	if (n != ntasks || !x || (x[n] > 0 && !adj))
		abort();
	for (int32_t t = 0; t < n; t++) {
		const int32_t *a;
		const double *b;
		int32_t k = tp_graph_neighbors(g, t, &a, &b);
		if (k != x[t + 1] - x[t])
			abort();
		for (int32_t i = 0; i < k; i++) {
			if (a[i] < 0 || a[i] >= n || a[i] == t || (i && a[i - 1] >= a[i]) ||
			    !(b[i] >= 0) || !isfinite(b[i]))
				abort();
			int64_t e = x[a[i]];   /* the pair's other row: the same bytes */
			while (e < x[a[i] + 1] && adj[e] != t)
				e++;
			if (e == x[a[i] + 1])
				abort();
		}
	}
}

/* The step predicted on 16 nodes of the fuzz machine, PER_NODE ranks
 * each, in rank order: the phases are finite, not negative, and sum to
 * the step. */
static void predict(const char *s)
{
	static tp_alloc *a;
	tp_error err;
	if (!a && tp_alloc_from_hostlist(tp_conf_machine(fuzz_machine()), "n[00-15]",
					 PER_NODE, "fuzz", &a, &err) != 0)
		abort();
	int32_t map[TASKS];
	for (int32_t t = 0; t < TASKS; t++)
		map[t] = t / PER_NODE;
	tp_prediction p;
	double phase[TP_STEP_PHASES];
	if (tp_predict_parallel_phases(s, a, map, TASKS, &p, phase, &err) != 0)
		return;
	double sum = 0;
	for (int i = 0; i < TP_STEP_PHASES; i++) {
		if (!(phase[i] >= 0) || !isfinite(phase[i]))
			abort();
		sum += phase[i];
	}
	if (!isfinite(p.exchange_us) || fabs(sum - p.exchange_us) > 1e-9 * fmax(1, sum))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = fuzz_str(data, size);
	tp_graph *g = NULL;
	tp_error err;
	/* a fixed task count bounds the graph: the sizes must multiply to it */
	if (tp_graph_from_parallel(&g, s, TASKS, NULL, &err) == 0) {
		check(g, TASKS);
		tp_graph_destroy(g);
		predict(s);
	}
	int32_t map[TASKS];
	for (int32_t t = 0; t < TASKS; t++)
		map[t] = (t * 7) % 16;   /* rings follow the nodes' order */
	if (tp_graph_from_parallel(&g, s, TASKS, map, &err) == 0) {
		check(g, TASKS);
		tp_graph_destroy(g);
	}
	if (tp_graph_from_parallel(&g, s, 8, NULL, &err) == 0) {
		check(g, 8);
		tp_graph_destroy(g);
	}
	free(s);
	return 0;
}
