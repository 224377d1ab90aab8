/* topoplace SPANK plugin — declarations shared by plugin/.
 *
 *   dispatch.c   the SPANK hooks and options; one dispatch on the context
 *   srun.c       srun (local context): this srun's tasks, SLURM_HOSTFILE
 *   batch.c      the batch step (remote): the job's tasks, the script's env
 *   task.c       every other step (remote): each task's GPUs and CPUs
 *   spank_env.c  the job's environment (spank_getenv) for batch.c, task.c
 *   place.c      Slurm's facts -> one tp_job_request -> a private hostfile,
 *                the report lines and the --topo-report=svg picture (drawn
 *                by frontend/, as topoplace map --format svg) (no SPANK
 *                calls)
 *   site.c       the plugstack.conf arguments
 *   srun_args.c  what srun's command line asks for
 *   userfile.c   user files read and written with the user's privileges;
 *                private dirs
 *
 * The --topo-* options and Slurm's lists are read by frontend/ (launch.h),
 * shared with the command.  Only place.c and the context files call the
 * core; the pure helpers (site, srun_args, userfile, and frontend's hints
 * and lists) are unit-tested on their own.  Nothing
 * here is public API: the plugin exports only slurm_spank_* and plugin_*
 * (topoplace.lds).
 */
#ifndef TOPOPLACE_TPK_H
#define TOPOPLACE_TPK_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <topoplace/job.h>

#include "launch.h"

#define TPK_PATH_MAX 4096
#define TPK_DEFAULT_CONF "/etc/slurm/topoplace.conf"
#define TPK_DEFAULT_MAX_FILE_BYTES (16u << 20)   /* 16 MiB */
#define TPK_MAX_FILE_BYTES_LIMIT (1u << 30)      /* 1 GiB */
#define TPK_DEFAULT_MAX_TASKS (1 << 20)          /* 1,048,576 */
#define TPK_MAX_TASKS_LIMIT (1 << 26)
#define TPK_MAX_HOSTFILE_BYTES (64u << 20)       /* the hostfile written */
#define TPK_MAX_CORES 8192   /* cores of a step on one node */
#define TPK_MAX_PICTURE_BYTES (16u << 20)   /* --topo-report=svg */
#define TPK_MAX_THREADS_LIMIT 256  /* max_threads=: the core's own limit */

/* ---- site.c: the plugstack.conf line ---- */

struct tpk_site {
	char conf_path[TPK_PATH_MAX];  /* conf= */
	char policy[32];               /* policy=, "" when not given */
	double time_budget_ms;         /* time_budget_ms=, < 0 when not given */
	size_t max_file_bytes;         /* max_file_bytes= */
	int64_t max_tasks;             /* max_tasks= */
	int max_threads;               /* max_threads=, 0 when not given */
	bool cpu_bind;                 /* cpu_bind=yes|no (default yes) */
	char slurm_conf[TPK_PATH_MAX]; /* slurm_conf=, "" when not given */
	bool node_detect;              /* node_detect=yes|no (default yes) */
	char node_cache[TPK_PATH_MAX]; /* node_cache=DIR|no, "" for no */
};

#define TPK_DEFAULT_NODE_CACHE "/run/topoplace"
void tpk_site_defaults(struct tpk_site *s);
/* Apply one "key=value" argument; 0, or -1 with one line in err (the
 * argument is then ignored). */
int tpk_site_arg(struct tpk_site *s, const char *arg, char *err, size_t errlen);
/* The time budget of a placement's request (srun, slurmstepd): the
 * plugstack's time_budget_ms= as the default, else topoplace.conf's
 * TimeBudgetMs=, else TP_JOB_LAUNCH_BUDGET_MS (never none: the launch
 * waits for it). */
void tpk_request_budget(const struct tpk_site *s, tp_job_request *q);

/* ---- slurm_running.c: the Slurm that loaded the plugin ---- */

/* The release the plugin was built for (SLURM_VERSION_NUMBER). */
unsigned tpk_slurm_version(void);
/* The slurm.conf whose topology decides Slurm's own task order. */
void tpk_slurm_conf_path(const struct tpk_site *site, char *out, size_t len);
/* slurmctld's live view of topology (NULL: the default) as the lines
 * `scontrol show topology` prints, through the libslurm of the process
 * (srun): malloc'ed text and its length, or NULL with why. */
char *tpk_slurm_topology_text(const char *topology, size_t *len, char *why,
			      size_t wlen);

/* ---- srun_args.c: srun's command line ---- */

struct tpk_srun_args {
	int64_t ntasks;          /* -n, 0 when not given */
	int64_t nodes_min, nodes_max;  /* -N, 0 when not given */
	int ntasks_per_node;     /* --ntasks-per-node, 0 when not given */
	int64_t cpus_per_task;   /* -c, 0 when not given */
	bool mem_given;          /* --mem or --mem-per-cpu */
	bool mem_zero;           /* ... with a value of 0 */
	char layout[32];         /* first user layout option seen ("-w"), or "" */
	char mpi[16];            /* --mpi's value, or "" */
	bool het;                /* heterogeneous step (":" or --het-group) */
	bool het_topo;           /* --topo-* options in a later component */
	bool info_only;          /* --help, --usage, --version */
	/* An option srun does not know (another plugin's) followed by a word
	 * that may be its value or the command: the scan cannot tell. */
	char ambiguous[64];      /* "--container-image", "" when none */
	int ambiguous_at;        /* argv index of that option */
	int topo_after;          /* argv index of the first --topo-* option
				    after it (0: none), whose callback can
				    settle the question */
	struct tpk_hints hints;  /* --topo-* options on the command line */
};

/* Scan srun's argv (argv[0] is the program) up to the command.  Words
 * before argv[known] are known to be options or their values (srun's own
 * getopt reached argv[known]); 0 when unknown. */
void tpk_scan_srun_args(int argc, char **argv, int known,
			struct tpk_srun_args *out);
void tpk_srun_args_free(struct tpk_srun_args *a);
/* A memory size as srun reads it (--mem, SLURM_MEM_PER_NODE): true when
 * it is 0 ("0", "0M", "0G"). */
bool tpk_mem_is_zero(const char *value);
/* srun leaves the distribution to slurmctld when the step's memory is 0
 * (--mem=0, --mem-per-cpu=0, or SLURM_MEM_PER_NODE/SLURM_MEM_PER_CPU=0
 * from salloc or sbatch; src/srun/launch.c, _create_job_step_req), and
 * slurmctld then takes block (src/stepmgr/stepmgr.c, step_create): "block"
 * then, NULL for srun's own default.  mem_given: the srun command line
 * set it (mem_zero its value). */
const char *tpk_mem_zero_dist(bool mem_given, bool mem_zero,
			      const char *(*env)(const char *));
/* Read /proc/self/cmdline into a NULL-terminated argv (one allocation;
 * free(*argv)).  Returns argc, or -1. */
int tpk_read_cmdline(char ***argv);

/* ---- userfile.c: the user's files, with the user's privileges ---- */

struct tpk_cred {
	bool drop;          /* switch the effective ids around each access */
	uid_t uid;
	gid_t gid;
	const gid_t *groups;
	int ngroups;
};

int tpk_become_user(const struct tpk_cred *cred, char *err, size_t errlen);
void tpk_become_root(const struct tpk_cred *cred);
/* How a user's file is read: with the user's credentials, relative paths
 * from basedir (NULL: the current directory), at most max bytes. */
struct tpk_user_read {
	const struct tpk_cred *cred;
	const char *basedir;
	size_t max;
};

/* A regular file read as ur says, opened non-blocking.  *buf:
 * NUL-terminated, malloc'ed.  0, or -1 with one line in err. */
int tpk_read_user_file(const char *path, const struct tpk_user_read *ur,
		       char **buf, size_t *len, char *err, size_t errlen);
/* parent/topoplace.TAG.XXXXXX (mode 0700) as the user; /tmp when parent
 * cannot be used (as slurmstepd falls back for TMPDIR). */
int tpk_make_private_dir(const char *parent, const char *tag,
			 const struct tpk_cred *cred, char *out, size_t outlen,
			 char *err, size_t errlen);
/* Remove such a directory and the plain files in it, as the user. */
void tpk_remove_private_dir(const char *dir, const struct tpk_cred *cred);
/* Write len bytes to path as the user: a new temporary file next to it
 * (mode 0600, never through a symbolic link), then renamed over path.  0,
 * or -1 with one line in err (nothing left behind). */
int tpk_write_user_file(const char *path, const char *data, size_t len,
			const struct tpk_cred *cred, char *err, size_t errlen);

/* ---- place.c: one placement of a step's tasks onto its nodes ---- */

/* What Slurm says about the step. */
struct tpk_step {
	const char *nodelist;        /* the allocation's hostlist */
	const char *partition;       /* the job's (Slurm's topology.yaml
					topology of it), or NULL */
	const char *slots;           /* exact tasks per node (count or
					SLURM_TASKS_PER_NODE form), or NULL */
	const char *capacity;        /* most tasks each node holds, or NULL */
	int64_t ntasks;              /* tasks of the step (0: every slot) */
	const char *distribution;    /* the distribution srun takes when it is
					not its default (tpk_mem_zero_dist),
					or NULL */
	const char *basedir;         /* base of relative file options */
	const char *tmpdir;          /* parent of the private directory */
	const char *tag;             /* "job12" names the private directory */
	bool mpich;                  /* also write MPICH's host file */
	const char *picture;         /* --topo-report=svg writes here (NULL:
					nowhere to write, said in a line) */
	struct tpk_cred cred;
	/* the names of the inputs, for messages */
	const char *ntasks_what, *slots_what;
	/* may ask slurmctld where nodes the files do not place are (srun:
	 * one RPC, only when such a node is in the job) */
	bool live;
};

enum tpk_status {
	TPK_UNTOUCHED = 0,  /* Slurm's placement stays */
	TPK_PLACED,         /* hostfile written */
	TPK_FAILED,         /* error: Slurm's placement stays, msg says why */
};

#define TPK_MAX_LINES 24

struct tpk_result {
	enum tpk_status status;
	/* lines for the job's stderr; the first is the summary or the error */
	char lines[TPK_MAX_LINES][TPK_LINE_MAX];
	int nlines;
	bool quiet;                  /* the job asked for nothing (a site
					default only): log, do not show */
	char dir[TPK_PATH_MAX];      /* private directory ("" when none) */
	char hostfile[TPK_PATH_MAX]; /* SLURM_HOSTFILE ("" when none) */
	char mpichfile[TPK_PATH_MAX];/* HYDRA_HOST_FILE ("" when none) */
	bool mpich_split;            /* none: a node's ranks are not one run */
	char policy[48];             /* what was kept, for the slurmd log */
	double elapsed_ms;
};

/* Compute the placement of one step and write its hostfile into a new
 * private directory.  Never fails: problems come back as TPK_FAILED with
 * one line. */
void tpk_place(const struct tpk_site *site, const struct tpk_hints *hints,
	       const struct tpk_step *step, struct tpk_result *res);

/* Is there anything to do for a job with these options?  Cheap: no
 * options and a site policy that needs a pattern means no. */
bool tpk_worth_placing(const struct tpk_site *site,
		       const struct tpk_hints *hints);

/* A 64-bit fingerprint (16 hex chars + NUL) of everything tpk_place reads
 * except file contents: lets an srun see that the batch step already made
 * the same placement. */
void tpk_key(const struct tpk_site *site, const struct tpk_hints *hints,
	     const struct tpk_step *step, char out[17]);

/* ---- the contexts (srun.c, batch.c, task.c), called by dispatch.c ---- */

struct spank_handle;
void tpk_srun_init(const struct tpk_site *site);
void tpk_srun_option(const struct tpk_site *site, int val);
void tpk_srun_post_opt(void);
void tpk_srun_exit(void);

void tpk_batch_user_init(struct spank_handle *sp, const struct tpk_site *site,
			 const struct tpk_hints *hints);
void tpk_batch_exit(void);

/* In slurmstepd as root (init_post_opt): make sure the node's detected
 * model is in the root-owned cache, for the step's user_init to read. */
void tpk_step_prepare_node(struct spank_handle *sp, const struct tpk_site *site,
			   const struct tpk_hints *hints);
void tpk_step_user_init(struct spank_handle *sp, const struct tpk_site *site,
			const struct tpk_hints *hints);
void tpk_task_init(struct spank_handle *sp, const struct tpk_site *site,
		   const struct tpk_hints *hints);
void tpk_step_exit(void);

/* spank_getenv into a malloc'ed string (NULL when unset); spank_env.c,
 * below both the contexts and dispatch.c. */
char *tpk_job_getenv(struct spank_handle *sp, const char *name);

#endif
