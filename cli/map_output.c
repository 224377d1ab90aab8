/* topoplace command — what map writes: the hostfile, the JSON document and
 * the --compare table, all from a finished tp_job (the launcher formats:
 * formats.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cli_map_hostfile(const struct cli_map *mp)
{
	const tp_job *job = mp->job;
	tp_error err;
	tp_error_clear(&err);
	if (mp->output) {
		if (tp_hostfile_write_path(mp->output, tp_job_alloc(job),
					   tp_job_map(job), tp_job_ntasks(job),
					   &err) < 0)
			return cli_report_runtime(mp->output, &err);
		return CLI_EXIT_OK;
	}
	if (tp_hostfile_write(stdout, tp_job_alloc(job), tp_job_map(job),
			      tp_job_ntasks(job)) < 0)
		return cli_fail("standard output: write error");
	return cli_finish_stdout();
}

/* ---- --compare ---- */

int cli_map_compare(const tp_job *job, FILE *f)
{
	const tp_metrics *m = tp_job_metrics(job), *mb = tp_job_block_metrics(job);
	if (!m || !mb) {
		fprintf(f, "compare: no communication pattern, nothing to score\n");
		return 0;
	}
	tp_metrics mz;
	bool have_z = false;
	int32_t n = tp_job_ntasks(job);
	int32_t *z = calloc((size_t)n + 1, sizeof *z);
	if (!z)
		return cli_fail("out of memory");
	tp_error err;
	tp_error_clear(&err);
	if (tp_map_zorder(tp_job_alloc(job), n, z, &err) == 0 &&
	    tp_metrics_compute(tp_job_graph(job), tp_job_alloc(job), z, true, &mz,
			       &err) == 0)
		have_z = true;
	free(z);
	if (err.code == TP_ENOMEM)
		return cli_report_runtime("zorder", &err);
	enum tp_policy used = tp_job_policy(job);
	const char *label = tp_job_status(job) == TP_JOB_KEPT ? "block"
			    : tp_policy_name(used);
	struct cli_row rows[3] = {
		{ "block", mb },
		{ "zorder", have_z ? &mz : NULL },
		{ label, m },
	};
	/* the chosen policy's row, unless it is one of the first two */
	int nrows = !strcmp(label, "block") || !strcmp(label, "zorder") ? 2 : 3;
	cli_print_compare(f, rows, nrows);
	return 0;
}

/* ---- JSON ---- */

/* Appends the string s to arr; false, arr released, when out of memory. */
static bool add_string(json_object *arr, const char *s)
{
	json_object *o = json_object_new_string(s);
	if (o && json_object_array_add(arr, o) == 0)
		return true;
	json_object_put(o);
	json_object_put(arr);
	return false;
}

static json_object *names_json(const tp_job *job)
{
	json_object *arr = json_object_new_array();
	for (int32_t t = 0; arr && t < tp_job_ntasks(job); t++)
		if (!add_string(arr, tp_job_task_node(job, t)))
			return NULL;
	return arr;
}

static json_object *candidates_json(const tp_job *job)
{
	json_object *arr = json_object_new_array();
	for (int i = 0; arr && i < tp_job_ncandidates(job); i++) {
		tp_job_candidate c;
		tp_job_candidate_get(job, i, &c);
		json_object *o = json_object_new_object();
		int bad = !o || json_object_array_add(arr, o) < 0;
		if (bad) {
			json_object_put(o);
			json_object_put(arr);
			return NULL;
		}
		bad |= cli_json_put(o, "name", json_object_new_string(c.name));
		bad |= cli_json_put(o, "ran", json_object_new_boolean(c.ran));
		if (c.ran)
			bad |= cli_json_put(o, "score", cli_json_double(c.score));
		else if (json_object_object_add(o, "score", NULL) < 0)
			bad = -1;
		if (c.ranked)
			bad |= cli_json_put(o, "gpu_link_congestion_ms",
					    cli_json_double(c.rank));
		bad |= cli_json_put(o, "ms", cli_json_ms(c.ms));
		bad |= cli_json_put(o, "note", json_object_new_string(c.note));
		bad |= cli_json_put(o, "chosen", json_object_new_boolean(c.chosen));
		if (bad) {
			json_object_put(arr);
			return NULL;
		}
	}
	return arr;
}

static json_object *notes_json(const tp_job *job)
{
	json_object *arr = json_object_new_array();
	for (int i = 0; arr && i < tp_job_nnotes(job); i++)
		if (!add_string(arr, tp_job_note(job, i)))
			return NULL;
	return arr;
}

static json_object *cost_json(const tp_gpusel_cost *c)
{
	json_object *o = json_object_new_object();
	if (!o)
		return NULL;
	if (cli_json_put(o, "max_congestion_ms", cli_json_double(c->max_congestion_ms)) ||
	    cli_json_put(o, "weighted_ms", cli_json_double(c->weighted_ms)) ||
	    cli_json_put(o, "gpu_bytes", cli_json_double(c->total_bytes))) {
		json_object_put(o);
		return NULL;
	}
	return o;
}

static json_object *task_gpus_json(const tp_job *job, int32_t t)
{
	int ng = 0;
	const int *g = tp_job_task_gpus(job, t, &ng);
	json_object *a = json_object_new_array();
	for (int q = 0; a && q < ng; q++) {
		json_object *v = json_object_new_int(g[q]);
		if (!v || json_object_array_add(a, v) < 0) {
			json_object_put(v);
			json_object_put(a);
			return NULL;
		}
	}
	return a;
}

/* What the nodes' placement adds: cpus, gpus and their costs. */
static int nodes_json(json_object *doc, const struct cli_map *mp)
{
	const tp_job *job = mp->job;
	bool any_cpus = false, any_gpus = false, any_model = false;
	int gpt = 0;
	for (int32_t i = 0; i < tp_alloc_nnodes(tp_job_alloc(job)); i++) {
		const tp_node_placement *p = tp_job_node_placement(job, i);
		if (!p)
			continue;
		any_cpus |= p->cpus_set;
		any_gpus |= p->gpus_set;
		any_model |= p->model[0] != 0;
		if (p->gpus_set && p->gpus_per_task > gpt)
			gpt = p->gpus_per_task;
	}
	if (!any_model)
		return 0;
	int bad = 0;
	bad |= cli_json_put(doc, "node_topology", json_object_new_string(
			    mp->req.node_topology ? mp->req.node_topology : "config"));
	json_object *cpus = any_cpus ? json_object_new_array() : NULL;
	json_object *gpus = any_gpus ? json_object_new_array() : NULL;
	for (int32_t t = 0; t < tp_job_ntasks(job) && !bad; t++) {
		if (cpus) {
			const char *c = tp_job_task_cpus(job, t);
			json_object *s = c ? json_object_new_string(c) : NULL;
			if ((c && !s) || json_object_array_add(cpus, s) < 0) {
				json_object_put(s);
				bad = -1;
			}
		}
		if (gpus) {
			json_object *l = task_gpus_json(job, t);
			if (!l || json_object_array_add(gpus, l) < 0) {
				json_object_put(l);
				bad = -1;
			}
		}
	}
	double mims;
	tp_gpusel_cost cost, lr, cl;
	tp_job_node_totals(job, &mims, &cost, &lr, &cl);
	if (cpus)
		bad |= cli_json_put(doc, "cpus", cpus);
	bad |= cli_json_put(doc, "max_inter_socket_bytes", cli_json_double(mims));
	if (!gpus)
		return bad;
	bad |= cli_json_put(doc, "gpus", gpus);
	json_object *sel = json_object_new_object();
	if (sel) {
		const char *algo = mp->req.gpu_select ? mp->req.gpu_select
				   : mp->req.gpu_matrix.name ? "magc" : "local-rank";
		bad |= cli_json_put(sel, "algorithm", json_object_new_string(algo));
		bad |= cli_json_put(sel, "gpus_per_task", json_object_new_int(gpt));
		bad |= cli_json_put(sel, "cost", cost_json(&cost));
		bad |= cli_json_put(sel, "local_rank_cost", cost_json(&lr));
		bad |= cli_json_put(sel, "closest_cost", cost_json(&cl));
	}
	bad |= cli_json_put(doc, "gpu_selection", sel);
	return bad;
}

static int put_null(json_object *doc, const char *key)
{
	return json_object_object_add(doc, key, NULL) < 0 ? -1 : 0;
}

static json_object *map_doc(const struct cli_map *mp)
{
	const tp_job *job = mp->job;
	const tp_alloc *a = tp_job_alloc(job);
	json_object *doc = json_object_new_object();
	if (!doc)
		return NULL;
	const tp_metrics *m = tp_job_metrics(job), *mb = tp_job_block_metrics(job);
	const tp_geom_report *geom = tp_job_geom_report(job);
	bool kept = tp_job_status(job) == TP_JOB_KEPT;
	int bad = 0;
	bad |= cli_json_put(doc, "version", json_object_new_string(tp_version()));
	bad |= cli_json_put(doc, "policy", json_object_new_string(
			    tp_policy_name(tp_job_policy(job))));
	bad |= cli_json_put(doc, "requested_policy", json_object_new_string(
			    tp_policy_name(tp_job_requested_policy(job))));
	bad |= cli_json_put(doc, "status", json_object_new_string(
			    kept ? "kept" : "placed"));
	bad |= cli_json_put(doc, "reason", json_object_new_string(tp_job_reason(job)));
	bad |= cli_json_put(doc, "metric", json_object_new_string(
			    tp_metric_name(tp_job_metric(job))));
	bad |= cli_json_put(doc, "ntasks", json_object_new_int64(tp_job_ntasks(job)));
	bad |= cli_json_put(doc, "nnodes", json_object_new_int64(tp_alloc_nnodes(a)));
	bad |= cli_json_put(doc, "slots", json_object_new_int64(tp_alloc_total_slots(a)));
	bad |= cli_json_put(doc, "time_budget_ms",
			    cli_json_double(tp_job_time_budget_ms(job)));
	bad |= cli_json_put(doc, "mapping", names_json(job));
	bad |= cli_json_put(doc, "congestion_unit", json_object_new_string(
			    tp_machine_has_level_bandwidth(tp_alloc_machine(a))
			    ? "bytes/bandwidth" : "bytes"));
	bad |= m ? cli_json_put(doc, "metrics", cli_metrics_json(m))
		 : put_null(doc, "metrics");
	bad |= mb ? cli_json_put(doc, "block_metrics", cli_metrics_json(mb))
		  : put_null(doc, "block_metrics");
	const tp_prediction *pr = tp_job_prediction(job, false);
	bad |= pr ? cli_json_put(doc, "predicted", cli_predicted_json(pr,
			tp_job_prediction(job, true)))
		  : put_null(doc, "predicted");
	bad |= cli_json_put(doc, "candidates", candidates_json(job));
	bad |= geom ? cli_json_put(doc, "search", cli_report_json(geom))
		    : put_null(doc, "search");
	bad |= cli_json_put(doc, "notes", notes_json(job));
	bad |= cli_json_put(doc, "elapsed_ms", cli_json_ms(tp_job_elapsed_ms(job)));
	bad |= nodes_json(doc, mp);
	if (bad) {
		json_object_put(doc);
		return NULL;
	}
	return doc;
}

int cli_map_json(const struct cli_map *mp)
{
	json_object *doc = map_doc(mp);
	if (!doc)
		return cli_fail("out of memory");
	int rc = cli_write_json(doc, mp->output);
	json_object_put(doc);
	return rc;
}
