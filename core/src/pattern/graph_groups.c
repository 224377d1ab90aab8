/* topoplace — a graph's tasks taken k at a time: the pattern between groups
 * of consecutive tasks (the job maps Slurm's node groups whole, job_map.c).
 *
 * A pair of groups exchanges what their tasks exchange; what stays inside a
 * group is dropped, as it stays inside a node.  The collectives' rounds are
 * priced per task (predict.c: a task's rounds over the routes it sends on,
 * the slowest task's), so a group's are its tasks' mean: the sum would
 * count k tasks' rounds as one task's chain. */
#include <stdlib.h>

#include "pattern/pattern_internal.h"
#include "util/util_internal.h"

int tp__graph_groups(const tp_graph *g, int32_t k, tp_graph **out, tp_error *err)
{
	*out = NULL;
	if (!g || k < 1 || g->ntasks % k != 0)
		return tp_error_set(err, TP_EINVAL, "groups: %d tasks in groups of "
				    "%d", g ? (int)g->ntasks : 0, (int)k);
	int32_t ng = g->ntasks / k;
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
			if (u / k == v / k)
				continue;
			if (u < v) {
				pu[np] = u / k;
				pv[np] = v / k;
				pw[np++] = tp__graph_w(g, e);
			}
			if (g->rounds && g->rounds[e] > 0) {
				ru[nr] = u / k;
				rv[nr] = v / k;
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
