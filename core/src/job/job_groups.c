/* topoplace — Slurm's node groups mapped whole (job_map.c decides when):
 * where Slurm's order puts k consecutive ranks on each node, the pattern
 * between those groups (tp__graph_groups) is mapped onto the nodes, one
 * group a node, and every rank follows its group.  Such an order keeps
 * what Slurm's order keeps inside each node and moves only the nodes. */
#include <stdbool.h>
#include <stdlib.h>

#include "input/alloc_internal.h"
#include "job/job_internal.h"
#include "map/place_internal.h"
#include "pattern/pattern_internal.h"
#include "util/util_internal.h"

int32_t tp__job_slurm_groups(const tp_job *job)
{
	int32_t nn = tp_alloc_nnodes(job->alloc);
	if (nn < 2 || job->ntasks % nn != 0 || job->ntasks / nn < 2)
		return 0;
	int32_t k = job->ntasks / nn;
	/* group g, ranks g k .. g k + k - 1, all on one node, a node each */
	bool *seen = tp__calloc((size_t)nn, sizeof *seen);
	bool whole = seen != NULL;
	for (int32_t g = 0; whole && g < nn; g++) {
		int32_t n = job->block[(int64_t)g * k];
		whole = !seen[n];
		seen[n] = true;
		for (int32_t j = 1; whole && j < k; j++)
			whole = job->block[(int64_t)g * k + j] == n;
	}
	free(seen);
	return whole ? k : 0;
}

int tp__job_place_groups(tp_job *job, int32_t k, const tp_place_opts *po,
			 struct tp_place_report *rep, tp_error *err)
{
	int32_t nn = tp_alloc_nnodes(job->alloc);
	tp_graph *q = NULL;
	tp_alloc *qa = NULL;
	int32_t *nodes = tp__malloc_array((size_t)nn + 1, sizeof *nodes);
	int32_t *qmap = tp__malloc_array((size_t)nn + 1, sizeof *qmap);
	int rc = nodes && qmap ? 0 : tp_error_set(err, TP_ENOMEM, "out of memory");
	/* the groups' nodes in Slurm's order, a slot each: the groups' block
	 * order (group g on node g) is Slurm's */
	for (int32_t g = 0; !rc && g < nn; g++)
		nodes[g] = tp_alloc_node(job->alloc, job->block[(int64_t)g * k]);
	if (!rc)
		rc = tp__graph_groups(job->g, k, &q, err);
	if (!rc)
		rc = tp_alloc_from_nodes(tp_alloc_machine(job->alloc), nodes, nn, 1,
					 &qa, err);
	if (!rc)
		rc = tp_place_ex(q, qa, po, qmap, rep, err);
	for (int32_t i = 0; !rc && i < job->ntasks; i++)
		job->map[i] = job->block[(int64_t)qmap[i / k] * k];
	tp_alloc_destroy(qa);
	tp_graph_destroy(q);
	free(nodes);
	free(qmap);
	return rc;
}
