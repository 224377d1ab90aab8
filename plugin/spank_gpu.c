/* topoplace SPANK plugin — GPU selection for the tasks of one node (MAGC
 * phase 3, tp_gpusel) from the job's --topo-gpu-matrix and the node model
 * of topoplace.conf (NodeTopology=, GpuLinks=).  No SPANK calls here: the
 * task_init hook gathers the inputs and applies the answer.
 *
 * Every task of a node calls this with the same inputs and gets the same
 * answer (tp_gpusel is deterministic), so no task waits for another. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <topoplace/topoplace.h>

#include "spank_tp.h"

_Static_assert(TPK_MAX_GPUS >= TP_NODE_MAX_GPUS, "TPK_MAX_GPUS too small");

#define SPLIT "GPUs split in local-rank order"

static void gmsg(struct tpk_gpu_result *r, bool jobwide, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void gmsg(struct tpk_gpu_result *r, bool jobwide, const char *fmt, ...)
{
	char what[TPK_LINE_MAX - 96];   /* room for the words around it */
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof what, fmt, ap);
	va_end(ap);
	r->jobwide = jobwide;
	snprintf(r->msg, sizeof r->msg, "topoplace: error: --topo-gpu-matrix: "
		 "%s; " SPLIT, what);
	for (char *p = r->msg; *p; p++)   /* one line, whatever the input held */
		if (*p == '\n' || *p == '\r')
			*p = ' ';
}

/* The CPU pattern of the job (--topo-stencil / --topo-graph), or NULL when
 * there is none or it cannot be read (the placement has said so already). */
static tp_graph *cpu_graph(const struct tpk_site *site,
			   const struct tpk_hints *h,
			   const struct tpk_gpu_req *rq)
{
	tp_graph *g = NULL;
	tp_error err;
	tp_error_clear(&err);
	if (h->stencil && !h->graph) {
		if (tp_graph_from_stencil(&g, h->stencil, rq->total_tasks, &err) < 0)
			return NULL;
	} else if (h->graph && !h->stencil) {
		char *buf = NULL, why[TPK_LINE_MAX];
		size_t len = 0;
		if (tpk_read_user_file(h->graph, rq->basedir, site->max_file_bytes,
				       &rq->cred, &buf, &len, why, sizeof why) < 0)
			return NULL;
		if (tp_graph_from_json_string(&g, buf, len, h->graph,
					      rq->total_tasks, &err) < 0)
			g = NULL;
		free(buf);
	}
	if (g && tp_graph_ntasks(g) != rq->total_tasks) {
		tp_graph_destroy(g);
		g = NULL;
	}
	return g;
}

int tpk_gpu_select(const struct tpk_site *site, const struct tpk_hints *h,
		   const struct tpk_gpu_req *rq, struct tpk_gpu_result *res)
{
	tp_error err;
	tp_error_clear(&err);
	memset(res, 0, sizeof *res);
	char *buf = NULL;
	size_t len = 0;
	char why[TPK_LINE_MAX];
	tp_graph *gm = NULL, *cg = NULL, *sum = NULL;
	tp_conf *conf = NULL;
	tp_node *node = NULL;
	int *pkg = NULL, *core = NULL, *tmp = NULL;
	int rc = -1;

	if (!h->gpu_matrix)
		return -1;
	if (rq->ntasks <= 0 || rq->total_tasks <= 0 ||
	    rq->total_tasks > INT32_MAX || !rq->tasks) {
		gmsg(res, true, "cannot tell the tasks of this step");
		return -1;
	}
	if (rq->nallowed <= 0 || rq->nallowed > TPK_MAX_GPUS) {
		gmsg(res, false, "%s: cannot tell the step's GPUs", rq->node);
		return -1;
	}
	if (rq->nallowed < rq->ntasks) {
		gmsg(res, false, "%s: %ld tasks but only %d GPUs: tasks share GPUs",
		     rq->node, (long)rq->ntasks, rq->nallowed);
		return -1;
	}
	res->gpt = rq->nallowed / rq->ntasks;

	/* the matrix: the user's file, read with the user's privileges */
	if (tpk_read_user_file(h->gpu_matrix, rq->basedir, site->max_file_bytes,
			       &rq->cred, &buf, &len, why, sizeof why) < 0) {
		gmsg(res, true, "%s", why);
		goto out;
	}
	if (tp_graph_from_gpu_matrix_string(&gm, buf, len, h->gpu_matrix,
					    rq->total_tasks, &err) < 0) {
		gmsg(res, true, "%s", err.msg);
		goto out;
	}
	if (tp_graph_ntasks(gm) != rq->total_tasks) {
		gmsg(res, true, "%s: %ld tasks, but the step has %ld", h->gpu_matrix,
		     (long)tp_graph_ntasks(gm), (long)rq->total_tasks);
		goto out;
	}

	/* the node model */
	if (tp_conf_load(site->conf_path, &conf, &err) < 0) {
		gmsg(res, true, "site configuration: %s",
		     err.msg[0] ? err.msg : site->conf_path);
		goto out;
	}
	int32_t nid = rq->node ? tp_machine_find_node(tp_conf_machine(conf),
						       rq->node) : -1;
	if (nid < 0) {
		gmsg(res, false, "node %s is not in %s", rq->node ? rq->node : "?",
		     site->conf_path);
		goto out;
	}
	const char *xml = tp_conf_node_topology(conf, nid);
	const char *links = tp_conf_node_gpu_links(conf, nid);
	if (!xml) {
		gmsg(res, false, "no NodeTopology= for node %s in %s", rq->node,
		     site->conf_path);
		goto out;
	}
	if (tp_node_load_xml(xml, &node, &err) < 0 ||
	    (links && tp_node_load_links(node, links, &err) < 0)) {
		gmsg(res, false, "%s: %s", rq->node, err.msg);
		goto out;
	}
	for (int i = 0; i < rq->nallowed; i++)
		if (rq->allowed[i] < 0 || rq->allowed[i] >= tp_node_ngpus(node)) {
			gmsg(res, false, "%s: Slurm's GPU %d is not in %s (%d GPUs)",
			     rq->node, rq->allowed[i], tp_node_source(node),
			     tp_node_ngpus(node));
			goto out;
		}

	/* phase 2 as `topoplace map` does it (CPU + GPU traffic): the tasks'
	 * sockets break ties between GPUs */
	size_t nt = (size_t)rq->ntasks;
	pkg = malloc(sizeof(int) * (nt + 1));
	core = malloc(sizeof(int) * (nt + 1));
	tmp = malloc(sizeof(int) * (nt * (size_t)res->gpt + 1));
	if (!pkg || !core || !tmp) {
		gmsg(res, false, "%s: out of memory", rq->node);
		goto out;
	}
	cg = cpu_graph(site, h, rq);
	if (cg && tp_graph_add(cg, gm, h->gpu_matrix, &sum, &err) < 0)
		sum = NULL;
	int ncores = tp_node_ncores(node);
	const int *tp = NULL;
	if (ncores >= rq->ntasks &&
	    tp_node_place_cpus(node, sum ? sum : gm, rq->tasks, rq->ntasks,
			       ncores / rq->ntasks, pkg, core, NULL, &err) == 0)
		tp = pkg;
	tp_error_clear(&err);

	tp_gpusel_cost c, lr;
	if (tp_gpusel(node, gm, rq->tasks, rq->ntasks, tp, rq->allowed,
		      rq->nallowed, res->gpt, TP_GPUSEL_MAGC, res->gpus, &c,
		      &err) < 0 ||
	    tp_gpusel(node, gm, rq->tasks, rq->ntasks, tp, rq->allowed,
		      rq->nallowed, res->gpt, TP_GPUSEL_LOCAL_RANK, tmp, &lr,
		      &err) < 0) {
		gmsg(res, false, "%s: %s", rq->node, err.msg);
		goto out;
	}
	res->topoplace_ms = c.max_congestion_ms;
	res->local_rank_ms = lr.max_congestion_ms;
	snprintf(res->used, sizeof res->used, "%s", tp_gpusel_algo_name(c.used));
	rc = 0;
out:
	free(buf);
	free(pkg);
	free(core);
	free(tmp);
	tp_graph_destroy(sum);
	tp_graph_destroy(cg);
	tp_graph_destroy(gm);
	tp_node_destroy(node);
	tp_conf_destroy(conf);
	return rc;
}
