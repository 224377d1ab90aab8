/* topoplace — the map and eval commands. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"

/* Everything one command builds, freed by job_free on every path. */
struct job {
	const char *cmd;
	const char *config, *nodes, *tpn, *stencil, *graph, *hostfile, *output;
	const char *policy, *metric, *format, *search;
	int64_t ntasks;            /* --ntasks, 0 when not given */
	int64_t tpn_count;         /* --tasks-per-node as a count, 0: spec/none */
	bool have_budget;
	double budget_ms;
	bool have_seed;
	uint64_t seed;
	int64_t parts, threads;
	bool compare;
	bool explain;
	struct cli_node_opts nopt;    /* --node-topology and friends */

	struct cli_node_models models;
	tp_graph *gm;                 /* --gpu-matrix */
	tp_graph *cpu_g;              /* the CPU pattern when g is CPU + GPU */
	struct cli_node_result nres;

	char *nodes_buf;           /* contents of --nodes @FILE */
	tp_conf *conf;
	tp_alloc *alloc;
	tp_graph *g;
	int32_t *map, *block, *zmap;
};

static void job_free(struct job *j)
{
	cli_node_result_free(&j->nres);
	cli_node_models_free(&j->models);
	if (j->gm)
		tp_graph_destroy(j->gm);
	if (j->cpu_g)
		tp_graph_destroy(j->cpu_g);
	free(j->nodes_buf);
	free(j->map);
	free(j->block);
	free(j->zmap);
	if (j->g)
		tp_graph_destroy(j->g);
	if (j->alloc)
		tp_alloc_destroy(j->alloc);
	if (j->conf)
		tp_conf_destroy(j->conf);
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* --tasks-per-node: a count (checked here) or a Slurm spec (checked by the
 * core when the allocation exists). */
static int parse_tpn(struct job *j)
{
	if (!j->tpn)
		return 0;
	if (all_digits(j->tpn) || j->tpn[0] == '-' || j->tpn[0] == '+' ||
	    !j->tpn[0])
		return cli_parse_count("--tasks-per-node", j->tpn, 1, 1 << 20,
				       &j->tpn_count);
	return 0;
}

/* Sets an option that must not be combined with its alternative. */
static int set_source(struct job *j, const char **slot, const char *val,
		      const char *name)
{
	if (j->stencil && slot == &j->graph)
		return cli_usage_error("%s: --stencil and --graph are mutually "
				       "exclusive", j->cmd);
	if (j->graph && slot == &j->stencil)
		return cli_usage_error("%s: --stencil and --graph are mutually "
				       "exclusive", j->cmd);
	if (!*val)
		return cli_usage_error("%s: empty value", name);
	*slot = val;
	return 0;
}

static int load_conf(struct job *j)
{
	tp_error err;
	tp_error_clear(&err);
	if (tp_conf_load(j->config, &j->conf, &err) < 0)
		return cli_report(j->config, &err);
	return 0;
}

/* The checks map and eval share once their options are parsed: no stray
 * arguments, and a config and a non-empty node list. */
static int check_common(const struct job *j, int argc, char **argv)
{
	if (optind < argc)
		return cli_usage_error("%s: unexpected argument '%s' (see "
				       "'topoplace help %s')", j->cmd,
				       argv[optind], j->cmd);
	if (!j->config)
		return cli_usage_error("%s: missing --config FILE", j->cmd);
	if (!j->nodes)
		return cli_usage_error("%s: missing --nodes HOSTLIST", j->cmd);
	if (!*j->nodes)
		return cli_usage_error("--nodes: empty hostlist");
	return 0;
}

/* --nodes @FILE: the hostlist is read from FILE (for allocations too large
 * for one command-line argument); newlines act as commas. */
static int read_nodes_file(struct job *j, const char *path)
{
	tp_error err;
	tp_error_clear(&err);
	if (tp_hostlist_read_file(path, &j->nodes_buf, &err) < 0)
		return cli_report("--nodes", &err);
	j->nodes = j->nodes_buf;
	return 0;
}

/* The allocation: slots from --tasks-per-node (count or spec), else 1 per
 * node for the caller to adjust. */
static int make_alloc(struct job *j)
{
	tp_error err;
	tp_error_clear(&err);
	int slots = j->tpn_count > 0 ? (int)j->tpn_count : 1;
	if (j->nodes[0] == '@' && !j->nodes_buf) {
		int rc = read_nodes_file(j, j->nodes + 1);
		if (rc)
			return rc;
	}
	if (tp_alloc_from_hostlist(tp_conf_machine(j->conf), j->nodes, slots,
				   "--nodes", &j->alloc, &err) < 0)
		return cli_report("--nodes", &err);
	if (j->tpn && j->tpn_count == 0 &&
	    tp_alloc_set_slots_spec(j->alloc, j->tpn, &err) < 0)
		return cli_report("--tasks-per-node", &err);
	return 0;
}

static int make_graph(struct job *j, int64_t ntasks)
{
	tp_error err;
	tp_error_clear(&err);
	if (j->stencil) {
		if (tp_graph_from_stencil(&j->g, j->stencil, ntasks, &err) < 0)
			return cli_report("--stencil", &err);
	} else {
		if (tp_graph_from_json_file(&j->g, j->graph, ntasks, &err) < 0)
			return cli_report(j->graph, &err);
		int64_t dups = tp_graph_merged_duplicates(j->g);
		if (dups > 0)
			cli_note("%s: %lld duplicate edge%s summed", j->graph,
				 (long long)dups, dups == 1 ? "" : "s");
	}
	if (tp_graph_ntasks(j->g) != ntasks)
		return cli_usage_error("%s: %ld tasks, but the job has %ld",
				       j->stencil ? "--stencil" : j->graph,
				       (long)tp_graph_ntasks(j->g), (long)ntasks);
	return 0;
}

static int32_t *alloc_map(int64_t n)
{
	return calloc(n > 0 ? (size_t)n : 1, sizeof(int32_t));
}

static int compute_metrics(const struct job *j, const int32_t *map,
			   const char *what, tp_metrics *m)
{
	tp_error err;
	tp_error_clear(&err);
	if (tp_mapping_validate(j->g, j->alloc, map, &err) < 0)
		return cli_report_runtime(what, &err);
	if (tp_metrics_compute(j->g, j->alloc, map, true, m, &err) < 0)
		return cli_report_runtime(what, &err);
	return 0;
}

/* ---- map ---- */

enum {
	OPT_SEED = 256, OPT_SEARCH, OPT_PARTS, OPT_THREADS, OPT_COMPARE,
	OPT_EXPLAIN,
	OPT_GPU_MATRIX, OPT_NODE_TOPOLOGY, OPT_GPT, OPT_GPU_LINKS, OPT_GPU_SELECT,
};

static const struct option map_opts[] = {
	{ "config", required_argument, NULL, 'c' },
	{ "nodes", required_argument, NULL, 'w' },
	{ "ntasks", required_argument, NULL, 'n' },
	{ "tasks-per-node", required_argument, NULL, 'N' },
	{ "stencil", required_argument, NULL, 's' },
	{ "graph", required_argument, NULL, 'g' },
	{ "policy", required_argument, NULL, 'p' },
	{ "metric", required_argument, NULL, 'm' },
	{ "format", required_argument, NULL, 'f' },
	{ "time-budget", required_argument, NULL, 't' },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "output", required_argument, NULL, 'o' },
	{ "search", required_argument, NULL, OPT_SEARCH },
	{ "parts-per-level", required_argument, NULL, OPT_PARTS },
	{ "threads", required_argument, NULL, OPT_THREADS },
	{ "compare", no_argument, NULL, OPT_COMPARE },
	{ "explain", no_argument, NULL, OPT_EXPLAIN },
	{ "gpu-matrix", required_argument, NULL, OPT_GPU_MATRIX },
	{ "node-topology", required_argument, NULL, OPT_NODE_TOPOLOGY },
	{ "gpus-per-task", required_argument, NULL, OPT_GPT },
	{ "gpu-links", required_argument, NULL, OPT_GPU_LINKS },
	{ "gpu-select", required_argument, NULL, OPT_GPU_SELECT },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int parse_map_args(struct job *j, int argc, char **argv, bool *help)
{
	int c, rc;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":c:w:n:N:s:g:p:m:f:t:o:h", map_opts,
				NULL)) != -1) {
		rc = 0;
		switch (c) {
		case 'c': j->config = optarg; break;
		case 'w': j->nodes = optarg; break;
		case 'n':
			rc = cli_parse_count("--ntasks", optarg, 1, INT32_MAX,
					     &j->ntasks);
			break;
		case 'N': j->tpn = optarg; break;
		case 's': rc = set_source(j, &j->stencil, optarg, "--stencil"); break;
		case 'g': rc = set_source(j, &j->graph, optarg, "--graph"); break;
		case 'p': j->policy = optarg; break;
		case 'm': j->metric = optarg; break;
		case 'f': j->format = optarg; break;
		case 't':
			rc = cli_parse_ms("--time-budget", optarg, &j->budget_ms);
			j->have_budget = true;
			break;
		case OPT_SEED:
			rc = cli_parse_u64("--seed", optarg, &j->seed);
			j->have_seed = true;
			break;
		case 'o': j->output = optarg; break;
		case OPT_SEARCH: j->search = optarg; break;
		case OPT_PARTS:
			rc = cli_parse_count("--parts-per-level", optarg, 2, 64,
					     &j->parts);
			break;
		case OPT_THREADS:
			rc = cli_parse_count("--threads", optarg, 1, 1024,
					     &j->threads);
			break;
		case OPT_COMPARE: j->compare = true; break;
		case OPT_EXPLAIN: j->explain = true; break;
		case OPT_GPU_MATRIX: j->nopt.gpu_matrix = optarg; break;
		case OPT_NODE_TOPOLOGY: j->nopt.topology = optarg; break;
		case OPT_GPU_LINKS: j->nopt.links = optarg; break;
		case OPT_GPU_SELECT: j->nopt.select = optarg; break;
		case OPT_GPT:
			rc = cli_parse_count("--gpus-per-task", optarg, 1,
					     TP_NODE_MAX_GPUS, &j->nopt.gpus_per_task);
			break;
		case 'h': *help = true; return 0;
		default:
			return cli_getopt_error(j->cmd, c, optopt, argv, optind);
		}
		if (rc)
			return rc;
	}
	rc = check_common(j, argc, argv);
	if (rc)
		return rc;
	if (j->nopt.select) {
		enum tp_gpusel_algo a;
		tp_error e;
		if (tp_gpusel_algo_parse(j->nopt.select, &a, &e) < 0)
			return cli_report("--gpu-select", &e);
	}
	if (!j->ntasks && !j->tpn)
		return cli_usage_error("%s: missing --ntasks N or "
				       "--tasks-per-node N", j->cmd);
	if (!j->stencil && !j->graph)
		return cli_usage_error("%s: missing --stencil SPEC or --graph "
				       "FILE", j->cmd);
	if (j->output && !*j->output)
		return cli_usage_error("--output: empty file name");
	if (j->format && strcmp(j->format, "hostfile") &&
	    strcmp(j->format, "json") && strcmp(j->format, "rankfile"))
		return cli_usage_error("--format: '%s': unknown format "
				       "(hostfile, json or rankfile)", j->format);
	if (j->search && strcmp(j->search, "auto") && strcmp(j->search, "full") &&
	    strcmp(j->search, "rotations") && strcmp(j->search, "none"))
		return cli_usage_error("--search: '%s': unknown mode (auto, full, "
				       "rotations or none)", j->search);
	return parse_tpn(j);
}

static json_object *names_json(const tp_alloc *a, const int32_t *map,
			       int64_t ntasks)
{
	const tp_machine *m = tp_alloc_machine(a);
	json_object *arr = json_object_new_array();
	if (!arr)
		return NULL;
	for (int64_t t = 0; t < ntasks; t++) {
		const char *name =
			tp_machine_node_name(m, tp_alloc_node(a, map[t]));
		json_object *s = json_object_new_string(name ? name : "");
		if (!s || json_object_array_add(arr, s) < 0) {
			json_object_put(s);
			json_object_put(arr);
			return NULL;
		}
	}
	return arr;
}


struct map_result {
	enum tp_policy requested, used;
	enum tp_metric_kind metric;
	double budget_ms;
	int64_t ntasks;
	tp_metrics m, mblock, mz;
	bool have_z;
	tp_geom_report report;
	bool have_report;
	tp_place_report prep;
	bool ranked;            /* candidates ranked by the GPU-link congestion */
	double elapsed_ms;
};


/* The candidates of graph/auto as a JSON array (null for other policies). */
static json_object *candidates_json(const struct map_result *r)
{
	json_object *arr = json_object_new_array();
	if (!arr)
		return NULL;
	for (int i = 0; i < r->prep.ncandidates; i++) {
		const tp_place_candidate *c = &r->prep.cand[i];
		json_object *o = json_object_new_object();
		int bad = !o || json_object_array_add(arr, o) < 0;
		if (bad) {
			json_object_put(o);
			json_object_put(arr);
			return NULL;
		}
		bad |= cli_json_put(o, "name", json_object_new_string(c->name));
		bad |= cli_json_put(o, "ran", json_object_new_boolean(c->ran));
		if (c->ran)
			bad |= cli_json_put(o, "score", cli_json_double(c->score));
		else if (json_object_object_add(o, "score", NULL) < 0)
			bad = -1;
		if (c->ran && r->ranked)
			bad |= cli_json_put(o, "gpu_link_congestion_ms", cli_json_double(c->rank));
		bad |= cli_json_put(o, "ms", cli_json_ms(c->ms));
		bad |= cli_json_put(o, "note", json_object_new_string(c->note));
		bad |= cli_json_put(o, "chosen", json_object_new_boolean(i == r->prep.best));
		if (bad) {
			json_object_put(arr);
			return NULL;
		}
	}
	return arr;
}

/* --explain: which candidates ran, their scores and times, on stderr. */
static void print_explain(FILE *f, const struct map_result *r)
{
	fprintf(f, "explain: policy %s, metric %s, time budget %g ms%s\n",
		tp_policy_name(r->used), tp_metric_name(r->metric), r->budget_ms,
		r->budget_ms > 0 ? "" : " (none)");
	if (r->prep.ncandidates == 0) {
		fprintf(f, "explain:   %-12s %.6g (the only algorithm of this "
			"policy), %.1f ms\n", tp_policy_name(r->used),
			r->metric == TP_METRIC_CONGESTION ? r->m.max_congestion_bytes
							   : r->m.hop_bytes,
			r->elapsed_ms);
		return;
	}
	for (int i = 0; i < r->prep.ncandidates; i++) {
		const tp_place_candidate *c = &r->prep.cand[i];
		if (c->ran && r->ranked)
			fprintf(f, "explain: %c %-12s GPU links %-10.6g ms, score "
				"%-14.6g %9.1f ms\n", i == r->prep.best ? '*' : ' ',
				c->name, c->rank, c->score, c->ms);
		else if (c->ran)
			fprintf(f, "explain: %c %-12s score %-14.6g %9.1f ms\n",
				i == r->prep.best ? '*' : ' ', c->name, c->score,
				c->ms);
		else
			fprintf(f, "explain:   %-12s %s\n", c->name, c->note);
	}
	if (r->prep.best >= 0) {
		double bs = r->metric == TP_METRIC_CONGESTION
				    ? r->mblock.max_congestion_bytes
				    : r->mblock.hop_bytes;
		const tp_place_candidate *b = &r->prep.cand[r->prep.best];
		if (bs > 0)
			fprintf(f, "explain: kept %s: %.3f x block's %s\n", b->name,
				(r->metric == TP_METRIC_CONGESTION
					 ? r->m.max_congestion_bytes : r->m.hop_bytes) / bs,
				tp_metric_name(r->metric));
		else
			fprintf(f, "explain: kept %s\n", b->name);
	}
}

static json_object *map_json(const struct job *j, const struct map_result *r)
{
	json_object *doc = json_object_new_object();
	if (!doc)
		return NULL;
	int bad = 0;
	bad |= cli_json_put(doc, "version", json_object_new_string(TOPOPLACE_VERSION));
	bad |= cli_json_put(doc, "policy",
		   json_object_new_string(tp_policy_name(r->used)));
	bad |= cli_json_put(doc, "requested_policy",
		   json_object_new_string(tp_policy_name(r->requested)));
	bad |= cli_json_put(doc, "metric",
		   json_object_new_string(tp_metric_name(r->metric)));
	bad |= cli_json_put(doc, "ntasks", json_object_new_int64(r->ntasks));
	bad |= cli_json_put(doc, "nnodes",
		   json_object_new_int64(tp_alloc_nnodes(j->alloc)));
	bad |= cli_json_put(doc, "slots",
		   json_object_new_int64(tp_alloc_total_slots(j->alloc)));
	bad |= cli_json_put(doc, "time_budget_ms", cli_json_double(r->budget_ms));
	bad |= cli_json_put(doc, "mapping", names_json(j->alloc, j->map, r->ntasks));
	bad |= cli_json_put(doc, "congestion_unit", json_object_new_string(
		   tp_machine_has_level_bandwidth(tp_alloc_machine(j->alloc))
		   ? "bytes/bandwidth" : "bytes"));
	bad |= cli_json_put(doc, "metrics", cli_metrics_json(&r->m));
	bad |= cli_json_put(doc, "block_metrics", cli_metrics_json(&r->mblock));
	if (r->have_z)
		bad |= cli_json_put(doc, "zorder_metrics", cli_metrics_json(&r->mz));
	if (r->prep.ncandidates > 0)
		bad |= cli_json_put(doc, "candidates", candidates_json(r));
	if (r->have_report) {
		bad |= cli_json_put(doc, "search", cli_report_json(&r->report));
	} else if (json_object_object_add(doc, "search", NULL) < 0) {
		bad = -1;
	}
	bad |= cli_json_put(doc, "elapsed_ms", cli_json_ms(r->elapsed_ms));
	if (bad) {
		json_object_put(doc);
		return NULL;
	}
	return doc;
}

static int resolve_policy(struct job *j, struct map_result *r)
{
	tp_error err;
	tp_error_clear(&err);
	if (j->policy) {
		if (tp_policy_parse(j->policy, &r->requested, &err) < 0)
			return cli_report("--policy", &err);
	} else if (tp_conf_has_default_policy(j->conf)) {
		r->requested = tp_conf_default_policy(j->conf);
	} else {
		r->requested = TP_POLICY_GEOMETRIC;
	}
	/* "none" leaves Slurm's placement alone: that is the block order. */
	r->used = r->requested == TP_POLICY_NONE ? TP_POLICY_BLOCK
		  : r->requested;

	if (j->metric) {
		if (tp_metric_parse(j->metric, &r->metric, &err) < 0)
			return cli_report("--metric", &err);
	} else {
		r->metric = tp_conf_default_metric(j->conf);
	}
	r->budget_ms = j->have_budget ? j->budget_ms
		       : tp_conf_time_budget_ms(j->conf);
	if (r->budget_ms < 0)
		r->budget_ms = 0;
	return 0;
}

static int map_run(struct job *j)
{
	struct map_result r;
	memset(&r, 0, sizeof r);
	tp_error err;
	tp_error_clear(&err);
	int rc;

	if ((rc = load_conf(j)) || (rc = make_alloc(j)))
		return rc;
	if (j->tpn) {
		int64_t total = tp_alloc_total_slots(j->alloc);
		if (j->ntasks > total)
			return cli_usage_error("--ntasks: %ld tasks do not fit in "
					       "the %ld slots of --tasks-per-node",
					       (long)j->ntasks, (long)total);
		r.ntasks = j->ntasks ? j->ntasks : total;
		if (r.ntasks > INT32_MAX)
			return cli_usage_error("--tasks-per-node: %ld tasks in "
					       "all, at most %ld supported",
					       (long)r.ntasks, (long)INT32_MAX);
	} else {
		if (tp_alloc_spread_tasks(j->alloc, j->ntasks, &err) < 0)
			return cli_report("--ntasks", &err);
		r.ntasks = j->ntasks;
	}
	if ((rc = make_graph(j, r.ntasks)) || (rc = resolve_policy(j, &r)))
		return rc;
	bool want_node = j->nopt.topology || j->nopt.gpu_matrix ||
			 j->nopt.gpus_per_task || j->nopt.links || j->nopt.select ||
			 (j->format && !strcmp(j->format, "rankfile"));
	if ((rc = cli_node_models_load(&j->nopt, j->conf, j->config, j->alloc,
				       want_node, &j->models)))
		return rc;
	if (j->models.of) {
		if ((rc = cli_node_load_matrix(&j->nopt, r.ntasks, &j->gm)))
			return rc;
		/* MAGC phase 1: nodes are chosen for CPU + GPU traffic */
		if (j->gm) {
			tp_graph *sum = NULL;
			if (tp_graph_add(j->g, j->gm, j->nopt.gpu_matrix, &sum,
					 &err) < 0)
				return cli_report(j->nopt.gpu_matrix, &err);
			j->cpu_g = j->g;
			j->g = sum;
		}
	}

	if (r.used == TP_POLICY_GEOMETRIC && tp_graph_coord_dims(j->g) == 0) {
		cli_note("%s has no task coordinates; using graph mapping "
			 "instead of geometric", j->graph ? j->graph : "the graph");
		r.used = TP_POLICY_GRAPH;
	}

	tp_place_opts po;
	tp_place_opts_default(&po);
	po.policy = r.used;
	po.geom.metric = r.metric;
	po.geom.time_budget_ms = r.budget_ms;
	if (j->search)
		po.geom.search = !strcmp(j->search, "full") ? TP_SEARCH_FULL
				 : !strcmp(j->search, "rotations")
					 ? TP_SEARCH_ROTATIONS
				 : !strcmp(j->search, "auto") ? TP_SEARCH_AUTO
					 : TP_SEARCH_NONE;
	if (j->parts)
		po.geom.parts_per_level = (int)j->parts;
	if (j->threads)
		po.geom.nthreads = (int)j->threads;
	if (j->have_seed)
		po.seed = j->seed;

	j->map = alloc_map(r.ntasks);
	j->block = alloc_map(r.ntasks);
	if (!j->map || !j->block)
		return cli_fail("out of memory");
	/* MAGC phase 1 sees the inside of the nodes: candidates are ranked
	 * by the GPU-link congestion after phases 2 and 3 on every node */
	tp_nodes_gpu_rank_arg gr = {
		j->alloc, (const tp_node *const *)j->models.of, j->g, j->gm,
		(int32_t)r.ntasks,
		j->nopt.gpus_per_task > 0 ? (int)j->nopt.gpus_per_task : 1 };
	if (j->gm && j->models.of &&
	    (r.used == TP_POLICY_AUTO || r.used == TP_POLICY_GRAPH)) {
		po.rank = tp_nodes_gpu_rank;
		po.rank_arg = &gr;
		r.ranked = true;
	}

	double t0 = now_ms();
	if (tp_place_ex(j->g, j->alloc, &po, j->map, &r.prep, &err) < 0)
		return cli_report_runtime(tp_policy_name(r.used), &err);
	r.elapsed_ms = now_ms() - t0;
	r.have_report = r.prep.have_geom;
	if (r.have_report)
		r.report = r.prep.geom;
	if (r.used == TP_POLICY_AUTO && r.prep.budget_hit)
		cli_note("time budget of %g ms reached: best of the candidates "
			 "that ran kept", r.budget_ms);
	if (r.used == TP_POLICY_GEOMETRIC && r.report.budget_hit)
		cli_note("time budget of %g ms reached: best of %d of %d "
			 "variants kept", r.budget_ms, r.report.variants_scored,
			 r.report.variants_total);

	if ((rc = compute_metrics(j, j->map, tp_policy_name(r.used), &r.m)))
		return rc;
	if (tp_map_block(j->alloc, (int32_t)r.ntasks, j->block, &err) < 0)
		return cli_report_runtime("block", &err);
	if ((rc = compute_metrics(j, j->block, "block", &r.mblock)))
		return rc;

	if (j->explain)
		print_explain(stderr, &r);

	if (j->compare) {
		j->zmap = alloc_map(r.ntasks);
		if (!j->zmap)
			return cli_fail("out of memory");
		tp_error zerr;
		tp_error_clear(&zerr);
		if (tp_map_zorder(j->alloc, (int32_t)r.ntasks, j->zmap, &zerr) == 0 &&
		    tp_mapping_validate(j->g, j->alloc, j->zmap, &zerr) == 0 &&
		    tp_metrics_compute(j->g, j->alloc, j->zmap, true, &r.mz,
				       &zerr) == 0)
			r.have_z = true;
		else if (zerr.code == TP_ENOMEM)
			return cli_report_runtime("zorder", &zerr);
		struct cli_row rows[3] = {
			{ "block", &r.mblock },
			{ "zorder", r.have_z ? &r.mz : NULL },
			{ tp_policy_name(r.used), &r.m },
		};
		/* The chosen policy's row, unless it is one of the first two. */
		int nrows = r.used == TP_POLICY_BLOCK || r.used == TP_POLICY_ZORDER
			    ? 2 : 3;
		cli_print_compare(stderr, rows, nrows);
	}

	/* phase 2 on the CPU + GPU sum too (see README.md, "Inside the node") */
	if (j->models.of &&
	    (rc = cli_node_place(&j->nopt, &j->models, j->g,
				 j->gm, j->alloc, j->map, r.ntasks, &j->nres)))
		return rc;

	if (j->format && !strcmp(j->format, "json")) {
		json_object *doc = map_json(j, &r);
		if (doc && j->models.of &&
		    cli_node_json(doc, &j->nopt, &j->nres) < 0) {
			json_object_put(doc);
			doc = NULL;
		}
		if (!doc)
			return cli_fail("out of memory");
		rc = cli_write_json(doc, j->output);
		json_object_put(doc);
		return rc;
	}
	if (j->format && !strcmp(j->format, "rankfile")) {
		FILE *f = stdout;
		char *buf = NULL;
		size_t len = 0;
		if (j->output && !(f = open_memstream(&buf, &len)))
			return cli_fail("out of memory");
		int bad = cli_node_rankfile(f, j->alloc, j->map, &j->nres);
		if (!j->output)
			return bad || fflush(stdout) != 0 || ferror(stdout)
			       ? cli_fail("standard output: write error")
			       : CLI_EXIT_OK;
		if (fclose(f) != 0 || bad) {
			free(buf);
			return cli_fail("out of memory");
		}
		rc = cli_write_text(buf, len, j->output);
		free(buf);
		return rc;
	}
	if (j->output) {
		if (tp_hostfile_write_path(j->output, j->alloc, j->map,
					   (int32_t)r.ntasks, &err) < 0)
			return cli_report_runtime(j->output, &err);
		return CLI_EXIT_OK;
	}
	if (tp_hostfile_write(stdout, j->alloc, j->map, (int32_t)r.ntasks) < 0 ||
	    fflush(stdout) != 0 || ferror(stdout))
		return cli_fail("standard output: write error");
	return CLI_EXIT_OK;
}

int cli_cmd_map(int argc, char **argv)
{
	struct job j;
	memset(&j, 0, sizeof j);
	j.cmd = "map";
	bool help = false;
	int rc = parse_map_args(&j, argc, argv, &help);
	if (!rc && help) {
		cli_help("map", stdout);
		return cli_finish_stdout();
	}
	if (!rc)
		rc = map_run(&j);
	job_free(&j);
	return rc;
}

/* ---- eval ---- */

static const struct option eval_opts[] = {
	{ "config", required_argument, NULL, 'c' },
	{ "nodes", required_argument, NULL, 'w' },
	{ "hostfile", required_argument, NULL, 'H' },
	{ "tasks-per-node", required_argument, NULL, 'N' },
	{ "stencil", required_argument, NULL, 's' },
	{ "graph", required_argument, NULL, 'g' },
	{ "format", required_argument, NULL, 'f' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int parse_eval_args(struct job *j, int argc, char **argv, bool *help)
{
	int c, rc;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":c:w:H:N:s:g:f:h", eval_opts,
				NULL)) != -1) {
		rc = 0;
		switch (c) {
		case 'c': j->config = optarg; break;
		case 'w': j->nodes = optarg; break;
		case 'H': j->hostfile = optarg; break;
		case 'N': j->tpn = optarg; break;
		case 's': rc = set_source(j, &j->stencil, optarg, "--stencil"); break;
		case 'g': rc = set_source(j, &j->graph, optarg, "--graph"); break;
		case 'f': j->format = optarg; break;
		case 'h': *help = true; return 0;
		default:
			return cli_getopt_error(j->cmd, c, optopt, argv, optind);
		}
		if (rc)
			return rc;
	}
	rc = check_common(j, argc, argv);
	if (rc)
		return rc;
	if (!j->hostfile)
		return cli_usage_error("%s: missing --hostfile FILE", j->cmd);
	if (!*j->hostfile)
		return cli_usage_error("--hostfile: empty file name");
	if (!j->stencil && !j->graph)
		return cli_usage_error("%s: missing --stencil SPEC or --graph "
				       "FILE", j->cmd);
	if (j->format && strcmp(j->format, "text") && strcmp(j->format, "json"))
		return cli_usage_error("--format: '%s': unknown format (text or "
				       "json)", j->format);
	return parse_tpn(j);
}

static int eval_run(struct job *j)
{
	tp_error err;
	tp_error_clear(&err);
	int rc;
	if ((rc = load_conf(j)) || (rc = make_alloc(j)))
		return rc;

	/* Without --tasks-per-node the slots are what the hostfile uses; with
	 * it, the hostfile may not exceed them. */
	int32_t ntasks = 0;
	if (tp_hostfile_read(j->hostfile, j->alloc, j->tpn == NULL, &j->map,
			     &ntasks, &err) < 0)
		return cli_report(j->hostfile, &err);
	if (ntasks <= 0)
		return cli_usage_error("%s: no node names", j->hostfile);
	if ((rc = make_graph(j, ntasks)))
		return rc;

	tp_metrics m, mb;
	if ((rc = compute_metrics(j, j->map, j->hostfile, &m)))
		return rc;
	j->block = alloc_map(ntasks);
	if (!j->block)
		return cli_fail("out of memory");
	if (tp_map_block(j->alloc, ntasks, j->block, &err) < 0)
		return cli_report_runtime("block", &err);
	if ((rc = compute_metrics(j, j->block, "block", &mb)))
		return rc;

	if (j->format && !strcmp(j->format, "json")) {
		json_object *doc = json_object_new_object();
		if (!doc)
			return cli_fail("out of memory");
		int bad = 0;
		bad |= cli_json_put(doc, "version",
			   json_object_new_string(TOPOPLACE_VERSION));
		bad |= cli_json_put(doc, "hostfile", json_object_new_string(j->hostfile));
		bad |= cli_json_put(doc, "ntasks", json_object_new_int64(ntasks));
		bad |= cli_json_put(doc, "nnodes",
			   json_object_new_int64(tp_alloc_nnodes(j->alloc)));
		bad |= cli_json_put(doc, "congestion_unit", json_object_new_string(
			   tp_machine_has_level_bandwidth(tp_alloc_machine(j->alloc))
			   ? "bytes/bandwidth" : "bytes"));
		bad |= cli_json_put(doc, "metrics", cli_metrics_json(&m));
		bad |= cli_json_put(doc, "block_metrics", cli_metrics_json(&mb));
		if (bad) {
			json_object_put(doc);
			return cli_fail("out of memory");
		}
		rc = cli_write_json(doc, NULL);
		json_object_put(doc);
		return rc;
	}
	printf("%s: %ld tasks on %ld nodes\n", j->hostfile, (long)ntasks,
	       (long)tp_alloc_nnodes(j->alloc));
	struct cli_row cols[2] = { { "hostfile", &m }, { "block", &mb } };
	cli_print_metrics_columns(stdout, cols, 2);
	return cli_finish_stdout();
}

int cli_cmd_eval(int argc, char **argv)
{
	struct job j;
	memset(&j, 0, sizeof j);
	j.cmd = "eval";
	bool help = false;
	int rc = parse_eval_args(&j, argc, argv, &help);
	if (!rc && help) {
		cli_help("eval", stdout);
		return cli_finish_stdout();
	}
	if (!rc)
		rc = eval_run(&j);
	job_free(&j);
	return rc;
}
