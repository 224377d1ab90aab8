/* topoplace SPANK plugin — inside one node: the CPUs and GPUs of the node's
 * tasks (MAGC phases 2 and 3) from the job's hints and the node model of
 * topoplace.conf (NodeTopology=, GpuLinks=).  No SPANK calls here: the
 * task_init hook gathers the inputs and applies the answer.
 *
 * Every task of a node calls this with the same inputs and gets the same
 * answer (phase 2 and tp_gpusel are deterministic), so no task waits for
 * another. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <topoplace/topoplace.h>

#include "spank_tp.h"

_Static_assert(TPK_MAX_GPUS >= TP_NODE_MAX_GPUS, "TPK_MAX_GPUS too small");

#define GPU_KEPT "GPUs split in local-rank order"
#define CPU_KEPT "Slurm's CPU binding kept"

/* "topoplace: [error: ]LEAD: WHAT; KEPT" on one line, whatever WHAT held. */
static void vline(char *out, size_t len, bool error, const char *lead,
		  const char *kept, const char *fmt, va_list ap)
{
	char what[TPK_LINE_MAX - 96];   /* room for the words around it */
	vsnprintf(what, sizeof what, fmt, ap);
	snprintf(out, len, "topoplace: %s%s: %s; %s", error ? "error: " : "",
		 lead, what, kept);
	for (char *p = out; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
}

static void gmsg(struct tpk_node_result *r, bool jobwide, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void gmsg(struct tpk_node_result *r, bool jobwide, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vline(r->gpu_msg, sizeof r->gpu_msg, true, "--topo-gpu-matrix", GPU_KEPT,
	      fmt, ap);
	va_end(ap);
	r->gpu_jobwide = jobwide;
}

/* An error (note false) or a note for --topo-report (note true) about the
 * CPU binding. */
static void cmsg(struct tpk_node_result *r, bool note, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void cmsg(struct tpk_node_result *r, bool note, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vline(r->cpu_msg, sizeof r->cpu_msg, !note, "CPU binding", CPU_KEPT, fmt,
	      ap);
	va_end(ap);
	r->cpu_note = note;
}

/* The CPU pattern of the job (--topo-stencil / --topo-graph), or NULL when
 * there is none or it cannot be read (the placement has said so already). */
static tp_graph *cpu_graph(const struct tpk_site *site,
			   const struct tpk_hints *h,
			   const struct tpk_node_req *rq)
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

/* The GPU matrix, or NULL after a line in res. */
static tp_graph *gpu_matrix(const struct tpk_site *site,
			    const struct tpk_hints *h,
			    const struct tpk_node_req *rq,
			    struct tpk_node_result *res)
{
	char *buf = NULL, why[TPK_LINE_MAX];
	size_t len = 0;
	tp_graph *gm = NULL;
	tp_error err;
	tp_error_clear(&err);
	if (tpk_read_user_file(h->gpu_matrix, rq->basedir, site->max_file_bytes,
			       &rq->cred, &buf, &len, why, sizeof why) < 0) {
		gmsg(res, true, "%s", why);
		return NULL;
	}
	if (tp_graph_from_gpu_matrix_string(&gm, buf, len, h->gpu_matrix,
					    rq->total_tasks, &err) < 0) {
		gmsg(res, true, "%s", err.msg);
		gm = NULL;
	} else if (tp_graph_ntasks(gm) != rq->total_tasks) {
		gmsg(res, true, "%s: %ld tasks, but the step has %ld", h->gpu_matrix,
		     (long)tp_graph_ntasks(gm), (long)rq->total_tasks);
		tp_graph_destroy(gm);
		gm = NULL;
	}
	free(buf);
	return gm;
}

/* Checks of the GPU request that need no model; false after a line. */
static bool gpu_request_ok(const struct tpk_node_req *rq,
			   struct tpk_node_result *res)
{
	if (rq->nallowed <= 0 || rq->nallowed > TPK_MAX_GPUS) {
		gmsg(res, false, "%s: cannot tell the step's GPUs", rq->node);
		return false;
	}
	if (rq->nallowed < rq->ntasks) {
		gmsg(res, false, "%s: %ld tasks but only %d GPUs: tasks share GPUs",
		     rq->node, (long)rq->ntasks, rq->nallowed);
		return false;
	}
	res->gpt = rq->nallowed / rq->ntasks;
	return true;
}

/* The node model of topoplace.conf, or NULL.  Without NodeTopology= the
 * CPU side says nothing (the site has not described the node) and the GPU
 * side reports an error (the user asked for a GPU selection). */
static tp_node *node_model(const struct tpk_site *site,
			   const struct tpk_node_req *rq, bool want_gpus,
			   bool want_cpus, struct tpk_node_result *res)
{
	tp_error err;
	tp_error_clear(&err);
	tp_conf *conf = NULL;
	tp_node *node = NULL;
	const struct tpk_node_cache *c = rq->cache;
	if (c && c->model && rq->node && !strcmp(c->node, rq->node)) {
		snprintf(res->model, sizeof res->model, "%s", c->model_name);
		return (tp_node *)c->model;
	}
	if (tp_conf_load(site->conf_path, &conf, &err) < 0) {
		if (want_gpus)
			gmsg(res, true, "site configuration: %s",
			     err.msg[0] ? err.msg : site->conf_path);
		/* the placement has reported it already */
		if (want_cpus)
			cmsg(res, true, "site configuration: %s",
			     err.msg[0] ? err.msg : site->conf_path);
		return NULL;
	}
	int32_t nid = rq->node ? tp_machine_find_node(tp_conf_machine(conf),
						       rq->node) : -1;
	const char *xml = nid >= 0 ? tp_conf_node_topology(conf, nid) : NULL;
	const char *links = nid >= 0 ? tp_conf_node_gpu_links(conf, nid) : NULL;
	if (nid < 0) {
		if (want_gpus)
			gmsg(res, false, "node %s is not in %s",
			     rq->node ? rq->node : "?", site->conf_path);
		if (want_cpus)
			cmsg(res, true, "node %s is not in %s",
			     rq->node ? rq->node : "?", site->conf_path);
	} else if (!xml) {
		if (want_gpus)
			gmsg(res, false, "no NodeTopology= for node %s in %s",
			     rq->node, site->conf_path);
		if (want_cpus)
			cmsg(res, true, "no NodeTopology= for node %s in %s",
			     rq->node, site->conf_path);
	} else if (tp_node_load_xml(xml, &node, &err) < 0 ||
		   (want_gpus && links && tp_node_load_links(node, links, &err) < 0)) {
		if (want_gpus)
			gmsg(res, false, "%s: %s", rq->node, err.msg);
		if (want_cpus)
			cmsg(res, want_gpus, "%s: %s", rq->node, err.msg);
		tp_node_destroy(node);
		node = NULL;
	}
	if (node) {
		const char *src = tp_node_source(node);
		const char *base = strrchr(src, '/');
		snprintf(res->model, sizeof res->model, "%s", base ? base + 1 : src);
	}
	tp_conf_destroy(conf);
	return node;
}

int tpk_node_preload(const struct tpk_site *site, const char *node,
		     struct tpk_node_cache *c)
{
	struct tpk_node_req rq;
	struct tpk_node_result res;
	memset(&rq, 0, sizeof rq);
	memset(&res, 0, sizeof res);
	memset(c, 0, sizeof *c);
	if (!node || strlen(node) >= sizeof c->node)
		return -1;
	rq.node = node;
	/* GpuLinks= too: the cache serves the GPU selection as well */
	tp_node *m = node_model(site, &rq, true, false, &res);
	if (!m)
		return -1;
	snprintf(c->node, sizeof c->node, "%s", node);
	snprintf(c->model_name, sizeof c->model_name, "%s", res.model);
	c->model = m;
	return 0;
}

void tpk_node_cache_free(struct tpk_node_cache *c)
{
	tp_node_destroy(c->model);
	memset(c, 0, sizeof *c);
}

/* Phase 2 inside the step's cores; false after a line. */
static bool place_cpus(const tp_node *node, const tp_graph *pattern,
		       const struct tpk_node_req *rq, int *pkg, int *pos,
		       struct tpk_node_result *res)
{
	tp_error err;
	tp_error_clear(&err);
	int ncores = tp_node_ncores(node);
	for (int i = 0; i < rq->nstep_cores; i++)
		if (rq->step_cores[i] < 0 || rq->step_cores[i] >= ncores) {
			cmsg(res, false, "%s: Slurm's core %d is not in %s (%d cores; "
			     "slurm.conf and NodeTopology= must describe the same "
			     "node)", rq->node, rq->step_cores[i], res->model, ncores);
			return false;
		}
	if (!pattern) {
		cmsg(res, true, "%s: no communication pattern to place by",
		     rq->node);
		return false;
	}
	if (rq->nstep_cores < rq->ntasks) {
		cmsg(res, true, "%s: %ld tasks share %d cores", rq->node,
		     (long)rq->ntasks, rq->nstep_cores);
		return false;
	}
	res->cores_per_task = rq->nstep_cores / rq->ntasks;
	if (tp_node_place_cpus_within(node, pattern, rq->tasks, rq->ntasks,
				      rq->step_cores, rq->nstep_cores,
				      res->cores_per_task, pkg, pos, &res->mims,
				      &err) < 0) {
		cmsg(res, false, "%s: %s", rq->node, err.msg);
		return false;
	}
	return true;
}

/* Each task's CPU list from its positions in the sorted step cores. */
static bool cpu_lists(const tp_node *node, const struct tpk_node_req *rq,
		      const int *pos, struct tpk_node_result *res)
{
	int ncores = tp_node_ncores(node);
	int *sorted = malloc(sizeof(int) * ((size_t)ncores + 1));
	res->cpus = calloc((size_t)rq->ntasks + 1, sizeof(char *));
	if (!sorted || !res->cpus) {
		free(sorted);
		cmsg(res, false, "%s: out of memory", rq->node);
		return false;
	}
	/* the list tp_node_place_cpus_within numbers: sorted, no repeats */
	int k = 0;
	for (int c = 0; c < ncores; c++)
		for (int i = 0; i < rq->nstep_cores; i++)
			if (rq->step_cores[i] == c) {
				sorted[k++] = c;
				break;
			}
	bool ok = true;
	for (int32_t t = 0; t < rq->ntasks && ok; t++) {
		char buf[TPK_LINE_MAX];
		if (pos[t] < 0 || pos[t] + res->cores_per_task > k ||
		    tp_node_cpuset_string_cores(node, sorted + pos[t],
						res->cores_per_task, buf,
						sizeof buf) < 0 ||
		    !(res->cpus[t] = strdup(buf))) {
			cmsg(res, false, "%s: cannot write the CPU list of task %ld",
			     rq->node, (long)rq->tasks[t]);
			ok = false;
		}
	}
	free(sorted);
	return ok;
}

void tpk_node_select(const struct tpk_site *site, const struct tpk_hints *h,
		     const struct tpk_node_req *rq, struct tpk_node_result *res)
{
	tp_error err;
	tp_error_clear(&err);
	memset(res, 0, sizeof *res);
	tp_graph *gm = NULL, *cg = NULL, *sum = NULL;
	tp_node *node = NULL;
	int *pkg = NULL, *pos = NULL, *tmp = NULL;
	bool want_gpus = rq->want_gpus && h->gpu_matrix;
	bool want_cpus = rq->want_cpus && rq->step_cores && rq->nstep_cores > 0;

	if (!want_gpus && !want_cpus)
		return;
	if (rq->ntasks <= 0 || rq->total_tasks <= 0 ||
	    rq->total_tasks > INT32_MAX || !rq->tasks) {
		if (want_gpus)
			gmsg(res, true, "cannot tell the tasks of this step");
		if (want_cpus)
			cmsg(res, false, "cannot tell the tasks of this step");
		return;
	}
	if (want_gpus && !gpu_request_ok(rq, res))
		want_gpus = false;
	if (want_gpus && !(gm = gpu_matrix(site, h, rq, res)))
		want_gpus = false;
	if (!want_gpus && !want_cpus)
		goto out;
	if (!(node = node_model(site, rq, want_gpus, want_cpus, res)))
		goto out;
	if (want_gpus)
		for (int i = 0; i < rq->nallowed; i++)
			if (rq->allowed[i] < 0 ||
			    rq->allowed[i] >= tp_node_ngpus(node)) {
				gmsg(res, false, "%s: Slurm's GPU %d is not in %s (%d "
				     "GPUs)", rq->node, rq->allowed[i],
				     tp_node_source(node), tp_node_ngpus(node));
				want_gpus = false;
				break;
			}

	size_t nt = (size_t)rq->ntasks;
	pkg = malloc(sizeof(int) * (nt + 1));
	pos = malloc(sizeof(int) * (nt + 1));
	tmp = malloc(sizeof(int) * (nt * (size_t)(res->gpt + 1) + 1));
	if (!pkg || !pos || !tmp) {
		if (want_gpus)
			gmsg(res, false, "%s: out of memory", rq->node);
		if (want_cpus)
			cmsg(res, false, "%s: out of memory", rq->node);
		goto out;
	}
	/* phase 2 on the CPU + GPU traffic, as `topoplace map` does it */
	cg = cpu_graph(site, h, rq);
	if (cg && gm && tp_graph_add(cg, gm, h->gpu_matrix, &sum, &err) < 0)
		sum = NULL;
	tp_error_clear(&err);
	const tp_graph *pattern = sum ? sum : cg ? cg : gm;
	if (want_cpus)
		want_cpus = place_cpus(node, pattern, rq, pkg, pos, res);
	/* without CPUs of its own, the GPU side still wants the tasks'
	 * sockets to break ties: phase 2 on the whole node */
	const int *task_pkg = NULL;
	int ncores = tp_node_ncores(node);
	if (want_cpus)
		task_pkg = pkg;
	else if (want_gpus && ncores >= rq->ntasks &&
		 tp_node_place_cpus(node, pattern, rq->tasks, rq->ntasks,
				    ncores / rq->ntasks, pkg, pos, NULL, &err) == 0)
		task_pkg = pkg;
	tp_error_clear(&err);

	if (want_gpus) {
		tp_gpusel_cost c, lr;
		if (tp_gpusel(node, gm, rq->tasks, rq->ntasks, task_pkg,
			      rq->allowed, rq->nallowed, res->gpt, TP_GPUSEL_MAGC,
			      res->gpus, &c, &err) < 0 ||
		    tp_gpusel(node, gm, rq->tasks, rq->ntasks, task_pkg,
			      rq->allowed, rq->nallowed, res->gpt,
			      TP_GPUSEL_LOCAL_RANK, tmp, &lr, &err) < 0) {
			gmsg(res, false, "%s: %s", rq->node, err.msg);
		} else {
			res->topoplace_ms = c.max_congestion_ms;
			res->local_rank_ms = lr.max_congestion_ms;
			snprintf(res->used, sizeof res->used, "%s",
				 tp_gpusel_algo_name(c.used));
			res->gpus_ok = true;
			/* each task's cores next to its GPUs where MIMS allows */
			if (want_cpus &&
			    tp_node_align_cpus(node, pattern, rq->tasks, rq->ntasks,
					       res->gpus, res->gpt, pkg, pos,
					       &res->mims, &err) < 0)
				tp_error_clear(&err);
		}
	}
	if (want_cpus)
		res->cpus_ok = cpu_lists(node, rq, pos, res);
out:
	free(pkg);
	free(pos);
	free(tmp);
	tp_graph_destroy(sum);
	tp_graph_destroy(cg);
	tp_graph_destroy(gm);
	if (!(rq->cache && node == rq->cache->model))
		tp_node_destroy(node);
}

void tpk_node_result_free(struct tpk_node_result *res)
{
	if (res->cpus)
		for (int32_t t = 0; res->cpus[t]; t++)
			free(res->cpus[t]);
	free(res->cpus);
	res->cpus = NULL;
}
