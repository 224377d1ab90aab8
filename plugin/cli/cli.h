/* topoplace command line — declarations shared by plugin/cli*.c.
 *
 *   cli.c       main, command dispatch, help texts, check-config, helpers
 *   cli_run.c   the map and eval commands
 *   cli_out.c   JSON documents, text tables, atomic file output
 *   cli_node.c  per-task CPU sets and GPUs inside the nodes (map)
 *
 * Exit statuses: 0 success, 1 internal or runtime failure (out of memory,
 * output cannot be written), 2 malformed input or usage error.  Every error
 * is one line on stderr: "topoplace: <file-or-argument>: <problem>".
 */
#ifndef TOPOPLACE_CLI_H
#define TOPOPLACE_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <topoplace/topoplace.h>

#include <json-c/json.h>

enum { CLI_EXIT_OK = 0, CLI_EXIT_FAIL = 1, CLI_EXIT_USAGE = 2 };

/* ---- cli.c: diagnostics and argument parsing ---- */

/* Print "topoplace: <message>\n" to stderr and return CLI_EXIT_USAGE. */
int cli_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print "topoplace: <message>\n" to stderr and return CLI_EXIT_FAIL. */
int cli_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print a core error as one line, prefixed by ctx ("--stencil", a file name)
 * unless the message already names it.  Returns the exit status for the code:
 * 1 for TP_ENOMEM, 2 for everything else (bad input). */
int cli_report(const char *ctx, const tp_error *err);
/* Same, but the error happened while producing output: always status 1
 * except TP_EINVAL/TP_ENOTSUP (a problem with the input), which are 2. */
int cli_report_runtime(const char *ctx, const tp_error *err);
/* Print a note (not an error) to stderr: "topoplace: note: ...". */
void cli_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Strict positive/non-negative integer parsing of an option value: decimal
 * digits only, no sign, no trailing garbage, no overflow, <= max.  Prints the
 * one-line error itself and returns CLI_EXIT_USAGE on failure, 0 on success. */
int cli_parse_count(const char *opt, const char *s, int64_t min, int64_t max,
		    int64_t *out);
int cli_parse_u64(const char *opt, const char *s, uint64_t *out);
/* Non-negative finite number of milliseconds. */
int cli_parse_ms(const char *opt, const char *s, double *out);

/* Report getopt_long's '?' or ':' as one line; returns CLI_EXIT_USAGE. */
int cli_getopt_error(const char *cmd, int c, int optopt_val, char **argv,
		     int optind_val);

/* Flush stdout; on a write error print it and return CLI_EXIT_FAIL, else 0. */
int cli_finish_stdout(void);

/* Print the help of a command (NULL: general help) to f. Returns false when
 * the command is unknown. */
bool cli_help(const char *cmd, FILE *f);

/* ---- cli_run.c ---- */

int cli_cmd_map(int argc, char **argv);
int cli_cmd_eval(int argc, char **argv);

/* ---- cli_node.c ---- */

struct cli_node_opts {
	const char *topology;      /* --node-topology (hwloc XML), NULL: off */
	const char *links;         /* --gpu-links (gres.conf / nvidia-smi) */
	const char *gpu_matrix;    /* --gpu-matrix */
	const char *select;        /* --gpu-select */
	int64_t gpus_per_task;     /* --gpus-per-task, 0 when not given */
};

struct cli_node_result {
	int64_t ntasks;
	int gpt;                   /* GPUs per task */
	bool want_gpus;            /* GPUs chosen (matrix or --gpus-per-task) */
	enum tp_gpusel_algo algo;
	char **cpus;               /* per task CPU list ("0-3,16-19") */
	int *gpus;                 /* ntasks x gpt GPU indices */
	double mims_bytes;         /* largest MIMS over the nodes */
	tp_gpusel_cost cost, local_rank, closest;  /* max congestion: max over
						      nodes; weighted: sum */
	int used_magc;             /* nodes where the greedy's result was kept */
};

/* The node model of every allocated node. */
struct cli_node_models {
	int n;
	tp_node **models;          /* distinct models, owned */
	const tp_node **of;        /* per allocation index; NULL: no models */
};

/* The models: --node-topology (+ --gpu-links) for every node, else the
 * NodeTopology= / GpuLinks= of each node in the config (each file loaded
 * once).  When some node has none: an error if want (node-level output
 * asked for), else no models (mm->of NULL).  Returns 0 or an exit status,
 * having printed the error. */
int cli_node_models_load(const struct cli_node_opts *o, const tp_conf *conf,
			 const char *config, const tp_alloc *a, bool want,
			 struct cli_node_models *mm);
void cli_node_models_free(struct cli_node_models *mm);
/* --gpu-matrix with ntasks rows (NULL when not given). */
int cli_node_load_matrix(const struct cli_node_opts *o, int64_t ntasks,
			 tp_graph **gm);
/* Phases 2 and 3 on every node of the allocation.  cpu_g: CPU graph; gm:
 * GPU matrix or NULL. */
int cli_node_place(const struct cli_node_opts *o,
		   const struct cli_node_models *mm, const tp_graph *cpu_g,
		   const tp_graph *gm, const tp_alloc *a, const int32_t *map,
		   int64_t ntasks, struct cli_node_result *r);
void cli_node_result_free(struct cli_node_result *r);
/* Adds "node_topology", "cpus", "gpus", "gpu_selection", ... to doc. */
int cli_node_json(json_object *doc, const struct cli_node_opts *o,
		  const struct cli_node_result *r);
/* The node-info command. */
int cli_cmd_node_info(int argc, char **argv);
/* "rank 0=node cpus=0-3 gpus=0" lines. */
int cli_node_rankfile(FILE *f, const tp_alloc *a, const int32_t *map,
		      const struct cli_node_result *r);

/* ---- cli_out.c ---- */

/* JSON object with every field of m (non-finite doubles become null). */
json_object *cli_metrics_json(const tp_metrics *m);
/* JSON object with the fields of a geometric search report. */
json_object *cli_report_json(const tp_geom_report *r);
/* A double with the shortest text that reads back exactly (null if not
 * finite). */
/* Adds val to obj under key; on failure (val NULL included) frees val and
 * returns -1. */
int cli_json_put(json_object *obj, const char *key, json_object *val);
json_object *cli_json_double(double d);
/* A time in milliseconds, rounded to microseconds. */
json_object *cli_json_ms(double ms);

/* Serialise doc (pretty, trailing newline) to path atomically (temporary file
 * in the same directory, then rename), or to stdout when path is NULL.
 * Returns 0 or an exit status, having printed the error. */
int cli_write_json(json_object *doc, const char *path);

/* Write len bytes of text to path atomically (as cli_write_json). */
int cli_write_text(const char *buf, size_t len, const char *path);

/* One row of a comparison table. */
struct cli_row {
	const char *label;
	const tp_metrics *m;   /* NULL: "n/a" */
};
/* A table of the main metrics, one row per entry, to f. */
void cli_print_compare(FILE *f, const struct cli_row *rows, int nrows);
/* All metrics, one per line, one column per entry (eval's text format). */
void cli_print_metrics_columns(FILE *f, const struct cli_row *cols, int ncols);

#endif
