/* topoplace — phases 2 and 3 of a job: the cores and GPUs of the tasks of
 * one node, inside the share a Slurm step got there.
 *
 *   GPUs  with a GPU matrix and the node's model: MAGC's max-congestion
 *         greedy over the share's GPUs (tp_gpusel, never worse than
 *         local-rank order or --gpu-bind=closest); otherwise, or when that
 *         cannot run, the share's GPUs split in local-rank order, as Slurm
 *         would.  Each task gets an equal share unless the job fixed a count.
 *   CPUs  with a pattern and the node's model: tasks to sockets by the
 *         largest inter-socket message (MIMS) on the CPU + GPU traffic,
 *         inside the share's cores; then whole sockets trade names and task
 *         pairs swap so that a task's cores sit next to its GPUs.
 *
 * The whole-job run (tp_job_run with TP_JOB_NODE_PLACEMENT) calls the very
 * same routine for every node with the node's whole model as the share, so
 * `topoplace map` and a task of a Slurm step agree byte for byte when the
 * step has the whole node.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job/job_internal.h"
#include "net/machine_internal.h"
#include "node/node_internal.h"

static void vnote(char *dst, const char *fmt, va_list ap)
{
	vsnprintf(dst, TP_ERROR_MSG_MAX, fmt, ap);
}

static void cpu_note(tp_node_placement *p, bool error, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void cpu_note(tp_node_placement *p, bool error, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vnote(p->cpu_note, fmt, ap);
	va_end(ap);
	p->cpu_error = error;
}

static void gpu_note(tp_node_placement *p, bool error, bool jobwide,
		     const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void gpu_note(tp_node_placement *p, bool error, bool jobwide,
		     const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vnote(p->gpu_note, fmt, ap);
	va_end(ap);
	p->gpu_error = error;
	p->gpu_error_jobwide = jobwide;
}

int tp_gpus_split_local_rank(const int *gpus, int ngpus, int local,
			     int ntasks, int *out, int cap)
{
	if (!gpus || ngpus <= 0 || ntasks <= 0 || local < 0 || local >= ntasks)
		return TP_EINVAL;
	int lo = (int)((int64_t)local * ngpus / ntasks);
	int hi = ngpus >= ntasks ? (int)((int64_t)(local + 1) * ngpus / ntasks)
				 : lo + 1;
	if (hi - lo > cap)
		return TP_EINVAL;
	for (int k = lo; k < hi; k++)
		out[k - lo] = gpus[k];
	return hi - lo;
}

/* Everything one node's placement works with. */
struct stage {
	tp_job *job;
	const tp_node_share *sh;
	tp_node_placement *p;
	const tp_node *model;
	tp_error model_err;        /* why there is no model */
	int *gpus;                 /* the share's GPUs */
	int ngpus;
	int *pkg, *pos;            /* phase 2: socket and core position */
	const int *task_pkg;       /* pkg when phase 2 ran, else NULL */
	int *cores;                /* the share's cores, sorted, no repeats */
	int ncores;
};

static const char *node_name(const struct stage *s)
{
	return s->sh->node ? s->sh->node : "?";
}

/* How reports name a model: its file's name ("nvl4.xml"), or for one
 * found on the node (tp_node_detect's "this node (...)") where it came
 * from: "detected (hwloc, NVML)", "detected (hwloc; NVML not ready)" (a
 * part missing), "detected (cached: hwloc, NVML)", "detected (cached)". */
static void model_label(const char *src, char *out, size_t len)
{
	static const char here[] = "this node";
	if (!strncmp(src, here, sizeof here - 1)) {
		const char *c = strstr(src, "(cached in ");
		const char *what = c ? strstr(c, ".xml: ") : NULL;
		if (what)
			snprintf(out, len, "detected (cached: %s", what + 6);
		else
			snprintf(out, len, "detected%s", c ? " (cached)"
				 : src + sizeof here - 1);
		return;
	}
	const char *base = strrchr(src, '/');
	snprintf(out, len, "%s", base ? base + 1 : src);
}

/* The model of the share's node, from the job's cache. */
static void find_model(struct stage *s)
{
	tp_error_clear(&s->model_err);
	const tp_machine *m = tp_conf_machine(s->job->conf);
	int32_t nid = s->sh->node ? tp_machine_find_node(m, s->sh->node) : -1;
	if (nid < 0) {
		tp_error_set(&s->model_err, TP_ENOENT, "node %s is not in the "
			     "configuration", node_name(s));
		return;
	}
	s->model = tp__job_model_of(s->job, nid, &s->model_err);
	if (s->model)
		model_label(tp_node_source(s->model), s->p->model,
			    sizeof s->p->model);
}

/* The share's GPUs: as given, else all of the model's. */
static int share_gpus(struct stage *s)
{
	const tp_node_share *sh = s->sh;
	int n = sh->gpus ? sh->ngpus : s->model ? tp_node_ngpus(s->model) : 0;
	s->gpus = tp__malloc_array((size_t)n + 1, sizeof(int));
	if (!s->gpus)
		return TP_ENOMEM;
	for (int k = 0; k < n; k++)
		s->gpus[k] = sh->gpus ? sh->gpus[k] : k;
	s->ngpus = n;
	return 0;
}

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* The share's cores, sorted without repeats (the list phase 2 numbers
 * positions in); false after a note when one is not in the model. */
static int share_cores(struct stage *s, bool *ok)
{
	const tp_node_share *sh = s->sh;
	int nm = tp_node_ncores(s->model);
	int n = sh->cores ? sh->ncores : nm;
	*ok = true;
	s->cores = tp__malloc_array((size_t)n + 1, sizeof(int));
	if (!s->cores)
		return TP_ENOMEM;
	for (int k = 0; k < n; k++) {
		int c = sh->cores ? sh->cores[k] : k;
		if (c < 0 || c >= nm) {
			cpu_note(s->p, true, "%s: Slurm's core %d is not in %s (%d "
				 "cores; slurm.conf and NodeTopology= must describe "
				 "the same node)", node_name(s), c, s->p->model, nm);
			*ok = false;
			return 0;
		}
		s->cores[k] = c;
	}
	qsort(s->cores, (size_t)n, sizeof(int), cmp_int);
	int u = 0;
	for (int k = 0; k < n; k++)
		if (u == 0 || s->cores[u - 1] != s->cores[k])
			s->cores[u++] = s->cores[k];
	s->ncores = u;
	return 0;
}

/* Phase 2 inside the share's cores; false after a note. */
static int place_cpus(struct stage *s, bool *ok)
{
	tp_node_placement *p = s->p;
	*ok = false;
	if (!s->model) {
		cpu_note(p, false, "%s", s->model_err.msg);
		return 0;
	}
	int rc = share_cores(s, ok);
	if (rc || !*ok)
		return rc;
	*ok = false;
	if (!s->job->g) {
		cpu_note(p, false, "%s: no communication pattern to place by",
			 node_name(s));
		return 0;
	}
	if (s->ncores < p->ntasks) {
		cpu_note(p, false, "%s: %ld tasks, but only %d cores to bind "
			 "them to", node_name(s), (long)p->ntasks, s->ncores);
		return 0;
	}
	p->cores_per_task = s->ncores / p->ntasks;
	tp_error e;
	tp_error_clear(&e);
	tp_node_tasks on = { s->model, s->job->g, s->sh->tasks, p->ntasks };
	tp_cpu_slots slots = { s->pkg, s->pos, p->mims_bytes };
	rc = tp_node_place_cpus_within(&on, s->cores, s->ncores,
				       p->cores_per_task, &slots, &e);
	p->mims_bytes = slots.mims;
	if (rc == TP_ENOMEM)
		return rc;
	if (rc) {
		cpu_note(p, true, "%s: %s", node_name(s), e.msg);
		return 0;
	}
	s->task_pkg = s->pkg;
	*ok = true;
	return 0;
}

/* Without cores of their own, the GPU side still wants the tasks' sockets
 * to break ties: phase 2 on the whole node. */
static void sockets_for_gpus(struct stage *s)
{
	int nc = tp_node_ncores(s->model);
	int32_t nt = s->p->ntasks;
	if (s->task_pkg || nc < nt)
		return;
	tp_node_tasks on = { s->model, s->job->g, s->sh->tasks, nt };
	tp_cpu_slots slots = { s->pkg, s->pos, 0 };
	if (tp_node_place_cpus(&on, nc / nt, &slots, NULL) == 0)
		s->task_pkg = s->pkg;
}

static int gpus_per_task(const struct stage *s)
{
	int want = s->job->req.gpus_per_task;
	if (want > 0)
		return want;
	int32_t nt = s->p->ntasks;
	return s->ngpus >= nt ? s->ngpus / nt : 1;
}

/* Room for gpt GPUs per task, offsets set for that many each. */
static int alloc_gpus(tp_node_placement *p, int gpt)
{
	free(p->gpus);
	free(p->gpu_start);
	p->gpus_per_task = gpt;
	p->gpus = tp__malloc_array((size_t)p->ntasks * (size_t)gpt + 1, sizeof(int));
	p->gpu_start = tp__malloc_array((size_t)p->ntasks + 1, sizeof(int));
	if (!p->gpus || !p->gpu_start)
		return TP_ENOMEM;
	for (int32_t k = 0; k <= p->ntasks; k++)
		p->gpu_start[k] = (int)k * gpt;
	return 0;
}

/* Slurm's own order: the share's GPUs in local-rank order, a fixed count
 * each when the job gave one, else split as Slurm's binding would (shares
 * may differ by one; with fewer GPUs than tasks, neighbours share one). */
static int split_local_rank(struct stage *s)
{
	tp_node_placement *p = s->p;
	int32_t nt = p->ntasks;
	int fixed = s->job->req.gpus_per_task;
	if (fixed > 0 && (int64_t)nt * fixed > s->ngpus) {
		if (!p->gpu_note[0])
			gpu_note(p, true, false, "%s: %ld tasks x %d GPUs per task "
				 "need %lld GPUs, but the step has %d here",
				 node_name(s), (long)nt, fixed,
				 (long long)nt * fixed, s->ngpus);
		return 0;
	}
	int wide = fixed > 0 ? fixed : s->ngpus >= nt ? (s->ngpus + nt - 1) / nt : 1;
	if (alloc_gpus(p, wide))
		return TP_ENOMEM;
	int used = 0, most = 0;
	for (int32_t k = 0; k < nt; k++) {
		int got;
		p->gpu_start[k] = used;
		if (fixed > 0) {
			for (int q = 0; q < fixed; q++)
				p->gpus[used + q] = s->gpus[(size_t)k * fixed + q];
			got = fixed;
		} else {
			got = tp_gpus_split_local_rank(s->gpus, s->ngpus, (int)k,
						       (int)nt, p->gpus + used, wide);
			if (got <= 0)
				return TP_EINVAL;
		}
		used += got;
		most = got > most ? got : most;
	}
	p->gpu_start[nt] = used;
	p->gpus_per_task = most;
	p->gpu_algo = TP_GPUSEL_LOCAL_RANK;
	p->gpus_set = true;
	return 0;
}

/* The report's baselines, local rank's and closest's costs of rq's tasks
 * (tmp: scratch for their GPUs). */
static int baseline_costs(tp_gpusel_request *rq, int *tmp, tp_node_placement *p,
			  tp_error *e)
{
	rq->algo = TP_GPUSEL_LOCAL_RANK;
	int rc = tp_gpusel(rq, tmp, &p->local_rank_cost, e);
	rq->algo = TP_GPUSEL_CLOSEST;
	return rc ? rc : tp_gpusel(rq, tmp, &p->closest_cost, e);
}

/* MAGC on the share's GPUs; false (after a note) when it cannot run. */
static int select_gpus(struct stage *s, bool *ok)
{
	tp_node_placement *p = s->p;
	tp_job *job = s->job;
	*ok = false;
	if (!s->model) {
		gpu_note(p, true, false, "%s", s->model_err.msg);
		return 0;
	}
	int ng = tp_node_ngpus(s->model);
	for (int k = 0; k < s->ngpus; k++)
		if (s->gpus[k] < 0 || s->gpus[k] >= ng) {
			gpu_note(p, true, false, "%s: Slurm's GPU %d is not in %s "
				 "(%d GPUs)", node_name(s), s->gpus[k], p->model, ng);
			return 0;
		}
	int gpt = gpus_per_task(s);
	enum tp_gpusel_algo algo = TP_GPUSEL_MAGC;
	if (job->req.gpu_select)
		tp_gpusel_algo_parse(job->req.gpu_select, &algo, NULL);
	if (alloc_gpus(p, gpt))
		return TP_ENOMEM;
	int *tmp = tp__malloc_array((size_t)p->ntasks * (size_t)gpt + 1, sizeof(int));
	if (!tmp)
		return TP_ENOMEM;
	tp_error e;
	tp_error_clear(&e);
	const int32_t *tk = s->sh->tasks;
	tp_gpusel_request rq = {
		.on = { s->model, job->gm, tk, p->ntasks },
		.task_package = s->task_pkg,
		.allowed = s->gpus,
		.nallowed = s->ngpus,
		.gpus_per_task = gpt,
		.algo = algo,
	};
	int rc = tp_gpusel(&rq, p->gpus, &p->cost, &e);
	if (!rc)
		rc = baseline_costs(&rq, tmp, p, &e);
	free(tmp);
	if (rc == TP_ENOMEM)
		return rc;
	if (rc) {
		gpu_note(p, true, false, "%s: %s", node_name(s), e.msg);
		return 0;
	}
	p->gpu_algo = p->cost.used;
	p->gpus_set = true;
	*ok = true;
	return 0;
}

/* On a rail-optimised network (Rails=), one GPU a task: local rank k the
 * GPU whose card serves rail k (tp__gpus_by_rail), so that the peers at
 * one local rank on other nodes share its rail, as the time model routes
 * them.  *ok false (after a note saying why) where the node's model cannot
 * tell the rails: the caller keeps today's choice. */
static int rail_gpus(struct stage *s, int rails, bool *ok)
{
	tp_node_placement *p = s->p;
	int32_t nt = p->ntasks;
	*ok = false;
	if (!s->model) {
		gpu_note(p, false, false, "%s: GPUs not chosen by rail: %s",
			 node_name(s), s->model_err.msg);
		return 0;
	}
	if (alloc_gpus(p, 1))
		return TP_ENOMEM;
	tp_error e;
	tp_error_clear(&e);
	int off = tp__gpus_by_rail(s->model, s->gpus, s->ngpus, rails, nt, p->gpus,
				   &e);
	if (off < 0) {
		gpu_note(p, false, false, "%s: GPUs not chosen by rail: %s",
			 node_name(s), e.msg);
		return 0;
	}
	if (off > 0)
		gpu_note(p, false, false, "%s: %d of %ld tasks off their rail (the "
			 "step's GPUs here miss their rails)", node_name(s), off,
			 (long)nt);
	tp_gpusel_request rq = {
		.on = { s->model, s->job->gm, s->sh->tasks, nt },
		.task_package = s->task_pkg,
		.allowed = s->gpus,
		.nallowed = s->ngpus,
		.gpus_per_task = 1,
		.algo = TP_GPUSEL_LOCAL_RANK,
	};
	/* the costs, for the report: rail order's and the baselines' */
	int *tmp = tp__malloc_array((size_t)nt + 1, sizeof(int));
	if (!tmp)
		return TP_ENOMEM;
	int rc = tp_gpusel_eval(&rq.on, 1, p->gpus, &p->cost, &e);
	if (!rc)
		rc = baseline_costs(&rq, tmp, p, &e);
	free(tmp);
	if (rc == TP_ENOMEM)
		return rc;
	p->cost.used = TP_GPUSEL_RAIL;
	p->gpu_algo = TP_GPUSEL_RAIL;
	p->gpus_set = true;
	*ok = true;
	return 0;
}

/* Each task's CPU list from its positions in the share's cores. */
static int cpu_lists(struct stage *s)
{
	tp_node_placement *p = s->p;
	p->cpus = tp__calloc((size_t)p->ntasks + 1, sizeof(char *));
	if (!p->cpus)
		return TP_ENOMEM;
	for (int32_t t = 0; t < p->ntasks; t++) {
		char buf[4096];
		if (s->pos[t] < 0 || s->pos[t] + p->cores_per_task > s->ncores ||
		    tp_node_cpuset_string_cores(s->model, s->cores + s->pos[t],
						p->cores_per_task, buf,
						sizeof buf) < 0) {
			cpu_note(p, true, "%s: cannot write the CPU list of task %ld",
				 node_name(s), (long)s->sh->tasks[t]);
			return 0;
		}
		if (!(p->cpus[t] = strdup(buf)))
			return TP_ENOMEM;
	}
	p->cpus_set = true;
	return 0;
}

static int stage_run(struct stage *s)
{
	tp_node_placement *p = s->p;
	const tp_node_share *sh = s->sh;
	tp_job *job = s->job;
	size_t nt = (size_t)p->ntasks;
	s->pkg = tp__malloc_array(nt + 1, sizeof(int));
	s->pos = tp__malloc_array(nt + 1, sizeof(int));
	if (!s->pkg || !s->pos)
		return TP_ENOMEM;
	find_model(s);
	if (s->model_err.code == TP_ENOMEM)
		return TP_ENOMEM;
	int rc = share_gpus(s);
	bool cpus_ok = false, gpus_ok = false;
	if (!rc && sh->want_cpus)
		rc = place_cpus(s, &cpus_ok);
	if (!rc && sh->want_gpus && s->ngpus == 0 && job->req.gpus_per_task > 0)
		gpu_note(p, true, false, "%s: the node has no GPUs", node_name(s));
	if (!rc && sh->want_gpus && s->ngpus > 0) {
		/* rails first, where the network has them and the job named
		 * no algorithm: one GPU a task */
		int rails = tp__machine_rails(tp_conf_machine(job->conf));
		if (rails > 1 && !job->req.gpu_select && s->ngpus >= p->ntasks &&
		    job->req.gpus_per_task <= 1 &&
		    (job->req.gpus_per_task == 1 || s->ngpus / p->ntasks == 1)) {
			if (s->model)
				sockets_for_gpus(s);
			rc = rail_gpus(s, rails, &gpus_ok);
		}
		/* a choice to make: GPU traffic, or an algorithm or count the job
		 * named; otherwise Slurm's order */
		if (!rc && !gpus_ok &&
		    (job->gm || job->req.gpu_select || job->req.gpus_per_task > 0)) {
			if (s->model)
				sockets_for_gpus(s);
			rc = select_gpus(s, &gpus_ok);
		}
		if (!rc && !gpus_ok && !p->gpus_set)
			rc = split_local_rank(s);
	}
	/* each task's cores next to its GPUs where MIMS allows */
	if (!rc && cpus_ok && gpus_ok) {
		tp_error e;
		tp_error_clear(&e);
		tp_node_tasks on = { s->model, job->g, sh->tasks, p->ntasks };
		tp_cpu_slots slots = { s->pkg, s->pos, p->mims_bytes };
		rc = tp_node_align_cpus(&on, p->gpus, p->gpus_per_task, &slots,
					&e);
		p->mims_bytes = slots.mims;
		if (rc && rc != TP_ENOMEM)
			rc = 0;   /* the MIMS placement stands */
	}
	if (!rc && cpus_ok)
		rc = cpu_lists(s);
	return rc;
}

int tp_job_place_node(tp_job *job, const tp_node_share *share,
		      tp_node_placement *out, tp_error *err)
{
	if (!job || !share || !out)
		return tp_error_set(err, TP_EINVAL, "place node: NULL argument");
	memset(out, 0, sizeof *out);
	out->ntasks = share->ntasks;
	if (share->ntasks <= 0 || !share->tasks)
		return tp_error_set(err, TP_EINVAL, "place node: no tasks");
	/* task ids index the pattern (and the GPU matrix) */
	for (int32_t k = 0; job->g && k < share->ntasks; k++)
		if (share->tasks[k] < 0 || share->tasks[k] >= job->ntasks) {
			if (share->want_gpus && job->gm)
				gpu_note(out, true, true, "task %ld is not one of "
					 "the pattern's %ld", (long)share->tasks[k],
					 (long)job->ntasks);
			if (share->want_cpus)
				cpu_note(out, true, "task %ld is not one of the "
					 "pattern's %ld", (long)share->tasks[k],
					 (long)job->ntasks);
			return 0;
		}
	struct stage s;
	memset(&s, 0, sizeof s);
	s.job = job;
	s.sh = share;
	s.p = out;
	int rc = stage_run(&s);
	free(s.gpus);
	free(s.pkg);
	free(s.pos);
	free(s.cores);
	if (rc == TP_ENOMEM) {
		tp_node_placement_free(out);
		return tp_error_set(err, rc, "out of memory");
	}
	return 0;
}

/* Every node of the mapping, each with its whole model as its share. */
int tp__job_place_nodes(tp_job *job, tp_error *err)
{
	int rc = tp__job_models_ready(job, err);
	if (rc)
		return rc;
	int32_t nn = tp_alloc_nnodes(job->alloc), n = job->ntasks;
	/* Without a model on any node there is nothing to place: no
	 * placements at all (tp_job_node_placement NULL, every task without
	 * CPUs and GPUs, as a node without a model has), rather than over a
	 * kilobyte of zeros per node that every later look at it, and the
	 * job's destruction, would fault in (a third of a second at 80,000
	 * nodes). */
	bool any = false;
	for (int32_t i = 0; i < nn && !any; i++)
		any = job->model_of[i] != NULL;
	int64_t *start = tp__calloc((size_t)nn + 2, sizeof(int64_t));
	int32_t *tasks = tp__malloc_array((size_t)n + 1, sizeof(int32_t));
	job->task_pos = tp__malloc_array((size_t)n + 1, sizeof(int32_t));
	job->np = any ? tp__calloc((size_t)nn + 1, sizeof *job->np) : NULL;
	if (!start || !tasks || !job->task_pos || (any && !job->np)) {
		free(start);
		free(tasks);
		return tp_error_set(err, TP_ENOMEM, "out of memory");
	}
	/* the tasks of every node, in rank order (local-rank order) */
	for (int32_t t = 0; t < n; t++)
		start[job->map[t] + 2]++;
	for (int32_t i = 0; i < nn; i++)
		start[i + 2] += start[i + 1];
	for (int32_t t = 0; t < n; t++)
		tasks[start[job->map[t] + 1]++] = t;
	/* now tasks[start[i] .. start[i + 1]) are node i's */
	for (int32_t i = 0; i < nn; i++)
		for (int64_t k = start[i]; k < start[i + 1]; k++)
			job->task_pos[tasks[k]] = (int32_t)(k - start[i]);
	const tp_machine *m = tp_conf_machine(job->conf);
	for (int32_t i = 0; i < nn && !rc && any; i++) {
		int32_t cnt = (int32_t)(start[i + 1] - start[i]);
		if (cnt == 0 || !job->model_of[i])
			continue;
		tp_node_share sh = {
			.node = tp_machine_node_name(m, tp_alloc_node(job->alloc, i)),
			.tasks = tasks + start[i], .ntasks = cnt,
			.want_cpus = true, .want_gpus = true,
		};
		rc = tp_job_place_node(job, &sh, &job->np[i], err);
		const tp_node_placement *p = &job->np[i];
		/* what a task would only be told is, for a whole job whose
		 * placement inside the nodes was asked for, an error */
		bool strict = job->req.flags & TP_JOB_REQUIRE_MODELS;
		if (!rc && (p->cpu_error || (strict && !p->cpus_set && p->cpu_note[0])))
			rc = tp_error_set(err, TP_EINVAL, "%s", p->cpu_note);
		else if (!rc && p->gpu_error)
			rc = tp_error_set(err, TP_EINVAL, "%s", p->gpu_note);
		else if (!rc && p->cpu_note[0])
			tp__job_note(job, "%s", p->cpu_note);
		if (!rc && !p->gpu_error && p->gpu_note[0])
			tp__job_note(job, "%s", p->gpu_note);
	}
	free(start);
	free(tasks);
	return rc;
}
