/* topoplace — the map command's inside-the-node part: per-task CPU sets
 * (MAGC phase 2, MIMS) and GPUs (phase 3, max-congestion greedy). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

void cli_node_result_free(struct cli_node_result *r)
{
	if (r->cpus)
		for (int64_t t = 0; t < r->ntasks; t++)
			free(r->cpus[t]);
	free(r->cpus);
	free(r->gpus);
	memset(r, 0, sizeof *r);
}

void cli_node_models_free(struct cli_node_models *mm)
{
	for (int i = 0; i < mm->n; i++)
		tp_node_destroy(mm->models[i]);
	free(mm->models);
	free(mm->of);
	memset(mm, 0, sizeof *mm);
}

/* Loads one model (XML + links); returns its index in mm or -exit. */
static int load_model(struct cli_node_models *mm, const char *xml,
		      const char *links)
{
	tp_error err;
	tp_error_clear(&err);
	tp_node **nm = realloc(mm->models, sizeof *nm * (size_t)(mm->n + 1));
	if (!nm)
		return -cli_fail("out of memory");
	mm->models = nm;
	tp_node *n = NULL;
	if (tp_node_load_xml(xml, &n, &err) < 0)
		return -cli_report(xml, &err);
	if (links && tp_node_load_links(n, links, &err) < 0) {
		tp_node_destroy(n);
		return -cli_report(links, &err);
	}
	mm->models[mm->n] = n;
	return mm->n++;
}

int cli_node_models_load(const struct cli_node_opts *o, const tp_conf *conf,
			 const char *config, const tp_alloc *a, bool want,
			 struct cli_node_models *mm)
{
	memset(mm, 0, sizeof *mm);
	int32_t nn = tp_alloc_nnodes(a);
	const tp_machine *m = tp_alloc_machine(a);
	if (!o->topology) {
		/* NodeTopology= of the config: used when every node has one, or
		 * required when node-level output was asked for */
		int32_t missing = -1;
		for (int32_t i = 0; i < nn && missing < 0; i++)
			if (!tp_conf_node_topology(conf, tp_alloc_node(a, i)))
				missing = i;
		if (missing >= 0) {
			if (!want)
				return 0;
			const char *need = o->gpu_matrix ? "--gpu-matrix"
					   : o->gpus_per_task ? "--gpus-per-task"
					   : o->links ? "--gpu-links"
					   : o->select ? "--gpu-select"
					   : "--format rankfile";
			return cli_usage_error("%s needs --node-topology FILE (the "
					       "nodes' hwloc XML) or NodeTopology= in "
					       "%s for node %s", need, config,
					       tp_machine_node_name(m, tp_alloc_node(a, missing)));
		}
	}
	mm->of = calloc((size_t)nn + 1, sizeof *mm->of);
	if (!mm->of)
		return cli_fail("out of memory");
	if (o->topology) {
		int k = load_model(mm, o->topology, o->links);
		if (k < 0)
			return -k;
		for (int32_t i = 0; i < nn; i++)
			mm->of[i] = mm->models[k];
		return 0;
	}
	const char **keys = NULL;     /* (xml, links) of each loaded model */
	for (int32_t i = 0; i < nn; i++) {
		int32_t node = tp_alloc_node(a, i);
		const char *x = tp_conf_node_topology(conf, node);
		const char *l = o->links ? o->links : tp_conf_node_gpu_links(conf, node);
		/* the config stores each pair once: compare pointers with the
		 * (few) pairs loaded so far */
		int k = -1;
		for (int q = 0; q < mm->n && k < 0; q++)
			if (keys[2 * q] == x && keys[2 * q + 1] == l)
				k = q;
		if (k < 0) {
			const char **nk = realloc(keys, sizeof *nk * (size_t)(2 * mm->n + 2));
			if (!nk) {
				free(keys);
				return cli_fail("out of memory");
			}
			keys = nk;
			k = load_model(mm, x, l);
			if (k < 0) {
				free(keys);
				return -k;
			}
			keys[2 * k] = x;
			keys[2 * k + 1] = l;
		}
		mm->of[i] = mm->models[k];
	}
	free(keys);
	return 0;
}

int cli_node_load_matrix(const struct cli_node_opts *o, int64_t ntasks,
			 tp_graph **gm)
{
	tp_error err;
	tp_error_clear(&err);
	*gm = NULL;
	if (o->gpu_matrix &&
	    tp_graph_from_gpu_matrix_file(gm, o->gpu_matrix, ntasks, &err) < 0)
		return cli_report(o->gpu_matrix, &err);
	return 0;
}

static void add_cost(tp_gpusel_cost *sum, const tp_gpusel_cost *c)
{
	if (c->max_congestion_ms > sum->max_congestion_ms)
		sum->max_congestion_ms = c->max_congestion_ms;
	sum->weighted_ms += c->weighted_ms;
	sum->total_bytes += c->total_bytes;
}

/* Phase 3 on one node, then CPUs moved next to the chosen GPUs. */
static int node_gpus(const struct cli_node_opts *o, const tp_node *node,
		     const tp_graph *cpu_g, const tp_graph *gm,
		     const int32_t *tk, int32_t cnt, const char *name, int *pkg,
		     int *core, int *g, double *mims, struct cli_node_result *r)
{
	tp_error err;
	tp_error_clear(&err);
	tp_gpusel_cost c, lr, cl;
	if (tp_gpusel(node, gm, tk, cnt, pkg, NULL, 0, r->gpt, r->algo, g, &c,
		      &err) < 0) {
		char ctx[160];
		snprintf(ctx, sizeof ctx, "%s (%s)", name,
			 o->gpu_matrix ? "--gpu-matrix" : "--gpus-per-task");
		return cli_report(ctx, &err);
	}
	int *tmp = malloc(sizeof(int) * ((size_t)cnt * (size_t)r->gpt + 1));
	if (!tmp)
		return cli_fail("out of memory");
	int r1 = tp_gpusel(node, gm, tk, cnt, pkg, NULL, 0, r->gpt,
			   TP_GPUSEL_LOCAL_RANK, tmp, &lr, &err);
	int r2 = r1 ? r1 : tp_gpusel(node, gm, tk, cnt, pkg, NULL, 0, r->gpt,
				     TP_GPUSEL_CLOSEST, tmp, &cl, &err);
	free(tmp);
	if (r1 || r2)
		return cli_report_runtime(name, &err);
	if (tp_node_align_cpus(node, cpu_g, tk, cnt, g, r->gpt, pkg, core, mims,
			       &err) < 0)
		return cli_report_runtime(name, &err);
	add_cost(&r->cost, &c);
	add_cost(&r->local_rank, &lr);
	add_cost(&r->closest, &cl);
	r->used_magc += c.used == TP_GPUSEL_MAGC;
	for (int32_t k = 0; k < cnt; k++)
		for (int q = 0; q < r->gpt; q++)
			r->gpus[(size_t)tk[k] * r->gpt + q] = g[(size_t)k * r->gpt + q];
	return 0;
}

int cli_node_place(const struct cli_node_opts *o,
		   const struct cli_node_models *mm, const tp_graph *cpu_g, const tp_graph *gm, const tp_alloc *a,
		   const int32_t *map, int64_t ntasks, struct cli_node_result *r)
{
	tp_error err;
	tp_error_clear(&err);
	memset(r, 0, sizeof *r);
	r->ntasks = ntasks;
	r->gpt = o->gpus_per_task > 0 ? (int)o->gpus_per_task : 1;
	r->want_gpus = o->gpu_matrix || o->gpus_per_task > 0;
	enum tp_gpusel_algo algo = TP_GPUSEL_MAGC;
	if (o->select && tp_gpusel_algo_parse(o->select, &algo, &err) < 0)
		return cli_report("--gpu-select", &err);
	r->algo = algo;
	r->cpus = calloc((size_t)ntasks + 1, sizeof(char *));
	r->gpus = calloc((size_t)ntasks * (size_t)r->gpt + 1, sizeof(int));
	int32_t nn = tp_alloc_nnodes(a);
	/* tasks of each node, in rank order (bucketed by node) */
	int64_t *start = calloc((size_t)nn + 1, sizeof(int64_t));
	int32_t *tasks = malloc(sizeof(int32_t) * ((size_t)ntasks + 1));
	int *pkg = malloc(sizeof(int) * ((size_t)ntasks + 1));
	int *core = malloc(sizeof(int) * ((size_t)ntasks + 1));
	int *g = malloc(sizeof(int) * ((size_t)ntasks * (size_t)r->gpt + 1));
	int rc = 0;
	if (!r->cpus || !r->gpus || !start || !tasks || !pkg || !core || !g) {
		rc = cli_fail("out of memory");
		goto out;
	}
	for (int64_t t = 0; t < ntasks; t++)
		start[map[t] + 1]++;
	for (int32_t i = 0; i < nn; i++)
		start[i + 1] += start[i];
	{
		int64_t *fill = calloc((size_t)nn + 1, sizeof(int64_t));
		if (!fill) {
			rc = cli_fail("out of memory");
			goto out;
		}
		for (int64_t t = 0; t < ntasks; t++)
			tasks[start[map[t]] + fill[map[t]]++] = (int32_t)t;
		free(fill);
	}
	const tp_machine *m = tp_alloc_machine(a);
	for (int32_t i = 0; i < nn; i++) {
		int32_t cnt = (int32_t)(start[i + 1] - start[i]);
		if (cnt == 0)
			continue;
		const int32_t *tk = tasks + start[i];
		const char *name = tp_machine_node_name(m, tp_alloc_node(a, i));
		const tp_node *node = mm->of[i];
		int ncores = tp_node_ncores(node);
		if (cnt > ncores) {
			rc = cli_usage_error("%s: %ld tasks, but %s has %d cores", name,
					     (long)cnt, tp_node_source(node), ncores);
			goto out;
		}
		int cpt = ncores / cnt;
		double mims = 0;
		if (tp_node_place_cpus(node, cpu_g, tk, cnt, cpt, pkg, core, &mims,
				       &err) < 0) {
			rc = cli_report(name, &err);
			goto out;
		}
		if (r->want_gpus &&
		    (rc = node_gpus(o, node, cpu_g, gm, tk, cnt, name, pkg, core,
				    g, &mims, r)))
			goto out;
		if (mims > r->mims_bytes)
			r->mims_bytes = mims;
		for (int32_t k = 0; k < cnt; k++) {
			char buf[4096];
			if (tp_node_cpuset_string(node, core[k], cpt, buf, sizeof buf) < 0) {
				rc = cli_fail("%s: CPU list too long", name);
				goto out;
			}
			r->cpus[tk[k]] = strdup(buf);
			if (!r->cpus[tk[k]]) {
				rc = cli_fail("out of memory");
				goto out;
			}
		}
	}
out:
	free(start);
	free(tasks);
	free(pkg);
	free(core);
	free(g);
	return rc;
}

static json_object *gpu_list(const struct cli_node_result *r, int64_t t)
{
	json_object *a = json_object_new_array();
	for (int q = 0; a && q < r->gpt; q++) {
		json_object *v = json_object_new_int(r->gpus[(size_t)t * r->gpt + q]);
		if (!v || json_object_array_add(a, v) < 0) {
			json_object_put(v);
			json_object_put(a);
			return NULL;
		}
	}
	return a;
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

int cli_node_json(json_object *doc, const struct cli_node_opts *o,
		  const struct cli_node_result *r)
{
	int bad = 0;
	bad |= cli_json_put(doc, "node_topology", o->topology ? json_object_new_string(o->topology)
						      : json_object_new_string("config"));
	json_object *cpus = json_object_new_array();
	json_object *gpus = r->want_gpus ? json_object_new_array() : NULL;
	for (int64_t t = 0; cpus && t < r->ntasks; t++) {
		json_object *s = json_object_new_string(r->cpus[t] ? r->cpus[t] : "");
		if (!s || json_object_array_add(cpus, s) < 0) {
			json_object_put(s);
			bad = -1;
			break;
		}
		if (gpus) {
			json_object *l = gpu_list(r, t);
			if (!l || json_object_array_add(gpus, l) < 0) {
				json_object_put(l);
				bad = -1;
				break;
			}
		}
	}
	bad |= cli_json_put(doc, "cpus", cpus);
	bad |= cli_json_put(doc, "max_inter_socket_bytes", cli_json_double(r->mims_bytes));
	if (r->want_gpus) {
		bad |= cli_json_put(doc, "gpus", gpus);
		json_object *sel = json_object_new_object();
		if (sel) {
			bad |= cli_json_put(sel, "algorithm",
				   json_object_new_string(tp_gpusel_algo_name(r->algo)));
			bad |= cli_json_put(sel, "gpus_per_task", json_object_new_int(r->gpt));
			bad |= cli_json_put(sel, "cost", cost_json(&r->cost));
			bad |= cli_json_put(sel, "local_rank_cost", cost_json(&r->local_rank));
			bad |= cli_json_put(sel, "closest_cost", cost_json(&r->closest));
		}
		bad |= cli_json_put(doc, "gpu_selection", sel);
	}
	return bad ? -1 : 0;
}

int cli_node_rankfile(FILE *f, const tp_alloc *a, const int32_t *map,
		      const struct cli_node_result *r)
{
	const tp_machine *m = tp_alloc_machine(a);
	for (int64_t t = 0; t < r->ntasks; t++) {
		if (fprintf(f, "rank %ld=%s cpus=%s", (long)t,
			    tp_machine_node_name(m, tp_alloc_node(a, map[t])),
			    r->cpus[t] ? r->cpus[t] : "") < 0)
			return -1;
		if (r->want_gpus) {
			for (int q = 0; q < r->gpt; q++)
				if (fprintf(f, "%s%d", q ? "," : " gpus=",
					    r->gpus[(size_t)t * r->gpt + q]) < 0)
					return -1;
		}
		if (fputc('\n', f) == EOF)
			return -1;
	}
	return 0;
}

int cli_cmd_node_info(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			cli_help("node-info", stdout);
			return cli_finish_stdout();
		}
		if (argv[i][0] == '-' && argv[i][1])
			return cli_usage_error("node-info: unknown option '%s' (see "
					       "'topoplace help node-info')", argv[i]);
	}
	if (argc > 3)
		return cli_usage_error("node-info: unexpected argument '%s'", argv[3]);
	tp_error err;
	tp_error_clear(&err);
	tp_node *n = NULL;
	if (argc > 1 ? tp_node_load_xml(argv[1], &n, &err) < 0
		     : tp_node_load_live(&n, &err) < 0)
		return cli_report(argc > 1 ? argv[1] : "node-info", &err);
	if (argc > 2 && tp_node_load_links(n, argv[2], &err) < 0) {
		tp_node_destroy(n);
		return cli_report(argv[2], &err);
	}
	tp_node_describe(n, stdout);
	tp_node_destroy(n);
	return cli_finish_stdout();
}
