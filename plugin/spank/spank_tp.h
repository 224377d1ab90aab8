/* topoplace SPANK plugin — declarations shared by plugin/spank_*.c.
 *
 *   spank_topoplace.c  the SPANK hooks: options, contexts, environment
 *   spank_place.c      one placement: config, allocation, pattern, policy,
 *                      mapping, private hostfile, report line (no SPANK calls)
 *   spank_util.c       srun command-line scan, reading user files with the
 *                      user's privileges, private directories, GPU split
 *   spank_gpu.c        --topo-gpu-matrix: MAGC GPU selection for one node's
 *                      tasks on its topoplace.conf model (no SPANK calls)
 *
 * Nothing here is public API; the symbols carry the tpk_ prefix and live in
 * topoplace.so only.
 */
#ifndef TOPOPLACE_SPANK_TP_H
#define TOPOPLACE_SPANK_TP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <topoplace/node.h>

#define TPK_PATH_MAX 4096
#define TPK_LINE_MAX 1024
#define TPK_DEFAULT_CONF "/etc/slurm/topoplace.conf"
#define TPK_DEFAULT_MAX_FILE_BYTES (16u << 20)   /* 16 MiB */
#define TPK_MAX_FILE_BYTES_LIMIT (1u << 30)      /* 1 GiB */

/* Site settings: the arguments of the plugstack.conf line. */
struct tpk_site {
	char conf_path[TPK_PATH_MAX];  /* conf= */
	char policy[32];               /* policy=, "" when not given */
	double time_budget_ms;         /* time_budget_ms=, < 0 when not given */
	size_t max_file_bytes;         /* max_file_bytes= */
	bool cpu_bind;                 /* cpu_bind=yes|no (default yes) */
};

void tpk_site_defaults(struct tpk_site *s);
/* Apply one "key=value" plugstack argument.  Returns 0, or -1 with a one-line
 * reason in err (the caller logs it and goes on). */
int tpk_site_arg(struct tpk_site *s, const char *arg, char *err, size_t errlen);

/* The job's --topo-* options. Strings are owned (malloc'ed). */
struct tpk_hints {
	char *stencil;     /* --topo-stencil */
	char *graph;       /* --topo-graph */
	char *gpu_matrix;  /* --topo-gpu-matrix */
	char *policy;      /* --topo-policy */
	char *cpu_bind;    /* --topo-cpu-bind (yes or no) */
	bool report;       /* --topo-report */
	bool seen;         /* any of them given */
};

enum tpk_opt { TPK_OPT_STENCIL = 1, TPK_OPT_GRAPH, TPK_OPT_GPU_MATRIX,
	       TPK_OPT_POLICY, TPK_OPT_REPORT, TPK_OPT_CPU_BIND };

/* Set one option (val: enum tpk_opt) from its argument; NULL for a flag. */
void tpk_hints_set(struct tpk_hints *h, int val, const char *arg);
void tpk_hints_free(struct tpk_hints *h);
/* Option name without the leading "--" ("topo-stencil"), NULL if unknown. */
const char *tpk_opt_name(int val);
/* true when the policy (a name) needs no communication pattern and differs
 * from Slurm's own order: cyclic, zorder, random. */
bool tpk_policy_pattern_free(const char *name);

/* Whose privileges open user files and create the private directory.  With
 * drop, the effective ids are switched to uid/gid/groups around each access
 * and switched back after (the caller runs as root); without, the caller
 * already runs as the user. */
struct tpk_cred {
	bool drop;
	uid_t uid;
	gid_t gid;
	const gid_t *groups;
	int ngroups;
};

/* What to place. */
struct tpk_step {
	const char *nodelist;        /* Slurm hostlist of the allocation */
	const char *tasks_per_node;  /* SLURM_TASKS_PER_NODE spec, or NULL */
	int64_t ntasks;              /* tasks of the step */
	int ntasks_per_node;         /* > 0: this many on every node */
	const char *basedir;         /* base of relative --topo-graph paths */
	const char *tmpdir;          /* parent of the private directory */
	const char *tag;             /* "job12" names the private directory */
	struct tpk_cred cred;
};

enum tpk_status {
	TPK_UNTOUCHED = 0,  /* Slurm's placement stays, nothing to say */
	TPK_PLACED,         /* hostfile written */
	TPK_FAILED,         /* error: Slurm's placement stays, msg says why */
};

struct tpk_result {
	enum tpk_status status;
	char msg[TPK_LINE_MAX];      /* line for the job's stderr, "" if none */
	char note[TPK_LINE_MAX];     /* an extra notice ("" if none) */
	bool quiet;                  /* the job asked for nothing (site default
					only): log msg, do not show it */
	char dir[TPK_PATH_MAX];      /* private directory ("" when none) */
	char hostfile[TPK_PATH_MAX]; /* SLURM_HOSTFILE ("" when none) */
	char policy[32];             /* policy used */
	double elapsed_ms;
};

/* Compute the placement of one step and, when there is one, write the
 * hostfile into a new private directory.  Never fails: problems come back as
 * TPK_FAILED with one line in msg. */
void tpk_place(const struct tpk_site *site, const struct tpk_hints *hints,
	       const struct tpk_step *step, struct tpk_result *res);

/* A 64-bit fingerprint (hex, 16 chars + NUL) of everything tpk_place reads
 * except file contents: lets an srun see that the batch step already did the
 * same placement. */
void tpk_key(const struct tpk_site *site, const struct tpk_hints *hints,
	     const struct tpk_step *step, char out[17]);

/* ---- spank_util.c ---- */

/* What an srun command line asks for, as far as placement cares. */
struct tpk_srun_args {
	int64_t ntasks;          /* -n, 0 when not given */
	int64_t nodes_min, nodes_max;  /* -N, 0 when not given */
	int ntasks_per_node;     /* --ntasks-per-node, 0 when not given */
	char layout[32];         /* first user layout option seen ("-w"), or "" */
	bool het;                /* heterogeneous step (":" or --het-group) */
	bool info_only;          /* --help, --usage, --version */
	struct tpk_hints hints;  /* --topo-* options on the command line */
};

/* Scan srun's argv (argv[0] is the program) up to the command. */
void tpk_scan_srun_args(int argc, char **argv, struct tpk_srun_args *out);
void tpk_srun_args_free(struct tpk_srun_args *a);
/* Read /proc/self/cmdline into a NULL-terminated argv (one allocation;
 * free(*argv)).  Returns argc, or -1. */
int tpk_read_cmdline(char ***argv);

/* Read a user's file: with the user's privileges, a regular file, at most max
 * bytes.  Relative paths are taken from basedir (NULL: the current
 * directory).  *buf gets a NUL-terminated malloc'ed copy.  Returns 0 or -1
 * with one line in err. */
int tpk_read_user_file(const char *path, const char *basedir, size_t max,
		       const struct tpk_cred *cred, char **buf, size_t *len,
		       char *err, size_t errlen);

/* Switch the effective ids to the user's (cred->drop) and back. */
int tpk_become_user(const struct tpk_cred *cred, char *err, size_t errlen);
void tpk_become_root(const struct tpk_cred *cred);

/* Create parent/topoplace.TAG.XXXXXX (mode 0700) as the user. */
int tpk_make_private_dir(const char *parent, const char *tag,
			 const struct tpk_cred *cred, char *out, size_t outlen,
			 char *err, size_t errlen);
/* Remove a private directory made above and the files in it, as the user.
 * Only plain files directly inside it are removed; nothing is followed. */
void tpk_remove_private_dir(const char *dir, const struct tpk_cred *cred);

/* Split a GPU list ("0,1,2,3", Slurm's order, which is PCI bus order) among
 * the ntasks tasks of a node: task local_id gets a contiguous share (or, with
 * fewer GPUs than tasks, neighbouring tasks share one GPU).  Writes the
 * task's list to out.  Returns 0, or -1 when the list cannot be parsed or is
 * empty (then out is untouched). */
int tpk_gpu_split(const char *list, int local_id, int ntasks, char *out,
		  size_t outlen);

/* Sum of a SLURM_TASKS_PER_NODE spec ("2(x3),1" = 7) and its node count;
 * -1 when malformed. */
int64_t tpk_tasks_per_node_sum(const char *spec, int64_t *nnodes);

/* ---- spank_node.c: inside the node (CPUs and GPUs of the tasks) ---- */

#define TPK_MAX_GPUS 64     /* GPUs per node (TP_NODE_MAX_GPUS) */
#define TPK_MAX_CORES 8192  /* cores of a step on one node */

/* The node model, loaded once per step by slurmstepd (user_init) so that
 * the tasks, which inherit it at fork, need not load it each. */
struct tpk_node_cache {
	char node[256];            /* the node it is for ("" when empty) */
	char model_name[64];       /* its file name, for messages */
	tp_node *model;
};

/* Load the model of node (NodeTopology=, GpuLinks=) into c; -1 when the
 * node has none or it cannot be loaded (the tasks then say why). */
int tpk_node_preload(const struct tpk_site *site, const char *node,
		     struct tpk_node_cache *c);
void tpk_node_cache_free(struct tpk_node_cache *c);

/* One node's share of a step. */
struct tpk_node_req {
	const char *node;          /* this node's name (SLURMD_NODENAME) */
	const int32_t *tasks;      /* global ids of the node's tasks, local-rank
				      order */
	int32_t ntasks;
	int64_t total_tasks;       /* tasks of the step: rows of the patterns */
	const char *basedir;       /* base of relative paths (NULL: cwd) */
	struct tpk_cred cred;      /* whose privileges read the user's files */
	const struct tpk_node_cache *cache;   /* a preloaded model, or NULL */
	/* GPUs (--topo-gpu-matrix): the step's GPUs on the node, as Slurm
	 * numbers them (PCI bus order) */
	bool want_gpus;
	const int *allowed;
	int nallowed;
	/* CPUs: the step's cores on the node, Slurm's core numbers (logical
	 * order, socket-major, as slurm.conf describes the node) */
	bool want_cpus;
	const int *step_cores;
	int nstep_cores;
};

struct tpk_node_result {
	/* GPUs */
	bool gpus_ok;
	int gpt;                   /* GPUs per task */
	int gpus[TPK_MAX_GPUS];    /* ntasks x gpt Slurm GPU indices,
				      task-major (local-rank order) */
	double local_rank_ms;      /* max GPU-link congestion, local-rank order */
	double topoplace_ms;       /* the same for the selection */
	char used[32];             /* candidate kept: "magc", "local-rank", ... */
	bool gpu_jobwide;          /* the error is the same on every node */
	char gpu_msg[TPK_LINE_MAX];   /* the error line ("" on success) */
	/* CPUs */
	bool cpus_ok;
	char **cpus;               /* ntasks CPU lists ("8-11"), malloc'ed */
	int cores_per_task;
	double mims;               /* largest message between the sockets */
	char model[64];            /* the node model's file name */
	bool cpu_note;             /* cpu_msg is a note (no binding wanted
				      here), not an error */
	char cpu_msg[TPK_LINE_MAX];
};

/* What topoplace chooses inside one node, as `topoplace map` does it:
 * phase 2 (tasks to sockets and cores by MIMS on the CPU + GPU traffic,
 * inside the step's cores) and phase 3 (MAGC GPU selection from
 * --topo-gpu-matrix among the step's GPUs), then each task's cores next to
 * its GPUs.  The node model is NodeTopology=/GpuLinks= of topoplace.conf;
 * the user's files are read with the user's privileges, at most
 * site->max_file_bytes.  Deterministic: every task of the node gets the same
 * answer.  GPUs and CPUs succeed or fail on their own (gpus_ok, cpus_ok),
 * each failure with one line.  Free with tpk_node_result_free. */
void tpk_node_select(const struct tpk_site *site, const struct tpk_hints *h,
		     const struct tpk_node_req *rq, struct tpk_node_result *res);
void tpk_node_result_free(struct tpk_node_result *res);

/* Parse "0-3,8,10-11" into out (at most cap); returns the count or -1. */
int tpk_parse_index_list(const char *list, int *out, int cap);

/* Parse a GPU list "0,1,3" (digits only) into out (at most cap); returns the
 * count, or -1 ("NoDevFiles", UUIDs, too many). */
int tpk_parse_gpu_list(const char *list, int *out, int cap);

#endif
