/* topoplace command — map: argv becomes one tp_job_request, the job's result
 * becomes a hostfile, a JSON document or a rankfile (map_output.c), or a
 * picture (map_svg.c).  Every decision (policy, candidates, fallbacks, the
 * inside of the nodes) is the core's, so the plugin gets the same bytes
 * from the same inputs. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

enum {
	OPT_SEED = 256, OPT_SEARCH, OPT_PARTS, OPT_THREADS, OPT_COMPARE,
	OPT_EXPLAIN, OPT_GPU_MATRIX, OPT_NODE_TOPOLOGY, OPT_GPT, OPT_GPU_LINKS,
	OPT_GPU_SELECT, OPT_NODE, OPT_SLURM_CONF, OPT_SLURM_VERSION,
	OPT_PARTITION, OPT_DISTRIBUTION, OPT_SLURM_LIVE, OPT_PARALLEL,
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
	{ "node", required_argument, NULL, OPT_NODE },
	{ "slurm-conf", required_argument, NULL, OPT_SLURM_CONF },
	{ "slurm-version", required_argument, NULL, OPT_SLURM_VERSION },
	{ "partition", required_argument, NULL, OPT_PARTITION },
	{ "slurm-live", optional_argument, NULL, OPT_SLURM_LIVE },
	{ "distribution", required_argument, NULL, OPT_DISTRIBUTION },
	{ "parallel", required_argument, NULL, OPT_PARALLEL },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int parse_search(const char *s, enum tp_geom_search *out)
{
	static const struct { const char *name; enum tp_geom_search v; } t[] = {
		{ "auto", TP_SEARCH_AUTO }, { "full", TP_SEARCH_FULL },
		{ "rotations", TP_SEARCH_ROTATIONS }, { "none", TP_SEARCH_NONE },
	};
	for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
		if (!strcmp(s, t[i].name)) {
			*out = t[i].v;
			return 0;
		}
	return cli_usage_error("--search: '%s': unknown mode (auto, full, "
			       "rotations or none)", s);
}

static int parse_format(const char *s, enum cli_format *out)
{
	if (!strcmp(s, "hostfile"))
		*out = CLI_FORMAT_HOSTFILE;
	else if (!strcmp(s, "json"))
		*out = CLI_FORMAT_JSON;
	else if (!strcmp(s, "rankfile"))
		*out = CLI_FORMAT_RANKFILE;
	else if (!strcmp(s, "mpich"))
		*out = CLI_FORMAT_MPICH;
	else if (!strcmp(s, "tasks"))
		*out = CLI_FORMAT_TASKS;
	else if (!strcmp(s, "svg"))
		*out = CLI_FORMAT_SVG;
	else
		return cli_usage_error("--format: '%s': unknown format (hostfile, "
				       "json, rankfile, mpich, tasks or svg)", s);
	return 0;
}

/* One option into the request; 0 or an exit status. */
static int map_option(struct cli_map *mp, int c, const char *arg)
{
	tp_job_request *r = &mp->req;
	int64_t v;
	int rc = 0;
	switch (c) {
	case 'c': mp->config = r->conf_path = arg; break;
	case 'w': mp->nodes = arg; break;
	case 'n':
		rc = cli_parse_count("--ntasks", arg, 1, INT32_MAX, &r->ntasks);
		break;
	case 'N': rc = cli_parse_slots("--tasks-per-node", arg, &r->slots); break;
	case 's': rc = cli_set_pattern(&r->stencil, &r->graph.name, arg, "--stencil"); break;
	case 'g': rc = cli_set_pattern(&r->graph.name, &r->stencil, arg, "--graph"); break;
	case 'p': r->policy = arg; break;
	case 'm': r->metric = arg; break;
	case 'f': rc = parse_format(arg, &mp->format); break;
	case 't': rc = cli_parse_ms("--time-budget", arg, &r->time_budget_ms); break;
	case OPT_SEED:
		rc = cli_parse_u64("--seed", arg, &r->seed);
		r->seed_set = true;
		break;
	case 'o':
		if (!*arg)
			return cli_usage_error("--output: empty file name");
		mp->output = arg;
		break;
	case OPT_SEARCH: rc = parse_search(arg, &r->search); break;
	case OPT_PARTS:
		rc = cli_parse_count("--parts-per-level", arg, 2, 64, &v);
		r->parts_per_level = (int)v;
		break;
	case OPT_THREADS:
		rc = cli_parse_count("--threads", arg, 1, 1024, &v);
		r->threads = (int)v;
		break;
	case OPT_COMPARE: mp->compare = true; break;
	case OPT_EXPLAIN: mp->explain = true; break;
	case OPT_GPU_MATRIX:
		if (!*arg)
			return cli_usage_error("--gpu-matrix: empty value");
		r->gpu_matrix.name = arg;
		break;
	case OPT_NODE_TOPOLOGY: r->node_topology = arg; mp->node_opt = "--node-topology"; break;
	case OPT_GPU_LINKS: r->gpu_links = arg; mp->node_opt = "--gpu-links"; break;
	case OPT_GPU_SELECT: {
		enum tp_gpusel_algo a;
		tp_error e;
		tp_error_clear(&e);
		if (tp_gpusel_algo_parse(arg, &a, &e) < 0)
			return cli_report("--gpu-select", &e);
		r->gpu_select = arg;
		mp->node_opt = "--gpu-select";
		break;
	}
	case OPT_SLURM_CONF:
		if (!*arg)
			return cli_usage_error("--slurm-conf: empty file name");
		r->slurm_conf = arg;
		break;
	case OPT_SLURM_VERSION:
		rc = cli_parse_slurm_version("--slurm-version", arg, &r->slurm_version);
		break;
	case OPT_PARTITION:
		if (!*arg)
			return cli_usage_error("--partition: empty name");
		r->partition = arg;
		break;
	case OPT_SLURM_LIVE:
		if (arg && !*arg)
			return cli_usage_error("--slurm-live=: empty file name");
		mp->live = arg ? arg : "";
		break;
	case OPT_DISTRIBUTION:
		/* srun's -m: checked by the core (tp_job_create_step) */
		if (!*arg)
			return cli_usage_error("--distribution: empty value");
		mp->distribution = arg;
		break;
	case OPT_PARALLEL:
		/* the layout is the core's to read (tp_job_create_parallel) */
		if (!*arg)
			return cli_usage_error("--parallel: empty value");
		mp->parallel = arg;
		break;
	case OPT_NODE:
		if (!*arg)
			return cli_usage_error("--node: empty node name");
		mp->svg_node = arg;
		break;
	case OPT_GPT:
		rc = cli_parse_count("--gpus-per-task", arg, 1, TP_NODE_MAX_GPUS, &v);
		r->gpus_per_task = (int)v;
		mp->node_opt = "--gpus-per-task";
		break;
	default:
		return -1;
	}
	return rc;
}

static int parse_map_args(struct cli_map *mp, int argc, char **argv,
			  bool *help)
{
	int c;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":c:w:n:N:s:g:p:m:f:t:o:h", map_opts,
				NULL)) != -1) {
		if (c == 'h') {
			*help = true;
			return 0;
		}
		int rc = map_option(mp, c, optarg);
		if (rc < 0)
			return cli_getopt_error("map", c, optopt, argv, optind);
		if (rc)
			return rc;
	}
	int rc = cli_check_common("map", mp->config, mp->nodes, argc, argv);
	if (rc)
		return rc;
	if (mp->parallel && (mp->req.stencil || mp->req.graph.name))
		return cli_usage_error("--parallel, --stencil and --graph are "
				       "mutually exclusive");
	if (!mp->req.ntasks && !mp->req.slots && !mp->req.stencil &&
	    !mp->req.graph.name && !mp->req.gpu_matrix.name && !mp->parallel)
		return cli_usage_error("map: missing --ntasks N, --tasks-per-node "
				       "N or a pattern (--stencil, --graph, "
				       "--gpu-matrix, --parallel) to count "
				       "the tasks");
	if (!mp->req.slurm_conf)
		mp->req.slurm_conf = cli_slurm_conf_env();
	if (mp->req.slurm_version && !mp->req.slurm_conf)
		return cli_usage_error("map: --slurm-version needs --slurm-conf "
				       "(Slurm's order depends on both)");
	if (mp->format == CLI_FORMAT_TASKS && !mp->node_opt)
		mp->node_opt = "--format tasks";
	if (mp->svg_node && mp->format != CLI_FORMAT_SVG)
		return cli_usage_error("--node %s: draws a node, needs --format svg",
				       mp->svg_node);
	return 0;
}

/* The request's remaining fields from what argv said. */
static void finish_request(struct cli_map *mp)
{
	tp_job_request *r = &mp->req;
	r->nodes = mp->nodes;
	r->what.nodes = "--nodes";
	r->what.slots = "--tasks-per-node";
	r->what.ntasks = "--ntasks";
	r->what.stencil = "--stencil";
	r->what.policy = "--policy";
	r->what.metric = "--metric";
	r->what.time_budget = "--time-budget";
	/* a network picture needs nothing inside the nodes (the plugin's
	 * --topo-report=svg asks the same), a node's picture does */
	if ((mp->format != CLI_FORMAT_HOSTFILE && mp->format != CLI_FORMAT_SVG) ||
	    mp->node_opt || mp->svg_node)
		r->flags |= TP_JOB_NODE_PLACEMENT;
	if (mp->node_opt)
		r->flags |= TP_JOB_REQUIRE_MODELS;
	/* --explain of a training job: its step phase by phase, timed with
	 * the metrics */
	if (mp->format == CLI_FORMAT_JSON || mp->format == CLI_FORMAT_SVG ||
	    mp->compare || (mp->explain && mp->parallel))
		r->flags |= TP_JOB_METRICS;
}

static void print_notes(const struct cli_map *mp, const tp_job *job)
{
	for (int i = 0; i < tp_job_nnotes(job); i++)
		cli_note("%s", tp_job_note(job, i));
	enum tp_policy asked = tp_job_requested_policy(job);
	if (tp_job_status(job) == TP_JOB_KEPT && asked != TP_POLICY_NONE &&
	    asked != TP_POLICY_BLOCK && !mp->explain)
		cli_note("Slurm's block order kept: %s", tp_job_reason(job));
}

static int map_run(struct cli_map *mp)
{
	tp_error err;
	tp_error_clear(&err);
	int rc = cli_nodes_arg(mp->nodes, &mp->nodes_buf);
	if (rc)
		return rc;
	if (mp->nodes_buf)
		mp->nodes = mp->nodes_buf;
	finish_request(mp);
	if ((rc = cli_map_live(mp)))
		return rc;
	if ((mp->parallel ? tp_job_create_parallel(&mp->req, mp->distribution,
						   mp->parallel, "--parallel",
						   &mp->job, &err)
	     : tp_job_create_step(&mp->req, mp->distribution, &mp->job, &err)) < 0) {
		/* what the live view was refused for may be why a node has no
		 * place: said before the error */
		for (int i = 0; mp->live_conf && i < tp_conf_nwarnings(mp->live_conf); i++)
			cli_note("warning: %s", tp_conf_warning(mp->live_conf, i));
		return cli_report(NULL, &err);
	}
	if (mp->svg_node && (rc = cli_map_svg_check(mp)))
		return rc;
	if (tp_job_run(mp->job, &err) < 0) {
		/* a node the configuration gives no model (not a model file
		 * that is missing, which names itself) */
		if (err.code == TP_ENOMODEL && mp->node_opt)
			return cli_usage_error("%s needs --node-topology FILE (the "
					       "nodes' hwloc XML) or NodeTopology= "
					       "in %s: %s", mp->node_opt, mp->config,
					       err.msg);
		return cli_report(NULL, &err);
	}
	print_notes(mp, mp->job);
	if (mp->explain)
		tp_job_explain(mp->job, stderr, "explain: ");
	if (mp->compare && (rc = cli_map_compare(mp->job, stderr)))
		return rc;
	switch (mp->format) {
	case CLI_FORMAT_JSON:
		return cli_map_json(mp);
	case CLI_FORMAT_RANKFILE:
	case CLI_FORMAT_MPICH:
	case CLI_FORMAT_TASKS:
		return cli_map_launcher_format(mp);
	case CLI_FORMAT_SVG:
		return cli_map_svg(mp);
	default:
		return cli_map_hostfile(mp);
	}
}

int cli_cmd_map(int argc, char **argv)
{
	struct cli_map mp;
	memset(&mp, 0, sizeof mp);
	tp_job_request_init(&mp.req);
	bool help = false;
	int rc = parse_map_args(&mp, argc, argv, &help);
	if (!rc && help) {
		cli_help("map", stdout);
		return cli_finish_stdout();
	}
	if (!rc)
		rc = map_run(&mp);
	tp_job_destroy(mp.job);
	tp_conf_destroy(mp.live_conf);
	free(mp.nodes_buf);
	return rc;
}
