/* topoplace SPANK plugin — the steps that run tasks (remote context).
 *
 * slurm_spank_user_init (in slurmstepd, as the user, once per step) reads
 * the job's pattern and this node's model into one tp_job; every task
 * inherits it when slurmstepd forks it.  slurm_spank_task_init (in each
 * task's own process, as the user, after Slurm's task plugin and GPU
 * binding) then asks the core for the node's placement inside the step's
 * share (its cores, its GPUs) and applies this task's part: the GPU list
 * in the variable Slurm gave the step's GPUs in (CUDA_VISIBLE_DEVICES, or
 * ROCR_VISIBLE_DEVICES on AMD nodes, or HIP_VISIBLE_DEVICES; the others
 * follow when they held the same list) and the CPU affinity.  Every task
 * of the node computes the same answer, so none waits for another.  Any
 * problem leaves Slurm's choice and prints one line, from one task only.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <slurm/spank.h>
#include <topoplace/topoplace.h>

#include "tpk.h"

/* This step's state (slurmstepd, then each task's copy). */
static tp_job *job;            /* the pattern and the node model */
static char job_error[TPK_LINE_MAX];   /* why there is none */
static char node_name[256];

static bool nonempty(const char *s)
{
	return s && s[0];
}

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

/* A line for the job's stderr (the task's stderr, which srun relays) and
 * the slurmd log. */
static void task_say(const char *line)
{
	fprintf(stderr, "%s\n", line);
	fflush(stderr);
	slurm_info("%s", line);
}

/* From one task only (the node's first, or the job's first for what every
 * node shares); the others log it quietly. */
static void say_once(const char *line, bool me)
{
	if (!line[0])
		return;
	if (me)
		task_say(line);
	else
		slurm_debug("%s", line);
}

/* The node's name as slurm.conf (and so topoplace.conf) has it: slurmd's
 * own, which may differ from the host name; else the short host name. */
static void slurm_node_name(spank_t sp, char *out, size_t len)
{
	char *n = tpk_job_getenv(sp, "SLURMD_NODENAME");
	out[0] = '\0';
	if (nonempty(n) && strlen(n) < len) {
		snprintf(out, len, "%s", n);
	} else if (gethostname(out, len) == 0) {
		out[len - 1] = '\0';
		char *dot = strchr(out, '.');
		if (dot)
			*dot = '\0';
	}
	free(n);
}

/* user_init runs as the user; should a Slurm call it as root, the ids are
 * switched to the user's around each file access, as in the batch step. */
static struct tpk_cred user_cred(spank_t sp, gid_t **groups)
{
	struct tpk_cred c = { .drop = false };
	uid_t uid = 0;
	gid_t gid = 0;
	gid_t *g = NULL;
	int ng = 0;
	*groups = NULL;
	if (geteuid() != 0 ||
	    spank_get_item(sp, S_JOB_UID, &uid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_GID, &gid) != ESPANK_SUCCESS || uid == 0)
		return c;
	c.drop = true;
	c.uid = uid;
	c.gid = gid;
	if (spank_get_item(sp, S_JOB_SUPPLEMENTARY_GIDS, &g, &ng) == ESPANK_SUCCESS &&
	    ng > 0 && g && (*groups = malloc((size_t)ng * sizeof(gid_t)))) {
		memcpy(*groups, g, (size_t)ng * sizeof(gid_t));
		c.groups = *groups;
		c.ngroups = ng;
	}
	return c;
}

/* The fail-open line of the task side. */
#define TASK_KEPT "; GPUs split in local-rank order, Slurm's CPU binding kept"

/* A relative file option: the absolute path srun exported for it, else
 * the submit directory's file. */
static char *file_path(spank_t sp, const char *opt, const char *envname)
{
	if (opt[0] == '/')
		return strdup(opt);
	char *abs = tpk_job_getenv(sp, envname);
	if (nonempty(abs) && abs[0] == '/')
		return abs;
	free(abs);
	char *base = tpk_job_getenv(sp, "SLURM_SUBMIT_DIR");
	size_t n = (base ? strlen(base) : 1) + strlen(opt) + 2;
	char *p = malloc(n);
	if (p)
		snprintf(p, n, "%s/%s", nonempty(base) ? base : ".", opt);
	free(base);
	return p;
}

static char *read_input(spank_t sp, const struct tpk_site *site,
			const struct tpk_cred *cred, const char *opt,
			const char *envname, const char *shown, size_t *len)
{
	char why[TPK_LINE_MAX];
	char *path = file_path(sp, opt, envname), *buf = NULL;
	struct tpk_user_read ur = { cred, NULL, site->max_file_bytes };
	if (!path || tpk_read_user_file(path, &ur, &buf, len, why,
					sizeof why) < 0) {
		tpk_line(job_error, sizeof job_error, "topoplace: error: %s: %s"
			 TASK_KEPT, shown, path ? why : "out of memory");
		buf = NULL;
	}
	free(path);
	return buf;
}

/* srun left this step to Slurm: the job's pattern is for other tasks (a
 * launcher's daemons).  Their GPUs and CPUs stay Slurm's, silently. */
static bool skipped_step(spank_t sp)
{
	char *skip = tpk_job_getenv(sp, "TOPOPLACE_SKIP_STEP");
	bool yes = skip && !strcmp(skip, "1");
	free(skip);
	return yes;
}

/* Will this step choose GPUs or CPUs inside the node? */
static bool wants_node(spank_t sp, const struct tpk_site *site,
		       const struct tpk_hints *h)
{
	if (!h->seen || tpk_hints_policy_none(h) || skipped_step(sp))
		return false;
	/* otherwise nothing to choose beyond Slurm's split */
	return h->gpu_matrix || (site->cpu_bind && tpk_hints_pattern(h));
}

void tpk_step_prepare_node(spank_t sp, const struct tpk_site *site,
			   const struct tpk_hints *h)
{
	if (!site->node_detect || !site->node_cache[0] || geteuid() != 0 ||
	    !wants_node(sp, site, h))
		return;
	tp_node *n = NULL;
	tp_error err;
	tp_error_clear(&err);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	char line[TPK_LINE_MAX];
	if (tp_node_detect(site->node_cache, TP_NODE_DETECT_PREPARE, &n, &err) < 0) {
		/* file names and their contents: escaped, one bounded line */
		tpk_line(line, sizeof line, "topoplace: this node's model: %s (the "
			 "step will detect it without the cache)", err.msg);
		slurm_info("%s", line);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (n) {
		tpk_line(line, sizeof line, "topoplace: %s detected in %.0f ms",
			 tp_node_source(n), (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
			 (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
		slurm_verbose("%s", line);
	}
	tp_node_destroy(n);
}

void tpk_step_user_init(spank_t sp, const struct tpk_site *site,
			const struct tpk_hints *h)
{
	uint32_t total = 0;
	char *graph = NULL, *gm = NULL, *partition = NULL;
	size_t glen = 0, mlen = 0;
	job_error[0] = '\0';
	slurm_node_name(sp, node_name, sizeof node_name);
	if (!wants_node(sp, site, h) ||
	    spank_get_item(sp, S_JOB_TOTAL_TASK_COUNT, &total) != ESPANK_SUCCESS)
		return;
	gid_t *groups = NULL;
	struct tpk_cred cred = user_cred(sp, &groups);
	if (h->graph && !h->stencil &&
	    !(graph = read_input(sp, site, &cred, h->graph, "TOPOPLACE_GRAPH",
				 "--topo-graph", &glen))) {
		free(groups);
		return;
	}
	if (h->gpu_matrix &&
	    !(gm = read_input(sp, site, &cred, h->gpu_matrix,
			      "TOPOPLACE_GPU_MATRIX", "--topo-gpu-matrix", &mlen))) {
		free(graph);
		free(groups);
		return;
	}
	free(groups);
	tp_job_request q;
	tp_job_request_init(&q);
	q.conf_path = site->conf_path;
	/* the same network as the step's placement: Slurm's topology of the
	 * job's partition, where the config takes Slurm's */
	char slurm_conf[TPK_PATH_MAX];
	tpk_slurm_conf_path(site, slurm_conf, sizeof slurm_conf);
	q.slurm_conf = slurm_conf;
	q.slurm_version = tpk_slurm_version();
	partition = tpk_job_getenv(sp, "SLURM_JOB_PARTITION");
	q.partition = partition && *partition ? partition : NULL;
	q.ntasks = total;
	q.stencil = h->stencil && !h->graph ? h->stencil : NULL;
	q.graph = (tp_job_input){ h->graph, graph, glen };
	q.gpu_matrix = (tp_job_input){ h->gpu_matrix, gm, mlen };
	if (!graph)
		q.graph.name = NULL;
	if (!gm)
		q.gpu_matrix.name = NULL;
	q.max_tasks = site->max_tasks;
	tpk_request_budget(site, &q);
	q.what.stencil = "--topo-stencil";
	tp_error err;
	tp_error_clear(&err);
	if ((h->parallel
	     ? tp_job_create_parallel(&q, NULL, h->parallel, "--topo-parallel",
				      &job, &err)
	     : tp_job_create(&q, &job, &err)) < 0) {
		tpk_line(job_error, sizeof job_error, "topoplace: error: %s"
			 TASK_KEPT, err.msg);
		job = NULL;
	} else if ((site->node_detect
		    ? tp_job_detect_node(job, node_name, site->node_cache, &err)
		    : tp_job_preload_node(job, node_name, &err)) < 0) {
		char line[TPK_LINE_MAX];
		tpk_line(line, sizeof line, "topoplace: no node model preloaded: %s",
			 err.msg);
		slurm_debug("%s", line);
	}
	free(graph);   /* parsed by tp_job_create, not kept */
	free(gm);
	free(partition);
}

void tpk_step_exit(void)
{
	tp_job_destroy(job);
	job = NULL;
}

/* ----------------------------------------------------------------- CPUs */

/* Should topoplace bind this step's tasks?  The site (cpu_bind=no) or the
 * user (--topo-cpu-bind=no, --cpu-bind=none) may say no, and it needs a
 * pattern.  A bad --topo-cpu-bind value is said once. */
static bool want_cpus(spank_t sp, const struct tpk_site *site,
		      const struct tpk_hints *h, bool job_first)
{
	if (!site->cpu_bind)
		return false;
	if (h->cpu_bind && strcmp(h->cpu_bind, "yes")) {
		if (strcmp(h->cpu_bind, "no")) {
			char line[TPK_LINE_MAX];
			tpk_line(line, sizeof line, "topoplace: error: "
				 "--topo-cpu-bind=%.64s: yes or no is needed; "
				 "Slurm's CPU binding kept", h->cpu_bind);
			say_once(line, job_first);
		}
		return false;
	}
	if (!tpk_hints_pattern(h))
		return false;
	char *type = tpk_job_getenv(sp, "SLURM_CPU_BIND_TYPE");
	bool none = type && !strncmp(type, "none", 4);
	free(type);
	return !none;
}

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

/* CPU binding that topoplace does not apply: Slurm's own binding stays,
 * so the reason is one line a step, not one a node or a task (a step on
 * nodes of one kind hits the same one on each).  The step's first task
 * (node 0, local task 0) says it; each node's first task puts its own in
 * slurmd's log for the admin; --topo-report asks for every node's.  It is
 * an error only when the user asked for topoplace's binding
 * (--topo-cpu-bind=yes): by default the step simply runs as Slurm binds
 * it. */
static void cpu_kept(const struct tpk_hints *h, int lid, uint32_t nodeid,
		     bool error, const char *why)
{
	char line[TPK_LINE_MAX];
	bool asked = h->cpu_bind && !strcmp(h->cpu_bind, "yes");
	tpk_line(line, sizeof line, "topoplace: %sCPU binding: %s; Slurm's CPU "
		 "binding kept", error && asked ? "error: " : "", why);
	bool node_first = lid == 0, step_first = node_first && nodeid == 0;
	if (h->report ? node_first : step_first)
		task_say(line);
	else if (node_first)
		slurm_info("%s", line);
	else
		slurm_debug("%s", line);
}

/* Every task's CPU list must lie in the step's CPUs here (the same check
 * on every task, so the node's first task speaks for all). */
static const char *unusable_list(const tp_node_placement *p)
{
	cpu_set_t ok, mine, both;
	if (!tpk_usable_cpus(&ok))
		return "?";
	for (int32_t t = 0; t < p->ntasks; t++) {
		if (!tpk_cpu_list_set(p->cpus[t], &mine))
			return p->cpus[t];
		CPU_AND(&both, &mine, &ok);
		if (!CPU_EQUAL(&both, &mine))
			return p->cpus[t];
	}
	return NULL;
}

static void bind_cpus(spank_t sp, const struct tpk_hints *h, int lid,
		      uint32_t nodeid, const tp_node_share *sh,
		      const tp_node_placement *p, const char *cores)
{
	char line[TPK_LINE_MAX];
	const char *bad = unusable_list(p);
	if (bad) {
		cpu_set_t ok;
		char have[256] = "?";
		if (tpk_usable_cpus(&ok))
			cpu_set_string(&ok, have, sizeof have);
		snprintf(line, sizeof line, "%s: CPU list %s of %s is not within "
			 "this step's CPUs here (%s)", sh->node, bad, p->model, have);
		cpu_kept(h, lid, nodeid, true, line);
		return;
	}
	cpu_set_t set;
	if (!tpk_cpu_list_set(p->cpus[lid], &set) ||
	    sched_setaffinity(0, sizeof set, &set) != 0) {
		tpk_line(line, sizeof line, "topoplace: error: CPU binding: %s: "
			 "cannot bind task %d to CPUs %s: %s; Slurm's CPU binding "
			 "kept", sh->node, lid, p->cpus[lid], strerror(errno));
		task_say(line);
		return;
	}
	spank_setenv(sp, "TOPOPLACE_CPUS", p->cpus[lid], 1);
	if (!h->report || lid != 0)
		return;
	int n = snprintf(line, sizeof line, "topoplace: %s: CPUs bound (%s, %ld "
			 "task%s x %d core%s of step cores %s, largest "
			 "inter-socket message %.6g bytes):", sh->node, p->model,
			 (long)p->ntasks, p->ntasks > 1 ? "s" : "",
			 p->cores_per_task, p->cores_per_task > 1 ? "s" : "",
			 cores, p->mims_bytes);
	for (int32_t t = 0; t < p->ntasks && n > 0 && (size_t)n < sizeof line; t++)
		n += snprintf(line + n, sizeof line - (size_t)n, " %ld:%s",
			      (long)sh->tasks[t], p->cpus[t]);
	char clean[TPK_LINE_MAX];
	tpk_line(clean, sizeof clean, "%s", line);
	task_say(clean);
}

/* ----------------------------------------------------------------- GPUs */

/* This task's CUDA_VISIBLE_DEVICES: each chosen GPU (Slurm's number) as
 * its entry in the step's visible list.  -1 when one is not the step's. */
static int visible_list(const tp_node_placement *p, int lid, const int *allowed,
			const int *visible, int nal, char *out, size_t len)
{
	size_t used = 0;
	out[0] = '\0';
	for (int k = p->gpu_start[lid]; k < p->gpu_start[lid + 1]; k++) {
		int pos = -1;
		for (int q = 0; q < nal && pos < 0; q++)
			if (allowed[q] == p->gpus[k])
				pos = q;
		int w = pos < 0 ? -1 : snprintf(out + used, len - used, "%s%d",
						used ? "," : "", visible[pos]);
		if (w < 0 || (size_t)w >= len - used)
			return -1;
		used += (size_t)w;
	}
	return used ? 0 : -1;
}

/* The task's list into the step list's variable, then into every other
 * GPU variable that held the same list: Slurm sets them alike. */
static void set_gpus(spank_t sp, char *const *vars, int src, const char *mine)
{
	const char *vals[TPK_NGPU_VARS];
	for (int i = 0; i < TPK_NGPU_VARS; i++)
		vals[i] = vars[i];
	if (spank_setenv(sp, tpk_gpu_vars[src], mine, 1) != ESPANK_SUCCESS) {
		slurm_error("topoplace: cannot set %s", tpk_gpu_vars[src]);
		return;
	}
	for (int i = 0; i < TPK_NGPU_VARS; i++)
		if (i != src && tpk_gpu_var_follows(vals, src, i))
			spank_setenv(sp, tpk_gpu_vars[i], mine, 1);
}

/* ---------------------------------------------------------------- tasks */

struct task {
	int lid;
	uint32_t nlocal, nodeid;
	int32_t *tasks;
	char *gpu_var[TPK_NGPU_VARS];   /* the GPU variables as Slurm set them */
	int gpu_src;                    /* the one holding the step's list */
	char *cvd, *stepgpus, *cores;   /* cvd: gpu_var[gpu_src] */
	int allowed[TPK_MAX_GPUS], visible[TPK_MAX_GPUS], nal;
	int *core_ids;
	tp_node_share sh;
};

static int local_tasks(spank_t sp, struct task *t)
{
	uint32_t total = 0;
	if (spank_get_item(sp, S_JOB_TOTAL_TASK_COUNT, &total) != ESPANK_SUCCESS ||
	    !(t->tasks = malloc(sizeof(int32_t) * (t->nlocal + 1u))))
		return -1;
	for (uint32_t i = 0; i < t->nlocal; i++) {
		uint32_t g = 0;
		if (spank_get_item(sp, S_JOB_LOCAL_TO_GLOBAL_ID, i, &g) !=
		    ESPANK_SUCCESS || g >= total)
			return -1;
		t->tasks[i] = (int32_t)g;
	}
	return 0;
}

/* GPUs: where the step has some and Slurm has not bound them per task
 * (--gpus-per-task, --gpu-bind: the user's explicit choice).  Slurm's own
 * numbers of the step's GPUs are SLURM_STEP_GPUS (PCI bus order); the
 * task sees them as CUDA_VISIBLE_DEVICES (ROCR_VISIBLE_DEVICES on AMD
 * nodes), renumbered under cgroups. */
static void gpu_share(spank_t sp, struct task *t)
{
	const char *vals[TPK_NGPU_VARS];
	for (int i = 0; i < TPK_NGPU_VARS; i++)
		vals[i] = t->gpu_var[i] = tpk_job_getenv(sp, tpk_gpu_vars[i]);
	t->gpu_src = tpk_gpu_list_source(vals);
	t->cvd = t->gpu_src >= 0 ? t->gpu_var[t->gpu_src] : NULL;
	t->stepgpus = tpk_job_getenv(sp, "SLURM_STEP_GPUS");
	if (!nonempty(t->cvd) || (nonempty(t->stepgpus) &&
				  count_list(t->stepgpus) > count_list(t->cvd)))
		return;
	int nvis = tpk_parse_gpu_list(t->cvd, t->visible, TPK_MAX_GPUS);
	t->nal = tpk_parse_gpu_list(nonempty(t->stepgpus) ? t->stepgpus : t->cvd,
				    t->allowed, TPK_MAX_GPUS);
	if (nvis <= 0 || t->nal != nvis) {
		t->nal = 0;   /* "NoDevFiles", UUIDs: Slurm's list stays */
		return;
	}
	t->sh.gpus = t->allowed;
	t->sh.ngpus = t->nal;
	t->sh.want_gpus = true;
}

static void cpu_share(spank_t sp, struct task *t, const struct tpk_site *site,
		      const struct tpk_hints *h)
{
	if (!want_cpus(sp, site, h, t->lid == 0 && t->nodeid == 0) ||
	    spank_get_item(sp, S_STEP_ALLOC_CORES, &t->cores) != ESPANK_SUCCESS ||
	    !nonempty(t->cores) ||
	    !(t->core_ids = malloc(sizeof(int) * TPK_MAX_CORES)))
		return;
	int n = tpk_parse_index_list(t->cores, t->core_ids, TPK_MAX_CORES);
	if (n <= 0)
		return;
	t->sh.cores = t->core_ids;
	t->sh.ncores = n;
	t->sh.want_cpus = true;
}

static void apply(spank_t sp, const struct tpk_hints *h, struct task *t,
		  const tp_node_placement *p)
{
	char line[TPK_LINE_MAX], mine[1024];
	bool node_first = t->lid == 0, job_first = node_first && t->nodeid == 0;
	if (t->sh.want_gpus) {
		if (p->gpu_error) {
			tpk_line(line, sizeof line, "topoplace: error: "
				 "--topo-gpu-matrix: %s; GPUs split in local-rank "
				 "order", p->gpu_note);
			say_once(line, p->gpu_error_jobwide ? job_first : node_first);
		}
		if (p->gpus_set && visible_list(p, t->lid, t->allowed, t->visible,
						t->nal, mine, sizeof mine) == 0)
			set_gpus(sp, t->gpu_var, t->gpu_src, mine);
		if (h->report && node_first && p->gpus_set && !p->gpu_error &&
		    h->gpu_matrix) {
			tpk_line(line, sizeof line, "topoplace: %s: GPU selection "
				 "applied (%s, %u tasks, %d GPU%s per task, step GPUs "
				 "%s): max GPU-link congestion %.6g -> %.6g ms "
				 "(local-rank order -> topoplace)", t->sh.node,
				 tp_gpusel_algo_name(p->gpu_algo), t->nlocal,
				 p->gpus_per_task, p->gpus_per_task > 1 ? "s" : "",
				 nonempty(t->stepgpus) ? t->stepgpus : t->cvd,
				 p->local_rank_cost.max_congestion_ms,
				 p->cost.max_congestion_ms);
			task_say(line);
		}
	}
	if (!t->sh.want_cpus)
		return;
	if (p->cpus_set) {
		bind_cpus(sp, h, t->lid, t->nodeid, &t->sh, p, t->cores);
	} else if (p->cpu_error || h->report) {
		cpu_kept(h, t->lid, t->nodeid, p->cpu_error, p->cpu_note);
	} else {
		tpk_line(line, sizeof line, "topoplace: CPU binding: %s", p->cpu_note);
		slurm_debug("%s", line);
	}
}

/* A nested srun in a task of a placed step must not inherit arbitrary
 * distribution without the hostfile that went with it. */
static void reset_distribution(spank_t sp)
{
	char *dist = tpk_job_getenv(sp, "SLURM_DISTRIBUTION");
	char *hf = tpk_job_getenv(sp, "SLURM_HOSTFILE");
	if (dist && !strcmp(dist, "arbitrary") &&
	    (!nonempty(hf) || access(hf, R_OK) != 0))
		spank_unsetenv(sp, "SLURM_DISTRIBUTION");
	free(dist);
	free(hf);
}

/* No pattern loaded (or none needed): the step's GPUs in Slurm's own
 * split; the reason, if any, said once unless srun already said it. */
static void split_gpus(spank_t sp, const struct tpk_hints *h, struct task *t)
{
	(void)h;
	if (job_error[0]) {
		char *said = tpk_job_getenv(sp, "TOPOPLACE_SAID");
		if (said)
			slurm_debug("%s", job_error);
		else
			say_once(job_error, t->lid == 0 && t->nodeid == 0);
		free(said);
	}
	if (!t->sh.want_gpus)
		return;
	int mine[TPK_MAX_GPUS];
	int n = tp_gpus_split_local_rank(t->allowed, t->nal, t->lid,
					 (int)t->nlocal, mine, TPK_MAX_GPUS);
	char list[1024];
	size_t used = 0;
	list[0] = '\0';
	for (int k = 0; k < n; k++) {
		int pos = -1;
		for (int q = 0; q < t->nal && pos < 0; q++)
			if (t->allowed[q] == mine[k])
				pos = q;
		int w = snprintf(list + used, sizeof list - used, "%s%d",
				 used ? "," : "", pos < 0 ? mine[k] : t->visible[pos]);
		if (w < 0 || (size_t)w >= sizeof list - used)
			return;
		used += (size_t)w;
	}
	if (n > 0)
		set_gpus(sp, t->gpu_var, t->gpu_src, list);
}

void tpk_task_init(spank_t sp, const struct tpk_site *site,
		   const struct tpk_hints *h)
{
	struct task t;
	memset(&t, 0, sizeof t);
	reset_distribution(sp);
	if (!h->seen || tpk_hints_policy_none(h) || skipped_step(sp))
		return;
	if (spank_get_item(sp, S_TASK_ID, &t.lid) != ESPANK_SUCCESS ||
	    spank_get_item(sp, S_JOB_LOCAL_TASK_COUNT, &t.nlocal) != ESPANK_SUCCESS ||
	    t.lid < 0 || t.nlocal == 0)
		return;
	spank_get_item(sp, S_JOB_NODEID, &t.nodeid);
	gpu_share(sp, &t);
	cpu_share(sp, &t, site, h);
	if (!t.sh.want_gpus && !t.sh.want_cpus)
		goto out;
	char line[TPK_LINE_MAX];
	if (local_tasks(sp, &t) < 0) {
		tpk_line(line, sizeof line, "topoplace: error: cannot tell the "
			 "step's tasks; GPUs split in local-rank order, Slurm's CPU "
			 "binding kept");
		say_once(line, t.lid == 0);
		goto out;
	}
	t.sh.node = node_name;
	t.sh.tasks = t.tasks;
	t.sh.ntasks = (int32_t)t.nlocal;
	if (!job) {
		split_gpus(sp, h, &t);
		goto out;
	}
	tp_node_placement p;
	tp_error err;
	tp_error_clear(&err);
	if (tp_job_place_node(job, &t.sh, &p, &err) == 0) {
		apply(sp, h, &t, &p);
		tp_node_placement_free(&p);
	}
out:
	free(t.tasks);
	for (int i = 0; i < TPK_NGPU_VARS; i++)
		free(t.gpu_var[i]);
	free(t.stepgpus);
	free(t.core_ids);
}
