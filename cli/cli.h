/* topoplace command line — declarations shared by cli/.
 *
 *   main.c          main, command dispatch
 *   help.c          help texts (main.c and every command print them)
 *   diag.c          one-line diagnostics, option value parsing
 *   map.c           map: argv -> tp_job_request
 *   map_output.c    map: tp_job -> hostfile, JSON, --compare
 *   formats.c       map: tp_job -> launcher formats (Open MPI rankfile,
 *                   MPICH host file, per-task list)
 *   bind.c          bind: an MPI rank's CPUs and GPUs, then the program
 *   eval.c          eval: score a hostfile against Slurm's block order
 *   check_config.c  check-config
 *   node_info.c     node-info
 *   map_svg.c       map: --format svg (the drawing: frontend/)
 *   output.c        JSON values, text tables, atomic file output
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

/* ---- diag.c: diagnostics and argument parsing ---- */

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
 * the command is unknown (help.c). */
bool cli_help(const char *cmd, FILE *f);

/* Options map and eval share (diag.c). */
/* --tasks-per-node: a count 1..2^20 (checked) or a Slurm spec (checked by
 * the core); *out = s. */
int cli_parse_slots(const char *opt, const char *s, const char **out);
/* --slurm-version: "26.05", "26.05.3" (or "slurm 26.05.3") as
 * TP_SLURM_VERSION. */
int cli_parse_slurm_version(const char *opt, const char *s, unsigned *out);
/* $SLURM_CONF when set and not empty (Slurm's own commands read it), else
 * NULL: the slurm.conf a config of Slurm's topology reads by default. */
const char *cli_slurm_conf_env(void);
/* The same text onto an allocation's slots. */
int cli_alloc_slots(tp_alloc *a, const char *slots, tp_error *err);
/* --stencil / --graph: one of them, non-empty. */
int cli_set_pattern(const char **slot, const char **other, const char *val,
		    const char *name);
/* No stray arguments, and a config and a non-empty node list. */
int cli_check_common(const char *cmd, const char *config, const char *nodes,
		     int argc, char **argv);
/* --nodes @FILE: *buf_out gets the file's hostlist (NULL when nodes is a
 * hostlist itself). */
int cli_nodes_arg(const char *nodes, char **buf_out);

/* ---- the commands ---- */

int cli_cmd_map(int argc, char **argv);
int cli_cmd_eval(int argc, char **argv);
int cli_cmd_check_config(int argc, char **argv);
int cli_cmd_node_info(int argc, char **argv);
int cli_cmd_bind(int argc, char **argv);

/* ---- map (map.c: argv -> request; map_output.c: result -> output) ---- */

enum cli_format { CLI_FORMAT_HOSTFILE = 0, CLI_FORMAT_JSON, CLI_FORMAT_RANKFILE,
		  CLI_FORMAT_MPICH, CLI_FORMAT_TASKS, CLI_FORMAT_SVG };

struct cli_map {
	tp_job_request req;
	const char *config, *nodes, *output;
	const char *node_opt;      /* the option that needs node models */
	const char *svg_node;      /* --node: picture of this node's inside */
	const char *distribution;  /* --distribution: srun's -m */
	const char *parallel;      /* --parallel: a training job's layout */
	enum cli_format format;
	bool compare, explain;
	char *nodes_buf;           /* --nodes @FILE */
	const char *live;          /* --slurm-live[=FILE]: "" runs scontrol */
	tp_conf *live_conf;        /* the config loaded with it */
	tp_job *job;
};
/* --slurm-live: the config with slurmctld's live view into mp->req.conf
 * (slurm_live.c); 0 or an exit status. */
int cli_map_live(struct cli_map *mp);

int cli_map_hostfile(const struct cli_map *mp);
int cli_map_json(const struct cli_map *mp);
/* rankfile, mpich and tasks (formats.c) */
int cli_map_launcher_format(const struct cli_map *mp);
/* --format svg: the picture (map_svg.c; frontend/ draws it). */
int cli_map_svg(const struct cli_map *mp);
/* --node NAME, once the job is created: a node of the job with a model. */
int cli_map_svg_check(const struct cli_map *mp);
/* --compare: block, zorder and the result, on f. */
int cli_map_compare(const tp_job *job, FILE *f);

/* ---- output.c ---- */

/* JSON object with every field of m (non-finite doubles become null). */
json_object *cli_metrics_json(const tp_metrics *m);
/* {"exchange_us", "block_exchange_us", "ratio", ...}: p against Slurm's
 * order pb. */
/* phases, phases_b: a training step's (TP_STEP_PHASES each), or NULL:
 * then no "phases" member. */
json_object *cli_predicted_json(const tp_prediction *p, const tp_prediction *pb,
				const double *phases, const double *phases_b);
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
/* How every document is written: indented, a space after ':'. */
#define CLI_JSON_FLAGS (JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED | \
			JSON_C_TO_STRING_NOSLASHESCAPE)

/* Write len bytes of text to path atomically (as cli_write_json). */
int cli_write_text(const char *buf, size_t len, const char *path);
/* Write to path atomically what emit writes to the descriptor it is given
 * (a temporary file renamed over path; a device or FIFO in place; path
 * NULL: standard output).  emit returns 0, or -1 with errno set. */
int cli_write_with(const char *path, int (*emit)(int fd, void *arg), void *arg);

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
