/* topoplace SPANK plugin — srun (local context).
 *
 * Inside an allocation, srun maps its own tasks: in slurm_spank_init, the
 * earliest hook, before srun reads its options and its environment, it
 * reads its command line from /proc/self/cmdline, maps, and sets
 * SLURM_HOSTFILE for this srun only; srun's option check then reads it and
 * switches to arbitrary distribution.  The file lives in a private
 * directory that is removed as soon as srun has read it
 * (slurm_spank_init_post_opt), at srun's exit, or from an exit handler when
 * srun stops during option parsing (a bad option, -n 0), when neither hook
 * runs.  When the command line holds another plugin's option whose value
 * may be the next word, the placement waits for the callback of a --topo-*
 * option that comes after it, where srun's own getopt shows how far the
 * options go; without one it fails open with one line.
 *
 * The user's own layout wins: -w, -m, -x, -r, --nodefile, -N (srun takes
 * no hostfile beside it), their own SLURM_HOSTFILE or SLURM_DISTRIBUTION,
 * and heterogeneous steps.  A pattern inherited from
 * the job applies only to steps of the job's task count (inherited_misfit):
 * launchers' daemons are Slurm's, silently.
 */
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slurm/spank.h>
#include <slurm/slurm_version.h>

#include "tpk.h"

#define ENV_HOSTFILE "TOPOPLACE_HOSTFILE"   /* marks SLURM_HOSTFILE as ours */
#define ENV_KEY "TOPOPLACE_KEY"             /* what the batch step placed */
#define ENV_SKIP "TOPOPLACE_SKIP_STEP"      /* the tasks are Slurm's alone */

/* This srun's state. */
static char placed_dir[TPK_PATH_MAX];
static bool hostfile_set;       /* SLURM_HOSTFILE is ours */
static char *prev_hostfile;     /* SLURM_HOSTFILE before ours */
static bool atexit_done;
static bool deferred;           /* waiting for a --topo-* callback */
static bool done;               /* placed, or decided not to */

static bool nonempty(const char *s)
{
	return s && s[0];
}

static void say(const char *line)
{
	fprintf(stderr, "%s\n", line);
}

/* This srun does not follow the job's mapping.  TOPOPLACE_HOSTFILE stays:
 * it names the job's placement for `topoplace bind` in ranks that a
 * launcher's daemons (this srun's tasks) start. */
static void unset_ours(void)
{
	unsetenv("SLURM_HOSTFILE");
	const char *d = getenv("SLURM_DISTRIBUTION");
	if (d && !strcmp(d, "arbitrary"))
		unsetenv("SLURM_DISTRIBUTION");
}

/* srun may exit while parsing its options, before any later hook. */
static void remove_at_exit(void)
{
	if (placed_dir[0]) {
		struct tpk_cred self = { .drop = false };
		tpk_remove_private_dir(placed_dir, &self);
		placed_dir[0] = '\0';
	}
}

/* A relative file option as an absolute path: the command line's from
 * srun's directory, the environment's (sbatch, salloc) from the submit
 * directory.  Exported for the tasks (TOPOPLACE_GRAPH, ...), whose own
 * directory may be neither. */
static void absolute(char **path, bool from_cmdline, const char *envname)
{
	if (!*path || !(*path)[0])
		return;
	if ((*path)[0] != '/') {
		char cwd[TPK_PATH_MAX];
		const char *base = from_cmdline ? NULL : getenv("SLURM_SUBMIT_DIR");
		if (!nonempty(base) || base[0] != '/')
			base = getcwd(cwd, sizeof cwd);
		if (!base)
			return;
		size_t n = strlen(base) + strlen(*path) + 2;
		char *abs = malloc(n);
		if (!abs)
			return;
		snprintf(abs, n, "%s/%s", base, *path);
		free(*path);
		*path = abs;
	}
	setenv(envname, *path, 1);
}

/* srun's PMI-2 before Slurm 24.05 tells MPI that every task of an
 * arbitrary layout is alone on its node ("(vector,(0,N,1))" in mpi/pmi2's
 * _get_proc_mapping): MPICH would lose shared memory between the ranks of
 * a node.  Such a step keeps Slurm's layout. */
static bool pmi2_loses_locality(const struct tpk_srun_args *args)
{
	if (tpk_slurm_version() >= SLURM_VERSION_NUM(24, 5, 0))
		return false;
	const char *mpi = args->mpi[0] ? args->mpi : getenv("SLURM_MPI_TYPE");
	return mpi && !strcmp(mpi, "pmi2");
}

/* The user's own layout, or "" when topoplace may place. */
static void user_layout(const struct tpk_srun_args *args, char *out,
			size_t len)
{
	const char *hf = getenv("SLURM_HOSTFILE"), *our = getenv(ENV_HOSTFILE);
	const char *dist = getenv("SLURM_DISTRIBUTION");
	bool ours = nonempty(hf) && nonempty(our) && !strcmp(hf, our);
	out[0] = '\0';
	if (args->layout[0])
		snprintf(out, len, "%s", args->layout);
	else if (args->het)
		snprintf(out, len, "a heterogeneous step");
	else if (args->nodes_min)
		/* any -N: srun 23.11 and later refuse it beside a hostfile
		 * (_validate_arbitrary), and 22.05 reads only N of its lines */
		snprintf(out, len, "-N %lld", (long long)args->nodes_min);
	else if (pmi2_loses_locality(args))
		snprintf(out, len, "--mpi=pmi2");
	else if (nonempty(hf) && !ours)
		snprintf(out, len, "SLURM_HOSTFILE");
	else if (nonempty(dist) && !(ours && !strcmp(dist, "arbitrary")))
		snprintf(out, len, "SLURM_DISTRIBUTION");
}

/* This srun's tasks as srun will count them, and the step's slots. */
static void step_facts(const struct tpk_srun_args *args, struct tpk_step *s,
		       char *capacity, size_t caplen)
{
	const char *tpn_spec = getenv("SLURM_TASKS_PER_NODE");
	int64_t nodes = tpk_parse_pos(getenv("SLURM_JOB_NUM_NODES"));
	int64_t tpn = args->ntasks_per_node ? args->ntasks_per_node
		      : tpk_parse_pos(getenv("SLURM_NTASKS_PER_NODE"));
	int64_t n = args->ntasks;
	s->ntasks_what = args->ntasks ? "-n" : "SLURM_NTASKS";
	if (!n)
		n = tpk_parse_pos(getenv("SLURM_NTASKS"));
	if (!n)
		n = tpk_parse_pos(getenv("SLURM_NPROCS"));
	if (!n && tpn && nodes)
		n = tpn * nodes;
	int64_t spec_nodes = 0, sum = tpn_spec ? tpk_tasks_per_node_sum(tpn_spec,
									&spec_nodes) : -1;
	s->ntasks = n;
	/* --mem=0: slurmctld's block instead of srun's default */
	s->distribution = tpk_mem_zero_dist(args->mem_given, args->mem_zero,
					    (const char *(*)(const char *))getenv);
	/* the step's exact layout where Slurm's is known; otherwise -n is
	 * spread, each node within its CPUs */
	static char count[24];
	if (!args->ntasks && !args->ntasks_per_node && sum > 0 && (!n || sum >= n)) {
		/* the job's own layout, as the batch step saw it */
		s->slots = tpn_spec;
		s->slots_what = "SLURM_TASKS_PER_NODE";
	} else if (tpn > 0 && (!n || tpn * nodes == n)) {
		snprintf(count, sizeof count, "%lld", (long long)tpn);
		s->slots = count;
		s->slots_what = "--ntasks-per-node";
	} else if (sum > 0 && (!n || sum == n)) {
		s->slots = tpn_spec;
		s->slots_what = "SLURM_TASKS_PER_NODE";
	} else if (n && tpk_capacity_spec(getenv("SLURM_JOB_CPUS_PER_NODE"),
					  args->cpus_per_task ? args->cpus_per_task
					  : tpk_parse_pos(getenv("SLURM_CPUS_PER_TASK")),
					  capacity, caplen) == 0) {
		s->capacity = capacity;
	}
}

static void print_result(const struct tpk_result *r)
{
	if (r->quiet)
		return;
	for (int i = 0; i < r->nlines; i++)
		say(r->lines[i]);
}

/* The job's task count: what sbatch or salloc asked, else its slots. */
static int64_t job_tasks(void)
{
	int64_t n = tpk_parse_pos(getenv("SLURM_NTASKS")), nodes = 0;
	if (!n && getenv("SLURM_TASKS_PER_NODE"))
		n = tpk_tasks_per_node_sum(getenv("SLURM_TASKS_PER_NODE"), &nodes);
	return n > 0 ? n : 0;
}

/* A pattern inherited from the job (sbatch or salloc options in the
 * environment) is for the job's tasks: a step with another count (a
 * launcher's daemons: mpirun's orted, mpiexec's proxies; a helper step) is
 * left to Slurm quietly, and its tasks too (ENV_SKIP tells task.c).  A
 * pattern on srun's own command line that does not fit is the user's
 * error, and says so. */
static bool inherited_misfit(const struct tpk_srun_args *args,
			     const struct tpk_hints *h, bool ours)
{
	struct tpk_step step;
	char capacity[256];
	memset(&step, 0, sizeof step);
	if (!tpk_hints_pattern(h))
		return false;
	step_facts(args, &step, capacity, sizeof capacity);
	int64_t job = job_tasks();
	if (!job || !step.ntasks || step.ntasks == job)
		return false;
	slurm_debug("topoplace: a step of %lld tasks in a job of %lld: the "
		    "job's pattern is not for it; Slurm places it",
		    (long long)step.ntasks, (long long)job);
	if (ours)
		unset_ours();
	setenv(ENV_SKIP, "1", 1);
	return true;
}

/* The placement, once the command line is understood. */
static void place(const struct tpk_site *site, const struct tpk_srun_args *args)
{
	struct tpk_hints h;
	memset(&h, 0, sizeof h);
	char line[TPK_LINE_MAX], layout[64], capacity[256], cwd[TPK_PATH_MAX];
	done = true;
	tpk_hints_from_env(&h, (const char *(*)(const char *))getenv);
	tpk_hints_overlay(&h, &args->hints);
	bool wanted = h.seen && !tpk_hints_policy_none(&h);

	const char *jobid = getenv("SLURM_JOB_ID");
	const char *nodelist = getenv("SLURM_JOB_NODELIST");
	if (!nonempty(nodelist))
		nodelist = getenv("SLURM_NODELIST");
	if (!nonempty(jobid) || !nonempty(nodelist)) {
		if (wanted)
			say("topoplace: srun outside an allocation: placement works "
			    "inside salloc and sbatch jobs; Slurm's placement is kept");
		goto out;
	}
	const char *hf = getenv("SLURM_HOSTFILE"), *our = getenv(ENV_HOSTFILE);
	bool ours = nonempty(hf) && nonempty(our) && !strcmp(hf, our);
	if (tpk_hints_pattern(&args->hints))
		unsetenv(ENV_SKIP);   /* this srun's own pattern: its tasks' */
	else if (inherited_misfit(args, &h, ours))
		goto out;
	user_layout(args, layout, sizeof layout);
	if (layout[0]) {
		if (ours)
			unset_ours();
		if (args->het && (wanted || args->het_topo)) {
			/* said even without --topo-report: the user asked for a
			 * placement that will not happen */
			say("topoplace: a heterogeneous step is placed by Slurm; "
			    "its --topo-* options are ignored");
		} else if (wanted && h.report && !strcmp(layout, "--mpi=pmi2")) {
			say("topoplace: --mpi=pmi2 before Slurm 24.05 tells MPI "
			    "that every task of a placed step is alone on its node "
			    "(no shared memory), so Slurm's placement is kept; "
			    "--mpi=pmix places it");
		} else if (wanted && h.report && args->nodes_min && !args->layout[0]) {
			tpk_line(line, sizeof line, "topoplace: %s given: srun "
				 "follows no hostfile with -N, so Slurm's placement "
				 "is kept (leave -N out to have the tasks placed)",
				 layout);
			say(line);
		} else if (wanted && h.report) {
			tpk_line(line, sizeof line, "topoplace: %s given by the user: "
				 "the user's placement wins, topoplace leaves it alone",
				 layout);
			say(line);
		}
		goto out;
	}
	char tag[64], picture[TPK_PATH_MAX], here[TPK_PATH_MAX];
	snprintf(tag, sizeof tag, "job%.32s.srun", jobid);
	/* --topo-report=svg: in srun's directory, where its output goes; a
	 * later srun of the job replaces it */
	bool pic = jobid[strspn(jobid, "0123456789")] == '\0' &&
		   getcwd(here, sizeof here) &&
		   snprintf(picture, sizeof picture, "%s/topoplace-%.32s.srun.svg",
			    strcmp(here, "/") ? here : "", jobid) < (int)sizeof picture;
	const char *tmp = getenv("TMPDIR"), *submit = getenv("SLURM_SUBMIT_DIR");
	bool own_files = args->hints.graph || args->hints.gpu_matrix;
	const char *partition = getenv("SLURM_JOB_PARTITION");
	struct tpk_step step = {
		.nodelist = nodelist,
		.partition = nonempty(partition) ? partition : NULL,
		/* what relative file options mean: the batch step's view for
		 * options from sbatch, srun's own directory for its own */
		.basedir = !own_files && nonempty(submit) ? submit
			   : getcwd(cwd, sizeof cwd),
		.tmpdir = nonempty(tmp) && tmp[0] == '/' ? tmp : "/tmp",
		.tag = tag,
		.picture = pic ? picture : NULL,
		.cred = { .drop = false },       /* srun runs as the user */
		.live = true,                    /* srun may ask slurmctld */
	};
	step_facts(args, &step, capacity, sizeof capacity);
	char key[17];
	tpk_key(site, &h, &step, key);
	const char *bkey = getenv(ENV_KEY);
	/* the tasks need not repeat what this srun says about the inputs */
	setenv("TOPOPLACE_SAID", "1", 1);
	if (bkey && !strcmp(bkey, key))
		goto out;   /* the batch step made exactly this, and said so */
	absolute(&h.graph, args->hints.graph != NULL, "TOPOPLACE_GRAPH");
	absolute(&h.gpu_matrix, args->hints.gpu_matrix != NULL,
		 "TOPOPLACE_GPU_MATRIX");

	struct tpk_result r;
	tpk_place(site, &h, &step, &r);
	if (r.status == TPK_PLACED) {
		if (nonempty(hf))
			prev_hostfile = strdup(hf);
		setenv("SLURM_HOSTFILE", r.hostfile, 1);
		snprintf(placed_dir, sizeof placed_dir, "%s", r.dir);
		hostfile_set = true;
		if (!atexit_done && atexit(remove_at_exit) == 0)
			atexit_done = true;
		char hf_line[TPK_LINE_MAX];
		tpk_line(hf_line, sizeof hf_line, "topoplace: SLURM_HOSTFILE=%s (%s)",
			 r.hostfile, r.policy);
		slurm_debug("%s", hf_line);
	} else if (ours) {
		unset_ours();   /* the batch mapping is for other tasks */
	}
	print_result(&r);
out:
	tpk_hints_free(&h);
}

/* Would this srun be placed at all? */
static bool anything_to_do(const struct tpk_site *site,
			   const struct tpk_srun_args *args)
{
	struct tpk_hints h;
	memset(&h, 0, sizeof h);
	tpk_hints_from_env(&h, (const char *(*)(const char *))getenv);
	tpk_hints_overlay(&h, &args->hints);
	bool yes = tpk_worth_placing(site, &h) || args->het_topo;
	tpk_hints_free(&h);
	return yes;
}

static void ambiguous_line(const struct tpk_srun_args *args)
{
	char line[TPK_LINE_MAX];
	tpk_line(line, sizeof line, "topoplace: error: cannot tell whether srun "
		 "option %s takes a value (write %s=VALUE); Slurm's placement is "
		 "kept", args->ambiguous, args->ambiguous);
	say(line);
}

void tpk_srun_init(const struct tpk_site *site)
{
	struct tpk_srun_args args;
	char **argv = NULL;
	int argc = tpk_read_cmdline(&argv);
	memset(&args, 0, sizeof args);
	if (argc <= 0) {
		say("topoplace: error: cannot read srun's command line; Slurm's "
		    "placement is kept");
		done = true;
		free(argv);
		return;
	}
	tpk_scan_srun_args(argc, argv, 0, &args);
	free(argv);
	if (args.info_only || !anything_to_do(site, &args)) {
		done = true;
	} else if (!args.ambiguous[0]) {
		place(site, &args);
	} else if (args.topo_after) {
		deferred = true;       /* settled in that option's callback */
	} else {
		ambiguous_line(&args);
		done = true;
	}
	tpk_srun_args_free(&args);
}

/* A --topo-* option's callback in srun: srun's getopt has read argv up to
 * optind, so every word before is an option or its value. */
void tpk_srun_option(const struct tpk_site *site, int val)
{
	(void)val;
	if (!deferred || done)
		return;
	char **argv = NULL;
	int argc = tpk_read_cmdline(&argv);
	/* from the command line, not the environment: the word just read
	 * (or the one before its value) is a --topo-* option */
	bool cmdline = argc > 0 && optind >= 2 && optind <= argc &&
		       (!strncmp(argv[optind - 1], "--topo", 6) ||
			!strncmp(argv[optind - 2], "--topo", 6));
	if (!cmdline) {
		free(argv);
		return;
	}
	struct tpk_srun_args args;
	tpk_scan_srun_args(argc, argv, optind, &args);
	free(argv);
	if (!args.ambiguous[0]) {
		deferred = false;
		place(site, &args);
	} else if (!args.topo_after) {
		deferred = false;
		done = true;
		ambiguous_line(&args);
	}
	tpk_srun_args_free(&args);
}

/* srun has read SLURM_HOSTFILE by now (in its option check): remove the
 * file and give the tasks the environment they would have had. */
void tpk_srun_post_opt(void)
{
	if (deferred) {
		/* no --topo-* callback came to settle it */
		deferred = false;
		say("topoplace: error: cannot read srun's options; Slurm's "
		    "placement is kept");
	}
	if (!hostfile_set)
		return;
	remove_at_exit();
	if (prev_hostfile)
		setenv("SLURM_HOSTFILE", prev_hostfile, 1);
	else
		unsetenv("SLURM_HOSTFILE");
	free(prev_hostfile);
	prev_hostfile = NULL;
	hostfile_set = false;
}

void tpk_srun_exit(void)
{
	tpk_srun_post_opt();
	remove_at_exit();
}
