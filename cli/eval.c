/* topoplace command — eval: score an existing hostfile (one node per rank)
 * against Slurm's block order with the same tasks per node. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* What eval builds, freed on every path. */
struct eval {
	const char *config, *nodes, *tpn, *stencil, *graph, *hostfile, *format;
	const char *parallel;      /* a training job's layout */
	const char *slurm_conf, *partition;
	unsigned slurm_version;
	bool ranked;               /* Slurm's order is a topology's ranks */
	char *nodes_buf;
	tp_conf *conf;
	tp_alloc *alloc;
	tp_graph *g;
	tp_graph *gb;              /* --parallel: the step under block (its
				      rings follow each order); NULL: g */
	int32_t *map, *block;
};

static void eval_free(struct eval *e)
{
	free(e->nodes_buf);
	free(e->map);
	free(e->block);
	tp_graph_destroy(e->g);
	tp_graph_destroy(e->gb);
	tp_alloc_destroy(e->alloc);
	tp_conf_destroy(e->conf);
}

static const struct option eval_opts[] = {
	{ "config", required_argument, NULL, 'c' },
	{ "nodes", required_argument, NULL, 'w' },
	{ "hostfile", required_argument, NULL, 'H' },
	{ "tasks-per-node", required_argument, NULL, 'N' },
	{ "stencil", required_argument, NULL, 's' },
	{ "graph", required_argument, NULL, 'g' },
	{ "parallel", required_argument, NULL, 'L' },
	{ "format", required_argument, NULL, 'f' },
	{ "slurm-conf", required_argument, NULL, 'C' },
	{ "slurm-version", required_argument, NULL, 'V' },
	{ "partition", required_argument, NULL, 'P' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int parse_eval_args(struct eval *e, int argc, char **argv, bool *help)
{
	int c, rc;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":c:w:H:N:s:g:f:h", eval_opts,
				NULL)) != -1) {
		rc = 0;
		switch (c) {
		case 'c': e->config = optarg; break;
		case 'w': e->nodes = optarg; break;
		case 'H': e->hostfile = optarg; break;
		case 'N': rc = cli_parse_slots("--tasks-per-node", optarg, &e->tpn); break;
		case 's': rc = cli_set_pattern(&e->stencil, &e->graph, optarg, "--stencil"); break;
		case 'g': rc = cli_set_pattern(&e->graph, &e->stencil, optarg, "--graph"); break;
		case 'L':
			if (!*optarg)
				return cli_usage_error("--parallel: empty value");
			e->parallel = optarg;
			break;
		case 'f': e->format = optarg; break;
		case 'C':
			if (!*optarg)
				return cli_usage_error("--slurm-conf: empty file name");
			e->slurm_conf = optarg;
			break;
		case 'V':
			rc = cli_parse_slurm_version("--slurm-version", optarg,
						     &e->slurm_version);
			break;
		case 'P':
			if (!*optarg)
				return cli_usage_error("--partition: empty name");
			e->partition = optarg;
			break;
		case 'h': *help = true; return 0;
		default:
			return cli_getopt_error("eval", c, optopt, argv, optind);
		}
		if (rc)
			return rc;
	}
	rc = cli_check_common("eval", e->config, e->nodes, argc, argv);
	if (rc)
		return rc;
	if (!e->hostfile)
		return cli_usage_error("eval: missing --hostfile FILE");
	if (!e->slurm_conf)
		e->slurm_conf = cli_slurm_conf_env();
	if (e->slurm_version && !e->slurm_conf)
		return cli_usage_error("eval: --slurm-version needs --slurm-conf "
				       "(Slurm's order depends on both)");
	if (!*e->hostfile)
		return cli_usage_error("--hostfile: empty file name");
	if (e->parallel && (e->stencil || e->graph))
		return cli_usage_error("--parallel, --stencil and --graph are "
				       "mutually exclusive");
	if (!e->stencil && !e->graph && !e->parallel)
		return cli_usage_error("eval: missing --stencil SPEC, --graph FILE "
				       "or --parallel SPEC");
	if (e->format && strcmp(e->format, "text") && strcmp(e->format, "json"))
		return cli_usage_error("--format: '%s': unknown format (text or "
				       "json)", e->format);
	return 0;
}

static int load(struct eval *e)
{
	tp_error err;
	tp_error_clear(&err);
	int rc = cli_nodes_arg(e->nodes, &e->nodes_buf);
	if (rc)
		return rc;
	if (e->nodes_buf)
		e->nodes = e->nodes_buf;
	if (tp_conf_load_slurm(e->config, &(tp_conf_slurm){
			.slurm_conf = e->slurm_conf, .partition = e->partition,
			.slurm_version = e->slurm_version }, &e->conf, &err) < 0)
		return cli_report(e->config, &err);
	if (tp_alloc_from_hostlist(tp_conf_machine(e->conf), e->nodes, 1,
				   "--nodes", &e->alloc, &err) < 0)
		return cli_report("--nodes", &err);
	if (e->tpn && cli_alloc_slots(e->alloc, e->tpn, &err) < 0)
		return cli_report("--tasks-per-node", &err);
	/* the baseline is the order Slurm itself would take */
	char how[TP_ERROR_MSG_MAX];
	if (tp_alloc_take_slurm_order(e->alloc, e->slurm_conf, e->partition,
				      e->slurm_version,
				      how))
		return cli_fail("out of memory");
	if (how[0])
		cli_note("Slurm's order: %s", how);
	e->ranked = strstr(how, "lays tasks out") != NULL;
	return 0;
}

static int make_graph(struct eval *e, int32_t ntasks)
{
	tp_error err;
	tp_error_clear(&err);
	if (e->parallel) {
		/* the hostfile's step and block's: NCCL's rings follow each */
		if (tp_graph_from_parallel(&e->g, e->parallel, ntasks, e->map,
					   &err) < 0 ||
		    tp_graph_from_parallel(&e->gb, e->parallel, ntasks, e->block,
					   &err) < 0)
			return cli_report("--parallel", &err);
	} else if (e->stencil) {
		if (tp_graph_from_stencil(&e->g, e->stencil, ntasks, &err) < 0)
			return cli_report("--stencil", &err);
	} else {
		if (tp_graph_from_json_file(&e->g, e->graph, ntasks, &err) < 0)
			return cli_report(e->graph, &err);
		int64_t dups = tp_graph_merged_duplicates(e->g);
		if (dups > 0)
			cli_note("%s: %lld duplicate edge%s summed", e->graph,
				 (long long)dups, dups == 1 ? "" : "s");
	}
	return 0;
}

static int score(const struct eval *e, const tp_graph *g, const int32_t *map,
		 const char *what, tp_metrics *m)
{
	tp_error err;
	tp_error_clear(&err);
	if (tp_mapping_validate(g, e->alloc, map, &err) < 0 ||
	    tp_metrics_compute(g, e->alloc, map, true, m, &err) < 0)
		return cli_report_runtime(what, &err);
	return 0;
}

static int eval_json(const struct eval *e, int32_t ntasks, const tp_metrics *m,
		     const tp_metrics *mb, const tp_prediction *p,
		     const tp_prediction *pb, const double *ph, const double *phb)
{
	json_object *doc = json_object_new_object();
	if (!doc)
		return cli_fail("out of memory");
	int bad = 0;
	bad |= cli_json_put(doc, "version", json_object_new_string(tp_version()));
	bad |= cli_json_put(doc, "hostfile", json_object_new_string(e->hostfile));
	bad |= cli_json_put(doc, "ntasks", json_object_new_int64(ntasks));
	bad |= cli_json_put(doc, "nnodes",
			    json_object_new_int64(tp_alloc_nnodes(e->alloc)));
	bad |= cli_json_put(doc, "congestion_unit", json_object_new_string(
			    tp_machine_has_level_bandwidth(tp_alloc_machine(e->alloc))
			    ? "bytes/bandwidth" : "bytes"));
	bad |= cli_json_put(doc, "metrics", cli_metrics_json(m));
	bad |= cli_json_put(doc, "block_metrics", cli_metrics_json(mb));
	bad |= cli_json_put(doc, "predicted", cli_predicted_json(p, pb, ph, phb));
	if (bad) {
		json_object_put(doc);
		return cli_fail("out of memory");
	}
	int rc = cli_write_json(doc, NULL);
	json_object_put(doc);
	return rc;
}

static int eval_run(struct eval *e)
{
	tp_error err;
	tp_error_clear(&err);
	int rc = load(e);
	if (rc)
		return rc;
	/* Without --tasks-per-node the slots are what the hostfile uses; with
	 * it, the hostfile may not exceed them. */
	int32_t ntasks = 0;
	if (tp_hostfile_read(e->hostfile, e->alloc, e->tpn == NULL, &e->map,
			     &ntasks, &err) < 0)
		return cli_report(e->hostfile, &err);
	if (ntasks <= 0)
		return cli_usage_error("%s: no node names", e->hostfile);
	/* the baseline here is block's (more tasks than nodes); say where
	 * srun would have taken cyclic, which ignores the ranks */
	if (e->ranked && ntasks <= tp_alloc_nnodes(e->alloc))
		cli_note("Slurm's order: not modelled for %ld tasks on %ld nodes "
			 "(srun's default is then cyclic in the hostlist's order); "
			 "the guarantee is against block in the topology's order",
			 (long)ntasks, (long)tp_alloc_nnodes(e->alloc));
	e->block = calloc((size_t)ntasks + 1, sizeof(int32_t));
	if (!e->block)
		return cli_fail("out of memory");
	if (tp_map_block(e->alloc, ntasks, e->block, &err) < 0)
		return cli_report_runtime("block", &err);
	if ((rc = make_graph(e, ntasks)))
		return rc;
	const tp_graph *gb = e->gb ? e->gb : e->g;
	tp_metrics m, mb;
	if ((rc = score(e, e->g, e->map, e->hostfile, &m)))
		return rc;
	if ((rc = score(e, gb, e->block, "block", &mb)))
		return rc;
	tp_prediction p, pb;
	double ph[TP_STEP_PHASES], phb[TP_STEP_PHASES];
	if (e->parallel) {
		/* a step: its phases one after the other */
		if (tp_predict_parallel_phases(e->parallel, e->alloc, e->map,
					       ntasks, &p, ph, &err) < 0 ||
		    tp_predict_parallel_phases(e->parallel, e->alloc, e->block,
					       ntasks, &pb, phb, &err) < 0)
			return cli_report_runtime("predict", &err);
	} else if (tp_predict_exchange(e->g, e->alloc, e->map, &p, &err) < 0 ||
	    tp_predict_exchange(gb, e->alloc, e->block, &pb, &err) < 0)
		return cli_report_runtime("predict", &err);
	if (e->format && !strcmp(e->format, "json"))
		return eval_json(e, ntasks, &m, &mb, &p, &pb,
				 e->parallel ? ph : NULL, e->parallel ? phb : NULL);
	printf("%s: %ld tasks on %ld nodes\n", e->hostfile, (long)ntasks,
	       (long)tp_alloc_nnodes(e->alloc));
	struct cli_row cols[2] = { { "hostfile", &m }, { "block", &mb } };
	cli_print_metrics_columns(stdout, cols, 2);
	char line[160];
	tp_prediction_line(line, sizeof line, &pb, &p);
	printf("%s (block -> hostfile)\n", line);
	if (e->parallel) {
		char phl[320];
		tp_step_phases_line(phl, sizeof phl, phb, ph);
		printf("%s\n", phl);
	}
	return cli_finish_stdout();
}

int cli_cmd_eval(int argc, char **argv)
{
	struct eval e;
	memset(&e, 0, sizeof e);
	bool help = false;
	int rc = parse_eval_args(&e, argc, argv, &help);
	if (!rc && help) {
		cli_help("eval", stdout);
		return cli_finish_stdout();
	}
	if (!rc)
		rc = eval_run(&e);
	eval_free(&e);
	return rc;
}
