/* topoplace command — map --format svg: the picture of the job's mapping
 * (frontend/svg_map.c draws it), or with --node NAME the inside of one
 * node with the CPUs and GPUs chosen for its tasks (svg_node.c). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "svg.h"

static void pattern_name(const struct cli_map *mp, char *buf, size_t len)
{
	const tp_job_request *r = &mp->req;
	if (mp->parallel)
		snprintf(buf, len, "parallel %s", mp->parallel);
	else if (r->stencil)
		snprintf(buf, len, "stencil %s", r->stencil);
	else if (r->graph.name)
		snprintf(buf, len, "graph %s", r->graph.name);
	else if (r->gpu_matrix.name)
		snprintf(buf, len, "GPU traffic %s", r->gpu_matrix.name);
	else
		snprintf(buf, len, "none");
}

/* The allocation index of --node's node, or -1. */
static int32_t node_index(const struct cli_map *mp)
{
	const tp_alloc *a = tp_job_alloc(mp->job);
	int32_t nid = tp_machine_find_node(tp_alloc_machine(a), mp->svg_node);
	for (int32_t k = 0; nid >= 0 && k < tp_alloc_nnodes(a); k++)
		if (tp_alloc_node(a, k) == nid)
			return k;
	return -1;
}

int cli_map_svg_check(const struct cli_map *mp)
{
	int32_t i = node_index(mp);
	if (i < 0)
		return cli_usage_error("--node %s: not a node of the job (--nodes)",
				       mp->svg_node);
	if (!mp->req.node_topology &&
	    !tp_conf_node_topology(tp_job_conf(mp->job),
				   tp_alloc_node(tp_job_alloc(mp->job), i)))
		return cli_usage_error("--node %s: the node has no model: give "
				       "--node-topology FILE or NodeTopology= in %s",
				       mp->svg_node, mp->config);
	return 0;
}

static int node_picture(FILE *f, const struct cli_map *mp)
{
	const tp_job *job = mp->job;
	int32_t i = node_index(mp);
	const tp_node *n = i < 0 ? NULL : tp_job_node_model(job, i);
	if (!n)   /* named in the config, but it did not load */
		return cli_usage_error("--node %s: the node's model did not load",
				       mp->svg_node);
	const tp_node_placement *p = tp_job_node_placement(job, i);
	int32_t *tasks = malloc(((size_t)tp_job_ntasks(job) + 1) * sizeof *tasks);
	if (!tasks)
		return cli_fail("out of memory");
	int32_t k = 0;
	for (int32_t t = 0; t < tp_job_ntasks(job); t++)
		if (tp_job_map(job)[t] == i)
			tasks[k++] = t;
	struct svg_node_tasks st = {
		.node = mp->svg_node, .ntasks = k, .tasks = tasks,
		.cpus = p && p->cpus_set ? (const char *const *)p->cpus : NULL,
		.gpu_start = p && p->gpus_set ? p->gpu_start : NULL,
		.gpus = p && p->gpus_set ? p->gpus : NULL,
	};
	char title[256];
	snprintf(title, sizeof title, "topoplace map: node %s, %ld task%s",
		 mp->svg_node, (long)k, k == 1 ? "" : "s");
	svg_node_picture(f, n, &st, title);
	free(tasks);
	return 0;
}

/* The document into a buffer, then to the output (atomically to a file). */
int cli_map_svg(const struct cli_map *mp)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return cli_fail("out of memory");
	int rc;
	if (mp->svg_node) {
		rc = node_picture(f, mp);
	} else {
		char pat[320];
		pattern_name(mp, pat, sizeof pat);
		rc = svg_map_picture(f, mp->job, pat) < 0 ? cli_fail("out of memory") : 0;
	}
	if (fclose(f) != 0 && !rc)
		rc = cli_fail("out of memory");
	if (!rc) {
		if (mp->output)
			rc = cli_write_text(buf, len, mp->output);
		else if (fwrite(buf, 1, len, stdout) != len)
			rc = cli_fail("standard output: write error");
		else
			rc = cli_finish_stdout();
	}
	free(buf);
	return rc;
}
