/* topoplace — a graph's heavy part: the messages that carry its bytes.
 *
 * A captured trace lists every pair that ever exchanged a byte: a code's
 * halo faces, and beside them the all-to-all and all-reduce partners of
 * every rank, hundreds of pairs of a few bytes each.  The link-load
 * refinement walks each task's messages for every move it tries, so those
 * light pairs set its cost (a 512-rank dense trace: 1,022 entries a task,
 * 94 % of them under 0.1 % of its bytes) while they change no link's load
 * by more than noise.  The view keeps, for each task, its heaviest messages
 * that together carry a given share of its bytes, in that order; a pair is
 * kept when either end keeps it, so the view stays symmetric.  The time
 * model and the metrics still judge the whole graph. */
#include <stdlib.h>

#include "pattern/pattern_internal.h"
#include "util/util_internal.h"

/* Descending weights, then entry order: a task's entries heaviest first. */
struct heavy_entry {
	double w;
	int64_t e;
};

static int cmp_heavy(const void *x, const void *y)
{
	const struct heavy_entry *a = x, *b = y;
	if (a->w != b->w)
		return a->w > b->w ? -1 : 1;
	return a->e < b->e ? -1 : a->e > b->e;
}

/* The weight the task's entries [lo, hi) must reach to be kept: the
 * lightest of its heaviest entries that together carry share of its bytes
 * (ties with it are kept too). */
static double keep_from(const struct tp_graph *g, int64_t lo, int64_t hi,
			double share, struct heavy_entry *tmp)
{
	double total = 0;
	int64_t n = hi - lo;
	for (int64_t k = 0; k < n; k++) {
		tmp[k] = (struct heavy_entry){ tp__graph_w(g, lo + k), lo + k };
		total += tmp[k].w;
	}
	qsort(tmp, (size_t)n, sizeof *tmp, cmp_heavy);
	double sum = 0;
	for (int64_t k = 0; k < n; k++) {
		sum += tmp[k].w;
		if (sum >= share * total)
			return tmp[k].w;
	}
	return n ? tmp[n - 1].w : 0;
}

void tp__graph_view_free(struct tp_graph *v)
{
	free(v->xadj);
	free(v->adjncy);
	free(v->weights);
	v->xadj = NULL;
	v->adjncy = NULL;
	v->weights = NULL;
}

int tp__graph_heavy_view(const struct tp_graph *g, double share,
			 struct tp_graph *out)
{
	int32_t n = g->ntasks;
	int64_t ne = g->xadj[n], most = 0;
	for (int32_t t = 0; t < n; t++)
		most = g->xadj[t + 1] - g->xadj[t] > most ? g->xadj[t + 1] - g->xadj[t] : most;
	*out = (struct tp_graph){ .ntasks = n, .unit_w = g->unit_w,
				  .total_bytes = g->total_bytes,
				  .exchanges = g->exchanges };
	double *thr = tp__malloc_array((size_t)n + 1, sizeof *thr);
	struct heavy_entry *tmp = tp__malloc_array((size_t)most + 1, sizeof *tmp);
	out->xadj = tp__malloc_array((size_t)n + 1, sizeof *out->xadj);
	out->adjncy = tp__malloc_array((size_t)ne + 1, sizeof *out->adjncy);
	out->weights = tp__malloc_array((size_t)ne + 1, sizeof *out->weights);
	if (!thr || !tmp || !out->xadj || !out->adjncy || !out->weights) {
		free(thr);
		free(tmp);
		tp__graph_view_free(out);
		return TP_ENOMEM;
	}
	for (int32_t t = 0; t < n; t++)
		thr[t] = keep_from(g, g->xadj[t], g->xadj[t + 1], share, tmp);
	int64_t at = 0;
	out->xadj[0] = 0;
	for (int32_t t = 0; t < n; t++) {
		int64_t k = 0;
		for (int64_t e = g->xadj[t]; e < g->xadj[t + 1]; e++) {
			double w = tp__graph_w(g, e);
			if (w >= thr[t] || w >= thr[g->adjncy[e]])
				tmp[k++] = (struct heavy_entry){ w, e };
		}
		qsort(tmp, (size_t)k, sizeof *tmp, cmp_heavy);
		for (int64_t i = 0; i < k; i++) {
			out->adjncy[at] = g->adjncy[tmp[i].e];
			out->weights[at++] = tmp[i].w;
		}
		out->xadj[t + 1] = at;
	}
	out->nedges = at / 2;
	free(thr);
	free(tmp);
	return 0;
}
