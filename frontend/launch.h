/* topoplace front ends — what the SPANK plugin and the command share.
 *
 *   hints.c   the job's --topo-* options, from callbacks and the environment
 *   lists.c   Slurm's list formats (cores, GPUs, tasks per node), log lines
 *
 * Both link these through the front-end archive (the Makefile's FRONT_SRC);
 * `topoplace bind` reads the options and Slurm's lists as the plugin does.
 * Pure helpers: no Slurm header, no SPANK call, unit-tested on their own.
 */
#ifndef TOPOPLACE_LAUNCH_H
#define TOPOPLACE_LAUNCH_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TPK_LINE_MAX 1024
#define TPK_MAX_GPUS 64      /* GPUs per node */

/* ---- hints.c: the job's --topo-* options ---- */

struct tpk_hints {
	char *stencil;     /* --topo-stencil */
	char *graph;       /* --topo-graph */
	char *gpu_matrix;  /* --topo-gpu-matrix */
	char *policy;      /* --topo-policy */
	char *cpu_bind;    /* --topo-cpu-bind (yes or no) */
	char *parallel;    /* --topo-parallel: a training job's layout, read
			      by the core (tp_job_create_parallel) */
	bool report;       /* --topo-report */
	char *report_as;   /* --topo-report=VALUE ("svg": also a picture),
			      NULL for the plain flag */
	bool seen;         /* any of them given */
};

enum tpk_opt { TPK_OPT_STENCIL = 1, TPK_OPT_GRAPH, TPK_OPT_GPU_MATRIX,
	       TPK_OPT_POLICY, TPK_OPT_REPORT, TPK_OPT_CPU_BIND,
	       TPK_OPT_PARALLEL };

void tpk_hints_set(struct tpk_hints *h, int val, const char *arg);
void tpk_hints_free(struct tpk_hints *h);
/* Option name without the leading "--" ("topo-stencil"), NULL if unknown. */
const char *tpk_opt_name(int val);
/* Options that sbatch and salloc pass to srun through the environment
 * (SLURM_SPANK__SLURM_SPANK_OPTION_topoplace_*), read with get. */
void tpk_hints_from_env(struct tpk_hints *h,
			const char *(*get)(const char *name));
/* Copy the options set in src over dst (the command line over the
 * environment). */
void tpk_hints_overlay(struct tpk_hints *dst, const struct tpk_hints *src);
bool tpk_hints_policy_none(const struct tpk_hints *h);
/* --topo-report=svg: the placement's picture next to the job's output. */
bool tpk_hints_report_svg(const struct tpk_hints *h);
bool tpk_hints_pattern(const struct tpk_hints *h);

/* ---- lists.c ---- */

/* "0-3,8,10-11" into out (at most cap); the count, or -1. */
int tpk_parse_index_list(const char *list, int *out, int cap);
/* A CPU list ("0-3,8") as a cpu_set_t; false when malformed or beyond
 * CPU_SETSIZE. */
bool tpk_cpu_list_set(const char *list, cpu_set_t *set);
/* The CPUs this task's launcher may use here: the parent's affinity
 * (slurmstepd, whose cgroup bounds the step, or the MPI launcher's daemon),
 * else our own. */
bool tpk_usable_cpus(cpu_set_t *set);
/* "0,1,3" (digits and commas only: CUDA_VISIBLE_DEVICES has no ranges);
 * the count, or -1 ("NoDevFiles", UUIDs, too many). */
int tpk_parse_gpu_list(const char *list, int *out, int cap);
/* The variables that carry a step's GPUs to its tasks.  Slurm's gres/gpu
 * sets CUDA_VISIBLE_DEVICES (NVIDIA), ROCR_VISIBLE_DEVICES (AMD: with
 * AutoDetect=rsmi or Flags=amd_gpu_env it sets only this one),
 * GPU_DEVICE_ORDINAL (OpenCL), all of them to the same list by default;
 * HIP_VISIBLE_DEVICES is a site's or user's. */
enum { TPK_GPU_CUDA, TPK_GPU_ROCR, TPK_GPU_HIP, TPK_GPU_ORDINAL, TPK_NGPU_VARS };
extern const char *const tpk_gpu_vars[TPK_NGPU_VARS];
/* Which variable holds the step's GPU list (vals: the variables' values,
 * NULL when unset): the first set of CUDA_VISIBLE_DEVICES,
 * ROCR_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES; -1 when none. */
int tpk_gpu_list_source(const char *const *vals);
/* Whether variable i gets a task's list: the source, and every other one
 * that held the very same list (so that they stay consistent). */
bool tpk_gpu_var_follows(const char *const *vals, int src, int i);
/* Sum of a SLURM_TASKS_PER_NODE spec ("2(x3),1" = 7) and its node count;
 * -1 when malformed. */
int64_t tpk_tasks_per_node_sum(const char *spec, int64_t *nnodes);
/* The count a SLURM_TASKS_PER_NODE spec gives node index node ("2(x3),1",
 * node 3: 1); -1 when malformed or beyond its nodes. */
int64_t tpk_tasks_on_node(const char *spec, int64_t node);
/* SLURM_JOB_CPUS_PER_NODE ("8(x2),4") divided by the CPUs per task, as a
 * spec of how many tasks each node holds ("4(x2),2"); -1 when malformed. */
int tpk_capacity_spec(const char *cpus_per_node, int64_t cpus_per_task,
		      char *out, size_t len);
/* A strictly positive decimal count, 0 otherwise. */
int64_t tpk_parse_pos(const char *s);
/* One log line: printf into dst, then every byte that is not printable
 * ASCII (escape sequences, newlines, other control bytes, DEL, non-ASCII)
 * written as \xHH, so that input echoed into the job's stderr or the
 * slurmd log cannot forge lines or drive a terminal. */
void tpk_line(char *dst, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
