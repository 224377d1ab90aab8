/* topoplace — a job's node models: which allocation nodes have one (the
 * request's or topoplace.conf's NodeTopology=, GpuLinks= and
 * GpuLinkBandwidth=, else the model detected on the node this runs on),
 * each distinct file pair loaded once, and why a node has none.
 *
 * tp_job_create loads them (tp__job_load_models) when the run will need
 * them: phase 1 ranks its candidates by the GPU links (a GPU matrix under
 * auto or graph), or the whole job is placed inside its nodes.  Their
 * error is kept and given where the run meets it (tp__job_models_ready),
 * so that a mapping's own error still comes first.  A task's node
 * (tp_job_preload_node, tp_job_detect_node, tp_job_place_node) loads its
 * one model when asked.
 */
#include <stdlib.h>
#include <string.h>

#include "job/job_internal.h"
#include "conf/conf_internal.h"
#include "node/node_internal.h"
#include "util/util_internal.h"

static const tp_node *model_for(tp_job *job, const char *xml,
				const char *links, double linkbw, tp_error *why)
{
	for (int k = 0; k < job->nmodels; k++) {
		struct tp_job_model *md = &job->models[k];
		if (!strcmp(md->xml, xml) && md->linkbw == linkbw &&
		    ((!links && !md->links) ||
		    (links && md->links && !strcmp(links, md->links)))) {
			if (!md->node && why)
				*why = md->err;
			return md->node;
		}
	}
	struct tp_job_model *nm = realloc(job->models, sizeof *nm *
					  (size_t)(job->nmodels + 1));
	if (!nm) {
		tp_error_set(why, TP_ENOMEM, "out of memory");
		return NULL;
	}
	job->models = nm;
	struct tp_job_model *md = &nm[job->nmodels++];
	memset(md, 0, sizeof *md);
	md->xml = xml;
	md->links = links;
	md->linkbw = linkbw;
	if (tp_node_load_xml(xml, &md->node, &md->err) == 0)
		tp__node_set_link_rate(md->node, linkbw);
	if (md->node && links &&
	    tp_node_load_links(md->node, links, &md->err) < 0) {
		tp_node_destroy(md->node);
		md->node = NULL;
	}
	if (!md->node && why)
		*why = md->err;
	return md->node;
}

const tp_node *tp__job_model_of(tp_job *job, int32_t nid, tp_error *why)
{
	const tp_job_request *r = &job->req;
	const tp_machine *m = tp_conf_machine(job->conf);
	const char *xml = r->node_topology ? r->node_topology
			  : tp_conf_node_topology(job->conf, nid);
	const char *links = r->gpu_links ? r->gpu_links
			    : tp_conf_node_gpu_links(job->conf, nid);
	if (!xml && nid == job->local_nid) {
		if (!job->local_model && why)
			*why = job->local_err;
		return job->local_model;
	}
	if (!xml) {
		tp_error_set(why, TP_ENOMODEL, "no NodeTopology= for node %s",
			     tp_machine_node_name(m, nid));
		return NULL;
	}
	return model_for(job, xml, links, tp_conf_node_gpu_link_bw(job->conf, nid),
			 why);
}

/* Every allocation node's model, in the nodes' order; the first that
 * fails (with TP_JOB_REQUIRE_MODELS), or the memory, ends it. */
static int load_all(tp_job *job, tp_error *err)
{
	int32_t nn = tp_alloc_nnodes(job->alloc);
	job->model_of = tp__calloc((size_t)nn + 1, sizeof *job->model_of);
	if (!job->model_of)
		return tp_error_set(err, TP_ENOMEM, "out of memory");
	for (int32_t i = 0; i < nn; i++) {
		tp_error why;
		tp_error_clear(&why);
		int32_t nid = tp_alloc_node(job->alloc, i);
		job->model_of[i] = tp__job_model_of(job, nid, &why);
		if (why.code == TP_ENOMEM)
			return tp_error_set(err, TP_ENOMEM, "out of memory");
		if (!job->model_of[i] && (job->req.flags & TP_JOB_REQUIRE_MODELS))
			return tp_error_set(err, why.code ? why.code : TP_EINVAL,
					    "%s", why.msg);
	}
	return 0;
}

bool tp__job_places_nodes(const tp_job *job)
{
	return (job->req.flags & TP_JOB_NODE_PLACEMENT) &&
	       job->policy != TP_POLICY_NONE;
}

bool tp__job_ranks_by_gpus(const tp_job *job)
{
	if (!job->gm)
		return false;
	/* geometric without task coordinates maps as graph (job_map.c) */
	if (job->policy == TP_POLICY_GEOMETRIC)
		return tp_graph_coord_dims(job->g) == 0;
	return job->policy == TP_POLICY_AUTO || job->policy == TP_POLICY_GRAPH;
}

void tp__job_load_models(tp_job *job)
{
	if (!job->alloc || !(tp__job_ranks_by_gpus(job) || tp__job_places_nodes(job)))
		return;
	job->models_tried = true;
	tp_error_clear(&job->models_err);
	job->models_rc = load_all(job, &job->models_err);
}

int tp__job_models_ready(tp_job *job, tp_error *err)
{
	/* a step that asks for them without tp__job_load_models having
	 * decided so: the two disagree (a bug), said rather than crashed on */
	if (!job->models_tried)
		return tp_error_set(err, TP_EINVAL, "job: the node models were "
				    "not loaded");
	if (job->models_rc)
		return tp_error_set(err, job->models_rc, "%s",
				    job->models_err.msg);
	job->models_loaded = true;
	return 0;
}

int tp_job_preload_node(tp_job *job, const char *node, tp_error *err)
{
	if (!job || !node)
		return tp_error_set(err, TP_EINVAL, "preload: %s is NULL",
				    job ? "node" : "job");
	int32_t nid = tp_machine_find_node(tp_conf_machine(job->conf), node);
	if (nid < 0)
		return tp_error_set(err, TP_ENOENT, "node %s is not in the "
				    "configuration", node);
	tp_error why;
	tp_error_clear(&why);
	if (!tp__job_model_of(job, nid, &why))
		return tp_error_set(err, why.code ? why.code : TP_ENOENT, "%s",
				    why.msg);
	return 0;
}

/* The node this runs on: the config's model where it pins one, else the
 * one found on the node (tp_node_detect: the trusted cache, else hwloc
 * and the vendor's library; never stored from here, as the plugin calls
 * this as the job's user). */
int tp_job_detect_node(tp_job *job, const char *node, const char *cache_dir,
		       tp_error *err)
{
	if (!job || !node)
		return tp_error_set(err, TP_EINVAL, "detect: %s is NULL",
				    job ? "node" : "job");
	int32_t nid = tp_machine_find_node(tp_conf_machine(job->conf), node);
	if (nid < 0)
		return tp_error_set(err, TP_ENOENT, "node %s is not in the "
				    "configuration", node);
	if (job->req.node_topology || tp_conf_node_topology(job->conf, nid))
		return tp_job_preload_node(job, node, err);
	if (job->local_nid == nid)
		return job->local_model ? 0
			: tp_error_set(err, job->local_err.code, "%s",
				       job->local_err.msg);
	tp_node_destroy(job->local_model);
	job->local_model = NULL;
	job->local_nid = nid;
	tp_error_clear(&job->local_err);
	int rc = tp_node_detect(cache_dir, 0, &job->local_model, &job->local_err);
	if (rc)
		return tp_error_set(err, rc, "%s: %s", node, job->local_err.msg);
	return 0;
}

/* ------------------------------------------------------------ accessors */

const tp_node *tp_job_node_model(const tp_job *job, int32_t i)
{
	if (!job->models_loaded || !job->model_of || !job->alloc || i < 0 ||
	    i >= tp_alloc_nnodes(job->alloc))
		return NULL;
	return job->model_of[i];
}
