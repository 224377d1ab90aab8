/* topoplace — a graph's tasks taken in groups of k: the pattern between
 * the groups.  The job maps Slurm's node groups whole (k consecutive
 * tasks, job_map.c); auto maps a grid's node tiles whole (node_tiles.c).
 *
 * A pair of groups exchanges what their tasks exchange; what stays inside a
 * group is dropped, as it stays inside a node.  The collectives' rounds are
 * priced per task (predict.c: a task's rounds over the routes it sends on,
 * the slowest task's), so a group's are its tasks' mean: the sum would
 * count k tasks' rounds as one task's chain. */
#include <stdlib.h>

#include "pattern/pattern_internal.h"
#include "util/util_internal.h"

/* Task u's group: of[u], or u / k without of. */
static inline int32_t group_at(const int32_t *of, int32_t k, int32_t u)
{
	return of ? of[u] : u / k;
}

int tp__graph_quotient(const tp_graph *g, const int32_t *group_of, int32_t ng,
		       int32_t k, tp_graph **out, tp_error *err)
{
	*out = NULL;
	if (!g || k < 1 || ng < 1 || (int64_t)ng * k != g->ntasks)
		return tp_error_set(err, TP_EINVAL, "groups: %d tasks in %d groups of "
				    "%d", g ? (int)g->ntasks : 0, (int)ng, (int)k);
	if (group_of) {
		int32_t *size = tp__calloc((size_t)ng, sizeof *size);
		if (!size)
			return tp_error_set(err, TP_ENOMEM, "groups: out of memory");
		int32_t bad = -1;
		for (int32_t u = 0; bad < 0 && u < g->ntasks; u++)
			if (group_of[u] < 0 || group_of[u] >= ng || ++size[group_of[u]] > k)
				bad = u;
		free(size);
		if (bad >= 0)
			return tp_error_set(err, TP_EINVAL, "groups: task %d in group %d of "
					    "%d, past %d tasks a group", (int)bad,
					    (int)group_of[bad], (int)ng, (int)k);
	}
	/* each pair once (u < v) for the bytes, every entry for the rounds:
	 * at most the graph's pairs and entries */
	size_t ne = (size_t)g->nedges, nre = g->rounds ? 2 * ne : 0;
	int32_t *pu = tp__malloc_array(ne + 1, sizeof *pu);
	int32_t *pv = tp__malloc_array(ne + 1, sizeof *pv);
	double *pw = tp__malloc_array(ne + 1, sizeof *pw);
	int32_t *ru = tp__malloc_array(nre + 1, sizeof *ru);
	int32_t *rv = tp__malloc_array(nre + 1, sizeof *rv);
	double *rr = tp__malloc_array(nre + 1, sizeof *rr);
	int rc = pu && pv && pw && ru && rv && rr ? 0 : TP_ENOMEM;
	size_t np = 0, nr = 0;
	for (int32_t u = 0; !rc && u < g->ntasks; u++)
		for (int64_t e = g->xadj[u]; e < g->xadj[u + 1]; e++) {
			int32_t v = g->adjncy[e];
			int32_t gu = group_at(group_of, k, u), gv = group_at(group_of, k, v);
			if (gu == gv)
				continue;
			if (u < v) {
				pu[np] = gu;
				pv[np] = gv;
				pw[np++] = tp__graph_w(g, e);
			}
			if (g->rounds && g->rounds[e] > 0) {
				ru[nr] = gu;
				rv[nr] = gv;
				rr[nr++] = g->rounds[e] / k;
			}
		}
	tp_graph *q = NULL;
	if (rc)
		tp_error_set(err, rc, "groups: out of memory");
	else
		rc = tp_graph_from_edges(&q, ng, (int64_t)np, pu, pv, pw, "groups",
					 err);
	if (!rc && nr > 0 && tp__graph_add_rounds(q, nr, ru, rv, rr))
		rc = tp_error_set(err, TP_ENOMEM, "groups: out of memory");
	if (!rc) {
		q->exchanges = g->exchanges;
		q->size_scale = g->size_scale;
		*out = q;
	} else {
		tp_graph_destroy(q);
	}
	free(pu);
	free(pv);
	free(pw);
	free(ru);
	free(rv);
	free(rr);
	return rc;
}

int tp__graph_groups(const tp_graph *g, int32_t k, tp_graph **out, tp_error *err)
{
	if (g && k >= 1 && g->ntasks % k == 0)
		return tp__graph_quotient(g, NULL, g->ntasks / k, k, out, err);
	*out = NULL;
	return tp_error_set(err, TP_EINVAL, "groups: %d tasks in groups of %d",
			    g ? (int)g->ntasks : 0, (int)k);
}
