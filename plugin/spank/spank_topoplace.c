/* topoplace — Slurm SPANK plugin (Slurm 22.05, public spank.h only).
 *
 * plugstack.conf:
 *   optional /usr/local/lib/topoplace/topoplace.so conf=/etc/slurm/topoplace.conf \
 *            policy=auto time_budget_ms=300 max_file_bytes=16777216
 *
 * Options (sbatch, salloc, srun): --topo-stencil=SPEC --topo-graph=FILE
 * --topo-gpu-matrix=FILE --topo-policy=NAME --topo-report.
 *
 * Where it acts (see README.md, "Slurm: the SPANK plugin"):
 *   batch step (remote, user_init, privileges already dropped to the user):
 *     maps the job's tasks onto its nodes and exports SLURM_HOSTFILE (a file in
 *     a private directory under the job's TMPDIR, removed in slurm_spank_exit)
 *     and SLURM_DISTRIBUTION=arbitrary, so every plain srun of the script
 *     follows it;
 *   srun (local, slurm_spank_init, before srun reads its options and
 *     environment): inside an allocation, maps this srun's own tasks (its -n
 *     from /proc/self/cmdline) and sets SLURM_HOSTFILE for this srun only;
 *     an explicit -w/-m/-x/-r/--nodefile, a node count other than the
 *     allocation's or the user's own SLURM_HOSTFILE/SLURM_DISTRIBUTION wins;
 *   every task (remote, task_init, as the user): splits the GPUs Slurm gave
 *     the step on the node among the node's tasks: with --topo-gpu-matrix
 *     and the node's NodeTopology= (GpuLinks=) in topoplace.conf, by the
 *     MAGC selection (spank_gpu.c; every task of the node computes the same
 *     one), else, or on any error, in local-rank order.
 * Any error leaves Slurm's placement and prints one line ("fail open").
 */
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <slurm/spank.h>

#include "spank_tp.h"

SPANK_PLUGIN(topoplace, 1);

/* Step ids of slurm.h, which this plugin does not include (spank.h only). */
#ifndef SLURM_BATCH_SCRIPT
#define SLURM_BATCH_SCRIPT (0xfffffffb)
#endif
#ifndef SLURM_EXTERN_CONT
#define SLURM_EXTERN_CONT (0xfffffffc)
#endif

#define ENV_HOSTFILE "TOPOPLACE_HOSTFILE"  /* marks SLURM_HOSTFILE as ours */
#define ENV_KEY "TOPOPLACE_KEY"            /* what the batch step placed */
#define ENV_OPT_PREFIX "SLURM_SPANK__SLURM_SPANK_OPTION_topoplace_"
#define ENV_OPT_PREFIX2 "_SLURM_SPANK_OPTION_topoplace_"

static struct tpk_site site;
static struct tpk_hints hints;       /* from the option callbacks */

/* What this process placed, to clean up. */
static char placed_dir[TPK_PATH_MAX];
static bool is_batch_step;
static struct tpk_node_cache node_cache;   /* step: this node's model */
static bool local_hostfile_set;      /* srun: SLURM_HOSTFILE is ours */
static char *prev_hostfile;          /* srun: SLURM_HOSTFILE before ours */
static struct tpk_cred batch_cred;   /* batch step: the user, for cleanup */
static gid_t *batch_groups;

static int opt_cb(int val, const char *optarg, int remote)
{
	(void)remote;
	/* Only remember: the work happens in the hooks.  Never refuse an option
	 * here, that would stop the job (fail open). */
	tpk_hints_set(&hints, val, optarg);
	return 0;
}

static struct spank_option opts[] = {
	{ "topo-stencil", "SPEC",
	  "topoplace: communication pattern as a stencil, e.g. "
	  "16x16x8:7pt:periodic=all:bytes=4096", 1, TPK_OPT_STENCIL, opt_cb },
	{ "topo-graph", "FILE",
	  "topoplace: communication graph (JSON: tasks, edges, optional coords)",
	  1, TPK_OPT_GRAPH, opt_cb },
	{ "topo-gpu-matrix", "FILE",
	  "topoplace: GPU peer traffic matrix (JSON or CSV i,j,bytes): each "
	  "task's GPUs chosen for it (needs NodeTopology= in topoplace.conf)",
	  1, TPK_OPT_GPU_MATRIX, opt_cb },
	{ "topo-policy", "NAME",
	  "topoplace: auto, geometric, zorder, cyclic, random, block or none "
	  "(none: leave placement to Slurm)", 1, TPK_OPT_POLICY, opt_cb },
	{ "topo-report", NULL,
	  "topoplace: print one line on the placement (policy, hop-bytes and "
	  "congestion of Slurm's order and of the mapping, time)",
	  0, TPK_OPT_REPORT, opt_cb },
	{ "topo-cpu-bind", "yes|no",
	  "topoplace: bind each task to the cores chosen for it (default yes "
	  "where the node has NodeTopology=; no: keep Slurm's --cpu-bind)",
	  1, TPK_OPT_CPU_BIND, opt_cb },
	SPANK_OPTIONS_TABLE_END
};

/* ------------------------------------------------------------- helpers */

/* spank_getenv into a malloc'ed string (NULL when unset). */
static char *job_getenv(spank_t sp, const char *name)
{
	size_t cap = 4096;
	for (;;) {
		char *buf = malloc(cap);
		if (!buf)
			return NULL;
		spank_err_t rc = spank_getenv(sp, name, buf, (int)cap);
		if (rc == ESPANK_SUCCESS)
			return buf;
		free(buf);
		if (rc != ESPANK_NOSPACE || cap >= (1u << 20))
			return NULL;
		cap *= 4;
	}
}

static bool nonempty(const char *s)
{
	return s && s[0];
}

static int64_t parse_pos(const char *s)
{
	char *end;
	if (!nonempty(s))
		return 0;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || *end || v <= 0)
		return 0;
	return v;
}

/* Options from sbatch/salloc reach srun through the environment. */
static void hints_from_env(struct tpk_hints *h)
{
	for (int val = TPK_OPT_STENCIL; val <= TPK_OPT_CPU_BIND; val++) {
		char name[128];
		const char *opt = tpk_opt_name(val);
		char under[64];
		snprintf(under, sizeof under, "%s", opt);
		for (char *p = under; *p; p++)
			if (*p == '-')
				*p = '_';
		snprintf(name, sizeof name, ENV_OPT_PREFIX "%s", under);
		const char *v = getenv(name);
		if (!v) {
			snprintf(name, sizeof name, ENV_OPT_PREFIX2 "%s", under);
			v = getenv(name);
		}
		if (!v)
			continue;
		if (val == TPK_OPT_REPORT)
			tpk_hints_set(h, val, NULL);
		else
			tpk_hints_set(h, val, v);
	}
}

/* Copy the options set in src over dst (command line over environment). */
static void hints_overlay(struct tpk_hints *dst, const struct tpk_hints *src)
{
	if (src->stencil)
		tpk_hints_set(dst, TPK_OPT_STENCIL, src->stencil);
	if (src->graph)
		tpk_hints_set(dst, TPK_OPT_GRAPH, src->graph);
	if (src->gpu_matrix)
		tpk_hints_set(dst, TPK_OPT_GPU_MATRIX, src->gpu_matrix);
	if (src->policy)
		tpk_hints_set(dst, TPK_OPT_POLICY, src->policy);
	if (src->report)
		tpk_hints_set(dst, TPK_OPT_REPORT, NULL);
	if (src->cpu_bind)
		tpk_hints_set(dst, TPK_OPT_CPU_BIND, src->cpu_bind);
}

static bool policy_none(const struct tpk_hints *h)
{
	return h->policy && !strcmp(h->policy, "none");
}

static const char *tmp_parent(const char *tmpdir)
{
	return nonempty(tmpdir) && tmpdir[0] == '/' ? tmpdir : "/tmp";
}

/* ------------------------------------------------------ srun (local) */

static void local_unset_ours(void)
{
	unsetenv("SLURM_HOSTFILE");
	if (getenv("SLURM_DISTRIBUTION") &&
	    !strcmp(getenv("SLURM_DISTRIBUTION"), "arbitrary"))
		unsetenv("SLURM_DISTRIBUTION");
	unsetenv(ENV_HOSTFILE);
}

static void local_print(const struct tpk_result *r)
{
	if (r->quiet)
		return;
	if (r->note[0])
		fprintf(stderr, "%s\n", r->note);
	if (r->msg[0])
		fprintf(stderr, "%s\n", r->msg);
}

static void local_init(void)
{
	struct tpk_hints h;
	struct tpk_srun_args args;
	char **argv = NULL;
	memset(&h, 0, sizeof h);
	memset(&args, 0, sizeof args);

	int argc = tpk_read_cmdline(&argv);
	if (argc > 0)
		tpk_scan_srun_args(argc, argv, &args);
	free(argv);
	if (args.info_only)
		goto out;
	hints_from_env(&h);
	hints_overlay(&h, &args.hints);

	/* Nothing asked and no site policy that applies to every job: the
	 * common case costs no more than this. */
	if (!h.seen && !tpk_policy_pattern_free(site.policy) && site.policy[0])
		goto out;

	const char *jobid = getenv("SLURM_JOB_ID");
	const char *nodelist = getenv("SLURM_JOB_NODELIST");
	if (!nonempty(nodelist))
		nodelist = getenv("SLURM_NODELIST");
	const char *slurm_hf = getenv("SLURM_HOSTFILE");
	const char *our_hf = getenv(ENV_HOSTFILE);
	const char *dist = getenv("SLURM_DISTRIBUTION");
	bool ours = nonempty(slurm_hf) && nonempty(our_hf) && !strcmp(slurm_hf, our_hf);

	if (!nonempty(jobid) || !nonempty(nodelist)) {
		if (h.seen && !policy_none(&h))
			fprintf(stderr, "topoplace: srun outside an allocation: "
				"placement works inside salloc and sbatch jobs; "
				"Slurm's placement is kept\n");
		goto out;
	}

	/* The user's own layout wins. */
	int64_t alloc_nodes = parse_pos(getenv("SLURM_JOB_NUM_NODES"));
	if (!alloc_nodes)
		alloc_nodes = parse_pos(getenv("SLURM_NNODES"));
	char layout[64] = "";
	if (args.layout[0])
		snprintf(layout, sizeof layout, "%s", args.layout);
	else if (args.het)
		snprintf(layout, sizeof layout, "a heterogeneous step");
	else if (args.nodes_min && (args.nodes_min != alloc_nodes ||
				    args.nodes_max != alloc_nodes))
		snprintf(layout, sizeof layout, "-N %lld", (long long)args.nodes_min);
	else if (nonempty(slurm_hf) && !ours)
		snprintf(layout, sizeof layout, "SLURM_HOSTFILE");
	else if (nonempty(dist) && !(ours && !strcmp(dist, "arbitrary")))
		snprintf(layout, sizeof layout, "SLURM_DISTRIBUTION");
	if (layout[0]) {
		if (ours)
			local_unset_ours();
		if (h.report && !policy_none(&h))
			fprintf(stderr, "topoplace: %s given by the user: the user's "
				"placement wins, topoplace leaves it alone\n", layout);
		goto out;
	}

	/* This srun's tasks, as srun itself will count them. */
	const char *tpn_spec = getenv("SLURM_TASKS_PER_NODE");
	int64_t tpn = args.ntasks_per_node
		? args.ntasks_per_node : parse_pos(getenv("SLURM_NTASKS_PER_NODE"));
	int64_t n = args.ntasks;
	if (!n)
		n = parse_pos(getenv("SLURM_NTASKS"));
	if (!n)
		n = parse_pos(getenv("SLURM_NPROCS"));
	if (!n && tpn && alloc_nodes)
		n = tpn * alloc_nodes;
	if (!n && tpn_spec)
		n = tpk_tasks_per_node_sum(tpn_spec, NULL);

	char tag[64], cwd[TPK_PATH_MAX];
	snprintf(tag, sizeof tag, "job%s.srun", jobid);
	if (!getcwd(cwd, sizeof cwd))
		cwd[0] = '\0';
	struct tpk_step step = {
		.nodelist = nodelist,
		.tasks_per_node = tpn_spec,
		.ntasks = n,
		.ntasks_per_node = (int)(tpn > 0 && tpn < 1 << 30 ? tpn : 0),
		.basedir = cwd[0] ? cwd : NULL,  /* srun's own directory */
		.tmpdir = tmp_parent(getenv("TMPDIR")),
		.tag = tag,
		.cred = { .drop = false },       /* srun runs as the user */
	};
	char key[17];
	tpk_key(&site, &h, &step, key);
	const char *bkey = getenv(ENV_KEY);
	if (bkey && !strcmp(bkey, key))
		goto out;   /* the batch step did exactly this, and said so */

	struct tpk_result r;
	tpk_place(&site, &h, &step, &r);
	if (r.status == TPK_PLACED) {
		if (nonempty(slurm_hf))
			prev_hostfile = strdup(slurm_hf);
		setenv("SLURM_HOSTFILE", r.hostfile, 1);
		snprintf(placed_dir, sizeof placed_dir, "%s", r.dir);
		local_hostfile_set = true;
		slurm_debug("topoplace: SLURM_HOSTFILE=%s (%s)", r.hostfile, r.policy);
	} else if (ours) {
		local_unset_ours();   /* the batch mapping is for other tasks */
	}
	local_print(&r);
out:
	tpk_srun_args_free(&args);
	tpk_hints_free(&h);
}

/* srun has read SLURM_HOSTFILE by now (in its option check): remove the file
 * and give the tasks the environment they would have had. */
static void local_cleanup(void)
{
	if (!local_hostfile_set)
		return;
	struct tpk_cred self = { .drop = false };
	tpk_remove_private_dir(placed_dir, &self);
	placed_dir[0] = '\0';
	if (prev_hostfile)
		setenv("SLURM_HOSTFILE", prev_hostfile, 1);
	else
		unsetenv("SLURM_HOSTFILE");
	free(prev_hostfile);
	prev_hostfile = NULL;
	local_hostfile_set = false;
}

/* --------------------------------------------------- batch step (remote) */

static void batch_log(const struct tpk_result *r)
{
	const char *lines[2] = { r->note, r->msg };
	for (int i = 0; i < 2; i++) {
		if (!lines[i][0])
			continue;
		if (r->quiet)
			slurm_info("%s", lines[i]);
		else
			slurm_spank_log("%s", lines[i]);  /* job stderr + slurmd log */
	}
}

static void batch_place(spank_t sp)
{
	uint32_t jobid = 0;
	uid_t uid = 0;
	gid_t gid = 0;
	gid_t *groups = NULL;
	int ngroups = 0;
	char *nodelist = NULL, *tpn_spec = NULL, *ntasks_s = NULL, *tpn_s = NULL,
	     *submit = NULL, *tmpdir = NULL, *hf = NULL, *dist = NULL;

	if (!hints.seen && !tpk_policy_pattern_free(site.policy) && site.policy[0])
		return;
	spank_get_item(sp, S_JOB_ID, &jobid);
	if (spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_GID, &gid) != ESPANK_SUCCESS) {
		slurm_error("topoplace: cannot tell the job's user; placement skipped");
		return;
	}
	if (spank_get_item(sp, S_JOB_SUPPLEMENTARY_GIDS, &groups, &ngroups) !=
	    ESPANK_SUCCESS) {
		groups = NULL;
		ngroups = 0;
	}
	/* user_init runs with the user's effective ids already (checked); if a
	 * Slurm version calls it as root, switch around every file access. */
	batch_cred.drop = geteuid() == 0 && uid != 0;
	batch_cred.uid = uid;
	batch_cred.gid = gid;
	free(batch_groups);
	batch_groups = NULL;
	tpk_node_cache_free(&node_cache);
	batch_cred.ngroups = 0;
	if (ngroups > 0 && groups) {
		batch_groups = malloc((size_t)ngroups * sizeof(gid_t));
		if (batch_groups) {
			memcpy(batch_groups, groups, (size_t)ngroups * sizeof(gid_t));
			batch_cred.ngroups = ngroups;
		}
	}
	batch_cred.groups = batch_groups;

	nodelist = job_getenv(sp, "SLURM_JOB_NODELIST");
	tpn_spec = job_getenv(sp, "SLURM_TASKS_PER_NODE");
	ntasks_s = job_getenv(sp, "SLURM_NTASKS");
	tpn_s = job_getenv(sp, "SLURM_NTASKS_PER_NODE");
	submit = job_getenv(sp, "SLURM_SUBMIT_DIR");
	tmpdir = job_getenv(sp, "TMPDIR");
	hf = job_getenv(sp, "SLURM_HOSTFILE");
	dist = job_getenv(sp, "SLURM_DISTRIBUTION");

	if (nonempty(hf) || nonempty(dist)) {
		if (hints.report && !policy_none(&hints))
			slurm_spank_log("topoplace: %s given by the user: the user's "
					"placement wins, topoplace leaves it alone",
					nonempty(hf) ? "SLURM_HOSTFILE" : "-m/--distribution");
		goto out;
	}
	int64_t n = parse_pos(ntasks_s);
	if (!n && tpn_spec)
		n = tpk_tasks_per_node_sum(tpn_spec, NULL);
	int64_t tpn = parse_pos(tpn_s);

	char tag[64];
	snprintf(tag, sizeof tag, "job%u", jobid);
	struct tpk_step step = {
		.nodelist = nodelist,
		.tasks_per_node = tpn_spec,
		.ntasks = n,
		.ntasks_per_node = (int)(tpn > 0 && tpn < 1 << 30 ? tpn : 0),
		.basedir = submit,        /* sbatch's directory: where the user
					     typed the relative path */
		.tmpdir = tmp_parent(tmpdir),
		.tag = tag,
		.cred = batch_cred,
	};
	char key[17];
	tpk_key(&site, &hints, &step, key);

	struct tpk_result r;
	tpk_place(&site, &hints, &step, &r);
	if (hints.seen || r.status != TPK_UNTOUCHED)
		spank_setenv(sp, ENV_KEY, key, 1);
	if (r.status == TPK_PLACED) {
		if (spank_setenv(sp, "SLURM_HOSTFILE", r.hostfile, 1) != ESPANK_SUCCESS ||
		    spank_setenv(sp, "SLURM_DISTRIBUTION", "arbitrary", 1) != ESPANK_SUCCESS ||
		    spank_setenv(sp, ENV_HOSTFILE, r.hostfile, 1) != ESPANK_SUCCESS) {
			spank_unsetenv(sp, "SLURM_HOSTFILE");
			spank_unsetenv(sp, "SLURM_DISTRIBUTION");
			spank_unsetenv(sp, ENV_HOSTFILE);
			tpk_remove_private_dir(r.dir, &batch_cred);
			slurm_spank_log("topoplace: error: cannot set the job's "
					"environment; Slurm's placement is kept");
			goto out;
		}
		snprintf(placed_dir, sizeof placed_dir, "%s", r.dir);
		slurm_info("topoplace: job %u: %s mapping of %lld tasks in %.1f ms, "
			   "SLURM_HOSTFILE=%s", jobid, r.policy, (long long)n,
			   r.elapsed_ms, r.hostfile);
	}
	batch_log(&r);
out:
	free(nodelist);
	free(tpn_spec);
	free(ntasks_s);
	free(tpn_s);
	free(submit);
	free(tmpdir);
	free(hf);
	free(dist);
}

/* ------------------------------------------------------- tasks (remote) */

static int count_list(const char *s)
{
	int n = 0;
	if (!nonempty(s))
		return 0;
	for (n = 1; *s; s++)
		if (*s == ',')
			n++;
	return n;
}

/* Whose privileges read the user's files in task_init: the hook runs as
 * the user already; if a Slurm version calls it as root, drop around each
 * access. */
static int task_cred(spank_t sp, struct tpk_cred *cred, gid_t **groups_out)
{
	uid_t uid = 0;
	gid_t gid = 0;
	gid_t *groups = NULL;
	int ngroups = 0;
	memset(cred, 0, sizeof *cred);
	*groups_out = NULL;
	if (spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_GID, &gid) != ESPANK_SUCCESS)
		return -1;
	cred->drop = geteuid() == 0 && uid != 0;
	cred->uid = uid;
	cred->gid = gid;
	if (cred->drop &&
	    spank_get_item(sp, S_JOB_SUPPLEMENTARY_GIDS, &groups, &ngroups) ==
	    ESPANK_SUCCESS && ngroups > 0 && groups) {
		*groups_out = malloc((size_t)ngroups * sizeof(gid_t));
		if (*groups_out) {
			memcpy(*groups_out, groups, (size_t)ngroups * sizeof(gid_t));
			cred->groups = *groups_out;
			cred->ngroups = ngroups;
		}
	}
	return 0;
}

/* A line for the job's stderr (the task's stderr, which srun relays) and
 * the slurmd log. */
static void task_say(const char *line)
{
	fprintf(stderr, "%s\n", line);
	fflush(stderr);
	slurm_info("%s", line);
}

/* Print a line from one task only: the node's first task, or for an error
 * every node shares the job's first task; the others log it. */
static void task_say_once(const char *line, bool me)
{
	if (!line[0])
		return;
	if (me)
		task_say(line);
	else
		slurm_debug("%s", line);
}

/* The node's share of the step: global ids of the local tasks and the
 * node's name.  Returns -1 after a line in why. */
static int task_node_req(spank_t sp, uint32_t nlocal, struct tpk_node_req *rq,
			 int32_t **tasks, char **nodename, gid_t **groups,
			 char *why, size_t whylen)
{
	uint32_t total = 0;
	char host[256];
	if (spank_get_item(sp, S_JOB_TOTAL_TASK_COUNT, &total) != ESPANK_SUCCESS ||
	    !(*tasks = malloc(sizeof(int32_t) * (nlocal + 1u)))) {
		snprintf(why, whylen, "cannot tell the step's tasks");
		return -1;
	}
	for (uint32_t i = 0; i < nlocal; i++) {
		uint32_t g = 0;
		if (spank_get_item(sp, S_JOB_LOCAL_TO_GLOBAL_ID, i, &g) !=
		    ESPANK_SUCCESS || g >= total) {
			snprintf(why, whylen, "cannot tell the global id of local "
				 "task %u", i);
			return -1;
		}
		(*tasks)[i] = (int32_t)g;
	}
	*nodename = job_getenv(sp, "SLURMD_NODENAME");
	if (!nonempty(*nodename)) {
		free(*nodename);
		*nodename = NULL;
		if (gethostname(host, sizeof host) == 0) {
			host[sizeof host - 1] = '\0';
			char *dot = strchr(host, '.');
			if (dot)
				*dot = '\0';
			*nodename = strdup(host);
		}
	}
	if (task_cred(sp, &rq->cred, groups) < 0) {
		snprintf(why, whylen, "cannot tell the job's user");
		return -1;
	}
	rq->node = *nodename;
	rq->tasks = *tasks;
	rq->ntasks = (int32_t)nlocal;
	rq->total_tasks = total;
	rq->basedir = NULL;          /* the task's working directory */
	return 0;
}

/* Should topoplace bind this step's tasks to CPUs?  The site (cpu_bind=no),
 * the user (--topo-cpu-bind=no, --cpu-bind=none) may say no; a pattern hint
 * is needed.  A bad --topo-cpu-bind value is reported once. */
static bool want_cpu_binding(spank_t sp, bool job_first)
{
	if (!site.cpu_bind)
		return false;
	if (hints.cpu_bind && strcmp(hints.cpu_bind, "yes")) {
		if (strcmp(hints.cpu_bind, "no")) {
			char line[TPK_LINE_MAX];
			snprintf(line, sizeof line, "topoplace: error: --topo-cpu-bind=%.64s:"
				 " yes or no is needed; Slurm's CPU binding kept",
				 hints.cpu_bind);
			task_say_once(line, job_first);
		}
		return false;
	}
	if (!hints.stencil && !hints.graph && !hints.gpu_matrix)
		return false;
	char *type = job_getenv(sp, "SLURM_CPU_BIND_TYPE");
	bool none = type && !strncmp(type, "none", 4);
	free(type);
	return !none;
}

/* Parse a CPU list ("0-3,8") into a set; false when it does not parse. */
static bool cpu_list_set(const char *list, cpu_set_t *set)
{
	int cpus[CPU_SETSIZE];
	int n = tpk_parse_index_list(list, cpus, CPU_SETSIZE);
	if (n <= 0)
		return false;
	CPU_ZERO(set);
	for (int i = 0; i < n; i++) {
		if (cpus[i] >= CPU_SETSIZE)
			return false;
		CPU_SET(cpus[i], set);
	}
	return true;
}

/* The CPUs this step may use here: slurmstepd's (the task's parent's)
 * affinity, which the cgroup of the step bounds. */
static bool usable_cpus(cpu_set_t *set)
{
	CPU_ZERO(set);
	return sched_getaffinity(getppid(), sizeof *set, set) == 0 ||
	       sched_getaffinity(0, sizeof *set, set) == 0;
}

/* Every task's CPU list must be usable here (the same check on every
 * task, so the node's first task speaks for all).  Writes the first CPU
 * list that is not to bad. */
static bool cpu_lists_usable(const struct tpk_node_result *res, int32_t n,
			     const char **bad)
{
	cpu_set_t ok, mine, both;
	if (!usable_cpus(&ok))
		return false;
	for (int32_t t = 0; t < n; t++) {
		if (!cpu_list_set(res->cpus[t], &mine)) {
			*bad = res->cpus[t];
			return false;
		}
		CPU_AND(&both, &mine, &ok);
		if (!CPU_EQUAL(&both, &mine)) {
			*bad = res->cpus[t];
			return false;
		}
	}
	return true;
}

/* A CPU set as a list ("0-1,4"). */
static void cpu_set_string(const cpu_set_t *set, char *out, size_t len)
{
	size_t used = 0;
	out[0] = '\0';
	for (int c = 0; c < CPU_SETSIZE; c++) {
		if (!CPU_ISSET(c, set))
			continue;
		int e = c;
		while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, set))
			e++;
		int w = e > c ? snprintf(out + used, len - used, "%s%d-%d",
					 used ? "," : "", c, e)
			      : snprintf(out + used, len - used, "%s%d",
					 used ? "," : "", c);
		if (w < 0 || (size_t)w >= len - used)
			return;
		used += (size_t)w;
		c = e;
	}
}

/* Bind this task (the process that will exec the user's program: task_init
 * runs in it) to its CPU list, and say what was done. */
static void task_bind_cpus(spank_t sp, int lid, const struct tpk_node_req *rq,
			   const struct tpk_node_result *res, const char *cores)
{
	const char *bad = NULL;
	char line[TPK_LINE_MAX];
	if (!cpu_lists_usable(res, rq->ntasks, &bad)) {
		cpu_set_t ok;
		char have[256] = "?";
		if (usable_cpus(&ok))
			cpu_set_string(&ok, have, sizeof have);
		snprintf(line, sizeof line, "topoplace: error: CPU binding: %s: CPU "
			 "list %s of %s is not within this step's CPUs here (%s); "
			 "Slurm's CPU binding kept", rq->node ? rq->node : "?",
			 bad ? bad : "?", res->model, have);
		task_say_once(line, lid == 0);
		return;
	}
	cpu_set_t set;
	if (!cpu_list_set(res->cpus[lid], &set) ||
	    sched_setaffinity(0, sizeof set, &set) != 0) {
		snprintf(line, sizeof line, "topoplace: error: CPU binding: %s: "
			 "cannot bind task %d to CPUs %s: %s; Slurm's CPU binding "
			 "kept", rq->node ? rq->node : "?", lid, res->cpus[lid],
			 strerror(errno));
		task_say(line);
		return;
	}
	spank_setenv(sp, "TOPOPLACE_CPUS", res->cpus[lid], 1);
	slurm_debug("topoplace: task %d: CPUs %s", lid, res->cpus[lid]);
	if (!hints.report || lid != 0)
		return;
	int n = snprintf(line, sizeof line, "topoplace: %s: CPUs bound (%s, %ld "
			 "task%s x %d core%s of step cores %s, largest inter-socket "
			 "message %.6g bytes):", rq->node ? rq->node : "?",
			 res->model, (long)rq->ntasks, rq->ntasks > 1 ? "s" : "",
			 res->cores_per_task, res->cores_per_task > 1 ? "s" : "",
			 cores, res->mims);
	for (int32_t t = 0; t < rq->ntasks && n > 0 && (size_t)n < sizeof line; t++)
		n += snprintf(line + n, sizeof line - (size_t)n, " %ld:%s",
			      (long)rq->tasks[t], res->cpus[t]);
	task_say(line);
}

/* This task's CUDA_VISIBLE_DEVICES from the MAGC selection: the position of
 * Slurm's GPU in the step's list picks the visible entry.  -1 when a GPU is
 * not the step's. */
static int selected_gpus(const struct tpk_node_result *res, int lid,
			 const int *allowed, const int *visible, int nal,
			 char *mine, size_t minelen)
{
	size_t used = 0;
	mine[0] = '\0';
	for (int q = 0; q < res->gpt; q++) {
		int g = res->gpus[lid * res->gpt + q], pos = -1;
		for (int k = 0; k < nal && pos < 0; k++)
			if (allowed[k] == g)
				pos = k;
		int n = pos < 0 ? -1 : snprintf(mine + used, minelen - used, "%s%d",
						q ? "," : "", visible[pos]);
		if (n < 0 || (size_t)n >= minelen - used)
			return -1;
		used += (size_t)n;
	}
	return 0;
}

static void set_gpus(spank_t sp, const char *cvd, const char *mine, int lid,
		     uint32_t nlocal)
{
	char *ordinal = job_getenv(sp, "GPU_DEVICE_ORDINAL");
	char *rocr = job_getenv(sp, "ROCR_VISIBLE_DEVICES");
	if (spank_setenv(sp, "CUDA_VISIBLE_DEVICES", mine, 1) != ESPANK_SUCCESS) {
		slurm_error("topoplace: cannot set CUDA_VISIBLE_DEVICES");
	} else {
		/* Slurm sets these to the same list; keep them consistent. */
		if (ordinal && !strcmp(ordinal, cvd))
			spank_setenv(sp, "GPU_DEVICE_ORDINAL", mine, 1);
		if (rocr && !strcmp(rocr, cvd))
			spank_setenv(sp, "ROCR_VISIBLE_DEVICES", mine, 1);
		slurm_debug("topoplace: task %d of %u: CUDA_VISIBLE_DEVICES %s -> %s",
			    lid, nlocal, cvd, mine);
	}
	free(ordinal);
	free(rocr);
}

/* Inside the node, for this task: its GPUs (the node's GPUs of the step
 * split among the node's tasks, by MAGC with --topo-gpu-matrix, else in
 * local-rank order) and its CPUs (phase 2 on the step's cores of the node
 * model).  Every task of the node computes the same answer. */
static void task_node(spank_t sp)
{
	int lid = -1;
	uint32_t nlocal = 0, nodeid = 0;
	char *cvd = NULL, *stepgpus = NULL, *nodename = NULL, *cores = NULL;
	int32_t *tasks = NULL;
	gid_t *groups = NULL;
	char mine[1024], why[256], line[TPK_LINE_MAX];
	int *step_cores = NULL;
	int allowed[TPK_MAX_GPUS], visible[TPK_MAX_GPUS];
	struct tpk_node_req rq;
	struct tpk_node_result res;
	memset(&rq, 0, sizeof rq);
	memset(&res, 0, sizeof res);

	if (spank_get_item(sp, S_TASK_ID, &lid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &nlocal) != ESPANK_SUCCESS ||
	    lid < 0 || nlocal == 0)
		return;
	spank_get_item(sp, S_JOB_NODEID, &nodeid);
	bool node_first = lid == 0, job_first = lid == 0 && nodeid == 0;

	/* GPUs: only where the step has some and Slurm has not bound them
	 * per task (--gpus-per-task, --gpu-bind: the user's explicit choice) */
	cvd = job_getenv(sp, "CUDA_VISIBLE_DEVICES");
	stepgpus = job_getenv(sp, "SLURM_STEP_GPUS");
	bool gpus_here = nonempty(cvd) &&
		!(nonempty(stepgpus) && count_list(stepgpus) > count_list(cvd));
	int nal = 0;
	if (gpus_here && hints.gpu_matrix) {
		int nvis = tpk_parse_gpu_list(cvd, visible, TPK_MAX_GPUS);
		/* Slurm's own numbers of the step's GPUs (PCI bus order);
		 * without SLURM_STEP_GPUS, CUDA_VISIBLE_DEVICES holds them */
		nal = tpk_parse_gpu_list(nonempty(stepgpus) ? stepgpus : cvd,
					 allowed, TPK_MAX_GPUS);
		if (nvis <= 0 || nal != nvis) {
			snprintf(line, sizeof line, "topoplace: error: "
				 "--topo-gpu-matrix: CUDA_VISIBLE_DEVICES=%s does not "
				 "list the step's GPUs by number; GPUs split in "
				 "local-rank order", cvd);
			task_say_once(line, node_first);
		} else {
			rq.want_gpus = true;
			rq.allowed = allowed;
			rq.nallowed = nal;
		}
	}
	/* CPUs: the step's cores on this node, as Slurm numbers them */
	if (want_cpu_binding(sp, job_first) &&
	    spank_get_item(sp, S_STEP_ALLOC_CORES, &cores) == ESPANK_SUCCESS &&
	    nonempty(cores) &&
	    (step_cores = malloc(sizeof(int) * TPK_MAX_CORES))) {
		int n = tpk_parse_index_list(cores, step_cores, TPK_MAX_CORES);
		if (n > 0) {
			rq.want_cpus = true;
			rq.step_cores = step_cores;
			rq.nstep_cores = n;
		} else {
			slurm_debug("topoplace: step cores '%s' not understood", cores);
		}
	}
	rq.cache = &node_cache;
	if (rq.want_gpus || rq.want_cpus) {
		if (task_node_req(sp, nlocal, &rq, &tasks, &nodename, &groups, why,
				  sizeof why) < 0) {
			snprintf(line, sizeof line, "topoplace: error: %s; GPUs split in "
				 "local-rank order, Slurm's CPU binding kept", why);
			task_say_once(line, node_first);
			rq.want_gpus = rq.want_cpus = false;
		} else {
			tpk_node_select(&site, &hints, &rq, &res);
		}
	}

	/* GPUs */
	if (rq.want_gpus && res.gpus_ok &&
	    selected_gpus(&res, lid, allowed, visible, nal, mine, sizeof mine) < 0) {
		res.gpus_ok = false;
		snprintf(res.gpu_msg, sizeof res.gpu_msg, "topoplace: error: "
			 "--topo-gpu-matrix: a selected GPU is not the step's; GPUs "
			 "split in local-rank order");
	}
	if (rq.want_gpus && !res.gpus_ok)
		task_say_once(res.gpu_msg, res.gpu_jobwide ? job_first : node_first);
	if (gpus_here && (res.gpus_ok ||
			  tpk_gpu_split(cvd, lid, (int)nlocal, mine, sizeof mine) == 0))
		set_gpus(sp, cvd, mine, lid, nlocal);
	if (rq.want_gpus && res.gpus_ok && hints.report && lid == 0) {
		snprintf(line, sizeof line, "topoplace: %s: GPU selection applied "
			 "(%s, %u tasks, %d GPU%s per task, step GPUs %s): max "
			 "GPU-link congestion %.6g -> %.6g ms (local-rank order -> "
			 "topoplace)", nodename ? nodename : "?", res.used, nlocal,
			 res.gpt, res.gpt > 1 ? "s" : "",
			 nonempty(stepgpus) ? stepgpus : cvd, res.local_rank_ms,
			 res.topoplace_ms);
		task_say(line);
	}

	/* CPUs */
	if (rq.want_cpus && res.cpus_ok)
		task_bind_cpus(sp, lid, &rq, &res, cores);
	else if (rq.want_cpus && (!res.cpu_note || hints.report))
		task_say_once(res.cpu_msg, node_first);
	else if (rq.want_cpus)
		slurm_debug("%s", res.cpu_msg);

	tpk_node_result_free(&res);
	free(step_cores);
	free(cvd);
	free(stepgpus);
	free(nodename);
	free(tasks);
	free(groups);
}

/* Steps that will want the node model (a GPU matrix, or CPU binding with a
 * pattern): load it once here in slurmstepd; every task inherits it when it
 * is forked, instead of loading it again.  Quiet: a task that finds no
 * model loads and reports itself. */
static void step_preload(void)
{
	char host[256];
	if (!hints.seen || policy_none(&hints))
		return;
	bool cpus = site.cpu_bind && (hints.stencil || hints.graph ||
				      hints.gpu_matrix);
	if (!hints.gpu_matrix && !cpus)
		return;
	if (gethostname(host, sizeof host) != 0)
		return;
	host[sizeof host - 1] = '\0';
	char *dot = strchr(host, '.');
	if (dot)
		*dot = '\0';
	if (tpk_node_preload(&site, host, &node_cache) < 0)
		slurm_debug("topoplace: no node model preloaded for %s", host);
}

/* ---------------------------------------------------------------- hooks */

int slurm_spank_init(spank_t sp, int ac, char **av)
{
	spank_context_t ctx = spank_context();
	tpk_site_defaults(&site);
	for (int i = 0; i < ac; i++) {
		char err[512];
		if (tpk_site_arg(&site, av[i], err, sizeof err) < 0)
			slurm_error("topoplace: %s", err);
	}
	if (ctx != S_CTX_LOCAL && ctx != S_CTX_REMOTE && ctx != S_CTX_ALLOCATOR)
		return 0;
	/* Registered (not only a static table) so that sbatch and salloc
	 * know the options too. */
	for (int i = 0; opts[i].name; i++) {
		spank_err_t rc = spank_option_register(sp, &opts[i]);
		if (rc != ESPANK_SUCCESS)
			slurm_error("topoplace: cannot register --%s: %s",
				    opts[i].name, spank_strerror(rc));
	}
	/* srun: the earliest point, before srun reads its environment
	 * (SLURM_DISTRIBUTION) and options (SLURM_HOSTFILE). */
	if (ctx == S_CTX_LOCAL)
		local_init();
	return 0;
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char **av)
{
	(void)sp;
	(void)ac;
	(void)av;
	if (spank_context() == S_CTX_LOCAL)
		local_cleanup();
	return 0;
}

int slurm_spank_user_init(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	uint32_t stepid = 0;
	if (!spank_remote(sp) || spank_get_item(sp, S_JOB_STEPID, &stepid) !=
	    ESPANK_SUCCESS)
		return 0;
	if (stepid == SLURM_BATCH_SCRIPT) {
		is_batch_step = true;
		batch_place(sp);
	} else if (stepid != SLURM_EXTERN_CONT) {
		step_preload();
	}
	return 0;
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	uint32_t stepid = 0;
	if (!spank_remote(sp) || !hints.seen || policy_none(&hints))
		return 0;
	if (spank_get_item(sp, S_JOB_STEPID, &stepid) != ESPANK_SUCCESS ||
	    stepid == SLURM_BATCH_SCRIPT || stepid == SLURM_EXTERN_CONT)
		return 0;
	task_node(sp);
	return 0;
}

int slurm_spank_exit(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	spank_context_t ctx = spank_context();
	if (ctx == S_CTX_LOCAL) {
		local_cleanup();
	} else if (ctx == S_CTX_REMOTE && is_batch_step && placed_dir[0]) {
		/* slurm_spank_exit runs as root: remove as the user. */
		batch_cred.drop = geteuid() == 0 && batch_cred.uid != 0;
		tpk_remove_private_dir(placed_dir, &batch_cred);
		placed_dir[0] = '\0';
	}
	(void)sp;
	free(batch_groups);
	batch_groups = NULL;
	tpk_hints_free(&hints);
	return 0;
}
